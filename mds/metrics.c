/* SPDX-License-Identifier: MIT */
/*
 * The MDS's metrics port (docs/metrics.md): the RPC server's request
 * counters (common/rpc_metrics.c) plus what only the MDS knows, the LMDB
 * environment, the inode count, the destroy queue, OSTs up and down and
 * shards marked stale.  Sizes and counts are read at each scrape; the
 * stale marks are counted as the requests that set them are served.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/metrics_http.h"
#include "mds/catchup.h"
#include "mds/server.h"

struct mds_metrics {
	struct mds_server *mm_mds;
	struct nc_metrics *mm_reg;
	struct nc_mhttp *mm_http;
	struct nc_metric *mm_map, *mm_used, *mm_page, *mm_free, *mm_inodes, *mm_destroy;
	struct nc_metric *mm_up, *mm_down, *mm_full, *mm_marked, *mm_cleared, *mm_errors;
	struct nc_metric *mm_replayed, *mm_expired;
	struct nc_metric *mm_cu_passes, *mm_cu_files, *mm_cu_failed, *mm_cu_shards;
	struct nc_metric *mm_cu_pending, *mm_cu_waiting, *mm_cu_running;
};

/* Brings counter @m up to @v, a total kept elsewhere. */
static void mm_counter_to(struct nc_metric *m, uint64_t v)
{
	uint64_t cur = (uint64_t)nc_metric_value(m);

	if (v > cur)
		nc_metric_inc(m, v - cur);
}

/* The catch-up rebuild's figures: kept by its thread, copied at a scrape. */
static void mm_collect_catchup(struct mds_metrics *mm)
{
	struct mds_catchup_stats cs;

	mds_server_catchup_stats(mm->mm_mds, &cs);
	mm_counter_to(mm->mm_cu_passes, cs.cs_passes);
	mm_counter_to(mm->mm_cu_files, cs.cs_files);
	mm_counter_to(mm->mm_cu_failed, cs.cs_failed);
	mm_counter_to(mm->mm_cu_shards, cs.cs_shards);
	nc_metric_set(mm->mm_cu_pending, (double)cs.cs_pending);
	nc_metric_set(mm->mm_cu_waiting, cs.cs_osts_waiting);
	nc_metric_set(mm->mm_cu_running, cs.cs_running);
}

static int mm_register_catchup(struct mds_metrics *mm)
{
	struct nc_metrics *r = mm->mm_reg;

	mm->mm_cu_passes = nc_metrics_counter(r, "nacre_mds_catchup_passes_total",
		"Catch-up rebuild passes finished.", NULL);
	mm->mm_cu_files = nc_metrics_counter(r, "nacre_mds_catchup_files_total",
		"Files whose stale shards the catch-up rebuild regenerated.", NULL);
	mm->mm_cu_failed = nc_metrics_counter(r, "nacre_mds_catchup_failures_total",
		"Catch-up rebuilds of a file that failed (tried again later).", NULL);
	mm->mm_cu_shards = nc_metrics_counter(r, "nacre_mds_catchup_shards_cleared_total",
		"Stale marks the catch-up rebuild cleared.", NULL);
	mm->mm_cu_pending = nc_metrics_gauge(r, "nacre_mds_catchup_files_pending",
		"Files found with stale shards and not yet rebuilt by the current pass.", NULL);
	mm->mm_cu_waiting = nc_metrics_gauge(r, "nacre_mds_catchup_osts_waiting",
		"OSTs up whose catch-up pass is still to come.", NULL);
	mm->mm_cu_running = nc_metrics_gauge(r, "nacre_mds_catchup_running",
		"1 while a catch-up pass is under way.", NULL);
	if (!mm->mm_cu_passes || !mm->mm_cu_files || !mm->mm_cu_failed || !mm->mm_cu_shards ||
	    !mm->mm_cu_pending || !mm->mm_cu_waiting || !mm->mm_cu_running)
		return -ENOMEM;
	return 0;
}

static void mm_collect(void *arg)
{
	struct mds_metrics *mm = arg;
	struct mds_ns_stats st;
	struct mds_ost_set set;
	uint32_t full = 0;

	if (mds_ns_stats(mds_server_ns(mm->mm_mds), &st) == 0) {
		nc_metric_set(mm->mm_map, (double)st.ns_map_size);
		nc_metric_set(mm->mm_used, (double)st.ns_used);
		nc_metric_set(mm->mm_page, (double)st.ns_page_size);
		nc_metric_set(mm->mm_free, (double)st.ns_free_pages);
		nc_metric_set(mm->mm_inodes, (double)st.ns_inodes);
		nc_metric_set(mm->mm_destroy, (double)st.ns_destroy_queue);
	} else {
		nc_metric_inc(mm->mm_errors, 1);
	}
	mds_server_ost_set(mm->mm_mds, &set);
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++)
		full += set.os_full[i];
	/* A full OST is up (listed with the down ones for new layouts). */
	nc_metric_set(mm->mm_up, set.os_count + full);
	nc_metric_set(mm->mm_down, set.os_ndown - full);
	nc_metric_set(mm->mm_full, full);
	mm_collect_catchup(mm);
}

static int mm_render(void *arg, char **text, size_t *len)
{
	struct mds_metrics *mm = arg;

	return nc_metrics_render(mm->mm_reg, text, len);
}

