/* SPDX-License-Identifier: MIT */
/*
 * nacre getstripe PATH... and nacre setstripe [-S SIZE] [-c COUNT] [-i OST]
 * [-E K+M|none] PATH: show and set layouts, as `lfs getstripe` /
 * `lfs setstripe` do, plus the erasure code of the rows (-E).
 *
 * A file's layout lists its objects (one per OST, all named by the file's
 * FID); a directory's is a template for new files where 0 means "the
 * filesystem default".
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define STRIPE_ALL UINT32_MAX
/* The widest codes the MDS accepts (and isa-l encodes quickly). */
#define STRIPE_MAX_K 16
#define STRIPE_MAX_M 4

/* What `nacre setstripe` was asked to change. */
struct stripe_req {
	bool sr_has_size, sr_has_count, sr_has_index, sr_has_ec;
	uint32_t sr_size;
	uint32_t sr_count;              /* STRIPE_ALL: every OST */
	uint32_t sr_index;              /* NACRE_OST_ANY: the MDS chooses */
	uint32_t sr_k, sr_m;            /* 1+0 for "none" */
};

/* ---- showing a layout ---- */

static void stripe_pattern(const struct nacre_layout *l, char *buf, size_t len)
{
	if (l->m == 0)
		snprintf(buf, len, "raid0");
	else
		snprintf(buf, len, "ec %" PRIu32 "+%" PRIu32, l->k, l->m);
}

/* The first OST as lfs shows it: -1 when none is fixed. */
static int64_t stripe_first_ost(const struct nacre_layout *l, bool dir)
{
	if (dir && l->first_ost == NACRE_OST_ANY)
		return -1;
	if (dir)
		return l->first_ost;
	return l->shard_count ? (int64_t)l->shards[0].ost : -1;
}

static int64_t stripe_count_value(const struct nacre_layout *l)
{
	return l->stripe_count == STRIPE_ALL ? -1 : (int64_t)l->stripe_count;
}

/* Shards to show; a count past the array is never trusted. */
static uint32_t stripe_nshards(const struct nacre_layout *l)
{
	return l->shard_count < NACRE_MAX_STRIPES ? l->shard_count :
		NACRE_MAX_STRIPES;
}

static void stripe_print_json(struct cli_json *js, const char *path,
			      const struct nacre_fid *fid, bool dir,
			      const struct nacre_layout *l)
{
	char fidbuf[40], pattern[32];
	uint32_t i, n;

	nacre_fid_format(fid, fidbuf);
	stripe_pattern(l, pattern, sizeof(pattern));
	cli_json_obj_begin(js);
	cli_json_kv_str(js, "path", path);
	cli_json_kv_str(js, "fid", fidbuf);
	cli_json_kv_str(js, "type", dir ? "directory" : "file");
	cli_json_kv_u64(js, "stripe_size", l->stripe_size);
	cli_json_kv_i64(js, "stripe_count", stripe_count_value(l));
	cli_json_kv_u64(js, "k", l->k);
	cli_json_kv_u64(js, "m", l->m);
	cli_json_kv_str(js, "pattern", pattern);
	cli_json_kv_i64(js, "first_ost", stripe_first_ost(l, dir));
	cli_json_key(js, "shards");
	cli_json_arr_begin(js);
	n = stripe_nshards(l);
	for (i = 0; !dir && i < n; i++) {
		cli_json_obj_begin(js);
		cli_json_kv_u64(js, "ost", l->shards[i].ost);
		cli_json_kv_str(js, "state", l->shards[i].flags &
				NACRE_SHARD_STALE ? "stale" : "ok");
		cli_json_obj_end(js);
	}
	cli_json_arr_end(js);
	cli_json_obj_end(js);
}

static void stripe_print_file(const char *path, const struct nacre_fid *fid,
			      const struct nacre_layout *l)
{
	char fidbuf[40], pattern[32];
	uint32_t i, n;

	nacre_fid_format(fid, fidbuf);
	stripe_pattern(l, pattern, sizeof(pattern));
	printf("%s\n", path);
	printf("lmm_stripe_count:  %" PRId64 "\n", stripe_count_value(l));
	printf("lmm_stripe_size:   %" PRIu32 "\n", l->stripe_size);
	printf("lmm_pattern:       %s\n", pattern);
	printf("lmm_stripe_offset: %" PRId64 "\n", stripe_first_ost(l, false));
	printf("\tobdidx\t %-33s\t state\n", "objid");
	n = stripe_nshards(l);
	for (i = 0; i < n; i++)
		printf("\t%6" PRIu32 "\t %-33s\t %s\n", l->shards[i].ost,
		       fidbuf, l->shards[i].flags & NACRE_SHARD_STALE ?
		       "stale" : "ok");
}

