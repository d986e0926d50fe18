#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: erasure coding.  A fresh filesystem of 6 OSTs lays files
# out 4+2 over all six (1 MiB chunks, a row holds 4 MiB of data), so any two
# OSS processes may stop and every file still reads back exactly; three
# stopped make reads fail, never return wrong bytes.  Then the repair paths:
# stale shards after a write with an OST down and `nacre rebuild`, a flipped
# byte on disk and `nacre scrub`, a replaced (empty) OST and
# `nacre rebuild --ost`, and two clients writing the same rows at once.
#
# Each OSS serves one OST here: OSS i is OST i.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
export OSTS=6
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

cluster_up
# The suite checks what `nacre rebuild` does by hand: the MDS's catch-up
# rebuild (tests/e2e/test_oss_io_restart.sh) must not get there first.
echo no-catchup > "$CDIR/mds.conf"
"$CLUSTER" restart mds --dir "$CDIR" > /dev/null
WORK=$(mktemp -d "$CDIR/e2e-ec.XXXXXX")
# Sizes on and around chunk and row boundaries (a row is 4 chunks of data).
SIZES=(0 1 $((S - 1)) "$S" $((4 * S - 1)) $((4 * S)) $((4 * S + 1)) $((8 * S + 7)) $((13 * S + 5)))
# The files the pair loop reads: tiny, one row and a byte, every shard.
PAIR_SIZES=(1 $((4 * S + 1)) $((13 * S + 5)))
# The file of test 5, written while OST 2 was down.
STALE_SIZE=$((9 * S))

# run_rc OUT ERR CMD...: runs CMD with stdout in OUT and stderr in ERR and
# prints its exit status (never fails itself).
run_rc()
{
	local out=$1 err=$2 rc=0
	shift 2
	"$@" > "$out" 2> "$err" || rc=$?
	echo "$rc"
}

# cmp_files SIZE...: every file of test 2 with these sizes reads back right.
cmp_files()
{
	local size
	for size in "$@"; do
		if ! cmp_uncached "$WORK/f-$size" "$MNT/ec/f-$size"; then
			echo "f-$size differs (OSS down: $(stopped_oss))" >&2
			return 1
		fi
	done
}

# The OSS processes stopped now, for messages.
stopped_oss()
{
	status_json | jget '" ".join(x["name"] for x in d["daemons"] if x["state"] != "running") or "none"'
}

# assert_all_ok PATH: no shard of PATH is stale.
assert_all_ok()
{
	local json
	json=$("$NACRE" getstripe --json "$1")
	echo "$json"
	assert_eq "$(jget 'all(s["state"] == "ok" for s in d["shards"])' <<< "$json")" \
		"true" "every shard of $1 is ok"
}

test_1()
{
	local json
	: > "$MNT/probe"
	json=$("$NACRE" getstripe --json "$MNT/probe")
	echo "$json"
	assert_eq "$(jget 'd["k"]' <<< "$json")" "4" "k"
	assert_eq "$(jget 'd["m"]' <<< "$json")" "2" "m"
	assert_eq "$(jget 'd["stripe_count"]' <<< "$json")" "6" "stripe_count"
	assert_eq "$(jget 'd["stripe_size"]' <<< "$json")" "$S" "stripe_size"
	assert_eq "$(jget 'd["pattern"]' <<< "$json")" "ec 4+2" "pattern"
	assert_eq "$(jget 'sorted(s["ost"] for s in d["shards"])' <<< "$json")" \
		"[0, 1, 2, 3, 4, 5]" "shard OSTs"
	assert_eq "$(jget 'all(s["state"] == "ok" for s in d["shards"])' <<< "$json")" \
		"true" "shard states"
	"$NACRE" getstripe "$MNT/probe" > "$WORK/probe.txt"
	cat "$WORK/probe.txt"
	grep -E '^lmm_pattern:[[:space:]]+ec 4\+2$' "$WORK/probe.txt" > /dev/null
	assert_eq "$(grep -cwE '[0-5][[:space:]]+[^[:space:]]+[[:space:]]+ok' "$WORK/probe.txt")" \
		"6" "shard lines of the text output"
	rm -f "$MNT/probe"
}
run_test 1 "the default layout of 6 OSTs is EC 4+2 over all of them" test_1

test_2()
{
	local size i=0
	mkdir "$MNT/ec"
	for size in "${SIZES[@]}"; do
		i=$((i + 1))
		mkdata "$WORK/f-$size" "$size" "$i"
		# Whole rows, partial rows and a short tail: 1 MiB writes
		# for most, small ones (partial-row parity updates) for one.
		if [ "$size" = $((4 * S + 1)) ]; then
			dd if="$WORK/f-$size" of="$MNT/ec/f-$size" bs=65536 status=none
		else
			dd if="$WORK/f-$size" of="$MNT/ec/f-$size" bs=1M status=none
		fi
	done
	for size in "${SIZES[@]}"; do
		assert_eq "$(stat -c %s "$MNT/ec/f-$size")" "$size" "size of f-$size"
		cmp_uncached "$WORK/f-$size" "$MNT/ec/f-$size"
	done
}
run_test 2 "files around the chunk and row sizes read back exactly" test_2

