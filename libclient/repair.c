/* SPDX-License-Identifier: MIT */
/*
 * Repair of erasure-coded files: rebuild (stale shards, or every shard on a
 * replaced OST) and scrub (checksums verified on the OSTs, corrupt chunks
 * rewritten).  Neither lets a writer change a row behind its back, and the
 * stale marks are cleared only once every row of the shard has been
 * rewritten.  A scrub locks each row it repairs, alone.  A rebuild holds
 * a lock over the whole file at its start and its end only:
 * in between it locks one row at a time while the lock OST watches which
 * rows writers lock (OBJ_WATCH), and at the end it rebuilds those rows
 * again (docs/design.md, "A rebuild locks one row at a time").  A rebuild
 * runs beside writers (the MDS's catch-up rebuild does), so once it holds
 * the lock it takes the stale marks afresh from the MDS and rebuilds every
 * row the objects hold, not only those under the size it opened the file
 * with: a writer's data lands before its size update.
 * A packed file is repaired as its pack (FID (NC_PACK_FID_SEQ, id), which
 * may also be named directly): the pack holds its bytes and its marks, and
 * appenders lock the pack's rows.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/ec.h"
#include "common/errors.h"
#include "common/log.h"
#include "libclient/cl_int.h"

#define RELOCK_MS 5000

struct repair {
	struct nacre_fs *rp_fs;
	struct nc_cred rp_cred;
	struct nc_fid rp_fid;
	struct nc_layout rp_layout;
	struct nc_ec *rp_ec;
	uint64_t rp_rows;
	uint32_t rp_lock_ost;
	bool rp_locked;
	/* A rebuild by rows: the OST watching the file's writers, and whether
	 * a row lock went elsewhere (writers there were not watched). */
	bool rp_by_rows;
	bool rp_moved;
	uint32_t rp_watch_ost;
	struct timespec rp_locked_at;
	nacre_progress_fn rp_cb;
	void *rp_arg;
	struct nacre_repair_stats rp_st;
};

static uint64_t repair_rows_stored(struct repair *rp, uint64_t skip, uint32_t *answered);

/*
 * The file's layout and rows (from its size), or, for a packed file or a
 * pack's FID, the pack's: a packed file's bytes and stale marks are its
 * pack's, a pack's layout is a plain object set, and its rows are those
 * its objects hold (the MDS's size may lag behind an appender).
 * 1 when there is nothing to repair.
 */
static int repair_layout(struct repair *rp)
{
	struct nc_attr attr;
	uint64_t rowbytes;
	int rc;

	if (rp->rp_fid.f_seq != NC_PACK_FID_SEQ) {
		rc = cl_md_open(rp->rp_fs, &rp->rp_cred, &rp->rp_fid, NC_OPEN_READ, &attr,
				&rp->rp_layout, NULL);
		if (rc || !S_ISREG(attr.a_mode))
			return rc ? rc : 1;
		if (!(rp->rp_layout.l_flags & NC_LAYOUT_PACKED)) {
			rowbytes = (uint64_t)rp->rp_layout.l_stripe_size * rp->rp_layout.l_k;
			if (rowbytes)
				rp->rp_rows = (attr.a_size + rowbytes - 1) / rowbytes;
			return rp->rp_layout.l_stripe_count ? 0 : 1;
		}
		rp->rp_fid.f_seq = NC_PACK_FID_SEQ;
		rp->rp_fid.f_oid = rp->rp_layout.l_pack_id;
	}
	rc = cl_md_getlayout(rp->rp_fs, &rp->rp_fid, &rp->rp_layout);
	if (rc || !rp->rp_layout.l_stripe_count)
		return rc ? rc : 1;
	rp->rp_rows = repair_rows_stored(rp, 0, NULL);
	return 0;
}

static int repair_open(struct repair *rp, struct nacre_fs *fs, const struct nacre_fid *fid,
		       nacre_progress_fn cb, void *arg)
{
	int rc;

	memset(rp, 0, sizeof(*rp));
	rp->rp_fs = fs;
	rp->rp_cred = fs->fs_cred;
	rp->rp_fid.f_seq = fid->seq;
	rp->rp_fid.f_oid = fid->oid;
	rp->rp_cb = cb;
	rp->rp_arg = arg;
	rc = repair_layout(rp);
	if (!rc && rp->rp_layout.l_m)
		rc = cl_ec_coder(fs, &rp->rp_layout, &rp->rp_ec);
	return rc;
}

