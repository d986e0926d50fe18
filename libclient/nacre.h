/* SPDX-License-Identifier: MIT */
/**
 * @file nacre.h
 * @brief libnacre: the nacre client library.
 *
 * A client connects to a filesystem by its MDS address and fsname, sends
 * metadata requests to the MDS and moves file data straight to and from the
 * OSTs, the chunks of one request in parallel across the file's OSTs.
 *
 * Conventions
 *  - Every function that can fail returns 0 (or a byte count) on success and
 *    a negative error: -errno, or a nacre code described by
 *    nacre_strerror().  errno is not used.
 *  - Functions taking a `const struct nacre_cred *` act as that user; NULL
 *    means the identity given at nacre_connect() (by default the calling
 *    process's uid, gid and groups).  The MDS checks permissions.
 *  - Path functions take absolute paths inside the filesystem ("/a/b"; a
 *    missing leading slash is accepted) and follow symbolic links except in
 *    the final component of the l* functions.  FID functions ("_at", "_fid")
 *    name inodes directly, as a FUSE server needs.
 *  - Thread-safe: one struct nacre_fs may be used from many threads; a
 *    struct nacre_file may be used from many threads for pread/pwrite.
 */
#ifndef NACRE_H
#define NACRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NACRE_NAME_MAX 255
#define NACRE_MAX_STRIPES 64
#define NACRE_MAX_GROUPS 32
#define NACRE_ADDR_MAX 127

/** Errors of the cluster key, as nacre_connect() returns them negated:
 * the server refused our key, and the key file was not found, may be read
 * by group or others, or is malformed. */
#define NACRE_E_AUTH 4110
#define NACRE_E_NOKEY 4111
#define NACRE_E_KEYMODE 4112
#define NACRE_E_KEYFILE 4113
#define NACRE_FSNAME_MAX 31
#define NACRE_POOL_NAME_MAX 15
#define NACRE_MAX_OSTS 256

struct nacre_fs;
struct nacre_file;

/** A file identifier, unique for the life of the filesystem. */
struct nacre_fid {
	uint64_t seq;
	uint64_t oid;
};

struct nacre_cred {
	uid_t uid;
	gid_t gid;
	unsigned int ngroups;
	gid_t groups[NACRE_MAX_GROUPS];
};

struct nacre_stat {
	struct nacre_fid fid;
	mode_t mode;
	nlink_t nlink;
	uid_t uid;
	gid_t gid;
	uint64_t size;
	uint64_t blocks;        /**< 512-byte blocks */
	dev_t rdev;
	struct timespec atime;
	struct timespec mtime;
	struct timespec ctime;
};

#define NACRE_SHARD_STALE 0x1u

/** A file's layout, or a directory's default layout (a template: zero fields
 * inherit the filesystem default; shard_count 0). */
struct nacre_layout {
	uint32_t stripe_size;   /**< bytes per chunk; 0: default */
	uint32_t stripe_count;  /**< objects; 0: default; -1 (UINT32_MAX): all OSTs */
	uint32_t k;             /**< data chunks per row; in a template 0 inherits, and
				     k >= 1 fixes the coding (k = 1, m = 0: plain striping) */
	uint32_t m;             /**< parity chunks per row (0: plain striping) */
	uint32_t first_ost;     /**< first OST (0 is OST 0); NACRE_OST_ANY: the MDS picks */
	uint32_t flags;         /**< NACRE_LAYOUT_* */
	uint32_t pack_max;      /**< template with NACRE_LAYOUT_PACK: the largest file
				     kept packed, bytes; 0: 1 MiB */
	uint64_t pack_id;       /**< file with NACRE_LAYOUT_PACKED: its pack ... */
	uint64_t pack_off;      /**< ... where its bytes start in the pack ... */
	uint64_t pack_len;      /**< ... and how many there are */
	uint32_t shard_count;   /**< entries in shards[] (files; of the pack when packed) */
	struct {
		uint32_t ost;
		uint32_t flags; /**< NACRE_SHARD_* */
	} shards[NACRE_MAX_STRIPES];
	/** Template with NACRE_LAYOUT_POOL: new files use only the active OSTs
	 * of this OST pool (see nacre_pool_create()). */
	char pool[NACRE_POOL_NAME_MAX + 1];
	/** The FID that names the objects of a migrated file (they are new
	 * ones); all zero when the objects are named by the file's own FID
	 * (or, packed, the pack's).  Ignored by nacre_setlayout(). */
	struct nacre_fid obj_fid;
	/** Template with NACRE_LAYOUT_INLINE (and NACRE_LAYOUT_PACK): new files
	 * of at most this many bytes (at most NACRE_INLINE_MAX) keep their
	 * bytes inline, in the MDT.  File with NACRE_LAYOUT_INLINE: unused. */
	uint32_t inline_max;
};
#define NACRE_OST_ANY UINT32_MAX
/** Template: files created below (and in new subdirectories) are packed
 * while they are small.  On a directory, set with nacre_setlayout_fid(). */
