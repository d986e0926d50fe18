/* SPDX-License-Identifier: MIT */
/*
 * Catch-up rebuild (see catchup.h).
 *
 * The thread keeps, per OST, when its next pass is due.  A pass takes the
 * OSTs due and up, scans the inode table, then the pack table, for files
 * and packs with a shard marked stale on one of them (mds_ns_stale_scan(),
 * in slices of short read transactions) and hands each slice's files to
 * cc_workers threads that rebuild one file each at a time through one
 * libnacre connection to this MDS.  The MDS's request handling never waits for it: the scan only reads
 * LMDB, and the rebuilds are requests like any client's.
 *
 * Why a delay before a pass: a writer that locked a file at another OST
 * while this one was down may still be finishing that write when this OST
 * returns; the delay lets such writes end before the rebuild takes the
 * file's lock (at the first OST that answers, now possibly this one).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/wire.h"
#include "common/xprt.h"
#include "libclient/nacre.h"
#include "mds/catchup.h"

/* FIDs handed to the workers at once. */
#define CU_BATCH 256

struct mds_catchup {
	struct mds_catchup_conf cu_conf;
	char cu_addr[NC_ADDR_MAX + 32];
	char *cu_fsname;
	char *cu_keyfile;
	pthread_t cu_thread;
	pthread_mutex_t cu_lock;
	pthread_cond_t cu_cond;
	bool cu_stopping;
	/* per OST, under cu_lock */
	bool cu_waiting[NC_MAX_OSTS];
	int64_t cu_due_ms[NC_MAX_OSTS];         /* monotonic */
	int cu_backoff_ms[NC_MAX_OSTS];         /* next retry delay */
	/* progress */
	_Atomic uint64_t cu_passes, cu_files, cu_failed, cu_shards, cu_pending;
	_Atomic bool cu_running;
};

/* One slice of files shared by the workers. */
struct cu_batch {
	struct mds_catchup *cb_cu;
	struct nacre_fs *cb_fs;
	const struct nc_fid *cb_fids;
	uint32_t cb_n;
	_Atomic uint32_t cb_next;
	_Atomic uint64_t cb_done, cb_failed, cb_shards;
};

static int64_t cu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool cu_is_stopping(struct mds_catchup *cu)
{
	bool s;

	pthread_mutex_lock(&cu->cu_lock);
	s = cu->cu_stopping;
	pthread_mutex_unlock(&cu->cu_lock);
	return s;
}

static void *cu_worker(void *arg)
{
	struct cu_batch *b = arg;
	struct mds_catchup *cu = b->cb_cu;
	uint32_t i;

	while ((i = atomic_fetch_add(&b->cb_next, 1)) < b->cb_n) {
		const struct nacre_fid fid = { b->cb_fids[i].f_seq, b->cb_fids[i].f_oid };
		struct nacre_repair_stats st = { 0 };
		int rc;

		if (cu_is_stopping(cu))
			break;
		rc = nacre_rebuild_fid(b->cb_fs, &fid, NACRE_OST_ANY, NULL, NULL, &st);
		atomic_fetch_sub(&cu->cu_pending, 1);
		if (rc == -ENOENT)
			continue; /* removed meanwhile: nothing left to rebuild */
		if (rc) {
			nc_debug("mds", "catch-up of " NC_FID_FMT ": %s (tried again later)",
				 NC_FID_ARGS(&b->cb_fids[i]), nacre_strerror(rc));
			atomic_fetch_add(&b->cb_failed, 1);
			continue;
		}
		atomic_fetch_add(&b->cb_done, 1);
		atomic_fetch_add(&b->cb_shards, st.shards_cleared);
	}
	return NULL;
}

