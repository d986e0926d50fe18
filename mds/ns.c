/* SPDX-License-Identifier: MIT */
/*
 * The namespace operations of mds/ns.h: format, open and close; lookup,
 * getattr and setattr; create, link, unlink and rename; readdir, readlink,
 * the open check and size updates.  Records and shared helpers are in
 * mds/ns_record.c, layouts in mds/ns_layout.c, xattrs in mds/ns_xattr.c,
 * statfs, the OST table and the destroy queue in mds/ns_admin.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <uuid/uuid.h>

#include "common/errors.h"
#include "mds/ns_int.h"

/* ---- entry removal: shared by unlink and rename ---- */

/* Sticky directories: only the owner of the entry or of the directory, or
 * root, removes or renames an entry (Linux answers EPERM). */
static int ns_sticky_check(const struct ns_inode *dir,
			   const struct ns_inode *victim,
			   const struct nc_cred *c)
{
	if (!(dir->in_attr.a_mode & S_ISVTX) || c->c_uid == 0)
		return 0;
	if (c->c_uid == dir->in_attr.a_uid || c->c_uid == victim->in_attr.a_uid)
		return 0;
	return -EPERM;
}

/* Removes an inode whose last link is gone; a regular file's objects go
 * to the destroy queue in the same transaction. */
static int ns_inode_free(struct mds_txn *txn, struct ns_inode *in)
{
	uint8_t key[NS_FID_KEY];
	int rc;

	ns_fid_key(&in->in_attr.a_fid, key);
	rc = mds_db_del(txn, MDS_T_INODES, key, sizeof(key));
	if (rc)
		return rc;
	rc = ns_xattrs_free(txn, &in->in_attr.a_fid);
	if (rc)
		return rc;
	if (ns_is_reg(in) && (in->in_layout.l_flags & NC_LAYOUT_PACKED))
		return ns_pack_detach(txn, &in->in_attr.a_fid, &in->in_layout);
	if (ns_is_reg(in) && in->in_layout.l_stripe_count > 0)
		return ns_destroy_queue(txn, &in->in_attr.a_fid,
					&in->in_layout);
	return 0;
}

/* Drops one name of @in (already removed from its directory). */
static int ns_inode_drop_link(struct mds_txn *txn, struct ns_inode *in,
			      const struct nc_timespec *now)
{
	if (ns_is_dir(in) || in->in_attr.a_nlink <= 1)
		return ns_inode_free(txn, in);
	in->in_attr.a_nlink--;
	in->in_attr.a_ctime = *now;
	return ns_inode_put(txn, in, false);
}

/* ---- format, open, close ---- */

