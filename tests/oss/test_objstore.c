/* SPDX-License-Identifier: MIT */
/*
 * Component tests of the OST object store (oss/objstore.c) on a temporary
 * directory.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "common/daemon.h"
#include "common/ec.h"
#include "common/errors.h"
#include "common/log.h"
#include "common/types.h"
#include "oss/fdcache.h"
#include "oss/objstore.h"

#define FSNAME "testfs"
/* Pack objects an OST of these tests keeps open. */
#define TEST_PACK_FDS 32

static char base_dir[256];
static unsigned int dir_seq;
static unsigned int rand_seed = 20240607;

/* A fresh, not yet existing directory name under the suite's temp dir. */
static void new_dir(char *buf, size_t len)
{
	snprintf(buf, len, "%s/ost%u", base_dir, dir_seq++);
}

static void fill_random(void *buf, size_t len)
{
	unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)rand_r(&rand_seed);
}

static bool is_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

static struct oss_ost *new_ost(char *dir, size_t dirlen, uint32_t index)
{
	struct oss_ost *ost = NULL;

	new_dir(dir, dirlen);
	CU_ASSERT_EQUAL_FATAL(oss_ost_format(dir, FSNAME, index), 0);
	CU_ASSERT_EQUAL_FATAL(oss_ost_open(dir, FSNAME, TEST_PACK_FDS, &ost), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ost);
	return ost;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

/* ---- format and open ---- */

static void test_format_open(void)
{
	struct oss_ost *ost = NULL, *other = NULL;
	uint8_t uuid1[16], uuid2[16], uuid3[16], zero[16] = { 0 };
	char dir[512], dir2[512];

	new_dir(dir, sizeof(dir));
	CU_ASSERT_EQUAL(oss_ost_format(dir, FSNAME, 3), 0);
	CU_ASSERT_EQUAL_FATAL(oss_ost_open(dir, FSNAME, TEST_PACK_FDS, &ost), 0);
	CU_ASSERT_EQUAL(oss_ost_index(ost), 3);
	CU_ASSERT_STRING_EQUAL(oss_ost_dir(ost), dir);
	oss_ost_uuid(ost, uuid1);
	CU_ASSERT(memcmp(uuid1, zero, 16) != 0);
	oss_ost_close(ost);

	/* Reopening finds the same identity. */
	ost = NULL;
	CU_ASSERT_EQUAL_FATAL(oss_ost_open(dir, FSNAME, TEST_PACK_FDS, &ost), 0);
	CU_ASSERT_EQUAL(oss_ost_index(ost), 3);
	oss_ost_uuid(ost, uuid2);
	CU_ASSERT(memcmp(uuid1, uuid2, 16) == 0);
	oss_ost_close(ost);

	/* Another OST gets another uuid. */
	new_dir(dir2, sizeof(dir2));
	CU_ASSERT_EQUAL(oss_ost_format(dir2, FSNAME, 0), 0);
	CU_ASSERT_EQUAL_FATAL(oss_ost_open(dir2, FSNAME, TEST_PACK_FDS, &other), 0);
	CU_ASSERT_EQUAL(oss_ost_index(other), 0);
	oss_ost_uuid(other, uuid3);
	CU_ASSERT(memcmp(uuid1, uuid3, 16) != 0);
	oss_ost_close(other);

	/* A second format is refused and changes nothing. */
	CU_ASSERT_EQUAL(oss_ost_format(dir, FSNAME, 7), -EEXIST);
	CU_ASSERT_EQUAL(oss_ost_format(dir, "otherfs", 3), -EEXIST);
	ost = NULL;
	CU_ASSERT_EQUAL_FATAL(oss_ost_open(dir, FSNAME, TEST_PACK_FDS, &ost), 0);
	CU_ASSERT_EQUAL(oss_ost_index(ost), 3);
	oss_ost_uuid(ost, uuid2);
	CU_ASSERT(memcmp(uuid1, uuid2, 16) == 0);
	oss_ost_close(ost);

	/* NULL fsname opens whatever filesystem the target belongs to. */
	ost = NULL;
	CU_ASSERT_EQUAL(oss_ost_open(dir, NULL, TEST_PACK_FDS, &ost), 0);
	oss_ost_close(ost);
	oss_ost_close(NULL);
}

static void test_open_errors(void)
{
	struct oss_ost *ost = (struct oss_ost *)&ost;
	char dir[512], path[600];

	/* An existing empty directory is not formatted. */
	new_dir(dir, sizeof(dir));
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	CU_ASSERT_EQUAL(oss_ost_open(dir, FSNAME, TEST_PACK_FDS, &ost), -NC_E_NOTFMT);
	CU_ASSERT_PTR_NULL(ost);

	/* A missing directory is reported as such. */
	snprintf(path, sizeof(path), "%s/missing", dir);
	CU_ASSERT_EQUAL(oss_ost_open(path, FSNAME, TEST_PACK_FDS, &ost), -ENOENT);

	/* Another filesystem's OST. */
	new_dir(dir, sizeof(dir));
	CU_ASSERT_EQUAL(oss_ost_format(dir, "otherfs", 1), 0);
	CU_ASSERT_EQUAL(oss_ost_open(dir, FSNAME, TEST_PACK_FDS, &ost), -NC_E_FSNAME);
	CU_ASSERT_PTR_NULL(ost);
	CU_ASSERT_EQUAL(oss_ost_open(dir, "otherfs", TEST_PACK_FDS, &ost), 0);
	oss_ost_close(ost);

	/* Bad arguments to format. */
	new_dir(dir, sizeof(dir));
	CU_ASSERT_EQUAL(oss_ost_format(dir, "", 0), -EINVAL);
	CU_ASSERT_EQUAL(oss_ost_format(dir, "bad\nname", 0), -EINVAL);
	CU_ASSERT_EQUAL(oss_ost_format(dir, "bad=name", 0), -EINVAL);
	CU_ASSERT_EQUAL(oss_ost_format(dir,
				       "a-name-longer-than-thirty-one-chars", 0),
			-EINVAL);
	CU_ASSERT_EQUAL(oss_ost_format(dir, FSNAME, NC_OST_ANY), -EINVAL);
	/* A parent that does not exist is not created. */
	snprintf(path, sizeof(path), "%s/a/b", dir);
	CU_ASSERT_EQUAL(oss_ost_format(path, FSNAME, 0), -ENOENT);
}

/* Each case is an ost.conf that must be refused as corrupt. */
static void test_open_corrupt(void)
{
	static const char *const bad[] = {
		"",
		"fsname=" FSNAME "\nindex=1\n",
		"fsname=" FSNAME "\nuuid=6f1c1e4e-8d2a-4b8e-9d5b-3a2c1b0a9f8e\n",
		"index=1\nuuid=6f1c1e4e-8d2a-4b8e-9d5b-3a2c1b0a9f8e\n",
		"fsname=" FSNAME "\nindex=1\nuuid=not-a-uuid\n",
		"fsname=" FSNAME "\nindex=1\nuuid=00000000-0000-0000-0000-000000000000\n",
		"fsname=" FSNAME "\nindex=x1\nuuid=6f1c1e4e-8d2a-4b8e-9d5b-3a2c1b0a9f8e\n",
		"fsname=" FSNAME "\nindex=\nuuid=6f1c1e4e-8d2a-4b8e-9d5b-3a2c1b0a9f8e\n",
		"fsname=" FSNAME "\nindex=99999999999\nuuid=6f1c1e4e-8d2a-4b8e-9d5b-3a2c1b0a9f8e\n",
		"fsname=" FSNAME "\nindex=1\nindex=2\nuuid=6f1c1e4e-8d2a-4b8e-9d5b-3a2c1b0a9f8e\n",
		"fsname=\nindex=1\nuuid=6f1c1e4e-8d2a-4b8e-9d5b-3a2c1b0a9f8e\n",
		"garbage\n",
	};
	struct oss_ost *ost = NULL;
	char dir[512], path[600], *big;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		new_dir(dir, sizeof(dir));
		CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
		snprintf(path, sizeof(path), "%s/O", dir);
		CU_ASSERT_EQUAL_FATAL(mkdir(path, 0755), 0);
		write_file(dir, "ost.conf", bad[i]);
		CU_ASSERT_EQUAL(oss_ost_open(dir, FSNAME, TEST_PACK_FDS, &ost), -NC_E_CORRUPT);
		CU_ASSERT_PTR_NULL(ost);
	}

