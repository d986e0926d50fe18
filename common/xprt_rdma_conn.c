/* SPDX-License-Identifier: MIT */
/*
 * The RDMA transport's connections: connect, listen and accept through
 * librdmacm, queue pairs and their buffers, the progress thread that waits
 * on completion channels and connection-manager events and tears
 * connections down, and memory registration (see xprt_rdma.c for the data
 * path, docs/rdma.md for the design).
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
#include <unistd.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/xprt_rdma_int.h"

struct xp_rdma_state xp_rdma = { .x_once = PTHREAD_ONCE_INIT,
				 .x_lock = PTHREAD_MUTEX_INITIALIZER };

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
	if (!xp_rdma.x_mrc.c_ops)
		xp_rdma_mrc_init(&xp_rdma.x_mrc, &xr_mr_ops);
	return &xp_rdma.x_mrc;
}

int nc_xprt_mem_pin(void *addr, size_t len)
{
	int rc;

	pthread_mutex_lock(&xp_rdma.x_lock);
	rc = xp_rdma_mrc_pin(xr_mrc(), addr, len);
	pthread_mutex_unlock(&xp_rdma.x_lock);
	return rc;
}

int nc_xprt_mem_unpin(void *addr)
{
	int rc;

	pthread_mutex_lock(&xp_rdma.x_lock);
	rc = xp_rdma_mrc_unpin(xr_mrc(), addr);
	pthread_mutex_unlock(&xp_rdma.x_lock);
	return rc;
}

int xp_rdma_mr_get(struct xr_conn *c, void *addr, size_t len, struct xp_rdma_mreg *r)
{
	int rc;

	pthread_mutex_lock(&xp_rdma.x_lock);
	rc = xp_rdma_mrc_get(xr_mrc(), c->c_dev->d_pd, addr, len, r);
	pthread_mutex_unlock(&xp_rdma.x_lock);
	return rc;
}

void xp_rdma_mr_put(struct xp_rdma_mreg *r)
{
	pthread_mutex_lock(&xp_rdma.x_lock);
	xp_rdma_mrc_put(xr_mrc(), r);
	pthread_mutex_unlock(&xp_rdma.x_lock);
}

void nc_xprt_rdma_stats(struct nc_xprt_rdma_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->rs_conns = atomic_load(&xp_rdma.x_conns_made);
	s->rs_sends = atomic_load(&xp_rdma.x_sends);
	s->rs_recvs = atomic_load(&xp_rdma.x_recvs);
	s->rs_reads = atomic_load(&xp_rdma.x_reads);
	s->rs_read_bytes = atomic_load(&xp_rdma.x_read_bytes);
	s->rs_reads_inflight = atomic_load(&xp_rdma.x_reads_inflight);
	s->rs_reads_inflight_max = atomic_load(&xp_rdma.x_reads_inflight_max);
	s->rs_credit_waits = atomic_load(&xp_rdma.x_credit_waits);
	pthread_mutex_lock(&xp_rdma.x_lock);
	s->rs_pinned_hits = xp_rdma.x_mrc.c_stats.ms_pinned_hits;
	s->rs_transient_regs = xp_rdma.x_mrc.c_stats.ms_transient_regs;
	pthread_mutex_unlock(&xp_rdma.x_lock);
}

static void dev_events(struct xr_dev *d)
{
	struct ibv_cq *cq;
	void *ctx;

	while (ibv_get_cq_event(d->d_ch, &cq, &ctx) == 0) {
		struct xr_conn *c = ctx;

		ibv_req_notify_cq(cq, 0);
		xp_rdma_conn_drain_cq(c);
		/* Acked last: ibv_destroy_cq waits for the ack. */
		ibv_ack_cq_events(cq, 1);
	}
}

static void cm_events(void)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(xp_rdma.x_cm, &ev) == 0) {
		struct xr_conn *c = ev->id->context;

		if (c && (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
			  ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL ||
			  ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT)) {
			pthread_mutex_lock(&c->c_lock);
			xp_rdma_conn_fail(c, ev->event == RDMA_CM_EVENT_DISCONNECTED ? 0 : -ECONNRESET);
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
			atomic_fetch_sub(&xp_rdma.x_reads_inflight, 1);
		xp_rdma_mr_put(&c->c_rd_mr);
	}
	if (c->c_cq)
		ibv_destroy_cq(c->c_cq);
	if (c->c_rxmr)
		ibv_dereg_mr(c->c_rxmr);
	if (c->c_txmr)
		ibv_dereg_mr(c->c_txmr);
	if (!c->c_keep_id)
		rdma_destroy_id(c->c_id);
	free(c->c_rxbuf);
	free(c->c_txbuf);
}

