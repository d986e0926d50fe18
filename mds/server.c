/* SPDX-License-Identifier: MIT */
/*
 * MDS setup, the live OST registry and the destroy thread.
 *
 * Destroy queue: unlinking the last link of a file records (fid, layout) in
 * LMDB in the same transaction (mds/ns.c).  This thread walks the queue,
 * asks each OST that holds an object to destroy it, and removes the record
 * once every object is gone.  Records whose OSTs are down stay queued and
 * are retried on every pass, also after an MDS restart.
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
 * The destroy thread also polls the free space of the OSTs: a full one
 * gets no new objects, as if it were down.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/errors.h"
#include "common/log.h"
#include "mds/catchup.h"
#include "mds/pack_gc.h"
#include "mds/server.h"

struct mds_ost_live {
	bool ol_known;
	bool ol_up;
	bool ol_full;           /* its free space is below ost_full_below() */
	uint64_t ol_conn;       /* connection that registered it */
	struct nc_ost_info ol_info;     /* o_state: only NC_OST_INACTIVE */
};

/* Connections from the MDS to OSSes, for destroys. */
struct mds_oss_conn {
	char oc_addr[NC_ADDR_MAX + 1];
	struct nc_cconn *oc_conn;
};

#define MDS_BATCH_MAX 64

struct mds_server {
	struct mds_conf ms_conf;
	/* the writer thread and its queue (FIFO of requests) */
	pthread_t ms_writer;
	bool ms_writer_started;
	bool ms_writer_stop;
	pthread_mutex_t ms_wq_lock;
	pthread_cond_t ms_wq_cond;
	struct nc_reqq ms_wq;
	/* Recovery (below): changes that lay out new objects wait here, under
	 * ms_wq_lock, until the OSTs are back or the window closes. */
	bool ms_recovering;
	int64_t ms_recovery_end_ms;
	struct nc_reqq ms_parked;
	struct mds_ns *ms_ns;
	struct nc_server *ms_srv;
	char ms_bound[NC_ADDR_MAX + 1]; /* the addresses listened on */
	pthread_mutex_t ms_ost_lock;
	struct mds_ost_live ms_osts[NC_MAX_OSTS];
	/* destroy thread */
	pthread_t ms_destroy;
	bool ms_destroy_started;
	bool ms_stopping;
	bool ms_kicked;
	pthread_mutex_t ms_lock;
	pthread_cond_t ms_cond;
	struct mds_oss_conn ms_oss[NC_MAX_OSTS];
	int ms_noss;
	struct mds_pack_gc *ms_pack_gc;   /* NULL: compaction off */
	struct mds_catchup *ms_catchup;   /* NULL: catch-up rebuild off */
	struct mds_squash ms_squash;
	char ms_keyfile[4096];          /* the cluster key file, resolved */
	uint8_t ms_key[NC_AUTH_KEY_LEN];
	struct mds_metrics *ms_metrics;   /* NULL: no metrics port */
	bool ms_mdt_full;               /* writer thread only: logged as full */
	struct timespec ms_space_polled;        /* destroy thread: last OST statfs */
	/* Reply records (mds/ns_reply.c): when this MDS started and when the
	 * writer thread next removes old ones (Unix seconds). */
	int64_t ms_started_s;
	int64_t ms_sweep_s;
	/* Fault injection for tests (NACRE_MDS_FAULT, docs/testing.md): the
	 * MDS dies right after committing a batch holding this opcode, before
	 * any of its replies leave, ms_fault_left times. */
	uint16_t ms_fault_op;
	int ms_fault_left;
};

/*
 * A reply record is kept at least MDS_REPLY_KEEP_S after it was written,
 * and never removed in the first MDS_REPLY_GRACE_S after a start, so a
 * client still retrying after a long outage finds its record: clients give
 * up after their retry window (a minute by default), far shorter.
 */
#define MDS_REPLY_KEEP_S 3600
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

static void recovery_check(struct mds_server *mds);
#define MDS_REPLY_GRACE_S 600
#define MDS_REPLY_SWEEP_S 60
/* A migration whose client has not swapped (or aborted) a day after its
 * ALLOC is abandoned (the client died): its new objects are destroyed.
 * Copies slower than that cannot finish (say so in nacre(1)'s migrate). */
#define MDS_MIGRATE_EXPIRE_S 86400

const struct mds_squash *mds_server_squash(struct mds_server *mds)
{
	return &mds->ms_squash;
}

