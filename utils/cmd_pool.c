/* SPDX-License-Identifier: MIT */
/*
 * nacre pool create|destroy|add|remove|list: OST pools, named sets of
 * OSTs that a directory's default layout may name (setstripe -p), as
 * Lustre's lctl pool_new / pool_add / pool_list.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static int pool_cmd_change(struct cli_ctx *ctx, int argc, char **argv);
static int pool_cmd_list(struct cli_ctx *ctx, int argc, char **argv);

#define POOL_NAME_RULE "1 to 15 of A-Z a-z 0-9 _ . -"

static const struct cli_cmd pool_cmds[] = {
	{
		.cc_name = "pool create",
		.cc_fn = pool_cmd_change,
		.cc_summary = "create an empty OST pool",
		.cc_usage = "[--json] NAME [PATH]",
		.cc_help =
			"  --json                the pool as a JSON object\n"
			"NAME: " POOL_NAME_RULE ".  At most 64 pools.  Root only.\n",
	},
	{
		.cc_name = "pool destroy",
		.cc_fn = pool_cmd_change,
		.cc_summary = "remove an empty OST pool",
		.cc_usage = "[--json] NAME [PATH]",
		.cc_help =
			"  --json                {\"name\": NAME, \"destroyed\": true}\n"
			"A pool that still has OSTs is refused: remove them first, so that\n"
			"destroying a pool never silently widens where files go.  Directories\n"
			"that still name a destroyed pool lay files out over every OST.\n"
			"Root only.\n",
	},
	{
		.cc_name = "pool add",
		.cc_fn = pool_cmd_change,
		.cc_summary = "add OSTs to a pool",
		.cc_usage = "[--json] NAME INDEX... [PATH]",
		.cc_help =
			"  --json                the pool as a JSON object\n"
			"Each INDEX must be an OST of the filesystem not yet in the pool; when\n"
			"one is not, nothing is added.  Root only.\n",
	},
	{
		.cc_name = "pool remove",
		.cc_fn = pool_cmd_change,
		.cc_summary = "remove OSTs from a pool",
		.cc_usage = "[--json] NAME INDEX... [PATH]",
		.cc_help =
			"  --json                the pool as a JSON object\n"
			"Each INDEX must be in the pool; when one is not, nothing is removed.\n"
			"Files already laid out keep their objects.  Root only.\n",
	},
	{
		.cc_name = "pool list",
		.cc_fn = pool_cmd_list,
		.cc_summary = "list OST pools and their OSTs",
		.cc_usage = "[--json] [NAME] [PATH]",
		.cc_help =
			"  --json                a JSON array of {name, osts, filesystem}\n"
			"Without NAME every pool is listed.  A single argument is a PATH when\n"
			"it contains '/' or names an existing file, else a pool NAME.\n",
	},
};

#define POOL_NCMDS (sizeof(pool_cmds) / sizeof(pool_cmds[0]))

static const struct cli_cmd *pool_cmd_find(const char *name)
{
	for (size_t i = 0; i < POOL_NCMDS; i++)
		if (!strcmp(pool_cmds[i].cc_name + strlen("pool "), name))
			return &pool_cmds[i];
	return NULL;
}

/* Options of every pool subcommand (--json, --help); returns optind's
 * first positional argument index, or -(exit status) when done. */
static int pool_opts(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		rc = cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c, argv);
		if (rc != CLI_OPT_CONTINUE)
			return -rc;
	}
	return optind;
}

static int pool_check_name(struct cli_ctx *ctx, const char *name)
{
	if (!nacre_pool_name_is_valid(name))
		return cli_usage_err(ctx, "bad pool name '%s' (" POOL_NAME_RULE ")", name);
	return 0;
}

