/* SPDX-License-Identifier: MIT */
/*
 * What the RPC server counts for the metrics port (docs/metrics.md): per
 * opcode, requests, errors and a latency histogram; connections per
 * transport; requests queued and in flight.  rpc_server.c calls these
 * hooks; with no metrics set up it never does.
 */
#ifndef NC_RPC_METRICS_H
#define NC_RPC_METRICS_H

#include <stdint.h>
#include <time.h>

#include "common/metrics.h"
#include "common/rpc.h"

struct nc_rpc_metrics;

/* Registers the server's series in @reg under "nacre_@name_".  0 or
 * -ENOMEM.  @srv is read by a collector at every scrape. */
int nc_rpc_metrics_new(struct nc_metrics *reg, const char *name, struct nc_server *srv,
		       struct nc_rpc_metrics **out);
void nc_rpc_metrics_free(struct nc_rpc_metrics *rm);
/* A request of @opcode, received at @start (CLOCK_MONOTONIC), answered
 * with @status. */
void nc_rpc_metrics_req(struct nc_rpc_metrics *rm, uint16_t opcode, int status,
			const struct timespec *start);
/* A connection over transport @xprt ("tcp", "rdma") opened (+1) or
 * closed (-1). */
void nc_rpc_metrics_conn(struct nc_rpc_metrics *rm, const char *xprt, int delta);

#endif
