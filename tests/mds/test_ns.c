/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the MDS namespace (mds/ns.h) over a temporary LMDB MDT.
 * Every test gets a freshly formatted MDT in its own temporary directory.
 */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "common/errors.h"
#include "common/types.h"
#include "common/wire.h"
#include "mds/db.h"
#include "mds/ns.h"
#include "mds/server.h"

#define T_MAP_SIZE (64ull << 20)
#define T_NOSTS 8

static char t_base[PATH_MAX];
static char t_mdt[PATH_MAX + 8];
static struct mds_ns *t_ns;
static struct nc_fid t_root;
static struct mds_ost_set t_osts;
static const uint8_t t_uuid[16] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4,
				    5, 6, 7, 8, 9, 10, 11, 12 };

static const struct nc_cred t_rootc = { .c_uid = 0, .c_gid = 0 };
static const struct nc_cred t_user = {
	.c_uid = 1000, .c_gid = 1000, .c_ngroups = 1, .c_groups = { 2000 },
};
static const struct nc_cred t_other = { .c_uid = 1001, .c_gid = 1001 };

static int t_rm_one(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	return remove(path);
}

static void t_setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(t_base, sizeof(t_base), "%s/nacre-ns-XXXXXX",
		 tmp && *tmp ? tmp : P_tmpdir);
	t_ns = NULL;
	if (!mkdtemp(t_base)) {
		t_base[0] = '\0';
		return;
	}
	snprintf(t_mdt, sizeof(t_mdt), "%s/mdt", t_base);
	if (mds_ns_format(t_mdt, "testfs", t_uuid, T_MAP_SIZE))
		return;
	if (mds_ns_open(t_mdt, T_MAP_SIZE, &t_ns))
		t_ns = NULL;
	/* Migrations need not wait for writers to go quiet, but in the test
	 * of that wait. */
	if (t_ns)
		mds_ns_set_migrate_quiet(t_ns, 0);
	nc_fid_root(&t_root);
	t_osts.os_count = T_NOSTS;
	for (uint32_t i = 0; i < T_NOSTS; i++)
		t_osts.os_index[i] = i;
}

static void t_teardown(void)
{
	mds_ns_close(t_ns);
	t_ns = NULL;
	if (t_base[0])
		nftw(t_base, t_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	t_base[0] = '\0';
}

/* Closes and reopens the namespace, as a restarted MDS would. */
static void t_reopen(void)
{
	mds_ns_close(t_ns);
	t_ns = NULL;
	CU_ASSERT_EQUAL_FATAL(mds_ns_open(t_mdt, T_MAP_SIZE, &t_ns), 0);
}

static int t_create(const struct nc_cred *c, const struct nc_fid *parent,
		    const char *name, uint32_t mode, struct nc_fid *fid)
{
	struct nc_create_req cq;
	struct nc_layout l;
	struct nc_attr a;
	int rc;

	memset(&cq, 0, sizeof(cq));
	cq.cq_cred = *c;
	cq.cq_parent = *parent;
	snprintf(cq.cq_name, sizeof(cq.cq_name), "%s", name);
	cq.cq_mode = mode;
	cq.cq_flags = NC_CREATE_EXCL;
	rc = mds_ns_create(t_ns, &cq, &t_osts, &a, &l);
	if (rc == 0 && fid)
		*fid = a.a_fid;
	return rc;
}

static int t_rename(const struct nc_cred *c, const struct nc_fid *op,
		    const char *on, const struct nc_fid *np, const char *nn,
		    uint32_t flags)
{
	struct nc_rename_req rn;

	memset(&rn, 0, sizeof(rn));
	rn.rn_cred = *c;
	rn.rn_oldparent = *op;
	snprintf(rn.rn_oldname, sizeof(rn.rn_oldname), "%s", on);
	rn.rn_newparent = *np;
	snprintf(rn.rn_newname, sizeof(rn.rn_newname), "%s", nn);
	rn.rn_flags = flags;
	return mds_ns_rename(t_ns, &rn);
}

static uint32_t t_nlink(const struct nc_fid *fid)
{
	struct nc_attr a;

	if (mds_ns_getattr(t_ns, fid, &a))
		return UINT32_MAX;
	return a.a_nlink;
}

static bool t_lookup_is(const struct nc_fid *parent, const char *name,
			const struct nc_fid *want)
{
	struct nc_attr a;

	if (mds_ns_lookup(t_ns, &t_rootc, parent, name, &a))
		return false;
	return nc_fid_eq(&a.a_fid, want);
}

/* Whether the destroy queue holds a record for @fid (its layout too). */
static bool t_destroy_has(const struct nc_fid *fid, struct nc_layout *l)
{
	struct mds_destroy_rec rec;
	uint64_t after = 0;

	while (mds_ns_destroy_next(t_ns, after, &rec) == 0) {
		if (nc_fid_eq(&rec.dr_fid, fid)) {
			if (l)
				*l = rec.dr_layout;
			return true;
		}
		after = rec.dr_id;
	}
	return false;
}

static int t_setattr(const struct nc_cred *c, const struct nc_fid *fid,
		     uint32_t valid, uint32_t mode, uint32_t uid, uint32_t gid,
		     uint64_t size, struct nc_attr *out)
{
	struct nc_setattr_req sa;
	struct nc_attr a;

	memset(&sa, 0, sizeof(sa));
	sa.sa_cred = *c;
	sa.sa_fid = *fid;
	sa.sa_valid = valid;
	sa.sa_mode = mode;
	sa.sa_uid = uid;
	sa.sa_gid = gid;
	sa.sa_size = size;
	return mds_ns_setattr(t_ns, &sa, out ? out : &a);
}

/* ---- tests ---- */

static void test_format_open(void)
{
	char empty[PATH_MAX + 16], missing[PATH_MAX + 16];
	struct mds_ns *ns2 = NULL;
	struct nc_attr a;
	uint8_t u[16];

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_STRING_EQUAL(mds_ns_fsname(t_ns), "testfs");
	mds_ns_uuid(t_ns, u);
	CU_ASSERT(memcmp(u, t_uuid, 16) == 0);
	CU_ASSERT_EQUAL(mds_ns_format(t_mdt, "testfs", NULL, T_MAP_SIZE),
			-EEXIST);

	snprintf(empty, sizeof(empty), "%s/empty", t_base);
	CU_ASSERT_EQUAL_FATAL(mkdir(empty, 0700), 0);
	CU_ASSERT_EQUAL(mds_ns_open(empty, T_MAP_SIZE, &ns2), -NC_E_NOTFMT);
	snprintf(missing, sizeof(missing), "%s/missing", t_base);
	CU_ASSERT_EQUAL(mds_ns_open(missing, T_MAP_SIZE, &ns2), -NC_E_NOTFMT);
	CU_ASSERT_EQUAL(mds_ns_format(missing, "", NULL, T_MAP_SIZE), -EINVAL);
	CU_ASSERT_EQUAL(mds_ns_format(missing, "bad/name", NULL, T_MAP_SIZE),
			-EINVAL);

	CU_ASSERT_EQUAL_FATAL(mds_ns_getattr(t_ns, &t_root, &a), 0);
	CU_ASSERT(S_ISDIR(a.a_mode));
	CU_ASSERT_EQUAL(a.a_mode & 07777, 0755);
	CU_ASSERT_EQUAL(a.a_nlink, 2);
	CU_ASSERT_EQUAL(a.a_uid, 0);
	CU_ASSERT(nc_fid_eq(&a.a_fid, &t_root));
}

static void test_create_lookup_getattr(void)
{
	struct nc_fid f1, f2, bad = { 1, 999999 };
	struct nc_create_req cq;
	struct nc_layout l;
	struct nc_attr a, b;
	char longname[NC_NAME_MAX + 2];

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_user, &t_root, "f", S_IFREG | 0644,
				       &f1), -EACCES);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "f", S_IFREG | 0644,
				       &f1), 0);
	CU_ASSERT_EQUAL(f1.f_seq, 1);
	CU_ASSERT(f1.f_oid >= 2);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_user, &t_root, "f", &a), 0);
	CU_ASSERT(nc_fid_eq(&a.a_fid, &f1));
	CU_ASSERT(S_ISREG(a.a_mode));
	CU_ASSERT_EQUAL(a.a_mode & 07777, 0644);
	CU_ASSERT_EQUAL(a.a_nlink, 1);
	CU_ASSERT_EQUAL(a.a_size, 0);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &f1, &b), 0);
	CU_ASSERT(memcmp(&a, &b, sizeof(a)) == 0);
	CU_ASSERT(a.a_atime.t_sec > 0);

	CU_ASSERT_EQUAL(t_create(&t_rootc, &t_root, "f", S_IFREG | 0644, NULL),
			-EEXIST);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &t_root, "f", S_IFDIR | 0755, NULL),
			-EEXIST);
	/* Without EXCL an existing regular file is opened, as O_CREAT. */
	memset(&cq, 0, sizeof(cq));
	cq.cq_cred = t_rootc;
	cq.cq_parent = t_root;
	strcpy(cq.cq_name, "f");
	cq.cq_mode = S_IFREG | 0600;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &b, &l), 0);
	CU_ASSERT(nc_fid_eq(&b.a_fid, &f1));
	CU_ASSERT_EQUAL(b.a_mode & 07777, 0644);
	CU_ASSERT(l.l_stripe_count > 0);

	CU_ASSERT_EQUAL(t_create(&t_rootc, &t_root, "g", S_IFREG | 0644, &f2),
			0);
	CU_ASSERT(f2.f_oid > f1.f_oid);

	CU_ASSERT_EQUAL(t_create(&t_rootc, &t_root, "", S_IFREG, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &t_root, ".", S_IFREG, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &t_root, "..", S_IFREG, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &t_root, "a/b", S_IFREG, NULL),
			-EINVAL);
	memset(longname, 'x', NC_NAME_MAX);
	longname[NC_NAME_MAX] = '\0';
	CU_ASSERT_EQUAL(t_create(&t_rootc, &t_root, longname, S_IFREG, NULL),
			0);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &t_root, longname, &a),
			0);
	longname[NC_NAME_MAX] = 'x';
	longname[NC_NAME_MAX + 1] = '\0';
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &t_root, longname, &a),
			-ENAMETOOLONG);

	CU_ASSERT_EQUAL(t_create(&t_rootc, &f1, "x", S_IFREG, NULL), -ENOTDIR);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &bad, "x", S_IFREG, NULL), -ENOENT);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &t_root, "nope", &a),
			-ENOENT);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &f1, "x", &a), -ENOTDIR);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &bad, &a), -ENOENT);

	/* Special files. */
	memset(&cq, 0, sizeof(cq));
	cq.cq_cred = t_rootc;
	cq.cq_parent = t_root;
	strcpy(cq.cq_name, "dev");
	cq.cq_mode = S_IFCHR | 0600;
	cq.cq_rdev = 0x0103;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), 0);
	CU_ASSERT(S_ISCHR(a.a_mode));
	CU_ASSERT_EQUAL(a.a_rdev, 0x0103);
	CU_ASSERT_EQUAL(l.l_stripe_count, 0);
}

static void test_mkdir_nlink(void)
{
	struct nc_fid d1, d2, sub;
	struct nc_attr before, after;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getattr(t_ns, &t_root, &before), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d1", S_IFDIR | 0755,
				       &d1), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d2", S_IFDIR | 0755,
				       &d2), 0);
	CU_ASSERT_EQUAL(t_nlink(&t_root), 4);
	CU_ASSERT_EQUAL(t_nlink(&d1), 2);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d1, "sub", S_IFDIR | 0755,
				       &sub), 0);
	CU_ASSERT_EQUAL(t_nlink(&d1), 3);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &d1, "file", S_IFREG | 0644, NULL),
			0);
	CU_ASSERT_EQUAL(t_nlink(&d1), 3);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &d1, "sub", true), 0);
	CU_ASSERT_EQUAL(t_nlink(&d1), 2);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &sub, &after), -ENOENT);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &t_root, "d2", true), 0);
	CU_ASSERT_EQUAL(t_nlink(&t_root), 3);

	CU_ASSERT_EQUAL_FATAL(mds_ns_getattr(t_ns, &t_root, &after), 0);
	CU_ASSERT(after.a_mtime.t_sec > before.a_mtime.t_sec ||
		  (after.a_mtime.t_sec == before.a_mtime.t_sec &&
		   after.a_mtime.t_nsec >= before.a_mtime.t_nsec));
}

static void test_unlink_errors(void)
{
	struct nc_fid d, f;
	struct nc_attr a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0755,
				       &d), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d, "f", S_IFREG | 0644, &f),
			      0);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &t_root, "d", true),
			-ENOTEMPTY);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &t_root, "d", false),
			-EISDIR);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &d, "f", true), -ENOTDIR);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &d, "nope", false),
			-ENOENT);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &f, "x", false),
			-ENOTDIR);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &d, "..", false),
			-EINVAL);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &d, "f", false), 0);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &d, "f", &a), -ENOENT);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &f, &a), -ENOENT);
	CU_ASSERT(t_destroy_has(&f, NULL));
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &t_root, "d", true), 0);
	CU_ASSERT_EQUAL(t_nlink(&t_root), 2);
}

static void test_rename_over_file(void)
{
	struct nc_fid a, b;
	struct nc_layout lb, ld;
	struct nc_attr at;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "a", S_IFREG | 0644,
				       &a), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "b", S_IFREG | 0644,
				       &b), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &b, &lb), 0);
	CU_ASSERT_FALSE(t_destroy_has(&b, NULL));
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "a", &t_root, "b", 0), 0);
	CU_ASSERT(t_lookup_is(&t_root, "b", &a));
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &t_root, "a", &at),
			-ENOENT);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &b, &at), -ENOENT);
	CU_ASSERT_EQUAL(t_nlink(&a), 1);
	/* The replaced file's objects wait in the destroy queue. */
	CU_ASSERT_FATAL(t_destroy_has(&b, &ld));
	CU_ASSERT_EQUAL(ld.l_stripe_count, lb.l_stripe_count);
	CU_ASSERT_EQUAL(ld.l_stripe_size, lb.l_stripe_size);
	CU_ASSERT(memcmp(ld.l_shards, lb.l_shards,
			 lb.l_stripe_count * sizeof(lb.l_shards[0])) == 0);
	CU_ASSERT_FALSE(t_destroy_has(&a, NULL));
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "nope", &t_root, "c", 0),
			-ENOENT);
}

static void test_rename_dirs(void)
{
	struct nc_fid d, e, ne, sub, f, x;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0755,
				       &d), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "e", S_IFDIR | 0755,
				       &e), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "ne", S_IFDIR | 0755,
				       &ne), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &ne, "x", S_IFREG | 0644, &x),
			      0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "f", S_IFREG | 0644,
				       &f), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d, "sub", S_IFDIR | 0755,
				       &sub), 0);
	CU_ASSERT_EQUAL(t_nlink(&t_root), 5);

	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "d", &t_root, "ne", 0),
			-ENOTEMPTY);
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "d", &t_root, "f", 0),
			-ENOTDIR);
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "f", &t_root, "e", 0),
			-EISDIR);
	/* Into itself or its own subtree. */
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "d", &d, "x", 0), -EINVAL);
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "d", &sub, "x", 0),
			-EINVAL);
	CU_ASSERT(t_lookup_is(&t_root, "d", &d));

	/* Directory over an empty directory. */
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "d", &t_root, "e", 0), 0);
	CU_ASSERT(t_lookup_is(&t_root, "e", &d));
	CU_ASSERT_EQUAL(t_nlink(&e), UINT32_MAX);
	CU_ASSERT_EQUAL(t_nlink(&t_root), 4);
	CU_ASSERT_EQUAL(t_nlink(&d), 3);
	CU_ASSERT(t_lookup_is(&d, "sub", &sub));
}

static void test_rename_cross_dir(void)
{
	struct nc_fid d1, d2, x, f, y;
	struct nc_dirent ents[16];
	uint32_t n;
	bool eof;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d1", S_IFDIR | 0755,
				       &d1), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d2", S_IFDIR | 0755,
				       &d2), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d1, "x", S_IFDIR | 0755, &x),
			      0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d1, "f", S_IFREG | 0644, &f),
			      0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &x, "y", S_IFDIR | 0755, &y),
			      0);
	CU_ASSERT_EQUAL(t_nlink(&d1), 3);
	CU_ASSERT_EQUAL(t_nlink(&d2), 2);

	CU_ASSERT_EQUAL(t_rename(&t_rootc, &d1, "x", &d2, "moved", 0), 0);
	CU_ASSERT_EQUAL(t_nlink(&d1), 2);
	CU_ASSERT_EQUAL(t_nlink(&d2), 3);
	CU_ASSERT(t_lookup_is(&d2, "moved", &x));
	CU_ASSERT(t_lookup_is(&x, "y", &y));
	/* The moved directory's parent pointer follows: d2 cannot now go
	 * below its new grandchild. */
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "d2", &y, "loop", 0),
			-EINVAL);
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "d1", &y, "ok", 0), 0);
	CU_ASSERT(t_lookup_is(&y, "ok", &d1));
	CU_ASSERT_EQUAL(t_nlink(&t_root), 3);
	CU_ASSERT_EQUAL(t_nlink(&y), 3);

	CU_ASSERT_EQUAL(t_rename(&t_rootc, &d1, "f", &t_root, "f2", 0), 0);
	CU_ASSERT(t_lookup_is(&t_root, "f2", &f));
	CU_ASSERT_EQUAL(mds_ns_readdir(t_ns, &t_rootc, &d1, 0, 16, ents, &n,
				       &eof), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT(eof);
}

static void test_rename_flags(void)
{
	struct nc_fid d1, d2, f, g, sub;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d1", S_IFDIR | 0755,
				       &d1), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d2", S_IFDIR | 0755,
				       &d2), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d1, "f", S_IFREG | 0644, &f),
			      0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d2, "g", S_IFREG | 0644, &g),
			      0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d2, "sub", S_IFDIR | 0755,
				       &sub), 0);

	CU_ASSERT_EQUAL(t_rename(&t_rootc, &d1, "f", &d2, "g",
				 NC_RENAME_NOREPLACE), -EEXIST);
	CU_ASSERT(t_lookup_is(&d2, "g", &g));
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &d1, "f", &d2, "new",
				 NC_RENAME_NOREPLACE | NC_RENAME_EXCHANGE),
			-EINVAL);
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &d1, "f", &d2, "new",
				 NC_RENAME_EXCHANGE), -ENOENT);
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &d1, "f", &d1, "f2",
				 NC_RENAME_NOREPLACE), 0);
	CU_ASSERT(t_lookup_is(&d1, "f2", &f));

	/* Exchange a file in d1 with a directory in d2. */
	CU_ASSERT_EQUAL(t_nlink(&d1), 2);
	CU_ASSERT_EQUAL(t_nlink(&d2), 3);
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &d1, "f2", &d2, "sub",
				 NC_RENAME_EXCHANGE), 0);
	CU_ASSERT(t_lookup_is(&d1, "f2", &sub));
	CU_ASSERT(t_lookup_is(&d2, "sub", &f));
	CU_ASSERT_EQUAL(t_nlink(&d1), 3);
	CU_ASSERT_EQUAL(t_nlink(&d2), 2);
	CU_ASSERT_EQUAL(t_nlink(&f), 1);
	/* sub's parent is now d1: moving d1 below sub is a loop. */
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "d1", &sub, "x", 0),
			-EINVAL);
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "d2", &sub, "x", 0), 0);
	CU_ASSERT(t_lookup_is(&sub, "x", &d2));
	/* Exchanging a directory with its own ancestor's entry is a loop. */
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "d1", &d2, "sub",
				 NC_RENAME_EXCHANGE), -EINVAL);
}

static void test_rename_same_inode(void)
{
	struct nc_fid f;
	struct nc_attr a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "a", S_IFREG | 0644,
				       &f), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_link(t_ns, &t_rootc, &f, &t_root, "b", &a),
			      0);
	CU_ASSERT_EQUAL(a.a_nlink, 2);
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "a", &t_root, "b", 0), 0);
	CU_ASSERT(t_lookup_is(&t_root, "a", &f));
	CU_ASSERT(t_lookup_is(&t_root, "b", &f));
	CU_ASSERT_EQUAL(t_nlink(&f), 2);
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "a", &t_root, "a", 0), 0);
	CU_ASSERT(t_lookup_is(&t_root, "a", &f));
	CU_ASSERT_FALSE(t_destroy_has(&f, NULL));
}