/* Takes or renews the whole-file lock (a lease: renewed every few seconds). */
static int repair_lock(struct repair *rp)
{
	struct timespec now;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (rp->rp_locked && (now.tv_sec - rp->rp_locked_at.tv_sec) * 1000 < RELOCK_MS)
		return 0;
	rc = cl_lock_rows(rp->rp_fs, &rp->rp_fid, &rp->rp_layout, 0, CL_ALL_ROWS, true,
			  &rp->rp_lock_ost);
	if (rc)
		return rc;
	rp->rp_locked = true;
	rp->rp_locked_at = now;
	return 0;
}

static void repair_unlock(struct repair *rp)
{
	if (rp->rp_locked)
		cl_unlock_rows(rp->rp_fs, &rp->rp_fid, rp->rp_lock_ost, 0, CL_ALL_ROWS, true);
	rp->rp_locked = false;
}

/* Starts, fetches (into @rep) or stops the watch on the file at its lock
 * OST (the one the whole-file lock was last taken at). */
static int repair_watch(struct repair *rp, uint32_t action, struct nc_watch_rep *rep)
{
	return cl_watch(rp->rp_fs, &rp->rp_fid, rp->rp_lock_ost, action, rep);
}

/*
 * Regenerates the chunks of @row that lie on stripes in @targets (a bit
 * mask) from the other chunks, and writes them.
 */
static int repair_row(struct repair *rp, uint64_t row, uint64_t targets)
{
	struct nc_layout *l = &rp->rp_layout, wl;
	uint32_t k = l->l_k, m = l->l_m, total = k + m, S = l->l_stripe_size;
	struct cl_chunk_op ops[NC_EC_MAX_CHUNKS];
	uint8_t *buf, *bufs[NC_EC_MAX_CHUNKS];
	bool present[NC_EC_MAX_CHUNKS], want[NC_EC_MAX_CHUNKS];
	int n = 0, nt = 0, rc;

	buf = malloc((size_t)total * S);
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < total; i++) {
		uint32_t stripe;
		uint64_t off;

		bufs[i] = buf + (size_t)i * S;
		if (i < k)
			nc_layout_data_loc(l, row * k + i, &stripe, &off);
		else
			nc_layout_parity_loc(l, row, i - k, &stripe, &off);
		want[i] = targets >> stripe & 1;
		present[i] = false;
		if (!want[i])
			ops[n++] = (struct cl_chunk_op){ .co_chunk = i, .co_len = S,
							 .co_buf = bufs[i] };
	}
	rc = cl_chunk_ops_run(rp->rp_fs, &rp->rp_fid, l, row, ops, n, NC_OP_OBJ_READ);
	if (rc)
		goto out;
	for (int j = 0; j < n; j++)
		present[ops[j].co_chunk] = ops[j].co_status == 0;
	rc = nc_ec_decode(rp->rp_ec, S, bufs, present, want);
	if (rc)
		goto out;
	/* The targets are stale or on a replaced OST: write them anyway. */
	wl = *l;
	for (uint32_t s = 0; s < wl.l_stripe_count; s++)
		if (targets >> s & 1)
			wl.l_shards[s].ls_flags &= ~(NC_SHARD_STALE | CL_SHARD_REQUEST_FLAGS);
	n = 0;
	for (uint32_t i = 0; i < total; i++)
		if (want[i])
			ops[n++] = (struct cl_chunk_op){ .co_chunk = i, .co_len = S,
							 .co_buf = bufs[i] };
	nt = n;
	rc = cl_chunk_ops_run(rp->rp_fs, &rp->rp_fid, &wl, row, ops, n, NC_OP_OBJ_WRITE);
	for (int j = 0; !rc && j < n; j++)
		if (ops[j].co_status)
			rc = ops[j].co_status;
	if (!rc)
		rp->rp_st.chunks_fixed += (uint64_t)nt;
out:
	free(buf);
	return rc;
}

/*
 * The rows the objects hold data in, as their OSTs see them now (shards in
 * @skip and stale ones are not asked; an unreachable OST is passed over at
 * once, not waited for: the rebuild holds the file's lock meanwhile; a row
 * is written to every parity shard and at least one data shard, so while
 * no more than m shards are out, one of those asked holds it).
 * A writer sends its data before the size update that makes it visible, so
 * a write that ended just before the rebuild took the file's lock may have
 * put rows past the size the rebuild opened the file with: those rows need
 * rebuilding too before the marks go.  *@answered (unless NULL) counts the OSTs
 * that answered.
 */
