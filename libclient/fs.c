/* SPDX-License-Identifier: MIT */
/* Connecting to a filesystem, the OST table, statistics, conversions. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "common/errors.h"
#include "common/log.h"
#include "libclient/cl_int.h"

int cl_err(int rc)
{
	return rc;
}

NACRE_API const char *nacre_strerror(int err)
{
	return nc_strerror(err);
}

NACRE_API void nacre_set_log(nacre_log_fn fn, void *arg)
{
	nc_log_set_sink((nc_log_sink_fn)fn, arg);
}

NACRE_API void nacre_root_fid(struct nacre_fid *fid)
{
	fid->seq = NC_ROOT_FID_SEQ;
	fid->oid = NC_ROOT_FID_OID;
}

NACRE_API void nacre_fid_format(const struct nacre_fid *fid, char *buf)
{
	struct nc_fid f = { fid->seq, fid->oid };

	nc_fid_to_str(&f, buf);
}

NACRE_API int nacre_fid_parse(const char *s, struct nacre_fid *fid)
{
	struct nc_fid f;
	int rc = nc_fid_from_str(s, &f);

	if (rc)
		return rc;
	fid->seq = f.f_seq;
	fid->oid = f.f_oid;
	return 0;
}

void cl_cred_from(struct nacre_fs *fs, const struct nacre_cred *in, struct nc_cred *out)
{
	if (!in) {
		*out = fs->fs_cred;
		return;
	}
	memset(out, 0, sizeof(*out));
	out->c_uid = in->uid;
	out->c_gid = in->gid;
	out->c_ngroups = in->ngroups < NC_MAX_GROUPS ? in->ngroups : NC_MAX_GROUPS;
	for (uint32_t i = 0; i < out->c_ngroups; i++)
		out->c_groups[i] = in->groups[i];
}

static void process_cred(struct nc_cred *c)
{
	gid_t groups[NC_MAX_GROUPS];
	int n;

	memset(c, 0, sizeof(*c));
	c->c_uid = geteuid();
	c->c_gid = getegid();
	n = getgroups(NC_MAX_GROUPS, groups);
	for (int i = 0; i < n; i++)
		c->c_groups[c->c_ngroups++] = groups[i];
}

void cl_stat_from_attr(const struct nc_attr *a, struct nacre_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->fid.seq = a->a_fid.f_seq;
	st->fid.oid = a->a_fid.f_oid;
	st->mode = a->a_mode;
	st->nlink = a->a_nlink;
	st->uid = a->a_uid;
	st->gid = a->a_gid;
	st->size = a->a_size;
	st->blocks = a->a_blocks;
	st->rdev = a->a_rdev;
	st->atime.tv_sec = a->a_atime.t_sec;
	st->atime.tv_nsec = a->a_atime.t_nsec;
	st->mtime.tv_sec = a->a_mtime.t_sec;
	st->mtime.tv_nsec = a->a_mtime.t_nsec;
	st->ctime.tv_sec = a->a_ctime.t_sec;
	st->ctime.tv_nsec = a->a_ctime.t_nsec;
}

void cl_layout_to_public(const struct nc_layout *l, struct nacre_layout *out)
{
	memset(out, 0, sizeof(*out));
	out->stripe_size = l->l_stripe_size;
	out->stripe_count = l->l_stripe_count;
	if ((l->l_flags & NC_LAYOUT_TEMPLATE) && l->l_stripe_count == UINT16_MAX)
		out->stripe_count = UINT32_MAX;
	out->k = l->l_k;
	out->m = l->l_m;
	out->first_ost = l->l_first_ost;
	out->flags = l->l_flags & (NACRE_LAYOUT_PACK | NACRE_LAYOUT_PACKED | NACRE_LAYOUT_POOL |
				   NACRE_LAYOUT_INLINE);
	if (l->l_flags & NC_LAYOUT_TEMPLATE) {
		if (l->l_flags & NC_LAYOUT_PACK)
			out->pack_max = l->l_pack_max;
		if (l->l_flags & NC_LAYOUT_POOL)
			memcpy(out->pool, l->l_pool, sizeof(out->pool));
		if (l->l_flags & NC_LAYOUT_INLINE)
			out->inline_max = l->l_inline_max;
		return;
	}
	if (l->l_flags & NC_LAYOUT_PACKED) {
		out->pack_id = l->l_pack_id;
		out->pack_off = l->l_pack_off;
		out->pack_len = l->l_pack_len;
	}
	if (l->l_flags & NC_LAYOUT_OBJFID) {
		out->obj_fid.seq = l->l_obj.f_seq;
		out->obj_fid.oid = l->l_obj.f_oid;
	}
	out->shard_count = l->l_stripe_count;
	if (out->first_ost == 0 && l->l_stripe_count)
		out->first_ost = l->l_shards[0].ls_ost;
	for (uint32_t i = 0; i < l->l_stripe_count && i < NACRE_MAX_STRIPES; i++) {
		out->shards[i].ost = l->l_shards[i].ls_ost;
		out->shards[i].flags = l->l_shards[i].ls_flags;
	}
}

void cl_layout_from_public(const struct nacre_layout *in, struct nc_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->l_flags = NC_LAYOUT_TEMPLATE;
	l->l_stripe_size = in->stripe_size;
	l->l_stripe_count = in->stripe_count > UINT16_MAX ? UINT16_MAX : (uint16_t)in->stripe_count;
	l->l_k = in->k > 255 ? 255 : (uint8_t)in->k;
	l->l_m = in->m > 255 ? 255 : (uint8_t)in->m;
	l->l_first_ost = in->first_ost;
	if (in->flags & NACRE_LAYOUT_PACK) {
		l->l_flags |= NC_LAYOUT_PACK;
		l->l_pack_max = in->pack_max;
	}
	if (in->flags & NACRE_LAYOUT_POOL) {
		l->l_flags |= NC_LAYOUT_POOL;
		snprintf(l->l_pool, sizeof(l->l_pool), "%s", in->pool);
	}
	if (in->flags & NACRE_LAYOUT_INLINE) {
		l->l_flags |= NC_LAYOUT_INLINE;
		l->l_inline_max = in->inline_max;
	}
}

/* ---- OSTs ---- */

