/* SPDX-License-Identifier: MIT */
/*
 * Host-side representations of nacre's core objects: FIDs, attributes,
 * layouts, credentials, OST descriptions and filesystem statistics.
 *
 * These structs are never sent or stored as raw bytes: common/wire.c encodes
 * them field by field in little-endian order, and mds/db.c uses the same
 * encoders for LMDB records.
 */
#ifndef NC_TYPES_H
#define NC_TYPES_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define NC_NAME_MAX 255          /* one path component, without the NUL */
#define NC_SYMLINK_MAX 4095      /* a symlink target, without the NUL */
#define NC_FSNAME_MAX 31
#define NC_ADDR_MAX 127          /* "tcp://host:port" */
#define NC_MAX_STRIPES 64        /* objects in one layout */
/* OST pools: named sets of OST indexes kept by the MDS.  Names are 1 to
 * NC_POOL_NAME_MAX characters of [A-Za-z0-9_.-]. */
#define NC_POOL_NAME_MAX 15
#define NC_POOLS_MAX 64          /* pools per filesystem */
#define NC_MAX_GROUPS 32         /* supplementary groups sent with a request */
#define NC_XATTR_NAME_MAX 255
#define NC_XATTR_VALUE_MAX 65536
#define NC_XATTR_LIST_MAX 65536

#define NC_DEFAULT_STRIPE_SIZE (1u << 20)
#define NC_DEFAULT_STRIPE_COUNT 4
#define NC_MIN_STRIPE_SIZE 4096u
#define NC_MAX_STRIPE_SIZE (64u << 20)
#define NC_OST_ANY UINT32_MAX

/* A file identifier: allocated by the MDS, never reused. */
struct nc_fid {
	uint64_t f_seq;
	uint64_t f_oid;
};

#define NC_FID_FMT "%016" PRIx64 ":%016" PRIx64
#define NC_FID_ARGS(fid) (fid)->f_seq, (fid)->f_oid
/* Text form "SEQ:OID" in hex, 33 chars plus NUL. */
#define NC_FID_STR_LEN 34

/* The root directory's FID is the same on every filesystem. */
#define NC_ROOT_FID_SEQ 1
#define NC_ROOT_FID_OID 1

static inline bool nc_fid_eq(const struct nc_fid *a, const struct nc_fid *b)
{
	return a->f_seq == b->f_seq && a->f_oid == b->f_oid;
}

static inline bool nc_fid_is_zero(const struct nc_fid *f)
{
	return f->f_seq == 0 && f->f_oid == 0;
}

void nc_fid_root(struct nc_fid *fid);
/* Writes "seq:oid" in hex to @buf (NC_FID_STR_LEN bytes). */
void nc_fid_to_str(const struct nc_fid *fid, char *buf);
/* Parses what nc_fid_to_str wrote (also accepts "[seq:oid]"); 0 or -EINVAL. */
int nc_fid_from_str(const char *s, struct nc_fid *fid);

struct nc_timespec {
	int64_t t_sec;
	uint32_t t_nsec;
};

/* Attributes of one inode as the MDS keeps them. */
struct nc_attr {
	struct nc_fid a_fid;
	uint32_t a_mode;        /* S_IFMT type bits and permission bits */
	uint32_t a_uid;
	uint32_t a_gid;
	uint32_t a_nlink;
	uint64_t a_size;
	uint64_t a_blocks;      /* 512-byte blocks, an estimate from the size */
	uint32_t a_rdev;
	uint32_t a_flags;       /* reserved, 0 */
	struct nc_timespec a_atime;
	struct nc_timespec a_mtime;
	struct nc_timespec a_ctime;
};

/* Shard states kept in the layout (stale marks arrive with erasure coding). */
#define NC_SHARD_STALE 0x1u

struct nc_layout_shard {
	uint32_t ls_ost;        /* OST index */
	uint32_t ls_flags;      /* NC_SHARD_* */
};

/*
 * A layout: file bytes cut into chunks of l_stripe_size; every row of l_k data
 * chunks gains l_m parity chunks; encoded chunk g lands on object g mod N at
 * object offset (g div N) * stripe_size, N = l_stripe_count.  m = 0 is plain
 * RAID-0 striping.
 *
 * A directory's default layout is a template: zero fields mean "inherit the
 * filesystem default", l_first_ost picks the first OST (NC_OST_ANY: the MDS
 * chooses), and l_stripe_count counts no shards.
 */
