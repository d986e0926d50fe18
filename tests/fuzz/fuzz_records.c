/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the record parsers of what the MDS stores and sends
 * about files: the layout on the wire (nc_xdr_layout) and in the MDT
 * (ns_xdr_layout), the inode record that holds it, the pack record and
 * the changelog record.  The first input byte picks the parser.  As in
 * fuzz_wire.c: no access out of bounds, and what decodes must encode and
 * come back the same.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "mds/ns_int.h"

struct fz_record {
	size_t fr_size;
	void (*fr_codec)(struct nc_xdr *x, void *r);
};

static void fz_wire_layout(struct nc_xdr *x, void *r)
{
	nc_xdr_layout(x, r);
}

static void fz_mdt_layout(struct nc_xdr *x, void *r)
{
	ns_xdr_layout(x, r);
}

static void fz_inode(struct nc_xdr *x, void *r)
{
	ns_xdr_inode(x, r);
}

static void fz_pack(struct nc_xdr *x, void *r)
{
	ns_xdr_pack(x, r);
}

static void fz_changelog(struct nc_xdr *x, void *r)
{
	nc_xdr_changelog_rec(x, r);
}

static const struct fz_record fz_records[] = {
	{ sizeof(struct nc_layout), fz_wire_layout },
	{ sizeof(struct nc_layout), fz_mdt_layout },
	{ sizeof(struct ns_inode), fz_inode },
	{ sizeof(struct ns_pack), fz_pack },
	{ sizeof(struct nc_changelog_rec), fz_changelog },
};
#define FZ_NRECORDS (sizeof(fz_records) / sizeof(fz_records[0]))

static void *fz_decode(const struct fz_record *fr, const uint8_t *buf, size_t len)
{
	void *r = malloc(fr->fr_size);
	struct nc_xdr x;

	if (!r)
		abort();
	memset(r, 0, fr->fr_size);
	nc_xdr_init_decode(&x, buf, len);
	fr->fr_codec(&x, r);
	if (nc_xdr_finish(&x)) {
		free(r);
		return NULL;
	}
	return r;
}

static uint8_t *fz_encode(const struct fz_record *fr, void *r, size_t *len)
{
	size_t cap = 64 * 1024;
	uint8_t *buf = malloc(cap);
	struct nc_xdr x;

	if (!buf)
		abort();
	nc_xdr_init_encode(&x, buf, cap);
	fr->fr_codec(&x, r);
	if (x.x_err) {
		free(buf);
		return NULL;
	}
	*len = x.x_pos;
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct fz_record *fr;
	uint8_t *body, *enc1, *enc2;
	size_t len, len1 = 0, len2 = 0;
	void *r, *r2;

	if (size < 1)
		return 0;
	fr = &fz_records[data[0] % FZ_NRECORDS];
	len = size - 1;
	body = malloc(len ? len : 1);
	if (!body)
		abort();
	memcpy(body, data + 1, len);
	r = fz_decode(fr, body, len);
	if (!r)
		goto out_body;
	enc1 = fz_encode(fr, r, &len1);
	if (!enc1)
		goto out_r;
	r2 = fz_decode(fr, enc1, len1);
	if (!r2)
		abort();
	enc2 = fz_encode(fr, r2, &len2);
	if (!enc2 || len2 != len1 || memcmp(enc1, enc2, len1))
		abort();
	free(enc2);
	free(r2);
	free(enc1);
out_r:
	free(r);
out_body:
	free(body);
	return 0;
}
