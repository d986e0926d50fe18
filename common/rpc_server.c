/* SPDX-License-Identifier: MIT */
/*
 * The RPC server: one epoll I/O thread, a bounded pool of service threads
 * (Lustre's ptlrpc service threads), backpressure instead of unbounded
 * queues.  See rpc.h for the rules.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/rpc.h"
#include "common/rpc_metrics.h"

#define SRV_MAX_LISTEN 8
/* Bytes of request buffers queued or being served, server-wide. */
#define SRV_MEM_LIMIT (512ull << 20)
/* The largest message accepted before CONNECT. */
#define SRV_PREAUTH_MAX 4096
/*
 * How long a thread with a reply waits while no reply to the same peer
 * has finished leaving (its socket is full): a peer that reads nothing for
 * this long while more replies wait is not reading, and its connection is
 * shut down so that the threads waiting on it go back to other work.
 */
#define SRV_SEND_STALL_S 10

struct srv_listener {
	int sl_fd;
	int sl_port;
	const struct nc_xprt_ops *sl_ops;
};

struct nc_srv_conn {
	struct nc_server *sc_srv;
	const struct nc_xprt_ops *sc_ops;
	int sc_fd;
	atomic_int sc_refs;
	_Atomic int64_t sc_sent_ms;     /* nc_now_ms() when a send last began or ended */
	uint64_t sc_id;
	char sc_peer[NC_ADDR_MAX + 1];
	uint32_t sc_role;
	bool sc_connected;      /* CONNECT answered: the nonces are set */
	bool sc_handshaken;     /* AUTH succeeded: requests are served */
	bool sc_refused;        /* auth_refuse() logged why it closes */
	uint8_t sc_nc[NC_AUTH_NONCE_LEN]; /* the peer's nonce */
	uint8_t sc_ns[NC_AUTH_NONCE_LEN]; /* ours, new for this connection */
	bool sc_has_client;     /* NC_FEAT_REPLAY agreed: sc_client is set */
	uint8_t sc_client[16];
	bool sc_closed;         /* under srv lock */
	bool sc_paused;         /* under srv lock: EPOLLIN is off */
	bool sc_kick;           /* under srv lock: the I/O thread must resume it */
	int sc_inflight;        /* under srv lock */
	pthread_mutex_t sc_send_lock;
	/* receive state, I/O thread only */
	uint8_t sc_hbuf[NC_HDR_LEN];
	size_t sc_hgot;
	struct nc_msg_hdr sc_hdr;
	uint8_t *sc_msg;
	size_t sc_mlen, sc_mgot;
	struct nc_srv_conn *sc_next, *sc_prev;
};

struct srv_qent {
	struct nc_req *qe_req;
};

struct nc_server {
	struct nc_server_conf s_conf;
	char s_name[32];
	char s_fsname[NC_FSNAME_MAX + 1];
	uint8_t s_key[NC_AUTH_KEY_LEN];
	struct srv_listener s_lis[SRV_MAX_LISTEN];
	int s_nlis;
	int s_epfd;
	int s_wakefd;
	pthread_t s_io;
	pthread_t *s_workers;
	int s_nworkers;
	bool s_started;
	bool s_stopping;
	bool s_io_stop;         /* under s_lock: the I/O thread exits */
	pthread_mutex_t s_lock;
	pthread_cond_t s_cond;
	/* the request queue (FIFO) */
	struct nc_reqq s_queue;
	uint64_t s_mem;         /* request bytes held */
	struct nc_srv_conn *s_conns;
	int s_nconns;
	uint64_t s_next_id;
	uint64_t s_inflight;    /* under s_lock: requests queued or served */
	struct nc_rpc_metrics *s_metrics; /* NULL: none */
};

/* Request and its message buffer in one allocation. */
struct srv_req {
	struct nc_req sr_req;
	size_t sr_size;
	struct timespec sr_start;       /* arrival, for the latency metric */
};

/* Bulks of at least this size start on a page boundary (req_alloc). */
#define SRV_BULK_ALIGN 4096u
#define SRV_BULK_ALIGN_MIN (64u * 1024)

static void conn_put(struct nc_srv_conn *c)
{
	if (atomic_fetch_sub(&c->sc_refs, 1) != 1)
		return;
	c->sc_ops->xo_close(c->sc_fd);
	free(c->sc_msg);
	pthread_mutex_destroy(&c->sc_send_lock);
	free(c);
}

uint64_t nc_srv_conn_id(const struct nc_srv_conn *conn)
{
	return conn->sc_id;
}

const char *nc_srv_conn_peer(const struct nc_srv_conn *conn)
{
	return conn->sc_peer;
}

static void epoll_set(struct nc_server *srv, struct nc_srv_conn *c, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = c };

	epoll_ctl(srv->s_epfd, EPOLL_CTL_MOD, c->sc_fd, &e);
}

/* I/O thread: unlink and shut the connection; the fd closes on last ref. */
static void conn_close(struct nc_srv_conn *c, const char *why)
{
	struct nc_server *srv = c->sc_srv;

	pthread_mutex_lock(&srv->s_lock);
	if (c->sc_closed) {
		pthread_mutex_unlock(&srv->s_lock);
		return;
	}
	c->sc_closed = true;
	if (c->sc_prev)
		c->sc_prev->sc_next = c->sc_next;
	else
		srv->s_conns = c->sc_next;
	if (c->sc_next)
		c->sc_next->sc_prev = c->sc_prev;
	srv->s_nconns--;
	pthread_mutex_unlock(&srv->s_lock);
	nc_rpc_metrics_conn(srv->s_metrics, c->sc_ops->xo_name, -1);

	epoll_ctl(srv->s_epfd, EPOLL_CTL_DEL, c->sc_fd, NULL);
	/* Wake any service thread blocked sending to this peer. */
	c->sc_ops->xo_shutdown(c->sc_fd);
	if (why)
		nc_info(srv->s_name, "closed connection %" PRIu64 " from %s: %s",
			c->sc_id, c->sc_peer, why);
	if (srv->s_conf.sc_closed && c->sc_handshaken)
		srv->s_conf.sc_closed(c, srv->s_conf.sc_arg);
	conn_put(c);
}

