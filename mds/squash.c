/* SPDX-License-Identifier: MIT */
/*
 * Root squash: which peers are squashed, and what squashing does to a
 * request's credentials.  mds/rpc.c applies it to every credential it
 * decodes from a squashed peer, so no handler can forget it.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xprt.h"
#include "mds/squash.h"

static int squash_ids_parse(struct mds_squash *sq, const char *ids, char *err, size_t errlen)
{
	const char *g;
	unsigned long uid, gid;
	char *end;

	errno = 0;
	uid = strtoul(ids, &end, 10);
	if (errno || end == ids || *end != ':' || uid > UINT32_MAX - 1 || ids[0] == '-')
		goto bad;
	g = end + 1;
	gid = strtoul(g, &end, 10);
	if (errno || end == g || *end || gid > UINT32_MAX - 1 || g[0] == '-')
		goto bad;
	if (uid == 0 || gid == 0) {
		snprintf(err, errlen, "root squash to uid or gid 0 squashes nothing");
		return -EINVAL;
	}
	sq->sq_uid = (uint32_t)uid;
	sq->sq_gid = (uint32_t)gid;
	sq->sq_on = true;
	return 0;
bad:
	snprintf(err, errlen, "bad root squash '%s' (UID:GID, numbers)", ids);
	return -EINVAL;
}

/* Reads "ADDR" or "ADDR/BITS" into @net. */
static int squash_net_parse(const char *s, struct mds_squash_net *net)
{
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash, *end;
	unsigned long bits;
	unsigned int max;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	memset(net, 0, sizeof(*net));
	if (inet_pton(AF_INET, buf, net->sn_addr) == 1) {
		net->sn_family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, net->sn_addr) == 1) {
		net->sn_family = AF_INET6;
		max = 128;
	} else {
		return -EINVAL;
	}
	net->sn_bits = max;
	if (slash) {
		errno = 0;
		bits = strtoul(slash + 1, &end, 10);
		if (errno || end == slash + 1 || *end || bits > max)
			return -EINVAL;
		net->sn_bits = (unsigned int)bits;
	}
	return 0;
}

int mds_squash_parse(struct mds_squash *sq, const char *ids, const char *nosquash,
		     char *err, size_t errlen)
{
	char *list, *tok, *save = NULL;
	int rc = 0;

	memset(sq, 0, sizeof(*sq));
	if (ids && *ids) {
		rc = squash_ids_parse(sq, ids, err, errlen);
		if (rc)
			return rc;
	}
	if (!nosquash || !*nosquash)
		return 0;
	list = strdup(nosquash);
	if (!list) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (tok = strtok_r(list, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		if (sq->sq_nnets == MDS_SQUASH_MAX_NETS) {
			snprintf(err, errlen, "more than %d exempt networks", MDS_SQUASH_MAX_NETS);
			rc = -EINVAL;
			break;
		}
		if (squash_net_parse(tok, &sq->sq_nets[sq->sq_nnets])) {
			snprintf(err, errlen,
				 "bad exempt address '%s' (a numeric address, or ADDRESS/BITS)",
				 tok);
			rc = -EINVAL;
			break;
		}
		sq->sq_nnets++;
	}
	free(list);
	return rc;
}

static bool squash_net_has(const struct mds_squash_net *n, int family, const uint8_t *addr)
{
	unsigned int full = n->sn_bits / 8, rest = n->sn_bits % 8;

	if (n->sn_family != family)
		return false;
	if (memcmp(n->sn_addr, addr, full))
		return false;
	if (!rest)
		return true;
	return ((n->sn_addr[full] ^ addr[full]) & (0xffu << (8 - rest))) == 0;
}

bool mds_squash_applies(const struct mds_squash *sq, const char *peer)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	uint8_t addr[16];
	struct nc_addr a;
	int family;

	if (!sq->sq_on)
		return false;
	if (!peer || nc_addr_parse(peer, &a))
		return true;
	if (inet_pton(AF_INET, a.a_host, addr) == 1) {
		family = AF_INET;
	} else if (inet_pton(AF_INET6, a.a_host, addr) == 1) {
		family = AF_INET6;
		/* A server listening on :: sees IPv4 clients as ::ffff:a.b.c.d. */
		if (!memcmp(addr, v4mapped, sizeof(v4mapped))) {
			memmove(addr, addr + 12, 4);
			family = AF_INET;
		}
	} else {
		return true;
	}
	for (unsigned int i = 0; i < sq->sq_nnets; i++)
		if (squash_net_has(&sq->sq_nets[i], family, addr))
			return false;
	return true;
}

void mds_squash_cred(const struct mds_squash *sq, struct nc_cred *c)
{
	if (c->c_uid == 0)
		c->c_uid = sq->sq_uid;
	if (c->c_gid == 0)
		c->c_gid = sq->sq_gid;
	for (uint32_t i = 0; i < c->c_ngroups && i < NC_MAX_GROUPS; i++)
		if (c->c_groups[i] == 0)
			c->c_groups[i] = sq->sq_gid;
}
