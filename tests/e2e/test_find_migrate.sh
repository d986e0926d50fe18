#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: nacre find and nacre migrate on six OSTs.  A tree of
# plain, erasure-coded and packed files of various sizes, symbolic links
# and directories; find's predicates are checked against find(1) on the
# mount (name, type, size, mtime) and against getstripe (layouts);
# migrations keep every byte, drain an OST (its objects are destroyed),
# change the erasure code, and cope with a writer appending meanwhile.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

export OSTS=6
cluster_up
WORK=$(mktemp -d "$CDIR/e2e-fm.XXXXXX")
T=$MNT/t

# ---------------------------------------------------------------- the tree

make_tree() {
	mkdir -p "$T/plain" "$T/ec" "$T/dflt" "$T/small" "$T/sub/deeper"
	"$NACRE" setstripe -E none -c 2 "$T/plain" >/dev/null
	"$NACRE" setstripe -E 2+1 -c 3 "$T/ec" >/dev/null
	"$NACRE" setstripe --pack "$T/small" >/dev/null
	mkdata "$T/plain/p1" $((3 * 1024 * 1024)) 1
	mkdata "$T/plain/p2" $((100 * 1024)) 2
	: > "$T/plain/p3"
	mkdata "$T/ec/e1" $((5 * 1024 * 1024 + 77)) 3
	mkdata "$T/ec/e2" $((700 * 1024)) 4
	mkdata "$T/dflt/d1" $((2 * 1024 * 1024 + 123)) 5
	mkdata "$T/small/s1" 1000 6
	mkdata "$T/small/s2" $((20 * 1024)) 7
	mkdata "$T/small/s3" 5 8
	mkdata "$T/sub/deeper/x.txt" $((10 * 1024)) 9
	mkdata "$T/sub/y.txt" 1024 10
	ln -s ../plain/p1 "$T/sub/l1"
	ln -s /nowhere "$T/l2"
	touch -d '10 days ago' "$T/plain/p2"
	touch -d '3 days ago' "$T/ec/e2" "$T/sub/y.txt"
	touch -d 'tomorrow' "$T/small/s3"
	# The packed files are committed within about a second of their close.
	wait_until 20 packed_count_is 3
	(cd "$MNT" && find t -type f -exec sha256sum {} + | sort -k2) > "$WORK/sums"
}

packed_count_is() {
	[ "$("$NACRE" find "$T/small" -pack | wc -l)" = "$1" ]
}

# The files' bytes as the OSTs hold them now, checked against the sums.
check_sums() {
	drop_caches || true
	(cd "$MNT" && sha256sum --quiet -c "$WORK/sums") ||
		_e2e_assert_failed "file contents changed"
}

# same_list NACRE_FIND_ARGS -- FIND_ARGS: the same paths, in any order.
same_list() {
	local -a a=() b=()

	while [ "$1" != "--" ]; do
		a+=("$1")
		shift
	done
	shift
	b=("$@")
	"$NACRE" find "$T" "${a[@]}" | sort > "$WORK/nacre.out"
	find "$T" "${b[@]}" | sort > "$WORK/find.out"
	if ! cmp -s "$WORK/nacre.out" "$WORK/find.out"; then
		diff "$WORK/nacre.out" "$WORK/find.out" >&2 || true
		_e2e_assert_failed "nacre find ${a[*]} differs from find ${b[*]}"
	fi
	[ -s "$WORK/find.out" ] || [ "${EMPTY_OK:-0}" = 1 ] ||
		_e2e_assert_failed "find ${b[*]} found nothing: a weak check"
}

