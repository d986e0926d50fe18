/* SPDX-License-Identifier: MIT */
/*
 * The MDS writer thread.
 *
 * Group commit: LMDB has one writer at a time and every commit costs an
 * fsync, so requests that change the namespace go to one writer thread,
 * which runs up to MDS_BATCH_MAX queued ones in one transaction (each in a
 * nested transaction of its own, atomic as before), commits once, and only
 * then sends their replies.  Concurrent creates share one fsync.  A batch
 * takes no more changes than the LMDB map has room for, and once the map
 * is down to its reserve (mds_ns_reserve()) changes that grow it get
 * ENOSPC while removals go on (docs/design.md, "Full OSTs and a full MDT").
 *
 * Recovery (docs/design.md, "Recovery"): after a start, changes that lay
 * out objects wait until the OSTs have registered again; resent changes
 * are answered from their reply records (mds/rpc.c, mds/ns_reply.c), which
 * this thread also expires, with abandoned migrations.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/errors.h"
#include "common/log.h"
#include "mds/server_int.h"

/*
 * Recovery: after a restart the OSSes take a moment to register again, and
 * a file created meanwhile would get a layout over the few OSTs already
 * back (its shards on the others born stale) or none at all (an error for
 * the application).  So for up to MDS_RECOVERY_MS after a start, requests
 * that lay out objects wait until every OST the MDT knows (and an
 * administrator has not deactivated) is up again.  The window is shorter
 * than a client's request timeout (30 s), so no waiting client gives up.
 */
#define MDS_RECOVERY_MS 20000
/*
 * A reply record is kept at least MDS_REPLY_KEEP_S after it was written,
 * and never removed in the first MDS_REPLY_GRACE_S after a start, so a
 * client still retrying after a long outage finds its record: clients give
 * up after their retry window (a minute by default), far shorter.  The
 * writer looks for old records every MDS_REPLY_SWEEP_S.
 */
#define MDS_REPLY_KEEP_S 3600
#define MDS_REPLY_GRACE_S 600
#define MDS_REPLY_SWEEP_S 60
/* A migration whose client has not swapped (or aborted) a day after its
 * ALLOC is abandoned (the client died): its new objects are destroyed.
 * Copies slower than that cannot finish (nacre(1), migrate). */
#define MDS_MIGRATE_EXPIRE_S 86400

/* Requests that may lay out new objects on the OSTs. */
static bool op_lays_out(uint16_t opcode)
{
	return opcode == NC_OP_CREATE || opcode == NC_OP_SETLAYOUT ||
	       opcode == NC_OP_PACK_ALLOC || opcode == NC_OP_MIGRATE;
}

/* Every OST the MDT knows and an administrator left active is up. */
static bool osts_all_back(struct mds_server *mds)
{
	bool all = true;

	pthread_mutex_lock(&mds->ms_ost_lock);
	for (uint32_t i = 0; i < NC_MAX_OSTS && all; i++) {
		const struct mds_ost_live *ol = &mds->ms_osts[i];

		if (ol->ol_known && !(ol->ol_info.o_state & NC_OST_INACTIVE) && !ol->ol_up)
			all = false;
	}
	pthread_mutex_unlock(&mds->ms_ost_lock);
	return all;
}

/* Ends recovery once the OSTs are back or the window is over, handing
 * the requests that waited to the writer in their order. */
void mds_recovery_check(struct mds_server *mds)
{
	bool back, expired;
	size_t released = 0;
	struct nc_req *req;

	pthread_mutex_lock(&mds->ms_wq_lock);
	if (!mds->ms_recovering) {
		pthread_mutex_unlock(&mds->ms_wq_lock);
		return;
	}
	pthread_mutex_unlock(&mds->ms_wq_lock);
	back = osts_all_back(mds);
	expired = nc_now_ms() >= mds->ms_recovery_end_ms;
	if (!back && !expired)
		return;
	pthread_mutex_lock(&mds->ms_wq_lock);
	if (mds->ms_recovering) {
		mds->ms_recovering = false;
		while ((req = nc_reqq_pop(&mds->ms_parked))) {
			if (nc_reqq_push(&mds->ms_wq, req))
				nc_req_reply_err(req, -ENOMEM);
			released++;
		}
		pthread_cond_signal(&mds->ms_wq_cond);
		nc_info("mds", "recovery over: %s; %zu waiting request(s) go on",
			back ? "every OST is back" : "the window closed with OSTs still down",
			released);
	}
	pthread_mutex_unlock(&mds->ms_wq_lock);
}

void mds_recovery_begin(struct mds_server *mds)
{
	if (osts_all_back(mds))
		return;
	mds->ms_recovering = true;
	mds->ms_recovery_end_ms = nc_now_ms() + MDS_RECOVERY_MS;
	nc_info("mds", "recovery: new layouts wait up to %d s for the OSTs to register",
		MDS_RECOVERY_MS / 1000);
}

