/* SPDX-License-Identifier: MIT */
/*
 * Layouts: checking a user's template, merging a directory's template over
 * the filesystem default and choosing the OSTs of a new file, and the
 * getlayout, setlayout and default layout operations of mds/ns.h.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/errors.h"
#include "mds/ns_int.h"

/* ---- templates and OST choice ---- */

/* The automatic erasure coding of the filesystem default. */
#define NS_AUTO_EC_K 4
#define NS_AUTO_EC_M 2

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
	if (t->l_flags & ~(NC_LAYOUT_TEMPLATE | NC_LAYOUT_PACK | NC_LAYOUT_POOL |
			   NC_LAYOUT_INLINE))
		return -EINVAL;
	/* Only files kept packed may be inline: the client decides at the
	 * same commit. */
	if ((t->l_flags & NC_LAYOUT_INLINE) &&
	    (!(t->l_flags & NC_LAYOUT_PACK) || t->l_inline_max > NC_INLINE_MAX))
		return -EINVAL;
	if ((t->l_flags & NC_LAYOUT_POOL) && !nc_pool_name_is_valid(t->l_pool))
		return -EINVAL;
	if ((t->l_flags & NC_LAYOUT_PACK) && t->l_pack_max > NC_PACK_MAX_LIMIT)
		return -EINVAL;
	if (t->l_m > NS_MAX_EC_M || t->l_k > NS_MAX_EC_K)
		return -EINVAL;
	if (t->l_m > 0 && t->l_stripe_count != 0 &&
	    t->l_stripe_count <= NC_MAX_STRIPES &&
	    (uint32_t)t->l_k + t->l_m > t->l_stripe_count)
		return -EINVAL;
	return 0;
}

/* No OST can take a new object: ENOSPC when some are only full (the
 * application sees a full filesystem), NC_E_NOOST when they are down. */
static int ns_layout_no_ost(const struct mds_ost_set *osts)
{
	for (uint32_t i = 0; osts && i < osts->os_ndown && i < NC_MAX_OSTS; i++)
		if (osts->os_down[i] < NC_MAX_OSTS && osts->os_full[osts->os_down[i]])
			return -ENOSPC;
	return -NC_E_NOOST;
}

/*
 * Merges @t over the filesystem default @dflt and picks OSTs from @osts.
 * Zero fields inherit; a stripe count of UINT16_MAX or more than the
 * usable OSTs means all of them.
 */
static int ns_layout_pick(struct mds_ns *ns, const struct nc_layout *dflt,
			  const struct nc_layout *t, const struct mds_ost_set *osts,
			  struct nc_layout *out)
{
	uint32_t navail, ndown, nuse, size, count, k, m, first, start = 0;
	bool count_inherited = false;

	navail = osts ? osts->os_count : 0;
	if (navail > NC_MAX_OSTS)
		navail = NC_MAX_OSTS;
	ndown = osts ? osts->os_ndown : 0;
	if (ndown > NC_MAX_OSTS - navail)
		ndown = NC_MAX_OSTS - navail;
	if (navail == 0)
		return ns_layout_no_ost(osts);

	size = t->l_stripe_size ? t->l_stripe_size : dflt->l_stripe_size;
	if (!size)
		size = NC_DEFAULT_STRIPE_SIZE;
	count = t->l_stripe_count;
	count_inherited = count == 0;
	/*
	 * k >= 1 in a template fixes the coding (m = 0 there is plain
	 * striping, "setstripe -E none"); k = 0 inherits.  When nothing fixes
	 * it, a file with no stripe count of its own is erasure-coded 4+2 over
	 * 6 OSTs as soon as 6 OSTs are up, and plainly striped otherwise.
	 */
	if (t->l_k) {
		k = t->l_k;
		m = t->l_m;
	} else if (dflt->l_k) {
		k = dflt->l_k;
		m = dflt->l_m;
	} else if (count_inherited && navail >= NS_AUTO_EC_K &&
		   navail + ndown >= NS_AUTO_EC_K + NS_AUTO_EC_M) {
		k = NS_AUTO_EC_K;
		m = NS_AUTO_EC_M;
		count = k + m;
	} else {
		k = 0;
		m = 0;
	}
	if (!count)
		count = dflt->l_stripe_count ? dflt->l_stripe_count :
					       NC_DEFAULT_STRIPE_COUNT;
	first = t->l_first_ost != NC_OST_ANY ? t->l_first_ost :
					       dflt->l_first_ost;
	if (!ns_stripe_size_ok(size) || m > NS_MAX_EC_M || k > NS_MAX_EC_K)
		return -NC_E_LAYOUT;

	/* An erasure-coded template with an inherited count still needs a
	 * whole row of distinct OSTs. */
	if (m > 0 && count_inherited && count < k + m)
		count = k + m;
	/* Erasure-coded files may also use OSTs that are down (stale shards). */
	nuse = m > 0 ? navail + ndown : navail;
	if (count == UINT16_MAX || count > nuse)
		count = nuse;
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
		/* Every row needs k shards that can be written now. */
		if (navail < k)
			return ns_layout_no_ost(osts);
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
	for (uint32_t i = 0; i < count; i++) {
		if (i < navail) {
			out->l_shards[i].ls_ost = osts->os_index[(start + i) % navail];
		} else {
			out->l_shards[i].ls_ost = osts->os_down[i - navail];
			out->l_shards[i].ls_flags = NC_SHARD_STALE;
		}
	}
	out->l_first_ost = out->l_shards[0].ls_ost;
	return 0;
}

