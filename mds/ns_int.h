/* SPDX-License-Identifier: MIT */
/*
 * Internal declarations shared by the mds/ns_*.c files that implement
 * mds/ns.h: the stored record formats, struct mds_ns, the decoded inode
 * and directory entry, and the helpers one file offers the others.
 *
 * Records (every value starts with a u32 record version, NS_REC_VERSION):
 *   CONFIG     "fsname" -> str; "uuid" -> 16 bytes; "next_oid" -> u64;
 *              "next_pack" -> u64;
 *              "default_layout" -> layout template; "destroy_next" -> u64;
 *              "next_migrate" -> u64; "migrate.N" (N in hex) -> fid,
 *              layout: a pending migration (ns_migrate.c)
 *   INODES     fid (16 BE) -> attr, then by type: directory: parent fid,
 *              next cookie, template flag [+ template]; regular file:
 *              layout [+ its bytes, when the layout is inline]; symlink:
 *              target
 *   DIRENTS    parent fid + name -> child fid, S_IFMT bits, cookie
 *   DIRCOOKIES parent fid + cookie (BE) -> child fid, S_IFMT bits, name
 *   XATTRS     fid + name -> value bytes
 *   OSTS       index (BE u32) -> uuid, address [, flags: NC_OST_INACTIVE;
 *              absent when clear and in records from before it]
 *   DESTROY    id (BE u64) -> fid, layout
 *   PACKS      id (BE u64) -> pack record (see ns_pack.c)
 *   PACKFILES  pack id (BE u64) + fid -> nothing
 *   POOLS      pool name -> count, OST indexes (see ns_pool.c)
 * A template with NC_LAYOUT_POOL ends with the pool name (after pack_max).
 * A packed regular file's layout holds only NC_LAYOUT_PACKED and its extent;
 * an inline one only NC_LAYOUT_INLINE and l_gen.  A template with
 * NC_LAYOUT_INLINE ends with l_inline_max (after the pool name).
 *
 * Each public function runs in one transaction of its own; writers are
 * serialised by LMDB, so the functions are safe to call from many threads.
 */
#ifndef MDS_NS_INT_H
#define MDS_NS_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/types.h"
#include "common/wire.h"
#include "mds/db.h"
#include "mds/ns.h"

#define NS_REC_VERSION 1u
#define NS_REC_MAX 8192         /* largest record: an inode with a symlink */
#define NS_FID_KEY 16
#define NS_DIRENT_KEY_MAX (NS_FID_KEY + NC_NAME_MAX)
#define NS_XATTR_KEY_MAX (NS_FID_KEY + NC_XATTR_NAME_MAX)
#define NS_LINK_MAX 65000u      /* as ext4 */
#define NS_MAX_DEPTH (1u << 20) /* bounds the parent walk on a corrupt tree */
#define NS_MAX_EC_K 16u
#define NS_MAX_EC_M 4u

#define NS_WRITE_SLOTS 1024
#define NS_MIGRATE_QUIET_MS 1000

#define NS_CONF_FSNAME "fsname"
#define NS_CONF_UUID "uuid"
#define NS_CONF_NEXT_OID "next_oid"
#define NS_CONF_LAYOUT "default_layout"
#define NS_CONF_DESTROY "destroy_next"
#define NS_CONF_NEXT_PACK "next_pack"

struct mds_ns {
	struct mds_db *ns_db;
	char *ns_dir;
	char ns_fsname[NC_FSNAME_MAX + 1];
	uint8_t ns_uuid[16];
	atomic_uint ns_rr;      /* round-robin start for new layouts */
	/* When a file hashing to each slot was last opened for writing,
	 * created or sized (CLOCK_MONOTONIC ms): a migration's swap waits
	 * for its file to be quiet (ns_migrate.c).  Files sharing a slot
	 * only make a swap wait longer. */
	_Atomic int64_t ns_write_ms[NS_WRITE_SLOTS];
	int ns_migrate_quiet_ms;
	bool ns_changelog;      /* record namespace changes */
};

