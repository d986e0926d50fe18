#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: the `nacre` command line tool against a live mount: df,
# osts, getstripe, setstripe, and its exit codes and messages for bad input.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

cluster_up
WORK=$(mktemp -d "$CDIR/e2e-cli.XXXXXX")

# run_rc OUT ERR CMD...: runs CMD with stdout in OUT and stderr in ERR and
# prints its exit status (never fails itself).
run_rc()
{
	local out=$1 err=$2 rc=0
	shift 2
	"$@" > "$out" 2> "$err" || rc=$?
	echo "$rc"
}

test_1()
{
	local out=$WORK/df.txt
	"$NACRE" df "$MNT" > "$out"
	cat "$out"
	assert_eq "$(grep -cE "${FSNAME}-MDT[0-9a-fA-F]{4}" "$out")" "1" "MDT rows"
	assert_eq "$(grep -cE "${FSNAME}-OST[0-9a-fA-F]{4}" "$out")" "$NOST" "OST rows"
	assert_eq "$(grep -E "${FSNAME}-OST[0-9a-fA-F]{4}" "$out" | grep -cvw up)" "0" \
		"OST rows not up"
	# Every OST index shows up, in Lustre's 4-digit hex.
	for i in $(seq 0 $((NOST - 1))); do
		grep "$(printf '%s-OST%04x' "$FSNAME" "$i")" "$out" > /dev/null
	done
	# Human-readable sizes: the same rows.
	"$NACRE" df -h "$MNT" > "$WORK/df-h.txt"
	cat "$WORK/df-h.txt"
	assert_eq "$(grep -cE "${FSNAME}-OST[0-9a-fA-F]{4}" "$WORK/df-h.txt")" "$NOST" "OST rows of df -h"
	grep -E '[0-9.]+[KMGT]' "$WORK/df-h.txt" > /dev/null
	# With no path, df finds the mount by itself.
	"$NACRE" df > "$WORK/df-all.txt"
	grep -E "${FSNAME}-OST0000" "$WORK/df-all.txt" > /dev/null
}
run_test 1 "nacre df lists the MDT and every OST as up" test_1

test_2()
{
	"$NACRE" df --json "$MNT" > "$WORK/df.json"
	python3 - "$WORK/df.json" "$NOST" "$FSNAME" <<'PYEOF'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
nost, fsname = int(sys.argv[2]), sys.argv[3]
assert d["filesystem"] == fsname, d["filesystem"]
t = d["targets"]
mdt = [x for x in t if x["type"] == "mdt"]
ost = [x for x in t if x["type"] == "ost"]
assert len(mdt) == 1, mdt
assert len(ost) == nost, ost
assert sorted(x["index"] for x in ost) == list(range(nost)), ost
for x in t:
    assert x["state"] == "up", x
    for k in ("total", "used", "avail"):
        assert isinstance(x[k], int) and x[k] >= 0, (k, x)
    assert x["used"] <= x["total"], x
for x in ost:
    assert x["total"] > 0, x
    assert x["name"] == "%s-OST%04x" % (fsname, x["index"]), x["name"]
assert "summary" in d
print("df --json: %d MDT, %d OSTs, all up" % (len(mdt), len(ost)))
PYEOF
	# The --json flag also works before the subcommand.
	"$NACRE" --json df "$MNT" | python3 -c 'import json, sys; json.load(sys.stdin)'
}
run_test 2 "nacre df --json is valid JSON with MDT and OST rows" test_2

test_3()
{
	"$NACRE" osts --json "$MNT" > "$WORK/osts.json"
	cat "$WORK/osts.json"
	python3 - "$WORK/osts.json" "$NOST" "$PORT" <<'PYEOF'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
nost, port = int(sys.argv[2]), int(sys.argv[3])
assert isinstance(d, list), type(d)
assert len(d) == nost, d
assert sorted(x["index"] for x in d) == list(range(nost)), d
uuids = set()
for x in d:
    assert x["address"].startswith("tcp://127.0.0.1:"), x
    # One OSS per OST here: OST i is served by OSS i on PORT + 1 + i.
    assert x["address"] == "tcp://127.0.0.1:%d" % (port + 1 + x["index"]), x
    assert x["transport"] == "tcp", x
    assert x["state"] == "up", x
    assert len(x["uuid"]) >= 8, x
    uuids.add(x["uuid"])
assert len(uuids) == nost, "OST uuids are not unique"
PYEOF
	"$NACRE" osts "$MNT" > "$WORK/osts.txt"
	assert_eq "$(grep -c 'tcp://127.0.0.1:' "$WORK/osts.txt")" "$NOST" "OST lines of nacre osts"
}
run_test 3 "nacre osts --json lists every OST with its address" test_3

