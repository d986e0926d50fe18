/* SPDX-License-Identifier: MIT */
/*
 * Background pack compaction (see pack_gc.h).
 *
 * Each pass first asks the MDT, in a read transaction, whether any sealed
 * pack is sparse enough; only then does it connect to this MDS as a
 * libnacre client (as root, with no name cache) and run nacre_pack_gc().
 * A pass that finds nothing to do costs one scan of the pack table and no
 * request.  Compaction never blocks readers: a moved file's old extent
 * stays readable for the MDS's grace period.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/errors.h"
#include "common/log.h"
#include "common/wire.h"
#include "common/xprt.h"
#include "libclient/nacre.h"
#include "mds/pack_gc.h"

struct mds_pack_gc {
	struct mds_pack_gc_conf pg_conf;
	char pg_addr[NC_ADDR_MAX + 32];
	char *pg_fsname;
	char *pg_keyfile;
	pthread_t pg_thread;
	pthread_mutex_t pg_lock;
	pthread_cond_t pg_cond;
	bool pg_stopping;
	bool pg_kicked;
};

int mds_pack_gc_candidates(struct mds_ns *ns, double threshold, uint64_t *count)
{
	struct nc_pack_rec *recs = calloc(NC_PACK_LIST_MAX, sizeof(*recs));
	uint64_t after = 0, n = 0;
	uint32_t got;
	int rc;

	if (!recs)
		return -ENOMEM;
	for (;;) {
		rc = mds_ns_pack_list(ns, after, recs, NC_PACK_LIST_MAX, &got);
		if (rc)
			break;
		for (uint32_t i = 0; i < got; i++) {
			const struct nc_pack_rec *p = &recs[i];

			if (nc_pack_is_sparse(p->pk_sealed, p->pk_files, p->pk_size, p->pk_live,
					      threshold))
				n++;
		}
		if (got < NC_PACK_LIST_MAX)
			break;
		after = recs[got - 1].pk_id;
	}
	free(recs);
	*count = n;
	return rc;
}

int mds_pack_gc_self_addr(const char *listen, int port, char *buf, size_t len)
{
	struct nc_addr a;

	if (nc_addr_parse(listen, &a) || port <= 0 || port > 65535)
		return -NC_E_ADDR;
	if (!strcmp(a.a_host, "0.0.0.0") || !a.a_host[0])
		snprintf(a.a_host, sizeof(a.a_host), "127.0.0.1");
	else if (!strcmp(a.a_host, "::"))
		snprintf(a.a_host, sizeof(a.a_host), "::1");
	a.a_port = (uint16_t)port;
	nc_addr_format(&a, buf, len);
	return 0;
}

/* One pass: compacts when some pack is sparse; 0 or -errno. */
static int pack_gc_pass(struct mds_pack_gc *pg)
{
	/* Root: the compaction opens every packed file, whoever owns it.  As
	 * a server peer, root squash does not turn it into nobody. */
	static const struct nacre_cred root = { .uid = 0, .gid = 0 };
	const struct nacre_opts opts = { .cred = &root, .attr_cache_ms = -1,
					 .server_peer = true, .keyfile = pg->pg_keyfile };
	uint64_t wanted = 0, moved = 0, freed = 0;
	struct nacre_fs *fs;
	int rc;

	rc = mds_pack_gc_candidates(pg->pg_conf.pc_ns, pg->pg_conf.pc_threshold, &wanted);
	if (rc || wanted == 0)
		return rc;
	nc_info("mds", "pack gc: %" PRIu64 " sealed pack%s below live fraction %.2f",
		wanted, wanted == 1 ? "" : "s", pg->pg_conf.pc_threshold);
	rc = nacre_connect(pg->pg_addr, pg->pg_fsname, &opts, &fs);
	if (rc)
		return rc;
	rc = nacre_pack_gc(fs, pg->pg_conf.pc_threshold, &moved, &freed);
	nacre_disconnect(fs);
	nc_info("mds", "pack gc: %" PRIu64 " file%s moved, %" PRIu64 " pack%s emptied%s%s",
		moved, moved == 1 ? "" : "s", freed, freed == 1 ? "" : "s",
		rc ? ", stopped: " : "", rc ? nacre_strerror(rc) : "");
	return rc;
}

