/* SPDX-License-Identifier: MIT */
/*
 * Open files.  A handle caches the layout and the size it knows; a write
 * that extends the file reports the new size to the MDS before returning
 * (size only grows there), and close/fsync report mtime.
 *
 * Writes to erasure-coded files gather in a per-handle buffer (at most
 * CL_WB_ROWS rows, and CL_WB_TOTAL bytes for the whole client) while they
 * are sequential, and go out as whole rows, which need no parity
 * read-modify-write.  The buffer is flushed when it fills, on a write
 * elsewhere, and before any read, truncate, fsync or close of the file on
 * this client; data not yet flushed is lost if the client dies (fsync and
 * close are the points of durability, as with a page cache).
 *
 * Unlinking a file that is open here renames it to a hidden name in the
 * same directory instead (".nacre-hidden-FID", as NFS and libfuse do), and
 * the last close removes it, so POSIX "unlink of an open file" holds for
 * every process using this client.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/errors.h"
#include "common/log.h"
#include "libclient/cl_int.h"

#define HIDDEN_PREFIX ".nacre-hidden-"
#define CL_WB_ROWS 2
#define CL_WB_TOTAL (256u << 20)

static uint32_t open_flags(int flags)
{
	uint32_t f = 0;

	switch (flags & O_ACCMODE) {
	case O_RDONLY: f = NC_OPEN_READ; break;
	case O_WRONLY: f = NC_OPEN_WRITE; break;
	default: f = NC_OPEN_READ | NC_OPEN_WRITE; break;
	}
	if (flags & O_TRUNC)
		f |= NC_OPEN_TRUNC;
	return f;
}

bool cl_file_is_open(struct nacre_fs *fs, const struct nc_fid *fid)
{
	bool open = false;

	pthread_mutex_lock(&fs->fs_lock);
	for (struct nacre_file *f = fs->fs_open; f; f = f->f_next)
		if (nc_fid_eq(&f->f_fid, fid))
			open = true;
	pthread_mutex_unlock(&fs->fs_lock);
	return open;
}

void cl_file_times_set(struct nacre_fs *fs, const struct nc_fid *fid)
{
	pthread_mutex_lock(&fs->fs_lock);
	for (struct nacre_file *f = fs->fs_open; f; f = f->f_next) {
		if (!nc_fid_eq(&f->f_fid, fid))
			continue;
		pthread_mutex_lock(&f->f_lock);
		f->f_written = false;
		pthread_mutex_unlock(&f->f_lock);
	}
	pthread_mutex_unlock(&fs->fs_lock);
}

void cl_file_size_set(struct nacre_fs *fs, const struct nc_fid *fid, uint64_t size)
{
	pthread_mutex_lock(&fs->fs_lock);
	for (struct nacre_file *f = fs->fs_open; f; f = f->f_next) {
		if (!nc_fid_eq(&f->f_fid, fid))
			continue;
		pthread_mutex_lock(&f->f_lock);
		f->f_size = size;
		pthread_mutex_unlock(&f->f_lock);
	}
	pthread_mutex_unlock(&fs->fs_lock);
}

int cl_hide_if_open(struct nacre_fs *fs, const struct nc_cred *cred, const struct nc_fid *parent,
		    const char *name)
{
	struct cl_hidden *h;
	struct nc_attr attr;
	char fidstr[NC_FID_STR_LEN];
	int rc;

	rc = cl_md_lookup(fs, cred, parent, name, &attr);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	if (!S_ISREG(attr.a_mode) || attr.a_nlink != 1 || !cl_file_is_open(fs, &attr.a_fid))
		return 0;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	nc_fid_to_str(&attr.a_fid, fidstr);
	h->h_fid = attr.a_fid;
	h->h_parent = *parent;
	h->h_cred = *cred;
	snprintf(h->h_name, sizeof(h->h_name), HIDDEN_PREFIX "%s", fidstr);
	rc = cl_md_rename(fs, cred, parent, name, parent, h->h_name, 0);
	if (rc) {
		free(h);
		return rc;
	}
	pthread_mutex_lock(&fs->fs_lock);
	h->h_next = fs->fs_hidden;
	fs->fs_hidden = h;
	pthread_mutex_unlock(&fs->fs_lock);
	return 1;
}

static struct nacre_file *file_new(struct nacre_fs *fs, const struct nc_cred *cred,
				   const struct nc_attr *attr, const struct nc_layout *layout,
				   int flags)
{
	struct nacre_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->f_fs = fs;
	f->f_fid = attr->a_fid;
	f->f_cred = *cred;
	f->f_flags = flags;
	f->f_layout = *layout;
	f->f_size = attr->a_size;
	f->f_open_attr = *attr;
	f->f_refs = 1;
	pthread_mutex_init(&f->f_lock, NULL);
	pthread_mutex_init(&f->f_wb_lock, NULL);
	pthread_mutex_lock(&fs->fs_lock);
	f->f_next = fs->fs_open;
	if (fs->fs_open)
		fs->fs_open->f_prev = f;
	fs->fs_open = f;
	pthread_mutex_unlock(&fs->fs_lock);
	return f;
}

/* Drops a reference (fs_lock held); the last one frees. */
static bool file_put_locked(struct nacre_file *f)
{
	struct nacre_fs *fs = f->f_fs;

	if (--f->f_refs > 0)
		return false;
	fs->fs_wb_bytes -= f->f_wb_cap;
	cl_ra_free(f);          /* freed at close already; a no-op then */
	pthread_mutex_destroy(&f->f_lock);
	pthread_mutex_destroy(&f->f_wb_lock);
	free(f->f_wb);
	free(f->f_inline);
	free(f);
	return true;
}

