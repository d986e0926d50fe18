/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the RDMA provider's device-free parts:
 *   common/xprt_rdma_proto.c  frame encode/decode, credit flow control and
 *                             the receive queue;
 *   common/xprt_rdma_mr.c     the memory registration cache, driven through
 *                             fake registration ops that count what they
 *                             are asked to do.
 *
 * The frame tests check a round trip of every type, the bytes at the
 * documented offsets and every reject.  The credit tests check each rule,
 * then simulate two peers exchanging frames at random (the model is
 * described before the simulation's code): no send without a credit, no
 * SEND ever lands without a posted buffer, and every run drains once both
 * sides read.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "common/errors.h"
#include "common/xprt_rdma_mr.h"
#include "common/xprt_rdma_proto.h"

#define POISON_BYTE 0xa5
#define RNG_SEED 0x6e616372652d7264ull /* "nacre-rd" */

static uint64_t rng_state = RNG_SEED;

/* xorshift64*: the same sequence on every libc, unlike rand(). */
static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static unsigned int rng_below(unsigned int n)
{
	return (unsigned int)(rng_next() % n);
}

/* Decodes a copy of exactly @len bytes, so ASan sees any over-read. */
static int decode_exact(const uint8_t *buf, size_t len, struct xp_rdma_frame *f)
{
	uint8_t *copy = malloc(len ? len : 1);
	int rc;

	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, buf, len);
	rc = xp_rdma_frame_decode(copy, len, f);
	free(copy);
	return rc;
}

/* ---- frames ---- */

static const struct xp_rdma_frame ex_frame = {
	.fh_credits = 0xbeef,
	.fh_len = 100,
	.fh_id = 0xdeadbeef,
	.fh_addr = 0xfedcba9876543210ull,
	.fh_rkey = 0x89abcdef,
};

static void test_frame_roundtrip(void)
{
	static const int types[] = {
		XP_RDMA_F_DATA, XP_RDMA_F_BULK, XP_RDMA_F_DONE, XP_RDMA_F_CREDIT,
	};
	static uint8_t buf[XP_RDMA_FRAME_HDR + XP_RDMA_FRAME_DATA_MAX];

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct xp_rdma_frame f = ex_frame, d;
		size_t len = XP_RDMA_FRAME_HDR;

		f.fh_type = (uint8_t)types[i];
		if (f.fh_type == XP_RDMA_F_DATA)
			len += f.fh_len;
		memset(buf, POISON_BYTE, sizeof(buf));
		xp_rdma_frame_encode(&f, buf);
		memset(&d, 0, sizeof(d));
		CU_ASSERT_EQUAL(decode_exact(buf, len, &d), 0);
		CU_ASSERT_EQUAL(d.fh_type, f.fh_type);
		CU_ASSERT_EQUAL(d.fh_credits, f.fh_credits);
		CU_ASSERT_EQUAL(d.fh_len, f.fh_len);
		CU_ASSERT_EQUAL(d.fh_id, f.fh_id);
		CU_ASSERT_EQUAL(d.fh_addr, f.fh_addr);
		CU_ASSERT_EQUAL(d.fh_rkey, f.fh_rkey);
	}

	/* The largest DATA payload a slot holds is accepted. */
	{
		struct xp_rdma_frame f = ex_frame, d;

		f.fh_type = XP_RDMA_F_DATA;
		f.fh_len = XP_RDMA_FRAME_DATA_MAX;
		xp_rdma_frame_encode(&f, buf);
		CU_ASSERT_EQUAL(xp_rdma_frame_decode(buf, XP_RDMA_SLOT, &d), 0);
		CU_ASSERT_EQUAL(d.fh_len, XP_RDMA_FRAME_DATA_MAX);
	}
}

static void test_frame_bytes(void)
{
	static const uint8_t want[XP_RDMA_FRAME_HDR] = {
		0x52, 0x4e,                     /* 0 magic */
		XP_RDMA_F_BULK, 0x00,           /* 2 type, pad */
		0xef, 0xbe, 0x00, 0x00,         /* 4 credits, pad */
		0x64, 0x00, 0x00, 0x00,         /* 8 len */
		0xef, 0xbe, 0xad, 0xde,         /* 12 id */
		0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, /* 16 addr */
		0xef, 0xcd, 0xab, 0x89,         /* 24 rkey */
		0x00, 0x00, 0x00, 0x00,         /* 28 pad */
	};
	struct xp_rdma_frame f = ex_frame;
	uint8_t buf[XP_RDMA_FRAME_HDR + 8];

	f.fh_type = XP_RDMA_F_BULK;
	memset(buf, POISON_BYTE, sizeof(buf));
	xp_rdma_frame_encode(&f, buf);
	CU_ASSERT_EQUAL(buf[0], 0x52);
	CU_ASSERT_EQUAL(buf[1], 0x4e);
	CU_ASSERT_EQUAL(buf[8], 100);
	CU_ASSERT_EQUAL(buf[16], 0x10);
	CU_ASSERT_EQUAL(buf[23], 0xfe);
	for (size_t i = 0; i < XP_RDMA_FRAME_HDR; i++) {
		if (buf[i] != want[i])
			fprintf(stderr, "  byte %zu: %02x, want %02x\n", i, buf[i], want[i]);
		CU_ASSERT_EQUAL(buf[i], want[i]);
	}
	/* Nothing past the header is written. */
	for (size_t i = XP_RDMA_FRAME_HDR; i < sizeof(buf); i++)
		CU_ASSERT_EQUAL(buf[i], POISON_BYTE);
}

/* Encodes @f followed by zero payload bytes, and returns what decoding
 * the first @len bytes says. */
static int decode_frame(const struct xp_rdma_frame *f, size_t len)
{
	static uint8_t buf[XP_RDMA_FRAME_HDR + 64];
	struct xp_rdma_frame d;

	memset(buf, 0, sizeof(buf));
	xp_rdma_frame_encode(f, buf);
	return decode_exact(buf, len, &d);
}

