/* SPDX-License-Identifier: MIT */
/*
 * OST pools: named sets of OST indexes, as Lustre's lctl pool_*.  A
 * directory template (or the layout request of a new file) may name a
 * pool; its new files are then laid out over the pool's OSTs only.
 *
 * Record: POOLS name (1..NC_POOL_NAME_MAX bytes) -> version, u32 count,
 * count u32 OST indexes in increasing order.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errors.h"
#include "common/log.h"
#include "mds/ns_int.h"

static int ns_pool_decode(const void *k, size_t kl, const void *v, size_t vl,
			  struct nc_pool_info *p)
{
	struct nc_xdr x;

	if (kl == 0 || kl > NC_POOL_NAME_MAX)
		return -NC_E_CORRUPT;
	memcpy(p->pi_name, k, kl);
	p->pi_name[kl] = '\0';
	nc_xdr_init_decode(&x, v, vl);
	ns_xdr_version(&x);
	nc_xdr_u32(&x, &p->pi_count);
	if (!x.x_err && p->pi_count > NC_MAX_OSTS)
		x.x_err = -NC_E_CORRUPT;
	for (uint32_t i = 0; !x.x_err && i < p->pi_count; i++)
		nc_xdr_u32(&x, &p->pi_osts[i]);
	if (x.x_err || nc_xdr_finish(&x)) {
		nc_error("mds", "corrupt record of OST pool '%s'", p->pi_name);
		return -NC_E_CORRUPT;
	}
	return 0;
}

/* The pool @name from @txn; -ENOENT when there is none. */
static int ns_pool_get(struct mds_txn *txn, const char *name, struct nc_pool_info *p)
{
	const void *v;
	size_t vl;
	int rc;

	rc = mds_db_get(txn, MDS_T_POOLS, name, strlen(name), &v, &vl);
	if (rc)
		return rc;
	return ns_pool_decode(name, strlen(name), v, vl, p);
}

static int ns_pool_put(struct mds_txn *txn, struct nc_pool_info *p, bool noover)
{
	uint8_t *buf;
	size_t cap = 8 + (size_t)p->pi_count * 4;
	struct nc_xdr x;
	int rc;

	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	nc_xdr_init_encode(&x, buf, cap);
	ns_xdr_version(&x);
	nc_xdr_u32(&x, &p->pi_count);
	for (uint32_t i = 0; i < p->pi_count; i++)
		nc_xdr_u32(&x, &p->pi_osts[i]);
	rc = x.x_err;
	if (!rc)
		rc = mds_db_put(txn, MDS_T_POOLS, p->pi_name, strlen(p->pi_name), buf,
				x.x_pos, noover);
	free(buf);
	return rc;
}

static bool ns_pool_has(const struct nc_pool_info *p, uint32_t idx)
{
	for (uint32_t i = 0; i < p->pi_count; i++)
		if (p->pi_osts[i] == idx)
			return true;
	return false;
}

static int ns_pool_check(const struct nc_cred *cred, const char *name)
{
	if (cred->c_uid != 0)
		return -EPERM;
	return nc_pool_name_is_valid(name) ? 0 : -EINVAL;
}

/* Runs @fn in a write transaction over a pool record read into the heap. */
typedef int (*ns_pool_fn)(struct mds_txn *txn, struct nc_pool_info *p, const uint32_t *osts,
			  uint32_t n, uint32_t *bad);

static int ns_pool_change(struct mds_ns *ns, const struct nc_cred *cred, const char *name,
			  ns_pool_fn fn, const uint32_t *osts, uint32_t n, uint32_t *bad)
{
	struct nc_pool_info *p;
	struct mds_txn *txn;
	int rc;

	rc = ns_pool_check(cred, name);
	if (rc)
		return rc;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	snprintf(p->pi_name, sizeof(p->pi_name), "%s", name);
	rc = ns_end(txn, fn(txn, p, osts, n, bad));
out_free:
	free(p);
	return rc;
}

static int ns_pool_create_txn(struct mds_txn *txn, struct nc_pool_info *p,
			      const uint32_t *osts, uint32_t n, uint32_t *bad)
{
	uint64_t count;
	int rc;

	rc = mds_db_count(txn, MDS_T_POOLS, &count);
	if (rc)
		return rc;
	if (count >= NC_POOLS_MAX)
		return -ENOSPC;
	p->pi_count = 0;
	return ns_pool_put(txn, p, true);
}

static int ns_pool_destroy_txn(struct mds_txn *txn, struct nc_pool_info *p,
			       const uint32_t *osts, uint32_t n, uint32_t *bad)
{
	int rc = ns_pool_get(txn, p->pi_name, p);

	if (rc)
		return rc;
	/* An administrator empties a pool first, so that destroying one
	 * never silently widens where the files of its directories go. */
	if (p->pi_count)
		return -ENOTEMPTY;
	return mds_db_del(txn, MDS_T_POOLS, p->pi_name, strlen(p->pi_name));
}

static int ns_ost_is_known(struct mds_txn *txn, uint32_t idx)
{
	const void *v;
	uint8_t key[4];
	size_t vl;
	int rc;

	if (idx >= NC_MAX_OSTS)
		return -ENODEV;
	ns_put_be32(key, idx);
	rc = mds_db_get(txn, MDS_T_OSTS, key, sizeof(key), &v, &vl);
	return rc == -ENOENT ? -ENODEV : rc;
}

