/* SPDX-License-Identifier: MIT */
/*
 * mount.nacre: mounts a nacre filesystem through FUSE.
 *
 *   mount.nacre [-f] [-d] [-o OPTIONS] ADDRESS:/FSNAME MOUNTPOINT
 *
 * mount(8) runs it as "mount.nacre SPEC DIR [-sfnv] [-o OPTIONS]".
 *
 * The mount command must fail, with a clear message and a non-zero status,
 * when the address, the filesystem name or the mountpoint is wrong, so the
 * helper connects and mounts before the command returns.  libnacre starts
 * threads when it connects, and threads do not survive fork(): so instead of
 * forking after the mount, as fuse_daemonize() does, the helper forks first.
 * The child connects, mounts, detaches from the terminal and writes its
 * outcome to a pipe; the parent waits on that pipe and exits with the
 * child's status.  With -f the helper stays in the foreground and forks
 * nothing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "common/daemon.h"
#include "common/malloc_keep.h"
#include "common/metrics_http.h"
#include "utils/mnt.h"

#define MNT_PROG "mount.nacre"

/* Exit statuses (documented in mount.nacre(8)). */
#define MNT_EXIT_OK 0
#define MNT_EXIT_FAIL 1
#define MNT_EXIT_USAGE 2

#define MNT_DEF_THREADS 16u
#define MNT_MAX_THREADS 1024u
#define MNT_IDLE_THREADS 10u
/* As NFS's attribute cache (acregmin 3 s .. acregmax 60 s): long enough that
 * a dataset's tree is walked from the kernel's caches, short enough that
 * another client's change shows soon; an open always revalidates with the
 * MDS (close-to-open), so data read after open is never stale. */
#define MNT_DEF_CACHE_TIMEOUT 10.0
/* A name another client creates shows within this time. */
#define MNT_DEF_NEGATIVE_TIMEOUT 1.0
/* The kernel gives a FUSE mount 128 KiB of readahead, which it sends as
 * 128 KiB reads, one or two at a time: far too little to keep the OSTs of
 * a layout busy.  8 MiB is two rows of a 4+2 layout of 1 MiB chunks, sent
 * as 1 MiB requests in parallel. */
#define MNT_DEF_READ_AHEAD_KB 8192
#define MNT_MAX_OPT_ARGS 16
/* nacre's "invalid address" code (stable, like every nacre code). */
#define MNT_NACRE_E_ADDR 4102

/* ---- Logging ---- */

int mnt_log_level = MNT_LOG_INFO;

/*
 * Where log lines go.  Before the daemon detaches, errors are also echoed to
 * the terminal as "mount.nacre: ..." so that a failed mount says why; once
 * detached, a daemon without log= logs to syslog.
 */
enum mnt_log_sink {
	MNT_SINK_NONE,
	MNT_SINK_STDERR,
	MNT_SINK_FILE,
	MNT_SINK_SYSLOG,
};

static enum mnt_log_sink mnt_log_sink = MNT_SINK_STDERR;
static bool mnt_log_echo;
static FILE *mnt_log_file;
static pthread_mutex_t mnt_log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const mnt_level_names[] = { "error", "warn", "info",
					       "debug" };

static int mnt_log_parse_level(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (!strcasecmp(s, mnt_level_names[i]))
			return i;
	if (s[0] >= '0' && s[0] <= '3' && s[1] == '\0')
		return s[0] - '0';
	return -EINVAL;
}

static int mnt_log_open(const char *path)
{
	FILE *f = fopen(path, "ae");

	if (!f)
		return -errno;
	setvbuf(f, NULL, _IOLBF, 0);
	mnt_log_file = f;
	return 0;
}

static void mnt_log_vwrite(int level, const char *fmt, va_list ap)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO,
				    LOG_DEBUG };
	char msg[1024];
	struct timespec ts;
	size_t len;
	struct tm tm;

	if (level < MNT_LOG_ERROR || level > MNT_LOG_DEBUG)
		level = MNT_LOG_ERROR;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = strlen(msg);
	while (len && msg[len - 1] == '\n')
		msg[--len] = '\0';
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	pthread_mutex_lock(&mnt_log_lock);
	if (mnt_log_sink == MNT_SINK_SYSLOG)
		syslog(prio[level], "%s", msg);
	else if (mnt_log_sink != MNT_SINK_NONE)
		fprintf(mnt_log_sink == MNT_SINK_FILE ? mnt_log_file : stderr,
			"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%d] %s mnt: %s\n",
			tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			tm.tm_hour, tm.tm_min, tm.tm_sec,
			ts.tv_nsec / 1000000, MNT_PROG, (int)getpid(),
			mnt_level_names[level], msg);
	if (mnt_log_echo && level <= MNT_LOG_WARN)
		fprintf(stderr, MNT_PROG ": %s\n", msg);
	pthread_mutex_unlock(&mnt_log_lock);
}

