/* SPDX-License-Identifier: MIT */
/*
 * Lookups with the open intent.  Opening a file the kernel has no entry
 * for costs it a LOOKUP and an OPEN; reading a dataset of small files
 * through the mount is mostly those two.  The lookup asks the MDS, in the
 * same request, for what an open for reading needs (nacre_lookup_open()),
 * and keeps it here, keyed by inode and by the calling thread, until the
 * OPEN of that same system call takes it: one MDS round trip per file
 * instead of two.
 *
 * The kernel does not tell which system call a request belongs to.  An
 * intent is taken only by an OPEN from the thread whose LOOKUP made it,
 * with the same uid and gid, within MNT_INTENT_MS, and when this mount has
 * not changed the file (setattr, write) since the lookup began; else the
 * OPEN asks the MDS.  So a thread that stats a name and opens it within
 * that time opens the file as the stat's lookup saw it: a change another client closed in
 * between shows at the next open, as if it had come a little later.
 */
#include "config.h"

#include "utils/mnt.h"

uint64_t mnt_intent_seq(struct mnt_ctx *ctx)
{
	uint64_t seq;

	pthread_mutex_lock(&ctx->mc_intent_lock);
	seq = ctx->mc_intent_seq;
	pthread_mutex_unlock(&ctx->mc_intent_lock);
	return seq;
}

void mnt_intent_put(struct mnt_ctx *ctx, fuse_req_t req, fuse_ino_t ino, struct nacre_intent *in,
		    uint64_t seq)
{
	const struct fuse_ctx *fc = fuse_req_ctx(req);
	struct mnt_intent_slot *is = &ctx->mc_intents[ino % MNT_INTENT_SLOTS];
	struct nacre_intent *old;

	if (fc->pid <= 0) {
		nacre_intent_free(in);
		return;
	}
	pthread_mutex_lock(&ctx->mc_intent_lock);
	old = is->is_intent;
	is->is_intent = in;
	is->is_ino = ino;
	is->is_pid = fc->pid;
	is->is_uid = fc->uid;
	is->is_gid = fc->gid;
	is->is_at_ms = mnt_now_ms();
	is->is_seq = seq;
	pthread_mutex_unlock(&ctx->mc_intent_lock);
	nacre_intent_free(old);
}

struct nacre_intent *mnt_intent_take(struct mnt_ctx *ctx, fuse_req_t req, fuse_ino_t ino)
{
	const struct fuse_ctx *fc = fuse_req_ctx(req);
	struct mnt_intent_slot *is = &ctx->mc_intents[ino % MNT_INTENT_SLOTS];
	struct nacre_intent *in = NULL, *stale = NULL;
	int64_t now = mnt_now_ms();

	pthread_mutex_lock(&ctx->mc_intent_lock);
	if (is->is_intent && is->is_ino == ino) {
		if (is->is_pid == fc->pid && is->is_uid == fc->uid && is->is_gid == fc->gid &&
		    now - is->is_at_ms <= MNT_INTENT_MS && is->is_changed <= is->is_seq)
			in = is->is_intent;
		else if (now - is->is_at_ms > MNT_INTENT_MS)
			stale = is->is_intent;
		if (in || stale)
			is->is_intent = NULL;
	}
	pthread_mutex_unlock(&ctx->mc_intent_lock);
	nacre_intent_free(stale);
	return in;
}

void mnt_intent_changed(struct mnt_ctx *ctx, fuse_ino_t ino)
{
	struct mnt_intent_slot *is = &ctx->mc_intents[ino % MNT_INTENT_SLOTS];
	struct nacre_intent *in = NULL;

	pthread_mutex_lock(&ctx->mc_intent_lock);
	/* A lookup that started before now may still put an intent here: it
	 * is refused by the sequence. */
	is->is_changed = ++ctx->mc_intent_seq;
	if (is->is_ino == ino) {
		in = is->is_intent;
		is->is_intent = NULL;
	}
	pthread_mutex_unlock(&ctx->mc_intent_lock);
	nacre_intent_free(in);
}

void mnt_intent_fini(struct mnt_ctx *ctx)
{
	for (unsigned int i = 0; i < MNT_INTENT_SLOTS; i++) {
		nacre_intent_free(ctx->mc_intents[i].is_intent);
		ctx->mc_intents[i].is_intent = NULL;
	}
}
