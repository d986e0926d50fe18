/* SPDX-License-Identifier: MIT */
/* nacre-mds: the metadata server daemon. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/daemon.h"
#include "common/errors.h"
#include "common/log.h"
#include "mds/server.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: nacre-mds --dir DIR --fsname NAME --listen ADDR [options]\n"
		"  --dir DIR           the MDT directory (LMDB environment)\n"
		"  --fsname NAME       filesystem name\n"
		"  --listen ADDR       where to serve (tcp://host:port)\n"
		"  --format            format DIR when it holds no MDT yet\n"
		"  --map-size SIZE     LMDB map size (default 1G; K/M/G/T suffixes)\n"
		"  --threads N         service threads (default 8)\n"
		"  --pidfile FILE      write the pid here once listening\n"
		"  --log FILE          log to FILE instead of stderr\n"
		"  --log-level LEVEL   error, warn, info (default) or debug\n"
		"  --config FILE       read options from FILE (key = value lines)\n"
		"  --help, --version\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "fsname", required_argument, NULL, 'n' },
		{ "listen", required_argument, NULL, 'l' },
		{ "format", no_argument, NULL, 'F' },
		{ "map-size", required_argument, NULL, 'M' },
		{ "threads", required_argument, NULL, 't' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "log", required_argument, NULL, 'L' },
		{ "log-level", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct mds_conf conf = { 0 };
	struct mds_server *mds;
	const char *pidfile = NULL;
	unsigned long long size;
	char **av;
	int ac, c, rc;

	if (nc_config_expand(argc, argv, &ac, &av))
		return 2;
	while ((c = getopt_long(ac, av, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': conf.mc_dir = optarg; break;
		case 'n': conf.mc_fsname = optarg; break;
		case 'l': conf.mc_listen = optarg; break;
		case 'F': conf.mc_format = true; break;
		case 't': conf.mc_threads = atoi(optarg); break;
		case 'p': pidfile = optarg; break;
		case 'M':
			if (nc_parse_size(optarg, &size) || size < (1ull << 20)) {
				fprintf(stderr, "nacre-mds: bad --map-size '%s'\n", optarg);
				return 2;
			}
			conf.mc_map_size = size;
			break;
		case 'L':
			if ((rc = nc_log_open(optarg))) {
				fprintf(stderr, "nacre-mds: %s: %s\n", optarg, nc_strerror(rc));
				return 1;
			}
			break;
		case 'v':
			if ((rc = nc_log_parse_level(optarg)) < 0) {
				fprintf(stderr, "nacre-mds: bad log level '%s'\n", optarg);
				return 2;
			}
			nc_log_level = rc;
			break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("nacre-mds %s\n", PACKAGE_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < ac || !conf.mc_dir || !conf.mc_fsname || !conf.mc_listen) {
		fprintf(stderr, "nacre-mds: --dir, --fsname and --listen are required\n");
		usage(stderr);
		return 2;
	}
	nc_log_set_ident("nacre-mds");
	nc_signals_block();
	rc = mds_server_new(&conf, &mds);
	if (rc) {
		nc_error("mds", "cannot start: %s", nc_strerror(rc));
		return 1;
	}
	rc = mds_server_start(mds);
	if (!rc && pidfile)
		rc = nc_pidfile_write(pidfile);
	if (rc) {
		nc_error("mds", "cannot start: %s", nc_strerror(rc));
		mds_server_free(mds);
		return 1;
	}
	nc_info("mds", "serving %s from %s on port %d", conf.mc_fsname, conf.mc_dir,
		mds_server_port(mds));
	c = nc_signals_wait();
	nc_info("mds", "signal %d: stopping", c);
	mds_server_free(mds);
	nc_pidfile_remove(pidfile);
	nc_config_free(ac, av);
	return 0;
}
