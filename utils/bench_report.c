/* SPDX-License-Identifier: MIT */
/*
 * nacre-bench figures: every measured value is one figure (workload,
 * parameter, concurrency, metric, target), kept in one list and printed
 * either as tables or as one JSON object.  A figure's ratio is its value
 * over the same figure on the local directory; the loopback TCP figures are
 * compared with the local sequential read of 1 MiB requests over as many
 * streams.
 */
#include "config.h"

#include <errno.h>
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
	double bf_value;
};

static struct br_fig *br_figs;
static size_t br_nfigs;
static size_t br_cap;

static const char *const br_kind_names[BENCH_NKINDS] = {
	[BENCH_LIBNACRE] = "libnacre",
	[BENCH_FUSE] = "fuse",
	[BENCH_LOCAL] = "local",
	[BENCH_TCP] = "tcp",
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

int bench_fig_add(enum bench_kind kind, const char *workload,
		  const char *param, unsigned int conc, const char *metric,
		  const char *unit, double value)
{
	struct br_fig *f;

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

/* The value over the local one; NAN where there is none to compare with. */
static double br_ratio(const struct br_fig *f)
{
	const struct br_fig *l;

	if (f->bf_kind == BENCH_TCP)
		l = br_find(BENCH_LOCAL, "seq_read", "1m", f->bf_conc, "gbps");
	else
		l = br_find(BENCH_LOCAL, f->bf_workload, f->bf_param,
			    f->bf_conc, f->bf_metric);
	if (l == NULL || !(l->bf_value > 0))
		return NAN;
	return f->bf_value / l->bf_value;
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

static void br_seq_table(const struct bench_run *run, const char *workload,
			 const char *title, const char *param)
{
	const struct bench_cfg *cfg = run->br_cfg;
	bool is_read = strncmp(workload, "seq_read", 8) == 0;
	unsigned int i, k;

	printf("\n%s, %s requests\n", title, br_req_text(param));
	printf("%-7s", "");
	for (k = 0; k <= BENCH_LOCAL; k++)
		printf(" %-28s", bench_kind_name(k));
	printf(" %-17s%s\n", "ratio to local", is_read ? " tcp" : "");
	printf("%-7s", "streams");
	for (k = 0; k <= BENCH_LOCAL; k++)
		printf(" %8s %8s %10s", "mean ms", "p99 ms", "GB/s");
	printf(" %8s %8s%s\n", "libnacre", "fuse", is_read ? "     GB/s" : "");
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
	unsigned int i, j;

	for (i = 0; i < 3; i++) {
		for (j = 0; j < 2; j++) {
			char param[24];

			snprintf(param, sizeof(param), "%zum",
				 cfg->bc_reqs[j] >> 20);
			br_seq_table(run, seq[i].workload, seq[i].title, param);
		}
	}
	br_tcp_row(run);
	br_rand_table(run);
	br_meta_table(run);
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
	printf(", \"ratio_to_local\": ");
	br_json_number(br_ratio(f));
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
	printf(",\n  \"files\": %u,\n  \"duration\": %g,\n", cfg->bc_files,
	       cfg->bc_duration);
	printf("  \"caches_dropped\": %s,\n  \"o_direct\": %s,\n",
	       run->br_drop_ok ? "true" : "false",
	       run->br_direct ? "true" : "false");
	printf("  \"wall_seconds\": %.1f,\n  \"figures\": [", wall);
	for (i = 0; i < br_nfigs; i++)
		br_json_fig(&br_figs[i], i == 0);
	printf("\n  ]\n}\n");
}
