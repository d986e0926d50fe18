/* SPDX-License-Identifier: MIT */
/*
 * Small-file packing on the MDS: packs, FID grants, and switching a file's
 * bytes between a pack extent and objects of its own.
 *
 * A pack is a large erasure-coded object set, FID (NC_PACK_FID_SEQ, id),
 * that clients append small files to; the MDS records each packed file as
 * an extent of it (NC_LAYOUT_PACKED in the inode's layout) and keeps per
 * pack the bytes and files that still use it:
 *
 *   PACKS  id (BE u64) -> version, layout, size, live bytes, files,
 *          sealed, mtime (seconds of the last commit)
 *
 * A pack whose last file goes and that will get no more (sealed) is queued
 * for destruction like a removed file's objects.  The layout a client sees
 * for a packed file is the pack's (with its current stale marks) plus the
 * extent: ns_layout_join().
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/errors.h"
#include "common/log.h"
#include "mds/ns_int.h"

/* An unsealed pack untouched this long belongs to a client that went
 * away: it counts as sealed. */
#define NS_PACK_ABANDONED_S 3600
/* Bytes a file moved away from (a pack emptied, objects replaced by an
 * extent) stay this long: a reader that opened the file before the move
 * reads the old copy, which is still whole. */
#define NS_MOVE_GRACE_S 300

static void ns_pack_key(uint64_t id, uint8_t k[8])
{
	ns_put_be64(k, id);
}

void ns_xdr_pack(struct nc_xdr *x, struct ns_pack *p)
{
	ns_xdr_version(x);
	ns_xdr_layout(x, &p->p_layout);
	nc_xdr_u64(x, &p->p_size);
	nc_xdr_u64(x, &p->p_live);
	nc_xdr_u32(x, &p->p_files);
	nc_xdr_u32(x, &p->p_sealed);
	nc_xdr_i64(x, &p->p_mtime);
	nc_xdr_i64(x, &p->p_emptied);
}

static int ns_pack_get(struct mds_txn *txn, uint64_t id, struct ns_pack *p)
{
	uint8_t key[8];
	struct nc_xdr x;
	const void *val;
	size_t vlen;
	int rc;

	ns_pack_key(id, key);
	rc = mds_db_get(txn, MDS_T_PACKS, key, sizeof(key), &val, &vlen);
	if (rc)
		return rc;
	memset(p, 0, sizeof(*p));
	nc_xdr_init_decode(&x, val, vlen);
	ns_xdr_pack(&x, p);
	if (x.x_err || nc_xdr_finish(&x)) {
		struct nc_fid f = { NC_PACK_FID_SEQ, id };

		ns_log_corrupt("pack", &f);
		return -NC_E_CORRUPT;
	}
	p->p_id = id;
	return 0;
}

static int ns_pack_put(struct mds_txn *txn, struct ns_pack *p)
{
	uint8_t buf[128 + NC_MAX_STRIPES * 8];
	uint8_t key[8];
	struct nc_xdr x;

	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_pack(&x, p);
	if (x.x_err)
		return x.x_err;
	ns_pack_key(p->p_id, key);
	return mds_db_put(txn, MDS_T_PACKS, key, sizeof(key), buf, x.x_pos, false);
}

static bool ns_pack_is_sealed(const struct ns_pack *p)
{
	return p->p_sealed || time(NULL) - p->p_mtime > NS_PACK_ABANDONED_S;
}

/* Stores @p, noting when nothing uses it any more and nothing will: the
 * reaper (mds_ns_pack_reap()) destroys it after the grace period. */
static int ns_pack_put_settled(struct mds_txn *txn, struct ns_pack *p)
{
	if (p->p_files || !ns_pack_is_sealed(p))
		p->p_emptied = 0;
	else if (!p->p_emptied)
		p->p_emptied = time(NULL);
	return ns_pack_put(txn, p);
}

static void ns_packfile_key(uint64_t id, const struct nc_fid *fid, uint8_t k[8 + NS_FID_KEY])
{
	ns_pack_key(id, k);
	ns_fid_key(fid, k + 8);
}

bool ns_fid_is_pack(const struct nc_fid *fid)
{
	return fid->f_seq == NC_PACK_FID_SEQ;
}