# ec_pairs: the pairs of OSSes test 3 takes down, "A B" a line: all 15, or
# with NACRE_E2E_EC_PAIRS=some four that take every OSS down once and mix
# data and parity shards (for slow machines: the RDMA checks run in an
# emulated one).
ec_pairs()
{
	local a b
	if [ "${NACRE_E2E_EC_PAIRS:-all}" = some ]; then
		printf '%s\n' "0 1" "2 3" "4 5" "1 4"
		return
	fi
	for a in 0 1 2 3 4 5; do
		for b in $(seq $((a + 1)) 5); do
			echo "$a $b"
		done
	done
}

test_3()
{
	local a b
	ec_pairs > "$WORK/pairs"
	while read -r a b; do
		{
			echo "-- OSS $a and $b down"
			oss_stop "$a" "$b"
			assert_eq "$(stopped_oss)" "oss$a oss$b" "OSS stopped"
			if ! cmp_files "${PAIR_SIZES[@]}"; then
				oss_start "$a" "$b"
				_e2e_assert_failed "a read with OSS $a and $b down returned wrong bytes or failed"
			fi
			oss_start "$a" "$b"
		} < /dev/null
	done < "$WORK/pairs"
	# Everything reads right with all of them back.
	cmp_files "${SIZES[@]}"
}
run_test 3 "every pair of OSS down: files still read back exactly" test_3

test_4()
{
	local size=$((13 * S + 5)) rc got
	oss_stop 0 2 4
	drop_caches || true
	rc=$(run_rc "$WORK/4.out" "$WORK/4.err" timeout 120 cat "$MNT/ec/f-$size")
	cat "$WORK/4.err"
	got=$(stat -c %s "$WORK/4.out")
	echo "cat: exit $rc, $got bytes out"
	# Whatever came out must be the file's own first bytes.
	cmp -n "$got" "$WORK/4.out" "$WORK/f-$size" || rc=wrong
	oss_start 0 2 4
	if [ "$rc" = wrong ]; then
		_e2e_assert_failed "a read with 3 OSS down returned wrong bytes"
	fi
	[ "$rc" != 0 ] || _e2e_assert_failed "a read with 3 OSS down succeeded"
	[ "$rc" != 124 ] || _e2e_assert_failed "a read with 3 OSS down hung"
	grep -F "Input/output error" "$WORK/4.err" > /dev/null ||
		_e2e_assert_failed "cat did not report an I/O error"
	[ "$got" -lt "$size" ] || _e2e_assert_failed "the whole file came out"
	cmp_files "$size"
}
run_test 4 "three OSS down: reads fail with EIO and never return wrong bytes" test_4

test_5()
{
	local f=$MNT/ec/stale json rc
	mkdata "$WORK/stale" "$STALE_SIZE" 55
	# Laid out while every OST is up (test 9 creates one with OST 2
	# down), written while OST 2 is not.
	: > "$f"
	oss_stop 2
	rc=0
	dd if="$WORK/stale" of="$f" bs=1M status=none || rc=$?
	if [ "$rc" != 0 ]; then
		oss_start 2
		_e2e_assert_failed "writing with one OSS down failed (status $rc)"
	fi
	json=$("$NACRE" getstripe --json "$f") || rc=$?
	echo "$json"
	oss_start 2
	assert_eq "$rc" "0" "getstripe exit status"
	assert_eq "$(jget '[s["state"] for s in d["shards"] if s["ost"] == 2]' <<< "$json")" \
		'["stale"]' "state of the shard on OST 2"
	assert_eq "$(jget 'sum(s["state"] == "stale" for s in d["shards"])' <<< "$json")" \
		"1" "stale shards"
	cmp_uncached "$WORK/stale" "$f"

	"$NACRE" --json rebuild "$MNT" > "$WORK/5.json"
	cat "$WORK/5.json"
	assert_eq "$(jget 'd["shards_cleared"]' < "$WORK/5.json")" "1" "stale marks cleared"
	assert_eq "$(jget 'd["chunks_fixed"] > 0' < "$WORK/5.json")" "true" "chunks rebuilt"
	assert_eq "$(jget 'd["errors"]' < "$WORK/5.json")" "0" "rebuild errors"
	assert_all_ok "$f"
	# The text summary of a run with nothing left to do.
	"$NACRE" rebuild "$MNT" > "$WORK/5.txt"
	cat "$WORK/5.txt"
	grep -E '^rebuilt 0 chunks in [0-9]+ files \(0 stale marks cleared\)$' "$WORK/5.txt" > /dev/null

	# The rebuilt shard is now needed: two others stop.
	oss_stop 3 4
	rc=0
	cmp_uncached "$WORK/stale" "$f" || rc=1
	oss_start 3 4
	assert_eq "$rc" "0" "the rebuilt file read with OSS 3 and 4 down"
}
run_test 5 "a write with an OSS down marks its shard stale; rebuild clears it" test_5

