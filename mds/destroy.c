/* SPDX-License-Identifier: MIT */
/*
 * The MDS destroy thread.
 *
 * Destroy queue: unlinking the last link of a file records (fid, layout) in
 * LMDB in the same transaction (mds/ns.c).  This thread walks the queue,
 * asks each OST that holds an object to destroy it, and removes the record
 * once every object is gone.  Records whose OSTs are down stay queued and
 * are retried on every pass, also after an MDS restart.
 *
 * The thread also polls the free space of the OSTs (a full one gets no new
 * objects, as if it were down) and closes the recovery window once the
 * OSTs are back or its time is over (mds/writer.c).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/errors.h"
#include "common/log.h"
#include "mds/catchup.h"
#include "mds/server_int.h"

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

/*
 * An OSS whose process hangs (stopped, stuck in the kernel, its host cut
 * off without a reset) keeps its registration connection open, so only a
 * request's timeout tells (@what: the poll's statfs, or a destroy): such
 * an OST counts as down (no new objects, no destroys, listed down) until
 * the poll finds it answering again.  Logs the changes.
 */
static void ost_answered(struct mds_server *mds, uint32_t idx, bool answered,
			 const char *what)
{
	struct mds_ost_live *ol = &mds->ms_osts[idx];
	bool changed;

	pthread_mutex_lock(&mds->ms_ost_lock);
	changed = ol->ol_up && ol->ol_silent == answered;
	if (changed)
		ol->ol_silent = !answered;
	pthread_mutex_unlock(&mds->ms_ost_lock);
	if (!changed)
		return;
	if (!answered) {
		nc_warn("mds", "OST %u does not answer (%s timed out): new files leave it "
			"out until it does", idx, what);
		return;
	}
	nc_info("mds", "OST %u answers again", idx);
	/* Shards marked stale while it hung are rebuilt, as after a restart. */
	mds_catchup_ost_up(mds->ms_catchup, idx);
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
		up = mds_ost_serves(&mds->ms_osts[idx]);
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
			/* The next records leave a hung OST out at once: one
			 * timeout each would hold up the pass (and the poll
			 * after it) for as many timeouts as there are records. */
			if (rc == -ETIMEDOUT)
				ost_answered(mds, idx, false, "destroy");
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

/* One OST's statfs of a poll. */
struct ost_poll {
	uint32_t p_idx;
	int p_rc;               /* of the submit; then of the call */
	uint8_t p_body[64];
	struct nc_call p_call;
};

/* Submits the statfs of OST @p->p_idx at @addr; p_rc is 0 when it went. */
static void ost_poll_submit(struct mds_server *mds, struct ost_poll *p, const char *addr,
			    struct nc_wait *w)
{
	struct nc_obj_req o = { .or_ost = p->p_idx };
	struct nc_cconn *cc = oss_conn(mds, addr);
	struct nc_xdr x;

	p->p_rc = -ENOMEM;
	if (!cc)
		return;
	nc_xdr_init_encode(&x, p->p_body, sizeof(p->p_body));
	nc_wire_obj_req(&x, &o);
	p->p_rc = x.x_err;
	if (p->p_rc)
		return;
	nc_call_init(&p->p_call, NC_OP_OST_STATFS, p->p_body, (uint32_t)x.x_pos);
	p->p_call.c_wait = w; /* counted by the submit, if it queues the call */
	p->p_rc = nc_cconn_submit(cc, &p->p_call);
}

/* The answer of a poll's statfs: updates and logs the OST's full state on
 * a change. */
static void ost_poll_result(struct mds_server *mds, struct ost_poll *p)
{
	struct nc_statfs_rep rep = { 0 };
	uint32_t idx = p->p_idx;
	struct nc_xdr x;
	bool full, was;
	int rc = p->p_rc;

	if (rc == 0)
		rc = p->p_call.c_status;
	if (rc == 0) {
		nc_xdr_init_decode(&x, p->p_call.c_rep_body, p->p_call.c_rep_body_len);
		nc_wire_statfs_rep(&x, &rep);
		rc = nc_xdr_finish(&x);
	}
	ost_answered(mds, idx, rc != -ETIMEDOUT, "statfs");
	if (rc) {
		nc_debug("mds", "statfs of OST %u: %s", idx, nc_strerror(rc));
		return;
	}
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
 * (the destroy thread is woken after every batch of changes).  All the
 * statfs calls are in flight at once: OSSes that hang cost the poll one
 * request timeout, not one each. */
static void ost_space_poll(struct mds_server *mds)
{
	struct ost_poll *polls;
	struct timespec now;
	struct nc_wait w;
	uint32_t n = 0;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec - mds->ms_space_polled.tv_sec < 1)
		return;
	mds->ms_space_polled = now;
	polls = calloc(NC_MAX_OSTS, sizeof(*polls));
	if (!polls)
		return;
	nc_wait_init(&w);
	for (uint32_t i = 0; i < NC_MAX_OSTS && !mds->ms_stopping; i++) {
		char addr[NC_ADDR_MAX + 1];
		bool up;

		pthread_mutex_lock(&mds->ms_ost_lock);
		up = mds->ms_osts[i].ol_known && mds->ms_osts[i].ol_up;
		memcpy(addr, mds->ms_osts[i].ol_info.o_addr, sizeof(addr));
		pthread_mutex_unlock(&mds->ms_ost_lock);
		if (!up)
			continue;
		polls[n].p_idx = i;
		ost_poll_submit(mds, &polls[n++], addr, &w);
	}
	nc_wait_all(&w);
	for (uint32_t i = 0; i < n; i++) {
		ost_poll_result(mds, &polls[i]);
		nc_call_fini(&polls[i].p_call);
	}
	nc_wait_fini(&w);
	free(polls);
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

void *mds_destroy_main(void *arg)
{
	struct mds_server *mds = arg;
	int interval = mds->ms_conf.mc_destroy_interval_ms;

	pthread_mutex_lock(&mds->ms_lock);
	while (!mds->ms_stopping) {
		struct timespec ts;

		mds->ms_kicked = false;
		pthread_mutex_unlock(&mds->ms_lock);
		mds_recovery_check(mds);
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
