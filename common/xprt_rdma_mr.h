/* SPDX-License-Identifier: MIT */
/*
 * Memory registration for the RDMA provider.
 *
 * Two kinds of registration:
 *   pinned     ranges the program declares long-lived (nc_xprt_mem_pin():
 *              a data loader's batch buffers, a daemon's staging pool).
 *              Each is registered with a protection domain on first use
 *              and the registration is reused for every later transfer,
 *              until unpinned.
 *   transient  any other buffer: registered when a transfer starts,
 *              deregistered when it ends.
 * Why not cache registrations of arbitrary buffers: a cached registration
 * keeps pointing at the pages the buffer had when it was registered; once
 * the program frees the buffer and the same addresses are mapped again, a
 * transfer would read or write the old pages and the program would see
 * wrong data, silently.  Only a memory hook on every munmap could make
 * that safe, and libc does not offer one.  Pinning is the same contract as
 * cudaHostRegister(): the program promises the memory stays mapped.
 *
 * The registration calls go through an ops table so the cache is tested
 * without a device.
 */
#ifndef NC_XPRT_RDMA_MR_H
#define NC_XPRT_RDMA_MR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XP_RDMA_MAX_PINS 256
#define XP_RDMA_MAX_PDS 4

struct xp_rdma_mr_ops {
	/* Register [@addr, @addr + @len) with @pd: 0 or -errno. */
	int (*mo_reg)(void *pd, void *addr, size_t len, void **handle, uint32_t *lkey,
		      uint32_t *rkey);
	void (*mo_dereg)(void *handle);
};

/* A registration handed to one transfer. */
struct xp_rdma_mreg {
	void *mr_handle;
	uint32_t mr_lkey, mr_rkey;
	int mr_pin;             /* index of the pin, or -1 when transient */
};

struct xp_rdma_pin {
	uintptr_t pn_addr;
	size_t pn_len;
	int pn_users;                   /* transfers using it now */
	void *pn_pd[XP_RDMA_MAX_PDS];   /* registrations made so far */
	void *pn_handle[XP_RDMA_MAX_PDS];
	uint32_t pn_lkey[XP_RDMA_MAX_PDS], pn_rkey[XP_RDMA_MAX_PDS];
};

struct xp_rdma_mrc_stats {
	uint64_t ms_pinned_hits;        /* transfers served by a pinned range */
	uint64_t ms_pin_regs;           /* registrations made for pins */
	uint64_t ms_transient_regs;     /* per-transfer registrations */
};

struct xp_rdma_mrc {
	const struct xp_rdma_mr_ops *c_ops;
	struct xp_rdma_pin c_pins[XP_RDMA_MAX_PINS];
	int c_npins;                    /* slots in use are pn_len != 0 */
	struct xp_rdma_mrc_stats c_stats;
};

/* The caller serialises every call on one cache (the provider's lock). */
void xp_rdma_mrc_init(struct xp_rdma_mrc *c, const struct xp_rdma_mr_ops *ops);
/* Deregisters everything (the pins are forgotten). */
void xp_rdma_mrc_fini(struct xp_rdma_mrc *c);
/* 0; -EINVAL (empty), -EEXIST (overlaps a pin), -ENOSPC (too many pins). */
int xp_rdma_mrc_pin(struct xp_rdma_mrc *c, void *addr, size_t len);
/* 0; -ENOENT (no pin starts at @addr), -EBUSY (a transfer is using it). */
int xp_rdma_mrc_unpin(struct xp_rdma_mrc *c, void *addr);
/* A registration with @pd covering [@addr, @addr + @len): from a pin that
 * covers it wholly, else a transient one.  0 or -errno from mo_reg. */
int xp_rdma_mrc_get(struct xp_rdma_mrc *c, void *pd, void *addr, size_t len,
		    struct xp_rdma_mreg *out);
/* The transfer is over: a transient registration is deregistered. */
void xp_rdma_mrc_put(struct xp_rdma_mrc *c, struct xp_rdma_mreg *r);

#endif
