/* SPDX-License-Identifier: MIT */
/*
 * The namespace: inodes, directory entries, layouts, xattrs, the OST table
 * and the destroy queue, all kept in LMDB through mds/db.h.  Every operation
 * that changes state is one LMDB write transaction, committed durably before
 * the function returns, so rename, link and unlink are atomic across a crash.
 *
 * Permission checks use the caller's struct nc_cred against the mode bits
 * (uid 0 bypasses read/write/search checks, as on Linux).  All functions
 * return 0 or -errno / -NC_E_* with POSIX meanings (ENOENT, EEXIST, ENOTDIR,
 * EISDIR, ENOTEMPTY, EACCES, EPERM, EXDEV never, EINVAL for moving a
 * directory below itself, ENAMETOOLONG, EMLINK).  Thread-safe.
 */
#ifndef MDS_NS_H
#define MDS_NS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/types.h"
#include "common/wire.h"

struct mds_ns;

/* The OSTs a new file may be striped over (the MDS passes those up and
 * active, in index order), and those registered but down: an
 * erasure-coded file may put shards there, marked stale from the start,
 * so that it keeps its redundancy once they are rebuilt. */
struct mds_ost_set {
	uint32_t os_count;
	uint32_t os_index[NC_MAX_OSTS];
	uint32_t os_ndown;
	uint32_t os_down[NC_MAX_OSTS];
	/* By OST index: up, but out of space, so listed in os_down (an
	 * erasure-coded layout may still take it as a stale shard). */
	bool os_full[NC_MAX_OSTS];
};

/* One pending object destruction. */
struct mds_destroy_rec {
	uint64_t dr_id;
	struct nc_fid dr_fid;
	struct nc_layout dr_layout;
	int64_t dr_not_before;  /* seconds (time(2)); 0: now */
};

/*
 * Formats an MDT in @dir (created if missing): the config records (fsname,
 * @uuid, FID counter, default layout: 1 MiB stripes over up to 4 OSTs) and
 * the root directory (mode 0755, uid/gid 0).  -EEXIST when @dir already
 * holds an MDT.  @uuid may be NULL (one is generated).
 */
int mds_ns_format(const char *dir, const char *fsname, const uint8_t *uuid,
		  uint64_t map_size);
/* -NC_E_NOTFMT when @dir holds no MDT. */
int mds_ns_open(const char *dir, uint64_t map_size, struct mds_ns **out);
void mds_ns_close(struct mds_ns *ns);
const char *mds_ns_fsname(const struct mds_ns *ns);
void mds_ns_uuid(const struct mds_ns *ns, uint8_t uuid[16]);

int mds_ns_lookup(struct mds_ns *ns, const struct nc_cred *cred,
		  const struct nc_fid *parent, const char *name,
		  struct nc_attr *attr);
int mds_ns_getattr(struct mds_ns *ns, const struct nc_fid *fid,
		   struct nc_attr *attr);
/* chmod (owner or root), chown (root; owner may change the group to one of
 * its groups), utimes (owner or root; *_NOW also with write permission),
 * size (write permission; sets the size exactly; the caller truncates the
 * objects).  Clears setuid/setgid on chown by non-root. */
int mds_ns_setattr(struct mds_ns *ns, const struct nc_setattr_req *sa,
		   struct nc_attr *attr);
/*
 * Creates a regular file, directory, symlink (@target), FIFO, socket or
 * device in @parent.  A regular file gets a layout from the parent's default
 * merged with the filesystem default, over OSTs from @osts (-NC_E_NOOST when
 * empty); @layout receives it (stripe_count 0 for other types).  A directory
 * inherits the parent's default layout.  With NC_CREATE_EXCL an existing
 * name fails with -EEXIST; without it, an existing regular file is returned
 * (its attr and layout) as open(O_CREAT) expects.
 */
int mds_ns_create(struct mds_ns *ns, const struct nc_create_req *cq,
		  const struct mds_ost_set *osts, struct nc_attr *attr,
		  struct nc_layout *layout);
