/* SPDX-License-Identifier: MIT */
/*
 * nacre-bench: runs the same data and metadata workloads through libnacre,
 * through the FUSE mount and on a plain local directory on the same disk,
 * and prints each figure with its ratio to the local one (see bench.h for
 * the files and the exit status).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"

#define MIB (1024ull * 1024)

/* Small files per size: the measurement with --only small; the smaller count
 * keeps a run of every workload to about three minutes on two cores. */
#define NB_SMALL_FILES 20000u
#define NB_SMALL_FILES_ALL 500u
#define NB_SMALL_FILES_QUICK 200u

enum {
	OPT_MDS = 256,
	OPT_FSNAME,
	OPT_MOUNT,
	OPT_LOCAL,
	OPT_JSON,
	OPT_SIZE,
	OPT_STREAMS,
	OPT_QUICK,
	OPT_FILES,
	OPT_THREADS,
	OPT_DURATION,
	OPT_CORRUPT,
	OPT_ONLY,
	OPT_SMALL_FILES,
	OPT_SMALL_SIZES,
	OPT_SMALL_INLINE,
	OPT_REPEAT,
	OPT_KEYFILE,
};

static const struct option nb_longopts[] = {
	{ "mds", required_argument, NULL, OPT_MDS },
	{ "fsname", required_argument, NULL, OPT_FSNAME },
	{ "keyfile", required_argument, NULL, OPT_KEYFILE },
	{ "mount", required_argument, NULL, OPT_MOUNT },
	{ "local", required_argument, NULL, OPT_LOCAL },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "streams", required_argument, NULL, OPT_STREAMS },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "files", required_argument, NULL, OPT_FILES },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "only", required_argument, NULL, OPT_ONLY },
	{ "small-files", required_argument, NULL, OPT_SMALL_FILES },
	{ "small-sizes", required_argument, NULL, OPT_SMALL_SIZES },
	{ "small-inline", required_argument, NULL, OPT_SMALL_INLINE },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	/* Not in --help: makes verification fail on purpose (the tests). */
	{ "self-test-corrupt", no_argument, NULL, OPT_CORRUPT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void nb_usage(void)
{
	printf("Usage: nacre-bench --mds ADDR --fsname NAME --local DIR [--mount MNT]\n"
	       "                   [--keyfile FILE]\n"
	       "                   [--json] [--quick] [--size BYTES] [--streams LIST]\n"
	       "                   [--threads LIST] [--files N] [--duration SECS]\n"
	       "                   [--small-files N] [--small-sizes LIST] [--only LIST]\n"
	       "                   [--repeat N]\n"
	       "\n"
	       "Runs sequential, random-read, metadata and small-file workloads through\n"
	       "libnacre, through the FUSE mount MNT (with --mount) and on the local\n"
	       "directory DIR, and prints every figure with its ratio to DIR, plus the\n"
	       "loopback TCP limit.  Every byte read is checked against what was written.\n"
	       "\n"
	       "  --mds ADDR        the MDS address (tcp://HOST:PORT)\n"
	       "  --fsname NAME     the filesystem name\n"
	       "  --keyfile FILE    the cluster key (default: $NACRE_KEYFILE, else\n"
	       "                    /etc/nacre/FSNAME.key)\n"
	       "  --mount MNT       also run through this FUSE mount of the filesystem\n"
	       "  --local DIR       the local directory to compare with (same disk)\n"
	       "  --json            print one JSON object instead of tables\n"
	       "  --quick           tiny sizes (a smoke test, not a measurement)\n"
	       "  --size BYTES      bytes per sequential stream, K/M/G suffixes\n"
	       "                    (default 256M, --quick 4M; rounded up to 4M)\n"
	       "  --streams LIST    sequential streams, comma separated (default 1,4,8)\n"
	       "  --threads LIST    random-read and metadata threads (default 1,4)\n"
	       "  --files N         files per metadata run (default 2000, --quick 200)\n"
	       "  --duration SECS   seconds per random-read run (default 2, --quick 0.2)\n"
	       "  --small-files N   files per small-file size (default 20000 with\n"
	       "                    --only small, 500 with other workloads, --quick 200)\n"
	       "  --small-sizes LIST\n"
	       "                    small-file sizes, comma separated: up to 1M each\n"
	       "                    (K/M suffixes) or mixed (default 4k,64k,128k,mixed)\n"
	       "  --small-inline SIZE\n"
	       "                    the pack directory keeps files up to SIZE (at most\n"
	       "                    4k) inline, in the MDT (default 0: none)\n"
	       "  --only LIST       run only these workloads, comma separated:\n"
	       "                    tcp, seq (sequential and random reads), meta, small\n"
	       "  --repeat N        run each sequential workload N times (1 to 9, default\n"
	       "                    1), the targets taking turns, and print the median of\n"
	       "                    each figure: the local directory's own figures move\n"
	       "                    by tens of percent from run to run on a busy machine\n"
	       "  -h, --help        this text\n"
	       "\n"
	       "Exit status: 0 done, 1 an I/O error, 2 bad usage, 3 data mismatch,\n"
	       "128+N stopped by signal N (its files removed).\n");
}

/* --only LIST: a mask of BENCH_W_* bits. */
static int nb_parse_only(const char *list, unsigned int *mask)
{
	static const struct {
		const char *name;
		unsigned int bit;
	} names[] = {
		{ "tcp", BENCH_W_TCP },
		{ "seq", BENCH_W_SEQ },
		{ "meta", BENCH_W_META },
		{ "small", BENCH_W_SMALL },
	};
	char buf[128], *save = NULL, *tok;
	unsigned int i;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
		return -EINVAL;
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(tok, names[i].name))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -EINVAL;
		*mask |= names[i].bit;
	}
	return *mask ? 0 : -EINVAL;
}

