/* SPDX-License-Identifier: MIT */
/*
 * MDS request handlers: decode, call the namespace, encode the reply.  One
 * small function per opcode, found through a table built from the opcode
 * list.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/errors.h"
#include "common/log.h"
#include "mds/server.h"

typedef int (*mds_op_fn)(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in);

/*
 * Group commit (see mds/server.c): the writer thread runs a batch of
 * namespace changes in one LMDB transaction, and their replies are held
 * here until that transaction is durable, so no client hears "done" for a
 * change a crash could still undo.
 */
struct held_reply {
	struct nc_req *hr_req;
	int hr_status;
	uint32_t hr_len;
	struct held_reply *hr_next;
	uint8_t hr_body[];
};

static __thread struct held_reply *held_head, **held_tail;

void mds_rpc_hold_begin(void)
{
	held_head = NULL;
	held_tail = &held_head;
}

void mds_rpc_hold_end(int commit_rc)
{
	struct held_reply *h = held_head;

	held_head = NULL;
	held_tail = NULL;
	while (h) {
		struct held_reply *next = h->hr_next;

		if (commit_rc && !h->hr_status)
			nc_req_reply_err(h->hr_req, commit_rc);
		else
			nc_req_reply(h->hr_req, h->hr_status, h->hr_body, h->hr_len, NULL, 0);
		free(h);
		h = next;
	}
}

/*
 * Reply reconstruction (mds/ns_reply.c): the change being executed for a
 * slotted request, whose reply is recorded, in the batch, when it is
 * given.  Writer thread only.
 */
static __thread struct mds_ns *replay_ns;
static __thread struct nc_req *replay_req;

/* The request uses a reply slot of a client that named itself. */
static bool req_slotted(const struct nc_req *req)
{
	return req->rq_has_client && (req->rq_hdr.mh_flags & NC_MF_SLOT) &&
	       !nc_op_is_idempotent(req->rq_hdr.mh_opcode);
}

static uint32_t req_slot(const struct nc_req *req)
{
	return req->rq_hdr.mh_flags >> NC_MF_SLOT_SHIFT;
}

/* Records the reply of the change just executed for @req. */
static void replay_record(struct nc_req *req, int status, const void *body, uint32_t len)
{
	struct mds_reply_rec rec = {
		.rr_seq = req->rq_hdr.mh_reqid,
		.rr_opcode = req->rq_hdr.mh_opcode,
		.rr_status = status,
		.rr_len = len,
		.rr_body = (uint8_t *)body,
	};
	int rc;

	/* Written straight into the batch (mds_db_txn_begin_flat): a record
	 * that cannot be written leaves the batch unable to commit, and every
	 * change of it fails, this one included, rather than commit without
	 * the record a resend needs. */
	rc = mds_ns_reply_save(replay_ns, req->rq_client, req_slot(req), &rec);
	if (rc)
		nc_error("mds", "req %" PRIu64 " from %s: reply not recorded (%s); its batch "
			 "fails", req->rq_hdr.mh_reqid, req->rq_peer, nc_strerror(rc));
}

/*
 * Every MDS reply goes through here: sent now, or held for the batch.
 * Returns 0 whatever became of the reply: @req is answered and freed even
 * when its client is gone and the reply could not be sent, and a handler
 * returns what this returns, so mds_handle_op() must never take that for
 * a failure to answer and answer the freed request a second time.
 */
static int mds_reply(struct nc_req *req, int status, const void *body, uint32_t len)
{
	struct held_reply *h;

	if (req == replay_req) {
		replay_req = NULL;
		replay_record(req, status, body, len);
	}
	if (!held_tail) {
		nc_req_reply(req, status, body, len, NULL, 0);
		return 0;
	}
	if (status)
		len = 0;
	h = malloc(sizeof(*h) + len);
	if (!h) {
		nc_req_reply_err(req, -ENOMEM); /* nothing is claimed */
		return 0;
	}
	h->hr_req = req;
	h->hr_status = status;
	h->hr_len = len;
	h->hr_next = NULL;
	if (len)
		memcpy(h->hr_body, body, len);
	*held_tail = h;
	held_tail = &h->hr_next;
	return 0;
}

/* Decodes the request body with @fn; -NC_E_PROTO (logged) on mismatch. */
static int decode(struct nc_req *req, struct nc_xdr *in, nc_xdr_fn fn, void *msg)
{
	int rc;

	fn(in, msg);
	rc = nc_xdr_finish(in);
	if (rc && rc != -ENAMETOOLONG)
		nc_warn("mds", "req %" PRIu64 " from %s: malformed %s body", req->rq_hdr.mh_reqid,
			req->rq_peer, nc_op_name(req->rq_hdr.mh_opcode));
	return rc;
}

