#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: small-file packing through the mount, on six OSTs
# (packs are erasure-coded 4+2).  A second mount with -o pack (a client
# that packs every small file it creates) writes; the cluster's own mount
# (another client) reads, so every check sees what was committed to the
# MDS and the OSTs, not what the writer holds in memory.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

export OSTS=6
cluster_up
WORK=$(mktemp -d "$CDIR/e2e-pack.XXXXXX")
PMNT=$CDIR/pmnt
PMNT_PIDFILE=$CDIR/pmnt.pid
mkdir -p "$PMNT"

# pack_mount [OPTS]: mounts the packing client on $PMNT (with the mount
# options OPTS too), in the foreground of a background job so that its
# pid is ours to kill.  The pid goes to a file, not a variable: tests run
# in subshells, and a mount started in one outlives it.
pack_mount() {
	"$MOUNT_NACRE" -f "tcp://127.0.0.1:$PORT:/$FSNAME" "$PMNT" \
		-o "pack,log=$CDIR/pmnt.log${1:+,$1}" &
	echo $! > "$PMNT_PIDFILE"
	wait_until 10 mountpoint -q "$PMNT"
}

# pack_gone: waits until the packing client's process has exited (it may
# be another shell's child, which `wait` cannot wait for).
pack_gone() {
	local pid

	pid=$(cat "$PMNT_PIDFILE" 2>/dev/null) || return 0
	wait "$pid" 2>/dev/null || true
	if ! wait_until 30 eval '! kill -0 "$pid" 2>/dev/null'; then
		echo "the packing client (pid $pid) did not exit" >&2
		return 1
	fi
	rm -f "$PMNT_PIDFILE"
}

pack_umount() {
	if mountpoint -q "$PMNT"; then
		fusermount3 -u "$PMNT" || umount -l "$PMNT"
	fi
	pack_gone
}

# pack_kill: the packing client dies at once (kill -9), as in a crash.
pack_kill() {
	kill -9 "$(cat "$PMNT_PIDFILE")"
	pack_gone
	umount -l "$PMNT" 2>/dev/null || fusermount3 -u "$PMNT" 2>/dev/null || true
}
# The stopped OSS first: the packing mount may wait on it to unmount.
trap '_e2e_rc=$?; _e2e_continue_stopped; pack_umount; (exit $_e2e_rc); _e2e_cleanup' EXIT

# commit: what the packing client holds reaches the MDS (a listing from
# it commits first).
commit() {
	ls "$PMNT/${1:-}" >/dev/null
}

# make_tree DIR N: N files of sizes from 0 to about 300 KiB under DIR/cI/
# (one Python run for all of them).
make_tree() {
	python3 - "$1" "$2" <<'PYEOF'
import os, random, sys
top, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(top, "c%d" % (i % 4))
    os.makedirs(d, exist_ok=True)
    size = (i * 7919) % (300 * 1024) if i % 17 else i % 5
    with open(os.path.join(d, "f%d" % i), "wb") as f:
        f.write(random.Random(i).randbytes(size))
PYEOF
}

# same_tree A B: the same names and bytes.
same_tree() {
	(cd "$1" && find . -type f | sort) > "$WORK/names.a"
	(cd "$2" && find . -type f | sort) > "$WORK/names.b"
	assert_file_eq "$WORK/names.a" "$WORK/names.b"
	while read -r f; do
		cmp -- "$1/$f" "$2/$f" || _e2e_assert_failed "$f differs"
	done < "$WORK/names.a"
}

# objects_of PATH: how many objects of its own PATH has on the OSTs.
objects_of() {
	local fid n=0 i

	fid=$(getfattr --only-values -n nacre.fid "$1")
	for i in $(seq 0 $((NOST - 1))); do
		[ ! -e "$(ost_object_path "$i" "$fid")" ] || n=$((n + 1))
	done
	echo "$n"
}

pack_mount

test_1()
{
	make_tree "$WORK/src1" 300
	cp -r "$WORK/src1" "$PMNT/t1"
	commit t1
	drop_caches || true
	same_tree "$WORK/src1" "$MNT/t1"
	# Packed files have no objects of their own.
	assert_eq "$(objects_of "$MNT/t1/c1/f1")" "0" "objects of a packed file"
	assert_eq "$(objects_of "$MNT/t1/c2/f2")" "0" "objects of a packed file"
}
run_test 1 "a tree of small files written packed reads back through another client" test_1

