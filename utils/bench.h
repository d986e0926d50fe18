/* SPDX-License-Identifier: MIT */
/*
 * nacre-bench: the benchmark of nacre's data and metadata paths.
 *
 * The same workloads run on up to three targets, each behind one ops table
 * (bench_target.c): libnacre (the public client API), the FUSE mount (POSIX
 * calls on the mount point) and a plain local directory on the same disk,
 * the machine's own limit measured in the same run.  A fourth, "tcp", is the
 * loopback TCP limit (bench_tcp.c), and a fifth, "fuse_limit", what an
 * empty FUSE filesystem gives the same cold readers (bench_fuse_limit.c).
 * Every figure goes into one list (bench_report.c) that prints as tables or as one JSON object, each figure
 * with its ratio to the same figure on the local directory.
 *
 *   nacre-bench.c   options, the run plan, exit status
 *   bench_data.c    the data pattern, verification, clocks, latencies,
 *                   dropping the page cache, threads started together
 *   bench_seq.c     sequential write/read and random reads
 *   bench_meta.c    creates, stats, opens and unlinks
 *   bench_tcp.c     memory-to-memory throughput over loopback TCP
 *   bench_small.c   many small files written, then read in a random order,
 *                   in a packing directory and a plain one
 *   bench_fuse_limit.c  an empty FUSE filesystem served from memory: what
 *                   the mount's cold reads could reach at best
 *
 * Exit status: 0 success, 1 an I/O or setup error, 2 bad usage, 3 data read
 * back differs from what was written, 128 + N stopped by signal N (its
 * files removed).
 */
#ifndef BENCH_H
#define BENCH_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nacre.h"

#define BENCH_EXIT_OK 0
#define BENCH_EXIT_IO 1
#define BENCH_EXIT_USAGE 2
#define BENCH_EXIT_MISMATCH 3

#define BENCH_MAX_LIST 8        /* entries in --streams / --threads */
#define BENCH_MAX_THREADS 64    /* streams or threads of one workload */
#define BENCH_ALIGN 4096        /* buffer and offset alignment (O_DIRECT) */

enum bench_kind {
	BENCH_LIBNACRE,
	BENCH_FUSE,
	BENCH_LOCAL,
	BENCH_TCP,
	BENCH_FUSE_LIMIT,
	BENCH_NKINDS,
};

/* An open file of any target. */
struct bench_fh {
	int bf_fd;                      /* POSIX targets */
	struct nacre_file *bf_nf;       /* libnacre */
};

struct bench_target;

/* The targets a run writes its files to (libnacre, fuse, local): the
 * kinds after them are limits nacre-bench measures on its own. */
#define BENCH_NTARGETS (BENCH_LOCAL + 1)

/* One target's file and namespace calls; names are relative to the target's
 * bench directory.  All return 0 (or a byte count) or -errno / -NC_E_*. */
struct bench_ops {
	int (*bo_mkdir)(struct bench_target *t, const char *name);
	int (*bo_rmdir)(struct bench_target *t, const char *name);
	int (*bo_open)(struct bench_target *t, const char *name, int flags,
		       struct bench_fh *fh);
	ssize_t (*bo_pread)(struct bench_fh *fh, void *buf, size_t len, off_t off);
	ssize_t (*bo_pwrite)(struct bench_fh *fh, const void *buf, size_t len,
			     off_t off);
	int (*bo_fsync)(struct bench_fh *fh);
	int (*bo_close)(struct bench_fh *fh);
	int (*bo_stat)(struct bench_target *t, const char *name);
	int (*bo_unlink)(struct bench_target *t, const char *name);
	const char *(*bo_strerror)(int err);
};

struct bench_target {
	enum bench_kind bt_kind;
	const char *bt_name;            /* "libnacre", "fuse", "local" */
	const struct bench_ops *bt_ops;
	struct nacre_fs *bt_fs;         /* libnacre only */
	char bt_dir[PATH_MAX];          /* the bench directory */
	bool bt_has_page_cache;         /* reads may come from the kernel cache */
	bool bt_created;                /* bt_dir was made by us */
};

/* The options of one run. */
/* Workloads, for --only. */
#define BENCH_W_TCP 0x1u
#define BENCH_W_SEQ 0x2u
#define BENCH_W_META 0x4u
#define BENCH_W_SMALL 0x8u
#define BENCH_W_ALL 0xfu

