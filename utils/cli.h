/* SPDX-License-Identifier: MIT */
/*
 * The nacre admin CLI: a command table (cli_main.c) over libnacre, one small
 * function per subcommand (cmd_*.c), and the helpers they share
 * (cli_util.c): error reporting, option handling, size parsing and
 * printing, a small JSON writer, and finding the filesystem behind a path.
 *
 * Exit status: 0 success, 1 a runtime error, 2 bad usage.  Every message
 * goes to stderr as one line, "nacre SUBCOMMAND: ...".
 */
#ifndef CLI_H
#define CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nacre.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_RUNTIME 1
#define CLI_EXIT_USAGE 2

/* Connections kept open for one run (one per filesystem named). */
#define CLI_MAX_CONNS 16
/* Nacre mounts considered when no PATH is given. */
#define CLI_MAX_MOUNTS 64
/* The names a mount gives open unlinked files (libclient/file.c): tree
 * walks skip them, as the file goes with its last close. */
#define CLI_HIDDEN_PREFIX ".nacre-hidden-"

struct cli_ctx;

/* One subcommand: argv[0] is its name; returns an exit status. */
typedef int (*cli_cmd_fn)(struct cli_ctx *ctx, int argc, char **argv);

struct cli_cmd {
	const char *cc_name;
	cli_cmd_fn cc_fn;
	const char *cc_summary;        /* one line for `nacre --help` */
	const char *cc_usage;          /* arguments after the name */
	const char *cc_help;           /* option lines for `nacre help SUB` */
};

struct cli_conn {
	char cn_mds[NACRE_ADDR_MAX + 1];
	char cn_fsname[NACRE_FSNAME_MAX + 1];
	struct nacre_fs *cn_fs;
};

struct cli_ctx {
	const struct cli_cmd *cx_cmd;  /* the running subcommand, or NULL */
	bool cx_json;
	const char *cx_mds;            /* --mds: no mount needed */
	const char *cx_fsname;         /* --fsname, with --mds */
	const char *cx_keyfile;        /* --keyfile: the cluster key */
	char cx_errbuf[PATH_MAX + 128]; /* cli_connect_strerror() */
	unsigned int cx_nconns;
	struct cli_conn cx_conns[CLI_MAX_CONNS];
};

/* A file or directory of a nacre filesystem, found by path. */
struct cli_target {
	struct nacre_fs *tg_fs;        /* owned by the ctx connection cache */
	struct nacre_fid tg_fid;
	struct nacre_stat tg_st;
	char tg_mount[PATH_MAX];       /* "" when reached by --mds */
};

/* ---- cli_main.c ---- */

/* Prints "usage: nacre NAME USAGE" and the command's option help. */
void cli_cmd_help(const struct cli_cmd *cmd, FILE *out);

/* ---- the subcommands ---- */

int cmd_df(struct cli_ctx *ctx, int argc, char **argv);
int cmd_getstripe(struct cli_ctx *ctx, int argc, char **argv);
int cmd_setstripe(struct cli_ctx *ctx, int argc, char **argv);
int cmd_osts(struct cli_ctx *ctx, int argc, char **argv);
/* `nacre osts activate|deactivate INDEX [PATH]` (cmd_osts.c). */
int cmd_osts_admin(struct cli_ctx *ctx, int argc, char **argv);
int cmd_pool(struct cli_ctx *ctx, int argc, char **argv);
int cmd_pack(struct cli_ctx *ctx, int argc, char **argv);
/* `nacre pack [convert]` (cmd_pack_convert.c), dispatched by cmd_pack(). */
int cmd_pack_convert(struct cli_ctx *ctx, int argc, char **argv);
int cmd_rebuild(struct cli_ctx *ctx, int argc, char **argv);
int cmd_scrub(struct cli_ctx *ctx, int argc, char **argv);
int cmd_find(struct cli_ctx *ctx, int argc, char **argv);
int cmd_migrate(struct cli_ctx *ctx, int argc, char **argv);
int cmd_changelog(struct cli_ctx *ctx, int argc, char **argv);
int cmd_stats(struct cli_ctx *ctx, int argc, char **argv);

