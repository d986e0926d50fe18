/* SPDX-License-Identifier: MIT */
/*
 * The nacre wire protocol: the only definition of the bytes on the wire.
 *
 * Every message is a 32-byte little-endian header followed by mh_body_len
 * bytes of body and mh_bulk_len bytes of bulk data.  The body is a fixed
 * little-endian encoding of one message shape (below); bulk data is file
 * bytes, kept apart so that a receiver can place it straight into the
 * caller's buffer (and, later, so RDMA can move it one-sided).
 *
 * Header layout (offsets in bytes):
 *   0 mh_magic   u32  NC_MSG_MAGIC
 *   4 mh_version u16  major << 8 | minor
 *   6 mh_opcode  u16  enum nc_opcode
 *   8 mh_flags   u32  NC_MF_*
 *  12 mh_status  i32  enum nc_wire_status (replies)
 *  16 mh_reqid   u64  chosen by the requester, echoed in the reply
 *  24 mh_body_len u32
 *  28 mh_bulk_len u32
 *
 * Changelog (append only, never reorder fields):
 *   1.0  first protocol.
 *   1.1  erasure coding: SHARD_STATE, OBJ_LOCK, OBJ_UNLOCK, OBJ_VERIFY;
 *        OST_REGISTER may carry NC_OSTREG_REPLACE in o_state's high bits.
 *   1.2  small files: FID_GRANT, PACK_*, LOOKUP_MANY.
 *   1.3  authentication: feature NC_FEAT_AUTH; with it CONNECT carries the
 *        client nonce (cr_nonce) and its reply the server nonce (cp_nonce);
 *        new AUTH request and reply (struct nc_auth_msg), wire status AUTH.
 *        A server serves nothing but CONNECT and one AUTH until AUTH
 *        succeeds (common/auth.h).
 *        OST administration: OST_ADMIN (activate, deactivate), POOL and
 *        POOL_LIST (OST pools); OST_LIST replies carry NC_OST_INACTIVE in
 *        o_state's high bits; a layout template with NC_LAYOUT_POOL ends
 *        with the pool name (after l_pack_max when NC_LAYOUT_PACK is set).
 *        The changelog: CHANGELOG_READ and CHANGELOG_CLEAR (root only).
 *   1.4  migration: MIGRATE; a file layout may carry NC_LAYOUT_OBJFID and
 *        then l_obj (the FID naming its objects) after the pack fields.
 *   1.5  reply reconstruction: feature NC_FEAT_REPLAY; with it CONNECT
 *        carries the client's uuid (cr_client) after the nonce.  A request
 *        may set NC_MF_SLOT, with its slot in mh_flags' high 16 bits, and
 *        NC_MF_RESEND when it is sent again after a lost connection; the
 *        server answers a resend of a request it already executed with
 *        the reply it recorded, durably, with the change (mds/ns_reply.c).
 *   1.6  PACK_ALLOC may end with the OSTs the new pack should leave out
 *        (pa_navoid, pa_avoid); absent when there are none, and sent
 *        only where CONNECT agreed on 1.6 (nc_cconn_peer_minor()), so a
 *        1.5 MDS never sees it.
 *   1.7  OBJ_WATCH (or_flags: NC_WATCH_START, NC_WATCH_FETCH, NC_WATCH_STOP;
 *        the FETCH reply is an nc_watch_rep), sent only to an OSS whose
 *        CONNECT agreed on 1.7: a rebuild then locks one row at a time.
 *   1.8  inline files: NC_LAYOUT_INLINE.  A template with it ends with
 *        l_inline_max (after the pool name); a file layout with it holds
 *        no shards and no extent, and an nc_attr_rep carrying one ends
 *        with ar_inline_sent and, when set, the bytes.  PACK_COMMIT's
 *        creates may set NC_CREATE_INLINE (the bytes follow the extent
 *        fields), and PACK_SWITCH's ps_new may be inline (the bytes
 *        follow it).  Clients send these only where CONNECT agreed on 1.8.
 *        PACK_ALLOC's pa_layout, empty in a request before, may be a
 *        template (NC_LAYOUT_TEMPLATE): the new pack takes its stripe
 *        size, count and coding instead of pa_dir's (a client moving or
 *        rewriting files keeps their coding).  An MDS before this ignores
 *        it, and gives the default layout, as it did.
 */
#ifndef NC_WIRE_H
#define NC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"

#define NC_MSG_MAGIC 0x4e43524du /* "MRCN" in memory, 'NCRM' as a number */
#define NC_PROTO_MAJOR 1
#define NC_PROTO_MINOR 8
/* The first minor with PACK_ALLOC's avoid list. */
#define NC_MINOR_PACK_AVOID 6
/* The first minor with OBJ_WATCH. */
#define NC_MINOR_WATCH 7
/* The first minor with inline files. */
#define NC_MINOR_INLINE 8
#define NC_HDR_LEN 32
#define NC_MAX_BODY (256u * 1024)        /* metadata bodies, readdir pages */
#define NC_MAX_BULK (16u * 1024 * 1024)  /* one data transfer */

/* Header flags. */
#define NC_MF_REPLY 0x1u
/* The request uses a reply slot: bits 16..31 hold the slot number, and
 * mh_reqid orders the requests of one slot (NC_FEAT_REPLAY). */