# flip_byte FILE OFFSET: corrupts one byte of FILE in place (an object on
# an OST, behind its OSS's back).
flip_byte()
{
	python3 - "$1" "$2" <<'PYEOF'
import sys
path, off = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 0x5a]))
PYEOF
}

test_6()
{
	local size=$((8 * S + 7)) f obj ost
	f=$MNT/ec/f-$size
	# The shard holding the file's first chunk; flip a byte inside it.
	read -r _ ost obj < <(shard_objects "$f" | head -n 1)
	echo "corrupting $obj (OST $ost)"
	[ -f "$obj" ]
	cp -- "$obj" "$WORK/obj.orig"
	flip_byte "$obj" 1000
	if cmp -s -- "$obj" "$WORK/obj.orig"; then
		_e2e_assert_failed "the byte flip did not change the object"
	fi
	# The corrupt chunk fails its checksum; the row is decoded instead.
	cmp_uncached "$WORK/f-$size" "$f"

	"$NACRE" --json scrub "$MNT" > "$WORK/6a.json"
	cat "$WORK/6a.json"
	assert_eq "$(jget 'd["chunks_bad"]' < "$WORK/6a.json")" "1" "corrupt chunks found"
	assert_eq "$(jget 'd["chunks_fixed"]' < "$WORK/6a.json")" "1" "corrupt chunks repaired"
	assert_eq "$(jget 'd["errors"]' < "$WORK/6a.json")" "0" "scrub errors"
	assert_eq "$(jget '[c["path"] for c in d["corrupt"]]' < "$WORK/6a.json")" \
		"[\"$f\"]" "the corrupt file"
	"$NACRE" scrub "$MNT" > "$WORK/6b.txt"
	cat "$WORK/6b.txt"
	grep -E '^scrubbed [0-9]+ files: 0 corrupt chunks found, 0 repaired$' "$WORK/6b.txt" > /dev/null
	"$NACRE" --json scrub "$MNT" > "$WORK/6c.json"
	assert_eq "$(jget 'd["chunks_bad"]' < "$WORK/6c.json")" "0" "corrupt chunks of a second scrub"
	cmp -- "$WORK/obj.orig" "$obj"
	cmp_uncached "$WORK/f-$size" "$f"
}
run_test 6 "a flipped byte on disk reads right, scrub repairs it in place" test_6

test_7()
{
	local rc size before=0 p
	oss_stop 5
	mv -- "$CDIR/ost/5" "$CDIR/ost/5.old"
	oss_start --replace 5
	# Before the rebuild, OST 5 answers but holds nothing: readers must
	# still get the right bytes.  Checked at the end, so the rebuild runs
	# either way.
	for size in "${SIZES[@]}"; do
		cmp_uncached "$WORK/f-$size" "$MNT/ec/f-$size" || before=1
	done
	cmp_uncached "$WORK/stale" "$MNT/ec/stale" || before=1

	"$NACRE" --json rebuild --ost 5 "$MNT" > "$WORK/7.json"
	cat "$WORK/7.json"
	assert_eq "$(jget 'd["errors"]' < "$WORK/7.json")" "0" "rebuild errors"
	assert_eq "$(jget 'd["chunks_fixed"] > 0' < "$WORK/7.json")" "true" "chunks rebuilt"
	# Files of more than 3 chunks have data or parity on every shard:
	# their objects on OST 5 are back.
	for p in "$MNT/ec/f-$((4 * S - 1))" "$MNT/ec/f-$((13 * S + 5))" "$MNT/ec/stale"; do
		shard_objects "$p" > "$WORK/7.shards"
		[ -s "$(awk '$2 == 5 { print $3 }' "$WORK/7.shards")" ] ||
			_e2e_assert_failed "no object of $p on the new OST 5"
	done

	oss_stop 1 3
	rc=0
	for size in "${SIZES[@]}"; do
		cmp_uncached "$WORK/f-$size" "$MNT/ec/f-$size" || rc=1
	done
	cmp_uncached "$WORK/stale" "$MNT/ec/stale" || rc=1
	oss_start 1 3
	assert_eq "$rc" "0" "files read with OSS 1 and 3 down after the rebuild"
	assert_eq "$before" "0" "files read from the empty replacement before the rebuild"
}
run_test 7 "a replaced OST is rebuilt with rebuild --ost" test_7


T8_MNT=
test_8_cleanup()
{
	set +e
	if [ -n "$T8_MNT" ] && mountpoint -q "$T8_MNT"; then
		fusermount3 -u "$T8_MNT" || umount -l "$T8_MNT"
	fi
	[ -z "$T8_MNT" ] || rmdir "$T8_MNT"
	return 0
}

