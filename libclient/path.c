/* SPDX-License-Identifier: MIT */
/*
 * Path resolution on the client: one LOOKUP per component, symbolic links
 * followed (at most 40, as Linux), ".." handled with the stack of
 * directories walked so far.  Names found recently come from the name
 * cache (ncache.c) without a request.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/errors.h"
#include "libclient/cl_int.h"

#define PATH_DEPTH_MAX 256
#define SYMLINK_FOLLOW_MAX 40

struct walk {
	struct nc_fid w_stack[PATH_DEPTH_MAX];
	int w_depth;            /* w_stack[w_depth - 1] is the current dir */
	int w_links;
	bool w_nocache;         /* ask the MDS for every name */
	/* The caller needs only the last name's FID and type (a parent
	 * directory): a stale cache entry does (libclient/ncache.c). */
	bool w_fid_only;
};

static int walk_path(struct nacre_fs *fs, const struct nc_cred *cred, struct walk *w,
		     const char *path, bool follow_last, struct nc_attr *out);

static int step(struct nacre_fs *fs, const struct nc_cred *cred, struct walk *w,
		const char *name, bool last, bool follow_last, struct nc_attr *attr)
{
	int rc;

	if (!strcmp(name, ".")) {
		return cl_md_getattr(fs, &w->w_stack[w->w_depth - 1], attr);
	}
	if (!strcmp(name, "..")) {
		if (w->w_depth > 1)
			w->w_depth--;
		return cl_md_getattr(fs, &w->w_stack[w->w_depth - 1], attr);
	}
	/* Directories passed through need only their FID and type. */
	if (w->w_nocache ||
	    !cl_ncache_get(fs->fs_ncache, cred, &w->w_stack[w->w_depth - 1], name,
			   !last || w->w_fid_only, attr)) {
		rc = cl_md_lookup(fs, cred, &w->w_stack[w->w_depth - 1], name, attr);
		if (rc)
			return rc;
	}
	if (S_ISLNK(attr->a_mode) && (!last || follow_last)) {
		char target[NC_SYMLINK_MAX + 1];
		struct nacre_fid f = { attr->a_fid.f_seq, attr->a_fid.f_oid };

		if (++w->w_links > SYMLINK_FOLLOW_MAX)
			return -ELOOP;
		rc = nacre_readlink_fid(fs, &f, target, sizeof(target));
		if (rc < 0)
			return rc;
		if (target[0] == '/')
			w->w_depth = 1; /* absolute links resolve from our root */
		return walk_path(fs, cred, w, target, true, attr);
	}
	if (S_ISDIR(attr->a_mode)) {
		if (w->w_depth == PATH_DEPTH_MAX)
			return -ENAMETOOLONG;
		w->w_stack[w->w_depth++] = attr->a_fid;
	} else if (!last) {
		return -ENOTDIR;
	}
	return 0;
}

static int walk_path(struct nacre_fs *fs, const struct nc_cred *cred, struct walk *w,
		     const char *path, bool follow_last, struct nc_attr *out)
{
	char name[NC_NAME_MAX + 1];
	const char *p = path;
	bool any = false;
	int rc;

	while (*p) {
		const char *e;
		size_t n;
		bool last;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n > NC_NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		last = strspn(p, "/") == strlen(p);
		/* A directory pushed by the previous step is the new cwd. */
		rc = step(fs, cred, w, name, last, follow_last || *p == '/', out);
		if (rc)
			return rc;
		any = true;
		if (!last && !S_ISDIR(out->a_mode))
			return -ENOTDIR;
	}
	if (!any)
		return cl_md_getattr(fs, &w->w_stack[w->w_depth - 1], out);
	return 0;
}

