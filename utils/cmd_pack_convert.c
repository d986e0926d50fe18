/* SPDX-License-Identifier: MIT */
/*
 * nacre pack [convert] [--pack-max SIZE] [--inline-max SIZE] [-v] PATH...
 *
 * moves existing small files into packs in place (nacre_pack_file()): each
 * regular file PATH, and every regular file below each directory PATH,
 * whose directories are made to pack their new files as well (as
 * `setstripe --pack`); with --inline-max, or in directories whose template
 * keeps files inline, the smallest become inline files instead.  The tree is walked by FID (nacre_readdir_fid()),
 * with or without a mount, never following symbolic links, with a stack of
 * directories still to visit rather than recursion, so that depth costs
 * heap, not C stack.  `nacre pack DIR` is `nacre pack convert DIR`
 * (cmd_pack.c dispatches).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* Entries asked for per nacre_readdir_fid() call. */
#define PACK_READDIR_BATCH 128

enum {
	PACK_OPT_VERBOSE = 'v',
	PACK_OPT_PACK_MAX = 0x200,
	PACK_OPT_INLINE_MAX,
};

/* What became of one file; the order of conv_result_names[]. */
enum conv_result {
	CONV_PACKED,            /* moved into a pack now */
	CONV_INLINE,            /* made inline now */
	CONV_ALREADY,           /* packed before */
	CONV_TOO_LARGE,         /* larger than the limit: left as it is */
	CONV_BUSY,              /* changed while it was read: left as it is */
	CONV_ERROR,
	CONV_NRESULTS,
};

/* The JSON keys and values, and the words of the text report. */
static const char *const conv_result_names[CONV_NRESULTS] = {
	"packed", "inline", "already_packed", "too_large", "busy", "errors",
};
static const char *const conv_result_words[CONV_NRESULTS] = {
	"packed", "inline", "already packed", "too large", "busy", "error",
};

/* One run of pack convert over all its PATHs. */
struct conv_run {
	struct cli_ctx *cr_ctx;
	bool cr_verbose;
	uint32_t cr_pack_max;           /* --pack-max; 0 when not given */
	uint32_t cr_inline_max;         /* --inline-max; CLI_INLINE_KEEP when not */
	uint64_t cr_count[CONV_NRESULTS];
	uint64_t cr_dirs;               /* directories that now pack */
	unsigned int cr_opened;         /* PATHs found */
	struct cli_json cr_js;          /* --json; with -v "files" is open */
};

/* A directory still to visit, with the path it is reported by. */
struct conv_dir {
	char *cd_path;
	struct nacre_fid cd_fid;
};

struct conv_stack {
	struct conv_dir *cs_v;
	size_t cs_n, cs_cap;
};

/* A file left unpacked as too large: its size and the limit. */
struct conv_size {
	uint64_t cs_size;
	uint32_t cs_limit;
};

/* -v's line, or JSON object, for @path. */
static void conv_tell(struct conv_run *cr, const char *path,
		      enum conv_result res, const char *why,
		      const struct conv_size *sz)
{
	struct cli_json *js = &cr->cr_js;

	if (!cr->cr_ctx->cx_json) {
		printf("%s: %s", path, conv_result_words[res]);
		if (sz)
			printf(" (%" PRIu64 " bytes, pack_max %" PRIu32 ")",
			       sz->cs_size, sz->cs_limit);
		putchar('\n');
		return;
	}
	cli_json_obj_begin(js);
	cli_json_kv_str(js, "path", path);
	cli_json_kv_str(js, "result", res == CONV_ERROR ? "error" :
			conv_result_names[res]);
	if (why)
		cli_json_kv_str(js, "error", why);
	if (sz) {
		cli_json_kv_u64(js, "size", sz->cs_size);
		cli_json_kv_u64(js, "pack_max", sz->cs_limit);
	}
	cli_json_obj_end(js);
}

/* Counts what became of @path; -v tells it, and a failure goes to stderr
 * with @why. */
static void conv_note(struct conv_run *cr, const char *path,
		      enum conv_result res, const char *why,
		      const struct conv_size *sz)
{
	cr->cr_count[res]++;
	if (why)
		cli_err(cr->cr_ctx, "%s: %s", path, why);
	if (cr->cr_verbose)
		conv_tell(cr, path, res, why, sz);
}

/* A directory that could not be walked or made to pack: an error, though
 * not of a file. */
static void conv_dir_fail(struct conv_run *cr, const char *path,
			  const char *why)
{
	cli_err(cr->cr_ctx, "%s: %s", path, why);
	cr->cr_count[CONV_ERROR]++;
}

