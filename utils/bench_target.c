/* SPDX-License-Identifier: MIT */
/*
 * nacre-bench targets: one ops table over libnacre and one over POSIX calls
 * (for the FUSE mount and the local directory), so that every workload runs
 * the same code on each.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

/* ---- libnacre ---- */

static int bt_nacre_path(const struct bench_target *t, const char *name,
			 char *buf, size_t size)
{
	int n;

	if (name[0] == '\0')
		n = snprintf(buf, size, "%s", t->bt_dir);
	else
		n = snprintf(buf, size, "%s/%s", t->bt_dir, name);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* The path of a call that starts work (mkdir, open, stat): -EINTR once a
 * signal stopped the run, so that the workload ends and removes its files
 * (unlink and rmdir keep working). */
static int bt_work_path(const struct bench_target *t, const char *name,
			char *buf, size_t size)
{
	if (bench_stop_signal())
		return -EINTR;
	return bt_nacre_path(t, name, buf, size);
}

static int bt_nacre_mkdir(struct bench_target *t, const char *name)
{
	char path[PATH_MAX];
	int rc;

	rc = bt_work_path(t, name, path, sizeof(path));
	if (rc < 0)
		return rc;
	return nacre_mkdir(t->bt_fs, path, 0755);
}

static int bt_nacre_rmdir(struct bench_target *t, const char *name)
{
	char path[PATH_MAX];
	int rc;

	rc = bt_nacre_path(t, name, path, sizeof(path));
	if (rc < 0)
		return rc;
	return nacre_rmdir(t->bt_fs, path);
}

static int bt_nacre_open(struct bench_target *t, const char *name, int flags,
			 struct bench_fh *fh)
{
	char path[PATH_MAX];
	int rc;

	rc = bt_work_path(t, name, path, sizeof(path));
	if (rc < 0)
		return rc;
	/* libnacre keeps no page cache: O_DIRECT means nothing to it. */
	fh->bf_fd = -1;
	return nacre_open(t->bt_fs, path, flags & ~O_DIRECT, 0644, &fh->bf_nf);
}

static ssize_t bt_nacre_pread(struct bench_fh *fh, void *buf, size_t len,
			      off_t off)
{
	if (bench_stop_signal())
		return -EINTR;
	return nacre_pread(fh->bf_nf, buf, len, off);
}

static ssize_t bt_nacre_pwrite(struct bench_fh *fh, const void *buf,
			       size_t len, off_t off)
{
	if (bench_stop_signal())
		return -EINTR;
	return nacre_pwrite(fh->bf_nf, buf, len, off);
}

static int bt_nacre_fsync(struct bench_fh *fh)
{
	return nacre_fsync(fh->bf_nf);
}

static int bt_nacre_close(struct bench_fh *fh)
{
	int rc;

	rc = nacre_close(fh->bf_nf);
	fh->bf_nf = NULL;
	return rc;
}

static int bt_nacre_stat(struct bench_target *t, const char *name)
{
	char path[PATH_MAX];
	struct nacre_stat st;
	int rc;

	rc = bt_work_path(t, name, path, sizeof(path));
	if (rc < 0)
		return rc;
	return nacre_stat(t->bt_fs, path, &st);
}

static int bt_nacre_unlink(struct bench_target *t, const char *name)
{
	char path[PATH_MAX];
	int rc;

	rc = bt_nacre_path(t, name, path, sizeof(path));
	if (rc < 0)
		return rc;
	return nacre_unlink(t->bt_fs, path);
}

static const struct bench_ops bt_nacre_ops = {
	.bo_mkdir = bt_nacre_mkdir,
	.bo_rmdir = bt_nacre_rmdir,
	.bo_open = bt_nacre_open,
	.bo_pread = bt_nacre_pread,
	.bo_pwrite = bt_nacre_pwrite,
	.bo_fsync = bt_nacre_fsync,
	.bo_close = bt_nacre_close,
	.bo_stat = bt_nacre_stat,
	.bo_unlink = bt_nacre_unlink,
	.bo_strerror = nacre_strerror,
};

/* ---- POSIX (the FUSE mount and the local directory) ---- */

static int bt_posix_mkdir(struct bench_target *t, const char *name)
{
	char path[PATH_MAX];
	int rc;

	rc = bt_work_path(t, name, path, sizeof(path));
	if (rc < 0)
		return rc;
	return mkdir(path, 0755) < 0 ? -errno : 0;
}

static int bt_posix_rmdir(struct bench_target *t, const char *name)
{
	char path[PATH_MAX];
	int rc;

	rc = bt_nacre_path(t, name, path, sizeof(path));
	if (rc < 0)
		return rc;
	return rmdir(path) < 0 ? -errno : 0;
}

static int bt_posix_open(struct bench_target *t, const char *name, int flags,
			 struct bench_fh *fh)
{
	char path[PATH_MAX];
	int rc;

	rc = bt_work_path(t, name, path, sizeof(path));
	if (rc < 0)
		return rc;
	fh->bf_nf = NULL;
	fh->bf_fd = open(path, flags | O_CLOEXEC, 0644);
	return fh->bf_fd < 0 ? -errno : 0;
}

static ssize_t bt_posix_pread(struct bench_fh *fh, void *buf, size_t len,
			      off_t off)
{
	ssize_t n;

	if (bench_stop_signal())
		return -EINTR;
	do {
		n = pread(fh->bf_fd, buf, len, off);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static ssize_t bt_posix_pwrite(struct bench_fh *fh, const void *buf,
			       size_t len, off_t off)
{
	ssize_t n;

	if (bench_stop_signal())
		return -EINTR;
	do {
		n = pwrite(fh->bf_fd, buf, len, off);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static int bt_posix_fsync(struct bench_fh *fh)
{
	return fsync(fh->bf_fd) < 0 ? -errno : 0;
}

static int bt_posix_close(struct bench_fh *fh)
{
	int rc;

	rc = close(fh->bf_fd) < 0 ? -errno : 0;
	fh->bf_fd = -1;
	return rc;
}

static int bt_posix_stat(struct bench_target *t, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	int rc;

	rc = bt_work_path(t, name, path, sizeof(path));
	if (rc < 0)
		return rc;
	return stat(path, &st) < 0 ? -errno : 0;
}

static int bt_posix_unlink(struct bench_target *t, const char *name)
{
	char path[PATH_MAX];
	int rc;

	rc = bt_nacre_path(t, name, path, sizeof(path));
	if (rc < 0)
		return rc;
	return unlink(path) < 0 ? -errno : 0;
}

static const char *bt_posix_strerror(int err)
{
	return strerror(-err);
}

static const struct bench_ops bt_posix_ops = {
	.bo_mkdir = bt_posix_mkdir,
	.bo_rmdir = bt_posix_rmdir,
	.bo_open = bt_posix_open,
	.bo_pread = bt_posix_pread,
	.bo_pwrite = bt_posix_pwrite,
	.bo_fsync = bt_posix_fsync,
	.bo_close = bt_posix_close,
	.bo_stat = bt_posix_stat,
	.bo_unlink = bt_posix_unlink,
	.bo_strerror = bt_posix_strerror,
};

/* ---- setup ---- */

static int bt_set_dir(struct bench_target *t, const char *dir)
{
	int n;

	n = snprintf(t->bt_dir, sizeof(t->bt_dir), "%s/nacre-bench.%ld", dir,
		     (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(t->bt_dir))
		return -ENAMETOOLONG;
	return 0;
}

int bench_target_init_nacre(struct bench_target *t, struct nacre_fs *fs,
			    const char *dir)
{
	memset(t, 0, sizeof(*t));
	t->bt_kind = BENCH_LIBNACRE;
	t->bt_name = bench_kind_name(BENCH_LIBNACRE);
	t->bt_ops = &bt_nacre_ops;
	t->bt_fs = fs;
	/* The root is "/": avoid "//nacre-bench.PID". */
	return bt_set_dir(t, strcmp(dir, "/") == 0 ? "" : dir);
}

int bench_target_init_posix(struct bench_target *t, enum bench_kind kind,
			    const char *dir)
{
	int rc;

	memset(t, 0, sizeof(*t));
	t->bt_kind = kind;
	t->bt_name = bench_kind_name(kind);
	t->bt_ops = &bt_posix_ops;
	t->bt_has_page_cache = true;
	/* The FUSE limit's files lie at its root (bench_fuse_limit.c), not
	 * in a bench directory of ours. */
	if (kind == BENCH_FUSE_LIMIT)
		return snprintf(t->bt_dir, sizeof(t->bt_dir), "%s", dir) < (int)sizeof(t->bt_dir) ?
			       0 : -ENAMETOOLONG;
	rc = bt_set_dir(t, dir);
	if (rc < 0)
		return rc;
	/* The FUSE mount and libnacre see one namespace: keep them apart. */
	if (kind == BENCH_FUSE &&
	    strlen(t->bt_dir) + 5 < sizeof(t->bt_dir))
		strcat(t->bt_dir, ".fuse");
	return 0;
}

int bench_target_setup(struct bench_target *t)
{
	int rc;

	rc = t->bt_ops->bo_mkdir(t, "");
	if (rc < 0) {
		bench_target_err(t, "mkdir", "", rc);
		return rc;
	}
	t->bt_created = true;
	return 0;
}

void bench_target_fini(struct bench_target *t)
{
	int rc;

	if (!t->bt_created)
		return;
	rc = t->bt_ops->bo_rmdir(t, "");
	if (rc < 0)
		bench_target_err(t, "rmdir", "", rc);
	t->bt_created = false;
}

void bench_layout_text(const struct nacre_layout *lo, char *buf, size_t size)
{
	if (lo->m > 0)
		snprintf(buf, size, "EC %u+%u over %u objects, %u KiB chunks",
			 lo->k, lo->m, lo->stripe_count, lo->stripe_size >> 10);
	else
		snprintf(buf, size, "RAID-0 over %u objects, %u KiB chunks",
			 lo->stripe_count, lo->stripe_size >> 10);
}

void bench_target_err(const struct bench_target *t, const char *what,
		      const char *name, int err)
{
	/* The run was stopped on purpose: main() says so once. */
	if (err == -EINTR && bench_stop_signal())
		return;
	fprintf(stderr, "nacre-bench: %s: %s %s%s%s: %s\n", t->bt_name, what,
		t->bt_dir, name[0] ? "/" : "", name, t->bt_ops->bo_strerror(err));
}

int bench_connect(const struct bench_cfg *cfg, struct nacre_fs **fs)
{
	const struct nacre_opts opts = { .keyfile = cfg->bc_keyfile };

	return nacre_connect(cfg->bc_mds, cfg->bc_fsname, &opts, fs);
}