static void test_frame_reject(void)
{
	struct xp_rdma_frame f = ex_frame, d;
	uint8_t buf[XP_RDMA_FRAME_HDR + 16];
	const size_t hdr = XP_RDMA_FRAME_HDR;

	/* Shorter than a header, whatever the type. */
	f.fh_type = XP_RDMA_F_CREDIT;
	xp_rdma_frame_encode(&f, buf);
	for (size_t n = 0; n < hdr; n++)
		CU_ASSERT_EQUAL(decode_exact(buf, n, &d), -NC_E_PROTO);
	CU_ASSERT_EQUAL(decode_exact(buf, hdr, &d), 0);

	/* Bad magic: either byte, or the magic in big-endian order. */
	buf[0] ^= 0x01;
	CU_ASSERT_EQUAL(decode_exact(buf, hdr, &d), -NC_E_PROTO);
	buf[0] ^= 0x01;
	buf[1] ^= 0x80;
	CU_ASSERT_EQUAL(decode_exact(buf, hdr, &d), -NC_E_PROTO);
	buf[0] = 0x4e;
	buf[1] = 0x52;
	CU_ASSERT_EQUAL(decode_exact(buf, hdr, &d), -NC_E_PROTO);

	/* Unknown types. */
	f.fh_type = 0;
	CU_ASSERT_EQUAL(decode_frame(&f, hdr), -NC_E_PROTO);
	f.fh_type = 5;
	CU_ASSERT_EQUAL(decode_frame(&f, hdr), -NC_E_PROTO);
	f.fh_type = 99;
	CU_ASSERT_EQUAL(decode_frame(&f, hdr), -NC_E_PROTO);

	/* DATA: fh_len must equal the payload received, and not be 0. */
	f.fh_type = XP_RDMA_F_DATA;
	f.fh_len = 10;
	CU_ASSERT_EQUAL(decode_frame(&f, hdr + 10), 0);
	CU_ASSERT_EQUAL(decode_frame(&f, hdr + 9), -NC_E_PROTO);
	CU_ASSERT_EQUAL(decode_frame(&f, hdr + 11), -NC_E_PROTO);
	CU_ASSERT_EQUAL(decode_frame(&f, hdr), -NC_E_PROTO);
	f.fh_len = 0;
	CU_ASSERT_EQUAL(decode_frame(&f, hdr), -NC_E_PROTO);
	CU_ASSERT_EQUAL(decode_frame(&f, hdr + 1), -NC_E_PROTO);

	/* BULK: a non-empty descriptor and nothing after it. */
	f.fh_type = XP_RDMA_F_BULK;
	f.fh_len = 1 << 20;
	CU_ASSERT_EQUAL(decode_frame(&f, hdr), 0);
	CU_ASSERT_EQUAL(decode_frame(&f, hdr + 1), -NC_E_PROTO);
	CU_ASSERT_EQUAL(decode_frame(&f, hdr + 16), -NC_E_PROTO);
	f.fh_len = 0;
	CU_ASSERT_EQUAL(decode_frame(&f, hdr), -NC_E_PROTO);

	/* DONE and CREDIT: header only. */
	f.fh_len = 0;
	f.fh_type = XP_RDMA_F_DONE;
	CU_ASSERT_EQUAL(decode_frame(&f, hdr), 0);
	CU_ASSERT_EQUAL(decode_frame(&f, hdr + 1), -NC_E_PROTO);
	f.fh_type = XP_RDMA_F_CREDIT;
	CU_ASSERT_EQUAL(decode_frame(&f, hdr), 0);
	CU_ASSERT_EQUAL(decode_frame(&f, hdr + 1), -NC_E_PROTO);
}

/* ---- credits ---- */

static void test_credit_rules(void)
{
	struct xp_rdma_credits c;

	xp_rdma_credits_init(&c, XP_RDMA_DEPTH);
	CU_ASSERT_EQUAL(c.cr_tx, XP_RDMA_DEPTH);
	CU_ASSERT_EQUAL(c.cr_owed, 0);
	xp_rdma_credits_init(&c, 5);
	CU_ASSERT_EQUAL(c.cr_tx, 5);

	/* DATA and BULK keep the last credit back; CREDIT may use it; DONE
	 * needs none. */
	c.cr_tx = 0;
	CU_ASSERT_FALSE(xp_rdma_credits_can_send(&c, XP_RDMA_F_DATA));
	CU_ASSERT_FALSE(xp_rdma_credits_can_send(&c, XP_RDMA_F_BULK));
	CU_ASSERT_FALSE(xp_rdma_credits_can_send(&c, XP_RDMA_F_CREDIT));
	CU_ASSERT_TRUE(xp_rdma_credits_can_send(&c, XP_RDMA_F_DONE));
	c.cr_tx = 1;
	CU_ASSERT_FALSE(xp_rdma_credits_can_send(&c, XP_RDMA_F_DATA));
	CU_ASSERT_FALSE(xp_rdma_credits_can_send(&c, XP_RDMA_F_BULK));
	CU_ASSERT_TRUE(xp_rdma_credits_can_send(&c, XP_RDMA_F_CREDIT));
	CU_ASSERT_TRUE(xp_rdma_credits_can_send(&c, XP_RDMA_F_DONE));
	c.cr_tx = 2;
	CU_ASSERT_TRUE(xp_rdma_credits_can_send(&c, XP_RDMA_F_DATA));
	CU_ASSERT_TRUE(xp_rdma_credits_can_send(&c, XP_RDMA_F_BULK));
	CU_ASSERT_TRUE(xp_rdma_credits_can_send(&c, XP_RDMA_F_CREDIT));
	CU_ASSERT_TRUE(xp_rdma_credits_can_send(&c, XP_RDMA_F_DONE));

	/* on_send hands back every owed credit and consumes one of ours,
	 * except for DONE. */
	xp_rdma_credits_init(&c, XP_RDMA_DEPTH);
	for (int i = 0; i < 5; i++)
		xp_rdma_credits_reposted(&c);
	CU_ASSERT_EQUAL(c.cr_owed, 5);
	CU_ASSERT_EQUAL(xp_rdma_credits_on_send(&c, XP_RDMA_F_DATA), 5);
	CU_ASSERT_EQUAL(c.cr_owed, 0);
	CU_ASSERT_EQUAL(c.cr_tx, XP_RDMA_DEPTH - 1);
	CU_ASSERT_EQUAL(xp_rdma_credits_on_send(&c, XP_RDMA_F_BULK), 0);
	CU_ASSERT_EQUAL(c.cr_tx, XP_RDMA_DEPTH - 2);
	xp_rdma_credits_reposted(&c);
	CU_ASSERT_EQUAL(xp_rdma_credits_on_send(&c, XP_RDMA_F_CREDIT), 1);
	CU_ASSERT_EQUAL(c.cr_tx, XP_RDMA_DEPTH - 3);
	xp_rdma_credits_reposted(&c);
	xp_rdma_credits_reposted(&c);
	CU_ASSERT_EQUAL(xp_rdma_credits_on_send(&c, XP_RDMA_F_DONE), 2);
	CU_ASSERT_EQUAL(c.cr_tx, XP_RDMA_DEPTH - 3);
	CU_ASSERT_EQUAL(c.cr_owed, 0);
	c.cr_tx = 0;
	CU_ASSERT_EQUAL(xp_rdma_credits_on_send(&c, XP_RDMA_F_DONE), 0);
	CU_ASSERT_EQUAL(c.cr_tx, 0);

	/* on_recv adds, up to the peer's depth and not one more. */
	xp_rdma_credits_init(&c, XP_RDMA_DEPTH);
	c.cr_tx = XP_RDMA_DEPTH - 3;
	CU_ASSERT_EQUAL(xp_rdma_credits_on_recv(&c, 0, XP_RDMA_DEPTH), 0);
	CU_ASSERT_EQUAL(c.cr_tx, XP_RDMA_DEPTH - 3);
	CU_ASSERT_EQUAL(xp_rdma_credits_on_recv(&c, 4, XP_RDMA_DEPTH), -NC_E_PROTO);
	CU_ASSERT_EQUAL(c.cr_tx, XP_RDMA_DEPTH - 3);
	CU_ASSERT_EQUAL(xp_rdma_credits_on_recv(&c, 2, XP_RDMA_DEPTH), 0);
	CU_ASSERT_EQUAL(c.cr_tx, XP_RDMA_DEPTH - 1);
	CU_ASSERT_EQUAL(xp_rdma_credits_on_recv(&c, 1, XP_RDMA_DEPTH), 0);
	CU_ASSERT_EQUAL(c.cr_tx, XP_RDMA_DEPTH);
	CU_ASSERT_EQUAL(xp_rdma_credits_on_recv(&c, 1, XP_RDMA_DEPTH), -NC_E_PROTO);
	CU_ASSERT_EQUAL(xp_rdma_credits_on_recv(&c, 0xffff, XP_RDMA_DEPTH), -NC_E_PROTO);
	CU_ASSERT_EQUAL(c.cr_tx, XP_RDMA_DEPTH);
	CU_ASSERT_EQUAL(c.cr_owed, 0);

	/* should_return: never with nothing owed, from depth/4 on. */
	xp_rdma_credits_init(&c, XP_RDMA_DEPTH);
	CU_ASSERT_FALSE(xp_rdma_credits_should_return(&c, XP_RDMA_DEPTH));
	for (int i = 1; i < XP_RDMA_DEPTH / 4; i++) {
		xp_rdma_credits_reposted(&c);
		CU_ASSERT_FALSE(xp_rdma_credits_should_return(&c, XP_RDMA_DEPTH));
	}
	xp_rdma_credits_reposted(&c);
	CU_ASSERT_EQUAL(c.cr_owed, XP_RDMA_DEPTH / 4);
	CU_ASSERT_TRUE(xp_rdma_credits_should_return(&c, XP_RDMA_DEPTH));
	xp_rdma_credits_reposted(&c);
	CU_ASSERT_TRUE(xp_rdma_credits_should_return(&c, XP_RDMA_DEPTH));
	/* A depth so small that depth/4 is 0 still needs something owed. */
	xp_rdma_credits_init(&c, 2);
	CU_ASSERT_FALSE(xp_rdma_credits_should_return(&c, 2));
	xp_rdma_credits_reposted(&c);
	CU_ASSERT_TRUE(xp_rdma_credits_should_return(&c, 2));
}

