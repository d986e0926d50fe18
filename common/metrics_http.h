/* SPDX-License-Identifier: MIT */
/*
 * The metrics port: an HTTP server (libmicrohttpd, on its own polling
 * thread) that answers GET /metrics with the text a render function makes,
 * 404 for any other path and 405 for any other method.
 *
 * This file depends on nothing else of nacre (no logging, no address
 * parser), so that mount.nacre, which links only libnacre's public API,
 * can serve its client counters with it as the daemons do.
 */
#ifndef NC_METRICS_HTTP_H
#define NC_METRICS_HTTP_H

#include <stddef.h>

/* Fills *text (malloc'd; the server frees it) and *len: 0 or -errno. */
typedef int (*nc_mhttp_render_fn)(void *arg, char **text, size_t *len);

struct nc_mhttp;

/*
 * Listens on @addr ("tcp://host:port"; port 0 picks a free port) and
 * serves until nc_mhttp_stop().  @bound (of @blen bytes) receives the
 * address listened on with the port bound, as "tcp://host:port".
 * @render runs on the server's thread, once per scrape.
 * 0, -EINVAL for an address that is not tcp://host:port, -EADDRINUSE and
 * other -errno from binding, or -ENOMEM when the server cannot start.
 */
int nc_mhttp_start(const char *addr, nc_mhttp_render_fn render, void *arg,
		   struct nc_mhttp **out, char *bound, size_t blen);
/* Stops serving and frees; waits for a scrape under way.  NULL: no-op. */
void nc_mhttp_stop(struct nc_mhttp *h);

#endif