/* Whether @fid, which a failing call reported missing, is really gone
 * (removed since it was listed: nothing to do). */
static bool conv_is_gone(struct nacre_fs *fs, const struct nacre_fid *fid)
{
	struct nacre_stat st;

	return nacre_getattr(fs, fid, &st) == -ENOENT;
}

/* -v shows the size of a file left as too large: one request more, for
 * those files only. */
static void conv_too_large(struct conv_run *cr, struct nacre_fs *fs,
			   const struct nacre_fid *fid, const char *path,
			   uint32_t pack_max)
{
	struct conv_size sz = {
		.cs_limit = pack_max ? pack_max : NACRE_PACK_MAX_DEFAULT,
	};
	struct nacre_stat st;

	if (cr->cr_verbose && !nacre_getattr(fs, fid, &st)) {
		sz.cs_size = st.size;
		conv_note(cr, path, CONV_TOO_LARGE, NULL, &sz);
	} else {
		conv_note(cr, path, CONV_TOO_LARGE, NULL, NULL);
	}
}

/* Counts and tells what nacre_pack_files_inline() answered for @fid; with
 * @inline_max, a file moved is asked whether it went inline. */
static void conv_outcome(struct conv_run *cr, struct nacre_fs *fs,
			 const struct nacre_fid *fid, const char *path,
			 uint32_t pack_max, uint32_t inline_max, int rc)
{
	struct nacre_layout l;

	if (rc == -ENOENT && conv_is_gone(fs, fid))
		return;
	if (rc == 0 && inline_max && !nacre_getlayout_fid(fs, fid, &l) &&
	    (l.flags & NACRE_LAYOUT_INLINE))
		conv_note(cr, path, CONV_INLINE, NULL, NULL);
	else if (rc == 0)
		conv_note(cr, path, CONV_PACKED, NULL, NULL);
	else if (rc == -EFBIG)
		conv_too_large(cr, fs, fid, path, pack_max);
	else if (rc == -EBUSY)
		conv_note(cr, path, CONV_BUSY,
			  "changed while it was read, left unpacked (run again)",
			  NULL);
	else
		conv_note(cr, path, CONV_ERROR, nacre_strerror(rc), NULL);
}

/*
 * Moves the regular files @fids[0..n) (named @paths) into packs when at
 * most @pack_max bytes (0: the library's default), inline when at most
 * @inline_max, in one nacre_pack_files_inline() call: their bytes are
 * written and committed a pack buffer at a time, not a file at a time.
 */
static void conv_files(struct conv_run *cr, struct nacre_fs *fs,
		       const struct nacre_fid *fids, char *const *paths, size_t n,
		       uint32_t pack_max, uint32_t inline_max)
{
	struct nacre_fid *todo = calloc(n ? n : 1, sizeof(*todo));
	size_t *idx = calloc(n ? n : 1, sizeof(*idx));
	int *res = calloc(n ? n : 1, sizeof(*res));
	size_t m = 0;
	int rc;

	if (!todo || !idx || !res) {
		for (size_t i = 0; i < n; i++)
			conv_note(cr, paths[i], CONV_ERROR, strerror(ENOMEM), NULL);
		goto out_free;
	}
	for (size_t i = 0; i < n; i++) {
		struct nacre_layout l;

		/* The library answers 0 for both moved and already packed; the
		 * layout tells them apart. */
		rc = nacre_getlayout_fid(fs, &fids[i], &l);
		if (!rc && (l.flags & (NACRE_LAYOUT_PACKED | NACRE_LAYOUT_INLINE))) {
			conv_note(cr, paths[i], CONV_ALREADY, NULL, NULL);
			continue;
		}
		if (rc) {
			conv_outcome(cr, fs, &fids[i], paths[i], pack_max, 0, rc);
			continue;
		}
		todo[m] = fids[i];
		idx[m++] = i;
	}
	rc = m ? nacre_pack_files_inline(fs, todo, m, pack_max, inline_max, res) : 0;
	for (size_t j = 0; j < m; j++)
		conv_outcome(cr, fs, &todo[j], paths[idx[j]], pack_max, inline_max,
			     rc ? rc : res[j]);
out_free:
	free(todo);
	free(idx);
	free(res);
}

/* ---- pack convert: the walk ---- */

/* "@dir/@name", malloc'd; NULL when out of memory. */
static char *conv_join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	bool slash = dl && dir[dl - 1] == '/';
	char *p = malloc(dl + nl + 2);

	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	if (!slash)
		p[dl++] = '/';
	memcpy(p + dl, name, nl + 1);
	return p;
}

/* Pushes the directory @fid, the stack taking @path (malloc'd) over;
 * false when out of memory, @path still the caller's. */