static int mm_register(struct mds_metrics *mm)
{
	struct nc_metrics *r = mm->mm_reg;

	mm->mm_map = nc_metrics_gauge(r, "nacre_mds_lmdb_map_size_bytes",
				      "Size of the LMDB memory map (the MDT's limit).", NULL);
	mm->mm_used = nc_metrics_gauge(r, "nacre_mds_lmdb_used_bytes",
				       "Bytes of the LMDB map up to its last page in use.", NULL);
	mm->mm_page = nc_metrics_gauge(r, "nacre_mds_lmdb_page_size_bytes",
				       "LMDB page size.", NULL);
	mm->mm_free = nc_metrics_gauge(r, "nacre_mds_lmdb_free_pages",
				       "Pages on LMDB's free list, reusable before the map grows.",
				       NULL);
	mm->mm_inodes = nc_metrics_gauge(r, "nacre_mds_inodes",
					 "Inodes (files, directories, links) in the namespace.",
					 NULL);
	mm->mm_destroy = nc_metrics_gauge(r, "nacre_mds_destroy_queue_length",
		"Removed files whose objects are still to be destroyed on the OSTs.", NULL);
	mm->mm_up = nc_metrics_gauge(r, "nacre_mds_osts", "OSTs known to the MDS, by state.",
				     "state", "up", NULL);
	mm->mm_down = nc_metrics_gauge(r, "nacre_mds_osts", "OSTs known to the MDS, by state.",
				       "state", "down", NULL);
	mm->mm_full = nc_metrics_gauge(r, "nacre_mds_osts_full",
		"OSTs that are up but nearly out of space: new files leave them out.", NULL);
	mm->mm_marked = nc_metrics_counter(r, "nacre_mds_shards_marked_stale_total",
		"Shards of erasure-coded files marked stale (a write missed them, or "
		"their OST was replaced).", NULL);
	mm->mm_cleared = nc_metrics_counter(r, "nacre_mds_shards_cleared_stale_total",
		"Stale marks cleared (the shard was rebuilt).", NULL);
	mm->mm_errors = nc_metrics_counter(r, "nacre_mds_metrics_errors_total",
		"Scrapes that could not read the LMDB figures.", NULL);
	mm->mm_replayed = nc_metrics_counter(r, "nacre_mds_replies_reconstructed_total",
		"Resent changes answered from their recorded reply instead of being "
		"executed twice.", NULL);
	mm->mm_expired = nc_metrics_counter(r, "nacre_mds_reply_records_expired_total",
		"Reply records of quiet clients removed.", NULL);
	if (!mm->mm_map || !mm->mm_used || !mm->mm_page || !mm->mm_free || !mm->mm_inodes ||
	    !mm->mm_destroy || !mm->mm_up || !mm->mm_down || !mm->mm_full || !mm->mm_marked ||
	    !mm->mm_cleared || !mm->mm_errors || !mm->mm_replayed || !mm->mm_expired)
		return -ENOMEM;
	if (mm_register_catchup(mm))
		return -ENOMEM;
	return nc_metrics_on_collect(r, mm_collect, mm);
}

int mds_metrics_new(struct mds_server *mds, struct nc_server *srv, struct mds_metrics **out)
{
	struct mds_metrics *mm = calloc(1, sizeof(*mm));
	int rc;

	if (!mm)
		return -ENOMEM;
	mm->mm_mds = mds;
	rc = nc_metrics_new(&mm->mm_reg);
	if (!rc)
		rc = mm_register(mm);
	if (!rc)
		rc = nc_server_set_metrics(srv, mm->mm_reg);
	if (rc) {
		mds_metrics_free(mm);
		return rc;
	}
	*out = mm;
	return 0;
}

int mds_metrics_serve(struct mds_metrics *mm, const char *addr)
{
	char bound[128];
	int rc;

	rc = nc_mhttp_start(addr, mm_render, mm, &mm->mm_http, bound, sizeof(bound));
	if (rc == -EINVAL)
		nc_error("mds", "bad metrics address '%s' (want tcp://host:port)", addr);
	else if (rc)
		nc_error("mds", "cannot serve metrics on %s: %s", addr, nc_strerror(rc));
	else
		nc_info("mds", "metrics on %s (GET /metrics)", bound);
	return rc;
}

void mds_metrics_stop(struct mds_metrics *mm)
{
	if (!mm)
		return;
	nc_mhttp_stop(mm->mm_http);
	mm->mm_http = NULL;
}

void mds_metrics_free(struct mds_metrics *mm)
{
	if (!mm)
		return;
	mds_metrics_stop(mm);
	nc_metrics_free(mm->mm_reg);
	free(mm);
}

void mds_metrics_stale(struct mds_metrics *mm, uint64_t marked, uint64_t cleared)
{
	if (!mm)
		return;
	nc_metric_inc(mm->mm_marked, marked);
	nc_metric_inc(mm->mm_cleared, cleared);
}

void mds_metrics_replay(struct mds_metrics *mm, uint64_t answered, uint64_t expired)
{
	if (!mm)
		return;
	nc_metric_inc(mm->mm_replayed, answered);
	nc_metric_inc(mm->mm_expired, expired);
}
