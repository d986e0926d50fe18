/* SPDX-License-Identifier: MIT */
/*
 * The stored records of the namespace (their layout is described in
 * mds/ns_int.h): big-endian keys, the record codecs for inodes, layouts,
 * directory entries and config values, and the helpers every mds/ns_*.c
 * file shares: clocks, transaction ends, name and permission checks, and
 * reading and writing inode, entry and config records inside a
 * transaction.  Decoding is defensive: a record that does not parse is
 * -NC_E_CORRUPT.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/errors.h"
#include "common/log.h"
#include "mds/ns_int.h"

/* ---- keys ---- */

void ns_put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

uint64_t ns_get_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

void ns_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

uint32_t ns_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Big-endian so that LMDB's byte order is FID order. */
void ns_fid_key(const struct nc_fid *f, uint8_t k[NS_FID_KEY])
{
	ns_put_be64(k, f->f_seq);
	ns_put_be64(k + 8, f->f_oid);
}

size_t ns_name_key(const struct nc_fid *f, const char *name, uint8_t *k)
{
	size_t n = strlen(name);

	ns_fid_key(f, k);
	memcpy(k + NS_FID_KEY, name, n);
	return NS_FID_KEY + n;
}

void ns_cookie_key(const struct nc_fid *f, uint64_t cookie,
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

void ns_xdr_version(struct nc_xdr *x)
{
	uint32_t v = NS_REC_VERSION;

	nc_xdr_u32(x, &v);
	if (x->x_op == NC_XDR_DECODE && v != NS_REC_VERSION)
		ns_xdr_fail(x);
}

void ns_xdr_fid(struct nc_xdr *x, struct nc_fid *f)
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
void ns_xdr_layout(struct nc_xdr *x, struct nc_layout *l)
{
	uint32_t n;

	nc_xdr_u32(x, &l->l_stripe_size);
	nc_xdr_u16(x, &l->l_stripe_count);
	nc_xdr_u8(x, &l->l_k);
	nc_xdr_u8(x, &l->l_m);
	nc_xdr_u32(x, &l->l_flags);
	nc_xdr_u32(x, &l->l_first_ost);
	nc_xdr_u32(x, &l->l_gen);
	if (x->x_err)
		return;
	if (l->l_flags & ~NC_LAYOUT_FLAGS) {
		ns_xdr_fail(x);
		return;
	}
	if (l->l_flags & NC_LAYOUT_TEMPLATE) {
		if (l->l_flags & NC_LAYOUT_PACK)
			nc_xdr_u32(x, &l->l_pack_max);
		if (l->l_flags & NC_LAYOUT_POOL)
			nc_xdr_str(x, l->l_pool, NC_POOL_NAME_MAX);
		if (l->l_flags & NC_LAYOUT_INLINE) {
			nc_xdr_u32(x, &l->l_inline_max);
			if (l->l_inline_max > NC_INLINE_MAX)
				ns_xdr_fail(x);
		}
		return;
	}
	if ((l->l_flags & NC_LAYOUT_POOL) ||
	    ((l->l_flags & NC_LAYOUT_INLINE) &&
	     ((l->l_flags & (NC_LAYOUT_PACKED | NC_LAYOUT_OBJFID)) || l->l_stripe_count))) {
		ns_xdr_fail(x);
		return;
	}
	if (l->l_flags & NC_LAYOUT_PACKED) {
		nc_xdr_u64(x, &l->l_pack_id);
		nc_xdr_u64(x, &l->l_pack_off);
		nc_xdr_u64(x, &l->l_pack_len);
	}
	if (l->l_flags & NC_LAYOUT_OBJFID) {
		if (l->l_flags & NC_LAYOUT_PACKED) {
			ns_xdr_fail(x);
			return;
		}
		ns_xdr_fid(x, &l->l_obj);
	}
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

/* An inline file's bytes follow its layout: exactly a_size of them. */
static void ns_xdr_inline(struct nc_xdr *x, struct ns_inode *in)
{
	const void *p = in->in_inline;
	uint32_t n = (uint32_t)in->in_attr.a_size;

	if (in->in_attr.a_size > NC_INLINE_MAX) {
		ns_xdr_fail(x);
		return;
	}
	nc_xdr_opaque(x, &p, &n, NC_INLINE_MAX);
	if (x->x_err || x->x_op != NC_XDR_DECODE)
		return;
	if (n != in->in_attr.a_size) {
		ns_xdr_fail(x);
		return;
	}
	memcpy(in->in_inline, p, n);
}

void ns_xdr_inode(struct nc_xdr *x, struct ns_inode *in)
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
		else if ((in->in_layout.l_flags & NC_LAYOUT_INLINE) && !x->x_err)
			ns_xdr_inline(x, in);
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

void ns_log_corrupt(const char *what, const struct nc_fid *fid)
{
	nc_error("mds", "corrupt %s record for " NC_FID_FMT, what,
		 NC_FID_ARGS(fid));
}

/* ---- small helpers ---- */

void ns_now(struct nc_timespec *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	t->t_sec = ts.tv_sec;
	t->t_nsec = (uint32_t)ts.tv_nsec;
}

int ns_end(struct mds_txn *txn, int rc)
{
	if (rc) {
		mds_db_txn_abort(txn);
		return rc;
	}
	return mds_db_txn_commit(txn);
}

int ns_name_check(const char *name)
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

bool ns_is_dir(const struct ns_inode *in)
{
	return S_ISDIR(in->in_attr.a_mode);
}

bool ns_is_reg(const struct ns_inode *in)
{
	return S_ISREG(in->in_attr.a_mode);
}

bool ns_is_owner(const struct nc_attr *a, const struct nc_cred *c)
{
	return c->c_uid == 0 || c->c_uid == a->a_uid;
}

void ns_set_blocks(struct nc_attr *a)
{
	a->a_blocks = (a->a_size + 511) / 512;
}

/* ---- inode, dirent and config records ---- */

int ns_inode_get(struct mds_txn *txn, const struct nc_fid *fid,
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
int ns_inode_get_child(struct mds_txn *txn, const struct nc_fid *fid,
		       struct ns_inode *in)
{
	int rc = ns_inode_get(txn, fid, in);

	if (rc == -ENOENT) {
		ns_log_corrupt("dangling dirent", fid);
		return -NC_E_CORRUPT;
	}
	return rc;
}

int ns_inode_put(struct mds_txn *txn, struct ns_inode *in, bool noover)
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
int ns_dir_get(struct mds_txn *txn, const struct nc_fid *fid,
	       struct ns_inode *in)
{
	int rc = ns_inode_get(txn, fid, in);

	if (rc)
		return rc;
	return ns_is_dir(in) ? 0 : -ENOTDIR;
}

int ns_dirent_get(struct mds_txn *txn, const struct nc_fid *parent,
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
int ns_dirent_put(struct mds_txn *txn, const struct nc_fid *parent,
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
int ns_dirent_add(struct mds_txn *txn, struct ns_inode *dir,
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

int ns_dirent_del(struct mds_txn *txn, const struct nc_fid *parent,
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
int ns_prefix_first(struct mds_txn *txn, enum mds_table t,
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

int ns_table_keys(struct mds_txn *txn, enum mds_table t, size_t klen, uint8_t **keys,
		  size_t *n)
{
	uint8_t *all = NULL;
	size_t cap = 0;
	struct mds_cursor *c;
	const void *k, *v;
	size_t kl, vl;
	int rc;

	*keys = NULL;
	*n = 0;
	rc = mds_db_cursor_open(txn, t, &c);
	if (rc)
		return rc;
	rc = mds_db_cursor_seek(c, NULL, 0, &k, &kl, &v, &vl);
	while (rc == 0) {
		if (kl == klen) {
			if (*n == cap) {
				uint8_t *na = realloc(all, (cap ? cap * 2 : 256) * klen);

				if (!na) {
					rc = -ENOMEM;
					break;
				}
				all = na;
				cap = cap ? cap * 2 : 256;
			}
			memcpy(all + *n * klen, k, klen);
			(*n)++;
		}
		rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	}
	mds_db_cursor_close(c);
	if (rc == -ENOENT) {
		*keys = all;
		return 0;
	}
	free(all);
	*n = 0;
	return rc;
}

int ns_dir_is_empty(struct mds_txn *txn, const struct nc_fid *dir, bool *empty)
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

int ns_conf_get(struct mds_txn *txn, const char *name, struct nc_xdr *x)
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

int ns_conf_done(struct nc_xdr *x, const char *name)
{
	if (x->x_err || nc_xdr_finish(x)) {
		nc_error("mds", "corrupt config record %s", name);
		return -NC_E_CORRUPT;
	}
	return 0;
}

int ns_conf_put(struct mds_txn *txn, const char *name, struct nc_xdr *x)
{
	if (x->x_err)
		return x->x_err;
	return mds_db_put(txn, MDS_T_CONFIG, name, strlen(name), x->x_buf,
			  x->x_pos, false);
}

/* A record that format always writes: its absence is a damaged MDT, not
 * an empty one. */
static int ns_conf_get_required(struct mds_txn *txn, const char *name,
				struct nc_xdr *x)
{
	int rc = ns_conf_get(txn, name, x);

	if (rc == -ENOENT) {
		nc_error("mds", "config record %s missing", name);
		return -NC_E_CORRUPT;
	}
	return rc;
}

int ns_conf_get_u64(struct mds_txn *txn, const char *name, uint64_t *v)
{
	struct nc_xdr x;
	int rc;

	rc = ns_conf_get_required(txn, name, &x);
	if (rc)
		return rc;
	nc_xdr_u64(&x, v);
	return ns_conf_done(&x, name);
}

int ns_conf_put_u64(struct mds_txn *txn, const char *name, uint64_t v)
{
	uint8_t buf[16];
	struct nc_xdr x;

	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	nc_xdr_u64(&x, &v);
	return ns_conf_put(txn, name, &x);
}

int ns_conf_get_layout(struct mds_txn *txn, struct nc_layout *l)
{
	struct nc_xdr x;
	int rc;

	memset(l, 0, sizeof(*l));
	rc = ns_conf_get_required(txn, NS_CONF_LAYOUT, &x);
	if (rc)
		return rc;
	ns_xdr_layout(&x, l);
	if (!(l->l_flags & NC_LAYOUT_TEMPLATE))
		ns_xdr_fail(&x);
	return ns_conf_done(&x, NS_CONF_LAYOUT);
}

int ns_conf_put_layout(struct mds_txn *txn, const struct nc_layout *l)
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
int ns_fid_alloc(struct mds_txn *txn, struct nc_fid *fid)
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
