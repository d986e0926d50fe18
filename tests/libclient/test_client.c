/* SPDX-License-Identifier: MIT */
/*
 * Component tests of libnacre against an in-process filesystem: one MDS and
 * four OSSes (one OST each) on loopback, started by each suite on a fresh
 * temporary directory.  The tests go through the public API (nacre.h) and
 * look at the OST directories on disk only to check where objects live and
 * that unlinked files lose them.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/wire.h"
#include "mds/pack_gc.h"
#include "mds/server.h"
#include "nacre.h"
#include "oss/server.h"

#define FSNAME "clientfs"
#define N_OSS 4
#define S (1u << 20) /* the default stripe size */

/* What a suite starts; torn down by suite_fini. */
static char base_dir[256];
static char ost_dir[N_OSS][300];
static char mds_addr[64];
/* The cluster key: formatting the MDS creates it; NACRE_KEYFILE names it
 * to every nacre_connect() of the tests. */
static char key_path[300];
static struct mds_server *mds;
static struct oss_server *oss[N_OSS];
static struct nacre_fs *fs;

/* ---- helpers ---- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* xorshift64*: the same bytes for the same seed on every run. */
static void fill_random(void *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	unsigned char *p = buf;

	for (size_t i = 0; i < len; i++) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		p[i] = (unsigned char)((x * 0x2545f4914f6cdd1dull) >> 56);
	}
}

static bool is_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* pwrite may write less than asked (large requests): loop as callers do. */
static int write_all(struct nacre_file *f, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n =
			nacre_pwrite(f, (const char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* Reads until @len bytes or end of file; returns the bytes read or an error. */
static ssize_t read_all(struct nacre_file *f, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = nacre_pread(f, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0)
			return n;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* Creates @path (which must not exist) holding @len bytes of @data. */
static void make_file(const char *path, const void *data, size_t len)
{
	struct nacre_file *f = NULL;

	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, path, O_CREAT | O_EXCL | O_RDWR, 0644, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, len, 0), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
}

static uint64_t path_size(const char *path)
{
	struct nacre_stat st;

	memset(&st, 0, sizeof(st));
	CU_ASSERT_EQUAL(nacre_stat(fs, path, &st), 0);
	return st.size;
}

/* Where OST @ost keeps the object of @fid: DIR/O/XX/SEQ:OID. */
static void obj_path(uint32_t ost, const struct nacre_fid *fid, char *buf, size_t len)
{
	char fidstr[40];

	nacre_fid_format(fid, fidstr);
	snprintf(buf, len, "%s/O/%02x/%s", ost_dir[ost], (unsigned int)(fid->oid & 0xff), fidstr);
}

static bool obj_exists(uint32_t ost, const struct nacre_fid *fid)
{
	char path[1300];
	struct stat st;

	obj_path(ost, fid, path, sizeof(path));
	return stat(path, &st) == 0;
}

/* Polls until no OST holds an object of @fid; false after @ms. */
static bool wait_objects_gone(const struct nacre_fid *fid, int ms)
{
	int64_t deadline = now_ms() + ms;

	for (;;) {
		bool any = false;

		for (uint32_t i = 0; i < N_OSS; i++)
			any |= obj_exists(i, fid);
		if (!any)
			return true;
		if (now_ms() > deadline)
			return false;
		sleep_ms(50);
	}
}

static int count_up_osts(struct nacre_fs *f)
{
	struct nacre_ost *list = NULL;
	unsigned int n = 0;
	int up = 0;

	if (nacre_ost_list(f, &list, &n))
		return -1;
	for (unsigned int i = 0; i < n; i++)
		up += list[i].up;
	free(list);
	return up;
}

/* A loopback port nobody listens on (bound, then released). */
static int closed_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* ---- suite setup ---- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void servers_free(void)
{
	nacre_disconnect(fs);
	fs = NULL;
	for (int i = 0; i < N_OSS; i++) {
		oss_server_free(oss[i]);
		oss[i] = NULL;
	}
	mds_server_free(mds);
	mds = NULL;
}

static int start_oss(int i)
{
	struct oss_conf oc = {0};
	int rc;

	oc.oc_fsname = FSNAME;
	oc.oc_mds = mds_addr;
	oc.oc_listen = "tcp://127.0.0.1:0";
	oc.oc_format = true;
	oc.oc_threads = 4;
	oc.oc_nosts = 1;
	oc.oc_osts[0].index = (uint32_t)i;
	oc.oc_osts[0].dir = ost_dir[i];
	oc.oc_keyfile = key_path;
	rc = oss_server_new(&oc, &oss[i]);
	if (rc)
		return rc;
	if (oss_server_port(oss[i]) <= 0)
		return -EINVAL;
	return oss_server_start(oss[i]);
}

static int suite_init(void)
{
	const char *tmp = getenv("TMPDIR");
	char mdt_dir[300];
	struct mds_conf mc = {0};
	int64_t deadline;
	int rc;

	snprintf(base_dir, sizeof(base_dir), "%s/nacre-client-XXXXXX",
		 tmp && *tmp ? tmp : P_tmpdir);
	if (!mkdtemp(base_dir))
		return -1;
	snprintf(mdt_dir, sizeof(mdt_dir), "%s/mdt", base_dir);
	mc.mc_dir = mdt_dir;
	mc.mc_fsname = FSNAME;
	mc.mc_listen = "tcp://127.0.0.1:0";
	mc.mc_format = true;
	mc.mc_changelog = true;
	mc.mc_destroy_interval_ms = 200;
	/* Background compaction only when a test kicks it. */
	mc.mc_pack_gc_interval_ms = 3600 * 1000;
	snprintf(key_path, sizeof(key_path), "%s/cluster.key", base_dir);
	mc.mc_keyfile = key_path;
	setenv("NACRE_KEYFILE", key_path, 1);
	rc = mds_server_new(&mc, &mds);
	if (!rc)
		rc = mds_server_start(mds);
	if (rc) {
		fprintf(stderr, "MDS: %s\n", nacre_strerror(rc));
		goto out_free;
	}
	snprintf(mds_addr, sizeof(mds_addr), "tcp://127.0.0.1:%d", mds_server_port(mds));
	for (int i = 0; i < N_OSS; i++) {
		snprintf(ost_dir[i], sizeof(ost_dir[i]), "%s/ost%d", base_dir, i);
		rc = start_oss(i);
		if (rc) {
			fprintf(stderr, "OSS %d: %s\n", i, nacre_strerror(rc));
			goto out_free;
		}
	}
	rc = nacre_connect(mds_addr, FSNAME, NULL, &fs);
	if (rc) {
		fprintf(stderr, "connect: %s\n", nacre_strerror(rc));
		goto out_free;
	}
	/* The OSSes register from their own threads: wait for all four. */
	deadline = now_ms() + 10000;
	while (count_up_osts(fs) != N_OSS) {
		if (now_ms() > deadline) {
			fprintf(stderr, "the OSTs did not come up\n");
			goto out_free;
		}
		sleep_ms(20);
	}
	return 0;
out_free:
	servers_free();
	nftw(base_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return -1;
}

static int suite_fini(void)
{
	servers_free();
	return nftw(base_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- connecting ---- */

static void test_connect_errors(void)
{
	struct nacre_fs *bad = NULL;
	char addr[64];
	int64_t t0;
	int port, rc;

	t0 = now_ms();
	rc = nacre_connect(mds_addr, "otherfs", NULL, &bad);
	CU_ASSERT(rc < 0);
	CU_ASSERT_EQUAL(rc, -NC_E_FSNAME);
	CU_ASSERT(now_ms() - t0 < 5000);
	CU_ASSERT_PTR_NULL(bad);
	if (rc == 0)
		nacre_disconnect(bad);

	port = closed_port();
	CU_ASSERT_FATAL(port > 0);
	snprintf(addr, sizeof(addr), "tcp://127.0.0.1:%d", port);
	bad = NULL;
	t0 = now_ms();
	rc = nacre_connect(addr, FSNAME, NULL, &bad);
	CU_ASSERT_EQUAL(rc, -ECONNREFUSED);
	CU_ASSERT(now_ms() - t0 < 5000);
	if (rc == 0)
		nacre_disconnect(bad);

	CU_ASSERT_STRING_EQUAL(nacre_fs_name(fs), FSNAME);
	CU_ASSERT_STRING_EQUAL(nacre_fs_mds_addr(fs), mds_addr);
}

/* Writes @text to @path with @mode. */
static int key_write(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	fchmod(fd, mode);
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/*
 * The cluster key: formatting the MDS made it, mode 0600.  A client with
 * another key is refused at once (and the MDS goes on serving), one whose
 * key file others may read, or that is missing or malformed, does not
 * connect at all.
 */
static void test_connect_key(void)
{
	static const char wrong[] =
		"# another cluster\n"
		"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n";
	struct nacre_opts opts = { .retry_ms = 10000 };
	struct nacre_fs *bad = NULL;
	char path[400], got[400];
	struct stat st;
	int64_t t0;
	int rc;

	CU_ASSERT_EQUAL_FATAL(stat(key_path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	CU_ASSERT_EQUAL(nacre_keyfile_path(NULL, FSNAME, got, sizeof(got)), 0);
	CU_ASSERT_STRING_EQUAL(got, key_path);

	snprintf(path, sizeof(path), "%s/wrong.key", base_dir);
	CU_ASSERT_EQUAL_FATAL(key_write(path, wrong, 0600), 0);
	opts.keyfile = path;
	t0 = now_ms();
	rc = nacre_connect(mds_addr, FSNAME, &opts, &bad);
	CU_ASSERT_EQUAL(rc, -NACRE_E_AUTH);
	CU_ASSERT_STRING_EQUAL(nacre_strerror(rc),
			       "authentication failed: wrong or missing cluster key");
	/* Final: not retried for retry_ms. */
	CU_ASSERT(now_ms() - t0 < 3000);
	if (rc == 0)
		nacre_disconnect(bad);

	CU_ASSERT_EQUAL_FATAL(chmod(path, 0644), 0);
	CU_ASSERT_EQUAL(nacre_connect(mds_addr, FSNAME, &opts, &bad), -NACRE_E_KEYMODE);
	CU_ASSERT_EQUAL_FATAL(key_write(path, "0011\n", 0600), 0);
	CU_ASSERT_EQUAL(nacre_connect(mds_addr, FSNAME, &opts, &bad), -NACRE_E_KEYFILE);
	CU_ASSERT_EQUAL_FATAL(unlink(path), 0);
	CU_ASSERT_EQUAL(nacre_connect(mds_addr, FSNAME, &opts, &bad), -NACRE_E_NOKEY);

	/* The MDS still serves the right key (the environment's, here). */
	CU_ASSERT_EQUAL(nacre_connect(mds_addr, FSNAME, NULL, &bad), 0);
	nacre_disconnect(bad);
	CU_ASSERT_EQUAL(count_up_osts(fs), N_OSS);
}

/* ---- namespace ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_namespace(void)
{
	static const char *const names[] = {"a", "bb", "ccc", "dddd", "e"};
	const int nnames = (int)(sizeof(names) / sizeof(names[0]));
	struct nacre_dirent ents[2];
	struct nacre_file *f = NULL;
	struct nacre_stat st, st2;
	char *got[16], path[64], buf[64];
	uint64_t cookie = 0;
	bool eof = false;
	int ngot = 0, pages = 0, rc;

	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/ns", 0755), 0);
	CU_ASSERT_EQUAL(nacre_mkdir(fs, "/ns", 0755), -EEXIST);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns", &st), 0);
	CU_ASSERT(S_ISDIR(st.mode));
	CU_ASSERT_EQUAL(st.mode & 07777, 0755);
	CU_ASSERT_EQUAL(st.nlink, 2);

	/* Create and stat. */
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/ns/f", O_CREAT | O_EXCL | O_RDWR, 0640, &f), 0);
	CU_ASSERT_EQUAL(nacre_pwrite(f, "hello world", 11, 0), 11);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/f", &st), 0);
	CU_ASSERT(S_ISREG(st.mode));
	CU_ASSERT_EQUAL(st.mode & 07777, 0640);
	CU_ASSERT_EQUAL(st.nlink, 1);
	CU_ASSERT_EQUAL(st.size, 11);
	CU_ASSERT_EQUAL(st.uid, geteuid());
	f = NULL;
	CU_ASSERT_EQUAL(nacre_open(fs, "/ns/f", O_CREAT | O_EXCL | O_RDWR, 0644, &f), -EEXIST);
	CU_ASSERT_PTR_NULL(f);
	/* Without O_EXCL the existing file opens, with its data. */
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/ns/f", O_CREAT | O_RDONLY, 0644, &f), 0);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nacre_pread(f, buf, sizeof(buf), 0), 11);
	CU_ASSERT_STRING_EQUAL(buf, "hello world");
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	/* readdir in pages of two returns exactly what was created. */
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/ns/d", 0755), 0);
	for (int i = 0; i < nnames; i++) {
		snprintf(path, sizeof(path), "/ns/d/%s", names[i]);
		if (i == 3) {
			CU_ASSERT_EQUAL(nacre_mkdir(fs, path, 0700), 0);
		} else {
			f = NULL;
			CU_ASSERT_EQUAL(nacre_open(fs, path, O_CREAT | O_EXCL | O_WRONLY, 0600, &f),
					0);
			CU_ASSERT_EQUAL(nacre_close(f), 0);
		}
	}
	while (!eof && pages < 10) {
		rc = nacre_readdir(fs, "/ns/d", cookie, ents, 2, &eof);
		CU_ASSERT(rc >= 0 && rc <= 2);
		if (rc < 0)
			break;
		pages++;
		for (int i = 0; i < rc && ngot < 16; i++) {
			got[ngot++] = strdup(ents[i].name);
			CU_ASSERT_EQUAL(ents[i].type,
					!strcmp(ents[i].name, "dddd") ? S_IFDIR : S_IFREG);
			cookie = ents[i].cookie;
		}
		if (rc == 0 && !eof)
			break; /* no progress: would loop forever */
	}
	CU_ASSERT(eof);
	CU_ASSERT(pages >= 3);
	CU_ASSERT_EQUAL(ngot, nnames);
	if (ngot == nnames) {
		const char *want[8];

		for (int i = 0; i < nnames; i++)
			want[i] = names[i];
		qsort(got, (size_t)ngot, sizeof(got[0]), cmp_str);
		qsort(want, (size_t)nnames, sizeof(want[0]), cmp_str);
		for (int i = 0; i < nnames; i++)
			CU_ASSERT_STRING_EQUAL(got[i], want[i]);
	}
	for (int i = 0; i < ngot; i++)
		free(got[i]);
	CU_ASSERT_EQUAL(nacre_readdir(fs, "/ns/f", 0, ents, 2, &eof), -ENOTDIR);

	/* rename keeps the inode. */
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/f", &st), 0);
	CU_ASSERT_EQUAL(nacre_rename(fs, "/ns/f", "/ns/g"), 0);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/f", &st2), -ENOENT);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/g", &st2), 0);
	CU_ASSERT_EQUAL(st2.fid.seq, st.fid.seq);
	CU_ASSERT_EQUAL(st2.fid.oid, st.fid.oid);
	CU_ASSERT_EQUAL(st2.size, 11);

	/* link */
	CU_ASSERT_EQUAL(nacre_link(fs, "/ns/g", "/ns/d/g2"), 0);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/g", &st), 0);
	CU_ASSERT_EQUAL(st.nlink, 2);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/d/g2", &st2), 0);
	CU_ASSERT_EQUAL(st2.nlink, 2);
	CU_ASSERT_EQUAL(st2.fid.oid, st.fid.oid);
	CU_ASSERT_EQUAL(nacre_link(fs, "/ns/g", "/ns/d/g2"), -EEXIST);

	/* symlink and readlink; stat follows, lstat does not. */
	CU_ASSERT_EQUAL(nacre_symlink(fs, "/ns/g", "/ns/sl"), 0);
	memset(buf, 'x', sizeof(buf));
	CU_ASSERT_EQUAL(nacre_readlink(fs, "/ns/sl", buf, sizeof(buf)), 5);
	CU_ASSERT_STRING_EQUAL(buf, "/ns/g");
	CU_ASSERT_EQUAL(nacre_lstat(fs, "/ns/sl", &st2), 0);
	CU_ASSERT(S_ISLNK(st2.mode));
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/sl", &st2), 0);
	CU_ASSERT(S_ISREG(st2.mode));
	CU_ASSERT_EQUAL(st2.fid.oid, st.fid.oid);
	CU_ASSERT_EQUAL(nacre_readlink(fs, "/ns/g", buf, sizeof(buf)), -EINVAL);
	CU_ASSERT_EQUAL(nacre_symlink(fs, "d", "/ns/reldir"), 0);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/reldir/g2", &st2), 0);
	CU_ASSERT_EQUAL(st2.fid.oid, st.fid.oid);

	/* unlink drops a link. */
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/ns/d/g2"), 0);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/d/g2", &st2), -ENOENT);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/g", &st), 0);
	CU_ASSERT_EQUAL(st.nlink, 1);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/ns/sl"), 0);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/g", &st), 0); /* the target stays */
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/ns/reldir"), 0);

	/* Errors. */
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/ns/d"), -ENOTEMPTY);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/missing", &st), -ENOENT);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/missing/x", &st), -ENOENT);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/ns/missing"), -ENOENT);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/ns/missing"), -ENOENT);
	CU_ASSERT_EQUAL(nacre_mkdir(fs, "/ns/missing/x", 0755), -ENOENT);
	CU_ASSERT_EQUAL(nacre_rename(fs, "/ns/missing", "/ns/x"), -ENOENT);
	f = NULL;
	CU_ASSERT_EQUAL(nacre_open(fs, "/ns/missing", O_RDONLY, 0, &f), -ENOENT);
	CU_ASSERT_PTR_NULL(f);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/g/x", &st), -ENOTDIR);
	CU_ASSERT_EQUAL(nacre_mkdir(fs, "/ns/g/x", 0755), -ENOTDIR);
	CU_ASSERT_EQUAL(nacre_open(fs, "/ns/g/x", O_CREAT | O_RDWR, 0644, &f), -ENOTDIR);
	CU_ASSERT_EQUAL(nacre_open(fs, "/ns/d", O_WRONLY, 0, &f), -EISDIR);
	CU_ASSERT_EQUAL(nacre_open(fs, "/ns/d", O_RDWR, 0, &f), -EISDIR);
	CU_ASSERT_PTR_NULL(f);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/ns/g"), -ENOTDIR);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/ns/d"), -EISDIR);

	/* Emptying the directory lets rmdir work. */
	for (int i = 0; i < nnames; i++) {
		snprintf(path, sizeof(path), "/ns/d/%s", names[i]);
		CU_ASSERT_EQUAL(i == 3 ? nacre_rmdir(fs, path) : nacre_unlink(fs, path), 0);
	}
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/ns/d"), 0);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns/d", &st), -ENOENT);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ns", &st), 0);
	CU_ASSERT_EQUAL(st.nlink, 2);
}

