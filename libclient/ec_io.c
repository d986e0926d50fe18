/* SPDX-License-Identifier: MIT */
/*
 * Erasure-coded data path (layouts with m > 0).
 *
 * Reads fetch the data chunks straight, in parallel, as plain striping
 * does; a piece whose shard is stale, whose OST fails or whose checksum
 * does not match is rebuilt from k other chunks of its row (isa-l decode)
 * over just the byte range needed.
 *
 * Writes hold a range lock on the rows they touch: every writer of a file
 * meets at the same lock OST (the first reachable OST in shard order), so
 * parity read-modify-write is serialised per row across clients.  A whole
 * row is encoded once and its k + m chunks written in parallel; a partial
 * row updates the parity with the delta of the changed bytes
 * (ec_encode_data_update), and falls back to reading, patching and
 * re-encoding the row when a shard it needs is unavailable.  A shard that
 * cannot be written is marked stale on the MDS before the write returns; a
 * row with more than m shards unavailable fails with EIO.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/ec.h"
#include "common/errors.h"
#include "common/log.h"
#include "libclient/cl_int.h"

#define LOCK_WAIT_MS (2 * NC_LOCK_LEASE_MS)

/* Errors that make one shard unavailable rather than fail the request. */
static bool err_is_shard_loss(int rc)
{
	return rc == -ENOTCONN || rc == -ECONNREFUSED || rc == -ETIMEDOUT ||
	       rc == -ECONNRESET || rc == -EHOSTDOWN || rc == -EHOSTUNREACH ||
	       rc == -ENODEV || rc == -EIO || rc == -NC_E_CHECKSUM || rc == -ECANCELED ||
	       rc == -EPIPE || rc == -ENOSPC || rc == -EROFS || rc == -ENETUNREACH;
}

int cl_ec_coder(struct nacre_fs *fs, const struct nc_layout *l, struct nc_ec **out)
{
	int rc = 0;

	if (l->l_k < 1 || l->l_k > NC_EC_MAX_K || l->l_m < 1 || l->l_m > NC_EC_MAX_M)
		return -NC_E_LAYOUT;
	pthread_mutex_lock(&fs->fs_lock);
	if (!fs->fs_ec[l->l_k][l->l_m])
		rc = nc_ec_new(l->l_k, l->l_m, &fs->fs_ec[l->l_k][l->l_m]);
	*out = fs->fs_ec[l->l_k][l->l_m];
	pthread_mutex_unlock(&fs->fs_lock);
	return rc;
}

int cl_rpc_once(struct nc_cconn *cc, uint16_t op, nc_xdr_fn enc, void *req)
{
	return cl_rpc_once_rep(cc, op, enc, req, NULL, NULL);
}

int cl_rpc_once_rep(struct nc_cconn *cc, uint16_t op, nc_xdr_fn enc, void *req,
		    nc_xdr_fn dec, void *rep)
{
	uint8_t body[256];
	struct nc_call call;
	struct nc_wait w;
	struct nc_xdr x;
	int rc;

	nc_xdr_init_encode(&x, body, sizeof(body));
	if (enc)
		enc(&x, req);
	if (x.x_err)
		return x.x_err;
	nc_wait_init(&w);
	nc_call_init(&call, op, body, (uint32_t)x.x_pos);
	call.c_wait = &w;
	rc = nc_cconn_submit(cc, &call);
	if (rc == 0) {
		nc_wait_all(&w);
		rc = call.c_status;
		if (rc == 0 && dec) {
			nc_xdr_init_decode(&x, call.c_rep_body, call.c_rep_body_len);
			dec(&x, rep);
			rc = nc_xdr_finish(&x);
		}
		nc_call_fini(&call);
	}
	nc_wait_fini(&w);
	return rc;
}

/* ---- chunks of a row ---- */

/* Where chunk @i (data i < k, parity i - k) of @row lives. */
static void chunk_loc(const struct nc_layout *l, uint64_t row, uint32_t i, uint32_t *stripe,
		      uint64_t *obj_off)
{
	if (i < l->l_k)
		nc_layout_data_loc(l, row * l->l_k + i, stripe, obj_off);
	else
		nc_layout_parity_loc(l, row, i - l->l_k, stripe, obj_off);
}