static uint64_t repair_rows_stored(struct repair *rp, uint64_t skip, uint32_t *answered)
{
	const struct nc_layout *l = &rp->rp_layout;
	uint64_t S = l->l_stripe_size, N = l->l_stripe_count, w = l->l_k + l->l_m, rows = 0;
	uint32_t got = 0;

	for (uint32_t s = 0; s < l->l_stripe_count; s++) {
		struct nc_obj_req o = { .or_ost = l->l_shards[s].ls_ost,
					.or_fid = *nc_layout_obj_fid(l, &rp->rp_fid) };
		struct nc_obj_rep rep = { 0 };
		struct nc_cconn *cc;
		uint64_t last;
		int rc;

		if ((skip >> s & 1) || (l->l_shards[s].ls_flags & NC_SHARD_STALE))
			continue;
		if (cl_ost_conn(rp->rp_fs, o.or_ost, &cc))
			continue;
		rc = cl_rpc_once_rep(cc, NC_OP_OBJ_STAT, (nc_xdr_fn)nc_wire_obj_req, &o,
				     (nc_xdr_fn)nc_wire_obj_rep, &rep);
		if (rc == 0 || rc == -ENOENT)
			got++;  /* an object never written holds no rows */
		if (rc || !rep.op_size)
			continue;
		last = (rep.op_size + S - 1) / S - 1;   /* its last chunk */
		if ((last * N + s) / w + 1 > rows)
			rows = (last * N + s) / w + 1;
	}
	if (answered)
		*answered = got;
	return rows;
}

/*
 * Cuts the objects of the shards in @targets to what @rows whole rows
 * need.  A rebuilt shard then holds nothing but what the rebuild wrote:
 * its OST may have missed truncations while it was marked stale (they
 * skip stale shards), and old bytes left past the rows written would
 * later sit in a row the file grows into, where parity counts them as
 * zeros, and would corrupt every degraded read of that row.
 */
static int repair_cut(struct repair *rp, uint64_t targets, uint64_t rows)
{
	const struct nc_layout *l = &rp->rp_layout;
	uint64_t size = rows * l->l_stripe_size * l->l_k;

	for (uint32_t s = 0; s < l->l_stripe_count; s++) {
		struct nc_obj_req o = { .or_ost = l->l_shards[s].ls_ost,
					.or_fid = *nc_layout_obj_fid(l, &rp->rp_fid),
					.or_off = nc_layout_obj_size(l, s, size) };
		struct nc_cconn *cc;
		int rc;

		if (!(targets >> s & 1))
			continue;
		rc = cl_ost_conn(rp->rp_fs, o.or_ost, &cc);
		if (!rc)
			rc = cl_rpc_once(cc, NC_OP_OBJ_TRUNC, (nc_xdr_fn)nc_wire_obj_req, &o);
		if (rc)
			return rc;
	}
	return 0;
}

static void repair_progress(struct repair *rp, uint64_t done)
{
	if (rp->rp_cb)
		rp->rp_cb(done, rp->rp_rows, rp->rp_arg);
}

/* The stale shards of the file, and those to regenerate (@ost's too). */
static void repair_targets(const struct repair *rp, uint32_t ost, uint64_t *stale,
			   uint64_t *targets)
{
	*stale = *targets = 0;
	for (uint32_t s = 0; s < rp->rp_layout.l_stripe_count; s++) {
		const struct nc_layout_shard *ls = &rp->rp_layout.l_shards[s];

		if (ls->ls_flags & NC_SHARD_STALE)
			*stale |= 1ull << s;
		if ((ls->ls_flags & NC_SHARD_STALE) || (ost != NACRE_OST_ANY && ls->ls_ost == ost))
			*targets |= 1ull << s;
	}
}

/*
 * Regenerates @row: @alone under the lock of that row alone (which renews
 * a watch of the file at that OST; rp_moved notes a lock taken elsewhere
 * during a rebuild by rows), else under the whole-file lock, renewed.
 */
