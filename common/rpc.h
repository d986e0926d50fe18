/* SPDX-License-Identifier: MIT */
/*
 * RPC over a transport: a server with a bounded pool of service threads, and
 * a client connection with many requests in flight, matched by request id.
 *
 * Server side
 *   One I/O thread runs an epoll loop over the listening sockets and every
 *   connection, reads whole messages (the header is checked before any body
 *   is allocated, so an absurd length closes the connection rather than
 *   growing memory) and queues them for the service threads.  Each connection
 *   has at most NC_SRV_MAX_INFLIGHT requests queued or running; past that the
 *   loop stops reading it (backpressure).  The first request of a connection
 *   must be CONNECT, which the framework answers itself after checking the
 *   protocol major and the filesystem name; the second must be AUTH, the
 *   peer's proof that it holds the cluster key (common/auth.h), answered
 *   with the server's own proof.  Until AUTH succeeds nothing else is
 *   served: any other request, a bad proof or a second AUTH gets an AUTH
 *   error reply and the connection is closed.  After AUTH the I/O thread
 *   sends nothing, so a peer that does not read cannot stall it: PING,
 *   unknown opcodes (-ENOSYS) and a second CONNECT or AUTH are answered by
 *   the service threads, which give up waiting on a peer whose replies
 *   have not moved for 10 s and shut its connection down.
 *
 * Ownership: a struct nc_req handed to the handler is valid until exactly one
 * nc_req_reply() (or nc_req_drop()), which may happen after the handler
 * returns, from any thread.
 */
#ifndef NC_RPC_H
#define NC_RPC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/auth.h"
#include "common/types.h"
#include "common/wire.h"
#include "common/xprt.h"

#define NC_SRV_MAX_INFLIGHT 64
#define NC_SRV_MAX_CONNS 1024

struct nc_server;
struct nc_srv_conn;

struct nc_req {
	struct nc_srv_conn *rq_conn;
	struct nc_msg_hdr rq_hdr;
	uint8_t *rq_body;       /* rq_hdr.mh_body_len bytes */
	uint8_t *rq_bulk;       /* rq_hdr.mh_bulk_len bytes; from 64 KiB on,
				 * it starts on a 4096-byte boundary */
	const char *rq_peer;    /* "tcp://1.2.3.4:5678" of the requester */
	uint32_t rq_peer_role;  /* enum nc_peer_role from CONNECT */
	/* The client's uuid from CONNECT, when it asked for reply
	 * reconstruction (NC_FEAT_REPLAY) and this server offers it. */
	bool rq_has_client;
	uint8_t rq_client[16];
};

typedef void (*nc_handler_fn)(struct nc_req *req, void *arg);
/* Called when a connection closes (for per-peer cleanup); may be NULL. */
typedef void (*nc_conn_closed_fn)(struct nc_srv_conn *conn, void *arg);

struct nc_server_conf {
	const char *sc_name;            /* for logs: "mds", "oss" */
	const char *sc_fsname;          /* CONNECT must name this */
	uint8_t sc_uuid[16];            /* sent in the CONNECT reply */
	uint32_t sc_role;               /* enum nc_peer_role of this server */
	/* The cluster key, NC_AUTH_KEY_LEN bytes (copied); required. */
	const uint8_t *sc_key;
	int sc_threads;                 /* service threads, >= 1 */
	/* The handler reconstructs replies of resent requests (the MDS):
	 * NC_FEAT_REPLAY is offered and requests carry the client's uuid. */
	bool sc_replay;
	/* The highest minor of NC_PROTO_MAJOR offered; 0: NC_PROTO_MINOR.
	 * Lower only to act as an older release (tests of mixed versions). */
	uint16_t sc_minor;
	nc_handler_fn sc_handler;
	nc_conn_closed_fn sc_closed;
	void *sc_arg;
};

/* @note The server copies @conf.  Free with nc_server_free(). */
int nc_server_new(const struct nc_server_conf *conf, struct nc_server **out);
/* Listen on one address ("tcp://host:port"); may be called several times
 * before nc_server_start().  Port 0 picks a free port: see
 * nc_server_bound_port(). */
int nc_server_listen(struct nc_server *srv, const char *addr);
int nc_server_bound_port(struct nc_server *srv, int idx);
/*
 * Listens on every address of a comma-separated list ("rdma://h:p,tcp://h:p"),
 * in order.  An RDMA address that cannot listen (no device) is logged and
 * left out as long as another address listens.  @bound receives the list of
 * addresses listened on, ports as bound.  0, or the error of the address
 * that failed.
 */
