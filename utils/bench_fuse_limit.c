/* SPDX-License-Identifier: MIT */
/*
 * nacre-bench's FUSE limit: an empty FUSE filesystem served from memory
 * on libfuse's low-level interface by a process of its own, as the mount
 * is by mount.nacre (threads of the bench's own process would switch to
 * each other more cheaply than to another process).  It holds nothing but
 * the run's files, their bytes made from the bench pattern as they are
 * read: the small files of every size in "small", and the files of every
 * sequential configuration at the root.  The readers that read the mount
 * read it the same way (the same calls, requests and order), so what it
 * gives is what the kernel's FUSE path and a server that does no work
 * allow on this machine: the mount's own limit, as the loopback TCP run
 * is the network's.
 *
 * Inodes: 1 the root, 2 the directory "small", then one per small file,
 * each size's numbered apart, then one per sequential file.  Files are
 * opened without keep_cache, as the mount opens a file it has not read
 * before, so every open of a run reads through the server; read-only
 * handles need no FLUSH.  The kernel's readahead window and the largest
 * request are the mount's (the readahead's sysfs value is copied), so
 * that a file takes as many READ requests on both.
 *
 * The server is forked before the bench starts any thread and mounts on a
 * new directory under $TMPDIR (else /tmp); it ends when the bench sends
 * SIGTERM, or dies (PR_SET_PDEATHSIG), and unmounts.
 */
#include "config.h"

#define FUSE_USE_VERSION 312

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define BFL_DIR_INO 2
#define BFL_FILE_INO0 3
#define BFL_TIMEOUT 10.0        /* entry and attribute cache, as the mount's default */
#define BFL_THREADS 16          /* as mount.nacre's default */
#define BFL_READ_MAX (1u << 20)
#define BFL_STOP_WAIT_MS 5000

/* The files of one small-file size: "small/PARAM-%07u", inodes from
 * sf_ino0 on. */
struct bfl_set {
	char sf_param[24];
	unsigned int sf_n;
	uint32_t *sf_size;
	uint32_t sf_id0;
	fuse_ino_t sf_ino0;
};

/* A file of the sequential workload, at the root. */
struct bfl_seq {
	char sq_name[64];
	uint32_t sq_id;
};

/* The server's state (in the child). */
struct bfl_srv {
	struct bfl_set fs_sets[BENCH_MAX_LIST];
	unsigned int fs_nsets;
	struct bfl_seq *fs_seq;         /* inodes from fs_seq_ino0 on */
	unsigned int fs_nseq, fs_seq_cap;
	fuse_ino_t fs_seq_ino0;
	uint64_t fs_seq_size;           /* bytes of each */
	bool fs_seq_nomem;
	unsigned long fs_ra_kb;         /* the mount's readahead window; 0: unknown */
};

/* The parent's handle. */
struct bench_fuse_limit {
	pid_t fl_pid;
	char fl_mnt[PATH_MAX];
};

static struct bfl_srv *bfl_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* The pattern id and size of file @ino; false where it is no file. */
static bool bfl_file(const struct bfl_srv *fs, fuse_ino_t ino, uint32_t *id, uint64_t *size)
{
	for (unsigned int k = 0; k < fs->fs_nsets; k++) {
		const struct bfl_set *sf = &fs->fs_sets[k];

		if (ino >= sf->sf_ino0 && ino - sf->sf_ino0 < sf->sf_n) {
			*id = sf->sf_id0 + (uint32_t)(ino - sf->sf_ino0);
			*size = sf->sf_size[ino - sf->sf_ino0];
			return true;
		}
	}
	if (ino >= fs->fs_seq_ino0 && ino - fs->fs_seq_ino0 < fs->fs_nseq) {
		*id = fs->fs_seq[ino - fs->fs_seq_ino0].sq_id;
		*size = fs->fs_seq_size;
		return true;
	}
	return false;
}

static bool bfl_stat(const struct bfl_srv *fs, fuse_ino_t ino, struct stat *st)
{
	uint64_t size;
	uint32_t id;

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (ino == FUSE_ROOT_ID || ino == BFL_DIR_INO) {
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
		return true;
	}
	if (!bfl_file(fs, ino, &id, &size))
		return false;
	st->st_mode = S_IFREG | 0444;
	st->st_nlink = 1;
	st->st_size = (off_t)size;
	st->st_blocks = (st->st_size + 511) / 512;
	return true;
}

static void bfl_init(void *userdata, struct fuse_conn_info *conn)
{
	struct bfl_srv *fs = userdata;
	unsigned long ra = fs->fs_ra_kb * 1024;

	if (ra > UINT32_MAX)
		ra = UINT32_MAX;
	if (conn->max_readahead < ra)
		conn->max_readahead = (unsigned int)ra;
	/* As mount.nacre's: it also lets a READ carry 1 MiB. */
	conn->max_write = BFL_READ_MAX;
	conn->want |= conn->capable & FUSE_CAP_ASYNC_READ;
}

