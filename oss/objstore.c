/* SPDX-License-Identifier: MIT */
/*
 * The object store of one OST: a local directory of shard objects.
 *
 *   DIR/ost.conf            fsname, index and uuid, written once at format
 *   DIR/O/XX/SEQ:OID        objects, XX = (oid & 0xff) in lower-case hex
 *
 * An open OST keeps a descriptor of DIR/O and resolves every object relative
 * to it, so object calls never rebuild or re-resolve the OST path.  Nothing
 * in struct oss_ost changes after oss_ost_open(), which is what makes the
 * calls safe from any number of threads: each one opens, uses and closes
 * its own descriptor of the object.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <uuid/uuid.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/types.h"
#include "oss/objstore.h"

#define OSS_CONF_NAME "ost.conf"
#define OSS_CONF_TMP "ost.conf.tmp"
#define OSS_OBJ_DIR "O"
/* ost.conf is three short lines; anything bigger is not ours. */
#define OSS_CONF_MAX 4096
/* "XX/" + "SEQ:OID" + NUL */
#define OSS_OBJ_PATH_LEN (3 + NC_FID_STR_LEN)

struct oss_ost {
	int ost_objfd;                  /* DIR/O, O_DIRECTORY */
	uint32_t ost_index;
	uint8_t ost_uuid[16];
	char ost_fsname[NC_FSNAME_MAX + 1];
	char *ost_dir;
};

/* Filesystem names appear in configuration and logs: keep them plain. */
static bool oss_fsname_is_valid(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > NC_FSNAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		      c == '.'))
			return false;
	}
	return true;
}