static void test_hardlinks(void)
{
	struct nc_fid d, f;
	struct nc_attr a, before;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0755,
				       &d), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "f", S_IFREG | 0644,
				       &f), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getattr(t_ns, &f, &before), 0);
	CU_ASSERT_EQUAL(mds_ns_link(t_ns, &t_rootc, &f, &d, "g", &a), 0);
	CU_ASSERT_EQUAL(a.a_nlink, 2);
	CU_ASSERT(a.a_ctime.t_sec > before.a_ctime.t_sec ||
		  (a.a_ctime.t_sec == before.a_ctime.t_sec &&
		   a.a_ctime.t_nsec >= before.a_ctime.t_nsec));
	CU_ASSERT(t_lookup_is(&d, "g", &f));
	CU_ASSERT_EQUAL(mds_ns_link(t_ns, &t_rootc, &d, &t_root, "dlink", &a),
			-EPERM);
	CU_ASSERT_EQUAL(mds_ns_link(t_ns, &t_rootc, &f, &d, "g", &a), -EEXIST);
	CU_ASSERT_EQUAL(mds_ns_link(t_ns, &t_rootc, &f, &f, "x", &a),
			-ENOTDIR);
	CU_ASSERT_EQUAL(mds_ns_link(t_ns, &t_user, &f, &d, "u", &a), -EACCES);

	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &t_root, "f", false), 0);
	CU_ASSERT_EQUAL(t_nlink(&f), 1);
	CU_ASSERT_FALSE(t_destroy_has(&f, NULL));
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &d, "g", false), 0);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &f, &a), -ENOENT);
	CU_ASSERT(t_destroy_has(&f, NULL));
}

static void test_permissions(void)
{
	struct nc_fid pub, mine, ro, sticky, uf, of, rf;
	struct nc_setattr_req sa;
	struct nc_cred grp = t_other;
	struct nc_layout l;
	struct nc_attr a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "pub", S_IFDIR | 0777,
				       &pub), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_user, &pub, "mine", S_IFDIR | 0700,
				       &mine), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getattr(t_ns, &mine, &a), 0);
	CU_ASSERT_EQUAL(a.a_uid, 1000);
	CU_ASSERT_EQUAL(a.a_gid, 1000);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_user, &mine, "uf", S_IFREG | 0600,
				       &uf), 0);

	/* No search permission: lookup fails; root passes. */
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_other, &mine, "uf", &a),
			-EACCES);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &mine, "uf", &a), 0);
	CU_ASSERT_EQUAL(t_setattr(&t_user, &mine, NC_SA_MODE, 0600, 0, 0, 0,
				  NULL), 0);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_user, &mine, "uf", &a), -EACCES);
	CU_ASSERT_EQUAL(t_setattr(&t_user, &mine, NC_SA_MODE, 0700, 0, 0, 0,
				  NULL), 0);

	/* No write permission: create fails. */
	CU_ASSERT_EQUAL_FATAL(t_create(&t_user, &pub, "ro", S_IFDIR | 0555,
				       &ro), 0);
	CU_ASSERT_EQUAL(t_create(&t_user, &ro, "x", S_IFREG | 0644, NULL),
			-EACCES);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &ro, "x", S_IFREG | 0644, NULL), 0);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_user, &ro, "x", false), -EACCES);
	CU_ASSERT_EQUAL(t_rename(&t_user, &ro, "x", &pub, "x", 0), -EACCES);

	/* Sticky directory: others may not remove or rename my file. */
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "tmp",
				       S_IFDIR | 01777, &sticky), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_user, &sticky, "uf", S_IFREG | 0666,
				       NULL), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_other, &sticky, "of", S_IFREG | 0644,
				       &of), 0);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_other, &sticky, "uf", false),
			-EPERM);
	CU_ASSERT_EQUAL(t_rename(&t_other, &sticky, "uf", &sticky, "stolen", 0),
			-EPERM);
	CU_ASSERT_EQUAL(t_rename(&t_user, &sticky, "uf", &sticky, "of", 0),
			-EPERM);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_user, &sticky, "uf", false), 0);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &sticky, "of", false), 0);

	/* chown/chgrp/chmod. */
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &pub, "rf", S_IFREG | 06755,
				       &rf), 0);
	CU_ASSERT_EQUAL(t_setattr(&t_user, &uf, NC_SA_UID, 0, 1001, 0, 0, NULL),
			-EPERM);
	CU_ASSERT_EQUAL(t_setattr(&t_user, &uf, NC_SA_GID, 0, 0, 3000, 0, NULL),
			-EPERM);
	CU_ASSERT_EQUAL(t_setattr(&t_user, &uf, NC_SA_MODE, 06755, 0, 0, 0,
				  &a), 0);
	CU_ASSERT_EQUAL(a.a_mode & 07777, 06755);
	CU_ASSERT_EQUAL(t_setattr(&t_user, &uf, NC_SA_GID, 0, 0, 2000, 0, &a),
			0);
	CU_ASSERT_EQUAL(a.a_gid, 2000);
	CU_ASSERT_EQUAL(a.a_mode & 07777, 0755);
	CU_ASSERT_EQUAL(t_setattr(&t_other, &uf, NC_SA_MODE, 0777, 0, 0, 0,
				  NULL), -EPERM);
	CU_ASSERT_EQUAL(t_setattr(&t_other, &rf, NC_SA_UID, 0, 1001, 0, 0,
				  NULL), -EPERM);
	CU_ASSERT_EQUAL(t_setattr(&t_rootc, &rf, NC_SA_UID | NC_SA_GID, 0, 1001,
				  1001, 0, &a), 0);
	CU_ASSERT_EQUAL(a.a_uid, 1001);
	CU_ASSERT_EQUAL(a.a_mode & 07777, 06755);
	/* The new owner, not in group 3000, cannot keep setgid by chmod. */
	CU_ASSERT_EQUAL(t_setattr(&t_rootc, &rf, NC_SA_GID, 0, 0, 3000, 0, &a),
			0);
	CU_ASSERT_EQUAL(t_setattr(&t_other, &rf, NC_SA_MODE, 02755, 0, 0, 0,
				  &a), 0);
	CU_ASSERT_EQUAL(a.a_mode & 07777, 0755);
	grp.c_ngroups = 1;
	grp.c_groups[0] = 3000;
	CU_ASSERT_EQUAL(t_setattr(&grp, &rf, NC_SA_MODE, 02755, 0, 0, 0, &a),
			0);
	CU_ASSERT_EQUAL(a.a_mode & 07777, 02755);

	/* Truncate and times. */
	CU_ASSERT_EQUAL(t_setattr(&t_user, &rf, NC_SA_SIZE, 0, 0, 0, 10, NULL),
			-EACCES);
	CU_ASSERT_EQUAL(t_setattr(&t_user, &rf, NC_SA_MTIME_NOW, 0, 0, 0, 0,
				  NULL), -EACCES);
	memset(&sa, 0, sizeof(sa));
	sa.sa_cred = t_user;
	sa.sa_fid = rf;
	sa.sa_valid = NC_SA_MTIME;
	sa.sa_mtime.t_sec = 12345;
	CU_ASSERT_EQUAL(mds_ns_setattr(t_ns, &sa, &a), -EPERM);
	sa.sa_cred = t_other;
	CU_ASSERT_EQUAL(mds_ns_setattr(t_ns, &sa, &a), 0);
	CU_ASSERT_EQUAL(a.a_mtime.t_sec, 12345);
	CU_ASSERT_EQUAL(t_setattr(&t_user, &mine, NC_SA_SIZE, 0, 0, 0, 1, NULL),
			-EISDIR);

	/* Open checks. */
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_other, &uf, NC_OPEN_READ, &a,
					  &l, NULL), 0);
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_other, &uf, NC_OPEN_WRITE,
					  &a, &l, NULL), -EACCES);
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_rootc, &uf, NC_OPEN_WRITE,
					  &a, &l, NULL), 0);
	CU_ASSERT(l.l_stripe_count > 0);
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_rootc, &mine, NC_OPEN_WRITE,
					  &a, &l, NULL), -EISDIR);
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_user, &mine, NC_OPEN_READ,
					  &a, &l, NULL), 0);
	CU_ASSERT_EQUAL(l.l_stripe_count, 0);
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_other, &mine, NC_OPEN_READ,
					  &a, &l, NULL), -EACCES);
}

static void test_readdir_paging(void)
{
	static const int n_files = 11;
	struct nc_dirent ents[3];
	int seen[11] = { 0 };
	uint64_t cookie = 0, last = 0;
	struct nc_fid d, f;
	char name[32];
	uint32_t n, total = 0, calls = 0;
	bool eof = false;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0755,
				       &d), 0);
	for (int i = 0; i < n_files - 1; i++) {
		snprintf(name, sizeof(name), "file%02d", i);
		CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d, name,
					       S_IFREG | 0644, NULL), 0);
	}
	/* An entry renamed in gets a fresh cookie and is listed once. */
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "file10",
				       S_IFDIR | 0755, &f), 0);
	CU_ASSERT_EQUAL_FATAL(t_rename(&t_rootc, &t_root, "file10", &d,
				       "file10", 0), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_unlink(t_ns, &t_rootc, &d, "file03",
					    false), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d, "file03", S_IFREG | 0644,
				       NULL), 0);

	while (!eof && calls < 20) {
		CU_ASSERT_EQUAL_FATAL(mds_ns_readdir(t_ns, &t_rootc, &d, cookie,
						     3, ents, &n, &eof), 0);
		calls++;
		CU_ASSERT(n <= 3);
		CU_ASSERT(n == 3 || eof);
		for (uint32_t i = 0; i < n; i++) {
			int idx;

			CU_ASSERT(ents[i].de_cookie > last);
			last = ents[i].de_cookie;
			CU_ASSERT_FATAL(sscanf(ents[i].de_name, "file%d",
					       &idx) == 1);
			CU_ASSERT_FATAL(idx >= 0 && idx < n_files);
			seen[idx]++;
			if (idx == 10) {
				CU_ASSERT(nc_fid_eq(&ents[i].de_fid, &f));
				CU_ASSERT(S_ISDIR(ents[i].de_mode));
			} else {
				CU_ASSERT(S_ISREG(ents[i].de_mode));
			}
			total++;
		}
		if (n)
			cookie = ents[n - 1].de_cookie;
	}
	CU_ASSERT(eof);
	CU_ASSERT_EQUAL(total, (uint32_t)n_files);
	CU_ASSERT_EQUAL(calls, 4);
	for (int i = 0; i < n_files; i++)
		CU_ASSERT_EQUAL(seen[i], 1);
	CU_ASSERT_EQUAL(mds_ns_readdir(t_ns, &t_rootc, &d, cookie, 3, ents, &n,
				       &eof), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT(eof);
	CU_ASSERT_EQUAL(mds_ns_readdir(t_ns, &t_other, &f, 0, 3, ents, &n,
				       &eof), 0);
	CU_ASSERT_EQUAL(t_setattr(&t_rootc, &d, NC_SA_MODE, 0711, 0, 0, 0,
				  NULL), 0);
	CU_ASSERT_EQUAL(mds_ns_readdir(t_ns, &t_other, &d, 0, 3, ents, &n,
				       &eof), -EACCES);
}

static void test_symlink(void)
{
	static const char target[] = "../some/where/else";
	struct nc_create_req cq;
	struct nc_layout l;
	struct nc_attr a;
	struct nc_fid f;
	char buf[64];
	int n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	memset(&cq, 0, sizeof(cq));
	cq.cq_cred = t_rootc;
	cq.cq_parent = t_root;
	strcpy(cq.cq_name, "ln");
	cq.cq_mode = S_IFLNK | 0777;
	strcpy(cq.cq_target, target);
	CU_ASSERT_EQUAL_FATAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), 0);
	CU_ASSERT(S_ISLNK(a.a_mode));
	CU_ASSERT_EQUAL(a.a_size, strlen(target));
	CU_ASSERT_EQUAL(l.l_stripe_count, 0);
	n = mds_ns_readlink(t_ns, &a.a_fid, buf, sizeof(buf));
	CU_ASSERT_EQUAL(n, (int)strlen(target));
	CU_ASSERT(n > 0 && memcmp(buf, target, (size_t)n) == 0);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(mds_ns_readlink(t_ns, &a.a_fid, buf, 4),
			(int)strlen(target));
	CU_ASSERT(memcmp(buf, target, 4) == 0 && buf[4] == 0);
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_rootc, &a.a_fid,
					  NC_OPEN_READ, &a, &l, NULL), -ELOOP);

	strcpy(cq.cq_name, "empty");
	cq.cq_target[0] = '\0';
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), -ENOENT);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "f", S_IFREG | 0644,
				       &f), 0);
	CU_ASSERT_EQUAL(mds_ns_readlink(t_ns, &f, buf, sizeof(buf)), -EINVAL);
}

static void test_xattr(void)
{
	struct mds_txn *txn;
	struct mds_db *db;
	struct nc_fid f, d;
	char buf[128];
	uint8_t *big;
	uint64_t cnt;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0777,
				       &d), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_user, &d, "f", S_IFREG | 0644, &f),
			      0);
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_user, &f, "user.a", "v1", 2,
					 0), 0);
	CU_ASSERT_EQUAL(mds_ns_xattr_get(t_ns, &t_user, &f, "user.a", buf,
					 sizeof(buf)), 2);
	CU_ASSERT(memcmp(buf, "v1", 2) == 0);
	CU_ASSERT_EQUAL(mds_ns_xattr_get(t_ns, &t_user, &f, "user.a", NULL, 0),
			2);
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_user, &f, "user.a", "v2", 2,
					 NC_XATTR_CREATE), -EEXIST);
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_user, &f, "user.b", "x", 1,
					 NC_XATTR_REPLACE), -ENODATA);
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_user, &f, "user.a", "value3",
					 6, NC_XATTR_REPLACE), 0);
	CU_ASSERT_EQUAL(mds_ns_xattr_get(t_ns, &t_other, &f, "user.a", buf,
					 sizeof(buf)), 6);
	CU_ASSERT(memcmp(buf, "value3", 6) == 0);
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_user, &f, "user.b", "", 0,
					 NC_XATTR_CREATE), 0);
	CU_ASSERT_EQUAL(mds_ns_xattr_get(t_ns, &t_user, &f, "user.b", buf,
					 sizeof(buf)), 0);
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_other, &f, "user.c", "x", 1,
					 0), -EACCES);
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_user, &f, "trusted.t", "x", 1,
					 0), -EPERM);
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_rootc, &f, "trusted.t", "x",
					 1, 0), 0);
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_user, &f, "security.x", "x",
					 1, 0), -EOPNOTSUPP);
	CU_ASSERT_EQUAL(mds_ns_xattr_get(t_ns, &t_user, &f, "trusted.t", buf,
					 sizeof(buf)), -ENODATA);

	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(mds_ns_xattr_list(t_ns, &t_user, &f, buf, sizeof(buf)),
			14);
	CU_ASSERT(memcmp(buf, "user.a\0user.b\0", 14) == 0);
	CU_ASSERT_EQUAL(mds_ns_xattr_list(t_ns, &t_rootc, &f, buf, sizeof(buf)),
			24);
	CU_ASSERT_EQUAL(mds_ns_xattr_list(t_ns, &t_user, &f, NULL, 0), 14);

	CU_ASSERT_EQUAL(mds_ns_xattr_del(t_ns, &t_user, &f, "user.a"), 0);
	CU_ASSERT_EQUAL(mds_ns_xattr_get(t_ns, &t_user, &f, "user.a", buf,
					 sizeof(buf)), -ENODATA);
	CU_ASSERT_EQUAL(mds_ns_xattr_del(t_ns, &t_user, &f, "user.a"),
			-ENODATA);

	big = calloc(1, NC_XATTR_VALUE_MAX + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	memset(big, 'z', NC_XATTR_VALUE_MAX + 1);
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_user, &d, "user.big", big,
					 NC_XATTR_VALUE_MAX + 1, 0), -E2BIG);
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_rootc, &d, "user.big", big,
					 NC_XATTR_VALUE_MAX, 0), 0);
	memset(big, 0, NC_XATTR_VALUE_MAX + 1);
	CU_ASSERT_EQUAL(mds_ns_xattr_get(t_ns, &t_rootc, &d, "user.big", big,
					 NC_XATTR_VALUE_MAX + 1),
			NC_XATTR_VALUE_MAX);
	CU_ASSERT(big[0] == 'z' && big[NC_XATTR_VALUE_MAX - 1] == 'z' &&
		  big[NC_XATTR_VALUE_MAX] == 0);
	free(big);
	CU_ASSERT_EQUAL(mds_ns_xattr_del(t_ns, &t_rootc, &d, "user.big"), 0);

	/* Freeing the inode removes every xattr it had. */
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_user, &d, "f", false), 0);
	mds_ns_close(t_ns);
	t_ns = NULL;
	CU_ASSERT_EQUAL_FATAL(mds_db_open(t_mdt, T_MAP_SIZE, &db), 0);
	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin(db, true, &txn), 0);
	CU_ASSERT_EQUAL(mds_db_count(txn, MDS_T_XATTRS, &cnt), 0);
	CU_ASSERT_EQUAL(cnt, 0);
	mds_db_txn_abort(txn);
	mds_db_close(db);
}

/* The automatic default: plain striping over 4 when fewer than 6 OSTs
 * exist; erasure coding 4+2 when 6 exist even if one is down, the shard on
 * the down OST stale from the start. */
static void test_layout_auto_ec(void)
{
	struct mds_ost_set four = { 0 }, degraded = { 0 };
	struct nc_create_req cq;
	struct nc_layout l;
	struct nc_attr a;
	int stale = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	four.os_count = 4;
	degraded.os_count = 5;
	for (uint32_t i = 0; i < 5; i++)
		four.os_index[i % 4] = degraded.os_index[i] = i;
	degraded.os_ndown = 1;
	degraded.os_down[0] = 5;

	memset(&cq, 0, sizeof(cq));
	cq.cq_cred = t_rootc;
	cq.cq_parent = t_root;
	cq.cq_mode = S_IFREG | 0644;
	cq.cq_flags = NC_CREATE_EXCL;
	strcpy(cq.cq_name, "auto4");
	CU_ASSERT_EQUAL_FATAL(mds_ns_create(t_ns, &cq, &four, &a, &l), 0);
	CU_ASSERT_EQUAL(l.l_m, 0);
	CU_ASSERT_EQUAL(l.l_stripe_count, 4);

	strcpy(cq.cq_name, "auto6");
	CU_ASSERT_EQUAL_FATAL(mds_ns_create(t_ns, &cq, &degraded, &a, &l), 0);
	CU_ASSERT_EQUAL(l.l_k, 4);
	CU_ASSERT_EQUAL(l.l_m, 2);
	CU_ASSERT_EQUAL_FATAL(l.l_stripe_count, 6);
	for (uint32_t i = 0; i < 6; i++) {
		if (l.l_shards[i].ls_flags & NC_SHARD_STALE) {
			stale++;
			CU_ASSERT_EQUAL(l.l_shards[i].ls_ost, 5);
		}
	}
	CU_ASSERT_EQUAL(stale, 1);

	/* Only full OSTs left (the MDS lists them with the down ones): a new
	 * file gets ENOSPC; only down ones: no OST. */
	memset(&degraded, 0, sizeof(degraded));
	degraded.os_ndown = 6;
	for (uint32_t i = 0; i < 6; i++)
		degraded.os_down[i] = i;
	strcpy(cq.cq_name, "nothing-up");
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &degraded, &a, &l), -NC_E_NOOST);
	degraded.os_full[3] = true;
	strcpy(cq.cq_name, "all-full");
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &degraded, &a, &l), -ENOSPC);
}

/*
 * A directory without a default of its own shows an empty template, so
 * that a client turning packing on (getlayout, add the flag, setlayout)
 * does not write the filesystem default's stripe count into it: packs and
 * files there are still erasure-coded 4+2 once 6 OSTs are up.
 */
