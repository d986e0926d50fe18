/* SPDX-License-Identifier: MIT */
/*
 * The RPC client connection: many calls in flight, matched by request id.
 * Callers send under a send lock from their own threads; one receive thread
 * per connection reads replies, places reply bulk straight into the
 * caller's buffer, expires calls past their deadline and fails every
 * pending call when the connection drops.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/rpc.h"

#define CC_BUCKETS 256
/* Addresses of one server, one per transport ("rdma://h:p,tcp://h:p"). */
#define CC_MAX_ADDRS 4
/* After a failed attempt, an address is tried after the others for this
 * long (a dead RDMA path costs a connect timeout each time). */
#define CC_ADDR_PENALTY_MS 30000

struct nc_cconn {
	char cc_addr_str[NC_ADDR_MAX + 1];
	char cc_fsname[NC_FSNAME_MAX + 1];
	struct nc_addr cc_addrs[CC_MAX_ADDRS];  /* RDMA ones first */
	const struct nc_xprt_ops *cc_addr_ops[CC_MAX_ADDRS];
	int64_t cc_addr_failed_ms[CC_MAX_ADDRS];
	int cc_naddrs;
	int cc_cur;                     /* the address of the connection */
	const struct nc_xprt_ops *cc_ops; /* its transport */
	struct nc_cconn_opts cc_opts;
	pthread_mutex_t cc_lock;        /* pending table, state */
	pthread_mutex_t cc_send_lock;
	pthread_mutex_t cc_connect_lock;
	int cc_fd;                      /* -1 when not connected */
	bool cc_rx_running;
	bool cc_rx_joinable;
	bool cc_closing;
	pthread_t cc_rx;
	uint64_t cc_next_reqid;
	uint8_t cc_uuid[16];
	uint16_t cc_minor;              /* the minor both ends speak; 0 before */
	uint8_t cc_key[NC_AUTH_KEY_LEN];
	/* Reply reconstruction (co_replay): this client's uuid at the server,
	 * whether the connection now offers it, and the reply slots in use. */
	uint8_t cc_client[16];
	bool cc_replay_ok;
	uint64_t cc_slots_busy;         /* bit i: slot i, under cc_lock */
	pthread_cond_t cc_slot_cond;
	struct nc_call *cc_pending[CC_BUCKETS];
	int cc_npending;
	/* After a connect that failed slowly (cc_connect_guarded()), under
	 * cc_connect_lock: until when its error is returned at once. */
	int64_t cc_hold_until_ms;
	int cc_hold_rc;
};

/* ---- waits ---- */

void nc_wait_init(struct nc_wait *w)
{
	pthread_mutex_init(&w->w_lock, NULL);
	pthread_cond_init(&w->w_cond, NULL);
	w->w_pending = 0;
}

void nc_wait_fini(struct nc_wait *w)
{
	pthread_mutex_destroy(&w->w_lock);
	pthread_cond_destroy(&w->w_cond);
}

void nc_wait_add(struct nc_wait *w, int n)
{
	pthread_mutex_lock(&w->w_lock);
	w->w_pending += n;
	pthread_mutex_unlock(&w->w_lock);
}

void nc_wait_done(struct nc_wait *w)
{
	pthread_mutex_lock(&w->w_lock);
	if (--w->w_pending == 0)
		pthread_cond_broadcast(&w->w_cond);
	pthread_mutex_unlock(&w->w_lock);
}

void nc_wait_all(struct nc_wait *w)
{
	pthread_mutex_lock(&w->w_lock);
	while (w->w_pending > 0)
		pthread_cond_wait(&w->w_cond, &w->w_lock);
	pthread_mutex_unlock(&w->w_lock);
}

void nc_call_init(struct nc_call *call, uint16_t opcode, const void *body,
		  uint32_t body_len)
{
	memset(call, 0, sizeof(*call));
	call->c_opcode = opcode;
	call->c_body = body;
	call->c_body_len = body_len;
}

void nc_call_fini(struct nc_call *call)
{
	free(call->c_rep_body);
	call->c_rep_body = NULL;
	call->c_rep_body_len = 0;
}

/* ---- pending table (cc_lock held) ---- */

static void pending_add(struct nc_cconn *cc, struct nc_call *call)
{
	struct nc_call **b = &cc->cc_pending[call->c_reqid % CC_BUCKETS];

	call->c_next = *b;
	*b = call;
	cc->cc_npending++;
}

static struct nc_call *pending_take(struct nc_cconn *cc, uint64_t reqid)
{
	struct nc_call **pp = &cc->cc_pending[reqid % CC_BUCKETS];

