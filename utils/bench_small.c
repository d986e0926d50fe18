/* SPDX-License-Identifier: MIT */
/*
 * nacre-bench small files: for each size (by default 4 KiB, 64 KiB,
 * 128 KiB and a mixed, ImageNet-like distribution) N files are written by
 * 4 workers (create with O_EXCL, write, close), then read whole by 4
 * workers in one shuffled order, twice: cold (caches dropped, libnacre on a
 * new connection) and warm.  The targets are libnacre and the mount, each
 * in a directory whose default layout packs small files
 * (NACRE_LAYOUT_PACK) and in a plain one, and the local directory; with
 * the mount, the cold reads also run on an empty FUSE filesystem served
 * from memory (bench_fuse_limit.c), the most the mount could give.
 *
 * libnacre readers take their share in batches with nacre_read_many(); the
 * POSIX readers open, read and close each file.  A write phase is timed
 * until the data is durable: nacre_sync() for libnacre (it commits the
 * packed files the client holds), syncfs(2) of the directory for the POSIX
 * targets and, for the mount, first the fsync of each writer's last file:
 * FUSE does not pass syncfs to the server, and a mount's fsync commits the
 * packed files it holds.
 *
 * Where the MDS refuses the pack flag the pack-on targets do not run and
 * their figures stay empty.  The files of one size are removed, through
 * the target that wrote them, before the next size is written.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "bench.h"

#define BSM_WORKERS BENCH_SMALL_WORKERS
#define BSM_UNLINKERS 16        /* the cleanup is not timed: more in flight */
#define BSM_BATCH 64            /* files per nacre_read_many() call */
#define BSM_DEPTH 0             /* the library default: a call in one window */
/* Pattern ids of small files: clear of the sequential files' ids, and
 * below 2^24, where the pattern's tag would make two ids alike. */
#define BSM_ID_BASE (1u << 20)
/* The mixed distribution: lognormal, mean about 110 KiB. */
#define BSM_MIXED_MEDIAN (92.0 * 1024)
#define BSM_MIXED_SIGMA 0.6
#define BSM_MIXED_MIN 1024u
#define BSM_MIXED_SEED 0x6d69786564ull

/* The files of one size. */
struct bsm_set {
	char s_param[24];               /* "128k", "mixed" */
	unsigned int s_n;
	uint32_t s_id0;                 /* file i has pattern id s_id0 + i */
	uint32_t *s_size;               /* bytes of each file */
	uint32_t *s_order;              /* the read order, shuffled */
	uint32_t s_max;                 /* the largest file */
	uint64_t s_bytes;               /* all files */
};

/* One of the five targets: a directory of a bench target. */
struct bsm_tgt {
	struct bench_target *mt_t;
	const char *mt_dir;             /* under the bench directory */
	bool mt_pack;
	bool mt_made;                   /* mt_dir exists */
	bool mt_ready;                  /* and packs if mt_pack */
};

enum bsm_mode {
	BSM_WRITE,
	BSM_READ,
	BSM_UNLINK,
};

struct bsm_phase {
	struct bsm_tgt *p_tgt;
	const struct bsm_set *p_set;
	enum bsm_mode p_mode;
	struct nacre_fs *p_fs;          /* libnacre reads: the connection */
	int p_flags;                    /* O_DIRECT for cold POSIX reads */
	bool p_fsync_last;              /* writers fsync their last file */
};

/* One worker: a share [w_first, w_end) of the files (in read order for
 * reads). */
struct bsm_worker {
	struct bsm_phase *w_ph;
	unsigned int w_first;
	unsigned int w_end;
	void *w_buf;
	struct nacre_read_req *w_reqs;  /* libnacre reads */
	char (*w_paths)[PATH_MAX + 128];
	int w_err;
	const char *w_what;
	unsigned int w_failed;          /* the file that failed */
};

const char *bench_small_name(uint32_t size, char *buf, size_t len)
{
	if (size == BENCH_SMALL_MIXED)
		snprintf(buf, len, "mixed");
	else if (size % (1u << 20) == 0)
		snprintf(buf, len, "%um", size >> 20);
	else if (size % 1024 == 0)
		snprintf(buf, len, "%uk", size >> 10);
	else
		snprintf(buf, len, "%u", size);
	return buf;
}

/* ---- the files ---- */

