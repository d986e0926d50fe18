/* SPDX-License-Identifier: MIT */
/* Unit tests of the OSS row lock table (oss/rowlock.c). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <CUnit/Basic.h>

#include "oss/rowlock.h"

#define LEASE 30000

static const struct nc_fid fid_a = { 0x200000401ull, 0x1ull };
static const struct nc_fid fid_b = { 0x200000401ull, 0x2ull };

static struct oss_locks *new_locks(uint32_t max)
{
	struct oss_locks *ls = NULL;

	CU_ASSERT_EQUAL_FATAL(oss_locks_new(max, &ls), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ls);
	return ls;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void test_grant_conflict(void)
{
	struct oss_locks *ls = new_locks(0);

	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 10, 5, 1, LEASE), 0);
	/* Any overlap with another owner's range conflicts. */
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 10, 5, 2, LEASE), -EAGAIN);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 14, 1, 2, LEASE), -EAGAIN);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 11, 2, LEASE), -EAGAIN);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 100, 2, LEASE), -EAGAIN);
	/* Adjacent ranges and other files do not. */
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 15, 5, 2, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 10, 3, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_b, 10, 5, 2, LEASE), 0);
	CU_ASSERT_EQUAL(oss_locks_held(ls), 4);
	/* Bad arguments. */
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 100, 0, 1, LEASE), -EINVAL);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, UINT64_MAX, 2, 1, LEASE),
			-EINVAL);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 100, 1, 1, 0), -EINVAL);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, UINT64_MAX - 1, 1, 1, LEASE),
			0);
	oss_locks_free(ls);
	oss_locks_free(NULL);
}

static void test_same_owner(void)
{
	struct oss_locks *ls = new_locks(0);

	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 4, 1, LEASE), 0);
	/* Re-locking what it holds, or overlapping it, is granted and
	 * merges into one range. */
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 4, 1, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 2, 4, 1, LEASE), 0);
	CU_ASSERT_EQUAL(oss_locks_held(ls), 1);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 5, 1, 2, LEASE), -EAGAIN);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 6, 1, 2, LEASE), 0);
	/* A range bridging two of its ranges merges them. */
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 10, 2, 1, LEASE), 0);
	CU_ASSERT_EQUAL(oss_locks_held(ls), 3);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 5, 6, 1, LEASE), -EAGAIN);
	CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_a, 6, 1, 2), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 5, 6, 1, LEASE), 0);
	CU_ASSERT_EQUAL(oss_locks_held(ls), 1);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 11, 1, 2, LEASE), -EAGAIN);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 12, 1, 2, LEASE), 0);
	oss_locks_free(ls);
}

static void test_release(void)
{
	struct oss_locks *ls = new_locks(0);

	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 10, 1, LEASE), 0);
	/* Only the owner's own range, of the right file. */
	CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_a, 0, 10, 2), -ENOENT);
	CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_b, 0, 10, 1), -ENOENT);
	CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_a, 10, 5, 1), -ENOENT);
	CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_a, 0, 0, 1), -EINVAL);
	/* Releasing the middle splits the range. */
	CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_a, 4, 2, 1), 0);
	CU_ASSERT_EQUAL(oss_locks_held(ls), 2);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 4, 2, 2, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 3, 1, 2, LEASE), -EAGAIN);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 6, 1, 2, LEASE), -EAGAIN);
	/* Releasing an edge trims; releasing across both parts drops them. */
	CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_a, 0, 1, 1), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 1, 3, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_a, 0, 100, 1), 0);
	CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_a, 0, 100, 1), -ENOENT);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 1, 3, 2, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 6, 4, 2, LEASE), 0);
	/* [0,1) of 3; [1,4), [4,6), [6,10) of 2: touching ranges stay apart. */
	CU_ASSERT_EQUAL(oss_locks_held(ls), 4);
	oss_locks_free(ls);
}

static void test_release_owner(void)
{
	struct oss_locks *ls = new_locks(0);

	for (uint64_t i = 0; i < 100; i++) {
		CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, i * 2, 1, 7, LEASE), 0);
		CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_b, i * 2, 1, 7, LEASE), 0);
		CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, i * 2 + 1, 1, 8, LEASE),
				0);
	}
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 1, 8, LEASE), -EAGAIN);
	CU_ASSERT_EQUAL(oss_lock_release_owner(ls, 7), 200);
	CU_ASSERT_EQUAL(oss_lock_release_owner(ls, 7), 0);
	CU_ASSERT_EQUAL(oss_locks_held(ls), 100);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 1, 8, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_b, 0, 200, 9, LEASE), 0);
	oss_locks_free(ls);
}

