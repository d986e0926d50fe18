/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the wire codec (common/wire.c) and the small helpers of
 * common/: status mapping, opcode table, addresses, FIDs, sizes, error
 * strings and config files.
 *
 * Every message shape is checked four ways: a round trip compared field by
 * field, every truncation and one trailing byte rejected, every too-small
 * encode buffer rejected without a write past its end, and the bytes of a
 * fixed example compared with tests/data/wire_golden.txt, which catches an
 * accidental protocol change.  A seeded fuzz loop then feeds random and
 * mutated buffers to every decoder.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "common/daemon.h"
#include "common/errors.h"
#include "common/types.h"
#include "common/wire.h"
#include "common/xprt.h"

#define GOLDEN_FILE "tests/data/wire_golden.txt"
#define GUARD_LEN 16
#define GUARD_BYTE 0x5a
#define POISON_BYTE 0xa5
#define FUZZ_ROUNDS 20000
#define FUZZ_SEED 0x6e616372652d3031ull /* "nacre-01" */

/* ---- small helpers ---- */

static uint8_t *xmemdup(const void *p, size_t n)
{
	/* Exactly @n bytes (at least one allocated), so ASan sees over-reads. */
	uint8_t *q = malloc(n ? n : 1);

	if (q && n)
		memcpy(q, p, n);
	return q;
}

static void hex_print(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

static uint64_t rng_state = FUZZ_SEED;

/* xorshift64*: the same sequence on every libc, unlike rand(). */
static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* Field comparison that names the first field that differs. */
#define FEQ(a, b, field)                                                     \
	do {                                                                 \
		if ((a)->field != (b)->field) {                              \
			fprintf(stderr, "  field %s differs\n", #field);     \
			return false;                                        \
		}                                                            \
	} while (0)
#define FSTREQ(a, b, field)                                                  \
	do {                                                                 \
		if (strcmp((a)->field, (b)->field)) {                        \
			fprintf(stderr, "  field %s differs: '%s' vs '%s'\n", \
				#field, (a)->field, (b)->field);             \
			return false;                                        \
		}                                                            \
	} while (0)
#define FMEMEQ(a, b, field, n)                                               \
	do {                                                                 \
		if (memcmp((a)->field, (b)->field, (n))) {                   \
			fprintf(stderr, "  field %s differs\n", #field);     \
			return false;                                        \
		}                                                            \
	} while (0)
#define FSUB(a, b, fn, field)                                                \
	do {                                                                 \
		if (!fn(&(a)->field, &(b)->field)) {                         \
			fprintf(stderr, "  in %s\n", #field);                \
			return false;                                        \
		}                                                            \
	} while (0)

static bool fid_eq(const struct nc_fid *a, const struct nc_fid *b)
{
	FEQ(a, b, f_seq);
	FEQ(a, b, f_oid);
	return true;
}

static bool time_eq(const struct nc_timespec *a, const struct nc_timespec *b)
{
	FEQ(a, b, t_sec);
	FEQ(a, b, t_nsec);
	return true;
}

static bool cred_eq(const struct nc_cred *a, const struct nc_cred *b)
{
	FEQ(a, b, c_uid);
	FEQ(a, b, c_gid);
	FEQ(a, b, c_ngroups);
	for (uint32_t i = 0; i < a->c_ngroups && i < NC_MAX_GROUPS; i++)
		FEQ(a, b, c_groups[i]);
	return true;
}

static bool attr_eq(const struct nc_attr *a, const struct nc_attr *b)
{
	FSUB(a, b, fid_eq, a_fid);
	FEQ(a, b, a_mode);
	FEQ(a, b, a_uid);
	FEQ(a, b, a_gid);
	FEQ(a, b, a_nlink);
	FEQ(a, b, a_size);
	FEQ(a, b, a_blocks);
	FEQ(a, b, a_rdev);
	FEQ(a, b, a_flags);
	FSUB(a, b, time_eq, a_atime);
	FSUB(a, b, time_eq, a_mtime);
	FSUB(a, b, time_eq, a_ctime);
	return true;
}

static bool layout_eq(const struct nc_layout *a, const struct nc_layout *b)
{
	FEQ(a, b, l_stripe_size);
	FEQ(a, b, l_stripe_count);
	FEQ(a, b, l_k);
	FEQ(a, b, l_m);
	FEQ(a, b, l_flags);
	FEQ(a, b, l_first_ost);
	FEQ(a, b, l_gen);
	if ((a->l_flags & NC_LAYOUT_TEMPLATE) && (a->l_flags & NC_LAYOUT_POOL))
		FSTREQ(a, b, l_pool);
	if ((a->l_flags & NC_LAYOUT_TEMPLATE) && (a->l_flags & NC_LAYOUT_PACK))
		FEQ(a, b, l_pack_max);
	if ((a->l_flags & NC_LAYOUT_TEMPLATE) && (a->l_flags & NC_LAYOUT_INLINE))
		FEQ(a, b, l_inline_max);
	if (a->l_flags & NC_LAYOUT_TEMPLATE)
		return true; /* a template carries no shards */
	if (a->l_flags & NC_LAYOUT_PACKED) {
		FEQ(a, b, l_pack_id);
		FEQ(a, b, l_pack_off);
		FEQ(a, b, l_pack_len);
	}
	if (a->l_flags & NC_LAYOUT_OBJFID)
		FSUB(a, b, fid_eq, l_obj);
	for (uint32_t i = 0; i < a->l_stripe_count && i < NC_MAX_STRIPES; i++) {
		FEQ(a, b, l_shards[i].ls_ost);
		FEQ(a, b, l_shards[i].ls_flags);
	}
	return true;
}

static bool ost_info_eq(const struct nc_ost_info *a, const struct nc_ost_info *b)
{
	FEQ(a, b, o_index);
	FEQ(a, b, o_state);
	FMEMEQ(a, b, o_uuid, 16);
	FSTREQ(a, b, o_addr);
	return true;
}

static bool statfs_eq(const struct nc_statfs *a, const struct nc_statfs *b)
{
	FEQ(a, b, s_total);
	FEQ(a, b, s_free);
	FEQ(a, b, s_avail);
	FEQ(a, b, s_files);
	FEQ(a, b, s_ffree);
	FEQ(a, b, s_bsize);
	FEQ(a, b, s_namemax);
	return true;
}

static bool dirent_eq(const struct nc_dirent *a, const struct nc_dirent *b)
{
	FEQ(a, b, de_cookie);
	FSUB(a, b, fid_eq, de_fid);
	FEQ(a, b, de_mode);
	FSTREQ(a, b, de_name);
	return true;
}

/* ---- the fixed example messages (also documented in the golden file) ---- */

static const struct nc_cred ex_cred = {
	.c_uid = 1000, .c_gid = 100, .c_ngroups = 2, .c_groups = { 10, 20 },
};
static const struct nc_fid ex_fid = { 0x0000000200000401ull, 0x1122334455667788ull };
static const struct nc_fid ex_parent = { 0x0000000200000400ull, 0x2aull };

static const uint8_t ex_xattr_value[6] = { 0x00, 0x01, 0x02, 'a', 'b', 'c' };
/* An inline file's bytes (1.8): a NUL inside, so they are not a string. */
static const uint8_t ex_inline[12] = {
	'i', 'n', 'l', 'i', 'n', 'e', 0x00, 0xff, 'd', 'a', 't', 'a',
};
static const char ex_link_target[] = "target/of/link";

static struct nc_dirent ex_dirents[3] = {
	{ 1, { 1, 1 }, 0040000, "subdir" },
	{ 2, { 0x0000000200000401ull, 0x1122334455667788ull }, 0100000, "file.bin" },
	{ 0xffffffffffffffffull, { 3, 4 }, 0120000, "l" },
};

static void ex_attr(struct nc_attr *a)
{
	a->a_fid = ex_fid;
	a->a_mode = 0100644;
	a->a_uid = 1000;
	a->a_gid = 100;
	a->a_nlink = 1;
	a->a_size = 10485760;
	a->a_blocks = 20480;
	a->a_rdev = 0;
	a->a_flags = 0;
	a->a_atime = (struct nc_timespec){ 1700000000, 1 };
	a->a_mtime = (struct nc_timespec){ 1700000001, 500000000 };
	a->a_ctime = (struct nc_timespec){ 1700000002, 999999999 };
}

/* EC 4+2 over 6 OSTs, shard 3 stale. */
static void ex_layout(struct nc_layout *l)
{
	l->l_stripe_size = 1u << 20;
	l->l_stripe_count = 6;
	l->l_k = 4;
	l->l_m = 2;
	l->l_flags = 0;
	l->l_first_ost = 0;
	l->l_gen = 7;
	for (uint32_t i = 0; i < 6; i++) {
		l->l_shards[i].ls_ost = i * 2;
		l->l_shards[i].ls_flags = i == 3 ? NC_SHARD_STALE : 0;
	}
}

static void ex_ost(struct nc_ost_info *o, uint32_t idx, uint32_t state,
		   uint8_t uuid0, const char *addr)
{
	o->o_index = idx;
	o->o_state = state;
	for (int i = 0; i < 16; i++)
		o->o_uuid[i] = (uint8_t)(uuid0 + i);
	snprintf(o->o_addr, sizeof(o->o_addr), "%s", addr);
}

/* One message shape: its example, codec, comparison and cleanup. */
struct shape {
	const char *sh_name;
	size_t sh_size;
	void (*sh_fill)(void *m);
	void (*sh_codec)(struct nc_xdr *x, void *m);
	bool (*sh_eq)(const void *a, const void *b);
	/* Decoded messages that own memory (readdir): prepare and release. */
	void (*sh_prep)(void *m);
	void (*sh_fini)(void *m);
	/* Bytes of an optional last field the example has: the message
	 * without them is a message too (0: none). */
	size_t sh_optional_tail;
};

static void fill_connect_req(void *p)
{
	struct nc_connect_req *m = p;

	m->cr_major = 1;
	m->cr_minor = 0;
	m->cr_role = NC_ROLE_CLIENT;
	m->cr_features = NC_FEAT_BULK_SPLIT;
	strcpy(m->cr_fsname, "testfs");
}

static bool eq_connect_req(const void *pa, const void *pb)
{
	const struct nc_connect_req *a = pa, *b = pb;

	FEQ(a, b, cr_major);
	FEQ(a, b, cr_minor);
	FEQ(a, b, cr_role);
	FEQ(a, b, cr_features);
	FSTREQ(a, b, cr_fsname);
	return true;
}

static void fill_connect_rep(void *p)
{
	struct nc_connect_rep *m = p;

	m->cp_major = 1;
	m->cp_minor = 0;
	m->cp_role = NC_ROLE_MDS;
	m->cp_features = NC_FEAT_BULK_SPLIT;
	for (int i = 0; i < 16; i++)
		m->cp_uuid[i] = (uint8_t)i;
}

static bool eq_connect_rep(const void *pa, const void *pb)
{
	const struct nc_connect_rep *a = pa, *b = pb;

	FEQ(a, b, cp_major);
	FEQ(a, b, cp_minor);
	FEQ(a, b, cp_role);
	FEQ(a, b, cp_features);
	FMEMEQ(a, b, cp_uuid, 16);
	return true;
}

/* Since 1.3: with NC_FEAT_AUTH the nonces follow. */
static void fill_connect_req_auth(void *p)
{
	struct nc_connect_req *m = p;

	fill_connect_req(m);
	m->cr_features = NC_FEAT_BULK_SPLIT | NC_FEAT_AUTH;
	for (int i = 0; i < 32; i++)
		m->cr_nonce[i] = (uint8_t)(0x80 + i);
}

static bool eq_connect_req_auth(const void *pa, const void *pb)
{
	const struct nc_connect_req *a = pa, *b = pb;

	FMEMEQ(a, b, cr_nonce, 32);
	return eq_connect_req(pa, pb);
}

/* Since 1.5: with NC_FEAT_REPLAY the client's uuid follows the nonce. */
static void fill_connect_req_replay(void *p)
{
	struct nc_connect_req *m = p;

	fill_connect_req_auth(m);
	m->cr_features |= NC_FEAT_REPLAY;
	for (int i = 0; i < 16; i++)
		m->cr_client[i] = (uint8_t)(0xe0 + i);
}

static bool eq_connect_req_replay(const void *pa, const void *pb)
{
	const struct nc_connect_req *a = pa, *b = pb;

	FMEMEQ(a, b, cr_client, 16);
	return eq_connect_req_auth(pa, pb);
}

static void fill_connect_rep_auth(void *p)
{
	struct nc_connect_rep *m = p;

	fill_connect_rep(m);
	m->cp_features = NC_FEAT_BULK_SPLIT | NC_FEAT_AUTH;
	for (int i = 0; i < 32; i++)
		m->cp_nonce[i] = (uint8_t)(0xa0 + i);
}

static bool eq_connect_rep_auth(const void *pa, const void *pb)
{
	const struct nc_connect_rep *a = pa, *b = pb;

	FMEMEQ(a, b, cp_nonce, 32);
	return eq_connect_rep(pa, pb);
}

static void fill_auth(void *p)
{
	struct nc_auth_msg *m = p;

	for (int i = 0; i < 32; i++)
		m->am_mac[i] = (uint8_t)(0xc0 + i);
}

static bool eq_auth(const void *pa, const void *pb)
{
	const struct nc_auth_msg *a = pa, *b = pb;

	FMEMEQ(a, b, am_mac, 32);
	return true;
}

static void fill_ost_register_req(void *p)
{
	struct nc_ost_register_req *m = p;

	ex_ost(&m->rr_ost, 3, NC_OST_UP, 0x10, "tcp://127.0.0.1:7301");
}

static bool eq_ost_register_req(const void *pa, const void *pb)
{
	const struct nc_ost_register_req *a = pa, *b = pb;

	FSUB(a, b, ost_info_eq, rr_ost);
	return true;
}

static void fill_ost_list_rep(void *p)
{
	struct nc_ost_list_rep *m = p;

	m->ol_count = 2;
	ex_ost(&m->ol_osts[0], 0, NC_OST_UP, 0xa0, "tcp://10.0.0.1:7300");
	ex_ost(&m->ol_osts[1], 1, NC_OST_DOWN, 0xb0, "rdma://10.0.0.2:7300");
}

static bool eq_ost_list_rep(const void *pa, const void *pb)
{
	const struct nc_ost_list_rep *a = pa, *b = pb;

	FEQ(a, b, ol_count);
	for (uint32_t i = 0; i < a->ol_count && i < NC_MAX_OSTS; i++)
		FSUB(a, b, ost_info_eq, ol_osts[i]);
	return true;
}

static void fill_statfs_rep(void *p)
{
	struct nc_statfs_rep *m = p;

	m->sr_stat.s_total = 1ull << 40;
	m->sr_stat.s_free = 1ull << 39;
	m->sr_stat.s_avail = (1ull << 39) - 4096;
	m->sr_stat.s_files = 1000000;
	m->sr_stat.s_ffree = 999000;
	m->sr_stat.s_bsize = 4096;
	m->sr_stat.s_namemax = NC_NAME_MAX;
}

static bool eq_statfs_rep(const void *pa, const void *pb)
{
	const struct nc_statfs_rep *a = pa, *b = pb;

	FSUB(a, b, statfs_eq, sr_stat);
	return true;
}

static void fill_name_req(void *p)
{
	struct nc_name_req *m = p;

	m->nr_cred = ex_cred;
	m->nr_parent = ex_parent;
	strcpy(m->nr_name, "hello.txt");
	m->nr_flags = NC_UNLINK_DIR;
}

static bool eq_name_req(const void *pa, const void *pb)
{
	const struct nc_name_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, nr_cred);
	FSUB(a, b, fid_eq, nr_parent);
	FSTREQ(a, b, nr_name);
	FEQ(a, b, nr_flags);
	return true;
}

static void fill_fid_req(void *p)
{
	struct nc_fid_req *m = p;

	m->fr_cred = ex_cred;
	m->fr_fid = ex_fid;
	m->fr_flags = NC_OPEN_READ | NC_OPEN_WRITE;
}

static bool eq_fid_req(const void *pa, const void *pb)
{
	const struct nc_fid_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, fr_cred);
	FSUB(a, b, fid_eq, fr_fid);
	FEQ(a, b, fr_flags);
	return true;
}

static void fill_create_req(void *p)
{
	struct nc_create_req *m = p;

	m->cq_cred = ex_cred;
	m->cq_parent = ex_parent;
	strcpy(m->cq_name, "link");
	m->cq_mode = 0120777;
	m->cq_rdev = 0;
	m->cq_flags = NC_CREATE_EXCL;
	strcpy(m->cq_target, "../target/file");
}

static bool eq_create_req(const void *pa, const void *pb)
{
	const struct nc_create_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, cq_cred);
	FSUB(a, b, fid_eq, cq_parent);
	FSTREQ(a, b, cq_name);
	FEQ(a, b, cq_mode);
	FEQ(a, b, cq_rdev);
	FEQ(a, b, cq_flags);
	FSTREQ(a, b, cq_target);
	return true;
}

/* (1.8) A PACK_COMMIT create of an inline file: its FID, size, mtime, the
 * extent fields 0, then its bytes. */
static void fill_create_req_inline(void *p)
{
	struct nc_create_req *m = p;

	m->cq_cred = ex_cred;
	m->cq_parent = ex_parent;
	strcpy(m->cq_name, "small");
	m->cq_mode = 0100644;
	m->cq_flags = NC_CREATE_FID | NC_CREATE_PACKED | NC_CREATE_INLINE;
	m->cq_fid = ex_fid;
	m->cq_size = sizeof(ex_inline);
	m->cq_mtime = (struct nc_timespec){ 1700000001, 500000000 };
	m->cq_inline = ex_inline;
	m->cq_inline_len = sizeof(ex_inline);
}

static bool eq_create_req_inline(const void *pa, const void *pb)
{
	const struct nc_create_req *a = pa, *b = pb;

	if (!eq_create_req(pa, pb))
		return false;
	FSUB(a, b, fid_eq, cq_fid);
	FEQ(a, b, cq_size);
	FSUB(a, b, time_eq, cq_mtime);
	FEQ(a, b, cq_layout.l_pack_id);
	FEQ(a, b, cq_layout.l_pack_off);
	FEQ(a, b, cq_layout.l_pack_len);
	FEQ(a, b, cq_inline_len);
	if (a->cq_inline_len && (!a->cq_inline || !b->cq_inline))
		return false;
	if (a->cq_inline_len)
		FMEMEQ(a, b, cq_inline, a->cq_inline_len);
	return true;
}

/* (1.8) A packed file rewritten to 12 bytes kept inline: the old extent
 * (pack 9, 5000 bytes at 64 KiB), the new inline layout, the bytes. */
static void fill_pack_switch_inline(void *p)
{
	struct nc_pack_switch *m = p;

	m->ps_cred = ex_cred;
	m->ps_fid = ex_fid;
	m->ps_flags = 0;
	m->ps_size = sizeof(ex_inline);
	m->ps_mtime = (struct nc_timespec){ 1700000001, 500000000 };
	m->ps_old.l_flags = NC_LAYOUT_PACKED;
	m->ps_old.l_pack_id = 9;
	m->ps_old.l_pack_off = 65536;
	m->ps_old.l_pack_len = 5000;
	m->ps_new.l_flags = NC_LAYOUT_INLINE;
	m->ps_new.l_gen = 2;
	m->ps_inline = ex_inline;
	m->ps_inline_len = sizeof(ex_inline);
}

static bool eq_pack_switch_inline(const void *pa, const void *pb)
{
	const struct nc_pack_switch *a = pa, *b = pb;

	FSUB(a, b, cred_eq, ps_cred);
	FSUB(a, b, fid_eq, ps_fid);
	FEQ(a, b, ps_flags);
	FEQ(a, b, ps_size);
	FSUB(a, b, time_eq, ps_mtime);
	FSUB(a, b, layout_eq, ps_old);
	FSUB(a, b, layout_eq, ps_new);
	FEQ(a, b, ps_inline_len);
	if (a->ps_inline_len && (!a->ps_inline || !b->ps_inline))
		return false;
	if (a->ps_inline_len)
		FMEMEQ(a, b, ps_inline, a->ps_inline_len);
	return true;
}

static void fill_setattr_req(void *p)
{
	struct nc_setattr_req *m = p;

	m->sa_cred = ex_cred;
	m->sa_fid = ex_fid;
	m->sa_valid = NC_SA_MODE | NC_SA_SIZE | NC_SA_ATIME | NC_SA_MTIME;
	m->sa_mode = 0100644;
	m->sa_uid = 1000;
	m->sa_gid = 100;
	m->sa_size = 0x123456789ull;
	m->sa_atime = (struct nc_timespec){ 1700000000, 123456789 };
	/* A negative second count checks the signed encoding. */
	m->sa_mtime = (struct nc_timespec){ -1, 999999999 };
}

static bool eq_setattr_req(const void *pa, const void *pb)
{
	const struct nc_setattr_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, sa_cred);
	FSUB(a, b, fid_eq, sa_fid);
	FEQ(a, b, sa_valid);
	FEQ(a, b, sa_mode);
	FEQ(a, b, sa_uid);
	FEQ(a, b, sa_gid);
	FEQ(a, b, sa_size);
	FSUB(a, b, time_eq, sa_atime);
	FSUB(a, b, time_eq, sa_mtime);
	return true;
}

static void fill_rename_req(void *p)
{
	struct nc_rename_req *m = p;

	m->rn_cred = ex_cred;
	m->rn_src = (struct nc_fid){ 0, 0 };
	m->rn_oldparent = ex_parent;
	strcpy(m->rn_oldname, "old");
	m->rn_newparent = (struct nc_fid){ 0x0000000200000402ull, 0x99ull };
	strcpy(m->rn_newname, "new name");
	m->rn_flags = NC_RENAME_NOREPLACE;
}

static bool eq_rename_req(const void *pa, const void *pb)
{
	const struct nc_rename_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, rn_cred);
	FSUB(a, b, fid_eq, rn_src);
	FSUB(a, b, fid_eq, rn_oldparent);
	FSTREQ(a, b, rn_oldname);
	FSUB(a, b, fid_eq, rn_newparent);
	FSTREQ(a, b, rn_newname);
	FEQ(a, b, rn_flags);
	return true;
}

