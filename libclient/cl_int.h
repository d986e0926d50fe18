/* SPDX-License-Identifier: MIT */
/*
 * libnacre internals, shared by the files of libclient/.
 *
 *   fs.c    connecting, the OST table and OST connections, statfs
 *   md.c    metadata requests to the MDS by FID
 *   io.c    data: splitting requests on chunk boundaries, parallel OST RPCs
 *   file.c  open files: size tracking, fsync, close, unlink of open files
 *   path.c  path resolution and the path API
 */
#ifndef CL_INT_H
#define CL_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "common/ec.h"
#include "common/layout.h"
#include "common/rpc.h"
#include "common/types.h"
#include "nacre.h"

#define NACRE_API __attribute__((visibility("default")))

/* Unlinked names of files still open here (as NFS's silly rename). */
struct cl_hidden {
	struct nc_fid h_fid;
	struct nc_fid h_parent;
	char h_name[NC_NAME_MAX + 1];
	struct nc_cred h_cred;
	struct cl_hidden *h_next;
};

struct cl_ost {
	bool co_known;
	bool co_up;
	struct nc_ost_info co_info;
	struct nc_cconn *co_conn;       /* created on first use */
	char co_conn_addr[NC_ADDR_MAX + 1];
	/* The connection of repairs' row locks and watches, also made on
	 * first use.  A lock belongs to its connection at the OSS: apart
	 * from co_conn, a rebuild holds back this client's own writers of
	 * the file and sees their locks in its watch, as another client's. */
	struct nc_cconn *co_repair_conn;
	char co_repair_addr[NC_ADDR_MAX + 1];
	/* When a request to this OST last timed out with none answered since
	 * (0: it answers).  Erasure-coded reads decode around a silent OST
	 * for a while rather than wait out a timeout per request. */
	_Atomic int64_t co_silent_ms;
};

/* readahead.c: counters of the files a client changed, and the most
 * chunks one handle reads ahead. */
#define CL_RA_GENS 256
#define CL_RA_MAX_SEGS 64
#define CL_RA_DEFAULT_KB (16 * 1024)

/*
 * The client's counters (nacre_counters(), libclient/stats.c, where each is
 * named and described): atomics bumped where the event is known.
 */
enum cl_ctr {
	CL_CTR_READS,                   /* nacre_pread calls that returned data */
	CL_CTR_READ_BYTES,
	CL_CTR_WRITES,
	CL_CTR_WRITE_BYTES,
	CL_CTR_DEGRADED_READS,          /* pieces rebuilt from parity on read */
	CL_CTR_DEGRADED_READ_BYTES,
	CL_CTR_CHECKSUM_ERRORS,         /* chunks an OST refused as corrupt */
	CL_CTR_SHARDS_MARKED_STALE,
	CL_CTR_REBUILD_FILES,
	CL_CTR_REBUILD_ROWS,
	CL_CTR_REBUILD_CHUNKS,          /* chunks regenerated and written */
	CL_CTR_REBUILD_ROWS_PENDING,    /* a gauge: rows left in rebuilds under way */
	CL_CTR_REBUILD_SHARDS_CLEARED,
	CL_CTR_SCRUB_FILES,
	CL_CTR_SCRUB_BAD_CHUNKS,
	CL_CTR_COUNT
};

#define cl_count(fs, ctr, n) \
	atomic_fetch_add_explicit(&(fs)->fs_ctr[(ctr)], (uint64_t)(n), memory_order_relaxed)
#define cl_uncount(fs, ctr, n) \
	atomic_fetch_sub_explicit(&(fs)->fs_ctr[(ctr)], (uint64_t)(n), memory_order_relaxed)