/* @nocache: ask the MDS for every name; @fid_only: see w_fid_only. */
static int resolve_how(struct nacre_fs *fs, const struct nc_cred *cred, const char *path,
		       bool follow, bool nocache, bool fid_only, struct nc_attr *attr)
{
	struct walk *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return -ENOMEM;
	if (!*path) {
		free(w);
		return -ENOENT;
	}
	nc_fid_root(&w->w_stack[0]);
	w->w_depth = 1;
	w->w_nocache = nocache;
	w->w_fid_only = fid_only;
	rc = walk_path(fs, cred, w, path, follow, attr);
	free(w);
	return rc;
}

static int resolve(struct nacre_fs *fs, const struct nc_cred *cred, const char *path,
		   bool follow, struct nc_attr *attr)
{
	return resolve_how(fs, cred, path, follow, false, false, attr);
}

/* Splits @path into its parent directory (resolved) and last name. */
static int resolve_parent(struct nacre_fs *fs, const struct nc_cred *cred, const char *path,
			  struct nc_fid *parent, char *name)
{
	char *copy = strdup(path), *slash, *base;
	const char *dir;
	struct nc_attr attr;
	size_t len;
	int rc;

	if (!copy)
		return -ENOMEM;
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	slash = strrchr(copy, '/');
	if (slash) {
		*slash = '\0';
		base = slash + 1;
		dir = *copy ? copy : "/";
	} else {
		base = copy;
		dir = "/";
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		rc = *base ? -EINVAL : -EEXIST;
		goto out;
	}
	if (strlen(base) > NC_NAME_MAX) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	strcpy(name, base);
	rc = resolve_how(fs, cred, dir, true, false, true, &attr);
	if (!rc && !S_ISDIR(attr.a_mode))
		rc = -ENOTDIR;
	if (!rc)
		*parent = attr.a_fid;
out:
	free(copy);
	return rc;
}

int cl_resolve_parent(struct nacre_fs *fs, const struct nc_cred *cred, const char *path,
		      struct nc_fid *parent, char *name)
{
	return resolve_parent(fs, cred, path, parent, name);
}

static void fid_out(const struct nc_fid *in, struct nacre_fid *out)
{
	out->seq = in->f_seq;
	out->oid = in->f_oid;
}

NACRE_API int nacre_resolve(struct nacre_fs *fs, const struct nacre_cred *cred, const char *path,
			    bool follow, struct nacre_stat *st)
{
	struct nc_attr attr;
	struct nc_cred c;
	int rc;

	cl_cred_from(fs, cred, &c);
	rc = resolve(fs, &c, path, follow, &attr);
	if (!rc && st)
		cl_stat_from_attr(&attr, st);
	return rc;
}

NACRE_API int nacre_stat(struct nacre_fs *fs, const char *path, struct nacre_stat *st)
{
	return nacre_resolve(fs, NULL, path, true, st);
}

NACRE_API int nacre_lstat(struct nacre_fs *fs, const char *path, struct nacre_stat *st)
{
	return nacre_resolve(fs, NULL, path, false, st);
}

NACRE_API int nacre_open(struct nacre_fs *fs, const char *path, int flags, mode_t mode,
			 struct nacre_file **out)
{
	struct nacre_stat st;
	struct nacre_fid p;
	struct nc_fid parent;
	struct nc_attr attr;
	char name[NC_NAME_MAX + 1];
	int rc;

