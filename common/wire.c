/* SPDX-License-Identifier: MIT */
/*
 * Encoding and decoding of nacre messages (see wire.h for the layout).
 * Every decoder checks lengths against the buffer before it reads.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/errors.h"
#include "common/wire.h"

_Static_assert(sizeof(struct nc_fid) == 16, "fid is two u64");

/* ---- opcodes and statuses ---- */

const char *nc_op_name(uint16_t opcode)
{
	switch (opcode) {
#define NC_OP_NAME(name, value, idem) \
	case value:                   \
		return #name;
		NC_OPCODES(NC_OP_NAME)
#undef NC_OP_NAME
	default:
		return "UNKNOWN";
	}
}

bool nc_op_is_known(uint16_t opcode)
{
	switch (opcode) {
#define NC_OP_KNOWN(name, value, idem) case value:
		NC_OPCODES(NC_OP_KNOWN)
#undef NC_OP_KNOWN
		return true;
	default:
		return false;
	}
}

bool nc_op_is_idempotent(uint16_t opcode)
{
	switch (opcode) {
#define NC_OP_IDEM(name, value, idem) \
	case value:                   \
		return idem;
		NC_OPCODES(NC_OP_IDEM)
#undef NC_OP_IDEM
	default:
		return false;
	}
}

int32_t nc_status_from_err(int err)
{
	switch (err) {
#define NC_WS_FROM(name, value, e) \
	case e:                    \
		return value;
		NC_WIRE_STATUS(NC_WS_FROM)
#undef NC_WS_FROM
	default:
		return NC_WS_IO;
	}
}

int nc_err_from_status(int32_t status)
{
	switch (status) {
#define NC_WS_TO(name, value, e) \
	case value:              \
		return e;
		NC_WIRE_STATUS(NC_WS_TO)
#undef NC_WS_TO
	default:
		return -EIO;
	}
}

/* ---- header ---- */

static void put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return le16toh(v);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

void nc_hdr_encode(const struct nc_msg_hdr *h, uint8_t out[NC_HDR_LEN])
{
	put32(out + 0, h->mh_magic);
	put16(out + 4, h->mh_version);
	put16(out + 6, h->mh_opcode);
	put32(out + 8, h->mh_flags);
	put32(out + 12, (uint32_t)h->mh_status);
	put64(out + 16, h->mh_reqid);
	put32(out + 24, h->mh_body_len);
	put32(out + 28, h->mh_bulk_len);
}

int nc_hdr_decode(const uint8_t in[NC_HDR_LEN], struct nc_msg_hdr *h)
{
	h->mh_magic = get32(in + 0);
	h->mh_version = get16(in + 4);
	h->mh_opcode = get16(in + 6);
	h->mh_flags = get32(in + 8);
	h->mh_status = (int32_t)get32(in + 12);
	h->mh_reqid = get64(in + 16);
	h->mh_body_len = get32(in + 24);
	h->mh_bulk_len = get32(in + 28);
	if (h->mh_magic != NC_MSG_MAGIC)
		return -NC_E_PROTO;
	if ((h->mh_version >> 8) != NC_PROTO_MAJOR)
		return -NC_E_VERSION;
	if (h->mh_body_len > NC_MAX_BODY || h->mh_bulk_len > NC_MAX_BULK)
		return -NC_E_PROTO;
	return 0;
}

/* ---- XDR primitives ---- */

void nc_xdr_init_encode(struct nc_xdr *x, void *buf, size_t cap)
{
	x->x_op = NC_XDR_ENCODE;
	x->x_buf = buf;
	x->x_len = cap;
	x->x_pos = 0;
	x->x_err = 0;
	x->x_cred_fix = NULL;
	x->x_cred_arg = NULL;
}

void nc_xdr_init_decode(struct nc_xdr *x, const void *buf, size_t len)
{
	x->x_op = NC_XDR_DECODE;
	/* Decoding never writes through x_buf. */
	x->x_buf = (uint8_t *)(uintptr_t)buf;
	x->x_len = len;
	x->x_pos = 0;
	x->x_err = 0;
	x->x_cred_fix = NULL;
	x->x_cred_arg = NULL;
}

int nc_xdr_finish(struct nc_xdr *x)
{
	if (x->x_err)
		return x->x_err;
	if (x->x_op == NC_XDR_DECODE && x->x_pos != x->x_len)
		return -NC_E_PROTO;
	return 0;
}

