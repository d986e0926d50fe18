/* SPDX-License-Identifier: MIT */
/*
 * Root squash (Lustre's root_squash and nosquash_nids, NFS's root_squash):
 * a request that says uid 0, gid 0 or supplementary group 0 and comes from
 * a client host that is not exempt is served as the squash uid and gid, so
 * root on a compute node is not root on the filesystem.
 */
#ifndef MDS_SQUASH_H
#define MDS_SQUASH_H

#include <stdbool.h>
#include <stdint.h>

#include "common/types.h"

#define MDS_SQUASH_MAX_NETS 64

/* One exempt network: an address and how many leading bits must match. */
struct mds_squash_net {
	int sn_family;          /* AF_INET or AF_INET6 */
	unsigned int sn_bits;
	uint8_t sn_addr[16];
};

struct mds_squash {
	bool sq_on;
	uint32_t sq_uid;
	uint32_t sq_gid;
	unsigned int sq_nnets;
	struct mds_squash_net sq_nets[MDS_SQUASH_MAX_NETS];
};

/*
 * Fills @sq from @ids ("UID:GID", NULL: squash off) and @nosquash (a list
 * of addresses and networks separated by commas or spaces: "10.0.0.5",
 * "10.1.0.0/16", "fd00::/8"; NULL or "" exempts nobody).  Numeric
 * addresses only: an exemption must not depend on a name service.
 * @return 0, or -EINVAL with a message in @err (@errlen bytes).
 */
int mds_squash_parse(struct mds_squash *sq, const char *ids, const char *nosquash,
		     char *err, size_t errlen);

/* Whether requests from @peer ("tcp://1.2.3.4:5678", "rdma://[fd00::1]:7300")
 * are squashed.  A peer whose address cannot be read is squashed. */
bool mds_squash_applies(const struct mds_squash *sq, const char *peer);

/* Replaces uid 0, gid 0 and supplementary group 0 in @c. */
void mds_squash_cred(const struct mds_squash *sq, struct nc_cred *c);

#endif