static void fill_readdir_req(void *p)
{
	struct nc_readdir_req *m = p;

	m->rd_cred = ex_cred;
	m->rd_fid = ex_parent;
	m->rd_cookie = 0x7fffffffffff0001ull;
	m->rd_max = 128;
}

static bool eq_readdir_req(const void *pa, const void *pb)
{
	const struct nc_readdir_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, rd_cred);
	FSUB(a, b, fid_eq, rd_fid);
	FEQ(a, b, rd_cookie);
	FEQ(a, b, rd_max);
	return true;
}

static void fill_readdir_rep(void *p)
{
	struct nc_readdir_rep *m = p;

	m->dr_count = 3;
	m->dr_eof = 1;
	m->dr_ents = ex_dirents;
}

static bool eq_readdir_rep(const void *pa, const void *pb)
{
	const struct nc_readdir_rep *a = pa, *b = pb;

	FEQ(a, b, dr_count);
	FEQ(a, b, dr_eof);
	if (a->dr_count && (!a->dr_ents || !b->dr_ents))
		return false;
	for (uint32_t i = 0; i < a->dr_count; i++)
		FSUB(a, b, dirent_eq, dr_ents[i]);
	return true;
}

static void prep_readdir_rep(void *p)
{
	((struct nc_readdir_rep *)p)->dr_ents = NULL;
}

static void fini_readdir_rep(void *p)
{
	nc_readdir_rep_fini(p);
}

static void fill_attr_rep(void *p)
{
	struct nc_attr_rep *m = p;

	ex_attr(&m->ar_attr);
	m->ar_has_layout = 1;
	ex_layout(&m->ar_layout);
}

static void fill_attr_rep_nolayout(void *p)
{
	struct nc_attr_rep *m = p;

	ex_attr(&m->ar_attr);
	m->ar_has_layout = 0;
}

/* An inline file (1.8): no objects, generation 3, its 12 bytes along. */
static void fill_attr_rep_inline(void *p)
{
	struct nc_attr_rep *m = p;

	ex_attr(&m->ar_attr);
	m->ar_attr.a_size = sizeof(ex_inline);
	m->ar_attr.a_blocks = 1;
	m->ar_has_layout = 1;
	m->ar_layout.l_flags = NC_LAYOUT_INLINE;
	m->ar_layout.l_gen = 3;
	m->ar_inline_sent = 1;
	m->ar_inline = ex_inline;
	m->ar_inline_len = sizeof(ex_inline);
}

/* The same file in a LOOKUP_MANY reply past its budget: no bytes. */
static void fill_attr_rep_inline_unsent(void *p)
{
	struct nc_attr_rep *m = p;

	fill_attr_rep_inline(m);
	m->ar_inline_sent = 0;
	m->ar_inline = NULL;
	m->ar_inline_len = 0;
}

static bool eq_attr_rep(const void *pa, const void *pb)
{
	const struct nc_attr_rep *a = pa, *b = pb;

	FSUB(a, b, attr_eq, ar_attr);
	FEQ(a, b, ar_has_layout);
	if (a->ar_has_layout)
		FSUB(a, b, layout_eq, ar_layout);
	if (!a->ar_has_layout || !(a->ar_layout.l_flags & NC_LAYOUT_INLINE) ||
	    (a->ar_layout.l_flags & NC_LAYOUT_TEMPLATE))
		return true;
	FEQ(a, b, ar_inline_sent);
	if (!a->ar_inline_sent)
		return true;
	FEQ(a, b, ar_inline_len);
	if (a->ar_inline_len && (!a->ar_inline || !b->ar_inline))
		return false;
	if (a->ar_inline_len)
		FMEMEQ(a, b, ar_inline, a->ar_inline_len);
	return true;
}

static void fill_layout_msg(void *p)
{
	struct nc_layout_msg *m = p;

	m->sl_cred = ex_cred;
	m->sl_fid = ex_fid;
	ex_layout(&m->sl_layout);
}

/* A directory default: 4 MiB stripes over 8 OSTs, the MDS picks the first. */
static void fill_layout_msg_template(void *p)
{
	struct nc_layout_msg *m = p;

	m->sl_cred = ex_cred;
	m->sl_fid = ex_parent;
	m->sl_layout.l_stripe_size = 4u << 20;
	m->sl_layout.l_stripe_count = 8;
	m->sl_layout.l_k = 0;
	m->sl_layout.l_m = 0;
	m->sl_layout.l_flags = NC_LAYOUT_TEMPLATE;
	m->sl_layout.l_first_ost = NC_OST_ANY;
	m->sl_layout.l_gen = 0;
}

/* A directory default with packing and an OST pool: 8 OSTs of "fast". */
static void fill_layout_msg_pool(void *p)
{
	struct nc_layout_msg *m = p;

	fill_layout_msg_template(p);
	m->sl_layout.l_flags = NC_LAYOUT_TEMPLATE | NC_LAYOUT_PACK | NC_LAYOUT_POOL;
	m->sl_layout.l_pack_max = 65536;
	strcpy(m->sl_layout.l_pool, "fast");
}

/* (1.8) The pool template keeping files of up to 4 KiB inline: l_inline_max
 * follows the pool name. */
static void fill_layout_msg_inline(void *p)
{
	struct nc_layout_msg *m = p;

	fill_layout_msg_pool(p);
	m->sl_layout.l_flags |= NC_LAYOUT_INLINE;
	m->sl_layout.l_inline_max = NC_INLINE_MAX;
}

static bool eq_layout_msg(const void *pa, const void *pb)
{
	const struct nc_layout_msg *a = pa, *b = pb;

	FSUB(a, b, cred_eq, sl_cred);
	FSUB(a, b, fid_eq, sl_fid);
	FSUB(a, b, layout_eq, sl_layout);
	return true;
}

static void fill_size_req(void *p)
{
	struct nc_size_req *m = p;

	m->su_cred = ex_cred;
	m->su_fid = ex_fid;
	m->su_size = 0xfedcba987654ull;
	m->su_flags = NC_SIZE_MTIME;
}

static bool eq_size_req(const void *pa, const void *pb)
{
	const struct nc_size_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, su_cred);
	FSUB(a, b, fid_eq, su_fid);
	FEQ(a, b, su_size);
	FEQ(a, b, su_flags);
	return true;
}

static void fill_xattr_req(void *p)
{
	struct nc_xattr_req *m = p;

	m->xr_cred = ex_cred;
	m->xr_fid = ex_fid;
	strcpy(m->xr_name, "user.checksum");
	m->xr_flags = NC_XATTR_CREATE;
	m->xr_value = ex_xattr_value;
	m->xr_value_len = sizeof(ex_xattr_value);
}

static bool eq_xattr_req(const void *pa, const void *pb)
{
	const struct nc_xattr_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, xr_cred);
	FSUB(a, b, fid_eq, xr_fid);
	FSTREQ(a, b, xr_name);
	FEQ(a, b, xr_flags);
	FEQ(a, b, xr_value_len);
	if (a->xr_value_len)
		FMEMEQ(a, b, xr_value, a->xr_value_len);
	return true;
}

static void fill_bytes_rep(void *p)
{
	struct nc_bytes_rep *m = p;

	m->br_data = ex_link_target;
	m->br_len = (uint32_t)strlen(ex_link_target);
}

static bool eq_bytes_rep(const void *pa, const void *pb)
{
	const struct nc_bytes_rep *a = pa, *b = pb;

	FEQ(a, b, br_len);
	if (a->br_len)
		FMEMEQ(a, b, br_data, a->br_len);
	return true;
}

static void fill_obj_req(void *p)
{
	struct nc_obj_req *m = p;

	m->or_ost = 5;
	m->or_flags = 0;
	m->or_fid = ex_fid;
	m->or_off = 0x100000;
	m->or_len = 0x40000;
}

static bool eq_obj_req(const void *pa, const void *pb)
{
	const struct nc_obj_req *a = pa, *b = pb;

	FEQ(a, b, or_ost);
	FEQ(a, b, or_flags);
	FSUB(a, b, fid_eq, or_fid);
	FEQ(a, b, or_off);
	FEQ(a, b, or_len);
	return true;
}

static void fill_obj_rep(void *p)
{
	struct nc_obj_rep *m = p;

	m->op_size = 0x40000;
	m->op_blocks = 512;
}

static bool eq_obj_rep(const void *pa, const void *pb)
{
	const struct nc_obj_rep *a = pa, *b = pb;

	FEQ(a, b, op_size);
	FEQ(a, b, op_blocks);
	return true;
}

static void fill_shard_req(void *p)
{
	struct nc_shard_req *m = p;

	m->ss_cred = ex_cred;
	m->ss_fid = ex_fid;
	m->ss_shard = 5;
	m->ss_set = NC_SHARD_STALE;
	m->ss_clear = 0;
}

static bool eq_shard_req(const void *pa, const void *pb)
{
	const struct nc_shard_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, ss_cred);
	FSUB(a, b, fid_eq, ss_fid);
	FEQ(a, b, ss_shard);
	FEQ(a, b, ss_set);
	FEQ(a, b, ss_clear);
	return true;
}

static void fill_ost_admin_req(void *p)
{
	struct nc_ost_admin_req *m = p;

	m->oa_cred = ex_cred;
	m->oa_index = 7;
	m->oa_op = NC_OSTADM_DEACTIVATE;
}

static bool eq_ost_admin_req(const void *pa, const void *pb)
{
	const struct nc_ost_admin_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, oa_cred);
	FEQ(a, b, oa_index);
	FEQ(a, b, oa_op);
	return true;
}

static void fill_pool_req(void *p)
{
	struct nc_pool_req *m = p;

	m->pr_cred = ex_cred;
	m->pr_op = NC_POOLOP_ADD;
	strcpy(m->pr_name, "ssd.pool-1");
	m->pr_count = 3;
	m->pr_osts[0] = 1;
	m->pr_osts[1] = 4;
	m->pr_osts[2] = 255;
}

static bool eq_pool_req(const void *pa, const void *pb)
{
	const struct nc_pool_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, pr_cred);
	FEQ(a, b, pr_op);
	FSTREQ(a, b, pr_name);
	FEQ(a, b, pr_count);
	for (uint32_t i = 0; i < a->pr_count && i < NC_MAX_OSTS; i++)
		FEQ(a, b, pr_osts[i]);
	return true;
}

static void fill_pool_list_rep(void *p)
{
	struct nc_pool_list_rep *m = p;

	m->pl_count = 2;
	strcpy(m->pl_pools[0].pi_name, "fast");
	m->pl_pools[0].pi_count = 2;
	m->pl_pools[0].pi_osts[0] = 0;
	m->pl_pools[0].pi_osts[1] = 2;
	strcpy(m->pl_pools[1].pi_name, "empty");
	m->pl_pools[1].pi_count = 0;
}

static bool eq_pool_list_rep(const void *pa, const void *pb)
{
	const struct nc_pool_list_rep *a = pa, *b = pb;

	FEQ(a, b, pl_count);
	for (uint32_t i = 0; i < a->pl_count && i < NC_POOLS_MAX; i++) {
		FSTREQ(a, b, pl_pools[i].pi_name);
		FEQ(a, b, pl_pools[i].pi_count);
		for (uint32_t j = 0; j < a->pl_pools[i].pi_count && j < NC_MAX_OSTS; j++)
			FEQ(a, b, pl_pools[i].pi_osts[j]);
	}
	return true;
}

static void fill_verify_rep(void *p)
{
	struct nc_verify_rep *m = p;

	m->vr_count = 3;
	m->vr_more = 1;
	m->vr_block = 4096;
	m->vr_bad[0] = 0;
	m->vr_bad[1] = 8192;
	m->vr_bad[2] = 0x123456789000ull;
}

static bool eq_verify_rep(const void *pa, const void *pb)
{
	const struct nc_verify_rep *a = pa, *b = pb;

	FEQ(a, b, vr_count);
	FEQ(a, b, vr_more);
	FEQ(a, b, vr_block);
	for (uint32_t i = 0; i < a->vr_count && i < NC_VERIFY_MAX; i++)
		FEQ(a, b, vr_bad[i]);
	return true;
}

static void fill_watch_rep(void *p)
{
	struct nc_watch_rep *m = p;

	m->wr_count = 2;
	m->wr_start[0] = 3;
	m->wr_end[0] = 5;
	m->wr_start[1] = 0x100000000ull;
	m->wr_end[1] = 0x4000000000000000ull;
}

