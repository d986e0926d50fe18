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
 *
 *   nacre pack [convert] ...
 *
 * is in cmd_pack_convert.c.
 *
 *   nacre pack gc [--threshold F] [PATH]
 *
 * compacts the sealed packs whose live fraction is below F
 * (nacre_pack_gc()): their files move to new packs and the emptied packs
 * go, after the MDS's grace period.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* Packs asked for per nacre_pack_list() call. */
#define PACK_LIST_BATCH 1024
/* The most packs -v lists (1 PiB of 256 MiB packs); past it the command
 * fails rather than hold an unbounded list. */
#define PACK_LIST_MAX (1u << 22)

/* pack gc's threshold when none is given. */
#define PACK_GC_THRESHOLD_DEFAULT 0.5

enum {
	PACK_OPT_VERBOSE = 'v',
	PACK_OPT_THRESHOLD = 0x200,
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

/* "KEY": live / size, null for nothing to divide. */
static void pack_json_fraction(struct cli_json *js, const char *key,
			       uint64_t live, uint64_t size)
{
	cli_json_key(js, key);
	if (size == 0)
		cli_json_null(js);
	else
		cli_json_double(js, (double)live / (double)size);
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

/* ---- pack gc ---- */

/* --threshold F: a plain decimal above 0 and at most 1 (strtod alone
 * would take blanks, hex, "inf" and "nan"). */
static int pack_parse_threshold(struct cli_ctx *ctx, const char *arg,
				double *out)
{
	bool ok = *arg && strspn(arg, "0123456789.") == strlen(arg);
	char *end;
	double v = 0;

	if (ok) {
		errno = 0;
		v = strtod(arg, &end);
		ok = !errno && !*end && v > 0 && v <= 1;
	}
	if (!ok)
		return cli_usage_err(ctx, "invalid threshold '%s' (a live fraction above 0 and at most 1)",
				     arg);
	*out = v;
	return CLI_OPT_CONTINUE;
}

/* One filesystem; @arg: the threshold. */
static int pack_gc_one(struct cli_ctx *ctx, struct cli_target *t,
		       struct cli_json *js, bool many, void *arg)
{
	double threshold = *(double *)arg;
	const char *fsname = nacre_fs_name(t->tg_fs);
	uint64_t moved = 0, freed = 0;
	int rc;

	rc = nacre_pack_gc(t->tg_fs, threshold, &moved, &freed);
	if (rc)
		return cli_err(ctx, "%s: compacting packs: %s (%" PRIu64
			       " files moved and %" PRIu64 " packs emptied before)",
			       fsname, nacre_strerror(rc), moved, freed);
	if (js) {
		cli_json_obj_begin(js);
		cli_json_kv_str(js, "filesystem", fsname);
		cli_json_key(js, "mount");
		if (t->tg_mount[0])
			cli_json_str(js, t->tg_mount);
		else
			cli_json_null(js);
		cli_json_kv_double(js, "threshold", threshold);
		cli_json_kv_u64(js, "files_moved", moved);
		cli_json_kv_u64(js, "packs_emptied", freed);
		cli_json_obj_end(js);
		return 0;
	}
	if (many)
		printf("%s (%s):\n", fsname, t->tg_mount[0] ? t->tg_mount :
		       nacre_fs_mds_addr(t->tg_fs));
	printf("files_moved:   %" PRIu64 "\n", moved);
	printf("packs_emptied: %" PRIu64 "\n", freed);
	return 0;
}

static int pack_gc(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "threshold", required_argument, NULL, PACK_OPT_THRESHOLD },
		{ NULL, 0, NULL, 0 },
	};
	double threshold = PACK_GC_THRESHOLD_DEFAULT;
	int c, rc;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == PACK_OPT_THRESHOLD)
			rc = pack_parse_threshold(ctx, optarg, &threshold);
		else
			rc = cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c,
					    argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	if (argc - optind > 1)
		return cli_usage_err(ctx, "too many arguments");
	return cli_targets_report(ctx, optind < argc ? argv[optind] : NULL,
				  pack_gc_one, &threshold);
}

/* ---- the pack command group ---- */

/* The subcommands of `nacre pack`; each runs as its own command, so that
 * its messages say "nacre pack stats: ..." and --help shows its usage.
 * The first is the default (`nacre pack DIR`). */