test_8()
{
	local m f=ec/shared rc=0 pa pb o0 o1
	T8_MNT=$(mktemp -d "$CDIR/mnt2.XXXXXX")
	m=$T8_MNT
	trap test_8_cleanup EXIT
	"$MOUNT_NACRE" "$MDS_ADDR:/$FSNAME" "$m" -o "log=$CDIR/log/client2.log"
	mountpoint -q "$m"
	mkdata "$WORK/shared" $((4 * S)) 88
	cp -- "$WORK/shared" "$MNT/$f"
	cp -- "$WORK/shared" "$WORK/shared.expect"
	python3 "$E2E_LIB_DIR/rows_writer.py" "$WORK/shared.expect" expect

	python3 "$E2E_LIB_DIR/rows_writer.py" "$MNT/$f" A &
	pa=$!
	python3 "$E2E_LIB_DIR/rows_writer.py" "$m/$f" B &
	pb=$!
	wait "$pa" || rc=1
	wait "$pb" || rc=1
	assert_eq "$rc" "0" "both writers finished"
	cmp_uncached "$WORK/shared.expect" "$MNT/$f"
	cmp_uncached "$WORK/shared.expect" "$m/$f"

	# With the first two data chunks' OSTs down the records come back
	# through the parity the concurrent updates left.
	o0=$(shard_objects "$MNT/$f" | awk '$1 == 0 { print $2 }')
	o1=$(shard_objects "$MNT/$f" | awk '$1 == 1 { print $2 }')
	oss_stop "$o0" "$o1"
	cmp_uncached "$WORK/shared.expect" "$MNT/$f" || rc=1
	oss_start "$o0" "$o1"
	assert_eq "$rc" "0" "the shared file read with OSS $o0 and $o1 down"
}
run_test 8 "two clients writing the same rows at once leave data and parity right" test_8

test_9()
{
	local f=$MNT/ec/born-degraded json rc=0
	mkdata "$WORK/born-degraded" "$STALE_SIZE" 99
	oss_stop 2
	dd if="$WORK/born-degraded" of="$f" bs=1M status=none || rc=$?
	json=$("$NACRE" getstripe --json "$f") || rc=$?
	echo "$json"
	oss_start 2
	assert_eq "$rc" "0" "writing and getstripe with OSS 2 down"
	# The filesystem has 6 OSTs: one down for a while must not make new
	# files lose their redundancy.
	assert_eq "$(jget '(d["k"], d["m"], d["stripe_count"])' <<< "$json")" "(4, 2, 6)" \
		"k, m and stripe_count of a file created with OSS 2 down"
	assert_eq "$(jget '[s["state"] for s in d["shards"] if s["ost"] == 2]' <<< "$json")" \
		'["stale"]' "state of the shard on OST 2"
	"$NACRE" rebuild "$f"
	assert_all_ok "$f"
	oss_stop 0 1
	cmp_uncached "$WORK/born-degraded" "$f" || rc=1
	oss_start 0 1
	assert_eq "$rc" "0" "the file read with OSS 0 and 1 down"
}
run_test 9 "a file created while an OSS is down is erasure-coded all the same" test_9

test_10()
{
	local json
	mkdir "$MNT/plain" "$MNT/ec22"
	"$NACRE" setstripe -E none "$MNT/plain"
	"$NACRE" setstripe -E 2+2 "$MNT/ec22"
	mkdata "$WORK/t10" $((3 * S + 17)) 10
	cp -- "$WORK/t10" "$MNT/plain/f"
	cp -- "$WORK/t10" "$MNT/ec22/f"
	json=$("$NACRE" getstripe --json "$MNT/plain/f")
	echo "$json"
	assert_eq "$(jget '(d["m"], d["pattern"])' <<< "$json")" "(0, 'raid0')" "-E none on 6 OSTs"
	json=$("$NACRE" getstripe --json "$MNT/ec22/f")
	echo "$json"
	assert_eq "$(jget '(d["k"], d["m"], d["pattern"])' <<< "$json")" "(2, 2, 'ec 2+2')" "-E 2+2"
	assert_eq "$(jget 'd["stripe_count"] >= 4' <<< "$json")" "true" "stripe_count of 2+2"
	cmp_uncached "$WORK/t10" "$MNT/plain/f"
	cmp_uncached "$WORK/t10" "$MNT/ec22/f"
}
run_test 10 "setstripe -E none stripes plainly, -E 2+2 codes 2+2" test_10

