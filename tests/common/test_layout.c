/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the layout arithmetic (common/layout.c), checked against
 * brute-force walks of the encoded chunk stream.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "common/errors.h"
#include "common/layout.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

/* Rows of the encoded stream the brute-force walks cover. */
#define WALK_ROWS 24

static void layout_make(struct nc_layout *l, uint32_t s, uint16_t n,
			uint8_t k, uint8_t m)
{
	memset(l, 0, sizeof(*l));
	l->l_stripe_size = s;
	l->l_stripe_count = n;
	l->l_k = k;
	l->l_m = m;
	for (uint32_t i = 0; i < n && i < NC_MAX_STRIPES; i++)
		l->l_shards[i].ls_ost = i;
}

/* The layouts every arithmetic test runs over. */
static const struct {
	uint32_t s;
	uint16_t n;
	uint8_t k, m;
} test_layouts[] = {
	{ 1 * MIB, 1, 1, 0 },
	{ 64 * KIB, 4, 4, 0 },
	{ 4 * KIB, 3, 1, 0 },
	{ 1 * MIB, 6, 4, 2 },
	{ 64 * KIB, 7, 4, 2 },
	{ 4 * KIB, 8, 4, 2 },
	{ 4 * KIB, 5, 2, 1 },
	{ 4 * KIB, 20, 16, 4 },
};
#define N_TEST_LAYOUTS (sizeof(test_layouts) / sizeof(test_layouts[0]))

static void layout_nth(struct nc_layout *l, size_t i)
{
	layout_make(l, test_layouts[i].s, test_layouts[i].n, test_layouts[i].k,
		    test_layouts[i].m);
}

/* ---- nc_layout_validate ---- */

static void test_validate(void)
{
	struct nc_layout l;

	layout_make(&l, NC_DEFAULT_STRIPE_SIZE, 4, 4, 0);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), 0);
	layout_make(&l, 1 * MIB, 6, 4, 2);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), 0);
	layout_make(&l, NC_MIN_STRIPE_SIZE, 1, 1, 0);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), 0);
	layout_make(&l, NC_MAX_STRIPE_SIZE, NC_MAX_STRIPES, 16, 4);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), 0);
	layout_make(&l, 1 * MIB, 20, 16, 4);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), 0);
	layout_make(&l, 1 * MIB, 8, 4, 2);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), 0);

	/* Stripe size: multiple of 4096 within the limits. */
	layout_make(&l, 0, 4, 4, 0);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);
	layout_make(&l, 4095, 4, 4, 0);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);
	layout_make(&l, 4097, 4, 4, 0);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);
	layout_make(&l, 64 * KIB + 512, 4, 4, 0);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);
	layout_make(&l, NC_MAX_STRIPE_SIZE + 4096, 4, 4, 0);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);
	layout_make(&l, 2048, 4, 4, 0);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);

	/* Stripe count. */
	layout_make(&l, 1 * MIB, 0, 1, 0);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);
	layout_make(&l, 1 * MIB, NC_MAX_STRIPES + 1, 4, 0);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);

	/* k and m. */
	layout_make(&l, 1 * MIB, 4, 0, 0);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);
	layout_make(&l, 1 * MIB, 5, 4, 2);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);
	layout_make(&l, 1 * MIB, 8, 1, 5);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);
	layout_make(&l, 1 * MIB, 20, 17, 1);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);
	layout_make(&l, 1 * MIB, 4, 0, 2);
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);

	/* One OST twice. */
	layout_make(&l, 1 * MIB, 4, 4, 0);
	l.l_shards[3].ls_ost = 1;
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);
	layout_make(&l, 1 * MIB, 6, 4, 2);
	l.l_shards[0].ls_ost = 5;
	CU_ASSERT_EQUAL(nc_layout_validate(&l), -NC_E_LAYOUT);
	/* Shards past the stripe count are not looked at. */
	layout_make(&l, 1 * MIB, 4, 4, 0);
	l.l_shards[4].ls_ost = 0;
	CU_ASSERT_EQUAL(nc_layout_validate(&l), 0);
}

/* ---- data_loc / parity_loc against a walk of the encoded stream ---- */

struct walk_pos {
	uint32_t stripe;
	uint64_t obj_off;
};

/*
 * Walks the encoded stream chunk by chunk without any of the formulas:
 * every row emits its k data chunks then its m parity chunks, and the
 * stream is dealt round-robin over the N objects.
 */
static void walk_stream(const struct nc_layout *l, uint64_t rows,
			struct walk_pos *data, struct walk_pos *parity)
{
	uint32_t stripe = 0;
	uint64_t slot = 0;
	uint64_t c = 0;

