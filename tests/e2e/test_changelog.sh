#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: the changelog.  Off by default; with nacre-mds
# --changelog every namespace change made through the mount is recorded,
# in order, and nacre changelog shows, pages and clears the records.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

cluster_up

# types [ARGS]: the record types nacre changelog prints, one line.
types()
{
	"$NACRE" changelog "$@" "$MNT" | awk '{ sub(/^[0-9][0-9]/, "", $2); printf "%s ", $2 }'
}

test_1()
{
	mkdir "$MNT/before"
	assert_eq "$("$NACRE" changelog "$MNT")" "" "records while the changelog is off"
	assert_eq "$("$NACRE" changelog --json "$MNT")" "[]" "JSON while the changelog is off"
}
run_test 1 "without --changelog nothing is recorded" test_1

test_2()
{
	printf 'changelog\n' > "$CDIR/mds.conf"
	"$CLUSTER" restart mds --dir "$CDIR"
	retry 60 stat "$MNT/" > /dev/null
	mkdir "$MNT/d"
	echo hello > "$MNT/d/f"
	ln "$MNT/d/f" "$MNT/d/hard"
	ln -s f "$MNT/d/soft"
	mv "$MNT/d/hard" "$MNT/moved"
	chmod 0600 "$MNT/d/f"
	truncate -s 3 "$MNT/d/f"
	setfattr -n user.tag -v x "$MNT/d/f"
	rm "$MNT/moved" "$MNT/d/soft"
	"$NACRE" setstripe -c 2 "$MNT/d"
	rmdir "$MNT/before"
	# Each change once, in the order made (the kernel may add attribute
	# changes of its own, so those are filtered out below).
	types | tr ' ' '\n' | grep -v '^SATTR$' | tr '\n' ' ' > "$CDIR/types"
	assert_eq "$(cat "$CDIR/types")" \
		"MKDIR CREAT HLINK SLINK RENME TRUNC XATTR UNLNK UNLNK LYOUT RMDIR " "record types"
	"$NACRE" changelog "$MNT" | grep -q "SATTR .* t=\[.*\]"
	# Names and the rename's source.
	"$NACRE" changelog "$MNT" | grep "RENME" | grep -q " p=\[.*\] moved sp=\[.*\] hard$"
	"$NACRE" changelog "$MNT" | grep "SLINK" | grep -q " soft$"
	"$NACRE" changelog "$MNT" | grep "XATTR" | grep -q " x=user.tag$"
}
run_test 2 "with --changelog the changes through the mount are recorded in order" test_2

test_3()
{
	local n first
	"$NACRE" changelog --json "$MNT" > "$CDIR/cl.json"
	n=$(jget 'len(d)' < "$CDIR/cl.json")
	[ "$n" -ge 11 ]
	assert_eq "$(jget 'd[0]["type"]' < "$CDIR/cl.json")" MKDIR "first record"
	assert_eq "$(jget 'd[0]["name"]' < "$CDIR/cl.json")" d "first record's name"
	assert_eq "$(jget 'all(d[i]["seq"] + 1 == d[i + 1]["seq"] for i in range(len(d) - 1))' \
		< "$CDIR/cl.json")" true "consecutive numbers"
	first=$(jget 'd[0]["seq"]' < "$CDIR/cl.json")
	# --since and --limit page through them.
	assert_eq "$("$NACRE" changelog --limit 2 "$MNT" | wc -l)" 2 "--limit 2"
	assert_eq "$("$NACRE" changelog --since "$first" "$MNT" | wc -l)" $((n - 1)) "--since"
	# Cleared records are gone; later ones stay.
	"$NACRE" changelog clear $((first + 1)) "$MNT"
	assert_eq "$("$NACRE" changelog "$MNT" | wc -l)" $((n - 2)) "after clear"
	assert_eq "$("$NACRE" changelog "$MNT" | head -n 1 | cut -d' ' -f1)" $((first + 2)) \
		"first record after clear"
}
run_test 3 "--json, --since, --limit and clear" test_3

test_4()
{
	local rc
	for bad in "--since x" "--since -1" "--limit 0" "--limit" "--bogus" "clear" "clear x" \
		"clear 1 $MNT extra"; do
		rc=0
		# shellcheck disable=SC2086
		"$NACRE" changelog $bad "$MNT" 2> "$CDIR/err" || rc=$?
		assert_eq "$rc" 2 "exit status of nacre changelog $bad"
		[ "$(wc -l < "$CDIR/err")" -ge 1 ]
	done
	rc=0
	"$NACRE" changelog /tmp 2> "$CDIR/err" || rc=$?
	assert_eq "$rc" 1 "a path outside nacre"
	"$NACRE" help changelog | grep -q -- "--since SEQ"
}
run_test 4 "bad arguments exit 2, paths outside nacre 1" test_4

finish
