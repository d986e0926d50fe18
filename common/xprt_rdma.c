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
 * Locking: xr.x_lock guards the tables and the registration cache;
 * c_lock guards one connection's state.  x_lock is taken before c_lock.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/types.h"
#include "common/xprt.h"
#include "common/xprt_rdma_mr.h"
#include "common/xprt_rdma_proto.h"

#define XR_TX_SLOTS (XP_RDMA_DEPTH + 2)
#define XR_MAX_FD 65536
/* A peer that takes neither our frames nor our bulk for this long is dead. */
#define XR_SEND_TIMEOUT_MS 60000
/* Bulks a connection may have outstanding before a sender waits for
 * DONE; each holds one extra receive buffer for its DONE. */
#define XR_MAX_BULKS 8
#define XR_RX_SLOTS (XP_RDMA_DEPTH + XR_MAX_BULKS)

/* Private data of the connect request and reply. */
#define XR_CM_MAGIC 0x6e637264u  /* "ncrd" */
#define XR_CM_LEN 8

enum { XR_WR_RECV = 1, XR_WR_SEND = 2, XR_WR_READ = 3 };
#define XR_WRID(kind, slot) ((uint64_t)(kind) << 32 | (uint32_t)(slot))

struct xr_dev {
	struct ibv_context *d_verbs;
	struct ibv_pd *d_pd;
	struct ibv_comp_channel *d_ch;
	struct xr_dev *d_next;
};

struct xr_conn {
	int c_fd;                       /* the eventfd the RPC layer holds */
	struct rdma_cm_id *c_id;
	struct xr_dev *c_dev;
	struct ibv_cq *c_cq;
	uint8_t *c_rxbuf, *c_txbuf;
	struct ibv_mr *c_rxmr, *c_txmr;
	pthread_mutex_t c_lock;
	pthread_cond_t c_cond;
	int c_txfree[XR_TX_SLOTS];
	int c_ntxfree;
	int c_rxfree[XR_RX_SLOTS];      /* receive buffers not posted */
	int c_nrxfree;
	struct xp_rdma_credits c_cr;
	struct xp_rdma_rxq c_rxq;
	bool c_dead;
	int c_err;                      /* 0: the peer disconnected cleanly */
	bool c_readable;                /* the eventfd holds a count */
	/* the pull of the head BULK item */
	bool c_rd_posted, c_rd_done;
	int c_rd_status;
	void *c_rd_buf;
	uint32_t c_rd_len;
	struct xp_rdma_mreg c_rd_mr;
	/* bulks we sent: ids up to c_bulk_done were pulled */
	uint32_t c_bulk_next, c_bulk_done;
	/* bulks we pulled, and DONEs sent for them: one DONE each */
	uint32_t c_pull_done, c_pull_done_sent;
	/* teardown by the progress thread */
	bool c_torn_down;
	struct xr_conn *c_next;         /* x_conns, and the close queue */
	struct xr_conn *c_close_next;
};

struct xr_listener {
	struct rdma_event_channel *l_ch;
	struct rdma_cm_id *l_id;
	char l_host[NC_ADDR_MAX + 1];
};

static struct {
	pthread_once_t x_once;
	int x_init_rc;
	pthread_mutex_t x_lock;
	struct xr_conn **x_fds;         /* by eventfd */
	struct xr_listener **x_lis;     /* by event channel fd */
	struct xr_dev *x_devs;
	struct xr_conn *x_conns;
	struct xr_conn *x_closing;      /* waiting for teardown */
	struct rdma_event_channel *x_cm; /* events of established connections */
	int x_epfd, x_wakefd;
	bool x_poll_mode;
	pthread_t x_thread;
	struct xp_rdma_mrc x_mrc;
	atomic_uint_fast64_t x_conns_made, x_sends, x_recvs, x_reads, x_read_bytes,
		x_reads_inflight, x_reads_inflight_max, x_credit_waits;
} xr = { .x_once = PTHREAD_ONCE_INIT, .x_lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- memory registration ---- */

static int xr_mo_reg(void *pd, void *addr, size_t len, void **handle, uint32_t *lkey,
		     uint32_t *rkey)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, len,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);

	if (!mr)
		return errno ? -errno : -ENOMEM;
	*handle = mr;
	*lkey = mr->lkey;
	*rkey = mr->rkey;
	return 0;
}

static void xr_mo_dereg(void *handle)
{
	ibv_dereg_mr(handle);
}

static const struct xp_rdma_mr_ops xr_mr_ops = {
	.mo_reg = xr_mo_reg,
	.mo_dereg = xr_mo_dereg,
};

/* The cache needs no device: a program may pin before it connects. */
static struct xp_rdma_mrc *xr_mrc(void)
{
	if (!xr.x_mrc.c_ops)
		xp_rdma_mrc_init(&xr.x_mrc, &xr_mr_ops);
	return &xr.x_mrc;
}