test_11()
{
	local json
	mkdir "$MNT/pk"
	# A directory with no default of its own shows every field inherited.
	json=$("$NACRE" getstripe --json "$MNT/pk")
	echo "$json"
	assert_eq "$(jget '(d["stripe_count"], d["stripe_size"], d["k"], d["m"], d["pattern"])' \
		<<< "$json")" "(0, 0, 0, 0, 'default')" "template of a new directory"
	"$NACRE" getstripe "$MNT/pk" | grep -xF \
		'stripe_count: default stripe_size: default pattern: default stripe_offset: -1'
	# Turning packing on changes nothing else: packs are EC 4+2 as files
	# of the directory would be, not plainly striped.
	"$NACRE" setstripe --pack "$MNT/pk"
	json=$("$NACRE" getstripe --json "$MNT/pk")
	assert_eq "$(jget '(d["pack"], d["stripe_count"], d["k"])' <<< "$json")" \
		"(True, 0, 0)" "template after setstripe --pack"
	mkdata "$WORK/t11" 100000 11
	dd if="$WORK/t11" of="$MNT/pk/small" bs=1M conv=fsync status=none
	json=$("$NACRE" getstripe --json "$MNT/pk/small")
	echo "$json"
	assert_eq "$(jget '(d["packed"], d["k"], d["m"], d["stripe_count"])' <<< "$json")" \
		"(True, 4, 2, 6)" "layout of a packed file"
	cmp_uncached "$WORK/t11" "$MNT/pk/small"
}
run_test 11 "setstripe --pack on a new directory packs into EC 4+2" test_11

# setstripe -d deletes a directory's default: with --pack it mends a
# directory whose template names a stripe count of its own (as older
# setstripe --pack wrote), so that its packs are EC 4+2 again.
test_12()
{
	local json rc
	mkdir "$MNT/pd"
	"$NACRE" setstripe -c 4 -S 512K --pack "$MNT/pd"
	json=$("$NACRE" getstripe --json "$MNT/pd")
	assert_eq "$(jget '(d["pack"], d["stripe_count"], d["stripe_size"])' <<< "$json")" \
		"(True, 4, 524288)" "template before -d"
	"$NACRE" setstripe -d --pack "$MNT/pd"
	json=$("$NACRE" getstripe --json "$MNT/pd")
	echo "$json"
	assert_eq "$(jget '(d["pack"], d["stripe_count"], d["stripe_size"], d["k"])' \
		<<< "$json")" "(True, 0, 0, 0)" "template after -d --pack"
	mkdata "$WORK/t12" 70000 12
	dd if="$WORK/t12" of="$MNT/pd/small" bs=1M conv=fsync status=none
	json=$("$NACRE" getstripe --json "$MNT/pd/small")
	assert_eq "$(jget '(d["packed"], d["k"], d["m"], d["stripe_count"])' <<< "$json")" \
		"(True, 4, 2, 6)" "layout of a packed file after -d --pack"
	cmp_uncached "$WORK/t12" "$MNT/pd/small"
	# -d alone: nothing of its own, packing off too.
	"$NACRE" setstripe -d "$MNT/pd"
	"$NACRE" getstripe "$MNT/pd" | grep -xF \
		'stripe_count: default stripe_size: default pattern: default stripe_offset: -1'
	assert_eq "$(jget 'd["pack"]' <<< "$("$NACRE" getstripe --json "$MNT/pd")")" \
		"false" "packing after -d"
	# A file has no default to delete: a usage error, the file intact.
	rc=0
	"$NACRE" setstripe -d "$MNT/pd/small" 2> "$WORK/t12.err" || rc=$?
	assert_eq "$rc" "2" "setstripe -d on a file"
	grep -q "not a directory" "$WORK/t12.err" || _e2e_assert_failed "no reason given"
	cmp_uncached "$WORK/t12" "$MNT/pd/small"
}
run_test 12 "setstripe -d deletes a directory's default, -d --pack mends one" test_12

# rebuild --ost over packed files rebuilds their packs, each pack once
# however many of its files the walk meets.
test_13()
{
	local i rc=0 d=$MNT/pk13
	mkdir -p "$d"
	"$NACRE" setstripe --pack "$d"
	for i in $(seq 1 40); do
		mkdata "$WORK/p13-$i" $((30000 + i * 3001)) "$((1300 + i))"
		cp -- "$WORK/p13-$i" "$d/s$i"
	done
	sync "$d"/s*
	oss_stop 4
	mv -- "$CDIR/ost/4" "$CDIR/ost/4.old"
	oss_start --replace 4
	"$NACRE" --json rebuild --ost 4 "$d" > "$WORK/13.json"
	cat "$WORK/13.json"
	assert_eq "$(jget 'd["errors"]' < "$WORK/13.json")" "0" "rebuild errors"
	assert_eq "$(jget 'd["files"]' < "$WORK/13.json")" "40" "files walked"
	# 40 files of 33 to 150 KB (3.7 MB) fill a row or two of 4 MiB: a
	# chunk of OST 4 in each, where rebuilding per file would have
	# rebuilt them 40 times.
	assert_eq "$(jget '0 < d["chunks_fixed"] <= 2' < "$WORK/13.json")" "true" \
		"chunks rebuilt (each pack once)"
	oss_stop 1 3
	for i in $(seq 1 40); do
		cmp_uncached "$WORK/p13-$i" "$d/s$i" || rc=1
	done
	oss_start 1 3
	assert_eq "$rc" "0" "packed files read with OSS 1 and 3 down after rebuild --ost 4"

	# A byte flipped in the pack's object on OST 0: scrub finds it and
	# repairs it once, reported against the pack.
	local pid obj
	pid=$("$NACRE" getstripe --json "$d/s1" | jget 'd["pack_id"]')
	obj=$(ost_object_path 0 "$(printf '%x:%x' 2 "$pid")")
	[ -f "$obj" ]
	flip_byte "$obj" 1000
	"$NACRE" scrub "$d" > "$WORK/13.scrub" || rc=1
	cat "$WORK/13.scrub"
	assert_eq "$rc" "0" "scrub of the packed files"
	assert_eq "$(grep -c "(its pack $pid, every file in it): 1 corrupt chunks, 1 repaired$" \
		"$WORK/13.scrub")" "1" "the corrupt pack chunk, reported once"
	grep -q '^scrubbed 40 files: 1 corrupt chunks found, 1 repaired$' "$WORK/13.scrub"
	for i in $(seq 1 40); do
		cmp_uncached "$WORK/p13-$i" "$d/s$i"
	done
}
run_test 13 "rebuild --ost and scrub repair the packs of packed files, each once" test_13