struct nacre_fs {
	char fs_mds_addr[NC_ADDR_MAX + 1];
	char fs_name[NC_FSNAME_MAX + 1];
	struct nc_cconn *fs_mds;
	struct nc_cred fs_cred;
	int fs_timeout_ms;
	int fs_retry_ms;
	uint8_t fs_key[NC_AUTH_KEY_LEN]; /* the cluster key */
	pthread_mutex_t fs_lock;        /* OST table, open list, hidden list */
	struct cl_ost fs_osts[NC_MAX_OSTS];
	struct nacre_file *fs_open;
	struct cl_hidden *fs_hidden;
	struct nc_ec *fs_ec[NC_EC_MAX_K + 1][NC_EC_MAX_M + 1]; /* coders, made on first use */
	size_t fs_wb_bytes;             /* under fs_lock: write-back buffers held */
	struct cl_ncache *fs_ncache;    /* names of path resolution (ncache.c) */
	struct cl_packer *fs_pk;        /* small files (pack.c) */
	uint64_t fs_ra_max;             /* readahead per open file, bytes; 0: none */
	/* Generations of files this client wrote, hashed (readahead.c). */
	atomic_uint_fast64_t fs_ra_gen[CL_RA_GENS];
	atomic_uint_fast64_t fs_ra_fetched, fs_ra_served, fs_ra_dropped;
	atomic_uint_fast64_t fs_ctr[CL_CTR_COUNT];
};

struct nacre_file {
	struct nacre_fs *f_fs;
	struct nc_fid f_fid;
	struct nc_cred f_cred;
	int f_flags;                    /* open(2) flags */
	struct nc_layout f_layout;
	pthread_mutex_t f_lock;
	uint64_t f_size;                /* what this handle knows the size to be */
	bool f_written;                 /* mtime to report at close/fsync */
	struct nc_attr f_open_attr;     /* as the MDS returned it at open */
	int f_refs;                     /* under fs_lock: the open list's + flushers' */
	/* Write-back of erasure-coded files: sequential writes gather here
	 * and go out as whole rows (see file.c). */
	pthread_mutex_t f_wb_lock;
	uint8_t *f_wb;
	size_t f_wb_cap;
	uint64_t f_wb_off;
	size_t f_wb_len;
	int f_wb_err;                   /* a failed flush, reported once */
	atomic_bool f_wb_pending;       /* the buffer holds data (a hint) */
	struct cl_pend *f_pend;         /* a packed file held here (pack.c) */
	/* An inline file's bytes, f_inline_len of them: the size at open.  A
	 * truncation here may move f_size since; past the bytes are zeros. */
	uint8_t *f_inline;
	uint32_t f_inline_len;
	struct cl_ra *f_ra;             /* readahead (readahead.c); under f_lock */
	struct nacre_file *f_next, *f_prev;
};

/* readahead.c */
struct cl_ra;
/*
 * Serves the start of a read of [off, off + len) of @f (a @size-byte file
 * laid out as @l) from what was read ahead, notes the read in the handle's
 * stream and starts the reads ahead of it.  Returns how many bytes from
 * @off it placed in @buf (0..len); the caller reads the rest directly.
 */
ssize_t cl_ra_read(struct nacre_file *f, const struct nc_layout *l, void *buf, size_t len,
		   uint64_t off, uint64_t size);
/* This client changed the bytes of @fid (called when a write or truncate
 * of its objects ends, by the one path each takes: cl_io_write(),
 * cl_ec_write(), cl_truncate()): bytes read ahead before go unread. */
void cl_ra_file_changed(struct nacre_fs *fs, const struct nc_fid *fid);
/* Waits for reads in flight and frees @f's readahead (at close). */
void cl_ra_free(struct nacre_file *f);

/* fs.c */
void cl_cred_from(struct nacre_fs *fs, const struct nacre_cred *in, struct nc_cred *out);
void cl_stat_from_attr(const struct nc_attr *a, struct nacre_stat *st);
void cl_layout_to_public(const struct nc_layout *l, struct nacre_layout *out);
void cl_layout_from_public(const struct nacre_layout *in, struct nc_layout *l);
/* The connection to the OSS of OST @idx (refreshing the table once when
 * the OST is unknown); -ENODEV when the MDS does not know it. */
int cl_ost_conn(struct nacre_fs *fs, uint32_t idx, struct nc_cconn **out);
/* The same, for a repair's locks and watches (cl_ost.co_repair_conn)
 * when @repair. */
