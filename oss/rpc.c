/* SPDX-License-Identifier: MIT */
/* OSS request handlers: one small function per opcode. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/errors.h"
#include "common/log.h"
#include "oss/server.h"

/* Encodes an object reply body into @buf; returns its length. */
static uint32_t obj_rep_encode(uint8_t buf[32], uint64_t size, uint64_t blocks)
{
	struct nc_obj_rep rep = { .op_size = size, .op_blocks = blocks };
	struct nc_xdr x;

	nc_xdr_init_encode(&x, buf, 32);
	nc_wire_obj_rep(&x, &rep);
	return (uint32_t)x.x_pos;
}

static int reply_obj(struct nc_req *req, uint64_t size, uint64_t blocks,
		     const void *bulk, uint32_t bulk_len)
{
	uint8_t buf[32];

	return nc_req_reply(req, 0, buf, obj_rep_encode(buf, size, blocks), bulk, bulk_len);
}

/* The bytes go from the object's page cache to the socket, checked but
 * never copied through this process. */
static ssize_t obj_read(struct nc_req *req, struct oss_ost *ost, const struct nc_obj_req *o)
{
	struct oss_read_hold h;
	uint8_t buf[32];
	ssize_t n;

	if (o->or_len > NC_MAX_BULK) {
		nc_req_reply_err(req, -EINVAL);
		return -EINVAL;
	}
	n = oss_obj_read_hold(ost, &o->or_fid, o->or_off, o->or_len, &h);
	if (n <= 0) {
		if (n < 0)
			nc_req_reply_err(req, (int)n);
		else
			reply_obj(req, 0, 0, NULL, 0);
		return n;
	}
	nc_req_reply_file(req, buf, obj_rep_encode(buf, (uint64_t)n, 0), h.rh_fd,
			  (off_t)h.rh_off, (uint32_t)h.rh_len);
	oss_obj_read_release(&h);
	return (ssize_t)h.rh_len;
}

/* 0 when written. */
static int obj_write(struct nc_req *req, struct oss_ost *ost, const struct nc_obj_req *o)
{
	int rc;

	if (o->or_len != req->rq_hdr.mh_bulk_len) {
		nc_warn("oss", "req %" PRIu64 " from %s: write length %" PRIu64
			" but %u bulk bytes", req->rq_hdr.mh_reqid, req->rq_peer,
			o->or_len, req->rq_hdr.mh_bulk_len);
		nc_req_reply_err(req, -NC_E_PROTO);
		return -NC_E_PROTO;
	}
	rc = oss_obj_write(ost, &o->or_fid, o->or_off, req->rq_bulk, o->or_len);
	if (rc)
		nc_req_reply_err(req, rc);
	else
		reply_obj(req, o->or_len, 0, NULL, 0);
	return rc;
}

static void obj_stat(struct nc_req *req, struct oss_ost *ost, const struct nc_obj_req *o)
{
	uint64_t size, blocks;
	int rc = oss_obj_stat(ost, &o->or_fid, &size, &blocks);

	if (rc)
		nc_req_reply_err(req, rc);
	else
		reply_obj(req, size, blocks, NULL, 0);
}

static void ost_statfs(struct nc_req *req, struct oss_ost *ost)
{
	struct nc_statfs_rep rep = { 0 };
	uint8_t buf[64];
	struct nc_xdr x;
	int rc = oss_ost_statfs(ost, &rep.sr_stat);

	if (rc) {
		nc_req_reply_err(req, rc);
		return;
	}
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	nc_wire_statfs_rep(&x, &rep);
	nc_req_reply(req, 0, buf, (uint32_t)x.x_pos, NULL, 0);
}

static int reply_rc(struct nc_req *req, int rc)
{
	return rc ? nc_req_reply_err(req, rc) : reply_obj(req, 0, 0, NULL, 0);
}

/* OBJ_LOCK: rows [or_off, or_off + or_len) of file or_fid, owned by the
 * requesting connection; never waits (-EAGAIN: the client retries). */
