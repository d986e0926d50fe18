/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the RPC layer (common/rpc_server.c, common/rpc_client.c)
 * over the TCP transport on 127.0.0.1, server and clients in this process.
 * With NACRE_TEST_XPRT=rdma and NACRE_TEST_HOST=<an address of an RDMA
 * device> the same tests run over the RDMA transport (make check-rdma);
 * the tests that write raw bytes into a TCP socket are skipped there.
 *
 * Every test starts its own server on a port the kernel picks (port 0), so
 * tests neither collide with each other nor with anything else on the host.
 * The test handler speaks four opcodes:
 *   OP_ECHO  replies with the request body and bulk;
 *   OP_ERR   replies with the local error carried as an i32 in the body;
 *   OP_SLEEP sleeps for the u32 milliseconds in the body, then echoes;
 *   OP_HOLD  keeps the request without replying until the test releases it
 *            (a reply after the handler returned, as rpc.h allows), then
 *            echoes.
 * Waits on calls are bounded, so a hang in the code under test fails a test
 * instead of stopping the run.  Servers and clients hold test_key, the
 * cluster key; the authentication tests also use wrong_key.
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/rpc.h"
#include "common/wire.h"

#define FSNAME "testfs"
#define OP_ECHO NC_OP_GETATTR
#define OP_ERR NC_OP_LOOKUP
#define OP_SLEEP NC_OP_READLINK
#define OP_HOLD NC_OP_OPEN
#define HOLD_MAX 1024
#define MIB (1024u * 1024u)

static const uint8_t srv_uuid[16] = {
	0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
};

/* The cluster key of the test servers, and another one. */
static const uint8_t test_key[NC_AUTH_KEY_LEN] = {
	0x6e, 0x61, 0x63, 0x72, 0x65, 0x2d, 0x74, 0x65, 0x73, 0x74, 0x2d, 0x6b,
	0x65, 0x79, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
	0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12,
};
static const uint8_t wrong_key[NC_AUTH_KEY_LEN] = {
	0x6e, 0x61, 0x63, 0x72, 0x65, 0x2d, 0x74, 0x65, 0x73, 0x74, 0x2d, 0x6b,
	0x65, 0x79, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
	0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x13,
};

/* The transport under test: "tcp" on 127.0.0.1 unless the environment
 * says otherwise. */
static const char *xp_scheme = "tcp";
static const char *xp_host = "127.0.0.1";

static bool xp_is_tcp(void)
{
	return !strcmp(xp_scheme, "tcp");
}

/* ---- helpers ---- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static uint64_t rng_state = 0x6e616372652d7270ull;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void fill_random(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t s = seed | 1;

	for (size_t i = 0; i < n; i++) {
		s ^= s >> 12;
		s ^= s << 25;
		s ^= s >> 27;
		p[i] = (uint8_t)((s * 0x2545f4914f6cdd1dull) >> 56);
	}
}

/*
 * nc_wait_all() with a bound: 0 once every call completed, -ETIMEDOUT if
 * some are still pending after @ms (the test then fails rather than hangs).
 */
static int wait_bounded(struct nc_wait *w, int ms)
{
	struct timespec ts;
	int pending;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->w_lock);
	while (w->w_pending > 0)
		if (pthread_cond_timedwait(&w->w_cond, &w->w_lock, &ts) == ETIMEDOUT)
			break;
	pending = w->w_pending;
	pthread_mutex_unlock(&w->w_lock);
	return pending ? -ETIMEDOUT : 0;
}

/* ---- the test server ---- */

struct tsrv {
	struct nc_server *ts_srv;
	int ts_port;
	char ts_addr[64];
	atomic_int ts_closed;           /* sc_closed callbacks */
	atomic_int ts_closed_bad;       /* callbacks with a bad conn argument */
	pthread_mutex_t ts_lock;
	struct nc_req *ts_held[HOLD_MAX];
	int ts_nheld;
	bool ts_release;                /* OP_HOLD echoes at once */
};

static void req_echo(struct nc_req *req)
{
	nc_req_reply(req, 0, req->rq_body, req->rq_hdr.mh_body_len, req->rq_bulk,
		     req->rq_hdr.mh_bulk_len);
}

static uint32_t body_u32(const struct nc_req *req)
{
	uint32_t v = 0;

	if (req->rq_hdr.mh_body_len >= 4)
		memcpy(&v, req->rq_body, 4);
	return le32toh(v);
}

static void handler(struct nc_req *req, void *arg)
{
	struct tsrv *t = arg;

	switch (req->rq_hdr.mh_opcode) {
	case OP_ECHO:
		req_echo(req);
		break;
	case OP_ERR:
		nc_req_reply_err(req, (int32_t)body_u32(req));
		break;
	case OP_SLEEP:
		sleep_ms((int)body_u32(req));
		req_echo(req);
		break;
	case OP_HOLD:
		pthread_mutex_lock(&t->ts_lock);
		if (!t->ts_release && t->ts_nheld < HOLD_MAX) {
			t->ts_held[t->ts_nheld++] = req;
			pthread_mutex_unlock(&t->ts_lock);
			break;
		}
		pthread_mutex_unlock(&t->ts_lock);
		req_echo(req);
		break;
	default:
		nc_req_reply_err(req, -EOPNOTSUPP);
		break;
	}
}

static void on_closed(struct nc_srv_conn *conn, void *arg)
{
	struct tsrv *t = arg;

	char want[64];

	snprintf(want, sizeof(want), "%s://%s:", xp_scheme, xp_host);
	if (!conn || nc_srv_conn_id(conn) == 0 ||
	    strncmp(nc_srv_conn_peer(conn), want, strlen(want)))
		atomic_fetch_add(&t->ts_closed_bad, 1);
	atomic_fetch_add(&t->ts_closed, 1);
}

/* The minor the next tsrv_start() offers (0: NC_PROTO_MINOR). */
static uint16_t tsrv_minor;

/* Starts a server on the test host's @port (0: any free port). */
static int tsrv_start(struct tsrv *t, int port, int threads)
{
	struct nc_server_conf conf = {
		.sc_name = "test",
		.sc_fsname = FSNAME,
		.sc_role = NC_ROLE_MDS,
		.sc_threads = threads,
		.sc_handler = handler,
		.sc_closed = on_closed,
		.sc_arg = t,
		.sc_key = test_key,
		.sc_minor = tsrv_minor,
	};
	char addr[64];
	int rc;

	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->ts_lock, NULL);
	atomic_init(&t->ts_closed, 0);
	atomic_init(&t->ts_closed_bad, 0);
	memcpy(conf.sc_uuid, srv_uuid, 16);
	rc = nc_server_new(&conf, &t->ts_srv);
	if (rc)
		return rc;
	snprintf(addr, sizeof(addr), "%s://%s:%d", xp_scheme, xp_host, port);
	rc = nc_server_listen(t->ts_srv, addr);
	if (rc)
		goto out_free;
	t->ts_port = nc_server_bound_port(t->ts_srv, 0);
	if (t->ts_port <= 0 || (port && t->ts_port != port)) {
		rc = -EINVAL;
		goto out_free;
	}
	snprintf(t->ts_addr, sizeof(t->ts_addr), "%s://%s:%d", xp_scheme, xp_host,
		 t->ts_port);
	rc = nc_server_start(t->ts_srv);
	if (rc)
		goto out_free;
	return 0;
out_free:
	nc_server_free(t->ts_srv);
	t->ts_srv = NULL;
	pthread_mutex_destroy(&t->ts_lock);
	return rc;
}

/* Replies (echo) to every held request and lets later ones through. */
static void tsrv_release(struct tsrv *t)
{
	struct nc_req *held[HOLD_MAX];
	int n;

	pthread_mutex_lock(&t->ts_lock);
	t->ts_release = true;
	n = t->ts_nheld;
	memcpy(held, t->ts_held, sizeof(held[0]) * (size_t)n);
	t->ts_nheld = 0;
	pthread_mutex_unlock(&t->ts_lock);
	for (int i = 0; i < n; i++)
		req_echo(held[i]);
}

static int tsrv_nheld(struct tsrv *t)
{
	int n;

	pthread_mutex_lock(&t->ts_lock);
	n = t->ts_nheld;
	pthread_mutex_unlock(&t->ts_lock);
	return n;
}

/* Waits until at least @n requests are held; returns how many are. */
static int tsrv_wait_held(struct tsrv *t, int n, int ms)
{
	int64_t end = now_ms() + ms;

	while (tsrv_nheld(t) < n && now_ms() < end)
		sleep_ms(5);
	return tsrv_nheld(t);
}

/* Stops the server and drops what it still holds (before it is freed,
 * since a request refers to its connection and server). */