/* Rebuilds the @n files of @fids, cc_workers at a time. */
static void cu_run_batch(struct mds_catchup *cu, struct nacre_fs *fs, const struct nc_fid *fids,
			 uint32_t n, uint64_t *done, uint64_t *failed, uint64_t *shards)
{
	pthread_t th[64];
	struct cu_batch b = { .cb_cu = cu, .cb_fs = fs, .cb_fids = fids, .cb_n = n };
	int nw = cu->cu_conf.cc_workers, started = 0;

	if (nw > 64)
		nw = 64;
	if ((uint32_t)nw > n)
		nw = (int)n;
	atomic_fetch_add(&cu->cu_pending, n);
	for (int i = 0; i < nw; i++)
		if (pthread_create(&th[started], NULL, cu_worker, &b) == 0)
			started++;
	if (!started)
		cu_worker(&b); /* no thread to spare: rebuild here */
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	/* Files a stop left untouched are no longer pending. */
	if (atomic_load(&b.cb_next) < n)
		atomic_fetch_sub(&cu->cu_pending, n - atomic_load(&b.cb_next));
	*done += atomic_load(&b.cb_done);
	*failed += atomic_load(&b.cb_failed) + (atomic_load(&b.cb_next) < n ?
						 n - atomic_load(&b.cb_next) : 0);
	*shards += atomic_load(&b.cb_shards);
}

/* Formats the OSTs of @mask as "1,4" into @buf. */
static void cu_ost_names(const bool *mask, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < NC_MAX_OSTS && o < len; i++)
		if (mask[i])
			o += (size_t)snprintf(buf + o, len - o, "%s%u", o ? "," : "", i);
}

/*
 * One pass over the OSTs of @mask: 0 when every file found was rebuilt,
 * else the number of files left (or -errno when the scan itself failed).
 */
static int64_t cu_pass(struct mds_catchup *cu, const bool *mask)
{
	static const struct nacre_cred root = { .uid = 0, .gid = 0 };
	const struct nacre_opts opts = { .cred = &root, .attr_cache_ms = -1,
					 .server_peer = true, .keyfile = cu->cu_keyfile };
	struct mds_stale_pos pos = { 0 };
	uint64_t done = 0, failed = 0, shards = 0;
	struct nacre_fs *fs = NULL;
	struct nc_fid *fids;
	struct timespec t0, t1;
	char names[256];
	uint32_t got;
	int rc = 0;

	fids = calloc(CU_BATCH, sizeof(*fids));
	if (!fids)
		return -ENOMEM;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	atomic_store(&cu->cu_running, true);
	while (!pos.sp_done && !cu_is_stopping(cu)) {
		rc = mds_ns_stale_scan(cu->cu_conf.cc_ns, mask, &pos, fids, CU_BATCH, &got);
		if (rc)
			break;
		if (!got)
			continue;
		if (!fs) {
			rc = nacre_connect(cu->cu_addr, cu->cu_fsname, &opts, &fs);
			if (rc) {
				fs = NULL;
				failed += got;
				break;
			}
		}
		cu_run_batch(cu, fs, fids, got, &done, &failed, &shards);
	}
	nacre_disconnect(fs);
	atomic_store(&cu->cu_running, false);
	atomic_fetch_add(&cu->cu_passes, 1);
	atomic_fetch_add(&cu->cu_files, done);
	atomic_fetch_add(&cu->cu_failed, failed);
	atomic_fetch_add(&cu->cu_shards, shards);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cu_ost_names(mask, names, sizeof(names));
	if (done || failed || rc)
		nc_info("mds", "catch-up of OST %s: %" PRIu64 " file%s rebuilt, %" PRIu64
			" stale mark%s cleared, %" PRIu64 " left to retry (%.1f s)%s%s", names,
			done, done == 1 ? "" : "s", shards, shards == 1 ? "" : "s", failed,
			(double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
			rc ? "; stopped: " : "", rc ? nacre_strerror(rc) : "");
	free(fids);
	if (rc)
		return rc;
	return (int64_t)failed;
}

/* The OSTs due now and up, taken off the waiting list; false if none. */
static bool cu_take_due(struct mds_catchup *cu, bool *mask, int64_t *next_ms)
{
	int64_t now = cu_now_ms();
	bool any = false;

	*next_ms = INT64_MAX;
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++) {
		mask[i] = false;
		if (!cu->cu_waiting[i])
			continue;
		if (cu->cu_due_ms[i] > now) {
			if (cu->cu_due_ms[i] < *next_ms)
				*next_ms = cu->cu_due_ms[i];
			continue;
		}
		cu->cu_waiting[i] = false;
		/* A down OST gets its pass when it registers again. */
		if (cu->cu_conf.cc_up(cu->cu_conf.cc_arg, i)) {
			mask[i] = true;
			any = true;
		}
	}
	return any;
}