/* Takes @f off the open list and drops the list's reference. */
static void file_free(struct nacre_file *f)
{
	struct nacre_fs *fs = f->f_fs;

	pthread_mutex_lock(&fs->fs_lock);
	if (f->f_prev)
		f->f_prev->f_next = f->f_next;
	else
		fs->fs_open = f->f_next;
	if (f->f_next)
		f->f_next->f_prev = f->f_prev;
	f->f_next = f->f_prev = NULL;
	file_put_locked(f);
	pthread_mutex_unlock(&fs->fs_lock);
}

/* An inline file's handle keeps its bytes, as OPEN returned them (@inl), or
 * asked for now when the reply that found it left them out. */
static int open_inline(struct nacre_fs *fs, const struct nc_cred *cred, struct nc_attr *attr,
		       struct nc_layout *layout, const void *inl, struct nacre_file *f)
{
	uint8_t *buf = NULL;
	int rc = 0;

	/* (Rewritten meanwhile, it may be inline no more: the handle reads
	 * what it is now.) */
	if (!inl)
		rc = cl_md_open(fs, cred, &attr->a_fid, NC_OPEN_READ, attr, layout, &buf);
	else if (attr->a_size > NC_INLINE_MAX)
		rc = -NC_E_PROTO;
	else if (!(buf = malloc(attr->a_size ? (size_t)attr->a_size : 1)))
		rc = -ENOMEM;
	else
		memcpy(buf, inl, (size_t)attr->a_size);
	if (rc)
		return rc;
	f->f_inline = buf;
	f->f_inline_len = (uint32_t)attr->a_size;
	f->f_layout = *layout;
	f->f_size = attr->a_size;
	f->f_open_attr = *attr;
	return 0;
}

static int open_common(struct nacre_fs *fs, const struct nc_cred *cred,
		       struct nc_attr *attr, struct nc_layout *layout, const void *inl, int flags,
		       struct nacre_file **out)
{
	struct nacre_file *f;
	int rc;

	if (S_ISDIR(attr->a_mode))
		return -EISDIR;
	if (!S_ISREG(attr->a_mode))
		return -EINVAL;
	if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY && attr->a_size) {
		rc = cl_truncate(fs, cred, &attr->a_fid, 0, attr);
		if (rc)
			return rc;
	}
	f = file_new(fs, cred, attr, layout, flags);
	if (!f)
		return -ENOMEM;
	if (layout->l_flags & NC_LAYOUT_INLINE) {
		rc = open_inline(fs, cred, attr, layout, inl, f);
		if (rc) {
			file_free(f);
			return rc;
		}
	}
	*out = f;
	return 0;
}

/* A handle on a small file held here (pack.c); it holds one open of @p. */
static int pend_handle(struct nacre_fs *fs, const struct nc_cred *cred, struct nc_attr *attr,
		       struct cl_pend *p, int flags, struct nacre_file **out)
{
	static const struct nc_layout none;
	struct nacre_file *f;
	int rc;

	if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY) {
		rc = cl_pend_truncate(fs, p, 0);
		if (rc) {
			cl_pend_close(fs, p);
			return rc < 0 ? rc : -EIO;
		}
		cl_pend_stat(fs, p, attr);
	}
	f = file_new(fs, cred, attr, &none, flags);
	if (!f) {
		cl_pend_close(fs, p);
		return -ENOMEM;
	}
	f->f_pend = p;
	*out = f;
	return 0;
}