	/* A good file with an unknown key (from a later version) opens. */
	new_dir(dir, sizeof(dir));
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/O", dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(path, 0755), 0);
	write_file(dir, "ost.conf",
		   "fsname=" FSNAME "\nindex=12\nfuture=1\n"
		   "uuid=6f1c1e4e-8d2a-4b8e-9d5b-3a2c1b0a9f8e\n");
	CU_ASSERT_EQUAL_FATAL(oss_ost_open(dir, FSNAME, TEST_PACK_FDS, &ost), 0);
	CU_ASSERT_EQUAL(oss_ost_index(ost), 12);
	oss_ost_close(ost);
	ost = NULL;

	/* A huge ost.conf is not ours. */
	big = malloc(10000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	memset(big, 'a', 9999);
	big[9999] = '\0';
	write_file(dir, "ost.conf", big);
	free(big);
	CU_ASSERT_EQUAL(oss_ost_open(dir, FSNAME, TEST_PACK_FDS, &ost), -NC_E_CORRUPT);

	/* A formatted OST whose object directory vanished. */
	new_dir(dir, sizeof(dir));
	CU_ASSERT_EQUAL_FATAL(oss_ost_format(dir, FSNAME, 0), 0);
	snprintf(path, sizeof(path), "%s/O", dir);
	CU_ASSERT_EQUAL_FATAL(rmdir(path), 0);
	CU_ASSERT_EQUAL(oss_ost_open(dir, FSNAME, TEST_PACK_FDS, &ost), -NC_E_CORRUPT);
	CU_ASSERT_PTR_NULL(ost);
}

/* ---- object I/O ---- */

static void test_rw_roundtrip(void)
{
	enum { OBJ_LEN = 3 * 1024 * 1024 + 517 };
	struct nc_fid fid = { 0x200000401ull, 0x1234abull };
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char *shadow = calloc(1, OBJ_LEN);
	unsigned char *buf = malloc(OBJ_LEN + 4096);
	uint64_t end = 0, size, blocks;

	CU_ASSERT_FATAL(shadow && buf);
	/* Overlapping writes of random data at unaligned offsets. */
	for (int i = 0; i < 60; i++) {
		size_t len = (size_t)rand_r(&rand_seed) % 200000 + 1;
		uint64_t off = (uint64_t)rand_r(&rand_seed) % (OBJ_LEN - len);

		fill_random(shadow + off, len);
		CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, off, shadow + off,
					      len), 0);
		if (off + len > end)
			end = off + len;
	}
	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, &blocks), 0);
	CU_ASSERT_EQUAL(size, end);
	CU_ASSERT(blocks > 0);

	/* Whole object, then unaligned pieces. */
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, end), (ssize_t)end);
	CU_ASSERT(memcmp(buf, shadow, end) == 0);
	for (int i = 0; i < 40; i++) {
		size_t len = (size_t)rand_r(&rand_seed) % 100000 + 1;
		uint64_t off = (uint64_t)rand_r(&rand_seed) % (end - len);

		CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, off, buf, len),
				(ssize_t)len);
		CU_ASSERT(memcmp(buf, shadow + off, len) == 0);
	}

	/* Past the end: a short read, then nothing. */
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, end - 10, buf, 4096), 10);
	CU_ASSERT(memcmp(buf, shadow + end - 10, 10) == 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, end, buf, 4096), 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, end + 1000000, buf, 4096), 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, UINT64_MAX - 5, buf, 4096), 0);
	/* An offset no file can hold is refused for writes. */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, UINT64_MAX - 5, buf, 100),
			-EFBIG);

	/* The data lasts across close and reopen. */
	oss_ost_close(ost);
	ost = NULL;
	CU_ASSERT_EQUAL_FATAL(oss_ost_open(dir, FSNAME, TEST_PACK_FDS, &ost), 0);
	CU_ASSERT_EQUAL(oss_obj_sync(ost, &fid), 0);
	memset(buf, 0, end);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, end), (ssize_t)end);
	CU_ASSERT(memcmp(buf, shadow, end) == 0);

	oss_ost_close(ost);
	free(buf);
	free(shadow);
}

static void test_missing_object(void)
{
	struct nc_fid fid = { 0x200000401ull, 0x77ull };
	char dir[512], buf[100];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 1);
	uint64_t size = 42, blocks = 42;

	memset(buf, 'x', sizeof(buf));
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, &blocks), -ENOENT);
	CU_ASSERT_EQUAL(size, 42);
	CU_ASSERT_EQUAL(oss_obj_sync(ost, &fid), 0);
	CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, 0, 4096), 0);
	CU_ASSERT_EQUAL(oss_obj_destroy(ost, &fid), 0);
	/* Truncating a missing object to 0 creates nothing. */
	CU_ASSERT_EQUAL(oss_obj_truncate(ost, &fid, 0), 0);
	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, &blocks), -ENOENT);
	/* None of the calls above created the object. */
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, sizeof(buf)), 0);
	oss_ost_close(ost);
}

static void test_sparse(void)
{
	enum { HOLE = 1024 * 1024 + 3 };
	struct nc_fid fid = { 0x200000401ull, 0x10ull };
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char data[5000], *buf = malloc(HOLE + sizeof(data));
	uint64_t size, blocks;

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	fill_random(data, sizeof(data));
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, HOLE, data, sizeof(data)), 0);
	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, &blocks), 0);
	CU_ASSERT_EQUAL(size, HOLE + sizeof(data));
	memset(buf, 0xff, HOLE + sizeof(data));
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, HOLE + sizeof(data)),
			(ssize_t)(HOLE + sizeof(data)));
	CU_ASSERT(is_zero(buf, HOLE));
	CU_ASSERT(memcmp(buf + HOLE, data, sizeof(data)) == 0);
	/* A zero-length write still creates the object. */
	fid.f_oid = 0x11;
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, 0), 0);
	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, &blocks), 0);
	CU_ASSERT_EQUAL(size, 0);
	oss_ost_close(ost);
	free(buf);
}

static void test_truncate(void)
{
	struct nc_fid fid = { 0x200000401ull, 0x20ull };
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char data[10000], buf[10000];
	uint64_t size, blocks;

	fill_random(data, sizeof(data));
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, sizeof(data)), 0);
	/* Down. */
	CU_ASSERT_EQUAL(oss_obj_truncate(ost, &fid, 3000), 0);
	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, &blocks), 0);
	CU_ASSERT_EQUAL(size, 3000);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, sizeof(buf)), 3000);
	CU_ASSERT(memcmp(buf, data, 3000) == 0);
	/* Up: the new tail reads as zeros. */
	CU_ASSERT_EQUAL(oss_obj_truncate(ost, &fid, 8000), 0);
	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, &blocks), 0);
	CU_ASSERT_EQUAL(size, 8000);
	memset(buf, 0xff, sizeof(buf));
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, sizeof(buf)), 8000);
	CU_ASSERT(memcmp(buf, data, 3000) == 0);
	CU_ASSERT(is_zero(buf + 3000, 5000));
	/* To zero. */
	CU_ASSERT_EQUAL(oss_obj_truncate(ost, &fid, 0), 0);
	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, &blocks), 0);
	CU_ASSERT_EQUAL(size, 0);
	/* A missing object truncated to a size is created with that size. */
	fid.f_oid = 0x21;
	CU_ASSERT_EQUAL(oss_obj_truncate(ost, &fid, 5000), 0);
	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, &blocks), 0);
	CU_ASSERT_EQUAL(size, 5000);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, sizeof(buf)), 5000);
	CU_ASSERT(is_zero(buf, 5000));
	CU_ASSERT_EQUAL(oss_obj_truncate(ost, &fid, UINT64_MAX), -EFBIG);
	oss_ost_close(ost);
}