/* Writes all of @len bytes at @off, resuming after short writes and EINTR. */
static int oss_pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* A regular file never accepts zero bytes without an error. */
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Reads up to @len bytes at @off, stopping only at end of file. */
static ssize_t oss_pread_all(int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, p + done, len - done, off + (off_t)done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int oss_fsync_path(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* ---- format and open ---- */

static int oss_conf_write(int dirfd, const char *fsname, uint32_t index)
{
	char text[256], uustr[37];
	uuid_t uu;
	int fd, len, ret;

	uuid_generate(uu);
	uuid_unparse(uu, uustr);
	len = snprintf(text, sizeof(text), "fsname=%s\nindex=%u\nuuid=%s\n",
		       fsname, (unsigned int)index, uustr);
	if (len < 0 || (size_t)len >= sizeof(text))
		return -EINVAL;

	/* A leftover from a format that died half way is not a format. */
	if (unlinkat(dirfd, OSS_CONF_TMP, 0) < 0 && errno != ENOENT)
		return -errno;
	fd = openat(dirfd, OSS_CONF_TMP, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0644);
	if (fd < 0)
		return -errno;
	ret = oss_pwrite_all(fd, text, (size_t)len, 0);
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	if (ret)
		goto out_unlink_tmp;
	/*
	 * link() publishes the complete file atomically and fails with EEXIST
	 * when another format got there first, so two formats of one
	 * directory can never both succeed.
	 */
	if (linkat(dirfd, OSS_CONF_TMP, dirfd, OSS_CONF_NAME, 0) < 0) {
		ret = -errno;
		goto out_unlink_tmp;
	}
	unlinkat(dirfd, OSS_CONF_TMP, 0);
	return fsync(dirfd) < 0 ? -errno : 0;

out_unlink_tmp:
	unlinkat(dirfd, OSS_CONF_TMP, 0);
	return ret;
}

int oss_ost_format(const char *dir, const char *fsname, uint32_t index)
{
	struct stat st;
	int dirfd, ret;

	if (!dir || !fsname || !oss_fsname_is_valid(fsname) ||
	    index == NC_OST_ANY)
		return -EINVAL;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	if (fstatat(dirfd, OSS_CONF_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		ret = -EEXIST;
		goto out_close_dir;
	}
	/* The object directory comes first: a published ost.conf always
	 * describes a usable OST. */
	if (mkdirat(dirfd, OSS_OBJ_DIR, 0755) < 0 && errno != EEXIST) {
		ret = -errno;
		goto out_close_dir;
	}
	ret = oss_conf_write(dirfd, fsname, index);
	if (ret == 0)
		nc_info("oss", "formatted %s as OST %u of %s", dir,
			(unsigned int)index, fsname);

out_close_dir:
	close(dirfd);
	return ret;
}

/* Reads ost.conf into @text (NUL-terminated). */
static int oss_conf_read(int dirfd, char *text, size_t max)
{
	int fd = openat(dirfd, OSS_CONF_NAME, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? -NC_E_NOTFMT : -errno;
	n = oss_pread_all(fd, text, max, 0);
	close(fd);
	if (n < 0)
		return (int)n;
	/* Too big or holding a NUL: not a file we wrote. */
	if ((size_t)n >= max || memchr(text, '\0', (size_t)n))
		return -NC_E_CORRUPT;
	text[n] = '\0';
	return 0;
}

static int oss_parse_index(const char *s, uint32_t *index)
{
	unsigned long long v = 0;

	if (*s == '\0')
		return -NC_E_CORRUPT;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -NC_E_CORRUPT;
		v = v * 10 + (unsigned long long)(*s - '0');
		if (v >= NC_OST_ANY)
			return -NC_E_CORRUPT;
	}
	*index = (uint32_t)v;
	return 0;
}

/*
 * Parses "key=value" lines.  Each key we know must appear exactly once;
 * keys we do not know are skipped, so a later version can add some
 * without making older servers refuse the target.
 */
static int oss_conf_parse(char *text, struct oss_ost *ost, const char **why)
{
	bool have_fsname = false, have_index = false, have_uuid = false;
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *val = strchr(line, '=');

		if (!val) {
			*why = "a line without '='";
			return -NC_E_CORRUPT;
		}
		*val++ = '\0';
		if (!strcmp(line, "fsname") && !have_fsname) {
			if (!oss_fsname_is_valid(val)) {
				*why = "bad fsname";
				return -NC_E_CORRUPT;
			}
			strcpy(ost->ost_fsname, val);
			have_fsname = true;
		} else if (!strcmp(line, "index") && !have_index) {
			if (oss_parse_index(val, &ost->ost_index)) {
				*why = "bad index";
				return -NC_E_CORRUPT;
			}
			have_index = true;
		} else if (!strcmp(line, "uuid") && !have_uuid) {
			if (uuid_parse(val, ost->ost_uuid) < 0 ||
			    uuid_is_null(ost->ost_uuid)) {
				*why = "bad uuid";
				return -NC_E_CORRUPT;
			}
			have_uuid = true;
		} else if (!strcmp(line, "fsname") || !strcmp(line, "index") ||
			   !strcmp(line, "uuid") || line[0] == '\0') {
			*why = "a key twice or an empty key";
			return -NC_E_CORRUPT;
		}
	}
	if (!have_fsname || !have_index || !have_uuid) {
		*why = "a key is missing";
		return -NC_E_CORRUPT;
	}
	return 0;
}

/*
 * A NULL @fsname opens the OST whatever filesystem it belongs to (for tools
 * that inspect a target); the server always passes its own.
 */
int oss_ost_open(const char *dir, const char *fsname, struct oss_ost **out)
{
	char text[OSS_CONF_MAX];
	const char *why = "too large or not text";
	struct oss_ost *ost;
	int dirfd, ret;

	*out = NULL;
	if (!dir)
		return -EINVAL;
	ost = calloc(1, sizeof(*ost));
	if (!ost)
		return -ENOMEM;
	ost->ost_objfd = -1;
	ost->ost_dir = strdup(dir);
	if (!ost->ost_dir) {
		ret = -ENOMEM;
		goto out_free_ost;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		ret = -errno;
		goto out_free_ost;
	}
	ret = oss_conf_read(dirfd, text, sizeof(text));
	if (ret == 0)
		ret = oss_conf_parse(text, ost, &why);
	if (ret == -NC_E_CORRUPT)
		nc_error("oss", "%s: %s is corrupt: %s", dir, OSS_CONF_NAME, why);
	if (ret)
		goto out_close_dir;
	if (fsname && strcmp(fsname, ost->ost_fsname) != 0) {
		nc_error("oss", "%s belongs to filesystem %s, not %s", dir,
			 ost->ost_fsname, fsname);
		ret = -NC_E_FSNAME;
		goto out_close_dir;
	}
	ost->ost_objfd = openat(dirfd, OSS_OBJ_DIR,
				O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ost->ost_objfd < 0) {
		ret = errno == ENOENT ? -NC_E_CORRUPT : -errno;
		if (ret == -NC_E_CORRUPT)
			nc_error("oss", "%s: object directory %s is missing",
				 dir, OSS_OBJ_DIR);
		goto out_close_dir;
	}
	close(dirfd);
	*out = ost;
	return 0;

out_close_dir:
	close(dirfd);
out_free_ost:
	free(ost->ost_dir);
	free(ost);
	return ret;
}

void oss_ost_close(struct oss_ost *ost)
{
	if (!ost)
		return;
	if (ost->ost_objfd >= 0)
		close(ost->ost_objfd);
	free(ost->ost_dir);
	free(ost);
}

uint32_t oss_ost_index(const struct oss_ost *ost)
{
	return ost->ost_index;
}

void oss_ost_uuid(const struct oss_ost *ost, uint8_t uuid[16])
{
	memcpy(uuid, ost->ost_uuid, 16);
}

const char *oss_ost_dir(const struct oss_ost *ost)
{
	return ost->ost_dir;
}

/* ---- objects ---- */

/* "XX/SEQ:OID" relative to DIR/O; @sub gets "XX". */
static void oss_obj_path(const struct nc_fid *fid, char *path, char *sub)
{
	char fs[NC_FID_STR_LEN];

	nc_fid_to_str(fid, fs);
	snprintf(sub, 3, "%02x", (unsigned int)(fid->f_oid & 0xff));
	snprintf(path, OSS_OBJ_PATH_LEN, "%s/%s", sub, fs);
}

/*
 * Opens an object.  With O_CREAT the XX directory is made on demand (a
 * concurrent creator may win the race: EEXIST is fine).  Returns the
 * descriptor or -errno; -ENOENT when it is missing and not to be created.
 */
static int oss_obj_open(struct oss_ost *ost, const struct nc_fid *fid,
			int flags)
{
	char path[OSS_OBJ_PATH_LEN], sub[3];
	int fd;

	oss_obj_path(fid, path, sub);
	fd = openat(ost->ost_objfd, path, flags | O_CLOEXEC, 0644);
	if (fd >= 0 || errno != ENOENT || !(flags & O_CREAT))
		return fd >= 0 ? fd : -errno;
	if (mkdirat(ost->ost_objfd, sub, 0755) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(ost->ost_objfd, path, flags | O_CLOEXEC, 0644);
	return fd >= 0 ? fd : -errno;
}

/* Offsets travel as u64 but files take off_t: refuse what does not fit. */
static bool oss_range_is_valid(uint64_t off, uint64_t len)
{
	return off <= (uint64_t)INT64_MAX && len <= (uint64_t)INT64_MAX - off;
}

static int oss_close(int fd, int ret)
{
	/* close() can report a deferred write error (ENOSPC, EIO). */
	if (close(fd) < 0 && ret == 0)
		return -errno;
	return ret;
}

ssize_t oss_obj_read(struct oss_ost *ost, const struct nc_fid *fid,
		     uint64_t off, void *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	/* No object extends past INT64_MAX: reading there finds its end. */
	if (off >= (uint64_t)INT64_MAX)
		return 0;
	if (len > (uint64_t)INT64_MAX - off)
		len = (size_t)((uint64_t)INT64_MAX - off);
	fd = oss_obj_open(ost, fid, O_RDONLY);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	n = oss_pread_all(fd, buf, len, (off_t)off);
	close(fd);
	return n;
}

int oss_obj_write(struct oss_ost *ost, const struct nc_fid *fid, uint64_t off,
		  const void *buf, size_t len)
{
	int fd, ret;

	if (!oss_range_is_valid(off, len))
		return -EFBIG;
	fd = oss_obj_open(ost, fid, O_WRONLY | O_CREAT);
	if (fd < 0)
		return fd;
	ret = oss_pwrite_all(fd, buf, len, (off_t)off);
	return oss_close(fd, ret);
}

int oss_obj_truncate(struct oss_ost *ost, const struct nc_fid *fid,
		     uint64_t size)
{
	int fd, ret = 0;

	if (size > (uint64_t)INT64_MAX)
		return -EFBIG;
	fd = oss_obj_open(ost, fid, size > 0 ? O_WRONLY | O_CREAT : O_WRONLY);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)size) < 0)
		ret = -errno;
	return oss_close(fd, ret);
}