#define NACRE_LAYOUT_PACK 0x2u
/** File: its bytes are the extent (pack_id, pack_off, pack_len) of a pack,
 * whose layout is the rest of the structure. */
#define NACRE_LAYOUT_PACKED 0x4u
/** Template: pool names the OST pool of new files. */
#define NACRE_LAYOUT_POOL 0x8u
/** Template: small files created below are kept inline up to inline_max
 * bytes.  File: its bytes are kept in the MDT with its attributes, and it
 * has no objects (shard_count 0); opening it returns them, reading it asks
 * no OST. */
#define NACRE_LAYOUT_INLINE 0x20u
#define NACRE_INLINE_MAX 4096u
#define NACRE_PACK_MAX_DEFAULT (1024u * 1024)
/** The objects of pack N are those of FID (NACRE_PACK_FID_SEQ, N). */
#define NACRE_PACK_FID_SEQ 2

/** One pack (nacre_pack_list()). */
struct nacre_pack_info {
	uint64_t id;
	uint64_t size;          /**< bytes written to the pack, gaps included */
	uint64_t live;          /**< bytes of files that still use it */
	uint32_t files;         /**< files that still use it */
	bool sealed;            /**< no more files will be added */
};

struct nacre_statfs {
	uint64_t total;         /**< bytes */
	uint64_t free;
	uint64_t avail;
	uint64_t files;         /**< inodes */
	uint64_t ffree;
	uint32_t bsize;
	uint32_t namemax;
};

struct nacre_ost {
	uint32_t index;
	bool up;
	char uuid[37];
	char addr[NACRE_ADDR_MAX + 1];
	const char *transport;  /**< "rdma", "tcp": of this client's connection
				 *   to it now; NULL when not connected */
	bool active;            /**< false: deactivated by an administrator, it
				 *   gets no new objects (nacre_ost_set_active()) */
};

/** One OST pool (nacre_pool_list()). */
struct nacre_pool {
	char name[NACRE_POOL_NAME_MAX + 1];
	unsigned int count;                     /**< entries in osts[] */
	uint32_t osts[NACRE_MAX_OSTS];          /**< member OST indexes, increasing */
};

struct nacre_dirent {
	struct nacre_fid fid;
	mode_t type;            /**< S_IFMT bits */
	uint64_t cookie;        /**< resume readdir after this entry */
	char name[NACRE_NAME_MAX + 1];
};

/** nacre_setattr() mask bits. */
#define NACRE_SET_MODE 0x01u
#define NACRE_SET_UID 0x02u
#define NACRE_SET_GID 0x04u
#define NACRE_SET_SIZE 0x08u
#define NACRE_SET_ATIME 0x10u
#define NACRE_SET_MTIME 0x20u
#define NACRE_SET_ATIME_NOW 0x40u
#define NACRE_SET_MTIME_NOW 0x80u

struct nacre_setattr {
	unsigned int valid;     /**< NACRE_SET_* */
	mode_t mode;            /**< permission bits only */
	uid_t uid;
	gid_t gid;
	uint64_t size;
	struct timespec atime;
	struct timespec mtime;
};

struct nacre_opts {
	const struct nacre_cred *cred; /**< default identity; NULL: the process's */
	int timeout_ms;         /**< per request; 0: 30 s */
	int retry_ms;           /**< how long to wait for a restarting server; 0: 60 s */
	/** How long path resolution (nacre_stat(), nacre_open(), ...) may reuse
	 * a name and its attributes; 0: 10 s (as the mount), negative: never.
	 * This client's own changes show at once; another client's within this
	 * time; nacre_open() always sees the file as the MDS has it. */
	int attr_cache_ms;
	/** Pack every small file this handle creates, as if each directory had
	 * NACRE_LAYOUT_PACK (mount -o pack). */
	bool pack_all;
	uint32_t pack_max;      /**< with pack_all; 0: NACRE_PACK_MAX_DEFAULT */
	/** How long a closed packed file may wait on this client before its
	 * batch is written and committed; 0: 1000 ms.  See nacre_sync(). */
	int pack_flush_ms;
	/** Sequential readahead per open file: how far ahead of a reader
	 * that reads a file in order the chunks are read in the background,
	 * in KiB; 0: 16384 (16 MiB), negative: none.  Read-ahead bytes are
	 * dropped when this client writes or truncates the file. */
	int readahead_kb;
	/** The cluster key file every server asks this client to prove it
	 * holds; NULL: $NACRE_KEYFILE, else /etc/nacre/FSNAME.key.  See
	 * nacre_keyfile_path(). */
	const char *keyfile;
	/** For nacre's own servers only: the MDS's pack compactor connects to
	 * its MDS as a server peer, so root squash leaves its root identity
	 * alone.  Applications leave it false; see nacre-mds(8) --root-squash. */
	bool server_peer;
	/** With pack_all: files of at most this many bytes (at most
	 * NACRE_INLINE_MAX) keep their bytes inline, in the MDT; 0: none
	 * (mount -o inline_max). */
	uint32_t inline_max;
};

/* ---- Connection ---- */

