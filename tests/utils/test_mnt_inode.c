/* SPDX-License-Identifier: MIT */
/* Unit tests of mount.nacre's table of inode records (utils/mnt_inode.c). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <CUnit/Basic.h>

#include "utils/mnt_inode.h"

static const struct timespec t1 = { 1700000000, 1 };
static const struct timespec t2 = { 1700000000, 2 };

static void new_table(struct mnt_ino_table *t, size_t max)
{
	CU_ASSERT_EQUAL_FATAL(mnt_ino_table_init(t, max), 0);
}

/* An open finds the file as the last open did, or not. */
static void test_opened(void)
{
	struct mnt_ino_table t;

	new_table(&t, 100);
	CU_ASSERT_FALSE(mnt_ino_opened(&t, 7, 10, &t1, &t1)); /* never seen */
	CU_ASSERT_TRUE(mnt_ino_opened(&t, 7, 10, &t1, &t1));
	CU_ASSERT_FALSE(mnt_ino_opened(&t, 7, 11, &t1, &t1)); /* size */
	CU_ASSERT_FALSE(mnt_ino_opened(&t, 7, 11, &t2, &t1)); /* mtime */
	CU_ASSERT_FALSE(mnt_ino_opened(&t, 7, 11, &t2, &t2)); /* ctime */
	CU_ASSERT_TRUE(mnt_ino_opened(&t, 7, 11, &t2, &t2));
	/* Another inode is another record. */
	CU_ASSERT_FALSE(mnt_ino_opened(&t, 8, 11, &t2, &t2));
	/* Dropped: the next open starts afresh. */
	mnt_ino_opened_drop(&t, 7);
	CU_ASSERT_FALSE(mnt_ino_opened(&t, 7, 11, &t2, &t2));
	CU_ASSERT_TRUE(mnt_ino_opened(&t, 7, 11, &t2, &t2));
	CU_ASSERT_EQUAL(t.it_count, 2);
	mnt_ino_table_fini(&t);
}

/* Two replies that differ leave no record of what the kernel holds. */
static void test_told(void)
{
	struct mnt_ino_table t;

	new_table(&t, 100);
	CU_ASSERT_FALSE(mnt_ino_told_is(&t, 5, 1, &t1, &t1));
	mnt_ino_told(&t, 5, 1, &t1, &t1);
	CU_ASSERT_TRUE(mnt_ino_told_is(&t, 5, 1, &t1, &t1));
	CU_ASSERT_FALSE(mnt_ino_told_is(&t, 5, 2, &t1, &t1));
	mnt_ino_told(&t, 5, 1, &t1, &t1); /* the same again: kept */
	CU_ASSERT_TRUE(mnt_ino_told_is(&t, 5, 1, &t1, &t1));
	mnt_ino_told(&t, 5, 2, &t1, &t1); /* another: neither is known */
	CU_ASSERT_FALSE(mnt_ino_told_is(&t, 5, 1, &t1, &t1));
	CU_ASSERT_FALSE(mnt_ino_told_is(&t, 5, 2, &t1, &t1));
	CU_ASSERT_EQUAL(t.it_count, 0); /* nothing left to keep */
	mnt_ino_told(&t, 5, 2, &t1, &t1); /* the next reply is held */
	CU_ASSERT_TRUE(mnt_ino_told_is(&t, 5, 2, &t1, &t1));
	/* A told record and an open record of one inode live together. */
	CU_ASSERT_FALSE(mnt_ino_opened(&t, 5, 2, &t1, &t1));
	mnt_ino_opened_drop(&t, 5);
	CU_ASSERT_TRUE(mnt_ino_told_is(&t, 5, 2, &t1, &t1));
	CU_ASSERT_EQUAL(t.it_count, 1);
	mnt_ino_table_fini(&t);
}

/* FORGET takes the inode's whole record. */
static void test_forget(void)
{
	struct mnt_ino_table t;

	new_table(&t, 100);
	mnt_ino_told(&t, 9, 1, &t1, &t1);
	CU_ASSERT_FALSE(mnt_ino_opened(&t, 9, 1, &t1, &t1));
	mnt_ino_forget(&t, 9);
	mnt_ino_forget(&t, 10); /* none: nothing happens */
	CU_ASSERT_EQUAL(t.it_count, 0);
	CU_ASSERT_FALSE(mnt_ino_told_is(&t, 9, 1, &t1, &t1));
	CU_ASSERT_FALSE(mnt_ino_opened(&t, 9, 1, &t1, &t1));
	mnt_ino_table_fini(&t);
}

/* Many more inodes than the first buckets, dense and spread: every record
 * is kept (the 4096 slots this table replaced lost them to collisions). */
static void test_many(void)
{
	const uint64_t n = 50000;
	struct mnt_ino_table t;
	uint64_t i, kept = 0;

	new_table(&t, 1000000);
	for (i = 0; i < n; i++) {
		CU_ASSERT_FALSE(mnt_ino_opened(&t, 2 + i, i, &t1, &t1));
		CU_ASSERT_FALSE(mnt_ino_opened(&t, (i + 1) << 32, i, &t1, &t1));
	}
	CU_ASSERT_EQUAL(t.it_count, 2 * n);
	CU_ASSERT(t.it_nbuckets >= 2 * n);
	for (i = 0; i < n; i++)
		kept += mnt_ino_opened(&t, 2 + i, i, &t1, &t1) +
			mnt_ino_opened(&t, (i + 1) << 32, i, &t1, &t1);
	CU_ASSERT_EQUAL(kept, 2 * n);
	CU_ASSERT_EQUAL(t.it_evicted, 0);
	for (i = 0; i < n; i++)
		mnt_ino_forget(&t, 2 + i);
	CU_ASSERT_EQUAL(t.it_count, n);
	mnt_ino_table_fini(&t);
}

/* At the bound a new record takes an old one's place. */
static void test_bound(void)
{
	struct mnt_ino_table t;
	uint64_t i, untold = 0;

	new_table(&t, 1000);
	for (i = 1; i <= 5000; i++)
		mnt_ino_opened(&t, i, 1, &t1, &t1);
	CU_ASSERT_EQUAL(t.it_count, 1000);
	CU_ASSERT_EQUAL(t.it_evicted, 4000);
	/* The newest is always there; 1000 in all. */
	CU_ASSERT_TRUE(mnt_ino_opened(&t, 5000, 1, &t1, &t1));
	for (i = 1; i <= 5000; i++)
		untold += mnt_ino_told_is(&t, i, 1, &t1, &t1) ? 0 : 1;
	CU_ASSERT_EQUAL(untold, 5000); /* no told records were made */
	CU_ASSERT_EQUAL(t.it_count, 1000);
	mnt_ino_table_fini(&t);
}

int main(void)
{
	CU_pSuite s;
	unsigned int failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	s = CU_add_suite("mnt_inode", NULL, NULL);
	if (!s || !CU_add_test(s, "open records", test_opened) ||
	    !CU_add_test(s, "told records", test_told) ||
	    !CU_add_test(s, "forget", test_forget) ||
	    !CU_add_test(s, "many inodes", test_many) ||
	    !CU_add_test(s, "bound", test_bound)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
