/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <string.h>

#include "common/errors.h"

const char *nc_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err == 0)
		return "success";
	switch (err) {
#define NC_ERR_CASE(name, value, msg) \
	case name:                    \
		return msg;
		NC_ERROR_MAP(NC_ERR_CASE)
#undef NC_ERR_CASE
	default:
		break;
	}
	if (err < 4096)
		return strerror(err);
	return "unknown nacre error";
}
