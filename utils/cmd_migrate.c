/* SPDX-License-Identifier: MIT */
/*
 * nacre migrate [-E K+M|none] [-c COUNT] [-S SIZE] [--ost-exclude INDEX,...]
 * [-v] PATH...: re-lays out regular files online (every file below a
 * directory), as lfs migrate: nacre_migrate_fid() gives each file new
 * objects on OSTs the MDS chooses outside the exclude list, copies its
 * bytes and swaps the layouts when the file did not change meanwhile.
 *
 * Without -E, -c or -S a file keeps its geometry, and with --ost-exclude
 * alone only the files with a shard (or, packed, a pack shard) on an
 * excluded OST are moved: draining an OST touches nothing else.  With a
 * layout option every file is moved.  A packed file always leaves its
 * pack for objects of its own (nacre pack puts it back).  A file that a
 * writer keeps changing is reported busy and keeps its layout.  The old
 * objects are destroyed after --grace seconds (default 300), so that
 * readers that opened a file before it moved keep reading it.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

enum {
	MIG_OPT_OST_EXCLUDE = 0x200,
	MIG_OPT_GRACE,
};

struct mig_run {
	struct nacre_migrate_opts mr_opts;
	bool mr_has_layout;     /* -E, -c or -S given */
	bool mr_verbose;
	uint64_t mr_migrated, mr_skipped, mr_busy, mr_failed;
	struct cli_json mr_js;
};

/* ---- arguments ---- */

static int mig_parse_exclude(struct cli_ctx *ctx, const char *arg, struct mig_run *mr)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int rc = CLI_OPT_CONTINUE;

	if (!copy)
		return cli_err(ctx, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v;

		if (cli_parse_long(tok, &v) || v < 0 || v >= (long)NACRE_OST_ANY) {
			rc = cli_usage_err(ctx, "invalid OST index '%s' in --ost-exclude", tok);
			break;
		}
		if (mr->mr_opts.nexclude == NACRE_MIGRATE_EXCLUDE_MAX) {
			rc = cli_usage_err(ctx, "at most %d OSTs to exclude",
					   NACRE_MIGRATE_EXCLUDE_MAX);
			break;
		}
		mr->mr_opts.exclude[mr->mr_opts.nexclude++] = (uint32_t)v;
	}
	if (rc == CLI_OPT_CONTINUE && !mr->mr_opts.nexclude)
		rc = cli_usage_err(ctx, "invalid --ost-exclude '%s' (INDEX[,INDEX...])", arg);
	free(copy);
	return rc;
}

static int mig_parse_opt(struct cli_ctx *ctx, int c, char **argv, struct mig_run *mr)
{
	struct nacre_migrate_opts *o = &mr->mr_opts;
	uint64_t size;
	long v;

	switch (c) {
	case 'E':
		if (cli_parse_ec(optarg, &o->k, &o->m))
			return cli_usage_err(ctx, "invalid erasure code '%s' (K+M with K 1 to 16 and M 0 to 4, or none)",
					     optarg);
		o->geometry = true;
		mr->mr_has_layout = true;
		return CLI_OPT_CONTINUE;
	case 'c':
		if (cli_parse_long(optarg, &v) || (v != -1 && (v < 1 || v > NACRE_MAX_STRIPES)))
			return cli_usage_err(ctx, "invalid stripe count '%s' (1 to %d, or -1 for all OSTs)",
					     optarg, NACRE_MAX_STRIPES);
		o->stripe_count = v == -1 ? UINT32_MAX : (uint32_t)v;
		o->geometry = true;
		mr->mr_has_layout = true;
		return CLI_OPT_CONTINUE;
	case 'S':
		if (cli_parse_size(optarg, &size) || size % 4096 || size < 4096 ||
		    size > (64u << 20))
			return cli_usage_err(ctx, "invalid stripe size '%s' (a multiple of 4K from 4K to 64M)",
					     optarg);
		o->stripe_size = (uint32_t)size;
		mr->mr_has_layout = true;
		return CLI_OPT_CONTINUE;
	case MIG_OPT_OST_EXCLUDE:
		return mig_parse_exclude(ctx, optarg, mr);
	case MIG_OPT_GRACE:
		if (cli_parse_long(optarg, &v) || v < 0 || v > 86400)
			return cli_usage_err(ctx, "invalid grace '%s' (0 to 86400 seconds)", optarg);
		o->grace_s = v == 0 ? -1 : (int)v;
		return CLI_OPT_CONTINUE;
	case 'v':
		mr->mr_verbose = true;
		return CLI_OPT_CONTINUE;
	default:
		return cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c, argv);
	}
}

/* -E K+M with -c COUNT: a row must fit. */
static int mig_check(struct cli_ctx *ctx, const struct mig_run *mr)
{
	const struct nacre_migrate_opts *o = &mr->mr_opts;

	if (o->m && o->stripe_count && o->stripe_count != UINT32_MAX &&
	    o->stripe_count < o->k + o->m)
		return cli_usage_err(ctx, "stripe count %" PRIu32 " cannot hold %" PRIu32 "+%" PRIu32
				     " rows", o->stripe_count, o->k, o->m);
	return CLI_OPT_CONTINUE;
}

/* Every excluded index must be an OST of the filesystem: a typo would
 * otherwise drain nothing and say nothing. */