	for (uint64_t r = 0; r < rows; r++) {
		for (uint32_t j = 0; j < (uint32_t)l->l_k + l->l_m; j++) {
			struct walk_pos *p;

			if (j < l->l_k)
				p = &data[c++];
			else
				p = &parity[r * l->l_m + (j - l->l_k)];
			p->stripe = stripe;
			p->obj_off = slot * l->l_stripe_size;
			if (++stripe == l->l_stripe_count) {
				stripe = 0;
				slot++;
			}
		}
	}
}

static void check_locations(const struct nc_layout *l)
{
	uint64_t k = l->l_k, m = l->l_m, n = l->l_stripe_count;
	uint64_t s = l->l_stripe_size, total = WALK_ROWS * (k + m);
	struct walk_pos *data = calloc(WALK_ROWS * k, sizeof(*data));
	struct walk_pos *parity = calloc(WALK_ROWS * m + 1, sizeof(*parity));
	unsigned char *used = calloc(total, 1);

	CU_ASSERT_FATAL(data && parity && used);
	walk_stream(l, WALK_ROWS, data, parity);

	for (uint64_t r = 0; r < WALK_ROWS; r++) {
		uint64_t row_stripes = 0;

		for (uint64_t j = 0; j < k + m; j++) {
			uint32_t stripe;
			uint64_t off, g;

			if (j < k) {
				uint64_t c = r * k + j;

				nc_layout_data_loc(l, c, &stripe, &off);
				CU_ASSERT_EQUAL(stripe, data[c].stripe);
				CU_ASSERT_EQUAL(off, data[c].obj_off);
			} else {
				uint64_t p = r * m + (j - k);

				nc_layout_parity_loc(l, r, (uint32_t)(j - k),
						     &stripe, &off);
				CU_ASSERT_EQUAL(stripe, parity[p].stripe);
				CU_ASSERT_EQUAL(off, parity[p].obj_off);
			}
			CU_ASSERT(stripe < n);
			CU_ASSERT_EQUAL(off % s, 0);
			/* Each encoded position is used exactly once. */
			g = off / s * n + stripe;
			CU_ASSERT(g < total);
			if (g < total) {
				CU_ASSERT_EQUAL(used[g], 0);
				used[g] = 1;
			}
			row_stripes |= 1ull << stripe;
		}
		/* With N >= k + m one row never puts two chunks on one OST. */
		if (n >= k + m)
			CU_ASSERT_EQUAL((uint64_t)__builtin_popcountll(row_stripes),
					k + m);
	}
	for (uint64_t g = 0; g < total; g++)
		CU_ASSERT_EQUAL(used[g], 1);

	free(used);
	free(parity);
	free(data);
}

static void test_locations(void)
{
	struct nc_layout l;

	for (size_t i = 0; i < N_TEST_LAYOUTS; i++) {
		layout_nth(&l, i);
		CU_ASSERT_EQUAL(nc_layout_validate(&l), 0);
		check_locations(&l);
	}
}

static void test_locations_known(void)
{
	struct nc_layout l;
	uint32_t stripe;
	uint64_t off;

	/* 4+2 over 6: parity rotates across OSTs row by row. */
	layout_make(&l, 1 * MIB, 6, 4, 2);
	nc_layout_data_loc(&l, 4, &stripe, &off);
	CU_ASSERT_EQUAL(stripe, 0);
	CU_ASSERT_EQUAL(off, 1 * MIB);
	nc_layout_parity_loc(&l, 0, 0, &stripe, &off);
	CU_ASSERT_EQUAL(stripe, 4);
	CU_ASSERT_EQUAL(off, 0);
	/* 4+2 over 7: row 1 starts at g = 6, stripe 6, then wraps. */
	layout_make(&l, 1 * MIB, 7, 4, 2);
	nc_layout_data_loc(&l, 5, &stripe, &off);
	CU_ASSERT_EQUAL(stripe, 0);
	CU_ASSERT_EQUAL(off, 1 * MIB);
	nc_layout_parity_loc(&l, 1, 1, &stripe, &off);
	CU_ASSERT_EQUAL(stripe, 4);
	CU_ASSERT_EQUAL(off, 1 * MIB);
	/* Far into a huge file the arithmetic stays 64-bit. */
	layout_make(&l, 64 * MIB, 8, 4, 2);
	nc_layout_data_loc(&l, (1ull << 40) + 3, &stripe, &off);
	/* g = 2^38 * 6 + 3 */
	CU_ASSERT_EQUAL(stripe, ((1ull << 38) * 6 + 3) % 8);
	CU_ASSERT_EQUAL(off, ((1ull << 38) * 6 + 3) / 8 * (64ull * MIB));
}