int cl_ost_refresh(struct nacre_fs *fs)
{
	struct nc_ost_list_rep *rep = calloc(1, sizeof(*rep));
	struct nc_call call;
	int rc;

	if (!rep)
		return -ENOMEM;
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_OST_LIST, NULL, NULL,
			  (nc_xdr_fn)nc_wire_ost_list_rep, rep, &call);
	if (rc)
		goto out;
	nc_call_fini(&call);
	pthread_mutex_lock(&fs->fs_lock);
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++)
		fs->fs_osts[i].co_known = false;
	for (uint32_t i = 0; i < rep->ol_count; i++) {
		const struct nc_ost_info *o = &rep->ol_osts[i];
		struct cl_ost *co;

		if (o->o_index >= NC_MAX_OSTS)
			continue;
		co = &fs->fs_osts[o->o_index];
		co->co_known = true;
		co->co_up = (o->o_state & NC_OST_STATE_MASK) == NC_OST_UP;
		co->co_info = *o;
	}
	pthread_mutex_unlock(&fs->fs_lock);
out:
	free(rep);
	return rc;
}

void cl_ost_note_result(struct nacre_fs *fs, uint32_t idx, int rc)
{
	_Atomic int64_t *silent;

	if (idx >= NC_MAX_OSTS || (rc && rc != -ETIMEDOUT))
		return;
	/* Every request ends here: no lock, and no store while it answers. */
	silent = &fs->fs_osts[idx].co_silent_ms;
	if (rc)
		atomic_store_explicit(silent, nc_now_ms(), memory_order_relaxed);
	else if (atomic_load_explicit(silent, memory_order_relaxed))
		atomic_store_explicit(silent, 0, memory_order_relaxed);
}

int64_t cl_ost_avoid_ms(const struct nacre_fs *fs)
{
	return 2 * (int64_t)fs->fs_timeout_ms;
}

int64_t cl_ost_silent_since(struct nacre_fs *fs, uint32_t idx)
{
	int64_t since;

	if (idx >= NC_MAX_OSTS)
		return 0;
	since = atomic_load_explicit(&fs->fs_osts[idx].co_silent_ms, memory_order_relaxed);
	return since && nc_now_ms() - since < cl_ost_avoid_ms(fs) ? since : 0;
}

bool cl_ost_is_silent(struct nacre_fs *fs, uint32_t idx)
{
	return cl_ost_silent_since(fs, idx) != 0;
}

