#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: the `nacre` command line tool against a live mount: df,
# osts, getstripe, setstripe (packing included), pack stats, convert and gc,
# and its exit codes and messages for bad input.

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
	# With no path, df finds the mount by itself.  It lists every nacre
	# mount of this machine: one of another filesystem (another test's,
	# with another cluster key) fails like df's unreadable mounts, with an
	# error and exit 1, but this mount's rows are there all the same.
	if ! "$NACRE" df > "$WORK/df-all.txt" 2> "$WORK/df-all.err"; then
		cat "$WORK/df-all.err"
		assert_eq "$(grep -cF "nacre df: $MNT:" "$WORK/df-all.err")" 0 \
			"df errors about this mount"
	fi
	grep -F "$MNT[OST:0]" "$WORK/df-all.txt" > /dev/null
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

# pack_json FILE: `nacre pack stats -v --json` of the mount, in FILE.
pack_json()
{
	"$NACRE" pack stats -v --json "$MNT" > "$1"
	cat "$1"
}

test_12()
{
	local out=$WORK/pack0.txt json
	# Nothing was written into a pack directory yet.
	"$NACRE" pack stats "$MNT" > "$out"
	cat "$out"
	grep -E '^packs:[[:space:]]+0$' "$out" > /dev/null
	grep -E '^files:[[:space:]]+0$' "$out" > /dev/null
	grep -E '^live:[[:space:]]+0$' "$out" > /dev/null
	grep -E '^live_fraction:[[:space:]]+-$' "$out" > /dev/null
	pack_json "$WORK/pack0.json"
	json=$(cat "$WORK/pack0.json")
	assert_eq "$(jget 'd["filesystem"]' <<< "$json")" "$FSNAME" "filesystem"
	assert_eq "$(jget '(d["packs"], d["sealed"], d["open"], d["files"])' <<< "$json")" \
		"(0, 0, 0, 0)" "packs, sealed, open, files"
	assert_eq "$(jget '(d["size"], d["live"], d["dead"])' <<< "$json")" "(0, 0, 0)" "bytes"
	assert_eq "$(jget 'd["live_fraction"]' <<< "$json")" "None" "live fraction of nothing"
	assert_eq "$(jget 'd["pack_list"]' <<< "$json")" "[]" "pack list"
	# -v: the header of the pack table, no rows.
	"$NACRE" pack stats -v "$MNT" > "$out"
	assert_eq "$(grep -c '^ *PACK ' "$out")" "1" "header of the pack table"
	assert_eq "$(grep -cE '^ *[0-9]+ ' "$out")" "0" "pack rows"
}
run_test 12 "pack stats on a fresh filesystem shows no packs" test_12

test_13()
{
	local json
	mkdir "$MNT/pk"
	"$NACRE" setstripe --pack --pack-max 256K -c 2 "$MNT/pk"
	"$NACRE" getstripe "$MNT/pk" > "$WORK/pk.txt"
	cat "$WORK/pk.txt"
	grep -E '^stripe_count: 2 ' "$WORK/pk.txt" > /dev/null
	grep -xF 'pack: on, pack_max 262144' "$WORK/pk.txt" > /dev/null
	json=$("$NACRE" getstripe --json "$MNT/pk")
	echo "$json"
	assert_eq "$(jget '(d["pack"], d["pack_max"], d["stripe_count"])' <<< "$json")" \
		"(True, 262144, 2)" "pack, pack_max, stripe_count"
	# New subdirectories inherit the template, packing included.
	mkdir "$MNT/pk/sub"
	json=$("$NACRE" getstripe --json "$MNT/pk/sub")
	assert_eq "$(jget '(d["pack"], d["pack_max"])' <<< "$json")" "(True, 262144)" \
		"packing of a new subdirectory"
	# Other options change their field only: packing stays on.
	"$NACRE" setstripe -S 64K "$MNT/pk"
	json=$("$NACRE" getstripe --json "$MNT/pk")
	assert_eq "$(jget '(d["pack"], d["pack_max"], d["stripe_size"], d["stripe_count"])' <<< "$json")" \
		"(True, 262144, 65536, 2)" "after setstripe -S"
	# --pack alone keeps pack_max; --pack-max changes it.
	"$NACRE" setstripe --pack "$MNT/pk"
	assert_eq "$("$NACRE" getstripe --json "$MNT/pk" | jget 'd["pack_max"]')" "262144" \
		"pack_max after --pack"
	json=$("$NACRE" setstripe --json --pack --pack-max 1M "$MNT/pk")
	echo "$json"
	assert_eq "$(jget '(d["pack"], d["pack_max"])' <<< "$json")" "(True, 1048576)" \
		"setstripe --json --pack-max 1M"
	# --no-pack turns it off, and nothing else; the subdirectory keeps its own.
	"$NACRE" setstripe --no-pack "$MNT/pk"
	json=$("$NACRE" getstripe --json "$MNT/pk")
	echo "$json"
	assert_eq "$(jget '(d["pack"], d["pack_max"], d["stripe_size"], d["stripe_count"])' <<< "$json")" \
		"(False, None, 65536, 2)" "after --no-pack"
	if "$NACRE" getstripe "$MNT/pk" | grep '^pack:'; then
		_e2e_assert_failed "getstripe shows packing after --no-pack"
	fi
	assert_eq "$("$NACRE" getstripe --json "$MNT/pk/sub" | jget 'd["pack"]')" "true" \
		"packing of the subdirectory"
	# The root: the default of the whole filesystem, then off again.
	"$NACRE" setstripe --pack "$MNT"
	"$NACRE" getstripe "$MNT" | grep -xF 'pack: on, pack_max 1048576' > /dev/null
	"$NACRE" setstripe --no-pack "$MNT"
	assert_eq "$("$NACRE" getstripe --json "$MNT" | jget 'd["pack"]')" "false" \
		"packing of the root after --no-pack"
}
run_test 13 "setstripe --pack on a directory; getstripe shows it; --no-pack" test_13