test_2()
{
	# The writer sees its own files before they are committed.
	mkdata "$WORK/own" 5000 2
	cp "$WORK/own" "$PMNT/own"
	cmp "$WORK/own" "$PMNT/own"
	assert_eq "$(stat -c %s "$PMNT/own")" "5000" "size seen by the writer"
	# Within a second of the close the other client sees it too.
	wait_until 5 test -e "$MNT/own"
	cmp "$WORK/own" "$MNT/own"
	rm "$PMNT/own"
}
run_test 2 "the writer sees its files at once, others after the commit" test_2

test_3()
{
	mkdir "$PMNT/t3"
	mkdata "$WORK/a" 10000 3
	cp "$WORK/a" "$PMNT/t3/a"
	commit t3
	# Overwrite: a new extent, still packed.
	mkdata "$WORK/a2" 7000 33
	cp "$WORK/a2" "$PMNT/t3/a"
	commit t3
	cmp "$WORK/a2" "$MNT/t3/a"
	assert_eq "$(objects_of "$MNT/t3/a")" "0" "an overwritten file stays packed"
	# Append past pack_max (1 MiB): the file gets objects of its own.
	mkdata "$WORK/big" $((1500 * 1024)) 34
	cat "$WORK/big" >> "$PMNT/t3/a"
	cat "$WORK/a2" "$WORK/big" > "$WORK/a3"
	commit t3
	cmp "$WORK/a3" "$MNT/t3/a"
	[ "$(objects_of "$MNT/t3/a")" -gt 0 ] || _e2e_assert_failed "a grown file is unpacked"
	# Truncate a packed file, shorter and longer.
	cp "$WORK/a" "$PMNT/t3/b"
	commit t3
	truncate -s 100 "$PMNT/t3/b"
	commit t3
	head -c 100 "$WORK/a" > "$WORK/b100"
	cmp "$WORK/b100" "$MNT/t3/b"
	truncate -s 300 "$MNT/t3/b"
	ls "$MNT/t3" >/dev/null # that client packs its rewrite too
	cp "$WORK/b100" "$WORK/b300"
	# (The other client changed it: the writer sees that at its next open.)
	truncate -s 300 "$WORK/b300"
	cmp "$WORK/b300" "$PMNT/t3/b"
	cmp "$WORK/b300" "$MNT/t3/b"
	# Rename and hard link keep the bytes; unlink of one name keeps the other.
	mv "$PMNT/t3/b" "$PMNT/t3/c"
	ln "$PMNT/t3/c" "$PMNT/t3/d"
	rm "$PMNT/t3/c"
	commit t3
	cmp "$WORK/b300" "$MNT/t3/d"
	assert_eq "$(stat -c %h "$MNT/t3/d")" "1" "link count"
	rm -r "$PMNT/t3"
	# (A listing asks the MDS; a stat may use the kernel's cache.)
	if ls "$MNT" | grep -qx t3; then
		_e2e_assert_failed "t3 still listed"
	fi
}
run_test 3 "overwrite, growth past pack_max, truncate, rename, link, unlink" test_3

test_4()
{
	# Two OSTs down: every packed file reads back through decoding.
	oss_stop 1 4
	drop_caches || true
	set +e
	(set -e; same_tree "$WORK/src1" "$MNT/t1")
	rc=$?
	set -e
	oss_start 1 4
	assert_eq "$rc" "0" "degraded reads of packed files"
}
run_test 4 "packed files read with two OSTs down" test_4

test_5()
{
	# What was fsynced survives a crash of the client; what was not may be
	# lost, but nothing that shows up is damaged.
	mkdir "$PMNT/t5"
	commit t5
	for i in 1 2 3; do
		mkdata "$WORK/s$i" $((i * 20000)) "5$i"
		dd if="$WORK/s$i" of="$PMNT/t5/synced$i" bs=64k conv=fsync status=none
	done
	for i in 1 2 3; do
		mkdata "$WORK/u$i" $((i * 1000)) "6$i"
		cp "$WORK/u$i" "$PMNT/t5/unsynced$i"
	done
	pack_kill
	for i in 1 2 3; do
		cmp "$WORK/s$i" "$MNT/t5/synced$i"
		if [ -e "$MNT/t5/unsynced$i" ]; then
			cmp "$WORK/u$i" "$MNT/t5/unsynced$i"
		fi
	done
	pack_mount
	rm -r "$PMNT/t5"
}
run_test 5 "a client killed after fsync keeps what it synced" test_5

