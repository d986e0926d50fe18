/* SPDX-License-Identifier: MIT */
/*
 * MDT administration: statfs, the persistent OST table, and the destroy
 * queue of (fid, layout) records whose objects the MDS removes from the
 * OSTs after the last link of a file is gone.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/statvfs.h>

#include "common/errors.h"
#include "common/log.h"
#include "mds/ns_int.h"

/* ---- statfs ---- */

uint64_t mds_ns_reserve(uint64_t map_size)
{
	uint64_t r = map_size / 16;

	if (r < 4ull << 20)
		r = 4ull << 20;
	if (r > 1ull << 30)
		r = 1ull << 30;
	if (r > map_size / 4)
		r = map_size / 4;
	return r;
}

/* Free bytes below which the MDT is full: its reserve. */
static uint64_t ns_full_below(uint64_t map_size)
{
	return mds_ns_reserve(map_size) + 1;
}

bool mds_ns_is_full(struct mds_ns *ns, uint64_t *free_bytes, uint64_t *map_size)
{
	uint64_t map, left;

	if (mds_db_free_bytes(ns->ns_db, ns_full_below, &map, &left))
		return false;
	if (free_bytes)
		*free_bytes = left;
	if (map_size)
		*map_size = map;
	return left < ns_full_below(map);
}

int mds_ns_statfs(struct mds_ns *ns, struct nc_statfs *st)
{
	uint64_t map_size, used, left, inodes;
	uint64_t disk_total, disk_free, disk_avail;
	struct mds_txn *txn;
	struct statvfs vfs;
	int rc;

	if (statvfs(ns->ns_dir, &vfs))
		return -errno;
	rc = mds_db_space(ns->ns_db, &map_size, &used);
	if (rc)
		return rc;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = mds_db_count(txn, MDS_T_INODES, &inodes);
	mds_db_txn_abort(txn);
	if (rc)
		return rc;

	disk_total = (uint64_t)vfs.f_blocks * vfs.f_frsize;
	disk_free = (uint64_t)vfs.f_bfree * vfs.f_frsize;
	disk_avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	left = map_size - used;
	memset(st, 0, sizeof(*st));
	st->s_total = disk_total < map_size ? disk_total : map_size;
	st->s_free = disk_free < left ? disk_free : left;
	/* The reserve is for removals (mds_ns_reserve()): not available. */
	left = left > mds_ns_reserve(map_size) ? left - mds_ns_reserve(map_size) : 0;
	st->s_avail = disk_avail < left ? disk_avail : left;
	/* An inode with its entry takes about 512 bytes of the map. */
	st->s_files = map_size / 512;
	st->s_ffree = st->s_files > inodes ? st->s_files - inodes : 0;
	st->s_bsize = 4096;
	st->s_namemax = NC_NAME_MAX;
	return 0;
}

int mds_ns_stats(struct mds_ns *ns, struct mds_ns_stats *st)
{
	struct mds_db_stats ds;
	struct mds_txn *txn;
	int rc;

	rc = mds_db_stats(ns->ns_db, &ds);
	if (rc)
		return rc;
	st->ns_map_size = ds.ds_map_size;
	st->ns_used = ds.ds_used;
	st->ns_page_size = ds.ds_page_size;
	st->ns_free_pages = ds.ds_free_pages;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = mds_db_count(txn, MDS_T_INODES, &st->ns_inodes);
	if (!rc)
		rc = mds_db_count(txn, MDS_T_DESTROY, &st->ns_destroy_queue);
	mds_db_txn_abort(txn);
	return rc;
}

/* ---- the OST table ---- */

static int ns_ost_decode(const void *k, size_t kl, const void *v, size_t vl,
			 struct nc_ost_info *o)
{
	struct nc_xdr x;