static bool eq_watch_rep(const void *pa, const void *pb)
{
	const struct nc_watch_rep *a = pa, *b = pb;

	FEQ(a, b, wr_count);
	for (uint32_t i = 0; i < a->wr_count && i < NC_WATCH_MAX; i++) {
		FEQ(a, b, wr_start[i]);
		FEQ(a, b, wr_end[i]);
	}
	return true;
}

/* A swap to a layout whose objects have a FID of their own (1.3): the
 * data version, a template of 2+1 over 3 and two excluded OSTs. */
static void fill_migrate_req(void *p)
{
	struct nc_migrate_req *m = p;

	m->mg_cred = ex_cred;
	m->mg_fid = ex_fid;
	m->mg_flags = NC_MIGRATE_GEOMETRY;
	m->mg_gen = 7;
	m->mg_size = 0x123456789ull;
	m->mg_mtime = (struct nc_timespec){ 1700000001, 500000000 };
	m->mg_ctime = (struct nc_timespec){ 1700000002, 999999999 };
	m->mg_tmpl.l_stripe_count = 3;
	m->mg_tmpl.l_k = 2;
	m->mg_tmpl.l_m = 1;
	m->mg_tmpl.l_flags = NC_LAYOUT_TEMPLATE;
	m->mg_tmpl.l_first_ost = NC_OST_ANY;
	m->mg_nexclude = 2;
	m->mg_exclude[0] = 3;
	m->mg_exclude[1] = 250;
	ex_layout(&m->mg_layout);
	m->mg_layout.l_flags = NC_LAYOUT_OBJFID;
	m->mg_layout.l_obj = (struct nc_fid){ NC_MIGRATE_FID_SEQ, 0x42 };
	m->mg_grace = 300;
}

static bool eq_migrate_req(const void *pa, const void *pb)
{
	const struct nc_migrate_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, mg_cred);
	FSUB(a, b, fid_eq, mg_fid);
	FEQ(a, b, mg_flags);
	FEQ(a, b, mg_gen);
	FEQ(a, b, mg_size);
	FSUB(a, b, time_eq, mg_mtime);
	FSUB(a, b, time_eq, mg_ctime);
	FSUB(a, b, layout_eq, mg_tmpl);
	FEQ(a, b, mg_nexclude);
	for (uint32_t i = 0; i < a->mg_nexclude && i < NC_MIGRATE_EXCLUDE_MAX; i++)
		FEQ(a, b, mg_exclude[i]);
	FSUB(a, b, layout_eq, mg_layout);
	FEQ(a, b, mg_grace);
	return true;
}

/* A new pack under a directory, leaving out two OSTs. */
static void fill_pack_alloc(void *p)
{
	struct nc_pack_alloc *m = p;

	m->pa_cred = ex_cred;
	m->pa_dir = ex_fid;
	ex_layout(&m->pa_layout);
	m->pa_navoid = 2;
	m->pa_avoid[0] = 4;
	m->pa_avoid[1] = 255;
}

static bool eq_pack_alloc(const void *pa, const void *pb)
{
	const struct nc_pack_alloc *a = pa, *b = pb;

	FSUB(a, b, cred_eq, pa_cred);
	FSUB(a, b, fid_eq, pa_dir);
	FSUB(a, b, layout_eq, pa_layout);
	FEQ(a, b, pa_navoid);
	for (uint32_t i = 0; i < a->pa_navoid && i < NC_PACK_AVOID_MAX; i++)
		FEQ(a, b, pa_avoid[i]);
	return true;
}

static void fill_changelog_req(void *p)
{
	struct nc_changelog_req *m = p;

	m->cl_cred = ex_cred;
	m->cl_seq = 0x1122334455667788ull;
	m->cl_max = 128;
}

static bool eq_changelog_req(const void *pa, const void *pb)
{
	const struct nc_changelog_req *a = pa, *b = pb;

	FSUB(a, b, cred_eq, cl_cred);
	FEQ(a, b, cl_seq);
	FEQ(a, b, cl_max);
	return true;
}

static void fill_changelog_rep(void *p)
{
	struct nc_changelog_rep *m = p;
	struct nc_changelog_rec *r = &m->cp_recs[0];

	m->cp_last = 42;
	m->cp_count = 2;
	r->cr_seq = 41;
	r->cr_type = NC_CL_RENAME;
	r->cr_uid = 1000;
	r->cr_gid = 100;
	r->cr_time.t_sec = 1700000000;
	r->cr_time.t_nsec = 123456789;
	r->cr_fid = ex_fid;
	r->cr_parent = ex_parent;
	strcpy(r->cr_name, "new");
	r->cr_sparent = ex_parent;
	strcpy(r->cr_sname, "old");
	r = &m->cp_recs[1];
	r->cr_seq = 42;
	r->cr_type = NC_CL_SETATTR;
	r->cr_fid = ex_fid;
}

static bool changelog_rec_eq(const struct nc_changelog_rec *a, const struct nc_changelog_rec *b)
{
	FEQ(a, b, cr_seq);
	FEQ(a, b, cr_type);
	FEQ(a, b, cr_uid);
	FEQ(a, b, cr_gid);
	FEQ(a, b, cr_time.t_sec);
	FEQ(a, b, cr_time.t_nsec);
	FSUB(a, b, fid_eq, cr_fid);
	FSUB(a, b, fid_eq, cr_parent);
	FSUB(a, b, fid_eq, cr_sparent);
	return !strcmp(a->cr_name, b->cr_name) && !strcmp(a->cr_sname, b->cr_sname);
}

static bool eq_changelog_rep(const void *pa, const void *pb)
{
	const struct nc_changelog_rep *a = pa, *b = pb;

	FEQ(a, b, cp_last);
	FEQ(a, b, cp_count);
	for (uint32_t i = 0; i < a->cp_count && i < NC_CHANGELOG_MAX; i++)
		if (!changelog_rec_eq(&a->cp_recs[i], &b->cp_recs[i]))
			return false;
	return true;
}

/* Typed codecs behind one signature (no casts of function pointers). */
#define CODEC(name, type)                                          \
	static void codec_##name(struct nc_xdr *x, void *m)        \
	{                                                          \
		nc_wire_##name(x, (type *)m);                      \
	}
CODEC(connect_req, struct nc_connect_req)
CODEC(connect_rep, struct nc_connect_rep)
CODEC(ost_register_req, struct nc_ost_register_req)
CODEC(ost_list_rep, struct nc_ost_list_rep)
CODEC(statfs_rep, struct nc_statfs_rep)
CODEC(name_req, struct nc_name_req)
CODEC(fid_req, struct nc_fid_req)
CODEC(create_req, struct nc_create_req)
CODEC(setattr_req, struct nc_setattr_req)
CODEC(rename_req, struct nc_rename_req)
CODEC(readdir_req, struct nc_readdir_req)
CODEC(readdir_rep, struct nc_readdir_rep)
CODEC(attr_rep, struct nc_attr_rep)
CODEC(layout_msg, struct nc_layout_msg)
CODEC(size_req, struct nc_size_req)
CODEC(xattr_req, struct nc_xattr_req)
CODEC(bytes_rep, struct nc_bytes_rep)
CODEC(obj_req, struct nc_obj_req)
CODEC(obj_rep, struct nc_obj_rep)
CODEC(shard_req, struct nc_shard_req)
CODEC(verify_rep, struct nc_verify_rep)
CODEC(watch_rep, struct nc_watch_rep)
CODEC(migrate_req, struct nc_migrate_req)
CODEC(pack_alloc, struct nc_pack_alloc)
CODEC(changelog_req, struct nc_changelog_req)
CODEC(changelog_rep, struct nc_changelog_rep)
CODEC(ost_admin_req, struct nc_ost_admin_req)
CODEC(pool_req, struct nc_pool_req)
CODEC(pool_list_rep, struct nc_pool_list_rep)
CODEC(auth, struct nc_auth_msg)
CODEC(pack_switch, struct nc_pack_switch)
CODEC(pack_commit, struct nc_pack_commit)
CODEC(lookup_many_rep, struct nc_lookup_many)
#undef CODEC

/* The same messages with the authentication feature (1.3). */
static void codec_connect_req_auth(struct nc_xdr *x, void *m)
{
	nc_wire_connect_req(x, m);
}

static void codec_connect_rep_auth(struct nc_xdr *x, void *m)
{
	nc_wire_connect_rep(x, m);
}

/* ...and with reply reconstruction (1.5). */
static void codec_connect_req_replay(struct nc_xdr *x, void *m)
{
	nc_wire_connect_req(x, m);
}

#define SHAPE(name, type) \
	{ .sh_name = #name, .sh_size = sizeof(type), .sh_fill = fill_##name, \
	  .sh_codec = codec_##name, .sh_eq = eq_##name }

static const struct shape shapes[] = {
	SHAPE(connect_req, struct nc_connect_req),
	SHAPE(connect_rep, struct nc_connect_rep),
	SHAPE(ost_register_req, struct nc_ost_register_req),
	SHAPE(ost_list_rep, struct nc_ost_list_rep),
	SHAPE(statfs_rep, struct nc_statfs_rep),
	SHAPE(name_req, struct nc_name_req),
	SHAPE(fid_req, struct nc_fid_req),
	SHAPE(create_req, struct nc_create_req),
	SHAPE(setattr_req, struct nc_setattr_req),
	SHAPE(rename_req, struct nc_rename_req),
	SHAPE(readdir_req, struct nc_readdir_req),
	{ "readdir_rep", sizeof(struct nc_readdir_rep), fill_readdir_rep,
	  codec_readdir_rep, eq_readdir_rep, prep_readdir_rep, fini_readdir_rep, 0 },
	SHAPE(attr_rep, struct nc_attr_rep),
	{ "attr_rep_nolayout", sizeof(struct nc_attr_rep), fill_attr_rep_nolayout,
	  codec_attr_rep, eq_attr_rep, NULL, NULL, 0 },
	SHAPE(layout_msg, struct nc_layout_msg),
	{ "layout_msg_template", sizeof(struct nc_layout_msg), fill_layout_msg_template,
	  codec_layout_msg, eq_layout_msg, NULL, NULL, 0 },
	SHAPE(size_req, struct nc_size_req),
	SHAPE(xattr_req, struct nc_xattr_req),
	SHAPE(bytes_rep, struct nc_bytes_rep),
	SHAPE(obj_req, struct nc_obj_req),
	SHAPE(obj_rep, struct nc_obj_rep),
	SHAPE(shard_req, struct nc_shard_req),
	SHAPE(verify_rep, struct nc_verify_rep),
	SHAPE(watch_rep, struct nc_watch_rep),
	SHAPE(migrate_req, struct nc_migrate_req),
	/* its avoid list (count and 2 OSTs) is optional */
	{ "pack_alloc", sizeof(struct nc_pack_alloc), fill_pack_alloc, codec_pack_alloc,
	  eq_pack_alloc, NULL, NULL, 12 },
	SHAPE(changelog_req, struct nc_changelog_req),
	SHAPE(changelog_rep, struct nc_changelog_rep),
	{ "layout_msg_pool", sizeof(struct nc_layout_msg), fill_layout_msg_pool,
	  codec_layout_msg, eq_layout_msg, NULL, NULL, 0 },
	SHAPE(ost_admin_req, struct nc_ost_admin_req),
	SHAPE(pool_req, struct nc_pool_req),
	SHAPE(pool_list_rep, struct nc_pool_list_rep),
	SHAPE(connect_req_auth, struct nc_connect_req),
	SHAPE(connect_rep_auth, struct nc_connect_rep),
	SHAPE(auth, struct nc_auth_msg),
	SHAPE(connect_req_replay, struct nc_connect_req),
	/* inline files (1.8) */
	{ "layout_msg_inline", sizeof(struct nc_layout_msg), fill_layout_msg_inline,
	  codec_layout_msg, eq_layout_msg, NULL, NULL, 0 },
	{ "attr_rep_inline", sizeof(struct nc_attr_rep), fill_attr_rep_inline,
	  codec_attr_rep, eq_attr_rep, NULL, NULL, 0 },
	{ "attr_rep_inline_unsent", sizeof(struct nc_attr_rep), fill_attr_rep_inline_unsent,
	  codec_attr_rep, eq_attr_rep, NULL, NULL, 0 },
	{ "create_req_inline", sizeof(struct nc_create_req), fill_create_req_inline,
	  codec_create_req, eq_create_req_inline, NULL, NULL, 0 },
	{ "pack_switch_inline", sizeof(struct nc_pack_switch), fill_pack_switch_inline,
	  codec_pack_switch, eq_pack_switch_inline, NULL, NULL, 0 },
};
#undef SHAPE
#define N_SHAPES (sizeof(shapes) / sizeof(shapes[0]))

/* A decode target: poisoned so a field the decoder skips cannot pass. */
static void *target_new(const struct shape *sh)
{
	void *m = malloc(sh->sh_size);

	if (!m)
		return NULL;
	memset(m, POISON_BYTE, sh->sh_size);
	if (sh->sh_prep)
		sh->sh_prep(m);
	return m;
}

static void target_free(const struct shape *sh, void *m, bool decoded)
{
	if (m && decoded && sh->sh_fini)
		sh->sh_fini(m);
	free(m);
}

/* Encodes the example of @sh; returns a malloc'd copy of exactly *len bytes. */
static uint8_t *example_encode(const struct shape *sh, size_t *len)
{
	uint8_t *buf = malloc(NC_MAX_BODY), *out = NULL;
	void *m = calloc(1, sh->sh_size);
	struct nc_xdr x;

	if (!buf || !m)
		goto out;
	sh->sh_fill(m);
	nc_xdr_init_encode(&x, buf, NC_MAX_BODY);
	sh->sh_codec(&x, m);
	if (nc_xdr_finish(&x) == 0) {
		*len = x.x_pos;
		out = xmemdup(buf, x.x_pos);
	}
out:
	free(m);
	free(buf);
	return out;
}

/* A decoded message and the exact-size copy of the bytes it came from
 * (by-reference fields point into the copy). */
struct decoded {
	void *d_msg;
	uint8_t *d_buf;
};

static void decoded_free(const struct shape *sh, struct decoded *d)
{
	target_free(sh, d->d_msg, true);
	free(d->d_buf);
	d->d_msg = NULL;
	d->d_buf = NULL;
}

/* Decodes @len bytes (copied to an exact-size buffer, so ASan sees any
 * over-read) into a fresh target; returns nc_xdr_finish() and, on success,
 * the message in @d (release with decoded_free()). */
static int shape_decode(const struct shape *sh, const uint8_t *bytes, size_t len,
			struct decoded *d)
{
	uint8_t *copy = xmemdup(bytes, len);
	void *m = target_new(sh);
	struct nc_xdr x;
	int rc;

	d->d_msg = NULL;
	d->d_buf = NULL;
	if (!copy || !m) {
		free(copy);
		free(m);
		return -ENOMEM;
	}
	nc_xdr_init_decode(&x, copy, len);
	sh->sh_codec(&x, m);
	rc = nc_xdr_finish(&x);
	if (x.x_pos > len)
		rc = -EFAULT; /* the cursor must never pass the end */
	if (rc) {
		/* A failed decoder owns nothing; a message rejected only by
		 * nc_xdr_finish (trailing bytes) was decoded and is freed. */
		if (x.x_err && sh->sh_prep == prep_readdir_rep)
			CU_ASSERT_PTR_NULL(((struct nc_readdir_rep *)m)->dr_ents);
		target_free(sh, m, x.x_err == 0);
		free(copy);
		return rc;
	}
	d->d_msg = m;
	d->d_buf = copy;
	return 0;
}

/* ---- header ---- */

static void hdr_example(struct nc_msg_hdr *h)
{
	h->mh_magic = NC_MSG_MAGIC;
	/* A fixed version 1.0: the golden bytes must not move with NC_PROTO_MINOR. */
	h->mh_version = 1 << 8 | 0;
	h->mh_opcode = NC_OP_GETATTR;
	h->mh_flags = NC_MF_REPLY;
	h->mh_status = NC_WS_NOENT;
	h->mh_reqid = 0x0102030405060708ull;
	h->mh_body_len = 0x00012345;
	h->mh_bulk_len = 0x00abcdef;
}

static void test_hdr_roundtrip(void)
{
	struct nc_msg_hdr h, d;
	uint8_t b[NC_HDR_LEN];

	hdr_example(&h);
	nc_hdr_encode(&h, b);
	memset(&d, POISON_BYTE, sizeof(d));
	CU_ASSERT_EQUAL(nc_hdr_decode(b, &d), 0);
	CU_ASSERT_EQUAL(d.mh_magic, h.mh_magic);
	CU_ASSERT_EQUAL(d.mh_version, h.mh_version);
	CU_ASSERT_EQUAL(d.mh_opcode, h.mh_opcode);
	CU_ASSERT_EQUAL(d.mh_flags, h.mh_flags);
	CU_ASSERT_EQUAL(d.mh_status, h.mh_status);
	CU_ASSERT_EQUAL(d.mh_reqid, h.mh_reqid);
	CU_ASSERT_EQUAL(d.mh_body_len, h.mh_body_len);
	CU_ASSERT_EQUAL(d.mh_bulk_len, h.mh_bulk_len);

	/* A negative status survives the u32 on the wire. */
	h.mh_status = -7;
	nc_hdr_encode(&h, b);
	CU_ASSERT_EQUAL(nc_hdr_decode(b, &d), 0);
	CU_ASSERT_EQUAL(d.mh_status, -7);

	/* Another minor of the same major is accepted. */
	h.mh_version = NC_PROTO_MAJOR << 8 | 0x7f;
	nc_hdr_encode(&h, b);
	CU_ASSERT_EQUAL(nc_hdr_decode(b, &d), 0);
	CU_ASSERT_EQUAL(d.mh_version, NC_PROTO_MAJOR << 8 | 0x7f);

	/* The limits themselves are allowed. */
	hdr_example(&h);
	h.mh_body_len = NC_MAX_BODY;
	h.mh_bulk_len = NC_MAX_BULK;
	nc_hdr_encode(&h, b);
	CU_ASSERT_EQUAL(nc_hdr_decode(b, &d), 0);
}

static void test_hdr_reject(void)
{
	struct nc_msg_hdr h, d;
	uint8_t b[NC_HDR_LEN];

	hdr_example(&h);
	h.mh_magic = 0x4d52434eu; /* byte-swapped magic */
	nc_hdr_encode(&h, b);
	CU_ASSERT_EQUAL(nc_hdr_decode(b, &d), -NC_E_PROTO);
	h.mh_magic = 0;
	nc_hdr_encode(&h, b);
	CU_ASSERT_EQUAL(nc_hdr_decode(b, &d), -NC_E_PROTO);

	hdr_example(&h);
	h.mh_version = (NC_PROTO_MAJOR + 1) << 8 | NC_PROTO_MINOR;
	nc_hdr_encode(&h, b);
	CU_ASSERT_EQUAL(nc_hdr_decode(b, &d), -NC_E_VERSION);
	h.mh_version = 0;
	nc_hdr_encode(&h, b);
	CU_ASSERT_EQUAL(nc_hdr_decode(b, &d), -NC_E_VERSION);

	hdr_example(&h);
	h.mh_body_len = NC_MAX_BODY + 1;
	nc_hdr_encode(&h, b);
	CU_ASSERT_EQUAL(nc_hdr_decode(b, &d), -NC_E_PROTO);
	h.mh_body_len = UINT32_MAX;
	nc_hdr_encode(&h, b);
	CU_ASSERT_EQUAL(nc_hdr_decode(b, &d), -NC_E_PROTO);

	hdr_example(&h);
	h.mh_bulk_len = NC_MAX_BULK + 1;
	nc_hdr_encode(&h, b);
	CU_ASSERT_EQUAL(nc_hdr_decode(b, &d), -NC_E_PROTO);
}

static uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The offsets documented at the top of wire.h, byte by byte. */
static void test_hdr_offsets(void)
{
	struct nc_msg_hdr h;
	uint8_t b[NC_HDR_LEN];
	static const uint8_t reqid_le[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };

	CU_ASSERT_EQUAL(NC_HDR_LEN, 32);
	hdr_example(&h);
	memset(b, POISON_BYTE, sizeof(b));
	nc_hdr_encode(&h, b);
	/* 0 magic: "MRCN" in memory. */
	CU_ASSERT_EQUAL(memcmp(b + 0, "MRCN", 4), 0);
	CU_ASSERT_EQUAL(le32_at(b + 0), NC_MSG_MAGIC);
	/* 4 version u16: minor byte first, then major. */
	CU_ASSERT_EQUAL(b[4], 0); /* the example is version 1.0 */
	CU_ASSERT_EQUAL(b[5], NC_PROTO_MAJOR);
	/* 6 opcode u16 */
	CU_ASSERT_EQUAL(b[6], NC_OP_GETATTR);
	CU_ASSERT_EQUAL(b[7], 0);
	/* 8 flags u32 */
	CU_ASSERT_EQUAL(le32_at(b + 8), NC_MF_REPLY);
	/* 12 status i32 */
	CU_ASSERT_EQUAL(le32_at(b + 12), (uint32_t)NC_WS_NOENT);
	/* 16 reqid u64 */
	CU_ASSERT_EQUAL(memcmp(b + 16, reqid_le, 8), 0);
	/* 24 body length, 28 bulk length */
	CU_ASSERT_EQUAL(b[24], 0x45);
	CU_ASSERT_EQUAL(b[25], 0x23);
	CU_ASSERT_EQUAL(b[26], 0x01);
	CU_ASSERT_EQUAL(b[27], 0x00);
	CU_ASSERT_EQUAL(le32_at(b + 28), 0x00abcdefu);
	CU_ASSERT_EQUAL(b[28], 0xef);

	h.mh_status = -1;
	nc_hdr_encode(&h, b);
	CU_ASSERT_EQUAL(le32_at(b + 12), 0xffffffffu);
}

/* ---- XDR primitives ---- */

static void test_xdr_primitives(void)
{
	uint8_t buf[64], u8 = 0xfe, u8d = 0;
	uint16_t u16 = 0x1234, u16d = 0;
	uint32_t u32 = 0xdeadbeef, u32d = 0;
	uint64_t u64 = 0x0102030405060708ull, u64d = 0;
	int64_t i64 = -2, i64d = 0;
	char fixed[5] = "abcd", fixedd[5] = { 0 };
	static const uint8_t expect[] = {
		0xfe, 0x34, 0x12, 0xef, 0xbe, 0xad, 0xde,
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
		0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		'a', 'b', 'c', 'd',
	};
	struct nc_xdr x;

	nc_xdr_init_encode(&x, buf, sizeof(buf));
	nc_xdr_u8(&x, &u8);
	nc_xdr_u16(&x, &u16);
	nc_xdr_u32(&x, &u32);
	nc_xdr_u64(&x, &u64);
	nc_xdr_i64(&x, &i64);
	nc_xdr_fixed(&x, fixed, 4);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
	CU_ASSERT_EQUAL(x.x_pos, sizeof(expect));
	CU_ASSERT_EQUAL(memcmp(buf, expect, sizeof(expect)), 0);

	nc_xdr_init_decode(&x, expect, sizeof(expect));
	nc_xdr_u8(&x, &u8d);
	nc_xdr_u16(&x, &u16d);
	nc_xdr_u32(&x, &u32d);
	nc_xdr_u64(&x, &u64d);
	nc_xdr_i64(&x, &i64d);
	nc_xdr_fixed(&x, fixedd, 4);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
	CU_ASSERT_EQUAL(u8d, u8);
	CU_ASSERT_EQUAL(u16d, u16);
	CU_ASSERT_EQUAL(u32d, u32);
	CU_ASSERT_EQUAL(u64d, u64);
	CU_ASSERT_EQUAL(i64d, i64);
	CU_ASSERT_STRING_EQUAL(fixedd, "abcd");

	/* After the first failure later calls do nothing. */
	nc_xdr_init_decode(&x, expect, 3);
	nc_xdr_u32(&x, &u32d);
	CU_ASSERT_EQUAL(x.x_err, -NC_E_PROTO);
	CU_ASSERT_EQUAL(x.x_pos, 0);
	u8d = 0x11;
	nc_xdr_u8(&x, &u8d);
	CU_ASSERT_EQUAL(u8d, 0x11);
	CU_ASSERT_EQUAL(x.x_pos, 0);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), -NC_E_PROTO);

	/* Encoding past the capacity is -EOVERFLOW, decoding short -NC_E_PROTO. */
	nc_xdr_init_encode(&x, buf, 7);
	nc_xdr_u64(&x, &u64);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), -EOVERFLOW);
	nc_xdr_init_decode(&x, expect, 0);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
	nc_xdr_init_decode(&x, expect, 1);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), -NC_E_PROTO);
}

