/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the erasure coder and chunk checksum (common/ec.c).
 *
 * Parity is stored on disk, so encode is checked against a reference
 * written here from the definition of the code (GF(2^8) with polynomial
 * 0x11d, parity row i >= k holding 1 / (i ^ j) in column j): a change of
 * matrix would make old files unreadable and must fail this test.  Decode
 * is checked for every pattern of 1..m lost chunks, data and parity alike,
 * and must refuse (leaving the buffers alone) when more are lost.  Partial
 * updates must leave the parity equal to a fresh encode of the new row.
 *
 * Checksum convention: nc_crc32c(seed, buf, len) is the standard CRC32C
 * (init 0xffffffff, reflected, final xor 0xffffffff), so
 * nc_crc32c(0, "123456789", 9) == 0xe3069283 and the value returned for a
 * prefix is the seed for the rest.  isa-l's crc32_iscsi() itself applies
 * neither inversion (it returns 0x1cf96d7c for that string and seed
 * 0xffffffff); nc_crc32c() inverts the seed and the result around it.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "common/ec.h"

#define RNG_SEED 0x6e616372652d6563ull /* "nacre-ec" */
#define CANARY 0xa5
/* Above this many bytes decoded per (k, m, length), patterns are sampled. */
#define DECODE_BUDGET ((size_t)64 << 20)
#define THREADS 4

static const struct {
	unsigned int k, m;
} configs[] = {
	{1, 1}, {2, 1}, {4, 2}, {6, 3}, {8, 4}, {16, 4}, {3, 2}, {10, 4},
};
#define NCONFIGS (sizeof(configs) / sizeof(configs[0]))

/* Every pattern is tried at these lengths. */
static const size_t full_lens[] = {1, 7, 64, 4096};
/* And this one, exhaustively while it fits DECODE_BUDGET. */
#define BIG_LEN ((size_t)65536 + 13)

/* ---- helpers ---- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	/* splitmix64: fixed seed, so failures reproduce. */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rng_fill(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)rng_next();
}

static bool all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* GF(2^8) over x^8 + x^4 + x^3 + x^2 + 1, bit by bit. */
static uint8_t ref_gf_mul(uint8_t a, uint8_t b)
{
	unsigned int r = 0, x = a;

	while (b) {
		if (b & 1)
			r ^= x;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11d;
		b >>= 1;
	}
	return (uint8_t)r;
}

static uint8_t ref_gf_inv(uint8_t a)
{
	for (unsigned int x = 1; x < 256; x++)
		if (ref_gf_mul(a, (uint8_t)x) == 1)
			return (uint8_t)x;
	return 0;
}

/* 256 x 256 product table so the reference runs at a usable speed. */
static uint8_t mul_tab[256][256];

static void ref_init(void)
{
	for (unsigned int a = 0; a < 256; a++)
		for (unsigned int b = 0; b < 256; b++)
			mul_tab[a][b] = ref_gf_mul((uint8_t)a, (uint8_t)b);
}

static void ref_encode(unsigned int k, unsigned int m, size_t len, uint8_t *const *data,
		       uint8_t **parity)
{
	for (unsigned int p = 0; p < m; p++) {
		unsigned int i = k + p;

		memset(parity[p], 0, len);
		for (unsigned int j = 0; j < k; j++) {
			const uint8_t *t = mul_tab[ref_gf_inv((uint8_t)(i ^ j))];

			for (size_t b = 0; b < len; b++)
				parity[p][b] ^= t[data[j][b]];
		}
	}
}

/* One row: k + m chunk buffers plus a pristine copy to compare with. */
struct row {
	unsigned int k, m, n;
	size_t len;
	uint8_t *chunk[NC_EC_MAX_CHUNKS];
	uint8_t *orig[NC_EC_MAX_CHUNKS];
};

static void row_free(struct row *r)
{
	for (unsigned int i = 0; i < NC_EC_MAX_CHUNKS; i++) {
		free(r->chunk[i]);
		free(r->orig[i]);
	}
	memset(r, 0, sizeof(*r));
}

