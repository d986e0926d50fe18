/* SPDX-License-Identifier: MIT */
/* Metadata operations by FID: one MDS request each (truncate also touches
 * the OSTs). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "common/errors.h"
#include "libclient/cl_int.h"

static void fid_in(const struct nacre_fid *in, struct nc_fid *out)
{
	out->f_seq = in->seq;
	out->f_oid = in->oid;
}

static int name_check(const char *name)
{
	size_t n = strlen(name);

	if (n == 0)
		return -EINVAL;
	if (n > NC_NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

int cl_md_attr_rep_take(const struct nc_attr_rep *rep, struct nc_attr *attr,
			struct nc_layout *layout, uint8_t **inl)
{
	if (inl)
		*inl = NULL;
	if (inl && rep->ar_has_layout && (rep->ar_layout.l_flags & NC_LAYOUT_INLINE)) {
		/* The bytes point into the reply, which the caller frees. */
		if (!rep->ar_inline_sent || rep->ar_inline_len != rep->ar_attr.a_size)
			return -NC_E_PROTO;
		*inl = malloc(rep->ar_inline_len ? rep->ar_inline_len : 1);
		if (!*inl)
			return -ENOMEM;
		memcpy(*inl, rep->ar_inline, rep->ar_inline_len);
	}
	if (attr)
		*attr = rep->ar_attr;
	if (layout) {
		if (rep->ar_has_layout)
			*layout = rep->ar_layout;
		else
			memset(layout, 0, sizeof(*layout));
	}
	return 0;
}

/* With @inl (else NULL), *@inl receives an inline file's bytes (the reply
 * must carry them) in a buffer of attr->a_size bytes the caller frees;
 * NULL for other files. */
static int attr_rpc(struct nacre_fs *fs, uint16_t op, nc_xdr_fn enc, void *req,
		    struct nc_attr *attr, struct nc_layout *layout, uint8_t **inl)
{
	struct nc_attr_rep *rep = calloc(1, sizeof(*rep));
	struct nc_call call;
	int rc;

	if (inl)
		*inl = NULL;
	if (!rep)
		return -ENOMEM;
	rc = nc_cconn_rpc(fs->fs_mds, op, enc, req, (nc_xdr_fn)nc_wire_attr_rep, rep, &call);
	if (!rc) {
		rc = cl_md_attr_rep_take(rep, attr, layout, inl);
		nc_call_fini(&call);
	}
	free(rep);
	return rc;
}

static int plain_rpc(struct nacre_fs *fs, uint16_t op, nc_xdr_fn enc, void *req)
{
	struct nc_call call;
	int rc = nc_cconn_rpc(fs->fs_mds, op, enc, req, NULL, NULL, &call);

	if (!rc)
		nc_call_fini(&call);
	return rc;
}

int cl_md_getattr(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_attr *attr)
{
	struct nc_fid_req m = { .fr_cred = fs->fs_cred, .fr_fid = *fid };

	if (cl_pack_getattr(fs, fid, attr))
		return 0; /* a small file held here */

	return attr_rpc(fs, NC_OP_GETATTR, (nc_xdr_fn)nc_wire_fid_req, &m, attr, NULL, NULL);
}

int cl_md_open(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
	       uint32_t flags, struct nc_attr *attr, struct nc_layout *layout, uint8_t **inl)
{
	struct nc_fid_req m = { .fr_cred = *cred, .fr_fid = *fid, .fr_flags = flags };

	return attr_rpc(fs, NC_OP_OPEN, (nc_xdr_fn)nc_wire_fid_req, &m, attr, layout, inl);
}

int cl_md_lookup(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		 const char *name, struct nc_attr *attr)
{
	struct nc_name_req m = { .nr_cred = *cred, .nr_parent = *parent };
	int rc = name_check(name);

	if (rc)
		return rc;
	if (cl_pack_lookup(fs, parent, name, attr))
		return 0;
	strcpy(m.nr_name, name);
	rc = attr_rpc(fs, NC_OP_LOOKUP, (nc_xdr_fn)nc_wire_name_req, &m, attr, NULL, NULL);
	if (!rc)
		cl_ncache_put(fs->fs_ncache, cred, parent, name, attr);
	return rc;
}