static uint64_t bsm_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Uniform in (0, 1). */
static double bsm_unit(uint64_t *s)
{
	return ((bsm_rand(s) >> 11) + 0.5) / 9007199254740992.0;
}

/* A lognormal size (Box-Muller), clipped to [1 KiB, 1 MiB]. */
static uint32_t bsm_mixed_size(uint64_t *s)
{
	double u1 = bsm_unit(s), u2 = bsm_unit(s);
	double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
	double v = exp(log(BSM_MIXED_MEDIAN) + BSM_MIXED_SIGMA * z);

	if (v < BSM_MIXED_MIN)
		return BSM_MIXED_MIN;
	if (v > BENCH_SMALL_MAX)
		return BENCH_SMALL_MAX;
	return (uint32_t)v;
}

static void bsm_set_free(struct bsm_set *set)
{
	free(set->s_size);
	free(set->s_order);
	memset(set, 0, sizeof(*set));
}

/* The sizes and the read order of size number @idx, both from fixed
 * seeds, so that every run has the same files. */
static int bsm_set_init(struct bsm_set *set, uint32_t size, unsigned int idx,
			unsigned int n)
{
	uint64_t seed = BSM_MIXED_SEED;
	unsigned int i;

	memset(set, 0, sizeof(*set));
	bench_small_name(size, set->s_param, sizeof(set->s_param));
	set->s_n = n;
	set->s_id0 = BSM_ID_BASE + idx * BENCH_SMALL_FILES_MAX;
	set->s_size = calloc(n, sizeof(*set->s_size));
	set->s_order = calloc(n, sizeof(*set->s_order));
	if (set->s_size == NULL || set->s_order == NULL) {
		bsm_set_free(set);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		set->s_size[i] = size == BENCH_SMALL_MIXED ?
				 bsm_mixed_size(&seed) : size;
		if (set->s_size[i] > set->s_max)
			set->s_max = set->s_size[i];
		set->s_bytes += set->s_size[i];
		set->s_order[i] = i;
	}
	/* Fisher-Yates, seeded by the size. */
	seed = 0x2545f4914f6cdd1dull ^ (size + 1);
	for (i = n; i > 1; i--) {
		unsigned int j = bsm_rand(&seed) % i;
		uint32_t tmp = set->s_order[i - 1];

		set->s_order[i - 1] = set->s_order[j];
		set->s_order[j] = tmp;
	}
	return 0;
}

static void bsm_name(const struct bsm_tgt *mt, const struct bsm_set *set,
		     unsigned int i, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s-%07u", mt->mt_dir, set->s_param, i);
}

/* The pattern over a whole file: the part of whole words, then the tail
 * (bench_pattern_fill() goes byte by byte on anything unaligned). */
static void bsm_fill(void *buf, size_t len, uint32_t id)
{
	size_t head = len & ~(size_t)7;

	bench_pattern_fill(buf, head, id, 0);
	if (head < len)
		bench_pattern_fill((char *)buf + head, len - head, id, head);
}

static atomic_bool bsm_size_reported;

static void bsm_size_mismatch(const struct bench_target *t, const char *name,
			      uint64_t have, size_t want)
{
	if (atomic_exchange(&bsm_size_reported, true))
		return;
	if (have == UINT64_MAX)
		fprintf(stderr, "nacre-bench: DATA MISMATCH: %s: file %s/%s has more than %zu bytes\n",
			t->bt_name, t->bt_dir, name, want);
	else
		fprintf(stderr, "nacre-bench: DATA MISMATCH: %s: file %s/%s has %llu bytes, expected %zu\n",
			t->bt_name, t->bt_dir, name, (unsigned long long)have, want);
}

/* Checks @got bytes read of a file of @want bytes; -EILSEQ when wrong.
 * @have: the file's size, UINT64_MAX where only "more than @want" is
 * known. */
static int bsm_check(const struct bench_target *t, const char *name,
		     void *buf, size_t got, uint64_t have, size_t want,
		     uint32_t id)
{
	size_t head = got & ~(size_t)7;

	if (got > want) {
		bsm_size_mismatch(t, name, have, want);
		return -EILSEQ;
	}
	/* No empty checks: the first check of a --self-test-corrupt run
	 * must see a byte. */
	if ((head > 0 && !bench_pattern_check(buf, head, id, 0, t, name)) ||
	    (got > head && !bench_pattern_check((char *)buf + head, got - head,
						id, head, t, name)))
		return -EILSEQ;
	if (got < want) {
		/* As zeros the missing bytes show where the file ends. */
		memset((char *)buf + got, 0, want - got);
		if (bench_pattern_check((char *)buf + got, want - got, id, got,
					t, name))
			bsm_size_mismatch(t, name, have, want);
		return -EILSEQ;
	}
	return 0;
}

