/* SPDX-License-Identifier: MIT */
/*
 * The name cache of path resolution: (directory, name, identity) -> the
 * child's attributes, for a bounded time (nacre_opts.attr_cache_ms), as the
 * kernel's dentry and attribute caches do for a mount.  Only positive
 * entries are kept, so a name another client creates is found at once; a
 * name another client removed may be found until its entry expires, and
 * opening it then fails at the MDS, which makes nacre_open() walk again
 * without the cache.  This client's own changes drop what they affect, by
 * name and by FID (hard links share a FID).
 *
 * A create, link, unlink or rename in a directory changes the directory's
 * times, size and link count but not its FID, type, owner or mode: its
 * entry is then marked stale rather than dropped.  A walk through it (and
 * the resolution of a parent directory, which needs only its FID) still
 * uses it; a stat of it asks the MDS.  Creating many files in one
 * directory so costs one request each, not two.
 *
 * The identity is part of the key because the MDS checked search
 * permission on the directory for the caller that looked the name up.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libclient/cl_int.h"

#define NCACHE_BUCKETS 16384u           /* power of two */
#define NCACHE_MAX 65536u               /* entries */

struct nce {
	struct nc_fid e_parent;
	uint64_t e_cred;                /* hash of the identity */
	char *e_name;
	struct nc_attr e_attr;          /* the child */
	bool e_stale;                   /* e_attr's times, size, nlink changed */
	int64_t e_expires_ms;
	struct nce *e_hnext;            /* by (parent, name) */
	struct nce *e_fnext;            /* by child FID */
	struct nce *e_lprev, *e_lnext;  /* least recently added first */
};

struct cl_ncache {
	pthread_mutex_t n_lock;
	int n_ttl_ms;
	unsigned int n_count;
	struct nce *n_byname[NCACHE_BUCKETS];
	struct nce *n_byfid[NCACHE_BUCKETS];
	struct nce *n_oldest, *n_newest;
};

/* FNV-1a over the bytes given. */
static uint64_t nce_fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--) {
		h ^= *b++;
		h *= 1099511628211ull;
	}
	return h;
}

static uint64_t nce_cred_hash(const struct nc_cred *c)
{
	uint64_t h = 14695981039346656037ull;
	uint32_t n = c->c_ngroups < NC_MAX_GROUPS ? c->c_ngroups : NC_MAX_GROUPS;

	h = nce_fnv(h, &c->c_uid, sizeof(c->c_uid));
	h = nce_fnv(h, &c->c_gid, sizeof(c->c_gid));
	h = nce_fnv(h, &n, sizeof(n));
	return nce_fnv(h, c->c_groups, n * sizeof(c->c_groups[0]));
}

static unsigned int nce_name_bucket(const struct nc_fid *parent, const char *name)
{
	uint64_t h = 14695981039346656037ull;

	h = nce_fnv(h, &parent->f_seq, sizeof(parent->f_seq));
	h = nce_fnv(h, &parent->f_oid, sizeof(parent->f_oid));
	h = nce_fnv(h, name, strlen(name));
	return (unsigned int)(h & (NCACHE_BUCKETS - 1));
}

static unsigned int nce_fid_bucket(const struct nc_fid *fid)
{
	return (unsigned int)((fid->f_oid * 0x9e3779b97f4a7c15ull + fid->f_seq) >> 50) &
	       (NCACHE_BUCKETS - 1);
}

int cl_ncache_new(int ttl_ms, struct cl_ncache **out)
{
	struct cl_ncache *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	pthread_mutex_init(&n->n_lock, NULL);
	n->n_ttl_ms = ttl_ms;
	*out = n;
	return 0;
}

/* Unlinks @e from both chains and the age list, and frees it. */
static void nce_remove(struct cl_ncache *n, struct nce *e)
{
	struct nce **pp;

	for (pp = &n->n_byname[nce_name_bucket(&e->e_parent, e->e_name)]; *pp;
	     pp = &(*pp)->e_hnext) {
		if (*pp == e) {
			*pp = e->e_hnext;
			break;
		}
	}
	for (pp = &n->n_byfid[nce_fid_bucket(&e->e_attr.a_fid)]; *pp; pp = &(*pp)->e_fnext) {
		if (*pp == e) {
			*pp = e->e_fnext;
			break;
		}
	}
	if (e->e_lprev)
		e->e_lprev->e_lnext = e->e_lnext;
	else
		n->n_oldest = e->e_lnext;
	if (e->e_lnext)
		e->e_lnext->e_lprev = e->e_lprev;
	else
		n->n_newest = e->e_lprev;
	n->n_count--;
	free(e->e_name);
	free(e);
}

void cl_ncache_free(struct cl_ncache *n)
{
	if (!n)
		return;
	while (n->n_oldest)
		nce_remove(n, n->n_oldest);
	pthread_mutex_destroy(&n->n_lock);
	free(n);
}

