/* SPDX-License-Identifier: MIT */
/*
 * The FUSE request handlers of mount.nacre.
 *
 * Each handler takes the caller's identity from the request, makes one
 * libnacre FID call and replies.  A request handle is valid until exactly
 * one reply, so every path through a handler ends in exactly one fuse_reply_*
 * call, most of them through mnt_reply_status() or mnt_reply_entry().
 * libnacre's negative codes become FUSE's positive errno only in mnt_errno().
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>

#include "utils/mnt.h"

/* Reads and writes up to this size, and the st_blksize we report so that
 * cp and friends use buffers as large as a chunk. */
#define MNT_IO_MAX (1u << 20)
#define MNT_BLKSIZE (1u << 20)
/* statfs(2) units. */
#define MNT_STATFS_BSIZE 4096u
/* Requests the kernel may queue in the background (readahead, async reads):
 * enough to keep every OST of a wide stripe busy. */
#define MNT_MAX_BACKGROUND 64u
#define MNT_CONGESTION 48u
/* The kernel never asks for more (XATTR_SIZE_MAX, XATTR_LIST_MAX). */
#define MNT_XATTR_MAX 65536u
/* Directory entries fetched from the MDS per readdir_fid call. */
#define MNT_READDIR_BATCH 128u
/* nacre's own codes start here; "no usable OST" is a stable wire value. */
#define MNT_NACRE_CODE_BASE 4096u
#define MNT_NACRE_E_NOOST 4099u
/* readdir offsets: "." is 1, ".." is 2, an entry with cookie c is c + 2. */
#define MNT_DIR_OFF_DOT 1
#define MNT_DIR_OFF_DOTDOT 2

static atomic_uint_least64_t mnt_codes_logged;

int mnt_errno(int err)
{
	unsigned int code, bit;

	if (err >= 0)
		return EIO;
	code = 0u - (unsigned int)err;
	if (code < MNT_NACRE_CODE_BASE)
		return (int)code;
	/* Log each nacre code once: they mean the cluster is unwell, and one
	 * line per failed request would flood the log. */
	bit = code - MNT_NACRE_CODE_BASE;
	if (bit > 63)
		bit = 63;
	if (!(atomic_fetch_or(&mnt_codes_logged, UINT64_C(1) << bit) &
	      (UINT64_C(1) << bit)))
		mnt_log(MNT_LOG_ERROR, "libnacre: %s (%d), reported as %s",
			nacre_strerror(err), err,
			code == MNT_NACRE_E_NOOST ? "ENOSPC" : "EIO");
	return code == MNT_NACRE_E_NOOST ? ENOSPC : EIO;
}

