/* SPDX-License-Identifier: MIT */
/*
 * The metrics registry and its Prometheus text exposition (see metrics.h).
 *
 * Values are atomics: a counter is a 64-bit count, a gauge and a histogram
 * sum are doubles kept as their bit patterns (updated by compare-and-swap,
 * as C11 has no atomic add of doubles), a histogram keeps one count per
 * bucket (not cumulative, so an observation touches one bucket) and sums
 * them up when it is written out.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"

#define METRICS_MAX_COLLECT 8
/* Label pairs of one series; ours have one or two. */
#define METRICS_MAX_LABELS 4

const double nc_metrics_latency_buckets[] = {
	50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3,
	50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10,
};
const int nc_metrics_latency_nbuckets =
	(int)(sizeof(nc_metrics_latency_buckets) / sizeof(nc_metrics_latency_buckets[0]));

struct metric_family;

struct nc_metric {
	struct metric_family *m_fam;
	char *m_labels;                 /* 'a="x",b="y"', escaped; "" for none */
	atomic_uint_fast64_t m_count;   /* counter value */
	atomic_uint_fast64_t m_bits;    /* gauge value or histogram sum (double) */
	atomic_uint_fast64_t *m_buckets; /* histogram: nbounds + 1 counts */
	struct nc_metric *m_next;
};

struct metric_family {
	char *mf_name;
	char *mf_help;
	enum nc_metric_type mf_type;
	double *mf_bounds;
	int mf_nbounds;
	struct nc_metric *mf_first, *mf_last;
	struct metric_family *mf_next;
};

struct nc_metrics {
	pthread_mutex_t mr_lock;
	struct metric_family *mr_first, *mr_last;
	struct {
		nc_metrics_collect_fn fn;
		void *arg;
	} mr_collect[METRICS_MAX_COLLECT];
	int mr_ncollect;
};

static uint64_t dbl_bits(double v)
{
	uint64_t b;

	memcpy(&b, &v, sizeof(b));
	return b;
}

static double bits_dbl(uint64_t b)
{
	double v;

	memcpy(&v, &b, sizeof(v));
	return v;
}

int nc_metrics_new(struct nc_metrics **out)
{
	struct nc_metrics *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return -ENOMEM;
	pthread_mutex_init(&reg->mr_lock, NULL);
	*out = reg;
	return 0;
}

static void metric_free(struct nc_metric *m)
{
	free(m->m_labels);
	free(m->m_buckets);
	free(m);
}

void nc_metrics_free(struct nc_metrics *reg)
{
	struct metric_family *f, *fn;

	if (!reg)
		return;
	for (f = reg->mr_first; f; f = fn) {
		struct nc_metric *m, *mn;

		fn = f->mf_next;
		for (m = f->mf_first; m; m = mn) {
			mn = m->m_next;
			metric_free(m);
		}
		free(f->mf_name);
		free(f->mf_help);
		free(f->mf_bounds);
		free(f);
	}
	pthread_mutex_destroy(&reg->mr_lock);
	free(reg);
}

/* ---- names and labels ---- */

static bool name_is_valid(const char *s, bool colon)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (colon && c == ':') || (p != s && c >= '0' && c <= '9');

		if (!ok)
			return false;
	}
	return true;
}

size_t nc_metrics_escape_label(const char *s, char *out, size_t size)
{
	size_t n = 0;

	for (; *s; s++) {
		const char *rep = NULL;
		char one[2] = { *s, 0 };

		if (*s == '\\')
			rep = "\\\\";
		else if (*s == '"')
			rep = "\\\"";
		else if (*s == '\n')
			rep = "\\n";
		else
			rep = one;
		for (; *rep; rep++, n++)
			if (n + 1 < size)
				out[n] = *rep;
	}
	if (size)
		out[n < size ? n : size - 1] = '\0';
	return n;
}

/*
 * The label text of a series from the NULL-terminated pairs in @ap:
 * malloc'd, or NULL (invalid names, "le" in a histogram, no memory).
 */
