/* SPDX-License-Identifier: MIT */
/*
 * nacre-bench helpers: the data pattern and its verification, clocks,
 * per-request latencies, dropping the page cache, and threads that start
 * together.
 *
 * The pattern must be cheap enough that checking every byte read does not
 * bound the figures on a small machine, yet tell apart any two offsets of
 * any two files.  Byte OFF of file F is byte OFF % 1 MiB of one fixed
 * xorshift64 stream, xor-ed with a 64-bit tag mixed (splitmix64) from F and
 * OFF / 1 MiB: data moved within a block breaks the stream, data moved
 * across blocks or files breaks the tag.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define BD_BLOCK (1u << 20)
#define BD_WORDS (BD_BLOCK / 8)

static uint64_t bd_stream[BD_WORDS];
static pthread_once_t bd_stream_once = PTHREAD_ONCE_INIT;

static atomic_bool bd_corrupt;
static atomic_bool bd_mismatch;
static pthread_mutex_t bd_mismatch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char bm_target[16];
	char bm_file[PATH_MAX + 64];
	uint64_t bm_off;
	unsigned int bm_expected;
	unsigned int bm_got;
} bd_first;

/* ---- the pattern ---- */

static void bd_stream_init(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t i;

	for (i = 0; i < BD_WORDS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		bd_stream[i] = x;
	}
}

static uint64_t bd_tag(uint32_t file, uint64_t block)
{
	uint64_t z = ((uint64_t)file << 40) ^ block ^ 0x6e616372652d626eull;

	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The 8 bytes at @off (a multiple of 8), in little-endian order. */
static uint64_t bd_word(uint32_t file, uint64_t off)
{
	return bd_stream[(off % BD_BLOCK) / 8] ^ bd_tag(file, off / BD_BLOCK);
}

static unsigned int bd_byte(uint32_t file, uint64_t off)
{
	return (bd_word(file, off & ~7ull) >> ((off & 7) * 8)) & 0xff;
}

static bool bd_is_aligned(const void *buf, size_t len, uint64_t off)
{
	return ((uintptr_t)buf % 8) == 0 && len % 8 == 0 && off % 8 == 0;
}

void bench_pattern_fill(void *buf, size_t len, uint32_t file, uint64_t off)
{
	unsigned char *p = buf;
	uint64_t *w = buf;
	size_t i;

	pthread_once(&bd_stream_once, bd_stream_init);
	if (!bd_is_aligned(buf, len, off)) {
		for (i = 0; i < len; i++)
			p[i] = bd_byte(file, off + i);
		return;
	}
	/* A block's tag is fixed: compute it once per block, not per word. */
	for (i = 0; i < len / 8;) {
		uint64_t o = off + i * 8;
		uint64_t tag = bd_tag(file, o / BD_BLOCK);
		size_t w0 = (o % BD_BLOCK) / 8;
		size_t n = BD_WORDS - w0;
		size_t j;

		if (n > len / 8 - i)
			n = len / 8 - i;
		for (j = 0; j < n; j++)
			w[i + j] = bd_stream[w0 + j] ^ tag;
		i += n;
	}
}

/* Keeps the first mismatch of the run for the report. */
static void bd_mismatch_note(const struct bench_target *t, const char *name,
			     uint64_t off, unsigned int expected,
			     unsigned int got)
{
	pthread_mutex_lock(&bd_mismatch_lock);
	if (!atomic_load(&bd_mismatch)) {
		snprintf(bd_first.bm_target, sizeof(bd_first.bm_target), "%s",
			 t->bt_name);
		snprintf(bd_first.bm_file, sizeof(bd_first.bm_file), "%s/%s",
			 t->bt_dir, name);
		bd_first.bm_off = off;
		bd_first.bm_expected = expected;
		bd_first.bm_got = got;
		atomic_store(&bd_mismatch, true);
	}
	pthread_mutex_unlock(&bd_mismatch_lock);
}

static size_t bd_first_bad(const unsigned char *p, size_t len, uint32_t file,
			   uint64_t off, bool flip)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned int want = bd_byte(file, off + i);

		if (i == 0 && flip)
			want ^= 0xff;
		if (p[i] != want)
			return i;
	}
	return len;
}

