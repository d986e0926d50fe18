/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
