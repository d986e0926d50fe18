/* SPDX-License-Identifier: MIT */
/*
 * Extended attributes: name classes (user.*, trusted.*), their permission
 * checks, the get, set, list and remove operations of mds/ns.h, and the
 * removal of an inode's xattrs when the inode goes.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/errors.h"
#include "mds/ns_int.h"

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
	return nc_permission(&in->in_attr, cred,
			     write ? NC_MAY_WRITE : NC_MAY_READ);
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
	rc = ns_xattr_set_txn(txn, cred, fid, name, cls, val, len, flags, in);
	if (!rc)
		rc = ns_changelog_add(ns, txn, NC_CL_XATTR, cred, fid, NULL, name, NULL, NULL);
	rc = ns_end(txn, rc);
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
	rc = ns_xattr_del_txn(txn, cred, fid, name, cls, in);
	if (!rc)
		rc = ns_changelog_add(ns, txn, NC_CL_XATTR, cred, fid, NULL, name, NULL, NULL);
	rc = ns_end(txn, rc);
out_free:
	free(in);
	return rc;
}

int ns_xattrs_free(struct mds_txn *txn, const struct nc_fid *fid)
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