/* Encodes @msg with @fn and replies; large replies go through the heap. */
static int reply_msg(struct nc_req *req, nc_xdr_fn fn, void *msg)
{
	size_t cap = 4096;
	struct nc_xdr x;

	for (;;) {
		uint8_t *buf = malloc(cap);
		int rc;

		if (!buf)
			return mds_reply(req, -ENOMEM, NULL, 0);
		nc_xdr_init_encode(&x, buf, cap);
		fn(&x, msg);
		if (x.x_err == -EOVERFLOW && cap < NC_MAX_BODY) {
			free(buf);
			cap = NC_MAX_BODY;
			continue;
		}
		if (x.x_err)
			rc = mds_reply(req, x.x_err, NULL, 0);
		else
			rc = mds_reply(req, 0, buf, (uint32_t)x.x_pos);
		free(buf);
		return rc;
	}
}

/* Does the reply carry @l (a file's layout: objects, or inline bytes)? */
static bool layout_sent(const struct nc_layout *l)
{
	return l && (l->l_stripe_count || (l->l_flags & NC_LAYOUT_INLINE));
}

/* @inl: an inline file's bytes (attr->a_size of them) to send with its
 * layout; NULL sends the layout alone. */
static int reply_attr_inline(struct nc_req *req, const struct nc_attr *attr,
			     const struct nc_layout *layout, const void *inl)
{
	struct nc_attr_rep rep;

	memset(&rep, 0, sizeof(rep));
	rep.ar_attr = *attr;
	if (layout_sent(layout)) {
		rep.ar_has_layout = 1;
		rep.ar_layout = *layout;
		if ((layout->l_flags & NC_LAYOUT_INLINE) && inl) {
			rep.ar_inline_sent = 1;
			rep.ar_inline = inl;
			rep.ar_inline_len = (uint32_t)attr->a_size;
		}
	}
	return reply_msg(req, (nc_xdr_fn)nc_wire_attr_rep, &rep);
}

static int reply_attr(struct nc_req *req, const struct nc_attr *attr,
		      const struct nc_layout *layout)
{
	return reply_attr_inline(req, attr, layout, NULL);
}

/* Every handler returns 0 after replying, or an error for the caller to
 * send. */

static int op_ost_register(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_ost_register_req rr;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_ost_register_req, &rr);

	if (rc)
		return rc;
	if (req->rq_peer_role != NC_ROLE_OSS)
		return -EPERM;
	rc = mds_server_ost_register(mds, &rr.rr_ost, nc_srv_conn_id(req->rq_conn));
	return rc ? rc : mds_reply(req, 0, NULL, 0);
}

static int op_ost_list(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_ost_list_rep *rep = calloc(1, sizeof(*rep));
	int rc;

	if (!rep)
		return -ENOMEM;
	mds_server_ost_list(mds, rep);
	rc = reply_msg(req, (nc_xdr_fn)nc_wire_ost_list_rep, rep);
	free(rep);
	return rc;
}

static int op_statfs(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_statfs_rep rep = { 0 };
	int rc = mds_ns_statfs(mds_server_ns(mds), &rep.sr_stat);

	return rc ? rc : reply_msg(req, (nc_xdr_fn)nc_wire_statfs_rep, &rep);
}

static int op_lookup(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_name_req m;
	struct nc_attr attr;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_name_req, &m);

	if (!rc)
		rc = mds_ns_lookup(mds_server_ns(mds), &m.nr_cred, &m.nr_parent, m.nr_name, &attr);
	if (!rc && (m.nr_flags & NC_LOOKUP_OPEN) && S_ISREG(attr.a_mode)) {
		struct nc_layout layout;
		uint8_t *inl;

		memset(&layout, 0, sizeof(layout));
		rc = mds_ns_open_check(mds_server_ns(mds), &m.nr_cred, &attr.a_fid, NC_OPEN_READ,
				       &attr, &layout, &inl);
		if (!rc)
			rc = reply_attr_inline(req, &attr, &layout, inl);
		free(inl);
		return rc;
	}
	return rc ? rc : reply_attr(req, &attr, NULL);
}

static int op_getattr(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_fid_req m;
	struct nc_attr attr;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_fid_req, &m);

	if (!rc)
		rc = mds_ns_getattr(mds_server_ns(mds), &m.fr_fid, &attr);
	return rc ? rc : reply_attr(req, &attr, NULL);
}

static int op_setattr(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_setattr_req m;
	struct nc_attr attr;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_setattr_req, &m);

	if (!rc)
		rc = mds_ns_setattr(mds_server_ns(mds), &m, &attr);
	return rc ? rc : reply_attr(req, &attr, NULL);
}

