/* SPDX-License-Identifier: MIT */
/*
 * Layout arithmetic: the encoded chunk stream of DESIGN.md.
 *
 * File chunk c sits in row r = c / k at position j = c % k and becomes
 * encoded chunk g = r * (k + m) + j; parity p of row r is encoded chunk
 * r * (k + m) + k + p.  Encoded chunk g lives on stripe g % N at object
 * offset (g / N) * S.  With m = 0 the encoded number is the file chunk
 * number itself, whatever k says.
 *
 * All arithmetic is on 64-bit unsigned values.  Layouts arrive from disk and
 * from the network, so the functions below never divide by a zero field even
 * when the caller skipped nc_layout_validate().
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/errors.h"
#include "common/layout.h"

/* Limits of the erasure code: isa-l's tables and our own row buffers. */
#define NC_LAYOUT_MAX_K 16
#define NC_LAYOUT_MAX_M 4

/* True when the fields we divide by are usable. */
static bool layout_is_usable(const struct nc_layout *l)
{
	return l->l_stripe_size != 0 && l->l_stripe_count != 0 && l->l_k != 0;
}

int nc_layout_validate(const struct nc_layout *l)
{
	uint32_t n = l->l_stripe_count;

	if (l->l_stripe_size % 4096 != 0 ||
	    l->l_stripe_size < NC_MIN_STRIPE_SIZE ||
	    l->l_stripe_size > NC_MAX_STRIPE_SIZE)
		return -NC_E_LAYOUT;
	if (n < 1 || n > NC_MAX_STRIPES)
		return -NC_E_LAYOUT;
	if (l->l_k < 1)
		return -NC_E_LAYOUT;
	if (l->l_m > 0 &&
	    ((uint32_t)l->l_k + l->l_m > n || l->l_m > NC_LAYOUT_MAX_M ||
	     l->l_k > NC_LAYOUT_MAX_K))
		return -NC_E_LAYOUT;
	/* Two shards on one OST would make that OST a double point of loss. */
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = 0; j < i; j++)
			if (l->l_shards[i].ls_ost == l->l_shards[j].ls_ost)
				return -NC_E_LAYOUT;
	return 0;
}

/* Encoded chunk number of file chunk @chunk. */
static uint64_t layout_data_enc(const struct nc_layout *l, uint64_t chunk)
{
	uint64_t k = l->l_k, w = (uint64_t)l->l_k + l->l_m;

	if (l->l_m == 0)
		return chunk;
	return chunk / k * w + chunk % k;
}

static void layout_enc_loc(const struct nc_layout *l, uint64_t g,
			   uint32_t *stripe, uint64_t *obj_off)
{
	uint64_t n = l->l_stripe_count;

	*stripe = (uint32_t)(g % n);
	*obj_off = g / n * l->l_stripe_size;
}

void nc_layout_data_loc(const struct nc_layout *l, uint64_t chunk,
			uint32_t *stripe, uint64_t *obj_off)
{
	if (!layout_is_usable(l)) {
		*stripe = 0;
		*obj_off = 0;
		return;
	}
	layout_enc_loc(l, layout_data_enc(l, chunk), stripe, obj_off);
}

void nc_layout_parity_loc(const struct nc_layout *l, uint64_t row, uint32_t p,
			  uint32_t *stripe, uint64_t *obj_off)
{
	uint64_t w = (uint64_t)l->l_k + l->l_m;

	if (!layout_is_usable(l)) {
		*stripe = 0;
		*obj_off = 0;
		return;
	}
	layout_enc_loc(l, row * w + l->l_k + p, stripe, obj_off);
}

int nc_layout_map(const struct nc_layout *l, uint64_t off, uint64_t len,
		  struct nc_extent *ext, int max)
{
	uint64_t s = l->l_stripe_size;
	int n = 0;

	if (!layout_is_usable(l))
		return -NC_E_LAYOUT;
	/* A range that wraps the 64-bit offset space names no file bytes. */
	if (len > UINT64_MAX - off)
		return -EINVAL;
	while (len > 0 && n < max) {
		uint64_t chunk = off / s, in = off % s;
		uint64_t piece = s - in < len ? s - in : len;
		struct nc_extent *e = &ext[n++];
		uint64_t obj_off;

		nc_layout_data_loc(l, chunk, &e->e_stripe, &obj_off);
		/* piece <= S <= NC_MAX_STRIPE_SIZE fits in 32 bits. */
		e->e_len = (uint32_t)piece;
		e->e_obj_off = obj_off + in;
		e->e_file_off = off;
		off += piece;
		len -= piece;
	}
	return n;
}

/*
 * Largest g in [lo, hi] with g % n == stripe; false when there is none.
 * The caller guarantees lo <= hi and stripe < n.
 */
static bool layout_last_on_stripe(uint64_t lo, uint64_t hi, uint64_t n,
				  uint64_t stripe, uint64_t *g)
{
	uint64_t back = (hi % n + n - stripe) % n;

	if (hi - lo < back)
		return false;
	*g = hi - back;
	return true;
}

/*
 * An object's size is decided by the last encoded chunk it holds: encoded
 * chunks of one stripe sit at increasing object offsets, one full chunk
 * apart, so a later chunk always ends past the end of an earlier one.
 *
 * With L the last file chunk, R = L / k its row and b = R * (k + m) the row's
 * first encoded chunk, the encoded chunks present are all of [0, b), the
 * data chunks [b, b + L % k] of row R and that row's parity
 * [b + k, b + k + m).  Only encoded chunk b + L % k (the file's last chunk)
 * can be partial; parity chunks are always whole.  This is O(1) for any
 * file size.
 */
uint64_t nc_layout_obj_size(const struct nc_layout *l, uint32_t stripe,
			    uint64_t file_size)
{
	uint64_t s = l->l_stripe_size, n = l->l_stripe_count;
	uint64_t k = l->l_k, m = l->l_m;
	uint64_t last, tail, b, last_enc, g;

	if (!layout_is_usable(l) || stripe >= n || file_size == 0)
		return 0;
	last = (file_size - 1) / s;
	tail = file_size - last * s;
	b = m == 0 ? last - last % k : last / k * (k + m);
	last_enc = layout_data_enc(l, last);

	if (m > 0 && layout_last_on_stripe(b + k, b + k + m - 1, n, stripe, &g))
		return g / n * s + s;
	if (layout_last_on_stripe(b, last_enc, n, stripe, &g))
		return g / n * s + (g == last_enc ? tail : s);
	if (b > 0 && layout_last_on_stripe(0, b - 1, n, stripe, &g))
		return g / n * s + s;
	return 0;
}

void nc_layout_describe(const struct nc_layout *l, char *buf, size_t len)
{
	uint32_t n = l->l_stripe_count;
	size_t used;
	int r;

	if (len == 0)
		return;
	r = snprintf(buf, len, "S=%u N=%u k=%u m=%u osts=",
		     (unsigned int)l->l_stripe_size, (unsigned int)n,
		     (unsigned int)l->l_k, (unsigned int)l->l_m);
	if (r < 0) {
		buf[0] = '\0';
		return;
	}
	used = (size_t)r;
	if (n > NC_MAX_STRIPES)
		n = NC_MAX_STRIPES;
	for (uint32_t i = 0; i < n && used < len; i++) {
		r = snprintf(buf + used, len - used, "%s%u", i ? "," : "",
			     (unsigned int)l->l_shards[i].ls_ost);
		if (r < 0)
			break;
		used += (size_t)r;
	}
}