static bool pool_is_index(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

static void pool_json(struct cli_json *js, const struct nacre_pool *p, const char *fsname)
{
	cli_json_obj_begin(js);
	cli_json_kv_str(js, "name", p->name);
	cli_json_key(js, "osts");
	cli_json_arr_begin(js);
	for (unsigned int i = 0; i < p->count; i++)
		cli_json_u64(js, p->osts[i]);
	cli_json_arr_end(js);
	cli_json_kv_str(js, "filesystem", fsname);
	cli_json_obj_end(js);
}

static void pool_text(const struct nacre_pool *p)
{
	printf("%-15s", p->name);
	if (!p->count)
		printf(" (no OSTs)");
	for (unsigned int i = 0; i < p->count; i++)
		printf("%s%u", i ? "," : " ", p->osts[i]);
	putchar('\n');
}

/* The pool @name, read back for the report; NULL when it cannot be. */
static struct nacre_pool *pool_get(struct nacre_fs *fs, const char *name)
{
	struct nacre_pool *p;
	unsigned int n;

	if (nacre_pool_list(fs, name, &p, &n))
		return NULL;
	if (n != 1) {
		free(p);
		return NULL;
	}
	return p;
}

/*
 * Names the index an add or remove would trip on, so that the message says
 * which one (the MDS answers with one status for the whole request).
 */
static int pool_check_indexes(struct cli_ctx *ctx, struct nacre_fs *fs, bool add,
			      const char *name, const uint32_t *idx, unsigned int n)
{
	struct nacre_pool *p = pool_get(fs, name);
	struct nacre_ost *osts;
	unsigned int count;
	int rc = 0;

	if (!p)
		return cli_err(ctx, "no OST pool '%s' (see nacre pool list)", name);
	if (nacre_ost_list(fs, &osts, &count)) {
		free(p);
		return 0; /* the change itself reports what is wrong */
	}
	for (unsigned int i = 0; !rc && i < n; i++) {
		bool known = false, member = false;

		for (unsigned int j = 0; j < count; j++)
			known |= osts[j].index == idx[i];
		for (unsigned int j = 0; j < p->count; j++)
			member |= p->osts[j] == idx[i];
		for (unsigned int j = 0; j < i; j++)
			if (idx[j] == idx[i])
				rc = cli_usage_err(ctx, "OST %u is given twice", idx[i]);
		if (rc)
			break;
		if (add && !known)
			rc = cli_err(ctx, "no OST %u in filesystem %s (see nacre osts)", idx[i],
				     nacre_fs_name(fs));
		else if (add && member)
			rc = cli_err(ctx, "OST %u is already in pool '%s'", idx[i], name);
		else if (!add && !member)
			rc = cli_err(ctx, "OST %u is not in pool '%s'", idx[i], name);
	}
	free(osts);
	free(p);
	return rc;
}

static int pool_change_err(struct cli_ctx *ctx, const char *verb, const char *name, int rc)
{
	switch (rc) {
	case -EPERM:
		return cli_err(ctx, "cannot %s pool '%s': only root may change OST pools", verb,
			       name);
	case -EEXIST:
		return cli_err(ctx, "cannot %s pool '%s': it exists already", verb, name);
	case -ENOENT:
		return cli_err(ctx, "cannot %s pool '%s': no such pool (or OST not in it)", verb,
			       name);
	case -ENOTEMPTY:
		return cli_err(ctx, "cannot %s pool '%s': it still has OSTs (remove them first)",
			       verb, name);
	case -ENOSPC:
		return cli_err(ctx, "cannot %s pool '%s': too many pools (at most 64)", verb, name);
	case -ENODEV:
		return cli_err(ctx, "cannot %s pool '%s': no such OST", verb, name);
	default:
		return cli_err(ctx, "cannot %s pool '%s': %s", verb, name, nacre_strerror(rc));
	}
}

/* The report after a change: the pool as it now is. */
static int pool_report(struct cli_ctx *ctx, struct nacre_fs *fs, const char *verb,
		       const char *name)
{
	struct nacre_pool *p = NULL;
	struct cli_json js;

	if (strcmp(verb, "destroy")) {
		p = pool_get(fs, name);
		if (!p)
			return cli_err(ctx, "pool '%s' changed but cannot be read back", name);
	}
	if (ctx->cx_json) {
		cli_json_init(&js, stdout);
		if (p) {
			pool_json(&js, p, nacre_fs_name(fs));
		} else {
			cli_json_obj_begin(&js);
			cli_json_kv_str(&js, "name", name);
			cli_json_key(&js, "destroyed");
			cli_json_bool(&js, true);
			cli_json_obj_end(&js);
		}
		cli_json_end(&js);
	} else if (p) {
		pool_text(p);
	} else {
		printf("pool %s destroyed\n", name);
	}
	free(p);
	return CLI_EXIT_OK;
}

/* create, destroy: NAME [PATH]; add, remove: NAME INDEX... [PATH]. */
static int pool_cmd_change(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *verb = ctx->cx_cmd->cc_name + strlen("pool ");
	bool with_osts = !strcmp(verb, "add") || !strcmp(verb, "remove");
	uint32_t idx[NACRE_MAX_OSTS];
	const char *name, *path = NULL;
	unsigned int n = 0;
	struct cli_target t;
	int first, last, rc;

	first = pool_opts(ctx, argc, argv);
	if (first < 0)
		return -first;
	if (first >= argc)
		return cli_usage_err(ctx, "missing pool NAME");
	name = argv[first];
	if (pool_check_name(ctx, name))
		return CLI_EXIT_USAGE;
	last = argc - 1;
	/* The last argument is a PATH unless it is an OST index. */
	if (last > first && (!with_osts || !pool_is_index(argv[last])))
		path = argv[last--];
	if (!with_osts && last > first)
		return cli_usage_err(ctx, "too many arguments");
	if (with_osts && last == first)
		return cli_usage_err(ctx, "missing OST INDEX");
	for (int i = first + 1; i <= last; i++) {
		if (n == NACRE_MAX_OSTS)
			return cli_usage_err(ctx, "too many OST indexes");
		if (cli_parse_ost_index(ctx, argv[i], &idx[n++]))
			return CLI_EXIT_USAGE;
	}
	rc = cli_target_one(ctx, path, &t);
	if (rc)
		return rc;
	if (with_osts) {
		rc = pool_check_indexes(ctx, t.tg_fs, !strcmp(verb, "add"), name, idx, n);
		if (rc)
			return rc;
	}
	if (!strcmp(verb, "create"))
		rc = nacre_pool_create(t.tg_fs, name);
	else if (!strcmp(verb, "destroy"))
		rc = nacre_pool_destroy(t.tg_fs, name);
	else if (!strcmp(verb, "add"))
		rc = nacre_pool_add(t.tg_fs, name, idx, n);
	else
		rc = nacre_pool_remove(t.tg_fs, name, idx, n);
	if (rc)
		return pool_change_err(ctx, verb, name, rc);
	return pool_report(ctx, t.tg_fs, verb, name);
}

/* list [NAME] [PATH]: one argument is a PATH when it looks like one. */
static int pool_cmd_list(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *name = NULL, *path = NULL;
	struct nacre_pool *pools;
	struct cli_target t;
	struct cli_json js;
	unsigned int n;
	struct stat st;
	int first, rc;

	first = pool_opts(ctx, argc, argv);
	if (first < 0)
		return -first;
	if (argc - first > 2)
		return cli_usage_err(ctx, "too many arguments");
	if (argc - first == 2) {
		name = argv[first];
		path = argv[first + 1];
	} else if (argc - first == 1) {
		if (strchr(argv[first], '/') || lstat(argv[first], &st) == 0)
			path = argv[first];
		else
			name = argv[first];
	}
	if (name && pool_check_name(ctx, name))
		return CLI_EXIT_USAGE;
	rc = cli_target_one(ctx, path, &t);
	if (rc)
		return rc;
	rc = nacre_pool_list(t.tg_fs, name, &pools, &n);
	if (rc == -ENOENT)
		return cli_err(ctx, "no OST pool '%s' in filesystem %s", name,
			       nacre_fs_name(t.tg_fs));
	if (rc)
		return cli_err(ctx, "%s: %s", nacre_fs_name(t.tg_fs), nacre_strerror(rc));
	if (ctx->cx_json) {
		cli_json_init(&js, stdout);
		cli_json_arr_begin(&js);
		for (unsigned int i = 0; i < n; i++)
			pool_json(&js, &pools[i], nacre_fs_name(t.tg_fs));
		cli_json_arr_end(&js);
		cli_json_end(&js);
	} else {
		if (n == 0)
			printf("no OST pools in %s\n", nacre_fs_name(t.tg_fs));
		for (unsigned int i = 0; i < n; i++)
			pool_text(&pools[i]);
	}
	free(pools);
	return CLI_EXIT_OK;
}

int cmd_pool(struct cli_ctx *ctx, int argc, char **argv)
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
		return cli_usage_err(ctx, "missing subcommand: create, destroy, add, remove or list");
	sub = pool_cmd_find(argv[optind]);
	if (!sub)
		return cli_usage_err(ctx, "unknown subcommand '%s' (see nacre help pool)",
				     argv[optind]);
	ctx->cx_cmd = sub;
	argc -= optind;
	argv += optind;
	cli_opt_reset();
	return sub->cc_fn(ctx, argc, argv);
}