/* Goes on as a normal handle once the file's pend was unpacked. */
static void pend_check(struct nacre_file *f)
{
	struct nc_layout l;
	uint64_t size;

	pthread_mutex_lock(&f->f_lock);
	if (f->f_pend && cl_pend_gone(f->f_fs, f->f_pend, &l, &size)) {
		f->f_pend = NULL;
		f->f_layout = l;
		if (size > f->f_size)
			f->f_size = size;
	}
	pthread_mutex_unlock(&f->f_lock);
}

int cl_file_open_read(struct nacre_fs *fs, const struct nc_cred *cred, struct nc_attr *attr,
		      struct nc_layout *layout, const void *inl, int flags,
		      struct nacre_file **out)
{
	struct cl_pend *p = cl_pack_open_pend(fs, &attr->a_fid, attr);

	if (p)
		return pend_handle(fs, cred, attr, p, flags, out);
	return open_common(fs, cred, attr, layout, inl, flags, out);
}

/* After OPEN: a packed or inline file opened for writing becomes a pend
 * (its bytes held here until the next commit moves them); any other goes
 * on as itself. */
static int open_opened(struct nacre_fs *fs, const struct nc_cred *c, struct nc_attr *attr,
		       struct nc_layout *layout, const void *inl, int flags,
		       struct nacre_file **out)
{
	struct cl_pend *p;
	int rc;

	if ((layout->l_flags & NC_LAYOUT_SMALL) &&
	    (flags & O_ACCMODE) != O_RDONLY) {
		rc = cl_pack_open_rewrite(fs, c, attr, layout, inl, flags & O_TRUNC, &p);
		if (rc)
			return rc;
		cl_pend_stat(fs, p, attr);
		return pend_handle(fs, c, attr, p, flags & ~O_TRUNC, out);
	}
	return open_common(fs, c, attr, layout, inl, flags, out);
}

NACRE_API int nacre_open_fid(struct nacre_fs *fs, const struct nacre_cred *cred,
			     const struct nacre_fid *fid, int flags, struct nacre_file **out)
{
	struct nc_fid f = { fid->seq, fid->oid };
	struct nc_layout layout;
	struct nc_attr attr;
	struct nc_cred c;
	struct cl_pend *p;
	uint8_t *inl;
	int rc;

	cl_cred_from(fs, cred, &c);
	p = cl_pack_open_pend(fs, &f, &attr);
	if (p)
		return pend_handle(fs, &c, &attr, p, flags, out);
	rc = cl_md_open(fs, &c, &f, open_flags(flags), &attr, &layout, &inl);
	if (!rc)
		rc = open_opened(fs, &c, &attr, &layout, inl, flags, out);
	free(inl);
	return rc;
}

bool cl_lookup_opened(const struct nc_attr *a, const struct nc_layout *l)
{
	return S_ISREG(a->a_mode) &&
	       (l->l_stripe_count || a->a_size == 0 || (l->l_flags & NC_LAYOUT_SMALL));
}

int cl_lookup_open(struct nacre_fs *fs, const struct nc_cred *c, const struct nc_fid *p,
		   const char *name, struct nacre_stat *st, struct nacre_intent **intent)
{
	struct nacre_intent *in;
	int rc;

	*intent = NULL;
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->in_inline = NULL;
	/* A name this client holds in a pack it has not committed yet is
	 * answered here, and opened by nacre_open_fid(). */
	if (cl_pack_lookup(fs, p, name, &in->in_attr)) {
		rc = 0;
	} else {
		rc = cl_md_lookup_open(fs, c, p, name, &in->in_attr, &in->in_layout,
				       &in->in_inline);
		/* Else no intent: nacre_open_fid() asks. */
		if (!rc && cl_lookup_opened(&in->in_attr, &in->in_layout)) {
			in->in_cred = *c;
			*intent = in;
		} else if (rc == -EACCES || rc == -EPERM) {
			/* A file the caller may see but not read. */
			rc = cl_md_lookup(fs, c, p, name, &in->in_attr);
		}
	}
	if (!rc && st)
		cl_stat_from_attr(&in->in_attr, st);
	if (!*intent)
		nacre_intent_free(in);
	return rc;
}

NACRE_API int nacre_lookup_open(struct nacre_fs *fs, const struct nacre_cred *cred,
				const struct nacre_fid *parent, const char *name,
				struct nacre_stat *st, struct nacre_intent **intent)
{
	struct nc_fid p = { parent->seq, parent->oid };
	struct nc_cred c;

