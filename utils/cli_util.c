/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the nacre subcommands: messages, option handling, sizes,
 * a JSON writer and the way from a path to the filesystem behind it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cli.h"

/* How long the CLI waits for a server: long enough for a busy MDS, short
 * enough that `nacre df` against a dead one answers in seconds. */
#define CLI_TIMEOUT_MS 10000
#define CLI_RETRY_MS 5000

/* ---- messages ---- */

static void cli_vmsg(const struct cli_ctx *ctx, const char *fmt, va_list ap)
{
	if (ctx && ctx->cx_cmd)
		fprintf(stderr, "nacre %s: ", ctx->cx_cmd->cc_name);
	else
		fputs("nacre: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cli_usage_err(const struct cli_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg(ctx, fmt, ap);
	va_end(ap);
	return CLI_EXIT_USAGE;
}

int cli_err(const struct cli_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg(ctx, fmt, ap);
	va_end(ap);
	return CLI_EXIT_RUNTIME;
}

/* ---- options ---- */

void cli_opt_reset(void)
{
	/* glibc reinitialises getopt, permutation state included, when optind
	 * is 0; each subcommand parses its own argv from index 1. */
	optind = 0;
	opterr = 0;
}

/* The text of the option getopt_long() just rejected. */
static const char *cli_opt_text(char **argv, char *buf, size_t len)
{
	if (optopt > 0 && optopt < 0x100) {
		snprintf(buf, len, "-%c", optopt);
		return buf;
	}
	return argv[optind - 1];
}

int cli_opt_common(struct cli_ctx *ctx, int c, char **argv)
{
	char buf[8];

	switch (c) {
	case CLI_OPT_JSON:
		ctx->cx_json = true;
		return CLI_OPT_CONTINUE;
	case CLI_OPT_HELP:
		cli_cmd_help(ctx->cx_cmd, stdout);
		return CLI_EXIT_OK;
	case ':':
		return cli_usage_err(ctx, "option '%s' needs an argument",
				     cli_opt_text(argv, buf, sizeof(buf)));
	case '?':
		/* A long option given "=value" it does not take. */
		if (optopt >= 0x100)
			return cli_usage_err(ctx, "option '%s' takes no argument",
					     argv[optind - 1]);
		return cli_usage_err(ctx, "unknown option '%s'",
				     cli_opt_text(argv, buf, sizeof(buf)));
	default:
		return cli_usage_err(ctx, "unknown option");
	}
}

/* ---- numbers and sizes ---- */

int cli_parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_size(const char *s, uint64_t *out)
{
	unsigned int shift = 0;
	uint64_t v;
	char *end;

	/* strtoull would take a sign or leading blanks: digits only. */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case 't': case 'T':
		shift = 40;
		break;
	default:
		return -EINVAL;
	}
	if (shift && end[1])
		return -EINVAL;
	if (v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

/* Digits only, at most @max: strtoul would take signs and blanks. */
static bool cli_parse_small(const char *s, const char *end,
				  uint32_t max, uint32_t *out)
{
	uint32_t v = 0;

	if (s == end || end - s > 3)
		return false;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (uint32_t)(*s - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

int cli_parse_ec(const char *arg, uint32_t *k, uint32_t *m)
{
	const char *plus = strchr(arg, '+');

	/* The MDS reads k >= 1 as a fixed code, where m = 0 is plain
	 * striping (k is then the stripe count); k = 0 would inherit, and a
	 * filesystem of 6 OSTs or more defaults to 4+2. */
	if (!strcmp(arg, "none")) {
		*k = 1;
		*m = 0;
		return 0;
	}
	if (!plus || !cli_parse_small(arg, plus, 16, k) ||
	    !cli_parse_small(plus + 1, plus + 1 + strlen(plus + 1), 4, m) || *k < 1)
		return -EINVAL;
	return 0;
}

void cli_format_human(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "BKMGTPE";
	double v = (double)bytes;
	unsigned int u = 0;

	while (v >= 1024.0 && u < sizeof(units) - 2) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 "B", bytes);
	else
		snprintf(buf, len, "%.1f%c", v, units[u]);
}

/* ---- packing templates ---- */

int cli_parse_pack_max(const char *s, uint32_t *out)
{
	uint64_t v;

	if (cli_parse_size(s, &v) || v < 1 || v > CLI_PACK_MAX_LIMIT)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int cli_parse_inline_max(const char *s, uint32_t *out)
{
	uint64_t v;

	if (cli_parse_size(s, &v) || v > NACRE_INLINE_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int cli_inline_max_err(const struct cli_ctx *ctx, const char *arg)
{
	return cli_usage_err(ctx, "invalid inline max '%s' (0 to %u bytes, K suffix; 0: none)",
			     arg, NACRE_INLINE_MAX);
}

int cli_pack_max_err(const struct cli_ctx *ctx, const char *arg)
{
	return cli_usage_err(ctx, "invalid pack max '%s' (1 to 64M bytes, K or M suffix)",
			     arg);
}

uint32_t cli_template_pack_max(const struct nacre_layout *l)
{
	if (!(l->flags & NACRE_LAYOUT_PACK))
		return 0;
	return l->pack_max ? l->pack_max : NACRE_PACK_MAX_DEFAULT;
}

void cli_template_set_pack(struct nacre_layout *l, bool on, uint32_t pack_max)
{
	if (!on) {
		l->flags &= ~NACRE_LAYOUT_PACK;
		l->pack_max = 0;
		return;
	}
	/* A template that did not pack has no limit of its own: 0 lets the
	 * MDS apply the default. */
	if (!(l->flags & NACRE_LAYOUT_PACK))
		l->pack_max = 0;
	l->flags |= NACRE_LAYOUT_PACK;
	if (pack_max)
		l->pack_max = pack_max;
}

uint32_t cli_template_inline_max(const struct nacre_layout *l)
{
	return cli_template_pack_max(l) && (l->flags & NACRE_LAYOUT_INLINE) ? l->inline_max : 0;
}

void cli_template_set_inline(struct nacre_layout *l, uint32_t inline_max)
{
	if (inline_max != CLI_INLINE_KEEP) {
		l->inline_max = inline_max;
		if (inline_max)
			l->flags |= NACRE_LAYOUT_INLINE;
		else
			l->flags &= ~NACRE_LAYOUT_INLINE;
	}
	if (!cli_template_inline_max(l)) {
		l->flags &= ~NACRE_LAYOUT_INLINE;
		l->inline_max = 0;
	}
}

int cli_dir_pack_on(struct nacre_fs *fs, const struct nacre_fid *dir,
		    uint32_t pack_max, uint32_t inline_max, uint32_t *eff,
		    uint32_t *eff_inline)
{
	struct nacre_layout cur, l;
	int rc;

	rc = nacre_getlayout_fid(fs, dir, &cur);
	if (rc)
		return rc;
	if (cli_template_pack_max(&cur) &&
	    (!pack_max || cur.pack_max == pack_max) &&
	    (inline_max == CLI_INLINE_KEEP || cli_template_inline_max(&cur) == inline_max)) {
		*eff = cli_template_pack_max(&cur);
		*eff_inline = cli_template_inline_max(&cur);
		return 0;
	}
	/* The template as it is, less what only a file's layout has. */
	l = cur;
	l.shard_count = 0;
	l.pack_id = l.pack_off = l.pack_len = 0;
	l.flags &= NACRE_LAYOUT_PACK | NACRE_LAYOUT_POOL | NACRE_LAYOUT_INLINE;
	cli_template_set_pack(&l, true, pack_max);
	cli_template_set_inline(&l, inline_max);
	rc = nacre_setlayout_fid(fs, NULL, dir, &l);
	if (rc)
		return rc;
	/* An MDS from before packing may take the template and drop the
	 * flag: say so rather than report a success that packs nothing. */
	rc = nacre_getlayout_fid(fs, dir, &cur);
	if (rc)
		return rc;
	if (!cli_template_pack_max(&cur) ||
	    (inline_max != CLI_INLINE_KEEP && cli_template_inline_max(&cur) != inline_max))
		return -EOPNOTSUPP;
	*eff = cli_template_pack_max(&cur);
	*eff_inline = cli_template_inline_max(&cur);
	return 0;
}

/* ---- JSON ---- */

void cli_json_init(struct cli_json *js, FILE *out)
{
	memset(js, 0, sizeof(*js));
	js->js_out = out;
}

/* The separator owed before a value or key at the current depth. */
static void cli_json_sep(struct cli_json *js)
{
	if (js->js_after_key) {
		js->js_after_key = false;
		return;
	}
	if (js->js_depth == 0)
		return;
	if (!js->js_first[js->js_depth - 1])
		fputs(", ", js->js_out);
	js->js_first[js->js_depth - 1] = false;
}

static void cli_json_open(struct cli_json *js, char c)
{
	cli_json_sep(js);
	fputc(c, js->js_out);
	if (js->js_depth < CLI_JSON_DEPTH)
		js->js_first[js->js_depth] = true;
	js->js_depth++;
}

static void cli_json_close(struct cli_json *js, char c)
{
	js->js_depth--;
	fputc(c, js->js_out);
}

void cli_json_obj_begin(struct cli_json *js)
{
	cli_json_open(js, '{');
}

void cli_json_obj_end(struct cli_json *js)
{
	cli_json_close(js, '}');
}

void cli_json_arr_begin(struct cli_json *js)
{
	cli_json_open(js, '[');
}

void cli_json_arr_end(struct cli_json *js)
{
	cli_json_close(js, ']');
}

/*
 * Length of the well-formed UTF-8 sequence at @p (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF), 0 when it is not one.  @p is
 * NUL-terminated, and NUL is never a continuation byte, so the checks
 * never read past the end.
 */
static size_t cli_utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;
		else if (p[0] == 0xed)
			hi = 0x9f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		if (p[0] == 0xf0)
			lo = 0x90;
		else if (p[0] == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void cli_json_write_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	while (*p) {
		size_t n;

		if (*p == '"' || *p == '\\') {
			fputc('\\', out);
			fputc(*p++, out);
		} else if (*p < 0x20) {
			fprintf(out, "\\u%04x", *p++);
		} else if (*p < 0x80) {
			fputc(*p++, out);
		} else if ((n = cli_utf8_len(p)) != 0) {
			fwrite(p, 1, n, out);
			p += n;
		} else {
			/* File names are bytes, JSON text is UTF-8: a byte
			 * that is not UTF-8 becomes U+FFFD so the document
			 * stays valid for every parser. */
			fputs("\\ufffd", out);
			p++;
		}
	}
	fputc('"', out);
}

void cli_json_key(struct cli_json *js, const char *key)
{
	cli_json_sep(js);
	cli_json_write_string(js->js_out, key);
	fputs(": ", js->js_out);
	js->js_after_key = true;
}

void cli_json_str(struct cli_json *js, const char *s)
{
	cli_json_sep(js);
	cli_json_write_string(js->js_out, s);
}

void cli_json_u64(struct cli_json *js, uint64_t v)
{
	cli_json_sep(js);
	fprintf(js->js_out, "%" PRIu64, v);
}

void cli_json_i64(struct cli_json *js, int64_t v)
{
	cli_json_sep(js);
	fprintf(js->js_out, "%" PRId64, v);
}

void cli_json_bool(struct cli_json *js, bool v)
{
	cli_json_sep(js);
	fputs(v ? "true" : "false", js->js_out);
}

void cli_json_null(struct cli_json *js)
{
	cli_json_sep(js);
	fputs("null", js->js_out);
}

/* The shortest "%g" form that reads back as @v, with ".0" after a whole
 * number so that readers telling integers from reals see a real. */
static void cli_format_double(double v, char *buf, size_t len)
{
	int prec;

	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (prec == 17)
		snprintf(buf, len, "%.17g", v);
	if (!strpbrk(buf, ".e"))
		strncat(buf, ".0", len - strlen(buf) - 1);
}

void cli_json_double(struct cli_json *js, double v)
{
	char buf[40];

	if (!isfinite(v)) {
		cli_json_null(js);
		return;
	}
	cli_format_double(v, buf, sizeof(buf));
	cli_json_sep(js);
	fputs(buf, js->js_out);
}

void cli_json_end(struct cli_json *js)
{
	fputc('\n', js->js_out);
}

void cli_json_kv_str(struct cli_json *js, const char *key, const char *s)
{
	cli_json_key(js, key);
	cli_json_str(js, s);
}

void cli_json_kv_u64(struct cli_json *js, const char *key, uint64_t v)
{
	cli_json_key(js, key);
	cli_json_u64(js, v);
}

void cli_json_kv_i64(struct cli_json *js, const char *key, int64_t v)
{
	cli_json_key(js, key);
	cli_json_i64(js, v);
}

void cli_json_kv_double(struct cli_json *js, const char *key, double v)
{
	cli_json_key(js, key);
	cli_json_double(js, v);
}

/* ---- finding filesystems ---- */

/* One xattr as a NUL-terminated string.  0 or -errno. */
static int cli_xattr_str(const char *path, const char *name, char *buf,
			 size_t len)
{
	ssize_t n = getxattr(path, name, buf, len - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int cli_path_probe(const char *path, struct cli_fsid *id)
{
	char fid[64];
	int rc;

	rc = cli_xattr_str(path, "nacre.mds", id->fi_mds, sizeof(id->fi_mds));
	/* Filesystems without the nacre xattrs say "no such attribute" or
	 * "attributes of that namespace are not supported". */
	if (rc == -ENODATA || rc == -ENOTSUP || rc == -EOPNOTSUPP)
		return -EOPNOTSUPP;
	if (rc)
		return rc;
	rc = cli_xattr_str(path, "nacre.fsname", id->fi_fsname,
			   sizeof(id->fi_fsname));
	if (rc)
		return rc;
	rc = cli_xattr_str(path, "nacre.fid", fid, sizeof(fid));
	if (rc)
		return rc;
	if (nacre_fid_parse(fid, &id->fi_fid))
		return -EINVAL;
	return 0;
}

int cli_connect(struct cli_ctx *ctx, const char *mds, const char *fsname,
		struct nacre_fs **fs)
{
	struct nacre_opts opts = {
		.timeout_ms = CLI_TIMEOUT_MS,
		.retry_ms = CLI_RETRY_MS,
		.keyfile = ctx->cx_keyfile,
	};
	struct cli_conn *cn;
	unsigned int i;
	int rc;

	for (i = 0; i < ctx->cx_nconns; i++) {
		cn = &ctx->cx_conns[i];
		if (!strcmp(cn->cn_mds, mds) &&
		    !strcmp(cn->cn_fsname, fsname)) {
			*fs = cn->cn_fs;
			return 0;
		}
	}
	if (strlen(mds) > NACRE_ADDR_MAX || strlen(fsname) > NACRE_FSNAME_MAX)
		return -ENAMETOOLONG;
	rc = nacre_connect(mds, fsname, &opts, fs);
	if (rc)
		return rc;
	/* Past the cache size (many filesystems in one run) the oldest
	 * connection is dropped: no fs handle outlives the command using it,
	 * since commands finish with one filesystem before the next. */
	if (ctx->cx_nconns == CLI_MAX_CONNS) {
		nacre_disconnect(ctx->cx_conns[0].cn_fs);
		memmove(&ctx->cx_conns[0], &ctx->cx_conns[1],
			sizeof(ctx->cx_conns[0]) * (CLI_MAX_CONNS - 1));
		ctx->cx_nconns--;
	}
	cn = &ctx->cx_conns[ctx->cx_nconns++];
	snprintf(cn->cn_mds, sizeof(cn->cn_mds), "%s", mds);
	snprintf(cn->cn_fsname, sizeof(cn->cn_fsname), "%s", fsname);
	cn->cn_fs = *fs;
	return 0;
}

const char *cli_connect_strerror(struct cli_ctx *ctx, const char *fsname, int rc)
{
	char path[PATH_MAX];

	if ((rc != -NACRE_E_AUTH && rc != -NACRE_E_NOKEY && rc != -NACRE_E_KEYMODE &&
	     rc != -NACRE_E_KEYFILE) ||
	    nacre_keyfile_path(ctx->cx_keyfile, fsname, path, sizeof(path)))
		return nacre_strerror(rc);
	snprintf(ctx->cx_errbuf, sizeof(ctx->cx_errbuf), "%s (key file %s)",
		 nacre_strerror(rc), path);
	return ctx->cx_errbuf;
}

void cli_ctx_fini(struct cli_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ctx->cx_nconns; i++)
		nacre_disconnect(ctx->cx_conns[i].cn_fs);
	ctx->cx_nconns = 0;
}

/* A path inside the --mds filesystem. */
static int cli_target_open_inside(struct cli_ctx *ctx, const char *path,
				  struct cli_target *t)
{
	int rc;

	rc = cli_connect(ctx, ctx->cx_mds, ctx->cx_fsname, &t->tg_fs);
	if (rc)
		return cli_err(ctx, "%s:/%s: %s", ctx->cx_mds, ctx->cx_fsname,
			       cli_connect_strerror(ctx, ctx->cx_fsname, rc));
	rc = nacre_resolve(t->tg_fs, NULL, path, true, &t->tg_st);
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	t->tg_fid = t->tg_st.fid;
	t->tg_mount[0] = '\0';
	return 0;
}

/*
 * A small file the mount has just written may be known only to the mount
 * until its pack flush: the MDS answers "no such file" for a name that
 * ls shows.  fsync(2) through the mount commits it (as it would for the
 * application).  Whether it did: a regular file was there to sync.
 */
static bool cli_commit_through_mount(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fsync(fd) == 0;
	close(fd);
	return ok;
}

/* A path through a mount. */
static int cli_target_open_mounted(struct cli_ctx *ctx, const char *path,
				   struct cli_target *t)
{
	struct cli_fsid id;
	int rc;

	rc = cli_path_probe(path, &id);
	if (rc == -EOPNOTSUPP)
		return cli_err(ctx, "%s: not on a nacre filesystem", path);
	if (rc)
		return cli_err(ctx, "%s: %s", path, strerror(-rc));
	rc = cli_connect(ctx, id.fi_mds, id.fi_fsname, &t->tg_fs);
	if (rc)
		return cli_err(ctx, "%s: %s:/%s: %s", path, id.fi_mds,
			       id.fi_fsname, cli_connect_strerror(ctx, id.fi_fsname, rc));
	t->tg_fid = id.fi_fid;
	rc = nacre_getattr(t->tg_fs, &t->tg_fid, &t->tg_st);
	if (rc == -ENOENT && cli_commit_through_mount(path))
		rc = nacre_getattr(t->tg_fs, &t->tg_fid, &t->tg_st);
	if (rc)
		return cli_err(ctx, "%s: %s", path, nacre_strerror(rc));
	cli_mount_of("/proc/self/mounts", path, t->tg_mount,
		     sizeof(t->tg_mount));
	return 0;
}

int cli_target_open(struct cli_ctx *ctx, const char *path,
		    struct cli_target *t)
{
	if (ctx->cx_mds)
		return cli_target_open_inside(ctx, path, t);
	return cli_target_open_mounted(ctx, path, t);
}

int cli_target_open_mds(struct cli_ctx *ctx, struct cli_target *t)
{
	return cli_target_open_inside(ctx, "/", t);
}

/* ---- the mount table ---- */

/* Undoes the octal escapes (\040 for a space...) of /proc/self/mounts. */
static void cli_mount_unescape(char *s)
{
	char *w = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 4;
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
}

/* Splits one mounts line into source, mount point and type.  false for a
 * line that does not have them. */
static bool cli_mount_split(char *line, char **src, char **dir, char **type)
{
	char *save = NULL;

	*src = strtok_r(line, " \t\n", &save);
	*dir = strtok_r(NULL, " \t\n", &save);
	*type = strtok_r(NULL, " \t\n", &save);
	if (!*src || !*dir || !*type)
		return false;
	cli_mount_unescape(*src);
	cli_mount_unescape(*dir);
	return true;
}

/*
 * Whether a mount may be nacre: mount.nacre mounts with type "fuse.nacre"
 * and source "ADDRESS:/FSNAME"; other FUSE setups show type "fuse".  Other
 * filesystems are never asked, so a hung network mount cannot stall us.
 */
static bool cli_mount_is_candidate(const char *src, const char *type)
{
	if (!strcmp(type, "fuse.nacre"))
		return true;
	if (strcmp(type, "fuse") && strcmp(type, "fuseblk") &&
	    strncmp(type, "fuse.", 5))
		return false;
	return strstr(src, ":/") != NULL;
}

int cli_mounts_find(const char *mounts_file, char (*mounts)[PATH_MAX],
		    int max)
{
	char *line = NULL, *src, *dir, *type;
	struct cli_fsid id;
	size_t cap = 0;
	int n = 0;
	FILE *f;

	f = fopen(mounts_file, "re");
	if (!f)
		return -errno;
	while (n < max && getline(&line, &cap, f) > 0) {
		if (!cli_mount_split(line, &src, &dir, &type))
			continue;
		if (!cli_mount_is_candidate(src, type))
			continue;
		if (strlen(dir) >= PATH_MAX || cli_path_probe(dir, &id))
			continue;
		memcpy(mounts[n++], dir, strlen(dir) + 1);
	}
	free(line);
	fclose(f);
	return n;
}

/* Whether mount point @dir holds @path (a whole-component prefix). */
static bool cli_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

void cli_mount_of(const char *mounts_file, const char *path, char *out,
		  size_t len)
{
	char *line = NULL, *src, *dir, *type, *real;
	size_t cap = 0, best = 0;
	FILE *f;

	snprintf(out, len, "%s", path);
	real = realpath(path, NULL);
	if (!real)
		return;
	f = fopen(mounts_file, "re");
	if (!f)
		goto out_free_real;
	while (getline(&line, &cap, f) > 0) {
		if (!cli_mount_split(line, &src, &dir, &type))
			continue;
		if (cli_path_under(real, dir) && strlen(dir) >= best) {
			best = strlen(dir);
			snprintf(out, len, "%s", dir);
		}
	}
	free(line);
	fclose(f);
out_free_real:
	free(real);
}

/* Every nacre mount, opened. */
static int cli_targets_mounted(struct cli_ctx *ctx, struct cli_target *t,
			       int *n)
{
	char (*mounts)[PATH_MAX];
	int i, count, rc = 0;

	mounts = malloc(sizeof(*mounts) * CLI_MAX_MOUNTS);
	if (!mounts)
		return cli_err(ctx, "%s", strerror(ENOMEM));
	count = cli_mounts_find("/proc/self/mounts", mounts, CLI_MAX_MOUNTS);
	if (count < 0) {
		rc = cli_err(ctx, "/proc/self/mounts: %s", strerror(-count));
		goto out_free_mounts;
	}
	if (count == 0) {
		rc = cli_err(ctx, "no nacre filesystem mounted");
		goto out_free_mounts;
	}
	for (i = 0; i < count; i++) {
		if (cli_target_open(ctx, mounts[i], &t[*n]))
			rc = CLI_EXIT_RUNTIME;
		else
			(*n)++;
	}
out_free_mounts:
	free(mounts);
	return rc;
}

int cli_targets_collect(struct cli_ctx *ctx, const char *path,
			struct cli_target **out, int *n)
{
	struct cli_target *t;
	int rc;

	*n = 0;
	*out = NULL;
	t = calloc(CLI_MAX_MOUNTS, sizeof(*t));
	if (!t)
		return cli_err(ctx, "%s", strerror(ENOMEM));
	if (path)
		rc = cli_target_open(ctx, path, t);
	else if (ctx->cx_mds)
		rc = cli_target_open_mds(ctx, t);
	else
		rc = cli_targets_mounted(ctx, t, n);
	if (path || ctx->cx_mds)
		*n = rc ? 0 : 1;
	if (*n == 0) {
		free(t);
		return rc ? rc : CLI_EXIT_RUNTIME;
	}
	*out = t;
	return rc;
}

int cli_target_one(struct cli_ctx *ctx, const char *path, struct cli_target *t)
{
	struct cli_target *targets;
	int n, status;

	status = cli_targets_collect(ctx, path, &targets, &n);
	if (n == 0)
		return status;
	/* A change to one filesystem never guesses between several. */
	if (n > 1) {
		free(targets);
		return cli_usage_err(ctx, "%d nacre filesystems are mounted; name one with PATH",
				     n);
	}
	*t = targets[0];
	free(targets);
	return status;
}

int cli_parse_ost_index(const struct cli_ctx *ctx, const char *s, uint32_t *idx)
{
	long v;

	if (cli_parse_long(s, &v) || v < 0 || v >= NACRE_MAX_OSTS)
		return cli_usage_err(ctx, "bad OST index '%s' (0 to %d)", s, NACRE_MAX_OSTS - 1);
	*idx = (uint32_t)v;
	return 0;
}

int cli_targets_report(struct cli_ctx *ctx, const char *path, cli_target_fn fn,
		       void *arg)
{
	struct cli_target *targets;
	bool many, printed = false;
	struct cli_json js;
	int i, n, status;

	status = cli_targets_collect(ctx, path, &targets, &n);
	if (n == 0)
		return status;
	/* One filesystem is one JSON object; several make an array. */
	many = n > 1;
	cli_json_init(&js, stdout);
	if (ctx->cx_json && many)
		cli_json_arr_begin(&js);
	for (i = 0; i < n; i++) {
		if (!ctx->cx_json && i > 0)
			putchar('\n');
		if (fn(ctx, &targets[i], ctx->cx_json ? &js : NULL, many, arg))
			status = CLI_EXIT_RUNTIME;
		else
			printed = true;
	}
	if (ctx->cx_json && many)
		cli_json_arr_end(&js);
	if (ctx->cx_json && (many || printed))
		cli_json_end(&js);
	free(targets);
	return status;
}
