/* SPDX-License-Identifier: MIT */
/*
 * nacre: the admin and user command line tool.
 *
 *   nacre [--json] [--mds ADDRESS --fsname NAME] [--keyfile FILE] SUBCOMMAND [ARGS...]
 *
 * This file holds the command table and the dispatcher; each subcommand is
 * one function in cmd_*.c over the public libnacre API.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct cli_cmd cli_cmds[] = {
	{
		.cc_name = "df",
		.cc_fn = cmd_df,
		.cc_summary = "show space used on each MDT and OST",
		.cc_usage = "[-h] [--json] [PATH]",
		.cc_help =
			"  -h, --human-readable  sizes in powers of 1024 (K, M, G, T)\n"
			"  --json                one JSON object per filesystem\n"
			"Without PATH every mounted nacre filesystem is shown.\n",
	},
	{
		.cc_name = "getstripe",
		.cc_fn = cmd_getstripe,
		.cc_summary = "show the layout of files and directories",
		.cc_usage = "[--json] PATH...",
		.cc_help =
			"  --json                one JSON object per PATH\n"
			"A directory shows the default layout its new files get, with its OST\n"
			"pool when it names one (\"pool\" in JSON, null when none).\n",
	},
	{
		.cc_name = "setstripe",
		.cc_fn = cmd_setstripe,
		.cc_summary = "set a directory's default layout or create a file with a layout",
		.cc_usage = "[-d] [-S SIZE] [-c COUNT] [-i OST] [-E K+M|none] [-p POOL | --no-pool]\n"
			"       [--pack [--pack-max SIZE] [--inline-max SIZE] | --no-pack] [--json] PATH",
		.cc_help =
			"  -S, --stripe-size SIZE   bytes per chunk, K/M/G suffixes, a multiple\n"
			"                           of 4K from 4K to 64M\n"
			"  -c, --stripe-count COUNT objects per file, -1 for all OSTs\n"
			"  -i, --stripe-index OST   first OST, -1 to let the MDS choose\n"
			"  -E, --erasure-code K+M   K data and M parity chunks per row (K 1 to 16,\n"
			"                           M 0 to 4); none: plain striping, no parity\n"
			"  --pack                   a directory's new small files (and those of\n"
			"                           its new subdirectories) are packed\n"
			"  --pack-max SIZE          with --pack: the largest file kept packed,\n"
			"                           K/M suffixes, 1 byte to 64M (default 1M)\n"
			"  --inline-max SIZE        with --pack: files up to SIZE (0 to 4K) keep\n"
			"                           their bytes in the MDT, no pack (0: none)\n"
			"  --no-pack                new files of the directory are not packed\n"
			"  -p, --pool POOL          new files use only the active OSTs of OST pool\n"
			"                           POOL (see nacre pool); -p '' clears it\n"
			"  --no-pool                clear the directory's pool\n"
			"  -d, --delete             delete a directory's default: every field is\n"
			"                           the filesystem's again (the other options\n"
			"                           given apply on top: -d --pack)\n"
			"  --json                   print the resulting layout\n"
			"PATH may be a directory, an empty file, or a new file to create.\n"
			"Fields not given keep their value; packing stays as it was unless\n"
			"--pack or --no-pack is given.\n",
	},
	{
		.cc_name = "pack",
		.cc_fn = cmd_pack,
		.cc_summary = "move small files into packs, compact packs, show them",
		.cc_usage = "[convert] [--pack-max SIZE] [--inline-max SIZE] [-v] [--json] PATH...\n"
			"       nacre pack gc [--threshold F] [--json] [PATH]\n"
			"       nacre pack stats [-v] [--json] [PATH]",
		.cc_help =
			"  convert               move the regular files under each PATH into\n"
			"                        packs, and make its directories pack their\n"
			"                        new files (nacre pack DIR is nacre pack\n"
			"                        convert DIR; reach a directory named like a\n"
			"                        subcommand as ./NAME)\n"
			"    --pack-max SIZE     the largest file to pack, 1 byte to 64M\n"
			"    --inline-max SIZE   the largest file to make inline, 0 to 4K (its\n"
			"                        directories keep theirs when not given)\n"
			"    -v, --verbose       also one line per file\n"
			"  gc                    move the files of sealed packs whose live\n"
			"                        fraction is below F to new packs; the MDS\n"
			"                        destroys the emptied ones after 5 minutes\n"
			"    --threshold F       above 0, at most 1 (default 0.5)\n"
			"  stats                 packs, sealed and open, size, live and dead\n"
			"                        bytes, live fraction and files\n"
			"    -v, --verbose       also one line per pack\n"
			"  --json                JSON output\n"
			"Without PATH, gc and stats act on every mounted nacre filesystem.\n"
			"See nacre pack SUBCOMMAND --help.\n",
	},
	{
		.cc_name = "osts",
		.cc_fn = cmd_osts,
		.cc_summary = "list the OSTs of a filesystem, activate or deactivate one",
		.cc_usage = "[--json] [PATH]\n"
			"       nacre osts activate|deactivate [--json] INDEX [PATH]",
		.cc_help =
			"  --json                a JSON array of OSTs (state up or down, active\n"
			"                        true or false)\n"
			"  activate INDEX        new files and packs may use OST INDEX again\n"
			"  deactivate INDEX      no new objects on OST INDEX; its existing\n"
			"                        objects are still read and written (root only;\n"
			"                        kept across restarts)\n"
			"Without PATH every mounted nacre filesystem is listed; activate and\n"
			"deactivate need PATH (or --mds) when several are mounted.  A directory\n"
			"named activate or deactivate is reached as ./NAME.\n",
	},
	{
		.cc_name = "pool",
		.cc_fn = cmd_pool,
		.cc_summary = "manage OST pools (named sets of OSTs for setstripe -p)",
		.cc_usage = "create|destroy [--json] NAME [PATH]\n"
			"       nacre pool add|remove [--json] NAME INDEX... [PATH]\n"
			"       nacre pool list [--json] [NAME] [PATH]",
		.cc_help =
			"  create NAME           a new, empty pool (NAME: 1 to 15 of A-Z a-z\n"
			"                        0-9 _ . -; at most 64 pools)\n"
			"  destroy NAME          remove an empty pool\n"
			"  add NAME INDEX...     add OSTs to the pool\n"
			"  remove NAME INDEX...  take OSTs out of the pool\n"
			"  list [NAME]           the pools and their OSTs\n"
			"  --json                JSON output\n"
			"Changes need root.  Without PATH: the only mounted nacre filesystem.\n"
			"See nacre pool SUBCOMMAND --help.\n",
	},
	{
		.cc_name = "rebuild",
		.cc_fn = cmd_rebuild,
		.cc_summary = "regenerate stale or lost shards of erasure-coded files",
		.cc_usage = "[--ost INDEX] [--json] [PATH...]",
		.cc_help =
			"  --ost INDEX           also rebuild every shard kept on OST INDEX\n"
			"                        (an OST replaced by an empty one)\n"
			"  --json                one JSON object with the totals\n"
			"Every regular file under each PATH is repaired.  Without PATH: the\n"
			"root of every mounted nacre filesystem (with --mds, its root).\n",
	},
	{
		.cc_name = "scrub",
		.cc_fn = cmd_scrub,
		.cc_summary = "verify the checksums of file data and repair corrupt chunks",
		.cc_usage = "[--json] [PATH...]",
		.cc_help =
			"  --json                one JSON object with the corrupt files and totals\n"
			"Every regular file under each PATH is read in full.  Without PATH: the\n"
			"root of every mounted nacre filesystem (with --mds, its root).\n",
	},
	{
		.cc_name = "find",
		.cc_fn = cmd_find,
		.cc_summary = "find files by name, type, size, age and layout",
		.cc_usage = "PATH... [-name GLOB] [-type f|d|l] [-size [+-]N[kMGT]]\n"
			"       [-mtime [+-]DAYS] [-stripe-count [+-]N] [-ost INDEX] [-pack]\n"
			"       [-inline] [-print0] [--json]",
		.cc_help =
			"  -name GLOB            the last component matches the shell pattern\n"
			"  -type T               f file, d directory, l symbolic link (also p, s,\n"
			"                        b, c)\n"
			"  -size [+-]N[kMGT]     size more than (+), less than (-) or exactly N\n"
			"                        units; the size is rounded up to the unit as\n"
			"                        find(1) does; no suffix (or c): bytes\n"
			"  -mtime [+-]DAYS       modified more than, less than or exactly DAYS\n"
			"                        whole days ago\n"
			"  -stripe-count [+-]N   regular files with more, fewer or exactly N objects\n"
			"  -ost INDEX            regular files with a shard (or pack shard) on OST\n"
			"                        INDEX, stale or not; repeat for any of several\n"
			"  -pack                 packed files\n"
			"  -inline               inline files (their bytes in the MDT)\n"
			"  -print0               end each path with a NUL, not a newline\n"
			"  --json                a JSON array of {path, type, size, mtime,\n"
			"                        stripe_count, k, m, osts, packed, inline}\n"
			"Every test given must hold.  The tree is walked through the MDS, not\n"
			"the mount; symbolic links are not followed.  Paths print as find(1)\n"
			"prints them.  Errors on a subtree are reported and the walk goes on\n"
			"(exit status 1).\n",
	},
	{
		.cc_name = "migrate",
		.cc_fn = cmd_migrate,
		.cc_summary = "re-lay out files online: change erasure code or stripes, drain an OST",
		.cc_usage = "[-E K+M|none] [-c COUNT] [-S SIZE] [--ost-exclude INDEX[,INDEX...]]\n"
			"       [--grace SECONDS] [-v] [--json] PATH...",
		.cc_help =
			"  -E, --erasure-code K+M   K data and M parity chunks per row (K 1 to 16,\n"
			"                           M 0 to 4); none: plain striping\n"
			"  -c, --stripe-count COUNT objects per file, -1 for all OSTs\n"
			"  -S, --stripe-size SIZE   bytes per chunk, a multiple of 4K to 64M\n"
			"  --ost-exclude INDEX,...  the new objects avoid these OSTs; given alone,\n"
			"                           only files with a shard on them are moved\n"
			"                           (drains the OSTs)\n"
			"  --grace SECONDS          the old objects are destroyed SECONDS after\n"
			"                           the move (default 300; 0 at once, which\n"
			"                           readers that have a file open may see as\n"
			"                           zeros)\n"
			"  -v, --verbose            one line per file and the totals\n"
			"  --json                   a JSON object with one entry per file and\n"
			"                           the totals\n"
			"Every regular file under each PATH gets new objects, chosen by the\n"
			"MDS, its bytes copied while it stays online; the layouts swap only if\n"
			"the file did not change meanwhile, else the copy is retried and the\n"
			"file reported busy.  Without -E, -c or -S a file keeps its geometry\n"
			"(fewer data chunks if too few OSTs are left).  Packed files leave\n"
			"their pack.  Readers that opened a file before it moved read the old\n"
			"objects until they are destroyed.\n",
	},
	{
		.cc_name = "changelog",
		.cc_fn = cmd_changelog,
		.cc_summary = "show or clear the namespace changes the MDS recorded",
		.cc_usage = "[--since SEQ] [--limit N] [--json] [PATH]\n"
			"       nacre changelog clear SEQ [PATH]",
		.cc_help =
			"  --since SEQ           only records numbered above SEQ\n"
			"  --limit N             at most N records\n"
			"  --json                a JSON array of records\n"
			"  clear SEQ             remove the records numbered up to SEQ, once\n"
			"                        they have been consumed\n"
			"One line per record: number, type (CREAT, MKDIR, HLINK, SLINK, MKNOD,\n"
			"UNLNK, RMDIR, RENME, SATTR, TRUNC, XATTR, LYOUT), time, date, uid, gid,\n"
			"t=[FID] of the file, p=[FID] NAME of the entry, sp=[FID] NAME where a\n"
			"rename came from, x=NAME of an extended attribute.  The MDS records\n"
			"only when it runs with --changelog.  Root only.  Without PATH: the one\n"
			"mounted nacre filesystem (or --mds).\n",
	},
	{
		.cc_name = "stats",
		.cc_fn = cmd_stats,
		.cc_summary = "show the client counters of a mount",
		.cc_usage = "[--json] [MOUNT]",
		.cc_help =
			"  --json                {\"mount\": ..., \"counters\": {NAME: VALUE, ...}}\n"
			"The counters of the mount.nacre process serving MOUNT (any path on\n"
			"it): reads, writes, degraded reads, checksum errors, stale marks,\n"
			"rebuild and scrub progress, readahead.  Without MOUNT: every nacre\n"
			"mount.\n",
	},
};

#define CLI_NCMDS (sizeof(cli_cmds) / sizeof(cli_cmds[0]))

static const struct cli_cmd *cli_cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < CLI_NCMDS; i++)
		if (!strcmp(cli_cmds[i].cc_name, name))
			return &cli_cmds[i];
	return NULL;
}

void cli_cmd_help(const struct cli_cmd *cmd, FILE *out)
{
	fprintf(out, "usage: nacre %s %s\n%s.\n", cmd->cc_name, cmd->cc_usage,
		cmd->cc_summary);
	if (cmd->cc_help)
		fputs(cmd->cc_help, out);
}

static void cli_help(FILE *out)
{
	size_t i;

	fputs("usage: nacre [--json] [--mds ADDRESS --fsname NAME] [--keyfile FILE]\n"
	      "             SUBCOMMAND [ARGS...]\n"
	      "       nacre help SUBCOMMAND | --help | --version\n"
	      "\n"
	      "Global options:\n"
	      "  --json             machine-readable output\n"
	      "  --mds ADDRESS      talk to the MDS at ADDRESS instead of going\n"
	      "                     through a mount; PATHs are inside the filesystem\n"
	      "  --fsname NAME      the filesystem name, with --mds\n"
	      "  --keyfile FILE     the cluster key (default: $NACRE_KEYFILE, else\n"
	      "                     /etc/nacre/FSNAME.key)\n"
	      "\n"
	      "Subcommands:\n", out);
	for (i = 0; i < CLI_NCMDS; i++)
		fprintf(out, "  %-10s %s\n", cli_cmds[i].cc_name,
			cli_cmds[i].cc_summary);
	fputs("\nExit status: 0 success, 1 runtime error, 2 usage error.\n", out);
}

/* `nacre help [SUBCOMMAND]`. */
static int cli_help_cmd(struct cli_ctx *ctx, int argc, char **argv)
{
	const struct cli_cmd *cmd;

	if (argc < 2) {
		cli_help(stdout);
		return CLI_EXIT_OK;
	}
	if (argc > 2)
		return cli_usage_err(ctx, "help takes one subcommand");
	cmd = cli_cmd_find(argv[1]);
	if (!cmd)
		return cli_usage_err(ctx, "unknown subcommand '%s'", argv[1]);
	cli_cmd_help(cmd, stdout);
	return CLI_EXIT_OK;
}

