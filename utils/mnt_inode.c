/* SPDX-License-Identifier: MIT */
/*
 * What the mount knows of the inodes the kernel holds: the file as it was
 * at its last open here (whether the kernel's pages of it are still right)
 * and the attributes last replied for it (whether the kernel holds the
 * MDS's).
 *
 * One record per inode, in a hash table that grows with the kernel's
 * inode cache: a record goes when the kernel drops its inode (FORGET).
 * These records used to sit in two tables of 4096 slots indexed by inode
 * number, so that a dataset of more files than that lost most of its
 * records to collisions, and a second epoch over it read everything again
 * from the OSTs although the kernel still held the pages.
 *
 * Losing a record is always safe: the next open then drops the kernel's
 * pages of the file and fetches its attributes, as for a file never seen.
 * So the table has a bound (MNT_INO_MAX), beyond which a new record takes
 * the place of an old one, against FORGETs that never come (a kernel
 * that keeps more inodes than that, or a record made by a reply that
 * raced with the FORGET of its inode).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "utils/mnt_inode.h"

struct mnt_ino_rec {
	uint64_t ir_ino;
	struct mnt_ino_seen ir_opened;  /* at the last open here */
	struct mnt_ino_seen ir_told;    /* attributes last replied */
	struct mnt_ino_rec *ir_next;    /* hash chain */
};

#define MNT_INO_MIN_BUCKETS 1024u

static size_t ino_bucket(const struct mnt_ino_table *t, uint64_t ino)
{
	/* Inode numbers are FID oids, mostly dense: a multiplicative hash
	 * spreads runs of them over the buckets. */
	return (size_t)((ino * 0x9E3779B97F4A7C15ull) >> 20) & (t->it_nbuckets - 1);
}

int mnt_ino_table_init(struct mnt_ino_table *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->it_max = max ? max : 1;
	t->it_nbuckets = MNT_INO_MIN_BUCKETS;
	t->it_buckets = calloc(t->it_nbuckets, sizeof(*t->it_buckets));
	return t->it_buckets ? 0 : -ENOMEM;
}

void mnt_ino_table_fini(struct mnt_ino_table *t)
{
	for (size_t i = 0; i < t->it_nbuckets; i++)
		while (t->it_buckets[i]) {
			struct mnt_ino_rec *r = t->it_buckets[i];

			t->it_buckets[i] = r->ir_next;
			free(r);
		}
	free(t->it_buckets);
	t->it_buckets = NULL;
	t->it_count = 0;
}

static struct mnt_ino_rec **ino_find(struct mnt_ino_table *t, uint64_t ino)
{
	struct mnt_ino_rec **pp = &t->it_buckets[ino_bucket(t, ino)];

	while (*pp && (*pp)->ir_ino != ino)
		pp = &(*pp)->ir_next;
	return pp;
}

/* Doubles the buckets; on no memory the chains just grow longer. */
static void ino_grow(struct mnt_ino_table *t)
{
	size_t old_n = t->it_nbuckets;
	struct mnt_ino_rec **old = t->it_buckets;
	struct mnt_ino_rec **nb = calloc(old_n * 2, sizeof(*nb));

	if (!nb)
		return;
	t->it_buckets = nb;
	t->it_nbuckets = old_n * 2;
	for (size_t i = 0; i < old_n; i++)
		while (old[i]) {
			struct mnt_ino_rec *r = old[i];
			size_t b = ino_bucket(t, r->ir_ino);

			old[i] = r->ir_next;
			r->ir_next = nb[b];
			nb[b] = r;
		}
	free(old);
}

/* Takes out some record (the first one found from @from on) to make room:
 * which one does not matter, as losing any is safe. */
static struct mnt_ino_rec *ino_evict(struct mnt_ino_table *t, size_t from)
{
	for (size_t i = 0; i < t->it_nbuckets; i++) {
		struct mnt_ino_rec **pp = &t->it_buckets[(from + i) & (t->it_nbuckets - 1)];
		struct mnt_ino_rec *r = *pp;

		if (r) {
			*pp = r->ir_next;
			t->it_count--;
			t->it_evicted++;
			return r;
		}
	}
	return NULL;
}