struct mds_ns *mds_server_ns(struct mds_server *mds)
{
	return mds->ms_ns;
}

struct mds_metrics *mds_server_metrics(struct mds_server *mds)
{
	return mds->ms_metrics;
}

void mds_server_ost_set(struct mds_server *mds, struct mds_ost_set *set)
{
	set->os_count = 0;
	set->os_ndown = 0;
	pthread_mutex_lock(&mds->ms_ost_lock);
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++) {
		const struct mds_ost_live *ol = &mds->ms_osts[i];

		set->os_full[i] = false;
		if (!ol->ol_known || !mds_ost_is_eligible(&ol->ol_info))
			continue;
		/* A full OST takes no new objects, as if it were down. */
		set->os_full[i] = ol->ol_up && ol->ol_full;
		if (ol->ol_up && !ol->ol_full)
			set->os_index[set->os_count++] = i;
		else
			set->os_down[set->os_ndown++] = i;
	}
	pthread_mutex_unlock(&mds->ms_ost_lock);
}

void mds_server_ost_list(struct mds_server *mds, struct nc_ost_list_rep *rep)
{
	rep->ol_count = 0;
	pthread_mutex_lock(&mds->ms_ost_lock);
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++) {
		if (!mds->ms_osts[i].ol_known)
			continue;
		rep->ol_osts[rep->ol_count] = mds->ms_osts[i].ol_info;
		rep->ol_osts[rep->ol_count].o_state =
			(mds->ms_osts[i].ol_up ? NC_OST_UP : NC_OST_DOWN) |
			(mds->ms_osts[i].ol_info.o_state & NC_OST_INACTIVE);
		rep->ol_count++;
	}
	pthread_mutex_unlock(&mds->ms_ost_lock);
}

int mds_server_ost_register(struct mds_server *mds, const struct nc_ost_info *ost,
			    uint64_t conn_id)
{
	struct mds_ost_live *ol;
	uint32_t flags;
	int rc;

	if (ost->o_index >= NC_MAX_OSTS)
		return -EINVAL;
	if (ost->o_state & NC_OSTREG_REPLACE) {
		uint64_t marked;

		rc = mds_ns_ost_replace(mds->ms_ns, ost, &marked);
		if (!rc)
			mds_metrics_stale(mds->ms_metrics, marked, 0);
		if (!rc)
			nc_warn("mds", "OST %u was replaced (new uuid): %" PRIu64 " files have "
				"stale shards there; %s nacre rebuild --ost %u", ost->o_index,
				marked, mds->ms_catchup ? "the catch-up rebuilds them, or" : "run",
				ost->o_index);
	} else {
		rc = mds_ns_ost_register(mds->ms_ns, ost);
	}
	if (rc) {
		nc_warn("mds", "OST %u registration refused: %s", ost->o_index, nc_strerror(rc));
		return rc;
	}
	pthread_mutex_lock(&mds->ms_ost_lock);
	ol = &mds->ms_osts[ost->o_index];
	flags = ol->ol_known ? ol->ol_info.o_state & NC_OST_INACTIVE : 0;
	ol->ol_known = true;
	ol->ol_info = *ost;
	ol->ol_info.o_state = flags;     /* the administrator's, kept */
	if (!ol->ol_up)
		nc_info("mds", "OST %u is up at %s", ost->o_index, ost->o_addr);
	ol->ol_up = true;
	ol->ol_conn = conn_id;
	pthread_mutex_unlock(&mds->ms_ost_lock);
	mds_catchup_ost_up(mds->ms_catchup, ost->o_index);
	recovery_check(mds);
	mds_server_kick_destroy(mds);
	return 0;
}

int mds_server_ost_admin(struct mds_server *mds, const struct nc_cred *cred, uint32_t idx,
			 uint32_t op)
{
	bool active;
	int rc;

	if (op == NC_OSTADM_ACTIVATE)
		active = true;
	else if (op == NC_OSTADM_DEACTIVATE)
		active = false;
	else
		return -EINVAL;
	rc = mds_ns_ost_set_active(mds->ms_ns, cred, idx, active);
	if (rc)
		return rc;
	pthread_mutex_lock(&mds->ms_ost_lock);
	if (active)
		mds->ms_osts[idx].ol_info.o_state &= ~NC_OST_INACTIVE;
	else
		mds->ms_osts[idx].ol_info.o_state |= NC_OST_INACTIVE;
	pthread_mutex_unlock(&mds->ms_ost_lock);
	nc_info("mds", "OST %u %s: it %s new objects", idx,
		active ? "activated" : "deactivated", active ? "gets" : "gets no");
	return 0;
}

