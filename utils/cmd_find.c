/* SPDX-License-Identifier: MIT */
/*
 * nacre find PATH... [-name GLOB] [-type f|d|l] [-size [+-]N[kMGT]]
 * [-mtime [+-]DAYS] [-stripe-count [+-]N] [-ost INDEX] [-pack] [-inline]
 * [-print0]:
 * lfs find over libnacre.  The tree is walked through the MDS (cli_walk.c),
 * so it is fast and sees layouts; every predicate given must hold (AND).
 *
 * Numbers compare as in find(1): +N more than N, -N less than N, N exactly.
 * -size rounds the file's size up to the unit of N before comparing, as
 * find(1) and lfs find do (-size -1M matches only empty files); N without
 * a suffix counts bytes, as lfs find (find(1)'s "c").  -mtime compares
 * whole days of age, rounded down, as find(1).
 */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

#define FIND_MAX_OSTS 64

enum {
	FIND_OPT_NAME = 0x200,
	FIND_OPT_TYPE,
	FIND_OPT_SIZE,
	FIND_OPT_MTIME,
	FIND_OPT_STRIPE_COUNT,
	FIND_OPT_OST,
	FIND_OPT_PACK,
	FIND_OPT_INLINE,
	FIND_OPT_PRINT0,
};

/* A numeric test: +N, -N or N. */
struct find_num {
	bool fn_set;
	int fn_sign;            /* +1 more than, -1 less than, 0 exactly */
	uint64_t fn_val;
	uint64_t fn_unit;       /* -size: the value's unit in bytes */
};

struct find_req {
	const char *fr_name;
	mode_t fr_type;         /* S_IFMT bits; 0: any */
	struct find_num fr_size, fr_mtime, fr_count;
	unsigned int fr_nosts;
	uint32_t fr_osts[FIND_MAX_OSTS];
	bool fr_pack;
	bool fr_inline;
	bool fr_print0;
	time_t fr_now;
	struct cli_json fr_js;
};

/* ---- arguments ---- */

/* [+-]digits, then what is left in *@rest. */
static int find_parse_signed(const char *arg, struct find_num *n, const char **rest)
{
	char *end;

	n->fn_sign = 0;
	if (*arg == '+' || *arg == '-')
		n->fn_sign = *arg++ == '+' ? 1 : -1;
	if (*arg < '0' || *arg > '9')
		return -EINVAL;
	errno = 0;
	n->fn_val = strtoull(arg, &end, 10);
	if (errno)
		return -EINVAL;
	*rest = end;
	n->fn_set = true;
	return 0;
}

static int find_parse_size(const char *arg, struct find_num *n)
{
	const char *u;

	if (find_parse_signed(arg, n, &u))
		return -EINVAL;
	switch (*u) {
	case '\0': case 'c': n->fn_unit = 1; break;
	case 'k': case 'K': n->fn_unit = 1ull << 10; break;
	case 'M': n->fn_unit = 1ull << 20; break;
	case 'G': n->fn_unit = 1ull << 30; break;
	case 'T': n->fn_unit = 1ull << 40; break;
	default: return -EINVAL;
	}
	if (*u && u[1])
		return -EINVAL;
	return 0;
}

static int find_parse_plain(const char *arg, struct find_num *n)
{
	const char *rest;

	if (find_parse_signed(arg, n, &rest) || *rest)
		return -EINVAL;
	return 0;
}

static int find_parse_type(struct cli_ctx *ctx, const char *arg, struct find_req *fr)
{
	static const struct { char c; mode_t t; } types[] = {
		{ 'f', S_IFREG }, { 'd', S_IFDIR }, { 'l', S_IFLNK }, { 'p', S_IFIFO },
		{ 's', S_IFSOCK }, { 'b', S_IFBLK }, { 'c', S_IFCHR },
	};

	for (size_t i = 0; arg[0] && !arg[1] && i < sizeof(types) / sizeof(types[0]); i++) {
		if (types[i].c == arg[0]) {
			fr->fr_type = types[i].t;
			return CLI_OPT_CONTINUE;
		}
	}
	return cli_usage_err(ctx, "invalid type '%s' (f, d, l, p, s, b or c)", arg);
}

static int find_parse_ost(struct cli_ctx *ctx, const char *arg, struct find_req *fr)
{
	long v;

	if (cli_parse_long(arg, &v) || v < 0 || v >= (long)NACRE_OST_ANY)
		return cli_usage_err(ctx, "invalid OST index '%s'", arg);
	if (fr->fr_nosts == FIND_MAX_OSTS)
		return cli_usage_err(ctx, "at most %d -ost options", FIND_MAX_OSTS);
	fr->fr_osts[fr->fr_nosts++] = (uint32_t)v;
	return CLI_OPT_CONTINUE;
}