/* Parses the options before the subcommand; returns CLI_OPT_CONTINUE or
 * the exit status. */
static int cli_parse_global(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "mds", required_argument, NULL, CLI_OPT_MDS },
		{ "fsname", required_argument, NULL, CLI_OPT_FSNAME },
		{ "keyfile", required_argument, NULL, CLI_OPT_KEYFILE },
		{ "version", no_argument, NULL, CLI_OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	cli_opt_reset();
	/* "+": stop at the subcommand, whose options are its own. */
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
		case CLI_OPT_HELP:
			cli_help(stdout);
			return CLI_EXIT_OK;
		case CLI_OPT_VERSION:
			printf("nacre %s\n", PACKAGE_VERSION);
			return CLI_EXIT_OK;
		case CLI_OPT_MDS:
			ctx->cx_mds = optarg;
			break;
		case CLI_OPT_FSNAME:
			ctx->cx_fsname = optarg;
			break;
		case CLI_OPT_KEYFILE:
			if (!*optarg)
				return cli_usage_err(ctx, "--keyfile needs a file name");
			ctx->cx_keyfile = optarg;
			break;
		default:
			rc = cli_opt_common(ctx, c, argv);
			if (rc != CLI_OPT_CONTINUE)
				return rc;
		}
	}
	if (!ctx->cx_mds != !ctx->cx_fsname)
		return cli_usage_err(ctx, "--mds and --fsname go together");
	return CLI_OPT_CONTINUE;
}

