/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

int nc_log_level = NC_LOG_INFO;

static FILE *log_file;
static char log_ident[32] = "nacre";
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static nc_log_sink_fn log_sink;
static void *log_sink_arg;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

int nc_log_open(const char *path)
{
	FILE *f = fopen(path, "a");

	if (!f)
		return -errno;
	setvbuf(f, NULL, _IOLBF, 0);
	pthread_mutex_lock(&log_lock);
	if (log_file)
		fclose(log_file);
	log_file = f;
	pthread_mutex_unlock(&log_lock);
	return 0;
}

void nc_log_set_sink(nc_log_sink_fn fn, void *arg)
{
	pthread_mutex_lock(&log_lock);
	log_sink = fn;
	log_sink_arg = arg;
	pthread_mutex_unlock(&log_lock);
}

void nc_log_set_ident(const char *ident)
{
	snprintf(log_ident, sizeof(log_ident), "%s", ident);
}

int nc_log_parse_level(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (!strcasecmp(s, level_names[i]))
			return i;
	if (s[0] >= '0' && s[0] <= '3' && s[1] == '\0')
		return s[0] - '0';
	return -EINVAL;
}

void nc_log_write(int level, const char *subsys, const char *fmt, ...)
{
	char msg[1024];
	struct timespec ts;
	nc_log_sink_fn sink;
	void *sink_arg;
	struct tm tm;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	sink = log_sink;
	sink_arg = log_sink_arg;
	pthread_mutex_unlock(&log_lock);
	if (sink) {
		/* Outside log_lock: the sink has a lock of its own. */
		sink(level < 0 || level > 3 ? NC_LOG_ERROR : level, subsys, msg, sink_arg);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	if (level < 0 || level > 3)
		level = NC_LOG_ERROR;

	pthread_mutex_lock(&log_lock);
	fprintf(log_file ? log_file : stderr,
		"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%d] %s %s: %s\n",
		tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, log_ident,
		(int)getpid(), level_names[level], subsys, msg);
	pthread_mutex_unlock(&log_lock);
}

/* Ten lines per five-second window per call site, then one summary. */
bool nc_log_limit_pass(struct nc_log_limit *lim)
{
	long window = (long)(time(NULL) / 5);
	bool pass;

	pthread_mutex_lock(&log_lock);
	if (lim->ll_window != window) {
		int dropped = lim->ll_dropped;

		lim->ll_window = window;
		lim->ll_count = 0;
		lim->ll_dropped = 0;
		if (dropped)
			fprintf(log_file ? log_file : stderr,
				"%s[%d] warn log: %d similar messages suppressed\n",
				log_ident, (int)getpid(), dropped);
	}
	pass = lim->ll_count++ < 10;
	if (!pass)
		lim->ll_dropped++;
	pthread_mutex_unlock(&log_lock);
	return pass;
}
