/* SPDX-License-Identifier: MIT */
/*
 * Migration on the MDS: laying out new objects for a file (ALLOC), and the
 * swap that makes them the file's, in one transaction, only when the file's
 * data did not change while the client copied it.
 *
 * The new objects are named by a FID of their own, (NC_MIGRATE_FID_SEQ, N)
 * with N from the "next_migrate" counter, so they never collide with the
 * old objects, even on an OST both layouts use.  Between ALLOC and the
 * swap (or ABORT) the new layout is kept as a pending record,
 * CONFIG "migrate.N" -> file fid, layout, time of the ALLOC: the swap takes
 * the layout from there, never from the client, and the client can only
 * name its own pending migration.  A client that dies between ALLOC and
 * swap leaves its record behind: mds_ns_migrate_expire() sends the objects
 * of records older than any copy could take to the destroy queue.
 *
 * The data version the swap compares is the file's layout generation,
 * size, mtime and ctime, as the client saw them when it opened the file to
 * copy it: every SIZE_UPDATE with mtime, SETATTR, truncate, layout or
 * stale-shard change moves one of them.  That alone misses a writer that
 * opened the file before the swap with the old layout and reports its
 * writes after: its bytes would land in the old objects.  So the swap
 * also waits until the file has seen no writer (write open, create, size
 * update) for ns_migrate_quiet_ms (-EBUSY; the client tries again).  A
 * writer that keeps the file open longer than that without reporting is
 * still not seen: see nacre_migrate_fid().
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/errors.h"
#include "mds/ns_int.h"

#define NS_CONF_NEXT_MIGRATE "next_migrate"
#define NS_MIGRATE_KEY_MAX 32

static int64_t ns_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static _Atomic int64_t *ns_write_slot(struct mds_ns *ns, const struct nc_fid *fid)
{
	uint64_t h = fid->f_seq * 0x9e3779b97f4a7c15ull ^ fid->f_oid * 0xc2b2ae3d27d4eb4full;

	return &ns->ns_write_ms[(h >> 32) % NS_WRITE_SLOTS];
}

void ns_write_note(struct mds_ns *ns, const struct nc_fid *fid)
{
	atomic_store(ns_write_slot(ns, fid), ns_now_ms());
}

static bool ns_write_is_recent(struct mds_ns *ns, const struct nc_fid *fid)
{
	int64_t last = atomic_load(ns_write_slot(ns, fid));

	return last != INT64_MIN && ns_now_ms() - last < ns->ns_migrate_quiet_ms;
}

void mds_ns_set_migrate_quiet(struct mds_ns *ns, int ms)
{
	ns->ns_migrate_quiet_ms = ms < 0 ? 0 : ms;
}

static void ns_migrate_key(uint64_t id, char key[NS_MIGRATE_KEY_MAX])
{
	snprintf(key, NS_MIGRATE_KEY_MAX, "migrate.%016" PRIx64, id);
}

static int ns_migrate_next_id(struct mds_txn *txn, uint64_t *id)
{
	struct nc_xdr x;
	uint64_t next = 1;
	int rc;

	/* MDTs formatted before migration have no counter yet. */
	rc = ns_conf_get(txn, NS_CONF_NEXT_MIGRATE, &x);
	if (rc == 0) {
		nc_xdr_u64(&x, &next);
		rc = ns_conf_done(&x, NS_CONF_NEXT_MIGRATE);
	} else if (rc == -ENOENT) {
		rc = 0;
	}
	if (rc)
		return rc;
	if (next == 0 || next == UINT64_MAX)
		return -ENOSPC;
	*id = next;
	return ns_conf_put_u64(txn, NS_CONF_NEXT_MIGRATE, next + 1);
}