static void test_xdr_str_opaque(void)
{
	uint8_t buf[64];
	char s[8] = "abc", d[8];
	const void *p = "xyz";
	const void *pd = NULL;
	uint32_t n = 3, nd = 0;
	struct nc_xdr x;
	static const uint8_t expect[] = { 3, 0, 'a', 'b', 'c', 3, 0, 0, 0, 'x', 'y', 'z' };

	nc_xdr_init_encode(&x, buf, sizeof(buf));
	nc_xdr_str(&x, s, 7);
	nc_xdr_opaque(&x, &p, &n, 16);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
	CU_ASSERT_EQUAL(x.x_pos, sizeof(expect));
	CU_ASSERT_EQUAL(memcmp(buf, expect, sizeof(expect)), 0);

	memset(d, 'q', sizeof(d));
	nc_xdr_init_decode(&x, expect, sizeof(expect));
	nc_xdr_str(&x, d, 7);
	nc_xdr_opaque(&x, &pd, &nd, 16);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
	CU_ASSERT_STRING_EQUAL(d, "abc");
	CU_ASSERT_EQUAL(nd, 3);
	/* By reference: the value points into the decoded buffer. */
	CU_ASSERT_PTR_EQUAL(pd, expect + 9);

	/* An empty string and an empty opaque. */
	s[0] = '\0';
	n = 0;
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	nc_xdr_str(&x, s, 7);
	nc_xdr_opaque(&x, &p, &n, 16);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
	CU_ASSERT_EQUAL(x.x_pos, 6);
	nc_xdr_init_decode(&x, buf, 6);
	nc_xdr_str(&x, d, 7);
	nc_xdr_opaque(&x, &pd, &nd, 16);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
	CU_ASSERT_STRING_EQUAL(d, "");
	CU_ASSERT_EQUAL(nd, 0);

	/* Exactly max is fine, max + 1 is not. */
	strcpy(s, "1234567");
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	nc_xdr_str(&x, s, 7);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	nc_xdr_str(&x, s, 6);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), -ENAMETOOLONG);
	CU_ASSERT_EQUAL(x.x_pos, 0);
	n = 17;
	p = buf;
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	nc_xdr_opaque(&x, &p, &n, 16);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), -EOVERFLOW);
}

/* ---- every message shape ---- */

static void test_shapes_roundtrip(void)
{
	for (size_t i = 0; i < N_SHAPES; i++) {
		const struct shape *sh = &shapes[i];
		void *ex = calloc(1, sh->sh_size);
		struct decoded d;
		uint8_t *enc, *re;
		size_t len = 0, relen = 0;
		int rc;

		CU_ASSERT_FATAL(ex != NULL);
		sh->sh_fill(ex);
		enc = example_encode(sh, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(enc);
		CU_ASSERT(len > 0);
		rc = shape_decode(sh, enc, len, &d);
		CU_ASSERT_EQUAL(rc, 0);
		if (rc == 0) {
			bool same = sh->sh_eq(ex, d.d_msg);

			if (!same)
				fprintf(stderr, "  round trip of %s differs\n", sh->sh_name);
			CU_ASSERT(same);
		}
		decoded_free(sh, &d);

		/* Encoding the decoded message gives the same bytes. */
		if (rc == 0) {
			struct nc_xdr x;
			uint8_t *copy = xmemdup(enc, len);
			void *m = target_new(sh);

			nc_xdr_init_decode(&x, copy, len);
			sh->sh_codec(&x, m);
			CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
			re = malloc(len);
			CU_ASSERT_PTR_NOT_NULL_FATAL(re);
			nc_xdr_init_encode(&x, re, len);
			sh->sh_codec(&x, m);
			relen = x.x_pos;
			CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
			CU_ASSERT_EQUAL(relen, len);
			CU_ASSERT_EQUAL(memcmp(re, enc, len), 0);
			free(re);
			target_free(sh, m, true);
			free(copy);
		}
		free(enc);
		free(ex);
	}
}

static void test_shapes_truncated(void)
{
	for (size_t i = 0; i < N_SHAPES; i++) {
		const struct shape *sh = &shapes[i];
		uint8_t *enc, *longer;
		size_t len = 0;
		struct decoded d;
		int bad = 0;

		enc = example_encode(sh, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(enc);
		for (size_t p = 0; p < len; p++) {
			int rc;

			if (sh->sh_optional_tail && p == len - sh->sh_optional_tail)
				continue;
			rc = shape_decode(sh, enc, p, &d);
			if (rc != -NC_E_PROTO) {
				fprintf(stderr, "  %s: prefix %zu of %zu gives %d\n",
					sh->sh_name, p, len, rc);
				bad++;
				decoded_free(sh, &d);
			}
		}
		CU_ASSERT_EQUAL(bad, 0);

		/* One trailing byte is rejected too. */
		longer = malloc(len + 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(longer);
		memcpy(longer, enc, len);
		longer[len] = 0;
		CU_ASSERT_EQUAL(shape_decode(sh, longer, len + 1, &d), -NC_E_PROTO);
		decoded_free(sh, &d);
		free(longer);
		free(enc);
	}
}

static void test_shapes_small_buffer(void)
{
	for (size_t i = 0; i < N_SHAPES; i++) {
		const struct shape *sh = &shapes[i];
		void *ex = calloc(1, sh->sh_size);
		uint8_t *enc;
		size_t len = 0;
		int bad = 0;

		CU_ASSERT_PTR_NOT_NULL_FATAL(ex);
		sh->sh_fill(ex);
		enc = example_encode(sh, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(enc);
		for (size_t cap = 0; cap < len; cap++) {
			uint8_t *buf = malloc(cap + GUARD_LEN);
			struct nc_xdr x;
			int rc;

			CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
			memset(buf, GUARD_BYTE, cap + GUARD_LEN);
			nc_xdr_init_encode(&x, buf, cap);
			sh->sh_codec(&x, ex);
			rc = nc_xdr_finish(&x);
			if (rc != -EOVERFLOW || x.x_pos > cap)
				bad++;
			for (size_t g = cap; g < cap + GUARD_LEN; g++)
				if (buf[g] != GUARD_BYTE)
					bad++;
			free(buf);
		}
		if (bad)
			fprintf(stderr, "  %s: %d bad small-buffer encodes\n", sh->sh_name, bad);
		CU_ASSERT_EQUAL(bad, 0);
		free(enc);
		free(ex);
	}
}

/* ---- golden bytes ---- */

struct golden {
	char g_name[64];
	uint8_t *g_bytes;
	size_t g_len;
	bool g_used;
};

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reads "NAME HEX" lines ('#' comments, blank lines allowed). */
static int golden_load(struct golden *g, int max, int *n)
{
	const char *top = getenv("top_srcdir");
	char path[4096], line[16384];
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%s", top && *top ? top : ".", GOLDEN_FILE);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "  cannot open %s: %s\n", path, strerror(errno));
		return -errno;
	}
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *name, *hex, *save = NULL;
		size_t hl;

		if (line[0] == '#')
			continue;
		name = strtok_r(line, " \t\r\n", &save);
		if (!name)
			continue;
		hex = strtok_r(NULL, " \t\r\n", &save);
		hl = hex ? strlen(hex) : 0;
		if (!hex || hl % 2 || *n == max || strlen(name) >= sizeof(g->g_name)) {
			rc = -EINVAL;
			break;
		}
		snprintf(g[*n].g_name, sizeof(g[*n].g_name), "%s", name);
		g[*n].g_len = hl / 2;
		g[*n].g_bytes = malloc(hl / 2 + 1);
		g[*n].g_used = false;
		if (!g[*n].g_bytes) {
			rc = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < hl / 2; i++) {
			int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

			if (hi < 0 || lo < 0)
				rc = -EINVAL;
			g[*n].g_bytes[i] = (uint8_t)(hi << 4 | lo);
		}
		(*n)++;
		if (rc)
			break;
	}
	fclose(f);
	return rc;
}

static struct golden *golden_find(struct golden *g, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(g[i].g_name, name))
			return &g[i];
	return NULL;
}

static void test_golden(void)
{
	struct golden g[64];
	struct golden *e;
	struct nc_msg_hdr h, hd;
	uint8_t hb[NC_HDR_LEN];
	int n = 0, rc;

	rc = golden_load(g, 64, &n);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc) {
		for (int i = 0; i < n; i++)
			free(g[i].g_bytes);
		return;
	}

	hdr_example(&h);
	nc_hdr_encode(&h, hb);
	e = golden_find(g, n, "hdr");
	CU_ASSERT_PTR_NOT_NULL(e);
	if (e) {
		e->g_used = true;
		CU_ASSERT_EQUAL(e->g_len, NC_HDR_LEN);
		if (e->g_len != NC_HDR_LEN || memcmp(e->g_bytes, hb, NC_HDR_LEN)) {
			fprintf(stderr, "  golden hdr differs; now: hdr ");
			hex_print(stderr, hb, NC_HDR_LEN);
			fprintf(stderr, "\n");
			CU_FAIL("golden hdr bytes");
		} else {
			CU_ASSERT_EQUAL(nc_hdr_decode(e->g_bytes, &hd), 0);
			CU_ASSERT_EQUAL(hd.mh_magic, h.mh_magic);
			CU_ASSERT_EQUAL(hd.mh_version, h.mh_version);
			CU_ASSERT_EQUAL(hd.mh_opcode, h.mh_opcode);
			CU_ASSERT_EQUAL(hd.mh_flags, h.mh_flags);
			CU_ASSERT_EQUAL(hd.mh_status, h.mh_status);
			CU_ASSERT_EQUAL(hd.mh_reqid, h.mh_reqid);
			CU_ASSERT_EQUAL(hd.mh_body_len, h.mh_body_len);
			CU_ASSERT_EQUAL(hd.mh_bulk_len, h.mh_bulk_len);
		}
	}

	for (size_t i = 0; i < N_SHAPES; i++) {
		const struct shape *sh = &shapes[i];
		void *ex = calloc(1, sh->sh_size);
		struct decoded d;
		uint8_t *enc;
		size_t len = 0;

		CU_ASSERT_PTR_NOT_NULL_FATAL(ex);
		sh->sh_fill(ex);
		enc = example_encode(sh, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(enc);
		e = golden_find(g, n, sh->sh_name);
		if (!e) {
			fprintf(stderr, "  no golden line for %s; now: %s ", sh->sh_name,
				sh->sh_name);
			hex_print(stderr, enc, len);
			fprintf(stderr, "\n");
			CU_FAIL("golden line missing");
			free(enc);
			free(ex);
			continue;
		}
		e->g_used = true;
		if (e->g_len != len || memcmp(e->g_bytes, enc, len)) {
			fprintf(stderr, "  golden %s differs; now: %s ", sh->sh_name,
				sh->sh_name);
			hex_print(stderr, enc, len);
			fprintf(stderr, "\n");
			CU_FAIL("golden bytes differ");
		}
		/* The golden bytes decode back to the example. */
		rc = shape_decode(sh, e->g_bytes, e->g_len, &d);
		CU_ASSERT_EQUAL(rc, 0);
		if (rc == 0) {
			bool same = sh->sh_eq(ex, d.d_msg);

			if (!same)
				fprintf(stderr, "  golden %s decodes differently\n", sh->sh_name);
			CU_ASSERT(same);
		}
		decoded_free(sh, &d);
		free(enc);
		free(ex);
	}

	for (int i = 0; i < n; i++) {
		if (!g[i].g_used) {
			fprintf(stderr, "  golden line %s names no message shape\n",
				g[i].g_name);
			CU_FAIL("unknown golden line");
		}
		free(g[i].g_bytes);
	}
}

/* ---- oversized counts and bad fields ---- */

/* A growable encoder for hand-made (possibly invalid) messages. */
struct builder {
	uint8_t *b_buf;
	struct nc_xdr b_x;
};

static void bld_init(struct builder *b, size_t cap)
{
	b->b_buf = malloc(cap);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b->b_buf);
	nc_xdr_init_encode(&b->b_x, b->b_buf, cap);
}