static void obj_lock(struct nc_req *req, struct oss_server *oss, const struct nc_obj_req *o)
{
	int rc = oss_lock_try(oss_server_locks(oss), &o->or_fid, o->or_off, o->or_len,
			      nc_srv_conn_id(req->rq_conn), NC_LOCK_LEASE_MS);

	if (rc == -ENOSPC)
		nc_warn("oss", "req %" PRIu64 " from %s: row lock table full",
			req->rq_hdr.mh_reqid, req->rq_peer);
	else if (rc && rc != -EAGAIN)
		nc_warn("oss", "req %" PRIu64 " from %s: lock of fid " NC_FID_FMT ": %s",
			req->rq_hdr.mh_reqid, req->rq_peer, NC_FID_ARGS(&o->or_fid),
			nc_strerror(rc));
	reply_rc(req, rc);
}

static void obj_unlock(struct nc_req *req, struct oss_server *oss, const struct nc_obj_req *o)
{
	int rc = oss_lock_release(oss_server_locks(oss), &o->or_fid, o->or_off, o->or_len,
				  nc_srv_conn_id(req->rq_conn));

	/* -ENOENT after a lease expired is worth knowing: the writer ran
	 * longer than NC_LOCK_LEASE_MS. */
	if (rc == -ENOENT)
		nc_warn("oss", "req %" PRIu64 " from %s: unlock of rows %" PRIu64 "+%" PRIu64
			" of fid " NC_FID_FMT " not held (lease expired?)",
			req->rq_hdr.mh_reqid, req->rq_peer, o->or_off, o->or_len,
			NC_FID_ARGS(&o->or_fid));
	reply_rc(req, rc);
}

/* OBJ_WATCH: the rows other connections lock on or_fid while a rebuild
 * runs (or_flags: start, fetch, stop). */
static void obj_watch(struct nc_req *req, struct oss_server *oss, const struct nc_obj_req *o)
{
	struct oss_locks *locks = oss_server_locks(oss);
	uint64_t owner = nc_srv_conn_id(req->rq_conn);
	struct nc_watch_rep rep = { 0 };
	uint8_t buf[8 + NC_WATCH_MAX * 16];
	struct nc_xdr x;
	int rc;

	switch (o->or_flags) {
	case NC_WATCH_START:
		rc = oss_watch_start(locks, &o->or_fid, owner, NC_LOCK_LEASE_MS);
		if (rc == -ENOSPC)
			nc_warn("oss", "req %" PRIu64 " from %s: watch table full",
				req->rq_hdr.mh_reqid, req->rq_peer);
		reply_rc(req, rc);
		return;
	case NC_WATCH_STOP:
		reply_rc(req, oss_watch_stop(locks, &o->or_fid, owner));
		return;
	case NC_WATCH_FETCH:
		break;
	default:
		nc_req_reply_err(req, -EINVAL);
		return;
	}
	rc = oss_watch_fetch(locks, &o->or_fid, owner, NC_LOCK_LEASE_MS, rep.wr_start,
			     rep.wr_end, NC_WATCH_MAX, &rep.wr_count);
	if (rc) {
		nc_req_reply_err(req, rc);
		return;
	}
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	nc_wire_watch_rep(&x, &rep);
	nc_req_reply(req, 0, buf, (uint32_t)x.x_pos, NULL, 0);
}

/* The number of bad blocks found (0 on error too). */
static uint32_t obj_verify(struct nc_req *req, struct oss_ost *ost, const struct nc_obj_req *o)
{
	struct nc_verify_rep rep = { .vr_block = OSS_CSUM_BLOCK };
	uint8_t buf[16 + 8 * NC_VERIFY_MAX];
	struct nc_xdr x;
	bool more = false;
	int rc;

	rc = oss_obj_verify(ost, &o->or_fid, o->or_off, o->or_len, rep.vr_bad, NC_VERIFY_MAX,
			    &rep.vr_count, &more);
	if (rc) {
		nc_req_reply_err(req, rc);
		return 0;
	}
	rep.vr_more = more;
	if (rep.vr_count)
		nc_warn("oss", "req %" PRIu64 " from %s: OST %u object " NC_FID_FMT
			": %u%s bad block(s), the first at offset %" PRIu64,
			req->rq_hdr.mh_reqid, req->rq_peer, o->or_ost, NC_FID_ARGS(&o->or_fid),
			rep.vr_count, more ? "+" : "", rep.vr_bad[0]);
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	nc_wire_verify_rep(&x, &rep);
	if (x.x_err) {
		nc_req_reply_err(req, x.x_err);
		return rep.vr_count;
	}
	nc_req_reply(req, 0, buf, (uint32_t)x.x_pos, NULL, 0);
	return rep.vr_count;
}