static int ns_pending_put(struct mds_txn *txn, const struct nc_fid *fid,
			  const struct nc_layout *l)
{
	uint8_t buf[128 + NC_MAX_STRIPES * 8];
	char key[NS_MIGRATE_KEY_MAX];
	struct nc_layout lc = *l;
	struct nc_fid f = *fid;
	int64_t now = (int64_t)time(NULL);
	struct nc_xdr x;

	ns_migrate_key(l->l_obj.f_oid, key);
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	ns_xdr_fid(&x, &f);
	ns_xdr_layout(&x, &lc);
	nc_xdr_i64(&x, &now);
	return ns_conf_put(txn, key, &x);
}

/* Decodes a pending record; *@when is 0 for records written before they
 * carried the time of their ALLOC. */
static int ns_pending_decode(struct nc_xdr *x, const char *key, struct nc_fid *fid,
			     struct nc_layout *l, int64_t *when)
{
	memset(l, 0, sizeof(*l));
	*when = 0;
	ns_xdr_fid(x, fid);
	ns_xdr_layout(x, l);
	if (!x->x_err && x->x_pos < x->x_len)
		nc_xdr_i64(x, when);
	return ns_conf_done(x, key);
}

/* The pending migration the client names by @named (its l_obj), which
 * must be one for @fid. */
static int ns_pending_get(struct mds_txn *txn, const struct nc_fid *fid,
			  const struct nc_layout *named, struct nc_layout *l)
{
	char key[NS_MIGRATE_KEY_MAX];
	struct nc_fid f;
	struct nc_xdr x;
	int64_t when;
	int rc;

	if (!(named->l_flags & NC_LAYOUT_OBJFID) || named->l_obj.f_seq != NC_MIGRATE_FID_SEQ)
		return -EINVAL;
	ns_migrate_key(named->l_obj.f_oid, key);
	rc = ns_conf_get(txn, key, &x);
	if (rc == -ENOENT)
		return -ESTALE; /* swapped, aborted or expired already */
	if (rc)
		return rc;
	rc = ns_pending_decode(&x, key, &f, l, &when);
	if (rc)
		return rc;
	if (!nc_fid_eq(&f, fid) || !(l->l_flags & NC_LAYOUT_OBJFID) ||
	    !nc_fid_eq(&l->l_obj, &named->l_obj))
		return -EINVAL;
	return 0;
}

static int ns_pending_del(struct mds_txn *txn, uint64_t id)
{
	char key[NS_MIGRATE_KEY_MAX];

	ns_migrate_key(id, key);
	return mds_db_del(txn, MDS_T_CONFIG, key, strlen(key));
}

/*
 * The template of the new layout.  Without NC_MIGRATE_GEOMETRY the file
 * keeps its stripe count and coding where the OSTs left allow: an
 * erasure-coded file keeps m and gives up data chunks (4+2 becomes 3+2 on
 * five OSTs), a plain one stripes over what is there.  A packed file, which
 * has no geometry of its own, gets the filesystem default's.
 */
static void ns_migrate_tmpl(const struct nc_migrate_req *mg, const struct ns_inode *in,
			    const struct mds_ost_set *osts, struct nc_layout *t)
{
	const struct nc_layout *cur = &in->in_layout;
	bool packed = cur->l_flags & NC_LAYOUT_PACKED;
	uint32_t nuse;

	memset(t, 0, sizeof(*t));
	t->l_flags = NC_LAYOUT_TEMPLATE;
	t->l_first_ost = NC_OST_ANY;
	t->l_stripe_size = mg->mg_tmpl.l_stripe_size;
	if (!t->l_stripe_size && !packed)
		t->l_stripe_size = cur->l_stripe_size;
	if (mg->mg_flags & NC_MIGRATE_GEOMETRY) {
		t->l_stripe_count = mg->mg_tmpl.l_stripe_count;
		t->l_k = mg->mg_tmpl.l_k;
		t->l_m = mg->mg_tmpl.l_m;
		return;
	}
	if (packed || cur->l_stripe_count == 0)
		return;
	t->l_stripe_count = cur->l_stripe_count;
	t->l_k = cur->l_m ? cur->l_k : 1;
	t->l_m = cur->l_m;
	nuse = osts->os_count + (cur->l_m ? osts->os_ndown : 0);
	if (cur->l_m && (uint32_t)cur->l_k + cur->l_m > nuse) {
		if (nuse > cur->l_m) {
			t->l_k = (uint8_t)(nuse - cur->l_m);
			t->l_stripe_count = (uint16_t)nuse;
		} else {
			/* Not even one data chunk beside the parity: plain. */
			t->l_k = 1;
			t->l_m = 0;
			t->l_stripe_count = (uint16_t)osts->os_count;
		}
	}
}