static void test_punch(void)
{
	enum { LEN = 64 * 1024 };
	struct nc_fid fid = { 0x200000401ull, 0x30ull };
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char *data = malloc(LEN), *buf = malloc(LEN);
	uint64_t size, blocks;

	CU_ASSERT_FATAL(data && buf);
	fill_random(data, LEN);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, LEN), 0);

	/* An aligned hole and an unaligned one. */
	CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, 4096, 8192), 0);
	memset(data + 4096, 0, 8192);
	CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, 30001, 777), 0);
	memset(data + 30001, 0, 777);
	/* Zero length does nothing; past the end keeps the size. */
	CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, 100, 0), 0);
	CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, LEN - 100, 1 << 20), 0);
	memset(data + LEN - 100, 0, 100);
	CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, 1ull << 40, 4096), 0);
	CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, UINT64_MAX - 1, 4096), 0);

	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, &blocks), 0);
	CU_ASSERT_EQUAL(size, LEN);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, LEN), LEN);
	CU_ASSERT(memcmp(buf, data, LEN) == 0);
	oss_ost_close(ost);
	free(buf);
	free(data);
}

static void test_destroy(void)
{
	struct nc_fid fid = { 0x200000401ull, 0xabcdefull };
	char dir[512], path[700], fs[NC_FID_STR_LEN];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	struct stat st;
	uint64_t size, blocks;

	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, "hello", 5), 0);
	/* The object lives at DIR/O/XX/SEQ:OID, XX the oid's low byte. */
	nc_fid_to_str(&fid, fs);
	snprintf(path, sizeof(path), "%s/O/ef/%s", dir, fs);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT(S_ISREG(st.st_mode));
	CU_ASSERT_EQUAL(st.st_size, 5);

	CU_ASSERT_EQUAL(oss_obj_destroy(ost, &fid), 0);
	CU_ASSERT_EQUAL(stat(path, &st), -1);
	CU_ASSERT_EQUAL(errno, ENOENT);
	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, &blocks), -ENOENT);
	CU_ASSERT_EQUAL(oss_obj_destroy(ost, &fid), 0);
	oss_ost_close(ost);
}

static void test_stat_statfs(void)
{
	struct nc_fid fid = { 0x200000401ull, 0x40ull };
	char dir[512], data[12345];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	struct nc_statfs st;
	uint64_t size, blocks;

	memset(data, 'a', sizeof(data));
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, sizeof(data)), 0);
	CU_ASSERT_EQUAL(oss_obj_sync(ost, &fid), 0);
	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, &blocks), 0);
	CU_ASSERT_EQUAL(size, sizeof(data));
	CU_ASSERT(blocks * 512 >= sizeof(data));
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 20000, data, 1), 0);
	CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, NULL), 0);
	CU_ASSERT_EQUAL(size, 20001);

	memset(&st, 0, sizeof(st));
	CU_ASSERT_EQUAL(oss_ost_statfs(ost, &st), 0);
	CU_ASSERT(st.s_avail > 0);
	CU_ASSERT(st.s_total >= st.s_free);
	CU_ASSERT(st.s_free >= st.s_avail);
	CU_ASSERT(st.s_bsize > 0);
	CU_ASSERT_EQUAL(st.s_namemax, 255);
	CU_ASSERT(st.s_ffree <= st.s_files);
	oss_ost_close(ost);
}

/* A write error from the filesystem comes back as its errno. */
static void test_write_error(void)
{
	struct nc_fid fid = { 0x200000401ull, 0x50ull };
	char dir[512], data[8192];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	struct rlimit old, lim;
	void (*old_handler)(int);

	memset(data, 'z', sizeof(data));
	CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_FSIZE, &old), 0);
	old_handler = signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = 1 << 20;
	CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_FSIZE, &lim), 0);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 2 << 20, data, sizeof(data)),
			-EFBIG);
	CU_ASSERT_EQUAL(oss_obj_truncate(ost, &fid, 4 << 20), -EFBIG);
	/* A write that crosses the limit fails after its short part. */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, (1 << 20) - 100, data,
				      sizeof(data)),
			-EFBIG);
	CU_ASSERT_EQUAL(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, old_handler);
	/* The part that did land has checksums that match it. */
	{
		uint64_t size = 0;
		uint32_t nbad = 1;
		bool more = true;
		char *buf = malloc(1 << 20);

		CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
		CU_ASSERT_EQUAL(oss_obj_stat(ost, &fid, &size, NULL), 0);
		CU_ASSERT_EQUAL(size, 1 << 20);
		CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, 1 << 20),
				1 << 20);
		CU_ASSERT(memcmp(buf + (1 << 20) - 100, data, 100) == 0);
		CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, 0, 0, NULL, 0, &nbad,
					       &more), 0);
		CU_ASSERT_EQUAL(nbad, 0);
		CU_ASSERT_FALSE(more);
		free(buf);
	}
	oss_ost_close(ost);
}

/* ---- checksums ---- */

#define BLK OSS_CSUM_BLOCK

/* Flips one bit of the object's byte at @off, behind the store's back. */
static void flip_byte(const char *dir, const struct nc_fid *fid, uint64_t off,
		      const char *suffix)
{
	char path[700], fs[NC_FID_STR_LEN];
	unsigned char c;
	int fd;

	nc_fid_to_str(fid, fs);
	snprintf(path, sizeof(path), "%s/O/%02x/%s%s", dir,
		 (unsigned int)(fid->f_oid & 0xff), fs, suffix);
	fd = open(path, O_RDWR);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(pread(fd, &c, 1, (off_t)off), 1);
	c ^= 0x10;
	CU_ASSERT_EQUAL_FATAL(pwrite(fd, &c, 1, (off_t)off), 1);
	close(fd);
}

/* Verifies the whole object; returns the number of bad blocks. */
static uint32_t count_bad(struct oss_ost *ost, const struct nc_fid *fid)
{
	uint64_t bad[16];
	uint32_t nbad = 99;
	bool more = true;

	CU_ASSERT_EQUAL(oss_obj_verify(ost, fid, 0, 0, bad, 16, &nbad, &more),
			0);
	CU_ASSERT_FALSE(more);
	return nbad;
}

/* The sidecar holds one little-endian CRC32C per block, the last over the
 * bytes present only. */