/**
 * Connects to the filesystem @fsname whose MDS listens at @mds_addr
 * ("tcp://host:port" or "host:port") and learns its OSTs.
 * Every connection first proves, both ways, that this client and the
 * server hold the same cluster key (opts->keyfile).
 * @param opts may be NULL.
 * @param out receives the handle; free it with nacre_disconnect().
 * @return 0, -NC_E_FSNAME (wrong name), -ECONNREFUSED, -NACRE_E_AUTH (the
 * server refused our key: wrong or missing cluster key), -NACRE_E_NOKEY,
 * -NACRE_E_KEYMODE, -NACRE_E_KEYFILE (the key file is missing, readable by
 * others, or malformed), ...
 */
int nacre_connect(const char *mds_addr, const char *fsname,
		  const struct nacre_opts *opts, struct nacre_fs **out);
/**
 * The key file nacre_connect() reads: @keyfile when not NULL or empty,
 * else $NACRE_KEYFILE when set, else /etc/nacre/@fsname.key.
 * @return 0, or -ENAMETOOLONG when it does not fit @len bytes.
 */
int nacre_keyfile_path(const char *keyfile, const char *fsname, char *buf, size_t len);
/** Closes every connection and frees @fs.  Open files must be closed first.
 * NULL is a no-op. */
void nacre_disconnect(struct nacre_fs *fs);
/** The MDS address and fsname given to nacre_connect(); owned by @fs. */
const char *nacre_fs_mds_addr(const struct nacre_fs *fs);
const char *nacre_fs_name(const struct nacre_fs *fs);
/** The filesystem uuid as text (37 bytes). */
void nacre_fs_uuid(struct nacre_fs *fs, char out[37]);
/** Describes a return code of this library. @note static string. */
const char *nacre_strerror(int err);
/** Receives one message of the library: @level 0 error, 1 warning, 2 info,
 * 3 debug; @subsys the part it comes from ("client"). */
typedef void (*nacre_log_fn)(int level, const char *subsys, const char *msg, void *arg);
/** Sends the library's messages (a pack that could not be written, an OST
 * that does not answer...) to @fn instead of standard error, for the whole
 * process; NULL restores standard error.  A program with a log of its own
 * passes them on to it, as mount.nacre does. */
void nacre_set_log(nacre_log_fn fn, void *arg);
void nacre_root_fid(struct nacre_fid *fid);
/** "seq:oid" in hex, 34 bytes with the NUL. */
void nacre_fid_format(const struct nacre_fid *fid, char *buf);
int nacre_fid_parse(const char *s, struct nacre_fid *fid);

/* ---- Statistics and OSTs ---- */

/** The sum over all OSTs (bytes) and the MDT (inodes), as statfs(2) wants. */
int nacre_statfs(struct nacre_fs *fs, struct nacre_statfs *st);
int nacre_mdt_statfs(struct nacre_fs *fs, struct nacre_statfs *st);
/** Asks the OSS of OST @index. -EHOSTDOWN / -ECONNREFUSED when unreachable. */
int nacre_ost_statfs(struct nacre_fs *fs, uint32_t index, struct nacre_statfs *st);
/**
 * The transport ("rdma", "tcp") this client's connection to the MDS, or to
 * OST @index, uses now; NULL when not connected.  An OSS that listens on
 * both is reached over RDMA when this host can, else over TCP.
 * @note A static string.
 */
const char *nacre_mds_transport(struct nacre_fs *fs);
const char *nacre_ost_transport(struct nacre_fs *fs, uint32_t index);
/**
 * The OST table from the MDS (refreshed by this call).
 * @param osts receives a malloc'd array of *count entries; free() it.
 */
int nacre_ost_list(struct nacre_fs *fs, struct nacre_ost **osts, unsigned int *count);
/**
 * Activates or deactivates OST @index.  A deactivated OST keeps serving the
 * objects it holds, but the MDS places no new objects (file layouts, packs)
 * on it.  The state survives restarts.  The caller must be uid 0 (-EPERM);
 * -ENODEV when no OST has that index.
 */
int nacre_ost_set_active(struct nacre_fs *fs, uint32_t index, bool active);

/* ---- OST pools ---- */

/** True for a valid pool name: 1 to NACRE_POOL_NAME_MAX of [A-Za-z0-9_.-]. */
bool nacre_pool_name_is_valid(const char *name);
/**
 * Changes to OST pools, kept by the MDS; the caller must be uid 0
 * (-EPERM), the name valid (-EINVAL).  create: -EEXIST when it exists,
 * -ENOSPC beyond 64 pools.  destroy: -ENOENT; -ENOTEMPTY while it has
 * OSTs.  add: each index must be a registered OST (-ENODEV) not in the
 * pool yet (-EEXIST); remove: each index must be in the pool (-ENOENT).
 * Nothing changes when an add or remove fails.
 */
int nacre_pool_create(struct nacre_fs *fs, const char *name);
int nacre_pool_destroy(struct nacre_fs *fs, const char *name);
int nacre_pool_add(struct nacre_fs *fs, const char *name, const uint32_t *osts,
		   unsigned int n);
