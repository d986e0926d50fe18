/* SPDX-License-Identifier: MIT */
/*
 * The cluster key and the proofs of the connection handshake.
 *
 * Every filesystem has one shared secret, the cluster key: 32 random bytes
 * made when the MDT is formatted and kept in a key file readable by its
 * owner only.  Every connection proves, both ways, that its ends hold the
 * key before anything else is served (cephx-like; see docs/security.md):
 *
 *   client -> server  CONNECT  ..., Nc (32 random bytes)
 *   server -> client  CONNECT  ..., Ns (32 random bytes, new per connection)
 *   client -> server  AUTH     HMAC-SHA256(K, "nacre-auth-client" Ns Nc fsname role)
 *   server -> client  AUTH     HMAC-SHA256(K, "nacre-auth-server" Nc Ns fsname role)
 *
 * role is the connecting peer's enum nc_peer_role as a little-endian u32.
 * Since Ns is fresh on every connection, a recorded client proof is worth
 * nothing on another connection.  The primitives are libsodium's; nothing
 * here is home-made cryptography.
 *
 * Key file: text, optional lines starting with '#', and one line of 64 hex
 * digits.  It must be a regular file without group or other permission
 * bits; anything else is refused.
 */
#ifndef NC_AUTH_H
#define NC_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NC_AUTH_KEY_LEN 32
#define NC_AUTH_NONCE_LEN 32
#define NC_AUTH_MAC_LEN 32
/* Where a key is looked for when neither an option nor the environment
 * names one: NC_AUTH_KEY_DIR/FSNAME.key. */
#define NC_AUTH_KEY_DIR "/etc/nacre"
#define NC_AUTH_KEYFILE_ENV "NACRE_KEYFILE"
/* The longest key file accepted (comments included). */
#define NC_AUTH_KEYFILE_MAX 4096

/* Initialises libsodium; safe to call many times, from any thread.
 * 0 or -EIO. */
int nc_auth_init(void);

/*
 * The key file to use: @explicit when set (an option), else $NACRE_KEYFILE
 * when set and not empty, else NC_AUTH_KEY_DIR/@fsname.key.  0, or
 * -ENAMETOOLONG when it does not fit @len.
 */
int nc_auth_key_path(const char *explicit, const char *fsname, char *buf,
		     size_t len);

/*
 * Makes a new random key and writes it to @path, created with O_EXCL and
 * mode 0600 (the directory above is made, mode 0755, when missing).
 * @key (may be NULL) receives the key.  0, -EEXIST when @path exists (it is
 * never overwritten), or -errno.
 */
int nc_auth_key_create(const char *path, uint8_t key[NC_AUTH_KEY_LEN]);

/*
 * Reads the key of @path.  0, -NC_E_NOKEY (no such file), -NC_E_KEYMODE
 * (group or others may access it, or not a regular file), -NC_E_KEYFILE
 * (malformed or wrong length), or -errno.
 */
int nc_auth_key_load(const char *path, uint8_t key[NC_AUTH_KEY_LEN]);

/* Parses key file text of @len bytes (need not be NUL-terminated).  0 or
 * -NC_E_KEYFILE. */
int nc_auth_key_parse(const char *text, size_t len, uint8_t key[NC_AUTH_KEY_LEN]);

/* Fills @nonce with random bytes. */
void nc_auth_nonce(uint8_t nonce[NC_AUTH_NONCE_LEN]);

/*
 * The client's proof (@server false) or the server's (@server true) for the
 * connection whose CONNECT carried @nc from a peer of role @role and whose
 * reply carried @ns.
 */
void nc_auth_proof(const uint8_t key[NC_AUTH_KEY_LEN], bool server,
		   const uint8_t nc[NC_AUTH_NONCE_LEN],
		   const uint8_t ns[NC_AUTH_NONCE_LEN], const char *fsname,
		   uint32_t role, uint8_t mac[NC_AUTH_MAC_LEN]);

/* True when @mac is that proof; compared in constant time. */
bool nc_auth_proof_is_valid(const uint8_t key[NC_AUTH_KEY_LEN], bool server,
			    const uint8_t nc[NC_AUTH_NONCE_LEN],
			    const uint8_t ns[NC_AUTH_NONCE_LEN],
			    const char *fsname, uint32_t role,
			    const uint8_t mac[NC_AUTH_MAC_LEN]);

/* Overwrites @len bytes of secret at @p in a way the compiler keeps. */
void nc_auth_wipe(void *p, size_t len);

#endif