/*
 * The simulation's model of two peers on one reliable connection.
 *
 * Each direction has a wire: a FIFO of encoded frames sent and not yet
 * delivered (delivery is in order, at random times).  Delivering a frame
 * takes one of the receiver's posted buffers; there must be one, else the
 * hardware would answer RNR.  A DATA or BULK frame then waits in the
 * receiver's rxq, holding its buffer, until the reader consumes it; a
 * CREDIT frame's buffer is reposted at once; a DONE lands in the extra
 * buffer its BULK's sender posted, which is then retired.  Each repost
 * owes the peer a credit.  Owed credits go back on every frame sent, and
 * in a CREDIT frame whenever should_return says so and a credit allows it.
 * Consuming a BULK stands for pulling it and sends DONE back.
 *
 * A random run makes stream messages (DATA or BULK) to send, sends (in
 * bursts), delivers, consumes, and now and then makes a side stop reading
 * for a while (backpressure).  Runs take turns between both sides writing
 * and one side only, with and without BULK.  After each run both sides
 * read until nothing more can happen; everything queued must then have
 * been sent and consumed.  A deadlock shows as a run that does not drain.
 */
#define SIM_DEPTH XP_RDMA_DEPTH
#define SIM_PAYLOAD 4                   /* a DATA frame carries its sequence */
#define SIM_WIRE_MAX (4 * SIM_DEPTH)    /* >= credited frames + DONEs */
#define SIM_ROUNDS 18
#define SIM_STEPS 500
#define SIM_BACKLOG_MAX 200
#define SIM_DRAIN_MAX 1000000

struct sim_wire {
	uint8_t w_buf[SIM_WIRE_MAX][XP_RDMA_FRAME_HDR + SIM_PAYLOAD];
	size_t w_len[SIM_WIRE_MAX];
	int w_head, w_n;
};

struct sim_peer {
	const char *p_name;
	struct xp_rdma_credits p_cr;
	struct xp_rdma_rxq p_rxq;
	uint8_t p_slots[XP_RDMA_RXQ_CAP][SIM_PAYLOAD];  /* DATA payloads held */
	unsigned int p_next_slot;
	int p_posted;           /* receive buffers posted now */
	int p_bulks_out;        /* BULKs sent whose DONE has not come */
	int p_backlog;          /* stream messages waiting to be sent */
	uint32_t p_tx_seq;      /* sequence of the next message sent */
	uint32_t p_rx_seq;      /* sequence expected next from the peer */
	bool p_reading;
	struct sim_wire *p_out; /* frames to the peer */
	struct sim_wire *p_in;  /* frames from the peer */
	struct sim_peer *p_peer;
};

/* What went wrong or happened, over a whole simulation. */
struct sim_stats {
	unsigned long ss_errors;        /* any broken rule (also printed) */
	unsigned long ss_sent[XP_RDMA_F_CREDIT + 1];
	unsigned long ss_blocked;       /* sends held back for want of credit */
	unsigned long ss_consumed;
	int ss_min_posted;
};

static struct sim_stats sim_st;
/* Whether this round sends BULK too.  Their DONE frames return credits
 * without needing one, which would hide a credit deadlock, so half the
 * rounds go without. */
static bool sim_bulk;

static void sim_error(const struct sim_peer *p, const char *what)
{
	if (sim_st.ss_errors++ < 10)
		fprintf(stderr, "  %s: %s\n", p->p_name, what);
}

static void sim_peer_init(struct sim_peer *p, const char *name, struct sim_wire *out,
			  struct sim_wire *in, struct sim_peer *peer)
{
	memset(p, 0, sizeof(*p));
	p->p_name = name;
	xp_rdma_credits_init(&p->p_cr, SIM_DEPTH);
	xp_rdma_rxq_init(&p->p_rxq);
	p->p_posted = SIM_DEPTH;
	p->p_reading = true;
	p->p_out = out;
	p->p_in = in;
	p->p_peer = peer;
	memset(out, 0, sizeof(*out));
}

