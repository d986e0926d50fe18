/* SPDX-License-Identifier: MIT */
/*
 * The data path: a request is split on chunk boundaries (common/layout.h)
 * and every piece goes to its OST at once, all in flight together; read
 * replies land straight in the caller's buffer.  A piece that failed
 * because its connection dropped is retried synchronously (object reads and
 * writes are idempotent), which also rides out an OSS restart.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/errors.h"
#include "common/log.h"
#include "libclient/cl_int.h"


int cl_piece_prepare(struct nacre_fs *fs, const struct nc_fid *fid,
		     const struct nc_layout *l, struct cl_piece *p, uint16_t op)
{
	struct nc_xdr x;
	int rc;

	if (p->ip_ext.e_stripe >= l->l_stripe_count)
		return -NC_E_LAYOUT;
	rc = cl_ost_conn(fs, l->l_shards[p->ip_ext.e_stripe].ls_ost, &p->ip_conn);
	if (rc)
		return rc;
	memset(&p->ip_req, 0, sizeof(p->ip_req));
	p->ip_req.or_ost = l->l_shards[p->ip_ext.e_stripe].ls_ost;
	p->ip_req.or_fid = *nc_layout_obj_fid(l, fid);
	p->ip_req.or_off = p->ip_ext.e_obj_off;
	p->ip_req.or_len = p->ip_ext.e_len;
	nc_xdr_init_encode(&x, p->ip_body, sizeof(p->ip_body));
	nc_wire_obj_req(&x, &p->ip_req);
	if (x.x_err)
		return x.x_err;
	nc_call_init(&p->ip_call, op, p->ip_body, (uint32_t)x.x_pos);
	return 0;
}

int cl_pieces_run(struct cl_piece *p, int n, bool retry)
{
	struct nc_wait w;
	int rc = 0;

	nc_wait_init(&w);
	for (int i = 0; i < n; i++) {
		int rc2;

		p[i].ip_call.c_wait = &w;
		rc2 = nc_cconn_submit(p[i].ip_conn, &p[i].ip_call);
		/* Never queued.  A connect that timed out says the OST is
		 * silent (cl_ost_note_result()), as a request that did would. */
		if (rc2)
			p[i].ip_call.c_status = rc2 == -ETIMEDOUT ? -ETIMEDOUT : -ENOTCONN;
	}
	nc_wait_all(&w);
	nc_wait_fini(&w);
	for (int i = 0; i < n; i++) {
		int st = p[i].ip_call.c_status;

		if (retry && (st == -ENOTCONN || st == -ECONNREFUSED || st == -ETIMEDOUT)) {
			nc_call_fini(&p[i].ip_call);
			p[i].ip_call.c_wait = NULL;
			st = nc_cconn_call(p[i].ip_conn, &p[i].ip_call);
		}
		p[i].ip_call.c_status = st;
		if (st && !rc) {
			rc = st;
			if (retry)
				nc_warn("client", "%s on OST %u: %s",
					nc_op_name(p[i].ip_call.c_opcode), p[i].ip_req.or_ost,
					nc_strerror(st));
		}
	}
	return rc;
}

void cl_pieces_fini(struct cl_piece *p, int n)
{
	for (int i = 0; i < n; i++)
		nc_call_fini(&p[i].ip_call);
}

bool cl_one_piece(const struct nc_fid *fid, const struct nc_layout *layout, uint64_t off,
		  uint32_t len, struct nc_fid *ofid, struct nc_layout *l, struct nc_extent *ext)
{
	*l = *layout;
	*ofid = *fid;
	if (l->l_flags & NC_LAYOUT_PACKED) {
		ofid->f_seq = NC_PACK_FID_SEQ;
		ofid->f_oid = l->l_pack_id;
		off += l->l_pack_off;
		l->l_flags = 0;
	}
	if (nc_layout_map(l, off, len, ext, 1) != 1 || ext->e_len != len)
		return false;
	return !(l->l_shards[ext->e_stripe].ls_flags & NC_SHARD_STALE);
}

/*
 * Plain striping: reads (@opcode OBJ_READ, into @buf) or writes (OBJ_WRITE,
 * from @buf) [off, off + len), CL_IO_BATCH pieces in flight at a time;
 * with @retry, a piece whose OST does not answer is retried for the
 * client's retry time (riding out an OSS restart).  @failed (may be NULL)
 * gets a bit per stripe whose piece failed; an OST that timed out counts
 * as silent for the client's other I/O (cl_ost_note_result()).
 */