	cl_cred_from(fs, cred, &c);
	return cl_lookup_open(fs, &c, &p, name, st, intent);
}

NACRE_API int nacre_open_intent(struct nacre_fs *fs, struct nacre_intent *intent, int flags,
				struct nacre_file **out)
{
	int rc;

	if ((flags & (O_ACCMODE | O_TRUNC)) != O_RDONLY) {
		nacre_intent_free(intent);
		return -EINVAL;
	}
	rc = cl_file_open_read(fs, &intent->in_cred, &intent->in_attr, &intent->in_layout,
			       intent->in_inline, flags, out);
	nacre_intent_free(intent);
	return rc;
}

NACRE_API void nacre_intent_free(struct nacre_intent *intent)
{
	if (intent)
		free(intent->in_inline);
	free(intent);
}

NACRE_API int nacre_create_at(struct nacre_fs *fs, const struct nacre_cred *cred,
			      const struct nacre_fid *parent, const char *name, mode_t mode,
			      int flags, struct nacre_file **out, struct nacre_stat *st)
{
	struct nc_fid p = { parent->seq, parent->oid };
	struct nc_layout layout;
	struct nc_attr attr;
	struct nc_cred c;
	int rc;

	cl_cred_from(fs, cred, &c);
	{
		struct cl_pend *pend;

		/* In a pack directory the file starts here, in memory. */
		rc = cl_pack_create(fs, &c, &p, name, S_IFREG | (mode & 07777), flags, &attr,
				    &pend);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			rc = pend_handle(fs, &c, &attr, pend, flags & ~O_TRUNC, out);
			if (!rc && st)
				cl_stat_from_attr(&attr, st);
			return rc;
		}
	}
	rc = cl_pack_sync(fs); /* an existing name may be a file held here */
	if (rc)
		return rc;
	rc = cl_md_create(fs, &c, &p, name, S_IFREG | (mode & 07777), 0,
			  (flags & O_EXCL) ? NC_CREATE_EXCL : 0, NULL, &attr, &layout);
	if (rc)
		return rc;
	if (!(flags & O_EXCL)) {
		/* The name may have existed: check access as open(2) would. */
		uint8_t *inl;

		rc = cl_md_open(fs, &c, &attr.a_fid, open_flags(flags), &attr, &layout, &inl);
		if (!rc)
			rc = open_opened(fs, &c, &attr, &layout, inl, flags, out);
		free(inl);
	} else {
		rc = open_common(fs, &c, &attr, &layout, NULL, flags, out);
	}
	if (!rc && st)
		cl_stat_from_attr(&attr, st);
	return rc;
}

NACRE_API void nacre_file_open_stat(const struct nacre_file *f, struct nacre_stat *st)
{
	cl_stat_from_attr(&f->f_open_attr, st);
}

NACRE_API const struct nacre_fid *nacre_file_fid(const struct nacre_file *f)
{
	_Static_assert(sizeof(struct nacre_fid) == sizeof(struct nc_fid), "same fid shape");
	return (const struct nacre_fid *)&f->f_fid;
}

/* The layout of @f as of now (writers update its stale marks). */
static void layout_copy(struct nacre_file *f, struct nc_layout *l)
{
	pthread_mutex_lock(&f->f_lock);
	*l = f->f_layout;
	pthread_mutex_unlock(&f->f_lock);
}

/* Keeps the stale marks a request learnt. */
static void layout_merge_marks(struct nacre_file *f, const struct nc_layout *l)
{
	pthread_mutex_lock(&f->f_lock);
	for (uint32_t s = 0; s < f->f_layout.l_stripe_count; s++)
		f->f_layout.l_shards[s].ls_flags |= l->l_shards[s].ls_flags & NC_SHARD_STALE;
	pthread_mutex_unlock(&f->f_lock);
}

static int write_data(struct nacre_file *f, const void *buf, size_t len, uint64_t off)
{
	struct nc_layout l;
	int rc;

	if (!f->f_layout.l_m)
		return cl_io_write(f->f_fs, &f->f_fid, &f->f_layout, buf, len, off);
	layout_copy(f, &l);
	rc = cl_ec_write(f->f_fs, &f->f_cred, &f->f_fid, &l, buf, len, off);
	layout_merge_marks(f, &l);
	return rc;
}

/* ---- write-back (erasure-coded files) ---- */

/* Writes @len bytes at @off and reports the new end to the MDS: data
 * first, then the size that makes it visible. */