static void tsrv_stop(struct tsrv *t)
{
	if (!t->ts_srv)
		return;
	nc_server_stop(t->ts_srv);
	pthread_mutex_lock(&t->ts_lock);
	for (int i = 0; i < t->ts_nheld; i++)
		nc_req_drop(t->ts_held[i]);
	t->ts_nheld = 0;
	pthread_mutex_unlock(&t->ts_lock);
	nc_server_free(t->ts_srv);
	t->ts_srv = NULL;
	pthread_mutex_destroy(&t->ts_lock);
}

static bool wait_closed(struct tsrv *t, int n, int ms)
{
	int64_t end = now_ms() + ms;

	while (atomic_load(&t->ts_closed) < n && now_ms() < end)
		sleep_ms(5);
	return atomic_load(&t->ts_closed) >= n;
}

static struct nc_cconn *client_new_key(const char *addr, const char *fsname,
				       int timeout_ms, int retry_ms, const uint8_t *key)
{
	struct nc_cconn_opts o = {
		.co_role = NC_ROLE_CLIENT,
		.co_timeout_ms = timeout_ms,
		.co_connect_timeout_ms = 2000,
		.co_retry_ms = retry_ms,
		.co_key = key,
	};
	struct nc_cconn *cc = NULL;

	if (nc_cconn_new(addr, fsname, &o, &cc))
		return NULL;
	return cc;
}

static struct nc_cconn *client_new(const char *addr, const char *fsname,
				   int timeout_ms, int retry_ms)
{
	return client_new_key(addr, fsname, timeout_ms, retry_ms, test_key);
}

static int call_u32(struct nc_cconn *cc, uint16_t op, uint32_t v, int timeout_ms)
{
	struct nc_call call;
	uint32_t le = htole32(v);
	int rc;

	nc_call_init(&call, op, &le, sizeof(le));
	call.c_timeout_ms = timeout_ms;
	rc = nc_cconn_call(cc, &call);
	nc_call_fini(&call);
	return rc;
}

/* One echo call with @body; 0 when the reply carried the same bytes. */
static int echo_check(struct nc_cconn *cc, const void *body, uint32_t len)
{
	struct nc_call call;
	int rc;

	nc_call_init(&call, OP_ECHO, body, len);
	rc = nc_cconn_call(cc, &call);
	if (rc == 0 && (call.c_rep_body_len != len ||
			(len && memcmp(call.c_rep_body, body, len))))
		rc = -EBADMSG;
	nc_call_fini(&call);
	return rc;
}

/* ---- raw sockets for the garbage tests ---- */

/* A raw TCP connection to @port; @rcvbuf > 0 sets its receive buffer
 * before connecting (so the window it offers stays that small). */
static int raw_connect_rcvbuf(int port, int rcvbuf)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timeval tv = { 3, 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

static int raw_connect(int port)
{
	return raw_connect_rcvbuf(port, 0);
}

static bool raw_send(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false; /* the server may already have closed */
		b += w;
		n -= (size_t)w;
	}
	return true;
}

static void raw_hdr(int fd, uint32_t magic, uint16_t version, uint16_t op,
		    uint32_t flags, uint32_t body_len, uint32_t bulk_len)
{
	struct nc_msg_hdr h = {
		.mh_magic = magic,
		.mh_version = version,
		.mh_opcode = op,
		.mh_flags = flags,
		.mh_reqid = 7,
		.mh_body_len = body_len,
		.mh_bulk_len = bulk_len,
	};
	uint8_t b[NC_HDR_LEN];

	nc_hdr_encode(&h, b);
	raw_send(fd, b, sizeof(b));
}

#define PROTO_VERSION (NC_PROTO_MAJOR << 8 | NC_PROTO_MINOR)

/* True when the server closes the connection (EOF or reset) in time. */
static bool raw_closed_by_server(int fd)
{
	uint8_t sink[4096];

	for (;;) {
		ssize_t n = recv(fd, sink, sizeof(sink), 0);

		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return true;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false; /* timed out: the server kept it open */
	}
}

/* Reads one reply with its bulk: body into @rb (at most @cap), bulk into
 * @bb (at most @bcap).  False on a transport failure or larger parts. */
static bool raw_reply_bulk(int fd, struct nc_msg_hdr *h, uint8_t *rb, size_t cap,
			   uint8_t *bb, size_t bcap)
{
	uint8_t hb[NC_HDR_LEN];
	struct { uint8_t *p; size_t n; } part[3] = {
		{ hb, NC_HDR_LEN }, { rb, 0 }, { bb, 0 },
	};

	for (int i = 0; i < 3; i++) {
		for (size_t got = 0; got < part[i].n;) {
			ssize_t n = recv(fd, part[i].p + got, part[i].n - got, 0);

			if (n <= 0)
				return false;
			got += (size_t)n;
		}
		if (i == 0) {
			if (nc_hdr_decode(hb, h) || h->mh_body_len > cap ||
			    h->mh_bulk_len > bcap)
				return false;
			part[1].n = h->mh_body_len;
			part[2].n = h->mh_bulk_len;
		}
	}
	return true;
}

/* Reads one reply without bulk: its header into @h and at most @cap body
 * bytes into @rb.  False on a transport failure, a larger body or a bulk. */
static bool raw_reply(int fd, struct nc_msg_hdr *h, uint8_t *rb, size_t cap)
{
	return raw_reply_bulk(fd, h, rb, cap, NULL, 0);
}

/* The role raw peers announce (the proofs cover it). */
#define RAW_ROLE NC_ROLE_TOOL

/* Sends CONNECT (protocol @major.0 in the body, the header at 1.0, filesystem
 * @fsname, @features, client nonce @nc) and reads the reply; returns its
 * wire status, or INT32_MIN on a transport failure. */
static int32_t raw_connect_msg(int fd, uint16_t major, const char *fsname,
			       uint64_t features, const uint8_t nc[NC_AUTH_NONCE_LEN],
			       struct nc_connect_rep *rep)
{
	struct nc_connect_req cr = { 0 };
	struct nc_msg_hdr h;
	uint8_t body[128], rb[256];
	struct nc_xdr x;

	cr.cr_major = major;
	cr.cr_minor = 0;
	cr.cr_role = RAW_ROLE;
	cr.cr_features = features;
	snprintf(cr.cr_fsname, sizeof(cr.cr_fsname), "%s", fsname);
	memcpy(cr.cr_nonce, nc, NC_AUTH_NONCE_LEN);
	nc_xdr_init_encode(&x, body, sizeof(body));
	nc_wire_connect_req(&x, &cr);
	raw_hdr(fd, NC_MSG_MAGIC, PROTO_VERSION, NC_OP_CONNECT, 0,
		(uint32_t)x.x_pos, 0);
	raw_send(fd, body, x.x_pos);
	if (!raw_reply(fd, &h, rb, sizeof(rb)))
		return INT32_MIN;
	if (rep && h.mh_status == NC_WS_OK) {
		nc_xdr_init_decode(&x, rb, h.mh_body_len);
		nc_wire_connect_rep(&x, rep);
		if (nc_xdr_finish(&x))
			return INT32_MIN;
	}
	return h.mh_status;
}

static const uint8_t raw_nonce[NC_AUTH_NONCE_LEN] = { 0x4e, 0x63, 1, 2, 3 };

static int32_t raw_handshake(int fd, uint16_t major, const char *fsname,
			     struct nc_connect_rep *rep)
{
	return raw_connect_msg(fd, major, fsname, NC_FEATURES_SUPPORTED, raw_nonce, rep);
}

/* Sends AUTH carrying @mac; returns the reply's wire status (INT32_MIN on a
 * transport failure) and, when OK, the server's proof in @server_mac. */
static int32_t raw_auth(int fd, const uint8_t mac[NC_AUTH_MAC_LEN],
			uint8_t server_mac[NC_AUTH_MAC_LEN])
{
	struct nc_auth_msg am;
	struct nc_msg_hdr h;
	uint8_t body[64], rb[64];
	struct nc_xdr x;

	memcpy(am.am_mac, mac, NC_AUTH_MAC_LEN);
	nc_xdr_init_encode(&x, body, sizeof(body));
	nc_wire_auth(&x, &am);
	raw_hdr(fd, NC_MSG_MAGIC, PROTO_VERSION, NC_OP_AUTH, 0, (uint32_t)x.x_pos, 0);
	raw_send(fd, body, x.x_pos);
	if (!raw_reply(fd, &h, rb, sizeof(rb)))
		return INT32_MIN;
	if (h.mh_opcode != NC_OP_AUTH)
		return INT32_MIN;
	if (h.mh_status == NC_WS_OK) {
		nc_xdr_init_decode(&x, rb, h.mh_body_len);
		nc_wire_auth(&x, &am);
		if (nc_xdr_finish(&x))
			return INT32_MIN;
		memcpy(server_mac, am.am_mac, NC_AUTH_MAC_LEN);
	}
	return h.mh_status;
}