/* Random data, parity from nc_ec_encode(); false on allocation failure. */
static bool row_init(struct row *r, const struct nc_ec *ec, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->k = nc_ec_k(ec);
	r->m = nc_ec_m(ec);
	r->n = r->k + r->m;
	r->len = len;
	for (unsigned int i = 0; i < r->n; i++) {
		r->chunk[i] = malloc(len);
		r->orig[i] = malloc(len);
		if (r->chunk[i] == NULL || r->orig[i] == NULL) {
			row_free(r);
			return false;
		}
	}
	for (unsigned int i = 0; i < r->k; i++)
		rng_fill(r->chunk[i], len);
	nc_ec_encode(ec, len, r->chunk, &r->chunk[r->k]);
	for (unsigned int i = 0; i < r->n; i++)
		memcpy(r->orig[i], r->chunk[i], len);
	return true;
}

/* Loses the chunks in @lost, decodes, and checks the result. */
static bool try_pattern(const struct nc_ec *ec, struct row *r, const unsigned int *lost,
			unsigned int nlost)
{
	bool present[NC_EC_MAX_CHUNKS], want[NC_EC_MAX_CHUNKS];
	bool ok = true;
	int rc;

	for (unsigned int i = 0; i < r->n; i++) {
		present[i] = true;
		want[i] = false;
	}
	for (unsigned int i = 0; i < nlost; i++) {
		present[lost[i]] = false;
		want[lost[i]] = true;
		memset(r->chunk[lost[i]], CANARY, r->len);
	}
	rc = nc_ec_decode(ec, r->len, r->chunk, present, want);
	if (nlost <= r->m) {
		ok = rc == 0;
	} else {
		ok = rc == -EIO;
		for (unsigned int i = 0; i < nlost; i++)
			ok = ok && all_bytes(r->chunk[lost[i]], r->len, CANARY);
	}
	/* Rebuilt chunks are exact; present chunks are never written. */
	for (unsigned int i = 0; i < r->n; i++) {
		if (!present[i] && nlost > r->m)
			continue;
		ok = ok && memcmp(r->chunk[i], r->orig[i], r->len) == 0;
	}
	for (unsigned int i = 0; i < nlost; i++)
		memcpy(r->chunk[lost[i]], r->orig[lost[i]], r->len);
	return ok;
}

/* Advances @c to the next @t-subset of {0..n-1}; false after the last. */
static bool comb_next(unsigned int *c, unsigned int t, unsigned int n)
{
	int i = (int)t - 1;

	while (i >= 0 && c[i] == n - t + (unsigned int)i)
		i--;
	if (i < 0)
		return false;
	c[i]++;
	for (unsigned int j = (unsigned int)i + 1; j < t; j++)
		c[j] = c[j - 1] + 1;
	return true;
}

static uint64_t binom(unsigned int n, unsigned int t)
{
	uint64_t r = 1;

	for (unsigned int i = 1; i <= t; i++)
		r = r * (n - t + i) / i;
	return r;
}

/* Random @t-subset of {0..n-1}, sorted. */
static void comb_random(unsigned int *c, unsigned int t, unsigned int n)
{
	bool used[NC_EC_MAX_CHUNKS] = {false};
	unsigned int got = 0;

	while (got < t) {
		unsigned int v = (unsigned int)(rng_next() % n);

		if (!used[v]) {
			used[v] = true;
			got++;
		}
	}
	got = 0;
	for (unsigned int i = 0; i < n; i++)
		if (used[i])
			c[got++] = i;
}

/*
 * Tries every @t-subset when @sample is 0, else @sample random ones.
 * Returns the number of failing patterns.
 */
static unsigned int try_subsets(const struct nc_ec *ec, struct row *r, unsigned int t,
				uint64_t sample)
{
	unsigned int c[NC_EC_MAX_CHUNKS] = {0};
	unsigned int bad = 0;

	if (sample) {
		for (uint64_t s = 0; s < sample; s++) {
			comb_random(c, t, r->n);
			bad += !try_pattern(ec, r, c, t);
		}
		return bad;
	}
	for (unsigned int i = 0; i < t; i++)
		c[i] = i;
	do
		bad += !try_pattern(ec, r, c, t);
	while (comb_next(c, t, r->n));
	return bad;
}

/* ---- tests ---- */