static struct mnt_ctx *mnt_req_ctx(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* Replies 0 or the error for @rc, a libnacre return code. */
static void mnt_reply_status(fuse_req_t req, const char *op, fuse_ino_t ino,
			     int rc)
{
	if (rc < 0)
		mnt_log(MNT_LOG_DEBUG, "%s ino %lu: %s", op, (unsigned long)ino,
			nacre_strerror(rc));
	fuse_reply_err(req, rc < 0 ? mnt_errno(rc) : 0);
}

/* ---- Open file table ---- */

static unsigned int mnt_file_bucket(fuse_ino_t ino)
{
	/* Fibonacci hashing: oids are sequential, spread them out. */
	return (unsigned int)(((uint64_t)ino * UINT64_C(0x9E3779B97F4A7C15)) >>
			      54) % MNT_FILE_BUCKETS;
}

static void mnt_file_insert(struct mnt_ctx *ctx, struct mnt_file *mf)
{
	struct mnt_file **head = &ctx->mc_files[mnt_file_bucket(mf->mf_ino)];

	pthread_mutex_lock(&ctx->mc_lock);
	mf->mf_prev = NULL;
	mf->mf_next = *head;
	if (*head)
		(*head)->mf_prev = mf;
	*head = mf;
	ctx->mc_nfiles++;
	pthread_mutex_unlock(&ctx->mc_lock);
}

static void mnt_file_remove(struct mnt_ctx *ctx, struct mnt_file *mf)
{
	pthread_mutex_lock(&ctx->mc_lock);
	if (mf->mf_prev)
		mf->mf_prev->mf_next = mf->mf_next;
	else
		ctx->mc_files[mnt_file_bucket(mf->mf_ino)] = mf->mf_next;
	if (mf->mf_next)
		mf->mf_next->mf_prev = mf->mf_prev;
	ctx->mc_nfiles--;
	pthread_mutex_unlock(&ctx->mc_lock);
}

/* The furthest byte written through any handle of @ino in this mount. */
static uint64_t mnt_file_wr_end(struct mnt_ctx *ctx, fuse_ino_t ino)
{
	uint64_t end = 0;

	pthread_mutex_lock(&ctx->mc_lock);
	for (struct mnt_file *mf = ctx->mc_files[mnt_file_bucket(ino)]; mf;
	     mf = mf->mf_next)
		if (mf->mf_ino == ino && mf->mf_wr_end > end)
			end = mf->mf_wr_end;
	pthread_mutex_unlock(&ctx->mc_lock);
	return end;
}

/* After a truncate to @size, no handle may claim bytes beyond it. */
static void mnt_file_clip(struct mnt_ctx *ctx, fuse_ino_t ino, uint64_t size)
{
	pthread_mutex_lock(&ctx->mc_lock);
	for (struct mnt_file *mf = ctx->mc_files[mnt_file_bucket(ino)]; mf;
	     mf = mf->mf_next)
		if (mf->mf_ino == ino && mf->mf_wr_end > size)
			mf->mf_wr_end = size;
	pthread_mutex_unlock(&ctx->mc_lock);
}

static void mnt_file_wrote(struct mnt_ctx *ctx, struct mnt_file *mf,
			   uint64_t end)
{
	pthread_mutex_lock(&ctx->mc_lock);
	if (end > mf->mf_wr_end)
		mf->mf_wr_end = end;
	pthread_mutex_unlock(&ctx->mc_lock);
}

static struct mnt_file *mnt_file_of(const struct fuse_file_info *fi)
{
	return (struct mnt_file *)(uintptr_t)fi->fh;
}

/* Wraps a freshly opened @nf; on failure closes it. */
static int mnt_file_new(struct mnt_ctx *ctx, struct nacre_file *nf,
			fuse_ino_t ino, int flags, struct mnt_file **out)
{
	struct mnt_file *mf = calloc(1, sizeof(*mf));

	if (!mf) {
		nacre_close(nf);
		return -ENOMEM;
	}
	mf->mf_file = nf;
	mf->mf_ino = ino;
	mf->mf_writable = (flags & O_ACCMODE) != O_RDONLY;
	mf->mf_sync = (flags & (O_SYNC | O_DSYNC)) != 0;
	mnt_file_insert(ctx, mf);
	*out = mf;
	return 0;
}

static int mnt_file_close(struct mnt_ctx *ctx, struct mnt_file *mf)
{
	int rc;

	/* Close first: nacre_close() reports the size to the MDS, and until it
	 * has, getattr must still find this handle's mf_wr_end. */
	rc = nacre_close(mf->mf_file);
	mnt_file_remove(ctx, mf);
	free(mf);
	return rc;
}

int mnt_ctx_init(struct mnt_ctx *ctx, struct nacre_fs *fs,
		 double attr_timeout, double entry_timeout, double negative_timeout)
{
	int rc;

	memset(ctx, 0, sizeof(*ctx));
	ctx->mc_fs = fs;
	ctx->mc_attr_timeout = attr_timeout;
	ctx->mc_entry_timeout = entry_timeout;
	ctx->mc_negative_timeout = negative_timeout;
	rc = -mnt_ino_table_init(&ctx->mc_inos, MNT_INO_MAX);
	if (!rc)
		rc = pthread_mutex_init(&ctx->mc_lock, NULL);
	if (!rc)
		rc = pthread_mutex_init(&ctx->mc_cred_lock, NULL);
	if (!rc)
		rc = pthread_mutex_init(&ctx->mc_intent_lock, NULL);
	if (!rc)
		rc = pthread_mutex_init(&ctx->mc_async_lock, NULL);
	if (!rc)
		rc = pthread_cond_init(&ctx->mc_async_cond, NULL);
	if (rc)
		mnt_ino_table_fini(&ctx->mc_inos); /* the mutexes die with the process */
	return -rc;
}

void mnt_async_drain(struct mnt_ctx *ctx)
{
	pthread_mutex_lock(&ctx->mc_async_lock);
	while (ctx->mc_async)
		pthread_cond_wait(&ctx->mc_async_cond, &ctx->mc_async_lock);
	pthread_mutex_unlock(&ctx->mc_async_lock);
}

/* One more (@d = 1) or one less (-1) request answered by libnacre's
 * threads. */
static void mnt_async_add(struct mnt_ctx *ctx, int d)
{
	pthread_mutex_lock(&ctx->mc_async_lock);
	ctx->mc_async += (unsigned int)d;
	if (!ctx->mc_async)
		pthread_cond_broadcast(&ctx->mc_async_cond);
	pthread_mutex_unlock(&ctx->mc_async_lock);
}

void mnt_ctx_fini(struct mnt_ctx *ctx)
{
	if (ctx->mc_nfiles)
		mnt_log(MNT_LOG_INFO, "closing %u file(s) left open",
			ctx->mc_nfiles);
	for (unsigned int i = 0; i < MNT_FILE_BUCKETS; i++)
		while (ctx->mc_files[i]) {
			int rc = mnt_file_close(ctx, ctx->mc_files[i]);

			if (rc < 0)
				mnt_log(MNT_LOG_ERROR, "close at unmount: %s",
					nacre_strerror(rc));
		}
	mnt_intent_fini(ctx);
	mnt_ino_table_fini(&ctx->mc_inos);
	pthread_mutex_destroy(&ctx->mc_lock);
	pthread_mutex_destroy(&ctx->mc_cred_lock);
	pthread_mutex_destroy(&ctx->mc_async_lock);
	pthread_cond_destroy(&ctx->mc_async_cond);
	pthread_mutex_destroy(&ctx->mc_intent_lock);
}

/* ---- Attributes ---- */

static int mnt_attr_fill(struct mnt_ctx *ctx, const struct nacre_stat *ns,
			 struct stat *st)
{
	fuse_ino_t ino = mnt_fid_to_ino(&ns->fid);
	uint64_t size = ns->size;

	if (!ino)
		return -EOVERFLOW;
	if (S_ISREG(ns->mode)) {
		uint64_t end = mnt_file_wr_end(ctx, ino);

		if (end > size)
			size = end;
	}
	if (size > (uint64_t)INT64_MAX)
		return -EOVERFLOW;
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = ns->mode;
	st->st_nlink = ns->nlink;
	st->st_uid = ns->uid;
	st->st_gid = ns->gid;
	st->st_rdev = ns->rdev;
	st->st_size = (off_t)size;
	st->st_blksize = MNT_BLKSIZE;
	st->st_blocks = (blkcnt_t)ns->blocks;
	st->st_atim = ns->atime;
	st->st_mtim = ns->mtime;
	st->st_ctim = ns->ctime;
	return 0;
}

/* Records @st as the attributes replied for its inode (mnt_ino_told()):
 * the kernel keeps the reply of the request it sent last, which need not
 * be the one that read the MDS last. */
static void mnt_told_record(struct mnt_ctx *ctx, const struct stat *st)
{
	pthread_mutex_lock(&ctx->mc_lock);
	mnt_ino_told(&ctx->mc_inos, st->st_ino, (uint64_t)st->st_size, &st->st_mtim,
		     &st->st_ctim);
	pthread_mutex_unlock(&ctx->mc_lock);
}

/*
 * The kernel dropped its inode @ino (FORGET), and with it its pages and
 * the attributes told before: the next reply is the one it will hold.
 * Without this, a file this mount wrote kept a dropped record (the
 * replies during the write differ from the MDS's after the commit), and
 * its first open after the kernel's caches were dropped had the kernel
 * fetch the attributes again: a GETATTR per file of a dataset read back.
 * A FORGET may come after the lookup that made a new inode of the same
 * number (the kernel queues FORGETs apart from requests); it then drops
 * a record that the new inode's replies made, and the next open has the
 * kernel fetch the attributes and read the file again, as for a file
 * never seen.
 */
static void mnt_ino_forgotten(struct mnt_ctx *ctx, fuse_ino_t ino)
{
	pthread_mutex_lock(&ctx->mc_lock);
	mnt_ino_forget(&ctx->mc_inos, ino);
	pthread_mutex_unlock(&ctx->mc_lock);
}

/* True when the attributes last replied for @ino are @ns's (size, mtime,
 * ctime): the kernel holds the MDS's current ones, or none. */
static bool mnt_told_same(struct mnt_ctx *ctx, fuse_ino_t ino, const struct nacre_stat *ns)
{
	bool same;

	pthread_mutex_lock(&ctx->mc_lock);
	same = mnt_ino_told_is(&ctx->mc_inos, ino, ns->size, &ns->mtime, &ns->ctime);
	pthread_mutex_unlock(&ctx->mc_lock);
	return same;
}

static int mnt_entry_fill(struct mnt_ctx *ctx, const struct nacre_stat *ns,
			  struct fuse_entry_param *e)
{
	int rc;

	memset(e, 0, sizeof(*e));
	rc = mnt_attr_fill(ctx, ns, &e->attr);
	if (rc)
		return rc;
	e->ino = e->attr.st_ino;
	/* FIDs are never reused, so one generation serves every inode. */
	e->generation = 0;
	e->attr_timeout = ctx->mc_attr_timeout;
	e->entry_timeout = ctx->mc_entry_timeout;
	return 0;
}

/* Replies an entry for @ns when @rc is 0, else the error. */
static void mnt_reply_entry(fuse_req_t req, const char *op, fuse_ino_t parent,
			    int rc, const struct nacre_stat *ns)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req); /* @req is gone once replied */
	struct fuse_entry_param e;

	if (rc == 0)
		rc = mnt_entry_fill(ctx, ns, &e);
	if (rc < 0) {
		mnt_reply_status(req, op, parent, rc);
		return;
	}
	if (fuse_reply_entry(req, &e) == 0)
		mnt_told_record(ctx, &e.attr);
}