/* ---- the workers ---- */

static int bsm_write_all(const struct bench_ops *ops, struct bench_fh *fh,
			 const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = ops->bo_pwrite(fh, (const char *)buf + done,
					   len - done, done);

		if (n < 0)
			return n;
		if (n == 0)
			return -EIO;
		done += n;
	}
	return 0;
}

static int bsm_write_one(struct bsm_worker *w, unsigned int i, bool last)
{
	const struct bsm_phase *ph = w->w_ph;
	struct bench_target *t = ph->p_tgt->mt_t;
	const struct bench_ops *ops = t->bt_ops;
	size_t len = ph->p_set->s_size[i];
	struct bench_fh fh;
	char name[96];
	int rc, rc2;

	bsm_name(ph->p_tgt, ph->p_set, i, name, sizeof(name));
	bsm_fill(w->w_buf, len, ph->p_set->s_id0 + i);
	rc = ops->bo_open(t, name, O_WRONLY | O_CREAT | O_EXCL, &fh);
	if (rc < 0) {
		w->w_what = "create";
		return rc;
	}
	rc = bsm_write_all(ops, &fh, w->w_buf, len);
	if (rc < 0)
		w->w_what = "write";
	if (rc == 0 && last && ph->p_fsync_last) {
		rc = ops->bo_fsync(&fh);
		if (rc < 0)
			w->w_what = "fsync";
	}
	rc2 = ops->bo_close(&fh);
	if (rc == 0 && rc2 < 0) {
		w->w_what = "close";
		rc = rc2;
	}
	return rc;
}

/* Open, read to the end (one byte past the expected size at most), close,
 * check. */
static int bsm_read_posix(struct bsm_worker *w, unsigned int i)
{
	const struct bsm_phase *ph = w->w_ph;
	struct bench_target *t = ph->p_tgt->mt_t;
	const struct bench_ops *ops = t->bt_ops;
	size_t want = ph->p_set->s_size[i];
	size_t cap = (want + BENCH_ALIGN) / BENCH_ALIGN * BENCH_ALIGN;
	struct bench_fh fh;
	size_t done = 0;
	char name[96];
	int rc;

	bsm_name(ph->p_tgt, ph->p_set, i, name, sizeof(name));
	rc = ops->bo_open(t, name, O_RDONLY | ph->p_flags, &fh);
	if (rc < 0) {
		w->w_what = "open";
		return rc;
	}
	while (done < cap) {
		ssize_t n = ops->bo_pread(&fh, (char *)w->w_buf + done,
					  cap - done, done);

		if (n < 0) {
			w->w_what = "read";
			rc = n;
			break;
		}
		done += n;
		/* O_DIRECT goes on at aligned offsets only: a short read
		 * there is the end of the file. */
		if (n == 0 || ((ph->p_flags & O_DIRECT) && done % BENCH_ALIGN))
			break;
	}
	if (ops->bo_close(&fh) < 0 && rc == 0) {
		w->w_what = "close";
		rc = -EIO;
	}
	if (rc < 0)
		return rc;
	return bsm_check(t, name, w->w_buf, done, done < cap ? done : UINT64_MAX,
			 want, ph->p_set->s_id0 + i);
}