static int write_and_grow(struct nacre_file *f, const void *buf, size_t len, uint64_t off)
{
	int rc = write_data(f, buf, len, off);

	if (!rc)
		rc = cl_md_size_update(f->f_fs, &f->f_cred, &f->f_fid, off + len, NC_SIZE_MTIME,
				       NULL);
	return rc;
}

/* Sends the first @n buffered bytes (f_wb_lock held). */
static int wb_send_locked(struct nacre_file *f, size_t n)
{
	int rc = write_and_grow(f, f->f_wb, n, f->f_wb_off);

	memmove(f->f_wb, f->f_wb + n, f->f_wb_len - n);
	f->f_wb_off += n;
	f->f_wb_len -= n;
	atomic_store(&f->f_wb_pending, f->f_wb_len > 0);
	if (rc && !f->f_wb_err)
		f->f_wb_err = rc;
	return rc;
}

/* Flushes the whole buffer and returns (and clears) any earlier error. */
static int wb_flush_locked(struct nacre_file *f)
{
	int rc = 0;

	if (f->f_wb_len)
		wb_send_locked(f, f->f_wb_len);
	rc = f->f_wb_err;
	f->f_wb_err = 0;
	return rc;
}

static int wb_flush(struct nacre_file *f)
{
	int rc;

	pthread_mutex_lock(&f->f_wb_lock);
	rc = wb_flush_locked(f);
	pthread_mutex_unlock(&f->f_wb_lock);
	return rc;
}

int cl_flush_fid(struct nacre_fs *fs, const struct nc_fid *fid)
{
	struct nacre_file *todo[32];
	int n, rc = 0;

	do {
		n = 0;
		pthread_mutex_lock(&fs->fs_lock);
		for (struct nacre_file *f = fs->fs_open; f && n < 32; f = f->f_next) {
			if (!nc_fid_eq(&f->f_fid, fid) || !atomic_load(&f->f_wb_pending))
				continue;
			f->f_refs++;
			todo[n++] = f;
		}
		pthread_mutex_unlock(&fs->fs_lock);
		for (int i = 0; i < n; i++) {
			int r;

			pthread_mutex_lock(&todo[i]->f_wb_lock);
			r = todo[i]->f_wb_len ? wb_send_locked(todo[i], todo[i]->f_wb_len) : 0;
			pthread_mutex_unlock(&todo[i]->f_wb_lock);
			if (r && !rc)
				rc = r;
		}
		pthread_mutex_lock(&fs->fs_lock);
		for (int i = 0; i < n; i++)
			file_put_locked(todo[i]);
		pthread_mutex_unlock(&fs->fs_lock);
	} while (n == 32);
	return rc;
}

/* A buffer of CL_WB_ROWS rows, within the client's budget; false when
 * there is none to be had (the write goes straight out). */
static bool wb_alloc_locked(struct nacre_file *f)
{
	struct nacre_fs *fs = f->f_fs;
	size_t cap = (size_t)f->f_layout.l_stripe_size * f->f_layout.l_k * CL_WB_ROWS;
	bool ok;

	if (f->f_wb)
		return true;
	pthread_mutex_lock(&fs->fs_lock);
	ok = fs->fs_wb_bytes + cap <= CL_WB_TOTAL;
	if (ok)
		fs->fs_wb_bytes += cap;
	pthread_mutex_unlock(&fs->fs_lock);
	if (!ok)
		return false;
	f->f_wb = malloc(cap);
	if (!f->f_wb) {
		pthread_mutex_lock(&fs->fs_lock);
		fs->fs_wb_bytes -= cap;
		pthread_mutex_unlock(&fs->fs_lock);
		return false;
	}
	f->f_wb_cap = cap;
	return true;
}

/* A write to an erasure-coded file: gathered while sequential, sent in
 * whole rows as the buffer fills. */
