/* SPDX-License-Identifier: MIT */
/*
 * OSS setup and the registration thread.  The OSS holds one connection to
 * the MDS; the MDS considers our OSTs up while that connection lives, so a
 * ping every second keeps it alive and notices an MDS restart, after which
 * every OST is registered again.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "common/errors.h"
#include "common/log.h"
#include "oss/fdcache.h"
#include "oss/server.h"

#define OSS_PING_MS 1000

struct oss_server {
	struct oss_conf os_conf;
	char os_fsname[NC_FSNAME_MAX + 1];
	char os_advertise[NC_ADDR_MAX + 1];
	struct oss_ost *os_osts[OSS_MAX_OSTS];
	/* Formatted by this start with oc_replace, and not yet registered
	 * (only the registration thread touches these after setup). */
	bool os_replace[OSS_MAX_OSTS];
	int os_nosts;
	struct oss_locks *os_locks;
	struct nc_server *os_srv;
	struct nc_cconn *os_mds;
	pthread_t os_reg;
	bool os_reg_started;
	bool os_stopping;
	pthread_mutex_t os_lock;
	pthread_cond_t os_cond;
	uint8_t os_key[NC_AUTH_KEY_LEN];
	struct oss_metrics *os_metrics; /* NULL: no metrics port */
};

struct oss_metrics *oss_server_metrics(struct oss_server *oss)
{
	return oss->os_metrics;
}

struct oss_ost *oss_server_ost(struct oss_server *oss, uint32_t index)
{
	for (int i = 0; i < oss->os_nosts; i++)
		if (oss_ost_index(oss->os_osts[i]) == index)
			return oss->os_osts[i];
	return NULL;
}

struct oss_locks *oss_server_locks(struct oss_server *oss)
{
	return oss->os_locks;
}

/* A connection closed: its row locks go with it, so a client that dies
 * mid-write does not hold its rows until the lease runs out. */
static void oss_conn_closed(struct nc_srv_conn *conn, void *arg)
{
	struct oss_server *oss = arg;
	uint32_t n = oss_lock_release_owner(oss->os_locks, nc_srv_conn_id(conn));

	if (n)
		nc_info("oss", "%s closed holding %u row lock(s): released",
			nc_srv_conn_peer(conn), (unsigned int)n);
}

/* How many pack objects each OST keeps open (oss/fdcache.h): a share of
 * the descriptors this process may hold. */
static unsigned int pack_fds_per_ost(unsigned int nosts)
{
	struct rlimit rl;
	unsigned int n;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	n = oss_fdc_size_for(rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : rl.rlim_cur, nosts);
	if (n)
		nc_info("oss", "each OST keeps up to %u pack objects open (descriptor limit %llu)",
			n, (unsigned long long)rl.rlim_cur);
	else
		nc_info("oss", "pack objects are not kept open: the descriptor limit %llu is "
			"below %u", (unsigned long long)rl.rlim_cur, OSS_FDC_MIN_NOFILE);
	return n;
}

static int open_osts(struct oss_server *oss)
{
	const struct oss_conf *c = &oss->os_conf;
	unsigned int pack_fds = pack_fds_per_ost((unsigned int)c->oc_nosts);
	int rc;

	for (int i = 0; i < c->oc_nosts; i++) {
		struct oss_ost *ost;
		bool formatted = false;

		rc = oss_ost_open(c->oc_osts[i].dir, c->oc_fsname, pack_fds, &ost);
		if ((rc == -NC_E_NOTFMT || rc == -ENOENT) && (c->oc_format || c->oc_replace)) {
			rc = oss_ost_format(c->oc_osts[i].dir, c->oc_fsname, c->oc_osts[i].index);
			if (rc == 0) {
				nc_info("oss", "formatted OST %u in %s%s", c->oc_osts[i].index,
					c->oc_osts[i].dir,
					c->oc_replace ? " to replace the lost one" : "");
				formatted = true;
				rc = oss_ost_open(c->oc_osts[i].dir, c->oc_fsname, pack_fds, &ost);
			}
		}
		if (rc) {
			nc_error("oss", "OST %u in %s: %s", c->oc_osts[i].index,
				 c->oc_osts[i].dir, nc_strerror(rc));
			return rc;
		}
		if (oss_ost_index(ost) != c->oc_osts[i].index) {
			nc_error("oss", "%s holds OST %u, not %u", c->oc_osts[i].dir,
				 oss_ost_index(ost), c->oc_osts[i].index);
			oss_ost_close(ost);
			return -NC_E_CONFIG;
		}
		if (oss_server_ost(oss, c->oc_osts[i].index)) {
			nc_error("oss", "OST %u given twice", c->oc_osts[i].index);
			oss_ost_close(ost);
			return -NC_E_CONFIG;
		}
		oss->os_replace[oss->os_nosts] = formatted && c->oc_replace;
		oss->os_osts[oss->os_nosts++] = ost;
	}
	return 0;
}