int cl_ost_conn_as(struct nacre_fs *fs, uint32_t idx, bool repair, struct nc_cconn **out);
int cl_ost_refresh(struct nacre_fs *fs);
/* Maps library-internal error codes for callers (identity today). */
int cl_err(int rc);

/* ncache.c: the name cache of path resolution; NULL or a TTL <= 0 makes
 * every call a no-op (get misses). */
struct cl_ncache;
int cl_ncache_new(int ttl_ms, struct cl_ncache **out);
void cl_ncache_free(struct cl_ncache *n);
/* A hit; @stale_ok: also an entry whose times, size or link count are
 * known to have changed (the caller needs only its FID and type). */
bool cl_ncache_get(struct cl_ncache *n, const struct nc_cred *cred, const struct nc_fid *parent,
		   const char *name, bool stale_ok, struct nc_attr *attr);
void cl_ncache_put(struct cl_ncache *n, const struct nc_cred *cred, const struct nc_fid *parent,
		   const char *name, const struct nc_attr *attr);
/* This client changed the file: forget its attributes under every name. */
void cl_ncache_drop_fid(struct cl_ncache *n, const struct nc_fid *fid);
/* This client changed a directory's entries: its times, size and link
 * count are stale, its FID, type, owner and mode are not. */
void cl_ncache_stale_fid(struct cl_ncache *n, const struct nc_fid *fid);
/* The name went away or changed meaning. */
void cl_ncache_drop_name(struct cl_ncache *n, const struct nc_fid *parent, const char *name);

/* path.c: the directory (resolved) and last name of @path. */
int cl_resolve_parent(struct nacre_fs *fs, const struct nc_cred *cred, const char *path,
		      struct nc_fid *parent, char *name);

/* file.c: whether a lookup with the open intent opened the regular file it
 * found: a layout (objects, a pack's extent, inline bytes) came with it, or
 * it is empty.  An MDS that does not know the intent sends a file with
 * bytes but no layout. */
bool cl_lookup_opened(const struct nc_attr *a, const struct nc_layout *l);
/* What a lookup with the open intent gave: enough to open for reading with
 * no further request (nacre_lookup_open()). */
struct nacre_intent {
	struct nc_cred in_cred;
	struct nc_attr in_attr;
	struct nc_layout in_layout;
	uint8_t *in_inline;             /* an inline file's bytes, or NULL */
};
/* file.c: nacre_lookup_open() with the credentials and parent already
 * in their wire form. */
int cl_lookup_open(struct nacre_fs *fs, const struct nc_cred *c, const struct nc_fid *parent,
		   const char *name, struct nacre_stat *st, struct nacre_intent **intent);
/* md.c: what an attribute reply gave (see attr_rpc() there for @inl);
 * before the call that holds @rep is finished. */
int cl_md_attr_rep_take(const struct nc_attr_rep *rep, struct nc_attr *attr,
			struct nc_layout *layout, uint8_t **inl);
/* file.c: a read-only open from what LOOKUP_OPEN returned (@inl: an inline
 * file's bytes when the reply carried them, else NULL: they are asked for). */
int cl_file_open_read(struct nacre_fs *fs, const struct nc_cred *cred, struct nc_attr *attr,
		      struct nc_layout *layout, const void *inl, int flags,
		      struct nacre_file **out);

/* pack.c: small files.  A "pend" is a packed file this client holds in
 * memory: created here and not yet committed, or open for rewriting. */
struct cl_pend;
int cl_pack_init(struct nacre_fs *fs, const struct nacre_opts *opts);
void cl_pack_fini(struct nacre_fs *fs);
/* Commits every pend's bytes; before namespace changes and listings. */
int cl_pack_sync(struct nacre_fs *fs);
bool cl_pack_lookup(struct nacre_fs *fs, const struct nc_fid *parent, const char *name,
		    struct nc_attr *attr);
bool cl_pack_getattr(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_attr *attr);
void cl_pack_dir_changed(struct nacre_fs *fs, const struct nc_fid *dir);
/* 0 and a new pend (one open), 1 when the file is not to be packed (the
 * caller creates it as usual), or -errno. */
