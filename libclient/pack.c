/* SPDX-License-Identifier: MIT */
/*
 * Small files: the client side of packing (see docs/design.md, "Small
 * files").
 *
 * A file created in a pack directory (or through a handle with pack_all)
 * starts as a "pend": its bytes live in client memory and the MDS knows
 * nothing of it.  Its FID comes from a range the MDS granted this client,
 * so the caller (and the kernel, for the mount) gets a stable inode number
 * at once.  When the last handle closes it, its bytes are appended to this
 * client's current pack buffer, placed so that an extent that fits in a
 * chunk does not cross one (reading it back is one OST read).  The buffer
 * is written to the pack's objects in large erasure-coded writes, synced,
 * and then the files are created on the MDS in batches (PACK_COMMIT): data
 * first, then the records that make it visible.
 *
 * That happens when the buffer fills, pack_flush_ms after a close, on
 * nacre_sync(), fsync(), nacre_disconnect(), and before any namespace
 * change or directory listing by this client (so what it lists and renames
 * is what the MDS has).  Until then the file is visible only to this client
 * (lookups, getattr and opens here see the pend); a client that dies before
 * loses those files, and never damages any other.
 *
 * A committed packed file opened for writing becomes a pend again, loaded
 * with its bytes; at its next commit it moves to a new extent
 * (PACK_SWITCH).  A pend that grows past pack_max is "unpacked": it gets
 * objects of its own (a normal layout) and every handle goes on as with
 * any file.
 *
 * One mutex guards the packer.  A flush writes the buffer to the pack's
 * objects with it released (k_flushing keeps the buffer and what is placed
 * as they are: other placements wait, lookups and reads of pends go on),
 * then commits under it.  A pack whose objects fail a write (an OST of a
 * plain pack, or more than m of an erasure-coded one, gone) is abandoned:
 * sealed with what it holds, and its buffered files go to a new pack.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/errors.h"
#include "common/log.h"
#include "libclient/cl_int.h"

#define PK_FID_BATCH 1024u
#define PK_PACK_MAX_BYTES (256ull << 20)        /* then a new pack */
/* A pack is sealed after this many flush intervals without a new file
 * (60 s with the default pack_flush_ms). */
#define PK_SEAL_IDLE_FLUSHES 60
#define PK_DIRS 64u
#define PK_DIR_TTL_MS 10000
#define PK_FLUSH_MS_DEFAULT 1000
/* Packs one flush tries before it fails (each after the last lost one). */
#define PK_WRITE_TRIES 3
/* What one PACK_COMMIT may take, counting each create's record at its
 * largest (a full name, every group, its inline bytes): NC_MAX_BODY bounds
 * the request, with room to spare. */
#define PK_COMMIT_BODY_BYTES (NC_MAX_BODY - 16u * 1024)
#define PK_CREATE_REC_MAX 520u

/* What of a directory's template lays its packs out (the MDS's
 * PACK_ALLOC): files of directories whose keys differ never share a pack,
 * so that each gets the coding its directory asks for. */
struct pk_key {
	/* A file moved or rewritten keeps its coding: the key is its layout's
	 * geometry, which PACK_ALLOC asks for, not a directory's template. */
	bool y_geometry;
	uint32_t y_stripe_size;
	uint16_t y_stripe_count;
	uint8_t y_k, y_m;
	char y_pool[NC_POOL_NAME_MAX + 1];      /* "": no pool */
};

struct cl_pend {
	struct nc_fid p_fid;
	struct nc_fid p_parent;
	char p_name[NC_NAME_MAX + 1];
	struct nc_cred p_cred;
	struct nc_attr p_attr;          /* a_size is p_len */
	uint8_t *p_data;
	size_t p_len, p_cap;
	uint32_t p_pack_max;
	/* At most this many bytes at its commit: kept inline, in the MDT,
	 * with no pack (0: never; only where the MDS speaks 1.8). */
	uint32_t p_inline_max;
	/* The packs it may go into: a new file's directory's template, a
	 * moved or rewritten one's own layout (it keeps its coding); none (an
	 * inline file grown past its limit): whichever is being filled. */
	bool p_has_key;
	struct pk_key p_key;
	int p_opens;
	bool p_new;                     /* the MDS does not know it yet */
	bool p_dirty;                   /* bytes the MDS does not have */
	bool p_placed;                  /* in the pack buffer, to commit */
	bool p_inline;                  /* placed to commit inline (no buffer) */
	uint32_t p_gen;                 /* committed inline: the MDS's l_gen */
	bool p_replace;                 /* was placed when its pack was lost */
	/* A move (conversion, compaction): bytes read from the MDS's current
	 * copy, not written by anyone here.  Its switch must find that copy
	 * still current; if a writer replaced it meanwhile, the move is
	 * dropped, never retried over the writer's bytes. */
	bool p_move;
	int p_move_rc;                  /* why its switch failed (0: not yet) */
	struct nc_layout p_old;         /* committed: the MDS's layout of it */
	uint64_t p_pack, p_off;         /* where it was placed */
	/* Unpacked: off the list, kept until its last handle lets go; the
	 * handles go on with this layout. */
	bool p_gone;
	struct nc_layout p_ulayout;
	struct cl_pend *p_next;
};

struct pk_dir {
	struct nc_fid d_fid;
	uint32_t d_pack_max;            /* 0: not a pack directory */
	uint32_t d_inline_max;
	struct pk_key d_key;
	struct nc_attr d_attr;
	int64_t d_expires;
};

/* An OST a pack write found not answering (k_lock). */
struct pk_avoid {
	uint32_t a_ost;
	int64_t a_since_ms;             /* the last failure */
	int64_t a_until_ms;
};

struct cl_packer {
	pthread_mutex_t k_lock;
	pthread_cond_t k_cond;          /* the flusher's: files placed, stop */
	pthread_cond_t k_flushed;       /* k_flushing went false */
	pthread_t k_thread;
	bool k_thread_up, k_stop;
	int k_flush_ms;
	bool k_all;
	uint32_t k_all_max;
	uint32_t k_all_inline;
	atomic_int k_npend;             /* pends that exist (a hint for hooks) */
	struct cl_pend *k_pends;
	uint64_t k_fid_next, k_fid_end;
	/* the pack being filled */
	bool k_has_pack;
	int64_t k_alloc_ms;             /* when the MDS laid it out */
	struct nc_layout k_layout;      /* of its objects; l_pack_id is the id */
	struct pk_key k_key;            /* laid out for files of this key */
	/* A file of another key waits: the next flush seals this pack. */
	bool k_seal_asked;
	uint64_t k_next;                /* next free byte of the pack */
	uint8_t *k_buf;
	size_t k_buf_cap;
	uint64_t k_base;                /* pack offset of k_buf[0] */
	size_t k_len;
	unsigned int k_nplaced;
	/* What the inline files placed take in a PACK_COMMIT: at a
	 * request's worth the flusher commits them, as a full buffer is. */
	size_t k_inline_bytes;
	int64_t k_oldest_ms;            /* first placement not yet committed */
	int64_t k_last_ms;              /* the last placement in the current pack */
	bool k_flushing;                /* the buffer is being written */
	/* Closed files a failed flush left unplaced: the flusher places them
	 * again from k_retry_ms on. */
	bool k_requeue;
	int64_t k_retry_ms;
	int k_err;                      /* a failed background commit */
	/* OSTs new packs leave out for a while: the MDS learns of an OSS
	 * that hangs only when its own poll times out, and of a network
	 * path that fails this client alone never. */
	struct pk_avoid k_avoid[NC_PACK_AVOID_MAX];
	uint32_t k_navoid;
	struct pk_dir k_dirs[PK_DIRS];
};

static void pk_now(struct nc_timespec *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	t->t_sec = ts.tv_sec;
	t->t_nsec = (uint32_t)ts.tv_nsec;
}

_Static_assert(NACRE_PACK_FID_SEQ == NC_PACK_FID_SEQ, "one pack FID sequence");

static struct nc_fid pk_pack_fid(uint64_t id)
{
	struct nc_fid f = { NC_PACK_FID_SEQ, id };

	return f;
}

/* ---- finding pends ---- */

/* Holds what the MDS does not have yet (else the MDS is the one to ask:
 * another client may have changed the file since). */
static bool pk_pend_ahead(const struct cl_pend *p)
{
	return p->p_new || p->p_dirty || p->p_placed;
}

static struct cl_pend *pk_find_fid(struct cl_packer *k, const struct nc_fid *fid)
{
	for (struct cl_pend *p = k->k_pends; p; p = p->p_next)
		if (nc_fid_eq(&p->p_fid, fid))
			return p;
	return NULL;
}

static struct cl_pend *pk_find_name(struct cl_packer *k, const struct nc_fid *parent,
				    const char *name)
{
	for (struct cl_pend *p = k->k_pends; p; p = p->p_next)
		if (p->p_new && nc_fid_eq(&p->p_parent, parent) && !strcmp(p->p_name, name))
			return p;
	return NULL;
}

static void pk_unlist(struct cl_packer *k, struct cl_pend *p)
{
	for (struct cl_pend **pp = &k->k_pends; *pp; pp = &(*pp)->p_next) {
		if (*pp == p) {
			*pp = p->p_next;
			atomic_fetch_sub(&k->k_npend, 1);
			break;
		}
	}
}

static void pk_pend_free(struct cl_packer *k, struct cl_pend *p)
{
	if (!p->p_gone)
		pk_unlist(k, p);
	free(p->p_data);
	free(p);
}

bool cl_pend_gone(struct nacre_fs *fs, struct cl_pend *p, struct nc_layout *layout,
		  uint64_t *size)
{
	struct cl_packer *k = fs->fs_pk;
	bool gone;

	pthread_mutex_lock(&k->k_lock);
	gone = p->p_gone;
	if (gone) {
		*layout = p->p_ulayout;
		*size = p->p_len;
		if (--p->p_opens == 0)
			pk_pend_free(k, p);
	}
	pthread_mutex_unlock(&k->k_lock);
	return gone;
}