/* Reserves @n bytes at the cursor; NULL (and x_err set) when they do not fit. */
static uint8_t *xdr_room(struct nc_xdr *x, size_t n)
{
	uint8_t *p;

	if (x->x_err)
		return NULL;
	if (n > x->x_len - x->x_pos) {
		x->x_err = x->x_op == NC_XDR_ENCODE ? -EOVERFLOW : -NC_E_PROTO;
		return NULL;
	}
	p = x->x_buf + x->x_pos;
	x->x_pos += n;
	return p;
}

void nc_xdr_u8(struct nc_xdr *x, uint8_t *v)
{
	uint8_t *p = xdr_room(x, 1);

	if (!p)
		return;
	if (x->x_op == NC_XDR_ENCODE)
		*p = *v;
	else
		*v = *p;
}

void nc_xdr_u16(struct nc_xdr *x, uint16_t *v)
{
	uint8_t *p = xdr_room(x, 2);

	if (!p)
		return;
	if (x->x_op == NC_XDR_ENCODE)
		put16(p, *v);
	else
		*v = get16(p);
}

void nc_xdr_u32(struct nc_xdr *x, uint32_t *v)
{
	uint8_t *p = xdr_room(x, 4);

	if (!p)
		return;
	if (x->x_op == NC_XDR_ENCODE)
		put32(p, *v);
	else
		*v = get32(p);
}

void nc_xdr_u64(struct nc_xdr *x, uint64_t *v)
{
	uint8_t *p = xdr_room(x, 8);

	if (!p)
		return;
	if (x->x_op == NC_XDR_ENCODE)
		put64(p, *v);
	else
		*v = get64(p);
}

void nc_xdr_i64(struct nc_xdr *x, int64_t *v)
{
	uint64_t u = (uint64_t)*v;

	nc_xdr_u64(x, &u);
	if (x->x_op == NC_XDR_DECODE && !x->x_err)
		*v = (int64_t)u;
}

void nc_xdr_fixed(struct nc_xdr *x, void *p, size_t n)
{
	uint8_t *q = xdr_room(x, n);

	if (!q)
		return;
	if (x->x_op == NC_XDR_ENCODE)
		memcpy(q, p, n);
	else
		memcpy(p, q, n);
}

void nc_xdr_str(struct nc_xdr *x, char *s, size_t max)
{
	uint16_t len = 0;
	uint8_t *p;

	if (x->x_op == NC_XDR_ENCODE) {
		size_t n = strnlen(s, max + 1);

		if (n > max || n > UINT16_MAX) {
			if (!x->x_err)
				x->x_err = -ENAMETOOLONG;
			return;
		}
		len = (uint16_t)n;
	}
	nc_xdr_u16(x, &len);
	if (x->x_err)
		return;
	if (x->x_op == NC_XDR_DECODE && len > max) {
		x->x_err = -NC_E_PROTO;
		return;
	}
	p = xdr_room(x, len);
	if (!p)
		return;
	if (x->x_op == NC_XDR_ENCODE) {
		memcpy(p, s, len);
	} else {
		/* An embedded NUL would let a name mean two things. */
		if (memchr(p, '\0', len)) {
			x->x_err = -NC_E_PROTO;
			return;
		}
		memcpy(s, p, len);
		s[len] = '\0';
	}
}

void nc_xdr_opaque(struct nc_xdr *x, const void **p, uint32_t *n, uint32_t max)
{
	uint8_t *q;

	if (x->x_op == NC_XDR_ENCODE && *n > max) {
		if (!x->x_err)
			x->x_err = -EOVERFLOW;
		return;
	}
	nc_xdr_u32(x, n);
	if (x->x_err)
		return;
	if (x->x_op == NC_XDR_DECODE && *n > max) {
		x->x_err = -NC_E_PROTO;
		return;
	}
	q = xdr_room(x, *n);
	if (!q)
		return;
	if (x->x_op == NC_XDR_ENCODE) {
		if (*n)
			memcpy(q, *p, *n);
	} else {
		*p = q;
	}
}

/* ---- composite types ---- */

void nc_xdr_fid(struct nc_xdr *x, struct nc_fid *f)
{
	nc_xdr_u64(x, &f->f_seq);
	nc_xdr_u64(x, &f->f_oid);
}

static void xdr_time(struct nc_xdr *x, struct nc_timespec *t)
{
	nc_xdr_i64(x, &t->t_sec);
	nc_xdr_u32(x, &t->t_nsec);
	if (x->x_op == NC_XDR_DECODE && !x->x_err && t->t_nsec >= 1000000000u)
		x->x_err = -NC_E_PROTO;
}