static void conn_closed(struct nc_srv_conn *conn, void *arg)
{
	struct mds_server *mds = arg;
	uint64_t id = nc_srv_conn_id(conn);

	pthread_mutex_lock(&mds->ms_ost_lock);
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++) {
		struct mds_ost_live *ol = &mds->ms_osts[i];

		if (ol->ol_known && ol->ol_up && ol->ol_conn == id) {
			ol->ol_up = false;
			nc_info("mds", "OST %u is down (its OSS at %s disconnected)", i,
				ol->ol_info.o_addr);
		}
	}
	pthread_mutex_unlock(&mds->ms_ost_lock);
}

static int load_osts(struct mds_server *mds)
{
	struct nc_ost_info *list = calloc(NC_MAX_OSTS, sizeof(*list));
	uint32_t n = 0;
	int rc;

	if (!list)
		return -ENOMEM;
	rc = mds_ns_ost_list(mds->ms_ns, list, NC_MAX_OSTS, &n);
	for (uint32_t i = 0; !rc && i < n; i++) {
		if (list[i].o_index >= NC_MAX_OSTS)
			continue;
		mds->ms_osts[list[i].o_index].ol_known = true;
		mds->ms_osts[list[i].o_index].ol_info = list[i];
		mds->ms_osts[list[i].o_index].ol_info.o_state &= NC_OST_INACTIVE;
	}
	free(list);
	return rc;
}

/* ---- the writer thread (group commit) ---- */

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
static void recovery_check(struct mds_server *mds)
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
static void fault_parse(struct mds_server *mds)
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

/* Dies as a crash would, after the batch is durable and before any reply
 * of it is sent, when the batch holds the fault's opcode. */
static void fault_after_commit(struct mds_server *mds, struct nc_req **reqs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (reqs[i]->rq_hdr.mh_opcode != mds->ms_fault_op)
			continue;
		if (--mds->ms_fault_left > 0)
			return;
		nc_error("mds", "fault injection: dying after committing %s, before its reply",
			 nc_op_name(mds->ms_fault_op));
		_exit(70);
	}
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

/* Runs the first requests of @reqs (@n > 0) in one batch, as many as the
 * map has room for, and replies once it is durable.  Returns how many it
 * took. */
