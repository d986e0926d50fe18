/* SPDX-License-Identifier: MIT */
/*
 * Makes malloc keep the memory of freed request buffers for the next ones
 * instead of returning it to the kernel: a page the process gets anew
 * costs a fault and a clearing, and on a virtual machine that keeps shadow
 * page tables much more (an OSS took 7 s of CPU to take in 1 GiB of
 * writes with a new mapping per request, 1 to 2 s with reused memory).
 * What is kept is what the process once used at the same time, which its
 * servers bound (SRV_MEM_LIMIT).  For the daemons (nc_daemon_run()) and
 * mount.nacre, not for libnacre, whose malloc is the application's.
 * Inline, so that mount.nacre, which links only libnacre's API, has it
 * too.
 */
#ifndef NC_MALLOC_KEEP_H
#define NC_MALLOC_KEEP_H

#include <malloc.h>

/* The largest block malloc may take from its heaps (glibc's limit for
 * M_MMAP_THRESHOLD on 64-bit), above one bulk of NC_MAX_BULK. */
#define NC_MALLOC_MMAP_MIN (32u << 20)
/* Free memory at the top of a heap that is kept rather than trimmed. */
#define NC_MALLOC_TRIM (1u << 30)

static inline void nc_malloc_keep_freed(void)
{
	/* Failure leaves glibc's defaults: slower, not wrong. */
	(void)mallopt(M_MMAP_THRESHOLD, NC_MALLOC_MMAP_MIN);
	(void)mallopt(M_TRIM_THRESHOLD, NC_MALLOC_TRIM);
}

#endif