static void sim_send(struct sim_peer *p, int type, uint32_t id)
{
	struct sim_wire *w = p->p_out;
	struct xp_rdma_frame f;
	int i;

	if (!xp_rdma_credits_can_send(&p->p_cr, type)) {
		sim_error(p, "send without a credit");
		return;
	}
	if (w->w_n == SIM_WIRE_MAX) {
		sim_error(p, "wire overflow");
		return;
	}
	if (type == XP_RDMA_F_BULK) {
		/* The buffer its DONE will land in. */
		p->p_posted++;
		p->p_bulks_out++;
	}
	memset(&f, 0, sizeof(f));
	f.fh_type = (uint8_t)type;
	f.fh_credits = xp_rdma_credits_on_send(&p->p_cr, type);
	f.fh_id = id;
	if (type == XP_RDMA_F_DATA)
		f.fh_len = SIM_PAYLOAD;
	else if (type == XP_RDMA_F_BULK)
		f.fh_len = 1 << 20;
	if (p->p_cr.cr_tx < 0 || p->p_cr.cr_owed != 0)
		sim_error(p, "credits wrong after on_send");
	i = (w->w_head + w->w_n++) % SIM_WIRE_MAX;
	xp_rdma_frame_encode(&f, w->w_buf[i]);
	w->w_len[i] = XP_RDMA_FRAME_HDR;
	if (type == XP_RDMA_F_DATA) {
		for (int b = 0; b < SIM_PAYLOAD; b++)
			w->w_buf[i][XP_RDMA_FRAME_HDR + b] = (uint8_t)(id >> (8 * b));
		w->w_len[i] += SIM_PAYLOAD;
	}
	sim_st.ss_sent[type]++;
}

/* Owed credits go back in a CREDIT frame when they should and can. */
static void sim_maybe_return(struct sim_peer *p)
{
	if (xp_rdma_credits_should_return(&p->p_cr, SIM_DEPTH) &&
	    xp_rdma_credits_can_send(&p->p_cr, XP_RDMA_F_CREDIT))
		sim_send(p, XP_RDMA_F_CREDIT, 0);
}

static void sim_repost(struct sim_peer *p)
{
	p->p_posted++;
	xp_rdma_credits_reposted(&p->p_cr);
	sim_maybe_return(p);
}

static void sim_slot_done(void *arg, int slot)
{
	sim_repost(arg);
}

/* Sends one stream message if credits allow. */
static bool sim_step_send(struct sim_peer *p)
{
	/* In rounds with BULK, one message in 16 goes as BULK. */
	int type = sim_bulk && p->p_tx_seq % 16 == 15 ? XP_RDMA_F_BULK : XP_RDMA_F_DATA;

	if (!p->p_backlog)
		return false;
	if (!xp_rdma_credits_can_send(&p->p_cr, type)) {
		sim_st.ss_blocked++;
		return false;
	}
	sim_send(p, type, p->p_tx_seq++);
	p->p_backlog--;
	return true;
}

/* Delivers the oldest frame from the peer. */
static bool sim_step_deliver(struct sim_peer *p)
{
	struct sim_wire *w = p->p_in;
	struct xp_rdma_frame f;
	struct xp_rdma_item it;
	const uint8_t *buf;
	size_t len;

	if (!w->w_n)
		return false;
	buf = w->w_buf[w->w_head];
	len = w->w_len[w->w_head];
	w->w_head = (w->w_head + 1) % SIM_WIRE_MAX;
	w->w_n--;
	if (p->p_posted <= 0)
		sim_error(p, "SEND without a posted buffer (RNR)");
	p->p_posted--;
	if (p->p_posted < sim_st.ss_min_posted)
		sim_st.ss_min_posted = p->p_posted;
	if (xp_rdma_frame_decode(buf, len, &f)) {
		sim_error(p, "frame does not decode");
		return true;
	}
	if (xp_rdma_credits_on_recv(&p->p_cr, f.fh_credits, SIM_DEPTH))
		sim_error(p, "peer returned too many credits");
	memset(&it, 0, sizeof(it));
	it.it_type = f.fh_type;
	it.it_id = f.fh_id;
	it.it_len = f.fh_len;
	switch (f.fh_type) {
	case XP_RDMA_F_DATA:
		it.it_slot = (int)(p->p_next_slot++ % XP_RDMA_RXQ_CAP);
		memcpy(p->p_slots[it.it_slot], buf + XP_RDMA_FRAME_HDR, SIM_PAYLOAD);
		it.it_data = p->p_slots[it.it_slot];
		if (xp_rdma_rxq_push(&p->p_rxq, &it))
			sim_error(p, "rxq overflow");
		break;
	case XP_RDMA_F_BULK:
		it.it_slot = (int)(p->p_next_slot++ % XP_RDMA_RXQ_CAP);
		if (xp_rdma_rxq_push(&p->p_rxq, &it))
			sim_error(p, "rxq overflow");
		break;
	case XP_RDMA_F_CREDIT:
		sim_repost(p);
		break;
	case XP_RDMA_F_DONE:
		/* Landed in the extra buffer, which is not reposted. */
		if (p->p_bulks_out-- <= 0)
			sim_error(p, "DONE for no BULK");
		break;
	}
	/* Credits may have come that let owed ones go back. */
	sim_maybe_return(p);
	return true;
}

/* Consumes one stream message, checking its sequence. */
static bool sim_step_consume(struct sim_peer *p)
{
	struct xp_rdma_item *it = xp_rdma_rxq_head(&p->p_rxq);
	uint32_t seq;

	if (!p->p_reading || !it)
		return false;
	if (it->it_type == XP_RDMA_F_BULK) {
		seq = it->it_id;
		xp_rdma_rxq_pop(&p->p_rxq);
		sim_repost(p);
		sim_send(p, XP_RDMA_F_DONE, seq);
	} else {
		uint8_t b[SIM_PAYLOAD];

		if (xp_rdma_rxq_copy(&p->p_rxq, b, sizeof(b), sim_slot_done, p) != sizeof(b)) {
			sim_error(p, "short copy");
			return true;
		}
		seq = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
		      (uint32_t)b[3] << 24;
	}
	if (seq != p->p_rx_seq)
		sim_error(p, "stream out of order");
	p->p_rx_seq = seq + 1;
	sim_st.ss_consumed++;
	return true;
}

static bool sim_drained(struct sim_peer *p)
{
	return !p->p_backlog && !p->p_in->w_n && !xp_rdma_rxq_head(&p->p_rxq) &&
	       !p->p_bulks_out && p->p_rx_seq == p->p_peer->p_tx_seq;
}