static size_t writer_batch_some(struct mds_server *mds, struct nc_req **reqs, size_t n)
{
	uint64_t left, map, budget;
	bool full = writer_mdt_full(mds, &left, &map);
	size_t i = n;
	int rc;

	budget = left > mds_ns_reserve(map) / 2 ? left - mds_ns_reserve(map) / 2 : 0;
	mds_rpc_hold_begin();
	rc = mds_ns_batch_begin(mds->ms_ns);
	if (!rc) {
		for (i = 0; i < n; i++) {
			if (i > 0 && budget < WRITER_OP_BYTES)
				break;  /* the rest go into the next batch */
			/* Refused before it runs: nothing to commit or undo.  A
			 * resend is not: it may have been executed before, and
			 * gets its recorded reply. */
			if (full && writer_op_grows(reqs[i]->rq_hdr.mh_opcode) &&
			    !(reqs[i]->rq_hdr.mh_flags & NC_MF_RESEND)) {
				nc_req_reply_err(reqs[i], -ENOSPC);
				continue;
			}
			mds_handle_op(mds, reqs[i]);
			budget -= budget < WRITER_OP_BYTES ? budget : WRITER_OP_BYTES;
		}
		rc = mds_ns_batch_end(mds->ms_ns);
		if (rc)
			nc_error("mds", "group commit of %zu requests failed: %s", i, nc_strerror(rc));
	} else {
		for (i = 0; i < n; i++)
			nc_req_reply_err(reqs[i], rc);
	}
	if (!rc && mds->ms_fault_left > 0)
		fault_after_commit(mds, reqs, i);
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

static void *writer_main(void *arg)
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

/* ---- destroy thread ---- */

void mds_server_kick_destroy(struct mds_server *mds)
{
	pthread_mutex_lock(&mds->ms_lock);
	mds->ms_kicked = true;
	pthread_cond_signal(&mds->ms_cond);
	pthread_mutex_unlock(&mds->ms_lock);
}

static struct nc_cconn *oss_conn(struct mds_server *mds, const char *addr)
{
	struct nc_cconn_opts co = { .co_role = NC_ROLE_MDS, .co_timeout_ms = 10000,
				    .co_retry_ms = -1, .co_key = mds->ms_key };
	struct mds_oss_conn *oc;

	for (int i = 0; i < mds->ms_noss; i++)
		if (!strcmp(mds->ms_oss[i].oc_addr, addr))
			return mds->ms_oss[i].oc_conn;
	if (mds->ms_noss == NC_MAX_OSTS)
		return NULL;
	oc = &mds->ms_oss[mds->ms_noss];
	if (nc_cconn_new(addr, mds->ms_conf.mc_fsname, &co, &oc->oc_conn))
		return NULL;
	snprintf(oc->oc_addr, sizeof(oc->oc_addr), "%s", addr);
	mds->ms_noss++;
	return oc->oc_conn;
}

/* Destroys every object of @rec; 0 when all are gone. */
/* True when the live inode @fid (if it still exists) has an object on OST
 * @idx: a re-laid-out file reuses its FID as object name, so its new object
 * on an OST of the old layout must survive the old layout's destroy. */
static bool object_in_use(const struct nc_layout *cur, bool have_cur, const struct nc_fid *fid,
			  const struct nc_fid *obj, uint32_t idx)
{
	/* A migrated file names its objects apart from the old ones. */
	if (!have_cur || (cur->l_flags & NC_LAYOUT_PACKED) ||
	    !nc_fid_eq(nc_layout_obj_fid(cur, fid), obj))
		return false;
	for (uint32_t i = 0; i < cur->l_stripe_count; i++)
		if (cur->l_shards[i].ls_ost == idx)
			return true;
	return false;
}

static int destroy_objects(struct mds_server *mds, const struct mds_destroy_rec *rec)
{
	const struct nc_fid *obj = nc_layout_obj_fid(&rec->dr_layout, &rec->dr_fid);
	struct nc_layout cur;
	bool have_cur;
	int result = 0;

	have_cur = mds_ns_getlayout(mds->ms_ns, &rec->dr_fid, &cur) == 0 &&
		   !(cur.l_flags & NC_LAYOUT_TEMPLATE);
	for (uint32_t i = 0; i < rec->dr_layout.l_stripe_count; i++) {
		struct nc_obj_req o = { 0 };
		struct nc_ost_info info;
		struct nc_cconn *cc;
		struct nc_call call;
		uint32_t idx = rec->dr_layout.l_shards[i].ls_ost;
		bool up;
		int rc;

		if (idx >= NC_MAX_OSTS ||
		    object_in_use(&cur, have_cur, &rec->dr_fid, obj, idx))
			continue;
		pthread_mutex_lock(&mds->ms_ost_lock);
		up = mds->ms_osts[idx].ol_known && mds->ms_osts[idx].ol_up;
		info = mds->ms_osts[idx].ol_info;
		pthread_mutex_unlock(&mds->ms_ost_lock);
		if (!up) {
			result = -EHOSTDOWN;
			continue;
		}
		cc = oss_conn(mds, info.o_addr);
		if (!cc) {
			result = -ENOMEM;
			continue;
		}
		o.or_ost = idx;
		o.or_fid = *obj;
		rc = nc_cconn_rpc(cc, NC_OP_OBJ_DESTROY, (nc_xdr_fn)nc_wire_obj_req, &o, NULL,
				  NULL, &call);
		if (rc) {
			nc_debug("mds", "destroy " NC_FID_FMT " on OST %u: %s",
				 NC_FID_ARGS(&rec->dr_fid), idx, nc_strerror(rc));
			result = rc;
			continue;
		}
		nc_call_fini(&call);
	}
	return result;
}

/*
 * An OST counts as full when its free space is below 2% of its size, at
 * most 64 MiB: new layouts leave it out (mds_server_ost_set()) until it has
 * more again.
 */
static uint64_t ost_full_below(uint64_t total)
{
	uint64_t t = total / 50;

	return t < (64ull << 20) ? t : 64ull << 20;
}

/* Asks OST @idx at @addr how much space it has; updates and logs its full
 * state on a change. */
static void ost_space_check(struct mds_server *mds, uint32_t idx, const char *addr)
{
	struct nc_obj_req o = { .or_ost = idx };
	struct nc_statfs_rep rep = { 0 };
	struct nc_call call;
	struct nc_cconn *cc;
	bool full, was;
	int rc;

	cc = oss_conn(mds, addr);
	if (!cc)
		return;
	rc = nc_cconn_rpc(cc, NC_OP_OST_STATFS, (nc_xdr_fn)nc_wire_obj_req, &o,
			  (nc_xdr_fn)nc_wire_statfs_rep, &rep, &call);
	if (rc) {
		nc_debug("mds", "statfs of OST %u: %s", idx, nc_strerror(rc));
		return;
	}
	nc_call_fini(&call);
	full = rep.sr_stat.s_avail < ost_full_below(rep.sr_stat.s_total);
	pthread_mutex_lock(&mds->ms_ost_lock);
	was = mds->ms_osts[idx].ol_full;
	mds->ms_osts[idx].ol_full = full;
	pthread_mutex_unlock(&mds->ms_ost_lock);
	if (full && !was)
		nc_warn("mds", "OST %u is full (%" PRIu64 " of %" PRIu64 " bytes free): new "
			"files leave it out until space is freed", idx, rep.sr_stat.s_avail,
			rep.sr_stat.s_total);
	else if (!full && was)
		nc_info("mds", "OST %u has room again (%" PRIu64 " of %" PRIu64 " bytes free)",
			idx, rep.sr_stat.s_avail, rep.sr_stat.s_total);
}

/* Polls the free space of every OST that is up, at most once a second
 * (the destroy thread is woken after every batch of changes). */
static void ost_space_poll(struct mds_server *mds)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec - mds->ms_space_polled.tv_sec < 1)
		return;
	mds->ms_space_polled = now;
	for (uint32_t i = 0; i < NC_MAX_OSTS && !mds->ms_stopping; i++) {
		char addr[NC_ADDR_MAX + 1];
		bool up;

		pthread_mutex_lock(&mds->ms_ost_lock);
		up = mds->ms_osts[i].ol_known && mds->ms_osts[i].ol_up;
		memcpy(addr, mds->ms_osts[i].ol_info.o_addr, sizeof(addr));
		pthread_mutex_unlock(&mds->ms_ost_lock);
		if (up)
			ost_space_check(mds, i, addr);
	}
}

