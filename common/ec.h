/* SPDX-License-Identifier: MIT */
/*
 * Reed-Solomon erasure coding over isa-l (Cauchy matrix), k data + m parity
 * chunks per row.  A coder is built once per (k, m) and is immutable, so one
 * coder serves many threads.
 *
 * Chunks are byte arrays of the same length; chunk i of a row is data chunk
 * i for i < k and parity chunk i - k for i >= k.
 */
#ifndef NC_EC_H
#define NC_EC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NC_EC_MAX_K 16
#define NC_EC_MAX_M 4
#define NC_EC_MAX_CHUNKS (NC_EC_MAX_K + NC_EC_MAX_M)

struct nc_ec;

/* 1 <= k <= NC_EC_MAX_K, 1 <= m <= NC_EC_MAX_M; -EINVAL otherwise.
 * @note Free with nc_ec_free(). */
int nc_ec_new(unsigned int k, unsigned int m, struct nc_ec **out);
void nc_ec_free(struct nc_ec *ec);
unsigned int nc_ec_k(const struct nc_ec *ec);
unsigned int nc_ec_m(const struct nc_ec *ec);

/* Computes the m parity chunks of @len bytes from the k data chunks. */
void nc_ec_encode(const struct nc_ec *ec, size_t len, uint8_t *const *data,
		  uint8_t **parity);

/*
 * Rebuilds missing chunks of a row.  @chunks has k + m pointers; @present
 * says which hold valid bytes.  Every chunk i with want[i] set (and not
 * present) is written into chunks[i].  Needs at least k present chunks:
 * -EIO otherwise (never wrong bytes).  Allocates small decode tables:
 * -ENOMEM possible.
 */
int nc_ec_decode(const struct nc_ec *ec, size_t len, uint8_t **chunks,
		 const bool *present, const bool *want);

/*
 * Partial-row update: data chunk @idx changes from @old_data to @new_data
 * over @len bytes (the same byte range of the chunk in every buffer); the m
 * parity buffers covering that range are updated in place so that they
 * equal a from-scratch encode of the new row.
 */
int nc_ec_update(const struct nc_ec *ec, unsigned int idx, size_t len,
		 const uint8_t *old_data, const uint8_t *new_data, uint8_t **parity);

/* CRC32C (isa-l crc32_iscsi) used for chunk checksums. */
uint32_t nc_crc32c(uint32_t seed, const void *buf, size_t len);

#endif