static void resume_paused(struct nc_server *srv)
{
	uint64_t one = 1;
	bool kick = false;

	/* Caller holds s_lock.  Few connections pause, so a scan is fine.  A
	 * paused connection may hold a whole request header already read, with
	 * nothing left in the socket to raise EPOLLIN: the I/O thread is woken
	 * to go on with it. */
	for (struct nc_srv_conn *c = srv->s_conns; c; c = c->sc_next) {
		if (c->sc_paused && c->sc_inflight < NC_SRV_MAX_INFLIGHT) {
			c->sc_paused = false;
			c->sc_kick = true;
			kick = true;
			epoll_set(srv, c, EPOLLIN | EPOLLRDHUP);
		}
	}
	if (kick && write(srv->s_wakefd, &one, sizeof(one)) < 0)
		nc_error(srv->s_name, "cannot wake the I/O thread: %s", strerror(errno));
}

static void req_release(struct nc_req *req)
{
	struct srv_req *sr = (struct srv_req *)req;
	struct nc_srv_conn *c = req->rq_conn;
	struct nc_server *srv = c->sc_srv;

	pthread_mutex_lock(&srv->s_lock);
	c->sc_inflight--;
	srv->s_inflight--;
	srv->s_mem -= sr->sr_size;
	resume_paused(srv);
	pthread_mutex_unlock(&srv->s_lock);
	free(sr);
	conn_put(c);
}

/* The iovec of header (encoded into @hb) and body; returns entries used. */
static int msg_iov(const struct nc_msg_hdr *h, uint8_t hb[NC_HDR_LEN], const void *body,
		   uint32_t blen, struct iovec *iov)
{
	int n = 0;

	nc_hdr_encode(h, hb);
	iov[n].iov_base = hb;
	iov[n++].iov_len = NC_HDR_LEN;
	if (blen) {
		iov[n].iov_base = (void *)(uintptr_t)body;
		iov[n++].iov_len = blen;
	}
	return n;
}

/*
 * Takes @c's send lock.  While another thread holds it, waits as long as
 * replies to @c keep leaving; when no send to @c has begun or ended for
 * SRV_SEND_STALL_S the peer is not reading: the connection is shut down (the holder's send
 * returns too) and -ETIMEDOUT returned, so one peer that stops reading
 * cannot hold every service thread.
 */
static int conn_send_lock(struct nc_srv_conn *c)
{
	struct timespec deadline;

	if (pthread_mutex_trylock(&c->sc_send_lock) == 0)
		goto out_locked;
	for (;;) {
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += 1;
		if (pthread_mutex_timedlock(&c->sc_send_lock, &deadline) == 0)
			goto out_locked;
		if (nc_now_ms() - atomic_load(&c->sc_sent_ms) >= SRV_SEND_STALL_S * 1000)
			break;
	}
	nc_warn(c->sc_srv->s_name, "%s (connection %" PRIu64 "): no reply left for %d s, "
		"shutting the connection down", c->sc_peer, c->sc_id, SRV_SEND_STALL_S);
	c->sc_ops->xo_shutdown(c->sc_fd);
	return -ETIMEDOUT;
out_locked:
	atomic_store(&c->sc_sent_ms, nc_now_ms());
	return 0;
}

/* Releases @c's send lock after a send that ended (well or not). */
static void conn_send_unlock(struct nc_srv_conn *c)
{
	atomic_store(&c->sc_sent_ms, nc_now_ms());
	pthread_mutex_unlock(&c->sc_send_lock);
}

static int conn_send(struct nc_srv_conn *c, const struct nc_msg_hdr *h,
		     const void *body, uint32_t blen, const void *bulk,
		     uint32_t bulklen)
{
	uint8_t hb[NC_HDR_LEN];
	struct iovec iov[3];
	int n = msg_iov(h, hb, body, blen, iov), rc;

	if (bulklen) {
		iov[n].iov_base = (void *)(uintptr_t)bulk;
		iov[n++].iov_len = bulklen;
	}
	rc = conn_send_lock(c);
	if (rc)
		return rc;
	rc = c->sc_ops->xo_sendv(c->sc_fd, iov, n);
	conn_send_unlock(c);
	return rc;
}

/* The header of the reply to @rq. */
static void reply_hdr_make(const struct nc_msg_hdr *rq, int status, uint32_t blen,
			   uint32_t bulklen, struct nc_msg_hdr *h)
{
	*h = (struct nc_msg_hdr){
		.mh_magic = NC_MSG_MAGIC,
		.mh_version = NC_PROTO_MAJOR << 8 | NC_PROTO_MINOR,
		.mh_opcode = rq->mh_opcode,
		.mh_flags = NC_MF_REPLY,
		.mh_status = nc_status_from_err(status),
		.mh_reqid = rq->mh_reqid,
		.mh_body_len = blen,
		.mh_bulk_len = bulklen,
	};
}