int nacre_pool_remove(struct nacre_fs *fs, const char *name, const uint32_t *osts,
		      unsigned int n);
/**
 * The pool @name (-ENOENT when there is none), or every pool when @name is
 * NULL or "", in name order.
 * @param pools receives a malloc'd array of *count entries; free() it.
 */
int nacre_pool_list(struct nacre_fs *fs, const char *name, struct nacre_pool **pools,
		    unsigned int *count);

/** Counters of one connection's readahead, since nacre_connect(). */
struct nacre_io_stats {
	uint64_t ra_fetched;    /**< bytes read ahead from the OSTs */
	uint64_t ra_served;     /**< bytes of reads served from what was read ahead */
	uint64_t ra_dropped;    /**< bytes read ahead, then dropped unread (a seek,
				 * a write, a read that failed) */
};
void nacre_io_stats(struct nacre_fs *fs, struct nacre_io_stats *st);

/** What a client counter is: a count that only grows, or a level. */
enum nacre_counter_kind {
	NACRE_CTR_COUNTER = 0,
	NACRE_CTR_GAUGE = 1,
};

/** One client counter (nacre_counters()). */
struct nacre_counter {
	const char *name;       /**< Prometheus name, "nacre_client_read_bytes_total" */
	const char *help;       /**< what it counts, one line */
	int kind;               /**< enum nacre_counter_kind */
	uint64_t value;
};

/**
 * The counters of this client since nacre_connect(): reads and writes,
 * degraded reads, checksum errors, stale marks, rebuild and scrub progress,
 * readahead (docs/metrics.md lists them).  Fills the first @max entries
 * of @out (none with @max 0, to size the array) and returns how many
 * counters there are; every call returns the same names in the same order.
 * @note name and help are static strings.
 */
int nacre_counters(struct nacre_fs *fs, struct nacre_counter *out, int max);

/** Counters of the RDMA transport in this process (all connections, all
 *  filesystems; all zero when nothing went over RDMA). */
struct nacre_rdma_stats {
	uint64_t conns;                 /**< RDMA connections made */
	uint64_t sends;                 /**< SEND work requests posted */
	uint64_t recvs;                 /**< messages received */
	uint64_t reads;                 /**< RDMA READs posted: bulk data pulled */
	uint64_t read_bytes;            /**< bytes those READs moved */
	uint64_t reads_inflight_max;    /**< the most READs in flight at once */
	uint64_t credit_waits;          /**< sends that waited for the peer */
	uint64_t pinned_hits;           /**< transfers from registered buffers */
	uint64_t transient_regs;        /**< per-transfer registrations */
};
void nacre_rdma_stats(struct nacre_rdma_stats *st);

/**
 * Registers [@buf, @buf + @len) for RDMA once, for every later read into
 * or write from it (a data loader's batch buffers, as cudaHostRegister()).
 * Other buffers are registered for each transfer, which costs a little per
 * call.  The memory must stay mapped until nacre_unregister_buffer().
 * 0, -EINVAL, -EEXIST (overlaps a registered buffer), -ENOSPC (too many);
 * without RDMA, 0.
 */
int nacre_register_buffer(void *buf, size_t len);
/** 0, -ENOENT (not registered at @buf), -EBUSY (a transfer is using it). */
int nacre_unregister_buffer(void *buf);

/* ---- FID (inode) operations ---- */

int nacre_lookup(struct nacre_fs *fs, const struct nacre_cred *cred,
		 const struct nacre_fid *parent, const char *name,
		 struct nacre_stat *st);
int nacre_getattr(struct nacre_fs *fs, const struct nacre_fid *fid,
		  struct nacre_stat *st);
/** Changes attributes; NACRE_SET_SIZE also truncates the file's objects. */
int nacre_setattr(struct nacre_fs *fs, const struct nacre_cred *cred,
		  const struct nacre_fid *fid, const struct nacre_setattr *sa,
		  struct nacre_stat *st);
/** Creates a regular file, FIFO, socket or device node (S_IFMT in @mode). */
int nacre_mknod_at(struct nacre_fs *fs, const struct nacre_cred *cred,
		   const struct nacre_fid *parent, const char *name, mode_t mode,
		   dev_t rdev, struct nacre_stat *st);
int nacre_mkdir_at(struct nacre_fs *fs, const struct nacre_cred *cred,
		   const struct nacre_fid *parent, const char *name, mode_t mode,
		   struct nacre_stat *st);
int nacre_symlink_at(struct nacre_fs *fs, const struct nacre_cred *cred,
		     const struct nacre_fid *parent, const char *name,
		     const char *target, struct nacre_stat *st);
int nacre_link_at(struct nacre_fs *fs, const struct nacre_cred *cred,
		  const struct nacre_fid *fid, const struct nacre_fid *newparent,
		  const char *newname, struct nacre_stat *st);
int nacre_unlink_at(struct nacre_fs *fs, const struct nacre_cred *cred,
		    const struct nacre_fid *parent, const char *name);