void nc_xdr_attr(struct nc_xdr *x, struct nc_attr *a)
{
	nc_xdr_fid(x, &a->a_fid);
	nc_xdr_u32(x, &a->a_mode);
	nc_xdr_u32(x, &a->a_uid);
	nc_xdr_u32(x, &a->a_gid);
	nc_xdr_u32(x, &a->a_nlink);
	nc_xdr_u64(x, &a->a_size);
	nc_xdr_u64(x, &a->a_blocks);
	nc_xdr_u32(x, &a->a_rdev);
	nc_xdr_u32(x, &a->a_flags);
	xdr_time(x, &a->a_atime);
	xdr_time(x, &a->a_mtime);
	xdr_time(x, &a->a_ctime);
}

void nc_xdr_layout(struct nc_xdr *x, struct nc_layout *l)
{
	nc_xdr_u32(x, &l->l_stripe_size);
	nc_xdr_u16(x, &l->l_stripe_count);
	nc_xdr_u8(x, &l->l_k);
	nc_xdr_u8(x, &l->l_m);
	nc_xdr_u32(x, &l->l_flags);
	nc_xdr_u32(x, &l->l_first_ost);
	nc_xdr_u32(x, &l->l_gen);
	if (x->x_err)
		return;
	if (l->l_flags & ~NC_LAYOUT_FLAGS) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
		return;
	}
	if (l->l_flags & NC_LAYOUT_TEMPLATE) {
		if (l->l_flags & NC_LAYOUT_PACK)
			nc_xdr_u32(x, &l->l_pack_max);
		if (l->l_flags & NC_LAYOUT_POOL)
			nc_xdr_str(x, l->l_pool, NC_POOL_NAME_MAX);
		if (l->l_flags & NC_LAYOUT_INLINE) {
			nc_xdr_u32(x, &l->l_inline_max);
			if (!x->x_err && l->l_inline_max > NC_INLINE_MAX)
				x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
		}
		return; /* templates hold no shards */
	}
	if ((l->l_flags & NC_LAYOUT_INLINE) &&
	    ((l->l_flags & (NC_LAYOUT_PACKED | NC_LAYOUT_OBJFID)) || l->l_stripe_count)) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
		return; /* an inline file has no objects */
	}
	if (l->l_flags & NC_LAYOUT_POOL) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
		return; /* a pool is a template's business */
	}
	if (l->l_flags & NC_LAYOUT_PACKED) {
		nc_xdr_u64(x, &l->l_pack_id);
		nc_xdr_u64(x, &l->l_pack_off);
		nc_xdr_u64(x, &l->l_pack_len);
		if (x->x_err)
			return;
	}
	if (l->l_flags & NC_LAYOUT_OBJFID) {
		if (l->l_flags & NC_LAYOUT_PACKED) {
			x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
			return;
		}
		nc_xdr_fid(x, &l->l_obj);
		if (x->x_err)
			return;
	}
	if (l->l_stripe_count > NC_MAX_STRIPES) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EOVERFLOW;
		return;
	}
	for (uint32_t i = 0; i < l->l_stripe_count; i++) {
		nc_xdr_u32(x, &l->l_shards[i].ls_ost);
		nc_xdr_u32(x, &l->l_shards[i].ls_flags);
	}
}

void nc_xdr_cred(struct nc_xdr *x, struct nc_cred *c)
{
	nc_xdr_u32(x, &c->c_uid);
	nc_xdr_u32(x, &c->c_gid);
	nc_xdr_u32(x, &c->c_ngroups);
	if (x->x_err)
		return;
	if (c->c_ngroups > NC_MAX_GROUPS) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EOVERFLOW;
		return;
	}
	for (uint32_t i = 0; i < c->c_ngroups; i++)
		nc_xdr_u32(x, &c->c_groups[i]);
	if (!x->x_err && x->x_op == NC_XDR_DECODE && x->x_cred_fix)
		x->x_cred_fix(c, x->x_cred_arg);
}

/* Also the MDT's record format (mds/ns_changelog.c). */
void nc_xdr_changelog_rec(struct nc_xdr *x, struct nc_changelog_rec *r)
{
	nc_xdr_u64(x, &r->cr_seq);
	nc_xdr_u32(x, &r->cr_type);
	nc_xdr_u32(x, &r->cr_uid);
	nc_xdr_u32(x, &r->cr_gid);
	xdr_time(x, &r->cr_time);
	nc_xdr_fid(x, &r->cr_fid);
	nc_xdr_fid(x, &r->cr_parent);
	nc_xdr_str(x, r->cr_name, NC_NAME_MAX);
	nc_xdr_fid(x, &r->cr_sparent);
	nc_xdr_str(x, r->cr_sname, NC_NAME_MAX);
}