/* ---- data ---- */

/* Writes @len random bytes at @off of a new file, reads them back through
 * the writing handle and through a fresh one, and checks the size. */
static void roundtrip(const char *path, size_t len, uint64_t off, uint64_t seed)
{
	size_t total = (size_t)off + len;
	unsigned char *data = malloc(len ? len : 1);
	unsigned char *back = malloc(total + 100);
	struct nacre_file *f = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	fill_random(data, len, seed);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, path, O_CREAT | O_EXCL | O_RDWR, 0644, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, len, off), 0);
	memset(back, 0xa5, total + 100);
	CU_ASSERT_EQUAL(read_all(f, back, len, off), (ssize_t)len);
	CU_ASSERT(memcmp(back, data, len) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	/* An empty write does not extend the file. */
	CU_ASSERT_EQUAL(path_size(path), len ? total : 0);
	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, path, O_RDONLY, 0, &f), 0);
	memset(back, 0xa5, total + 100);
	CU_ASSERT_EQUAL(read_all(f, back, total + 100, 0), len ? (ssize_t)total : 0);
	if (len) {
		CU_ASSERT(is_zero(back, (size_t)off));
		CU_ASSERT(memcmp(back + off, data, len) == 0);
	}
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	free(back);
	free(data);
}

static void test_data_sizes(void)
{
	static const size_t sizes[] = {0, 1, S - 1, S, S + 1, 4 * S, 4 * S + 12345, 9 * S + 7};
	/* Offsets inside a chunk, just before a boundary and past a row. */
	static const uint64_t offs[] = {0, 12345, S - 3, 4 * S + 777};
	char path[64];
	int n = 0;

	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/data", 0755), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (size_t j = 0; j < sizeof(offs) / sizeof(offs[0]); j++) {
			/* Keep the run short: the largest sizes at two offsets. */
			if (sizes[i] > 4 * S && j % 2)
				continue;
			snprintf(path, sizeof(path), "/data/f%zu_%zu", i, j);
			roundtrip(path, sizes[i], offs[j], 1000 + (uint64_t)n++);
		}
	}
}

static void test_default_layout(void)
{
	struct nacre_layout l;
	struct nacre_file *f = NULL;
	bool seen[N_OSS] = {false};

	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/deflayout", O_CREAT | O_EXCL | O_RDWR, 0644, &f), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	memset(&l, 0xff, sizeof(l));
	CU_ASSERT_EQUAL_FATAL(nacre_getlayout(fs, "/deflayout", &l), 0);
	CU_ASSERT_EQUAL(l.stripe_size, S);
	CU_ASSERT_EQUAL(l.stripe_count, N_OSS);
	CU_ASSERT_EQUAL(l.shard_count, N_OSS);
	CU_ASSERT_EQUAL(l.m, 0);
	for (uint32_t i = 0; i < l.shard_count && i < NACRE_MAX_STRIPES; i++) {
		CU_ASSERT(l.shards[i].ost < N_OSS);
		if (l.shards[i].ost < N_OSS) {
			CU_ASSERT(!seen[l.shards[i].ost]);
			seen[l.shards[i].ost] = true;
		}
	}
}

static void test_sparse(void)
{
	const uint64_t at = 10ull * S, far = (5ull << 30) + 3;
	const size_t len = 4096 + 17;
	unsigned char *data = malloc(len), *back = malloc(at + len);
	struct nacre_file *f = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	fill_random(data, len, 77);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/sparse", O_CREAT | O_EXCL | O_RDWR, 0644, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, len, at), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(path_size("/sparse"), at + len);

	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/sparse", O_RDONLY, 0, &f), 0);
	memset(back, 0x5a, at + len);
	CU_ASSERT_EQUAL(read_all(f, back, at + len, 0), (ssize_t)(at + len));
	CU_ASSERT(is_zero(back, at));
	CU_ASSERT(memcmp(back + at, data, len) == 0);
	/* A read wholly inside the hole, across chunk boundaries. */
	memset(back, 0x5a, 3 * S);
	CU_ASSERT_EQUAL(nacre_pread(f, back, 3 * S, S / 2), (ssize_t)(3 * S));
	CU_ASSERT(is_zero(back, 3 * S));
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	/* Offsets past 4 GiB keep all their bits. */
	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/sparse5g", O_CREAT | O_EXCL | O_RDWR, 0644, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, len, far), 0);
	CU_ASSERT_EQUAL(path_size("/sparse5g"), far + len);
	memset(back, 0x5a, len + 100);
	CU_ASSERT_EQUAL(read_all(f, back, len + 100, far - 100), (ssize_t)(len + 100));
	CU_ASSERT(is_zero(back, 100));
	CU_ASSERT(memcmp(back + 100, data, len) == 0);
	memset(back, 0x5a, len);
	CU_ASSERT_EQUAL(read_all(f, back, len, far - (4ull << 30)), (ssize_t)len);
	CU_ASSERT(is_zero(back, len));
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/sparse5g"), 0);
	free(back);
	free(data);
}

static void test_overwrite(void)
{
	static const struct {
		uint64_t off;
		size_t len;
	} ow[] = {
		{S - 100, 200},					 /* across the first boundary */
		{2 * S - 1, S + 2},				 /* one byte each side of a chunk */
		{3 * S + 777, 2 * S},				 /* across a row */
		{5 * S - 5, 10},      {1, 1}, {6 * S - 50, 100}, /* extends the file */
		{123457, 4 * S + 3},				 /* touches every object */
	};
	const size_t cap = 7 * S;
	unsigned char *ref = calloc(1, cap), *buf = malloc(cap), *back = malloc(cap);
	struct nacre_file *f = NULL;
	size_t size = 6 * S;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	fill_random(ref, size, 5);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/overwrite", O_CREAT | O_EXCL | O_RDWR, 0644, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, ref, size, 0), 0);
	for (size_t i = 0; i < sizeof(ow) / sizeof(ow[0]); i++) {
		fill_random(buf, ow[i].len, 100 + i);
		CU_ASSERT_EQUAL(write_all(f, buf, ow[i].len, ow[i].off), 0);
		memcpy(ref + ow[i].off, buf, ow[i].len);
		if (ow[i].off + ow[i].len > size)
			size = (size_t)(ow[i].off + ow[i].len);
	}
	memset(back, 0, cap);
	CU_ASSERT_EQUAL(read_all(f, back, cap, 0), (ssize_t)size);
	CU_ASSERT(memcmp(back, ref, size) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(path_size("/overwrite"), size);

	/* And through a handle that did not write. */
	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/overwrite", O_RDONLY, 0, &f), 0);
	memset(back, 0, cap);
	CU_ASSERT_EQUAL(read_all(f, back, cap, 0), (ssize_t)size);
	CU_ASSERT(memcmp(back, ref, size) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	free(back);
	free(buf);
	free(ref);
}

static void test_eof_reads(void)
{
	const size_t len = 2 * S + 10;
	unsigned char *data = malloc(len), back[200];
	struct nacre_file *f = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	fill_random(data, len, 9);
	make_file("/eof", data, len);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/eof", O_RDONLY, 0, &f), 0);
	CU_ASSERT_EQUAL(nacre_pread(f, back, sizeof(back), (off_t)len), 0);
	CU_ASSERT_EQUAL(nacre_pread(f, back, sizeof(back), (off_t)len + 100), 0);
	CU_ASSERT_EQUAL(nacre_pread(f, back, sizeof(back), 100ll * S), 0);
	CU_ASSERT_EQUAL(nacre_pread(f, back, sizeof(back), (off_t)len - 30), 30);
	CU_ASSERT(memcmp(back, data + len - 30, 30) == 0);
	CU_ASSERT_EQUAL(nacre_pread(f, back, 0, 0), 0);
	CU_ASSERT_EQUAL(nacre_pread(f, back, 10, -1), -EINVAL);
	/* Writes through a read-only handle are refused. */
	CU_ASSERT_EQUAL(nacre_pwrite(f, back, 10, 0), -EBADF);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	free(data);
}

static void test_append(void)
{
	unsigned char a[100], b[50], c[30], back[256];
	struct nacre_file *f = NULL;

	fill_random(a, sizeof(a), 11);
	fill_random(b, sizeof(b), 12);
	fill_random(c, sizeof(c), 13);
	make_file("/append", a, sizeof(a));
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/append", O_WRONLY | O_APPEND, 0, &f), 0);
	/* With O_APPEND the offset given is ignored. */
	CU_ASSERT_EQUAL(nacre_pwrite(f, b, sizeof(b), 0), (ssize_t)sizeof(b));
	CU_ASSERT_EQUAL(nacre_pwrite(f, c, sizeof(c), 7), (ssize_t)sizeof(c));
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(path_size("/append"), sizeof(a) + sizeof(b) + sizeof(c));

	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/append", O_RDONLY, 0, &f), 0);
	CU_ASSERT_EQUAL(nacre_pread(f, back, sizeof(back), 0),
			(ssize_t)(sizeof(a) + sizeof(b) + sizeof(c)));
	CU_ASSERT(memcmp(back, a, sizeof(a)) == 0);
	CU_ASSERT(memcmp(back + sizeof(a), b, sizeof(b)) == 0);
	CU_ASSERT(memcmp(back + sizeof(a) + sizeof(b), c, sizeof(c)) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
}

/* ---- truncate ---- */

static void test_truncate(void)
{
	const size_t len = 4 * S + 12345;
	unsigned char *data = malloc(len), *back = malloc(len + S);
	unsigned char tail[10];
	struct nacre_file *f = NULL;
	const uint64_t cut = S + 100;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	fill_random(data, len, 21);

	/* ftruncate down, then up: the gap reads as zeros. */
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/trunc", O_CREAT | O_EXCL | O_RDWR, 0644, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, len, 0), 0);
	CU_ASSERT_EQUAL(nacre_ftruncate(f, cut), 0);
	CU_ASSERT_EQUAL(path_size("/trunc"), cut);
	memset(back, 0xee, len);
	CU_ASSERT_EQUAL(read_all(f, back, len, 0), (ssize_t)cut);
	CU_ASSERT(memcmp(back, data, cut) == 0);
	CU_ASSERT_EQUAL(nacre_ftruncate(f, len), 0);
	CU_ASSERT_EQUAL(path_size("/trunc"), len);
	memset(back, 0xee, len);
	CU_ASSERT_EQUAL(read_all(f, back, len + 10, 0), (ssize_t)len);
	CU_ASSERT(memcmp(back, data, cut) == 0);
	CU_ASSERT(is_zero(back + cut, len - cut));
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	/* truncate by path, then a write past a cut inside the first chunk. */
	CU_ASSERT_EQUAL(nacre_truncate(fs, "/trunc", 10), 0);
	CU_ASSERT_EQUAL(path_size("/trunc"), 10);
	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/trunc", O_RDWR, 0, &f), 0);
	fill_random(tail, sizeof(tail), 22);
	CU_ASSERT_EQUAL(nacre_pwrite(f, tail, sizeof(tail), 2 * S + 5), (ssize_t)sizeof(tail));
	CU_ASSERT_EQUAL(path_size("/trunc"), 2 * S + 5 + sizeof(tail));
	memset(back, 0xee, 3 * S);
	CU_ASSERT_EQUAL(read_all(f, back, 3 * S, 0), (ssize_t)(2 * S + 5 + sizeof(tail)));
	CU_ASSERT(memcmp(back, data, 10) == 0);
	CU_ASSERT(is_zero(back + 10, 2 * S + 5 - 10));
	CU_ASSERT(memcmp(back + 2 * S + 5, tail, sizeof(tail)) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	/* truncate by path up, then to zero. */
	CU_ASSERT_EQUAL(nacre_truncate(fs, "/trunc", 5 * S), 0);
	CU_ASSERT_EQUAL(path_size("/trunc"), 5 * S);
	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/trunc", O_RDONLY, 0, &f), 0);
	memset(back, 0xee, 5 * S);
	CU_ASSERT_EQUAL(read_all(f, back, 5 * S + 1, 0), (ssize_t)(5 * S));
	CU_ASSERT(memcmp(back, data, 10) == 0);
	CU_ASSERT(is_zero(back + 10, 2 * S + 5 - 10));
	CU_ASSERT(memcmp(back + 2 * S + 5, tail, sizeof(tail)) == 0);
	CU_ASSERT(is_zero(back + 2 * S + 5 + sizeof(tail), 3 * S - 5 - sizeof(tail)));
	CU_ASSERT_EQUAL(nacre_ftruncate(f, 0), -EBADF);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(nacre_truncate(fs, "/trunc", 0), 0);
	CU_ASSERT_EQUAL(path_size("/trunc"), 0);
	CU_ASSERT_EQUAL(nacre_truncate(fs, "/missing", 0), -ENOENT);

	/* O_TRUNC empties the file. */
	make_file("/trunc2", data, 3 * S);
	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/trunc2", O_RDWR | O_TRUNC, 0, &f), 0);
	CU_ASSERT_EQUAL(path_size("/trunc2"), 0);
	CU_ASSERT_EQUAL(nacre_pwrite(f, tail, sizeof(tail), 2 * S), (ssize_t)sizeof(tail));
	memset(back, 0xee, 3 * S);
	CU_ASSERT_EQUAL(read_all(f, back, 3 * S, 0), (ssize_t)(2 * S + sizeof(tail)));
	CU_ASSERT(is_zero(back, 2 * S));
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	free(back);
	free(data);
}

/*
 * A handle open while the file is truncated by path (another caller of the
 * same client, as two processes on one mount) must not return bytes past
 * the new end of file.
 */
static void test_truncate_open_handle(void)
{
	const size_t len = 3 * S;
	unsigned char *data = malloc(len), *back = malloc(len);
	struct nacre_file *f = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	fill_random(data, len, 31);
	make_file("/trunc_open", data, len);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/trunc_open", O_RDONLY, 0, &f), 0);
	CU_ASSERT_EQUAL(read_all(f, back, len, 0), (ssize_t)len);
	CU_ASSERT_EQUAL(nacre_truncate(fs, "/trunc_open", S), 0);
	CU_ASSERT_EQUAL(read_all(f, back, len, 0), (ssize_t)S);
	CU_ASSERT(memcmp(back, data, S) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	/* Nor may closing a handle that wrote bring the old size back. */
	CU_ASSERT_EQUAL(nacre_truncate(fs, "/trunc_open", 0), 0);
	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/trunc_open", O_RDWR, 0, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, len, 0), 0);
	CU_ASSERT_EQUAL(nacre_pwrite(f, data, 1, 0), 1); /* in place: mtime at close */
	CU_ASSERT_EQUAL(nacre_truncate(fs, "/trunc_open", S), 0);
	CU_ASSERT_EQUAL(path_size("/trunc_open"), S);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(path_size("/trunc_open"), S);
	free(back);
	free(data);
}

/* ---- layouts ---- */

static void test_layouts(void)
{
	struct nacre_layout req, l;
	struct nacre_file *f = NULL;
	const size_t len = 5 * 65536 + 999;
	unsigned char *data = malloc(len), *back = malloc(len);
	const struct nacre_fid *fid;
	bool on[N_OSS] = {false};
	struct nacre_stat st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	fill_random(data, len, 41);

	/* A directory default: stripe_count 2, 64 KiB stripes. */
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/lay", 0755), 0);
	memset(&req, 0, sizeof(req));
	req.stripe_size = 65536;
	req.stripe_count = 2;
	req.first_ost = NACRE_OST_ANY;
	CU_ASSERT_EQUAL(nacre_setlayout(fs, "/lay", &req), 0);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL(nacre_getlayout(fs, "/lay", &l), 0);
	CU_ASSERT_EQUAL(l.stripe_size, 65536);
	CU_ASSERT_EQUAL(l.stripe_count, 2);
	CU_ASSERT_EQUAL(l.shard_count, 0);

	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/lay/f", O_CREAT | O_EXCL | O_RDWR, 0644, &f), 0);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL(nacre_getlayout(fs, "/lay/f", &l), 0);
	CU_ASSERT_EQUAL(l.shard_count, 2);
	CU_ASSERT_EQUAL(l.stripe_count, 2);
	CU_ASSERT_EQUAL(l.stripe_size, 65536);
	CU_ASSERT(l.shards[0].ost < N_OSS && l.shards[1].ost < N_OSS);
	CU_ASSERT_NOT_EQUAL(l.shards[0].ost, l.shards[1].ost);
	CU_ASSERT_EQUAL(write_all(f, data, len, 0), 0);
	memset(back, 0, len);
	CU_ASSERT_EQUAL(read_all(f, back, len, 0), (ssize_t)len);
	CU_ASSERT(memcmp(back, data, len) == 0);
	/* The objects lie on the two OSTs of the layout, nowhere else. */
	fid = nacre_file_fid(f);
	for (uint32_t i = 0; i < 2 && i < l.shard_count; i++)
		if (l.shards[i].ost < N_OSS)
			on[l.shards[i].ost] = true;
	for (uint32_t i = 0; i < N_OSS; i++)
		CU_ASSERT_EQUAL(obj_exists(i, fid), on[i]);
	/* A file that holds data keeps its layout. */
	req.stripe_count = 1;
	CU_ASSERT_EQUAL(nacre_setlayout(fs, "/lay/f", &req), -EBUSY);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	/* A subdirectory inherits the default. */
	CU_ASSERT_EQUAL(nacre_mkdir(fs, "/lay/sub", 0755), 0);
	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/lay/sub/g", O_CREAT | O_EXCL | O_RDWR, 0644, &f), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL(nacre_getlayout(fs, "/lay/sub/g", &l), 0);
	CU_ASSERT_EQUAL(l.shard_count, 2);
	CU_ASSERT_EQUAL(l.stripe_size, 65536);

	/* An empty file takes a new layout: one stripe, on OST 3. */
	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/ost3", O_CREAT | O_EXCL | O_RDWR, 0644, &f), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	memset(&req, 0, sizeof(req));
	req.stripe_count = 1;
	req.first_ost = 3;
	CU_ASSERT_EQUAL(nacre_setlayout(fs, "/ost3", &req), 0);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL(nacre_getlayout(fs, "/ost3", &l), 0);
	CU_ASSERT_EQUAL(l.shard_count, 1);
	CU_ASSERT_EQUAL(l.shards[0].ost, 3);
	CU_ASSERT_EQUAL(l.stripe_size, S);
	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/ost3", O_RDWR, 0, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, len, 0), 0);
	memset(back, 0, len);
	CU_ASSERT_EQUAL(read_all(f, back, len, 0), (ssize_t)len);
	CU_ASSERT(memcmp(back, data, len) == 0);
	fid = nacre_file_fid(f);
	for (uint32_t i = 0; i < N_OSS; i++)
		CU_ASSERT_EQUAL(obj_exists(i, fid), i == 3);
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	/* The same through a directory template. */
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/lay3", 0755), 0);
	CU_ASSERT_EQUAL(nacre_setlayout(fs, "/lay3", &req), 0);
	make_file("/lay3/f", data, len);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL(nacre_getlayout(fs, "/lay3/f", &l), 0);
	CU_ASSERT_EQUAL(l.shard_count, 1);
	CU_ASSERT_EQUAL(l.shards[0].ost, 3);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/lay3/f", &st), 0);
	for (uint32_t i = 0; i < N_OSS; i++)
		CU_ASSERT_EQUAL(obj_exists(i, &st.fid), i == 3);

	/* Nonsense is refused. */
	memset(&req, 0, sizeof(req));
	req.stripe_size = 1000;
	req.first_ost = NACRE_OST_ANY;
	CU_ASSERT(nacre_setlayout(fs, "/lay3", &req) < 0);
	free(back);
	free(data);
}

/* ---- xattrs ---- */

static void test_xattrs(void)
{
	char buf[256];
	int n;

	make_file("/xa", "x", 1);
	CU_ASSERT_EQUAL(nacre_setxattr(fs, "/xa", "user.color", "blue", 4, 0), 0);
	CU_ASSERT_EQUAL(nacre_setxattr(fs, "/xa", "user.size", "123456", 6, XATTR_CREATE), 0);
	CU_ASSERT_EQUAL(nacre_getxattr(fs, "/xa", "user.color", NULL, 0), 4);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nacre_getxattr(fs, "/xa", "user.color", buf, sizeof(buf)), 4);
	CU_ASSERT(memcmp(buf, "blue", 4) == 0);
	CU_ASSERT_EQUAL(nacre_getxattr(fs, "/xa", "user.color", buf, 3), -ERANGE);
	CU_ASSERT_EQUAL(nacre_setxattr(fs, "/xa", "user.color", "red", 3, XATTR_CREATE), -EEXIST);
	CU_ASSERT_EQUAL(nacre_setxattr(fs, "/xa", "user.none", "v", 1, XATTR_REPLACE), -ENODATA);
	CU_ASSERT_EQUAL(nacre_setxattr(fs, "/xa", "user.color", "red", 3, XATTR_REPLACE), 0);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nacre_getxattr(fs, "/xa", "user.color", buf, sizeof(buf)), 3);
	CU_ASSERT(memcmp(buf, "red", 3) == 0);

	/* list: "user.color\0user.size\0" in some order. */
	n = nacre_listxattr(fs, "/xa", NULL, 0);
	CU_ASSERT_EQUAL(n, (int)(sizeof("user.color") + sizeof("user.size")));
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nacre_listxattr(fs, "/xa", buf, sizeof(buf)), n);
	if (n == (int)(sizeof("user.color") + sizeof("user.size"))) {
		bool color = false, size = false;

		for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
			color |= !strcmp(p, "user.color");
			size |= !strcmp(p, "user.size");
		}
		CU_ASSERT(color && size);
	}
	CU_ASSERT_EQUAL(nacre_listxattr(fs, "/xa", buf, 5), -ERANGE);

	CU_ASSERT_EQUAL(nacre_removexattr(fs, "/xa", "user.color"), 0);
	CU_ASSERT_EQUAL(nacre_getxattr(fs, "/xa", "user.color", buf, sizeof(buf)), -ENODATA);
	CU_ASSERT_EQUAL(nacre_removexattr(fs, "/xa", "user.color"), -ENODATA);
	CU_ASSERT_EQUAL(nacre_listxattr(fs, "/xa", NULL, 0), (int)sizeof("user.size"));
	/* Empty values exist too. */
	CU_ASSERT_EQUAL(nacre_setxattr(fs, "/xa", "user.empty", "", 0, 0), 0);
	CU_ASSERT_EQUAL(nacre_getxattr(fs, "/xa", "user.empty", buf, sizeof(buf)), 0);
	/* On a directory, and by a path that does not exist. */
	CU_ASSERT_EQUAL(nacre_mkdir(fs, "/xadir", 0755), 0);
	CU_ASSERT_EQUAL(nacre_setxattr(fs, "/xadir", "user.d", "1", 1, 0), 0);
	CU_ASSERT_EQUAL(nacre_getxattr(fs, "/xadir", "user.d", buf, sizeof(buf)), 1);
	CU_ASSERT_EQUAL(nacre_getxattr(fs, "/nothere", "user.d", buf, sizeof(buf)), -ENOENT);
}

/* ---- unlink and object destruction ---- */

static void test_unlink_open(void)
{
	const size_t len = 4 * S + 100; /* an object on every OST */
	unsigned char *data = malloc(len), *back = malloc(len);
	struct nacre_file *f = NULL;
	struct nacre_fid fid;
	struct nacre_stat st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	fill_random(data, len, 51);
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/ul", 0755), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/ul/open", O_CREAT | O_EXCL | O_RDWR, 0644, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, len, 0), 0);
	fid = *nacre_file_fid(f);
	for (uint32_t i = 0; i < N_OSS; i++)
		CU_ASSERT(obj_exists(i, &fid));

	CU_ASSERT_EQUAL(nacre_unlink(fs, "/ul/open"), 0);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ul/open", &st), -ENOENT);
	memset(back, 0, len);
	CU_ASSERT_EQUAL(read_all(f, back, len, 0), (ssize_t)len);
	CU_ASSERT(memcmp(back, data, len) == 0);
	/* The objects outlive the name while the file is open. */
	sleep_ms(500);
	for (uint32_t i = 0; i < N_OSS; i++)
		CU_ASSERT(obj_exists(i, &fid));
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT(wait_objects_gone(&fid, 5000));
	CU_ASSERT_EQUAL(nacre_getattr(fs, &fid, &st), -ENOENT);
	/* The name can be reused at once. */
	make_file("/ul/open", data, 10);
	CU_ASSERT_EQUAL(path_size("/ul/open"), 10);

	/* A file replaced by rename while open stays readable until closed. */
	make_file("/ul/target", data, len);
	make_file("/ul/src", data + 1, 100);
	f = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/ul/target", O_RDONLY, 0, &f), 0);
	fid = *nacre_file_fid(f);
	CU_ASSERT_EQUAL(nacre_rename(fs, "/ul/src", "/ul/target"), 0);
	CU_ASSERT_EQUAL(path_size("/ul/target"), 100);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ul/src", &st), -ENOENT);
	memset(back, 0, len);
	CU_ASSERT_EQUAL(read_all(f, back, len, 0), (ssize_t)len);
	CU_ASSERT(memcmp(back, data, len) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT(wait_objects_gone(&fid, 5000));

	/* A plain unlink destroys the objects too. */
	make_file("/ul/plain", data, len);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/ul/plain", &st), 0);
	fid = st.fid;
	for (uint32_t i = 0; i < N_OSS; i++)
		CU_ASSERT(obj_exists(i, &fid));
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/ul/plain"), 0);
	CU_ASSERT_EQUAL(nacre_stat(fs, "/ul/plain", &st), -ENOENT);
	CU_ASSERT(wait_objects_gone(&fid, 5000));

	/* A file with two links keeps its objects until the second goes. */
	make_file("/ul/two", data, len);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/ul/two", &st), 0);
	fid = st.fid;
	CU_ASSERT_EQUAL(nacre_link(fs, "/ul/two", "/ul/two-b"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/ul/two"), 0);
	sleep_ms(500);
	for (uint32_t i = 0; i < N_OSS; i++)
		CU_ASSERT(obj_exists(i, &fid));
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/ul/two-b"), 0);
	CU_ASSERT(wait_objects_gone(&fid, 5000));
	free(back);
	free(data);
}

/* ---- concurrency ---- */

#define CONC_THREADS 4
#define CONC_SIZE (8u * S)

struct conc_arg {
	int ca_id;
	const unsigned char *ca_data; /* readers: the shared file's bytes */
	int ca_errors;
	int ca_rc;
};

static void *writer_main(void *arg)
{
	struct conc_arg *ca = arg;
	unsigned char *data = malloc(CONC_SIZE), *back = malloc(CONC_SIZE);
	struct nacre_file *f = NULL;
	char path[64];
	int rc;

	if (!data || !back) {
		ca->ca_rc = -ENOMEM;
		goto out;
	}
	fill_random(data, CONC_SIZE, 600 + (uint64_t)ca->ca_id);
	snprintf(path, sizeof(path), "/conc/w%d", ca->ca_id);
	rc = nacre_open(fs, path, O_CREAT | O_EXCL | O_RDWR, 0644, &f);
	if (rc) {
		ca->ca_rc = rc;
		goto out;
	}
	/* Pieces of odd sizes, so chunk boundaries fall inside requests. */
	for (size_t off = 0; off < CONC_SIZE;) {
		size_t n = S + 4097 * (size_t)(ca->ca_id + 1);

		if (n > CONC_SIZE - off)
			n = CONC_SIZE - off;
		rc = write_all(f, data + off, n, off);
		if (rc) {
			ca->ca_rc = rc;
			break;
		}
		off += n;
	}
	if (read_all(f, back, CONC_SIZE, 0) != (ssize_t)CONC_SIZE || memcmp(back, data, CONC_SIZE))
		ca->ca_errors++;
	rc = nacre_close(f);
	if (rc && !ca->ca_rc)
		ca->ca_rc = rc;
out:
	free(back);
	free(data);
	return NULL;
}

static void *reader_main(void *arg)
{
	struct conc_arg *ca = arg;
	unsigned char *back = malloc(CONC_SIZE);
	struct nacre_file *f = NULL;
	int rc;

	if (!back) {
		ca->ca_rc = -ENOMEM;
		return NULL;
	}
	rc = nacre_open(fs, "/conc/shared", O_RDONLY, 0, &f);
	if (rc) {
		ca->ca_rc = rc;
		free(back);
		return NULL;
	}
	/* Each reader walks the file with its own piece size, twice. */
	for (int pass = 0; pass < 2; pass++) {
		size_t piece = 3 * S / 2 + 1000 * (size_t)ca->ca_id + 1;

		memset(back, 0, CONC_SIZE);
		for (size_t off = 0; off < CONC_SIZE; off += piece) {
			size_t n = piece < CONC_SIZE - off ? piece : CONC_SIZE - off;

			if (read_all(f, back + off, n, off) != (ssize_t)n)
				ca->ca_errors++;
		}
		if (memcmp(back, ca->ca_data, CONC_SIZE))
			ca->ca_errors++;
	}
	rc = nacre_close(f);
	if (rc)
		ca->ca_rc = rc;
	free(back);
	return NULL;
}

static void test_concurrency(void)
{
	struct conc_arg ca[CONC_THREADS];
	pthread_t tid[CONC_THREADS];
	unsigned char *data = malloc(CONC_SIZE);

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/conc", 0755), 0);

	memset(ca, 0, sizeof(ca));
	for (int i = 0; i < CONC_THREADS; i++) {
		ca[i].ca_id = i;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[i], NULL, writer_main, &ca[i]), 0);
	}
	for (int i = 0; i < CONC_THREADS; i++) {
		pthread_join(tid[i], NULL);
		CU_ASSERT_EQUAL(ca[i].ca_rc, 0);
		CU_ASSERT_EQUAL(ca[i].ca_errors, 0);
	}
	for (int i = 0; i < CONC_THREADS; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/conc/w%d", i);
		CU_ASSERT_EQUAL(path_size(path), CONC_SIZE);
	}

	fill_random(data, CONC_SIZE, 700);
	make_file("/conc/shared", data, CONC_SIZE);
	memset(ca, 0, sizeof(ca));
	for (int i = 0; i < CONC_THREADS; i++) {
		ca[i].ca_id = i;
		ca[i].ca_data = data;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[i], NULL, reader_main, &ca[i]), 0);
	}
	for (int i = 0; i < CONC_THREADS; i++) {
		pthread_join(tid[i], NULL);
		CU_ASSERT_EQUAL(ca[i].ca_rc, 0);
		CU_ASSERT_EQUAL(ca[i].ca_errors, 0);
	}
	free(data);
}