static void test_layout_dir_empty_template(void)
{
	struct nc_layout tmpl, l;
	struct nc_create_req cq;
	struct nc_fid d;
	struct nc_attr a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "plaindir", S_IFDIR | 0755, &d), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &d, &tmpl), 0);
	CU_ASSERT_TRUE(tmpl.l_flags & NC_LAYOUT_TEMPLATE);
	CU_ASSERT_EQUAL(tmpl.l_stripe_count, 0);
	CU_ASSERT_EQUAL(tmpl.l_stripe_size, 0);
	CU_ASSERT_EQUAL(tmpl.l_k, 0);
	CU_ASSERT_EQUAL(tmpl.l_m, 0);
	CU_ASSERT_EQUAL(tmpl.l_first_ost, NC_OST_ANY);

	tmpl.l_flags |= NC_LAYOUT_PACK;
	CU_ASSERT_EQUAL_FATAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &tmpl, &t_osts, &l), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &d, &l), 0);
	CU_ASSERT_TRUE(l.l_flags & NC_LAYOUT_PACK);
	CU_ASSERT_EQUAL(l.l_stripe_count, 0);

	CU_ASSERT_EQUAL_FATAL(mds_ns_pack_alloc(t_ns, &t_rootc, &d, &t_osts, NULL, 0, &l), 0);
	CU_ASSERT_EQUAL(l.l_k, 4);
	CU_ASSERT_EQUAL(l.l_m, 2);
	CU_ASSERT_EQUAL(l.l_stripe_count, 6);

	memset(&cq, 0, sizeof(cq));
	cq.cq_cred = t_rootc;
	cq.cq_parent = d;
	cq.cq_mode = S_IFREG | 0644;
	cq.cq_flags = NC_CREATE_EXCL;
	strcpy(cq.cq_name, "big");
	CU_ASSERT_EQUAL_FATAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), 0);
	CU_ASSERT_EQUAL(l.l_k, 4);
	CU_ASSERT_EQUAL(l.l_m, 2);
}

/* Scans for files with stale shards on @osts, @max at a time: how many. */
static uint32_t t_stale_files(const bool *osts, uint32_t max, struct nc_fid *out)
{
	struct mds_stale_pos pos = { 0 };
	struct nc_fid got[8];
	uint32_t n = 0, count;

	while (!pos.sp_done) {
		CU_ASSERT_EQUAL_FATAL(mds_ns_stale_scan(t_ns, osts, &pos, got, max, &count), 0);
		CU_ASSERT_FATAL(count <= max);
		for (uint32_t i = 0; i < count; i++)
			if (out)
				out[n + i] = got[i];
		n += count;
	}
	return n;
}

static void test_stale_scan(void)
{
	struct mds_ost_set degraded = { 0 };
	bool *osts = calloc(NC_MAX_OSTS, sizeof(*osts));
	struct nc_create_req cq;
	struct nc_layout l, l1 = { 0 };
	struct nc_fid f1 = { 0 }, found[8];
	struct nc_attr a;
	uint32_t s2 = UINT32_MAX;

	CU_ASSERT_PTR_NOT_NULL_FATAL(osts);
	degraded.os_count = 5;
	for (uint32_t i = 0; i < 5; i++)
		degraded.os_index[i] = i;
	degraded.os_ndown = 1;
	degraded.os_down[0] = 5;
	memset(&cq, 0, sizeof(cq));
	cq.cq_cred = t_rootc;
	cq.cq_parent = t_root;
	cq.cq_mode = S_IFREG | 0644;
	cq.cq_flags = NC_CREATE_EXCL;
	/* Three EC 4+2 files laid out while OST 5 is down: stale there. */
	for (int i = 0; i < 3; i++) {
		snprintf(cq.cq_name, sizeof(cq.cq_name), "stale%d", i);
		CU_ASSERT_EQUAL_FATAL(mds_ns_create(t_ns, &cq, &degraded, &a, &l), 0);
		CU_ASSERT_EQUAL_FATAL(l.l_m, 2);
		if (i == 1) {
			f1 = a.a_fid;
			l1 = l;
		}
	}
	osts[5] = true;
	CU_ASSERT_EQUAL(t_stale_files(osts, 8, NULL), 3);
	/* Found however small the batches. */
	CU_ASSERT_EQUAL(t_stale_files(osts, 1, NULL), 3);
	osts[5] = false;
	osts[2] = true;
	CU_ASSERT_EQUAL(t_stale_files(osts, 8, NULL), 0);

	/* A write marks file 1's shard on OST 2 stale. */
	for (uint32_t s = 0; s < l1.l_stripe_count; s++)
		if (l1.l_shards[s].ls_ost == 2)
			s2 = s;
	CU_ASSERT_FATAL(s2 != UINT32_MAX);
	CU_ASSERT_EQUAL_FATAL(mds_ns_shard_state(t_ns, &t_rootc, &f1, s2, NC_SHARD_STALE, 0,
						 &l), 0);
	CU_ASSERT_TRUE(mds_layout_is_stale_on(&l, osts));
	CU_ASSERT_EQUAL_FATAL(t_stale_files(osts, 8, found), 1);
	CU_ASSERT_TRUE(nc_fid_eq(&found[0], &f1));
	/* A rebuild clears it. */
	CU_ASSERT_EQUAL_FATAL(mds_ns_shard_state(t_ns, &t_rootc, &f1, s2, 0, NC_SHARD_STALE,
						 &l), 0);
	CU_ASSERT_FALSE(mds_layout_is_stale_on(&l, osts));
	CU_ASSERT_EQUAL(t_stale_files(osts, 8, NULL), 0);

	/* A pack whose first shard missed an append is found after the
	 * files, as the FID of its objects; cleared, it is not. */
	{
		struct nc_fid pf;
		uint32_t po;

		CU_ASSERT_EQUAL_FATAL(mds_ns_pack_alloc(t_ns, &t_rootc, &t_root, &t_osts, NULL, 0,
							&l), 0);
		CU_ASSERT_FATAL(l.l_stripe_count > 0 && l.l_m > 0);
		pf.f_seq = NC_PACK_FID_SEQ;
		pf.f_oid = l.l_pack_id;
		po = l.l_shards[0].ls_ost;
		CU_ASSERT_EQUAL_FATAL(mds_ns_shard_state(t_ns, &t_rootc, &f1, s2, NC_SHARD_STALE,
							 0, &l), 0);
		CU_ASSERT_EQUAL_FATAL(mds_ns_shard_state(t_ns, &t_rootc, &pf, 0, NC_SHARD_STALE,
							 0, &l), 0);
		osts[po] = true;
		CU_ASSERT_EQUAL_FATAL(t_stale_files(osts, 8, found), 2);
		CU_ASSERT_TRUE(nc_fid_eq(&found[0], &f1));
		CU_ASSERT_TRUE(nc_fid_eq(&found[1], &pf));
		CU_ASSERT_EQUAL(t_stale_files(osts, 1, NULL), 2);
		memset(osts, 0, NC_MAX_OSTS * sizeof(*osts));
		osts[po] = true;
		CU_ASSERT_EQUAL_FATAL(t_stale_files(osts, 8, found), po == 2 ? 2 : 1);
		CU_ASSERT_TRUE(nc_fid_eq(&found[po == 2 ? 1 : 0], &pf));
		CU_ASSERT_EQUAL_FATAL(mds_ns_shard_state(t_ns, &t_rootc, &f1, s2, 0, NC_SHARD_STALE,
							 &l), 0);
		CU_ASSERT_EQUAL_FATAL(mds_ns_shard_state(t_ns, &t_rootc, &pf, 0, 0, NC_SHARD_STALE,
							 &l), 0);
		osts[2] = true;
		CU_ASSERT_EQUAL(t_stale_files(osts, 8, NULL), 0);
	}
	free(osts);
}

static void test_layout_inherit(void)
{
	struct nc_layout t, out, l;
	struct nc_fid d, sub, f;
	struct nc_create_req cq;
	struct mds_ost_set four = { 0 }, none = { 0 };
	struct nc_attr a;
	bool used[T_NOSTS];

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(mds_ns_default_layout(t_ns, &t), 0);
	CU_ASSERT_EQUAL(t.l_stripe_size, NC_DEFAULT_STRIPE_SIZE);
	CU_ASSERT_EQUAL(t.l_stripe_count, NC_DEFAULT_STRIPE_COUNT);
	CU_ASSERT_EQUAL(t.l_m, 0);

	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0755,
				       &d), 0);
	memset(&t, 0, sizeof(t));
	t.l_stripe_size = 65536;
	t.l_stripe_count = 2;
	t.l_first_ost = NC_OST_ANY;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_user, &d, &t, &t_osts, &out),
			-EPERM);
	CU_ASSERT_EQUAL_FATAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts,
					       &out), 0);
	CU_ASSERT(out.l_flags & NC_LAYOUT_TEMPLATE);
	CU_ASSERT_EQUAL(out.l_stripe_count, 2);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &d, &l), 0);
	CU_ASSERT_EQUAL(l.l_stripe_size, 65536);
	CU_ASSERT_EQUAL(l.l_stripe_count, 2);

	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d, "sub", S_IFDIR | 0755,
				       &sub), 0);
	for (int round = 0; round < 2; round++) {
		memset(&cq, 0, sizeof(cq));
		cq.cq_cred = t_rootc;
		cq.cq_parent = round ? sub : d;
		strcpy(cq.cq_name, "file");
		cq.cq_mode = S_IFREG | 0644;
		cq.cq_flags = NC_CREATE_EXCL;
		CU_ASSERT_EQUAL_FATAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l),
				      0);
		CU_ASSERT_EQUAL(l.l_stripe_size, 65536);
		CU_ASSERT_EQUAL(l.l_stripe_count, 2);
		CU_ASSERT_EQUAL(l.l_k, 2);
		CU_ASSERT_EQUAL(l.l_m, 0);
		CU_ASSERT(l.l_shards[0].ls_ost < T_NOSTS);
		CU_ASSERT(l.l_shards[1].ls_ost < T_NOSTS);
		CU_ASSERT(l.l_shards[0].ls_ost != l.l_shards[1].ls_ost);
		CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &a.a_fid, &out),
				      0);
		CU_ASSERT(memcmp(&out, &l, sizeof(l)) == 0);
	}

	/* The root has no template: the filesystem default, which with 6 or
	 * more OSTs up (8 here) is erasure coding 4+2 over 6 of them. */
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "plain",
				       S_IFREG | 0644, &f), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &f, &l), 0);
	CU_ASSERT_EQUAL(l.l_stripe_size, NC_DEFAULT_STRIPE_SIZE);
	CU_ASSERT_EQUAL(l.l_stripe_count, 6);
	CU_ASSERT_EQUAL(l.l_k, 4);
	CU_ASSERT_EQUAL(l.l_m, 2);
	memset(used, 0, sizeof(used));
	for (int i = 0; i < l.l_stripe_count; i++) {
		CU_ASSERT_FATAL(l.l_shards[i].ls_ost < T_NOSTS);
		CU_ASSERT_FALSE(used[l.l_shards[i].ls_ost]);
		used[l.l_shards[i].ls_ost] = true;
	}

	/* A pinned first OST, wrapping around the set. */
	t.l_stripe_count = 3;
	t.l_first_ost = 7;
	CU_ASSERT_EQUAL_FATAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts,
					       &out), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d, "pinned", S_IFREG | 0644,
				       &f), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &f, &l), 0);
	CU_ASSERT_EQUAL(l.l_stripe_count, 3);
	CU_ASSERT_EQUAL(l.l_shards[0].ls_ost, 7);
	CU_ASSERT_EQUAL(l.l_shards[1].ls_ost, 0);
	CU_ASSERT_EQUAL(l.l_shards[2].ls_ost, 1);

	/* "All OSTs", and a count above what is usable. */
	t.l_stripe_count = UINT16_MAX;
	t.l_first_ost = NC_OST_ANY;
	CU_ASSERT_EQUAL_FATAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts,
					       &out), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d, "all", S_IFREG | 0644,
				       &f), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &f, &l), 0);
	CU_ASSERT_EQUAL(l.l_stripe_count, T_NOSTS);
	four.os_count = 4;
	for (uint32_t i = 0; i < 4; i++)
		four.os_index[i] = 10 + i;
	memset(&cq, 0, sizeof(cq));
	cq.cq_cred = t_rootc;
	cq.cq_parent = d;
	strcpy(cq.cq_name, "four");
	cq.cq_mode = S_IFREG | 0644;
	CU_ASSERT_EQUAL_FATAL(mds_ns_create(t_ns, &cq, &four, &a, &l), 0);
	CU_ASSERT_EQUAL(l.l_stripe_count, 4);
	for (int i = 0; i < 4; i++)
		CU_ASSERT(l.l_shards[i].ls_ost >= 10 &&
			  l.l_shards[i].ls_ost < 14);

	/* No OSTs; an erasure-coded template needing more OSTs than exist. */
	strcpy(cq.cq_name, "none");
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &none, &a, &l), -NC_E_NOOST);
	memset(&t, 0, sizeof(t));
	t.l_k = 4;
	t.l_m = 2;
	t.l_first_ost = NC_OST_ANY;
	CU_ASSERT_EQUAL_FATAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts,
					       &out), 0);
	strcpy(cq.cq_name, "ec");
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &four, &a, &l), -NC_E_LAYOUT);
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), 0);
	CU_ASSERT_EQUAL(l.l_k, 4);
	CU_ASSERT_EQUAL(l.l_m, 2);
	CU_ASSERT_EQUAL(l.l_stripe_count, 6);

	/* Invalid templates. */
	memset(&t, 0, sizeof(t));
	t.l_first_ost = NC_OST_ANY;
	t.l_stripe_size = 5000;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts, &out),
			-EINVAL);
	t.l_stripe_size = 2048;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts, &out),
			-EINVAL);
	t.l_stripe_size = 0;
	t.l_m = 5;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts, &out),
			-EINVAL);
	t.l_m = 0;
	t.l_k = 17;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts, &out),
			-EINVAL);
}

static void test_setlayout_file(void)
{
	struct nc_layout t, l0, l1;
	struct nc_attr a;
	struct nc_fid f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "f", S_IFREG | 0644,
				       &f), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &f, &l0), 0);
	memset(&t, 0, sizeof(t));
	t.l_stripe_count = 1;
	t.l_stripe_size = 4u << 20;
	t.l_first_ost = 3;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_user, &f, &t, &t_osts, &l1),
			-EPERM);
	CU_ASSERT_EQUAL_FATAL(mds_ns_setlayout(t_ns, &t_rootc, &f, &t, &t_osts,
					       &l1), 0);
	CU_ASSERT_EQUAL(l1.l_stripe_count, 1);
	CU_ASSERT_EQUAL(l1.l_stripe_size, 4u << 20);
	CU_ASSERT_EQUAL(l1.l_shards[0].ls_ost, 3);
	CU_ASSERT(l1.l_gen > l0.l_gen);
	CU_ASSERT(t_destroy_has(&f, NULL));
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &f, &l0), 0);
	CU_ASSERT(memcmp(&l0, &l1, sizeof(l0)) == 0);

	CU_ASSERT_EQUAL(mds_ns_size_update(t_ns, &f, 100, 0, &a), 0);
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &f, &t, &t_osts, &l1),
			-EBUSY);
}

static void test_size_update(void)
{
	struct nc_attr a, b;
	struct nc_fid f, d;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "f", S_IFREG | 0644,
				       &f), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0755,
				       &d), 0);
	CU_ASSERT_EQUAL(mds_ns_size_update(t_ns, &f, 1000, 0, &a), 0);
	CU_ASSERT_EQUAL(a.a_size, 1000);
	CU_ASSERT_EQUAL(a.a_blocks, 2);
	CU_ASSERT_EQUAL(mds_ns_size_update(t_ns, &f, 500, 0, &a), 0);
	CU_ASSERT_EQUAL(a.a_size, 1000);
	CU_ASSERT_EQUAL(mds_ns_size_update(t_ns, &f, 4096, NC_SIZE_MTIME, &b),
			0);
	CU_ASSERT_EQUAL(b.a_size, 4096);
	CU_ASSERT(b.a_mtime.t_sec > a.a_mtime.t_sec ||
		  (b.a_mtime.t_sec == a.a_mtime.t_sec &&
		   b.a_mtime.t_nsec >= a.a_mtime.t_nsec));
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &f, &a), 0);
	CU_ASSERT_EQUAL(a.a_size, 4096);
	CU_ASSERT_EQUAL(t_setattr(&t_rootc, &f, NC_SA_SIZE, 0, 0, 0, 10, &a),
			0);
	CU_ASSERT_EQUAL(a.a_size, 10);
	CU_ASSERT_EQUAL(mds_ns_size_update(t_ns, &d, 10, 0, &a), -EISDIR);
}

/* ---- migration ---- */

/* A MIGRATE request for @fid as @c; the data version from @a and @l. */
static void t_mig_init(struct nc_migrate_req *mg, const struct nc_cred *c,
		       const struct nc_fid *fid, uint32_t flags)
{
	memset(mg, 0, sizeof(*mg));
	mg->mg_cred = *c;
	mg->mg_fid = *fid;
	mg->mg_flags = flags;
	mg->mg_tmpl.l_flags = NC_LAYOUT_TEMPLATE;
	mg->mg_tmpl.l_first_ost = NC_OST_ANY;
}

static void t_mig_version(struct nc_migrate_req *mg, const struct nc_fid *fid)
{
	struct nc_layout l;
	struct nc_attr a;

	CU_ASSERT_EQUAL_FATAL(mds_ns_getattr(t_ns, fid, &a), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, fid, &l), 0);
	mg->mg_gen = l.l_gen;
	mg->mg_size = a.a_size;
	mg->mg_mtime = a.a_mtime;
	mg->mg_ctime = a.a_ctime;
}

static bool t_layout_uses(const struct nc_layout *l, uint32_t ost)
{
	for (uint32_t i = 0; i < l->l_stripe_count; i++)
		if (l->l_shards[i].ls_ost == ost)
			return true;
	return false;
}

/* The destroy queue record whose objects are named @obj. */
static int64_t t_destroy_not_before;

static bool t_destroy_has_obj(const struct nc_fid *fid, const struct nc_fid *obj,
			      struct nc_layout *l)
{
	struct mds_destroy_rec rec;
	uint64_t after = 0;

	while (mds_ns_destroy_next(t_ns, after, &rec) == 0) {
		if (nc_fid_eq(&rec.dr_fid, fid) &&
		    nc_fid_eq(nc_layout_obj_fid(&rec.dr_layout, &rec.dr_fid), obj)) {
			if (l)
				*l = rec.dr_layout;
			t_destroy_not_before = rec.dr_not_before;
			return true;
		}
		after = rec.dr_id;
	}
	return false;
}

/* The changelog holds exactly one record, of @type for @fid by @uid. */
static bool t_changelog_only(uint32_t type, const struct nc_fid *fid, uint32_t uid)
{
	struct nc_changelog_rec *r = calloc(8, sizeof(*r));
	uint64_t last = 0;
	uint32_t n = 0;
	bool ok;

	if (!r)
		return false;
	ok = mds_ns_changelog_read(t_ns, 0, r, 8, &n, &last) == 0 && n == 1 &&
	     r[0].cr_type == type && nc_fid_eq(&r[0].cr_fid, fid) && r[0].cr_uid == uid;
	free(r);
	return ok;
}

/* ALLOC lays out objects of their own away from the excluded OSTs; the
 * swap takes them only at the same data version (-EBUSY otherwise) and
 * queues the old objects for destruction; the caller needs write
 * permission. */