int cl_md_lookup_open_req(const struct nc_cred *cred, const struct nc_fid *parent,
			  const char *name, struct nc_name_req *m)
{
	int rc = name_check(name);

	if (rc)
		return rc;
	memset(m, 0, sizeof(*m));
	m->nr_cred = *cred;
	m->nr_parent = *parent;
	m->nr_flags = NC_LOOKUP_OPEN;
	strcpy(m->nr_name, name);
	return 0;
}

int cl_md_lookup_open(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		      const char *name, struct nc_attr *attr, struct nc_layout *layout,
		      uint8_t **inl)
{
	struct nc_name_req m;
	int rc = cl_md_lookup_open_req(cred, parent, name, &m);

	if (rc)
		return rc;
	memset(layout, 0, sizeof(*layout));
	rc = attr_rpc(fs, NC_OP_LOOKUP, (nc_xdr_fn)nc_wire_name_req, &m, attr, layout, inl);
	if (!rc)
		cl_ncache_put(fs->fs_ncache, cred, parent, name, attr);
	return rc;
}

int cl_md_create(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		 const char *name, uint32_t mode, uint32_t rdev, uint32_t flags,
		 const char *target, struct nc_attr *attr, struct nc_layout *layout)
{
	struct nc_create_req *m;
	int rc = name_check(name);

	if (rc)
		return rc;
	if (target && strlen(target) > NC_SYMLINK_MAX)
		return -ENAMETOOLONG;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->cq_cred = *cred;
	m->cq_parent = *parent;
	strcpy(m->cq_name, name);
	m->cq_mode = mode;
	m->cq_rdev = rdev;
	m->cq_flags = flags;
	if (target)
		strcpy(m->cq_target, target);
	rc = attr_rpc(fs, NC_OP_CREATE, (nc_xdr_fn)nc_wire_create_req, m, attr, layout, NULL);
	free(m);
	cl_ncache_stale_fid(fs->fs_ncache, parent); /* its mtime and link count */
	if (!rc)
		cl_ncache_put(fs->fs_ncache, cred, parent, name, attr);
	return rc;
}

int cl_md_size_update(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		      uint64_t size, uint32_t flags, struct nc_attr *attr)
{
	struct nc_size_req m = { .su_cred = *cred, .su_fid = *fid, .su_size = size,
				 .su_flags = flags };

	int rc = attr_rpc(fs, NC_OP_SIZE_UPDATE, (nc_xdr_fn)nc_wire_size_req, &m, attr, NULL, NULL);

	cl_ncache_drop_fid(fs->fs_ncache, fid);
	return rc;
}

int cl_md_setattr(struct nacre_fs *fs, const struct nc_setattr_req *sa, struct nc_attr *attr)
{
	int rc = cl_pack_sync(fs);

	if (rc)
		return rc;
	rc = attr_rpc(fs, NC_OP_SETATTR, (nc_xdr_fn)nc_wire_setattr_req, (void *)sa, attr,
			  NULL, NULL);

	cl_ncache_drop_fid(fs->fs_ncache, &sa->sa_fid);
	return rc;
}

int cl_md_unlink(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		 const char *name, uint32_t flags)
{
	struct nc_name_req m = { .nr_cred = *cred, .nr_parent = *parent, .nr_flags = flags };
	int rc = name_check(name);

	if (!rc)
		rc = cl_pack_sync(fs); /* the name may be a file held here */
	if (rc)
		return rc;
	strcpy(m.nr_name, name);
	rc = plain_rpc(fs, NC_OP_UNLINK, (nc_xdr_fn)nc_wire_name_req, &m);
	cl_ncache_drop_name(fs->fs_ncache, parent, name);
	cl_ncache_stale_fid(fs->fs_ncache, parent);
	return rc;
}

int cl_md_rename(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *op,
		 const char *on, const struct nc_fid *np, const char *nn, uint32_t flags)
{
	struct nc_rename_req m = { .rn_cred = *cred, .rn_oldparent = *op, .rn_newparent = *np,
				   .rn_flags = flags };
	int rc = name_check(on);

	if (!rc)
		rc = name_check(nn);
	if (!rc)
		rc = cl_pack_sync(fs);
	if (rc)
		return rc;
	strcpy(m.rn_oldname, on);
	strcpy(m.rn_newname, nn);
	rc = plain_rpc(fs, NC_OP_RENAME, (nc_xdr_fn)nc_wire_rename_req, &m);
	cl_ncache_drop_name(fs->fs_ncache, op, on);
	cl_ncache_drop_name(fs->fs_ncache, np, nn);
	cl_ncache_stale_fid(fs->fs_ncache, op);
	cl_ncache_stale_fid(fs->fs_ncache, np);
	return rc;
}

