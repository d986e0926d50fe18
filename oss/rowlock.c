/* SPDX-License-Identifier: MIT */
/*
 * Row locks (see rowlock.h): a hash table of held ranges, keyed by file,
 * under one mutex.  Lock calls are short (a walk of one bucket) and come
 * once per partial-row write, far less often than data requests, so one
 * mutex is plenty.
 *
 * Invariant: the unexpired ranges of one owner on one file never overlap
 * (oss_lock_try() merges them), so at most one of them can contain a
 * released range strictly, which is what lets a release split a range
 * after checking up front that it can.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oss/rowlock.h"

#define OSS_LOCK_BUCKETS 4096

struct oss_lock {
	struct nc_fid lk_fid;
	uint64_t lk_start;
	uint64_t lk_end;                /* exclusive */
	uint64_t lk_owner;
	int64_t lk_expires_ms;          /* CLOCK_MONOTONIC */
	struct oss_lock *lk_next;
};

/* A watch (see rowlock.h): ranges other owners locked on lw_fid. */
struct oss_watch {
	struct nc_fid lw_fid;
	uint64_t lw_owner;
	int64_t lw_expires_ms;
	uint32_t lw_n;
	uint64_t lw_start[OSS_WATCH_RANGES];
	uint64_t lw_end[OSS_WATCH_RANGES];      /* exclusive */
	struct oss_watch *lw_next;
};

struct oss_locks {
	pthread_mutex_t ls_mutex;
	/* Few at a time (one per file being rebuilt): a list. */
	struct oss_watch *ls_watches;
	uint32_t ls_nwatches;
	uint32_t ls_max;
	uint32_t ls_count;              /* entries, expired ones included */
	/* No entry expires before this: a full table is only swept for
	 * expired entries once some can have expired. */
	int64_t ls_min_expires_ms;
	struct oss_lock *ls_buckets[OSS_LOCK_BUCKETS];
};

static struct oss_lock **oss_lock_bucket(struct oss_locks *ls,
					 const struct nc_fid *fid)
{
	uint64_t h = fid->f_seq * 0x9e3779b97f4a7c15ull ^
		     fid->f_oid * 0xc2b2ae3d27d4eb4full;

	return &ls->ls_buckets[(h >> 40) % OSS_LOCK_BUCKETS];
}

static bool oss_fid_eq(const struct nc_fid *a, const struct nc_fid *b)
{
	return a->f_seq == b->f_seq && a->f_oid == b->f_oid;
}

static bool oss_lock_overlaps(const struct oss_lock *lk, uint64_t start,
			      uint64_t end)
{
	return lk->lk_start < end && start < lk->lk_end;
}

/* Unlinks *@pp (advancing *@pp to the next entry) and frees it. */
static void oss_lock_unlink(struct oss_locks *ls, struct oss_lock **pp)
{
	struct oss_lock *lk = *pp;

	*pp = lk->lk_next;
	free(lk);
	ls->ls_count--;
}

static int oss_range_end(uint64_t start, uint64_t count, uint64_t *end)
{
	if (count == 0 || start + count < start)
		return -EINVAL;
	*end = start + count;
	return 0;
}

/* Frees every expired entry of the table. */
static void oss_locks_sweep(struct oss_locks *ls, int64_t now)
{
	int64_t min = INT64_MAX;

	for (int i = 0; i < OSS_LOCK_BUCKETS; i++) {
		struct oss_lock **pp = &ls->ls_buckets[i];

		while (*pp) {
			if ((*pp)->lk_expires_ms <= now) {
				oss_lock_unlink(ls, pp);
				continue;
			}
			if ((*pp)->lk_expires_ms < min)
				min = (*pp)->lk_expires_ms;
			pp = &(*pp)->lk_next;
		}
	}
	ls->ls_min_expires_ms = min;
}

