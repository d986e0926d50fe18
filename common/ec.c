/* SPDX-License-Identifier: MIT */
/*
 * Reed-Solomon erasure coding over isa-l.
 *
 * The encode matrix is isa-l's Cauchy matrix of k + m rows by k columns:
 * the first k rows are the identity (data chunks are stored as they are),
 * the last m rows give the parity.  Every k x k submatrix of it is
 * invertible, so any k chunks of a row rebuild the others.
 *
 * isa-l takes lengths as int; we take size_t, so every call below walks the
 * buffers in pieces of at most EC_PIECE bytes.  Tables for decode and
 * update live on the stack: they are at most 32 * k * m bytes.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>
#include <isa-l/erasure_code.h>

#include "common/ec.h"

/* Largest length handed to one isa-l call; far below INT_MAX. */
#define EC_PIECE ((size_t)1 << 30)

/* Bytes of old ^ new computed at a time by nc_ec_update(). */
#define EC_DELTA_LEN 4096

/* isa-l expands every matrix coefficient into 32 bytes of tables. */
#define EC_TBL_PER_COEF 32

struct nc_ec {
	unsigned int ec_k;
	unsigned int ec_m;
	/* (k + m) x k, row-major: row i produces chunk i. */
	unsigned char ec_matrix[NC_EC_MAX_CHUNKS * NC_EC_MAX_K];
	/* Tables for the m parity rows, from ec_init_tables(). */
	unsigned char ec_tbls[EC_TBL_PER_COEF * NC_EC_MAX_K * NC_EC_MAX_M];
};

int nc_ec_new(unsigned int k, unsigned int m, struct nc_ec **out)
{
	struct nc_ec *ec;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if (k < 1 || k > NC_EC_MAX_K || m < 1 || m > NC_EC_MAX_M)
		return -EINVAL;

	ec = calloc(1, sizeof(*ec));
	if (ec == NULL)
		return -ENOMEM;
	ec->ec_k = k;
	ec->ec_m = m;
	gf_gen_cauchy1_matrix(ec->ec_matrix, (int)(k + m), (int)k);
	ec_init_tables((int)k, (int)m, &ec->ec_matrix[k * k], ec->ec_tbls);
	*out = ec;
	return 0;
}

void nc_ec_free(struct nc_ec *ec)
{
	free(ec);
}

unsigned int nc_ec_k(const struct nc_ec *ec)
{
	return ec->ec_k;
}

unsigned int nc_ec_m(const struct nc_ec *ec)
{
	return ec->ec_m;
}

/*
 * Runs ec_encode_data() over @len bytes in pieces isa-l's int length can
 * hold.  isa-l does not write through @tbls or the source pointers; its
 * prototypes simply lack const.
 */
static void ec_apply(size_t len, unsigned int nsrc, unsigned int ndst, const unsigned char *tbls,
		     uint8_t *const *src, uint8_t *const *dst)
{
	unsigned char *s[NC_EC_MAX_CHUNKS];
	unsigned char *d[NC_EC_MAX_CHUNKS];
	size_t off = 0;

	while (off < len) {
		size_t n = len - off < EC_PIECE ? len - off : EC_PIECE;

		for (unsigned int i = 0; i < nsrc; i++)
			s[i] = src[i] + off;
		for (unsigned int i = 0; i < ndst; i++)
			d[i] = dst[i] + off;
		ec_encode_data((int)n, (int)nsrc, (int)ndst, (unsigned char *)tbls, s, d);
		off += n;
	}
}

void nc_ec_encode(const struct nc_ec *ec, size_t len, uint8_t *const *data, uint8_t **parity)
{
	ec_apply(len, ec->ec_k, ec->ec_m, ec->ec_tbls, data, parity);
}

