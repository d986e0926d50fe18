/* SPDX-License-Identifier: MIT */
/*
 * Metrics: a registry of counters, gauges and fixed-bucket histograms, and
 * the Prometheus text exposition (format 0.0.4) of them.  docs/metrics.md
 * lists every metric the daemons export.
 *
 * A series is a metric name with a set of label values; series of one name
 * form a family, which carries the HELP text and the TYPE.  Registering
 * takes the registry lock and is for setup (or the first use of a label
 * value); updating a series is a few atomic operations and takes no lock,
 * so hot paths (every request, every byte count) pay almost nothing.
 *
 * Every update function accepts NULL and does nothing: code that counts
 * need not care whether anyone registered the series (a server without a
 * metrics port, a failed allocation at setup).
 *
 * Ownership: series belong to the registry and live until nc_metrics_free().
 */
#ifndef NC_METRICS_H
#define NC_METRICS_H

#include <stddef.h>
#include <stdint.h>

enum nc_metric_type {
	NC_METRIC_COUNTER,
	NC_METRIC_GAUGE,
	NC_METRIC_HISTOGRAM,
};

/* Histograms hold at most this many finite buckets (plus +Inf). */
#define NC_METRIC_MAX_BUCKETS 32

struct nc_metrics;
struct nc_metric;

/* Bucket bounds, in seconds, of request latency histograms: 50 us to 10 s. */
extern const double nc_metrics_latency_buckets[];
extern const int nc_metrics_latency_nbuckets;

/* 0 or -ENOMEM. */
int nc_metrics_new(struct nc_metrics **out);
/* NULL is a no-op. */
void nc_metrics_free(struct nc_metrics *reg);

/*
 * Register a series, or find it when the same name and labels were
 * registered before.  The variable arguments are label name and value
 * pairs ending with NULL: nc_metrics_counter(reg, "x_total", "help",
 * "op", "read", NULL).  @name and label names must follow the Prometheus
 * rules ([a-zA-Z_:][a-zA-Z0-9_:]*, labels without ':' and not starting
 * with "__"); label values may be any text (escaped on output).  A
 * histogram's @bounds are its finite upper bounds, strictly increasing,
 * copied; it may not use the label "le".
 * @return the series, or NULL: invalid names, a name registered before
 * with another type, help or buckets, or no memory (or @reg NULL).
 */
struct nc_metric *nc_metrics_counter(struct nc_metrics *reg, const char *name,
				     const char *help, ...) __attribute__((sentinel));
struct nc_metric *nc_metrics_gauge(struct nc_metrics *reg, const char *name,
				   const char *help, ...) __attribute__((sentinel));
struct nc_metric *nc_metrics_histogram(struct nc_metrics *reg, const char *name,
				       const char *help, const double *bounds,
				       int nbounds, ...) __attribute__((sentinel));

/* Counter: adds @n. */
void nc_metric_inc(struct nc_metric *m, uint64_t n);
/* Gauge: sets, or adds @d (which may be negative). */
void nc_metric_set(struct nc_metric *m, double v);
void nc_metric_add(struct nc_metric *m, double d);
/* Histogram: one observation of @v. */
void nc_metric_observe(struct nc_metric *m, double v);

/* What a series holds now: a counter's count, a gauge's value, a
 * histogram's number of observations (value) and their sum (sum). */
double nc_metric_value(const struct nc_metric *m);
double nc_metric_sum(const struct nc_metric *m);

/*
 * A function called at the start of every nc_metrics_render(), before any
 * text is written, to set gauges whose values are cheaper to read when
 * asked for than to keep up to date (sizes, queue lengths).  It runs under
 * the registry lock, so it must not register series.  At most 8 per
 * registry: 0 or -ENOSPC.
 */
typedef void (*nc_metrics_collect_fn)(void *arg);
int nc_metrics_on_collect(struct nc_metrics *reg, nc_metrics_collect_fn fn, void *arg);

/*
 * The whole registry in the Prometheus text format: for each family a
 * "# HELP" and a "# TYPE" line, then its series in registration order;
 * histograms as cumulative _bucket series (le="+Inf" last), _sum and
 * _count.  Families with no series are left out.
 * @note *text is malloc'd and NUL-terminated; the caller frees it.
 * 0 or -ENOMEM.
 */
int nc_metrics_render(struct nc_metrics *reg, char **text, size_t *len);

/*
 * Appends @s to @out (of @size bytes, NUL-terminated) escaped as a label
 * value: backslash, double quote and newline become \\, \" and \n.
 * Returns the length the escaped text needs (like snprintf).
 */
size_t nc_metrics_escape_label(const char *s, char *out, size_t size);

#endif