static int plain_io(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		    uint16_t opcode, uint8_t *buf, size_t len, uint64_t off, bool retry,
		    uint64_t *failed)
{
	struct nc_extent ext[CL_IO_BATCH];
	struct cl_piece *p;
	size_t done = 0;
	int rc = 0;

	p = calloc(CL_IO_BATCH, sizeof(*p));
	if (!p)
		return -ENOMEM;
	while (done < len) {
		int n = nc_layout_map(l, off + done, len - done, ext, CL_IO_BATCH);
		uint64_t batch = 0;

		if (n <= 0) {
			rc = n < 0 ? n : -NC_E_LAYOUT;
			break;
		}
		for (int i = 0; i < n; i++) {
			uint8_t *at = buf + (ext[i].e_file_off - off);

			p[i].ip_ext = ext[i];
			rc = cl_piece_prepare(fs, fid, l, &p[i], opcode);
			if (rc) {
				cl_pieces_fini(p, i);
				goto out;
			}
			if (opcode == NC_OP_OBJ_READ) {
				p[i].ip_call.c_bulk_dst = at;
				p[i].ip_call.c_bulk_dst_cap = ext[i].e_len;
			} else {
				p[i].ip_call.c_bulk = at;
				p[i].ip_call.c_bulk_len = ext[i].e_len;
			}
			batch += ext[i].e_len;
		}
		rc = cl_pieces_run(p, n, retry);
		for (int i = 0; i < n; i++) {
			int st = p[i].ip_call.c_status;

			cl_ost_note_result(fs, p[i].ip_req.or_ost, st);
			if (st && failed)
				*failed |= 1ull << p[i].ip_ext.e_stripe;
		}
		for (int i = 0; !rc && opcode == NC_OP_OBJ_READ && i < n; i++) {
			uint32_t got = p[i].ip_call.c_rep_bulk_len;

			/* Past an object's end lies a hole: zeros. */
			if (got < p[i].ip_ext.e_len)
				memset(buf + (p[i].ip_ext.e_file_off - off) + got, 0,
				       p[i].ip_ext.e_len - got);
		}
		cl_pieces_fini(p, n);
		if (rc)
			break;
		done += batch;
	}
out:
	free(p);
	return rc;
}

ssize_t cl_io_read(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		   void *buf, size_t len, uint64_t off)
{
	int rc = plain_io(fs, fid, l, NC_OP_OBJ_READ, buf, len, off, true, NULL);

	return rc ? rc : (ssize_t)len;
}

int cl_io_write(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		const void *buf, size_t len, uint64_t off)
{
	/* Written from, never into: the cast only shares the loop. */
	int rc = plain_io(fs, fid, l, NC_OP_OBJ_WRITE, (uint8_t *)(uintptr_t)buf, len, off, true,
			  NULL);

	/* Reads ahead made while the bytes changed are suspect. */
	cl_ra_file_changed(fs, fid);
	return rc;
}

int cl_io_write_once(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		     const void *buf, size_t len, uint64_t off, uint64_t *failed)
{
	int rc = plain_io(fs, fid, l, NC_OP_OBJ_WRITE, (uint8_t *)(uintptr_t)buf, len, off, false,
			  failed);

	cl_ra_file_changed(fs, fid);
	return rc;
}

int cl_io_objects(struct nacre_fs *fs, const struct nc_fid *fid, const struct nc_layout *l,
		  uint16_t opcode, uint64_t file_size, uint64_t *failed)
{
	struct cl_piece *p;
	uint32_t idx[NC_MAX_STRIPES];
	int rc = 0, n = 0;

	if (l->l_stripe_count > NC_MAX_STRIPES)
		return -NC_E_LAYOUT;
	p = calloc(l->l_stripe_count ? l->l_stripe_count : 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (failed)
		*failed = 0;
	for (uint32_t s = 0; s < l->l_stripe_count; s++) {
		/* Erasure-coded callers skip stale shards: rebuild rewrites them. */
		if (failed && (l->l_shards[s].ls_flags & NC_SHARD_STALE))
			continue;
		p[n].ip_ext.e_stripe = s;
		p[n].ip_ext.e_obj_off =
			opcode == NC_OP_OBJ_TRUNC ? nc_layout_obj_size(l, s, file_size) : 0;
		p[n].ip_ext.e_len = 0;
		rc = cl_piece_prepare(fs, fid, l, &p[n], opcode);
		if (rc && failed) {
			*failed |= 1ull << s;
			rc = 0;
			continue;
		}
		if (rc)
			break;
		idx[n++] = s;
	}
	if (!rc)
		rc = cl_pieces_run(p, n, !failed);
	if (failed) {
		rc = 0;
		for (int i = 0; i < n; i++) {
			int st = p[i].ip_call.c_status;

			cl_ost_note_result(fs, p[i].ip_req.or_ost, st);
			if (st == -EINVAL || st == -ENOMEM || st == -NC_E_PROTO)
				rc = rc ? rc : st;
			else if (st)
				*failed |= 1ull << idx[i];
		}
	}
	cl_pieces_fini(p, n);
	free(p);
	return rc;
}

int cl_objects_settle(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		      struct nc_layout *l, uint64_t failed)
{
	uint32_t bad = 0;
	int rc;

	for (uint32_t s = 0; s < l->l_stripe_count; s++)
		bad += (failed >> s & 1) || (l->l_shards[s].ls_flags & NC_SHARD_STALE);
	/* A shard holds chunks of every row, so more than m bad shards loses
	 * some row. */
	if (bad > l->l_m)
		return -EIO;
	for (uint32_t s = 0; s < l->l_stripe_count; s++) {
		if (!(failed >> s & 1))
			continue;
		rc = cl_shard_set(fs, cred, fid, l, s, NC_SHARD_STALE, 0);
		if (rc)
			return rc;
	}
	return 0;
}
