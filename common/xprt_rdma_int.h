/* SPDX-License-Identifier: MIT */
/*
 * Inside the RDMA transport: what xprt_rdma.c (frames, completions, the
 * data path) and xprt_rdma_conn.c (connections, the progress thread,
 * memory registration) share.  Nothing outside these two files includes
 * it.
 *
 * Locking: xp_rdma.x_lock guards the tables and the registration cache;
 * c_lock guards one connection's state.  x_lock is taken before c_lock.
 */
#ifndef NC_XPRT_RDMA_INT_H
#define NC_XPRT_RDMA_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

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
	bool c_keep_id;                 /* the cm id is the caller's to destroy */
	struct xr_conn *c_next;         /* x_conns, and the close queue */
	struct xr_conn *c_close_next;
};

struct xr_listener {
	struct rdma_event_channel *l_ch;
	struct rdma_cm_id *l_id;
	char l_host[NC_ADDR_MAX + 1];
};

struct xp_rdma_state {
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
};

extern struct xp_rdma_state xp_rdma;

/* ---- xprt_rdma.c: connection state (c_lock held) ---- */

/* Keeps the eventfd readable exactly while xo_recv would not say -EAGAIN. */
void xp_rdma_conn_update_readable(struct xr_conn *c);
/* Marks @c dead with @err (0: the peer disconnected cleanly), wakes all. */
void xp_rdma_conn_fail(struct xr_conn *c, int err);
int xp_rdma_conn_post_recv(struct xr_conn *c, int slot);
/* Handles every completion queued on @c's queue (progress thread). */
void xp_rdma_conn_drain_cq(struct xr_conn *c);

/* ---- xprt_rdma_conn.c ---- */

struct xr_conn *xp_rdma_conn_find(int fd);
int xp_rdma_mr_get(struct xr_conn *c, void *addr, size_t len, struct xp_rdma_mreg *r);
void xp_rdma_mr_put(struct xp_rdma_mreg *r);
int xp_rdma_connect(const struct nc_addr *a, int timeout_ms, int *out);
int xp_rdma_listen(const struct nc_addr *a, int *out, int *port);
int xp_rdma_accept(int lfd, int *out, char *peer, size_t peerlen);
void xp_rdma_shutdown(int fd);
void xp_rdma_close(int fd);

#endif