static int op_create(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_create_req *m = calloc(1, sizeof(*m));
	struct mds_ost_set *set = malloc(sizeof(*set));
	struct nc_layout layout;
	struct nc_attr attr;
	int rc = -ENOMEM;

	if (!m || !set)
		goto out;
	rc = decode(req, in, (nc_xdr_fn)nc_wire_create_req, m);
	if (rc)
		goto out;
	mds_server_ost_set(mds, set);
	memset(&layout, 0, sizeof(layout));
	rc = mds_ns_create(mds_server_ns(mds), m, set, &attr, &layout);
	if (!rc)
		rc = reply_attr(req, &attr, S_ISREG(attr.a_mode) ? &layout : NULL);
out:
	free(m);
	free(set);
	return rc;
}

static int op_link(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_rename_req m;
	struct nc_attr attr;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_rename_req, &m);

	if (!rc)
		rc = mds_ns_link(mds_server_ns(mds), &m.rn_cred, &m.rn_src, &m.rn_newparent,
				 m.rn_newname, &attr);
	return rc ? rc : reply_attr(req, &attr, NULL);
}

static int op_unlink(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_name_req m;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_name_req, &m);

	if (!rc)
		rc = mds_ns_unlink(mds_server_ns(mds), &m.nr_cred, &m.nr_parent, m.nr_name,
				   m.nr_flags & NC_UNLINK_DIR);
	if (rc)
		return rc;
	mds_server_kick_destroy(mds);
	return mds_reply(req, 0, NULL, 0);
}

static int op_rename(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_rename_req m;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_rename_req, &m);

	if (!rc)
		rc = mds_ns_rename(mds_server_ns(mds), &m);
	if (rc)
		return rc;
	mds_server_kick_destroy(mds);
	return mds_reply(req, 0, NULL, 0);
}

static int op_readdir(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_readdir_req m;
	struct nc_readdir_rep rep = { 0 };
	bool eof = false;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_readdir_req, &m);

	if (rc)
		return rc;
	if (m.rd_max == 0 || m.rd_max > NC_READDIR_MAX)
		m.rd_max = NC_READDIR_MAX;
	rep.dr_ents = calloc(m.rd_max, sizeof(*rep.dr_ents));
	if (!rep.dr_ents)
		return -ENOMEM;
	rc = mds_ns_readdir(mds_server_ns(mds), &m.rd_cred, &m.rd_fid, m.rd_cookie, m.rd_max,
			    rep.dr_ents, &rep.dr_count, &eof);
	rep.dr_eof = eof;
	if (!rc)
		rc = reply_msg(req, (nc_xdr_fn)nc_wire_readdir_rep, &rep);
	free(rep.dr_ents);
	return rc;
}

static int op_readlink(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_fid_req m;
	struct nc_bytes_rep rep;
	char target[NC_SYMLINK_MAX + 1];
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_fid_req, &m);

	if (!rc)
		rc = mds_ns_readlink(mds_server_ns(mds), &m.fr_fid, target, sizeof(target));
	if (rc < 0)
		return rc;
	rep.br_data = target;
	rep.br_len = (uint32_t)(rc < (int)sizeof(target) ? rc : (int)sizeof(target));
	return reply_msg(req, (nc_xdr_fn)nc_wire_bytes_rep, &rep);
}

static int op_open(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_fid_req m;
	struct nc_layout layout;
	struct nc_attr attr;
	uint8_t *inl;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_fid_req, &m);

	if (rc)
		return rc;
	memset(&layout, 0, sizeof(layout));
	rc = mds_ns_open_check(mds_server_ns(mds), &m.fr_cred, &m.fr_fid, m.fr_flags, &attr,
			       &layout, &inl);
	if (!rc)
		rc = reply_attr_inline(req, &attr, &layout, inl);
	free(inl);
	return rc;
}

static int op_getlayout(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_fid_req m;
	struct nc_layout_msg rep;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_fid_req, &m);

	if (rc)
		return rc;
	memset(&rep, 0, sizeof(rep));
	rep.sl_fid = m.fr_fid;
	rc = mds_ns_getlayout(mds_server_ns(mds), &m.fr_fid, &rep.sl_layout);
	return rc ? rc : reply_msg(req, (nc_xdr_fn)nc_wire_layout_msg, &rep);
}

static int op_setlayout(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_layout_msg m, rep;
	struct mds_ost_set *set;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_layout_msg, &m);

	if (rc)
		return rc;
	set = malloc(sizeof(*set));
	if (!set)
		return -ENOMEM;
	mds_server_ost_set(mds, set);
	memset(&rep, 0, sizeof(rep));
	rep.sl_fid = m.sl_fid;
	rc = mds_ns_setlayout(mds_server_ns(mds), &m.sl_cred, &m.sl_fid, &m.sl_layout, set,
			      &rep.sl_layout);
	free(set);
	if (rc)
		return rc;
	mds_server_kick_destroy(mds);
	return reply_msg(req, (nc_xdr_fn)nc_wire_layout_msg, &rep);
}