#define NC_MF_SLOT 0x2u
/* The same request (same slot and reqid) sent again after a lost
 * connection: answer it from the recorded reply if it was executed. */
#define NC_MF_RESEND 0x4u
#define NC_MF_SLOT_SHIFT 16
/* Reply slots per client: at most this many non-idempotent requests of one
 * client are in flight at once, and the server keeps one reply per slot. */
#define NC_REPLAY_SLOTS 64

/* Feature bits exchanged at connect; code tests these, never versions. */
#define NC_FEAT_BULK_SPLIT 0x1ull /* body and bulk are separate (always set) */
/* Cluster-key authentication (common/auth.h): CONNECT and its reply carry
 * nonces and AUTH follows.  Servers refuse peers without it. */
#define NC_FEAT_AUTH 0x2ull
/* Reply reconstruction: CONNECT names the client (cr_client) and requests
 * may carry reply slots (NC_MF_SLOT). */
#define NC_FEAT_REPLAY 0x4ull
#define NC_FEATURES_SUPPORTED (NC_FEAT_BULK_SPLIT | NC_FEAT_AUTH | NC_FEAT_REPLAY)

struct nc_msg_hdr {
	uint32_t mh_magic;
	uint16_t mh_version;
	uint16_t mh_opcode;
	uint32_t mh_flags;
	int32_t mh_status;
	uint64_t mh_reqid;
	uint32_t mh_body_len;
	uint32_t mh_bulk_len;
};

/*
 * Opcodes: X(name, value, idempotent).  An idempotent request may be resent
 * after a lost connection; the others only with a reply slot, to a server
 * that reconstructs their replies (NC_FEAT_REPLAY: the MDS).  Append only; retire as NC_OP_OBSOLETE_n.
 */
#define NC_OPCODES(X)                   \
	X(CONNECT, 1, 1)                \
	X(PING, 2, 1)                   \
	X(AUTH, 3, 0)                   \
	X(OST_REGISTER, 10, 1)          \
	X(OST_LIST, 11, 1)              \
	X(MDS_STATFS, 12, 1)            \
	X(LOOKUP, 20, 1)                \
	X(GETATTR, 21, 1)               \
	X(SETATTR, 22, 0)               \
	X(CREATE, 23, 0)                \
	X(LINK, 24, 0)                  \
	X(UNLINK, 25, 0)                \
	X(RENAME, 26, 0)                \
	X(READDIR, 27, 1)               \
	X(READLINK, 28, 1)              \
	X(OPEN, 29, 1)                  \
	X(GETLAYOUT, 30, 1)             \
	X(SETLAYOUT, 31, 0)             \
	X(SIZE_UPDATE, 32, 1)           \
	X(XATTR_GET, 33, 1)             \
	X(XATTR_SET, 34, 0)             \
	X(XATTR_LIST, 35, 1)            \
	X(XATTR_DEL, 36, 0)             \
	X(SHARD_STATE, 37, 1)           \
	X(FID_GRANT, 38, 0)             \
	X(PACK_ALLOC, 39, 0)            \
	X(PACK_COMMIT, 40, 1)           \
	X(PACK_SWITCH, 41, 0)           \
	X(PACK_LIST, 42, 1)             \
	X(PACK_FILES, 43, 1)            \
	X(LOOKUP_MANY, 44, 1)           \
	X(OBJ_READ, 50, 1)              \
	X(OBJ_WRITE, 51, 1)             \
	X(OBJ_TRUNC, 52, 1)             \
	X(OBJ_PUNCH, 53, 1)             \
	X(OBJ_DESTROY, 54, 1)           \
	X(OBJ_SYNC, 55, 1)              \
	X(OBJ_STAT, 56, 1)              \
	X(OST_STATFS, 57, 1)            \
	X(OBJ_LOCK, 58, 0)              \
	X(OBJ_UNLOCK, 59, 1)            \
	X(OBJ_VERIFY, 60, 1)            \
	X(OBJ_WATCH, 64, 1)             \
	X(OST_ADMIN, 61, 1)             \
	X(POOL, 62, 0)                  \
	X(POOL_LIST, 63, 1)             \
	X(CHANGELOG_READ, 90, 1)        \
	X(CHANGELOG_CLEAR, 91, 1)       \
	X(MIGRATE, 45, 0)

enum nc_opcode {
#define NC_OP_ENUM(name, value, idem) NC_OP_##name = value,
	NC_OPCODES(NC_OP_ENUM)
#undef NC_OP_ENUM
};

/* Name of an opcode for logs, "UNKNOWN" for values not in the table. */
const char *nc_op_name(uint16_t opcode);
bool nc_op_is_known(uint16_t opcode);
bool nc_op_is_idempotent(uint16_t opcode);

/*
 * Wire status codes: a stable enum of their own, mapped to and from local
 * errno values at the boundary.  X(name, wire value, local error).
 * Append only; never renumber.
 */