static void test_params(void)
{
	static const unsigned int bad[][2] = {
		{0, 1},	 {17, 1}, {1, 0}, {1, 5},   {0, 0},
		{17, 5}, {4, 0},  {4, 5}, {100, 2}, {4, 1000},
	};
	struct nc_ec *ec;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* Any non-NULL value: a failed call must reset it. */
		ec = (struct nc_ec *)&ec;
		CU_ASSERT_EQUAL(nc_ec_new(bad[i][0], bad[i][1], &ec), -EINVAL);
		CU_ASSERT_PTR_NULL(ec);
	}
	for (unsigned int k = 1; k <= NC_EC_MAX_K; k++) {
		for (unsigned int m = 1; m <= NC_EC_MAX_M; m++) {
			ec = NULL;
			CU_ASSERT_EQUAL_FATAL(nc_ec_new(k, m, &ec), 0);
			CU_ASSERT_PTR_NOT_NULL_FATAL(ec);
			CU_ASSERT_EQUAL(nc_ec_k(ec), k);
			CU_ASSERT_EQUAL(nc_ec_m(ec), m);
			nc_ec_free(ec);
		}
	}
	nc_ec_free(NULL);
}

static void test_encode_reference(void)
{
	static const size_t lens[] = {1, 7, 15, 16, 31, 33, 4096, BIG_LEN};
	uint8_t *ref[NC_EC_MAX_M];

	rng_state = RNG_SEED;
	for (size_t c = 0; c < NCONFIGS; c++) {
		struct nc_ec *ec;

		CU_ASSERT_EQUAL_FATAL(nc_ec_new(configs[c].k, configs[c].m, &ec), 0);
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			struct row r;

			CU_ASSERT_FATAL(row_init(&r, ec, lens[l]));
			for (unsigned int p = 0; p < r.m; p++) {
				ref[p] = malloc(r.len);
				CU_ASSERT_PTR_NOT_NULL_FATAL(ref[p]);
			}
			ref_encode(r.k, r.m, r.len, r.chunk, ref);
			for (unsigned int p = 0; p < r.m; p++) {
				CU_ASSERT(memcmp(ref[p], r.chunk[r.k + p], r.len) == 0);
				free(ref[p]);
			}
			/* Encoding leaves the data alone. */
			for (unsigned int i = 0; i < r.k; i++)
				CU_ASSERT(memcmp(r.chunk[i], r.orig[i], r.len) == 0);
			row_free(&r);
		}
		nc_ec_free(ec);
	}
}

/* Every pattern of 1..m lost chunks at the small lengths. */
static void test_decode_all_patterns(void)
{
	rng_state = RNG_SEED + 1;
	for (size_t c = 0; c < NCONFIGS; c++) {
		struct nc_ec *ec;

		CU_ASSERT_EQUAL_FATAL(nc_ec_new(configs[c].k, configs[c].m, &ec), 0);
		for (size_t l = 0; l < sizeof(full_lens) / sizeof(full_lens[0]); l++) {
			struct row r;

			CU_ASSERT_FATAL(row_init(&r, ec, full_lens[l]));
			for (unsigned int t = 1; t <= r.m; t++) {
				unsigned int bad = try_subsets(ec, &r, t, 0);

				if (bad)
					fprintf(stderr, "k=%u m=%u len=%zu lost=%u: %u bad\n", r.k,
						r.m, r.len, t, bad);
				CU_ASSERT_EQUAL(bad, 0);
			}
			row_free(&r);
		}
		nc_ec_free(ec);
	}
}

/* The long length: every pattern while it is cheap, else a sample. */
static void test_decode_big(void)
{
	rng_state = RNG_SEED + 2;
	for (size_t c = 0; c < NCONFIGS; c++) {
		struct nc_ec *ec;
		struct row r;
		uint64_t patterns = 0, sample;

		CU_ASSERT_EQUAL_FATAL(nc_ec_new(configs[c].k, configs[c].m, &ec), 0);
		CU_ASSERT_FATAL(row_init(&r, ec, BIG_LEN));
		for (unsigned int t = 1; t <= r.m; t++)
			patterns += binom(r.n, t);
		sample = patterns * r.len * r.k <= DECODE_BUDGET
				 ? 0
				 : DECODE_BUDGET / (r.len * r.k * r.m);
		for (unsigned int t = 1; t <= r.m; t++) {
			/* Single losses are always covered in full. */
			uint64_t s = t == 1 ? 0 : sample;

			CU_ASSERT_EQUAL(try_subsets(ec, &r, t, s), 0);
		}
		row_free(&r);
		nc_ec_free(ec);
	}
}