/* Room for @n more entries, sweeping expired ones when the table is full. */
static bool oss_locks_have_room(struct oss_locks *ls, uint32_t n, int64_t now)
{
	if (ls->ls_max - ls->ls_count >= n)
		return true;
	if (ls->ls_min_expires_ms <= now)
		oss_locks_sweep(ls, now);
	return ls->ls_max - ls->ls_count >= n;
}

static struct oss_lock *oss_lock_alloc(struct oss_locks *ls,
				       struct oss_lock **bucket,
				       const struct nc_fid *fid,
				       uint64_t owner, int64_t expires)
{
	struct oss_lock *lk = malloc(sizeof(*lk));

	if (!lk)
		return NULL;
	lk->lk_fid = *fid;
	lk->lk_owner = owner;
	lk->lk_expires_ms = expires;
	lk->lk_next = *bucket;
	*bucket = lk;
	ls->ls_count++;
	if (expires < ls->ls_min_expires_ms)
		ls->ls_min_expires_ms = expires;
	return lk;
}

int oss_locks_new(uint32_t max, struct oss_locks **out)
{
	struct oss_locks *ls;

	*out = NULL;
	ls = calloc(1, sizeof(*ls));
	if (!ls)
		return -ENOMEM;
	if (pthread_mutex_init(&ls->ls_mutex, NULL)) {
		free(ls);
		return -ENOMEM;
	}
	ls->ls_max = max ? max : OSS_LOCKS_MAX;
	ls->ls_min_expires_ms = INT64_MAX;
	*out = ls;
	return 0;
}

/* Unlinks the watch *@pp (advancing *@pp to the next one) and frees it. */
static void oss_watch_unlink(struct oss_locks *ls, struct oss_watch **pp)
{
	struct oss_watch *w = *pp;

	*pp = w->lw_next;
	free(w);
	ls->ls_nwatches--;
}

void oss_locks_free(struct oss_locks *ls)
{
	if (!ls)
		return;
	for (int i = 0; i < OSS_LOCK_BUCKETS; i++)
		while (ls->ls_buckets[i])
			oss_lock_unlink(ls, &ls->ls_buckets[i]);
	while (ls->ls_watches)
		oss_watch_unlink(ls, &ls->ls_watches);
	pthread_mutex_destroy(&ls->ls_mutex);
	free(ls);
}

/*
 * Called with the mutex held.  First pass: reclaim expired entries of the
 * bucket and look for a conflict.  Second pass: merge the owner's
 * overlapping ranges into one, kept in the first of them.
 */
static int oss_lock_try_locked(struct oss_locks *ls, const struct nc_fid *fid,
			       uint64_t start, uint64_t end, uint64_t owner,
			       int64_t now, int64_t expires)
{
	struct oss_lock **bucket = oss_lock_bucket(ls, fid), **pp, *keep = NULL;

	for (pp = bucket; *pp;) {
		struct oss_lock *lk = *pp;

		if (lk->lk_expires_ms <= now) {
			oss_lock_unlink(ls, pp);
			continue;
		}
		if (oss_fid_eq(&lk->lk_fid, fid) && lk->lk_owner != owner &&
		    oss_lock_overlaps(lk, start, end))
			return -EAGAIN;
		pp = &lk->lk_next;
	}
	for (pp = bucket; *pp;) {
		struct oss_lock *lk = *pp;

		if (!oss_fid_eq(&lk->lk_fid, fid) || lk->lk_owner != owner ||
		    !oss_lock_overlaps(lk, start, end)) {
			pp = &lk->lk_next;
			continue;
		}
		if (lk->lk_start < start)
			start = lk->lk_start;
		if (lk->lk_end > end)
			end = lk->lk_end;
		/* A shorter lease asked for later never cuts one short. */
		if (lk->lk_expires_ms > expires)
			expires = lk->lk_expires_ms;
		if (keep) {
			oss_lock_unlink(ls, pp);
			continue;
		}
		keep = lk;
		pp = &lk->lk_next;
	}
	if (!keep) {
		if (!oss_locks_have_room(ls, 1, now))
			return -ENOSPC;
		keep = oss_lock_alloc(ls, bucket, fid, owner, expires);
		if (!keep)
			return -ENOMEM;
	}
	keep->lk_start = start;
	keep->lk_end = end;
	keep->lk_expires_ms = expires;
	return 0;
}