void oss_handle(struct nc_req *req, void *arg)
{
	struct oss_server *oss = arg;
	uint16_t op = req->rq_hdr.mh_opcode;
	struct nc_obj_req o = { 0 };
	struct oss_ost *ost;
	struct nc_xdr x;
	int rc;

	/* Every OSS opcode carries an nc_obj_req (contiguous, but OBJ_WATCH). */
	if ((op < NC_OP_OBJ_READ || op > NC_OP_OBJ_VERIFY) && op != NC_OP_OBJ_WATCH) {
		nc_req_reply_err(req, -EOPNOTSUPP);
		return;
	}
	nc_xdr_init_decode(&x, req->rq_body, req->rq_hdr.mh_body_len);
	nc_wire_obj_req(&x, &o);
	rc = nc_xdr_finish(&x);
	if (rc) {
		nc_warn("oss", "req %" PRIu64 " from %s: malformed %s body",
			req->rq_hdr.mh_reqid, req->rq_peer, nc_op_name(op));
		nc_req_reply_err(req, rc);
		return;
	}
	if (op != NC_OP_OBJ_WRITE && req->rq_hdr.mh_bulk_len) {
		nc_req_reply_err(req, -NC_E_PROTO);
		return;
	}
	ost = oss_server_ost(oss, o.or_ost);
	if (!ost) {
		nc_req_reply_err(req, -ENODEV);
		return;
	}
	nc_debug("oss", "req %" PRIu64 " from %s: %s ost %u fid " NC_FID_FMT
		 " off %" PRIu64 " len %" PRIu64, req->rq_hdr.mh_reqid, req->rq_peer,
		 nc_op_name(op), o.or_ost, NC_FID_ARGS(&o.or_fid), o.or_off, o.or_len);
	switch (op) {
	case NC_OP_OBJ_READ:
		oss_metrics_read(oss_server_metrics(oss), obj_read(req, ost, &o));
		break;
	case NC_OP_OBJ_WRITE:
		if (obj_write(req, ost, &o) == 0)
			oss_metrics_write(oss_server_metrics(oss), o.or_len);
		break;
	case NC_OP_OBJ_TRUNC:
		reply_rc(req, oss_obj_truncate(ost, &o.or_fid, o.or_off));
		break;
	case NC_OP_OBJ_PUNCH:
		reply_rc(req, oss_obj_punch(ost, &o.or_fid, o.or_off, o.or_len));
		break;
	case NC_OP_OBJ_DESTROY:
		reply_rc(req, oss_obj_destroy(ost, &o.or_fid));
		break;
	case NC_OP_OBJ_SYNC:
		reply_rc(req, oss_obj_sync(ost, &o.or_fid));
		break;
	case NC_OP_OBJ_STAT:
		obj_stat(req, ost, &o);
		break;
	case NC_OP_OST_STATFS:
		ost_statfs(req, ost);
		break;
	case NC_OP_OBJ_LOCK:
		obj_lock(req, oss, &o);
		break;
	case NC_OP_OBJ_UNLOCK:
		obj_unlock(req, oss, &o);
		break;
	case NC_OP_OBJ_WATCH:
		obj_watch(req, oss, &o);
		break;
	case NC_OP_OBJ_VERIFY:
		oss_metrics_verify(oss_server_metrics(oss), obj_verify(req, ost, &o));
		break;
	default:
		nc_req_reply_err(req, -EOPNOTSUPP);
		break;
	}
}