static char *labels_build(va_list ap, bool histogram)
{
	const char *k[METRICS_MAX_LABELS], *v[METRICS_MAX_LABELS];
	size_t need = 1, off = 0;
	int n = 0;
	char *out;

	for (;;) {
		const char *key = va_arg(ap, const char *);

		if (!key)
			break;
		if (n == METRICS_MAX_LABELS)
			return NULL;
		k[n] = key;
		v[n] = va_arg(ap, const char *);
		if (!v[n] || !name_is_valid(k[n], false) || !strncmp(k[n], "__", 2) ||
		    (histogram && !strcmp(k[n], "le")))
			return NULL;
		for (int i = 0; i < n; i++)
			if (!strcmp(k[i], k[n]))
				return NULL;
		need += strlen(k[n]) + 4 + nc_metrics_escape_label(v[n], NULL, 0);
		n++;
	}
	out = malloc(need);
	if (!out)
		return NULL;
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		off += (size_t)snprintf(out + off, need - off, "%s%s=\"", i ? "," : "", k[i]);
		off += nc_metrics_escape_label(v[i], out + off, need - off);
		off += (size_t)snprintf(out + off, need - off, "\"");
	}
	return out;
}

/* ---- registration ---- */

static bool family_matches(const struct metric_family *f, const char *help,
			   enum nc_metric_type type, const double *bounds, int nbounds)
{
	if (f->mf_type != type || strcmp(f->mf_help, help))
		return false;
	if (type != NC_METRIC_HISTOGRAM)
		return true;
	return f->mf_nbounds == nbounds &&
	       !memcmp(f->mf_bounds, bounds, sizeof(double) * (size_t)nbounds);
}

/* Under mr_lock: the family @name, made when absent; NULL on conflict. */
static struct metric_family *family_get(struct nc_metrics *reg, const char *name,
					const char *help, enum nc_metric_type type,
					const double *bounds, int nbounds)
{
	struct metric_family *f;

	for (f = reg->mr_first; f; f = f->mf_next)
		if (!strcmp(f->mf_name, name))
			return family_matches(f, help, type, bounds, nbounds) ? f : NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->mf_name = strdup(name);
	f->mf_help = strdup(help);
	f->mf_type = type;
	if (type == NC_METRIC_HISTOGRAM) {
		f->mf_bounds = malloc(sizeof(double) * (size_t)nbounds);
		if (f->mf_bounds)
			memcpy(f->mf_bounds, bounds, sizeof(double) * (size_t)nbounds);
		f->mf_nbounds = nbounds;
	}
	if (!f->mf_name || !f->mf_help || (type == NC_METRIC_HISTOGRAM && !f->mf_bounds)) {
		free(f->mf_name);
		free(f->mf_help);
		free(f->mf_bounds);
		free(f);
		return NULL;
	}
	if (reg->mr_last)
		reg->mr_last->mf_next = f;
	else
		reg->mr_first = f;
	reg->mr_last = f;
	return f;
}

static bool bounds_are_valid(const double *bounds, int nbounds)
{
	if (nbounds < 1 || nbounds > NC_METRIC_MAX_BUCKETS || !bounds)
		return false;
	for (int i = 0; i < nbounds; i++) {
		if (!isfinite(bounds[i]) || (i && bounds[i] <= bounds[i - 1]))
			return false;
	}
	return true;
}

static struct nc_metric *metric_register(struct nc_metrics *reg, const char *name,
					 const char *help, enum nc_metric_type type,
					 const double *bounds, int nbounds, va_list ap)
{
	struct metric_family *f;
	struct nc_metric *m;
	char *labels;

	if (!reg || !name_is_valid(name, true) || !help)
		return NULL;
	if (type == NC_METRIC_HISTOGRAM && !bounds_are_valid(bounds, nbounds))
		return NULL;
	labels = labels_build(ap, type == NC_METRIC_HISTOGRAM);
	if (!labels)
		return NULL;
	pthread_mutex_lock(&reg->mr_lock);
	f = family_get(reg, name, help, type, bounds, nbounds);
	if (!f) {
		m = NULL;
		goto out_unlock;
	}
	for (m = f->mf_first; m; m = m->m_next)
		if (!strcmp(m->m_labels, labels))
			goto out_unlock;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto out_unlock;
	if (type == NC_METRIC_HISTOGRAM) {
		m->m_buckets = calloc((size_t)nbounds + 1, sizeof(*m->m_buckets));
		if (!m->m_buckets) {
			free(m);
			m = NULL;
			goto out_unlock;
		}
	}
	m->m_fam = f;
	m->m_labels = labels;
	labels = NULL;
	atomic_init(&m->m_bits, dbl_bits(0));
	if (f->mf_last)
		f->mf_last->m_next = m;
	else
		f->mf_first = m;
	f->mf_last = m;
out_unlock:
	pthread_mutex_unlock(&reg->mr_lock);
	free(labels);
	return m;
}