/* ---- fsync, statfs, OSTs ---- */

static void test_fsync_statfs(void)
{
	struct nacre_statfs sf;
	struct nacre_ost *list = NULL;
	struct nacre_file *f = NULL;
	unsigned int n = 0;
	unsigned char data[5000];
	bool seen[N_OSS] = {false};

	fill_random(data, sizeof(data), 81);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/sync", O_CREAT | O_EXCL | O_RDWR, 0644, &f), 0);
	CU_ASSERT_EQUAL(nacre_fsync(f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, sizeof(data), S - 2000), 0);
	CU_ASSERT_EQUAL(nacre_fsync(f), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(path_size("/sync"), S - 2000 + sizeof(data));

	memset(&sf, 0, sizeof(sf));
	CU_ASSERT_EQUAL(nacre_statfs(fs, &sf), 0);
	CU_ASSERT(sf.total > 0);
	CU_ASSERT(sf.free <= sf.total);
	CU_ASSERT(sf.avail <= sf.free);
	CU_ASSERT(sf.files > 0);
	CU_ASSERT(sf.bsize > 0);
	memset(&sf, 0, sizeof(sf));
	CU_ASSERT_EQUAL(nacre_ost_statfs(fs, 2, &sf), 0);
	CU_ASSERT(sf.total > 0);
	CU_ASSERT_EQUAL(nacre_ost_statfs(fs, 17, &sf), -ENODEV);

	CU_ASSERT_EQUAL_FATAL(nacre_ost_list(fs, &list, &n), 0);
	CU_ASSERT_EQUAL(n, N_OSS);
	for (unsigned int i = 0; i < n; i++) {
		CU_ASSERT(list[i].index < N_OSS);
		if (list[i].index < N_OSS)
			seen[list[i].index] = true;
		CU_ASSERT(list[i].up);
		CU_ASSERT(strncmp(list[i].addr, "tcp://127.0.0.1:", 16) == 0);
		CU_ASSERT(atoi(list[i].addr + 16) > 0);
		CU_ASSERT_EQUAL(strlen(list[i].uuid), 36);
		CU_ASSERT_PTR_NOT_NULL(list[i].transport);
	}
	for (int i = 0; i < N_OSS; i++)
		CU_ASSERT(seen[i]);
	free(list);
}

/* ---- an OSS goes away ---- */

/* ---- small files (packing) ---- */

static void pack_dir(const char *path, uint32_t pack_max)
{
	struct nacre_layout l;
	struct nacre_stat st;

	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, path, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, path, &st), 0);
	memset(&l, 0, sizeof(l));
	l.first_ost = NACRE_OST_ANY;
	l.flags = NACRE_LAYOUT_PACK;
	l.pack_max = pack_max;
	CU_ASSERT_EQUAL_FATAL(nacre_setlayout_fid(fs, NULL, &st.fid, &l), 0);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL(nacre_getlayout(fs, path, &l), 0);
	CU_ASSERT(l.flags & NACRE_LAYOUT_PACK);
	CU_ASSERT_EQUAL(l.pack_max, pack_max ? pack_max : NACRE_PACK_MAX_DEFAULT);
}

static void check_file(struct nacre_fs *c, const char *path, const void *data, size_t len)
{
	struct nacre_file *f = NULL;
	struct nacre_stat st;
	uint8_t *back = malloc(len + 16);
	ssize_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	/* The size at open (a stat may come from the name cache). */
	CU_ASSERT_EQUAL_FATAL(nacre_open(c, path, O_RDONLY, 0, &f), 0);
	nacre_file_open_stat(f, &st);
	CU_ASSERT_EQUAL(st.size, len);
	n = read_all(f, back, len + 16, 0);
	CU_ASSERT_EQUAL(n, (ssize_t)len);
	if (n == (ssize_t)len)
		CU_ASSERT(memcmp(back, data, len) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	free(back);
}

static bool is_packed(const char *path)
{
	struct nacre_layout l;

	memset(&l, 0, sizeof(l));
	return nacre_getlayout(fs, path, &l) == 0 && (l.flags & NACRE_LAYOUT_PACKED);
}

static void test_pack(void)
{
	enum { NF = 40 };
	struct nacre_opts opts = { .attr_cache_ms = -1 };
	struct nacre_fs *fs2 = NULL;
	struct nacre_pack_info packs[16];
	struct nacre_layout l1, l2;
	struct nacre_file *f = NULL;
	unsigned int npacks = 0;
	uint64_t live = 0;
	char path[64];
	uint8_t *data[NF];
	size_t len[NF];

	pack_dir("/pk", 64 * 1024);
	for (int i = 0; i < NF; i++) {
		len[i] = i == 0 ? 0 : (size_t)(i * 1531) % (64 * 1024);
		data[i] = malloc(len[i] + 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(data[i]);
		fill_random(data[i], len[i], 500 + i);
		snprintf(path, sizeof(path), "/pk/f%d", i);
		make_file(path, data[i], len[i]);
	}
	/* This client sees its files before they are committed ... */
	for (int i = 0; i < NF; i += 7) {
		snprintf(path, sizeof(path), "/pk/f%d", i);
		check_file(fs, path, data[i], len[i]);
	}
	/* ... another one after the commit. */
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &opts, &fs2), 0);
	CU_ASSERT_EQUAL(nacre_sync(fs), 0);
	for (int i = 0; i < NF; i++) {
		snprintf(path, sizeof(path), "/pk/f%d", i);
		check_file(fs2, path, data[i], len[i]);
		CU_ASSERT(is_packed(path));
	}
	CU_ASSERT_EQUAL(nacre_pack_list(fs, 0, packs, 16, &npacks), 0);
	CU_ASSERT(npacks >= 1);
	for (unsigned int i = 0; i < npacks; i++)
		live += packs[i].live;
	/* A file that fits in a chunk lies within one. */
	memset(&l1, 0, sizeof(l1));
	CU_ASSERT_EQUAL(nacre_getlayout(fs, "/pk/f39", &l1), 0);
	CU_ASSERT_EQUAL(l1.pack_off / l1.stripe_size,
			(l1.pack_off + l1.pack_len - 1) / l1.stripe_size);

	/* Overwrite: a new extent, still packed; the other client reads it. */
	memset(data[5], 0xab, len[5]);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/pk/f5", O_WRONLY | O_TRUNC, 0, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data[5], len[5], 0), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(nacre_sync(fs), 0);
	check_file(fs2, "/pk/f5", data[5], len[5]);
	CU_ASSERT(is_packed("/pk/f5"));

	/* Append within pack_max: moves; past it: unpacked, bytes intact. */
	{
		/* A packed file being rewritten may grow to 1 MiB in its pack
		 * (the directory's pack_max is not known to a rewrite). */
		const size_t blen = 1300 * 1024;
		uint8_t *big = malloc(blen);

		CU_ASSERT_PTR_NOT_NULL_FATAL(big);
		memcpy(big, data[3], len[3]);
		fill_random(big + len[3], blen - len[3], 77);
		CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/pk/f3", O_WRONLY | O_APPEND, 0, &f), 0);
		CU_ASSERT_EQUAL(nacre_pwrite(f, big + len[3], 100, 0), 100);
		CU_ASSERT_EQUAL(write_all(f, big + len[3] + 100, blen - len[3] - 100, 0), 0);
		CU_ASSERT_EQUAL(nacre_close(f), 0);
		check_file(fs2, "/pk/f3", big, blen);
		CU_ASSERT_FALSE(is_packed("/pk/f3"));
		free(big);
	}

	/* Truncate: shorter, longer (zeros), through either client. */
	/* (A closed rewrite shows elsewhere once committed: nacre_sync.) */
	CU_ASSERT_EQUAL(nacre_truncate(fs2, "/pk/f7", 100), 0);
	check_file(fs, "/pk/f7", data[7], 100);
	memset(data[7] + 100, 0, len[7] - 100);
	CU_ASSERT_EQUAL(nacre_truncate(fs, "/pk/f7", len[7]), 0);
	check_file(fs2, "/pk/f7", data[7], len[7]);
	CU_ASSERT(is_packed("/pk/f7"));

	/* Rename and hard link keep the extent; unlink frees it. */
	memset(&l1, 0, sizeof(l1));
	CU_ASSERT_EQUAL(nacre_getlayout(fs, "/pk/f9", &l1), 0);
	CU_ASSERT_EQUAL(nacre_rename(fs, "/pk/f9", "/pk/g9"), 0);
	CU_ASSERT_EQUAL(nacre_link(fs, "/pk/g9", "/pk/h9"), 0);
	memset(&l2, 0, sizeof(l2));
	CU_ASSERT_EQUAL(nacre_getlayout(fs, "/pk/h9", &l2), 0);
	CU_ASSERT(l2.flags & NACRE_LAYOUT_PACKED);
	CU_ASSERT(l1.pack_id == l2.pack_id && l1.pack_off == l2.pack_off);
	check_file(fs2, "/pk/g9", data[9], len[9]);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/pk/g9"), 0);
	check_file(fs2, "/pk/h9", data[9], len[9]);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/pk/h9"), 0);
	{
		uint64_t live2 = 0;

		CU_ASSERT_EQUAL(nacre_pack_list(fs, 0, packs, 16, &npacks), 0);
		for (unsigned int i = 0; i < npacks; i++)
			live2 += packs[i].live;
		/* f9 and f3's old extent went, f5 and f7 moved. */
		CU_ASSERT(live2 < live + len[5] + len[7]);
	}

	/* Unlinking a file not yet committed: it is committed, then gone. */
	make_file("/pk/tmp", "x", 1);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/pk/tmp"), 0);
	{
		struct nacre_stat st;

		CU_ASSERT_EQUAL(nacre_stat(fs, "/pk/tmp", &st), -ENOENT);
		CU_ASSERT_EQUAL(nacre_stat(fs2, "/pk/tmp", &st), -ENOENT);
	}
	/* O_EXCL on a name held here. */
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/pk/new", O_WRONLY | O_CREAT | O_EXCL, 0644, &f), 0);
	{
		struct nacre_file *g = NULL;

		CU_ASSERT_EQUAL(nacre_open(fs, "/pk/new", O_WRONLY | O_CREAT | O_EXCL, 0644, &g),
				-EEXIST);
	}
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	nacre_disconnect(fs2);
	for (int i = 0; i < NF; i++) {
		snprintf(path, sizeof(path), "/pk/f%d", i);
		if (i != 9)
			CU_ASSERT_EQUAL(nacre_unlink(fs, path), 0);
		free(data[i]);
	}
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/pk/new"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/pk"), 0);
}

