/* SPDX-License-Identifier: MIT */
/* Transport addresses: "scheme://host:port", and the transport table. */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errors.h"
#include "common/xprt.h"

int nc_addr_parse(const char *s, struct nc_addr *a)
{
	const char *hp = s, *sep, *port;
	size_t hlen;
	char *end;
	unsigned long p;

	memset(a, 0, sizeof(*a));
	sep = strstr(s, "://");
	if (sep) {
		size_t slen = (size_t)(sep - s);

		if (slen == 0 || slen >= sizeof(a->a_scheme))
			return -NC_E_ADDR;
		memcpy(a->a_scheme, s, slen);
		hp = sep + 3;
	} else {
		strcpy(a->a_scheme, "tcp");
	}
	if (*hp == '[') {
		const char *rb = strchr(hp, ']');

		if (!rb || rb[1] != ':')
			return -NC_E_ADDR;
		hlen = (size_t)(rb - hp - 1);
		hp++;
		port = rb + 2;
	} else {
		const char *colon = strrchr(hp, ':');

		if (!colon)
			return -NC_E_ADDR;
		hlen = (size_t)(colon - hp);
		port = colon + 1;
	}
	if (hlen == 0 || hlen > NC_ADDR_MAX)
		return -NC_E_ADDR;
	memcpy(a->a_host, hp, hlen);
	a->a_host[hlen] = '\0';
	if (!*port)
		return -NC_E_ADDR;
	errno = 0;
	p = strtoul(port, &end, 10);
	if (errno || *end || p > 65535)
		return -NC_E_ADDR;
	a->a_port = (uint16_t)p;
	return 0;
}

void nc_addr_format(const struct nc_addr *a, char *buf, size_t len)
{
	if (strchr(a->a_host, ':'))
		snprintf(buf, len, "%s://[%s]:%u", a->a_scheme, a->a_host, a->a_port);
	else
		snprintf(buf, len, "%s://%s:%u", a->a_scheme, a->a_host, a->a_port);
}

int nc_addr_resolve(const struct nc_addr *a, bool passive, struct addrinfo **res)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : 0 };
	char port[8];
	int rc;

	snprintf(port, sizeof(port), "%u", a->a_port);
	rc = getaddrinfo(a->a_host, port, &hints, res);
	if (rc)
		return rc == EAI_SYSTEM ? -errno : -NC_E_ADDR;
	return 0;
}

const struct nc_xprt_ops *nc_xprt_find(const struct nc_addr *a)
{
	if (!strcmp(a->a_scheme, "tcp"))
		return &nc_xprt_tcp;
#ifdef HAVE_RDMA
	if (!strcmp(a->a_scheme, "rdma"))
		return &nc_xprt_rdma;
#endif
	return NULL;
}

#ifndef HAVE_RDMA
/* Without RDMA nothing is ever registered. */
int nc_xprt_mem_pin(void *addr, size_t len)
{
	return addr && len ? 0 : -EINVAL;
}

int nc_xprt_mem_unpin(void *addr)
{
	return 0;
}

void nc_xprt_rdma_stats(struct nc_xprt_rdma_stats *s)
{
	memset(s, 0, sizeof(*s));
}
#endif