#define NC_WIRE_STATUS(X)                 \
	X(OK, 0, 0)                       \
	X(PERM, 1, -EPERM)                \
	X(NOENT, 2, -ENOENT)              \
	X(IO, 5, -EIO)                    \
	X(BADF, 9, -EBADF)                \
	X(AGAIN, 11, -EAGAIN)             \
	X(NOMEM, 12, -ENOMEM)             \
	X(ACCES, 13, -EACCES)             \
	X(BUSY, 16, -EBUSY)               \
	X(EXIST, 17, -EEXIST)             \
	X(XDEV, 18, -EXDEV)               \
	X(NOTDIR, 20, -ENOTDIR)           \
	X(ISDIR, 21, -EISDIR)             \
	X(INVAL, 22, -EINVAL)             \
	X(FBIG, 27, -EFBIG)               \
	X(NOSPC, 28, -ENOSPC)             \
	X(ROFS, 30, -EROFS)               \
	X(MLINK, 31, -EMLINK)             \
	X(RANGE, 34, -ERANGE)             \
	X(NAMETOOLONG, 36, -ENAMETOOLONG) \
	X(NOSYS, 38, -ENOSYS)             \
	X(NOTEMPTY, 39, -ENOTEMPTY)       \
	X(LOOP, 40, -ELOOP)               \
	X(NODATA, 61, -ENODATA)           \
	X(OVERFLOW, 75, -EOVERFLOW)       \
	X(OPNOTSUPP, 95, -EOPNOTSUPP)     \
	X(STALE, 116, -ESTALE)            \
	X(DQUOT, 122, -EDQUOT)            \
	X(PROTO, 1000, -NC_E_PROTO)       \
	X(VERSION, 1001, -NC_E_VERSION)   \
	X(FSNAME, 1002, -NC_E_FSNAME)     \
	X(NOOST, 1003, -NC_E_NOOST)       \
	X(CORRUPT, 1004, -NC_E_CORRUPT)   \
	X(LAYOUT, 1005, -NC_E_LAYOUT)     \
	X(HANDSHAKE, 1006, -NC_E_HANDSHAKE) \
	X(CHECKSUM, 1007, -NC_E_CHECKSUM)   \
	X(PACKED, 1008, -NC_E_PACKED)       \
	X(CHANGED, 1009, -NC_E_CHANGED)     \
	X(HOSTDOWN, 112, -EHOSTDOWN)        \
	X(NODEV, 19, -ENODEV)               \
	X(AUTH, 1010, -NC_E_AUTH)

enum nc_wire_status {
#define NC_WS_ENUM(name, value, err) NC_WS_##name = value,
	NC_WIRE_STATUS(NC_WS_ENUM)
#undef NC_WS_ENUM
};

/* Local error (0/-errno/-NC_E_*) to wire status; unknown errors map to IO. */
int32_t nc_status_from_err(int err);
/* Wire status to local error; unknown statuses map to -EIO. */
int nc_err_from_status(int32_t status);

/* Header: 32 bytes out.  Decode checks magic, major version and lengths. */
void nc_hdr_encode(const struct nc_msg_hdr *h, uint8_t out[NC_HDR_LEN]);
int nc_hdr_decode(const uint8_t in[NC_HDR_LEN], struct nc_msg_hdr *h);

/*
 * The body codec, XDR-style: one function per message shape both encodes and
 * decodes, so the two directions cannot drift apart.  A decoding nc_xdr
 * checks every length against the buffer; the first failure sets x_err to
 * -NC_E_PROTO (or -ENAMETOOLONG for an over-long string) and later calls
 * do nothing.  An encoding nc_xdr writes into a caller buffer of fixed
 * capacity and sets x_err to -EOVERFLOW when it is too small.
 */
enum nc_xdr_op { NC_XDR_ENCODE, NC_XDR_DECODE };

struct nc_xdr {
	enum nc_xdr_op x_op;
	uint8_t *x_buf;
	size_t x_len;           /* encode: capacity; decode: bytes available */
	size_t x_pos;
	int x_err;
	/* Decode: called on every credential decoded without error, so a
	 * server can rewrite identities (root squash) in one place. */
	void (*x_cred_fix)(struct nc_cred *c, const void *arg);
	const void *x_cred_arg;
};

void nc_xdr_init_encode(struct nc_xdr *x, void *buf, size_t cap);
void nc_xdr_init_decode(struct nc_xdr *x, const void *buf, size_t len);
/* Decode: 0 when every byte was consumed without error, else -NC_E_PROTO. */
int nc_xdr_finish(struct nc_xdr *x);

void nc_xdr_u8(struct nc_xdr *x, uint8_t *v);
void nc_xdr_u16(struct nc_xdr *x, uint16_t *v);
void nc_xdr_u32(struct nc_xdr *x, uint32_t *v);
void nc_xdr_u64(struct nc_xdr *x, uint64_t *v);
void nc_xdr_i64(struct nc_xdr *x, int64_t *v);
void nc_xdr_fixed(struct nc_xdr *x, void *p, size_t n);
/* u16 length + bytes; decodes into @s (capacity @max + 1, NUL-terminated). */
void nc_xdr_str(struct nc_xdr *x, char *s, size_t max);
/*
 * u32 length + bytes, by reference: encode reads *p and *n; decode points *p
 * into the decoded buffer (valid as long as that buffer) after checking
 * n <= max.
 */
void nc_xdr_opaque(struct nc_xdr *x, const void **p, uint32_t *n, uint32_t max);

