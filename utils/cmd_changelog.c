/* SPDX-License-Identifier: MIT */
/*
 * nacre changelog [--since SEQ] [--limit N] [PATH]: the namespace changes
 * the MDS recorded (nacre-mds --changelog), one line each as
 * `lfs changelog` prints them; nacre changelog clear SEQ [PATH] drops the
 * records up to SEQ once a reader has consumed them.  Root only.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define CHANGELOG_BATCH 1024

enum { OPT_SINCE = 0x200, OPT_LIMIT };

/* A sequence number: digits only, 0 to 2^64-2. */
static int changelog_parse_seq(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || *out == UINT64_MAX ? -1 : 0;
}

static void changelog_text(const struct nacre_changelog_rec *r)
{
	char fid[64], parent[64], sparent[64], when[32];
	struct tm tm;

	localtime_r(&r->time.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	nacre_fid_format(&r->fid, fid);
	nacre_fid_format(&r->parent, parent);
	printf("%" PRIu64 " %02u%s %s.%09ld %04d.%02d.%02d uid=%u gid=%u t=[%s]", r->seq, r->type,
	       nacre_changelog_type_name(r->type), when, r->time.tv_nsec, tm.tm_year + 1900,
	       tm.tm_mon + 1, tm.tm_mday, (unsigned int)r->uid, (unsigned int)r->gid, fid);
	if (r->type == NACRE_CL_XATTR)
		printf(" x=%s", r->name);
	else if (r->name[0])
		printf(" p=[%s] %s", parent, r->name);
	if (r->type == NACRE_CL_RENAME) {
		nacre_fid_format(&r->sparent, sparent);
		printf(" sp=[%s] %s", sparent, r->sname);
	}
	putchar('\n');
}

static void changelog_json(struct cli_json *js, const struct nacre_changelog_rec *r)
{
	char buf[64];

	cli_json_obj_begin(js);
	cli_json_kv_u64(js, "seq", r->seq);
	cli_json_kv_str(js, "type", nacre_changelog_type_name(r->type));
	cli_json_kv_u64(js, "uid", r->uid);
	cli_json_kv_u64(js, "gid", r->gid);
	cli_json_kv_double(js, "time", (double)r->time.tv_sec + r->time.tv_nsec / 1e9);
	nacre_fid_format(&r->fid, buf);
	cli_json_kv_str(js, "fid", buf);
	if (r->type == NACRE_CL_XATTR) {
		cli_json_kv_str(js, "xattr", r->name);
	} else if (r->name[0]) {
		nacre_fid_format(&r->parent, buf);
		cli_json_kv_str(js, "parent", buf);
		cli_json_kv_str(js, "name", r->name);
	}
	if (r->type == NACRE_CL_RENAME) {
		nacre_fid_format(&r->sparent, buf);
		cli_json_kv_str(js, "source_parent", buf);
		cli_json_kv_str(js, "source_name", r->sname);
	}
	cli_json_obj_end(js);
}

/* The one filesystem PATH (or the only mount, or --mds) names. */
static int changelog_target(struct cli_ctx *ctx, const char *path, struct nacre_fs **fs)
{
	struct cli_target *targets;
	int n, status;

	status = cli_targets_collect(ctx, path, &targets, &n);
	if (n == 0)
		return status ? status : CLI_EXIT_RUNTIME;
	if (n > 1) {
		free(targets);
		return cli_usage_err(ctx, "several nacre filesystems are mounted: name one");
	}
	*fs = targets[0].tg_fs;
	free(targets);
	return status;
}

static int changelog_print(struct cli_ctx *ctx, struct nacre_fs *fs, uint64_t since,
			   uint64_t limit)
{
	struct nacre_changelog_rec *recs;
	struct cli_json js;
	uint64_t shown = 0;
	int rc = 0;

	recs = calloc(CHANGELOG_BATCH, sizeof(*recs));
	if (!recs)
		return cli_err(ctx, "out of memory");
	cli_json_init(&js, stdout);
	if (ctx->cx_json)
		cli_json_arr_begin(&js);
	while (!limit || shown < limit) {
		size_t want = CHANGELOG_BATCH, n = 0;

		if (limit && limit - shown < want)
			want = (size_t)(limit - shown);
		rc = nacre_changelog_read(fs, since, recs, want, &n, NULL);
		if (rc)
			break;
		for (size_t i = 0; i < n; i++) {
			if (ctx->cx_json)
				changelog_json(&js, &recs[i]);
			else
				changelog_text(&recs[i]);
		}
		shown += n;
		if (n < want)
			break;
		since = recs[n - 1].seq;
	}
	if (ctx->cx_json) {
		cli_json_arr_end(&js);
		cli_json_end(&js);
	}
	free(recs);
	if (rc)
		return cli_err(ctx, "%s: %s", nacre_fs_name(fs), nacre_strerror(rc));
	return 0;
}

static int changelog_clear(struct cli_ctx *ctx, int argc, char **argv)
{
	struct nacre_fs *fs;
	uint64_t upto;
	int rc;

	if (argc < 2)
		return cli_usage_err(ctx, "clear needs the last sequence number to remove");
	if (argc > 3)
		return cli_usage_err(ctx, "too many arguments");
	if (changelog_parse_seq(argv[1], &upto))
		return cli_usage_err(ctx, "bad sequence number '%s'", argv[1]);
	rc = changelog_target(ctx, argc > 2 ? argv[2] : NULL, &fs);
	if (rc)
		return rc;
	rc = nacre_changelog_clear(fs, upto);
	if (rc)
		return cli_err(ctx, "%s: %s", nacre_fs_name(fs), nacre_strerror(rc));
	return 0;
}

int cmd_changelog(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t since = 0, limit = 0;
	struct nacre_fs *fs;
	int c, rc;

	if (argc > 1 && !strcmp(argv[1], "clear"))
		return changelog_clear(ctx, argc - 1, argv + 1);
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SINCE:
			if (changelog_parse_seq(optarg, &since))
				return cli_usage_err(ctx, "bad --since '%s' (a sequence number)",
						     optarg);
			break;
		case OPT_LIMIT:
			if (changelog_parse_seq(optarg, &limit) || limit == 0)
				return cli_usage_err(ctx, "bad --limit '%s' (1 or more)", optarg);
			break;
		default:
			rc = cli_opt_common(ctx, c, argv);
			if (rc != CLI_OPT_CONTINUE)
				return rc;
		}
	}
	if (argc - optind > 1)
		return cli_usage_err(ctx, "too many arguments");
	rc = changelog_target(ctx, optind < argc ? argv[optind] : NULL, &fs);
	if (rc)
		return rc;
	return changelog_print(ctx, fs, since, limit);
}