/* CONNECT then AUTH with @key, as a real client does; the wire status of
 * the AUTH reply.  @rep receives the CONNECT reply, @mac our proof. */
static int32_t raw_login(int fd, const uint8_t *key, struct nc_connect_rep *rep,
			 uint8_t mac[NC_AUTH_MAC_LEN])
{
	uint8_t smac[NC_AUTH_MAC_LEN];
	int32_t st;

	st = raw_handshake(fd, NC_PROTO_MAJOR, FSNAME, rep);
	if (st != NC_WS_OK)
		return st;
	nc_auth_proof(key, false, raw_nonce, rep->cp_nonce, FSNAME, RAW_ROLE, mac);
	st = raw_auth(fd, mac, smac);
	/* Mutual: the server proves it holds the key too. */
	if (st == NC_WS_OK &&
	    !nc_auth_proof_is_valid(key, true, raw_nonce, rep->cp_nonce, FSNAME, RAW_ROLE,
				    smac))
		return INT32_MIN;
	return st;
}

/* Sends a request of @op with no body and returns the reply's status. */
static int32_t raw_request(int fd, uint16_t op)
{
	struct nc_msg_hdr h;
	uint8_t rb[64];

	raw_hdr(fd, NC_MSG_MAGIC, PROTO_VERSION, op, 0, 0, 0);
	if (!raw_reply(fd, &h, rb, sizeof(rb)) || h.mh_opcode != op)
		return INT32_MIN;
	return h.mh_status;
}

/* ---- tests ---- */

static void test_echo(void)
{
	struct tsrv t;
	struct nc_cconn *cc;
	struct nc_call call;
	uint8_t *bulk = malloc(MIB), *dst = malloc(MIB + 64), uuid[16];
	static const char body[] = "hello nacre";
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(bulk);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dst);
	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 2), 0);
	cc = client_new(t.ts_addr, FSNAME, 5000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	CU_ASSERT_STRING_EQUAL(nc_cconn_addr(cc), t.ts_addr);
	/* Lazy: nothing connects before the first call. */
	CU_ASSERT_FALSE(nc_cconn_is_connected(cc));

	fill_random(bulk, MIB, 42);
	memset(dst, 0xee, MIB + 64);
	nc_call_init(&call, OP_ECHO, body, sizeof(body));
	call.c_bulk = bulk;
	call.c_bulk_len = MIB;
	call.c_bulk_dst = dst;
	call.c_bulk_dst_cap = MIB;
	rc = nc_cconn_call(cc, &call);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_TRUE(call.c_sent);
	CU_ASSERT_EQUAL(call.c_rep_body_len, sizeof(body));
	if (call.c_rep_body_len == sizeof(body))
		CU_ASSERT_EQUAL(memcmp(call.c_rep_body, body, sizeof(body)), 0);
	CU_ASSERT_EQUAL(call.c_rep_bulk_len, MIB);
	CU_ASSERT_EQUAL(memcmp(dst, bulk, MIB), 0);
	/* Nothing lands past the capacity. */
	for (int i = 0; i < 64; i++)
		CU_ASSERT_EQUAL(dst[MIB + i], 0xee);
	nc_call_fini(&call);
	CU_ASSERT_PTR_NULL(call.c_rep_body);

	CU_ASSERT_TRUE(nc_cconn_is_connected(cc));
	nc_cconn_server_uuid(cc, uuid);
	CU_ASSERT_EQUAL(memcmp(uuid, srv_uuid, 16), 0);

	/* An empty request gets an empty reply. */
	nc_call_init(&call, OP_ECHO, NULL, 0);
	CU_ASSERT_EQUAL(nc_cconn_call(cc, &call), 0);
	CU_ASSERT_EQUAL(call.c_rep_body_len, 0);
	CU_ASSERT_EQUAL(call.c_rep_bulk_len, 0);
	nc_call_fini(&call);

	/* PING is answered by the framework itself. */
	nc_call_init(&call, NC_OP_PING, NULL, 0);
	CU_ASSERT_EQUAL(nc_cconn_call(cc, &call), 0);
	nc_call_fini(&call);

	nc_cconn_free(cc);
	tsrv_stop(&t);
	free(dst);
	free(bulk);
}

#define ASYNC_CALLS 200

struct acall {
	struct nc_call a_call;
	uint8_t a_body[2048];
	uint32_t a_len;
	uint8_t a_bulk[4096];
	uint8_t a_dst[4096];
	uint32_t a_bulk_len;
	bool a_has_bulk;
};

static atomic_int done_cb_count;

static void count_done(struct nc_call *call)
{
	/* Runs before the wait is signalled, on the receive thread. */
	if (call->c_priv)
		atomic_fetch_add(&done_cb_count, 1);
}

static void test_async_many(void)
{
	struct tsrv t;
	struct nc_cconn *cc;
	struct nc_wait w;
	struct acall *ac = calloc(ASYNC_CALLS, sizeof(*ac));
	int submitted = 0, bad = 0, ncb = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ac);
	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 4), 0);
	cc = client_new(t.ts_addr, FSNAME, 10000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	atomic_store(&done_cb_count, 0);
	nc_wait_init(&w);
	for (int i = 0; i < ASYNC_CALLS; i++) {
		struct acall *a = &ac[i];

		a->a_len = 8 + (uint32_t)(rng_next() % (sizeof(a->a_body) - 8));
		fill_random(a->a_body, a->a_len, (uint64_t)i + 1000);
		/* The call number in front: replies are matched by content. */
		memcpy(a->a_body, &i, sizeof(i));
		nc_call_init(&a->a_call, OP_ECHO, a->a_body, a->a_len);
		a->a_call.c_wait = &w;
		if (i % 4 == 0) {
			/* Bulks from 1 byte to 4 KiB: the receiving end reads
			 * small ones through its buffer and the rest straight
			 * into a_dst, and a reply's bulk may start in either. */
			a->a_has_bulk = true;
			a->a_bulk_len = 1 + (uint32_t)(rng_next() % sizeof(a->a_bulk));
			fill_random(a->a_bulk, a->a_bulk_len, (uint64_t)i + 5000);
			a->a_call.c_bulk = a->a_bulk;
			a->a_call.c_bulk_len = a->a_bulk_len;
			a->a_call.c_bulk_dst = a->a_dst;
			a->a_call.c_bulk_dst_cap = sizeof(a->a_dst);
		}
		if (i % 2) {
			a->a_call.c_done = count_done;
			a->a_call.c_priv = a;
			ncb++;
		}
		if (nc_cconn_submit(cc, &a->a_call) == 0)
			submitted++;
	}
	CU_ASSERT_EQUAL(submitted, ASYNC_CALLS);
	CU_ASSERT_EQUAL(wait_bounded(&w, 15000), 0);
	for (int i = 0; i < ASYNC_CALLS; i++) {
		struct acall *a = &ac[i];
		struct nc_call *c = &a->a_call;

		if (c->c_status || c->c_rep_body_len != a->a_len ||
		    memcmp(c->c_rep_body, a->a_body, a->a_len))
			bad++;
		else if (a->a_has_bulk && (c->c_rep_bulk_len != a->a_bulk_len ||
					   memcmp(a->a_dst, a->a_bulk, a->a_bulk_len)))
			bad++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(atomic_load(&done_cb_count), ncb);
	nc_cconn_free(cc);
	for (int i = 0; i < ASYNC_CALLS; i++)
		nc_call_fini(&ac[i].a_call);
	nc_wait_fini(&w);
	tsrv_stop(&t);
	free(ac);
}

#define THREADS 8
#define CALLS_PER_THREAD 200

struct worker {
	struct nc_cconn *wk_cc;
	int wk_id;
	int wk_bad;
	pthread_t wk_thread;
};

static void *sync_worker(void *arg)
{
	struct worker *wk = arg;
	uint8_t body[512];

	for (int i = 0; i < CALLS_PER_THREAD; i++) {
		uint32_t len = 16 + (uint32_t)((wk->wk_id * 131 + i * 17) % (sizeof(body) - 16));

		fill_random(body, len, (uint64_t)wk->wk_id << 32 | (uint64_t)i);
		snprintf((char *)body, 16, "t%d-c%d", wk->wk_id, i);
		if (echo_check(wk->wk_cc, body, len))
			wk->wk_bad++;
	}
	return NULL;
}

static void test_threads(void)
{
	struct tsrv t;
	struct nc_cconn *cc;
	struct worker wk[THREADS];
	int bad = 0, started = 0;

	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 4), 0);
	cc = client_new(t.ts_addr, FSNAME, 10000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	for (int i = 0; i < THREADS; i++) {
		wk[i].wk_cc = cc;
		wk[i].wk_id = i;
		wk[i].wk_bad = 0;
		if (pthread_create(&wk[i].wk_thread, NULL, sync_worker, &wk[i]))
			break;
		started++;
	}
	CU_ASSERT_EQUAL(started, THREADS);
	for (int i = 0; i < started; i++) {
		pthread_join(wk[i].wk_thread, NULL);
		bad += wk[i].wk_bad;
	}
	CU_ASSERT_EQUAL(bad, 0);
	nc_cconn_free(cc);
	tsrv_stop(&t);
}