/*
 * Erasure-coded truncation: parity covers whole rows, so before the data
 * past the new end is cut, the rest of the last row is written as zeros
 * (which updates its parity); then the objects are cut.  The cut holds
 * the lock on the rows it changes, like a write: a rebuild running
 * meanwhile would otherwise decode from objects cut under it, and take
 * its marks afresh under that lock: a shard whose mark a rebuild has just
 * cleared must be cut too, or its old bytes stay where the file grows.
 */
static int ec_truncate(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		       struct nc_layout *l, uint64_t cur, uint64_t size)
{
	uint64_t rowbytes = (uint64_t)l->l_stripe_size * l->l_k, upto, failed;
	uint64_t r0 = (size < cur ? size : cur) / rowbytes;
	uint32_t lock_ost;
	uint8_t *zeros;
	int rc = 0;

	if (size < cur && size % rowbytes) {
		upto = (size / rowbytes + 1) * rowbytes;
		if (upto > cur)
			upto = cur;
		zeros = calloc(1, upto - size);
		if (!zeros)
			return -ENOMEM;
		rc = cl_ec_write(fs, cred, fid, l, zeros, upto - size, size);
		free(zeros);
		if (rc)
			return rc;
	}
	rc = cl_lock_rows(fs, fid, l, r0, CL_ALL_ROWS - r0, false, &lock_ost);
	if (rc)
		return rc;
	rc = cl_refresh_marks(fs, fid, l);
	if (!rc)
		rc = cl_io_objects(fs, fid, l, NC_OP_OBJ_TRUNC, size < cur ? size : cur, &failed);
	if (!rc)
		rc = cl_objects_settle(fs, cred, fid, l, failed);
	cl_unlock_rows(fs, fid, lock_ost, r0, CL_ALL_ROWS - r0, false);
	return rc;
}

/*
 * Truncation order: the objects are cut to what the smaller of the old and
 * new sizes needs, then the MDS records the new size.  A crash in between
 * leaves the old size with less data behind it (reads see zeros), never
 * stale bytes reappearing beyond a later end of file.
 */
int cl_truncate(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		uint64_t size, struct nc_attr *attr)
{
	struct nc_setattr_req sa = { .sa_cred = *cred, .sa_fid = *fid, .sa_valid = NC_SA_SIZE,
				     .sa_size = size };
	struct nc_layout layout;
	struct nc_attr cur;
	uint8_t *inl;
	int rc;

	/* A small file held here is cut in memory. */
	rc = cl_pack_truncate(fs, cred, fid, NULL, NULL, NULL, size, attr);
	if (rc <= 0)
		goto out_packed;
	/* Data gathered by handles here must not land past the new end. */
	rc = cl_flush_fid(fs, fid);
	if (rc)
		return rc;
	/* OPEN checks write permission before anything is cut. */
	rc = cl_md_open(fs, cred, fid, NC_OPEN_WRITE, &cur, &layout, &inl);
	if (!rc && !S_ISREG(cur.a_mode))
		rc = -EINVAL;
	if (!rc && (layout.l_flags & NC_LAYOUT_SMALL)) {
		/* Cut in a pack's way; past pack_max it gets objects of its own,
		 * which are cut below. */
		rc = cl_pack_truncate(fs, cred, fid, &cur, &layout, inl, size, attr);
		if (rc <= 0) {
			free(inl);
			goto out_packed;
		}
		rc = cl_md_open(fs, cred, fid, NC_OPEN_WRITE, &cur, &layout, NULL);
	}
	free(inl);
	if (rc)
		return rc;
	if (layout.l_stripe_count && !layout.l_m) {
		rc = cl_io_objects(fs, fid, &layout, NC_OP_OBJ_TRUNC,
				   size < cur.a_size ? size : cur.a_size, NULL);
		if (rc)
			return rc;
	} else if (layout.l_stripe_count) {
		rc = ec_truncate(fs, cred, fid, &layout, cur.a_size, size);
		if (rc)
			return rc;
	}
	rc = cl_md_setattr(fs, &sa, attr);
out_packed:
	/* Bytes read ahead past the new end, or before it was cut, go. */
	cl_ra_file_changed(fs, fid);
	if (!rc)
		cl_file_size_set(fs, fid, attr->a_size);
	return rc;
}

