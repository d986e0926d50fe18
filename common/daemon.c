/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/daemon.h"
#include "common/errors.h"
#include "common/log.h"
#include "common/malloc_keep.h"

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Appends the options of @path to @v (growing it). */
static int config_read(const char *path, char ***v, int *n, int *cap)
{
	char line[1024];
	int lineno = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "cannot read config file %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *opt, *key;

		lineno++;
		s = strchr(line, '#');
		if (s)
			*s = '\0';
		s = trim(line);
		if (!*s)
			continue;
		eq = strchr(s, '=');
		if (eq)
			*eq = '\0';
		key = trim(s);
		if (!*key || strpbrk(key, " \t")) {
			fprintf(stderr, "%s:%d: bad option name\n", path, lineno);
			fclose(f);
			return -NC_E_CONFIG;
		}
		if (eq) {
			if (asprintf(&opt, "--%s=%s", key, trim(eq + 1)) < 0)
				opt = NULL;
		} else if (asprintf(&opt, "--%s", key) < 0) {
			opt = NULL;
		}
		if (!opt) {
			fclose(f);
			return -ENOMEM;
		}
		if (*n + 2 > *cap) {
			char **nv = realloc(*v, sizeof(char *) * (size_t)(*cap * 2));

			if (!nv) {
				free(opt);
				fclose(f);
				return -ENOMEM;
			}
			*v = nv;
			*cap *= 2;
		}
		(*v)[(*n)++] = opt;
	}
	fclose(f);
	return 0;
}

int nc_config_expand(int argc, char **argv, int *nargc, char ***nargv)
{
	int cap = argc + 16, n = 0, rc;
	char **v = calloc((size_t)cap, sizeof(char *));

	if (!v)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		const char *path = NULL;

		if (!strcmp(argv[i], "--config")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "--config needs a file\n");
				rc = -NC_E_CONFIG;
				goto out_free;
			}
			path = argv[++i];
		} else if (!strncmp(argv[i], "--config=", 9)) {
			path = argv[i] + 9;
		}
		if (path) {
			rc = config_read(path, &v, &n, &cap);
			if (rc)
				goto out_free;
			continue;
		}
		if (n + 2 > cap) {
			char **nv = realloc(v, sizeof(char *) * (size_t)(cap * 2));

			if (!nv) {
				rc = -ENOMEM;
				goto out_free;
			}
			v = nv;
			cap *= 2;
		}
		v[n] = strdup(argv[i]);
		if (!v[n]) {
			rc = -ENOMEM;
			goto out_free;
		}
		n++;
	}
	v[n] = NULL;
	*nargc = n;
	*nargv = v;
	return 0;
out_free:
	nc_config_free(n, v);
	return rc;
}

void nc_config_free(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

int nc_pidfile_write(const char *path)
{
	char buf[32];
	int fd, len;
	FILE *f = fopen(path, "r");

	if (f) {
		long pid = 0;

		if (fscanf(f, "%ld", &pid) == 1 && pid > 0 && pid != getpid() &&
		    kill((pid_t)pid, 0) == 0) {
			fclose(f);
			return -EEXIST;
		}
		fclose(f);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (write(fd, buf, (size_t)len) != len) {
		int rc = -errno;

		close(fd);
		return rc ? rc : -EIO;
	}
	close(fd);
	return 0;
}

void nc_pidfile_remove(const char *path)
{
	if (path)
		unlink(path);
}

void nc_signals_block(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int nc_signals_wait(void)
{
	sigset_t set;
	int sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	for (;;) {
		if (sigwait(&set, &sig) == 0 && sig != SIGHUP)
			return sig;
	}
}

int nc_parse_size(const char *s, unsigned long long *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	/* strtoull would skip blanks and wrap a minus sign. */
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case '\0':
		break;
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		return -EINVAL;
	}
	if (*end && end[1] && !(toupper((unsigned char)end[1]) == 'B' && !end[2]) &&
	    !(toupper((unsigned char)end[1]) == 'I' && toupper((unsigned char)end[2]) == 'B' && !end[3]))
		return -EINVAL;
	if (shift && v > (~0ull >> shift))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

int nc_daemon_log_option(const char *prog, int opt, const char *arg)
{
	int rc;

	switch (opt) {
	case 'L':
		rc = nc_log_open(arg);
		if (rc) {
			fprintf(stderr, "%s: %s: %s\n", prog, arg, nc_strerror(rc));
			return 1;
		}
		return 0;
	case 'v':
		rc = nc_log_parse_level(arg);
		if (rc < 0) {
			fprintf(stderr, "%s: bad log level '%s'\n", prog, arg);
			return 2;
		}
		nc_log_level = rc;
		return 0;
	default:
		return -1;
	}
}

void nc_daemon_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl); /* the old limit is still good */
	}
}

int nc_daemon_run(const struct nc_daemon *d)
{
	int rc, sig;

	nc_malloc_keep_freed();
	nc_daemon_raise_nofile();
	nc_log_set_ident(d->dr_name);
	nc_signals_block();
	rc = d->dr_start(d->dr_arg);
	if (rc) {
		nc_error("daemon", "%s cannot start: %s", d->dr_name, nc_strerror(rc));
		return 1;
	}
	if (d->dr_pidfile) {
		rc = nc_pidfile_write(d->dr_pidfile);
		if (rc) {
			nc_error("daemon", "pid file %s: %s", d->dr_pidfile,
				 rc == -EEXIST ? "another instance is running" : nc_strerror(rc));
			d->dr_free(d->dr_arg);
			return 1;
		}
	}
	sig = nc_signals_wait();
	nc_info("daemon", "%s: signal %d, stopping", d->dr_name, sig);
	d->dr_free(d->dr_arg);
	nc_pidfile_remove(d->dr_pidfile);
	return 0;
}
