/* SPDX-License-Identifier: MIT */
/*
 * Open descriptors of pack objects, kept between reads (oss/fdcache.h).
 * A small table searched linearly: it holds tens of entries, and a search
 * costs far less than the openat() it saves.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "oss/fdcache.h"

int oss_fdc_init(struct oss_fdcache *c, unsigned int size)
{
	c->fc_size = size;
	c->fc_clock = 0;
	c->fc_slots = NULL;
	if (size) {
		c->fc_slots = calloc(size, sizeof(*c->fc_slots));
		if (!c->fc_slots)
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

/* Drops the table's count of slot @i's entry and empties the slot. */
static void fdc_unslot(struct oss_fdcache *c, unsigned int i)
{
	struct oss_fdc_ent *e = c->fc_slots[i];

	c->fc_slots[i] = NULL;
	if (--e->fe_refs == 0)
		fdc_free(e);
}

void oss_fdc_fini(struct oss_fdcache *c)
{
	for (unsigned int i = 0; i < c->fc_size; i++)
		if (c->fc_slots[i])
			fdc_unslot(c, i);
	free(c->fc_slots);
	c->fc_slots = NULL;
	c->fc_size = 0;
	pthread_mutex_destroy(&c->fc_lock);
}

/* The slot of @fid, or -1; under fc_lock. */
static int fdc_find(const struct oss_fdcache *c, const struct nc_fid *fid)
{
	for (unsigned int i = 0; i < c->fc_size; i++)
		if (c->fc_slots[i] && nc_fid_eq(&c->fc_slots[i]->fe_fid, fid))
			return (int)i;
	return -1;
}

struct oss_fdc_ent *oss_fdc_get(struct oss_fdcache *c, const struct nc_fid *fid)
{
	struct oss_fdc_ent *e = NULL;
	int i;

	if (!c->fc_size)
		return NULL;
	pthread_mutex_lock(&c->fc_lock);
	i = fdc_find(c, fid);
	if (i >= 0) {
		e = c->fc_slots[i];
		e->fe_refs++;
		e->fe_used = ++c->fc_clock;
	}
	pthread_mutex_unlock(&c->fc_lock);
	return e;
}

struct oss_fdc_ent *oss_fdc_add(struct oss_fdcache *c, const struct nc_fid *fid,
				int fd, int cfd)
{
	struct oss_fdc_ent *e;
	unsigned int victim = 0;
	int i;

	e = c->fc_size ? malloc(sizeof(*e)) : NULL;
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
	i = fdc_find(c, fid);
	if (i >= 0) {
		/* Another read got here first: use its descriptors. */
		struct oss_fdc_ent *had = c->fc_slots[i];

		had->fe_refs++;
		had->fe_used = ++c->fc_clock;
		pthread_mutex_unlock(&c->fc_lock);
		fdc_free(e);
		return had;
	}
	/* An empty slot, else the least recently used entry (a read still
	 * using it keeps it open until it is done). */
	for (unsigned int j = 0; j < c->fc_size; j++) {
		if (!c->fc_slots[j]) {
			victim = j;
			break;
		}
		if (c->fc_slots[j]->fe_used < c->fc_slots[victim]->fe_used)
			victim = j;
	}
	if (c->fc_slots[victim])
		fdc_unslot(c, victim);
	e->fe_used = ++c->fc_clock;
	c->fc_slots[victim] = e;
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
	int i;

	if (!c->fc_size)
		return;
	pthread_mutex_lock(&c->fc_lock);
	i = fdc_find(c, fid);
	if (i >= 0)
		fdc_unslot(c, i);
	pthread_mutex_unlock(&c->fc_lock);
}