static void test_credit_sim(void)
{
	static struct sim_wire ab, ba;
	static struct sim_peer a, b;
	struct sim_peer *side[2] = { &a, &b };

	memset(&sim_st, 0, sizeof(sim_st));
	sim_st.ss_min_posted = SIM_DEPTH;
	sim_peer_init(&a, "A", &ab, &ba, &b);
	sim_peer_init(&b, "B", &ba, &ab, &a);
	for (int round = 0; round < SIM_ROUNDS; round++) {
		unsigned long steps = 0;

		sim_bulk = round / 3 % 2;
		/* Start some rounds with one side, or both, not reading. */
		a.p_reading = rng_below(2);
		b.p_reading = rng_below(2);
		for (int s = 0; s < SIM_STEPS; s++) {
			struct sim_peer *p = side[rng_below(2)];

			switch (rng_below(10)) {
			case 0:
				/* Rounds take turns: both sides write, only
				 * A, only B (whose credits mostly go back in
				 * CREDIT frames, there being little traffic to
				 * piggyback them on). */
				if ((round % 3 == 1 && p == &b) || (round % 3 == 2 && p == &a))
					break;
				if (p->p_backlog < SIM_BACKLOG_MAX)
					p->p_backlog += 1 + (int)rng_below(8);
				break;
			case 1:
			case 2:
				/* In bursts, so a side can spend all its
				 * credits before the peer answers. */
				for (int n = 1 + (int)rng_below(8); n > 0 && sim_step_send(p); n--)
					;
				break;
			case 3:
			case 4:
			case 5:
				sim_step_deliver(p);
				break;
			case 6:
			case 7:
			case 8:
				sim_step_consume(p);
				break;
			case 9:
				/* Long stretches of not reading. */
				if (rng_below(16) == 0)
					p->p_reading = !p->p_reading;
				break;
			}
		}

		/* Both read; whatever is queued must get through. */
		a.p_reading = b.p_reading = true;
		for (bool progress = true; progress && steps < SIM_DRAIN_MAX; steps++) {
			progress = false;
			for (int i = 0; i < 2; i++) {
				progress |= sim_step_deliver(side[i]);
				progress |= sim_step_consume(side[i]);
				progress |= sim_step_send(side[i]);
			}
		}
		CU_ASSERT_TRUE(sim_drained(&a));
		CU_ASSERT_TRUE(sim_drained(&b));
		if (!sim_drained(&a) || !sim_drained(&b))
			fprintf(stderr,
				"  stuck in round %d: A tx %d owed %d backlog %d, B tx %d owed %d backlog %d\n",
				round, a.p_cr.cr_tx, a.p_cr.cr_owed, a.p_backlog,
				b.p_cr.cr_tx, b.p_cr.cr_owed, b.p_backlog);
		/* Quiet: every buffer is posted again, and each side's credits
		 * plus what the peer still owes make up the depth. */
		CU_ASSERT_EQUAL(a.p_posted, SIM_DEPTH);
		CU_ASSERT_EQUAL(b.p_posted, SIM_DEPTH);
		CU_ASSERT_EQUAL(a.p_cr.cr_tx + b.p_cr.cr_owed, SIM_DEPTH);
		CU_ASSERT_EQUAL(b.p_cr.cr_tx + a.p_cr.cr_owed, SIM_DEPTH);
	}
	CU_ASSERT_EQUAL(sim_st.ss_errors, 0);
	CU_ASSERT_TRUE(sim_st.ss_min_posted >= 0);
	/* The run did exercise what it claims to: senders ran out of credit
	 * and receivers down to their last posted buffer. */
	CU_ASSERT_TRUE(sim_st.ss_blocked > 0);
	CU_ASSERT_TRUE(sim_st.ss_min_posted <= 1);
	CU_ASSERT_TRUE(sim_st.ss_sent[XP_RDMA_F_DATA] > 1000);
	CU_ASSERT_TRUE(sim_st.ss_sent[XP_RDMA_F_BULK] > 0);
	CU_ASSERT_EQUAL(sim_st.ss_sent[XP_RDMA_F_DONE], sim_st.ss_sent[XP_RDMA_F_BULK]);
	CU_ASSERT_TRUE(sim_st.ss_sent[XP_RDMA_F_CREDIT] > 0);
	CU_ASSERT_EQUAL(sim_st.ss_consumed,
			sim_st.ss_sent[XP_RDMA_F_DATA] + sim_st.ss_sent[XP_RDMA_F_BULK]);
}

/* ---- receive queue ---- */

static struct xp_rdma_item data_item(const char *s, int slot)
{
	struct xp_rdma_item it;

	memset(&it, 0, sizeof(it));
	it.it_type = XP_RDMA_F_DATA;
	it.it_slot = slot;
	it.it_data = (const uint8_t *)s;
	it.it_len = (uint32_t)strlen(s);
	return it;
}

static void test_rxq_fifo(void)
{
	static struct xp_rdma_rxq q;
	struct xp_rdma_item it;
	uint32_t next_in = 0, next_out = 0;

	xp_rdma_rxq_init(&q);
	CU_ASSERT_PTR_NULL(xp_rdma_rxq_head(&q));
	xp_rdma_rxq_pop(&q);    /* harmless when empty */
	CU_ASSERT_PTR_NULL(xp_rdma_rxq_head(&q));

	memset(&it, 0, sizeof(it));
	it.it_type = XP_RDMA_F_BULK;
	for (int i = 0; i < XP_RDMA_RXQ_CAP; i++) {
		it.it_id = next_in++;
		CU_ASSERT_EQUAL(xp_rdma_rxq_push(&q, &it), 0);
	}
	it.it_id = 9999;
	CU_ASSERT_EQUAL(xp_rdma_rxq_push(&q, &it), -NC_E_PROTO);
	CU_ASSERT_EQUAL(q.q_len, XP_RDMA_RXQ_CAP);
	CU_ASSERT_PTR_NOT_NULL_FATAL(xp_rdma_rxq_head(&q));
	CU_ASSERT_EQUAL(xp_rdma_rxq_head(&q)->it_id, 0);

	/* Drain and refill by uneven amounts many times, wrapping the ring;
	 * items come out in the order they went in. */
	for (int round = 0; round < 500; round++) {
		int pops = 1 + (int)rng_below(q.q_len);
		int pushes = 1 + (int)rng_below(XP_RDMA_RXQ_CAP - q.q_len + pops);

		for (int i = 0; i < pops; i++) {
			struct xp_rdma_item *h = xp_rdma_rxq_head(&q);

			CU_ASSERT_PTR_NOT_NULL_FATAL(h);
			CU_ASSERT_EQUAL(h->it_id, next_out);
			next_out++;
			xp_rdma_rxq_pop(&q);
		}
		for (int i = 0; i < pushes; i++) {
			it.it_id = next_in++;
			CU_ASSERT_EQUAL(xp_rdma_rxq_push(&q, &it), 0);
		}
		CU_ASSERT_EQUAL(q.q_len, (int)(next_in - next_out));
	}
	while (xp_rdma_rxq_head(&q)) {
		CU_ASSERT_EQUAL(xp_rdma_rxq_head(&q)->it_id, next_out);
		next_out++;
		xp_rdma_rxq_pop(&q);
	}
	CU_ASSERT_EQUAL(next_out, next_in);
	CU_ASSERT_TRUE(next_in > 4 * XP_RDMA_RXQ_CAP);
}

static int done_slots[16];
static int done_n;

static void record_slot(void *arg, int slot)
{
	CU_ASSERT_PTR_EQUAL(arg, &done_n);
	if (done_n < (int)(sizeof(done_slots) / sizeof(done_slots[0])))
		done_slots[done_n] = slot;
	done_n++;
}