int nc_xprt_mem_pin(void *addr, size_t len)
{
	int rc;

	pthread_mutex_lock(&xr.x_lock);
	rc = xp_rdma_mrc_pin(xr_mrc(), addr, len);
	pthread_mutex_unlock(&xr.x_lock);
	return rc;
}

int nc_xprt_mem_unpin(void *addr)
{
	int rc;

	pthread_mutex_lock(&xr.x_lock);
	rc = xp_rdma_mrc_unpin(xr_mrc(), addr);
	pthread_mutex_unlock(&xr.x_lock);
	return rc;
}

static int xr_mr_get(struct xr_conn *c, void *addr, size_t len, struct xp_rdma_mreg *r)
{
	int rc;

	pthread_mutex_lock(&xr.x_lock);
	rc = xp_rdma_mrc_get(xr_mrc(), c->c_dev->d_pd, addr, len, r);
	pthread_mutex_unlock(&xr.x_lock);
	return rc;
}

static void xr_mr_put(struct xp_rdma_mreg *r)
{
	pthread_mutex_lock(&xr.x_lock);
	xp_rdma_mrc_put(xr_mrc(), r);
	pthread_mutex_unlock(&xr.x_lock);
}

void nc_xprt_rdma_stats(struct nc_xprt_rdma_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->rs_conns = atomic_load(&xr.x_conns_made);
	s->rs_sends = atomic_load(&xr.x_sends);
	s->rs_recvs = atomic_load(&xr.x_recvs);
	s->rs_reads = atomic_load(&xr.x_reads);
	s->rs_read_bytes = atomic_load(&xr.x_read_bytes);
	s->rs_reads_inflight = atomic_load(&xr.x_reads_inflight);
	s->rs_reads_inflight_max = atomic_load(&xr.x_reads_inflight_max);
	s->rs_credit_waits = atomic_load(&xr.x_credit_waits);
	pthread_mutex_lock(&xr.x_lock);
	s->rs_pinned_hits = xr.x_mrc.c_stats.ms_pinned_hits;
	s->rs_transient_regs = xr.x_mrc.c_stats.ms_transient_regs;
	pthread_mutex_unlock(&xr.x_lock);
}

/* ---- connection state (c_lock held) ---- */

/* Keeps the eventfd readable exactly while xo_recv would not say -EAGAIN. */
static void conn_update_readable(struct xr_conn *c)
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

static void conn_fail(struct xr_conn *c, int err)
{
	if (!c->c_dead) {
		c->c_dead = true;
		c->c_err = err;
	}
	pthread_cond_broadcast(&c->c_cond);
	conn_update_readable(c);
}

