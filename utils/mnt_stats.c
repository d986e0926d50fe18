/* SPDX-License-Identifier: MIT */
/*
 * The mount's client counters (libnacre's nacre_counters()) and its own
 * (what it keeps of the kernel's inodes) in the Prometheus text format, for two readers: the "nacre.stats" virtual
 * extended attribute of the mount root, which `nacre stats` reads, and the
 * optional metrics port (-o metrics=tcp://host:port).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics_http.h"
#include "utils/mnt.h"

/* The mount's own figures, after libnacre's. */
static void mnt_stats_own(struct mnt_ctx *ctx, FILE *f)
{
	uint64_t count, evicted;

	pthread_mutex_lock(&ctx->mc_lock);
	count = ctx->mc_inos.it_count;
	evicted = ctx->mc_inos.it_evicted;
	pthread_mutex_unlock(&ctx->mc_lock);
	fprintf(f, "# HELP nacre_mount_inodes Inodes the mount keeps a cache record of "
		   "(those the kernel holds)\n# TYPE nacre_mount_inodes gauge\n"
		   "nacre_mount_inodes %" PRIu64 "\n", count);
	fprintf(f, "# HELP nacre_mount_inodes_evicted_total Inode records dropped to stay "
		   "within the mount's bound\n# TYPE nacre_mount_inodes_evicted_total counter\n"
		   "nacre_mount_inodes_evicted_total %" PRIu64 "\n", evicted);
}

int mnt_stats_text(struct mnt_ctx *ctx, char **text, size_t *len)
{
	struct nacre_fs *fs = ctx->mc_fs;
	struct nacre_counter *c;
	size_t size = 0;
	char *buf = NULL;
	FILE *f;
	int n;

	n = nacre_counters(fs, NULL, 0);
	c = calloc((size_t)n, sizeof(*c));
	if (!c)
		return -ENOMEM;
	nacre_counters(fs, c, n);
	f = open_memstream(&buf, &size);
	if (!f) {
		free(c);
		return -ENOMEM;
	}
	/* The help texts are ours: no backslash or newline to escape. */
	for (int i = 0; i < n; i++)
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %" PRIu64 "\n", c[i].name, c[i].help,
			c[i].name, c[i].kind == NACRE_CTR_GAUGE ? "gauge" : "counter", c[i].name,
			c[i].value);
	free(c);
	mnt_stats_own(ctx, f);
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return -ENOMEM;
	}
	if (fclose(f)) {
		free(buf);
		return -ENOMEM;
	}
	*text = buf;
	*len = size;
	return 0;
}

static int mnt_stats_render(void *arg, char **text, size_t *len)
{
	return mnt_stats_text(arg, text, len);
}

int mnt_metrics_start(struct mnt_ctx *ctx, const char *addr, struct nc_mhttp **out)
{
	char bound[128];
	int rc;

	rc = nc_mhttp_start(addr, mnt_stats_render, ctx, out, bound, sizeof(bound));
	if (rc == -EINVAL)
		mnt_log(MNT_LOG_ERROR, "bad metrics address '%s' (want tcp://host:port)", addr);
	else if (rc)
		mnt_log(MNT_LOG_ERROR, "cannot serve metrics on %s: %s", addr, strerror(-rc));
	else
		mnt_log(MNT_LOG_INFO, "metrics on %s (GET /metrics)", bound);
	return rc;
}