static void test_migrate_swap(void)
{
	struct nc_migrate_req mg;
	struct nc_layout l0, nl, l, q;
	struct mds_ost_set set = t_osts;
	struct nc_attr a;
	struct nc_fid f, d;
	uint32_t ex;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "f", S_IFREG | 0644, &f), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0755, &d), 0);
	CU_ASSERT_EQUAL_FATAL(t_setattr(&t_rootc, &f, NC_SA_UID | NC_SA_GID, 0, 1000, 1000, 0,
					NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_size_update(t_ns, &f, 100000, NC_SIZE_MTIME, &a), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &f, &l0), 0);
	CU_ASSERT_FALSE(l0.l_flags & NC_LAYOUT_OBJFID);
	ex = l0.l_shards[0].ls_ost;

	/* Write permission: another user may not; a directory is not moved. */
	t_mig_init(&mg, &t_other, &f, NC_MIGRATE_ALLOC);
	CU_ASSERT_EQUAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &nl), -EACCES);
	t_mig_init(&mg, &t_user, &d, NC_MIGRATE_ALLOC);
	CU_ASSERT_EQUAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &nl), -EISDIR);
	t_mig_init(&mg, &t_user, &f, NC_MIGRATE_ALLOC | 0x100);
	CU_ASSERT_EQUAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &nl), -EINVAL);

	/* ALLOC: new objects, named apart, none on the excluded OST. */
	mds_ost_set_exclude(&set, &ex, 1);
	CU_ASSERT_EQUAL(set.os_count, T_NOSTS - 1);
	t_mig_init(&mg, &t_user, &f, NC_MIGRATE_ALLOC);
	CU_ASSERT_EQUAL_FATAL(mds_ns_migrate(t_ns, &mg, &set, &a, &nl), 0);
	CU_ASSERT(nl.l_flags & NC_LAYOUT_OBJFID);
	CU_ASSERT_EQUAL(nl.l_obj.f_seq, NC_MIGRATE_FID_SEQ);
	CU_ASSERT_FALSE(t_layout_uses(&nl, ex));
	CU_ASSERT_EQUAL(nl.l_stripe_count, l0.l_stripe_count);
	CU_ASSERT_EQUAL(nl.l_k, l0.l_k);
	CU_ASSERT_EQUAL(nl.l_m, l0.l_m);
	/* ... and the file is as it was. */
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &f, &l), 0);
	CU_ASSERT(memcmp(&l, &l0, sizeof(l)) == 0);

	/* A write after the copy started: the swap is refused, nothing moves. */
	t_mig_init(&mg, &t_user, &f, 0);
	t_mig_version(&mg, &f);
	mg.mg_layout = nl;
	CU_ASSERT_EQUAL_FATAL(mds_ns_size_update(t_ns, &f, 200000, NC_SIZE_MTIME, &a), 0);
	CU_ASSERT_EQUAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &l), -EBUSY);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &f, &l), 0);
	CU_ASSERT(memcmp(&l, &l0, sizeof(l)) == 0);
	CU_ASSERT_FALSE(t_destroy_has(&f, NULL));
	/* Permission is checked at the swap too. */
	t_mig_version(&mg, &f);
	mg.mg_cred = t_other;
	CU_ASSERT_EQUAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &l), -EACCES);

	/* At the current version the swap goes through, once; the old
	 * objects stay for the grace asked for. */
	mg.mg_cred = t_user;
	mg.mg_grace = 300;
	mds_ns_changelog_enable(t_ns, true);
	CU_ASSERT_EQUAL_FATAL(mds_ns_migrate(t_ns, &mg, &t_osts, &a, &l), 0);
	/* The changelog shows the swap as a layout change. */
	CU_ASSERT(t_changelog_only(NC_CL_LAYOUT, &f, t_user.c_uid));
	CU_ASSERT_EQUAL(a.a_size, 200000);
	CU_ASSERT(a.a_ctime.t_sec > mg.mg_ctime.t_sec ||
		  (a.a_ctime.t_sec == mg.mg_ctime.t_sec && a.a_ctime.t_nsec >= mg.mg_ctime.t_nsec));
	CU_ASSERT(l.l_flags & NC_LAYOUT_OBJFID);
	CU_ASSERT(nc_fid_eq(&l.l_obj, &nl.l_obj));
	CU_ASSERT_EQUAL(l.l_gen, l0.l_gen + 1);
	CU_ASSERT_FALSE(t_layout_uses(&l, ex));
	CU_ASSERT(t_destroy_has_obj(&f, &f, &q));
	CU_ASSERT(t_destroy_not_before >= (int64_t)time(NULL) + 290);
	CU_ASSERT_EQUAL(q.l_stripe_count, l0.l_stripe_count);
	CU_ASSERT(t_layout_uses(&q, ex));
	CU_ASSERT_EQUAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &l), -ESTALE);

	/* The new layout survives a restart. */
	t_reopen();
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &f, &l), 0);
	CU_ASSERT(l.l_flags & NC_LAYOUT_OBJFID);
	CU_ASSERT(nc_fid_eq(&l.l_obj, &nl.l_obj));
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &f, &a), 0);
	CU_ASSERT_EQUAL(a.a_size, 200000);
}

/* A migration whose client never swaps expires: its objects go to the
 * destroy queue and the swap is refused afterwards; newer ones stay. */
static void test_migrate_expire(void)
{
	struct nc_migrate_req mg;
	struct nc_layout nl, nl2, l, q;
	uint64_t n = 99;
	struct nc_fid f;

	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "abandoned", S_IFREG | 0644, &f), 0);
	t_mig_init(&mg, &t_rootc, &f, NC_MIGRATE_ALLOC);
	CU_ASSERT_EQUAL_FATAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &nl), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &nl2), 0);
	/* Nothing is older than an hour ago. */
	CU_ASSERT_EQUAL(mds_ns_migrate_expire(t_ns, (int64_t)time(NULL) - 3600, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_FALSE(t_destroy_has_obj(&f, &nl.l_obj, NULL));
	/* Both are older than a minute from now. */
	CU_ASSERT_EQUAL(mds_ns_migrate_expire(t_ns, (int64_t)time(NULL) + 60, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT(t_destroy_has_obj(&f, &nl.l_obj, &q));
	CU_ASSERT_EQUAL(q.l_stripe_count, nl.l_stripe_count);
	CU_ASSERT(t_destroy_has_obj(&f, &nl2.l_obj, NULL));
	t_mig_init(&mg, &t_rootc, &f, 0);
	t_mig_version(&mg, &f);
	mg.mg_layout = nl;
	CU_ASSERT_EQUAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &l), -ESTALE);
	CU_ASSERT_EQUAL(mds_ns_migrate_expire(t_ns, (int64_t)time(NULL) + 60, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
}

/*
 * Reply records: one per (client, slot), found only for the request id
 * they hold, a newer id replaces them, an older one is a stray; they
 * survive a restart, and expiry removes the old ones only.
 */
static void test_reply_records(void)
{
	static const uint8_t ca[16] = { 1, 2, 3 }, cb[16] = { 9, 8, 7 };
	uint8_t body[300];
	struct mds_reply_rec rec = {
		.rr_seq = 41, .rr_opcode = NC_OP_CREATE, .rr_len = sizeof(body), .rr_body = body,
	};
	struct mds_reply_rec got;
	uint64_t removed = 99;

	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)(i * 7 + 1);
	CU_ASSERT_EQUAL(mds_ns_reply_find(t_ns, ca, 0, 41, &got), -ENOENT);
	CU_ASSERT_EQUAL_FATAL(mds_ns_reply_save(t_ns, ca, 0, &rec), 0);
	/* An error reply keeps its status and no body. */
	rec.rr_seq = 7;
	rec.rr_opcode = NC_OP_UNLINK;
	rec.rr_status = -ENOTEMPTY;
	CU_ASSERT_EQUAL_FATAL(mds_ns_reply_save(t_ns, ca, 63, &rec), 0);

	CU_ASSERT_EQUAL_FATAL(mds_ns_reply_find(t_ns, ca, 0, 41, &got), 0);
	CU_ASSERT_EQUAL(got.rr_seq, 41);
	CU_ASSERT_EQUAL(got.rr_opcode, NC_OP_CREATE);
	CU_ASSERT_EQUAL(got.rr_status, 0);
	CU_ASSERT_EQUAL_FATAL(got.rr_len, sizeof(body));
	CU_ASSERT(memcmp(got.rr_body, body, sizeof(body)) == 0);
	free(got.rr_body);
	/* Other ids, slots and clients. */
	CU_ASSERT_EQUAL(mds_ns_reply_find(t_ns, ca, 0, 42, &got), -ENOENT);
	CU_ASSERT_EQUAL(mds_ns_reply_find(t_ns, ca, 0, 40, &got), -ESTALE);
	CU_ASSERT_EQUAL(mds_ns_reply_find(t_ns, ca, 1, 41, &got), -ENOENT);
	CU_ASSERT_EQUAL(mds_ns_reply_find(t_ns, cb, 0, 41, &got), -ENOENT);

	/* Kept across a restart. */
	t_reopen();
	CU_ASSERT_EQUAL_FATAL(mds_ns_reply_find(t_ns, ca, 63, 7, &got), 0);
	CU_ASSERT_EQUAL(got.rr_opcode, NC_OP_UNLINK);
	CU_ASSERT_EQUAL(got.rr_status, -ENOTEMPTY);
	CU_ASSERT_EQUAL(got.rr_len, 0);
	CU_ASSERT_PTR_NULL(got.rr_body);

	/* A later request of the slot replaces the record. */
	rec.rr_seq = 50;
	rec.rr_opcode = NC_OP_RENAME;
	rec.rr_status = 0;
	rec.rr_len = 3;
	CU_ASSERT_EQUAL_FATAL(mds_ns_reply_save(t_ns, ca, 0, &rec), 0);
	CU_ASSERT_EQUAL(mds_ns_reply_find(t_ns, ca, 0, 41, &got), -ESTALE);
	CU_ASSERT_EQUAL_FATAL(mds_ns_reply_find(t_ns, ca, 0, 50, &got), 0);
	CU_ASSERT_EQUAL(got.rr_len, 3);
	free(got.rr_body);

	/* Expiry: nothing is older than an hour ago; everything is older
	 * than a minute from now. */
	CU_ASSERT_EQUAL(mds_ns_reply_expire(t_ns, (int64_t)time(NULL) - 3600, &removed), 0);
	CU_ASSERT_EQUAL(removed, 0);
	CU_ASSERT_EQUAL(mds_ns_reply_find(t_ns, ca, 0, 50, &got), 0);
	free(got.rr_body);
	CU_ASSERT_EQUAL(mds_ns_reply_expire(t_ns, (int64_t)time(NULL) + 60, &removed), 0);
	CU_ASSERT_EQUAL(removed, 2);
	CU_ASSERT_EQUAL(mds_ns_reply_find(t_ns, ca, 0, 50, &got), -ENOENT);
	CU_ASSERT_EQUAL(mds_ns_reply_find(t_ns, ca, 63, 7, &got), -ENOENT);
}

/* The geometry: given (2+1 over 3), or kept with fewer data chunks when
 * the OSTs left cannot hold it; ABORT queues the pending objects; a
 * pending migration of one file cannot be used for another. */
static void test_migrate_geometry_abort(void)
{
	struct nc_migrate_req mg;
	struct nc_layout t, nl, l, q;
	struct mds_ost_set set = t_osts;
	uint32_t ex[3] = { 0, 1, 2 };
	struct nc_fid f, g;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "f", S_IFREG | 0644, &f), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "g", S_IFREG | 0644, &g), 0);
	memset(&t, 0, sizeof(t));
	t.l_k = 4;
	t.l_m = 2;
	t.l_stripe_count = 6;
	t.l_first_ost = NC_OST_ANY;
	CU_ASSERT_EQUAL_FATAL(mds_ns_setlayout(t_ns, &t_rootc, &f, &t, &t_osts, &l), 0);
	CU_ASSERT_EQUAL_FATAL(l.l_m, 2);

	t_mig_init(&mg, &t_rootc, &f, NC_MIGRATE_ALLOC | NC_MIGRATE_GEOMETRY);
	mg.mg_tmpl.l_k = 2;
	mg.mg_tmpl.l_m = 1;
	mg.mg_tmpl.l_stripe_count = 3;
	CU_ASSERT_EQUAL_FATAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &nl), 0);
	CU_ASSERT_EQUAL(nl.l_k, 2);
	CU_ASSERT_EQUAL(nl.l_m, 1);
	CU_ASSERT_EQUAL(nl.l_stripe_count, 3);

	/* Another file cannot take this file's pending objects. */
	t_mig_init(&mg, &t_rootc, &g, 0);
	t_mig_version(&mg, &g);
	mg.mg_layout = nl;
	CU_ASSERT_EQUAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &l), -EINVAL);
	/* ABORT: the pending objects go to the destroy queue, once. */
	t_mig_init(&mg, &t_rootc, &f, NC_MIGRATE_ABORT);
	mg.mg_layout = nl;
	CU_ASSERT_EQUAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &l), 0);
	CU_ASSERT(t_destroy_has_obj(&f, &nl.l_obj, &q));
	CU_ASSERT_EQUAL(q.l_stripe_count, 3);
	CU_ASSERT_EQUAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &l), -ESTALE);
	t_mig_init(&mg, &t_rootc, &f, 0);
	t_mig_version(&mg, &f);
	mg.mg_layout = nl;
	CU_ASSERT_EQUAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &l), -ESTALE);

	/* 4+2 kept on the 5 OSTs left: 3+2. */
	mds_ost_set_exclude(&set, ex, 3);
	CU_ASSERT_EQUAL(set.os_count, T_NOSTS - 3);
	t_mig_init(&mg, &t_rootc, &f, NC_MIGRATE_ALLOC);
	CU_ASSERT_EQUAL_FATAL(mds_ns_migrate(t_ns, &mg, &set, NULL, &nl), 0);
	CU_ASSERT_EQUAL(nl.l_k, 3);
	CU_ASSERT_EQUAL(nl.l_m, 2);
	CU_ASSERT_EQUAL(nl.l_stripe_count, 5);
	for (uint32_t i = 0; i < 3; i++)
		CU_ASSERT_FALSE(t_layout_uses(&nl, ex[i]));
}

/* PACK_ALLOC's avoid list: the OSTs a client found not answering count
 * as down for the new pack, unless no layout would be left. */
static void test_pack_avoid(void)
{
	const uint32_t avoid[] = { 2, 5, 77 };
	uint32_t all[T_NOSTS];
	struct mds_ost_set set;
	struct nc_layout l;
	struct nc_fid none = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	set = t_osts;
	mds_ost_set_avoid(&set, avoid, 3);
	CU_ASSERT_EQUAL(set.os_count, T_NOSTS - 2);
	CU_ASSERT_EQUAL(set.os_ndown, 2);
	/* Every pack over the 6 OSTs left, whichever OST the turn starts at. */
	for (int i = 0; i < 2 * T_NOSTS; i++) {
		CU_ASSERT_EQUAL_FATAL(mds_ns_pack_alloc(t_ns, &t_rootc, &none, &t_osts, avoid, 3,
							&l), 0);
	CU_ASSERT_EQUAL(l.l_stripe_count, 6);
		CU_ASSERT_FALSE(t_layout_uses(&l, 2));
		CU_ASSERT_FALSE(t_layout_uses(&l, 5));
	}
	/* Avoiding every OST avoids none: a pack, over all of them. */
	for (uint32_t i = 0; i < T_NOSTS; i++)
		all[i] = i;
	set = t_osts;
	mds_ost_set_avoid(&set, all, T_NOSTS);
	CU_ASSERT_EQUAL(set.os_count, T_NOSTS);
	CU_ASSERT_EQUAL(set.os_ndown, 0);
	CU_ASSERT_EQUAL(mds_ns_pack_alloc(t_ns, &t_rootc, &none, &t_osts, all, T_NOSTS, &l), 0);
	CU_ASSERT_EQUAL(l.l_stripe_count, 6);
	/* Avoiding all but 3: as with 3 OSTs up, striped plainly over them. */
	CU_ASSERT_EQUAL(mds_ns_pack_alloc(t_ns, &t_rootc, &none, &t_osts, all, T_NOSTS - 3, &l),
			0);
	CU_ASSERT_EQUAL(l.l_stripe_count, 3);
	CU_ASSERT_EQUAL(l.l_m, 0);
	for (uint32_t i = 0; i < T_NOSTS - 3; i++)
		CU_ASSERT_FALSE(t_layout_uses(&l, i));
}

/* PACK_ALLOC with a layout: a pack of that stripe size, count and coding
 * (files moved or rewritten keep theirs), whatever the default. */
static void test_pack_alloc_like(void)
{
	struct nc_layout want, l;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	memset(&want, 0, sizeof(want));
	want.l_flags = NC_LAYOUT_TEMPLATE;
	want.l_first_ost = NC_OST_ANY;
	want.l_stripe_size = 1u << 20;
	want.l_stripe_count = 3;
	want.l_k = 2;
	want.l_m = 1;
	CU_ASSERT_EQUAL_FATAL(mds_ns_pack_alloc_like(t_ns, &want, &t_osts, NULL, 0, &l), 0);
	CU_ASSERT_EQUAL(l.l_stripe_count, 3);
	CU_ASSERT_EQUAL(l.l_k, 2);
	CU_ASSERT_EQUAL(l.l_m, 1);
	CU_ASSERT_EQUAL(l.l_stripe_size, 1u << 20);
	CU_ASSERT(l.l_pack_id > 0);
	/* Plain striping over 4 (k = count, m = 0, as a file's layout says). */
	want.l_stripe_count = 4;
	want.l_k = 4;
	want.l_m = 0;
	CU_ASSERT_EQUAL_FATAL(mds_ns_pack_alloc_like(t_ns, &want, &t_osts, NULL, 0, &l), 0);
	CU_ASSERT_EQUAL(l.l_stripe_count, 4);
	CU_ASSERT_EQUAL(l.l_m, 0);
	/* A coding no file can have is refused, not stretched. */
	want.l_k = 2;
	want.l_m = 40;
	CU_ASSERT_EQUAL(mds_ns_pack_alloc_like(t_ns, &want, &t_osts, NULL, 0, &l), -NC_E_LAYOUT);
	want.l_m = 1;
	want.l_stripe_size = 3;
	CU_ASSERT_EQUAL(mds_ns_pack_alloc_like(t_ns, &want, &t_osts, NULL, 0, &l), -NC_E_LAYOUT);
}

/* A writer that opened the file (with the old layout) shortly before the
 * swap could report its bytes after it: the swap waits for quiet. */
static void test_migrate_quiet(void)
{
	struct nc_migrate_req mg;
	struct nc_layout nl, l;
	struct nc_attr a;
	struct nc_fid f;
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "f", S_IFREG | 0644, &f), 0);
	mds_ns_set_migrate_quiet(t_ns, 300);
	t_mig_init(&mg, &t_rootc, &f, NC_MIGRATE_ALLOC);
	CU_ASSERT_EQUAL_FATAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &nl), 0);
	usleep(400 * 1000);
	/* A write open, nothing written yet: the data version is the same. */
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_rootc, &f, NC_OPEN_WRITE, &a, &l, NULL), 0);
	t_mig_init(&mg, &t_rootc, &f, 0);
	t_mig_version(&mg, &f);
	mg.mg_layout = nl;
	CU_ASSERT_EQUAL(mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &l), -EBUSY);
	/* A read open does not count. */
	usleep(400 * 1000);
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_rootc, &f, NC_OPEN_READ, &a, &l, NULL), 0);
	rc = mds_ns_migrate(t_ns, &mg, &t_osts, NULL, &l);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT(l.l_flags & NC_LAYOUT_OBJFID);
}

static void test_durability(void)
{
	struct nc_fid d, f, g;
	struct nc_ost_info o, list[4];
	struct nc_attr a;
	char buf[16];
	uint32_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0750,
				       &d), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d, "f", S_IFREG | 0640, &f),
			      0);
	CU_ASSERT_EQUAL(mds_ns_size_update(t_ns, &f, 12345, 0, &a), 0);
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_rootc, &f, "user.k", "val", 3,
					 0), 0);
	memset(&o, 0, sizeof(o));
	o.o_index = 2;
	o.o_uuid[0] = 9;
	strcpy(o.o_addr, "tcp://127.0.0.1:7002");
	CU_ASSERT_EQUAL(mds_ns_ost_register(t_ns, &o), 0);

	t_reopen();
	CU_ASSERT_STRING_EQUAL(mds_ns_fsname(t_ns), "testfs");
	CU_ASSERT(t_lookup_is(&t_root, "d", &d));
	CU_ASSERT(t_lookup_is(&d, "f", &f));
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &f, &a), 0);
	CU_ASSERT_EQUAL(a.a_size, 12345);
	CU_ASSERT_EQUAL(a.a_mode & 07777, 0640);
	CU_ASSERT_EQUAL(t_nlink(&t_root), 3);
	CU_ASSERT_EQUAL(mds_ns_xattr_get(t_ns, &t_rootc, &f, "user.k", buf,
					 sizeof(buf)), 3);
	CU_ASSERT_EQUAL(mds_ns_ost_list(t_ns, list, 4, &n), 0);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_STRING_EQUAL(list[0].o_addr, "tcp://127.0.0.1:7002");
	/* The FID counter survives: no FID is handed out twice. */
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d, "g", S_IFREG | 0640, &g),
			      0);
	CU_ASSERT(g.f_oid > f.f_oid);
}