int nc_server_listen_list(struct nc_server *srv, const char *list, char *bound,
			  size_t len);
int nc_server_start(struct nc_server *srv);
/* Stops accepting, closes connections, waits for the threads; requests still
 * queued are dropped without a reply.  Safe to call twice. */
void nc_server_stop(struct nc_server *srv);
void nc_server_free(struct nc_server *srv);
/*
 * Counts requests (by opcode: number, errors, latency), connections by
 * transport, and the queue in @reg, as nacre_<sc_name>_* (docs/metrics.md).
 * Before nc_server_start(); @reg must outlive the server.  0, -EBUSY
 * (started, or set before) or -ENOMEM.
 */
struct nc_metrics;
int nc_server_set_metrics(struct nc_server *srv, struct nc_metrics *reg);
/* Requests waiting for a service thread, and those not answered yet. */
void nc_server_load(struct nc_server *srv, uint64_t *queued, uint64_t *inflight);

/*
 * Reply to @req and free it.  @status is a local error (0, -errno, -NC_E_*),
 * mapped to the wire status.  Body and bulk are copied or sent before this
 * returns.  0, or -errno when the connection is gone (the request is freed
 * either way).
 */
int nc_req_reply(struct nc_req *req, int status, const void *body,
		 uint32_t body_len, const void *bulk, uint32_t bulk_len);
/*
 * Successful reply whose bulk is @len bytes of the open file @file_fd at
 * @off, sent from the page cache where the transport can (sendfile), else
 * read and sent.  The file must hold those bytes until this returns.
 * Frees @req like nc_req_reply().
 */
int nc_req_reply_file(struct nc_req *req, const void *body, uint32_t body_len,
		      int file_fd, off_t off, uint32_t len);
/* Reply carrying an error only. */
int nc_req_reply_err(struct nc_req *req, int status);
/* Free @req without replying (the connection is being torn down). */
void nc_req_drop(struct nc_req *req);
/* A number naming the connection for the server's lifetime (never reused),
 * and its peer address text. */
uint64_t nc_srv_conn_id(const struct nc_srv_conn *conn);
const char *nc_srv_conn_peer(const struct nc_srv_conn *conn);

/*
 * A FIFO of requests that grows as needed (a ring buffer); the caller
 * locks.  Zero-initialised is empty.  push: 0 or -ENOMEM (nothing queued);
 * pop: NULL when empty.
 */
struct nc_reqq {
	struct nc_req **rq_ring;
	size_t rq_cap, rq_head, rq_len;
};
int nc_reqq_push(struct nc_reqq *q, struct nc_req *req);
struct nc_req *nc_reqq_pop(struct nc_reqq *q);
void nc_reqq_fini(struct nc_reqq *q);

/* ---------------- Client side ---------------- */

struct nc_cconn;
struct nc_call;

/* Completion of a group of calls (a countdown latch). */
struct nc_wait {
	pthread_mutex_t w_lock;
	pthread_cond_t w_cond;
	int w_pending;
};
void nc_wait_init(struct nc_wait *w);
void nc_wait_fini(struct nc_wait *w);
void nc_wait_add(struct nc_wait *w, int n);
void nc_wait_done(struct nc_wait *w);
/* Blocks until every added call has completed. */
void nc_wait_all(struct nc_wait *w);

/*
 * One request and, once complete, its reply.  Fill the c_ fields marked "in",
 * then nc_cconn_submit().  When the call completes, c_status holds the
 * outcome and c_wait (if set) is signalled; c_done (if set) runs first, on
 * the connection's receive thread.
 */
struct nc_call {
	/* in */
	uint16_t c_opcode;
	const void *c_body;
	uint32_t c_body_len;
	const void *c_bulk;             /* request bulk (OBJ_WRITE) */
	uint32_t c_bulk_len;
	void *c_bulk_dst;               /* reply bulk lands here directly */
	uint32_t c_bulk_dst_cap;
	int c_timeout_ms;               /* 0: the connection's default */
	struct nc_wait *c_wait;
	void (*c_done)(struct nc_call *call);
	void *c_priv;
	/* out */
	int c_status;                   /* 0, -errno, -NC_E_*, -ETIMEDOUT,
					 * -ENOTCONN (connection lost) */
	bool c_sent;                    /* the request left this host */
	uint8_t *c_rep_body;            /* owned by the call: nc_call_fini() */
	uint32_t c_rep_body_len;
	uint32_t c_rep_bulk_len;        /* bytes placed in c_bulk_dst */
	/* private */
	int c_slot;                     /* reply slot + 1, 0: none */
	bool c_resend;                  /* send again with the same reqid */
	bool c_replay;                  /* sent where replies are rebuilt */
	uint64_t c_reqid;
	int64_t c_deadline_ms;
	struct nc_call *c_next;
};

