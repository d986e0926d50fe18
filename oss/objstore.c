/* SPDX-License-Identifier: MIT */
/*
 * The object store of one OST: a local directory of shard objects.
 *
 *   DIR/ost.conf            fsname, index and uuid, written once at format
 *   DIR/O/XX/SEQ:OID        objects, XX = (oid & 0xff) in lower-case hex
 *   DIR/O/XX/SEQ:OID.crc    their block checksums (see objstore.h)
 *
 * An open OST keeps a descriptor of DIR/O and resolves every object relative
 * to it, so object calls never rebuild or re-resolve the OST path.  Nothing
 * in struct oss_ost but its lock table changes after oss_ost_open(): each
 * call opens, uses and closes its own descriptors of the object, under the
 * object's stripe of the lock table, which keeps an object's data and its
 * checksums in step for concurrent callers.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <uuid/uuid.h>

#include "common/ec.h"
#include "common/errors.h"
#include "common/log.h"
#include "common/types.h"
#include "oss/fdcache.h"
#include "oss/objstore.h"

#define OSS_CONF_NAME "ost.conf"
#define OSS_CONF_TMP "ost.conf.tmp"
#define OSS_OBJ_DIR "O"
/* ost.conf is three short lines; anything bigger is not ours. */
#define OSS_CONF_MAX 4096
/* "XX/" + "SEQ:OID" + NUL */
#define OSS_OBJ_PATH_LEN (3 + NC_FID_STR_LEN)
#define OSS_CSUM_SUFFIX ".crc"
#define OSS_CSUM_PATH_LEN (OSS_OBJ_PATH_LEN + sizeof(OSS_CSUM_SUFFIX) - 1)
/* Checksums of up to this many blocks (1 MiB of data) stay on the stack. */
#define OSS_CSUM_STACK 256
/* Writes of whole aligned pages from this size on go to disk with O_DIRECT
 * (oss_write_data). */
#define OSS_DIRECT_ALIGN 4096u
#define OSS_DIRECT_MIN (64u * 1024)
/* A read that is sent from the page cache is checked first through a copy
 * into the service thread's buffer of this size, piece by piece
 * (oss_check_unsent); a multiple of the block. */
#define OSS_CHECK_PIECE (256u * 1024)
/* Reads of a pack fetch the aligned window around them (oss_read_around). */
#define OSS_PACK_READ_AROUND (1024u * 1024)
/* oss_obj_verify() reads this much per pread (a multiple of the block). */
#define OSS_VERIFY_WINDOW (8u * 1024 * 1024)