static void mnt_reply_attr(fuse_req_t req, const char *op, fuse_ino_t ino,
			   int rc, const struct nacre_stat *ns)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct stat st;

	if (rc == 0)
		rc = mnt_attr_fill(ctx, ns, &st);
	if (rc < 0) {
		mnt_reply_status(req, op, ino, rc);
		return;
	}
	if (fuse_reply_attr(req, &st, ctx->mc_attr_timeout) == 0)
		mnt_told_record(ctx, &st);
}

/* ---- Session ---- */

static void mnt_op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct mnt_ctx *ctx = userdata;
	unsigned long ra = (unsigned long)ctx->mc_read_ahead_kb * 1024;

	conn->max_write = MNT_IO_MAX;
	/* The kernel caps this at the mount's read_ahead_kb (sysfs), which
	 * is raised first. */
	if (ra > UINT32_MAX)
		ra = UINT32_MAX;
	if (ra < MNT_IO_MAX)
		ra = MNT_IO_MAX;
	if (conn->max_readahead < ra)
		conn->max_readahead = (unsigned int)ra;
	if (ctx->mc_mountpoint)
		mnt_set_read_ahead(ctx->mc_mountpoint, ctx->mc_read_ahead_kb);
	conn->max_background = MNT_MAX_BACKGROUND;
	conn->congestion_threshold = MNT_CONGESTION;
	conn->want |= conn->capable & (FUSE_CAP_ASYNC_READ |
				       FUSE_CAP_ATOMIC_O_TRUNC);
	/* Inode numbers are FIDs, but exporting over NFS needs lookups by
	 * inode alone, which the helper does not serve.  The writeback cache
	 * would hold data the MDS and other clients cannot see.  The kernel
	 * clears setuid bits itself, as the MDS does not on write. */
	conn->want &= ~(FUSE_CAP_EXPORT_SUPPORT | FUSE_CAP_WRITEBACK_CACHE |
			FUSE_CAP_HANDLE_KILLPRIV);
	mnt_log(MNT_LOG_INFO,
		"kernel session: max_write %u, max_readahead %u, want 0x%x",
		conn->max_write, conn->max_readahead, conn->want);
}

static void mnt_op_destroy(void *userdata)
{
	mnt_log(MNT_LOG_INFO, "session ended");
}

/* ---- Names ---- */

/* Answers the LOOKUP @req of @name in @parent, begun at intent sequence
 * @seq, with what nacre_lookup_open() gave. */
static void mnt_lookup_reply(struct mnt_ctx *ctx, fuse_req_t req, fuse_ino_t parent,
			     uint64_t seq, int rc, const struct nacre_stat *ns,
			     struct nacre_intent *in)
{
	/* Most lookups of a regular file come before its open: the intent
	 * saves the open a round trip (mnt_intent.c).  It is kept before the
	 * reply, which lets the kernel send the OPEN. */
	if (in) {
		fuse_ino_t ino = mnt_fid_to_ino(&ns->fid);

		if (ino)
			mnt_intent_put(ctx, req, ino, in, seq);
		else
			nacre_intent_free(in);
	}
	if (rc == -ENOENT) {
		/* A negative entry: the kernel remembers the name is absent
		 * for negative_timeout instead of asking again. */
		struct fuse_entry_param e;

		memset(&e, 0, sizeof(e));
		e.ino = 0;
		e.entry_timeout = ctx->mc_negative_timeout;
		fuse_reply_entry(req, &e);
		return;
	}
	mnt_reply_entry(req, "lookup", parent, rc, ns);
}

/* A lookup nacre_lookup_open_start() took: answered where the MDS's reply
 * comes in, not by a worker asleep until it comes. */
struct mnt_lookup {
	struct mnt_ctx *l_ctx;
	fuse_req_t l_req;
	fuse_ino_t l_parent;
	uint64_t l_seq;
};

