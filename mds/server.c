/* SPDX-License-Identifier: MIT */
/*
 * MDS setup, the live OST registry (an OST is up while the connection of
 * the OSS that registered it lives), and the background threads' start and
 * stop.  The writer thread (group commit, recovery) is in mds/writer.c, the
 * destroy thread (destroy queue, OST space poll) in mds/destroy.c, their
 * shared state in mds/server_int.h.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/errors.h"
#include "common/log.h"
#include "mds/catchup.h"
#include "mds/pack_gc.h"
#include "mds/server_int.h"

const struct mds_squash *mds_server_squash(struct mds_server *mds)
{
	return &mds->ms_squash;
}

struct mds_ns *mds_server_ns(struct mds_server *mds)
{
	return mds->ms_ns;
}

struct mds_metrics *mds_server_metrics(struct mds_server *mds)
{
	return mds->ms_metrics;
}

void mds_server_ost_set(struct mds_server *mds, struct mds_ost_set *set)
{
	set->os_count = 0;
	set->os_ndown = 0;
	pthread_mutex_lock(&mds->ms_ost_lock);
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++) {
		const struct mds_ost_live *ol = &mds->ms_osts[i];

		set->os_full[i] = false;
		if (!ol->ol_known || !mds_ost_is_eligible(&ol->ol_info))
			continue;
		/* A full OST takes no new objects, as if it were down. */
		set->os_full[i] = mds_ost_serves(ol) && ol->ol_full;
		if (mds_ost_serves(ol) && !ol->ol_full)
			set->os_index[set->os_count++] = i;
		else
			set->os_down[set->os_ndown++] = i;
	}
	pthread_mutex_unlock(&mds->ms_ost_lock);
}

void mds_server_ost_list(struct mds_server *mds, struct nc_ost_list_rep *rep)
{
	rep->ol_count = 0;
	pthread_mutex_lock(&mds->ms_ost_lock);
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++) {
		if (!mds->ms_osts[i].ol_known)
			continue;
		rep->ol_osts[rep->ol_count] = mds->ms_osts[i].ol_info;
		rep->ol_osts[rep->ol_count].o_state =
			(mds_ost_serves(&mds->ms_osts[i]) ? NC_OST_UP : NC_OST_DOWN) |
			(mds->ms_osts[i].ol_info.o_state & NC_OST_INACTIVE);
		rep->ol_count++;
	}
	pthread_mutex_unlock(&mds->ms_ost_lock);
}

int mds_server_ost_register(struct mds_server *mds, const struct nc_ost_info *ost,
			    uint64_t conn_id)
{
	struct mds_ost_live *ol;
	uint32_t flags;
	int rc;

	if (ost->o_index >= NC_MAX_OSTS)
		return -EINVAL;
	if (ost->o_state & NC_OSTREG_REPLACE) {
		uint64_t marked;

		rc = mds_ns_ost_replace(mds->ms_ns, ost, &marked);
		if (!rc)
			mds_metrics_stale(mds->ms_metrics, marked, 0);
		if (!rc)
			nc_warn("mds", "OST %u was replaced (new uuid): %" PRIu64 " files have "
				"stale shards there; %s nacre rebuild --ost %u", ost->o_index,
				marked, mds->ms_catchup ? "the catch-up rebuilds them, or" : "run",
				ost->o_index);
	} else {
		rc = mds_ns_ost_register(mds->ms_ns, ost);
	}
	if (rc) {
		nc_warn("mds", "OST %u registration refused: %s", ost->o_index, nc_strerror(rc));
		return rc;
	}
	pthread_mutex_lock(&mds->ms_ost_lock);
	ol = &mds->ms_osts[ost->o_index];
	flags = ol->ol_known ? ol->ol_info.o_state & NC_OST_INACTIVE : 0;
	ol->ol_known = true;
	ol->ol_info = *ost;
	ol->ol_info.o_state = flags;     /* the administrator's, kept */
	if (!ol->ol_up)
		nc_info("mds", "OST %u is up at %s", ost->o_index, ost->o_addr);
	ol->ol_up = true;
	ol->ol_silent = false;
	ol->ol_conn = conn_id;
	pthread_mutex_unlock(&mds->ms_ost_lock);
	mds_catchup_ost_up(mds->ms_catchup, ost->o_index);
	mds_recovery_check(mds);
	mds_server_kick_destroy(mds);
	return 0;
}

