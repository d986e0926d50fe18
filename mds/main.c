/* SPDX-License-Identifier: MIT */
/* nacre-mds: the metadata server daemon. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/daemon.h"
#include "common/errors.h"
#include "common/log.h"
#include "mds/server.h"

struct mds_main {
	struct mds_conf conf;
	struct mds_server *mds;
};

static int mds_start(void *arg)
{
	struct mds_main *m = arg;
	int rc = mds_server_new(&m->conf, &m->mds);

	if (!rc)
		rc = mds_server_start(m->mds);
	if (!rc)
		nc_info("mds", "serving %s from %s on port %d", m->conf.mc_fsname,
			m->conf.mc_dir, mds_server_port(m->mds));
	return rc;
}

static void mds_free(void *arg)
{
	struct mds_main *m = arg;

	mds_server_free(m->mds);
	m->mds = NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: nacre-mds --dir DIR --fsname NAME --listen ADDR [options]\n"
		"  --dir DIR           the MDT directory (LMDB environment)\n"
		"  --fsname NAME       filesystem name\n"
		"  --listen ADDRS      where to serve: tcp://host:port, rdma://host:port,\n"
		"                      or both, comma-separated\n"
		"  --format            format DIR when it holds no MDT yet\n"
		"  --map-size SIZE     LMDB map size (default 1G; K/M/G/T suffixes)\n"
		"  --threads N         service threads (default 8)\n"
		"  --metrics ADDR      serve Prometheus metrics on tcp://host:port\n"
		"                      (GET /metrics; port 0 picks a free port, logged)\n"
		"  --pack-gc-interval SECONDS\n"
		"                      time between background compactions of sparse\n"
		"                      packs (default 300; 0 turns them off)\n"
		"  --pack-gc-threshold FRACTION\n"
		"                      compact sealed packs whose live fraction is below\n"
		"                      this (0 < FRACTION <= 1, default 0.5)\n"
		"  --no-catchup        do not rebuild, when an OST comes back, the stale\n"
		"                      shards writes left there (nacre rebuild does it)\n"
		"  --catchup-workers N files the catch-up rebuild works on at once\n"
		"                      (default 4)\n"
		"  --catchup-delay SECONDS\n"
		"                      wait from an OST coming up to its catch-up\n"
		"                      (default 2)\n"
		"  --catchup-sweep SECONDS\n"
		"                      time between catch-up sweeps over every OST up\n"
		"                      (default 600; 0 turns them off)\n"
		"  --root-squash UID:GID\n"
		"                      serve uid 0 and gid 0 of client requests as\n"
		"                      UID and GID (default: no squash)\n"
		"  --nosquash ADDRS    client addresses or networks exempt from root\n"
		"                      squash: 10.0.0.5,10.1.0.0/16,fd00::/8\n"
		"  --changelog         record namespace changes (nacre changelog)\n"
		"  --keyfile FILE      the cluster key (default: $NACRE_KEYFILE, else\n"
		"                      /etc/nacre/FSNAME.key); --format creates it if missing\n"
		"  --pidfile FILE      write the pid here once listening\n"
		"  --log FILE          log to FILE instead of stderr\n"
		"  --log-level LEVEL   error, warn, info (default) or debug\n"
		"  --config FILE       read options from FILE (key = value lines)\n"
		"  --help, --version\n");
}

/* Seconds, 0 for never (-1 in the conf); at most a day. */
static int parse_gc_interval(const char *s, int *ms)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 86400) {
		fprintf(stderr, "nacre-mds: bad --pack-gc-interval '%s' (seconds, 0 to 86400)\n", s);
		return -1;
	}
	*ms = v ? (int)v * 1000 : -1;
	return 0;
}

static int parse_gc_threshold(const char *s, double *f)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0 && v <= 1)) {
		fprintf(stderr, "nacre-mds: bad --pack-gc-threshold '%s' (0 < FRACTION <= 1)\n", s);
		return -1;
	}
	*f = v;
	return 0;
}

/* A bad --root-squash or --nosquash is a usage error, found before the
 * MDT is opened. */
/* An integer option in [@lo, @hi]; 0 or -1 (with a message). */
static int parse_count(const char *s, long lo, long hi, const char *what, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "nacre-mds: bad %s '%s' (%ld to %ld)\n", what, s, lo, hi);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int check_squash(const struct mds_conf *conf)
{
	struct mds_squash sq;
	char err[128];

	if (conf->mc_nosquash && !conf->mc_root_squash) {
		fprintf(stderr, "nacre-mds: --nosquash needs --root-squash\n");
		return 2;
	}
	if (mds_squash_parse(&sq, conf->mc_root_squash, conf->mc_nosquash, err, sizeof(err))) {
		fprintf(stderr, "nacre-mds: %s\n", err);
		return 2;
	}
	return -1;
}