struct oss_ost {
	int ost_objfd;                  /* DIR/O, O_DIRECTORY */
	uint32_t ost_index;
	uint8_t ost_uuid[16];
	char ost_fsname[NC_FSNAME_MAX + 1];
	char *ost_dir;
	pthread_rwlock_t ost_objlocks[OSS_OBJ_LOCKS];
	atomic_bool ost_full;           /* a write got ENOSPC, none since succeeded */
	struct oss_fdcache ost_fdc;     /* open pack objects (oss/fdcache.h) */
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
/* Whether a write of @len bytes at @off from @buf suits O_DIRECT: whole,
 * aligned pages, and large enough to be worth it. */
static bool oss_write_may_be_direct(const void *buf, size_t len, uint64_t off)
{
	return len >= OSS_DIRECT_MIN && len % OSS_DIRECT_ALIGN == 0 &&
	       off % OSS_DIRECT_ALIGN == 0 && (uintptr_t)buf % OSS_DIRECT_ALIGN == 0;
}

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
 * glibc's default rwlock lets a steady stream of readers starve a writer
 * for ever; object readers arrive that way (many clients, readahead), so
 * writers go first here.
 */
static void oss_objlocks_init(struct oss_ost *ost)
{
	pthread_rwlockattr_t attr;

	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	for (int i = 0; i < OSS_OBJ_LOCKS; i++)
		pthread_rwlock_init(&ost->ost_objlocks[i], &attr);
	pthread_rwlockattr_destroy(&attr);
}

/*
 * A NULL @fsname opens the OST whatever filesystem it belongs to (for tools
 * that inspect a target); the server always passes its own.
 */
int oss_ost_open(const char *dir, const char *fsname, unsigned int pack_fds,
		 struct oss_ost **out)
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
	ret = oss_fdc_init(&ost->ost_fdc, pack_fds);
	if (ret) {
		close(ost->ost_objfd);
		goto out_free_ost;
	}
	oss_objlocks_init(ost);
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
	oss_fdc_fini(&ost->ost_fdc);
	for (int i = 0; i < OSS_OBJ_LOCKS; i++)
		pthread_rwlock_destroy(&ost->ost_objlocks[i]);
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

/*
 * "XX/SEQ:OID" (the object) or "XX/SEQ:OID.crc" (its checksums) relative to
 * DIR/O; @sub gets "XX".
 */
static void oss_obj_path(const struct nc_fid *fid, const char *suffix,
			 char *path, char *sub)
{
	char fs[NC_FID_STR_LEN];

	nc_fid_to_str(fid, fs);
	snprintf(sub, 3, "%02x", (unsigned int)(fid->f_oid & 0xff));
	snprintf(path, OSS_CSUM_PATH_LEN, "%s/%s%s", sub, fs, suffix);
}

/*
 * Opens an object file.  With O_CREAT the XX directory is made on demand
 * (a concurrent creator may win the race: EEXIST is fine).  Returns the
 * descriptor or -errno; -ENOENT when it is missing and not to be created.
 */
static int oss_file_open(struct oss_ost *ost, const struct nc_fid *fid,
			 const char *suffix, int flags)
{
	char path[OSS_CSUM_PATH_LEN], sub[3];
	int fd;

	oss_obj_path(fid, suffix, path, sub);
	fd = openat(ost->ost_objfd, path, flags | O_CLOEXEC, 0644);
	if (fd >= 0 || errno != ENOENT || !(flags & O_CREAT))
		return fd >= 0 ? fd : -errno;
	if (mkdirat(ost->ost_objfd, sub, 0755) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(ost->ost_objfd, path, flags | O_CLOEXEC, 0644);
	return fd >= 0 ? fd : -errno;
}

static int oss_obj_open(struct oss_ost *ost, const struct nc_fid *fid,
			int flags)
{
	return oss_file_open(ost, fid, "", flags);
}

static int oss_csum_open(struct oss_ost *ost, const struct nc_fid *fid,
			 int flags)
{
	return oss_file_open(ost, fid, OSS_CSUM_SUFFIX, flags);
}

static pthread_rwlock_t *oss_obj_lock(struct oss_ost *ost,
				      const struct nc_fid *fid)
{
	/* FIDs of one file system share f_seq: mix both halves. */
	uint64_t h = fid->f_seq * 0x9e3779b97f4a7c15ull ^
		     fid->f_oid * 0xc2b2ae3d27d4eb4full;

	return &ost->ost_objlocks[(h >> 32) % OSS_OBJ_LOCKS];
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

/* ---- checksum blocks ---- */

static uint64_t oss_nblocks(uint64_t size)
{
	return size / OSS_CSUM_BLOCK + (size % OSS_CSUM_BLOCK != 0);
}

/* Bytes of block @b in an object of @size bytes (@b below oss_nblocks). */
static size_t oss_block_len(uint64_t b, uint64_t size)
{
	uint64_t start = b * OSS_CSUM_BLOCK;

	return (size_t)(size - start < OSS_CSUM_BLOCK ? size - start :
							OSS_CSUM_BLOCK);
}

/* Whether all of block @b lies inside [off, end). */
static bool oss_block_is_within(uint64_t b, uint64_t size, uint64_t off,
				uint64_t end)
{
	uint64_t start = b * OSS_CSUM_BLOCK;

	return start >= off && start + oss_block_len(b, size) <= end;
}

static bool oss_is_zero(const uint8_t *p, size_t len)
{
	return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

/* Entry 0 also stands for a hole (see objstore.h). */
static bool oss_block_is_good(const uint8_t *data, size_t len, uint32_t crc)
{
	if (nc_crc32c(0, data, len) == crc)
		return true;
	return crc == 0 && oss_is_zero(data, len);
}

/*
 * Room for the checksums of @n blocks: @stack when they fit, else the heap.
 * NULL when out of memory.
 */
static uint32_t *oss_crcs_get(uint32_t *stack, uint64_t n)
{
	if (n <= OSS_CSUM_STACK)
		return stack;
	if (n > SIZE_MAX / sizeof(uint32_t))
		return NULL;
	return malloc((size_t)n * sizeof(uint32_t));
}

static void oss_crcs_put(uint32_t *stack, uint32_t *crc)
{
	if (crc != stack)
		free(crc);
}

/*
 * Reads the checksums of blocks [first, first + n).  Entries past the
 * sidecar's end, and all of them without a sidecar (@cfd < 0), read as 0.
 */
static int oss_csum_load(int cfd, uint64_t first, size_t n, uint32_t *crc)
{
	ssize_t got = 0;

	if (cfd >= 0) {
		got = oss_pread_all(cfd, crc, n * sizeof(*crc),
				    (off_t)(first * sizeof(*crc)));
		if (got < 0)
			return (int)got;
	}
	memset((char *)crc + got, 0, n * sizeof(*crc) - (size_t)got);
	for (size_t i = 0; i < n; i++)
		crc[i] = le32toh(crc[i]);
	return 0;
}

/* Stores the checksums of blocks [first, first + n); @crc is clobbered. */
static int oss_csum_store(int cfd, uint64_t first, size_t n, uint32_t *crc)
{
	for (size_t i = 0; i < n; i++)
		crc[i] = htole32(crc[i]);
	return oss_pwrite_all(cfd, crc, n * sizeof(*crc),
			      (off_t)(first * sizeof(*crc)));
}

/* Reads block @b of an object of @size bytes; its length or -errno. */
static ssize_t oss_block_read(int fd, uint64_t b, uint64_t size, uint8_t *blk)
{
	size_t len = oss_block_len(b, size);
	ssize_t n = oss_pread_all(fd, blk, len, (off_t)(b * OSS_CSUM_BLOCK));

	/* The size came from fstat under the object's lock: a short read
	 * means someone else is changing the file. */
	if (n >= 0 && (size_t)n != len)
		return -EIO;
	return n;
}

/* Recomputes block @b's checksum from the data now in the object. */
static int oss_csum_recompute(int fd, int cfd, uint64_t b, uint64_t size)
{
	uint8_t blk[OSS_CSUM_BLOCK];
	uint32_t crc;
	ssize_t n;

	if (b >= oss_nblocks(size))
		return 0;
	n = oss_block_read(fd, b, size, blk);
	if (n < 0)
		return (int)n;
	crc = nc_crc32c(0, blk, (size_t)n);
	return oss_csum_store(cfd, b, 1, &crc);
}

/*
 * A block that a call changes only in part (the partial first or last block
 * of a write or punch, the last block of a truncate).  Its old bytes are
 * read and checked before the change, and the change is then applied to
 * the copy, so the new checksum never vouches for bytes that were already
 * corrupt: such a block gets a checksum that does not match (e_bad) and
 * stays detectably bad until it is rewritten whole.
 */
struct oss_edge {
	uint64_t e_block;
	bool e_bad;
	uint8_t e_data[OSS_CSUM_BLOCK];
};

/* Loads block @b of an object of @old bytes, zero-filled past its end. */
static int oss_edge_load(int fd, int cfd, uint64_t b, uint64_t old,
			 struct oss_edge *e)
{
	uint32_t crc;
	ssize_t n;
	int ret;

	e->e_block = b;
	e->e_bad = false;
	memset(e->e_data, 0, sizeof(e->e_data));
	if (b >= oss_nblocks(old))
		return 0;
	n = oss_block_read(fd, b, old, e->e_data);
	if (n < 0)
		return (int)n;
	ret = oss_csum_load(cfd, b, 1, &crc);
	if (ret)
		return ret;
	e->e_bad = !oss_block_is_good(e->e_data, (size_t)n, crc);
	if (e->e_bad)
		nc_warn("oss", "a partly rewritten block at offset %" PRIu64
			" was already corrupt: it stays marked bad",
			b * OSS_CSUM_BLOCK);
	return 0;
}

/* Copies the part of [off, off + len) of @buf (NULL: zeros) that falls in
 * the edge's block into its copy. */
static void oss_edge_apply(struct oss_edge *e, uint64_t off, uint64_t len,
			   const uint8_t *buf)
{
	uint64_t start = e->e_block * OSS_CSUM_BLOCK, end = off + len;
	uint64_t from = off > start ? off : start;
	uint64_t to = end < start + OSS_CSUM_BLOCK ? end : start + OSS_CSUM_BLOCK;

	if (from >= to)
		return;
	if (buf)
		memcpy(e->e_data + (from - start), buf + (from - off), to - from);
	else
		memset(e->e_data + (from - start), 0, to - from);
}

/* The checksum to store for the edge in an object of @size bytes. */
static uint32_t oss_edge_crc(const struct oss_edge *e, uint64_t size)
{
	uint32_t crc = nc_crc32c(0, e->e_data, oss_block_len(e->e_block, size));

	if (!e->e_bad)
		return crc;
	/* Not the right sum, and never 0, which a hole could pass as. */
	return (crc ^ 1) ? crc ^ 1 : crc ^ 2;
}

static int oss_edge_store(int cfd, const struct oss_edge *e, uint64_t size)
{
	uint32_t crc = oss_edge_crc(e, size);

	return oss_csum_store(cfd, e->e_block, 1, &crc);
}

/*
 * Deallocates [off, off + len) of @fd keeping its size; on filesystems
 * without hole punching writes zeros over the part inside the file, which
 * reads back the same.
 */
static int oss_punch_range(int fd, uint64_t off, uint64_t len)
{
	static const char zeros[65536];
	struct stat st;

	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)off, (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
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

/*
 * After a failed write some unknown part of it may be on disk: recompute
 * the checksums of every block it could have changed from the file itself,
 * so the bytes that did land still read back.
 */
static void oss_csum_rebuild(int fd, int cfd, uint64_t old, uint64_t off,
			     size_t len)
{
	uint64_t first = off / OSS_CSUM_BLOCK, oldnb = oss_nblocks(old);
	struct stat st;

	if (len == 0 || fstat(fd, &st) < 0)
		return;
	if (first > oldnb && (uint64_t)st.st_size > old)
		(void)!ftruncate(cfd, (off_t)(oldnb * sizeof(uint32_t)));
	if (old % OSS_CSUM_BLOCK && old / OSS_CSUM_BLOCK < first)
		oss_csum_recompute(fd, cfd, old / OSS_CSUM_BLOCK,
				   (uint64_t)st.st_size);
	for (uint64_t b = first; b <= (off + len - 1) / OSS_CSUM_BLOCK; b++)
		if (oss_csum_recompute(fd, cfd, b, (uint64_t)st.st_size))
			break;
}

/*
 * Writes [off, off + len) of @buf over an object of @old bytes and brings
 * the checksums up to date.  Blocks the write covers entirely are summed
 * from @buf; a partial first or last block, and a partial old last block
 * that the write leaves behind a hole (it now runs on in zeros), are edges.
 */
/*
 * Writes the object's bytes: through @dfd (the object opened O_DIRECT for
 * this write, which oss_write_may_be_direct() allowed; or -1), else
 * through @fd.  Direct I/O takes the bytes straight
 * from @buf to the disk: under many concurrent writers the page cache copy
 * costs more CPU than everything else an OSS does (measured: 24 threads
 * writing 1.5 GiB into six files, 2 to 3 s of system time buffered, 0.1 s
 * direct).  A filesystem that refuses it gets the buffered write.
 */
static int oss_write_data(int fd, int dfd, const uint8_t *buf, size_t len, uint64_t off)
{
	int ret;

	if (dfd >= 0) {
		ret = oss_pwrite_all(dfd, buf, len, (off_t)off);
		if (ret != -EINVAL)
			return ret;
	}
	return oss_pwrite_all(fd, buf, len, (off_t)off);
}

/*
 * Reserves the blocks a write of [@off, @off + @len) needs in the object and
 * in its checksum file before a byte changes, so that a full OST fails the
 * write with ENOSPC and leaves the object as it was: a write failing half
 * way would leave blocks whose checksums no longer match, and a block
 * holds bytes written before too.  A filesystem without fallocate(2) goes
 * on without the reservation (the write itself then reports ENOSPC).
 */
static int oss_reserve(int fd, int cfd, uint64_t off, uint64_t len)
{
	uint64_t first = off / OSS_CSUM_BLOCK, last = (off + len - 1) / OSS_CSUM_BLOCK;
	off_t coff = (off_t)(first * sizeof(uint32_t));
	off_t clen = (off_t)((last - first + 1) * sizeof(uint32_t));

	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) < 0 && errno == ENOSPC)
		return -ENOSPC;
	if (fallocate(cfd, FALLOC_FL_KEEP_SIZE, coff, clen) < 0 && errno == ENOSPC)
		return -ENOSPC;
	return 0;
}

static int oss_write_locked(int fd, int dfd, int cfd, uint64_t old, uint64_t off,
			    const uint8_t *buf, size_t len)
{
	uint64_t end = off + len, size = end > old ? end : old;
	uint64_t first = off / OSS_CSUM_BLOCK, last, oldnb = oss_nblocks(old);
	uint32_t stack[OSS_CSUM_STACK], *crc;
	struct oss_edge head, tail, gap;
	bool has_head, has_tail, has_gap;
	int ret;

	if (len == 0)
		return 0;
	last = (end - 1) / OSS_CSUM_BLOCK;
	has_gap = old % OSS_CSUM_BLOCK && old / OSS_CSUM_BLOCK < first;
	has_head = !oss_block_is_within(first, size, off, end);
	has_tail = last != first && !oss_block_is_within(last, size, off, end);
	ret = oss_reserve(fd, cfd, off, len);
	if (ret)
		return ret;
	if ((has_gap && (ret = oss_edge_load(fd, cfd, oss_nblocks(old) - 1,
					     old, &gap))) ||
	    (has_head && (ret = oss_edge_load(fd, cfd, first, old, &head))) ||
	    (has_tail && (ret = oss_edge_load(fd, cfd, last, old, &tail))))
		return ret;
	ret = oss_write_data(fd, dfd, buf, len, off);
	if (ret) {
		oss_csum_rebuild(fd, cfd, old, off, len);
		return ret;
	}
	/*
	 * The blocks between the old end and this write are a hole: their
	 * entries must read as 0, whatever a truncate that died half way
	 * may have left there.
	 */
	if (first > oldnb && ftruncate(cfd, (off_t)(oldnb * sizeof(*crc))) < 0)
		return -errno;
	if (has_gap && (ret = oss_edge_store(cfd, &gap, size)))
		return ret;
	crc = oss_crcs_get(stack, last - first + 1);
	if (!crc)
		return -ENOMEM;
	for (uint64_t b = first + has_head; b <= last - has_tail; b++)
		crc[b - first] = nc_crc32c(0, buf + (b * OSS_CSUM_BLOCK - off),
					   oss_block_len(b, size));
	if (has_head) {
		oss_edge_apply(&head, off, len, buf);
		crc[0] = oss_edge_crc(&head, size);
	}
	if (has_tail) {
		oss_edge_apply(&tail, off, len, buf);
		crc[last - first] = oss_edge_crc(&tail, size);
	}
	ret = oss_csum_store(cfd, first, (size_t)(last - first + 1), crc);
	oss_crcs_put(stack, crc);
	return ret;
}

/* Sets the size of an object of @old bytes to @new. */
static int oss_truncate_locked(int fd, int cfd, uint64_t old, uint64_t new)
{
	uint64_t lo = old < new ? old : new;
	bool has_edge = old != new && lo % OSS_CSUM_BLOCK;
	struct oss_edge edge;
	int ret;

	/* The block holding the shorter end changes length: up, it runs on
	 * in zeros; down, it loses its tail. */
	if (has_edge && cfd >= 0) {
		ret = oss_edge_load(fd, cfd, lo / OSS_CSUM_BLOCK, old, &edge);
		if (ret)
			return ret;
	}
	if (ftruncate(fd, (off_t)new) < 0)
		return -errno;
	if (cfd < 0)
		return 0;
	/* Shortening to the common part also clears what a crash may have
	 * left past the old end: the grown part is a hole (entries 0). */
	if (ftruncate(cfd, (off_t)(oss_nblocks(lo) * sizeof(uint32_t))) < 0)
		return -errno;
	if (!has_edge)
		return 0;
	oss_edge_apply(&edge, lo, OSS_CSUM_BLOCK, NULL);
	return oss_edge_store(cfd, &edge, new);
}

/* Punches [off, end) of an object of @size bytes (@end <= @size). */
static int oss_punch_locked(int fd, int cfd, uint64_t size, uint64_t off,
			    uint64_t end)
{
	uint64_t first = off / OSS_CSUM_BLOCK, last = (end - 1) / OSS_CSUM_BLOCK;
	uint64_t lo = first, hi = last + 1;     /* blocks now all zeros */
	struct oss_edge head, tail;
	bool has_head, has_tail;
	int ret;

	has_head = !oss_block_is_within(first, size, off, end);
	has_tail = last != first && !oss_block_is_within(last, size, off, end);
	if ((has_head && (ret = oss_edge_load(fd, cfd, first, size, &head))) ||
	    (has_tail && (ret = oss_edge_load(fd, cfd, last, size, &tail))))
		return ret;
	ret = oss_punch_range(fd, off, end - off);
	if (ret)
		return ret;
	if (has_head) {
		oss_edge_apply(&head, off, end - off, NULL);
		ret = oss_edge_store(cfd, &head, size);
		if (ret)
			return ret;
		lo++;
	}
	if (has_tail) {
		oss_edge_apply(&tail, off, end - off, NULL);
		ret = oss_edge_store(cfd, &tail, size);
		if (ret)
			return ret;
		hi--;
	}
	if (lo >= hi)
		return 0;
	/* Whole blocks of zeros are holes: entry 0, kept sparse. */
	return oss_punch_range(cfd, lo * sizeof(uint32_t),
			       (hi - lo) * sizeof(uint32_t));
}

/*
 * The stored checksums of blocks [first, last], in @stack when they fit
 * (release with oss_crcs_put()); NULL with *@err set when they cannot be
 * had.
 */
static uint32_t *oss_crcs_read(int cfd, uint64_t first, uint64_t last, uint32_t *stack,
			       int *err)
{
	uint32_t *crc = oss_crcs_get(stack, last - first + 1);

	*err = -ENOMEM;
	if (!crc)
		return NULL;
	*err = oss_csum_load(cfd, first, (size_t)(last - first + 1), crc);
	if (*err) {
		oss_crcs_put(stack, crc);
		return NULL;
	}
	return crc;
}

/*
 * Reads @n bytes at @off (all inside an object of @size bytes) into @buf,
 * checking every block the range touches against @crc (the sums of those
 * blocks, from the one at @off on).  Blocks wholly inside the range are
 * read straight into @buf with one pread; a partial first or last block
 * goes through a block buffer so that all of it can be checked.
 * -NC_E_CHECKSUM with *@bad_off set at the first bad block.
 */
static int oss_read_summed(int fd, uint64_t size, uint64_t off, uint8_t *buf, size_t n,
			   const uint32_t *crc, uint64_t *bad_off)
{
	uint64_t end = off + n, first = off / OSS_CSUM_BLOCK;
	uint64_t last = (end - 1) / OSS_CSUM_BLOCK, lo = first, hi = last + 1;
	uint8_t blk[OSS_CSUM_BLOCK];

	for (int edge = 0; edge < 2; edge++) {
		uint64_t b = edge ? last : first, start = b * OSS_CSUM_BLOCK;
		uint64_t from, to;
		ssize_t got;

		if (lo >= hi || oss_block_is_within(b, size, off, end))
			continue;
		got = oss_block_read(fd, b, size, blk);
		if (got < 0)
			return (int)got;
		if (!oss_block_is_good(blk, (size_t)got, crc[b - first])) {
			*bad_off = start;
			return -NC_E_CHECKSUM;
		}
		from = off > start ? off : start;
		to = end < start + (uint64_t)got ? end : start + (uint64_t)got;
		memcpy(buf + (from - off), blk + (from - start), to - from);
		if (edge || b == last)
			hi--;
		else
			lo++;
	}
	if (lo < hi) {
		uint64_t start = lo * OSS_CSUM_BLOCK;
		uint64_t stop = hi * OSS_CSUM_BLOCK < size ? hi * OSS_CSUM_BLOCK : size;
		ssize_t got = oss_pread_all(fd, buf + (start - off),
					    (size_t)(stop - start), (off_t)start);

		if (got < 0 || (uint64_t)got != stop - start)
			return got < 0 ? (int)got : -EIO;
		for (uint64_t b = lo; b < hi; b++) {
			uint64_t s = b * OSS_CSUM_BLOCK;

			if (!oss_block_is_good(buf + (s - off),
					       oss_block_len(b, size),
					       crc[b - first])) {
				*bad_off = s;
				return -NC_E_CHECKSUM;
			}
		}
	}
	return 0;
}

/* oss_read_summed() with the sums read from the checksum file @cfd. */
static int oss_read_checked(int fd, int cfd, uint64_t size, uint64_t off,
			    uint8_t *buf, size_t n, uint64_t *bad_off)
{
	uint64_t first = off / OSS_CSUM_BLOCK, last = (off + n - 1) / OSS_CSUM_BLOCK;
	uint32_t stack[OSS_CSUM_STACK], *crc;
	int ret;

	crc = oss_crcs_read(cfd, first, last, stack, &ret);
	if (!crc)
		return ret;
	ret = oss_read_summed(fd, size, off, buf, n, crc, bad_off);
	oss_crcs_put(stack, crc);
	return ret;
}

/* ---- object calls ---- */

/* An object opened for reading a range: its file and checksum sidecar
 * (-1 when it has none), its size, and the range clipped to it. */
struct oss_reader {
	int or_fd;
	int or_cfd;
	struct oss_fdc_ent *or_ent;     /* where both came from, or NULL */
	uint64_t or_size;
	uint64_t or_off;
	size_t or_len;
};

/*
 * Opens @fid to read [off, off + len), its lock already held for reading.
 * 1 when there are bytes to read (@r open, range clipped), 0 when there
 * are none (past the end, a missing object: nothing open), or -errno.
 */
/* Packs are read a small file at a time: their descriptors are cached. */
static bool oss_fid_is_pack(const struct nc_fid *fid)
{
	return fid->f_seq == NC_PACK_FID_SEQ;
}

/* Opens the object @fid and its checksum file (or_cfd -1 when it has
 * none), uncached; 0, or -ENOENT for a missing object, or -errno. */
static int oss_reader_fds_plain(struct oss_ost *ost, const struct nc_fid *fid,
				struct oss_reader *r)
{
	r->or_ent = NULL;
	r->or_fd = oss_obj_open(ost, fid, O_RDONLY);
	if (r->or_fd < 0)
		return r->or_fd;
	r->or_cfd = oss_csum_open(ost, fid, O_RDONLY);
	if (r->or_cfd == -ENOENT) {
		r->or_cfd = -1;
	} else if (r->or_cfd < 0) {
		close(r->or_fd);
		return r->or_cfd;
	}
	return 0;
}

/* As oss_reader_fds_plain(), from the cache for a pack. */
static int oss_reader_fds(struct oss_ost *ost, const struct nc_fid *fid, struct oss_reader *r)
{
	int ret;

	if (!oss_fid_is_pack(fid))
		return oss_reader_fds_plain(ost, fid, r);
	r->or_ent = oss_fdc_get(&ost->ost_fdc, fid);
	if (!r->or_ent) {
		ret = oss_reader_fds_plain(ost, fid, r);
		/* Only an object with its checksums is cached: a checksum
		 * file made later would not be seen. */
		if (ret || r->or_cfd < 0)
			return ret;
		/* The descriptors are the cache's now, whatever it does. */
		r->or_ent = oss_fdc_add(&ost->ost_fdc, fid, r->or_fd, r->or_cfd);
		if (!r->or_ent)
			return oss_reader_fds_plain(ost, fid, r); /* cache off */
	}
	r->or_fd = r->or_ent->fe_fd;
	r->or_cfd = r->or_ent->fe_cfd;
	return 0;
}

/* Ends a reader's use of its checksum file. */
static void oss_reader_close_csum(struct oss_reader *r)
{
	if (!r->or_ent && r->or_cfd >= 0)
		close(r->or_cfd);
	r->or_cfd = -1;
}

/* Ends a reader's use of its object (and checksum file). */
static void oss_reader_close(struct oss_ost *ost, struct oss_reader *r)
{
	oss_reader_close_csum(r);
	if (r->or_ent)
		oss_fdc_put(&ost->ost_fdc, r->or_ent);
	else
		close(r->or_fd);
	r->or_ent = NULL;
	r->or_fd = -1;
}

/*
 * Opens @fid to read [off, off + len), its lock already held for reading.
 * 1 when there are bytes to read (@r open, range clipped), 0 when there
 * are none (past the end, a missing object: nothing open), or -errno.
 */
static int oss_reader_open(struct oss_ost *ost, const struct nc_fid *fid, uint64_t off,
			   size_t len, struct oss_reader *r)
{
	struct stat st;
	int ret;

	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	/* No object extends past INT64_MAX: reading there finds its end. */
	if (off >= (uint64_t)INT64_MAX || len == 0)
		return 0;
	if (len > (uint64_t)INT64_MAX - off)
		len = (size_t)((uint64_t)INT64_MAX - off);
	ret = oss_reader_fds(ost, fid, r);
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	/* Asked every time: a cached pack grows as files are added. */
	ret = fstat(r->or_fd, &st) < 0 ? -errno : 0;
	if (!ret && off >= (uint64_t)st.st_size)
		ret = 1;        /* nothing to read */
	if (ret) {
		oss_reader_close(ost, r);
		return ret == 1 ? 0 : ret;
	}
	r->or_size = (uint64_t)st.st_size;
	r->or_off = off;
	r->or_len = len < r->or_size - off ? len : (size_t)(r->or_size - off);
	return 1;
}

static void oss_checksum_bad(struct oss_ost *ost, const struct nc_fid *fid, uint64_t bad_off)
{
	nc_error("oss", "OST %u object " NC_FID_FMT ": checksum mismatch in the block at "
		 "offset %" PRIu64, (unsigned int)ost->ost_index, NC_FID_ARGS(fid), bad_off);
}

ssize_t oss_obj_read(struct oss_ost *ost, const struct nc_fid *fid,
		     uint64_t off, void *buf, size_t len)
{
	pthread_rwlock_t *lock = oss_obj_lock(ost, fid);
	struct oss_reader r;
	uint64_t bad_off = 0;
	ssize_t ret;

	pthread_rwlock_rdlock(lock);
	ret = oss_reader_open(ost, fid, off, len, &r);
	if (ret > 0) {
		ret = oss_read_checked(r.or_fd, r.or_cfd, r.or_size, r.or_off, buf, r.or_len,
				       &bad_off);
		if (ret == -NC_E_CHECKSUM)
			oss_checksum_bad(ost, fid, bad_off);
		if (ret == 0)
			ret = (ssize_t)r.or_len;
		oss_reader_close(ost, &r);
	}
	pthread_rwlock_unlock(lock);
	return ret;
}

/*
 * Starts reading [off, off + len) from disk at once, in large requests,
 * rather than one page fault's read-around at a time.  A read from a pack
 * (the small files of a directory, written together and read together by
 * data loaders) asks for the whole aligned window around it: the files
 * next to it are then in memory when their turn comes, one disk read per
 * window instead of one per file.
 */
static void oss_read_around(int fd, const struct nc_fid *fid, uint64_t off, size_t len)
{
	uint64_t lo = off, hi = off + len;
	uint8_t probe;
	struct iovec iov = { .iov_base = &probe, .iov_len = 1 };

	/* In memory already (a warm read): nothing to ask for.  The probe
	 * reads one byte and fails rather than wait for the disk. */
	if (preadv2(fd, &iov, 1, (off_t)off, RWF_NOWAIT) == 1)
		return;
	if (fid->f_seq == NC_PACK_FID_SEQ && len < OSS_PACK_READ_AROUND) {
		lo = off / OSS_PACK_READ_AROUND * OSS_PACK_READ_AROUND;
		hi = (hi + OSS_PACK_READ_AROUND - 1) / OSS_PACK_READ_AROUND *
		     OSS_PACK_READ_AROUND;
	}
	posix_fadvise(fd, (off_t)lo, (off_t)(hi - lo), POSIX_FADV_WILLNEED);
}

/* A service thread's buffer for checking reads (freed with it). */
static pthread_key_t oss_scratch_key;
static pthread_once_t oss_scratch_once = PTHREAD_ONCE_INIT;

static void oss_scratch_key_make(void)
{
	pthread_key_create(&oss_scratch_key, free);
}

static uint8_t *oss_scratch(void)
{
	uint8_t *buf;

	pthread_once(&oss_scratch_once, oss_scratch_key_make);
	buf = pthread_getspecific(oss_scratch_key);
	if (!buf) {
		buf = malloc(OSS_CHECK_PIECE);
		if (buf && pthread_setspecific(oss_scratch_key, buf)) {
			free(buf);
			buf = NULL;
		}
	}
	return buf;
}

/*
 * Checks the blocks of @r's range before it is sent from the page cache,
 * by reading it into the thread's buffer a piece at a time.  The copy is
 * the cheap part: checking through a fresh mapping of the file instead
 * costs a page-table update for every page mapped, and measured 4 times
 * slower per byte (3.4 against 13.8 GB/s on a virtual machine).
 */
static int oss_check_unsent(struct oss_reader *r, uint64_t *bad_off)
{
	uint8_t *buf = oss_scratch();
	uint64_t off = r->or_off, end = r->or_off + r->or_len;
	uint64_t first = off / OSS_CSUM_BLOCK;
	uint32_t stack[OSS_CSUM_STACK], *crc;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	/* The sums of the whole range in one read, not one per piece. */
	crc = oss_crcs_read(r->or_cfd, first, (end - 1) / OSS_CSUM_BLOCK, stack, &ret);
	if (!crc)
		return ret;
	while (off < end && !ret) {
		/* Pieces end on the buffer's alignment in the object, so
		 * that only the range's own edges cut a block. */
		uint64_t stop = (off / OSS_CHECK_PIECE + 1) * OSS_CHECK_PIECE;

		if (stop > end)
			stop = end;
		ret = oss_read_summed(r->or_fd, r->or_size, off, buf, (size_t)(stop - off),
				      crc + (off / OSS_CSUM_BLOCK - first), bad_off);
		off = stop;
	}
	oss_crcs_put(stack, crc);
	return ret;
}

ssize_t oss_obj_read_hold(struct oss_ost *ost, const struct nc_fid *fid,
			  uint64_t off, size_t len, struct oss_read_hold *h)
{
	pthread_rwlock_t *lock = oss_obj_lock(ost, fid);
	struct oss_reader r;
	uint64_t bad_off = 0;
	ssize_t ret;

	h->rh_fd = -1;
	h->rh_ent = NULL;
	h->rh_ost = ost;
	pthread_rwlock_rdlock(lock);
	ret = oss_reader_open(ost, fid, off, len, &r);
	if (ret > 0) {
		oss_read_around(r.or_fd, fid, r.or_off, r.or_len);
		ret = oss_check_unsent(&r, &bad_off);
		oss_reader_close_csum(&r);
		if (ret == -NC_E_CHECKSUM)
			oss_checksum_bad(ost, fid, bad_off);
		if (ret) {
			oss_reader_close(ost, &r);
		} else {
			/* Sent after the lock is dropped: a destroy meanwhile
			 * unlinks the object, this descriptor still reads it. */
			h->rh_fd = r.or_fd;
			h->rh_ent = r.or_ent;
			h->rh_off = r.or_off;
			h->rh_len = r.or_len;
			ret = (ssize_t)r.or_len;
		}
	}
	pthread_rwlock_unlock(lock);
	return ret;
}

void oss_obj_read_release(struct oss_read_hold *h)
{
	if (h->rh_fd < 0)
		return;
	if (h->rh_ent)
		oss_fdc_put(&h->rh_ost->ost_fdc, h->rh_ent);
	else
		close(h->rh_fd);
	h->rh_fd = -1;
	h->rh_ent = NULL;
}

/* Logs once when OST @ost fills (a write got ENOSPC) and once when a write
 * succeeds on it again, not once per request. */
static void oss_note_space(struct oss_ost *ost, int ret)
{
	if (ret == -ENOSPC) {
		if (!atomic_exchange(&ost->ost_full, true))
			nc_warn("oss", "OST %u is full (no space left in %s): writes get ENOSPC "
				"until space is freed", ost->ost_index, ost->ost_dir);
	} else if (!ret && atomic_load(&ost->ost_full)) {
		if (atomic_exchange(&ost->ost_full, false))
			nc_info("oss", "OST %u has space again", ost->ost_index);
	}
}

int oss_obj_write(struct oss_ost *ost, const struct nc_fid *fid, uint64_t off,
		  const void *buf, size_t len)
{
	pthread_rwlock_t *lock = oss_obj_lock(ost, fid);
	struct stat st;
	int fd, cfd, dfd = -1, ret;

	if (!oss_range_is_valid(off, len))
		return -EFBIG;
	pthread_rwlock_wrlock(lock);
	/* Read access too: partial blocks are read back to be summed. */
	fd = oss_obj_open(ost, fid, O_RDWR | O_CREAT);
	if (fd < 0) {
		ret = fd;
		goto out_unlock;
	}
	cfd = oss_csum_open(ost, fid, O_RDWR | O_CREAT);
	if (cfd < 0) {
		ret = cfd;
		goto out_close_obj;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out_close_csum;
	}
	if (oss_write_may_be_direct(buf, len, off))
		dfd = oss_obj_open(ost, fid, O_WRONLY | O_DIRECT);
	ret = oss_write_locked(fd, dfd, cfd, (uint64_t)st.st_size, off, buf, len);
	if (dfd >= 0)
		close(dfd);
out_close_csum:
	ret = oss_close(cfd, ret);
out_close_obj:
	ret = oss_close(fd, ret);
out_unlock:
	pthread_rwlock_unlock(lock);
	oss_note_space(ost, ret);
	return ret;
}

int oss_obj_truncate(struct oss_ost *ost, const struct nc_fid *fid,
		     uint64_t size)
{
	pthread_rwlock_t *lock = oss_obj_lock(ost, fid);
	int create = size > 0 ? O_CREAT : 0;
	struct stat st;
	int fd, cfd, ret = 0;

	if (size > (uint64_t)INT64_MAX)
		return -EFBIG;
	pthread_rwlock_wrlock(lock);
	fd = oss_obj_open(ost, fid, O_RDWR | create);
	if (fd < 0) {
		ret = fd == -ENOENT ? 0 : fd;
		goto out_unlock;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out_close_obj;
	}
	/* Truncating to 0 without a sidecar leaves nothing to sum. */
	cfd = oss_csum_open(ost, fid, O_RDWR | create);
	if (cfd < 0 && cfd != -ENOENT) {
		ret = cfd;
		goto out_close_obj;
	}
	ret = oss_truncate_locked(fd, cfd, (uint64_t)st.st_size, size);
	if (cfd >= 0)
		ret = oss_close(cfd, ret);
out_close_obj:
	ret = oss_close(fd, ret);
out_unlock:
	pthread_rwlock_unlock(lock);
	return ret;
}

int oss_obj_punch(struct oss_ost *ost, const struct nc_fid *fid, uint64_t off,
		  uint64_t len)
{
	pthread_rwlock_t *lock = oss_obj_lock(ost, fid);
	uint64_t end;
	struct stat st;
	int fd, cfd, ret = 0;

	if (off > (uint64_t)INT64_MAX)
		return 0;       /* nothing can live there */
	if (len > (uint64_t)INT64_MAX - off)
		len = (uint64_t)INT64_MAX - off;
	if (len == 0)
		return 0;
	pthread_rwlock_wrlock(lock);
	fd = oss_obj_open(ost, fid, O_RDWR);
	if (fd < 0) {
		ret = fd == -ENOENT ? 0 : fd;
		goto out_unlock;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out_close_obj;
	}
	/* Only the part inside the object holds anything to punch. */
	end = off + len < (uint64_t)st.st_size ? off + len : (uint64_t)st.st_size;
	if (off >= end)
		goto out_close_obj;
	cfd = oss_csum_open(ost, fid, O_RDWR | O_CREAT);
	if (cfd < 0) {
		ret = cfd;
		goto out_close_obj;
	}
	ret = oss_punch_locked(fd, cfd, (uint64_t)st.st_size, off, end);
	ret = oss_close(cfd, ret);
out_close_obj:
	ret = oss_close(fd, ret);
out_unlock:
	pthread_rwlock_unlock(lock);
	return ret;
}

/* One window of oss_obj_verify(): blocks [b, ...) up to @stop bytes. */
static int oss_verify_window(int fd, int cfd, uint64_t size, uint64_t *b,
			     uint64_t stop, uint8_t *buf, uint64_t *bad,
			     uint32_t max, uint32_t *nbad, bool *more)
{
	uint32_t crc[OSS_VERIFY_WINDOW / OSS_CSUM_BLOCK];
	uint64_t start = *b * OSS_CSUM_BLOCK, last, nblk, bytes;
	ssize_t got;
	int ret;

	last = (stop - 1) / OSS_CSUM_BLOCK;
	nblk = last - *b + 1;
	if (nblk > OSS_VERIFY_WINDOW / OSS_CSUM_BLOCK)
		nblk = OSS_VERIFY_WINDOW / OSS_CSUM_BLOCK;
	bytes = (*b + nblk) * OSS_CSUM_BLOCK;
	bytes = (bytes < size ? bytes : size) - start;
	ret = oss_csum_load(cfd, *b, (size_t)nblk, crc);
	if (ret)
		return ret;
	got = oss_pread_all(fd, buf, (size_t)bytes, (off_t)start);
	if (got < 0)
		return (int)got;
	if ((uint64_t)got != bytes)
		return -EIO;
	for (uint64_t i = 0; i < nblk; i++) {
		if (oss_block_is_good(buf + i * OSS_CSUM_BLOCK,
				      oss_block_len(*b + i, size), crc[i]))
			continue;
		if (*nbad == max) {
			*more = true;
			return 0;
		}
		bad[(*nbad)++] = (*b + i) * OSS_CSUM_BLOCK;
	}
	*b += nblk;
	return 0;
}

/*
 * The range is read in windows of OSS_VERIFY_WINDOW bytes, one pread each,
 * under the shared object lock, which is dropped between windows: a scrub
 * of a large object must neither hold its writers off for the whole scan
 * nor need a buffer the size of the object.
 */
int oss_obj_verify(struct oss_ost *ost, const struct nc_fid *fid, uint64_t off,
		   uint64_t len, uint64_t *bad, uint32_t max, uint32_t *nbad,
		   bool *more)
{
	pthread_rwlock_t *lock = oss_obj_lock(ost, fid);
	uint64_t end, b = off / OSS_CSUM_BLOCK;
	uint8_t *buf = NULL;
	int fd, cfd, ret = 0;

	*nbad = 0;
	*more = false;
	if (off >= (uint64_t)INT64_MAX)
		return 0;
	end = len == 0 || len > (uint64_t)INT64_MAX - off ? (uint64_t)INT64_MAX :
							    off + len;
	fd = oss_obj_open(ost, fid, O_RDONLY);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	cfd = oss_csum_open(ost, fid, O_RDONLY);
	if (cfd < 0 && cfd != -ENOENT) {
		ret = cfd;
		goto out_close_obj;
	}
	while (!*more) {
		struct stat st;
		uint64_t stop;

		pthread_rwlock_rdlock(lock);
		if (fstat(fd, &st) < 0) {
			ret = -errno;
			pthread_rwlock_unlock(lock);
			break;
		}
		stop = end < (uint64_t)st.st_size ? end : (uint64_t)st.st_size;
		if (b * OSS_CSUM_BLOCK >= stop) {
			pthread_rwlock_unlock(lock);
			break;
		}
		if (!buf)
			buf = malloc(OSS_VERIFY_WINDOW);
		ret = buf ? oss_verify_window(fd, cfd, (uint64_t)st.st_size,
					      &b, stop, buf, bad, max, nbad,
					      more) :
			    -ENOMEM;
		pthread_rwlock_unlock(lock);
		if (ret)
			break;
	}
	free(buf);
	if (cfd >= 0)
		close(cfd);
out_close_obj:
	close(fd);
	return ret;
}

int oss_obj_destroy(struct oss_ost *ost, const struct nc_fid *fid)
{
	pthread_rwlock_t *lock = oss_obj_lock(ost, fid);
	char path[OSS_CSUM_PATH_LEN], sub[3];
	int ret = 0;

	pthread_rwlock_wrlock(lock);
	/* No later read may find the removed object open in the cache. */
	oss_fdc_drop(&ost->ost_fdc, fid);
	/* The object first: a leftover sidecar alone is harmless, as a later
	 * object of that name resets the entries it needs. */
	oss_obj_path(fid, "", path, sub);
	if (unlinkat(ost->ost_objfd, path, 0) < 0 && errno != ENOENT)
		ret = -errno;
	oss_obj_path(fid, OSS_CSUM_SUFFIX, path, sub);
	if (ret == 0 && unlinkat(ost->ost_objfd, path, 0) < 0 &&
	    errno != ENOENT)
		ret = -errno;
	pthread_rwlock_unlock(lock);
	return ret;
}

static int oss_fsync_fd(int fd)
{
	int ret = fsync(fd) < 0 ? -errno : 0;

	close(fd);
	return ret;
}

/*
 * Syncs the data, its checksums and the directory entries above them (XX,
 * and O for a new XX), so an object created since the last sync survives a
 * crash along with its bytes.
 */
int oss_obj_sync(struct oss_ost *ost, const struct nc_fid *fid)
{
	char path[OSS_CSUM_PATH_LEN], sub[3];
	int fd, ret;

	fd = oss_obj_open(ost, fid, O_RDONLY);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	ret = oss_fsync_fd(fd);
	if (ret)
		return ret;
	fd = oss_csum_open(ost, fid, O_RDONLY);
	if (fd >= 0)
		ret = oss_fsync_fd(fd);
	else if (fd != -ENOENT)
		ret = fd;
	if (ret)
		return ret;
	oss_obj_path(fid, "", path, sub);
	ret = oss_fsync_path(ost->ost_objfd, sub);
	if (ret == 0 && fsync(ost->ost_objfd) < 0)
		ret = -errno;
	return ret;
}

int oss_obj_stat(struct oss_ost *ost, const struct nc_fid *fid,
		 uint64_t *size, uint64_t *blocks)
{
	char path[OSS_CSUM_PATH_LEN], sub[3];
	struct stat st;

	oss_obj_path(fid, "", path, sub);
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
