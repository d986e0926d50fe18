/* SPDX-License-Identifier: MIT */
/*
 * nacre pack SUBCOMMAND: the packs that hold a filesystem's small files.
 *
 *   nacre pack stats [-v] [PATH]
 *
 * sums up the packs the MDS keeps (nacre_pack_list()): how many, sealed
 * and open, their bytes (gaps included), the bytes of the files that still
 * use them (live) and the rest (dead: rewritten, truncated or unlinked
 * files, and alignment gaps), the live fraction and the files; -v adds one
 * line per pack.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Packs asked for per nacre_pack_list() call. */
#define PACK_LIST_BATCH 1024
/* The most packs -v lists (1 PiB of 256 MiB packs); past it the command
 * fails rather than hold an unbounded list. */
#define PACK_LIST_MAX (1u << 22)

enum {
	PACK_OPT_VERBOSE = 'v',
};

/* What one filesystem's packs add up to. */
struct pack_totals {
	uint64_t pt_packs;
	uint64_t pt_sealed;
	uint64_t pt_size;
	uint64_t pt_live;
	uint64_t pt_files;
};

/* The packs of one filesystem, with -v. */
struct pack_list {
	struct nacre_pack_info *pl_info;
	size_t pl_n, pl_cap;
};

static uint64_t pack_dead(uint64_t size, uint64_t live)
{
	return size > live ? size - live : 0;
}

/* ---- collecting ---- */

static int pack_list_add(struct pack_list *pl,
			 const struct nacre_pack_info *info, size_t n)
{
	struct nacre_pack_info *p;
	size_t cap;

	if (n == 0)
		return 0;       /* no memcpy from or to a NULL list */
	if (pl->pl_n + n > PACK_LIST_MAX)
		return -E2BIG;
	if (pl->pl_n + n > pl->pl_cap) {
		cap = pl->pl_cap ? pl->pl_cap * 2 : PACK_LIST_BATCH;
		while (cap < pl->pl_n + n)
			cap *= 2;
		p = realloc(pl->pl_info, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		pl->pl_info = p;
		pl->pl_cap = cap;
	}
	memcpy(pl->pl_info + pl->pl_n, info, n * sizeof(*info));
	pl->pl_n += n;
	return 0;
}

static void pack_totals_add(struct pack_totals *pt,
			    const struct nacre_pack_info *info, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		pt->pt_packs++;
		pt->pt_sealed += info[i].sealed;
		pt->pt_size += info[i].size;
		pt->pt_live += info[i].live;
		pt->pt_files += info[i].files;
	}
}

/*
 * Lists every pack of @fs in id order into @pt and, when @pl is not NULL,
 * @pl.  0 or -errno.  Nothing is printed before the whole list is in, so a
 * failure never leaves half a document.
 */
static int pack_collect(struct nacre_fs *fs, struct pack_totals *pt,
			struct pack_list *pl)
{
	struct nacre_pack_info *batch;
	unsigned int n;
	uint64_t after = 0;
	int rc;

	batch = calloc(PACK_LIST_BATCH, sizeof(*batch));
	if (!batch)
		return -ENOMEM;
	for (;;) {
		rc = nacre_pack_list(fs, after, batch, PACK_LIST_BATCH, &n);
		if (rc)
			break;
		pack_totals_add(pt, batch, n);
		if (pl) {
			rc = pack_list_add(pl, batch, n);
			if (rc)
				break;
		}
		if (n < PACK_LIST_BATCH)
			break;
		/* Ids only grow; a server that repeats one would loop. */
		if (batch[n - 1].id <= after) {
			rc = -EPROTO;
			break;
		}
		after = batch[n - 1].id;
	}
	free(batch);
	return rc;
}

/* ---- text ---- */