/* The inode of "PARAM-NNNNNNN" in "small"; 0 where there is none. */
static fuse_ino_t bfl_name(const struct bfl_srv *fs, const char *name)
{
	for (unsigned int k = 0; k < fs->fs_nsets; k++) {
		const struct bfl_set *sf = &fs->fs_sets[k];
		size_t plen = strlen(sf->sf_param);
		unsigned int i;
		char tail;

		if (strncmp(name, sf->sf_param, plen) == 0 && name[plen] == '-' &&
		    sscanf(name + plen + 1, "%7u%c", &i, &tail) == 1 && i < sf->sf_n)
			return sf->sf_ino0 + i;
	}
	return 0;
}

static void bfl_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct bfl_srv *fs = bfl_of(req);
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	if (parent == FUSE_ROOT_ID && strcmp(name, "small") == 0)
		e.ino = BFL_DIR_INO;
	else if (parent == BFL_DIR_INO)
		e.ino = bfl_name(fs, name);
	else if (parent == FUSE_ROOT_ID)
		for (unsigned int i = 0; i < fs->fs_nseq && !e.ino; i++)
			if (strcmp(name, fs->fs_seq[i].sq_name) == 0)
				e.ino = fs->fs_seq_ino0 + i;
	if (e.ino == 0 || !bfl_stat(fs, e.ino, &e.attr)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.attr_timeout = BFL_TIMEOUT;
	e.entry_timeout = BFL_TIMEOUT;
	fuse_reply_entry(req, &e);
}

static void bfl_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (!bfl_stat(bfl_of(req), ino, &st)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fuse_reply_attr(req, &st, BFL_TIMEOUT);
}

static void bfl_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	uint64_t size;
	uint32_t id;

	if (!bfl_file(bfl_of(req), ino, &id, &size)) {
		fuse_reply_err(req, ino == FUSE_ROOT_ID || ino == BFL_DIR_INO ? EISDIR : ENOENT);
		return;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	fi->keep_cache = 0;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

static void bfl_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	uint64_t fsize;
	size_t head;
	uint32_t id;
	char *buf;

	(void)fi;
	if (!bfl_file(bfl_of(req), ino, &id, &fsize)) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	if (off < 0 || (uint64_t)off >= fsize) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > BFL_READ_MAX)
		size = BFL_READ_MAX;
	if ((uint64_t)off + size > fsize)
		size = fsize - (uint64_t)off;
	/* A buffer per request, as mount.nacre's read takes one. */
	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* Whole words, then the tail: the pattern goes byte by byte on
	 * anything unaligned. */
	head = size & ~(size_t)7;
	bench_pattern_fill(buf, head, id, (uint64_t)off);
	if (head < size)
		bench_pattern_fill(buf + head, size - head, id, (uint64_t)off + head);
	fuse_reply_buf(req, buf, size);
	free(buf);
}

static void bfl_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops bfl_ops = {
	.init = bfl_init,
	.lookup = bfl_lookup,
	.getattr = bfl_getattr,
	.open = bfl_open,
	.read = bfl_read,
	.release = bfl_release,
};

/* The sysfs readahead file of the filesystem holding @path. */
static void bfl_ra_path(const char *path, char *buf, size_t len)
{
	struct stat st;

	buf[0] = '\0';
	if (stat(path, &st) == 0)
		snprintf(buf, len, "/sys/class/bdi/%u:%u/read_ahead_kb", major(st.st_dev),
			 minor(st.st_dev));
}

static unsigned long bfl_ra_get(const char *path)
{
	char file[96];
	unsigned long kb = 0;
	FILE *f;

	bfl_ra_path(path, file, sizeof(file));
	f = file[0] ? fopen(file, "re") : NULL;
	if (!f)
		return 0;
	if (fscanf(f, "%lu", &kb) != 1)
		kb = 0;
	fclose(f);
	return kb;
}

/* Called by the bench once the server runs: the stat of the mount point
 * is a request to it. */
static void bfl_ra_set(const char *path, unsigned long kb)
{
	char file[96];
	bool bad;
	FILE *f;

	bfl_ra_path(path, file, sizeof(file));
	f = file[0] && kb ? fopen(file, "we") : NULL;
	if (!f)
		return;
	bad = fprintf(f, "%lu\n", kb) < 0;
	if (fclose(f) != 0 || bad)
		bench_note("fuse limit: could not set %s", file);
}

static void bfl_seq_add(void *arg, const char *name, uint32_t id)
{
	struct bfl_srv *fs = arg;

	if (fs->fs_nseq == fs->fs_seq_cap) {
		unsigned int cap = fs->fs_seq_cap ? 2 * fs->fs_seq_cap : 64;
		struct bfl_seq *v = realloc(fs->fs_seq, cap * sizeof(*v));

		if (!v) {
			fs->fs_seq_nomem = true;
			return;
		}
		fs->fs_seq = v;
		fs->fs_seq_cap = cap;
	}
	snprintf(fs->fs_seq[fs->fs_nseq].sq_name, sizeof(fs->fs_seq[0].sq_name), "%s", name);
	fs->fs_seq[fs->fs_nseq++].sq_id = id;
}

/* The child: builds the files, mounts, says so on @ready, serves until
 * SIGTERM. */