static void test_csum_format(void)
{
	enum { LEN = 3 * BLK + 1234 };
	struct nc_fid fid = { 0x200000401ull, 0x60ull };
	char dir[512], path[700], fs[NC_FID_STR_LEN];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char data[LEN], raw[4 * 4];
	struct stat st;
	int fd;

	fill_random(data, sizeof(data));
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, 1000), 0);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 1000, data + 1000,
				      LEN - 1000), 0);
	nc_fid_to_str(&fid, fs);
	snprintf(path, sizeof(path), "%s/O/60/%s.crc", dir, fs);
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_size, 16);
	fd = open(path, O_RDONLY);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(pread(fd, raw, sizeof(raw), 0), 16);
	close(fd);
	for (int i = 0; i < 4; i++) {
		size_t n = i < 3 ? BLK : 1234;
		uint32_t want = nc_crc32c(0, data + (size_t)i * BLK, n);
		uint32_t got = (uint32_t)raw[i * 4] |
			       (uint32_t)raw[i * 4 + 1] << 8 |
			       (uint32_t)raw[i * 4 + 2] << 16 |
			       (uint32_t)raw[i * 4 + 3] << 24;

		CU_ASSERT_EQUAL(got, want);
	}
	/* The standard CRC32C check value. */
	CU_ASSERT_EQUAL(nc_crc32c(0, "123456789", 9), 0xe3069283u);
	/* Destroy removes both files. */
	CU_ASSERT_EQUAL(oss_obj_destroy(ost, &fid), 0);
	CU_ASSERT_EQUAL(stat(path, &st), -1);
	CU_ASSERT_EQUAL(errno, ENOENT);
	oss_ost_close(ost);
}

static void test_csum_corruption(void)
{
	enum { LEN = 6 * BLK + 1000 };
	struct nc_fid fid = { 0x200000401ull, 0x61ull };
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char data[LEN], buf[LEN];
	uint64_t bad[8];
	uint32_t nbad;
	bool more;

	fill_random(data, sizeof(data));
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, LEN), 0);
	CU_ASSERT_EQUAL(count_bad(ost, &fid), 0);

	/* One byte of block 2 goes bad on disk. */
	flip_byte(dir, &fid, 2 * BLK + 17, "");
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, LEN), -NC_E_CHECKSUM);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 2 * BLK + 100, buf, 1),
			-NC_E_CHECKSUM);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, BLK + 5, buf, BLK),
			-NC_E_CHECKSUM);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 2 * BLK, buf, BLK),
			-NC_E_CHECKSUM);
	/* Blocks around it still read. */
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, 2 * BLK), 2 * BLK);
	CU_ASSERT(memcmp(buf, data, 2 * BLK) == 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 100, buf, 2 * BLK - 100),
			2 * BLK - 100);
	CU_ASSERT(memcmp(buf, data + 100, 2 * BLK - 100) == 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 3 * BLK, buf, LEN),
			LEN - 3 * BLK);
	CU_ASSERT(memcmp(buf, data + 3 * BLK, LEN - 3 * BLK) == 0);

	/* Verify lists exactly that block, whole object or a range. */
	CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, 0, 0, bad, 8, &nbad, &more),
			0);
	CU_ASSERT_EQUAL(nbad, 1);
	CU_ASSERT_EQUAL(bad[0], 2 * BLK);
	CU_ASSERT_FALSE(more);
	CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, 2 * BLK + 4095, 1, bad, 8,
				       &nbad, &more), 0);
	CU_ASSERT_EQUAL(nbad, 1);
	CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, 0, 2 * BLK, bad, 8, &nbad,
				       &more), 0);
	CU_ASSERT_EQUAL(nbad, 0);
	CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, 3 * BLK, 0, bad, 8, &nbad,
				       &more), 0);
	CU_ASSERT_EQUAL(nbad, 0);
	CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, LEN, 0, bad, 8, &nbad,
				       &more), 0);
	CU_ASSERT_EQUAL(nbad, 0);
	/* No room for the list: only "more". */
	CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, 0, 0, bad, 0, &nbad, &more),
			0);
	CU_ASSERT_EQUAL(nbad, 0);
	CU_ASSERT_TRUE(more);

	/* Rewriting the block whole heals it. */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 2 * BLK, data + 2 * BLK, BLK),
			0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, LEN), LEN);
	CU_ASSERT(memcmp(buf, data, LEN) == 0);
	CU_ASSERT_EQUAL(count_bad(ost, &fid), 0);

	/* A bad checksum entry is caught the same way; so is a bad byte in
	 * the partial last block. */
	flip_byte(dir, &fid, 4 * 4 + 1, ".crc");
	flip_byte(dir, &fid, LEN - 1, "");
	CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, 0, 0, bad, 8, &nbad, &more),
			0);
	CU_ASSERT_EQUAL(nbad, 2);
	CU_ASSERT_EQUAL(bad[0], 4 * BLK);
	CU_ASSERT_EQUAL(bad[1], 6 * BLK);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, LEN - 10, buf, 10),
			-NC_E_CHECKSUM);
	oss_ost_close(ost);
}

/* Reads @h's bytes back through its file, as the sender would. */
static bool hold_matches(const struct oss_read_hold *h, const unsigned char *want)
{
	unsigned char *got = malloc(h->rh_len ? h->rh_len : 1);
	bool same;

	if (!got)
		return false;
	same = pread(h->rh_fd, got, h->rh_len, (off_t)h->rh_off) == (ssize_t)h->rh_len &&
	       memcmp(got, want, h->rh_len) == 0;
	free(got);
	return same;
}

/* oss_obj_read_hold() checks what oss_obj_read() checks, copying nothing. */
static void test_read_hold(void)
{
	enum { LEN = 6 * BLK + 1000 };
	struct nc_fid fid = { 0x200000401ull, 0x62ull };
	struct nc_fid none = { 0x200000401ull, 0x63ull };
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char data[LEN];
	struct oss_read_hold h;

	fill_random(data, sizeof(data));
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, LEN), 0);
	/* Whole, unaligned, and clipped at the end. */
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 0, LEN, &h), LEN);
	CU_ASSERT(hold_matches(&h, data));
	oss_obj_read_release(&h);
	CU_ASSERT_EQUAL(h.rh_fd, -1);
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, BLK + 7, 2 * BLK, &h), 2 * BLK);
	CU_ASSERT_EQUAL(h.rh_off, BLK + 7);
	CU_ASSERT(hold_matches(&h, data + BLK + 7));
	oss_obj_read_release(&h);
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, LEN - 10, 100, &h), 10);
	CU_ASSERT(hold_matches(&h, data + LEN - 10));
	oss_obj_read_release(&h);
	/* Past the end, a missing object, nothing asked: nothing held. */
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, LEN, 100, &h), 0);
	CU_ASSERT_EQUAL(h.rh_fd, -1);
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &none, 0, 100, &h), 0);
	CU_ASSERT_EQUAL(h.rh_fd, -1);
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 0, 0, &h), 0);
	oss_obj_read_release(&h);       /* a no-op */
	/* A bad byte fails every range that touches its block, only those. */
	flip_byte(dir, &fid, 2 * BLK + 17, "");
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 0, LEN, &h), -NC_E_CHECKSUM);
	CU_ASSERT_EQUAL(h.rh_fd, -1);
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 2 * BLK + 4000, 1, &h), -NC_E_CHECKSUM);
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, BLK, BLK + 1, &h), -NC_E_CHECKSUM);
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 0, 2 * BLK, &h), 2 * BLK);
	CU_ASSERT(hold_matches(&h, data));
	oss_obj_read_release(&h);
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 3 * BLK, LEN, &h), LEN - 3 * BLK);
	CU_ASSERT(hold_matches(&h, data + 3 * BLK));
	oss_obj_read_release(&h);
	/* A bad checksum entry, and the partial last block. */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 2 * BLK, data + 2 * BLK, BLK), 0);
	flip_byte(dir, &fid, LEN - 1, "");
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, LEN - 5, 5, &h), -NC_E_CHECKSUM);
	flip_byte(dir, &fid, 4 * 4 + 1, ".crc");
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 4 * BLK + 1, 1, &h), -NC_E_CHECKSUM);
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 0, 4 * BLK, &h), 4 * BLK);
	oss_obj_read_release(&h);
	oss_ost_close(ost);
}

