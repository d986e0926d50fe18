/* SPDX-License-Identifier: MIT */
/*
 * Reply reconstruction, as Lustre's last_rcvd: a client that loses its
 * connection after sending a change cannot know whether the MDS executed
 * it, so it sends it again, and the MDS must not execute it twice (a
 * second CREATE would say EEXIST, a second UNLINK ENOENT, to an
 * application whose call in fact succeeded).
 *
 * Each client names itself with a uuid at CONNECT and sends every change
 * in one of its NC_REPLAY_SLOTS reply slots, numbered by request id.  For
 * each (client, slot) the replies table keeps the reply of the last request
 * executed there, written in the transaction of the change itself, so the
 * record exists exactly when the change does.  A resend whose id matches
 * is answered from the record; an older id is refused (the client has
 * moved on: it is a stray copy); a newer one is executed and replaces the
 * record.  The table holds at most one record per slot of each client, and
 * records of clients gone quiet expire (mds_ns_reply_expire()).
 *
 * Key: client uuid (16) + slot (BE u32).  Value: version, request id,
 * opcode, wire status, time written (Unix seconds), body.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/errors.h"
#include "common/log.h"
#include "mds/ns_int.h"

#define REPLY_REC_VERSION 1
#define REPLY_KEY_LEN 20

static void reply_key(uint8_t key[REPLY_KEY_LEN], const uint8_t client[16], uint32_t slot)
{
	memcpy(key, client, 16);
	key[16] = (uint8_t)(slot >> 24);
	key[17] = (uint8_t)(slot >> 16);
	key[18] = (uint8_t)(slot >> 8);
	key[19] = (uint8_t)slot;
}

/* The fixed fields of a record; the body follows as a length and bytes. */
struct reply_head {
	uint32_t rh_version;
	uint64_t rh_seq;
	uint16_t rh_opcode;
	uint32_t rh_status;     /* enum nc_wire_status */
	int64_t rh_written;
	uint32_t rh_len;
};

static void xdr_reply_head(struct nc_xdr *x, struct reply_head *h)
{
	nc_xdr_u32(x, &h->rh_version);
	nc_xdr_u64(x, &h->rh_seq);
	nc_xdr_u16(x, &h->rh_opcode);
	nc_xdr_u32(x, &h->rh_status);
	nc_xdr_i64(x, &h->rh_written);
	nc_xdr_u32(x, &h->rh_len);
}

/* Decodes the head of record @v; the body is the rest (rh_len bytes). */
static int reply_head_decode(const void *v, size_t vl, struct reply_head *h, struct nc_xdr *x)
{
	nc_xdr_init_decode(x, v, vl);
	xdr_reply_head(x, h);
	if (x->x_err || h->rh_version != REPLY_REC_VERSION || vl - x->x_pos != h->rh_len)
		return -NC_E_CORRUPT;
	return 0;
}

int mds_ns_reply_find(struct mds_ns *ns, const uint8_t client[16], uint32_t slot,
		      uint64_t seq, struct mds_reply_rec *out)
{
	uint8_t key[REPLY_KEY_LEN];
	struct reply_head h;
	struct mds_txn *txn;
	struct nc_xdr x;
	const void *v;
	size_t vl;
	int rc;

	memset(out, 0, sizeof(*out));
	reply_key(key, client, slot);
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = mds_db_get(txn, MDS_T_REPLIES, key, sizeof(key), &v, &vl);
	if (rc)
		goto out;
	rc = reply_head_decode(v, vl, &h, &x);
	if (rc) {
		nc_warn("mds", "reply record of slot %u is damaged; executing the resend", slot);
		rc = -ENOENT;
		goto out;
	}
	if (h.rh_seq < seq) {
		rc = -ENOENT; /* the slot's last request came before this one */
		goto out;
	}
	if (h.rh_seq > seq) {
		rc = -ESTALE;
		goto out;
	}
	out->rr_seq = h.rh_seq;
	out->rr_opcode = h.rh_opcode;
	out->rr_status = nc_err_from_status((int32_t)h.rh_status);
	out->rr_len = h.rh_len;
	if (h.rh_len) {
		out->rr_body = malloc(h.rh_len);
		if (!out->rr_body) {
			rc = -ENOMEM;
			goto out;
		}
		memcpy(out->rr_body, (const uint8_t *)v + x.x_pos, h.rh_len);
	}
out:
	mds_db_txn_abort(txn);
	return rc;
}