static int conn_post_recv(struct xr_conn *c, int slot)
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
	if (conn_post_recv(c, slot)) {
		conn_fail(c, -EIO);
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
	atomic_fetch_add(&xr.x_sends, 1);
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

/* Sends a frame, waiting for a credit and a buffer. */
static int conn_send_frame(struct xr_conn *c, struct xp_rdma_frame *f, const void *data,
			   uint32_t len)
{
	int64_t deadline = nc_now_ms() + XR_SEND_TIMEOUT_MS;
	bool waited = false;
	int rc;

	while ((rc = conn_try_frame(c, f, data, len)) == -EAGAIN) {
		struct timespec ts;

		if (!waited)
			atomic_fetch_add(&xr.x_credit_waits, 1);
		waited = true;
		if (nc_now_ms() >= deadline) {
			conn_fail(c, -ETIMEDOUT);
			return -ETIMEDOUT;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&c->c_cond, &c->c_lock, &ts);
	}
	return rc;
}

/* Waits until we may have one more bulk outstanding, then posts the
 * receive buffer its DONE will land in. */
static int conn_post_done_buffer(struct xr_conn *c)
{
	int64_t deadline = nc_now_ms() + XR_SEND_TIMEOUT_MS;
	int slot, rc;

	while (!c->c_dead && (!c->c_nrxfree || c->c_bulk_next - c->c_bulk_done >= XR_MAX_BULKS)) {
		struct timespec ts;

		if (nc_now_ms() >= deadline) {
			conn_fail(c, -ETIMEDOUT);
			return -ETIMEDOUT;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&c->c_cond, &c->c_lock, &ts);
	}
	if (c->c_dead)
		return c->c_err ? c->c_err : -ECONNRESET;
	slot = c->c_rxfree[--c->c_nrxfree];
	rc = conn_post_recv(c, slot);
	if (rc) {
		c->c_rxfree[c->c_nrxfree++] = slot;
		return rc;
	}
	return 0;
}

/* ---- the progress thread ---- */

static void handle_recv(struct xr_conn *c, int slot, uint32_t len)
{
	const uint8_t *buf = c->c_rxbuf + (size_t)slot * XP_RDMA_SLOT;
	struct xp_rdma_frame f;
	struct xp_rdma_item it = { 0 };
	int rc;

	atomic_fetch_add(&xr.x_recvs, 1);
	rc = xp_rdma_frame_decode(buf, len, &f);
	if (!rc)
		rc = xp_rdma_credits_on_recv(&c->c_cr, f.fh_credits, XP_RDMA_DEPTH);
	if (rc) {
		nc_warn("rdma", "malformed frame (%u bytes) from peer: closing", len);
		conn_fail(c, -NC_E_PROTO);
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
			conn_fail(c, -NC_E_PROTO);
			return;
		}
		break;
	case XP_RDMA_F_DONE:
		/* Pulls complete in order, one DONE each.  The buffer was the
		 * extra one posted with the BULK: it is not reposted. */
		if (f.fh_id != c->c_bulk_done + 1 || c->c_bulk_done == c->c_bulk_next) {
			nc_warn("rdma", "DONE for bulk %u never sent: closing", f.fh_id);
			conn_fail(c, -NC_E_PROTO);
			return;
		}
		c->c_bulk_done = f.fh_id;
		c->c_rxfree[c->c_nrxfree++] = slot;
		break;
	default:
		conn_repost(c, slot);
		break;
	}
	conn_update_readable(c);
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
			conn_fail(c, -ECONNRESET);
		break;
	case XR_WR_SEND:
		c->c_txfree[c->c_ntxfree++] = slot;
		if (wc->status != IBV_WC_SUCCESS)
			conn_fail(c, -ECONNRESET);
		break;
	case XR_WR_READ:
		atomic_fetch_sub(&xr.x_reads_inflight, 1);
		c->c_rd_done = true;
		c->c_rd_status = wc->status == IBV_WC_SUCCESS ? 0 : -EIO;
		if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR)
			nc_warn("rdma", "RDMA READ failed: %s", ibv_wc_status_str(wc->status));
		conn_update_readable(c);
		break;
	default:
		break;
	}
	if (!c->c_dead)
		conn_flush_control(c);
	pthread_cond_broadcast(&c->c_cond);
	pthread_mutex_unlock(&c->c_lock);
}

static void conn_drain_cq(struct xr_conn *c)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(c->c_cq, 16, wc)) > 0)
		for (int i = 0; i < n; i++)
			handle_wc(c, &wc[i]);
}

static void dev_events(struct xr_dev *d)
{
	struct ibv_cq *cq;
	void *ctx;

	while (ibv_get_cq_event(d->d_ch, &cq, &ctx) == 0) {
		struct xr_conn *c = ctx;

		ibv_ack_cq_events(cq, 1);
		ibv_req_notify_cq(cq, 0);
		conn_drain_cq(c);
	}
}

static void cm_events(void)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(xr.x_cm, &ev) == 0) {
		struct xr_conn *c = ev->id->context;

		if (c && (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
			  ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL ||
			  ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT)) {
			pthread_mutex_lock(&c->c_lock);
			conn_fail(c, ev->event == RDMA_CM_EVENT_DISCONNECTED ? 0 : -ECONNRESET);
			pthread_mutex_unlock(&c->c_lock);
			/* Our side too, so the queue pair flushes. */
			rdma_disconnect(ev->id);
		}
		rdma_ack_cm_event(ev);
	}
}

static void conn_destroy(struct xr_conn *c)
{
	if (c->c_id->qp) {
		rdma_disconnect(c->c_id);
		rdma_destroy_qp(c->c_id);
	}
	/* Nothing touches our buffers from here on. */
	if (c->c_rd_posted) {
		if (!c->c_rd_done)
			atomic_fetch_sub(&xr.x_reads_inflight, 1);
		xr_mr_put(&c->c_rd_mr);
	}
	if (c->c_cq)
		ibv_destroy_cq(c->c_cq);
	if (c->c_rxmr)
		ibv_dereg_mr(c->c_rxmr);
	if (c->c_txmr)
		ibv_dereg_mr(c->c_txmr);
	rdma_destroy_id(c->c_id);
	free(c->c_rxbuf);
	free(c->c_txbuf);
}

/* Tears down the connections xo_close handed over. */
static void close_pending(void)
{
	struct xr_conn *list;

	pthread_mutex_lock(&xr.x_lock);
	list = xr.x_closing;
	xr.x_closing = NULL;
	pthread_mutex_unlock(&xr.x_lock);
	while (list) {
		struct xr_conn *c = list, **pp;

		list = c->c_close_next;
		pthread_mutex_lock(&xr.x_lock);
		for (pp = &xr.x_conns; *pp; pp = &(*pp)->c_next) {
			if (*pp == c) {
				*pp = c->c_next;
				break;
			}
		}
		pthread_mutex_unlock(&xr.x_lock);
		conn_destroy(c);
		pthread_mutex_lock(&c->c_lock);
		c->c_torn_down = true;
		pthread_cond_broadcast(&c->c_cond);
		pthread_mutex_unlock(&c->c_lock);
	}
}