/* Descriptors this process has open. */
static int open_fds(void)
{
	char path[64];
	int n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (access(path, F_OK) == 0)
			n++;
	}
	return n;
}

/*
 * Pack objects (sequence NC_PACK_FID_SEQ) stay open between reads
 * (oss/fdcache.h): a destroyed one is never read from the cache, a reply
 * held across its destroy still reads the old bytes, entries evicted while
 * held stay readable, and nothing is left open at the end.
 */
static void test_pack_fd_cache(void)
{
	enum { LEN = 3 * BLK + 5, NPACKS = 40 };
	struct nc_fid pack = { NC_PACK_FID_SEQ, 7 };
	struct nc_fid plain = { 0x200000401ull, 0x70ull };
	char dir[512];
	struct oss_ost *ost;
	unsigned char a[LEN], b[LEN], got[LEN];
	struct oss_read_hold h, held;
	int base;

	base = open_fds();
	ost = new_ost(dir, sizeof(dir), 0);
	fill_random(a, sizeof(a));
	fill_random(b, sizeof(b));

	/* A plain object is closed after each read, a pack stays open. */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &plain, 0, a, LEN), 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &plain, 0, got, LEN), LEN);
	CU_ASSERT_EQUAL(memcmp(got, a, LEN), 0);
	CU_ASSERT_EQUAL(open_fds(), base + 1);  /* the OST's object directory */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &pack, 0, a, LEN), 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &pack, 0, got, LEN), LEN);
	CU_ASSERT_EQUAL(memcmp(got, a, LEN), 0);
	CU_ASSERT_EQUAL(open_fds(), base + 1 + 2);
	/* A pack grows while it is open: its new end is read. */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &pack, LEN, b, 100), 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &pack, LEN - 5, got, 200), 105);
	CU_ASSERT_EQUAL(memcmp(got, a + LEN - 5, 5), 0);
	CU_ASSERT_EQUAL(memcmp(got + 5, b, 100), 0);
	/* A bad byte on disk is still caught through the open descriptors. */
	flip_byte(dir, &pack, BLK + 3, "");
	CU_ASSERT_EQUAL(oss_obj_read(ost, &pack, BLK, got, 10), -NC_E_CHECKSUM);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &pack, 0, a, LEN), 0);

	/* Held across a destroy: the old bytes; after it, no object. */
	CU_ASSERT_EQUAL_FATAL(oss_obj_read_hold(ost, &pack, 0, LEN, &held), LEN);
	CU_ASSERT_EQUAL(oss_obj_destroy(ost, &pack), 0);
	CU_ASSERT(hold_matches(&held, a));
	CU_ASSERT_EQUAL(oss_obj_read(ost, &pack, 0, got, LEN), 0);
	oss_obj_read_release(&held);
	CU_ASSERT_EQUAL(open_fds(), base + 1);
	/* Made again with other bytes: those are read, not the old file's. */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &pack, 0, b, LEN), 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &pack, 0, got, LEN), LEN);
	CU_ASSERT_EQUAL(memcmp(got, b, LEN), 0);

	/* More packs than the cache holds, one held while it is evicted. */
	CU_ASSERT_EQUAL_FATAL(oss_obj_read_hold(ost, &pack, 0, LEN, &held), LEN);
	for (int round = 0; round < 2; round++) {
		for (uint64_t i = 0; i < NPACKS; i++) {
			struct nc_fid p = { NC_PACK_FID_SEQ, 100 + i };

			a[0] = (unsigned char)i;
			if (round == 0)
				CU_ASSERT_EQUAL(oss_obj_write(ost, &p, 0, a, LEN), 0);
			CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &p, 0, LEN, &h), LEN);
			CU_ASSERT(hold_matches(&h, a));
			oss_obj_read_release(&h);
		}
	}
	CU_ASSERT(hold_matches(&held, b));
	oss_obj_read_release(&held);
	CU_ASSERT_EQUAL(open_fds(), base + 1 + 2 * TEST_PACK_FDS);
	oss_ost_close(ost);
	CU_ASSERT_EQUAL(open_fds(), base);

	/* An OST that keeps none opens and closes each time. */
	CU_ASSERT_EQUAL_FATAL(oss_ost_open(dir, FSNAME, 0, &ost), 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &pack, 0, got, LEN), LEN);
	CU_ASSERT_EQUAL(memcmp(got, b, LEN), 0);
	CU_ASSERT_EQUAL(open_fds(), base + 1);
	oss_ost_close(ost);
}

/* fdc_entry FDC FID: a cached entry for FID whose two descriptors are
 * /dev/null (the cache owns them). */
static struct oss_fdc_ent *fdc_entry(struct oss_fdcache *c, uint64_t oid)
{
	struct nc_fid fid = { NC_PACK_FID_SEQ, oid };
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int cfd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	CU_ASSERT_FATAL(fd >= 0 && cfd >= 0);
	return oss_fdc_add(c, &fid, fd, cfd);
}

/* The cache by itself: thousands of entries found again, the one used
 * longest ago goes first, an entry held while it goes stays open until
 * put, and nothing is left open. */
static void test_fdcache_table(void)
{
	struct oss_fdcache c;
	struct oss_fdc_ent *e, *held;
	struct nc_fid fid = { NC_PACK_FID_SEQ, 0 };
	struct rlimit rl;
	uint64_t N = 1000;
	int base, found = 0;

	/* Two descriptors an entry, as the OSS does (open_fds() looks at
	 * the first 4096). */
	nc_daemon_raise_nofile();
	CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 2 * N + 256)
		N = rl.rlim_cur > 512 ? (rl.rlim_cur - 256) / 2 : 128;
	base = open_fds();
	CU_ASSERT_EQUAL_FATAL(oss_fdc_init(&c, (unsigned int)N), 0);
	for (uint64_t i = 0; i < N; i++)
		oss_fdc_put(&c, fdc_entry(&c, i));
	CU_ASSERT_EQUAL(c.fc_count, N);
	CU_ASSERT_EQUAL(open_fds(), base + 2 * N);
	for (uint64_t i = 0; i < N; i++) {
		fid.f_oid = i;
		e = oss_fdc_get(&c, &fid);
		if (e) {
			found++;
			CU_ASSERT(nc_fid_eq(&e->fe_fid, &fid));
			oss_fdc_put(&c, e);
		}
	}
	CU_ASSERT_EQUAL(found, (int)N);
	/* Oid 0 is the one used longest ago, once 1 is used again: 0 goes
	 * for a new entry, held meanwhile; then 2 goes, not 1. */
	fid.f_oid = 0;
	held = oss_fdc_get(&c, &fid);
	CU_ASSERT_PTR_NOT_NULL_FATAL(held);
	fid.f_oid = 1;
	oss_fdc_put(&c, oss_fdc_get(&c, &fid));
	for (uint64_t i = 2; i < N; i++) {
		fid.f_oid = i;
		oss_fdc_put(&c, oss_fdc_get(&c, &fid));
	}
	fid.f_oid = 1;
	oss_fdc_put(&c, oss_fdc_get(&c, &fid));
	oss_fdc_put(&c, fdc_entry(&c, N));      /* 0 goes, still held */
	fid.f_oid = 0;
	CU_ASSERT_PTR_NULL(oss_fdc_get(&c, &fid));
	CU_ASSERT_EQUAL(open_fds(), base + 2 * (N + 1));
	oss_fdc_put(&c, held);
	CU_ASSERT_EQUAL(open_fds(), base + 2 * N);
	oss_fdc_put(&c, fdc_entry(&c, N + 1));  /* 2 goes */
	fid.f_oid = 2;
	CU_ASSERT_PTR_NULL(oss_fdc_get(&c, &fid));
	fid.f_oid = 1;
	e = oss_fdc_get(&c, &fid);
	CU_ASSERT_PTR_NOT_NULL(e);
	oss_fdc_put(&c, e);
	/* Dropped: gone at once. */
	oss_fdc_drop(&c, &fid);
	CU_ASSERT_PTR_NULL(oss_fdc_get(&c, &fid));
	CU_ASSERT_EQUAL(c.fc_count, N - 1);
	oss_fdc_fini(&c);
	CU_ASSERT_EQUAL(open_fds(), base);

	/* Sizing: a quarter of the descriptors, two per pack, shared by the
	 * OSTs, capped; none under the minimum limit. */
	CU_ASSERT_EQUAL(oss_fdc_size_for(1024, 1), 0);
	CU_ASSERT_EQUAL(oss_fdc_size_for(OSS_FDC_MIN_NOFILE - 1, 1), 0);
	CU_ASSERT_EQUAL(oss_fdc_size_for(OSS_FDC_MIN_NOFILE, 1), OSS_FDC_MIN_NOFILE / 8);
	CU_ASSERT_EQUAL(oss_fdc_size_for(20000, 1), 2500);
	CU_ASSERT_EQUAL(oss_fdc_size_for(20000, 4), 625);
	CU_ASSERT_EQUAL(oss_fdc_size_for(1048576, 1), OSS_FDC_MAX);
	CU_ASSERT_EQUAL(oss_fdc_size_for(UINT64_MAX, 8), OSS_FDC_MAX);
	CU_ASSERT_EQUAL(oss_fdc_size_for(20000, 0), 0);
}