test_4()
{
	local json
	dd if=/dev/zero of="$MNT/striped" bs=1M count=5 status=none
	json=$("$NACRE" getstripe --json "$MNT/striped")
	echo "$json"
	assert_eq "$(jget 'd["stripe_count"]' <<< "$json")" "$N" "stripe_count"
	assert_eq "$(jget 'd["stripe_size"]' <<< "$json")" "$S" "stripe_size"
	assert_eq "$(jget 'len(d["shards"])' <<< "$json")" "$N" "shards"
	assert_eq "$(jget 'len(set(s["ost"] for s in d["shards"]))' <<< "$json")" "$N" "distinct OSTs"
	assert_eq "$(jget 'all(s["state"] == "ok" for s in d["shards"])' <<< "$json")" "true" "shard states"
	assert_eq "$(jget 'd["fid"]' <<< "$json")" \
		"$(getfattr --absolute-names -n nacre.fid --only-values "$MNT/striped")" \
		"fid of getstripe and of the nacre.fid xattr"
	"$NACRE" getstripe "$MNT/striped" > "$WORK/getstripe.txt"
	cat "$WORK/getstripe.txt"
	grep -E "lmm_stripe_count:[[:space:]]+$N([[:space:]]|$)" "$WORK/getstripe.txt" > /dev/null
	grep -E "lmm_stripe_size:[[:space:]]+$S([[:space:]]|$)" "$WORK/getstripe.txt" > /dev/null
}
run_test 4 "getstripe shows the default layout of a file" test_4

test_5()
{
	local json
	mkdir "$MNT/narrow"
	"$NACRE" setstripe -c 2 -S 64K "$MNT/narrow"
	json=$("$NACRE" getstripe --json "$MNT/narrow")
	echo "$json"
	assert_eq "$(jget 'd["stripe_count"]' <<< "$json")" "2" "directory stripe_count"
	assert_eq "$(jget 'd["stripe_size"]' <<< "$json")" "65536" "directory stripe_size"
	dd if=/dev/urandom of="$WORK/narrow" bs=1k count=300 status=none
	cp "$WORK/narrow" "$MNT/narrow/file"
	json=$("$NACRE" getstripe --json "$MNT/narrow/file")
	echo "$json"
	assert_eq "$(jget 'd["stripe_count"]' <<< "$json")" "2" "inherited stripe_count"
	assert_eq "$(jget 'd["stripe_size"]' <<< "$json")" "65536" "inherited stripe_size"
	assert_eq "$(jget 'len(d["shards"])' <<< "$json")" "2" "inherited shards"
	cmp "$WORK/narrow" "$MNT/narrow/file"
	# Files elsewhere keep the filesystem default.
	: > "$MNT/not-narrow"
	assert_eq "$("$NACRE" getstripe --json "$MNT/not-narrow" | jget 'd["stripe_count"]')" \
		"$N" "stripe_count outside the directory"
}
run_test 5 "a file created in a setstripe directory inherits its layout" test_5

test_6()
{
	local json fid i
	if [ "$NOST" -lt 4 ]; then
		echo "SKIP (needs 4 OSTs, have $NOST)"
		return 0
	fi
	"$NACRE" setstripe -i 3 -c 1 "$MNT/on3"
	test -f "$MNT/on3"
	assert_eq "$(stat -c %s "$MNT/on3")" "0" "size of the new file"
	json=$("$NACRE" getstripe --json "$MNT/on3")
	echo "$json"
	assert_eq "$(jget 'd["stripe_count"]' <<< "$json")" "1" "stripe_count"
	assert_eq "$(jget '[s["ost"] for s in d["shards"]]' <<< "$json")" "[3]" "shard OSTs"
	dd if=/dev/urandom of="$WORK/on3" bs=1k count=100 status=none
	cp "$WORK/on3" "$MNT/on3"
	cmp "$WORK/on3" "$MNT/on3"
	fid=$(jget 'd["fid"]' <<< "$json")
	cmp "$WORK/on3" "$(ost_object_path 3 "$fid")"
	for i in 0 1 2; do
		if [ -e "$(ost_object_path "$i" "$fid")" ]; then
			echo "an object of on3 exists on OST $i" >&2
			false
		fi
	done
}
run_test 6 "setstripe -i 3 -c 1 creates a file on OST 3" test_6

test_7()
{
	local rc
	echo "some data" > "$MNT/full"
	rc=$(run_rc "$WORK/7.out" "$WORK/7.err" "$NACRE" setstripe -c 1 "$MNT/full")
	cat "$WORK/7.err"
	assert_eq "$rc" "1" "exit status of setstripe on a non-empty file"
	[ -s "$WORK/7.err" ]
	assert_eq "$("$NACRE" getstripe --json "$MNT/full" | jget 'd["stripe_count"]')" \
		"$N" "layout unchanged"
	assert_eq "$(cat "$MNT/full")" "some data" "content unchanged"
}
run_test 7 "setstripe on a non-empty file fails" test_7