# A scrub with an OSS down passes over its shards at once (it used to wait
# the client's retry time, about 5 s, on every file), counts them as not
# verified and exits 1; with the OSS back the same scrub is clean.  A
# rebuild that needs the OSS says so in words that point at it.
test_14()
{
	local i rc=0 d=$MNT/s14 t0 took
	mkdir -p "$d"
	for i in $(seq 1 12); do
		mkdata "$d/f$i" $((S + i * 1000)) "$((1400 + i))"
	done
	sync "$d"/f*
	oss_stop 5
	t0=$(date +%s)
	"$NACRE" --json scrub "$d" > "$WORK/14.json" || rc=$?
	took=$(($(date +%s) - t0))
	cat "$WORK/14.json"
	# A rebuild that needs the OST says which way to look.
	local rrc=0
	mkdata "$WORK/14w" $((2 * S)) 1499
	cp -- "$WORK/14w" "$d/w" && sync "$d/w"
	"$NACRE" rebuild "$d/w" 2> "$WORK/14.err" || rrc=$?
	cat "$WORK/14.err"
	oss_start 5
	assert_eq "$rrc" "1" "exit status of a rebuild whose stale shard's OST is down"
	assert_eq "$(grep -c 'an OST it needs is down or does not answer (see nacre osts)' \
		"$WORK/14.err")" "1" "the rebuild's message"
	assert_eq "$("$NACRE" rebuild "$d/w" > /dev/null && echo ok)" "ok" \
		"the rebuild with the OSS back"
	assert_eq "$(cmp_uncached "$WORK/14w" "$d/w" && echo same)" "same" \
		"the file read back after its rebuild"
	assert_eq "$rc" "1" "exit status of a scrub that could not verify every shard"
	assert_eq "$(jget 'd["files"]' < "$WORK/14.json")" "12" "files scrubbed"
	assert_eq "$(jget 'd["unverified"]' < "$WORK/14.json")" "12" \
		"shards not verified (one per file on OST 5)"
	assert_eq "$(jget 'd["errors"]' < "$WORK/14.json")" "0" "scrub errors"
	assert_eq "$([ "$took" -lt 30 ] && echo quick || echo "$took s")" "quick" \
		"a scrub of 12 files with an OSS down (one wait of 5 s each took 60 s)"
	rc=0
	"$NACRE" --json scrub "$d" > "$WORK/14b.json" || rc=$?
	assert_eq "$rc" "0" "exit status of the scrub with every OSS up"
	assert_eq "$(jget 'd["unverified"]' < "$WORK/14b.json")" "0" "shards not verified"
}
run_test 14 "scrub and rebuild with an OSS down: passed over at once, said plainly" test_14

# stop_when_grown PID FILE SIZE: stops (SIGSTOP) process PID as soon as FILE
# holds at least SIZE bytes; prints FILE's size then.  Fails after 60 s.
stop_when_grown()
{
	python3 - "$@" <<'PYEOF'
import os, signal, sys, time
pid, path, size = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
end = time.monotonic() + 60
while time.monotonic() < end:
    try:
        if os.stat(path).st_size >= size:
            os.kill(pid, signal.SIGSTOP)
            print(os.stat(path).st_size)
            sys.exit(0)
    except FileNotFoundError:
        pass
    time.sleep(0.001)
sys.exit("%s did not reach %d bytes" % (path, size))
PYEOF
}

# write_rows FILE ROW...: writes a whole row (4 chunks) of fresh bytes at
# each ROW of FILE and fsyncs it; the same bytes for the same ROW.
write_rows()
{
	python3 - "$S" "$@" <<'PYEOF'
import os, random, sys
chunk, path, rows = int(sys.argv[1]), sys.argv[2], [int(r) for r in sys.argv[3:]]
fd = os.open(path, os.O_WRONLY)
for r in rows:
    os.pwrite(fd, random.Random(1500 + r).randbytes(4 * chunk), r * 4 * chunk)
os.fsync(fd)
os.close(fd)
PYEOF
}