int ns_pack_attach(struct mds_txn *txn, const struct nc_fid *fid, const struct nc_layout *ext)
{
	uint8_t key[8 + NS_FID_KEY];
	struct ns_pack p;
	int rc;

	rc = ns_pack_get(txn, ext->l_pack_id, &p);
	if (rc == -ENOENT)
		return -EINVAL;
	if (rc)
		return rc;
	if (ext->l_pack_len > NC_PACK_MAX_LIMIT ||
	    ext->l_pack_off > UINT64_MAX - NC_PACK_MAX_LIMIT)
		return -EINVAL;
	if (p.p_files == UINT32_MAX)
		return -ENOSPC;
	ns_packfile_key(ext->l_pack_id, fid, key);
	rc = mds_db_put(txn, MDS_T_PACKFILES, key, sizeof(key), "", 0, false);
	if (rc)
		return rc;
	p.p_files++;
	p.p_emptied = 0;
	p.p_live += ext->l_pack_len;
	if (ext->l_pack_off + ext->l_pack_len > p.p_size)
		p.p_size = ext->l_pack_off + ext->l_pack_len;
	p.p_mtime = time(NULL);
	return ns_pack_put(txn, &p);
}

int ns_pack_detach(struct mds_txn *txn, const struct nc_fid *fid, const struct nc_layout *ext)
{
	uint8_t key[8 + NS_FID_KEY];
	struct ns_pack p;
	int rc;

	ns_packfile_key(ext->l_pack_id, fid, key);
	rc = mds_db_del(txn, MDS_T_PACKFILES, key, sizeof(key));
	if (rc && rc != -ENOENT)
		return rc;

	rc = ns_pack_get(txn, ext->l_pack_id, &p);
	if (rc == -ENOENT) {
		struct nc_fid f = { NC_PACK_FID_SEQ, ext->l_pack_id };

		ns_log_corrupt("missing pack", &f);
		return 0; /* nothing left to account */
	}
	if (rc)
		return rc;
	if (p.p_files)
		p.p_files--;
	p.p_live = p.p_live > ext->l_pack_len ? p.p_live - ext->l_pack_len : 0;
	return ns_pack_put_settled(txn, &p);
}

int ns_layout_join(struct mds_txn *txn, const struct ns_inode *in, struct nc_layout *l)
{
	struct ns_pack p;
	int rc;

	ns_layout_out(in, l);
	if (!ns_is_reg(in) || !(in->in_layout.l_flags & NC_LAYOUT_PACKED))
		return 0;
	rc = ns_pack_get(txn, in->in_layout.l_pack_id, &p);
	if (rc == -ENOENT)
		rc = -NC_E_CORRUPT;
	if (rc)
		return rc;
	*l = p.p_layout;
	l->l_flags = NC_LAYOUT_PACKED;
	l->l_pack_id = in->in_layout.l_pack_id;
	l->l_pack_off = in->in_layout.l_pack_off;
	l->l_pack_len = in->in_layout.l_pack_len;
	return 0;
}

int ns_layout_join_ro(struct mds_ns *ns, const struct ns_inode *in, struct nc_layout *l)
{
	struct mds_txn *txn;
	int rc;

	if (!ns_is_reg(in) || !(in->in_layout.l_flags & NC_LAYOUT_PACKED)) {
		ns_layout_out(in, l);
		return 0;
	}
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = ns_layout_join(txn, in, l);
	mds_db_txn_abort(txn);
	return rc;
}

/* ---- FID grants ---- */

int mds_ns_fid_grant(struct mds_ns *ns, uint32_t want, uint64_t *seq, uint64_t *first,
		     uint32_t *count)
{
	struct mds_txn *txn;
	uint64_t oid;
	int rc;

	if (want == 0 || want > NC_FID_GRANT_MAX)
		return -EINVAL;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		return rc;
	rc = ns_conf_get_u64(txn, NS_CONF_NEXT_OID, &oid);
	if (!rc && (oid <= NC_ROOT_FID_OID || oid > UINT64_MAX - want))
		rc = -ENOSPC;
	if (!rc)
		rc = ns_conf_put_u64(txn, NS_CONF_NEXT_OID, oid + want);
	rc = ns_end(txn, rc);
	if (rc)
		return rc;
	*seq = NC_FILE_FID_SEQ;
	*first = oid;
	*count = want;
	return 0;
}