void nc_xdr_fid(struct nc_xdr *x, struct nc_fid *f);
void nc_xdr_attr(struct nc_xdr *x, struct nc_attr *a);
void nc_xdr_layout(struct nc_xdr *x, struct nc_layout *l);
void nc_xdr_cred(struct nc_xdr *x, struct nc_cred *c);
void nc_xdr_ost_info(struct nc_xdr *x, struct nc_ost_info *o);
void nc_xdr_changelog_rec(struct nc_xdr *x, struct nc_changelog_rec *r);
void nc_xdr_statfs(struct nc_xdr *x, struct nc_statfs *s);

/* ---- Message shapes.  Each comment lists the opcodes that use it. ---- */

/* CONNECT request. */
struct nc_connect_req {
	uint16_t cr_major;
	uint16_t cr_minor;
	uint32_t cr_role;       /* enum nc_peer_role */
	uint64_t cr_features;
	char cr_fsname[NC_FSNAME_MAX + 1];
	/* With NC_FEAT_AUTH in cr_features: the client's nonce. */
	uint8_t cr_nonce[32];
	/* With NC_FEAT_REPLAY: the client's uuid, the same on every connection
	 * of one client to one server, under which its replies are kept. */
	uint8_t cr_client[16];
};
enum nc_peer_role { NC_ROLE_CLIENT = 1, NC_ROLE_OSS = 2, NC_ROLE_MDS = 3, NC_ROLE_TOOL = 4 };

/* CONNECT reply. */
struct nc_connect_rep {
	uint16_t cp_major;
	uint16_t cp_minor;
	uint32_t cp_role;       /* the server's role */
	uint64_t cp_features;   /* the intersection both sides use */
	uint8_t cp_uuid[16];    /* the server's filesystem or target uuid */
	/* With NC_FEAT_AUTH in cp_features: the server's nonce, new for
	 * every connection. */
	uint8_t cp_nonce[32];
};

/* AUTH request (the client's proof) and reply (the server's proof):
 * HMAC-SHA256 of the nonces with the cluster key (common/auth.h). */
struct nc_auth_msg {
	uint8_t am_mac[32];
};

/* OST_REGISTER request (an OSS announcing one of its OSTs). */
struct nc_ost_register_req {
	struct nc_ost_info rr_ost;
};

/* OST_LIST reply. */
struct nc_ost_list_rep {
	uint32_t ol_count;
	struct nc_ost_info ol_osts[NC_MAX_STRIPES * 4];
};
#define NC_MAX_OSTS (NC_MAX_STRIPES * 4)

/* MDS_STATFS and OST_STATFS replies. */
struct nc_statfs_rep {
	struct nc_statfs sr_stat;
};

/* LOOKUP, UNLINK (md_flags NC_UNLINK_DIR for rmdir): a name in a directory. */
struct nc_name_req {
	struct nc_cred nr_cred;
	struct nc_fid nr_parent;
	char nr_name[NC_NAME_MAX + 1];
	uint32_t nr_flags;
};
#define NC_UNLINK_DIR 0x1u
/* LOOKUP with an open intent: a regular file found is also opened for
 * reading (permission checked) and the reply carries its layout, so that
 * opening a small file by name is one request. */
#define NC_LOOKUP_OPEN 0x2u

/* GETATTR, READLINK, OPEN (fr_flags: O_* access mode bits), GETLAYOUT,
 * XATTR_LIST: one inode. */
struct nc_fid_req {
	struct nc_cred fr_cred;
	struct nc_fid fr_fid;
	uint32_t fr_flags;
};
/* Open flags on the wire (translated from O_*; never host values). */
#define NC_OPEN_READ 0x1u
#define NC_OPEN_WRITE 0x2u
#define NC_OPEN_TRUNC 0x4u

/* CREATE: regular files, directories, symlinks and special files. */
struct nc_create_req {
	struct nc_cred cq_cred;
	struct nc_fid cq_parent;
	char cq_name[NC_NAME_MAX + 1];
	uint32_t cq_mode;       /* S_IFMT type + permission bits (umask applied) */
	uint32_t cq_rdev;
	uint32_t cq_flags;      /* NC_CREATE_* */
	char cq_target[NC_SYMLINK_MAX + 1]; /* symlinks only */
	/* NC_CREATE_FID: the FID, from a range FID_GRANT gave this client;
	 * a retry that finds the name already naming it succeeds. */
	struct nc_fid cq_fid;
	/* NC_CREATE_PACKED: a regular file whose bytes are already in a pack:
	 * its size, mtime and extent (cq_layout's l_pack_*). */
	uint64_t cq_size;
	struct nc_timespec cq_mtime;
	struct nc_layout cq_layout;
	/* NC_CREATE_INLINE (with NC_CREATE_PACKED): the bytes themselves,
	 * cq_size of them, kept inline; the extent fields are 0.  By
	 * reference into the message when decoded. */
	const void *cq_inline;
	uint32_t cq_inline_len;
};
#define NC_CREATE_EXCL 0x1u
#define NC_CREATE_FID 0x2u
#define NC_CREATE_PACKED 0x4u
#define NC_CREATE_INLINE 0x8u
/* Every flag CREATE knows; the MDS refuses others (-EINVAL) rather than
 * ignore what a peer asked for. */
#define NC_CREATE_FLAGS (NC_CREATE_EXCL | NC_CREATE_FID | NC_CREATE_PACKED | NC_CREATE_INLINE)

