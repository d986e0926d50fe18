/* SPDX-License-Identifier: MIT */
/*
 * nacre_read_many(): whole-file reads of many (small) files with many in
 * flight.
 *
 * The fast path takes the requests in windows of up to 128: one LOOKUP_MANY
 * request opens every name of the window at the MDS (attributes and
 * layouts), then each file that lies in one chunk of one object - a packed
 * file, or any file smaller than a chunk - is one OBJ_READ, and all of the
 * window's reads are sent at once and land straight in the callers'
 * buffers; an inline file's bytes come with the LOOKUP_MANY reply itself
 * (those a reply had no room for are asked for in another LOOKUP_MANY).
 * Whatever does not fit that path (larger files, a shard marked
 * stale, an OST that failed, a symbolic link, a file only this client
 * holds yet, an OST that timed out lately) is read by a pool of threads,
 * each with nacre_open() and nacre_pread(), which decode around failures
 * as any read does.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/errors.h"
#include "libclient/cl_int.h"

#define RM_DEPTH_DEFAULT 256u
#define RM_THREADS_MAX 64u              /* each one's stack is memory */

/* ---- the slow path: a pool of synchronous readers ---- */

struct rm_job {
	struct nacre_fs *j_fs;
	struct nacre_read_req **j_reqs;
	size_t j_n;
	atomic_size_t j_next;
};

static void rm_one(struct nacre_fs *fs, struct nacre_read_req *r)
{
	struct nacre_file *f;
	struct nacre_stat st;
	size_t done = 0, want;
	int rc;

	r->size = 0;
	rc = nacre_open(fs, r->path, O_RDONLY, 0, &f);
	if (rc < 0) {
		r->result = rc;
		return;
	}
	nacre_file_open_stat(f, &st);
	r->size = st.size;
	want = st.size < r->cap ? (size_t)st.size : r->cap;
	while (done < want) {
		ssize_t got = nacre_pread(f, (char *)r->buf + done, want - done, (off_t)done);

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
		rm_one(j->j_fs, j->j_reqs[i]);
	return NULL;
}

static void rm_pool(struct nacre_fs *fs, struct nacre_read_req **reqs, size_t n,
		    unsigned int depth)
{
	struct rm_job job = { .j_fs = fs, .j_reqs = reqs, .j_n = n };
	pthread_t th[RM_THREADS_MAX];
	unsigned int nth, started = 0;

	if (n == 0)
		return;
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
}

/* ---- the fast path: a window of one-piece files ---- */

struct rm_win {
	struct nc_lookup_many w_lm;
	struct nc_lookup_ent w_ents[NC_LOOKUP_MANY_MAX];
	struct nacre_read_req *w_req[NC_LOOKUP_MANY_MAX];
	struct cl_piece w_pieces[NC_LOOKUP_MANY_MAX];
	uint32_t w_piece_of[NC_LOOKUP_MANY_MAX];        /* entry of each piece */
	uint32_t w_want[NC_LOOKUP_MANY_MAX];            /* bytes wanted */
};

/* The one piece that holds all @len bytes of the file, or false. */
static bool rm_one_piece(const struct nc_attr_rep *rep, uint32_t len, struct nc_fid *ofid,
			 struct nc_layout *l, struct nc_extent *ext)
{
	return rep->ar_has_layout &&
	       cl_one_piece(&rep->ar_attr.a_fid, &rep->ar_layout, 0, len, ofid, l, ext);
}

/* Reads what it can of @w's entries; those it cannot go to @slow.  Returns
 * how many inline files came without their bytes (the reply had no room
 * left): they are moved to the front of @w for another LOOKUP_MANY. */
static uint32_t rm_window_once(struct nacre_fs *fs, struct rm_win *w, uint32_t n,
			       struct nacre_read_req **slow, size_t *nslow)
{
	uint32_t redo[NC_LOOKUP_MANY_MAX];
	uint32_t np = 0, nredo = 0;
	struct nc_call call;
	int rc;

	w->w_lm.lm_cred = fs->fs_cred;
	w->w_lm.lm_count = n;
	w->w_lm.lm_ents = w->w_ents;
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_LOOKUP_MANY, (nc_xdr_fn)nc_wire_lookup_many_req,
			  &w->w_lm, (nc_xdr_fn)nc_wire_lookup_many_rep, &w->w_lm, &call);
	if (rc == 0 && w->w_lm.lm_count != n) {
		nc_call_fini(&call);
		rc = -NC_E_PROTO;
	}
	if (rc) {
		/* A server without it, or a failure: the slow path for all. */
		for (uint32_t i = 0; i < n; i++)
			slow[(*nslow)++] = w->w_req[i];
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct nacre_read_req *r = w->w_req[i];
		struct nc_lookup_ent *e = &w->w_ents[i];
		const struct nc_attr *a = &e->le_rep.ar_attr;
		int s = nc_err_from_status(e->le_status);
		struct nc_layout l;
		struct nc_fid ofid;
		struct cl_piece *p;
		uint64_t want;

		if (s && s != -ENOENT && s != -EACCES && s != -ENOTDIR) {
			slow[(*nslow)++] = r; /* ELOOP and friends: let open decide */
			continue;
		}
		if (s) {
			r->result = s;
			continue;
		}
		if (!S_ISREG(a->a_mode)) {
			if (S_ISDIR(a->a_mode))
				r->result = -EISDIR;
			else
				slow[(*nslow)++] = r; /* a symbolic link: follow it */
			continue;
		}
		r->size = a->a_size;
		want = a->a_size < r->cap ? a->a_size : r->cap;
		if (want == 0) {
			r->result = 0;
			continue;
		}
		if (e->le_rep.ar_has_layout && (e->le_rep.ar_layout.l_flags & NC_LAYOUT_INLINE)) {
			/* The bytes came along (they point into the reply); a
			 * reply that had no room left for them: asked again. */
			if (!e->le_rep.ar_inline_sent) {
				redo[nredo++] = i;
				continue;
			}
			if (e->le_rep.ar_inline_len != a->a_size) {
				slow[(*nslow)++] = r;
				continue;
			}
			memcpy(r->buf, e->le_rep.ar_inline, want);
			r->result = (ssize_t)want;
			continue;
		}
		p = &w->w_pieces[np];
		/* An OST that timed out lately is not waited for again: the slow
		 * path decodes around it. */
		if (want > NC_MAX_BULK || !rm_one_piece(&e->le_rep, (uint32_t)want, &ofid, &l,
							&p->ip_ext) ||
		    cl_ost_is_silent(fs, l.l_shards[p->ip_ext.e_stripe].ls_ost) ||
		    cl_piece_prepare(fs, &ofid, &l, p, NC_OP_OBJ_READ)) {
			slow[(*nslow)++] = r;
			continue;
		}
		p->ip_call.c_bulk_dst = r->buf;
		p->ip_call.c_bulk_dst_cap = (uint32_t)want;
		w->w_piece_of[np] = i;
		w->w_want[np] = (uint32_t)want;
		np++;
	}
	nc_call_fini(&call);
	cl_pieces_run(w->w_pieces, (int)np, false);
	for (uint32_t j = 0; j < np; j++) {
		struct cl_piece *p = &w->w_pieces[j];
		struct nacre_read_req *r = w->w_req[w->w_piece_of[j]];

		cl_ost_note_result(fs, p->ip_req.or_ost, p->ip_call.c_status);
		if (p->ip_call.c_status) {
			slow[(*nslow)++] = r; /* decoded there */
			continue;
		}
		/* An object shorter than the file holds a hole: zeros. */
		if (p->ip_call.c_rep_bulk_len < w->w_want[j])
			memset((char *)r->buf + p->ip_call.c_rep_bulk_len, 0,
			       w->w_want[j] - p->ip_call.c_rep_bulk_len);
		r->result = w->w_want[j];
	}
	cl_pieces_fini(w->w_pieces, (int)np);
	/* In order, so no entry is overwritten before it moves. */
	for (uint32_t k = 0; k < nredo; k++) {
		struct nc_lookup_ent *e = &w->w_ents[redo[k]];

		w->w_ents[k].le_parent = e->le_parent;
		if (k != redo[k])
			strcpy(w->w_ents[k].le_name, e->le_name);
		w->w_req[k] = w->w_req[redo[k]];
	}
	return nredo;
}

