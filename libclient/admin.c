/* SPDX-License-Identifier: MIT */
/*
 * Administration of OSTs and OST pools: requests to the MDS, which checks
 * that the caller (this connection's credentials) is uid 0.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libclient/cl_int.h"

_Static_assert(NACRE_MAX_OSTS == NC_MAX_OSTS, "public and wire OST limits differ");
_Static_assert(NACRE_POOL_NAME_MAX == NC_POOL_NAME_MAX, "public and wire pool names differ");

NACRE_API int nacre_ost_set_active(struct nacre_fs *fs, uint32_t index, bool active)
{
	struct nc_ost_admin_req m = { 0 };
	struct nc_call call;
	int rc;

	cl_cred_from(fs, NULL, &m.oa_cred);
	m.oa_index = index;
	m.oa_op = active ? NC_OSTADM_ACTIVATE : NC_OSTADM_DEACTIVATE;
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_OST_ADMIN, (nc_xdr_fn)nc_wire_ost_admin_req, &m,
			  NULL, NULL, &call);
	if (rc)
		return rc;
	nc_call_fini(&call);
	/* The state shows in the next nacre_ost_list(), which refreshes. */
	return 0;
}

NACRE_API bool nacre_pool_name_is_valid(const char *name)
{
	return name && nc_pool_name_is_valid(name);
}

static int pool_rpc(struct nacre_fs *fs, uint32_t op, const char *name, const uint32_t *osts,
		    unsigned int n)
{
	struct nc_pool_req *m;
	struct nc_call call;
	int rc;

	if (!nacre_pool_name_is_valid(name) || n > NC_MAX_OSTS || (n && !osts))
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	cl_cred_from(fs, NULL, &m->pr_cred);
	m->pr_op = op;
	snprintf(m->pr_name, sizeof(m->pr_name), "%s", name);
	m->pr_count = n;
	if (n)
		memcpy(m->pr_osts, osts, n * sizeof(*osts));
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_POOL, (nc_xdr_fn)nc_wire_pool_req, m, NULL, NULL,
			  &call);
	if (!rc)
		nc_call_fini(&call);
	free(m);
	return rc;
}

NACRE_API int nacre_pool_create(struct nacre_fs *fs, const char *name)
{
	return pool_rpc(fs, NC_POOLOP_CREATE, name, NULL, 0);
}

NACRE_API int nacre_pool_destroy(struct nacre_fs *fs, const char *name)
{
	return pool_rpc(fs, NC_POOLOP_DESTROY, name, NULL, 0);
}

NACRE_API int nacre_pool_add(struct nacre_fs *fs, const char *name, const uint32_t *osts,
			     unsigned int n)
{
	return n ? pool_rpc(fs, NC_POOLOP_ADD, name, osts, n) : -EINVAL;
}

NACRE_API int nacre_pool_remove(struct nacre_fs *fs, const char *name, const uint32_t *osts,
				unsigned int n)
{
	return n ? pool_rpc(fs, NC_POOLOP_REMOVE, name, osts, n) : -EINVAL;
}

NACRE_API int nacre_pool_list(struct nacre_fs *fs, const char *name, struct nacre_pool **pools,
			      unsigned int *count)
{
	struct nc_pool_req *m = calloc(1, sizeof(*m));
	struct nc_pool_list_rep *rep = calloc(1, sizeof(*rep));
	struct nacre_pool *list = NULL;
	struct nc_call call;
	int rc = -ENOMEM;

	if (!m || !rep)
		goto out;
	rc = -EINVAL;
	if (name && *name && !nc_pool_name_is_valid(name))
		goto out;
	cl_cred_from(fs, NULL, &m->pr_cred);
	snprintf(m->pr_name, sizeof(m->pr_name), "%s", name ? name : "");
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_POOL_LIST, (nc_xdr_fn)nc_wire_pool_req, m,
			  (nc_xdr_fn)nc_wire_pool_list_rep, rep, &call);
	if (rc)
		goto out;
	nc_call_fini(&call);
	list = calloc(rep->pl_count ? rep->pl_count : 1, sizeof(*list));
	if (!list) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < rep->pl_count; i++) {
		memcpy(list[i].name, rep->pl_pools[i].pi_name, sizeof(list[i].name));
		list[i].count = rep->pl_pools[i].pi_count;
		memcpy(list[i].osts, rep->pl_pools[i].pi_osts,
		       rep->pl_pools[i].pi_count * sizeof(list[i].osts[0]));
	}
	*pools = list;
	*count = rep->pl_count;
out:
	free(rep);
	free(m);
	return rc;
}