	for (; *pp; pp = &(*pp)->c_next) {
		if ((*pp)->c_reqid == reqid) {
			struct nc_call *c = *pp;

			*pp = c->c_next;
			c->c_next = NULL;
			cc->cc_npending--;
			return c;
		}
	}
	return NULL;
}

/* Unlinks every pending call matching @expired (all when NULL) into a list. */
static struct nc_call *pending_take_all(struct nc_cconn *cc, int64_t now)
{
	struct nc_call *list = NULL;

	for (int i = 0; i < CC_BUCKETS; i++) {
		struct nc_call **pp = &cc->cc_pending[i];

		while (*pp) {
			struct nc_call *c = *pp;

			if (now && c->c_deadline_ms > now) {
				pp = &c->c_next;
				continue;
			}
			*pp = c->c_next;
			c->c_next = list;
			list = c;
			cc->cc_npending--;
		}
	}
	return list;
}

static void call_complete(struct nc_call *call, int status)
{
	struct nc_wait *w = call->c_wait;

	call->c_status = status;
	if (call->c_done)
		call->c_done(call);
	/* The caller may free the call once the wait is signalled. */
	if (w)
		nc_wait_done(w);
}

static void complete_list(struct nc_call *list, int status)
{
	while (list) {
		struct nc_call *next = list->c_next;

		call_complete(list, status);
		list = next;
	}
}

/* ---- blocking I/O helpers (receive thread and handshake) ---- */

/* Fails with -ETIMEDOUT once no byte has come for the request timeout.
 * The time a receive itself blocked counts (a socket with SO_RCVTIMEO, as
 * during the handshake, waits that long before -EAGAIN): a server that
 * accepted and never answers costs one timeout, not two. */