bool cl_ost_known_down(struct nacre_fs *fs, uint32_t idx, struct nc_cconn *cc)
{
	bool up;

	if (idx >= NC_MAX_OSTS)
		return true;
	pthread_mutex_lock(&fs->fs_lock);
	up = fs->fs_osts[idx].co_up;
	pthread_mutex_unlock(&fs->fs_lock);
	return (!up && !nc_cconn_is_connected(cc)) || cl_ost_is_silent(fs, idx);
}

/* Where the connection of @co for I/O or for a repair's locks lives. */
static struct nc_cconn **ost_conn_slot(struct cl_ost *co, bool repair)
{
	return repair ? &co->co_repair_conn : &co->co_conn;
}

static int ost_conn_locked(struct nacre_fs *fs, struct cl_ost *co, bool repair,
			   struct nc_cconn **out)
{
	struct nc_cconn **conn = ost_conn_slot(co, repair);
	char *addr = repair ? co->co_repair_addr : co->co_conn_addr;
	struct nc_cconn_opts opts = { .co_role = NC_ROLE_CLIENT,
				      .co_timeout_ms = fs->fs_timeout_ms,
				      .co_retry_ms = fs->fs_retry_ms,
				      .co_key = fs->fs_key };
	int rc;

	/* An OSS that moved (restarted on another port) gets a new connection;
	 * the old one is kept until the filesystem is freed, since calls may
	 * still be using it. */
	if (*conn && !strcmp(addr, co->co_info.o_addr)) {
		*out = *conn;
		return 0;
	}
	if (*conn)
		return -EBUSY;
	rc = nc_cconn_new(co->co_info.o_addr, fs->fs_name, &opts, conn);
	if (rc)
		return rc;
	memcpy(addr, co->co_info.o_addr, sizeof(co->co_conn_addr));
	*out = *conn;
	return 0;
}

int cl_ost_conn(struct nacre_fs *fs, uint32_t idx, struct nc_cconn **out)
{
	return cl_ost_conn_as(fs, idx, false, out);
}

int cl_ost_conn_as(struct nacre_fs *fs, uint32_t idx, bool repair, struct nc_cconn **out)
{
	int rc;

	if (idx >= NC_MAX_OSTS)
		return -ENODEV;
	for (int pass = 0; pass < 2; pass++) {
		pthread_mutex_lock(&fs->fs_lock);
		if (fs->fs_osts[idx].co_known) {
			rc = ost_conn_locked(fs, &fs->fs_osts[idx], repair, out);
			pthread_mutex_unlock(&fs->fs_lock);
			if (rc != -EBUSY)
				return rc;
			/* The address changed: reuse the existing connection. */
			pthread_mutex_lock(&fs->fs_lock);
			*out = *ost_conn_slot(&fs->fs_osts[idx], repair);
			pthread_mutex_unlock(&fs->fs_lock);
			return 0;
		}
		pthread_mutex_unlock(&fs->fs_lock);
		if (pass == 0) {
			rc = cl_ost_refresh(fs);
			if (rc)
				return rc;
		}
	}
	return -ENODEV;
}

/* ---- connect ---- */

_Static_assert(NACRE_E_AUTH == NC_E_AUTH && NACRE_E_NOKEY == NC_E_NOKEY &&
	       NACRE_E_KEYMODE == NC_E_KEYMODE && NACRE_E_KEYFILE == NC_E_KEYFILE,
	       "nacre.h key errors are the common/errors.h ones");

NACRE_API int nacre_keyfile_path(const char *keyfile, const char *fsname, char *buf,
				 size_t len)
{
	if (!fsname || !buf)
		return -EINVAL;
	return nc_auth_key_path(keyfile, fsname, buf, len);
}