void nc_xdr_ost_info(struct nc_xdr *x, struct nc_ost_info *o)
{
	nc_xdr_u32(x, &o->o_index);
	nc_xdr_u32(x, &o->o_state);
	nc_xdr_fixed(x, o->o_uuid, sizeof(o->o_uuid));
	nc_xdr_str(x, o->o_addr, NC_ADDR_MAX);
}

void nc_xdr_statfs(struct nc_xdr *x, struct nc_statfs *s)
{
	nc_xdr_u64(x, &s->s_total);
	nc_xdr_u64(x, &s->s_free);
	nc_xdr_u64(x, &s->s_avail);
	nc_xdr_u64(x, &s->s_files);
	nc_xdr_u64(x, &s->s_ffree);
	nc_xdr_u32(x, &s->s_bsize);
	nc_xdr_u32(x, &s->s_namemax);
}

/* ---- messages ---- */

void nc_wire_connect_req(struct nc_xdr *x, struct nc_connect_req *m)
{
	nc_xdr_u16(x, &m->cr_major);
	nc_xdr_u16(x, &m->cr_minor);
	nc_xdr_u32(x, &m->cr_role);
	nc_xdr_u64(x, &m->cr_features);
	nc_xdr_str(x, m->cr_fsname, NC_FSNAME_MAX);
	/* Decoded after cr_features, so the bit is known in both directions. */
	if (m->cr_features & NC_FEAT_AUTH)
		nc_xdr_fixed(x, m->cr_nonce, sizeof(m->cr_nonce));
	if (m->cr_features & NC_FEAT_REPLAY)
		nc_xdr_fixed(x, m->cr_client, sizeof(m->cr_client));
}

void nc_wire_connect_rep(struct nc_xdr *x, struct nc_connect_rep *m)
{
	nc_xdr_u16(x, &m->cp_major);
	nc_xdr_u16(x, &m->cp_minor);
	nc_xdr_u32(x, &m->cp_role);
	nc_xdr_u64(x, &m->cp_features);
	nc_xdr_fixed(x, m->cp_uuid, sizeof(m->cp_uuid));
	if (m->cp_features & NC_FEAT_AUTH)
		nc_xdr_fixed(x, m->cp_nonce, sizeof(m->cp_nonce));
}

void nc_wire_auth(struct nc_xdr *x, struct nc_auth_msg *m)
{
	nc_xdr_fixed(x, m->am_mac, sizeof(m->am_mac));
}

void nc_wire_ost_register_req(struct nc_xdr *x, struct nc_ost_register_req *m)
{
	nc_xdr_ost_info(x, &m->rr_ost);
}

void nc_wire_ost_list_rep(struct nc_xdr *x, struct nc_ost_list_rep *m)
{
	nc_xdr_u32(x, &m->ol_count);
	if (x->x_err)
		return;
	if (m->ol_count > NC_MAX_OSTS) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EOVERFLOW;
		return;
	}
	for (uint32_t i = 0; i < m->ol_count; i++)
		nc_xdr_ost_info(x, &m->ol_osts[i]);
}

void nc_wire_statfs_rep(struct nc_xdr *x, struct nc_statfs_rep *m)
{
	nc_xdr_statfs(x, &m->sr_stat);
}

void nc_wire_name_req(struct nc_xdr *x, struct nc_name_req *m)
{
	nc_xdr_cred(x, &m->nr_cred);
	nc_xdr_fid(x, &m->nr_parent);
	nc_xdr_str(x, m->nr_name, NC_NAME_MAX);
	nc_xdr_u32(x, &m->nr_flags);
}

void nc_wire_fid_req(struct nc_xdr *x, struct nc_fid_req *m)
{
	nc_xdr_cred(x, &m->fr_cred);
	nc_xdr_fid(x, &m->fr_fid);
	nc_xdr_u32(x, &m->fr_flags);
}