static int repair_one_row(struct repair *rp, uint64_t row, uint64_t targets, bool alone)
{
	uint32_t ost;
	int rc;

	if (!alone) {
		rc = repair_lock(rp);
		return rc ? rc : repair_row(rp, row, targets);
	}
	rc = cl_lock_rows(rp->rp_fs, &rp->rp_fid, &rp->rp_layout, row, 1, true, &ost);
	if (rc)
		return rc;
	if (rp->rp_by_rows && ost != rp->rp_watch_ost)
		rp->rp_moved = true;
	rc = repair_row(rp, row, targets);
	cl_unlock_rows(rp->rp_fs, &rp->rp_fid, ost, row, 1, true);
	return rc;
}

/*
 * With the whole file locked: what the watch recorded since it (re)started,
 * into @rep (ranges in order), and *@first lowered to the first row in it.
 * With @restart the watch starts again, empty (no writer locks meanwhile:
 * the whole file is ours); else it ends.  An error means writers may have
 * gone unseen: the watch is gone (its lease ran out, its OSS restarted, our
 * connection closed), the row locks went to another OST (rp_moved; the
 * watching one did not answer), or the record is not in order.
 */
static int repair_watch_take(struct repair *rp, bool restart, struct nc_watch_rep *rep,
			     uint64_t *first)
{
	int rc;

	rc = rp->rp_moved || rp->rp_lock_ost != rp->rp_watch_ost ?
		     -ENOENT : repair_watch(rp, NC_WATCH_FETCH, rep);
	for (uint32_t i = 0; !rc && i < rep->wr_count; i++)
		if (rep->wr_start[i] >= rep->wr_end[i] ||
		    (i && rep->wr_start[i] < rep->wr_end[i - 1]))
			rc = -NC_E_PROTO;
	if (!rc && rep->wr_count && rep->wr_start[0] < *first)
		*first = rep->wr_start[0];
	if (!rc && restart)
		rc = repair_watch(rp, NC_WATCH_START, NULL);
	if (rc || !restart)
		repair_watch(rp, NC_WATCH_STOP, NULL);
	if (rc && rp->rp_moved)
		nc_info("client", "rebuild of " NC_FID_FMT ": its row locks went to another OST "
			"than OST %u, which watched its writers: every row again",
			NC_FID_ARGS(&rp->rp_fid), rp->rp_watch_ost);
	else if (rc)
		nc_info("client", "rebuild of " NC_FID_FMT ": the watch of its writers at OST %u "
			"is gone (%s; the OSS restarted, or the watch's lease ran out): "
			"every row again", NC_FID_ARGS(&rp->rp_fid), rp->rp_watch_ost,
			nc_strerror(rc));
	return rc;
}

/*
 * The rows the objects hold now (repair_rows_stored()) in *@stored, or
 * -EHOSTDOWN when fewer than k OSTs answered: they could hide rows, which
 * a cut would then take off the rebuilt shards for good (and there would
 * be too few to rebuild from anyway).
 */
static int repair_rows_now(struct repair *rp, uint64_t targets, uint64_t *stored)
{
	uint32_t answered = 0;

	*stored = repair_rows_stored(rp, targets, &answered);
	return answered < rp->rp_layout.l_k ? -EHOSTDOWN : 0;
}

/* The first row from @row on that lies in one of @rep's ranges (in order,
 * *@i the first not yet passed; @rep may be NULL) or is @tail or beyond. */
static uint64_t repair_next_row(const struct nc_watch_rep *rep, uint32_t *i, uint64_t row,
				uint64_t tail)
{
	uint32_t n = rep ? rep->wr_count : 0;

	while (*i < n && rep->wr_end[*i] <= row)
		(*i)++;
	if (row >= tail || (*i < n && rep->wr_start[*i] <= row))
		return row;
	return *i < n && rep->wr_start[*i] < tail ? rep->wr_start[*i] : tail;
}

/*
 * Rebuilds again the rows below @stored that lie in @rep's ranges or from
 * @tail on, each @alone or under the whole-file lock (repair_one_row());
 * counted in *@redone.
 */
static int repair_redo(struct repair *rp, uint64_t targets, const struct nc_watch_rep *rep,
		       uint64_t tail, uint64_t stored, bool alone, uint64_t *redone)
{
	uint32_t i = 0;
	int rc = 0;

	for (uint64_t row = repair_next_row(rep, &i, 0, tail); !rc && row < stored;
	     row = repair_next_row(rep, &i, row + 1, tail)) {
		rc = repair_one_row(rp, row, targets, alone);
		if (!rc)
			(*redone)++;
	}
	return rc;
}

