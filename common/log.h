/* SPDX-License-Identifier: MIT */
/*
 * Logging: nc_log(level, subsys, fmt, ...).  The macros test the level before
 * evaluating their arguments (as Redis serverLog does).  Errors and warnings
 * are rate-limited per call site but can never be masked by the level.
 */
#ifndef NC_LOG_H
#define NC_LOG_H

#include <stdbool.h>

enum nc_log_level {
	NC_LOG_ERROR = 0,
	NC_LOG_WARN = 1,
	NC_LOG_INFO = 2,
	NC_LOG_DEBUG = 3,
};

extern int nc_log_level;

/* Logs go to stderr unless nc_log_open() names a file.  0 or -errno. */
int nc_log_open(const char *path);
void nc_log_set_ident(const char *ident);
/* Every line goes to @fn instead, already formatted (NULL: back to the
 * file or stderr).  A program with a log of its own (mount.nacre, through
 * nacre_set_log()) takes the client library's lines this way. */
typedef void (*nc_log_sink_fn)(int level, const char *subsys, const char *msg, void *arg);
void nc_log_set_sink(nc_log_sink_fn fn, void *arg);
/* "error", "warn", "info", "debug" (or 0..3); -EINVAL for anything else. */
int nc_log_parse_level(const char *s);

void nc_log_write(int level, const char *subsys, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Rate limiter state for one call site: at most a burst per 5 seconds. */
struct nc_log_limit {
	long ll_window;
	int ll_count;
	int ll_dropped;
};
bool nc_log_limit_pass(struct nc_log_limit *lim);

#define nc_log(level, subsys, ...)                              \
	do {                                                    \
		if ((level) <= nc_log_level)                    \
			nc_log_write((level), (subsys), __VA_ARGS__); \
	} while (0)

#define nc_error(subsys, ...)                                    \
	do {                                                     \
		static struct nc_log_limit _lim;                 \
		if (nc_log_limit_pass(&_lim))                    \
			nc_log_write(NC_LOG_ERROR, (subsys), __VA_ARGS__); \
	} while (0)

#define nc_warn(subsys, ...)                                     \
	do {                                                     \
		static struct nc_log_limit _lim;                 \
		if (nc_log_limit_pass(&_lim))                    \
			nc_log_write(NC_LOG_WARN, (subsys), __VA_ARGS__); \
	} while (0)

#define nc_info(subsys, ...) nc_log(NC_LOG_INFO, (subsys), __VA_ARGS__)
#define nc_debug(subsys, ...) nc_log(NC_LOG_DEBUG, (subsys), __VA_ARGS__)

#endif