	/* Reading: the last name is looked up and opened in one request (the
	 * directories above come from the name cache). */
	if ((flags & (O_ACCMODE | O_CREAT | O_TRUNC)) == O_RDONLY &&
	    resolve_parent(fs, &fs->fs_cred, path, &parent, name) == 0 &&
	    !cl_pack_lookup(fs, &parent, name, &attr)) {
		struct nc_layout layout;
		uint8_t *inl;

		rc = cl_md_lookup_open(fs, &fs->fs_cred, &parent, name, &attr, &layout, &inl);
		if (!rc && cl_lookup_opened(&attr, &layout)) {
			rc = cl_file_open_read(fs, &fs->fs_cred, &attr, &layout, inl, flags, out);
			free(inl);
			return rc;
		}
		free(inl);
		if (rc)
			return rc;
		/* Directories, symbolic links, an MDS that does not know the
		 * open intent: the full walk and OPEN below. */
	}
	/* A new name (O_EXCL): the MDS says whether it exists in the request
	 * that creates it, so the name is not looked up first. */
	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL) &&
	    resolve_parent(fs, &fs->fs_cred, path, &parent, name) == 0) {
		fid_out(&parent, &p);
		return nacre_create_at(fs, NULL, &p, name, mode, flags, out, NULL);
	}
	/* A cached name may lead to a file another client removed: then the
	 * open fails at the MDS and the path is walked again, asking for
	 * every name (close-to-open). */
	for (int fresh = 0; fresh < 2; fresh++) {
		rc = resolve_how(fs, &fs->fs_cred, path, !(flags & O_NOFOLLOW), fresh, false,
				 &attr);
		if (rc)
			break;
		cl_stat_from_attr(&attr, &st);
		if ((flags & O_CREAT) && (flags & O_EXCL))
			return -EEXIST;
		if (S_ISLNK(st.mode))
			return -ELOOP;
		rc = nacre_open_fid(fs, NULL, &st.fid, flags, out);
		if (rc != -ENOENT && rc != -ESTALE)
			return rc;
		cl_ncache_drop_fid(fs->fs_ncache, &attr.a_fid);
	}
	if (rc != -ENOENT || !(flags & O_CREAT))
		return rc;
	rc = resolve_parent(fs, &fs->fs_cred, path, &parent, name);
	if (rc)
		return rc;
	fid_out(&parent, &p);
	return nacre_create_at(fs, NULL, &p, name, mode, flags, out, NULL);
}

/* Runs @fn on the parent and name of @path. */
static int with_parent(struct nacre_fs *fs, const char *path, struct nacre_fid *p, char *name)
{
	struct nc_fid parent;
	int rc = resolve_parent(fs, &fs->fs_cred, path, &parent, name);

	if (!rc)
		fid_out(&parent, p);
	return rc;
}

NACRE_API int nacre_mkdir(struct nacre_fs *fs, const char *path, mode_t mode)
{
	char name[NC_NAME_MAX + 1];
	struct nacre_fid p;
	int rc = with_parent(fs, path, &p, name);

	return rc ? rc : nacre_mkdir_at(fs, NULL, &p, name, mode, NULL);
}

NACRE_API int nacre_rmdir(struct nacre_fs *fs, const char *path)
{
	char name[NC_NAME_MAX + 1];
	struct nacre_fid p;
	int rc = with_parent(fs, path, &p, name);

	return rc ? rc : nacre_rmdir_at(fs, NULL, &p, name);
}

NACRE_API int nacre_unlink(struct nacre_fs *fs, const char *path)
{
	char name[NC_NAME_MAX + 1];
	struct nacre_fid p;
	int rc = with_parent(fs, path, &p, name);

	return rc ? rc : nacre_unlink_at(fs, NULL, &p, name);
}

NACRE_API int nacre_rename(struct nacre_fs *fs, const char *from, const char *to)
{
	char n1[NC_NAME_MAX + 1], n2[NC_NAME_MAX + 1];
	struct nacre_fid p1, p2;
	int rc = with_parent(fs, from, &p1, n1);

	if (!rc)
		rc = with_parent(fs, to, &p2, n2);
	return rc ? rc : nacre_rename_at(fs, NULL, &p1, n1, &p2, n2, 0);
}

NACRE_API int nacre_link(struct nacre_fs *fs, const char *from, const char *to)
{
	char name[NC_NAME_MAX + 1];
	struct nacre_stat st;
	struct nacre_fid p;
	int rc = nacre_resolve(fs, NULL, from, false, &st);

	if (!rc)
		rc = with_parent(fs, to, &p, name);
	return rc ? rc : nacre_link_at(fs, NULL, &st.fid, &p, name, NULL);
}

