/* SPDX-License-Identifier: MIT */
/*
 * The changelog: while it is on (nacre-mds --changelog), every namespace
 * change appends a record, in the transaction that makes the change, so a
 * record exists exactly for the changes that happened.  Records are keyed
 * by a sequence number (big-endian, so they sort in order) that never goes
 * back, and stay until an administrator clears them, as Lustre's changelog
 * users do once they have consumed them.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/errors.h"
#include "common/log.h"
#include "mds/ns_int.h"

#define NS_CONF_CHANGELOG "changelog_next"

void mds_ns_changelog_enable(struct mds_ns *ns, bool on)
{
	ns->ns_changelog = on;
}

/* The next sequence number; 1 on an MDT that never recorded one. */
static int cl_next_get(struct mds_txn *txn, uint64_t *next)
{
	struct nc_xdr x;
	int rc;

	rc = ns_conf_get(txn, NS_CONF_CHANGELOG, &x);
	if (rc == -ENOENT) {
		*next = 1;
		return 0;
	}
	if (rc)
		return rc;
	nc_xdr_u64(&x, next);
	return ns_conf_done(&x, NS_CONF_CHANGELOG);
}

int ns_changelog_add(struct mds_ns *ns, struct mds_txn *txn, uint32_t type,
		     const struct nc_cred *cred, const struct nc_fid *fid,
		     const struct nc_fid *parent, const char *name,
		     const struct nc_fid *sparent, const char *sname)
{
	struct nc_changelog_rec r;
	uint8_t buf[128 + 2 * NC_NAME_MAX];
	uint8_t key[8];
	struct nc_xdr x;
	uint64_t seq;
	int rc;

	if (!ns->ns_changelog)
		return 0;
	rc = cl_next_get(txn, &seq);
	if (rc)
		return rc;
	if (seq == UINT64_MAX)
		return -ENOSPC;
	rc = ns_conf_put_u64(txn, NS_CONF_CHANGELOG, seq + 1);
	if (rc)
		return rc;
	memset(&r, 0, sizeof(r));
	r.cr_seq = seq;
	r.cr_type = type;
	r.cr_uid = cred ? cred->c_uid : 0;
	r.cr_gid = cred ? cred->c_gid : 0;
	ns_now(&r.cr_time);
	r.cr_fid = *fid;
	if (parent)
		r.cr_parent = *parent;
	if (name)
		snprintf(r.cr_name, sizeof(r.cr_name), "%s", name);
	if (sparent)
		r.cr_sparent = *sparent;
	if (sname)
		snprintf(r.cr_sname, sizeof(r.cr_sname), "%s", sname);
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	nc_xdr_changelog_rec(&x, &r);
	if (x.x_err)
		return x.x_err;
	ns_put_be64(key, seq);
	return mds_db_put(txn, MDS_T_CHANGELOG, key, sizeof(key), buf, x.x_pos, true);
}

static int cl_decode(const void *k, size_t kl, const void *v, size_t vl,
		     struct nc_changelog_rec *r)
{
	struct nc_xdr x;

	nc_xdr_init_decode(&x, v, vl);
	ns_xdr_version(&x);
	nc_xdr_changelog_rec(&x, r);
	if (kl != 8 || x.x_err || nc_xdr_finish(&x) || r->cr_seq != ns_get_be64(k)) {
		nc_error("mds", "corrupt changelog record");
		return -NC_E_CORRUPT;
	}
	return 0;
}

int mds_ns_changelog_read(struct mds_ns *ns, uint64_t after, struct nc_changelog_rec *out,
			  uint32_t max, uint32_t *count, uint64_t *last)
{
	struct mds_cursor *c;
	struct mds_txn *txn;
	const void *k, *v;
	uint8_t key[8];
	size_t kl, vl;
	uint64_t next;
	uint32_t n = 0;
	int rc;

	*count = 0;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = cl_next_get(txn, &next);
	if (rc)
		goto out_abort;
	*last = next - 1;
	if (after >= *last || max == 0)
		goto out_abort;
	rc = mds_db_cursor_open(txn, MDS_T_CHANGELOG, &c);
	if (rc)
		goto out_abort;
	ns_put_be64(key, after + 1);
	rc = mds_db_cursor_seek(c, key, sizeof(key), &k, &kl, &v, &vl);
	while (!rc && n < max) {
		rc = cl_decode(k, kl, v, vl, &out[n]);
		if (rc)
			break;
		n++;
		if (n < max)
			rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	}
	if (rc == -ENOENT)
		rc = 0;
	mds_db_cursor_close(c);
out_abort:
	mds_db_txn_abort(txn);
	*count = n;
	return rc;
}

/* Removes records up to @upto, at most a batch per transaction so a huge
 * backlog does not make one huge transaction. */
int mds_ns_changelog_clear(struct mds_ns *ns, uint64_t upto, uint64_t *cleared)
{
	enum { BATCH = 4096 };
	uint64_t done = 0;
	int rc;

	for (;;) {
		struct mds_cursor *c;
		struct mds_txn *txn;
		const void *k, *v;
		uint8_t key[8];
		size_t kl, vl;
		uint64_t seqs[BATCH];
		unsigned int n = 0;

		rc = mds_db_txn_begin(ns->ns_db, false, &txn);
		if (rc)
			break;
		rc = mds_db_cursor_open(txn, MDS_T_CHANGELOG, &c);
		if (rc) {
			mds_db_txn_abort(txn);
			break;
		}
		ns_put_be64(key, 0);
		rc = mds_db_cursor_seek(c, key, sizeof(key), &k, &kl, &v, &vl);
		while (!rc && n < BATCH && kl == 8 && ns_get_be64(k) <= upto) {
			seqs[n++] = ns_get_be64(k);
			rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
		}
		mds_db_cursor_close(c);
		if (rc && rc != -ENOENT) {
			mds_db_txn_abort(txn);
			break;
		}
		rc = 0;
		for (unsigned int i = 0; i < n && !rc; i++) {
			ns_put_be64(key, seqs[i]);
			rc = mds_db_del(txn, MDS_T_CHANGELOG, key, sizeof(key));
		}
		rc = ns_end(txn, rc);
		if (rc)
			break;
		done += n;
		if (n < BATCH)
			break;
	}
	if (cleared)
		*cleared = done;
	return rc;
}
