/* SPDX-License-Identifier: MIT */
/*
 * The metadata server: the namespace (mds/ns.h) served over RPC, the live
 * OST registry (an OST is up while the connection of the OSS that
 * registered it lives) and the background destroy thread that removes the
 * objects of unlinked files from the OSTs.  nacre-mds's main() is a thin
 * layer over this.
 */
#ifndef MDS_SERVER_H
#define MDS_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "common/rpc.h"
#include "mds/ns.h"
#include "mds/squash.h"

struct mds_conf {
	const char *mc_dir;             /* the MDT directory */
	const char *mc_fsname;
	const char *mc_listen;          /* "tcp://host:port[,rdma://host:port]" */
	bool mc_format;                 /* format @mc_dir if it holds no MDT */
	int mc_threads;                 /* service threads; 0: 8 */
	uint64_t mc_map_size;           /* LMDB map size; 0: 1 GiB */
	int mc_destroy_interval_ms;     /* destroy queue pass; 0: 2000 */
	/* Background pack compaction (mds/pack_gc.h): time between passes
	 * (0: 5 min, negative: never) and the live fraction below which a
	 * sealed pack is compacted (0: 0.5). */
	int mc_pack_gc_interval_ms;
	double mc_pack_gc_threshold;
	/* Root squash (mds/squash.h): "UID:GID" or NULL for none, and the
	 * exempt client addresses and networks. */
	const char *mc_root_squash;
	const char *mc_nosquash;
	bool mc_changelog;              /* record namespace changes */
	/* The cluster key file (common/auth.h); NULL: $NACRE_KEYFILE, else
	 * /etc/nacre/FSNAME.key.  Formatting creates it when it is missing. */
	const char *mc_keyfile;
	const char *mc_metrics;         /* metrics port "tcp://host:port"; NULL: none */
	/* Catch-up rebuild of OSTs that come back (mds/catchup.h): off, files
	 * rebuilt at once (0: 4), delay from an OST coming up to its pass
	 * (0: 2 s, negative: none) and time between sweeps over every OST
	 * (0: 10 min, negative: none). */
	bool mc_no_catchup;
	int mc_catchup_workers;
	int mc_catchup_delay_ms;
	int mc_catchup_sweep_ms;
};

struct mds_server;

int mds_server_new(const struct mds_conf *conf, struct mds_server **out);
int mds_server_start(struct mds_server *mds);
int mds_server_port(struct mds_server *mds);
void mds_server_stop(struct mds_server *mds);
void mds_server_free(struct mds_server *mds);

/* ---- for the handlers (mds/rpc.c) ---- */
struct mds_ns *mds_server_ns(struct mds_server *mds);
const struct mds_squash *mds_server_squash(struct mds_server *mds);
/* OSTs that are up, in index order. */
/* The OSTs new objects may go to (mds_ost_is_eligible()), up and down, in
 * index order. */
void mds_server_ost_set(struct mds_server *mds, struct mds_ost_set *set);
/* OST_ADMIN: NC_OSTADM_ACTIVATE or _DEACTIVATE OST @idx, kept on the MDT
 * (mds_ns_ost_set_active()) and applied to the next layouts at once. */
int mds_server_ost_admin(struct mds_server *mds, const struct nc_cred *cred, uint32_t idx,
			 uint32_t op);
/* The OST table with live states. */
void mds_server_ost_list(struct mds_server *mds, struct nc_ost_list_rep *rep);
int mds_server_ost_register(struct mds_server *mds, const struct nc_ost_info *ost,
			    uint64_t conn_id);
/* Asks for a pack compaction pass now (when compaction is on). */
void mds_server_kick_pack_gc(struct mds_server *mds);
/* The catch-up rebuild's progress (all zero when it is off). */
struct mds_catchup_stats;
void mds_server_catchup_stats(struct mds_server *mds, struct mds_catchup_stats *st);
/* Wakes the destroy thread (a file lost its last link). */
void mds_server_kick_destroy(struct mds_server *mds);
void mds_handle(struct nc_req *req, void *arg);
/* Group commit plumbing between mds/rpc.c and the writer thread. */
bool mds_op_is_write(uint16_t opcode);
void mds_handle_op(struct mds_server *mds, struct nc_req *req);
void mds_server_queue_write(struct mds_server *mds, struct nc_req *req);
void mds_rpc_hold_begin(void);
void mds_rpc_hold_end(int commit_rc);

/* ---- the metrics port (mds/metrics.c) ---- */
struct mds_metrics;
/* Registers the series and hands the registry to @srv (before it starts). */
int mds_metrics_new(struct mds_server *mds, struct nc_server *srv, struct mds_metrics **out);
/* Serves GET /metrics on @addr (logged with the port bound). */
int mds_metrics_serve(struct mds_metrics *mm, const char *addr);
/* Stops serving (scrapes read the server); free after the RPC server. */
void mds_metrics_stop(struct mds_metrics *mm);
void mds_metrics_free(struct mds_metrics *mm);
/* NULL when the MDS has no metrics port. */
struct mds_metrics *mds_server_metrics(struct mds_server *mds);
/* Shards marked stale and marks cleared.  @mm may be NULL. */
void mds_metrics_stale(struct mds_metrics *mm, uint64_t marked, uint64_t cleared);
/* Resent changes answered from their record, reply records expired. */
void mds_metrics_replay(struct mds_metrics *mm, uint64_t answered, uint64_t expired);

#endif