static int wb_write(struct nacre_file *f, const uint8_t *buf, size_t len, uint64_t off)
{
	uint64_t rowbytes = (uint64_t)f->f_layout.l_stripe_size * f->f_layout.l_k;
	size_t done = 0;
	int rc;

	pthread_mutex_lock(&f->f_wb_lock);
	rc = f->f_wb_err;
	f->f_wb_err = 0;
	if (!rc && f->f_wb_len && off != f->f_wb_off + f->f_wb_len)
		rc = wb_flush_locked(f);
	if (rc)
		goto out;
	if (!wb_alloc_locked(f) || len >= f->f_wb_cap) {
		rc = wb_flush_locked(f);
		if (!rc)
			rc = write_and_grow(f, buf, len, off);
		goto out;
	}
	if (!f->f_wb_len)
		f->f_wb_off = off;
	while (done < len) {
		size_t n = f->f_wb_cap - f->f_wb_len;
		uint64_t end, cut;

		if (n > len - done)
			n = len - done;
		memcpy(f->f_wb + f->f_wb_len, buf + done, n);
		f->f_wb_len += n;
		done += n;
		atomic_store(&f->f_wb_pending, true);
		if (f->f_wb_len < f->f_wb_cap)
			break;
		/* Full: send up to the last row boundary, keep the rest. */
		end = f->f_wb_off + f->f_wb_len;
		cut = end - end % rowbytes;
		rc = wb_send_locked(f, cut > f->f_wb_off ? cut - f->f_wb_off : f->f_wb_len);
		if (rc)
			break;
	}
	if (rc)
		f->f_wb_err = 0; /* returned now */
out:
	pthread_mutex_unlock(&f->f_wb_lock);
	return rc;
}

/* The size as the MDS has it, but never below what this handle wrote. */
static int refresh_size(struct nacre_file *f)
{
	struct nc_attr attr;
	int rc = cl_md_getattr(f->f_fs, &f->f_fid, &attr);

	if (rc)
		return rc;
	pthread_mutex_lock(&f->f_lock);
	f->f_size = attr.a_size;
	pthread_mutex_unlock(&f->f_lock);
	return 0;
}