/* SETATTR. */
struct nc_setattr_req {
	struct nc_cred sa_cred;
	struct nc_fid sa_fid;
	uint32_t sa_valid;      /* NC_SA_* */
	uint32_t sa_mode;
	uint32_t sa_uid;
	uint32_t sa_gid;
	uint64_t sa_size;
	struct nc_timespec sa_atime;
	struct nc_timespec sa_mtime;
};

/* RENAME (rn_src is unused) and LINK (rn_src is the inode; rn_oldparent and
 * rn_oldname are unused). */
struct nc_rename_req {
	struct nc_cred rn_cred;
	struct nc_fid rn_src;
	struct nc_fid rn_oldparent;
	char rn_oldname[NC_NAME_MAX + 1];
	struct nc_fid rn_newparent;
	char rn_newname[NC_NAME_MAX + 1];
	uint32_t rn_flags;      /* NC_RENAME_* */
};
#define NC_RENAME_NOREPLACE 0x1u
#define NC_RENAME_EXCHANGE 0x2u

/* READDIR request: entries after rd_cookie (0 = from the start). */
struct nc_readdir_req {
	struct nc_cred rd_cred;
	struct nc_fid rd_fid;
	uint64_t rd_cookie;
	uint32_t rd_max;        /* at most NC_READDIR_MAX */
};
#define NC_READDIR_MAX 512

struct nc_dirent {
	uint64_t de_cookie;     /* pass back to continue after this entry */
	struct nc_fid de_fid;
	uint32_t de_mode;       /* S_IFMT bits of the child */
	char de_name[NC_NAME_MAX + 1];
};

/* READDIR reply.  @note de_ents is allocated by the decoder: free it. */
struct nc_readdir_rep {
	uint32_t dr_count;
	uint32_t dr_eof;
	struct nc_dirent *dr_ents;
};

/* Replies carrying one inode's attributes, optionally with its layout
 * (GETATTR, LOOKUP, SETATTR, LINK, SIZE_UPDATE: ar_has_layout = 0;
 * CREATE, OPEN: ar_has_layout = 1 for regular files). */
struct nc_attr_rep {
	struct nc_attr ar_attr;
	uint32_t ar_has_layout;
	struct nc_layout ar_layout;
	/* With an inline layout: whether the bytes came along (replies that
	 * open the file carry them; a LOOKUP_MANY reply leaves them out past
	 * NC_LOOKUP_MANY_INLINE_BUDGET), and the bytes, by reference into the
	 * message when decoded. */
	uint32_t ar_inline_sent;
	const void *ar_inline;
	uint32_t ar_inline_len;
};

/* FID_GRANT: a range of FIDs the client assigns to files it creates. */
struct nc_fid_grant {
	struct nc_cred fg_cred;
	uint64_t fg_seq;        /* reply */
	uint64_t fg_first;      /* reply */
	uint32_t fg_count;      /* request: wanted; reply: granted */
};
#define NC_FID_GRANT_MAX 65536u

/* PACK_ALLOC: a new pack laid out as the directory's files would be
 * (pa_dir; the root's default when none), leaving out the OSTs of
 * pa_avoid where others are up (the client found them not answering: a
 * pack that cannot be written costs its writer a request timeout).  The
 * avoid list is on the wire only when it is not empty (1.6).
 * Reply: pa_layout, whose l_pack_id names the pack. */
#define NC_PACK_AVOID_MAX 64u
struct nc_pack_alloc {
	struct nc_cred pa_cred;
	struct nc_fid pa_dir;
	struct nc_layout pa_layout;     /* reply */
	uint32_t pa_navoid;             /* request */
	uint32_t pa_avoid[NC_PACK_AVOID_MAX];
};

/* PACK_COMMIT: many creates of packed files in one durable batch (each a
 * CREATE with NC_CREATE_FID | NC_CREATE_PACKED), and pc_seal: the pack
 * gets no more files.  The reply has one status and attr per create.  The
 * records travel by reference into the request body. */
#define NC_PACK_COMMIT_MAX 256u
struct nc_pack_commit {
	uint64_t pc_pack;
	uint32_t pc_seal;
	uint32_t pc_count;
	struct nc_create_req *pc_creates;       /* encode: pc_count of them */
};
struct nc_pack_commit_rep {
	uint32_t pr_count;
	int32_t pr_status[NC_PACK_COMMIT_MAX];  /* wire status */
	struct nc_attr pr_attr[NC_PACK_COMMIT_MAX];
};

/* PACK_SWITCH: replaces the bytes of file ps_fid: from ps_old (its layout
 * as the client read it: the same extent, or the same objects by l_gen)
 * to ps_new (a new extent of a pack, or objects already written as
 * PACK_SWITCH with NC_SWITCH_PROPOSE laid them out).  -NC_E_CHANGED when
 * the file no longer matches ps_old.  ps_size and ps_mtime become the
 * file's (a rewrite through a pack may change its size). */