static void mnt_lookup_done(int rc, const struct nacre_stat *ns, struct nacre_intent *in,
			    void *arg)
{
	struct mnt_lookup *l = arg;
	struct mnt_ctx *ctx = l->l_ctx;

	mnt_lookup_reply(ctx, l->l_req, l->l_parent, l->l_seq, rc, ns, in);
	free(l);
	mnt_async_add(ctx, -1);
}

static void mnt_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_intent *in;
	struct nacre_fid pfid;
	struct nacre_cred cred;
	struct nacre_stat ns;
	struct mnt_lookup *l;
	uint64_t seq;
	int rc;

	mnt_ino_to_fid(parent, &pfid);
	mnt_cred_get(req, &cred);
	seq = mnt_intent_seq(ctx);
	l = malloc(sizeof(*l));
	if (l) {
		l->l_ctx = ctx;
		l->l_req = req;
		l->l_parent = parent;
		l->l_seq = seq;
		mnt_async_add(ctx, 1);
		if (nacre_lookup_open_start(ctx->mc_fs, &cred, &pfid, name, mnt_lookup_done,
					    l) == 0)
			return;
		mnt_async_add(ctx, -1);
		free(l);
	}
	rc = nacre_lookup_open(ctx->mc_fs, &cred, &pfid, name, &ns, &in);
	mnt_lookup_reply(ctx, req, parent, seq, rc, &ns, in);
}

static void mnt_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	/* Inode numbers map to FIDs without a table: nothing to drop but
	 * what lets the mount keep the kernel's caches of @ino. */
	(void)nlookup;
	mnt_ino_forgotten(mnt_req_ctx(req), ino);
	fuse_reply_none(req);
}

static void mnt_op_getattr(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_fid fid;
	struct nacre_stat ns;
	int rc;

	mnt_ino_to_fid(ino, &fid);
	rc = nacre_getattr(ctx->mc_fs, &fid, &ns);
	/* The kernel reached a cached inode that another client removed:
	 * ESTALE makes it look the name up again instead of failing. */
	if (rc == -ENOENT && !fi)
		rc = -ESTALE;
	mnt_reply_attr(req, "getattr", ino, rc, &ns);
}

static unsigned int mnt_setattr_valid(int to_set, const struct stat *attr,
				      struct nacre_setattr *sa)
{
	memset(sa, 0, sizeof(*sa));
	if (to_set & FUSE_SET_ATTR_MODE) {
		sa->valid |= NACRE_SET_MODE;
		sa->mode = attr->st_mode & 07777;
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		sa->valid |= NACRE_SET_UID;
		sa->uid = attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		sa->valid |= NACRE_SET_GID;
		sa->gid = attr->st_gid;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		sa->valid |= NACRE_SET_SIZE;
		sa->size = (uint64_t)attr->st_size;
	}
	/* The kernel sets ATIME together with ATIME_NOW; "now" wins, and the
	 * MDS takes its own clock for it. */
	if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
		sa->valid |= NACRE_SET_ATIME_NOW;
	} else if (to_set & FUSE_SET_ATTR_ATIME) {
		sa->valid |= NACRE_SET_ATIME;
		sa->atime = attr->st_atim;
	}
	if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
		sa->valid |= NACRE_SET_MTIME_NOW;
	} else if (to_set & FUSE_SET_ATTR_MTIME) {
		sa->valid |= NACRE_SET_MTIME;
		sa->mtime = attr->st_mtim;
	}
	/* FUSE_SET_ATTR_CTIME is left out: the MDS sets ctime on every
	 * change it makes. */
	return sa->valid;
}

static void mnt_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			   int to_set, struct fuse_file_info *fi)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_setattr sa;
	struct nacre_cred cred;
	struct nacre_fid fid;
	struct nacre_stat ns;
	int rc;

	if ((to_set & FUSE_SET_ATTR_SIZE) && attr->st_size < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	mnt_ino_to_fid(ino, &fid);
	mnt_setattr_valid(to_set, attr, &sa);
	/* ftruncate(2): the handle knows the layout and keeps its cached size
	 * right.  fi->fh is 0 for directory handles, which cannot be
	 * truncated but can be fchmod'ed. */
	if ((sa.valid & NACRE_SET_SIZE) && fi && mnt_file_of(fi)) {
		rc = nacre_ftruncate(mnt_file_of(fi)->mf_file, sa.size);
		if (rc < 0)
			goto out_reply;
		mnt_file_clip(ctx, ino, sa.size);
		sa.valid &= ~NACRE_SET_SIZE;
	}
	if (sa.valid) {
		mnt_cred_get(req, &cred);
		rc = nacre_setattr(ctx->mc_fs, &cred, &fid, &sa, &ns);
		if (rc == 0 && (sa.valid & NACRE_SET_SIZE))
			mnt_file_clip(ctx, ino, sa.size);
	} else {
		rc = nacre_getattr(ctx->mc_fs, &fid, &ns);
	}
out_reply:
	mnt_intent_changed(ctx, ino);
	mnt_reply_attr(req, "setattr", ino, rc, &ns);
}

static void mnt_op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_fid fid;
	char buf[PATH_MAX];
	int rc;

	mnt_ino_to_fid(ino, &fid);
	rc = nacre_readlink_fid(ctx->mc_fs, &fid, buf, sizeof(buf));
	if (rc >= 0 && (size_t)rc >= sizeof(buf))
		rc = -ENAMETOOLONG;
	if (rc < 0) {
		mnt_reply_status(req, "readlink", ino, rc);
		return;
	}
	fuse_reply_readlink(req, buf);
}

static void mnt_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode, dev_t rdev)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_cred cred;
	struct nacre_fid pfid;
	struct nacre_stat ns;
	int rc;

	mnt_ino_to_fid(parent, &pfid);
	mnt_cred_get(req, &cred);
	rc = nacre_mknod_at(ctx->mc_fs, &cred, &pfid, name, mode, rdev, &ns);
	mnt_reply_entry(req, "mknod", parent, rc, &ns);
}