struct nc_metric *nc_metrics_counter(struct nc_metrics *reg, const char *name,
				     const char *help, ...)
{
	struct nc_metric *m;
	va_list ap;

	va_start(ap, help);
	m = metric_register(reg, name, help, NC_METRIC_COUNTER, NULL, 0, ap);
	va_end(ap);
	return m;
}

struct nc_metric *nc_metrics_gauge(struct nc_metrics *reg, const char *name,
				   const char *help, ...)
{
	struct nc_metric *m;
	va_list ap;

	va_start(ap, help);
	m = metric_register(reg, name, help, NC_METRIC_GAUGE, NULL, 0, ap);
	va_end(ap);
	return m;
}

struct nc_metric *nc_metrics_histogram(struct nc_metrics *reg, const char *name,
				       const char *help, const double *bounds,
				       int nbounds, ...)
{
	struct nc_metric *m;
	va_list ap;

	va_start(ap, nbounds);
	m = metric_register(reg, name, help, NC_METRIC_HISTOGRAM, bounds, nbounds, ap);
	va_end(ap);
	return m;
}

int nc_metrics_on_collect(struct nc_metrics *reg, nc_metrics_collect_fn fn, void *arg)
{
	int rc = 0;

	pthread_mutex_lock(&reg->mr_lock);
	if (reg->mr_ncollect == METRICS_MAX_COLLECT) {
		rc = -ENOSPC;
	} else {
		reg->mr_collect[reg->mr_ncollect].fn = fn;
		reg->mr_collect[reg->mr_ncollect].arg = arg;
		reg->mr_ncollect++;
	}
	pthread_mutex_unlock(&reg->mr_lock);
	return rc;
}

/* ---- updates (no lock) ---- */

void nc_metric_inc(struct nc_metric *m, uint64_t n)
{
	if (m && m->m_fam->mf_type == NC_METRIC_COUNTER)
		atomic_fetch_add_explicit(&m->m_count, n, memory_order_relaxed);
}

