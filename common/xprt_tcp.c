/* SPDX-License-Identifier: MIT */
/* The TCP transport: always built. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/errors.h"
#include "common/xprt.h"

/* Socket buffers large enough for a few 1 MiB transfers in flight. */
#define TCP_SOCKBUF (4 << 20)
/*
 * Keepalive: a host that vanishes (power, cable, a partition) sends no
 * reset, and an idle connection to it would look alive for the kernel's
 * default two hours: the MDS would list a dead OSS's OSTs as up, an OSS
 * would keep a dead client's connection.  Probing after 15 s of silence,
 * every 5 s, three times, ends such a connection in about 30 s, which
 * then counts as a peer gone (its OSTs down, its locks released).
 */
#define TCP_KA_IDLE_S 15
#define TCP_KA_INTVL_S 5
#define TCP_KA_CNT 3

static void tcp_tune(int fd)
{
	int one = 1, sz = TCP_SOCKBUF;
	int idle = TCP_KA_IDLE_S, intvl = TCP_KA_INTVL_S, cnt = TCP_KA_CNT;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

static int tcp_listen(const struct nc_addr *a, int *out, int *port)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct addrinfo *res, *ai;
	int rc, fd = -1, one = 1;

	rc = nc_addr_resolve(a, true, &res);
	if (rc)
		return rc;
	rc = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			rc = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 512) == 0)
			break;
		rc = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return rc;
	*port = a->a_port;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			*port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	*out = fd;
	return 0;
}

static void sockaddr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		snprintf(buf, len, "tcp://%s:%u", host, port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		snprintf(buf, len, "tcp://[%s]:%u", host, port);
	} else {
		snprintf(buf, len, "tcp://?");
	}
}

static int tcp_accept(int lfd, int *out, char *peer, size_t peerlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd;

	fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	tcp_tune(fd);
	sockaddr_text(&ss, peer, peerlen);
	*out = fd;
	return 0;
}

static int tcp_connect(const struct nc_addr *a, int timeout_ms, int *out)
{
	struct addrinfo *res, *ai;
	int rc, fd = -1;

	rc = nc_addr_resolve(a, false, &res);
	if (rc)
		return rc;
	rc = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		struct pollfd pfd;
		int err = 0;
		socklen_t el = sizeof(err);

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			rc = -errno;
			continue;
		}
		tcp_tune(fd);
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
			rc = -errno;
			goto next;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		rc = poll(&pfd, 1, timeout_ms);
		if (rc == 0) {
			rc = -ETIMEDOUT;
			goto next;
		}
		if (rc < 0) {
			rc = -errno;
			goto next;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			rc = -err;
			goto next;
		}
		/* The RPC client uses blocking I/O on its own threads. */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		rc = 0;
		break;
next:
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return rc;
	*out = fd;
	return 0;
}

/* Waits until @fd can take more bytes; a peer that reads nothing for a
 * minute is dead. */
static int tcp_wait_writable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };

	return poll(&pfd, 1, 60000) <= 0 ? -ETIMEDOUT : 0;
}

/* Sends all of @iov; @flags are added to sendmsg's (MSG_MORE). */
static int tcp_sendv_flags(int fd, struct iovec *iov, int iovcnt, int flags)
{
	while (iovcnt > 0) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)iovcnt };
		ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL | flags);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (tcp_wait_writable(fd))
					return -ETIMEDOUT;
				continue;
			}
			return -errno;
		}
		while (n > 0 && iovcnt > 0) {
			if ((size_t)n >= iov->iov_len) {
				n -= (ssize_t)iov->iov_len;
				iov++;
				iovcnt--;
			} else {
				iov->iov_base = (char *)iov->iov_base + n;
				iov->iov_len -= (size_t)n;
				n = 0;
			}
		}
		while (iovcnt > 0 && iov->iov_len == 0) {
			iov++;
			iovcnt--;
		}
	}
	return 0;
}

static int tcp_sendv(int fd, struct iovec *iov, int iovcnt)
{
	return tcp_sendv_flags(fd, iov, iovcnt, 0);
}

static int tcp_sendfile(int fd, struct iovec *iov, int iovcnt, int file_fd, off_t off,
			size_t len)
{
	int rc;

	/* MSG_MORE: the header leaves with the first bytes of the file (as a
	 * cork would, without two setsockopt calls per reply); sendfile sends
	 * its last bytes without it, which pushes everything out. */
	rc = tcp_sendv_flags(fd, iov, iovcnt, len > 0 ? MSG_MORE : 0);
	while (!rc && len > 0) {
		ssize_t n = sendfile(fd, file_fd, &off, len);

		if (n > 0) {
			len -= (size_t)n;
		} else if (n == 0) {
			rc = -EIO;      /* the file ended early */
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			rc = tcp_wait_writable(fd);
		} else if (errno != EINTR) {
			rc = -errno;
		}
	}
	return rc;
}

static ssize_t tcp_recv(int fd, void *buf, size_t len)
{
	for (;;) {
		ssize_t n = recv(fd, buf, len, 0);

		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno == EWOULDBLOCK)
			return -EAGAIN;
		return -errno;
	}
}

static void tcp_shutdown(int fd)
{
	shutdown(fd, SHUT_RDWR);
}

static void tcp_close(int fd)
{
	close(fd);
}

const struct nc_xprt_ops nc_xprt_tcp = {
	.xo_name = "tcp",
	.xo_listen = tcp_listen,
	.xo_accept = tcp_accept,
	.xo_connect = tcp_connect,
	.xo_sendv = tcp_sendv,
	.xo_sendfile = tcp_sendfile,
	.xo_recv = tcp_recv,
	.xo_shutdown = tcp_shutdown,
	.xo_close = tcp_close,
};