static void destroy_pass(struct mds_server *mds)
{
	struct mds_destroy_rec *rec = malloc(sizeof(*rec));
	uint64_t after = 0;

	if (!rec)
		return;
	int reaped = mds_ns_pack_reap(mds->ms_ns);

	if (reaped > 0)
		nc_info("mds", "%d emptied pack%s queued for destruction", reaped,
			reaped == 1 ? "" : "s");
	while (!mds->ms_stopping && mds_ns_destroy_next(mds->ms_ns, after, rec) == 0) {
		after = rec->dr_id;
		if (rec->dr_not_before > time(NULL))
			continue; /* readers may still be on it */
		if (destroy_objects(mds, rec) == 0) {
			int rc = mds_ns_destroy_done(mds->ms_ns, rec->dr_id);

			if (rc)
				nc_error("mds", "destroy queue record %" PRIu64 ": %s",
					 rec->dr_id, nc_strerror(rc));
			else
				nc_debug("mds", "objects of " NC_FID_FMT " destroyed",
					 NC_FID_ARGS(&rec->dr_fid));
		}
	}
	free(rec);
}

static void *destroy_main(void *arg)
{
	struct mds_server *mds = arg;
	int interval = mds->ms_conf.mc_destroy_interval_ms;

	pthread_mutex_lock(&mds->ms_lock);
	while (!mds->ms_stopping) {
		struct timespec ts;

		mds->ms_kicked = false;
		pthread_mutex_unlock(&mds->ms_lock);
		recovery_check(mds);
		destroy_pass(mds);
		ost_space_poll(mds);
		pthread_mutex_lock(&mds->ms_lock);
		if (mds->ms_stopping || mds->ms_kicked)
			continue;
		nc_deadline_ms(&ts, CLOCK_REALTIME, interval);
		pthread_cond_timedwait(&mds->ms_cond, &mds->ms_lock, &ts);
	}
	pthread_mutex_unlock(&mds->ms_lock);
	return NULL;
}

/* ---- setup ---- */

/* Formatting makes the cluster key, unless one is there already (it may
 * have been made beforehand, and is never replaced). */
static int key_create(struct mds_server *mds)
{
	int rc = nc_auth_key_create(mds->ms_keyfile, NULL);

	if (rc == -EEXIST) {
		nc_info("mds", "using the existing cluster key %s", mds->ms_keyfile);
		return 0;
	}
	if (rc)
		nc_error("mds", "cannot create the cluster key %s: %s", mds->ms_keyfile,
			 nc_strerror(rc));
	else
		nc_info("mds", "created the cluster key %s", mds->ms_keyfile);
	return rc;
}