/* A thread that reads the files kept by test_pack_convert_gc (every
 * fifth) until told to stop, counting reads and wrong bytes. */
struct gc_reader {
	uint8_t **data;
	size_t *len;
	int nf;
	atomic_bool stop;
	int reads, bad;
};

static void *gc_reader_main(void *arg)
{
	struct gc_reader *gr = arg;
	uint8_t *back = malloc(64 * 1024);
	char path[64];

	if (!back)
		return NULL;
	/* At least one full round, then until the compaction is over. */
	for (int round = 0; round < 1 || !atomic_load(&gr->stop); round++) {
		for (int i = 0; i < gr->nf; i += 5) {
			struct nacre_file *f = NULL;

			snprintf(path, sizeof(path), "/plain/f%d", i);
			if (nacre_open(fs, path, O_RDONLY, 0, &f)) {
				gr->bad++;
				continue;
			}
			if (read_all(f, back, gr->len[i], 0) != (ssize_t)gr->len[i] ||
			    memcmp(back, gr->data[i], gr->len[i]) != 0)
				gr->bad++;
			gr->reads++;
			nacre_close(f);
		}
	}
	free(back);
	return NULL;
}

/* nacre_pack_file() converts; nacre_pack_gc() compacts, with the bytes
 * intact throughout. */
static uint64_t client_counter(struct nacre_fs *c, const char *name)
{
	struct nacre_counter ctr[64];
	int n = nacre_counters(c, ctr, 64);

	for (int i = 0; i < n && i < 64; i++)
		if (!strcmp(ctr[i].name, name))
			return ctr[i].value;
	return UINT64_MAX;
}

/* A read started with nacre_pread_start(): what its completion saw. */
struct started_read {
	pthread_mutex_t sr_lock;
	pthread_cond_t sr_cond;
	int sr_calls;
	ssize_t sr_n;
};

static void started_read_done(ssize_t n, void *arg)
{
	struct started_read *sr = arg;

	pthread_mutex_lock(&sr->sr_lock);
	sr->sr_calls++;
	sr->sr_n = n;
	pthread_cond_broadcast(&sr->sr_cond);
	pthread_mutex_unlock(&sr->sr_lock);
}

/* Starts a read of @f and waits (10 s at most) for its completion: the
 * bytes read, -EAGAIN when it did not start, or -ETIMEDOUT.  A completion
 * runs exactly once, and never for a read that did not start. */
static ssize_t start_and_wait(struct nacre_file *f, void *buf, size_t len, off_t off)
{
	struct started_read sr = { .sr_n = 0 };
	int64_t deadline = now_ms() + 10000;
	ssize_t n;
	int rc;

	pthread_mutex_init(&sr.sr_lock, NULL);
	pthread_cond_init(&sr.sr_cond, NULL);
	rc = nacre_pread_start(f, buf, len, off, started_read_done, &sr);
	CU_ASSERT(rc == 0 || rc == -EAGAIN);
	pthread_mutex_lock(&sr.sr_lock);
	while (rc == 0 && sr.sr_calls == 0 && now_ms() < deadline) {
		pthread_mutex_unlock(&sr.sr_lock);
		sleep_ms(1);
		pthread_mutex_lock(&sr.sr_lock);
	}
	pthread_mutex_unlock(&sr.sr_lock);
	/* A second completion would come about now. */
	sleep_ms(rc == 0 ? 20 : 0);
	pthread_mutex_lock(&sr.sr_lock);
	CU_ASSERT_EQUAL(sr.sr_calls, rc == 0 ? 1 : 0);
	n = rc ? rc : sr.sr_calls ? sr.sr_n : -ETIMEDOUT;
	pthread_mutex_unlock(&sr.sr_lock);
	pthread_mutex_destroy(&sr.sr_lock);
	pthread_cond_destroy(&sr.sr_cond);
	return n;
}

static void test_pread_start(void)
{
	static const size_t lens[] = { 1, 5000, 65536, 200000 };
	enum { NL = sizeof(lens) / sizeof(lens[0]) };
	struct nacre_opts opts = { .attr_cache_ms = -1 };
	struct nacre_fs *fs2 = NULL;
	struct nacre_file *f = NULL;
	uint8_t *data[NL], *back;
	char path[64];

	back = malloc(300000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	pack_dir("/pst", 0);
	for (size_t i = 0; i < NL; i++) {
		data[i] = malloc(lens[i]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(data[i]);
		fill_random(data[i], lens[i], 900 + i);
		snprintf(path, sizeof(path), "/pst/f%zu", i);
		make_file(path, data[i], lens[i]);
	}
	/* Not yet committed: this client holds the files, and reads them
	 * the way that serves them from there. */
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/pst/f1", O_RDONLY, 0, &f), 0);
	CU_ASSERT_EQUAL(start_and_wait(f, back, lens[1], 0), -EAGAIN);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(nacre_sync(fs), 0);

	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &opts, &fs2), 0);
	for (size_t i = 0; i < NL; i++) {
		snprintf(path, sizeof(path), "/pst/f%zu", i);
		CU_ASSERT(is_packed(path));
		CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, path, O_RDONLY, 0, &f), 0);
		/* The whole file, asked with room to spare: its size. */
		memset(back, 0, 300000);
		CU_ASSERT_EQUAL(start_and_wait(f, back, 300000, 0), (ssize_t)lens[i]);
		CU_ASSERT(memcmp(back, data[i], lens[i]) == 0);
		/* A piece from the middle, and one that ends past the end. */
		if (lens[i] > 3000) {
			memset(back, 0, 300000);
			CU_ASSERT_EQUAL(start_and_wait(f, back, 1000, 1777), 1000);
			CU_ASSERT(memcmp(back, data[i] + 1777, 1000) == 0);
			CU_ASSERT_EQUAL(start_and_wait(f, back, lens[i], 2000),
					(ssize_t)(lens[i] - 2000));
			CU_ASSERT(memcmp(back, data[i] + 2000, lens[i] - 2000) == 0);
		}
		/* At or past the end, and empty reads: nacre_pread() says 0. */
		CU_ASSERT_EQUAL(start_and_wait(f, back, 10, (off_t)lens[i]), -EAGAIN);
		CU_ASSERT_EQUAL(start_and_wait(f, back, 0, 0), -EAGAIN);
		CU_ASSERT_EQUAL(nacre_close(f), 0);
	}
	/* A file of objects of its own is not one packed read. */
	make_file("/pst-plain", data[1], lens[1]);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, "/pst-plain", O_RDONLY, 0, &f), 0);
	CU_ASSERT_EQUAL(start_and_wait(f, back, lens[1], 0), -EAGAIN);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	/* Nor is a handle that only writes. */
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, "/pst/f2", O_WRONLY, 0, &f), 0);
	CU_ASSERT_EQUAL(start_and_wait(f, back, 100, 0), -EAGAIN);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	nacre_disconnect(fs2);
	/* Gone again: the compaction tests count the files of packs. */
	for (size_t i = 0; i < NL; i++) {
		snprintf(path, sizeof(path), "/pst/f%zu", i);
		CU_ASSERT_EQUAL(nacre_unlink(fs, path), 0);
		free(data[i]);
	}
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/pst-plain"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/pst"), 0);
	free(back);
}

/* A started read whose OST refuses the chunk (corrupt on its disk) is read
 * again the way that decodes around it: the right bytes, once. */
static void test_pread_start_corrupt(void)
{
	const size_t len = 5000;
	struct nacre_opts opts = { .attr_cache_ms = -1 };
	uint8_t *data = malloc(len), *back = malloc(len);
	struct nacre_fs *fs2 = NULL;
	struct nacre_file *f = NULL;
	struct nacre_layout l;
	struct nacre_stat st;
	uint64_t degraded;
	char opath[1300];
	unsigned int hit = 0;
	int fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	/* Packs coded 2+1 over three OSTs. */
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/psc", 0755), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/psc", &st), 0);
	memset(&l, 0, sizeof(l));
	l.first_ost = NACRE_OST_ANY;
	l.flags = NACRE_LAYOUT_PACK;
	l.stripe_count = 3;
	l.k = 2;
	l.m = 1;
	CU_ASSERT_EQUAL_FATAL(nacre_setlayout_fid(fs, NULL, &st.fid, &l), 0);
	fill_random(data, len, 990);
	make_file("/psc/f", data, len);
	CU_ASSERT_EQUAL(nacre_sync(fs), 0);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL_FATAL(nacre_getlayout(fs, "/psc/f", &l), 0);
	CU_ASSERT_FATAL((l.flags & NACRE_LAYOUT_PACKED) && l.m == 1 && l.shard_count == 3);
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &opts, &fs2), 0);
	/* Each shard's byte at the extent in turn: the one that holds it
	 * fails the first read, which the decoding read then mends. */
	for (uint32_t sh = 0; sh < l.shard_count; sh++) {
		struct nacre_fid pf = { NACRE_PACK_FID_SEQ, l.pack_id };
		uint8_t b, flip;

		obj_path(l.shards[sh].ost, &pf, opath, sizeof(opath));
		fd = open(opath, O_RDWR);
		if (fd < 0 && errno == ENOENT)
			continue; /* a shard the pack's bytes have not reached */
		CU_ASSERT_FATAL(fd >= 0);
		if (pread(fd, &b, 1, (off_t)l.pack_off + 10) != 1) {
			close(fd);
			continue;
		}
		flip = b ^ 0x5a;
		CU_ASSERT_EQUAL_FATAL(pwrite(fd, &flip, 1, (off_t)l.pack_off + 10), 1);
		degraded = client_counter(fs2, "nacre_client_degraded_reads_total");
		CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, "/psc/f", O_RDONLY, 0, &f), 0);
		memset(back, 0, len);
		CU_ASSERT_EQUAL(start_and_wait(f, back, len, 0), (ssize_t)len);
		CU_ASSERT(memcmp(back, data, len) == 0);
		CU_ASSERT_EQUAL(nacre_close(f), 0);
		if (client_counter(fs2, "nacre_client_degraded_reads_total") > degraded)
			hit++;
		CU_ASSERT_EQUAL(pwrite(fd, &b, 1, (off_t)l.pack_off + 10), 1);
		close(fd);
	}
	/* Exactly one shard holds the extent's bytes. */
	CU_ASSERT_EQUAL(hit, 1);
	nacre_disconnect(fs2);
	/* Files of a directory laid out otherwise, created in turn with this
	 * one's, never share its packs: each keeps its directory's coding. */
	pack_dir("/psc-d", 0);
	for (int i = 0; i < 4; i++) {
		struct nacre_layout lg;

		snprintf(opath, sizeof(opath), i % 2 ? "/psc/g%d" : "/psc-d/g%d", i);
		make_file(opath, data, 100 + (size_t)i);
		CU_ASSERT_EQUAL(nacre_sync(fs), 0);
		memset(&lg, 0, sizeof(lg));
		CU_ASSERT_EQUAL(nacre_getlayout(fs, opath, &lg), 0);
		CU_ASSERT(lg.flags & NACRE_LAYOUT_PACKED);
		CU_ASSERT_EQUAL(lg.m, i % 2 ? 1u : 0u);
		CU_ASSERT_EQUAL(lg.shard_count, i % 2 ? 3u : (uint32_t)N_OSS);
		CU_ASSERT_EQUAL(nacre_unlink(fs, opath), 0);
	}
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/psc-d"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/psc/f"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/psc"), 0);
	free(data);
	free(back);
}

/* @path is packed, its pack @count objects wide with @m parity (the
 * layout in *@l). */
static void expect_pack_coding(const char *path, uint32_t count, uint32_t m,
			       struct nacre_layout *l)
{
	memset(l, 0, sizeof(*l));
	CU_ASSERT_EQUAL(nacre_getlayout(fs, path, l), 0);
	CU_ASSERT(l->flags & NACRE_LAYOUT_PACKED);
	CU_ASSERT_EQUAL(l->shard_count, count);
	CU_ASSERT_EQUAL(l->m, m);
}

/* A file moved into a pack (conversion, compaction) or rewritten keeps its
 * coding, whatever pack this client is filling for other files. */
static void test_pack_keeps_coding(void)
{
	static const char body[] = "coded 2+1, and so it stays";
	struct nacre_file *f = NULL;
	struct nacre_layout l;
	struct nacre_stat st;

	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/kc", 0755), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/kc", &st), 0);
	memset(&l, 0, sizeof(l));
	l.first_ost = NACRE_OST_ANY;
	l.stripe_count = 3;
	l.k = 2;
	l.m = 1;
	CU_ASSERT_EQUAL_FATAL(nacre_setlayout_fid(fs, NULL, &st.fid, &l), 0);
	make_file("/kc/a", body, sizeof(body));
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL_FATAL(nacre_getlayout(fs, "/kc/a", &l), 0);
	CU_ASSERT_FATAL(!(l.flags & NACRE_LAYOUT_PACKED) && l.m == 1);
	/* This client fills a pack of the default layout first. */
	pack_dir("/kc-d", 0);
	make_file("/kc-d/x", body, sizeof(body));
	CU_ASSERT_EQUAL(nacre_sync(fs), 0);
	expect_pack_coding("/kc-d/x", N_OSS, 0, &l);
	/* Converted: a pack coded as the file was. */
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/kc/a", &st), 0);
	CU_ASSERT_EQUAL(nacre_pack_file(fs, &st.fid, 0), 0);
	expect_pack_coding("/kc/a", 3, 1, &l);
	check_file(fs, "/kc/a", body, sizeof(body));
	/* Another default file, then a rewrite of the coded one. */
	make_file("/kc-d/y", body, sizeof(body));
	CU_ASSERT_EQUAL(nacre_sync(fs), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/kc/a", O_WRONLY | O_TRUNC, 0, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, body, 10, 0), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(nacre_sync(fs), 0);
	expect_pack_coding("/kc/a", 3, 1, &l);
	check_file(fs, "/kc/a", body, 10);
	expect_pack_coding("/kc-d/y", N_OSS, 0, &l);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/kc/a"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/kc-d/x"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/kc-d/y"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/kc"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/kc-d"), 0);
}

