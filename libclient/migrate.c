/* SPDX-License-Identifier: MIT */
/*
 * Migration: re-laying out a file online, as Lustre's lfs migrate.
 *
 * The MDS lays out new objects (MIGRATE with NC_MIGRATE_ALLOC), named by an
 * object FID of their own and kept on the MDS as the file's pending
 * migration.  This client opens the file for reading, copies its bytes
 * through the normal read path (a degraded erasure-coded file is decoded
 * on the way) into the new objects, whole rows at a time, syncs them, and
 * asks the MDS to swap: the MDS takes the new layout only when the file's
 * data version (layout generation, size, mtime, ctime) is still the one
 * the open returned, and the file saw no writer for a moment.  A writer in
 * between makes the swap answer -EBUSY and the copy starts again after a
 * growing wait, a few times; then the pending objects are released
 * (NC_MIGRATE_ABORT) and the caller hears -EBUSY.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errors.h"
#include "common/wire.h"
#include "libclient/cl_int.h"

#define MIG_RETRIES_DEFAULT 6
/* The first wait after a busy swap; it doubles after each.  The MDS wants
 * the file quiet for a second (ns_migrate.c): 6 tries span about 3 s. */
#define MIG_BACKOFF_MS 100
#define MIG_GRACE_DEFAULT_S 300
#define MIG_COPY_MIN (4u << 20) /* bytes per read and write, at least */

static int mig_rpc(struct nacre_fs *fs, struct nc_migrate_req *mg, struct nc_attr *attr,
		   struct nc_layout *layout)
{
	struct nc_attr_rep *rep = calloc(1, sizeof(*rep));
	struct nc_call call;
	int rc;

	if (!rep)
		return -ENOMEM;
	rc = nc_cconn_rpc(fs->fs_mds, NC_OP_MIGRATE, (nc_xdr_fn)nc_wire_migrate_req, mg,
			  (nc_xdr_fn)nc_wire_attr_rep, rep, &call);
	if (!rc) {
		nc_call_fini(&call);
		if (attr)
			*attr = rep->ar_attr;
		if (layout)
			*layout = rep->ar_layout;
		if (!rep->ar_has_layout)
			rc = -NC_E_LAYOUT;
	}
	free(rep);
	return rc;
}

/* Bytes per copy step: whole rows of the new layout, at least 4 MiB. */
static size_t mig_step(const struct nc_layout *l)
{
	size_t row = (size_t)l->l_stripe_size * (l->l_m ? l->l_k : l->l_stripe_count);

	if (row == 0)
		return MIG_COPY_MIN;
	return row * ((MIG_COPY_MIN + row - 1) / row);
}

/* Writes @len bytes at @off into the new objects. */
static int mig_write(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *fid,
		     struct nc_layout *nl, const uint8_t *buf, size_t len, uint64_t off)
{
	/* No fid: the new objects are nobody else's yet, so no row locks,
	 * and a shard that fails is marked here, not in the file's layout. */
	if (nl->l_m)
		return cl_ec_write(fs, cred, NULL, nl, buf, len, off);
	return cl_io_write(fs, fid, nl, buf, len, off);
}

/*
 * One copy of the file into the new objects @nl; @mg receives the data
 * version the copy started from.
 */
static int mig_copy(struct nacre_fs *fs, const struct nacre_cred *pcred,
		    const struct nc_cred *cred, const struct nc_fid *fid, struct nc_layout *nl,
		    uint8_t *buf, size_t step, struct nc_migrate_req *mg)
{
	struct nacre_fid pf = { fid->f_seq, fid->f_oid };
	struct nc_layout want = *nl;
	struct nacre_file *f;
	uint64_t size, off, failed = 0;
	int rc;

	rc = nacre_open_fid(fs, pcred, &pf, O_RDONLY, &f);
	if (rc)
		return rc;
	size = f->f_open_attr.a_size;
	mg->mg_gen = f->f_layout.l_gen;
	mg->mg_size = size;
	mg->mg_mtime = f->f_open_attr.a_mtime;
	mg->mg_ctime = f->f_open_attr.a_ctime;
	for (off = 0; !rc && off < size; ) {
		size_t want_len = size - off < step ? (size_t)(size - off) : step;
		ssize_t got = nacre_pread(f, buf, want_len, (off_t)off);

		if (got < 0) {
			rc = (int)got;
			break;
		}
		if (got == 0)
			break; /* truncated under us: the swap will say so */
		rc = mig_write(fs, cred, fid, nl, buf, (size_t)got, off);
		off += (uint64_t)got;
	}
	nacre_close(f);
	if (rc)
		return rc;
	/* Durable before the MDS points the file at them. */
	rc = cl_io_objects(fs, fid, nl, NC_OP_OBJ_SYNC, 0, nl->l_m ? &failed : NULL);
	if (rc)
		return rc;
	/* A shard of the new layout that could not be written: better to
	 * keep the old, whole layout than to swap to a degraded one. */
	for (uint32_t s = 0; s < nl->l_stripe_count; s++)
		if ((nl->l_shards[s].ls_flags & ~want.l_shards[s].ls_flags) ||
		    (failed & (1ull << s)))
			return -EIO;
	return 0;
}

