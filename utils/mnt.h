/* SPDX-License-Identifier: MIT */
/*
 * mount.nacre: a FUSE3 low-level server over libnacre's public API.
 *
 * mnt_main.c parses the command line, connects to the filesystem, mounts and
 * runs the FUSE session loop; mnt_ops.c holds the request handlers, each a
 * thin translation between one FUSE request and one libnacre FID call.
 *
 * Inode numbers
 *   Every FID this MDS allocates has seq == 1 and the root directory is
 *   {1, 1}, so the FUSE inode number is simply the FID's oid and the FID of
 *   an inode number is {1, ino}.  The root, FUSE_ROOT_ID (1), is then the
 *   root FID with no special case.  The mapping needs no table; what the
 *   helper keeps per inode beyond open files is only what lets it keep the
 *   kernel's caches (mnt_inode.c), dropped on forget.  A FID with any
 *   other seq cannot be named this way: the request
 *   that meets one fails with EOVERFLOW, as stat(2) does for an inode number
 *   that does not fit.
 *
 * Permissions
 *   The mount always uses default_permissions: the kernel checks mode bits
 *   against the caller before sending a request, and the MDS checks again
 *   with the caller's uid, gid and supplementary groups, which every
 *   request carries.  The access handler therefore only answers 0.
 *
 * Virtual extended attributes
 *   "nacre.mds" (the MDS address), "nacre.fsname" (the filesystem name) and
 *   "nacre.fid" (the inode's FID as "seq:oid" in hex) are answered by the
 *   helper itself, on every inode, and are not listed by listxattr.
 *   "nacre.stats", on the root only, holds this mount's client counters in
 *   the Prometheus text format (`nacre stats` reads it).  Their
 *   values are the text without a terminating NUL.  The nacre CLI reads them
 *   to find the filesystem and FID behind a path on the mount.  Setting or
 *   removing them fails with EPERM.
 */
#ifndef MNT_H
#define MNT_H

#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "nacre.h"
#include "utils/mnt_inode.h"

/* ---- Logging (the helper links only libnacre's public API) ---- */

enum mnt_log_level {
	MNT_LOG_ERROR = 0,
	MNT_LOG_WARN = 1,
	MNT_LOG_INFO = 2,
	MNT_LOG_DEBUG = 3,
};

extern int mnt_log_level;