static void test_rxq_copy(void)
{
	static struct xp_rdma_rxq q;
	struct xp_rdma_item it, *h;
	char buf[64];

	xp_rdma_rxq_init(&q);
	done_n = 0;
	CU_ASSERT_EQUAL(xp_rdma_rxq_copy(&q, buf, sizeof(buf), record_slot, &done_n), 0);

	it = data_item("abc", 3);
	CU_ASSERT_EQUAL(xp_rdma_rxq_push(&q, &it), 0);
	it = data_item("defgh", 7);
	CU_ASSERT_EQUAL(xp_rdma_rxq_push(&q, &it), 0);
	it = data_item("ij", 9);
	CU_ASSERT_EQUAL(xp_rdma_rxq_push(&q, &it), 0);
	memset(&it, 0, sizeof(it));
	it.it_type = XP_RDMA_F_BULK;
	it.it_slot = 11;
	it.it_id = 42;
	it.it_len = 1 << 20;
	CU_ASSERT_EQUAL(xp_rdma_rxq_push(&q, &it), 0);
	it = data_item("xyz", 12);
	CU_ASSERT_EQUAL(xp_rdma_rxq_push(&q, &it), 0);

	/* Across one item into the next, which is left part consumed. */
	memset(buf, POISON_BYTE, sizeof(buf));
	CU_ASSERT_EQUAL(xp_rdma_rxq_copy(&q, buf, 4, record_slot, &done_n), 4);
	CU_ASSERT_NSTRING_EQUAL(buf, "abcd", 4);
	CU_ASSERT_EQUAL((uint8_t)buf[4], POISON_BYTE);
	CU_ASSERT_EQUAL(done_n, 1);
	CU_ASSERT_EQUAL(done_slots[0], 3);
	h = xp_rdma_rxq_head(&q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_EQUAL(h->it_slot, 7);
	CU_ASSERT_EQUAL(h->it_off, 1);

	/* A large read stops at the BULK, which stays at the head. */
	memset(buf, POISON_BYTE, sizeof(buf));
	CU_ASSERT_EQUAL(xp_rdma_rxq_copy(&q, buf, sizeof(buf), record_slot, &done_n), 6);
	CU_ASSERT_NSTRING_EQUAL(buf, "efghij", 6);
	CU_ASSERT_EQUAL((uint8_t)buf[6], POISON_BYTE);
	CU_ASSERT_EQUAL(done_n, 3);
	CU_ASSERT_EQUAL(done_slots[1], 7);
	CU_ASSERT_EQUAL(done_slots[2], 9);
	h = xp_rdma_rxq_head(&q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_EQUAL(h->it_type, XP_RDMA_F_BULK);
	CU_ASSERT_EQUAL(h->it_id, 42);
	CU_ASSERT_EQUAL(q.q_len, 2);
	CU_ASSERT_EQUAL(xp_rdma_rxq_copy(&q, buf, sizeof(buf), record_slot, &done_n), 0);
	CU_ASSERT_EQUAL(done_n, 3);
	CU_ASSERT_EQUAL(q.q_len, 2);

	/* Past the BULK (the caller pulls it and pops it itself). */
	xp_rdma_rxq_pop(&q);
	CU_ASSERT_EQUAL(xp_rdma_rxq_copy(&q, buf, 2, record_slot, &done_n), 2);
	CU_ASSERT_NSTRING_EQUAL(buf, "xy", 2);
	CU_ASSERT_EQUAL(done_n, 3);
	CU_ASSERT_EQUAL(xp_rdma_rxq_head(&q)->it_off, 2);
	CU_ASSERT_EQUAL(xp_rdma_rxq_copy(&q, buf, 0, record_slot, &done_n), 0);
	CU_ASSERT_EQUAL(done_n, 3);
	CU_ASSERT_EQUAL(xp_rdma_rxq_copy(&q, buf, sizeof(buf), record_slot, &done_n), 1);
	CU_ASSERT_EQUAL(buf[0], 'z');
	CU_ASSERT_EQUAL(done_n, 4);
	CU_ASSERT_EQUAL(done_slots[3], 12);
	CU_ASSERT_PTR_NULL(xp_rdma_rxq_head(&q));
	CU_ASSERT_EQUAL(xp_rdma_rxq_copy(&q, buf, sizeof(buf), record_slot, &done_n), 0);
	CU_ASSERT_EQUAL(done_n, 4);
}

/* ---- registration cache ---- */

/* Fake registration ops: each registration is an entry of fake_mrs, whose
 * address is the handle. */
#define FAKE_MAX 64

struct fake_mr {
	bool fm_live;
	void *fm_pd;
	uintptr_t fm_addr;
	size_t fm_len;
};

static struct fake_mr fake_mrs[FAKE_MAX];
static int fake_regs;           /* mo_reg calls that succeeded */
static int fake_live;           /* registrations not deregistered */
static int fake_bad;            /* dereg of an unknown or dead handle */
static int fake_fail;           /* mo_reg returns this while non-zero */

static int fake_reg(void *pd, void *addr, size_t len, void **handle, uint32_t *lkey,
		    uint32_t *rkey)
{
	int i;

	if (fake_fail)
		return fake_fail;
	for (i = 0; i < FAKE_MAX && fake_mrs[i].fm_live; i++)
		;
	if (i == FAKE_MAX)
		return -ENOMEM;
	fake_mrs[i].fm_live = true;
	fake_mrs[i].fm_pd = pd;
	fake_mrs[i].fm_addr = (uintptr_t)addr;
	fake_mrs[i].fm_len = len;
	*handle = &fake_mrs[i];
	fake_regs++;
	*lkey = 0x10000u + (uint32_t)fake_regs;
	*rkey = 0x20000u + (uint32_t)fake_regs;
	fake_live++;
	return 0;
}

static void fake_dereg(void *handle)
{
	struct fake_mr *m = handle;

	if (m < fake_mrs || m >= fake_mrs + FAKE_MAX || !m->fm_live) {
		fake_bad++;
		return;
	}
	m->fm_live = false;
	fake_live--;
}

static const struct xp_rdma_mr_ops fake_ops = {
	.mo_reg = fake_reg,
	.mo_dereg = fake_dereg,
};

static void fake_reset(void)
{
	memset(fake_mrs, 0, sizeof(fake_mrs));
	fake_regs = fake_live = fake_bad = fake_fail = 0;
}

static uint8_t arena[1 << 16];
static int pd_a, pd_b;          /* two protection domains: only addresses */
static struct xp_rdma_mrc mrc;

static void test_mr_pin_args(void)
{
	fake_reset();
	xp_rdma_mrc_init(&mrc, &fake_ops);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, NULL, 100), -EINVAL);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena, 0), -EINVAL);

	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 1000, 1000), 0);
	/* Overlaps at the start, at the end, around, inside, the same. */
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 900, 101), -EEXIST);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 1999, 10), -EEXIST);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 500, 2000), -EEXIST);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 1200, 10), -EEXIST);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 1000, 1000), -EEXIST);
	/* Touching at either end is no overlap. */
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 500, 500), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 2000, 100), 0);

	/* Unpin needs the start of a pin. */
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, arena + 1001), -ENOENT);
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, arena + 5000), -ENOENT);
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, arena + 1000), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, arena + 1000), -ENOENT);
	/* The range is free again. */
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 1200, 10), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, arena + 500), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, arena + 2000), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, arena + 1200), 0);

	/* Pinning registers nothing until a transfer needs it. */
	CU_ASSERT_EQUAL(fake_regs, 0);
	xp_rdma_mrc_fini(&mrc);
	CU_ASSERT_EQUAL(fake_live, 0);
	CU_ASSERT_EQUAL(fake_bad, 0);
}