static void test_expiry(void)
{
	struct oss_locks *ls = new_locks(0);

	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 1, 1, 200), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 1, 2, LEASE), -EAGAIN);
	sleep_ms(250);
	/* Expired: no longer held, and another owner gets it. */
	CU_ASSERT_EQUAL(oss_locks_held(ls), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 1, 2, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_a, 0, 1, 1), -ENOENT);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 1, 1, LEASE), -EAGAIN);

	/* Re-locking restarts the lease. */
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_b, 0, 1, 1, 400), 0);
	sleep_ms(250);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_b, 0, 1, 1, 400), 0);
	sleep_ms(250);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_b, 0, 1, 2, LEASE), -EAGAIN);
	sleep_ms(300);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_b, 0, 1, 2, LEASE), 0);
	oss_locks_free(ls);
}

static void test_bounded(void)
{
	struct oss_locks *ls = new_locks(0), *small;
	struct nc_fid f = { 0x200000401ull, 0 };

	/* The default bound: 65536 ranges, then -ENOSPC. */
	for (uint64_t i = 0; i < OSS_LOCKS_MAX; i++) {
		f.f_oid = i / 4;
		if (oss_lock_try(ls, &f, (i % 4) * 2, 1, 1, LEASE)) {
			CU_FAIL("lock refused below the bound");
			break;
		}
	}
	CU_ASSERT_EQUAL(oss_locks_held(ls), OSS_LOCKS_MAX);
	f.f_oid = 1u << 30;
	CU_ASSERT_EQUAL(oss_lock_try(ls, &f, 0, 1, 1, LEASE), -ENOSPC);
	/* Extending a held range needs no room. */
	f.f_oid = 5;
	CU_ASSERT_EQUAL(oss_lock_try(ls, &f, 0, 1, 1, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_release(ls, &f, 0, 1, 1), 0);
	f.f_oid = 1u << 30;
	CU_ASSERT_EQUAL(oss_lock_try(ls, &f, 0, 1, 1, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_release_owner(ls, 1), OSS_LOCKS_MAX);
	oss_locks_free(ls);

	/* Expired entries make room again. */
	small = new_locks(8);
	for (uint64_t i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(oss_lock_try(small, &fid_a, i * 2, 1, 1, 300),
				0);
	CU_ASSERT_EQUAL(oss_lock_try(small, &fid_b, 0, 1, 2, LEASE), -ENOSPC);
	sleep_ms(350);
	for (uint64_t i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(oss_lock_try(small, &fid_b, i * 2, 1, 2, LEASE),
				0);
	CU_ASSERT_EQUAL(oss_lock_try(small, &fid_b, 100, 1, 2, LEASE),
			-ENOSPC);
	oss_locks_free(small);
}

/*
 * Threads take turns on a few rows: each holds a row while it bumps a
 * shared counter non-atomically, which only adds up when the locks really
 * exclude each other.
 */
#define N_THREADS 8
#define N_ROWS 4
#define N_ROUNDS 2000

struct worker {
	struct oss_locks *w_locks;
	uint64_t w_owner;
	unsigned long *w_counters;
	int w_errors;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < N_ROUNDS; i++) {
		uint64_t row = (uint64_t)(i + (int)w->w_owner) % N_ROWS;
		volatile unsigned long *c = &w->w_counters[row];
		unsigned long v;
		int ret;

		while ((ret = oss_lock_try(w->w_locks, &fid_a, row, 1,
					   w->w_owner, LEASE)) == -EAGAIN)
			sched_yield();
		if (ret) {
			w->w_errors++;
			continue;
		}
		v = *c;
		sched_yield();
		*c = v + 1;
		if (oss_lock_release(w->w_locks, &fid_a, row, 1, w->w_owner))
			w->w_errors++;
	}
	return NULL;
}

/* Fetches owner @o's watch on @fid into lo/hi; returns the count, or
 * -errno. */
static int fetch(struct oss_locks *ls, const struct nc_fid *fid, uint64_t o, uint64_t *lo,
		 uint64_t *hi, uint32_t max)
{
	uint32_t n = 99;
	int rc = oss_watch_fetch(ls, fid, o, LEASE, lo, hi, max, &n);

	return rc ? rc : (int)n;
}

static void test_watch_records(void)
{
	struct oss_locks *ls = new_locks(0);
	uint64_t lo[OSS_WATCH_RANGES], hi[OSS_WATCH_RANGES];

	/* Granted before the watch starts: not recorded. */
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 1, 2, LEASE), 0);
	CU_ASSERT_EQUAL(fetch(ls, &fid_a, 1, lo, hi, OSS_WATCH_RANGES), -ENOENT);
	CU_ASSERT_EQUAL(oss_watch_start(ls, &fid_a, 1, LEASE), 0);
	CU_ASSERT_EQUAL(fetch(ls, &fid_a, 1, lo, hi, OSS_WATCH_RANGES), 0);
	/* The owner's own locks, other files and refused locks are not. */
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 5, 1, 1, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_b, 7, 1, 2, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 5, 1, 3, LEASE), -EAGAIN);
	CU_ASSERT_EQUAL(fetch(ls, &fid_a, 1, lo, hi, OSS_WATCH_RANGES), 0);
	/* Other owners' grants are, merged where they overlap or touch. */
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 10, 2, 2, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 12, 3, 3, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 40, 1, 3, LEASE), 0);
	CU_ASSERT_EQUAL_FATAL(fetch(ls, &fid_a, 1, lo, hi, OSS_WATCH_RANGES), 2);
	CU_ASSERT(lo[0] == 10 && hi[0] == 15 && lo[1] == 40 && hi[1] == 41);
	/* A release does not take a range out of the record. */
	CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_a, 40, 1, 3), 0);
	CU_ASSERT_EQUAL(fetch(ls, &fid_a, 1, lo, hi, OSS_WATCH_RANGES), 2);
	/* A second watcher sees only what came after its start. */
	CU_ASSERT_EQUAL(oss_watch_start(ls, &fid_a, 4, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 100, 1, 2, LEASE), 0);
	CU_ASSERT_EQUAL(fetch(ls, &fid_a, 4, lo, hi, OSS_WATCH_RANGES), 1);
	CU_ASSERT(lo[0] == 100 && hi[0] == 101);
	CU_ASSERT_EQUAL(fetch(ls, &fid_a, 1, lo, hi, OSS_WATCH_RANGES), 3);
	/* A restart empties it; a stop ends it. */
	CU_ASSERT_EQUAL(oss_watch_start(ls, &fid_a, 1, LEASE), 0);
	CU_ASSERT_EQUAL(fetch(ls, &fid_a, 1, lo, hi, OSS_WATCH_RANGES), 0);
	CU_ASSERT_EQUAL(oss_watch_stop(ls, &fid_a, 1), 0);
	CU_ASSERT_EQUAL(oss_watch_stop(ls, &fid_a, 1), -ENOENT);
	CU_ASSERT_EQUAL(fetch(ls, &fid_a, 1, lo, hi, OSS_WATCH_RANGES), -ENOENT);
	CU_ASSERT_EQUAL(fetch(ls, &fid_a, 4, lo, hi, 0), -EINVAL);
	CU_ASSERT_EQUAL(oss_watch_start(ls, &fid_a, 1, 0), -EINVAL);
	oss_locks_free(ls);     /* with watch 4 still there: freed too */
}