/* In bc_small_sizes: the mixed (ImageNet-like) size distribution. */
#define BENCH_SMALL_MIXED 0u
#define BENCH_SMALL_MAX (1024u * 1024)  /* the largest small file, bytes */
#define BENCH_SMALL_FILES_MAX 1000000u
#define BENCH_SMALL_WORKERS 4           /* writers, then readers */

/* The most runs --repeat asks for (their median is printed). */
#define BENCH_MAX_REPEAT 9

struct bench_cfg {
	const char *bc_mds;
	const char *bc_fsname;
	const char *bc_keyfile;         /* --keyfile; NULL: libnacre's default */
	const char *bc_mount;
	const char *bc_local;
	bool bc_json;
	bool bc_quick;
	bool bc_corrupt;                /* --self-test-corrupt */
	uint64_t bc_size;               /* bytes per stream */
	unsigned int bc_files;          /* metadata files per thread count */
	double bc_duration;             /* seconds per random-read run */
	unsigned int bc_nstreams;
	unsigned int bc_streams[BENCH_MAX_LIST];
	unsigned int bc_nthreads;
	unsigned int bc_threads[BENCH_MAX_LIST];
	size_t bc_reqs[2];              /* sequential request sizes */
	size_t bc_rand[2];              /* random read sizes */
	unsigned int bc_only;           /* BENCH_W_* workloads to run */
	unsigned int bc_repeat;         /* runs of each sequential workload (median) */
	unsigned int bc_small_files;    /* files per small-file size */
	uint32_t bc_small_inline;       /* the pack directory's inline_max (0: none) */
	unsigned int bc_nsmall;
	uint32_t bc_small_sizes[BENCH_MAX_LIST]; /* bytes, or BENCH_SMALL_MIXED */
};

/* Whether the small-file workload could pack. */
enum bench_pack {
	BENCH_PACK_NOT_RUN,
	BENCH_PACK_ON,                  /* the pack directories pack */
	BENCH_PACK_UNAVAILABLE,         /* the MDS refused the flag */
	BENCH_PACK_NOT_PACKED,          /* the flag stuck, the files were not packed */
};

/* The run-wide state the workloads share. */
struct bench_run {
	const struct bench_cfg *br_cfg;
	struct bench_target br_tgt[BENCH_NTARGETS];
	unsigned int br_ntgt;
	bool br_drop_ok;                /* drop_caches works here */
	bool br_direct;                 /* O_DIRECT for uncached POSIX reads */
	enum bench_pack br_pack;        /* set by bench_small() */
	char br_pack_why[256];          /* why packing is not measured */
	char br_pack_layout[96];        /* the packs' layout, as text ("": unknown) */
	uint64_t br_small_bytes[BENCH_MAX_LIST]; /* per size, all files */
	struct bench_fuse_limit *br_limit; /* the FUSE limit's server, or NULL */
	struct bench_target br_limit_tgt;  /* its files, where br_limit is set */
};

/* ---- bench_target.c ---- */

/* nacre_connect() with the configured MDS, fsname and key file. */
int bench_connect(const struct bench_cfg *cfg, struct nacre_fs **fs);
int bench_target_init_nacre(struct bench_target *t, struct nacre_fs *fs,
			    const char *dir);
int bench_target_init_posix(struct bench_target *t, enum bench_kind kind,
			    const char *dir);
/* Makes the target's bench directory; bench_target_fini() removes it. */
int bench_target_setup(struct bench_target *t);
void bench_target_fini(struct bench_target *t);
/* A one-line error about @what on @t, with the target's error text. */
void bench_target_err(const struct bench_target *t, const char *what,
		      const char *name, int err);

/* ---- bench_data.c ---- */

/* Byte @off of file @file: an xorshift stream per 1 MiB block, seeded by
 * the file and the block. */
void bench_pattern_fill(void *buf, size_t len, uint32_t file, uint64_t off);
/* Checks @buf against the pattern; on a mismatch records the first one
 * (reported by bench_mismatch_report()) and returns false. */
bool bench_pattern_check(const void *buf, size_t len, uint32_t file,
			 uint64_t off, const struct bench_target *t,
			 const char *name);
void bench_set_corrupt(bool on);
bool bench_mismatch_seen(void);
void bench_mismatch_report(void);