int ns_fid_check_granted(struct mds_txn *txn, const struct nc_fid *fid)
{
	uint64_t next;
	int rc;

	if (fid->f_seq != NC_FILE_FID_SEQ || fid->f_oid <= NC_ROOT_FID_OID)
		return -EINVAL;
	rc = ns_conf_get_u64(txn, NS_CONF_NEXT_OID, &next);
	if (rc)
		return rc;
	return fid->f_oid < next ? 0 : -EINVAL;
}

/* ---- packs ---- */

/* A pack's layout: without the OSTs of @avoid while the OSTs left (of the
 * directory's pool, when it has one) can take it, else over all of @osts:
 * a pack on a failing OST may still be written, none at all cannot. */
static int pack_layout_alloc(struct mds_ns *ns, struct mds_txn *txn,
			     const struct nc_layout *dflt, const struct nc_layout *tmpl,
			     const struct mds_ost_set *osts, const uint32_t *avoid,
			     uint32_t navoid, struct nc_layout *out)
{
	struct mds_ost_set *set;
	int rc;

	if (navoid == 0)
		return ns_layout_alloc(ns, txn, dflt, tmpl, osts, out);
	set = malloc(sizeof(*set));
	if (!set)
		return -ENOMEM;
	*set = *osts;
	mds_ost_set_avoid(set, avoid, navoid);
	rc = ns_layout_alloc(ns, txn, dflt, tmpl, set, out);
	free(set);
	if (rc == -NC_E_NOOST || rc == -NC_E_LAYOUT || rc == -ENOSPC)
		rc = ns_layout_alloc(ns, txn, dflt, tmpl, osts, out);
	return rc;
}

/* A new pack with @want's coding, or (@want NULL) laid out as a file of
 * @dir would be. */
static int pack_alloc(struct mds_ns *ns, const struct nc_fid *dir, const struct nc_layout *want,
		      const struct mds_ost_set *osts, const uint32_t *avoid, uint32_t navoid,
		      struct nc_layout *out)
{
	struct mds_txn *txn;
	struct ns_inode *in;
	struct nc_layout dflt, tmpl;
	struct ns_pack *p;
	uint64_t id;
	int rc;

	in = malloc(sizeof(*in));
	p = calloc(1, sizeof(*p));
	if (!in || !p) {
		rc = -ENOMEM;
		goto out_free;
	}
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = ns_conf_get_layout(txn, &dflt);
	if (rc)
		goto out_end;
	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.l_first_ost = NC_OST_ANY;
	if (want) {
		tmpl.l_stripe_size = want->l_stripe_size;
		tmpl.l_stripe_count = want->l_stripe_count;
		tmpl.l_k = want->l_k;
		tmpl.l_m = want->l_m;
	} else if (!nc_fid_is_zero(dir)) {
		rc = ns_dir_get(txn, dir, in);
		if (rc)
			goto out_end;
		if (in->in_has_tmpl)
			tmpl = in->in_layout;
	}
	{
		struct nc_xdr x;

		/* MDTs formatted before packing have no counter yet. */
		rc = ns_conf_get(txn, NS_CONF_NEXT_PACK, &x);
		if (rc == -ENOENT) {
			id = 1;
			rc = 0;
		} else if (!rc) {
			nc_xdr_u64(&x, &id);
			rc = ns_conf_done(&x, NS_CONF_NEXT_PACK);
		}
	}
	if (rc)
		goto out_end;
	if (id == UINT64_MAX) {
		rc = -ENOSPC;
		goto out_end;
	}
	rc = ns_conf_put_u64(txn, NS_CONF_NEXT_PACK, id + 1);
	if (rc)
		goto out_end;
	/* A pack is laid out as a file of the directory would be, but always
	 * over the OSTs the MDS picks in turn. */
	tmpl.l_first_ost = NC_OST_ANY;
	tmpl.l_flags = NC_LAYOUT_TEMPLATE | (tmpl.l_flags & NC_LAYOUT_POOL);
	rc = pack_layout_alloc(ns, txn, &dflt, &tmpl, osts, avoid, navoid, &p->p_layout);
	if (rc)
		goto out_end;
	p->p_layout.l_flags = 0;
	p->p_id = id;
	p->p_mtime = time(NULL);
	rc = ns_pack_put(txn, p);
out_end:
	rc = ns_end(txn, rc);
	if (!rc) {
		*out = p->p_layout;
		out->l_pack_id = id;
	}
out_free:
	free(in);
	free(p);
	return rc;
}