static void test_mr_pin_limit(void)
{
	const size_t sz = 16;

	fake_reset();
	xp_rdma_mrc_init(&mrc, &fake_ops);
	for (int i = 0; i < XP_RDMA_MAX_PINS; i++)
		CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + i * sz, sz), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + XP_RDMA_MAX_PINS * sz, sz), -ENOSPC);
	/* A slot freed in the middle is used again, and only once. */
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, arena + 7 * sz), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + XP_RDMA_MAX_PINS * sz, sz), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 7 * sz, sz), -ENOSPC);
	/* So is the last one. */
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, arena + (XP_RDMA_MAX_PINS - 1) * sz), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 7 * sz, sz), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + (XP_RDMA_MAX_PINS + 1) * sz, sz),
			-ENOSPC);
	xp_rdma_mrc_fini(&mrc);
	CU_ASSERT_EQUAL(fake_regs, 0);
	CU_ASSERT_EQUAL(fake_bad, 0);
}

static void test_mr_pinned_reuse(void)
{
	uint8_t *base = arena + 4096;
	const size_t len = 8192;
	struct xp_rdma_mreg r1, r2, r3, r4, r5;
	struct fake_mr *m;

	fake_reset();
	xp_rdma_mrc_init(&mrc, &fake_ops);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, base, len), 0);

	/* The first get registers the whole pinned range with that PD. */
	CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_a, base + 100, 1000, &r1), 0);
	CU_ASSERT_EQUAL(fake_regs, 1);
	CU_ASSERT(r1.mr_pin >= 0);
	m = r1.mr_handle;
	CU_ASSERT_PTR_EQUAL(m, &fake_mrs[0]);
	CU_ASSERT_PTR_EQUAL(m->fm_pd, &pd_a);
	CU_ASSERT_EQUAL(m->fm_addr, (uintptr_t)base);
	CU_ASSERT_EQUAL(m->fm_len, len);
	CU_ASSERT_EQUAL(r1.mr_lkey, 0x10001u);
	CU_ASSERT_EQUAL(r1.mr_rkey, 0x20001u);

	/* Later gets in the range reuse it, up to the whole range. */
	CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_a, base, len, &r2), 0);
	CU_ASSERT_EQUAL(fake_regs, 1);
	CU_ASSERT_PTR_EQUAL(r2.mr_handle, r1.mr_handle);
	CU_ASSERT_EQUAL(r2.mr_lkey, r1.mr_lkey);
	CU_ASSERT_EQUAL(r2.mr_rkey, r1.mr_rkey);

	/* Another PD needs its own registration, once. */
	CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_b, base + len - 1, 1, &r3), 0);
	CU_ASSERT_EQUAL(fake_regs, 2);
	m = r3.mr_handle;
	CU_ASSERT_PTR_NOT_EQUAL(r3.mr_handle, r1.mr_handle);
	CU_ASSERT_PTR_EQUAL(m->fm_pd, &pd_b);
	CU_ASSERT_EQUAL(m->fm_addr, (uintptr_t)base);
	CU_ASSERT_EQUAL(m->fm_len, len);
	CU_ASSERT_NOT_EQUAL(r3.mr_lkey, r1.mr_lkey);
	CU_ASSERT_NOT_EQUAL(r3.mr_rkey, r1.mr_rkey);
	CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_b, base + 10, 10, &r4), 0);
	CU_ASSERT_EQUAL(fake_regs, 2);
	CU_ASSERT_PTR_EQUAL(r4.mr_handle, r3.mr_handle);
	CU_ASSERT_EQUAL(r4.mr_rkey, r3.mr_rkey);

	CU_ASSERT_EQUAL(mrc.c_stats.ms_pinned_hits, 4);
	CU_ASSERT_EQUAL(mrc.c_stats.ms_pin_regs, 2);
	CU_ASSERT_EQUAL(mrc.c_stats.ms_transient_regs, 0);

	/* Puts keep the pin's registrations; the next get still hits. */
	xp_rdma_mrc_put(&mrc, &r1);
	xp_rdma_mrc_put(&mrc, &r2);
	xp_rdma_mrc_put(&mrc, &r3);
	xp_rdma_mrc_put(&mrc, &r4);
	CU_ASSERT_EQUAL(fake_live, 2);
	CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_a, base + 4000, 4000, &r5), 0);
	CU_ASSERT_EQUAL(fake_regs, 2);
	CU_ASSERT_EQUAL(r5.mr_lkey, 0x10001u);
	CU_ASSERT_EQUAL(mrc.c_stats.ms_pinned_hits, 5);
	xp_rdma_mrc_put(&mrc, &r5);

	/* fini deregisters every PD's registration. */
	xp_rdma_mrc_fini(&mrc);
	CU_ASSERT_EQUAL(fake_live, 0);
	CU_ASSERT_EQUAL(fake_bad, 0);
}

static void test_mr_transient(void)
{
	uint8_t *base = arena + 4096;
	const size_t len = 8192;
	struct xp_rdma_mreg r1, r2, r3;
	struct fake_mr *m;

	fake_reset();
	xp_rdma_mrc_init(&mrc, &fake_ops);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, base, len), 0);

	/* Straddling the pin's end: registered as asked, for this transfer. */
	CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_a, base + len - 100, 400, &r1), 0);
	CU_ASSERT_EQUAL(r1.mr_pin, -1);
	CU_ASSERT_EQUAL(fake_live, 1);
	m = r1.mr_handle;
	CU_ASSERT_PTR_EQUAL(m->fm_pd, &pd_a);
	CU_ASSERT_EQUAL(m->fm_addr, (uintptr_t)(base + len - 100));
	CU_ASSERT_EQUAL(m->fm_len, 400);
	/* Straddling its start, and outside any pin. */
	CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_a, base - 10, 20, &r2), 0);
	CU_ASSERT_EQUAL(r2.mr_pin, -1);
	CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_b, arena + 30000, 10, &r3), 0);
	CU_ASSERT_EQUAL(r3.mr_pin, -1);
	CU_ASSERT_EQUAL(fake_live, 3);
	CU_ASSERT_EQUAL(mrc.c_stats.ms_transient_regs, 3);
	CU_ASSERT_EQUAL(mrc.c_stats.ms_pinned_hits, 0);
	CU_ASSERT_EQUAL(mrc.c_stats.ms_pin_regs, 0);

	xp_rdma_mrc_put(&mrc, &r1);
	CU_ASSERT_EQUAL(fake_live, 2);
	xp_rdma_mrc_put(&mrc, &r2);
	xp_rdma_mrc_put(&mrc, &r3);
	CU_ASSERT_EQUAL(fake_live, 0);
	CU_ASSERT_EQUAL(fake_regs, 3);
	/* The pin is not in use by transient transfers. */
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, base), 0);
	xp_rdma_mrc_fini(&mrc);
	CU_ASSERT_EQUAL(fake_live, 0);
	CU_ASSERT_EQUAL(fake_bad, 0);
}