/* ---- public FID operations ---- */

NACRE_API int nacre_lookup(struct nacre_fs *fs, const struct nacre_cred *cred,
			   const struct nacre_fid *parent, const char *name,
			   struct nacre_stat *st)
{
	struct nc_cred c;
	struct nc_fid p;
	struct nc_attr attr;
	int rc;

	cl_cred_from(fs, cred, &c);
	fid_in(parent, &p);
	rc = cl_md_lookup(fs, &c, &p, name, &attr);
	if (!rc && st)
		cl_stat_from_attr(&attr, st);
	return rc;
}

NACRE_API int nacre_getattr(struct nacre_fs *fs, const struct nacre_fid *fid,
			    struct nacre_stat *st)
{
	struct nc_fid f;
	struct nc_attr attr;
	int rc;

	fid_in(fid, &f);
	rc = cl_md_getattr(fs, &f, &attr);
	if (!rc && st)
		cl_stat_from_attr(&attr, st);
	return rc;
}

NACRE_API int nacre_setattr(struct nacre_fs *fs, const struct nacre_cred *cred,
			    const struct nacre_fid *fid, const struct nacre_setattr *sa,
			    struct nacre_stat *st)
{
	struct nc_setattr_req m = { 0 };
	struct nc_attr attr;
	int rc;

	cl_cred_from(fs, cred, &m.sa_cred);
	fid_in(fid, &m.sa_fid);
	if (sa->valid & NACRE_SET_SIZE) {
		rc = cl_truncate(fs, &m.sa_cred, &m.sa_fid, sa->size, &attr);
		if (rc)
			return rc;
	}
	m.sa_valid = sa->valid & ~NACRE_SET_SIZE; /* the NC_SA_ bits match */
	if (m.sa_valid & (NC_SA_ATIME | NC_SA_MTIME | NC_SA_ATIME_NOW | NC_SA_MTIME_NOW)) {
		/* Data written before utimes() lands before it, and no later
		 * mtime report of a handle here undoes it. */
		rc = cl_flush_fid(fs, &m.sa_fid);
		if (rc)
			return rc;
		cl_file_times_set(fs, &m.sa_fid);
	}
	m.sa_mode = sa->mode & 07777;
	m.sa_uid = sa->uid;
	m.sa_gid = sa->gid;
	m.sa_atime.t_sec = sa->atime.tv_sec;
	m.sa_atime.t_nsec = (uint32_t)sa->atime.tv_nsec;
	m.sa_mtime.t_sec = sa->mtime.tv_sec;
	m.sa_mtime.t_nsec = (uint32_t)sa->mtime.tv_nsec;
	if (m.sa_valid) {
		rc = cl_md_setattr(fs, &m, &attr);
		if (rc)
			return rc;
	} else if (!(sa->valid & NACRE_SET_SIZE)) {
		rc = cl_md_getattr(fs, &m.sa_fid, &attr);
		if (rc)
			return rc;
	}
	if (st)
		cl_stat_from_attr(&attr, st);
	return 0;
}

_Static_assert(NACRE_SET_MODE == NC_SA_MODE && NACRE_SET_UID == NC_SA_UID &&
	       NACRE_SET_GID == NC_SA_GID && NACRE_SET_SIZE == NC_SA_SIZE &&
	       NACRE_SET_ATIME == NC_SA_ATIME && NACRE_SET_MTIME == NC_SA_MTIME &&
	       NACRE_SET_ATIME_NOW == NC_SA_ATIME_NOW && NACRE_SET_MTIME_NOW == NC_SA_MTIME_NOW,
	       "public setattr bits equal the wire bits");

