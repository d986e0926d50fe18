/* SPDX-License-Identifier: MIT */
/*
 * mds/db.c is the only file that calls LMDB.  It opens the MDT environment
 * with its named databases and offers transactions, point operations and
 * ordered cursors over byte keys.  LMDB's return codes never leave db.c:
 * MDB_NOTFOUND becomes -ENOENT, MDB_KEYEXIST -EEXIST, MDB_MAP_FULL and
 * MDB_TXN_FULL -ENOSPC, anything else -EIO (logged).
 */
#ifndef MDS_DB_H
#define MDS_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The named databases of an MDT. */
enum mds_table {
	MDS_T_CONFIG = 0,       /* string key -> value: fsname, uuid, next fid, default layout */
	MDS_T_INODES,           /* fid (16 bytes, big-endian) -> inode record */
	MDS_T_DIRENTS,          /* parent fid + name -> child fid, type, cookie */
	MDS_T_DIRCOOKIES,       /* parent fid + cookie (BE u64) -> name */
	MDS_T_XATTRS,           /* fid + name -> value */
	MDS_T_OSTS,             /* OST index (BE u32) -> OST record */
	MDS_T_DESTROY,          /* queue id (BE u64) -> fid + layout of removed file */
	MDS_T_PACKS,            /* pack id (BE u64) -> pack record (ns_pack.c) */
	MDS_T_PACKFILES,        /* pack id (BE u64) + fid -> nothing: who uses a pack */
	MDS_T_CHANGELOG,        /* sequence number (BE u64) -> changelog record */
	MDS_T_POOLS,            /* OST pool name -> member OST indexes (ns_pool.c) */
	MDS_T_REPLIES,          /* client uuid + slot -> last reply (ns_reply.c) */
	MDS_T_COUNT
};

struct mds_db;
struct mds_txn;
struct mds_cursor;

/* Opens (creating when absent) the environment in directory @dir.
 * @map_size: the LMDB map size in bytes (0: 1 GiB). */
int mds_db_open(const char *dir, uint64_t map_size, struct mds_db **out);
void mds_db_close(struct mds_db *db);

int mds_db_txn_begin(struct mds_db *db, bool rdonly, struct mds_txn **out);
/*
 * Group commit.  Between mds_db_batch_begin() and mds_db_batch_end() on one
 * thread, every read-write transaction that thread begins is nested in one
 * parent: its commit or abort is atomic as usual but not yet durable;
 * mds_db_batch_end() commits the parent, with a single fsync for the whole
 * batch.  A read-only one reads through the parent itself (it sees what the
 * batch wrote so far); it must end before the thread begins another.
 * Callers reply to nothing in a batch before it ends.
 */
int mds_db_batch_begin(struct mds_db *db);
int mds_db_batch_end(struct mds_db *db);

/*
 * A read-write transaction that, in a batch, writes straight into the
 * batch: no nested transaction (LMDB allocates megabytes for each), so no
 * undo of its own, and a write that fails fails the whole batch.  For a
 * record whose write is not expected to fail (the writer budgets the
 * map's room per change), and only when nothing else of this thread's is
 * open.  Outside a batch it is mds_db_txn_begin(db, false, out).
 */
int mds_db_txn_begin_flat(struct mds_db *db, struct mds_txn **out);

/* Commits durably (fsync) before returning (in a batch: into the batch);
 * frees the txn either way. */
int mds_db_txn_commit(struct mds_txn *txn);
void mds_db_txn_abort(struct mds_txn *txn);

/* @note *val points into the map and is valid until the txn ends. */
int mds_db_get(struct mds_txn *txn, enum mds_table t, const void *key,
	       size_t klen, const void **val, size_t *vlen);
/* @noover: fail with -EEXIST when the key exists. */
int mds_db_put(struct mds_txn *txn, enum mds_table t, const void *key,
	       size_t klen, const void *val, size_t vlen, bool noover);
int mds_db_del(struct mds_txn *txn, enum mds_table t, const void *key,
	       size_t klen);

/* Ordered iteration: seek to the first key >= @key, then next.  Each returns
 * 0 with *key and *val pointing into the map, or -ENOENT at the end. */
int mds_db_cursor_open(struct mds_txn *txn, enum mds_table t,
		       struct mds_cursor **out);
int mds_db_cursor_seek(struct mds_cursor *c, const void *key, size_t klen,
		       const void **k, size_t *kl, const void **v, size_t *vl);
int mds_db_cursor_next(struct mds_cursor *c, const void **k, size_t *kl,
		       const void **v, size_t *vl);
void mds_db_cursor_close(struct mds_cursor *c);

/* Entries in a table; map size, used and free pages (for statfs). */
int mds_db_count(struct mds_txn *txn, enum mds_table t, uint64_t *entries);
int mds_db_space(struct mds_db *db, uint64_t *map_size, uint64_t *used);

/*
 * Bytes of the map still free: those past the last page used, plus, when
 * they are fewer than @enough(map size), LMDB's free list (reusable pages;
 * walking it costs a read transaction, so it is skipped while the map has
 * room).  Not to be called while this thread has a batch open.
 */
int mds_db_free_bytes(struct mds_db *db, uint64_t (*enough)(uint64_t map_size),
		      uint64_t *map_size, uint64_t *free_bytes);

/* The environment's size figures for the metrics port. */
struct mds_db_stats {
	uint64_t ds_map_size;           /* bytes */
	uint64_t ds_used;               /* bytes up to the last page used */
	uint64_t ds_page_size;          /* bytes */
	uint64_t ds_free_pages;         /* pages on LMDB's free list (reusable) */
};
int mds_db_stats(struct mds_db *db, struct mds_db_stats *st);

#endif