/* After a pass: OSTs of @mask with files left are tried again later. */
static void cu_after_pass(struct mds_catchup *cu, const bool *mask, int64_t left)
{
	int64_t now = cu_now_ms();

	for (uint32_t i = 0; i < NC_MAX_OSTS; i++) {
		if (!mask[i])
			continue;
		if (!left) {
			cu->cu_backoff_ms[i] = MDS_CATCHUP_RETRY_MS;
			continue;
		}
		if (!cu->cu_waiting[i] || cu->cu_due_ms[i] > now + cu->cu_backoff_ms[i]) {
			cu->cu_waiting[i] = true;
			cu->cu_due_ms[i] = now + cu->cu_backoff_ms[i];
		}
		cu->cu_backoff_ms[i] *= 2;
		if (cu->cu_backoff_ms[i] > MDS_CATCHUP_RETRY_MAX_MS)
			cu->cu_backoff_ms[i] = MDS_CATCHUP_RETRY_MAX_MS;
	}
}

/* Every OST is due now (the sweep). */
static void cu_sweep_due(struct mds_catchup *cu)
{
	int64_t now = cu_now_ms();

	for (uint32_t i = 0; i < NC_MAX_OSTS; i++) {
		if (cu->cu_waiting[i])
			continue;
		cu->cu_waiting[i] = true;
		cu->cu_due_ms[i] = now;
	}
}

static void *cu_main(void *arg)
{
	struct mds_catchup *cu = arg;
	bool *mask = calloc(NC_MAX_OSTS, sizeof(*mask));
	struct timespec ts;
	int64_t next, left, wait_ms;
	bool sweep = false;

	if (!mask) {
		nc_error("mds", "catch-up thread: %s", nc_strerror(-ENOMEM));
		return NULL;
	}
	pthread_mutex_lock(&cu->cu_lock);
	while (!cu->cu_stopping) {
		if (cu_take_due(cu, mask, &next)) {
			pthread_mutex_unlock(&cu->cu_lock);
			left = cu_pass(cu, mask);
			pthread_mutex_lock(&cu->cu_lock);
			cu_after_pass(cu, mask, left);
			continue;
		}
		if (next == INT64_MAX && cu->cu_conf.cc_sweep_ms <= 0) {
			pthread_cond_wait(&cu->cu_cond, &cu->cu_lock);
			continue;
		}
		if (next == INT64_MAX) {
			sweep = true;
			next = cu_now_ms() + cu->cu_conf.cc_sweep_ms;
		}
		wait_ms = next - cu_now_ms();
		if (wait_ms > 3600000)
			wait_ms = 3600000;
		nc_deadline_ms(&ts, CLOCK_REALTIME, wait_ms > 0 ? (int)wait_ms : 0);
		if (pthread_cond_timedwait(&cu->cu_cond, &cu->cu_lock, &ts) == ETIMEDOUT &&
		    sweep)
			cu_sweep_due(cu);
		sweep = false;
	}
	pthread_mutex_unlock(&cu->cu_lock);
	free(mask);
	return NULL;
}

