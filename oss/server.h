/* SPDX-License-Identifier: MIT */
/*
 * The object storage server: serves the OSTs given in its configuration
 * over the RPC server, keeps them registered with the MDS (again after the
 * MDS restarts), and holds the row locks of the files whose lock OST it
 * serves (dropped when the connection that took them closes).  nacre-oss's
 * main() is a thin layer over this.
 */
#ifndef OSS_SERVER_H
#define OSS_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/rpc.h"
#include "oss/objstore.h"
#include "oss/rowlock.h"

#define OSS_MAX_OSTS 32

struct oss_conf {
	const char *oc_fsname;
	const char *oc_mds;             /* MDS address */
	const char *oc_listen;          /* "tcp://host:port[,rdma://host:port]" */
	const char *oc_advertise;       /* addresses given to the MDS; NULL: those bound */
	bool oc_format;                 /* format OST dirs that hold no OST yet */
	/* An OST formatted by this start replaces a lost one: it registers
	 * with NC_OSTREG_REPLACE so the MDS takes its new uuid for the index.
	 * Implies oc_format. */
	bool oc_replace;
	int oc_threads;                 /* service threads; 0: 8 */
	const char *oc_metrics;         /* metrics port "tcp://host:port"; NULL: none */
	int oc_nosts;
	struct {
		uint32_t index;
		const char *dir;
	} oc_osts[OSS_MAX_OSTS];
	/* The cluster key file (common/auth.h); NULL: $NACRE_KEYFILE, else
	 * /etc/nacre/FSNAME.key. */
	const char *oc_keyfile;
};

struct oss_server;

/* Opens (and with oc_format, formats) every OST and listens. */
int oss_server_new(const struct oss_conf *conf, struct oss_server **out);
/* Starts the service threads and the registration thread. */
int oss_server_start(struct oss_server *oss);
/* The port actually bound (useful with port 0). */
int oss_server_port(struct oss_server *oss);
void oss_server_stop(struct oss_server *oss);
void oss_server_free(struct oss_server *oss);

/* For the handlers (oss/rpc.c): the OST with @index, or NULL. */
struct oss_ost *oss_server_ost(struct oss_server *oss, uint32_t index);
/* For the handlers: the row locks this server holds (OBJ_LOCK). */
struct oss_locks *oss_server_locks(struct oss_server *oss);
/* The request handler given to the RPC server (oss/rpc.c). */
void oss_handle(struct nc_req *req, void *arg);

/* ---- the metrics port (oss/metrics.c) ---- */
struct oss_metrics;
/* Registers the series (those of the OSTs in @osts too) and hands the
 * registry to @srv (before it starts). */
int oss_metrics_new(struct nc_server *srv, struct oss_ost *const *osts, int nosts,
		    struct oss_metrics **out);
/* Serves GET /metrics on @addr (logged with the port bound). */
int oss_metrics_serve(struct oss_metrics *om, const char *addr);
void oss_metrics_stop(struct oss_metrics *om);
/* After the RPC server is freed. */
void oss_metrics_free(struct oss_metrics *om);
/* NULL when the OSS has no metrics port. */
struct oss_metrics *oss_server_metrics(struct oss_server *oss);
/* Counting, for the handlers; @om may be NULL.  A read's outcome: bytes
 * sent, or its error (a checksum mismatch counts). */
void oss_metrics_read(struct oss_metrics *om, ssize_t n);
void oss_metrics_write(struct oss_metrics *om, uint64_t bytes);
/* Bad blocks an OBJ_VERIFY found. */
void oss_metrics_verify(struct oss_metrics *om, uint32_t bad);

#endif