void nc_wire_create_req(struct nc_xdr *x, struct nc_create_req *m)
{
	nc_xdr_cred(x, &m->cq_cred);
	nc_xdr_fid(x, &m->cq_parent);
	nc_xdr_str(x, m->cq_name, NC_NAME_MAX);
	nc_xdr_u32(x, &m->cq_mode);
	nc_xdr_u32(x, &m->cq_rdev);
	nc_xdr_u32(x, &m->cq_flags);
	nc_xdr_str(x, m->cq_target, NC_SYMLINK_MAX);
	if (x->x_err)
		return;
	if (m->cq_flags & NC_CREATE_FID)
		nc_xdr_fid(x, &m->cq_fid);
	if (m->cq_flags & NC_CREATE_PACKED) {
		nc_xdr_u64(x, &m->cq_size);
		xdr_time(x, &m->cq_mtime);
		nc_xdr_u64(x, &m->cq_layout.l_pack_id);
		nc_xdr_u64(x, &m->cq_layout.l_pack_off);
		nc_xdr_u64(x, &m->cq_layout.l_pack_len);
	}
	if ((m->cq_flags & NC_CREATE_INLINE) && !x->x_err) {
		if (!(m->cq_flags & NC_CREATE_PACKED)) {
			x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
			return;
		}
		nc_xdr_opaque(x, &m->cq_inline, &m->cq_inline_len, NC_INLINE_MAX);
	}
}

void nc_wire_fid_grant(struct nc_xdr *x, struct nc_fid_grant *m)
{
	nc_xdr_cred(x, &m->fg_cred);
	nc_xdr_u64(x, &m->fg_seq);
	nc_xdr_u64(x, &m->fg_first);
	nc_xdr_u32(x, &m->fg_count);
}

void nc_wire_pack_alloc(struct nc_xdr *x, struct nc_pack_alloc *m)
{
	nc_xdr_cred(x, &m->pa_cred);
	nc_xdr_fid(x, &m->pa_dir);
	nc_xdr_layout(x, &m->pa_layout);
	/* Optional (1.6): absent when empty, so that a 1.5 peer reads it. */
	if (x->x_op == NC_XDR_DECODE ? x->x_pos == x->x_len : m->pa_navoid == 0) {
		m->pa_navoid = 0;
		return;
	}
	nc_xdr_u32(x, &m->pa_navoid);
	if (x->x_err)
		return;
	if (m->pa_navoid > NC_PACK_AVOID_MAX) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
		return;
	}
	for (uint32_t i = 0; i < m->pa_navoid; i++)
		nc_xdr_u32(x, &m->pa_avoid[i]);
}

void nc_wire_pack_commit(struct nc_xdr *x, struct nc_pack_commit *m)
{
	nc_xdr_u64(x, &m->pc_pack);
	nc_xdr_u32(x, &m->pc_seal);
	nc_xdr_u32(x, &m->pc_count);
	if (x->x_err)
		return;
	if (m->pc_count > NC_PACK_COMMIT_MAX || (m->pc_count && !m->pc_creates)) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
		return;
	}
	for (uint32_t i = 0; i < m->pc_count && !x->x_err; i++)
		nc_wire_create_req(x, &m->pc_creates[i]);
}

void nc_wire_pack_commit_rep(struct nc_xdr *x, struct nc_pack_commit_rep *m)
{
	nc_xdr_u32(x, &m->pr_count);
	if (x->x_err)
		return;
	if (m->pr_count > NC_PACK_COMMIT_MAX) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
		return;
	}
	for (uint32_t i = 0; i < m->pr_count && !x->x_err; i++) {
		nc_xdr_u32(x, (uint32_t *)&m->pr_status[i]);
		nc_xdr_attr(x, &m->pr_attr[i]);
	}
}

void nc_wire_pack_switch(struct nc_xdr *x, struct nc_pack_switch *m)
{
	nc_xdr_cred(x, &m->ps_cred);
	nc_xdr_fid(x, &m->ps_fid);
	nc_xdr_u32(x, &m->ps_flags);
	nc_xdr_u64(x, &m->ps_size);
	xdr_time(x, &m->ps_mtime);
	nc_xdr_layout(x, &m->ps_old);
	nc_xdr_layout(x, &m->ps_new);
	if (!x->x_err && (m->ps_new.l_flags & NC_LAYOUT_INLINE) &&
	    !(m->ps_flags & NC_SWITCH_PROPOSE))
		nc_xdr_opaque(x, &m->ps_inline, &m->ps_inline_len, NC_INLINE_MAX);
}