static int reply_hdr_send(struct nc_srv_conn *c, const struct nc_msg_hdr *rq,
			  int status, const void *body, uint32_t blen,
			  const void *bulk, uint32_t bulklen)
{
	struct nc_msg_hdr h;

	reply_hdr_make(rq, status, blen, bulklen, &h);
	return conn_send(c, &h, body, blen, bulk, bulklen);
}

/* A reply of @req went out (@rc 0) or could not: logged, @req freed. */
static int reply_done(struct nc_req *req, int rc)
{
	if (rc)
		nc_debug(req->rq_conn->sc_srv->s_name,
			 "reply to %s req %" PRIu64 " from %s failed: %s",
			 nc_op_name(req->rq_hdr.mh_opcode), req->rq_hdr.mh_reqid,
			 req->rq_peer, nc_strerror(rc));
	req_release(req);
	return rc;
}

int nc_req_reply(struct nc_req *req, int status, const void *body,
		 uint32_t body_len, const void *bulk, uint32_t bulk_len)
{
	nc_rpc_metrics_req(req->rq_conn->sc_srv->s_metrics, req->rq_hdr.mh_opcode, status,
			   &((struct srv_req *)req)->sr_start);
	if (status) {
		body_len = 0;
		bulk_len = 0;
	}
	return reply_done(req, reply_hdr_send(req->rq_conn, &req->rq_hdr, status, body,
					      body_len, bulk, bulk_len));
}

/* Without a transport sendfile: the file's bytes through a buffer. */
static int conn_send_file_copy(struct nc_srv_conn *c, const struct nc_msg_hdr *h,
			       const void *body, uint32_t blen, int file_fd, off_t off,
			       uint32_t len)
{
	uint8_t *buf = malloc(len ? len : 1);
	size_t done = 0;
	int rc;

	if (!buf)
		return -ENOMEM;
	while (done < len) {
		ssize_t n = pread(file_fd, buf + done, len - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EIO;
		}
		done += (size_t)n;
	}
	rc = conn_send(c, h, body, blen, buf, len);
	free(buf);
	return rc;
}

int nc_req_reply_file(struct nc_req *req, const void *body, uint32_t body_len,
		      int file_fd, off_t off, uint32_t len)
{
	struct nc_srv_conn *c = req->rq_conn;
	uint8_t hb[NC_HDR_LEN];
	struct nc_msg_hdr h;
	struct iovec iov[2];
	int n, rc;

	nc_rpc_metrics_req(c->sc_srv->s_metrics, req->rq_hdr.mh_opcode, 0,
			   &((struct srv_req *)req)->sr_start);
	reply_hdr_make(&req->rq_hdr, 0, body_len, len, &h);
	if (!c->sc_ops->xo_sendfile)
		return reply_done(req, conn_send_file_copy(c, &h, body, body_len, file_fd,
							   off, len));
	n = msg_iov(&h, hb, body, body_len, iov);
	rc = conn_send_lock(c);
	if (rc)
		return reply_done(req, rc);
	rc = c->sc_ops->xo_sendfile(c->sc_fd, iov, n, file_fd, off, len);
	/* Part of a message may have left: the stream is out of step, so
	 * the peer must see the connection end rather than garbage. */
	if (rc)
		c->sc_ops->xo_shutdown(c->sc_fd);
	conn_send_unlock(c);
	return reply_done(req, rc);
}

int nc_req_reply_err(struct nc_req *req, int status)
{
	return nc_req_reply(req, status, NULL, 0, NULL, 0);
}

void nc_req_drop(struct nc_req *req)
{
	req_release(req);
}

/* ---- the I/O thread ---- */

static uint16_t proto_minor_min(const struct nc_server *srv, uint16_t theirs)
{
	uint16_t ours = NC_PROTO_MINOR;

	if (srv->s_conf.sc_minor && srv->s_conf.sc_minor < ours)
		ours = srv->s_conf.sc_minor;
	return theirs < ours ? theirs : ours;
}

/*
 * Refuses a peer that has not authenticated: an AUTH error reply, one
 * (rate-limited) log line naming the peer, and false so that the caller
 * closes the connection.
 */
static bool auth_refuse(struct nc_srv_conn *c, const char *why)
{
	struct nc_server *srv = c->sc_srv;

	nc_warn(srv->s_name, "refused %s (connection %" PRIu64 "): %s", c->sc_peer,
		c->sc_id, why);
	c->sc_refused = true;
	reply_hdr_send(c, &c->sc_hdr, -NC_E_AUTH, NULL, 0, NULL, 0);
	return false;
}

