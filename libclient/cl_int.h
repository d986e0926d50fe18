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
};

struct nacre_fs {
	char fs_mds_addr[NC_ADDR_MAX + 1];
	char fs_name[NC_FSNAME_MAX + 1];
	struct nc_cconn *fs_mds;
	struct nc_cred fs_cred;
	int fs_timeout_ms;
	int fs_retry_ms;
	pthread_mutex_t fs_lock;        /* OST table, open list, hidden list */
	struct cl_ost fs_osts[NC_MAX_OSTS];
	struct nacre_file *fs_open;
	struct cl_hidden *fs_hidden;
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
	struct nacre_file *f_next, *f_prev;
};

/* fs.c */
void cl_cred_from(struct nacre_fs *fs, const struct nacre_cred *in, struct nc_cred *out);
void cl_stat_from_attr(const struct nc_attr *a, struct nacre_stat *st);
void cl_layout_to_public(const struct nc_layout *l, struct nacre_layout *out);
void cl_layout_from_public(const struct nacre_layout *in, struct nc_layout *l);
/* The connection to the OSS of OST @idx (refreshing the table once when
 * the OST is unknown); -ENODEV when the MDS does not know it. */
int cl_ost_conn(struct nacre_fs *fs, uint32_t idx, struct nc_cconn **out);
int cl_ost_refresh(struct nacre_fs *fs);
/* Maps library-internal error codes for callers (identity today). */
int cl_err(int rc);

/* md.c */
int cl_md_getattr(struct nacre_fs *fs, const struct nc_fid *fid, struct nc_attr *attr);
int cl_md_open(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
	       uint32_t flags, struct nc_attr *attr, struct nc_layout *layout);
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
int cl_md_lookup(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		 const char *name, struct nc_attr *attr);
/* Truncates a file to @size: objects first, then the MDS (see md.c). */
int cl_truncate(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		uint64_t size, struct nc_attr *attr);

/* io.c */
ssize_t cl_io_read(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		   void *buf, size_t len, uint64_t off);
int cl_io_write(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		const void *buf, size_t len, uint64_t off);
/* Truncates (or, with @sync, fsyncs) every object of the layout, in parallel. */
int cl_io_objects(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		  uint16_t opcode, uint64_t file_size);

/* file.c */
bool cl_file_is_open(struct nacre_fs *fs, const struct nc_fid *fid);
/* Tells every handle of @fid open here that the file is now @size bytes. */
void cl_file_size_set(struct nacre_fs *fs, const struct nc_fid *fid, uint64_t size);
/* Renames @name away when it names a file open here with one link, so the
 * data lives on until the last close.  1 when it did, 0 when not needed. */
int cl_hide_if_open(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		    const char *name);

#endif