NACRE_API int nacre_symlink(struct nacre_fs *fs, const char *target, const char *path)
{
	char name[NC_NAME_MAX + 1];
	struct nacre_fid p;
	int rc = with_parent(fs, path, &p, name);

	return rc ? rc : nacre_symlink_at(fs, NULL, &p, name, target, NULL);
}

NACRE_API int nacre_readlink(struct nacre_fs *fs, const char *path, char *buf, size_t size)
{
	struct nacre_stat st;
	int rc = nacre_lstat(fs, path, &st);

	if (rc)
		return rc;
	if (!S_ISLNK(st.mode))
		return -EINVAL;
	return nacre_readlink_fid(fs, &st.fid, buf, size);
}

NACRE_API int nacre_truncate(struct nacre_fs *fs, const char *path, uint64_t size)
{
	struct nacre_setattr sa = { .valid = NACRE_SET_SIZE, .size = size };
	struct nacre_stat st;
	int rc = nacre_stat(fs, path, &st);

	return rc ? rc : nacre_setattr(fs, NULL, &st.fid, &sa, NULL);
}

NACRE_API int nacre_chmod(struct nacre_fs *fs, const char *path, mode_t mode)
{
	struct nacre_setattr sa = { .valid = NACRE_SET_MODE, .mode = mode };
	struct nacre_stat st;
	int rc = nacre_stat(fs, path, &st);

	return rc ? rc : nacre_setattr(fs, NULL, &st.fid, &sa, NULL);
}

NACRE_API int nacre_readdir(struct nacre_fs *fs, const char *path, uint64_t cookie,
			    struct nacre_dirent *ents, unsigned int max, bool *eof)
{
	struct nacre_stat st;
	int rc = nacre_stat(fs, path, &st);

	if (rc)
		return rc;
	if (!S_ISDIR(st.mode))
		return -ENOTDIR;
	return nacre_readdir_fid(fs, NULL, &st.fid, cookie, ents, max, eof);
}

NACRE_API int nacre_getxattr(struct nacre_fs *fs, const char *path, const char *name,
			     void *value, size_t size)
{
	struct nacre_stat st;
	int rc = nacre_stat(fs, path, &st);

	return rc ? rc : nacre_getxattr_fid(fs, NULL, &st.fid, name, value, size);
}

NACRE_API int nacre_setxattr(struct nacre_fs *fs, const char *path, const char *name,
			     const void *value, size_t size, int flags)
{
	struct nacre_stat st;
	int rc = nacre_stat(fs, path, &st);

	return rc ? rc : nacre_setxattr_fid(fs, NULL, &st.fid, name, value, size, flags);
}

NACRE_API int nacre_listxattr(struct nacre_fs *fs, const char *path, char *list, size_t size)
{
	struct nacre_stat st;
	int rc = nacre_stat(fs, path, &st);

	return rc ? rc : nacre_listxattr_fid(fs, NULL, &st.fid, list, size);
}

NACRE_API int nacre_removexattr(struct nacre_fs *fs, const char *path, const char *name)
{
	struct nacre_stat st;
	int rc = nacre_stat(fs, path, &st);

	return rc ? rc : nacre_removexattr_fid(fs, NULL, &st.fid, name);
}

NACRE_API int nacre_getlayout(struct nacre_fs *fs, const char *path, struct nacre_layout *layout)
{
	struct nacre_stat st;
	int rc = nacre_stat(fs, path, &st);

	return rc ? rc : nacre_getlayout_fid(fs, &st.fid, layout);
}

NACRE_API int nacre_setlayout(struct nacre_fs *fs, const char *path,
			      const struct nacre_layout *layout)
{
	struct nacre_stat st;
	int rc = nacre_stat(fs, path, &st);

	return rc ? rc : nacre_setlayout_fid(fs, NULL, &st.fid, layout);
}