void nc_wire_migrate_req(struct nc_xdr *x, struct nc_migrate_req *m)
{
	nc_xdr_cred(x, &m->mg_cred);
	nc_xdr_fid(x, &m->mg_fid);
	nc_xdr_u32(x, &m->mg_flags);
	nc_xdr_u32(x, &m->mg_gen);
	nc_xdr_u64(x, &m->mg_size);
	xdr_time(x, &m->mg_mtime);
	xdr_time(x, &m->mg_ctime);
	nc_xdr_layout(x, &m->mg_tmpl);
	nc_xdr_u32(x, &m->mg_nexclude);
	if (x->x_err)
		return;
	if (m->mg_nexclude > NC_MIGRATE_EXCLUDE_MAX) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
		return;
	}
	for (uint32_t i = 0; i < m->mg_nexclude; i++)
		nc_xdr_u32(x, &m->mg_exclude[i]);
	nc_xdr_layout(x, &m->mg_layout);
	nc_xdr_u32(x, &m->mg_grace);
}

void nc_wire_pack_files(struct nc_xdr *x, struct nc_pack_files *m)
{
	nc_xdr_u64(x, &m->pf_pack);
	nc_xdr_fid(x, &m->pf_after);
	nc_xdr_u32(x, &m->pf_count);
	if (x->x_err)
		return;
	if (m->pf_count > NC_PACK_FILES_MAX) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
		return;
	}
	for (uint32_t i = 0; i < m->pf_count; i++)
		nc_xdr_fid(x, &m->pf_fids[i]);
}

static bool lm_count_ok(struct nc_xdr *x, const struct nc_lookup_many *m)
{
	if (x->x_err)
		return false;
	if (m->lm_count > NC_LOOKUP_MANY_MAX || (m->lm_count && !m->lm_ents)) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
		return false;
	}
	return true;
}

void nc_wire_lookup_many_req(struct nc_xdr *x, struct nc_lookup_many *m)
{
	nc_xdr_cred(x, &m->lm_cred);
	nc_xdr_u32(x, &m->lm_count);
	if (!lm_count_ok(x, m))
		return;
	for (uint32_t i = 0; i < m->lm_count && !x->x_err; i++) {
		nc_xdr_fid(x, &m->lm_ents[i].le_parent);
		nc_xdr_str(x, m->lm_ents[i].le_name, NC_NAME_MAX);
	}
}

void nc_wire_lookup_many_rep(struct nc_xdr *x, struct nc_lookup_many *m)
{
	nc_xdr_u32(x, &m->lm_count);
	if (!lm_count_ok(x, m))
		return;
	for (uint32_t i = 0; i < m->lm_count && !x->x_err; i++) {
		nc_xdr_u32(x, (uint32_t *)&m->lm_ents[i].le_status);
		if (!x->x_err && m->lm_ents[i].le_status == 0)
			nc_wire_attr_rep(x, &m->lm_ents[i].le_rep);
	}
}

void nc_wire_pack_list(struct nc_xdr *x, struct nc_pack_list *m)
{
	nc_xdr_u64(x, &m->pl_after);
	nc_xdr_u32(x, &m->pl_count);
	if (x->x_err)
		return;
	if (m->pl_count > NC_PACK_LIST_MAX) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
		return;
	}
	for (uint32_t i = 0; i < m->pl_count; i++) {
		struct nc_pack_rec *r = &m->pl_packs[i];

		nc_xdr_u64(x, &r->pk_id);
		nc_xdr_u64(x, &r->pk_size);
		nc_xdr_u64(x, &r->pk_live);
		nc_xdr_u32(x, &r->pk_files);
		nc_xdr_u32(x, &r->pk_sealed);
		nc_xdr_i64(x, &r->pk_mtime);
	}
}

void nc_wire_changelog_req(struct nc_xdr *x, struct nc_changelog_req *m)
{
	nc_xdr_cred(x, &m->cl_cred);
	nc_xdr_u64(x, &m->cl_seq);
	nc_xdr_u32(x, &m->cl_max);
}

void nc_wire_changelog_rep(struct nc_xdr *x, struct nc_changelog_rep *m)
{
	nc_xdr_u64(x, &m->cp_last);
	nc_xdr_u32(x, &m->cp_count);
	if (x->x_err)
		return;
	if (m->cp_count > NC_CHANGELOG_MAX) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EINVAL;
		return;
	}
	for (uint32_t i = 0; i < m->cp_count; i++)
		nc_xdr_changelog_rec(x, &m->cp_recs[i]);
}

