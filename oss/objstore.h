/* SPDX-License-Identifier: MIT */
/*
 * The object store of one OST: a local directory holding one shard object
 * per (file, OST), named by the file's FID.
 *
 *   DIR/ost.conf            "fsname=..\nindex=..\nuuid=..\n" written at format
 *   DIR/O/XX/SEQ:OID        objects, XX = low byte of the oid in hex
 *
 *   DIR/O/XX/SEQ:OID.crc    the object's checksums (below)
 *
 * Objects are created on first write.  Reading past an object's end returns
 * fewer bytes (the client fills the hole of a sparse file with zeros);
 * reading an object that does not exist returns 0 bytes.  Thread-safe: each
 * call opens the object (a descriptor cache comes with the fast data path).
 *
 * Checksums.  The sidecar SEQ:OID.crc holds one little-endian u32 CRC32C
 * (nc_crc32c, seed 0) per OSS_CSUM_BLOCK bytes of the object: entry i covers
 * object bytes [i * OSS_CSUM_BLOCK, (i + 1) * OSS_CSUM_BLOCK), the last block
 * only the bytes that exist (no padding).  Writes, truncate and punch update
 * the entries of every block whose bytes they change; reads check every
 * block they touch and fail with -NC_E_CHECKSUM rather than return bad bytes.
 *
 * Holes: a block that was never written (a sparse write's gap, a truncate
 * upwards, a punched range) has entry 0, or no entry at all when it lies
 * past the sidecar's end.  Entry 0 is accepted for a block whose bytes are
 * all zero; any other content must match its CRC.  This keeps a sparse
 * object's sidecar sparse too, instead of writing the CRC of zeros for
 * every block of a hole.  (The CRC of real data is 0 one time in 2^32; such
 * a block still verifies, it only loses the all-zero corruption check.)
 *
 * Each object has a reader-writer lock (striped over OSS_OBJ_LOCKS by FID):
 * writes, truncate, punch and destroy hold it exclusively, reads and verify
 * shared, so a reader never sees data and checksums half updated.  A crash
 * between a data write and its checksum update leaves the touched blocks
 * failing verification; the client reads around them (erasure coding) and
 * the next write of those blocks heals them.  oss_obj_sync() makes both
 * files durable.
 */
#ifndef OSS_OBJSTORE_H
#define OSS_OBJSTORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/types.h"

/* Bytes covered by one checksum of the object sidecar. */
#define OSS_CSUM_BLOCK 4096
/* Stripes of the per-object lock table of an OST. */
#define OSS_OBJ_LOCKS 256

struct oss_ost;
struct oss_fdc_ent;

/* Formats @dir as OST @index of @fsname (creating @dir when missing).
 * -EEXIST when it is already formatted. */
int oss_ost_format(const char *dir, const char *fsname, uint32_t index);
/* Opens a formatted OST, which keeps up to @pack_fds pack objects open
 * between reads (oss/fdcache.h; 0: none).  -NC_E_NOTFMT when @dir holds
 * none, -NC_E_FSNAME when it belongs to another filesystem. */
int oss_ost_open(const char *dir, const char *fsname, unsigned int pack_fds,
		 struct oss_ost **out);
void oss_ost_close(struct oss_ost *ost);
uint32_t oss_ost_index(const struct oss_ost *ost);
void oss_ost_uuid(const struct oss_ost *ost, uint8_t uuid[16]);
const char *oss_ost_dir(const struct oss_ost *ost);

/* Returns bytes read (0..len); -NC_E_CHECKSUM when a block the range
 * touches does not match its checksum (nothing is returned then). */
ssize_t oss_obj_read(struct oss_ost *ost, const struct nc_fid *fid,
		     uint64_t off, void *buf, size_t len);
/*
 * A verified range of an object, to be sent straight from the page cache
 * (sendfile).  The object's file stays open until oss_obj_read_release();
 * its lock is not held while the bytes are sent, so a slow peer never
 * stalls writers: a write that races the send may show in the bytes sent,
 * as in any read that overlaps a write, and a truncate that races it makes
 * the send fail (the client retries the read).
 */
struct oss_read_hold {
	int rh_fd;                      /* the object file; -1: nothing held */
	struct oss_fdc_ent *rh_ent;     /* rh_fd's cache entry, or NULL */
	struct oss_ost *rh_ost;
	uint64_t rh_off;
	size_t rh_len;                  /* bytes to send from rh_off */
};

/*
 * Checks every block [off, off + len) touches, as oss_obj_read() does,
 * under the object's lock, for the range to be sent from the page cache:
 * a small range through a copy in a per-thread buffer, a large one through
 * a read-only mapping of the page cache (no copy).  Returns the bytes held
 * (0..len: 0 past the end or for a missing object, and then nothing is
 * held) or -errno / -NC_E_CHECKSUM.  Release a hold with bytes with
 * oss_obj_read_release().
 */
ssize_t oss_obj_read_hold(struct oss_ost *ost, const struct nc_fid *fid,
			  uint64_t off, size_t len, struct oss_read_hold *h);
void oss_obj_read_release(struct oss_read_hold *h);

/* Writes all of @buf (creating the object); 0 or -errno (-ENOSPC kept). */
int oss_obj_write(struct oss_ost *ost, const struct nc_fid *fid, uint64_t off,
		  const void *buf, size_t len);
/* Sets the object size (creating it when missing and @size > 0). */
int oss_obj_truncate(struct oss_ost *ost, const struct nc_fid *fid,
		     uint64_t size);
/* Deallocates [off, off + len) keeping the size (a hole reads as zeros). */
int oss_obj_punch(struct oss_ost *ost, const struct nc_fid *fid, uint64_t off,
		  uint64_t len);
/*
 * Checks the checksums of every block touching [off, off + len) (@len 0:
 * to the object's end) and lists the offsets of the blocks that fail in
 * @bad (at most @max; *@more set when there were more).  A missing object
 * and a range past the end verify clean.  0, or -errno when the object
 * cannot be read (a checksum failure is a result, not an error).
 */
int oss_obj_verify(struct oss_ost *ost, const struct nc_fid *fid, uint64_t off,
		   uint64_t len, uint64_t *bad, uint32_t max, uint32_t *nbad,
		   bool *more);
/* Removes the object and its checksums; 0 also when it did not exist. */
int oss_obj_destroy(struct oss_ost *ost, const struct nc_fid *fid);
/* fsync the object and its checksums (0 when it does not exist). */
int oss_obj_sync(struct oss_ost *ost, const struct nc_fid *fid);
/* Size and 512-byte blocks; -ENOENT when absent. */
int oss_obj_stat(struct oss_ost *ost, const struct nc_fid *fid,
		 uint64_t *size, uint64_t *blocks);
int oss_ost_statfs(struct oss_ost *ost, struct nc_statfs *st);

#endif