bool cl_chunk_usable(const struct nc_layout *l, uint64_t row, uint32_t i)
{
	uint32_t stripe;
	uint64_t obj_off;

	chunk_loc(l, row, i, &stripe, &obj_off);
	return !(l->l_shards[stripe].ls_flags & (NC_SHARD_STALE | CL_SHARD_FAILED));
}

/* Runs the reads or writes @ops[0..n) of chunk ranges of @row in parallel.
 * Unusable shards fail at once with -EHOSTDOWN; short reads are zero
 * filled; a shard whose I/O fails is marked CL_SHARD_FAILED in @l (this
 * request only).  Returns an error only when one is not a shard loss. */
int cl_chunk_ops_run(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_layout *l,
		     uint64_t row, struct cl_chunk_op *ops, int n, uint16_t opcode)
{
	struct cl_piece p[2 * NC_EC_MAX_CHUNKS];
	int idx[2 * NC_EC_MAX_CHUNKS], np = 0, rc = 0;

	if (n > 2 * NC_EC_MAX_CHUNKS)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		uint32_t stripe;
		uint64_t obj_off;

		ops[i].co_status = -EHOSTDOWN;
		if (ops[i].co_skip || !cl_chunk_usable(l, row, ops[i].co_chunk))
			continue;
		chunk_loc(l, row, ops[i].co_chunk, &stripe, &obj_off);
		memset(&p[np], 0, sizeof(p[np]));
		p[np].ip_ext.e_stripe = stripe;
		p[np].ip_ext.e_obj_off = obj_off + ops[i].co_lo;
		p[np].ip_ext.e_len = ops[i].co_len;
		ops[i].co_status = cl_piece_prepare(fs, fid, l, &p[np], opcode);
		if (ops[i].co_status)
			continue;
		if (opcode == NC_OP_OBJ_READ) {
			p[np].ip_call.c_bulk_dst = ops[i].co_buf;
			p[np].ip_call.c_bulk_dst_cap = ops[i].co_len;
		} else {
			p[np].ip_call.c_bulk = ops[i].co_buf;
			p[np].ip_call.c_bulk_len = ops[i].co_len;
		}
		idx[np++] = i;
	}
	cl_pieces_run(p, np, false);
	for (int j = 0; j < np; j++) {
		struct cl_chunk_op *op = &ops[idx[j]];
		uint32_t got = p[j].ip_call.c_rep_bulk_len;

		op->co_status = p[j].ip_call.c_status;
		cl_ost_note_result(fs, p[j].ip_req.or_ost, op->co_status);
		if (!op->co_status && opcode == NC_OP_OBJ_READ && got < op->co_len)
			memset(op->co_buf + got, 0, op->co_len - got);
	}
	cl_pieces_fini(p, np);
	for (int i = 0; i < n; i++) {
		uint32_t stripe;
		uint64_t obj_off;

		if (!ops[i].co_status)
			continue;
		if (!err_is_shard_loss(ops[i].co_status) && ops[i].co_status != -EHOSTDOWN) {
			if (!rc)
				rc = ops[i].co_status;
			continue;
		}
		chunk_loc(l, row, ops[i].co_chunk, &stripe, &obj_off);
		l->l_shards[stripe].ls_flags |= CL_SHARD_FAILED;
		if (ops[i].co_status == -ENOSPC)
			l->l_shards[stripe].ls_flags |= CL_SHARD_NOSPC;
	}
	return rc;
}

/*
 * Reads bytes [lo, lo + len) of every data chunk of @row into data[0..k),
 * decoding those that cannot be read from the parity.  -EIO when fewer
 * than k chunks of the row can be read.
 */
/* Whether reads of @row may leave out the chunks on silent OSTs: only
 * when the others can still be decoded (k of them usable and answering);
 * otherwise the silent ones are asked too, as the only way left. */
static bool row_skips_silent(struct nacre_fs *fs, struct nc_layout *l, uint64_t row)
{
	uint32_t answering = 0;

	for (uint32_t i = 0; i < l->l_k + l->l_m; i++) {
		uint32_t stripe;
		uint64_t obj_off;

		if (!cl_chunk_usable(l, row, i))
			continue;
		chunk_loc(l, row, i, &stripe, &obj_off);
		if (!cl_ost_is_silent(fs, l->l_shards[stripe].ls_ost))
			answering++;
	}
	return answering >= l->l_k;
}

