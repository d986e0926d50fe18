/* SPDX-License-Identifier: MIT */
/*
 * Transports: one ops table per network (Redis ConnectionType, Lustre LNDs).
 * Callers never branch on the transport.  A transport moves whole messages
 * (header, body, bulk); the RPC layer above matches requests and replies.
 *
 * Addresses name a transport and an endpoint: "tcp://host:port",
 * "rdma://host:port".  A bare "host:port" means tcp.
 */
#ifndef NC_XPRT_H
#define NC_XPRT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "common/types.h"

struct nc_addr {
	char a_scheme[8];       /* "tcp", "rdma" */
	char a_host[NC_ADDR_MAX + 1];
	uint16_t a_port;
};

/* 0 or -NC_E_ADDR.  Accepts "scheme://host:port", "host:port", "[v6]:port". */
int nc_addr_parse(const char *s, struct nc_addr *a);
/* Writes "scheme://host:port" into @buf. */
void nc_addr_format(const struct nc_addr *a, char *buf, size_t len);

struct nc_xprt_ops {
	const char *xo_name;
	/* Bind and listen; *fd is a non-blocking listening descriptor. */
	int (*xo_listen)(const struct nc_addr *a, int *fd);
	/* Accept one connection (non-blocking fd), peer text in @peer. */
	int (*xo_accept)(int lfd, int *fd, char *peer, size_t peerlen);
	/* Connect with a timeout; *fd is blocking. */
	int (*xo_connect)(const struct nc_addr *a, int timeout_ms, int *fd);
	/* Send every byte of @iov; blocks (polls) on a full socket.  0/-errno. */
	int (*xo_sendv)(int fd, struct iovec *iov, int iovcnt);
	/* Send every byte of @iov, then @len bytes of the file @file_fd from
	 * @off, without copying them through user memory where the transport
	 * can (sendfile).  NULL: the caller reads the file and uses xo_sendv.
	 * A failure part way leaves the stream unusable: close it. */
	int (*xo_sendfile)(int fd, struct iovec *iov, int iovcnt, int file_fd, off_t off,
			   size_t len);
	/* Read up to @len bytes: >0 bytes, 0 at EOF, -EAGAIN, or -errno. */
	ssize_t (*xo_recv)(int fd, void *buf, size_t len);
	void (*xo_close)(int fd);
};

extern const struct nc_xprt_ops nc_xprt_tcp;

/* The ops for an address's scheme, or NULL when not built in. */
const struct nc_xprt_ops *nc_xprt_find(const struct nc_addr *a);

#endif