static int op_size_update(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_size_req m;
	struct nc_attr attr;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_size_req, &m);

	if (!rc)
		rc = mds_ns_size_update(mds_server_ns(mds), &m.su_fid, m.su_size, m.su_flags,
					&attr);
	return rc ? rc : reply_attr(req, &attr, NULL);
}

static int op_xattr_get(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_xattr_req m;
	struct nc_bytes_rep rep;
	void *buf;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_xattr_req, &m);

	if (rc)
		return rc;
	buf = malloc(NC_XATTR_VALUE_MAX);
	if (!buf)
		return -ENOMEM;
	rc = mds_ns_xattr_get(mds_server_ns(mds), &m.xr_cred, &m.xr_fid, m.xr_name, buf,
			      NC_XATTR_VALUE_MAX);
	if (rc >= 0) {
		rep.br_data = buf;
		rep.br_len = (uint32_t)(rc < NC_XATTR_VALUE_MAX ? rc : NC_XATTR_VALUE_MAX);
		rc = reply_msg(req, (nc_xdr_fn)nc_wire_bytes_rep, &rep);
	}
	free(buf);
	return rc;
}

static int op_xattr_set(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_xattr_req m;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_xattr_req, &m);

	if (!rc)
		rc = mds_ns_xattr_set(mds_server_ns(mds), &m.xr_cred, &m.xr_fid, m.xr_name,
				      m.xr_value, m.xr_value_len, m.xr_flags);
	return rc ? rc : mds_reply(req, 0, NULL, 0);
}

static int op_xattr_list(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_fid_req m;
	struct nc_bytes_rep rep;
	char *buf;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_fid_req, &m);

	if (rc)
		return rc;
	buf = malloc(NC_XATTR_LIST_MAX);
	if (!buf)
		return -ENOMEM;
	rc = mds_ns_xattr_list(mds_server_ns(mds), &m.fr_cred, &m.fr_fid, buf, NC_XATTR_LIST_MAX);
	if (rc >= 0) {
		rep.br_data = buf;
		rep.br_len = (uint32_t)(rc < NC_XATTR_LIST_MAX ? rc : NC_XATTR_LIST_MAX);
		rc = reply_msg(req, (nc_xdr_fn)nc_wire_bytes_rep, &rep);
	}
	free(buf);
	return rc;
}

static int op_xattr_del(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_xattr_req m;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_xattr_req, &m);

	if (!rc)
		rc = mds_ns_xattr_del(mds_server_ns(mds), &m.xr_cred, &m.xr_fid, m.xr_name);
	return rc ? rc : mds_reply(req, 0, NULL, 0);
}

static int op_shard_state(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_shard_req m;
	struct nc_layout_msg *rep;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_shard_req, &m);

	if (rc)
		return rc;
	rep = calloc(1, sizeof(*rep));
	if (!rep)
		return -ENOMEM;
	rep->sl_fid = m.ss_fid;
	rc = mds_ns_shard_state(mds_server_ns(mds), &m.ss_cred, &m.ss_fid, m.ss_shard, m.ss_set,
				m.ss_clear, &rep->sl_layout);
	if (!rc) {
		mds_metrics_stale(mds_server_metrics(mds), !!(m.ss_set & NC_SHARD_STALE),
				  !!(m.ss_clear & NC_SHARD_STALE));
		if (m.ss_set & NC_SHARD_STALE)
			nc_warn("mds", "req %" PRIu64 " from %s: shard %u of " NC_FID_FMT
				" marked stale", req->rq_hdr.mh_reqid, req->rq_peer, m.ss_shard,
				NC_FID_ARGS(&m.ss_fid));
		rc = reply_msg(req, (nc_xdr_fn)nc_wire_layout_msg, rep);
	}
	free(rep);
	return rc;
}

/* ---- small files ---- */

static int op_fid_grant(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_fid_grant m;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_fid_grant, &m);

	if (!rc)
		rc = mds_ns_fid_grant(mds_server_ns(mds), m.fg_count, &m.fg_seq, &m.fg_first,
				      &m.fg_count);
	return rc ? rc : reply_msg(req, (nc_xdr_fn)nc_wire_fid_grant, &m);
}