int cl_pack_create(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		   const char *name, uint32_t mode, int flags, struct nc_attr *attr,
		   struct cl_pend **out);
struct cl_pend *cl_pack_open_pend(struct nacre_fs *fs, const struct nc_fid *fid,
				  struct nc_attr *attr);
/* @inl: an inline file's bytes (attr->a_size of them); NULL for packed. */
int cl_pack_open_rewrite(struct nacre_fs *fs, const struct nc_cred *cred,
			 const struct nc_attr *attr, const struct nc_layout *layout,
			 const void *inl, bool trunc, struct cl_pend **out);
ssize_t cl_pend_read(struct nacre_fs *fs, struct cl_pend *p, void *buf, size_t len,
		     uint64_t off);
uint64_t cl_pend_size(struct nacre_fs *fs, struct cl_pend *p);
ssize_t cl_pend_write(struct nacre_fs *fs, struct cl_pend *p, const void *buf, size_t len,
		      uint64_t off, bool append);
int cl_pend_truncate(struct nacre_fs *fs, struct cl_pend *p, uint64_t size);
void cl_pend_stat(struct nacre_fs *fs, struct cl_pend *p, struct nc_attr *attr);
int cl_pend_fsync(struct nacre_fs *fs, struct cl_pend *p);
int cl_pend_flush(struct nacre_fs *fs, struct cl_pend *p);
int cl_pend_close(struct nacre_fs *fs, struct cl_pend *p);
/* True when the pend was unpacked: @layout and @size are the file's now,
 * and the caller's handle no longer holds the pend. */
bool cl_pend_gone(struct nacre_fs *fs, struct cl_pend *p, struct nc_layout *layout,
		  uint64_t *size);
int cl_pack_unpack(struct nacre_fs *fs, struct cl_pend *p, struct nc_layout *layout,
		   struct nc_attr *attr);
int cl_pack_truncate(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		     const struct nc_attr *cur, const struct nc_layout *cur_layout,
		     const void *cur_inline, uint64_t size, struct nc_attr *attr);
ssize_t cl_pack_read(struct nacre_fs *fs, const struct nc_layout *layout, void *buf, size_t len,
		     uint64_t off);
struct nc_pack_switch;
int cl_pack_switch_rpc(struct nacre_fs *fs, struct nc_pack_switch *sw, struct nc_attr *attr);
int cl_pack_switch_rpc_layout(struct nacre_fs *fs, struct nc_pack_switch *sw,
			      struct nc_attr *attr, struct nc_layout *layout);

/* md.c */
int cl_md_getattr(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_attr *attr);
int cl_md_getlayout(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_layout *l);
/* With @inl (else NULL), *@inl receives an inline file's bytes
 * (attr->a_size of them) in a buffer the caller frees; NULL for others. */
int cl_md_open(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
	       uint32_t flags, struct nc_attr *attr, struct nc_layout *layout, uint8_t **inl);
int cl_md_create(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		 const char *name, uint32_t mode, uint32_t rdev, uint32_t flags,
		 const char *target, struct nc_attr *attr, struct nc_layout *layout);
int cl_md_size_update(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		      uint64_t size, uint32_t flags, struct nc_attr *attr);
int cl_md_setattr(struct nacre_fs *fs, const struct nc_setattr_req *sa, struct nc_attr *attr);
int cl_md_unlink(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		 const char *name, uint32_t flags);
int cl_md_rename(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *op,
		 const char *on, const struct nc_fid *np, const char *nn, uint32_t flags);
/* LOOKUP and, for a regular file, OPEN for reading in one request. */
int cl_md_lookup_open_req(const struct nc_cred *cred, const struct nc_fid *parent,
			  const char *name, struct nc_name_req *m);
int cl_md_lookup_open(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		      const char *name, struct nc_attr *attr, struct nc_layout *layout,
		      uint8_t **inl);
int cl_md_lookup(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		 const char *name, struct nc_attr *attr);
/* Truncates a file to @size: objects first, then the MDS (see md.c). */
int cl_truncate(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		uint64_t size, struct nc_attr *attr);