NACRE_API int nacre_connect(const char *mds_addr, const char *fsname,
			    const struct nacre_opts *opts, struct nacre_fs **out)
{
	struct nc_cconn_opts co = { .co_role = NC_ROLE_CLIENT };
	struct nacre_fs *fs;
	char path[4096];
	int rc;

	if (!mds_addr || !fsname || strlen(mds_addr) > NC_ADDR_MAX ||
	    strlen(fsname) > NC_FSNAME_MAX || !*fsname)
		return -EINVAL;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	snprintf(fs->fs_mds_addr, sizeof(fs->fs_mds_addr), "%s", mds_addr);
	snprintf(fs->fs_name, sizeof(fs->fs_name), "%s", fsname);
	pthread_mutex_init(&fs->fs_lock, NULL);
	if (opts && opts->server_peer)
		co.co_role = NC_ROLE_MDS;
	fs->fs_timeout_ms = opts && opts->timeout_ms > 0 ? opts->timeout_ms : 30000;
	fs->fs_retry_ms = opts && opts->retry_ms > 0 ? opts->retry_ms : 60000;
	if (!opts || opts->readahead_kb == 0)
		fs->fs_ra_max = (uint64_t)CL_RA_DEFAULT_KB << 10;
	else if (opts->readahead_kb > 0)
		fs->fs_ra_max = (uint64_t)opts->readahead_kb << 10;
	if (opts && opts->cred)
		cl_cred_from(fs, opts->cred, &fs->fs_cred);
	else
		process_cred(&fs->fs_cred);
	rc = cl_ncache_new(!opts || opts->attr_cache_ms == 0 ? 10000 : opts->attr_cache_ms,
			   &fs->fs_ncache);
	if (rc)
		goto out_free;
	rc = nc_auth_key_path(opts ? opts->keyfile : NULL, fsname, path, sizeof(path));
	if (!rc)
		rc = nc_auth_key_load(path, fs->fs_key);
	if (rc)
		goto out_free;
	co.co_timeout_ms = fs->fs_timeout_ms;
	co.co_retry_ms = fs->fs_retry_ms;
	co.co_key = fs->fs_key;
	co.co_replay = true; /* the MDS rebuilds replies of resent changes */
	rc = nc_cconn_new(mds_addr, fsname, &co, &fs->fs_mds);
	if (rc)
		goto out_free;
	/* The first request connects: fail now, not at first use, when the
	 * address or the name is wrong. */
	/* One PING without retries: a wrong address or filesystem name fails
	 * at once instead of waiting out the retry window. */
	rc = cl_rpc_once(fs->fs_mds, NC_OP_PING, NULL, NULL);
	if (rc)
		goto out_free;
	rc = cl_ost_refresh(fs);
	if (rc)
		goto out_free;
	rc = cl_pack_init(fs, opts);
	if (rc)
		goto out_free;
	*out = fs;
	return 0;
out_free:
	nacre_disconnect(fs);
	return rc;
}

NACRE_API void nacre_disconnect(struct nacre_fs *fs)
{
	if (!fs)
		return;
	cl_pack_fini(fs); /* commits what small files wait here */
	nc_cconn_free(fs->fs_mds);
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++) {
		nc_cconn_free(fs->fs_osts[i].co_conn);
		nc_cconn_free(fs->fs_osts[i].co_repair_conn);
	}
	for (int k = 0; k <= NC_EC_MAX_K; k++)
		for (int m = 0; m <= NC_EC_MAX_M; m++)
			nc_ec_free(fs->fs_ec[k][m]);
	while (fs->fs_hidden) {
		struct cl_hidden *h = fs->fs_hidden;

		fs->fs_hidden = h->h_next;
		free(h);
	}
	cl_ncache_free(fs->fs_ncache);
	pthread_mutex_destroy(&fs->fs_lock);
	nc_auth_wipe(fs->fs_key, sizeof(fs->fs_key));
	free(fs);
}

NACRE_API const char *nacre_fs_mds_addr(const struct nacre_fs *fs)
{
	return fs->fs_mds_addr;
}

NACRE_API const char *nacre_fs_name(const struct nacre_fs *fs)
{
	return fs->fs_name;
}

NACRE_API void nacre_fs_uuid(struct nacre_fs *fs, char out[37])
{
	uint8_t u[16];

	nc_cconn_server_uuid(fs->fs_mds, u);
	uuid_unparse_lower(u, out);
}

/* ---- statistics ---- */

static void statfs_to_public(const struct nc_statfs *s, struct nacre_statfs *st)
{
	st->total = s->s_total;
	st->free = s->s_free;
	st->avail = s->s_avail;
	st->files = s->s_files;
	st->ffree = s->s_ffree;
	st->bsize = s->s_bsize;
	st->namemax = s->s_namemax;
}

NACRE_API int nacre_mdt_statfs(struct nacre_fs *fs, struct nacre_statfs *st)
{
	struct nc_statfs_rep rep;
	struct nc_call call;
	int rc = nc_cconn_rpc(fs->fs_mds, NC_OP_MDS_STATFS, NULL, NULL,
			      (nc_xdr_fn)nc_wire_statfs_rep, &rep, &call);

	if (rc)
		return rc;
	nc_call_fini(&call);
	statfs_to_public(&rep.sr_stat, st);
	return 0;
}

