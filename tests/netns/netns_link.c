/* SPDX-License-Identifier: MIT */
/*
 * netns_link: an impaired Ethernet link between two network namespaces, for
 * make check-netns on kernels without sch_netem.
 *
 *   netns_link [--delay MS] [--jitter MS] [--loss PERCENT] [--seed N]
 *              [--pidfile FILE] NETNS_A:IFNAME_A NETNS_B:IFNAME_B
 *
 * Creates the TAP device IFNAME_A in the network namespace NETNS_A and
 * IFNAME_B in NETNS_B (a name under /run/netns, as ip-netns(8) keeps them,
 * or a path) and passes every frame of one to the other.  Each frame is
 * lost with probability PERCENT / 100; the others come out DELAY ms later,
 * give or take up to JITTER ms (uniform), never out of order: a frame
 * whose draw would overtake the one before it leaves right after it (netem
 * reorders with jitter; TCP over a reordering link retransmits for nothing,
 * which is not what the tests mean to impair).
 *
 * The devices belong to this process: they disappear when it exits, so a
 * killed link leaves nothing behind.  The pid file is written once both
 * exist (the caller then configures and raises them).  SIGTERM or SIGINT
 * ends it; the counts of frames forwarded, lost and dropped for want of
 * room go to stderr, one line per direction.
 *
 * Exit status 0 after a signal, 1 when the devices cannot be made, 2 for
 * bad arguments.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* Frames waiting in one direction; more are dropped (a full router queue). */
#define LINK_QUEUE_MAX 8192
/* Larger than any frame of a TAP device without offloads (MTU + header). */
#define LINK_FRAME_MAX 65536
/* Frames read from one device before the other gets its turn. */
#define LINK_READ_BURST 64

struct link_frame {
	uint64_t lf_due_ns;
	uint32_t lf_len;
	uint8_t lf_data[];
};

struct link_dir {
	const char *ld_name;            /* "A->B", for the counts */
	int ld_in;                      /* the device frames come from */
	int ld_out;                     /* and the one they go to */
	struct link_frame *ld_q[LINK_QUEUE_MAX];
	unsigned int ld_head, ld_count;
	uint64_t ld_last_due_ns;
	uint64_t ld_forwarded, ld_lost, ld_overflow, ld_write_errors;
};

struct link_opts {
	uint64_t lo_delay_ns, lo_jitter_ns;
	uint32_t lo_loss_ppm;           /* parts per million */
	uint64_t lo_seed;
	const char *lo_pidfile;
};

static volatile sig_atomic_t link_stop;
static uint64_t link_rng;

static void link_on_signal(int sig)
{
	(void)sig;
	link_stop = 1;
}

static uint64_t link_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: reproducible for a given --seed, plenty for loss draws. */
static uint64_t link_rand(void)
{
	link_rng ^= link_rng >> 12;
	link_rng ^= link_rng << 25;
	link_rng ^= link_rng >> 27;
	return link_rng * 2685821657736338717ull;
}

/* Creates TAP device @ifname in the network namespace @ns; returns its
 * descriptor (non-blocking) or -1 with a message printed. */