static int nb_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "nacre-bench: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (try --help)\n");
	return BENCH_EXIT_USAGE;
}

static int nb_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || s[0] == '-')
		return -EINVAL;
	switch (*end) {
	case 'G':
	case 'g':
		shift = 30;
		break;
	case 'M':
	case 'm':
		shift = 20;
		break;
	case 'K':
	case 'k':
		shift = 10;
		break;
	default:
		break;
	}
	if (shift)
		end++;
	/* At most 1 TiB per stream; checked before the shift can wrap. */
	if (*end != '\0' || v == 0 || v > (1ull << 40) >> shift)
		return -EINVAL;
	*out = v << shift;
	return 0;
}

static int nb_parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v == 0 ||
	    v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "1,4,8": at most BENCH_MAX_LIST counts of 1..@max. */
static int nb_parse_list(const char *s, unsigned int max, unsigned int *v,
			 unsigned int *n)
{
	char buf[128], *tok, *save;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == BENCH_MAX_LIST || nb_parse_uint(tok, max, &v[*n]) < 0)
			return -EINVAL;
		(*n)++;
	}
	return *n ? 0 : -EINVAL;
}

static int nb_parse_duration(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0) || v > 3600)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "4k,64k,mixed": at most BENCH_MAX_LIST different sizes of 1 byte to
 * BENCH_SMALL_MAX, or the mixed distribution. */
static int nb_parse_small_inline(const char *s, uint32_t *v)
{
	uint64_t b;

	if (!strcmp(s, "0"))
		b = 0;
	else if (nb_parse_size(s, &b) < 0 || b > NACRE_INLINE_MAX)
		return -1;
	*v = (uint32_t)b;
	return 0;
}

static int nb_parse_small_sizes(const char *s, uint32_t *v, unsigned int *n)
{
	char buf[128], *tok, *save;
	unsigned int i;
	uint64_t size;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == BENCH_MAX_LIST)
			return -EINVAL;
		if (strcmp(tok, "mixed") == 0)
			size = BENCH_SMALL_MIXED;
		else if (nb_parse_size(tok, &size) < 0 || size > BENCH_SMALL_MAX)
			return -EINVAL;
		for (i = 0; i < *n; i++)
			if (v[i] == size)
				return -EINVAL;
		v[(*n)++] = (uint32_t)size;
	}
	return *n ? 0 : -EINVAL;
}