static void poll_all(void)
{
	pthread_mutex_lock(&xr.x_lock);
	for (struct xr_conn *c = xr.x_conns; c; c = c->c_next)
		conn_drain_cq(c);
	pthread_mutex_unlock(&xr.x_lock);
}

static void *progress_main(void *arg)
{
	struct epoll_event evs[16];

	(void)arg;
	for (;;) {
		int n = epoll_wait(xr.x_epfd, evs, 16, xr.x_poll_mode ? 0 : -1);

		if (n < 0 && errno != EINTR) {
			nc_error("rdma", "epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p == &xr.x_wakefd) {
				uint64_t v;

				if (read(xr.x_wakefd, &v, sizeof(v)) < 0 && errno != EAGAIN)
					nc_debug("rdma", "wake read: %s", strerror(errno));
			} else if (p == &xr.x_cm) {
				cm_events();
			} else {
				dev_events(p);
			}
		}
		if (xr.x_poll_mode)
			poll_all();
		close_pending();
	}
	return NULL;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static void xr_init_once(void)
{
	struct epoll_event e = { .events = EPOLLIN };
	const char *pm = getenv("NACRE_RDMA_POLL");
	int rc;

	xr.x_poll_mode = pm && *pm == '1';
	xr.x_fds = calloc(XR_MAX_FD, sizeof(*xr.x_fds));
	xr.x_lis = calloc(XR_MAX_FD, sizeof(*xr.x_lis));
	if (!xr.x_fds || !xr.x_lis) {
		xr.x_init_rc = -ENOMEM;
		return;
	}
	xr.x_cm = rdma_create_event_channel();
	if (!xr.x_cm) {
		xr.x_init_rc = errno ? -errno : -ENODEV;
		return;
	}
	xr.x_epfd = epoll_create1(EPOLL_CLOEXEC);
	xr.x_wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (xr.x_epfd < 0 || xr.x_wakefd < 0 || set_nonblock(xr.x_cm->fd)) {
		xr.x_init_rc = -errno;
		return;
	}
	e.data.ptr = &xr.x_wakefd;
	epoll_ctl(xr.x_epfd, EPOLL_CTL_ADD, xr.x_wakefd, &e);
	e.data.ptr = &xr.x_cm;
	epoll_ctl(xr.x_epfd, EPOLL_CTL_ADD, xr.x_cm->fd, &e);
	rc = pthread_create(&xr.x_thread, NULL, progress_main, NULL);
	if (rc) {
		xr.x_init_rc = -rc;
		return;
	}
	pthread_detach(xr.x_thread);
}

static int xr_init(void)
{
	pthread_once(&xr.x_once, xr_init_once);
	return xr.x_init_rc;
}

static void xr_wake(void)
{
	uint64_t one = 1;

	if (write(xr.x_wakefd, &one, sizeof(one)) < 0)
		nc_error("rdma", "cannot wake the progress thread: %s", strerror(errno));
}

/* The protection domain and completion channel of a device (x_lock held). */
static struct xr_dev *dev_get(struct ibv_context *verbs)
{
	struct epoll_event e = { .events = EPOLLIN };
	struct xr_dev *d;

	for (d = xr.x_devs; d; d = d->d_next)
		if (d->d_verbs == verbs)
			return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->d_verbs = verbs;
	d->d_pd = ibv_alloc_pd(verbs);
	d->d_ch = d->d_pd ? ibv_create_comp_channel(verbs) : NULL;
	if (!d->d_ch || set_nonblock(d->d_ch->fd))
		goto out_free;
	e.data.ptr = d;
	if (epoll_ctl(xr.x_epfd, EPOLL_CTL_ADD, d->d_ch->fd, &e) < 0)
		goto out_free;
	d->d_next = xr.x_devs;
	xr.x_devs = d;
	return d;
out_free:
	if (d->d_ch)
		ibv_destroy_comp_channel(d->d_ch);
	if (d->d_pd)
		ibv_dealloc_pd(d->d_pd);
	free(d);
	return NULL;
}

/* ---- connection setup ---- */

static void conn_free(struct xr_conn *c)
{
	if (c->c_fd >= 0)
		close(c->c_fd);
	pthread_mutex_destroy(&c->c_lock);
	pthread_cond_destroy(&c->c_cond);
	free(c);
}

/* Everything a connection needs before connect or accept: queues, buffers,
 * posted receives.  On failure the id is left for the caller. */
static int conn_new(struct rdma_cm_id *id, struct xr_conn **out)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct xr_conn *c;
	size_t bytes = (size_t)XR_RX_SLOTS * XP_RDMA_SLOT;
	int rc = -ENOMEM;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->c_fd = -1;
	c->c_id = id;
	pthread_mutex_init(&c->c_lock, NULL);
	pthread_cond_init(&c->c_cond, NULL);
	xp_rdma_rxq_init(&c->c_rxq);
	xp_rdma_credits_init(&c->c_cr, XP_RDMA_DEPTH);
	pthread_mutex_lock(&xr.x_lock);
	c->c_dev = dev_get(id->verbs);
	pthread_mutex_unlock(&xr.x_lock);
	if (!c->c_dev)
		goto out_free;
	c->c_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->c_fd < 0 || c->c_fd >= XR_MAX_FD) {
		rc = c->c_fd < 0 ? -errno : -EMFILE;
		goto out_free;
	}
	if (posix_memalign((void **)&c->c_rxbuf, 4096, bytes) ||
	    posix_memalign((void **)&c->c_txbuf, 4096, (size_t)XR_TX_SLOTS * XP_RDMA_SLOT))
		goto out_destroy;
	c->c_rxmr = ibv_reg_mr(c->c_dev->d_pd, c->c_rxbuf, bytes, IBV_ACCESS_LOCAL_WRITE);
	c->c_txmr = ibv_reg_mr(c->c_dev->d_pd, c->c_txbuf, (size_t)XR_TX_SLOTS * XP_RDMA_SLOT, 0);
	if (!c->c_rxmr || !c->c_txmr) {
		rc = errno ? -errno : -ENOMEM;
		goto out_destroy;
	}
	c->c_cq = ibv_create_cq(id->verbs, XR_RX_SLOTS + XR_TX_SLOTS + 4, c, c->c_dev->d_ch, 0);
	if (!c->c_cq || ibv_req_notify_cq(c->c_cq, 0)) {
		rc = errno ? -errno : -ENOMEM;
		goto out_destroy;
	}
	qa.send_cq = c->c_cq;
	qa.recv_cq = c->c_cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = XR_TX_SLOTS + 2;   /* frames and one READ */
	qa.cap.max_recv_wr = XR_RX_SLOTS;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, c->c_dev->d_pd, &qa)) {
		rc = errno ? -errno : -ENOMEM;
		goto out_destroy;
	}
	for (int i = 0; i < XR_TX_SLOTS; i++)
		c->c_txfree[c->c_ntxfree++] = i;
	for (int i = 0; i < XP_RDMA_DEPTH; i++) {
		rc = conn_post_recv(c, i);
		if (rc)
			goto out_destroy;
	}
	for (int i = XP_RDMA_DEPTH; i < XR_RX_SLOTS; i++)
		c->c_rxfree[c->c_nrxfree++] = i;
	id->context = c;
	*out = c;
	return 0;