double bench_now(void);
void *bench_buf_alloc(size_t len);
/* A file's (or pack's) layout as the header prints it. */
void bench_layout_text(const struct nacre_layout *lo, char *buf, size_t size);

/* Per-request latencies of one workload, collected by all its threads. */
struct bench_lat {
	pthread_mutex_t bl_lock;
	double *bl_v;                   /* seconds */
	size_t bl_n;
	size_t bl_cap;
};

int bench_lat_init(struct bench_lat *l);
void bench_lat_fini(struct bench_lat *l);
int bench_lat_merge(struct bench_lat *l, const double *v, size_t n);
double bench_lat_mean(const struct bench_lat *l);
double bench_lat_p99(struct bench_lat *l);

/* SIGINT, SIGTERM and SIGHUP stop the run: the target calls that start
 * work (open, read, write, stat, mkdir) fail with -EINTR from then on, so
 * every workload ends through its error path, which removes its files,
 * and main() removes the bench directories.  A second signal kills. */
void bench_catch_signals(void);
/* 0, or the signal that stopped the run. */
int bench_stop_signal(void);

/* Flushes dirty data and drops the page cache; false where not allowed. */
bool bench_drop_caches(void);
/* Before a read that must not come from the page cache: drops it, and
 * returns the open flags of the read (O_DIRECT for @t where the cache
 * cannot be dropped). */
int bench_uncached(const struct bench_run *run, const struct bench_target *t);

/* Runs fn(arg + i * size) on @n threads released together; returns the
 * seconds from the release until the last returned, or a negative error
 * when threads could not start. */
typedef void *(*bench_thread_fn)(void *arg);
double bench_run_threads(unsigned int n, bench_thread_fn fn, void *args,
			 size_t size);
/* Called first by each thread of bench_run_threads(). */
void bench_thread_ready(void);

/* ---- the workloads ---- */

int bench_seq(struct bench_run *run);
/* Calls @fn with the name (under the bench directory) and pattern id of
 * every file the sequential workload makes, in the order it makes them. */
typedef void (*bench_seq_file_fn)(void *arg, const char *name, uint32_t id);
void bench_seq_files(const struct bench_cfg *cfg, bench_seq_file_fn fn, void *arg);
int bench_meta(struct bench_run *run);
int bench_tcp(struct bench_run *run);
/* Returns -EILSEQ when a file read back has the wrong size (already
 * reported); other wrong data is reported by bench_mismatch_report(). */
int bench_small(struct bench_run *run);
/* The sizes of the files of small-file size number @idx of the run, as
 * the workload makes them (*@sizes: bc_small_files entries, malloc'd),
 * and the pattern id of the first. */
int bench_small_sizes(const struct bench_cfg *cfg, unsigned int idx, uint32_t **sizes,
		      uint32_t *id0);
/* "4k", "128k", "1m", "1000" (bytes) or "mixed": the param of a size. */
const char *bench_small_name(uint32_t size, char *buf, size_t len);

/* ---- bench_fuse_limit.c ---- */

struct bench_fuse_limit;

/* Starts a process serving an empty FUSE filesystem with the run's small
 * files (bench_small_sizes(), as small/PARAM-%07u) and sequential files
 * (bench_seq_files()), mounted on a new directory under $TMPDIR (else
 * /tmp), with the kernel readahead of the mount (cfg->bc_mount); @t
 * becomes the POSIX target of that directory.  Call before any thread
 * starts.  -errno where it cannot run (libfuse says why). */
int bench_fuse_limit_start(const struct bench_cfg *cfg, struct bench_fuse_limit **out,
			   struct bench_target *t);
/* Stops it (it unmounts) and removes its directory; NULL is ignored. */
void bench_fuse_limit_stop(struct bench_fuse_limit *fl);

/* ---- bench_report.c ---- */

/* Records one figure.  @workload is e.g. "seq_read", @param e.g. "1m",
 * @conc the streams or threads, @metric e.g. "gbps". */
int bench_fig_add(enum bench_kind kind, const char *workload,
		  const char *param, unsigned int conc, const char *metric,
		  const char *unit, double value);
void bench_report_table(const struct bench_run *run);
void bench_report_json(const struct bench_run *run, double wall);
void bench_report_free(void);
const char *bench_kind_name(enum bench_kind kind);
/* Progress lines on stderr (not with --json unless asked). */
void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
