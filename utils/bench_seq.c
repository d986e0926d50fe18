/* SPDX-License-Identifier: MIT */
/*
 * nacre-bench data workloads: sequential write then read of one large file
 * per stream (each request size, each stream count, each target), a second
 * read of the POSIX targets without dropping the page cache, then random
 * reads over the files of the last configuration.
 *
 * Writes are timed up to the fsync and close of every stream, so each
 * target's figure is for data made durable.  With the FUSE limit
 * (bench_fuse_limit.c), which serves the same files from memory, each
 * configuration's cold read is run there too.  Reads start after the page
 * cache was dropped; where that is not allowed the POSIX targets read with
 * O_DIRECT instead (and the output says so).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum bs_mode {
	BS_WRITE,
	BS_READ,
	BS_RANDOM,
};

/* One file of one configuration. */
struct bs_file {
	char bf_name[64];
	uint32_t bf_id;                 /* seeds the pattern */
};

/* One thread of a workload. */
struct bs_stream {
	struct bench_target *ss_t;
	enum bs_mode ss_mode;
	int ss_flags;                   /* extra open flags (O_DIRECT) */
	const struct bs_file *ss_files; /* ss_files[0] for sequential streams */
	unsigned int ss_nfiles;
	size_t ss_req;
	uint64_t ss_size;               /* bytes per file */
	double ss_duration;             /* seconds of random reads */
	uint64_t ss_seed;
	struct bench_lat *ss_lat;
	uint64_t ss_ops;
	int ss_err;
	const char *ss_what;            /* the call that failed */
};

/* Latencies of one thread before they are merged. */
struct bs_lv {
	double *lv_v;
	size_t lv_n;
	size_t lv_cap;
};

static int bs_lv_add(struct bs_lv *lv, double v)
{
	if (lv->lv_n == lv->lv_cap) {
		size_t cap = lv->lv_cap ? lv->lv_cap * 2 : 1024;
		double *nv = realloc(lv->lv_v, cap * sizeof(*nv));

		if (nv == NULL)
			return -ENOMEM;
		lv->lv_v = nv;
		lv->lv_cap = cap;
	}
	lv->lv_v[lv->lv_n++] = v;
	return 0;
}

/* Reads exactly @len bytes unless the file ends first. */
static ssize_t bs_read_full(const struct bench_ops *ops, struct bench_fh *fh,
			    void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = ops->bo_pread(fh, (char *)buf + done, len - done,
					  off + done);

		if (n < 0)
			return n;
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

static int bs_write_all(const struct bench_ops *ops, struct bench_fh *fh,
			const void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = ops->bo_pwrite(fh, (const char *)buf + done,
					   len - done, off + done);

		if (n < 0)
			return n;
		if (n == 0)
			return -EIO;
		done += n;
	}
	return 0;
}

/* One request of a stream: its latency goes to @lv. */
static int bs_one(struct bs_stream *ss, struct bench_fh *fh, void *buf,
		  const struct bs_file *f, size_t len, uint64_t off,
		  struct bs_lv *lv)
{
	const struct bench_ops *ops = ss->ss_t->bt_ops;
	double t0, t1;
	ssize_t n;
	int rc;

	if (ss->ss_mode == BS_WRITE) {
		bench_pattern_fill(buf, len, f->bf_id, off);
		t0 = bench_now();
		rc = bs_write_all(ops, fh, buf, len, off);
		t1 = bench_now();
		if (rc < 0) {
			ss->ss_what = "write";
			return rc;
		}
		return bs_lv_add(lv, t1 - t0);
	}
	t0 = bench_now();
	n = bs_read_full(ops, fh, buf, len, off);
	t1 = bench_now();
	if (n < 0) {
		ss->ss_what = "read";
		return n;
	}
	/* A short file is wrong data too: check what came, then check the
	 * missing bytes as zeros, which the pattern is not. */
	if (!bench_pattern_check(buf, n, f->bf_id, off, ss->ss_t, f->bf_name))
		return -EILSEQ;
	if ((size_t)n < len) {
		memset((char *)buf + n, 0, len - n);
		if (!bench_pattern_check((char *)buf + n, len - n, f->bf_id,
					 off + n, ss->ss_t, f->bf_name))
			return -EILSEQ;
	}
	return bs_lv_add(lv, t1 - t0);
}

