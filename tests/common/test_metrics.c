/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the metrics registry and its text exposition
 * (common/metrics.c), read back with a parser of the format, and of the
 * metrics port (common/metrics_http.c) over loopback.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <CUnit/Basic.h>

#include "common/auth.h"
#include "common/metrics.h"
#include "common/metrics_http.h"
#include "common/rpc.h"

/* ---- a parser of the exposition ---- */

struct sample {
	char name[128];
	char labels[256];       /* unescaped, as 'k=v,k=v' */
	double value;
};

struct parsed {
	struct sample s[256];
	int n;
	int nhelp, ntype;
	char types[64][160];    /* "name type" of each TYPE line */
};

/* Parses @text; false on any line that does not follow the format. */
static bool parse(const char *text, struct parsed *p)
{
	const char *line = text;

	memset(p, 0, sizeof(*p));
	while (*line) {
		const char *nl = strchr(line, '\n');
		char buf[512], *q, *end;
		struct sample *s;
		size_t o = 0;

		if (!nl || (size_t)(nl - line) >= sizeof(buf))
			return false;
		memcpy(buf, line, (size_t)(nl - line));
		buf[nl - line] = '\0';
		line = nl + 1;
		if (!strncmp(buf, "# HELP ", 7)) {
			p->nhelp++;
			continue;
		}
		if (!strncmp(buf, "# TYPE ", 7)) {
			if (p->ntype < 64)
				snprintf(p->types[p->ntype], sizeof(p->types[0]), "%.150s",
					 buf + 7);
			p->ntype++;
			continue;
		}
		if (buf[0] == '#' || p->n == 256)
			return false;
		s = &p->s[p->n++];
		q = buf;
		while (*q && *q != '{' && *q != ' ')
			s->name[o++] = *q++;
		if (*q == '{') {
			o = 0;
			q++;
			while (*q && *q != '}') {
				/* name="value" with escapes */
				while (*q && *q != '=')
					s->labels[o++] = *q++;
				if (*q++ != '=' || *q++ != '"')
					return false;
				s->labels[o++] = '=';
				while (*q && *q != '"') {
					if (*q == '\\') {
						q++;
						if (*q == 'n')
							s->labels[o++] = '\n';
						else if (*q == '\\' || *q == '"')
							s->labels[o++] = *q;
						else
							return false;
						q++;
						continue;
					}
					s->labels[o++] = *q++;
				}
				if (*q++ != '"')
					return false;
				if (*q == ',') {
					s->labels[o++] = ',';
					q++;
				}
			}
			if (*q++ != '}')
				return false;
		}
		if (*q++ != ' ')
			return false;
		if (!strcmp(q, "+Inf"))
			s->value = INFINITY;
		else {
			s->value = strtod(q, &end);
			if (end == q || *end)
				return false;
		}
	}
	return true;
}

static const struct sample *find(const struct parsed *p, const char *name, const char *labels)
{
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->s[i].name, name) && !strcmp(p->s[i].labels, labels))
			return &p->s[i];
	return NULL;
}

static double value_of(const struct parsed *p, const char *name, const char *labels)
{
	const struct sample *s = find(p, name, labels);

	CU_ASSERT_PTR_NOT_NULL(s);
	return s ? s->value : NAN;
}

static bool render_parse(struct nc_metrics *reg, struct parsed *p, char **keep)
{
	char *text = NULL;
	size_t len = 0;
	bool ok;

	if (nc_metrics_render(reg, &text, &len))
		return false;
	ok = strlen(text) == len && parse(text, p);
	if (keep)
		*keep = text;
	else
		free(text);
	return ok;
}

/* ---- tests ---- */

struct inc_arg {
	struct nc_metric *m;
	int n;
};

static void *inc_thread(void *arg)
{
	struct inc_arg *a = arg;

	for (int i = 0; i < a->n; i++)
		nc_metric_inc(a->m, 1);
	return NULL;
}