static int bfl_serve(const struct bench_cfg *cfg, const char *mnt, unsigned long ra_kb,
		     int ready)
{
	char *argv[] = { "nacre-bench", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(1, argv);
	struct fuse_loop_config *lc;
	struct fuse_session *se;
	struct bfl_srv fs;
	fuse_ino_t ino = BFL_FILE_INO0;
	int rc;

	memset(&fs, 0, sizeof(fs));
	fs.fs_ra_kb = ra_kb;
	for (unsigned int k = 0; (cfg->bc_only & BENCH_W_SMALL) && k < cfg->bc_nsmall; k++) {
		struct bfl_set *sf = &fs.fs_sets[fs.fs_nsets++];

		bench_small_name(cfg->bc_small_sizes[k], sf->sf_param, sizeof(sf->sf_param));
		rc = bench_small_sizes(cfg, k, &sf->sf_size, &sf->sf_id0);
		if (rc < 0)
			return 1;
		sf->sf_n = cfg->bc_small_files;
		sf->sf_ino0 = ino;
		ino += sf->sf_n;
	}
	if (cfg->bc_only & BENCH_W_SEQ)
		bench_seq_files(cfg, bfl_seq_add, &fs);
	if (fs.fs_seq_nomem)
		return 1;
	fs.fs_seq_ino0 = ino;
	fs.fs_seq_size = cfg->bc_size;
	se = fuse_session_new(&args, &bfl_ops, sizeof(bfl_ops), &fs);
	if (!se)
		return 1;
	if (fuse_set_signal_handlers(se) != 0 || fuse_session_mount(se, mnt) != 0)
		return 1;
	lc = fuse_loop_cfg_create();
	if (!lc)
		return 1;
	fuse_loop_cfg_set_clone_fd(lc, 0);
	fuse_loop_cfg_set_max_threads(lc, BFL_THREADS);
	if (write(ready, "1", 1) != 1)
		return 1;
	close(ready);
	rc = fuse_session_loop_mt(se, lc);
	fuse_loop_cfg_destroy(lc);
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	/* The bench removes it too, unless it died. */
	rmdir(mnt);
	return rc < 0 ? 1 : 0;
}

int bench_fuse_limit_start(const struct bench_cfg *cfg, struct bench_fuse_limit **out,
			   struct bench_target *t)
{
	struct bench_fuse_limit *fl;
	unsigned long ra_kb = bfl_ra_get(cfg->bc_mount);
	const char *tmp = getenv("TMPDIR");
	pid_t parent = getpid();
	int p[2], rc, status;
	char c;

	*out = NULL;
	fl = calloc(1, sizeof(*fl));
	if (!fl)
		return -ENOMEM;
	if (!tmp || !tmp[0])
		tmp = "/tmp";
	snprintf(fl->fl_mnt, sizeof(fl->fl_mnt), "%s/nacre-bench-fuse.XXXXXX", tmp);
	if (!mkdtemp(fl->fl_mnt)) {
		rc = -errno;
		free(fl);
		return rc;
	}
	rc = bench_target_init_posix(t, BENCH_FUSE_LIMIT, fl->fl_mnt);
	if (rc < 0)
		goto fail;
	if (pipe2(p, O_CLOEXEC) != 0) {
		rc = -errno;
		goto fail;
	}
	fflush(NULL);
	fl->fl_pid = fork();
	if (fl->fl_pid < 0) {
		rc = -errno;
		close(p[0]);
		close(p[1]);
		goto fail;
	}
	if (fl->fl_pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		close(p[0]);
		/* Only the bench writes its report: the output may be a pipe
		 * its reader reads to the end.  Errors still go to stderr. */
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
		}
		/* Not stopped by the terminal's ^C with the bench, which stops
		 * it in order; gone with the bench if the bench dies. */
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		_exit(bfl_serve(cfg, fl->fl_mnt, ra_kb, p[1]));
	}
	close(p[1]);
	rc = read(p[0], &c, 1) == 1 ? 0 : -EIO;
	close(p[0]);
	if (rc < 0) {
		/* libfuse said why on stderr. */
		waitpid(fl->fl_pid, &status, 0);
		fl->fl_pid = 0;
		goto fail;
	}
	bfl_ra_set(fl->fl_mnt, ra_kb);
	*out = fl;
	return 0;
fail:
	rmdir(fl->fl_mnt);
	free(fl);
	return rc;
}

void bench_fuse_limit_stop(struct bench_fuse_limit *fl)
{
	int status;

	if (!fl)
		return;
	kill(fl->fl_pid, SIGTERM);
	for (int ms = 0; waitpid(fl->fl_pid, &status, WNOHANG) == 0; ms += 10) {
		if (ms >= BFL_STOP_WAIT_MS) {
			bench_note("fuse limit: server %ld did not stop; killed",
				   (long)fl->fl_pid);
			kill(fl->fl_pid, SIGKILL);
			waitpid(fl->fl_pid, &status, 0);
			umount2(fl->fl_mnt, MNT_DETACH);
			break;
		}
		usleep(10000);
	}
	rmdir(fl->fl_mnt);
	free(fl);
}