/* Parses the command line into @m and @d: -1 to go on and run, else the
 * exit status (0 after --help or --version, 2 for a bad option). */
static int mds_parse(int ac, char **av, struct mds_main *m, struct nc_daemon *d)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "fsname", required_argument, NULL, 'n' },
		{ "listen", required_argument, NULL, 'l' },
		{ "format", no_argument, NULL, 'F' },
		{ "map-size", required_argument, NULL, 'M' },
		{ "threads", required_argument, NULL, 't' },
		{ "pack-gc-interval", required_argument, NULL, 'G' },
		{ "pack-gc-threshold", required_argument, NULL, 'T' },
		{ "no-catchup", no_argument, NULL, 'X' },
		{ "catchup-workers", required_argument, NULL, 'W' },
		{ "catchup-delay", required_argument, NULL, 'D' },
		{ "catchup-sweep", required_argument, NULL, 'S' },
		{ "root-squash", required_argument, NULL, 'R' },
		{ "nosquash", required_argument, NULL, 'N' },
		{ "changelog", no_argument, NULL, 'C' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "keyfile", required_argument, NULL, 'K' },
		{ "log", required_argument, NULL, 'L' },
		{ "log-level", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct mds_conf *conf = &m->conf;
	unsigned long long size;
	int c, rc;

	while ((c = getopt_long(ac, av, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': conf->mc_dir = optarg; break;
		case 'n': conf->mc_fsname = optarg; break;
		case 'l': conf->mc_listen = optarg; break;
		case 'F': conf->mc_format = true; break;
		case 'm': conf->mc_metrics = optarg; break;
		case 't': conf->mc_threads = atoi(optarg); break;
		case 'G':
			if (parse_gc_interval(optarg, &conf->mc_pack_gc_interval_ms))
				return 2;
			break;
		case 'T':
			if (parse_gc_threshold(optarg, &conf->mc_pack_gc_threshold))
				return 2;
			break;
		case 'X': conf->mc_no_catchup = true; break;
		case 'W':
			if (parse_count(optarg, 1, 64, "--catchup-workers", &conf->mc_catchup_workers))
				return 2;
			break;
		case 'D':
			if (parse_count(optarg, 0, 3600, "--catchup-delay", &conf->mc_catchup_delay_ms))
				return 2;
			/* 0 s in the conf is "the default": negative is none. */
			conf->mc_catchup_delay_ms = conf->mc_catchup_delay_ms ?
						    conf->mc_catchup_delay_ms * 1000 : -1;
			break;
		case 'S':
			if (parse_count(optarg, 0, 86400, "--catchup-sweep", &conf->mc_catchup_sweep_ms))
				return 2;
			conf->mc_catchup_sweep_ms = conf->mc_catchup_sweep_ms ?
						    conf->mc_catchup_sweep_ms * 1000 : -1;
			break;
		case 'R': conf->mc_root_squash = optarg; break;
		case 'N': conf->mc_nosquash = optarg; break;
		case 'C': conf->mc_changelog = true; break;
		case 'K': conf->mc_keyfile = optarg; break;
		case 'p': d->dr_pidfile = optarg; break;
		case 'M':
			if (nc_parse_size(optarg, &size) || size < (1ull << 20)) {
				fprintf(stderr, "nacre-mds: bad --map-size '%s'\n", optarg);
				return 2;
			}
			conf->mc_map_size = size;
			break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("nacre-mds %s\n", PACKAGE_VERSION); return 0;
		default:
			rc = nc_daemon_log_option("nacre-mds", c, optarg);
			if (rc < 0) {
				usage(stderr);
				return 2;
			}
			if (rc)
				return rc;
			break;
		}
	}
	if (optind < ac || !conf->mc_dir || !conf->mc_fsname || !conf->mc_listen) {
		fprintf(stderr, "nacre-mds: --dir, --fsname and --listen are required\n");
		usage(stderr);
		return 2;
	}
	return check_squash(conf);
}

int main(int argc, char **argv)
{
	struct mds_main m = { 0 };
	struct nc_daemon d = { .dr_name = "nacre-mds", .dr_start = mds_start,
			       .dr_free = mds_free, .dr_arg = &m };
	char **av;
	int ac, rc;

	if (nc_config_expand(argc, argv, &ac, &av))
		return 2;
	rc = mds_parse(ac, av, &m, &d);
	if (rc < 0)
		rc = nc_daemon_run(&d);
	nc_config_free(ac, av);
	return rc;
}