int mds_ns_link(struct mds_ns *ns, const struct nc_cred *cred,
		const struct nc_fid *fid, const struct nc_fid *newparent,
		const char *newname, struct nc_attr *attr);
/* Unlink (dir = false) or rmdir (dir = true).  Removing the last link of a
 * regular file queues its objects in the destroy queue, same transaction. */
int mds_ns_unlink(struct mds_ns *ns, const struct nc_cred *cred,
		  const struct nc_fid *parent, const char *name, bool dir);
/* rename(2) and renameat2 NOREPLACE / EXCHANGE. */
int mds_ns_rename(struct mds_ns *ns, const struct nc_rename_req *rn);
/* Entries with cookie > @cookie, in cookie (creation) order, at most @max;
 * "." and ".." are not stored (the client adds them). */
int mds_ns_readdir(struct mds_ns *ns, const struct nc_cred *cred,
		   const struct nc_fid *dir, uint64_t cookie, uint32_t max,
		   struct nc_dirent *ents, uint32_t *count, bool *eof);
/* Returns the target length (not NUL-terminated beyond @cap). */
int mds_ns_readlink(struct mds_ns *ns, const struct nc_fid *fid, char *buf,
		    size_t cap);
/* Checks access for NC_OPEN_* @flags; fills attr and layout (regular files;
 * -EISDIR for write opens of directories).  With @inl (else NULL), *@inl
 * receives an inline file's bytes, read with its attributes, in a buffer
 * of attr->a_size bytes the caller frees (NULL for other files). */
int mds_ns_open_check(struct mds_ns *ns, const struct nc_cred *cred,
		      const struct nc_fid *fid, uint32_t flags,
		      struct nc_attr *attr, struct nc_layout *layout, uint8_t **inl);
int mds_ns_getlayout(struct mds_ns *ns, const struct nc_fid *fid,
		     struct nc_layout *layout);
/*
 * Directory: stores @req as its default (a template: stripe size, count,
 * first OST, k, m; zero fields inherit).  Regular file: only while its size
 * is 0 (-EBUSY otherwise); allocates new objects from @osts and queues the
 * old ones for destruction.  Owner or root only.  @out gets the result.
 */
int mds_ns_setlayout(struct mds_ns *ns, const struct nc_cred *cred,
		     const struct nc_fid *fid, const struct nc_layout *req,
		     const struct mds_ost_set *osts, struct nc_layout *out);
/* Sets and clears NC_SHARD_* flags of one shard of a regular file's layout
 * (write permission needed); @out gets the new layout. */
int mds_ns_shard_state(struct mds_ns *ns, const struct nc_cred *cred,
		       const struct nc_fid *fid, uint32_t shard, uint32_t set,
		       uint32_t clear, struct nc_layout *out);
/* The filesystem default layout template. */
int mds_ns_default_layout(struct mds_ns *ns, struct nc_layout *tmpl);
/* Size only grows; NC_SIZE_MTIME also sets mtime and ctime to now. */
int mds_ns_size_update(struct mds_ns *ns, const struct nc_fid *fid,
		       uint64_t size, uint32_t flags, struct nc_attr *attr);

/* user.* names (permission per mode bits, regular files and directories
 * only) and trusted.* (root only); other namespaces -EOPNOTSUPP.
 * get: copies at most @cap bytes and returns the full value length
 * (-ERANGE is the caller's business); -ENODATA when absent. */
int mds_ns_xattr_get(struct mds_ns *ns, const struct nc_cred *cred,
		     const struct nc_fid *fid, const char *name, void *buf,
		     size_t cap);
int mds_ns_xattr_set(struct mds_ns *ns, const struct nc_cred *cred,
		     const struct nc_fid *fid, const char *name,
		     const void *val, size_t len, uint32_t flags);
/* NUL-separated names; returns total length (copies at most @cap). */
int mds_ns_xattr_list(struct mds_ns *ns, const struct nc_cred *cred,
		      const struct nc_fid *fid, char *buf, size_t cap);
