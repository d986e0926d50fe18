/* SPDX-License-Identifier: MIT */
/*
 * The RDMA transport (libibverbs + librdmacm): reliable-connected queue
 * pairs, request and reply bytes in SEND/RECV frames, bulk data pulled
 * with one-sided RDMA READ.  See docs/rdma.md for the design and why the
 * receiver pulls.
 *
 * What the RPC layer sees is the transport interface of xprt.h: a
 * connection is an eventfd, readable while xo_recv has something to give.
 * One progress thread per process does everything the device asks for:
 * it waits on the completion channels (or polls the queues, with
 * NACRE_RDMA_POLL=1), turns received frames into the connection's receive
 * queue, completes pulls, returns credits, handles connection-manager
 * events (disconnects) and tears connections down.
 *
 *   sender                                   receiver
 *   xo_sendv(hdr, body, bulk)
 *     DATA frame(s)  --- SEND ------------->  queue, eventfd readable
 *     BULK {id, addr, rkey, len} -- SEND -->  queue
 *                                             xo_recv(hdr, body): copies
 *                                             xo_recv(bulk dst): RDMA READ
 *                    <------ READ ----------  straight into dst
 *     (waits)        <------ DONE {id} -----  the read completed
 *   returns; the buffer is free again
 *
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/xprt_rdma_int.h"

/* ---- connection state (c_lock held) ---- */

/* Keeps the eventfd readable exactly while xo_recv would not say -EAGAIN. */
void xp_rdma_conn_update_readable(struct xr_conn *c)
{
	struct xp_rdma_item *it = xp_rdma_rxq_head(&c->c_rxq);
	bool want = c->c_dead ||
		    (it && (it->it_type == XP_RDMA_F_DATA || !c->c_rd_posted || c->c_rd_done));
	uint64_t v = 1;

	if (want == c->c_readable)
		return;
	if (want) {
		if (write(c->c_fd, &v, sizeof(v)) != sizeof(v))
			nc_error("rdma", "eventfd write: %s", strerror(errno));
	} else if (read(c->c_fd, &v, sizeof(v)) < 0 && errno != EAGAIN) {
		nc_error("rdma", "eventfd read: %s", strerror(errno));
	}
	c->c_readable = want;
}

void xp_rdma_conn_fail(struct xr_conn *c, int err)
{
	if (!c->c_dead) {
		c->c_dead = true;
		c->c_err = err;
	}
	pthread_cond_broadcast(&c->c_cond);
	xp_rdma_conn_update_readable(c);
}

int xp_rdma_conn_post_recv(struct xr_conn *c, int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->c_rxbuf + (size_t)slot * XP_RDMA_SLOT),
		.length = XP_RDMA_SLOT,
		.lkey = c->c_rxmr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = XR_WRID(XR_WR_RECV, slot), .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	int rc = ibv_post_recv(c->c_id->qp, &wr, &bad);

	return rc ? -rc : 0;
}

/* A receive buffer is free again: post it and owe the peer a credit. */
static void conn_repost(struct xr_conn *c, int slot)
{
	if (c->c_dead)
		return;
	if (xp_rdma_conn_post_recv(c, slot)) {
		xp_rdma_conn_fail(c, -EIO);
		return;
	}
	xp_rdma_credits_reposted(&c->c_cr);
}

/* Posts a frame from tx slot @slot (header already in place). */
static int conn_post_slot(struct xr_conn *c, int slot, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->c_txbuf + (size_t)slot * XP_RDMA_SLOT),
		.length = len,
		.lkey = c->c_txmr->lkey,
	};
	struct ibv_send_wr wr = { .wr_id = XR_WRID(XR_WR_SEND, slot), .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int rc = ibv_post_send(c->c_id->qp, &wr, &bad);

	if (rc) {
		c->c_txfree[c->c_ntxfree++] = slot;
		return -rc;
	}
	atomic_fetch_add(&xp_rdma.x_sends, 1);
	return 0;
}