static const struct cli_cmd pack_cmds[] = {
	{
		.cc_name = "pack convert",
		.cc_fn = cmd_pack_convert,
		.cc_summary = "move existing small files into packs, in place",
		.cc_usage = "[--pack-max SIZE] [-v] [--json] PATH...",
		.cc_help =
			"  --pack-max SIZE       the largest file to pack, K/M suffixes, 1 byte\n"
			"                        to 64M; also set as the directories' pack_max\n"
			"                        (default: a directory's own pack_max when it\n"
			"                        packs already, else 1M)\n"
			"  -v, --verbose         also one line per file: packed, already packed,\n"
			"                        too large, busy or error\n"
			"  --json                one JSON object with the counts (with -v, the\n"
			"                        files)\n"
			"Each PATH is a regular file or a directory, whose whole tree is\n"
			"converted (symbolic links are not followed).  Every directory converted\n"
			"is made to pack its new files, as by setstripe --pack, so that small\n"
			"files created there later are packed too (a mount notices within 10 s).\n"
			"Files larger than the limit keep their objects.  Exit status 1 when a\n"
			"file could not be packed, busy (changed while it was read) included.\n"
			"`nacre pack DIR` is `nacre pack convert DIR`; a directory named like a\n"
			"subcommand (stats, gc, convert) is reached as ./NAME.\n",
	},
	{
		.cc_name = "pack gc",
		.cc_fn = pack_gc,
		.cc_summary = "compact the packs that are mostly dead bytes",
		.cc_usage = "[--threshold F] [--json] [PATH]",
		.cc_help =
			"  --threshold F         compact the sealed packs whose live fraction is\n"
			"                        below F (above 0, at most 1; default 0.5)\n"
			"  --json                one JSON object per filesystem\n"
			"The files of those packs move to new packs.  The MDS destroys an\n"
			"emptied pack after a 5-minute grace (for readers that opened a file\n"
			"before it moved): until then pack stats still lists it, with live 0.\n"
			"Open packs, still being filled, are left alone: a pack is sealed when\n"
			"full (256 MiB), when its client disconnects (a mount: at unmount), a\n"
			"minute after its client's last file, or after an hour untouched.\n"
			"Without PATH every mounted nacre filesystem is compacted.\n",
	},
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
#define PACK_DEFAULT (&pack_cmds[0])

static const struct cli_cmd *pack_cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < PACK_NCMDS; i++)
		if (!strcmp(pack_cmds[i].cc_name + strlen(PACK_PREFIX), name))
			return &pack_cmds[i];
	return NULL;
}

/*
 * Whether @arg, which names no subcommand, is taken for a mistyped one
 * rather than the PATH of `nacre pack PATH`: a bare name that exists
 * nowhere.  With --mds, PATHs are inside the filesystem and are left to
 * pack convert to find.
 */
static bool pack_is_typo(const struct cli_ctx *ctx, const char *arg)
{
	struct stat st;

	return !ctx->cx_mds && !strchr(arg, '/') && lstat(arg, &st) &&
	       errno == ENOENT;
}

/* Runs pack convert, the default subcommand, over the whole of @argv:
 * the options already read are read again. */
static int pack_run_default(struct cli_ctx *ctx, int argc, char **argv)
{
	ctx->cx_cmd = PACK_DEFAULT;
	cli_opt_reset();
	return PACK_DEFAULT->cc_fn(ctx, argc, argv);
}

int cmd_pack(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_cmd *sub;
	int c, rc;

	/* "+": stop at the subcommand, whose options are its own.  An option
	 * the group does not know is pack convert's (`nacre pack -v DIR`). */
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return pack_run_default(ctx, argc, argv);
		rc = cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c, argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	if (optind >= argc)
		return cli_usage_err(ctx, "missing subcommand or PATH (see nacre help pack)");
	sub = pack_cmd_find(argv[optind]);
	if (!sub && pack_is_typo(ctx, argv[optind]))
		return cli_usage_err(ctx, "'%s' is neither a subcommand nor an existing path (see nacre help pack)",
				     argv[optind]);
	if (!sub)
		return pack_run_default(ctx, argc, argv);
	ctx->cx_cmd = sub;
	argc -= optind;
	argv += optind;
	cli_opt_reset();
	return sub->cc_fn(ctx, argc, argv);
}