static int handle_connect(struct nc_srv_conn *c, const uint8_t *body,
			  uint32_t len)
{
	struct nc_server *srv = c->sc_srv;
	struct nc_connect_req cr = { 0 };
	struct nc_connect_rep cp = { 0 };
	uint8_t out[128];
	struct nc_xdr x;
	int rc;

	nc_xdr_init_decode(&x, body, len);
	nc_wire_connect_req(&x, &cr);
	rc = nc_xdr_finish(&x);
	if (rc)
		return rc;
	if (cr.cr_major != NC_PROTO_MAJOR) {
		nc_warn(srv->s_name, "%s: protocol %u.%u refused", c->sc_peer,
			cr.cr_major, cr.cr_minor);
		reply_hdr_send(c, &c->sc_hdr, -NC_E_VERSION, NULL, 0, NULL, 0);
		return -NC_E_VERSION;
	}
	if (strcmp(cr.cr_fsname, srv->s_fsname)) {
		nc_warn(srv->s_name, "%s: asked for filesystem '%s', this is '%s'",
			c->sc_peer, cr.cr_fsname, srv->s_fsname);
		reply_hdr_send(c, &c->sc_hdr, -NC_E_FSNAME, NULL, 0, NULL, 0);
		return -NC_E_FSNAME;
	}
	if (!(cr.cr_features & NC_FEAT_AUTH)) {
		auth_refuse(c, "CONNECT without authentication (no cluster key support)");
		return -NC_E_AUTH;
	}
	cp.cp_major = NC_PROTO_MAJOR;
	/* Both sides speak the smaller minor. */
	cp.cp_minor = proto_minor_min(srv, cr.cr_minor);
	cp.cp_role = srv->s_conf.sc_role;
	cp.cp_features = cr.cr_features & NC_FEATURES_SUPPORTED;
	if (!srv->s_conf.sc_replay)
		cp.cp_features &= ~NC_FEAT_REPLAY;
	if (cp.cp_features & NC_FEAT_REPLAY) {
		memcpy(c->sc_client, cr.cr_client, sizeof(c->sc_client));
		c->sc_has_client = true;
	}
	memcpy(cp.cp_uuid, srv->s_conf.sc_uuid, 16);
	memcpy(c->sc_nc, cr.cr_nonce, NC_AUTH_NONCE_LEN);
	nc_auth_nonce(c->sc_ns);
	memcpy(cp.cp_nonce, c->sc_ns, NC_AUTH_NONCE_LEN);
	nc_xdr_init_encode(&x, out, sizeof(out));
	nc_wire_connect_rep(&x, &cp);
	c->sc_role = cr.cr_role;
	c->sc_connected = true;
	nc_debug(srv->s_name, "connection %" PRIu64 " from %s: role %u",
		 c->sc_id, c->sc_peer, cr.cr_role);
	return reply_hdr_send(c, &c->sc_hdr, 0, out, (uint32_t)x.x_pos, NULL, 0);
}

/* AUTH: checks the peer's proof and answers with ours.  False to close. */
static bool handle_auth(struct nc_srv_conn *c, const uint8_t *body, uint32_t len)
{
	struct nc_server *srv = c->sc_srv;
	struct nc_auth_msg am = { 0 };
	uint8_t out[NC_AUTH_MAC_LEN];
	struct nc_xdr x;

	if (!c->sc_connected)
		return auth_refuse(c, "AUTH before CONNECT");
	if (c->sc_handshaken)
		return auth_refuse(c, "second AUTH on an authenticated connection");
	nc_xdr_init_decode(&x, body, len);
	nc_wire_auth(&x, &am);
	if (nc_xdr_finish(&x) || c->sc_hdr.mh_bulk_len)
		return auth_refuse(c, "malformed AUTH");
	if (!nc_auth_proof_is_valid(srv->s_key, false, c->sc_nc, c->sc_ns, srv->s_fsname,
				    c->sc_role, am.am_mac))
		return auth_refuse(c, "authentication failed (wrong cluster key?)");
	nc_auth_proof(srv->s_key, true, c->sc_nc, c->sc_ns, srv->s_fsname, c->sc_role,
		      am.am_mac);
	nc_xdr_init_encode(&x, out, sizeof(out));
	nc_wire_auth(&x, &am);
	c->sc_handshaken = true;
	nc_debug(srv->s_name, "connection %" PRIu64 " from %s: authenticated",
		 c->sc_id, c->sc_peer);
	return reply_hdr_send(c, &c->sc_hdr, 0, out, (uint32_t)x.x_pos, NULL, 0) == 0;
}

/* Returns true when the message was queued or handled, false to close. */
static bool dispatch(struct nc_srv_conn *c)
{
	struct nc_server *srv = c->sc_srv;
	struct nc_msg_hdr *h = &c->sc_hdr;
	struct srv_req *sr = (struct srv_req *)c->sc_msg;
	struct nc_req *req;

	c->sc_msg = NULL;
	req = &sr->sr_req;
	if (h->mh_flags & NC_MF_REPLY) {
		nc_warn(srv->s_name, "%s: malformed message: unexpected reply", c->sc_peer);
		goto drop;
	}
	/* After authentication the I/O thread sends nothing: a reply can wait
	 * on a peer that does not read, and every connection would wait with
	 * it.  What is answered here goes to the service threads (srv_answer). */
	if (c->sc_handshaken)
		goto queue;
	if (h->mh_opcode == NC_OP_CONNECT) {
		int rc;

		/* A connection is authenticated once, for its life: a second
		 * CONNECT would start over with new nonces. */
		if (c->sc_connected) {
			auth_refuse(c, "second CONNECT");
			goto drop;
		}
		rc = handle_connect(c, req->rq_body, h->mh_body_len);
		if (rc == -NC_E_PROTO)
			nc_warn(srv->s_name, "%s: malformed CONNECT", c->sc_peer);
		free(sr);
		return rc == 0;
	}
	if (h->mh_opcode == NC_OP_AUTH) {
		bool ok = handle_auth(c, req->rq_body, h->mh_body_len);

		free(sr);
		return ok;
	}
	{
		char why[96];

		snprintf(why, sizeof(why), "%s (opcode %u) before authentication",
			 nc_op_name(h->mh_opcode), h->mh_opcode);
		auth_refuse(c, why);
		goto drop;
	}
queue:
	req->rq_conn = c;
	req->rq_hdr = *h;
	req->rq_peer = c->sc_peer;
	req->rq_peer_role = c->sc_role;
	req->rq_has_client = c->sc_has_client;
	memcpy(req->rq_client, c->sc_client, sizeof(req->rq_client));
	clock_gettime(CLOCK_MONOTONIC, &sr->sr_start);
	atomic_fetch_add(&c->sc_refs, 1);

	pthread_mutex_lock(&srv->s_lock);
	c->sc_inflight++;
	srv->s_inflight++;
	srv->s_mem += sr->sr_size;
	/* Bounded by MAX_CONNS * MAX_INFLIGHT. */
	if (nc_reqq_push(&srv->s_queue, req)) {
		c->sc_inflight--;
		srv->s_inflight--;
		srv->s_mem -= sr->sr_size;
		pthread_mutex_unlock(&srv->s_lock);
		atomic_fetch_sub(&c->sc_refs, 1);
		goto drop;
	}
	pthread_cond_signal(&srv->s_cond);
	pthread_mutex_unlock(&srv->s_lock);
	return true;
drop:
	free(sr);
	return false;
}

