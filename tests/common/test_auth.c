/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the cluster key (common/auth.c): key files made with mode
 * 0600 and never overwritten, key files refused when others may read them
 * or when malformed, the choice of key file, and the handshake proofs:
 * checked against HMAC-SHA256 values computed independently (Python's
 * hmac module), valid with the right key only, bound to both nonces, the
 * filesystem name, the role and the direction.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "common/auth.h"
#include "common/errors.h"

static char dir[256];

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static int file_write(const char *path, const char *text, mode_t mode)
{
	int fd;
	ssize_t n;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (fchmod(fd, mode))
		n = -1;
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

static int file_read(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return (int)n;
}

static void test_create_load(void)
{
	uint8_t k1[NC_AUTH_KEY_LEN], k2[NC_AUTH_KEY_LEN], k3[NC_AUTH_KEY_LEN];
	char path[300], sub[300], before[256], after[256];
	struct stat st;
	mode_t old;

	path_in(path, sizeof(path), "a.key");
	/* A permissive umask must not leak into the key's mode. */
	old = umask(0);
	CU_ASSERT_EQUAL_FATAL(nc_auth_key_create(path, k1), 0);
	umask(old);
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	CU_ASSERT_TRUE(S_ISREG(st.st_mode));
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0600);
	CU_ASSERT_EQUAL(nc_auth_key_load(path, k2), 0);
	CU_ASSERT_EQUAL(memcmp(k1, k2, sizeof(k1)), 0);

	/* Never overwritten: -EEXIST, the same bytes after. */
	CU_ASSERT_FATAL(file_read(path, before, sizeof(before)) > 0);
	CU_ASSERT_EQUAL(nc_auth_key_create(path, k3), -EEXIST);
	CU_ASSERT_FATAL(file_read(path, after, sizeof(after)) > 0);
	CU_ASSERT_STRING_EQUAL(before, after);

	/* Two keys differ (random, not a constant). */
	path_in(sub, sizeof(sub), "b.key");
	CU_ASSERT_EQUAL_FATAL(nc_auth_key_create(sub, k3), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(k1, k3, sizeof(k1)), 0);
	/* A missing directory (the default /etc/nacre) is made. */
	path_in(sub, sizeof(sub), "etc-nacre/fs.key");
	CU_ASSERT_EQUAL(nc_auth_key_create(sub, NULL), 0);
	CU_ASSERT_EQUAL(nc_auth_key_load(sub, k3), 0);
}

static void test_load_refused(void)
{
	static const char good[] =
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n";
	uint8_t k[NC_AUTH_KEY_LEN];
	char path[300];

	path_in(path, sizeof(path), "c.key");
	CU_ASSERT_EQUAL_FATAL(file_write(path, good, 0600), 0);
	CU_ASSERT_EQUAL(nc_auth_key_load(path, k), 0);
	for (int i = 0; i < NC_AUTH_KEY_LEN; i++)
		CU_ASSERT_EQUAL(k[i], i);
	/* 0400 is fine; any group or other bit is not. */
	CU_ASSERT_EQUAL_FATAL(chmod(path, 0400), 0);
	CU_ASSERT_EQUAL(nc_auth_key_load(path, k), 0);
	CU_ASSERT_EQUAL_FATAL(chmod(path, 0644), 0);
	CU_ASSERT_EQUAL(nc_auth_key_load(path, k), -NC_E_KEYMODE);
	CU_ASSERT_EQUAL_FATAL(chmod(path, 0640), 0);
	CU_ASSERT_EQUAL(nc_auth_key_load(path, k), -NC_E_KEYMODE);
	CU_ASSERT_EQUAL_FATAL(chmod(path, 0602), 0);
	CU_ASSERT_EQUAL(nc_auth_key_load(path, k), -NC_E_KEYMODE);
	CU_ASSERT_STRING_EQUAL(nc_strerror(-NC_E_KEYMODE),
			       "cluster key file may be read by group or others (chmod 600 it)");
	/* Not a regular file. */
	CU_ASSERT_EQUAL(nc_auth_key_load(dir, k), -NC_E_KEYMODE);
	/* Missing. */
	path_in(path, sizeof(path), "none.key");
	CU_ASSERT_EQUAL(nc_auth_key_load(path, k), -NC_E_NOKEY);
}

