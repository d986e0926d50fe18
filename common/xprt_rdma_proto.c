/* SPDX-License-Identifier: MIT */
/* The RDMA provider's frames, credits and receive queue (no device needed). */
#include "config.h"

#include <string.h>

#include "common/errors.h"
#include "common/xprt_rdma_proto.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

void xp_rdma_frame_encode(const struct xp_rdma_frame *f, uint8_t *out)
{
	memset(out, 0, XP_RDMA_FRAME_HDR);
	put16(out, XP_RDMA_FRAME_MAGIC);
	out[2] = f->fh_type;
	put16(out + 4, f->fh_credits);
	put32(out + 8, f->fh_len);
	put32(out + 12, f->fh_id);
	put64(out + 16, f->fh_addr);
	put32(out + 24, f->fh_rkey);
}

int xp_rdma_frame_decode(const uint8_t *buf, size_t len, struct xp_rdma_frame *f)
{
	if (len < XP_RDMA_FRAME_HDR || get16(buf) != XP_RDMA_FRAME_MAGIC)
		return -NC_E_PROTO;
	memset(f, 0, sizeof(*f));
	f->fh_type = buf[2];
	f->fh_credits = get16(buf + 4);
	f->fh_len = get32(buf + 8);
	f->fh_id = get32(buf + 12);
	f->fh_addr = get64(buf + 16);
	f->fh_rkey = get32(buf + 24);
	switch (f->fh_type) {
	case XP_RDMA_F_DATA:
		if (f->fh_len == 0 || f->fh_len != len - XP_RDMA_FRAME_HDR)
			return -NC_E_PROTO;
		return 0;
	case XP_RDMA_F_BULK:
		return f->fh_len == 0 || len != XP_RDMA_FRAME_HDR ? -NC_E_PROTO : 0;
	case XP_RDMA_F_DONE:
	case XP_RDMA_F_CREDIT:
		return len != XP_RDMA_FRAME_HDR ? -NC_E_PROTO : 0;
	default:
		return -NC_E_PROTO;
	}
}

/* ---- credits ---- */

void xp_rdma_credits_init(struct xp_rdma_credits *c, int peer_depth)
{
	c->cr_tx = peer_depth;
	c->cr_owed = 0;
}

bool xp_rdma_credits_can_send(const struct xp_rdma_credits *c, int type)
{
	if (type == XP_RDMA_F_DONE)
		return true;
	return c->cr_tx >= (type == XP_RDMA_F_CREDIT ? 1 : 2);
}

uint16_t xp_rdma_credits_on_send(struct xp_rdma_credits *c, int type)
{
	uint16_t n = (uint16_t)c->cr_owed;

	if (type != XP_RDMA_F_DONE)
		c->cr_tx--;
	c->cr_owed = 0;
	return n;
}

int xp_rdma_credits_on_recv(struct xp_rdma_credits *c, uint16_t n, int peer_depth)
{
	if (c->cr_tx + n > peer_depth)
		return -NC_E_PROTO;
	c->cr_tx += n;
	return 0;
}

void xp_rdma_credits_reposted(struct xp_rdma_credits *c)
{
	c->cr_owed++;
}

bool xp_rdma_credits_should_return(const struct xp_rdma_credits *c, int depth)
{
	return c->cr_owed >= depth / 4 && c->cr_owed > 0;
}

/* ---- receive queue ---- */

void xp_rdma_rxq_init(struct xp_rdma_rxq *q)
{
	q->q_head = 0;
	q->q_len = 0;
}

int xp_rdma_rxq_push(struct xp_rdma_rxq *q, const struct xp_rdma_item *it)
{
	if (q->q_len == XP_RDMA_RXQ_CAP)
		return -NC_E_PROTO;
	q->q_items[(q->q_head + q->q_len++) % XP_RDMA_RXQ_CAP] = *it;
	return 0;
}

struct xp_rdma_item *xp_rdma_rxq_head(struct xp_rdma_rxq *q)
{
	return q->q_len ? &q->q_items[q->q_head] : NULL;
}

void xp_rdma_rxq_pop(struct xp_rdma_rxq *q)
{
	if (!q->q_len)
		return;
	q->q_head = (q->q_head + 1) % XP_RDMA_RXQ_CAP;
	q->q_len--;
}

size_t xp_rdma_rxq_copy(struct xp_rdma_rxq *q, void *buf, size_t len,
			void (*slot_done)(void *arg, int slot), void *arg)
{
	uint8_t *p = buf;
	size_t done = 0;
	struct xp_rdma_item *it;

	while (done < len && (it = xp_rdma_rxq_head(q)) && it->it_type == XP_RDMA_F_DATA) {
		size_t n = it->it_len - it->it_off;

		if (n > len - done)
			n = len - done;
		memcpy(p + done, it->it_data + it->it_off, n);
		done += n;
		it->it_off += (uint32_t)n;
		if (it->it_off == it->it_len) {
			int slot = it->it_slot;

			xp_rdma_rxq_pop(q);
			if (slot_done)
				slot_done(arg, slot);
		}
	}
	return done;
}