static void stripe_print_dir(const char *path, const struct nacre_layout *l)
{
	char count[16], size[16], pattern[32];

	if (l->stripe_count == 0)
		snprintf(count, sizeof(count), "default");
	else
		snprintf(count, sizeof(count), "%" PRId64,
			 stripe_count_value(l));
	if (l->stripe_size == 0)
		snprintf(size, sizeof(size), "default");
	else
		snprintf(size, sizeof(size), "%" PRIu32, l->stripe_size);
	stripe_pattern(l, pattern, sizeof(pattern));
	printf("%s\n", path);
	printf("stripe_count: %s stripe_size: %s pattern: %s stripe_offset: %" PRId64
	       "\n", count, size, pattern, stripe_first_ost(l, true));
}

static void stripe_print(struct cli_json *js, const char *path,
			 const struct cli_target *t,
			 const struct nacre_layout *l)
{
	bool dir = S_ISDIR(t->tg_st.mode);

	if (js)
		stripe_print_json(js, path, &t->tg_fid, dir, l);
	else if (dir)
		stripe_print_dir(path, l);
	else
		stripe_print_file(path, &t->tg_fid, l);
}

/* Only files and directories have layouts. */
static int stripe_check_type(struct cli_ctx *ctx, const char *path,
			     const struct cli_target *t)
{
	if (S_ISDIR(t->tg_st.mode) || S_ISREG(t->tg_st.mode))
		return 0;
	return cli_err(ctx, "%s: not a regular file or directory, no layout",
		       path);
}

/* ---- getstripe ---- */

static int getstripe_one(struct cli_ctx *ctx, const char *path,
			 struct cli_json *js)
{
	struct nacre_layout l;
	struct cli_target t;
	int rc;

	rc = cli_target_open(ctx, path, &t);
	if (rc)
		return rc;
	rc = stripe_check_type(ctx, path, &t);
	if (rc)
		return rc;
	rc = nacre_getlayout_fid(t.tg_fs, &t.tg_fid, &l);
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	stripe_print(js, path, &t, &l);
	return 0;
}

int cmd_getstripe(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c, i, rc, status = CLI_EXIT_OK;
	struct cli_json js;
	bool many;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		rc = cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c, argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	if (optind >= argc)
		return cli_usage_err(ctx, "missing PATH");
	/* One PATH is one JSON object; several make an array. */
	many = argc - optind > 1;
	cli_json_init(&js, stdout);
	if (ctx->cx_json && many)
		cli_json_arr_begin(&js);
	for (i = optind; i < argc; i++) {
		if (!ctx->cx_json && i > optind)
			putchar('\n');
		rc = getstripe_one(ctx, argv[i], ctx->cx_json ? &js : NULL);
		if (rc)
			status = rc;
	}
	if (ctx->cx_json && many)
		cli_json_arr_end(&js);
	if (ctx->cx_json && (many || status == CLI_EXIT_OK))
		cli_json_end(&js);
	return status;
}

/* ---- setstripe: arguments ---- */

static int setstripe_parse_size(struct cli_ctx *ctx, const char *arg,
				struct stripe_req *req)
{
	uint64_t v;

	if (cli_parse_size(arg, &v) || v % 4096 || v < 4096 ||
	    v > (64u << 20))
		return cli_usage_err(ctx, "invalid stripe size '%s' (a multiple of 4K from 4K to 64M)",
				     arg);
	req->sr_size = (uint32_t)v;
	req->sr_has_size = true;
	return CLI_OPT_CONTINUE;
}

static int setstripe_parse_count(struct cli_ctx *ctx, const char *arg,
				 struct stripe_req *req)
{
	long v;

	if (cli_parse_long(arg, &v) ||
	    (v != -1 && (v < 1 || v > NACRE_MAX_STRIPES)))
		return cli_usage_err(ctx, "invalid stripe count '%s' (1 to %d, or -1 for all OSTs)",
				     arg, NACRE_MAX_STRIPES);
	req->sr_count = v == -1 ? STRIPE_ALL : (uint32_t)v;
	req->sr_has_count = true;
	return CLI_OPT_CONTINUE;
}

static int setstripe_parse_index(struct cli_ctx *ctx, const char *arg,
				 struct stripe_req *req)
{
	long v;

	if (cli_parse_long(arg, &v) || v < -1 || v >= (long)NACRE_OST_ANY)
		return cli_usage_err(ctx, "invalid OST index '%s'", arg);
	req->sr_index = v == -1 ? NACRE_OST_ANY : (uint32_t)v;
	req->sr_has_index = true;
	return CLI_OPT_CONTINUE;
}