/* io.c: one object RPC of a data request. */
struct cl_piece {
	struct nc_call ip_call;
	struct nc_obj_req ip_req;
	uint8_t ip_body[64];
	struct nc_cconn *ip_conn;
	struct nc_extent ip_ext;        /* e_stripe, e_obj_off, e_len used */
};

/* Encodes the request of @p (ip_ext filled in) for @op; the caller then
 * sets bulk pointers.  -ENODEV and friends when the OST is unknown. */
int cl_piece_prepare(struct nacre_fs *fs, const struct nc_fid *fid,
		     const struct nc_layout *l, struct cl_piece *p, uint16_t op);
/* Runs @p[0..n) in parallel; each ip_call.c_status holds its outcome.  With
 * @retry, pieces whose connection failed are resent through the retrying
 * path (plain striping rides out restarts); erasure-coded I/O passes false
 * and decodes around the failure instead.  Returns the first error. */
int cl_pieces_run(struct cl_piece *p, int n, bool retry);
void cl_pieces_fini(struct cl_piece *p, int n);
/* The one piece that holds all of [@off, @off + @len) of @fid, laid out as
 * @layout: the object to ask in *@ofid, the layout to address it with in
 * *@l (a packed file's pack's) and the piece in *@ext.  False when the
 * range spans pieces or its shard is marked stale. */
bool cl_one_piece(const struct nc_fid *fid, const struct nc_layout *layout, uint64_t off,
		  uint32_t len, struct nc_fid *ofid, struct nc_layout *l, struct nc_extent *ext);

/* Plain striping (m = 0); ec_io.c handles m > 0. */
ssize_t cl_io_read(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		   void *buf, size_t len, uint64_t off);
int cl_io_write(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		const void *buf, size_t len, uint64_t off);
/* As cl_io_write(), but an OST that does not answer fails the write at
 * once instead of being waited for (packs: the bytes can go elsewhere);
 * @failed (may be NULL) gets a bit per stripe whose write failed. */
int cl_io_write_once(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		     const void *buf, size_t len, uint64_t off, uint64_t *failed);
/*
 * Truncates (NC_OP_OBJ_TRUNC, to what @file_size needs) or syncs every object
 * of the layout, in parallel.  With @failed NULL (plain striping) any
 * failure is the result, after retries.  With @failed set (erasure coding)
 * stale shards are skipped and the shards that failed are returned as a
 * bit mask for cl_objects_settle().
 */
int cl_io_objects(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		  uint16_t opcode, uint64_t file_size, uint64_t *failed);
/* Marks the shards of @failed stale, or -EIO when more than m are lost. */
int cl_objects_settle(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		      struct nc_layout *l, uint64_t failed);

#define CL_IO_BATCH 64  /* pieces in flight per batch */

/* ec_io.c: erasure-coded files. */

/* A shard flag known only to one request: its I/O failed, skip it. */
#define CL_SHARD_FAILED 0x80000000u
/* With CL_SHARD_FAILED: the failure was ENOSPC (the OST is full), so a row
 * that cannot be written reports ENOSPC rather than EIO. */
#define CL_SHARD_NOSPC 0x40000000u
#define CL_SHARD_REQUEST_FLAGS (CL_SHARD_FAILED | CL_SHARD_NOSPC)

/* A read or write of bytes [co_lo, co_lo + co_len) of chunk co_chunk
 * (data chunk < k, parity k + p) of one row. */
struct cl_chunk_op {
	uint32_t co_chunk;
	uint32_t co_lo;
	uint32_t co_len;
	uint8_t *co_buf;
	int co_status;
	bool co_skip;                   /* not sent: counts as -EHOSTDOWN */
};

/* Records how a request to OST @idx ended: -ETIMEDOUT makes it silent,
 * success makes it answer again; other outcomes change nothing. */
void cl_ost_note_result(struct nacre_fs *fs, uint32_t idx, int rc);
/* True while OST @idx is silent: a request timed out less than twice the
 * request timeout ago and none has succeeded since.  Afterwards requests
 * go to it again, and one that answers clears it. */
