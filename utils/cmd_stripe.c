/* SPDX-License-Identifier: MIT */
/*
 * nacre getstripe PATH... and nacre setstripe [-S SIZE] [-c COUNT] [-i OST]
 * [-E K+M|none] [--pack [--pack-max SIZE] [--inline-max SIZE] | --no-pack] PATH: show and set
 * layouts, as `lfs getstripe` / `lfs setstripe` do, plus the erasure code
 * of the rows (-E) and small-file packing (--pack).
 *
 * A file's layout lists its objects (one per OST, all named by the file's
 * FID, or by a FID of their own once the file was migrated); a packed file's bytes are instead an extent of a pack, and its
 * layout is the pack's (objects named by the pack's FID).  A directory's
 * layout is a template for new files where 0 means "the filesystem
 * default"; with packing on, its new small files are packed.
 */
#include "config.h"

#include <errno.h>
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
/* getopt_long values of the long-only options. */
enum {
	STRIPE_OPT_PACK = 0x200,
	STRIPE_OPT_NO_PACK,
	STRIPE_OPT_PACK_MAX,
	STRIPE_OPT_INLINE_MAX,
	STRIPE_OPT_NO_POOL,
};

/* What `nacre setstripe` was asked to change. */
struct stripe_req {
	bool sr_has_size, sr_has_count, sr_has_index, sr_has_ec;
	bool sr_pack, sr_no_pack, sr_has_pack_max;
	bool sr_has_pool, sr_no_pool;   /* -p POOL (sr_pool "": clear), --no-pool */
	bool sr_delete;                 /* -d: start from an empty template */
	char sr_pool[NACRE_POOL_NAME_MAX + 1];
	uint32_t sr_size;
	uint32_t sr_count;              /* STRIPE_ALL: every OST */
	uint32_t sr_index;              /* NACRE_OST_ANY: the MDS chooses */
	uint32_t sr_k, sr_m;            /* 1+0 for "none" */
	uint32_t sr_pack_max;           /* with sr_has_pack_max, bytes */
	bool sr_has_inline_max;
	uint32_t sr_inline_max;         /* with sr_has_inline_max, bytes (0: off) */
};

/* ---- showing a layout ---- */