# restart_all: the MDS, then every OSS, each stopped and started again.
restart_all() {
	local i

	"$CLUSTER" restart mds --dir "$CDIR" >/dev/null
	for i in $(seq 0 $((NOST - 1))); do
		"$CLUSTER" restart oss "$i" --dir "$CDIR" >/dev/null
	done
}

test_6()
{
	# Restart every daemon: the packs and their files are intact.
	pack_umount
	restart_all
	drop_caches || true
	retry 30 same_tree "$WORK/src1" "$MNT/t1"
	pack_mount
	same_tree "$WORK/src1" "$PMNT/t1"
}
run_test 6 "packs survive a restart of every daemon" test_6


# packs_of PATH...: the pack id of each packed PATH, one per line (0: not
# packed).
packs_of() {
	local f

	for f in "$@"; do
		"$NACRE" getstripe --json "$f" | jget 'd.get("pack_id", 0) if d.get("packed") else 0'
	done
}

test_7()
{
	# The MDS compacts sparse sealed packs by itself (nacre-mds
	# --pack-gc-interval), with every file's bytes intact.
	printf 'pack-gc-interval = 1\npack-gc-threshold = 0.6\n' > "$CDIR/mds.conf"
	"$CLUSTER" restart mds --dir "$CDIR" >/dev/null
	make_tree "$WORK/src7" 40
	cp -r "$WORK/src7" "$PMNT/t7"
	# The packing client goes away: its pack is sealed.
	pack_umount
	local -a keep=() gone=()
	local f old
	while read -r f; do
		case "$f" in
		*/f*[05]) keep+=("$MNT/t7/$f") ;;
		*) gone+=("$MNT/t7/$f") ;;
		esac
	done < <(cd "$WORK/src7" && find . -type f -size +0 | sed 's|^\./||')
	[ ${#keep[@]} -ge 4 ] || _e2e_assert_failed "too few files kept"
	old=$(packs_of "${keep[@]}" | sort -u)
	assert_eq "$(echo "$old" | grep -c '^0$' || true)" "0" "files of t7 not packed"
	rm -f -- "${gone[@]}"
	for f in "${gone[@]}"; do
		rm -f -- "$WORK/src7/${f#"$MNT/t7/"}"
	done
	# Within a few passes every kept file lives in another pack.
	moved_all() {
		local p
		for p in $(packs_of "${keep[@]}"); do
			[ "$p" != 0 ] || return 1
			! echo "$old" | grep -qx "$p" || return 1
		done
	}
	wait_until 60 moved_all
	grep -q "pack gc: .* files\? moved" "$CDIR/log/mds.log"
	drop_caches || true
	same_tree "$WORK/src7" "$MNT/t7"
	# What earlier tests left in packs was compacted too, and reads back.
	[ ! -d "$WORK/src1" ] || same_tree "$WORK/src1" "$MNT/t1"
	rm -f "$CDIR/mds.conf"
	"$CLUSTER" restart mds --dir "$CDIR" >/dev/null
	pack_mount
}
run_test 7 "the MDS compacts sparse packs in the background" test_7

# status_of CMD...: runs CMD (its output to stderr) and prints its exit
# status, which set -e lets through.
status_of() {
	local rc=0

	"$@" >&2 || rc=$?
	echo "$rc"
}

# fsync_copy SECS SRC DST: SRC copied to DST with an fsync at the end, given
# SECS seconds (124 when it takes longer).
fsync_copy() {
	timeout "$1" dd if="$2" of="$3" bs=64k conv=fsync status=none
}

# plain_pack_setup N: the directory tN of the packing client, packed
# plainly (RAID-0) over every OST, with 3 files committed in it; and under
# $WORK/srcN the files the test then writes there (f1..f30, synced).
plain_pack_setup() {
	local n=$1 i

	mkdir "$PMNT/t$n"
	"$NACRE" setstripe -E none -c "$NOST" "$PMNT/t$n"
	mkdir -p "$WORK/src$n"
	for i in 1 2 3; do
		mkdata "$WORK/src$n/pre$i" 100000 "${n}0$i"
	done
	cp "$WORK/src$n"/pre* "$PMNT/t$n/"
	commit "t$n"
	for i in $(seq 1 30); do
		mkdata "$WORK/src$n/f$i" $((40000 + i * 1000)) "${n}1$i"
	done
	mkdata "$WORK/src$n/synced" 70000 "${n}20"
}

test_8()
{
	# An OSS dies while the packing client fills a plain (RAID-0) pack
	# over every OST.  The pack is abandoned and its buffered files go to
	# a new pack on the OSTs left: nothing waits for the dead OST, and the
	# mount answers meanwhile.  (Before, each flush retried the dead OST
	# for a minute while holding what every lookup of the mount needs.)
	local i rc
	plain_pack_setup 8
	"$CLUSTER" kill oss 2 --dir "$CDIR" >/dev/null
	wait_until 10 eval '[ "$(ost_state 2)" = down ]'
	# fsync first: its flush meets the dead OST, and still returns with
	# the file committed (the other client sees it without a commit).
	rc=$(status_of fsync_copy 60 "$WORK/src8/synced" "$PMNT/t8/synced")
	assert_eq "$rc" "0" "fsync of a packed file with an OSS dead"
	cmp "$WORK/src8/synced" "$MNT/t8/synced"
	rc=$(status_of timeout 60 cp "$WORK/src8"/f* "$PMNT/t8/")
	assert_eq "$rc" "0" "writing packed files with an OSS dead"
	timeout 10 ls "$PMNT/t8" >/dev/null
	grep -q "pack [0-9]* could not be written .*: its files go to a new pack" "$CDIR/pmnt.log"
	# The other client reads the new files while the OSS is still down.
	drop_caches || true
	for i in $(seq 1 30); do
		cmp "$WORK/src8/f$i" "$MNT/t8/f$i"
	done
	oss_start 2
	drop_caches || true
	same_tree "$WORK/src8" "$MNT/t8"
}
run_test 8 "an OSS that dies under a filling pack: its files go to a new pack" test_8

# uses_ost PATH I: the (packed) file PATH has an object on OST I.
uses_ost() {
	"$NACRE" getstripe "$1" | awk -v i="$2" '$1 == i { f = 1 } END { exit !f }'
}

test_9()
{
	# An OSS that hangs (stopped: its connections stay open and nothing
	# answers) under a filling plain pack.  The pack's write times out
	# once (5 s here); the client then leaves that OST out of its next
	# packs, so the fsync returns with the file committed elsewhere.  The
	# MDS, whose poll of the OST times out, lists it down and places
	# nothing on it until it answers again; then the shards it missed
	# meanwhile are rebuilt without waiting for the periodic sweep.
	local i rc
	pack_umount
	pack_mount timeout=5000
	plain_pack_setup 9
	STOPPED_PID=$(cluster_pid oss2)
	kill -STOP "$STOPPED_PID"
	rc=$(status_of fsync_copy 120 "$WORK/src9/synced" "$PMNT/t9/synced")
	assert_eq "$rc" "0" "fsync of a packed file with an OSS hung"
	! uses_ost "$MNT/t9/synced" 2 || _e2e_assert_failed "synced is on the hung OST"
	cmp "$WORK/src9/synced" "$MNT/t9/synced"
	rc=$(status_of timeout 120 cp "$WORK/src9"/f* "$PMNT/t9/")
	assert_eq "$rc" "0" "writing packed files with an OSS hung"
	timeout 60 ls "$PMNT/t9" >/dev/null
	for i in $(seq 1 30); do
		! uses_ost "$MNT/t9/f$i" 2 || _e2e_assert_failed "f$i is on the hung OST"
		cmp "$WORK/src9/f$i" "$MNT/t9/f$i"
	done
	grep -q "pack [0-9]* could not be written .*: its files go to a new pack" "$CDIR/pmnt.log"
	wait_until 90 eval '[ "$(ost_state 2)" = down ]'
	grep -q "OST 2 does not answer" "$CDIR/log/mds.log"
	# A large (erasure-coded) file written now has a stale shard on OST 2.
	mkdir "$MNT/t9ec"
	mkdata "$WORK/big9" 3000000 930
	cp "$WORK/big9" "$MNT/t9ec/big"
	assert_eq "$(stale_count "$MNT/t9ec")" "1" "stale shards while OST 2 hangs"
	kill -CONT "$STOPPED_PID"
	STOPPED_PID=""
	wait_until 30 eval '[ "$(ost_state 2)" = up ]'
	grep -q "OST 2 answers again" "$CDIR/log/mds.log"
	wait_until 60 no_stale "$MNT/t9ec"
	drop_caches || true
	cmp "$WORK/big9" "$MNT/t9ec/big"
	pack_umount
	pack_mount
	drop_caches || true
	same_tree "$WORK/src9" "$MNT/t9"
}
run_test 9 "an OSS that hangs under a filling pack: the client and the MDS leave it out" test_9

test_10()
{
	# A pack directory confined to one OST (a pool of one) whose OSS
	# restarts.  Its flushes fail while the OSS is down, at once; once it
	# is back the next pack goes to it again, although the client's last
	# pack failed there: with no other OST in the pool the MDS ignores
	# the client's avoid list, and the client writes the pack it gets.
	local rc
	"$NACRE" pool create solo "$MNT" >/dev/null
	"$NACRE" pool add solo 3 "$MNT" >/dev/null
	mkdir "$PMNT/t10"
	"$NACRE" setstripe -p solo "$PMNT/t10"
	mkdata "$WORK/t10a" 50000 1001
	mkdata "$WORK/t10b" 60000 1002
	cp "$WORK/t10a" "$PMNT/t10/a"
	commit t10
	uses_ost "$MNT/t10/a" 3 || _e2e_assert_failed "a is not on OST 3"
	"$CLUSTER" kill oss 3 --dir "$CDIR" >/dev/null
	wait_until 10 eval '[ "$(ost_state 3)" = down ]'
	rc=$(status_of fsync_copy 60 "$WORK/t10b" "$PMNT/t10/down")
	[ "$rc" != 0 ] || _e2e_assert_failed "an fsync with the pool's only OST down succeeded"
	[ "$rc" != 124 ] || _e2e_assert_failed "an fsync with the pool's only OST down hung"
	oss_start 3
	rc=$(status_of fsync_copy 60 "$WORK/t10b" "$PMNT/t10/b")
	assert_eq "$rc" "0" "fsync once the pool's OST is back"
	uses_ost "$MNT/t10/b" 3 || _e2e_assert_failed "b is not on OST 3"
	drop_caches || true
	cmp "$WORK/t10a" "$MNT/t10/a"
	cmp "$WORK/t10b" "$MNT/t10/b"
}
run_test 10 "a pool of one OST restarts under packs: packs go to it again" test_10

# kinds_of PATH...: for each PATH, "inline", "packed" or "plain", on one
# line.
kinds_of() {
	"$NACRE" getstripe --json "$@" |
		jget '" ".join("inline" if x["inline"] else "packed" if x["packed"] else "plain"
			for x in (d if isinstance(d, list) else [d]))'
}