/* One nacre_read_many() call over files [first, end) of the order. */
static int bsm_read_batch(struct bsm_worker *w, unsigned int first,
			  unsigned int end)
{
	const struct bsm_phase *ph = w->w_ph;
	const struct bsm_set *set = ph->p_set;
	struct bench_target *t = ph->p_tgt->mt_t;
	char *p = w->w_buf;
	unsigned int k, n = end - first;
	char name[96];
	int rc;

	for (k = 0; k < n; k++) {
		unsigned int i = set->s_order[first + k];
		size_t size = set->s_size[i];

		bsm_name(ph->p_tgt, set, i, name, sizeof(name));
		snprintf(w->w_paths[k], sizeof(w->w_paths[k]), "%s/%s", t->bt_dir, name);
		w->w_reqs[k].path = w->w_paths[k];
		w->w_reqs[k].buf = p;
		/* One byte more tells a longer file. */
		w->w_reqs[k].cap = size + 1;
		p += (size + BENCH_ALIGN) / BENCH_ALIGN * BENCH_ALIGN;
	}
	if (bench_stop_signal())
		return -EINTR;
	rc = nacre_read_many(ph->p_fs, w->w_reqs, n, BSM_DEPTH);
	if (rc < 0) {
		w->w_what = "nacre_read_many";
		w->w_failed = set->s_order[first];
		return rc;
	}
	for (k = 0; k < n; k++) {
		const struct nacre_read_req *r = &w->w_reqs[k];
		unsigned int i = set->s_order[first + k];

		w->w_failed = i;
		if (r->result < 0) {
			w->w_what = "read";
			return r->result;
		}
		bsm_name(ph->p_tgt, set, i, name, sizeof(name));
		rc = bsm_check(t, name, r->buf, r->result, r->size,
			       set->s_size[i], set->s_id0 + i);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int bsm_unlink_share(struct bsm_worker *w)
{
	const struct bsm_phase *ph = w->w_ph;
	struct bench_target *t = ph->p_tgt->mt_t;
	char name[96];
	unsigned int i;
	int rc, ret = 0;

	/* Every name is tried: this also cleans up after a failed phase. */
	for (i = w->w_first; i < w->w_end; i++) {
		bsm_name(ph->p_tgt, ph->p_set, i, name, sizeof(name));
		rc = t->bt_ops->bo_unlink(t, name);
		if (rc < 0 && rc != -ENOENT && ret == 0) {
			w->w_what = "unlink";
			w->w_failed = i;
			ret = rc;
		}
	}
	return ret;
}

static void *bsm_thread(void *arg)
{
	struct bsm_worker *w = arg;
	const struct bsm_phase *ph = w->w_ph;
	unsigned int i;
	int rc = 0;

	bench_thread_ready();
	switch (ph->p_mode) {
	case BSM_WRITE:
		for (i = w->w_first; i < w->w_end && rc == 0; i++) {
			w->w_failed = i;
			rc = bsm_write_one(w, i, i + 1 == w->w_end);
		}
		break;
	case BSM_READ:
		if (ph->p_tgt->mt_t->bt_kind == BENCH_LIBNACRE) {
			for (i = w->w_first; i < w->w_end && rc == 0;
			     i += BSM_BATCH)
				rc = bsm_read_batch(w, i, i + BSM_BATCH < w->w_end ?
						    i + BSM_BATCH : w->w_end);
			break;
		}
		for (i = w->w_first; i < w->w_end && rc == 0; i++) {
			w->w_failed = ph->p_set->s_order[i];
			rc = bsm_read_posix(w, w->w_failed);
		}
		break;
	case BSM_UNLINK:
		rc = bsm_unlink_share(w);
		break;
	}
	w->w_err = rc;
	return NULL;
}

/* The buffer a worker needs: one file, or its largest batch. */
static size_t bsm_buf_size(const struct bsm_worker *w)
{
	const struct bsm_phase *ph = w->w_ph;
	const struct bsm_set *set = ph->p_set;
	size_t max = 0, sum = 0;
	unsigned int i;

	if (ph->p_mode != BSM_READ || ph->p_tgt->mt_t->bt_kind != BENCH_LIBNACRE)
		return (set->s_max + BENCH_ALIGN) / BENCH_ALIGN * BENCH_ALIGN;
	for (i = w->w_first; i < w->w_end; i++) {
		if ((i - w->w_first) % BSM_BATCH == 0)
			sum = 0;
		sum += (set->s_size[set->s_order[i]] + BENCH_ALIGN) /
		       BENCH_ALIGN * BENCH_ALIGN;
		if (sum > max)
			max = sum;
	}
	return max ? max : BENCH_ALIGN;
}

static unsigned int bsm_nworkers(const struct bsm_phase *ph)
{
	return ph->p_mode == BSM_UNLINK ? BSM_UNLINKERS : BSM_WORKERS;
}

static void bsm_workers_free(struct bsm_worker *w, unsigned int nw)
{
	unsigned int i;

	for (i = 0; i < nw; i++) {
		free(w[i].w_buf);
		free(w[i].w_reqs);
		free(w[i].w_paths);
	}
}

static int bsm_workers_init(struct bsm_worker *w, struct bsm_phase *ph)
{
	unsigned int i, n = ph->p_set->s_n, nw = bsm_nworkers(ph);
	bool batches = ph->p_mode == BSM_READ &&
		       ph->p_tgt->mt_t->bt_kind == BENCH_LIBNACRE;

	memset(w, 0, nw * sizeof(*w));
	for (i = 0; i < nw; i++) {
		w[i].w_ph = ph;
		w[i].w_first = (uint64_t)n * i / nw;
		w[i].w_end = (uint64_t)n * (i + 1) / nw;
		w[i].w_what = "";
		if (ph->p_mode == BSM_UNLINK)
			continue;
		w[i].w_buf = bench_buf_alloc(bsm_buf_size(&w[i]));
		if (batches) {
			w[i].w_reqs = calloc(BSM_BATCH, sizeof(*w[i].w_reqs));
			w[i].w_paths = calloc(BSM_BATCH, sizeof(*w[i].w_paths));
		}
		if (w[i].w_buf == NULL ||
		    (batches && (w[i].w_reqs == NULL || w[i].w_paths == NULL))) {
			bsm_workers_free(w, nw);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Makes what the write phase wrote durable (timed with it). */
static int bsm_sync(const struct bsm_phase *ph)
{
	struct bench_target *t = ph->p_tgt->mt_t;
	char path[PATH_MAX + 32];
	int fd, rc;

	if (t->bt_kind == BENCH_LIBNACRE) {
		rc = nacre_sync(t->bt_fs);
		if (rc < 0)
			bench_target_err(t, "nacre_sync", ph->p_tgt->mt_dir, rc);
		return rc;
	}
	snprintf(path, sizeof(path), "%s/%s", t->bt_dir, ph->p_tgt->mt_dir);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		bench_target_err(t, "open", ph->p_tgt->mt_dir, rc);
		return rc;
	}
	rc = syncfs(fd) < 0 ? -errno : 0;
	close(fd);
	if (rc < 0)
		bench_target_err(t, "syncfs", ph->p_tgt->mt_dir, rc);
	return rc;
}

_Static_assert(BSM_UNLINKERS >= BSM_WORKERS, "a phase's workers");

/* Runs one phase; @secs receives its time. */
static int bsm_phase_run(struct bsm_phase *ph, double *secs)
{
	struct bsm_worker w[BSM_UNLINKERS];
	struct bench_target *t = ph->p_tgt->mt_t;
	unsigned int i, nw = bsm_nworkers(ph);
	double t0;
	int rc;

	rc = bsm_workers_init(w, ph);
	if (rc < 0) {
		bench_target_err(t, "malloc", ph->p_tgt->mt_dir, rc);
		return rc;
	}
	*secs = bench_run_threads(nw, bsm_thread, w, sizeof(*w));
	rc = *secs < 0 ? (int)*secs : 0;
	for (i = 0; i < nw && rc == 0; i++) {
		char name[96];

		if (w[i].w_err == 0)
			continue;
		rc = w[i].w_err;
		bsm_name(ph->p_tgt, ph->p_set, w[i].w_failed, name, sizeof(name));
		if (rc != -EILSEQ)
			bench_target_err(t, w[i].w_what, name, rc);
	}
	bsm_workers_free(w, nw);
	if (rc == 0 && ph->p_mode == BSM_WRITE) {
		t0 = bench_now();
		rc = bsm_sync(ph);
		*secs += bench_now() - t0;
	}
	return rc;
}

/* ---- one target ---- */

static int bsm_figs(const struct bsm_tgt *mt, const struct bsm_set *set,
		    const char *workload, double secs)
{
	char param[32];
	int rc;

	snprintf(param, sizeof(param), "%s%s", set->s_param,
		 mt->mt_pack ? ".pack" : "");
	rc = bench_fig_add(mt->mt_t->bt_kind, workload, param, BSM_WORKERS,
			   "files_per_s", "files/s", set->s_n / secs);
	if (rc == 0)
		rc = bench_fig_add(mt->mt_t->bt_kind, workload, param,
				   BSM_WORKERS, "mbps", "MB/s",
				   set->s_bytes / 1e6 / secs);
	return rc;
}

/* Runs @ph and records its figures as @workload. */
static int bsm_phase_figs(struct bsm_phase *ph, const char *workload)
{
	double secs;
	int rc = bsm_phase_run(ph, &secs);

	return rc ? rc : bsm_figs(ph->p_tgt, ph->p_set, workload, secs);
}

static const char *bsm_label(const struct bsm_tgt *mt)
{
	if (mt->mt_t->bt_kind == BENCH_LOCAL)
		return "local";
	if (mt->mt_t->bt_kind == BENCH_FUSE_LIMIT)
		return "fuse limit";
	if (mt->mt_t->bt_kind == BENCH_LIBNACRE)
		return mt->mt_pack ? "libnacre pack on" : "libnacre pack off";
	return mt->mt_pack ? "fuse pack on" : "fuse pack off";
}

/* The FID of @name (under the bench directory) as libnacre knows it; for
 * the mount from its nacre.fid attribute. */
static int bsm_fid_of(struct nacre_fs *fs, const struct bench_target *t,
		      const char *name, struct nacre_fid *fid)
{
	char path[PATH_MAX + 128], text[64];
	struct nacre_stat st;
	ssize_t n;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", t->bt_dir, name);
	if (t->bt_kind == BENCH_LIBNACRE) {
		rc = nacre_stat(fs, path, &st);
		if (rc == 0)
			*fid = st.fid;
		return rc;
	}
	n = getxattr(path, "nacre.fid", text, sizeof(text) - 1);
	if (n < 0)
		return -errno;
	text[n] = '\0';
	return nacre_fid_parse(text, fid);
}

/* After a pack-on write: is a file in the pack directory packed? */
static void bsm_check_packed(struct bench_run *run, struct nacre_fs *fs,
			     const struct bsm_tgt *mt, const struct bsm_set *set)
{
	struct nacre_layout lo;
	struct nacre_fid fid;
	char name[96];
	int rc;

	if (set->s_n == 0 || run->br_pack != BENCH_PACK_ON)
		return;
	bsm_name(mt, set, 0, name, sizeof(name));
	rc = bsm_fid_of(fs, mt->mt_t, name, &fid);
	if (rc == 0)
		rc = nacre_getlayout_fid(fs, &fid, &lo);
	if (rc < 0) {
		bench_note("%s: layout of %s: %s", bsm_label(mt), name,
			   nacre_strerror(rc));
		return;
	}
	if (lo.flags & NACRE_LAYOUT_PACKED) {
		/* A packed file's layout is its pack's: said with the tables,
		 * since packs coded otherwise than the unpacked files would
		 * compare unlike with like. */
		bench_layout_text(&lo, run->br_pack_layout, sizeof(run->br_pack_layout));
		return;
	}
	if (lo.flags & NACRE_LAYOUT_INLINE)
		return; /* --small-inline: its bytes are in the MDT */
	run->br_pack = BENCH_PACK_NOT_PACKED;
	snprintf(run->br_pack_why, sizeof(run->br_pack_why),
		 "%s wrote %s in the pack directory, and it is not packed",
		 bsm_label(mt), name);
	bench_note("%s", run->br_pack_why);
}

/* A new connection for cold libnacre reads: no client cache survives. */
static int bsm_connect(struct bench_run *run, struct nacre_fs **fs)
{
	const struct bench_cfg *cfg = run->br_cfg;
	int rc;

	rc = bench_connect(cfg, fs);
	if (rc < 0)
		fprintf(stderr, "nacre-bench: connect to %s (%s): %s\n",
			cfg->bc_mds, cfg->bc_fsname, nacre_strerror(rc));
	return rc;
}

/* Write, read cold, read warm; then remove the files. */
static int bsm_target_run(struct bench_run *run, struct bsm_tgt *mt,
			  const struct bsm_set *set, struct nacre_fs *fs)
{
	struct bench_target *t = mt->mt_t;
	struct bsm_phase ph = { .p_tgt = mt, .p_set = set };
	struct nacre_fs *rfs = NULL;
	double secs;
	int rc, rc2;

	bench_note("%s: small files, %s, %u files", bsm_label(mt), set->s_param,
		   set->s_n);
	ph.p_mode = BSM_WRITE;
	ph.p_fsync_last = t->bt_kind == BENCH_FUSE;
	rc = bsm_phase_figs(&ph, "small_write");
	if (rc == 0 && mt->mt_pack)
		bsm_check_packed(run, fs, mt, set);
	if (rc < 0)
		goto out_unlink;

	ph.p_mode = BSM_READ;
	ph.p_fsync_last = false;
	ph.p_flags = bench_uncached(run, t);
	if (t->bt_kind == BENCH_LIBNACRE) {
		rc = bsm_connect(run, &rfs);
		if (rc < 0)
			goto out_unlink;
		ph.p_fs = rfs;
	}
	rc = bsm_phase_figs(&ph, "small_read");
	if (rc < 0)
		goto out_disconnect;
	/* The second pass: what every cache below gives back. */
	ph.p_flags = 0;
	rc = bsm_phase_figs(&ph, "small_read_warm");
out_disconnect:
	nacre_disconnect(rfs);
out_unlink:
	ph.p_mode = BSM_UNLINK;
	rc2 = bsm_phase_run(&ph, &secs);
	return rc < 0 ? rc : rc2;
}

/* The FUSE limit (bench_fuse_limit.c): the files read cold by the same
 * readers as the mount's; nothing to write or remove. */
static int bsm_limit_run(struct bench_run *run, struct bsm_tgt *mt, const struct bsm_set *set)
{
	struct bsm_phase ph = { .p_tgt = mt, .p_set = set, .p_mode = BSM_READ };

	bench_note("%s: small files, %s, %u files", bsm_label(mt), set->s_param, set->s_n);
	ph.p_flags = bench_uncached(run, mt->mt_t);
	return bsm_phase_figs(&ph, "small_read");
}

/* The FUSE limit's files as a small-file target; false where none runs. */
static bool bsm_limit_target(struct bench_run *run, struct bsm_tgt *mt)
{
	if (run->br_limit == NULL)
		return false;
	memset(mt, 0, sizeof(*mt));
	mt->mt_t = &run->br_limit_tgt;
	mt->mt_dir = "small";
	mt->mt_ready = true;
	return true;
}

int bench_small_sizes(const struct bench_cfg *cfg, unsigned int idx, uint32_t **sizes,
		      uint32_t *id0)
{
	struct bsm_set set;
	int rc;

	rc = bsm_set_init(&set, cfg->bc_small_sizes[idx], idx, cfg->bc_small_files);
	if (rc < 0)
		return rc;
	*sizes = set.s_size;
	*id0 = set.s_id0;
	set.s_size = NULL;
	bsm_set_free(&set);
	return 0;
}

/* ---- the directories ---- */

/* Sets NACRE_LAYOUT_PACK on the pack directory, and checks that it stuck;
 * false (with the reason in run) where the MDS will not. */
static bool bsm_pack_dir(struct bench_run *run, struct nacre_fs *fs,
			 const struct bsm_tgt *mt)
{
	struct nacre_layout lo;
	struct nacre_fid fid;
	int rc;

	rc = bsm_fid_of(fs, mt->mt_t, mt->mt_dir, &fid);
	if (rc < 0) {
		snprintf(run->br_pack_why, sizeof(run->br_pack_why),
			 "%s: no FID for %s: %s", bsm_label(mt), mt->mt_dir,
			 nacre_strerror(rc));
		return false;
	}
	/* Only the flag: every other field inherits the default. */
	memset(&lo, 0, sizeof(lo));
	lo.first_ost = NACRE_OST_ANY;
	lo.flags = NACRE_LAYOUT_PACK;
	if (run->br_cfg->bc_small_inline) {
		lo.flags |= NACRE_LAYOUT_INLINE;
		lo.inline_max = run->br_cfg->bc_small_inline;
	}
	rc = nacre_setlayout_fid(fs, NULL, &fid, &lo);
	if (rc < 0) {
		snprintf(run->br_pack_why, sizeof(run->br_pack_why),
			 "the MDS refused NACRE_LAYOUT_PACK on a directory: %s",
			 nacre_strerror(rc));
		return false;
	}
	rc = nacre_getlayout_fid(fs, &fid, &lo);
	if (rc < 0 || !(lo.flags & NACRE_LAYOUT_PACK)) {
		snprintf(run->br_pack_why, sizeof(run->br_pack_why),
			 "the MDS does not keep NACRE_LAYOUT_PACK on a directory%s%s",
			 rc < 0 ? ": " : "", rc < 0 ? nacre_strerror(rc) : "");
		return false;
	}
	return true;
}

static int bsm_dir_setup(struct bench_run *run, struct nacre_fs *fs,
			 struct bsm_tgt *mt)
{
	struct bench_target *t = mt->mt_t;
	int rc;

	rc = t->bt_ops->bo_mkdir(t, mt->mt_dir);
	if (rc < 0) {
		bench_target_err(t, "mkdir", mt->mt_dir, rc);
		return rc;
	}
	mt->mt_made = true;
	if (!mt->mt_pack) {
		mt->mt_ready = true;
		return 0;
	}
	if (run->br_pack == BENCH_PACK_UNAVAILABLE)
		return 0;
	mt->mt_ready = bsm_pack_dir(run, fs, mt);
	if (mt->mt_ready) {
		run->br_pack = BENCH_PACK_ON;
	} else {
		run->br_pack = BENCH_PACK_UNAVAILABLE;
		bench_note("packing is not measured: %s", run->br_pack_why);
	}
	return 0;
}

static int bsm_dirs_fini(struct bsm_tgt *mt, unsigned int n)
{
	unsigned int i;
	int rc, ret = 0;

	for (i = 0; i < n; i++) {
		if (!mt[i].mt_made)
			continue;
		rc = mt[i].mt_t->bt_ops->bo_rmdir(mt[i].mt_t, mt[i].mt_dir);
		if (rc < 0) {
			bench_target_err(mt[i].mt_t, "rmdir", mt[i].mt_dir, rc);
			if (ret == 0)
				ret = rc;
		}
		mt[i].mt_made = false;
	}
	return ret;
}

/* The five targets, in the order they run; those without a bench target
 * (no --mount) are left out.  Returns how many. */
static unsigned int bsm_targets(struct bench_run *run, struct bsm_tgt *mt)
{
	static const struct {
		enum bench_kind kind;
		bool pack;
	} order[] = {
		{ BENCH_LIBNACRE, true },
		{ BENCH_LIBNACRE, false },
		{ BENCH_FUSE, true },
		{ BENCH_FUSE, false },
		{ BENCH_LOCAL, false },
	};
	unsigned int i, j, n = 0;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		for (j = 0; j < run->br_ntgt; j++) {
			if (run->br_tgt[j].bt_kind != order[i].kind)
				continue;
			memset(&mt[n], 0, sizeof(mt[n]));
			mt[n].mt_t = &run->br_tgt[j];
			mt[n].mt_pack = order[i].pack;
			mt[n].mt_dir = order[i].pack ? "small-pack" : "small";
			n++;
		}
	}
	return n;
}

static struct nacre_fs *bsm_fs(struct bench_run *run)
{
	unsigned int i;

	for (i = 0; i < run->br_ntgt; i++)
		if (run->br_tgt[i].bt_kind == BENCH_LIBNACRE)
			return run->br_tgt[i].bt_fs;
	return NULL;
}

int bench_small(struct bench_run *run)
{
	const struct bench_cfg *cfg = run->br_cfg;
	struct nacre_fs *fs = bsm_fs(run);
	struct bsm_tgt mt[5], lmt;
	bool with_limit;
	struct bsm_set set;
	unsigned int i, j, n;
	int rc = 0, rc2;

	if (fs == NULL)
		return -EINVAL;
	n = bsm_targets(run, mt);
	for (i = 0; i < n && rc == 0; i++)
		rc = bsm_dir_setup(run, fs, &mt[i]);
	with_limit = bsm_limit_target(run, &lmt);
	for (i = 0; i < cfg->bc_nsmall && rc == 0; i++) {
		rc = bsm_set_init(&set, cfg->bc_small_sizes[i], i,
				  cfg->bc_small_files);
		if (rc < 0) {
			fprintf(stderr, "nacre-bench: small files: %s\n",
				strerror(-rc));
			break;
		}
		run->br_small_bytes[i] = set.s_bytes;
		for (j = 0; j < n && rc == 0; j++)
			if (mt[j].mt_ready)
				rc = bsm_target_run(run, &mt[j], &set, fs);
		if (with_limit && rc == 0)
			rc = bsm_limit_run(run, &lmt, &set);
		bsm_set_free(&set);
	}
	rc2 = bsm_dirs_fini(mt, n);
	return rc < 0 ? rc : rc2;
}
