/* SPDX-License-Identifier: MIT */
/* nacre-oss: the object storage server daemon. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/daemon.h"
#include "common/errors.h"
#include "common/log.h"
#include "oss/server.h"

struct oss_main {
	struct oss_conf conf;
	struct oss_server *oss;
};

static int oss_start(void *arg)
{
	struct oss_main *m = arg;
	int rc = oss_server_new(&m->conf, &m->oss);

	if (!rc)
		rc = oss_server_start(m->oss);
	if (!rc)
		nc_info("oss", "serving %d OST(s) of %s on port %d", m->conf.oc_nosts,
			m->conf.oc_fsname, oss_server_port(m->oss));
	return rc;
}

static void oss_free(void *arg)
{
	struct oss_main *m = arg;

	oss_server_free(m->oss);
	m->oss = NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: nacre-oss --mds ADDR --fsname NAME --listen ADDR --ost INDEX:DIR [...]\n"
		"  --mds ADDR          the MDS (tcp://host:port)\n"
		"  --fsname NAME       filesystem name\n"
		"  --listen ADDRS      where to serve clients: tcp://host:port, rdma://host:port,\n"
		"                      or both, comma-separated\n"
		"  --advertise ADDRS   addresses given to the MDS for clients (default: those\n"
		"                      listened on)\n"
		"  --ost INDEX:DIR     serve OST INDEX stored in DIR (repeatable)\n"
		"  --format            format OST directories that hold no OST yet\n"
		"  --replace           like --format, and an OST formatted now replaces a lost\n"
		"                      one: the MDS takes its new uuid for the index\n"
		"  --threads N         service threads (default 8)\n"
		"  --keyfile FILE      the cluster key (default: $NACRE_KEYFILE, else\n"
		"                      /etc/nacre/FSNAME.key)\n"
		"  --metrics ADDR      serve Prometheus metrics on tcp://host:port\n"
		"                      (GET /metrics; port 0 picks a free port, logged)\n"
		"  --pidfile FILE      write the pid here once listening\n"
		"  --log FILE          log to FILE instead of stderr\n"
		"  --log-level LEVEL   error, warn, info (default) or debug\n"
		"  --config FILE       read options from FILE (key = value lines)\n"
		"  --help, --version\n");
}

static int parse_ost(const char *arg, struct oss_conf *c)
{
	const char *colon = strchr(arg, ':');
	char *end;
	unsigned long idx;

	if (!colon || colon == arg || !colon[1] || c->oc_nosts == OSS_MAX_OSTS)
		return -1;
	idx = strtoul(arg, &end, 10);
	if (end != colon || idx > 0xffff)
		return -1;
	c->oc_osts[c->oc_nosts].index = (uint32_t)idx;
	c->oc_osts[c->oc_nosts].dir = colon + 1;
	c->oc_nosts++;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mds", required_argument, NULL, 'm' },
		{ "fsname", required_argument, NULL, 'n' },
		{ "listen", required_argument, NULL, 'l' },
		{ "advertise", required_argument, NULL, 'a' },
		{ "ost", required_argument, NULL, 'o' },
		{ "format", no_argument, NULL, 'F' },
		{ "replace", no_argument, NULL, 'R' },
		{ "threads", required_argument, NULL, 't' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "keyfile", required_argument, NULL, 'K' },
		{ "log", required_argument, NULL, 'L' },
		{ "log-level", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct oss_main m = { 0 };
	struct oss_conf *conf = &m.conf;
	struct nc_daemon d = { .dr_name = "nacre-oss", .dr_start = oss_start,
			       .dr_free = oss_free, .dr_arg = &m };
	char **av;
	int ac, c, rc;

	if (nc_config_expand(argc, argv, &ac, &av))
		return 2;
	while ((c = getopt_long(ac, av, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': conf->oc_mds = optarg; break;
		case 'n': conf->oc_fsname = optarg; break;
		case 'l': conf->oc_listen = optarg; break;
		case 'a': conf->oc_advertise = optarg; break;
		case 'F': conf->oc_format = true; break;
		case 'R': conf->oc_replace = true; break;
		case 't': conf->oc_threads = atoi(optarg); break;
		case 'K': conf->oc_keyfile = optarg; break;
		case 'M': conf->oc_metrics = optarg; break;
		case 'p': d.dr_pidfile = optarg; break;
		case 'o':
			if (parse_ost(optarg, conf)) {
				fprintf(stderr, "nacre-oss: bad --ost '%s' (want INDEX:DIR)\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			nc_config_free(ac, av);
			return 0;
		case 'V':
			printf("nacre-oss %s\n", PACKAGE_VERSION);
			nc_config_free(ac, av);
			return 0;
		default:
			rc = nc_daemon_log_option("nacre-oss", c, optarg);
			if (rc < 0) {
				usage(stderr);
				return 2;
			}
			if (rc)
				return rc;
			break;
		}
	}
	if (optind < ac || !conf->oc_mds || !conf->oc_fsname || !conf->oc_listen || !conf->oc_nosts) {
		fprintf(stderr, "nacre-oss: --mds, --fsname, --listen and --ost are required\n");
		usage(stderr);
		return 2;
	}
	rc = nc_daemon_run(&d);
	nc_config_free(ac, av);
	return rc;
}
