/* SPDX-License-Identifier: MIT */
/*
 * Row locks: the range locks that serialise partial-row writes of an
 * erasure-coded file (parity read-modify-write), held at the OSS of the
 * file's lock OST where all of the file's writers meet.
 *
 * A lock covers [start, start + count) of a file, in whatever unit the
 * caller uses (the client locks rows), and belongs to an owner: the id of
 * the connection that asked for it (nc_srv_conn_id()).  Locks never wait:
 * a request that overlaps another owner's lock fails with -EAGAIN and the
 * client retries.  An owner's locks on one file behave as a set of ranges,
 * as POSIX record locks do: locking adds a range (merged with the owner's
 * overlapping ranges, and the merged range's lease restarts), releasing
 * removes one (splitting a range it falls inside).  Every lock is a lease:
 * once it expires it no longer conflicts with anyone and is reclaimed when
 * next seen, so a client that dies without closing its connection cannot
 * block a row for longer than the lease.
 *
 * The table is bounded: at most the max given to oss_locks_new() ranges
 * are held at once (-ENOSPC beyond).  All calls are thread-safe.
 */
#ifndef OSS_ROWLOCK_H
#define OSS_ROWLOCK_H

#include <stdint.h>

#include "common/types.h"

/* Default bound of the lock table. */
#define OSS_LOCKS_MAX 65536

struct oss_locks;

/* @max: most ranges held at once; 0 means OSS_LOCKS_MAX.
 * @note Free with oss_locks_free(). */
int oss_locks_new(uint32_t max, struct oss_locks **out);
/* Drops every lock and frees the table; NULL is a no-op. */
void oss_locks_free(struct oss_locks *locks);

/*
 * Locks [start, start + count) of @fid for @owner for @lease_ms ms.
 * 0 when granted (also when @owner already holds it: the lease restarts),
 * -EAGAIN while another owner holds an overlapping unexpired range,
 * -ENOSPC when the table is full, -EINVAL for an empty or wrapping range
 * or a zero lease, -ENOMEM.
 */
int oss_lock_try(struct oss_locks *locks, const struct nc_fid *fid,
		 uint64_t start, uint64_t count, uint64_t owner,
		 uint32_t lease_ms);

/*
 * Releases [start, start + count) of @fid held by @owner: 0, or -ENOENT
 * when @owner held no unexpired part of it (-EINVAL, -ENOMEM as above).
 */
int oss_lock_release(struct oss_locks *locks, const struct nc_fid *fid,
		     uint64_t start, uint64_t count, uint64_t owner);

/* Drops every lock and watch of @owner (its connection closed); returns
 * how many lock ranges it held. */
uint32_t oss_lock_release_owner(struct oss_locks *locks, uint64_t owner);

/*
 * Watches.  A rebuild that locks one row at a time rather than the whole
 * file must learn which rows writers locked while it ran: it may have
 * passed a row before a writer rewrote it (skipping the shard being
 * rebuilt, which is marked stale).  A watch on a file belongs to an owner,
 * as a lock does, and records every range granted to any *other* owner on
 * that file from its start on.  It is a lease too, renewed by its start,
 * by each fetch and by every lock its owner takes on the file, and it goes
 * with its owner's connection.  Its ranges are kept sorted and merged;
 * beyond OSS_WATCH_RANGES of them, the two with the smallest gap between
 * them merge into one that covers the gap too: the rebuild then redoes
 * more rows, never fewer.  At most OSS_WATCHES_MAX watches at once
 * (-ENOSPC).
 */
#define OSS_WATCH_RANGES 256
#define OSS_WATCHES_MAX 4096

/* Starts (or restarts, emptied) @owner's watch on @fid for @lease_ms. */
int oss_watch_start(struct oss_locks *locks, const struct nc_fid *fid, uint64_t owner,
		    uint32_t lease_ms);

/*
 * The ranges @owner's watch on @fid recorded, [start[i], end[i]) for i below
 * *n in order, at most @max of them (more are merged into the last), and renews it
 * for @lease_ms.  -ENOENT when there is no such watch (never started,
 * expired, or dropped with a connection): rows may have been written
 * unseen.
 */
int oss_watch_fetch(struct oss_locks *locks, const struct nc_fid *fid, uint64_t owner,
		    uint32_t lease_ms, uint64_t *start, uint64_t *end, uint32_t max,
		    uint32_t *n);

/* Ends @owner's watch on @fid: 0, or -ENOENT when it had none. */
int oss_watch_stop(struct oss_locks *locks, const struct nc_fid *fid, uint64_t owner);

/* Number of unexpired ranges held (statistics and tests). */
uint32_t oss_locks_held(struct oss_locks *locks);

#endif
