/* SPDX-License-Identifier: MIT */
/*
 * Open descriptors of pack objects, kept between reads (oss/fdcache.h).
 * A hash table by FID, and a list from the entry used last to the one
 * used longest ago, which goes first when the cache is full.  A dataset
 * of small files spreads its reads over every pack of an OST (a 140 GB
 * dataset of 110 KiB images is over 500 pack objects on each of six
 * OSTs), so the cache is sized by the descriptors the OSS may hold, not
 * by a handful of recently read packs.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "oss/fdcache.h"

unsigned int oss_fdc_size_for(uint64_t nofile, unsigned int nosts)
{
	uint64_t n;

	if (nofile < OSS_FDC_MIN_NOFILE || nosts == 0)
		return 0;
	n = nofile / 4 / 2 / nosts;
	return n > OSS_FDC_MAX ? OSS_FDC_MAX : (unsigned int)n;
}

int oss_fdc_init(struct oss_fdcache *c, unsigned int size)
{
	c->fc_size = size;
	c->fc_count = 0;
	c->fc_nbuckets = 0;
	c->fc_buckets = NULL;
	c->fc_newest = NULL;
	c->fc_oldest = NULL;
	if (size) {
		c->fc_nbuckets = 16;
		while (c->fc_nbuckets < size)
			c->fc_nbuckets *= 2;
		c->fc_buckets = calloc(c->fc_nbuckets, sizeof(*c->fc_buckets));
		if (!c->fc_buckets)
			return -ENOMEM;
	}
	pthread_mutex_init(&c->fc_lock, NULL);
	return 0;
}

static void fdc_free(struct oss_fdc_ent *e)
{
	close(e->fe_fd);
	close(e->fe_cfd);
	free(e);
}

static struct oss_fdc_ent **fdc_bucket(const struct oss_fdcache *c, const struct nc_fid *fid)
{
	uint64_t h = (fid->f_seq * 0x9E3779B97F4A7C15ull) ^ (fid->f_oid * 0xC2B2AE3D27D4EB4Full);

	return &c->fc_buckets[(h >> 32) & (c->fc_nbuckets - 1)];
}

/* The entry of @fid, or NULL; under fc_lock. */
static struct oss_fdc_ent *fdc_find(const struct oss_fdcache *c, const struct nc_fid *fid)
{
	struct oss_fdc_ent *e = *fdc_bucket(c, fid);

	while (e && !nc_fid_eq(&e->fe_fid, fid))
		e = e->fe_hnext;
	return e;
}

static void fdc_list_unlink(struct oss_fdcache *c, struct oss_fdc_ent *e)
{
	if (e->fe_newer)
		e->fe_newer->fe_older = e->fe_older;
	else
		c->fc_newest = e->fe_older;
	if (e->fe_older)
		e->fe_older->fe_newer = e->fe_newer;
	else
		c->fc_oldest = e->fe_newer;
	e->fe_newer = e->fe_older = NULL;
}

static void fdc_list_push(struct oss_fdcache *c, struct oss_fdc_ent *e)
{
	e->fe_older = c->fc_newest;
	e->fe_newer = NULL;
	if (c->fc_newest)
		c->fc_newest->fe_newer = e;
	else
		c->fc_oldest = e;
	c->fc_newest = e;
}

/* Used now: first in the recency list, counted for the caller. */
static void fdc_use(struct oss_fdcache *c, struct oss_fdc_ent *e)
{
	e->fe_refs++;
	if (c->fc_newest != e) {
		fdc_list_unlink(c, e);
		fdc_list_push(c, e);
	}
}

/* Takes @e out of the table and drops the table's count of it; under
 * fc_lock (a read still using it closes it when done). */
static void fdc_remove(struct oss_fdcache *c, struct oss_fdc_ent *e)
{
	struct oss_fdc_ent **pp = fdc_bucket(c, &e->fe_fid);

	while (*pp != e)
		pp = &(*pp)->fe_hnext;
	*pp = e->fe_hnext;
	fdc_list_unlink(c, e);
	c->fc_count--;
	if (--e->fe_refs == 0)
		fdc_free(e);
}

void oss_fdc_fini(struct oss_fdcache *c)
{
	while (c->fc_oldest)
		fdc_remove(c, c->fc_oldest);
	free(c->fc_buckets);
	c->fc_buckets = NULL;
	c->fc_size = 0;
	pthread_mutex_destroy(&c->fc_lock);
}

struct oss_fdc_ent *oss_fdc_get(struct oss_fdcache *c, const struct nc_fid *fid)
{
	struct oss_fdc_ent *e;

	if (!c->fc_size)
		return NULL;
	pthread_mutex_lock(&c->fc_lock);
	e = fdc_find(c, fid);
	if (e)
		fdc_use(c, e);
	pthread_mutex_unlock(&c->fc_lock);
	return e;
}

struct oss_fdc_ent *oss_fdc_add(struct oss_fdcache *c, const struct nc_fid *fid,
				int fd, int cfd)
{
	struct oss_fdc_ent *e, *had, **b;

	e = c->fc_size ? calloc(1, sizeof(*e)) : NULL;
	if (!e) {
		close(fd);
		close(cfd);
		return NULL;
	}
	e->fe_fid = *fid;
	e->fe_fd = fd;
	e->fe_cfd = cfd;
	e->fe_refs = 2;                 /* the table's and the caller's */
	pthread_mutex_lock(&c->fc_lock);
	had = fdc_find(c, fid);
	if (had) {
		/* Another read got here first: use its descriptors. */
		fdc_use(c, had);
		pthread_mutex_unlock(&c->fc_lock);
		fdc_free(e);
		return had;
	}
	/* Full: the entry used longest ago goes (a read still using it
	 * keeps it open until it is done). */
	if (c->fc_count >= c->fc_size)
		fdc_remove(c, c->fc_oldest);
	b = fdc_bucket(c, fid);
	e->fe_hnext = *b;
	*b = e;
	fdc_list_push(c, e);
	c->fc_count++;
	pthread_mutex_unlock(&c->fc_lock);
	return e;
}

void oss_fdc_put(struct oss_fdcache *c, struct oss_fdc_ent *e)
{
	bool last;

	pthread_mutex_lock(&c->fc_lock);
	last = --e->fe_refs == 0;
	pthread_mutex_unlock(&c->fc_lock);
	if (last)
		fdc_free(e);
}

void oss_fdc_drop(struct oss_fdcache *c, const struct nc_fid *fid)
{
	struct oss_fdc_ent *e;

	if (!c->fc_size)
		return;
	pthread_mutex_lock(&c->fc_lock);
	e = fdc_find(c, fid);
	if (e)
		fdc_remove(c, e);
	pthread_mutex_unlock(&c->fc_lock);
}
