/* SPDX-License-Identifier: MIT */
/*
 * read_check: reads a file of a running filesystem through libnacre,
 * compares every byte with a local reference copy, and prints what the
 * transports did, for the end-to-end suites (tests/e2e/test_rdma.sh).
 *
 *   read_check --mds ADDRS --fsname NAME --path /FILE --ref LOCAL
 *              [--loops N] [--req BYTES] [--pin] [--progress FILE]
 *
 * Each loop reads the whole file in order, in requests of --req bytes (by
 * default 4 MiB, a row of a 4+2 layout of 1 MiB chunks, so one request
 * keeps every data OST busy), with readahead off so that what the counters
 * show is this program's own reads.  --pin registers the read buffer once
 * (nacre_register_buffer).  --progress names a file that gets one line per
 * finished loop (a test waits on it before it kills a server).
 *
 * Prints one JSON object: loops, bytes, mismatches (0 when every byte
 * matched), the transport of the MDS and of each OST, and the RDMA
 * counters.  Exit status 0 when every byte matched, 1 otherwise, 2 for bad
 * arguments.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libclient/nacre.h"

struct rc_args {
	const char *ra_mds, *ra_fsname, *ra_path, *ra_ref, *ra_progress;
	int ra_loops;
	size_t ra_req;
	bool ra_pin;
};

static int rc_usage(void)
{
	fprintf(stderr, "usage: read_check --mds ADDRS --fsname NAME --path /FILE --ref LOCAL\n"
			"                  [--loops N] [--req BYTES] [--pin] [--progress FILE]\n");
	return 2;
}

static int rc_parse(int ac, char **av, struct rc_args *a)
{
	static const struct option opts[] = {
		{ "mds", required_argument, NULL, 'm' },
		{ "fsname", required_argument, NULL, 'f' },
		{ "path", required_argument, NULL, 'p' },
		{ "ref", required_argument, NULL, 'r' },
		{ "loops", required_argument, NULL, 'l' },
		{ "req", required_argument, NULL, 'q' },
		{ "pin", no_argument, NULL, 'P' },
		{ "progress", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->ra_loops = 1;
	a->ra_req = 4u << 20;
	while ((c = getopt_long(ac, av, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm': a->ra_mds = optarg; break;
		case 'f': a->ra_fsname = optarg; break;
		case 'p': a->ra_path = optarg; break;
		case 'r': a->ra_ref = optarg; break;
		case 'l': a->ra_loops = atoi(optarg); break;
		case 'q': a->ra_req = strtoul(optarg, NULL, 0); break;
		case 'P': a->ra_pin = true; break;
		case 'g': a->ra_progress = optarg; break;
		default: return -1;
		}
	}
	if (optind < ac || !a->ra_mds || !a->ra_fsname || !a->ra_path || !a->ra_ref ||
	    a->ra_loops < 1 || a->ra_req < 4096 || a->ra_req > (64u << 20))
		return -1;
	return 0;
}

/* The reference file, whole, in memory. */
static uint8_t *rc_load_ref(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(path);
		return NULL;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0) {
			free(buf);
			buf = NULL;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return buf;
}

static void rc_progress(const char *path, int loop)
{
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (f) {
		fprintf(f, "loop %d done\n", loop);
		fclose(f);
	}
}

/* One pass over the file; returns mismatched bytes, or -errno. */
static int64_t rc_read_pass(struct nacre_file *f, uint8_t *buf, size_t req,
			    const uint8_t *ref, size_t len, uint64_t *bytes)
{
	int64_t bad = 0;
	size_t off = 0;

	while (off < len) {
		size_t want = len - off < req ? len - off : req;
		ssize_t n = nacre_pread(f, buf, want, (off_t)off);

		if (n < 0)
			return n;
		if (n == 0)
			return -EIO; /* shorter than the reference */
		for (ssize_t i = 0; i < n; i++)
			bad += buf[i] != ref[off + (size_t)i];
		off += (size_t)n;
		*bytes += (uint64_t)n;
	}
	return bad;
}

static void rc_print(struct nacre_fs *fs, const struct rc_args *a, int loops,
		     uint64_t bytes, int64_t bad, int err)
{
	struct nacre_rdma_stats rs;
	struct nacre_ost *osts = NULL;
	unsigned int n = 0;
	const char *mt = nacre_mds_transport(fs);

	nacre_rdma_stats(&rs);
	printf("{\"loops\": %d, \"bytes\": %" PRIu64 ", \"mismatches\": %" PRId64
	       ", \"error\": \"%s\", \"mds_transport\": \"%s\", \"ost_transports\": {",
	       loops, bytes, bad, err ? nacre_strerror(err) : "", mt ? mt : "-");
	if (nacre_ost_list(fs, &osts, &n) == 0) {
		for (unsigned int i = 0; i < n; i++) {
			const char *t = nacre_ost_transport(fs, osts[i].index);

			printf("%s\"%u\": \"%s\"", i ? ", " : "", osts[i].index, t ? t : "-");
		}
		free(osts);
	}
	printf("}, \"rdma\": {\"conns\": %" PRIu64 ", \"reads\": %" PRIu64
	       ", \"read_bytes\": %" PRIu64 ", \"reads_inflight_max\": %" PRIu64
	       ", \"sends\": %" PRIu64 ", \"recvs\": %" PRIu64 ", \"credit_waits\": %" PRIu64
	       ", \"pinned_hits\": %" PRIu64 ", \"transient_regs\": %" PRIu64 "}, \"pin\": %s}\n",
	       rs.conns, rs.reads, rs.read_bytes, rs.reads_inflight_max, rs.sends, rs.recvs,
	       rs.credit_waits, rs.pinned_hits, rs.transient_regs, a->ra_pin ? "true" : "false");
}

int main(int ac, char **av)
{
	const struct nacre_opts opts = { .readahead_kb = -1, .retry_ms = 60000 };
	struct rc_args a;
	struct nacre_fs *fs;
	struct nacre_file *f;
	uint8_t *ref, *buf;
	uint64_t bytes = 0;
	int64_t bad = 0;
	size_t len;
	int loop, rc;

	if (rc_parse(ac, av, &a))
		return rc_usage();
	ref = rc_load_ref(a.ra_ref, &len);
	buf = aligned_alloc(4096, (a.ra_req + 4095) / 4096 * 4096);
	if (!ref || !buf)
		return 1;
	if (a.ra_pin && nacre_register_buffer(buf, a.ra_req)) {
		fprintf(stderr, "read_check: cannot register the buffer\n");
		return 1;
	}
	rc = nacre_connect(a.ra_mds, a.ra_fsname, &opts, &fs);
	if (rc) {
		fprintf(stderr, "read_check: connect %s: %s\n", a.ra_mds, nacre_strerror(rc));
		return 1;
	}
	rc = nacre_open(fs, a.ra_path, O_RDONLY, 0, &f);
	if (rc) {
		fprintf(stderr, "read_check: open %s: %s\n", a.ra_path, nacre_strerror(rc));
		nacre_disconnect(fs);
		return 1;
	}
	for (loop = 0; loop < a.ra_loops; loop++) {
		int64_t r = rc_read_pass(f, buf, a.ra_req, ref, len, &bytes);

		if (r < 0) {
			rc = (int)r;
			break;
		}
		bad += r;
		rc_progress(a.ra_progress, loop + 1);
	}
	rc_print(fs, &a, loop, bytes, bad, rc);
	nacre_close(f);
	nacre_disconnect(fs);
	if (a.ra_pin)
		nacre_unregister_buffer(buf);
	free(buf);
	free(ref);
	return rc == 0 && bad == 0 ? 0 : 1;
}