static bool conv_push(struct conv_stack *st, char *path,
		      const struct nacre_fid *fid)
{
	struct conv_dir *v;
	size_t cap;

	if (st->cs_n == st->cs_cap) {
		cap = st->cs_cap ? st->cs_cap * 2 : 16;
		v = realloc(st->cs_v, cap * sizeof(*v));
		if (!v)
			return false;
		st->cs_v = v;
		st->cs_cap = cap;
	}
	st->cs_v[st->cs_n].cd_path = path;
	st->cs_v[st->cs_n].cd_fid = *fid;
	st->cs_n++;
	return true;
}

/* The subdirectories pushed since @from are visited in listing order. */
static void conv_reverse(struct conv_stack *st, size_t from)
{
	size_t i = from, j = st->cs_n;
	struct conv_dir t;

	while (j > i + 1) {
		j--;
		t = st->cs_v[i];
		st->cs_v[i] = st->cs_v[j];
		st->cs_v[j] = t;
		i++;
	}
}

static void conv_stack_free(struct conv_stack *st)
{
	size_t i;

	for (i = 0; i < st->cs_n; i++)
		free(st->cs_v[i].cd_path);
	free(st->cs_v);
}

/* One batch of directory entries: files converted, subdirectories
 * pushed. */
static void conv_entries(struct conv_run *cr, struct nacre_fs *fs,
			 const char *dir, const struct nacre_dirent *ents,
			 int n, uint32_t pack_max, uint32_t inline_max,
			 struct conv_stack *st)
{
	struct nacre_fid fids[PACK_READDIR_BATCH];
	char *paths[PACK_READDIR_BATCH];
	size_t nf = 0;
	char *path;
	int i;

	for (i = 0; i < n && i < PACK_READDIR_BATCH; i++) {
		/* An open unlinked file goes with its last close. */
		if (!strncmp(ents[i].name, CLI_HIDDEN_PREFIX,
			     sizeof(CLI_HIDDEN_PREFIX) - 1))
			continue;
		if (!S_ISDIR(ents[i].type) && !S_ISREG(ents[i].type))
			continue;
		path = conv_join(dir, ents[i].name);
		if (!path) {
			conv_dir_fail(cr, dir, strerror(ENOMEM));
			continue;
		}
		if (S_ISREG(ents[i].type)) {
			fids[nf] = ents[i].fid;
			paths[nf++] = path;
			continue;
		}
		if (!conv_push(st, path, &ents[i].fid)) {
			conv_dir_fail(cr, path, strerror(ENOMEM));
			free(path);
		}
	}
	/* The files of this batch of entries move together. */
	conv_files(cr, fs, fids, paths, nf, pack_max, inline_max);
	while (nf > 0)
		free(paths[--nf]);
}

/*
 * Makes the directory @d pack its new files, then converts its files and
 * pushes its subdirectories onto @st.  Its files are converted with the
 * limit the directory now has, which is --pack-max when given.
 */
static void conv_dir(struct conv_run *cr, struct nacre_fs *fs,
		     const struct conv_dir *d, struct nacre_dirent *ents,
		     struct conv_stack *st)
{
	uint32_t pack_max = cr->cr_pack_max, inline_max = 0;
	size_t from = st->cs_n;
	uint64_t cookie = 0;
	bool eof = false;
	int n, rc;

	rc = cli_dir_pack_on(fs, &d->cd_fid, cr->cr_pack_max, cr->cr_inline_max, &pack_max,
			     &inline_max);
	if (rc == -ENOENT && conv_is_gone(fs, &d->cd_fid))
		return;
	if (rc == -EOPNOTSUPP)
		conv_dir_fail(cr, d->cd_path,
			      "the MDS did not keep packing on (it may predate packing)");
	else if (rc)
		conv_dir_fail(cr, d->cd_path, nacre_strerror(rc));
	else
		cr->cr_dirs++;
	while (!eof) {
		n = nacre_readdir_fid(fs, NULL, &d->cd_fid, cookie, ents,
				      PACK_READDIR_BATCH, &eof);
		if (n < 0) {
			if (n != -ENOENT || !conv_is_gone(fs, &d->cd_fid))
				conv_dir_fail(cr, d->cd_path, nacre_strerror(n));
			break;
		}
		conv_entries(cr, fs, d->cd_path, ents, n, pack_max, inline_max, st);
		if (n == 0)
			break;
		cookie = ents[n - 1].cookie;
	}
	conv_reverse(st, from);
}

