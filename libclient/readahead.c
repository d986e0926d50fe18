/* SPDX-License-Identifier: MIT */
/*
 * Sequential readahead of an open file.
 *
 * A handle that reads where its last read ended is a stream: from its
 * second such read on, the chunks ahead of it are read from their OSTs in
 * the background, one OBJ_READ per chunk, all in flight at once, into
 * chunk-sized buffers of the handle (segments).  The window ahead starts
 * at two requests and doubles with every read that continues the stream,
 * up to the handle's limit (nacre_opts.readahead_kb, 16 MiB by default).
 * A read is served from the segments that hold its bytes (waiting for one
 * still in flight) and the rest is read directly; a read elsewhere in the
 * file ends the stream and drops what was read ahead.
 *
 * Only the plain path is taken ahead: a chunk on a stale shard or an OST
 * that failed, or a segment whose read failed, is left to the direct read,
 * which decodes around the loss.  A write or truncate by any handle of this
 * client bumps the file's generation (a small hash table of counters per
 * connection), and segments read before the bump are dropped unread.
 * Other clients' writes show at the next open, as everywhere in nacre
 * (close-to-open).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/errors.h"
#include "common/layout.h"
#include "libclient/cl_int.h"

enum cl_ra_state {
	RA_FREE,
	RA_BUSY,        /* the read is in flight */
	RA_READY,
	RA_FAILED,
};

struct cl_ra_seg {
	struct cl_ra *s_ra;
	enum cl_ra_state s_state;
	bool s_dropped;         /* in flight or being copied, no longer wanted */
	unsigned int s_users;   /* readers copying out of it (without ra_lock) */
	uint32_t s_served;      /* bytes readers took from it */
	uint64_t s_off;         /* file offset; [s_off, s_off + s_len) is in one chunk */
	uint32_t s_len;
	uint64_t s_gen;         /* the file's generation when it was asked for */
	uint8_t *s_buf;         /* ra_chunk bytes, allocated on first use */
	struct cl_piece s_piece;
};

struct cl_ra {
	pthread_mutex_t ra_lock;
	pthread_cond_t ra_cond;
	uint64_t ra_next;       /* where a read continuing the stream starts */
	uint64_t ra_end;        /* read ahead up to here */
	uint64_t ra_window;     /* how far ahead of the reader to keep */
	uint64_t ra_max;
	unsigned int ra_seq;    /* reads in a row that continued the stream */
	unsigned int ra_busy;   /* segments in flight */
	uint32_t ra_chunk;
	unsigned int ra_nsegs;
	struct nacre_fs *ra_fs;
	struct cl_ra_seg ra_segs[];
};

static atomic_uint_fast64_t *ra_gen_slot(struct nacre_fs *fs, const struct nc_fid *fid)
{
	uint64_t h = fid->f_seq * 0x9e3779b97f4a7c15ull ^ fid->f_oid * 0xc2b2ae3d27d4eb4full;

	return &fs->fs_ra_gen[(h >> 32) % CL_RA_GENS];
}

void cl_ra_file_changed(struct nacre_fs *fs, const struct nc_fid *fid)
{
	atomic_fetch_add(ra_gen_slot(fs, fid), 1);
}

static uint64_t ra_gen(struct nacre_fs *fs, const struct nc_fid *fid)
{
	return atomic_load(ra_gen_slot(fs, fid));
}

/* The read of a segment ended (the connection's receive thread). */
static void ra_seg_done(struct nc_call *call)
{
	struct cl_ra_seg *s = call->c_priv;
	struct cl_ra *ra = s->s_ra;

	pthread_mutex_lock(&ra->ra_lock);
	s->s_state = call->c_status ? RA_FAILED : RA_READY;
	ra->ra_busy--;
	pthread_cond_broadcast(&ra->ra_cond);
	pthread_mutex_unlock(&ra->ra_lock);
}

/* Makes a finished segment free again (ra_lock held); what no reader
 * took from it counts as dropped. */
static void ra_seg_free(struct cl_ra_seg *s)
{
	if (s->s_len > s->s_served)
		atomic_fetch_add(&s->s_ra->ra_fs->fs_ra_dropped, s->s_len - s->s_served);
	nc_call_fini(&s->s_piece.ip_call);
	s->s_state = RA_FREE;
	s->s_dropped = false;
}

/* Drops every segment: finished ones now, those in flight when they end. */
static void ra_drop_all(struct cl_ra *ra)
{
	for (unsigned int i = 0; i < ra->ra_nsegs; i++) {
		struct cl_ra_seg *s = &ra->ra_segs[i];

		if (s->s_state == RA_BUSY || s->s_users)
			s->s_dropped = true;
		else if (s->s_state != RA_FREE)
			ra_seg_free(s);
	}
	ra->ra_end = 0;
}