void mnt_log_write(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mnt_log_vwrite(level, fmt, ap);
	va_end(ap);
}

/*
 * libfuse's own messages (mount errors, -d traces) join the same log.  It
 * builds some lines from several calls, so pieces are gathered per thread
 * until the newline.
 */
static void mnt_log_fuse(enum fuse_log_level level, const char *fmt,
			 va_list ap)
{
	static __thread char line[1024];
	static __thread size_t used;
	int l, n;

	n = vsnprintf(line + used, sizeof(line) - used, fmt, ap);
	if (n < 0)
		return;
	used += (size_t)n;
	if (used >= sizeof(line))
		used = sizeof(line) - 1;
	if (used < sizeof(line) - 1 && (used == 0 || line[used - 1] != '\n'))
		return;
	used = 0;

	if (level <= FUSE_LOG_ERR)
		l = MNT_LOG_ERROR;
	else if (level == FUSE_LOG_WARNING)
		l = MNT_LOG_WARN;
	else if (level < FUSE_LOG_DEBUG)
		l = MNT_LOG_INFO;
	else
		l = MNT_LOG_DEBUG;
	if (l <= mnt_log_level)
		mnt_log_write(l, "%s", line);
}

/* libnacre's own lines (nacre_set_log()) join the mount's log. */
static void mnt_log_lib(int level, const char *subsys, const char *msg, void *arg)
{
	(void)arg;
	if (level <= mnt_log_level)
		mnt_log_write(level, "%s: %s", subsys, msg);
}

static void mnt_log_setup(bool foreground)
{
	if (mnt_log_file) {
		mnt_log_sink = MNT_SINK_FILE;
		mnt_log_echo = true;
	} else if (foreground) {
		mnt_log_sink = MNT_SINK_STDERR;
	} else {
		mnt_log_sink = MNT_SINK_NONE;
		mnt_log_echo = true;
	}
	fuse_set_log_func(mnt_log_fuse);
	nacre_set_log(mnt_log_lib, NULL);
}

/* The terminal is gone: stop echoing, and fall back to syslog. */
static void mnt_log_detach(void)
{
	pthread_mutex_lock(&mnt_log_lock);
	mnt_log_echo = false;
	if (mnt_log_sink == MNT_SINK_NONE || mnt_log_sink == MNT_SINK_STDERR) {
		openlog(MNT_PROG, LOG_PID, LOG_DAEMON);
		mnt_log_sink = MNT_SINK_SYSLOG;
	}
	pthread_mutex_unlock(&mnt_log_lock);
}

/* ---- Command line ---- */

struct mnt_args {
	const char *ma_spec;
	char ma_addr[NACRE_ADDR_MAX + 1];
	char ma_fsname[NACRE_FSNAME_MAX + 1];
	const char *ma_mountpoint;
	const char *ma_log_path;
	int ma_log_level;               /* -1: not given */
	int ma_timeout_ms;              /* 0: libnacre's default */
	int ma_retry_ms;
	unsigned int ma_threads;
	double ma_attr_timeout;
	double ma_entry_timeout;
	double ma_negative_timeout;
	long ma_read_ahead_kb;
	bool ma_pack;
	long ma_pack_max;
	long ma_inline_max;
	bool ma_foreground;
	bool ma_debug;
	bool ma_allow_other;
	bool ma_ro;
	const char *ma_metrics;         /* metrics port; NULL: none */
	char ma_kflags[256];            /* mount flags passed on to FUSE */
	char ma_keyfile[PATH_MAX];      /* keyfile=, absolute; "": the default */
	char ma_pidfile[PATH_MAX];      /* pidfile=, absolute; "": none */
	/* Copies of the -o arguments, which the parsed values point into:
	 * argv stays intact for ps(1) and pgrep -f. */
	char *ma_optbufs[MNT_MAX_OPT_ARGS];
	unsigned int ma_noptbufs;
};