# objects_on I: the objects of their own (not a pack's) that the files
# under $T keep on OST I, as "PATH" lines of the object store.
objects_on() {
	local f json

	while read -r f; do
		json=$("$NACRE" getstripe --json "$f")
		[ "$(jget 'd.get("packed") is True' <<< "$json")" = false ] || continue
		jget '" ".join(str(s["ost"]) for s in d["shards"]) + " " + d["objid"]' <<< "$json" |
		while read -r -a w; do
			local n=$((${#w[@]} - 1)) i
			for ((i = 0; i < n; i++)); do
				[ "${w[$i]}" != "$1" ] || ost_object_path "$1" "${w[$n]}"
			done
		done
	done < <(find "$T" -type f)
}

# expect_layout PYTHON_TEST NACRE_FIND_ARGS...: nacre find lists exactly
# the regular files whose getstripe --json layout d passes the test.
expect_layout() {
	local test=$1
	shift

	find "$T" -type f -print0 | xargs -0 "$NACRE" getstripe --json > "$WORK/layouts"
	python3 -c '
import json, sys
for d in json.load(open(sys.argv[1])):
    if eval(sys.argv[2], {"d": d}):
        print(d["path"])
' "$WORK/layouts" "$test" | sort > "$WORK/want"
	"$NACRE" find "$T" "$@" | sort > "$WORK/got"
	if ! cmp -s "$WORK/got" "$WORK/want"; then
		diff "$WORK/got" "$WORK/want" >&2 || true
		_e2e_assert_failed "nacre find $* is not the files where $test"
	fi
}

make_tree

# ---------------------------------------------------------------- find

test_1()
{
	same_list -- 
	same_list -type f -- -type f
	same_list -type d -- -type d
	same_list -type l -- -type l
	same_list -name '*.txt' -- -name '*.txt'
	same_list -name 'p?' -type f -- -name 'p?' -type f
	same_list -size +1M -- -size +1M
	same_list -size -100k -type f -- -size -100k -type f
	same_list -size 100k -- -size 100k
	same_list -size +5000 -type f -- -size +5000c -type f
	same_list -size 1000c -- -size 1000c
	same_list -size -1M -type f -- -size -1M -type f
	same_list -mtime +5 -- -mtime +5
	same_list -mtime -1 -type f -- -mtime -1 -type f
	same_list -mtime 3 -- -mtime 3
	same_list -type f -size +1M -name 'e*' -- -type f -size +1M -name 'e*'
	# A path given with a trailing slash prints as find(1) prints it.
	"$NACRE" find "$T/sub/" -type f | sort > "$WORK/a"
	find "$T/sub/" -type f | sort > "$WORK/b"
	assert_file_eq "$WORK/a" "$WORK/b"
	# -print0.
	"$NACRE" find "$T/sub" -type f -print0 | tr '\0' '\n' | sort > "$WORK/a"
	find "$T/sub" -type f | sort > "$WORK/b"
	assert_file_eq "$WORK/a" "$WORK/b"
}
run_test 1 "find: -name, -type, -size, -mtime and combinations match find(1)" test_1

test_2()
{
	expect_layout 'd.get("packed") is True' -pack
	expect_layout 'd["stripe_count"] == 3' -stripe-count 3
	expect_layout 'd["stripe_count"] > 3' -stripe-count +3
	expect_layout 'd["stripe_count"] < 3' -stripe-count -3
	expect_layout 'any(s["ost"] == 3 for s in d["shards"])' -ost 3
	expect_layout 'any(s["ost"] in (0, 5) for s in d["shards"])' -ost 0 -ost 5
	expect_layout 'd["stripe_count"] == 3 and any(s["ost"] == 1 for s in d["shards"])' \
		-stripe-count 3 -ost 1
	assert_eq "$("$NACRE" find "$T" -pack | sort | tr '\n' ' ')" \
		"$T/small/s1 $T/small/s2 $T/small/s3 " "the packed files"
	assert_eq "$("$NACRE" find "$T" -stripe-count 2 -type f | sort | tr '\n' ' ')" \
		"$T/plain/p1 $T/plain/p2 $T/plain/p3 " "the files striped over 2"
}
run_test 2 "find: -stripe-count, -ost, -pack match the layouts" test_2

test_3()
{
	local json

	json=$("$NACRE" find --json "$T")
	python3 -m json.tool <<< "$json" > /dev/null
	assert_eq "$(jget 'len(d)' <<< "$json")" "$(find "$T" | wc -l)" "entries"
	assert_eq "$(jget '[e for e in d if e["path"].endswith("/ec/e1")][0]["k"]' <<< "$json")" 2 "k"
	assert_eq "$(jget '[e for e in d if e["path"].endswith("/ec/e1")][0]["m"]' <<< "$json")" 1 "m"
	assert_eq "$(jget '[e for e in d if e["path"].endswith("/ec/e1")][0]["stripe_count"]' <<< "$json")" 3 "count"
	assert_eq "$(jget '[e for e in d if e["path"].endswith("/ec/e1")][0]["size"]' <<< "$json")" \
		$((5 * 1024 * 1024 + 77)) "size"
	assert_eq "$(jget 'len([e for e in d if e["path"].endswith("/ec/e1")][0]["osts"])' <<< "$json")" 3 "osts"
	assert_eq "$(jget '[e for e in d if e["path"].endswith("/small/s1")][0]["packed"]' <<< "$json")" true "packed"
	assert_eq "$(jget '[e for e in d if e["path"].endswith("/sub/l1")][0]["type"]' <<< "$json")" l "type"
	assert_eq "$(jget '[e for e in d if e["path"].endswith("/sub")][0]["type"]' <<< "$json")" d "type"
	# An empty result is an empty array.
	assert_eq "$("$NACRE" find --json "$T" -name nothing-matches)" "[]" "empty result"
}
run_test 3 "find --json is a parsable array of {path, type, size, ...}" test_3

test_4()
{
	local rc=0

	assert_errno "unknown option '-bogus'" "$NACRE" find "$T" -bogus
	"$NACRE" find "$T" -bogus 2>/dev/null || rc=$?
	assert_eq "$rc" 2 "exit status of an unknown option"
	assert_errno "invalid type 'x'" "$NACRE" find "$T" -type x
	assert_errno "invalid size '+1Q'" "$NACRE" find "$T" -size +1Q
	assert_errno "invalid age" "$NACRE" find "$T" -mtime abc
	assert_errno "invalid OST index '-2'" "$NACRE" find "$T" -ost -2
	assert_errno "no PATH" "$NACRE" find -type f
	assert_errno "needs an argument" "$NACRE" find "$T" -name
	rc=0
	"$NACRE" find /tmp -type f 2>"$WORK/err" >/dev/null || rc=$?
	assert_eq "$rc" 1 "exit status for a path outside nacre"
	grep -q "not on a nacre filesystem" "$WORK/err"
	# A missing PATH among good ones: reported, the rest still listed.
	rc=0
	"$NACRE" find "$T/missing" "$T/sub" -name y.txt > "$WORK/out" 2>"$WORK/err" || rc=$?
	assert_eq "$rc" 1 "exit status with a missing PATH"
	assert_eq "$(cat "$WORK/out")" "$T/sub/y.txt" "the rest is still listed"
	"$NACRE" find --help | grep -q -- "-stripe-count"
}
run_test 4 "find: bad arguments and paths give clear errors" test_4

# ---------------------------------------------------------------- migrate

test_5()
{
	local json f=$T/dflt/d1 ost p

	json=$("$NACRE" getstripe --json "$f")
	assert_eq "$(jget 'd["k"]' <<< "$json")" 4 "k before"
	"$NACRE" migrate -E 2+1 -c 3 "$f"
	json=$("$NACRE" getstripe --json "$f")
	assert_eq "$(jget 'd["k"]' <<< "$json")" 2 "k after"
	assert_eq "$(jget 'd["m"]' <<< "$json")" 1 "m after"
	assert_eq "$(jget 'd["stripe_count"]' <<< "$json")" 3 "stripe count after"
	# New objects, named apart from the file's FID, on the OSTs listed.
	[ "$(jget 'd["objid"] != d["fid"]' <<< "$json")" = true ] ||
		_e2e_assert_failed "the objects of a migrated file keep the file's FID"
	for ost in $(jget '" ".join(str(s["ost"]) for s in d["shards"])' <<< "$json"); do
		p=$(ost_object_path "$ost" "$(jget 'd["objid"]' <<< "$json")")
		[ -e "$p" ] || _e2e_assert_failed "no object $p"
	done
	check_sums
	# And back to plain striping over one OST, through --json.
	json=$("$NACRE" migrate --json -E none -c 1 "$f")
	assert_eq "$(jget 'd["migrated"]' <<< "$json")" 1 "migrated"
	assert_eq "$(jget 'd["files"][0]["result"]' <<< "$json")" migrated "result"
	json=$("$NACRE" getstripe --json "$f")
	assert_eq "$(jget 'd["m"]' <<< "$json")" 0 "m after -E none"
	assert_eq "$(jget 'd["stripe_count"]' <<< "$json")" 1 "count after -E none"
	check_sums
}
run_test 5 "migrate -E 2+1 -c 3 FILE changes the layout and keeps the data" test_5

test_6()
{
	local before after json objs=() p

	# The objects on OST 3 of the files that have some (an empty file's
	# objects may not exist yet).
	while read -r p; do
		[ ! -e "$p" ] || objs+=("$p")
	done < <(objects_on 3)
	[ ${#objs[@]} -gt 0 ] || _e2e_assert_failed "no object on OST 3 to drain"
	before=$(find "$CDIR/ost/3/O" -type f | wc -l)
	"$NACRE" find "$T" -ost 3 > "$WORK/on3"
	[ -s "$WORK/on3" ]
	json=$("$NACRE" migrate --json --grace 0 --ost-exclude 3 "$T")
	python3 -m json.tool <<< "$json" > /dev/null
	assert_eq "$(jget 'd["failed"] + d["busy"]' <<< "$json")" 0 "failures"
	assert_eq "$(jget 'd["migrated"]' <<< "$json")" "$(wc -l < "$WORK/on3")" "files moved"
	assert_eq "$("$NACRE" find "$T" -ost 3)" "" "files left on OST 3"
	check_sums
	# The old objects go through the MDS's destroy queue.
	wait_gone 30 "${objs[@]}"
	after=$(find "$CDIR/ost/3/O" -type f | wc -l)
	[ "$after" -lt "$before" ] || _e2e_assert_failed "OST 3 holds $after objects, $before before"
	# A second drain has nothing left to move.
	json=$("$NACRE" migrate --json --grace 0 --ost-exclude 3 "$T")
	assert_eq "$(jget 'd["migrated"]' <<< "$json")" 0 "files moved again"
	# Packed files moved out of their pack into objects of their own.
	assert_eq "$("$NACRE" find "$T/small" -pack -ost 3)" "" "packed files on OST 3"
}
run_test 6 "migrate --ost-exclude 3 DIR drains OST 3, keeps every byte, destroys its objects" test_6

test_7()
{
	local f=$MNT/appended i rc=0 out

	mkdata "$WORK/base" $((8 * 1024 * 1024)) 11
	cp "$WORK/base" "$f"
	cp "$WORK/base" "$WORK/expect"
	for i in $(seq 1 150); do
		printf 'append %04d ........................................\n' "$i" >> "$WORK/expect"
	done
	(
		for i in $(seq 1 150); do
			printf 'append %04d ........................................\n' "$i" >> "$f"
			sleep 0.02
		done
	) &
	local writer=$!
	out=$("$NACRE" migrate -v -E none -c 1 "$f" 2>&1) || rc=$?
	wait "$writer"
	echo "$out"
	if [ $rc -eq 0 ]; then
		grep -q "migrated" <<< "$out"
	else
		assert_eq "$rc" 1 "exit status of a busy migration"
		grep -q "busy" <<< "$out" || _e2e_assert_failed "a failure that is not busy: $out"
	fi
	drop_caches || true
	assert_file_eq "$WORK/expect" "$f"
	# Once the writer is gone the migration goes through.
	"$NACRE" migrate -E none -c 1 "$f"
	assert_eq "$("$NACRE" getstripe --json "$f" | jget 'd["stripe_count"]')" 1 "count"
	drop_caches || true
	assert_file_eq "$WORK/expect" "$f"
}
run_test 7 "migrate while another process appends: all data kept, or busy" test_7

test_8()
{
	local rc=0

	assert_errno "unknown option '--bogus'" "$NACRE" migrate --bogus "$T"
	"$NACRE" migrate --bogus "$T" 2>/dev/null || rc=$?
	assert_eq "$rc" 2 "exit status of an unknown option"
	assert_errno "invalid erasure code '3'" "$NACRE" migrate -E 3 "$T/plain/p1"
	assert_errno "invalid erasure code '0+1'" "$NACRE" migrate -E 0+1 "$T/plain/p1"
	assert_errno "invalid OST index 'x'" "$NACRE" migrate --ost-exclude x "$T"
	assert_errno "invalid OST index '-1'" "$NACRE" migrate --ost-exclude 1,-1 "$T"
	assert_errno "cannot hold 4+2" "$NACRE" migrate -E 4+2 -c 3 "$T/plain/p1"
	assert_errno "no PATH" "$NACRE" migrate -E 2+1
	rc=0
	"$NACRE" migrate -E 2+1 2>/dev/null || rc=$?
	assert_eq "$rc" 2 "exit status without PATH"
	rc=0
	"$NACRE" migrate --ost-exclude 77 "$T" 2>"$WORK/err" || rc=$?
	assert_eq "$rc" 1 "exit status for an unknown OST"
	grep -q "no OST 77" "$WORK/err"
	rc=0
	"$NACRE" migrate -E 2+1 /tmp 2>"$WORK/err" || rc=$?
	assert_eq "$rc" 1 "exit status for a path outside nacre"
	grep -q "not on a nacre filesystem" "$WORK/err"
	"$NACRE" migrate --help | grep -q -- "--ost-exclude"
	# Nothing was changed by the failures.
	check_sums
}
run_test 8 "migrate: bad arguments and paths give clear errors, change nothing" test_8

test_9()
{
	local f=$MNT/stale json

	# Written while OSS 3 is down: a 4+2 file with a stale shard there.
	oss_stop 3
	mkdata "$WORK/stale" $((3 * 1024 * 1024 + 5)) 12
	cp "$WORK/stale" "$f"
	json=$("$NACRE" getstripe --json "$f")
	echo "$json"
	[ "$(jget 'any(s["ost"] == 3 and s["state"] == "stale" for s in d["shards"])' <<< "$json")" = true ] ||
		{ oss_start 3; _e2e_assert_failed "no stale shard on OST 3"; }
	# -ost matches a stale shard too; the drain reads around it (the
	# shard is decoded from the others) while OSS 3 is still down.
	assert_eq "$("$NACRE" find "$f" -ost 3)" "$f" "find -ost 3 with a stale shard there"
	"$NACRE" migrate --ost-exclude 3 "$f" || { oss_start 3; _e2e_assert_failed "migrate failed"; }
	oss_start 3
	assert_eq "$("$NACRE" find "$f" -ost 3)" "" "left on OST 3"
	json=$("$NACRE" getstripe --json "$f")
	assert_eq "$(jget 'all(s["state"] == "ok" for s in d["shards"])' <<< "$json")" true "all shards ok"
	drop_caches || true
	assert_file_eq "$WORK/stale" "$f"
}
run_test 9 "migrate --ost-exclude moves a file whose shard on the OST is stale, the OST down" test_9

finish