static void test_ost_table(void)
{
	struct nc_ost_info o, list[8];
	uint32_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL(mds_ns_ost_list(t_ns, list, 8, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	memset(&o, 0, sizeof(o));
	o.o_index = 3;
	memset(o.o_uuid, 0xaa, 16);
	strcpy(o.o_addr, "tcp://127.0.0.1:7003");
	CU_ASSERT_EQUAL(mds_ns_ost_register(t_ns, &o), 0);
	CU_ASSERT_EQUAL(mds_ns_ost_register(t_ns, &o), 0);
	strcpy(o.o_addr, "tcp://127.0.0.1:8003");
	CU_ASSERT_EQUAL(mds_ns_ost_register(t_ns, &o), 0);
	o.o_uuid[0] = 0xbb;
	CU_ASSERT_EQUAL(mds_ns_ost_register(t_ns, &o), -EEXIST);
	/* The same target may not claim a second index. */
	memset(o.o_uuid, 0xaa, 16);
	o.o_index = 5;
	CU_ASSERT_EQUAL(mds_ns_ost_register(t_ns, &o), -EEXIST);
	o.o_index = 1;
	memset(o.o_uuid, 0xcc, 16);
	strcpy(o.o_addr, "tcp://127.0.0.1:7001");
	CU_ASSERT_EQUAL(mds_ns_ost_register(t_ns, &o), 0);
	o.o_addr[0] = '\0';
	o.o_index = 6;
	CU_ASSERT_EQUAL(mds_ns_ost_register(t_ns, &o), -EINVAL);

	CU_ASSERT_EQUAL(mds_ns_ost_list(t_ns, list, 8, &n), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(list[0].o_index, 1);
	CU_ASSERT_STRING_EQUAL(list[0].o_addr, "tcp://127.0.0.1:7001");
	CU_ASSERT_EQUAL(list[0].o_uuid[0], 0xcc);
	CU_ASSERT_EQUAL(list[1].o_index, 3);
	CU_ASSERT_STRING_EQUAL(list[1].o_addr, "tcp://127.0.0.1:8003");
	CU_ASSERT_EQUAL(list[1].o_uuid[5], 0xaa);
	CU_ASSERT_EQUAL(mds_ns_ost_list(t_ns, list, 1, &n), -ERANGE);
}

/* ---- OST administration and pools ---- */

static void t_ost_info(struct nc_ost_info *o, uint32_t idx, unsigned int port)
{
	memset(o, 0, sizeof(*o));
	o->o_index = idx;
	o->o_state = NC_OST_UP;
	memset(o->o_uuid, 0x40 + (int)idx, sizeof(o->o_uuid));
	snprintf(o->o_addr, sizeof(o->o_addr), "tcp://127.0.0.1:%u", port);
}

/* An MDS (not serving: no threads) over the MDT t_base/srv. */
static struct mds_server *t_server(void)
{
	static char dir[PATH_MAX + 8];
	struct mds_conf mc = { 0 };
	struct mds_server *mds = NULL;

	snprintf(dir, sizeof(dir), "%s/srv", t_base);
	mc.mc_dir = dir;
	mc.mc_fsname = "testfs";
	mc.mc_listen = "tcp://127.0.0.1:0";
	mc.mc_format = true;
	mc.mc_map_size = T_MAP_SIZE;
	mc.mc_pack_gc_interval_ms = -1;
	if (mds_server_new(&mc, &mds))
		return NULL;
	return mds;
}

/* Creates @n files in the root of @ns over @set; true when none has a
 * shard on OST @ost (@want_on: when every file has one there). */
static bool t_files_avoid(struct mds_ns *ns, const struct mds_ost_set *set, const char *prefix,
			  int n, uint32_t ost, bool want_on)
{
	for (int i = 0; i < n; i++) {
		struct nc_create_req cq;
		struct nc_layout l;
		struct nc_attr a;
		bool on = false;

		memset(&cq, 0, sizeof(cq));
		cq.cq_cred = t_rootc;
		cq.cq_parent = t_root;
		snprintf(cq.cq_name, sizeof(cq.cq_name), "%s%d", prefix, i);
		cq.cq_mode = S_IFREG | 0644;
		cq.cq_flags = NC_CREATE_EXCL;
		if (mds_ns_create(ns, &cq, set, &a, &l))
			return false;
		if (l.l_stripe_count == 0)
			return false;
		for (uint32_t s = 0; s < l.l_stripe_count; s++)
			if (l.l_shards[s].ls_ost == ost)
				on = true;
		if (on != want_on)
			return false;
	}
	return true;
}

static bool t_set_has(const struct mds_ost_set *set, uint32_t idx)
{
	for (uint32_t i = 0; i < set->os_count; i++)
		if (set->os_index[i] == idx)
			return true;
	for (uint32_t i = 0; i < set->os_ndown; i++)
		if (set->os_down[i] == idx)
			return true;
	return false;
}

static void test_ost_deactivate(void)
{
	struct mds_ost_set *set = calloc(1, sizeof(*set));
	struct nc_ost_list_rep *rep = calloc(1, sizeof(*rep));
	struct mds_server *mds;
	struct nc_ost_info o;

	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
	mds = t_server();
	CU_ASSERT_PTR_NOT_NULL_FATAL(mds);
	for (uint32_t i = 0; i < 6; i++) {
		t_ost_info(&o, i, 7100 + i);
		CU_ASSERT_EQUAL(mds_server_ost_register(mds, &o, 1), 0);
	}
	/* Only root; only known OSTs; only the two operations. */
	CU_ASSERT_EQUAL(mds_server_ost_admin(mds, &t_user, 2, NC_OSTADM_DEACTIVATE), -EPERM);
	CU_ASSERT_EQUAL(mds_server_ost_admin(mds, &t_rootc, 9, NC_OSTADM_DEACTIVATE), -ENODEV);
	CU_ASSERT_EQUAL(mds_server_ost_admin(mds, &t_rootc, NC_MAX_OSTS, NC_OSTADM_DEACTIVATE),
			-ENODEV);
	CU_ASSERT_EQUAL(mds_server_ost_admin(mds, &t_rootc, 2, 77), -EINVAL);
	mds_server_ost_set(mds, set);
	CU_ASSERT_TRUE(t_set_has(set, 2));

	CU_ASSERT_EQUAL(mds_server_ost_admin(mds, &t_rootc, 2, NC_OSTADM_DEACTIVATE), 0);
	CU_ASSERT_EQUAL(mds_server_ost_admin(mds, &t_rootc, 2, NC_OSTADM_DEACTIVATE), 0);
	mds_server_ost_set(mds, set);
	CU_ASSERT_EQUAL(set->os_count, 5);
	CU_ASSERT_FALSE(t_set_has(set, 2));
	CU_ASSERT_TRUE(t_files_avoid(mds_server_ns(mds), set, "a", 30, 2, false));
	mds_server_ost_list(mds, rep);
	CU_ASSERT_EQUAL_FATAL(rep->ol_count, 6);
	CU_ASSERT_EQUAL(rep->ol_osts[2].o_state, NC_OST_UP | NC_OST_INACTIVE);
	CU_ASSERT_EQUAL(rep->ol_osts[3].o_state, NC_OST_UP);

	/* The OSS registers again (restart, new port): still inactive. */
	t_ost_info(&o, 2, 7202);
	CU_ASSERT_EQUAL(mds_server_ost_register(mds, &o, 2), 0);
	mds_server_ost_set(mds, set);
	CU_ASSERT_FALSE(t_set_has(set, 2));
	/* ... also when it comes back as a replacement (new uuid). */
	o.o_uuid[0] = 0x99;
	o.o_state = NC_OST_UP | NC_OSTREG_REPLACE;
	CU_ASSERT_EQUAL(mds_server_ost_register(mds, &o, 3), 0);
	mds_server_ost_set(mds, set);
	CU_ASSERT_FALSE(t_set_has(set, 2));

	/* A restarted MDS reads the state back from the MDT. */
	mds_server_free(mds);
	mds = t_server();
	CU_ASSERT_PTR_NOT_NULL_FATAL(mds);
	mds_server_ost_list(mds, rep);
	CU_ASSERT_EQUAL_FATAL(rep->ol_count, 6);
	CU_ASSERT_EQUAL(rep->ol_osts[2].o_state, NC_OST_DOWN | NC_OST_INACTIVE);
	CU_ASSERT_STRING_EQUAL(rep->ol_osts[2].o_addr, "tcp://127.0.0.1:7202");
	for (uint32_t i = 0; i < 6; i++) {
		t_ost_info(&o, i, i == 2 ? 7202 : 7100 + i);
		if (i == 2)
			o.o_uuid[0] = 0x99;
		CU_ASSERT_EQUAL(mds_server_ost_register(mds, &o, 4), 0);
	}
	mds_server_ost_set(mds, set);
	CU_ASSERT_EQUAL(set->os_count, 5);
	CU_ASSERT_FALSE(t_set_has(set, 2));
	CU_ASSERT_TRUE(t_files_avoid(mds_server_ns(mds), set, "b", 30, 2, false));

	/* Activated again: the next layouts use it (6 OSTs, 4+2 over 6). */
	CU_ASSERT_EQUAL(mds_server_ost_admin(mds, &t_user, 2, NC_OSTADM_ACTIVATE), -EPERM);
	CU_ASSERT_EQUAL(mds_server_ost_admin(mds, &t_rootc, 2, NC_OSTADM_ACTIVATE), 0);
	mds_server_ost_set(mds, set);
	CU_ASSERT_EQUAL(set->os_count, 6);
	CU_ASSERT_TRUE(t_files_avoid(mds_server_ns(mds), set, "c", 10, 2, true));
	mds_server_free(mds);
	free(rep);
	free(set);
}

/* The OST record keeps the state through mds/ns.h alone too. */
static void test_ost_inactive_record(void)
{
	struct nc_ost_info o, list[4];
	uint32_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	t_ost_info(&o, 1, 7001);
	CU_ASSERT_EQUAL(mds_ns_ost_register(t_ns, &o), 0);
	CU_ASSERT_EQUAL(mds_ns_ost_set_active(t_ns, &t_other, 1, false), -EPERM);
	CU_ASSERT_EQUAL(mds_ns_ost_set_active(t_ns, &t_rootc, 3, false), -ENODEV);
	CU_ASSERT_EQUAL(mds_ns_ost_set_active(t_ns, &t_rootc, 1, false), 0);
	t_ost_info(&o, 1, 7011);
	CU_ASSERT_EQUAL(mds_ns_ost_register(t_ns, &o), 0);
	t_reopen();
	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL(mds_ns_ost_list(t_ns, list, 4, &n), 0);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(list[0].o_state, NC_OST_INACTIVE);
	CU_ASSERT_FALSE(mds_ost_is_eligible(&list[0]));
	CU_ASSERT_STRING_EQUAL(list[0].o_addr, "tcp://127.0.0.1:7011");
	CU_ASSERT_EQUAL(mds_ns_ost_set_active(t_ns, &t_rootc, 1, true), 0);
	CU_ASSERT_EQUAL(mds_ns_ost_list(t_ns, list, 4, &n), 0);
	CU_ASSERT_EQUAL(list[0].o_state, NC_OST_DOWN);
	CU_ASSERT_TRUE(mds_ost_is_eligible(&list[0]));
}

static void t_register_all(void)
{
	struct nc_ost_info o;

	for (uint32_t i = 0; i < T_NOSTS; i++) {
		t_ost_info(&o, i, 7000 + i);
		CU_ASSERT_EQUAL(mds_ns_ost_register(t_ns, &o), 0);
	}
}

static void test_pool_admin(void)
{
	struct nc_pool_list_rep *rep = calloc(1, sizeof(*rep));
	uint32_t idx[3] = { 5, 1, 3 }, bad = 0, nine = 9;
	char name[32];

	CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	t_register_all();
	CU_ASSERT_EQUAL(mds_ns_pool_create(t_ns, &t_user, "fast"), -EPERM);
	CU_ASSERT_EQUAL(mds_ns_pool_create(t_ns, &t_rootc, "bad name"), -EINVAL);
	CU_ASSERT_EQUAL(mds_ns_pool_create(t_ns, &t_rootc, "sixteen-chars-xx"), -EINVAL);
	CU_ASSERT_EQUAL(mds_ns_pool_create(t_ns, &t_rootc, ""), -EINVAL);
	CU_ASSERT_EQUAL(mds_ns_pool_create(t_ns, &t_rootc, "fast"), 0);
	CU_ASSERT_EQUAL(mds_ns_pool_create(t_ns, &t_rootc, "fast"), -EEXIST);
	CU_ASSERT_EQUAL(mds_ns_pool_add(t_ns, &t_user, "fast", idx, 3, &bad), -EPERM);
	CU_ASSERT_EQUAL(mds_ns_pool_add(t_ns, &t_rootc, "slow", idx, 3, &bad), -ENOENT);
	CU_ASSERT_EQUAL(mds_ns_pool_add(t_ns, &t_rootc, "fast", &nine, 1, &bad), -ENODEV);
	CU_ASSERT_EQUAL(bad, 9);
	CU_ASSERT_EQUAL(mds_ns_pool_add(t_ns, &t_rootc, "fast", idx, 3, &bad), 0);
	/* All or nothing: 1 is there already, so 7 is not added either. */
	idx[0] = 7;
	CU_ASSERT_EQUAL(mds_ns_pool_add(t_ns, &t_rootc, "fast", idx, 2, &bad), -EEXIST);
	CU_ASSERT_EQUAL(bad, 1);
	CU_ASSERT_EQUAL(mds_ns_pool_list(t_ns, "fast", rep), 0);
	CU_ASSERT_EQUAL_FATAL(rep->pl_count, 1);
	CU_ASSERT_STRING_EQUAL(rep->pl_pools[0].pi_name, "fast");
	CU_ASSERT_EQUAL_FATAL(rep->pl_pools[0].pi_count, 3);
	CU_ASSERT_EQUAL(rep->pl_pools[0].pi_osts[0], 1);
	CU_ASSERT_EQUAL(rep->pl_pools[0].pi_osts[1], 3);
	CU_ASSERT_EQUAL(rep->pl_pools[0].pi_osts[2], 5);
	CU_ASSERT_EQUAL(mds_ns_pool_list(t_ns, "nope", rep), -ENOENT);
	CU_ASSERT_EQUAL(mds_ns_pool_destroy(t_ns, &t_rootc, "fast"), -ENOTEMPTY);
	CU_ASSERT_EQUAL(mds_ns_pool_destroy(t_ns, &t_user, "fast"), -EPERM);
	idx[0] = 5;
	CU_ASSERT_EQUAL(mds_ns_pool_remove(t_ns, &t_rootc, "fast", &nine, 1, &bad), -ENOENT);
	CU_ASSERT_EQUAL(mds_ns_pool_remove(t_ns, &t_user, "fast", idx, 1, &bad), -EPERM);
	CU_ASSERT_EQUAL(mds_ns_pool_remove(t_ns, &t_rootc, "fast", idx, 1, &bad), 0);
	CU_ASSERT_EQUAL(mds_ns_pool_create(t_ns, &t_rootc, "a.b_c-1"), 0);
	t_reopen();
	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL(mds_ns_pool_list(t_ns, "", rep), 0);
	CU_ASSERT_EQUAL_FATAL(rep->pl_count, 2);
	CU_ASSERT_STRING_EQUAL(rep->pl_pools[0].pi_name, "a.b_c-1");
	CU_ASSERT_EQUAL(rep->pl_pools[0].pi_count, 0);
	CU_ASSERT_STRING_EQUAL(rep->pl_pools[1].pi_name, "fast");
	CU_ASSERT_EQUAL(rep->pl_pools[1].pi_count, 2);
	idx[0] = 1;
	idx[1] = 3;
	CU_ASSERT_EQUAL(mds_ns_pool_remove(t_ns, &t_rootc, "fast", idx, 2, &bad), 0);
	CU_ASSERT_EQUAL(mds_ns_pool_destroy(t_ns, &t_rootc, "fast"), 0);
	CU_ASSERT_EQUAL(mds_ns_pool_destroy(t_ns, &t_rootc, "fast"), -ENOENT);
	/* At most NC_POOLS_MAX pools. */
	for (int i = 1; i < NC_POOLS_MAX; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		CU_ASSERT_EQUAL(mds_ns_pool_create(t_ns, &t_rootc, name), 0);
	}
	CU_ASSERT_EQUAL(mds_ns_pool_create(t_ns, &t_rootc, "onemore"), -ENOSPC);
	free(rep);
}

/* A directory naming a pool lays its files out over the pool's OSTs only
 * (those the MDS offers: inactive ones are not in the set), its
 * subdirectories inherit it, and clearing it widens again. */
static void test_pool_layout(void)
{
	struct nc_layout req, out;
	struct nc_fid dir, sub, f;
	uint32_t idx[2] = { 2, 6 }, bad;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	t_register_all();
	CU_ASSERT_EQUAL(mds_ns_pool_create(t_ns, &t_rootc, "two"), 0);
	CU_ASSERT_EQUAL(mds_ns_pool_add(t_ns, &t_rootc, "two", idx, 2, &bad), 0);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0755, &dir), 0);

	memset(&req, 0, sizeof(req));
	req.l_first_ost = NC_OST_ANY;
	req.l_flags = NC_LAYOUT_TEMPLATE | NC_LAYOUT_POOL;
	strcpy(req.l_pool, "nope");
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &dir, &req, &t_osts, &out), -ENOENT);
	strcpy(req.l_pool, "a b");
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &dir, &req, &t_osts, &out), -EINVAL);
	strcpy(req.l_pool, "two");
	req.l_stripe_count = UINT16_MAX;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &dir, &req, &t_osts, &out), 0);
	CU_ASSERT_EQUAL(mds_ns_getlayout(t_ns, &dir, &out), 0);
	CU_ASSERT_TRUE(out.l_flags & NC_LAYOUT_POOL);
	CU_ASSERT_STRING_EQUAL(out.l_pool, "two");
	CU_ASSERT_EQUAL(t_create(&t_rootc, &dir, "sub", S_IFDIR | 0755, &sub), 0);

	for (int i = 0; i < 20; i++) {
		struct nc_create_req cq;
		struct nc_attr a;

		memset(&cq, 0, sizeof(cq));
		cq.cq_cred = t_rootc;
		cq.cq_parent = i % 2 ? sub : dir;
		snprintf(cq.cq_name, sizeof(cq.cq_name), "f%d", i);
		cq.cq_mode = S_IFREG | 0644;
		cq.cq_flags = NC_CREATE_EXCL;
		CU_ASSERT_EQUAL_FATAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &out), 0);
		CU_ASSERT_EQUAL(out.l_stripe_count, 2);
		for (uint32_t s = 0; s < out.l_stripe_count; s++)
			CU_ASSERT_TRUE(out.l_shards[s].ls_ost == 2 || out.l_shards[s].ls_ost == 6);
	}

	/* A pool with no OST the MDS offers: no file can be laid out. */
	idx[0] = 2;
	CU_ASSERT_EQUAL(mds_ns_pool_remove(t_ns, &t_rootc, "two", idx, 2, &bad), 0);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &dir, "none", S_IFREG | 0644, &f), -NC_E_NOOST);

	/* A fixed 4+2 cannot fit a pool of two: the create fails. */
	CU_ASSERT_EQUAL(mds_ns_pool_add(t_ns, &t_rootc, "two", idx, 2, &bad), 0);
	req.l_stripe_count = 0;
	req.l_k = 4;
	req.l_m = 2;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &sub, &req, &t_osts, &out), 0);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &sub, "ec", S_IFREG | 0644, &f), -NC_E_LAYOUT);

	/* Cleared: every OST again. */
	memset(&req, 0, sizeof(req));
	req.l_first_ost = NC_OST_ANY;
	req.l_flags = NC_LAYOUT_TEMPLATE;
	req.l_stripe_count = UINT16_MAX;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &dir, &req, &t_osts, &out), 0);
	CU_ASSERT_FALSE(out.l_flags & NC_LAYOUT_POOL);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &dir, "wide", S_IFREG | 0644, &f), 0);
	CU_ASSERT_EQUAL(mds_ns_getlayout(t_ns, &f, &out), 0);
	CU_ASSERT_EQUAL(out.l_stripe_count, T_NOSTS);
}