/* Runs the subcommand at argv[0]. */
static int cli_dispatch(struct cli_ctx *ctx, int argc, char **argv)
{
	const struct cli_cmd *cmd;

	if (!strcmp(argv[0], "help"))
		return cli_help_cmd(ctx, argc, argv);
	cmd = cli_cmd_find(argv[0]);
	if (!cmd)
		return cli_usage_err(ctx, "unknown subcommand '%s' (see nacre --help)",
				     argv[0]);
	ctx->cx_cmd = cmd;
	cli_opt_reset();
	return cmd->cc_fn(ctx, argc, argv);
}

/* Output that never reached its file (a full disk, a closed pipe) is a
 * failure the caller must see. */
static int cli_finish_output(int rc)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	fputs("nacre: error writing output\n", stderr);
	return rc == CLI_EXIT_OK ? CLI_EXIT_RUNTIME : rc;
}

int main(int argc, char **argv)
{
	struct cli_ctx ctx;
	int rc;

	memset(&ctx, 0, sizeof(ctx));
	rc = cli_parse_global(&ctx, argc, argv);
	if (rc == CLI_OPT_CONTINUE && optind >= argc)
		rc = cli_usage_err(&ctx, "no subcommand (see nacre --help)");
	else if (rc == CLI_OPT_CONTINUE)
		rc = cli_dispatch(&ctx, argc - optind, argv + optind);
	cli_ctx_fini(&ctx);
	return cli_finish_output(rc);
}