static int bs_open(struct bs_stream *ss, const struct bs_file *f,
		   struct bench_fh *fh)
{
	int flags = ss->ss_mode == BS_WRITE ? O_WRONLY | O_CREAT | O_TRUNC :
					      O_RDONLY;
	int rc;

	rc = ss->ss_t->bt_ops->bo_open(ss->ss_t, f->bf_name,
				       flags | ss->ss_flags, fh);
	if (rc < 0)
		ss->ss_what = "open";
	return rc;
}

static int bs_close(struct bs_stream *ss, struct bench_fh *fh, int rc)
{
	const struct bench_ops *ops = ss->ss_t->bt_ops;
	int rc2;

	if (rc == 0 && ss->ss_mode == BS_WRITE) {
		rc = ops->bo_fsync(fh);
		if (rc < 0)
			ss->ss_what = "fsync";
	}
	rc2 = ops->bo_close(fh);
	if (rc == 0 && rc2 < 0) {
		ss->ss_what = "close";
		rc = rc2;
	}
	return rc;
}

static int bs_sequential(struct bs_stream *ss, void *buf, struct bs_lv *lv)
{
	const struct bs_file *f = &ss->ss_files[0];
	struct bench_fh fh;
	uint64_t off;
	int rc;

	rc = bs_open(ss, f, &fh);
	if (rc < 0)
		return rc;
	for (off = 0; off < ss->ss_size && rc == 0; off += ss->ss_req) {
		rc = bs_one(ss, &fh, buf, f, ss->ss_req, off, lv);
		ss->ss_ops++;
	}
	return bs_close(ss, &fh, rc);
}

static uint64_t bs_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Random reads until the deadline, each file opened once. */
static int bs_random(struct bs_stream *ss, void *buf, struct bs_lv *lv)
{
	struct bench_fh fh[BENCH_MAX_THREADS];
	uint64_t slots = ss->ss_size / ss->ss_req;
	unsigned int i, nopen = 0;
	double deadline;
	int rc = 0;

	deadline = bench_now() + ss->ss_duration;
	for (i = 0; i < ss->ss_nfiles && rc == 0; i++) {
		rc = bs_open(ss, &ss->ss_files[i], &fh[i]);
		if (rc == 0)
			nopen++;
	}
	while (rc == 0 && bench_now() < deadline) {
		uint64_t r = bs_rand(&ss->ss_seed);
		unsigned int fi = r % ss->ss_nfiles;
		uint64_t off = (r >> 8) % slots * ss->ss_req;

		rc = bs_one(ss, &fh[fi], buf, &ss->ss_files[fi], ss->ss_req,
			    off, lv);
		ss->ss_ops++;
	}
	for (i = 0; i < nopen; i++)
		rc = bs_close(ss, &fh[i], rc);
	return rc;
}

static void *bs_thread(void *arg)
{
	struct bs_stream *ss = arg;
	struct bs_lv lv = { 0 };
	void *buf;
	int rc;

	bench_thread_ready();
	buf = bench_buf_alloc(ss->ss_req);
	if (buf == NULL) {
		ss->ss_err = -ENOMEM;
		ss->ss_what = "malloc";
		return NULL;
	}
	if (ss->ss_mode == BS_RANDOM)
		rc = bs_random(ss, buf, &lv);
	else
		rc = bs_sequential(ss, buf, &lv);
	if (rc == 0)
		rc = bench_lat_merge(ss->ss_lat, lv.lv_v, lv.lv_n);
	ss->ss_err = rc;
	free(lv.lv_v);
	free(buf);
	return NULL;
}