/* Sends a frame now if a credit and a buffer are free: 0, -EAGAIN, -errno. */
static int conn_try_frame(struct xr_conn *c, struct xp_rdma_frame *f, const void *data,
			  uint32_t len)
{
	uint8_t *p;
	int slot;

	if (c->c_dead)
		return c->c_err ? c->c_err : -ECONNRESET;
	if (!xp_rdma_credits_can_send(&c->c_cr, f->fh_type) || !c->c_ntxfree)
		return -EAGAIN;
	slot = c->c_txfree[--c->c_ntxfree];
	p = c->c_txbuf + (size_t)slot * XP_RDMA_SLOT;
	f->fh_credits = xp_rdma_credits_on_send(&c->c_cr, f->fh_type);
	xp_rdma_frame_encode(f, p);
	if (len)
		memcpy(p + XP_RDMA_FRAME_HDR, data, len);
	return conn_post_slot(c, slot, XP_RDMA_FRAME_HDR + len);
}

/* Control frames that never wait: DONE up to what we pulled, and owed
 * credits when the peer may be running short.  Tried again whenever a
 * credit or a send buffer comes back. */
static void conn_flush_control(struct xr_conn *c)
{
	struct xp_rdma_frame f = { 0 };

	while (c->c_pull_done != c->c_pull_done_sent) {
		memset(&f, 0, sizeof(f));
		f.fh_type = XP_RDMA_F_DONE;
		f.fh_id = c->c_pull_done_sent + 1;
		if (conn_try_frame(c, &f, NULL, 0))
			break;
		c->c_pull_done_sent = f.fh_id;
	}
	if (xp_rdma_credits_should_return(&c->c_cr, XP_RDMA_DEPTH)) {
		memset(&f, 0, sizeof(f));
		f.fh_type = XP_RDMA_F_CREDIT;
		conn_try_frame(c, &f, NULL, 0);
	}
}

/* Waits (c_lock held) up to a second for a change on @c; past @deadline
 * the peer is dead: -ETIMEDOUT and @c failed. */
