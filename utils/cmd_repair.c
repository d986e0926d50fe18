/* SPDX-License-Identifier: MIT */
/*
 * nacre rebuild [--ost INDEX] [PATH...] and nacre scrub [PATH...]: walk the
 * regular files under each PATH and repair them through libnacre, rebuild
 * regenerating stale shards (and with --ost every shard on a replaced
 * OST), scrub verifying every chunk's checksum and rewriting the corrupt
 * ones from the rest of their row.  A packed file is repaired as its pack,
 * each pack once per run.
 *
 * Through a mount the tree is walked with readdir and lstat, each file's
 * FID read from its nacre.fid xattr; with --mds it is walked with
 * nacre_readdir_fid().  Either way symbolic links are never followed, the
 * ".nacre-hidden-" names of open unlinked files are skipped (their
 * visible name, if any, is repaired instead), and through a mount the walk
 * stays on the filesystem it started on.
 *
 * A directory's subdirectories are visited after its listing is closed, so
 * the walk holds one directory stream at a time however deep the tree.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Entries asked for per nacre_readdir_fid() call. */
#define REPAIR_READDIR_BATCH 128
/* The progress line is redrawn at most this often. */
#define REPAIR_DRAW_NS 100000000L

/* One run of rebuild or scrub over all its PATHs. */
struct repair_run {
	struct cli_ctx *rr_ctx;
	bool rr_scrub;
	uint32_t rr_ost;                /* rebuild --ost, or NACRE_OST_ANY */
	bool rr_tty;                    /* stderr shows a progress line */
	bool rr_counting;               /* the pre-pass that counts files */
	bool rr_line_shown;
	struct timespec rr_drawn;       /* when the line was last drawn */
	uint64_t rr_total;              /* files found by the pre-pass */
	uint64_t rr_files;              /* files repaired or checked */
	uint64_t rr_errors;
	uint64_t rr_unrepaired;         /* scrub: chunks left corrupt */
	uint64_t rr_cur_rows;           /* rows done in the current file */
	struct nacre_repair_stats rr_sum;
	struct cli_json rr_js;          /* --json, scrub's file list open */
	struct repair_pack *rr_packs;   /* packs repaired: a hash set */
	size_t rr_npacks, rr_packs_cap;
};

/* A pack repaired in this run: its files are repaired with it. */
struct repair_pack {
	const struct nacre_fs *rp_fs;   /* NULL: a free slot */
	uint64_t rp_id;
};

/* A subdirectory to visit once its parent's listing is closed. */
struct repair_sub {
	char *rs_name;
	struct nacre_fid rs_fid;        /* --mds walks only */
};

struct repair_subs {
	struct repair_sub *rs_v;
	size_t rs_n, rs_cap;
};

/* ---- progress and messages ---- */

static bool repair_draw_due(struct repair_run *rr)
{
	struct timespec now;
	long ns;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (now.tv_sec - rr->rr_drawn.tv_sec) * 1000000000L +
	     (now.tv_nsec - rr->rr_drawn.tv_nsec);
	if (rr->rr_line_shown && ns >= 0 && ns < REPAIR_DRAW_NS)
		return false;
	rr->rr_drawn = now;
	return true;
}

/* Redraws the one progress line on a terminal, at a bounded rate unless
 * @force. */
static void repair_draw(struct repair_run *rr, bool force)
{
	uint64_t rows = rr->rr_sum.rows + rr->rr_cur_rows;

	if (!rr->rr_tty || rr->rr_counting)
		return;
	if (!repair_draw_due(rr) && !force)
		return;
	if (rr->rr_scrub)
		fprintf(stderr, "\rscrub: %" PRIu64 "/%" PRIu64 " files, %" PRIu64
			" rows, %" PRIu64 " corrupt chunks found\033[K",
			rr->rr_files, rr->rr_total, rows, rr->rr_sum.chunks_bad);
	else
		fprintf(stderr, "\rrebuild: %" PRIu64 "/%" PRIu64 " files, %" PRIu64
			" rows, %" PRIu64 " chunks rebuilt\033[K",
			rr->rr_files, rr->rr_total, rows,
			rr->rr_sum.chunks_fixed);
	fflush(stderr);
	rr->rr_line_shown = true;
}