/* True when chunk @i of @row is on a silent OST. */
static bool chunk_is_silent(struct nacre_fs *fs, const struct nc_layout *l, uint64_t row,
			    uint32_t i)
{
	uint32_t stripe;
	uint64_t obj_off;

	chunk_loc(l, row, i, &stripe, &obj_off);
	return cl_ost_is_silent(fs, l->l_shards[stripe].ls_ost);
}

/*
 * Reads bytes [lo, lo + len) of every data chunk of @row into data[0..k),
 * decoding those that cannot be read from the parity.  -EIO when fewer
 * than k chunks of the row can be read.  Chunks on silent OSTs are left
 * out while the row can be decoded without them.
 */
int cl_row_read_data(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_layout *l,
		     struct nc_ec *ec, uint64_t row, uint32_t lo, uint32_t len, uint8_t **data)
{
	uint32_t k = l->l_k, m = l->l_m, total = k + m, nops = 0, missing = 0;
	struct cl_chunk_op ops[NC_EC_MAX_CHUNKS];
	uint8_t *bufs[NC_EC_MAX_CHUNKS], *par;
	bool present[NC_EC_MAX_CHUNKS], want[NC_EC_MAX_CHUNKS];
	bool skip = row_skips_silent(fs, l, row);
	int rc;

	for (uint32_t i = 0; i < k; i++)
		ops[nops++] = (struct cl_chunk_op){ .co_chunk = i, .co_lo = lo, .co_len = len,
						    .co_buf = data[i],
						    .co_skip = skip && chunk_is_silent(fs, l, row, i) };
	rc = cl_chunk_ops_run(fs, fid, l, row, ops, (int)nops, NC_OP_OBJ_READ);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < k; i++) {
		bufs[i] = data[i];
		present[i] = ops[i].co_status == 0;
		want[i] = !present[i];
		missing += want[i];
	}
	if (!missing)
		return 0;
	par = malloc((size_t)m * len);
	if (!par)
		return -ENOMEM;
	nops = 0;
	for (uint32_t i = k; i < total; i++) {
		bufs[i] = par + (size_t)(i - k) * len;
		want[i] = false;
		ops[nops++] = (struct cl_chunk_op){ .co_chunk = i, .co_lo = lo, .co_len = len,
						    .co_buf = bufs[i],
						    .co_skip = skip && chunk_is_silent(fs, l, row, i) };
	}
	rc = cl_chunk_ops_run(fs, fid, l, row, ops, (int)nops, NC_OP_OBJ_READ);
	for (uint32_t i = k; !rc && i < total; i++)
		present[i] = ops[i - k].co_status == 0;
	if (!rc)
		rc = nc_ec_decode(ec, len, bufs, present, want);
	free(par);
	return rc;
}

/*
 * Takes the stale marks of @l from the MDS: other writers may have set
 * some since the file was opened, and a rebuild may have cleared some.
 * Clearing matters to a writer: one that still took a rebuilt shard for
 * stale would skip it, leaving old bytes there that no mark warns of.
 * The caller holds the rows' lock, and a rebuild clears marks under the
 * whole file's lock, so what the MDS says holds until the lock goes.
 * 0, or -errno when the MDS could not be asked (@l is left as it was).
 */
int cl_refresh_marks(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_layout *l)
{
	struct nc_layout *cur;
	int rc;

	if (!fid)
		return 0; /* new objects of a migration: no marks elsewhere */
	cur = malloc(sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	rc = cl_md_getlayout(fs, fid, cur);
	if (rc || cur->l_stripe_count != l->l_stripe_count)
		goto out;
	for (uint32_t s = 0; s < l->l_stripe_count; s++)
		if (cur->l_shards[s].ls_ost != l->l_shards[s].ls_ost)
			goto out; /* another layout: its marks say nothing of ours */
	for (uint32_t s = 0; s < l->l_stripe_count; s++)
		l->l_shards[s].ls_flags = (l->l_shards[s].ls_flags & ~NC_SHARD_STALE) |
					  (cur->l_shards[s].ls_flags & NC_SHARD_STALE);
out:
	free(cur);
	return rc;
}

static bool layout_has_stale(const struct nc_layout *l)
{
	for (uint32_t s = 0; s < l->l_stripe_count; s++)
		if (l->l_shards[s].ls_flags & NC_SHARD_STALE)
			return true;
	return false;
}

/* ---- reads ---- */

/* Rebuilds [e_file_off, + e_len) of one data chunk into @dst from its row. */
static int degraded_piece(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_layout *l,
			  struct nc_ec *ec, const struct nc_extent *e, uint8_t *dst)
{
	uint64_t S = l->l_stripe_size, chunk = e->e_file_off / S;
	uint64_t row = chunk / l->l_k;
	uint32_t j = (uint32_t)(chunk % l->l_k), lo = (uint32_t)(e->e_file_off % S);
	uint8_t *data[NC_EC_MAX_K], *buf;
	int rc;

	buf = malloc((size_t)l->l_k * e->e_len);
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < l->l_k; i++)
		data[i] = buf + (size_t)i * e->e_len;
	rc = cl_row_read_data(fs, fid, l, ec, row, lo, e->e_len, data);
	if (!rc)
		memcpy(dst, data[j], e->e_len);
	free(buf);
	return rc;
}

