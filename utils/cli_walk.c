/* SPDX-License-Identifier: MIT */
/*
 * A walk of a namespace subtree through libnacre (nacre_readdir_fid() and
 * nacre_getattr()), not through the kernel mount: no FUSE round trips, no
 * attribute cache, and the FIDs that layouts and migrations need come with
 * every entry.  Used by nacre find and nacre migrate.
 *
 * Paths are built as find(1) builds them: the PATH as given, then "/" and
 * each name.  Symbolic links are never followed; the ".nacre-hidden-" names
 * of open unlinked files are skipped.  A directory's subdirectories are
 * visited after its listing is read, so one listing is held at a time
 * however deep the tree.  An error on an entry or a subtree is reported
 * and the walk goes on.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* Entries asked for per nacre_readdir_fid() call. */
#define WALK_READDIR_BATCH 128

struct walk_sub {
	char *ws_path;
	struct nacre_fid ws_fid;
};

struct walk_subs {
	struct walk_sub *ws_v;
	size_t ws_n, ws_cap;
};

struct walk_run {
	struct cli_ctx *wr_ctx;
	struct nacre_fs *wr_fs;
	cli_walk_fn wr_fn;
	void *wr_arg;
	unsigned long wr_errors;
};

static int walk_subs_add(struct walk_subs *s, const char *path, const struct nacre_fid *fid)
{
	struct walk_sub *v;
	size_t cap;

	if (s->ws_n == s->ws_cap) {
		cap = s->ws_cap ? s->ws_cap * 2 : 16;
		v = realloc(s->ws_v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->ws_v = v;
		s->ws_cap = cap;
	}
	s->ws_v[s->ws_n].ws_path = strdup(path);
	if (!s->ws_v[s->ws_n].ws_path)
		return -ENOMEM;
	s->ws_v[s->ws_n].ws_fid = *fid;
	s->ws_n++;
	return 0;
}

static void walk_subs_free(struct walk_subs *s)
{
	for (size_t i = 0; i < s->ws_n; i++)
		free(s->ws_v[i].ws_path);
	free(s->ws_v);
	memset(s, 0, sizeof(*s));
}

/* @dir + "/" + @name, without doubling a slash @dir ends with. */
static char *walk_join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p = malloc(dl + nl + 2);

	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	if (!dl || dir[dl - 1] != '/')
		p[dl++] = '/';
	memcpy(p + dl, name, nl + 1);
	return p;
}

static void walk_fail(struct walk_run *wr, const char *path, int rc)
{
	cli_err(wr->wr_ctx, "%s: %s", path, nacre_strerror(rc));
	wr->wr_errors++;
}

static void walk_visit(struct walk_run *wr, const char *path, const char *name,
		       const struct nacre_stat *st)
{
	struct cli_walk_ent e = { .we_path = path, .we_name = name, .we_st = *st };

	if (wr->wr_fn(wr->wr_ctx, wr->wr_fs, &e, wr->wr_arg))
		wr->wr_errors++;
}

static void walk_dir(struct walk_run *wr, const struct nacre_fid *dir, const char *path)
{
	struct nacre_dirent *ents = calloc(WALK_READDIR_BATCH, sizeof(*ents));
	struct walk_subs subs = { 0 };
	uint64_t cookie = 0;
	bool eof = false;
	int n, rc = 0;

	if (!ents) {
		walk_fail(wr, path, -ENOMEM);
		return;
	}
	while (!eof) {
		n = nacre_readdir_fid(wr->wr_fs, NULL, dir, cookie, ents, WALK_READDIR_BATCH, &eof);
		if (n < 0) {
			walk_fail(wr, path, n);
			break;
		}
		if (n == 0 && !eof)
			break;
		for (int i = 0; i < n; i++) {
			struct nacre_stat st;
			char *child;

			cookie = ents[i].cookie;
			if (!strncmp(ents[i].name, CLI_HIDDEN_PREFIX, sizeof(CLI_HIDDEN_PREFIX) - 1))
				continue;
			child = walk_join(path, ents[i].name);
			if (!child) {
				walk_fail(wr, path, -ENOMEM);
				continue;
			}
			rc = nacre_getattr(wr->wr_fs, &ents[i].fid, &st);
			if (rc == -ENOENT) {
				free(child); /* removed since the listing */
				continue;
			}
			if (rc) {
				walk_fail(wr, child, rc);
				free(child);
				continue;
			}
			walk_visit(wr, child, ents[i].name, &st);
			if (S_ISDIR(st.mode)) {
				rc = walk_subs_add(&subs, child, &ents[i].fid);
				if (rc)
					walk_fail(wr, child, rc);
			}
			free(child);
		}
	}
	free(ents);
	for (size_t i = 0; i < subs.ws_n; i++)
		walk_dir(wr, &subs.ws_v[i].ws_fid, subs.ws_v[i].ws_path);
	walk_subs_free(&subs);
}

/* The last component of @path, as find(1) matches -name against it. */
static const char *walk_basename(const char *path, char *buf, size_t len)
{
	size_t end = strlen(path), start;

	while (end > 1 && path[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	if (end - start >= len)
		end = start + len - 1;
	memcpy(buf, path + start, end - start);
	buf[end - start] = '\0';
	return buf;
}

unsigned long cli_walk(struct cli_ctx *ctx, struct cli_target *t, const char *path,
		       cli_walk_fn fn, void *arg)
{
	struct walk_run wr = { ctx, t->tg_fs, fn, arg, 0 };
	char name[NACRE_NAME_MAX + 1];

	walk_visit(&wr, path, walk_basename(path, name, sizeof(name)), &t->tg_st);
	if (S_ISDIR(t->tg_st.mode))
		walk_dir(&wr, &t->tg_fid, path);
	return wr.wr_errors;
}
