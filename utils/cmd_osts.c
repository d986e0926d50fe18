/* SPDX-License-Identifier: MIT */
/*
 * nacre osts [PATH]: the OST table the MDS keeps (index, uuid, address,
 * transport, state, administrative state), as `lfs osts` lists a
 * filesystem's OBDs; nacre osts activate|deactivate INDEX [PATH] changes
 * whether an OST gets new objects, as `lctl --device N deactivate` on an
 * MDS.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The transport this client reaches the OST over: an OST that is up is
 * asked (statfs), which connects; "-" when it cannot be reached. */
static const char *cmd_osts_transport(struct nacre_fs *fs, const struct nacre_ost *o)
{
	struct nacre_statfs st;
	const char *t = nacre_ost_transport(fs, o->index);

	if (!t && o->up && nacre_ost_statfs(fs, o->index, &st) == 0)
		t = nacre_ost_transport(fs, o->index);
	return t ? t : "-";
}

static void cmd_osts_json(struct cli_json *js, struct nacre_fs *fs, const char *fsname,
			  const struct nacre_ost *osts, unsigned int count)
{
	unsigned int i;

	for (i = 0; i < count; i++) {
		cli_json_obj_begin(js);
		cli_json_kv_u64(js, "index", osts[i].index);
		cli_json_kv_str(js, "uuid", osts[i].uuid);
		cli_json_kv_str(js, "address", osts[i].addr);
		cli_json_kv_str(js, "transport", cmd_osts_transport(fs, &osts[i]));
		cli_json_kv_str(js, "state", osts[i].up ? "up" : "down");
		cli_json_key(js, "active");
		cli_json_bool(js, osts[i].active);
		cli_json_kv_str(js, "filesystem", fsname);
		cli_json_obj_end(js);
	}
}

static void cmd_osts_text(struct nacre_fs *fs, const struct nacre_ost *osts,
			  unsigned int count)
{
	int addr_w = (int)strlen("ADDRESS");
	unsigned int i;

	for (i = 0; i < count; i++)
		if ((int)strlen(osts[i].addr) > addr_w)
			addr_w = (int)strlen(osts[i].addr);
	printf("%-5s %-36s %-*s %-9s %-5s %s\n", "INDEX", "UUID", addr_w, "ADDRESS",
	       "TRANSPORT", "STATE", "ADMIN");
	for (i = 0; i < count; i++)
		printf("%-5u %-36s %-*s %-9s %-5s %s\n", osts[i].index, osts[i].uuid,
		       addr_w, osts[i].addr,
		       cmd_osts_transport(fs, &osts[i]),
		       osts[i].up ? "up" : "down",
		       osts[i].active ? "active" : "inactive");
}

/* Lists the OSTs of one filesystem; @heading when several are shown. */
static int cmd_osts_one(struct cli_ctx *ctx, struct cli_target *t,
			struct cli_json *js, bool heading)
{
	const char *fsname = nacre_fs_name(t->tg_fs);
	struct nacre_ost *osts;
	unsigned int count;
	int rc;

	rc = nacre_ost_list(t->tg_fs, &osts, &count);
	if (rc)
		return cli_err(ctx, "%s: %s", fsname, nacre_strerror(rc));
	if (js) {
		cmd_osts_json(js, t->tg_fs, fsname, osts, count);
	} else {
		if (heading)
			printf("%s (%s):\n", fsname, t->tg_mount[0] ?
			       t->tg_mount : nacre_fs_mds_addr(t->tg_fs));
		cmd_osts_text(t->tg_fs, osts, count);
	}
	free(osts);
	return 0;
}

static const struct cli_cmd osts_admin_cmds[] = {
	{
		.cc_name = "osts activate",
		.cc_fn = cmd_osts_admin,
		.cc_summary = "let an OST get new objects again",
		.cc_usage = "[--json] INDEX [PATH]",
		.cc_help =
			"  --json                the OST's new state as a JSON object\n"
			"New files and packs may be placed on OST INDEX again.  Only root may\n"
			"do this.  Without PATH: the only mounted nacre filesystem.\n",
	},
	{
		.cc_name = "osts deactivate",
		.cc_fn = cmd_osts_admin,
		.cc_summary = "stop placing new objects on an OST",
		.cc_usage = "[--json] INDEX [PATH]",
		.cc_help =
			"  --json                the OST's new state as a JSON object\n"
			"No new file or pack gets an object on OST INDEX; existing files keep\n"
			"reading and writing their objects there.  The state survives restarts\n"
			"of the MDS and of the OSS.  Only root may do this.  Without PATH: the\n"
			"only mounted nacre filesystem.\n",
	},
};