# stale_file REF FILE ROWS SEED: REF gets ROWS rows of pseudo-random
# bytes (SEED), and FILE the same, written while OSS 2 was down: its shard
# there is stale.
stale_file()
{
	local ref=$1 f=$2 rows=$3 seed=$4 rc=0
	mkdir -p "$(dirname -- "$f")"
	mkdata "$ref" $((rows * 4 * S)) "$seed"
	: > "$f"
	oss_stop 2
	dd if="$ref" of="$f" bs=4M conv=fsync status=none || rc=$?
	oss_start 2
	assert_eq "$rc" "0" "writing with one OSS down"
	assert_eq "$(stale_count "$f")" "1" "stale shards before the rebuild"
}

# rebuild_stopped FILE JSON: starts `nacre --json rebuild FILE` (its output
# in JSON) and stops it (SIGSTOP) once it has rebuilt two rows of the
# shard on OST 2; REBUILD_PID is the rebuild's pid and REBUILD_AT the bytes
# of that shard written by then.
rebuild_stopped()
{
	local obj rc=0
	obj=$(shard_objects "$1" | awk '$2 == 2 { print $3 }')
	"$NACRE" --json rebuild "$1" > "$2" &
	REBUILD_PID=$!
	REBUILD_AT=$(stop_when_grown "$REBUILD_PID" "$obj" $((2 * S))) || rc=$?
	if [ "$rc" != 0 ]; then
		kill -CONT "$REBUILD_PID" 2> /dev/null
		wait "$REBUILD_PID"
		_e2e_assert_failed "the rebuild did not get going"
	fi
	echo "rebuild stopped with $REBUILD_AT bytes of the shard on OST 2 written"
}

# rebuild_resumed: lets the stopped rebuild go on and waits for it;
# REBUILD_RC is its exit status.
rebuild_resumed()
{
	REBUILD_RC=0
	kill -CONT "$REBUILD_PID"
	wait "$REBUILD_PID" || REBUILD_RC=$?
}

# cmp_through_shard_2 REF FILE: FILE reads back as REF with OSS 3 and 4
# down, so through the shard on OST 2.
cmp_through_shard_2()
{
	local rc=0
	oss_stop 3 4
	cmp_uncached "$1" "$2" || rc=1
	oss_start 3 4
	assert_eq "$rc" "0" "the file read with OSS 3 and 4 down after the rebuild"
}

# A rebuild locks one row at a time, so a writer of its file goes on
# meanwhile (before, it waited for the whole rebuild, or gave up with
# EDEADLK after 60 s); the rows written while it runs, behind it and ahead
# of it, are rebuilt as well before the stale mark goes.  The rebuild is
# stopped (SIGSTOP) a few rows in, while the writer runs.
test_15()
{
	local f=$MNT/ec/busy rows=64 wrc=0 t0 took last=63
	stale_file "$WORK/busy" "$f" "$rows" 15
	rebuild_stopped "$f" "$WORK/15.json"
	t0=$SECONDS
	timeout 25 bash -c "$(declare -f write_rows); S=$S write_rows '$f' 0 $last" || wrc=$?
	took=$((SECONDS - t0))
	rebuild_resumed
	cat "$WORK/15.json"
	write_rows "$WORK/busy" 0 "$last"
	assert_eq "$wrc" "0" "the writer's exit status while the rebuild was stopped (124: it waited)"
	assert_eq "$([ "$REBUILD_AT" -lt $(((last - 1) * S)) ] && echo behind)" "behind" \
		"the rebuild was stopped before the last row"
	assert_eq "$REBUILD_RC" "0" "the rebuild's exit status"
	assert_eq "$(jget 'd["shards_cleared"]' < "$WORK/15.json")" "1" "stale marks cleared"
	assert_eq "$(jget 'd["rows"] >= 66' < "$WORK/15.json")" "true" \
		"rows rebuilt: every row, and the two the writer wrote once more"
	assert_all_ok "$f"
	echo "the writer took $took s"
	cmp_through_shard_2 "$WORK/busy" "$f"
}
run_test 15 "a rebuild lets writers of its file go on, and rebuilds what they wrote" test_15

# The same with the OSS of the file's lock OST restarted while the rebuild
# is stopped: the watch of the writers is lost with it, so the rebuild
# does every row again at the end, and the file still reads back exactly
# through the rebuilt shard.
test_16()
{
	local f=$MNT/ec/busy16 rows=16 lock_ost wrc=0 last=15
	stale_file "$WORK/busy16" "$f" "$rows" 16
	# Where the rebuild and the writer lock: the first shard's OST.
	lock_ost=$(shard_objects "$f" | awk '$1 == 0 { print $2 }')
	rebuild_stopped "$f" "$WORK/16.json"
	echo "restarting OSS $lock_ost (the lock OST)"
	oss_stop "$lock_ost"
	oss_start "$lock_ost"
	timeout 60 bash -c "$(declare -f write_rows); S=$S write_rows '$f' 0 $last" || wrc=$?
	rebuild_resumed
	cat "$WORK/16.json"
	write_rows "$WORK/busy16" 0 "$last"
	assert_eq "$wrc" "0" "the writer's exit status"
	assert_eq "$REBUILD_RC" "0" "the rebuild's exit status"
	assert_eq "$(jget 'd["shards_cleared"]' < "$WORK/16.json")" "1" "stale marks cleared"
	assert_eq "$(jget "d['rows'] >= 2 * $rows" < "$WORK/16.json")" "true" \
		"rows rebuilt: every row twice (the watch was lost)"
	assert_all_ok "$f"
	cmp_through_shard_2 "$WORK/busy16" "$f"
}
run_test 16 "a rebuild whose lock OST restarted does every row again" test_16