static int create_common(struct nacre_fs *fs, const struct nacre_cred *cred,
			 const struct nacre_fid *parent, const char *name, uint32_t mode,
			 uint32_t rdev, const char *target, struct nacre_stat *st)
{
	struct nc_cred c;
	struct nc_fid p;
	struct nc_attr attr;
	int rc;

	cl_cred_from(fs, cred, &c);
	fid_in(parent, &p);
	rc = cl_md_create(fs, &c, &p, name, mode, rdev, NC_CREATE_EXCL, target, &attr, NULL);
	if (!rc && st)
		cl_stat_from_attr(&attr, st);
	return rc;
}

NACRE_API int nacre_mknod_at(struct nacre_fs *fs, const struct nacre_cred *cred,
			     const struct nacre_fid *parent, const char *name, mode_t mode,
			     dev_t rdev, struct nacre_stat *st)
{
	if ((mode & S_IFMT) == 0)
		mode |= S_IFREG;
	if (S_ISDIR(mode) || S_ISLNK(mode))
		return -EINVAL;
	return create_common(fs, cred, parent, name, mode, (uint32_t)rdev, NULL, st);
}

NACRE_API int nacre_mkdir_at(struct nacre_fs *fs, const struct nacre_cred *cred,
			     const struct nacre_fid *parent, const char *name, mode_t mode,
			     struct nacre_stat *st)
{
	return create_common(fs, cred, parent, name, S_IFDIR | (mode & 07777), 0, NULL, st);
}

NACRE_API int nacre_symlink_at(struct nacre_fs *fs, const struct nacre_cred *cred,
			       const struct nacre_fid *parent, const char *name,
			       const char *target, struct nacre_stat *st)
{
	if (!*target)
		return -ENOENT;
	return create_common(fs, cred, parent, name, S_IFLNK | 0777, 0, target, st);
}

NACRE_API int nacre_link_at(struct nacre_fs *fs, const struct nacre_cred *cred,
			    const struct nacre_fid *fid, const struct nacre_fid *newparent,
			    const char *newname, struct nacre_stat *st)
{
	struct nc_rename_req m = { 0 };
	struct nc_attr attr;
	int rc = name_check(newname);

	if (rc)
		return rc;
	cl_cred_from(fs, cred, &m.rn_cred);
	fid_in(fid, &m.rn_src);
	fid_in(newparent, &m.rn_newparent);
	strcpy(m.rn_newname, newname);
	rc = cl_pack_sync(fs);
	if (rc)
		return rc;
	rc = attr_rpc(fs, NC_OP_LINK, (nc_xdr_fn)nc_wire_rename_req, &m, &attr, NULL, NULL);
	cl_ncache_drop_fid(fs->fs_ncache, &m.rn_src);
	cl_ncache_stale_fid(fs->fs_ncache, &m.rn_newparent);
	if (!rc && st)
		cl_stat_from_attr(&attr, st);
	return rc;
}

NACRE_API int nacre_unlink_at(struct nacre_fs *fs, const struct nacre_cred *cred,
			      const struct nacre_fid *parent, const char *name)
{
	struct nc_cred c;
	struct nc_fid p;
	int rc;

	cl_cred_from(fs, cred, &c);
	fid_in(parent, &p);
	rc = cl_hide_if_open(fs, &c, &p, name);
	if (rc)
		return rc < 0 ? rc : 0;
	return cl_md_unlink(fs, &c, &p, name, 0);
}

NACRE_API int nacre_rmdir_at(struct nacre_fs *fs, const struct nacre_cred *cred,
			     const struct nacre_fid *parent, const char *name)
{
	struct nc_cred c;
	struct nc_fid p;

	cl_cred_from(fs, cred, &c);
	fid_in(parent, &p);
	return cl_md_unlink(fs, &c, &p, name, NC_UNLINK_DIR);
}

NACRE_API int nacre_rename_at(struct nacre_fs *fs, const struct nacre_cred *cred,
			      const struct nacre_fid *oldparent, const char *oldname,
			      const struct nacre_fid *newparent, const char *newname,
			      unsigned int flags)
{
	struct nc_cred c;
	struct nc_fid op, np;
	int rc;

	if (flags & ~(NACRE_RENAME_NOREPLACE | NACRE_RENAME_EXCHANGE))
		return -EINVAL;
	cl_cred_from(fs, cred, &c);
	fid_in(oldparent, &op);
	fid_in(newparent, &np);
	/* A replaced target that is open here must stay readable. */
	if (!flags) {
		rc = cl_hide_if_open(fs, &c, &np, newname);
		if (rc < 0)
			return rc;
	}
	return cl_md_rename(fs, &c, &op, oldname, &np, newname, flags);
}