static void test_statfs(void)
{
	struct nc_statfs st, st2;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(mds_ns_statfs(t_ns, &st), 0);
	CU_ASSERT(st.s_total > 0 && st.s_total <= T_MAP_SIZE);
	CU_ASSERT(st.s_free <= st.s_total);
	CU_ASSERT(st.s_avail <= st.s_free);
	CU_ASSERT_EQUAL(st.s_files, T_MAP_SIZE / 512);
	CU_ASSERT_EQUAL(st.s_ffree, st.s_files - 1);
	CU_ASSERT_EQUAL(st.s_bsize, 4096);
	CU_ASSERT_EQUAL(st.s_namemax, NC_NAME_MAX);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &t_root, "f", S_IFREG | 0644, NULL),
			0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_statfs(t_ns, &st2), 0);
	CU_ASSERT_EQUAL(st2.s_ffree, st.s_files - 2);
}


/* An MDT with a map of T_SMALL_MAP bytes, in place of the test's own. */
#define T_SMALL_MAP (1ull << 20)

static void t_small_mdt(void)
{
	char dir[PATH_MAX + 16];

	mds_ns_close(t_ns);
	t_ns = NULL;
	snprintf(dir, sizeof(dir), "%s/small", t_base);
	CU_ASSERT_EQUAL_FATAL(mds_ns_format(dir, "testfs", t_uuid, T_SMALL_MAP), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_open(dir, T_SMALL_MAP, &t_ns), 0);
}

static void t_name(char *buf, size_t len, int i)
{
	snprintf(buf, len, "file-%06d-padded-to-take-some-room-in-the-dirents", i);
}

static bool t_exists(const char *name)
{
	struct nc_attr a;

	return mds_ns_lookup(t_ns, &t_rootc, &t_root, name, &a) == 0;
}

/*
 * A full MDT, as the MDS's writer thread drives it: batches of creates run
 * until mds_ns_is_full() (the reserve is reached, and the server refuses
 * creates), and every batch commits.  On the reserve, every file can still
 * be removed, in batches too, after which the MDT has room again.
 */
static void test_mdt_full_reserve(void)
{
	uint64_t left = 0, map = 0;
	char name[NC_NAME_MAX + 1];
	int n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	t_small_mdt();
	CU_ASSERT_EQUAL(mds_ns_reserve(T_SMALL_MAP), T_SMALL_MAP / 4);
	CU_ASSERT_EQUAL(mds_ns_reserve(1ull << 30), 64ull << 20);
	CU_ASSERT_EQUAL(mds_ns_reserve(64ull << 20), 4ull << 20);
	CU_ASSERT_EQUAL(mds_ns_reserve(1ull << 40), 1ull << 30);
	CU_ASSERT_FALSE(mds_ns_is_full(t_ns, NULL, NULL));
	while (!mds_ns_is_full(t_ns, &left, &map) && n < 100000) {
		CU_ASSERT_EQUAL_FATAL(mds_ns_batch_begin(t_ns), 0);
		for (int i = 0; i < 64; i++, n++) {
			t_name(name, sizeof(name), n);
			CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, name,
						       S_IFREG | 0644, NULL), 0);
		}
		CU_ASSERT_EQUAL_FATAL(mds_ns_batch_end(t_ns), 0);
	}
	CU_ASSERT(n > 64 && n < 100000);
	CU_ASSERT_EQUAL(map, T_SMALL_MAP);
	CU_ASSERT(left < mds_ns_reserve(map) + 1);
	/* Everything committed is there, also after a restart. */
	mds_ns_close(t_ns);
	{
		char dir[PATH_MAX + 16];

		snprintf(dir, sizeof(dir), "%s/small", t_base);
		CU_ASSERT_EQUAL_FATAL(mds_ns_open(dir, T_SMALL_MAP, &t_ns), 0);
	}
	CU_ASSERT_TRUE(mds_ns_is_full(t_ns, NULL, NULL));
	for (int i = 0; i < n; i += 997) {
		t_name(name, sizeof(name), i);
		CU_ASSERT_TRUE(t_exists(name));
	}
	/* Removals run on the reserve. */
	for (int i = 0; i < n;) {
		CU_ASSERT_EQUAL_FATAL(mds_ns_batch_begin(t_ns), 0);
		for (int j = 0; j < 64 && i < n; j++, i++) {
			t_name(name, sizeof(name), i);
			CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &t_root, name, false), 0);
		}
		CU_ASSERT_EQUAL_FATAL(mds_ns_batch_end(t_ns), 0);
	}
	CU_ASSERT_FALSE(mds_ns_is_full(t_ns, NULL, NULL));
	CU_ASSERT_EQUAL(t_create(&t_rootc, &t_root, "again", S_IFREG | 0644, NULL), 0);
	CU_ASSERT_TRUE(t_exists("again"));
}

/*
 * Past the reserve, an operation that finds the map full fails alone with
 * ENOSPC (its nested transaction is undone); the batch either commits,
 * with the operations that succeeded, or fails as a whole: nothing is ever
 * reported done that was not committed.
 */
static void test_mdt_full_batch(void)
{
	char name[NC_NAME_MAX + 1];
	int n = 0, rc = 0, end;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	t_small_mdt();
	CU_ASSERT_EQUAL_FATAL(mds_ns_batch_begin(t_ns), 0);
	CU_ASSERT_EQUAL(t_create(&t_rootc, &t_root, "first", S_IFREG | 0644, NULL), 0);
	while (n < 100000) {
		t_name(name, sizeof(name), n);
		rc = t_create(&t_rootc, &t_root, name, S_IFREG | 0644, NULL);
		if (rc)
			break;
		n++;
	}
	CU_ASSERT_EQUAL(rc, -ENOSPC);
	/* The batch is still usable: a read sees what it wrote. */
	CU_ASSERT_TRUE(t_exists("first"));
	end = mds_ns_batch_end(t_ns);
	CU_ASSERT(end == 0 || end == -ENOSPC);
	mds_ns_close(t_ns);
	{
		char dir[PATH_MAX + 16];

		snprintf(dir, sizeof(dir), "%s/small", t_base);
		CU_ASSERT_EQUAL_FATAL(mds_ns_open(dir, T_SMALL_MAP, &t_ns), 0);
	}
	CU_ASSERT_EQUAL(t_exists("first"), end == 0);
	if (n > 0) {
		t_name(name, sizeof(name), n - 1);
		CU_ASSERT_EQUAL(t_exists(name), end == 0);
	}
	t_name(name, sizeof(name), n);
	CU_ASSERT_FALSE(t_exists(name));
}

/* Opens the MDT store of @map bytes in directory @name under t_base,
 * creating the directory when @fresh. */
static struct mds_db *t_db_open(const char *name, uint64_t map, bool fresh)
{
	char dir[PATH_MAX + 32];
	struct mds_db *db = NULL;

	snprintf(dir, sizeof(dir), "%s/%s", t_base, name);
	if (fresh)
		CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(mds_db_open(dir, map, &db), 0);
	return db;
}

static bool t_db_has(struct mds_db *db, const char *key)
{
	struct mds_txn *txn;
	const void *v;
	size_t vl;
	int rc;

	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin(db, true, &txn), 0);
	rc = mds_db_get(txn, MDS_T_REPLIES, key, strlen(key), &v, &vl);
	mds_db_txn_abort(txn);
	CU_ASSERT(rc == 0 || rc == -ENOENT);
	return rc == 0;
}

static int t_db_put(struct mds_txn *txn, const char *key, size_t vlen)
{
	static const uint8_t val[64 << 10];

	return mds_db_put(txn, MDS_T_REPLIES, key, strlen(key), val, vlen, false);
}

/*
 * The writer thread's transactions in a batch: a nested read-write one
 * commits into the batch or is undone alone; a read-only one reads the
 * batch (and refuses writes, as outside a batch); a flat one writes
 * straight into the batch, so its abort undoes nothing.  Only the batch's
 * commit makes any of them durable.
 */
static void test_db_batch_txns(void)
{
	struct mds_db *db = t_db_open("batch-txns", T_MAP_SIZE, true);
	struct mds_txn *txn;
	const void *v;
	size_t vl;

	CU_ASSERT_EQUAL_FATAL(mds_db_batch_begin(db), 0);
	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin(db, false, &txn), 0);
	CU_ASSERT_EQUAL(t_db_put(txn, "nested", 100), 0);
	CU_ASSERT_EQUAL(mds_db_txn_commit(txn), 0);
	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin(db, false, &txn), 0);
	CU_ASSERT_EQUAL(t_db_put(txn, "undone", 100), 0);
	mds_db_txn_abort(txn);

	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin(db, true, &txn), 0);
	CU_ASSERT_EQUAL(mds_db_get(txn, MDS_T_REPLIES, "nested", 6, &v, &vl), 0);
	CU_ASSERT_EQUAL(vl, 100);
	CU_ASSERT_EQUAL(mds_db_get(txn, MDS_T_REPLIES, "undone", 6, &v, &vl), -ENOENT);
	CU_ASSERT_EQUAL(t_db_put(txn, "read-only", 10), -EACCES);
	CU_ASSERT_EQUAL(mds_db_del(txn, MDS_T_REPLIES, "nested", 6), -EACCES);
	mds_db_txn_abort(txn);	/* not the batch's abort */

	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin_flat(db, &txn), 0);
	CU_ASSERT_EQUAL(t_db_put(txn, "flat", 200), 0);
	CU_ASSERT_EQUAL(mds_db_txn_commit(txn), 0);
	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin_flat(db, &txn), 0);
	CU_ASSERT_EQUAL(t_db_put(txn, "flat-aborted", 200), 0);
	mds_db_txn_abort(txn);
	CU_ASSERT_TRUE(t_db_has(db, "nested"));
	CU_ASSERT_TRUE(t_db_has(db, "flat"));
	CU_ASSERT_TRUE(t_db_has(db, "flat-aborted"));
	CU_ASSERT_EQUAL(mds_db_batch_end(db), 0);
	mds_db_close(db);

	db = t_db_open("batch-txns", T_MAP_SIZE, false);
	CU_ASSERT_TRUE(t_db_has(db, "nested"));
	CU_ASSERT_TRUE(t_db_has(db, "flat"));
	CU_ASSERT_FALSE(t_db_has(db, "undone"));
	CU_ASSERT_FALSE(t_db_has(db, "read-only"));
	/* Outside a batch, read-only refuses writes too, and a flat
	 * transaction is a read-write one of its own: its abort undoes. */
	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin(db, true, &txn), 0);
	CU_ASSERT_EQUAL(t_db_put(txn, "read-only", 10), -EACCES);
	mds_db_txn_abort(txn);
	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin_flat(db, &txn), 0);
	CU_ASSERT_EQUAL(t_db_put(txn, "alone", 10), 0);
	mds_db_txn_abort(txn);
	CU_ASSERT_FALSE(t_db_has(db, "alone"));
	mds_db_close(db);
}

/*
 * A flat write that finds the map full fails its whole batch: the batch's
 * commit fails and nothing of it is kept, so no change is reported done
 * without the record written with it.
 */
static void test_db_flat_full_fails_batch(void)
{
	struct mds_db *db = t_db_open("batch-full", T_SMALL_MAP, true);
	struct mds_txn *txn;
	char key[32];
	int rc = 0, n;

	CU_ASSERT_EQUAL_FATAL(mds_db_batch_begin(db), 0);
	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin(db, false, &txn), 0);
	CU_ASSERT_EQUAL(t_db_put(txn, "first", 100), 0);
	CU_ASSERT_EQUAL(mds_db_txn_commit(txn), 0);
	for (n = 0; n < 1000 && !rc; n++) {
		snprintf(key, sizeof(key), "flat-%d", n);
		CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin_flat(db, &txn), 0);
		rc = t_db_put(txn, key, 64 << 10);
		if (rc)
			mds_db_txn_abort(txn);
		else
			CU_ASSERT_EQUAL(mds_db_txn_commit(txn), 0);
	}
	CU_ASSERT_EQUAL(rc, -ENOSPC);
	CU_ASSERT(n > 1 && n < 1000);
	CU_ASSERT_NOT_EQUAL(mds_db_batch_end(db), 0);
	mds_db_close(db);

	db = t_db_open("batch-full", T_SMALL_MAP, false);
	CU_ASSERT_FALSE(t_db_has(db, "first"));
	CU_ASSERT_FALSE(t_db_has(db, "flat-0"));
	/* The store is usable afterwards. */
	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin(db, false, &txn), 0);
	CU_ASSERT_EQUAL(t_db_put(txn, "after", 100), 0);
	CU_ASSERT_EQUAL(mds_db_txn_commit(txn), 0);
	CU_ASSERT_TRUE(t_db_has(db, "after"));
	mds_db_close(db);
}

static void test_corrupt(void)
{
	static const uint8_t junk[] = { 0xff, 0xfe, 0x01, 0x02, 0x03 };
	uint8_t key[16], rec[512];
	const void *v;
	struct mds_txn *txn;
	struct mds_db *db;
	struct nc_fid f, g;
	struct nc_attr a;
	size_t vl;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "f", S_IFREG | 0644,
				       &f), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "g", S_IFREG | 0644,
				       &g), 0);
	mds_ns_close(t_ns);
	t_ns = NULL;

	CU_ASSERT_EQUAL_FATAL(mds_db_open(t_mdt, T_MAP_SIZE, &db), 0);
	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin(db, false, &txn), 0);
	for (int i = 0; i < 8; i++) {
		key[i] = (uint8_t)(f.f_seq >> (56 - 8 * i));
		key[8 + i] = (uint8_t)(f.f_oid >> (56 - 8 * i));
	}
	CU_ASSERT_EQUAL(mds_db_put(txn, MDS_T_INODES, key, sizeof(key), junk,
				   sizeof(junk), false), 0);
	/* g's record cut short by one byte. */
	for (int i = 0; i < 8; i++)
		key[8 + i] = (uint8_t)(g.f_oid >> (56 - 8 * i));
	CU_ASSERT_EQUAL_FATAL(mds_db_get(txn, MDS_T_INODES, key, sizeof(key),
					 &v, &vl), 0);
	CU_ASSERT_FATAL(vl > 1 && vl <= sizeof(rec));
	memcpy(rec, v, vl);
	CU_ASSERT_EQUAL(mds_db_put(txn, MDS_T_INODES, key, sizeof(key), rec,
				   vl - 1, false), 0);
	CU_ASSERT_EQUAL(mds_db_txn_commit(txn), 0);
	mds_db_close(db);

	t_reopen();
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &f, &a), -NC_E_CORRUPT);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &t_root, "f", &a),
			-NC_E_CORRUPT);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &g, &a), -NC_E_CORRUPT);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &t_root, "g", false),
			-NC_E_CORRUPT);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &t_root, &a), 0);
}

/* Several threads creating in one directory: every create lands once. */
#define T_THREADS 4
#define T_PER_THREAD 25

struct t_worker {
	int w_id;
	struct nc_fid w_dir;
	int w_fails;
};

static void *t_worker_main(void *arg)
{
	struct t_worker *w = arg;
	char name[32];

	for (int i = 0; i < T_PER_THREAD; i++) {
		snprintf(name, sizeof(name), "t%d-%d", w->w_id, i);
		if (t_create(&t_rootc, &w->w_dir, name, S_IFREG | 0644, NULL))
			w->w_fails++;
	}
	return NULL;
}

static void test_concurrent_create(void)
{
	struct t_worker w[T_THREADS];
	pthread_t th[T_THREADS];
	struct nc_dirent ents[64];
	struct nc_fid d;
	uint64_t cookie = 0;
	uint32_t n, total = 0;
	bool eof = false;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0755,
				       &d), 0);
	for (int i = 0; i < T_THREADS; i++) {
		w[i].w_id = i;
		w[i].w_dir = d;
		w[i].w_fails = 0;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL,
						     t_worker_main, &w[i]), 0);
	}
	for (int i = 0; i < T_THREADS; i++) {
		pthread_join(th[i], NULL);
		CU_ASSERT_EQUAL(w[i].w_fails, 0);
	}
	while (!eof) {
		CU_ASSERT_EQUAL_FATAL(mds_ns_readdir(t_ns, &t_rootc, &d, cookie,
						     64, ents, &n, &eof), 0);
		total += n;
		if (n)
			cookie = ents[n - 1].de_cookie;
		if (!n)
			break;
	}
	CU_ASSERT_EQUAL(total, T_THREADS * T_PER_THREAD);
}

/* Reads every record above @after. */
static uint32_t t_changelog(uint64_t after, struct nc_changelog_rec *recs, uint32_t max,
			    uint64_t *last)
{
	uint32_t n = 0;

	CU_ASSERT_EQUAL(mds_ns_changelog_read(t_ns, after, recs, max, &n, last), 0);
	return n;
}