out_destroy:
	if (id->qp)
		rdma_destroy_qp(id);
	if (c->c_cq)
		ibv_destroy_cq(c->c_cq);
	if (c->c_rxmr)
		ibv_dereg_mr(c->c_rxmr);
	if (c->c_txmr)
		ibv_dereg_mr(c->c_txmr);
	free(c->c_rxbuf);
	free(c->c_txbuf);
out_free:
	conn_free(c);
	return rc;
}

/* Makes @c visible: to the fd table, and to the progress thread. */
static void conn_publish(struct xr_conn *c)
{
	pthread_mutex_lock(&xr.x_lock);
	xr.x_fds[c->c_fd] = c;
	c->c_next = xr.x_conns;
	xr.x_conns = c;
	pthread_mutex_unlock(&xr.x_lock);
	atomic_fetch_add(&xr.x_conns_made, 1);
}

static struct xr_conn *conn_find(int fd)
{
	struct xr_conn *c = NULL;

	pthread_mutex_lock(&xr.x_lock);
	if (fd >= 0 && fd < XR_MAX_FD && xr.x_fds)
		c = xr.x_fds[fd];
	pthread_mutex_unlock(&xr.x_lock);
	return c;
}

static void cm_private(uint8_t out[XR_CM_LEN])
{
	uint32_t m = htonl(XR_CM_MAGIC);

	memcpy(out, &m, 4);
	out[4] = 1;     /* version */
	out[5] = 0;
	out[6] = (uint8_t)(XP_RDMA_DEPTH >> 8);
	out[7] = (uint8_t)XP_RDMA_DEPTH;
}

/* Checks the peer's private data: a nacre peer with our receive depth. */
static bool cm_private_ok(const void *p, uint8_t len)
{
	uint8_t want[XR_CM_LEN];

	cm_private(want);
	return p && len >= XR_CM_LEN && memcmp(p, want, XR_CM_LEN) == 0;
}