static void test_error_status(void)
{
	static const struct {
		int sent, got;
	} cases[] = {
		{ -ENOENT, -ENOENT },
		{ -EEXIST, -EEXIST },
		{ -ENOTEMPTY, -ENOTEMPTY },
		{ -EACCES, -EACCES },
		{ -ESTALE, -ESTALE },
		{ -ENOSPC, -ENOSPC },
		{ -NC_E_LAYOUT, -NC_E_LAYOUT },
		{ -NC_E_NOOST, -NC_E_NOOST },
		/* Errors without a wire status arrive as -EIO. */
		{ -EDOM, -EIO },
		{ -NC_E_CONFIG, -EIO },
	};
	struct tsrv t;
	struct nc_cconn *cc;
	struct nc_call call;

	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 2), 0);
	cc = client_new(t.ts_addr, FSNAME, 5000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t le = htole32((uint32_t)cases[i].sent);

		nc_call_init(&call, OP_ERR, &le, sizeof(le));
		CU_ASSERT_EQUAL(nc_cconn_call(cc, &call), cases[i].got);
		CU_ASSERT_EQUAL(call.c_status, cases[i].got);
		/* An error reply carries no body. */
		CU_ASSERT_EQUAL(call.c_rep_body_len, 0);
		nc_call_fini(&call);
	}
	/* An opcode the server does not know: -ENOSYS, connection kept. */
	nc_call_init(&call, 999, NULL, 0);
	CU_ASSERT_EQUAL(nc_cconn_call(cc, &call), -ENOSYS);
	nc_call_fini(&call);
	/* A known opcode the handler refuses. */
	nc_call_init(&call, NC_OP_RENAME, NULL, 0);
	CU_ASSERT_EQUAL(nc_cconn_call(cc, &call), -EOPNOTSUPP);
	nc_call_fini(&call);
	CU_ASSERT_EQUAL(echo_check(cc, "still fine", 10), 0);
	/* Bodies and bulks past the protocol limits are refused locally. */
	nc_call_init(&call, OP_ECHO, "x", NC_MAX_BODY + 1);
	CU_ASSERT_EQUAL(nc_cconn_submit(cc, &call), -EINVAL);
	nc_call_init(&call, OP_ECHO, NULL, 0);
	call.c_bulk = "x";
	call.c_bulk_len = NC_MAX_BULK + 1;
	CU_ASSERT_EQUAL(nc_cconn_submit(cc, &call), -EINVAL);
	nc_cconn_free(cc);
	tsrv_stop(&t);
}

static void test_bulk_too_big(void)
{
	struct tsrv t;
	struct nc_cconn *cc;
	struct nc_call call;
	uint8_t bulk[8192], dst[4096 + 64], dst2[8192];
	int rc;

	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 2), 0);
	cc = client_new(t.ts_addr, FSNAME, 5000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	fill_random(bulk, sizeof(bulk), 7);

	/* The reply's bulk (8 KiB) is larger than the room given (4 KiB). */
	memset(dst, 0xee, sizeof(dst));
	nc_call_init(&call, OP_ECHO, "big", 3);
	call.c_bulk = bulk;
	call.c_bulk_len = sizeof(bulk);
	call.c_bulk_dst = dst;
	call.c_bulk_dst_cap = 4096;
	rc = nc_cconn_call(cc, &call);
	CU_ASSERT(rc < 0);
	for (size_t i = 4096; i < sizeof(dst); i++)
		CU_ASSERT_EQUAL(dst[i], 0xee);
	nc_call_fini(&call);

	/* A reply bulk with no destination at all. */
	nc_call_init(&call, OP_ECHO, "nodst", 5);
	call.c_bulk = bulk;
	call.c_bulk_len = 16;
	rc = nc_cconn_call(cc, &call);
	CU_ASSERT(rc < 0);
	nc_call_fini(&call);

	/* The next calls work (on this connection or a new one). */
	CU_ASSERT_EQUAL(echo_check(cc, "after", 5), 0);
	nc_call_init(&call, OP_ECHO, "fits", 4);
	call.c_bulk = bulk;
	call.c_bulk_len = sizeof(bulk);
	call.c_bulk_dst = dst2;
	call.c_bulk_dst_cap = sizeof(dst2);
	CU_ASSERT_EQUAL(nc_cconn_call(cc, &call), 0);
	CU_ASSERT_EQUAL(call.c_rep_bulk_len, sizeof(bulk));
	CU_ASSERT_EQUAL(memcmp(dst2, bulk, sizeof(bulk)), 0);
	nc_call_fini(&call);
	nc_cconn_free(cc);
	tsrv_stop(&t);
}

static void test_wrong_fsname(void)
{
	struct tsrv t;
	struct nc_cconn *cc;
	struct nc_call call;
	int64_t t0, el;
	int rc;

	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 2), 0);
	cc = client_new(t.ts_addr, "otherfs", 5000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	t0 = now_ms();
	nc_call_init(&call, NC_OP_PING, NULL, 0);
	rc = nc_cconn_call(cc, &call);
	el = now_ms() - t0;
	nc_call_fini(&call);
	CU_ASSERT_EQUAL(rc, -NC_E_FSNAME);
	/* A refused handshake is final: no retrying up to co_retry_ms. */
	if (el >= 1000)
		fprintf(stderr, "  wrong fsname took %lld ms\n", (long long)el);
	CU_ASSERT(el < 1000);
	CU_ASSERT_FALSE(nc_cconn_is_connected(cc));
	nc_call_init(&call, NC_OP_PING, NULL, 0);
	CU_ASSERT_EQUAL(nc_cconn_submit(cc, &call), -NC_E_FSNAME);
	nc_cconn_free(cc);

	/* The right name on the same server still works. */
	cc = client_new(t.ts_addr, FSNAME, 5000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	CU_ASSERT_EQUAL(echo_check(cc, "ok", 2), 0);
	nc_cconn_free(cc);
	tsrv_stop(&t);
}

static void test_timeout(void)
{
	struct tsrv t;
	struct nc_cconn *cc;
	int64_t t0, el;
	int rc;

	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 4), 0);
	cc = client_new(t.ts_addr, FSNAME, 5000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	CU_ASSERT_EQUAL(echo_check(cc, "warm", 4), 0);

	t0 = now_ms();
	rc = call_u32(cc, OP_SLEEP, 1500, 200);
	el = now_ms() - t0;
	CU_ASSERT_EQUAL(rc, -ETIMEDOUT);
	/* It gave up on its own deadline, well before the late reply. */
	CU_ASSERT(el >= 200);
	CU_ASSERT(el < 1500);

	/* Later calls work, before and after the late reply comes and is
	 * dropped (it must not be taken for theirs). */
	CU_ASSERT_EQUAL(echo_check(cc, "next", 4), 0);
	el = now_ms() - t0;
	if (el < 1800)
		sleep_ms((int)(1800 - el));
	CU_ASSERT_EQUAL(echo_check(cc, "after late reply", 16), 0);
	CU_ASSERT_EQUAL(call_u32(cc, OP_SLEEP, 10, 2000), 0);
	nc_cconn_free(cc);
	tsrv_stop(&t);
}

static void test_server_restart(void)
{
	struct tsrv t, t2;
	struct nc_cconn *cc;
	struct nc_call call;
	struct nc_wait w;
	int port, rc;

	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 2), 0);
	port = t.ts_port;
	cc = client_new(t.ts_addr, FSNAME, 10000, 3000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	CU_ASSERT_EQUAL(echo_check(cc, "before", 6), 0);

	/* A call the server holds when it stops. */
	nc_wait_init(&w);
	nc_call_init(&call, OP_HOLD, "held", 4);
	call.c_wait = &w;
	CU_ASSERT_EQUAL_FATAL(nc_cconn_submit(cc, &call), 0);
	CU_ASSERT_EQUAL(tsrv_wait_held(&t, 1, 3000), 1);
	nc_server_stop(t.ts_srv);
	/* The server closed a handshaken connection: the callback ran. */
	CU_ASSERT_EQUAL(atomic_load(&t.ts_closed), 1);
	CU_ASSERT_EQUAL(atomic_load(&t.ts_closed_bad), 0);
	tsrv_stop(&t);
	rc = wait_bounded(&w, 5000);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(call.c_status, -ENOTCONN);
	CU_ASSERT_TRUE(call.c_sent);
	CU_ASSERT_FALSE(nc_cconn_is_connected(cc));
	if (rc == 0) {
		nc_call_fini(&call);
		nc_wait_fini(&w);
	}

	/* Restarted on the same port: the same connection object reconnects. */
	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t2, port, 2), 0);
	CU_ASSERT_EQUAL(t2.ts_port, port);
	CU_ASSERT_EQUAL(echo_check(cc, "after restart", 13), 0);
	CU_ASSERT_TRUE(nc_cconn_is_connected(cc));
	nc_cconn_free(cc);
	tsrv_stop(&t2);
}