	if (kl != 4)
		return -NC_E_CORRUPT;
	memset(o, 0, sizeof(*o));
	o->o_index = ns_get_be32(k);
	o->o_state = NC_OST_DOWN;
	nc_xdr_init_decode(&x, v, vl);
	ns_xdr_version(&x);
	nc_xdr_fixed(&x, o->o_uuid, sizeof(o->o_uuid));
	nc_xdr_str(&x, o->o_addr, NC_ADDR_MAX);
	/* Optional: records written before OST administration lack it. */
	if (!x.x_err && x.x_pos < x.x_len) {
		uint32_t flags = 0;

		nc_xdr_u32(&x, &flags);
		if (flags & ~NC_OST_INACTIVE)
			x.x_err = -NC_E_CORRUPT;
		o->o_state |= flags;
	}
	if (x.x_err || nc_xdr_finish(&x)) {
		nc_error("mds", "corrupt OST record %u", o->o_index);
		return -NC_E_CORRUPT;
	}
	return 0;
}

/* Writes the record of @o: uuid, address and, when there are any, the
 * administrative flags of its o_state (NC_OST_INACTIVE). */
static int ns_ost_put(struct mds_txn *txn, struct nc_ost_info *o)
{
	uint8_t key[4], buf[40 + NC_ADDR_MAX];
	uint32_t flags = o->o_state & NC_OST_INACTIVE;
	struct nc_xdr x;

	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	nc_xdr_fixed(&x, o->o_uuid, sizeof(o->o_uuid));
	nc_xdr_str(&x, o->o_addr, NC_ADDR_MAX);
	/* Left out when clear, so that records stay readable by an MDS
	 * that predates the flags. */
	if (flags)
		nc_xdr_u32(&x, &flags);
	if (x.x_err)
		return x.x_err;
	ns_put_be32(key, o->o_index);
	return mds_db_put(txn, MDS_T_OSTS, key, sizeof(key), buf, x.x_pos, false);
}

static int ns_ost_register_txn(struct mds_txn *txn,
			       const struct nc_ost_info *ost, bool replace)
{
	struct nc_ost_info o, cur, match;
	struct mds_cursor *c;
	const void *k, *v;
	size_t kl, vl;
	bool found = false;
	int rc;

	/* One uuid per index and one index per uuid. */
	rc = mds_db_cursor_open(txn, MDS_T_OSTS, &c);
	if (rc)
		return rc;
	rc = mds_db_cursor_seek(c, NULL, 0, &k, &kl, &v, &vl);
	while (rc == 0) {
		rc = ns_ost_decode(k, kl, v, vl, &cur);
		if (rc)
			break;
		if (cur.o_index == ost->o_index) {
			found = true;
			match = cur;
			if (!replace && memcmp(cur.o_uuid, ost->o_uuid, 16)) {
				rc = -EEXIST;
				break;
			}
		} else if (!memcmp(cur.o_uuid, ost->o_uuid, 16)) {
			rc = -EEXIST;
			break;
		}
		rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	}
	mds_db_cursor_close(c);
	if (rc && rc != -ENOENT)
		return rc;
	if (found && !strcmp(match.o_addr, ost->o_addr) &&
	    !memcmp(match.o_uuid, ost->o_uuid, 16))
		return 0;

	/* What the OSS says about itself never changes what an administrator
	 * decided: the flags of the known record stay. */
	o = *ost;
	o.o_state = found ? match.o_state & NC_OST_INACTIVE : 0;
	return ns_ost_put(txn, &o);
}

static int ns_ost_register(struct mds_ns *ns, const struct nc_ost_info *ost, bool replace)
{
	struct mds_txn *txn;
	size_t alen;
	int rc;

	if (ost->o_index >= NC_MAX_OSTS)
		return -EINVAL;
	alen = strnlen(ost->o_addr, sizeof(ost->o_addr));
	if (alen == 0 || alen > NC_ADDR_MAX)
		return -EINVAL;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		return rc;
	return ns_end(txn, ns_ost_register_txn(txn, ost, replace));
}

int mds_ns_ost_register(struct mds_ns *ns, const struct nc_ost_info *ost)
{
	return ns_ost_register(ns, ost, false);
}