static int op_pack_alloc(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_pack_alloc *m = calloc(1, sizeof(*m));
	struct mds_ost_set *set = malloc(sizeof(*set));
	int rc = -ENOMEM;

	if (!m || !set)
		goto out;
	rc = decode(req, in, (nc_xdr_fn)nc_wire_pack_alloc, m);
	if (rc)
		goto out;
	mds_server_ost_set(mds, set);
	/* A request's layout is a template (a client that moves or rewrites
	 * files keeps their coding), or empty: the directory's. */
	if (m->pa_layout.l_flags & NC_LAYOUT_TEMPLATE) {
		struct nc_layout want = m->pa_layout;

		/* A file's geometry, and no directory beside it. */
		if (!nc_fid_is_zero(&m->pa_dir) || !want.l_stripe_count || !want.l_k ||
		    !want.l_stripe_size)
			rc = -EINVAL;
		else
			rc = mds_ns_pack_alloc_like(mds_server_ns(mds), &want, set, m->pa_avoid,
						    m->pa_navoid, &m->pa_layout);
	} else {
		rc = mds_ns_pack_alloc(mds_server_ns(mds), &m->pa_cred, &m->pa_dir, set,
				       m->pa_avoid, m->pa_navoid, &m->pa_layout);
	}
	if (!rc) {
		/* The id travels in l_pack_id; the layout is a plain object set. */
		struct nc_pack_alloc *r = m;

		r->pa_layout.l_flags = NC_LAYOUT_PACKED;
		r->pa_layout.l_pack_off = 0;
		r->pa_layout.l_pack_len = 0;
		r->pa_navoid = 0;
		rc = reply_msg(req, (nc_xdr_fn)nc_wire_pack_alloc, r);
	}
out:
	free(m);
	free(set);
	return rc;
}

/*
 * Many creates of packed files.  Running on the writer thread inside a
 * group-commit batch, each create is a nested transaction of its own (one
 * that fails leaves the others), and all of them become durable together
 * before the held reply goes out.
 */
static int op_pack_commit(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_pack_commit m = { 0 };
	struct nc_pack_commit_rep *rep = NULL;
	int rc = -ENOMEM;

	m.pc_creates = calloc(NC_PACK_COMMIT_MAX, sizeof(*m.pc_creates));
	rep = calloc(1, sizeof(*rep));
	if (!m.pc_creates || !rep)
		goto out;
	rc = decode(req, in, (nc_xdr_fn)nc_wire_pack_commit, &m);
	if (rc)
		goto out;
	for (uint32_t i = 0; i < m.pc_count; i++) {
		struct nc_create_req *cq = &m.pc_creates[i];
		int r = -EINVAL;

		memset(&rep->pr_attr[i], 0, sizeof(rep->pr_attr[i]));
		/* An inline file uses no pack. */
		if ((cq->cq_flags & (NC_CREATE_FID | NC_CREATE_PACKED)) ==
			    (NC_CREATE_FID | NC_CREATE_PACKED) &&
		    ((cq->cq_flags & NC_CREATE_INLINE) || cq->cq_layout.l_pack_id == m.pc_pack))
			r = mds_ns_create(mds_server_ns(mds), cq, NULL, &rep->pr_attr[i], NULL);
		rep->pr_status[i] = nc_status_from_err(r);
	}
	rep->pr_count = m.pc_count;
	if (m.pc_seal) {
		rc = mds_ns_pack_seal(mds_server_ns(mds), m.pc_pack);
		if (rc && rc != -ENOENT)
			goto out;
	}
	rc = reply_msg(req, (nc_xdr_fn)nc_wire_pack_commit_rep, rep);
out:
	free(m.pc_creates);
	free(rep);
	return rc;
}

static int op_pack_switch(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_pack_switch *m = calloc(1, sizeof(*m));
	struct mds_ost_set *set = malloc(sizeof(*set));
	struct nc_attr attr;
	int rc = -ENOMEM;

	if (!m || !set)
		goto out;
	rc = decode(req, in, (nc_xdr_fn)nc_wire_pack_switch, m);
	if (rc)
		goto out;
	mds_server_ost_set(mds, set);
	rc = mds_ns_pack_switch(mds_server_ns(mds), m, set, &attr, &m->ps_new);
	if (!rc)
		rc = reply_attr(req, &attr, &m->ps_new);
out:
	free(m);
	free(set);
	return rc;
}

static int op_migrate(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_migrate_req *m = calloc(1, sizeof(*m));
	struct mds_ost_set *set = malloc(sizeof(*set));
	struct nc_layout *out = malloc(sizeof(*out));
	struct nc_attr attr;
	int rc = -ENOMEM;

	if (!m || !set || !out)
		goto out;
	rc = decode(req, in, (nc_xdr_fn)nc_wire_migrate_req, m);
	if (rc)
		goto out;
	mds_server_ost_set(mds, set);
	/* --ost-exclude: the new objects go anywhere but there. */
	mds_ost_set_exclude(set, m->mg_exclude, m->mg_nexclude);
	rc = mds_ns_migrate(mds_server_ns(mds), m, set, &attr, out);
	if (!rc && !(m->mg_flags & NC_MIGRATE_ALLOC))
		mds_server_kick_destroy(mds);
	if (!rc)
		rc = reply_attr(req, &attr, out);
out:
	free(m);
	free(set);
	free(out);
	return rc;
}