static void test_counter(void)
{
	struct nc_metrics *reg;
	struct nc_metric *m, *r, *w;
	struct inc_arg a;
	pthread_t t[4];
	struct parsed *p = malloc(sizeof(*p));

	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_FATAL(nc_metrics_new(&reg) == 0);
	m = nc_metrics_counter(reg, "t_requests_total", "Requests.", NULL);
	r = nc_metrics_counter(reg, "t_ops_total", "Ops by kind.", "op", "read", NULL);
	w = nc_metrics_counter(reg, "t_ops_total", "Ops by kind.", "op", "write", NULL);
	CU_ASSERT_FATAL(m && r && w && r != w);
	/* The same series again is the same object. */
	CU_ASSERT_PTR_EQUAL(nc_metrics_counter(reg, "t_ops_total", "Ops by kind.", "op", "read",
					       NULL), r);
	a.m = m;
	a.n = 100000;
	for (int i = 0; i < 4; i++)
		CU_ASSERT_FATAL(pthread_create(&t[i], NULL, inc_thread, &a) == 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	nc_metric_inc(r, 3);
	nc_metric_inc(w, 5);
	nc_metric_inc(w, 7);
	/* A gauge update on a counter is ignored. */
	nc_metric_set(m, 1);
	CU_ASSERT_EQUAL(nc_metric_value(m), 400000);
	CU_ASSERT_FATAL(render_parse(reg, p, NULL));
	CU_ASSERT_EQUAL(value_of(p, "t_requests_total", ""), 400000);
	CU_ASSERT_EQUAL(value_of(p, "t_ops_total", "op=read"), 3);
	CU_ASSERT_EQUAL(value_of(p, "t_ops_total", "op=write"), 12);
	/* One HELP and one TYPE per family. */
	CU_ASSERT_EQUAL(p->nhelp, 2);
	CU_ASSERT_EQUAL(p->ntype, 2);
	CU_ASSERT_STRING_EQUAL(p->types[0], "t_requests_total counter");
	nc_metrics_free(reg);
	free(p);
}

static void test_gauge_collect_cb(void *arg)
{
	nc_metric_set(arg, 42.5);
}

static void test_gauge(void)
{
	struct nc_metrics *reg;
	struct nc_metric *g, *c;
	struct parsed *p = malloc(sizeof(*p));

	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_FATAL(nc_metrics_new(&reg) == 0);
	g = nc_metrics_gauge(reg, "t_queue_depth", "Queued.", NULL);
	c = nc_metrics_gauge(reg, "t_size_bytes", "Size.", "ost", "3", NULL);
	CU_ASSERT_FATAL(g && c);
	nc_metric_add(g, 5);
	nc_metric_add(g, -2);
	CU_ASSERT_EQUAL(nc_metric_value(g), 3);
	CU_ASSERT_EQUAL(nc_metrics_on_collect(reg, test_gauge_collect_cb, c), 0);
	CU_ASSERT_FATAL(render_parse(reg, p, NULL));
	CU_ASSERT_EQUAL(value_of(p, "t_queue_depth", ""), 3);
	CU_ASSERT_EQUAL(value_of(p, "t_size_bytes", "ost=3"), 42.5);
	CU_ASSERT_STRING_EQUAL(p->types[1], "t_size_bytes gauge");
	nc_metrics_free(reg);
	free(p);
}

static void test_histogram(void)
{
	static const double b[] = { 0.001, 0.01, 0.1, 1 };
	static const double obs[] = { 0.0005, 0.001, 0.002, 0.05, 0.05, 0.5, 3, 7 };
	struct nc_metrics *reg;
	struct nc_metric *h;
	struct parsed *p = malloc(sizeof(*p));
	double sum = 0;

	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_FATAL(nc_metrics_new(&reg) == 0);
	h = nc_metrics_histogram(reg, "t_duration_seconds", "Latency.", b, 4, "op", "lookup",
				 NULL);
	CU_ASSERT_FATAL(h != NULL);
	for (size_t i = 0; i < sizeof(obs) / sizeof(obs[0]); i++) {
		nc_metric_observe(h, obs[i]);
		sum += obs[i];
	}
	CU_ASSERT_FATAL(render_parse(reg, p, NULL));
	/* Cumulative: le is "less than or equal". */
	CU_ASSERT_EQUAL(value_of(p, "t_duration_seconds_bucket", "op=lookup,le=0.001"), 2);
	CU_ASSERT_EQUAL(value_of(p, "t_duration_seconds_bucket", "op=lookup,le=0.01"), 3);
	CU_ASSERT_EQUAL(value_of(p, "t_duration_seconds_bucket", "op=lookup,le=0.1"), 5);
	CU_ASSERT_EQUAL(value_of(p, "t_duration_seconds_bucket", "op=lookup,le=1"), 6);
	CU_ASSERT_EQUAL(value_of(p, "t_duration_seconds_bucket", "op=lookup,le=+Inf"), 8);
	CU_ASSERT_EQUAL(value_of(p, "t_duration_seconds_count", "op=lookup"), 8);
	CU_ASSERT(fabs(value_of(p, "t_duration_seconds_sum", "op=lookup") - sum) < 1e-9);
	/* +Inf is the last bucket line. */
	CU_ASSERT_STRING_EQUAL(p->s[4].labels, "op=lookup,le=+Inf");
	CU_ASSERT_STRING_EQUAL(p->types[0], "t_duration_seconds histogram");
	/* Bad bounds, and "le" as a label, are refused. */
	CU_ASSERT_PTR_NULL(nc_metrics_histogram(reg, "t_bad_seconds", "x", b, 0, NULL));
	CU_ASSERT_PTR_NULL(nc_metrics_histogram(reg, "t_bad_seconds", "x",
						(const double[]){ 2, 1 }, 2, NULL));
	CU_ASSERT_PTR_NULL(nc_metrics_histogram(reg, "t_bad_seconds", "x", b, 4, "le", "1",
						NULL));
	/* The same name with other buckets is a conflict. */
	CU_ASSERT_PTR_NULL(nc_metrics_histogram(reg, "t_duration_seconds", "Latency.", b, 3,
						NULL));
	CU_ASSERT_EQUAL(nc_metrics_latency_buckets[0], 50e-6);
	CU_ASSERT_EQUAL(nc_metrics_latency_buckets[nc_metrics_latency_nbuckets - 1], 10);
	nc_metrics_free(reg);
	free(p);
}

static void test_escape(void)
{
	const char *nasty = "a\"b\\c\nd";
	struct nc_metrics *reg;
	struct nc_metric *m;
	struct parsed *p = malloc(sizeof(*p));
	char *text = NULL, esc[32], want[64];

	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_EQUAL(nc_metrics_escape_label(nasty, esc, sizeof(esc)), 10);
	CU_ASSERT_STRING_EQUAL(esc, "a\\\"b\\\\c\\nd");
	/* Truncated output stays terminated and says what it needed. */
	CU_ASSERT_EQUAL(nc_metrics_escape_label(nasty, esc, 4), 10);
	CU_ASSERT_EQUAL(strlen(esc), 3);
	CU_ASSERT_FATAL(nc_metrics_new(&reg) == 0);
	m = nc_metrics_counter(reg, "t_x_total", "Help with a \\ and\na newline.", "path",
			       nasty, NULL);
	CU_ASSERT_FATAL(m != NULL);
	nc_metric_inc(m, 1);
	CU_ASSERT_FATAL(render_parse(reg, p, &text));
	snprintf(want, sizeof(want), "path=%s", nasty);
	CU_ASSERT_EQUAL(value_of(p, "t_x_total", want), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "# HELP t_x_total Help with a \\\\ and\\na newline.\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "t_x_total{path=\"a\\\"b\\\\c\\nd\"} 1\n"));
	free(text);
	nc_metrics_free(reg);
	free(p);
}

static void test_invalid(void)
{
	struct nc_metrics *reg;

	CU_ASSERT_FATAL(nc_metrics_new(&reg) == 0);
	CU_ASSERT_PTR_NULL(nc_metrics_counter(reg, "9lives_total", "x", NULL));
	CU_ASSERT_PTR_NULL(nc_metrics_counter(reg, "a-b_total", "x", NULL));
	CU_ASSERT_PTR_NULL(nc_metrics_counter(reg, "", "x", NULL));
	CU_ASSERT_PTR_NULL(nc_metrics_counter(reg, "ok_total", "x", "bad-label", "v", NULL));
	CU_ASSERT_PTR_NULL(nc_metrics_counter(reg, "ok_total", "x", "__reserved", "v", NULL));
	CU_ASSERT_PTR_NULL(nc_metrics_counter(reg, "ok_total", "x", "a", "1", "a", "2", NULL));
	CU_ASSERT_PTR_NOT_NULL(nc_metrics_counter(reg, "ok_total", "x", NULL));
	/* Another type under a registered name. */
	CU_ASSERT_PTR_NULL(nc_metrics_gauge(reg, "ok_total", "x", NULL));
	CU_ASSERT_PTR_NULL(nc_metrics_counter(NULL, "ok_total", "x", NULL));
	/* Updates of NULL do nothing. */
	nc_metric_inc(NULL, 1);
	nc_metric_set(NULL, 1);
	nc_metric_observe(NULL, 1);
	nc_metrics_free(reg);
	nc_metrics_free(NULL);
}

/* ---- the metrics port ---- */

static int render_reg(void *arg, char **text, size_t *len)
{
	return nc_metrics_render(arg, text, len);
}

/* Sends @req to 127.0.0.1:@port; the HTTP status of the answer, the
 * whole answer in @out. */
static int http(int port, const char *req, char *out, size_t size)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	size_t got = 0;
	int fd, code = -1;
	ssize_t n;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		return -1;
	}
	while (got + 1 < size && (n = read(fd, out + got, size - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(fd);
	if (sscanf(out, "HTTP/1.%*d %d", &code) != 1)
		return -1;
	return code;
}

static void test_http(void)
{
	struct nc_metrics *reg;
	struct nc_mhttp *h;
	struct nc_metric *m;
	char bound[64], *out = malloc(65536);
	const char *colon;
	int port;

	CU_ASSERT_FATAL(out != NULL);
	CU_ASSERT_FATAL(nc_metrics_new(&reg) == 0);
	m = nc_metrics_counter(reg, "t_scraped_total", "A counter.", NULL);
	nc_metric_inc(m, 77);
	CU_ASSERT_EQUAL(nc_mhttp_start("udp://127.0.0.1:1", render_reg, reg, &h, bound,
				       sizeof(bound)), -EINVAL);
	CU_ASSERT_EQUAL(nc_mhttp_start("tcp://127.0.0.1", render_reg, reg, &h, bound,
				       sizeof(bound)), -EINVAL);
	CU_ASSERT_EQUAL(nc_mhttp_start("tcp://127.0.0.1:99999", render_reg, reg, &h, bound,
				       sizeof(bound)), -EINVAL);
	CU_ASSERT_FATAL(nc_mhttp_start("tcp://127.0.0.1:0", render_reg, reg, &h, bound,
				       sizeof(bound)) == 0);
	CU_ASSERT(!strncmp(bound, "tcp://127.0.0.1:", 16));
	colon = strrchr(bound, ':');
	port = atoi(colon + 1);
	CU_ASSERT(port > 0);
	/* The port is taken now. */
	CU_ASSERT_EQUAL(nc_mhttp_start(bound, render_reg, reg, &h, NULL, 0), -EADDRINUSE);

	CU_ASSERT_EQUAL(http(port, "GET /metrics HTTP/1.0\r\n\r\n", out, 65536), 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\r\n\r\n# HELP t_scraped_total A counter.\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "t_scraped_total 77\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "text/plain; version=0.0.4"));
	CU_ASSERT_EQUAL(http(port, "GET /other HTTP/1.0\r\n\r\n", out, 65536), 404);
	CU_ASSERT_EQUAL(http(port, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n", out,
			     65536), 405);
	/* Garbage gets an error or a closed connection, never metrics. */
	CU_ASSERT(http(port, "garbage\r\n\r\n", out, 65536) != 200);
	/* Still serving after all that. */
	nc_metric_inc(m, 1);
	CU_ASSERT_EQUAL(http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
			     out, 65536), 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "t_scraped_total 78\n"));
	nc_mhttp_stop(h);
	CU_ASSERT_EQUAL(http(port, "GET /metrics HTTP/1.0\r\n\r\n", out, 65536), -1);
	nc_metrics_free(reg);
	free(out);
}

/* ---- the RPC server's metrics ---- */

/* LOOKUP succeeds, everything else fails with ENOENT. */
static void rpc_handler(struct nc_req *req, void *arg)
{
	nc_req_reply(req, req->rq_hdr.mh_opcode == NC_OP_LOOKUP ? 0 : -ENOENT, NULL, 0, NULL, 0);
}

static int rpc_call(struct nc_cconn *cc, uint16_t op)
{
	struct nc_call call;
	int rc;

	nc_call_init(&call, op, NULL, 0);
	rc = nc_cconn_call(cc, &call);
	nc_call_fini(&call);
	return rc;
}

static void test_rpc_server(void)
{
	/* Every connection authenticates: both ends hold this test key. */
	static const uint8_t key[NC_AUTH_KEY_LEN] = { 0x6d, 0x65, 0x74, 0x72, 0x69, 0x63, 0x73 };
	struct nc_server_conf conf = {
		.sc_name = "test", .sc_fsname = "mfs", .sc_role = NC_ROLE_MDS,
		.sc_threads = 2, .sc_handler = rpc_handler, .sc_key = key,
	};
	struct nc_cconn_opts o = { .co_role = NC_ROLE_CLIENT, .co_retry_ms = 2000, .co_key = key };
	struct parsed *p = malloc(sizeof(*p));
	struct nc_metrics *reg;
	struct nc_server *srv;
	struct nc_cconn *cc;
	char addr[64];

	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_FATAL(nc_metrics_new(&reg) == 0);
	CU_ASSERT_FATAL(nc_server_new(&conf, &srv) == 0);
	CU_ASSERT_FATAL(nc_server_listen(srv, "tcp://127.0.0.1:0") == 0);
	CU_ASSERT_FATAL(nc_server_set_metrics(srv, reg) == 0);
	CU_ASSERT_EQUAL(nc_server_set_metrics(srv, reg), -EBUSY);
	CU_ASSERT_FATAL(nc_server_start(srv) == 0);
	snprintf(addr, sizeof(addr), "tcp://127.0.0.1:%d", nc_server_bound_port(srv, 0));
	CU_ASSERT_FATAL(nc_cconn_new(addr, "mfs", &o, &cc) == 0);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(rpc_call(cc, NC_OP_LOOKUP), 0);
	for (int i = 0; i < 2; i++)
		CU_ASSERT_EQUAL(rpc_call(cc, NC_OP_GETATTR), -ENOENT);
	/* Answered by the framework: not counted. */
	CU_ASSERT_EQUAL(rpc_call(cc, NC_OP_PING), 0);
	/* A request leaves the in-flight count just after its reply is sent,
	 * which the client may see first. */
	for (int i = 0; i < 100; i++) {
		CU_ASSERT_FATAL(render_parse(reg, p, NULL));
		if (value_of(p, "nacre_test_requests_in_flight", "") == 0)
			break;
		usleep(10000);
	}
	CU_ASSERT_EQUAL(value_of(p, "nacre_test_requests_total", "op=lookup"), 3);
	CU_ASSERT_EQUAL(value_of(p, "nacre_test_requests_total", "op=getattr"), 2);
	CU_ASSERT_EQUAL(value_of(p, "nacre_test_request_errors_total", "op=lookup"), 0);
	CU_ASSERT_EQUAL(value_of(p, "nacre_test_request_errors_total", "op=getattr"), 2);
	CU_ASSERT_EQUAL(value_of(p, "nacre_test_request_duration_seconds_count", "op=lookup"), 3);
	CU_ASSERT_EQUAL(value_of(p, "nacre_test_request_duration_seconds_bucket",
				 "op=getattr,le=+Inf"), 2);
	CU_ASSERT(value_of(p, "nacre_test_request_duration_seconds_sum", "op=lookup") > 0);
	CU_ASSERT_PTR_NULL(find(p, "nacre_test_requests_total", "op=ping"));
	CU_ASSERT_EQUAL(value_of(p, "nacre_test_connections", "transport=tcp"), 1);
	CU_ASSERT_EQUAL(value_of(p, "nacre_test_connections_accepted_total", "transport=tcp"), 1);
	CU_ASSERT_EQUAL(value_of(p, "nacre_test_requests_queued", ""), 0);
	CU_ASSERT_EQUAL(value_of(p, "nacre_test_requests_in_flight", ""), 0);
	nc_cconn_free(cc);
	nc_server_free(srv);
	nc_metrics_free(reg);
	free(p);
}

int main(void)
{
	CU_pSuite suite;
	unsigned int failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite("metrics", NULL, NULL);
	if (!suite ||
	    !CU_add_test(suite, "counters, also from threads", test_counter) ||
	    !CU_add_test(suite, "gauges and collectors", test_gauge) ||
	    !CU_add_test(suite, "histogram buckets, sum, count", test_histogram) ||
	    !CU_add_test(suite, "label and help escaping", test_escape) ||
	    !CU_add_test(suite, "invalid names and conflicts", test_invalid) ||
	    !CU_add_test(suite, "the metrics port", test_http) ||
	    !CU_add_test(suite, "the RPC server's metrics", test_rpc_server)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
