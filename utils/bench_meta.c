/* SPDX-License-Identifier: MIT */
/*
 * nacre-bench metadata workload: for each thread count, the threads create
 * (open with O_CREAT | O_EXCL, then close), stat, open and close, and unlink
 * their share of empty files in one shared directory, one timed phase after
 * the other.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

enum bm_phase {
	BM_CREATE,
	BM_STAT,
	BM_OPEN,
	BM_UNLINK,
	BM_NPHASES,
};

static const char *const bm_phase_names[BM_NPHASES] = {
	[BM_CREATE] = "meta_create",
	[BM_STAT] = "meta_stat",
	[BM_OPEN] = "meta_open",
	[BM_UNLINK] = "meta_unlink",
};

struct bm_thread {
	struct bench_target *mt_t;
	enum bm_phase mt_phase;
	const char *mt_dir;
	unsigned int mt_index;
	unsigned int mt_count;          /* files of this thread */
	int mt_err;
	char mt_failed[96];             /* the name that failed */
};

static int bm_one(struct bm_thread *mt, const char *name)
{
	const struct bench_ops *ops = mt->mt_t->bt_ops;
	struct bench_fh fh;
	int rc;

	switch (mt->mt_phase) {
	case BM_CREATE:
	case BM_OPEN:
		rc = ops->bo_open(mt->mt_t, name, mt->mt_phase == BM_CREATE ?
				  O_WRONLY | O_CREAT | O_EXCL : O_RDONLY, &fh);
		if (rc == 0)
			rc = ops->bo_close(&fh);
		return rc;
	case BM_STAT:
		return ops->bo_stat(mt->mt_t, name);
	case BM_UNLINK:
		return ops->bo_unlink(mt->mt_t, name);
	default:
		return -EINVAL;
	}
}

static void *bm_thread(void *arg)
{
	struct bm_thread *mt = arg;
	char name[96];
	unsigned int i;
	int rc = 0;

	bench_thread_ready();
	for (i = 0; i < mt->mt_count && rc == 0; i++) {
		snprintf(name, sizeof(name), "%s/t%u-%u", mt->mt_dir,
			 mt->mt_index, i);
		rc = bm_one(mt, name);
		if (rc < 0)
			snprintf(mt->mt_failed, sizeof(mt->mt_failed), "%s", name);
	}
	mt->mt_err = rc;
	return NULL;
}

/* Runs one phase; returns its operations per second (or an error). */
static int bm_phase_run(struct bm_thread *mt, unsigned int n,
			enum bm_phase phase, double *rate)
{
	unsigned int i, total = 0;
	double secs;

	for (i = 0; i < n; i++) {
		mt[i].mt_phase = phase;
		mt[i].mt_err = 0;
		total += mt[i].mt_count;
	}
	secs = bench_run_threads(n, bm_thread, mt, sizeof(*mt));
	if (secs < 0)
		return (int)secs;
	for (i = 0; i < n; i++) {
		if (mt[i].mt_err < 0) {
			bench_target_err(mt[i].mt_t, bm_phase_names[phase] + 5,
					 mt[i].mt_failed, mt[i].mt_err);
			return mt[i].mt_err;
		}
	}
	*rate = total / secs;
	return 0;
}

/* Removes what a failed phase may have left. */
static void bm_cleanup(struct bench_target *t, const struct bm_thread *mt,
		       unsigned int n, const char *dir)
{
	char name[96];
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < mt[i].mt_count; j++) {
			snprintf(name, sizeof(name), "%s/t%u-%u", dir, i, j);
			t->bt_ops->bo_unlink(t, name);
		}
	}
}

static int bm_target(struct bench_run *run, struct bench_target *t,
		     unsigned int n)
{
	const struct bench_cfg *cfg = run->br_cfg;
	struct bm_thread mt[BENCH_MAX_THREADS];
	enum bm_phase phase;
	unsigned int i;
	double rate = 0;
	char dir[32];
	int rc, rc2;

	bench_note("%s: metadata, %u thread%s", t->bt_name, n, n == 1 ? "" : "s");
	snprintf(dir, sizeof(dir), "meta-%u", n);
	rc = t->bt_ops->bo_mkdir(t, dir);
	if (rc < 0) {
		bench_target_err(t, "mkdir", dir, rc);
		return rc;
	}
	for (i = 0; i < n; i++) {
		memset(&mt[i], 0, sizeof(mt[i]));
		mt[i].mt_t = t;
		mt[i].mt_dir = dir;
		mt[i].mt_index = i;
		mt[i].mt_count = cfg->bc_files / n;
	}
	for (phase = 0; phase < BM_NPHASES; phase++) {
		rc = bm_phase_run(mt, n, phase, &rate);
		if (rc == 0)
			rc = bench_fig_add(t->bt_kind, bm_phase_names[phase], "",
					   n, "ops", "ops/s", rate);
		if (rc < 0)
			break;
	}
	if (rc < 0)
		bm_cleanup(t, mt, n, dir);
	rc2 = t->bt_ops->bo_rmdir(t, dir);
	if (rc2 < 0) {
		bench_target_err(t, "rmdir", dir, rc2);
		if (rc == 0)
			rc = rc2;
	}
	return rc;
}

int bench_meta(struct bench_run *run)
{
	const struct bench_cfg *cfg = run->br_cfg;
	unsigned int i, j;
	int rc;

	for (j = 0; j < cfg->bc_nthreads; j++) {
		for (i = 0; i < run->br_ntgt; i++) {
			rc = bm_target(run, &run->br_tgt[i], cfg->bc_threads[j]);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}