static int link_tap_open(const char *ns, const char *ifname)
{
	char path[4096];
	struct ifreq ifr;
	int nsfd, fd;

	if (strchr(ns, '/'))
		snprintf(path, sizeof(path), "%s", ns);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", ns);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0) {
		fprintf(stderr, "netns_link: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (setns(nsfd, CLONE_NEWNET) < 0) {
		fprintf(stderr, "netns_link: setns %s: %s\n", path, strerror(errno));
		close(nsfd);
		return -1;
	}
	close(nsfd);
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "netns_link: /dev/net/tun: %s\n", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		fprintf(stderr, "netns_link: TAP device %s in %s: %s\n", ifname, path,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Takes one frame of @buf into @d's queue, or counts it lost or dropped. */
static void link_enqueue(struct link_dir *d, const struct link_opts *o, const uint8_t *buf,
			 size_t len, uint64_t now)
{
	struct link_frame *f;
	uint64_t due = now + o->lo_delay_ns;

	if (o->lo_loss_ppm && link_rand() % 1000000u < o->lo_loss_ppm) {
		d->ld_lost++;
		return;
	}
	if (d->ld_count == LINK_QUEUE_MAX) {
		d->ld_overflow++;
		return;
	}
	if (o->lo_jitter_ns) {
		uint64_t span = 2 * o->lo_jitter_ns + 1;

		due = due - o->lo_jitter_ns + link_rand() % span;
	}
	/* In order: never before the frame ahead of it. */
	if (due < d->ld_last_due_ns)
		due = d->ld_last_due_ns;
	f = malloc(sizeof(*f) + len);
	if (!f) {
		d->ld_overflow++;
		return;
	}
	f->lf_due_ns = due;
	f->lf_len = (uint32_t)len;
	memcpy(f->lf_data, buf, len);
	d->ld_q[(d->ld_head + d->ld_count) % LINK_QUEUE_MAX] = f;
	d->ld_count++;
	d->ld_last_due_ns = due;
}

/* Reads what @d's input device holds now, up to a burst. */
static void link_read(struct link_dir *d, const struct link_opts *o, uint8_t *buf)
{
	for (int i = 0; i < LINK_READ_BURST; i++) {
		ssize_t n = read(d->ld_in, buf, LINK_FRAME_MAX);

		if (n <= 0)
			return; /* EAGAIN, or a device that went down */
		link_enqueue(d, o, buf, (size_t)n, link_now_ns());
	}
}

/* Sends every frame of @d that is due by @now.  A device that is down
 * refuses frames (EIO): they are lost, as on a cut cable. */
static void link_flush(struct link_dir *d, uint64_t now)
{
	while (d->ld_count && d->ld_q[d->ld_head]->lf_due_ns <= now) {
		struct link_frame *f = d->ld_q[d->ld_head];

		if (write(d->ld_out, f->lf_data, f->lf_len) == (ssize_t)f->lf_len)
			d->ld_forwarded++;
		else
			d->ld_write_errors++;
		free(f);
		d->ld_head = (d->ld_head + 1) % LINK_QUEUE_MAX;
		d->ld_count--;
	}
}

static void link_free_queue(struct link_dir *d)
{
	while (d->ld_count) {
		free(d->ld_q[d->ld_head]);
		d->ld_head = (d->ld_head + 1) % LINK_QUEUE_MAX;
		d->ld_count--;
	}
}

static int link_run(struct link_dir *dirs, const struct link_opts *o)
{
	uint8_t *buf = malloc(LINK_FRAME_MAX);
	sigset_t none;

	if (!buf) {
		fprintf(stderr, "netns_link: out of memory\n");
		return 1;
	}
	sigemptyset(&none);
	while (!link_stop) {
		struct pollfd pfd[2] = { { .fd = dirs[0].ld_in, .events = POLLIN },
					 { .fd = dirs[1].ld_in, .events = POLLIN } };
		uint64_t now = link_now_ns(), next = UINT64_MAX;
		struct timespec ts, *tsp = NULL;

		for (int i = 0; i < 2; i++) {
			link_flush(&dirs[i], now);
			if (dirs[i].ld_count && dirs[i].ld_q[dirs[i].ld_head]->lf_due_ns < next)
				next = dirs[i].ld_q[dirs[i].ld_head]->lf_due_ns;
		}
		if (next != UINT64_MAX) {
			uint64_t wait = next > now ? next - now : 0;

			ts.tv_sec = (time_t)(wait / 1000000000u);
			ts.tv_nsec = (long)(wait % 1000000000u);
			tsp = &ts;
		}
		/* Signals are blocked except while waiting here. */
		if (ppoll(pfd, 2, tsp, &none) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "netns_link: poll: %s\n", strerror(errno));
			free(buf);
			return 1;
		}
		for (int i = 0; i < 2; i++)
			if (pfd[i].revents & POLLIN)
				link_read(&dirs[i], o, buf);
	}
	free(buf);
	return 0;
}

static int link_write_pidfile(const char *path)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%ld\n", (long)getpid());
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		return -1;
	return 0;
}

/* MS or PERCENT as a decimal with up to 3 decimals, scaled by @unit per 1;
 * -1 when malformed or out of [0, max]. */
static int64_t link_parse_scaled(const char *s, int64_t unit, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || v > max)
		return -1;
	return (int64_t)(v * (double)unit + 0.5);
}