int mds_server_new(const struct mds_conf *conf, struct mds_server **out)
{
	struct nc_server_conf sc = { 0 };
	struct mds_server *mds;
	int rc;

	if (!conf->mc_dir || !conf->mc_fsname || !conf->mc_listen)
		return -EINVAL;
	mds = calloc(1, sizeof(*mds));
	if (!mds)
		return -ENOMEM;
	mds->ms_conf = *conf;
	if (mds->ms_conf.mc_destroy_interval_ms <= 0)
		mds->ms_conf.mc_destroy_interval_ms = 2000;
	if (mds->ms_conf.mc_pack_gc_interval_ms == 0)
		mds->ms_conf.mc_pack_gc_interval_ms = MDS_PACK_GC_INTERVAL_MS_DEFAULT;
	if (mds->ms_conf.mc_pack_gc_threshold == 0)
		mds->ms_conf.mc_pack_gc_threshold = MDS_PACK_GC_THRESHOLD_DEFAULT;
	if (!(mds->ms_conf.mc_pack_gc_threshold > 0 && mds->ms_conf.mc_pack_gc_threshold <= 1)) {
		free(mds);
		return -EINVAL;
	}
	{
		char err[128];

		rc = mds_squash_parse(&mds->ms_squash, conf->mc_root_squash, conf->mc_nosquash,
				      err, sizeof(err));
		if (rc) {
			nc_error("mds", "%s", err);
			free(mds);
			return rc;
		}
		if (mds->ms_squash.sq_on)
			nc_info("mds", "root squash: root of clients served as %u:%u, %u exempt network%s",
				mds->ms_squash.sq_uid, mds->ms_squash.sq_gid,
				mds->ms_squash.sq_nnets, mds->ms_squash.sq_nnets == 1 ? "" : "s");
	}
	pthread_mutex_init(&mds->ms_ost_lock, NULL);
	pthread_mutex_init(&mds->ms_lock, NULL);
	pthread_cond_init(&mds->ms_cond, NULL);
	pthread_mutex_init(&mds->ms_wq_lock, NULL);
	pthread_cond_init(&mds->ms_wq_cond, NULL);

	rc = nc_auth_key_path(conf->mc_keyfile, conf->mc_fsname, mds->ms_keyfile,
			      sizeof(mds->ms_keyfile));
	if (rc) {
		nc_error("mds", "cluster key file name: %s", nc_strerror(rc));
		goto out_free;
	}
	rc = mds_ns_open(conf->mc_dir, conf->mc_map_size, &mds->ms_ns);
	if (rc == -NC_E_NOTFMT && conf->mc_format) {
		rc = key_create(mds);
		if (!rc)
			rc = mds_ns_format(conf->mc_dir, conf->mc_fsname, NULL,
					   conf->mc_map_size);
		if (!rc) {
			nc_info("mds", "formatted MDT of %s in %s", conf->mc_fsname, conf->mc_dir);
			rc = mds_ns_open(conf->mc_dir, conf->mc_map_size, &mds->ms_ns);
		}
	}
	if (rc) {
		nc_error("mds", "MDT in %s: %s", conf->mc_dir, nc_strerror(rc));
		goto out_free;
	}
	if (strcmp(mds_ns_fsname(mds->ms_ns), conf->mc_fsname)) {
		nc_error("mds", "%s holds filesystem '%s', not '%s'", conf->mc_dir,
			 mds_ns_fsname(mds->ms_ns), conf->mc_fsname);
		rc = -NC_E_FSNAME;
		goto out_free;
	}
	rc = nc_auth_key_load(mds->ms_keyfile, mds->ms_key);
	if (rc) {
		nc_error("mds", "cluster key %s: %s", mds->ms_keyfile, nc_strerror(rc));
		goto out_free;
	}
	rc = load_osts(mds);
	if (rc)
		goto out_free;
	if (!osts_all_back(mds)) {
		mds->ms_recovering = true;
		mds->ms_recovery_end_ms = nc_now_ms() + MDS_RECOVERY_MS;
		nc_info("mds", "recovery: new layouts wait up to %d s for the OSTs to register",
			MDS_RECOVERY_MS / 1000);
	}
	mds_ns_changelog_enable(mds->ms_ns, conf->mc_changelog);
	if (conf->mc_changelog)
		nc_info("mds", "changelog on: namespace changes are recorded");

	sc.sc_name = "mds";
	sc.sc_key = mds->ms_key;
	sc.sc_fsname = conf->mc_fsname;
	sc.sc_role = NC_ROLE_MDS;
	sc.sc_threads = conf->mc_threads > 0 ? conf->mc_threads : 8;
	sc.sc_handler = mds_handle;
	sc.sc_replay = true;
	mds->ms_started_s = (int64_t)time(NULL);
	fault_parse(mds);
	sc.sc_closed = conn_closed;
	sc.sc_arg = mds;
	mds_ns_uuid(mds->ms_ns, sc.sc_uuid);
	rc = nc_server_new(&sc, &mds->ms_srv);
	if (rc)
		goto out_free;
	rc = nc_server_listen_list(mds->ms_srv, conf->mc_listen, mds->ms_bound,
				   sizeof(mds->ms_bound));
	if (rc) {
		nc_error("mds", "cannot listen on %s: %s", conf->mc_listen, nc_strerror(rc));
		goto out_free;
	}
	if (conf->mc_metrics) {
		rc = mds_metrics_new(mds, mds->ms_srv, &mds->ms_metrics);
		if (rc)
			goto out_free;
	}
	*out = mds;
	return 0;
out_free:
	mds_server_free(mds);
	return rc;
}