static void test_pack_convert_gc(void)
{
	enum { NF = 30 };
	struct nacre_pack_info packs[64];
	unsigned int npacks = 0;
	struct nacre_stat st;
	uint64_t moved = 0, freed = 0;
	uint8_t *data[NF];
	size_t len[NF];
	char path[64];

	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/plain", 0755), 0);
	for (int i = 0; i < NF; i++) {
		len[i] = 1000 + (size_t)i * 977;
		data[i] = malloc(len[i]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(data[i]);
		fill_random(data[i], len[i], 900 + i);
		snprintf(path, sizeof(path), "/plain/f%d", i);
		make_file(path, data[i], len[i]);
		CU_ASSERT_FALSE(is_packed(path));
	}
	/* Conversion. */
	for (int i = 0; i < NF; i++) {
		snprintf(path, sizeof(path), "/plain/f%d", i);
		CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, path, &st), 0);
		CU_ASSERT_EQUAL(nacre_pack_file(fs, &st.fid, 0), 0);
		CU_ASSERT(is_packed(path));
		check_file(fs, path, data[i], len[i]);
	}
	CU_ASSERT_EQUAL(nacre_pack_file(fs, &st.fid, 0), 0); /* already packed */
	CU_ASSERT_EQUAL(nacre_stat(fs, "/plain", &st), 0);
	CU_ASSERT_EQUAL(nacre_pack_file(fs, &st.fid, 0), -EISDIR);
	{
		uint8_t *big = calloc(1, 3 * S);

		CU_ASSERT_PTR_NOT_NULL_FATAL(big);
		make_file("/plain/big", big, 3 * S);
		CU_ASSERT_EQUAL(nacre_stat(fs, "/plain/big", &st), 0);
		CU_ASSERT_EQUAL(nacre_pack_file(fs, &st.fid, 0), -EFBIG);
		CU_ASSERT_EQUAL(nacre_unlink(fs, "/plain/big"), 0);
		free(big);
	}
	{
		/* Larger than the packer's usual buffer, within a pack_max
		 * of 16 MiB: packed whole. */
		const size_t blen = 10 * 1000 * 1000;
		uint8_t *big = malloc(blen);

		CU_ASSERT_PTR_NOT_NULL_FATAL(big);
		fill_random(big, blen, 950);
		make_file("/plain/big10", big, blen);
		CU_ASSERT_EQUAL(nacre_stat(fs, "/plain/big10", &st), 0);
		CU_ASSERT_EQUAL(nacre_pack_file(fs, &st.fid, 16u << 20), 0);
		CU_ASSERT(is_packed("/plain/big10"));
		check_file(fs, "/plain/big10", big, blen);
		CU_ASSERT_EQUAL(nacre_unlink(fs, "/plain/big10"), 0);
		free(big);
	}
	/* Most files go: the pack they share is mostly dead. */
	for (int i = 0; i < NF; i++) {
		if (i % 5 == 0)
			continue;
		snprintf(path, sizeof(path), "/plain/f%d", i);
		CU_ASSERT_EQUAL(nacre_unlink(fs, path), 0);
	}
	/* Readers while compaction runs: one opened before it, which keeps
	 * reading the old extent, and a thread that opens and reads the files
	 * over and over. */
	{
		struct gc_reader gr = { .data = data, .len = len, .nf = NF };
		struct nacre_file *old = NULL;
		pthread_t th;

		CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/plain/f0", O_RDONLY, 0, &old), 0);
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, gc_reader_main, &gr), 0);
		CU_ASSERT_EQUAL(nacre_pack_gc(fs, 0.5, &moved, &freed), 0);
		atomic_store(&gr.stop, true);
		pthread_join(th, NULL);
		CU_ASSERT(gr.reads > 0);
		CU_ASSERT_EQUAL(gr.bad, 0);
		{
			uint8_t *back = malloc(len[0]);

			CU_ASSERT_PTR_NOT_NULL_FATAL(back);
			CU_ASSERT_EQUAL(read_all(old, back, len[0], 0), (ssize_t)len[0]);
			CU_ASSERT(memcmp(back, data[0], len[0]) == 0);
			free(back);
		}
		CU_ASSERT_EQUAL(nacre_close(old), 0);
	}
	CU_ASSERT_EQUAL(moved, (NF + 4) / 5);
	CU_ASSERT(freed >= 1);
	for (int i = 0; i < NF; i += 5) {
		snprintf(path, sizeof(path), "/plain/f%d", i);
		check_file(fs, path, data[i], len[i]);
		CU_ASSERT(is_packed(path));
	}
	/* The old packs hold nothing now; the new one all the live bytes. */
	CU_ASSERT_EQUAL(nacre_pack_list(fs, 0, packs, 64, &npacks), 0);
	{
		unsigned int full = 0;

		for (unsigned int i = 0; i < npacks; i++)
			if (packs[i].files == (NF + 4) / 5 && packs[i].live == packs[i].size)
				full++;
		CU_ASSERT(full >= 1);
	}
	/* A second pass finds nothing to do. */
	CU_ASSERT_EQUAL(nacre_pack_gc(fs, 0.5, &moved, &freed), 0);
	CU_ASSERT_EQUAL(moved, 0);
	for (int i = 0; i < NF; i++) {
		snprintf(path, sizeof(path), "/plain/f%d", i);
		if (i % 5 == 0)
			CU_ASSERT_EQUAL(nacre_unlink(fs, path), 0);
		free(data[i]);
	}
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/plain"), 0);
}

/* Reads @f from @off to @off + @len in @req-byte requests, in order. */
static bool read_stream(struct nacre_file *f, const unsigned char *want, uint64_t off,
			size_t len, size_t req, unsigned char *back)
{
	for (size_t done = 0; done < len;) {
		size_t n = len - done < req ? len - done : req;

		if (read_all(f, back, n, off + done) != (ssize_t)n ||
		    memcmp(back, want + done, n) != 0)
			return false;
		done += n;
	}
	return true;
}

/* A directory whose files are laid out @k+@m over all four OSTs in
 * 256 KiB chunks. */
static void ra_dir(const char *path, uint32_t k, uint32_t m)
{
	struct nacre_layout req;

	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, path, 0755), 0);
	memset(&req, 0, sizeof(req));
	req.stripe_size = 256 * 1024;
	req.stripe_count = N_OSS;
	req.k = k;
	req.m = m;
	req.first_ost = NACRE_OST_ANY;
	CU_ASSERT_EQUAL_FATAL(nacre_setlayout(fs, path, &req), 0);
}

/* Sequential reads are served from what was read ahead, with the bytes
 * right; random reads read nothing ahead; writes and truncates by any
 * handle of the client drop what was read ahead of them. */
static void test_readahead_one(const char *dir, uint32_t k, uint32_t m)
{
	const size_t len = 24 * 256 * 1024 + 4321, req = 64 * 1024;
	unsigned char *data = malloc(len), *back = malloc(len), *patch = malloc(req);
	struct nacre_file *f = NULL, *w = NULL;
	struct nacre_io_stats a, b;
	char path[64];

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	CU_ASSERT_PTR_NOT_NULL_FATAL(patch);
	ra_dir(dir, k, m);
	snprintf(path, sizeof(path), "%s/f", dir);
	fill_random(data, len, 7000 + k * 10 + m);
	make_file(path, data, len);

	/* A whole sequential pass: most of it comes from readahead. */
	nacre_io_stats(fs, &a);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, path, O_RDONLY, 0, &f), 0);
	CU_ASSERT(read_stream(f, data, 0, len, req, back));
	nacre_io_stats(fs, &b);
	CU_ASSERT(b.ra_served - a.ra_served >= len / 2);
	CU_ASSERT(b.ra_fetched - a.ra_fetched >= b.ra_served - a.ra_served);
	CU_ASSERT_EQUAL(nacre_pread(f, back, req, (off_t)len), 0);

	/* Random reads: nothing read ahead. */
	nacre_io_stats(fs, &a);
	for (int i = 0; i < 40; i++) {
		uint64_t off = ((uint64_t)i * 7919 * 4099) % (len - 100);

		CU_ASSERT_EQUAL(read_all(f, back, 100, off), 100);
		CU_ASSERT(memcmp(back, data + off, 100) == 0);
	}
	nacre_io_stats(fs, &b);
	CU_ASSERT_EQUAL(b.ra_fetched, a.ra_fetched);

	/* Another handle rewrites bytes ahead of the stream: the stream reads
	 * the new bytes. */
	CU_ASSERT(read_stream(f, data, 0, 4 * req, req, back));
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, path, O_WRONLY, 0, &w), 0);
	fill_random(patch, req, 77);
	CU_ASSERT_EQUAL(write_all(w, patch, req, 10 * req + 5), 0);
	CU_ASSERT_EQUAL(nacre_close(w), 0);
	memcpy(data + 10 * req + 5, patch, req);
	CU_ASSERT(read_stream(f, data + 4 * req, 4 * req, 12 * req, req, back));

	/* The same handle's own write, opened read-write. */
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, path, O_RDWR, 0, &f), 0);
	CU_ASSERT(read_stream(f, data, 0, 4 * req, req, back));
	fill_random(patch, req, 78);
	CU_ASSERT_EQUAL(write_all(f, patch, 100, 6 * req), 0);
	memcpy(data + 6 * req, patch, 100);
	CU_ASSERT(read_stream(f, data + 4 * req, 4 * req, 8 * req, req, back));

	/* A truncate through another path: what was read ahead past the new
	 * end is not served. */
	CU_ASSERT(read_stream(f, data, 0, 4 * req, req, back));
	CU_ASSERT_EQUAL(nacre_truncate(fs, path, 5 * req), 0);
	{
		ssize_t n = nacre_pread(f, back, 2 * req, (off_t)(4 * req));

		CU_ASSERT(n >= (ssize_t)req);
		if (n >= (ssize_t)req)
			CU_ASSERT(memcmp(back, data + 4 * req, req) == 0);
		for (ssize_t i = (ssize_t)req; i < n; i++)
			if (back[i] != 0) {
				CU_FAIL("bytes past the truncation");
				break;
			}
	}
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	/* Every handle closed: nothing stays in flight or held. */
	CU_ASSERT_EQUAL(nacre_unlink(fs, path), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, dir), 0);
	free(data);
	free(back);
	free(patch);
}

static void test_readahead(void)
{
	struct nacre_opts off = { .readahead_kb = -1 };
	const size_t len = 8 * S;
	unsigned char *data = malloc(len), *back = malloc(len);
	struct nacre_fs *fs2 = NULL;
	struct nacre_file *f = NULL;
	struct nacre_io_stats st;

	test_readahead_one("/ra_plain", 1, 0);
	test_readahead_one("/ra_ec", 2, 1);
	/* Turned off: the same reads, nothing read ahead. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	fill_random(data, len, 7100);
	make_file("/ra_off", data, len);
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &off, &fs2), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, "/ra_off", O_RDONLY, 0, &f), 0);
	CU_ASSERT(read_stream(f, data, 0, len, 128 * 1024, back));
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	nacre_io_stats(fs2, &st);
	CU_ASSERT_EQUAL(st.ra_fetched, 0);
	CU_ASSERT_EQUAL(st.ra_served, 0);
	/* Closed in the middle of a stream: the reads in flight are waited
	 * for, and dropped. */
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/ra_off", O_RDONLY, 0, &f), 0);
	CU_ASSERT(read_stream(f, data, 0, 2 * S, S / 2, back));
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	nacre_disconnect(fs2);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/ra_off"), 0);
	free(data);
	free(back);
}

/* The pack that holds @path (0: none). */
static uint64_t pack_of(const char *path)
{
	struct nacre_layout l;

	memset(&l, 0, sizeof(l));
	if (nacre_getlayout(fs, path, &l) || !(l.flags & NACRE_LAYOUT_PACKED))
		return 0;
	return l.pack_id;
}

/* The MDS's background pass compacts a sealed pack that went sparse: the
 * files left move to a new pack, bytes intact, and the MDS sees no sparse
 * pack afterwards. */
static void test_pack_gc_background(void)
{
	enum { NF = 20 };
	struct nacre_opts opts = { .attr_cache_ms = -1 };
	struct nacre_fs *fs2 = NULL;
	struct nacre_file *f = NULL;
	uint64_t old_pack, wanted = 0;
	uint8_t *data[NF];
	size_t len[NF];
	char path[64];
	int64_t deadline;
	bool moved;

	pack_dir("/bg", 64 * 1024);
	/* Written by a client that then goes away: its pack is sealed. */
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &opts, &fs2), 0);
	for (int i = 0; i < NF; i++) {
		len[i] = 2000 + (size_t)i * 1777;
		data[i] = malloc(len[i]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(data[i]);
		fill_random(data[i], len[i], 3100 + i);
		snprintf(path, sizeof(path), "/bg/f%d", i);
		CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, path, O_CREAT | O_WRONLY, 0644, &f), 0);
		CU_ASSERT_EQUAL(write_all(f, data[i], len[i], 0), 0);
		CU_ASSERT_EQUAL(nacre_close(f), 0);
	}
	nacre_disconnect(fs2);
	old_pack = pack_of("/bg/f0");
	CU_ASSERT_FATAL(old_pack != 0);
	/* Nothing is sparse yet. */
	CU_ASSERT_EQUAL(mds_pack_gc_candidates(mds_server_ns(mds), 0.5, &wanted), 0);
	CU_ASSERT_EQUAL(wanted, 0);
	for (int i = 0; i < NF; i++) {
		if (i % 4 == 0)
			continue;
		snprintf(path, sizeof(path), "/bg/f%d", i);
		CU_ASSERT_EQUAL(nacre_unlink(fs, path), 0);
	}
	CU_ASSERT_EQUAL(mds_pack_gc_candidates(mds_server_ns(mds), 0.5, &wanted), 0);
	CU_ASSERT_EQUAL(wanted, 1);
	mds_server_kick_pack_gc(mds);
	deadline = now_ms() + 30000;
	do {
		sleep_ms(50);
		moved = true;
		for (int i = 0; i < NF; i += 4) {
			snprintf(path, sizeof(path), "/bg/f%d", i);
			if (pack_of(path) == old_pack || pack_of(path) == 0)
				moved = false;
		}
	} while (!moved && now_ms() < deadline);
	CU_ASSERT(moved);
	for (int i = 0; i < NF; i += 4) {
		snprintf(path, sizeof(path), "/bg/f%d", i);
		check_file(fs, path, data[i], len[i]);
	}
	CU_ASSERT_EQUAL(mds_pack_gc_candidates(mds_server_ns(mds), 0.5, &wanted), 0);
	CU_ASSERT_EQUAL(wanted, 0);
	for (int i = 0; i < NF; i++) {
		snprintf(path, sizeof(path), "/bg/f%d", i);
		if (i % 4 == 0)
			CU_ASSERT_EQUAL(nacre_unlink(fs, path), 0);
		free(data[i]);
	}
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/bg"), 0);
}

/* A pack its client stops adding to is sealed while the client stays
 * connected (after 60 flush intervals: 3 s with pack_flush_ms 50). */
static void test_pack_idle_seal(void)
{
	struct nacre_opts opts = { .attr_cache_ms = -1, .pack_flush_ms = 50 };
	struct nacre_pack_info packs[64];
	struct nacre_fs *fs2 = NULL;
	struct nacre_file *f = NULL;
	unsigned int n = 0;
	uint64_t id;
	uint8_t data[3000];
	int64_t t0, deadline;
	bool sealed = false;

	pack_dir("/idle", 64 * 1024);
	fill_random(data, sizeof(data), 3300);
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &opts, &fs2), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, "/idle/a", O_CREAT | O_WRONLY, 0644, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, sizeof(data), 0), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(nacre_sync(fs2), 0);
	t0 = now_ms();
	id = pack_of("/idle/a");
	CU_ASSERT_FATAL(id != 0);
	/* Still being filled right after the commit. */
	CU_ASSERT_EQUAL(nacre_pack_list(fs, id - 1, packs, 1, &n), 0);
	CU_ASSERT(n == 1 && packs[0].id == id && !packs[0].sealed);
	deadline = t0 + 15000;
	while (!sealed && now_ms() < deadline) {
		sleep_ms(100);
		CU_ASSERT_EQUAL(nacre_pack_list(fs, id - 1, packs, 1, &n), 0);
		sealed = n == 1 && packs[0].id == id && packs[0].sealed;
	}
	CU_ASSERT(sealed);
	CU_ASSERT(now_ms() - t0 >= 2500);       /* not at once */
	/* The next file goes to a new pack; both read back. */
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, "/idle/b", O_CREAT | O_WRONLY, 0644, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, 1000, 0), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(nacre_sync(fs2), 0);
	CU_ASSERT(pack_of("/idle/b") != 0 && pack_of("/idle/b") != id);
	check_file(fs, "/idle/a", data, sizeof(data));
	check_file(fs, "/idle/b", data, 1000);
	nacre_disconnect(fs2);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/idle/a"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/idle/b"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/idle"), 0);
}

/* A move (conversion, compaction) is refused when the file's size or
 * mtime is no longer what the mover read: a writer changed the bytes in
 * place meanwhile, and its bytes must stay. */
static void test_pack_move_checks(void)
{
	struct nc_pack_switch *sw = calloc(1, sizeof(*sw));
	struct mds_ost_set osts;
	struct nc_layout layout, out;
	struct nacre_stat st;
	struct nc_attr attr;
	struct nc_fid f;
	uint8_t data[5000];

	CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
	fill_random(data, sizeof(data), 3400);
	make_file("/mvchk", data, sizeof(data));
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/mvchk", &st), 0);
	f.f_seq = st.fid.seq;
	f.f_oid = st.fid.oid;
	CU_ASSERT_EQUAL_FATAL(mds_ns_getattr(mds_server_ns(mds), &f, &attr), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(mds_server_ns(mds), &f, &layout), 0);
	mds_server_ost_set(mds, &osts);
	sw->ps_fid = f;
	sw->ps_flags = NC_SWITCH_MOVE;
	sw->ps_old = layout;
	sw->ps_new = layout;
	/* The mtime moved on. */
	sw->ps_size = attr.a_size;
	sw->ps_mtime = attr.a_mtime;
	sw->ps_mtime.t_nsec = (sw->ps_mtime.t_nsec + 1) % 1000000000u;
	CU_ASSERT_EQUAL(mds_ns_pack_switch(mds_server_ns(mds), sw, &osts, &attr, &out),
			-NC_E_CHANGED);
	/* The size moved on. */
	sw->ps_mtime = attr.a_mtime;
	sw->ps_size = attr.a_size + 1;
	CU_ASSERT_EQUAL(mds_ns_pack_switch(mds_server_ns(mds), sw, &osts, &attr, &out),
			-NC_E_CHANGED);
	/* Nothing moved: the file reads as before and is not packed. */
	check_file(fs, "/mvchk", data, sizeof(data));
	CU_ASSERT_FALSE(is_packed("/mvchk"));
	/* A conversion with nothing changed goes through. */
	CU_ASSERT_EQUAL(nacre_pack_file(fs, &st.fid, 0), 0);
	CU_ASSERT(is_packed("/mvchk"));
	check_file(fs, "/mvchk", data, sizeof(data));
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/mvchk"), 0);
	free(sw);
}

static bool layout_uses(const struct nacre_layout *l, uint32_t ost)
{
	for (uint32_t i = 0; i < l->shard_count; i++)
		if (l->shards[i].ost == ost)
			return true;
	return false;
}

/* nacre_migrate_fid: plain to 2+1 away from OST 0 and back to plain away
 * from OST 1, every byte kept, the old objects destroyed; a writer with
 * the file open makes it busy; permission and type checks. */