static bool ost_in(const uint32_t *idx, uint32_t n, uint32_t ost)
{
	for (uint32_t j = 0; j < n; j++)
		if (idx[j] == ost)
			return true;
	return false;
}

/* A filter on the OSTs a new layout may use: the OSTs a migration must
 * leave (--ost-exclude) are dropped from both lists. */
void mds_ost_set_exclude(struct mds_ost_set *set, const uint32_t *idx, uint32_t n)
{
	uint32_t i, kept;

	for (i = 0, kept = 0; i < set->os_count && i < NC_MAX_OSTS; i++)
		if (!ost_in(idx, n, set->os_index[i]))
			set->os_index[kept++] = set->os_index[i];
	set->os_count = kept;
	for (i = 0, kept = 0; i < set->os_ndown && i < NC_MAX_OSTS; i++)
		if (!ost_in(idx, n, set->os_down[i]))
			set->os_down[kept++] = set->os_down[i];
	set->os_ndown = kept;
}

void mds_ost_set_avoid(struct mds_ost_set *set, const uint32_t *idx, uint32_t n)
{
	uint32_t i, kept, left = 0;

	for (i = 0; i < set->os_count && i < NC_MAX_OSTS; i++)
		if (!ost_in(idx, n, set->os_index[i]))
			left++;
	if (left == 0 || left == set->os_count)
		return;
	for (i = 0, kept = 0; i < set->os_count && i < NC_MAX_OSTS; i++) {
		uint32_t ost = set->os_index[i];

		if (!ost_in(idx, n, ost))
			set->os_index[kept++] = ost;
		else if (set->os_ndown < NC_MAX_OSTS)
			set->os_down[set->os_ndown++] = ost;
	}
	set->os_count = kept;
}

/*
 * A new layout from @tmpl (NULL: none) over the filesystem default @dflt.
 * A template naming an OST pool is laid out over the OSTs of @osts in
 * that pool only: the stripe count shrinks to what the pool offers, as it
 * does when few OSTs are up, and a pool with none fails with -NC_E_NOOST.
 */
int ns_layout_alloc(struct mds_ns *ns, struct mds_txn *txn,
		    const struct nc_layout *dflt, const struct nc_layout *tmpl,
		    const struct mds_ost_set *osts, struct nc_layout *out)
{
	static const struct nc_layout none = { .l_first_ost = NC_OST_ANY };
	const struct nc_layout *t = tmpl ? tmpl : &none;
	struct mds_ost_set *in_pool;
	int rc;

	if (!(t->l_flags & NC_LAYOUT_POOL) || !osts)
		return ns_layout_pick(ns, dflt, t, osts, out);
	in_pool = malloc(sizeof(*in_pool));
	if (!in_pool)
		return -ENOMEM;
	rc = ns_pool_filter(txn, t->l_pool, osts, in_pool);
	if (!rc)
		rc = ns_layout_pick(ns, dflt, t, in_pool, out);
	free(in_pool);
	return rc;
}

void ns_layout_out(const struct ns_inode *in, struct nc_layout *l)
{
	if (ns_is_reg(in)) {
		*l = in->in_layout;
		return;
	}
	memset(l, 0, sizeof(*l));
	l->l_first_ost = NC_OST_ANY;
}

bool ns_layout_stale_ost(struct nc_layout *l, uint32_t idx)
{
	bool changed = false;

	if (!l->l_m)
		return false; /* plain striping has nothing to rebuild from */
	for (uint32_t s = 0; s < l->l_stripe_count; s++) {
		struct nc_layout_shard *ls = &l->l_shards[s];

		if (ls->ls_ost == idx && !(ls->ls_flags & NC_SHARD_STALE)) {
			ls->ls_flags |= NC_SHARD_STALE;
			changed = true;
		}
	}
	if (changed)
		l->l_gen++;
	return changed;
}

bool ns_layout_shard_flags(struct nc_layout *l, uint32_t shard, uint32_t set, uint32_t clear)
{
	struct nc_layout_shard *ls = &l->l_shards[shard];

	if (((ls->ls_flags | set) & ~clear) == ls->ls_flags)
		return false;
	ls->ls_flags = (ls->ls_flags | set) & ~clear;
	l->l_gen++;
	return true;
}

/* ---- getlayout, setlayout ---- */

int mds_ns_getlayout(struct mds_ns *ns, const struct nc_fid *fid,
		     struct nc_layout *layout)
{
	struct mds_txn *txn;
	struct ns_inode *in;
	int rc;