/* Without the cluster key this server could neither serve nor register. */
static int key_load(struct oss_server *oss)
{
	char path[4096];
	int rc;

	rc = nc_auth_key_path(oss->os_conf.oc_keyfile, oss->os_fsname, path, sizeof(path));
	if (rc) {
		nc_error("oss", "cluster key file name: %s", nc_strerror(rc));
		return rc;
	}
	rc = nc_auth_key_load(path, oss->os_key);
	if (rc)
		nc_error("oss", "cluster key %s: %s", path, nc_strerror(rc));
	return rc;
}

int oss_server_new(const struct oss_conf *conf, struct oss_server **out)
{
	struct nc_server_conf sc = { 0 };
	struct nc_cconn_opts co = { 0 };
	struct oss_server *oss;
	int rc;

	if (!conf->oc_fsname || !conf->oc_mds || !conf->oc_listen || conf->oc_nosts < 1 ||
	    conf->oc_nosts > OSS_MAX_OSTS)
		return -EINVAL;
	oss = calloc(1, sizeof(*oss));
	if (!oss)
		return -ENOMEM;
	oss->os_conf = *conf;
	snprintf(oss->os_fsname, sizeof(oss->os_fsname), "%s", conf->oc_fsname);
	pthread_mutex_init(&oss->os_lock, NULL);
	pthread_cond_init(&oss->os_cond, NULL);
	rc = key_load(oss);
	if (rc)
		goto out_free;
	rc = open_osts(oss);
	if (rc)
		goto out_free;
	rc = oss_locks_new(0, &oss->os_locks);
	if (rc)
		goto out_free;

	sc.sc_name = "oss";
	sc.sc_fsname = oss->os_fsname;
	sc.sc_role = NC_ROLE_OSS;
	sc.sc_key = oss->os_key;
	sc.sc_threads = conf->oc_threads > 0 ? conf->oc_threads : 8;
	sc.sc_handler = oss_handle;
	sc.sc_closed = oss_conn_closed;
	sc.sc_arg = oss;
	oss_ost_uuid(oss->os_osts[0], sc.sc_uuid);
	rc = nc_server_new(&sc, &oss->os_srv);
	if (rc)
		goto out_free;
	rc = nc_server_listen_list(oss->os_srv, conf->oc_listen, oss->os_advertise,
				   sizeof(oss->os_advertise));
	if (rc) {
		nc_error("oss", "cannot listen on %s: %s", conf->oc_listen, nc_strerror(rc));
		goto out_free;
	}
	/* Clients get the addresses as bound (the listen ones may say port 0)
	 * unless told otherwise. */
	if (conf->oc_advertise)
		snprintf(oss->os_advertise, sizeof(oss->os_advertise), "%s", conf->oc_advertise);
	if (conf->oc_metrics) {
		rc = oss_metrics_new(oss->os_srv, oss->os_osts, oss->os_nosts, &oss->os_metrics);
		if (rc)
			goto out_free;
	}

	co.co_role = NC_ROLE_OSS;
	co.co_key = oss->os_key;
	co.co_timeout_ms = 10000;
	co.co_retry_ms = -1; /* the registration loop does its own retrying */
	rc = nc_cconn_new(conf->oc_mds, oss->os_fsname, &co, &oss->os_mds);
	if (rc)
		goto out_free;
	*out = oss;
	return 0;
out_free:
	oss_server_free(oss);
	return rc;
}

int oss_server_port(struct oss_server *oss)
{
	return nc_server_bound_port(oss->os_srv, 0);
}