static struct nce *nce_find(struct cl_ncache *n, const struct nc_fid *parent,
			    const char *name, uint64_t cred)
{
	struct nce *e;

	for (e = n->n_byname[nce_name_bucket(parent, name)]; e; e = e->e_hnext) {
		if (e->e_cred == cred && nc_fid_eq(&e->e_parent, parent) &&
		    !strcmp(e->e_name, name))
			return e;
	}
	return NULL;
}

bool cl_ncache_get(struct cl_ncache *n, const struct nc_cred *cred, const struct nc_fid *parent,
		   const char *name, bool stale_ok, struct nc_attr *attr)
{
	uint64_t ch;
	struct nce *e;
	bool hit = false;

	if (!n || n->n_ttl_ms <= 0)
		return false;
	ch = nce_cred_hash(cred);
	pthread_mutex_lock(&n->n_lock);
	e = nce_find(n, parent, name, ch);
	if (e && e->e_expires_ms > nc_now_ms()) {
		hit = !e->e_stale || stale_ok;
		if (hit)
			*attr = e->e_attr;
	} else if (e) {
		nce_remove(n, e);
	}
	pthread_mutex_unlock(&n->n_lock);
	return hit;
}

void cl_ncache_put(struct cl_ncache *n, const struct nc_cred *cred, const struct nc_fid *parent,
		   const char *name, const struct nc_attr *attr)
{
	uint64_t ch;
	struct nce *e;
	unsigned int b;

	if (!n || n->n_ttl_ms <= 0)
		return;
	ch = nce_cred_hash(cred);
	pthread_mutex_lock(&n->n_lock);
	e = nce_find(n, parent, name, ch);
	if (e)
		nce_remove(n, e);
	if (n->n_count >= NCACHE_MAX)
		nce_remove(n, n->n_oldest);
	e = calloc(1, sizeof(*e));
	if (e)
		e->e_name = strdup(name);
	if (!e || !e->e_name) {
		free(e);
		goto out; /* a cache: nothing is lost */
	}
	e->e_parent = *parent;
	e->e_cred = ch;
	e->e_attr = *attr;
	e->e_expires_ms = nc_now_ms() + n->n_ttl_ms;
	b = nce_name_bucket(parent, name);
	e->e_hnext = n->n_byname[b];
	n->n_byname[b] = e;
	b = nce_fid_bucket(&attr->a_fid);
	e->e_fnext = n->n_byfid[b];
	n->n_byfid[b] = e;
	e->e_lprev = n->n_newest;
	if (n->n_newest)
		n->n_newest->e_lnext = e;
	else
		n->n_oldest = e;
	n->n_newest = e;
	n->n_count++;
out:
	pthread_mutex_unlock(&n->n_lock);
}

static void nce_drop_fid_locked(struct cl_ncache *n, const struct nc_fid *fid)
{
	struct nce *e, *next;

	for (e = n->n_byfid[nce_fid_bucket(fid)]; e; e = next) {
		next = e->e_fnext;
		if (nc_fid_eq(&e->e_attr.a_fid, fid))
			nce_remove(n, e);
	}
}

void cl_ncache_drop_fid(struct cl_ncache *n, const struct nc_fid *fid)
{
	if (!n || n->n_ttl_ms <= 0)
		return;
	pthread_mutex_lock(&n->n_lock);
	nce_drop_fid_locked(n, fid);
	pthread_mutex_unlock(&n->n_lock);
}

void cl_ncache_stale_fid(struct cl_ncache *n, const struct nc_fid *fid)
{
	struct nce *e;

	if (!n || n->n_ttl_ms <= 0)
		return;
	pthread_mutex_lock(&n->n_lock);
	for (e = n->n_byfid[nce_fid_bucket(fid)]; e; e = e->e_fnext)
		if (nc_fid_eq(&e->e_attr.a_fid, fid))
			e->e_stale = true;
	pthread_mutex_unlock(&n->n_lock);
}

void cl_ncache_drop_name(struct cl_ncache *n, const struct nc_fid *parent, const char *name)
{
	struct nce *e, *next;
	struct nc_fid victims[8];
	unsigned int nv = 0, i;

	if (!n || n->n_ttl_ms <= 0)
		return;
	pthread_mutex_lock(&n->n_lock);
	/* Every identity's entry for the name, and what else names the same
	 * files (their link counts and ctimes change). */
	for (e = n->n_byname[nce_name_bucket(parent, name)]; e; e = next) {
		next = e->e_hnext;
		if (!nc_fid_eq(&e->e_parent, parent) || strcmp(e->e_name, name))
			continue;
		if (nv < sizeof(victims) / sizeof(victims[0]))
			victims[nv++] = e->e_attr.a_fid;
		nce_remove(n, e);
	}
	for (i = 0; i < nv; i++)
		nce_drop_fid_locked(n, &victims[i]);
	pthread_mutex_unlock(&n->n_lock);
}