void mnt_set_read_ahead(const char *mountpoint, long kb)
{
	char line[4096], dev[32] = "", path[128];
	unsigned int maj, min;
	FILE *f;

	if (kb <= 0)
		return;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		mnt_log(MNT_LOG_WARN, "read_ahead_kb: /proc/self/mountinfo: %s", strerror(errno));
		return;
	}
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ...": the last match is ours. */
	while (fgets(line, sizeof(line), f)) {
		char mp[4096];

		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, mp) == 3 &&
		    !strcmp(mp, mountpoint))
			snprintf(dev, sizeof(dev), "%u:%u", maj, min);
	}
	fclose(f);
	if (!dev[0]) {
		mnt_log(MNT_LOG_WARN, "read_ahead_kb: %s not in /proc/self/mountinfo",
			mountpoint);
		return;
	}
	snprintf(path, sizeof(path), "/sys/class/bdi/%s/read_ahead_kb", dev);
	f = fopen(path, "we");
	if (f) {
		int bad = fprintf(f, "%ld\n", kb) < 0;

		if (fclose(f) != 0 || bad)
			f = NULL;
	}
	if (!f) {
		mnt_log(MNT_LOG_WARN, "read_ahead_kb: cannot set %s: %s", path, strerror(errno));
		return;
	}
	mnt_log(MNT_LOG_INFO, "readahead window %ld KiB", kb);
}

static void mnt_usage(FILE *out)
{
	fprintf(out,
		"usage: " MNT_PROG " [-f] [-d] [-o OPTIONS] ADDRESS:/FSNAME MOUNTPOINT\n"
		"\n"
		"Mounts the nacre filesystem FSNAME, whose MDS listens at ADDRESS\n"
		"(tcp://host:port or host:port), on MOUNTPOINT.\n"
		"\n"
		"  -f               stay in the foreground\n"
		"  -d               FUSE debug output (implies -f)\n"
		"  -s, -n, -v       accepted for mount(8), ignored\n"
		"  -o OPTIONS       comma-separated:\n"
		"     log=FILE          log to FILE (default: stderr, then syslog)\n"
		"     log_level=LEVEL   error, warn, info (default) or debug\n"
		"     timeout=MS        per-request timeout in milliseconds\n"
		"     retry=MS          how long to wait for a restarting server\n"
		"     threads=N         most FUSE worker threads (default 16)\n"
		"     attr_timeout=SEC  attribute cache time (default 10)\n"
		"     entry_timeout=SEC name cache time (default 10)\n"
		"     negative_timeout=SEC  absent-name cache time (default 1)\n"
		"     read_ahead_kb=KB  the kernel's readahead window (default 8192)\n"
		"     metrics=ADDR      serve this client's counters for Prometheus on\n"
		"                       tcp://host:port (GET /metrics; port 0: any)\n"
		"     pack              pack every small file created through the mount\n"
		"     pack_max=BYTES    the largest file kept packed (default 1048576)\n"
		"     inline_max=BYTES  with pack: files up to BYTES (at most 4096) keep\n"
		"                       their bytes in the MDT (default 0: none)\n"
		"     keyfile=FILE      the cluster key (default: $NACRE_KEYFILE, else\n"
		"                       /etc/nacre/FSNAME.key)\n"
		"     pidfile=FILE      write the serving process's pid to FILE while\n"
		"                       it serves the mount\n"
		"     allow_other, ro, rw, debug, default_permissions (always on),\n"
		"     nosuid, nodev, noexec, ...: passed to FUSE\n"
		"     defaults, _netdev, auto, noauto, user, nofail, ...: ignored\n"
		"\n"
		"example: " MNT_PROG " tcp://127.0.0.1:7300:/demo /mnt/nacre\n");
}