static void mnt_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_cred cred;
	struct nacre_fid pfid;
	struct nacre_stat ns;
	int rc;

	mnt_ino_to_fid(parent, &pfid);
	mnt_cred_get(req, &cred);
	rc = nacre_mkdir_at(ctx->mc_fs, &cred, &pfid, name, mode & 07777, &ns);
	mnt_reply_entry(req, "mkdir", parent, rc, &ns);
}

static void mnt_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_cred cred;
	struct nacre_fid pfid;

	mnt_ino_to_fid(parent, &pfid);
	mnt_cred_get(req, &cred);
	mnt_reply_status(req, "unlink", parent,
			 nacre_unlink_at(ctx->mc_fs, &cred, &pfid, name));
}

static void mnt_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_cred cred;
	struct nacre_fid pfid;

	mnt_ino_to_fid(parent, &pfid);
	mnt_cred_get(req, &cred);
	mnt_reply_status(req, "rmdir", parent,
			 nacre_rmdir_at(ctx->mc_fs, &cred, &pfid, name));
}

static void mnt_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
			   const char *name)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_cred cred;
	struct nacre_fid pfid;
	struct nacre_stat ns;
	int rc;

	mnt_ino_to_fid(parent, &pfid);
	mnt_cred_get(req, &cred);
	rc = nacre_symlink_at(ctx->mc_fs, &cred, &pfid, name, link, &ns);
	mnt_reply_entry(req, "symlink", parent, rc, &ns);
}

static void mnt_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			  fuse_ino_t newparent, const char *newname,
			  unsigned int flags)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	unsigned int nflags = 0;
	struct nacre_fid pfid, npfid;
	struct nacre_cred cred;
	int rc;

	if (flags & RENAME_NOREPLACE)
		nflags |= NACRE_RENAME_NOREPLACE;
	if (flags & RENAME_EXCHANGE)
		nflags |= NACRE_RENAME_EXCHANGE;
	/* RENAME_WHITEOUT belongs to overlay filesystems. */
	if (flags & ~(unsigned int)(RENAME_NOREPLACE | RENAME_EXCHANGE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	mnt_ino_to_fid(parent, &pfid);
	mnt_ino_to_fid(newparent, &npfid);
	mnt_cred_get(req, &cred);
	rc = nacre_rename_at(ctx->mc_fs, &cred, &pfid, name, &npfid, newname,
			     nflags);
	mnt_reply_status(req, "rename", parent, rc);
}

static void mnt_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
			const char *newname)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_fid fid, npfid;
	struct nacre_cred cred;
	struct nacre_stat ns;
	int rc;

	mnt_ino_to_fid(ino, &fid);
	mnt_ino_to_fid(newparent, &npfid);
	mnt_cred_get(req, &cred);
	rc = nacre_link_at(ctx->mc_fs, &cred, &fid, &npfid, newname, &ns);
	mnt_reply_entry(req, "link", ino, rc, &ns);
}

/* ---- Files ---- */

/* The open(2) flags libnacre takes; the rest (O_LARGEFILE, O_NOATIME, ...)
 * mean nothing to it, and O_SYNC is done here by fsync after each write. */
static int mnt_open_flags(int flags)
{
	return flags & (O_ACCMODE | O_TRUNC | O_APPEND);
}

/* Sends the open reply; when the open was interrupted meanwhile, the kernel
 * will never release the handle, so close it now. */
static void mnt_reply_open(fuse_req_t req, struct fuse_file_info *fi,
			   const struct fuse_entry_param *e)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	int rc;

	if (e) {
		rc = fuse_reply_create(req, e, fi);
		if (rc == 0)
			mnt_told_record(ctx, &e->attr);
	} else {
		rc = fuse_reply_open(req, fi);
	}
	if (rc == -ENOENT)
		mnt_file_close(ctx, mnt_file_of(fi));
}

/* True when @st matches what the file looked like at its last open here
 * (then the kernel's cached pages are still right); records @st. */
static bool mnt_cache_still_valid(struct mnt_ctx *ctx, fuse_ino_t ino,
				  const struct nacre_stat *st)
{
	bool valid;

	pthread_mutex_lock(&ctx->mc_lock);
	valid = mnt_ino_opened(&ctx->mc_inos, ino, st->size, &st->mtime, &st->ctime);
	pthread_mutex_unlock(&ctx->mc_lock);
	return valid;
}

/* Forgets the validator of @ino: this mount is changing the file. */
static void mnt_cache_forget(struct mnt_ctx *ctx, fuse_ino_t ino)
{
	pthread_mutex_lock(&ctx->mc_lock);
	mnt_ino_opened_drop(&ctx->mc_inos, ino);
	pthread_mutex_unlock(&ctx->mc_lock);
}

static void mnt_op_open(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_intent *in;
	struct nacre_file *nf;
	struct nacre_cred cred;
	struct nacre_stat st;
	struct mnt_file *mf;
	struct nacre_fid fid;
	int rc;

	mnt_ino_to_fid(ino, &fid);
	in = mnt_intent_take(ctx, req, ino);
	if (in && (fi->flags & (O_ACCMODE | O_TRUNC)) == O_RDONLY) {
		rc = nacre_open_intent(ctx->mc_fs, in, mnt_open_flags(fi->flags), &nf);
	} else {
		nacre_intent_free(in);
		mnt_cred_get(req, &cred);
		rc = nacre_open_fid(ctx->mc_fs, &cred, &fid, mnt_open_flags(fi->flags),
				    &nf);
	}
	if (rc == -ENOENT)
		rc = -ESTALE; /* as in getattr: the kernel looks the name up again */
	if (rc < 0)
		goto out_err;
	rc = mnt_file_new(ctx, nf, ino, fi->flags, &mf);
	if (rc < 0)
		goto out_err;
	if (fi->flags & O_TRUNC)
		mnt_file_clip(ctx, ino, 0);
	fi->fh = (uintptr_t)mf;
	/* Close-to-open: the kernel's pages of this file are kept only when the
	 * MDS shows it unchanged (size, mtime, ctime) since its last open here;
	 * a file opened for writing starts from the OSTs. */
	nacre_file_open_stat(nf, &st);
	if ((fi->flags & O_ACCMODE) == O_RDONLY && !(fi->flags & O_TRUNC))
		fi->keep_cache = mnt_cache_still_valid(ctx, ino, &st);
	else {
		mnt_cache_forget(ctx, ino);
		fi->keep_cache = 0;
	}
	/* Close-to-open: the kernel may hold attributes (the size above all)
	 * from before another client changed the file; have it fetch them
	 * again, unless the last ones replied (by the lookup of this very
	 * open, most often) are the MDS's now: a GETATTR round trip saved
	 * per small file read.  Attributes only (offset < 0): no page locks
	 * are taken, so this is safe inside the open request. */
	if (!fi->keep_cache && ctx->mc_se && !mnt_told_same(ctx, ino, &st))
		fuse_lowlevel_notify_inval_inode(ctx->mc_se, ino, -1, 0);
	fi->direct_io = 0;
	/* A read-only handle has nothing for close(2) to push: no FLUSH
	 * round trip per file read (a dataset of small files is mostly
	 * opens and closes). */
	if ((fi->flags & O_ACCMODE) == O_RDONLY)
		fi->noflush = 1;
	mnt_reply_open(req, fi, NULL);
	return;

out_err:
	mnt_reply_status(req, "open", ino, rc);
}

