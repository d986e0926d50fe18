/* SPDX-License-Identifier: MIT */
/*
 * nacre df [-h] [PATH]: space on every target of a filesystem, one row per
 * MDT and OST and a summary over the OSTs, as `lfs df` prints it.  An OST
 * that cannot be asked shows as down without sizes; that is what df is for,
 * so it is not an error.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct df_row {
	char dr_name[NACRE_FSNAME_MAX + 16];   /* FSNAME-OST0003 */
	const char *dr_type;                    /* "mdt", "ost" */
	uint32_t dr_index;
	char dr_uuid[37];
	const char *dr_xprt;                    /* "rdma", "tcp", "-" */
	bool dr_up;
	bool dr_inactive;                       /* OST deactivated: no new objects */
	uint64_t dr_total;
	uint64_t dr_used;
	uint64_t dr_avail;
};

struct df_report {
	const char *dp_fsname;
	char dp_mount[PATH_MAX];                /* or ADDRESS:/FSNAME */
	bool dp_mounted;
	unsigned int dp_nrows;
	struct df_row *dp_rows;                 /* MDT first, then OSTs */
	uint64_t dp_total, dp_used, dp_avail;   /* over the OSTs that are up */
	unsigned int dp_osts, dp_osts_up;
};

static void df_row_fill(struct df_row *r, const struct nacre_statfs *st)
{
	r->dr_up = true;
	r->dr_total = st->total;
	r->dr_used = st->total > st->free ? st->total - st->free : 0;
	r->dr_avail = st->avail;
}

static void df_row_name(struct df_row *r, const char *fsname, const char *type,
			uint32_t index)
{
	/* Lustre's target names: the index in four hex digits. */
	snprintf(r->dr_name, sizeof(r->dr_name), "%s-%s%04" PRIx32, fsname,
		 !strcmp(type, "mdt") ? "MDT" : "OST", index);
	r->dr_type = type;
	r->dr_index = index;
}

static int df_report_mdt(struct cli_ctx *ctx, struct nacre_fs *fs,
			 struct df_row *r)
{
	struct nacre_statfs st;
	int rc;

	rc = nacre_mdt_statfs(fs, &st);
	if (rc)
		return cli_err(ctx, "%s: MDT: %s", nacre_fs_name(fs),
			       nacre_strerror(rc));
	df_row_name(r, nacre_fs_name(fs), "mdt", 0);
	nacre_fs_uuid(fs, r->dr_uuid);
	df_row_fill(r, &st);
	r->dr_xprt = nacre_mds_transport(fs);
	return 0;
}

static void df_report_ost(struct df_report *dp, struct nacre_fs *fs,
			  const struct nacre_ost *o, struct df_row *r)
{
	struct nacre_statfs st;

	df_row_name(r, dp->dp_fsname, "ost", o->index);
	snprintf(r->dr_uuid, sizeof(r->dr_uuid), "%s", o->uuid);
	r->dr_inactive = !o->active;
	dp->dp_osts++;
	/* An OST the MDS already knows is down is not asked: that would
	 * only wait for a timeout. */
	r->dr_xprt = "-";
	if (!o->up || nacre_ost_statfs(fs, o->index, &st))
		return;
	df_row_fill(r, &st);
	r->dr_xprt = nacre_ost_transport(fs, o->index);
	if (!r->dr_xprt)
		r->dr_xprt = "-";
	dp->dp_osts_up++;
	dp->dp_total += r->dr_total;
	dp->dp_used += r->dr_used;
	dp->dp_avail += r->dr_avail;
}

/* Asks every target of @t's filesystem.  0 or CLI_EXIT_RUNTIME (reported). */
static int df_report_build(struct cli_ctx *ctx, struct cli_target *t,
			   struct df_report *dp)
{
	struct nacre_ost *osts;
	unsigned int count, i;
	int rc;

	memset(dp, 0, sizeof(*dp));
	dp->dp_fsname = nacre_fs_name(t->tg_fs);
	dp->dp_mounted = t->tg_mount[0] != '\0';
	if (dp->dp_mounted)
		snprintf(dp->dp_mount, sizeof(dp->dp_mount), "%s", t->tg_mount);
	else
		snprintf(dp->dp_mount, sizeof(dp->dp_mount), "%s:/%s",
			 nacre_fs_mds_addr(t->tg_fs), dp->dp_fsname);
	rc = nacre_ost_list(t->tg_fs, &osts, &count);
	if (rc)
		return cli_err(ctx, "%s: %s", dp->dp_fsname,
			       nacre_strerror(rc));
	dp->dp_rows = calloc(count + 1, sizeof(*dp->dp_rows));
	if (!dp->dp_rows) {
		rc = cli_err(ctx, "%s", strerror(ENOMEM));
		goto out_free_osts;
	}
	rc = df_report_mdt(ctx, t->tg_fs, &dp->dp_rows[0]);
	if (rc)
		goto out_free_rows;
	for (i = 0; i < count; i++)
		df_report_ost(dp, t->tg_fs, &osts[i], &dp->dp_rows[i + 1]);
	dp->dp_nrows = count + 1;
	free(osts);
	return 0;

out_free_rows:
	free(dp->dp_rows);
	dp->dp_rows = NULL;
out_free_osts:
	free(osts);
	return rc;
}

/* Use% as df(1) computes it: used over used + available, rounded up. */
static unsigned int df_percent(uint64_t used, uint64_t avail)
{
	uint64_t sum = used + avail;

	if (sum == 0)
		return 0;
	return (unsigned int)((used * 100 + sum - 1) / sum);
}