static void link_usage(FILE *out)
{
	fprintf(out, "usage: netns_link [--delay MS] [--jitter MS] [--loss PERCENT] [--seed N]\n"
		     "                  [--pidfile FILE] NETNS_A:IFNAME_A NETNS_B:IFNAME_B\n");
}

static int link_parse(int argc, char **argv, struct link_opts *o, char **ends)
{
	static const struct option longopts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "jitter", required_argument, NULL, 'j' },
		{ "loss", required_argument, NULL, 'l' },
		{ "seed", required_argument, NULL, 's' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	int64_t v;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
		case 'j':
			v = link_parse_scaled(optarg, 1000000, 10000);
			if (v < 0)
				goto bad;
			if (c == 'd')
				o->lo_delay_ns = (uint64_t)v;
			else
				o->lo_jitter_ns = (uint64_t)v;
			break;
		case 'l':
			v = link_parse_scaled(optarg, 10000, 100);
			if (v < 0)
				goto bad;
			o->lo_loss_ppm = (uint32_t)v;
			break;
		case 's':
			o->lo_seed = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			o->lo_pidfile = optarg;
			break;
		case 'h':
			link_usage(stdout);
			exit(0);
		default:
			link_usage(stderr);
			return -1;
		}
	}
	if (argc - optind != 2 || !strchr(argv[optind], ':') || !strchr(argv[optind + 1], ':')) {
		link_usage(stderr);
		return -1;
	}
	ends[0] = argv[optind];
	ends[1] = argv[optind + 1];
	if (o->lo_jitter_ns > o->lo_delay_ns) {
		fprintf(stderr, "netns_link: the jitter may not exceed the delay\n");
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "netns_link: invalid value '%s'\n", optarg);
	return -1;
}

int main(int argc, char **argv)
{
	static struct link_dir dirs[2];
	struct link_opts o = { .lo_seed = 1 };
	struct sigaction sa;
	char *ends[2], *ifname[2];
	int fd[2], rc;
	sigset_t block;

	if (link_parse(argc, argv, &o, ends) < 0)
		return 2;
	link_rng = o.lo_seed ? o.lo_seed : 1;
	for (int i = 0; i < 2; i++) {
		ifname[i] = strrchr(ends[i], ':');
		*ifname[i]++ = '\0';
		if (!*ends[i] || !*ifname[i] || strlen(ifname[i]) >= IFNAMSIZ) {
			link_usage(stderr);
			return 2;
		}
	}
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = link_on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	fd[0] = link_tap_open(ends[0], ifname[0]);
	if (fd[0] < 0)
		return 1;
	fd[1] = link_tap_open(ends[1], ifname[1]);
	if (fd[1] < 0) {
		close(fd[0]);
		return 1;
	}
	dirs[0] = (struct link_dir){ .ld_name = "A->B", .ld_in = fd[0], .ld_out = fd[1] };
	dirs[1] = (struct link_dir){ .ld_name = "B->A", .ld_in = fd[1], .ld_out = fd[0] };
	if (o.lo_pidfile && link_write_pidfile(o.lo_pidfile) < 0) {
		fprintf(stderr, "netns_link: cannot write %s: %s\n", o.lo_pidfile,
			strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return 1;
	}
	fprintf(stderr,
		"netns_link: %s:%s <-> %s:%s, delay %.3f ms, jitter %.3f ms, loss %.4f%%\n",
		ends[0], ifname[0], ends[1], ifname[1], (double)o.lo_delay_ns / 1e6,
		(double)o.lo_jitter_ns / 1e6, (double)o.lo_loss_ppm / 1e4);
	rc = link_run(dirs, &o);
	for (int i = 0; i < 2; i++) {
		fprintf(stderr,
			"netns_link: %s: %" PRIu64 " frames forwarded, %" PRIu64 " lost, %" PRIu64
			" dropped (queue full), %" PRIu64 " refused (device down)\n",
			dirs[i].ld_name, dirs[i].ld_forwarded, dirs[i].ld_lost,
			dirs[i].ld_overflow, dirs[i].ld_write_errors);
		link_free_queue(&dirs[i]);
	}
	close(fd[0]);
	close(fd[1]);
	return rc;
}