static void test_changelog(void)
{
	struct nc_changelog_rec *r = calloc(64, sizeof(*r));
	struct nc_fid d, f, g;
	struct nc_attr a;
	uint64_t last = 99, cleared = 0;
	uint32_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	/* Off: changes leave no record. */
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "before", S_IFREG | 0644, &f), 0);
	CU_ASSERT_EQUAL(t_changelog(0, r, 64, &last), 0);
	CU_ASSERT_EQUAL(last, 0);

	mds_ns_changelog_enable(t_ns, true);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0777, &d), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_user, &d, "f", S_IFREG | 0644, &f), 0);
	/* An O_CREAT of an existing file changes nothing: no record. */
	{
		struct nc_create_req cq = { .cq_cred = t_user, .cq_parent = d,
					    .cq_mode = S_IFREG | 0644 };
		struct nc_layout l;

		strcpy(cq.cq_name, "f");
		CU_ASSERT_EQUAL_FATAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), 0);
		CU_ASSERT(nc_fid_eq(&a.a_fid, &f));
	}
	CU_ASSERT_EQUAL(t_create(&t_user, &d, "f", S_IFREG | 0644, &g), -EEXIST);
	CU_ASSERT_EQUAL_FATAL(mds_ns_link(t_ns, &t_user, &f, &d, "f2", &a), 0);
	CU_ASSERT_EQUAL_FATAL(t_rename(&t_rootc, &d, "f2", &t_root, "moved", 0), 0);
	CU_ASSERT_EQUAL_FATAL(t_setattr(&t_user, &f, NC_SA_MODE, 0600, 0, 0, 0, &a), 0);
	CU_ASSERT_EQUAL_FATAL(t_setattr(&t_user, &f, NC_SA_SIZE, 0, 0, 0, 10, &a), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_xattr_set(t_ns, &t_user, &f, "user.k", "v", 1, 0), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_unlink(t_ns, &t_user, &d, "f", false), 0);
	/* A refused change leaves no record either. */
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_other, &t_root, "d", true), -EACCES);

	n = t_changelog(0, r, 64, &last);
	CU_ASSERT_EQUAL_FATAL(n, 8);
	CU_ASSERT_EQUAL(last, 8);
	static const uint32_t want[] = { NC_CL_MKDIR, NC_CL_CREATE, NC_CL_HLINK, NC_CL_RENAME,
					 NC_CL_SETATTR, NC_CL_TRUNC, NC_CL_XATTR, NC_CL_UNLINK };
	for (uint32_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(r[i].cr_seq, i + 1);
		CU_ASSERT_EQUAL(r[i].cr_type, want[i]);
		CU_ASSERT(r[i].cr_time.t_sec > 0);
	}
	CU_ASSERT_STRING_EQUAL(r[0].cr_name, "d");
	CU_ASSERT(nc_fid_eq(&r[0].cr_fid, &d));
	CU_ASSERT(nc_fid_eq(&r[0].cr_parent, &t_root));
	CU_ASSERT_EQUAL(r[0].cr_uid, 0);
	CU_ASSERT_EQUAL(r[1].cr_uid, t_user.c_uid);
	CU_ASSERT(nc_fid_eq(&r[1].cr_fid, &f));
	CU_ASSERT_STRING_EQUAL(r[2].cr_name, "f2");
	CU_ASSERT(nc_fid_eq(&r[3].cr_fid, &f));
	CU_ASSERT(nc_fid_eq(&r[3].cr_sparent, &d));
	CU_ASSERT_STRING_EQUAL(r[3].cr_sname, "f2");
	CU_ASSERT(nc_fid_eq(&r[3].cr_parent, &t_root));
	CU_ASSERT_STRING_EQUAL(r[3].cr_name, "moved");
	CU_ASSERT_STRING_EQUAL(r[6].cr_name, "user.k");
	CU_ASSERT(nc_fid_eq(&r[7].cr_fid, &f));
	CU_ASSERT_STRING_EQUAL(r[7].cr_name, "f");

	/* Paging: after and max. */
	n = t_changelog(5, r, 2, &last);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_EQUAL(r[0].cr_seq, 6);
	CU_ASSERT_EQUAL(r[1].cr_seq, 7);
	CU_ASSERT_EQUAL(t_changelog(8, r, 64, &last), 0);

	/* Clearing, and numbers that go on across a reopen. */
	CU_ASSERT_EQUAL(mds_ns_changelog_clear(t_ns, 3, &cleared), 0);
	CU_ASSERT_EQUAL(cleared, 3);
	n = t_changelog(0, r, 64, &last);
	CU_ASSERT_EQUAL(n, 5);
	CU_ASSERT_EQUAL(r[0].cr_seq, 4);
	t_reopen();
	mds_ns_changelog_enable(t_ns, true);
	CU_ASSERT_EQUAL_FATAL(mds_ns_unlink(t_ns, &t_rootc, &t_root, "moved", false), 0);
	n = t_changelog(0, r, 64, &last);
	CU_ASSERT_EQUAL(n, 6);
	CU_ASSERT_EQUAL(r[n - 1].cr_seq, 9);
	CU_ASSERT_EQUAL(r[n - 1].cr_type, NC_CL_UNLINK);
	CU_ASSERT_EQUAL(mds_ns_changelog_clear(t_ns, UINT64_MAX - 1, &cleared), 0);
	CU_ASSERT_EQUAL(cleared, 6);
	CU_ASSERT_EQUAL(t_changelog(0, r, 64, &last), 0);
	CU_ASSERT_EQUAL(last, 9);
	free(r);
}

/* ---- inline files ---- */

static const struct nc_timespec t_inline_mtime = { 1700000000, 123456789 };

/* A FID from a grant, as a client names the files it packs. */
static struct nc_fid t_grant_fid(void)
{
	struct nc_fid f = { 0, 0 };
	uint64_t seq = 0, first = 0;
	uint32_t count = 0;

	CU_ASSERT_EQUAL(mds_ns_fid_grant(t_ns, 1, &seq, &first, &count), 0);
	CU_ASSERT_EQUAL(count, 1);
	f.f_seq = seq;
	f.f_oid = first;
	return f;
}

/* Bytes that differ from file to file (@seed) and from offset to offset. */
static void t_inline_fill(uint8_t *buf, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

/* A PACK_COMMIT create of @name in @parent, inline with @len bytes of
 * @data; @fid (not NULL) gets its FID. */
static int t_create_inline(const struct nc_fid *parent, const char *name, const void *data,
			   uint32_t len, struct nc_fid *fid, struct nc_attr *a, struct nc_layout *l)
{
	struct nc_create_req cq;
	struct nc_layout ll;
	struct nc_attr aa;
	int rc;

	memset(&cq, 0, sizeof(cq));
	cq.cq_cred = t_rootc;
	cq.cq_parent = *parent;
	snprintf(cq.cq_name, sizeof(cq.cq_name), "%s", name);
	cq.cq_mode = S_IFREG | 0644;
	cq.cq_flags = NC_CREATE_EXCL | NC_CREATE_FID | NC_CREATE_PACKED | NC_CREATE_INLINE;
	cq.cq_fid = t_grant_fid();
	cq.cq_size = len;
	cq.cq_mtime = t_inline_mtime;
	cq.cq_inline = data;
	cq.cq_inline_len = len;
	rc = mds_ns_create(t_ns, &cq, &t_osts, a ? a : &aa, l ? l : &ll);
	if (rc == 0 && fid)
		*fid = (a ? a : &aa)->a_fid;
	return rc;
}

/* Whether an open of @fid returns an inline file of exactly @len bytes,
 * @data, and writes nothing past the NC_INLINE_MAX bytes of room. */
static bool t_inline_is(const struct nc_fid *fid, const void *data, uint32_t len)
{
	uint8_t *buf = NULL;
	struct nc_layout l;
	struct nc_attr a;
	bool ok;
	int rc;

	rc = mds_ns_open_check(t_ns, &t_rootc, fid, NC_OPEN_READ, &a, &l, &buf);
	ok = rc == 0 && a.a_size == len && l.l_flags == NC_LAYOUT_INLINE &&
	     l.l_stripe_count == 0 && buf && (len == 0 || memcmp(buf, data, len) == 0);
	if (!ok)
		fprintf(stderr, "  inline file: rc %d size %llu flags %#x, %u bytes wanted\n", rc,
			(unsigned long long)a.a_size, l.l_flags, len);
	free(buf);
	return ok;
}

/* The pack record of @id: its live bytes and files (false: no such pack). */
static bool t_pack_usage(uint64_t id, uint64_t *live, uint32_t *files)
{
	struct nc_pack_rec recs[8];
	uint32_t n = 0;

	if (mds_ns_pack_list(t_ns, 0, recs, 8, &n))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		if (recs[i].pk_id == id) {
			*live = recs[i].pk_live;
			*files = recs[i].pk_files;
			return true;
		}
	}
	return false;
}

/* A directory's template with NC_LAYOUT_INLINE: only with NC_LAYOUT_PACK
 * and at most NC_INLINE_MAX; subdirectories inherit it; it survives a
 * restart. */
static void test_inline_template(void)
{
	struct nc_layout t, out, l;
	struct nc_fid d, sub, sub2;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0755, &d), 0);
	memset(&t, 0, sizeof(t));
	t.l_flags = NC_LAYOUT_TEMPLATE | NC_LAYOUT_INLINE;
	t.l_first_ost = NC_OST_ANY;
	t.l_inline_max = 100;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts, &out), -EINVAL);
	t.l_flags |= NC_LAYOUT_PACK;
	t.l_inline_max = NC_INLINE_MAX + 1;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts, &out), -EINVAL);
	t.l_inline_max = UINT32_MAX;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts, &out), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &d, &l), 0);
	CU_ASSERT_FALSE(l.l_flags & (NC_LAYOUT_INLINE | NC_LAYOUT_PACK));
	/* Only the owner (or root) sets it. */
	t.l_inline_max = NC_INLINE_MAX;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_user, &d, &t, &t_osts, &out), -EPERM);

	CU_ASSERT_EQUAL_FATAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts, &out), 0);
	CU_ASSERT_EQUAL(out.l_flags, NC_LAYOUT_TEMPLATE | NC_LAYOUT_PACK | NC_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(out.l_inline_max, NC_INLINE_MAX);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &d, &l), 0);
	CU_ASSERT_EQUAL(l.l_flags, NC_LAYOUT_TEMPLATE | NC_LAYOUT_PACK | NC_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(l.l_inline_max, NC_INLINE_MAX);
	CU_ASSERT_EQUAL(l.l_pack_max, NC_PACK_MAX_DEFAULT);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d, "sub", S_IFDIR | 0755, &sub), 0);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &sub, &l), 0);
	CU_ASSERT_EQUAL(l.l_flags, NC_LAYOUT_TEMPLATE | NC_LAYOUT_PACK | NC_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(l.l_inline_max, NC_INLINE_MAX);

	/* A smaller limit, inherited below as it is then. */
	t.l_inline_max = 512;
	CU_ASSERT_EQUAL_FATAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts, &out), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &d, "sub2", S_IFDIR | 0755, &sub2), 0);

	t_reopen();
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &d, &l), 0);
	CU_ASSERT(l.l_flags & NC_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(l.l_inline_max, 512);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &sub, &l), 0);
	CU_ASSERT(l.l_flags & NC_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(l.l_inline_max, NC_INLINE_MAX);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &sub2, &l), 0);
	CU_ASSERT(l.l_flags & NC_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(l.l_inline_max, 512);

	/* Packing without inline files: the flag goes. */
	t.l_flags = NC_LAYOUT_TEMPLATE | NC_LAYOUT_PACK;
	CU_ASSERT_EQUAL_FATAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts, &out), 0);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &d, &l), 0);
	CU_ASSERT_EQUAL(l.l_flags, NC_LAYOUT_TEMPLATE | NC_LAYOUT_PACK);
}

/* A PACK_COMMIT create of an inline file: its bytes come back with the
 * open, exactly its size of them; what breaks the rules leaves no name. */
static void test_inline_create(void)
{
	uint8_t *data = malloc(2 * NC_INLINE_MAX), *other = malloc(NC_INLINE_MAX);
	struct nc_fid fa, ffull, fempty, fid;
	struct nc_create_req cq;
	struct nc_layout l;
	struct nc_attr a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(other);
	t_inline_fill(data, 2 * NC_INLINE_MAX, 1);
	t_inline_fill(other, NC_INLINE_MAX, 2);

	memset(&l, 0xff, sizeof(l));
	CU_ASSERT_EQUAL_FATAL(t_create_inline(&t_root, "a", data, 1000, &fa, &a, &l), 0);
	CU_ASSERT_EQUAL(a.a_size, 1000);
	CU_ASSERT_EQUAL(a.a_blocks, 2);
	CU_ASSERT(S_ISREG(a.a_mode));
	CU_ASSERT_EQUAL(a.a_mtime.t_sec, t_inline_mtime.t_sec);
	CU_ASSERT_EQUAL(a.a_mtime.t_nsec, t_inline_mtime.t_nsec);
	CU_ASSERT_EQUAL(l.l_flags, NC_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(l.l_stripe_count, 0);
	CU_ASSERT(t_inline_is(&fa, data, 1000));
	CU_ASSERT(t_lookup_is(&t_root, "a", &fa));
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &fa, &a), 0);
	CU_ASSERT_EQUAL(a.a_size, 1000);
	memset(&l, 0xff, sizeof(l));
	CU_ASSERT_EQUAL(mds_ns_getlayout(t_ns, &fa, &l), 0);
	CU_ASSERT_EQUAL(l.l_flags, NC_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(l.l_stripe_count, 0);
	/* An open with no room for the bytes still opens. */
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_rootc, &fa, NC_OPEN_READ, &a, &l, NULL), 0);
	CU_ASSERT_EQUAL(a.a_size, 1000);
	/* Permission as for any file. */
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_other, &fa, NC_OPEN_WRITE, &a, &l, NULL),
			-EACCES);

	/* The limit itself, and nothing at all. */
	CU_ASSERT_EQUAL_FATAL(t_create_inline(&t_root, "full", other, NC_INLINE_MAX, &ffull, &a,
					      &l), 0);
	CU_ASSERT_EQUAL(a.a_size, NC_INLINE_MAX);
	CU_ASSERT_EQUAL(a.a_blocks, NC_INLINE_MAX / 512);
	CU_ASSERT(t_inline_is(&ffull, other, NC_INLINE_MAX));
	CU_ASSERT_EQUAL_FATAL(t_create_inline(&t_root, "empty", NULL, 0, &fempty, &a, &l), 0);
	CU_ASSERT_EQUAL(a.a_size, 0);
	CU_ASSERT_EQUAL(l.l_flags, NC_LAYOUT_INLINE);
	CU_ASSERT(t_inline_is(&fempty, NULL, 0));
	/* Each file has its own bytes. */
	CU_ASSERT(t_inline_is(&fa, data, 1000));

	/* Refused: a size other than the bytes', too many bytes, no bytes
	 * behind a length, INLINE without PACKED or without a granted FID,
	 * an inline directory. */
	memset(&cq, 0, sizeof(cq));
	cq.cq_cred = t_rootc;
	cq.cq_parent = t_root;
	strcpy(cq.cq_name, "bad");
	cq.cq_mode = S_IFREG | 0644;
	cq.cq_flags = NC_CREATE_EXCL | NC_CREATE_FID | NC_CREATE_PACKED | NC_CREATE_INLINE;
	cq.cq_fid = t_grant_fid();
	cq.cq_mtime = t_inline_mtime;
	cq.cq_inline = data;
	cq.cq_inline_len = 100;
	cq.cq_size = 99;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), -EINVAL);
	cq.cq_size = 101;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), -EINVAL);
	cq.cq_size = NC_INLINE_MAX + 1;
	cq.cq_inline_len = NC_INLINE_MAX + 1;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), -EINVAL);
	cq.cq_size = 100;
	cq.cq_inline_len = 100;
	cq.cq_inline = NULL;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), -EINVAL);
	cq.cq_inline = data;
	cq.cq_flags = NC_CREATE_EXCL | NC_CREATE_FID | NC_CREATE_INLINE;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), -EINVAL);
	cq.cq_flags = NC_CREATE_EXCL | NC_CREATE_PACKED | NC_CREATE_INLINE;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), -EINVAL);
	cq.cq_flags = NC_CREATE_EXCL | NC_CREATE_FID | NC_CREATE_PACKED | NC_CREATE_INLINE;
	cq.cq_fid.f_oid += 1000000;     /* never granted */
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), -EINVAL);
	cq.cq_fid = t_grant_fid();
	cq.cq_mode = S_IFDIR | 0755;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), -EINVAL);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &t_root, "bad", &a), -ENOENT);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &cq.cq_fid, &a), -ENOENT);

	/* A resent create finds the file as it went in. */
	cq.cq_mode = S_IFREG | 0644;
	cq.cq_fid = fa;
	strcpy(cq.cq_name, "a");
	cq.cq_inline = other;
	cq.cq_inline_len = 10;
	cq.cq_size = 10;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), 0);
	CU_ASSERT(nc_fid_eq(&a.a_fid, &fa));
	CU_ASSERT(t_inline_is(&fa, data, 1000));
	/* The name taken by another file: EEXIST, its bytes untouched. */
	fid = t_grant_fid();
	cq.cq_fid = fid;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), -EEXIST);
	CU_ASSERT(t_inline_is(&fa, data, 1000));

	/* The bytes are in the MDT: a restart keeps them. */
	t_reopen();
	CU_ASSERT(t_inline_is(&fa, data, 1000));
	CU_ASSERT(t_inline_is(&ffull, other, NC_INLINE_MAX));
	CU_ASSERT(t_inline_is(&fempty, NULL, 0));
	CU_ASSERT(t_lookup_is(&t_root, "full", &ffull));
	free(other);
	free(data);
}

/* An inline file's size changes only with its bytes (a switch): SETATTR
 * and SIZE_UPDATE that would change it are refused, other changes keep
 * the bytes. */
static void test_inline_size(void)
{
	uint8_t data[100];
	struct nc_layout t, out;
	struct nc_fid f, e;
	struct nc_attr a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	t_inline_fill(data, sizeof(data), 3);
	CU_ASSERT_EQUAL_FATAL(t_create_inline(&t_root, "f", data, 100, &f, &a, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(t_create_inline(&t_root, "e", NULL, 0, &e, &a, NULL), 0);
	CU_ASSERT_EQUAL(t_setattr(&t_rootc, &f, NC_SA_SIZE, 0, 0, 0, 50, NULL), -NC_E_PACKED);
	CU_ASSERT_EQUAL(t_setattr(&t_rootc, &f, NC_SA_SIZE, 0, 0, 0, 200, NULL), -NC_E_PACKED);
	CU_ASSERT_EQUAL(t_setattr(&t_rootc, &f, NC_SA_SIZE, 0, 0, 0, 0, NULL), -NC_E_PACKED);
	CU_ASSERT_EQUAL(t_setattr(&t_rootc, &e, NC_SA_SIZE, 0, 0, 0, 10, NULL), -NC_E_PACKED);
	CU_ASSERT_EQUAL(mds_ns_size_update(t_ns, &f, 101, 0, &a), -NC_E_PACKED);
	CU_ASSERT_EQUAL(mds_ns_size_update(t_ns, &f, 4096, NC_SIZE_MTIME, &a), -NC_E_PACKED);
	CU_ASSERT_EQUAL(mds_ns_size_update(t_ns, &e, 1, 0, &a), -NC_E_PACKED);
	CU_ASSERT(t_inline_is(&f, data, 100));
	CU_ASSERT(t_inline_is(&e, NULL, 0));
	/* The size it has is no change. */
	CU_ASSERT_EQUAL(t_setattr(&t_rootc, &f, NC_SA_SIZE, 0, 0, 0, 100, &a), 0);
	CU_ASSERT_EQUAL(a.a_size, 100);
	CU_ASSERT_EQUAL(mds_ns_size_update(t_ns, &f, 100, 0, &a), 0);
	CU_ASSERT_EQUAL(mds_ns_size_update(t_ns, &f, 10, 0, &a), 0);
	CU_ASSERT_EQUAL(a.a_size, 100);
	/* Mode and owner change; the bytes stay. */
	CU_ASSERT_EQUAL(t_setattr(&t_rootc, &f, NC_SA_MODE | NC_SA_UID, 0600, 1000, 0, 0, &a), 0);
	CU_ASSERT_EQUAL(a.a_mode & 07777, 0600);
	CU_ASSERT_EQUAL(a.a_uid, 1000);
	CU_ASSERT_EQUAL(a.a_size, 100);
	CU_ASSERT(t_inline_is(&f, data, 100));
	CU_ASSERT_EQUAL(mds_ns_xattr_set(t_ns, &t_rootc, &f, "user.k", "v", 1, 0), 0);
	CU_ASSERT(t_inline_is(&f, data, 100));
	/* No objects to lay out: a file layout is refused, empty or not. */
	memset(&t, 0, sizeof(t));
	t.l_stripe_count = 2;
	t.l_first_ost = NC_OST_ANY;
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &f, &t, &t_osts, &out), -EBUSY);
	CU_ASSERT_EQUAL(mds_ns_setlayout(t_ns, &t_rootc, &e, &t, &t_osts, &out), -EBUSY);
	CU_ASSERT(t_inline_is(&e, NULL, 0));
	CU_ASSERT(t_inline_is(&f, data, 100));
}

static void t_switch_init(struct nc_pack_switch *sw, const struct nc_fid *f,
			  const struct nc_layout *old, const void *data, uint32_t len)
{
	memset(sw, 0, sizeof(*sw));
	sw->ps_cred = t_rootc;
	sw->ps_fid = *f;
	sw->ps_size = len;
	sw->ps_mtime = (struct nc_timespec){ 1700000100, 42 };
	sw->ps_old = *old;
	sw->ps_new.l_flags = NC_LAYOUT_INLINE;
	sw->ps_inline = data;
	sw->ps_inline_len = len;
}

/*
 * PACK_SWITCH to and from inline bytes: a rewrite replaces the bytes and
 * bumps the generation, one from a stale generation or of the other kind
 * is refused (-NC_E_CHANGED); inline to a pack extent attaches it, back
 * detaches it; a file with objects gives them up.
 */