/*
 * Takes the stale marks of the file from the MDS once its lock is held: a
 * writer may have marked another shard between the open and the lock, and
 * a shard marked stale must be neither a source nor left as it is.
 */
static int repair_refresh_marks(struct repair *rp)
{
	struct nc_layout *cur = malloc(sizeof(*cur));
	struct nc_layout *l = &rp->rp_layout;
	int rc;

	if (!cur)
		return -ENOMEM;
	rc = cl_md_getlayout(rp->rp_fs, &rp->rp_fid, cur);
	if (!rc && cur->l_stripe_count != l->l_stripe_count)
		rc = -ESTALE; /* re-laid out meanwhile (migrated): try again */
	for (uint32_t s = 0; !rc && s < l->l_stripe_count; s++)
		if (cur->l_shards[s].ls_ost != l->l_shards[s].ls_ost)
			rc = -ESTALE;
	for (uint32_t s = 0; !rc && s < l->l_stripe_count; s++)
		l->l_shards[s].ls_flags = (l->l_shards[s].ls_flags & ~NC_SHARD_STALE) |
					  (cur->l_shards[s].ls_flags & NC_SHARD_STALE);
	free(cur);
	return rc;
}

/*
 * After a first pass by rows, counting the rows it redoes in *@redone:
 *  - a second pass by rows over what writers locked during the first, so
 *    that little is left for the end;
 *  - the end, with the whole file locked again: the rows writers locked
 *    during the second pass (every row when they may have gone unseen),
 *    and the rows added past those the first pass knew of, under stale
 *    marks taken afresh (a shard a writer failed meanwhile is no source; it
 *    stays marked).
 * *@cut comes in as the rows the file had at the start and becomes the
 * rows the rebuilt shards must keep (for repair_cut()): those up to the
 * first row anyone locked, and from there on what the objects hold now (a
 * truncation may have cut them).
 */
static int repair_finish_by_rows(struct repair *rp, uint64_t targets, uint64_t *cut,
				 uint64_t *redone)
{
	struct nc_watch_rep *rep = calloc(1, sizeof(*rep));
	bool lost = true;
	uint64_t stored;
	int rc;

	if (!rep)
		return -ENOMEM;
	rc = repair_lock(rp);
	if (!rc) {
		lost = repair_watch_take(rp, true, rep, cut) != 0;
		if (!lost)
			rc = repair_refresh_marks(rp);
		repair_unlock(rp);
	}
	if (!rc && !lost && rep->wr_count) {
		rc = repair_rows_now(rp, targets, &stored);
		if (!rc)
			rc = repair_redo(rp, targets, rep, CL_ALL_ROWS, stored, true, redone);
	}
	if (!rc)
		rc = repair_lock(rp);
	if (!rc && (lost || repair_watch_take(rp, false, rep, cut))) {
		rep->wr_count = 1;
		rep->wr_start[0] = 0;
		rep->wr_end[0] = CL_ALL_ROWS;
		*cut = 0;
	}
	if (!rc)
		rc = repair_refresh_marks(rp);
	if (!rc)
		rc = repair_rows_now(rp, targets, &stored);
	if (!rc)
		rc = repair_redo(rp, targets, rep, rp->rp_rows, stored, false, redone);
	if (!rc && stored > *cut)
		*cut = stored;
	free(rep);
	return rc;
}

