/* SPDX-License-Identifier: MIT */
/*
 * The RPC server's metrics (see rpc_metrics.h).  The series of an opcode
 * are registered on its first request, so a server exports only the
 * operations it is asked for; later requests find them in an array
 * indexed by opcode, without a lock.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rpc_metrics.h"

#define RM_MAX_OP 256
#define RM_NAME_MAX 96

struct rm_op {
	struct nc_metric *ro_reqs, *ro_errs, *ro_lat;
};

struct rm_xprt {
	const char *rx_name;
	struct nc_metric *rx_conns, *rx_accepted;
};

struct nc_rpc_metrics {
	struct nc_metrics *rm_reg;
	struct nc_server *rm_srv;
	char rm_prefix[32];
	_Atomic(struct rm_op *) rm_ops[RM_MAX_OP];
	struct rm_xprt rm_xprt[2];
	struct nc_metric *rm_queued, *rm_inflight;
};

static void rm_name(const struct nc_rpc_metrics *rm, const char *suffix, char *out)
{
	snprintf(out, RM_NAME_MAX, "%s_%s", rm->rm_prefix, suffix);
}

/* Sets the queue gauges at each scrape. */
static void rm_collect(void *arg)
{
	struct nc_rpc_metrics *rm = arg;
	uint64_t queued, inflight;

	nc_server_load(rm->rm_srv, &queued, &inflight);
	nc_metric_set(rm->rm_queued, (double)queued);
	nc_metric_set(rm->rm_inflight, (double)inflight);
}

int nc_rpc_metrics_new(struct nc_metrics *reg, const char *name, struct nc_server *srv,
		       struct nc_rpc_metrics **out)
{
	static const char *const xprts[] = { "tcp", "rdma" };
	struct nc_rpc_metrics *rm = calloc(1, sizeof(*rm));
	char n1[RM_NAME_MAX], n2[RM_NAME_MAX];

	if (!rm)
		return -ENOMEM;
	rm->rm_reg = reg;
	rm->rm_srv = srv;
	snprintf(rm->rm_prefix, sizeof(rm->rm_prefix), "nacre_%s", name);
	rm_name(rm, "connections", n1);
	rm_name(rm, "connections_accepted_total", n2);
	for (int i = 0; i < 2; i++) {
		rm->rm_xprt[i].rx_name = xprts[i];
		rm->rm_xprt[i].rx_conns = nc_metrics_gauge(reg, n1,
			"Connections open now, by transport.", "transport", xprts[i], NULL);
		rm->rm_xprt[i].rx_accepted = nc_metrics_counter(reg, n2,
			"Connections accepted, by transport.", "transport", xprts[i], NULL);
	}
	rm_name(rm, "requests_queued", n1);
	rm->rm_queued = nc_metrics_gauge(reg, n1,
		"Requests received and waiting for a service thread (queue depth).", NULL);
	rm_name(rm, "requests_in_flight", n1);
	rm->rm_inflight = nc_metrics_gauge(reg, n1,
		"Requests received and not yet answered (queued or being served).", NULL);
	if (!rm->rm_xprt[0].rx_conns || !rm->rm_xprt[1].rx_accepted || !rm->rm_queued ||
	    !rm->rm_inflight || nc_metrics_on_collect(reg, rm_collect, rm)) {
		nc_rpc_metrics_free(rm);
		return -ENOMEM;
	}
	*out = rm;
	return 0;
}

void nc_rpc_metrics_free(struct nc_rpc_metrics *rm)
{
	if (!rm)
		return;
	for (int i = 0; i < RM_MAX_OP; i++)
		free(atomic_load(&rm->rm_ops[i]));
	free(rm);
}

/* The series of @opcode, registered on first use; NULL without memory. */
static struct rm_op *rm_op_get(struct nc_rpc_metrics *rm, uint16_t opcode)
{
	struct rm_op *op = atomic_load_explicit(&rm->rm_ops[opcode], memory_order_acquire);
	struct rm_op *none = NULL;
	char label[32], n[RM_NAME_MAX];
	const char *s;
	size_t i;

	if (op)
		return op;
	op = calloc(1, sizeof(*op));
	if (!op)
		return NULL;
	/* "LOOKUP_MANY" -> "lookup_many" */
	s = nc_op_name(opcode);
	for (i = 0; s[i] && i + 1 < sizeof(label); i++)
		label[i] = (char)tolower((unsigned char)s[i]);
	label[i] = '\0';
	rm_name(rm, "requests_total", n);
	op->ro_reqs = nc_metrics_counter(rm->rm_reg, n, "Requests answered, by operation.",
					 "op", label, NULL);
	rm_name(rm, "request_errors_total", n);
	op->ro_errs = nc_metrics_counter(rm->rm_reg, n,
					 "Requests answered with an error, by operation.",
					 "op", label, NULL);
	rm_name(rm, "request_duration_seconds", n);
	op->ro_lat = nc_metrics_histogram(rm->rm_reg, n,
		"Time from a request's arrival to its reply, by operation.",
		nc_metrics_latency_buckets, nc_metrics_latency_nbuckets, "op", label, NULL);
	/* Two threads may race here: both found the same series (the
	 * registry returns what exists), one keeps its copy. */
	if (!atomic_compare_exchange_strong(&rm->rm_ops[opcode], &none, op)) {
		free(op);
		op = none;
	}
	return op;
}

void nc_rpc_metrics_req(struct nc_rpc_metrics *rm, uint16_t opcode, int status,
			const struct timespec *start)
{
	struct timespec now;
	struct rm_op *op;

	if (!rm || opcode >= RM_MAX_OP)
		return;
	op = rm_op_get(rm, opcode);
	if (!op)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	nc_metric_inc(op->ro_reqs, 1);
	if (status)
		nc_metric_inc(op->ro_errs, 1);
	nc_metric_observe(op->ro_lat, (double)(now.tv_sec - start->tv_sec) +
				      (double)(now.tv_nsec - start->tv_nsec) * 1e-9);
}

void nc_rpc_metrics_conn(struct nc_rpc_metrics *rm, const char *xprt, int delta)
{
	if (!rm)
		return;
	for (int i = 0; i < 2; i++) {
		if (strcmp(rm->rm_xprt[i].rx_name, xprt))
			continue;
		nc_metric_add(rm->rm_xprt[i].rx_conns, delta);
		if (delta > 0)
			nc_metric_inc(rm->rm_xprt[i].rx_accepted, 1);
	}
}
