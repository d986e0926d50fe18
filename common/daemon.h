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

/* Parses a size with optional K/M/G/T suffix (binary).  0 or -EINVAL. */
int nc_parse_size(const char *s, unsigned long long *out);

#endif