static void stripe_pattern(const struct nacre_layout *l, char *buf, size_t len)
{
	/* Only a template has no code (it inherits one), and an inline file,
	 * which has no objects. */
	if (l->flags & NACRE_LAYOUT_INLINE)
		snprintf(buf, len, "inline");
	else if (l->k == 0 && l->m == 0)
		snprintf(buf, len, "default");
	else if (l->m == 0)
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

static bool stripe_is_packed(const struct nacre_layout *l, bool dir)
{
	return !dir && (l->flags & NACRE_LAYOUT_PACKED);
}

static bool stripe_packs(const struct nacre_layout *l, bool dir)
{
	return dir && (l->flags & NACRE_LAYOUT_PACK);
}

/* The FID naming the objects of a file: its own, or its pack's. */
static void stripe_objid(const struct nacre_fid *fid, bool dir,
			 const struct nacre_layout *l, char *buf)
{
	struct nacre_fid pf = { NACRE_PACK_FID_SEQ, l->pack_id };

	/* A migrated file's objects are new ones, named apart. */
	if (!dir && (l->obj_fid.seq || l->obj_fid.oid))
		fid = &l->obj_fid;
	nacre_fid_format(stripe_is_packed(l, dir) ? &pf : fid, buf);
}

/* Shards to show; a count past the array is never trusted. */
static uint32_t stripe_nshards(const struct nacre_layout *l)
{
	return l->shard_count < NACRE_MAX_STRIPES ? l->shard_count :
		NACRE_MAX_STRIPES;
}

/* A directory: "pack" and, when on, "pack_max" and "inline_max". */
static void stripe_json_template_pack(struct cli_json *js,
				      const struct nacre_layout *l)
{
	cli_json_key(js, "pack");
	cli_json_bool(js, stripe_packs(l, true));
	cli_json_key(js, "pack_max");
	if (stripe_packs(l, true))
		cli_json_u64(js, cli_template_pack_max(l));
	else
		cli_json_null(js);
	cli_json_key(js, "inline_max");
	if (stripe_packs(l, true))
		cli_json_u64(js, cli_template_inline_max(l));
	else
		cli_json_null(js);
}

/*
 * Whether a packed file of @size bytes has bytes not yet in its pack: the
 * MDS knows the file, and the client that wrote it still holds them
 * until its next pack flush (fsync commits them at once).
 */
static bool stripe_pack_pending(const struct nacre_layout *l, uint64_t size)
{
	return l->pack_len < size;
}

/* A file: "packed" and, when it is, where its bytes are. */
static void stripe_json_file_pack(struct cli_json *js,
				  const struct nacre_fid *fid,
				  const struct nacre_layout *l, uint64_t size)
{
	bool packed = stripe_is_packed(l, false);
	char objid[40];

	cli_json_key(js, "packed");
	cli_json_bool(js, packed);
	if (!packed) {
		cli_json_key(js, "pack_id");
		cli_json_null(js);
		cli_json_key(js, "pack_offset");
		cli_json_null(js);
		cli_json_key(js, "pack_length");
		cli_json_null(js);
		cli_json_key(js, "pack_fid");
		cli_json_null(js);
		cli_json_key(js, "pack_pending");
		cli_json_null(js);
		return;
	}
	stripe_objid(fid, false, l, objid);
	cli_json_kv_u64(js, "pack_id", l->pack_id);
	cli_json_kv_u64(js, "pack_offset", l->pack_off);
	cli_json_kv_u64(js, "pack_length", l->pack_len);
	cli_json_kv_str(js, "pack_fid", objid);
	cli_json_key(js, "pack_pending");
	cli_json_bool(js, stripe_pack_pending(l, size));
}

static void stripe_print_json(struct cli_json *js, const char *path,
			      const struct nacre_fid *fid, bool dir,
			      const struct nacre_layout *l, uint64_t size)
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
	if (dir) {
		cli_json_key(js, "pool");
		if (l->flags & NACRE_LAYOUT_POOL)
			cli_json_str(js, l->pool);
		else
			cli_json_null(js);
	}
	if (dir) {
		stripe_json_template_pack(js, l);
	} else {
		/* An inline file's bytes are in the MDT: no objects at all. */
		cli_json_key(js, "inline");
		cli_json_bool(js, l->flags & NACRE_LAYOUT_INLINE);
		stripe_json_file_pack(js, fid, l, size);
		/* What names the objects: the file's FID, a migrated file's
		 * own object FID, or the pack's. */
		stripe_objid(fid, false, l, fidbuf);
		cli_json_kv_str(js, "objid", fidbuf);
	}
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

static void stripe_print_file(const char *path, const struct nacre_fid *fid, uint64_t size,
			      const struct nacre_layout *l)
{
	char fidbuf[40], pattern[32];
	uint32_t i, n;

	/* A packed file's objects are its pack's. */
	stripe_objid(fid, false, l, fidbuf);
	stripe_pattern(l, pattern, sizeof(pattern));
	printf("%s\n", path);
	printf("lmm_stripe_count:  %" PRId64 "\n", stripe_count_value(l));
	printf("lmm_stripe_size:   %" PRIu32 "\n", l->stripe_size);
	printf("lmm_pattern:       %s\n", pattern);
	printf("lmm_stripe_offset: %" PRId64 "\n", stripe_first_ost(l, false));
	if (l->flags & NACRE_LAYOUT_INLINE)
		printf("lmm_inline:        %" PRIu64 " bytes, kept in the MDT (no objects)\n",
		       size);
	else if (stripe_is_packed(l, false) && stripe_pack_pending(l, size))
		printf("lmm_packed:        pack %" PRIu64 ", bytes pending (held by the "
		       "writing client until its next pack flush)\n", l->pack_id);
	else if (stripe_is_packed(l, false))
		printf("lmm_packed:        pack %" PRIu64 " offset %" PRIu64
		       " length %" PRIu64 "\n", l->pack_id, l->pack_off,
		       l->pack_len);
	if (l->flags & NACRE_LAYOUT_INLINE)
		return; /* no objects to list */
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
	if (cli_template_inline_max(l))
		printf("pack: on, pack_max %" PRIu32 ", inline_max %" PRIu32 "\n",
		       cli_template_pack_max(l), cli_template_inline_max(l));
	else if (stripe_packs(l, true))
		printf("pack: on, pack_max %" PRIu32 "\n", cli_template_pack_max(l));
	if (l->flags & NACRE_LAYOUT_POOL)
		printf("pool: %s\n", l->pool);
}

static void stripe_print(struct cli_json *js, const char *path,
			 const struct cli_target *t,
			 const struct nacre_layout *l)
{
	bool dir = S_ISDIR(t->tg_st.mode);

	if (js)
		stripe_print_json(js, path, &t->tg_fid, dir, l, t->tg_st.size);
	else if (dir)
		stripe_print_dir(path, l);
	else
		stripe_print_file(path, &t->tg_fid, t->tg_st.size, l);
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
	struct stat st;
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
	/* Through a mount, the size the mount shows: the bytes of a small
	 * file it packs may be in its memory still, unknown to the MDS. */
	if (t.tg_mount[0] && lstat(path, &st) == 0 && (uint64_t)st.st_size > t.tg_st.size)
		t.tg_st.size = (uint64_t)st.st_size;
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

/* -E K+M, or -E none for plain striping. */
static int setstripe_parse_ec(struct cli_ctx *ctx, const char *arg,
			      struct stripe_req *req)
{
	if (cli_parse_ec(arg, &req->sr_k, &req->sr_m))
		return cli_usage_err(ctx, "invalid erasure code '%s' (K+M with K 1 to %d and M 0 to %d, or none)",
				     arg, STRIPE_MAX_K, STRIPE_MAX_M);
	req->sr_has_ec = true;
	return CLI_OPT_CONTINUE;
}

static int setstripe_parse_inline_max(struct cli_ctx *ctx, const char *arg,
				      struct stripe_req *req)
{
	if (cli_parse_inline_max(arg, &req->sr_inline_max))
		return cli_inline_max_err(ctx, arg);
	req->sr_has_inline_max = true;
	return CLI_OPT_CONTINUE;
}

static int setstripe_parse_pack_max(struct cli_ctx *ctx, const char *arg,
				    struct stripe_req *req)
{
	if (cli_parse_pack_max(arg, &req->sr_pack_max))
		return cli_pack_max_err(ctx, arg);
	req->sr_has_pack_max = true;
	return CLI_OPT_CONTINUE;
}

/* -p POOL: a pool name, or "" to clear the directory's. */
static int setstripe_parse_pool(struct cli_ctx *ctx, const char *arg, struct stripe_req *req)
{
	if (*arg && !nacre_pool_name_is_valid(arg))
		return cli_usage_err(ctx, "bad pool name '%s' (1 to %d of A-Z a-z 0-9 _ . -)", arg,
				     NACRE_POOL_NAME_MAX);
	snprintf(req->sr_pool, sizeof(req->sr_pool), "%s", arg);
	req->sr_has_pool = true;
	return CLI_OPT_CONTINUE;
}

/* The option at getopt_long()'s @c; CLI_OPT_CONTINUE or the exit status. */
static int setstripe_parse_opt(struct cli_ctx *ctx, int c, char **argv,
			       struct stripe_req *req)
{
	switch (c) {
	case 'S':
		return setstripe_parse_size(ctx, optarg, req);
	case 'c':
		return setstripe_parse_count(ctx, optarg, req);
	case 'd':
		req->sr_delete = true;
		return CLI_OPT_CONTINUE;
	case 'i':
		return setstripe_parse_index(ctx, optarg, req);
	case 'E':
		return setstripe_parse_ec(ctx, optarg, req);
	case STRIPE_OPT_PACK:
		req->sr_pack = true;
		return CLI_OPT_CONTINUE;
	case STRIPE_OPT_NO_PACK:
		req->sr_no_pack = true;
		return CLI_OPT_CONTINUE;
	case STRIPE_OPT_PACK_MAX:
		return setstripe_parse_pack_max(ctx, optarg, req);
	case STRIPE_OPT_INLINE_MAX:
		return setstripe_parse_inline_max(ctx, optarg, req);
	case 'p':
		return setstripe_parse_pool(ctx, optarg, req);
	case STRIPE_OPT_NO_POOL:
		req->sr_no_pool = true;
		return CLI_OPT_CONTINUE;
	default:
		return cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c, argv);
	}
}

/* The combinations of options that cannot go together. */
static int setstripe_check(struct cli_ctx *ctx, const struct stripe_req *req)
{
	if (req->sr_has_pack_max && !req->sr_pack)
		return cli_usage_err(ctx, "--pack-max goes with --pack");
	if (req->sr_has_inline_max && !req->sr_pack)
		return cli_usage_err(ctx, "--inline-max goes with --pack");
	if (req->sr_pack && req->sr_no_pack)
		return cli_usage_err(ctx, "--pack and --no-pack cannot go together");
	if (req->sr_has_pool && req->sr_no_pool)
		return cli_usage_err(ctx, "-p and --no-pool cannot go together");
	if (!req->sr_has_size && !req->sr_has_count && !req->sr_has_index &&
	    !req->sr_has_ec && !req->sr_pack && !req->sr_no_pack && !req->sr_has_pool &&
	    !req->sr_no_pool && !req->sr_delete)
		return cli_usage_err(ctx, "one of -S, -c, -i, -E, -p, -d, --pack, --no-pack or "
				     "--no-pool is required");
	/* A count given with the code must hold a whole row. */
	if (req->sr_has_ec && req->sr_has_count && req->sr_m &&
	    req->sr_count != STRIPE_ALL && req->sr_count < req->sr_k + req->sr_m)
		return cli_usage_err(ctx, "stripe count %" PRIu32 " is below the %" PRIu32
				     "+%" PRIu32 " erasure code width",
				     req->sr_count, req->sr_k, req->sr_m);
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
		{ "delete", no_argument, NULL, 'd' },
		{ "stripe-index", required_argument, NULL, 'i' },
		{ "erasure-code", required_argument, NULL, 'E' },
		{ "pack", no_argument, NULL, STRIPE_OPT_PACK },
		{ "no-pack", no_argument, NULL, STRIPE_OPT_NO_PACK },
		{ "pack-max", required_argument, NULL, STRIPE_OPT_PACK_MAX },
		{ "inline-max", required_argument, NULL, STRIPE_OPT_INLINE_MAX },
		{ "pool", required_argument, NULL, 'p' },
		{ "no-pool", no_argument, NULL, STRIPE_OPT_NO_POOL },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	memset(req, 0, sizeof(*req));
	while ((c = getopt_long(argc, argv, ":S:c:i:E:p:dh", longopts,
				NULL)) != -1) {
		rc = setstripe_parse_opt(ctx, c, argv, req);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	rc = setstripe_check(ctx, req);
	if (rc != CLI_OPT_CONTINUE)
		return rc;
	if (optind >= argc)
		return cli_usage_err(ctx, "missing PATH");
	if (argc - optind > 1)
		return cli_usage_err(ctx, "too many arguments");
	return CLI_OPT_CONTINUE;
}

/* ---- setstripe: the target ---- */

/*
 * Creates the missing file @path through its mount.  The parent is checked
 * first so that a typo never leaves a stray file on another filesystem.
 *
 * mknod(2), not open(O_CREAT): in a pack directory a file created by open
 * lives in the mount's memory until its batch is committed, as a packed
 * file whose layout cannot be set; mknod creates it at the MDS at once,
 * with objects of its own, in every directory.
 */
static int setstripe_create_mounted(struct cli_ctx *ctx, const char *path)
{
	struct cli_fsid id;
	char *copy, *parent;
	int rc;

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
	if (mknod(path, S_IFREG | 0666, 0))
		return cli_err(ctx, "%s: %s", path, strerror(errno));
	return 0;
}

/* The directory part of @path inside a filesystem ("/" for "f" or "/f"),
 * and its last name in @name.  Trailing slashes are dropped. */
static int setstripe_split(const char *path, char **dir, char *name)
{
	char *copy, *slash, *base;
	size_t len;

	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	slash = strrchr(copy, '/');
	base = slash ? slash + 1 : copy;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..") ||
	    strlen(base) > NACRE_NAME_MAX) {
		free(copy);
		return -EINVAL;
	}
	strcpy(name, base);
	if (!slash || slash == copy)
		strcpy(copy, "/");
	else
		*slash = '\0';
	*dir = copy;
	return 0;
}

/* Creates the missing file @path inside the --mds filesystem: at the MDS
 * (nacre_mknod_at), never packed, as through a mount. */
static int setstripe_create_inside(struct cli_ctx *ctx, const char *path)
{
	char name[NACRE_NAME_MAX + 1], *dir;
	struct nacre_stat parent;
	struct nacre_fs *fs;
	mode_t mask;
	int rc;

	rc = cli_connect(ctx, ctx->cx_mds, ctx->cx_fsname, &fs);
	if (rc)
		return cli_err(ctx, "%s:/%s: %s", ctx->cx_mds, ctx->cx_fsname,
			       cli_connect_strerror(ctx, ctx->cx_fsname, rc));
	rc = setstripe_split(path, &dir, name);
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	rc = nacre_resolve(fs, NULL, dir, true, &parent);
	free(dir);
	if (!rc && !S_ISDIR(parent.mode))
		rc = -ENOTDIR;
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	/* mknod(2) through a mount applies the umask; do the same here. */
	mask = umask(0);
	umask(mask);
	rc = nacre_mknod_at(fs, NULL, &parent.fid, name,
			    S_IFREG | (0666 & ~mask), 0, NULL);
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

/* --pack keeps the directory's pack_max and inline_max unless --pack-max
 * or --inline-max is given (pack_max 0 lets the MDS apply the default;
 * inline_max 0 turns inline files off); --no-pack clears them all. */
static void setstripe_build_pack(const struct stripe_req *req,
				 struct nacre_layout *l)
{
	if (req->sr_no_pack)
		cli_template_set_pack(l, false, 0);
	else if (req->sr_pack)
		cli_template_set_pack(l, true, req->sr_has_pack_max ?
				      req->sr_pack_max : 0);
	cli_template_set_inline(l, req->sr_pack && req->sr_has_inline_max ?
				req->sr_inline_max : CLI_INLINE_KEEP);
}

/* Only directories pack their new files, and only they have a default
 * to delete. */
static bool setstripe_wants_dir(const struct stripe_req *req)
{
	return req->sr_pack || req->sr_no_pack || req->sr_delete;
}

static int setstripe_not_dir(struct cli_ctx *ctx, const char *path)
{
	return cli_usage_err(ctx, "%s: not a directory (-d, --pack and --no-pack set a "
			     "directory's default)", path);
}

/* A directory's template with every field inherited from the filesystem
 * default, as the MDS shows a directory that has none: what -d starts
 * from. */
static void setstripe_empty_template(struct nacre_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->first_ost = NACRE_OST_ANY;
}

/* The layout to send: the current one with what was asked changed. */
static int setstripe_build(struct cli_ctx *ctx, const char *path, bool dir,
			   const struct stripe_req *req,
			   const struct nacre_layout *cur,
			   struct nacre_layout *l)
{
	*l = *cur;
	l->shard_count = 0;
	l->pack_id = l->pack_off = l->pack_len = 0;
	/* Only a directory's template packs and keeps a pool; a file's
	 * request has only the pool given now. */
	l->flags &= dir ? NACRE_LAYOUT_PACK | NACRE_LAYOUT_POOL | NACRE_LAYOUT_INLINE : 0;
	if (!(l->flags & NACRE_LAYOUT_PACK))
		l->pack_max = 0;
	if (!(l->flags & NACRE_LAYOUT_POOL))
		memset(l->pool, 0, sizeof(l->pool));
	setstripe_build_pack(req, l);
	if (req->sr_no_pool || (req->sr_has_pool && !req->sr_pool[0])) {
		l->flags &= ~NACRE_LAYOUT_POOL;
		memset(l->pool, 0, sizeof(l->pool));
	} else if (req->sr_has_pool) {
		l->flags |= NACRE_LAYOUT_POOL;
		snprintf(l->pool, sizeof(l->pool), "%s", req->sr_pool);
	}
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

/* An MDS from before packing may take the template and drop the flag:
 * say so rather than report a success that packs nothing. */
static int setstripe_check_packs(struct cli_ctx *ctx, const char *path,
				 const struct cli_target *t)
{
	struct nacre_layout l;
	int rc;

	rc = nacre_getlayout_fid(t->tg_fs, &t->tg_fid, &l);
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	if (!cli_template_pack_max(&l))
		return cli_err(ctx, "%s: the MDS did not keep packing on (it may predate packing)",
			       path);
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
	if (!dir && setstripe_wants_dir(req))
		return setstripe_not_dir(ctx, path);
	/* -d: the options given with it apply to an empty template, so
	 * "-d --pack" packs with every other field inherited; the current
	 * one is not needed. */
	if (req->sr_delete) {
		setstripe_empty_template(&cur);
	} else {
		rc = nacre_getlayout_fid(t->tg_fs, &t->tg_fid, &cur);
		if (rc)
			return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	}
	if (stripe_is_packed(&cur, dir))
		return cli_err(ctx, "%s: file is packed, its layout cannot change",
			       path);
	rc = setstripe_build(ctx, path, dir, req, &cur, &l);
	if (rc)
		return rc;
	rc = nacre_setlayout_fid(t->tg_fs, NULL, &t->tg_fid, &l);
	if (rc == -EBUSY)
		return cli_err(ctx, "%s: file holds data, its layout cannot change",
			       path);
	if (rc == -ENOENT && (l.flags & NACRE_LAYOUT_POOL))
		return cli_err(ctx, "%s: no OST pool '%s' (see nacre pool list)", path, l.pool);
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	if (req->sr_pack)
		return setstripe_check_packs(ctx, path, t);
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
		/* What would be created is a file. */
		if (setstripe_wants_dir(&req))
			return setstripe_not_dir(ctx, path);
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