/* "0.812", or "-" for nothing to divide. */
static void pack_fraction_text(uint64_t live, uint64_t size, char *buf,
			       size_t len)
{
	if (size == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.3f", (double)live / (double)size);
}

static void pack_print_list(const struct pack_list *pl)
{
	const struct nacre_pack_info *p;
	char frac[16];
	size_t i;

	printf("%10s %14s %14s %14s %8s %9s %s\n", "PACK", "SIZE", "LIVE",
	       "DEAD", "FILES", "LIVE_FRAC", "STATE");
	for (i = 0; i < pl->pl_n; i++) {
		p = &pl->pl_info[i];
		pack_fraction_text(p->live, p->size, frac, sizeof(frac));
		printf("%10" PRIu64 " %14" PRIu64 " %14" PRIu64 " %14" PRIu64
		       " %8" PRIu32 " %9s %s\n", p->id, p->size, p->live,
		       pack_dead(p->size, p->live), p->files, frac,
		       p->sealed ? "sealed" : "open");
	}
}

static void pack_print_totals(const struct pack_totals *pt)
{
	char frac[16];

	pack_fraction_text(pt->pt_live, pt->pt_size, frac, sizeof(frac));
	printf("packs:         %" PRIu64 "\n", pt->pt_packs);
	printf("sealed:        %" PRIu64 "\n", pt->pt_sealed);
	printf("open:          %" PRIu64 "\n", pt->pt_packs - pt->pt_sealed);
	printf("files:         %" PRIu64 "\n", pt->pt_files);
	printf("size:          %" PRIu64 "\n", pt->pt_size);
	printf("live:          %" PRIu64 "\n", pt->pt_live);
	printf("dead:          %" PRIu64 "\n",
	       pack_dead(pt->pt_size, pt->pt_live));
	printf("live_fraction: %s\n", frac);
}

/* ---- JSON ---- */

/*
 * "KEY": live / size as a JSON number, null for nothing to divide.  The
 * writer has no floating-point value, so the number follows its key
 * directly (a key leaves the writer expecting exactly one value).
 */
static void pack_json_fraction(struct cli_json *js, const char *key,
			       uint64_t live, uint64_t size)
{
	if (size == 0) {
		cli_json_key(js, key);
		cli_json_null(js);
		return;
	}
	cli_json_key(js, key);
	fprintf(js->js_out, "%.6f", (double)live / (double)size);
	js->js_after_key = false;
}

static void pack_json_list(struct cli_json *js, const struct pack_list *pl)
{
	const struct nacre_pack_info *p;
	size_t i;

	cli_json_key(js, "pack_list");
	cli_json_arr_begin(js);
	for (i = 0; i < pl->pl_n; i++) {
		p = &pl->pl_info[i];
		cli_json_obj_begin(js);
		cli_json_kv_u64(js, "id", p->id);
		cli_json_kv_u64(js, "size", p->size);
		cli_json_kv_u64(js, "live", p->live);
		cli_json_kv_u64(js, "dead", pack_dead(p->size, p->live));
		cli_json_kv_u64(js, "files", p->files);
		pack_json_fraction(js, "live_fraction", p->live, p->size);
		cli_json_kv_str(js, "state", p->sealed ? "sealed" : "open");
		cli_json_obj_end(js);
	}
	cli_json_arr_end(js);
}

static void pack_json(struct cli_json *js, const struct cli_target *t,
		      const struct pack_totals *pt, const struct pack_list *pl)
{
	cli_json_obj_begin(js);
	cli_json_kv_str(js, "filesystem", nacre_fs_name(t->tg_fs));
	cli_json_key(js, "mount");
	if (t->tg_mount[0])
		cli_json_str(js, t->tg_mount);
	else
		cli_json_null(js);
	cli_json_kv_u64(js, "packs", pt->pt_packs);
	cli_json_kv_u64(js, "sealed", pt->pt_sealed);
	cli_json_kv_u64(js, "open", pt->pt_packs - pt->pt_sealed);
	cli_json_kv_u64(js, "files", pt->pt_files);
	cli_json_kv_u64(js, "size", pt->pt_size);
	cli_json_kv_u64(js, "live", pt->pt_live);
	cli_json_kv_u64(js, "dead", pack_dead(pt->pt_size, pt->pt_live));
	pack_json_fraction(js, "live_fraction", pt->pt_live, pt->pt_size);
	if (pl)
		pack_json_list(js, pl);
	cli_json_obj_end(js);
}

/* ---- pack stats ---- */

/* One filesystem; a heading when several are shown (@many); @arg: the bool
 * of -v. */
static int pack_stats_one(struct cli_ctx *ctx, struct cli_target *t, struct cli_json *js,
			  bool many, void *arg)
{
	bool verbose = *(bool *)arg, heading = many;
	const char *fsname = nacre_fs_name(t->tg_fs);
	struct pack_totals pt;
	struct pack_list pl;
	int rc;

	memset(&pt, 0, sizeof(pt));
	memset(&pl, 0, sizeof(pl));
	rc = pack_collect(t->tg_fs, &pt, verbose ? &pl : NULL);
	if (rc == -E2BIG)
		rc = cli_err(ctx, "%s: more than %u packs, too many to list with -v",
			     fsname, PACK_LIST_MAX);
	else if (rc)
		rc = cli_err(ctx, "%s: listing packs: %s", fsname,
			     nacre_strerror(rc));
	if (rc)
		goto out_free_list;
	if (js) {
		pack_json(js, t, &pt, verbose ? &pl : NULL);
		goto out_free_list;
	}
	if (heading)
		printf("%s (%s):\n", fsname, t->tg_mount[0] ? t->tg_mount :
		       nacre_fs_mds_addr(t->tg_fs));
	if (verbose)
		pack_print_list(&pl);
	pack_print_totals(&pt);
out_free_list:
	free(pl.pl_info);
	return rc;
}

static int pack_stats(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "verbose", no_argument, NULL, PACK_OPT_VERBOSE },
		{ NULL, 0, NULL, 0 },
	};
	bool verbose = false;
	int c, rc;

	while ((c = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
		if (c == PACK_OPT_VERBOSE) {
			verbose = true;
			continue;
		}
		rc = cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c, argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	if (argc - optind > 1)
		return cli_usage_err(ctx, "too many arguments");
	return cli_targets_report(ctx, optind < argc ? argv[optind] : NULL, pack_stats_one,
				  &verbose);
}

/* ---- the pack command group ---- */

/* The subcommands of `nacre pack`; each runs as its own command, so that
 * its messages say "nacre pack stats: ..." and --help shows its usage. */
static const struct cli_cmd pack_cmds[] = {
	{
		.cc_name = "pack stats",
		.cc_fn = pack_stats,
		.cc_summary = "sum up the packs holding small files",
		.cc_usage = "[-v] [--json] [PATH]",
		.cc_help =
			"  -v, --verbose         also one line per pack\n"
			"  --json                one JSON object per filesystem\n"
			"Without PATH every mounted nacre filesystem is shown.\n",
	},
};

#define PACK_NCMDS (sizeof(pack_cmds) / sizeof(pack_cmds[0]))
#define PACK_PREFIX "pack "

static const struct cli_cmd *pack_cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < PACK_NCMDS; i++)
		if (!strcmp(pack_cmds[i].cc_name + strlen(PACK_PREFIX), name))
			return &pack_cmds[i];
	return NULL;
}

int cmd_pack(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_cmd *sub;
	int c, rc;

	/* "+": stop at the subcommand, whose options are its own. */
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		rc = cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c, argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	if (optind >= argc)
		return cli_usage_err(ctx, "missing subcommand (see nacre help pack)");
	sub = pack_cmd_find(argv[optind]);
	if (!sub)
		return cli_usage_err(ctx, "unknown subcommand '%s' (see nacre help pack)",
				     argv[optind]);
	ctx->cx_cmd = sub;
	argc -= optind;
	argv += optind;
	cli_opt_reset();
	return sub->cc_fn(ctx, argc, argv);
}