NACRE_API int nacre_readlink_fid(struct nacre_fs *fs, const struct nacre_fid *fid, char *buf,
				 size_t size)
{
	struct nc_fid_req m = { .fr_cred = fs->fs_cred };
	struct nc_bytes_rep rep;
	struct nc_call call;
	int rc;

	fid_in(fid, &m.fr_fid);
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_READLINK, (nc_xdr_fn)nc_wire_fid_req, &m,
			  (nc_xdr_fn)nc_wire_bytes_rep, &rep, &call);
	if (rc)
		return rc;
	if (size) {
		size_t n = rep.br_len < size - 1 ? rep.br_len : size - 1;

		memcpy(buf, rep.br_data, n);
		buf[n] = '\0';
	}
	rc = (int)rep.br_len;
	nc_call_fini(&call);
	return rc;
}

NACRE_API int nacre_readdir_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
				const struct nacre_fid *dir, uint64_t cookie,
				struct nacre_dirent *ents, unsigned int max, bool *eof)
{
	struct nc_readdir_req m = { .rd_cookie = cookie };
	struct nc_readdir_rep rep = { 0 };
	struct nc_call call;
	int rc;

	/* A listing shows what the MDS has: small files held here first. */
	if (cookie == 0) {
		rc = cl_pack_sync(fs);
		if (rc)
			return rc;
	}
	cl_cred_from(fs, cred, &m.rd_cred);
	fid_in(dir, &m.rd_fid);
	m.rd_max = max < NC_READDIR_MAX ? max : NC_READDIR_MAX;
	if (!m.rd_max)
		return -EINVAL;
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_READDIR, (nc_xdr_fn)nc_wire_readdir_req, &m,
			  (nc_xdr_fn)nc_wire_readdir_rep, &rep, &call);
	if (rc)
		return rc;
	nc_call_fini(&call);
	if (rep.dr_count > m.rd_max) {
		nc_readdir_rep_fini(&rep);
		return -NC_E_PROTO;
	}
	for (uint32_t i = 0; i < rep.dr_count; i++) {
		ents[i].fid.seq = rep.dr_ents[i].de_fid.f_seq;
		ents[i].fid.oid = rep.dr_ents[i].de_fid.f_oid;
		ents[i].type = rep.dr_ents[i].de_mode & S_IFMT;
		ents[i].cookie = rep.dr_ents[i].de_cookie;
		memcpy(ents[i].name, rep.dr_ents[i].de_name, sizeof(ents[i].name));
	}
	*eof = rep.dr_eof;
	rc = (int)rep.dr_count;
	nc_readdir_rep_fini(&rep);
	return rc;
}

/* ---- xattrs ---- */

static int xattr_fill(struct nacre_fs *fs, const struct nacre_cred *cred,
		      const struct nacre_fid *fid, const char *name, struct nc_xattr_req *m)
{
	memset(m, 0, sizeof(*m));
	cl_cred_from(fs, cred, &m->xr_cred);
	fid_in(fid, &m->xr_fid);
	if (name) {
		if (!*name)
			return -EINVAL;
		if (strlen(name) > NC_XATTR_NAME_MAX)
			return -ERANGE;
		strcpy(m->xr_name, name);
	}
	return 0;
}

static int bytes_out(const struct nc_bytes_rep *rep, void *buf, size_t size)
{
	if (size == 0)
		return (int)rep->br_len;
	if (rep->br_len > size)
		return -ERANGE;
	memcpy(buf, rep->br_data, rep->br_len);
	return (int)rep->br_len;
}

NACRE_API int nacre_getxattr_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
				 const struct nacre_fid *fid, const char *name, void *value,
				 size_t size)
{
	struct nc_xattr_req m;
	struct nc_bytes_rep rep;
	struct nc_call call;
	int rc = xattr_fill(fs, cred, fid, name, &m);

	if (rc)
		return rc;
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_XATTR_GET, (nc_xdr_fn)nc_wire_xattr_req, &m,
			  (nc_xdr_fn)nc_wire_bytes_rep, &rep, &call);
	if (rc)
		return rc;
	rc = bytes_out(&rep, value, size);
	nc_call_fini(&call);
	return rc;
}