int mds_ns_reply_save(struct mds_ns *ns, const uint8_t client[16], uint32_t slot,
		      const struct mds_reply_rec *rec)
{
	uint8_t key[REPLY_KEY_LEN];
	struct reply_head h = {
		.rh_version = REPLY_REC_VERSION,
		.rh_seq = rec->rr_seq,
		.rh_opcode = rec->rr_opcode,
		.rh_status = (uint32_t)nc_status_from_err(rec->rr_status),
		.rh_written = (int64_t)time(NULL),
		.rh_len = rec->rr_status ? 0 : rec->rr_len,
	};
	struct mds_txn *txn;
	struct nc_xdr x;
	uint8_t *buf;
	size_t cap;
	int rc;

	if (h.rh_len > NC_MAX_BODY)
		return -EINVAL;
	cap = 64 + h.rh_len;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	nc_xdr_init_encode(&x, buf, cap);
	xdr_reply_head(&x, &h);
	if (h.rh_len)
		nc_xdr_fixed(&x, rec->rr_body, h.rh_len);
	rc = x.x_err;
	if (rc)
		goto out;
	reply_key(key, client, slot);
	/* One put, right after the change it records: in the writer's batch
	 * it goes straight into the batch, without a nested transaction of
	 * its own (with the change's, that would double the cost of a
	 * change). */
	rc = mds_db_txn_begin_flat(ns->ns_db, &txn);
	if (rc)
		goto out;
	rc = mds_db_put(txn, MDS_T_REPLIES, key, sizeof(key), buf, x.x_pos, false);
	rc = ns_end(txn, rc);
out:
	free(buf);
	return rc;
}

int mds_ns_reply_expire(struct mds_ns *ns, int64_t before, uint64_t *removed)
{
	enum { BATCH = 1024 };
	uint8_t (*keys)[REPLY_KEY_LEN];
	uint8_t start[REPLY_KEY_LEN] = { 0 };
	uint64_t done = 0;
	int rc;

	keys = malloc(BATCH * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (;;) {
		struct mds_cursor *c;
		struct mds_txn *txn;
		const void *k, *v;
		size_t kl, vl;
		unsigned int n = 0;
		bool more = false;

		rc = mds_db_txn_begin(ns->ns_db, false, &txn);
		if (rc)
			break;
		rc = mds_db_cursor_open(txn, MDS_T_REPLIES, &c);
		if (rc) {
			mds_db_txn_abort(txn);
			break;
		}
		rc = mds_db_cursor_seek(c, start, sizeof(start), &k, &kl, &v, &vl);
		while (!rc) {
			struct reply_head h;
			struct nc_xdr x;

			if (kl == REPLY_KEY_LEN && n == BATCH) {
				/* Go on from here in the next transaction. */
				memcpy(start, k, REPLY_KEY_LEN);
				more = true;
				break;
			}
			/* A damaged record goes too: it can only be
			 * ignored, never used. */
			if (kl == REPLY_KEY_LEN &&
			    (reply_head_decode(v, vl, &h, &x) || h.rh_written < before))
				memcpy(keys[n++], k, REPLY_KEY_LEN);
			rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
		}
		mds_db_cursor_close(c);
		if (rc && rc != -ENOENT) {
			mds_db_txn_abort(txn);
			break;
		}
		rc = 0;
		for (unsigned int i = 0; i < n && !rc; i++)
			rc = mds_db_del(txn, MDS_T_REPLIES, keys[i], REPLY_KEY_LEN);
		rc = ns_end(txn, rc);
		if (rc)
			break;
		done += n;
		if (!more)
			break;
	}
	free(keys);
	if (removed)
		*removed = done;
	return rc;
}
