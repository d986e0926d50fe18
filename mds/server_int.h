/* SPDX-License-Identifier: MIT */
/*
 * The MDS server's state, shared by its parts: setup and the live OST
 * registry (mds/server.c), the writer thread with group commit and the
 * recovery window (mds/writer.c), and the destroy thread with the OST
 * space poll (mds/destroy.c).  Only those files include this.
 */
#ifndef MDS_SERVER_INT_H
#define MDS_SERVER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "mds/server.h"

struct mds_ost_live {
	bool ol_known;
	bool ol_up;
	bool ol_full;           /* its free space is below ost_full_below() */
	bool ol_silent;         /* registered, but its last statfs poll timed
				 * out (a hung OSS): down for new layouts */
	uint64_t ol_conn;       /* connection that registered it */
	struct nc_ost_info ol_info;     /* o_state: only NC_OST_INACTIVE */
};

/* Registered and answering: the OST serves and may take new objects. */
static inline bool mds_ost_serves(const struct mds_ost_live *ol)
{
	return ol->ol_known && ol->ol_up && !ol->ol_silent;
}

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

/* ---- mds/writer.c ---- */
/* The writer thread (arg: the server). */
void *mds_writer_main(void *arg);
/* At start: new layouts wait for the OSTs the MDT knows (recovery). */
void mds_recovery_begin(struct mds_server *mds);
/* Ends recovery once the OSTs are back or its window is over. */
void mds_recovery_check(struct mds_server *mds);
/* Reads NACRE_MDS_FAULT (tests only). */
void mds_fault_parse(struct mds_server *mds);

/* ---- mds/destroy.c ---- */
/* The destroy thread (arg: the server). */
void *mds_destroy_main(void *arg);

#endif