int nacre_rmdir_at(struct nacre_fs *fs, const struct nacre_cred *cred,
		   const struct nacre_fid *parent, const char *name);
#define NACRE_RENAME_NOREPLACE 0x1u
#define NACRE_RENAME_EXCHANGE 0x2u
int nacre_rename_at(struct nacre_fs *fs, const struct nacre_cred *cred,
		    const struct nacre_fid *oldparent, const char *oldname,
		    const struct nacre_fid *newparent, const char *newname,
		    unsigned int flags);
/** Copies the target (NUL-terminated, truncated to @size - 1); returns its
 * full length. */
int nacre_readlink_fid(struct nacre_fs *fs, const struct nacre_fid *fid,
		       char *buf, size_t size);
/**
 * Reads directory entries after @cookie (0: from the start; "." and ".."
 * are not returned).  Returns the number of entries stored in @ents
 * (at most @max); *eof is set when the directory has no more.
 */
int nacre_readdir_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
		      const struct nacre_fid *dir, uint64_t cookie,
		      struct nacre_dirent *ents, unsigned int max, bool *eof);

/** Extended attributes.  get/list return the full length and copy at most
 * @size bytes (size 0 asks for the length only); -ERANGE when @size is
 * non-zero and too small.  @flags: XATTR_CREATE / XATTR_REPLACE. */
int nacre_getxattr_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
		       const struct nacre_fid *fid, const char *name,
		       void *value, size_t size);
int nacre_setxattr_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
		       const struct nacre_fid *fid, const char *name,
		       const void *value, size_t size, int flags);
int nacre_listxattr_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
			const struct nacre_fid *fid, char *list, size_t size);
int nacre_removexattr_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
			  const struct nacre_fid *fid, const char *name);

int nacre_getlayout_fid(struct nacre_fs *fs, const struct nacre_fid *fid,
			struct nacre_layout *layout);
/** A directory's default layout, or a new empty file's layout (-EBUSY when
 * the file holds data). */
int nacre_setlayout_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
			const struct nacre_fid *fid,
			const struct nacre_layout *layout);

/* ---- Files ---- */

/**
 * Opens the file @fid with open(2) @flags (O_RDONLY, O_WRONLY, O_RDWR,
 * O_TRUNC, O_APPEND).  The handle caches the layout and size.
 * @param out free with nacre_close().
 */
int nacre_open_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
		   const struct nacre_fid *fid, int flags,
		   struct nacre_file **out);
/**
 * What nacre_lookup_open() found out for opening a file for reading.
 * Opaque: use it once, with nacre_open_intent(), or free it.
 */
struct nacre_intent;
/**
 * nacre_lookup() with the open intent: the same request also brings what
 * opening @name for reading needs, checked against @cred's right to read.
 * *intent is set when @name is a regular file @cred may read, else NULL
 * (a file @cred may not read costs a second request; 0 is still returned).
 * nacre_open_intent() then opens the file as the MDS had it at this lookup,
 * without a request.  A mount opens with it when the open follows the
 * lookup of the same system call (close-to-open holds: nothing another
 * client closed before the open began is missed).
 */
int nacre_lookup_open(struct nacre_fs *fs, const struct nacre_cred *cred,
		      const struct nacre_fid *parent, const char *name,
		      struct nacre_stat *st, struct nacre_intent **intent);
/**
 * Completion of nacre_lookup_open_start(): @rc, @st and @intent as
 * nacre_lookup_open() gives them (@st NULL unless @rc is 0; the callee
 * owns @intent, which may be NULL).
 */
typedef void (*nacre_lookup_done_fn)(int rc, const struct nacre_stat *st,
				     struct nacre_intent *intent, void *arg);
/**
 * Starts nacre_lookup_open() without blocking the calling thread:
 * @done(..., @arg) runs once it is over, on a thread of libnacre, which
 * may be before this returns.  For servers of many lookups (the FUSE
 * mount) that would otherwise park a thread per lookup.  @done must not
 * block: it may run on the thread that receives the MDS's replies.
 * @return 0 when started (@done will run exactly once), -EAGAIN when not
 * (a name this client holds uncommitted, a bad name, no connection:
 * call nacre_lookup_open(); @done will not run).
 */
int nacre_lookup_open_start(struct nacre_fs *fs, const struct nacre_cred *cred,
			    const struct nacre_fid *parent, const char *name,
			    nacre_lookup_done_fn done, void *arg);
/** Opens what @intent names, with @flags O_RDONLY (and O_NOFOLLOW, ...;
 * no O_TRUNC: -EINVAL), and frees @intent. */
int nacre_open_intent(struct nacre_fs *fs, struct nacre_intent *intent, int flags,
		      struct nacre_file **out);
/** Frees an intent that will not be used.  NULL is a no-op. */
void nacre_intent_free(struct nacre_intent *intent);
/** Creates (O_EXCL honoured) and opens a regular file in @parent. */
int nacre_create_at(struct nacre_fs *fs, const struct nacre_cred *cred,
		    const struct nacre_fid *parent, const char *name,
		    mode_t mode, int flags, struct nacre_file **out,
		    struct nacre_stat *st);
