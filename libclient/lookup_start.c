/* SPDX-License-Identifier: MIT */
/*
 * nacre_lookup_open_start(): a lookup with the open intent whose
 * completion runs where the MDS's reply is received, instead of on a
 * thread parked until it comes.
 *
 * The FUSE mount looks up every file it reads (the kernel's LOOKUP comes
 * before each open of a name it holds no entry for), and each lookup put
 * one of its workers to sleep until the MDS answered: the connection's
 * receive thread then woke it to answer the kernel.  The receive thread
 * now answers itself, two context switches fewer per file, as
 * nacre_pread_start() does for the read that follows.  Only the common
 * outcomes complete there (found, or not there); any other (a file the
 * caller may not read, which needs a second request; a lost connection or
 * a timeout, which the synchronous call retries) is looked up again with
 * cl_lookup_open() on a thread of its own.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/errors.h"
#include "libclient/cl_int.h"

struct cl_lookup_start {
	struct nc_call ls_call;
	struct nacre_fs *ls_fs;
	struct nc_cred ls_cred;
	struct nc_fid ls_parent;
	char ls_name[NC_NAME_MAX + 1];
	uint8_t *ls_body;
	nacre_lookup_done_fn ls_done;
	void *ls_arg;
	/* The starter's and the completion's: nc_cconn_submit() may still
	 * look at the call after the reply completed it. */
	atomic_int ls_refs;
};

static void ls_put(struct cl_lookup_start *ls)
{
	if (atomic_fetch_sub(&ls->ls_refs, 1) == 1) {
		free(ls->ls_body);
		free(ls);
	}
}

/* The lookup again, synchronously (with the retries and the second request
 * of cl_lookup_open()), on a thread of its own. */
static void *ls_again(void *arg)
{
	struct cl_lookup_start *ls = arg;
	struct nacre_intent *in = NULL;
	struct nacre_stat st;
	int rc;

	rc = cl_lookup_open(ls->ls_fs, &ls->ls_cred, &ls->ls_parent, ls->ls_name, &st, &in);
	ls->ls_done(rc, rc ? NULL : &st, in, ls->ls_arg);
	ls_put(ls);
	return NULL;
}

/* Decodes the reply into @in; 0 or -NC_E_PROTO / -ENOMEM. */
static int ls_decode(struct nc_call *call, struct nacre_intent *in)
{
	struct nc_attr_rep *rep = calloc(1, sizeof(*rep));
	int rc;

	if (!rep)
		return -ENOMEM;
	rc = nc_call_decode(call, (nc_xdr_fn)nc_wire_attr_rep, rep);
	if (!rc)
		rc = cl_md_attr_rep_take(rep, &in->in_attr, &in->in_layout, &in->in_inline);
	free(rep);
	return rc;
}

static void ls_reply(struct nc_call *call)
{
	struct cl_lookup_start *ls = call->c_priv;
	struct nacre_fs *fs = ls->ls_fs;
	struct nacre_intent *in;
	struct nacre_stat st;
	int rc = call->c_status;
	pthread_t th;

	in = calloc(1, sizeof(*in));
	if (!rc)
		rc = in ? ls_decode(call, in) : -ENOMEM;
	nc_call_fini(call);
	if (!rc) {
		cl_ncache_put(fs->fs_ncache, &ls->ls_cred, &ls->ls_parent, ls->ls_name,
			      &in->in_attr);
		cl_stat_from_attr(&in->in_attr, &st);
		if (cl_lookup_opened(&in->in_attr, &in->in_layout)) {
			in->in_cred = ls->ls_cred;
		} else {
			nacre_intent_free(in);
			in = NULL;
		}
		ls->ls_done(0, &st, in, ls->ls_arg);
		ls_put(ls);
		return;
	}
	nacre_intent_free(in);
	if (rc == -ENOENT || rc == -NC_E_PROTO || rc == -ENOMEM) {
		/* What the synchronous lookup would say too. */
		ls->ls_done(rc, NULL, NULL, ls->ls_arg);
		ls_put(ls);
		return;
	}
	if (!pthread_create(&th, NULL, ls_again, ls)) {
		pthread_detach(th);
		return;
	}
	ls->ls_done(rc, NULL, NULL, ls->ls_arg); /* no thread to look it up again */
	ls_put(ls);
}

NACRE_API int nacre_lookup_open_start(struct nacre_fs *fs, const struct nacre_cred *cred,
				      const struct nacre_fid *parent, const char *name,
				      nacre_lookup_done_fn done, void *arg)
{
	struct nc_fid p = { parent->seq, parent->oid };
	struct cl_lookup_start *ls;
	struct nc_name_req m;
	struct nc_attr held;
	uint32_t len;
	int rc;

	if (!fs || !done || !name)
		return -EAGAIN;
	/* A name this client holds in a pack it has not committed yet:
	 * nacre_lookup_open() answers it here. */
	if (cl_pack_lookup(fs, &p, name, &held))
		return -EAGAIN;
	ls = calloc(1, sizeof(*ls));
	if (!ls)
		return -EAGAIN;
	cl_cred_from(fs, cred, &ls->ls_cred);
	if (cl_md_lookup_open_req(&ls->ls_cred, &p, name, &m) ||
	    nc_msg_encode((nc_xdr_fn)nc_wire_name_req, &m, &ls->ls_body, &len)) {
		/* A bad name: the synchronous call says why. */
		free(ls);
		return -EAGAIN;
	}
	ls->ls_fs = fs;
	ls->ls_parent = p;
	strcpy(ls->ls_name, name);
	ls->ls_done = done;
	ls->ls_arg = arg;
	atomic_init(&ls->ls_refs, 2);
	nc_call_init(&ls->ls_call, NC_OP_LOOKUP, ls->ls_body, len);
	ls->ls_call.c_done = ls_reply;
	ls->ls_call.c_priv = ls;
	rc = nc_cconn_submit(fs->fs_mds, &ls->ls_call);
	if (rc) {
		/* Never queued, so it never completes: the caller looks up. */
		nc_call_fini(&ls->ls_call);
		free(ls->ls_body);
		free(ls);
		return -EAGAIN;
	}
	ls_put(ls);
	return 0;
}
