/* SPDX-License-Identifier: MIT */
/*
 * nacre_pread_start(): a read whose completion runs where the OST's reply
 * is received, instead of on a thread parked until it comes.
 *
 * A server of many small reads, the FUSE mount above all, would otherwise
 * put one of its threads to sleep per read: the connection's receive
 * thread wakes it when the reply is in, and it then hands the bytes on.
 * Reading a packed file is one OST request, so the receive thread can hand
 * the bytes on itself: two context switches fewer per file, which on a
 * machine whose CPUs the servers share is CPU time.  Reads of any other
 * shape take nacre_pread(); so does a started read whose OST failed, on a
 * thread of its own, as it decodes around the failure with more requests.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "libclient/cl_int.h"

struct cl_read_start {
	struct cl_piece s_piece;
	struct nacre_file *s_file;
	void *s_buf;
	size_t s_len;
	off_t s_off;
	nacre_read_done_fn s_done;
	void *s_arg;
	/* The starter's and the completion's: nc_cconn_submit() may still
	 * look at the call after the reply completed it. */
	atomic_int s_refs;
};

static void rs_put(struct cl_read_start *s)
{
	if (atomic_fetch_sub(&s->s_refs, 1) == 1)
		free(s);
}

/* A started read whose OST failed: read again the way that decodes around
 * it.  On a thread of its own, as the receive thread must not wait. */
static void *rs_again(void *arg)
{
	struct cl_read_start *s = arg;

	s->s_done(nacre_pread(s->s_file, s->s_buf, s->s_len, s->s_off), s->s_arg);
	rs_put(s);
	return NULL;
}

static void rs_done(struct nc_call *call)
{
	struct cl_read_start *s = call->c_priv;
	struct nacre_fs *fs = s->s_file->f_fs;
	int st = call->c_status;
	pthread_t th;

	cl_ost_note_result(fs, s->s_piece.ip_req.or_ost, st);
	if (!st && call->c_rep_bulk_len < s->s_len)
		memset((char *)s->s_buf + call->c_rep_bulk_len, 0,
		       s->s_len - call->c_rep_bulk_len); /* a hole: zeros */
	nc_call_fini(call);
	if (!st) {
		cl_count(fs, CL_CTR_READS, 1);
		cl_count(fs, CL_CTR_READ_BYTES, s->s_len);
		s->s_done((ssize_t)s->s_len, s->s_arg);
		rs_put(s);
		return;
	}
	if (!pthread_create(&th, NULL, rs_again, s)) {
		pthread_detach(th);
		return;
	}
	s->s_done(-EIO, s->s_arg); /* no thread to read it again */
	rs_put(s);
}

NACRE_API int nacre_pread_start(struct nacre_file *f, void *buf, size_t len, off_t off,
				nacre_read_done_fn done, void *arg)
{
	struct cl_read_start *s;
	struct nc_layout l;
	struct nc_fid ofid;
	uint64_t have;
	bool packed;
	int rc;

	if (!f || !done || off < 0 || (f->f_flags & O_ACCMODE) == O_WRONLY)
		return -EAGAIN;
	pthread_mutex_lock(&f->f_lock);
	packed = !f->f_pend && !f->f_inline && (f->f_layout.l_flags & NC_LAYOUT_PACKED);
	pthread_mutex_unlock(&f->f_lock);
	if (!packed)
		return -EAGAIN;
	/* The extent's length is the size until the next open. */
	have = f->f_layout.l_pack_len;
	if ((uint64_t)off >= have || len == 0)
		return -EAGAIN;
	if (len > have - (uint64_t)off)
		len = (size_t)(have - (uint64_t)off);
	if (len > NC_MAX_BULK)
		return -EAGAIN;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -EAGAIN;
	if (!cl_one_piece(&f->f_fid, &f->f_layout, (uint64_t)off, (uint32_t)len, &ofid, &l,
			  &s->s_piece.ip_ext) ||
	    cl_ost_is_silent(f->f_fs, l.l_shards[s->s_piece.ip_ext.e_stripe].ls_ost) ||
	    cl_piece_prepare(f->f_fs, &ofid, &l, &s->s_piece, NC_OP_OBJ_READ)) {
		free(s);
		return -EAGAIN;
	}
	s->s_file = f;
	s->s_buf = buf;
	s->s_len = len;
	s->s_off = off;
	s->s_done = done;
	s->s_arg = arg;
	atomic_init(&s->s_refs, 2);
	s->s_piece.ip_call.c_bulk_dst = buf;
	s->s_piece.ip_call.c_bulk_dst_cap = (uint32_t)len;
	s->s_piece.ip_call.c_done = rs_done;
	s->s_piece.ip_call.c_priv = s;
	rc = nc_cconn_submit(s->s_piece.ip_conn, &s->s_piece.ip_call);
	if (rc) {
		/* Never queued, so it never completes: the caller reads. */
		nc_call_fini(&s->s_piece.ip_call);
		free(s);
		return -EAGAIN;
	}
	rs_put(s);
	return 0;
}