/* Tears down the connections conn_release() handed over. */
static void close_pending(void)
{
	struct xr_conn *list;

	pthread_mutex_lock(&xp_rdma.x_lock);
	list = xp_rdma.x_closing;
	xp_rdma.x_closing = NULL;
	pthread_mutex_unlock(&xp_rdma.x_lock);
	while (list) {
		struct xr_conn *c = list, **pp;

		list = c->c_close_next;
		pthread_mutex_lock(&xp_rdma.x_lock);
		for (pp = &xp_rdma.x_conns; *pp; pp = &(*pp)->c_next) {
			if (*pp == c) {
				*pp = c->c_next;
				break;
			}
		}
		pthread_mutex_unlock(&xp_rdma.x_lock);
		conn_destroy(c);
		pthread_mutex_lock(&c->c_lock);
		c->c_torn_down = true;
		pthread_cond_broadcast(&c->c_cond);
		pthread_mutex_unlock(&c->c_lock);
	}
}

static void poll_all(void)
{
	pthread_mutex_lock(&xp_rdma.x_lock);
	for (struct xr_conn *c = xp_rdma.x_conns; c; c = c->c_next)
		xp_rdma_conn_drain_cq(c);
	pthread_mutex_unlock(&xp_rdma.x_lock);
}

static void *progress_main(void *arg)
{
	struct epoll_event evs[16];

	(void)arg;
	for (;;) {
		int n = epoll_wait(xp_rdma.x_epfd, evs, 16, xp_rdma.x_poll_mode ? 0 : -1);

		if (n < 0 && errno != EINTR) {
			nc_error("rdma", "epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p == &xp_rdma.x_wakefd) {
				uint64_t v;

				if (read(xp_rdma.x_wakefd, &v, sizeof(v)) < 0 && errno != EAGAIN)
					nc_debug("rdma", "wake read: %s", strerror(errno));
			} else if (p == &xp_rdma.x_cm) {
				cm_events();
			} else {
				dev_events(p);
			}
		}
		if (xp_rdma.x_poll_mode)
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

	xp_rdma.x_poll_mode = pm && *pm == '1';
	xp_rdma.x_fds = calloc(XR_MAX_FD, sizeof(*xp_rdma.x_fds));
	xp_rdma.x_lis = calloc(XR_MAX_FD, sizeof(*xp_rdma.x_lis));
	if (!xp_rdma.x_fds || !xp_rdma.x_lis) {
		xp_rdma.x_init_rc = -ENOMEM;
		return;
	}
	xp_rdma.x_cm = rdma_create_event_channel();
	if (!xp_rdma.x_cm) {
		xp_rdma.x_init_rc = errno ? -errno : -ENODEV;
		return;
	}
	xp_rdma.x_epfd = epoll_create1(EPOLL_CLOEXEC);
	xp_rdma.x_wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (xp_rdma.x_epfd < 0 || xp_rdma.x_wakefd < 0 || set_nonblock(xp_rdma.x_cm->fd)) {
		xp_rdma.x_init_rc = -errno;
		return;
	}
	e.data.ptr = &xp_rdma.x_wakefd;
	epoll_ctl(xp_rdma.x_epfd, EPOLL_CTL_ADD, xp_rdma.x_wakefd, &e);
	e.data.ptr = &xp_rdma.x_cm;
	epoll_ctl(xp_rdma.x_epfd, EPOLL_CTL_ADD, xp_rdma.x_cm->fd, &e);
	rc = pthread_create(&xp_rdma.x_thread, NULL, progress_main, NULL);
	if (rc) {
		xp_rdma.x_init_rc = -rc;
		return;
	}
	pthread_detach(xp_rdma.x_thread);
}

static int xr_init(void)
{
	pthread_once(&xp_rdma.x_once, xr_init_once);
	return xp_rdma.x_init_rc;
}

static void xr_wake(void)
{
	uint64_t one = 1;

	if (write(xp_rdma.x_wakefd, &one, sizeof(one)) < 0)
		nc_error("rdma", "cannot wake the progress thread: %s", strerror(errno));
}

/* The protection domain and completion channel of a device (x_lock held). */
static struct xr_dev *dev_get(struct ibv_context *verbs)
{
	struct epoll_event e = { .events = EPOLLIN };
	struct xr_dev *d;

	for (d = xp_rdma.x_devs; d; d = d->d_next)
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
	if (epoll_ctl(xp_rdma.x_epfd, EPOLL_CTL_ADD, d->d_ch->fd, &e) < 0)
		goto out_free;
	d->d_next = xp_rdma.x_devs;
	xp_rdma.x_devs = d;
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

/*
 * Frees @c, which nothing but the progress thread may still reach: that
 * thread owns the queues, so it tears them down, and we wait, because the
 * caller frees buffers a pull may be filling.
 */
static void conn_release(struct xr_conn *c)
{
	pthread_mutex_lock(&xp_rdma.x_lock);
	c->c_close_next = xp_rdma.x_closing;
	xp_rdma.x_closing = c;
	pthread_mutex_unlock(&xp_rdma.x_lock);
	xr_wake();
	pthread_mutex_lock(&c->c_lock);
	while (!c->c_torn_down)
		pthread_cond_wait(&c->c_cond, &c->c_lock);
	pthread_mutex_unlock(&c->c_lock);
	conn_free(c);
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
	pthread_mutex_lock(&xp_rdma.x_lock);
	c->c_dev = dev_get(id->verbs);
	pthread_mutex_unlock(&xp_rdma.x_lock);
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
		rc = xp_rdma_conn_post_recv(c, i);
		if (rc)
			goto out_destroy;
	}
	for (int i = XP_RDMA_DEPTH; i < XR_RX_SLOTS; i++)
		c->c_rxfree[c->c_nrxfree++] = i;
	id->context = c;
	*out = c;
	return 0;
out_destroy:
	if (c->c_cq) {
		/* The queues may already raise events: the progress thread
		 * takes them down. */
		c->c_keep_id = true;
		conn_release(c);
		return rc;
	}
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
	pthread_mutex_lock(&xp_rdma.x_lock);
	xp_rdma.x_fds[c->c_fd] = c;
	c->c_next = xp_rdma.x_conns;
	xp_rdma.x_conns = c;
	pthread_mutex_unlock(&xp_rdma.x_lock);
	atomic_fetch_add(&xp_rdma.x_conns_made, 1);
}

struct xr_conn *xp_rdma_conn_find(int fd)
{
	struct xr_conn *c = NULL;

	pthread_mutex_lock(&xp_rdma.x_lock);
	if (fd >= 0 && fd < XR_MAX_FD && xp_rdma.x_fds)
		c = xp_rdma.x_fds[fd];
	pthread_mutex_unlock(&xp_rdma.x_lock);
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

int xp_rdma_connect(const struct nc_addr *a, int timeout_ms, int *out)
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
	rc = nc_addr_resolve(a, false, &res);
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
	if (rdma_migrate_id(id, xp_rdma.x_cm)) {
		rc = -errno;
		goto out_conn;
	}
	rdma_destroy_event_channel(ch);
	freeaddrinfo(res);
	conn_publish(c);
	*out = c->c_fd;
	return 0;
out_conn:
	conn_release(c);
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

int xp_rdma_listen(const struct nc_addr *a, int *out, int *port)
{
	struct xr_listener *l;
	struct addrinfo *res;
	int rc;

	rc = xr_init();
	if (rc)
		return rc;
	rc = nc_addr_resolve(a, true, &res);
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
	pthread_mutex_lock(&xp_rdma.x_lock);
	xp_rdma.x_lis[l->l_ch->fd] = l;
	pthread_mutex_unlock(&xp_rdma.x_lock);
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

int xp_rdma_accept(int lfd, int *out, char *peer, size_t peerlen)
{
	struct xr_listener *l = NULL;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct rdma_cm_id *id;
	struct xr_conn *c;
	uint8_t priv[XR_CM_LEN];
	int rc;

	pthread_mutex_lock(&xp_rdma.x_lock);
	if (lfd >= 0 && lfd < XR_MAX_FD)
		l = xp_rdma.x_lis[lfd];
	pthread_mutex_unlock(&xp_rdma.x_lock);
	if (!l)
		return -EBADF;
	if (rdma_get_cm_event(l->l_ch, &ev))
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* Events of connections not yet moved to the progress thread. */
		c = ev->id->context;
		if (c && ev->event == RDMA_CM_EVENT_DISCONNECTED) {
			pthread_mutex_lock(&c->c_lock);
			xp_rdma_conn_fail(c, 0);
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
	if (rdma_accept(id, &cp) || rdma_migrate_id(id, xp_rdma.x_cm)) {
		rc = -errno;
		conn_release(c);
		return rc;
	}
	peer_text(id, peer, peerlen);
	conn_publish(c);
	*out = c->c_fd;
	return 0;
}

void xp_rdma_shutdown(int fd)
{
	struct xr_conn *c = xp_rdma_conn_find(fd);

	if (!c)
		return;
	pthread_mutex_lock(&c->c_lock);
	xp_rdma_conn_fail(c, -ECONNRESET);
	pthread_mutex_unlock(&c->c_lock);
	rdma_disconnect(c->c_id);
}

void xp_rdma_close(int fd)
{
	struct xr_listener *l = NULL;
	struct xr_conn *c = NULL;

	pthread_mutex_lock(&xp_rdma.x_lock);
	if (fd >= 0 && fd < XR_MAX_FD && xp_rdma.x_fds) {
		c = xp_rdma.x_fds[fd];
		xp_rdma.x_fds[fd] = NULL;
		l = xp_rdma.x_lis[fd];
		xp_rdma.x_lis[fd] = NULL;
	}
	pthread_mutex_unlock(&xp_rdma.x_lock);
	if (l) {
		rdma_destroy_id(l->l_id);
		rdma_destroy_event_channel(l->l_ch);
		free(l);
		return;
	}
	if (c)
		conn_release(c);
}