int mds_server_ost_admin(struct mds_server *mds, const struct nc_cred *cred, uint32_t idx,
			 uint32_t op)
{
	bool active;
	int rc;

	if (op == NC_OSTADM_ACTIVATE)
		active = true;
	else if (op == NC_OSTADM_DEACTIVATE)
		active = false;
	else
		return -EINVAL;
	rc = mds_ns_ost_set_active(mds->ms_ns, cred, idx, active);
	if (rc)
		return rc;
	pthread_mutex_lock(&mds->ms_ost_lock);
	if (active)
		mds->ms_osts[idx].ol_info.o_state &= ~NC_OST_INACTIVE;
	else
		mds->ms_osts[idx].ol_info.o_state |= NC_OST_INACTIVE;
	pthread_mutex_unlock(&mds->ms_ost_lock);
	nc_info("mds", "OST %u %s: it %s new objects", idx,
		active ? "activated" : "deactivated", active ? "gets" : "gets no");
	return 0;
}

static void conn_closed(struct nc_srv_conn *conn, void *arg)
{
	struct mds_server *mds = arg;
	uint64_t id = nc_srv_conn_id(conn);

	pthread_mutex_lock(&mds->ms_ost_lock);
	for (uint32_t i = 0; i < NC_MAX_OSTS; i++) {
		struct mds_ost_live *ol = &mds->ms_osts[i];

		if (ol->ol_known && ol->ol_up && ol->ol_conn == id) {
			ol->ol_up = false;
			ol->ol_silent = false;
			nc_info("mds", "OST %u is down (its OSS at %s disconnected)", i,
				ol->ol_info.o_addr);
		}
	}
	pthread_mutex_unlock(&mds->ms_ost_lock);
}

static int load_osts(struct mds_server *mds)
{
	struct nc_ost_info *list = calloc(NC_MAX_OSTS, sizeof(*list));
	uint32_t n = 0;
	int rc;

	if (!list)
		return -ENOMEM;
	rc = mds_ns_ost_list(mds->ms_ns, list, NC_MAX_OSTS, &n);
	for (uint32_t i = 0; !rc && i < n; i++) {
		if (list[i].o_index >= NC_MAX_OSTS)
			continue;
		mds->ms_osts[list[i].o_index].ol_known = true;
		mds->ms_osts[list[i].o_index].ol_info = list[i];
		mds->ms_osts[list[i].o_index].ol_info.o_state &= NC_OST_INACTIVE;
	}
	free(list);
	return rc;
}

/* ---- setup ---- */

/* Formatting makes the cluster key, unless one is there already (it may
 * have been made beforehand, and is never replaced). */
static int key_create(struct mds_server *mds)
{
	int rc = nc_auth_key_create(mds->ms_keyfile, NULL);

	if (rc == -EEXIST) {
		nc_info("mds", "using the existing cluster key %s", mds->ms_keyfile);
		return 0;
	}
	if (rc)
		nc_error("mds", "cannot create the cluster key %s: %s", mds->ms_keyfile,
			 nc_strerror(rc));
	else
		nc_info("mds", "created the cluster key %s", mds->ms_keyfile);
	return rc;
}