/*
 * For filesystems without hole punching: write zeros over the part of the
 * range that lies inside the object, which reads back the same.
 */
static int oss_zero_range(int fd, uint64_t off, uint64_t len)
{
	static const char zeros[65536];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (off >= (uint64_t)st.st_size)
		return 0;
	if (len > (uint64_t)st.st_size - off)
		len = (uint64_t)st.st_size - off;
	while (len > 0) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
		int ret = oss_pwrite_all(fd, zeros, n, (off_t)off);

		if (ret)
			return ret;
		off += n;
		len -= n;
	}
	return 0;
}

int oss_obj_punch(struct oss_ost *ost, const struct nc_fid *fid, uint64_t off,
		  uint64_t len)
{
	int fd, ret = 0;

	if (off > (uint64_t)INT64_MAX)
		return 0;       /* nothing can live there */
	if (len > (uint64_t)INT64_MAX - off)
		len = (uint64_t)INT64_MAX - off;
	if (len == 0)
		return 0;
	fd = oss_obj_open(ost, fid, O_WRONLY);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)off, (off_t)len) < 0) {
		ret = -errno;
		if (ret == -EOPNOTSUPP)
			ret = oss_zero_range(fd, off, len);
	}
	return oss_close(fd, ret);
}

int oss_obj_destroy(struct oss_ost *ost, const struct nc_fid *fid)
{
	char path[OSS_OBJ_PATH_LEN], sub[3];

	oss_obj_path(fid, path, sub);
	if (unlinkat(ost->ost_objfd, path, 0) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/*
 * Syncs the data and the directory entries above it (XX, and O for a new
 * XX), so an object created since the last sync survives a crash along
 * with its bytes.
 */
int oss_obj_sync(struct oss_ost *ost, const struct nc_fid *fid)
{
	char path[OSS_OBJ_PATH_LEN], sub[3];
	int fd, ret = 0;

	fd = oss_obj_open(ost, fid, O_RDONLY);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (fsync(fd) < 0)
		ret = -errno;
	close(fd);
	if (ret)
		return ret;
	oss_obj_path(fid, path, sub);
	ret = oss_fsync_path(ost->ost_objfd, sub);
	if (ret == 0 && fsync(ost->ost_objfd) < 0)
		ret = -errno;
	return ret;
}

int oss_obj_stat(struct oss_ost *ost, const struct nc_fid *fid,
		 uint64_t *size, uint64_t *blocks)
{
	char path[OSS_OBJ_PATH_LEN], sub[3];
	struct stat st;

	oss_obj_path(fid, path, sub);
	if (fstatat(ost->ost_objfd, path, &st, 0) < 0)
		return -errno;
	if (size)
		*size = (uint64_t)st.st_size;
	if (blocks)
		*blocks = (uint64_t)st.st_blocks;
	return 0;
}

int oss_ost_statfs(struct oss_ost *ost, struct nc_statfs *st)
{
	struct statvfs sv;
	uint64_t frsize;

	if (fstatvfs(ost->ost_objfd, &sv) < 0)
		return -errno;
	frsize = sv.f_frsize ? sv.f_frsize : sv.f_bsize;
	memset(st, 0, sizeof(*st));
	st->s_total = (uint64_t)sv.f_blocks * frsize;
	st->s_free = (uint64_t)sv.f_bfree * frsize;
	st->s_avail = (uint64_t)sv.f_bavail * frsize;
	st->s_files = sv.f_files;
	st->s_ffree = sv.f_ffree;
	st->s_bsize = (uint32_t)sv.f_bsize;
	st->s_namemax = NC_NAME_MAX;
	return 0;
}