struct nc_pack_switch {
	struct nc_cred ps_cred;
	struct nc_fid ps_fid;
	uint32_t ps_flags;      /* NC_SWITCH_* */
	uint64_t ps_size;
	struct nc_timespec ps_mtime;
	struct nc_layout ps_old;
	struct nc_layout ps_new;        /* reply: the file's layout after */
	/* ps_new inline (request): the bytes, ps_size of them; by reference
	 * into the message when decoded. */
	const void *ps_inline;
	uint32_t ps_inline_len;
};
#define NC_SWITCH_PROPOSE 0x1u  /* only lay out objects for ps_fid (ps_new) */
/* A move of the same bytes (conversion, compaction): also -NC_E_CHANGED
 * when the file's size or mtime is no longer ps_size / ps_mtime, i.e. a
 * writer changed the bytes in place since the mover read them; the file's
 * owner may move it without write permission. */
#define NC_SWITCH_MOVE 0x2u

/*
 * MIGRATE: re-lays out a regular file online, in three steps.
 *  NC_MIGRATE_ALLOC: the MDS lays out new objects for mg_fid (named by a
 *    FID of their own, NC_LAYOUT_OBJFID) from mg_tmpl (zero fields: the
 *    file's own geometry, or with NC_MIGRATE_GEOMETRY the filesystem
 *    default's) on OSTs not in mg_exclude, and keeps them as the file's
 *    pending migration.  The reply (nc_attr_rep) carries the new layout
 *    and the attributes whose data version the swap compares.
 *  (none): the swap: the file takes its pending layout, in one
 *    transaction, only when its data version (layout generation mg_gen,
 *    size mg_size, mtime and ctime) is still the one ALLOC returned; else
 *    -EBUSY and the pending layout stays for another try.  The old
 *    objects go to the destroy queue, to be destroyed mg_grace seconds
 *    later (readers that opened the file before read them meanwhile; at
 *    most NC_MIGRATE_GRACE_MAX).  Reply: the attributes and layout.
 *  NC_MIGRATE_ABORT: the pending objects go to the destroy queue.
 * mg_layout names the pending migration (its l_obj).  The caller needs
 * write permission on the file.
 */
#define NC_MIGRATE_EXCLUDE_MAX 64u
struct nc_migrate_req {
	struct nc_cred mg_cred;
	struct nc_fid mg_fid;
	uint32_t mg_flags;              /* NC_MIGRATE_* */
	uint32_t mg_gen;
	uint64_t mg_size;
	struct nc_timespec mg_mtime;
	struct nc_timespec mg_ctime;
	struct nc_layout mg_tmpl;       /* ALLOC: template (NC_LAYOUT_TEMPLATE) */
	uint32_t mg_nexclude;
	uint32_t mg_exclude[NC_MIGRATE_EXCLUDE_MAX];
	struct nc_layout mg_layout;     /* swap, ABORT: the pending layout */
	uint32_t mg_grace;              /* swap: seconds the old objects stay */
};
#define NC_MIGRATE_GRACE_MAX 86400u
#define NC_MIGRATE_ALLOC 0x1u
#define NC_MIGRATE_ABORT 0x2u
#define NC_MIGRATE_GEOMETRY 0x4u        /* ALLOC: the template fixes the geometry */

/* PACK_LIST: packs with an id above pl_after. */
struct nc_pack_rec {
	uint64_t pk_id;
	uint64_t pk_size;
	uint64_t pk_live;
	uint32_t pk_files;
	uint32_t pk_sealed;
	int64_t pk_mtime;       /* seconds: the last commit into it */
};
#define NC_PACK_LIST_MAX 128u
struct nc_pack_list {
	uint64_t pl_after;
	uint32_t pl_count;      /* reply */
	struct nc_pack_rec pl_packs[NC_PACK_LIST_MAX];
};

/*
 * CHANGELOG_READ: records with a sequence number above cl_seq, at most
 * cl_max of them (the reply says how many, and the highest number given so
 * far).  CHANGELOG_CLEAR: removes the records up to cl_seq.  Root only.
 */
#define NC_CHANGELOG_MAX 128u
struct nc_changelog_req {
	struct nc_cred cl_cred;
	uint64_t cl_seq;
	uint32_t cl_max;
};
struct nc_changelog_rep {
	uint64_t cp_last;       /* highest sequence number given so far */
	uint32_t cp_count;
	struct nc_changelog_rec cp_recs[NC_CHANGELOG_MAX];
};

/* PACK_FILES: the files that use pack pf_pack, after pf_after. */
#define NC_PACK_FILES_MAX 1024u
struct nc_pack_files {
	uint64_t pf_pack;
	struct nc_fid pf_after;
	uint32_t pf_count;      /* reply */
	struct nc_fid pf_fids[NC_PACK_FILES_MAX];
};

/* LOOKUP_MANY: LOOKUP with the open intent (NC_LOOKUP_OPEN) for many names
 * at once; one status, attr and layout each in the reply.  The entries
 * travel by reference (decoding: set lm_ents to room for the maximum). */
#define NC_LOOKUP_MANY_MAX 128u
/* Inline bytes one LOOKUP_MANY reply carries at most (the body's limit
 * is NC_MAX_BODY); the files past it are opened one by one. */
#define NC_LOOKUP_MANY_INLINE_BUDGET (128u * 1024)
struct nc_lookup_ent {
	struct nc_fid le_parent;
	char le_name[NC_NAME_MAX + 1];
	int32_t le_status;              /* reply: wire status */
	struct nc_attr_rep le_rep;      /* reply */
};
struct nc_lookup_many {
	struct nc_cred lm_cred;
	uint32_t lm_count;
	struct nc_lookup_ent *lm_ents;
};