static int ns_migrate_alloc_txn(struct mds_ns *ns, struct mds_txn *txn,
				const struct nc_migrate_req *mg, const struct mds_ost_set *osts,
				struct ns_inode *in, struct nc_layout *out)
{
	struct nc_layout dflt, t;
	uint64_t id;
	int rc;

	ns_migrate_tmpl(mg, in, osts, &t);
	rc = ns_conf_get_layout(txn, &dflt);
	if (rc)
		return rc;
	rc = ns_layout_alloc(ns, txn, &dflt, &t, osts, out);
	if (rc)
		return rc;
	rc = ns_migrate_next_id(txn, &id);
	if (rc)
		return rc;
	out->l_flags = NC_LAYOUT_OBJFID;
	out->l_obj.f_seq = NC_MIGRATE_FID_SEQ;
	out->l_obj.f_oid = id;
	out->l_gen = in->in_layout.l_gen + 1;
	return ns_pending_put(txn, &in->in_attr.a_fid, out);
}

static bool ns_data_version_is(const struct ns_inode *in, const struct nc_migrate_req *mg)
{
	const struct nc_attr *a = &in->in_attr;

	/* A packed file shows its pack's generation: its own changes (a move
	 * to another pack, a rewrite) set ctime. */
	if (!(in->in_layout.l_flags & NC_LAYOUT_PACKED) && in->in_layout.l_gen != mg->mg_gen)
		return false;
	return a->a_size == mg->mg_size &&
	       a->a_mtime.t_sec == mg->mg_mtime.t_sec &&
	       a->a_mtime.t_nsec == mg->mg_mtime.t_nsec &&
	       a->a_ctime.t_sec == mg->mg_ctime.t_sec &&
	       a->a_ctime.t_nsec == mg->mg_ctime.t_nsec;
}

static int ns_migrate_swap_txn(struct mds_ns *ns, struct mds_txn *txn,
			       const struct nc_migrate_req *mg, struct ns_inode *in,
			       struct nc_layout *out)
{
	struct nc_layout nl;
	uint32_t gen = in->in_layout.l_gen;
	int rc;

	rc = ns_pending_get(txn, &mg->mg_fid, &mg->mg_layout, &nl);
	if (rc)
		return rc;
	if (mg->mg_flags & NC_MIGRATE_ABORT) {
		rc = ns_destroy_queue(txn, &mg->mg_fid, &nl);
		if (!rc)
			rc = ns_pending_del(txn, nl.l_obj.f_oid);
		*out = nl;
		return rc;
	}
	if (!ns_data_version_is(in, mg) || ns_write_is_recent(ns, &mg->mg_fid))
		return -EBUSY;
	/* What the file used before goes: a pack extent is released (the
	 * pack keeps its bytes until it is compacted), objects go to the
	 * destroy queue, destroyed after the grace the client asked for:
	 * readers that opened the file before the swap read them until then. */
	if (in->in_layout.l_flags & NC_LAYOUT_PACKED)
		rc = ns_pack_detach(txn, &in->in_attr.a_fid, &in->in_layout);
	else if (in->in_layout.l_stripe_count > 0)
		rc = ns_destroy_queue_after(txn, &in->in_attr.a_fid, &in->in_layout,
					    mg->mg_grace < NC_MIGRATE_GRACE_MAX ?
						    mg->mg_grace : NC_MIGRATE_GRACE_MAX);
	if (rc)
		return rc;
	rc = ns_pending_del(txn, nl.l_obj.f_oid);
	if (rc)
		return rc;
	in->in_layout = nl;
	in->in_layout.l_gen = gen + 1;
	ns_now(&in->in_attr.a_ctime);
	rc = ns_inode_put(txn, in, false);
	if (rc)
		return rc;
	*out = in->in_layout;
	return 0;
}

