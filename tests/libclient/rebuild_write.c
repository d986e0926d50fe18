/* SPDX-License-Identifier: MIT */
/*
 * rebuild_write: rebuilds a file of a running filesystem while the same
 * process writes it through the same connection (struct nacre_fs), for
 * tests/e2e/test_ec.sh.  A data loader that repairs its own files does
 * this; the rebuild must hold its writers back and redo what they wrote,
 * as it does for other clients.
 *
 *   rebuild_write --mds ADDR --fsname NAME --path /FILE --chunk BYTES
 *                 --at ROWS ROW...
 *
 * A thread runs nacre_rebuild_fid() on /FILE; once it reports --at rows
 * done, it waits there (in its progress callback, between rows, holding
 * no lock) while the main thread rewrites each ROW whole (4 chunks, a row
 * of a 4+2 layout of --chunk bytes) with byte i of row r being
 * (i + 17 r) mod 256, fsyncs and closes; then the rebuild goes on.
 * Prints one JSON object: the rebuild's result and stats, and the rows
 * written.  Exit status 0 when both succeeded, 1 otherwise, 2 for bad
 * arguments.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libclient/nacre.h"

#define RW_MAX_ROWS 16

struct rw_state {
	struct nacre_fs *rw_fs;
	struct nacre_fid rw_fid;
	uint64_t rw_at;
	pthread_mutex_t rw_lock;
	pthread_cond_t rw_cond;
	bool rw_paused;                 /* the rebuild waits in its callback */
	bool rw_go;                     /* the writes are done */
	int rw_rc;
	struct nacre_repair_stats rw_st;
};

static void rw_progress(uint64_t done, uint64_t total, void *arg)
{
	struct rw_state *s = arg;

	(void)total;
	if (done != s->rw_at)
		return;
	pthread_mutex_lock(&s->rw_lock);
	s->rw_paused = true;
	pthread_cond_broadcast(&s->rw_cond);
	while (!s->rw_go)
		pthread_cond_wait(&s->rw_cond, &s->rw_lock);
	pthread_mutex_unlock(&s->rw_lock);
}

static void *rw_rebuild(void *arg)
{
	struct rw_state *s = arg;

	s->rw_rc = nacre_rebuild_fid(s->rw_fs, &s->rw_fid, NACRE_OST_ANY, rw_progress, s,
				     &s->rw_st);
	/* A rebuild that ended before --at rows lets the writer go on. */
	pthread_mutex_lock(&s->rw_lock);
	s->rw_paused = true;
	pthread_cond_broadcast(&s->rw_cond);
	pthread_mutex_unlock(&s->rw_lock);
	return NULL;
}

static int rw_write_rows(struct nacre_fs *fs, const char *path, size_t chunk,
			 const uint64_t *rows, int n)
{
	size_t len = 4 * chunk;
	struct nacre_file *f = NULL;
	char *buf = malloc(len);
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = nacre_open(fs, path, O_WRONLY, 0, &f);
	for (int k = 0; rc == 0 && k < n; k++) {
		ssize_t w;

		for (size_t i = 0; i < len; i++)
			buf[i] = (char)((i + 17 * rows[k]) & 0xff);
		w = nacre_pwrite(f, buf, len, (off_t)(rows[k] * len));
		if (w < 0)
			rc = (int)w;
		else if ((size_t)w != len)
			rc = -EIO;
	}
	if (rc == 0) {
		rc = nacre_fsync(f);
		if (nacre_close(f) < 0 && rc == 0)
			rc = -EIO;
	} else if (f) {
		nacre_close(f);
	}
	free(buf);
	return rc;
}

static int rw_usage(void)
{
	fprintf(stderr, "usage: rebuild_write --mds ADDR --fsname NAME --path /FILE --chunk BYTES "
			"--at ROWS ROW...\n");
	return 2;
}

int main(int ac, char **av)
{
	static const struct option opts[] = {
		{ "mds", required_argument, NULL, 'm' },
		{ "fsname", required_argument, NULL, 'f' },
		{ "path", required_argument, NULL, 'p' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "at", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const char *mds = NULL, *fsname = NULL, *path = NULL;
	struct rw_state s = { .rw_lock = PTHREAD_MUTEX_INITIALIZER,
			      .rw_cond = PTHREAD_COND_INITIALIZER };
	uint64_t rows[RW_MAX_ROWS];
	struct nacre_stat st;
	size_t chunk = 0;
	pthread_t th;
	int c, n = 0, wrc, rc;

	while ((c = getopt_long(ac, av, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm': mds = optarg; break;
		case 'f': fsname = optarg; break;
		case 'p': path = optarg; break;
		case 'c': chunk = strtoul(optarg, NULL, 0); break;
		case 'a': s.rw_at = strtoull(optarg, NULL, 0); break;
		default: return rw_usage();
		}
	}
	for (; optind < ac && n < RW_MAX_ROWS; optind++)
		rows[n++] = strtoull(av[optind], NULL, 0);
	if (!mds || !fsname || !path || !chunk || !s.rw_at || n == 0 || optind < ac)
		return rw_usage();
	rc = nacre_connect(mds, fsname, NULL, &s.rw_fs);
	if (rc == 0)
		rc = nacre_stat(s.rw_fs, path, &st);
	if (rc < 0) {
		fprintf(stderr, "rebuild_write: %s: %s\n", path, nacre_strerror(rc));
		nacre_disconnect(s.rw_fs);
		return 1;
	}
	s.rw_fid = st.fid;
	rc = pthread_create(&th, NULL, rw_rebuild, &s);
	if (rc) {
		fprintf(stderr, "rebuild_write: pthread_create: %s\n", strerror(rc));
		nacre_disconnect(s.rw_fs);
		return 1;
	}
	pthread_mutex_lock(&s.rw_lock);
	while (!s.rw_paused)
		pthread_cond_wait(&s.rw_cond, &s.rw_lock);
	pthread_mutex_unlock(&s.rw_lock);
	wrc = rw_write_rows(s.rw_fs, path, chunk, rows, n);
	pthread_mutex_lock(&s.rw_lock);
	s.rw_go = true;
	pthread_cond_broadcast(&s.rw_cond);
	pthread_mutex_unlock(&s.rw_lock);
	pthread_join(th, NULL);
	printf("{\"rebuild\": %d, \"write\": %d, \"rows\": %" PRIu64 ", \"chunks_fixed\": %" PRIu64
	       ", \"shards_cleared\": %" PRIu64 "}\n", s.rw_rc, wrc, s.rw_st.rows,
	       s.rw_st.chunks_fixed, s.rw_st.shards_cleared);
	if (s.rw_rc < 0)
		fprintf(stderr, "rebuild_write: rebuild: %s\n", nacre_strerror(s.rw_rc));
	if (wrc < 0)
		fprintf(stderr, "rebuild_write: write: %s\n", nacre_strerror(wrc));
	nacre_disconnect(s.rw_fs);
	return s.rw_rc < 0 || wrc < 0 ? 1 : 0;
}