/* ---- nc_layout_map ---- */

/* Maps [off, off + len) in calls of at most @max pieces and checks that
 * the pieces tile the range in file order without crossing a chunk. */
static void check_map(const struct nc_layout *l, uint64_t off, uint64_t len,
		      int max)
{
	uint64_t s = l->l_stripe_size, pos = off, end = off + len;
	struct nc_extent ext[64];
	int calls = 0;

	CU_ASSERT_FATAL(max <= 64);
	for (;;) {
		int n = nc_layout_map(l, pos, end - pos, ext, max);

		CU_ASSERT(n >= 0 && n <= max);
		if (n <= 0)
			break;
		calls++;
		for (int i = 0; i < n; i++) {
			struct nc_extent *e = &ext[i];
			uint64_t chunk = e->e_file_off / s;
			uint32_t stripe;
			uint64_t obj_off;

			CU_ASSERT_EQUAL(e->e_file_off, pos);
			CU_ASSERT(e->e_len > 0);
			CU_ASSERT(e->e_len <= s);
			CU_ASSERT_EQUAL((e->e_file_off + e->e_len - 1) / s,
					chunk);
			nc_layout_data_loc(l, chunk, &stripe, &obj_off);
			CU_ASSERT_EQUAL(e->e_stripe, stripe);
			CU_ASSERT_EQUAL(e->e_obj_off,
					obj_off + e->e_file_off % s);
			pos += e->e_len;
		}
		/* Only the last call may hold fewer than @max pieces. */
		if (n < max)
			break;
	}
	CU_ASSERT_EQUAL(pos, end);
	if (len > 0)
		CU_ASSERT(calls >= 1);
}

static void test_map(void)
{
	struct nc_layout l;
	struct nc_extent ext[4];

	for (size_t i = 0; i < N_TEST_LAYOUTS; i++) {
		uint64_t s, row;

		layout_nth(&l, i);
		s = l.l_stripe_size;
		row = (uint64_t)s * l.l_k;

		const uint64_t starts[] = {
			0, 1, s - 1, s, s + 1, 2 * s - 1, row - 1, row,
			row + 1, 3 * row + s / 2, (1ull << 44) + s - 1,
		};
		const uint64_t lens[] = {
			1, 2, s - 1, s, s + 1, 2 * s, row, row + 1,
			3 * row - 1, 5 * row + 7, 41 * s + 3,
		};

		for (size_t a = 0; a < sizeof(starts) / sizeof(starts[0]); a++)
			for (size_t b = 0; b < sizeof(lens) / sizeof(lens[0]);
			     b++) {
				check_map(&l, starts[a], lens[b], 64);
				check_map(&l, starts[a], lens[b], 3);
				check_map(&l, starts[a], lens[b], 1);
			}
	}

	/* Exact piece shapes on RAID-0 over 4 with 64 KiB chunks. */
	layout_make(&l, 64 * KIB, 4, 4, 0);
	CU_ASSERT_EQUAL(nc_layout_map(&l, 64 * KIB - 1, 2, ext, 4), 2);
	CU_ASSERT_EQUAL(ext[0].e_stripe, 0);
	CU_ASSERT_EQUAL(ext[0].e_len, 1);
	CU_ASSERT_EQUAL(ext[0].e_obj_off, 64 * KIB - 1);
	CU_ASSERT_EQUAL(ext[1].e_stripe, 1);
	CU_ASSERT_EQUAL(ext[1].e_len, 1);
	CU_ASSERT_EQUAL(ext[1].e_obj_off, 0);
	CU_ASSERT_EQUAL(ext[1].e_file_off, 64 * KIB);
	/* Chunk 4 wraps to stripe 0 at the second slot. */
	CU_ASSERT_EQUAL(nc_layout_map(&l, 4 * 64 * KIB + 10, 100, ext, 4), 1);
	CU_ASSERT_EQUAL(ext[0].e_stripe, 0);
	CU_ASSERT_EQUAL(ext[0].e_obj_off, 64 * KIB + 10);
	CU_ASSERT_EQUAL(ext[0].e_len, 100);
	/* A max too small covers only part; the rest comes in the next call. */
	CU_ASSERT_EQUAL(nc_layout_map(&l, 0, 10 * 64 * KIB, ext, 4), 4);
	CU_ASSERT_EQUAL(ext[3].e_file_off, 3 * 64 * KIB);
	CU_ASSERT_EQUAL(nc_layout_map(&l, 0, 10 * 64 * KIB, ext, 0), 0);

	/* Length 0 gives no pieces. */
	CU_ASSERT_EQUAL(nc_layout_map(&l, 12345, 0, ext, 4), 0);
	/* A range wrapping the offset space is refused. */
	CU_ASSERT(nc_layout_map(&l, UINT64_MAX - 10, 100, ext, 4) < 0);
	/* A range ending at the very top of the offset space works. */
	CU_ASSERT_EQUAL(nc_layout_map(&l, UINT64_MAX - 10, 10, ext, 4), 1);
	/* An unusable layout is refused, never divided by. */
	layout_make(&l, 0, 4, 4, 0);
	CU_ASSERT_EQUAL(nc_layout_map(&l, 0, 100, ext, 4), -NC_E_LAYOUT);
}