void mds_server_queue_write(struct mds_server *mds, struct nc_req *req)
{
	int rc;

	pthread_mutex_lock(&mds->ms_wq_lock);
	if (mds->ms_recovering && op_lays_out(req->rq_hdr.mh_opcode)) {
		rc = nc_reqq_push(&mds->ms_parked, req);
	} else {
		rc = nc_reqq_push(&mds->ms_wq, req);
		if (!rc)
			pthread_cond_signal(&mds->ms_wq_cond);
	}
	pthread_mutex_unlock(&mds->ms_wq_lock);
	if (rc)
		nc_req_reply_err(req, rc);
}

/* NACRE_MDS_FAULT=crash-after-commit:OPCODE[:N] (tests only). */
void mds_fault_parse(struct mds_server *mds)
{
	const char *env = getenv("NACRE_MDS_FAULT");
	char name[32];
	int count = 1;

	if (!env || !*env)
		return;
	if (sscanf(env, "crash-after-commit:%31[A-Z_]:%d", name, &count) < 1 || count < 1) {
		nc_warn("mds", "NACRE_MDS_FAULT='%s' not understood; ignored", env);
		return;
	}
	for (unsigned int op = 1; op < 256; op++) {
		if (nc_op_is_known((uint16_t)op) && !strcmp(nc_op_name((uint16_t)op), name)) {
			mds->ms_fault_op = (uint16_t)op;
			mds->ms_fault_left = count;
			nc_warn("mds", "fault injection: the MDS dies after committing %s (%d times)",
				name, count);
			return;
		}
	}
	nc_warn("mds", "NACRE_MDS_FAULT: no opcode %s; ignored", name);
}

/* Dies as a crash would, after a batch that ran the fault's opcode is
 * durable and before any reply of it is sent. */
static void fault_after_commit(struct mds_server *mds)
{
	if (--mds->ms_fault_left > 0)
		return;
	nc_error("mds", "fault injection: dying after committing %s, before its reply",
		 nc_op_name(mds->ms_fault_op));
	_exit(70);
}

/* Removes old reply records and abandoned migrations, at most once a
 * minute, from the writer. */
static void replies_sweep(struct mds_server *mds)
{
	int64_t now = (int64_t)time(NULL);
	uint64_t removed = 0;
	int rc;

	if (now < mds->ms_sweep_s)
		return;
	mds->ms_sweep_s = now + MDS_REPLY_SWEEP_S;
	if (now < mds->ms_started_s + MDS_REPLY_GRACE_S)
		return;
	rc = mds_ns_reply_expire(mds->ms_ns, now - MDS_REPLY_KEEP_S, &removed);
	if (rc)
		nc_warn("mds", "removing old reply records: %s", nc_strerror(rc));
	else if (removed)
		nc_debug("mds", "removed %" PRIu64 " old reply records", removed);
	mds_metrics_replay(mds->ms_metrics, 0, removed);
	rc = mds_ns_migrate_expire(mds->ms_ns, now - MDS_MIGRATE_EXPIRE_S, &removed);
	if (rc)
		nc_warn("mds", "expiring abandoned migrations: %s", nc_strerror(rc));
	else if (removed)
		nc_warn("mds", "%" PRIu64 " migration(s) abandoned by their client for a day: "
			"their new objects go to the destroy queue", removed);
}

/*
 * Changes that may grow the MDT.  Once the map is down to its reserve
 * (mds_ns_reserve()) they get ENOSPC; the others (unlink, rmdir, setattr
 * and size updates, renames, stale marks, clearing the changelog, OST
 * registration and administration) still run on the reserve, so that a
 * full MDT can be emptied and files being written can be closed.
 */
static bool writer_op_grows(uint16_t opcode)
{
	switch (opcode) {
	case NC_OP_CREATE:
	case NC_OP_LINK:
	case NC_OP_SETLAYOUT:
	case NC_OP_XATTR_SET:
	case NC_OP_FID_GRANT:
	case NC_OP_PACK_ALLOC:
	case NC_OP_PACK_COMMIT:
	case NC_OP_PACK_SWITCH:
	case NC_OP_MIGRATE:
	case NC_OP_POOL:
		return true;
	default:
		return false;
	}
}

/* Whether the MDT is down to its reserve now (@left: the map's free
 * bytes, @map: its size, UINT64_MAX and 0 when they cannot be read); logs
 * each change of state once. */
