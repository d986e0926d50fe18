/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/types.h"

void nc_fid_root(struct nc_fid *fid)
{
	fid->f_seq = NC_ROOT_FID_SEQ;
	fid->f_oid = NC_ROOT_FID_OID;
}

void nc_fid_to_str(const struct nc_fid *fid, char *buf)
{
	snprintf(buf, NC_FID_STR_LEN, NC_FID_FMT, NC_FID_ARGS(fid));
}

static int parse_hex64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 16)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned int)(c - 'A' + 10);
		else
			return -EINVAL;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

int nc_fid_from_str(const char *s, struct nc_fid *fid)
{
	size_t len = strlen(s);
	const char *colon;

	if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
		s++;
		len -= 2;
	}
	colon = memchr(s, ':', len);
	if (!colon)
		return -EINVAL;
	if (parse_hex64(s, (size_t)(colon - s), &fid->f_seq) ||
	    parse_hex64(colon + 1, len - (size_t)(colon - s) - 1, &fid->f_oid))
		return -EINVAL;
	return 0;
}

int64_t nc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool nc_pack_is_sparse(bool sealed, uint64_t files, uint64_t size, uint64_t live,
		       double threshold)
{
	return sealed && files && size && (double)live / (double)size < threshold;
}

void nc_deadline_ms(struct timespec *ts, clockid_t clk, int ms)
{
	clock_gettime(clk, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

bool nc_pool_name_is_valid(const char *name)
{
	size_t n = 0;

	for (; name[n]; n++) {
		char c = name[n];

		if (n == NC_POOL_NAME_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return false;
	}
	return n > 0;
}

bool nc_cred_in_group(const struct nc_cred *c, uint32_t gid)
{
	uint32_t n = c->c_ngroups;

	if (n > NC_MAX_GROUPS)
		n = NC_MAX_GROUPS;

	if (c->c_gid == gid)
		return true;
	for (uint32_t i = 0; i < n; i++)
		if (c->c_groups[i] == gid)
			return true;
	return false;
}

/*
 * The owner class, else the group class, else others; root passes read and
 * write always and search on directories, but executes a file only when
 * some x bit is set.
 */
int nc_permission(const struct nc_attr *a, const struct nc_cred *c, unsigned int want)
{
	unsigned int bits;

	if (c->c_uid == 0) {
		if (!(want & NC_MAY_EXEC) || S_ISDIR(a->a_mode) || (a->a_mode & 0111))
			return 0;
		return -EACCES;
	}
	if (c->c_uid == a->a_uid)
		bits = (a->a_mode >> 6) & 7;
	else if (nc_cred_in_group(c, a->a_gid))
		bits = (a->a_mode >> 3) & 7;
	else
		bits = a->a_mode & 7;
	return (bits & want) == want ? 0 : -EACCES;
}