/* Frees the finished segments that were dropped or that lie before @off. */
static void ra_reap(struct cl_ra *ra, uint64_t off)
{
	for (unsigned int i = 0; i < ra->ra_nsegs; i++) {
		struct cl_ra_seg *s = &ra->ra_segs[i];

		if (s->s_state == RA_FREE || s->s_state == RA_BUSY || s->s_users)
			continue;
		if (s->s_dropped || s->s_off + s->s_len <= off)
			ra_seg_free(s);
	}
}

/* Copies the segment's bytes [from, to) (file offsets) to @dst; what the
 * OST did not return lies past its object's end: a hole, zeros. */
static void ra_seg_copy(const struct cl_ra_seg *s, uint8_t *dst, uint64_t from, uint64_t to)
{
	uint64_t have = s->s_off + s->s_piece.ip_call.c_rep_bulk_len;
	uint64_t cut = have < to ? (have > from ? have : from) : to;

	memcpy(dst, s->s_buf + (from - s->s_off), cut - from);
	memset(dst + (cut - from), 0, to - cut);
}

static struct cl_ra_seg *ra_seg_at(struct cl_ra *ra, uint64_t pos)
{
	for (unsigned int i = 0; i < ra->ra_nsegs; i++) {
		struct cl_ra_seg *s = &ra->ra_segs[i];

		if (s->s_state != RA_FREE && !s->s_dropped && s->s_off <= pos &&
		    pos < s->s_off + s->s_len)
			return s;
	}
	return NULL;
}

static struct cl_ra_seg *ra_seg_free_slot(struct cl_ra *ra)
{
	for (unsigned int i = 0; i < ra->ra_nsegs; i++)
		if (ra->ra_segs[i].s_state == RA_FREE)
			return &ra->ra_segs[i];
	return NULL;
}

/* Asks for [off, off + len) (within one chunk) into a free segment.
 * False when it cannot (no room, a shard to avoid, no connection). */
static bool ra_seg_start(struct nacre_file *f, struct cl_ra *ra, const struct nc_layout *l,
			 uint64_t off, uint32_t len, uint64_t gen)
{
	struct cl_ra_seg *s = ra_seg_free_slot(ra);
	struct nc_extent ext;

	if (!s || nc_layout_map(l, off, len, &ext, 1) != 1 || ext.e_len != len)
		return false;
	if (l->l_shards[ext.e_stripe].ls_flags & (NC_SHARD_STALE | CL_SHARD_FAILED))
		return false;
	if (!s->s_buf) {
		s->s_buf = malloc(ra->ra_chunk);
		if (!s->s_buf)
			return false;
	}
	memset(&s->s_piece, 0, sizeof(s->s_piece));
	s->s_piece.ip_ext = ext;
	if (cl_piece_prepare(f->f_fs, &f->f_fid, l, &s->s_piece, NC_OP_OBJ_READ))
		return false;
	s->s_piece.ip_call.c_bulk_dst = s->s_buf;
	s->s_piece.ip_call.c_bulk_dst_cap = len;
	s->s_piece.ip_call.c_done = ra_seg_done;
	s->s_piece.ip_call.c_priv = s;
	s->s_off = off;
	s->s_len = len;
	s->s_served = 0;
	s->s_gen = gen;
	s->s_dropped = false;
	s->s_state = RA_BUSY;
	ra->ra_busy++;
	if (nc_cconn_submit(s->s_piece.ip_conn, &s->s_piece.ip_call)) {
		/* Never queued: it will never complete. */
		ra->ra_busy--;
		s->s_served = s->s_len;         /* nothing was fetched */
		ra_seg_free(s);
		return false;
	}
	atomic_fetch_add(&ra->ra_fs->fs_ra_fetched, len);
	return true;
}

/* Keeps [ra_end, @from + window) of a @size-byte file in flight. */
static void ra_fill(struct nacre_file *f, struct cl_ra *ra, const struct nc_layout *l,
		    uint64_t from, uint64_t size, uint64_t gen)
{
	uint64_t pos = ra->ra_end > from ? ra->ra_end : from;
	uint64_t stop = from + ra->ra_window < size ? from + ra->ra_window : size;

	while (pos < stop) {
		uint64_t chunk_end = (pos / ra->ra_chunk + 1) * ra->ra_chunk;
		uint32_t len = (uint32_t)((chunk_end < size ? chunk_end : size) - pos);

		if (ra_seg_at(ra, pos) == NULL && !ra_seg_start(f, ra, l, pos, len, gen))
			break;
		pos += len;
	}
	ra->ra_end = pos;
}

static struct cl_ra *ra_new(struct nacre_fs *fs, const struct nc_layout *l, uint64_t max)
{
	uint32_t chunk = l->l_stripe_size;
	unsigned int n;
	struct cl_ra *ra;