/*
 * Marks stale every shard on OST @idx: the OST was replaced by an empty
 * one, so until `nacre rebuild --ost` rewrites them its objects would read
 * as holes.  FIDs are collected first, then updated, in the same
 * transaction as the registration.
 */
static int ns_stale_ost_txn(struct mds_txn *txn, uint32_t idx, uint64_t *marked)
{
	struct ns_inode *in;
	uint8_t *keys;
	size_t n;
	int rc;

	rc = ns_table_keys(txn, MDS_T_INODES, NS_FID_KEY, &keys, &n);
	if (rc)
		return rc;
	in = malloc(sizeof(*in));
	if (!in) {
		free(keys);
		return -ENOMEM;
	}
	for (size_t i = 0; !rc && i < n; i++) {
		struct nc_fid fid = { ns_get_be64(keys + i * NS_FID_KEY),
				      ns_get_be64(keys + i * NS_FID_KEY + 8) };

		rc = ns_inode_get(txn, &fid, in);
		if (rc)
			break;
		if (!ns_is_reg(in) || !ns_layout_stale_ost(&in->in_layout, idx))
			continue;
		rc = ns_inode_put(txn, in, false);
		(*marked)++;
	}
	free(in);
	free(keys);
	return rc;
}

int mds_ns_ost_replace(struct mds_ns *ns, const struct nc_ost_info *ost, uint64_t *marked)
{
	struct mds_txn *txn;
	size_t alen;
	int rc;

	*marked = 0;
	if (ost->o_index >= NC_MAX_OSTS)
		return -EINVAL;
	alen = strnlen(ost->o_addr, sizeof(ost->o_addr));
	if (alen == 0 || alen > NC_ADDR_MAX)
		return -EINVAL;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		return rc;
	rc = ns_ost_register_txn(txn, ost, true);
	if (!rc)
		rc = ns_stale_ost_txn(txn, ost->o_index, marked);
	if (!rc)
		rc = ns_packs_stale_ost(txn, ost->o_index, marked);
	return ns_end(txn, rc);
}

static int ns_ost_set_active_txn(struct mds_txn *txn, uint32_t idx, bool active)
{
	struct nc_ost_info o;
	const void *v;
	uint8_t key[4];
	size_t vl;
	int rc;

	ns_put_be32(key, idx);
	rc = mds_db_get(txn, MDS_T_OSTS, key, sizeof(key), &v, &vl);
	if (rc)
		return rc == -ENOENT ? -ENODEV : rc;
	rc = ns_ost_decode(key, sizeof(key), v, vl, &o);
	if (rc)
		return rc;
	if (!(o.o_state & NC_OST_INACTIVE) == active)
		return 0;
	o.o_state = active ? 0 : NC_OST_INACTIVE;
	return ns_ost_put(txn, &o);
}

int mds_ns_ost_set_active(struct mds_ns *ns, const struct nc_cred *cred, uint32_t idx,
			  bool active)
{
	struct mds_txn *txn;
	int rc;

	if (cred->c_uid != 0)
		return -EPERM;
	if (idx >= NC_MAX_OSTS)
		return -ENODEV;
	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		return rc;
	return ns_end(txn, ns_ost_set_active_txn(txn, idx, active));
}

bool mds_ost_is_eligible(const struct nc_ost_info *o)
{
	return !(o->o_state & NC_OST_INACTIVE);
}

int mds_ns_ost_list(struct mds_ns *ns, struct nc_ost_info *osts, uint32_t max,
		    uint32_t *count)
{
	struct nc_ost_info o;
	struct mds_cursor *c;
	struct mds_txn *txn;
	const void *k, *v;
	size_t kl, vl;
	uint32_t n = 0;
	int rc;

	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = mds_db_cursor_open(txn, MDS_T_OSTS, &c);
	if (rc)
		goto out_abort;
	rc = mds_db_cursor_seek(c, NULL, 0, &k, &kl, &v, &vl);
	while (rc == 0) {
		rc = ns_ost_decode(k, kl, v, vl, &o);
		if (rc)
			break;
		if (n == max) {
			rc = -ERANGE;
			break;
		}
		osts[n++] = o;
		rc = mds_db_cursor_next(c, &k, &kl, &v, &vl);
	}
	mds_db_cursor_close(c);
	if (rc == -ENOENT)
		rc = 0;
	*count = n;
out_abort:
	mds_db_txn_abort(txn);
	return rc;
}

