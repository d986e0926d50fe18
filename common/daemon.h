/* SPDX-License-Identifier: MIT */
/*
 * What every nacre daemon's main() needs: config files, pid files, logging
 * setup and a clean stop on SIGTERM/SIGINT.
 */
#ifndef NC_DAEMON_H
#define NC_DAEMON_H

#include <stdbool.h>

/*
 * Expands "--config FILE" (or "--config=FILE") in @argv: each line of FILE,
 * "key = value" or "key", becomes "--key=value" / "--key", inserted where
 * --config stood, so options after it on the command line win.  '#' starts
 * a comment.  On success *nargv is a new NULL-terminated vector (free with
 * nc_config_free()).  -errno, or -NC_E_CONFIG with a message on stderr.
 */
int nc_config_expand(int argc, char **argv, int *nargc, char ***nargv);
void nc_config_free(int argc, char **argv);

/* Writes our pid to @path (a live pid already there: -EEXIST). */
int nc_pidfile_write(const char *path);
void nc_pidfile_remove(const char *path);

/* Blocks SIGTERM, SIGINT and SIGHUP in this and every later thread (call
 * before starting threads) and ignores SIGPIPE. */
void nc_signals_block(void);
/* Waits for SIGTERM or SIGINT; returns the signal. */
int nc_signals_wait(void);

/*
 * Handles the options every daemon shares: 'L' (--log FILE) and 'v'
 * (--log-level LEVEL).  Returns 0 when handled, -1 when @opt is not one of
 * them, or an exit status (1 or 2) after printing why @arg is bad.
 */
int nc_daemon_log_option(const char *prog, int opt, const char *arg);

/* Raises the soft limit on open descriptors to the hard one (done by
 * nc_daemon_run()): a server holds one per connection, and an OSS keeps
 * pack objects open (oss/fdcache.h).  The soft limit of a shell is often
 * 1024, the hard one far higher. */
void nc_daemon_raise_nofile(void);

/* What nc_daemon_run() drives: a server made and started by @dr_start,
 * stopped and freed by @dr_free. */
struct nc_daemon {
	const char *dr_name;            /* "nacre-mds", for logs */
	const char *dr_pidfile;         /* NULL: none */
	int (*dr_start)(void *arg);     /* 0 or -errno, logged by the caller */
	void (*dr_free)(void *arg);
	void *dr_arg;
};

/*
 * The life of a daemon after its options are parsed: blocks the stop
 * signals (before any thread exists), starts the server, writes the pid
 * file, waits for SIGTERM or SIGINT, stops the server and removes the pid
 * file.  Returns the process exit status.
 */
int nc_daemon_run(const struct nc_daemon *d);

/* Parses a size with optional K/M/G/T suffix (binary).  0 or -EINVAL. */
int nc_parse_size(const char *s, unsigned long long *out);

#endif