int mds_server_new(const struct mds_conf *conf, struct mds_server **out)
{
	struct nc_server_conf sc = { 0 };
	struct mds_server *mds;
	int rc;

	if (!conf->mc_dir || !conf->mc_fsname || !conf->mc_listen)
		return -EINVAL;
	mds = calloc(1, sizeof(*mds));
	if (!mds)
		return -ENOMEM;
	mds->ms_conf = *conf;
	if (mds->ms_conf.mc_destroy_interval_ms <= 0)
		mds->ms_conf.mc_destroy_interval_ms = 2000;
	if (mds->ms_conf.mc_pack_gc_interval_ms == 0)
		mds->ms_conf.mc_pack_gc_interval_ms = MDS_PACK_GC_INTERVAL_MS_DEFAULT;
	if (mds->ms_conf.mc_pack_gc_threshold == 0)
		mds->ms_conf.mc_pack_gc_threshold = MDS_PACK_GC_THRESHOLD_DEFAULT;
	if (!(mds->ms_conf.mc_pack_gc_threshold > 0 && mds->ms_conf.mc_pack_gc_threshold <= 1)) {
		free(mds);
		return -EINVAL;
	}
	{
		char err[128];

		rc = mds_squash_parse(&mds->ms_squash, conf->mc_root_squash, conf->mc_nosquash,
				      err, sizeof(err));
		if (rc) {
			nc_error("mds", "%s", err);
			free(mds);
			return rc;
		}
		if (mds->ms_squash.sq_on)
			nc_info("mds", "root squash: root of clients served as %u:%u, %u exempt network%s",
				mds->ms_squash.sq_uid, mds->ms_squash.sq_gid,
				mds->ms_squash.sq_nnets, mds->ms_squash.sq_nnets == 1 ? "" : "s");
	}
	pthread_mutex_init(&mds->ms_ost_lock, NULL);
	pthread_mutex_init(&mds->ms_lock, NULL);
	pthread_cond_init(&mds->ms_cond, NULL);
	pthread_mutex_init(&mds->ms_wq_lock, NULL);
	pthread_cond_init(&mds->ms_wq_cond, NULL);

	rc = nc_auth_key_path(conf->mc_keyfile, conf->mc_fsname, mds->ms_keyfile,
			      sizeof(mds->ms_keyfile));
	if (rc) {
		nc_error("mds", "cluster key file name: %s", nc_strerror(rc));
		goto out_free;
	}
	rc = mds_ns_open(conf->mc_dir, conf->mc_map_size, &mds->ms_ns);
	if (rc == -NC_E_NOTFMT && conf->mc_format) {
		rc = key_create(mds);
		if (!rc)
			rc = mds_ns_format(conf->mc_dir, conf->mc_fsname, NULL,
					   conf->mc_map_size);
		if (!rc) {
			nc_info("mds", "formatted MDT of %s in %s", conf->mc_fsname, conf->mc_dir);
			rc = mds_ns_open(conf->mc_dir, conf->mc_map_size, &mds->ms_ns);
		}
	}
	if (rc) {
		nc_error("mds", "MDT in %s: %s", conf->mc_dir, nc_strerror(rc));
		goto out_free;
	}
	if (strcmp(mds_ns_fsname(mds->ms_ns), conf->mc_fsname)) {
		nc_error("mds", "%s holds filesystem '%s', not '%s'", conf->mc_dir,
			 mds_ns_fsname(mds->ms_ns), conf->mc_fsname);
		rc = -NC_E_FSNAME;
		goto out_free;
	}
	rc = nc_auth_key_load(mds->ms_keyfile, mds->ms_key);
	if (rc) {
		nc_error("mds", "cluster key %s: %s", mds->ms_keyfile, nc_strerror(rc));
		goto out_free;
	}
	rc = load_osts(mds);
	if (rc)
		goto out_free;
	mds_recovery_begin(mds);
	mds_ns_changelog_enable(mds->ms_ns, conf->mc_changelog);
	if (conf->mc_changelog)
		nc_info("mds", "changelog on: namespace changes are recorded");

	sc.sc_name = "mds";
	sc.sc_key = mds->ms_key;
	sc.sc_fsname = conf->mc_fsname;
	sc.sc_role = NC_ROLE_MDS;
	sc.sc_threads = conf->mc_threads > 0 ? conf->mc_threads : 8;
	sc.sc_handler = mds_handle;
	sc.sc_replay = true;
	mds->ms_started_s = (int64_t)time(NULL);
	mds_fault_parse(mds);
	sc.sc_closed = conn_closed;
	sc.sc_arg = mds;
	mds_ns_uuid(mds->ms_ns, sc.sc_uuid);
	rc = nc_server_new(&sc, &mds->ms_srv);
	if (rc)
		goto out_free;
	rc = nc_server_listen_list(mds->ms_srv, conf->mc_listen, mds->ms_bound,
				   sizeof(mds->ms_bound));
	if (rc) {
		nc_error("mds", "cannot listen on %s: %s", conf->mc_listen, nc_strerror(rc));
		goto out_free;
	}
	if (conf->mc_metrics) {
		rc = mds_metrics_new(mds, mds->ms_srv, &mds->ms_metrics);
		if (rc)
			goto out_free;
	}
	*out = mds;
	return 0;
out_free:
	mds_server_free(mds);
	return rc;
}