NACRE_API int nacre_rebuild_fid(struct nacre_fs *fs, const struct nacre_fid *fid, uint32_t ost,
				nacre_progress_fn cb, void *arg, struct nacre_repair_stats *st)
{
	struct repair *rp = malloc(sizeof(*rp));
	uint64_t targets = 0, stale = 0, extra = 0, cut;
	int rc;

	if (!rp)
		return -ENOMEM;
	rc = repair_open(rp, fs, fid, cb, arg);
	if (rc)
		goto out;
	repair_targets(rp, ost, &stale, &targets);
	if (!targets)
		goto out;
	if (!rp->rp_layout.l_m) {
		rc = -EIO; /* plain striping keeps no redundancy to rebuild from */
		goto out;
	}
	cl_count(fs, CL_CTR_REBUILD_FILES, 1);
	cl_count(fs, CL_CTR_REBUILD_ROWS_PENDING, rp->rp_rows);
	/* Locked from the start, even for a file empty at open. */
	rc = repair_lock(rp);
	if (!rc)
		rc = repair_refresh_marks(rp);
	if (!rc) {
		uint64_t before = targets;

		repair_targets(rp, ost, &stale, &targets);
		targets |= before; /* a mark cleared meanwhile: rewriting is harmless */
	}
	/* Where the lock OST keeps a watch, the pass locks one row at a time
	 * and writers of the file go on meanwhile; the rows they lock are
	 * redone at the end. */
	if (!rc && repair_watch(rp, NC_WATCH_START, NULL) == 0) {
		rp->rp_by_rows = true;
		rp->rp_watch_ost = rp->rp_lock_ost;
		repair_unlock(rp);
	}
	for (uint64_t row = 0; !rc && row < rp->rp_rows; row++) {
		rc = repair_one_row(rp, row, targets, rp->rp_by_rows);
		if (rc)
			break;
		rp->rp_st.rows++;
		cl_count(fs, CL_CTR_REBUILD_ROWS, 1);
		cl_uncount(fs, CL_CTR_REBUILD_ROWS_PENDING, 1);
		repair_progress(rp, row + 1);
	}
	cut = rp->rp_rows;
	if (!rc && rp->rp_by_rows) {
		rc = repair_finish_by_rows(rp, targets, &cut, &extra);
	} else if (!rc) {
		/* Under the lock no writer adds rows: those written before it
		 * count, and with fewer than k OSTs answering some may hide. */
		uint64_t stored;

		rc = repair_rows_now(rp, targets, &stored);
		if (!rc)
			rc = repair_redo(rp, targets, NULL, rp->rp_rows, stored, false, &extra);
		cut += extra;
	}
	/* A failure midway leaves the watch: end it rather than wait for
	 * its lease (it is gone already when the end took it). */
	if (rc && rp->rp_by_rows)
		cl_watch(fs, &rp->rp_fid, rp->rp_watch_ost, NC_WATCH_STOP, NULL);
	if (!rc)
		rc = repair_lock(rp);
	if (!rc)
		rc = repair_cut(rp, targets, cut);
	/* Rows a failure left undone are no longer pending. */
	cl_uncount(fs, CL_CTR_REBUILD_ROWS_PENDING, rp->rp_rows - rp->rp_st.rows);
	cl_count(fs, CL_CTR_REBUILD_ROWS, extra);
	rp->rp_st.rows += extra;
	cl_count(fs, CL_CTR_REBUILD_CHUNKS, rp->rp_st.chunks_fixed);
	/* For a rebuild, every chunk it had to regenerate was a bad one. */
	rp->rp_st.chunks_bad = rp->rp_st.chunks_fixed;
	for (uint32_t s = 0; !rc && s < rp->rp_layout.l_stripe_count; s++) {
		if (!(stale >> s & 1))
			continue;
		rc = cl_shard_set(fs, &rp->rp_cred, &rp->rp_fid, &rp->rp_layout, s, 0,
				  NC_SHARD_STALE);
		if (!rc) {
			rp->rp_st.shards_cleared++;
			cl_count(fs, CL_CTR_REBUILD_SHARDS_CLEARED, 1);
		}
	}
	repair_unlock(rp);
out:
	if (rc > 0)
		rc = 0;
	if (st)
		*st = rp->rp_st;
	free(rp);
	return rc;
}

/* Asks OST of @stripe which checksum blocks of its object fail, and marks
 * the rows they belong to in @rows (a bit per row, grown as needed).  An
 * OST known to be down is not asked, and one that does not answer is not
 * waited for (-EHOSTDOWN, -ECONNREFUSED, ...): a scrub of many files with
 * an OSS down would otherwise wait the retry time on every file. */