/* More than m lost: -EIO and not one byte written. */
static void test_decode_too_many(void)
{
	rng_state = RNG_SEED + 3;
	for (size_t c = 0; c < NCONFIGS; c++) {
		struct nc_ec *ec;

		CU_ASSERT_EQUAL_FATAL(nc_ec_new(configs[c].k, configs[c].m, &ec), 0);
		for (size_t l = 0; l < sizeof(full_lens) / sizeof(full_lens[0]); l++) {
			struct row r;
			unsigned int t;

			CU_ASSERT_FATAL(row_init(&r, ec, full_lens[l]));
			t = r.m + 1;
			/* Every m + 1 pattern at the short lengths. */
			CU_ASSERT_EQUAL(try_subsets(ec, &r, t, r.len <= 64 ? 0 : 64), 0);
			for (t = r.m + 2; t <= r.n; t++)
				CU_ASSERT_EQUAL(try_subsets(ec, &r, t, 8), 0);
			row_free(&r);
		}
		nc_ec_free(ec);
	}
}

/* Only the wanted chunks are written; others stay as they were. */
static void test_decode_want_subset(void)
{
	bool present[NC_EC_MAX_CHUNKS], want[NC_EC_MAX_CHUNKS];
	struct nc_ec *ec;
	struct row r;
	const size_t len = 4096;

	rng_state = RNG_SEED + 4;
	CU_ASSERT_EQUAL_FATAL(nc_ec_new(4, 2, &ec), 0);
	CU_ASSERT_FATAL(row_init(&r, ec, len));
	/* Lose data 1 and parity 1; want only data 1. */
	for (unsigned int i = 0; i < r.n; i++) {
		present[i] = i != 1 && i != 5;
		want[i] = i == 1;
	}
	memset(r.chunk[1], CANARY, len);
	memset(r.chunk[5], CANARY, len);
	CU_ASSERT_EQUAL(nc_ec_decode(ec, len, r.chunk, present, want), 0);
	CU_ASSERT(memcmp(r.chunk[1], r.orig[1], len) == 0);
	CU_ASSERT(all_bytes(r.chunk[5], len, CANARY));

	/* Wanting a present chunk does not touch it. */
	memset(r.chunk[1], CANARY, len);
	present[1] = true;
	want[1] = true;
	CU_ASSERT_EQUAL(nc_ec_decode(ec, len, r.chunk, present, want), 0);
	CU_ASSERT(all_bytes(r.chunk[1], len, CANARY));

	/* Nothing wanted: nothing written. */
	present[1] = false;
	want[1] = false;
	CU_ASSERT_EQUAL(nc_ec_decode(ec, len, r.chunk, present, want), 0);
	CU_ASSERT(all_bytes(r.chunk[1], len, CANARY));
	CU_ASSERT(all_bytes(r.chunk[5], len, CANARY));

	/* Only parity present (m = 2 < k = 4): refused. */
	for (unsigned int i = 0; i < r.n; i++) {
		present[i] = i >= r.k;
		want[i] = !present[i];
	}
	memcpy(r.chunk[5], r.orig[5], len);
	for (unsigned int i = 0; i < r.k; i++)
		memset(r.chunk[i], CANARY, len);
	CU_ASSERT_EQUAL(nc_ec_decode(ec, len, r.chunk, present, want), -EIO);
	for (unsigned int i = 0; i < r.k; i++)
		CU_ASSERT(all_bytes(r.chunk[i], len, CANARY));

	/* Zero length is valid and writes nothing. */
	for (unsigned int i = 0; i < r.n; i++) {
		present[i] = i != 0;
		want[i] = i == 0;
	}
	CU_ASSERT_EQUAL(nc_ec_decode(ec, 0, r.chunk, present, want), 0);
	CU_ASSERT(all_bytes(r.chunk[0], len, CANARY));
	row_free(&r);
	nc_ec_free(ec);
}