/* Merges range @k of @w with range @k + 1. */
static void oss_watch_join(struct oss_watch *w, uint32_t k)
{
	if (w->lw_end[k + 1] > w->lw_end[k])
		w->lw_end[k] = w->lw_end[k + 1];
	memmove(&w->lw_start[k + 1], &w->lw_start[k + 2],
		(w->lw_n - k - 2) * sizeof(w->lw_start[0]));
	memmove(&w->lw_end[k + 1], &w->lw_end[k + 2], (w->lw_n - k - 2) * sizeof(w->lw_end[0]));
	w->lw_n--;
}

/*
 * Adds [start, end) to @w's ranges, which stay sorted, apart and not
 * touching: it merges with those it overlaps or touches.  When there is
 * no room, the two neighbours with the smallest gap between them merge
 * first, so the record grows by as few rows as it can.
 */
static void oss_watch_add(struct oss_watch *w, uint64_t start, uint64_t end)
{
	uint32_t i = 0, j;

	while (i < w->lw_n && w->lw_end[i] < start)
		i++;
	for (j = i; j < w->lw_n && w->lw_start[j] <= end; j++) {
		if (w->lw_start[j] < start)
			start = w->lw_start[j];
		if (w->lw_end[j] > end)
			end = w->lw_end[j];
	}
	if (j > i) {    /* ranges i .. j - 1 become one */
		w->lw_start[i] = start;
		w->lw_end[i] = end;
		for (; j > i + 1; j--)
			oss_watch_join(w, i);
		return;
	}
	if (w->lw_n == OSS_WATCH_RANGES) {
		uint32_t best = 0;

		for (uint32_t k = 1; k + 1 < w->lw_n; k++)
			if (w->lw_start[k + 1] - w->lw_end[k] <
			    w->lw_start[best + 1] - w->lw_end[best])
				best = k;
		oss_watch_join(w, best);
		oss_watch_add(w, start, end); /* there is room now */
		return;
	}
	memmove(&w->lw_start[i + 1], &w->lw_start[i], (w->lw_n - i) * sizeof(w->lw_start[0]));
	memmove(&w->lw_end[i + 1], &w->lw_end[i], (w->lw_n - i) * sizeof(w->lw_end[0]));
	w->lw_start[i] = start;
	w->lw_end[i] = end;
	w->lw_n++;
}

/* Frees the expired watches linked from *@pp on, up to the first live
 * one; returns the link to it (a link to NULL at the list's end). */
static struct oss_watch **oss_watch_live(struct oss_locks *ls, struct oss_watch **pp, int64_t now)
{
	while (*pp && (*pp)->lw_expires_ms <= now)
		oss_watch_unlink(ls, pp);
	return pp;
}

/*
 * Called with the mutex held, after [start, end) of @fid was granted to
 * @owner: every other owner's watch on @fid records it, @owner's own
 * watch lives on until at least @expires.  Expired watches are freed.
 */
static void oss_watch_note(struct oss_locks *ls, const struct nc_fid *fid, uint64_t start,
			   uint64_t end, uint64_t owner, int64_t now, int64_t expires)
{
	for (struct oss_watch **pp = oss_watch_live(ls, &ls->ls_watches, now); *pp;
	     pp = oss_watch_live(ls, &(*pp)->lw_next, now)) {
		struct oss_watch *w = *pp;

		if (!oss_fid_eq(&w->lw_fid, fid))
			continue;
		if (w->lw_owner != owner)
			oss_watch_add(w, start, end);
		else if (w->lw_expires_ms < expires)
			w->lw_expires_ms = expires;
	}
}

