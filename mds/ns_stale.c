/* SPDX-License-Identifier: MIT */
/*
 * Finding stale shards: the erasure-coded files, then the packs, that have
 * a shard marked stale on given OSTs, for the catch-up rebuild
 * (mds/catchup.h).
 *
 * Stale marks live in the layouts of the inodes themselves (NC_SHARD_STALE
 * on a shard), not in an index of their own, so finding them is a scan of
 * the inode table.  The scan goes in slices, each in a read transaction of
 * its own that looks at a bounded number of inodes, so it never holds an
 * old snapshot (and the pages LMDB cannot reuse meanwhile) for long.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/errors.h"
#include "mds/ns_int.h"

/* Inodes looked at per read transaction. */
#define NS_STALE_SLICE 4096

bool mds_layout_is_stale_on(const struct nc_layout *l, const bool *osts)
{
	if (!l->l_m)
		return false; /* plain striping: nothing to rebuild from */
	for (uint32_t s = 0; s < l->l_stripe_count && s < NC_MAX_STRIPES; s++) {
		const struct nc_layout_shard *ls = &l->l_shards[s];

		if ((ls->ls_flags & NC_SHARD_STALE) && ls->ls_ost < NC_MAX_OSTS &&
		    osts[ls->ls_ost])
			return true;
	}
	return false;
}

int mds_ns_stale_scan(struct mds_ns *ns, const bool *osts, struct mds_stale_pos *pos,
		      struct nc_fid *out, uint32_t max, uint32_t *count)
{
	struct ns_inode *in;
	struct mds_cursor *c;
	struct mds_txn *txn;
	const void *k, *v;
	uint8_t key[NS_FID_KEY];
	size_t kl, vl;
	uint32_t n = 0, seen = 0;
	int rc;

	*count = 0;
	if (pos->sp_done)
		return 0;
	if (pos->sp_inodes_done)
		return mds_ns_pack_stale_scan(ns, osts, &pos->sp_pack_after, &pos->sp_done,
					      NS_STALE_SLICE, out, max, count);
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		goto out_free;
	rc = mds_db_cursor_open(txn, MDS_T_INODES, &c);
	if (rc)
		goto out_abort;
	ns_fid_key(&pos->sp_after, key);
	rc = mds_db_cursor_seek(c, key, sizeof(key), &k, &kl, &v, &vl);
	/* The first slice starts at the smallest key; later ones after the
	 * last key seen. */
	if (rc == 0 && pos->sp_started && kl == sizeof(key) && !memcmp(k, key, kl))
		rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	while (rc == 0 && n < max && seen < NS_STALE_SLICE) {
		struct nc_fid fid;

		if (kl != NS_FID_KEY) {
			rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
			continue;
		}
		fid.f_seq = ns_get_be64(k);
		fid.f_oid = ns_get_be64((const uint8_t *)k + 8);
		pos->sp_after = fid;
		pos->sp_started = true;
		seen++;
		rc = ns_inode_get(txn, &fid, in);
		if (rc == -NC_E_CORRUPT) {
			rc = 0; /* logged; not ours to repair */
		} else if (rc) {
			break;
		} else if (ns_is_reg(in) && !(in->in_layout.l_flags & NC_LAYOUT_PACKED) &&
			   mds_layout_is_stale_on(&in->in_layout, osts)) {
			out[n++] = fid;
		}
		rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	}
	if (rc == -ENOENT) {
		pos->sp_inodes_done = true; /* the packs next */
		rc = 0;
	}
	mds_db_cursor_close(c);
out_abort:
	mds_db_txn_abort(txn);
out_free:
	free(in);
	if (!rc)
		*count = n;
	return rc;
}