	if (chunk == 0 || max < chunk)
		return NULL;
	n = (unsigned int)(max / chunk) + 1;     /* + the one being read */
	if (n > CL_RA_MAX_SEGS)
		n = CL_RA_MAX_SEGS;
	ra = calloc(1, sizeof(*ra) + n * sizeof(ra->ra_segs[0]));
	if (!ra)
		return NULL;
	pthread_mutex_init(&ra->ra_lock, NULL);
	pthread_cond_init(&ra->ra_cond, NULL);
	ra->ra_fs = fs;
	ra->ra_chunk = chunk;
	ra->ra_nsegs = n;
	ra->ra_max = (uint64_t)(n - 1) * chunk;
	for (unsigned int i = 0; i < n; i++)
		ra->ra_segs[i].s_ra = ra;
	return ra;
}

/* Notes a read of [off, off + len) and adjusts the stream (ra_lock held). */
static void ra_track(struct cl_ra *ra, uint64_t off, size_t len, bool fresh)
{
	if (off == ra->ra_next && !fresh) {
		uint64_t w = (uint64_t)(len > ra->ra_chunk ? len : ra->ra_chunk) * 2;

		ra->ra_seq++;
		w <<= ra->ra_seq < 6 ? ra->ra_seq - 1 : 5;
		ra->ra_window = w < ra->ra_max ? w : ra->ra_max;
	} else {
		ra->ra_seq = 0;
		ra->ra_window = 0;
		ra_drop_all(ra);
	}
	ra->ra_next = off + len;
}

ssize_t cl_ra_read(struct nacre_file *f, const struct nc_layout *l, void *buf, size_t len,
		   uint64_t off, uint64_t size)
{
	uint64_t max = f->f_fs->fs_ra_max, gen, pos = off;
	struct cl_ra *ra;
	bool fresh = false;

	if (max == 0 || !l->l_stripe_count)
		return 0;
	pthread_mutex_lock(&f->f_lock);
	if (!f->f_ra) {
		f->f_ra = ra_new(f->f_fs, l, max);
		fresh = true;
	}
	ra = f->f_ra;
	pthread_mutex_unlock(&f->f_lock);
	if (!ra)
		return 0;
	gen = ra_gen(f->f_fs, &f->f_fid);
	pthread_mutex_lock(&ra->ra_lock);
	ra_track(ra, off, len, fresh);
	ra_reap(ra, off);
	while (pos < off + len) {
		struct cl_ra_seg *s = ra_seg_at(ra, pos);
		uint64_t end;

		if (!s)
			break;
		while (s->s_state == RA_BUSY)
			pthread_cond_wait(&ra->ra_cond, &ra->ra_lock);
		if (s->s_dropped)
			break;
		if (s->s_state != RA_READY || s->s_gen != gen) {
			/* The direct read decodes around a loss; a change
			 * since makes everything ahead suspect. */
			if (s->s_gen != gen)
				ra_drop_all(ra);
			else
				ra_seg_free(s);
			break;
		}
		end = s->s_off + s->s_len < off + len ? s->s_off + s->s_len : off + len;
		/* Copied without the lock: the receive threads that complete
		 * other segments never wait for a copy. */
		s->s_users++;
		pthread_mutex_unlock(&ra->ra_lock);
		ra_seg_copy(s, (uint8_t *)buf + (pos - off), pos, end);
		atomic_fetch_add(&f->f_fs->fs_ra_served, end - pos);
		pthread_mutex_lock(&ra->ra_lock);
		s->s_users--;
		s->s_served += (uint32_t)(end - pos);
		pos = end;
		if ((pos == s->s_off + s->s_len || s->s_dropped) && !s->s_users)
			ra_seg_free(s);
	}
	if (ra->ra_seq > 0)
		ra_fill(f, ra, l, off + len, size, gen);
	pthread_mutex_unlock(&ra->ra_lock);
	return (ssize_t)(pos - off);
}

NACRE_API void nacre_io_stats(struct nacre_fs *fs, struct nacre_io_stats *st)
{
	st->ra_fetched = atomic_load(&fs->fs_ra_fetched);
	st->ra_served = atomic_load(&fs->fs_ra_served);
	st->ra_dropped = atomic_load(&fs->fs_ra_dropped);
}

void cl_ra_free(struct nacre_file *f)
{
	struct cl_ra *ra = f->f_ra;

	if (!ra)
		return;
	/* Every read in flight ends (at worst by timeout or the connection's
	 * teardown) and its callback touches the segment. */
	pthread_mutex_lock(&ra->ra_lock);
	while (ra->ra_busy > 0)
		pthread_cond_wait(&ra->ra_cond, &ra->ra_lock);
	pthread_mutex_unlock(&ra->ra_lock);
	for (unsigned int i = 0; i < ra->ra_nsegs; i++) {
		if (ra->ra_segs[i].s_state != RA_FREE)
			ra_seg_free(&ra->ra_segs[i]);
		free(ra->ra_segs[i].s_buf);
	}
	pthread_cond_destroy(&ra->ra_cond);
	pthread_mutex_destroy(&ra->ra_lock);
	free(ra);
	f->f_ra = NULL;
}