static void test_parse(void)
{
	static const struct {
		const char *text;
		int rc;
	} cases[] = {
		{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", 0 },
		{ "# comment\n000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F\n", 0 },
		{ "  000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f \r\n\n", 0 },
		{ "", -NC_E_KEYFILE },
		{ "# only a comment\n", -NC_E_KEYFILE },
		{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e\n", -NC_E_KEYFILE },
		{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20\n",
		  -NC_E_KEYFILE },
		{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1g\n", -NC_E_KEYFILE },
		{ "00 0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n",
		  -NC_E_KEYFILE },
		{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
		  "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n", -NC_E_KEYFILE },
	};
	uint8_t k[NC_AUTH_KEY_LEN];
	char path[300];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = nc_auth_key_parse(cases[i].text, strlen(cases[i].text), k);

		if (rc != cases[i].rc)
			fprintf(stderr, "  case %zu: %d, want %d\n", i, rc, cases[i].rc);
		CU_ASSERT_EQUAL(rc, cases[i].rc);
		if (rc == 0)
			CU_ASSERT_EQUAL(k[31], 0x1f);
	}
	/* Through a file, and a file too long to be a key file. */
	path_in(path, sizeof(path), "d.key");
	CU_ASSERT_EQUAL_FATAL(file_write(path, "not a key\n", 0600), 0);
	CU_ASSERT_EQUAL(nc_auth_key_load(path, k), -NC_E_KEYFILE);
	{
		char big[NC_AUTH_KEYFILE_MAX + 100];

		memset(big, '#', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		CU_ASSERT_EQUAL_FATAL(file_write(path, big, 0600), 0);
		CU_ASSERT_EQUAL(nc_auth_key_load(path, k), -NC_E_KEYFILE);
	}
}

static void test_path(void)
{
	char buf[300], small[8];

	unsetenv(NC_AUTH_KEYFILE_ENV);
	CU_ASSERT_EQUAL(nc_auth_key_path(NULL, "fsx", buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "/etc/nacre/fsx.key");
	CU_ASSERT_EQUAL(nc_auth_key_path("", "fsx", buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "/etc/nacre/fsx.key");
	setenv(NC_AUTH_KEYFILE_ENV, "/env/k", 1);
	CU_ASSERT_EQUAL(nc_auth_key_path(NULL, "fsx", buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "/env/k");
	/* The option wins over the environment. */
	CU_ASSERT_EQUAL(nc_auth_key_path("/opt/k", "fsx", buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "/opt/k");
	setenv(NC_AUTH_KEYFILE_ENV, "", 1);
	CU_ASSERT_EQUAL(nc_auth_key_path(NULL, "fsx", buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "/etc/nacre/fsx.key");
	unsetenv(NC_AUTH_KEYFILE_ENV);
	CU_ASSERT_EQUAL(nc_auth_key_path(NULL, "fsx", small, sizeof(small)), -ENAMETOOLONG);
}

static void hex_to(const char *hex, uint8_t *out)
{
	for (int i = 0; i < 32; i++) {
		unsigned int v;

		sscanf(hex + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
}

static void test_proofs(void)
{
	uint8_t key[NC_AUTH_KEY_LEN], other[NC_AUTH_KEY_LEN];
	uint8_t nc[NC_AUTH_NONCE_LEN], ns[NC_AUTH_NONCE_LEN], ns2[NC_AUTH_NONCE_LEN];
	uint8_t mac[NC_AUTH_MAC_LEN], smac[NC_AUTH_MAC_LEN], want[NC_AUTH_MAC_LEN];

	CU_ASSERT_EQUAL_FATAL(nc_auth_init(), 0);
	for (int i = 0; i < 32; i++) {
		key[i] = (uint8_t)i;
		nc[i] = (uint8_t)(0xc0 + i % 16);
		ns[i] = (uint8_t)(0x50 + i);
	}
	/* HMAC-SHA256(K, "nacre-auth-client" Ns Nc "testfs" role LE32), and the
	 * server's with Nc Ns, as computed by Python's hmac module. */
	nc_auth_proof(key, false, nc, ns, "testfs", 1, mac);
	hex_to("57c6e36d75133972ae9023a14160f1b08f46992b6d18db01e4724878063a10ea", want);
	CU_ASSERT_EQUAL(memcmp(mac, want, sizeof(mac)), 0);
	nc_auth_proof(key, true, nc, ns, "testfs", 1, smac);
	hex_to("00590878588959e968888e1de0cd9c7564ba629c5a9fcfb147252c3cadcbc25f", want);
	CU_ASSERT_EQUAL(memcmp(smac, want, sizeof(smac)), 0);

	CU_ASSERT_TRUE(nc_auth_proof_is_valid(key, false, nc, ns, "testfs", 1, mac));
	CU_ASSERT_TRUE(nc_auth_proof_is_valid(key, true, nc, ns, "testfs", 1, smac));
	/* Another key. */
	memcpy(other, key, sizeof(key));
	other[31] ^= 1;
	CU_ASSERT_FALSE(nc_auth_proof_is_valid(other, false, nc, ns, "testfs", 1, mac));
	CU_ASSERT_FALSE(nc_auth_proof_is_valid(other, true, nc, ns, "testfs", 1, smac));
	/* The client's proof is no server proof (a reflection). */
	CU_ASSERT_FALSE(nc_auth_proof_is_valid(key, true, nc, ns, "testfs", 1, mac));
	/* Another server nonce (a replay on a new connection). */
	nc_auth_nonce(ns2);
	CU_ASSERT_NOT_EQUAL(memcmp(ns, ns2, sizeof(ns)), 0);
	CU_ASSERT_FALSE(nc_auth_proof_is_valid(key, false, nc, ns2, "testfs", 1, mac));
	/* Nonces swapped, another filesystem, another role. */
	CU_ASSERT_FALSE(nc_auth_proof_is_valid(key, false, ns, nc, "testfs", 1, mac));
	CU_ASSERT_FALSE(nc_auth_proof_is_valid(key, false, nc, ns, "testfs2", 1, mac));
	CU_ASSERT_FALSE(nc_auth_proof_is_valid(key, false, nc, ns, "testfs", 2, mac));
	/* One bit of the proof. */
	mac[0] ^= 0x80;
	CU_ASSERT_FALSE(nc_auth_proof_is_valid(key, false, nc, ns, "testfs", 1, mac));
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	unsigned int failures;
	CU_pSuite suite;

	snprintf(dir, sizeof(dir), "%s/nacre-auth-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
	if (!mkdtemp(dir))
		return 99;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite("auth", NULL, NULL);
	if (!suite || !CU_add_test(suite, "key files made 0600, never overwritten",
				   test_create_load) ||
	    !CU_add_test(suite, "key files others may read are refused", test_load_refused) ||
	    !CU_add_test(suite, "key file syntax", test_parse) ||
	    !CU_add_test(suite, "which key file", test_path) ||
	    !CU_add_test(suite, "handshake proofs", test_proofs)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return failures ? 1 : 0;
}