/** Reads up to @len bytes at @off; returns bytes read (0 at end of file).
 * Holes read as zeros. */
ssize_t nacre_pread(struct nacre_file *f, void *buf, size_t len, off_t off);
/** Completion of nacre_pread_start(): @n as nacre_pread() returns it. */
typedef void (*nacre_read_done_fn)(ssize_t n, void *arg);
/**
 * Starts a read of @f as nacre_pread() would do it, without blocking the
 * calling thread: @done(n, @arg) runs once it is over, on a thread of
 * libnacre, which may be before this returns.  For servers of many small
 * reads (the FUSE mount) that would otherwise park a thread per read.
 * Only a read of a packed file that one OST request serves starts this
 * way; the bytes land straight in @buf, which must stay valid until
 * @done.  @done must not block: it runs on the thread that receives that
 * OST's replies.  @f must stay open until @done has run.
 * @return 0 when started (@done will run), -EAGAIN for any other read
 * (call nacre_pread(); @done will not run).
 */
int nacre_pread_start(struct nacre_file *f, void *buf, size_t len, off_t off,
		      nacre_read_done_fn done, void *arg);
/** Writes @len bytes at @off (at the end with O_APPEND); returns the bytes
 * written: @len, or 64 MiB when @len is larger (a short write, as write(2)
 * may make: callers loop). */
ssize_t nacre_pwrite(struct nacre_file *f, const void *buf, size_t len, off_t off);
/** Makes written data durable on the OSTs and the size on the MDS. */
int nacre_fsync(struct nacre_file *f);
/** Sends what writes to @f left gathered on this client to the OSTs and
 * reports size and mtime to the MDS, without making it durable: after it,
 * other clients opening the file see the data (close(2) of a mount does
 * this). */
int nacre_flush(struct nacre_file *f);
int nacre_ftruncate(struct nacre_file *f, uint64_t size);
int nacre_fstat(struct nacre_file *f, struct nacre_stat *st);
const struct nacre_fid *nacre_file_fid(const struct nacre_file *f);
/** The attributes the MDS returned when @f was opened (no request). */
void nacre_file_open_stat(const struct nacre_file *f, struct nacre_stat *st);
/** Reports the size and mtime, and frees @f.  NULL is a no-op (returns 0). */
int nacre_close(struct nacre_file *f);

/* ---- Small files ---- */

/**
 * Writes and commits every packed file this client closed but has not yet
 * committed (they wait up to nacre_opts.pack_flush_ms).  nacre_fsync() of a
 * packed file and nacre_disconnect() do the same.
 */
int nacre_sync(struct nacre_fs *fs);

/** One file of nacre_read_many(). */
struct nacre_read_req {
	const char *path;       /**< in */
	void *buf;              /**< in: the file's bytes land here */
	size_t cap;             /**< in: room in buf */
	ssize_t result;         /**< out: bytes read (min(size, cap)), or -errno */
	uint64_t size;          /**< out: the file's size */
};

/**
 * Reads the whole of many files (up to cap bytes each), with up to @depth
 * of them in flight at once (0: 256), in any order of completion: the data
 * loader's call for datasets of small files.  A packed file costs one
 * request to the MDS and one to an OST.
 * @return 0 when every request was tried (each has its result), or a
 * negative errno for the call itself (bad arguments, out of memory).
 */
int nacre_read_many(struct nacre_fs *fs, struct nacre_read_req *reqs, size_t n,
		    unsigned int depth);

/* ---- Changelog ---- */

/** Types of changelog records (nacre_changelog_type_name() gives their
 * names, as Lustre's: CREAT, MKDIR, ...). */
enum nacre_changelog_type {
	NACRE_CL_CREATE = 1,    /**< a regular file was created */
	NACRE_CL_MKDIR = 2,
	NACRE_CL_HLINK = 3,     /**< a hard link was made */
	NACRE_CL_SLINK = 4,     /**< a symbolic link was created */
	NACRE_CL_MKNOD = 5,     /**< a device, fifo or socket was created */
	NACRE_CL_UNLINK = 6,
	NACRE_CL_RMDIR = 7,
	NACRE_CL_RENAME = 8,    /**< sparent/sname moved to parent/name */
	NACRE_CL_SETATTR = 9,   /**< mode, owner or times changed */
	NACRE_CL_TRUNC = 10,    /**< the size was set */
	NACRE_CL_XATTR = 11,    /**< extended attribute name set or removed */
	NACRE_CL_LAYOUT = 12,   /**< the layout was set */
};

/** One namespace change the MDS recorded (nacre-mds --changelog). */
struct nacre_changelog_rec {
	uint64_t seq;           /**< increasing, never reused */
	unsigned int type;      /**< enum nacre_changelog_type */
	uid_t uid;              /**< who made the change */
	gid_t gid;
	struct timespec time;   /**< when the MDS made it */
	struct nacre_fid fid;   /**< the file or directory changed */
	struct nacre_fid parent; /**< the entry made or removed: its directory */
	char name[NACRE_NAME_MAX + 1]; /**< ... and name ("" when none; the
					* attribute name for XATTR) */
	struct nacre_fid sparent; /**< RENAME: the entry it came from */
	char sname[NACRE_NAME_MAX + 1];
};

