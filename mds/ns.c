/* SPDX-License-Identifier: MIT */
/*
 * The MDS namespace over mds/db.h.
 *
 * Records (every value starts with a u32 record version, NS_REC_VERSION):
 *   CONFIG     "fsname" -> str; "uuid" -> 16 bytes; "next_oid" -> u64;
 *              "default_layout" -> layout template; "destroy_next" -> u64
 *   INODES     fid (16 BE) -> attr, then by type: directory: parent fid,
 *              next cookie, template flag [+ template]; regular file:
 *              layout; symlink: target
 *   DIRENTS    parent fid + name -> child fid, S_IFMT bits, cookie
 *   DIRCOOKIES parent fid + cookie (BE) -> child fid, S_IFMT bits, name
 *   XATTRS     fid + name -> value bytes
 *   OSTS       index (BE u32) -> uuid, address
 *   DESTROY    id (BE u64) -> fid, layout
 *
 * Each public function runs in one transaction of its own; writers are
 * serialised by LMDB, so the functions are safe to call from many threads.
 * Decoding is defensive: a record that does not parse is -NC_E_CORRUPT.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <uuid/uuid.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/types.h"
#include "common/wire.h"
#include "mds/db.h"
#include "mds/ns.h"

#define NS_REC_VERSION 1u
#define NS_REC_MAX 8192         /* largest record: an inode with a symlink */
#define NS_FID_KEY 16
#define NS_DIRENT_KEY_MAX (NS_FID_KEY + NC_NAME_MAX)
#define NS_XATTR_KEY_MAX (NS_FID_KEY + NC_XATTR_NAME_MAX)
#define NS_LINK_MAX 65000u      /* as ext4 */
#define NS_MAX_DEPTH (1u << 20) /* bounds the parent walk on a corrupt tree */
#define NS_MAY_READ 4u
#define NS_MAY_WRITE 2u
#define NS_MAY_EXEC 1u
#define NS_MAX_EC_K 16u
#define NS_MAX_EC_M 4u

#define NS_CONF_FSNAME "fsname"
#define NS_CONF_UUID "uuid"
#define NS_CONF_NEXT_OID "next_oid"
#define NS_CONF_LAYOUT "default_layout"
#define NS_CONF_DESTROY "destroy_next"

struct mds_ns {
	struct mds_db *ns_db;
	char *ns_dir;
	char ns_fsname[NC_FSNAME_MAX + 1];
	uint8_t ns_uuid[16];
	atomic_uint ns_rr;      /* round-robin start for new layouts */
};

/* One inode as decoded from its record. */
struct ns_inode {
	struct nc_attr in_attr;
	struct nc_fid in_parent;        /* directories */
	uint64_t in_next_cookie;        /* directories */
	uint32_t in_has_tmpl;           /* directories: in_layout is set */
	struct nc_layout in_layout;     /* file layout or directory template */
	char in_target[NC_SYMLINK_MAX + 1];
};

struct ns_dirent {
	struct nc_fid d_fid;
	uint32_t d_mode;        /* S_IFMT bits */
	uint64_t d_cookie;
};

/* ---- keys ---- */

static void ns_put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static uint64_t ns_get_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void ns_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t ns_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Big-endian so that LMDB's byte order is FID order. */
static void ns_fid_key(const struct nc_fid *f, uint8_t k[NS_FID_KEY])
{
	ns_put_be64(k, f->f_seq);
	ns_put_be64(k + 8, f->f_oid);
}

static size_t ns_name_key(const struct nc_fid *f, const char *name,
			  uint8_t *k)
{
	size_t n = strlen(name);

	ns_fid_key(f, k);
	memcpy(k + NS_FID_KEY, name, n);
	return NS_FID_KEY + n;
}

static void ns_cookie_key(const struct nc_fid *f, uint64_t cookie,
			  uint8_t k[NS_FID_KEY + 8])
{
	ns_fid_key(f, k);
	ns_put_be64(k + NS_FID_KEY, cookie);
}

/* ---- record codecs ---- */

static void ns_xdr_fail(struct nc_xdr *x)
{
	if (!x->x_err)
		x->x_err = -NC_E_PROTO;
}

static void ns_xdr_version(struct nc_xdr *x)
{
	uint32_t v = NS_REC_VERSION;

	nc_xdr_u32(x, &v);
	if (x->x_op == NC_XDR_DECODE && v != NS_REC_VERSION)
		ns_xdr_fail(x);
}

static void ns_xdr_fid(struct nc_xdr *x, struct nc_fid *f)
{
	nc_xdr_u64(x, &f->f_seq);
	nc_xdr_u64(x, &f->f_oid);
}

static void ns_xdr_time(struct nc_xdr *x, struct nc_timespec *t)
{
	nc_xdr_i64(x, &t->t_sec);
	nc_xdr_u32(x, &t->t_nsec);
	if (x->x_op == NC_XDR_DECODE && t->t_nsec >= 1000000000u)
		ns_xdr_fail(x);
}

static void ns_xdr_attr(struct nc_xdr *x, struct nc_attr *a)
{
	ns_xdr_fid(x, &a->a_fid);
	nc_xdr_u32(x, &a->a_mode);
	nc_xdr_u32(x, &a->a_uid);
	nc_xdr_u32(x, &a->a_gid);
	nc_xdr_u32(x, &a->a_nlink);
	nc_xdr_u64(x, &a->a_size);
	nc_xdr_u64(x, &a->a_blocks);
	nc_xdr_u32(x, &a->a_rdev);
	nc_xdr_u32(x, &a->a_flags);
	ns_xdr_time(x, &a->a_atime);
	ns_xdr_time(x, &a->a_mtime);
	ns_xdr_time(x, &a->a_ctime);
}

/* The stored layout: shards only for non-templates (a template's stripe
 * count may be UINT16_MAX, "all OSTs"). */
static void ns_xdr_layout(struct nc_xdr *x, struct nc_layout *l)
{
	uint32_t n;

	nc_xdr_u32(x, &l->l_stripe_size);
	nc_xdr_u16(x, &l->l_stripe_count);
	nc_xdr_u8(x, &l->l_k);
	nc_xdr_u8(x, &l->l_m);
	nc_xdr_u32(x, &l->l_flags);
	nc_xdr_u32(x, &l->l_first_ost);
	nc_xdr_u32(x, &l->l_gen);
	if (x->x_err || (l->l_flags & NC_LAYOUT_TEMPLATE))
		return;
	n = l->l_stripe_count;
	if (n > NC_MAX_STRIPES) {
		ns_xdr_fail(x);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		nc_xdr_u32(x, &l->l_shards[i].ls_ost);
		nc_xdr_u32(x, &l->l_shards[i].ls_flags);
	}
}