static int conn_wait(struct xr_conn *c, int64_t deadline)
{
	struct timespec ts;

	if (nc_now_ms() >= deadline) {
		xp_rdma_conn_fail(c, -ETIMEDOUT);
		return -ETIMEDOUT;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	pthread_cond_timedwait(&c->c_cond, &c->c_lock, &ts);
	return 0;
}

/* Sends a frame, waiting for a credit and a buffer. */
static int conn_send_frame(struct xr_conn *c, struct xp_rdma_frame *f, const void *data,
			   uint32_t len)
{
	int64_t deadline = nc_now_ms() + XR_SEND_TIMEOUT_MS;
	bool waited = false;
	int rc;

	while ((rc = conn_try_frame(c, f, data, len)) == -EAGAIN) {
		if (!waited)
			atomic_fetch_add(&xp_rdma.x_credit_waits, 1);
		waited = true;
		if (conn_wait(c, deadline))
			return -ETIMEDOUT;
	}
	return rc;
}

/* Sends @len inline stream bytes in one DATA frame. */
static int conn_send_data(struct xr_conn *c, const void *data, uint32_t len)
{
	struct xp_rdma_frame f = { .fh_type = XP_RDMA_F_DATA, .fh_len = len };

	return conn_send_frame(c, &f, data, len);
}

/* Waits until we may have one more bulk outstanding, then posts the
 * receive buffer its DONE will land in. */
static int conn_post_done_buffer(struct xr_conn *c)
{
	int64_t deadline = nc_now_ms() + XR_SEND_TIMEOUT_MS;
	int slot, rc;

	while (!c->c_dead && (!c->c_nrxfree || c->c_bulk_next - c->c_bulk_done >= XR_MAX_BULKS))
		if (conn_wait(c, deadline))
			return -ETIMEDOUT;
	if (c->c_dead)
		return c->c_err ? c->c_err : -ECONNRESET;
	slot = c->c_rxfree[--c->c_nrxfree];
	rc = xp_rdma_conn_post_recv(c, slot);
	if (rc) {
		c->c_rxfree[c->c_nrxfree++] = slot;
		return rc;
	}
	return 0;
}

/* ---- completions, handled on the progress thread ---- */

static void handle_recv(struct xr_conn *c, int slot, uint32_t len)
{
	const uint8_t *buf = c->c_rxbuf + (size_t)slot * XP_RDMA_SLOT;
	struct xp_rdma_frame f;
	struct xp_rdma_item it = { 0 };
	int rc;

	atomic_fetch_add(&xp_rdma.x_recvs, 1);
	rc = xp_rdma_frame_decode(buf, len, &f);
	if (!rc)
		rc = xp_rdma_credits_on_recv(&c->c_cr, f.fh_credits, XP_RDMA_DEPTH);
	if (rc) {
		nc_warn("rdma", "malformed frame (%u bytes) from peer: closing", len);
		xp_rdma_conn_fail(c, -NC_E_PROTO);
		return;
	}
	switch (f.fh_type) {
	case XP_RDMA_F_DATA:
	case XP_RDMA_F_BULK:
		it.it_type = f.fh_type;
		it.it_slot = slot;
		it.it_data = buf + XP_RDMA_FRAME_HDR;
		it.it_len = f.fh_len;
		it.it_id = f.fh_id;
		it.it_addr = f.fh_addr;
		it.it_rkey = f.fh_rkey;
		if (xp_rdma_rxq_push(&c->c_rxq, &it)) {
			xp_rdma_conn_fail(c, -NC_E_PROTO);
			return;
		}
		break;
	case XP_RDMA_F_DONE:
		/* Pulls complete in order, one DONE each.  The buffer was the
		 * extra one posted with the BULK: it is not reposted. */
		if (f.fh_id != c->c_bulk_done + 1 || c->c_bulk_done == c->c_bulk_next) {
			nc_warn("rdma", "DONE for bulk %u never sent: closing", f.fh_id);
			xp_rdma_conn_fail(c, -NC_E_PROTO);
			return;
		}
		c->c_bulk_done = f.fh_id;
		c->c_rxfree[c->c_nrxfree++] = slot;
		break;
	default:
		conn_repost(c, slot);
		break;
	}
	xp_rdma_conn_update_readable(c);
}

static void handle_wc(struct xr_conn *c, const struct ibv_wc *wc)
{
	int kind = (int)(wc->wr_id >> 32), slot = (int)(uint32_t)wc->wr_id;

	pthread_mutex_lock(&c->c_lock);
	switch (kind) {
	case XR_WR_RECV:
		if (wc->status == IBV_WC_SUCCESS)
			handle_recv(c, slot, wc->byte_len);
		else
			xp_rdma_conn_fail(c, -ECONNRESET);
		break;
	case XR_WR_SEND:
		c->c_txfree[c->c_ntxfree++] = slot;
		if (wc->status != IBV_WC_SUCCESS)
			xp_rdma_conn_fail(c, -ECONNRESET);
		break;
	case XR_WR_READ:
		atomic_fetch_sub(&xp_rdma.x_reads_inflight, 1);
		c->c_rd_done = true;
		c->c_rd_status = wc->status == IBV_WC_SUCCESS ? 0 : -EIO;
		if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR)
			nc_warn("rdma", "RDMA READ failed: %s", ibv_wc_status_str(wc->status));
		xp_rdma_conn_update_readable(c);
		break;
	default:
		break;
	}
	if (!c->c_dead)
		conn_flush_control(c);
	pthread_cond_broadcast(&c->c_cond);
	pthread_mutex_unlock(&c->c_lock);
}

void xp_rdma_conn_drain_cq(struct xr_conn *c)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(c->c_cq, 16, wc)) > 0)
		for (int i = 0; i < n; i++)
			handle_wc(c, &wc[i]);
}

/* ---- data ---- */