int mds_ns_xattr_del(struct mds_ns *ns, const struct nc_cred *cred,
		     const struct nc_fid *fid, const char *name);

/* Group commit of the operations this thread runs in between (see
 * mds/db.h): nothing they change is durable before mds_ns_batch_end(). */
/* Small files (ns_pack.c). */
int mds_ns_fid_grant(struct mds_ns *ns, uint32_t want, uint64_t *seq, uint64_t *first,
		     uint32_t *count);
/* A new pack laid out as @dir's files would be, over @osts less the OSTs
 * @avoid[0..navoid) where that still gives a layout (a client found them
 * not answering), over all of @osts otherwise. */
int mds_ns_pack_alloc(struct mds_ns *ns, const struct nc_cred *cred, const struct nc_fid *dir,
		      const struct mds_ost_set *osts, const uint32_t *avoid, uint32_t navoid,
		      struct nc_layout *out);
/* A new pack with @want's stripe size, count and coding (those of the
 * files a client moves or rewrites into it, which keep their coding). */
int mds_ns_pack_alloc_like(struct mds_ns *ns, const struct nc_layout *want,
			   const struct mds_ost_set *osts, const uint32_t *avoid,
			   uint32_t navoid, struct nc_layout *out);
int mds_ns_pack_seal(struct mds_ns *ns, uint64_t id);
int mds_ns_pack_getlayout(struct mds_ns *ns, uint64_t id, struct nc_layout *out);
int mds_ns_pack_shard_state(struct mds_ns *ns, uint64_t id, uint32_t shard, uint32_t set,
			    uint32_t clear, struct nc_layout *out);
/* Where a scan for stale shards (mds_ns_stale_scan()) stands; zeroed to
 * start one. */
struct mds_stale_pos {
	struct nc_fid sp_after;         /* the last inode looked at */
	bool sp_started;
	bool sp_inodes_done;            /* the inode table was scanned */
	uint64_t sp_pack_after;         /* then: the last pack looked at */
	bool sp_done;                   /* both tables were scanned */
};

/* Whether @l (erasure-coded) has a shard marked stale on an OST whose flag
 * in @osts (NC_MAX_OSTS of them) is set. */
bool mds_layout_is_stale_on(const struct nc_layout *l, const bool *osts);
/*
 * The next erasure-coded files, in FID order after @pos, with a shard
 * marked stale on one of @osts, then the packs so marked (as FIDs
 * (NC_PACK_FID_SEQ, id)): up to @max FIDs in @out, *@count of them.  One
 * call looks at a bounded slice of one table in one read transaction, so
 * *@count may be 0 before the end: scan until pos->sp_done.  Packed files
 * are left out: their marks are their pack's.
 * 0 or -errno.
 */
int mds_ns_stale_scan(struct mds_ns *ns, const bool *osts, struct mds_stale_pos *pos,
		      struct nc_fid *out, uint32_t max, uint32_t *count);
int mds_ns_pack_list(struct mds_ns *ns, uint64_t after, struct nc_pack_rec *out, uint32_t max,
		     uint32_t *count);
/* The packs after *@after with a shard marked stale on one of @osts, as
 * FIDs: up to @max in @out, at most @slice packs looked at in one read
 * transaction; *@after moves on, *@done says the table ended. */
int mds_ns_pack_stale_scan(struct mds_ns *ns, const bool *osts, uint64_t *after, bool *done,
			   uint32_t slice, struct nc_fid *out, uint32_t max, uint32_t *count);
int mds_ns_pack_files(struct mds_ns *ns, uint64_t id, const struct nc_fid *after,
		      struct nc_fid *out, uint32_t max, uint32_t *count);
int mds_ns_pack_reap(struct mds_ns *ns);
int mds_ns_pack_switch(struct mds_ns *ns, const struct nc_pack_switch *sw,
		       const struct mds_ost_set *osts, struct nc_attr *attr, struct nc_layout *out);