static void ns_xdr_inode(struct nc_xdr *x, struct ns_inode *in)
{
	ns_xdr_version(x);
	ns_xdr_attr(x, &in->in_attr);
	if (x->x_err)
		return;
	switch (in->in_attr.a_mode & S_IFMT) {
	case S_IFDIR:
		ns_xdr_fid(x, &in->in_parent);
		nc_xdr_u64(x, &in->in_next_cookie);
		nc_xdr_u32(x, &in->in_has_tmpl);
		if (in->in_has_tmpl > 1)
			ns_xdr_fail(x);
		if (in->in_has_tmpl && !x->x_err) {
			ns_xdr_layout(x, &in->in_layout);
			if (!(in->in_layout.l_flags & NC_LAYOUT_TEMPLATE))
				ns_xdr_fail(x);
		}
		break;
	case S_IFREG:
		ns_xdr_layout(x, &in->in_layout);
		if (in->in_layout.l_flags & NC_LAYOUT_TEMPLATE)
			ns_xdr_fail(x);
		break;
	case S_IFLNK:
		nc_xdr_str(x, in->in_target, NC_SYMLINK_MAX);
		break;
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
	case S_IFSOCK:
		break;
	default:
		ns_xdr_fail(x);
		break;
	}
}

static void ns_log_corrupt(const char *what, const struct nc_fid *fid)
{
	nc_error("mds", "corrupt %s record for " NC_FID_FMT, what,
		 NC_FID_ARGS(fid));
}

/* ---- small helpers ---- */

static void ns_now(struct nc_timespec *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	t->t_sec = ts.tv_sec;
	t->t_nsec = (uint32_t)ts.tv_nsec;
}

static int ns_end(struct mds_txn *txn, int rc)
{
	if (rc) {
		mds_db_txn_abort(txn);
		return rc;
	}
	return mds_db_txn_commit(txn);
}

static int ns_name_check(const char *name)
{
	size_t n;

	if (!name || !name[0])
		return -EINVAL;
	n = strnlen(name, NC_NAME_MAX + 1);
	if (n > NC_NAME_MAX)
		return -ENAMETOOLONG;
	if (!strcmp(name, ".") || !strcmp(name, "..") || memchr(name, '/', n))
		return -EINVAL;
	return 0;
}

static bool ns_is_dir(const struct ns_inode *in)
{
	return S_ISDIR(in->in_attr.a_mode);
}

static bool ns_is_reg(const struct ns_inode *in)
{
	return S_ISREG(in->in_attr.a_mode);
}

static bool ns_in_group(const struct nc_cred *c, uint32_t gid)
{
	uint32_t n = c->c_ngroups;

	if (n > NC_MAX_GROUPS)
		n = NC_MAX_GROUPS;

	if (c->c_gid == gid)
		return true;
	for (uint32_t i = 0; i < n; i++)
		if (c->c_groups[i] == gid)
			return true;
	return false;
}

static bool ns_is_owner(const struct nc_attr *a, const struct nc_cred *c)
{
	return c->c_uid == 0 || c->c_uid == a->a_uid;
}

/*
 * generic_permission() as Linux does it: the owner class, else the group
 * class, else others; root passes read/write always and search on
 * directories, but executes a file only when some x bit is set.
 */
static int ns_permission(const struct nc_attr *a, const struct nc_cred *c,
			 unsigned int want)
{
	unsigned int bits;

	if (c->c_uid == 0) {
		if (!(want & NS_MAY_EXEC) || S_ISDIR(a->a_mode) ||
		    (a->a_mode & 0111))
			return 0;
		return -EACCES;
	}
	if (c->c_uid == a->a_uid)
		bits = (a->a_mode >> 6) & 7;
	else if (ns_in_group(c, a->a_gid))
		bits = (a->a_mode >> 3) & 7;
	else
		bits = a->a_mode & 7;
	return (bits & want) == want ? 0 : -EACCES;
}

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

static void ns_set_blocks(struct nc_attr *a)
{
	a->a_blocks = (a->a_size + 511) / 512;
}

/* ---- inode, dirent and config records ---- */

static int ns_inode_get(struct mds_txn *txn, const struct nc_fid *fid,
			struct ns_inode *in)
{
	uint8_t key[NS_FID_KEY];
	struct nc_xdr x;
	const void *val;
	size_t vlen;
	int rc;

	ns_fid_key(fid, key);
	rc = mds_db_get(txn, MDS_T_INODES, key, sizeof(key), &val, &vlen);
	if (rc)
		return rc;
	memset(in, 0, sizeof(*in));
	nc_xdr_init_decode(&x, val, vlen);
	ns_xdr_inode(&x, in);
	if (x.x_err || nc_xdr_finish(&x) ||
	    !nc_fid_eq(&in->in_attr.a_fid, fid)) {
		ns_log_corrupt("inode", fid);
		return -NC_E_CORRUPT;
	}
	return 0;
}

/* The inode a directory entry names must exist: a dangling entry is a
 * damaged MDT, not a missing file. */
static int ns_inode_get_child(struct mds_txn *txn, const struct nc_fid *fid,
			      struct ns_inode *in)
{
	int rc = ns_inode_get(txn, fid, in);

	if (rc == -ENOENT) {
		ns_log_corrupt("dangling dirent", fid);
		return -NC_E_CORRUPT;
	}
	return rc;
}

static int ns_inode_put(struct mds_txn *txn, struct ns_inode *in, bool noover)
{
	uint8_t key[NS_FID_KEY];
	uint8_t buf[NS_REC_MAX];
	struct nc_xdr x;

	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_inode(&x, in);
	if (x.x_err)
		return x.x_err;
	ns_fid_key(&in->in_attr.a_fid, key);
	return mds_db_put(txn, MDS_T_INODES, key, sizeof(key), buf, x.x_pos,
			  noover);
}

/* A directory that must exist: -ENOENT / -ENOTDIR otherwise. */
static int ns_dir_get(struct mds_txn *txn, const struct nc_fid *fid,
		      struct ns_inode *in)
{
	int rc = ns_inode_get(txn, fid, in);

	if (rc)
		return rc;
	return ns_is_dir(in) ? 0 : -ENOTDIR;
}

static int ns_dirent_get(struct mds_txn *txn, const struct nc_fid *parent,
			 const char *name, struct ns_dirent *d)
{
	uint8_t key[NS_DIRENT_KEY_MAX];
	struct nc_xdr x;
	const void *val;
	size_t klen, vlen;
	int rc;

	klen = ns_name_key(parent, name, key);
	rc = mds_db_get(txn, MDS_T_DIRENTS, key, klen, &val, &vlen);
	if (rc)
		return rc;
	nc_xdr_init_decode(&x, val, vlen);
	ns_xdr_version(&x);
	ns_xdr_fid(&x, &d->d_fid);
	nc_xdr_u32(&x, &d->d_mode);
	nc_xdr_u64(&x, &d->d_cookie);
	if (x.x_err || nc_xdr_finish(&x)) {
		ns_log_corrupt("dirent", parent);
		return -NC_E_CORRUPT;
	}
	return 0;
}