static void cm_param(struct rdma_conn_param *cp, uint8_t priv[XR_CM_LEN])
{
	memset(cp, 0, sizeof(*cp));
	cm_private(priv);
	cp->private_data = priv;
	cp->private_data_len = XR_CM_LEN;
	cp->responder_resources = 4;
	cp->initiator_depth = 4;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

static int resolve(const struct nc_addr *a, bool passive, struct addrinfo **res)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : 0 };
	char port[8];
	int rc;

	snprintf(port, sizeof(port), "%u", a->a_port);
	rc = getaddrinfo(a->a_host, port, &hints, res);
	if (rc)
		return rc == EAI_SYSTEM ? -errno : -NC_E_ADDR;
	return 0;
}

static void peer_text(struct rdma_cm_id *id, char *buf, size_t len)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, host, sizeof(host));
		snprintf(buf, len, "rdma://%s:%u", host, ntohs(rdma_get_dst_port(id)));
	} else if (sa->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "rdma://[%s]:%u", host, ntohs(rdma_get_dst_port(id)));
	} else {
		snprintf(buf, len, "rdma://?");
	}
}

/* Waits for the next event on a private channel; 0 when it is @want. */
static int cm_wait(struct rdma_event_channel *ch, enum rdma_cm_event_type want,
		   int64_t deadline, struct rdma_cm_event **evp)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int64_t left = deadline - nc_now_ms();
	int rc;

	if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(ch, &ev))
		return errno ? -errno : -EIO;
	if (ev->event == want) {
		*evp = ev;
		return 0;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		rc = -ECONNREFUSED;
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		rc = -EHOSTUNREACH;
		break;
	default:
		rc = -ECONNREFUSED;
		break;
	}
	rdma_ack_cm_event(ev);
	return rc;
}

static int xr_connect(const struct nc_addr *a, int timeout_ms, int *out)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct addrinfo *res;
	struct xr_conn *c = NULL;
	uint8_t priv[XR_CM_LEN];
	int64_t deadline = nc_now_ms() + timeout_ms;
	int rc;

	rc = xr_init();
	if (rc)
		return rc;
	rc = resolve(a, false, &res);
	if (rc)
		return rc;
	ch = rdma_create_event_channel();
	if (!ch) {
		freeaddrinfo(res);
		return errno ? -errno : -ENODEV;
	}
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		rc = -errno;
		goto out_channel;
	}
	if (rdma_resolve_addr(id, NULL, res->ai_addr, timeout_ms)) {
		rc = -errno;
		goto out_id;
	}
	rc = cm_wait(ch, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, &ev);
	if (rc)
		goto out_id;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, timeout_ms)) {
		rc = -errno;
		goto out_id;
	}
	rc = cm_wait(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, &ev);
	if (rc)
		goto out_id;
	rdma_ack_cm_event(ev);
	rc = conn_new(id, &c);
	if (rc)
		goto out_id;
	cm_param(&cp, priv);
	if (rdma_connect(id, &cp)) {
		rc = -errno;
		goto out_conn;
	}
	rc = cm_wait(ch, RDMA_CM_EVENT_ESTABLISHED, deadline, &ev);
	if (rc)
		goto out_conn;
	if (!cm_private_ok(ev->param.conn.private_data, ev->param.conn.private_data_len)) {
		rdma_ack_cm_event(ev);
		rc = -NC_E_HANDSHAKE;
		goto out_conn;
	}
	rdma_ack_cm_event(ev);
	if (rdma_migrate_id(id, xr.x_cm)) {
		rc = -errno;
		goto out_conn;
	}
	rdma_destroy_event_channel(ch);
	freeaddrinfo(res);
	conn_publish(c);
	*out = c->c_fd;
	return 0;
out_conn:
	conn_destroy(c);
	conn_free(c);
	id = NULL;
out_id:
	if (id)
		rdma_destroy_id(id);
out_channel:
	rdma_destroy_event_channel(ch);
	freeaddrinfo(res);
	if (rc == -ENODEV || rc == -EADDRNOTAVAIL)
		rc = -EHOSTUNREACH;
	return rc;
}

