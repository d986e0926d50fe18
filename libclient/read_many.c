/* SPDX-License-Identifier: MIT */
/*
 * nacre_read_many(): whole-file reads of many (small) files with many in
 * flight.  A pool of threads (min(depth, 64)) takes requests from a shared
 * counter; each thread's open, read and close are synchronous, so N threads
 * keep N files in flight, spread over the MDS and every OST.  The order of
 * completion follows the servers, not the array.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "libclient/cl_int.h"

#define RM_DEPTH_DEFAULT 256u
#define RM_THREADS_MAX 64u              /* each one's stack is memory */

struct rm_job {
	struct nacre_fs *j_fs;
	struct nacre_read_req *j_reqs;
	size_t j_n;
	atomic_size_t j_next;
};

static void rm_one(struct nacre_fs *fs, struct nacre_read_req *r)
{
	struct nacre_file *f;
	struct nacre_stat st;
	size_t done = 0;
	int rc;

	r->size = 0;
	rc = nacre_open(fs, r->path, O_RDONLY, 0, &f);
	if (rc < 0) {
		r->result = rc;
		return;
	}
	nacre_file_open_stat(f, &st);
	r->size = st.size;
	while (done < r->cap && done < st.size) {
		ssize_t got = nacre_pread(f, (char *)r->buf + done, r->cap - done, (off_t)done);

		if (got < 0) {
			rc = (int)got;
			break;
		}
		if (got == 0)
			break;
		done += (size_t)got;
	}
	nacre_close(f);
	r->result = rc < 0 ? rc : (ssize_t)done;
}

static void *rm_worker(void *arg)
{
	struct rm_job *j = arg;
	size_t i;

	while ((i = atomic_fetch_add(&j->j_next, 1)) < j->j_n)
		rm_one(j->j_fs, &j->j_reqs[i]);
	return NULL;
}

NACRE_API int nacre_read_many(struct nacre_fs *fs, struct nacre_read_req *reqs, size_t n,
			      unsigned int depth)
{
	struct rm_job job = { .j_fs = fs, .j_reqs = reqs, .j_n = n };
	pthread_t th[RM_THREADS_MAX];
	unsigned int nth, started = 0;

	if (!fs || (n && !reqs))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!reqs[i].path || (!reqs[i].buf && reqs[i].cap))
			return -EINVAL;
		reqs[i].result = -ECANCELED; /* until it is tried */
	}
	if (n == 0)
		return 0;
	if (depth == 0)
		depth = RM_DEPTH_DEFAULT;
	nth = depth < RM_THREADS_MAX ? depth : RM_THREADS_MAX;
	if (nth > n)
		nth = (unsigned int)n;
	atomic_init(&job.j_next, 0);
	for (unsigned int t = 1; t < nth; t++) {
		if (pthread_create(&th[t], NULL, rm_worker, &job))
			break;
		started++;
	}
	rm_worker(&job); /* this thread is one of the pool */
	for (unsigned int t = 1; t <= started; t++)
		pthread_join(th[t], NULL);
	return 0;
}