/* Writes both records of one entry: the name record and the cookie
 * record that readdir walks. */
static int ns_dirent_put(struct mds_txn *txn, const struct nc_fid *parent,
			 const char *name, const struct ns_dirent *d,
			 bool noover)
{
	uint8_t key[NS_DIRENT_KEY_MAX];
	uint8_t ckey[NS_FID_KEY + 8];
	uint8_t buf[64 + NC_NAME_MAX];
	struct ns_dirent e = *d;
	char nbuf[NC_NAME_MAX + 1];
	struct nc_xdr x;
	size_t klen;
	int rc;

	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	ns_xdr_fid(&x, &e.d_fid);
	nc_xdr_u32(&x, &e.d_mode);
	nc_xdr_u64(&x, &e.d_cookie);
	if (x.x_err)
		return x.x_err;
	klen = ns_name_key(parent, name, key);
	rc = mds_db_put(txn, MDS_T_DIRENTS, key, klen, buf, x.x_pos, noover);
	if (rc)
		return rc;

	snprintf(nbuf, sizeof(nbuf), "%s", name);
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	ns_xdr_fid(&x, &e.d_fid);
	nc_xdr_u32(&x, &e.d_mode);
	nc_xdr_str(&x, nbuf, NC_NAME_MAX);
	if (x.x_err)
		return x.x_err;
	ns_cookie_key(parent, d->d_cookie, ckey);
	return mds_db_put(txn, MDS_T_DIRCOOKIES, ckey, sizeof(ckey), buf,
			  x.x_pos, false);
}

/* Adds a new entry with the directory's next cookie; the caller stores
 * the directory inode afterwards. */
static int ns_dirent_add(struct mds_txn *txn, struct ns_inode *dir,
			 const char *name, const struct nc_fid *fid,
			 uint32_t mode)
{
	struct ns_dirent d = {
		.d_fid = *fid,
		.d_mode = mode & S_IFMT,
		.d_cookie = dir->in_next_cookie,
	};

	if (dir->in_next_cookie == 0 || dir->in_next_cookie == UINT64_MAX)
		return -ENOSPC;
	dir->in_next_cookie++;
	return ns_dirent_put(txn, &dir->in_attr.a_fid, name, &d, true);
}

static int ns_dirent_del(struct mds_txn *txn, const struct nc_fid *parent,
			 const char *name, const struct ns_dirent *d)
{
	uint8_t key[NS_DIRENT_KEY_MAX];
	uint8_t ckey[NS_FID_KEY + 8];
	size_t klen;
	int rc;

	klen = ns_name_key(parent, name, key);
	rc = mds_db_del(txn, MDS_T_DIRENTS, key, klen);
	if (rc)
		return rc;
	ns_cookie_key(parent, d->d_cookie, ckey);
	rc = mds_db_del(txn, MDS_T_DIRCOOKIES, ckey, sizeof(ckey));
	if (rc == -ENOENT) {
		ns_log_corrupt("dircookie", parent);
		return -NC_E_CORRUPT;
	}
	return rc;
}

/* True when some key of @t starts with @prefix (the first one is returned
 * in @key, which holds @cap bytes). */
static int ns_prefix_first(struct mds_txn *txn, enum mds_table t,
			   const uint8_t *prefix, size_t plen, uint8_t *key,
			   size_t cap, size_t *klen)
{
	struct mds_cursor *c;
	const void *k, *v;
	size_t kl, vl;
	int rc;

	rc = mds_db_cursor_open(txn, t, &c);
	if (rc)
		return rc;
	rc = mds_db_cursor_seek(c, prefix, plen, &k, &kl, &v, &vl);
	if (rc == 0 && (kl < plen || memcmp(k, prefix, plen)))
		rc = -ENOENT;
	if (rc == 0 && key) {
		if (kl > cap) {
			rc = -NC_E_CORRUPT;
		} else {
			memcpy(key, k, kl);
			*klen = kl;
		}
	}
	mds_db_cursor_close(c);
	return rc;
}

static int ns_dir_is_empty(struct mds_txn *txn, const struct nc_fid *dir,
			   bool *empty)
{
	uint8_t prefix[NS_FID_KEY];
	int rc;

	ns_fid_key(dir, prefix);
	rc = ns_prefix_first(txn, MDS_T_DIRENTS, prefix, sizeof(prefix), NULL,
			     0, NULL);
	if (rc == -ENOENT) {
		*empty = true;
		return 0;
	}
	*empty = false;
	return rc;
}

static int ns_conf_get(struct mds_txn *txn, const char *name,
		       struct nc_xdr *x)
{
	const void *val;
	size_t vlen;
	int rc;

	rc = mds_db_get(txn, MDS_T_CONFIG, name, strlen(name), &val, &vlen);
	if (rc)
		return rc;
	nc_xdr_init_decode(x, val, vlen);
	ns_xdr_version(x);
	return 0;
}

static int ns_conf_done(struct nc_xdr *x, const char *name)
{
	if (x->x_err || nc_xdr_finish(x)) {
		nc_error("mds", "corrupt config record %s", name);
		return -NC_E_CORRUPT;
	}
	return 0;
}

static int ns_conf_put(struct mds_txn *txn, const char *name,
		       struct nc_xdr *x)
{
	if (x->x_err)
		return x->x_err;
	return mds_db_put(txn, MDS_T_CONFIG, name, strlen(name), x->x_buf,
			  x->x_pos, false);
}

static int ns_conf_get_u64(struct mds_txn *txn, const char *name,
			   uint64_t *v)
{
	struct nc_xdr x;
	int rc;

	rc = ns_conf_get(txn, name, &x);
	if (rc == -ENOENT) {
		nc_error("mds", "config record %s missing", name);
		return -NC_E_CORRUPT;
	}
	if (rc)
		return rc;
	nc_xdr_u64(&x, v);
	return ns_conf_done(&x, name);
}

static int ns_conf_put_u64(struct mds_txn *txn, const char *name, uint64_t v)
{
	uint8_t buf[16];
	struct nc_xdr x;

	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	nc_xdr_u64(&x, &v);
	return ns_conf_put(txn, name, &x);
}

static int ns_conf_get_layout(struct mds_txn *txn, struct nc_layout *l)
{
	struct nc_xdr x;
	int rc;

	memset(l, 0, sizeof(*l));
	rc = ns_conf_get(txn, NS_CONF_LAYOUT, &x);
	if (rc == -ENOENT) {
		nc_error("mds", "config record %s missing", NS_CONF_LAYOUT);
		return -NC_E_CORRUPT;
	}
	if (rc)
		return rc;
	ns_xdr_layout(&x, l);
	if (!(l->l_flags & NC_LAYOUT_TEMPLATE))
		ns_xdr_fail(&x);
	return ns_conf_done(&x, NS_CONF_LAYOUT);
}