bool cl_pack_lookup(struct nacre_fs *fs, const struct nc_fid *parent, const char *name,
		    struct nc_attr *attr)
{
	struct cl_packer *k = fs->fs_pk;
	struct cl_pend *p;

	if (!k || atomic_load(&k->k_npend) == 0)
		return false;
	pthread_mutex_lock(&k->k_lock);
	p = pk_find_name(k, parent, name);
	if (p)
		*attr = p->p_attr;
	pthread_mutex_unlock(&k->k_lock);
	return p != NULL;
}

bool cl_pack_getattr(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_attr *attr)
{
	struct cl_packer *k = fs->fs_pk;
	struct cl_pend *p;

	if (!k || atomic_load(&k->k_npend) == 0)
		return false;
	pthread_mutex_lock(&k->k_lock);
	p = pk_find_fid(k, fid);
	if (p && !pk_pend_ahead(p))
		p = NULL; /* the MDS knows it as well: ask it */
	if (p)
		*attr = p->p_attr;
	pthread_mutex_unlock(&k->k_lock);
	return p != NULL;
}

/* ---- packs and FIDs from the MDS ---- */

static int pk_fid_get(struct nacre_fs *fs, struct cl_packer *k, struct nc_fid *fid)
{
	if (k->k_fid_next == k->k_fid_end) {
		struct nc_fid_grant g = { .fg_cred = fs->fs_cred, .fg_count = PK_FID_BATCH };
		struct nc_call call;
		int rc = nc_cconn_rpc(fs->fs_mds, NC_OP_FID_GRANT, (nc_xdr_fn)nc_wire_fid_grant, &g,
				      (nc_xdr_fn)nc_wire_fid_grant, &g, &call);

		if (rc)
			return rc;
		nc_call_fini(&call);
		if (g.fg_seq != NC_FILE_FID_SEQ || g.fg_count == 0)
			return -NC_E_PROTO;
		k->k_fid_next = g.fg_first;
		k->k_fid_end = g.fg_first + g.fg_count;
	}
	fid->f_seq = NC_FILE_FID_SEQ;
	fid->f_oid = k->k_fid_next++;
	return 0;
}

/* New packs leave OST @ost out for cl_ost_avoid_ms(), as long as a
 * timeout keeps it out of erasure-coded reads (k_lock held). */
static void pk_avoid_add(struct nacre_fs *fs, struct cl_packer *k, uint32_t ost)
{
	int64_t now = nc_now_ms();
	uint32_t i, slot = 0;

	/* Its own entry, else a free one, else the one that ends first. */
	for (i = 0; i < k->k_navoid && k->k_avoid[i].a_ost != ost; i++)
		if (k->k_avoid[i].a_until_ms < k->k_avoid[slot].a_until_ms)
			slot = i;
	if (i < k->k_navoid)
		slot = i;
	else if (k->k_navoid < NC_PACK_AVOID_MAX)
		slot = k->k_navoid++;
	k->k_avoid[slot].a_ost = ost;
	k->k_avoid[slot].a_since_ms = now;
	k->k_avoid[slot].a_until_ms = now + cl_ost_avoid_ms(fs);
	nc_info("client", "new packs leave OST %u out for %lld s", ost,
		(long long)(cl_ost_avoid_ms(fs) / 1000));
}

/* True when new packs leave OST @ost out: a pack write failed on it, or
 * any request to it timed out, lately and after @after_ms (k_lock held). */
static bool pk_avoids(struct nacre_fs *fs, const struct cl_packer *k, uint32_t ost,
		      int64_t after_ms)
{
	int64_t now = nc_now_ms();

	for (uint32_t i = 0; i < k->k_navoid; i++)
		if (k->k_avoid[i].a_ost == ost && k->k_avoid[i].a_until_ms > now &&
		    k->k_avoid[i].a_since_ms > after_ms)
			return true;
	return cl_ost_silent_since(fs, ost) > after_ms;
}

/* The OSTs of the PACK_ALLOC request to leave out (k_lock held). */
static void pk_avoid_list(struct nacre_fs *fs, const struct cl_packer *k,
			  struct nc_pack_alloc *m)
{
	m->pa_navoid = 0;
	/* A 1.5 MDS refuses a PACK_ALLOC that names OSTs: it places the pack
	 * anywhere, and a write on a failing OST abandons it as before. */
	if (nc_cconn_peer_minor(fs->fs_mds) < NC_MINOR_PACK_AVOID)
		return;
	for (uint32_t ost = 0; ost < NC_MAX_OSTS && m->pa_navoid < NC_PACK_AVOID_MAX; ost++)
		if (pk_avoids(fs, k, ost, 0))
			m->pa_avoid[m->pa_navoid++] = ost;
}

/* The OSTs of the current pack that failed since the MDS laid it out, as
 * a stripe mask (k_lock held).  One that had failed before was named in
 * PACK_ALLOC: the MDS placed the pack there anyway, having no other OST
 * up, so it is tried. */
static uint64_t pk_failed_since_alloc(struct nacre_fs *fs, const struct cl_packer *k)
{
	const struct nc_layout *l = &k->k_layout;
	uint64_t mask = 0;

	for (uint32_t s = 0; s < l->l_stripe_count && s < NC_MAX_STRIPES; s++)
		if (pk_avoids(fs, k, l->l_shards[s].ls_ost, k->k_alloc_ms))
			mask |= 1ull << s;
	return mask;
}

/* A new pack for @p's key: laid out as a file of its directory would be,
 * or with its own coding (pk_key_of_layout()). */
static int pk_pack_alloc(struct nacre_fs *fs, struct cl_packer *k, const struct cl_pend *p)
{
	struct nc_pack_alloc *m = calloc(1, sizeof(*m));
	struct nc_call call;
	size_t row, cap;
	int rc;

	if (!m)
		return -ENOMEM;
	m->pa_cred = fs->fs_cred;
	if (p->p_has_key && p->p_key.y_geometry) {
		/* An MDS before this ignores it: the default layout. */
		m->pa_layout.l_flags = NC_LAYOUT_TEMPLATE;
		m->pa_layout.l_first_ost = NC_OST_ANY;
		m->pa_layout.l_stripe_size = p->p_key.y_stripe_size;
		m->pa_layout.l_stripe_count = p->p_key.y_stripe_count;
		m->pa_layout.l_k = p->p_key.y_k;
		m->pa_layout.l_m = p->p_key.y_m;
	} else {
		m->pa_dir = p->p_parent;
	}
	pk_avoid_list(fs, k, m);
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_PACK_ALLOC, (nc_xdr_fn)nc_wire_pack_alloc, m,
			  (nc_xdr_fn)nc_wire_pack_alloc, m, &call);
	if (rc)
		goto out;
	nc_call_fini(&call);
	if (!m->pa_layout.l_stripe_count || !m->pa_layout.l_stripe_size) {
		rc = -NC_E_PROTO;
		goto out;
	}
	k->k_layout = m->pa_layout;
	k->k_layout.l_flags = 0;
	k->k_has_pack = true;
	k->k_alloc_ms = nc_now_ms();
	k->k_next = 0;
	k->k_base = 0;
	k->k_len = 0;
	/* Two rows, and room for the largest packed file with its padding. */
	row = (size_t)k->k_layout.l_stripe_size * (k->k_layout.l_m ? k->k_layout.l_k :
						   k->k_layout.l_stripe_count);
	cap = 2 * row;
	if (cap < NC_PACK_MAX_LIMIT / 8)
		cap = NC_PACK_MAX_LIMIT / 8;
	if (cap > k->k_buf_cap) {
		uint8_t *nb = realloc(k->k_buf, cap);

		if (!nb) {
			k->k_has_pack = false;
			rc = -ENOMEM;
			goto out;
		}
		k->k_buf = nb;
		k->k_buf_cap = cap;
	}
out:
	free(m);
	return rc;
}

/* ---- writing the buffer and committing ---- */

/* Another thread's write of the buffer ends first (k_lock held). */
static void pk_flush_wait(struct cl_packer *k)
{
	while (k->k_flushing)
		pthread_cond_wait(&k->k_flushed, &k->k_lock);
}

/*
 * Writes the buffer to the pack's objects and syncs them, with k_lock
 * released meanwhile (k_flushing set).  An OST that does not answer fails
 * the write at once: the files can go to another pack, and waiting out an
 * OSS restart here would hold up every small-file writer of this client.
 * A plain pack over an OST that failed after the pack was laid out (a
 * timeout seen by other I/O) is not tried at all: that would cost a
 * request timeout for nothing.
 */
static int pk_write_buf(struct nacre_fs *fs, struct cl_packer *k)
{
	struct nc_fid pf = pk_pack_fid(k->k_layout.l_pack_id);
	struct nc_layout l = k->k_layout;
	const uint8_t *buf = k->k_buf;
	size_t len = k->k_len;
	uint64_t base = k->k_base, failed = 0;
	int rc;

	if (!len)
		return 0;
	if (!l.l_m && pk_failed_since_alloc(fs, k))
		return -EHOSTDOWN;
	k->k_flushing = true;
	pthread_mutex_unlock(&k->k_lock);
	if (l.l_m)
		rc = cl_ec_write(fs, &fs->fs_cred, &pf, &l, buf, len, base);
	else
		rc = cl_io_write_once(fs, &pf, &l, buf, len, base, &failed);
	/* Durable before any record points at it. */
	if (!rc)
		rc = cl_io_objects(fs, &pf, &l, NC_OP_OBJ_SYNC, 0, &failed);
	if (!rc && l.l_m)
		rc = cl_objects_settle(fs, &fs->fs_cred, &pf, &l, failed);
	else if (!rc && failed)
		rc = -EIO; /* plain striping: an object is not durable */
	pthread_mutex_lock(&k->k_lock);
	k->k_flushing = false;
	pthread_cond_broadcast(&k->k_flushed);
	if (!rc)
		k->k_layout = l; /* with any stale marks it learnt */
	else if (!l.l_m)
		for (uint32_t s = 0; s < l.l_stripe_count && s < NC_MAX_STRIPES; s++)
			if (failed >> s & 1)
				pk_avoid_add(fs, k, l.l_shards[s].ls_ost);
	return rc;
}