static bool ns_fsname_ok(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strnlen(s, NC_FSNAME_MAX + 1);
	if (n == 0 || n > NC_FSNAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	return true;
}

static int ns_format_txn(struct mds_txn *txn, const char *fsname,
			 const uint8_t uuid[16])
{
	struct nc_layout dflt = {
		.l_stripe_size = NC_DEFAULT_STRIPE_SIZE,
		.l_stripe_count = NC_DEFAULT_STRIPE_COUNT,
		.l_flags = NC_LAYOUT_TEMPLATE,
		.l_first_ost = NC_OST_ANY,
	};
	char name[NC_FSNAME_MAX + 1];
	struct ns_inode *root;
	uint8_t u[16];
	uint8_t buf[64];
	struct nc_xdr x;
	const void *v;
	size_t vl;
	int rc;

	rc = mds_db_get(txn, MDS_T_CONFIG, NS_CONF_FSNAME,
			strlen(NS_CONF_FSNAME), &v, &vl);
	if (rc == 0)
		return -EEXIST;
	if (rc != -ENOENT)
		return rc;

	snprintf(name, sizeof(name), "%s", fsname);
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	nc_xdr_str(&x, name, NC_FSNAME_MAX);
	rc = ns_conf_put(txn, NS_CONF_FSNAME, &x);
	if (rc)
		return rc;
	memcpy(u, uuid, sizeof(u));
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	nc_xdr_fixed(&x, u, sizeof(u));
	rc = ns_conf_put(txn, NS_CONF_UUID, &x);
	if (rc)
		return rc;
	rc = ns_conf_put_u64(txn, NS_CONF_NEXT_OID, NC_ROOT_FID_OID + 1);
	if (rc)
		return rc;
	rc = ns_conf_put_u64(txn, NS_CONF_NEXT_PACK, 1);
	if (rc)
		return rc;
	rc = ns_conf_put_u64(txn, NS_CONF_DESTROY, 1);
	if (rc)
		return rc;
	rc = ns_conf_put_layout(txn, &dflt);
	if (rc)
		return rc;

	root = calloc(1, sizeof(*root));
	if (!root)
		return -ENOMEM;
	nc_fid_root(&root->in_attr.a_fid);
	root->in_attr.a_mode = S_IFDIR | 0755;
	root->in_attr.a_nlink = 2;
	root->in_attr.a_size = 4096;
	ns_set_blocks(&root->in_attr);
	ns_now(&root->in_attr.a_atime);
	root->in_attr.a_mtime = root->in_attr.a_atime;
	root->in_attr.a_ctime = root->in_attr.a_atime;
	/* The root is its own parent, which ends every upward walk. */
	root->in_parent = root->in_attr.a_fid;
	root->in_next_cookie = 1;
	rc = ns_inode_put(txn, root, true);
	free(root);
	return rc;
}

int mds_ns_format(const char *dir, const char *fsname, const uint8_t *uuid,
		  uint64_t map_size)
{
	struct mds_txn *txn;
	struct mds_db *db;
	uint8_t u[16];
	int rc;

	if (!dir || !ns_fsname_ok(fsname))
		return -EINVAL;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (uuid)
		memcpy(u, uuid, sizeof(u));
	else
		uuid_generate(u);

	rc = mds_db_open(dir, map_size, &db);
	if (rc)
		return rc;
	rc = mds_db_txn_begin(db, false, &txn);
	if (rc)
		goto out_close_db;
	rc = ns_end(txn, ns_format_txn(txn, fsname, u));
out_close_db:
	mds_db_close(db);
	return rc;
}

static int ns_load_config(struct mds_ns *ns)
{
	struct mds_txn *txn;
	struct nc_xdr x;
	int rc;

	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = ns_conf_get(txn, NS_CONF_FSNAME, &x);
	if (rc == -ENOENT)
		rc = -NC_E_NOTFMT;
	if (rc)
		goto out_abort;
	nc_xdr_str(&x, ns->ns_fsname, NC_FSNAME_MAX);
	rc = ns_conf_done(&x, NS_CONF_FSNAME);
	if (rc)
		goto out_abort;
	rc = ns_conf_get(txn, NS_CONF_UUID, &x);
	if (rc == -ENOENT)
		rc = -NC_E_CORRUPT;
	if (rc)
		goto out_abort;
	nc_xdr_fixed(&x, ns->ns_uuid, sizeof(ns->ns_uuid));
	rc = ns_conf_done(&x, NS_CONF_UUID);
out_abort:
	mds_db_txn_abort(txn);
	return rc;
}

int mds_ns_open(const char *dir, uint64_t map_size, struct mds_ns **out)
{
	struct mds_ns *ns;
	struct stat st;
	char *path;
	int rc;

	if (!dir || !out)
		return -EINVAL;
	/* Opening must not leave an empty environment behind in a directory
	 * that was never formatted. */
	if (asprintf(&path, "%s/data.mdb", dir) < 0)
		return -ENOMEM;
	rc = stat(path, &st) ? -errno : 0;
	free(path);
	if (rc == -ENOENT || rc == -ENOTDIR)
		return -NC_E_NOTFMT;
	if (rc)
		return rc;

	ns = calloc(1, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	ns->ns_dir = strdup(dir);
	if (!ns->ns_dir) {
		rc = -ENOMEM;
		goto out_free_ns;
	}
	rc = mds_db_open(dir, map_size, &ns->ns_db);
	if (rc)
		goto out_free_dir;
	rc = ns_load_config(ns);
	if (rc)
		goto out_close_db;
	atomic_init(&ns->ns_rr, 0);
	for (size_t i = 0; i < NS_WRITE_SLOTS; i++)
		atomic_init(&ns->ns_write_ms[i], INT64_MIN);
	ns->ns_migrate_quiet_ms = NS_MIGRATE_QUIET_MS;
	*out = ns;
	return 0;

out_close_db:
	mds_db_close(ns->ns_db);
out_free_dir:
	free(ns->ns_dir);
out_free_ns:
	free(ns);
	return rc;
}

void mds_ns_close(struct mds_ns *ns)
{
	if (!ns)
		return;
	mds_db_close(ns->ns_db);
	free(ns->ns_dir);
	free(ns);
}

const char *mds_ns_fsname(const struct mds_ns *ns)
{
	return ns->ns_fsname;
}

void mds_ns_uuid(const struct mds_ns *ns, uint8_t uuid[16])
{
	memcpy(uuid, ns->ns_uuid, 16);
}

/* ---- lookup, getattr ---- */

int mds_ns_lookup(struct mds_ns *ns, const struct nc_cred *cred,
		  const struct nc_fid *parent, const char *name,
		  struct nc_attr *attr)
{
	struct ns_inode *in;
	struct ns_dirent d;
	struct mds_txn *txn;
	int rc;

	rc = ns_name_check(name);
	if (rc)
		return rc;
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		goto out_free;
	rc = ns_dir_get(txn, parent, in);
	if (rc)
		goto out_abort;
	rc = nc_permission(&in->in_attr, cred, NC_MAY_EXEC);
	if (rc)
		goto out_abort;
	rc = ns_dirent_get(txn, parent, name, &d);
	if (rc)
		goto out_abort;
	rc = ns_inode_get_child(txn, &d.d_fid, in);
	if (rc)
		goto out_abort;
	*attr = in->in_attr;
out_abort:
	mds_db_txn_abort(txn);
out_free:
	free(in);
	return rc;
}

/* Reads one inode in a transaction of its own. */
static int ns_read_inode(struct mds_ns *ns, const struct nc_fid *fid,
			 struct ns_inode *in)
{
	struct mds_txn *txn;
	int rc;

	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = ns_inode_get(txn, fid, in);
	mds_db_txn_abort(txn);
	return rc;
}

int mds_ns_getattr(struct mds_ns *ns, const struct nc_fid *fid,
		   struct nc_attr *attr)
{
	struct ns_inode *in;
	int rc;

	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = ns_read_inode(ns, fid, in);
	if (rc == 0)
		*attr = in->in_attr;
	free(in);
	return rc;
}

/* ---- setattr ---- */

#define NS_SA_ALL (NC_SA_MODE | NC_SA_UID | NC_SA_GID | NC_SA_SIZE |        \
		   NC_SA_ATIME | NC_SA_MTIME | NC_SA_ATIME_NOW |              \
		   NC_SA_MTIME_NOW | NC_SA_CTIME)

/* Checks every requested change before any is applied (setattr_prepare). */
static int ns_setattr_check(const struct ns_inode *in,
			    const struct nc_setattr_req *sa)
{
	const struct nc_attr *a = &in->in_attr;
	const struct nc_cred *c = &sa->sa_cred;
	uint32_t v = sa->sa_valid;
	int rc;

	if (v & ~NS_SA_ALL)
		return -EINVAL;
	if (v & NC_SA_SIZE) {
		if (S_ISDIR(a->a_mode))
			return -EISDIR;
		if (!S_ISREG(a->a_mode))
			return -EINVAL;
		rc = nc_permission(a, c, NC_MAY_WRITE);
		if (rc)
			return rc;
	}
	if ((v & NC_SA_UID) && c->c_uid != 0 &&
	    (c->c_uid != a->a_uid || sa->sa_uid != a->a_uid))
		return -EPERM;
	if ((v & NC_SA_GID) && c->c_uid != 0 &&
	    (c->c_uid != a->a_uid ||
	     (sa->sa_gid != a->a_gid && !nc_cred_in_group(c, sa->sa_gid))))
		return -EPERM;
	if ((v & NC_SA_MODE) && !ns_is_owner(a, c))
		return -EPERM;
	if ((v & (NC_SA_ATIME | NC_SA_MTIME)) && !ns_is_owner(a, c))
		return -EPERM;
	if ((v & (NC_SA_ATIME_NOW | NC_SA_MTIME_NOW)) && !ns_is_owner(a, c) &&
	    nc_permission(a, c, NC_MAY_WRITE))
		return -EACCES;
	return 0;
}

static void ns_setattr_apply(struct ns_inode *in,
			     const struct nc_setattr_req *sa,
			     const struct nc_timespec *now)
{
	struct nc_attr *a = &in->in_attr;
	const struct nc_cred *c = &sa->sa_cred;
	uint32_t v = sa->sa_valid;
	uint32_t gid;

	if (v & NC_SA_UID)
		a->a_uid = sa->sa_uid;
	if (v & NC_SA_GID)
		a->a_gid = sa->sa_gid;
	/* chown by an unprivileged owner drops setuid and setgid, so that a
	 * file cannot gain privileges by changing hands. */
	if ((v & (NC_SA_UID | NC_SA_GID)) && c->c_uid != 0 &&
	    !S_ISDIR(a->a_mode))
		a->a_mode &= ~(uint32_t)(S_ISUID | S_ISGID);
	if (v & NC_SA_MODE) {
		a->a_mode = (a->a_mode & S_IFMT) | (sa->sa_mode & 07777);
		gid = a->a_gid;
		/* As Linux: setgid stays only for a member of the group. */
		if (c->c_uid != 0 && !nc_cred_in_group(c, gid))
			a->a_mode &= ~(uint32_t)S_ISGID;
	}
	if (v & NC_SA_SIZE) {
		a->a_size = sa->sa_size;
		ns_set_blocks(a);
		if (!(v & NC_SA_MTIME))
			a->a_mtime = *now;
	}
	if (v & NC_SA_ATIME)
		a->a_atime = sa->sa_atime;
	else if (v & NC_SA_ATIME_NOW)
		a->a_atime = *now;
	if (v & NC_SA_MTIME)
		a->a_mtime = sa->sa_mtime;
	else if (v & NC_SA_MTIME_NOW)
		a->a_mtime = *now;
	a->a_ctime = *now;
}

int mds_ns_setattr(struct mds_ns *ns, const struct nc_setattr_req *sa,
		   struct nc_attr *attr)
{
	struct nc_timespec now;
	struct ns_inode *in;
	struct mds_txn *txn;
	int rc;

	if ((sa->sa_valid & NC_SA_ATIME) && sa->sa_atime.t_nsec >= 1000000000u)
		return -EINVAL;
	if ((sa->sa_valid & NC_SA_MTIME) && sa->sa_mtime.t_nsec >= 1000000000u)
		return -EINVAL;
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = ns_inode_get(txn, &sa->sa_fid, in);
	if (rc)
		goto out_end;
	rc = ns_setattr_check(in, sa);
	if (rc || sa->sa_valid == 0)
		goto out_end;
	/* A packed (or inline) file's size is its extent's (its bytes'): a
	 * client changes it by switching the file to new bytes (PACK_SWITCH). */
	if ((sa->sa_valid & NC_SA_SIZE) && (in->in_layout.l_flags & NC_LAYOUT_SMALL) &&
	    sa->sa_size != in->in_attr.a_size) {
		rc = -NC_E_PACKED;
		goto out_end;
	}
	ns_now(&now);
	ns_setattr_apply(in, sa, &now);
	rc = ns_inode_put(txn, in, false);
	if (!rc)
		rc = ns_changelog_add(ns, txn, (sa->sa_valid & NC_SA_SIZE) ? NC_CL_TRUNC :
					       NC_CL_SETATTR, &sa->sa_cred, &sa->sa_fid,
				      NULL, NULL, NULL, NULL);
out_end:
	rc = ns_end(txn, rc);
	if (rc == 0)
		*attr = in->in_attr;
out_free:
	free(in);
	return rc;
}

/* ---- create ---- */

static int ns_create_type(uint32_t mode, uint32_t *type)
{
	switch (mode & S_IFMT) {
	case 0:
		*type = S_IFREG;
		return 0;
	case S_IFREG:
	case S_IFDIR:
	case S_IFLNK:
	case S_IFIFO:
	case S_IFSOCK:
	case S_IFCHR:
	case S_IFBLK:
		*type = mode & S_IFMT;
		return 0;
	default:
		return -EINVAL;
	}
}

struct ns_create_ctx {
	struct ns_inode cc_parent;
	struct ns_inode cc_child;
};

static uint32_t ns_create_cl_type(uint32_t type)
{
	switch (type) {
	case S_IFDIR: return NC_CL_MKDIR;
	case S_IFLNK: return NC_CL_SLINK;
	case S_IFREG: return NC_CL_CREATE;
	default: return NC_CL_MKNOD;
	}
}

/* An existing name: open(O_CREAT) without O_EXCL gets the regular file. */
static int ns_create_existing(struct mds_txn *txn,
			      const struct nc_create_req *cq, uint32_t type,
			      const struct ns_dirent *d, struct ns_inode *child)
{
	int rc;

	if ((cq->cq_flags & NC_CREATE_EXCL) || type != S_IFREG ||
	    !S_ISREG(d->d_mode))
		return -EEXIST;
	rc = ns_inode_get_child(txn, &d->d_fid, child);
	if (rc)
		return rc;
	return ns_is_reg(child) ? 0 : -EEXIST;
}

static int ns_create_txn(struct mds_ns *ns, struct mds_txn *txn,
			 const struct nc_create_req *cq,
			 const struct mds_ost_set *osts,
			 struct ns_create_ctx *cc)
{
	struct ns_inode *p = &cc->cc_parent;
	struct ns_inode *in = &cc->cc_child;
	const struct nc_cred *cred = &cq->cq_cred;
	struct nc_layout dflt;
	struct nc_timespec now;
	struct ns_dirent d;
	uint32_t type;
	size_t tlen = 0;
	int rc;

	if (cq->cq_flags & ~NC_CREATE_FLAGS)
		return -EINVAL;
	rc = ns_create_type(cq->cq_mode, &type);
	if (rc)
		return rc;
	if (type == S_IFLNK) {
		tlen = strnlen(cq->cq_target, sizeof(cq->cq_target));
		if (tlen == 0)
			return -ENOENT;
		if (tlen > NC_SYMLINK_MAX)
			return -ENAMETOOLONG;
	}
	rc = ns_dir_get(txn, &cq->cq_parent, p);
	if (rc)
		return rc;
	rc = nc_permission(&p->in_attr, cred, NC_MAY_EXEC);
	if (rc)
		return rc;
	if ((cq->cq_flags & NC_CREATE_PACKED) &&
	    (type != S_IFREG || !(cq->cq_flags & NC_CREATE_FID) ||
	     cq->cq_size != ((cq->cq_flags & NC_CREATE_INLINE) ? cq->cq_inline_len :
							     cq->cq_layout.l_pack_len)))
		return -EINVAL;
	if ((cq->cq_flags & NC_CREATE_INLINE) &&
	    (!(cq->cq_flags & NC_CREATE_PACKED) || cq->cq_inline_len > NC_INLINE_MAX ||
	     (cq->cq_inline_len && !cq->cq_inline)))
		return -EINVAL;
	rc = ns_dirent_get(txn, &cq->cq_parent, cq->cq_name, &d);
	/* A resent create of a client-named file that already went in. */
	if (rc == 0 && (cq->cq_flags & NC_CREATE_FID) && nc_fid_eq(&d.d_fid, &cq->cq_fid))
		return ns_inode_get_child(txn, &d.d_fid, in);
	if (rc == 0)
		return ns_create_existing(txn, cq, type, &d, in);
	if (rc != -ENOENT)
		return rc;
	rc = nc_permission(&p->in_attr, cred, NC_MAY_WRITE | NC_MAY_EXEC);
	if (rc)
		return rc;
	if (type == S_IFDIR && p->in_attr.a_nlink >= NS_LINK_MAX)
		return -EMLINK;

	memset(in, 0, sizeof(*in));
	if (cq->cq_flags & NC_CREATE_FID) {
		rc = ns_fid_check_granted(txn, &cq->cq_fid);
		in->in_attr.a_fid = cq->cq_fid;
	} else {
		rc = ns_fid_alloc(txn, &in->in_attr.a_fid);
	}
	if (rc)
		return rc;
	ns_now(&now);
	in->in_attr.a_mode = type | (cq->cq_mode & 07777);
	in->in_attr.a_uid = cred->c_uid;
	/* BSD group semantics under a setgid directory, as Linux does. */
	if (p->in_attr.a_mode & S_ISGID) {
		in->in_attr.a_gid = p->in_attr.a_gid;
		if (type == S_IFDIR)
			in->in_attr.a_mode |= S_ISGID;
	} else {
		in->in_attr.a_gid = cred->c_gid;
	}
	if (type != S_IFDIR && (in->in_attr.a_mode & S_ISGID) &&
	    cred->c_uid != 0 && !nc_cred_in_group(cred, in->in_attr.a_gid))
		in->in_attr.a_mode &= ~(uint32_t)S_ISGID;
	in->in_attr.a_nlink = type == S_IFDIR ? 2 : 1;
	if (type == S_IFCHR || type == S_IFBLK)
		in->in_attr.a_rdev = cq->cq_rdev;
	in->in_attr.a_atime = now;
	in->in_attr.a_mtime = now;
	in->in_attr.a_ctime = now;

	switch (type) {
	case S_IFREG:
		if (cq->cq_flags & NC_CREATE_INLINE) {
			in->in_layout.l_flags = NC_LAYOUT_INLINE;
			if (cq->cq_inline_len)
				memcpy(in->in_inline, cq->cq_inline, cq->cq_inline_len);
			in->in_attr.a_size = cq->cq_inline_len;
			in->in_attr.a_mtime = cq->cq_mtime;
			ns_set_blocks(&in->in_attr);
			break;
		}
		if (cq->cq_flags & NC_CREATE_PACKED) {
			in->in_layout.l_flags = NC_LAYOUT_PACKED;
			in->in_layout.l_pack_id = cq->cq_layout.l_pack_id;
			in->in_layout.l_pack_off = cq->cq_layout.l_pack_off;
			in->in_layout.l_pack_len = cq->cq_layout.l_pack_len;
			in->in_attr.a_size = cq->cq_size;
			in->in_attr.a_mtime = cq->cq_mtime;
			ns_set_blocks(&in->in_attr);
			rc = ns_pack_attach(txn, &in->in_attr.a_fid, &in->in_layout);
			if (rc)
				return rc;
			break;
		}
		rc = ns_conf_get_layout(txn, &dflt);
		if (rc)
			return rc;
		rc = ns_layout_alloc(ns, txn, &dflt,
				     p->in_has_tmpl ? &p->in_layout : NULL,
				     osts, &in->in_layout);
		if (rc)
			return rc;
		break;
	case S_IFDIR:
		in->in_attr.a_size = 4096;
		ns_set_blocks(&in->in_attr);
		in->in_parent = p->in_attr.a_fid;
		in->in_next_cookie = 1;
		in->in_has_tmpl = p->in_has_tmpl;
		in->in_layout = p->in_layout;
		p->in_attr.a_nlink++;
		break;
	case S_IFLNK:
		memcpy(in->in_target, cq->cq_target, tlen);
		in->in_target[tlen] = '\0';
		in->in_attr.a_size = tlen;
		break;
	default:
		break;
	}

	rc = ns_dirent_add(txn, p, cq->cq_name, &in->in_attr.a_fid, type);
	if (rc)
		return rc;
	rc = ns_inode_put(txn, in, true);
	if (rc)
		return rc;
	p->in_attr.a_mtime = now;
	p->in_attr.a_ctime = now;
	rc = ns_inode_put(txn, p, false);
	if (rc)
		return rc;
	return ns_changelog_add(ns, txn, ns_create_cl_type(type), cred, &in->in_attr.a_fid,
				&cq->cq_parent, cq->cq_name, NULL, NULL);
}

int mds_ns_create(struct mds_ns *ns, const struct nc_create_req *cq,
		  const struct mds_ost_set *osts, struct nc_attr *attr,
		  struct nc_layout *layout)
{
	struct ns_create_ctx *cc;
	struct mds_txn *txn;
	int rc;

	rc = ns_name_check(cq->cq_name);
	if (rc)
		return rc;
	cc = malloc(sizeof(*cc));
	if (!cc)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = ns_create_txn(ns, txn, cq, osts, cc);
	if (!rc && layout)
		rc = ns_layout_join(txn, &cc->cc_child, layout);
	rc = ns_end(txn, rc);
	if (rc)
		goto out_free;
	if (attr)
		*attr = cc->cc_child.in_attr;
	if (ns_is_reg(&cc->cc_child))
		ns_write_note(ns, &cc->cc_child.in_attr.a_fid); /* its creator writes next */
out_free:
	free(cc);
	return rc;
}

/* ---- link, unlink ---- */

static int ns_link_txn(struct mds_txn *txn, const struct nc_cred *cred,
		       const struct nc_fid *fid, const struct nc_fid *newparent,
		       const char *newname, struct ns_create_ctx *cc)
{
	struct ns_inode *p = &cc->cc_parent;
	struct ns_inode *in = &cc->cc_child;
	struct nc_timespec now;
	struct ns_dirent d;
	int rc;

	rc = ns_inode_get(txn, fid, in);
	if (rc)
		return rc;
	if (ns_is_dir(in))
		return -EPERM;
	rc = ns_dir_get(txn, newparent, p);
	if (rc)
		return rc;
	rc = nc_permission(&p->in_attr, cred, NC_MAY_EXEC);
	if (rc)
		return rc;
	rc = ns_dirent_get(txn, newparent, newname, &d);
	if (rc == 0)
		return -EEXIST;
	if (rc != -ENOENT)
		return rc;
	rc = nc_permission(&p->in_attr, cred, NC_MAY_WRITE | NC_MAY_EXEC);
	if (rc)
		return rc;
	if (in->in_attr.a_nlink >= NS_LINK_MAX)
		return -EMLINK;

	rc = ns_dirent_add(txn, p, newname, fid, in->in_attr.a_mode);
	if (rc)
		return rc;
	ns_now(&now);
	in->in_attr.a_nlink++;
	in->in_attr.a_ctime = now;
	rc = ns_inode_put(txn, in, false);
	if (rc)
		return rc;
	p->in_attr.a_mtime = now;
	p->in_attr.a_ctime = now;
	return ns_inode_put(txn, p, false);
}

int mds_ns_link(struct mds_ns *ns, const struct nc_cred *cred,
		const struct nc_fid *fid, const struct nc_fid *newparent,
		const char *newname, struct nc_attr *attr)
{
	struct ns_create_ctx *cc;
	struct mds_txn *txn;
	int rc;

	rc = ns_name_check(newname);
	if (rc)
		return rc;
	cc = malloc(sizeof(*cc));
	if (!cc)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = ns_link_txn(txn, cred, fid, newparent, newname, cc);
	if (!rc)
		rc = ns_changelog_add(ns, txn, NC_CL_HLINK, cred, fid, newparent, newname,
				      NULL, NULL);
	rc = ns_end(txn, rc);
	if (rc == 0 && attr)
		*attr = cc->cc_child.in_attr;
out_free:
	free(cc);
	return rc;
}

static int ns_unlink_txn(struct mds_txn *txn, const struct nc_cred *cred,
			 const struct nc_fid *parent, const char *name,
			 bool dir, struct ns_create_ctx *cc)
{
	struct ns_inode *p = &cc->cc_parent;
	struct ns_inode *in = &cc->cc_child;
	struct nc_timespec now;
	struct ns_dirent d;
	bool empty;
	int rc;

	rc = ns_dir_get(txn, parent, p);
	if (rc)
		return rc;
	rc = nc_permission(&p->in_attr, cred, NC_MAY_EXEC);
	if (rc)
		return rc;
	rc = ns_dirent_get(txn, parent, name, &d);
	if (rc)
		return rc;
	rc = nc_permission(&p->in_attr, cred, NC_MAY_WRITE | NC_MAY_EXEC);
	if (rc)
		return rc;
	rc = ns_inode_get_child(txn, &d.d_fid, in);
	if (rc)
		return rc;
	rc = ns_sticky_check(p, in, cred);
	if (rc)
		return rc;
	if (dir && !ns_is_dir(in))
		return -ENOTDIR;
	if (!dir && ns_is_dir(in))
		return -EISDIR;
	if (dir) {
		rc = ns_dir_is_empty(txn, &in->in_attr.a_fid, &empty);
		if (rc)
			return rc;
		if (!empty)
			return -ENOTEMPTY;
	}

	ns_now(&now);
	rc = ns_dirent_del(txn, parent, name, &d);
	if (rc)
		return rc;
	rc = ns_inode_drop_link(txn, in, &now);
	if (rc)
		return rc;
	if (dir && p->in_attr.a_nlink > 2)
		p->in_attr.a_nlink--;
	p->in_attr.a_mtime = now;
	p->in_attr.a_ctime = now;
	return ns_inode_put(txn, p, false);
}

int mds_ns_unlink(struct mds_ns *ns, const struct nc_cred *cred,
		  const struct nc_fid *parent, const char *name, bool dir)
{
	struct ns_create_ctx *cc;
	struct mds_txn *txn;
	int rc;

	rc = ns_name_check(name);
	if (rc)
		return rc;
	cc = malloc(sizeof(*cc));
	if (!cc)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = ns_unlink_txn(txn, cred, parent, name, dir, cc);
	if (!rc)
		rc = ns_changelog_add(ns, txn, dir ? NC_CL_RMDIR : NC_CL_UNLINK, cred,
				      &cc->cc_child.in_attr.a_fid, parent, name, NULL, NULL);
	rc = ns_end(txn, rc);
out_free:
	free(cc);
	return rc;
}

/* ---- rename ---- */

struct ns_rename_ctx {
	struct ns_inode rc_op;          /* old parent */
	struct ns_inode rc_np;          /* new parent (unused when the same) */
	struct ns_inode rc_src;
	struct ns_inode rc_tgt;
	struct ns_inode rc_walk;
};

/*
 * -EINVAL when @dir lies at or below @anc: a directory cannot move into
 * its own subtree.  Walks parent pointers from @dir up to the root.
 */
static int ns_check_not_below(struct mds_txn *txn, const struct nc_fid *anc,
			      const struct nc_fid *dir, struct ns_inode *tmp)
{
	struct nc_fid cur = *dir;
	int rc;

	for (uint32_t depth = 0; depth < NS_MAX_DEPTH; depth++) {
		if (nc_fid_eq(&cur, anc))
			return -EINVAL;
		if (cur.f_seq == NC_ROOT_FID_SEQ &&
		    cur.f_oid == NC_ROOT_FID_OID)
			return 0;
		rc = ns_inode_get(txn, &cur, tmp);
		if (rc == -ENOENT)
			rc = -NC_E_CORRUPT;
		if (rc)
			return rc;
		if (!ns_is_dir(tmp) || nc_fid_eq(&tmp->in_parent, &cur)) {
			ns_log_corrupt("directory parent", &cur);
			return -NC_E_CORRUPT;
		}
		cur = tmp->in_parent;
	}
	ns_log_corrupt("directory tree depth", dir);
	return -NC_E_CORRUPT;
}

/* Moving a directory to another parent rewrites its "..": Linux asks for
 * write permission on it, and it must not land inside itself. */
static int ns_rename_dir_move(struct mds_txn *txn, const struct nc_cred *cred,
			      struct ns_inode *moved,
			      const struct nc_fid *dest, struct ns_inode *tmp)
{
	int rc = nc_permission(&moved->in_attr, cred, NC_MAY_WRITE);

	if (rc)
		return rc;
	return ns_check_not_below(txn, &moved->in_attr.a_fid, dest, tmp);
}

static int ns_rename_types(struct mds_txn *txn, const struct ns_inode *src,
			   const struct ns_inode *tgt)
{
	bool empty;
	int rc;

	if (ns_is_dir(src) && !ns_is_dir(tgt))
		return -ENOTDIR;
	if (!ns_is_dir(src) && ns_is_dir(tgt))
		return -EISDIR;
	if (ns_is_dir(tgt)) {
		rc = ns_dir_is_empty(txn, &tgt->in_attr.a_fid, &empty);
		if (rc)
			return rc;
		if (!empty)
			return -ENOTEMPTY;
	}
	return 0;
}

static int ns_rename_exchange(struct mds_txn *txn,
			      const struct nc_rename_req *rn,
			      struct ns_rename_ctx *c, struct ns_inode *np,
			      const struct ns_dirent *sd,
			      const struct ns_dirent *td)
{
	struct ns_inode *op = &c->rc_op;
	bool cross = np != op;
	struct ns_dirent e;
	int rc;

	if (cross && ns_is_dir(&c->rc_src)) {
		rc = ns_rename_dir_move(txn, &rn->rn_cred, &c->rc_src,
					&rn->rn_newparent, &c->rc_walk);
		if (rc)
			return rc;
	}
	if (cross && ns_is_dir(&c->rc_tgt)) {
		rc = ns_rename_dir_move(txn, &rn->rn_cred, &c->rc_tgt,
					&rn->rn_oldparent, &c->rc_walk);
		if (rc)
			return rc;
	}
	/* Each name keeps its cookie and now names the other inode. */
	e = *sd;
	e.d_fid = td->d_fid;
	e.d_mode = td->d_mode;
	rc = ns_dirent_put(txn, &rn->rn_oldparent, rn->rn_oldname, &e, false);
	if (rc)
		return rc;
	e = *td;
	e.d_fid = sd->d_fid;
	e.d_mode = sd->d_mode;
	rc = ns_dirent_put(txn, &rn->rn_newparent, rn->rn_newname, &e, false);
	if (rc)
		return rc;
	if (cross && ns_is_dir(&c->rc_src)) {
		c->rc_src.in_parent = np->in_attr.a_fid;
		op->in_attr.a_nlink--;
		np->in_attr.a_nlink++;
	}
	if (cross && ns_is_dir(&c->rc_tgt)) {
		c->rc_tgt.in_parent = op->in_attr.a_fid;
		np->in_attr.a_nlink--;
		op->in_attr.a_nlink++;
	}
	c->rc_src.in_attr.a_ctime = op->in_attr.a_mtime;
	c->rc_tgt.in_attr.a_ctime = op->in_attr.a_mtime;
	rc = ns_inode_put(txn, &c->rc_src, false);
	if (rc)
		return rc;
	return ns_inode_put(txn, &c->rc_tgt, false);
}

static int ns_rename_move(struct mds_txn *txn, const struct nc_rename_req *rn,
			  struct ns_rename_ctx *c, struct ns_inode *np,
			  const struct ns_dirent *sd,
			  const struct ns_dirent *td, bool have_tgt)
{
	struct ns_inode *op = &c->rc_op;
	struct ns_inode *src = &c->rc_src;
	const struct nc_timespec *now = &op->in_attr.a_mtime;
	bool cross = np != op;
	int rc;

	if (cross && ns_is_dir(src)) {
		rc = ns_rename_dir_move(txn, &rn->rn_cred, src,
					&rn->rn_newparent, &c->rc_walk);
		if (rc)
			return rc;
		if (!have_tgt && np->in_attr.a_nlink >= NS_LINK_MAX)
			return -EMLINK;
	}
	rc = ns_dirent_del(txn, &rn->rn_oldparent, rn->rn_oldname, sd);
	if (rc)
		return rc;
	if (have_tgt) {
		rc = ns_dirent_del(txn, &rn->rn_newparent, rn->rn_newname, td);
		if (rc)
			return rc;
		/* A replaced directory was empty: its ".." link goes too. */
		if (ns_is_dir(&c->rc_tgt))
			np->in_attr.a_nlink--;
		rc = ns_inode_drop_link(txn, &c->rc_tgt, now);
		if (rc)
			return rc;
	}
	/* A new cookie in the new parent: readers already past the old
	 * position still see the entry. */
	rc = ns_dirent_add(txn, np, rn->rn_newname, &src->in_attr.a_fid,
			   src->in_attr.a_mode);
	if (rc)
		return rc;
	if (cross && ns_is_dir(src)) {
		src->in_parent = np->in_attr.a_fid;
		op->in_attr.a_nlink--;
		np->in_attr.a_nlink++;
	}
	src->in_attr.a_ctime = *now;
	return ns_inode_put(txn, src, false);
}

static int ns_rename_txn(struct mds_txn *txn, const struct nc_rename_req *rn,
			 struct ns_rename_ctx *c)
{
	const struct nc_cred *cred = &rn->rn_cred;
	bool exchange = rn->rn_flags & NC_RENAME_EXCHANGE;
	struct ns_inode *op = &c->rc_op, *np;
	struct ns_dirent sd, td;
	struct nc_timespec now;
	bool have_tgt;
	int rc;

	rc = ns_dir_get(txn, &rn->rn_oldparent, op);
	if (rc)
		return rc;
	if (nc_fid_eq(&rn->rn_oldparent, &rn->rn_newparent)) {
		np = op;
	} else {
		np = &c->rc_np;
		rc = ns_dir_get(txn, &rn->rn_newparent, np);
		if (rc)
			return rc;
	}
	/* Search permission finds the names; changing them needs write. */
	rc = nc_permission(&op->in_attr, cred, NC_MAY_EXEC);
	if (rc)
		return rc;
	rc = nc_permission(&np->in_attr, cred, NC_MAY_EXEC);
	if (rc)
		return rc;
	rc = ns_dirent_get(txn, &rn->rn_oldparent, rn->rn_oldname, &sd);
	if (rc)
		return rc;
	rc = ns_dirent_get(txn, &rn->rn_newparent, rn->rn_newname, &td);
	if (rc && rc != -ENOENT)
		return rc;
	have_tgt = rc == 0;
	rc = nc_permission(&op->in_attr, cred, NC_MAY_WRITE | NC_MAY_EXEC);
	if (rc)
		return rc;
	rc = nc_permission(&np->in_attr, cred, NC_MAY_WRITE | NC_MAY_EXEC);
	if (rc)
		return rc;
	if (exchange && !have_tgt)
		return -ENOENT;
	if ((rn->rn_flags & NC_RENAME_NOREPLACE) && have_tgt)
		return -EEXIST;
	/* Two names of one inode: rename(2) does nothing and succeeds. */
	if (have_tgt && nc_fid_eq(&sd.d_fid, &td.d_fid))
		return 0;

	rc = ns_inode_get_child(txn, &sd.d_fid, &c->rc_src);
	if (rc)
		return rc;
	rc = ns_sticky_check(op, &c->rc_src, cred);
	if (rc)
		return rc;
	if (have_tgt) {
		rc = ns_inode_get_child(txn, &td.d_fid, &c->rc_tgt);
		if (rc)
			return rc;
		rc = ns_sticky_check(np, &c->rc_tgt, cred);
		if (rc)
			return rc;
		if (!exchange) {
			rc = ns_rename_types(txn, &c->rc_src, &c->rc_tgt);
			if (rc)
				return rc;
		}
	}

	ns_now(&now);
	op->in_attr.a_mtime = now;
	op->in_attr.a_ctime = now;
	np->in_attr.a_mtime = now;
	np->in_attr.a_ctime = now;
	if (exchange)
		rc = ns_rename_exchange(txn, rn, c, np, &sd, &td);
	else
		rc = ns_rename_move(txn, rn, c, np, &sd, &td, have_tgt);
	if (rc)
		return rc;
	rc = ns_inode_put(txn, op, false);
	if (rc || np == op)
		return rc;
	return ns_inode_put(txn, np, false);
}

int mds_ns_rename(struct mds_ns *ns, const struct nc_rename_req *rn)
{
	struct ns_rename_ctx *c;
	struct mds_txn *txn;
	int rc;

	if (rn->rn_flags & ~(NC_RENAME_NOREPLACE | NC_RENAME_EXCHANGE))
		return -EINVAL;
	if ((rn->rn_flags & NC_RENAME_NOREPLACE) &&
	    (rn->rn_flags & NC_RENAME_EXCHANGE))
		return -EINVAL;
	rc = ns_name_check(rn->rn_oldname);
	if (rc)
		return rc;
	rc = ns_name_check(rn->rn_newname);
	if (rc)
		return rc;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = ns_rename_txn(txn, rn, c);
	if (!rc)
		rc = ns_changelog_add(ns, txn, NC_CL_RENAME, &rn->rn_cred, &c->rc_src.in_attr.a_fid,
				      &rn->rn_newparent, rn->rn_newname, &rn->rn_oldparent,
				      rn->rn_oldname);
	rc = ns_end(txn, rc);
out_free:
	free(c);
	return rc;
}

/* ---- readdir, readlink, open ---- */

static int ns_readdir_one(const void *k, size_t kl, const void *v, size_t vl,
			  const uint8_t *prefix, struct nc_dirent *de)
{
	struct nc_xdr x;

	if (kl != NS_FID_KEY + 8 || memcmp(k, prefix, NS_FID_KEY))
		return -ENOENT;
	de->de_cookie = ns_get_be64((const uint8_t *)k + NS_FID_KEY);
	nc_xdr_init_decode(&x, v, vl);
	ns_xdr_version(&x);
	ns_xdr_fid(&x, &de->de_fid);
	nc_xdr_u32(&x, &de->de_mode);
	nc_xdr_str(&x, de->de_name, NC_NAME_MAX);
	if (x.x_err || nc_xdr_finish(&x) || !de->de_name[0])
		return -NC_E_CORRUPT;
	return 0;
}

static int ns_readdir_txn(struct mds_txn *txn, const struct nc_cred *cred,
			  const struct nc_fid *dir, uint64_t cookie,
			  uint32_t max, struct nc_dirent *ents,
			  uint32_t *count, bool *eof)
{
	uint8_t key[NS_FID_KEY + 8];
	struct nc_dirent extra;
	struct mds_cursor *c;
	struct ns_inode *in;
	const void *k, *v;
	size_t kl, vl;
	uint32_t n = 0;
	int rc;

	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = ns_dir_get(txn, dir, in);
	if (rc == 0)
		rc = nc_permission(&in->in_attr, cred, NC_MAY_READ);
	free(in);
	if (rc)
		return rc;
	*count = 0;
	*eof = true;
	if (cookie == UINT64_MAX)
		return 0;

	rc = mds_db_cursor_open(txn, MDS_T_DIRCOOKIES, &c);
	if (rc)
		return rc;
	ns_cookie_key(dir, cookie + 1, key);
	rc = mds_db_cursor_seek(c, key, sizeof(key), &k, &kl, &v, &vl);
	while (rc == 0) {
		/* One entry past @max tells whether this page is the last. */
		rc = ns_readdir_one(k, kl, v, vl, key,
				    n < max ? &ents[n] : &extra);
		if (rc)
			break;
		if (n == max) {
			*eof = false;
			break;
		}
		n++;
		rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	}
	mds_db_cursor_close(c);
	if (rc == -NC_E_CORRUPT)
		ns_log_corrupt("dircookie", dir);
	if (rc && rc != -ENOENT)
		return rc;
	*count = n;
	return 0;
}

int mds_ns_readdir(struct mds_ns *ns, const struct nc_cred *cred,
		   const struct nc_fid *dir, uint64_t cookie, uint32_t max,
		   struct nc_dirent *ents, uint32_t *count, bool *eof)
{
	struct mds_txn *txn;
	int rc;

	if (max > NC_READDIR_MAX)
		max = NC_READDIR_MAX;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = ns_readdir_txn(txn, cred, dir, cookie, max, ents, count, eof);
	mds_db_txn_abort(txn);
	return rc;
}

int mds_ns_readlink(struct mds_ns *ns, const struct nc_fid *fid, char *buf,
		    size_t cap)
{
	struct ns_inode *in;
	size_t len;
	int rc;

	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = ns_read_inode(ns, fid, in);
	if (rc)
		goto out_free;
	if (!S_ISLNK(in->in_attr.a_mode)) {
		rc = -EINVAL;
		goto out_free;
	}
	len = strlen(in->in_target);
	memcpy(buf, in->in_target, len < cap ? len : cap);
	rc = (int)len;
out_free:
	free(in);
	return rc;
}

int mds_ns_open_check(struct mds_ns *ns, const struct nc_cred *cred,
		      const struct nc_fid *fid, uint32_t flags,
		      struct nc_attr *attr, struct nc_layout *layout, uint8_t **inl)
{
	unsigned int want = 0;
	struct ns_inode *in;
	int rc;

	if (inl)
		*inl = NULL;
	if (flags & ~(NC_OPEN_READ | NC_OPEN_WRITE | NC_OPEN_TRUNC))
		return -EINVAL;
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = ns_read_inode(ns, fid, in);
	if (rc)
		goto out_free;
	if (S_ISLNK(in->in_attr.a_mode)) {
		rc = -ELOOP;
		goto out_free;
	}
	if (ns_is_dir(in) && (flags & (NC_OPEN_WRITE | NC_OPEN_TRUNC))) {
		rc = -EISDIR;
		goto out_free;
	}
	if (flags & NC_OPEN_READ)
		want |= NC_MAY_READ;
	if (flags & (NC_OPEN_WRITE | NC_OPEN_TRUNC))
		want |= NC_MAY_WRITE;
	rc = nc_permission(&in->in_attr, cred, want);
	if (rc)
		goto out_free;
	if (want & NC_MAY_WRITE)
		ns_write_note(ns, fid);
	if (attr)
		*attr = in->in_attr;
	if (layout)
		rc = ns_layout_join_ro(ns, in, layout);
	if (!rc && inl && ns_is_reg(in) && (in->in_layout.l_flags & NC_LAYOUT_INLINE)) {
		*inl = malloc(in->in_attr.a_size ? (size_t)in->in_attr.a_size : 1);
		if (*inl)
			memcpy(*inl, in->in_inline, (size_t)in->in_attr.a_size);
		else
			rc = -ENOMEM;
	}
out_free:
	free(in);
	return rc;
}

/* ---- size updates ---- */

int mds_ns_size_update(struct mds_ns *ns, const struct nc_fid *fid,
		       uint64_t size, uint32_t flags, struct nc_attr *attr)
{
	struct mds_txn *txn;
	struct ns_inode *in;
	bool dirty = false;
	int rc;

	if (flags & ~NC_SIZE_MTIME)
		return -EINVAL;
	ns_write_note(ns, fid);
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = ns_inode_get(txn, fid, in);
	if (rc)
		goto out_end;
	if (!ns_is_reg(in)) {
		rc = ns_is_dir(in) ? -EISDIR : -EINVAL;
		goto out_end;
	}
	if ((in->in_layout.l_flags & NC_LAYOUT_SMALL) && size > in->in_attr.a_size) {
		rc = -NC_E_PACKED;
		goto out_end;
	}
	if (size > in->in_attr.a_size) {
		in->in_attr.a_size = size;
		ns_set_blocks(&in->in_attr);
		dirty = true;
	}
	if (flags & NC_SIZE_MTIME) {
		ns_now(&in->in_attr.a_mtime);
		in->in_attr.a_ctime = in->in_attr.a_mtime;
		dirty = true;
	}
	if (dirty)
		rc = ns_inode_put(txn, in, false);
out_end:
	rc = ns_end(txn, rc);
	if (rc == 0 && attr)
		*attr = in->in_attr;
out_free:
	free(in);
	return rc;
}

int mds_ns_batch_begin(struct mds_ns *ns)
{
	return mds_db_batch_begin(ns->ns_db);
}

int mds_ns_batch_end(struct mds_ns *ns)
{
	return mds_db_batch_end(ns->ns_db);
}
