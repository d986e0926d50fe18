/* SPDX-License-Identifier: MIT */
/*
 * The MDS's catch-up rebuild: when an OST comes (back) up, a thread finds
 * the erasure-coded files and packs with shards marked stale on it (a
 * write missed them while it was down) and rebuilds them through
 * libnacre, as `nacre rebuild` would (nacre_rebuild_fid()), a few files at
 * a time, as a client of this MDS.  A rebuild holds the file's lock (so
 * writers wait for it) and clears the marks only once every row is
 * rewritten.
 * Files it could not rebuild (an OST down again, a lock held too long) are
 * tried again later, with a growing delay, while their OST stays up, and
 * a sweep now and then catches marks set while their OST stayed up.
 */
#ifndef MDS_CATCHUP_H
#define MDS_CATCHUP_H

#include <stdbool.h>
#include <stdint.h>

#include "mds/ns.h"

/* Defaults of nacre-mds --catchup-workers and --catchup-delay. */
#define MDS_CATCHUP_WORKERS_DEFAULT 4
#define MDS_CATCHUP_DELAY_MS_DEFAULT 2000
#define MDS_CATCHUP_SWEEP_MS_DEFAULT (10 * 60 * 1000)
/* First retry of a pass that left files undone; doubled up to the max. */
#define MDS_CATCHUP_RETRY_MS 5000
#define MDS_CATCHUP_RETRY_MAX_MS (5 * 60 * 1000)

/* Whether OST @ost is up now (registered, its OSS connected). */
typedef bool (*mds_catchup_up_fn)(void *arg, uint32_t ost);

struct mds_catchup_conf {
	const char *cc_addr;    /* this MDS, as its own client reaches it */
	const char *cc_fsname;
	const char *cc_keyfile; /* the cluster key file */
	struct mds_ns *cc_ns;   /* read-only use: where the stale marks are */
	int cc_workers;         /* files rebuilt at once; > 0 */
	int cc_delay_ms;        /* from an OST coming up to its pass; >= 0 */
	/* Time between sweeps over every OST up, for marks set while their
	 * OST stayed up (a write timed out); 0: none. */
	int cc_sweep_ms;
	mds_catchup_up_fn cc_up;
	void *cc_arg;
};

/* Progress, for the metrics port. */
struct mds_catchup_stats {
	uint64_t cs_passes;             /* passes finished */
	uint64_t cs_files;              /* files rebuilt */
	uint64_t cs_failed;             /* rebuilds that failed (tried again) */
	uint64_t cs_shards;             /* stale marks cleared */
	uint64_t cs_pending;            /* files found stale, not yet rebuilt */
	uint32_t cs_osts_waiting;       /* OSTs with a pass to come */
	bool cs_running;                /* a pass is under way */
};

struct mds_catchup;

/* Starts the thread.  Every OST counts as just come up: the first pass
 * catches up on marks left by writes before this MDS started. */
int mds_catchup_start(const struct mds_catchup_conf *conf, struct mds_catchup **out);
/* OST @ost registered: a pass for it in cc_delay_ms. */
void mds_catchup_ost_up(struct mds_catchup *cu, uint32_t ost);
void mds_catchup_stats(struct mds_catchup *cu, struct mds_catchup_stats *st);
/* Stops the thread (the rebuilds under way finish first) and frees @cu.
 * NULL is a no-op. */
void mds_catchup_stop(struct mds_catchup *cu);

#endif