/* Converts the tree below the directory @fid, reported as @path. */
static void conv_tree(struct conv_run *cr, struct nacre_fs *fs,
		      const struct nacre_fid *fid, const char *path)
{
	struct conv_stack st = { 0 };
	struct nacre_dirent *ents;
	struct conv_dir d;
	char *top;

	ents = calloc(PACK_READDIR_BATCH, sizeof(*ents));
	top = strdup(path);
	if (!ents || !top || !conv_push(&st, top, fid)) {
		free(top);
		conv_dir_fail(cr, path, strerror(ENOMEM));
		goto out_free;
	}
	while (st.cs_n > 0) {
		d = st.cs_v[--st.cs_n];
		conv_dir(cr, fs, &d, ents, &st);
		free(d.cd_path);
	}
out_free:
	conv_stack_free(&st);
	free(ents);
}

/* Converts what PATH names. */
static void conv_path(struct conv_run *cr, const char *path)
{
	struct cli_target t;

	if (cli_target_open(cr->cr_ctx, path, &t)) {
		cr->cr_count[CONV_ERROR]++;
		return;
	}
	cr->cr_opened++;
	if (S_ISREG(t.tg_st.mode)) {
		char *name = (char *)path;      /* only read */

		conv_files(cr, t.tg_fs, &t.tg_fid, &name, 1, cr->cr_pack_max,
			   cr->cr_inline_max == CLI_INLINE_KEEP ? 0 : cr->cr_inline_max);
	}
	else if (S_ISDIR(t.tg_st.mode))
		conv_tree(cr, t.tg_fs, &t.tg_fid, path);
	else
		conv_note(cr, path, CONV_ERROR, "not a regular file or directory",
			  NULL);
}

/* ---- pack convert: the command ---- */

/* "NAME:" and @v, the values lined up as in pack stats. */
static void conv_print_count(const char *name, uint64_t v)
{
	char label[32];

	snprintf(label, sizeof(label), "%s:", name);
	printf("%-16s%" PRIu64 "\n", label, v);
}

static void conv_summary(struct conv_run *cr)
{
	struct cli_json *js = &cr->cr_js;
	int i;

	if (!cr->cr_ctx->cx_json) {
		for (i = 0; i < CONV_NRESULTS; i++)
			conv_print_count(conv_result_names[i], cr->cr_count[i]);
		conv_print_count("directories", cr->cr_dirs);
		return;
	}
	if (cr->cr_verbose)
		cli_json_arr_end(js);
	for (i = 0; i < CONV_NRESULTS; i++)
		cli_json_kv_u64(js, conv_result_names[i], cr->cr_count[i]);
	cli_json_kv_u64(js, "directories", cr->cr_dirs);
	cli_json_obj_end(js);
	cli_json_end(js);
}

int cmd_pack_convert(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "verbose", no_argument, NULL, PACK_OPT_VERBOSE },
		{ "pack-max", required_argument, NULL, PACK_OPT_PACK_MAX },
		{ "inline-max", required_argument, NULL, PACK_OPT_INLINE_MAX },
		{ NULL, 0, NULL, 0 },
	};
	struct conv_run cr;
	int c, i, rc;

	memset(&cr, 0, sizeof(cr));
	cr.cr_ctx = ctx;
	cr.cr_inline_max = CLI_INLINE_KEEP;
	while ((c = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
		if (c == PACK_OPT_VERBOSE) {
			cr.cr_verbose = true;
			continue;
		}
		if (c == PACK_OPT_PACK_MAX) {
			if (cli_parse_pack_max(optarg, &cr.cr_pack_max))
				return cli_pack_max_err(ctx, optarg);
			continue;
		}
		if (c == PACK_OPT_INLINE_MAX) {
			if (cli_parse_inline_max(optarg, &cr.cr_inline_max))
				return cli_inline_max_err(ctx, optarg);
			continue;
		}
		rc = cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c, argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	if (optind >= argc)
		return cli_usage_err(ctx, "missing PATH");
	if (ctx->cx_json) {
		cli_json_init(&cr.cr_js, stdout);
		cli_json_obj_begin(&cr.cr_js);
		if (cr.cr_verbose) {
			cli_json_key(&cr.cr_js, "files");
			cli_json_arr_begin(&cr.cr_js);
		}
	}
	for (i = optind; i < argc; i++)
		conv_path(&cr, argv[i]);
	/* With nothing found the errors said it all, except to a script
	 * that reads one JSON document whatever happens. */
	if (cr.cr_opened || ctx->cx_json)
		conv_summary(&cr);
	/* Too large is a file packing leaves alone, not a failure. */
	if (cr.cr_count[CONV_BUSY] || cr.cr_count[CONV_ERROR])
		return CLI_EXIT_RUNTIME;
	return CLI_EXIT_OK;
}