	if (ns_fid_is_pack(fid))
		return mds_ns_pack_getlayout(ns, fid->f_oid, layout);
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		goto out_free;
	rc = ns_inode_get(txn, fid, in);
	if (rc)
		goto out_abort;
	/* A directory without a default of its own shows an empty template,
	 * every field inherited, rather than the filesystem default's
	 * fields: a client that sets one field (setstripe --pack) sends the
	 * rest back, and a stripe count written back would turn off the
	 * erasure coding that an inherited count gets (ns_layout_alloc()). */
	if (ns_is_dir(in) && in->in_has_tmpl) {
		*layout = in->in_layout;
	} else if (ns_is_dir(in)) {
		memset(layout, 0, sizeof(*layout));
		layout->l_flags = NC_LAYOUT_TEMPLATE;
		layout->l_first_ost = NC_OST_ANY;
	} else
		rc = ns_layout_join(txn, in, layout);
out_abort:
	mds_db_txn_abort(txn);
out_free:
	free(in);
	return rc;
}

static bool ns_tmpl_is_empty(const struct nc_layout *t)
{
	return !t->l_stripe_size && !t->l_stripe_count && !t->l_k && !t->l_m &&
	       t->l_first_ost == NC_OST_ANY &&
	       !(t->l_flags & (NC_LAYOUT_PACK | NC_LAYOUT_POOL | NC_LAYOUT_INLINE));
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
	/* A pool is named before it is used, so that a typo fails here. */
	if (req->l_flags & NC_LAYOUT_POOL) {
		rc = ns_pool_exists(txn, req->l_pool);
		if (rc)
			return rc;
	}
	if (ns_is_dir(in)) {
		/* An all-default template removes the directory's own. */
		in->in_has_tmpl = !ns_tmpl_is_empty(req);
		memset(&in->in_layout, 0, sizeof(in->in_layout));
		in->in_layout.l_stripe_size = req->l_stripe_size;
		in->in_layout.l_stripe_count = req->l_stripe_count;
		in->in_layout.l_k = req->l_k;
		in->in_layout.l_m = req->l_m;
		in->in_layout.l_first_ost = req->l_first_ost;
		in->in_layout.l_flags = NC_LAYOUT_TEMPLATE | (req->l_flags & NC_LAYOUT_PACK);
		if (req->l_flags & NC_LAYOUT_PACK)
			in->in_layout.l_pack_max = req->l_pack_max ? req->l_pack_max :
								     NC_PACK_MAX_DEFAULT;
		if (req->l_flags & NC_LAYOUT_POOL) {
			in->in_layout.l_flags |= NC_LAYOUT_POOL;
			memcpy(in->in_layout.l_pool, req->l_pool, sizeof(req->l_pool));
		}
		if (req->l_flags & NC_LAYOUT_INLINE) {
			in->in_layout.l_flags |= NC_LAYOUT_INLINE;
			in->in_layout.l_inline_max = req->l_inline_max;
		}
	} else {
		if (in->in_attr.a_size > 0 || (in->in_layout.l_flags & NC_LAYOUT_SMALL))
			return -EBUSY;
		rc = ns_conf_get_layout(txn, &dflt);
		if (rc)
			return rc;
		rc = ns_layout_alloc(ns, txn, &dflt, req, osts, &nl);
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
	rc = ns_setlayout_txn(ns, txn, cred, fid, req, osts, in);
	if (!rc)
		rc = ns_changelog_add(ns, txn, NC_CL_LAYOUT, cred, fid, NULL, NULL, NULL, NULL);
	rc = ns_end(txn, rc);
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

/* ---- shard states (erasure-coded files) ---- */

static int ns_shard_state_txn(struct mds_txn *txn, const struct nc_cred *cred,
			      const struct nc_fid *fid, uint32_t shard, uint32_t set,
			      uint32_t clear, struct ns_inode *in)
{
	int rc;

	rc = ns_inode_get(txn, fid, in);
	if (rc)
		return rc;
	if (!ns_is_reg(in))
		return -EINVAL;
	/* Marking a shard stale is part of any write (a writer that could
	 * not reach an OST); clearing marks is for whoever may write. */
	rc = nc_permission(&in->in_attr, cred, NC_MAY_WRITE);
	if (rc)
		return rc;
	if (shard >= in->in_layout.l_stripe_count || ((set | clear) & ~NC_SHARD_STALE))
		return -EINVAL;
	if (!ns_layout_shard_flags(&in->in_layout, shard, set, clear))
		return 0;
	return ns_inode_put(txn, in, false);
}

int mds_ns_shard_state(struct mds_ns *ns, const struct nc_cred *cred,
		       const struct nc_fid *fid, uint32_t shard, uint32_t set,
		       uint32_t clear, struct nc_layout *out)
{
	struct mds_txn *txn;
	struct ns_inode *in;
	int rc;

	if (ns_fid_is_pack(fid))
		return mds_ns_pack_shard_state(ns, fid->f_oid, shard, set, clear, out);
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = ns_end(txn, ns_shard_state_txn(txn, cred, fid, shard, set, clear, in));
	if (rc == 0 && out)
		*out = in->in_layout;
out_free:
	free(in);
	return rc;
}