static void test_mr_busy(void)
{
	uint8_t *base = arena + 4096;
	const size_t len = 8192;
	struct xp_rdma_mreg ra, rb, rt;

	fake_reset();
	xp_rdma_mrc_init(&mrc, &fake_ops);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, base, len), 0);
	CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_a, base, 100, &ra), 0);
	CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_b, base + 200, 100, &rb), 0);
	CU_ASSERT_EQUAL(fake_live, 2);

	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, base), -EBUSY);
	CU_ASSERT_EQUAL(fake_live, 2);
	xp_rdma_mrc_put(&mrc, &ra);
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, base), -EBUSY);
	CU_ASSERT_EQUAL(fake_live, 2);
	xp_rdma_mrc_put(&mrc, &rb);
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, base), 0);
	CU_ASSERT_EQUAL(fake_live, 0);

	/* Once unpinned, the range is registered per transfer. */
	CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_a, base, 100, &rt), 0);
	CU_ASSERT_EQUAL(rt.mr_pin, -1);
	CU_ASSERT_EQUAL(fake_live, 1);
	xp_rdma_mrc_put(&mrc, &rt);
	CU_ASSERT_EQUAL(fake_live, 0);
	xp_rdma_mrc_fini(&mrc);
	CU_ASSERT_EQUAL(fake_regs, 3);
	CU_ASSERT_EQUAL(fake_bad, 0);
}

static void test_mr_reg_fails(void)
{
	uint8_t *base = arena + 4096;
	const size_t len = 8192;
	struct xp_rdma_mreg r;

	fake_reset();
	xp_rdma_mrc_init(&mrc, &fake_ops);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, base, len), 0);
	fake_fail = -ENOMEM;
	CU_ASSERT_EQUAL(xp_rdma_mrc_get(&mrc, &pd_a, base + 10, 100, &r), -ENOMEM);
	CU_ASSERT_EQUAL(xp_rdma_mrc_get(&mrc, &pd_a, arena + 30000, 100, &r), -ENOMEM);
	CU_ASSERT_EQUAL(fake_live, 0);
	CU_ASSERT_EQUAL(mrc.c_stats.ms_pinned_hits, 0);
	CU_ASSERT_EQUAL(mrc.c_stats.ms_pin_regs, 0);
	CU_ASSERT_EQUAL(mrc.c_stats.ms_transient_regs, 0);
	/* The failed get left no user on the pin. */
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, base), 0);

	/* Registration works again: a fresh pin registers normally. */
	fake_fail = 0;
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, base, len), 0);
	CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_a, base + 10, 100, &r), 0);
	CU_ASSERT(r.mr_pin >= 0);
	CU_ASSERT_EQUAL(fake_regs, 1);
	xp_rdma_mrc_put(&mrc, &r);
	xp_rdma_mrc_fini(&mrc);
	CU_ASSERT_EQUAL(fake_live, 0);
	CU_ASSERT_EQUAL(fake_bad, 0);
}

static void test_mr_many_pds(void)
{
	static int pds[XP_RDMA_MAX_PDS + 1];
	struct xp_rdma_mreg r[XP_RDMA_MAX_PDS + 1];
	uint8_t *base = arena + 4096;

	/* More PDs than a pin keeps registrations for: every get still
	 * succeeds and nothing leaks. */
	fake_reset();
	xp_rdma_mrc_init(&mrc, &fake_ops);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, base, 4096), 0);
	for (int i = 0; i <= XP_RDMA_MAX_PDS; i++) {
		CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pds[i], base, 64, &r[i]), 0);
		CU_ASSERT_PTR_EQUAL(((struct fake_mr *)r[i].mr_handle)->fm_pd, &pds[i]);
	}
	CU_ASSERT_EQUAL(fake_live, XP_RDMA_MAX_PDS + 1);
	for (int i = 0; i <= XP_RDMA_MAX_PDS; i++)
		xp_rdma_mrc_put(&mrc, &r[i]);
	CU_ASSERT_EQUAL(fake_live, XP_RDMA_MAX_PDS);
	xp_rdma_mrc_fini(&mrc);
	CU_ASSERT_EQUAL(fake_live, 0);
	CU_ASSERT_EQUAL(fake_bad, 0);
}

static void test_mr_fini(void)
{
	struct xp_rdma_mreg r;

	fake_reset();
	xp_rdma_mrc_init(&mrc, &fake_ops);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena, 1024), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 2048, 1024), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 8192, 1024), 0);  /* never used */
	CU_ASSERT_EQUAL(xp_rdma_mrc_unpin(&mrc, arena + 8192), 0);
	CU_ASSERT_EQUAL(xp_rdma_mrc_pin(&mrc, arena + 9000, 64), 0);    /* never used */
	for (int i = 0; i < 2; i++) {
		uint8_t *p = arena + 2048 * i;

		CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_a, p, 10, &r), 0);
		xp_rdma_mrc_put(&mrc, &r);
		CU_ASSERT_EQUAL_FATAL(xp_rdma_mrc_get(&mrc, &pd_b, p, 10, &r), 0);
		xp_rdma_mrc_put(&mrc, &r);
	}
	CU_ASSERT_EQUAL(fake_live, 4);
	xp_rdma_mrc_fini(&mrc);
	CU_ASSERT_EQUAL(fake_live, 0);
	CU_ASSERT_EQUAL(fake_regs, 4);
	CU_ASSERT_EQUAL(fake_bad, 0);
}

int main(void)
{
	CU_pSuite suite;
	unsigned int failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite("xprt_rdma", NULL, NULL);
	if (!suite ||
	    !CU_add_test(suite, "frame round trip", test_frame_roundtrip) ||
	    !CU_add_test(suite, "frame byte layout", test_frame_bytes) ||
	    !CU_add_test(suite, "frame rejects", test_frame_reject) ||
	    !CU_add_test(suite, "credit rules", test_credit_rules) ||
	    !CU_add_test(suite, "credit simulation", test_credit_sim) ||
	    !CU_add_test(suite, "rxq fifo", test_rxq_fifo) ||
	    !CU_add_test(suite, "rxq copy", test_rxq_copy) ||
	    !CU_add_test(suite, "mr pin arguments", test_mr_pin_args) ||
	    !CU_add_test(suite, "mr pin limit", test_mr_pin_limit) ||
	    !CU_add_test(suite, "mr pinned reuse", test_mr_pinned_reuse) ||
	    !CU_add_test(suite, "mr transient", test_mr_transient) ||
	    !CU_add_test(suite, "mr unpin busy", test_mr_busy) ||
	    !CU_add_test(suite, "mr registration fails", test_mr_reg_fails) ||
	    !CU_add_test(suite, "mr more pds than slots", test_mr_many_pds) ||
	    !CU_add_test(suite, "mr fini", test_mr_fini)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
