/* SPDX-License-Identifier: MIT */
/*
 * The RDMA provider's device-free parts: the frames that travel in SEND
 * messages, credit-based flow control, and the receive queue that turns
 * frames back into the byte stream the RPC layer reads.  Nothing here calls
 * libibverbs, so unit tests run on any machine.
 *
 * Frames
 *   Every SEND carries one frame: a 32-byte little-endian header and, for
 *   DATA, up to XP_RDMA_SLOT - XP_RDMA_FRAME_HDR bytes of the stream.
 *     DATA    stream bytes carried inline.
 *     BULK    a descriptor {id, addr, rkey, len} of @len stream bytes the
 *             receiver pulls with RDMA READ from the sender's registered
 *             buffer, straight into the buffer the reader gives.
 *     DONE    {id}: the receiver has pulled bulk @id; the sender may reuse
 *             its buffer.
 *     CREDIT  nothing but returned credits.
 *   Every frame returns credits (fh_credits): receive buffers the sender of
 *   the frame has posted again since its last frame.
 *
 * Flow control
 *   Each side posts XP_RDMA_DEPTH receive buffers.  A DATA, BULK or CREDIT
 *   frame consumes one of the peer's; without a credit we do not send, so
 *   the peer never sees a SEND without a posted buffer (RNR).  One credit
 *   is kept back for CREDIT frames, so credits can always be returned.
 *   DONE frames need no credit: the sender of a BULK posts one more receive
 *   buffer for the DONE it will get back before it sends the BULK.  So a
 *   puller can always say DONE, even to a peer that has stopped reading
 *   (a server under backpressure waiting for that very DONE).
 */
#ifndef NC_XPRT_RDMA_PROTO_H
#define NC_XPRT_RDMA_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XP_RDMA_SLOT (16u * 1024)       /* bytes of one SEND/RECV buffer */
#define XP_RDMA_DEPTH 32                /* receive buffers posted per side */
#define XP_RDMA_FRAME_HDR 32
#define XP_RDMA_FRAME_DATA_MAX (XP_RDMA_SLOT - XP_RDMA_FRAME_HDR)
/* An iovec entry of at least this many bytes goes as BULK (one-sided),
 * smaller ones inline. */
#define XP_RDMA_BULK_MIN (16u * 1024)
#define XP_RDMA_FRAME_MAGIC 0x4e52u     /* "NR" */

enum xp_rdma_frame_type {
	XP_RDMA_F_DATA = 1,
	XP_RDMA_F_BULK = 2,
	XP_RDMA_F_DONE = 3,
	XP_RDMA_F_CREDIT = 4,
};

/* The frame header on the wire (32 bytes, little-endian):
 *   0 u16 magic   2 u8 type   3 u8 pad   4 u16 credits   6 u16 pad
 *   8 u32 len (DATA: payload bytes; BULK: bulk bytes)   12 u32 id
 *  16 u64 addr (BULK)   24 u32 rkey (BULK)   28 u32 pad */
struct xp_rdma_frame {
	uint8_t fh_type;
	uint16_t fh_credits;
	uint32_t fh_len;
	uint32_t fh_id;
	uint64_t fh_addr;
	uint32_t fh_rkey;
};

/* Writes the header into @out (XP_RDMA_FRAME_HDR bytes). */
void xp_rdma_frame_encode(const struct xp_rdma_frame *f, uint8_t *out);
/*
 * Decodes a received message of @len bytes.  0, or -NC_E_PROTO when it is
 * shorter than a header, has a bad magic or type, or a DATA length that
 * does not match @len, or a BULK of zero bytes.  On success a DATA
 * payload starts at @buf + XP_RDMA_FRAME_HDR.
 */
int xp_rdma_frame_decode(const uint8_t *buf, size_t len, struct xp_rdma_frame *f);

/* ---- credits ---- */

struct xp_rdma_credits {
	int cr_tx;      /* SENDs we may still post (the peer's free buffers) */
	int cr_owed;    /* buffers we reposted and have not yet announced */
};

void xp_rdma_credits_init(struct xp_rdma_credits *c, int peer_depth);
/* Whether a frame of @type may be sent now (DATA and BULK leave the last
 * credit for CREDIT frames; DONE needs none). */
bool xp_rdma_credits_can_send(const struct xp_rdma_credits *c, int type);
/* A frame of @type is being sent: consumes a credit (not for DONE), and
 * returns the credits to put in its header (all owed ones). */
uint16_t xp_rdma_credits_on_send(struct xp_rdma_credits *c, int type);
/* A frame arrived announcing @n credits.  -NC_E_PROTO when the peer claims
 * more than it could hold (cr_tx above @peer_depth). */
int xp_rdma_credits_on_recv(struct xp_rdma_credits *c, uint16_t n, int peer_depth);
/* One of our receive buffers was posted again. */
void xp_rdma_credits_reposted(struct xp_rdma_credits *c);
/* Whether owed credits should go back now in a CREDIT frame: enough are
 * owed that the peer may be running short. */
bool xp_rdma_credits_should_return(const struct xp_rdma_credits *c, int depth);

/* ---- receive queue ---- */

/* One item of the stream, held in receive buffer @it_slot: inline bytes,
 * or a bulk descriptor to pull. */
struct xp_rdma_item {
	int it_type;                    /* XP_RDMA_F_DATA or XP_RDMA_F_BULK */
	int it_slot;                    /* the receive buffer it came in */
	const uint8_t *it_data;         /* DATA: payload */
	uint32_t it_len;
	uint32_t it_off;                /* bytes already consumed */
	uint32_t it_id;                 /* BULK */
	uint64_t it_addr;
	uint32_t it_rkey;
};

/* A FIFO of items.  Each item keeps its receive buffer until consumed, so
 * a peer that respects credits never has more than XP_RDMA_DEPTH queued. */
#define XP_RDMA_RXQ_CAP XP_RDMA_DEPTH
struct xp_rdma_rxq {
	struct xp_rdma_item q_items[XP_RDMA_RXQ_CAP];
	int q_head, q_len;
};

void xp_rdma_rxq_init(struct xp_rdma_rxq *q);
/* 0, or -NC_E_PROTO when full (a peer that ignores credits). */
int xp_rdma_rxq_push(struct xp_rdma_rxq *q, const struct xp_rdma_item *it);
/* The first item, or NULL. */
struct xp_rdma_item *xp_rdma_rxq_head(struct xp_rdma_rxq *q);
void xp_rdma_rxq_pop(struct xp_rdma_rxq *q);
/*
 * Copies inline bytes from the head DATA items into @buf (up to @len),
 * popping items fully consumed; for each popped item calls
 * @slot_done(@arg, slot) so the caller can repost the buffer.  Stops at a
 * BULK item or an empty queue.  Returns the bytes copied.
 */
size_t xp_rdma_rxq_copy(struct xp_rdma_rxq *q, void *buf, size_t len,
			void (*slot_done)(void *arg, int slot), void *arg);

#endif