static int find_parse_opt(struct cli_ctx *ctx, int c, char **argv, struct find_req *fr)
{
	switch (c) {
	case FIND_OPT_NAME:
		fr->fr_name = optarg;
		return CLI_OPT_CONTINUE;
	case FIND_OPT_TYPE:
		return find_parse_type(ctx, optarg, fr);
	case FIND_OPT_SIZE:
		if (find_parse_size(optarg, &fr->fr_size))
			return cli_usage_err(ctx, "invalid size '%s' ([+-]N with an optional c, k, M, G or T)",
					     optarg);
		return CLI_OPT_CONTINUE;
	case FIND_OPT_MTIME:
		if (find_parse_plain(optarg, &fr->fr_mtime))
			return cli_usage_err(ctx, "invalid age '%s' ([+-]DAYS)", optarg);
		return CLI_OPT_CONTINUE;
	case FIND_OPT_STRIPE_COUNT:
		if (find_parse_plain(optarg, &fr->fr_count))
			return cli_usage_err(ctx, "invalid stripe count '%s' ([+-]N)", optarg);
		return CLI_OPT_CONTINUE;
	case FIND_OPT_OST:
		return find_parse_ost(ctx, optarg, fr);
	case FIND_OPT_PACK:
		fr->fr_pack = true;
		return CLI_OPT_CONTINUE;
	case FIND_OPT_INLINE:
		fr->fr_inline = true;
		return CLI_OPT_CONTINUE;
	case FIND_OPT_PRINT0:
		fr->fr_print0 = true;
		return CLI_OPT_CONTINUE;
	default:
		return cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c, argv);
	}
}

/* ---- matching ---- */

static bool find_num_is(const struct find_num *n, uint64_t v)
{
	if (!n->fn_set)
		return true;
	if (n->fn_sign > 0)
		return v > n->fn_val;
	if (n->fn_sign < 0)
		return v < n->fn_val;
	return v == n->fn_val;
}

/* Whether a test of the layout was given (they hold for files only). */
static bool find_tests_layout(const struct find_req *fr)
{
	return fr->fr_count.fn_set || fr->fr_nosts || fr->fr_pack || fr->fr_inline;
}

static bool find_wants_layout(const struct find_req *fr, bool json)
{
	return json || find_tests_layout(fr);
}

static bool find_layout_has_ost(const struct nacre_layout *l, const struct find_req *fr)
{
	for (uint32_t i = 0; i < l->shard_count && i < NACRE_MAX_STRIPES; i++)
		for (unsigned int j = 0; j < fr->fr_nosts; j++)
			if (l->shards[i].ost == fr->fr_osts[j])
				return true;
	return false;
}

/* The tests that need no layout. */
static bool find_match_attrs(const struct find_req *fr, const struct cli_walk_ent *e)
{
	const struct nacre_stat *st = &e->we_st;
	int64_t age;

	if (fr->fr_name && fnmatch(fr->fr_name, e->we_name, 0))
		return false;
	if (fr->fr_type && (st->mode & S_IFMT) != fr->fr_type)
		return false;
	if (fr->fr_size.fn_set &&
	    !find_num_is(&fr->fr_size, st->size / fr->fr_size.fn_unit +
					       (st->size % fr->fr_size.fn_unit != 0)))
		return false;
	if (fr->fr_mtime.fn_set) {
		/* Whole days, rounded down: a file from the future is -1 days
		 * old and so "less than" any age, as in find(1). */
		age = (int64_t)fr->fr_now - st->mtime.tv_sec;
		age = age >= 0 ? age / 86400 : -1;
		if (age < 0 ? fr->fr_mtime.fn_sign >= 0 :
			      !find_num_is(&fr->fr_mtime, (uint64_t)age))
			return false;
	}
	return true;
}

static bool find_match_layout(const struct find_req *fr, const struct nacre_layout *l, bool reg)
{
	if (find_tests_layout(fr) && !reg)
		return false; /* layouts of files only */
	if (!find_num_is(&fr->fr_count, l->stripe_count))
		return false;
	if (fr->fr_nosts && !find_layout_has_ost(l, fr))
		return false;
	if (fr->fr_pack && !(l->flags & NACRE_LAYOUT_PACKED))
		return false;
	if (fr->fr_inline && !(l->flags & NACRE_LAYOUT_INLINE))
		return false;
	return true;
}

static const char *find_type_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "f";
	case S_IFDIR: return "d";
	case S_IFLNK: return "l";
	case S_IFIFO: return "p";
	case S_IFSOCK: return "s";
	case S_IFBLK: return "b";
	default: return "c";
	}
}