static bool writer_mdt_full(struct mds_server *mds, uint64_t *left, uint64_t *map)
{
	bool full;

	*left = UINT64_MAX;
	*map = 0;
	full = mds_ns_is_full(mds->ms_ns, left, map);
	if (full && !mds->ms_mdt_full)
		nc_warn("mds", "MDT is full: %" PRIu64 " of %" PRIu64 " bytes of the map free, "
			"the reserve for removals is %" PRIu64 "; creates get ENOSPC until files "
			"are removed (or the MDS restarts with a larger --map-size)", *left, *map,
			mds_ns_reserve(*map));
	else if (!full && mds->ms_mdt_full)
		nc_info("mds", "MDT has room again: %" PRIu64 " of %" PRIu64 " bytes of the "
			"map free", *left, *map);
	mds->ms_mdt_full = full;
	return full;
}

/*
 * A generous bound of what one change adds to the map within a batch (the
 * pages its nested transaction copies or splits in each table it touches).
 * A batch takes no more changes than the map has room for, down to half
 * the reserve, so that its commit always finds the pages it needs: one
 * change that still finds the map full fails alone with ENOSPC, but a
 * commit that failed would fail every change of the batch.
 */
#define WRITER_OP_BYTES (64u << 10)

/* What @req may add to the map: the bound above, and twice what it
 * carries for the requests that store what they carry (inline files'
 * bytes, in records that spill onto overflow pages, copied on write). */
static uint64_t writer_op_bytes(const struct nc_req *req)
{
	switch (req->rq_hdr.mh_opcode) {
	case NC_OP_PACK_COMMIT:
	case NC_OP_PACK_SWITCH:
		return WRITER_OP_BYTES + 2ull * req->rq_hdr.mh_body_len;
	default:
		return WRITER_OP_BYTES;
	}
}

/* Runs the first requests of @reqs (@n > 0) in one batch, as many as the
 * map has room for, and replies once it is durable.  Returns how many it
 * took. */
static size_t writer_batch_some(struct mds_server *mds, struct nc_req **reqs, size_t n)
{
	uint64_t left, map, budget;
	bool full = writer_mdt_full(mds, &left, &map), fault_op_ran = false;
	size_t i = n;
	int rc;

	budget = left > mds_ns_reserve(map) / 2 ? left - mds_ns_reserve(map) / 2 : 0;
	mds_rpc_hold_begin();
	rc = mds_ns_batch_begin(mds->ms_ns);
	if (!rc) {
		for (i = 0; i < n; i++) {
			uint64_t cost = writer_op_bytes(reqs[i]);

			if (i > 0 && budget < cost)
				break;  /* the rest go into the next batch */
			/* Refused before it runs: nothing to commit or undo.  A
			 * resend is not: it may have been executed before, and
			 * gets its recorded reply. */
			if (full && writer_op_grows(reqs[i]->rq_hdr.mh_opcode) &&
			    !(reqs[i]->rq_hdr.mh_flags & NC_MF_RESEND)) {
				nc_req_reply_err(reqs[i], -ENOSPC);
				continue;
			}
			/* Noted before it runs: a reply not held (an error
			 * found before the change) frees it. */
			if (reqs[i]->rq_hdr.mh_opcode == mds->ms_fault_op)
				fault_op_ran = true;
			mds_handle_op(mds, reqs[i]);
			budget -= budget < cost ? budget : cost;
		}
		rc = mds_ns_batch_end(mds->ms_ns);
		if (rc)
			nc_error("mds", "group commit of %zu requests failed: %s", i, nc_strerror(rc));
	} else {
		for (i = 0; i < n; i++)
			nc_req_reply_err(reqs[i], rc);
	}
	if (!rc && fault_op_ran && mds->ms_fault_left > 0)
		fault_after_commit(mds);
	mds_rpc_hold_end(rc);
	/* Unlinks in the batch may have queued objects: they are durable now. */
	mds_server_kick_destroy(mds);
	return i;
}

/* Runs @n requests in as few batches as the map's room allows. */
static void writer_batch(struct mds_server *mds, struct nc_req **reqs, size_t n)
{
	size_t done = 0;

	while (done < n)
		done += writer_batch_some(mds, reqs + done, n - done);
	replies_sweep(mds);
}

void *mds_writer_main(void *arg)
{
	struct mds_server *mds = arg;
	struct nc_req *reqs[MDS_BATCH_MAX];

	pthread_mutex_lock(&mds->ms_wq_lock);
	for (;;) {
		size_t n = 0;

		while (!mds->ms_wq.rq_len && !mds->ms_writer_stop)
			pthread_cond_wait(&mds->ms_wq_cond, &mds->ms_wq_lock);
		if (!mds->ms_wq.rq_len)
			break; /* stopping, and nothing left */
		while (n < MDS_BATCH_MAX && (reqs[n] = nc_reqq_pop(&mds->ms_wq)))
			n++;
		pthread_mutex_unlock(&mds->ms_wq_lock);
		writer_batch(mds, reqs, n);
		pthread_mutex_lock(&mds->ms_wq_lock);
	}
	pthread_mutex_unlock(&mds->ms_wq_lock);
	return NULL;
}