static bool bd_words_match(const uint64_t *w, size_t len, uint32_t file,
			   uint64_t off)
{
	size_t i;

	for (i = 0; i < len / 8;) {
		uint64_t o = off + i * 8;
		uint64_t tag = bd_tag(file, o / BD_BLOCK);
		size_t w0 = (o % BD_BLOCK) / 8;
		size_t n = BD_WORDS - w0;
		uint64_t diff = 0;
		size_t j;

		if (n > len / 8 - i)
			n = len / 8 - i;
		/* Or the differences together: no branch per word. */
		for (j = 0; j < n; j++)
			diff |= w[i + j] ^ bd_stream[w0 + j] ^ tag;
		if (diff != 0)
			return false;
		i += n;
	}
	return true;
}

bool bench_pattern_check(const void *buf, size_t len, uint32_t file,
			 uint64_t off, const struct bench_target *t,
			 const char *name)
{
	const unsigned char *p = buf;
	bool flip;
	size_t bad;

	pthread_once(&bd_stream_once, bd_stream_init);
	/* --self-test-corrupt: the first check of the run expects one byte
	 * flipped, so that a working verifier must fail. */
	flip = atomic_exchange(&bd_corrupt, false);
	if (!flip && bd_is_aligned(buf, len, off) &&
	    bd_words_match(buf, len, file, off))
		return true;
	bad = bd_first_bad(p, len, file, off, flip);
	if (bad == len)
		return true;
	bd_mismatch_note(t, name, off + bad,
			 bd_byte(file, off + bad) ^ (bad == 0 && flip ? 0xff : 0),
			 p[bad]);
	return false;
}

void bench_set_corrupt(bool on)
{
	atomic_store(&bd_corrupt, on);
}

bool bench_mismatch_seen(void)
{
	return atomic_load(&bd_mismatch);
}

void bench_mismatch_report(void)
{
	if (!atomic_load(&bd_mismatch))
		return;
	fprintf(stderr,
		"nacre-bench: DATA MISMATCH: %s: file %s offset %" PRIu64
		": expected 0x%02x, got 0x%02x\n",
		bd_first.bm_target, bd_first.bm_file, bd_first.bm_off,
		bd_first.bm_expected, bd_first.bm_got);
}

/* ---- clocks and buffers ---- */

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void *bench_buf_alloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, BENCH_ALIGN, len) != 0)
		return NULL;
	/* Every page touched now, before any timing: a first touch costs a
	 * page fault (on a virtual machine with shadow page tables, one that
	 * cost more than the read into it), which is the benchmark's cost,
	 * not the target's; and a libnacre batch's buffer, used twice per
	 * phase at 500 files, would pay it where a POSIX reader's one-file
	 * buffer does not. */
	memset(p, 0, len);
	return p;
}

/* ---- latencies ---- */

int bench_lat_init(struct bench_lat *l)
{
	memset(l, 0, sizeof(*l));
	return -pthread_mutex_init(&l->bl_lock, NULL);
}

void bench_lat_fini(struct bench_lat *l)
{
	free(l->bl_v);
	pthread_mutex_destroy(&l->bl_lock);
}

int bench_lat_merge(struct bench_lat *l, const double *v, size_t n)
{
	int rc = 0;

	pthread_mutex_lock(&l->bl_lock);
	if (l->bl_n + n > l->bl_cap) {
		size_t cap = (l->bl_n + n) * 2;
		double *nv = realloc(l->bl_v, cap * sizeof(*nv));

		if (nv == NULL) {
			rc = -ENOMEM;
			goto out_unlock;
		}
		l->bl_v = nv;
		l->bl_cap = cap;
	}
	memcpy(l->bl_v + l->bl_n, v, n * sizeof(*v));
	l->bl_n += n;
out_unlock:
	pthread_mutex_unlock(&l->bl_lock);
	return rc;
}