/* Where the compaction thread reaches this MDS: its TCP address when it
 * has one (no RDMA needed on the MDS host), else the first. */
static int self_addr(struct mds_server *mds, char *buf, size_t len)
{
	char list[NC_ADDR_MAX + 1], *save = NULL, *tok, *pick = NULL;
	struct nc_addr a;

	snprintf(list, sizeof(list), "%s", mds->ms_bound);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!pick)
			pick = tok;
		if (!strncmp(tok, "tcp://", 6)) {
			pick = tok;
			break;
		}
	}
	if (!pick || nc_addr_parse(pick, &a))
		return -NC_E_ADDR;
	return mds_pack_gc_self_addr(pick, a.a_port, buf, len);
}

/* The compaction thread, a client of this MDS once it serves. */
static int pack_gc_start(struct mds_server *mds)
{
	struct mds_pack_gc_conf pc = {
		.pc_fsname = mds->ms_conf.mc_fsname,
		.pc_ns = mds->ms_ns,
		.pc_interval_ms = mds->ms_conf.mc_pack_gc_interval_ms,
		.pc_threshold = mds->ms_conf.mc_pack_gc_threshold,
		.pc_keyfile = mds->ms_keyfile,
	};
	char addr[NC_ADDR_MAX + 32];
	int rc;

	if (pc.pc_interval_ms < 0)
		return 0;
	rc = self_addr(mds, addr, sizeof(addr));
	if (rc)
		return rc;
	pc.pc_addr = addr;
	rc = mds_pack_gc_start(&pc, &mds->ms_pack_gc);
	if (rc)
		nc_error("mds", "pack compaction thread: %s", nc_strerror(rc));
	return rc;
}

void mds_server_kick_pack_gc(struct mds_server *mds)
{
	if (mds->ms_pack_gc)
		mds_pack_gc_kick(mds->ms_pack_gc);
}

static bool catchup_ost_is_up(void *arg, uint32_t ost)
{
	struct mds_server *mds = arg;
	bool up;

	pthread_mutex_lock(&mds->ms_ost_lock);
	up = mds_ost_serves(&mds->ms_osts[ost]);
	pthread_mutex_unlock(&mds->ms_ost_lock);
	return up;
}

/* The catch-up rebuild thread, a client of this MDS once it serves. */
static int catchup_start(struct mds_server *mds)
{
	const struct mds_conf *c = &mds->ms_conf;
	struct mds_catchup_conf cc = {
		.cc_fsname = c->mc_fsname,
		.cc_keyfile = mds->ms_keyfile,
		.cc_ns = mds->ms_ns,
		.cc_workers = c->mc_catchup_workers > 0 ? c->mc_catchup_workers :
			      MDS_CATCHUP_WORKERS_DEFAULT,
		.cc_delay_ms = c->mc_catchup_delay_ms < 0 ? 0 : c->mc_catchup_delay_ms > 0 ?
			       c->mc_catchup_delay_ms : MDS_CATCHUP_DELAY_MS_DEFAULT,
		.cc_sweep_ms = c->mc_catchup_sweep_ms < 0 ? 0 : c->mc_catchup_sweep_ms > 0 ?
			       c->mc_catchup_sweep_ms : MDS_CATCHUP_SWEEP_MS_DEFAULT,
		.cc_up = catchup_ost_is_up,
		.cc_arg = mds,
	};
	char addr[NC_ADDR_MAX + 32];
	int rc;

	if (c->mc_no_catchup)
		return 0;
	rc = self_addr(mds, addr, sizeof(addr));
	if (rc)
		return rc;
	cc.cc_addr = addr;
	rc = mds_catchup_start(&cc, &mds->ms_catchup);
	if (rc)
		nc_error("mds", "catch-up rebuild thread: %s", nc_strerror(rc));
	return rc;
}