bool cl_ost_is_silent(struct nacre_fs *fs, uint32_t idx);
/* True when asking OST @idx (through @cc) now would only wait: the MDS
 * lists it down and this client has no connection to it, or it is silent. */
bool cl_ost_known_down(struct nacre_fs *fs, uint32_t idx, struct nc_cconn *cc);
/* While OST @idx is silent, when its last request timed out (nc_now_ms());
 * 0 otherwise. */
int64_t cl_ost_silent_since(struct nacre_fs *fs, uint32_t idx);
/* How long a failing OST is left out (reads, new packs): twice the
 * request timeout, so one more timeout is likely to end within it. */
int64_t cl_ost_avoid_ms(const struct nacre_fs *fs);

int cl_ec_coder(struct nacre_fs *fs, const struct nc_layout *l, struct nc_ec **out);
/* One request without retries (locks, probes); @enc may be NULL (no body). */
int cl_rpc_once(struct nc_cconn *cc, uint16_t op, nc_xdr_fn enc, void *req);
/* The same with a reply body decoded into @rep by @dec (a reply that
 * does not decode fails with the decoder's error). */
int cl_rpc_once_rep(struct nc_cconn *cc, uint16_t op, nc_xdr_fn enc, void *req,
		    nc_xdr_fn dec, void *rep);
bool cl_chunk_usable(const struct nc_layout *l, uint64_t row, uint32_t i);
int cl_chunk_ops_run(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_layout *l,
		     uint64_t row, struct cl_chunk_op *ops, int n, uint16_t opcode);
int cl_row_read_data(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_layout *l,
		     struct nc_ec *ec, uint64_t row, uint32_t lo, uint32_t len, uint8_t **data);
ssize_t cl_ec_read(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		   void *buf, size_t len, uint64_t off);
/* Writes, marking stale (in @layout too) the shards it could not reach.
 * @fid NULL: @layout names its objects (NC_LAYOUT_OBJFID) and nobody else
 * knows them yet (a migration's): no row locks, and stale marks only in
 * @layout, not on the MDS. */
int cl_ec_write(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		struct nc_layout *layout, const void *buf, size_t len, uint64_t off);
/* A row count past any file's last row: [r0, CL_ALL_ROWS) is "row r0 on". */
#define CL_ALL_ROWS (1ull << 62)
/* Row locks of a repair (@repair) are held on the repair connections. */
int cl_lock_rows(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		 uint64_t r0, uint64_t nrows, bool repair, uint32_t *ost_out);
/* Takes the stale marks of @l afresh from the MDS (call with rows locked). */
int cl_refresh_marks(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_layout *l);
void cl_unlock_rows(struct nacre_fs *fs, const struct nc_fid *fid, uint32_t ost, uint64_t r0,
		    uint64_t nrows, bool repair);
/* OBJ_WATCH at @ost, on the repair connection: NC_WATCH_START,
 * NC_WATCH_FETCH (into @rep) or NC_WATCH_STOP; -EOPNOTSUPP from an OSS
 * older than protocol 1.7. */
int cl_watch(struct nacre_fs *fs, const struct nc_fid *fid, uint32_t ost, uint32_t action,
	     struct nc_watch_rep *rep);
int cl_shard_set(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		 struct nc_layout *l, uint32_t stripe, uint32_t set, uint32_t clear);

/* file.c */
bool cl_file_is_open(struct nacre_fs *fs, const struct nc_fid *fid);
/* Sends the write-back data every handle of @fid holds here.  0 or the
 * first error. */
int cl_flush_fid(struct nacre_fs *fs, const struct nc_fid *fid);
/* Explicit times were set on @fid: handles here drop their pending mtime
 * report, which would undo them. */
void cl_file_times_set(struct nacre_fs *fs, const struct nc_fid *fid);
/* Tells every handle of @fid open here that the file is now @size bytes. */
void cl_file_size_set(struct nacre_fs *fs, const struct nc_fid *fid, uint64_t size);
/* Renames @name away when it names a file open here with one link, so the
 * data lives on until the last close.  1 when it did, 0 when not needed. */
int cl_hide_if_open(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		    const char *name);

#endif