static int ns_conf_put_layout(struct mds_txn *txn, const struct nc_layout *l)
{
	struct nc_layout t = *l;
	uint8_t buf[64];
	struct nc_xdr x;

	t.l_flags |= NC_LAYOUT_TEMPLATE;
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	ns_xdr_layout(&x, &t);
	return ns_conf_put(txn, NS_CONF_LAYOUT, &x);
}

/* FIDs come from a counter kept in the same transaction as the create, so
 * a FID is never handed out twice, even across a crash. */
static int ns_fid_alloc(struct mds_txn *txn, struct nc_fid *fid)
{
	uint64_t oid;
	int rc;

	rc = ns_conf_get_u64(txn, NS_CONF_NEXT_OID, &oid);
	if (rc)
		return rc;
	if (oid <= NC_ROOT_FID_OID || oid == UINT64_MAX)
		return -ENOSPC;
	rc = ns_conf_put_u64(txn, NS_CONF_NEXT_OID, oid + 1);
	if (rc)
		return rc;
	fid->f_seq = 1;
	fid->f_oid = oid;
	return 0;
}

static int ns_destroy_queue(struct mds_txn *txn, const struct nc_fid *fid,
			    const struct nc_layout *layout)
{
	struct nc_layout l = *layout;
	struct nc_fid f = *fid;
	uint8_t buf[64 + NC_MAX_STRIPES * 8];
	uint8_t key[8];
	struct nc_xdr x;
	uint64_t id;
	int rc;

	rc = ns_conf_get_u64(txn, NS_CONF_DESTROY, &id);
	if (rc)
		return rc;
	if (id == 0 || id == UINT64_MAX)
		return -ENOSPC;
	rc = ns_conf_put_u64(txn, NS_CONF_DESTROY, id + 1);
	if (rc)
		return rc;
	l.l_flags &= ~NC_LAYOUT_TEMPLATE;
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	ns_xdr_fid(&x, &f);
	ns_xdr_layout(&x, &l);
	if (x.x_err)
		return x.x_err;
	ns_put_be64(key, id);
	return mds_db_put(txn, MDS_T_DESTROY, key, sizeof(key), buf, x.x_pos,
			  true);
}