/* GETLAYOUT reply, SETLAYOUT request (sl_fid) and reply. */
struct nc_layout_msg {
	struct nc_cred sl_cred;
	struct nc_fid sl_fid;
	struct nc_layout sl_layout;
};

/* SIZE_UPDATE: a client reports written bytes; size only grows. */
struct nc_size_req {
	struct nc_cred su_cred;
	struct nc_fid su_fid;
	uint64_t su_size;
	uint32_t su_flags;      /* NC_SIZE_MTIME: also set mtime/ctime to now */
};
#define NC_SIZE_MTIME 0x1u

/* XATTR_GET, XATTR_SET, XATTR_DEL. */
struct nc_xattr_req {
	struct nc_cred xr_cred;
	struct nc_fid xr_fid;
	char xr_name[NC_XATTR_NAME_MAX + 1];
	uint32_t xr_flags;      /* NC_XATTR_CREATE / NC_XATTR_REPLACE */
	const void *xr_value;   /* by reference into the message */
	uint32_t xr_value_len;
};
#define NC_XATTR_CREATE 0x1u
#define NC_XATTR_REPLACE 0x2u

/* READLINK target, XATTR_GET value, XATTR_LIST names (NUL-separated). */
struct nc_bytes_rep {
	const void *br_data;    /* by reference into the message */
	uint32_t br_len;
};

/* OBJ_* and OST_STATFS requests: one object on one OST. */
struct nc_obj_req {
	uint32_t or_ost;
	uint32_t or_flags;
	struct nc_fid or_fid;
	uint64_t or_off;        /* READ, WRITE, PUNCH; TRUNC: the new size */
	uint64_t or_len;        /* READ, PUNCH; WRITE: equals the bulk length */
};

/*
 * OBJ_LOCK / OBJ_UNLOCK: a range lock on rows [or_off, or_off + or_len) of
 * the file or_fid, held at the OSS of the file's lock OST (or_ost; see
 * docs/design.md).  OBJ_LOCK never waits: it answers -EAGAIN while another
 * owner holds an overlapping range, and the client retries.  A lock is a
 * lease of NC_LOCK_LEASE_MS, released by OBJ_UNLOCK, by its connection
 * closing, or by expiry.  or_flags unused (0).
 *
 * OBJ_VERIFY: checks the checksums of [or_off, or_off + or_len) of an
 * object (or_len 0: to its end); the reply is an nc_verify_rep.
 */
#define NC_LOCK_LEASE_MS 30000

/*
 * OBJ_WATCH: at the OSS of a file's lock OST, a record of the row ranges
 * that other connections lock on the file or_fid (or_ost the lock OST),
 * from the moment it starts (oss/rowlock.h).  or_flags says what to do:
 * START (or restart, emptied), FETCH (the reply is an nc_watch_rep; -ENOENT
 * when the watch is gone: rows may have been written unseen) or STOP.  A
 * watch is a lease of NC_LOCK_LEASE_MS, renewed by a FETCH and by each
 * lock the same connection takes on the file; it ends with the connection.
 */
#define NC_WATCH_START 1u
#define NC_WATCH_FETCH 2u
#define NC_WATCH_STOP 3u
#define NC_WATCH_MAX 256

/* OBJ_WATCH FETCH reply: rows [wr_start[i], wr_end[i]) for i < wr_count,
 * in order. */
struct nc_watch_rep {
	uint32_t wr_count;
	uint64_t wr_start[NC_WATCH_MAX];
	uint64_t wr_end[NC_WATCH_MAX];
};

/* OBJ_VERIFY reply: offsets of checksum blocks that failed (at most
 * NC_VERIFY_MAX; vr_more set when there were more). */
struct nc_verify_rep {
	uint32_t vr_count;
	uint32_t vr_more;
	uint64_t vr_block;              /* checksum block size */
	uint64_t vr_bad[256];
};
#define NC_VERIFY_MAX 256

/* SHARD_STATE: sets and clears NC_SHARD_* flags of shard ss_shard of a
 * file's layout (the reply is the new layout, as GETLAYOUT). */
struct nc_shard_req {
	struct nc_cred ss_cred;
	struct nc_fid ss_fid;
	uint32_t ss_shard;
	uint32_t ss_set;
	uint32_t ss_clear;
};

/* OST_REGISTER: o_state may carry this flag: the OST was replaced by an
 * empty one (new uuid), and the MDS accepts the new uuid for the index. */
#define NC_OSTREG_REPLACE 0x100u

/* OST_ADMIN: an administrator (uid 0) changes how the MDS uses OST
 * oa_index.  A deactivated OST still serves the objects it holds but gets
 * no new ones; the state is kept on the MDT.  Empty reply. */
struct nc_ost_admin_req {
	struct nc_cred oa_cred;
	uint32_t oa_index;
	uint32_t oa_op;         /* NC_OSTADM_* */
};
#define NC_OSTADM_ACTIVATE 1u
#define NC_OSTADM_DEACTIVATE 2u

/* POOL (changes, uid 0; empty reply) and POOL_LIST (pr_name "": every
 * pool; the reply is an nc_pool_list_rep) requests. */