/* What the options did not set. */
static void nb_defaults(struct bench_cfg *cfg, bool size_set, bool files_set,
			bool dur_set)
{
	static const unsigned int streams[] = { 1, 4, 8 };
	static const unsigned int threads[] = { 1, 4 };
	static const uint32_t small[] = { 4096, 65536, 131072, BENCH_SMALL_MIXED };

	if (!size_set)
		cfg->bc_size = cfg->bc_quick ? 4 * MIB : 256 * MIB;
	/* Whole requests of either size. */
	cfg->bc_size = (cfg->bc_size + 4 * MIB - 1) / (4 * MIB) * (4 * MIB);
	if (!files_set)
		cfg->bc_files = cfg->bc_quick ? 200 : 2000;
	if (!dur_set)
		cfg->bc_duration = cfg->bc_quick ? 0.2 : 2;
	if (cfg->bc_repeat == 0)
		cfg->bc_repeat = 1;
	if (cfg->bc_nstreams == 0) {
		memcpy(cfg->bc_streams, streams, sizeof(streams));
		cfg->bc_nstreams = 3;
	}
	if (cfg->bc_nthreads == 0) {
		memcpy(cfg->bc_threads, threads, sizeof(threads));
		cfg->bc_nthreads = 2;
	}
	cfg->bc_reqs[0] = 1 * MIB;
	cfg->bc_reqs[1] = 4 * MIB;
	cfg->bc_rand[0] = 4096;
	cfg->bc_rand[1] = 128 * 1024;
	if (cfg->bc_small_files == 0) {
		if (cfg->bc_quick)
			cfg->bc_small_files = NB_SMALL_FILES_QUICK;
		else if (cfg->bc_only == BENCH_W_SMALL)
			cfg->bc_small_files = NB_SMALL_FILES;
		else
			cfg->bc_small_files = NB_SMALL_FILES_ALL;
	}
	if (cfg->bc_nsmall == 0) {
		memcpy(cfg->bc_small_sizes, small, sizeof(small));
		cfg->bc_nsmall = 4;
	}
}

static int nb_parse(int argc, char **argv, struct bench_cfg *cfg)
{
	bool size_set = false, files_set = false, dur_set = false;
	int c;

	memset(cfg, 0, sizeof(*cfg));
	cfg->bc_only = BENCH_W_ALL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", nb_longopts, NULL)) != -1) {
		switch (c) {
		case OPT_MDS:
			cfg->bc_mds = optarg;
			break;
		case OPT_FSNAME:
			cfg->bc_fsname = optarg;
			break;
		case OPT_KEYFILE:
			if (!*optarg)
				return nb_usage_error("%s", "--keyfile needs a file name");
			cfg->bc_keyfile = optarg;
			break;
		case OPT_MOUNT:
			cfg->bc_mount = optarg;
			break;
		case OPT_LOCAL:
			cfg->bc_local = optarg;
			break;
		case OPT_JSON:
			cfg->bc_json = true;
			break;
		case OPT_QUICK:
			cfg->bc_quick = true;
			break;
		case OPT_CORRUPT:
			cfg->bc_corrupt = true;
			break;
		case OPT_SIZE:
			if (nb_parse_size(optarg, &cfg->bc_size) < 0)
				return nb_usage_error("bad --size '%s'", optarg);
			size_set = true;
			break;
		case OPT_REPEAT:
			if (nb_parse_uint(optarg, BENCH_MAX_REPEAT, &cfg->bc_repeat) < 0 ||
			    cfg->bc_repeat == 0)
				return nb_usage_error("bad --repeat '%s' (1 to 9)", optarg);
			break;
		case OPT_FILES:
			if (nb_parse_uint(optarg, 10000000, &cfg->bc_files) < 0)
				return nb_usage_error("bad --files '%s'", optarg);
			files_set = true;
			break;
		case OPT_DURATION:
			if (nb_parse_duration(optarg, &cfg->bc_duration) < 0)
				return nb_usage_error("bad --duration '%s'", optarg);
			dur_set = true;
			break;
		case OPT_STREAMS:
			/* Each stream is also a TCP sender and receiver. */
			if (nb_parse_list(optarg, BENCH_MAX_THREADS / 2,
					  cfg->bc_streams, &cfg->bc_nstreams) < 0)
				return nb_usage_error("bad --streams '%s' (1 to 32, comma separated)",
						      optarg);
			break;
		case OPT_THREADS:
			if (nb_parse_list(optarg, BENCH_MAX_THREADS,
					  cfg->bc_threads, &cfg->bc_nthreads) < 0)
				return nb_usage_error("bad --threads '%s' (1 to 64, comma separated)",
						      optarg);
			break;
		case OPT_ONLY:
			if (nb_parse_only(optarg, &cfg->bc_only) < 0)
				return nb_usage_error("bad --only '%s' (tcp, seq, meta, small)",
						      optarg);
			break;
		case OPT_SMALL_FILES:
			if (nb_parse_uint(optarg, BENCH_SMALL_FILES_MAX,
					  &cfg->bc_small_files) < 0)
				return nb_usage_error("bad --small-files '%s' (1 to 1000000)",
						      optarg);
			break;
		case OPT_SMALL_SIZES:
			if (nb_parse_small_sizes(optarg, cfg->bc_small_sizes,
						 &cfg->bc_nsmall) < 0)
				return nb_usage_error("bad --small-sizes '%s' (different sizes up to 1M, or mixed; at most 8)",
						      optarg);
			break;
		case OPT_SMALL_INLINE:
			if (nb_parse_small_inline(optarg, &cfg->bc_small_inline) < 0)
				return nb_usage_error("bad --small-inline '%s' (0 to 4k)", optarg);
			break;
		case 'h':
			nb_usage();
			exit(BENCH_EXIT_OK);
		default:
			return nb_usage_error("unknown or incomplete option '%s'",
					      argv[optind - 1]);
		}
	}
	if (optind < argc)
		return nb_usage_error("unexpected argument '%s'", argv[optind]);
	if (cfg->bc_mds == NULL || cfg->bc_fsname == NULL)
		return nb_usage_error("%s", "--mds and --fsname are required");
	if (cfg->bc_local == NULL)
		return nb_usage_error("%s", "--local DIR is required");
	nb_defaults(cfg, size_set, files_set, dur_set);
	if (cfg->bc_files < cfg->bc_threads[cfg->bc_nthreads - 1])
		return nb_usage_error("%s", "--files must be at least the largest thread count");
	return 0;
}