/* Pause reading @c when it has too much in flight or the server holds too
 * many request bytes.  Returns true when paused. */
static bool maybe_pause(struct nc_srv_conn *c, size_t need)
{
	struct nc_server *srv = c->sc_srv;
	bool pause;

	pthread_mutex_lock(&srv->s_lock);
	pause = c->sc_inflight >= NC_SRV_MAX_INFLIGHT ||
		(c->sc_inflight > 0 && srv->s_mem + need > SRV_MEM_LIMIT);
	if (pause && !c->sc_paused) {
		c->sc_paused = true;
		epoll_set(srv, c, 0);
	}
	pthread_mutex_unlock(&srv->s_lock);
	return pause;
}

/*
 * The buffer of the message whose header @c just read, or NULL (paused, or
 * the connection closed for want of memory).  A large bulk starts on a
 * page boundary, so that an OSS can write it to disk with O_DIRECT
 * straight from here.
 */
static struct srv_req *req_alloc(struct nc_srv_conn *c)
{
	uint32_t blen = c->sc_hdr.mh_body_len;
	size_t pad = 0, size;
	struct srv_req *sr;
	void *p = NULL;

	if (c->sc_hdr.mh_bulk_len >= SRV_BULK_ALIGN_MIN)
		pad = (SRV_BULK_ALIGN - (sizeof(*sr) + blen) % SRV_BULK_ALIGN) % SRV_BULK_ALIGN;
	size = sizeof(*sr) + pad + c->sc_mlen;
	if (maybe_pause(c, size))
		return NULL;
	if (c->sc_hdr.mh_bulk_len >= SRV_BULK_ALIGN_MIN) {
		if (posix_memalign(&p, SRV_BULK_ALIGN, size))
			p = NULL;
	} else {
		p = malloc(size);
	}
	if (!p) {
		conn_close(c, "out of memory");
		return NULL;
	}
	sr = p;
	sr->sr_size = size;
	sr->sr_req.rq_body = (uint8_t *)(sr + 1) + pad;
	sr->sr_req.rq_bulk = sr->sr_req.rq_body + blen;
	return sr;
}

static void conn_readable(struct nc_srv_conn *c)
{
	struct nc_server *srv = c->sc_srv;
	char why[96];
	ssize_t n;
	int rc;

	for (;;) {
		if (c->sc_hgot == 0 && maybe_pause(c, 0))
			return;
		if (c->sc_hgot < NC_HDR_LEN) {
			n = c->sc_ops->xo_recv(c->sc_fd, c->sc_hbuf + c->sc_hgot,
					       NC_HDR_LEN - c->sc_hgot);
			if (n == -EAGAIN)
				return;
			if (n <= 0)
				goto eof;
			c->sc_hgot += (size_t)n;
			if (c->sc_hgot < NC_HDR_LEN)
				continue;
			rc = nc_hdr_decode(c->sc_hbuf, &c->sc_hdr);
			if (rc) {
				snprintf(why, sizeof(why),
					 "malformed header (%s): magic 0x%08x body %u bulk %u",
					 nc_strerror(rc), c->sc_hdr.mh_magic,
					 c->sc_hdr.mh_body_len, c->sc_hdr.mh_bulk_len);
				nc_warn(srv->s_name, "%s: %s", c->sc_peer, why);
				conn_close(c, why);
				return;
			}
			c->sc_mlen = (size_t)c->sc_hdr.mh_body_len + c->sc_hdr.mh_bulk_len;
			/* Nothing large is buffered for a peer that has not said
			 * who it is. */
			if (!c->sc_handshaken && c->sc_mlen > SRV_PREAUTH_MAX) {
				snprintf(why, sizeof(why),
					 "malformed: %zu-byte message before authentication",
					 c->sc_mlen);
				nc_warn(srv->s_name, "%s: %s", c->sc_peer, why);
				conn_close(c, why);
				return;
			}
			c->sc_mgot = 0;
		}
		if (!c->sc_msg) {
			struct srv_req *sr = req_alloc(c);

			if (!sr)
				return;
			c->sc_msg = (uint8_t *)sr;
		}
		while (c->sc_mgot < c->sc_mlen) {
			struct srv_req *sr = (struct srv_req *)c->sc_msg;

			n = c->sc_ops->xo_recv(c->sc_fd, sr->sr_req.rq_body + c->sc_mgot,
					       c->sc_mlen - c->sc_mgot);
			if (n == -EAGAIN)
				return;
			if (n <= 0)
				goto eof;
			c->sc_mgot += (size_t)n;
		}
		c->sc_hgot = 0;
		if (!dispatch(c)) {
			/* A refused peer has had its one line already. */
			conn_close(c, c->sc_refused ? NULL : "protocol error");
			return;
		}
	}
eof:
	if (c->sc_hgot || c->sc_msg)
		conn_close(c, "truncated message");
	else
		conn_close(c, n == 0 ? NULL : "receive error");
}