/* The result of one workload run on @n threads. */
struct bs_result {
	double br_secs;
	uint64_t br_ops;
	double br_mean;
	double br_p99;
};

static int bs_run(struct bs_stream *ss, unsigned int n, struct bs_result *res)
{
	struct bench_lat lat;
	unsigned int i;
	int rc;

	rc = bench_lat_init(&lat);
	if (rc < 0)
		return rc;
	for (i = 0; i < n; i++) {
		ss[i].ss_lat = &lat;
		ss[i].ss_ops = 0;
		ss[i].ss_err = 0;
		ss[i].ss_what = "";
	}
	res->br_secs = bench_run_threads(n, bs_thread, ss, sizeof(*ss));
	rc = res->br_secs < 0 ? (int)res->br_secs : 0;
	res->br_ops = 0;
	for (i = 0; i < n; i++) {
		res->br_ops += ss[i].ss_ops;
		if (rc == 0 && ss[i].ss_err < 0) {
			rc = ss[i].ss_err;
			if (rc != -EILSEQ)
				bench_target_err(ss[i].ss_t, ss[i].ss_what,
						 ss[i].ss_files[0].bf_name, rc);
		}
	}
	res->br_mean = bench_lat_mean(&lat);
	res->br_p99 = bench_lat_p99(&lat);
	bench_lat_fini(&lat);
	return rc;
}

static const char *bs_size_name(size_t len, char *buf, size_t size)
{
	if (len % (1u << 20) == 0)
		snprintf(buf, size, "%zum", len >> 20);
	else
		snprintf(buf, size, "%zuk", len >> 10);
	return buf;
}

/* Records throughput and latencies of one sequential run. */
static int bs_seq_figs(struct bench_target *t, const char *workload,
		       const char *param, unsigned int n,
		       const struct bs_result *res, size_t req)
{
	double gbps = res->br_ops * (double)req / 1e9 / res->br_secs;
	int rc;

	rc = bench_fig_add(t->bt_kind, workload, param, n, "gbps", "GB/s", gbps);
	if (rc == 0)
		rc = bench_fig_add(t->bt_kind, workload, param, n, "lat_mean",
				   "ms", res->br_mean * 1e3);
	if (rc == 0)
		rc = bench_fig_add(t->bt_kind, workload, param, n, "lat_p99",
				   "ms", res->br_p99 * 1e3);
	return rc;
}

struct bs_config {
	size_t cf_req;
	unsigned int cf_n;
	struct bs_file cf_files[BENCH_MAX_THREADS];
};

static void bs_streams_init(struct bs_stream *ss, struct bench_target *t,
			    const struct bs_config *cf, uint64_t size,
			    enum bs_mode mode, int flags)
{
	unsigned int i;

	for (i = 0; i < cf->cf_n; i++) {
		memset(&ss[i], 0, sizeof(ss[i]));
		ss[i].ss_t = t;
		ss[i].ss_mode = mode;
		ss[i].ss_flags = flags;
		ss[i].ss_files = &cf->cf_files[i];
		ss[i].ss_nfiles = 1;
		ss[i].ss_req = cf->cf_req;
		ss[i].ss_size = size;
	}
}

/* One sequential read of @cf's files on @t (open @flags), recorded as
 * @workload. */
static int bs_read(struct bench_run *run, struct bench_target *t, const struct bs_config *cf,
		   const char *workload, const char *param, int flags)
{
	struct bs_stream ss[BENCH_MAX_THREADS];
	struct bs_result res;
	int rc;

	bs_streams_init(ss, t, cf, run->br_cfg->bc_size, BS_READ, flags);
	rc = bs_run(ss, cf->cf_n, &res);
	return rc ? rc : bs_seq_figs(t, workload, param, cf->cf_n, &res, cf->cf_req);
}