/* A large range is checked in pieces of the thread's buffer (256 KiB, 64
 * blocks): the same answers, whichever piece holds the bad block. */
static void test_read_hold_large(void)
{
	const size_t len = 300 * BLK + 123;
	struct nc_fid fid = { 0x200000401ull, 0x64ull };
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char *data = malloc(len);
	struct oss_read_hold h;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	fill_random(data, len);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, len), 0);
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 0, len, &h), (ssize_t)len);
	CU_ASSERT(hold_matches(&h, data));
	oss_obj_read_release(&h);
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 7, len, &h), (ssize_t)(len - 7));
	CU_ASSERT(hold_matches(&h, data + 7));
	oss_obj_read_release(&h);
	flip_byte(dir, &fid, 250 * BLK + 9, "");
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 0, len, &h), -NC_E_CHECKSUM);
	CU_ASSERT_EQUAL(h.rh_fd, -1);
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 0, 250 * BLK, &h), (ssize_t)(250 * BLK));
	CU_ASSERT(hold_matches(&h, data));
	oss_obj_read_release(&h);
	flip_byte(dir, &fid, len - 1, "");
	CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 251 * BLK, len, &h), -NC_E_CHECKSUM);
	/* The last block of the first piece, then the first of the second:
	 * a read over it fails, the other piece reads back. */
	const struct { uint64_t bad, good_off, good_len; } edge[] = {
		{ 64 * BLK - 1, 64 * BLK, len - 64 * BLK },
		{ 64 * BLK, 0, 64 * BLK },
	};
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		fid.f_oid++;
		CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, len), 0);
		flip_byte(dir, &fid, edge[i].bad, "");
		CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, 7, len, &h), -NC_E_CHECKSUM);
		CU_ASSERT_EQUAL(oss_obj_read_hold(ost, &fid, edge[i].good_off,
						  edge[i].good_len, &h),
				(ssize_t)edge[i].good_len);
		CU_ASSERT(hold_matches(&h, data + edge[i].good_off));
		oss_obj_read_release(&h);
	}
	free(data);
	oss_ost_close(ost);
}

/* Whole aligned pages from an aligned buffer go to disk with O_DIRECT: the
 * bytes and their checksums are the same as through the page cache, and
 * partial writes over them still merge. */
static void test_direct_writes(void)
{
	const size_t len = 64 * BLK;
	struct nc_fid fid = { 0x200000401ull, 0x65ull };
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char *data = NULL, *back = malloc(3 * len);
	uint64_t bad[4];
	uint32_t nbad;
	bool more;

	CU_ASSERT_EQUAL_FATAL(posix_memalign((void **)&data, 4096, 3 * len), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	fill_random(data, 3 * len);
	/* Aligned (direct), then a hole, then aligned again past it. */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, len), 0);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 2 * len, data + 2 * len, len), 0);
	memset(data + len, 0, len);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, back, 3 * len), (ssize_t)(3 * len));
	CU_ASSERT(memcmp(back, data, 3 * len) == 0);
	/* A few bytes into a page written directly: merged and summed. */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 5 * BLK + 7, "nacre", 5), 0);
	memcpy(data + 5 * BLK + 7, "nacre", 5);
	/* A direct rewrite over cached pages. */
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, back, len), (ssize_t)len);
	fill_random(data + 2 * len, len);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 2 * len, data + 2 * len, len), 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, back, 3 * len), (ssize_t)(3 * len));
	CU_ASSERT(memcmp(back, data, 3 * len) == 0);
	CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, 0, 0, bad, 4, &nbad, &more), 0);
	CU_ASSERT_EQUAL(nbad, 0);
	free(data);
	free(back);
	oss_ost_close(ost);
}

/* A partial rewrite of a bad block must not make its old bytes pass. */
static void test_csum_partial_rewrite(void)
{
	enum { LEN = 4 * BLK };
	struct nc_fid fid = { 0x200000401ull, 0x62ull };
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char data[LEN], buf[LEN];

	fill_random(data, sizeof(data));
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, LEN), 0);
	flip_byte(dir, &fid, BLK + 3000, "");
	/* Write the head of the block: the write succeeds, the block stays
	 * bad. */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, BLK, data, 100), 0);
	memcpy(data + BLK, data, 100);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, BLK, buf, 10), -NC_E_CHECKSUM);
	CU_ASSERT_EQUAL(count_bad(ost, &fid), 1);
	/* Same through truncate and punch of part of it. */
	CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, BLK + 10, 20), 0);
	memset(data + BLK + 10, 0, 20);
	CU_ASSERT_EQUAL(count_bad(ost, &fid), 1);
	CU_ASSERT_EQUAL(oss_obj_truncate(ost, &fid, BLK + 3500), 0);
	CU_ASSERT_EQUAL(count_bad(ost, &fid), 1);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, BLK), BLK);
	CU_ASSERT(memcmp(buf, data, BLK) == 0);
	/* Overwritten whole, it is good again. */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, BLK, data + BLK, 3500), 0);
	CU_ASSERT_EQUAL(count_bad(ost, &fid), 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, LEN), BLK + 3500);
	CU_ASSERT(memcmp(buf, data, BLK + 3500) == 0);
	oss_ost_close(ost);
}

/* Holes (sparse writes, truncate up, punch) read as zeros and verify
 * clean; a hole that goes non-zero on disk does not. */