void mnt_log_write(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Tests the level before the arguments are evaluated. */
#define mnt_log(level, ...)                                     \
	do {                                                    \
		if ((level) <= mnt_log_level)                   \
			mnt_log_write((level), __VA_ARGS__);    \
	} while (0)

/* ---- Inode numbers ---- */

#define MNT_FID_SEQ 1

/* The inode number of @fid, or 0 when its seq cannot be mapped. */
static inline fuse_ino_t mnt_fid_to_ino(const struct nacre_fid *fid)
{
	if (fid->seq != MNT_FID_SEQ || fid->oid == 0)
		return 0;
	return (fuse_ino_t)fid->oid;
}

static inline void mnt_ino_to_fid(fuse_ino_t ino, struct nacre_fid *fid)
{
	fid->seq = MNT_FID_SEQ;
	fid->oid = ino;
}

/* ---- Per-mount state ---- */

/*
 * An open file.  fi->fh holds a pointer to one of these.  The helper keeps
 * them in a table by inode so that getattr can report the size a writer
 * has reached before libnacre reports it to the MDS (on fsync or close: the
 * kernel sends release asynchronously, so `cp a b; stat b` would otherwise
 * race with it), and so that files still open at unmount are closed before
 * nacre_disconnect().
 */
struct mnt_file {
	struct nacre_file *mf_file;
	fuse_ino_t mf_ino;
	uint64_t mf_wr_end;             /* end of the furthest write; under mc_lock */
	bool mf_writable;
	bool mf_sync;                   /* O_SYNC / O_DSYNC: fsync every write */
	struct mnt_file *mf_next;       /* hash chain, under mc_lock */
	struct mnt_file *mf_prev;
};

#define MNT_FILE_BUCKETS 1024

/* The caller's credentials of recent requests, by pid (mnt_cred.c): the
 * supplementary groups come from /proc, which costs three system calls a
 * request otherwise. */
#define MNT_CRED_SLOTS 256
#define MNT_CRED_TTL_MS 1000
struct mnt_cred_slot {
	pid_t cs_pid;                   /* 0: empty */
	int64_t cs_at_ms;               /* when the groups were read */
	struct nacre_cred cs_cred;
};

/* Lookups' open intents waiting for the OPEN of the same system call
 * (mnt_intent.c). */
#define MNT_INTENT_SLOTS 256
#define MNT_INTENT_MS 20
struct mnt_intent_slot {
	struct nacre_intent *is_intent; /* NULL: empty */
	fuse_ino_t is_ino;
	pid_t is_pid;                   /* the thread that looked the name up */
	uid_t is_uid;
	gid_t is_gid;
	int64_t is_at_ms;               /* when (CLOCK_MONOTONIC) */
	uint64_t is_seq;                /* mc_intent_seq when the lookup began */
	uint64_t is_changed;            /* mc_intent_seq at the last change of
					 * an inode of this slot here */
};

struct mnt_ctx {
	struct nacre_fs *mc_fs;
	struct fuse_session *mc_se;     /* set once the session exists */
	const char *mc_mountpoint;
	long mc_read_ahead_kb;          /* 0: the kernel's default */
	double mc_attr_timeout;         /* seconds */
	double mc_entry_timeout;
	double mc_negative_timeout;
	pthread_mutex_t mc_lock;        /* guards mc_files, mf_wr_end, mc_inos */
	struct mnt_file *mc_files[MNT_FILE_BUCKETS];
	unsigned int mc_nfiles;
	/* By inode: the file at its last open here (the kernel's pages of a
	 * file unchanged since are kept: a second epoch over a dataset is
	 * served from memory) and the attributes last replied (an open that
	 * finds the MDS's the same need not make the kernel fetch them). */
	struct mnt_ino_table mc_inos;                    /* under mc_lock */
	pthread_mutex_t mc_cred_lock;
	struct mnt_cred_slot mc_creds[MNT_CRED_SLOTS];   /* under mc_cred_lock */
	pthread_mutex_t mc_intent_lock;
	struct mnt_intent_slot mc_intents[MNT_INTENT_SLOTS]; /* under mc_intent_lock */
	uint64_t mc_intent_seq;                          /* under mc_intent_lock */
	/* Lookups and reads answered by libnacre's threads
	 * (nacre_lookup_open_start(), nacre_pread_start()), not yet
	 * answered: the session and the files must outlive them. */
	pthread_mutex_t mc_async_lock;
	pthread_cond_t mc_async_cond;
	unsigned int mc_async;                           /* under mc_async_lock */
};

/*
 * The credentials @req acts with: its uid and gid, and the supplementary
 * groups of its process, read from /proc at most once a second per
 * process (a setgroups(2) shows within that second).
 */
void mnt_cred_get(fuse_req_t req, struct nacre_cred *cred);
/* Milliseconds of CLOCK_MONOTONIC. */
int64_t mnt_now_ms(void);

/* ---- Open intents (mnt_intent.c) ---- */

/* The change sequence, read before a lookup asks the MDS. */
uint64_t mnt_intent_seq(struct mnt_ctx *ctx);
/* Keeps @in, which the LOOKUP @req of @ino brought (begun at sequence
 * @seq), for the OPEN of the same system call; frees what the slot held.
 * Takes @in. */
void mnt_intent_put(struct mnt_ctx *ctx, fuse_req_t req, fuse_ino_t ino,
		    struct nacre_intent *in, uint64_t seq);
/* The intent the OPEN @req of @ino may use (the caller owns it), or NULL:
 * none, another thread's, or older than MNT_INTENT_MS. */
struct nacre_intent *mnt_intent_take(struct mnt_ctx *ctx, fuse_req_t req, fuse_ino_t ino);
/* This mount changed @ino (setattr, write): intents of lookups begun
 * before are not used. */
void mnt_intent_changed(struct mnt_ctx *ctx, fuse_ino_t ino);
/* Frees every intent kept (the session has ended). */
void mnt_intent_fini(struct mnt_ctx *ctx);

/* ---- Client counters (mnt_stats.c) ---- */

/* The counters of the mount @ctx (libnacre's and its own) in the
 * Prometheus text format: *text is malloc'd, NUL-terminated, *len bytes.
 * 0 or -ENOMEM. */
int mnt_stats_text(struct mnt_ctx *ctx, char **text, size_t *len);
/* Serves them on @addr ("tcp://host:port"), GET /metrics. */
struct nc_mhttp;
int mnt_metrics_start(struct mnt_ctx *ctx, const char *addr, struct nc_mhttp **out);

/* @fs stays owned by the caller.  0 or -errno. */
int mnt_ctx_init(struct mnt_ctx *ctx, struct nacre_fs *fs,
		 double attr_timeout, double entry_timeout, double negative_timeout);
/* Closes every file still open (an unmount by signal can leave some);
 * requests answered on libnacre's threads are drained before
 * (mnt_async_drain()). */
void mnt_ctx_fini(struct mnt_ctx *ctx);
/* Waits until every lookup and read started on libnacre's threads has
 * answered the kernel: before the session or a file it reads goes away. */
void mnt_async_drain(struct mnt_ctx *ctx);

/*
 * Sets the readahead window of the mount's backing device, found by its
 * device number in /proc/self/mountinfo (a stat of the mount point would
 * wait for the session loop).  Best effort: a failure is logged and the
 * kernel's default stays.  Called at FUSE init: the kernel applies the
 * smaller of this and the init reply's max_readahead once init returns.
 */
void mnt_set_read_ahead(const char *mountpoint, long kb);

/* The request handlers; userdata of the session is a struct mnt_ctx. */
extern const struct fuse_lowlevel_ops mnt_ll_ops;

/*
 * The positive errno to send to the kernel for a libnacre return code:
 * errno values pass through, nacre codes (above 4095) become EIO, or ENOSPC
 * for "no usable OST", and are logged once per code.
 */
int mnt_errno(int err);

#endif