test_8()
{
	local rc
	rc=$(run_rc "$WORK/8a.out" "$WORK/8a.err" "$NACRE" setstripe -S abc "$MNT/x")
	cat "$WORK/8a.err"
	assert_eq "$rc" "2" "exit status of setstripe -S abc"
	assert_eq "$(wc -l < "$WORK/8a.err")" "1" "lines of the error"
	if [ -e "$MNT/x" ]; then
		echo "setstripe with bad arguments created its path" >&2
		false
	fi
	rc=$(run_rc "$WORK/8b.out" "$WORK/8b.err" "$NACRE" frobnicate)
	cat "$WORK/8b.err"
	assert_eq "$rc" "2" "exit status of an unknown subcommand"
	assert_eq "$(wc -l < "$WORK/8b.err")" "1" "lines of the error"
	rc=$(run_rc "$WORK/8c.out" "$WORK/8c.err" "$NACRE" setstripe "$MNT/y")
	assert_eq "$rc" "2" "exit status of setstripe without options"
	rc=$(run_rc "$WORK/8d.out" "$WORK/8d.err" "$NACRE" setstripe -c 1)
	assert_eq "$rc" "2" "exit status of setstripe without a path"
	rc=$(run_rc "$WORK/8e.out" "$WORK/8e.err" "$NACRE" df --no-such-option)
	assert_eq "$rc" "2" "exit status of an unknown option"
}
run_test 8 "bad arguments exit 2 with a one-line error" test_8

test_9()
{
	local rc
	rc=$(run_rc "$WORK/9a.out" "$WORK/9a.err" "$NACRE" getstripe /etc/passwd)
	cat "$WORK/9a.err"
	assert_eq "$rc" "1" "exit status of getstripe outside nacre"
	grep "not on a nacre filesystem" "$WORK/9a.err" > /dev/null
	rc=$(run_rc "$WORK/9b.out" "$WORK/9b.err" "$NACRE" getstripe "$MNT/missing")
	cat "$WORK/9b.err"
	assert_eq "$rc" "1" "exit status of getstripe on a missing path"
	grep "No such file or directory" "$WORK/9b.err" > /dev/null
}
run_test 9 "paths outside nacre and missing paths exit 1" test_9

test_10()
{
	"$NACRE" --version | grep '^nacre ' > /dev/null
	"$NACRE" --help > "$WORK/help.txt"
	grep getstripe "$WORK/help.txt" > /dev/null
	grep setstripe "$WORK/help.txt" > /dev/null
	"$NACRE" setstripe --help > /dev/null
}
run_test 10 "--version and --help" test_10

test_11()
{
	local json rc bad
	if [ "$NOST" -lt 3 ]; then
		echo "SKIP (needs 3 OSTs, have $NOST)"
		return 0
	fi
	mkdir "$MNT/ec21"
	"$NACRE" setstripe -E 2+1 "$MNT/ec21"
	json=$("$NACRE" getstripe --json "$MNT/ec21")
	echo "$json"
	assert_eq "$(jget '(d["k"], d["m"])' <<< "$json")" "(2, 1)" "directory k and m"
	dd if=/dev/urandom of="$WORK/ec21" bs=1k count=3000 status=none
	cp "$WORK/ec21" "$MNT/ec21/file"
	json=$("$NACRE" getstripe --json "$MNT/ec21/file")
	echo "$json"
	assert_eq "$(jget 'd["k"]' <<< "$json")" "2" "inherited k"
	assert_eq "$(jget 'd["m"]' <<< "$json")" "1" "inherited m"
	assert_eq "$(jget 'd["pattern"]' <<< "$json")" "ec 2+1" "pattern"
	assert_eq "$(jget 'd["stripe_count"] >= 3' <<< "$json")" "true" "stripe_count holds a row"
	assert_eq "$(jget 'len(set(s["ost"] for s in d["shards"])) == d["stripe_count"]' <<< "$json")" \
		"true" "distinct OSTs"
	cmp "$WORK/ec21" "$MNT/ec21/file"
	"$NACRE" getstripe "$MNT/ec21/file" | grep -E '^lmm_pattern:[[:space:]]+ec 2\+1$' > /dev/null
	for bad in 0+1 17+1 2+5 2+ +1 2-1 abc 2+1x -1+1; do
		rc=$(run_rc "$WORK/11.out" "$WORK/11.err" "$NACRE" setstripe -E "$bad" "$MNT/ec21")
		cat "$WORK/11.err"
		assert_eq "$rc" "2" "exit status of setstripe -E $bad"
		assert_eq "$(wc -l < "$WORK/11.err")" "1" "lines of the error for -E $bad"
	done
	rc=$(run_rc "$WORK/11.out" "$WORK/11.err" "$NACRE" setstripe -E 2+1 -c 2 "$MNT/ec21")
	cat "$WORK/11.err"
	assert_eq "$rc" "2" "exit status of setstripe -E 2+1 -c 2"
	# The refused changes left the directory as it was.
	json=$("$NACRE" getstripe --json "$MNT/ec21")
	assert_eq "$(jget '(d["k"], d["m"])' <<< "$json")" "(2, 1)" "directory k and m afterwards"
}
run_test 11 "setstripe -E sets the erasure code new files inherit; bad codes exit 2" test_11

finish