int mds_catchup_start(const struct mds_catchup_conf *conf, struct mds_catchup **out)
{
	struct mds_catchup *cu;
	int64_t now = cu_now_ms();
	int rc;

	if (!conf->cc_addr || !conf->cc_fsname || !conf->cc_keyfile || !conf->cc_ns ||
	    !conf->cc_up || conf->cc_workers <= 0 || conf->cc_delay_ms < 0 ||
	    conf->cc_sweep_ms < 0)
		return -EINVAL;
	cu = calloc(1, sizeof(*cu));
	if (!cu)
		return -ENOMEM;
	cu->cu_conf = *conf;
	snprintf(cu->cu_addr, sizeof(cu->cu_addr), "%s", conf->cc_addr);
	cu->cu_fsname = strdup(conf->cc_fsname);
	cu->cu_keyfile = strdup(conf->cc_keyfile);
	if (!cu->cu_fsname || !cu->cu_keyfile) {
		rc = -ENOMEM;
		goto out_free;
	}
	cu->cu_conf.cc_addr = cu->cu_addr;
	cu->cu_conf.cc_fsname = cu->cu_fsname;
	cu->cu_conf.cc_keyfile = cu->cu_keyfile;
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++) {
		cu->cu_waiting[i] = true;
		cu->cu_due_ms[i] = now + conf->cc_delay_ms;
		cu->cu_backoff_ms[i] = MDS_CATCHUP_RETRY_MS;
	}
	pthread_mutex_init(&cu->cu_lock, NULL);
	pthread_cond_init(&cu->cu_cond, NULL);
	rc = pthread_create(&cu->cu_thread, NULL, cu_main, cu);
	if (rc) {
		rc = -rc;
		pthread_cond_destroy(&cu->cu_cond);
		pthread_mutex_destroy(&cu->cu_lock);
		goto out_free;
	}
	*out = cu;
	return 0;
out_free:
	free(cu->cu_fsname);
	free(cu->cu_keyfile);
	free(cu);
	return rc;
}

void mds_catchup_ost_up(struct mds_catchup *cu, uint32_t ost)
{
	if (!cu || ost >= NC_MAX_OSTS)
		return;
	pthread_mutex_lock(&cu->cu_lock);
	cu->cu_waiting[ost] = true;
	cu->cu_due_ms[ost] = cu_now_ms() + cu->cu_conf.cc_delay_ms;
	cu->cu_backoff_ms[ost] = MDS_CATCHUP_RETRY_MS;
	pthread_cond_broadcast(&cu->cu_cond);
	pthread_mutex_unlock(&cu->cu_lock);
}

void mds_catchup_stats(struct mds_catchup *cu, struct mds_catchup_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!cu)
		return;
	st->cs_passes = atomic_load(&cu->cu_passes);
	st->cs_files = atomic_load(&cu->cu_files);
	st->cs_failed = atomic_load(&cu->cu_failed);
	st->cs_shards = atomic_load(&cu->cu_shards);
	st->cs_pending = atomic_load(&cu->cu_pending);
	st->cs_running = atomic_load(&cu->cu_running);
	pthread_mutex_lock(&cu->cu_lock);
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++)
		st->cs_osts_waiting += cu->cu_waiting[i] && cu->cu_conf.cc_up(cu->cu_conf.cc_arg, i);
	pthread_mutex_unlock(&cu->cu_lock);
}

void mds_catchup_stop(struct mds_catchup *cu)
{
	if (!cu)
		return;
	pthread_mutex_lock(&cu->cu_lock);
	cu->cu_stopping = true;
	pthread_cond_broadcast(&cu->cu_cond);
	pthread_mutex_unlock(&cu->cu_lock);
	pthread_join(cu->cu_thread, NULL);
	pthread_cond_destroy(&cu->cu_cond);
	pthread_mutex_destroy(&cu->cu_lock);
	free(cu->cu_fsname);
	free(cu->cu_keyfile);
	free(cu);
}