static void df_size(uint64_t bytes, bool human, char *buf, size_t len)
{
	if (human)
		cli_format_human(bytes, buf, len);
	else
		snprintf(buf, len, "%" PRIu64, bytes / 1024);
}

static void df_print_line(int name_w, const char *name, uint64_t total,
			  uint64_t used, uint64_t avail, bool up, bool human,
			  const char *state, const char *xprt, const char *where)
{
	char t[32], u[32], a[32], p[8];

	if (up) {
		df_size(total, human, t, sizeof(t));
		df_size(used, human, u, sizeof(u));
		df_size(avail, human, a, sizeof(a));
		snprintf(p, sizeof(p), "%u%%", df_percent(used, avail));
	} else {
		strcpy(t, "-");
		strcpy(u, "-");
		strcpy(a, "-");
		strcpy(p, "-");
	}
	printf("%-*s %12s %12s %12s %4s %-5s %-5s %s\n", name_w, name, t, u, a, p,
	       state, xprt, where);
}

/* An inactive OST (no new objects) shows as such, up or down, as Lustre's
 * "inactive device"; --json has both. */
static const char *df_state(const struct df_row *r)
{
	if (r->dr_inactive)
		return "inact";
	return r->dr_up ? "up" : "down";
}

static void df_print_text(const struct df_report *dp, bool human)
{
	int name_w = (int)strlen(dp->dp_fsname) + 8;
	char where[PATH_MAX + 32];
	unsigned int i;

	if (name_w < 20)
		name_w = 20;
	printf("%-*s %12s %12s %12s %4s %-5s %-5s %s\n", name_w, "UUID",
	       human ? "bytes" : "1K-blocks", "Used", "Available", "Use%",
	       "State", "Xprt", "Mounted on");
	for (i = 0; i < dp->dp_nrows; i++) {
		const struct df_row *r = &dp->dp_rows[i];

		snprintf(where, sizeof(where), "%s[%s:%" PRIu32 "]",
			 dp->dp_mount, i == 0 ? "MDT" : "OST", r->dr_index);
		df_print_line(name_w, r->dr_name, r->dr_total, r->dr_used,
			      r->dr_avail, r->dr_up, human, df_state(r),
			      r->dr_xprt ? r->dr_xprt : "-", where);
	}
	putchar('\n');
	df_print_line(name_w, "filesystem_summary:", dp->dp_total, dp->dp_used,
		      dp->dp_avail, true, human, "", "", dp->dp_mount);
}

/* A down target has no sizes: null, not a misleading 0. */
static void df_json_size(struct cli_json *js, const char *key, bool up,
			 uint64_t bytes)
{
	cli_json_key(js, key);
	if (up)
		cli_json_u64(js, bytes);
	else
		cli_json_null(js);
}

static void df_print_json(const struct df_report *dp, struct cli_json *js)
{
	unsigned int i;

	cli_json_obj_begin(js);
	cli_json_kv_str(js, "filesystem", dp->dp_fsname);
	cli_json_key(js, "mount");
	if (dp->dp_mounted)
		cli_json_str(js, dp->dp_mount);
	else
		cli_json_null(js);
	cli_json_key(js, "targets");
	cli_json_arr_begin(js);
	for (i = 0; i < dp->dp_nrows; i++) {
		const struct df_row *r = &dp->dp_rows[i];

		cli_json_obj_begin(js);
		cli_json_kv_str(js, "name", r->dr_name);
		cli_json_kv_str(js, "type", r->dr_type);
		cli_json_kv_u64(js, "index", r->dr_index);
		cli_json_kv_str(js, "uuid", r->dr_uuid);
		cli_json_kv_str(js, "state", r->dr_up ? "up" : "down");
		cli_json_key(js, "active");
		cli_json_bool(js, !r->dr_inactive);
		cli_json_key(js, "transport");
		if (r->dr_xprt && strcmp(r->dr_xprt, "-"))
			cli_json_str(js, r->dr_xprt);
		else
			cli_json_null(js);
		df_json_size(js, "total", r->dr_up, r->dr_total);
		df_json_size(js, "used", r->dr_up, r->dr_used);
		df_json_size(js, "avail", r->dr_up, r->dr_avail);
		cli_json_obj_end(js);
	}
	cli_json_arr_end(js);
	cli_json_key(js, "summary");
	cli_json_obj_begin(js);
	cli_json_kv_u64(js, "total", dp->dp_total);
	cli_json_kv_u64(js, "used", dp->dp_used);
	cli_json_kv_u64(js, "avail", dp->dp_avail);
	cli_json_kv_u64(js, "osts", dp->dp_osts);
	cli_json_kv_u64(js, "osts_up", dp->dp_osts_up);
	cli_json_obj_end(js);
	cli_json_obj_end(js);
}

/* @arg: the bool of -h. */
static int df_one(struct cli_ctx *ctx, struct cli_target *t, struct cli_json *js,
		  bool many, void *arg)
{
	bool human = *(bool *)arg;
	struct df_report dp;
	int rc;

	rc = df_report_build(ctx, t, &dp);
	if (rc)
		return rc;
	if (js)
		df_print_json(&dp, js);
	else
		df_print_text(&dp, human);
	free(dp.dp_rows);
	return 0;
}

int cmd_df(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "human-readable", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool human = false;
	int c, rc;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h') {
			human = true;
			continue;
		}
		rc = cli_opt_common(ctx, c, argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	if (argc - optind > 1)
		return cli_usage_err(ctx, "too many arguments");
	return cli_targets_report(ctx, optind < argc ? argv[optind] : NULL, df_one, &human);
}