static void pk_extent(const struct cl_pend *p, struct nc_layout *ext)
{
	memset(ext, 0, sizeof(*ext));
	if (p->p_inline) {
		ext->l_flags = NC_LAYOUT_INLINE;
		ext->l_gen = p->p_gen;
		return;
	}
	ext->l_flags = NC_LAYOUT_PACKED;
	ext->l_pack_id = p->p_pack;
	ext->l_pack_off = p->p_off;
	ext->l_pack_len = p->p_len;
}

/* After a commit: the pend now mirrors what the MDS has. */
static void pk_committed(struct cl_packer *k, struct cl_pend *p)
{
	p->p_placed = false;
	p->p_dirty = false;
	p->p_new = false;
	/* A move is done: a handle opened meanwhile may keep the pend. */
	p->p_move = false;
	pk_extent(p, &p->p_old);
	if (p->p_opens == 0)
		pk_pend_free(k, p);
}

/* Creates the placed new files on the MDS, up to NC_PACK_COMMIT_MAX per
 * request. */
static int pk_commit_new(struct nacre_fs *fs, struct cl_packer *k, bool seal)
{
	struct nc_pack_commit m = { .pc_pack = k->k_layout.l_pack_id };
	struct nc_pack_commit_rep *rep = malloc(sizeof(*rep));
	struct cl_pend *batch[NC_PACK_COMMIT_MAX];
	int rc = 0;

	m.pc_creates = calloc(NC_PACK_COMMIT_MAX, sizeof(*m.pc_creates));
	if (!rep || !m.pc_creates) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		struct nc_call call;
		uint32_t n = 0;
		size_t body = 0;
		bool more = false;

		for (struct cl_pend *p = k->k_pends; p && n < NC_PACK_COMMIT_MAX; p = p->p_next) {
			struct nc_create_req *cq = &m.pc_creates[n];

			if (!p->p_placed || !p->p_new)
				continue;
			/* Inline bytes ride in the request: its body is bounded. */
			if (body + PK_CREATE_REC_MAX + (p->p_inline ? p->p_len : 0) >
			    PK_COMMIT_BODY_BYTES) {
				more = true;
				continue;
			}
			memset(cq, 0, sizeof(*cq));
			cq->cq_cred = p->p_cred;
			cq->cq_parent = p->p_parent;
			strcpy(cq->cq_name, p->p_name);
			cq->cq_mode = p->p_attr.a_mode;
			cq->cq_flags = NC_CREATE_EXCL | NC_CREATE_FID | NC_CREATE_PACKED;
			cq->cq_fid = p->p_fid;
			cq->cq_size = p->p_len;
			cq->cq_mtime = p->p_attr.a_mtime;
			if (p->p_inline) {
				cq->cq_flags |= NC_CREATE_INLINE;
				cq->cq_inline = p->p_data;
				cq->cq_inline_len = (uint32_t)p->p_len;
				body += p->p_len;
			} else {
				pk_extent(p, &cq->cq_layout);
			}
			body += PK_CREATE_REC_MAX;
			batch[n++] = p;
		}
		if (n == 0 && !seal)
			break;
		m.pc_count = n;
		m.pc_seal = seal && n < NC_PACK_COMMIT_MAX && !more;
		rc = nc_cconn_rpc(fs->fs_mds, NC_OP_PACK_COMMIT, (nc_xdr_fn)nc_wire_pack_commit, &m,
				  (nc_xdr_fn)nc_wire_pack_commit_rep, rep, &call);
		if (rc)
			break;
		nc_call_fini(&call);
		if (rep->pr_count != n) {
			rc = -NC_E_PROTO;
			break;
		}
		for (uint32_t i = 0; i < n; i++) {
			int r = nc_err_from_status(rep->pr_status[i]);
			struct cl_pend *p = batch[i];

			if (r == -EEXIST && !strstr(p->p_name, ".nacre-conflict-")) {
				/* Another client took the name meanwhile: keep
				 * the bytes under a name of their own. */
				char alt[NC_NAME_MAX + 1];

				snprintf(alt, sizeof(alt), "%.200s.nacre-conflict-%llu", p->p_name,
					 (unsigned long long)p->p_fid.f_oid);
				nc_warn("client", "packed file %s exists already: kept as %s",
					p->p_name, alt);
				strcpy(p->p_name, alt);
				continue; /* the next round commits it */
			}
			if (r) {
				nc_error("client", "packed file %s could not be created: %s",
					 p->p_name, nc_strerror(r));
				if (!rc)
					rc = r;
				p->p_placed = false;
				p->p_dirty = false;
				p->p_new = false;
				if (p->p_opens == 0)
					pk_pend_free(k, p);
				continue;
			}
			p->p_attr = rep->pr_attr[i];
			p->p_gen = 0;   /* an inline file starts at generation 0 */
			pk_committed(k, p);
		}
		if (m.pc_seal)
			break;
	}
out:
	free(rep);
	free(m.pc_creates);
	return rc;
}

/* Moves committed files that were rewritten to their new extents. */
static int pk_commit_switches(struct nacre_fs *fs, struct cl_packer *k)
{
	struct nc_pack_switch *sw = malloc(sizeof(*sw));
	struct cl_pend *p, *next;
	int rc = 0;

	if (!sw)
		return -ENOMEM;
	for (p = k->k_pends; p; p = next) {
		struct nc_layout nl;
		struct nc_attr attr;
		int r;

		next = p->p_next;
		if (!p->p_placed || p->p_new)
			continue;
		for (int tries = 0; tries < 3; tries++) {
			memset(sw, 0, sizeof(*sw));
			sw->ps_cred = p->p_cred;
			sw->ps_fid = p->p_fid;
			sw->ps_size = p->p_len;
			sw->ps_mtime = p->p_attr.a_mtime;
			if (p->p_move)
				sw->ps_flags = NC_SWITCH_MOVE;
			sw->ps_old = p->p_old;
			pk_extent(p, &sw->ps_new);
			if (p->p_inline) {
				sw->ps_inline = p->p_data;
				sw->ps_inline_len = (uint32_t)p->p_len;
			}
			r = cl_pack_switch_rpc_layout(fs, sw, &attr, &nl);
			if (r != -NC_E_CHANGED || p->p_move)
				break;
			/* Another client replaced it: the last close wins. */
			r = cl_md_getlayout(fs, &p->p_fid, &p->p_old);
			if (r)
				break;
		}
		if (r && p->p_move) {
			/* A move that failed (above all: rewritten meanwhile,
			 * the writer's bytes stay) is never placed again; its
			 * mover collects the outcome (pk_move_outcome_locked). */
			if (!rc)
				rc = r;
			p->p_move_rc = r;
			p->p_placed = false;
			p->p_dirty = false;
			continue;
		}
		if (r) {
			nc_error("client", "packed file " NC_FID_FMT " could not be rewritten: %s",
				 NC_FID_ARGS(&p->p_fid), nc_strerror(r));
			if (!rc)
				rc = r;
			p->p_placed = false;
			continue;
		}
		p->p_attr = attr;
		p->p_gen = nl.l_gen;
		pk_committed(k, p);
	}
	free(sw);
	return rc;
}

/* What is placed goes back to waiting (a failed write or commit): the
 * flusher places it again after a flush interval (k_lock held). */
static void pk_unplace_all(struct cl_packer *k)
{
	for (struct cl_pend *p = k->k_pends; p; p = p->p_next)
		if (p->p_placed) {
			p->p_placed = false;
			p->p_dirty = true;
			p->p_replace = true;
			k->k_requeue = true;
		}
	k->k_len = 0;
	k->k_nplaced = 0;
	k->k_inline_bytes = 0;
	k->k_retry_ms = nc_now_ms() + k->k_flush_ms;
}

/* The pack's objects failed a write: it gets no more files (sealed, so
 * that compaction may take it; the files committed in it before stay),
 * and the next placement starts a new pack (k_lock held). */
static void pk_abandon(struct nacre_fs *fs, struct cl_packer *k, int why)
{
	int rc;

	nc_warn("client", "pack %llu could not be written (%s): its files go to a new pack",
		(unsigned long long)k->k_layout.l_pack_id, nc_strerror(why));
	pk_unplace_all(k);
	rc = pk_commit_new(fs, k, true);
	if (rc) /* the MDS counts it as sealed after a while */
		nc_warn("client", "pack %llu not sealed: %s",
			(unsigned long long)k->k_layout.l_pack_id, nc_strerror(rc));
	k->k_has_pack = false;
}

/* Room in the buffer for a file of @len bytes after a flush (which leaves
 * at most a chunk of padding before it): pack_max may reach 64 MiB, more
 * than the buffer's usual size. */
static int pk_buf_fit(struct cl_packer *k, size_t len)
{
	size_t need = (size_t)k->k_layout.l_stripe_size + len;
	uint8_t *nb;

	if (need <= k->k_buf_cap)
		return 0;
	nb = realloc(k->k_buf, need);
	if (!nb)
		return -ENOMEM;
	k->k_buf = nb;
	k->k_buf_cap = need;
	return 0;
}

/* The key of @l: a directory's template, or (@geometry) a file's layout,
 * whose coding (not its pool) a file moved or rewritten keeps. */
static void pk_key_from(struct pk_key *y, const struct nc_layout *l, bool geometry)
{
	memset(y, 0, sizeof(*y));
	y->y_geometry = geometry;
	y->y_stripe_size = l->l_stripe_size;
	y->y_stripe_count = l->l_stripe_count;
	y->y_k = l->l_k;
	y->y_m = l->l_m;
	if (!geometry && (l->l_flags & NC_LAYOUT_POOL))
		memcpy(y->y_pool, l->l_pool, sizeof(y->y_pool));
}