int mds_ns_pack_alloc(struct mds_ns *ns, const struct nc_cred *cred, const struct nc_fid *dir,
		      const struct mds_ost_set *osts, const uint32_t *avoid, uint32_t navoid,
		      struct nc_layout *out)
{
	(void)cred; /* packs belong to no one; their files carry the owners */
	return pack_alloc(ns, dir, NULL, osts, avoid, navoid, out);
}

int mds_ns_pack_alloc_like(struct mds_ns *ns, const struct nc_layout *want,
			   const struct mds_ost_set *osts, const uint32_t *avoid,
			   uint32_t navoid, struct nc_layout *out)
{
	return pack_alloc(ns, NULL, want, osts, avoid, navoid, out);
}

int mds_ns_pack_seal(struct mds_ns *ns, uint64_t id)
{
	struct mds_txn *txn;
	struct ns_pack p;
	int rc;

	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		return rc;
	rc = ns_pack_get(txn, id, &p);
	if (!rc) {
		p.p_sealed = 1;
		rc = ns_pack_put_settled(txn, &p);
	}
	return ns_end(txn, rc);
}

int mds_ns_pack_getlayout(struct mds_ns *ns, uint64_t id, struct nc_layout *out)
{
	struct mds_txn *txn;
	struct ns_pack p;
	int rc;

	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = ns_pack_get(txn, id, &p);
	mds_db_txn_abort(txn);
	if (!rc)
		*out = p.p_layout;
	return rc;
}

int mds_ns_pack_shard_state(struct mds_ns *ns, uint64_t id, uint32_t shard, uint32_t set,
			    uint32_t clear, struct nc_layout *out)
{
	struct mds_txn *txn;
	struct ns_pack p;
	int rc;

	if ((set | clear) & ~NC_SHARD_STALE)
		return -EINVAL;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		return rc;
	rc = ns_pack_get(txn, id, &p);
	if (!rc && shard >= p.p_layout.l_stripe_count)
		rc = -EINVAL;
	if (!rc && ns_layout_shard_flags(&p.p_layout, shard, set, clear))
		rc = ns_pack_put(txn, &p);
	rc = ns_end(txn, rc);
	if (!rc && out)
		*out = p.p_layout;
	return rc;
}

int ns_packs_stale_ost(struct mds_txn *txn, uint32_t idx, uint64_t *marked)
{
	uint8_t *keys;
	size_t n;
	int rc;

	rc = ns_table_keys(txn, MDS_T_PACKS, 8, &keys, &n);
	for (size_t i = 0; !rc && i < n; i++) {
		struct ns_pack p;

		rc = ns_pack_get(txn, ns_get_be64(keys + i * 8), &p);
		if (rc || !ns_layout_stale_ost(&p.p_layout, idx))
			continue;
		rc = ns_pack_put(txn, &p);
		(*marked)++;
	}
	free(keys);
	return rc;
}

/*
 * Calls @fn on each pack after @after, in id order, in one read
 * transaction, until @fn returns true (it has enough) or the table ends
 * (*@end set).
 */
static int ns_packs_walk(struct mds_ns *ns, uint64_t after,
			 bool (*fn)(const struct ns_pack *p, void *arg), void *arg, bool *end)
{
	struct mds_cursor *c;
	struct mds_txn *txn;
	const void *k, *v;
	uint8_t key[8];
	size_t kl, vl;
	int rc;

	*end = after == UINT64_MAX;
	if (*end)
		return 0;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = mds_db_cursor_open(txn, MDS_T_PACKS, &c);
	if (rc)
		goto out_abort;
	ns_pack_key(after + 1, key);
	rc = mds_db_cursor_seek(c, key, sizeof(key), &k, &kl, &v, &vl);
	while (rc == 0) {
		struct ns_pack p;

		if (kl == 8) {
			rc = ns_pack_get(txn, ns_get_be64(k), &p);
			if (rc || (p.p_id > after && fn(&p, arg)))
				break;
		}
		rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	}
	mds_db_cursor_close(c);
	if (rc == -ENOENT) {
		*end = true;
		rc = 0;
	}
out_abort:
	mds_db_txn_abort(txn);
	return rc;
}