/* @owner's unexpired watch on @fid, or NULL; expired ones are freed. */
static struct oss_watch **oss_watch_find(struct oss_locks *ls, const struct nc_fid *fid,
					 uint64_t owner, int64_t now)
{
	for (struct oss_watch **pp = oss_watch_live(ls, &ls->ls_watches, now); *pp;
	     pp = oss_watch_live(ls, &(*pp)->lw_next, now))
		if (oss_fid_eq(&(*pp)->lw_fid, fid) && (*pp)->lw_owner == owner)
			return pp;
	return NULL;
}

int oss_watch_start(struct oss_locks *ls, const struct nc_fid *fid, uint64_t owner,
		    uint32_t lease_ms)
{
	struct oss_watch **pp, *w;
	int64_t now;
	int ret = 0;

	if (lease_ms == 0)
		return -EINVAL;
	pthread_mutex_lock(&ls->ls_mutex);
	now = nc_now_ms();
	pp = oss_watch_find(ls, fid, owner, now);
	if (pp) {
		w = *pp;
	} else if (ls->ls_nwatches >= OSS_WATCHES_MAX) {
		ret = -ENOSPC;
		goto out;
	} else {
		w = malloc(sizeof(*w));
		if (!w) {
			ret = -ENOMEM;
			goto out;
		}
		w->lw_fid = *fid;
		w->lw_owner = owner;
		w->lw_next = ls->ls_watches;
		ls->ls_watches = w;
		ls->ls_nwatches++;
	}
	w->lw_n = 0;
	w->lw_expires_ms = now + lease_ms;
out:
	pthread_mutex_unlock(&ls->ls_mutex);
	return ret;
}

int oss_watch_fetch(struct oss_locks *ls, const struct nc_fid *fid, uint64_t owner,
		    uint32_t lease_ms, uint64_t *start, uint64_t *end, uint32_t max,
		    uint32_t *n)
{
	struct oss_watch **pp;
	int64_t now;
	int ret = 0;

	*n = 0;
	if (max == 0 || lease_ms == 0)
		return -EINVAL;
	pthread_mutex_lock(&ls->ls_mutex);
	now = nc_now_ms();
	pp = oss_watch_find(ls, fid, owner, now);
	if (!pp) {
		ret = -ENOENT;
		goto out;
	}
	/* In order: what does not fit merges into the last one given. */
	*n = (*pp)->lw_n < max ? (*pp)->lw_n : max;
	memcpy(start, (*pp)->lw_start, *n * sizeof(*start));
	memcpy(end, (*pp)->lw_end, *n * sizeof(*end));
	if (*n)
		end[*n - 1] = (*pp)->lw_end[(*pp)->lw_n - 1];
	if ((*pp)->lw_expires_ms < now + lease_ms)
		(*pp)->lw_expires_ms = now + lease_ms;
out:
	pthread_mutex_unlock(&ls->ls_mutex);
	return ret;
}

int oss_watch_stop(struct oss_locks *ls, const struct nc_fid *fid, uint64_t owner)
{
	struct oss_watch **pp;
	int ret = -ENOENT;

	pthread_mutex_lock(&ls->ls_mutex);
	pp = oss_watch_find(ls, fid, owner, nc_now_ms());
	if (pp) {
		oss_watch_unlink(ls, pp);
		ret = 0;
	}
	pthread_mutex_unlock(&ls->ls_mutex);
	return ret;
}

int oss_lock_try(struct oss_locks *ls, const struct nc_fid *fid,
		 uint64_t start, uint64_t count, uint64_t owner,
		 uint32_t lease_ms)
{
	uint64_t end;
	int64_t now;
	int ret;

	ret = oss_range_end(start, count, &end);
	if (ret)
		return ret;
	if (lease_ms == 0)
		return -EINVAL;
	pthread_mutex_lock(&ls->ls_mutex);
	now = nc_now_ms();
	ret = oss_lock_try_locked(ls, fid, start, end, owner, now,
				  now + lease_ms);
	if (ret == 0 && ls->ls_watches)
		oss_watch_note(ls, fid, start, end, owner, now, now + lease_ms);
	pthread_mutex_unlock(&ls->ls_mutex);
	return ret;
}