static void test_migrate(void)
{
	struct nacre_cred other = { .uid = 4400, .gid = 4400 };
	struct nacre_opts xo = { .cred = &other, .attr_cache_ms = -1 };
	struct nacre_migrate_opts mo;
	struct nacre_layout l1, l2;
	struct nacre_file *w = NULL;
	struct nacre_fs *fx = NULL;
	struct nacre_stat st, dst;
	size_t len = 3 * 1024 * 1024 + 123;
	uint8_t *data = malloc(len + 100);

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	fill_random(data, len + 100, 4400);
	make_file("/mig1", data, len);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/mig1", &st), 0);
	sleep_ms(1100); /* the MDS waits a second after a writer */

	memset(&mo, 0, sizeof(mo));
	mo.geometry = true;
	mo.k = 2;
	mo.m = 1;
	mo.stripe_count = 3;
	mo.nexclude = 1;
	mo.exclude[0] = 0;
	mo.grace_s = -1;
	CU_ASSERT_EQUAL_FATAL(nacre_migrate_fid(fs, NULL, &st.fid, &mo, &l1), 0);
	CU_ASSERT_EQUAL(l1.k, 2);
	CU_ASSERT_EQUAL(l1.m, 1);
	CU_ASSERT_EQUAL(l1.shard_count, 3);
	CU_ASSERT_FALSE(layout_uses(&l1, 0));
	CU_ASSERT_EQUAL(l1.obj_fid.seq, 3);
	for (uint32_t i = 0; i < l1.shard_count; i++)
		CU_ASSERT(obj_exists(l1.shards[i].ost, &l1.obj_fid));
	check_file(fs, "/mig1", data, len);
	CU_ASSERT(wait_objects_gone(&st.fid, 5000));

	mo.k = 1;
	mo.m = 0;
	mo.stripe_count = 2;
	mo.exclude[0] = 1;
	CU_ASSERT_EQUAL_FATAL(nacre_migrate_fid(fs, NULL, &st.fid, &mo, &l2), 0);
	CU_ASSERT_EQUAL(l2.m, 0);
	CU_ASSERT_EQUAL(l2.shard_count, 2);
	CU_ASSERT_FALSE(layout_uses(&l2, 1));
	CU_ASSERT(l2.obj_fid.oid != l1.obj_fid.oid);
	check_file(fs, "/mig1", data, len);
	CU_ASSERT(wait_objects_gone(&l1.obj_fid, 5000));

	/* A writer holds the file open and appends: busy, nothing moved. */
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/mig1", O_WRONLY, 0, &w), 0);
	CU_ASSERT_EQUAL(write_all(w, data + len, 100, len), 0);
	CU_ASSERT_EQUAL(nacre_flush(w), 0);
	mo.retries = 1;
	CU_ASSERT_EQUAL(nacre_migrate_fid(fs, NULL, &st.fid, &mo, NULL), -EBUSY);
	CU_ASSERT_EQUAL(nacre_close(w), 0);
	check_file(fs, "/mig1", data, len + 100);
	CU_ASSERT_EQUAL_FATAL(nacre_getlayout(fs, "/mig1", &l1), 0);
	CU_ASSERT_EQUAL(l1.obj_fid.oid, l2.obj_fid.oid);
	/* Once it is quiet the retries get through. */
	mo.retries = 0;
	CU_ASSERT_EQUAL(nacre_migrate_fid(fs, NULL, &st.fid, &mo, &l1), 0);
	CU_ASSERT(l1.obj_fid.oid != l2.obj_fid.oid);
	check_file(fs, "/mig1", data, len + 100);

	/* Others may not; a directory is not migrated. */
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &xo, &fx), 0);
	CU_ASSERT_EQUAL(nacre_migrate_fid(fx, NULL, &st.fid, NULL, NULL), -EACCES);
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/migdir", 0755), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/migdir", &dst), 0);
	CU_ASSERT_EQUAL(nacre_migrate_fid(fs, NULL, &dst.fid, NULL, NULL), -EISDIR);
	mo.nexclude = NACRE_MIGRATE_EXCLUDE_MAX + 1;
	CU_ASSERT_EQUAL(nacre_migrate_fid(fs, NULL, &st.fid, &mo, NULL), -EINVAL);
	nacre_disconnect(fx);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/migdir"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/mig1"), 0);
	CU_ASSERT(wait_objects_gone(&l1.obj_fid, 5000));
	free(data);
}

/* The changelog through the library: what this client did shows in order,
 * with names; only root reads or clears it. */
static void test_changelog(void)
{
	static const struct nacre_cred root = { .uid = 0, .gid = 0 };
	static const struct nacre_cred user = { .uid = 4321, .gid = 4321 };
	struct nacre_opts ro = { .cred = &root, .attr_cache_ms = -1 };
	struct nacre_opts uo = { .cred = &user, .attr_cache_ms = -1 };
	struct nacre_changelog_rec *r = calloc(300, sizeof(*r));
	struct nacre_fs *fr = NULL, *fu = NULL;
	struct nacre_stat st;
	uint64_t last = 0, start;
	size_t n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &ro, &fr), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &uo, &fu), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_changelog_read(fr, UINT64_MAX - 1, r, 1, &n, &start), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fr, "/cl", 0755), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fr, "/cl", &st), 0);
	/* More records than one reply holds (128), to page through. */
	for (int i = 0; i < 150; i++) {
		char p[32];

		snprintf(p, sizeof(p), "/cl/n%d", i);
		CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fr, p, 0755), 0);
	}
	CU_ASSERT_EQUAL_FATAL(nacre_rename(fr, "/cl/n0", "/cl/renamed"), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_changelog_read(fr, start, r, 300, &n, &last), 0);
	CU_ASSERT_EQUAL_FATAL(n, 152);
	CU_ASSERT_EQUAL(last, start + 152);
	CU_ASSERT_EQUAL(r[0].type, NACRE_CL_MKDIR);
	CU_ASSERT_STRING_EQUAL(r[0].name, "cl");
	CU_ASSERT_STRING_EQUAL(nacre_changelog_type_name(r[0].type), "MKDIR");
	CU_ASSERT_STRING_EQUAL(r[150].name, "n149");
	CU_ASSERT(r[150].parent.seq == st.fid.seq && r[150].parent.oid == st.fid.oid);
	CU_ASSERT_EQUAL(r[151].type, NACRE_CL_RENAME);
	CU_ASSERT_STRING_EQUAL(r[151].name, "renamed");
	CU_ASSERT_STRING_EQUAL(r[151].sname, "n0");
	for (size_t i = 1; i < n; i++)
		CU_ASSERT_EQUAL(r[i].seq, r[i - 1].seq + 1);
	CU_ASSERT_STRING_EQUAL(nacre_changelog_type_name(999), "UNKNOWN");
	/* Not root: refused, and nothing is removed. */
	CU_ASSERT_EQUAL(nacre_changelog_read(fu, start, r, 10, &n, NULL), -EPERM);
	CU_ASSERT_EQUAL(nacre_changelog_clear(fu, last), -EPERM);
	CU_ASSERT_EQUAL(nacre_changelog_read(fr, start, r, 300, &n, NULL), 0);
	CU_ASSERT_EQUAL(n, 152);
	CU_ASSERT_EQUAL(nacre_changelog_clear(fr, last), 0);
	CU_ASSERT_EQUAL(nacre_changelog_read(fr, 0, r, 300, &n, NULL), 0);
	CU_ASSERT_EQUAL(n, 0);
	for (int i = 1; i < 150; i++) {
		char p[32];

		snprintf(p, sizeof(p), "/cl/n%d", i);
		CU_ASSERT_EQUAL(nacre_rmdir(fr, p), 0);
	}
	CU_ASSERT_EQUAL(nacre_rmdir(fr, "/cl/renamed"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fr, "/cl"), 0);
	nacre_disconnect(fu);
	nacre_disconnect(fr);
	free(r);
}

/* OST administration and pools through libnacre: root only, names checked,
 * a deactivated OST left out of new files, a directory's pool obeyed. */
static bool layout_only_on(const struct nacre_layout *l, uint32_t a, uint32_t b)
{
	for (uint32_t i = 0; i < l->shard_count; i++)
		if (l->shards[i].ost != a && l->shards[i].ost != b)
			return false;
	return l->shard_count > 0;
}

static void test_ost_admin_pools(void)
{
	struct nacre_cred rootc = { .uid = 0, .gid = 0 };
	struct nacre_cred user = { .uid = 4400, .gid = 4400 };
	struct nacre_opts ro = { .cred = &rootc, .attr_cache_ms = -1 };
	struct nacre_opts uo = { .cred = &user, .attr_cache_ms = -1 };
	struct nacre_fs *fr = NULL, *fu = NULL;
	struct nacre_pool *pools = NULL;
	struct nacre_ost *osts = NULL;
	uint32_t two[2] = { 1, 3 };
	struct nacre_file *f = NULL;
	struct nacre_layout l;
	uint8_t data[5000];
	unsigned int n;
	bool found = false;

	fill_random(data, sizeof(data), 4400);
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &ro, &fr), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &uo, &fu), 0);

	CU_ASSERT_EQUAL(nacre_ost_set_active(fu, 2, false), -EPERM);
	CU_ASSERT_EQUAL(nacre_ost_set_active(fr, 77, false), -ENODEV);
	CU_ASSERT_EQUAL(nacre_ost_set_active(fr, 2, false), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_ost_list(fu, &osts, &n), 0);
	CU_ASSERT_EQUAL_FATAL(n, N_OSS);
	CU_ASSERT_FALSE(osts[2].active);
	CU_ASSERT_TRUE(osts[2].up);
	CU_ASSERT_TRUE(osts[1].active);
	free(osts);

	/* Every OST: all but the inactive one. */
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fr, "/adm", 0777), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_getlayout(fr, "/adm", &l), 0);
	l.stripe_count = UINT32_MAX;
	l.k = 0;
	l.m = 0;
	CU_ASSERT_EQUAL_FATAL(nacre_setlayout(fr, "/adm", &l), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fr, "/adm/a", O_CREAT | O_WRONLY, 0644, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, sizeof(data), 0), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_getlayout(fr, "/adm/a", &l), 0);
	CU_ASSERT_EQUAL(l.shard_count, N_OSS - 1);
	for (uint32_t i = 0; i < l.shard_count; i++)
		CU_ASSERT_NOT_EQUAL(l.shards[i].ost, 2);
	CU_ASSERT_EQUAL(nacre_ost_set_active(fr, 2, true), 0);

	/* Pools. */
	CU_ASSERT_FALSE(nacre_pool_name_is_valid("bad name"));
	CU_ASSERT_EQUAL(nacre_pool_create(fu, "p"), -EPERM);
	CU_ASSERT_EQUAL(nacre_pool_create(fr, "bad name"), -EINVAL);
	CU_ASSERT_EQUAL(nacre_pool_create(fr, "p"), 0);
	CU_ASSERT_EQUAL(nacre_pool_add(fr, "p", two, 0), -EINVAL);
	CU_ASSERT_EQUAL(nacre_pool_add(fu, "p", two, 2), -EPERM);
	CU_ASSERT_EQUAL(nacre_pool_add(fr, "p", two, 2), 0);
	CU_ASSERT_EQUAL(nacre_pool_list(fu, "nope", &pools, &n), -ENOENT);
	CU_ASSERT_EQUAL_FATAL(nacre_pool_list(fu, NULL, &pools, &n), 0);
	for (unsigned int i = 0; i < n; i++) {
		if (strcmp(pools[i].name, "p"))
			continue;
		found = true;
		CU_ASSERT_EQUAL(pools[i].count, 2);
		CU_ASSERT_EQUAL(pools[i].osts[0], 1);
		CU_ASSERT_EQUAL(pools[i].osts[1], 3);
	}
	CU_ASSERT_TRUE(found);
	free(pools);

	CU_ASSERT_EQUAL_FATAL(nacre_getlayout(fr, "/adm", &l), 0);
	l.flags |= NACRE_LAYOUT_POOL;
	strcpy(l.pool, "nope");
	CU_ASSERT_EQUAL(nacre_setlayout(fr, "/adm", &l), -ENOENT);
	strcpy(l.pool, "p");
	CU_ASSERT_EQUAL_FATAL(nacre_setlayout(fr, "/adm", &l), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_getlayout(fr, "/adm", &l), 0);
	CU_ASSERT_TRUE(l.flags & NACRE_LAYOUT_POOL);
	CU_ASSERT_STRING_EQUAL(l.pool, "p");
	CU_ASSERT_EQUAL_FATAL(nacre_open(fr, "/adm/b", O_CREAT | O_WRONLY, 0644, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data, sizeof(data), 0), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_getlayout(fr, "/adm/b", &l), 0);
	CU_ASSERT_EQUAL(l.shard_count, 2);
	CU_ASSERT_TRUE(layout_only_on(&l, 1, 3));

	CU_ASSERT_EQUAL(nacre_pool_destroy(fr, "p"), -ENOTEMPTY);
	CU_ASSERT_EQUAL(nacre_pool_remove(fr, "p", two, 2), 0);
	CU_ASSERT_EQUAL(nacre_pool_destroy(fr, "p"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fr, "/adm/a"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fr, "/adm/b"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fr, "/adm"), 0);
	nacre_disconnect(fu);
	nacre_disconnect(fr);
}

/* A read-only file may be moved into a pack by its owner (the bytes stay
 * as they are), not by another user who may not write it. */
static void test_pack_owner_moves(void)
{
	struct nacre_cred owner = { .uid = 4321, .gid = 4321 };
	struct nacre_cred other = { .uid = 4322, .gid = 4322 };
	struct nacre_opts oo = { .cred = &owner, .attr_cache_ms = -1 };
	struct nacre_opts xo = { .cred = &other, .attr_cache_ms = -1 };
	struct nacre_fs *fo = NULL, *fx = NULL;
	struct nacre_file *f = NULL;
	struct nacre_stat a, b;
	uint8_t data[6000];

	fill_random(data, sizeof(data), 3600);
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/own", 0777), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &oo, &fo), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &xo, &fx), 0);
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL_FATAL(nacre_open(fo, i ? "/own/b" : "/own/a", O_CREAT | O_WRONLY,
						 0644, &f), 0);
		CU_ASSERT_EQUAL(write_all(f, data, sizeof(data), 0), 0);
		CU_ASSERT_EQUAL(nacre_close(f), 0);
		CU_ASSERT_EQUAL(nacre_chmod(fo, i ? "/own/b" : "/own/a", 0444), 0);
	}
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fo, "/own/a", &a), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fo, "/own/b", &b), 0);
	/* Someone else: no. */
	CU_ASSERT_EQUAL(nacre_pack_file(fx, &b.fid, 0), -EACCES);
	CU_ASSERT_FALSE(is_packed("/own/b"));
	/* The owner: yes, though the file is read-only. */
	CU_ASSERT_EQUAL(nacre_pack_file(fo, &a.fid, 0), 0);
	CU_ASSERT(is_packed("/own/a"));
	check_file(fs, "/own/a", data, sizeof(data));
	CU_ASSERT_EQUAL(nacre_stat(fs, "/own/a", &b), 0);
	CU_ASSERT_EQUAL(b.mode & 07777, 0444);
	CU_ASSERT_EQUAL(b.uid, 4321);
	nacre_disconnect(fx);
	nacre_disconnect(fo);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/own/a"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/own/b"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/own"), 0);
}

/* nacre_pack_files(): many files in one call, each with its own answer,
 * the bytes intact. */
static void test_pack_files_batch(void)
{
	enum { NF = 40 };
	struct nacre_fid fids[NF + 3];
	int results[NF + 3];
	struct nacre_stat st;
	uint8_t *data[NF];
	size_t len[NF];
	char path[64];
	uint8_t *big = calloc(1, 2 * S);

	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/batch", 0755), 0);
	for (int i = 0; i < NF; i++) {
		len[i] = (size_t)i * 3001 % 70000;
		data[i] = malloc(len[i] + 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(data[i]);
		fill_random(data[i], len[i], 3500 + i);
		snprintf(path, sizeof(path), "/batch/f%d", i);
		make_file(path, data[i], len[i]);
		CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, path, &st), 0);
		fids[i] = st.fid;
	}
	make_file("/batch/big", big, 2 * S);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/batch/big", &st), 0);
	fids[NF] = st.fid;
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/batch", &st), 0);
	fids[NF + 1] = st.fid;
	fids[NF + 2] = fids[3];         /* twice in one call */
	memset(results, 0x55, sizeof(results));
	CU_ASSERT_EQUAL(nacre_pack_files(fs, fids, NF + 3, 0, results), 0);
	for (int i = 0; i < NF; i++)
		CU_ASSERT_EQUAL(results[i], 0);
	CU_ASSERT_EQUAL(results[NF], -EFBIG);
	CU_ASSERT_EQUAL(results[NF + 1], -EISDIR);
	/* The second mention finds the first one's move under way here. */
	CU_ASSERT(results[NF + 2] == 0 || results[NF + 2] == -EBUSY);
	for (int i = 0; i < NF; i++) {
		snprintf(path, sizeof(path), "/batch/f%d", i);
		CU_ASSERT(is_packed(path));
		check_file(fs, path, data[i], len[i]);
	}
	CU_ASSERT_FALSE(is_packed("/batch/big"));
	/* Again: all already packed. */
	CU_ASSERT_EQUAL(nacre_pack_files(fs, fids, NF, 0, results), 0);
	for (int i = 0; i < NF; i++)
		CU_ASSERT_EQUAL(results[i], 0);
	CU_ASSERT_EQUAL(nacre_pack_files(fs, NULL, 1, 0, results), -EINVAL);
	CU_ASSERT_EQUAL(nacre_pack_files(fs, fids, 0, 0, NULL), 0);
	for (int i = 0; i < NF; i++) {
		snprintf(path, sizeof(path), "/batch/f%d", i);
		CU_ASSERT_EQUAL(nacre_unlink(fs, path), 0);
		free(data[i]);
	}
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/batch/big"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/batch"), 0);
	free(big);
}