/* The key of a file that keeps the coding of @l (its layout now). */
static void pk_key_of_layout(struct cl_pend *p, const struct nc_layout *l)
{
	p->p_has_key = l->l_stripe_count > 0;
	pk_key_from(&p->p_key, l, true);
}

static bool pk_key_eq(const struct pk_key *a, const struct pk_key *b)
{
	return a->y_geometry == b->y_geometry && a->y_stripe_size == b->y_stripe_size &&
	       a->y_stripe_count == b->y_stripe_count && a->y_k == b->y_k && a->y_m == b->y_m &&
	       !strcmp(a->y_pool, b->y_pool);
}

/* Whether @p may go into the pack being filled. */
static bool pk_key_fits(const struct cl_packer *k, const struct cl_pend *p)
{
	return !k->k_has_pack || !p->p_has_key || pk_key_eq(&k->k_key, &p->p_key);
}

/* Appends @p's bytes to the pack buffer, starting a pack if there is none;
 * -ENOBUFS when they fit only after a flush, -EXDEV when they belong in a
 * pack of another layout, after a flush that seals this one (k_seal_asked
 * is set; k_lock held, no flush on). */
static int pk_place_buf(struct nacre_fs *fs, struct cl_packer *k, struct cl_pend *p)
{
	uint64_t chunk, pos;
	int rc;

	p->p_inline = p->p_inline_max && p->p_len <= p->p_inline_max &&
		      nc_cconn_peer_minor(fs->fs_mds) >= NC_MINOR_INLINE;
	if (p->p_inline) {
		/* Its bytes go with its record; the commit reads them from
		 * the pend, which no one changes while it is placed. */
		p->p_placed = true;
		p->p_replace = false;
		/* (k_last_ms is the pack's: an inline file keeps no pack open.) */
		if (k->k_nplaced++ == 0)
			k->k_oldest_ms = nc_now_ms();
		k->k_inline_bytes += PK_CREATE_REC_MAX + p->p_len;
		if (k->k_inline_bytes >= PK_COMMIT_BODY_BYTES)
			pthread_cond_signal(&k->k_cond);
		return 0;
	}
	if (!pk_key_fits(k, p)) {
		k->k_seal_asked = true;
		return -EXDEV;
	}
	if (!k->k_has_pack) {
		rc = pk_pack_alloc(fs, k, p);
		if (rc)
			return rc;
		/* An inline file grown past its limit, with no directory, asked
		 * for the filesystem default: a template-less directory's key. */
		if (p->p_has_key)
			k->k_key = p->p_key;
		else
			memset(&k->k_key, 0, sizeof(k->k_key));
	}
	rc = pk_buf_fit(k, p->p_len);
	if (rc)
		return rc;
	chunk = k->k_layout.l_stripe_size;
	pos = k->k_next;
	if (p->p_len <= chunk && pos % chunk + p->p_len > chunk)
		pos += chunk - pos % chunk;
	if (pos + p->p_len - k->k_base > k->k_buf_cap)
		return -ENOBUFS;
	memset(k->k_buf + k->k_len, 0, pos - k->k_base - k->k_len);
	if (p->p_len)
		memcpy(k->k_buf + (pos - k->k_base), p->p_data, p->p_len);
	k->k_len = pos + p->p_len - k->k_base;
	k->k_next = pos + p->p_len;
	p->p_pack = k->k_layout.l_pack_id;
	p->p_off = pos;
	p->p_placed = true;
	p->p_replace = false;
	k->k_last_ms = nc_now_ms();
	if (k->k_nplaced++ == 0)
		k->k_oldest_ms = k->k_last_ms;
	return 0;
}

/* Places again what a failed flush left (and closed files a failed
 * placement left), as many as the buffer takes without a flush (k_lock
 * held, no flush on). */
static int pk_requeue(struct nacre_fs *fs, struct cl_packer *k)
{
	for (struct cl_pend *p = k->k_pends; p; p = p->p_next) {
		int rc;

		if ((p->p_opens && !p->p_replace) || p->p_gone || !p->p_dirty || p->p_placed)
			continue;
		rc = pk_place_buf(fs, k, p);
		if (rc == -ENOBUFS || rc == -EXDEV)
			return 0; /* the rest after this flush */
		if (rc)
			return rc;
	}
	k->k_requeue = false;
	return 0;
}

/* Writes what is placed and commits it (k_lock held; released while the
 * buffer is written). */
static int pk_flush_locked(struct nacre_fs *fs, struct cl_packer *k, bool seal)
{
	int rc = 0, r;

	pk_flush_wait(k);
	for (int tries = 1; k->k_nplaced; tries++) {
		rc = pk_write_buf(fs, k);
		if (rc) {
			/* Nothing was committed: the files go to a new pack. */
			pk_abandon(fs, k, rc);
			if (tries == PK_WRITE_TRIES)
				return rc;
			rc = pk_requeue(fs, k);
			if (rc)
				return rc;
			continue;
		}
		rc = pk_commit_new(fs, k, false);
		r = pk_commit_switches(fs, k);
		if (!rc)
			rc = r;
		k->k_base = k->k_next;
		/* A commit that failed: those files are placed again (in the
		 * next buffer) later. */
		pk_unplace_all(k);
		break;
	}
	if (k->k_has_pack && (seal || k->k_seal_asked || k->k_next >= PK_PACK_MAX_BYTES)) {
		r = pk_commit_new(fs, k, true);
		if (!rc)
			rc = r;
		k->k_has_pack = false;
	}
	if (!k->k_has_pack)
		k->k_seal_asked = false;
	return rc;
}

/* Appends @p's bytes to the pack buffer, flushing first when they do not
 * fit (k_lock held; @p may have been placed by another thread meanwhile). */
static int pk_place_locked(struct nacre_fs *fs, struct cl_packer *k, struct cl_pend *p)
{
	int rc;

	/* After a flush the buffer is empty and takes any file (pk_buf_fit):
	 * the bound only guards against a flush that frees nothing. */
	for (int pass = 0; pass < 4; pass++) {
		pk_flush_wait(k);
		if (p->p_placed || !p->p_dirty)
			return 0;
		rc = pk_place_buf(fs, k, p);
		if (rc != -ENOBUFS && rc != -EXDEV)
			return rc;
		rc = pk_flush_locked(fs, k, false);
		if (rc)
			return rc;
	}
	return -EFBIG;
}

/* Places every pend with bytes the MDS lacks (open ones too) and flushes,
 * a buffer at a time (k_lock held).  No pend is held across a flush: the
 * scan starts again after each. */
static int pk_sync_locked(struct nacre_fs *fs, struct cl_packer *k, bool seal)
{
	/* Each round commits a buffer; writers that keep changing files
	 * could otherwise keep it going. */
	int rounds = atomic_load(&k->k_npend) + PK_WRITE_TRIES;
	int rc = 0;

	while (rounds-- > 0) {
		bool placed = false, other = false;

		pk_flush_wait(k);
		for (struct cl_pend *p = k->k_pends; p; p = p->p_next) {
			if (p->p_dirty && !p->p_placed) {
				rc = pk_place_buf(fs, k, p);
				if (rc == -EXDEV) {
					/* Into a pack of its own layout, after
					 * this one is committed and sealed. */
					other = true;
					rc = 0;
					continue;
				}
				if (rc)
					break;
				placed = true;
			}
		}
		if (rc && rc != -ENOBUFS)
			return rc;
		if (!placed && !other && !rc)
			return pk_flush_locked(fs, k, seal); /* all placed */
		rc = pk_flush_locked(fs, k, false);
		if (rc)
			return rc;
	}
	return -EBUSY;
}

int cl_pack_sync(struct nacre_fs *fs)
{
	struct cl_packer *k = fs->fs_pk;
	int rc;

	if (!k || atomic_load(&k->k_npend) == 0)
		return 0;
	pthread_mutex_lock(&k->k_lock);
	rc = pk_sync_locked(fs, k, false);
	if (!rc && k->k_err) {
		rc = k->k_err;
		k->k_err = 0;
	}
	pthread_mutex_unlock(&k->k_lock);
	return rc;
}

NACRE_API int nacre_sync(struct nacre_fs *fs)
{
	struct cl_packer *k = fs->fs_pk;
	int rc;

	if (!k)
		return 0;
	pthread_mutex_lock(&k->k_lock);
	rc = pk_sync_locked(fs, k, false);
	if (!rc && k->k_err)
		rc = k->k_err;
	k->k_err = 0;
	pthread_mutex_unlock(&k->k_lock);
	return rc;
}

/* Commits closed files pack_flush_ms after the first of them was placed. */
static void *pk_flusher(void *arg)
{
	struct nacre_fs *fs = arg;
	struct cl_packer *k = fs->fs_pk;

	pthread_mutex_lock(&k->k_lock);
	while (!k->k_stop) {
		struct timespec ts;
		int64_t now = nc_now_ms();

		if ((k->k_nplaced && (now >= k->k_oldest_ms + k->k_flush_ms ||
				      k->k_inline_bytes >= PK_COMMIT_BODY_BYTES)) ||
		    (k->k_requeue && !k->k_flushing && now >= k->k_retry_ms)) {
			int rc = 0;

			if (k->k_requeue) {
				pk_flush_wait(k);
				rc = pk_requeue(fs, k);
			}
			if (!rc)
				rc = pk_flush_locked(fs, k, false);
			/* Files still waiting are tried again (k_retry_ms);
			 * an error is kept for the next sync only when some
			 * were lost. */
			if (rc && !k->k_requeue && !k->k_err)
				k->k_err = rc;
			if (rc && k->k_requeue)
				k->k_retry_ms = nc_now_ms() + k->k_flush_ms;
			continue;
		}
		/* A pack nothing went into for a while is sealed, so that
		 * compaction may take it when its files go; the next file
		 * starts a new one. */
		if (k->k_has_pack && !k->k_nplaced &&
		    nc_now_ms() - k->k_last_ms >= (int64_t)k->k_flush_ms * PK_SEAL_IDLE_FLUSHES) {
			int rc = pk_flush_locked(fs, k, true);

			if (rc && !k->k_err)
				k->k_err = rc;
			continue;
		}
		nc_deadline_ms(&ts, CLOCK_MONOTONIC, k->k_flush_ms);
		pthread_cond_timedwait(&k->k_cond, &k->k_lock, &ts);
	}
	pthread_mutex_unlock(&k->k_lock);
	return NULL;
}