# bad_setstripe STATUS ARGS...: setstripe ARGS exits STATUS with one line.
bad_setstripe()
{
	local want=$1 rc
	shift
	rc=$(run_rc "$WORK/bad.out" "$WORK/bad.err" "$NACRE" setstripe "$@")
	cat "$WORK/bad.err"
	assert_eq "$rc" "$want" "exit status of setstripe $*"
	assert_eq "$(wc -l < "$WORK/bad.err")" "1" "lines of the error of setstripe $*"
}

test_14()
{
	local arg want bad rc
	mkdir "$MNT/pmax"
	for arg in 1:1 4096:4096 64K:65536 64k:65536 2M:2097152 64M:67108864 \
		67108864:67108864; do
		want=${arg#*:}
		arg=${arg%%:*}
		"$NACRE" setstripe --pack --pack-max "$arg" "$MNT/pmax"
		assert_eq "$("$NACRE" getstripe --json "$MNT/pmax" | jget 'd["pack_max"]')" \
			"$want" "pack_max of --pack-max $arg"
	done
	"$NACRE" setstripe --pack --pack-max 128K "$MNT/pmax"
	# 0 is refused rather than read as the default; so is more than 64M.
	for bad in 0 0K 65M 67108865 1G 1T abc -1 1.5M 12x 4KB " 4K" ""; do
		bad_setstripe 2 --pack --pack-max "$bad" "$MNT/pmax"
		grep -F "invalid pack max" "$WORK/bad.err" > /dev/null
	done
	bad_setstripe 2 --pack-max 4K "$MNT/pmax"
	grep -F -- "--pack-max goes with --pack" "$WORK/bad.err" > /dev/null
	bad_setstripe 2 --pack --no-pack "$MNT/pmax"
	bad_setstripe 2 --pack "--pack-max=" "$MNT/pmax"
	bad_setstripe 2 --pack=yes "$MNT/pmax"
	bad_setstripe 2 --pmax "$MNT/pmax"
	bad_setstripe 2 --pack --pack-max
	bad_setstripe 2 --pack
	# The refused changes left the directory as it was.
	assert_eq "$("$NACRE" getstripe --json "$MNT/pmax" | jget '(d["pack"], d["pack_max"])')" \
		"(True, 131072)" "template after the refused changes"
	# Only directories pack: an existing file is refused, a missing path is
	# not created.
	: > "$MNT/pmax-file"
	bad_setstripe 2 --pack "$MNT/pmax-file"
	grep -F "not a directory" "$WORK/bad.err" > /dev/null
	bad_setstripe 2 --no-pack "$MNT/pmax-file"
	assert_eq "$("$NACRE" getstripe --json "$MNT/pmax-file" | jget '(d["packed"], d["stripe_count"])')" \
		"(False, $N)" "layout of the file"
	bad_setstripe 2 --pack "$MNT/pmax-new"
	if [ -e "$MNT/pmax-new" ]; then
		_e2e_assert_failed "setstripe --pack created a file"
	fi
	# The pack command group.
	for bad in "" frob "stats -x" "stats a b" "stats --json=1"; do
		# shellcheck disable=SC2086
		rc=$(run_rc "$WORK/bad.out" "$WORK/bad.err" "$NACRE" pack $bad)
		cat "$WORK/bad.err"
		assert_eq "$rc" "2" "exit status of nacre pack $bad"
		assert_eq "$(wc -l < "$WORK/bad.err")" "1" "lines of the error of nacre pack $bad"
	done
	rc=$(run_rc "$WORK/bad.out" "$WORK/bad.err" "$NACRE" pack stats /etc)
	cat "$WORK/bad.err"
	assert_eq "$rc" "1" "exit status of pack stats outside nacre"
	grep "not on a nacre filesystem" "$WORK/bad.err" > /dev/null
	"$NACRE" help pack | grep -E "^(usage:|      ) nacre pack stats " > /dev/null
	"$NACRE" pack stats --help | grep -F -- "--verbose" > /dev/null
	"$NACRE" --help | grep -E '^  pack ' > /dev/null
}
run_test 14 "--pack-max takes K/M sizes from 1 to 64M; bad packing arguments exit 2" test_14

# pack_extent_cmp FILE JSON: the bytes of FILE are where the getstripe JSON
# of a packed file says, in the objects of its pack (plain striping: chunk c
# of the pack is on shard c % count, at (c / count) * stripe_size).
pack_extent_cmp()
{
	python3 - "$1" "$2" "$CDIR" <<'PYEOF'
import json, sys
path, d, cdir = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
want = open(path, "rb").read()
assert d["m"] == 0, "plain striping only: %r" % d
seq, oid = (int(x, 16) for x in d["pack_fid"].strip("[]").split(":"))
s, n = d["stripe_size"], len(d["shards"])
got, off, left = b"", d["pack_offset"], d["pack_length"]
while left:
    c, within = divmod(off, s)
    take = min(left, s - within)
    obj = "%s/ost/%d/O/%02x/%016x:%016x" % (cdir, d["shards"][c % n]["ost"],
                                          oid & 0xff, seq, oid)
    with open(obj, "rb") as f:
        f.seek((c // n) * s + within)
        got += f.read(take)
    off, left = off + take, left - take
assert got == want, "the pack's bytes differ from %s" % path
PYEOF
}

test_15()
{
	local json out=$WORK/pack50.txt total i
	mkdir "$MNT/small" "$WORK/small"
	"$NACRE" setstripe --pack "$MNT/small"
	python3 - "$WORK/small" <<'PYEOF'
import os, random, sys
for i in range(50):
    with open(os.path.join(sys.argv[1], "f%02d" % i), "wb") as f:
        f.write(random.Random(i).randbytes(100 + i * 97))
PYEOF
	total=$(cat "$WORK"/small/* | wc -c)
	cp "$WORK"/small/* "$MNT/small/"
	sync
	# A listing from the writing mount commits what it holds.
	ls "$MNT/small" > /dev/null
	pack_json "$WORK/pack50.json"
	json=$(cat "$WORK/pack50.json")
	assert_eq "$(jget 'd["packs"] >= 1' <<< "$json")" "true" "at least one pack"
	assert_eq "$(jget 'd["files"]' <<< "$json")" "50" "files in packs"
	assert_eq "$(jget 'd["live"]' <<< "$json")" "$total" "live bytes"
	assert_eq "$(jget 'd["size"] == d["live"] + d["dead"]' <<< "$json")" "true" "size = live + dead"
	assert_eq "$(jget 'any(p["files"] == 50 for p in d["pack_list"])' <<< "$json")" "true" \
		"a pack with the 50 files"
	assert_eq "$(jget 'len(d["pack_list"]) == d["packs"]' <<< "$json")" "true" "pack list"
	assert_eq "$(jget 'd["sealed"] + d["open"] == d["packs"]' <<< "$json")" "true" "sealed + open"
	"$NACRE" pack stats -v "$MNT" > "$out"
	cat "$out"
	grep -E '^files:[[:space:]]+50$' "$out" > /dev/null
	grep -E "^live:[[:space:]]+$total\$" "$out" > /dev/null
	assert_eq "$(awk '$1 ~ /^[0-9]+$/ && $5 == 50' "$out" | wc -l)" "1" "pack row with 50 files"
	# getstripe of a packed file: its pack and extent, the pack's objects.
	"$NACRE" getstripe "$MNT/small/f07" > "$WORK/f07.txt"
	cat "$WORK/f07.txt"
	grep -E "^lmm_packed:[[:space:]]+pack [0-9]+ offset [0-9]+ length $((100 + 7 * 97))\$" \
		"$WORK/f07.txt" > /dev/null
	json=$("$NACRE" getstripe --json "$MNT/small/f07")
	echo "$json"
	assert_eq "$(jget 'd["packed"]' <<< "$json")" "true" "packed"
	assert_eq "$(jget 'd["pack_length"]' <<< "$json")" "$((100 + 7 * 97))" "pack_length"
	assert_eq "$(jget 'len(d["shards"]) > 0' <<< "$json")" "true" "the pack's shards"
	assert_eq "$(jget 'd["pack_id"]' <<< "$json")" \
		"$(jget '[p["id"] for p in d["pack_list"] if p["files"] == 50][0]' < "$WORK/pack50.json")" \
		"pack id of getstripe and pack stats"
	pack_extent_cmp "$WORK/small/f07" "$json"
	# A file just copied in is known only to the mount until its pack
	# flush (a second): getstripe commits it through the mount (fsync)
	# rather than say "no such file".
	mkdata "$WORK/pend" 3000 91
	cp -- "$WORK/pend" "$MNT/small/new"
	json=$("$NACRE" getstripe --json "$MNT/small/new")
	assert_eq "$(jget '(d["pack_pending"], d["pack_length"])' <<< "$json")" "(False, 3000)" \
		"a file just copied in"
	# One the MDS knew empty (a shell redirection creates it, then writes)
	# has its new bytes pending until the flush: getstripe says so rather
	# than "length 0".  A machine slow enough to flush first skips that.
	cat "$WORK/pend" > "$MNT/small/pend"
	"$NACRE" getstripe "$MNT/small/pend" > "$WORK/pend.txt"
	json=$("$NACRE" getstripe --json "$MNT/small/pend")
	if [ "$(jget 'd["pack_pending"]' <<< "$json")" = true ]; then
		grep -qE '^lmm_packed:[[:space:]]+pack [0-9]+, bytes pending' "$WORK/pend.txt"
	else
		echo "the pack flush came before getstripe: pending state not seen"
	fi
	sync "$MNT/small/pend"
	json=$("$NACRE" getstripe --json "$MNT/small/pend")
	assert_eq "$(jget '(d["pack_pending"], d["pack_length"])' <<< "$json")" "(False, 3000)" \
		"after fsync: in the pack"
	for i in 00 13 49; do
		cmp "$WORK/small/f$i" "$MNT/small/f$i"
	done
	# A packed file's layout cannot be set.
	bad_setstripe 1 -c 1 "$MNT/small/f07"
	grep -F "file is packed" "$WORK/bad.err" > /dev/null
	# A file setstripe creates in a pack directory gets objects of its own.
	"$NACRE" setstripe -c 1 "$MNT/small/own"
	json=$("$NACRE" getstripe --json "$MNT/small/own")
	assert_eq "$(jget '(d["packed"], d["stripe_count"], len(d["shards"]))' <<< "$json")" \
		"(False, 1, 1)" "layout of a file setstripe created in a pack directory"
	mkdata "$WORK/own" 3000 15
	cp "$WORK/own" "$MNT/small/own"
	cmp "$WORK/own" "$MNT/small/own"
	cmp "$WORK/own" "$(ost_object_path "$(jget 'd["shards"][0]["ost"]' <<< "$json")" \
		"$(jget 'd["fid"]' <<< "$json")")"
}
run_test 15 "50 small files in a pack directory: pack stats and getstripe show the pack" test_15

# lim_new_is_plain: creates $MNT/lim/afterN (N = ++LIM_N), true when it is
# not packed.
lim_new_is_plain()
{
	LIM_N=$((LIM_N + 1))
	cp "$WORK/lim-small" "$MNT/lim/after$LIM_N"
	ls "$MNT/lim" > /dev/null
	[ "$("$NACRE" getstripe --json "$MNT/lim/after$LIM_N" | jget 'd["packed"]')" = "false" ]
}

test_16()
{
	mkdir "$MNT/lim"
	"$NACRE" setstripe --pack --pack-max 4K "$MNT/lim"
	mkdata "$WORK/lim-small" 3000 161
	mkdata "$WORK/lim-big" 6000 162
	cp "$WORK/lim-small" "$MNT/lim/small"
	cp "$WORK/lim-big" "$MNT/lim/big"
	ls "$MNT/lim" > /dev/null
	assert_eq "$("$NACRE" getstripe --json "$MNT/lim/small" | jget 'd["packed"]')" "true" \
		"a file below pack_max"
	assert_eq "$("$NACRE" getstripe --json "$MNT/lim/big" | jget 'd["packed"]')" "false" \
		"a file above pack_max"
	# Packing off again: new files get objects of their own, once the
	# mount, which created files here a moment ago, looks at the directory's
	# template again (it keeps it up to 10 s).
	"$NACRE" setstripe --no-pack "$MNT/lim"
	LIM_N=0
	wait_until 15 lim_new_is_plain || _e2e_assert_failed "files created after --no-pack are still packed"
	echo "the mount stopped packing after $LIM_N new files"
	cmp "$WORK/lim-small" "$MNT/lim/small"
	cmp "$WORK/lim-big" "$MNT/lim/big"
	cmp "$WORK/lim-small" "$MNT/lim/after$LIM_N"
}
run_test 16 "files above --pack-max, or created after --no-pack, are not packed" test_16

# ---- nacre pack convert and nacre pack gc

# conv_tree DIR: the tree test 17 converts, in DIR: 40 small files of
# sizes from 0 to about 120 KiB over three levels, and one of 1.5 MiB,
# above the default pack_max.
conv_tree()
{
	python3 - "$1" <<'PYEOF'
import os, random, sys
top = sys.argv[1]
dirs = ["", "d1", "d1/d2", "e1"]
sizes = [0, 1, 4095, 4096, 4097, 65536, 0]
for d in dirs:
    os.makedirs(os.path.join(top, d), exist_ok=True)
for i in range(40):
    size = sizes[i] if i < len(sizes) else (i * 7919) % (120 * 1024)
    with open(os.path.join(top, dirs[i % 4], "f%02d" % i), "wb") as f:
        f.write(random.Random(1700 + i).randbytes(size))
with open(os.path.join(top, "d1", "big"), "wb") as f:
    f.write(random.Random(1799).randbytes(1536 * 1024))
PYEOF
}

# packed_states JSON: "PATH STATE" per file of a getstripe --json array,
# STATE true or false.
packed_states()
{
	python3 -c '
import json, sys
d = json.load(sys.stdin)
for x in (d if isinstance(d, list) else [d]):
    print(x["path"], "true" if x["packed"] else "false")
'
}

# same_files REF DIR: every file under REF is in DIR with the same bytes,
# read past the page cache.
same_files()
{
	local f
	while read -r f; do
		cmp_uncached "$1/$f" "$2/$f" || _e2e_assert_failed "$2/$f differs"
	done < <(cd "$1" && find . -type f | sort)
}

test_17()
{
	local json out=$WORK/conv.txt small=40 f p paths
	conv_tree "$WORK/conv"
	mkdir "$MNT/conv" "$MNT/conv-out"
	cp -r "$WORK/conv/." "$MNT/conv/"
	mkdata "$WORK/conv-out" 2000 1798
	cp "$WORK/conv-out" "$MNT/conv-out/outside"
	# Links are not followed: neither to a file nor to a directory.
	ln -s f01 "$MNT/conv/link"
	ln -s ../../conv-out "$MNT/conv/d1/out"
	(cd "$WORK/conv" && find . -type f | sort) > "$WORK/conv.files"
	assert_eq "$(wc -l < "$WORK/conv.files")" "$((small + 1))" "files of the tree"
	# Written with packing off: nothing is packed.
	assert_eq "$("$NACRE" getstripe --json "$MNT/conv" | jget 'd["pack"]')" "false" \
		"packing of the directory before"
	mapfile -t paths < <(sed "s|^\./|$MNT/conv/|" "$WORK/conv.files")
	"$NACRE" getstripe --json "${paths[@]}" | packed_states > "$WORK/conv.before"
	assert_eq "$(grep -c ' false$' "$WORK/conv.before")" "$((small + 1))" "unpacked files before"
	# The short form: nacre pack DIR.
	"$NACRE" pack "$MNT/conv" > "$out"
	cat "$out"
	grep -xE "packed: +$small" "$out" > /dev/null
	grep -xE "already_packed: +0" "$out" > /dev/null
	grep -xE "too_large: +1" "$out" > /dev/null
	grep -xE "busy: +0" "$out" > /dev/null
	grep -xE "errors: +0" "$out" > /dev/null
	grep -xE "directories: +4" "$out" > /dev/null
	"$NACRE" getstripe --json "${paths[@]}" | packed_states > "$WORK/conv.after"
	while read -r f; do
		p=$MNT/conv/${f#./}
		if [ "$f" = ./d1/big ]; then
			grep -qxF "$p false" "$WORK/conv.after" || _e2e_assert_failed "$p packed"
		else
			grep -qxF "$p true" "$WORK/conv.after" || _e2e_assert_failed "$p not packed"
		fi
	done < "$WORK/conv.files"
	# The bytes are where the layouts say, in the packs' objects.
	while read -r f; do
		[ "$f" != ./d1/big ] || continue
		json=$("$NACRE" getstripe --json "$MNT/conv/${f#./}")
		if [ "$(jget 'd["m"]' <<< "$json")" = 0 ]; then
			pack_extent_cmp "$WORK/conv/$f" "$json"
		fi
	done < "$WORK/conv.files"
	same_files "$WORK/conv" "$MNT/conv"
	# Outside the tree nothing changed.
	assert_eq "$("$NACRE" getstripe --json "$MNT/conv-out/outside" | jget 'd["packed"]')" \
		"false" "a file reached through a link"
	assert_eq "$("$NACRE" getstripe --json "$MNT/conv-out" | jget 'd["pack"]')" "false" \
		"packing of a directory reached through a link"
	cmp "$WORK/conv-out" "$MNT/conv-out/outside"
	# Every directory of the tree packs its new files now.
	"$NACRE" getstripe "$MNT/conv" | grep -xF 'pack: on, pack_max 1048576' > /dev/null
	for p in d1 d1/d2 e1; do
		assert_eq "$("$NACRE" getstripe --json "$MNT/conv/$p" | jget '(d["pack"], d["pack_max"])')" \
			"(True, 1048576)" "packing of conv/$p"
	done
	# Again: everything is packed already.
	"$NACRE" pack --json -v "$MNT/conv" > "$WORK/conv2.json"
	cat "$WORK/conv2.json"
	python3 - "$WORK/conv2.json" "$MNT/conv" "$WORK/conv.files" "$small" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
top, small = sys.argv[2], int(sys.argv[4])
names = [l.strip()[2:] for l in open(sys.argv[3]) if l.strip()]
want = {"packed": 0, "already_packed": small, "too_large": 1, "busy": 0,
        "errors": 0, "directories": 4}
for k, v in want.items():
    assert d[k] == v, (k, d[k], v)
got = {f["path"]: f["result"] for f in d["files"]}
assert len(got) == len(d["files"]) == small + 1, d["files"]
for n in names:
    p = top + "/" + n
    assert got[p] == ("too_large" if n == "d1/big" else "already_packed"), (p, got.get(p))
big = [f for f in d["files"] if f["result"] == "too_large"][0]
assert (big["size"], big["pack_max"]) == (1536 * 1024, 1 << 20), big
PYEOF
	# A small file created in the tree now is packed, once the mount looks
	# at the directory's template again (it keeps it up to 10 s).
	mkdata "$WORK/conv-new" 3000 1797
	CONV_N=0
	wait_until 15 conv_new_is_packed || _e2e_assert_failed "new files of a converted directory are not packed"
	cmp "$WORK/conv-new" "$MNT/conv/e1/new$CONV_N"
}

# conv_new_is_packed: creates $MNT/conv/e1/newN (N = ++CONV_N), true when
# it is packed.
conv_new_is_packed()
{
	CONV_N=$((CONV_N + 1))
	cp "$WORK/conv-new" "$MNT/conv/e1/new$CONV_N"
	ls "$MNT/conv/e1" > /dev/null
	[ "$("$NACRE" getstripe --json "$MNT/conv/e1/new$CONV_N" | jget 'd["packed"]')" = "true" ]
}
run_test 17 "nacre pack DIR packs a tree of small files in place, and its directories" test_17

test_18()
{
	local json rc
	mkdata "$WORK/one" 5000 1801
	cp "$WORK/one" "$MNT/one"
	# Larger than --pack-max: left as it is, and no failure.
	"$NACRE" pack convert -v --pack-max 1K "$MNT/one" > "$WORK/one.txt"
	cat "$WORK/one.txt"
	grep -xF "$MNT/one: too large (5000 bytes, pack_max 1024)" "$WORK/one.txt" > /dev/null
	grep -xE "too_large: +1" "$WORK/one.txt" > /dev/null
	assert_eq "$("$NACRE" getstripe --json "$MNT/one" | jget 'd["packed"]')" "false" \
		"a file above --pack-max"
	json=$("$NACRE" pack convert --json "$MNT/one")
	echo "$json"
	python3 - "$json" <<'PYEOF'
import json, sys
d = json.loads(sys.argv[1])
want = {"packed": 1, "inline": 0, "already_packed": 0, "too_large": 0, "busy": 0,
        "errors": 0, "directories": 0}
assert d == want, d
PYEOF
	json=$("$NACRE" getstripe --json "$MNT/one")
	assert_eq "$(jget '(d["packed"], d["pack_length"])' <<< "$json")" "(True, 5000)" \
		"the file's extent"
	if [ "$(jget 'd["m"]' <<< "$json")" = 0 ]; then
		pack_extent_cmp "$WORK/one" "$json"
	fi
	cmp_uncached "$WORK/one" "$MNT/one"
	# A file PATH leaves its directory's packing alone.
	assert_eq "$("$NACRE" getstripe --json "$MNT" | jget 'd["pack"]')" "false" \
		"packing of the root"
	json=$("$NACRE" --json pack convert -v "$MNT/one")
	echo "$json"
	assert_eq "$(jget '(d["packed"], d["already_packed"], d["files"])' <<< "$json")" \
		"(0, 1, [{'path': '$MNT/one', 'result': 'already_packed'}])" "a second run"
	# Without a mount: PATHs are inside the filesystem.
	mkdir -p "$MNT/mds1/sub"
	cp "$WORK/one" "$MNT/mds1/sub/one"
	"$NACRE" --mds "tcp://127.0.0.1:$PORT" --fsname "$FSNAME" pack -v /mds1 > "$WORK/mds1.txt"
	cat "$WORK/mds1.txt"
	grep -xF "/mds1/sub/one: packed" "$WORK/mds1.txt" > /dev/null
	grep -xE "directories: +2" "$WORK/mds1.txt" > /dev/null
	assert_eq "$("$NACRE" getstripe --json "$MNT/mds1/sub/one" | jget 'd["packed"]')" "true" \
		"a file converted without a mount"
	cmp_uncached "$WORK/one" "$MNT/mds1/sub/one"
	# --inline-max: what fits becomes inline (its directory keeps its
	# bytes in the MDT from now on too), the rest is packed.
	mkdir "$MNT/inl"
	mkdata "$WORK/tiny" 3000 1802
	cp "$WORK/tiny" "$MNT/inl/tiny"
	cp "$WORK/one" "$MNT/inl/one"
	"$NACRE" pack -v --inline-max 4k "$MNT/inl" > "$WORK/inl.txt"
	cat "$WORK/inl.txt"
	grep -xF "$MNT/inl/tiny: inline" "$WORK/inl.txt" > /dev/null
	grep -xF "$MNT/inl/one: packed" "$WORK/inl.txt" > /dev/null
	grep -xE "inline: +1" "$WORK/inl.txt" > /dev/null
	assert_eq "$("$NACRE" getstripe --json "$MNT/inl/tiny" "$MNT/inl/one" "$MNT/inl" |
		jget '[d[0]["inline"], d[1]["inline"], d[1]["packed"], d[2]["inline_max"]]')" \
		"[true, false, true, 4096]" "kinds after --inline-max"
	cmp_uncached "$WORK/tiny" "$MNT/inl/tiny"
	cmp_uncached "$WORK/one" "$MNT/inl/one"
	rc=0
	"$NACRE" pack --inline-max 5k "$MNT/inl" 2> "$WORK/inl.err" || rc=$?
	assert_eq "$rc" "2" "status of --inline-max 5k"
	# Turning packing on keeps the rest of a directory's default: its pool.
	"$NACRE" pool create cvpool "$MNT" > /dev/null
	"$NACRE" pool add cvpool 0 1 "$MNT" > /dev/null
	mkdir "$MNT/inpool"
	"$NACRE" setstripe -p cvpool "$MNT/inpool"
	"$NACRE" pack "$MNT/inpool" > /dev/null
	assert_eq "$("$NACRE" getstripe --json "$MNT/inpool" | jget '[d["pack"], d["pool"]]')" \
		'[true, "cvpool"]' "a pool directory converted"
	assert_eq "$(cat "$WORK/inl.err")" \
		"nacre pack convert: invalid inline max '5k' (0 to 4096 bytes, K suffix; 0: none)"
}
run_test 18 "nacre pack convert FILE, --json, --pack-max and --inline-max" test_18

GC_MNT=""
GC_PID=""
gc_umount()
{
	set +e
	if [ -n "$GC_MNT" ] && mountpoint -q "$GC_MNT"; then
		fusermount3 -u "$GC_MNT" || umount -l "$GC_MNT"
	fi
	if [ -n "$GC_PID" ]; then
		wait "$GC_PID" 2>/dev/null
	fi
	GC_PID=""
	return 0
}

test_19()
{
	local json pack i keep=""
	mkdir "$MNT/gc" "$WORK/gc"
	"$NACRE" setstripe --pack "$MNT/gc"
	python3 - "$WORK/gc" <<'PYEOF'
import os, random, sys
for i in range(60):
    with open(os.path.join(sys.argv[1], "g%02d" % i), "wb") as f:
        f.write(random.Random(1900 + i).randbytes(1000 + i * 313))
PYEOF
	# Another client writes them into its pack, which stays open (packs
	# are sealed when full, at 256 MiB) until that client goes: a mount
	# of its own, unmounted once the files are in.
	GC_MNT=$(mktemp -d "$WORK/gcmnt.XXXXXX")
	trap gc_umount EXIT
	"$MOUNT_NACRE" -f "tcp://127.0.0.1:$PORT:/$FSNAME" "$GC_MNT" \
		-o "log=$CDIR/log/client-gc.log" &
	GC_PID=$!
	wait_until 10 mountpoint -q "$GC_MNT"
	cp "$WORK"/gc/* "$GC_MNT/gc/"
	fusermount3 -u "$GC_MNT"
	wait "$GC_PID" || true
	GC_PID=""
	json=$("$NACRE" getstripe --json "$MNT/gc/g00")
	assert_eq "$(jget 'd["packed"]' <<< "$json")" "true" "a file written to the pack directory"
	pack=$(jget 'd["pack_id"]' <<< "$json")
	pack_json "$WORK/gc0.json"
	assert_eq "$(jget "[(p['state'], p['files']) for p in d['pack_list'] if p['id'] == $pack]" \
		< "$WORK/gc0.json")" '[["sealed", 60]]' "the writer's pack once it unmounted"
	# Five files in six go: the pack is mostly dead bytes.
	for i in $(seq 0 59); do
		if [ $((i % 6)) = 0 ]; then
			keep="$keep $(printf 'g%02d' "$i")"
		else
			rm "$MNT/gc/$(printf 'g%02d' "$i")"
		fi
	done
	pack_json "$WORK/gc1.json"
	assert_eq "$(jget "[p['files'] for p in d['pack_list'] if p['id'] == $pack]" \
		< "$WORK/gc1.json")" "[10]" "files left in the pack"
	assert_eq "$(jget "[p['live_fraction'] < 0.9 for p in d['pack_list'] if p['id'] == $pack]" \
		< "$WORK/gc1.json")" "[true]" "live fraction below the threshold"
	json=$("$NACRE" pack gc --threshold 0.9 --json "$MNT")
	echo "$json"
	assert_eq "$(jget 'd["filesystem"]' <<< "$json")" "$FSNAME" "filesystem"
	assert_eq "$(jget 'd["threshold"]' <<< "$json")" "0.9" "threshold"
	assert_eq "$(jget 'd["files_moved"] >= 10' <<< "$json")" "true" "files moved"
	assert_eq "$(jget 'd["packs_emptied"] >= 1' <<< "$json")" "true" "packs emptied"
	# The emptied pack stays listed, with nothing live, until the MDS
	# destroys it after its grace period.
	pack_json "$WORK/gc2.json"
	assert_eq "$(jget "[[p['live'], p['files']] for p in d['pack_list'] if p['id'] == $pack] in ([], [[0, 0]])" \
		< "$WORK/gc2.json")" "true" "the emptied pack"
	for i in $keep; do
		json=$("$NACRE" getstripe --json "$MNT/gc/$i")
		assert_eq "$(jget "(d['packed'], d['pack_id'] != $pack)" <<< "$json")" "(True, True)" \
			"$i moved to another pack"
		if [ "$(jget 'd["m"]' <<< "$json")" = 0 ]; then
			pack_extent_cmp "$WORK/gc/$i" "$json"
		fi
		cmp_uncached "$WORK/gc/$i" "$MNT/gc/$i"
	done
	# Files of other packs the pass moved read back as well.
	if [ -d "$WORK/conv" ]; then
		same_files "$WORK/conv" "$MNT/conv"
	fi
	"$NACRE" pack gc "$MNT" > "$WORK/gc.txt"
	cat "$WORK/gc.txt"
	grep -xE 'files_moved: +[0-9]+' "$WORK/gc.txt" > /dev/null
	grep -xE 'packs_emptied: +[0-9]+' "$WORK/gc.txt" > /dev/null
	# Without a mount, and without PATH: the --mds filesystem.
	json=$("$NACRE" --mds "tcp://127.0.0.1:$PORT" --fsname "$FSNAME" pack gc --json)
	echo "$json"
	assert_eq "$(jget '(d["filesystem"], d["mount"], d["threshold"])' <<< "$json")" \
		"('$FSNAME', None, 0.5)" "pack gc --mds"
}
run_test 19 "nacre pack gc moves the files of a sealed, mostly dead pack" test_19

# bad_pack STATUS ARGS...: nacre pack ARGS exits STATUS with one line on
# stderr and nothing on stdout.
bad_pack()
{
	local want=$1 rc
	shift
	rc=$(run_rc "$WORK/bad.out" "$WORK/bad.err" "$NACRE" pack "$@")
	cat "$WORK/bad.err"
	assert_eq "$rc" "$want" "exit status of nacre pack $*"
	assert_eq "$(wc -l < "$WORK/bad.err")" "1" "lines of the error of nacre pack $*"
	assert_eq "$(wc -c < "$WORK/bad.out")" "0" "output of nacre pack $*"
}

test_20()
{
	local bad
	mkdir "$MNT/badp"
	echo data > "$MNT/badp/f"
	bad_pack 2
	grep -F "missing subcommand or PATH" "$WORK/bad.err" > /dev/null
	bad_pack 2 convert
	grep -F "missing PATH" "$WORK/bad.err" > /dev/null
	bad_pack 2 --json convert
	bad_pack 2 -v
	bad_pack 2 frob
	grep -F "'frob' is neither a subcommand nor an existing path" "$WORK/bad.err" > /dev/null
	for bad in 0 65M 67108865 abc -1 1.5K ""; do
		bad_pack 2 --pack-max "$bad" "$MNT/badp"
		grep -F "invalid pack max" "$WORK/bad.err" > /dev/null
		bad_pack 2 convert --pack-max "$bad" "$MNT/badp"
	done
	bad_pack 2 convert --pack-max
	for bad in 0 0.0 1.5 1.0001 abc "" -0.5 nan inf 0x0.5 " 0.5" 0.5x; do
		bad_pack 2 gc --threshold "$bad" "$MNT"
		grep -F "invalid threshold" "$WORK/bad.err" > /dev/null
	done
	bad_pack 2 gc --threshold
	bad_pack 2 gc --frob "$MNT"
	bad_pack 2 gc "$MNT" "$MNT"
	bad_pack 2 convert --frob "$MNT/badp"
	bad_pack 2 -x "$MNT/badp"
	bad_pack 2 --verbose=1 "$MNT/badp"
	# None of them touched the directory.
	assert_eq "$("$NACRE" getstripe --json "$MNT/badp" | jget 'd["pack"]')" "false" \
		"packing of the directory"
	assert_eq "$("$NACRE" getstripe --json "$MNT/badp/f" | jget 'd["packed"]')" "false" \
		"the file"
	# Paths outside nacre, or missing, are runtime errors.
	bad_pack 1 /etc
	grep -F "/etc: not on a nacre filesystem" "$WORK/bad.err" > /dev/null
	bad_pack 1 convert "$MNT/missing"
	grep -F "No such file or directory" "$WORK/bad.err" > /dev/null
	bad_pack 1 gc /etc
	grep -F "not on a nacre filesystem" "$WORK/bad.err" > /dev/null
	# A directory named like a subcommand is reached as ./NAME.
	mkdir "$MNT/badp/stats"
	echo data > "$MNT/badp/stats/f"
	(cd "$MNT/badp" && "$NACRE" pack ./stats) > "$WORK/stats.txt"
	grep -xE "packed: +1" "$WORK/stats.txt" > /dev/null
	(cd "$MNT/badp" && "$NACRE" pack stats .) > "$WORK/stats.txt"
	grep -E '^packs: +[0-9]+$' "$WORK/stats.txt" > /dev/null
	# Help.
	"$NACRE" help pack > "$WORK/help-pack.txt"
	cat "$WORK/help-pack.txt"
	grep -xF "usage: nacre pack [convert] [--pack-max SIZE] [--inline-max SIZE] [-v] [--json] PATH..." \
		"$WORK/help-pack.txt" > /dev/null
	grep -xF "       nacre pack gc [--threshold F] [--json] [PATH]" "$WORK/help-pack.txt" > /dev/null
	"$NACRE" pack --help | cmp - "$WORK/help-pack.txt"
	"$NACRE" pack convert --help | grep -F "./NAME" > /dev/null
	"$NACRE" pack convert --help | grep -F "setstripe --pack" > /dev/null
	"$NACRE" pack gc --help | grep -F "5-minute grace" > /dev/null
}
run_test 20 "bad arguments of pack convert and pack gc exit 2; paths outside nacre exit 1" test_20

finish