/* ---- nc_layout_obj_size against brute force ---- */

/*
 * The size each object needs for a file of @size bytes, from the chunks
 * themselves: every data chunk of the file (the last one partial) and every
 * parity chunk of every row the file touches (always whole).  Rows before
 * @from_row are skipped: callers only skip rows that cannot hold any
 * object's last chunk.
 */
static void brute_obj_sizes(const struct nc_layout *l, uint64_t size,
			    uint64_t from_row, uint64_t *out)
{
	uint64_t s = l->l_stripe_size, k = l->l_k;
	uint64_t chunks = size / s + (size % s != 0);
	uint64_t rows = chunks / k + (chunks % k != 0);

	memset(out, 0, sizeof(*out) * l->l_stripe_count);
	for (uint64_t c = from_row * k; c < chunks; c++) {
		uint64_t len = c == chunks - 1 ? size - c * s : s;
		uint32_t stripe;
		uint64_t off;

		nc_layout_data_loc(l, c, &stripe, &off);
		if (off + len > out[stripe])
			out[stripe] = off + len;
	}
	for (uint64_t r = from_row; r < rows; r++)
		for (uint32_t p = 0; p < l->l_m; p++) {
			uint32_t stripe;
			uint64_t off;

			nc_layout_parity_loc(l, r, p, &stripe, &off);
			if (off + s > out[stripe])
				out[stripe] = off + s;
		}
}

static void check_obj_size(const struct nc_layout *l, uint64_t size)
{
	uint64_t want[NC_MAX_STRIPES];
	uint64_t s = l->l_stripe_size, k = l->l_k;
	uint64_t chunks = size / s + (size % s != 0);
	uint64_t rows = chunks / k + (chunks % k != 0);
	uint64_t from_row = 0;

	/*
	 * Every object's last chunk lies within the last N encoded chunks
	 * before the last row, or in the last row: earlier rows are skipped
	 * for huge files.
	 */
	if (rows > (uint64_t)l->l_stripe_count + 2)
		from_row = rows - l->l_stripe_count - 2;
	brute_obj_sizes(l, size, from_row, want);
	for (uint32_t i = 0; i < l->l_stripe_count; i++) {
		uint64_t got = nc_layout_obj_size(l, i, size);

		if (got != want[i])
			fprintf(stderr,
				"obj_size S=%u N=%u k=%u m=%u size=%llu stripe=%u: got %llu want %llu\n",
				(unsigned int)l->l_stripe_size,
				(unsigned int)l->l_stripe_count,
				(unsigned int)l->l_k, (unsigned int)l->l_m,
				(unsigned long long)size, (unsigned int)i,
				(unsigned long long)got,
				(unsigned long long)want[i]);
		CU_ASSERT_EQUAL(got, want[i]);
	}
	/* A stripe past the count holds nothing. */
	CU_ASSERT_EQUAL(nc_layout_obj_size(l, l->l_stripe_count, size), 0);
}