static void bld_u8(struct builder *b, uint8_t v)
{
	nc_xdr_u8(&b->b_x, &v);
}

static void bld_u16(struct builder *b, uint16_t v)
{
	nc_xdr_u16(&b->b_x, &v);
}

static void bld_u32(struct builder *b, uint32_t v)
{
	nc_xdr_u32(&b->b_x, &v);
}

static void bld_u64(struct builder *b, uint64_t v)
{
	nc_xdr_u64(&b->b_x, &v);
}

static void bld_bytes(struct builder *b, const void *p, size_t n)
{
	nc_xdr_fixed(&b->b_x, (void *)(uintptr_t)p, n);
}

/* A raw string: u16 length (any value) and @n bytes. */
static void bld_rawstr(struct builder *b, uint16_t len, const void *p, size_t n)
{
	bld_u16(b, len);
	bld_bytes(b, p, n);
}

static void bld_cred(struct builder *b, uint32_t ngroups)
{
	bld_u32(b, 1000);
	bld_u32(b, 100);
	bld_u32(b, ngroups);
	for (uint32_t i = 0; i < ngroups; i++)
		bld_u32(b, i);
}

static void bld_fid(struct builder *b)
{
	bld_u64(b, ex_fid.f_seq);
	bld_u64(b, ex_fid.f_oid);
}

static void bld_layout(struct builder *b, uint16_t count, uint32_t flags)
{
	bld_u32(b, 1u << 20);
	bld_u16(b, count);
	bld_u8(b, 4);
	bld_u8(b, 2);
	bld_u32(b, flags);
	bld_u32(b, 0);
	bld_u32(b, 1);
	if (flags & NC_LAYOUT_TEMPLATE)
		return;
	for (uint32_t i = 0; i < count; i++) {
		bld_u32(b, i);
		bld_u32(b, 0);
	}
}

static void bld_time(struct builder *b, int64_t sec, uint32_t nsec)
{
	bld_u64(b, (uint64_t)sec);
	bld_u32(b, nsec);
}

static void bld_attr(struct builder *b, uint32_t nsec)
{
	bld_fid(b);
	bld_u32(b, 0100644);
	bld_u32(b, 0);
	bld_u32(b, 0);
	bld_u32(b, 1);
	bld_u64(b, 4096);
	bld_u64(b, 8);
	bld_u32(b, 0);
	bld_u32(b, 0);
	bld_time(b, 1, nsec);
	bld_time(b, 2, 0);
	bld_time(b, 3, 0);
}

static void bld_ost(struct builder *b, uint32_t idx, const char *addr)
{
	uint8_t uuid[16] = { 0 };

	bld_u32(b, idx);
	bld_u32(b, NC_OST_UP);
	bld_bytes(b, uuid, 16);
	bld_rawstr(b, (uint16_t)strlen(addr), addr, strlen(addr));
}

/* Decodes the builder's bytes as @name; returns nc_xdr_finish(). */
static int bld_decode(struct builder *b, const char *name)
{
	const struct shape *sh = NULL;
	struct decoded d;
	int rc;

	for (size_t i = 0; i < N_SHAPES; i++)
		if (!strcmp(shapes[i].sh_name, name))
			sh = &shapes[i];
	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	CU_ASSERT_EQUAL_FATAL(b->b_x.x_err, 0);
	rc = shape_decode(sh, b->b_buf, b->b_x.x_pos, &d);
	decoded_free(sh, &d);
	free(b->b_buf);
	b->b_buf = NULL;
	return rc;
}

/* Each limit: the value at the limit decodes, one past it is -NC_E_PROTO
 * (with every byte present, so the failure is not a truncation). */