static void test_csum_holes(void)
{
	enum { LEN = 64 * BLK };
	struct nc_fid fid = { 0x200000401ull, 0x63ull };
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char *shadow = calloc(1, 2 * LEN), *buf = malloc(2 * LEN);
	uint64_t size = 0;

	CU_ASSERT_FATAL(shadow && buf);
	/* A partial block, then a write far past it leaving a hole. */
	fill_random(shadow, 5000);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, shadow, 5000), 0);
	fill_random(shadow + 20 * BLK + 7, 3000);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 20 * BLK + 7,
				      shadow + 20 * BLK + 7, 3000), 0);
	size = 20 * BLK + 3007;
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, 2 * LEN),
			(ssize_t)size);
	CU_ASSERT(memcmp(buf, shadow, size) == 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 3 * BLK + 1, buf, BLK),
			BLK);
	CU_ASSERT(is_zero(buf, BLK));
	CU_ASSERT_EQUAL(count_bad(ost, &fid), 0);

	/* Truncate up (unaligned old end), then down into a block, then up. */
	CU_ASSERT_EQUAL(oss_obj_truncate(ost, &fid, 30 * BLK + 5), 0);
	size = 30 * BLK + 5;
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, 2 * LEN),
			(ssize_t)size);
	CU_ASSERT(memcmp(buf, shadow, size) == 0);
	CU_ASSERT_EQUAL(oss_obj_truncate(ost, &fid, 20 * BLK + 1000), 0);
	size = 20 * BLK + 1000;
	memset(shadow + size, 0, 2 * LEN - size);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, 2 * LEN),
			(ssize_t)size);
	CU_ASSERT(memcmp(buf, shadow, size) == 0);
	CU_ASSERT_EQUAL(oss_obj_truncate(ost, &fid, 40 * BLK), 0);
	size = 40 * BLK;
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, 2 * LEN),
			(ssize_t)size);
	CU_ASSERT(memcmp(buf, shadow, size) == 0);
	CU_ASSERT_EQUAL(count_bad(ost, &fid), 0);

	/* Fill, then punch aligned, unaligned, and to past the end. */
	fill_random(shadow, LEN);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, shadow, LEN), 0);
	size = LEN;
	CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, 2 * BLK, 3 * BLK), 0);
	memset(shadow + 2 * BLK, 0, 3 * BLK);
	CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, 10 * BLK + 1, 5 * BLK), 0);
	memset(shadow + 10 * BLK + 1, 0, 5 * BLK);
	CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, 30 * BLK + 77, 50), 0);
	memset(shadow + 30 * BLK + 77, 0, 50);
	CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, LEN - 3 * BLK - 9, LEN), 0);
	memset(shadow + LEN - 3 * BLK - 9, 0, 3 * BLK + 9);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, buf, 2 * LEN), LEN);
	CU_ASSERT(memcmp(buf, shadow, LEN) == 0);
	CU_ASSERT_EQUAL(count_bad(ost, &fid), 0);
	for (int i = 0; i < 50; i++) {
		size_t len = (size_t)rand_r(&rand_seed) % (3 * BLK) + 1;
		uint64_t off = (uint64_t)rand_r(&rand_seed) % (LEN - len);

		CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, off, buf, len),
				(ssize_t)len);
		CU_ASSERT(memcmp(buf, shadow + off, len) == 0);
	}

	/* Garbage appearing inside a punched hole is caught. */
	flip_byte(dir, &fid, 3 * BLK + 5, "");
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 3 * BLK, buf, 10),
			-NC_E_CHECKSUM);
	CU_ASSERT_EQUAL(count_bad(ost, &fid), 1);
	oss_ost_close(ost);
	free(buf);
	free(shadow);
}

/* Verify reads in windows: bad blocks on both sides of a window edge, and
 * more bad blocks than the caller has room for. */
static void test_verify_large(void)
{
	enum { LEN = 20 * 1024 * 1024 + 333 };
	struct nc_fid fid = { 0x200000401ull, 0x64ull };
	static const uint64_t where[] = { 0, 8 * 1024 * 1024 - 1,
					  8 * 1024 * 1024, 19 * 1024 * 1024,
					  LEN - 1 };
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char *data = malloc(LEN);
	uint64_t bad[8];
	uint32_t nbad;
	bool more;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	fill_random(data, LEN);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, LEN), 0);
	CU_ASSERT_EQUAL(count_bad(ost, &fid), 0);
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		flip_byte(dir, &fid, where[i], "");
	CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, 0, 0, bad, 8, &nbad, &more),
			0);
	CU_ASSERT_EQUAL_FATAL(nbad, 5);
	CU_ASSERT_FALSE(more);
	for (size_t i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(bad[i], where[i] / BLK * BLK);
	CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, 0, 0, bad, 3, &nbad, &more),
			0);
	CU_ASSERT_EQUAL(nbad, 3);
	CU_ASSERT_TRUE(more);
	CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, 1, 8 * 1024 * 1024, bad, 8,
				       &nbad, &more), 0);
	CU_ASSERT_EQUAL(nbad, 3);
	CU_ASSERT_FALSE(more);
	/* A missing object verifies clean. */
	fid.f_oid = 0x65;
	nbad = 7;
	CU_ASSERT_EQUAL(oss_obj_verify(ost, &fid, 0, 0, bad, 8, &nbad, &more),
			0);
	CU_ASSERT_EQUAL(nbad, 0);
	CU_ASSERT_FALSE(more);
	oss_ost_close(ost);
	free(data);
}

/* Readers racing a writer never catch data and checksums out of step. */
#define RACE_LEN (64 * BLK)
#define RACE_READERS 3

struct racer {
	struct oss_ost *r_ost;
	struct nc_fid r_fid;
	unsigned int r_seed;
	volatile bool *r_stop;
	int r_reads;
	int r_errors;
};

static void *race_reader(void *arg)
{
	struct racer *r = arg;
	unsigned char *buf = malloc(RACE_LEN);

	if (!buf) {
		r->r_errors++;
		return NULL;
	}
	while (!*r->r_stop) {
		size_t len = (size_t)rand_r(&r->r_seed) % (8 * BLK) + 1;
		uint64_t off = (uint64_t)rand_r(&r->r_seed) % (RACE_LEN - len);
		ssize_t n = oss_obj_read(r->r_ost, &r->r_fid, off, buf, len);

		if (n < 0)
			r->r_errors++;
		r->r_reads++;
	}
	free(buf);
	return NULL;
}

static void test_csum_race(void)
{
	struct nc_fid fid = { 0x200000401ull, 0x66ull };
	struct racer r[RACE_READERS];
	pthread_t tid[RACE_READERS];
	volatile bool stop = false;
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char *data = malloc(RACE_LEN);
	unsigned int seed = 77;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	fill_random(data, RACE_LEN);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, data, RACE_LEN), 0);
	for (int i = 0; i < RACE_READERS; i++) {
		r[i] = (struct racer){ .r_ost = ost, .r_fid = fid,
				       .r_seed = 500u + (unsigned int)i,
				       .r_stop = &stop };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[i], NULL, race_reader,
						     &r[i]), 0);
	}
	for (int i = 0; i < 3000; i++) {
		size_t len = (size_t)rand_r(&seed) % (6 * BLK) + 1;
		uint64_t off = (uint64_t)rand_r(&seed) % (RACE_LEN - len);
		int op = rand_r(&seed) % 16;

		if (op == 0)
			CU_ASSERT_EQUAL(oss_obj_punch(ost, &fid, off, len), 0)
		else if (op == 1)
			CU_ASSERT_EQUAL(oss_obj_truncate(ost, &fid,
							 RACE_LEN - len), 0)
		else
			CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, off,
						      data + off, len), 0)
	}
	stop = true;
	for (int i = 0; i < RACE_READERS; i++) {
		pthread_join(tid[i], NULL);
		CU_ASSERT_EQUAL(r[i].r_errors, 0);
		CU_ASSERT(r[i].r_reads > 0);
	}
	CU_ASSERT_EQUAL(count_bad(ost, &fid), 0);
	oss_ost_close(ost);
	free(data);
}

/* ---- concurrency ---- */

#define N_THREADS 4
#define N_PIECES 64
#define PIECE 4093

