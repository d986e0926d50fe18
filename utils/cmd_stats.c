/* SPDX-License-Identifier: MIT */
/*
 * nacre stats [MOUNT]: the client counters of a mount (reads, writes,
 * degraded reads, checksum errors, rebuilds...).  They live in the
 * mount.nacre process, which answers them itself as the "nacre.stats"
 * virtual extended attribute of the mount root, in the Prometheus text
 * format (docs/metrics.md).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "cli.h"

#define STATS_XATTR "nacre.stats"
#define STATS_MAX 256

struct stats_entry {
	char se_name[96];
	uint64_t se_value;
};

/* The "name value" lines of the exposition @text; the count, or -EPROTO
 * for a line that is neither a comment nor a sample. */
static int stats_parse(char *text, struct stats_entry *e, int max)
{
	char *save = NULL, *line;
	int n = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp, *end;

		if (line[0] == '#')
			continue;
		sp = strchr(line, ' ');
		if (!sp || sp == line || (size_t)(sp - line) >= sizeof(e->se_name) || n == max)
			return -EPROTO;
		memcpy(e[n].se_name, line, (size_t)(sp - line));
		e[n].se_name[sp - line] = '\0';
		errno = 0;
		e[n].se_value = strtoull(sp + 1, &end, 10);
		if (errno || end == sp + 1 || *end)
			return -EPROTO;
		n++;
	}
	return n;
}

/* The counters of the mount at @mnt: their number, or -errno. */
static int stats_read(const char *mnt, struct stats_entry *e, int max)
{
	ssize_t len = getxattr(mnt, STATS_XATTR, NULL, 0);
	char *buf;
	int n;

	if (len < 0)
		return errno == ENODATA || errno == ENOTSUP ? -EOPNOTSUPP : -errno;
	/* Counters may have grown a digit since the size was asked. */
	buf = malloc((size_t)len + 256);
	if (!buf)
		return -ENOMEM;
	len = getxattr(mnt, STATS_XATTR, buf, (size_t)len + 255);
	if (len < 0) {
		n = -errno;
		free(buf);
		return n;
	}
	buf[len] = '\0';
	n = stats_parse(buf, e, max);
	free(buf);
	return n;
}

static int stats_one(struct cli_ctx *ctx, const char *mnt, struct cli_json *js, bool heading)
{
	struct stats_entry *e = calloc(STATS_MAX, sizeof(*e));
	int n, w = 7;

	if (!e)
		return cli_err(ctx, "%s", strerror(ENOMEM));
	n = stats_read(mnt, e, STATS_MAX);
	if (n < 0) {
		free(e);
		if (n == -EOPNOTSUPP)
			return cli_err(ctx, "%s: no client counters (not a nacre mount, or its "
				       "mount.nacre predates them)", mnt);
		return cli_err(ctx, "%s: %s", mnt, n == -EPROTO ?
			       "the mount answered counters this nacre cannot read" :
			       strerror(-n));
	}
	if (js) {
		cli_json_obj_begin(js);
		cli_json_kv_str(js, "mount", mnt);
		cli_json_key(js, "counters");
		cli_json_obj_begin(js);
		for (int i = 0; i < n; i++)
			cli_json_kv_u64(js, e[i].se_name, e[i].se_value);
		cli_json_obj_end(js);
		cli_json_obj_end(js);
	} else {
		if (heading)
			printf("%s:\n", mnt);
		for (int i = 0; i < n; i++)
			if ((int)strlen(e[i].se_name) > w)
				w = (int)strlen(e[i].se_name);
		printf("%-*s %s\n", w, "COUNTER", "VALUE");
		for (int i = 0; i < n; i++)
			printf("%-*s %" PRIu64 "\n", w, e[i].se_name, e[i].se_value);
	}
	free(e);
	return 0;
}

int cmd_stats(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	char (*mounts)[PATH_MAX];
	int c, n, rc, status = 0;
	struct cli_json js;

	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		rc = cli_opt_common(ctx, c, argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	if (argc - optind > 1)
		return cli_usage_err(ctx, "too many arguments");
	if (ctx->cx_mds)
		return cli_usage_err(ctx, "the counters are a mount's: give a MOUNT, not --mds");
	mounts = malloc(sizeof(*mounts) * CLI_MAX_MOUNTS);
	if (!mounts)
		return cli_err(ctx, "%s", strerror(ENOMEM));
	if (optind < argc) {
		/* Any path on the mount names it. */
		cli_mount_of("/proc/self/mounts", argv[optind], mounts[0], sizeof(mounts[0]));
		n = 1;
	} else {
		n = cli_mounts_find("/proc/self/mounts", mounts, CLI_MAX_MOUNTS);
		if (n < 0)
			status = cli_err(ctx, "/proc/self/mounts: %s", strerror(-n));
		else if (n == 0)
			status = cli_err(ctx, "no nacre filesystem mounted");
	}
	cli_json_init(&js, stdout);
	if (ctx->cx_json && n > 1)
		cli_json_arr_begin(&js);
	for (int i = 0; i < n; i++) {
		if (!ctx->cx_json && i > 0)
			putchar('\n');
		if (stats_one(ctx, mounts[i], ctx->cx_json ? &js : NULL, n > 1))
			status = CLI_EXIT_RUNTIME;
	}
	if (ctx->cx_json && n > 1)
		cli_json_arr_end(&js);
	if (ctx->cx_json && n > 0)
		cli_json_end(&js);
	free(mounts);
	return status;
}