/* ---- cli_util.c: messages ---- */

/* "nacre CMD: MESSAGE" on stderr; return CLI_EXIT_USAGE / CLI_EXIT_RUNTIME. */
int cli_usage_err(const struct cli_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int cli_err(const struct cli_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- cli_util.c: options ---- */

/* getopt_long values of the options every subcommand accepts. */
enum {
	CLI_OPT_JSON = 0x100,
	CLI_OPT_HELP,
	CLI_OPT_MDS,
	CLI_OPT_FSNAME,
	CLI_OPT_VERSION,
	CLI_OPT_KEYFILE,
};

/* --mds and --fsname are global options only (cli_main.c). */
#define CLI_COMMON_LONGOPTS                                             \
	{ "json", no_argument, NULL, CLI_OPT_JSON },                    \
	{ "help", no_argument, NULL, CLI_OPT_HELP }

/* Returned by cli_opt_common() when option parsing goes on. */
#define CLI_OPT_CONTINUE (-1)

/*
 * Handles what getopt_long() returned for an option that is not the
 * command's own: the common long options, unknown options and missing
 * arguments.  Returns CLI_OPT_CONTINUE, or the exit status to end with
 * (0 after --help, CLI_EXIT_USAGE after an error, already reported).
 */
int cli_opt_common(struct cli_ctx *ctx, int c, char **argv);

/* Makes the next getopt_long() call parse a fresh argument vector. */
void cli_opt_reset(void);

/* ---- cli_util.c: numbers and sizes ---- */

/* Decimal digits with an optional K, M, G or T suffix (powers of 1024,
 * either case).  0 or -EINVAL (empty, trailing junk, overflow). */
int cli_parse_size(const char *s, uint64_t *out);
/* A decimal integer, possibly negative, with nothing after it. */
int cli_parse_long(const char *s, long *out);

/* "1.5G", "512.0K", "37B": powers of 1024 with one decimal, as lfs df -h. */
void cli_format_human(uint64_t bytes, char *buf, size_t len);

/* ---- cli_util.c: packing templates ---- */

/* The largest pack_max the MDS accepts in a template. */
#define CLI_PACK_MAX_LIMIT (64u << 20)

/*
 * A --pack-max SIZE: 1 byte to CLI_PACK_MAX_LIMIT, with an optional K or M
 * suffix.  0 is refused rather than read as the default, so that a typo
 * never silently means 1 MiB.  0 or -EINVAL.
 */
int cli_parse_pack_max(const char *s, uint32_t *out);
/* The message for a --pack-max that cli_parse_pack_max() refused. */
int cli_pack_max_err(const struct cli_ctx *ctx, const char *arg);
/* --inline-max: 0 to NACRE_INLINE_MAX bytes, K suffix. */
int cli_parse_inline_max(const char *s, uint32_t *out);
int cli_inline_max_err(const struct cli_ctx *ctx, const char *arg);

/* The largest file the directory template @l packs (its pack_max, 0 read
 * as NACRE_PACK_MAX_DEFAULT), or 0 when it does not pack. */
uint32_t cli_template_pack_max(const struct nacre_layout *l);

/* Turns packing on in the directory template @l, with @pack_max (0: the
 * template's own, or the default when it had none), or off (@on false),
 * pack_max cleared too.  The rest of the template is untouched. */
void cli_template_set_pack(struct nacre_layout *l, bool on, uint32_t pack_max);

/* No --inline-max given: a directory keeps its own. */
#define CLI_INLINE_KEEP UINT32_MAX

/* A directory template's inline limit: 0 when it keeps no file inline
 * (as NACRE_LAYOUT_INLINE without NACRE_LAYOUT_PACK keeps none). */
uint32_t cli_template_inline_max(const struct nacre_layout *l);
/* Sets the inline limit of the template @l (0: none; CLI_INLINE_KEEP: its
 * own), cleared where the template does not pack. */
void cli_template_set_inline(struct nacre_layout *l, uint32_t inline_max);

/*
 * Turns packing on for the new files of directory @dir as `nacre setstripe
 * --pack [--pack-max SIZE] [--inline-max SIZE]` does (@pack_max 0 and
 * @inline_max CLI_INLINE_KEEP: keep the directory's own), leaving the rest
 * of its template as it is; nothing is sent when packing is already on
 * with those limits.  *@eff and *@eff_inline receive the pack_max and
 * inline_max (0: none) the MDS now holds.  0, a libnacre error, or
 * -EOPNOTSUPP when the MDS did not keep packing on (it predates packing)
 * or the inline limit asked for.
 */
int cli_dir_pack_on(struct nacre_fs *fs, const struct nacre_fid *dir,
		    uint32_t pack_max, uint32_t inline_max, uint32_t *eff,
		    uint32_t *eff_inline);

/* ---- cli_util.c: JSON ---- */

#define CLI_JSON_DEPTH 16

/*
 * A streaming JSON writer producing one line per document.  Nesting deeper
 * than CLI_JSON_DEPTH is a programming error in the CLI, never data
 * dependent, so it is ignored rather than checked at every call.
 */
struct cli_json {
	FILE *js_out;
	int js_depth;
	bool js_first[CLI_JSON_DEPTH];
	bool js_after_key;
};

void cli_json_init(struct cli_json *js, FILE *out);
void cli_json_obj_begin(struct cli_json *js);
void cli_json_obj_end(struct cli_json *js);
void cli_json_arr_begin(struct cli_json *js);
void cli_json_arr_end(struct cli_json *js);
void cli_json_key(struct cli_json *js, const char *key);
void cli_json_str(struct cli_json *js, const char *s);
void cli_json_u64(struct cli_json *js, uint64_t v);
void cli_json_i64(struct cli_json *js, int64_t v);
void cli_json_bool(struct cli_json *js, bool v);
void cli_json_null(struct cli_json *js);
/* The shortest decimal that reads back as @v ("0.9", "1.0", "2.5e-07");
 * null for a NaN or an infinity, which JSON has no number for. */
void cli_json_double(struct cli_json *js, double v);
/* Ends a top-level document with a newline. */
void cli_json_end(struct cli_json *js);

/* key + value in one call. */
void cli_json_kv_str(struct cli_json *js, const char *key, const char *s);
void cli_json_kv_u64(struct cli_json *js, const char *key, uint64_t v);
void cli_json_kv_i64(struct cli_json *js, const char *key, int64_t v);
void cli_json_kv_double(struct cli_json *js, const char *key, double v);

/* Writes @s as a JSON string literal (quotes included) to @out. */
void cli_json_write_string(FILE *out, const char *s);

/* ---- cli_util.c: finding filesystems ---- */

/*
 * What the virtual xattrs of a mounted nacre inode say about it.
 */
struct cli_fsid {
	char fi_mds[NACRE_ADDR_MAX + 1];
	char fi_fsname[NACRE_FSNAME_MAX + 1];
	struct nacre_fid fi_fid;
};

/*
 * Reads the nacre.mds, nacre.fsname and nacre.fid xattrs of @path (through
 * a mount).  0; -ENOENT (and other -errno) from the lookup; -EOPNOTSUPP
 * when @path is not on a nacre filesystem; -EINVAL for an unparsable FID.
 */
int cli_path_probe(const char *path, struct cli_fsid *id);

/*
 * A connection to @mds/@fsname, opened on first use and kept in @ctx until
 * cli_ctx_fini().  0 or a libnacre error.
 */
int cli_connect(struct cli_ctx *ctx, const char *mds, const char *fsname,
		struct nacre_fs **fs);
/* Describes a cli_connect() failure; a key error names the key file.
 * @note The string lives in @ctx until the next call. */
const char *cli_connect_strerror(struct cli_ctx *ctx, const char *fsname, int rc);
/* Closes every connection. */
void cli_ctx_fini(struct cli_ctx *ctx);

/*
 * Finds @path: through its mount (xattrs), or inside the --mds filesystem.
 * Reports failures itself ("nacre CMD: PATH: ...") and returns
 * CLI_EXIT_RUNTIME; 0 when @t is filled.
 */
int cli_target_open(struct cli_ctx *ctx, const char *path,
		    struct cli_target *t);

/*
 * The filesystem of the --mds option as a target (its root), for commands
 * run without a PATH.  Reports failures; 0 or CLI_EXIT_RUNTIME.
 */
int cli_target_open_mds(struct cli_ctx *ctx, struct cli_target *t);

/*
 * Every nacre filesystem mounted in this namespace, read from @mounts_file
 * (normally "/proc/self/mounts"): FUSE mounts whose root answers the nacre
 * xattrs.  @mounts receives up to @max mount points (PATH_MAX each).
 * Returns the count, or -errno when the table cannot be read.
 */
int cli_mounts_find(const char *mounts_file, char (*mounts)[PATH_MAX],
		    int max);

/*
 * The filesystems a df-like command without a PATH looks at: that of @path
 * when given, else that of --mds, else every nacre mount.  @out receives a
 * malloc'd array of *@n targets (free() it).  Targets that cannot be opened
 * are reported and skipped.  Returns 0, or CLI_EXIT_RUNTIME when something
 * failed (*@n may still be non-zero) or nothing was found ("no nacre
 * filesystem mounted").
 */
int cli_targets_collect(struct cli_ctx *ctx, const char *path,
			struct cli_target **out, int *n);

/*
 * Runs @fn on each filesystem cli_targets_collect() finds for @path: with
 * --json one object, or an array of them when there are several (@many);
 * text reports are separated by a blank line.  Returns the exit status.
 */
typedef int (*cli_target_fn)(struct cli_ctx *ctx, struct cli_target *t,
			     struct cli_json *js, bool many, void *arg);
int cli_targets_report(struct cli_ctx *ctx, const char *path, cli_target_fn fn,
		       void *arg);

/* ---- cli_walk.c: walking a subtree through libnacre ---- */

/* One entry met by cli_walk(). */
struct cli_walk_ent {
	const char *we_path;           /* the PATH given, then "/" and names */
	const char *we_name;           /* its last component */
	struct nacre_stat we_st;       /* not following symbolic links */
};

/* Called on every entry; returns non-zero when it reported an error. */
typedef int (*cli_walk_fn)(struct cli_ctx *ctx, struct nacre_fs *fs,
			   const struct cli_walk_ent *e, void *arg);

/*
 * Calls @fn on the target @t (named @path) and, when it is a directory, on
 * every entry below, each directory before what it holds; symbolic links
 * are not followed.  Errors on a subtree are reported and the walk goes on.
 * Returns how many errors were reported (by the walk and by @fn).
 */
unsigned long cli_walk(struct cli_ctx *ctx, struct cli_target *t, const char *path,
		       cli_walk_fn fn, void *arg);

/* "K+M" (K 1 to 16, M 0 to 4) or "none" (k 1, m 0: plain striping).
 * 0 or -EINVAL. */
int cli_parse_ec(const char *arg, uint32_t *k, uint32_t *m);
/*
 * The one filesystem a change applies to: that of @path, of --mds, or the
 * only nacre mount (a usage error when several are mounted).  Reports
 * failures; 0 when @t is filled, else the exit status.
 */
int cli_target_one(struct cli_ctx *ctx, const char *path, struct cli_target *t);

/* An OST index, 0 to NACRE_MAX_OSTS - 1: 0, or CLI_EXIT_USAGE (reported). */
int cli_parse_ost_index(const struct cli_ctx *ctx, const char *s, uint32_t *idx);

/* The mount point in @mounts_file holding @path (longest prefix of its
 * real path); @path itself when none matches. */
void cli_mount_of(const char *mounts_file, const char *path, char *out,
		  size_t len);

#endif