static int xr_listen(const struct nc_addr *a, int *out, int *port)
{
	struct xr_listener *l;
	struct addrinfo *res;
	int rc;

	rc = xr_init();
	if (rc)
		return rc;
	rc = resolve(a, true, &res);
	if (rc)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l) {
		freeaddrinfo(res);
		return -ENOMEM;
	}
	l->l_ch = rdma_create_event_channel();
	if (!l->l_ch) {
		rc = errno ? -errno : -ENODEV;
		goto out_free;
	}
	if (l->l_ch->fd >= XR_MAX_FD) {
		rc = -EMFILE;
		goto out_channel;
	}
	rc = set_nonblock(l->l_ch->fd);
	if (rc)
		goto out_channel;
	if (rdma_create_id(l->l_ch, &l->l_id, NULL, RDMA_PS_TCP)) {
		rc = -errno;
		goto out_channel;
	}
	if (rdma_bind_addr(l->l_id, res->ai_addr) || rdma_listen(l->l_id, 128)) {
		rc = -errno;
		goto out_id;
	}
	/* Listening on an address no RDMA device has fails here, not later. */
	if (!l->l_id->verbs && a->a_host[0] && strcmp(a->a_host, "0.0.0.0") &&
	    strcmp(a->a_host, "::")) {
		rc = -EADDRNOTAVAIL;
		goto out_id;
	}
	freeaddrinfo(res);
	*port = ntohs(rdma_get_src_port(l->l_id));
	pthread_mutex_lock(&xr.x_lock);
	xr.x_lis[l->l_ch->fd] = l;
	pthread_mutex_unlock(&xr.x_lock);
	*out = l->l_ch->fd;
	return 0;
out_id:
	rdma_destroy_id(l->l_id);
out_channel:
	rdma_destroy_event_channel(l->l_ch);
out_free:
	free(l);
	freeaddrinfo(res);
	return rc;
}

static int xr_accept(int lfd, int *out, char *peer, size_t peerlen)
{
	struct xr_listener *l = NULL;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct rdma_cm_id *id;
	struct xr_conn *c;
	uint8_t priv[XR_CM_LEN];
	int rc;

	pthread_mutex_lock(&xr.x_lock);
	if (lfd >= 0 && lfd < XR_MAX_FD)
		l = xr.x_lis[lfd];
	pthread_mutex_unlock(&xr.x_lock);
	if (!l)
		return -EBADF;
	if (rdma_get_cm_event(l->l_ch, &ev))
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* Events of connections not yet moved to the progress thread. */
		c = ev->id->context;
		if (c && ev->event == RDMA_CM_EVENT_DISCONNECTED) {
			pthread_mutex_lock(&c->c_lock);
			conn_fail(c, 0);
			pthread_mutex_unlock(&c->c_lock);
		}
		rdma_ack_cm_event(ev);
		return -EAGAIN;
	}
	id = ev->id;
	if (!cm_private_ok(ev->param.conn.private_data, ev->param.conn.private_data_len)) {
		rdma_ack_cm_event(ev);
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		nc_warn("rdma", "refused a connection that is not from a nacre peer");
		return -EAGAIN;
	}
	rdma_ack_cm_event(ev);
	rc = conn_new(id, &c);
	if (rc) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		nc_warn("rdma", "cannot set up a connection: %s", nc_strerror(rc));
		return rc;
	}
	cm_param(&cp, priv);
	if (rdma_accept(id, &cp) || rdma_migrate_id(id, xr.x_cm)) {
		rc = -errno;
		conn_destroy(c);
		conn_free(c);
		return rc;
	}
	peer_text(id, peer, peerlen);
	conn_publish(c);
	*out = c->c_fd;
	return 0;
}

/* ---- data ---- */