struct nc_layout {
	uint32_t l_stripe_size;
	uint16_t l_stripe_count;
	uint8_t l_k;
	uint8_t l_m;
	uint32_t l_flags;       /* NC_LAYOUT_* */
	uint32_t l_first_ost;   /* templates only */
	uint32_t l_gen;         /* bumped when the objects change */
	/* Small files (packing): with NC_LAYOUT_PACK in a template, the largest
	 * file kept packed; with NC_LAYOUT_PACKED in a file's layout, the
	 * extent of the pack (whose geometry and shards fill the rest) that
	 * holds its bytes.  Encoded only when the flag says so. */
	uint32_t l_pack_max;
	/* With NC_LAYOUT_INLINE in a template, the largest file whose bytes
	 * the MDT keeps in the file's own record (0: none); with it in a
	 * file's layout, the file has no objects: its bytes travel beside the
	 * layout (nc_attr_rep's ar_inline), and l_gen counts their changes. */
	uint32_t l_inline_max;
	uint64_t l_pack_id;
	uint64_t l_pack_off;
	uint64_t l_pack_len;
	/* With NC_LAYOUT_OBJFID: the FID that names the file's objects on the
	 * OSTs (a migrated file's objects are new ones, so they cannot share
	 * the file's FID with the old ones).  Encoded only when the flag says so. */
	struct nc_fid l_obj;
	/* Templates with NC_LAYOUT_POOL: new files use only the active OSTs
	 * of this OST pool (NUL-terminated; encoded only with the flag). */
	char l_pool[NC_POOL_NAME_MAX + 1];
	struct nc_layout_shard l_shards[NC_MAX_STRIPES];
};

#define NC_LAYOUT_TEMPLATE 0x1u /* a directory default, holds no shards */
#define NC_LAYOUT_PACK 0x2u     /* template: new small files are packed */
#define NC_LAYOUT_PACKED 0x4u   /* file: bytes in a pack, l_pack_* say where */
#define NC_LAYOUT_POOL 0x8u     /* template: l_pool names an OST pool */
#define NC_LAYOUT_OBJFID 0x10u  /* file: objects named by l_obj, not the file's FID */
/* Template: l_inline_max says which small files are inline; file: its
 * bytes are inline, in its MDT record (1.8). */
#define NC_LAYOUT_INLINE 0x20u
/* File: its bytes are not in objects of its own (a pack's extent, or
 * inline); its size changes only by a switch to new bytes. */
#define NC_LAYOUT_SMALL (NC_LAYOUT_PACKED | NC_LAYOUT_INLINE)
#define NC_LAYOUT_FLAGS (NC_LAYOUT_TEMPLATE | NC_LAYOUT_PACK | NC_LAYOUT_PACKED | \
			 NC_LAYOUT_POOL | NC_LAYOUT_OBJFID | NC_LAYOUT_INLINE)
/* The most bytes a file may keep inline: one page, so that an inode
 * record stays within what a symbolic link's takes. */
#define NC_INLINE_MAX 4096u
#define NC_PACK_MAX_DEFAULT (1u << 20)
#define NC_PACK_MAX_LIMIT (64u << 20)   /* largest pack_max a template may set */
/* The objects of pack N are those of FID (NC_PACK_FID_SEQ, N): a sequence
 * no file or directory uses. */
#define NC_PACK_FID_SEQ 2
#define NC_FILE_FID_SEQ 1
/* The objects a migration lays out for a file are named (NC_MIGRATE_FID_SEQ,
 * N), N from a counter of the MDS: never the FID of the old objects. */
#define NC_MIGRATE_FID_SEQ 3

/* The FID that names the objects of the file @fid laid out as @l. */
static inline const struct nc_fid *nc_layout_obj_fid(const struct nc_layout *l,
						     const struct nc_fid *fid)
{
	return (l->l_flags & NC_LAYOUT_OBJFID) ? &l->l_obj : fid;
}