# A rebuild cuts the rebuilt shard to the rows the other objects hold and
# clears its stale mark only when at least k OSTs answered how far their
# objects go: fewer could hide rows written before its lock.  An emptied
# file reaches that point with no row to read, so two OSSes down (three
# shards out with the stale one) make the rebuild refuse, keep the mark
# and say which way to look; with them back it goes through.
test_17()
{
	local f=$MNT/ec/emptied lock_ost down rc=0 stale
	stale_file "$WORK/emptied" "$f" 2 17
	truncate -s 0 "$f"
	assert_eq "$(stale_count "$f")" "1" "stale shards after the truncation"
	lock_ost=$(shard_objects "$f" | awk '$1 == 0 { print $2 }')
	# Two OSSes other than the stale shard's (2) and the lock OST's.
	down=$(for i in 0 1 3 4 5; do [ "$i" = "$lock_ost" ] || echo "$i"; done | head -2)
	echo "lock OST $lock_ost; stopping OSS $(echo $down)"
	# shellcheck disable=SC2086
	oss_stop $down
	"$NACRE" rebuild "$f" 2> "$WORK/17.err" || rc=$?
	stale=$(stale_count "$f")
	# shellcheck disable=SC2086
	oss_start $down
	cat "$WORK/17.err"
	assert_eq "$rc" "1" "exit status of a rebuild with fewer than k OSTs answering"
	assert_eq "$(grep -c 'an OST it needs is down or does not answer (see nacre osts)' \
		"$WORK/17.err")" "1" "the rebuild's message"
	assert_eq "$stale" "1" "stale shards after the refused rebuild"
	rc=0
	"$NACRE" --json rebuild "$f" > "$WORK/17.json" || rc=$?
	cat "$WORK/17.json"
	assert_eq "$rc" "0" "exit status of the rebuild with every OSS up"
	assert_eq "$(jget 'd["shards_cleared"]' < "$WORK/17.json")" "1" "stale marks cleared"
	assert_eq "$(stat -c %s "$f")" "0" "size of the emptied file"
	cmp_through_shard_2 /dev/null "$f"
}
run_test 17 "a rebuild with fewer than k OSTs answering keeps its stale mark" test_17

# The same as test 15 with the writer in the rebuild's own process, on its
# own connection (struct nacre_fs): a rebuild's row locks and watch are
# held on connections of their own, so it holds back that writer and
# redoes what it wrote, as for another client (before, locks belonging to
# the one connection, the writer went unseen and the rebuilt shard kept
# the old bytes of the row it rewrote).
test_18()
{
	local f=$MNT/ec/own rows=16 rc=0 rw=$NACRE_BIN_DIR/tests/libclient/rebuild_write
	[ -x "$rw" ] || _e2e_assert_failed "$rw is not built (make check builds it)"
	stale_file "$WORK/own" "$f" "$rows" 18
	# Stopped after 2 rows, the rebuild waits while rows 0 and 15 are
	# rewritten: one behind it, one ahead.
	"$rw" --mds "$MDS_ADDR" --fsname "$FSNAME" --path /ec/own --chunk "$S" --at 2 0 15 \
		> "$WORK/18.json" || rc=$?
	cat "$WORK/18.json"
	python3 - "$WORK/own" "$S" 0 15 <<'PYEOF'
import sys
path, chunk, rows = sys.argv[1], int(sys.argv[2]), [int(r) for r in sys.argv[3:]]
n = 4 * chunk
ramp = bytes(range(256)) * (n // 256 + 1)
with open(path, "r+b") as f:
    for r in rows:
        k = 17 * r % 256
        f.seek(r * n)
        f.write((ramp[k:] + ramp)[:n])
PYEOF
	assert_eq "$rc" "0" "rebuild_write's exit status"
	assert_eq "$(jget 'd["shards_cleared"]' < "$WORK/18.json")" "1" "stale marks cleared"
	assert_eq "$(jget 'd["rows"] >= 18' < "$WORK/18.json")" "true" \
		"rows rebuilt: every row, and the two rewritten once more"
	assert_all_ok "$f"
	cmp_through_shard_2 "$WORK/own" "$f"
}
run_test 18 "a rebuild holds back and redoes a writer on its own connection" test_18

finish