/* ---- setup ---- */

int cl_pack_init(struct nacre_fs *fs, const struct nacre_opts *opts)
{
	struct cl_packer *k = calloc(1, sizeof(*k));
	pthread_condattr_t ca;

	if (!k)
		return -ENOMEM;
	pthread_mutex_init(&k->k_lock, NULL);
	pthread_cond_init(&k->k_flushed, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->k_cond, &ca);
	pthread_condattr_destroy(&ca);
	k->k_flush_ms = opts && opts->pack_flush_ms > 0 ? opts->pack_flush_ms :
							  PK_FLUSH_MS_DEFAULT;
	k->k_all = opts && opts->pack_all;
	k->k_all_max = opts && opts->pack_max ? opts->pack_max : NC_PACK_MAX_DEFAULT;
	if (k->k_all_max > NC_PACK_MAX_LIMIT)
		k->k_all_max = NC_PACK_MAX_LIMIT;
	k->k_all_inline = opts ? opts->inline_max : 0;
	if (k->k_all_inline > NC_INLINE_MAX)
		k->k_all_inline = NC_INLINE_MAX;
	atomic_init(&k->k_npend, 0);
	fs->fs_pk = k;
	if (pthread_create(&k->k_thread, NULL, pk_flusher, fs)) {
		fs->fs_pk = NULL;
		pthread_cond_destroy(&k->k_cond);
		pthread_cond_destroy(&k->k_flushed);
		pthread_mutex_destroy(&k->k_lock);
		free(k);
		return -ENOMEM;
	}
	k->k_thread_up = true;
	return 0;
}

void cl_pack_fini(struct nacre_fs *fs)
{
	struct cl_packer *k = fs->fs_pk;
	int rc;

	if (!k)
		return;
	pthread_mutex_lock(&k->k_lock);
	rc = pk_sync_locked(fs, k, true);
	if (rc)
		nc_error("client", "packed files not committed at disconnect: %s",
			 nc_strerror(rc));
	k->k_stop = true;
	pthread_cond_broadcast(&k->k_cond);
	pthread_mutex_unlock(&k->k_lock);
	if (k->k_thread_up)
		pthread_join(k->k_thread, NULL);
	while (k->k_pends)
		pk_pend_free(k, k->k_pends);
	free(k->k_buf);
	pthread_cond_destroy(&k->k_cond);
	pthread_cond_destroy(&k->k_flushed);
	pthread_mutex_destroy(&k->k_lock);
	free(k);
	fs->fs_pk = NULL;
}

/* ---- which directories pack ---- */

/* The pack_max of new files in @dir (0: not packed), and its attributes. */
static int pk_dir_info(struct nacre_fs *fs, struct cl_packer *k, const struct nc_fid *dir,
		       uint32_t *pack_max, uint32_t *inline_max, struct pk_key *key,
		       struct nc_attr *attr)
{
	struct pk_dir *d = &k->k_dirs[(dir->f_oid * 0x9e3779b97f4a7c15ull) >> 58];
	int64_t now = nc_now_ms();
	struct nc_layout l;
	int rc;

	if (d->d_expires > now && nc_fid_eq(&d->d_fid, dir)) {
		*pack_max = d->d_pack_max;
		*inline_max = d->d_inline_max;
		*key = d->d_key;
		*attr = d->d_attr;
		return 0;
	}
	pthread_mutex_unlock(&k->k_lock);
	rc = cl_md_getattr(fs, dir, attr);
	if (!rc)
		rc = cl_md_getlayout(fs, dir, &l);
	pthread_mutex_lock(&k->k_lock);
	if (rc)
		return rc;
	d->d_fid = *dir;
	d->d_attr = *attr;
	d->d_pack_max = (l.l_flags & NC_LAYOUT_PACK) ?
			 (l.l_pack_max ? l.l_pack_max : NC_PACK_MAX_DEFAULT) : 0;
	d->d_inline_max = (l.l_flags & (NC_LAYOUT_PACK | NC_LAYOUT_INLINE)) ==
				  (NC_LAYOUT_PACK | NC_LAYOUT_INLINE) ? l.l_inline_max : 0;
	if (k->k_all && !d->d_pack_max) {
		d->d_pack_max = k->k_all_max;
		d->d_inline_max = k->k_all_inline;
	}
	pk_key_from(&d->d_key, &l, false);
	d->d_expires = now + PK_DIR_TTL_MS;
	*pack_max = d->d_pack_max;
	*inline_max = d->d_inline_max;
	*key = d->d_key;
	return 0;
}

void cl_pack_dir_changed(struct nacre_fs *fs, const struct nc_fid *dir)
{
	struct cl_packer *k = fs->fs_pk;

	if (!k)
		return;
	pthread_mutex_lock(&k->k_lock);
	for (unsigned int i = 0; i < PK_DIRS; i++)
		if (nc_fid_eq(&k->k_dirs[i].d_fid, dir))
			k->k_dirs[i].d_expires = 0;
	pthread_mutex_unlock(&k->k_lock);
}

/* ---- creating ---- */

int cl_pack_create(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		   const char *name, uint32_t mode, int flags, struct nc_attr *attr,
		   struct cl_pend **out)
{
	struct cl_packer *k = fs->fs_pk;
	struct nc_attr dattr, cur;
	uint32_t pack_max, inline_max;
	struct cl_pend *p;
	struct pk_key key;
	int rc;

	if (!k || strlen(name) > NC_NAME_MAX || !strcmp(name, ".") || !strcmp(name, ".."))
		return 1;
	pthread_mutex_lock(&k->k_lock);
	rc = pk_dir_info(fs, k, parent, &pack_max, &inline_max, &key, &dattr);
	if (rc || !pack_max) {
		pthread_mutex_unlock(&k->k_lock);
		return rc ? rc : 1;
	}
	if (!S_ISDIR(dattr.a_mode)) {
		pthread_mutex_unlock(&k->k_lock);
		return -ENOTDIR;
	}
	p = pk_find_name(k, parent, name);
	pthread_mutex_unlock(&k->k_lock);
	if (p)
		return (flags & O_EXCL) ? -EEXIST : 1;
	/* The MDS checks again at commit; this keeps a commit from failing
	 * for a reason known now. */
	rc = nc_permission(&dattr, cred, NC_MAY_WRITE | NC_MAY_EXEC);
	if (rc)
		return rc;
	/* The name must be free on the MDS (a read, no commit). */
	rc = cl_md_lookup(fs, cred, parent, name, &cur);
	if (rc == 0)
		return (flags & O_EXCL) ? -EEXIST : 1;
	if (rc != -ENOENT)
		return rc;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_lock(&k->k_lock);
	if (pk_find_name(k, parent, name)) {
		pthread_mutex_unlock(&k->k_lock);
		free(p);
		return (flags & O_EXCL) ? -EEXIST : 1;
	}
	rc = pk_fid_get(fs, k, &p->p_fid);
	if (rc) {
		pthread_mutex_unlock(&k->k_lock);
		free(p);
		return rc;
	}
	p->p_parent = *parent;
	strcpy(p->p_name, name);
	p->p_cred = *cred;
	p->p_pack_max = pack_max;
	p->p_inline_max = inline_max;
	p->p_has_key = true;
	p->p_key = key;
	p->p_new = true;
	p->p_dirty = true;
	p->p_opens = 1;
	p->p_attr.a_fid = p->p_fid;
	p->p_attr.a_mode = S_IFREG | (mode & 07777);
	p->p_attr.a_uid = cred->c_uid;
	p->p_attr.a_gid = (dattr.a_mode & S_ISGID) ? dattr.a_gid : cred->c_gid;
	p->p_attr.a_nlink = 1;
	pk_now(&p->p_attr.a_mtime);
	p->p_attr.a_atime = p->p_attr.a_mtime;
	p->p_attr.a_ctime = p->p_attr.a_mtime;
	p->p_next = k->k_pends;
	k->k_pends = p;
	atomic_fetch_add(&k->k_npend, 1);
	*attr = p->p_attr;
	*out = p;
	pthread_mutex_unlock(&k->k_lock);
	return 0;
}

/* An open of a file this client holds as a pend: another handle on it. */
struct cl_pend *cl_pack_open_pend(struct nacre_fs *fs, const struct nc_fid *fid,
				  struct nc_attr *attr)
{
	struct cl_packer *k = fs->fs_pk;
	struct cl_pend *p;

	if (!k || atomic_load(&k->k_npend) == 0)
		return NULL;
	pthread_mutex_lock(&k->k_lock);
	p = pk_find_fid(k, fid);
	/* A pend that only mirrors what the MDS had may be out of date (another
	 * client may have changed the file since): a new open asks the MDS. */
	if (p && !pk_pend_ahead(p))
		p = NULL;
	if (p) {
		p->p_opens++;
		*attr = p->p_attr;
	}
	pthread_mutex_unlock(&k->k_lock);
	return p;
}

/* Opening a committed packed file for writing: a pend loaded with its
 * bytes (none with O_TRUNC). */