static void test_decode_limits(void)
{
	struct builder b;
	static char big[NC_SYMLINK_MAX + 2];
	uint8_t *val;

	memset(big, 'a', sizeof(big));

	for (int over = 0; over <= 1; over++) {
		int want = over ? -NC_E_PROTO : 0;
		char name_nul[] = "ab\0cd";

		/* Layout stripe count. */
		bld_init(&b, 4096);
		bld_cred(&b, 0);
		bld_fid(&b);
		bld_layout(&b, (uint16_t)(NC_MAX_STRIPES + over), 0);
		CU_ASSERT_EQUAL(bld_decode(&b, "layout_msg"), want);

		/* The same count in an attr reply's layout. */
		bld_init(&b, 4096);
		bld_attr(&b, 0);
		bld_u32(&b, 1);
		bld_layout(&b, (uint16_t)(NC_MAX_STRIPES + over), 0);
		CU_ASSERT_EQUAL(bld_decode(&b, "attr_rep"), want);

		/* Supplementary groups. */
		bld_init(&b, 4096);
		bld_cred(&b, NC_MAX_GROUPS + (uint32_t)over);
		bld_fid(&b);
		bld_u32(&b, 0);
		CU_ASSERT_EQUAL(bld_decode(&b, "fid_req"), want);

		/* Readdir entry count. */
		bld_init(&b, 64 * 1024);
		bld_u32(&b, NC_READDIR_MAX + (uint32_t)over);
		bld_u32(&b, 0);
		for (int i = 0; i < NC_READDIR_MAX + over; i++) {
			bld_u64(&b, (uint64_t)i + 1);
			bld_fid(&b);
			bld_u32(&b, 0100000);
			bld_rawstr(&b, 1, "x", 1);
		}
		CU_ASSERT_EQUAL(bld_decode(&b, "readdir_rep"), want);

		/* OST list count. */
		bld_init(&b, 64 * 1024);
		bld_u32(&b, NC_MAX_OSTS + (uint32_t)over);
		for (int i = 0; i < NC_MAX_OSTS + over; i++)
			bld_ost(&b, (uint32_t)i, "tcp://h:1");
		CU_ASSERT_EQUAL(bld_decode(&b, "ost_list_rep"), want);

		/* A name longer than NC_NAME_MAX. */
		bld_init(&b, 4096);
		bld_cred(&b, 0);
		bld_fid(&b);
		bld_rawstr(&b, (uint16_t)(NC_NAME_MAX + over), big,
			   (size_t)(NC_NAME_MAX + over));
		bld_u32(&b, 0);
		CU_ASSERT_EQUAL(bld_decode(&b, "name_req"), want);

		/* A filesystem name longer than NC_FSNAME_MAX. */
		bld_init(&b, 4096);
		bld_u16(&b, 1);
		bld_u16(&b, 0);
		bld_u32(&b, NC_ROLE_CLIENT);
		bld_u64(&b, 1);
		bld_rawstr(&b, (uint16_t)(NC_FSNAME_MAX + over), big,
			   (size_t)(NC_FSNAME_MAX + over));
		CU_ASSERT_EQUAL(bld_decode(&b, "connect_req"), want);

		/* A symlink target longer than NC_SYMLINK_MAX. */
		bld_init(&b, 8192);
		bld_cred(&b, 0);
		bld_fid(&b);
		bld_rawstr(&b, 1, "l", 1);
		bld_u32(&b, 0120777);
		bld_u32(&b, 0);
		bld_u32(&b, 0);
		bld_rawstr(&b, (uint16_t)(NC_SYMLINK_MAX + over), big,
			   (size_t)(NC_SYMLINK_MAX + over));
		CU_ASSERT_EQUAL(bld_decode(&b, "create_req"), want);

		/* An OST address longer than NC_ADDR_MAX. */
		bld_init(&b, 4096);
		bld_u32(&b, 0);
		bld_u32(&b, NC_OST_UP);
		bld_bytes(&b, big, 16);
		bld_rawstr(&b, (uint16_t)(NC_ADDR_MAX + over), big,
			   (size_t)(NC_ADDR_MAX + over));
		CU_ASSERT_EQUAL(bld_decode(&b, "ost_register_req"), want);

		/* An embedded NUL (over) versus a clean name of the same length. */
		bld_init(&b, 4096);
		bld_cred(&b, 0);
		bld_fid(&b);
		if (over)
			bld_rawstr(&b, 5, name_nul, 5);
		else
			bld_rawstr(&b, 5, "abxcd", 5);
		bld_u32(&b, 0);
		CU_ASSERT_EQUAL(bld_decode(&b, "name_req"), want);

		/* An xattr value larger than NC_XATTR_VALUE_MAX. */
		val = calloc(1, NC_XATTR_VALUE_MAX + 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(val);
		bld_init(&b, NC_XATTR_VALUE_MAX + 4096);
		bld_cred(&b, 0);
		bld_fid(&b);
		bld_rawstr(&b, 6, "user.a", 6);
		bld_u32(&b, 0);
		bld_u32(&b, NC_XATTR_VALUE_MAX + (uint32_t)over);
		bld_bytes(&b, val, (size_t)(NC_XATTR_VALUE_MAX + over));
		CU_ASSERT_EQUAL(bld_decode(&b, "xattr_req"), want);
		free(val);

		/* A bytes reply larger than its maximum (the body less its length). */
		val = calloc(1, NC_MAX_BODY);
		CU_ASSERT_PTR_NOT_NULL_FATAL(val);
		bld_init(&b, NC_MAX_BODY + 8);
		bld_u32(&b, NC_MAX_BODY - 4 + (uint32_t)over);
		bld_bytes(&b, val, (size_t)(NC_MAX_BODY - 4 + over));
		CU_ASSERT_EQUAL(bld_decode(&b, "bytes_rep"), want);
		free(val);

		/* Nanoseconds must stay below one second: attr and setattr. */
		bld_init(&b, 4096);
		bld_attr(&b, over ? 1000000000u : 999999999u);
		bld_u32(&b, 0);
		CU_ASSERT_EQUAL(bld_decode(&b, "attr_rep"), want);

		bld_init(&b, 4096);
		bld_cred(&b, 0);
		bld_fid(&b);
		for (int i = 0; i < 4; i++)
			bld_u32(&b, 0);
		bld_u64(&b, 0);
		bld_time(&b, 5, 0);
		bld_time(&b, 6, over ? UINT32_MAX : 0);
		CU_ASSERT_EQUAL(bld_decode(&b, "setattr_req"), want);

		/* (1.8) A template's inline_max past NC_INLINE_MAX (after the
		 * pack_max it holds too). */
		bld_init(&b, 4096);
		bld_cred(&b, 0);
		bld_fid(&b);
		bld_layout(&b, 0, NC_LAYOUT_TEMPLATE | NC_LAYOUT_PACK | NC_LAYOUT_INLINE);
		bld_u32(&b, 65536);
		bld_u32(&b, NC_INLINE_MAX + (uint32_t)over);
		CU_ASSERT_EQUAL(bld_decode(&b, "layout_msg"), want);

		/* (1.8) An inline file with a shard (over) versus none. */
		bld_init(&b, 4096);
		bld_attr(&b, 0);
		bld_u32(&b, 1);
		bld_layout(&b, (uint16_t)over, NC_LAYOUT_INLINE);
		bld_u32(&b, 0);
		CU_ASSERT_EQUAL(bld_decode(&b, "attr_rep"), want);

		/* (1.8) Inline bytes past NC_INLINE_MAX: in an attr reply, a
		 * create and a switch. */
		val = calloc(1, NC_INLINE_MAX + 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(val);
		bld_init(&b, 3 * NC_INLINE_MAX);
		bld_attr(&b, 0);
		bld_u32(&b, 1);
		bld_layout(&b, 0, NC_LAYOUT_INLINE);
		bld_u32(&b, 1);
		bld_u32(&b, NC_INLINE_MAX + (uint32_t)over);
		bld_bytes(&b, val, (size_t)(NC_INLINE_MAX + over));
		CU_ASSERT_EQUAL(bld_decode(&b, "attr_rep"), want);

		bld_init(&b, 3 * NC_INLINE_MAX);
		bld_cred(&b, 0);
		bld_fid(&b);
		bld_rawstr(&b, 1, "s", 1);
		bld_u32(&b, 0100644);
		bld_u32(&b, 0);
		bld_u32(&b, NC_CREATE_FID | NC_CREATE_PACKED | NC_CREATE_INLINE);
		bld_rawstr(&b, 0, "", 0);
		bld_fid(&b);
		bld_u64(&b, NC_INLINE_MAX + (uint64_t)over);
		bld_time(&b, 1, 0);
		for (int i = 0; i < 3; i++)
			bld_u64(&b, 0);
		bld_u32(&b, NC_INLINE_MAX + (uint32_t)over);
		bld_bytes(&b, val, (size_t)(NC_INLINE_MAX + over));
		CU_ASSERT_EQUAL(bld_decode(&b, "create_req"), want);

		bld_init(&b, 3 * NC_INLINE_MAX);
		bld_cred(&b, 0);
		bld_fid(&b);
		bld_u32(&b, 0);
		bld_u64(&b, NC_INLINE_MAX + (uint64_t)over);
		bld_time(&b, 1, 0);
		bld_layout(&b, 0, NC_LAYOUT_INLINE);
		bld_layout(&b, 0, NC_LAYOUT_INLINE);
		bld_u32(&b, NC_INLINE_MAX + (uint32_t)over);
		bld_bytes(&b, val, (size_t)(NC_INLINE_MAX + over));
		CU_ASSERT_EQUAL(bld_decode(&b, "pack_switch_inline"), want);
		free(val);
	}

	/* A huge count with nothing behind it fails without a huge allocation. */
	bld_init(&b, 64);
	bld_u32(&b, UINT32_MAX);
	bld_u32(&b, 1);
	CU_ASSERT_EQUAL(bld_decode(&b, "readdir_rep"), -NC_E_PROTO);
	bld_init(&b, 64);
	bld_u32(&b, UINT32_MAX);
	CU_ASSERT_EQUAL(bld_decode(&b, "ost_list_rep"), -NC_E_PROTO);
}

static int encode_one(void (*codec)(struct nc_xdr *, void *), void *m)
{
	static uint8_t buf[NC_MAX_BODY];
	struct nc_xdr x;

	nc_xdr_init_encode(&x, buf, sizeof(buf));
	codec(&x, m);
	return nc_xdr_finish(&x);
}

static void test_encode_limits(void)
{
	struct nc_name_req nr;
	struct nc_connect_req cr;
	struct nc_create_req *cq = calloc(1, sizeof(*cq));
	struct nc_ost_register_req orr;
	struct nc_layout_msg lm;
	struct nc_fid_req fr;
	struct nc_readdir_rep rr;
	struct nc_ost_list_rep *ol = calloc(1, sizeof(*ol));
	struct nc_xattr_req xr;
	static struct nc_dirent ents[NC_READDIR_MAX + 1];

	CU_ASSERT_PTR_NOT_NULL_FATAL(cq);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ol);

	/* Strings one past their maximum (no NUL in the whole array). */
	fill_name_req(&nr);
	memset(nr.nr_name, 'n', sizeof(nr.nr_name));
	CU_ASSERT_EQUAL(encode_one(codec_name_req, &nr), -ENAMETOOLONG);
	fill_connect_req(&cr);
	memset(cr.cr_fsname, 'f', sizeof(cr.cr_fsname));
	CU_ASSERT_EQUAL(encode_one(codec_connect_req, &cr), -ENAMETOOLONG);
	fill_create_req(cq);
	memset(cq->cq_target, 't', sizeof(cq->cq_target));
	CU_ASSERT_EQUAL(encode_one(codec_create_req, cq), -ENAMETOOLONG);
	fill_ost_register_req(&orr);
	memset(orr.rr_ost.o_addr, 'a', sizeof(orr.rr_ost.o_addr));
	CU_ASSERT_EQUAL(encode_one(codec_ost_register_req, &orr), -ENAMETOOLONG);
	/* ... and exactly at the maximum they encode. */
	nr.nr_name[NC_NAME_MAX] = '\0';
	CU_ASSERT_EQUAL(encode_one(codec_name_req, &nr), 0);
	cq->cq_target[NC_SYMLINK_MAX] = '\0';
	CU_ASSERT_EQUAL(encode_one(codec_create_req, cq), 0);

	/* Counts past their arrays. */
	fill_layout_msg(&lm);
	lm.sl_layout.l_stripe_count = NC_MAX_STRIPES + 1;
	CU_ASSERT_EQUAL(encode_one(codec_layout_msg, &lm), -EOVERFLOW);
	lm.sl_layout.l_stripe_count = NC_MAX_STRIPES;
	CU_ASSERT_EQUAL(encode_one(codec_layout_msg, &lm), 0);
	fill_fid_req(&fr);
	fr.fr_cred.c_ngroups = NC_MAX_GROUPS + 1;
	CU_ASSERT_EQUAL(encode_one(codec_fid_req, &fr), -EOVERFLOW);
	rr.dr_count = NC_READDIR_MAX + 1;
	rr.dr_eof = 0;
	rr.dr_ents = ents;
	for (int i = 0; i <= NC_READDIR_MAX; i++)
		strcpy(ents[i].de_name, "e");
	CU_ASSERT_EQUAL(encode_one(codec_readdir_rep, &rr), -EOVERFLOW);
	rr.dr_count = NC_READDIR_MAX;
	CU_ASSERT_EQUAL(encode_one(codec_readdir_rep, &rr), 0);
	ol->ol_count = NC_MAX_OSTS + 1;
	CU_ASSERT_EQUAL(encode_one(codec_ost_list_rep, ol), -EOVERFLOW);
	fill_xattr_req(&xr);
	xr.xr_value = ol; /* any readable memory */
	xr.xr_value_len = NC_XATTR_VALUE_MAX + 1;
	CU_ASSERT_EQUAL(encode_one(codec_xattr_req, &xr), -EOVERFLOW);
	free(ol);
	free(cq);
}

/* ---- status mapping and the opcode table ---- */

static void test_status_map(void)
{
	int n = 0;

#define CHECK_WS(name, value, err)                                     \
	do {                                                           \
		CU_ASSERT_EQUAL(NC_WS_##name, value);                  \
		CU_ASSERT_EQUAL(nc_status_from_err(err), value);       \
		CU_ASSERT_EQUAL(nc_err_from_status(value), err);       \
		n++;                                                   \
	} while (0);
	NC_WIRE_STATUS(CHECK_WS)
#undef CHECK_WS
	CU_ASSERT(n >= 35);

	/* Wire values are stable: never renumbered. */
	CU_ASSERT_EQUAL(NC_WS_OK, 0);
	CU_ASSERT_EQUAL(NC_WS_NOENT, 2);
	CU_ASSERT_EQUAL(NC_WS_IO, 5);
	CU_ASSERT_EQUAL(NC_WS_EXIST, 17);
	CU_ASSERT_EQUAL(NC_WS_NOTEMPTY, 39);
	CU_ASSERT_EQUAL(NC_WS_STALE, 116);
	CU_ASSERT_EQUAL(NC_WS_PROTO, 1000);
	CU_ASSERT_EQUAL(NC_WS_HANDSHAKE, 1006);
	CU_ASSERT_EQUAL(NC_WS_AUTH, 1010);
	CU_ASSERT_EQUAL(nc_status_from_err(-NC_E_AUTH), NC_WS_AUTH);
	CU_ASSERT_EQUAL(nc_err_from_status(NC_WS_AUTH), -NC_E_AUTH);

	/* Unknown local errors travel as IO; unknown statuses arrive as -EIO. */
	CU_ASSERT_EQUAL(nc_status_from_err(-EDOM), NC_WS_IO);
	CU_ASSERT_EQUAL(nc_status_from_err(-NC_E_CONFIG), NC_WS_IO);
	CU_ASSERT_EQUAL(nc_status_from_err(ENOENT), NC_WS_IO);
	CU_ASSERT_EQUAL(nc_status_from_err(-99999), NC_WS_IO);
	CU_ASSERT_EQUAL(nc_err_from_status(3), -EIO);
	CU_ASSERT_EQUAL(nc_err_from_status(999), -EIO);
	CU_ASSERT_EQUAL(nc_err_from_status(-1), -EIO);
	CU_ASSERT_EQUAL(nc_err_from_status(INT32_MAX), -EIO);
}

static void test_opcodes(void)
{
	CU_ASSERT_STRING_EQUAL(nc_op_name(NC_OP_CONNECT), "CONNECT");
	CU_ASSERT_STRING_EQUAL(nc_op_name(NC_OP_GETATTR), "GETATTR");
	CU_ASSERT_STRING_EQUAL(nc_op_name(NC_OP_OBJ_WRITE), "OBJ_WRITE");
	CU_ASSERT_STRING_EQUAL(nc_op_name(NC_OP_OST_STATFS), "OST_STATFS");
	CU_ASSERT_STRING_EQUAL(nc_op_name(0), "UNKNOWN");
	CU_ASSERT_STRING_EQUAL(nc_op_name(999), "UNKNOWN");

	CU_ASSERT_TRUE(nc_op_is_known(NC_OP_PING));
	CU_ASSERT_TRUE(nc_op_is_known(NC_OP_RENAME));
	CU_ASSERT_FALSE(nc_op_is_known(0));
	CU_ASSERT_TRUE(nc_op_is_known(3));      /* AUTH, since 1.3 */
	CU_ASSERT_FALSE(nc_op_is_known(4));
	CU_ASSERT_FALSE(nc_op_is_known(999));
	CU_ASSERT_FALSE(nc_op_is_known(UINT16_MAX));

	CU_ASSERT_TRUE(nc_op_is_idempotent(NC_OP_GETATTR));
	CU_ASSERT_TRUE(nc_op_is_idempotent(NC_OP_OBJ_READ));
	CU_ASSERT_TRUE(nc_op_is_idempotent(NC_OP_OBJ_WRITE));
	CU_ASSERT_FALSE(nc_op_is_idempotent(NC_OP_CREATE));
	CU_ASSERT_FALSE(nc_op_is_idempotent(NC_OP_RENAME));
	CU_ASSERT_FALSE(nc_op_is_idempotent(NC_OP_UNLINK));
	CU_ASSERT_FALSE(nc_op_is_idempotent(999));

	/* Opcode values are stable on the wire. */
	CU_ASSERT_EQUAL(NC_OP_CONNECT, 1);
	CU_ASSERT_EQUAL(NC_OP_AUTH, 3);
	CU_ASSERT_STRING_EQUAL(nc_op_name(NC_OP_AUTH), "AUTH");
	CU_ASSERT_EQUAL(NC_OP_LOOKUP, 20);
	CU_ASSERT_EQUAL(NC_OP_READDIR, 27);
	CU_ASSERT_EQUAL(NC_OP_OBJ_READ, 50);
	CU_ASSERT_EQUAL(NC_OP_OST_STATFS, 57);
	CU_ASSERT_EQUAL(NC_OP_MIGRATE, 45);
	CU_ASSERT_STRING_EQUAL(nc_op_name(NC_OP_MIGRATE), "MIGRATE");
	CU_ASSERT_FALSE(nc_op_is_idempotent(NC_OP_MIGRATE));
}

/* PACK_ALLOC: an empty avoid list is not on the wire (a 1.5 MDS reads the
 * request), and one past its maximum is refused both ways. */
static void test_pack_alloc_limits(void)
{
	struct nc_pack_alloc *m = calloc(1, sizeof(*m));
	struct nc_pack_alloc *d = calloc(1, sizeof(*d));
	uint8_t *buf = malloc(NC_MAX_BODY);
	struct nc_xdr x;
	size_t len, at;
	uint32_t v;

	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	fill_pack_alloc(m);
	nc_xdr_init_encode(&x, buf, NC_MAX_BODY);
	nc_wire_pack_alloc(&x, m);
	CU_ASSERT_EQUAL_FATAL(x.x_err, 0);
	len = x.x_pos;
	at = len - 4 * (1 + m->pa_navoid);
	memcpy(&v, buf + at, 4);
	CU_ASSERT_EQUAL(le32toh(v), 2);
	v = htole32(NC_PACK_AVOID_MAX + 1);
	memcpy(buf + at, &v, 4);
	nc_xdr_init_decode(&x, buf, len);
	nc_wire_pack_alloc(&x, d);
	CU_ASSERT_EQUAL(x.x_err, -NC_E_PROTO);
	m->pa_navoid = NC_PACK_AVOID_MAX + 1;
	CU_ASSERT_EQUAL(encode_one(codec_pack_alloc, m), -EINVAL);
	/* Without an avoid list the body ends after the layout. */
	m->pa_navoid = 0;
	nc_xdr_init_encode(&x, buf, NC_MAX_BODY);
	nc_wire_pack_alloc(&x, m);
	CU_ASSERT_EQUAL_FATAL(nc_xdr_finish(&x), 0);
	CU_ASSERT_EQUAL(x.x_pos, at);
	d->pa_navoid = 7;
	nc_xdr_init_decode(&x, buf, at);
	nc_wire_pack_alloc(&x, d);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
	CU_ASSERT_EQUAL(d->pa_navoid, 0);
	CU_ASSERT(layout_eq(&d->pa_layout, &m->pa_layout));
	free(buf);
	free(d);
	free(m);
}

/* Encodes @m with @codec into @buf (NC_MAX_BODY bytes); its length, or 0
 * when the encoder failed. */
static size_t encode_len(void (*codec)(struct nc_xdr *, void *), void *m, uint8_t *buf)
{
	struct nc_xdr x;

	nc_xdr_init_encode(&x, buf, NC_MAX_BODY);
	codec(&x, m);
	return nc_xdr_finish(&x) ? 0 : x.x_pos;
}

/* An attr reply for an inline file whose layout also claims objects (as
 * @flags and @count say), with every byte such a layout would have and
 * ar_inline_sent 0 after it: only the rule that an inline file has no
 * objects refuses it. */
static int bld_attr_inline_objects(uint32_t flags, uint16_t count)
{
	struct builder b;

	bld_init(&b, 4096);
	bld_attr(&b, 0);
	bld_u32(&b, 1);
	bld_u32(&b, 0);
	bld_u16(&b, count);
	bld_u8(&b, 0);
	bld_u8(&b, 0);
	bld_u32(&b, NC_LAYOUT_INLINE | flags);
	bld_u32(&b, 0);
	bld_u32(&b, 1);
	if (flags & NC_LAYOUT_PACKED) {
		bld_u64(&b, 9);
		bld_u64(&b, 0);
		bld_u64(&b, 100);
	}
	if (flags & NC_LAYOUT_OBJFID)
		bld_fid(&b);
	for (uint16_t i = 0; i < count; i++) {
		bld_u32(&b, i);
		bld_u32(&b, 0);
	}
	bld_u32(&b, 0);
	return bld_decode(&b, "attr_rep");
}

/*
 * Inline files (1.8): a file layout with NC_LAYOUT_INLINE has no objects;
 * an attr reply carries ar_inline_sent (and the bytes) only after a file's
 * inline layout; NC_CREATE_INLINE needs NC_CREATE_PACKED; a switch carries
 * bytes only to an inline layout, and a proposal none.  What breaks the
 * rules is refused both ways.
 */
static void test_inline_limits(void)
{
	struct nc_attr_rep *ar = calloc(1, sizeof(*ar));
	struct nc_create_req *cq = calloc(1, sizeof(*cq));
	struct nc_pack_switch *sw = calloc(1, sizeof(*sw));
	struct nc_layout_msg lm;
	uint8_t *buf = malloc(NC_MAX_BODY), *ref = malloc(NC_MAX_BODY);
	struct builder b;
	size_t len, rlen;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ar);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cq);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
	memset(buf, 0, NC_MAX_BODY); /* also bytes to send */

	/* A template's inline_max: at most NC_INLINE_MAX, and it is the last
	 * field (after the pool name). */
	memset(&lm, 0, sizeof(lm));
	fill_layout_msg_inline(&lm);
	len = encode_len(codec_layout_msg, &lm, buf);
	CU_ASSERT_FATAL(len > 4);
	CU_ASSERT_EQUAL(le32_at(buf + len - 4), NC_INLINE_MAX);
	lm.sl_layout.l_inline_max = NC_INLINE_MAX + 1;
	CU_ASSERT_EQUAL(encode_one(codec_layout_msg, &lm), -EINVAL);
	lm.sl_layout.l_inline_max = UINT32_MAX;
	CU_ASSERT_EQUAL(encode_one(codec_layout_msg, &lm), -EINVAL);
	/* Without the flag, no inline_max on the wire. */
	memset(&lm, 0, sizeof(lm));
	fill_layout_msg_pool(&lm);
	lm.sl_layout.l_inline_max = 77;
	CU_ASSERT_EQUAL(encode_len(codec_layout_msg, &lm, ref), len - 4);

	/* A file's inline layout with objects besides: packed, named by an
	 * object FID, or with shards. */
	CU_ASSERT_EQUAL(bld_attr_inline_objects(0, 0), 0);
	CU_ASSERT_EQUAL(bld_attr_inline_objects(NC_LAYOUT_PACKED, 0), -NC_E_PROTO);
	CU_ASSERT_EQUAL(bld_attr_inline_objects(NC_LAYOUT_OBJFID, 0), -NC_E_PROTO);
	CU_ASSERT_EQUAL(bld_attr_inline_objects(0, 1), -NC_E_PROTO);
	CU_ASSERT_EQUAL(bld_attr_inline_objects(0, 6), -NC_E_PROTO);
	memset(ar, 0, sizeof(*ar));
	fill_attr_rep_inline(ar);
	CU_ASSERT_EQUAL(encode_one(codec_attr_rep, ar), 0);
	ar->ar_layout.l_flags = NC_LAYOUT_INLINE | NC_LAYOUT_PACKED;
	ar->ar_layout.l_pack_len = sizeof(ex_inline);
	CU_ASSERT_EQUAL(encode_one(codec_attr_rep, ar), -EINVAL);
	memset(ar, 0, sizeof(*ar));
	fill_attr_rep_inline(ar);
	ar->ar_layout.l_flags = NC_LAYOUT_INLINE | NC_LAYOUT_OBJFID;
	CU_ASSERT_EQUAL(encode_one(codec_attr_rep, ar), -EINVAL);
	memset(ar, 0, sizeof(*ar));
	fill_attr_rep_inline(ar);
	ex_layout(&ar->ar_layout);
	ar->ar_layout.l_flags = NC_LAYOUT_INLINE;
	CU_ASSERT_EQUAL(encode_one(codec_attr_rep, ar), -EINVAL);
	/* Bytes past NC_INLINE_MAX are not sent. */
	memset(ar, 0, sizeof(*ar));
	fill_attr_rep_inline(ar);
	ar->ar_inline = buf;
	ar->ar_inline_len = NC_INLINE_MAX;
	CU_ASSERT_EQUAL(encode_one(codec_attr_rep, ar), 0);
	ar->ar_inline_len = NC_INLINE_MAX + 1;
	CU_ASSERT_EQUAL(encode_one(codec_attr_rep, ar), -EOVERFLOW);

	/* No inline fields after a template, after no layout, or after a
	 * layout that is not inline, whatever ar_inline_sent says. */
	memset(ar, 0, sizeof(*ar));
	fill_attr_rep_inline(ar);
	ar->ar_layout = lm.sl_layout;
	ar->ar_layout.l_flags |= NC_LAYOUT_INLINE;
	ar->ar_layout.l_inline_max = 100;
	len = encode_len(codec_attr_rep, ar, buf);
	ar->ar_inline_sent = 0;
	CU_ASSERT_EQUAL(encode_len(codec_attr_rep, ar, ref), len);
	CU_ASSERT_EQUAL(memcmp(ref, buf, len), 0);
	CU_ASSERT_EQUAL(le32_at(buf + len - 4), 100); /* ends with inline_max */
	memset(ar, 0, sizeof(*ar));
	fill_attr_rep_inline(ar);
	ar->ar_has_layout = 0;
	len = encode_len(codec_attr_rep, ar, buf);
	memset(ar, 0, sizeof(*ar));
	fill_attr_rep_nolayout(ar);
	ar->ar_attr.a_size = sizeof(ex_inline);
	ar->ar_attr.a_blocks = 1;
	CU_ASSERT_EQUAL(encode_len(codec_attr_rep, ar, ref), len);
	CU_ASSERT_EQUAL(memcmp(ref, buf, len), 0);
	memset(ar, 0, sizeof(*ar));
	fill_attr_rep(ar);
	ar->ar_inline_sent = 1;
	ar->ar_inline = ex_inline;
	ar->ar_inline_len = sizeof(ex_inline);
	len = encode_len(codec_attr_rep, ar, buf);
	ar->ar_inline_sent = 0;
	CU_ASSERT_EQUAL(encode_len(codec_attr_rep, ar, ref), len);
	CU_ASSERT_EQUAL(memcmp(ref, buf, len), 0);

	/* NC_CREATE_INLINE without NC_CREATE_PACKED: refused, though the
	 * bytes that follow would decode. */
	memset(cq, 0, sizeof(*cq));
	fill_create_req_inline(cq);
	cq->cq_flags = NC_CREATE_FID | NC_CREATE_INLINE;
	CU_ASSERT_EQUAL(encode_one(codec_create_req, cq), -EINVAL);
	for (int packed = 1; packed >= 0; packed--) {
		bld_init(&b, 4096);
		bld_cred(&b, 0);
		bld_fid(&b);
		bld_rawstr(&b, 1, "s", 1);
		bld_u32(&b, 0100644);
		bld_u32(&b, 0);
		bld_u32(&b, NC_CREATE_FID | NC_CREATE_INLINE | (packed ? NC_CREATE_PACKED : 0));
		bld_rawstr(&b, 0, "", 0);
		bld_fid(&b);
		if (packed) {
			bld_u64(&b, sizeof(ex_inline));
			bld_time(&b, 1, 0);
			for (int i = 0; i < 3; i++)
				bld_u64(&b, 0);
		}
		bld_u32(&b, sizeof(ex_inline));
		bld_bytes(&b, ex_inline, sizeof(ex_inline));
		CU_ASSERT_EQUAL(bld_decode(&b, "create_req"), packed ? 0 : -NC_E_PROTO);
	}
	/* Without NC_CREATE_INLINE the bytes stay off the wire. */
	memset(cq, 0, sizeof(*cq));
	fill_create_req_inline(cq);
	len = encode_len(codec_create_req, cq, buf);
	cq->cq_flags &= ~NC_CREATE_INLINE;
	CU_ASSERT_EQUAL(encode_len(codec_create_req, cq, ref), len - 4 - sizeof(ex_inline));
	CU_ASSERT_EQUAL(le32_at(buf + len - 4 - sizeof(ex_inline)), sizeof(ex_inline));
	CU_ASSERT_EQUAL(memcmp(buf + len - sizeof(ex_inline), ex_inline, sizeof(ex_inline)), 0);
	memset(cq, 0, sizeof(*cq));
	fill_create_req_inline(cq);
	cq->cq_inline_len = NC_INLINE_MAX + 1;
	cq->cq_inline = buf;
	CU_ASSERT_EQUAL(encode_one(codec_create_req, cq), -EOVERFLOW);

	/* A switch: bytes follow an inline ps_new, not a packed one, nor a
	 * proposal's. */
	memset(sw, 0, sizeof(*sw));
	fill_pack_switch_inline(sw);
	len = encode_len(codec_pack_switch, sw, buf);
	CU_ASSERT_FATAL(len > 4 + sizeof(ex_inline));
	CU_ASSERT_EQUAL(memcmp(buf + len - sizeof(ex_inline), ex_inline, sizeof(ex_inline)), 0);
	sw->ps_flags = NC_SWITCH_PROPOSE;
	rlen = encode_len(codec_pack_switch, sw, ref);
	CU_ASSERT_EQUAL(rlen, len - 4 - sizeof(ex_inline));
	{
		struct nc_pack_switch *d = calloc(1, sizeof(*d));
		struct nc_xdr x;

		CU_ASSERT_PTR_NOT_NULL_FATAL(d);
		nc_xdr_init_decode(&x, ref, rlen);
		nc_wire_pack_switch(&x, d);
		CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
		CU_ASSERT_EQUAL(d->ps_flags, NC_SWITCH_PROPOSE);
		CU_ASSERT_EQUAL(d->ps_new.l_flags, NC_LAYOUT_INLINE);
		/* The same bytes without PROPOSE (ps_flags after the cred, 20
		 * bytes, and the FID) lack the inline bytes. */
		CU_ASSERT_EQUAL(ref[36], NC_SWITCH_PROPOSE);
		ref[36] = 0;
		nc_xdr_init_decode(&x, ref, rlen);
		nc_wire_pack_switch(&x, d);
		CU_ASSERT_EQUAL(nc_xdr_finish(&x), -NC_E_PROTO);
		free(d);
	}
	memset(sw, 0, sizeof(*sw));
	fill_pack_switch_inline(sw);
	sw->ps_new.l_flags = NC_LAYOUT_PACKED;
	sw->ps_new.l_pack_id = 10;
	sw->ps_new.l_pack_len = sizeof(ex_inline);
	len = encode_len(codec_pack_switch, sw, buf);
	sw->ps_inline_len = 0;
	sw->ps_inline = NULL;
	CU_ASSERT_EQUAL(encode_len(codec_pack_switch, sw, ref), len);
	CU_ASSERT_EQUAL(memcmp(ref, buf, len), 0);
	memset(sw, 0, sizeof(*sw));
	fill_pack_switch_inline(sw);
	sw->ps_inline = buf;
	sw->ps_inline_len = NC_INLINE_MAX + 1;
	CU_ASSERT_EQUAL(encode_one(codec_pack_switch, sw), -EOVERFLOW);

	free(ref);
	free(buf);
	free(sw);
	free(cq);
	free(ar);
}