int mds_ns_migrate(struct mds_ns *ns, const struct nc_migrate_req *mg,
		   const struct mds_ost_set *osts, struct nc_attr *attr, struct nc_layout *out)
{
	struct mds_txn *txn;
	struct ns_inode *in;
	int rc;

	if (mg->mg_flags & ~(NC_MIGRATE_ALLOC | NC_MIGRATE_ABORT | NC_MIGRATE_GEOMETRY))
		return -EINVAL;
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = ns_inode_get(txn, &mg->mg_fid, in);
	if (!rc && !ns_is_reg(in))
		rc = ns_is_dir(in) ? -EISDIR : -EINVAL;
	/* Moving bytes is writing them: write permission (root has it). */
	if (!rc)
		rc = nc_permission(&in->in_attr, &mg->mg_cred, NC_MAY_WRITE);
	if (!rc && (mg->mg_flags & NC_MIGRATE_ALLOC)) {
		rc = ns_migrate_alloc_txn(ns, txn, mg, osts, in, out);
	} else if (!rc) {
		rc = ns_migrate_swap_txn(ns, txn, mg, in, out);
		/* A swap is a layout change, as a setlayout is. */
		if (!rc && !(mg->mg_flags & NC_MIGRATE_ABORT))
			rc = ns_changelog_add(ns, txn, NC_CL_LAYOUT, &mg->mg_cred, &mg->mg_fid,
					      NULL, NULL, NULL, NULL);
	}
	rc = ns_end(txn, rc);
	if (!rc && attr)
		*attr = in->in_attr;
out_free:
	free(in);
	return rc;
}

int mds_ns_migrate_expire(struct mds_ns *ns, int64_t before, uint64_t *expired)
{
	enum { BATCH = 256 };
	static const char prefix[] = "migrate.";
	char (*keys)[NS_MIGRATE_KEY_MAX];
	struct mds_cursor *c;
	struct mds_txn *txn;
	const void *k, *v;
	size_t kl, vl;
	unsigned int n = 0, done = 0;
	int rc;

	*expired = 0;
	keys = malloc(BATCH * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		goto out_free;
	rc = mds_db_cursor_open(txn, MDS_T_CONFIG, &c);
	if (rc)
		goto out_abort;
	rc = mds_db_cursor_seek(c, prefix, sizeof(prefix) - 1, &k, &kl, &v, &vl);
	while (!rc && n < BATCH && kl > sizeof(prefix) - 1 && kl < NS_MIGRATE_KEY_MAX &&
	       !memcmp(k, prefix, sizeof(prefix) - 1)) {
		memcpy(keys[n], k, kl);
		keys[n++][kl] = '\0';
		rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	}
	mds_db_cursor_close(c);
	if (rc && rc != -ENOENT)
		goto out_abort;
	rc = 0;
	for (unsigned int i = 0; i < n && !rc; i++) {
		struct nc_layout l;
		struct nc_fid fid;
		struct nc_xdr x;
		int64_t when;

		rc = ns_conf_get(txn, keys[i], &x);
		if (!rc)
			rc = ns_pending_decode(&x, keys[i], &fid, &l, &when);
		if (rc)
			break;
		if (when >= before)
			continue;
		/* Nothing of the file refers to these objects: they go. */
		rc = ns_destroy_queue(txn, &fid, &l);
		if (!rc)
			rc = mds_db_del(txn, MDS_T_CONFIG, keys[i], strlen(keys[i]));
		done++;
	}
	rc = ns_end(txn, rc);
	if (!rc)
		*expired = done;
	goto out_free;
out_abort:
	mds_db_txn_abort(txn);
out_free:
	free(keys);
	return rc;
}