/* Ranges come back in order.  More ranges than a watch holds: the two
 * closest merge (the gap between them counted in), so every granted row
 * stays covered and as few others as can be join them.  A fetch with less
 * room merges the rest into its last range. */
static void test_watch_overflow(void)
{
	struct oss_locks *ls = new_locks(0);
	uint64_t lo[OSS_WATCH_RANGES], hi[OSS_WATCH_RANGES], covered = 0;
	int n;

	CU_ASSERT_EQUAL(oss_watch_start(ls, &fid_a, 1, LEASE), 0);
	/* Rows 3, 13, 23, ... in a shuffled order, and row 5000 with a
	 * wider gap before it than any other. */
	for (uint64_t i = 0; i < OSS_WATCH_RANGES; i++) {
		uint64_t r = (i * 7) % OSS_WATCH_RANGES;

		CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 10 * r + 3, 1, 2 + i, LEASE), 0);
	}
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 5000, 1, 2, LEASE), 0);
	n = fetch(ls, &fid_a, 1, lo, hi, OSS_WATCH_RANGES);
	CU_ASSERT_EQUAL_FATAL(n, OSS_WATCH_RANGES);
	for (int j = 0; j < n; j++) {
		covered += hi[j] - lo[j];
		if (j)
			CU_ASSERT(hi[j - 1] < lo[j]);
	}
	for (uint64_t r = 0; r < OSS_WATCH_RANGES; r++) {
		bool in = false;

		for (int j = 0; j < n; j++)
			in |= lo[j] <= 10 * r + 3 && 10 * r + 4 <= hi[j];
		CU_ASSERT(in);
	}
	CU_ASSERT(lo[n - 1] == 5000 && hi[n - 1] == 5001);
	/* One gap of 9 rows was joined: 257 rows granted, 266 covered. */
	CU_ASSERT_EQUAL(covered, OSS_WATCH_RANGES + 1 + 9);
	/* Four at most: the rest merge into the fourth. */
	CU_ASSERT_EQUAL_FATAL(fetch(ls, &fid_a, 1, lo, hi, 4), 4);
	CU_ASSERT(lo[0] == 3 && hi[0] - lo[0] <= 11);
	CU_ASSERT(lo[3] <= 43 && hi[3] == 5001);
	/* A range over several merges them into one (the 9 ranges of rows 3
	 * to 93), once their locks are released. */
	for (uint64_t i = 0; i < OSS_WATCH_RANGES; i++)
		CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_a, 10 * ((i * 7) % OSS_WATCH_RANGES) + 3,
						 1, 2 + i), 0);
	CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, 0, 100, 2, LEASE), 0);
	n = fetch(ls, &fid_a, 1, lo, hi, OSS_WATCH_RANGES);
	CU_ASSERT_EQUAL_FATAL(n, OSS_WATCH_RANGES - 8);
	CU_ASSERT(lo[0] == 0 && hi[0] == 100 && lo[1] == 103);
	oss_locks_free(ls);
}