static int scrub_shard(struct repair *rp, uint32_t stripe, uint8_t **rows, uint64_t *nrows_cap)
{
	const struct nc_layout *l = &rp->rp_layout;
	uint64_t S = l->l_stripe_size, N = l->l_stripe_count, w = l->l_k + l->l_m, from = 0;
	struct nc_verify_rep *rep = calloc(1, sizeof(*rep));
	struct nc_cconn *cc;
	int rc;

	if (!rep)
		return -ENOMEM;
	rc = cl_ost_conn(rp->rp_fs, l->l_shards[stripe].ls_ost, &cc);
	if (!rc && cl_ost_known_down(rp->rp_fs, l->l_shards[stripe].ls_ost, cc))
		rc = -EHOSTDOWN;
	while (!rc) {
		struct nc_obj_req o = { .or_ost = l->l_shards[stripe].ls_ost,
					.or_fid = *nc_layout_obj_fid(l, &rp->rp_fid),
					.or_off = from };

		rc = cl_rpc_once_rep(cc, NC_OP_OBJ_VERIFY, (nc_xdr_fn)nc_wire_obj_req, &o,
				     (nc_xdr_fn)nc_wire_verify_rep, rep);
		cl_ost_note_result(rp->rp_fs, o.or_ost, rc);
		if (rc)
			break;
		for (uint32_t i = 0; i < rep->vr_count; i++) {
			uint64_t g = rep->vr_bad[i] / S * N + stripe, row = g / w;

			if (row >= rp->rp_rows)
				continue; /* past the end of the file: unused bytes */
			if (row >= *nrows_cap) {
				uint64_t cap = (row + 1) * 2;
				uint8_t *nr = realloc(*rows, cap);

				if (!nr) {
					rc = -ENOMEM;
					break;
				}
				memset(nr + *nrows_cap, 0, cap - *nrows_cap);
				*rows = nr;
				*nrows_cap = cap;
			}
			(*rows)[row] = 1;
		}
		if (rc || !rep->vr_more || !rep->vr_count)
			break;
		from = rep->vr_bad[rep->vr_count - 1] + rep->vr_block;
	}
	free(rep);
	return rc;
}

NACRE_API int nacre_scrub_fid(struct nacre_fs *fs, const struct nacre_fid *fid,
			      nacre_progress_fn cb, void *arg, struct nacre_repair_stats *st)
{
	struct repair *rp = malloc(sizeof(*rp));
	uint8_t *rows = NULL;
	uint64_t cap = 0;
	int rc;

	if (!rp)
		return -ENOMEM;
	rc = repair_open(rp, fs, fid, cb, arg);
	if (rc)
		goto out;
	for (uint32_t s = 0; s < rp->rp_layout.l_stripe_count; s++) {
		uint64_t before = 0;

		/* Stale shards are rebuild's business. */
		if (rp->rp_layout.l_shards[s].ls_flags & NC_SHARD_STALE)
			continue;
		free(rows);
		rows = NULL;
		cap = 0;
		rc = scrub_shard(rp, s, &rows, &cap);
		if (rc == -ENOTCONN || rc == -ECONNREFUSED || rc == -EHOSTDOWN ||
		    rc == -ETIMEDOUT || rc == -ECONNRESET) {
			/* The caller reports it from the stats, once. */
			nc_debug("client", "scrub: OST %u unreachable: %s",
				 rp->rp_layout.l_shards[s].ls_ost, nc_strerror(rc));
			rp->rp_st.shards_unverified++;
			rc = 0;
			continue;
		}
		if (rc)
			break;
		for (uint64_t r = 0; r < cap; r++)
			before += rows[r];
		rp->rp_st.chunks_bad += before;
		if (!before)
			continue;
		if (!rp->rp_layout.l_m) {
			rc = -EIO; /* corrupt and no parity to repair from */
			continue;
		}
		/* Row by row, each under its own lock: the shard is not stale,
		 * so writers write it too, and a row repaired from the others
		 * under its lock stays right; no mark waits for the end. */
		for (uint64_t r = 0; r < cap && !rc; r++)
			if (rows[r])
				rc = repair_one_row(rp, r, 1ull << s, true);
	}
	rp->rp_st.rows = rp->rp_rows;
	cl_count(fs, CL_CTR_SCRUB_FILES, 1);
	cl_count(fs, CL_CTR_SCRUB_BAD_CHUNKS, rp->rp_st.chunks_bad);
	cl_count(fs, CL_CTR_REBUILD_CHUNKS, rp->rp_st.chunks_fixed);
	repair_progress(rp, rp->rp_rows);
	repair_unlock(rp);
out:
	if (rc > 0)
		rc = 0;
	if (st)
		*st = rp->rp_st;
	free(rows);
	free(rp);
	return rc;
}