struct pack_list_walk {
	struct nc_pack_rec *pw_out;
	uint32_t pw_max, pw_n;
};

static bool pack_list_one(const struct ns_pack *p, void *arg)
{
	struct pack_list_walk *w = arg;
	struct nc_pack_rec *r = &w->pw_out[w->pw_n++];

	r->pk_id = p->p_id;
	r->pk_size = p->p_size;
	r->pk_live = p->p_live;
	r->pk_files = p->p_files;
	r->pk_sealed = ns_pack_is_sealed(p);
	r->pk_mtime = p->p_mtime;
	return w->pw_n == w->pw_max;
}

int mds_ns_pack_list(struct mds_ns *ns, uint64_t after, struct nc_pack_rec *out, uint32_t max,
		     uint32_t *count)
{
	struct pack_list_walk w = { .pw_out = out, .pw_max = max };
	bool end;
	int rc = max ? ns_packs_walk(ns, after, pack_list_one, &w, &end) : 0;

	*count = w.pw_n;
	return rc;
}

struct pack_stale_walk {
	const bool *sw_osts;
	uint64_t *sw_after;
	struct nc_fid *sw_out;
	uint32_t sw_max, sw_n, sw_slice, sw_seen;
};

static bool pack_stale_one(const struct ns_pack *p, void *arg)
{
	struct pack_stale_walk *w = arg;

	*w->sw_after = p->p_id;
	if (mds_layout_is_stale_on(&p->p_layout, w->sw_osts)) {
		w->sw_out[w->sw_n].f_seq = NC_PACK_FID_SEQ;
		w->sw_out[w->sw_n].f_oid = p->p_id;
		w->sw_n++;
	}
	return w->sw_n == w->sw_max || ++w->sw_seen == w->sw_slice;
}

int mds_ns_pack_stale_scan(struct mds_ns *ns, const bool *osts, uint64_t *after, bool *done,
			   uint32_t slice, struct nc_fid *out, uint32_t max, uint32_t *count)
{
	struct pack_stale_walk w = { .sw_osts = osts, .sw_after = after, .sw_out = out,
				     .sw_max = max, .sw_slice = slice };
	int rc = max && slice ? ns_packs_walk(ns, *after, pack_stale_one, &w, done) : 0;

	*count = rc ? 0 : w.sw_n;
	return rc;
}