/* Write, read cold, and (POSIX targets) read again warm. */
static int bs_seq_target(struct bench_run *run, struct bench_target *t,
			 const struct bs_config *cf)
{
	uint64_t size = run->br_cfg->bc_size;
	struct bs_stream ss[BENCH_MAX_THREADS];
	struct bs_result res;
	char param[24];
	int rc;

	bs_size_name(cf->cf_req, param, sizeof(param));
	bench_note("%s: sequential %s requests, %u stream%s", t->bt_name,
		   param, cf->cf_n, cf->cf_n == 1 ? "" : "s");
	bs_streams_init(ss, t, cf, size, BS_WRITE, 0);
	rc = bs_run(ss, cf->cf_n, &res);
	if (rc == 0)
		rc = bs_seq_figs(t, "seq_write", param, cf->cf_n, &res, cf->cf_req);
	if (rc < 0)
		return rc;
	rc = bs_read(run, t, cf, "seq_read", param, bench_uncached(run, t));
	if (rc < 0 || !t->bt_has_page_cache)
		return rc;
	/* The second epoch: what the page cache gives back. */
	return bs_read(run, t, cf, "seq_read_warm", param, 0);
}

static int bs_unlink_files(struct bench_target *t, const struct bs_config *cf)
{
	unsigned int i;
	int rc, ret = 0;

	for (i = 0; i < cf->cf_n; i++) {
		rc = t->bt_ops->bo_unlink(t, cf->cf_files[i].bf_name);
		if (rc < 0 && rc != -ENOENT && ret == 0) {
			bench_target_err(t, "unlink", cf->cf_files[i].bf_name, rc);
			ret = rc;
		}
	}
	return ret;
}

static int bs_random_one(struct bench_run *run, struct bench_target *t,
			 const struct bs_config *cf, size_t len,
			 unsigned int nthr)
{
	const struct bench_cfg *cfg = run->br_cfg;
	struct bs_stream ss[BENCH_MAX_THREADS];
	struct bs_result res;
	char param[24];
	unsigned int i;
	int flags, rc;

	bs_size_name(len, param, sizeof(param));
	bench_note("%s: random %s reads, %u thread%s", t->bt_name, param, nthr,
		   nthr == 1 ? "" : "s");
	flags = bench_uncached(run, t);
	for (i = 0; i < nthr; i++) {
		memset(&ss[i], 0, sizeof(ss[i]));
		ss[i].ss_t = t;
		ss[i].ss_mode = BS_RANDOM;
		ss[i].ss_flags = flags;
		ss[i].ss_files = cf->cf_files;
		ss[i].ss_nfiles = cf->cf_n;
		ss[i].ss_req = len;
		ss[i].ss_size = cfg->bc_size;
		ss[i].ss_seed = 0x2545f4914f6cdd1dull * (i + 1) + len;
		ss[i].ss_duration = cfg->bc_duration;
	}
	rc = bs_run(ss, nthr, &res);
	if (rc < 0)
		return rc;
	rc = bench_fig_add(t->bt_kind, "rand_read", param, nthr, "iops", "IOPS",
			   res.br_ops / res.br_secs);
	if (rc == 0)
		rc = bench_fig_add(t->bt_kind, "rand_read", param, nthr,
				   "lat_p99", "ms", res.br_p99 * 1e3);
	return rc;
}

