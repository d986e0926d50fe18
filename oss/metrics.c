/* SPDX-License-Identifier: MIT */
/*
 * The OSS's metrics port (docs/metrics.md): the RPC server's request
 * counters (common/rpc_metrics.c), bytes read and written, checksum
 * errors, and the space of each OST it serves (read at each scrape).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/metrics_http.h"
#include "oss/server.h"

struct oss_metrics_ost {
	struct oss_ost *mo_ost;
	struct nc_metric *mo_size, *mo_free, *mo_avail;
};

struct oss_metrics {
	struct nc_metrics *om_reg;
	struct nc_mhttp *om_http;
	struct nc_metric *om_read, *om_write, *om_csum_read, *om_csum_verify, *om_errors;
	struct oss_metrics_ost om_osts[OSS_MAX_OSTS];
	int om_nosts;
};

static void om_collect(void *arg)
{
	struct oss_metrics *om = arg;

	for (int i = 0; i < om->om_nosts; i++) {
		struct oss_metrics_ost *mo = &om->om_osts[i];
		struct nc_statfs st;

		if (oss_ost_statfs(mo->mo_ost, &st)) {
			nc_metric_inc(om->om_errors, 1);
			continue;
		}
		nc_metric_set(mo->mo_size, (double)st.s_total);
		nc_metric_set(mo->mo_free, (double)st.s_free);
		nc_metric_set(mo->mo_avail, (double)st.s_avail);
	}
}

static int om_render(void *arg, char **text, size_t *len)
{
	struct oss_metrics *om = arg;

	return nc_metrics_render(om->om_reg, text, len);
}

static int om_register(struct oss_metrics *om, struct oss_ost *const *osts, int nosts)
{
	struct nc_metrics *r = om->om_reg;
	static const char *csum_help = "Checksum mismatches found in stored chunks, by "
				       "what found them: a read, or a verify (scrub).";

	om->om_read = nc_metrics_counter(r, "nacre_oss_read_bytes_total",
					 "Object bytes sent to clients by reads.", NULL);
	om->om_write = nc_metrics_counter(r, "nacre_oss_write_bytes_total",
					  "Object bytes written for clients.", NULL);
	om->om_csum_read = nc_metrics_counter(r, "nacre_oss_checksum_errors_total", csum_help,
					      "source", "read", NULL);
	om->om_csum_verify = nc_metrics_counter(r, "nacre_oss_checksum_errors_total",
						csum_help, "source", "verify", NULL);
	om->om_errors = nc_metrics_counter(r, "nacre_oss_metrics_errors_total",
					   "Scrapes that could not read an OST's space.", NULL);
	if (!om->om_read || !om->om_write || !om->om_csum_read || !om->om_csum_verify ||
	    !om->om_errors)
		return -ENOMEM;
	for (int i = 0; i < nosts; i++) {
		struct oss_metrics_ost *mo = &om->om_osts[i];
		char idx[16];

		snprintf(idx, sizeof(idx), "%u", oss_ost_index(osts[i]));
		mo->mo_ost = osts[i];
		mo->mo_size = nc_metrics_gauge(r, "nacre_oss_ost_size_bytes",
					       "Size of the filesystem holding the OST.",
					       "ost", idx, NULL);
		mo->mo_free = nc_metrics_gauge(r, "nacre_oss_ost_free_bytes",
					       "Free bytes on the filesystem holding the OST.",
					       "ost", idx, NULL);
		mo->mo_avail = nc_metrics_gauge(r, "nacre_oss_ost_available_bytes",
			"Bytes the OSS may still write on the filesystem holding the OST.",
			"ost", idx, NULL);
		if (!mo->mo_size || !mo->mo_free || !mo->mo_avail)
			return -ENOMEM;
		om->om_nosts++;
	}
	return nc_metrics_on_collect(r, om_collect, om);
}

int oss_metrics_new(struct nc_server *srv, struct oss_ost *const *osts, int nosts,
		    struct oss_metrics **out)
{
	struct oss_metrics *om = calloc(1, sizeof(*om));
	int rc;

	if (!om)
		return -ENOMEM;
	rc = nc_metrics_new(&om->om_reg);
	if (!rc)
		rc = om_register(om, osts, nosts);
	if (!rc)
		rc = nc_server_set_metrics(srv, om->om_reg);
	if (rc) {
		oss_metrics_free(om);
		return rc;
	}
	*out = om;
	return 0;
}

int oss_metrics_serve(struct oss_metrics *om, const char *addr)
{
	char bound[128];
	int rc;

	rc = nc_mhttp_start(addr, om_render, om, &om->om_http, bound, sizeof(bound));
	if (rc == -EINVAL)
		nc_error("oss", "bad metrics address '%s' (want tcp://host:port)", addr);
	else if (rc)
		nc_error("oss", "cannot serve metrics on %s: %s", addr, nc_strerror(rc));
	else
		nc_info("oss", "metrics on %s (GET /metrics)", bound);
	return rc;
}

void oss_metrics_stop(struct oss_metrics *om)
{
	if (!om)
		return;
	nc_mhttp_stop(om->om_http);
	om->om_http = NULL;
}

void oss_metrics_free(struct oss_metrics *om)
{
	if (!om)
		return;
	oss_metrics_stop(om);
	nc_metrics_free(om->om_reg);
	free(om);
}

void oss_metrics_read(struct oss_metrics *om, ssize_t n)
{
	if (!om)
		return;
	if (n > 0)
		nc_metric_inc(om->om_read, (uint64_t)n);
	else if (n == -NC_E_CHECKSUM)
		nc_metric_inc(om->om_csum_read, 1);
}

void oss_metrics_write(struct oss_metrics *om, uint64_t bytes)
{
	if (om)
		nc_metric_inc(om->om_write, bytes);
}

void oss_metrics_verify(struct oss_metrics *om, uint32_t bad)
{
	if (om)
		nc_metric_inc(om->om_csum_verify, bad);
}