/* Where the compaction thread reaches this MDS: its TCP address when it
 * has one (no RDMA needed on the MDS host), else the first. */
static int self_addr(struct mds_server *mds, char *buf, size_t len)
{
	char list[NC_ADDR_MAX + 1], *save = NULL, *tok, *pick = NULL;
	struct nc_addr a;

	snprintf(list, sizeof(list), "%s", mds->ms_bound);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!pick)
			pick = tok;
		if (!strncmp(tok, "tcp://", 6)) {
			pick = tok;
			break;
		}
	}
	if (!pick || nc_addr_parse(pick, &a))
		return -NC_E_ADDR;
	return mds_pack_gc_self_addr(pick, a.a_port, buf, len);
}

/* The compaction thread, a client of this MDS once it serves. */
static int pack_gc_start(struct mds_server *mds)
{
	struct mds_pack_gc_conf pc = {
		.pc_fsname = mds->ms_conf.mc_fsname,
		.pc_ns = mds->ms_ns,
		.pc_interval_ms = mds->ms_conf.mc_pack_gc_interval_ms,
		.pc_threshold = mds->ms_conf.mc_pack_gc_threshold,
		.pc_keyfile = mds->ms_keyfile,
	};
	char addr[NC_ADDR_MAX + 32];
	int rc;

	if (pc.pc_interval_ms < 0)
		return 0;
	rc = self_addr(mds, addr, sizeof(addr));
	if (rc)
		return rc;
	pc.pc_addr = addr;
	rc = mds_pack_gc_start(&pc, &mds->ms_pack_gc);
	if (rc)
		nc_error("mds", "pack compaction thread: %s", nc_strerror(rc));
	return rc;
}

void mds_server_kick_pack_gc(struct mds_server *mds)
{
	if (mds->ms_pack_gc)
		mds_pack_gc_kick(mds->ms_pack_gc);
}

static bool catchup_ost_is_up(void *arg, uint32_t ost)
{
	struct mds_server *mds = arg;
	bool up;

	pthread_mutex_lock(&mds->ms_ost_lock);
	up = mds->ms_osts[ost].ol_known && mds->ms_osts[ost].ol_up;
	pthread_mutex_unlock(&mds->ms_ost_lock);
	return up;
}