ssize_t cl_ec_read(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *layout,
		   void *buf, size_t len, uint64_t off)
{
	struct nc_extent ext[CL_IO_BATCH];
	struct cl_piece *p;
	struct nc_layout *l;
	struct nc_ec *ec;
	bool refreshed = false;
	size_t done = 0;
	int rc;

	rc = cl_ec_coder(fs, layout, &ec);
	if (rc)
		return rc;
	l = malloc(sizeof(*l));
	p = calloc(CL_IO_BATCH, sizeof(*p));
	if (!l || !p) {
		rc = -ENOMEM;
		goto out;
	}
	*l = *layout;
	while (done < len) {
		int n = nc_layout_map(l, off + done, len - done, ext, CL_IO_BATCH), np = 0;
		int pidx[CL_IO_BATCH];
		bool failed[CL_IO_BATCH];
		uint64_t batch = 0;

		if (n <= 0) {
			rc = n < 0 ? n : -NC_E_LAYOUT;
			break;
		}
		for (int i = 0; i < n; i++) {
			uint8_t *dst = (uint8_t *)buf + (ext[i].e_file_off - off);

			batch += ext[i].e_len;
			failed[i] = true;
			if (l->l_shards[ext[i].e_stripe].ls_flags & (NC_SHARD_STALE | CL_SHARD_FAILED))
				continue;
			/* Rebuilt from the row below, which asks a silent OST
			 * only when nothing else is left. */
			if (cl_ost_is_silent(fs, l->l_shards[ext[i].e_stripe].ls_ost))
				continue;
			memset(&p[np], 0, sizeof(p[np]));
			p[np].ip_ext = ext[i];
			if (cl_piece_prepare(fs, fid, l, &p[np], NC_OP_OBJ_READ))
				continue;
			p[np].ip_call.c_bulk_dst = dst;
			p[np].ip_call.c_bulk_dst_cap = ext[i].e_len;
			pidx[np++] = i;
		}
		cl_pieces_run(p, np, false);
		for (int j = 0; j < np; j++) {
			const struct nc_extent *e = &ext[pidx[j]];
			int st = p[j].ip_call.c_status;
			uint32_t got = p[j].ip_call.c_rep_bulk_len;

			cl_ost_note_result(fs, p[j].ip_req.or_ost, st);
			if (st) {
				if (st == -NC_E_CHECKSUM)
					cl_count(fs, CL_CTR_CHECKSUM_ERRORS, 1);
				if (!err_is_shard_loss(st)) {
					rc = st;
					break;
				}
				l->l_shards[e->e_stripe].ls_flags |= CL_SHARD_FAILED;
				continue;
			}
			failed[pidx[j]] = false;
			if (got < e->e_len)
				memset((uint8_t *)buf + (e->e_file_off - off) + got, 0,
				       e->e_len - got);
		}
		cl_pieces_fini(p, np);
		for (int i = 0; !rc && i < n; i++) {
			if (!failed[i])
				continue;
			if (!refreshed) {
				cl_refresh_marks(fs, fid, l);
				refreshed = true;
			}
			rc = degraded_piece(fs, fid, l, ec, &ext[i],
					    (uint8_t *)buf + (ext[i].e_file_off - off));
			if (!rc) {
				cl_count(fs, CL_CTR_DEGRADED_READS, 1);
				cl_count(fs, CL_CTR_DEGRADED_READ_BYTES, ext[i].e_len);
			}
		}
		if (rc)
			break;
		done += batch;
	}
out:
	free(p);
	free(l);
	return rc ? rc : (ssize_t)done;
}