/* One inode as decoded from its record. */
struct ns_inode {
	struct nc_attr in_attr;
	struct nc_fid in_parent;        /* directories */
	uint64_t in_next_cookie;        /* directories */
	uint32_t in_has_tmpl;           /* directories: in_layout is set */
	struct nc_layout in_layout;     /* file layout or directory template */
	union {
		char in_target[NC_SYMLINK_MAX + 1];     /* symbolic links */
		uint8_t in_inline[NC_INLINE_MAX];       /* inline files: a_size bytes */
	};
};

/* One pack as its record holds it (mds/ns_pack.c). */
struct ns_pack {
	uint64_t p_id;
	struct nc_layout p_layout;
	uint64_t p_size;
	uint64_t p_live;
	uint32_t p_files;
	uint32_t p_sealed;
	int64_t p_mtime;
	int64_t p_emptied;      /* when its last file went (0: in use) */
};

struct ns_dirent {
	struct nc_fid d_fid;
	uint32_t d_mode;        /* S_IFMT bits */
	uint64_t d_cookie;
};

/* mds/ns_record.c: keys, record codecs, permission checks, and inode, entry
 * and config records inside a transaction. */
void ns_put_be64(uint8_t *p, uint64_t v);
uint64_t ns_get_be64(const uint8_t *p);
void ns_put_be32(uint8_t *p, uint32_t v);
uint32_t ns_get_be32(const uint8_t *p);
void ns_fid_key(const struct nc_fid *f, uint8_t k[NS_FID_KEY]);
size_t ns_name_key(const struct nc_fid *f, const char *name, uint8_t *k);
void ns_cookie_key(const struct nc_fid *f, uint64_t cookie,
		   uint8_t k[NS_FID_KEY + 8]);
void ns_xdr_version(struct nc_xdr *x);
void ns_xdr_fid(struct nc_xdr *x, struct nc_fid *f);
void ns_xdr_layout(struct nc_xdr *x, struct nc_layout *l);
/* The record codecs of inodes and packs (also driven by tests/fuzz). */
void ns_xdr_inode(struct nc_xdr *x, struct ns_inode *in);
void ns_xdr_pack(struct nc_xdr *x, struct ns_pack *p);
void ns_log_corrupt(const char *what, const struct nc_fid *fid);
void ns_now(struct nc_timespec *t);
int ns_end(struct mds_txn *txn, int rc);
int ns_name_check(const char *name);
bool ns_is_dir(const struct ns_inode *in);
bool ns_is_reg(const struct ns_inode *in);
bool ns_is_owner(const struct nc_attr *a, const struct nc_cred *c);
void ns_set_blocks(struct nc_attr *a);
int ns_inode_get(struct mds_txn *txn, const struct nc_fid *fid,
		 struct ns_inode *in);
int ns_inode_get_child(struct mds_txn *txn, const struct nc_fid *fid,
		       struct ns_inode *in);
int ns_inode_put(struct mds_txn *txn, struct ns_inode *in, bool noover);
int ns_dir_get(struct mds_txn *txn, const struct nc_fid *fid,
	       struct ns_inode *in);
int ns_dirent_get(struct mds_txn *txn, const struct nc_fid *parent,
		  const char *name, struct ns_dirent *d);
int ns_dirent_put(struct mds_txn *txn, const struct nc_fid *parent,
		  const char *name, const struct ns_dirent *d,
		  bool noover);
int ns_dirent_add(struct mds_txn *txn, struct ns_inode *dir,
		  const char *name, const struct nc_fid *fid,
		  uint32_t mode);
int ns_dirent_del(struct mds_txn *txn, const struct nc_fid *parent,
		  const char *name, const struct ns_dirent *d);
int ns_prefix_first(struct mds_txn *txn, enum mds_table t,
		    const uint8_t *prefix, size_t plen, uint8_t *key,
		    size_t cap, size_t *klen);
/* The keys of @t that are @klen bytes long, in order: a malloc'd array of
 * *@n keys back to back in *@keys (free() it; NULL when none). */
int ns_table_keys(struct mds_txn *txn, enum mds_table t, size_t klen, uint8_t **keys,
		  size_t *n);