static void mig_opts_to_req(const struct nacre_migrate_opts *o, struct nc_migrate_req *mg)
{
	mg->mg_tmpl.l_flags = NC_LAYOUT_TEMPLATE;
	mg->mg_tmpl.l_first_ost = NC_OST_ANY;
	mg->mg_grace = MIG_GRACE_DEFAULT_S;
	if (!o)
		return;
	mg->mg_tmpl.l_stripe_size = o->stripe_size;
	if (o->geometry) {
		mg->mg_flags |= NC_MIGRATE_GEOMETRY;
		mg->mg_tmpl.l_stripe_count = o->stripe_count == UINT32_MAX ?
						     UINT16_MAX : (uint16_t)o->stripe_count;
		mg->mg_tmpl.l_k = (uint8_t)o->k;
		mg->mg_tmpl.l_m = (uint8_t)o->m;
	}
	if (o->grace_s > 0)
		mg->mg_grace = o->grace_s > (int)NC_MIGRATE_GRACE_MAX ? NC_MIGRATE_GRACE_MAX :
									 (uint32_t)o->grace_s;
	else
		mg->mg_grace = o->grace_s < 0 ? 0 : MIG_GRACE_DEFAULT_S;
	mg->mg_nexclude = o->nexclude;
	memcpy(mg->mg_exclude, o->exclude, o->nexclude * sizeof(o->exclude[0]));
}

NACRE_API int nacre_migrate_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
				const struct nacre_fid *fid, const struct nacre_migrate_opts *opts,
				struct nacre_layout *out)
{
	unsigned int tries = opts && opts->retries ? opts->retries : MIG_RETRIES_DEFAULT;
	struct nc_migrate_req *mg;
	struct nc_layout *nl, *after;
	struct nc_attr attr;
	uint8_t *buf = NULL;
	size_t step;
	int rc;

	if (!fs || !fid || (opts && opts->nexclude > NACRE_MIGRATE_EXCLUDE_MAX))
		return -EINVAL;
	if (opts && opts->geometry && (opts->k > 255 || opts->m > 255 ||
				       (opts->stripe_count > UINT16_MAX &&
					opts->stripe_count != UINT32_MAX)))
		return -EINVAL;
	mg = calloc(1, sizeof(*mg));
	nl = calloc(1, sizeof(*nl));
	after = calloc(1, sizeof(*after));
	rc = -ENOMEM;
	if (!mg || !nl || !after)
		goto out_free;
	cl_cred_from(fs, cred, &mg->mg_cred);
	mg->mg_fid.f_seq = fid->seq;
	mg->mg_fid.f_oid = fid->oid;
	mg->mg_flags = NC_MIGRATE_ALLOC;
	mig_opts_to_req(opts, mg);
	rc = mig_rpc(fs, mg, &attr, nl);
	if (rc)
		goto out_free;
	step = mig_step(nl);
	buf = malloc(step);
	rc = -ENOMEM;
	if (!buf)
		goto out_abort;
	mg->mg_flags = 0;
	mg->mg_layout = *nl;
	for (unsigned int i = 0; i < tries; i++) {
		/* A copy before this one may have left bytes past a new end. */
		if (i > 0) {
			uint64_t failed = 0;

			usleep((useconds_t)(MIG_BACKOFF_MS << (i - 1)) * 1000);
			rc = cl_io_objects(fs, &mg->mg_fid, nl, NC_OP_OBJ_TRUNC, 0,
					   nl->l_m ? &failed : NULL);
			if (!rc && failed)
				rc = -EIO;
			if (rc)
				break;
		}
		rc = mig_copy(fs, cred, &mg->mg_cred, &mg->mg_fid, nl, buf, step, mg);
		if (rc)
			break;
		rc = mig_rpc(fs, mg, &attr, after);
		if (rc != -EBUSY)
			break;
	}
	if (rc)
		goto out_abort;
	cl_ra_file_changed(fs, &mg->mg_fid);
	if (out)
		cl_layout_to_public(after, out);
	goto out_free;

out_abort:
	/* The pending objects go; the file keeps its old layout.  A failed
	 * abort leaves them pending on the MDS, which is only space. */
	mg->mg_flags = NC_MIGRATE_ABORT;
	mg->mg_layout = *nl;
	mig_rpc(fs, mg, NULL, NULL);
out_free:
	free(buf);
	free(after);
	free(nl);
	free(mg);
	return rc;
}