static int ns_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int ns_pool_add_txn(struct mds_txn *txn, struct nc_pool_info *p,
			   const uint32_t *osts, uint32_t n, uint32_t *bad)
{
	int rc = ns_pool_get(txn, p->pi_name, p);

	for (uint32_t i = 0; !rc && i < n; i++) {
		*bad = osts[i];
		rc = ns_ost_is_known(txn, osts[i]);
		if (!rc && ns_pool_has(p, osts[i]))
			rc = -EEXIST;
		if (!rc && p->pi_count == NC_MAX_OSTS)
			rc = -ENOSPC;
		if (!rc)
			p->pi_osts[p->pi_count++] = osts[i];
	}
	if (rc)
		return rc;
	qsort(p->pi_osts, p->pi_count, sizeof(p->pi_osts[0]), ns_u32_cmp);
	return ns_pool_put(txn, p, false);
}

static int ns_pool_remove_txn(struct mds_txn *txn, struct nc_pool_info *p,
			      const uint32_t *osts, uint32_t n, uint32_t *bad)
{
	int rc = ns_pool_get(txn, p->pi_name, p);

	for (uint32_t i = 0; !rc && i < n; i++) {
		uint32_t j = 0;

		*bad = osts[i];
		while (j < p->pi_count && p->pi_osts[j] != osts[i])
			j++;
		if (j == p->pi_count) {
			rc = -ENOENT;
			break;
		}
		memmove(&p->pi_osts[j], &p->pi_osts[j + 1],
			(p->pi_count - j - 1) * sizeof(p->pi_osts[0]));
		p->pi_count--;
	}
	return rc ? rc : ns_pool_put(txn, p, false);
}

int mds_ns_pool_create(struct mds_ns *ns, const struct nc_cred *cred, const char *name)
{
	uint32_t bad;

	return ns_pool_change(ns, cred, name, ns_pool_create_txn, NULL, 0, &bad);
}

int mds_ns_pool_destroy(struct mds_ns *ns, const struct nc_cred *cred, const char *name)
{
	uint32_t bad;

	return ns_pool_change(ns, cred, name, ns_pool_destroy_txn, NULL, 0, &bad);
}

int mds_ns_pool_add(struct mds_ns *ns, const struct nc_cred *cred, const char *name,
		    const uint32_t *osts, uint32_t n, uint32_t *bad)
{
	if (n == 0 || n > NC_MAX_OSTS)
		return -EINVAL;
	return ns_pool_change(ns, cred, name, ns_pool_add_txn, osts, n, bad);
}

int mds_ns_pool_remove(struct mds_ns *ns, const struct nc_cred *cred, const char *name,
		       const uint32_t *osts, uint32_t n, uint32_t *bad)
{
	if (n == 0 || n > NC_MAX_OSTS)
		return -EINVAL;
	return ns_pool_change(ns, cred, name, ns_pool_remove_txn, osts, n, bad);
}

static int ns_pool_list_txn(struct mds_txn *txn, const char *name, struct nc_pool_list_rep *rep)
{
	struct mds_cursor *c;
	const void *k, *v;
	size_t kl, vl;
	int rc;

	if (*name) {
		rc = ns_pool_get(txn, name, &rep->pl_pools[0]);
		if (!rc)
			rep->pl_count = 1;
		return rc;
	}
	rc = mds_db_cursor_open(txn, MDS_T_POOLS, &c);
	if (rc)
		return rc;
	rc = mds_db_cursor_seek(c, NULL, 0, &k, &kl, &v, &vl);
	while (rc == 0) {
		if (rep->pl_count == NC_POOLS_MAX) {
			rc = -NC_E_CORRUPT; /* more than create allows */
			break;
		}
		rc = ns_pool_decode(k, kl, v, vl, &rep->pl_pools[rep->pl_count]);
		if (rc)
			break;
		rep->pl_count++;
		rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	}
	mds_db_cursor_close(c);
	return rc == -ENOENT ? 0 : rc;
}

int mds_ns_pool_list(struct mds_ns *ns, const char *name, struct nc_pool_list_rep *rep)
{
	struct mds_txn *txn;
	int rc;

	rep->pl_count = 0;
	if (*name && !nc_pool_name_is_valid(name))
		return -EINVAL;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = ns_pool_list_txn(txn, name, rep);
	mds_db_txn_abort(txn);
	return rc;
}

int ns_pool_exists(struct mds_txn *txn, const char *name)
{
	const void *v;
	size_t vl;

	return mds_db_get(txn, MDS_T_POOLS, name, strlen(name), &v, &vl);
}

int ns_pool_filter(struct mds_txn *txn, const char *name, const struct mds_ost_set *in,
		   struct mds_ost_set *out)
{
	struct nc_pool_info *p = malloc(sizeof(*p));
	int rc;

	if (!p)
		return -ENOMEM;
	out->os_count = 0;
	out->os_ndown = 0;
	memcpy(out->os_full, in->os_full, sizeof(out->os_full));
	rc = ns_pool_get(txn, name, p);
	if (rc == -ENOENT) {
		/* Destroyed since the template named it (destroy needs it
		 * empty first, so this is rare): no restriction, as Lustre. */
		nc_debug("mds", "OST pool '%s' is gone; using every OST", name);
		*out = *in;
		rc = 0;
		goto out_free;
	}
	if (rc)
		goto out_free;
	for (uint32_t i = 0; i < in->os_count; i++)
		if (ns_pool_has(p, in->os_index[i]))
			out->os_index[out->os_count++] = in->os_index[i];
	for (uint32_t i = 0; i < in->os_ndown; i++)
		if (ns_pool_has(p, in->os_down[i]))
			out->os_down[out->os_ndown++] = in->os_down[i];
out_free:
	free(p);
	return rc;
}