/*
 * A burst of requests in one write, as a data loader's client sends them:
 * the server takes several per recv(2) through its per-connection buffer
 * (16 KiB).  Bodies of many lengths, bulks from none to 70,000 bytes
 * (around half the buffer, where reads go straight to the request), and
 * the last request split across two writes with a pause between: every
 * reply carries exactly what its request did.
 */
#define BURST_N 40
#define BURST_BULK_MAX 70000

static void test_burst(void)
{
	static const uint32_t bulks[] = { 0, 1, 8191, 8192, 16384, BURST_BULK_MAX };
	uint32_t blen[BURST_N], klen[BURST_N];
	size_t body_at[BURST_N];        /* where each request's body starts */
	uint8_t mac[NC_AUTH_MAC_LEN], rb[512], *msg, *rk;
	struct nc_connect_rep rep;
	size_t total = 0, at = 0;
	bool seen[BURST_N] = { false };
	int fd, good = 0;
	struct tsrv t;

	if (!xp_is_tcp()) {
		fprintf(stderr, "  (raw TCP bytes: skipped over %s)\n", xp_scheme);
		return;
	}
	for (int i = 0; i < BURST_N; i++) {
		blen[i] = 4 + (uint32_t)(i * 53 % 400);
		klen[i] = i % 3 ? 0 : bulks[i / 3 % (sizeof(bulks) / sizeof(bulks[0]))];
		total += NC_HDR_LEN + blen[i] + klen[i];
	}
	msg = malloc(total);
	rk = malloc(BURST_BULK_MAX);
	CU_ASSERT_FATAL(msg && rk);
	for (int i = 0; i < BURST_N; i++) {
		struct nc_msg_hdr h = {
			.mh_magic = NC_MSG_MAGIC,
			.mh_version = PROTO_VERSION,
			.mh_opcode = OP_ECHO,
			.mh_reqid = 100 + (uint64_t)i,
			.mh_body_len = blen[i],
			.mh_bulk_len = klen[i],
		};

		nc_hdr_encode(&h, msg + at);
		at += NC_HDR_LEN;
		body_at[i] = at;
		fill_random(msg + at, blen[i] + klen[i], (uint64_t)i + 77);
		at += blen[i] + klen[i];
	}
	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 4), 0);
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(raw_login(fd, test_key, &rep, mac), NC_WS_OK);
	CU_ASSERT_TRUE(raw_send(fd, msg, total - 10));
	sleep_ms(50);
	CU_ASSERT_TRUE(raw_send(fd, msg + total - 10, 10));
	/* Replies come in any order: each is matched by its request id. */
	for (int n = 0; n < BURST_N; n++) {
		struct nc_msg_hdr h;
		int i;

		if (!raw_reply_bulk(fd, &h, rb, sizeof(rb), rk, BURST_BULK_MAX))
			break;
		i = (int)(h.mh_reqid - 100);
		if (h.mh_reqid < 100 || i >= BURST_N || seen[i] || h.mh_status)
			continue;
		seen[i] = true;
		if (h.mh_body_len == blen[i] && h.mh_bulk_len == klen[i] &&
		    !memcmp(rb, msg + body_at[i], blen[i]) &&
		    !memcmp(rk, msg + body_at[i] + blen[i], klen[i]))
			good++;
	}
	CU_ASSERT_EQUAL(good, BURST_N);
	close(fd);
	tsrv_stop(&t);
	free(msg);
	free(rk);
}

static void test_garbage(void)
{
	struct tsrv t;
	struct nc_cconn *cc;
	struct nc_connect_rep rep;
	uint8_t junk[4096], mac[NC_AUTH_MAC_LEN];
	int fd;

	if (!xp_is_tcp()) {
		fprintf(stderr, "  (raw TCP bytes: skipped over %s)\n", xp_scheme);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 2), 0);

	/* Random bytes. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	fill_random(junk, sizeof(junk), 99);
	raw_send(fd, junk, sizeof(junk));
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* A header with a bad magic. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	raw_hdr(fd, 0x12345678, PROTO_VERSION, NC_OP_CONNECT, 0, 0, 0);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* A header announcing a 1 GiB body. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	raw_hdr(fd, NC_MSG_MAGIC, PROTO_VERSION, NC_OP_CONNECT, 0, 1u << 30, 0);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* A header announcing a bulk past NC_MAX_BULK. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	raw_hdr(fd, NC_MSG_MAGIC, PROTO_VERSION, OP_ECHO, 0, 0, NC_MAX_BULK + 1);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* A request before CONNECT. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	raw_hdr(fd, NC_MSG_MAGIC, PROTO_VERSION, OP_ECHO, 0, 4, 0);
	raw_send(fd, "abcd", 4);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* A PING before CONNECT is no exception. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	raw_hdr(fd, NC_MSG_MAGIC, PROTO_VERSION, NC_OP_PING, 0, 0, 0);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* A CONNECT whose body does not decode. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	raw_hdr(fd, NC_MSG_MAGIC, PROTO_VERSION, NC_OP_CONNECT, 0, 3, 0);
	raw_send(fd, "\x01\x00\x00", 3);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* A reply where a request belongs. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	raw_hdr(fd, NC_MSG_MAGIC, PROTO_VERSION, NC_OP_CONNECT, NC_MF_REPLY, 0, 0);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* A header of another protocol major: closed (its layout may differ). */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	raw_hdr(fd, NC_MSG_MAGIC, (NC_PROTO_MAJOR + 1) << 8, NC_OP_CONNECT, 0, 0, 0);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* CONNECT asking for another major: refused with VERSION, then closed. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_handshake(fd, NC_PROTO_MAJOR + 1, FSNAME, NULL), NC_WS_VERSION);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* Another filesystem: refused with FSNAME, then closed. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_handshake(fd, NC_PROTO_MAJOR, "nosuchfs", NULL), NC_WS_FSNAME);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* A truncated header, then the peer goes away. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	raw_send(fd, "MRCN\x00\x01", 6);
	shutdown(fd, SHUT_WR);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* A truncated body, then the peer goes away. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	raw_hdr(fd, NC_MSG_MAGIC, PROTO_VERSION, NC_OP_CONNECT, 0, 100, 0);
	raw_send(fd, junk, 10);
	shutdown(fd, SHUT_WR);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* The server still serves a normal client... */
	cc = client_new(t.ts_addr, FSNAME, 5000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	CU_ASSERT_EQUAL(echo_check(cc, "still serving", 13), 0);
	/* ...and none of the connections above had authenticated, so the closed
	 * callback never ran.  (The I/O thread closed them all before it took
	 * this client's CONNECT.) */
	CU_ASSERT_EQUAL(atomic_load(&t.ts_closed), 0);

	/* An authenticated peer that then sends garbage: closed, callback
	 * runs. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	memset(&rep, 0, sizeof(rep));
	CU_ASSERT_EQUAL(raw_login(fd, test_key, &rep, mac), NC_WS_OK);
	CU_ASSERT_EQUAL(rep.cp_major, NC_PROTO_MAJOR);
	CU_ASSERT_EQUAL(rep.cp_role, NC_ROLE_MDS);
	/* This server does not rebuild replies, so it offers the rest. */
	CU_ASSERT_EQUAL(rep.cp_features, NC_FEATURES_SUPPORTED & ~NC_FEAT_REPLAY);
	CU_ASSERT_EQUAL(memcmp(rep.cp_uuid, srv_uuid, 16), 0);
	raw_send(fd, junk, 64);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);
	CU_ASSERT_TRUE(wait_closed(&t, 1, 2000));
	CU_ASSERT_EQUAL(atomic_load(&t.ts_closed), 1);

	/* The normal client disconnects: callback runs once more. */
	CU_ASSERT_EQUAL(echo_check(cc, "bye", 3), 0);
	nc_cconn_free(cc);
	CU_ASSERT_TRUE(wait_closed(&t, 2, 2000));
	sleep_ms(50);
	CU_ASSERT_EQUAL(atomic_load(&t.ts_closed), 2);
	CU_ASSERT_EQUAL(atomic_load(&t.ts_closed_bad), 0);
	tsrv_stop(&t);
}

/*
 * Backpressure: with every request held, the server takes no more than
 * NC_SRV_MAX_INFLIGHT from one connection and stops reading it; once the
 * held ones are answered it reads on and every call completes.
 */