/* Takes the progress line away before a message or the summary. */
static void repair_undraw(struct repair_run *rr)
{
	if (!rr->rr_line_shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	rr->rr_line_shown = false;
}

static void repair_progress(uint64_t done, uint64_t total, void *arg)
{
	struct repair_run *rr = arg;

	rr->rr_cur_rows = done;
	repair_draw(rr, false);
}

/* Reports a failure about @path (one stderr line) and counts it. */
static void repair_fail(struct repair_run *rr, const char *path,
			const char *what)
{
	repair_undraw(rr);
	cli_err(rr->rr_ctx, "%s: %s", path, what);
	rr->rr_errors++;
}

/* ---- one file ---- */

/* Why a file could not be repaired, in words an administrator can act on:
 * "Transport endpoint is not connected" says less than which OST to look
 * at would, and `nacre osts` shows that.  The same errors as scrub's
 * passing over of an unreachable OST (libclient/repair.c). */
static const char *repair_strerror(int rc)
{
	switch (rc) {
	case -ENOTCONN:
	case -ECONNREFUSED:
	case -EHOSTDOWN:
	case -ETIMEDOUT:
	case -ECONNRESET:
		return "an OST it needs is down or does not answer (see nacre osts)";
	default:
		return nacre_strerror(rc);
	}
}

static void repair_sum(struct nacre_repair_stats *sum,
		       const struct nacre_repair_stats *st)
{
	sum->rows += st->rows;
	sum->chunks_bad += st->chunks_bad;
	sum->chunks_fixed += st->chunks_fixed;
	sum->shards_cleared += st->shards_cleared;
	sum->shards_unverified += st->shards_unverified;
}

/* scrub's report of a file with corrupt chunks; @pack: the pack repaired
 * for the packed file @path, or 0. */
static void repair_report_corrupt(struct repair_run *rr, const char *path, uint64_t pack,
				  const struct nacre_repair_stats *st)
{
	if (rr->rr_ctx->cx_json) {
		cli_json_obj_begin(&rr->rr_js);
		cli_json_kv_str(&rr->rr_js, "path", path);
		if (pack)
			cli_json_kv_u64(&rr->rr_js, "pack_id", pack);
		cli_json_kv_u64(&rr->rr_js, "chunks_bad", st->chunks_bad);
		cli_json_kv_u64(&rr->rr_js, "chunks_fixed", st->chunks_fixed);
		cli_json_obj_end(&rr->rr_js);
		return;
	}
	repair_undraw(rr);
	printf("%s", path);
	if (pack)
		printf(" (its pack %" PRIu64 ", every file in it)", pack);
	printf(": %" PRIu64 " corrupt chunks, %" PRIu64 " repaired\n", st->chunks_bad,
	       st->chunks_fixed);
}

static size_t repair_pack_slot(const struct repair_pack *v, size_t cap,
			       const struct nacre_fs *fs, uint64_t id)
{
	size_t i = (size_t)((id ^ (uintptr_t)fs) * 0x9e3779b97f4a7c15ull) & (cap - 1);

	while (v[i].rp_fs && (v[i].rp_fs != fs || v[i].rp_id != id))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Records pack @id of @fs as repaired; false when it already was (or
 * when memory ran out: then it is repaired again, which is harmless). */
static bool repair_pack_first(struct repair_run *rr, const struct nacre_fs *fs, uint64_t id)
{
	size_t i;

	if (2 * (rr->rr_npacks + 1) > rr->rr_packs_cap) {
		size_t cap = rr->rr_packs_cap ? 2 * rr->rr_packs_cap : 64;
		struct repair_pack *v = calloc(cap, sizeof(*v));

		if (!v)
			return true;
		for (size_t j = 0; j < rr->rr_packs_cap; j++)
			if (rr->rr_packs[j].rp_fs)
				v[repair_pack_slot(v, cap, rr->rr_packs[j].rp_fs,
						   rr->rr_packs[j].rp_id)] = rr->rr_packs[j];
		free(rr->rr_packs);
		rr->rr_packs = v;
		rr->rr_packs_cap = cap;
	}
	i = repair_pack_slot(rr->rr_packs, rr->rr_packs_cap, fs, id);
	if (rr->rr_packs[i].rp_fs)
		return false;
	rr->rr_packs[i] = (struct repair_pack){ .rp_fs = fs, .rp_id = id };
	rr->rr_npacks++;
	return true;
}

static void repair_file(struct repair_run *rr, struct nacre_fs *fs,
			const struct nacre_fid *fid, const char *path)
{
	struct nacre_repair_stats st;
	struct nacre_layout lay;
	struct nacre_stat nst;
	uint64_t pack = 0;
	int rc;

	if (rr->rr_counting) {
		rr->rr_total++;
		return;
	}
	/* A packed file is repaired with its pack, once per pack and run (a
	 * pack holds many files). */
	if (nacre_getlayout_fid(fs, fid, &lay) == 0 && (lay.flags & NACRE_LAYOUT_PACKED)) {
		pack = lay.pack_id;
		if (!repair_pack_first(rr, fs, pack)) {
			rr->rr_files++;
			repair_draw(rr, false);
			return;
		}
	}
	memset(&st, 0, sizeof(st));
	rr->rr_cur_rows = 0;
	if (rr->rr_scrub)
		rc = nacre_scrub_fid(fs, fid, repair_progress, rr, &st);
	else
		rc = nacre_rebuild_fid(fs, fid, rr->rr_ost, repair_progress, rr,
				       &st);
	/* A file removed since the listing needs no repair; any other
	 * "not found" (an object, say) is a failure to report. */
	if (rc == -ENOENT && nacre_getattr(fs, fid, &nst) == -ENOENT)
		return;
	rr->rr_cur_rows = 0;
	rr->rr_files++;
	repair_sum(&rr->rr_sum, &st);
	if (rr->rr_scrub && st.chunks_bad > 0)
		repair_report_corrupt(rr, path, pack, &st);
	if (rr->rr_scrub && st.chunks_bad > st.chunks_fixed)
		rr->rr_unrepaired += st.chunks_bad - st.chunks_fixed;
	if (rc)
		repair_fail(rr, path, repair_strerror(rc));
	repair_draw(rr, false);
}

/* ---- the walk ---- */

static int repair_subs_add(struct repair_subs *s, const char *name,
			   const struct nacre_fid *fid)
{
	struct repair_sub *v;
	size_t cap;

	if (s->rs_n == s->rs_cap) {
		cap = s->rs_cap ? s->rs_cap * 2 : 16;
		v = realloc(s->rs_v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->rs_v = v;
		s->rs_cap = cap;
	}
	s->rs_v[s->rs_n].rs_name = strdup(name);
	if (!s->rs_v[s->rs_n].rs_name)
		return -ENOMEM;
	if (fid)
		s->rs_v[s->rs_n].rs_fid = *fid;
	s->rs_n++;
	return 0;
}

static void repair_subs_free(struct repair_subs *s)
{
	size_t i;

	for (i = 0; i < s->rs_n; i++)
		free(s->rs_v[i].rs_name);
	free(s->rs_v);
	memset(s, 0, sizeof(*s));
}

static bool repair_name_skipped(const char *name)
{
	return !strcmp(name, ".") || !strcmp(name, "..") ||
	       !strncmp(name, CLI_HIDDEN_PREFIX,
			sizeof(CLI_HIDDEN_PREFIX) - 1);
}

/* @dir + "/" + @name into @buf; false (reported) when it does not fit. */
static bool repair_join(struct repair_run *rr, const char *dir,
			const char *name, char *buf, size_t len)
{
	size_t dl = strlen(dir);
	int n;

	/* The root of a walk inside --mds is "/": no doubled slash. */
	n = snprintf(buf, len, "%s%s%s", dir,
		     dl && dir[dl - 1] == '/' ? "" : "/", name);
	if (n < 0 || (size_t)n >= len) {
		repair_fail(rr, dir, "a name below is too long to walk");
		return false;
	}
	return true;
}

/* The FID of a file seen through the mount. */
static int repair_path_fid(const char *path, struct nacre_fid *fid)
{
	char buf[64];
	ssize_t n;

	n = getxattr(path, "nacre.fid", buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return nacre_fid_parse(buf, fid) ? -EINVAL : 0;
}

/* One entry of a mounted directory: files are repaired now, directories
 * kept in @subs for later. */
static void repair_mounted_entry(struct repair_run *rr, struct nacre_fs *fs,
				 dev_t dev, const char *path,
				 const char *name, struct repair_subs *subs)
{
	struct nacre_fid fid;
	struct stat st;
	int rc;

	if (lstat(path, &st)) {
		/* Gone since the listing: nothing to repair. */
		if (errno != ENOENT)
			repair_fail(rr, path, strerror(errno));
		return;
	}
	/* Another filesystem mounted inside is not ours to walk. */
	if (st.st_dev != dev)
		return;
	if (S_ISDIR(st.st_mode)) {
		if (repair_subs_add(subs, name, NULL))
			repair_fail(rr, path, strerror(ENOMEM));
		return;
	}
	if (!S_ISREG(st.st_mode))
		return;
	if (rr->rr_counting) {
		rr->rr_total++;
		return;
	}
	rc = repair_path_fid(path, &fid);
	if (rc == -ENOENT)
		return;
	if (rc) {
		repair_fail(rr, path, strerror(-rc));
		return;
	}
	repair_file(rr, fs, &fid, path);
}

/* Walks the directory @dir of a mount on device @dev. */
static void repair_walk_mounted(struct repair_run *rr, struct nacre_fs *fs,
				dev_t dev, const char *dir)
{
	struct repair_subs subs = { 0 };
	char path[PATH_MAX];
	struct dirent *de;
	size_t i;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			repair_fail(rr, dir, strerror(errno));
		return;
	}
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (!repair_name_skipped(de->d_name) &&
		    repair_join(rr, dir, de->d_name, path, sizeof(path)))
			repair_mounted_entry(rr, fs, dev, path, de->d_name,
					     &subs);
		errno = 0;
	}
	if (errno)
		repair_fail(rr, dir, strerror(errno));
	closedir(d);
	for (i = 0; i < subs.rs_n; i++)
		if (repair_join(rr, dir, subs.rs_v[i].rs_name, path,
				sizeof(path)))
			repair_walk_mounted(rr, fs, dev, path);
	repair_subs_free(&subs);
}

/* One batch of nacre_readdir_fid() entries of the --mds walk. */
static void repair_mds_entries(struct repair_run *rr, struct nacre_fs *fs,
			       const char *dir, const struct nacre_dirent *ents,
			       int n, struct repair_subs *subs)
{
	char path[PATH_MAX];
	int i;

	for (i = 0; i < n; i++) {
		if (repair_name_skipped(ents[i].name) ||
		    !repair_join(rr, dir, ents[i].name, path, sizeof(path)))
			continue;
		if (S_ISDIR(ents[i].type)) {
			if (repair_subs_add(subs, ents[i].name, &ents[i].fid))
				repair_fail(rr, path, strerror(ENOMEM));
		} else if (S_ISREG(ents[i].type)) {
			repair_file(rr, fs, &ents[i].fid, path);
		}
	}
}

/* Walks the directory @fid, named @dir, of the --mds filesystem. */
static void repair_walk_mds(struct repair_run *rr, struct nacre_fs *fs,
			    const struct nacre_fid *fid, const char *dir)
{
	struct repair_subs subs = { 0 };
	struct nacre_dirent *ents;
	char path[PATH_MAX];
	uint64_t cookie = 0;
	bool eof = false;
	size_t i;
	int n;

	ents = calloc(REPAIR_READDIR_BATCH, sizeof(*ents));
	if (!ents) {
		repair_fail(rr, dir, strerror(ENOMEM));
		return;
	}
	while (!eof) {
		n = nacre_readdir_fid(fs, NULL, fid, cookie, ents,
				      REPAIR_READDIR_BATCH, &eof);
		if (n < 0) {
			if (n != -ENOENT)
				repair_fail(rr, dir, nacre_strerror(n));
			break;
		}
		repair_mds_entries(rr, fs, dir, ents, n, &subs);
		if (n == 0)
			break;
		cookie = ents[n - 1].cookie;
	}
	free(ents);
	for (i = 0; i < subs.rs_n; i++)
		if (repair_join(rr, dir, subs.rs_v[i].rs_name, path,
				sizeof(path)))
			repair_walk_mds(rr, fs, &subs.rs_v[i].rs_fid, path);
	repair_subs_free(&subs);
}

/* ---- the PATHs ---- */

/* With --ost, an index the filesystem does not have is a typo, not a
 * request to do nothing. */
static int repair_check_ost(struct repair_run *rr, struct nacre_fs *fs,
			    const char *path)
{
	struct nacre_ost *osts;
	unsigned int i, n;
	bool found = false;
	int rc;

	if (rr->rr_scrub || rr->rr_ost == NACRE_OST_ANY)
		return 0;
	rc = nacre_ost_list(fs, &osts, &n);
	if (rc) {
		repair_fail(rr, path, nacre_strerror(rc));
		return rc;
	}
	for (i = 0; i < n; i++)
		if (osts[i].index == rr->rr_ost)
			found = true;
	free(osts);
	if (found)
		return 0;
	repair_undraw(rr);
	cli_err(rr->rr_ctx, "%s: the filesystem has no OST %" PRIu32, path,
		rr->rr_ost);
	rr->rr_errors++;
	return -ENOENT;
}

/* Repairs what @t (found as @path) holds. */
static void repair_target(struct repair_run *rr, const char *path,
			  const struct cli_target *t)
{
	struct stat st;

	if (S_ISREG(t->tg_st.mode)) {
		repair_file(rr, t->tg_fs, &t->tg_fid, path);
		return;
	}
	if (!S_ISDIR(t->tg_st.mode))
		return;
	if (rr->rr_ctx->cx_mds) {
		repair_walk_mds(rr, t->tg_fs, &t->tg_fid, path);
		return;
	}
	if (lstat(path, &st)) {
		repair_fail(rr, path, strerror(errno));
		return;
	}
	repair_walk_mounted(rr, t->tg_fs, st.st_dev, path);
}

/* ---- the commands ---- */

static void repair_summary(struct repair_run *rr)
{
	struct cli_json *js = &rr->rr_js;
	const struct nacre_repair_stats *s = &rr->rr_sum;

	repair_undraw(rr);
	if (!rr->rr_ctx->cx_json) {
		if (rr->rr_scrub) {
			printf("scrubbed %" PRIu64 " files: %" PRIu64
			       " corrupt chunks found, %" PRIu64 " repaired",
			       rr->rr_files, s->chunks_bad, s->chunks_fixed);
			if (s->shards_unverified)
				printf("; %" PRIu64 " shards not verified (their OST did "
				       "not answer)", s->shards_unverified);
			printf("\n");
		} else
			printf("rebuilt %" PRIu64 " chunks in %" PRIu64
			       " files (%" PRIu64 " stale marks cleared)\n",
			       s->chunks_fixed, rr->rr_files,
			       s->shards_cleared);
		return;
	}
	if (rr->rr_scrub)
		cli_json_arr_end(js);
	cli_json_kv_u64(js, "files", rr->rr_files);
	cli_json_kv_u64(js, "rows", s->rows);
	cli_json_kv_u64(js, "chunks_bad", s->chunks_bad);
	cli_json_kv_u64(js, "chunks_fixed", s->chunks_fixed);
	cli_json_kv_u64(js, "shards_cleared", s->shards_cleared);
	if (rr->rr_scrub) {
		cli_json_kv_u64(js, "unrepaired", rr->rr_unrepaired);
		cli_json_kv_u64(js, "unverified", s->shards_unverified);
	}
	cli_json_kv_u64(js, "errors", rr->rr_errors);
	cli_json_obj_end(js);
	cli_json_end(js);
}

/* Where target @i of a run was named: its PATH, its mount, or "/" inside
 * --mds. */
static const char *repair_target_name(char **paths, int npaths,
				      const struct cli_target *t, int i)
{
	if (npaths)
		return paths[i];
	return t[i].tg_mount[0] ? t[i].tg_mount : "/";
}

/* One pass over every opened target: counting the files, or repairing
 * them. */
static void repair_pass(struct repair_run *rr, char **paths, int npaths,
			const struct cli_target *t, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (t[i].tg_fs)
			repair_target(rr, repair_target_name(paths, npaths, t, i),
				      &t[i]);
}

/*
 * Opens every PATH, or the default targets.  @out receives *@n targets
 * (free() it); one that failed to open, already reported, has no tg_fs and
 * is skipped, so PATHs and targets stay paired.  Returns how many opened.
 */
static int repair_open_targets(struct repair_run *rr, char **paths,
			       int npaths, struct cli_target **out, int *n)
{
	struct cli_target *t;
	int i, opened = 0;

	*out = NULL;
	*n = 0;
	if (npaths == 0) {
		if (cli_targets_collect(rr->rr_ctx, NULL, out, n))
			rr->rr_errors++;
	} else {
		t = calloc((size_t)npaths, sizeof(*t));
		if (!t) {
			cli_err(rr->rr_ctx, "%s", strerror(ENOMEM));
			rr->rr_errors++;
			return 0;
		}
		for (i = 0; i < npaths; i++) {
			if (cli_target_open(rr->rr_ctx, paths[i], &t[i])) {
				rr->rr_errors++;
				t[i].tg_fs = NULL;
			}
		}
		*out = t;
		*n = npaths;
	}
	for (i = 0; i < *n; i++) {
		if (!(*out)[i].tg_fs)
			continue;
		if (repair_check_ost(rr, (*out)[i].tg_fs,
				     repair_target_name(paths, npaths, *out, i)))
			(*out)[i].tg_fs = NULL;
		else
			opened++;
	}
	return opened;
}

static int repair_run_all(struct repair_run *rr, char **paths, int npaths)
{
	struct cli_target *t;
	int n, opened;

	opened = repair_open_targets(rr, paths, npaths, &t, &n);
	if (rr->rr_ctx->cx_json) {
		cli_json_init(&rr->rr_js, stdout);
		cli_json_obj_begin(&rr->rr_js);
		if (rr->rr_scrub) {
			cli_json_key(&rr->rr_js, "corrupt");
			cli_json_arr_begin(&rr->rr_js);
		}
	}
	/* "N/M files" needs M: on a terminal a listing-only pass first. */
	if (rr->rr_tty && opened) {
		rr->rr_counting = true;
		repair_pass(rr, paths, npaths, t, n);
		rr->rr_counting = false;
		repair_draw(rr, true);
	}
	if (opened)
		repair_pass(rr, paths, npaths, t, n);
	/* With nothing to walk the errors said it all, except to a script
	 * that reads one JSON document whatever happens. */
	if (opened || rr->rr_ctx->cx_json)
		repair_summary(rr);
	free(t);
	free(rr->rr_packs);
	if (rr->rr_errors || rr->rr_unrepaired || rr->rr_sum.shards_unverified)
		return CLI_EXIT_RUNTIME;
	return CLI_EXIT_OK;
}

static void repair_run_init(struct repair_run *rr, struct cli_ctx *ctx,
			    bool scrub)
{
	memset(rr, 0, sizeof(*rr));
	rr->rr_ctx = ctx;
	rr->rr_scrub = scrub;
	rr->rr_ost = NACRE_OST_ANY;
	rr->rr_tty = isatty(STDERR_FILENO);
}

enum {
	REPAIR_OPT_OST = 0x200,
};

static int repair_parse_ost(struct cli_ctx *ctx, const char *arg,
			    struct repair_run *rr)
{
	long v;

	if (cli_parse_long(arg, &v) || v < 0 || v >= (long)NACRE_OST_ANY)
		return cli_usage_err(ctx, "invalid OST index '%s'", arg);
	rr->rr_ost = (uint32_t)v;
	return CLI_OPT_CONTINUE;
}

int cmd_rebuild(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "ost", required_argument, NULL, REPAIR_OPT_OST },
		{ NULL, 0, NULL, 0 },
	};
	struct repair_run rr;
	int c, rc;

	repair_run_init(&rr, ctx, false);
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == REPAIR_OPT_OST)
			rc = repair_parse_ost(ctx, optarg, &rr);
		else
			rc = cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c,
					    argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	return repair_run_all(&rr, argv + optind, argc - optind);
}

int cmd_scrub(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct repair_run rr;
	int c, rc;

	repair_run_init(&rr, ctx, true);
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		rc = cli_opt_common(ctx, c == 'h' ? CLI_OPT_HELP : c, argv);
		if (rc != CLI_OPT_CONTINUE)
			return rc;
	}
	return repair_run_all(&rr, argv + optind, argc - optind);
}