/* A watch ends with its lease, unless its owner's locks on the file or
 * its fetches renew it, and with its owner's connection. */
static void test_watch_lease(void)
{
	struct oss_locks *ls = new_locks(0);
	uint64_t lo[OSS_WATCH_RANGES], hi[OSS_WATCH_RANGES];
	uint32_t n;

	CU_ASSERT_EQUAL(oss_watch_start(ls, &fid_a, 1, 150), 0);
	for (int i = 0; i < 4; i++) {
		sleep_ms(100);
		/* Renewed by the owner's row locks, for their lease. */
		CU_ASSERT_EQUAL(oss_lock_try(ls, &fid_a, (uint64_t)i, 1, 1, 150), 0);
		CU_ASSERT_EQUAL(oss_lock_release(ls, &fid_a, (uint64_t)i, 1, 1), 0);
	}
	CU_ASSERT_EQUAL(oss_watch_fetch(ls, &fid_a, 1, 150, lo, hi, 1, &n), 0);
	sleep_ms(100);
	CU_ASSERT_EQUAL(oss_watch_fetch(ls, &fid_a, 1, 150, lo, hi, 1, &n), 0);
	sleep_ms(250);
	CU_ASSERT_EQUAL(oss_watch_fetch(ls, &fid_a, 1, 150, lo, hi, 1, &n), -ENOENT);
	/* The owner's connection closes: its watches go, others' stay. */
	CU_ASSERT_EQUAL(oss_watch_start(ls, &fid_a, 1, LEASE), 0);
	CU_ASSERT_EQUAL(oss_watch_start(ls, &fid_b, 1, LEASE), 0);
	CU_ASSERT_EQUAL(oss_watch_start(ls, &fid_a, 2, LEASE), 0);
	CU_ASSERT_EQUAL(oss_lock_release_owner(ls, 1), 0);
	CU_ASSERT_EQUAL(oss_watch_stop(ls, &fid_a, 1), -ENOENT);
	CU_ASSERT_EQUAL(oss_watch_stop(ls, &fid_b, 1), -ENOENT);
	CU_ASSERT_EQUAL(oss_watch_stop(ls, &fid_a, 2), 0);
	oss_locks_free(ls);
}

static void test_threads(void)
{
	static unsigned long counters[N_ROWS];
	struct oss_locks *ls = new_locks(0);
	struct worker w[N_THREADS];
	pthread_t tid[N_THREADS];
	unsigned long total = 0;

	for (int i = 0; i < N_THREADS; i++) {
		w[i] = (struct worker){ .w_locks = ls,
					.w_owner = (uint64_t)i + 1,
					.w_counters = counters };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[i], NULL, worker_main,
						     &w[i]), 0);
	}
	for (int i = 0; i < N_THREADS; i++) {
		pthread_join(tid[i], NULL);
		CU_ASSERT_EQUAL(w[i].w_errors, 0);
	}
	for (int r = 0; r < N_ROWS; r++)
		total += counters[r];
	CU_ASSERT_EQUAL(total, (unsigned long)N_THREADS * N_ROUNDS);
	CU_ASSERT_EQUAL(oss_locks_held(ls), 0);
	oss_locks_free(ls);
}

int main(void)
{
	CU_pSuite suite;
	unsigned int failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite("rowlock", NULL, NULL);
	if (!suite ||
	    !CU_add_test(suite, "grant and conflict", test_grant_conflict) ||
	    !CU_add_test(suite, "same owner merges and extends",
			 test_same_owner) ||
	    !CU_add_test(suite, "release and split", test_release) ||
	    !CU_add_test(suite, "release by owner", test_release_owner) ||
	    !CU_add_test(suite, "lease expiry", test_expiry) ||
	    !CU_add_test(suite, "bounded table", test_bounded) ||
	    !CU_add_test(suite, "watch records other owners' locks", test_watch_records) ||
	    !CU_add_test(suite, "watch overflow merges", test_watch_overflow) ||
	    !CU_add_test(suite, "watch lease and owner", test_watch_lease) ||
	    !CU_add_test(suite, "concurrent threads", test_threads)) {
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