/* The changelog names every file changed: root only, as in Lustre. */
static int op_changelog_read(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_changelog_rep *rep;
	struct nc_changelog_req m;
	uint32_t max;
	int rc;

	rc = decode(req, in, (nc_xdr_fn)nc_wire_changelog_req, &m);
	if (rc)
		return rc;
	if (m.cl_cred.c_uid != 0)
		return -EPERM;
	rep = calloc(1, sizeof(*rep));
	if (!rep)
		return -ENOMEM;
	max = m.cl_max < NC_CHANGELOG_MAX ? m.cl_max : NC_CHANGELOG_MAX;
	rc = mds_ns_changelog_read(mds_server_ns(mds), m.cl_seq, rep->cp_recs, max,
				   &rep->cp_count, &rep->cp_last);
	if (!rc)
		rc = reply_msg(req, (nc_xdr_fn)nc_wire_changelog_rep, rep);
	free(rep);
	return rc;
}

static int op_changelog_clear(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_changelog_req m;
	uint64_t cleared = 0;
	int rc;

	rc = decode(req, in, (nc_xdr_fn)nc_wire_changelog_req, &m);
	if (rc)
		return rc;
	if (m.cl_cred.c_uid != 0)
		return -EPERM;
	rc = mds_ns_changelog_clear(mds_server_ns(mds), m.cl_seq, &cleared);
	if (rc)
		return rc;
	nc_info("mds", "req %" PRIu64 " from %s: changelog cleared up to %" PRIu64 " (%" PRIu64
		" records)", req->rq_hdr.mh_reqid, req->rq_peer, m.cl_seq, cleared);
	return mds_reply(req, 0, NULL, 0);
}

static int op_pack_list(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_pack_list *m = calloc(1, sizeof(*m));
	int rc = -ENOMEM;

	if (!m)
		return rc;
	rc = decode(req, in, (nc_xdr_fn)nc_wire_pack_list, m);
	if (!rc)
		rc = mds_ns_pack_list(mds_server_ns(mds), m->pl_after, m->pl_packs,
				      NC_PACK_LIST_MAX, &m->pl_count);
	if (!rc)
		rc = reply_msg(req, (nc_xdr_fn)nc_wire_pack_list, m);
	free(m);
	return rc;
}

static int op_pack_files(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_pack_files *m = calloc(1, sizeof(*m));
	int rc = -ENOMEM;

	if (!m)
		return rc;
	rc = decode(req, in, (nc_xdr_fn)nc_wire_pack_files, m);
	if (!rc)
		rc = mds_ns_pack_files(mds_server_ns(mds), m->pf_pack, &m->pf_after, m->pf_fids,
				       NC_PACK_FILES_MAX, &m->pf_count);
	if (!rc)
		rc = reply_msg(req, (nc_xdr_fn)nc_wire_pack_files, m);
	free(m);
	return rc;
}

/* Many lookups with the open intent: the data loader's batch of names. */
static int op_lookup_many(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_lookup_many m = { .lm_count = 0 };
	uint32_t used = 0, done = 0;
	int rc = -ENOMEM;

	m.lm_ents = calloc(NC_LOOKUP_MANY_MAX, sizeof(*m.lm_ents));
	if (!m.lm_ents)
		return rc;
	rc = decode(req, in, (nc_xdr_fn)nc_wire_lookup_many_req, &m);
	if (rc)
		goto out;
	for (uint32_t i = 0; i < m.lm_count; i++, done++) {
		struct nc_lookup_ent *e = &m.lm_ents[i];
		struct nc_attr_rep *r = &e->le_rep;
		uint8_t *inl = NULL;
		int s;

		memset(r, 0, sizeof(*r));
		s = mds_ns_lookup(mds_server_ns(mds), &m.lm_cred, &e->le_parent, e->le_name,
				  &r->ar_attr);
		if (!s && S_ISREG(r->ar_attr.a_mode)) {
			/* Inline bytes while the reply has room for them: the
			 * client asks for the others again. */
			s = mds_ns_open_check(mds_server_ns(mds), &m.lm_cred, &r->ar_attr.a_fid,
					      NC_OPEN_READ, &r->ar_attr, &r->ar_layout,
					      used < NC_LOOKUP_MANY_INLINE_BUDGET ? &inl : NULL);
			r->ar_has_layout = !s && layout_sent(&r->ar_layout);
		}
		if (inl) {
			r->ar_inline_sent = 1;
			r->ar_inline = inl;     /* freed below */
			r->ar_inline_len = (uint32_t)r->ar_attr.a_size;
			used += r->ar_inline_len;
		}
		e->le_status = nc_status_from_err(s);
	}
	rc = reply_msg(req, (nc_xdr_fn)nc_wire_lookup_many_rep, &m);
out:
	for (uint32_t i = 0; i < done; i++)
		free((void *)m.lm_ents[i].le_rep.ar_inline);
	free(m.lm_ents);
	return rc;
}

