/* SPDX-License-Identifier: MIT */
/* The changelog of the MDS: reading and clearing its records. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libclient/cl_int.h"

_Static_assert((int)NACRE_CL_LAYOUT == (int)NC_CL_LAYOUT && (int)NACRE_CL_CREATE == (int)NC_CL_CREATE,
	       "changelog types are the wire's");

NACRE_API const char *nacre_changelog_type_name(unsigned int type)
{
	/* Lustre's names, so tools written for `lfs changelog` read ours. */
	static const char *const names[NC_CL_TYPE_MAX + 1] = {
		[NC_CL_CREATE] = "CREAT", [NC_CL_MKDIR] = "MKDIR", [NC_CL_HLINK] = "HLINK",
		[NC_CL_SLINK] = "SLINK", [NC_CL_MKNOD] = "MKNOD", [NC_CL_UNLINK] = "UNLNK",
		[NC_CL_RMDIR] = "RMDIR", [NC_CL_RENAME] = "RENME", [NC_CL_SETATTR] = "SATTR",
		[NC_CL_TRUNC] = "TRUNC", [NC_CL_XATTR] = "XATTR", [NC_CL_LAYOUT] = "LYOUT",
	};

	return type <= NC_CL_TYPE_MAX && names[type] ? names[type] : "UNKNOWN";
}

static void cl_changelog_out(const struct nc_changelog_rec *in, struct nacre_changelog_rec *out)
{
	memset(out, 0, sizeof(*out));
	out->seq = in->cr_seq;
	out->type = in->cr_type;
	out->uid = in->cr_uid;
	out->gid = in->cr_gid;
	out->time.tv_sec = (time_t)in->cr_time.t_sec;
	out->time.tv_nsec = (long)in->cr_time.t_nsec;
	out->fid.seq = in->cr_fid.f_seq;
	out->fid.oid = in->cr_fid.f_oid;
	out->parent.seq = in->cr_parent.f_seq;
	out->parent.oid = in->cr_parent.f_oid;
	memcpy(out->name, in->cr_name, sizeof(out->name));
	out->sparent.seq = in->cr_sparent.f_seq;
	out->sparent.oid = in->cr_sparent.f_oid;
	memcpy(out->sname, in->cr_sname, sizeof(out->sname));
}

NACRE_API int nacre_changelog_read(struct nacre_fs *fs, uint64_t after,
				   struct nacre_changelog_rec *out, size_t max, size_t *count,
				   uint64_t *last)
{
	struct nc_changelog_req m = { .cl_cred = fs->fs_cred };
	struct nc_changelog_rep *rep;
	struct nc_call call;
	size_t n = 0;
	int rc = 0;

	*count = 0;
	if (!out && max)
		return -EINVAL;
	rep = calloc(1, sizeof(*rep));
	if (!rep)
		return -ENOMEM;
	do {
		m.cl_seq = after;
		m.cl_max = max - n < NC_CHANGELOG_MAX ? (uint32_t)(max - n) : NC_CHANGELOG_MAX;
		rep->cp_count = 0;
		rc = nc_cconn_rpc(fs->fs_mds, NC_OP_CHANGELOG_READ,
				  (nc_xdr_fn)nc_wire_changelog_req, &m,
				  (nc_xdr_fn)nc_wire_changelog_rep, rep, &call);
		if (rc)
			break;
		nc_call_fini(&call);
		for (uint32_t i = 0; i < rep->cp_count && n < max; i++) {
			cl_changelog_out(&rep->cp_recs[i], &out[n++]);
			after = rep->cp_recs[i].cr_seq;
		}
		if (last)
			*last = rep->cp_last;
	} while (n < max && rep->cp_count == NC_CHANGELOG_MAX);
	free(rep);
	*count = n;
	return rc;
}

NACRE_API int nacre_changelog_clear(struct nacre_fs *fs, uint64_t upto)
{
	struct nc_changelog_req m = { .cl_cred = fs->fs_cred, .cl_seq = upto };
	struct nc_call call;
	int rc;

	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_CHANGELOG_CLEAR, (nc_xdr_fn)nc_wire_changelog_req, &m,
			  NULL, NULL, &call);
	if (!rc)
		nc_call_fini(&call);
	return rc;
}
