/* SPDX-License-Identifier: MIT */
/*
 * Layout arithmetic: where the bytes of a file live (DESIGN.md, "Layout").
 *
 * File bytes are cut into chunks of S = l_stripe_size.  File chunk c belongs
 * to row r = c / k at position j = c % k; its encoded chunk number is
 * g = r * (k + m) + j, and the row's parity chunk p is g = r * (k + m) + k + p.
 * Encoded chunk g lives on stripe (object) g % N at object offset
 * (g / N) * S, N = l_stripe_count.  With m = 0 this is RAID-0 striping.
 */
#ifndef NC_LAYOUT_H
#define NC_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/types.h"

/* A piece of a file byte range that lies in one chunk of one object. */
struct nc_extent {
	uint32_t e_stripe;      /* index into l_shards */
	uint32_t e_len;
	uint64_t e_obj_off;     /* offset in the object */
	uint64_t e_file_off;    /* offset in the file */
};

/* 0, or -NC_E_LAYOUT: stripe size a multiple of 4096 within
 * [NC_MIN_STRIPE_SIZE, NC_MAX_STRIPE_SIZE], 1 <= N <= NC_MAX_STRIPES,
 * k >= 1, k + m <= N when m > 0, no OST listed twice. */
int nc_layout_validate(const struct nc_layout *l);

/* Location of data chunk @chunk (file chunk index). */
void nc_layout_data_loc(const struct nc_layout *l, uint64_t chunk,
			uint32_t *stripe, uint64_t *obj_off);
/* Location of parity chunk @p of @row. */
void nc_layout_parity_loc(const struct nc_layout *l, uint64_t row, uint32_t p,
			  uint32_t *stripe, uint64_t *obj_off);

/* Splits [off, off + len) at chunk boundaries into @ext (at most @max
 * pieces, in file order).  Returns the number of pieces written; when
 * @max is too small the range is covered only partly (the caller loops). */
int nc_layout_map(const struct nc_layout *l, uint64_t off, uint64_t len,
		  struct nc_extent *ext, int max);

/* Size the object of @stripe has when the file holds @file_size bytes
 * (data chunks only; m = 0 layouts).  Used to truncate objects. */
uint64_t nc_layout_obj_size(const struct nc_layout *l, uint32_t stripe,
			    uint64_t file_size);

/* Formats "S=1048576 N=4 k=4 m=0 osts=0,1,2,3" for logs. */
void nc_layout_describe(const struct nc_layout *l, char *buf, size_t len);

#endif
