/* SPDX-License-Identifier: MIT */
/*
 * nacre-bench figures: every measured value is one figure (workload,
 * parameter, concurrency, metric, target), kept in one list and printed
 * either as tables or as one JSON object.  A figure's ratio is its value
 * over the same figure on the local directory; the loopback TCP figures are
 * compared with the local sequential read of 1 MiB requests over as many
 * streams.  Small-file figures of a packing directory carry ".pack" in
 * their parameter ("128k.pack"); they too are compared with the local
 * figure ("128k"), and also with the same target's large-file read and its
 * figure without packing.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct br_fig {
	enum bench_kind bf_kind;
	char bf_workload[24];
	char bf_param[24];
	unsigned int bf_conc;
	char bf_metric[16];
	const char *bf_unit;
	double bf_value;                /* the median of the samples */
	unsigned int bf_nsamples;
	double bf_samples[BENCH_MAX_REPEAT];
};

static struct br_fig *br_figs;
static size_t br_nfigs;
static size_t br_cap;

static const char *const br_kind_names[BENCH_NKINDS] = {
	[BENCH_LIBNACRE] = "libnacre",
	[BENCH_FUSE] = "fuse",
	[BENCH_LOCAL] = "local",
	[BENCH_TCP] = "tcp",
	[BENCH_FUSE_LIMIT] = "fuse_limit",
};

const char *bench_kind_name(enum bench_kind kind)
{
	return kind < BENCH_NKINDS ? br_kind_names[kind] : "?";
}