static int xr_sendv(int fd, struct iovec *iov, int iovcnt)
{
	struct xr_conn *c = conn_find(fd);
	struct xp_rdma_mreg mrs[XR_MAX_BULKS];
	struct xp_rdma_frame f;
	uint8_t *acc = NULL;
	int nmr = 0, rc = 0;
	uint32_t accn = 0, last_bulk = 0;
	int64_t deadline;

	if (!c)
		return -EBADF;
	acc = malloc(XP_RDMA_FRAME_DATA_MAX);
	if (!acc)
		return -ENOMEM;
	pthread_mutex_lock(&c->c_lock);
	for (int i = 0; i < iovcnt && !rc; i++) {
		const uint8_t *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		if (left >= XP_RDMA_BULK_MIN && left <= UINT32_MAX) {
			if (accn) {
				memset(&f, 0, sizeof(f));
				f.fh_type = XP_RDMA_F_DATA;
				f.fh_len = accn;
				rc = conn_send_frame(c, &f, acc, accn);
				accn = 0;
				if (rc)
					break;
			}
			if (nmr == XR_MAX_BULKS) {
				rc = -E2BIG;
				break;
			}
			pthread_mutex_unlock(&c->c_lock);
			rc = xr_mr_get(c, (void *)(uintptr_t)p, left, &mrs[nmr]);
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
				memset(&f, 0, sizeof(f));
				f.fh_type = XP_RDMA_F_DATA;
				f.fh_len = accn;
				rc = conn_send_frame(c, &f, acc, accn);
				accn = 0;
			}
		}
	}
	if (!rc && accn) {
		memset(&f, 0, sizeof(f));
		f.fh_type = XP_RDMA_F_DATA;
		f.fh_len = accn;
		rc = conn_send_frame(c, &f, acc, accn);
	}
	/* The peer pulls our bulk buffers: they stay ours until it says so. */
	deadline = nc_now_ms() + XR_SEND_TIMEOUT_MS;
	while (!rc && last_bulk && (int32_t)(c->c_bulk_done - last_bulk) < 0) {
		struct timespec ts;

		if (c->c_dead) {
			rc = c->c_err ? c->c_err : -ECONNRESET;
			break;
		}
		if (nc_now_ms() >= deadline) {
			conn_fail(c, -ETIMEDOUT);
			rc = -ETIMEDOUT;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&c->c_cond, &c->c_lock, &ts);
	}
	if (rc && !c->c_dead)
		conn_fail(c, rc);
	pthread_mutex_unlock(&c->c_lock);
	/* On failure the peer may still be reading: deregistering revokes
	 * its access before the caller frees the buffer. */
	for (int i = 0; i < nmr; i++)
		xr_mr_put(&mrs[i]);
	free(acc);
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
		xr_mr_put(&c->c_rd_mr);
		pthread_mutex_lock(&c->c_lock);
		if (!rc && c->c_rd_buf != buf)
			rc = -EINVAL;   /* the reader changed buffers mid-pull */
		if (rc) {
			conn_fail(c, -EIO);
			return -EIO;
		}
		atomic_fetch_add(&xr.x_read_bytes, n);
		it->it_off += n;
		if (it->it_off == it->it_len) {
			slot = it->it_slot;
			c->c_pull_done++;
			xp_rdma_rxq_pop(&c->c_rxq);
			conn_repost(c, slot);
			conn_flush_control(c);
		}
		conn_update_readable(c);
		return n;
	}
	n = it->it_len - it->it_off;
	if (n > len)
		n = (uint32_t)len;
	pthread_mutex_unlock(&c->c_lock);
	rc = xr_mr_get(c, buf, n, &c->c_rd_mr);
	pthread_mutex_lock(&c->c_lock);
	if (rc) {
		conn_fail(c, rc);
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
		xr_mr_put(&c->c_rd_mr);
		pthread_mutex_lock(&c->c_lock);
		conn_fail(c, -rc);
		return -rc;
	}
	atomic_fetch_add(&xr.x_reads, 1);
	{
		uint_fast64_t now = atomic_fetch_add(&xr.x_reads_inflight, 1) + 1;
		uint_fast64_t max = atomic_load(&xr.x_reads_inflight_max);

		while (now > max && !atomic_compare_exchange_weak(&xr.x_reads_inflight_max,
								  &max, now))
			;
	}
	conn_update_readable(c);
	return -EAGAIN;
}

static void slot_done(void *arg, int slot)
{
	conn_repost(arg, slot);
}

static ssize_t xr_recv(int fd, void *buf, size_t len)
{
	struct xr_conn *c = conn_find(fd);
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
		conn_update_readable(c);
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

static void xr_shutdown(int fd)
{
	struct xr_conn *c = conn_find(fd);

	if (!c)
		return;
	pthread_mutex_lock(&c->c_lock);
	conn_fail(c, -ECONNRESET);
	pthread_mutex_unlock(&c->c_lock);
	rdma_disconnect(c->c_id);
}

static void xr_close(int fd)
{
	struct xr_listener *l = NULL;
	struct xr_conn *c = NULL;

	pthread_mutex_lock(&xr.x_lock);
	if (fd >= 0 && fd < XR_MAX_FD && xr.x_fds) {
		c = xr.x_fds[fd];
		xr.x_fds[fd] = NULL;
		l = xr.x_lis[fd];
		xr.x_lis[fd] = NULL;
	}
	if (c) {
		c->c_close_next = xr.x_closing;
		xr.x_closing = c;
	}
	pthread_mutex_unlock(&xr.x_lock);
	if (l) {
		rdma_destroy_id(l->l_id);
		rdma_destroy_event_channel(l->l_ch);
		free(l);
		return;
	}
	if (!c)
		return;
	/* The progress thread owns the queues: it tears them down, and we
	 * wait, because the caller frees buffers a pull may be filling. */
	xr_wake();
	pthread_mutex_lock(&c->c_lock);
	while (!c->c_torn_down)
		pthread_cond_wait(&c->c_cond, &c->c_lock);
	pthread_mutex_unlock(&c->c_lock);
	conn_free(c);
}

const struct nc_xprt_ops nc_xprt_rdma = {
	.xo_name = "rdma",
	.xo_listen = xr_listen,
	.xo_accept = xr_accept,
	.xo_connect = xr_connect,
	.xo_sendv = xr_sendv,
	.xo_sendfile = xr_sendfile,
	.xo_recv = xr_recv,
	.xo_shutdown = xr_shutdown,
	.xo_close = xr_close,
};