/* ---- row locks ---- */

/*
 * Takes the range lock on rows [r0, r0 + nrows) at the file's lock OST:
 * the first OST in shard order that answers.  Waits (retrying) while
 * another writer holds an overlapping range.  *ost_out names the OST to
 * unlock at.
 */
int cl_lock_rows(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		 uint64_t r0, uint64_t nrows, bool repair, uint32_t *ost_out)
{
	struct timespec start, now;
	int delay_us = 200, rc = -EIO;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (uint32_t s = 0; s < l->l_stripe_count; s++) {
		struct nc_obj_req o = { .or_ost = l->l_shards[s].ls_ost, .or_fid = *fid,
					.or_off = r0, .or_len = nrows };
		struct nc_cconn *cc;

		rc = cl_ost_conn_as(fs, o.or_ost, repair, &cc);
		if (rc)
			continue;
		for (;;) {
			rc = cl_rpc_once(cc, NC_OP_OBJ_LOCK, (nc_xdr_fn)nc_wire_obj_req, &o);
			if (rc != -EAGAIN)
				break;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - start.tv_sec) * 1000 > LOCK_WAIT_MS)
				return -EDEADLK;
			usleep((useconds_t)delay_us);
			if (delay_us < 20000)
				delay_us *= 2;
		}
		if (rc == 0) {
			*ost_out = o.or_ost;
			return 0;
		}
		if (!err_is_shard_loss(rc))
			return rc;
	}
	return rc;
}

void cl_unlock_rows(struct nacre_fs *fs, const struct nc_fid *fid, uint32_t ost, uint64_t r0,
		    uint64_t nrows, bool repair)
{
	struct nc_obj_req o = { .or_ost = ost, .or_fid = *fid, .or_off = r0, .or_len = nrows };
	struct nc_cconn *cc;

	/* A lost unlock is released by the lease or by our connection closing. */
	if (cl_ost_conn_as(fs, ost, repair, &cc) == 0)
		cl_rpc_once(cc, NC_OP_OBJ_UNLOCK, (nc_xdr_fn)nc_wire_obj_req, &o);
}

/*
 * Starts, fetches (into @rep) or stops the watch on @fid at @ost (wire.h,
 * OBJ_WATCH), once, without retries.  -EOPNOTSUPP where that OSS speaks a
 * protocol older than the watch.
 */
int cl_watch(struct nacre_fs *fs, const struct nc_fid *fid, uint32_t ost, uint32_t action,
	     struct nc_watch_rep *rep)
{
	struct nc_obj_req o = { .or_ost = ost, .or_flags = action, .or_fid = *fid };
	struct nc_cconn *cc;
	int rc;

	rc = cl_ost_conn_as(fs, ost, true, &cc);
	if (rc)
		return rc;
	if (nc_cconn_peer_minor(cc) < NC_MINOR_WATCH)
		return -EOPNOTSUPP;
	if (action == NC_WATCH_FETCH)
		return cl_rpc_once_rep(cc, NC_OP_OBJ_WATCH, (nc_xdr_fn)nc_wire_obj_req, &o,
				       (nc_xdr_fn)nc_wire_watch_rep, rep);
	return cl_rpc_once(cc, NC_OP_OBJ_WATCH, (nc_xdr_fn)nc_wire_obj_req, &o);
}

/* ---- stale marks ---- */

int cl_shard_set(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		 struct nc_layout *l, uint32_t stripe, uint32_t set, uint32_t clear)
{
	struct nc_shard_req m = { .ss_cred = *cred, .ss_fid = *fid, .ss_shard = stripe,
				  .ss_set = set, .ss_clear = clear };
	struct nc_layout_msg *rep = calloc(1, sizeof(*rep));
	struct nc_call call;
	int rc;

	if (!rep)
		return -ENOMEM;
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_SHARD_STATE, (nc_xdr_fn)nc_wire_shard_req, &m,
			  (nc_xdr_fn)nc_wire_layout_msg, rep, &call);
	if (!rc) {
		nc_call_fini(&call);
		if (set & NC_SHARD_STALE)
			cl_count(fs, CL_CTR_SHARDS_MARKED_STALE, 1);
		if (stripe < l->l_stripe_count)
			l->l_shards[stripe].ls_flags =
				(l->l_shards[stripe].ls_flags | set) & ~clear;
	}
	free(rep);
	return rc;
}