void nc_wire_setattr_req(struct nc_xdr *x, struct nc_setattr_req *m)
{
	nc_xdr_cred(x, &m->sa_cred);
	nc_xdr_fid(x, &m->sa_fid);
	nc_xdr_u32(x, &m->sa_valid);
	nc_xdr_u32(x, &m->sa_mode);
	nc_xdr_u32(x, &m->sa_uid);
	nc_xdr_u32(x, &m->sa_gid);
	nc_xdr_u64(x, &m->sa_size);
	xdr_time(x, &m->sa_atime);
	xdr_time(x, &m->sa_mtime);
}

void nc_wire_rename_req(struct nc_xdr *x, struct nc_rename_req *m)
{
	nc_xdr_cred(x, &m->rn_cred);
	nc_xdr_fid(x, &m->rn_src);
	nc_xdr_fid(x, &m->rn_oldparent);
	nc_xdr_str(x, m->rn_oldname, NC_NAME_MAX);
	nc_xdr_fid(x, &m->rn_newparent);
	nc_xdr_str(x, m->rn_newname, NC_NAME_MAX);
	nc_xdr_u32(x, &m->rn_flags);
}

void nc_wire_readdir_req(struct nc_xdr *x, struct nc_readdir_req *m)
{
	nc_xdr_cred(x, &m->rd_cred);
	nc_xdr_fid(x, &m->rd_fid);
	nc_xdr_u64(x, &m->rd_cookie);
	nc_xdr_u32(x, &m->rd_max);
}

static void xdr_dirent(struct nc_xdr *x, struct nc_dirent *d)
{
	nc_xdr_u64(x, &d->de_cookie);
	nc_xdr_fid(x, &d->de_fid);
	nc_xdr_u32(x, &d->de_mode);
	nc_xdr_str(x, d->de_name, NC_NAME_MAX);
}

void nc_wire_readdir_rep(struct nc_xdr *x, struct nc_readdir_rep *m)
{
	nc_xdr_u32(x, &m->dr_count);
	nc_xdr_u32(x, &m->dr_eof);
	if (x->x_err)
		return;
	if (m->dr_count > NC_READDIR_MAX) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EOVERFLOW;
		return;
	}
	if (x->x_op == NC_XDR_DECODE) {
		m->dr_ents = calloc(m->dr_count ? m->dr_count : 1, sizeof(*m->dr_ents));
		if (!m->dr_ents) {
			x->x_err = -ENOMEM;
			return;
		}
	}
	for (uint32_t i = 0; i < m->dr_count; i++)
		xdr_dirent(x, &m->dr_ents[i]);
	if (x->x_op == NC_XDR_DECODE && x->x_err) {
		free(m->dr_ents);
		m->dr_ents = NULL;
	}
}

void nc_readdir_rep_fini(struct nc_readdir_rep *m)
{
	free(m->dr_ents);
	m->dr_ents = NULL;
}

void nc_wire_attr_rep(struct nc_xdr *x, struct nc_attr_rep *m)
{
	nc_xdr_attr(x, &m->ar_attr);
	nc_xdr_u32(x, &m->ar_has_layout);
	if (!x->x_err && m->ar_has_layout)
		nc_xdr_layout(x, &m->ar_layout);
	if (x->x_err || !m->ar_has_layout || !(m->ar_layout.l_flags & NC_LAYOUT_INLINE) ||
	    (m->ar_layout.l_flags & NC_LAYOUT_TEMPLATE))
		return;
	nc_xdr_u32(x, &m->ar_inline_sent);
	if (!x->x_err && m->ar_inline_sent)
		nc_xdr_opaque(x, &m->ar_inline, &m->ar_inline_len, NC_INLINE_MAX);
}

void nc_wire_layout_msg(struct nc_xdr *x, struct nc_layout_msg *m)
{
	nc_xdr_cred(x, &m->sl_cred);
	nc_xdr_fid(x, &m->sl_fid);
	nc_xdr_layout(x, &m->sl_layout);
}

void nc_wire_size_req(struct nc_xdr *x, struct nc_size_req *m)
{
	nc_xdr_cred(x, &m->su_cred);
	nc_xdr_fid(x, &m->su_fid);
	nc_xdr_u64(x, &m->su_size);
	nc_xdr_u32(x, &m->su_flags);
}