static void backpressure_run(int ncalls, bool with_body)
{
	struct tsrv t;
	struct nc_cconn *cc;
	struct nc_wait w;
	struct nc_call *calls = calloc((size_t)ncalls, sizeof(*calls));
	char (*bodies)[16] = calloc((size_t)ncalls, sizeof(*bodies));
	int submitted = 0, held, bad = 0, rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(calls);
	CU_ASSERT_PTR_NOT_NULL_FATAL(bodies);
	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 4), 0);
	cc = client_new(t.ts_addr, FSNAME, 10000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	CU_ASSERT_EQUAL(echo_check(cc, "warm", 4), 0);
	nc_wait_init(&w);
	for (int i = 0; i < ncalls; i++) {
		snprintf(bodies[i], sizeof(bodies[i]), "bp-%d", i);
		if (with_body)
			nc_call_init(&calls[i], OP_HOLD, bodies[i],
				     (uint32_t)strlen(bodies[i]));
		else
			nc_call_init(&calls[i], OP_HOLD, NULL, 0);
		/* Long enough for the test, short enough to end a stuck call. */
		calls[i].c_timeout_ms = 4000;
		calls[i].c_wait = &w;
		if (nc_cconn_submit(cc, &calls[i]) == 0)
			submitted++;
	}
	CU_ASSERT_EQUAL(submitted, ncalls);
	held = tsrv_wait_held(&t, NC_SRV_MAX_INFLIGHT, 3000);
	sleep_ms(200);
	held = tsrv_nheld(&t);
	CU_ASSERT_EQUAL(held, NC_SRV_MAX_INFLIGHT);
	tsrv_release(&t);
	rc = wait_bounded(&w, 8000);
	CU_ASSERT_EQUAL(rc, 0);
	for (int i = 0; i < ncalls; i++) {
		struct nc_call *c = &calls[i];
		uint32_t len = with_body ? (uint32_t)strlen(bodies[i]) : 0;

		if (c->c_status || c->c_rep_body_len != len ||
		    (len && memcmp(c->c_rep_body, bodies[i], len))) {
			if (bad++ < 3)
				fprintf(stderr, "  call %d of %d: status %d (%s)\n", i,
					ncalls, c->c_status, nc_strerror(c->c_status));
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	/* The connection still works afterwards. */
	CU_ASSERT_EQUAL(echo_check(cc, "after", 5), 0);
	nc_cconn_free(cc);
	if (rc == 0 || wait_bounded(&w, 1000) == 0) {
		for (int i = 0; i < ncalls; i++)
			nc_call_fini(&calls[i]);
		nc_wait_fini(&w);
		free(calls);
	}
	tsrv_stop(&t);
	free(bodies);
}

static void test_backpressure(void)
{
	/* A submit blocks once the transport holds all it may for a server
	 * that stopped reading: a socket buffer takes many small requests,
	 * RDMA's receive credits (XP_RDMA_DEPTH) fewer. */
	backpressure_run(NC_SRV_MAX_INFLIGHT + (xp_is_tcp() ? 2 * NC_SRV_MAX_INFLIGHT : 16),
			 true);
}

/* The request that meets the limit is the last one on the wire and has no
 * body: nothing is left in the socket to wake the reader again. */
static void test_backpressure_last_empty(void)
{
	backpressure_run(NC_SRV_MAX_INFLIGHT + 1, false);
}

static void test_free_pending(void)
{
	struct tsrv t;
	struct nc_cconn *cc;
	struct nc_call calls[5];
	struct nc_wait w;
	int submitted = 0;

	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 2), 0);
	cc = client_new(t.ts_addr, FSNAME, 10000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	nc_wait_init(&w);
	for (int i = 0; i < 5; i++) {
		nc_call_init(&calls[i], OP_HOLD, "p", 1);
		calls[i].c_wait = &w;
		if (nc_cconn_submit(cc, &calls[i]) == 0)
			submitted++;
	}
	CU_ASSERT_EQUAL(submitted, 5);
	CU_ASSERT_EQUAL(tsrv_wait_held(&t, 5, 3000), 5);
	nc_cconn_free(cc);
	/* Every pending call completed, once, before free returned. */
	pthread_mutex_lock(&w.w_lock);
	CU_ASSERT_EQUAL(w.w_pending, 0);
	pthread_mutex_unlock(&w.w_lock);
	for (int i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(calls[i].c_status, -ECANCELED);
		nc_call_fini(&calls[i]);
	}
	nc_wait_fini(&w);
	/* Replies to the gone client fail quietly on the server side. */
	tsrv_release(&t);
	CU_ASSERT_TRUE(wait_closed(&t, 1, 2000));
	tsrv_stop(&t);
	nc_cconn_free(NULL);
}

/* A port nothing listens on (bound, then closed). */
static int dead_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static void test_unreachable(void)
{
	struct nc_cconn *cc;
	struct nc_call call;
	char addr[64];
	int64_t t0, el;
	int port = dead_port(), rc;

	CU_ASSERT_FATAL(port > 0);
	snprintf(addr, sizeof(addr), "%s://%s:%d", xp_scheme, xp_host, port);
	cc = client_new(addr, FSNAME, 2000, 400);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	/* One attempt for submit... */
	nc_call_init(&call, NC_OP_PING, NULL, 0);
	CU_ASSERT_EQUAL(nc_cconn_submit(cc, &call), -ECONNREFUSED);
	/* ...retries for call, up to co_retry_ms and not much longer. */
	t0 = now_ms();
	rc = nc_cconn_call(cc, &call);
	el = now_ms() - t0;
	CU_ASSERT_EQUAL(rc, -ECONNREFUSED);
	CU_ASSERT(el >= 200);
	CU_ASSERT(el < 2000);
	nc_call_fini(&call);
	nc_cconn_free(cc);

	/* Bad arguments. */
	CU_ASSERT_EQUAL(nc_cconn_new("garbage", FSNAME, NULL, &cc), -NC_E_ADDR);
	CU_ASSERT_EQUAL(nc_cconn_new("sctp://127.0.0.1:1", FSNAME, NULL, &cc),
			-EPROTONOSUPPORT);
	CU_ASSERT_EQUAL(nc_cconn_new(addr, "a-filesystem-name-far-too-long-for-it",
				     NULL, &cc), -EINVAL);
}

/*
 * A list of addresses for one server: the first that answers is used, RDMA
 * ones first whatever the order given, and a dead address does not stop
 * the others.
 */
static void test_addr_list(void)
{
	struct tsrv t;
	struct nc_cconn *cc;
	char list[NC_ADDR_MAX + 1];
	int dead = dead_port();

	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 2), 0);
	/* A dead address first, then the live one. */
	snprintf(list, sizeof(list), "%s://%s:%d,%s", xp_scheme, xp_host, dead, t.ts_addr);
	cc = client_new(list, FSNAME, 5000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	CU_ASSERT_PTR_NULL(nc_cconn_xprt_name(cc));
	CU_ASSERT_EQUAL(echo_check(cc, "list", 4), 0);
	CU_ASSERT_STRING_EQUAL(nc_cconn_xprt_name(cc), xp_scheme);
	CU_ASSERT_STRING_EQUAL(nc_cconn_addr(cc), list);
	nc_cconn_free(cc);
	/* An RDMA address listed after a TCP one is still tried first: on a
	 * host without RDMA it fails and TCP serves. */
	if (xp_is_tcp()) {
		snprintf(list, sizeof(list), "%s,rdma://127.0.0.1:%d", t.ts_addr, dead);
		cc = client_new(list, FSNAME, 5000, 2000);
		CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
		CU_ASSERT_EQUAL(echo_check(cc, "tcp", 3), 0);
		CU_ASSERT_STRING_EQUAL(nc_cconn_xprt_name(cc), "tcp");
		nc_cconn_free(cc);
	}
	/* Lists that name nothing usable. */
	CU_ASSERT_EQUAL(nc_cconn_new("sctp://127.0.0.1:1,udp://127.0.0.1:2", FSNAME, NULL, &cc),
			-EPROTONOSUPPORT);
	CU_ASSERT_EQUAL(nc_cconn_new(",,", FSNAME, NULL, &cc), -NC_E_ADDR);
	CU_ASSERT_EQUAL(nc_cconn_new("tcp://127.0.0.1:1,garbage", FSNAME, NULL, &cc),
			-NC_E_ADDR);
	tsrv_stop(&t);
}

/* A server that listened but never started releases its port when freed. */
/*
 * A client with the wrong cluster key gets -NC_E_AUTH at once (the refusal
 * is final, not retried for co_retry_ms); the server goes on serving
 * clients with the right key.
 */