# reads_within SECS REF DIR NAME...: each DIR/NAME reads back as REF/NAME,
# every read given SECS seconds (status 1 at the first that fails).
reads_within() {
	local secs=$1 ref=$2 dir=$3 f
	shift 3

	for f in "$@"; do
		timeout "$secs" cmp -- "$ref/$f" "$dir/$f" || return 1
	done
}

test_11()
{
	# Inline files: below a directory with --inline-max, a file of at most
	# that many bytes at its commit keeps them in its MDT record, with no
	# objects and no OST involved.  $WORK/e11 holds what $MNT/t11 must.
	local e=$WORK/e11 dir sz rc i
	local -a inl=(f0 f1 f100 f4096 tr ren sub/a)
	mkdir -p "$e/sub" "$e/off" "$PMNT/t11"
	"$NACRE" setstripe --pack --inline-max 4k "$PMNT/t11"
	dir=$("$NACRE" getstripe "$MNT/t11")
	assert_eq "$(grep '^pack:' <<<"$dir")" "pack: on, pack_max 1048576, inline_max 4096" \
		"getstripe of an inline directory"
	assert_eq "$("$NACRE" getstripe --json "$MNT/t11" | jget 'd["inline_max"]')" "4096" \
		"inline_max in JSON"
	# Usage errors, which change nothing.
	rc=$(status_of "$NACRE" setstripe --inline-max 100 "$PMNT/t11" 2>"$WORK/err")
	assert_eq "$rc" "2" "status of --inline-max without --pack"
	assert_eq "$(cat "$WORK/err")" "nacre setstripe: --inline-max goes with --pack"
	rc=$(status_of "$NACRE" setstripe --pack --inline-max 5000 "$PMNT/t11" 2>"$WORK/err")
	assert_eq "$rc" "2" "status of --inline-max 5000"
	assert_eq "$(cat "$WORK/err")" \
		"nacre setstripe: invalid inline max '5000' (0 to 4096 bytes, K suffix; 0: none)"
	assert_eq "$("$NACRE" getstripe "$MNT/t11")" "$dir" "getstripe after usage errors"
	# A new subdirectory inherits the limit; --inline-max 0 turns it off
	# (set before a file is created there: a client keeps a directory's
	# template for 10 s).
	mkdir "$PMNT/t11/sub" "$PMNT/t11/off"
	assert_eq "$("$NACRE" getstripe --json "$MNT/t11/sub" | jget 'd["inline_max"]')" "4096" \
		"inline_max of a new subdirectory"
	"$NACRE" setstripe --pack --inline-max 0 "$PMNT/t11/off"
	assert_eq "$("$NACRE" getstripe "$MNT/t11/off" | grep '^pack:')" \
		"pack: on, pack_max 1048576" "getstripe after --inline-max 0"
	assert_eq "$("$NACRE" getstripe --json "$MNT/t11/off" | jget 'd["inline_max"]')" "0" \
		"inline_max 0 in JSON"
	mkdata "$e/sub/a" 200 1100
	mkdata "$e/off/b" 200 1101
	cp "$e/sub/a" "$PMNT/t11/sub/a"
	cp "$e/off/b" "$PMNT/t11/off/b"
	# Files up to 4096 bytes are inline, one byte more packed.
	for sz in 0 1 100 4096 4097; do
		mkdata "$e/f$sz" "$sz" $((1110 + sz))
	done
	mkdata "$e/tr" 3000 1102
	mkdata "$e/ren" 2000 1103
	cp "$e"/f* "$e/tr" "$e/ren" "$PMNT/t11/"
	commit t11
	commit t11/sub
	commit t11/off
	drop_caches || true
	same_tree "$e" "$MNT/t11"
	assert_eq "$(cd "$MNT/t11" && kinds_of "${inl[@]}" f4097 off/b)" \
		"inline inline inline inline inline inline inline packed packed" "kinds of t11's files"
	for sz in 0 4096; do
		assert_eq "$("$NACRE" getstripe "$MNT/t11/f$sz" | grep '^lmm_inline:')" \
			"lmm_inline:        $sz bytes, kept in the MDT (no objects)" "getstripe of f$sz"
	done
	"$NACRE" getstripe "$MNT/t11/f4097" | grep -qE '^lmm_packed: +pack [0-9]+ offset [0-9]+ length 4097$'
	assert_eq "$(objects_of "$MNT/t11/f100")" "0" "objects of an inline file"
	# nacre find -inline lists them, and -pack the others.
	assert_eq "$("$NACRE" find "$MNT/t11" -inline | sort | tr '\n' ' ')" \
		"$(printf "$MNT/t11/%s\n" "${inl[@]}" | sort | tr '\n' ' ')" "find -inline"
	assert_eq "$("$NACRE" find "$MNT/t11" -pack | sort | tr '\n' ' ')" \
		"$MNT/t11/f4097 $MNT/t11/off/b " "find -pack"
	assert_eq "$("$NACRE" find "$MNT/t11/f100" --json | jget 'd[0]["inline"]')" "true" \
		"find --json of an inline file"
	# With every OSS down, inline files still read.
	oss_stop $(seq 0 $((NOST - 1)))
	drop_caches || true
	rc=$(status_of reads_within 10 "$e" "$MNT/t11" "${inl[@]}")
	oss_start $(seq 0 $((NOST - 1)))
	assert_eq "$rc" "0" "reads of inline files with every OSS down"
	# Growth to 4096 bytes stays inline, past it packs; a smaller rewrite
	# stays inline.
	mkdata "$WORK/app1" 4095 1104
	cat "$WORK/app1" >> "$e/f1"
	cat "$WORK/app1" >> "$PMNT/t11/f1"
	mkdata "$WORK/app100" 4000 1105
	cat "$WORK/app100" >> "$e/f100"
	cat "$WORK/app100" >> "$PMNT/t11/f100"
	mkdata "$e/f4096" 50 1106
	cp "$e/f4096" "$PMNT/t11/f4096"
	# Truncate down through the writer, up (zeros) through the other client.
	truncate -s 1000 "$e/tr" "$PMNT/t11/tr"
	commit t11
	drop_caches || true
	cmp "$e/tr" "$MNT/t11/tr"
	truncate -s 3500 "$e/tr" "$MNT/t11/tr"
	ls "$MNT/t11" >/dev/null
	cmp "$e/tr" "$PMNT/t11/tr"
	# Rename and hard link keep the bytes; unlink of one name keeps the other.
	mv "$PMNT/t11/ren" "$PMNT/t11/ren2"
	ln "$PMNT/t11/ren2" "$PMNT/t11/ren3"
	commit t11
	assert_eq "$(stat -c %h "$MNT/t11/ren3")" "2" "link count of a linked inline file"
	cmp "$e/ren" "$MNT/t11/ren2"
	cmp "$e/ren" "$MNT/t11/ren3"
	rm "$PMNT/t11/ren2"
	mv "$e/ren" "$e/ren3"
	commit t11
	# (The other client may keep the link count it saw for 10 s.)
	assert_eq "$(stat -c %h "$PMNT/t11/ren3")" "1" "link count after an unlink"
	drop_caches || true
	same_tree "$e" "$MNT/t11"
	inl=(f0 f1 f4096 tr ren3 sub/a)
	assert_eq "$(cd "$MNT/t11" && kinds_of "${inl[@]}" f100)" \
		"inline inline inline inline inline inline packed" "kinds after the changes"
	# The mount option makes the files created through the mount inline.
	pack_umount
	pack_mount inline_max=2048
	mkdir -p "$PMNT/t11m" "$WORK/e11m"
	mkdata "$WORK/e11m/a" 2048 1109
	mkdata "$WORK/e11m/b" 2049 1110
	cp "$WORK/e11m"/* "$PMNT/t11m/"
	commit t11m
	assert_eq "$(cd "$MNT/t11m" && kinds_of a b)" "inline packed" "kinds under -o inline_max"
	# A client killed after an fsync keeps the inline file it synced.
	mkdata "$e/synced" 1000 1107
	dd if="$e/synced" of="$PMNT/t11/synced" bs=64k conv=fsync status=none
	mkdata "$WORK/unsynced" 500 1108
	cp "$WORK/unsynced" "$PMNT/t11/unsynced"
	pack_kill
	cmp "$e/synced" "$MNT/t11/synced"
	assert_eq "$(kinds_of "$MNT/t11/synced")" "inline" "kind of the synced file"
	if [ -e "$MNT/t11/unsynced" ]; then
		cmp "$WORK/unsynced" "$MNT/t11/unsynced"
		rm "$MNT/t11/unsynced"
	fi
	inl+=(synced)
	# Restart every daemon: the inline files are intact.
	pack_umount
	restart_all
	drop_caches || true
	retry 30 same_tree "$e" "$MNT/t11"
	same_tree "$WORK/e11m" "$MNT/t11m"
	assert_eq "$(cd "$MNT/t11" && kinds_of "${inl[@]}")" \
		"inline inline inline inline inline inline inline" "kinds after a restart"
	pack_mount
	assert_eq "$(stat -c %h "$PMNT/t11/ren3")" "1" "link count after a restart"
}
run_test 11 "inline files: kept in the MDT, read with every OSS down, rewritten, restarted" test_11

finish