double bench_lat_mean(const struct bench_lat *l)
{
	double sum = 0;
	size_t i;

	if (l->bl_n == 0)
		return 0;
	for (i = 0; i < l->bl_n; i++)
		sum += l->bl_v[i];
	return sum / l->bl_n;
}

static int bd_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_lat_p99(struct bench_lat *l)
{
	size_t i;

	if (l->bl_n == 0)
		return 0;
	qsort(l->bl_v, l->bl_n, sizeof(*l->bl_v), bd_cmp_double);
	/* The nearest-rank percentile: the smallest value with at least 99%
	 * of the samples at or below it. */
	i = (l->bl_n * 99 + 99) / 100;
	return l->bl_v[i - 1];
}

/* ---- stopping on a signal ---- */

static volatile sig_atomic_t bd_stop_sig;

static void bd_on_signal(int sig)
{
	bd_stop_sig = sig;
}

void bench_catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = bd_on_signal;
	/* Restarted system calls: only the bench's own calls stop, between
	 * requests, never libnacre half-way through one.  The handler is
	 * reset by the first signal, so a second one kills at once. */
	sa.sa_flags = SA_RESTART | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

int bench_stop_signal(void)
{
	return bd_stop_sig;
}

/* ---- the page cache ---- */

bool bench_drop_caches(void)
{
	ssize_t n;
	int fd;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = write(fd, "3\n", 2);
	close(fd);
	return n == 2;
}

int bench_uncached(const struct bench_run *run, const struct bench_target *t)
{
	if (run->br_drop_ok)
		bench_drop_caches();
	return run->br_direct && t->bt_has_page_cache ? O_DIRECT : 0;
}

/* ---- threads started together ---- */

static pthread_mutex_t bd_go_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bd_go_cond = PTHREAD_COND_INITIALIZER;
static unsigned int bd_ready;
static bool bd_go;

void bench_thread_ready(void)
{
	pthread_mutex_lock(&bd_go_lock);
	bd_ready++;
	pthread_cond_broadcast(&bd_go_cond);
	while (!bd_go)
		pthread_cond_wait(&bd_go_cond, &bd_go_lock);
	pthread_mutex_unlock(&bd_go_lock);
}

/* Waits until @n threads are ready, then releases them; returns the time
 * of the release.  The clock is read before the threads can run: on a
 * small machine they may finish before this thread is scheduled again. */
static double bd_release(unsigned int n)
{
	double t0;

	pthread_mutex_lock(&bd_go_lock);
	while (bd_ready < n)
		pthread_cond_wait(&bd_go_cond, &bd_go_lock);
	t0 = bench_now();
	bd_go = true;
	pthread_cond_broadcast(&bd_go_cond);
	pthread_mutex_unlock(&bd_go_lock);
	return t0;
}

double bench_run_threads(unsigned int n, bench_thread_fn fn, void *args,
			 size_t size)
{
	pthread_t tids[BENCH_MAX_THREADS];
	unsigned int i, started = 0;
	double t0, t1;
	int rc = 0;

	if (n > BENCH_MAX_THREADS)
		return -EINVAL;
	bd_ready = 0;
	bd_go = false;
	for (i = 0; i < n; i++) {
		rc = pthread_create(&tids[i], NULL, fn, (char *)args + i * size);
		if (rc != 0)
			break;
		started++;
	}
	t0 = bd_release(started);
	for (i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	t1 = bench_now();
	if (rc != 0) {
		fprintf(stderr, "nacre-bench: cannot start a thread: %s\n",
			strerror(rc));
		return -rc;
	}
	return t1 - t0;
}
