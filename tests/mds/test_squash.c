/* SPDX-License-Identifier: MIT */
/* Unit tests of root squash (mds/squash.c): parsing, exemptions, and what
 * squashing does to credentials, including through the request decoder. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "common/wire.h"
#include "mds/squash.h"

static void parse_ok(struct mds_squash *sq, const char *ids, const char *nosquash)
{
	char err[128] = "";

	CU_ASSERT_EQUAL_FATAL(mds_squash_parse(sq, ids, nosquash, err, sizeof(err)), 0);
}

static void test_parse(void)
{
	struct mds_squash sq;
	char err[128];

	parse_ok(&sq, NULL, NULL);
	CU_ASSERT_FALSE(sq.sq_on);
	CU_ASSERT_FALSE(mds_squash_applies(&sq, "tcp://10.0.0.1:5000"));
	parse_ok(&sq, "65534:65533", "10.0.0.5, 10.1.0.0/16,fd00::/8");
	CU_ASSERT_TRUE(sq.sq_on);
	CU_ASSERT_EQUAL(sq.sq_uid, 65534);
	CU_ASSERT_EQUAL(sq.sq_gid, 65533);
	CU_ASSERT_EQUAL(sq.sq_nnets, 3);

	static const char *const bad_ids[] = { "0:100", "100:0", "100", "100:", ":100",
					      "a:b", "-1:5", "5:-1", "1:2:3", "99999999999:1" };
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(mds_squash_parse(&sq, bad_ids[i], NULL, err, sizeof(err)), -EINVAL);
		CU_ASSERT_NOT_EQUAL(err[0], '\0');
	}
	static const char *const bad_nets[] = { "host.example", "10.0.0.1/33", "fd00::/129",
					       "10.0.0.1/", "10.0.0.1/x", "300.1.1.1" };
	for (size_t i = 0; i < sizeof(bad_nets) / sizeof(bad_nets[0]); i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(mds_squash_parse(&sq, "99:99", bad_nets[i], err, sizeof(err)),
				-EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad_nets[i]));
	}
}

static void test_applies(void)
{
	struct mds_squash sq;

	parse_ok(&sq, "99:99", "10.0.0.5,10.1.0.0/16,172.16.0.0/12,fd00::/8,192.168.7.9/31");
	/* exact host */
	CU_ASSERT_FALSE(mds_squash_applies(&sq, "tcp://10.0.0.5:1234"));
	CU_ASSERT_TRUE(mds_squash_applies(&sq, "tcp://10.0.0.6:1234"));
	/* byte-aligned and unaligned prefixes */
	CU_ASSERT_FALSE(mds_squash_applies(&sq, "tcp://10.1.200.3:1"));
	CU_ASSERT_TRUE(mds_squash_applies(&sq, "tcp://10.2.0.3:1"));
	CU_ASSERT_FALSE(mds_squash_applies(&sq, "rdma://172.31.255.1:7300"));
	CU_ASSERT_TRUE(mds_squash_applies(&sq, "rdma://172.32.0.1:7300"));
	CU_ASSERT_FALSE(mds_squash_applies(&sq, "tcp://192.168.7.8:1"));
	CU_ASSERT_TRUE(mds_squash_applies(&sq, "tcp://192.168.7.10:1"));
	/* IPv6, and IPv4 clients of a server listening on :: */
	CU_ASSERT_FALSE(mds_squash_applies(&sq, "tcp://[fd12::1]:7300"));
	CU_ASSERT_TRUE(mds_squash_applies(&sq, "tcp://[fe80::1]:7300"));
	CU_ASSERT_FALSE(mds_squash_applies(&sq, "tcp://[::ffff:10.0.0.5]:7300"));
	CU_ASSERT_TRUE(mds_squash_applies(&sq, "tcp://[::ffff:10.0.0.7]:7300"));
	/* what cannot be read is squashed */
	CU_ASSERT_TRUE(mds_squash_applies(&sq, "tcp://?"));
	CU_ASSERT_TRUE(mds_squash_applies(&sq, NULL));
	/* no exemptions: everyone */
	parse_ok(&sq, "99:99", "");
	CU_ASSERT_TRUE(mds_squash_applies(&sq, "tcp://127.0.0.1:1"));
}

static void test_cred(void)
{
	struct nc_cred c = { .c_uid = 0, .c_gid = 0, .c_ngroups = 3, .c_groups = { 5, 0, 7 } };
	struct nc_cred u = { .c_uid = 1000, .c_gid = 1000, .c_ngroups = 1, .c_groups = { 0 } };
	struct mds_squash sq;

	parse_ok(&sq, "65534:65533", NULL);
	mds_squash_cred(&sq, &c);
	CU_ASSERT_EQUAL(c.c_uid, 65534);
	CU_ASSERT_EQUAL(c.c_gid, 65533);
	CU_ASSERT_EQUAL(c.c_groups[0], 5);
	CU_ASSERT_EQUAL(c.c_groups[1], 65533);
	CU_ASSERT_EQUAL(c.c_groups[2], 7);
	/* a user keeps its uid; only its root group goes */
	mds_squash_cred(&sq, &u);
	CU_ASSERT_EQUAL(u.c_uid, 1000);
	CU_ASSERT_EQUAL(u.c_gid, 1000);
	CU_ASSERT_EQUAL(u.c_groups[0], 65533);
}

static void fix(struct nc_cred *c, const void *arg)
{
	mds_squash_cred(arg, c);
}

/* The decoder hook: every credential decoded gets squashed, and encoding
 * never runs it. */
static void test_decode_hook(void)
{
	struct nc_cred in = { .c_uid = 0, .c_gid = 0, .c_ngroups = 1, .c_groups = { 0 } };
	struct nc_cred out;
	struct mds_squash sq;
	uint8_t buf[256];
	struct nc_xdr x;

	parse_ok(&sq, "42:43", NULL);
	nc_xdr_init_encode(&x, buf, sizeof(buf));
	x.x_cred_fix = fix;
	x.x_cred_arg = &sq;
	nc_xdr_cred(&x, &in);
	CU_ASSERT_EQUAL_FATAL(x.x_err, 0);
	CU_ASSERT_EQUAL(in.c_uid, 0);
	nc_xdr_init_decode(&x, buf, x.x_pos);
	x.x_cred_fix = fix;
	x.x_cred_arg = &sq;
	nc_xdr_cred(&x, &out);
	CU_ASSERT_EQUAL(nc_xdr_finish(&x), 0);
	CU_ASSERT_EQUAL(out.c_uid, 42);
	CU_ASSERT_EQUAL(out.c_gid, 43);
	CU_ASSERT_EQUAL(out.c_groups[0], 43);
	/* without the hook the identity passes unchanged */
	nc_xdr_init_decode(&x, buf, sizeof(uint32_t) * 4);
	nc_xdr_cred(&x, &out);
	CU_ASSERT_EQUAL(out.c_uid, 0);
}

int main(void)
{
	CU_pSuite suite;
	unsigned int failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite("squash", NULL, NULL);
	if (!suite ||
	    !CU_add_test(suite, "parse options", test_parse) ||
	    !CU_add_test(suite, "exempt addresses and networks", test_applies) ||
	    !CU_add_test(suite, "credentials", test_cred) ||
	    !CU_add_test(suite, "decoder hook", test_decode_hook)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
