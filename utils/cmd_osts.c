/* SPDX-License-Identifier: MIT */
/*
 * nacre osts [PATH]: the OST table the MDS keeps (index, uuid, address,
 * transport, state), as `lfs osts` lists a filesystem's OBDs.
 */
#include "config.h"

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
	printf("%-5s %-36s %-*s %-9s %s\n", "INDEX", "UUID", addr_w, "ADDRESS",
	       "TRANSPORT", "STATE");
	for (i = 0; i < count; i++)
		printf("%-5u %-36s %-*s %-9s %s\n", osts[i].index, osts[i].uuid,
		       addr_w, osts[i].addr,
		       cmd_osts_transport(fs, &osts[i]),
		       osts[i].up ? "up" : "down");
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

int cmd_osts(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct cli_target *targets;
	struct cli_json js;
	int c, i, n, rc, status;

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
