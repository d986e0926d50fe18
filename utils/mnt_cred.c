/* SPDX-License-Identifier: MIT */
/*
 * The credentials a FUSE request acts with.  The kernel sends uid, gid and
 * pid; the supplementary groups are read from /proc/PID/status by libfuse
 * (an open, a read and a close).  Reading a dataset of small files costs a
 * lookup and an open per file, so the groups of a process are kept for a
 * second, keyed by pid, uid and gid: a process that calls setgroups(2)
 * acts with its old groups for at most that long, and the MDS (and, with
 * default_permissions, the kernel) checks every request anyway.
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "utils/mnt.h"

int64_t mnt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Fills @cred; false when /proc could not tell the groups. */
static bool mnt_cred_read(fuse_req_t req, const struct fuse_ctx *fc, struct nacre_cred *cred)
{
	int n;

	cred->uid = fc->uid;
	cred->gid = fc->gid;
	/* When /proc cannot tell (the caller already exited, or the request
	 * came from the kernel itself) the primary group is all the MDS
	 * gets, which can only deny more, never allow more. */
	n = fuse_req_getgroups(req, NACRE_MAX_GROUPS, cred->groups);
	cred->ngroups = n < 0 ? 0 : n > NACRE_MAX_GROUPS ? NACRE_MAX_GROUPS : (unsigned int)n;
	return n >= 0;
}

void mnt_cred_get(fuse_req_t req, struct nacre_cred *cred)
{
	struct mnt_ctx *ctx = fuse_req_userdata(req);
	const struct fuse_ctx *fc = fuse_req_ctx(req);
	struct mnt_cred_slot *cs;
	int64_t now = mnt_now_ms();

	if (fc->pid <= 0) {
		mnt_cred_read(req, fc, cred);
		return;
	}
	cs = &ctx->mc_creds[(unsigned int)fc->pid % MNT_CRED_SLOTS];
	pthread_mutex_lock(&ctx->mc_cred_lock);
	if (cs->cs_pid == fc->pid && cs->cs_cred.uid == fc->uid && cs->cs_cred.gid == fc->gid &&
	    now - cs->cs_at_ms < MNT_CRED_TTL_MS) {
		*cred = cs->cs_cred;
		pthread_mutex_unlock(&ctx->mc_cred_lock);
		return;
	}
	pthread_mutex_unlock(&ctx->mc_cred_lock);
	/* Only what /proc answered is kept: a failed read is tried again. */
	if (!mnt_cred_read(req, fc, cred))
		return;
	pthread_mutex_lock(&ctx->mc_cred_lock);
	cs->cs_pid = fc->pid;
	cs->cs_at_ms = now;
	cs->cs_cred = *cred;
	pthread_mutex_unlock(&ctx->mc_cred_lock);
}
