/* SPDX-License-Identifier: MIT */
/* Pinned and transient memory registrations (see xprt_rdma_mr.h). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "common/xprt_rdma_mr.h"

void xp_rdma_mrc_init(struct xp_rdma_mrc *c, const struct xp_rdma_mr_ops *ops)
{
	memset(c, 0, sizeof(*c));
	c->c_ops = ops;
}

static void pin_dereg(struct xp_rdma_mrc *c, struct xp_rdma_pin *p)
{
	for (int i = 0; i < XP_RDMA_MAX_PDS; i++) {
		if (p->pn_handle[i])
			c->c_ops->mo_dereg(p->pn_handle[i]);
		p->pn_handle[i] = NULL;
		p->pn_pd[i] = NULL;
	}
}

void xp_rdma_mrc_fini(struct xp_rdma_mrc *c)
{
	for (int i = 0; i < c->c_npins; i++)
		if (c->c_pins[i].pn_len)
			pin_dereg(c, &c->c_pins[i]);
	c->c_npins = 0;
}

int xp_rdma_mrc_pin(struct xp_rdma_mrc *c, void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	struct xp_rdma_pin *free_slot = NULL;

	if (!addr || !len || a + len < a)
		return -EINVAL;
	for (int i = 0; i < c->c_npins; i++) {
		struct xp_rdma_pin *p = &c->c_pins[i];

		if (!p->pn_len) {
			if (!free_slot)
				free_slot = p;
			continue;
		}
		if (a < p->pn_addr + p->pn_len && p->pn_addr < a + len)
			return -EEXIST;
	}
	if (!free_slot) {
		if (c->c_npins == XP_RDMA_MAX_PINS)
			return -ENOSPC;
		free_slot = &c->c_pins[c->c_npins++];
	}
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->pn_addr = a;
	free_slot->pn_len = len;
	return 0;
}

int xp_rdma_mrc_unpin(struct xp_rdma_mrc *c, void *addr)
{
	for (int i = 0; i < c->c_npins; i++) {
		struct xp_rdma_pin *p = &c->c_pins[i];

		if (!p->pn_len || p->pn_addr != (uintptr_t)addr)
			continue;
		if (p->pn_users)
			return -EBUSY;
		pin_dereg(c, p);
		p->pn_len = 0;
		while (c->c_npins && !c->c_pins[c->c_npins - 1].pn_len)
			c->c_npins--;
		return 0;
	}
	return -ENOENT;
}

/* The pin wholly covering the range, or -1. */
static int pin_find(struct xp_rdma_mrc *c, uintptr_t a, size_t len)
{
	for (int i = 0; i < c->c_npins; i++) {
		struct xp_rdma_pin *p = &c->c_pins[i];

		if (p->pn_len && a >= p->pn_addr && a + len <= p->pn_addr + p->pn_len)
			return i;
	}
	return -1;
}

/* The pin's registration with @pd, made now when missing. */
static int pin_reg(struct xp_rdma_mrc *c, struct xp_rdma_pin *p, void *pd, int *slot)
{
	int i, rc;

	for (i = 0; i < XP_RDMA_MAX_PDS; i++) {
		if (p->pn_handle[i] && p->pn_pd[i] == pd) {
			*slot = i;
			return 0;
		}
	}
	for (i = 0; i < XP_RDMA_MAX_PDS && p->pn_handle[i]; i++)
		;
	if (i == XP_RDMA_MAX_PDS)
		return -ENOSPC;
	rc = c->c_ops->mo_reg(pd, (void *)p->pn_addr, p->pn_len, &p->pn_handle[i],
			      &p->pn_lkey[i], &p->pn_rkey[i]);
	if (rc) {
		p->pn_handle[i] = NULL;
		return rc;
	}
	p->pn_pd[i] = pd;
	c->c_stats.ms_pin_regs++;
	*slot = i;
	return 0;
}

int xp_rdma_mrc_get(struct xp_rdma_mrc *c, void *pd, void *addr, size_t len,
		    struct xp_rdma_mreg *out)
{
	int pi = pin_find(c, (uintptr_t)addr, len), slot, rc;

	if (pi >= 0 && pin_reg(c, &c->c_pins[pi], pd, &slot) == 0) {
		struct xp_rdma_pin *p = &c->c_pins[pi];

		p->pn_users++;
		out->mr_handle = p->pn_handle[slot];
		out->mr_lkey = p->pn_lkey[slot];
		out->mr_rkey = p->pn_rkey[slot];
		out->mr_pin = pi;
		c->c_stats.ms_pinned_hits++;
		return 0;
	}
	rc = c->c_ops->mo_reg(pd, addr, len, &out->mr_handle, &out->mr_lkey, &out->mr_rkey);
	if (rc)
		return rc;
	out->mr_pin = -1;
	c->c_stats.ms_transient_regs++;
	return 0;
}

void xp_rdma_mrc_put(struct xp_rdma_mrc *c, struct xp_rdma_mreg *r)
{
	if (r->mr_pin >= 0)
		c->c_pins[r->mr_pin].pn_users--;
	else if (r->mr_handle)
		c->c_ops->mo_dereg(r->mr_handle);
	r->mr_handle = NULL;
	r->mr_pin = -1;
}