static int xr_sendv(int fd, struct iovec *iov, int iovcnt)
{
	/* Inline bytes gather here before they go out as a DATA frame. */
	static __thread uint8_t acc[XP_RDMA_FRAME_DATA_MAX];
	struct xr_conn *c = xp_rdma_conn_find(fd);
	struct xp_rdma_mreg mrs[XR_MAX_BULKS];
	struct xp_rdma_frame f;
	int nmr = 0, rc = 0;
	uint32_t accn = 0, last_bulk = 0;
	int64_t deadline;

	if (!c)
		return -EBADF;
	pthread_mutex_lock(&c->c_lock);
	for (int i = 0; i < iovcnt && !rc; i++) {
		const uint8_t *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		if (left >= XP_RDMA_BULK_MIN && left <= UINT32_MAX) {
			if (accn) {
				rc = conn_send_data(c, acc, accn);
				accn = 0;
				if (rc)
					break;
			}
			if (nmr == XR_MAX_BULKS) {
				rc = -E2BIG;
				break;
			}
			pthread_mutex_unlock(&c->c_lock);
			rc = xp_rdma_mr_get(c, (void *)(uintptr_t)p, left, &mrs[nmr]);
			pthread_mutex_lock(&c->c_lock);
			if (rc)
				break;
			rc = conn_post_done_buffer(c);
			if (rc)
				break;
			memset(&f, 0, sizeof(f));
			f.fh_type = XP_RDMA_F_BULK;
			f.fh_len = (uint32_t)left;
			f.fh_id = c->c_bulk_next + 1;
			f.fh_addr = (uintptr_t)p;
			f.fh_rkey = mrs[nmr++].mr_rkey;
			rc = conn_send_frame(c, &f, NULL, 0);
			if (rc)
				break;
			last_bulk = ++c->c_bulk_next;
			continue;
		}
		while (left && !rc) {
			size_t n = XP_RDMA_FRAME_DATA_MAX - accn;

			if (n > left)
				n = left;
			memcpy(acc + accn, p, n);
			accn += (uint32_t)n;
			p += n;
			left -= n;
			if (accn == XP_RDMA_FRAME_DATA_MAX) {
				rc = conn_send_data(c, acc, accn);
				accn = 0;
			}
		}
	}
	if (!rc && accn)
		rc = conn_send_data(c, acc, accn);
	/* The peer pulls our bulk buffers: they stay ours until it says so. */
	deadline = nc_now_ms() + XR_SEND_TIMEOUT_MS;
	while (!rc && last_bulk && (int32_t)(c->c_bulk_done - last_bulk) < 0) {
		if (c->c_dead)
			rc = c->c_err ? c->c_err : -ECONNRESET;
		else
			rc = conn_wait(c, deadline);
	}
	if (rc && !c->c_dead)
		xp_rdma_conn_fail(c, rc);
	pthread_mutex_unlock(&c->c_lock);
	/* On failure the peer may still be reading: deregistering revokes
	 * its access before the caller frees the buffer. */
	for (int i = 0; i < nmr; i++)
		xp_rdma_mr_put(&mrs[i]);
	return rc;
}

/* Reader's pull of the head BULK item into @buf (c_lock held). */
static ssize_t conn_pull(struct xr_conn *c, struct xp_rdma_item *it, void *buf, size_t len)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;
	uint32_t n;
	int rc, slot;

	if (c->c_rd_posted && !c->c_rd_done)
		return -EAGAIN;
	if (c->c_rd_posted) {
		n = c->c_rd_len;
		rc = c->c_rd_status;
		c->c_rd_posted = false;
		c->c_rd_done = false;
		pthread_mutex_unlock(&c->c_lock);
		xp_rdma_mr_put(&c->c_rd_mr);
		pthread_mutex_lock(&c->c_lock);
		if (!rc && c->c_rd_buf != buf)
			rc = -EINVAL;   /* the reader changed buffers mid-pull */
		if (rc) {
			xp_rdma_conn_fail(c, -EIO);
			return -EIO;
		}
		atomic_fetch_add(&xp_rdma.x_read_bytes, n);
		it->it_off += n;
		if (it->it_off == it->it_len) {
			slot = it->it_slot;
			c->c_pull_done++;
			xp_rdma_rxq_pop(&c->c_rxq);
			conn_repost(c, slot);
			conn_flush_control(c);
		}
		xp_rdma_conn_update_readable(c);
		return n;
	}
	n = it->it_len - it->it_off;
	if (n > len)
		n = (uint32_t)len;
	pthread_mutex_unlock(&c->c_lock);
	rc = xp_rdma_mr_get(c, buf, n, &c->c_rd_mr);
	pthread_mutex_lock(&c->c_lock);
	if (rc) {
		xp_rdma_conn_fail(c, rc);
		return rc;
	}
	sge.addr = (uintptr_t)buf;
	sge.length = n;
	sge.lkey = c->c_rd_mr.mr_lkey;
	wr.wr_id = XR_WRID(XR_WR_READ, 0);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = it->it_addr + it->it_off;
	wr.wr.rdma.rkey = it->it_rkey;
	c->c_rd_posted = true;
	c->c_rd_done = false;
	c->c_rd_buf = buf;
	c->c_rd_len = n;
	rc = ibv_post_send(c->c_id->qp, &wr, &bad);
	if (rc) {
		c->c_rd_posted = false;
		pthread_mutex_unlock(&c->c_lock);
		xp_rdma_mr_put(&c->c_rd_mr);
		pthread_mutex_lock(&c->c_lock);
		xp_rdma_conn_fail(c, -rc);
		return -rc;
	}
	atomic_fetch_add(&xp_rdma.x_reads, 1);
	{
		uint_fast64_t now = atomic_fetch_add(&xp_rdma.x_reads_inflight, 1) + 1;
		uint_fast64_t max = atomic_load(&xp_rdma.x_reads_inflight_max);

		while (now > max && !atomic_compare_exchange_weak(&xp_rdma.x_reads_inflight_max,
								  &max, now))
			;
	}
	xp_rdma_conn_update_readable(c);
	return -EAGAIN;
}