static void mnt_op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
			  mode_t mode, struct fuse_file_info *fi)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct fuse_entry_param e;
	struct nacre_file *nf;
	struct nacre_cred cred;
	struct nacre_fid pfid;
	struct nacre_stat ns;
	struct mnt_file *mf;
	int rc;

	mnt_ino_to_fid(parent, &pfid);
	mnt_cred_get(req, &cred);
	rc = nacre_create_at(ctx->mc_fs, &cred, &pfid, name, mode,
			     mnt_open_flags(fi->flags) | (fi->flags & O_EXCL),
			     &nf, &ns);
	if (rc < 0)
		goto out_err;
	rc = mnt_entry_fill(ctx, &ns, &e);
	if (rc < 0) {
		nacre_close(nf);
		goto out_err;
	}
	rc = mnt_file_new(ctx, nf, e.ino, fi->flags, &mf);
	if (rc < 0)
		goto out_err;
	fi->fh = (uintptr_t)mf;
	fi->keep_cache = 0;
	fi->direct_io = 0;
	mnt_reply_open(req, fi, &e);
	return;

out_err:
	mnt_reply_status(req, "create", parent, rc);
}

/* A read nacre_pread_start() took: answered where its bytes come in. */
struct mnt_read {
	struct mnt_ctx *r_ctx;
	fuse_req_t r_req;
	fuse_ino_t r_ino;
	char r_buf[];
};

static void mnt_read_done(ssize_t n, void *arg)
{
	struct mnt_read *r = arg;
	struct mnt_ctx *ctx = r->r_ctx;

	if (n < 0)
		mnt_reply_status(r->r_req, "read", r->r_ino, (int)n);
	else
		fuse_reply_buf(r->r_req, r->r_buf, (size_t)n);
	free(r);
	mnt_async_add(ctx, -1);
}

static void mnt_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	struct mnt_file *mf = mnt_file_of(fi);
	struct mnt_read *r;
	size_t done = 0;
	char *buf;

	if (size > MNT_IO_MAX)
		size = MNT_IO_MAX;
	r = malloc(sizeof(*r) + (size ? size : 1));
	if (!r) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	r->r_ctx = mnt_req_ctx(req);
	r->r_req = req;
	r->r_ino = ino;
	/* A packed file's read (one OST request) is answered by the thread
	 * that receives its bytes; this one goes back to the kernel's
	 * queue.  A short read there is the end of the file. */
	mnt_async_add(r->r_ctx, 1);
	if (nacre_pread_start(mf->mf_file, r->r_buf, size, off, mnt_read_done, r) == 0)
		return;
	mnt_async_add(r->r_ctx, -1);
	buf = r->r_buf;
	/* Without direct_io the kernel takes a short read for end of file,
	 * so keep reading until the request is full or the file ends. */
	while (done < size) {
		ssize_t n = nacre_pread(mf->mf_file, buf + done, size - done,
					off + (off_t)done);

		if (n < 0) {
			free(r);
			mnt_reply_status(req, "read", ino, (int)n);
			return;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	fuse_reply_buf(req, buf, done);
	free(r);
}

static void mnt_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
			 size_t size, off_t off, struct fuse_file_info *fi)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct mnt_file *mf = mnt_file_of(fi);
	ssize_t n;
	int rc;

	n = nacre_pwrite(mf->mf_file, buf, size, off);
	mnt_intent_changed(ctx, ino);
	if (n < 0) {
		mnt_reply_status(req, "write", ino, (int)n);
		return;
	}
	/* For O_APPEND, libnacre writes at its end of file; the kernel's
	 * offset is its own idea of that end, close enough for a hint. */
	mnt_file_wrote(ctx, mf, (uint64_t)off + (uint64_t)n);
	if (mf->mf_sync) {
		rc = nacre_fsync(mf->mf_file);
		if (rc < 0) {
			mnt_reply_status(req, "write", ino, rc);
			return;
		}
	}
	fuse_reply_write(req, (size_t)n);
}

static void mnt_op_flush(fuse_req_t req, fuse_ino_t ino,
			 struct fuse_file_info *fi)
{
	struct mnt_file *mf = mnt_file_of(fi);
	int rc;

	/* close(2): what libnacre gathered for whole-row writes goes out and
	 * size and mtime reach the MDS now, not at the (asynchronous) release,
	 * so another client's next open sees the data and a utimes() right
	 * after close is not undone. */
	rc = nacre_flush(mf->mf_file);
	if (mf->mf_writable)
		mnt_intent_changed(mnt_req_ctx(req), ino);
	if (rc < 0)
		mnt_log(MNT_LOG_ERROR, "flush ino %lu: %s", (unsigned long)ino, nacre_strerror(rc));
	fuse_reply_err(req, rc < 0 ? mnt_errno(rc) : 0);
}