static void accept_one(struct nc_server *srv, struct srv_listener *l)
{
	struct nc_srv_conn *c;
	struct epoll_event e;
	char peer[NC_ADDR_MAX + 1];
	int fd, rc;

	rc = l->sl_ops->xo_accept(l->sl_fd, &fd, peer, sizeof(peer));
	if (rc)
		return;
	pthread_mutex_lock(&srv->s_lock);
	if (srv->s_nconns >= NC_SRV_MAX_CONNS) {
		pthread_mutex_unlock(&srv->s_lock);
		nc_warn(srv->s_name, "refusing %s: %d connections already", peer,
			NC_SRV_MAX_CONNS);
		l->sl_ops->xo_close(fd);
		return;
	}
	pthread_mutex_unlock(&srv->s_lock);
	c = calloc(1, sizeof(*c));
	if (!c) {
		l->sl_ops->xo_close(fd);
		return;
	}
	c->sc_srv = srv;
	c->sc_ops = l->sl_ops;
	c->sc_fd = fd;
	atomic_init(&c->sc_refs, 1);
	atomic_init(&c->sc_sent_ms, nc_now_ms());
	snprintf(c->sc_peer, sizeof(c->sc_peer), "%s", peer);
	pthread_mutex_init(&c->sc_send_lock, NULL);
	pthread_mutex_lock(&srv->s_lock);
	c->sc_id = ++srv->s_next_id;
	c->sc_next = srv->s_conns;
	if (srv->s_conns)
		srv->s_conns->sc_prev = c;
	srv->s_conns = c;
	srv->s_nconns++;
	pthread_mutex_unlock(&srv->s_lock);
	nc_rpc_metrics_conn(srv->s_metrics, c->sc_ops->xo_name, 1);
	e.events = EPOLLIN | EPOLLRDHUP;
	e.data.ptr = c;
	if (epoll_ctl(srv->s_epfd, EPOLL_CTL_ADD, fd, &e) < 0)
		conn_close(c, "epoll failed");
}

