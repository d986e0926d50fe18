/* SPDX-License-Identifier: MIT */
/*
 * The object store of one OST: a local directory holding one shard object
 * per (file, OST), named by the file's FID.
 *
 *   DIR/ost.conf            "fsname=..\nindex=..\nuuid=..\n" written at format
 *   DIR/O/XX/SEQ:OID        objects, XX = low byte of the oid in hex
 *
 * Objects are created on first write.  Reading past an object's end returns
 * fewer bytes (the client fills the hole of a sparse file with zeros);
 * reading an object that does not exist returns 0 bytes.  Thread-safe: each
 * call opens the object (a descriptor cache comes with the fast data path).
 */
#ifndef OSS_OBJSTORE_H
#define OSS_OBJSTORE_H

#include <stdint.h>
#include <sys/types.h>

#include "common/types.h"

struct oss_ost;

/* Formats @dir as OST @index of @fsname (creating @dir when missing).
 * -EEXIST when it is already formatted. */
int oss_ost_format(const char *dir, const char *fsname, uint32_t index);
/* Opens a formatted OST.  -NC_E_NOTFMT when @dir holds none,
 * -NC_E_FSNAME when it belongs to another filesystem. */
int oss_ost_open(const char *dir, const char *fsname, struct oss_ost **out);
void oss_ost_close(struct oss_ost *ost);
uint32_t oss_ost_index(const struct oss_ost *ost);
void oss_ost_uuid(const struct oss_ost *ost, uint8_t uuid[16]);
const char *oss_ost_dir(const struct oss_ost *ost);

/* Returns bytes read (0..len). */
ssize_t oss_obj_read(struct oss_ost *ost, const struct nc_fid *fid,
		     uint64_t off, void *buf, size_t len);
/* Writes all of @buf (creating the object); 0 or -errno (-ENOSPC kept). */
int oss_obj_write(struct oss_ost *ost, const struct nc_fid *fid, uint64_t off,
		  const void *buf, size_t len);
/* Sets the object size (creating it when missing and @size > 0). */
int oss_obj_truncate(struct oss_ost *ost, const struct nc_fid *fid,
		     uint64_t size);
/* Deallocates [off, off + len) keeping the size (a hole reads as zeros). */
int oss_obj_punch(struct oss_ost *ost, const struct nc_fid *fid, uint64_t off,
		  uint64_t len);
/* Removes the object; 0 also when it did not exist. */
int oss_obj_destroy(struct oss_ost *ost, const struct nc_fid *fid);
/* fsync the object (0 when it does not exist). */
int oss_obj_sync(struct oss_ost *ost, const struct nc_fid *fid);
/* Size and 512-byte blocks; -ENOENT when absent. */
int oss_obj_stat(struct oss_ost *ost, const struct nc_fid *fid,
		 uint64_t *size, uint64_t *blocks);
int oss_ost_statfs(struct oss_ost *ost, struct nc_statfs *st);

#endif