static int read_full(struct nc_cconn *cc, int fd, void *buf, size_t len)
{
	int64_t last = nc_now_ms();
	uint8_t *p = buf;

	while (len) {
		ssize_t n = cc->cc_ops->xo_recv(fd, p, len);

		if (n == 0)
			return -ECONNRESET;
		if (n == -EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			int64_t left = last + cc->cc_opts.co_timeout_ms - nc_now_ms();

			if (left <= 0 || poll(&pfd, 1, (int)left) == 0)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0)
			return (int)n;
		last = nc_now_ms();
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int discard(struct nc_cconn *cc, int fd, size_t len)
{
	uint8_t sink[8192];

	while (len) {
		size_t n = len < sizeof(sink) ? len : sizeof(sink);
		int rc = read_full(cc, fd, sink, n);

		if (rc)
			return rc;
		len -= n;
	}
	return 0;
}

/* @check: @fd was published in cc_fd (not the handshake's private fd). */
static int send_msg(struct nc_cconn *cc, int fd, bool check, struct nc_msg_hdr *h,
		    const void *body, const void *bulk)
{
	uint8_t hb[NC_HDR_LEN];
	struct iovec iov[3];
	int n = 0, rc = 0;

	nc_hdr_encode(h, hb);
	iov[n].iov_base = hb;
	iov[n++].iov_len = NC_HDR_LEN;
	if (h->mh_body_len) {
		iov[n].iov_base = (void *)(uintptr_t)body;
		iov[n++].iov_len = h->mh_body_len;
	}
	if (h->mh_bulk_len) {
		iov[n].iov_base = (void *)(uintptr_t)bulk;
		iov[n++].iov_len = h->mh_bulk_len;
	}
	pthread_mutex_lock(&cc->cc_send_lock);
	if (check) {
		/* The receive thread closes a dead fd under cc_send_lock: check
		 * it is still ours, or we might write to a reused number. */
		pthread_mutex_lock(&cc->cc_lock);
		if (cc->cc_fd != fd)
			rc = -ENOTCONN;
		pthread_mutex_unlock(&cc->cc_lock);
	}
	if (!rc)
		rc = cc->cc_ops->xo_sendv(fd, iov, n);
	if (rc && check)
		cc->cc_ops->xo_shutdown(fd);
	pthread_mutex_unlock(&cc->cc_send_lock);
	return rc;
}

/* One reply: header already read.  Returns 0, or an error that ends the
 * connection. */
static int rx_one(struct nc_cconn *cc, int fd, const struct nc_msg_hdr *h)
{
	struct nc_call *call;
	uint8_t *body = NULL;
	int rc;

	if (!(h->mh_flags & NC_MF_REPLY))
		return -NC_E_PROTO;
	if (h->mh_body_len) {
		body = malloc(h->mh_body_len);
		if (!body)
			return -ENOMEM;
		rc = read_full(cc, fd, body, h->mh_body_len);
		if (rc)
			goto out_free;
	}
	pthread_mutex_lock(&cc->cc_lock);
	call = pending_take(cc, h->mh_reqid);
	pthread_mutex_unlock(&cc->cc_lock);
	if (!call) {
		/* Timed out earlier: drop the late reply. */
		rc = discard(cc, fd, h->mh_bulk_len);
		goto out_free;
	}
	if (h->mh_bulk_len) {
		if (!call->c_bulk_dst || h->mh_bulk_len > call->c_bulk_dst_cap) {
			rc = discard(cc, fd, h->mh_bulk_len);
			free(body);
			call_complete(call, rc ? rc : -NC_E_PROTO);
			return rc;
		}
		rc = read_full(cc, fd, call->c_bulk_dst, h->mh_bulk_len);
		if (rc) {
			free(body);
			call_complete(call, rc);
			return rc;
		}
	}
	call->c_rep_body = body;
	call->c_rep_body_len = h->mh_body_len;
	call->c_rep_bulk_len = h->mh_bulk_len;
	call_complete(call, nc_err_from_status(h->mh_status));
	return 0;
out_free:
	free(body);
	return rc;
}

static void *rx_main(void *arg)
{
	struct nc_cconn *cc = arg;
	struct nc_call *list;
	int fd = cc->cc_fd, rc = 0;

	for (;;) {
		uint8_t hb[NC_HDR_LEN];
		struct nc_msg_hdr h;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int pr = poll(&pfd, 1, 1000);

		if (pr < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		pthread_mutex_lock(&cc->cc_lock);
		list = pending_take_all(cc, nc_now_ms());
		pthread_mutex_unlock(&cc->cc_lock);
		complete_list(list, -ETIMEDOUT);
		if (pr <= 0)
			continue;
		rc = read_full(cc, fd, hb, NC_HDR_LEN);
		if (rc)
			break;
		rc = nc_hdr_decode(hb, &h);
		if (rc) {
			nc_warn("rpc", "%s: malformed reply header: %s", cc->cc_addr_str,
				nc_strerror(rc));
			break;
		}
		rc = rx_one(cc, fd, &h);
		if (rc)
			break;
	}
	pthread_mutex_lock(&cc->cc_lock);
	if (!cc->cc_closing && rc != -ECONNRESET)
		nc_info("rpc", "connection to %s lost: %s", cc->cc_addr_str, nc_strerror(rc));
	cc->cc_fd = -1;
	cc->cc_rx_running = false;
	list = pending_take_all(cc, 0);
	rc = cc->cc_closing ? -ECANCELED : -ENOTCONN;
	pthread_mutex_unlock(&cc->cc_lock);
	pthread_mutex_lock(&cc->cc_send_lock);
	cc->cc_ops->xo_close(fd);
	pthread_mutex_unlock(&cc->cc_send_lock);
	complete_list(list, rc);
	return NULL;
}

/*
 * Connects to the first address that answers, preferring the order of
 * cc_addrs (RDMA first) but trying recently failed ones last.  Sets cc_cur
 * and cc_ops.  cc_connect_lock held.
 */
static int cc_connect_any(struct nc_cconn *cc, int *fd)
{
	int order[CC_MAX_ADDRS], n = 0, rc = -ECONNREFUSED;
	int64_t now = nc_now_ms();

	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < cc->cc_naddrs; i++) {
			bool penalised = cc->cc_addr_failed_ms[i] &&
					 now - cc->cc_addr_failed_ms[i] < CC_ADDR_PENALTY_MS;

			if (penalised == (pass == 1))
				order[n++] = i;
		}
	for (int k = 0; k < n; k++) {
		int i = order[k];
		char a[NC_ADDR_MAX + 1];

		rc = cc->cc_addr_ops[i]->xo_connect(&cc->cc_addrs[i],
						    cc->cc_opts.co_connect_timeout_ms, fd);
		if (rc == 0) {
			cc->cc_addr_failed_ms[i] = 0;
			cc->cc_cur = i;
			cc->cc_ops = cc->cc_addr_ops[i];
			return 0;
		}
		cc->cc_addr_failed_ms[i] = nc_now_ms();
		if (cc->cc_naddrs > 1) {
			nc_addr_format(&cc->cc_addrs[i], a, sizeof(a));
			nc_debug("rpc", "%s: %s%s", a, nc_strerror(rc),
				 k + 1 < n ? ", trying the next address" : "");
		}
	}
	return rc;
}

/*
 * One request and its reply on the handshake's private @fd: @body out,
 * the reply body (malloc'd, at most @max bytes) in *@rb.  0, the reply's
 * error status, or -errno / -NC_E_HANDSHAKE.
 */
static int hs_call(struct nc_cconn *cc, int fd, uint16_t opcode, const void *body,
		   uint32_t blen, uint32_t max, uint8_t **rb, uint32_t *rlen)
{
	struct nc_msg_hdr h = {
		.mh_magic = NC_MSG_MAGIC,
		.mh_version = NC_PROTO_MAJOR << 8 | NC_PROTO_MINOR,
		.mh_opcode = opcode,
		.mh_body_len = blen,
	};
	uint8_t hb[NC_HDR_LEN], *b;
	int rc;

	*rb = NULL;
	rc = send_msg(cc, fd, false, &h, body, NULL);
	if (rc)
		return rc;
	rc = read_full(cc, fd, hb, NC_HDR_LEN);
	if (rc)
		return rc;
	rc = nc_hdr_decode(hb, &h);
	if (rc)
		return rc;
	if (!(h.mh_flags & NC_MF_REPLY) || h.mh_opcode != opcode || h.mh_bulk_len ||
	    h.mh_body_len > max)
		return -NC_E_HANDSHAKE;
	b = malloc(h.mh_body_len ? h.mh_body_len : 1);
	if (!b)
		return -ENOMEM;
	rc = read_full(cc, fd, b, h.mh_body_len);
	if (!rc)
		rc = nc_err_from_status(h.mh_status);
	if (rc) {
		free(b);
		return rc;
	}
	*rb = b;
	*rlen = h.mh_body_len;
	return 0;
}

/*
 * CONNECT then AUTH on @fd: both ends prove they hold the cluster key
 * (common/auth.h).  -NC_E_AUTH when the server refuses our proof or
 * cannot prove its own.
 */
static int cc_handshake(struct nc_cconn *cc, int fd, struct nc_connect_rep *cp)
{
	struct nc_connect_req cr = { 0 };
	struct nc_auth_msg am = { 0 };
	uint8_t body[128], *rb;
	uint32_t rlen = 0;
	struct nc_xdr x;
	int rc;

	cr.cr_major = NC_PROTO_MAJOR;
	cr.cr_minor = NC_PROTO_MINOR;
	cr.cr_role = cc->cc_opts.co_role;
	cr.cr_features = NC_FEATURES_SUPPORTED;
	if (cc->cc_opts.co_replay)
		memcpy(cr.cr_client, cc->cc_client, sizeof(cr.cr_client));
	else
		cr.cr_features &= ~NC_FEAT_REPLAY;
	snprintf(cr.cr_fsname, sizeof(cr.cr_fsname), "%s", cc->cc_fsname);
	nc_auth_nonce(cr.cr_nonce);
	nc_xdr_init_encode(&x, body, sizeof(body));
	nc_wire_connect_req(&x, &cr);
	rc = hs_call(cc, fd, NC_OP_CONNECT, body, (uint32_t)x.x_pos, sizeof(body), &rb, &rlen);
	if (rc)
		return rc;
	nc_xdr_init_decode(&x, rb, rlen);
	nc_wire_connect_rep(&x, cp);
	rc = nc_xdr_finish(&x);
	free(rb);
	if (rc)
		return rc;
	/* Authentication is mutual: a server that does not prove it holds
	 * the key is not talked to. */
	if (!(cp->cp_features & NC_FEAT_AUTH))
		return -NC_E_AUTH;
	nc_auth_proof(cc->cc_key, false, cr.cr_nonce, cp->cp_nonce, cc->cc_fsname,
		      cr.cr_role, am.am_mac);
	nc_xdr_init_encode(&x, body, sizeof(body));
	nc_wire_auth(&x, &am);
	rc = hs_call(cc, fd, NC_OP_AUTH, body, (uint32_t)x.x_pos, sizeof(body), &rb, &rlen);
	if (rc)
		return rc;
	nc_xdr_init_decode(&x, rb, rlen);
	nc_wire_auth(&x, &am);
	rc = nc_xdr_finish(&x);
	free(rb);
	if (rc)
		return rc;
	if (!nc_auth_proof_is_valid(cc->cc_key, true, cr.cr_nonce, cp->cp_nonce,
				    cc->cc_fsname, cr.cr_role, am.am_mac)) {
		nc_warn("rpc", "%s: the server's authentication proof is wrong", cc->cc_addr_str);
		return -NC_E_AUTH;
	}
	return 0;
}

/* Connect and handshake; cc_connect_lock held. */
static int cc_connect(struct nc_cconn *cc)
{
	struct nc_connect_rep cp = { 0 };
	struct timeval tv;
	int fd, rc;

	if (cc->cc_rx_joinable) {
		pthread_join(cc->cc_rx, NULL);
		cc->cc_rx_joinable = false;
	}
	rc = cc_connect_any(cc, &fd);
	if (rc)
		return rc;
	/* Bounds every blocking receive, so a hung server cannot hang us. */
	tv.tv_sec = cc->cc_opts.co_timeout_ms / 1000;
	tv.tv_usec = (cc->cc_opts.co_timeout_ms % 1000) * 1000;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	rc = cc_handshake(cc, fd, &cp);
	if (rc) {
		if (rc == -NC_E_AUTH)
			nc_debug("rpc", "%s: %s", cc->cc_addr_str, nc_strerror(rc));
		cc->cc_ops->xo_close(fd);
		return rc;
	}
	pthread_mutex_lock(&cc->cc_lock);
	memcpy(cc->cc_uuid, cp.cp_uuid, 16);
	/* The server answers with the smaller minor; one that names a
	 * larger one still gets ours only. */
	cc->cc_minor = cp.cp_minor < NC_PROTO_MINOR ? cp.cp_minor : NC_PROTO_MINOR;
	cc->cc_replay_ok = cc->cc_opts.co_replay && (cp.cp_features & NC_FEAT_REPLAY);
	cc->cc_fd = fd;
	cc->cc_rx_running = true;
	pthread_mutex_unlock(&cc->cc_lock);
	rc = pthread_create(&cc->cc_rx, NULL, rx_main, cc);
	if (rc) {
		pthread_mutex_lock(&cc->cc_lock);
		cc->cc_fd = -1;
		cc->cc_rx_running = false;
		pthread_mutex_unlock(&cc->cc_lock);
		cc->cc_ops->xo_close(fd);
		return -rc;
	}
	cc->cc_rx_joinable = true;
	nc_debug("rpc", "connected to %s", cc->cc_addr_str);
	return 0;
}

/*
 * A connect that failed slowly (a host that drops every packet, a server
 * that accepts and never answers) is not tried again at once: for as long
 * as it took, up to CC_HOLD_MAX_MS, submits fail at once with its error.
 * Otherwise every call queued behind it, and each of a batch of pieces
 * bound for the same OST, would wait as long again (a data loader's batch
 * of 64 small files took minutes with one OSS host cut off).  A fast
 * failure (refused: the server is restarting) is retried at once, since
 * trying costs nothing.  cc_connect_lock held.
 */
#define CC_SLOW_CONNECT_MS 500
#define CC_HOLD_MAX_MS 5000
static int cc_connect_guarded(struct nc_cconn *cc)
{
	int64_t t0 = nc_now_ms(), now, took, hold;
	int rc;

	if (t0 < cc->cc_hold_until_ms)
		return cc->cc_hold_rc;
	rc = cc_connect(cc);
	now = nc_now_ms();
	took = now - t0;
	cc->cc_hold_until_ms = 0;
	if (rc && took >= CC_SLOW_CONNECT_MS) {
		hold = took < CC_HOLD_MAX_MS ? took : CC_HOLD_MAX_MS;
		cc->cc_hold_until_ms = now + hold;
		cc->cc_hold_rc = rc;
		nc_debug("rpc", "%s: connect failed after %" PRId64 " ms (%s); not tried again "
			 "for %" PRId64 " ms", cc->cc_addr_str, took, nc_strerror(rc), hold);
	}
	return rc;
}

/* Parses "a[,b...]": every address must parse; those of transports not
 * built in are left out, and at least one must remain.  RDMA ones go
 * first (clients prefer RDMA). */
static int cc_parse_addrs(struct nc_cconn *cc, const char *list)
{
	char buf[NC_ADDR_MAX + 1], *save = NULL, *tok;
	struct nc_addr a;
	int rc, parsed = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (int rdma = 1; rdma >= 0; rdma--) {
		char tmp[NC_ADDR_MAX + 1];

		memcpy(tmp, buf, sizeof(tmp));
		for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			const struct nc_xprt_ops *ops;

			rc = nc_addr_parse(tok, &a);
			if (rc)
				return rc;
			parsed++;
			if ((strcmp(a.a_scheme, "rdma") == 0) != (rdma == 1))
				continue;
			ops = nc_xprt_find(&a);
			if (!ops)
				continue;
			if (cc->cc_naddrs == CC_MAX_ADDRS)
				return -NC_E_ADDR;
			cc->cc_addrs[cc->cc_naddrs] = a;
			cc->cc_addr_ops[cc->cc_naddrs++] = ops;
		}
	}
	if (!cc->cc_naddrs)
		return parsed ? -EPROTONOSUPPORT : -NC_E_ADDR;
	cc->cc_ops = cc->cc_addr_ops[0];
	return 0;
}

int nc_cconn_new(const char *addr, const char *fsname,
		 const struct nc_cconn_opts *opts, struct nc_cconn **out)
{
	struct nc_cconn *cc;
	int rc;

	if (strlen(addr) > NC_ADDR_MAX || strlen(fsname) > NC_FSNAME_MAX)
		return -EINVAL;
	cc = calloc(1, sizeof(*cc));
	if (!cc)
		return -ENOMEM;
	rc = cc_parse_addrs(cc, addr);
	if (rc)
		goto out_free;
	snprintf(cc->cc_addr_str, sizeof(cc->cc_addr_str), "%s", addr);
	snprintf(cc->cc_fsname, sizeof(cc->cc_fsname), "%s", fsname);
	if (opts)
		cc->cc_opts = *opts;
	/* No key, no connection: every server asks for a proof. */
	if (!cc->cc_opts.co_key || nc_auth_init()) {
		rc = -EINVAL;
		goto out_free;
	}
	memcpy(cc->cc_key, cc->cc_opts.co_key, NC_AUTH_KEY_LEN);
	cc->cc_opts.co_key = cc->cc_key;
	if (!cc->cc_opts.co_role)
		cc->cc_opts.co_role = NC_ROLE_CLIENT;
	if (cc->cc_opts.co_timeout_ms <= 0)
		cc->cc_opts.co_timeout_ms = 30000;
	if (cc->cc_opts.co_connect_timeout_ms <= 0)
		cc->cc_opts.co_connect_timeout_ms = 5000;
	if (cc->cc_opts.co_retry_ms < 0)
		cc->cc_opts.co_retry_ms = 0;
	else if (cc->cc_opts.co_retry_ms == 0)
		cc->cc_opts.co_retry_ms = 60000;
	cc->cc_fd = -1;
	cc->cc_next_reqid = 1;
	if (cc->cc_opts.co_replay) {
		uint8_t r[NC_AUTH_NONCE_LEN];

		nc_auth_nonce(r); /* random: a uuid no other client has */
		memcpy(cc->cc_client, r, sizeof(cc->cc_client));
	}
	pthread_cond_init(&cc->cc_slot_cond, NULL);
	pthread_mutex_init(&cc->cc_lock, NULL);
	pthread_mutex_init(&cc->cc_send_lock, NULL);
	pthread_mutex_init(&cc->cc_connect_lock, NULL);
	*out = cc;
	return 0;
out_free:
	free(cc);
	return rc;
}

void nc_cconn_free(struct nc_cconn *cc)
{
	if (!cc)
		return;
	pthread_mutex_lock(&cc->cc_connect_lock);
	pthread_mutex_lock(&cc->cc_lock);
	cc->cc_closing = true;
	if (cc->cc_fd >= 0)
		cc->cc_ops->xo_shutdown(cc->cc_fd);
	pthread_mutex_unlock(&cc->cc_lock);
	if (cc->cc_rx_joinable)
		pthread_join(cc->cc_rx, NULL);
	pthread_mutex_unlock(&cc->cc_connect_lock);
	pthread_mutex_destroy(&cc->cc_lock);
	pthread_mutex_destroy(&cc->cc_send_lock);
	pthread_mutex_destroy(&cc->cc_connect_lock);
	pthread_cond_destroy(&cc->cc_slot_cond);
	nc_auth_wipe(cc->cc_key, sizeof(cc->cc_key));
	free(cc);
}

const char *nc_cconn_addr(const struct nc_cconn *cc)
{
	return cc->cc_addr_str;
}

void nc_cconn_server_uuid(struct nc_cconn *cc, uint8_t uuid[16])
{
	pthread_mutex_lock(&cc->cc_lock);
	memcpy(uuid, cc->cc_uuid, 16);
	pthread_mutex_unlock(&cc->cc_lock);
}

uint16_t nc_cconn_peer_minor(struct nc_cconn *cc)
{
	uint16_t minor;

	pthread_mutex_lock(&cc->cc_lock);
	minor = cc->cc_minor;
	pthread_mutex_unlock(&cc->cc_lock);
	return minor;
}

const char *nc_cconn_xprt_name(struct nc_cconn *cc)
{
	const char *name = NULL;

	pthread_mutex_lock(&cc->cc_lock);
	if (cc->cc_fd >= 0)
		name = cc->cc_ops->xo_name;
	pthread_mutex_unlock(&cc->cc_lock);
	return name;
}

bool nc_cconn_is_connected(struct nc_cconn *cc)
{
	bool up;

	pthread_mutex_lock(&cc->cc_lock);
	up = cc->cc_fd >= 0;
	pthread_mutex_unlock(&cc->cc_lock);
	return up;
}

int nc_cconn_submit(struct nc_cconn *cc, struct nc_call *call)
{
	struct nc_msg_hdr h = { 0 };
	int fd, rc;

	if (call->c_body_len > NC_MAX_BODY || call->c_bulk_len > NC_MAX_BULK)
		return -EINVAL;
	pthread_mutex_lock(&cc->cc_lock);
	fd = cc->cc_fd;
	pthread_mutex_unlock(&cc->cc_lock);
	if (fd < 0) {
		pthread_mutex_lock(&cc->cc_connect_lock);
		pthread_mutex_lock(&cc->cc_lock);
		fd = cc->cc_fd;
		rc = cc->cc_closing ? -ECANCELED : 0;
		pthread_mutex_unlock(&cc->cc_lock);
		if (!rc && fd < 0)
			rc = cc_connect_guarded(cc);
		pthread_mutex_unlock(&cc->cc_connect_lock);
		if (rc)
			return rc;
	}

	call->c_status = 0;
	call->c_sent = false;
	call->c_rep_body = NULL;
	call->c_rep_body_len = 0;
	call->c_rep_bulk_len = 0;
	if (call->c_wait)
		nc_wait_add(call->c_wait, 1);
	pthread_mutex_lock(&cc->cc_lock);
	fd = cc->cc_fd;
	if (fd < 0) {
		pthread_mutex_unlock(&cc->cc_lock);
		rc = -ENOTCONN;
		goto out_unwait;
	}
	/* A resend keeps its reqid: with the slot, it names the request at a
	 * server that may have executed it already. */
	if (!call->c_resend || !call->c_reqid)
		call->c_reqid = cc->cc_next_reqid++;
	call->c_replay = call->c_slot && cc->cc_replay_ok;
	call->c_deadline_ms = nc_now_ms() + (call->c_timeout_ms > 0 ? call->c_timeout_ms
								  : cc->cc_opts.co_timeout_ms);
	pending_add(cc, call);
	pthread_mutex_unlock(&cc->cc_lock);

	h.mh_magic = NC_MSG_MAGIC;
	h.mh_version = NC_PROTO_MAJOR << 8 | NC_PROTO_MINOR;
	h.mh_opcode = call->c_opcode;
	h.mh_reqid = call->c_reqid;
	if (call->c_replay) {
		h.mh_flags = NC_MF_SLOT | (uint32_t)(call->c_slot - 1) << NC_MF_SLOT_SHIFT;
		if (call->c_resend)
			h.mh_flags |= NC_MF_RESEND;
	}
	h.mh_body_len = call->c_body_len;
	h.mh_bulk_len = call->c_bulk_len;
	/* Set before sending: the reply may complete the call at once. */
	call->c_sent = true;
	rc = send_msg(cc, fd, true, &h, call->c_body, call->c_bulk);
	if (rc) {
		struct nc_call *mine;

		pthread_mutex_lock(&cc->cc_lock);
		mine = pending_take(cc, call->c_reqid);
		pthread_mutex_unlock(&cc->cc_lock);
		if (!mine)
			return 0; /* the receive thread completed it */
		call->c_sent = false;
		rc = -ENOTCONN;
		goto out_unwait;
	}
	return 0;
out_unwait:
	if (call->c_wait)
		nc_wait_done(call->c_wait);
	return rc;
}

static bool err_is_transient(int rc)
{
	return rc == -ECONNREFUSED || rc == -ENOTCONN || rc == -ECONNRESET ||
	       rc == -ETIMEDOUT || rc == -EHOSTUNREACH || rc == -ENETUNREACH ||
	       rc == -EPIPE || rc == -ECONNABORTED;
}

/* Takes a free reply slot (waiting while all are busy): its number + 1. */
static int slot_get(struct nc_cconn *cc)
{
	int slot;

	pthread_mutex_lock(&cc->cc_lock);
	while (cc->cc_slots_busy == UINT64_MAX)
		pthread_cond_wait(&cc->cc_slot_cond, &cc->cc_lock);
	slot = __builtin_ctzll(~cc->cc_slots_busy);
	cc->cc_slots_busy |= 1ull << slot;
	pthread_mutex_unlock(&cc->cc_lock);
	return slot + 1;
}

static void slot_put(struct nc_cconn *cc, int slot)
{
	pthread_mutex_lock(&cc->cc_lock);
	cc->cc_slots_busy &= ~(1ull << (slot - 1));
	pthread_cond_signal(&cc->cc_slot_cond);
	pthread_mutex_unlock(&cc->cc_lock);
}

/* After a lost connection: may the call be sent again? */
static bool may_resend(const struct nc_call *call)
{
	return !call->c_sent || nc_op_is_idempotent(call->c_opcode) || call->c_replay;
}

int nc_cconn_call(struct nc_cconn *cc, struct nc_call *call)
{
	int64_t deadline = nc_now_ms() + cc->cc_opts.co_retry_ms;
	struct nc_wait w;
	int rc, delay = 50;

	/* NC_REPLAY_SLOTS must fit the slot mask. */
	_Static_assert(NC_REPLAY_SLOTS == 64, "slot mask is a uint64_t");
	call->c_slot = 0;
	call->c_resend = false;
	call->c_reqid = 0;
	if (cc->cc_opts.co_replay && !nc_op_is_idempotent(call->c_opcode))
		call->c_slot = slot_get(cc);
	nc_wait_init(&w);
	for (;;) {
		call->c_wait = &w;
		rc = nc_cconn_submit(cc, call);
		if (rc == 0) {
			nc_wait_all(&w);
			rc = call->c_status;
			if (rc != -ENOTCONN || !may_resend(call))
				break;
			/* Once a slotted request has left, every later send
			 * of it is a resend that the server may answer from
			 * its record. */
			if (call->c_sent && call->c_replay)
				call->c_resend = true;
			nc_call_fini(call);
		} else if (!err_is_transient(rc)) {
			break;
		}
		if (nc_now_ms() + delay > deadline)
			break;
		usleep((useconds_t)delay * 1000);
		if (delay < 1000)
			delay *= 2;
	}
	call->c_wait = NULL;
	nc_wait_fini(&w);
	if (call->c_slot)
		slot_put(cc, call->c_slot);
	call->c_slot = 0;
	return rc;
}

int nc_msg_encode(nc_xdr_fn enc, void *req, uint8_t **out, uint32_t *len)
{
	size_t cap = 1024;
	uint8_t *buf = NULL;
	struct nc_xdr x;

	for (;;) {
		uint8_t *nb = realloc(buf, cap);

		if (!nb) {
			free(buf);
			return -ENOMEM;
		}
		buf = nb;
		nc_xdr_init_encode(&x, buf, cap);
		if (enc)
			enc(&x, req);
		if (x.x_err != -EOVERFLOW || cap >= NC_MAX_BODY)
			break;
		cap *= 4;
		if (cap > NC_MAX_BODY)
			cap = NC_MAX_BODY;
	}
	if (x.x_err) {
		free(buf);
		return x.x_err;
	}
	*out = buf;
	*len = (uint32_t)x.x_pos;
	return 0;
}

int nc_call_decode(const struct nc_call *call, nc_xdr_fn dec, void *rep)
{
	struct nc_xdr x;

	nc_xdr_init_decode(&x, call->c_rep_body, call->c_rep_body_len);
	dec(&x, rep);
	return nc_xdr_finish(&x);
}

int nc_cconn_rpc(struct nc_cconn *cc, uint16_t opcode, nc_xdr_fn enc,
		 void *req, nc_xdr_fn dec, void *rep, struct nc_call *call)
{
	uint8_t *buf;
	uint32_t len;
	int rc;

	rc = nc_msg_encode(enc, req, &buf, &len);
	if (rc)
		return rc;
	nc_call_init(call, opcode, buf, len);
	rc = nc_cconn_call(cc, call);
	if (rc)
		goto out_fini;
	if (dec) {
		rc = nc_call_decode(call, dec, rep);
		if (rc)
			goto out_fini;
	}
	free(buf);
	return 0;
out_fini:
	nc_call_fini(call);
	free(buf);
	return rc;
}