NACRE_API int nacre_setxattr_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
				 const struct nacre_fid *fid, const char *name,
				 const void *value, size_t size, int flags)
{
	struct nc_xattr_req m;
	int rc = xattr_fill(fs, cred, fid, name, &m);

	if (rc)
		return rc;
	if (size > NC_XATTR_VALUE_MAX)
		return -E2BIG;
	m.xr_value = value;
	m.xr_value_len = (uint32_t)size;
	if (flags & XATTR_CREATE)
		m.xr_flags |= NC_XATTR_CREATE;
	if (flags & XATTR_REPLACE)
		m.xr_flags |= NC_XATTR_REPLACE;
	rc = cl_pack_sync(fs);
	if (rc)
		return rc;
	rc = plain_rpc(fs, NC_OP_XATTR_SET, (nc_xdr_fn)nc_wire_xattr_req, &m);
	cl_ncache_drop_fid(fs->fs_ncache, &m.xr_fid); /* its ctime */
	return rc;
}

NACRE_API int nacre_listxattr_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
				  const struct nacre_fid *fid, char *list, size_t size)
{
	struct nc_fid_req m = { 0 };
	struct nc_bytes_rep rep;
	struct nc_call call;
	int rc;

	cl_cred_from(fs, cred, &m.fr_cred);
	fid_in(fid, &m.fr_fid);
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_XATTR_LIST, (nc_xdr_fn)nc_wire_fid_req, &m,
			  (nc_xdr_fn)nc_wire_bytes_rep, &rep, &call);
	if (rc)
		return rc;
	rc = bytes_out(&rep, list, size);
	nc_call_fini(&call);
	return rc;
}

NACRE_API int nacre_removexattr_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
				    const struct nacre_fid *fid, const char *name)
{
	struct nc_xattr_req m;
	int rc = xattr_fill(fs, cred, fid, name, &m);

	if (rc)
		return rc;
	rc = cl_pack_sync(fs);
	if (rc)
		return rc;
	rc = plain_rpc(fs, NC_OP_XATTR_DEL, (nc_xdr_fn)nc_wire_xattr_req, &m);
	cl_ncache_drop_fid(fs->fs_ncache, &m.xr_fid); /* its ctime */
	return rc;
}

/* ---- layouts ---- */

int cl_md_getlayout(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_layout *l)
{
	struct nc_fid_req m = { .fr_cred = fs->fs_cred, .fr_fid = *fid };
	struct nc_layout_msg *rep = calloc(1, sizeof(*rep));
	struct nc_call call;
	int rc;

	if (!rep)
		return -ENOMEM;
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_GETLAYOUT, (nc_xdr_fn)nc_wire_fid_req, &m,
			  (nc_xdr_fn)nc_wire_layout_msg, rep, &call);
	if (!rc) {
		nc_call_fini(&call);
		*l = rep->sl_layout;
	}
	free(rep);
	return rc;
}

NACRE_API int nacre_getlayout_fid(struct nacre_fs *fs, const struct nacre_fid *fid,
				  struct nacre_layout *layout)
{
	struct nc_layout l;
	struct nc_fid f;
	int rc;

	fid_in(fid, &f);
	rc = cl_md_getlayout(fs, &f, &l);
	if (!rc)
		cl_layout_to_public(&l, layout);
	return rc;
}

NACRE_API int nacre_setlayout_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
				  const struct nacre_fid *fid, const struct nacre_layout *layout)
{
	struct nc_layout_msg *m = calloc(1, sizeof(*m));
	struct nc_layout_msg *rep = calloc(1, sizeof(*rep));
	struct nc_call call;
	int rc = -ENOMEM;

	if (!m || !rep)
		goto out;
	cl_cred_from(fs, cred, &m->sl_cred);
	fid_in(fid, &m->sl_fid);
	cl_layout_from_public(layout, &m->sl_layout);
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_SETLAYOUT, (nc_xdr_fn)nc_wire_layout_msg, m,
			  (nc_xdr_fn)nc_wire_layout_msg, rep, &call);
	if (!rc)
		nc_call_fini(&call);
	cl_pack_dir_changed(fs, &m->sl_fid);
out:
	free(m);
	free(rep);
	return rc;
}