static int op_ost_admin(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_ost_admin_req m;
	int rc = decode(req, in, (nc_xdr_fn)nc_wire_ost_admin_req, &m);

	if (!rc)
		rc = mds_server_ost_admin(mds, &m.oa_cred, m.oa_index, m.oa_op);
	return rc ? rc : mds_reply(req, 0, NULL, 0);
}

static int pool_change(struct mds_server *mds, const struct nc_pool_req *m)
{
	struct mds_ns *ns = mds_server_ns(mds);
	uint32_t bad = 0;
	int rc;

	switch (m->pr_op) {
	case NC_POOLOP_CREATE:
		return mds_ns_pool_create(ns, &m->pr_cred, m->pr_name);
	case NC_POOLOP_DESTROY:
		return mds_ns_pool_destroy(ns, &m->pr_cred, m->pr_name);
	case NC_POOLOP_ADD:
		rc = mds_ns_pool_add(ns, &m->pr_cred, m->pr_name, m->pr_osts, m->pr_count, &bad);
		break;
	case NC_POOLOP_REMOVE:
		rc = mds_ns_pool_remove(ns, &m->pr_cred, m->pr_name, m->pr_osts, m->pr_count,
					&bad);
		break;
	default:
		return -EINVAL;
	}
	if (rc && rc != -EPERM)
		nc_debug("mds", "pool %s: OST %u: %s", m->pr_name, bad, nc_strerror(rc));
	return rc;
}

static int op_pool(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_pool_req *m = malloc(sizeof(*m));
	int rc;

	if (!m)
		return -ENOMEM;
	rc = decode(req, in, (nc_xdr_fn)nc_wire_pool_req, m);
	if (!rc)
		rc = pool_change(mds, m);
	if (!rc)
		nc_info("mds", "OST pool %s changed (op %u)", m->pr_name, m->pr_op);
	free(m);
	return rc ? rc : mds_reply(req, 0, NULL, 0);
}

static int op_pool_list(struct mds_server *mds, struct nc_req *req, struct nc_xdr *in)
{
	struct nc_pool_req *m = malloc(sizeof(*m));
	struct nc_pool_list_rep *rep = malloc(sizeof(*rep));
	int rc = -ENOMEM;

	if (m && rep)
		rc = decode(req, in, (nc_xdr_fn)nc_wire_pool_req, m);
	if (!rc)
		rc = mds_ns_pool_list(mds_server_ns(mds), m->pr_name, rep);
	if (!rc)
		rc = reply_msg(req, (nc_xdr_fn)nc_wire_pool_list_rep, rep);
	free(rep);
	free(m);
	return rc;
}

static mds_op_fn op_table(uint16_t opcode)
{
	switch (opcode) {
	case NC_OP_OST_REGISTER: return op_ost_register;
	case NC_OP_OST_LIST: return op_ost_list;
	case NC_OP_MDS_STATFS: return op_statfs;
	case NC_OP_LOOKUP: return op_lookup;
	case NC_OP_GETATTR: return op_getattr;
	case NC_OP_SETATTR: return op_setattr;
	case NC_OP_CREATE: return op_create;
	case NC_OP_LINK: return op_link;
	case NC_OP_UNLINK: return op_unlink;
	case NC_OP_RENAME: return op_rename;
	case NC_OP_READDIR: return op_readdir;
	case NC_OP_READLINK: return op_readlink;
	case NC_OP_OPEN: return op_open;
	case NC_OP_GETLAYOUT: return op_getlayout;
	case NC_OP_SETLAYOUT: return op_setlayout;
	case NC_OP_SIZE_UPDATE: return op_size_update;
	case NC_OP_XATTR_GET: return op_xattr_get;
	case NC_OP_XATTR_SET: return op_xattr_set;
	case NC_OP_XATTR_LIST: return op_xattr_list;
	case NC_OP_XATTR_DEL: return op_xattr_del;
	case NC_OP_SHARD_STATE: return op_shard_state;
	case NC_OP_FID_GRANT: return op_fid_grant;
	case NC_OP_PACK_ALLOC: return op_pack_alloc;
	case NC_OP_PACK_COMMIT: return op_pack_commit;
	case NC_OP_PACK_SWITCH: return op_pack_switch;
	case NC_OP_PACK_LIST: return op_pack_list;
	case NC_OP_CHANGELOG_READ: return op_changelog_read;
	case NC_OP_CHANGELOG_CLEAR: return op_changelog_clear;
	case NC_OP_PACK_FILES: return op_pack_files;
	case NC_OP_LOOKUP_MANY: return op_lookup_many;
	case NC_OP_MIGRATE: return op_migrate;
	case NC_OP_OST_ADMIN: return op_ost_admin;
	case NC_OP_POOL: return op_pool;
	case NC_OP_POOL_LIST: return op_pool_list;
	default: return NULL;
	}
}