/* Migration (ns_migrate.c): MIGRATE as common/wire.h describes it; @out
 * gets the pending layout (ALLOC, ABORT) or the file's new one (swap).
 * -EBUSY when the file's data version is not the one in @mg, -ESTALE when
 * the pending migration is gone. */
int mds_ns_migrate(struct mds_ns *ns, const struct nc_migrate_req *mg,
		   const struct mds_ost_set *osts, struct nc_attr *attr, struct nc_layout *out);
/* How long a file must have seen no writer (write open, create, size
 * update) for a migration's swap: default 1000 ms (tests shorten it). */
void mds_ns_set_migrate_quiet(struct mds_ns *ns, int ms);
/* Removes the OSTs @idx[0..n) from @set, both lists (a migration's
 * --ost-exclude). */
void mds_ost_set_exclude(struct mds_ost_set *set, const uint32_t *idx, uint32_t n);
/* Counts the up OSTs of @idx as down (a client found them not answering),
 * unless that leaves no OST up (mds_ns_pack_alloc()). */
void mds_ost_set_avoid(struct mds_ost_set *set, const uint32_t *idx, uint32_t n);

int mds_ns_batch_begin(struct mds_ns *ns);
int mds_ns_batch_end(struct mds_ns *ns);

/* MDT space (the LMDB map and the disk under it) and inode counts. */
int mds_ns_statfs(struct mds_ns *ns, struct nc_statfs *st);

/*
 * The MDT's reserve: the part of the LMDB map kept for changes that free
 * space (unlink, rmdir, truncation, clearing the changelog), so that a full
 * MDT can always be emptied.  A sixteenth of the map, at least 4 MiB and at
 * most 1 GiB, and never more than a quarter of the map.
 */
uint64_t mds_ns_reserve(uint64_t map_size);
/* Whether the map's free bytes are down to the reserve (@free_bytes and
 * @map_size, when not NULL, get the figures); false when they cannot be
 * read.  Not to be called inside a batch. */
bool mds_ns_is_full(struct mds_ns *ns, uint64_t *free_bytes, uint64_t *map_size);

/* The changelog (mds/ns_changelog.c).  Off until enabled; records persist
 * until cleared. */
void mds_ns_changelog_enable(struct mds_ns *ns, bool on);
/* Up to @max records numbered above @after into @out; *@last is the
 * highest number given so far (0: none ever). */
int mds_ns_changelog_read(struct mds_ns *ns, uint64_t after, struct nc_changelog_rec *out,
			  uint32_t max, uint32_t *count, uint64_t *last);
/* Removes the records numbered up to @upto; *@cleared says how many. */
int mds_ns_changelog_clear(struct mds_ns *ns, uint64_t upto, uint64_t *cleared);
/* Pending migrations whose ALLOC came before @before (Unix seconds): a
 * client that died before its swap.  Their new objects go to the destroy
 * queue and the records are removed; *@expired says how many (at most a
 * batch per call). */
int mds_ns_migrate_expire(struct mds_ns *ns, int64_t before, uint64_t *expired);

/*
 * Reply reconstruction (mds/ns_reply.c): the reply of the last change each
 * client sent in each of its reply slots, kept with the change.
 */
struct mds_reply_rec {
	uint64_t rr_seq;        /* the request's id (mh_reqid) */
	uint16_t rr_opcode;
	int rr_status;          /* local error of the reply */
	uint32_t rr_len;        /* body bytes (none with an error) */
	uint8_t *rr_body;       /* find: malloc'd, the caller frees */
};
/* The recorded reply when the slot's last request is @seq (0, *@out
 * filled); -ENOENT when the slot has none or an older one (execute the
 * request); -ESTALE when it already has a newer one (a stray copy). */
int mds_ns_reply_find(struct mds_ns *ns, const uint8_t client[16], uint32_t slot,
		      uint64_t seq, struct mds_reply_rec *out);
/* Records @rec as the slot's last reply, in the caller's batch if any. */
int mds_ns_reply_save(struct mds_ns *ns, const uint8_t client[16], uint32_t slot,
		      const struct mds_reply_rec *rec);