int ns_dir_is_empty(struct mds_txn *txn, const struct nc_fid *dir, bool *empty);
int ns_conf_get(struct mds_txn *txn, const char *name, struct nc_xdr *x);
int ns_conf_done(struct nc_xdr *x, const char *name);
int ns_conf_put(struct mds_txn *txn, const char *name, struct nc_xdr *x);
int ns_conf_get_u64(struct mds_txn *txn, const char *name, uint64_t *v);
int ns_conf_put_u64(struct mds_txn *txn, const char *name, uint64_t v);
int ns_conf_get_layout(struct mds_txn *txn, struct nc_layout *l);
int ns_conf_put_layout(struct mds_txn *txn, const struct nc_layout *l);
int ns_fid_alloc(struct mds_txn *txn, struct nc_fid *fid);

/* mds/ns_migrate.c: a writer of @fid showed up (write open, create, size
 * update). */
void ns_write_note(struct mds_ns *ns, const struct nc_fid *fid);
/* mds/ns_changelog.c: appends a record of a change to @txn when the
 * changelog is on; @parent, @name, @sparent and @sname may be NULL. */
int ns_changelog_add(struct mds_ns *ns, struct mds_txn *txn, uint32_t type,
		     const struct nc_cred *cred, const struct nc_fid *fid,
		     const struct nc_fid *parent, const char *name,
		     const struct nc_fid *sparent, const char *sname);

/* mds/ns_layout.c: layout merging and OST choice. */
int ns_layout_alloc(struct mds_ns *ns, struct mds_txn *txn,
		    const struct nc_layout *dflt, const struct nc_layout *tmpl,
		    const struct mds_ost_set *osts, struct nc_layout *out);
void ns_layout_out(const struct ns_inode *in, struct nc_layout *l);
/* Marks stale every shard of an erasure-coded @l on OST @idx (its disk was
 * replaced); true when something changed (l_gen is bumped then). */
bool ns_layout_stale_ost(struct nc_layout *l, uint32_t idx);
/* Sets and clears NC_SHARD_* bits of shard @shard (in range); true when
 * something changed (l_gen is bumped then). */
bool ns_layout_shard_flags(struct nc_layout *l, uint32_t shard, uint32_t set, uint32_t clear);

/* mds/ns_pool.c: 0 when the pool @name exists (-ENOENT when not); @out
 * gets the OSTs of @in that are in the pool @name (all of @in when the
 * pool no longer exists). */
int ns_pool_exists(struct mds_txn *txn, const char *name);
int ns_pool_filter(struct mds_txn *txn, const char *name, const struct mds_ost_set *in,
		   struct mds_ost_set *out);

/* mds/ns_xattr.c: xattrs. */
int ns_xattrs_free(struct mds_txn *txn, const struct nc_fid *fid);

/* mds/ns_pack.c: packs. */
bool ns_fid_is_pack(const struct nc_fid *fid);
/* A packed file starts (attach) or stops (detach) using its extent. */
int ns_pack_attach(struct mds_txn *txn, const struct nc_fid *fid, const struct nc_layout *ext);
int ns_pack_detach(struct mds_txn *txn, const struct nc_fid *fid, const struct nc_layout *ext);
/* The layout clients see: ns_layout_out(), with a pack's shards filled in. */
int ns_layout_join(struct mds_txn *txn, const struct ns_inode *in, struct nc_layout *l);
/* The same in a read transaction of its own (only packed files need one). */
int ns_layout_join_ro(struct mds_ns *ns, const struct ns_inode *in, struct nc_layout *l);
/* 0 when @fid is one FID_GRANT handed out. */
int ns_fid_check_granted(struct mds_txn *txn, const struct nc_fid *fid);
int ns_packs_stale_ost(struct mds_txn *txn, uint32_t idx, uint64_t *marked);

/* mds/ns_admin.c: the destroy queue.  _after: not before @delay_s seconds
 * (objects readers that opened a file earlier may still read). */
int ns_destroy_queue(struct mds_txn *txn, const struct nc_fid *fid,
		     const struct nc_layout *layout);
int ns_destroy_queue_after(struct mds_txn *txn, const struct nc_fid *fid,
			   const struct nc_layout *layout, int64_t delay_s);

#endif