static void test_obj_size(void)
{
	struct nc_layout l;
	unsigned int seed = 12345;

	for (size_t i = 0; i < N_TEST_LAYOUTS; i++) {
		uint64_t s, row, n;

		layout_nth(&l, i);
		s = l.l_stripe_size;
		row = s * (uint64_t)l.l_k;
		n = l.l_stripe_count;

		const uint64_t sizes[] = {
			0, 1, s - 1, s, s + 1, 2 * s - 1, 2 * s, 2 * s + 1,
			n * s - 1, n * s, n * s + 1, (n + 1) * s + 3,
			(l.l_k - 1) * s + 1,
			1ull << 40, (1ull << 50) + 7, UINT64_MAX / 2,
			UINT64_MAX - s, UINT64_MAX,
		};

		for (size_t a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++)
			check_obj_size(&l, sizes[a]);
		for (uint64_t rows = 1; rows <= 2 * n + 3; rows++) {
			check_obj_size(&l, rows * row - 1);
			check_obj_size(&l, rows * row);
			check_obj_size(&l, rows * row + 1);
			check_obj_size(&l, rows * row + s);
			check_obj_size(&l, rows * row - s + 1);
		}
		/* Every chunk count up to a few rows, at chunk edges. */
		for (uint64_t c = 1; c <= 4 * row / s + 2 * n; c++) {
			check_obj_size(&l, c * s);
			check_obj_size(&l, c * s - s / 2);
		}
		for (int r = 0; r < 200; r++) {
			uint64_t size = (uint64_t)rand_r(&seed) % (40 * row);

			check_obj_size(&l, size);
		}
	}
}

static void test_obj_size_known(void)
{
	struct nc_layout l;

	/* RAID-0, 4 x 1 MiB, a 2.5 MiB file: objects 1 MiB, 1 MiB, 0.5, 0. */
	layout_make(&l, 1 * MIB, 4, 4, 0);
	CU_ASSERT_EQUAL(nc_layout_obj_size(&l, 0, 5 * MIB / 2), 1 * MIB);
	CU_ASSERT_EQUAL(nc_layout_obj_size(&l, 1, 5 * MIB / 2), 1 * MIB);
	CU_ASSERT_EQUAL(nc_layout_obj_size(&l, 2, 5 * MIB / 2), MIB / 2);
	CU_ASSERT_EQUAL(nc_layout_obj_size(&l, 3, 5 * MIB / 2), 0);
	/* 4+2 over 6, one byte: data chunk 0 holds 1 byte, parity is whole. */
	layout_make(&l, 1 * MIB, 6, 4, 2);
	CU_ASSERT_EQUAL(nc_layout_obj_size(&l, 0, 1), 1);
	CU_ASSERT_EQUAL(nc_layout_obj_size(&l, 1, 1), 0);
	CU_ASSERT_EQUAL(nc_layout_obj_size(&l, 4, 1), 1 * MIB);
	CU_ASSERT_EQUAL(nc_layout_obj_size(&l, 5, 1), 1 * MIB);
	/* An unusable layout gives 0, never a division by zero. */
	layout_make(&l, 1 * MIB, 4, 0, 0);
	CU_ASSERT_EQUAL(nc_layout_obj_size(&l, 0, 12345), 0);
}

/* ---- nc_layout_describe ---- */

static void test_describe(void)
{
	struct nc_layout l;
	char buf[128], big[512];

	layout_make(&l, 1 * MIB, 4, 4, 0);
	nc_layout_describe(&l, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "S=1048576 N=4 k=4 m=0 osts=0,1,2,3");

	layout_make(&l, 64 * KIB, 6, 4, 2);
	l.l_shards[0].ls_ost = 17;
	nc_layout_describe(&l, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "S=65536 N=6 k=4 m=2 osts=17,1,2,3,4,5");

	/* Truncated output stays NUL-terminated. */
	layout_make(&l, 1 * MIB, 4, 4, 0);
	memset(buf, 'x', sizeof(buf));
	nc_layout_describe(&l, buf, 12);
	CU_ASSERT_EQUAL(strlen(buf), 11);
	CU_ASSERT_STRING_EQUAL(buf, "S=1048576 N");
	memset(buf, 'x', sizeof(buf));
	nc_layout_describe(&l, buf, 30);
	CU_ASSERT_STRING_EQUAL(buf, "S=1048576 N=4 k=4 m=0 osts=0,");

	/* All 64 shards fit a generous buffer. */
	layout_make(&l, 1 * MIB, NC_MAX_STRIPES, 4, 0);
	nc_layout_describe(&l, big, sizeof(big));
	CU_ASSERT(strstr(big, ",62,63") != NULL);
}

int main(void)
{
	CU_pSuite suite;
	unsigned int failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite("layout", NULL, NULL);
	if (!suite ||
	    !CU_add_test(suite, "validate", test_validate) ||
	    !CU_add_test(suite, "locations vs encoded stream", test_locations) ||
	    !CU_add_test(suite, "locations, known values", test_locations_known) ||
	    !CU_add_test(suite, "map tiles ranges", test_map) ||
	    !CU_add_test(suite, "obj_size vs brute force", test_obj_size) ||
	    !CU_add_test(suite, "obj_size, known values", test_obj_size_known) ||
	    !CU_add_test(suite, "describe", test_describe)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