static void mnt_op_release(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	bool writable = mnt_file_of(fi)->mf_writable;
	int rc = mnt_file_close(ctx, mnt_file_of(fi));

	/* Size and mtime reached the MDS with the close. */
	if (writable)
		mnt_intent_changed(ctx, ino);
	/* The kernel ignores release errors: the log is the only trace. */
	if (rc < 0)
		mnt_log(MNT_LOG_ERROR, "close ino %lu: %s", (unsigned long)ino,
			nacre_strerror(rc));
	fuse_reply_err(req, 0);
}

static void mnt_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
			 struct fuse_file_info *fi)
{
	mnt_reply_status(req, "fsync", ino,
			 nacre_fsync(mnt_file_of(fi)->mf_file));
}

/* ---- Directories ---- */

static void mnt_op_opendir(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	/* readdir offsets carry the MDS cookie, so a directory handle needs
	 * no state; the kernel has checked the permission already. */
	fi->fh = 0;
	fi->cache_readdir = 0;
	fuse_reply_open(req, fi);
}

/* Adds one entry; false when the buffer is full (the kernel calls again). */
static bool mnt_dir_add(fuse_req_t req, char *buf, size_t size, size_t *used,
			const char *name, fuse_ino_t ino, mode_t type,
			off_t next)
{
	struct stat st;
	size_t len;

	memset(&st, 0, sizeof(st));
	st.st_ino = ino;
	st.st_mode = type & S_IFMT;
	len = fuse_add_direntry(req, buf + *used, size - *used, name, &st, next);
	if (len > size - *used)
		return false;
	*used += len;
	return true;
}

/* Fills @buf with the MDS entries after @cookie; 0 or a libnacre error. */
static int mnt_dir_fill(fuse_req_t req, fuse_ino_t ino, uint64_t cookie,
			char *buf, size_t size, size_t *used)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_dirent *ents;
	struct nacre_cred cred;
	struct nacre_fid fid;
	bool eof = false;
	int rc = 0;

	ents = calloc(MNT_READDIR_BATCH, sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	mnt_ino_to_fid(ino, &fid);
	mnt_cred_get(req, &cred);
	while (!eof) {
		int n = nacre_readdir_fid(ctx->mc_fs, &cred, &fid, cookie,
					  ents, MNT_READDIR_BATCH, &eof);

		if (n < 0) {
			rc = n;
			goto out_free_ents;
		}
		if (n == 0)
			break;
		for (int i = 0; i < n; i++) {
			fuse_ino_t child = mnt_fid_to_ino(&ents[i].fid);

			if (!child || ents[i].cookie > (uint64_t)INT64_MAX -
							       MNT_DIR_OFF_DOTDOT) {
				rc = -EOVERFLOW;
				goto out_free_ents;
			}
			if (!mnt_dir_add(req, buf, size, used, ents[i].name,
					 child, ents[i].type,
					 (off_t)(ents[i].cookie +
						 MNT_DIR_OFF_DOTDOT)))
				goto out_free_ents;
			cookie = ents[i].cookie;
		}
	}
out_free_ents:
	free(ents);
	return rc;
}

static void mnt_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	size_t used = 0;
	char *buf;
	int rc = 0;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* ".." carries the directory's own inode number: the kernel resolves
	 * ".." itself and ignores inode numbers of readdir entries. */
	if (off < MNT_DIR_OFF_DOT &&
	    !mnt_dir_add(req, buf, size, &used, ".", ino, S_IFDIR,
			 MNT_DIR_OFF_DOT))
		goto out_reply;
	if (off < MNT_DIR_OFF_DOTDOT &&
	    !mnt_dir_add(req, buf, size, &used, "..", ino, S_IFDIR,
			 MNT_DIR_OFF_DOTDOT))
		goto out_reply;
	rc = mnt_dir_fill(req, ino,
			  off > MNT_DIR_OFF_DOTDOT ?
				  (uint64_t)(off - MNT_DIR_OFF_DOTDOT) : 0,
			  buf, size, &used);
	/* Entries already in the buffer are worth more than the error: the
	 * kernel asks again from the last one and gets the error then. */
	if (rc < 0 && used == 0) {
		free(buf);
		mnt_reply_status(req, "readdir", ino, rc);
		return;
	}
out_reply:
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void mnt_op_releasedir(fuse_req_t req, fuse_ino_t ino,
			      struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void mnt_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			    struct fuse_file_info *fi)
{
	/* The MDS commits every namespace change durably before it replies. */
	fuse_reply_err(req, 0);
}

static void mnt_op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_statfs ns;
	struct statvfs sv;
	int rc;

	rc = nacre_statfs(ctx->mc_fs, &ns);
	if (rc < 0) {
		mnt_reply_status(req, "statfs", ino, rc);
		return;
	}
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = MNT_STATFS_BSIZE;
	sv.f_frsize = MNT_STATFS_BSIZE;
	sv.f_blocks = ns.total / MNT_STATFS_BSIZE;
	sv.f_bfree = ns.free / MNT_STATFS_BSIZE;
	sv.f_bavail = ns.avail / MNT_STATFS_BSIZE;
	sv.f_files = ns.files;
	sv.f_ffree = ns.ffree;
	sv.f_favail = ns.ffree;
	sv.f_namemax = ns.namemax ? ns.namemax : NACRE_NAME_MAX;
	fuse_reply_statfs(req, &sv);
}

/* ---- Extended attributes ---- */

static bool mnt_xattr_is_foreign(const char *name)
{
	/* The kernel asks security.capability before every write, and ACLs
	 * live under system.: answer those here, with no RPC. */
	return !strncmp(name, "security.", 9) || !strncmp(name, "system.", 7);
}

/* The value of a virtual attribute in @buf (NUL-terminated); its length,
 * or -1 when @name is not one. */
static int mnt_vxattr_get(struct mnt_ctx *ctx, fuse_ino_t ino,
			  const char *name, char *buf, size_t size)
{
	struct nacre_fid fid;
	int n;

	if (!strcmp(name, "nacre.mds")) {
		n = snprintf(buf, size, "%s", nacre_fs_mds_addr(ctx->mc_fs));
	} else if (!strcmp(name, "nacre.fsname")) {
		n = snprintf(buf, size, "%s", nacre_fs_name(ctx->mc_fs));
	} else if (!strcmp(name, "nacre.fid")) {
		mnt_ino_to_fid(ino, &fid);
		nacre_fid_format(&fid, buf);
		n = (int)strlen(buf);
	} else {
		return -1;
	}
	return n;
}