static int nb_check_dir(const char *opt, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		fprintf(stderr, "nacre-bench: %s %s: %s\n", opt, dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "nacre-bench: %s %s: not a directory\n", opt, dir);
		return -ENOTDIR;
	}
	return 0;
}

/* Connects and prepares every target's bench directory. */
static int nb_setup(struct bench_run *run, struct nacre_fs **fs)
{
	const struct bench_cfg *cfg = run->br_cfg;
	unsigned int i;
	int rc;

	if (cfg->bc_mount && nb_check_dir("--mount", cfg->bc_mount) < 0)
		return -ENOTDIR;
	if (nb_check_dir("--local", cfg->bc_local) < 0)
		return -ENOTDIR;
	rc = bench_connect(cfg, fs);
	if (rc < 0) {
		fprintf(stderr, "nacre-bench: connect to %s (%s): %s\n",
			cfg->bc_mds, cfg->bc_fsname, nacre_strerror(rc));
		return rc;
	}
	rc = bench_target_init_nacre(&run->br_tgt[run->br_ntgt++], *fs, "/");
	if (rc == 0 && cfg->bc_mount)
		rc = bench_target_init_posix(&run->br_tgt[run->br_ntgt++],
					     BENCH_FUSE, cfg->bc_mount);
	if (rc == 0)
		rc = bench_target_init_posix(&run->br_tgt[run->br_ntgt++],
					     BENCH_LOCAL, cfg->bc_local);
	if (rc < 0) {
		fprintf(stderr, "nacre-bench: %s\n", strerror(-rc));
		return rc;
	}
	for (i = 0; i < run->br_ntgt; i++) {
		rc = bench_target_setup(&run->br_tgt[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void nb_teardown(struct bench_run *run, struct nacre_fs *fs)
{
	unsigned int i;

	for (i = 0; i < run->br_ntgt; i++)
		bench_target_fini(&run->br_tgt[i]);
	nacre_disconnect(fs);
}

/* The layout a new file gets in the libnacre bench directory, as text. */
static void nb_layout_text(struct bench_target *t, char *buf, size_t size)
{
	struct nacre_layout lo;
	struct nacre_file *f;
	char path[PATH_MAX + 16];
	int rc;

	snprintf(buf, size, "unknown");
	snprintf(path, sizeof(path), "%s/probe", t->bt_dir);
	rc = nacre_open(t->bt_fs, path, O_WRONLY | O_CREAT | O_EXCL, 0644, &f);
	if (rc < 0)
		return;
	nacre_close(f);
	if (nacre_getlayout(t->bt_fs, path, &lo) == 0)
		bench_layout_text(&lo, buf, size);
	nacre_unlink(t->bt_fs, path);
}

static void nb_print_small_header(const struct bench_run *run)
{
	const struct bench_cfg *cfg = run->br_cfg;
	char name[24];
	unsigned int i;

	printf("small files: %u per size (", cfg->bc_small_files);
	for (i = 0; i < cfg->bc_nsmall; i++)
		printf("%s%s", i ? ", " : "",
		       bench_small_name(cfg->bc_small_sizes[i], name, sizeof(name)));
	printf("), %u writers, then %u readers in a random order\n",
	       BENCH_SMALL_WORKERS, BENCH_SMALL_WORKERS);
	if (cfg->bc_small_inline)
		printf("  the pack directory keeps files of up to %u bytes inline (in the MDT)\n",
		       cfg->bc_small_inline);
	printf("  writes timed to nacre_sync() (libnacre: commits the packed files), to\n"
	       "  the fsync of each writer's last file and syncfs(2) (fuse: FUSE does not\n"
	       "  pass syncfs on, the fsync commits the mount's packed files), to syncfs(2)\n"
	       "  (local); cold reads after %s, libnacre on a new connection\n",
	       run->br_drop_ok ? "dropping the page cache" :
	       "nothing (fuse and local with O_DIRECT)");
}

static void nb_print_header(struct bench_run *run)
{
	const struct bench_cfg *cfg = run->br_cfg;
	char layout[128];

	nb_layout_text(&run->br_tgt[0], layout, sizeof(layout));
	printf("nacre-bench %s: %s (%s)%s%s, local %s\n", PACKAGE_VERSION,
	       cfg->bc_mds, cfg->bc_fsname, cfg->bc_mount ? ", mount " : "",
	       cfg->bc_mount ? cfg->bc_mount : "", cfg->bc_local);
	printf("layout of new files: %s\n", layout);
	printf("%llu MiB per stream; page cache %s before each uncached read%s\n",
	       (unsigned long long)(cfg->bc_size / MIB),
	       run->br_drop_ok ? "dropped" : "NOT dropped (not allowed here)",
	       run->br_direct ? "; fuse and local read with O_DIRECT" : "");
	if (cfg->bc_repeat > 1 && (cfg->bc_only & BENCH_W_SEQ))
		printf("sequential and random workloads: the median of %u runs, the targets "
		       "taking turns\n", cfg->bc_repeat);
	if (cfg->bc_only & BENCH_W_SMALL)
		nb_print_small_header(run);
	fflush(stdout);
}

static int nb_workloads(struct bench_run *run)
{
	int rc;

	unsigned int only = run->br_cfg->bc_only;

	/* The first check of data read fails on purpose: seq's, or small's
	 * when seq does not run. */
	bench_set_corrupt(run->br_cfg->bc_corrupt);
	rc = only & BENCH_W_TCP ? bench_tcp(run) : 0;
	if (rc == 0 && only & BENCH_W_SEQ)
		rc = bench_seq(run);
	if (rc == 0 && only & BENCH_W_META)
		rc = bench_meta(run);
	if (rc == 0 && only & BENCH_W_SMALL)
		rc = bench_small(run);
	return rc;
}

int main(int argc, char **argv)
{
	struct bench_run run = { 0 };
	struct bench_cfg cfg;
	struct nacre_fs *fs = NULL;
	double t0 = bench_now();
	int rc, sig;

	rc = nb_parse(argc, argv, &cfg);
	if (rc != 0)
		return rc;
	run.br_cfg = &cfg;
	run.br_drop_ok = bench_drop_caches();
	run.br_direct = !run.br_drop_ok;
	if (!run.br_drop_ok)
		bench_note("cannot drop the page cache here: fuse and local "
			   "uncached reads use O_DIRECT instead");
	/* Forked before any thread starts. */
	if (cfg.bc_mount && (cfg.bc_only & (BENCH_W_SEQ | BENCH_W_SMALL)) &&
	    bench_fuse_limit_start(&cfg, &run.br_limit, &run.br_limit_tgt) < 0)
		bench_note("the FUSE limit is not measured: no FUSE filesystem of its own "
			   "could be mounted");
	bench_catch_signals();
	rc = nb_setup(&run, &fs);
	if (rc == 0 && !cfg.bc_json)
		nb_print_header(&run);
	if (rc == 0)
		rc = nb_workloads(&run);
	nb_teardown(&run, fs);
	bench_fuse_limit_stop(run.br_limit);
	sig = bench_stop_signal();
	if (sig) {
		fprintf(stderr, "nacre-bench: stopped by %s; its files and "
			"directories are removed\n", strsignal(sig));
		bench_report_free();
		return 128 + sig;
	}
	/* -EILSEQ: a file of the wrong size, reported where it was found. */
	if (bench_mismatch_seen() || rc == -EILSEQ) {
		bench_mismatch_report();
		bench_report_free();
		return BENCH_EXIT_MISMATCH;
	}
	if (rc < 0) {
		bench_report_free();
		return BENCH_EXIT_IO;
	}
	if (cfg.bc_json) {
		bench_report_json(&run, bench_now() - t0);
	} else {
		bench_report_table(&run);
		printf("\nwall time %.1f s\n", bench_now() - t0);
	}
	bench_report_free();
	return BENCH_EXIT_OK;
}