static void test_auth_wrong_key(void)
{
	struct tsrv t;
	struct nc_cconn *cc;
	struct nc_call call;
	int64_t t0, el;
	int rc;

	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 2), 0);
	cc = client_new_key(t.ts_addr, FSNAME, 5000, 10000, wrong_key);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	t0 = now_ms();
	nc_call_init(&call, OP_ECHO, "x", 1);
	rc = nc_cconn_call(cc, &call);
	el = now_ms() - t0;
	nc_call_fini(&call);
	CU_ASSERT_EQUAL(rc, -NC_E_AUTH);
	CU_ASSERT_STRING_EQUAL(nc_strerror(rc),
			       "authentication failed: wrong or missing cluster key");
	if (el >= 2000)
		fprintf(stderr, "  wrong key took %lld ms\n", (long long)el);
	CU_ASSERT(el < 2000);
	CU_ASSERT_FALSE(nc_cconn_is_connected(cc));
	/* Again: refused again, the server still up. */
	CU_ASSERT_EQUAL(echo_check(cc, "x", 1), -NC_E_AUTH);
	nc_cconn_free(cc);

	cc = client_new(t.ts_addr, FSNAME, 5000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	CU_ASSERT_EQUAL(echo_check(cc, "right key", 9), 0);
	nc_cconn_free(cc);
	/* Only the authenticated connection reached the closed callback. */
	CU_ASSERT_TRUE(wait_closed(&t, 1, 2000));
	sleep_ms(50);
	CU_ASSERT_EQUAL(atomic_load(&t.ts_closed), 1);

	/* No client connection without a key. */
	CU_ASSERT_PTR_NULL(client_new_key(t.ts_addr, FSNAME, 5000, 2000, NULL));
	tsrv_stop(&t);
}

/*
 * The server side of the handshake, byte by byte: nothing is served before
 * AUTH, a wrong proof and a replayed proof are refused with the AUTH
 * status and the connection closed; the server stays up.
 */
static void test_auth_raw(void)
{
	uint8_t mac[NC_AUTH_MAC_LEN], mac1[NC_AUTH_MAC_LEN], smac[NC_AUTH_MAC_LEN];
	struct nc_connect_rep rep, rep1;
	struct nc_cconn *cc;
	struct tsrv t;
	int fd;

	if (!xp_is_tcp()) {
		fprintf(stderr, "  (raw TCP bytes: skipped over %s)\n", xp_scheme);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 2), 0);

	/* (1) PING, or a request for the handler, after CONNECT but before
	 * AUTH: an AUTH error reply, then the connection closes. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_handshake(fd, NC_PROTO_MAJOR, FSNAME, &rep), NC_WS_OK);
	CU_ASSERT(rep.cp_features & NC_FEAT_AUTH);
	CU_ASSERT_EQUAL(raw_request(fd, NC_OP_PING), NC_WS_AUTH);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_handshake(fd, NC_PROTO_MAJOR, FSNAME, &rep), NC_WS_OK);
	CU_ASSERT_EQUAL(raw_request(fd, OP_ECHO), NC_WS_AUTH);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);
	/* ...and before CONNECT too. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_request(fd, NC_OP_LOOKUP), NC_WS_AUTH);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* (2) A proof made with the wrong key. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_login(fd, wrong_key, &rep, mac), NC_WS_AUTH);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);
	/* A proof of zeros, and AUTH before CONNECT. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_handshake(fd, NC_PROTO_MAJOR, FSNAME, &rep), NC_WS_OK);
	memset(mac, 0, sizeof(mac));
	CU_ASSERT_EQUAL(raw_auth(fd, mac, smac), NC_WS_AUTH);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_auth(fd, mac, smac), NC_WS_AUTH);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);
	/* A CONNECT without the authentication feature. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_connect_msg(fd, NC_PROTO_MAJOR, FSNAME, NC_FEAT_BULK_SPLIT,
					raw_nonce, NULL), NC_WS_AUTH);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* (3) Replay: connection 1 authenticates and is served; its proof,
	 * sent again on connection 2 with the same client nonce, is refused
	 * because the server's nonce differs. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_login(fd, test_key, &rep1, mac1), NC_WS_OK);
	CU_ASSERT_EQUAL(raw_request(fd, NC_OP_PING), NC_WS_OK);
	/* A second AUTH on an authenticated connection is refused too. */
	CU_ASSERT_EQUAL(raw_auth(fd, mac1, smac), NC_WS_AUTH);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_handshake(fd, NC_PROTO_MAJOR, FSNAME, &rep), NC_WS_OK);
	CU_ASSERT_NOT_EQUAL(memcmp(rep.cp_nonce, rep1.cp_nonce, NC_AUTH_NONCE_LEN), 0);
	CU_ASSERT_EQUAL(raw_auth(fd, mac1, smac), NC_WS_AUTH);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);
	/* A second CONNECT (new nonces on an open connection) is refused. */
	fd = raw_connect(t.ts_port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_handshake(fd, NC_PROTO_MAJOR, FSNAME, &rep), NC_WS_OK);
	CU_ASSERT_EQUAL(raw_handshake(fd, NC_PROTO_MAJOR, FSNAME, &rep), NC_WS_AUTH);
	CU_ASSERT_TRUE(raw_closed_by_server(fd));
	close(fd);

	/* The server is up and serves a client with the key. */
	cc = client_new(t.ts_addr, FSNAME, 5000, 2000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	CU_ASSERT_EQUAL(echo_check(cc, "still here", 10), 0);
	nc_cconn_free(cc);
	tsrv_stop(&t);
}

/* An authenticated peer that sends PINGs and never reads the replies: once
 * its socket is full, the server must still serve another client (the I/O
 * thread must not wait on that socket). */
static void test_unread_replies(void)
{
	static const int batch = 20000;
	uint8_t mac[NC_AUTH_MAC_LEN], *buf = malloc((size_t)batch * NC_HDR_LEN);
	struct timeval tv = { 2, 0 };
	struct nc_connect_rep rep;
	int small = 4096, fd, sent = 0;
	struct nc_cconn *cc;
	struct tsrv t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	if (strcmp(xp_scheme, "tcp")) {
		free(buf);
		return; /* the raw peer speaks TCP */
	}
	for (int i = 0; i < batch; i++) {
		struct nc_msg_hdr h = {
			.mh_magic = NC_MSG_MAGIC,
			.mh_version = PROTO_VERSION,
			.mh_opcode = NC_OP_PING,
			.mh_reqid = (uint64_t)i + 100,
		};

		nc_hdr_encode(&h, buf + (size_t)i * NC_HDR_LEN);
	}
	CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 4), 0);
	fd = raw_connect_rcvbuf(t.ts_port, small);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(raw_login(fd, test_key, &rep, mac), NC_WS_OK);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* Up to 2^20 PINGs, 32 MiB of replies: until the server stops taking
	 * them because what it sends back is not read. */
	while (sent < 52 && raw_send(fd, buf, (size_t)batch * NC_HDR_LEN))
		sent++;
	CU_ASSERT(sent < 52);
	/* Served within the server's stall limit (10 s) and a margin. */
	cc = client_new(t.ts_addr, FSNAME, 30000, 2000);
	CU_ASSERT_PTR_NOT_NULL(cc);
	if (cc)
		CU_ASSERT_EQUAL(echo_check(cc, "beside a peer that reads nothing", 32), 0);
	nc_cconn_free(cc);
	close(fd);
	tsrv_stop(&t);
	free(buf);
}

/* ---- a server that does not hold the key ---- */

struct fake_srv {
	int fs_lfd;
	int fs_port;
	pthread_t fs_thread;
	int fs_auth_seen;       /* AUTH requests read */
};

/* Answers one connection: CONNECT with a nonce, then AUTH "successfully"
 * with a proof of zeros, which a client must not believe. */