static bool mnt_xattr_is_virtual(const char *name)
{
	return !strcmp(name, "nacre.mds") || !strcmp(name, "nacre.fsname") ||
	       !strcmp(name, "nacre.fid") || !strcmp(name, "nacre.stats");
}

/* Replies an xattr value or list of @len bytes in @buf for a request of
 * @size bytes (0: only the length). */
static void mnt_reply_xattr(fuse_req_t req, const char *op, fuse_ino_t ino,
			    int len, const char *buf, size_t size)
{
	if (len < 0) {
		mnt_reply_status(req, op, ino, len);
		return;
	}
	if (size == 0)
		fuse_reply_xattr(req, (size_t)len);
	else if ((size_t)len > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, buf, (size_t)len);
}

/* "nacre.stats" of the root: the client counters, as text. */
static void mnt_getxattr_stats(fuse_req_t req, struct mnt_ctx *ctx, fuse_ino_t ino,
			       size_t size)
{
	char *text;
	size_t len;
	int rc;

	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	rc = mnt_stats_text(ctx, &text, &len);
	if (rc) {
		mnt_reply_status(req, "getxattr", ino, rc);
		return;
	}
	mnt_reply_xattr(req, "getxattr", ino, len > MNT_XATTR_MAX ? -E2BIG : (int)len, text,
			size);
	free(text);
}

static void mnt_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			    size_t size)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	char vbuf[NACRE_ADDR_MAX + NACRE_FSNAME_MAX + 64];
	struct nacre_cred cred;
	struct nacre_fid fid;
	char *buf = NULL;
	int len;

	len = mnt_vxattr_get(ctx, ino, name, vbuf, sizeof(vbuf));
	if (len >= 0) {
		mnt_reply_xattr(req, "getxattr", ino, len, vbuf, size);
		return;
	}
	if (!strcmp(name, "nacre.stats")) {
		mnt_getxattr_stats(req, ctx, ino, size);
		return;
	}
	if (mnt_xattr_is_foreign(name)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	if (size > MNT_XATTR_MAX)
		size = MNT_XATTR_MAX;
	if (size) {
		buf = malloc(size);
		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	mnt_ino_to_fid(ino, &fid);
	mnt_cred_get(req, &cred);
	len = nacre_getxattr_fid(ctx->mc_fs, &cred, &fid, name, buf, size);
	mnt_reply_xattr(req, "getxattr", ino, len, buf, size);
	free(buf);
}

static void mnt_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_cred cred;
	struct nacre_fid fid;
	char *buf = NULL;
	int len;

	if (size > MNT_XATTR_MAX)
		size = MNT_XATTR_MAX;
	if (size) {
		buf = malloc(size);
		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	mnt_ino_to_fid(ino, &fid);
	mnt_cred_get(req, &cred);
	len = nacre_listxattr_fid(ctx->mc_fs, &cred, &fid, buf, size);
	mnt_reply_xattr(req, "listxattr", ino, len, buf, size);
	free(buf);
}

/* Our virtual names are read-only and security./system. ones are not
 * kept: refuses (and replies) for those, before any request. */
static bool mnt_xattr_write_refused(fuse_req_t req, const char *name)
{
	if (mnt_xattr_is_virtual(name)) {
		fuse_reply_err(req, EPERM);
		return true;
	}
	if (mnt_xattr_is_foreign(name)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return true;
	}
	return false;
}

static void mnt_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			    const char *value, size_t size, int flags)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_cred cred;
	struct nacre_fid fid;
	int rc;

	if (mnt_xattr_write_refused(req, name))
		return;
	mnt_ino_to_fid(ino, &fid);
	mnt_cred_get(req, &cred);
	rc = nacre_setxattr_fid(ctx->mc_fs, &cred, &fid, name, value, size,
				flags);
	mnt_reply_status(req, "setxattr", ino, rc);
}

static void mnt_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct mnt_ctx *ctx = mnt_req_ctx(req);
	struct nacre_cred cred;
	struct nacre_fid fid;
	int rc;

	if (mnt_xattr_write_refused(req, name))
		return;
	mnt_ino_to_fid(ino, &fid);
	mnt_cred_get(req, &cred);
	rc = nacre_removexattr_fid(ctx->mc_fs, &cred, &fid, name);
	mnt_reply_status(req, "removexattr", ino, rc);
}

static void mnt_op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	/* default_permissions: the kernel has checked already, and the MDS
	 * checks every operation again with the caller's credentials. */
	fuse_reply_err(req, 0);
}

const struct fuse_lowlevel_ops mnt_ll_ops = {
	.init = mnt_op_init,
	.destroy = mnt_op_destroy,
	.lookup = mnt_op_lookup,
	.forget = mnt_op_forget,
	.getattr = mnt_op_getattr,
	.setattr = mnt_op_setattr,
	.readlink = mnt_op_readlink,
	.mknod = mnt_op_mknod,
	.mkdir = mnt_op_mkdir,
	.unlink = mnt_op_unlink,
	.rmdir = mnt_op_rmdir,
	.symlink = mnt_op_symlink,
	.rename = mnt_op_rename,
	.link = mnt_op_link,
	.open = mnt_op_open,
	.read = mnt_op_read,
	.write = mnt_op_write,
	.flush = mnt_op_flush,
	.release = mnt_op_release,
	.fsync = mnt_op_fsync,
	.opendir = mnt_op_opendir,
	.readdir = mnt_op_readdir,
	.releasedir = mnt_op_releasedir,
	.fsyncdir = mnt_op_fsyncdir,
	.statfs = mnt_op_statfs,
	.setxattr = mnt_op_setxattr,
	.getxattr = mnt_op_getxattr,
	.listxattr = mnt_op_listxattr,
	.removexattr = mnt_op_removexattr,
	.access = mnt_op_access,
	.create = mnt_op_create,
};