/* The files that use pack @id, after @after (zero: from the first). */
int mds_ns_pack_files(struct mds_ns *ns, uint64_t id, const struct nc_fid *after,
		      struct nc_fid *out, uint32_t max, uint32_t *count)
{
	uint8_t key[8 + NS_FID_KEY];
	struct mds_cursor *c;
	struct mds_txn *txn;
	const void *k, *v;
	size_t kl, vl;
	uint32_t n = 0;
	int rc;

	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = mds_db_cursor_open(txn, MDS_T_PACKFILES, &c);
	if (rc)
		goto out_abort;
	ns_packfile_key(id, after, key);
	rc = mds_db_cursor_seek(c, key, sizeof(key), &k, &kl, &v, &vl);
	while (rc == 0 && n < max) {
		struct nc_fid f;

		if (kl != sizeof(key) || ns_get_be64(k) != id)
			break;
		f.f_seq = ns_get_be64((const uint8_t *)k + 8);
		f.f_oid = ns_get_be64((const uint8_t *)k + 16);
		if (!nc_fid_eq(&f, after))
			out[n++] = f;
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

/* Destroys the packs emptied more than the grace period ago.  Returns how
 * many were queued. */
int mds_ns_pack_reap(struct mds_ns *ns)
{
	uint64_t ids[64];
	unsigned int n = 0;
	struct mds_cursor *c;
	struct mds_txn *txn;
	const void *k, *v;
	size_t kl, vl;
	int64_t now = time(NULL);
	int rc;

	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = mds_db_cursor_open(txn, MDS_T_PACKS, &c);
	if (!rc) {
		rc = mds_db_cursor_seek(c, NULL, 0, &k, &kl, &v, &vl);
		while (rc == 0 && n < 64) {
			struct ns_pack p;

			if (kl == 8 && ns_pack_get(txn, ns_get_be64(k), &p) == 0 && !p.p_files &&
			    (p.p_emptied ? now - p.p_emptied >= NS_MOVE_GRACE_S :
					   ns_pack_is_sealed(&p) &&
						   now - p.p_mtime >= NS_MOVE_GRACE_S))
				ids[n++] = p.p_id;
			rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
		}
		mds_db_cursor_close(c);
	}
	mds_db_txn_abort(txn);
	if (rc && rc != -ENOENT)
		return rc;
	for (unsigned int i = 0; i < n; i++) {
		struct nc_fid f = { NC_PACK_FID_SEQ, ids[i] };
		uint8_t key[8];
		struct ns_pack p;

		rc = mds_db_txn_begin(ns->ns_db, false, &txn);
		if (rc)
			return rc;
		rc = ns_pack_get(txn, ids[i], &p);
		if (!rc && !p.p_files) {
			ns_pack_key(ids[i], key);
			rc = mds_db_del(txn, MDS_T_PACKS, key, sizeof(key));
			if (!rc)
				rc = ns_destroy_queue(txn, &f, &p.p_layout);
		}
		rc = ns_end(txn, rc);
		if (rc)
			return rc;
	}
	return (int)n;
}

/* ---- switching a file's bytes ---- */

/* Does the file still look as the client read it? */
static bool ns_layout_matches(const struct nc_layout *cur, const struct nc_layout *old)
{
	if ((cur->l_flags & NC_LAYOUT_SMALL) != (old->l_flags & NC_LAYOUT_SMALL))
		return false;
	if (cur->l_flags & NC_LAYOUT_PACKED)
		return cur->l_pack_id == old->l_pack_id && cur->l_pack_off == old->l_pack_off &&
		       cur->l_pack_len == old->l_pack_len;
	return cur->l_gen == old->l_gen;
}

/* A layout a client sends for the objects of a file must be one the MDS
 * could have made: valid OSTs, a geometry that holds together. */
static int ns_layout_check_objects(const struct nc_layout *l)
{
	if (l->l_flags & NC_LAYOUT_FLAGS)
		return -NC_E_LAYOUT;
	if (l->l_stripe_count == 0 || l->l_stripe_count > NC_MAX_STRIPES ||
	    l->l_stripe_size == 0 || l->l_stripe_size % 4096)
		return -NC_E_LAYOUT;
	if (l->l_m && (l->l_k == 0 || l->l_k > NS_MAX_EC_K || l->l_m > NS_MAX_EC_M ||
		       l->l_stripe_count != l->l_k + l->l_m))
		return -NC_E_LAYOUT;
	for (uint32_t i = 0; i < l->l_stripe_count; i++)
		if (l->l_shards[i].ls_ost >= NC_MAX_OSTS)
			return -NC_E_LAYOUT;
	return 0;
}

static int ns_switch_txn(struct mds_ns *ns, struct mds_txn *txn, const struct nc_pack_switch *sw,
			 const struct mds_ost_set *osts, struct ns_inode *in, struct nc_layout *out)
{
	const struct nc_layout *nl = &sw->ps_new;
	struct nc_layout dflt;
	int rc;

	rc = ns_inode_get(txn, &sw->ps_fid, in);
	if (rc)
		return rc;
	if (!ns_is_reg(in))
		return ns_is_dir(in) ? -EISDIR : -EINVAL;
	/* A move keeps the bytes as they are: the owner may move a file it
	 * cannot write (datasets are often made read-only), as root may;
	 * anyone else needs write permission, as for a rewrite. */
	if (!(sw->ps_flags & NC_SWITCH_MOVE) || sw->ps_cred.c_uid != in->in_attr.a_uid) {
		rc = nc_permission(&in->in_attr, &sw->ps_cred, NC_MAY_WRITE);
		if (rc)
			return rc;
	}
	if (sw->ps_flags & NC_SWITCH_PROPOSE) {
		/* Objects for the file, laid out as the filesystem default: the
		 * client fills them, then switches to them. */
		rc = ns_conf_get_layout(txn, &dflt);
		if (rc)
			return rc;
		rc = ns_layout_alloc(ns, txn, &dflt, NULL, osts, out);
		if (!rc)
			out->l_gen = in->in_layout.l_gen + 1;
		return rc;
	}
	if (!ns_layout_matches(&in->in_layout, &sw->ps_old))
		return -NC_E_CHANGED;
	if ((sw->ps_flags & NC_SWITCH_MOVE) &&
	    (in->in_attr.a_size != sw->ps_size ||
	     in->in_attr.a_mtime.t_sec != sw->ps_mtime.t_sec ||
	     in->in_attr.a_mtime.t_nsec != sw->ps_mtime.t_nsec))
		return -NC_E_CHANGED;
	if (nl->l_flags & NC_LAYOUT_INLINE) {
		if (nl->l_flags != NC_LAYOUT_INLINE || sw->ps_inline_len != sw->ps_size ||
		    sw->ps_size > NC_INLINE_MAX || (sw->ps_inline_len && !sw->ps_inline))
			return -EINVAL;
	} else if (nl->l_flags & NC_LAYOUT_PACKED) {
		if (nl->l_pack_len != sw->ps_size)
			return -EINVAL;
		rc = ns_pack_attach(txn, &in->in_attr.a_fid, nl);
		if (rc)
			return rc;
	} else {
		rc = ns_layout_check_objects(nl);
		if (rc)
			return rc;
	}
	/* What the file used before goes. */
	if (in->in_layout.l_flags & NC_LAYOUT_PACKED)
		rc = ns_pack_detach(txn, &in->in_attr.a_fid, &in->in_layout);
	else if (in->in_layout.l_stripe_count > 0)
		rc = ns_destroy_queue_after(txn, &in->in_attr.a_fid, &in->in_layout,
					    NS_MOVE_GRACE_S);
	if (rc)
		return rc;
	if (nl->l_flags & NC_LAYOUT_INLINE) {
		/* Its generation tells a rewrite from the bytes it replaced. */
		uint32_t gen = in->in_layout.l_gen;

		memset(&in->in_layout, 0, sizeof(in->in_layout));
		in->in_layout.l_flags = NC_LAYOUT_INLINE;
		in->in_layout.l_gen = gen + 1;
		if (sw->ps_inline_len)
			memcpy(in->in_inline, sw->ps_inline, sw->ps_inline_len);
	} else if (nl->l_flags & NC_LAYOUT_PACKED) {
		/* The generation goes on counting through a pack: a later
		 * inline switch must not match a layout read before it. */
		uint32_t gen = in->in_layout.l_gen;

		memset(&in->in_layout, 0, sizeof(in->in_layout));
		in->in_layout.l_gen = gen + 1;
		in->in_layout.l_flags = NC_LAYOUT_PACKED;
		in->in_layout.l_pack_id = nl->l_pack_id;
		in->in_layout.l_pack_off = nl->l_pack_off;
		in->in_layout.l_pack_len = nl->l_pack_len;
	} else {
		uint32_t gen = in->in_layout.l_gen;

		in->in_layout = *nl;
		in->in_layout.l_flags = 0;
		in->in_layout.l_gen = gen + 1;
	}
	in->in_attr.a_size = sw->ps_size;
	in->in_attr.a_mtime = sw->ps_mtime;
	ns_now(&in->in_attr.a_ctime);
	ns_set_blocks(&in->in_attr);
	rc = ns_inode_put(txn, in, false);
	if (rc)
		return rc;
	return ns_layout_join(txn, in, out);
}

int mds_ns_pack_switch(struct mds_ns *ns, const struct nc_pack_switch *sw,
		       const struct mds_ost_set *osts, struct nc_attr *attr, struct nc_layout *out)
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
	rc = ns_switch_txn(ns, txn, sw, osts, in, out);
	if (sw->ps_flags & NC_SWITCH_PROPOSE) {
		mds_db_txn_abort(txn); /* nothing to keep */
	} else {
		rc = ns_end(txn, rc);
	}
	if (!rc && attr)
		*attr = in->in_attr;
out_free:
	free(in);
	return rc;
}