static void *fake_main(void *arg)
{
	struct fake_srv *f = arg;
	struct nc_connect_rep cp = { .cp_major = NC_PROTO_MAJOR, .cp_minor = NC_PROTO_MINOR,
				     .cp_role = NC_ROLE_MDS,
				     .cp_features = NC_FEATURES_SUPPORTED };
	struct nc_auth_msg am = { { 0 } };
	uint8_t buf[512], out[128];
	struct nc_msg_hdr h;
	struct nc_xdr x;
	int fd = accept(f->fs_lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	for (int i = 0; i < 2; i++) {
		struct nc_msg_hdr rh = { .mh_magic = NC_MSG_MAGIC, .mh_version = PROTO_VERSION,
					 .mh_flags = NC_MF_REPLY };
		uint8_t hb[NC_HDR_LEN];

		if (!raw_reply(fd, &h, buf, sizeof(buf)))
			break;
		nc_xdr_init_encode(&x, out, sizeof(out));
		if (h.mh_opcode == NC_OP_CONNECT) {
			memset(cp.cp_nonce, 0x5a, sizeof(cp.cp_nonce));
			nc_wire_connect_rep(&x, &cp);
		} else {
			f->fs_auth_seen++;
			nc_wire_auth(&x, &am);
		}
		rh.mh_opcode = h.mh_opcode;
		rh.mh_reqid = h.mh_reqid;
		rh.mh_body_len = (uint32_t)x.x_pos;
		nc_hdr_encode(&rh, hb);
		raw_send(fd, hb, sizeof(hb));
		raw_send(fd, out, x.x_pos);
	}
	close(fd);
	return NULL;
}

/* Authentication is mutual: a server that cannot prove it holds the key
 * (an impostor) gets -NC_E_AUTH and no request. */
static void test_auth_server_proof(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	struct fake_srv f = { 0 };
	struct nc_cconn *cc;
	char addr[64];

	if (!xp_is_tcp()) {
		fprintf(stderr, "  (raw TCP server: skipped over %s)\n", xp_scheme);
		return;
	}
	f.fs_lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(f.fs_lfd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CU_ASSERT_FATAL(bind(f.fs_lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CU_ASSERT_FATAL(listen(f.fs_lfd, 4) == 0);
	CU_ASSERT_FATAL(getsockname(f.fs_lfd, (struct sockaddr *)&sa, &sl) == 0);
	f.fs_port = ntohs(sa.sin_port);
	CU_ASSERT_FATAL(pthread_create(&f.fs_thread, NULL, fake_main, &f) == 0);
	snprintf(addr, sizeof(addr), "tcp://127.0.0.1:%d", f.fs_port);
	cc = client_new(addr, FSNAME, 3000, 1000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	CU_ASSERT_EQUAL(echo_check(cc, "secret", 6), -NC_E_AUTH);
	CU_ASSERT_FALSE(nc_cconn_is_connected(cc));
	nc_cconn_free(cc);
	pthread_join(f.fs_thread, NULL);
	CU_ASSERT_EQUAL(f.fs_auth_seen, 1);
	close(f.fs_lfd);
}

/*
 * A server that accepts connections and never answers (a stopped or hung
 * process: the kernel completes the TCP handshake for it).  The handshake
 * fails after one request timeout, not two; and a connect that failed that
 * slowly is not tried again at once: submits during as long again fail at
 * once with its error, then one tries again.
 */
static void test_mute_server(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	struct nc_cconn *cc;
	struct nc_call call;
	char addr[64];
	int64_t t0, el;
	int lfd;

	if (!xp_is_tcp()) {
		fprintf(stderr, "  (raw TCP server: skipped over %s)\n", xp_scheme);
		return;
	}
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(lfd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CU_ASSERT_FATAL(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CU_ASSERT_FATAL(listen(lfd, 16) == 0);
	CU_ASSERT_FATAL(getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0);
	snprintf(addr, sizeof(addr), "tcp://127.0.0.1:%d", ntohs(sa.sin_port));
	cc = client_new(addr, FSNAME, 1000, 400);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	nc_call_init(&call, NC_OP_PING, NULL, 0);
	t0 = now_ms();
	CU_ASSERT_EQUAL(nc_cconn_submit(cc, &call), -ETIMEDOUT);
	el = now_ms() - t0;
	CU_ASSERT(el >= 900);
	CU_ASSERT(el < 1800);
	t0 = now_ms();
	CU_ASSERT_EQUAL(nc_cconn_submit(cc, &call), -ETIMEDOUT);
	CU_ASSERT(now_ms() - t0 < 300);
	/* Held as long as the attempt took; then a new attempt. */
	usleep((useconds_t)(el + 200) * 1000);
	t0 = now_ms();
	CU_ASSERT_EQUAL(nc_cconn_submit(cc, &call), -ETIMEDOUT);
	CU_ASSERT(now_ms() - t0 >= 900);
	nc_call_fini(&call);
	nc_cconn_free(cc);
	close(lfd);
}

/* Both ends speak the smaller minor version: what the client learns is
 * what it may send (a newer field to an older server is refused). */
static void test_minor(void)
{
	static const uint16_t offered[] = { 0, 5, 1, NC_PROTO_MINOR + 3 };
	static const uint16_t spoken[] = { NC_PROTO_MINOR, 5, 1, NC_PROTO_MINOR };

	for (size_t i = 0; i < sizeof(offered) / sizeof(offered[0]); i++) {
		struct nc_cconn *cc;
		struct tsrv t;

		tsrv_minor = offered[i];
		CU_ASSERT_EQUAL_FATAL(tsrv_start(&t, 0, 1), 0);
		tsrv_minor = 0;
		cc = client_new(t.ts_addr, FSNAME, 5000, 2000);
		CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
		CU_ASSERT_EQUAL(nc_cconn_peer_minor(cc), 0);
		CU_ASSERT_EQUAL(echo_check(cc, "minor", 5), 0);
		CU_ASSERT_EQUAL(nc_cconn_peer_minor(cc), spoken[i]);
		nc_cconn_free(cc);
		tsrv_stop(&t);
	}
}

static void test_free_unstarted(void)
{
	struct nc_server_conf conf = {
		.sc_fsname = FSNAME,
		.sc_threads = 1,
		.sc_handler = handler,
		.sc_key = test_key,
	};
	struct nc_server *srv = NULL, *srv2 = NULL;
	char addr[64];
	int port;

	CU_ASSERT_EQUAL_FATAL(nc_server_new(&conf, &srv), 0);
	snprintf(addr, sizeof(addr), "%s://%s:0", xp_scheme, xp_host);
	CU_ASSERT_EQUAL_FATAL(nc_server_listen(srv, addr), 0);
	port = nc_server_bound_port(srv, 0);
	CU_ASSERT(port > 0);
	CU_ASSERT_EQUAL(nc_server_bound_port(srv, 1), -EINVAL);
	nc_server_free(srv);

	CU_ASSERT_EQUAL_FATAL(nc_server_new(&conf, &srv2), 0);
	snprintf(addr, sizeof(addr), "%s://%s:%d", xp_scheme, xp_host, port);
	CU_ASSERT_EQUAL(nc_server_listen(srv2, addr), 0);
	nc_server_free(srv2);

	/* Configuration errors. */
	conf.sc_threads = 0;
	CU_ASSERT_EQUAL(nc_server_new(&conf, &srv), -EINVAL);
	conf.sc_threads = 1;
	conf.sc_handler = NULL;
	CU_ASSERT_EQUAL(nc_server_new(&conf, &srv), -EINVAL);
	/* No server without a cluster key: nothing may be served unproved. */
	conf.sc_handler = handler;
	conf.sc_key = NULL;
	CU_ASSERT_EQUAL(nc_server_new(&conf, &srv), -EINVAL);
}

int main(void)
{
	CU_pSuite suite;
	unsigned int failures;

	signal(SIGPIPE, SIG_IGN);
	if (getenv("NACRE_TEST_XPRT"))
		xp_scheme = getenv("NACRE_TEST_XPRT");
	if (getenv("NACRE_TEST_HOST"))
		xp_host = getenv("NACRE_TEST_HOST");
	/* Warnings about the garbage are expected; keep info lines out. */
	nc_log_level = NC_LOG_WARN;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite("rpc", NULL, NULL);
	if (!suite ||
	    !CU_add_test(suite, "echo body and 1 MiB bulk", test_echo) ||
	    !CU_add_test(suite, "200 async calls, one wait", test_async_many) ||
	    !CU_add_test(suite, "8 threads x 200 sync calls", test_threads) ||
	    !CU_add_test(suite, "error statuses", test_error_status) ||
	    !CU_add_test(suite, "reply bulk larger than room", test_bulk_too_big) ||
	    !CU_add_test(suite, "wrong fsname", test_wrong_fsname) ||
	    !CU_add_test(suite, "call timeout", test_timeout) ||
	    !CU_add_test(suite, "server stop and restart", test_server_restart) ||
	    !CU_add_test(suite, "garbage from raw sockets", test_garbage) ||
	    !CU_add_test(suite, "a burst of requests in one write", test_burst) ||
	    !CU_add_test(suite, "backpressure", test_backpressure) ||
	    !CU_add_test(suite, "backpressure, last request empty",
			 test_backpressure_last_empty) ||
	    !CU_add_test(suite, "free with calls pending", test_free_pending) ||
	    !CU_add_test(suite, "server unreachable", test_unreachable) ||
	    !CU_add_test(suite, "a server that never answers", test_mute_server) ||
	    !CU_add_test(suite, "address lists", test_addr_list) ||
	    !CU_add_test(suite, "free a server never started", test_free_unstarted) ||
	    !CU_add_test(suite, "the smaller minor version is spoken", test_minor) ||
	    !CU_add_test(suite, "wrong cluster key", test_auth_wrong_key) ||
	    !CU_add_test(suite, "authentication on the raw wire", test_auth_raw) ||
	    !CU_add_test(suite, "a peer that reads no replies", test_unread_replies) ||
	    !CU_add_test(suite, "a server without the key", test_auth_server_proof)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