static void find_print_json(struct find_req *fr, const struct cli_walk_ent *e,
			    const struct nacre_layout *l)
{
	struct cli_json *js = &fr->fr_js;
	bool reg = S_ISREG(e->we_st.mode);

	cli_json_obj_begin(js);
	cli_json_kv_str(js, "path", e->we_path);
	cli_json_kv_str(js, "type", find_type_name(e->we_st.mode));
	cli_json_kv_u64(js, "size", e->we_st.size);
	cli_json_kv_i64(js, "mtime", (int64_t)e->we_st.mtime.tv_sec);
	cli_json_kv_u64(js, "stripe_count", reg ? l->stripe_count : 0);
	cli_json_kv_u64(js, "k", reg ? l->k : 0);
	cli_json_kv_u64(js, "m", reg ? l->m : 0);
	cli_json_key(js, "osts");
	cli_json_arr_begin(js);
	for (uint32_t i = 0; reg && i < l->shard_count && i < NACRE_MAX_STRIPES; i++)
		cli_json_u64(js, l->shards[i].ost);
	cli_json_arr_end(js);
	cli_json_key(js, "packed");
	cli_json_bool(js, reg && (l->flags & NACRE_LAYOUT_PACKED));
	cli_json_key(js, "inline");
	cli_json_bool(js, reg && (l->flags & NACRE_LAYOUT_INLINE));
	cli_json_obj_end(js);
}

static int find_visit(struct cli_ctx *ctx, struct nacre_fs *fs, const struct cli_walk_ent *e,
		      void *arg)
{
	struct find_req *fr = arg;
	struct nacre_layout l;
	bool reg = S_ISREG(e->we_st.mode);
	int rc;

	if (!find_match_attrs(fr, e))
		return 0;
	memset(&l, 0, sizeof(l));
	if (reg && find_wants_layout(fr, ctx->cx_json)) {
		rc = nacre_getlayout_fid(fs, &e->we_st.fid, &l);
		if (rc == -ENOENT)
			return 0; /* removed since the listing */
		if (rc) {
			cli_err(ctx, "%s: %s", e->we_path, nacre_strerror(rc));
			return 1;
		}
	}
	if (!find_match_layout(fr, &l, reg))
		return 0;
	if (ctx->cx_json)
		find_print_json(fr, e, &l);
	else
		printf("%s%c", e->we_path, fr->fr_print0 ? '\0' : '\n');
	return 0;
}

int cmd_find(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "name", required_argument, NULL, FIND_OPT_NAME },
		{ "type", required_argument, NULL, FIND_OPT_TYPE },
		{ "size", required_argument, NULL, FIND_OPT_SIZE },
		{ "mtime", required_argument, NULL, FIND_OPT_MTIME },
		{ "stripe-count", required_argument, NULL, FIND_OPT_STRIPE_COUNT },
		{ "ost", required_argument, NULL, FIND_OPT_OST },
		{ "pack", no_argument, NULL, FIND_OPT_PACK },
		{ "inline", no_argument, NULL, FIND_OPT_INLINE },
		{ "print0", no_argument, NULL, FIND_OPT_PRINT0 },
		{ NULL, 0, NULL, 0 },
	};
	struct find_req *fr = calloc(1, sizeof(*fr));
	unsigned long errors = 0;
	int c, rc = CLI_EXIT_OK;

	if (!fr)
		return cli_err(ctx, "out of memory");
	/* Single-dash long options, as find(1) and lfs find spell them. */
	while ((c = getopt_long_only(argc, argv, ":h", longopts, NULL)) != -1) {
		rc = find_parse_opt(ctx, c, argv, fr);
		if (rc != CLI_OPT_CONTINUE)
			goto out;
	}
	rc = CLI_EXIT_OK;
	if (optind >= argc) {
		rc = cli_usage_err(ctx, "no PATH (see nacre help find)");
		goto out;
	}
	fr->fr_now = time(NULL);
	if (ctx->cx_json) {
		cli_json_init(&fr->fr_js, stdout);
		cli_json_arr_begin(&fr->fr_js);
	}
	for (int i = optind; i < argc; i++) {
		struct cli_target t;

		if (cli_target_open(ctx, argv[i], &t)) {
			errors++;
			continue;
		}
		errors += cli_walk(ctx, &t, argv[i], find_visit, fr);
	}
	if (ctx->cx_json) {
		cli_json_arr_end(&fr->fr_js);
		cli_json_end(&fr->fr_js);
	}
	rc = errors ? CLI_EXIT_RUNTIME : CLI_EXIT_OK;
out:
	free(fr);
	return rc;
}
