/* SPDX-License-Identifier: MIT */
/* The cluster key file and the handshake proofs (see auth.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "common/auth.h"
#include "common/errors.h"

_Static_assert(crypto_auth_hmacsha256_BYTES == NC_AUTH_MAC_LEN, "HMAC-SHA256 size");

int nc_auth_init(void)
{
	/* 0 the first time, 1 after; -1 only when no entropy source works. */
	return sodium_init() < 0 ? -EIO : 0;
}

int nc_auth_key_path(const char *explicit, const char *fsname, char *buf,
		     size_t len)
{
	const char *env = getenv(NC_AUTH_KEYFILE_ENV);
	int n;

	if (explicit && *explicit)
		n = snprintf(buf, len, "%s", explicit);
	else if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else
		n = snprintf(buf, len, "%s/%s.key", NC_AUTH_KEY_DIR, fsname);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Makes the directory of @path when it is missing (one level: the default
 * /etc/nacre on a fresh host). */
static int key_dir_make(const char *path)
{
	char dir[4096];
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int nc_auth_key_create(const char *path, uint8_t key[NC_AUTH_KEY_LEN])
{
	uint8_t k[NC_AUTH_KEY_LEN];
	char text[160], hex[2 * NC_AUTH_KEY_LEN + 1];
	int fd, rc, n;

	rc = nc_auth_init();
	if (rc)
		return rc;
	rc = key_dir_make(path);
	if (rc)
		return rc;
	/* O_EXCL: an existing key is never replaced, which would lock every
	 * holder of the old one out. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	randombytes_buf(k, sizeof(k));
	sodium_bin2hex(hex, sizeof(hex), k, sizeof(k));
	n = snprintf(text, sizeof(text),
		     "# nacre cluster key: keep it secret, mode 0600\n%s\n", hex);
	/* The umask may have taken bits off: the owner needs to read it. */
	rc = fchmod(fd, 0600) ? -errno : 0;
	if (!rc)
		rc = write_all(fd, text, (size_t)n);
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (rc)
		unlink(path);
	else if (key)
		memcpy(key, k, sizeof(k));
	sodium_memzero(text, sizeof(text));
	sodium_memzero(hex, sizeof(hex));
	sodium_memzero(k, sizeof(k));
	return rc;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

int nc_auth_key_parse(const char *text, size_t len, uint8_t key[NC_AUTH_KEY_LEN])
{
	const char *p = text, *end = text + len;
	bool found = false;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *a = p, *b = eol ? eol : end;
		size_t got = 0;

		p = eol ? eol + 1 : end;
		while (a < b && is_space(*a))
			a++;
		while (b > a && is_space(b[-1]))
			b--;
		if (a == b || *a == '#')
			continue;
		/* One key line only: two would leave doubt about which. */
		if (found || (size_t)(b - a) != 2 * NC_AUTH_KEY_LEN)
			return -NC_E_KEYFILE;
		if (sodium_hex2bin(key, NC_AUTH_KEY_LEN, a, (size_t)(b - a), NULL, &got,
				   NULL) || got != NC_AUTH_KEY_LEN)
			return -NC_E_KEYFILE;
		found = true;
	}
	return found ? 0 : -NC_E_KEYFILE;
}

int nc_auth_key_load(const char *path, uint8_t key[NC_AUTH_KEY_LEN])
{
	char buf[NC_AUTH_KEYFILE_MAX + 1];
	size_t got = 0;
	struct stat st;
	int fd, rc;

	rc = nc_auth_init();
	if (rc)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT ? -NC_E_NOKEY : -errno;
	if (fstat(fd, &st)) {
		rc = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
		rc = -NC_E_KEYMODE;
		goto out_close;
	}
	for (;;) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out_wipe;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (got == sizeof(buf)) {
			rc = -NC_E_KEYFILE;
			goto out_wipe;
		}
	}
	rc = nc_auth_key_parse(buf, got, key);
out_wipe:
	sodium_memzero(buf, sizeof(buf));
out_close:
	close(fd);
	return rc;
}

void nc_auth_nonce(uint8_t nonce[NC_AUTH_NONCE_LEN])
{
	/* randombytes_buf cannot fail once sodium_init() succeeded, which
	 * every key load did before any handshake. */
	randombytes_buf(nonce, NC_AUTH_NONCE_LEN);
}

void nc_auth_proof(const uint8_t key[NC_AUTH_KEY_LEN], bool server,
		   const uint8_t nc[NC_AUTH_NONCE_LEN],
		   const uint8_t ns[NC_AUTH_NONCE_LEN], const char *fsname,
		   uint32_t role, uint8_t mac[NC_AUTH_MAC_LEN])
{
	static const char client_label[] = "nacre-auth-client";
	static const char server_label[] = "nacre-auth-server";
	crypto_auth_hmacsha256_state st;
	uint8_t r[4] = { role & 0xff, role >> 8 & 0xff, role >> 16 & 0xff, role >> 24 };

	crypto_auth_hmacsha256_init(&st, key, NC_AUTH_KEY_LEN);
	/* The labels make a client proof useless as a server proof and the
	 * other way round; each side hashes the other's nonce first. */
	if (server) {
		crypto_auth_hmacsha256_update(&st, (const uint8_t *)server_label,
					      sizeof(server_label) - 1);
		crypto_auth_hmacsha256_update(&st, nc, NC_AUTH_NONCE_LEN);
		crypto_auth_hmacsha256_update(&st, ns, NC_AUTH_NONCE_LEN);
	} else {
		crypto_auth_hmacsha256_update(&st, (const uint8_t *)client_label,
					      sizeof(client_label) - 1);
		crypto_auth_hmacsha256_update(&st, ns, NC_AUTH_NONCE_LEN);
		crypto_auth_hmacsha256_update(&st, nc, NC_AUTH_NONCE_LEN);
	}
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)fsname, strlen(fsname));
	crypto_auth_hmacsha256_update(&st, r, sizeof(r));
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof(st));
}

bool nc_auth_proof_is_valid(const uint8_t key[NC_AUTH_KEY_LEN], bool server,
			    const uint8_t nc[NC_AUTH_NONCE_LEN],
			    const uint8_t ns[NC_AUTH_NONCE_LEN],
			    const char *fsname, uint32_t role,
			    const uint8_t mac[NC_AUTH_MAC_LEN])
{
	uint8_t want[NC_AUTH_MAC_LEN];
	bool ok;

	nc_auth_proof(key, server, nc, ns, fsname, role, want);
	ok = sodium_memcmp(want, mac, NC_AUTH_MAC_LEN) == 0;
	sodium_memzero(want, sizeof(want));
	return ok;
}

void nc_auth_wipe(void *p, size_t len)
{
	sodium_memzero(p, len);
}