/* The address the compactor uses to reach its own MDS. */
static void test_pack_gc_self_addr(void)
{
	char buf[128];

	CU_ASSERT_EQUAL(mds_pack_gc_self_addr("tcp://0.0.0.0:0", 7300, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "tcp://127.0.0.1:7300");
	CU_ASSERT_EQUAL(mds_pack_gc_self_addr("tcp://[::]:7300", 7300, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "tcp://[::1]:7300");
	CU_ASSERT_EQUAL(mds_pack_gc_self_addr("tcp://10.1.2.3:7300", 7301, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "tcp://10.1.2.3:7301");
	CU_ASSERT_EQUAL(mds_pack_gc_self_addr("mds.example:7300", 7300, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "tcp://mds.example:7300");
	CU_ASSERT_EQUAL(mds_pack_gc_self_addr("no port", 7300, buf, sizeof(buf)), -NC_E_ADDR);
	CU_ASSERT_EQUAL(mds_pack_gc_self_addr("tcp://h:1", 0, buf, sizeof(buf)), -NC_E_ADDR);
}

/* ---- the name cache of path resolution ---- */

/* Two clients: one's changes show to itself at once, and to the other at
 * its next open, although the other's stat may serve cached names. */
static void test_name_cache(void)
{
	struct nacre_opts opts = { .attr_cache_ms = 60000 };
	struct nacre_fs *fs2 = NULL;
	struct nacre_stat st, st2;
	struct nacre_file *f;
	char buf[64];

	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &opts, &fs2), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/nc", 0755), 0);
	make_file("/nc/a", "first", 5);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/nc/a", &st2), 0);
	CU_ASSERT_EQUAL(st2.size, 5);

	/* This client's own changes show in its next stat. */
	CU_ASSERT_EQUAL(nacre_chmod(fs2, "/nc/a", 0600), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/nc/a", &st2), 0);
	CU_ASSERT_EQUAL(st2.mode & 07777, 0600);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, "/nc/a", O_WRONLY | O_APPEND, 0, &f), 0);
	CU_ASSERT_EQUAL(nacre_pwrite(f, "+more", 5, 5), 5);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/nc/a", &st2), 0);
	CU_ASSERT_EQUAL(st2.size, 10);
	CU_ASSERT_EQUAL(nacre_rename(fs2, "/nc/a", "/nc/b"), 0);
	CU_ASSERT_EQUAL(nacre_stat(fs2, "/nc/a", &st2), -ENOENT);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/nc/b", &st2), 0);
	CU_ASSERT_EQUAL(st2.size, 10);
	CU_ASSERT_EQUAL(nacre_unlink(fs2, "/nc/b"), 0);
	CU_ASSERT_EQUAL(nacre_stat(fs2, "/nc/b", &st2), -ENOENT);

	/* fs2's changes inside a directory it has cached show in its next
	 * stat of the directory (the link count here), while its walks go on
	 * through the cached entry; O_EXCL finds every kind of existing name,
	 * though it does not look the name up before it creates. */
	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs2, "/nc/sub", 0755), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/nc/sub", &st2), 0);
	CU_ASSERT_EQUAL(st2.nlink, 2);
	CU_ASSERT_EQUAL(nacre_mkdir(fs2, "/nc/sub/x", 0755), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/nc/sub", &st2), 0);
	CU_ASSERT_EQUAL(st2.nlink, 3);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, "/nc/sub/f", O_CREAT | O_EXCL | O_WRONLY, 0644, &f),
			      0);
	CU_ASSERT_EQUAL(nacre_pwrite(f, "kept", 4, 0), 4);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(nacre_symlink(fs2, "f", "/nc/sub/l"), 0);
	CU_ASSERT_EQUAL(nacre_open(fs2, "/nc/sub/f", O_CREAT | O_EXCL | O_WRONLY, 0644, &f),
			-EEXIST);
	CU_ASSERT_EQUAL(nacre_open(fs2, "/nc/sub/l", O_CREAT | O_EXCL | O_WRONLY, 0644, &f),
			-EEXIST);
	CU_ASSERT_EQUAL(nacre_open(fs2, "/nc/sub/x", O_CREAT | O_EXCL | O_WRONLY, 0644, &f),
			-EEXIST);
	CU_ASSERT_EQUAL(nacre_open(fs2, "/nc/nodir/f", O_CREAT | O_EXCL | O_WRONLY, 0644, &f),
			-ENOENT);
	CU_ASSERT_EQUAL(nacre_open(fs2, "/nc/sub/f/g", O_CREAT | O_EXCL | O_WRONLY, 0644, &f),
			-ENOTDIR);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/nc/sub/f", &st2), 0);
	CU_ASSERT_EQUAL(st2.size, 4);
	/* Another client's file under the same name: O_EXCL still refuses. */
	make_file("/nc/sub/other", "o", 1);
	CU_ASSERT_EQUAL(nacre_open(fs2, "/nc/sub/other", O_CREAT | O_EXCL | O_WRONLY, 0644, &f),
			-EEXIST);
	CU_ASSERT_EQUAL(nacre_rmdir(fs2, "/nc/sub/x"), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/nc/sub", &st2), 0);
	CU_ASSERT_EQUAL(st2.nlink, 2);
	CU_ASSERT_EQUAL(nacre_unlink(fs2, "/nc/sub/l"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs2, "/nc/sub/f"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs2, "/nc/sub/other"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs2, "/nc/sub"), 0);

	/* Another client replaces a name fs2 has cached: fs2's open finds the
	 * new file, and its stat after that open shows it. */
	make_file("/nc/c", "old", 3);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/nc/c", &st2), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/nc/c"), 0);
	make_file("/nc/c", "the new one", 11);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/nc/c", &st), 0);
	CU_ASSERT_FALSE(st.fid.oid == st2.fid.oid && st.fid.seq == st2.fid.seq);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, "/nc/c", O_RDONLY, 0, &f), 0);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nacre_pread(f, buf, sizeof(buf), 0), 11);
	CU_ASSERT_STRING_EQUAL(buf, "the new one");
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/nc/c", &st2), 0);
	CU_ASSERT(st2.fid.oid == st.fid.oid && st2.fid.seq == st.fid.seq);
	CU_ASSERT_EQUAL(st2.size, 11);

	/* A name another client creates is found at once (no negative
	 * entries). */
	CU_ASSERT_EQUAL(nacre_stat(fs2, "/nc/d", &st2), -ENOENT);
	make_file("/nc/d", "d", 1);
	CU_ASSERT_EQUAL(nacre_stat(fs2, "/nc/d", &st2), 0);

	/* With the cache off, another client's chmod shows at once. */
	nacre_disconnect(fs2);
	opts.attr_cache_ms = -1;
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &opts, &fs2), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/nc/d", &st2), 0);
	CU_ASSERT_EQUAL(nacre_chmod(fs, "/nc/d", 0640), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/nc/d", &st2), 0);
	CU_ASSERT_EQUAL(st2.mode & 07777, 0640);
	nacre_disconnect(fs2);

	CU_ASSERT_EQUAL(nacre_unlink(fs, "/nc/c"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/nc/d"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/nc"), 0);
}

/* nacre_lookup_open() and nacre_open_intent(): one request for a lookup
 * and the open that follows it. */
static void test_lookup_open(void)
{
	struct nacre_cred other = { .uid = 4242, .gid = 4242 };
	struct nacre_intent *in = NULL;
	struct nacre_stat st, dst, root;
	struct nacre_file *f = NULL;
	uint8_t small[3000], buf[4000];

	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/lo", 0755), 0);
	make_file("/lo/a", "intent bytes", 12);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/lo", &dst), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/", &root), 0);

	/* A readable file: its attributes, and an intent that opens it. */
	memset(&st, 0, sizeof(st));
	CU_ASSERT_EQUAL_FATAL(nacre_lookup_open(fs, NULL, &dst.fid, "a", &st, &in), 0);
	CU_ASSERT(S_ISREG(st.mode));
	CU_ASSERT_EQUAL(st.size, 12);
	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_EQUAL_FATAL(nacre_open_intent(fs, in, O_RDONLY, &f), 0);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nacre_pread(f, buf, sizeof(buf), 0), 12);
	CU_ASSERT(memcmp(buf, "intent bytes", 12) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	/* Only for reading: anything else is refused (and the intent freed). */
	CU_ASSERT_EQUAL_FATAL(nacre_lookup_open(fs, NULL, &dst.fid, "a", &st, &in), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_EQUAL(nacre_open_intent(fs, in, O_RDWR, &f), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(nacre_lookup_open(fs, NULL, &dst.fid, "a", &st, &in), 0);
	CU_ASSERT_EQUAL(nacre_open_intent(fs, in, O_RDONLY | O_TRUNC, &f), -EINVAL);
	/* An intent never used is freed. */
	CU_ASSERT_EQUAL_FATAL(nacre_lookup_open(fs, NULL, &dst.fid, "a", &st, &in), 0);
	nacre_intent_free(in);
	nacre_intent_free(NULL);

	/* A file the caller may see but not read: the lookup succeeds, with
	 * no intent. */
	CU_ASSERT_EQUAL(nacre_chmod(fs, "/lo/a", 0600), 0);
	in = (struct nacre_intent *)&in;
	memset(&st, 0, sizeof(st));
	CU_ASSERT_EQUAL(nacre_lookup_open(fs, &other, &dst.fid, "a", &st, &in), 0);
	CU_ASSERT_PTR_NULL(in);
	CU_ASSERT_EQUAL(st.size, 12);
	/* Its owner gets one. */
	CU_ASSERT_EQUAL_FATAL(nacre_lookup_open(fs, NULL, &dst.fid, "a", &st, &in), 0);
	CU_ASSERT_PTR_NOT_NULL(in);
	nacre_intent_free(in);

	/* Directories have no intent; a missing name is ENOENT. */
	in = (struct nacre_intent *)&in;
	CU_ASSERT_EQUAL(nacre_lookup_open(fs, NULL, &root.fid, "lo", &st, &in), 0);
	CU_ASSERT(S_ISDIR(st.mode));
	CU_ASSERT_PTR_NULL(in);
	in = (struct nacre_intent *)&in;
	CU_ASSERT_EQUAL(nacre_lookup_open(fs, NULL, &dst.fid, "missing", &st, &in), -ENOENT);
	CU_ASSERT_PTR_NULL(in);

	/* An empty file, and a packed one: held by this client before the
	 * commit (no intent: nacre_open_fid() opens it), then in its pack. */
	make_file("/lo/empty", "", 0);
	CU_ASSERT_EQUAL_FATAL(nacre_lookup_open(fs, NULL, &dst.fid, "empty", &st, &in), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_EQUAL_FATAL(nacre_open_intent(fs, in, O_RDONLY, &f), 0);
	CU_ASSERT_EQUAL(nacre_pread(f, buf, sizeof(buf), 0), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	pack_dir("/lo/pk", 64 * 1024);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/lo/pk", &dst), 0);
	fill_random(small, sizeof(small), 77);
	make_file("/lo/pk/s", small, sizeof(small));
	in = (struct nacre_intent *)&in;
	CU_ASSERT_EQUAL(nacre_lookup_open(fs, NULL, &dst.fid, "s", &st, &in), 0);
	CU_ASSERT_PTR_NULL(in);
	CU_ASSERT_EQUAL(st.size, sizeof(small));
	CU_ASSERT_EQUAL(nacre_sync(fs), 0);
	CU_ASSERT(is_packed("/lo/pk/s"));
	CU_ASSERT_EQUAL_FATAL(nacre_lookup_open(fs, NULL, &dst.fid, "s", &st, &in), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_EQUAL_FATAL(nacre_open_intent(fs, in, O_RDONLY, &f), 0);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nacre_pread(f, buf, sizeof(buf), 0), (ssize_t)sizeof(small));
	CU_ASSERT(memcmp(buf, small, sizeof(small)) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	CU_ASSERT_EQUAL(nacre_unlink(fs, "/lo/pk/s"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/lo/pk"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/lo/empty"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/lo/a"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/lo"), 0);
}

/* A lookup started with nacre_lookup_open_start(): what its completion
 * saw. */
struct started_lookup {
	pthread_mutex_t sl_lock;
	int sl_calls;
	int sl_rc;
	bool sl_has_st;
	struct nacre_stat sl_st;
	struct nacre_intent *sl_in;
};

static void started_lookup_done(int rc, const struct nacre_stat *st, struct nacre_intent *in,
				void *arg)
{
	struct started_lookup *sl = arg;

	pthread_mutex_lock(&sl->sl_lock);
	sl->sl_calls++;
	sl->sl_rc = rc;
	sl->sl_has_st = st != NULL;
	if (st)
		sl->sl_st = *st;
	nacre_intent_free(sl->sl_in);
	sl->sl_in = in;
	pthread_mutex_unlock(&sl->sl_lock);
}

/* Starts a lookup of @name in @parent and waits (10 s at most) for its
 * completion: its status (-EAGAIN when it did not start, -ETIMEDOUT when
 * it never completed), *st and *in (the caller's) as it gave them.  A
 * completion runs exactly once, and never for a lookup that did not
 * start. */
static int lookup_start_and_wait(const struct nacre_cred *cred, const struct nacre_fid *parent,
				 const char *name, struct nacre_stat *st,
				 struct nacre_intent **in)
{
	struct started_lookup sl = { .sl_rc = 0 };
	int64_t deadline = now_ms() + 10000;
	int rc;

	pthread_mutex_init(&sl.sl_lock, NULL);
	rc = nacre_lookup_open_start(fs, cred, parent, name, started_lookup_done, &sl);
	CU_ASSERT(rc == 0 || rc == -EAGAIN);
	pthread_mutex_lock(&sl.sl_lock);
	while (rc == 0 && sl.sl_calls == 0 && now_ms() < deadline) {
		pthread_mutex_unlock(&sl.sl_lock);
		sleep_ms(1);
		pthread_mutex_lock(&sl.sl_lock);
	}
	pthread_mutex_unlock(&sl.sl_lock);
	sleep_ms(rc == 0 ? 20 : 0); /* a second completion would come about now */
	pthread_mutex_lock(&sl.sl_lock);
	CU_ASSERT_EQUAL(sl.sl_calls, rc == 0 ? 1 : 0);
	if (rc == 0)
		rc = sl.sl_calls ? sl.sl_rc : -ETIMEDOUT;
	/* The status and the stat go together. */
	CU_ASSERT_EQUAL(sl.sl_has_st, sl.sl_calls && sl.sl_rc == 0);
	if (sl.sl_has_st)
		*st = sl.sl_st;
	*in = sl.sl_in;
	pthread_mutex_unlock(&sl.sl_lock);
	pthread_mutex_destroy(&sl.sl_lock);
	return rc;
}

/* nacre_lookup_open_start(): the outcomes of nacre_lookup_open(), given
 * on a libnacre thread. */
static void test_lookup_open_start(void)
{
	struct nacre_cred other = { .uid = 4242, .gid = 4242 };
	struct nacre_intent *in = NULL;
	struct nacre_stat st, dst, root;
	struct nacre_file *f = NULL;
	char buf[64], longname[NC_NAME_MAX + 2];

	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, "/ls", 0755), 0);
	make_file("/ls/a", "started lookup", 14);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/ls", &dst), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/", &root), 0);

	/* A readable file: its attributes, and an intent that opens it. */
	memset(&st, 0, sizeof(st));
	CU_ASSERT_EQUAL_FATAL(lookup_start_and_wait(NULL, &dst.fid, "a", &st, &in), 0);
	CU_ASSERT(S_ISREG(st.mode));
	CU_ASSERT_EQUAL(st.size, 14);
	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_EQUAL_FATAL(nacre_open_intent(fs, in, O_RDONLY, &f), 0);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nacre_pread(f, buf, sizeof(buf), 0), 14);
	CU_ASSERT(memcmp(buf, "started lookup", 14) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	/* A missing name, on the receiving thread; a directory, no intent. */
	CU_ASSERT_EQUAL(lookup_start_and_wait(NULL, &dst.fid, "missing", &st, &in), -ENOENT);
	CU_ASSERT_PTR_NULL(in);
	CU_ASSERT_EQUAL(lookup_start_and_wait(NULL, &root.fid, "ls", &st, &in), 0);
	CU_ASSERT(S_ISDIR(st.mode));
	CU_ASSERT_PTR_NULL(in);

	/* A file the caller may see but not read: looked up again on a
	 * thread of its own, found, with no intent. */
	CU_ASSERT_EQUAL(nacre_chmod(fs, "/ls/a", 0600), 0);
	memset(&st, 0, sizeof(st));
	CU_ASSERT_EQUAL(lookup_start_and_wait(&other, &dst.fid, "a", &st, &in), 0);
	CU_ASSERT_PTR_NULL(in);
	CU_ASSERT_EQUAL(st.size, 14);
	/* Nor may it look into a directory it may not search. */
	CU_ASSERT_EQUAL(nacre_chmod(fs, "/ls", 0700), 0);
	CU_ASSERT_EQUAL(lookup_start_and_wait(&other, &dst.fid, "a", &st, &in), -EACCES);
	CU_ASSERT_PTR_NULL(in);
	CU_ASSERT_EQUAL(nacre_chmod(fs, "/ls", 0755), 0);

	/* Not started: a bad name (the synchronous call says why), and a
	 * name this client holds uncommitted in a pack. */
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CU_ASSERT_EQUAL(lookup_start_and_wait(NULL, &dst.fid, longname, &st, &in), -EAGAIN);
	CU_ASSERT_EQUAL(nacre_lookup_open(fs, NULL, &dst.fid, longname, &st, &in),
			-ENAMETOOLONG);
	CU_ASSERT_EQUAL(lookup_start_and_wait(NULL, &dst.fid, "", &st, &in), -EAGAIN);
	pack_dir("/ls/pk", 64 * 1024);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, "/ls/pk", &dst), 0);
	make_file("/ls/pk/s", "packed", 6);
	CU_ASSERT_EQUAL(lookup_start_and_wait(NULL, &dst.fid, "s", &st, &in), -EAGAIN);
	CU_ASSERT_EQUAL(nacre_sync(fs), 0);
	CU_ASSERT_EQUAL_FATAL(lookup_start_and_wait(NULL, &dst.fid, "s", &st, &in), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_EQUAL_FATAL(nacre_open_intent(fs, in, O_RDONLY, &f), 0);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nacre_pread(f, buf, sizeof(buf), 0), 6);
	CU_ASSERT(memcmp(buf, "packed", 6) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	CU_ASSERT_EQUAL(nacre_unlink(fs, "/ls/pk/s"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/ls/pk"), 0);
	CU_ASSERT_EQUAL(nacre_unlink(fs, "/ls/a"), 0);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/ls"), 0);
}

/* ---- inline files ---- */

/* A pack directory whose files of up to @inline_max bytes are inline. */
static void inline_dir(const char *path, uint32_t inline_max)
{
	struct nacre_layout l;
	struct nacre_stat st;

	CU_ASSERT_EQUAL_FATAL(nacre_mkdir(fs, path, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs, path, &st), 0);
	memset(&l, 0, sizeof(l));
	l.first_ost = NACRE_OST_ANY;
	/* Not without packing, not past NACRE_INLINE_MAX. */
	l.flags = NACRE_LAYOUT_INLINE;
	l.inline_max = inline_max;
	CU_ASSERT_EQUAL(nacre_setlayout_fid(fs, NULL, &st.fid, &l), -EINVAL);
	l.flags = NACRE_LAYOUT_PACK | NACRE_LAYOUT_INLINE;
	l.inline_max = NACRE_INLINE_MAX + 1;
	CU_ASSERT_EQUAL(nacre_setlayout_fid(fs, NULL, &st.fid, &l), -EINVAL);
	l.inline_max = inline_max;
	CU_ASSERT_EQUAL_FATAL(nacre_setlayout_fid(fs, NULL, &st.fid, &l), 0);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL(nacre_getlayout(fs, path, &l), 0);
	CU_ASSERT(l.flags & NACRE_LAYOUT_PACK);
	CU_ASSERT(l.flags & NACRE_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(l.inline_max, inline_max);
}

/* Whether @path is an inline file as @c sees it: no objects, no pack. */
static bool is_inline(struct nacre_fs *c, const char *path)
{
	struct nacre_layout l;

	memset(&l, 0xff, sizeof(l));
	return nacre_getlayout(c, path, &l) == 0 && (l.flags & NACRE_LAYOUT_INLINE) &&
	       !(l.flags & NACRE_LAYOUT_PACKED) && l.shard_count == 0;
}

#define INL_SMALL_BEFORE 6      /* 0, 10, ..., 50 bytes */
#define INL_FULL 100            /* NACRE_INLINE_MAX bytes each */
#define INL_SMALL_AFTER 5       /* 60, ..., 100 bytes */
#define INL_N (INL_SMALL_BEFORE + INL_FULL + INL_SMALL_AFTER + 1) /* and one past the limit */

/* The files of test_inline_read_many, in this order. */
static size_t inl_len(int i)
{
	if (i < INL_SMALL_BEFORE)
		return (size_t)i * 10;
	if (i < INL_SMALL_BEFORE + INL_FULL)
		return NACRE_INLINE_MAX;
	if (i < INL_N - 1)
		return (size_t)(i - INL_FULL) * 10;
	return NACRE_INLINE_MAX + 1;
}

/* Reads @n of @paths with nacre_read_many() through @c into buffers of
 * @cap each (their length plus a guard when @cap is 0): every file's exact
 * bytes, nothing past them. */
static void inl_read_many(struct nacre_fs *c, char (*paths)[32], uint8_t **data, int n,
			  size_t cap)
{
	struct nacre_read_req *reqs = calloc((size_t)n, sizeof(*reqs));
	int bad = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(reqs);
	for (int i = 0; i < n; i++) {
		reqs[i].path = paths[i];
		reqs[i].cap = cap ? cap : inl_len(i);
		reqs[i].buf = malloc(reqs[i].cap + 16);
		CU_ASSERT_PTR_NOT_NULL_FATAL(reqs[i].buf);
		memset(reqs[i].buf, 0xee, reqs[i].cap + 16);
	}
	CU_ASSERT_EQUAL(nacre_read_many(c, reqs, (size_t)n, 0), 0);
	for (int i = 0; i < n; i++) {
		size_t want = inl_len(i) < reqs[i].cap ? inl_len(i) : reqs[i].cap;
		const uint8_t *b = reqs[i].buf;
		bool ok = reqs[i].result == (ssize_t)want && reqs[i].size == inl_len(i) &&
			  memcmp(b, data[i], want) == 0;

		for (size_t j = want; ok && j < reqs[i].cap + 16; j++)
			ok = b[j] == 0xee;
		if (!ok) {
			fprintf(stderr, "  %s: result %zd size %llu, %zu bytes wanted\n", paths[i],
				reqs[i].result, (unsigned long long)reqs[i].size, want);
			bad++;
		}
		free(reqs[i].buf);
	}
	CU_ASSERT_EQUAL(bad, 0);
	free(reqs);
}

/*
 * Inline files end to end: a pack directory keeping files of up to 4 KiB
 * inline.  nacre_read_many() returns every file's bytes, those that came
 * with the first LOOKUP_MANY reply and those past its 128 KiB budget,
 * asked for again; the one file past the limit is packed.  Then an open
 * and reads, a lookup with the open intent, rewrites (inline, and grown
 * past the limit) and a truncation, each seen by another client.
 */
static void test_inline_read_many(void)
{
	struct nacre_opts opts = { .attr_cache_ms = -1 };
	char (*paths)[32] = calloc(INL_N, sizeof(*paths));
	uint8_t *data[INL_N], buf[NACRE_INLINE_MAX + 64];
	struct nacre_intent *in = NULL;
	struct nacre_fs *fs2 = NULL;
	struct nacre_stat st, dst;
	struct nacre_file *f = NULL;
	struct nacre_layout l;
	uint64_t reads;
	int notinl = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(paths);
	inline_dir("/inl", NACRE_INLINE_MAX);
	for (int i = 0; i < INL_N; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/inl/f%03d", i);
		data[i] = malloc(inl_len(i) + 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(data[i]);
		fill_random(data[i], inl_len(i), 9000 + (uint64_t)i);
		make_file(paths[i], data[i], inl_len(i));
	}
	CU_ASSERT_EQUAL_FATAL(nacre_sync(fs), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &opts, &fs2), 0);

	/* Up to the limit inline, past it packed. */
	for (int i = 0; i < INL_N - 1; i++)
		notinl += !is_inline(fs2, paths[i]);
	CU_ASSERT_EQUAL(notinl, 0);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL(nacre_getlayout(fs2, paths[INL_N - 1], &l), 0);
	CU_ASSERT(l.flags & NACRE_LAYOUT_PACKED);
	CU_ASSERT_FALSE(l.flags & NACRE_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(l.pack_len, NACRE_INLINE_MAX + 1);

	/*
	 * The inline files in one window.  A reply carries bytes while its
	 * 128 KiB budget lasts: the six small files and 31 or 32 of the
	 * full ones.  The others come without and are asked for again in
	 * more LOOKUP_MANY requests, never opened and read one by one: no
	 * nacre_pread() at all.
	 */
	reads = client_counter(fs2, "nacre_client_reads_total");
	CU_ASSERT_FATAL(reads != UINT64_MAX);
	inl_read_many(fs2, paths, data, INL_N - 1, 0);
	reads = client_counter(fs2, "nacre_client_reads_total") - reads;
	CU_ASSERT_EQUAL(reads, 0);
	/* All of them with the packed one, in buffers larger than the files;
	 * then only the first 1000 bytes of each. */
	inl_read_many(fs2, paths, data, INL_N, NACRE_INLINE_MAX + 100);
	inl_read_many(fs2, paths, data, INL_N, 1000);
	/* The writer reads them the same way. */
	inl_read_many(fs, paths, data, INL_N, 0);

	/* An open by path and one by FID: reads anywhere in the bytes. */
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, paths[50], O_RDONLY, 0, &f), 0);
	nacre_file_open_stat(f, &st);
	CU_ASSERT_EQUAL(st.size, NACRE_INLINE_MAX);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nacre_pread(f, buf, sizeof(buf), 0), NACRE_INLINE_MAX);
	CU_ASSERT(memcmp(buf, data[50], NACRE_INLINE_MAX) == 0);
	CU_ASSERT_EQUAL(nacre_pread(f, buf, 200, 4000), 96);
	CU_ASSERT(memcmp(buf, data[50] + 4000, 96) == 0);
	CU_ASSERT_EQUAL(nacre_pread(f, buf, 10, 1234), 10);
	CU_ASSERT(memcmp(buf, data[50] + 1234, 10) == 0);
	CU_ASSERT_EQUAL(nacre_pread(f, buf, 10, NACRE_INLINE_MAX), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, paths[3], &st), 0);
	CU_ASSERT_EQUAL(st.size, 30);
	CU_ASSERT_EQUAL_FATAL(nacre_open_fid(fs2, NULL, &st.fid, O_RDONLY, &f), 0);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nacre_pread(f, buf, sizeof(buf), 0), 30);
	CU_ASSERT(memcmp(buf, data[3], 30) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	/* The lookup with the open intent carries them too. */
	CU_ASSERT_EQUAL_FATAL(nacre_stat(fs2, "/inl", &dst), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_lookup_open(fs2, NULL, &dst.fid, "f010", &st, &in), 0);
	CU_ASSERT_EQUAL(st.size, NACRE_INLINE_MAX);
	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_EQUAL_FATAL(nacre_open_intent(fs2, in, O_RDONLY, &f), 0);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nacre_pread(f, buf, sizeof(buf), 0), NACRE_INLINE_MAX);
	CU_ASSERT(memcmp(buf, data[10], NACRE_INLINE_MAX) == 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	/* An empty one. */
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, paths[0], O_RDONLY, 0, &f), 0);
	CU_ASSERT_EQUAL(nacre_pread(f, buf, sizeof(buf), 0), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);

	/* A rewrite: new bytes, still inline, what the other client reads. */
	data[3] = realloc(data[3], 77);
	CU_ASSERT_PTR_NOT_NULL_FATAL(data[3]);
	fill_random(data[3], 77, 9501);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, paths[3], O_WRONLY | O_TRUNC, 0, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data[3], 77, 0), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(nacre_sync(fs), 0);
	check_file(fs2, paths[3], data[3], 77);
	CU_ASSERT(is_inline(fs2, paths[3]));
	/* ... and again, the other way, over the generation the first made. */
	fill_random(data[3], 77, 9502);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, paths[3], O_WRONLY | O_TRUNC, 0, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data[3], 77, 0), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(nacre_sync(fs2), 0);
	check_file(fs, paths[3], data[3], 77);
	CU_ASSERT(is_inline(fs, paths[3]));

	/* Grown past the limit: packed, every byte kept. */
	data[20] = realloc(data[20], 6000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(data[20]);
	fill_random(data[20] + NACRE_INLINE_MAX, 6000 - NACRE_INLINE_MAX, 9503);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, paths[20], O_WRONLY | O_APPEND, 0, &f), 0);
	CU_ASSERT_EQUAL(write_all(f, data[20] + NACRE_INLINE_MAX, 6000 - NACRE_INLINE_MAX, 0), 0);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	CU_ASSERT_EQUAL(nacre_sync(fs), 0);
	check_file(fs2, paths[20], data[20], 6000);
	CU_ASSERT_FALSE(is_inline(fs2, paths[20]));
	CU_ASSERT(is_packed(paths[20]));

	/* Truncated by the other client: shorter, then longer (zeros). */
	CU_ASSERT_EQUAL(nacre_truncate(fs2, paths[30], 100), 0);
	CU_ASSERT_EQUAL(nacre_sync(fs2), 0);
	check_file(fs, paths[30], data[30], 100);
	memset(data[30] + 100, 0, 200);
	CU_ASSERT_EQUAL(nacre_truncate(fs, paths[30], 300), 0);
	CU_ASSERT_EQUAL(nacre_sync(fs), 0);
	check_file(fs2, paths[30], data[30], 300);
	CU_ASSERT(is_inline(fs2, paths[30]));

	/* A reader's handle keeps the bytes it opened; a truncation to 1 MiB
	 * through the same client moves its size: zeros past the bytes,
	 * never what lies past them in memory. */
	{
		enum { BIG = 1 << 20, RD = 64 * 1024 };
		uint8_t *rd = malloc(RD);

		CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
		CU_ASSERT_EQUAL_FATAL(nacre_open(fs, paths[30], O_RDONLY, 0, &f), 0);
		CU_ASSERT_EQUAL(nacre_truncate(fs, paths[30], BIG), 0);
		memset(rd, 0xee, RD);
		CU_ASSERT_EQUAL(nacre_pread(f, rd, RD, 0), RD);
		CU_ASSERT(memcmp(rd, data[30], 300) == 0);
		CU_ASSERT(rd[300] == 0 && rd[RD - 1] == 0 && memcmp(rd + 300, rd + 301, RD - 301) == 0);
		CU_ASSERT_EQUAL(nacre_pread(f, rd, RD, BIG - 10), 10);
		CU_ASSERT_EQUAL(nacre_pread(f, rd, RD, BIG), 0);
		CU_ASSERT_EQUAL(nacre_close(f), 0);
		free(rd);
	}

	nacre_disconnect(fs2);
	for (int i = 0; i < INL_N; i++) {
		CU_ASSERT_EQUAL(nacre_unlink(fs, paths[i]), 0);
		free(data[i]);
	}
	CU_ASSERT_EQUAL(nacre_stat(fs, paths[5], &st), -ENOENT);
	CU_ASSERT_EQUAL(nacre_rmdir(fs, "/inl"), 0);
	free(paths);
}