static void slot_done(void *arg, int slot)
{
	conn_repost(arg, slot);
}

static ssize_t xr_recv(int fd, void *buf, size_t len)
{
	struct xr_conn *c = xp_rdma_conn_find(fd);
	struct xp_rdma_item *it;
	ssize_t n;

	if (!c)
		return -EBADF;
	if (!len)
		return 0;
	pthread_mutex_lock(&c->c_lock);
	it = xp_rdma_rxq_head(&c->c_rxq);
	if (!it) {
		n = c->c_dead ? (c->c_err ? c->c_err : 0) : -EAGAIN;
	} else if (it->it_type == XP_RDMA_F_DATA) {
		n = (ssize_t)xp_rdma_rxq_copy(&c->c_rxq, buf, len, slot_done, c);
		conn_flush_control(c);
		xp_rdma_conn_update_readable(c);
	} else if (c->c_dead && !(c->c_rd_posted && c->c_rd_done)) {
		n = c->c_err ? c->c_err : -ECONNRESET;
	} else {
		n = conn_pull(c, it, buf, len);
	}
	pthread_mutex_unlock(&c->c_lock);
	return n;
}

/* Sendfile through a staging buffer of the calling thread, pinned once:
 * an OSS's service threads reuse theirs for every read they serve. */
static __thread uint8_t *xr_stage;
static __thread size_t xr_stage_len;

static int stage_get(size_t len)
{
	void *p;

	if (xr_stage_len >= len)
		return 0;
	if (xr_stage) {
		if (nc_xprt_mem_unpin(xr_stage))
			return -EBUSY;
		free(xr_stage);
		xr_stage = NULL;
		xr_stage_len = 0;
	}
	if (len < (1u << 20))
		len = 1u << 20;
	if (posix_memalign(&p, 4096, len))
		return -ENOMEM;
	if (nc_xprt_mem_pin(p, len)) {
		free(p);
		return -ENOMEM;
	}
	xr_stage = p;
	xr_stage_len = len;
	return 0;
}

static int xr_sendfile(int fd, struct iovec *iov, int iovcnt, int file_fd, off_t off,
		       size_t len)
{
	struct iovec v[4];
	size_t done = 0;
	int rc;

	if (iovcnt > 3)
		return -EINVAL;
	rc = stage_get(len);
	if (rc)
		return rc;
	while (done < len) {
		ssize_t n = pread(file_fd, xr_stage + done, len - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	memcpy(v, iov, sizeof(*iov) * (size_t)iovcnt);
	v[iovcnt].iov_base = xr_stage;
	v[iovcnt].iov_len = len;
	return xr_sendv(fd, v, iovcnt + 1);
}

const struct nc_xprt_ops nc_xprt_rdma = {
	.xo_name = "rdma",
	.xo_listen = xp_rdma_listen,
	.xo_accept = xp_rdma_accept,
	.xo_connect = xp_rdma_connect,
	.xo_sendv = xr_sendv,
	.xo_sendfile = xr_sendfile,
	.xo_recv = xr_recv,
	.xo_shutdown = xp_rdma_shutdown,
	.xo_close = xp_rdma_close,
};