void nc_call_init(struct nc_call *call, uint16_t opcode, const void *body,
		  uint32_t body_len);
void nc_call_fini(struct nc_call *call);

struct nc_cconn_opts {
	uint32_t co_role;               /* enum nc_peer_role */
	int co_timeout_ms;              /* per request; default 30000 */
	int co_connect_timeout_ms;      /* per attempt; default 5000 */
	/* How long nc_cconn_call() keeps retrying a server that is down or
	 * restarting before giving up; default 60000. */
	int co_retry_ms;
	/* The cluster key, NC_AUTH_KEY_LEN bytes (copied by nc_cconn_new());
	 * required.  A server that refuses it fails calls with -NC_E_AUTH,
	 * which is never retried. */
	const uint8_t *co_key;
	/* Reply reconstruction (the MDS): non-idempotent calls through
	 * nc_cconn_call() take one of NC_REPLAY_SLOTS reply slots and, when
	 * the server offers NC_FEAT_REPLAY, are sent again after a lost
	 * connection; the server answers a request it already executed from
	 * its record instead of executing it twice. */
	bool co_replay;
};

/* Creates a connection object; connects lazily on first use.  @addr may
 * list one address per transport of the same server, comma-separated
 * ("rdma://h:p,tcp://h:p"): each connect tries RDMA first and falls back
 * to the next (an address that failed goes last for a while).  Addresses
 * of transports not built in are ignored; -EPROTONOSUPPORT when none is
 * left.
 * @note @fsname and @addr are copied. */
int nc_cconn_new(const char *addr, const char *fsname,
		 const struct nc_cconn_opts *opts, struct nc_cconn **out);
/* Fails pending calls with -ECANCELED, closes, frees.  NULL is a no-op. */
void nc_cconn_free(struct nc_cconn *cc);
const char *nc_cconn_addr(const struct nc_cconn *cc);
/* Server uuid from the last CONNECT reply (zero before). */
void nc_cconn_server_uuid(struct nc_cconn *cc, uint8_t uuid[16]);
bool nc_cconn_is_connected(struct nc_cconn *cc);
/* The minor version of NC_PROTO_MAJOR both ends speak, from the last
 * CONNECT reply (0 before the first): a request field newer than it is
 * left out, as the older peer would refuse it. */
uint16_t nc_cconn_peer_minor(struct nc_cconn *cc);
/* "rdma" or "tcp": the transport of the connection now, NULL when not
 * connected.  @note A static string. */
const char *nc_cconn_xprt_name(struct nc_cconn *cc);

/*
 * Queue @call.  Connects first when needed (one attempt).  0 when the call
 * was queued: it will complete exactly once.  A negative return means it was
 * not queued and will never complete.
 */
int nc_cconn_submit(struct nc_cconn *cc, struct nc_call *call);

/*
 * Synchronous call with retries: resubmits while the server is unreachable
 * (for up to co_retry_ms), and after a lost connection when the request was
 * never sent, its opcode is idempotent, or it holds a reply slot at a
 * server that reconstructs replies (co_replay).  Returns c_status.
 */
int nc_cconn_call(struct nc_cconn *cc, struct nc_call *call);

/*
 * Helpers for the common shape: encode @req with @enc into a stack buffer,
 * call, and decode the reply body with @dec into @rep (may be NULL when no
 * body is expected).  The decoded reply may point into call->c_rep_body:
 * the caller runs nc_call_fini(call) when done with @rep.
 */
typedef void (*nc_xdr_fn)(struct nc_xdr *x, void *msg);
int nc_cconn_rpc(struct nc_cconn *cc, uint16_t opcode, nc_xdr_fn enc,
		 void *req, nc_xdr_fn dec, void *rep, struct nc_call *call);
/* Encodes @req with @enc into *@out, a malloc'd buffer of *@len bytes (at
 * most NC_MAX_BODY): the body of a call submitted without waiting, which
 * must outlive it.  0, -ENOMEM or the encoder's error. */
int nc_msg_encode(nc_xdr_fn enc, void *req, uint8_t **out, uint32_t *len);
/* Decodes the reply body of the completed @call with @dec into @rep, which
 * may point into the body until nc_call_fini().  0 or -NC_E_PROTO. */
int nc_call_decode(const struct nc_call *call, nc_xdr_fn dec, void *rep);

#endif