static int mig_check_osts(struct cli_ctx *ctx, struct nacre_fs *fs, const char *path,
			  const struct mig_run *mr)
{
	struct nacre_ost *osts;
	unsigned int n, i, j;
	int rc;

	if (!mr->mr_opts.nexclude)
		return 0;
	rc = nacre_ost_list(fs, &osts, &n);
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	for (i = 0; i < mr->mr_opts.nexclude; i++) {
		for (j = 0; j < n && osts[j].index != mr->mr_opts.exclude[i]; j++)
			;
		if (j == n) {
			free(osts);
			return cli_err(ctx, "%s: no OST %" PRIu32 " in this filesystem", path,
				       mr->mr_opts.exclude[i]);
		}
	}
	free(osts);
	return 0;
}

/* ---- one file ---- */

static bool mig_on_excluded(const struct nacre_layout *l, const struct mig_run *mr)
{
	for (uint32_t i = 0; i < l->shard_count && i < NACRE_MAX_STRIPES; i++)
		for (unsigned int j = 0; j < mr->mr_opts.nexclude; j++)
			if (l->shards[i].ost == mr->mr_opts.exclude[j])
				return true;
	return false;
}

static void mig_result(struct cli_ctx *ctx, struct mig_run *mr, const char *path,
		       const char *result, int err)
{
	if (ctx->cx_json) {
		cli_json_obj_begin(&mr->mr_js);
		cli_json_kv_str(&mr->mr_js, "path", path);
		cli_json_kv_str(&mr->mr_js, "result", result);
		if (err)
			cli_json_kv_str(&mr->mr_js, "error", nacre_strerror(err));
		cli_json_obj_end(&mr->mr_js);
	} else if (mr->mr_verbose && !err) {
		printf("%s: %s\n", path, result);
	}
}

static int mig_visit(struct cli_ctx *ctx, struct nacre_fs *fs, const struct cli_walk_ent *e,
		     void *arg)
{
	struct mig_run *mr = arg;
	struct nacre_layout l;
	int rc;

	if (!S_ISREG(e->we_st.mode))
		return 0;
	if (!mr->mr_has_layout && mr->mr_opts.nexclude) {
		rc = nacre_getlayout_fid(fs, &e->we_st.fid, &l);
		if (rc == -ENOENT)
			return 0;
		if (!rc && !mig_on_excluded(&l, mr)) {
			mr->mr_skipped++;
			mig_result(ctx, mr, e->we_path, "skipped", 0);
			return 0;
		}
	}
	rc = nacre_migrate_fid(fs, NULL, &e->we_st.fid, &mr->mr_opts, &l);
	if (rc == 0) {
		mr->mr_migrated++;
		mig_result(ctx, mr, e->we_path, "migrated", 0);
		return 0;
	}
	if (rc == -ENOENT)
		return 0; /* removed since the listing */
	if (rc == -EBUSY) {
		mr->mr_busy++;
		mig_result(ctx, mr, e->we_path, "busy", rc);
		cli_err(ctx, "%s: busy: the file kept changing while it was copied; not migrated",
			e->we_path);
		return 1;
	}
	mr->mr_failed++;
	mig_result(ctx, mr, e->we_path, "error", rc);
	cli_err(ctx, "%s: %s", e->we_path, nacre_strerror(rc));
	return 1;
}

int cmd_migrate(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "erasure-code", required_argument, NULL, 'E' },
		{ "stripe-count", required_argument, NULL, 'c' },
		{ "stripe-size", required_argument, NULL, 'S' },
		{ "ost-exclude", required_argument, NULL, MIG_OPT_OST_EXCLUDE },
		{ "grace", required_argument, NULL, MIG_OPT_GRACE },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct mig_run *mr = calloc(1, sizeof(*mr));
	unsigned long errors = 0;
	int c, rc;

	if (!mr)
		return cli_err(ctx, "out of memory");
	while ((c = getopt_long(argc, argv, ":E:c:S:vh", longopts, NULL)) != -1) {
		rc = mig_parse_opt(ctx, c, argv, mr);
		if (rc != CLI_OPT_CONTINUE)
			goto out;
	}
	rc = mig_check(ctx, mr);
	if (rc != CLI_OPT_CONTINUE)
		goto out;
	if (optind >= argc) {
		rc = cli_usage_err(ctx, "no PATH (see nacre help migrate)");
		goto out;
	}
	if (ctx->cx_json) {
		cli_json_init(&mr->mr_js, stdout);
		cli_json_obj_begin(&mr->mr_js);
		cli_json_key(&mr->mr_js, "files");
		cli_json_arr_begin(&mr->mr_js);
	}
	for (int i = optind; i < argc; i++) {
		struct cli_target t;

		if (cli_target_open(ctx, argv[i], &t) ||
		    mig_check_osts(ctx, t.tg_fs, argv[i], mr)) {
			errors++;
			continue;
		}
		errors += cli_walk(ctx, &t, argv[i], mig_visit, mr);
	}
	if (ctx->cx_json) {
		cli_json_arr_end(&mr->mr_js);
		cli_json_kv_u64(&mr->mr_js, "migrated", mr->mr_migrated);
		cli_json_kv_u64(&mr->mr_js, "skipped", mr->mr_skipped);
		cli_json_kv_u64(&mr->mr_js, "busy", mr->mr_busy);
		cli_json_kv_u64(&mr->mr_js, "failed", mr->mr_failed);
		cli_json_obj_end(&mr->mr_js);
		cli_json_end(&mr->mr_js);
	} else if (mr->mr_verbose) {
		printf("%" PRIu64 " migrated, %" PRIu64 " skipped, %" PRIu64 " busy, %" PRIu64
		       " failed\n", mr->mr_migrated, mr->mr_skipped, mr->mr_busy, mr->mr_failed);
	}
	rc = errors ? CLI_EXIT_RUNTIME : CLI_EXIT_OK;
out:
	free(mr);
	return rc;
}