/* Why a change was refused, in words an administrator acts on. */
static int osts_admin_err(struct cli_ctx *ctx, const char *verb, uint32_t idx, int rc)
{
	if (rc == -EPERM)
		return cli_err(ctx, "cannot %s OST %u: only root may change OSTs", verb, idx);
	if (rc == -ENODEV)
		return cli_err(ctx, "cannot %s OST %u: no OST with that index (see nacre osts)",
			       verb, idx);
	return cli_err(ctx, "cannot %s OST %u: %s", verb, idx, nacre_strerror(rc));
}

int cmd_osts_admin(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	bool active = !strcmp(ctx->cx_cmd->cc_name, "osts activate");
	const char *verb = active ? "activate" : "deactivate";
	struct cli_target t;
	struct cli_json js;
	uint32_t idx;
	int c, rc;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		rc = cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c, argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	if (optind >= argc)
		return cli_usage_err(ctx, "missing INDEX");
	if (argc - optind > 2)
		return cli_usage_err(ctx, "too many arguments");
	if (cli_parse_ost_index(ctx, argv[optind], &idx))
		return CLI_EXIT_USAGE;
	rc = cli_target_one(ctx, optind + 1 < argc ? argv[optind + 1] : NULL, &t);
	if (rc)
		return rc;
	rc = nacre_ost_set_active(t.tg_fs, idx, active);
	if (rc)
		return osts_admin_err(ctx, verb, idx, rc);
	if (ctx->cx_json) {
		cli_json_init(&js, stdout);
		cli_json_obj_begin(&js);
		cli_json_kv_u64(&js, "index", idx);
		cli_json_key(&js, "active");
		cli_json_bool(&js, active);
		cli_json_kv_str(&js, "filesystem", nacre_fs_name(t.tg_fs));
		cli_json_obj_end(&js);
		cli_json_end(&js);
	} else {
		printf("OST %u %s\n", idx, active ? "activated" : "deactivated");
	}
	return CLI_EXIT_OK;
}

/* `nacre osts [OPTIONS] activate|deactivate ...`: the subcommand, found as
 * the first argument that is not an option; NULL when there is none. */
static const struct cli_cmd *osts_admin_find(int argc, char **argv, int *at)
{
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		for (size_t j = 0; j < sizeof(osts_admin_cmds) / sizeof(osts_admin_cmds[0]); j++)
			if (!strcmp(argv[i], osts_admin_cmds[j].cc_name + strlen("osts ")))
				*at = i;
		return *at ? &osts_admin_cmds[!strcmp(argv[*at], "deactivate")] : NULL;
	}
	return NULL;
}

int cmd_osts(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_cmd *sub;
	struct cli_target *targets;
	struct cli_json js;
	int c, i, n, rc, status, at = 0;

	/* A directory named like a subcommand is reached as ./NAME. */
	sub = osts_admin_find(argc, argv, &at);
	if (sub) {
		/* The subcommand's name takes its place as argv[0]. */
		for (i = at; i > 0; i--)
			argv[i] = argv[i - 1];
		ctx->cx_cmd = sub;
		cli_opt_reset();
		return sub->cc_fn(ctx, argc - 1, argv + 1);
	}
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		rc = cli_opt_common(ctx, c, argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	if (argc - optind > 1)
		return cli_usage_err(ctx, "too many arguments");
	status = cli_targets_collect(ctx, optind < argc ? argv[optind] : NULL,
				     &targets, &n);
	if (n == 0)
		return status;
	cli_json_init(&js, stdout);
	if (ctx->cx_json)
		cli_json_arr_begin(&js);
	for (i = 0; i < n; i++) {
		if (!ctx->cx_json && i > 0)
			putchar('\n');
		if (cmd_osts_one(ctx, &targets[i], ctx->cx_json ? &js : NULL,
				 n > 1))
			status = CLI_EXIT_RUNTIME;
	}
	if (ctx->cx_json) {
		cli_json_arr_end(&js);
		cli_json_end(&js);
	}
	free(targets);
	return status;
}