/* A window, and again what its replies had no room for: every reply
 * carries at least one file's inline bytes, so each round gets somewhere. */
static void rm_window(struct nacre_fs *fs, struct rm_win *w, uint32_t n,
		      struct nacre_read_req **slow, size_t *nslow)
{
	while (n) {
		uint32_t again = rm_window_once(fs, w, n, slow, nslow);

		if (again == n) {
			for (uint32_t i = 0; i < n; i++)
				slow[(*nslow)++] = w->w_req[i];
			return;
		}
		n = again;
	}
}

NACRE_API int nacre_read_many(struct nacre_fs *fs, struct nacre_read_req *reqs, size_t n,
			      unsigned int depth)
{
	struct nacre_read_req **slow;
	struct rm_win *w;
	size_t nslow = 0, i = 0;
	uint32_t win;

	if (!fs || (n && !reqs))
		return -EINVAL;
	for (size_t j = 0; j < n; j++) {
		if (!reqs[j].path || (!reqs[j].buf && reqs[j].cap))
			return -EINVAL;
		reqs[j].result = -ECANCELED; /* until it is tried */
		reqs[j].size = 0;
	}
	if (n == 0)
		return 0;
	if (depth == 0)
		depth = RM_DEPTH_DEFAULT;
	win = depth < NC_LOOKUP_MANY_MAX ? depth : NC_LOOKUP_MANY_MAX;
	slow = calloc(n, sizeof(*slow));
	w = malloc(sizeof(*w));
	if (!slow || !w) {
		free(slow);
		free(w);
		return -ENOMEM;
	}
	while (i < n) {
		uint32_t k = 0;

		for (; i < n && k < win; i++) {
			struct nacre_read_req *r = &reqs[i];
			struct nc_lookup_ent *e = &w->w_ents[k];
			struct nc_attr pend;

			/* The directories come from the name cache; a name only
			 * this client holds yet takes the slow path. */
			if (cl_resolve_parent(fs, &fs->fs_cred, r->path, &e->le_parent,
					      e->le_name) ||
			    cl_pack_lookup(fs, &e->le_parent, e->le_name, &pend)) {
				slow[nslow++] = r;
				continue;
			}
			w->w_req[k++] = r;
		}
		if (k)
			rm_window(fs, w, k, slow, &nslow);
	}
	free(w);
	rm_pool(fs, slow, nslow, depth);
	free(slow);
	return 0;
}