NACRE_API int nacre_ost_statfs(struct nacre_fs *fs, uint32_t index, struct nacre_statfs *st)
{
	struct nc_obj_req o = { .or_ost = index };
	struct nc_statfs_rep rep;
	struct nc_cconn *cc;
	struct nc_call call;
	int rc;

	rc = cl_ost_conn(fs, index, &cc);
	if (rc)
		return rc;
	/* Do not wait out the retry window for an OST known to be down. */
	if (cl_ost_known_down(fs, index, cc))
		return -EHOSTDOWN;
	rc = nc_cconn_rpc(cc, NC_OP_OST_STATFS, (nc_xdr_fn)nc_wire_obj_req, &o,
			  (nc_xdr_fn)nc_wire_statfs_rep, &rep, &call);
	if (rc)
		return rc;
	nc_call_fini(&call);
	statfs_to_public(&rep.sr_stat, st);
	return 0;
}

NACRE_API int nacre_ost_list(struct nacre_fs *fs, struct nacre_ost **osts, unsigned int *count)
{
	struct nacre_ost *list;
	unsigned int n = 0;
	int rc = cl_ost_refresh(fs);

	if (rc)
		return rc;
	list = calloc(NC_MAX_OSTS, sizeof(*list));
	if (!list)
		return -ENOMEM;
	pthread_mutex_lock(&fs->fs_lock);
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++) {
		const struct cl_ost *co = &fs->fs_osts[i];

		if (!co->co_known)
			continue;
		list[n].index = co->co_info.o_index;
		list[n].up = co->co_up;
		uuid_unparse_lower(co->co_info.o_uuid, list[n].uuid);
		snprintf(list[n].addr, sizeof(list[n].addr), "%s", co->co_info.o_addr);
		list[n].transport = co->co_conn ? nc_cconn_xprt_name(co->co_conn) : NULL;
		list[n].active = !(co->co_info.o_state & NC_OST_INACTIVE);
		n++;
	}
	pthread_mutex_unlock(&fs->fs_lock);
	*osts = list;
	*count = n;
	return 0;
}

NACRE_API const char *nacre_mds_transport(struct nacre_fs *fs)
{
	return nc_cconn_xprt_name(fs->fs_mds);
}

NACRE_API const char *nacre_ost_transport(struct nacre_fs *fs, uint32_t index)
{
	struct nc_cconn *cc = NULL;

	if (index >= NC_MAX_OSTS)
		return NULL;
	pthread_mutex_lock(&fs->fs_lock);
	if (fs->fs_osts[index].co_known)
		cc = fs->fs_osts[index].co_conn;
	pthread_mutex_unlock(&fs->fs_lock);
	return cc ? nc_cconn_xprt_name(cc) : NULL;
}

NACRE_API void nacre_rdma_stats(struct nacre_rdma_stats *st)
{
	struct nc_xprt_rdma_stats rs;

	nc_xprt_rdma_stats(&rs);
	st->conns = rs.rs_conns;
	st->sends = rs.rs_sends;
	st->recvs = rs.rs_recvs;
	st->reads = rs.rs_reads;
	st->read_bytes = rs.rs_read_bytes;
	st->reads_inflight_max = rs.rs_reads_inflight_max;
	st->credit_waits = rs.rs_credit_waits;
	st->pinned_hits = rs.rs_pinned_hits;
	st->transient_regs = rs.rs_transient_regs;
}

NACRE_API int nacre_register_buffer(void *buf, size_t len)
{
	return nc_xprt_mem_pin(buf, len);
}

NACRE_API int nacre_unregister_buffer(void *buf)
{
	return nc_xprt_mem_unpin(buf);
}

NACRE_API int nacre_statfs(struct nacre_fs *fs, struct nacre_statfs *st)
{
	struct nacre_statfs mdt, ost;
	struct nacre_ost *list;
	unsigned int n;
	int rc;

	rc = nacre_mdt_statfs(fs, &mdt);
	if (rc)
		return rc;
	rc = nacre_ost_list(fs, &list, &n);
	if (rc)
		return rc;
	memset(st, 0, sizeof(*st));
	st->files = mdt.files;
	st->ffree = mdt.ffree;
	st->bsize = 4096;
	st->namemax = NC_NAME_MAX;
	for (unsigned int i = 0; i < n; i++) {
		if (!list[i].up || nacre_ost_statfs(fs, list[i].index, &ost))
			continue;
		st->total += ost.total;
		st->free += ost.free;
		st->avail += ost.avail;
	}
	free(list);
	return 0;
}
