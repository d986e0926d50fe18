/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: every message decoder of common/wire.c, and the
 * message header.  The first input byte picks the decoder, the rest is the
 * body.  Decoding must never read or write out of bounds (ASan watches a
 * heap copy of exactly the input's size, and a target struct of exactly
 * its type's size); a message that decodes must encode, and its encoding
 * must decode and encode again to the same bytes.  Any violation aborts,
 * which libFuzzer reports as a crash.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"

typedef void (*fz_codec_fn)(struct nc_xdr *x, void *m);

struct fz_shape {
	const char *fs_name;
	size_t fs_size;
	fz_codec_fn fs_codec;
	void (*fs_prep)(void *m);       /* room for messages by reference */
	void (*fs_fini)(void *m);
};

#define CODEC(name, type)                                       \
	static void fz_##name(struct nc_xdr *x, void *m)        \
	{                                                       \
		nc_wire_##name(x, (type *)m);                   \
	}
CODEC(connect_req, struct nc_connect_req)
CODEC(connect_rep, struct nc_connect_rep)
CODEC(auth, struct nc_auth_msg)
CODEC(ost_register_req, struct nc_ost_register_req)
CODEC(ost_list_rep, struct nc_ost_list_rep)
CODEC(statfs_rep, struct nc_statfs_rep)
CODEC(name_req, struct nc_name_req)
CODEC(fid_req, struct nc_fid_req)
CODEC(create_req, struct nc_create_req)
CODEC(fid_grant, struct nc_fid_grant)
CODEC(pack_alloc, struct nc_pack_alloc)
CODEC(pack_commit, struct nc_pack_commit)
CODEC(pack_commit_rep, struct nc_pack_commit_rep)
CODEC(pack_switch, struct nc_pack_switch)
CODEC(migrate_req, struct nc_migrate_req)
CODEC(pack_list, struct nc_pack_list)
CODEC(changelog_req, struct nc_changelog_req)
CODEC(changelog_rep, struct nc_changelog_rep)
CODEC(pack_files, struct nc_pack_files)
CODEC(lookup_many_req, struct nc_lookup_many)
CODEC(lookup_many_rep, struct nc_lookup_many)
CODEC(setattr_req, struct nc_setattr_req)
CODEC(rename_req, struct nc_rename_req)
CODEC(readdir_req, struct nc_readdir_req)
CODEC(readdir_rep, struct nc_readdir_rep)
CODEC(attr_rep, struct nc_attr_rep)
CODEC(layout_msg, struct nc_layout_msg)
CODEC(size_req, struct nc_size_req)
CODEC(xattr_req, struct nc_xattr_req)
CODEC(bytes_rep, struct nc_bytes_rep)
CODEC(obj_req, struct nc_obj_req)
CODEC(obj_rep, struct nc_obj_rep)
CODEC(verify_rep, struct nc_verify_rep)
CODEC(watch_rep, struct nc_watch_rep)
CODEC(shard_req, struct nc_shard_req)
CODEC(ost_admin_req, struct nc_ost_admin_req)
CODEC(pool_req, struct nc_pool_req)
CODEC(pool_info, struct nc_pool_info)
CODEC(pool_list_rep, struct nc_pool_list_rep)
#undef CODEC

/* Messages whose entries travel by reference: the decoder writes into room
 * the caller gives it (as the servers do), or allocates (readdir). */
static void prep_pack_commit(void *m)
{
	((struct nc_pack_commit *)m)->pc_creates =
		calloc(NC_PACK_COMMIT_MAX, sizeof(struct nc_create_req));
}

static void fini_pack_commit(void *m)
{
	free(((struct nc_pack_commit *)m)->pc_creates);
}

static void prep_lookup_many(void *m)
{
	((struct nc_lookup_many *)m)->lm_ents =
		calloc(NC_LOOKUP_MANY_MAX, sizeof(struct nc_lookup_ent));
}

static void fini_lookup_many(void *m)
{
	free(((struct nc_lookup_many *)m)->lm_ents);
}

static void prep_readdir_rep(void *m)
{
	((struct nc_readdir_rep *)m)->dr_ents = NULL;
}

static void fini_readdir_rep(void *m)
{
	nc_readdir_rep_fini(m);
}

#define SHAPE(name, type) { #name, sizeof(type), fz_##name, NULL, NULL }
#define SHAPE_REF(name, type, prep, fini) { #name, sizeof(type), fz_##name, prep, fini }
static const struct fz_shape fz_shapes[] = {
	SHAPE(connect_req, struct nc_connect_req),
	SHAPE(connect_rep, struct nc_connect_rep),
	SHAPE(auth, struct nc_auth_msg),
	SHAPE(ost_register_req, struct nc_ost_register_req),
	SHAPE(ost_list_rep, struct nc_ost_list_rep),
	SHAPE(statfs_rep, struct nc_statfs_rep),
	SHAPE(name_req, struct nc_name_req),
	SHAPE(fid_req, struct nc_fid_req),
	SHAPE(create_req, struct nc_create_req),
	SHAPE(fid_grant, struct nc_fid_grant),
	SHAPE(pack_alloc, struct nc_pack_alloc),
	SHAPE_REF(pack_commit, struct nc_pack_commit, prep_pack_commit, fini_pack_commit),
	SHAPE(pack_commit_rep, struct nc_pack_commit_rep),
	SHAPE(pack_switch, struct nc_pack_switch),
	SHAPE(migrate_req, struct nc_migrate_req),
	SHAPE(pack_list, struct nc_pack_list),
	SHAPE(changelog_req, struct nc_changelog_req),
	SHAPE(changelog_rep, struct nc_changelog_rep),
	SHAPE(pack_files, struct nc_pack_files),
	SHAPE_REF(lookup_many_req, struct nc_lookup_many, prep_lookup_many, fini_lookup_many),
	SHAPE_REF(lookup_many_rep, struct nc_lookup_many, prep_lookup_many, fini_lookup_many),
	SHAPE(setattr_req, struct nc_setattr_req),
	SHAPE(rename_req, struct nc_rename_req),
	SHAPE(readdir_req, struct nc_readdir_req),
	SHAPE_REF(readdir_rep, struct nc_readdir_rep, prep_readdir_rep, fini_readdir_rep),
	SHAPE(attr_rep, struct nc_attr_rep),
	SHAPE(layout_msg, struct nc_layout_msg),
	SHAPE(size_req, struct nc_size_req),
	SHAPE(xattr_req, struct nc_xattr_req),
	SHAPE(bytes_rep, struct nc_bytes_rep),
	SHAPE(obj_req, struct nc_obj_req),
	SHAPE(obj_rep, struct nc_obj_rep),
	SHAPE(verify_rep, struct nc_verify_rep),
	SHAPE(shard_req, struct nc_shard_req),
	SHAPE(ost_admin_req, struct nc_ost_admin_req),
	SHAPE(pool_req, struct nc_pool_req),
	SHAPE(pool_info, struct nc_pool_info),
	SHAPE(pool_list_rep, struct nc_pool_list_rep),
	/* Appended: a shape's index is the first byte of its seeds. */
	SHAPE(watch_rep, struct nc_watch_rep),
};
#define FZ_NSHAPES (sizeof(fz_shapes) / sizeof(fz_shapes[0]))

/* Decodes @len bytes of @buf into a new message; NULL when refused. */
static void *fz_decode(const struct fz_shape *sh, const uint8_t *buf, size_t len)
{
	void *m = malloc(sh->fs_size);
	struct nc_xdr x;

	if (!m)
		abort();
	/* Poison: a field the decoder forgets would show in the round trip. */
	memset(m, 0xa5, sh->fs_size);
	if (sh->fs_prep)
		sh->fs_prep(m);
	nc_xdr_init_decode(&x, buf, len);
	sh->fs_codec(&x, m);
	if (nc_xdr_finish(&x)) {
		if (sh->fs_fini)
			sh->fs_fini(m);
		free(m);
		return NULL;
	}
	return m;
}

static void fz_free(const struct fz_shape *sh, void *m)
{
	if (sh->fs_fini)
		sh->fs_fini(m);
	free(m);
}

/* Encodes @m; the bytes in a new buffer and their count, NULL when the
 * encoder refuses. */
static uint8_t *fz_encode(const struct fz_shape *sh, void *m, size_t *len)
{
	size_t cap = NC_MAX_BODY * 2;
	uint8_t *buf = malloc(cap);
	struct nc_xdr x;

	if (!buf)
		abort();
	nc_xdr_init_encode(&x, buf, cap);
	sh->fs_codec(&x, m);
	if (x.x_err) {
		free(buf);
		return NULL;
	}
	*len = x.x_pos;
	return buf;
}

static void fz_header(const uint8_t *data, size_t size)
{
	uint8_t hdr[NC_HDR_LEN];
	struct nc_msg_hdr h;

	if (size < NC_HDR_LEN)
		return;
	memcpy(hdr, data, NC_HDR_LEN);
	memset(&h, 0, sizeof(h));
	if (nc_hdr_decode(hdr, &h) == 0) {
		uint8_t again[NC_HDR_LEN];
		struct nc_msg_hdr h2;

		memset(&h2, 0, sizeof(h2));
		nc_hdr_encode(&h, again);
		if (nc_hdr_decode(again, &h2) || memcmp(&h, &h2, sizeof(h)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct fz_shape *sh;
	uint8_t *body, *enc1, *enc2;
	size_t len = 0, len1 = 0, len2 = 0;
	void *m, *m2;

	fz_header(data, size);
	if (size < 1)
		return 0;
	sh = &fz_shapes[data[0] % FZ_NSHAPES];
	len = size - 1;
	/* A copy of exactly the body's size, so a read past it is caught. */
	body = malloc(len ? len : 1);
	if (!body)
		abort();
	memcpy(body, data + 1, len);
	m = fz_decode(sh, body, len);
	if (!m)
		goto out_body;
	enc1 = fz_encode(sh, m, &len1);
	if (!enc1)
		goto out_m;
	m2 = fz_decode(sh, enc1, len1);
	if (!m2)
		abort();        /* our own encoding must decode */
	enc2 = fz_encode(sh, m2, &len2);
	if (!enc2 || len2 != len1 || memcmp(enc1, enc2, len1))
		abort();        /* and come out the same */
	free(enc2);
	fz_free(sh, m2);
	free(enc1);
out_m:
	fz_free(sh, m);
out_body:
	free(body);
	return 0;
}