/* Called with the mutex held; see the invariant at the top. */
static int oss_lock_release_locked(struct oss_locks *ls,
				   const struct nc_fid *fid, uint64_t start,
				   uint64_t end, uint64_t owner, int64_t now)
{
	struct oss_lock **bucket = oss_lock_bucket(ls, fid), **pp;
	bool found = false;

	for (pp = bucket; *pp;) {
		struct oss_lock *lk = *pp;

		if (lk->lk_expires_ms <= now) {
			oss_lock_unlink(ls, pp);
			continue;
		}
		if (!oss_fid_eq(&lk->lk_fid, fid) || lk->lk_owner != owner ||
		    !oss_lock_overlaps(lk, start, end)) {
			pp = &lk->lk_next;
			continue;
		}
		found = true;
		if (lk->lk_start < start && lk->lk_end > end) {
			/* Splitting may exceed the bound by one entry: a
			 * release must not fail for want of room. */
			struct oss_lock *right;

			right = oss_lock_alloc(ls, bucket, fid, owner,
					       lk->lk_expires_ms);
			if (!right)
				return -ENOMEM;
			right->lk_start = end;
			right->lk_end = lk->lk_end;
			lk->lk_end = start;
			return 0;
		}
		if (lk->lk_start >= start && lk->lk_end <= end) {
			oss_lock_unlink(ls, pp);
			continue;
		}
		if (lk->lk_start < start)
			lk->lk_end = start;
		else
			lk->lk_start = end;
		pp = &lk->lk_next;
	}
	return found ? 0 : -ENOENT;
}

int oss_lock_release(struct oss_locks *ls, const struct nc_fid *fid,
		     uint64_t start, uint64_t count, uint64_t owner)
{
	uint64_t end;
	int ret;

	ret = oss_range_end(start, count, &end);
	if (ret)
		return ret;
	pthread_mutex_lock(&ls->ls_mutex);
	ret = oss_lock_release_locked(ls, fid, start, end, owner, nc_now_ms());
	pthread_mutex_unlock(&ls->ls_mutex);
	return ret;
}

uint32_t oss_lock_release_owner(struct oss_locks *ls, uint64_t owner)
{
	uint32_t dropped = 0;
	int64_t now;

	pthread_mutex_lock(&ls->ls_mutex);
	for (struct oss_watch **wp = &ls->ls_watches; *wp;) {
		if ((*wp)->lw_owner == owner)
			oss_watch_unlink(ls, wp);
		else
			wp = &(*wp)->lw_next;
	}
	/* Most connections (data clients) never lock anything. */
	if (ls->ls_count == 0)
		goto out_unlock;
	now = nc_now_ms();
	for (int i = 0; i < OSS_LOCK_BUCKETS; i++) {
		struct oss_lock **pp = &ls->ls_buckets[i];

		while (*pp) {
			bool expired = (*pp)->lk_expires_ms <= now;

			if ((*pp)->lk_owner == owner || expired) {
				dropped += !expired && (*pp)->lk_owner == owner;
				oss_lock_unlink(ls, pp);
				continue;
			}
			pp = &(*pp)->lk_next;
		}
	}
out_unlock:
	pthread_mutex_unlock(&ls->ls_mutex);
	return dropped;
}

uint32_t oss_locks_held(struct oss_locks *ls)
{
	uint32_t held = 0;
	int64_t now;

	pthread_mutex_lock(&ls->ls_mutex);
	now = nc_now_ms();
	for (int i = 0; i < OSS_LOCK_BUCKETS; i++)
		for (struct oss_lock *lk = ls->ls_buckets[i]; lk;
		     lk = lk->lk_next)
			held += lk->lk_expires_ms > now;
	pthread_mutex_unlock(&ls->ls_mutex);
	return held;
}
