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

#include <stdbool.h>
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
struct addrinfo;
/* getaddrinfo() of @a for a stream endpoint (@passive: to listen on); free
 * *res with freeaddrinfo().  0, -errno or -NC_E_ADDR. */
int nc_addr_resolve(const struct nc_addr *a, bool passive, struct addrinfo **res);
/* Writes "scheme://host:port" into @buf. */
void nc_addr_format(const struct nc_addr *a, char *buf, size_t len);

struct nc_xprt_ops {
	const char *xo_name;
	/* Bind and listen; *fd is a pollable listening descriptor (readable
	 * when xo_accept has something to do), *port the port bound (the
	 * address may say 0). */
	int (*xo_listen)(const struct nc_addr *a, int *fd, int *port);
	/* Accept one connection (non-blocking fd), peer text in @peer.
	 * -EAGAIN when there was nothing to accept after all. */
	int (*xo_accept)(int lfd, int *fd, char *peer, size_t peerlen);
	/* Connect with a timeout.  The fd is pollable: readable when
	 * xo_recv would not return -EAGAIN. */
	int (*xo_connect)(const struct nc_addr *a, int timeout_ms, int *fd);
	/* Send every byte of @iov; blocks (polls) on a full socket.  0/-errno. */
	int (*xo_sendv)(int fd, struct iovec *iov, int iovcnt);
	/* Send every byte of @iov, then @len bytes of the file @file_fd from
	 * @off, without copying them through user memory where the transport
	 * can (sendfile).  NULL: the caller reads the file and uses xo_sendv.
	 * A failure part way leaves the stream unusable: close it. */
	int (*xo_sendfile)(int fd, struct iovec *iov, int iovcnt, int file_fd, off_t off,
			   size_t len);
	/* Read up to @len bytes: >0 bytes, 0 at EOF, -EAGAIN, or -errno.
	 * Never blocks.  After -EAGAIN, call again with the same @buf once
	 * the fd is readable (a transport may be placing data there). */
	ssize_t (*xo_recv)(int fd, void *buf, size_t len);
	/* Ends the connection for both directions without freeing it: a
	 * thread blocked in xo_sendv returns, xo_recv sees the end. */
	void (*xo_shutdown)(int fd);
	/* Frees the connection or listener; nothing may use @fd during or
	 * after this call. */
	void (*xo_close)(int fd);
};

extern const struct nc_xprt_ops nc_xprt_tcp;
#ifdef HAVE_RDMA
extern const struct nc_xprt_ops nc_xprt_rdma;
#endif

/*
 * Declares [@addr, @addr + @len) long-lived memory for bulk transfers:
 * the RDMA transport registers it once, on first use, and reuses the
 * registration until nc_xprt_mem_unpin().  The memory must stay mapped
 * until then.  Other buffers are registered for each transfer.  0,
 * -EINVAL, -EEXIST (overlaps a pinned range), -ENOSPC; without RDMA
 * built in, 0 (there is nothing to register).
 */
int nc_xprt_mem_pin(void *addr, size_t len);
/* 0, -ENOENT (no range starts at @addr), -EBUSY (a transfer uses it). */
int nc_xprt_mem_unpin(void *addr);

/* Counters of the RDMA transport in this process (all zero without it). */
struct nc_xprt_rdma_stats {
	uint64_t rs_conns;              /* connections made or accepted */
	uint64_t rs_sends;              /* SEND work requests posted */
	uint64_t rs_recvs;              /* messages received */
	uint64_t rs_reads;              /* RDMA READs posted (bulk pulls) */
	uint64_t rs_read_bytes;
	uint64_t rs_reads_inflight;     /* READs posted and not complete */
	uint64_t rs_reads_inflight_max; /* the most at once */
	uint64_t rs_credit_waits;       /* sends that waited for a credit */
	uint64_t rs_pinned_hits;        /* transfers from pinned memory */
	uint64_t rs_transient_regs;     /* per-transfer registrations */
};
void nc_xprt_rdma_stats(struct nc_xprt_rdma_stats *s);

/* The ops for an address's scheme, or NULL when not built in. */
const struct nc_xprt_ops *nc_xprt_find(const struct nc_addr *a);

#endif