int cl_pack_open_rewrite(struct nacre_fs *fs, const struct nc_cred *cred,
			 const struct nc_attr *attr, const struct nc_layout *layout,
			 const void *inl, bool trunc, struct cl_pend **out)
{
	struct cl_packer *k = fs->fs_pk;
	bool is_inline = layout->l_flags & NC_LAYOUT_INLINE;
	uint64_t len = is_inline ? attr->a_size : layout->l_pack_len;
	struct cl_pend *p, *q;
	ssize_t got = 0;

	if (!k || (is_inline && (!inl || len > NC_INLINE_MAX)))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->p_len = trunc ? 0 : len;
	p->p_cap = p->p_len ? p->p_len : 1;
	p->p_data = malloc(p->p_cap);
	if (!p->p_data) {
		free(p);
		return -ENOMEM;
	}
	if (p->p_len && is_inline) {
		memcpy(p->p_data, inl, p->p_len);
	} else if (p->p_len) {
		got = cl_pack_read(fs, layout, p->p_data, p->p_len, 0);
		if (got >= 0 && (size_t)got != p->p_len)
			got = -EIO;
		if (got < 0) {
			free(p->p_data);
			free(p);
			return (int)got;
		}
	}
	p->p_fid = attr->a_fid;
	p->p_cred = *cred;
	p->p_attr = *attr;
	p->p_attr.a_size = p->p_len;
	p->p_old = *layout;
	if (!is_inline)
		pk_key_of_layout(p, layout);
	p->p_pack_max = len > NC_PACK_MAX_DEFAULT ? (uint32_t)len : NC_PACK_MAX_DEFAULT;
	/* An inline file rewritten stays inline while it fits (the
	 * directory's limit is not known here); a packed one stays packed. */
	if (is_inline) {
		p->p_inline_max = NC_INLINE_MAX;
		p->p_gen = layout->l_gen;
	}
	p->p_dirty = trunc && len;
	p->p_opens = 1;
	pthread_mutex_lock(&k->k_lock);
	q = pk_find_fid(k, &p->p_fid);
	if (q && !pk_pend_ahead(q)) {
		/* A clean pend of older handles: it takes the bytes read now. */
		uint8_t *d = q->p_data;

		q->p_data = p->p_data;
		q->p_len = p->p_len;
		q->p_cap = p->p_cap;
		q->p_attr = p->p_attr;
		q->p_old = p->p_old;
		q->p_gen = p->p_gen;
		q->p_has_key = p->p_has_key;
		q->p_key = p->p_key;
		q->p_inline_max = p->p_inline_max;
		q->p_dirty = p->p_dirty;
		p->p_data = d;
	}
	if (q) {
		/* Another handle here got there first: share its pend. */
		q->p_opens++;
		if (trunc && q->p_len) {
			q->p_len = 0;
			q->p_attr.a_size = 0;
			q->p_dirty = true;
		}
		pthread_mutex_unlock(&k->k_lock);
		free(p->p_data);
		free(p);
		*out = q;
		return 0;
	}
	p->p_next = k->k_pends;
	k->k_pends = p;
	atomic_fetch_add(&k->k_npend, 1);
	pthread_mutex_unlock(&k->k_lock);
	*out = p;
	return 0;
}

/* ---- I/O on pends ---- */

ssize_t cl_pend_read(struct nacre_fs *fs, struct cl_pend *p, void *buf, size_t len, uint64_t off)
{
	struct cl_packer *k = fs->fs_pk;
	size_t n = 0;

	pthread_mutex_lock(&k->k_lock);
	if (off < p->p_len) {
		n = p->p_len - off < len ? p->p_len - off : len;
		memcpy(buf, p->p_data + off, n);
	}
	pthread_mutex_unlock(&k->k_lock);
	return (ssize_t)n;
}

uint64_t cl_pend_size(struct nacre_fs *fs, struct cl_pend *p)
{
	struct cl_packer *k = fs->fs_pk;
	uint64_t n;

	pthread_mutex_lock(&k->k_lock);
	n = p->p_len;
	pthread_mutex_unlock(&k->k_lock);
	return n;
}

static int pk_resize(struct cl_pend *p, size_t len)
{
	if (len > p->p_cap) {
		size_t cap = p->p_cap ? p->p_cap : 4096;
		uint8_t *nd;

		while (cap < len)
			cap *= 2;
		if (cap > p->p_pack_max && len <= p->p_pack_max)
			cap = p->p_pack_max;
		nd = realloc(p->p_data, cap);
		if (!nd)
			return -ENOMEM;
		p->p_data = nd;
		p->p_cap = cap;
	}
	if (len > p->p_len)
		memset(p->p_data + p->p_len, 0, len - p->p_len);
	p->p_len = len;
	p->p_attr.a_size = len;
	return 0;
}

/*
 * Writes into a pend.  Returns the bytes written, or 0 when the write would
 * take it past pack_max: the caller unpacks it (cl_pack_unpack) and writes
 * through the normal path.
 */
ssize_t cl_pend_write(struct nacre_fs *fs, struct cl_pend *p, const void *buf, size_t len,
		      uint64_t off, bool append)
{
	struct cl_packer *k = fs->fs_pk;
	ssize_t rc;

	pthread_mutex_lock(&k->k_lock);
	if (append)
		off = p->p_len;
	if (off + len > p->p_pack_max) {
		pthread_mutex_unlock(&k->k_lock);
		return 0;
	}
	if (p->p_placed) {
		/* Changed after its bytes went to the buffer: those stay (the
		 * commit is of what was placed); these go next time. */
		rc = pk_flush_locked(fs, k, false);
		if (rc) {
			pthread_mutex_unlock(&k->k_lock);
			return rc;
		}
	}
	if (off + len > p->p_len) {
		rc = pk_resize(p, off + len);
		if (rc) {
			pthread_mutex_unlock(&k->k_lock);
			return rc;
		}
	}
	memcpy(p->p_data + off, buf, len);
	p->p_dirty = true;
	p->p_move = false;      /* a writer's bytes now, not a move */
	pk_now(&p->p_attr.a_mtime);
	p->p_attr.a_ctime = p->p_attr.a_mtime;
	pthread_mutex_unlock(&k->k_lock);
	return (ssize_t)len;
}

/* Truncates a pend; 1 when @size is past pack_max (unpack first). */
int cl_pend_truncate(struct nacre_fs *fs, struct cl_pend *p, uint64_t size)
{
	struct cl_packer *k = fs->fs_pk;
	int rc = 0;

	pthread_mutex_lock(&k->k_lock);
	if (size > p->p_pack_max) {
		pthread_mutex_unlock(&k->k_lock);
		return 1;
	}
	if (p->p_placed)
		rc = pk_flush_locked(fs, k, false);
	if (!rc && size != p->p_len) {
		rc = pk_resize(p, size);
		p->p_dirty = true;
		p->p_move = false;      /* a writer's bytes now, not a move */
		pk_now(&p->p_attr.a_mtime);
		p->p_attr.a_ctime = p->p_attr.a_mtime;
	}
	pthread_mutex_unlock(&k->k_lock);
	return rc;
}

void cl_pend_stat(struct nacre_fs *fs, struct cl_pend *p, struct nc_attr *attr)
{
	struct cl_packer *k = fs->fs_pk;

	pthread_mutex_lock(&k->k_lock);
	*attr = p->p_attr;
	pthread_mutex_unlock(&k->k_lock);
}

/* fsync of a handle on a pend: this file, and all placed with it.  A
 * flush that lost its pack leaves the file unplaced: it goes again. */
int cl_pend_fsync(struct nacre_fs *fs, struct cl_pend *p)
{
	struct cl_packer *k = fs->fs_pk;
	int rc = 0;

	pthread_mutex_lock(&k->k_lock);
	for (int tries = 0; !rc && tries < PK_WRITE_TRIES; tries++) {
		if (p->p_dirty && !p->p_placed)
			rc = pk_place_locked(fs, k, p);
		if (!rc)
			rc = pk_flush_locked(fs, k, false);
		if (!p->p_dirty)
			break;
	}
	pthread_mutex_unlock(&k->k_lock);
	return rc;
}

/* close(2) of a handle (the release may come much later): the bytes are
 * queued for the next commit now. */
int cl_pend_flush(struct nacre_fs *fs, struct cl_pend *p)
{
	struct cl_packer *k = fs->fs_pk;
	int rc = 0;

	pthread_mutex_lock(&k->k_lock);
	if (!p->p_gone && p->p_dirty && !p->p_placed) {
		rc = pk_place_locked(fs, k, p);
		if (!rc)
			pthread_cond_signal(&k->k_cond);
	}
	pthread_mutex_unlock(&k->k_lock);
	return rc;
}

/* The last close of a pend queues its bytes for the next commit. */
int cl_pend_close(struct nacre_fs *fs, struct cl_pend *p)
{
	struct cl_packer *k = fs->fs_pk;
	int rc = 0;

	pthread_mutex_lock(&k->k_lock);
	if (p->p_opens > 1 || p->p_gone) {
		if (--p->p_opens == 0)
			pk_pend_free(k, p);
		pthread_mutex_unlock(&k->k_lock);
		return 0;
	}
	/* The open is let go of after the placement: a flush that the
	 * placement waits for must not commit and free the pend meanwhile. */
	if (p->p_dirty && !p->p_placed) {
		rc = pk_place_locked(fs, k, p);
		if (rc) {
			/* Kept as a pend: the flusher or the next sync tries
			 * again. */
			nc_warn("client", "packed file %s not queued: %s", p->p_name,
				nc_strerror(rc));
			k->k_requeue = true;
			k->k_retry_ms = nc_now_ms() + k->k_flush_ms;
			rc = 0;
		}
	}
	p->p_opens--;
	if (!p->p_dirty && !p->p_placed)
		pk_pend_free(k, p);
	else
		pthread_cond_signal(&k->k_cond);
	pthread_mutex_unlock(&k->k_lock);
	return rc;
}

/*
 * Gives a pend objects of its own (a normal layout) and writes its bytes
 * there; the MDS then knows the file as any other.  @layout and @attr
 * receive what the handles go on with; each handle learns it at its next
 * call (cl_pend_gone()), and the pend goes with the last of them.
 */
int cl_pack_unpack(struct nacre_fs *fs, struct cl_pend *p, struct nc_layout *layout,
		   struct nc_attr *attr)
{
	struct cl_packer *k = fs->fs_pk;
	struct nc_pack_switch *sw = NULL;
	int rc;