/* The catch-up rebuild thread, a client of this MDS once it serves. */
static int catchup_start(struct mds_server *mds)
{
	const struct mds_conf *c = &mds->ms_conf;
	struct mds_catchup_conf cc = {
		.cc_fsname = c->mc_fsname,
		.cc_keyfile = mds->ms_keyfile,
		.cc_ns = mds->ms_ns,
		.cc_workers = c->mc_catchup_workers > 0 ? c->mc_catchup_workers :
			      MDS_CATCHUP_WORKERS_DEFAULT,
		.cc_delay_ms = c->mc_catchup_delay_ms < 0 ? 0 : c->mc_catchup_delay_ms > 0 ?
			       c->mc_catchup_delay_ms : MDS_CATCHUP_DELAY_MS_DEFAULT,
		.cc_sweep_ms = c->mc_catchup_sweep_ms < 0 ? 0 : c->mc_catchup_sweep_ms > 0 ?
			       c->mc_catchup_sweep_ms : MDS_CATCHUP_SWEEP_MS_DEFAULT,
		.cc_up = catchup_ost_is_up,
		.cc_arg = mds,
	};
	char addr[NC_ADDR_MAX + 32];
	int rc;

	if (c->mc_no_catchup)
		return 0;
	rc = self_addr(mds, addr, sizeof(addr));
	if (rc)
		return rc;
	cc.cc_addr = addr;
	rc = mds_catchup_start(&cc, &mds->ms_catchup);
	if (rc)
		nc_error("mds", "catch-up rebuild thread: %s", nc_strerror(rc));
	return rc;
}

void mds_server_catchup_stats(struct mds_server *mds, struct mds_catchup_stats *st)
{
	mds_catchup_stats(mds->ms_catchup, st);
}

int mds_server_start(struct mds_server *mds)
{
	int rc = pthread_create(&mds->ms_writer, NULL, writer_main, mds);

	if (rc)
		return -rc;
	mds->ms_writer_started = true;
	/* Before serving, so no OST registers unseen; its first pass waits
	 * for the OSTs to come. */
	rc = catchup_start(mds);
	if (rc)
		return rc;
	rc = nc_server_start(mds->ms_srv);
	if (rc)
		return rc;
	rc = pthread_create(&mds->ms_destroy, NULL, destroy_main, mds);
	if (rc) {
		nc_server_stop(mds->ms_srv);
		return -rc;
	}
	mds->ms_destroy_started = true;
	if (mds->ms_metrics) {
		rc = mds_metrics_serve(mds->ms_metrics, mds->ms_conf.mc_metrics);
		if (rc)
			return rc;
	}
	return pack_gc_start(mds);
}

int mds_server_port(struct mds_server *mds)
{
	return nc_server_bound_port(mds->ms_srv, 0);
}

void mds_server_stop(struct mds_server *mds)
{
	if (!mds)
		return;
	/* Scrapes read what the rest tears down. */
	mds_metrics_stop(mds->ms_metrics);
	/* First: a pass under way needs this MDS to serve it. */
	mds_pack_gc_stop(mds->ms_pack_gc);
	mds->ms_pack_gc = NULL;
	mds_catchup_stop(mds->ms_catchup);
	mds->ms_catchup = NULL;
	if (mds->ms_destroy_started) {
		pthread_mutex_lock(&mds->ms_lock);
		mds->ms_stopping = true;
		pthread_cond_broadcast(&mds->ms_cond);
		pthread_mutex_unlock(&mds->ms_lock);
		pthread_join(mds->ms_destroy, NULL);
		mds->ms_destroy_started = false;
	}
	nc_server_stop(mds->ms_srv);
	/* After the service threads: nothing is queued any more; what is
	 * queued still runs (and its replies go to connections now closed). */
	if (mds->ms_writer_started) {
		struct nc_req *req;

		pthread_mutex_lock(&mds->ms_wq_lock);
		/* Their clients send them again to the next MDS. */
		while ((req = nc_reqq_pop(&mds->ms_parked)))
			nc_req_drop(req);
		mds->ms_writer_stop = true;
		pthread_cond_broadcast(&mds->ms_wq_cond);
		pthread_mutex_unlock(&mds->ms_wq_lock);
		pthread_join(mds->ms_writer, NULL);
		mds->ms_writer_started = false;
	}
}

void mds_server_free(struct mds_server *mds)
{
	if (!mds)
		return;
	mds_server_stop(mds);
	nc_server_free(mds->ms_srv);
	mds_metrics_free(mds->ms_metrics);
	for (int i = 0; i < mds->ms_noss; i++)
		nc_cconn_free(mds->ms_oss[i].oc_conn);
	mds_ns_close(mds->ms_ns);
	nc_reqq_fini(&mds->ms_wq);
	nc_reqq_fini(&mds->ms_parked);
	pthread_mutex_destroy(&mds->ms_wq_lock);
	pthread_cond_destroy(&mds->ms_wq_cond);
	pthread_mutex_destroy(&mds->ms_ost_lock);
	pthread_mutex_destroy(&mds->ms_lock);
	pthread_cond_destroy(&mds->ms_cond);
	nc_auth_wipe(mds->ms_key, sizeof(mds->ms_key));
	free(mds);
}