struct writer {
	struct oss_ost *w_ost;
	struct nc_fid w_fid;
	unsigned int w_seed;
	unsigned char w_data[N_PIECES * PIECE];
	int w_errors;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	for (size_t i = 0; i < sizeof(w->w_data); i++)
		w->w_data[i] = (unsigned char)rand_r(&w->w_seed);
	/* Pieces in a shuffled order so the threads interleave. */
	for (int i = 0; i < N_PIECES; i++) {
		int p = (i * 37) % N_PIECES;

		if (oss_obj_write(w->w_ost, &w->w_fid, (uint64_t)p * PIECE,
				  w->w_data + (size_t)p * PIECE, PIECE))
			w->w_errors++;
	}
	return NULL;
}

static void test_concurrent_writers(void)
{
	static struct writer w[N_THREADS];
	pthread_t tid[N_THREADS];
	char dir[512];
	struct oss_ost *ost = new_ost(dir, sizeof(dir), 0);
	unsigned char *buf = malloc(N_PIECES * PIECE);

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	for (int i = 0; i < N_THREADS; i++) {
		w[i].w_ost = ost;
		w[i].w_fid.f_seq = 0x200000402ull;
		/* Same low byte: all threads race to create one XX dir. */
		w[i].w_fid.f_oid = 0x100ull * (uint64_t)(i + 1) + 0x5a;
		w[i].w_seed = 1000u + (unsigned int)i;
		w[i].w_errors = 0;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[i], NULL, writer_main,
						     &w[i]), 0);
	}
	for (int i = 0; i < N_THREADS; i++)
		pthread_join(tid[i], NULL);
	for (int i = 0; i < N_THREADS; i++) {
		CU_ASSERT_EQUAL(w[i].w_errors, 0);
		CU_ASSERT_EQUAL(oss_obj_read(ost, &w[i].w_fid, 0, buf,
					     N_PIECES * PIECE),
				N_PIECES * PIECE);
		CU_ASSERT(memcmp(buf, w[i].w_data, N_PIECES * PIECE) == 0);
	}
	oss_ost_close(ost);
	free(buf);
}

/* ---- suite ---- */

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	return remove(path);
}

static int suite_init(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(base_dir, sizeof(base_dir), "%s/nacre-objstore-XXXXXX",
		 tmp && *tmp ? tmp : P_tmpdir);
	return mkdtemp(base_dir) ? 0 : -1;
}

static int suite_fini(void)
{
	return nftw(base_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Fills the filesystem of @dir with a file of its own, to the last byte. */
static void fill_fs(const char *dir)
{
	static char junk[65536];
	char path[512];
	size_t n = sizeof(junk);
	int fd;

	snprintf(path, sizeof(path), "%s/junk", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	while (n >= 1) {
		if (write(fd, junk, n) < 0)
			n /= 2;
	}
	close(fd);
}

/*
 * A write that finds the OST's filesystem full fails with ENOSPC and
 * changes nothing: the object's bytes, its edge block included, read back
 * as they were, checksums and all; once space is freed the same write
 * succeeds.  Needs a small filesystem: a tmpfs mounted for the test (as
 * root), else the test is skipped.
 */
static void test_write_enospc(void)
{
	const size_t old = 200000, len = 300000;
	static uint8_t before[200000], after[300000], got[300100];
	struct nc_fid fid = { .f_seq = 0x200000400ull, .f_oid = 7 };
	struct nc_fid fid2 = { .f_seq = 0x200000400ull, .f_oid = 8 };
	char mnt[300], dir[320], path[512];
	struct oss_ost *ost = NULL;

	snprintf(mnt, sizeof(mnt), "%s/small", base_dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(mnt, 0700), 0);
	if (mount("nacre-test", mnt, "tmpfs", 0, "size=1m") != 0) {
		printf("(skipped: cannot mount a tmpfs: %s) ", strerror(errno));
		rmdir(mnt);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/ost", mnt);
	CU_ASSERT_EQUAL_FATAL(oss_ost_format(dir, FSNAME, 0), 0);
	CU_ASSERT_EQUAL_FATAL(oss_ost_open(dir, FSNAME, TEST_PACK_FDS, &ost), 0);
	fill_random(before, sizeof(before));
	fill_random(after, sizeof(after));
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 0, before, old), 0);
	fill_fs(mnt);
	/* Over the old bytes and past them: the new blocks cannot be had. */
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 100, after, len), -ENOSPC);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid2, 0, after, len), -ENOSPC);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, got, sizeof(got)), (ssize_t)old);
	CU_ASSERT_EQUAL(memcmp(got, before, old), 0);
	/* Space freed: the same write goes through. */
	snprintf(path, sizeof(path), "%s/junk", mnt);
	CU_ASSERT_EQUAL(unlink(path), 0);
	CU_ASSERT_EQUAL(oss_obj_write(ost, &fid, 100, after, len), 0);
	CU_ASSERT_EQUAL(oss_obj_read(ost, &fid, 0, got, sizeof(got)), (ssize_t)(100 + len));
	CU_ASSERT_EQUAL(memcmp(got, before, 100), 0);
	CU_ASSERT_EQUAL(memcmp(got + 100, after, len), 0);
	oss_ost_close(ost);
	CU_ASSERT_EQUAL(umount2(mnt, MNT_DETACH), 0);
	rmdir(mnt);
}

int main(void)
{
	CU_pSuite suite;
	unsigned int failures;

	/* Errors (expected ones included) still show; progress lines do not. */
	nc_log_level = NC_LOG_WARN;
	nc_daemon_raise_nofile(); /* as the OSS does: its pack cache needs it */
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite("objstore", suite_init, suite_fini);
	if (!suite ||
	    !CU_add_test(suite, "format, open, reopen", test_format_open) ||
	    !CU_add_test(suite, "open errors", test_open_errors) ||
	    !CU_add_test(suite, "corrupt ost.conf", test_open_corrupt) ||
	    !CU_add_test(suite, "write/read round trip", test_rw_roundtrip) ||
	    !CU_add_test(suite, "missing object", test_missing_object) ||
	    !CU_add_test(suite, "sparse write", test_sparse) ||
	    !CU_add_test(suite, "truncate", test_truncate) ||
	    !CU_add_test(suite, "punch", test_punch) ||
	    !CU_add_test(suite, "destroy", test_destroy) ||
	    !CU_add_test(suite, "stat and statfs", test_stat_statfs) ||
	    !CU_add_test(suite, "write errors", test_write_error) ||
	    !CU_add_test(suite, "concurrent writers",
			 test_concurrent_writers) ||
	    !CU_add_test(suite, "checksum sidecar format", test_csum_format) ||
	    !CU_add_test(suite, "checksum catches corruption",
			 test_csum_corruption) ||
	    !CU_add_test(suite, "partial rewrite of a bad block",
			 test_csum_partial_rewrite) ||
	    !CU_add_test(suite, "checksums of holes", test_csum_holes) ||
	    !CU_add_test(suite, "verified reads without a copy", test_read_hold) ||
	    !CU_add_test(suite, "pack objects kept open", test_pack_fd_cache) ||
	    !CU_add_test(suite, "the table of open pack objects", test_fdcache_table) ||
	    !CU_add_test(suite, "large verified reads without a copy", test_read_hold_large) ||
	    !CU_add_test(suite, "direct writes of aligned pages", test_direct_writes) ||
	    !CU_add_test(suite, "verify in windows", test_verify_large) ||
	    !CU_add_test(suite, "readers racing a writer", test_csum_race) ||
	    !CU_add_test(suite, "a write on a full OST changes nothing", test_write_enospc)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() +
		   CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