	pthread_mutex_lock(&k->k_lock);
	if (p->p_placed) {
		rc = pk_flush_locked(fs, k, false);
		if (rc)
			goto out;
	}
	if (p->p_new) {
		struct nc_create_req *cq = calloc(1, sizeof(*cq));

		rc = -ENOMEM;
		if (cq) {
			struct nc_call call;
			struct nc_attr_rep rep;

			cq->cq_cred = p->p_cred;
			cq->cq_parent = p->p_parent;
			strcpy(cq->cq_name, p->p_name);
			cq->cq_mode = p->p_attr.a_mode;
			cq->cq_flags = NC_CREATE_EXCL | NC_CREATE_FID;
			cq->cq_fid = p->p_fid;
			rc = nc_cconn_rpc(fs->fs_mds, NC_OP_CREATE, (nc_xdr_fn)nc_wire_create_req, cq,
					  (nc_xdr_fn)nc_wire_attr_rep, &rep, &call);
			if (!rc) {
				nc_call_fini(&call);
				*attr = rep.ar_attr;
				*layout = rep.ar_layout;
				if (!rep.ar_has_layout)
					rc = -NC_E_LAYOUT;
			}
			free(cq);
		}
		if (rc)
			goto out;
		p->p_new = false;
	} else {
		sw = calloc(1, sizeof(*sw));
		rc = -ENOMEM;
		if (!sw)
			goto out;
		sw->ps_cred = p->p_cred;
		sw->ps_fid = p->p_fid;
		sw->ps_flags = NC_SWITCH_PROPOSE;
		sw->ps_old = p->p_old;
		rc = cl_pack_switch_rpc_layout(fs, sw, attr, layout);
		if (rc)
			goto out;
	}
	/* The bytes, then (for a committed file) the switch that shows them. */
	if (p->p_len) {
		if (layout->l_m)
			rc = cl_ec_write(fs, &p->p_cred, &p->p_fid, layout, p->p_data, p->p_len, 0);
		else
			rc = cl_io_write(fs, &p->p_fid, layout, p->p_data, p->p_len, 0);
		if (rc)
			goto out;
	}
	if (sw) {
		sw->ps_flags = 0;
		sw->ps_size = p->p_len;
		sw->ps_mtime = p->p_attr.a_mtime;
		sw->ps_new = *layout;
		rc = cl_pack_switch_rpc_layout(fs, sw, attr, layout);
	} else if (p->p_len) {
		rc = cl_md_size_update(fs, &p->p_cred, &p->p_fid, p->p_len, NC_SIZE_MTIME, attr);
	}
	if (rc)
		goto out;
	attr->a_size = p->p_len;
	p->p_dirty = false;
	p->p_ulayout = *layout;
	pk_unlist(k, p);
	p->p_gone = true;
out:
	pthread_mutex_unlock(&k->k_lock);
	free(sw);
	return rc;
}

/*
 * Truncation of a small file: a pend here is cut in memory, a committed
 * packed file (@cur and @cur_layout as OPEN returned them; NULL: look for a
 * pend only) is loaded, cut and committed at once.  1 when the file is not
 * (or, past pack_max, no longer) packed: the caller truncates its objects.
 */
int cl_pack_truncate(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		     const struct nc_attr *cur, const struct nc_layout *cur_layout,
		     const void *cur_inline, uint64_t size, struct nc_attr *attr)
{
	struct cl_packer *k = fs->fs_pk;
	struct nc_layout layout;
	struct nc_attr pattr;
	struct cl_pend *p;
	uint64_t n;
	int rc;

	if (!k)
		return 1;
	p = cl_pack_open_pend(fs, fid, &pattr);
	if (!p) {
		if (!cur || !(cur_layout->l_flags & NC_LAYOUT_SMALL))
			return 1;
		rc = cl_pack_open_rewrite(fs, cred, cur, cur_layout, cur_inline, false, &p);
		if (rc)
			return rc;
	}
	rc = cl_pend_truncate(fs, p, size);
	if (rc == 1) {
		rc = cl_pack_unpack(fs, p, &layout, attr);
		if (!rc)
			cl_pend_gone(fs, p, &layout, &n); /* lets go of our open */
		else
			cl_pend_close(fs, p);
		return rc ? rc : 1;
	}
	if (!rc)
		rc = cl_pend_fsync(fs, p);
	if (!rc)
		cl_pend_stat(fs, p, attr);
	cl_pend_close(fs, p);
	return rc;
}

/* ---- reading committed packed files ---- */

ssize_t cl_pack_read(struct nacre_fs *fs, const struct nc_layout *layout, void *buf, size_t len,
		     uint64_t off)
{
	struct nc_fid pf = pk_pack_fid(layout->l_pack_id);
	struct nc_layout l = *layout;

	if (off >= layout->l_pack_len)
		return 0;
	if (len > layout->l_pack_len - off)
		len = layout->l_pack_len - off;
	l.l_flags = 0;
	if (l.l_m)
		return cl_ec_read(fs, &pf, &l, buf, len, layout->l_pack_off + off);
	return cl_io_read(fs, &pf, &l, buf, len, layout->l_pack_off + off);
}

/* ---- RPC helpers ---- */

int cl_pack_switch_rpc_layout(struct nacre_fs *fs, struct nc_pack_switch *sw,
			      struct nc_attr *attr, struct nc_layout *layout)
{
	struct nc_attr_rep *rep = calloc(1, sizeof(*rep));
	struct nc_call call;
	int rc;

	if (!rep)
		return -ENOMEM;
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_PACK_SWITCH, (nc_xdr_fn)nc_wire_pack_switch, sw,
			  (nc_xdr_fn)nc_wire_attr_rep, rep, &call);
	if (!rc) {
		nc_call_fini(&call);
		if (attr)
			*attr = rep->ar_attr;
		if (layout)
			*layout = rep->ar_layout;
	}
	free(rep);
	return rc;
}

int cl_pack_switch_rpc(struct nacre_fs *fs, struct nc_pack_switch *sw, struct nc_attr *attr)
{
	return cl_pack_switch_rpc_layout(fs, sw, attr, NULL);
}

/* ---- moving files into packs: conversion and compaction ---- */

/*
 * Reads the bytes of @fid, which the MDS has as @layout (its own objects,
 * or an extent of another pack), and places them in this client's current
 * pack as a move, committed by the next flush with a switch that checks
 * the file did not change meanwhile.  0, or -errno (-EBUSY: this client
 * is writing the file; nothing placed).
 */
static int pk_move_place(struct nacre_fs *fs, const struct nc_fid *fid,
			 const struct nc_attr *attr, const struct nc_layout *layout,
			 uint32_t inline_max)
{
	struct cl_packer *k = fs->fs_pk;
	struct cl_pend *p = calloc(1, sizeof(*p));
	ssize_t got = 0;
	int rc;

	if (!p)
		return -ENOMEM;
	p->p_len = attr->a_size;
	p->p_cap = p->p_len ? p->p_len : 1;
	p->p_data = malloc(p->p_cap);
	if (!p->p_data) {
		free(p);
		return -ENOMEM;
	}
	if (p->p_len) {
		struct nc_layout l = *layout;

		if (l.l_flags & NC_LAYOUT_PACKED)
			got = cl_pack_read(fs, &l, p->p_data, p->p_len, 0);
		else if (l.l_m)
			got = cl_ec_read(fs, fid, &l, p->p_data, p->p_len, 0);
		else
			got = cl_io_read(fs, fid, &l, p->p_data, p->p_len, 0);
		if (got >= 0 && (size_t)got != p->p_len)
			got = -EIO;
		if (got < 0) {
			free(p->p_data);
			free(p);
			return (int)got;
		}
	}
	p->p_fid = *fid;
	p->p_cred = fs->fs_cred;
	p->p_attr = *attr;          /* the mtime stays what it was */
	p->p_old = *layout;
	pk_key_of_layout(p, layout);
	p->p_pack_max = (uint32_t)(p->p_len > NC_PACK_MAX_DEFAULT ? p->p_len : NC_PACK_MAX_DEFAULT);
	p->p_inline_max = inline_max;
	p->p_dirty = true;
	p->p_move = true;
	pthread_mutex_lock(&k->k_lock);
	if (pk_find_fid(k, fid)) {
		/* Being written here: its next commit moves it anyway, but
		 * this call moves nothing. */
		pthread_mutex_unlock(&k->k_lock);
		free(p->p_data);
		free(p);
		return -EBUSY;
	}
	p->p_next = k->k_pends;
	k->k_pends = p;
	atomic_fetch_add(&k->k_npend, 1);
	/* Held while it is placed, as a close does (cl_pend_close()). */
	p->p_opens = 1;
	rc = pk_place_locked(fs, k, p);
	p->p_opens--;
	if (!p->p_opens && (rc || (!p->p_dirty && !p->p_placed)))
		pk_pend_free(k, p);
	pthread_mutex_unlock(&k->k_lock);
	return rc;
}

/*
 * After a flush (which returned @flush_rc): what became of the move of
 * @fid.  0 when it was committed (its pend is gone, kept by a handle that
 * opened the file meanwhile, or a writer's own by now), else why not; a
 * failed move's pend goes unless a handle holds it (k_lock held).
 */
static int pk_move_outcome_locked(struct cl_packer *k, const struct nc_fid *fid, int flush_rc)
{
	struct cl_pend *p = pk_find_fid(k, fid);
	int rc;

	if (!p || !p->p_move)
		return 0;
	rc = p->p_move_rc ? p->p_move_rc : flush_rc ? flush_rc : -EIO;
	if (!p->p_opens)
		pk_pend_free(k, p);
	/* Changed while it was read: the writer's bytes stay where they are. */
	return rc == -NC_E_CHANGED ? -EBUSY : rc;
}

/* Flushes the moves placed so far and collects the outcome of each of
 * @fids[i] with @placed[i]. */