static void *pack_gc_main(void *arg)
{
	struct mds_pack_gc *pg = arg;
	struct timespec ts;
	int rc;

	pthread_mutex_lock(&pg->pg_lock);
	for (;;) {
		nc_deadline_ms(&ts, CLOCK_REALTIME, pg->pg_conf.pc_interval_ms);
		while (!pg->pg_stopping && !pg->pg_kicked &&
		       pthread_cond_timedwait(&pg->pg_cond, &pg->pg_lock, &ts) != ETIMEDOUT)
			;
		if (pg->pg_stopping)
			break;
		pg->pg_kicked = false;
		pthread_mutex_unlock(&pg->pg_lock);
		rc = pack_gc_pass(pg);
		if (rc)
			nc_warn("mds", "pack gc pass: %s (next pass in %d s)", nacre_strerror(rc),
				pg->pg_conf.pc_interval_ms / 1000);
		pthread_mutex_lock(&pg->pg_lock);
	}
	pthread_mutex_unlock(&pg->pg_lock);
	return NULL;
}

int mds_pack_gc_start(const struct mds_pack_gc_conf *conf, struct mds_pack_gc **out)
{
	struct mds_pack_gc *pg;
	int rc;

	if (!conf->pc_addr || !conf->pc_fsname || !conf->pc_keyfile || !conf->pc_ns ||
	    conf->pc_interval_ms <= 0 ||
	    !(conf->pc_threshold > 0 && conf->pc_threshold <= 1))
		return -EINVAL;
	pg = calloc(1, sizeof(*pg));
	if (!pg)
		return -ENOMEM;
	pg->pg_conf = *conf;
	snprintf(pg->pg_addr, sizeof(pg->pg_addr), "%s", conf->pc_addr);
	pg->pg_fsname = strdup(conf->pc_fsname);
	pg->pg_keyfile = strdup(conf->pc_keyfile);
	if (!pg->pg_fsname || !pg->pg_keyfile) {
		free(pg->pg_fsname);
		free(pg->pg_keyfile);
		free(pg);
		return -ENOMEM;
	}
	pg->pg_conf.pc_addr = pg->pg_addr;
	pg->pg_conf.pc_fsname = pg->pg_fsname;
	pg->pg_conf.pc_keyfile = pg->pg_keyfile;
	pthread_mutex_init(&pg->pg_lock, NULL);
	pthread_cond_init(&pg->pg_cond, NULL);
	rc = pthread_create(&pg->pg_thread, NULL, pack_gc_main, pg);
	if (rc) {
		pthread_cond_destroy(&pg->pg_cond);
		pthread_mutex_destroy(&pg->pg_lock);
		free(pg->pg_fsname);
		free(pg->pg_keyfile);
		free(pg);
		return -rc;
	}
	*out = pg;
	return 0;
}

void mds_pack_gc_kick(struct mds_pack_gc *pg)
{
	pthread_mutex_lock(&pg->pg_lock);
	pg->pg_kicked = true;
	pthread_cond_broadcast(&pg->pg_cond);
	pthread_mutex_unlock(&pg->pg_lock);
}

void mds_pack_gc_stop(struct mds_pack_gc *pg)
{
	if (!pg)
		return;
	pthread_mutex_lock(&pg->pg_lock);
	pg->pg_stopping = true;
	pthread_cond_broadcast(&pg->pg_cond);
	pthread_mutex_unlock(&pg->pg_lock);
	pthread_join(pg->pg_thread, NULL);
	pthread_cond_destroy(&pg->pg_cond);
	pthread_mutex_destroy(&pg->pg_lock);
	free(pg->pg_fsname);
	free(pg->pg_keyfile);
	free(pg);
}