void mds_server_catchup_stats(struct mds_server *mds, struct mds_catchup_stats *st)
{
	mds_catchup_stats(mds->ms_catchup, st);
}

int mds_server_start(struct mds_server *mds)
{
	int rc = pthread_create(&mds->ms_writer, NULL, mds_writer_main, mds);

	if (rc)
		return -rc;
	mds->ms_writer_started = true;
	/* Before serving, so no OST registers unseen; its first pass waits
	 * for the OSTs to come. */
	rc = catchup_start(mds);
	if (rc)
		return rc;
	rc = nc_server_start(mds->ms_srv);
	if (rc)
		return rc;
	rc = pthread_create(&mds->ms_destroy, NULL, mds_destroy_main, mds);
	if (rc) {
		nc_server_stop(mds->ms_srv);
		return -rc;
	}
	mds->ms_destroy_started = true;
	if (mds->ms_metrics) {
		rc = mds_metrics_serve(mds->ms_metrics, mds->ms_conf.mc_metrics);
		if (rc)
			return rc;
	}
	return pack_gc_start(mds);
}

int mds_server_port(struct mds_server *mds)
{
	return nc_server_bound_port(mds->ms_srv, 0);
}

void mds_server_stop(struct mds_server *mds)
{
	if (!mds)
		return;
	/* Scrapes read what the rest tears down. */
	mds_metrics_stop(mds->ms_metrics);
	/* First: a pass under way needs this MDS to serve it. */
	mds_pack_gc_stop(mds->ms_pack_gc);
	mds->ms_pack_gc = NULL;
	mds_catchup_stop(mds->ms_catchup);
	mds->ms_catchup = NULL;
	if (mds->ms_destroy_started) {
		pthread_mutex_lock(&mds->ms_lock);
		mds->ms_stopping = true;
		pthread_cond_broadcast(&mds->ms_cond);
		pthread_mutex_unlock(&mds->ms_lock);
		pthread_join(mds->ms_destroy, NULL);
		mds->ms_destroy_started = false;
	}
	nc_server_stop(mds->ms_srv);
	/* After the service threads: nothing is queued any more; what is
	 * queued still runs (and its replies go to connections now closed). */
	if (mds->ms_writer_started) {
		struct nc_req *req;

		pthread_mutex_lock(&mds->ms_wq_lock);
		/* Their clients send them again to the next MDS. */
		while ((req = nc_reqq_pop(&mds->ms_parked)))
			nc_req_drop(req);
		mds->ms_writer_stop = true;
		pthread_cond_broadcast(&mds->ms_wq_cond);
		pthread_mutex_unlock(&mds->ms_wq_lock);
		pthread_join(mds->ms_writer, NULL);
		mds->ms_writer_started = false;
	}
}

void mds_server_free(struct mds_server *mds)
{
	if (!mds)
		return;
	mds_server_stop(mds);
	nc_server_free(mds->ms_srv);
	mds_metrics_free(mds->ms_metrics);
	for (int i = 0; i < mds->ms_noss; i++)
		nc_cconn_free(mds->ms_oss[i].oc_conn);
	mds_ns_close(mds->ms_ns);
	nc_reqq_fini(&mds->ms_wq);
	nc_reqq_fini(&mds->ms_parked);
	pthread_mutex_destroy(&mds->ms_wq_lock);
	pthread_cond_destroy(&mds->ms_wq_cond);
	pthread_mutex_destroy(&mds->ms_ost_lock);
	pthread_mutex_destroy(&mds->ms_lock);
	pthread_cond_destroy(&mds->ms_cond);
	nc_auth_wipe(mds->ms_key, sizeof(mds->ms_key));
	free(mds);
}