static void pk_moves_finish(struct nacre_fs *fs, const struct nc_fid *fids, const bool *placed,
			    size_t n, int *results)
{
	struct cl_packer *k = fs->fs_pk;
	int frc;

	pthread_mutex_lock(&k->k_lock);
	frc = pk_flush_locked(fs, k, false);
	for (size_t i = 0; i < n; i++)
		if (placed[i])
			results[i] = pk_move_outcome_locked(k, &fids[i], frc);
	pthread_mutex_unlock(&k->k_lock);
}

/* Checks @fid and places it as a move when it should be packed:
 * *placed tells.  0 (placed, or already packed), or -errno. */
static int pk_convert_place(struct nacre_fs *fs, const struct nc_fid *fid, uint32_t pack_max,
			    uint32_t inline_max, bool *placed)
{
	struct nc_layout layout;
	struct nc_attr attr;
	int rc;

	*placed = false;
	rc = cl_flush_fid(fs, fid);
	if (!rc)
		rc = cl_md_open(fs, &fs->fs_cred, fid, NC_OPEN_READ, &attr, &layout, NULL);
	if (rc)
		return rc;
	if (!S_ISREG(attr.a_mode))
		return S_ISDIR(attr.a_mode) ? -EISDIR : -EINVAL;
	/* Who may move it: its owner, or anyone who may write it (the MDS
	 * checks again at the switch). */
	if (attr.a_uid != fs->fs_cred.c_uid && fs->fs_cred.c_uid != 0) {
		struct nc_layout w;

		rc = cl_md_open(fs, &fs->fs_cred, fid, NC_OPEN_READ | NC_OPEN_WRITE, &attr, &w,
				NULL);
		if (rc)
			return rc;
	}
	if (layout.l_flags & NC_LAYOUT_SMALL)
		return 0;
	if (attr.a_size > pack_max)
		return -EFBIG;
	rc = pk_move_place(fs, fid, &attr, &layout, inline_max);
	*placed = rc == 0;
	return rc;
}

NACRE_API int nacre_pack_files(struct nacre_fs *fs, const struct nacre_fid *fids, size_t n,
			       uint32_t pack_max, int *results)
{
	return nacre_pack_files_inline(fs, fids, n, pack_max, 0, results);
}

NACRE_API int nacre_pack_files_inline(struct nacre_fs *fs, const struct nacre_fid *fids,
				      size_t n, uint32_t pack_max, uint32_t inline_max,
				      int *results)
{
	struct nc_fid *f;
	bool *placed;
	int rc;

	if (!fs->fs_pk || (n && (!fids || !results)))
		return -EINVAL;
	if (n == 0)
		return 0;
	if (pack_max == 0)
		pack_max = NC_PACK_MAX_DEFAULT;
	if (inline_max > NC_INLINE_MAX)
		return -EINVAL;
	rc = cl_pack_sync(fs);
	if (rc)
		return rc;
	f = calloc(n, sizeof(*f));
	placed = calloc(n, sizeof(*placed));
	if (!f || !placed) {
		free(f);
		free(placed);
		return -ENOMEM;
	}
	/* The bytes gather in the pack buffer, written and committed a
	 * buffer at a time (the placement flushes a full buffer itself). */
	for (size_t i = 0; i < n; i++) {
		f[i].f_seq = fids[i].seq;
		f[i].f_oid = fids[i].oid;
		results[i] = pk_convert_place(fs, &f[i], pack_max, inline_max, &placed[i]);
	}
	pk_moves_finish(fs, f, placed, n, results);
	free(f);
	free(placed);
	return 0;
}

NACRE_API int nacre_pack_file(struct nacre_fs *fs, const struct nacre_fid *fid,
			      uint32_t pack_max)
{
	int result, rc = nacre_pack_files(fs, fid, 1, pack_max, &result);

	return rc ? rc : result;
}

/* The files of pack @id, NC_PACK_FILES_MAX at a time. */
static int pk_pack_files(struct nacre_fs *fs, uint64_t id, const struct nc_fid *after,
			 struct nc_pack_files *m)
{
	struct nc_call call;
	int rc;

	m->pf_pack = id;
	m->pf_after = *after;
	m->pf_count = 0;
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_PACK_FILES, (nc_xdr_fn)nc_wire_pack_files, m,
			  (nc_xdr_fn)nc_wire_pack_files, m, &call);
	if (!rc)
		nc_call_fini(&call);
	return rc;
}

/* Moves every file still in pack @id, a listing batch at a time: placed
 * together, committed by one flush; @moved counts them. */
static int pk_gc_pack(struct nacre_fs *fs, uint64_t id, struct nc_pack_files *pf,
		      uint64_t *moved)
{
	struct nc_fid after = { 0, 0 };
	bool placed[NC_PACK_FILES_MAX];
	int results[NC_PACK_FILES_MAX];
	int rc;

	do {
		rc = pk_pack_files(fs, id, &after, pf);
		memset(placed, 0, sizeof(placed));
		for (uint32_t j = 0; !rc && j < pf->pf_count; j++) {
			struct nc_layout layout;
			struct nc_attr attr;
			int r;

			results[j] = 0;
			after = pf->pf_fids[j];
			r = cl_md_open(fs, &fs->fs_cred, &after, NC_OPEN_READ, &attr, &layout,
				       NULL);
			if (r == -ENOENT)
				continue; /* removed meanwhile */
			if (!r && (!(layout.l_flags & NC_LAYOUT_PACKED) || layout.l_pack_id != id))
				continue; /* moved meanwhile */
			if (!r)
				r = pk_move_place(fs, &after, &attr, &layout, 0);
			if (r == -EBUSY)
				continue; /* being written here: it leaves on its own */
			if (r)
				rc = r;
			placed[j] = r == 0;
		}
		if (pf->pf_count)
			pk_moves_finish(fs, pf->pf_fids, placed, pf->pf_count, results);
		for (uint32_t j = 0; j < pf->pf_count; j++) {
			if (!placed[j] || results[j] == -EBUSY)
				continue; /* rewritten meanwhile: it left on its own */
			if (results[j] && !rc)
				rc = results[j];
			else if (!results[j])
				(*moved)++;
		}
	} while (!rc && pf->pf_count == NC_PACK_FILES_MAX);
	return rc;
}

/* Packs listed per round of nacre_pack_gc(). */
#define PK_GC_LIST_BATCH 1024u

NACRE_API int nacre_pack_gc(struct nacre_fs *fs, double threshold, uint64_t *moved,
			    uint64_t *freed)
{
	struct nacre_pack_info *packs = NULL;
	struct nc_pack_files *pf = NULL;
	unsigned int n = 0;
	uint64_t nmoved = 0, nfreed = 0, after = 0;
	int rc;

	if (!fs->fs_pk || threshold < 0 || threshold > 1)
		return -EINVAL;
	if (threshold == 0)
		threshold = 0.5;
	packs = calloc(PK_GC_LIST_BATCH, sizeof(*packs));
	pf = calloc(1, sizeof(*pf));
	rc = -ENOMEM;
	if (!packs || !pf)
		goto out;
	/* What this client holds goes first, and its pack is sealed: only
	 * packs no one adds to are compacted. */
	pthread_mutex_lock(&fs->fs_pk->k_lock);
	rc = pk_sync_locked(fs, fs->fs_pk, true);
	pthread_mutex_unlock(&fs->fs_pk->k_lock);
	if (rc)
		goto out;
	/* In id order, a batch at a time.  The packs this pass fills come
	 * last and are whole, so the threshold leaves them alone. */
	while (!rc) {
		rc = nacre_pack_list(fs, after, packs, PK_GC_LIST_BATCH, &n);
		if (rc || n == 0)
			break;
		for (unsigned int i = 0; i < n && !rc; i++) {
			if (!nc_pack_is_sparse(packs[i].sealed, packs[i].files, packs[i].size,
					       packs[i].live, threshold))
				continue;
			rc = pk_gc_pack(fs, packs[i].id, pf, &nmoved);
			if (!rc)
				nfreed++;
		}
		if (n < PK_GC_LIST_BATCH)
			break;
		after = packs[n - 1].id;
	}
	if (!rc) {
		/* The packs this pass filled are sealed too. */
		pthread_mutex_lock(&fs->fs_pk->k_lock);
		rc = pk_sync_locked(fs, fs->fs_pk, true);
		pthread_mutex_unlock(&fs->fs_pk->k_lock);
	}
out:
	if (moved)
		*moved = nmoved;
	if (freed)
		*freed = nfreed;
	free(packs);
	free(pf);
	return rc;
}

/* ---- listing packs ---- */

NACRE_API int nacre_pack_list(struct nacre_fs *fs, uint64_t after, struct nacre_pack_info *out,
			      unsigned int max, unsigned int *count)
{
	struct nc_pack_list *m = calloc(1, sizeof(*m));
	struct nc_call call;
	unsigned int n = 0;
	int rc;

	if (!m)
		return -ENOMEM;
	*count = 0;
	while (n < max) {
		m->pl_after = after;
		m->pl_count = 0;
		rc = nc_cconn_rpc(fs->fs_mds, NC_OP_PACK_LIST, (nc_xdr_fn)nc_wire_pack_list, m,
				  (nc_xdr_fn)nc_wire_pack_list, m, &call);
		if (rc)
			goto out;
		nc_call_fini(&call);
		for (uint32_t i = 0; i < m->pl_count && n < max; i++) {
			out[n].id = m->pl_packs[i].pk_id;
			out[n].size = m->pl_packs[i].pk_size;
			out[n].live = m->pl_packs[i].pk_live;
			out[n].files = m->pl_packs[i].pk_files;
			out[n].sealed = m->pl_packs[i].pk_sealed != 0;
			after = m->pl_packs[i].pk_id;
			n++;
		}
		if (m->pl_count < NC_PACK_LIST_MAX)
			break;
	}
	rc = 0;
out:
	*count = n;
	free(m);
	return rc;
}
