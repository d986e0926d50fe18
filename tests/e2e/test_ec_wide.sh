#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: the widest erasure code, 16+4, over 20 OSTs (one OSS
# each, 64 KiB chunks so a row is 1 MiB of data).  Any 4 OSS may stop and
# the file reads back exactly; a fifth makes reads fail with EIO.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
export OSTS=20
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

cluster_up
WORK=$(mktemp -d "$CDIR/e2e-ecwide.XXXXXX")
SIZE=$((7 * 1048576 + 12345))

test_1()
{
	mkdir "$MNT/wide"
	"$NACRE" setstripe -E 16+4 -S 64K "$MNT/wide"
	mkdata "$WORK/ref" "$SIZE" 1604
	cp -- "$WORK/ref" "$MNT/wide/f"
	local json
	json=$("$NACRE" getstripe --json "$MNT/wide/f")
	assert_eq "$(jget 'd["k"]' <<<"$json")" 16 "k"
	assert_eq "$(jget 'd["m"]' <<<"$json")" 4 "m"
	assert_eq "$(jget 'd["stripe_count"]' <<<"$json")" 20 "stripe count"
	assert_eq "$(jget 'd["stripe_size"]' <<<"$json")" 65536 "stripe size"
	cmp_uncached "$WORK/ref" "$MNT/wide/f"
}
run_test 1 "a 16+4 file over 20 OSTs reads back exactly" test_1

test_2()
{
	oss_stop 2 7 11 19
	cmp_uncached "$WORK/ref" "$MNT/wide/f"
	oss_stop 13
	drop_caches
	if cat "$MNT/wide/f" >"$WORK/out" 2>"$WORK/err"; then
		echo "read succeeded with 5 of 20 shards lost"
		oss_start 2 7 11 13 19
		return 1
	fi
	grep -q "Input/output error" "$WORK/err"
	# Whatever came out before the error is the file's own prefix.
	cmp -n "$(stat -c %s "$WORK/out")" "$WORK/ref" "$WORK/out"
	oss_start 2 7 11 13 19
	cmp_uncached "$WORK/ref" "$MNT/wide/f"
}
run_test 2 "any 4 of 20 OSS down still read back; 5 down fail with EIO" test_2

finish