/* Digits only, at most @max: strtoul would take signs and blanks. */
static bool setstripe_parse_small(const char *s, const char *end,
				  uint32_t max, uint32_t *out)
{
	uint32_t v = 0;

	if (s == end || end - s > 3)
		return false;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (uint32_t)(*s - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

/* -E K+M, or -E none for plain striping. */
static int setstripe_parse_ec(struct cli_ctx *ctx, const char *arg,
			      struct stripe_req *req)
{
	const char *plus = strchr(arg, '+');
	uint32_t k, m;

	/* The MDS reads k >= 1 as a fixed code, where m = 0 is plain
	 * striping (k is then the stripe count); k = 0 would inherit, and a
	 * filesystem of 6 OSTs or more defaults to 4+2. */
	if (!strcmp(arg, "none")) {
		req->sr_k = 1;
		req->sr_m = 0;
		req->sr_has_ec = true;
		return CLI_OPT_CONTINUE;
	}
	if (!plus || !setstripe_parse_small(arg, plus, STRIPE_MAX_K, &k) ||
	    !setstripe_parse_small(plus + 1, plus + 1 + strlen(plus + 1),
				   STRIPE_MAX_M, &m) || k < 1)
		return cli_usage_err(ctx, "invalid erasure code '%s' (K+M with K 1 to %d and M 0 to %d, or none)",
				     arg, STRIPE_MAX_K, STRIPE_MAX_M);
	req->sr_k = k;
	req->sr_m = m;
	req->sr_has_ec = true;
	return CLI_OPT_CONTINUE;
}

/* Parses argv into @req; returns CLI_OPT_CONTINUE or the exit status. */
static int setstripe_parse(struct cli_ctx *ctx, int argc, char **argv,
			   struct stripe_req *req)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "stripe-size", required_argument, NULL, 'S' },
		{ "stripe-count", required_argument, NULL, 'c' },
		{ "stripe-index", required_argument, NULL, 'i' },
		{ "erasure-code", required_argument, NULL, 'E' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	memset(req, 0, sizeof(*req));
	while ((c = getopt_long(argc, argv, ":S:c:i:E:h", longopts,
				NULL)) != -1) {
		if (c == 'S')
			rc = setstripe_parse_size(ctx, optarg, req);
		else if (c == 'c')
			rc = setstripe_parse_count(ctx, optarg, req);
		else if (c == 'i')
			rc = setstripe_parse_index(ctx, optarg, req);
		else if (c == 'E')
			rc = setstripe_parse_ec(ctx, optarg, req);
		else
			rc = cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c,
					    argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	if (!req->sr_has_size && !req->sr_has_count && !req->sr_has_index &&
	    !req->sr_has_ec)
		return cli_usage_err(ctx, "one of -S, -c, -i or -E is required");
	/* A count given with the code must hold a whole row. */
	if (req->sr_has_ec && req->sr_has_count && req->sr_m &&
	    req->sr_count != STRIPE_ALL && req->sr_count < req->sr_k + req->sr_m)
		return cli_usage_err(ctx, "stripe count %" PRIu32 " is below the %" PRIu32
				     "+%" PRIu32 " erasure code width",
				     req->sr_count, req->sr_k, req->sr_m);
	if (optind >= argc)
		return cli_usage_err(ctx, "missing PATH");
	if (argc - optind > 1)
		return cli_usage_err(ctx, "too many arguments");
	return CLI_OPT_CONTINUE;
}

/* ---- setstripe: the target ---- */

/* Creates the missing file @path through its mount.  The parent is checked
 * first so that a typo never leaves a stray file on another filesystem. */
static int setstripe_create_mounted(struct cli_ctx *ctx, const char *path)
{
	struct cli_fsid id;
	char *copy, *parent;
	int fd, rc;

	copy = strdup(path);
	if (!copy)
		return cli_err(ctx, "%s", strerror(ENOMEM));
	parent = dirname(copy);
	rc = cli_path_probe(parent, &id);
	if (rc == -EOPNOTSUPP)
		rc = cli_err(ctx, "%s: not on a nacre filesystem", path);
	else if (rc)
		rc = cli_err(ctx, "%s: %s", path, strerror(-rc));
	free(copy);
	if (rc)
		return rc;
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
	if (fd < 0)
		return cli_err(ctx, "%s: %s", path, strerror(errno));
	close(fd);
	return 0;
}

/* Creates the missing file @path inside the --mds filesystem. */
static int setstripe_create_inside(struct cli_ctx *ctx, const char *path)
{
	struct nacre_file *f;
	struct nacre_fs *fs;
	mode_t mask;
	int rc;

	rc = cli_connect(ctx, ctx->cx_mds, ctx->cx_fsname, &fs);
	if (rc)
		return cli_err(ctx, "%s:/%s: %s", ctx->cx_mds, ctx->cx_fsname,
			       nacre_strerror(rc));
	/* open(2) through a mount applies the umask; do the same here. */
	mask = umask(0);
	umask(mask);
	rc = nacre_open(fs, path, O_CREAT | O_EXCL | O_WRONLY, 0666 & ~mask,
			&f);
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	rc = nacre_close(f);
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	return 0;
}

/* Whether @path is missing (so setstripe creates it). */
static bool setstripe_is_missing(struct cli_ctx *ctx, const char *path)
{
	struct nacre_stat st;
	struct cli_fsid id;
	struct nacre_fs *fs;

	if (!ctx->cx_mds)
		return cli_path_probe(path, &id) == -ENOENT;
	if (cli_connect(ctx, ctx->cx_mds, ctx->cx_fsname, &fs))
		return false;   /* cli_target_open reports it */
	return nacre_resolve(fs, NULL, path, true, &st) == -ENOENT;
}

/* Undoes the create of a file whose layout could not be set. */
static void setstripe_remove(struct cli_ctx *ctx, const char *path)
{
	struct nacre_fs *fs;

	/* Best effort: the error that brought us here is what gets
	 * reported. */
	if (!ctx->cx_mds)
		(void)unlink(path);
	else if (!cli_connect(ctx, ctx->cx_mds, ctx->cx_fsname, &fs))
		(void)nacre_unlink(fs, path);
}

/* ---- setstripe: the new layout ---- */

/* The layout to send: the current one with what was asked changed. */
static int setstripe_build(struct cli_ctx *ctx, const char *path, bool dir,
			   const struct stripe_req *req,
			   const struct nacre_layout *cur,
			   struct nacre_layout *l)
{
	*l = *cur;
	l->shard_count = 0;
	if (req->sr_has_size)
		l->stripe_size = req->sr_size;
	if (req->sr_has_count)
		l->stripe_count = req->sr_count;
	/* A new code with no count lets the MDS pick one (at least k + m
	 * OSTs): the old count was sized for the old code. */
	if (req->sr_has_ec) {
		l->k = req->sr_k;
		l->m = req->sr_m;
		if (!req->sr_has_count)
			l->stripe_count = 0;
	}
	/* A file's objects are placed afresh: the MDS picks the first OST
	 * unless told. */
	if (req->sr_has_index)
		l->first_ost = req->sr_index;
	else if (!dir)
		l->first_ost = NACRE_OST_ANY;
	/* An erasure-coded row needs k + m distinct objects. */
	if (l->m && l->stripe_count && l->stripe_count != STRIPE_ALL &&
	    l->stripe_count < l->k + l->m)
		return cli_err(ctx, "%s: stripe count %" PRIu32 " is below the %" PRIu32
			       "+%" PRIu32 " erasure code width", path,
			       l->stripe_count, l->k, l->m);
	return 0;
}

static int setstripe_apply(struct cli_ctx *ctx, const char *path,
			   const struct stripe_req *req, struct cli_target *t)
{
	bool dir = S_ISDIR(t->tg_st.mode);
	struct nacre_layout cur, l;
	int rc;

	rc = stripe_check_type(ctx, path, t);
	if (rc)
		return rc;
	rc = nacre_getlayout_fid(t->tg_fs, &t->tg_fid, &cur);
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	rc = setstripe_build(ctx, path, dir, req, &cur, &l);
	if (rc)
		return rc;
	rc = nacre_setlayout_fid(t->tg_fs, NULL, &t->tg_fid, &l);
	if (rc == -EBUSY)
		return cli_err(ctx, "%s: file holds data, its layout cannot change",
			       path);
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	return 0;
}

/* --json: the layout the MDS now holds. */
static int setstripe_show(struct cli_ctx *ctx, const char *path,
			  const struct cli_target *t)
{
	struct nacre_layout l;
	struct cli_json js;
	int rc;

	rc = nacre_getlayout_fid(t->tg_fs, &t->tg_fid, &l);
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	cli_json_init(&js, stdout);
	stripe_print(&js, path, t, &l);
	cli_json_end(&js);
	return 0;
}

int cmd_setstripe(struct cli_ctx *ctx, int argc, char **argv)
{
	struct stripe_req req;
	struct cli_target t;
	bool created = false;
	const char *path;
	int rc;

	rc = setstripe_parse(ctx, argc, argv, &req);
	if (rc != CLI_OPT_CONTINUE)
		return rc;
	path = argv[optind];
	if (setstripe_is_missing(ctx, path)) {
		rc = ctx->cx_mds ? setstripe_create_inside(ctx, path) :
			setstripe_create_mounted(ctx, path);
		if (rc)
			return rc;
		created = true;
	}
	rc = cli_target_open(ctx, path, &t);
	if (!rc)
		rc = setstripe_apply(ctx, path, &req, &t);
	if (rc) {
		if (created)
			setstripe_remove(ctx, path);
		return rc;
	}
	if (ctx->cx_json)
		return setstripe_show(ctx, path, &t);
	return CLI_EXIT_OK;
}