/* Decodes @len bytes of a PACK_COMMIT (exact-size copy) into @m, whose
 * pc_creates has room for NC_PACK_COMMIT_MAX; nc_xdr_finish(). */
static int pack_commit_decode(const uint8_t *bytes, size_t len, struct nc_pack_commit *m,
			      uint8_t **copy)
{
	struct nc_xdr x;

	*copy = xmemdup(bytes, len);
	if (!*copy)
		return -ENOMEM;
	nc_xdr_init_decode(&x, *copy, len);
	nc_wire_pack_commit(&x, m);
	return nc_xdr_finish(&x);
}

static int lookup_many_rep_decode(const uint8_t *bytes, size_t len, struct nc_lookup_many *m,
				  uint8_t **copy)
{
	struct nc_xdr x;

	*copy = xmemdup(bytes, len);
	if (!*copy)
		return -ENOMEM;
	nc_xdr_init_decode(&x, *copy, len);
	nc_wire_lookup_many_rep(&x, m);
	return nc_xdr_finish(&x);
}

/*
 * Inline files in the batched messages (1.8): a PACK_COMMIT that creates
 * inline files (one empty) beside a packed one, and a LOOKUP_MANY reply
 * with an inline file's bytes, one without them (past the budget), a
 * missing name and a striped file.  Round trips field by field, the bytes
 * by reference into the message, every truncation refused.
 */
static void test_inline_batches(void)
{
	struct nc_create_req *cr = calloc(3, sizeof(*cr));
	struct nc_create_req *dcr = calloc(NC_PACK_COMMIT_MAX, sizeof(*dcr));
	struct nc_lookup_ent *le = calloc(4, sizeof(*le));
	struct nc_lookup_ent *dle = calloc(NC_LOOKUP_MANY_MAX, sizeof(*dle));
	struct nc_pack_commit pc = { .pc_pack = 9, .pc_seal = 1, .pc_count = 3 }, dpc;
	struct nc_lookup_many lm = { .lm_count = 4 }, dlm;
	uint8_t *buf = malloc(NC_MAX_BODY), *copy;
	size_t len;
	int bad = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(cr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dcr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(le);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dle);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);

	fill_create_req_inline(&cr[0]);
	fill_create_req_inline(&cr[1]);
	strcpy(cr[1].cq_name, "empty");
	cr[1].cq_fid.f_oid++;
	cr[1].cq_size = 0;
	cr[1].cq_inline = NULL;
	cr[1].cq_inline_len = 0;
	fill_create_req_inline(&cr[2]);
	strcpy(cr[2].cq_name, "packed");
	cr[2].cq_fid.f_oid += 2;
	cr[2].cq_flags = NC_CREATE_FID | NC_CREATE_PACKED;
	cr[2].cq_size = 5000;
	cr[2].cq_layout.l_pack_id = 9;
	cr[2].cq_layout.l_pack_off = 4096;
	cr[2].cq_layout.l_pack_len = 5000;
	cr[2].cq_inline = NULL;
	cr[2].cq_inline_len = 0;
	pc.pc_creates = cr;
	len = encode_len(codec_pack_commit, &pc, buf);
	CU_ASSERT_FATAL(len > 0);
	memset(&dpc, 0, sizeof(dpc));
	dpc.pc_creates = dcr;
	CU_ASSERT_EQUAL(pack_commit_decode(buf, len, &dpc, &copy), 0);
	CU_ASSERT_EQUAL(dpc.pc_pack, 9);
	CU_ASSERT_EQUAL(dpc.pc_seal, 1);
	CU_ASSERT_EQUAL_FATAL(dpc.pc_count, 3);
	for (int i = 0; i < 3; i++)
		CU_ASSERT(eq_create_req_inline(&cr[i], &dcr[i]));
	/* The first file's bytes: by reference, just before the next create. */
	CU_ASSERT(dcr[0].cq_inline > (const void *)copy &&
		  dcr[0].cq_inline < (const void *)(copy + len));
	free(copy);
	for (size_t p = 0; p < len; p++) {
		memset(dcr, 0, NC_PACK_COMMIT_MAX * sizeof(*dcr));
		dpc.pc_creates = dcr;
		if (pack_commit_decode(buf, p, &dpc, &copy) != -NC_E_PROTO)
			bad++;
		free(copy);
	}
	CU_ASSERT_EQUAL(bad, 0);

	le[0].le_status = 0;
	fill_attr_rep_inline(&le[0].le_rep);
	le[1].le_status = 0;
	fill_attr_rep_inline_unsent(&le[1].le_rep);
	le[1].le_rep.ar_attr.a_fid.f_oid++;
	le[2].le_status = nc_status_from_err(-ENOENT);
	le[3].le_status = 0;
	fill_attr_rep(&le[3].le_rep);
	lm.lm_ents = le;
	len = encode_len(codec_lookup_many_rep, &lm, buf);
	CU_ASSERT_FATAL(len > 0);
	memset(&dlm, 0, sizeof(dlm));
	dlm.lm_ents = dle;
	CU_ASSERT_EQUAL(lookup_many_rep_decode(buf, len, &dlm, &copy), 0);
	CU_ASSERT_EQUAL_FATAL(dlm.lm_count, 4);
	for (int i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(dle[i].le_status, le[i].le_status);
		if (i != 2)
			CU_ASSERT(eq_attr_rep(&le[i].le_rep, &dle[i].le_rep));
	}
	CU_ASSERT_EQUAL(nc_err_from_status(dle[2].le_status), -ENOENT);
	CU_ASSERT(dle[0].le_rep.ar_inline > (const void *)copy &&
		  dle[0].le_rep.ar_inline < (const void *)(copy + len));
	free(copy);
	bad = 0;
	for (size_t p = 0; p < len; p++) {
		memset(dle, 0, NC_LOOKUP_MANY_MAX * sizeof(*dle));
		dlm.lm_ents = dle;
		if (lookup_many_rep_decode(buf, p, &dlm, &copy) != -NC_E_PROTO)
			bad++;
		free(copy);
	}
	CU_ASSERT_EQUAL(bad, 0);

	free(buf);
	free(dle);
	free(le);
	free(dcr);
	free(cr);
}

/* MIGRATE: an exclude list past its maximum and a layout that is both
 * packed and named by an object FID are refused both ways. */
static void test_migrate_limits(void)
{
	struct nc_migrate_req *m = calloc(1, sizeof(*m));
	struct nc_migrate_req *d = calloc(1, sizeof(*d));
	uint8_t *buf = malloc(NC_MAX_BODY);
	struct nc_xdr x;
	size_t len, at = 96; /* cred 20, fid 16, flags, gen, size, 2 times, template 20 */
	uint32_t v;

	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	fill_migrate_req(m);
	nc_xdr_init_encode(&x, buf, NC_MAX_BODY);
	nc_wire_migrate_req(&x, m);
	CU_ASSERT_EQUAL_FATAL(x.x_err, 0);
	len = x.x_pos;
	memcpy(&v, buf + at, 4);
	CU_ASSERT_EQUAL(le32toh(v), 2);
	/* Decoding: a count past NC_MIGRATE_EXCLUDE_MAX. */
	v = htole32(NC_MIGRATE_EXCLUDE_MAX + 1);
	memcpy(buf + at, &v, 4);
	nc_xdr_init_decode(&x, buf, len);
	nc_wire_migrate_req(&x, d);
	CU_ASSERT_EQUAL(x.x_err, -NC_E_PROTO);
	/* ... and exactly at the maximum the count decodes (the bytes then
	 * run short, which is a protocol error of its own). */
	CU_ASSERT_EQUAL(encode_one(codec_migrate_req, m), 0);
	m->mg_nexclude = NC_MIGRATE_EXCLUDE_MAX;
	CU_ASSERT_EQUAL(encode_one(codec_migrate_req, m), 0);
	m->mg_nexclude = NC_MIGRATE_EXCLUDE_MAX + 1;
	CU_ASSERT_EQUAL(encode_one(codec_migrate_req, m), -EINVAL);
	/* A layout both packed and named by an object FID. */
	fill_migrate_req(m);
	m->mg_layout.l_flags |= NC_LAYOUT_PACKED;
	CU_ASSERT_EQUAL(encode_one(codec_migrate_req, m), -EINVAL);
	fill_migrate_req(m);
	nc_xdr_init_encode(&x, buf, NC_MAX_BODY);
	nc_wire_migrate_req(&x, m);
	CU_ASSERT_EQUAL_FATAL(x.x_err, 0);
	len = x.x_pos;
	/* mg_layout's flags: after nexclude and two indexes, 12 bytes in. */
	at = 96 + 4 + 8 + 4 + 2 + 1 + 1;
	memcpy(&v, buf + at, 4);
	CU_ASSERT_EQUAL(le32toh(v), NC_LAYOUT_OBJFID);
	v = htole32(NC_LAYOUT_OBJFID | NC_LAYOUT_PACKED);
	memcpy(buf + at, &v, 4);
	nc_xdr_init_decode(&x, buf, len);
	nc_wire_migrate_req(&x, d);
	CU_ASSERT_EQUAL(x.x_err, -NC_E_PROTO);
	free(buf);
	free(d);
	free(m);
	CU_ASSERT_EQUAL(NC_OP_OST_ADMIN, 61);
	CU_ASSERT_EQUAL(NC_OP_POOL, 62);
	CU_ASSERT_EQUAL(NC_OP_POOL_LIST, 63);
	CU_ASSERT_STRING_EQUAL(nc_op_name(NC_OP_POOL_LIST), "POOL_LIST");
	CU_ASSERT_FALSE(nc_op_is_idempotent(NC_OP_POOL));
}

/* A pool name travels only in templates; more indexes than NC_MAX_OSTS
 * are refused both ways. */
static void test_admin_limits(void)
{
	struct nc_layout_msg lm = { 0 };
	struct nc_pool_req *pr = calloc(1, sizeof(*pr));
	uint8_t buf[8192];
	struct nc_xdr x;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pr);
	lm.sl_layout.l_flags = NC_LAYOUT_POOL;
	strcpy(lm.sl_layout.l_pool, "p");
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	nc_wire_layout_msg(&x, &lm);
	CU_ASSERT_EQUAL(x.x_err, -EINVAL);

	pr->pr_count = NC_MAX_OSTS + 1;
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	nc_wire_pool_req(&x, pr);
	CU_ASSERT_EQUAL(x.x_err, -EOVERFLOW);
	/* The same count on the wire, decoded. */
	pr->pr_count = 0;
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	nc_wire_pool_req(&x, pr);
	CU_ASSERT_EQUAL_FATAL(x.x_err, 0);
	buf[x.x_pos - 4] = (NC_MAX_OSTS + 1) & 0xff;
	buf[x.x_pos - 3] = (NC_MAX_OSTS + 1) >> 8;
	nc_xdr_init_decode(&x, buf, x.x_pos);
	nc_wire_pool_req(&x, pr);
	CU_ASSERT_EQUAL(x.x_err, -NC_E_PROTO);
	free(pr);

	CU_ASSERT_TRUE(nc_pool_name_is_valid("a"));
	CU_ASSERT_TRUE(nc_pool_name_is_valid("ssd.pool-1_X"));
	CU_ASSERT_TRUE(nc_pool_name_is_valid("123456789012345"));
	CU_ASSERT_FALSE(nc_pool_name_is_valid("1234567890123456"));
	CU_ASSERT_FALSE(nc_pool_name_is_valid(""));
	CU_ASSERT_FALSE(nc_pool_name_is_valid("a b"));
	CU_ASSERT_FALSE(nc_pool_name_is_valid("a/b"));
}

/* ---- addresses, FIDs, sizes, error strings ---- */