struct nc_pool_req {
	struct nc_cred pr_cred;
	uint32_t pr_op;         /* NC_POOLOP_*; POOL_LIST: 0 */
	char pr_name[NC_POOL_NAME_MAX + 1];
	uint32_t pr_count;      /* ADD, REMOVE: OST indexes in pr_osts */
	uint32_t pr_osts[NC_MAX_OSTS];
};
#define NC_POOLOP_CREATE 1u
#define NC_POOLOP_DESTROY 2u
#define NC_POOLOP_ADD 3u
#define NC_POOLOP_REMOVE 4u

/* One pool: its name and member OST indexes in increasing order. */
struct nc_pool_info {
	char pi_name[NC_POOL_NAME_MAX + 1];
	uint32_t pi_count;
	uint32_t pi_osts[NC_MAX_OSTS];
};

struct nc_pool_list_rep {
	uint32_t pl_count;
	struct nc_pool_info pl_pools[NC_POOLS_MAX];
};

/* OBJ_READ (bytes returned in bulk; short when the object ends), OBJ_STAT. */
struct nc_obj_rep {
	uint64_t op_size;       /* OBJ_STAT: object size; READ: bytes read */
	uint64_t op_blocks;     /* OBJ_STAT: 512-byte blocks allocated */
};

void nc_wire_connect_req(struct nc_xdr *x, struct nc_connect_req *m);
void nc_wire_connect_rep(struct nc_xdr *x, struct nc_connect_rep *m);
void nc_wire_auth(struct nc_xdr *x, struct nc_auth_msg *m);
void nc_wire_ost_register_req(struct nc_xdr *x, struct nc_ost_register_req *m);
void nc_wire_ost_list_rep(struct nc_xdr *x, struct nc_ost_list_rep *m);
void nc_wire_statfs_rep(struct nc_xdr *x, struct nc_statfs_rep *m);
void nc_wire_name_req(struct nc_xdr *x, struct nc_name_req *m);
void nc_wire_fid_req(struct nc_xdr *x, struct nc_fid_req *m);
void nc_wire_create_req(struct nc_xdr *x, struct nc_create_req *m);
void nc_wire_fid_grant(struct nc_xdr *x, struct nc_fid_grant *m);
void nc_wire_pack_alloc(struct nc_xdr *x, struct nc_pack_alloc *m);
/* Decoding: set pc_creates to room for NC_PACK_COMMIT_MAX first. */
void nc_wire_pack_commit(struct nc_xdr *x, struct nc_pack_commit *m);
void nc_wire_pack_commit_rep(struct nc_xdr *x, struct nc_pack_commit_rep *m);
void nc_wire_pack_switch(struct nc_xdr *x, struct nc_pack_switch *m);
void nc_wire_migrate_req(struct nc_xdr *x, struct nc_migrate_req *m);
void nc_wire_pack_list(struct nc_xdr *x, struct nc_pack_list *m);
void nc_wire_changelog_req(struct nc_xdr *x, struct nc_changelog_req *m);
void nc_wire_changelog_rep(struct nc_xdr *x, struct nc_changelog_rep *m);
void nc_wire_pack_files(struct nc_xdr *x, struct nc_pack_files *m);
void nc_wire_lookup_many_req(struct nc_xdr *x, struct nc_lookup_many *m);
void nc_wire_lookup_many_rep(struct nc_xdr *x, struct nc_lookup_many *m);
void nc_wire_setattr_req(struct nc_xdr *x, struct nc_setattr_req *m);
void nc_wire_rename_req(struct nc_xdr *x, struct nc_rename_req *m);
void nc_wire_readdir_req(struct nc_xdr *x, struct nc_readdir_req *m);
/* Decoding allocates m->dr_ents; returns with x_err set and nothing
 * allocated on failure.  Free with nc_readdir_rep_fini(). */
void nc_wire_readdir_rep(struct nc_xdr *x, struct nc_readdir_rep *m);
void nc_readdir_rep_fini(struct nc_readdir_rep *m);
void nc_wire_attr_rep(struct nc_xdr *x, struct nc_attr_rep *m);
void nc_wire_layout_msg(struct nc_xdr *x, struct nc_layout_msg *m);
void nc_wire_size_req(struct nc_xdr *x, struct nc_size_req *m);
void nc_wire_xattr_req(struct nc_xdr *x, struct nc_xattr_req *m);
void nc_wire_bytes_rep(struct nc_xdr *x, struct nc_bytes_rep *m);
void nc_wire_obj_req(struct nc_xdr *x, struct nc_obj_req *m);
void nc_wire_obj_rep(struct nc_xdr *x, struct nc_obj_rep *m);
void nc_wire_verify_rep(struct nc_xdr *x, struct nc_verify_rep *m);
void nc_wire_watch_rep(struct nc_xdr *x, struct nc_watch_rep *m);
void nc_wire_shard_req(struct nc_xdr *x, struct nc_shard_req *m);
void nc_wire_ost_admin_req(struct nc_xdr *x, struct nc_ost_admin_req *m);
void nc_wire_pool_req(struct nc_xdr *x, struct nc_pool_req *m);
void nc_wire_pool_info(struct nc_xdr *x, struct nc_pool_info *m);
void nc_wire_pool_list_rep(struct nc_xdr *x, struct nc_pool_list_rep *m);

#endif
