/* SPDX-License-Identifier: MIT */
/*
 * What mount.nacre knows of the inodes the kernel holds (mnt_inode.c):
 * per inode number, the file as it was at its last open here and the
 * attributes last replied for it.
 */
#ifndef MNT_INODE_H
#define MNT_INODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A file's size, mtime and ctime as seen at one point. */
struct mnt_ino_seen {
	bool is_valid;
	uint64_t is_size;
	struct timespec is_mtime;
	struct timespec is_ctime;
};

/* Records kept at most (about 128 bytes each): past this, a new record
 * takes the place of an old one.  The kernel holds far more memory per
 * inode than this table before it gets there. */
#define MNT_INO_MAX (1u << 21)

struct mnt_ino_rec;
struct mnt_ino_table {
	struct mnt_ino_rec **it_buckets;
	size_t it_nbuckets;             /* a power of two */
	size_t it_count;
	size_t it_max;
	uint64_t it_evicted;            /* records taken out to make room */
};

/* None of these lock: the caller serialises (mount.nacre: mc_lock).
 * max: records kept at most (MNT_INO_MAX in the mount).  0 or -ENOMEM. */
int mnt_ino_table_init(struct mnt_ino_table *t, size_t max);
void mnt_ino_table_fini(struct mnt_ino_table *t);
/* An open of @ino found the file as given: true when the last open here
 * found it the same (the kernel's pages of it are still right).  Records
 * it for the next open. */
bool mnt_ino_opened(struct mnt_ino_table *t, uint64_t ino, uint64_t size,
		    const struct timespec *mtime, const struct timespec *ctime);
/* This mount is changing @ino: its next open starts from the OSTs. */
void mnt_ino_opened_drop(struct mnt_ino_table *t, uint64_t ino);
/* The attributes given were replied to the kernel for @ino.  Where two
 * replies differ, which one the kernel holds is unknown, so the record is
 * dropped and the next open has the kernel fetch them. */
void mnt_ino_told(struct mnt_ino_table *t, uint64_t ino, uint64_t size,
		  const struct timespec *mtime, const struct timespec *ctime);
/* True when the attributes last replied for @ino are these. */
bool mnt_ino_told_is(struct mnt_ino_table *t, uint64_t ino, uint64_t size,
		     const struct timespec *mtime, const struct timespec *ctime);
/* The kernel dropped its inode @ino (FORGET): its record goes. */
void mnt_ino_forget(struct mnt_ino_table *t, uint64_t ino);

#endif