static void test_addr(void)
{
	struct nc_addr a;
	char buf[NC_ADDR_MAX + 16];
	char longhost[NC_ADDR_MAX + 16];
	static const char *const bad[] = {
		"tcp://127.0.0.1",      /* no port */
		"127.0.0.1",            /* no port, no scheme */
		"host:",                /* empty port */
		"host:70000",           /* port out of range */
		"host:65536",
		"host:-1",
		"host:80x",
		"host:0x50",
		":80",                  /* empty host */
		"tcp://:80",
		"[]:80",
		"[::1]80",              /* no colon after the bracket */
		"[::1",
		"://h:1",               /* empty scheme */
		"waytoolong://h:1",     /* scheme past its field */
		"garbage",
		"",
	};

	CU_ASSERT_EQUAL(nc_addr_parse("tcp://127.0.0.1:7300", &a), 0);
	CU_ASSERT_STRING_EQUAL(a.a_scheme, "tcp");
	CU_ASSERT_STRING_EQUAL(a.a_host, "127.0.0.1");
	CU_ASSERT_EQUAL(a.a_port, 7300);

	CU_ASSERT_EQUAL(nc_addr_parse("node7:7301", &a), 0);
	CU_ASSERT_STRING_EQUAL(a.a_scheme, "tcp");
	CU_ASSERT_STRING_EQUAL(a.a_host, "node7");
	CU_ASSERT_EQUAL(a.a_port, 7301);

	CU_ASSERT_EQUAL(nc_addr_parse("[::1]:80", &a), 0);
	CU_ASSERT_STRING_EQUAL(a.a_scheme, "tcp");
	CU_ASSERT_STRING_EQUAL(a.a_host, "::1");
	CU_ASSERT_EQUAL(a.a_port, 80);
	nc_addr_format(&a, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "tcp://[::1]:80");

	CU_ASSERT_EQUAL(nc_addr_parse("rdma://h:1", &a), 0);
	CU_ASSERT_STRING_EQUAL(a.a_scheme, "rdma");
	CU_ASSERT_STRING_EQUAL(a.a_host, "h");
	CU_ASSERT_EQUAL(a.a_port, 1);
	nc_addr_format(&a, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "rdma://h:1");
	/* rdma exactly when configure found its libraries. */
#ifdef HAVE_RDMA
	CU_ASSERT_PTR_EQUAL(nc_xprt_find(&a), &nc_xprt_rdma);
#else
	CU_ASSERT_PTR_NULL(nc_xprt_find(&a));
#endif
	CU_ASSERT_EQUAL(nc_addr_parse("sctp://h:1", &a), 0);
	CU_ASSERT_PTR_NULL(nc_xprt_find(&a));

	CU_ASSERT_EQUAL(nc_addr_parse("tcp://127.0.0.1:0", &a), 0);
	CU_ASSERT_EQUAL(a.a_port, 0);
	CU_ASSERT_PTR_EQUAL(nc_xprt_find(&a), &nc_xprt_tcp);
	CU_ASSERT_EQUAL(nc_addr_parse("h:65535", &a), 0);
	CU_ASSERT_EQUAL(a.a_port, 65535);
	nc_addr_format(&a, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "tcp://h:65535");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = nc_addr_parse(bad[i], &a);

		if (rc != -NC_E_ADDR)
			fprintf(stderr, "  address '%s' gives %d\n", bad[i], rc);
		CU_ASSERT_EQUAL(rc, -NC_E_ADDR);
	}

	/* A host name longer than the field. */
	memset(longhost, 'h', NC_ADDR_MAX + 1);
	strcpy(longhost + NC_ADDR_MAX + 1, ":1");
	CU_ASSERT_EQUAL(nc_addr_parse(longhost, &a), -NC_E_ADDR);
}

static void test_fid_str(void)
{
	struct nc_fid f = { 0x0000000200000401ull, 0xffffffffffffffffull }, g;
	char buf[NC_FID_STR_LEN];
	static const char *const bad[] = {
		"", ":", "1:", ":1", "1", "xyz:1", "1:xyz", "1:2:3", "1 :2",
		"[1:2", "1:2]", "[]", "-1:2", "11111111111111111:2",
		"1:11111111111111111", "0x1:2",
	};

	nc_fid_to_str(&f, buf);
	CU_ASSERT_STRING_EQUAL(buf, "0000000200000401:ffffffffffffffff");
	CU_ASSERT_EQUAL(strlen(buf), NC_FID_STR_LEN - 1);
	memset(&g, 0, sizeof(g));
	CU_ASSERT_EQUAL(nc_fid_from_str(buf, &g), 0);
	CU_ASSERT_TRUE(nc_fid_eq(&f, &g));

	CU_ASSERT_EQUAL(nc_fid_from_str("[200000401:2A]", &g), 0);
	CU_ASSERT_EQUAL(g.f_seq, 0x200000401ull);
	CU_ASSERT_EQUAL(g.f_oid, 0x2aull);
	CU_ASSERT_EQUAL(nc_fid_from_str("1:1", &g), 0);
	nc_fid_root(&f);
	CU_ASSERT_TRUE(nc_fid_eq(&f, &g));
	CU_ASSERT_FALSE(nc_fid_is_zero(&g));

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = nc_fid_from_str(bad[i], &g);

		if (rc != -EINVAL)
			fprintf(stderr, "  fid '%s' gives %d\n", bad[i], rc);
		CU_ASSERT_EQUAL(rc, -EINVAL);
	}
}

static void test_parse_size(void)
{
	unsigned long long v = 0;
	static const char *const bad[] = {
		"-1", "1Q", "", "K", "1MiBx", "1KK", "1 K", "1.5M",
		"18446744073709551616", "16777216T",
		/* strtoull skips the blank and negates: it must not wrap. */
		" -1", "\t-5",
	};

	CU_ASSERT_EQUAL(nc_parse_size("4K", &v), 0);
	CU_ASSERT_EQUAL(v, 4096ull);
	CU_ASSERT_EQUAL(nc_parse_size("1M", &v), 0);
	CU_ASSERT_EQUAL(v, 1ull << 20);
	CU_ASSERT_EQUAL(nc_parse_size("64MiB", &v), 0);
	CU_ASSERT_EQUAL(v, 64ull << 20);
	CU_ASSERT_EQUAL(nc_parse_size("1G", &v), 0);
	CU_ASSERT_EQUAL(v, 1ull << 30);
	CU_ASSERT_EQUAL(nc_parse_size("2t", &v), 0);
	CU_ASSERT_EQUAL(v, 2ull << 40);
	CU_ASSERT_EQUAL(nc_parse_size("8kb", &v), 0);
	CU_ASSERT_EQUAL(v, 8192ull);
	CU_ASSERT_EQUAL(nc_parse_size("12345", &v), 0);
	CU_ASSERT_EQUAL(v, 12345ull);
	CU_ASSERT_EQUAL(nc_parse_size("0", &v), 0);
	CU_ASSERT_EQUAL(v, 0ull);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc;

		v = 777;
		rc = nc_parse_size(bad[i], &v);
		if (rc != -EINVAL)
			fprintf(stderr, "  size '%s' gives %d (%llu)\n", bad[i], rc, v);
		CU_ASSERT_EQUAL(rc, -EINVAL);
		/* A rejected size leaves the output alone. */
		CU_ASSERT_EQUAL(v, 777ull);
	}
}

static void test_strerror(void)
{
	CU_ASSERT_STRING_EQUAL(nc_strerror(-ENOENT), strerror(ENOENT));
	CU_ASSERT_STRING_EQUAL(nc_strerror(ENOENT), strerror(ENOENT));
	CU_ASSERT_STRING_EQUAL(nc_strerror(-NC_E_PROTO), "malformed protocol message");
	CU_ASSERT_STRING_EQUAL(nc_strerror(NC_E_FSNAME), "filesystem name does not match");
	CU_ASSERT_STRING_EQUAL(nc_strerror(-NC_E_HANDSHAKE),
			       "connection handshake missing or refused");
	CU_ASSERT_STRING_EQUAL(nc_strerror(0), "success");
	CU_ASSERT_STRING_EQUAL(nc_strerror(-5000), "unknown nacre error");
	/* Project codes never collide with errno values. */
	CU_ASSERT(NC_E_PROTO > 4095);
}

/* ---- config files ---- */

static char *tmpdir_make(void)
{
	const char *base = getenv("TMPDIR");
	char *t;

	if (asprintf(&t, "%s/nacre-wire-XXXXXX", base && *base ? base : P_tmpdir) < 0)
		return NULL;
	if (!mkdtemp(t)) {
		free(t);
		return NULL;
	}
	return t;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

static void test_config_expand(void)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "fsname", required_argument, NULL, 'f' },
		{ "foreground", no_argument, NULL, 'F' },
		{ "log-level", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	char *dir = tmpdir_make(), *conf = NULL, *badconf = NULL, *eqarg = NULL;
	char **nv = NULL;
	int nc = 0, c, threads = 0;
	bool fg = false;
	char fsname[32] = "", level[16] = "";

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	CU_ASSERT_FATAL(asprintf(&conf, "%s/mds.conf", dir) > 0);
	CU_ASSERT_FATAL(asprintf(&badconf, "%s/bad.conf", dir) > 0);
	CU_ASSERT_EQUAL_FATAL(write_file(conf,
		"# nacre-mds settings\n"
		"\n"
		"   threads = 8   \n"
		"fsname=demo # trailing comment\n"
		"\tforeground\n"
		"log-level =   debug\n"
		"   # indented comment\n"), 0);

	{
		char *argv[] = { "nacre-mds", "--config", conf, "--threads=2", NULL };

		CU_ASSERT_EQUAL(nc_config_expand(4, argv, &nc, &nv), 0);
	}
	CU_ASSERT_EQUAL(nc, 6);
	if (nc == 6) {
		CU_ASSERT_STRING_EQUAL(nv[0], "nacre-mds");
		CU_ASSERT_STRING_EQUAL(nv[1], "--threads=8");
		CU_ASSERT_STRING_EQUAL(nv[2], "--fsname=demo");
		CU_ASSERT_STRING_EQUAL(nv[3], "--foreground");
		CU_ASSERT_STRING_EQUAL(nv[4], "--log-level=debug");
		CU_ASSERT_STRING_EQUAL(nv[5], "--threads=2");
		CU_ASSERT_PTR_NULL(nv[6]);

		/* Parsed the way a daemon parses it: the command line wins. */
		optind = 1;
		opterr = 0;
		while ((c = getopt_long(nc, nv, "", opts, NULL)) != -1) {
			if (c == 't')
				threads = atoi(optarg);
			else if (c == 'f')
				snprintf(fsname, sizeof(fsname), "%s", optarg);
			else if (c == 'F')
				fg = true;
			else if (c == 'l')
				snprintf(level, sizeof(level), "%s", optarg);
		}
		CU_ASSERT_EQUAL(threads, 2);
		CU_ASSERT_STRING_EQUAL(fsname, "demo");
		CU_ASSERT_TRUE(fg);
		CU_ASSERT_STRING_EQUAL(level, "debug");
		optind = 1;
	}
	if (nv)
		nc_config_free(nc, nv);
	nv = NULL;

	/* "--config=FILE" and an option before it, which the file overrides. */
	CU_ASSERT_FATAL(asprintf(&eqarg, "--config=%s", conf) > 0);
	{
		char *argv[] = { "nacre-oss", "--fsname=early", eqarg, NULL };

		CU_ASSERT_EQUAL(nc_config_expand(3, argv, &nc, &nv), 0);
	}
	CU_ASSERT_EQUAL(nc, 6);
	if (nc == 6) {
		CU_ASSERT_STRING_EQUAL(nv[1], "--fsname=early");
		CU_ASSERT_STRING_EQUAL(nv[3], "--fsname=demo");
	}
	if (nv)
		nc_config_free(nc, nv);
	nv = NULL;

	/* No file name, a missing file, a bad option name. */
	{
		char *argv[] = { "nacre-mds", "--config", NULL };

		CU_ASSERT_EQUAL(nc_config_expand(2, argv, &nc, &nv), -NC_E_CONFIG);
	}
	{
		char *argv[] = { "nacre-mds", "--config", badconf, NULL };

		CU_ASSERT_EQUAL(nc_config_expand(3, argv, &nc, &nv), -ENOENT);
		CU_ASSERT_EQUAL_FATAL(write_file(badconf, "threads = 1\nbad key = 2\n"), 0);
		CU_ASSERT_EQUAL(nc_config_expand(3, argv, &nc, &nv), -NC_E_CONFIG);
		CU_ASSERT_EQUAL_FATAL(write_file(badconf, " = 2\n"), 0);
		CU_ASSERT_EQUAL(nc_config_expand(3, argv, &nc, &nv), -NC_E_CONFIG);
	}

	unlink(conf);
	unlink(badconf);
	rmdir(dir);
	free(eqarg);
	free(badconf);
	free(conf);
	free(dir);
}

/* ---- fuzz ---- */

/* Random and mutated buffers into every decoder: no crash, no leak, no read
 * past the buffer (run under ASan), and whatever decodes re-encodes to the
 * same bytes (the encoding is canonical). */
static void test_fuzz(void)
{
	uint8_t *golden[N_SHAPES];
	size_t glen[N_SHAPES];
	uint8_t *buf = malloc(8192), *re = malloc(NC_MAX_BODY);
	void *targets[N_SHAPES];
	unsigned long decoded = 0, noncanon = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(re);
	for (size_t i = 0; i < N_SHAPES; i++) {
		golden[i] = example_encode(&shapes[i], &glen[i]);
		targets[i] = malloc(shapes[i].sh_size);
		CU_ASSERT_PTR_NOT_NULL_FATAL(golden[i]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(targets[i]);
	}
	rng_state = FUZZ_SEED;
	for (int round = 0; round < FUZZ_ROUNDS; round++) {
		uint64_t r = rng_next();
		size_t len;
		uint8_t *in;

		if (r & 1) {
			/* Pure noise, mostly short, sometimes long. */
			len = (r >> 8) % 4 ? (size_t)(rng_next() % 160)
					   : (size_t)(rng_next() % 8192);
			for (size_t i = 0; i < len; i++)
				buf[i] = (uint8_t)rng_next();
		} else {
			/* A valid message with a few bytes changed, cut or grown. */
			size_t s = (size_t)(rng_next() % N_SHAPES);
			int flips = 1 + (int)(rng_next() % 4);

			len = glen[s];
			memcpy(buf, golden[s], len);
			for (int f = 0; f < flips && len; f++)
				buf[rng_next() % len] ^= (uint8_t)(1u << (rng_next() % 8));
			switch (rng_next() % 4) {
			case 0:
				len = len ? (size_t)(rng_next() % len) : 0;
				break;
			case 1:
				buf[len++] = (uint8_t)rng_next();
				break;
			default:
				break;
			}
		}
		in = xmemdup(buf, len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(in);
		for (size_t s = 0; s < N_SHAPES; s++) {
			const struct shape *sh = &shapes[s];
			void *m = targets[s];
			struct nc_xdr x;

			if (sh->sh_prep)
				sh->sh_prep(m);
			nc_xdr_init_decode(&x, in, len);
			sh->sh_codec(&x, m);
			if (x.x_pos > len)
				CU_FAIL("decoder cursor passed the end");
			if (nc_xdr_finish(&x) == 0) {
				decoded++;
				nc_xdr_init_encode(&x, re, NC_MAX_BODY);
				sh->sh_codec(&x, m);
				if (nc_xdr_finish(&x) || x.x_pos != len ||
				    memcmp(re, in, len)) {
					noncanon++;
					fprintf(stderr, "  %s: round %d decodes but re-encodes differently\n",
						sh->sh_name, round);
				}
			}
			if (x.x_err == 0 && sh->sh_fini)
				sh->sh_fini(m);
		}
		free(in);
	}
	CU_ASSERT_EQUAL(noncanon, 0);
	/* The mutations must reach the success path too, or the loop tests little. */
	CU_ASSERT(decoded > 1000);
	for (size_t i = 0; i < N_SHAPES; i++) {
		free(golden[i]);
		free(targets[i]);
	}
	free(re);
	free(buf);
}

int main(void)
{
	CU_pSuite suite;
	unsigned int failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite("wire", NULL, NULL);
	if (!suite ||
	    !CU_add_test(suite, "header round trip", test_hdr_roundtrip) ||
	    !CU_add_test(suite, "header rejects", test_hdr_reject) ||
	    !CU_add_test(suite, "header byte offsets", test_hdr_offsets) ||
	    !CU_add_test(suite, "xdr primitives", test_xdr_primitives) ||
	    !CU_add_test(suite, "xdr strings and opaques", test_xdr_str_opaque) ||
	    !CU_add_test(suite, "shapes round trip", test_shapes_roundtrip) ||
	    !CU_add_test(suite, "shapes truncated", test_shapes_truncated) ||
	    !CU_add_test(suite, "shapes into small buffers", test_shapes_small_buffer) ||
	    !CU_add_test(suite, "golden bytes", test_golden) ||
	    !CU_add_test(suite, "decode limits", test_decode_limits) ||
	    !CU_add_test(suite, "encode limits", test_encode_limits) ||
	    !CU_add_test(suite, "status mapping", test_status_map) ||
	    !CU_add_test(suite, "opcode table", test_opcodes) ||
	    !CU_add_test(suite, "OST admin and pool limits", test_admin_limits) ||
	    !CU_add_test(suite, "addresses", test_addr) ||
	    !CU_add_test(suite, "fid strings", test_fid_str) ||
	    !CU_add_test(suite, "sizes", test_parse_size) ||
	    !CU_add_test(suite, "error strings", test_strerror) ||
	    !CU_add_test(suite, "config files", test_config_expand) ||
	    !CU_add_test(suite, "migrate limits", test_migrate_limits) ||
	    !CU_add_test(suite, "pack alloc limits", test_pack_alloc_limits) ||
	    !CU_add_test(suite, "inline file limits", test_inline_limits) ||
	    !CU_add_test(suite, "inline files in batches", test_inline_batches) ||
	    !CU_add_test(suite, "decoder fuzz", test_fuzz)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
