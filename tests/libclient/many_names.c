/* SPDX-License-Identifier: MIT */
/*
 * many_names: creates or removes many empty files in one directory of a
 * running filesystem through libnacre, from several threads, for the
 * end-to-end suites (tests/e2e/test_names.sh).
 *
 *   many_names --mds ADDR --fsname NAME --dir /PATH (--create | --unlink)
 *              [--first N] --count N [--threads T] [--prefix P]
 *
 * Names are P followed by the number in six or more digits ("e000042"),
 * numbers first .. first + count - 1.  Creates are exclusive: a name that
 * exists already is an error.  Through a mount the kernel takes one
 * create or unlink at a time in a directory, each waiting for its own
 * durable MDS commit; here the threads' requests share commits (the MDS's
 * group commit), which is what makes a directory of 100,000 entries quick
 * to fill.  Prints what it did; exit status 0 when every name went, 1 on
 * any failure, 2 for bad arguments.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "libclient/nacre.h"

#define MN_MAX_THREADS 64

struct mn_args {
	const char *ma_mds, *ma_fsname, *ma_dir, *ma_prefix;
	bool ma_create, ma_unlink;
	unsigned long ma_first, ma_count;
	int ma_threads;
};

struct mn_run {
	const struct mn_args *mr_args;
	struct nacre_fs *mr_fs;
	struct nacre_fid mr_dir;
	atomic_ulong mr_next;           /* the next number to take */
	atomic_ulong mr_done;
	atomic_int mr_failed;
};

static int mn_usage(void)
{
	fprintf(stderr, "usage: many_names --mds ADDR --fsname NAME --dir /PATH "
			"(--create | --unlink)\n"
			"                  [--first N] --count N [--threads T] [--prefix P]\n");
	return 2;
}

static bool mn_ulong(const char *s, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return !errno && *s && !*end;
}

static int mn_parse(int ac, char **av, struct mn_args *a)
{
	static const struct option opts[] = {
		{ "mds", required_argument, NULL, 'm' },
		{ "fsname", required_argument, NULL, 'f' },
		{ "dir", required_argument, NULL, 'd' },
		{ "create", no_argument, NULL, 'c' },
		{ "unlink", no_argument, NULL, 'u' },
		{ "first", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "prefix", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int c;

	memset(a, 0, sizeof(*a));
	a->ma_threads = 8;
	a->ma_prefix = "e";
	a->ma_count = ~0ul;
	while ((c = getopt_long(ac, av, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			a->ma_mds = optarg;
			break;
		case 'f':
			a->ma_fsname = optarg;
			break;
		case 'd':
			a->ma_dir = optarg;
			break;
		case 'c':
			a->ma_create = true;
			break;
		case 'u':
			a->ma_unlink = true;
			break;
		case 'F':
			if (!mn_ulong(optarg, &a->ma_first))
				return mn_usage();
			break;
		case 'n':
			if (!mn_ulong(optarg, &a->ma_count))
				return mn_usage();
			break;
		case 't':
			if (!mn_ulong(optarg, &v) || v < 1 || v > MN_MAX_THREADS)
				return mn_usage();
			a->ma_threads = (int)v;
			break;
		case 'p':
			a->ma_prefix = optarg;
			break;
		default:
			return mn_usage();
		}
	}
	if (optind != ac || !a->ma_mds || !a->ma_fsname || !a->ma_dir ||
	    a->ma_create == a->ma_unlink || a->ma_count == ~0ul ||
	    strlen(a->ma_prefix) > 200)
		return mn_usage();
	return 0;
}

static void *mn_worker(void *arg)
{
	struct mn_run *r = arg;
	const struct mn_args *a = r->mr_args;
	char name[256];

	for (;;) {
		unsigned long i = atomic_fetch_add(&r->mr_next, 1);
		int rc;

		if (i >= a->ma_count || atomic_load(&r->mr_failed))
			break;
		snprintf(name, sizeof(name), "%s%06lu", a->ma_prefix, a->ma_first + i);
		if (a->ma_create)
			rc = nacre_mknod_at(r->mr_fs, NULL, &r->mr_dir, name, S_IFREG | 0644, 0,
					    NULL);
		else
			rc = nacre_unlink_at(r->mr_fs, NULL, &r->mr_dir, name);
		if (rc) {
			fprintf(stderr, "many_names: %s %s/%s: %s\n",
				a->ma_create ? "create" : "unlink", a->ma_dir, name, strerror(-rc));
			atomic_store(&r->mr_failed, 1);
			break;
		}
		atomic_fetch_add(&r->mr_done, 1);
	}
	return NULL;
}

int main(int ac, char **av)
{
	pthread_t th[MN_MAX_THREADS];
	struct timespec t0, t1;
	struct nacre_stat st;
	struct mn_args a;
	struct mn_run r;
	int rc, n = 0;

	rc = mn_parse(ac, av, &a);
	if (rc)
		return rc;
	memset(&r, 0, sizeof(r));
	r.mr_args = &a;
	rc = nacre_connect(a.ma_mds, a.ma_fsname, NULL, &r.mr_fs);
	if (rc) {
		fprintf(stderr, "many_names: connect to %s: %s\n", a.ma_mds, strerror(-rc));
		return 1;
	}
	rc = nacre_stat(r.mr_fs, a.ma_dir, &st);
	if (rc || !S_ISDIR(st.mode)) {
		fprintf(stderr, "many_names: %s: %s\n", a.ma_dir,
			rc ? strerror(-rc) : "not a directory");
		nacre_disconnect(r.mr_fs);
		return 1;
	}
	r.mr_dir = st.fid;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (; n < a.ma_threads; n++)
		if (pthread_create(&th[n], NULL, mn_worker, &r)) {
			fprintf(stderr, "many_names: cannot start thread %d\n", n);
			atomic_store(&r.mr_failed, 1);
			break;
		}
	while (n > 0)
		pthread_join(th[--n], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	nacre_disconnect(r.mr_fs);
	printf("many_names: %s %lu of %lu names in %s with %d threads in %.1f s\n",
	       a.ma_create ? "created" : "removed", (unsigned long)atomic_load(&r.mr_done),
	       a.ma_count, a.ma_dir, a.ma_threads,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
	return atomic_load(&r.mr_failed) || atomic_load(&r.mr_done) != a.ma_count ? 1 : 0;
}
