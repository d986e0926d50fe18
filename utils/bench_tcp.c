/* SPDX-License-Identifier: MIT */
/*
 * nacre-bench loopback limit: memory-to-memory TCP throughput on 127.0.0.1
 * over as many connections as a sequential run has streams, one sender and
 * one receiver thread per connection.  Every nacre byte crosses loopback TCP
 * at least once, so this row bounds what libnacre and the mount can reach.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"

#define BT_BUF (1u << 20)

struct bt_peer {
	bool tp_sender;
	int tp_listen;                  /* receivers accept here */
	struct sockaddr_in tp_addr;     /* senders connect here */
	uint64_t tp_bytes;              /* to send, or received */
	int tp_err;
};

static int bt_send(struct bt_peer *tp, char *buf)
{
	uint64_t left = tp->tp_bytes;
	int fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&tp->tp_addr, sizeof(tp->tp_addr)) < 0)
		goto out_close;
	while (left > 0) {
		size_t len = left < BT_BUF ? left : BT_BUF;
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out_close;
		left -= n;
	}
	close(fd);
	return 0;
out_close:
	tp->tp_err = -errno;
	close(fd);
	return tp->tp_err ? tp->tp_err : -EIO;
}

static int bt_recv(struct bt_peer *tp, char *buf)
{
	ssize_t n;
	int fd;

	fd = accept4(tp->tp_listen, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	tp->tp_bytes = 0;
	for (;;) {
		n = recv(fd, buf, BT_BUF, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		tp->tp_bytes += n;
	}
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

static void *bt_thread(void *arg)
{
	struct bt_peer *tp = arg;
	char *buf;

	bench_thread_ready();
	buf = malloc(BT_BUF);
	if (buf == NULL) {
		tp->tp_err = -ENOMEM;
		return NULL;
	}
	/* Touch the buffer so page faults are not part of the figure. */
	memset(buf, 0x5a, BT_BUF);
	tp->tp_err = tp->tp_sender ? bt_send(tp, buf) : bt_recv(tp, buf);
	free(buf);
	return NULL;
}

static int bt_listen(struct sockaddr_in *addr, unsigned int backlog)
{
	socklen_t len = sizeof(*addr);
	int fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)addr, sizeof(*addr)) < 0 ||
	    listen(fd, backlog) < 0 ||
	    getsockname(fd, (struct sockaddr *)addr, &len) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

static int bt_run(unsigned int n, uint64_t bytes)
{
	struct bt_peer tp[BENCH_MAX_THREADS];
	struct sockaddr_in addr;
	uint64_t got = 0;
	unsigned int i;
	double secs;
	int lfd, rc = 0;

	if (2 * n > BENCH_MAX_THREADS)
		return -EINVAL;
	lfd = bt_listen(&addr, n);
	if (lfd < 0) {
		fprintf(stderr, "nacre-bench: tcp: listen on 127.0.0.1: %s\n",
			strerror(-lfd));
		return lfd;
	}
	for (i = 0; i < 2 * n; i++) {
		memset(&tp[i], 0, sizeof(tp[i]));
		tp[i].tp_sender = i >= n;
		tp[i].tp_listen = lfd;
		tp[i].tp_addr = addr;
		tp[i].tp_bytes = bytes;
	}
	secs = bench_run_threads(2 * n, bt_thread, tp, sizeof(tp[0]));
	close(lfd);
	if (secs < 0)
		return (int)secs;
	for (i = 0; i < 2 * n; i++) {
		if (tp[i].tp_err < 0 && rc == 0)
			rc = tp[i].tp_err;
		if (!tp[i].tp_sender)
			got += tp[i].tp_bytes;
	}
	if (rc == 0 && got != bytes * n)
		rc = -EIO;
	if (rc < 0) {
		fprintf(stderr, "nacre-bench: tcp: %s\n", strerror(-rc));
		return rc;
	}
	return bench_fig_add(BENCH_TCP, "tcp", "1m", n, "gbps", "GB/s",
			     got / 1e9 / secs);
}

int bench_tcp(struct bench_run *run)
{
	const struct bench_cfg *cfg = run->br_cfg;
	unsigned int i;
	int rc;

	for (i = 0; i < cfg->bc_nstreams; i++) {
		bench_note("tcp: loopback, %u connection%s", cfg->bc_streams[i],
			   cfg->bc_streams[i] == 1 ? "" : "s");
		rc = bt_run(cfg->bc_streams[i], cfg->bc_size);
		if (rc < 0)
			return rc;
	}
	return 0;
}