/* Random partial updates, in sequence, against a fresh encode. */
static void test_update(void)
{
	static const size_t lens[] = {7, 4096, BIG_LEN};
	uint8_t *fresh[NC_EC_MAX_M];

	rng_state = RNG_SEED + 5;
	for (size_t c = 0; c < NCONFIGS; c++) {
		struct nc_ec *ec;

		CU_ASSERT_EQUAL_FATAL(nc_ec_new(configs[c].k, configs[c].m, &ec), 0);
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			struct row r;
			uint8_t *newb;
			unsigned int idxs[4];

			CU_ASSERT_FATAL(row_init(&r, ec, lens[l]));
			newb = malloc(r.len);
			CU_ASSERT_PTR_NOT_NULL_FATAL(newb);
			for (unsigned int p = 0; p < r.m; p++) {
				fresh[p] = malloc(r.len);
				CU_ASSERT_PTR_NOT_NULL_FATAL(fresh[p]);
			}
			idxs[0] = 0;
			idxs[1] = r.k - 1;
			idxs[2] = r.k / 2;
			idxs[3] = (unsigned int)(rng_next() % r.k);
			for (unsigned int u = 0; u < 12; u++) {
				unsigned int idx = idxs[u % 4];
				size_t off = rng_next() % r.len;
				size_t n = 1 + rng_next() % (r.len - off);
				uint8_t *par[NC_EC_MAX_M];

				/* Now and then the whole chunk. */
				if (u % 5 == 4) {
					off = 0;
					n = r.len;
				}
				rng_fill(newb, n);
				for (unsigned int p = 0; p < r.m; p++)
					par[p] = r.chunk[r.k + p] + off;
				CU_ASSERT_EQUAL(
					nc_ec_update(ec, idx, n, r.chunk[idx] + off, newb, par), 0);
				memcpy(r.chunk[idx] + off, newb, n);

				nc_ec_encode(ec, r.len, r.chunk, fresh);
				for (unsigned int p = 0; p < r.m; p++)
					CU_ASSERT(memcmp(fresh[p], r.chunk[r.k + p], r.len) == 0);
			}
			/* The updated row still decodes. */
			for (unsigned int i = 0; i < r.n; i++)
				memcpy(r.orig[i], r.chunk[i], r.len);
			CU_ASSERT_EQUAL(try_subsets(ec, &r, r.m, 16), 0);

			for (unsigned int p = 0; p < r.m; p++)
				free(fresh[p]);
			free(newb);
			row_free(&r);
		}
		nc_ec_free(ec);
	}
}

static void test_update_reject(void)
{
	struct nc_ec *ec;
	struct row r;
	uint8_t newb[64];

	rng_state = RNG_SEED + 6;
	CU_ASSERT_EQUAL_FATAL(nc_ec_new(4, 2, &ec), 0);
	CU_ASSERT_FATAL(row_init(&r, ec, sizeof(newb)));
	rng_fill(newb, sizeof(newb));
	/* A parity index is no data chunk. */
	CU_ASSERT_EQUAL(nc_ec_update(ec, 4, sizeof(newb), r.chunk[0], newb, &r.chunk[4]), -EINVAL);
	CU_ASSERT_EQUAL(nc_ec_update(ec, 1000, sizeof(newb), r.chunk[0], newb, &r.chunk[4]),
			-EINVAL);
	/* Zero length changes nothing. */
	CU_ASSERT_EQUAL(nc_ec_update(ec, 0, 0, r.chunk[0], newb, &r.chunk[4]), 0);
	/* Same old and new bytes change nothing. */
	CU_ASSERT_EQUAL(nc_ec_update(ec, 2, sizeof(newb), r.chunk[2], r.chunk[2], &r.chunk[4]), 0);
	for (unsigned int i = 0; i < r.n; i++)
		CU_ASSERT(memcmp(r.chunk[i], r.orig[i], r.len) == 0);
	row_free(&r);
	nc_ec_free(ec);
}

/* One coder, several threads decoding at once. */
struct thread_arg {
	const struct nc_ec *ec;
	struct row *r;
	unsigned int first;
	unsigned int bad;
};

static void *decode_thread(void *p)
{
	struct thread_arg *a = p;
	bool present[NC_EC_MAX_CHUNKS], want[NC_EC_MAX_CHUNKS];
	uint8_t *buf[NC_EC_MAX_CHUNKS];
	uint8_t *out = malloc(a->r->len);

	if (out == NULL) {
		a->bad++;
		return NULL;
	}
	for (unsigned int round = 0; round < 200; round++) {
		unsigned int lost = (a->first + round) % a->r->n;

		for (unsigned int i = 0; i < a->r->n; i++) {
			present[i] = i != lost;
			want[i] = i == lost;
			/* Sources are shared and read-only; output is ours. */
			buf[i] = i == lost ? out : a->r->orig[i];
		}
		memset(out, CANARY, a->r->len);
		if (nc_ec_decode(a->ec, a->r->len, buf, present, want) != 0 ||
		    memcmp(out, a->r->orig[lost], a->r->len) != 0)
			a->bad++;
	}
	free(out);
	return NULL;
}