static void test_oss_down(void)
{
	struct nacre_opts opts = {.timeout_ms = 2000, .retry_ms = 2000};
	const size_t len = 4 * S;
	unsigned char *data = malloc(len), *back = malloc(len);
	struct nacre_file *f = NULL, *f2 = NULL;
	struct nacre_fs *fs2 = NULL;
	struct nacre_layout l;
	uint32_t victim, first;
	int64_t t0, deadline;
	ssize_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	fill_random(data, len, 91);
	make_file("/victim", data, len);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL_FATAL(nacre_getlayout(fs, "/victim", &l), 0);
	CU_ASSERT_EQUAL_FATAL(l.shard_count, N_OSS);
	first = l.shards[0].ost;
	victim = l.shards[1].ost; /* chunk 1 of the file lives there */
	CU_ASSERT_FATAL(victim < N_OSS && first < N_OSS && first != victim);

	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &opts, &fs2), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs, "/victim", O_RDONLY, 0, &f), 0);
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, "/victim", O_RDONLY, 0, &f2), 0);
	/* Connected to every OSS before one goes. */
	memset(back, 0, len);
	CU_ASSERT_EQUAL(read_all(f2, back, len, 0), (ssize_t)len);
	CU_ASSERT(memcmp(back, data, len) == 0);

	oss_server_free(oss[victim]);
	oss[victim] = NULL;

	/* A read that needs the lost OST fails in bounded time. */
	memset(back, 0, len);
	t0 = now_ms();
	n = nacre_pread(f2, back, len, 0);
	CU_ASSERT(n < 0);
	CU_ASSERT(now_ms() - t0 < 12000);
	if (n > 0)
		CU_ASSERT(memcmp(back, data, (size_t)n) == 0);
	/* Also a read of the lost chunk alone, over a connection now closed. */
	t0 = now_ms();
	n = nacre_pread(f2, back, 100, S + 10);
	CU_ASSERT(n < 0);
	CU_ASSERT(now_ms() - t0 < 12000);
	if (n > 0)
		CU_ASSERT(memcmp(back, data + S + 10, (size_t)n) == 0);
	/* Chunks on the OSTs still up read correctly. */
	memset(back, 0, S);
	CU_ASSERT_EQUAL(nacre_pread(f2, back, S, 0), (ssize_t)S);
	CU_ASSERT(memcmp(back, data, S) == 0);
	memset(back, 0, S);
	CU_ASSERT_EQUAL(nacre_pread(f2, back, S - 7, 2 * S + 7), (ssize_t)(S - 7));
	CU_ASSERT(memcmp(back, data + 2 * S + 7, S - 7) == 0);

	/* The MDS notices: the OST is listed down. */
	deadline = now_ms() + 5000;
	while (count_up_osts(fs2) != N_OSS - 1 && now_ms() < deadline)
		sleep_ms(50);
	CU_ASSERT_EQUAL(count_up_osts(fs2), N_OSS - 1);

	/* A fresh client opening the file after the loss fails the same way. */
	CU_ASSERT_EQUAL(nacre_close(f2), 0);
	nacre_disconnect(fs2);
	fs2 = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_connect(mds_addr, FSNAME, &opts, &fs2), 0);
	f2 = NULL;
	CU_ASSERT_EQUAL_FATAL(nacre_open(fs2, "/victim", O_RDONLY, 0, &f2), 0);
	t0 = now_ms();
	n = nacre_pread(f2, back, len, 0);
	CU_ASSERT(n < 0);
	CU_ASSERT(now_ms() - t0 < 12000);
	CU_ASSERT_EQUAL(nacre_close(f2), 0);
	nacre_disconnect(fs2);
	CU_ASSERT_EQUAL(nacre_close(f), 0);
	free(back);
	free(data);
}

int main(void)
{
	CU_pSuite suite, down;
	unsigned int failures;

	/* Errors (expected ones included) still show; progress lines do not. */
	nc_log_level = NC_LOG_WARN;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite("libnacre", suite_init, suite_fini);
	down = CU_add_suite("libnacre with an OSS lost", suite_init, suite_fini);
	if (!suite || !down || !CU_add_test(suite, "connect errors", test_connect_errors) ||
	    !CU_add_test(suite, "cluster key", test_connect_key) ||
	    !CU_add_test(suite, "namespace by path", test_namespace) ||
	    !CU_add_test(suite, "default layout", test_default_layout) ||
	    !CU_add_test(suite, "data round trips", test_data_sizes) ||
	    !CU_add_test(suite, "sparse file", test_sparse) ||
	    !CU_add_test(suite, "unaligned overwrites", test_overwrite) ||
	    !CU_add_test(suite, "reads at end of file", test_eof_reads) ||
	    !CU_add_test(suite, "O_APPEND", test_append) ||
	    !CU_add_test(suite, "truncate", test_truncate) ||
	    !CU_add_test(suite, "truncate under an open handle", test_truncate_open_handle) ||
	    !CU_add_test(suite, "layouts", test_layouts) ||
	    !CU_add_test(suite, "xattrs", test_xattrs) ||
	    !CU_add_test(suite, "unlink and object destruction", test_unlink_open) ||
	    !CU_add_test(suite, "concurrent writers and readers", test_concurrency) ||
	    !CU_add_test(suite, "sequential readahead", test_readahead) ||
	    !CU_add_test(suite, "fsync, statfs, OST list", test_fsync_statfs) ||
	    !CU_add_test(suite, "name cache of two clients", test_name_cache) ||
	    !CU_add_test(suite, "lookup with the open intent", test_lookup_open) ||
	    !CU_add_test(suite, "lookup started, completed by libnacre", test_lookup_open_start) ||
	    !CU_add_test(suite, "small files in packs", test_pack) ||
	    !CU_add_test(suite, "packed reads started without blocking", test_pread_start) ||
	    !CU_add_test(suite, "a started read around a corrupt chunk", test_pread_start_corrupt) ||
	    !CU_add_test(suite, "moved and rewritten packed files keep their coding",
			 test_pack_keeps_coding) ||
	    !CU_add_test(suite, "inline files: read_many, open, rewrite", test_inline_read_many) ||
	    !CU_add_test(suite, "pack conversion and compaction", test_pack_convert_gc) ||
	    !CU_add_test(suite, "background pack compaction", test_pack_gc_background) ||
	    !CU_add_test(suite, "an idle pack is sealed", test_pack_idle_seal) ||
	    !CU_add_test(suite, "a move of a changed file is refused", test_pack_move_checks) ||
	    !CU_add_test(suite, "migration", test_migrate) ||
	    !CU_add_test(suite, "many files converted in one call", test_pack_files_batch) ||
	    !CU_add_test(suite, "the owner of a read-only file may pack it", test_pack_owner_moves) ||
	    !CU_add_test(suite, "compactor's address of its MDS", test_pack_gc_self_addr) ||
	    !CU_add_test(suite, "changelog: records, paging, clear, root only", test_changelog) ||
	    !CU_add_test(suite, "OST deactivation and pools", test_ost_admin_pools) ||
	    !CU_add_test(down, "reads with an OSS down", test_oss_down)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