static void test_inline_switch(void)
{
	uint8_t d1[100], d2[200], d3[50], d4[10];
	struct nc_pack_switch *sw = calloc(1, sizeof(*sw));
	struct nc_layout l0, l1, l2, pl, out, l;
	struct nc_fid none = { 0, 0 }, f, g;
	struct nc_attr a;
	uint64_t live = 99;
	uint32_t files = 99;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
	t_inline_fill(d1, sizeof(d1), 11);
	t_inline_fill(d2, sizeof(d2), 12);
	t_inline_fill(d3, sizeof(d3), 13);
	t_inline_fill(d4, sizeof(d4), 14);
	CU_ASSERT_EQUAL_FATAL(t_create_inline(&t_root, "f", d1, sizeof(d1), &f, &a, &l0), 0);

	/* Inline to inline: new bytes, size, mtime; the generation moves. */
	t_switch_init(sw, &f, &l0, d2, sizeof(d2));
	memset(&out, 0xff, sizeof(out));
	CU_ASSERT_EQUAL_FATAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), 0);
	CU_ASSERT_EQUAL(out.l_flags, NC_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(out.l_stripe_count, 0);
	CU_ASSERT_EQUAL(out.l_gen, l0.l_gen + 1);
	CU_ASSERT_EQUAL(a.a_size, sizeof(d2));
	CU_ASSERT_EQUAL(a.a_blocks, 1);
	CU_ASSERT_EQUAL(a.a_mtime.t_sec, 1700000100);
	CU_ASSERT_EQUAL(a.a_mtime.t_nsec, 42);
	CU_ASSERT(t_inline_is(&f, d2, sizeof(d2)));
	l1 = out;
	/* A writer that read the old generation, or thinks it packed: refused. */
	t_switch_init(sw, &f, &l0, d3, sizeof(d3));
	CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -NC_E_CHANGED);
	sw->ps_old.l_gen = l1.l_gen + 1;
	CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -NC_E_CHANGED);
	sw->ps_old = l1;
	sw->ps_old.l_flags = NC_LAYOUT_PACKED;
	CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -NC_E_CHANGED);
	/* ... or that it had objects, of the same generation. */
	sw->ps_old.l_flags = 0;
	CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -NC_E_CHANGED);
	/* Bad requests: bytes and size apart, too many, none behind the
	 * length, inline and packed at once; no write permission. */
	t_switch_init(sw, &f, &l1, d3, sizeof(d3));
	sw->ps_size = sizeof(d3) + 1;
	CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -EINVAL);
	{
		uint8_t *big = calloc(1, NC_INLINE_MAX + 1);

		CU_ASSERT_PTR_NOT_NULL_FATAL(big);
		t_switch_init(sw, &f, &l1, big, NC_INLINE_MAX + 1);
		CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -EINVAL);
		free(big);
	}
	t_switch_init(sw, &f, &l1, NULL, sizeof(d3));
	CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -EINVAL);
	t_switch_init(sw, &f, &l1, d3, sizeof(d3));
	sw->ps_new.l_flags = NC_LAYOUT_INLINE | NC_LAYOUT_PACKED;
	CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -EINVAL);
	t_switch_init(sw, &f, &l1, d3, sizeof(d3));
	sw->ps_cred = t_other;
	CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -EACCES);
	CU_ASSERT(t_inline_is(&f, d2, sizeof(d2)));
	CU_ASSERT_EQUAL(mds_ns_getlayout(t_ns, &f, &l), 0);
	CU_ASSERT_EQUAL(l.l_gen, l1.l_gen);
	/* To no bytes at all. */
	t_switch_init(sw, &f, &l1, NULL, 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), 0);
	CU_ASSERT_EQUAL(out.l_gen, l1.l_gen + 1);
	CU_ASSERT_EQUAL(a.a_size, 0);
	CU_ASSERT(t_inline_is(&f, NULL, 0));
	l1 = out;

	/* Inline to a pack extent: attached to its pack, no bytes inline. */
	CU_ASSERT_EQUAL_FATAL(mds_ns_pack_alloc(t_ns, &t_rootc, &none, &t_osts, NULL, 0, &pl), 0);
	t_switch_init(sw, &f, &l1, NULL, 0);
	sw->ps_size = 300;
	sw->ps_new.l_flags = NC_LAYOUT_PACKED;
	sw->ps_new.l_pack_id = pl.l_pack_id;
	sw->ps_new.l_pack_off = 4096;
	sw->ps_new.l_pack_len = 300;
	CU_ASSERT_EQUAL_FATAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), 0);
	CU_ASSERT_EQUAL(out.l_flags, NC_LAYOUT_PACKED);
	CU_ASSERT_EQUAL(out.l_pack_id, pl.l_pack_id);
	CU_ASSERT_EQUAL(out.l_pack_off, 4096);
	CU_ASSERT_EQUAL(out.l_pack_len, 300);
	CU_ASSERT_EQUAL(out.l_stripe_count, pl.l_stripe_count);
	CU_ASSERT_EQUAL(a.a_size, 300);
	CU_ASSERT(t_pack_usage(pl.l_pack_id, &live, &files));
	CU_ASSERT_EQUAL(live, 300);
	CU_ASSERT_EQUAL(files, 1);
	{
		uint8_t *buf = NULL;

		CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_rootc, &f, NC_OPEN_READ, &a, &l, &buf),
				0);
		CU_ASSERT(l.l_flags & NC_LAYOUT_PACKED);
		CU_ASSERT_FALSE(l.l_flags & NC_LAYOUT_INLINE);
		CU_ASSERT_PTR_NULL(buf); /* no bytes: they are in the pack */
		free(buf);
	}
	l2 = out;
	/* The inline layout it had is gone. */
	t_switch_init(sw, &f, &l1, d3, sizeof(d3));
	CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -NC_E_CHANGED);
	CU_ASSERT(t_pack_usage(pl.l_pack_id, &live, &files));
	CU_ASSERT_EQUAL(live, 300);

	/* Back from the extent to inline bytes: the pack lets it go. */
	t_switch_init(sw, &f, &l2, d3, sizeof(d3));
	CU_ASSERT_EQUAL_FATAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), 0);
	CU_ASSERT_EQUAL(out.l_flags, NC_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(a.a_size, sizeof(d3));
	CU_ASSERT(t_inline_is(&f, d3, sizeof(d3)));
	CU_ASSERT(t_pack_usage(pl.l_pack_id, &live, &files));
	CU_ASSERT_EQUAL(live, 0);
	CU_ASSERT_EQUAL(files, 0);
	/* ... once: the extent is no longer the file's. */
	t_switch_init(sw, &f, &l2, d4, sizeof(d4));
	CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -NC_E_CHANGED);
	CU_ASSERT(t_inline_is(&f, d3, sizeof(d3)));
	/* The generation went on counting through the pack: the inline
	 * layout read before the pack (l1) does not match the one after. */
	CU_ASSERT(out.l_gen > l1.l_gen);
	t_switch_init(sw, &f, &l1, d4, sizeof(d4));
	CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -NC_E_CHANGED);
	CU_ASSERT(t_inline_is(&f, d3, sizeof(d3)));

	/* A file with objects of its own switched to inline bytes: its
	 * objects go to the destroy queue. */
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "g", S_IFREG | 0644, &g), 0);
	CU_ASSERT_EQUAL_FATAL(mds_ns_getlayout(t_ns, &g, &l0), 0);
	CU_ASSERT_FATAL(l0.l_stripe_count > 0);
	CU_ASSERT_FALSE(t_destroy_has(&g, NULL));
	/* A writer that took it for inline bytes of that generation: refused. */
	l = l0;
	l.l_flags = NC_LAYOUT_INLINE;
	l.l_stripe_count = 0;
	t_switch_init(sw, &g, &l, d4, sizeof(d4));
	CU_ASSERT_EQUAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), -NC_E_CHANGED);
	CU_ASSERT_FALSE(t_destroy_has(&g, NULL));
	t_switch_init(sw, &g, &l0, d4, sizeof(d4));
	CU_ASSERT_EQUAL_FATAL(mds_ns_pack_switch(t_ns, sw, &t_osts, &a, &out), 0);
	CU_ASSERT_EQUAL(out.l_flags, NC_LAYOUT_INLINE);
	CU_ASSERT_EQUAL(out.l_gen, l0.l_gen + 1);
	CU_ASSERT(t_inline_is(&g, d4, sizeof(d4)));
	CU_ASSERT(t_destroy_has(&g, &l));
	CU_ASSERT_EQUAL(l.l_stripe_count, l0.l_stripe_count);

	/* What the switches left survives a restart. */
	t_reopen();
	CU_ASSERT(t_inline_is(&f, d3, sizeof(d3)));
	CU_ASSERT(t_inline_is(&g, d4, sizeof(d4)));
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &f, &a), 0);
	CU_ASSERT_EQUAL(a.a_mtime.t_sec, 1700000100);
	free(sw);
}

/* Links, renames and unlinks of an inline file: its bytes go with the
 * inode, and it leaves no objects to destroy. */
static void test_inline_unlink(void)
{
	uint8_t data[300];
	struct nc_fid f, d;
	struct nc_attr a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	t_inline_fill(data, sizeof(data), 21);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0755, &d), 0);
	CU_ASSERT_EQUAL_FATAL(t_create_inline(&t_root, "f", data, sizeof(data), &f, &a, NULL), 0);
	CU_ASSERT_EQUAL(mds_ns_link(t_ns, &t_rootc, &f, &d, "g", &a), 0);
	CU_ASSERT_EQUAL(a.a_nlink, 2);
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &t_root, "f", false), 0);
	CU_ASSERT_EQUAL(t_nlink(&f), 1);
	CU_ASSERT(t_inline_is(&f, data, sizeof(data)));
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &d, "g", &t_root, "h", 0), 0);
	CU_ASSERT(t_lookup_is(&t_root, "h", &f));
	CU_ASSERT(t_inline_is(&f, data, sizeof(data)));
	CU_ASSERT_EQUAL(mds_ns_unlink(t_ns, &t_rootc, &t_root, "h", false), 0);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &f, &a), -ENOENT);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &t_root, "h", &a), -ENOENT);
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_rootc, &f, NC_OPEN_READ, &a, NULL, NULL),
			-ENOENT);
	CU_ASSERT_FALSE(t_destroy_has(&f, NULL));
	/* Renamed over: the file replaced goes the same way. */
	CU_ASSERT_EQUAL_FATAL(t_create_inline(&t_root, "x", data, 10, &f, &a, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "y", S_IFREG | 0644, &d), 0);
	CU_ASSERT_EQUAL(t_rename(&t_rootc, &t_root, "y", &t_root, "x", 0), 0);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &f, &a), -ENOENT);
	CU_ASSERT_FALSE(t_destroy_has(&f, NULL));
	CU_ASSERT(t_lookup_is(&t_root, "x", &d));
}

/* The INODES key of @f: its FID, big-endian. */
static void t_fid_key(const struct nc_fid *f, uint8_t key[16])
{
	for (int i = 0; i < 8; i++) {
		key[i] = (uint8_t)(f->f_seq >> (56 - 8 * i));
		key[8 + i] = (uint8_t)(f->f_oid >> (56 - 8 * i));
	}
}

static uint32_t t_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void t_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * An inline file's record ends with its bytes (a u32 length, then them)
 * and a template's with inline_max.  A length that is not the file's size
 * (the bytes themselves whole) and an inline_max past NC_INLINE_MAX make
 * the record corrupt.
 */
static void test_inline_corrupt(void)
{
	uint8_t data[10], key[16], rec[1024];
	struct nc_fid f, g, h, d;
	struct nc_layout t, out;
	const void *v;
	struct mds_txn *txn;
	struct mds_db *db;
	struct nc_attr a;
	size_t vl;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	t_inline_fill(data, sizeof(data), 31);
	CU_ASSERT_EQUAL_FATAL(t_create_inline(&t_root, "f", data, sizeof(data), &f, &a, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(t_create_inline(&t_root, "g", data, sizeof(data), &g, &a, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(t_create_inline(&t_root, "h", data, sizeof(data), &h, &a, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(t_create(&t_rootc, &t_root, "d", S_IFDIR | 0755, &d), 0);
	memset(&t, 0, sizeof(t));
	t.l_flags = NC_LAYOUT_TEMPLATE | NC_LAYOUT_PACK | NC_LAYOUT_INLINE;
	t.l_first_ost = NC_OST_ANY;
	t.l_inline_max = NC_INLINE_MAX;
	CU_ASSERT_EQUAL_FATAL(mds_ns_setlayout(t_ns, &t_rootc, &d, &t, &t_osts, &out), 0);
	mds_ns_close(t_ns);
	t_ns = NULL;

	CU_ASSERT_EQUAL_FATAL(mds_db_open(t_mdt, T_MAP_SIZE, &db), 0);
	CU_ASSERT_EQUAL_FATAL(mds_db_txn_begin(db, false, &txn), 0);
	/* f: 9 of its 10 bytes, a whole opaque of its own. */
	t_fid_key(&f, key);
	CU_ASSERT_EQUAL_FATAL(mds_db_get(txn, MDS_T_INODES, key, sizeof(key), &v, &vl), 0);
	CU_ASSERT_FATAL(vl > 4 + sizeof(data) && vl < sizeof(rec));
	memcpy(rec, v, vl);
	CU_ASSERT_EQUAL_FATAL(t_le32(rec + vl - 4 - sizeof(data)), sizeof(data));
	CU_ASSERT_EQUAL_FATAL(memcmp(rec + vl - sizeof(data), data, sizeof(data)), 0);
	t_put_le32(rec + vl - 4 - sizeof(data), sizeof(data) - 1);
	CU_ASSERT_EQUAL(mds_db_put(txn, MDS_T_INODES, key, sizeof(key), rec, vl - 1, false), 0);
	/* g: 11 bytes. */
	t_fid_key(&g, key);
	CU_ASSERT_EQUAL_FATAL(mds_db_get(txn, MDS_T_INODES, key, sizeof(key), &v, &vl), 0);
	CU_ASSERT_FATAL(vl > 4 + sizeof(data) && vl < sizeof(rec) - 1);
	memcpy(rec, v, vl);
	t_put_le32(rec + vl - 4 - sizeof(data), sizeof(data) + 1);
	rec[vl] = 'x';
	CU_ASSERT_EQUAL(mds_db_put(txn, MDS_T_INODES, key, sizeof(key), rec, vl + 1, false), 0);
	/* d: its template's inline_max one past the limit. */
	t_fid_key(&d, key);
	CU_ASSERT_EQUAL_FATAL(mds_db_get(txn, MDS_T_INODES, key, sizeof(key), &v, &vl), 0);
	CU_ASSERT_FATAL(vl > 4 && vl < sizeof(rec));
	memcpy(rec, v, vl);
	CU_ASSERT_EQUAL_FATAL(t_le32(rec + vl - 4), NC_INLINE_MAX);
	t_put_le32(rec + vl - 4, NC_INLINE_MAX + 1);
	CU_ASSERT_EQUAL(mds_db_put(txn, MDS_T_INODES, key, sizeof(key), rec, vl, false), 0);
	CU_ASSERT_EQUAL(mds_db_txn_commit(txn), 0);
	mds_db_close(db);

	t_reopen();
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &f, &a), -NC_E_CORRUPT);
	CU_ASSERT_EQUAL(mds_ns_open_check(t_ns, &t_rootc, &f, NC_OPEN_READ, &a, NULL, NULL),
			-NC_E_CORRUPT);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &t_root, "g", &a), -NC_E_CORRUPT);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &g, &a), -NC_E_CORRUPT);
	CU_ASSERT_EQUAL(mds_ns_getattr(t_ns, &d, &a), -NC_E_CORRUPT);
	CU_ASSERT_EQUAL(mds_ns_getlayout(t_ns, &d, &out), -NC_E_CORRUPT);
	/* The untouched one reads as it was. */
	CU_ASSERT(t_inline_is(&h, data, sizeof(data)));
}

/* What a peer may put in a CREATE that no client sends: unknown flags and
 * an unknown file type are refused and leave no entry behind. */
static void test_create_refuses_unknown(void)
{
	static const uint32_t bad_flags[] = { 0x10u, 0x80000000u, ~NC_CREATE_FLAGS };
	struct nc_create_req cq;
	struct nc_layout l;
	struct nc_attr a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t_ns);
	memset(&cq, 0, sizeof(cq));
	cq.cq_cred = t_rootc;
	cq.cq_parent = t_root;
	strcpy(cq.cq_name, "odd");
	cq.cq_mode = S_IFREG | 0644;
	for (size_t i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]); i++) {
		cq.cq_flags = bad_flags[i] | NC_CREATE_EXCL;
		CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), -EINVAL);
	}
	cq.cq_flags = NC_CREATE_EXCL;
	cq.cq_mode = S_IFMT | 0644;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), -EINVAL);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &t_root, "odd", &a), -ENOENT);
	/* The known flags still work. */
	cq.cq_mode = S_IFREG | 0644;
	CU_ASSERT_EQUAL(mds_ns_create(t_ns, &cq, &t_osts, &a, &l), 0);
	CU_ASSERT_EQUAL(mds_ns_lookup(t_ns, &t_rootc, &t_root, "odd", &a), 0);
}

int main(void)
{
	static const struct {
		const char *name;
		CU_TestFunc fn;
	} tests[] = {
		{ "format and open", test_format_open },
		{ "create, lookup, getattr", test_create_lookup_getattr },
		{ "create refuses unknown flags and types", test_create_refuses_unknown },
		{ "mkdir nlink accounting", test_mkdir_nlink },
		{ "unlink and rmdir errors", test_unlink_errors },
		{ "rename over a file", test_rename_over_file },
		{ "rename directories", test_rename_dirs },
		{ "rename across directories", test_rename_cross_dir },
		{ "rename NOREPLACE and EXCHANGE", test_rename_flags },
		{ "rename between links of one inode", test_rename_same_inode },
		{ "hard links", test_hardlinks },
		{ "permissions", test_permissions },
		{ "readdir paging", test_readdir_paging },
		{ "symlinks", test_symlink },
		{ "xattrs", test_xattr },
		{ "layout inheritance", test_layout_inherit },
		{ "automatic erasure coding", test_layout_auto_ec },
		{ "a directory's empty template", test_layout_dir_empty_template },
		{ "scan for stale shards by OST", test_stale_scan },
		{ "setlayout on a file", test_setlayout_file },
		{ "size updates", test_size_update },
		{ "migration: alloc, version check, swap", test_migrate_swap },
		{ "migration: geometry, abort", test_migrate_geometry_abort },
		{ "migration waits for writers to go quiet", test_migrate_quiet },
		{ "durability across reopen", test_durability },
		{ "OST table", test_ost_table },
		{ "OST deactivate: excluded, kept across re-register and restart",
		  test_ost_deactivate },
		{ "OST inactive flag in the OST record", test_ost_inactive_record },
		{ "OST pools: create, add, remove, list, destroy, permissions",
		  test_pool_admin },
		{ "OST pools restrict new layouts", test_pool_layout },
		{ "packs leave out the OSTs a client avoids", test_pack_avoid },
		{ "a pack laid out like the files it takes", test_pack_alloc_like },
		{ "statfs", test_statfs },
		{ "full MDT: creates up to the reserve, removals on it", test_mdt_full_reserve },
		{ "full MDT: one operation fails, its batch stays consistent",
		  test_mdt_full_batch },
		{ "batch: nested, read-only and flat transactions", test_db_batch_txns },
		{ "batch: a flat write on a full map fails the batch", test_db_flat_full_fails_batch },
		{ "corrupt records", test_corrupt },
		{ "concurrent creates", test_concurrent_create },
		{ "changelog", test_changelog },
		{ "reply records", test_reply_records },
		{ "migration: abandoned ones expire", test_migrate_expire },
		{ "inline files: directory templates", test_inline_template },
		{ "inline files: create, open, restart", test_inline_create },
		{ "inline files: sizes change only by a switch", test_inline_size },
		{ "inline files: switches to, from and between inline bytes",
		  test_inline_switch },
		{ "inline files: link, rename, unlink", test_inline_unlink },
		{ "inline files: corrupt records", test_inline_corrupt },
	};
	unsigned int failures;
	CU_pSuite suite;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite_with_setup_and_teardown("mds_ns", NULL, NULL,
						     t_setup, t_teardown);
	if (!suite)
		goto out_registry;
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!CU_add_test(suite, tests[i].name, tests[i].fn))
			goto out_registry;
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures ? 1 : 0;

out_registry:
	CU_cleanup_registry();
	return 99;
}