void nc_wire_xattr_req(struct nc_xdr *x, struct nc_xattr_req *m)
{
	nc_xdr_cred(x, &m->xr_cred);
	nc_xdr_fid(x, &m->xr_fid);
	nc_xdr_str(x, m->xr_name, NC_XATTR_NAME_MAX);
	nc_xdr_u32(x, &m->xr_flags);
	nc_xdr_opaque(x, &m->xr_value, &m->xr_value_len, NC_XATTR_VALUE_MAX);
}

void nc_wire_bytes_rep(struct nc_xdr *x, struct nc_bytes_rep *m)
{
	nc_xdr_opaque(x, &m->br_data, &m->br_len, NC_MAX_BODY - 4);
}

void nc_wire_obj_req(struct nc_xdr *x, struct nc_obj_req *m)
{
	nc_xdr_u32(x, &m->or_ost);
	nc_xdr_u32(x, &m->or_flags);
	nc_xdr_fid(x, &m->or_fid);
	nc_xdr_u64(x, &m->or_off);
	nc_xdr_u64(x, &m->or_len);
}

void nc_wire_obj_rep(struct nc_xdr *x, struct nc_obj_rep *m)
{
	nc_xdr_u64(x, &m->op_size);
	nc_xdr_u64(x, &m->op_blocks);
}

void nc_wire_verify_rep(struct nc_xdr *x, struct nc_verify_rep *m)
{
	nc_xdr_u32(x, &m->vr_count);
	nc_xdr_u32(x, &m->vr_more);
	nc_xdr_u64(x, &m->vr_block);
	if (x->x_err)
		return;
	if (m->vr_count > NC_VERIFY_MAX) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EOVERFLOW;
		return;
	}
	for (uint32_t i = 0; i < m->vr_count; i++)
		nc_xdr_u64(x, &m->vr_bad[i]);
}

void nc_wire_watch_rep(struct nc_xdr *x, struct nc_watch_rep *m)
{
	nc_xdr_u32(x, &m->wr_count);
	if (x->x_err)
		return;
	if (m->wr_count > NC_WATCH_MAX) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EOVERFLOW;
		return;
	}
	for (uint32_t i = 0; i < m->wr_count; i++) {
		nc_xdr_u64(x, &m->wr_start[i]);
		nc_xdr_u64(x, &m->wr_end[i]);
	}
}

void nc_wire_shard_req(struct nc_xdr *x, struct nc_shard_req *m)
{
	nc_xdr_cred(x, &m->ss_cred);
	nc_xdr_fid(x, &m->ss_fid);
	nc_xdr_u32(x, &m->ss_shard);
	nc_xdr_u32(x, &m->ss_set);
	nc_xdr_u32(x, &m->ss_clear);
}

void nc_wire_ost_admin_req(struct nc_xdr *x, struct nc_ost_admin_req *m)
{
	nc_xdr_cred(x, &m->oa_cred);
	nc_xdr_u32(x, &m->oa_index);
	nc_xdr_u32(x, &m->oa_op);
}

/* A count of OST indexes followed by them, at most NC_MAX_OSTS. */
static void nc_xdr_ost_indexes(struct nc_xdr *x, uint32_t *count, uint32_t *idx)
{
	nc_xdr_u32(x, count);
	if (x->x_err)
		return;
	if (*count > NC_MAX_OSTS) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EOVERFLOW;
		return;
	}
	for (uint32_t i = 0; i < *count; i++)
		nc_xdr_u32(x, &idx[i]);
}

void nc_wire_pool_req(struct nc_xdr *x, struct nc_pool_req *m)
{
	nc_xdr_cred(x, &m->pr_cred);
	nc_xdr_u32(x, &m->pr_op);
	nc_xdr_str(x, m->pr_name, NC_POOL_NAME_MAX);
	nc_xdr_ost_indexes(x, &m->pr_count, m->pr_osts);
}

void nc_wire_pool_info(struct nc_xdr *x, struct nc_pool_info *m)
{
	nc_xdr_str(x, m->pi_name, NC_POOL_NAME_MAX);
	nc_xdr_ost_indexes(x, &m->pi_count, m->pi_osts);
}

void nc_wire_pool_list_rep(struct nc_xdr *x, struct nc_pool_list_rep *m)
{
	nc_xdr_u32(x, &m->pl_count);
	if (x->x_err)
		return;
	if (m->pl_count > NC_POOLS_MAX) {
		x->x_err = x->x_op == NC_XDR_DECODE ? -NC_E_PROTO : -EOVERFLOW;
		return;
	}
	for (uint32_t i = 0; i < m->pl_count; i++)
		nc_wire_pool_info(x, &m->pl_pools[i]);
}