static int bs_random_target(struct bench_run *run, struct bench_target *t,
			    const struct bs_config *cf)
{
	const struct bench_cfg *cfg = run->br_cfg;
	unsigned int i, j;
	int rc;

	for (i = 0; i < 2; i++) {
		for (j = 0; j < cfg->bc_nthreads; j++) {
			rc = bs_random_one(run, t, cf, cfg->bc_rand[i],
					   cfg->bc_threads[j]);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* Each run of a configuration (--repeat) has names of its own, as it has
 * bytes of its own: the FUSE limit serves every file by its name. */
static void bs_config_init(struct bs_config *cf, size_t req, unsigned int n, unsigned int run,
			   uint32_t *next_id)
{
	unsigned int i;

	cf->cf_req = req;
	cf->cf_n = n;
	for (i = 0; i < n; i++) {
		cf->cf_files[i].bf_id = (*next_id)++;
		if (run == 0)
			snprintf(cf->cf_files[i].bf_name, sizeof(cf->cf_files[i].bf_name),
				 "seq-%zuk-%u-%u", req >> 10, n, i);
		else
			snprintf(cf->cf_files[i].bf_name, sizeof(cf->cf_files[i].bf_name),
				 "seq-%zuk-%u-%u.r%u", req >> 10, n, i, run);
	}
}

/* The FUSE limit (bench_fuse_limit.c), which serves the same files: the
 * cold read alone, as the mount's is read. */
static int bs_limit_read(struct bench_run *run, const struct bs_config *cf)
{
	struct bench_target *t = &run->br_limit_tgt;
	char param[24];

	bs_size_name(cf->cf_req, param, sizeof(param));
	bench_note("%s: sequential %s reads, %u stream%s", t->bt_name, param, cf->cf_n,
		   cf->cf_n == 1 ? "" : "s");
	return bs_read(run, t, cf, "seq_read", param, bench_uncached(run, t));
}

/* One configuration on every target; the last one's files stay for the
 * random reads. */
static int bs_config_run(struct bench_run *run, const struct bs_config *cf,
			 bool keep)
{
	unsigned int i;
	int rc = 0, rc2;

	for (i = 0; i < run->br_ntgt && rc == 0; i++) {
		struct bench_target *t = &run->br_tgt[i];

		rc = bs_seq_target(run, t, cf);
		if (rc == 0 && keep)
			rc = bs_random_target(run, t, cf);
		rc2 = bs_unlink_files(t, cf);
		if (rc == 0)
			rc = rc2;
	}
	if (rc == 0 && run->br_limit)
		rc = bs_limit_read(run, cf);
	return rc;
}

/* Calls @fn for every configuration in the order they run; stops at the
 * first error it returns. */
typedef int (*bs_config_fn)(void *arg, const struct bs_config *cf, bool last);
static int bs_configs(const struct bench_cfg *cfg, bs_config_fn fn, void *arg)
{
	struct bs_config cf;
	uint32_t next_id = 1;
	unsigned int i, j;
	int rc;

	for (i = 0; i < 2; i++) {
		for (j = 0; j < cfg->bc_nstreams; j++) {
			bool last = i == 1 && j == cfg->bc_nstreams - 1;

			/* With --repeat, every target runs once before any runs
			 * again, so a slow spell of the machine touches each. */
			for (unsigned int r = 0; r < cfg->bc_repeat; r++) {
				bs_config_init(&cf, cfg->bc_reqs[i], cfg->bc_streams[j], r,
					       &next_id);
				rc = fn(arg, &cf, last && r == cfg->bc_repeat - 1);
				if (rc < 0)
					return rc;
			}
		}
	}
	return 0;
}

static int bs_config_run_fn(void *arg, const struct bs_config *cf, bool last)
{
	return bs_config_run(arg, cf, last);
}

int bench_seq(struct bench_run *run)
{
	return bs_configs(run->br_cfg, bs_config_run_fn, run);
}

struct bs_files_arg {
	bench_seq_file_fn fa_fn;
	void *fa_arg;
};

static int bs_files_fn(void *arg, const struct bs_config *cf, bool last)
{
	struct bs_files_arg *fa = arg;

	(void)last;
	for (unsigned int i = 0; i < cf->cf_n; i++)
		fa->fa_fn(fa->fa_arg, cf->cf_files[i].bf_name, cf->cf_files[i].bf_id);
	return 0;
}

void bench_seq_files(const struct bench_cfg *cfg, bench_seq_file_fn fn, void *arg)
{
	struct bs_files_arg fa = { .fa_fn = fn, .fa_arg = arg };

	bs_configs(cfg, bs_files_fn, &fa);
}