static void bits_add(atomic_uint_fast64_t *bits, double d)
{
	uint_fast64_t old = atomic_load_explicit(bits, memory_order_relaxed);

	while (!atomic_compare_exchange_weak_explicit(bits, &old, dbl_bits(bits_dbl(old) + d),
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

void nc_metric_set(struct nc_metric *m, double v)
{
	if (m && m->m_fam->mf_type == NC_METRIC_GAUGE)
		atomic_store_explicit(&m->m_bits, dbl_bits(v), memory_order_relaxed);
}

void nc_metric_add(struct nc_metric *m, double d)
{
	if (m && m->m_fam->mf_type == NC_METRIC_GAUGE)
		bits_add(&m->m_bits, d);
}

void nc_metric_observe(struct nc_metric *m, double v)
{
	const struct metric_family *f;
	int i;

	if (!m || m->m_fam->mf_type != NC_METRIC_HISTOGRAM || isnan(v))
		return;
	f = m->m_fam;
	/* Few buckets: a linear scan is as quick as a binary search. */
	for (i = 0; i < f->mf_nbounds && v > f->mf_bounds[i]; i++)
		;
	atomic_fetch_add_explicit(&m->m_buckets[i], 1, memory_order_relaxed);
	bits_add(&m->m_bits, v);
}

static uint64_t hist_count(const struct nc_metric *m)
{
	uint64_t n = 0;

	for (int i = 0; i <= m->m_fam->mf_nbounds; i++)
		n += atomic_load_explicit(&m->m_buckets[i], memory_order_relaxed);
	return n;
}

double nc_metric_value(const struct nc_metric *m)
{
	if (!m)
		return 0;
	switch (m->m_fam->mf_type) {
	case NC_METRIC_COUNTER:
		return (double)atomic_load_explicit(&m->m_count, memory_order_relaxed);
	case NC_METRIC_GAUGE:
		return bits_dbl(atomic_load_explicit(&m->m_bits, memory_order_relaxed));
	case NC_METRIC_HISTOGRAM:
		return (double)hist_count(m);
	}
	return 0;
}

double nc_metric_sum(const struct nc_metric *m)
{
	if (!m || m->m_fam->mf_type != NC_METRIC_HISTOGRAM)
		return 0;
	return bits_dbl(atomic_load_explicit(&m->m_bits, memory_order_relaxed));
}

/* ---- the text exposition ---- */

struct mbuf {
	char *b;
	size_t len, cap;
	bool err;
};

static void mbuf_printf(struct mbuf *mb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void mbuf_printf(struct mbuf *mb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (mb->err)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(mb->b + mb->len, mb->cap - mb->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			mb->err = true;
			return;
		}
		if ((size_t)n < mb->cap - mb->len)
			break;
		size_t ncap = (mb->cap + (size_t)n + 1) * 2;
		char *nb = realloc(mb->b, ncap);

		if (!nb) {
			mb->err = true;
			return;
		}
		mb->b = nb;
		mb->cap = ncap;
	}
	mb->len += (size_t)n;
}

/* A sample value as Prometheus writes floats: the shortest decimal that
 * reads back as @v ("0.25", not "0.25000000000000000"). */
static void fmt_value(double v, char *buf, size_t size)
{
	if (isnan(v)) {
		snprintf(buf, size, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, size, "%sInf", v > 0 ? "+" : "-");
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* HELP text escapes only backslash and newline. */
static void write_help(struct mbuf *mb, const struct metric_family *f)
{
	mbuf_printf(mb, "# HELP %s ", f->mf_name);
	for (const char *p = f->mf_help; *p; p++) {
		if (*p == '\\')
			mbuf_printf(mb, "\\\\");
		else if (*p == '\n')
			mbuf_printf(mb, "\\n");
		else
			mbuf_printf(mb, "%c", *p);
	}
	mbuf_printf(mb, "\n");
}

static void write_histogram(struct mbuf *mb, const struct metric_family *f,
			    const struct nc_metric *m)
{
	const char *sep = m->m_labels[0] ? "," : "";
	char sum[32];
	uint64_t cum = 0;

	for (int i = 0; i <= f->mf_nbounds; i++) {
		char le[32];

		cum += atomic_load_explicit(&m->m_buckets[i], memory_order_relaxed);
		if (i < f->mf_nbounds)
			snprintf(le, sizeof(le), "%g", f->mf_bounds[i]);
		else
			snprintf(le, sizeof(le), "+Inf");
		mbuf_printf(mb, "%s_bucket{%s%sle=\"%s\"} %" PRIu64 "\n", f->mf_name,
			    m->m_labels, sep, le, cum);
	}
	fmt_value(nc_metric_sum(m), sum, sizeof(sum));
	/* The count is the +Inf bucket's, read once above: the two agree
	 * even while observations go on. */
	if (m->m_labels[0]) {
		mbuf_printf(mb, "%s_sum{%s} %s\n", f->mf_name, m->m_labels, sum);
		mbuf_printf(mb, "%s_count{%s} %" PRIu64 "\n", f->mf_name, m->m_labels, cum);
	} else {
		mbuf_printf(mb, "%s_sum %s\n", f->mf_name, sum);
		mbuf_printf(mb, "%s_count %" PRIu64 "\n", f->mf_name, cum);
	}
}

static void write_family(struct mbuf *mb, const struct metric_family *f)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };

	if (!f->mf_first)
		return;
	write_help(mb, f);
	mbuf_printf(mb, "# TYPE %s %s\n", f->mf_name, types[f->mf_type]);
	for (const struct nc_metric *m = f->mf_first; m; m = m->m_next) {
		char val[32];

		if (f->mf_type == NC_METRIC_HISTOGRAM) {
			write_histogram(mb, f, m);
			continue;
		}
		if (f->mf_type == NC_METRIC_COUNTER)
			snprintf(val, sizeof(val), "%" PRIu64,
				 (uint64_t)atomic_load_explicit(&m->m_count,
								memory_order_relaxed));
		else
			fmt_value(nc_metric_value(m), val, sizeof(val));
		if (m->m_labels[0])
			mbuf_printf(mb, "%s{%s} %s\n", f->mf_name, m->m_labels, val);
		else
			mbuf_printf(mb, "%s %s\n", f->mf_name, val);
	}
}

int nc_metrics_render(struct nc_metrics *reg, char **text, size_t *len)
{
	struct mbuf mb = { .cap = 4096 };

	mb.b = malloc(mb.cap);
	if (!mb.b)
		return -ENOMEM;
	mb.b[0] = '\0';
	pthread_mutex_lock(&reg->mr_lock);
	for (int i = 0; i < reg->mr_ncollect; i++)
		reg->mr_collect[i].fn(reg->mr_collect[i].arg);
	for (const struct metric_family *f = reg->mr_first; f; f = f->mf_next)
		write_family(&mb, f);
	pthread_mutex_unlock(&reg->mr_lock);
	if (mb.err) {
		free(mb.b);
		return -ENOMEM;
	}
	*text = mb.b;
	*len = mb.len;
	return 0;
}