static ssize_t file_pread(struct nacre_file *f, void *buf, size_t len, off_t off)
{
	struct nc_layout l;
	ssize_t done, rest;
	uint64_t size;
	int rc;

	if (off < 0)
		return -EINVAL;
	if ((f->f_flags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	pend_check(f);
	if (f->f_pend)
		return cl_pend_read(f->f_fs, f->f_pend, buf, len, (uint64_t)off);
	if (f->f_inline) {
		/* Its bytes came with the open.  A truncation through this
		 * client moves the size: never read past the bytes (zeros
		 * there, as a truncation up gives). */
		size_t have = 0;

		pthread_mutex_lock(&f->f_lock);
		size = f->f_size;
		pthread_mutex_unlock(&f->f_lock);
		if ((uint64_t)off >= size)
			return 0;
		if (len > size - (uint64_t)off)
			len = (size_t)(size - (uint64_t)off);
		if (len > SSIZE_MAX)
			len = SSIZE_MAX;
		if ((uint64_t)off < f->f_inline_len)
			have = f->f_inline_len - (size_t)off < len ? f->f_inline_len - (size_t)off :
								      len;
		memcpy(buf, f->f_inline + off, have);
		memset((char *)buf + have, 0, len - have);
		return (ssize_t)len;
	}
	if (f->f_layout.l_flags & NC_LAYOUT_PACKED) {
		/* One read of the pack; the size is the extent's until the
		 * next open. */
		if (len > SSIZE_MAX)
			len = SSIZE_MAX;
		return cl_pack_read(f->f_fs, &f->f_layout, buf, len, (uint64_t)off);
	}
	/* What any handle here still holds must be readable. */
	if (f->f_layout.l_m) {
		rc = cl_flush_fid(f->f_fs, &f->f_fid);
		if (rc)
			return rc;
	}
	pthread_mutex_lock(&f->f_lock);
	size = f->f_size;
	pthread_mutex_unlock(&f->f_lock);
	if ((uint64_t)off + len > size) {
		/* Another client may have written past what we knew. */
		rc = refresh_size(f);
		if (rc)
			return rc;
		pthread_mutex_lock(&f->f_lock);
		size = f->f_size;
		pthread_mutex_unlock(&f->f_lock);
	}
	if ((uint64_t)off >= size || len == 0)
		return 0;
	if (len > size - (uint64_t)off)
		len = size - (uint64_t)off;
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	if (!f->f_layout.l_stripe_count) {
		memset(buf, 0, len);
		return (ssize_t)len;
	}
	layout_copy(f, &l);
	/* What was read ahead, then the rest straight into @buf. */
	done = cl_ra_read(f, &l, buf, len, (uint64_t)off, size);
	if ((size_t)done == len)
		return done;
	if (l.l_m)
		rest = cl_ec_read(f->f_fs, &f->f_fid, &l, (uint8_t *)buf + done, len - (size_t)done,
				  (uint64_t)off + (uint64_t)done);
	else
		rest = cl_io_read(f->f_fs, &f->f_fid, &l, (uint8_t *)buf + done, len - (size_t)done,
				  (uint64_t)off + (uint64_t)done);
	if (rest < 0)
		return done > 0 ? done : rest;
	return done + rest;
}

NACRE_API ssize_t nacre_pread(struct nacre_file *f, void *buf, size_t len, off_t off)
{
	ssize_t n = file_pread(f, buf, len, off);

	if (n > 0) {
		cl_count(f->f_fs, CL_CTR_READS, 1);
		cl_count(f->f_fs, CL_CTR_READ_BYTES, n);
	}
	return n;
}

static ssize_t file_pwrite(struct nacre_file *f, const void *buf, size_t len, off_t off)
{
	uint64_t end;
	bool grow;
	int rc;

	if (off < 0)
		return -EINVAL;
	if ((f->f_flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (len == 0)
		return 0;
	pend_check(f);
	if (f->f_pend) {
		ssize_t n = cl_pend_write(f->f_fs, f->f_pend, buf, len, (uint64_t)off,
					  f->f_flags & O_APPEND);
		struct nc_layout l;
		struct nc_attr attr;

		if (n != 0)
			return n;
		/* Past pack_max: the file gets objects of its own. */
		rc = cl_pack_unpack(f->f_fs, f->f_pend, &l, &attr);
		if (rc)
			return rc;
		pend_check(f);
	}
	if (!f->f_layout.l_stripe_count)
		return -NC_E_LAYOUT;
	if (f->f_flags & O_APPEND) {
		if (f->f_layout.l_m) {
			rc = wb_flush(f);
			if (rc)
				return rc;
		}
		rc = refresh_size(f);
		if (rc)
			return rc;
		pthread_mutex_lock(&f->f_lock);
		off = (off_t)f->f_size;
		pthread_mutex_unlock(&f->f_lock);
	}
	if (len > NC_MAX_BULK * 4)
		len = NC_MAX_BULK * 4; /* a short write; callers loop */
	end = (uint64_t)off + len;
	if (f->f_layout.l_m && !(f->f_flags & O_APPEND)) {
		/* Gathered: the size reaches the MDS when the data does. */
		rc = wb_write(f, buf, len, (uint64_t)off);
		if (rc)
			return rc;
		pthread_mutex_lock(&f->f_lock);
		if (end > f->f_size)
			f->f_size = end;
		f->f_written = true;
		pthread_mutex_unlock(&f->f_lock);
		return (ssize_t)len;
	}
	rc = write_data(f, buf, len, (uint64_t)off);
	if (rc)
		return rc;
	pthread_mutex_lock(&f->f_lock);
	grow = end > f->f_size;
	if (grow)
		f->f_size = end;
	if (!grow)
		f->f_written = true;
	pthread_mutex_unlock(&f->f_lock);
	if (grow) {
		/* Data first, then the size that makes it visible. */
		rc = cl_md_size_update(f->f_fs, &f->f_cred, &f->f_fid, end, NC_SIZE_MTIME, NULL);
		if (rc)
			return rc;
	}
	return (ssize_t)len;
}

NACRE_API ssize_t nacre_pwrite(struct nacre_file *f, const void *buf, size_t len, off_t off)
{
	ssize_t n = file_pwrite(f, buf, len, off);

	if (n > 0) {
		cl_count(f->f_fs, CL_CTR_WRITES, 1);
		cl_count(f->f_fs, CL_CTR_WRITE_BYTES, n);
	}
	return n;
}

/* Every extending write already reported its end, so only mtime is sent
 * (size 0 never lowers the size: it only grows on the MDS); a stale size
 * of this handle can therefore never undo another handle's truncate. */
static int report_mtime(struct nacre_file *f)
{
	bool written;

	pthread_mutex_lock(&f->f_lock);
	written = f->f_written;
	f->f_written = false;
	pthread_mutex_unlock(&f->f_lock);
	if (!written)
		return 0;
	return cl_md_size_update(f->f_fs, &f->f_cred, &f->f_fid, 0, NC_SIZE_MTIME, NULL);
}

NACRE_API int nacre_flush(struct nacre_file *f)
{
	int rc;

	pend_check(f);
	if (f->f_pend)
		return cl_pend_flush(f->f_fs, f->f_pend); /* into the next batch */
	rc = f->f_layout.l_m ? wb_flush(f) : 0;

	if (!rc)
		rc = report_mtime(f);
	return rc;
}

NACRE_API int nacre_fsync(struct nacre_file *f)
{
	int rc;

	pend_check(f);
	if (f->f_pend)
		return cl_pend_fsync(f->f_fs, f->f_pend);
	rc = f->f_layout.l_m ? wb_flush(f) : 0;

	if (rc)
		return rc;

	if (f->f_layout.l_stripe_count && (f->f_flags & O_ACCMODE) != O_RDONLY) {
		struct nc_layout l;
		uint64_t failed;

		layout_copy(f, &l);
		if (!l.l_m) {
			rc = cl_io_objects(f->f_fs, &f->f_fid, &l, NC_OP_OBJ_SYNC, 0, NULL);
		} else {
			/* A shard that cannot be made durable is stale. */
			rc = cl_io_objects(f->f_fs, &f->f_fid, &l, NC_OP_OBJ_SYNC, 0, &failed);
			if (!rc)
				rc = cl_objects_settle(f->f_fs, &f->f_cred, &f->f_fid, &l, failed);
			layout_merge_marks(f, &l);
		}
	}
	if (!rc)
		rc = report_mtime(f);
	return rc;
}

NACRE_API int nacre_ftruncate(struct nacre_file *f, uint64_t size)
{
	struct nc_attr attr;
	int rc;

	if ((f->f_flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	pend_check(f);
	if (f->f_pend) {
		struct nc_layout l;

		rc = cl_pend_truncate(f->f_fs, f->f_pend, size);
		if (rc <= 0)
			return rc;
		rc = cl_pack_unpack(f->f_fs, f->f_pend, &l, &attr);
		if (rc)
			return rc;
		pend_check(f);
	}
	rc = cl_truncate(f->f_fs, &f->f_cred, &f->f_fid, size, &attr);
	if (rc)
		return rc;
	pthread_mutex_lock(&f->f_lock);
	f->f_size = attr.a_size;
	pthread_mutex_unlock(&f->f_lock);
	return 0;
}

NACRE_API int nacre_fstat(struct nacre_file *f, struct nacre_stat *st)
{
	struct nc_attr attr;
	int rc;

	pend_check(f);
	if (f->f_pend) {
		cl_pend_stat(f->f_fs, f->f_pend, &attr);
		cl_stat_from_attr(&attr, st);
		return 0;
	}
	rc = f->f_layout.l_m ? cl_flush_fid(f->f_fs, &f->f_fid) : 0;
	if (!rc)
		rc = cl_md_getattr(f->f_fs, &f->f_fid, &attr);

	if (rc)
		return rc;
	cl_stat_from_attr(&attr, st);
	return 0;
}

/* Removes the hidden name of @fid when no handle has it open any more. */
static int unhide(struct nacre_fs *fs, const struct nc_fid *fid)
{
	struct cl_hidden **pp, *h = NULL;
	int rc;

	pthread_mutex_lock(&fs->fs_lock);
	for (struct nacre_file *f = fs->fs_open; f; f = f->f_next) {
		if (nc_fid_eq(&f->f_fid, fid)) {
			pthread_mutex_unlock(&fs->fs_lock);
			return 0;
		}
	}
	for (pp = &fs->fs_hidden; *pp; pp = &(*pp)->h_next) {
		if (nc_fid_eq(&(*pp)->h_fid, fid)) {
			h = *pp;
			*pp = h->h_next;
			break;
		}
	}
	pthread_mutex_unlock(&fs->fs_lock);
	if (!h)
		return 0;
	rc = cl_md_unlink(fs, &h->h_cred, &h->h_parent, h->h_name, 0);
	if (rc == -ENOENT)
		rc = 0; /* someone removed it already */
	free(h);
	return rc;
}

NACRE_API int nacre_close(struct nacre_file *f)
{
	struct nacre_fs *fs;
	struct nc_fid fid;
	int rc;

	if (!f)
		return 0;
	fs = f->f_fs;
	fid = f->f_fid;
	/* Reads ahead in flight end before the handle goes (not under
	 * fs_lock, which the last reference is dropped with). */
	cl_ra_free(f);
	pend_check(f);
	if (f->f_pend) {
		rc = cl_pend_close(fs, f->f_pend);
		f->f_pend = NULL;
		file_free(f);
		if (!rc)
			rc = unhide(fs, &fid);
		return rc;
	}
	rc = f->f_layout.l_m ? wb_flush(f) : 0;
	if (!rc)
		rc = report_mtime(f);
	else
		report_mtime(f);
	file_free(f);
	if (!rc)
		rc = unhide(fs, &fid);
	else
		unhide(fs, &fid);
	return rc;
}