/*
 * One changelog record: a namespace change the MDS made (as Lustre's
 * changelogs, for data movers and policy engines).  cr_fid is the file the
 * change is about, cr_parent and cr_name the entry it made or removed; a
 * rename also names the entry it came from (cr_sparent, cr_sname).
 */
enum nc_changelog_type {
	NC_CL_CREATE = 1,
	NC_CL_MKDIR = 2,
	NC_CL_HLINK = 3,
	NC_CL_SLINK = 4,
	NC_CL_MKNOD = 5,
	NC_CL_UNLINK = 6,
	NC_CL_RMDIR = 7,
	NC_CL_RENAME = 8,
	NC_CL_SETATTR = 9,
	NC_CL_TRUNC = 10,
	NC_CL_XATTR = 11,
	NC_CL_LAYOUT = 12,
	NC_CL_TYPE_MAX = NC_CL_LAYOUT,
};
struct nc_changelog_rec {
	uint64_t cr_seq;
	uint32_t cr_type;       /* enum nc_changelog_type */
	uint32_t cr_uid;        /* who made the change */
	uint32_t cr_gid;
	struct nc_timespec cr_time;
	struct nc_fid cr_fid;
	struct nc_fid cr_parent;
	char cr_name[NC_NAME_MAX + 1];
	struct nc_fid cr_sparent;
	char cr_sname[NC_NAME_MAX + 1];
};

/* The caller's identity, checked by the MDS against mode bits. */
struct nc_cred {
	uint32_t c_uid;
	uint32_t c_gid;
	uint32_t c_ngroups;
	uint32_t c_groups[NC_MAX_GROUPS];
};

enum nc_ost_state {
	NC_OST_DOWN = 0,
	NC_OST_UP = 1,
};
/* In o_state's high bits (OST_LIST replies, the MDS's table): an
 * administrator deactivated the OST; it serves existing objects but gets
 * no new ones.  NC_OST_STATE_MASK keeps the enum nc_ost_state part. */
#define NC_OST_INACTIVE 0x200u
#define NC_OST_STATE_MASK 0xffu


struct nc_ost_info {
	uint32_t o_index;
	uint32_t o_state;       /* enum nc_ost_state */
	uint8_t o_uuid[16];
	char o_addr[NC_ADDR_MAX + 1];
};

/* Space of one target (MDT or OST), in bytes and inodes. */
struct nc_statfs {
	uint64_t s_total;
	uint64_t s_free;
	uint64_t s_avail;
	uint64_t s_files;
	uint64_t s_ffree;
	uint32_t s_bsize;
	uint32_t s_namemax;
};

/* Setattr masks (nc_setattr_req.sa_valid). */
#define NC_SA_MODE 0x001u
#define NC_SA_UID 0x002u
#define NC_SA_GID 0x004u
#define NC_SA_SIZE 0x008u
#define NC_SA_ATIME 0x010u
#define NC_SA_MTIME 0x020u
#define NC_SA_ATIME_NOW 0x040u
#define NC_SA_MTIME_NOW 0x080u
#define NC_SA_CTIME 0x100u

/* Whether compaction takes a pack: sealed, with files still in it, and
 * less than @threshold of its bytes theirs (the MDS's background pass and
 * nacre_pack_gc() must agree on it). */
bool nc_pack_is_sparse(bool sealed, uint64_t files, uint64_t size, uint64_t live,
		       double threshold);

/* Milliseconds of CLOCK_MONOTONIC: for timeouts and expiry. */
int64_t nc_now_ms(void);
/* @ms milliseconds from now on clock @clk, for pthread_cond_timedwait()
 * (CLOCK_REALTIME for a default condition variable). */
void nc_deadline_ms(struct timespec *ts, clockid_t clk, int ms);

/* Access checks against mode bits (the MDS decides; a client may check
 * first to fail early). */
#define NC_MAY_READ 4u
#define NC_MAY_WRITE 2u
#define NC_MAY_EXEC 1u
bool nc_cred_in_group(const struct nc_cred *c, uint32_t gid);
/* True for a valid OST pool name: 1 to NC_POOL_NAME_MAX of [A-Za-z0-9_.-]. */
bool nc_pool_name_is_valid(const char *name);
/* generic_permission() as Linux does it: 0 or -EACCES. */
int nc_permission(const struct nc_attr *a, const struct nc_cred *c, unsigned int want);

#endif