static int ns_xattrs_free(struct mds_txn *txn, const struct nc_fid *fid)
{
	uint8_t prefix[NS_FID_KEY];
	uint8_t key[NS_XATTR_KEY_MAX];
	size_t klen;
	int rc;

	ns_fid_key(fid, prefix);
	/* Seek afresh after each delete rather than deleting under an open
	 * cursor; an inode has few xattrs. */
	for (;;) {
		rc = ns_prefix_first(txn, MDS_T_XATTRS, prefix, sizeof(prefix),
				     key, sizeof(key), &klen);
		if (rc == -ENOENT)
			return 0;
		if (rc)
			return rc;
		rc = mds_db_del(txn, MDS_T_XATTRS, key, klen);
		if (rc)
			return rc;
	}
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

/* ---- layouts ---- */

static bool ns_stripe_size_ok(uint32_t s)
{
	return s == 0 || (s % 4096 == 0 && s >= NC_MIN_STRIPE_SIZE &&
			  s <= NC_MAX_STRIPE_SIZE);
}

/* A template from a user (setlayout): zero fields inherit. */
static int ns_tmpl_check(const struct nc_layout *t)
{
	if (!ns_stripe_size_ok(t->l_stripe_size))
		return -EINVAL;
	if (t->l_m > NS_MAX_EC_M || t->l_k > NS_MAX_EC_K)
		return -EINVAL;
	if (t->l_m > 0 && t->l_stripe_count != 0 &&
	    t->l_stripe_count <= NC_MAX_STRIPES &&
	    (uint32_t)t->l_k + t->l_m > t->l_stripe_count)
		return -EINVAL;
	return 0;
}

/*
 * Merges @tmpl (NULL: none) over the filesystem default @dflt and picks
 * OSTs from @osts.  Zero fields inherit; a stripe count of UINT16_MAX or
 * more than the usable OSTs means all of them.
 */
static int ns_layout_alloc(struct mds_ns *ns, const struct nc_layout *dflt,
			   const struct nc_layout *tmpl,
			   const struct mds_ost_set *osts,
			   struct nc_layout *out)
{
	static const struct nc_layout none = { .l_first_ost = NC_OST_ANY };
	const struct nc_layout *t = tmpl ? tmpl : &none;
	uint32_t navail, size, count, k, m, first, start = 0;
	bool count_inherited = false;

	navail = osts ? osts->os_count : 0;
	if (navail > NC_MAX_OSTS)
		navail = NC_MAX_OSTS;
	if (navail == 0)
		return -NC_E_NOOST;

	size = t->l_stripe_size ? t->l_stripe_size : dflt->l_stripe_size;
	if (!size)
		size = NC_DEFAULT_STRIPE_SIZE;
	count = t->l_stripe_count;
	if (!count) {
		count_inherited = true;
		count = dflt->l_stripe_count ? dflt->l_stripe_count :
					       NC_DEFAULT_STRIPE_COUNT;
	}
	m = t->l_m ? t->l_m : dflt->l_m;
	k = t->l_k ? t->l_k : dflt->l_k;
	first = t->l_first_ost != NC_OST_ANY ? t->l_first_ost :
					       dflt->l_first_ost;
	if (!ns_stripe_size_ok(size) || m > NS_MAX_EC_M || k > NS_MAX_EC_K)
		return -NC_E_LAYOUT;

	/* An erasure-coded template with an inherited count still needs a
	 * whole row of distinct OSTs. */
	if (m > 0 && count_inherited && count < k + m)
		count = k + m;
	if (count == UINT16_MAX || count > navail)
		count = navail;
	if (count > NC_MAX_STRIPES)
		count = NC_MAX_STRIPES;
	if (m == 0) {
		k = count;
	} else {
		if (k == 0)
			k = count > m ? count - m : 0;
		if (k > NS_MAX_EC_K)
			k = NS_MAX_EC_K;
		if (k == 0 || k + m > count)
			return -NC_E_LAYOUT;
	}

	if (first != NC_OST_ANY) {
		for (start = 0; start < navail; start++)
			if (osts->os_index[start] == first)
				break;
	}
	if (first == NC_OST_ANY || start == navail)
		start = atomic_fetch_add(&ns->ns_rr, 1) % navail;

	memset(out, 0, sizeof(*out));
	out->l_stripe_size = size;
	out->l_stripe_count = (uint16_t)count;
	out->l_k = (uint8_t)k;
	out->l_m = (uint8_t)m;
	out->l_gen = 1;
	for (uint32_t i = 0; i < count; i++)
		out->l_shards[i].ls_ost = osts->os_index[(start + i) % navail];
	out->l_first_ost = out->l_shards[0].ls_ost;
	return 0;
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
	rc = ns_permission(&in->in_attr, cred, NS_MAY_EXEC);
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
		rc = ns_permission(a, c, NS_MAY_WRITE);
		if (rc)
			return rc;
	}
	if ((v & NC_SA_UID) && c->c_uid != 0 &&
	    (c->c_uid != a->a_uid || sa->sa_uid != a->a_uid))
		return -EPERM;
	if ((v & NC_SA_GID) && c->c_uid != 0 &&
	    (c->c_uid != a->a_uid ||
	     (sa->sa_gid != a->a_gid && !ns_in_group(c, sa->sa_gid))))
		return -EPERM;
	if ((v & NC_SA_MODE) && !ns_is_owner(a, c))
		return -EPERM;
	if ((v & (NC_SA_ATIME | NC_SA_MTIME)) && !ns_is_owner(a, c))
		return -EPERM;
	if ((v & (NC_SA_ATIME_NOW | NC_SA_MTIME_NOW)) && !ns_is_owner(a, c) &&
	    ns_permission(a, c, NS_MAY_WRITE))
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
		if (c->c_uid != 0 && !ns_in_group(c, gid))
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
	ns_now(&now);
	ns_setattr_apply(in, sa, &now);
	rc = ns_inode_put(txn, in, false);
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
	rc = ns_permission(&p->in_attr, cred, NS_MAY_EXEC);
	if (rc)
		return rc;
	rc = ns_dirent_get(txn, &cq->cq_parent, cq->cq_name, &d);
	if (rc == 0)
		return ns_create_existing(txn, cq, type, &d, in);
	if (rc != -ENOENT)
		return rc;
	rc = ns_permission(&p->in_attr, cred, NS_MAY_WRITE | NS_MAY_EXEC);
	if (rc)
		return rc;
	if (type == S_IFDIR && p->in_attr.a_nlink >= NS_LINK_MAX)
		return -EMLINK;

	memset(in, 0, sizeof(*in));
	rc = ns_fid_alloc(txn, &in->in_attr.a_fid);
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
	    cred->c_uid != 0 && !ns_in_group(cred, in->in_attr.a_gid))
		in->in_attr.a_mode &= ~(uint32_t)S_ISGID;
	in->in_attr.a_nlink = type == S_IFDIR ? 2 : 1;
	if (type == S_IFCHR || type == S_IFBLK)
		in->in_attr.a_rdev = cq->cq_rdev;
	in->in_attr.a_atime = now;
	in->in_attr.a_mtime = now;
	in->in_attr.a_ctime = now;

	switch (type) {
	case S_IFREG:
		rc = ns_conf_get_layout(txn, &dflt);
		if (rc)
			return rc;
		rc = ns_layout_alloc(ns, &dflt,
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
	return ns_inode_put(txn, p, false);
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
	rc = ns_end(txn, ns_create_txn(ns, txn, cq, osts, cc));
	if (rc)
		goto out_free;
	if (attr)
		*attr = cc->cc_child.in_attr;
	if (layout) {
		if (ns_is_reg(&cc->cc_child)) {
			*layout = cc->cc_child.in_layout;
		} else {
			memset(layout, 0, sizeof(*layout));
			layout->l_first_ost = NC_OST_ANY;
		}
	}
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
	rc = ns_permission(&p->in_attr, cred, NS_MAY_EXEC);
	if (rc)
		return rc;
	rc = ns_dirent_get(txn, newparent, newname, &d);
	if (rc == 0)
		return -EEXIST;
	if (rc != -ENOENT)
		return rc;
	rc = ns_permission(&p->in_attr, cred, NS_MAY_WRITE | NS_MAY_EXEC);
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
	rc = ns_end(txn, ns_link_txn(txn, cred, fid, newparent, newname, cc));
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
	rc = ns_permission(&p->in_attr, cred, NS_MAY_EXEC);
	if (rc)
		return rc;
	rc = ns_dirent_get(txn, parent, name, &d);
	if (rc)
		return rc;
	rc = ns_permission(&p->in_attr, cred, NS_MAY_WRITE | NS_MAY_EXEC);
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
	rc = ns_end(txn, ns_unlink_txn(txn, cred, parent, name, dir, cc));
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
	int rc = ns_permission(&moved->in_attr, cred, NS_MAY_WRITE);

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
	rc = ns_permission(&op->in_attr, cred, NS_MAY_EXEC);
	if (rc)
		return rc;
	rc = ns_permission(&np->in_attr, cred, NS_MAY_EXEC);
	if (rc)
		return rc;
	rc = ns_dirent_get(txn, &rn->rn_oldparent, rn->rn_oldname, &sd);
	if (rc)
		return rc;
	rc = ns_dirent_get(txn, &rn->rn_newparent, rn->rn_newname, &td);
	if (rc && rc != -ENOENT)
		return rc;
	have_tgt = rc == 0;
	rc = ns_permission(&op->in_attr, cred, NS_MAY_WRITE | NS_MAY_EXEC);
	if (rc)
		return rc;
	rc = ns_permission(&np->in_attr, cred, NS_MAY_WRITE | NS_MAY_EXEC);
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
	rc = ns_end(txn, ns_rename_txn(txn, rn, c));
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
		rc = ns_permission(&in->in_attr, cred, NS_MAY_READ);
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

static void ns_layout_out(const struct ns_inode *in, struct nc_layout *l)
{
	if (ns_is_reg(in)) {
		*l = in->in_layout;
		return;
	}
	memset(l, 0, sizeof(*l));
	l->l_first_ost = NC_OST_ANY;
}

int mds_ns_open_check(struct mds_ns *ns, const struct nc_cred *cred,
		      const struct nc_fid *fid, uint32_t flags,
		      struct nc_attr *attr, struct nc_layout *layout)
{
	unsigned int want = 0;
	struct ns_inode *in;
	int rc;

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
		want |= NS_MAY_READ;
	if (flags & (NC_OPEN_WRITE | NC_OPEN_TRUNC))
		want |= NS_MAY_WRITE;
	rc = ns_permission(&in->in_attr, cred, want);
	if (rc)
		goto out_free;
	if (attr)
		*attr = in->in_attr;
	if (layout)
		ns_layout_out(in, layout);
out_free:
	free(in);
	return rc;
}

/* ---- layouts ---- */

int mds_ns_getlayout(struct mds_ns *ns, const struct nc_fid *fid,
		     struct nc_layout *layout)
{
	struct mds_txn *txn;
	struct ns_inode *in;
	int rc;

	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		goto out_free;
	rc = ns_inode_get(txn, fid, in);
	if (rc)
		goto out_abort;
	/* A directory without a default of its own shows what its files
	 * get: the filesystem default. */
	if (ns_is_dir(in) && in->in_has_tmpl)
		*layout = in->in_layout;
	else if (ns_is_dir(in))
		rc = ns_conf_get_layout(txn, layout);
	else
		ns_layout_out(in, layout);
out_abort:
	mds_db_txn_abort(txn);
out_free:
	free(in);
	return rc;
}

static bool ns_tmpl_is_empty(const struct nc_layout *t)
{
	return !t->l_stripe_size && !t->l_stripe_count && !t->l_k && !t->l_m &&
	       t->l_first_ost == NC_OST_ANY;
}

static int ns_setlayout_txn(struct mds_ns *ns, struct mds_txn *txn,
			    const struct nc_cred *cred,
			    const struct nc_fid *fid,
			    const struct nc_layout *req,
			    const struct mds_ost_set *osts,
			    struct ns_inode *in)
{
	struct nc_layout dflt, nl;
	int rc;

	rc = ns_inode_get(txn, fid, in);
	if (rc)
		return rc;
	if (!ns_is_owner(&in->in_attr, cred))
		return -EPERM;
	if (!ns_is_dir(in) && !ns_is_reg(in))
		return -EINVAL;
	rc = ns_tmpl_check(req);
	if (rc)
		return rc;
	if (ns_is_dir(in)) {
		/* An all-default template removes the directory's own. */
		in->in_has_tmpl = !ns_tmpl_is_empty(req);
		memset(&in->in_layout, 0, sizeof(in->in_layout));
		in->in_layout.l_stripe_size = req->l_stripe_size;
		in->in_layout.l_stripe_count = req->l_stripe_count;
		in->in_layout.l_k = req->l_k;
		in->in_layout.l_m = req->l_m;
		in->in_layout.l_first_ost = req->l_first_ost;
		in->in_layout.l_flags = NC_LAYOUT_TEMPLATE;
	} else {
		if (in->in_attr.a_size > 0)
			return -EBUSY;
		rc = ns_conf_get_layout(txn, &dflt);
		if (rc)
			return rc;
		rc = ns_layout_alloc(ns, &dflt, req, osts, &nl);
		if (rc)
			return rc;
		if (in->in_layout.l_stripe_count > 0) {
			rc = ns_destroy_queue(txn, fid, &in->in_layout);
			if (rc)
				return rc;
		}
		nl.l_gen = in->in_layout.l_gen + 1;
		in->in_layout = nl;
	}
	ns_now(&in->in_attr.a_ctime);
	return ns_inode_put(txn, in, false);
}

int mds_ns_setlayout(struct mds_ns *ns, const struct nc_cred *cred,
		     const struct nc_fid *fid, const struct nc_layout *req,
		     const struct mds_ost_set *osts, struct nc_layout *out)
{
	struct mds_txn *txn;
	struct ns_inode *in;
	int rc;

	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = ns_end(txn, ns_setlayout_txn(ns, txn, cred, fid, req, osts, in));
	if (rc == 0 && out)
		*out = in->in_layout;
out_free:
	free(in);
	return rc;
}

int mds_ns_default_layout(struct mds_ns *ns, struct nc_layout *tmpl)
{
	struct mds_txn *txn;
	int rc;

	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = ns_conf_get_layout(txn, tmpl);
	mds_db_txn_abort(txn);
	return rc;
}

int mds_ns_size_update(struct mds_ns *ns, const struct nc_fid *fid,
		       uint64_t size, uint32_t flags, struct nc_attr *attr)
{
	struct mds_txn *txn;
	struct ns_inode *in;
	bool dirty = false;
	int rc;

	if (flags & ~NC_SIZE_MTIME)
		return -EINVAL;
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

/* ---- xattrs ---- */

enum ns_xattr_class { NS_XATTR_USER, NS_XATTR_TRUSTED };

static int ns_xattr_name(const char *name, enum ns_xattr_class *cls)
{
	size_t n;

	if (!name)
		return -EINVAL;
	n = strnlen(name, NC_XATTR_NAME_MAX + 1);
	if (n > NC_XATTR_NAME_MAX)
		return -ERANGE;
	if (!strncmp(name, "user.", 5))
		*cls = NS_XATTR_USER;
	else if (!strncmp(name, "trusted.", 8))
		*cls = NS_XATTR_TRUSTED;
	else
		return -EOPNOTSUPP;
	if (!strcmp(name, "user.") || !strcmp(name, "trusted."))
		return -EINVAL;
	return 0;
}

/*
 * xattr_permission() as Linux: trusted.* is root's (others read nothing
 * and may write nothing); user.* follows the mode bits and exists only on
 * regular files and directories.
 */
static int ns_xattr_access(const struct ns_inode *in,
			   const struct nc_cred *cred,
			   enum ns_xattr_class cls, bool write)
{
	if (cls == NS_XATTR_TRUSTED) {
		if (cred->c_uid != 0)
			return write ? -EPERM : -ENODATA;
		return 0;
	}
	if (!ns_is_reg(in) && !ns_is_dir(in))
		return write ? -EPERM : -ENODATA;
	return ns_permission(&in->in_attr, cred,
			     write ? NS_MAY_WRITE : NS_MAY_READ);
}

static int ns_xattr_get_val(struct mds_txn *txn, const struct nc_fid *fid,
			    const char *name, const void **val, size_t *len)
{
	uint8_t key[NS_XATTR_KEY_MAX];
	struct nc_xdr x;
	const void *v;
	size_t klen, vl;
	int rc;

	klen = ns_name_key(fid, name, key);
	rc = mds_db_get(txn, MDS_T_XATTRS, key, klen, &v, &vl);
	if (rc == -ENOENT)
		return -ENODATA;
	if (rc)
		return rc;
	nc_xdr_init_decode(&x, v, vl);
	ns_xdr_version(&x);
	if (x.x_err || vl - x.x_pos > NC_XATTR_VALUE_MAX) {
		ns_log_corrupt("xattr", fid);
		return -NC_E_CORRUPT;
	}
	*val = (const uint8_t *)v + x.x_pos;
	*len = vl - x.x_pos;
	return 0;
}

int mds_ns_xattr_get(struct mds_ns *ns, const struct nc_cred *cred,
		     const struct nc_fid *fid, const char *name, void *buf,
		     size_t cap)
{
	enum ns_xattr_class cls;
	struct mds_txn *txn;
	struct ns_inode *in;
	const void *val;
	size_t len;
	int rc;

	rc = ns_xattr_name(name, &cls);
	if (rc)
		return rc;
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		goto out_free;
	rc = ns_inode_get(txn, fid, in);
	if (rc)
		goto out_abort;
	rc = ns_xattr_access(in, cred, cls, false);
	if (rc)
		goto out_abort;
	rc = ns_xattr_get_val(txn, fid, name, &val, &len);
	if (rc)
		goto out_abort;
	if (buf && cap)
		memcpy(buf, val, len < cap ? len : cap);
	rc = (int)len;
out_abort:
	mds_db_txn_abort(txn);
out_free:
	free(in);
	return rc;
}

static int ns_xattr_set_txn(struct mds_txn *txn, const struct nc_cred *cred,
			    const struct nc_fid *fid, const char *name,
			    enum ns_xattr_class cls, const void *val,
			    size_t len, uint32_t flags, struct ns_inode *in)
{
	uint8_t key[NS_XATTR_KEY_MAX];
	const void *old;
	uint8_t *buf;
	size_t klen, olen;
	struct nc_xdr x;
	int rc;

	rc = ns_inode_get(txn, fid, in);
	if (rc)
		return rc;
	rc = ns_xattr_access(in, cred, cls, true);
	if (rc)
		return rc;
	rc = ns_xattr_get_val(txn, fid, name, &old, &olen);
	if (rc && rc != -ENODATA)
		return rc;
	if (rc == 0 && (flags & NC_XATTR_CREATE))
		return -EEXIST;
	if (rc == -ENODATA && (flags & NC_XATTR_REPLACE))
		return -ENODATA;

	buf = malloc(len + 4);
	if (!buf)
		return -ENOMEM;
	nc_xdr_init_encode(&x, buf, len + 4);
	ns_xdr_version(&x);
	if (len)
		nc_xdr_fixed(&x, (void *)val, len);
	rc = x.x_err;
	if (rc == 0) {
		klen = ns_name_key(fid, name, key);
		rc = mds_db_put(txn, MDS_T_XATTRS, key, klen, buf, x.x_pos,
				false);
	}
	free(buf);
	if (rc)
		return rc;
	ns_now(&in->in_attr.a_ctime);
	return ns_inode_put(txn, in, false);
}

int mds_ns_xattr_set(struct mds_ns *ns, const struct nc_cred *cred,
		     const struct nc_fid *fid, const char *name,
		     const void *val, size_t len, uint32_t flags)
{
	enum ns_xattr_class cls;
	struct mds_txn *txn;
	struct ns_inode *in;
	int rc;

	if (flags & ~(NC_XATTR_CREATE | NC_XATTR_REPLACE))
		return -EINVAL;
	if ((flags & NC_XATTR_CREATE) && (flags & NC_XATTR_REPLACE))
		return -EINVAL;
	if (len > NC_XATTR_VALUE_MAX)
		return -E2BIG;
	if (len && !val)
		return -EINVAL;
	rc = ns_xattr_name(name, &cls);
	if (rc)
		return rc;
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = ns_end(txn, ns_xattr_set_txn(txn, cred, fid, name, cls, val, len,
					  flags, in));
out_free:
	free(in);
	return rc;
}

static int ns_xattr_list_txn(struct mds_txn *txn, const struct nc_cred *cred,
			     const struct nc_fid *fid, char *buf, size_t cap)
{
	uint8_t prefix[NS_FID_KEY];
	struct mds_cursor *c;
	const void *k, *v;
	size_t kl, vl, total = 0;
	bool trusted;
	int rc;

	ns_fid_key(fid, prefix);
	rc = mds_db_cursor_open(txn, MDS_T_XATTRS, &c);
	if (rc)
		return rc;
	rc = mds_db_cursor_seek(c, prefix, sizeof(prefix), &k, &kl, &v, &vl);
	while (rc == 0) {
		const char *name = (const char *)k + NS_FID_KEY;
		size_t n = kl - NS_FID_KEY;

		if (kl <= NS_FID_KEY || memcmp(k, prefix, NS_FID_KEY))
			break;
		if (n > NC_XATTR_NAME_MAX || memchr(name, '\0', n)) {
			ns_log_corrupt("xattr name", fid);
			rc = -NC_E_CORRUPT;
			break;
		}
		trusted = n >= 8 && !memcmp(name, "trusted.", 8);
		/* trusted.* is invisible to others, as on Linux. */
		if (cred->c_uid == 0 || !trusted) {
			if (total + n + 1 > NC_XATTR_LIST_MAX) {
				rc = -E2BIG;
				break;
			}
			if (buf && total + n + 1 <= cap) {
				memcpy(buf + total, name, n);
				buf[total + n] = '\0';
			}
			total += n + 1;
		}
		rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	}
	mds_db_cursor_close(c);
	if (rc && rc != -ENOENT)
		return rc;
	return (int)total;
}

int mds_ns_xattr_list(struct mds_ns *ns, const struct nc_cred *cred,
		      const struct nc_fid *fid, char *buf, size_t cap)
{
	struct mds_txn *txn;
	struct ns_inode *in;
	int rc;

	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		goto out_free;
	rc = ns_inode_get(txn, fid, in);
	if (rc == 0)
		rc = ns_xattr_list_txn(txn, cred, fid, buf, cap);
	mds_db_txn_abort(txn);
out_free:
	free(in);
	return rc;
}

static int ns_xattr_del_txn(struct mds_txn *txn, const struct nc_cred *cred,
			    const struct nc_fid *fid, const char *name,
			    enum ns_xattr_class cls, struct ns_inode *in)
{
	uint8_t key[NS_XATTR_KEY_MAX];
	size_t klen;
	int rc;

	rc = ns_inode_get(txn, fid, in);
	if (rc)
		return rc;
	rc = ns_xattr_access(in, cred, cls, true);
	if (rc)
		return rc;
	klen = ns_name_key(fid, name, key);
	rc = mds_db_del(txn, MDS_T_XATTRS, key, klen);
	if (rc == -ENOENT)
		return -ENODATA;
	if (rc)
		return rc;
	ns_now(&in->in_attr.a_ctime);
	return ns_inode_put(txn, in, false);
}

int mds_ns_xattr_del(struct mds_ns *ns, const struct nc_cred *cred,
		     const struct nc_fid *fid, const char *name)
{
	enum ns_xattr_class cls;
	struct mds_txn *txn;
	struct ns_inode *in;
	int rc;

	rc = ns_xattr_name(name, &cls);
	if (rc)
		return rc;
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = ns_end(txn, ns_xattr_del_txn(txn, cred, fid, name, cls, in));
out_free:
	free(in);
	return rc;
}

/* ---- statfs ---- */

int mds_ns_statfs(struct mds_ns *ns, struct nc_statfs *st)
{
	uint64_t map_size, used, left, inodes;
	uint64_t disk_total, disk_free, disk_avail;
	struct mds_txn *txn;
	struct statvfs vfs;
	int rc;

	if (statvfs(ns->ns_dir, &vfs))
		return -errno;
	rc = mds_db_space(ns->ns_db, &map_size, &used);
	if (rc)
		return rc;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = mds_db_count(txn, MDS_T_INODES, &inodes);
	mds_db_txn_abort(txn);
	if (rc)
		return rc;

	disk_total = (uint64_t)vfs.f_blocks * vfs.f_frsize;
	disk_free = (uint64_t)vfs.f_bfree * vfs.f_frsize;
	disk_avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	left = map_size - used;
	memset(st, 0, sizeof(*st));
	st->s_total = disk_total < map_size ? disk_total : map_size;
	st->s_free = disk_free < left ? disk_free : left;
	st->s_avail = disk_avail < left ? disk_avail : left;
	/* An inode with its entry takes about 512 bytes of the map. */
	st->s_files = map_size / 512;
	st->s_ffree = st->s_files > inodes ? st->s_files - inodes : 0;
	st->s_bsize = 4096;
	st->s_namemax = NC_NAME_MAX;
	return 0;
}

/* ---- the OST table ---- */

static int ns_ost_decode(const void *k, size_t kl, const void *v, size_t vl,
			 struct nc_ost_info *o)
{
	struct nc_xdr x;

	if (kl != 4)
		return -NC_E_CORRUPT;
	memset(o, 0, sizeof(*o));
	o->o_index = ns_get_be32(k);
	o->o_state = NC_OST_DOWN;
	nc_xdr_init_decode(&x, v, vl);
	ns_xdr_version(&x);
	nc_xdr_fixed(&x, o->o_uuid, sizeof(o->o_uuid));
	nc_xdr_str(&x, o->o_addr, NC_ADDR_MAX);
	if (x.x_err || nc_xdr_finish(&x)) {
		nc_error("mds", "corrupt OST record %u", o->o_index);
		return -NC_E_CORRUPT;
	}
	return 0;
}

static int ns_ost_register_txn(struct mds_txn *txn,
			       const struct nc_ost_info *ost)
{
	uint8_t key[4], buf[32 + NC_ADDR_MAX];
	struct nc_ost_info o, cur, match;
	struct mds_cursor *c;
	const void *k, *v;
	size_t kl, vl;
	bool found = false;
	struct nc_xdr x;
	int rc;

	/* One uuid per index and one index per uuid. */
	rc = mds_db_cursor_open(txn, MDS_T_OSTS, &c);
	if (rc)
		return rc;
	rc = mds_db_cursor_seek(c, NULL, 0, &k, &kl, &v, &vl);
	while (rc == 0) {
		rc = ns_ost_decode(k, kl, v, vl, &cur);
		if (rc)
			break;
		if (cur.o_index == ost->o_index) {
			found = true;
			match = cur;
			if (memcmp(cur.o_uuid, ost->o_uuid, 16)) {
				rc = -EEXIST;
				break;
			}
		} else if (!memcmp(cur.o_uuid, ost->o_uuid, 16)) {
			rc = -EEXIST;
			break;
		}
		rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	}
	mds_db_cursor_close(c);
	if (rc && rc != -ENOENT)
		return rc;
	if (found && !strcmp(match.o_addr, ost->o_addr))
		return 0;

	o = *ost;
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	nc_xdr_fixed(&x, o.o_uuid, sizeof(o.o_uuid));
	nc_xdr_str(&x, o.o_addr, NC_ADDR_MAX);
	if (x.x_err)
		return x.x_err;
	ns_put_be32(key, ost->o_index);
	return mds_db_put(txn, MDS_T_OSTS, key, sizeof(key), buf, x.x_pos,
			  false);
}

int mds_ns_ost_register(struct mds_ns *ns, const struct nc_ost_info *ost)
{
	struct mds_txn *txn;
	size_t alen;
	int rc;

	if (ost->o_index >= NC_MAX_OSTS)
		return -EINVAL;
	alen = strnlen(ost->o_addr, sizeof(ost->o_addr));
	if (alen == 0 || alen > NC_ADDR_MAX)
		return -EINVAL;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		return rc;
	return ns_end(txn, ns_ost_register_txn(txn, ost));
}

int mds_ns_ost_list(struct mds_ns *ns, struct nc_ost_info *osts, uint32_t max,
		    uint32_t *count)
{
	struct nc_ost_info o;
	struct mds_cursor *c;
	struct mds_txn *txn;
	const void *k, *v;
	size_t kl, vl;
	uint32_t n = 0;
	int rc;

	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = mds_db_cursor_open(txn, MDS_T_OSTS, &c);
	if (rc)
		goto out_abort;
	rc = mds_db_cursor_seek(c, NULL, 0, &k, &kl, &v, &vl);
	while (rc == 0) {
		rc = ns_ost_decode(k, kl, v, vl, &o);
		if (rc)
			break;
		if (n == max) {
			rc = -ERANGE;
			break;
		}
		osts[n++] = o;
		rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	}
	mds_db_cursor_close(c);
	if (rc == -ENOENT)
		rc = 0;
	*count = n;
out_abort:
	mds_db_txn_abort(txn);
	return rc;
}

/* ---- the destroy queue ---- */

int mds_ns_destroy_next(struct mds_ns *ns, uint64_t after,
			struct mds_destroy_rec *rec)
{
	struct mds_cursor *c;
	struct mds_txn *txn;
	const void *k, *v;
	uint8_t key[8];
	struct nc_xdr x;
	size_t kl, vl;
	int rc;

	if (after == UINT64_MAX)
		return -ENOENT;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = mds_db_cursor_open(txn, MDS_T_DESTROY, &c);
	if (rc)
		goto out_abort;
	ns_put_be64(key, after + 1);
	rc = mds_db_cursor_seek(c, key, sizeof(key), &k, &kl, &v, &vl);
	if (rc)
		goto out_close;
	memset(rec, 0, sizeof(*rec));
	nc_xdr_init_decode(&x, v, vl);
	ns_xdr_version(&x);
	ns_xdr_fid(&x, &rec->dr_fid);
	ns_xdr_layout(&x, &rec->dr_layout);
	if (kl != sizeof(key) || x.x_err || nc_xdr_finish(&x)) {
		nc_error("mds", "corrupt destroy queue record");
		rc = -NC_E_CORRUPT;
		goto out_close;
	}
	rec->dr_id = ns_get_be64(k);
out_close:
	mds_db_cursor_close(c);
out_abort:
	mds_db_txn_abort(txn);
	return rc;
}

int mds_ns_destroy_done(struct mds_ns *ns, uint64_t id)
{
	struct mds_txn *txn;
	uint8_t key[8];
	int rc;

	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		return rc;
	ns_put_be64(key, id);
	return ns_end(txn, mds_db_del(txn, MDS_T_DESTROY, key, sizeof(key)));
}
