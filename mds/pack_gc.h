/* SPDX-License-Identifier: MIT */
/*
 * The MDS's background pack compaction: a thread that looks at the pack
 * table now and then and, when some sealed pack has fallen below the live
 * fraction threshold, runs the same compaction as `nacre pack gc`
 * (nacre_pack_gc()) as a client of this MDS.  The MDS itself never moves
 * file data: the thread is a libnacre client that reads the live files of
 * the sparse packs from the OSTs and writes them into new packs, while
 * readers of the old copies go on reading them until the grace period ends.
 */
#ifndef MDS_PACK_GC_H
#define MDS_PACK_GC_H

#include <stdint.h>

#include "mds/ns.h"

/* Defaults of nacre-mds --pack-gc-interval / --pack-gc-threshold. */
#define MDS_PACK_GC_INTERVAL_MS_DEFAULT (300 * 1000)
#define MDS_PACK_GC_THRESHOLD_DEFAULT 0.5

struct mds_pack_gc_conf {
	const char *pc_addr;    /* this MDS, as its own client reaches it */
	const char *pc_fsname;
	struct mds_ns *pc_ns;   /* read-only use: which packs are sparse */
	int pc_interval_ms;     /* time between passes; > 0 */
	double pc_threshold;    /* compact packs below this live fraction */
	const char *pc_keyfile; /* the cluster key file */
};

struct mds_pack_gc;

/*
 * The sealed packs of @ns that hold files and whose live fraction is below
 * @threshold: the packs a pass would compact.  0 or -errno; @count
 * receives how many.
 */
int mds_pack_gc_candidates(struct mds_ns *ns, double threshold, uint64_t *count);

/* Starts the thread; its first pass comes one interval after the start. */
int mds_pack_gc_start(const struct mds_pack_gc_conf *conf, struct mds_pack_gc **out);
/* Wakes the thread for a pass now (tests, or after many unlinks). */
void mds_pack_gc_kick(struct mds_pack_gc *pg);
/* Stops the thread (a pass under way finishes first) and frees @pg.
 * NULL is a no-op. */
void mds_pack_gc_stop(struct mds_pack_gc *pg);

/*
 * The address a client on this host uses to reach a server listening on
 * @listen whose bound port is @port: wildcard hosts (0.0.0.0, ::) become
 * the loopback address.  0 or -NC_E_ADDR.
 */
int mds_pack_gc_self_addr(const char *listen, int port, char *buf, size_t len);

#endif