/* The wake eventfd fired: stop (true), or resume kicked connections. */
static bool io_wake(struct nc_server *srv)
{
	struct nc_srv_conn *kicked[64];
	uint64_t v;
	int n;

	if (read(srv->s_wakefd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		nc_debug(srv->s_name, "wake read: %s", strerror(errno));
	do {
		n = 0;
		pthread_mutex_lock(&srv->s_lock);
		if (srv->s_io_stop) {
			pthread_mutex_unlock(&srv->s_lock);
			return true;
		}
		for (struct nc_srv_conn *c = srv->s_conns; c && n < 64; c = c->sc_next) {
			if (!c->sc_kick)
				continue;
			c->sc_kick = false;
			atomic_fetch_add(&c->sc_refs, 1);
			kicked[n++] = c;
		}
		pthread_mutex_unlock(&srv->s_lock);
		for (int i = 0; i < n; i++) {
			if (!kicked[i]->sc_closed)
				conn_readable(kicked[i]);
			conn_put(kicked[i]);
		}
	} while (n == 64);
	return false;
}

/* The connection of an epoll event, or NULL (the wake fd, a listener). */
static struct nc_srv_conn *io_event_conn(struct nc_server *srv, void *p)
{
	if (p == srv || (p >= (void *)srv->s_lis && p < (void *)(srv->s_lis + SRV_MAX_LISTEN)))
		return NULL;
	return p;
}

static void *io_main(void *arg)
{
	struct nc_server *srv = arg;
	struct epoll_event evs[64];
	bool stop = false;

	while (!stop) {
		int n = epoll_wait(srv->s_epfd, evs, 64, -1);

		if (n < 0 && errno != EINTR)
			break;
		/* An earlier event of the batch may close a connection whose
		 * own event comes later in it (a kicked connection read in
		 * io_wake() finds its peer gone, say), and its last request
		 * may end meanwhile: each connection of the batch is held
		 * until the batch is done.  Only this thread closes them, so
		 * all are open here. */
		for (int i = 0; i < n; i++) {
			struct nc_srv_conn *c = io_event_conn(srv, evs[i].data.ptr);

			if (c)
				atomic_fetch_add(&c->sc_refs, 1);
		}
		for (int i = 0; i < n && !stop; i++) {
			void *p = evs[i].data.ptr;
			struct nc_srv_conn *c = io_event_conn(srv, p);

			if (p == srv)
				stop = io_wake(srv);
			else if (!c)
				accept_one(srv, p);
			else if (c->sc_closed)
				continue;
			else if (evs[i].events & (EPOLLERR | EPOLLHUP))
				conn_close(c, NULL);
			else if (evs[i].events & (EPOLLIN | EPOLLRDHUP))
				conn_readable(c);
		}
		for (int i = 0; i < n; i++) {
			struct nc_srv_conn *c = io_event_conn(srv, evs[i].data.ptr);

			if (c)
				conn_put(c);
		}
	}
	return NULL;
}

/*
 * Service thread: what the framework answers itself on an authenticated
 * connection.  True when @req was answered here.
 */
static bool srv_answer(struct nc_req *req)
{
	struct nc_srv_conn *c = req->rq_conn;
	uint16_t op = req->rq_hdr.mh_opcode;
	int status;

	/* Not counted in the request metrics, as before CONNECT. */
	if (op == NC_OP_PING) {
		status = 0;
	} else if (op == NC_OP_CONNECT || op == NC_OP_AUTH) {
		/* Authenticated once, for the connection's life. */
		nc_warn(c->sc_srv->s_name, "refused %s (connection %" PRIu64 "): second %s",
			c->sc_peer, c->sc_id, nc_op_name(op));
		atomic_fetch_add(&c->sc_refs, 1);
		reply_done(req, reply_hdr_send(c, &req->rq_hdr, -NC_E_AUTH, NULL, 0, NULL, 0));
		c->sc_ops->xo_shutdown(c->sc_fd);
		conn_put(c);
		return true;
	} else if (!nc_op_is_known(op)) {
		/* A newer peer: say so and keep the connection. */
		status = -ENOSYS;
	} else {
		return false;
	}
	reply_done(req, reply_hdr_send(c, &req->rq_hdr, status, NULL, 0, NULL, 0));
	return true;
}

static void *worker_main(void *arg)
{
	struct nc_server *srv = arg;

	for (;;) {
		struct nc_req *req;

		pthread_mutex_lock(&srv->s_lock);
		while (!srv->s_queue.rq_len && !srv->s_stopping)
			pthread_cond_wait(&srv->s_cond, &srv->s_lock);
		if (srv->s_stopping) {
			pthread_mutex_unlock(&srv->s_lock);
			break;
		}
		req = nc_reqq_pop(&srv->s_queue);
		pthread_mutex_unlock(&srv->s_lock);
		if (!srv_answer(req))
			srv->s_conf.sc_handler(req, srv->s_conf.sc_arg);
	}
	return NULL;
}

/* ---- setup and teardown ---- */

int nc_server_new(const struct nc_server_conf *conf, struct nc_server **out)
{
	struct nc_server *srv;
	struct epoll_event e;

	/* No key, no server: every connection must authenticate. */
	if (!conf->sc_handler || conf->sc_threads < 1 || !conf->sc_fsname || !conf->sc_key)
		return -EINVAL;
	if (nc_auth_init())
		return -EIO;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->s_conf = *conf;
	snprintf(srv->s_name, sizeof(srv->s_name), "%s", conf->sc_name ? conf->sc_name : "rpc");
	snprintf(srv->s_fsname, sizeof(srv->s_fsname), "%s", conf->sc_fsname);
	srv->s_conf.sc_name = srv->s_name;
	srv->s_conf.sc_fsname = srv->s_fsname;
	memcpy(srv->s_key, conf->sc_key, NC_AUTH_KEY_LEN);
	srv->s_conf.sc_key = srv->s_key;
	pthread_mutex_init(&srv->s_lock, NULL);
	pthread_cond_init(&srv->s_cond, NULL);
	srv->s_epfd = epoll_create1(EPOLL_CLOEXEC);
	srv->s_wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (srv->s_epfd < 0 || srv->s_wakefd < 0)
		goto out_free;
	e.events = EPOLLIN;
	e.data.ptr = srv;
	if (epoll_ctl(srv->s_epfd, EPOLL_CTL_ADD, srv->s_wakefd, &e) < 0)
		goto out_free;
	*out = srv;
	return 0;
out_free:
	if (srv->s_epfd >= 0)
		close(srv->s_epfd);
	if (srv->s_wakefd >= 0)
		close(srv->s_wakefd);
	free(srv);
	return -ENOMEM;
}

int nc_server_listen(struct nc_server *srv, const char *addr)
{
	struct srv_listener *l;
	struct nc_addr a;
	struct epoll_event e;
	int rc;

	if (srv->s_nlis == SRV_MAX_LISTEN)
		return -ENOSPC;
	rc = nc_addr_parse(addr, &a);
	if (rc)
		return rc;
	l = &srv->s_lis[srv->s_nlis];
	l->sl_ops = nc_xprt_find(&a);
	if (!l->sl_ops)
		return -EPROTONOSUPPORT;
	rc = l->sl_ops->xo_listen(&a, &l->sl_fd, &l->sl_port);
	if (rc)
		return rc;
	e.events = EPOLLIN;
	e.data.ptr = l;
	if (epoll_ctl(srv->s_epfd, EPOLL_CTL_ADD, l->sl_fd, &e) < 0) {
		rc = -errno;
		l->sl_ops->xo_close(l->sl_fd);
		return rc;
	}
	srv->s_nlis++;
	nc_info(srv->s_name, "listening on %s (port %d)", addr, l->sl_port);
	return 0;
}

int nc_server_listen_list(struct nc_server *srv, const char *list, char *bound,
			  size_t len)
{
	char buf[NC_ADDR_MAX + 1], *save = NULL, *tok;
	size_t used = 0;
	int rc = -NC_E_ADDR, nok = 0;

	if (strlen(list) > NC_ADDR_MAX)
		return -NC_E_ADDR;
	snprintf(buf, sizeof(buf), "%s", list);
	if (len)
		bound[0] = '\0';
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char one[NC_ADDR_MAX + 1];
		struct nc_addr a;
		int r;

		r = nc_addr_parse(tok, &a);
		if (r)
			return r;
		r = nc_server_listen(srv, tok);
		if (r) {
			rc = r;
			/* RDMA where the host has no device: TCP still serves. */
			if (!strcmp(a.a_scheme, "rdma")) {
				nc_warn(srv->s_name, "not listening on %s: %s", tok,
					nc_strerror(r));
				continue;
			}
			return r;
		}
		a.a_port = (uint16_t)srv->s_lis[srv->s_nlis - 1].sl_port;
		nc_addr_format(&a, one, sizeof(one));
		if (used + strlen(one) + 2 > len)
			return -NC_E_ADDR;
		used += (size_t)snprintf(bound + used, len - used, "%s%s", nok ? "," : "", one);
		nok++;
	}
	return nok ? 0 : rc;
}

int nc_server_bound_port(struct nc_server *srv, int idx)
{
	if (idx < 0 || idx >= srv->s_nlis)
		return -EINVAL;
	return srv->s_lis[idx].sl_port;
}

int nc_server_start(struct nc_server *srv)
{
	int rc;

	srv->s_workers = calloc((size_t)srv->s_conf.sc_threads, sizeof(pthread_t));
	if (!srv->s_workers)
		return -ENOMEM;
	for (int i = 0; i < srv->s_conf.sc_threads; i++) {
		rc = pthread_create(&srv->s_workers[i], NULL, worker_main, srv);
		if (rc)
			goto out_stop;
		srv->s_nworkers++;
	}
	rc = pthread_create(&srv->s_io, NULL, io_main, srv);
	if (rc)
		goto out_stop;
	srv->s_started = true;
	return 0;
out_stop:
	pthread_mutex_lock(&srv->s_lock);
	srv->s_stopping = true;
	pthread_cond_broadcast(&srv->s_cond);
	pthread_mutex_unlock(&srv->s_lock);
	for (int i = 0; i < srv->s_nworkers; i++)
		pthread_join(srv->s_workers[i], NULL);
	srv->s_nworkers = 0;
	return -rc;
}

void nc_server_stop(struct nc_server *srv)
{
	uint64_t one = 1;

	if (!srv || !srv->s_started)
		return;
	srv->s_started = false;
	pthread_mutex_lock(&srv->s_lock);
	srv->s_io_stop = true;
	pthread_mutex_unlock(&srv->s_lock);
	if (write(srv->s_wakefd, &one, sizeof(one)) < 0)
		nc_error(srv->s_name, "cannot wake the I/O thread: %s", strerror(errno));
	pthread_join(srv->s_io, NULL);
	pthread_mutex_lock(&srv->s_lock);
	srv->s_stopping = true;
	pthread_cond_broadcast(&srv->s_cond);
	pthread_mutex_unlock(&srv->s_lock);
	for (int i = 0; i < srv->s_nworkers; i++)
		pthread_join(srv->s_workers[i], NULL);
	srv->s_nworkers = 0;
	/* Requests never served are dropped without a reply. */
	for (struct nc_req *req; (req = nc_reqq_pop(&srv->s_queue));)
		nc_req_drop(req);
	while (srv->s_conns)
		conn_close(srv->s_conns, NULL);
	for (int i = 0; i < srv->s_nlis; i++)
		srv->s_lis[i].sl_ops->xo_close(srv->s_lis[i].sl_fd);
	srv->s_nlis = 0;
}

int nc_reqq_push(struct nc_reqq *q, struct nc_req *req)
{
	if (q->rq_len == q->rq_cap) {
		size_t ncap = q->rq_cap ? q->rq_cap * 2 : 256;
		struct nc_req **nr = calloc(ncap, sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		for (size_t i = 0; i < q->rq_len; i++)
			nr[i] = q->rq_ring[(q->rq_head + i) % q->rq_cap];
		free(q->rq_ring);
		q->rq_ring = nr;
		q->rq_cap = ncap;
		q->rq_head = 0;
	}
	q->rq_ring[(q->rq_head + q->rq_len++) % q->rq_cap] = req;
	return 0;
}

struct nc_req *nc_reqq_pop(struct nc_reqq *q)
{
	struct nc_req *req;

	if (!q->rq_len)
		return NULL;
	req = q->rq_ring[q->rq_head];
	q->rq_head = (q->rq_head + 1) % q->rq_cap;
	q->rq_len--;
	return req;
}

void nc_reqq_fini(struct nc_reqq *q)
{
	free(q->rq_ring);
	memset(q, 0, sizeof(*q));
}

void nc_server_free(struct nc_server *srv)
{
	if (!srv)
		return;
	nc_server_stop(srv);
	/* A server that never started still holds its listening sockets. */
	for (int i = 0; i < srv->s_nlis; i++)
		srv->s_lis[i].sl_ops->xo_close(srv->s_lis[i].sl_fd);
	srv->s_nlis = 0;
	close(srv->s_epfd);
	close(srv->s_wakefd);
	free(srv->s_workers);
	nc_reqq_fini(&srv->s_queue);
	nc_rpc_metrics_free(srv->s_metrics);
	pthread_mutex_destroy(&srv->s_lock);
	pthread_cond_destroy(&srv->s_cond);
	nc_auth_wipe(srv->s_key, sizeof(srv->s_key));
	free(srv);
}

int nc_server_set_metrics(struct nc_server *srv, struct nc_metrics *reg)
{
	if (srv->s_started || srv->s_metrics)
		return -EBUSY;
	return nc_rpc_metrics_new(reg, srv->s_name, srv, &srv->s_metrics);
}

void nc_server_load(struct nc_server *srv, uint64_t *queued, uint64_t *inflight)
{
	pthread_mutex_lock(&srv->s_lock);
	*queued = srv->s_queue.rq_len;
	*inflight = srv->s_inflight;
	pthread_mutex_unlock(&srv->s_lock);
}
