/* SPDX-License-Identifier: MIT */
/*
 * Open descriptors of pack objects, kept between reads.
 *
 * A packed small file is one read of a few KiB to 1 MiB from a pack object
 * that thousands of other files share; opening the object and its checksum
 * file for each read and closing them after cost the OSS about a tenth of
 * its CPU per read.  The cache keeps both descriptors of the most recently
 * read objects.  An entry is counted while a read uses it (a reply is sent
 * from it after the object's lock is dropped), so an entry that is dropped
 * (the object destroyed) or evicted closes when its last reader is done.
 */
#ifndef NACRE_OSS_FDCACHE_H
#define NACRE_OSS_FDCACHE_H

#include <pthread.h>
#include <stdint.h>

#include "common/types.h"

struct oss_fdc_ent {
	struct nc_fid fe_fid;
	int fe_fd;                      /* the object, O_RDONLY */
	int fe_cfd;                     /* its checksum file, O_RDONLY */
	unsigned int fe_refs;           /* reads using it, + 1 while cached */
	struct oss_fdc_ent *fe_hnext;   /* hash chain */
	struct oss_fdc_ent *fe_newer;   /* recency list, under fc_lock */
	struct oss_fdc_ent *fe_older;
};

struct oss_fdcache {
	pthread_mutex_t fc_lock;
	unsigned int fc_size;           /* entries at most; 0: the cache is off */
	unsigned int fc_count;
	unsigned int fc_nbuckets;       /* a power of two */
	struct oss_fdc_ent **fc_buckets;
	struct oss_fdc_ent *fc_newest;  /* the entry used last */
	struct oss_fdc_ent *fc_oldest;  /* the next to go */
};

/*
 * How many pack objects each of @nosts OSTs keeps open in a process whose
 * descriptor limit is @nofile: a quarter of the descriptors, two per
 * object, at most OSS_FDC_MAX each; none below OSS_FDC_MIN_NOFILE.
 */
#define OSS_FDC_MAX 4096u
#define OSS_FDC_MIN_NOFILE 4096u
unsigned int oss_fdc_size_for(uint64_t nofile, unsigned int nosts);
/* At most @size entries (0 turns the cache off); 0 or -ENOMEM. */
int oss_fdc_init(struct oss_fdcache *c, unsigned int size);
/* Closes every entry; none may be in use. */
void oss_fdc_fini(struct oss_fdcache *c);
/* The entry of @fid, counted for the caller, or NULL. */
struct oss_fdc_ent *oss_fdc_get(struct oss_fdcache *c, const struct nc_fid *fid);
/*
 * Caches @fd and @cfd (both open) for @fid and returns their entry, counted
 * for the caller; the cache owns them from now on, whatever happens.  When
 * another read cached @fid meanwhile, @fd and @cfd are closed and its entry
 * is returned.  NULL (both closed) only when the cache is off or out of
 * memory: the caller then opens again uncached.
 */
struct oss_fdc_ent *oss_fdc_add(struct oss_fdcache *c, const struct nc_fid *fid,
				int fd, int cfd);
/* Ends the caller's use of @e. */
void oss_fdc_put(struct oss_fdcache *c, struct oss_fdc_ent *e);
/* Forgets @fid (its object is being removed): later reads open it anew. */
void oss_fdc_drop(struct oss_fdcache *c, const struct nc_fid *fid);

#endif