/* ---- the destroy queue ---- */

int ns_destroy_queue(struct mds_txn *txn, const struct nc_fid *fid,
		     const struct nc_layout *layout)
{
	return ns_destroy_queue_after(txn, fid, layout, 0);
}

int ns_destroy_queue_after(struct mds_txn *txn, const struct nc_fid *fid,
			   const struct nc_layout *layout, int64_t delay_s)
{
	int64_t not_before = delay_s > 0 ? time(NULL) + delay_s : 0;
	struct nc_layout l = *layout;
	struct nc_fid f = *fid;
	uint8_t buf[64 + NC_MAX_STRIPES * 8];
	uint8_t key[8];
	struct nc_xdr x;
	uint64_t id;
	int rc;

	rc = ns_conf_get_u64(txn, NS_CONF_DESTROY, &id);
	if (rc)
		return rc;
	if (id == 0 || id == UINT64_MAX)
		return -ENOSPC;
	rc = ns_conf_put_u64(txn, NS_CONF_DESTROY, id + 1);
	if (rc)
		return rc;
	l.l_flags &= ~NC_LAYOUT_TEMPLATE;
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	ns_xdr_version(&x);
	ns_xdr_fid(&x, &f);
	ns_xdr_layout(&x, &l);
	if (not_before)
		nc_xdr_i64(&x, &not_before); /* optional: older records lack it */
	if (x.x_err)
		return x.x_err;
	ns_put_be64(key, id);
	return mds_db_put(txn, MDS_T_DESTROY, key, sizeof(key), buf, x.x_pos,
			  true);
}

int mds_ns_destroy_next(struct mds_ns *ns, uint64_t after,
			struct mds_destroy_rec *rec)
{
	struct mds_cursor *c;
	struct mds_txn *txn;
	const void *k, *v;
	uint8_t key[8];
	struct nc_xdr x;
	size_t kl, vl;
	int rc;

	if (after == UINT64_MAX)
		return -ENOENT;
	rc = mds_db_txn_begin(ns->ns_db, true, &txn);
	if (rc)
		return rc;
	rc = mds_db_cursor_open(txn, MDS_T_DESTROY, &c);
	if (rc)
		goto out_abort;
	ns_put_be64(key, after + 1);
	rc = mds_db_cursor_seek(c, key, sizeof(key), &k, &kl, &v, &vl);
	if (rc)
		goto out_close;
	memset(rec, 0, sizeof(*rec));
	nc_xdr_init_decode(&x, v, vl);
	ns_xdr_version(&x);
	ns_xdr_fid(&x, &rec->dr_fid);
	ns_xdr_layout(&x, &rec->dr_layout);
	if (!x.x_err && x.x_pos < x.x_len)
		nc_xdr_i64(&x, &rec->dr_not_before);
	if (kl != sizeof(key) || x.x_err || nc_xdr_finish(&x)) {
		nc_error("mds", "corrupt destroy queue record");
		rc = -NC_E_CORRUPT;
		goto out_close;
	}
	rec->dr_id = ns_get_be64(k);
out_close:
	mds_db_cursor_close(c);
out_abort:
	mds_db_txn_abort(txn);
	return rc;
}

int mds_ns_destroy_done(struct mds_ns *ns, uint64_t id)
{
	struct mds_txn *txn;
	uint8_t key[8];
	int rc;

	rc = mds_db_txn_begin(ns->ns_db, false, &txn);
	if (rc)
		return rc;
	ns_put_be64(key, id);
	return ns_end(txn, mds_db_del(txn, MDS_T_DESTROY, key, sizeof(key)));
}