void bench_note(const char *fmt, ...)
{
	va_list ap;

	fputs("nacre-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int br_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of @n samples (the mean of the middle two when n is even). */
static double br_median(const double *v, unsigned int n)
{
	double s[BENCH_MAX_REPEAT];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), br_cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int bench_fig_add(enum bench_kind kind, const char *workload,
		  const char *param, unsigned int conc, const char *metric,
		  const char *unit, double value)
{
	struct br_fig *f;

	/* The same figure again (--repeat): one more sample. */
	for (size_t i = 0; i < br_nfigs; i++) {
		f = &br_figs[i];
		if (f->bf_kind == kind && f->bf_conc == conc &&
		    !strcmp(f->bf_workload, workload) && !strcmp(f->bf_param, param) &&
		    !strcmp(f->bf_metric, metric)) {
			if (f->bf_nsamples < BENCH_MAX_REPEAT)
				f->bf_samples[f->bf_nsamples++] = value;
			f->bf_value = br_median(f->bf_samples, f->bf_nsamples);
			return 0;
		}
	}
	if (br_nfigs == br_cap) {
		size_t cap = br_cap ? br_cap * 2 : 128;
		struct br_fig *nf = realloc(br_figs, cap * sizeof(*nf));

		if (nf == NULL)
			return -ENOMEM;
		br_figs = nf;
		br_cap = cap;
	}
	f = &br_figs[br_nfigs++];
	f->bf_kind = kind;
	snprintf(f->bf_workload, sizeof(f->bf_workload), "%s", workload);
	snprintf(f->bf_param, sizeof(f->bf_param), "%s", param);
	f->bf_conc = conc;
	snprintf(f->bf_metric, sizeof(f->bf_metric), "%s", metric);
	f->bf_unit = unit;
	f->bf_value = value;
	f->bf_nsamples = 1;
	f->bf_samples[0] = value;
	return 0;
}

void bench_report_free(void)
{
	free(br_figs);
	br_figs = NULL;
	br_nfigs = br_cap = 0;
}

static const struct br_fig *br_find(enum bench_kind kind, const char *workload,
				    const char *param, unsigned int conc,
				    const char *metric)
{
	size_t i;

	for (i = 0; i < br_nfigs; i++) {
		const struct br_fig *f = &br_figs[i];

		if (f->bf_kind == kind && f->bf_conc == conc &&
		    strcmp(f->bf_workload, workload) == 0 &&
		    strcmp(f->bf_param, param) == 0 &&
		    strcmp(f->bf_metric, metric) == 0)
			return f;
	}
	return NULL;
}

/* @f's value over @ref's; NAN where there is none to compare with. */
static double br_over(const struct br_fig *f, const struct br_fig *ref,
		      double scale)
{
	if (f == NULL || ref == NULL || !(ref->bf_value > 0))
		return NAN;
	return f->bf_value / (ref->bf_value * scale);
}

/* The parameter without a ".pack" (the small files of a pack directory). */
static const char *br_unpacked(const char *param, char *buf, size_t len)
{
	const char *dot = strchr(param, '.');

	snprintf(buf, len, "%.*s", dot ? (int)(dot - param) : (int)strlen(param),
		 param);
	return buf;
}

/* The value over the local one; NAN where there is none to compare with. */
static double br_ratio(const struct br_fig *f)
{
	const struct br_fig *l;
	char param[24];

	if (f->bf_kind == BENCH_TCP)
		l = br_find(BENCH_LOCAL, "seq_read", "1m", f->bf_conc, "gbps");
	else
		l = br_find(BENCH_LOCAL, f->bf_workload,
			    br_unpacked(f->bf_param, param, sizeof(param)),
			    f->bf_conc, f->bf_metric);
	return br_over(f, l, 1);
}

static bool br_is_small(const struct br_fig *f)
{
	return strncmp(f->bf_workload, "small_", 6) == 0;
}

static bool br_is_packed(const struct br_fig *f)
{
	return strstr(f->bf_param, ".pack") != NULL;
}

/* A small-file MB/s over the same target's large-file read (1 MiB
 * requests, 4 streams) of this run. */
static double br_seq_ratio(const struct br_fig *f)
{
	if (f == NULL || strcmp(f->bf_metric, "mbps") != 0)
		return NAN;
	return br_over(f, br_find(f->bf_kind, "seq_read", "1m", 4, "gbps"),
		       1000);
}

/* A pack directory's figure over the plain directory's. */
static double br_pack_ratio(const struct br_fig *f)
{
	char param[24];

	if (f == NULL || !br_is_packed(f))
		return NAN;
	return br_over(f, br_find(f->bf_kind, f->bf_workload,
				  br_unpacked(f->bf_param, param, sizeof(param)),
				  f->bf_conc, f->bf_metric), 1);
}

/* ---- tables ---- */

static void br_cell(enum bench_kind kind, const char *workload,
		    const char *param, unsigned int conc, const char *metric,
		    int width, int prec)
{
	const struct br_fig *f = br_find(kind, workload, param, conc, metric);

	if (f == NULL)
		printf(" %*s", width, "-");
	else
		printf(" %*.*f", width, prec, f->bf_value);
}

static void br_ratio_cell(enum bench_kind kind, const char *workload,
			  const char *param, unsigned int conc,
			  const char *metric, int width)
{
	const struct br_fig *f = br_find(kind, workload, param, conc, metric);
	double r = f ? br_ratio(f) : NAN;

	if (isnan(r))
		printf(" %*s", width, "-");
	else
		printf(" %*.2f", width, r);
}

static const char *br_req_text(const char *param)
{
	if (strcmp(param, "1m") == 0)
		return "1 MiB";
	if (strcmp(param, "4m") == 0)
		return "4 MiB";
	if (strcmp(param, "4k") == 0)
		return "4 KiB";
	if (strcmp(param, "128k") == 0)
		return "128 KiB";
	return param;
}

static void br_ratio_value(double r, int width)
{
	if (isnan(r))
		printf(" %*s", width, "-");
	else
		printf(" %*.2f", width, r);
}

static void br_seq_table(const struct bench_run *run, const char *workload,
			 const char *title, const char *param)
{
	const struct bench_cfg *cfg = run->br_cfg;
	bool is_read = strncmp(workload, "seq_read", 8) == 0;
	/* The FUSE limit reads cold only, and runs with the mount only. */
	bool limit = strcmp(workload, "seq_read") == 0 && run->br_limit != NULL;
	unsigned int i, k;

	printf("\n%s, %s requests\n", title, br_req_text(param));
	printf("%-7s", "");
	for (k = 0; k <= BENCH_LOCAL; k++)
		printf(" %-28s", bench_kind_name(k));
	printf(" %-17s%s%s\n", "ratio to local", is_read ? " tcp" : "",
	       limit ? "      fuse limit" : "");
	printf("%-7s", "streams");
	for (k = 0; k <= BENCH_LOCAL; k++)
		printf(" %8s %8s %10s", "mean ms", "p99 ms", "GB/s");
	printf(" %8s %8s%s%s\n", "libnacre", "fuse", is_read ? "     GB/s" : "",
	       limit ? "     GB/s fuse/lim" : "");
	for (i = 0; i < cfg->bc_nstreams; i++) {
		unsigned int n = cfg->bc_streams[i];

		printf("%7u", n);
		for (k = 0; k <= BENCH_LOCAL; k++) {
			br_cell(k, workload, param, n, "lat_mean", 8, 2);
			br_cell(k, workload, param, n, "lat_p99", 8, 2);
			br_cell(k, workload, param, n, "gbps", 10, 3);
		}
		br_ratio_cell(BENCH_LIBNACRE, workload, param, n, "gbps", 8);
		br_ratio_cell(BENCH_FUSE, workload, param, n, "gbps", 8);
		if (is_read)
			br_cell(BENCH_TCP, "tcp", "1m", n, "gbps", 8, 3);
		if (limit) {
			br_cell(BENCH_FUSE_LIMIT, workload, param, n, "gbps", 8, 3);
			br_ratio_value(br_over(br_find(BENCH_FUSE, workload, param, n, "gbps"),
					       br_find(BENCH_FUSE_LIMIT, workload, param, n, "gbps"),
					       1), 8);
		}
		printf("\n");
	}
}

static void br_rand_table(const struct bench_run *run)
{
	const struct bench_cfg *cfg = run->br_cfg;
	unsigned int i, j, k;

	printf("\nRandom reads over the files of the last sequential run\n");
	printf("%-8s %-7s", "size", "threads");
	for (k = 0; k <= BENCH_LOCAL; k++)
		printf(" %10s %8s", bench_kind_name(k), "");
	printf(" %-17s\n", "IOPS ratio to local");
	printf("%-8s %-7s", "", "");
	for (k = 0; k <= BENCH_LOCAL; k++)
		printf(" %10s %8s", "IOPS", "p99 ms");
	printf(" %8s %8s\n", "libnacre", "fuse");
	for (i = 0; i < 2; i++) {
		char param[24];

		snprintf(param, sizeof(param), "%zuk", cfg->bc_rand[i] >> 10);
		for (j = 0; j < cfg->bc_nthreads; j++) {
			unsigned int n = cfg->bc_threads[j];

			printf("%-8s %7u", br_req_text(param), n);
			for (k = 0; k <= BENCH_LOCAL; k++) {
				br_cell(k, "rand_read", param, n, "iops", 10, 0);
				br_cell(k, "rand_read", param, n, "lat_p99", 8, 3);
			}
			br_ratio_cell(BENCH_LIBNACRE, "rand_read", param, n,
				      "iops", 8);
			br_ratio_cell(BENCH_FUSE, "rand_read", param, n, "iops", 8);
			printf("\n");
		}
	}
}

static void br_meta_table(const struct bench_run *run)
{
	static const char *const ops[] = {
		"meta_create", "meta_stat", "meta_open", "meta_unlink",
	};
	const struct bench_cfg *cfg = run->br_cfg;
	unsigned int i, j, k;

	printf("\nMetadata, operations per second (empty files, one directory)\n");
	printf("%-8s %-7s", "op", "threads");
	for (k = 0; k <= BENCH_LOCAL; k++)
		printf(" %10s", bench_kind_name(k));
	printf("   ratio to local: %8s %8s\n", "libnacre", "fuse");
	for (i = 0; i < 4; i++) {
		for (j = 0; j < cfg->bc_nthreads; j++) {
			unsigned int n = cfg->bc_threads[j];

			printf("%-8s %7u", ops[i] + 5, n);
			for (k = 0; k <= BENCH_LOCAL; k++)
				br_cell(k, ops[i], "", n, "ops", 10, 0);
			printf("%18s", "");
			br_ratio_cell(BENCH_LIBNACRE, ops[i], "", n, "ops", 8);
			br_ratio_cell(BENCH_FUSE, ops[i], "", n, "ops", 8);
			printf("\n");
		}
	}
}

static void br_fig_cell(const struct br_fig *f, int width, int prec)
{
	if (f == NULL)
		printf(" %*s", width, "-");
	else
		printf(" %*.*f", width, prec, f->bf_value);
}

/* The five columns of the small-file tables. */
static const struct {
	enum bench_kind kind;
	bool pack;
	const char *label;
	const char *brief;
} br_small_cols[] = {
	{ BENCH_LIBNACRE, true, "libnacre pack on", "lib on" },
	{ BENCH_LIBNACRE, false, "libnacre pack off", "lib off" },
	{ BENCH_FUSE, true, "fuse pack on", "fuse on" },
	{ BENCH_FUSE, false, "fuse pack off", "fuse off" },
	{ BENCH_LOCAL, false, "local", "local" },
};
#define BR_SMALL_NCOLS (sizeof(br_small_cols) / sizeof(br_small_cols[0]))

static const struct br_fig *br_small_find(unsigned int col,
					  const char *workload,
					  const char *size, const char *metric)
{
	char param[32];

	snprintf(param, sizeof(param), "%s%s", size,
		 br_small_cols[col].pack ? ".pack" : "");
	return br_find(br_small_cols[col].kind, workload, param,
		       BENCH_SMALL_WORKERS, metric);
}

/* The FUSE limit's cold read of the files of @size, and the mount's as a
 * share of it (pack on, pack off). */
static void br_small_limit(const char *size)
{
	const struct br_fig *l = br_find(BENCH_FUSE_LIMIT, "small_read", size,
					 BENCH_SMALL_WORKERS, "mbps");
	const struct br_fig *lf = br_find(BENCH_FUSE_LIMIT, "small_read", size,
					  BENCH_SMALL_WORKERS, "files_per_s");

	if (l == NULL || lf == NULL)
		return;
	printf("%-10s fuse limit (an empty FUSE filesystem in memory, the same readers): "
	       "%.0f files/s, %.1f MB/s;\n%-10s fuse pack on", "read cold", lf->bf_value,
	       l->bf_value, "");
	br_ratio_value(br_over(br_small_find(2, "small_read", size, "mbps"), l, 1), 5);
	printf(", fuse pack off");
	br_ratio_value(br_over(br_small_find(3, "small_read", size, "mbps"), l, 1), 5);
	printf(" of it\n");
}

static void br_small_table(const struct bench_run *run, unsigned int idx)
{
	static const struct {
		const char *workload;
		const char *label;
	} rows[] = {
		{ "small_write", "write" },
		{ "small_read", "read cold" },
		{ "small_read_warm", "read warm" },
	};
	const struct bench_cfg *cfg = run->br_cfg;
	uint32_t size = cfg->bc_small_sizes[idx];
	unsigned int n = cfg->bc_small_files, i, c;
	char name[24];

	bench_small_name(size, name, sizeof(name));
	if (size == BENCH_SMALL_MIXED)
		printf("\nSmall files, mixed sizes (lognormal, 1 KiB to 1 MiB, mean %.1f KiB)",
		       run->br_small_bytes[idx] / 1024.0 / n);
	else if (size % 1024 == 0)
		printf("\nSmall files, %u KiB each", size >> 10);
	else
		printf("\nSmall files, %u bytes each", size);
	printf(": %u files, %.1f MB\n", n, run->br_small_bytes[idx] / 1e6);
	printf("%-10s", "");
	for (c = 0; c < BR_SMALL_NCOLS; c++)
		printf(" %18s", br_small_cols[c].label);
	printf("\n%-10s", "");
	for (c = 0; c < BR_SMALL_NCOLS; c++)
		printf(" %9s %8s", "files/s", "MB/s");
	printf("\n");
	for (i = 0; i < 3; i++) {
		printf("%-10s", rows[i].label);
		for (c = 0; c < BR_SMALL_NCOLS; c++) {
			const struct br_fig *f;

			f = br_small_find(c, rows[i].workload, name, "files_per_s");
			br_fig_cell(f, 9, 0);
			f = br_small_find(c, rows[i].workload, name, "mbps");
			br_fig_cell(f, 8, 1);
		}
		printf("\n");
	}
	printf("%-10s %-35s %-44s %s\n", "", "ratio to local",
	       "MB/s ratio to the large-file read", "pack on/off");
	printf("%-10s", "");
	for (c = 0; c < BR_SMALL_NCOLS - 1; c++)
		printf(" %8s", br_small_cols[c].brief);
	for (c = 0; c < BR_SMALL_NCOLS; c++)
		printf(" %8s", br_small_cols[c].brief);
	printf(" %8s %8s\n", "libnacre", "fuse");
	for (i = 0; i < 3; i++) {
		const char *w = rows[i].workload;

		printf("%-10s", rows[i].label);
		for (c = 0; c < BR_SMALL_NCOLS - 1; c++) {
			const struct br_fig *f = br_small_find(c, w, name, "mbps");

			br_ratio_value(f ? br_ratio(f) : NAN, 8);
		}
		for (c = 0; c < BR_SMALL_NCOLS; c++)
			br_ratio_value(br_seq_ratio(br_small_find(c, w, name, "mbps")), 8);
		br_ratio_value(br_pack_ratio(br_small_find(0, w, name, "mbps")), 8);
		br_ratio_value(br_pack_ratio(br_small_find(2, w, name, "mbps")), 8);
		printf("\n");
	}
	br_small_limit(name);
}

static void br_small_tables(const struct bench_run *run)
{
	const struct bench_cfg *cfg = run->br_cfg;
	unsigned int i;

	printf("\nSmall files: %u writers (create, write, close), then %u readers "
	       "in a random order\n(libnacre: nacre_read_many(), 64 files a call); "
	       "large-file read: 1 MiB requests, 4 streams\n",
	       BENCH_SMALL_WORKERS, BENCH_SMALL_WORKERS);
	if (run->br_pack == BENCH_PACK_UNAVAILABLE)
		printf("packing NOT measured: %s\n", run->br_pack_why);
	else if (run->br_pack == BENCH_PACK_NOT_PACKED)
		printf("WARNING: %s\n", run->br_pack_why);
	if (run->br_pack_layout[0])
		printf("packs: %s\n", run->br_pack_layout);
	for (i = 0; i < cfg->bc_nsmall; i++)
		br_small_table(run, i);
}

static void br_tcp_row(const struct bench_run *run)
{
	const struct bench_cfg *cfg = run->br_cfg;
	unsigned int i;

	printf("\nLoopback TCP limit (memory to memory, 1 MiB sends), GB/s:");
	for (i = 0; i < cfg->bc_nstreams; i++) {
		const struct br_fig *f = br_find(BENCH_TCP, "tcp", "1m",
						 cfg->bc_streams[i], "gbps");

		printf("  %u conn: %s", cfg->bc_streams[i], f ? "" : "-");
		if (f)
			printf("%.3f", f->bf_value);
	}
	printf("\n");
}

/* What the RDMA transport did in this run, when it carried anything. */
static void br_rdma_line(void)
{
	struct nacre_rdma_stats rs;

	nacre_rdma_stats(&rs);
	if (!rs.conns)
		return;
	printf("\nRDMA transport: %" PRIu64 " connections, %" PRIu64 " RDMA READs moving %.1f MiB "
	       "(at most %" PRIu64 " in flight at once), %" PRIu64 " sends, %" PRIu64
	       " sends waited for credits\n",
	       rs.conns, rs.reads, (double)rs.read_bytes / (1 << 20), rs.reads_inflight_max,
	       rs.sends, rs.credit_waits);
}

void bench_report_table(const struct bench_run *run)
{
	static const struct {
		const char *workload;
		const char *title;
	} seq[] = {
		{ "seq_write", "Sequential write (timed to fsync and close)" },
		{ "seq_read", "Sequential read, page cache dropped before" },
		{ "seq_read_warm", "Second read (second epoch), page cache kept" },
	};
	const struct bench_cfg *cfg = run->br_cfg;
	unsigned int only = cfg->bc_only;
	unsigned int i, j;

	if (only & BENCH_W_SEQ) {
		for (i = 0; i < 3; i++) {
			for (j = 0; j < 2; j++) {
				char param[24];

				snprintf(param, sizeof(param), "%zum",
					 cfg->bc_reqs[j] >> 20);
				br_seq_table(run, seq[i].workload, seq[i].title,
					     param);
			}
		}
	}
	if (only & BENCH_W_TCP)
		br_tcp_row(run);
	if (only & BENCH_W_SEQ)
		br_rand_table(run);
	if (only & BENCH_W_META)
		br_meta_table(run);
	if (only & BENCH_W_SMALL)
		br_small_tables(run);
	br_rdma_line();
}

/* ---- JSON ---- */

static void br_json_number(double v)
{
	if (isnan(v) || isinf(v))
		printf("null");
	else
		printf("%.6g", v);
}

static void br_json_fig(const struct br_fig *f, bool first)
{
	printf("%s\n    {\"name\": \"%s%s%s.c%u.%s\", \"target\": \"%s\", "
	       "\"workload\": \"%s\", \"param\": \"%s\", \"concurrency\": %u, "
	       "\"metric\": \"%s\", \"unit\": \"%s\", \"value\": ",
	       first ? "" : ",", f->bf_workload, f->bf_param[0] ? "." : "",
	       f->bf_param, f->bf_conc, f->bf_metric, bench_kind_name(f->bf_kind),
	       f->bf_workload, f->bf_param, f->bf_conc, f->bf_metric,
	       f->bf_unit);
	br_json_number(f->bf_value);
	if (f->bf_nsamples > 1) {
		printf(", \"samples\": [");
		for (unsigned int i = 0; i < f->bf_nsamples; i++) {
			printf("%s", i ? ", " : "");
			br_json_number(f->bf_samples[i]);
		}
		printf("]");
	}
	printf(", \"ratio_to_local\": ");
	br_json_number(br_ratio(f));
	if (br_is_small(f) && strcmp(f->bf_metric, "mbps") == 0) {
		printf(", \"ratio_to_seq_read\": ");
		br_json_number(br_seq_ratio(f));
	}
	if (br_is_small(f) && br_is_packed(f)) {
		printf(", \"ratio_to_pack_off\": ");
		br_json_number(br_pack_ratio(f));
	}
	printf("}");
}

static void br_json_list(const unsigned int *v, unsigned int n)
{
	unsigned int i;

	printf("[");
	for (i = 0; i < n; i++)
		printf("%s%u", i ? ", " : "", v[i]);
	printf("]");
}

static void br_json_small(const struct bench_run *run)
{
	static const char *const pack[] = {
		[BENCH_PACK_NOT_RUN] = "not run",
		[BENCH_PACK_ON] = "on",
		[BENCH_PACK_UNAVAILABLE] = "unavailable",
		[BENCH_PACK_NOT_PACKED] = "not packed",
	};
	const struct bench_cfg *cfg = run->br_cfg;
	char name[24];
	unsigned int i;

	printf("  \"small_files\": %u,\n  \"small_sizes\": [", cfg->bc_small_files);
	for (i = 0; i < cfg->bc_nsmall; i++)
		printf("%s\"%s\"", i ? ", " : "",
		       bench_small_name(cfg->bc_small_sizes[i], name, sizeof(name)));
	printf("],\n  \"small_bytes\": [");
	for (i = 0; i < cfg->bc_nsmall; i++)
		printf("%s%llu", i ? ", " : "",
		       (unsigned long long)run->br_small_bytes[i]);
	printf("],\n  \"pack\": \"%s\",\n", pack[run->br_pack]);
	if (run->br_pack_layout[0])
		printf("  \"pack_layout\": \"%s\",\n", run->br_pack_layout);
	else
		printf("  \"pack_layout\": null,\n");
}

void bench_report_json(const struct bench_run *run, double wall)
{
	const struct bench_cfg *cfg = run->br_cfg;
	size_t i;

	/* Addresses, fsnames and paths come from the command line: they are
	 * not printed, so nothing here needs escaping. */
	printf("{\n  \"program\": \"nacre-bench\",\n  \"version\": \"%s\",\n",
	       PACKAGE_VERSION);
	printf("  \"size_per_stream\": %llu,\n",
	       (unsigned long long)cfg->bc_size);
	printf("  \"streams\": ");
	br_json_list(cfg->bc_streams, cfg->bc_nstreams);
	printf(",\n  \"threads\": ");
	br_json_list(cfg->bc_threads, cfg->bc_nthreads);
	printf(",\n  \"files\": %u,\n  \"duration\": %g,\n  \"repeat\": %u,\n", cfg->bc_files,
	       cfg->bc_duration, cfg->bc_repeat);
	br_json_small(run);
	printf("  \"caches_dropped\": %s,\n  \"o_direct\": %s,\n",
	       run->br_drop_ok ? "true" : "false",
	       run->br_direct ? "true" : "false");
	{
		struct nacre_rdma_stats rs;

		nacre_rdma_stats(&rs);
		printf("  \"rdma\": {\"conns\": %" PRIu64 ", \"reads\": %" PRIu64
		       ", \"read_bytes\": %" PRIu64 ", \"reads_inflight_max\": %" PRIu64
		       ", \"sends\": %" PRIu64 ", \"credit_waits\": %" PRIu64 "},\n",
		       rs.conns, rs.reads, rs.read_bytes, rs.reads_inflight_max, rs.sends,
		       rs.credit_waits);
	}
	printf("  \"wall_seconds\": %.1f,\n  \"figures\": [", wall);
	for (i = 0; i < br_nfigs; i++)
		br_json_fig(&br_figs[i], i == 0);
	printf("\n  ]\n}\n");
}