static int register_osts(struct oss_server *oss)
{
	for (int i = 0; i < oss->os_nosts; i++) {
		struct nc_ost_register_req rr = { 0 };
		struct nc_call call;
		int rc;

		rr.rr_ost.o_index = oss_ost_index(oss->os_osts[i]);
		rr.rr_ost.o_state = NC_OST_UP | (oss->os_replace[i] ? NC_OSTREG_REPLACE : 0);
		oss_ost_uuid(oss->os_osts[i], rr.rr_ost.o_uuid);
		snprintf(rr.rr_ost.o_addr, sizeof(rr.rr_ost.o_addr), "%s", oss->os_advertise);
		rc = nc_cconn_rpc(oss->os_mds, NC_OP_OST_REGISTER,
				  (nc_xdr_fn)nc_wire_ost_register_req, &rr, NULL, NULL, &call);
		if (rc) {
			nc_debug("oss", "registering OST %u with %s: %s", rr.rr_ost.o_index,
				 oss->os_conf.oc_mds, nc_strerror(rc));
			return rc;
		}
		nc_call_fini(&call);
		nc_info("oss", "OST %u registered with the MDS at %s as %s%s",
			rr.rr_ost.o_index, oss->os_conf.oc_mds, oss->os_advertise,
			oss->os_replace[i] ? " (replacing the lost OST)" : "");
		/* The MDS took the new uuid durably: later registrations
		 * (after an MDS restart) are ordinary ones. */
		oss->os_replace[i] = false;
	}
	return 0;
}

static void *reg_main(void *arg)
{
	struct oss_server *oss = arg;
	bool registered = false;
	int last_err = 0;

	pthread_mutex_lock(&oss->os_lock);
	while (!oss->os_stopping) {
		struct timespec ts;
		int rc;

		pthread_mutex_unlock(&oss->os_lock);
		if (registered && !nc_cconn_is_connected(oss->os_mds))
			registered = false;
		if (!registered) {
			rc = register_osts(oss);
			registered = rc == 0;
			if (rc && rc != last_err)
				nc_warn("oss", "cannot register with the MDS at %s: %s (retrying)",
					oss->os_conf.oc_mds, nc_strerror(rc));
			if (rc == -NC_E_FSNAME)
				nc_error("oss", "the MDS refused our OSTs: %s", nc_strerror(rc));
			if (rc == -EEXIST)
				nc_error("oss", "the MDS refused our OSTs: %s (an index held by "
					 "another uuid; start an empty OST that replaces a "
					 "lost one with --replace)", nc_strerror(rc));
			last_err = rc;
		} else {
			struct nc_call call;

			nc_call_init(&call, NC_OP_PING, NULL, 0);
			call.c_timeout_ms = 5000;
			if (nc_cconn_call(oss->os_mds, &call) == 0)
				nc_call_fini(&call);
			else
				registered = false;
		}
		pthread_mutex_lock(&oss->os_lock);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += OSS_PING_MS % 1000 * 1000000L;
		ts.tv_sec += OSS_PING_MS / 1000 + ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (!oss->os_stopping)
			pthread_cond_timedwait(&oss->os_cond, &oss->os_lock, &ts);
	}
	pthread_mutex_unlock(&oss->os_lock);
	return NULL;
}

int oss_server_start(struct oss_server *oss)
{
	int rc = nc_server_start(oss->os_srv);

	if (rc)
		return rc;
	rc = pthread_create(&oss->os_reg, NULL, reg_main, oss);
	if (rc) {
		nc_server_stop(oss->os_srv);
		return -rc;
	}
	oss->os_reg_started = true;
	if (oss->os_metrics)
		return oss_metrics_serve(oss->os_metrics, oss->os_conf.oc_metrics);
	return 0;
}

void oss_server_stop(struct oss_server *oss)
{
	if (!oss)
		return;
	oss_metrics_stop(oss->os_metrics);
	if (oss->os_reg_started) {
		pthread_mutex_lock(&oss->os_lock);
		oss->os_stopping = true;
		pthread_cond_broadcast(&oss->os_cond);
		pthread_mutex_unlock(&oss->os_lock);
		pthread_join(oss->os_reg, NULL);
		oss->os_reg_started = false;
	}
	nc_server_stop(oss->os_srv);
}

void oss_server_free(struct oss_server *oss)
{
	if (!oss)
		return;
	oss_server_stop(oss);
	nc_server_free(oss->os_srv);
	oss_metrics_free(oss->os_metrics);
	nc_cconn_free(oss->os_mds);
	/* After the server: no connection can close into it any more. */
	oss_locks_free(oss->os_locks);
	for (int i = 0; i < oss->os_nosts; i++)
		oss_ost_close(oss->os_osts[i]);
	pthread_mutex_destroy(&oss->os_lock);
	pthread_cond_destroy(&oss->os_cond);
	nc_auth_wipe(oss->os_key, sizeof(oss->os_key));
	free(oss);
}