/**
 * Reads up to @max changelog records numbered above @after into @out
 * (root only: -EPERM otherwise).  *@count receives how many, *@last (may be
 * NULL) the highest number the MDS has given so far, so a reader that got
 * fewer than @max is up to date.  The changelog is empty when the MDS does
 * not run with --changelog.
 */
int nacre_changelog_read(struct nacre_fs *fs, uint64_t after, struct nacre_changelog_rec *out,
			 size_t max, size_t *count, uint64_t *last);
/** Removes the records numbered up to @upto, once a reader has consumed
 * them (root only). */
int nacre_changelog_clear(struct nacre_fs *fs, uint64_t upto);
/** "CREAT", "MKDIR", ...; "UNKNOWN" for a type this library does not know.
 * A static string. */
const char *nacre_changelog_type_name(unsigned int type);

/** Lists packs with id > @after, at most @max; @count receives how many. */
int nacre_pack_list(struct nacre_fs *fs, uint64_t after, struct nacre_pack_info *out,
		    unsigned int max, unsigned int *count);
/**
 * Moves the regular file @fid into a pack when it is at most @pack_max bytes
 * (0: NACRE_PACK_MAX_DEFAULT): 0 when moved or already packed, -EFBIG when
 * larger, -EBUSY when it changed while it was read or this handle is
 * writing it (nothing moved), -EACCES when the caller neither owns the
 * file nor may write it (the owner may move a read-only file: its bytes
 * stay as they are).  Its
 * old objects stay readable for a grace period (5 min) for readers that
 * opened it before.
 */
int nacre_pack_file(struct nacre_fs *fs, const struct nacre_fid *fid, uint32_t pack_max);
/**
 * nacre_pack_file() for @n files at once: their bytes gather in this
 * client's pack buffer and are written, synced and committed a buffer at a
 * time, not a file at a time (a tree of small files converts many times
 * faster).  @results[i] receives what nacre_pack_file() would return for
 * @fids[i].
 * @return 0 when every file was tried, or a negative errno for the call
 * itself (bad arguments, out of memory, a failed commit of this client's
 * own files before the start).
 */
int nacre_pack_files(struct nacre_fs *fs, const struct nacre_fid *fids, size_t n,
		     uint32_t pack_max, int *results);
/**
 * nacre_pack_files(), where the files of at most @inline_max bytes (at most
 * NACRE_INLINE_MAX; 0: none) become inline files instead (their bytes kept
 * in the MDT, see NACRE_LAYOUT_INLINE), as in a directory whose template
 * says so.  Files already packed or inline stay as they are (0).
 * @return as nacre_pack_files(); -EINVAL when @inline_max is too large.
 */
int nacre_pack_files_inline(struct nacre_fs *fs, const struct nacre_fid *fids, size_t n,
			    uint32_t pack_max, uint32_t inline_max, int *results);
/**
 * Compacts the sealed packs whose live fraction is below @threshold (0..1;
 * 0: 0.5): their files move to new packs, and the MDS destroys each emptied
 * pack after the grace period.  @moved and @freed (may be NULL) receive the
 * files moved and the packs emptied.
 */
int nacre_pack_gc(struct nacre_fs *fs, double threshold, uint64_t *moved, uint64_t *freed);

/* ---- Migration ---- */

#define NACRE_MIGRATE_EXCLUDE_MAX 64

/** What nacre_migrate_fid() makes of a file; zeroed: the same geometry on
 * new objects. */
struct nacre_migrate_opts {
	uint32_t stripe_size;   /**< bytes per chunk; 0: keep the file's */
	bool geometry;          /**< stripe_count, k and m below apply; false:
				     keep the file's (fewer data chunks when the
				     OSTs left cannot hold its rows) */
	uint32_t stripe_count;  /**< as a template's: 0 default, -1 all OSTs */
	uint32_t k;             /**< as a template's: 0 inherits, k >= 1 fixes
				     the coding (k = 1, m = 0: plain striping) */
	uint32_t m;
	unsigned int nexclude;  /**< OSTs the new objects must avoid */
	uint32_t exclude[NACRE_MIGRATE_EXCLUDE_MAX];
	/** How long the old objects stay readable for readers that opened the
	 * file before the swap, seconds (at most a day); 0: 300, as a move
	 * into a pack; negative: destroyed at once. */
	int grace_s;
	unsigned int retries;   /**< copies tried when a writer interferes (the
				     waits between them double from 100 ms);
				     0: 6 */
};