/* Removes the records written before @before (Unix seconds). */
int mds_ns_reply_expire(struct mds_ns *ns, int64_t before, uint64_t *removed);

/* Figures for the metrics port (mds/metrics.c). */
struct mds_ns_stats {
	uint64_t ns_map_size;           /* LMDB map, bytes */
	uint64_t ns_used;               /* bytes of the map in use */
	uint64_t ns_page_size;
	uint64_t ns_free_pages;         /* pages on LMDB's free list */
	uint64_t ns_inodes;             /* files, directories, links */
	uint64_t ns_destroy_queue;      /* removed files whose objects remain */
};
int mds_ns_stats(struct mds_ns *ns, struct mds_ns_stats *st);

/* The persistent OST table.  Register: a new index is added; a known index
 * must carry the same uuid (-EEXIST otherwise) and gets its address
 * updated.  o_state is not stored (the server tracks liveness). */
int mds_ns_ost_register(struct mds_ns *ns, const struct nc_ost_info *ost);
/* As register, but a known index takes the new uuid (an OST replaced by an
 * empty one): every erasure-coded shard on it is marked stale in the same
 * transaction (*marked files), for `nacre rebuild --ost` to regenerate. */
int mds_ns_ost_replace(struct mds_ns *ns, const struct nc_ost_info *ost, uint64_t *marked);
/* o_state of each entry is NC_OST_DOWN, with NC_OST_INACTIVE when an
 * administrator deactivated the OST. */
int mds_ns_ost_list(struct mds_ns *ns, struct nc_ost_info *osts, uint32_t max,
		    uint32_t *count);
/*
 * Activates or deactivates OST @idx (uid 0 only: -EPERM; -ENODEV when no
 * OST has that index).  The state is kept in the OST's record and survives
 * its re-registration and MDS restarts.
 */
int mds_ns_ost_set_active(struct mds_ns *ns, const struct nc_cred *cred, uint32_t idx,
			  bool active);
/*
 * Whether new objects (file layouts, packs) may be placed on the OST @o
 * describes (o_state as mds_ns_ost_list() gives it): the one test the MDS
 * applies when it builds the struct mds_ost_set of a new layout.
 */
bool mds_ost_is_eligible(const struct nc_ost_info *o);

/*
 * OST pools (ns_pool.c): named sets of OST indexes.  Changes need uid 0
 * (-EPERM).  Names as nc_pool_name_is_valid() (-EINVAL otherwise).
 * create: -EEXIST when it exists, -ENOSPC beyond NC_POOLS_MAX pools;
 * destroy: -ENOENT, -ENOTEMPTY while it has members;
 * add: every index must be a registered OST (-ENODEV) not yet in the pool
 * (-EEXIST); remove: every index must be in the pool (-ENOENT, @bad gets
 * the index); nothing changes when one fails.
 * list: the pool @name, or every pool when @name is "" (in name order).
 */
int mds_ns_pool_create(struct mds_ns *ns, const struct nc_cred *cred, const char *name);
int mds_ns_pool_destroy(struct mds_ns *ns, const struct nc_cred *cred, const char *name);
int mds_ns_pool_add(struct mds_ns *ns, const struct nc_cred *cred, const char *name,
		    const uint32_t *osts, uint32_t n, uint32_t *bad);
int mds_ns_pool_remove(struct mds_ns *ns, const struct nc_cred *cred, const char *name,
		       const uint32_t *osts, uint32_t n, uint32_t *bad);
int mds_ns_pool_list(struct mds_ns *ns, const char *name, struct nc_pool_list_rep *rep);

/* Destroy queue: the first record with id > @after (-ENOENT when none),
 * and removal of a record once every object is gone. */
int mds_ns_destroy_next(struct mds_ns *ns, uint64_t after,
			struct mds_destroy_rec *rec);
int mds_ns_destroy_done(struct mds_ns *ns, uint64_t id);

#endif
