/* SPDX-License-Identifier: MIT */
/*
 * nacre error codes.
 *
 * Functions that act return 0, -errno, or -NC_E_*.  Project codes start above
 * 4095 so they never collide with errno values (as libuv and LMDB do).
 */
#ifndef NC_ERRORS_H
#define NC_ERRORS_H

/* X(name, value, message).  Append only; never renumber. */
#define NC_ERROR_MAP(X)                                                        \
	X(NC_E_PROTO, 4096, "malformed protocol message")                    \
	X(NC_E_VERSION, 4097, "incompatible protocol version")               \
	X(NC_E_FSNAME, 4098, "filesystem name does not match")               \
	X(NC_E_NOOST, 4099, "no usable OST")                                 \
	X(NC_E_CORRUPT, 4100, "on-disk record is corrupt")                   \
	X(NC_E_LAYOUT, 4101, "invalid layout")                               \
	X(NC_E_ADDR, 4102, "invalid address")                                \
	X(NC_E_NOTFMT, 4103, "target is not formatted")                      \
	X(NC_E_NOTNACRE, 4104, "path is not on a nacre filesystem")          \
	X(NC_E_CONFIG, 4105, "invalid configuration")                        \
	X(NC_E_HANDSHAKE, 4106, "connection handshake missing or refused") \
	X(NC_E_CHECKSUM, 4107, "checksum mismatch: stored data is corrupt") \
	X(NC_E_PACKED, 4108, "the file is packed: unpack it first")          \
	X(NC_E_CHANGED, 4109, "the file changed meanwhile")                  \
	X(NC_E_AUTH, 4110, "authentication failed: wrong or missing cluster key") \
	X(NC_E_NOKEY, 4111, "cluster key file not found")                    \
	X(NC_E_KEYMODE, 4112,                                                  \
	  "cluster key file may be read by group or others (chmod 600 it)")  \
	X(NC_E_KEYFILE, 4113,                                                  \
	  "cluster key file is malformed (want one line of 64 hex digits)")

enum nc_error {
#define NC_ERR_ENUM(name, value, msg) name = value,
	NC_ERROR_MAP(NC_ERR_ENUM)
#undef NC_ERR_ENUM
};

/**
 * nc_strerror - describe an error code.
 * @err: 0, a negative errno, or a negative NC_E_* code (positive also accepted).
 *
 * @note The returned string is static; never free it.
 */
const char *nc_strerror(int err);

#endif