/* Whether chunk @i of @row is on a shard whose OST said it is full. */
static bool chunk_is_nospc(const struct nc_layout *l, uint64_t row, uint32_t i)
{
	uint32_t stripe;
	uint64_t obj_off;

	chunk_loc(l, row, i, &stripe, &obj_off);
	return l->l_shards[stripe].ls_flags & CL_SHARD_NOSPC;
}

/* After the writes of one row: marks stale every shard that failed, or
 * fails when the row has fewer than k good shards: with ENOSPC when a full
 * OST is among the missing ones (the application is told the filesystem is
 * full, not that it is broken), else with EIO. */
static int row_settle(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		      struct nc_layout *l, uint64_t row, const struct cl_chunk_op *ops, int n)
{
	uint32_t total = l->l_k + l->l_m, bad = 0;
	bool nospc = false;
	int rc;

	for (uint32_t i = 0; i < total; i++) {
		if (cl_chunk_usable(l, row, i))
			continue;
		bad++;
		nospc |= chunk_is_nospc(l, row, i);
	}
	if (bad > l->l_m && nospc) {
		/* The application hears of it; the OSS logs its full OST once,
		 * so a client filling the filesystem does not log every write. */
		if (fid)
			nc_debug("client", "write of " NC_FID_FMT " row %" PRIu64 ": %u of %u "
				 "shards unavailable (OST full)", NC_FID_ARGS(fid), row, bad, total);
		return -ENOSPC;
	}
	if (bad > l->l_m) {
		if (fid)
			nc_warn("client", "write of " NC_FID_FMT " row %" PRIu64 ": %u of %u "
				"shards unavailable", NC_FID_ARGS(fid), row, bad, total);
		return -EIO;
	}
	for (int i = 0; i < n; i++) {
		uint32_t stripe;
		uint64_t obj_off;

		if (!ops[i].co_status)
			continue;
		chunk_loc(l, row, ops[i].co_chunk, &stripe, &obj_off);
		if (l->l_shards[stripe].ls_flags & NC_SHARD_STALE)
			continue;
		if (!fid) {
			/* A migration's new objects: the mark stays here and
			 * the migration gives up on them. */
			l->l_shards[stripe].ls_flags |= NC_SHARD_STALE;
			continue;
		}
		rc = cl_shard_set(fs, cred, fid, l, stripe, NC_SHARD_STALE, 0);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- writes ---- */

struct row_span {
	uint32_t rs_lo[NC_EC_MAX_K];    /* touched bytes of data chunk j */
	uint32_t rs_hi[NC_EC_MAX_K];    /* rs_lo == rs_hi: untouched */
	uint32_t rs_min, rs_max;        /* union over the touched chunks */
};

static void span_of(const struct nc_layout *l, uint64_t a, uint64_t b, struct row_span *sp)
{
	uint64_t S = l->l_stripe_size;

	sp->rs_min = (uint32_t)S;
	sp->rs_max = 0;
	for (uint32_t j = 0; j < l->l_k; j++) {
		uint64_t cs = j * S, ce = cs + S;
		uint64_t lo = a > cs ? a : cs, hi = b < ce ? b : ce;

		sp->rs_lo[j] = sp->rs_hi[j] = 0;
		if (lo >= hi)
			continue;
		sp->rs_lo[j] = (uint32_t)(lo - cs);
		sp->rs_hi[j] = (uint32_t)(hi - cs);
		if (sp->rs_lo[j] < sp->rs_min)
			sp->rs_min = sp->rs_lo[j];
		if (sp->rs_hi[j] > sp->rs_max)
			sp->rs_max = sp->rs_hi[j];
	}
}

/* Writes the new bytes of data chunks (from @src, row-relative @a..@b) and
 * the parity ranges given, then settles the row. */
static int row_commit(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		      struct nc_layout *l, uint64_t row, const struct row_span *sp,
		      const uint8_t *src, uint8_t *parity, uint32_t plo, uint32_t plen,
		      uint32_t pstride)
{
	struct cl_chunk_op ops[NC_EC_MAX_CHUNKS];
	uint64_t S = l->l_stripe_size;
	int n = 0, rc;

	for (uint32_t j = 0; j < l->l_k; j++) {
		if (sp->rs_lo[j] == sp->rs_hi[j])
			continue;
		ops[n++] = (struct cl_chunk_op){
			.co_chunk = j, .co_lo = sp->rs_lo[j], .co_len = sp->rs_hi[j] - sp->rs_lo[j],
			.co_buf = (uint8_t *)(uintptr_t)(src + j * S + sp->rs_lo[j]) };
	}
	for (uint32_t p = 0; p < l->l_m; p++)
		ops[n++] = (struct cl_chunk_op){ .co_chunk = l->l_k + p, .co_lo = plo,
						 .co_len = plen,
						 .co_buf = parity + (size_t)p * pstride };
	rc = cl_chunk_ops_run(fs, fid, l, row, ops, n, NC_OP_OBJ_WRITE);
	if (rc)
		return rc;
	return row_settle(fs, cred, fid, l, row, ops, n);
}

/*
 * Delta update of the parity for a partial row: reads the old bytes of the
 * touched data ranges and the parity over their union, applies the change
 * and writes both.  -EAGAIN when a shard it needs is unavailable (the
 * caller re-encodes the whole row instead).
 */
static int row_write_delta(struct nacre_fs *fs, const struct nc_cred *cred,
			   const struct nc_fid *fid, struct nc_layout *l, struct nc_ec *ec,
			   uint64_t row, const struct row_span *sp, const uint8_t *src)
{
	uint32_t k = l->l_k, m = l->l_m, plen = sp->rs_max - sp->rs_min;
	uint64_t S = l->l_stripe_size;
	struct cl_chunk_op ops[NC_EC_MAX_CHUNKS];
	uint8_t *old = NULL, *par = NULL, *pp[NC_EC_MAX_M];
	size_t oldlen = 0;
	int n = 0, rc;

	for (uint32_t j = 0; j < k; j++)
		if (sp->rs_lo[j] != sp->rs_hi[j] && !cl_chunk_usable(l, row, j))
			return -EAGAIN;
	for (uint32_t p = 0; p < m; p++)
		if (!cl_chunk_usable(l, row, k + p))
			return -EAGAIN;
	for (uint32_t j = 0; j < k; j++)
		oldlen += sp->rs_hi[j] - sp->rs_lo[j];
	old = malloc(oldlen);
	par = malloc((size_t)m * plen);
	if (!old || !par) {
		rc = -ENOMEM;
		goto out;
	}
	oldlen = 0;
	for (uint32_t j = 0; j < k; j++) {
		uint32_t len = sp->rs_hi[j] - sp->rs_lo[j];

		if (!len)
			continue;
		ops[n++] = (struct cl_chunk_op){ .co_chunk = j, .co_lo = sp->rs_lo[j],
						 .co_len = len, .co_buf = old + oldlen };
		oldlen += len;
	}
	for (uint32_t p = 0; p < m; p++) {
		pp[p] = par + (size_t)p * plen;
		ops[n++] = (struct cl_chunk_op){ .co_chunk = k + p, .co_lo = sp->rs_min,
						 .co_len = plen, .co_buf = pp[p] };
	}
	rc = cl_chunk_ops_run(fs, fid, l, row, ops, n, NC_OP_OBJ_READ);
	if (rc)
		goto out;
	for (int i = 0; i < n; i++) {
		if (ops[i].co_status) {
			rc = -EAGAIN;
			goto out;
		}
	}
	oldlen = 0;
	for (uint32_t j = 0; j < k; j++) {
		uint32_t len = sp->rs_hi[j] - sp->rs_lo[j];
		uint8_t *pj[NC_EC_MAX_M];

		if (!len)
			continue;
		for (uint32_t p = 0; p < m; p++)
			pj[p] = pp[p] + (sp->rs_lo[j] - sp->rs_min);
		rc = nc_ec_update(ec, j, len, old + oldlen, src + j * S + sp->rs_lo[j], pj);
		if (rc)
			goto out;
		oldlen += len;
	}
	rc = row_commit(fs, cred, fid, l, row, sp, src, par, sp->rs_min, plen, plen);
out:
	free(old);
	free(par);
	return rc;
}

/* Whole-row path: reads what the write does not cover (decoding around
 * unavailable shards), patches in @src, encodes and writes. */
static int row_write_full(struct nacre_fs *fs, const struct nc_cred *cred,
			  const struct nc_fid *fid, struct nc_layout *l, struct nc_ec *ec,
			  uint64_t row, const struct row_span *sp, const uint8_t *src, bool covered)
{
	uint32_t k = l->l_k, m = l->l_m;
	uint64_t S = l->l_stripe_size;
	uint8_t *rowbuf = NULL, *par, *data[NC_EC_MAX_K], *pp[NC_EC_MAX_M];
	const uint8_t *base = src;
	int rc;

	rowbuf = malloc((size_t)(covered ? m : k + m) * S);
	if (!rowbuf)
		return -ENOMEM;
	par = covered ? rowbuf : rowbuf + (size_t)k * S;
	if (!covered) {
		for (uint32_t j = 0; j < k; j++)
			data[j] = rowbuf + (size_t)j * S;
		rc = cl_row_read_data(fs, fid, l, ec, row, 0, (uint32_t)S, data);
		if (rc)
			goto out;
		for (uint32_t j = 0; j < k; j++)
			if (sp->rs_lo[j] != sp->rs_hi[j])
				memcpy(data[j] + sp->rs_lo[j], src + j * S + sp->rs_lo[j],
				       sp->rs_hi[j] - sp->rs_lo[j]);
		base = rowbuf;
	} else {
		for (uint32_t j = 0; j < k; j++)
			data[j] = (uint8_t *)(uintptr_t)(src + j * S);
	}
	for (uint32_t p = 0; p < m; p++)
		pp[p] = par + (size_t)p * S;
	nc_ec_encode(ec, S, data, pp);
	/* Parity changes only where data did: write the union range. */
	rc = row_commit(fs, cred, fid, l, row, sp, base, par + sp->rs_min, sp->rs_min,
			sp->rs_max - sp->rs_min, (uint32_t)S);
out:
	free(rowbuf);
	return rc;
}

int cl_ec_write(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		struct nc_layout *layout, const void *buf, size_t len, uint64_t off)
{
	uint64_t S = layout->l_stripe_size, rowbytes = S * layout->l_k;
	uint64_t r0 = off / rowbytes, r1 = (off + len - 1) / rowbytes;
	struct nc_layout *l;
	struct nc_ec *ec;
	uint32_t lock_ost;
	int rc;

	if (!len)
		return 0;
	rc = cl_ec_coder(fs, layout, &ec);
	if (rc)
		return rc;
	l = malloc(sizeof(*l));
	if (!l)
		return -ENOMEM;
	*l = *layout;
	/* New objects of a migration (@fid NULL) have no other writer. */
	rc = fid ? cl_lock_rows(fs, fid, l, r0, r1 - r0 + 1, false, &lock_ost) : 0;
	if (rc)
		goto out_free;
	/* Unsure whether a shard we take for stale was rebuilt meanwhile,
	 * writing around it could leave it silently old: fail instead. */
	rc = cl_refresh_marks(fs, fid, l);
	if (rc && !layout_has_stale(l))
		rc = 0;
	for (uint64_t row = r0; !rc && row <= r1; row++) {
		uint64_t rs = row * rowbytes, a = off > rs ? off - rs : 0;
		uint64_t b = off + len < rs + rowbytes ? off + len - rs : rowbytes;
		/* The row as if @buf held it whole: only [a, b) is read. */
		const uint8_t *src = (const uint8_t *)((uintptr_t)buf + rs - off);
		struct row_span sp;

		span_of(l, a, b, &sp);
		if (a == 0 && b == rowbytes) {
			rc = row_write_full(fs, cred, fid, l, ec, row, &sp, src, true);
			continue;
		}
		rc = row_write_delta(fs, cred, fid, l, ec, row, &sp, src);
		if (rc == -EAGAIN)
			rc = row_write_full(fs, cred, fid, l, ec, row, &sp, src, false);
	}
	if (fid)
		cl_unlock_rows(fs, fid, lock_ost, r0, r1 - r0 + 1, false);
	/* Keep the stale marks learnt, not this request's failures. */
	for (uint32_t s = 0; s < l->l_stripe_count; s++)
		layout->l_shards[s].ls_flags = l->l_shards[s].ls_flags & ~CL_SHARD_REQUEST_FLAGS;
	/* Reads ahead made while the rows changed are suspect. */
	if (fid)
		cl_ra_file_changed(fs, fid);
out_free:
	free(l);
	return rc;
}
