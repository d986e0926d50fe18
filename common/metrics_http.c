/* SPDX-License-Identifier: MIT */
/*
 * The metrics port over libmicrohttpd (see metrics_http.h).
 *
 * The listening socket is made here and handed to the library
 * (MHD_OPTION_LISTEN_SOCKET): that way a port 0 is bound before the
 * library starts and getsockname() tells which port it got.
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <microhttpd.h>

#include "common/metrics_http.h"

#define MHTTP_PATH "/metrics"
#define MHTTP_CTYPE "text/plain; version=0.0.4; charset=utf-8"
/* Scrapers are few; this bounds what a flood of connections can cost. */
#define MHTTP_MAX_CONNS 32
#define MHTTP_TIMEOUT_S 10

struct nc_mhttp {
	struct MHD_Daemon *mh_daemon;
	nc_mhttp_render_fn mh_render;
	void *mh_arg;
};

/* Splits "tcp://host:port" ("[v6]:port" for IPv6) into @host and @port. */
static int mhttp_parse(const char *addr, char *host, size_t hlen, char *port, size_t plen)
{
	const char *hp, *colon, *end;
	size_t n;

	if (strncmp(addr, "tcp://", 6))
		return -EINVAL;
	hp = addr + 6;
	if (*hp == '[') {
		end = strchr(hp, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		hp++;
		colon = end + 1;
	} else {
		colon = strrchr(hp, ':');
		if (!colon || memchr(hp, ':', (size_t)(colon - hp)))
			return -EINVAL;
		end = colon;
	}
	n = (size_t)(end - hp);
	if (n == 0 || n >= hlen || !colon[1] || strlen(colon + 1) >= plen)
		return -EINVAL;
	for (const char *p = colon + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return -EINVAL;
	if (strtoul(colon + 1, NULL, 10) > 65535)
		return -EINVAL;
	memcpy(host, hp, n);
	host[n] = '\0';
	snprintf(port, plen, "%s", colon + 1);
	return 0;
}

/* A listening socket on @host:@port; its fd, or -errno. */
static int mhttp_listen(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	int fd = -1, rc, one = 1;

	rc = getaddrinfo(host, port, &hints, &res);
	if (rc)
		return rc == EAI_SYSTEM ? -errno : -EINVAL;
	rc = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			rc = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0)
			break;
		rc = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : rc;
}

/* "tcp://host:port" of what @fd is bound to. */
static void mhttp_bound(int fd, char *out, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (!len)
		return;
	out[0] = '\0';
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		port = ntohs(sin->sin_port);
		snprintf(out, len, "tcp://%s:%u", host, port);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		port = ntohs(sin6->sin6_port);
		snprintf(out, len, "tcp://[%s]:%u", host, port);
	}
}

static enum MHD_Result mhttp_reply_text(struct MHD_Connection *conn, unsigned int code,
					const char *text, const char *allow)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)text,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result mhttp_handler(void *cls, struct MHD_Connection *conn, const char *url,
				     const char *method, const char *version,
				     const char *upload_data, size_t *upload_data_size,
				     void **con_cls)
{
	struct nc_mhttp *h = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *text = NULL;
	size_t len = 0;

	if (strcmp(method, MHD_HTTP_METHOD_GET))
		return mhttp_reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
					"method not allowed: only GET\n", "GET");
	if (strcmp(url, MHTTP_PATH))
		return mhttp_reply_text(conn, MHD_HTTP_NOT_FOUND,
					"not found: metrics are at " MHTTP_PATH "\n", NULL);
	if (h->mh_render(h->mh_arg, &text, &len))
		return mhttp_reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
					"cannot gather the metrics\n", NULL);
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, MHTTP_CTYPE);
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

int nc_mhttp_start(const char *addr, nc_mhttp_render_fn render, void *arg,
		   struct nc_mhttp **out, char *bound, size_t blen)
{
	char host[256], port[8];
	struct nc_mhttp *h;
	int fd, rc;

	rc = mhttp_parse(addr, host, sizeof(host), port, sizeof(port));
	if (rc)
		return rc;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->mh_render = render;
	h->mh_arg = arg;
	fd = mhttp_listen(host, port);
	if (fd < 0) {
		free(h);
		return fd;
	}
	mhttp_bound(fd, bound, blen);
	/* The daemon owns @fd from here and closes it when stopped.  AUTO
	 * picks epoll on Linux: a server with a thousand client connections
	 * hands out descriptors past select()'s FD_SETSIZE. */
	h->mh_daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0,
					NULL, NULL,
					mhttp_handler, h,
					MHD_OPTION_LISTEN_SOCKET, fd,
					MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MHTTP_MAX_CONNS,
					MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)MHTTP_TIMEOUT_S,
					MHD_OPTION_END);
	if (!h->mh_daemon) {
		close(fd);
		free(h);
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

void nc_mhttp_stop(struct nc_mhttp *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->mh_daemon);
	free(h);
}