int nc_ec_decode(const struct nc_ec *ec, size_t len, uint8_t **chunks, const bool *present,
		 const bool *want)
{
	unsigned int k = ec->ec_k, n = ec->ec_k + ec->ec_m;
	unsigned char sub[NC_EC_MAX_K * NC_EC_MAX_K];
	unsigned char inv[NC_EC_MAX_K * NC_EC_MAX_K];
	unsigned char rows[NC_EC_MAX_M * NC_EC_MAX_K];
	unsigned char tbls[EC_TBL_PER_COEF * NC_EC_MAX_K * NC_EC_MAX_M];
	unsigned int src_idx[NC_EC_MAX_K];
	uint8_t *src[NC_EC_MAX_K];
	uint8_t *dst[NC_EC_MAX_M];
	unsigned int nsrc = 0, ndst = 0;

	/*
	 * Pick k sources, data chunks first: their matrix rows are unit
	 * vectors, so the inverse stays close to the identity.
	 */
	for (unsigned int i = 0; i < n && nsrc < k; i++)
		if (present[i])
			src_idx[nsrc++] = i;
	if (nsrc < k)
		return -EIO;

	for (unsigned int r = 0; r < k; r++) {
		src[r] = chunks[src_idx[r]];
		memcpy(&sub[r * k], &ec->ec_matrix[src_idx[r] * k], k);
	}
	/*
	 * Cauchy submatrices are never singular; a failure means a bug in
	 * the matrix, and wrong bytes must never come back.
	 */
	if (gf_invert_matrix(sub, inv, (int)k) != 0)
		return -EIO;

	/*
	 * sources = S * data, so data = inv * sources: a missing data chunk
	 * uses its row of inv, a missing parity chunk its encode row times
	 * inv.  At most m chunks are missing when k are present.
	 */
	for (unsigned int i = 0; i < n; i++) {
		unsigned char *row;

		if (present[i] || !want[i])
			continue;
		row = &rows[ndst * k];
		if (i < k) {
			memcpy(row, &inv[i * k], k);
		} else {
			const unsigned char *e = &ec->ec_matrix[i * k];

			for (unsigned int c = 0; c < k; c++) {
				unsigned char v = 0;

				for (unsigned int j = 0; j < k; j++)
					v ^= gf_mul(e[j], inv[j * k + c]);
				row[c] = v;
			}
		}
		dst[ndst++] = chunks[i];
	}
	if (ndst == 0)
		return 0;

	ec_init_tables((int)k, (int)ndst, rows, tbls);
	ec_apply(len, k, ndst, tbls, src, dst);
	return 0;
}

int nc_ec_update(const struct nc_ec *ec, unsigned int idx, size_t len, const uint8_t *old_data,
		 const uint8_t *new_data, uint8_t **parity)
{
	unsigned char delta[EC_DELTA_LEN];
	unsigned char *p[NC_EC_MAX_M];
	unsigned int m = ec->ec_m;
	size_t off = 0;

	if (idx >= ec->ec_k)
		return -EINVAL;

	/*
	 * Parity is linear over GF(2^8) and addition is XOR, so adding the
	 * contribution of (old ^ new) removes the old bytes' share and adds
	 * the new one's.  ec_encode_data_update() accumulates into the
	 * parity rather than overwriting it.
	 */
	while (off < len) {
		size_t n = len - off < EC_DELTA_LEN ? len - off : EC_DELTA_LEN;

		for (size_t b = 0; b < n; b++)
			delta[b] = old_data[off + b] ^ new_data[off + b];
		for (unsigned int i = 0; i < m; i++)
			p[i] = parity[i] + off;
		ec_encode_data_update((int)n, (int)ec->ec_k, (int)m, (int)idx,
				      (unsigned char *)ec->ec_tbls, delta, p);
		off += n;
	}
	return 0;
}

uint32_t nc_crc32c(uint32_t seed, const void *buf, size_t len)
{
	/*
	 * crc32_iscsi() neither inverts its initial value nor its result.
	 * We do both, as zlib's crc32() does, so nc_crc32c(0, ...) is the
	 * standard CRC32C and the result of one call seeds the next.
	 */
	const unsigned char *p = buf;
	uint32_t crc = ~seed;

	while (len > 0) {
		size_t n = len < EC_PIECE ? len : EC_PIECE;

		crc = crc32_iscsi((unsigned char *)p, (int)n, crc);
		p += n;
		len -= n;
	}
	return ~crc;
}