static int mnt_parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int mnt_parse_secs(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Mount flags that libfuse hands to mount(2). */
static bool mnt_opt_is_kflag(const char *opt)
{
	static const char *const kflags[] = {
		"suid", "nosuid", "dev",   "nodev",      "exec",    "noexec",
		"sync", "async",  "atime", "noatime",    "dirsync",
	};

	for (size_t i = 0; i < sizeof(kflags) / sizeof(kflags[0]); i++)
		if (!strcmp(opt, kflags[i]))
			return true;
	return false;
}

/* Options mount(8) or fstab pass that mean nothing to the helper. */
static bool mnt_opt_is_ignored(const char *opt)
{
	static const char *const ignored[] = {
		"defaults", "_netdev", "auto",  "noauto", "user",
		"nouser",   "users",   "owner", "group",  "nofail",
		/* FUSE mounts are relatime, which these cannot change. */
		"relatime", "strictatime", "nodiratime",
	};

	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (!strcmp(opt, ignored[i]))
			return true;
	/* systemd and util-linux keep x-* and comment= for themselves;
	 * libmount adds user=NAME for user mounts. */
	return !strncmp(opt, "x-", 2) || !strncmp(opt, "comment=", 8) ||
	       !strncmp(opt, "user=", 5);
}

static int mnt_kflag_add(struct mnt_args *a, const char *opt)
{
	size_t len = strlen(a->ma_kflags);

	if (len + 1 + strlen(opt) + 1 > sizeof(a->ma_kflags))
		return -E2BIG;
	snprintf(a->ma_kflags + len, sizeof(a->ma_kflags) - len, ",%s", opt);
	return 0;
}

/* keyfile= and pidfile=: made absolute into @dst (PATH_MAX bytes), since
 * the helper leaves its working directory when it goes to the background
 * and its log lines must name the file unambiguously. */
static int mnt_abs_path_set(char *dst, const char *val)
{
	char cwd[PATH_MAX];
	int n;

	if (!*val)
		return -EINVAL;
	if (val[0] == '/')
		n = snprintf(dst, PATH_MAX, "%s", val);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(dst, PATH_MAX, "%s/%s", cwd, val);
	else
		return -errno;
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

static int mnt_opt_one(struct mnt_args *a, char *opt)
{
	char *val = strchr(opt, '=');
	long v;
	int rc;

	if (val)
		*val++ = '\0';
	if (val && !strcmp(opt, "log")) {
		if (!*val)
			goto bad_value;
		a->ma_log_path = val;
	} else if (val && !strcmp(opt, "log_level")) {
		rc = mnt_log_parse_level(val);
		if (rc < 0)
			goto bad_value;
		a->ma_log_level = rc;
	} else if (val && !strcmp(opt, "timeout")) {
		if (mnt_parse_int(val, 1, INT_MAX, &v))
			goto bad_value;
		a->ma_timeout_ms = (int)v;
	} else if (val && !strcmp(opt, "retry")) {
		if (mnt_parse_int(val, 1, INT_MAX, &v))
			goto bad_value;
		a->ma_retry_ms = (int)v;
	} else if (val && !strcmp(opt, "threads")) {
		if (mnt_parse_int(val, 1, MNT_MAX_THREADS, &v))
			goto bad_value;
		a->ma_threads = (unsigned int)v;
	} else if (val && !strcmp(opt, "attr_timeout")) {
		if (mnt_parse_secs(val, &a->ma_attr_timeout))
			goto bad_value;
	} else if (val && !strcmp(opt, "entry_timeout")) {
		if (mnt_parse_secs(val, &a->ma_entry_timeout))
			goto bad_value;
	} else if (val && !strcmp(opt, "metrics")) {
		if (strncmp(val, "tcp://", 6) || !strchr(val + 6, ':'))
			goto bad_value;
		a->ma_metrics = val;
	} else if (!val && !strcmp(opt, "pack")) {
		a->ma_pack = true;
	} else if (val && !strcmp(opt, "pack_max")) {
		if (mnt_parse_int(val, 1, 64L << 20, &a->ma_pack_max))
			goto bad_value;
	} else if (val && !strcmp(opt, "inline_max")) {
		if (mnt_parse_int(val, 0, NACRE_INLINE_MAX, &a->ma_inline_max))
			goto bad_value;
	} else if (val && !strcmp(opt, "read_ahead_kb")) {
		if (mnt_parse_int(val, 0, 1L << 20, &a->ma_read_ahead_kb))
			goto bad_value;
	} else if (val && !strcmp(opt, "keyfile")) {
		if (mnt_abs_path_set(a->ma_keyfile, val))
			goto bad_value;
	} else if (val && !strcmp(opt, "pidfile")) {
		if (mnt_abs_path_set(a->ma_pidfile, val))
			goto bad_value;
	} else if (val && !strcmp(opt, "negative_timeout")) {
		if (mnt_parse_secs(val, &a->ma_negative_timeout))
			goto bad_value;
	} else if (val) {
		if (!strcmp(opt, "comment") || !strcmp(opt, "user") ||
		    !strncmp(opt, "x-", 2))
			return 0;
		fprintf(stderr, MNT_PROG ": unknown option '%s=%s'\n", opt, val);
		return -EINVAL;
	} else if (!strcmp(opt, "allow_other")) {
		a->ma_allow_other = true;
	} else if (!strcmp(opt, "default_permissions")) {
		/* Always on: see mnt.h. */
	} else if (!strcmp(opt, "ro")) {
		a->ma_ro = true;
	} else if (!strcmp(opt, "rw")) {
		a->ma_ro = false;
	} else if (!strcmp(opt, "debug")) {
		a->ma_debug = true;
	} else if (mnt_opt_is_kflag(opt)) {
		if (mnt_kflag_add(a, opt)) {
			fprintf(stderr, MNT_PROG ": too many options\n");
			return -E2BIG;
		}
	} else if (!mnt_opt_is_ignored(opt)) {
		fprintf(stderr, MNT_PROG ": unknown option '%s'\n", opt);
		return -EINVAL;
	}
	return 0;

bad_value:
	fprintf(stderr, MNT_PROG ": bad value for option %s: '%s'\n", opt, val);
	return -EINVAL;
}

/* Parses one -o argument. */
static int mnt_opts_parse(struct mnt_args *a, const char *arg)
{
	char *save = NULL, *opts;

	if (a->ma_noptbufs == MNT_MAX_OPT_ARGS) {
		fprintf(stderr, MNT_PROG ": too many -o arguments\n");
		return -E2BIG;
	}
	opts = strdup(arg);
	if (!opts) {
		fprintf(stderr, MNT_PROG ": out of memory\n");
		return -ENOMEM;
	}
	a->ma_optbufs[a->ma_noptbufs++] = opts;
	for (char *opt = strtok_r(opts, ",", &save); opt;
	     opt = strtok_r(NULL, ",", &save)) {
		int rc = mnt_opt_one(a, opt);

		if (rc)
			return rc;
	}
	return 0;
}

static bool mnt_fsname_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

/*
 * Splits "ADDRESS:/FSNAME" at the last ":/", so that "tcp://h:p:/fs" keeps
 * its "tcp://".  ADDRESS may list one address per transport, separated by
 * commas ("rdma://h:p,tcp://h:p").  It may not hold backslashes or blanks:
 * it becomes the FUSE fsname option (commas escaped there).
 */
static int mnt_spec_parse(struct mnt_args *a, const char *spec)
{
	const char *sep = NULL, *name;
	size_t alen, nlen;

	for (const char *p = strstr(spec, ":/"); p; p = strstr(p + 1, ":/"))
		sep = p;
	if (!sep || sep == spec)
		goto bad_spec;
	alen = (size_t)(sep - spec);
	if (alen > NACRE_ADDR_MAX || strcspn(spec, " \t\n\\") < alen)
		goto bad_spec;
	name = sep + 2;
	nlen = strlen(name);
	if (nlen && name[nlen - 1] == '/')
		nlen--;
	if (nlen == 0 || nlen > NACRE_FSNAME_MAX)
		goto bad_spec;
	for (size_t i = 0; i < nlen; i++)
		if (!mnt_fsname_char_ok(name[i]))
			goto bad_spec;
	memcpy(a->ma_addr, spec, alen);
	a->ma_addr[alen] = '\0';
	memcpy(a->ma_fsname, name, nlen);
	a->ma_fsname[nlen] = '\0';
	a->ma_spec = spec;
	return 0;

bad_spec:
	fprintf(stderr,
		MNT_PROG ": bad filesystem spec '%s' (want ADDRESS:/FSNAME, "
		"e.g. tcp://mds:7300:/data)\n", spec);
	return -EINVAL;
}

enum mnt_parse_result {
	MNT_PARSE_RUN,
	MNT_PARSE_HELP,
	MNT_PARSE_BAD,
};

static enum mnt_parse_result mnt_args_parse(int argc, char **argv,
					    struct mnt_args *a)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pos[2] = { NULL, NULL };
	unsigned int npos = 0;
	int c;

	/* A leading '-' returns operands in order as option 1, so options may
	 * follow the operands (as mount(8) passes them) whatever
	 * POSIXLY_CORRECT says. */
	while ((c = getopt_long(argc, argv, "-fdsnvo:t:hV", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 1:
			if (npos == 2) {
				fprintf(stderr, MNT_PROG ": too many arguments\n");
				return MNT_PARSE_BAD;
			}
			pos[npos++] = optarg;
			break;
		case 'f':
			a->ma_foreground = true;
			break;
		case 'd':
			a->ma_debug = true;
			break;
		case 's':
		case 'n':
		case 'v':
		case 't':
			/* mount(8): sloppy, no mtab, verbose, type.subtype. */
			break;
		case 'o':
			if (mnt_opts_parse(a, optarg))
				return MNT_PARSE_BAD;
			break;
		case 'h':
			mnt_usage(stdout);
			return MNT_PARSE_HELP;
		case 'V':
			printf(MNT_PROG " (nacre) " PACKAGE_VERSION "\n");
			return MNT_PARSE_HELP;
		default:
			/* getopt has printed the one-line reason. */
			return MNT_PARSE_BAD;
		}
	}
	if (npos < 2) {
		fprintf(stderr, MNT_PROG ": %s (try '" MNT_PROG " --help')\n",
			npos ? "missing MOUNTPOINT" : "missing ADDRESS:/FSNAME");
		return MNT_PARSE_BAD;
	}
	if (mnt_spec_parse(a, pos[0]))
		return MNT_PARSE_BAD;
	a->ma_mountpoint = pos[1];
	if (a->ma_debug)
		a->ma_foreground = true;
	return MNT_PARSE_RUN;
}

/* ---- Start-up ---- */

/*
 * Forks; the parent waits for the child's outcome and exits with it, so this
 * returns only in the child, with the write end of the pipe in @status_fd.
 */
static int mnt_fork(int *status_fd)
{
	unsigned char code;
	int fds[2], wstatus;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(fds[0]);
		close(fds[1]);
		return -err;
	}
	if (pid == 0) {
		close(fds[0]);
		*status_fd = fds[1];
		return 0;
	}
	close(fds[1]);
	do
		n = read(fds[0], &code, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		exit(code);
	/* The child died before it could tell: it had no chance to print. */
	if (waitpid(pid, &wstatus, 0) == pid && WIFSIGNALED(wstatus))
		fprintf(stderr, MNT_PROG ": killed by signal %d while mounting\n",
			WTERMSIG(wstatus));
	else
		fprintf(stderr, MNT_PROG ": failed while mounting\n");
	exit(MNT_EXIT_FAIL);
}

static void mnt_report(int *status_fd, int code)
{
	unsigned char c = (unsigned char)code;

	if (*status_fd < 0)
		return;
	if (write(*status_fd, &c, 1) != 1)
		mnt_log(MNT_LOG_WARN, "cannot report status: %s",
			strerror(errno));
	close(*status_fd);
	*status_fd = -1;
}

/* Leaves the terminal, as fuse_daemonize() would: new session, cwd "/",
 * stdio on /dev/null, logs to the log file or else to syslog. */
static void mnt_detach(void)
{
	int fd;

	if (setsid() < 0)
		mnt_log(MNT_LOG_WARN, "setsid: %s", strerror(errno));
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	mnt_log_detach();
	/* Cannot fail after chdir("/") in a mounted system. */
	if (chdir("/"))
		mnt_log(MNT_LOG_WARN, "chdir /: %s", strerror(errno));
}

/* The arguments of fuse_session_new(). */
static int mnt_fuse_args(const struct mnt_args *a, struct fuse_args *fargs)
{
	char opts[2 * NACRE_ADDR_MAX + NACRE_FSNAME_MAX + 512];
	char spec[2 * (NACRE_ADDR_MAX + NACRE_FSNAME_MAX) + 8];
	size_t k = 0;
	int n;

	/* A comma would end the option: libfuse takes "\," for one. */
	for (const char *p = a->ma_spec; *p && k + 3 < sizeof(spec); p++) {
		if (*p == ',')
			spec[k++] = '\\';
		spec[k++] = *p;
	}
	spec[k] = '\0';
	n = snprintf(opts, sizeof(opts),
		     "fsname=%s,subtype=nacre,default_permissions%s%s%s",
		     spec, a->ma_allow_other ? ",allow_other" : "",
		     a->ma_ro ? ",ro" : "", a->ma_kflags);
	if (n < 0 || (size_t)n >= sizeof(opts))
		return -E2BIG;
	if (fuse_opt_add_arg(fargs, MNT_PROG) || fuse_opt_add_arg(fargs, "-o") ||
	    fuse_opt_add_arg(fargs, opts) ||
	    (a->ma_debug && fuse_opt_add_arg(fargs, "-d"))) {
		fuse_opt_free_args(fargs);
		return -ENOMEM;
	}
	return 0;
}

static int mnt_loop(struct fuse_session *se, unsigned int threads)
{
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	int rc;

	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	fuse_loop_cfg_set_idle_threads(cfg, MNT_IDLE_THREADS);
	fuse_loop_cfg_set_max_threads(cfg, threads);
	rc = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return rc;
}

static bool mnt_err_is_key(int rc)
{
	return rc == -NACRE_E_AUTH || rc == -NACRE_E_NOKEY || rc == -NACRE_E_KEYMODE ||
	       rc == -NACRE_E_KEYFILE;
}

/* The key file the connection used, for error messages. */
static const char *mnt_keyfile_name(const struct mnt_args *a, char *buf, size_t len)
{
	if (nacre_keyfile_path(a->ma_keyfile[0] ? a->ma_keyfile : NULL, a->ma_fsname, buf, len))
		return "?";
	return buf;
}

/* Connects, mounts and serves until unmounted; returns the exit status. */
static int mnt_run(const struct mnt_args *a, int status_fd)
{
	struct fuse_args fargs = FUSE_ARGS_INIT(0, NULL);
	struct nacre_opts nopts = {
		.cred = NULL,
		.timeout_ms = a->ma_timeout_ms,
		.retry_ms = a->ma_retry_ms,
		/* The kernel caches names for the mount; the mount asks by FID. */
		.attr_cache_ms = -1,
		.pack_all = a->ma_pack,
		.pack_max = (uint32_t)a->ma_pack_max,
		.inline_max = (uint32_t)a->ma_inline_max,
		/* The kernel reads ahead for the mount (read_ahead_kb), with
		 * several reads of one file in flight at once and out of
		 * order: libnacre's own stream detection would only churn. */
		.readahead_kb = -1,
		.keyfile = a->ma_keyfile[0] ? a->ma_keyfile : NULL,
	};
	int code = MNT_EXIT_FAIL;
	struct nc_mhttp *metrics = NULL;
	struct fuse_session *se;
	sigset_t sigs, oldsigs;
	struct nacre_fs *fs;
	struct mnt_ctx ctx;
	char keyfile[PATH_MAX];
	bool pid_written = false;
	int rc;

	/* libnacre's threads inherit this mask: the stop signals must reach
	 * the thread that runs the FUSE loop, or it would not wake up. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, &oldsigs);
	rc = nacre_connect(a->ma_addr, a->ma_fsname, &nopts, &fs);
	pthread_sigmask(SIG_SETMASK, &oldsigs, NULL);
	if (rc < 0) {
		mnt_log(MNT_LOG_ERROR, "cannot connect to filesystem '%s' at %s: %s%s%s%s",
			a->ma_fsname, a->ma_addr, nacre_strerror(rc),
			mnt_err_is_key(rc) ? " (key file " : "",
			mnt_err_is_key(rc) ? mnt_keyfile_name(a, keyfile, sizeof(keyfile)) : "",
			mnt_err_is_key(rc) ? ")" : "");
		if (rc == -MNT_NACRE_E_ADDR)
			code = MNT_EXIT_USAGE;
		goto out_report;
	}
	rc = mnt_ctx_init(&ctx, fs, a->ma_attr_timeout, a->ma_entry_timeout,
			   a->ma_negative_timeout);
	if (rc < 0) {
		mnt_log(MNT_LOG_ERROR, "init: %s", strerror(-rc));
		goto out_disconnect;
	}
	if (a->ma_metrics && mnt_metrics_start(&ctx, a->ma_metrics, &metrics) < 0)
		goto out_ctx_fini;
	rc = mnt_fuse_args(a, &fargs);
	if (rc < 0) {
		mnt_log(MNT_LOG_ERROR, "FUSE arguments: %s", strerror(-rc));
		goto out_metrics_stop;
	}
	/* libfuse prints its own reason when one of these fails. */
	se = fuse_session_new(&fargs, &mnt_ll_ops, sizeof(mnt_ll_ops), &ctx);
	if (!se)
		goto out_free_args;
	ctx.mc_se = se;
	ctx.mc_mountpoint = a->ma_mountpoint;
	ctx.mc_read_ahead_kb = a->ma_read_ahead_kb;
	if (fuse_set_signal_handlers(se))
		goto out_destroy_session;
	/* This process serves the mount to its end (the helper forked
	 * already): its pid goes out before the mount command returns, so
	 * whoever mounted can wait for it to end after unmounting. */
	if (a->ma_pidfile[0]) {
		rc = nc_pidfile_write(a->ma_pidfile);
		if (rc < 0) {
			mnt_log(MNT_LOG_ERROR, "pid file %s: %s", a->ma_pidfile,
				rc == -EEXIST ? "in use by a running process" : strerror(-rc));
			goto out_remove_handlers;
		}
		pid_written = true;
	}
	if (fuse_session_mount(se, a->ma_mountpoint)) {
		mnt_log(MNT_LOG_ERROR, "cannot mount on %s", a->ma_mountpoint);
		goto out_remove_handlers;
	}
	mnt_log(MNT_LOG_INFO, "mounted %s on %s", a->ma_spec, a->ma_mountpoint);
	if (status_fd >= 0)
		mnt_detach();
	else
		fuse_daemonize(1);
	mnt_report(&status_fd, MNT_EXIT_OK);

	rc = mnt_loop(se, a->ma_threads);
	/* The loop has stopped taking requests; lookups and reads begun
	 * still answer. */
	mnt_async_drain(&ctx);
	if (rc < 0) {
		mnt_log(MNT_LOG_ERROR, "session loop: %s", strerror(-rc));
	} else {
		if (rc > 0)
			mnt_log(MNT_LOG_INFO, "signal %d: unmounting %s", rc,
				a->ma_mountpoint);
		code = MNT_EXIT_OK;
	}
	fuse_session_unmount(se);
	mnt_log(MNT_LOG_INFO, "unmounted %s", a->ma_mountpoint);
out_remove_handlers:
	fuse_remove_signal_handlers(se);
out_destroy_session:
	fuse_session_destroy(se);
out_free_args:
	fuse_opt_free_args(&fargs);
out_metrics_stop:
	nc_mhttp_stop(metrics);
out_ctx_fini:
	mnt_ctx_fini(&ctx);
out_disconnect:
	/* Writes what is still pending: the process is not done before. */
	nacre_disconnect(fs);
	if (pid_written)
		nc_pidfile_remove(a->ma_pidfile);
out_report:
	mnt_report(&status_fd, code);
	return code;
}

/* The root of a nacre filesystem is a directory; the kernel would mount it
 * over a file too, and then find the root's type changed. */
static int mnt_mountpoint_check(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int main(int argc, char **argv)
{
	struct mnt_args a = {
		.ma_log_level = -1,
		.ma_threads = MNT_DEF_THREADS,
		.ma_attr_timeout = MNT_DEF_CACHE_TIMEOUT,
		.ma_entry_timeout = MNT_DEF_CACHE_TIMEOUT,
		.ma_negative_timeout = MNT_DEF_NEGATIVE_TIMEOUT,
		.ma_read_ahead_kb = MNT_DEF_READ_AHEAD_KB,
	};
	char mountpoint[PATH_MAX];
	int status_fd = -1;
	int rc, err;

	switch (mnt_args_parse(argc, argv, &a)) {
	case MNT_PARSE_RUN:
		break;
	case MNT_PARSE_HELP:
		rc = MNT_EXIT_OK;
		goto out_free_opts;
	default:
		rc = MNT_EXIT_USAGE;
		goto out_free_opts;
	}
	if (a.ma_log_level >= 0)
		mnt_log_level = a.ma_log_level;
	else if (a.ma_debug)
		mnt_log_level = MNT_LOG_DEBUG;
	/* Absolute, because the daemon leaves its working directory and
	 * libfuse unmounts by this path. */
	rc = MNT_EXIT_FAIL;
	if (!realpath(a.ma_mountpoint, mountpoint)) {
		fprintf(stderr, MNT_PROG ": %s: %s\n", a.ma_mountpoint,
			strerror(errno));
		goto out_free_opts;
	}
	a.ma_mountpoint = mountpoint;
	err = mnt_mountpoint_check(mountpoint);
	if (err < 0) {
		fprintf(stderr, MNT_PROG ": %s: %s\n", mountpoint,
			strerror(-err));
		goto out_free_opts;
	}
	if (a.ma_log_path) {
		err = mnt_log_open(a.ma_log_path);
		if (err < 0) {
			fprintf(stderr, MNT_PROG ": log file %s: %s\n",
				a.ma_log_path, strerror(-err));
			goto out_free_opts;
		}
	}
	mnt_log_setup(a.ma_foreground);
	/* A server that went away must not kill us through a socket. */
	signal(SIGPIPE, SIG_IGN);
	/* Freed request buffers stay ours for the next requests. */
	nc_malloc_keep_freed();
	if (!a.ma_foreground) {
		err = mnt_fork(&status_fd);
		if (err < 0) {
			fprintf(stderr, MNT_PROG ": fork: %s\n", strerror(-err));
			goto out_free_opts;
		}
	}
	rc = mnt_run(&a, status_fd);
out_free_opts:
	for (unsigned int i = 0; i < a.ma_noptbufs; i++)
		free(a.ma_optbufs[i]);
	return rc;
}