/* A new, empty record of @ino, which has none; NULL on no memory. */
static struct mnt_ino_rec *ino_add(struct mnt_ino_table *t, uint64_t ino)
{
	struct mnt_ino_rec *r = NULL;
	size_t b;

	if (t->it_count >= t->it_max)
		r = ino_evict(t, ino_bucket(t, ino) + 1);
	else if (t->it_count >= t->it_nbuckets)
		ino_grow(t);
	if (!r)
		r = malloc(sizeof(*r));
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->ir_ino = ino;
	b = ino_bucket(t, ino);
	r->ir_next = t->it_buckets[b];
	t->it_buckets[b] = r;
	t->it_count++;
	return r;
}

/* The record of @ino, made (empty) when there is none; NULL on no memory. */
static struct mnt_ino_rec *ino_get(struct mnt_ino_table *t, uint64_t ino)
{
	struct mnt_ino_rec *r = *ino_find(t, ino);

	return r ? r : ino_add(t, ino);
}

/* Takes the record *@pp (found by ino_find()) out and frees it. */
static void ino_unlink(struct mnt_ino_table *t, struct mnt_ino_rec **pp)
{
	struct mnt_ino_rec *r = *pp;

	*pp = r->ir_next;
	t->it_count--;
	free(r);
}

/* Frees the record *@pp when it keeps nothing any more. */
static void ino_put_if_empty(struct mnt_ino_table *t, struct mnt_ino_rec **pp)
{
	if (!(*pp)->ir_opened.is_valid && !(*pp)->ir_told.is_valid)
		ino_unlink(t, pp);
}

static bool seen_is(const struct mnt_ino_seen *s, uint64_t size, const struct timespec *mtime,
		    const struct timespec *ctime)
{
	return s->is_valid && s->is_size == size &&
	       s->is_mtime.tv_sec == mtime->tv_sec && s->is_mtime.tv_nsec == mtime->tv_nsec &&
	       s->is_ctime.tv_sec == ctime->tv_sec && s->is_ctime.tv_nsec == ctime->tv_nsec;
}

static void seen_set(struct mnt_ino_seen *s, uint64_t size, const struct timespec *mtime,
		     const struct timespec *ctime)
{
	s->is_valid = true;
	s->is_size = size;
	s->is_mtime = *mtime;
	s->is_ctime = *ctime;
}

bool mnt_ino_opened(struct mnt_ino_table *t, uint64_t ino, uint64_t size,
		    const struct timespec *mtime, const struct timespec *ctime)
{
	struct mnt_ino_rec *r = ino_get(t, ino);
	bool same;

	if (!r)
		return false;
	same = seen_is(&r->ir_opened, size, mtime, ctime);
	seen_set(&r->ir_opened, size, mtime, ctime);
	return same;
}

void mnt_ino_opened_drop(struct mnt_ino_table *t, uint64_t ino)
{
	struct mnt_ino_rec **pp = ino_find(t, ino);

	if (!*pp)
		return;
	(*pp)->ir_opened.is_valid = false;
	ino_put_if_empty(t, pp);
}

void mnt_ino_told(struct mnt_ino_table *t, uint64_t ino, uint64_t size,
		  const struct timespec *mtime, const struct timespec *ctime)
{
	struct mnt_ino_rec **pp = ino_find(t, ino);
	struct mnt_ino_rec *r = *pp;

	if (r && r->ir_told.is_valid && !seen_is(&r->ir_told, size, mtime, ctime)) {
		r->ir_told.is_valid = false;
		ino_put_if_empty(t, pp);
		return;
	}
	r = r ? r : ino_add(t, ino);
	if (r)
		seen_set(&r->ir_told, size, mtime, ctime);
}

bool mnt_ino_told_is(struct mnt_ino_table *t, uint64_t ino, uint64_t size,
		     const struct timespec *mtime, const struct timespec *ctime)
{
	struct mnt_ino_rec *r = *ino_find(t, ino);

	return r && seen_is(&r->ir_told, size, mtime, ctime);
}

void mnt_ino_forget(struct mnt_ino_table *t, uint64_t ino)
{
	struct mnt_ino_rec **pp = ino_find(t, ino);

	if (*pp)
		ino_unlink(t, pp);
}