/**
 * Re-lays out the regular file @fid online: the MDS gives it new objects
 * (on OSTs it chooses outside opts->exclude), this client copies the bytes
 * into them through the normal read path (degraded erasure-coded files are
 * decoded) and the MDS swaps the layouts in one transaction, only when the
 * file did not change meanwhile (its layout generation, size, mtime and
 * ctime).  The old objects (or the file's extent of a pack: a packed file
 * gets objects of its own) are destroyed opts->grace_s later.
 * @return 0 (@out, may be NULL, receives the new layout); -EBUSY when the
 * file kept changing during opts->retries copies (it keeps its layout);
 * -EACCES without write permission; -EISDIR, -EINVAL for other types;
 * -NC_E_NOOST / -NC_E_LAYOUT when the OSTs left cannot hold the layout.
 * The swap also waits for the file to see no writer (open for writing,
 * size report) for a second.
 * @note A writer that keeps the file open across the whole migration and
 * reports its writes only after the swap is not seen: stop writers, or
 * check them after.  Readers that opened the file before the swap read
 * the old objects: they must open it again within the grace period.
 */
int nacre_migrate_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
		      const struct nacre_fid *fid, const struct nacre_migrate_opts *opts,
		      struct nacre_layout *out);

/* ---- Path operations ---- */

int nacre_resolve(struct nacre_fs *fs, const struct nacre_cred *cred,
		  const char *path, bool follow, struct nacre_stat *st);
int nacre_stat(struct nacre_fs *fs, const char *path, struct nacre_stat *st);
int nacre_lstat(struct nacre_fs *fs, const char *path, struct nacre_stat *st);
/** open(2) with O_CREAT, O_EXCL, O_TRUNC, O_APPEND and the access modes. */
int nacre_open(struct nacre_fs *fs, const char *path, int flags, mode_t mode,
	       struct nacre_file **out);
int nacre_mkdir(struct nacre_fs *fs, const char *path, mode_t mode);
int nacre_rmdir(struct nacre_fs *fs, const char *path);
int nacre_unlink(struct nacre_fs *fs, const char *path);
int nacre_rename(struct nacre_fs *fs, const char *from, const char *to);
int nacre_link(struct nacre_fs *fs, const char *from, const char *to);
int nacre_symlink(struct nacre_fs *fs, const char *target, const char *path);
int nacre_readlink(struct nacre_fs *fs, const char *path, char *buf, size_t size);
int nacre_truncate(struct nacre_fs *fs, const char *path, uint64_t size);
int nacre_chmod(struct nacre_fs *fs, const char *path, mode_t mode);
int nacre_readdir(struct nacre_fs *fs, const char *path, uint64_t cookie,
		  struct nacre_dirent *ents, unsigned int max, bool *eof);
int nacre_getxattr(struct nacre_fs *fs, const char *path, const char *name,
		   void *value, size_t size);
int nacre_setxattr(struct nacre_fs *fs, const char *path, const char *name,
		   const void *value, size_t size, int flags);
int nacre_listxattr(struct nacre_fs *fs, const char *path, char *list, size_t size);
int nacre_removexattr(struct nacre_fs *fs, const char *path, const char *name);
int nacre_getlayout(struct nacre_fs *fs, const char *path, struct nacre_layout *layout);
int nacre_setlayout(struct nacre_fs *fs, const char *path,
		    const struct nacre_layout *layout);

/* ---- Erasure-coded files: repair ---- */

/** What a rebuild or scrub did. */
struct nacre_repair_stats {
	uint64_t rows;          /**< rows examined */
	uint64_t chunks_bad;    /**< chunks found stale, missing or corrupt */
	uint64_t chunks_fixed;  /**< chunks regenerated and written */
	uint64_t shards_cleared;/**< stale marks cleared */
	/** scrub: shards not verified, their OST down or not answering */
	uint64_t shards_unverified;
};

/** Progress of a repair: @done of @total rows. */
typedef void (*nacre_progress_fn)(uint64_t done, uint64_t total, void *arg);

/**
 * Regenerates, from the surviving shards, every stale shard of the file, and
 * with @ost != NACRE_OST_ANY every shard the file keeps on OST @ost (an OST
 * replaced by an empty one); then cuts those shards' objects to the rows
 * rewritten and clears the stale marks.  A packed file is repaired as its
 * pack (all the pack's files with it); a pack's FID (NACRE_PACK_FID_SEQ,
 * id) may be given too.  Files without parity (m = 0) have nothing to
 * rebuild from: 0 when none of their shards needs it, -EIO otherwise.
 * @param cb may be NULL.  @param st may be NULL.
 */
int nacre_rebuild_fid(struct nacre_fs *fs, const struct nacre_fid *fid, uint32_t ost,
		      nacre_progress_fn cb, void *arg, struct nacre_repair_stats *st);
/**
 * Reads every chunk of every shard of the file, verifying the checksums
 * stored with them, and repairs corrupt chunks from the other shards.  A
 * packed file is scrubbed as its pack.
 * st->chunks_bad counts the corrupt chunks found.
 */
int nacre_scrub_fid(struct nacre_fs *fs, const struct nacre_fid *fid,
		    nacre_progress_fn cb, void *arg, struct nacre_repair_stats *st);

#ifdef __cplusplus
}
#endif

#endif