bool mds_op_is_write(uint16_t opcode)
{
	switch (opcode) {
	case NC_OP_OST_REGISTER:
	case NC_OP_SETATTR:
	case NC_OP_CREATE:
	case NC_OP_LINK:
	case NC_OP_UNLINK:
	case NC_OP_RENAME:
	case NC_OP_SETLAYOUT:
	case NC_OP_SIZE_UPDATE:
	case NC_OP_XATTR_SET:
	case NC_OP_XATTR_DEL:
	case NC_OP_SHARD_STATE:
	case NC_OP_FID_GRANT:
	case NC_OP_PACK_ALLOC:
	case NC_OP_PACK_COMMIT:
	case NC_OP_PACK_SWITCH:
	case NC_OP_MIGRATE:
	case NC_OP_CHANGELOG_CLEAR:
	case NC_OP_OST_ADMIN:
	case NC_OP_POOL:
		return true;
	default:
		return false;
	}
}

static void squash_fix(struct nc_cred *c, const void *arg)
{
	mds_squash_cred(arg, c);
}

/*
 * Root squash covers clients and tools.  Servers (an OSS, the MDS's own
 * pack compactor) hold the cluster key like every peer and are trusted to
 * say what they are, as every key holder is trusted with the uid it sends.
 */
static bool squash_applies(struct mds_server *mds, const struct nc_req *req)
{
	if (req->rq_peer_role != NC_ROLE_CLIENT && req->rq_peer_role != NC_ROLE_TOOL)
		return false;
	return mds_squash_applies(mds_server_squash(mds), req->rq_peer);
}

/*
 * A resent change: answered from its record when it was executed before
 * (true), refused when the client has since moved past it (true), else
 * false and it is executed.
 */
static bool replay_answer(struct mds_server *mds, struct nc_req *req)
{
	struct mds_reply_rec rec;
	int rc;

	rc = mds_ns_reply_find(mds_server_ns(mds), req->rq_client, req_slot(req),
			       req->rq_hdr.mh_reqid, &rec);
	if (rc == -ENOENT)
		return false;
	if (rc == 0 && rec.rr_opcode != req->rq_hdr.mh_opcode)
		rc = -NC_E_PROTO; /* the same id for another request: a client bug */
	if (rc == 0) {
		nc_info("mds", "req %" PRIu64 " from %s: %s was executed before the "
			"connection was lost; its reply is sent again", req->rq_hdr.mh_reqid,
			req->rq_peer, nc_op_name(req->rq_hdr.mh_opcode));
		mds_metrics_replay(mds_server_metrics(mds), 1, 0);
		mds_reply(req, rec.rr_status, rec.rr_body, rec.rr_len);
	} else {
		nc_warn("mds", "req %" PRIu64 " from %s: resent %s not executed: %s",
			req->rq_hdr.mh_reqid, req->rq_peer, nc_op_name(req->rq_hdr.mh_opcode),
			rc == -ESTALE ? "its slot has served a later request" : nc_strerror(rc));
		mds_reply(req, rc == -ESTALE ? -NC_E_PROTO : rc, NULL, 0);
	}
	free(rec.rr_body);
	return true;
}

void mds_handle_op(struct mds_server *mds, struct nc_req *req)
{
	mds_op_fn fn = op_table(req->rq_hdr.mh_opcode);
	struct nc_xdr in;
	int rc;

	if (!fn) {
		mds_reply(req, -EOPNOTSUPP, NULL, 0);
		return;
	}
	if (req->rq_hdr.mh_bulk_len) {
		nc_warn("mds", "req %" PRIu64 " from %s: unexpected bulk data",
			req->rq_hdr.mh_reqid, req->rq_peer);
		mds_reply(req, -NC_E_PROTO, NULL, 0);
		return;
	}
	nc_debug("mds", "req %" PRIu64 " from %s: %s", req->rq_hdr.mh_reqid, req->rq_peer,
		 nc_op_name(req->rq_hdr.mh_opcode));
	nc_xdr_init_decode(&in, req->rq_body, req->rq_hdr.mh_body_len);
	if (squash_applies(mds, req)) {
		in.x_cred_fix = squash_fix;
		in.x_cred_arg = mds_server_squash(mds);
	}
	if (held_tail && req_slotted(req)) {
		if (req->rq_hdr.mh_flags & NC_MF_RESEND && replay_answer(mds, req))
			return;
		/* Executed now: its reply is recorded with the change. */
		replay_ns = mds_server_ns(mds);
		replay_req = req;
	}
	rc = fn(mds, req, &in);
	if (rc)
		mds_reply(req, rc, NULL, 0);
	replay_req = NULL;
}

void mds_handle(struct nc_req *req, void *arg)
{
	struct mds_server *mds = arg;

	/* Changes go to the writer thread, which commits them in batches;
	 * reads are served here from LMDB read transactions. */
	if (mds_op_is_write(req->rq_hdr.mh_opcode))
		mds_server_queue_write(mds, req);
	else
		mds_handle_op(mds, req);
}