static void test_threads(void)
{
	pthread_t tid[THREADS];
	struct thread_arg args[THREADS];
	struct nc_ec *ec;
	struct row r;

	rng_state = RNG_SEED + 7;
	CU_ASSERT_EQUAL_FATAL(nc_ec_new(8, 4, &ec), 0);
	CU_ASSERT_FATAL(row_init(&r, ec, 16384));
	for (unsigned int t = 0; t < THREADS; t++) {
		args[t].ec = ec;
		args[t].r = &r;
		args[t].first = t * 3;
		args[t].bad = 0;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[t], NULL, decode_thread, &args[t]), 0);
	}
	for (unsigned int t = 0; t < THREADS; t++) {
		CU_ASSERT_EQUAL(pthread_join(tid[t], NULL), 0);
		CU_ASSERT_EQUAL(args[t].bad, 0);
	}
	row_free(&r);
	nc_ec_free(ec);
}

/* Bitwise reflected CRC32C, standard init and final xor. */
static uint32_t ref_crc32c(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return ~crc;
}

static void test_crc32c(void)
{
	uint8_t buf[32];
	uint8_t *big;
	const size_t big_len = 70000;

	CU_ASSERT_EQUAL(nc_crc32c(0, "123456789", 9), 0xe3069283u);
	CU_ASSERT_EQUAL(nc_crc32c(0, "", 0), 0);
	CU_ASSERT_EQUAL(nc_crc32c(0x12345678u, "", 0), 0x12345678u);

	/* RFC 3720 appendix B.4. */
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nc_crc32c(0, buf, sizeof(buf)), 0x8a9136aau);
	memset(buf, 0xff, sizeof(buf));
	CU_ASSERT_EQUAL(nc_crc32c(0, buf, sizeof(buf)), 0x62a8ab43u);
	for (unsigned int i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)i;
	CU_ASSERT_EQUAL(nc_crc32c(0, buf, sizeof(buf)), 0x46dd794eu);
	for (unsigned int i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(31 - i);
	CU_ASSERT_EQUAL(nc_crc32c(0, buf, sizeof(buf)), 0x113fdb5cu);

	/* Chaining: the crc of a prefix seeds the rest. */
	CU_ASSERT_EQUAL(nc_crc32c(nc_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);

	rng_state = RNG_SEED + 8;
	big = malloc(big_len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	rng_fill(big, big_len);
	for (unsigned int t = 0; t < 200; t++) {
		/* Lengths cover the SIMD block edges and the tails. */
		size_t len = t < 100 ? t : rng_next() % big_len;
		size_t off = rng_next() % (big_len - len + 1);
		size_t half = len ? rng_next() % (len + 1) : 0;
		uint32_t whole = nc_crc32c(0, big + off, len);

		CU_ASSERT_EQUAL(whole, ref_crc32c(big + off, len));
		CU_ASSERT_EQUAL(
			nc_crc32c(nc_crc32c(0, big + off, half), big + off + half, len - half),
			whole);
	}
	free(big);
}

int main(void)
{
	CU_pSuite suite;
	unsigned int failures;

	ref_init();
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite("ec", NULL, NULL);
	if (!suite || !CU_add_test(suite, "parameters", test_params) ||
	    !CU_add_test(suite, "encode matches reference", test_encode_reference) ||
	    !CU_add_test(suite, "decode every pattern", test_decode_all_patterns) ||
	    !CU_add_test(suite, "decode long chunks", test_decode_big) ||
	    !CU_add_test(suite, "decode too many lost", test_decode_too_many) ||
	    !CU_add_test(suite, "decode wanted subset", test_decode_want_subset) ||
	    !CU_add_test(suite, "partial updates", test_update) ||
	    !CU_add_test(suite, "update rejects", test_update_reject) ||
	    !CU_add_test(suite, "threads share a coder", test_threads) ||
	    !CU_add_test(suite, "crc32c", test_crc32c)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
