#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: an OSS restart in the middle of I/O.  On a 6-OST
# filesystem (EC 4+2), while writers stream files with fsync (through the
# mount, and through libnacre when the Python bindings can load it) and a
# reader verifies the files already written, one OSS is stopped (test 1)
# or killed with SIGKILL (test 2).  Reads carry on degraded and writes
# carry on with stale marks, with no error reaching the applications; once
# the OSS is back the MDS's catch-up rebuild clears every mark by itself,
# every file reads back exactly, and with two other OSSes down (so the
# caught-up OST's shards are needed) every file written during the outage
# still reads back exactly.  Test 3 patches a file with partial-row writes
# while the catch-up rebuilds it; test 4 rewrites files whose truncation
# the OST missed; test 5 packs small files with the OSS down; test 6
# catches an OST up while another OSS is down.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

OSTS=6
export OSTS
cluster_up
WORK=$(mktemp -d "$CDIR/e2e-iorestart.XXXXXX")
LOAD=$E2E_LIB_DIR/io_load.py
# The OSS taken down, and the two stopped afterwards to need its shards.
VICTIM=2
OTHERS=(3 4)
# Generous: a loaded machine (or a sanitizer build) is slow.
CATCHUP_WAIT=180
# Writes each writer must complete while the OSS is down.
WRITES_DOWN=3

NACRE_WRITER=0
if python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null &&
	[ -e "$NACRE_BIN_DIR/.libs/libnacre.so.0" ] &&
	! e2e_sanitized; then
	NACRE_WRITER=1
	NACRE_LIBRARY=$NACRE_BIN_DIR/.libs/libnacre.so.0
	PYTHONPATH=$top_srcdir/bindings/python${PYTHONPATH:+:$PYTHONPATH}
	PYTHONDONTWRITEBYTECODE=1
	NACRE_MDS=$MDS_ADDR
	NACRE_FSNAME=$FSNAME
	export NACRE_LIBRARY PYTHONPATH PYTHONDONTWRITEBYTECODE NACRE_MDS NACRE_FSNAME
fi

# count_lines FILE: lines in FILE (0 when it does not exist).
count_lines()
{
	if [ -f "$1" ]; then
		wc -l < "$1"
	else
		echo 0
	fi
}

# lines_ge FILE N: FILE has at least N lines.
lines_ge()
{
	[ "$(count_lines "$1")" -ge "$2" ]
}

# writers_started RUN: every writer of RUN (journals j.m1, j.m2 and j.n1
# when there is a libnacre writer) journaled a file.
writers_started()
{
	local j
	for j in m1 m2 $([ "$NACRE_WRITER" = 0 ] || echo n1); do
		lines_ge "$WORK/$1/j.$j" 1 || return 1
	done
}

# rounds_ge RUN N: the reader of RUN finished N rounds or more.
rounds_ge()
{
	[ "$(reader_rounds "$1")" -ge "$2" ]
}

# metric NAME: the MDS's value of metric NAME (first series).
metric()
{
	local addr
	addr=$(status_json | jget "[x['metrics'] for x in d['daemons'] if x['name'] == 'mds'][0]")
	curl -sS -f --max-time 10 "http://${addr#tcp://}/metrics" |
		awk -v n="$1" '$1 == n { print $2; exit }'
}

# writers_progressed RUN MIN: every writer of RUN journaled MIN files more
# than when the mark files were made.
writers_progressed()
{
	local run=$1 min=$2 j base
	for j in "$WORK/$run"/j.m* "$WORK/$run"/j.n*; do
		[ -e "$j" ] || continue
		case $j in *.err | *.readerr | *.rounds | *.mark) continue ;; esac
		base=$(cat "$j.mark")
		[ "$(grep -vc pending "$j")" -ge $((base + min)) ] || return 1
	done
}

# mark_writers RUN: remembers how far every writer of RUN has come.
mark_writers()
{
	local j
	for j in "$WORK/$1"/j.m* "$WORK/$1"/j.n*; do
		[ -e "$j" ] || continue
		case $j in *.err | *.readerr | *.rounds | *.mark) continue ;; esac
		grep -vc pending "$j" > "$j.mark" || true
	done
}

# reader_rounds RUN: verification rounds the reader of RUN has finished.
reader_rounds()
{
	cat "$WORK/$1/j.seed.rounds" 2>/dev/null || echo 0
}

# io_run RUN HOW: the whole scenario, the OSS taken down by HOW (stop or kill).
io_run()
{
	local run=$1 how=$2 w pids=() rounds rc=0 f
	local d=$WORK/$run stop=$WORK/$run/stop
	mkdir -p "$d" "$MNT/$run"
	# However this ends, the load stops.
	# shellcheck disable=SC2064 # the paths are those of this run
	trap "touch '$d/seed.stop' '$stop'" EXIT

	# Files the reader verifies: written before the fault.
	python3 "$LOAD" write posix "$MNT/$run" "$d/j.seed" seed "$d/seed.stop" &
	w=$!
	wait_until 120 lines_ge "$d/j.seed" 4
	touch "$d/seed.stop"
	wait "$w"

	python3 "$LOAD" write posix "$MNT/$run" "$d/j.m1" m1 "$stop" --rewrite &
	pids+=("$!")
	python3 "$LOAD" write posix "$MNT/$run" "$d/j.m2" m2 "$stop" &
	pids+=("$!")
	if [ "$NACRE_WRITER" = 1 ]; then
		python3 "$LOAD" write nacre "/$run" "$d/j.n1" n1 "$stop" --rewrite &
		pids+=("$!")
	fi
	python3 "$LOAD" read "$d/j.seed" "$MNT/$run" "$stop" > /dev/null &
	pids+=("$!")
	wait_until 120 writers_started "$run" || rc=1

	if [ $rc = 0 ]; then
		mark_writers "$run"
		rounds=$(reader_rounds "$run")
		if [ "$how" = kill ]; then
			"$CLUSTER" kill oss "$VICTIM" --dir "$CDIR" > /dev/null || rc=1
		else
			oss_stop "$VICTIM" || rc=1
		fi
		# Writes and reads go on with the OSS down.
		wait_until 240 writers_progressed "$run" "$WRITES_DOWN" || rc=2
		wait_until 240 rounds_ge "$run" $((rounds + 2)) || rc=3
		stale=$(stale_count "$MNT/$run")
		echo "stale shards with OSS $VICTIM down: $stale"
		[ "$stale" -gt 0 ] || rc=4
		oss_start "$VICTIM" || rc=5
		# A little more I/O while the OST catches up.
		mark_writers "$run"
		wait_until 240 writers_progressed "$run" 1 || rc=6
	fi
	touch "$stop"
	for w in "${pids[@]}"; do
		wait "$w" || rc=7
	done
	[ $rc = 0 ] || _e2e_assert_failed "the I/O scenario failed at step $rc"

	for f in "$d"/j.*.err "$d"/j.*.readerr; do
		[ -e "$f" ] || continue
		cat "$f" >&2
		_e2e_assert_failed "the applications saw errors ($f): $(head -n 3 "$f" | tr '\n' ' ')"
	done
	# Every file journaled so far, whoever wrote it, in one journal.
	local -a js=("$d"/j.seed "$d"/j.m1 "$d"/j.m2)
	[ "$NACRE_WRITER" = 0 ] || js+=("$d/j.n1")
	cat "${js[@]}" > "$d/all"

	if ! wait_until "$CATCHUP_WAIT" no_stale "$MNT/$run"; then
		grep -h catch-up "$CDIR/log/mds.log" >&2 || true
		_e2e_assert_failed "stale marks left $CATCHUP_WAIT s after OSS $VICTIM came back: $(stale_count "$MNT/$run")"
	fi
	grep -h "catch-up of OST" "$CDIR/log/mds.log" | tail -n 3
	[ "$(metric nacre_mds_catchup_files_total)" -gt 0 ] ||
		_e2e_assert_failed "the MDS's catch-up counted no file rebuilt"
	drop_caches || true
	python3 "$LOAD" verify "$d/all" "$MNT/$run"

	# The caught-up OST's shards are needed with two others down.
	oss_stop "${OTHERS[@]}"
	rc=0
	drop_caches || true
	python3 "$LOAD" verify "$d/all" "$MNT/$run" || rc=1
	oss_start "${OTHERS[@]}"
	assert_eq "$rc" 0 "files read back with OSS ${OTHERS[*]} down"
}

test_1()
{
	io_run stop stop
}
run_test 1 "OSS stopped during reads and writes: degraded I/O, catch-up rebuild" test_1

test_2()
{
	io_run kill kill
}
run_test 2 "OSS killed during reads and writes: degraded I/O, catch-up rebuild" test_2

# catchup_passes: catch-up passes the MDS logged.
catchup_passes()
{
	grep -c "catch-up of OST" "$CDIR/log/mds.log" || true
}

# passes_gt N: the MDS logged more than N catch-up passes.
passes_gt()
{
	[ "$(catchup_passes)" -gt "$1" ]
}

test_3()
{
	local d=$WORK/rw f=$MNT/rw/big before pid n rc=0
	mkdir -p "$d" "$MNT/rw"
	mkdata "$d/ref" $((32 * S + 12345)) 33
	oss_stop "$VICTIM"
	cp "$d/ref" "$f" || rc=1
	sync "$f" || rc=1
	[ "$(stale_count "$MNT/rw")" -gt 0 ] || rc=2
	before=$(catchup_passes)
	oss_start "$VICTIM"
	assert_eq "$rc" 0 "writing with OSS $VICTIM down, and a stale mark"
	# Partial-row writes (the parity read-modify-write kind) go on from
	# before the catch-up starts until after it has passed.
	python3 "$LOAD" patch "$d/ref" "$f" 77 "$d/stop" > "$d/patches" &
	pid=$!
	wait_until "$CATCHUP_WAIT" passes_gt "$before" || rc=3
	touch "$d/stop"
	wait "$pid" || rc=4
	n=$(cat "$d/patches")
	echo "$n patches while OST $VICTIM caught up"
	assert_eq "$rc" 0 "patching while the catch-up ran"
	wait_until "$CATCHUP_WAIT" no_stale "$MNT/rw" ||
		_e2e_assert_failed "stale marks left on the patched file"
	cmp_uncached "$d/ref" "$f"
	# Its shards on the caught-up OST hold the patched bytes too.
	oss_stop "${OTHERS[@]}"
	rc=0
	cmp_uncached "$d/ref" "$f" || rc=1
	oss_start "${OTHERS[@]}"
	assert_eq "$rc" 0 "the patched file read with OSS ${OTHERS[*]} down"
}
run_test 3 "a file patched while the catch-up rebuilds it reads back exactly" test_3

# Files cut to nothing while OSS $VICTIM is down skip its shards, which
# keep their old bytes; the catch-up must leave those shards holding no
# more than it rebuilt.  Rewritten shorter afterwards (a row only partly
# filled, so parity counts the rest of the row as zeros), each file must
# read back exactly when the rest of the row has to be decoded.  One file
# per first OST, so OST $VICTIM holds every kind of chunk in one of them.
test_4()
{
	local d=$WORK/cut i f rc=0
	local -a fs=()
	mkdir -p "$d" "$MNT/cut"
	mkdata "$d/old" $((9 * S)) 41
	mkdata "$d/new" $((S + 5)) 42
	for i in $(seq 0 $((OSTS - 1))); do
		fs+=("$MNT/cut/f$i")
		"$NACRE" setstripe -i "$i" "$MNT/cut/f$i" || rc=1
		cp "$d/old" "$MNT/cut/f$i" || rc=1
	done
	sync "${fs[@]}" || rc=1
	assert_eq "$rc" 0 "writing the files"
	oss_stop "$VICTIM"
	truncate -s 0 "${fs[@]}" || rc=1
	oss_start "$VICTIM"
	assert_eq "$rc" 0 "truncating with OSS $VICTIM down"
	wait_until "$CATCHUP_WAIT" no_stale "$MNT/cut" ||
		_e2e_assert_failed "stale marks left after the catch-up"
	for f in "${fs[@]}"; do
		cp "$d/new" "$f" || rc=1
	done
	sync "${fs[@]}" || rc=1
	assert_eq "$rc" 0 "rewriting the files"
	oss_stop "${OTHERS[@]}"
	for f in "${fs[@]}"; do
		cmp_uncached "$d/new" "$f" || rc=1
	done
	oss_start "${OTHERS[@]}"
	assert_eq "$rc" 0 "files rewritten after a missed truncation, read with OSS ${OTHERS[*]} down"
}
run_test 4 "a truncation missed by a down OST leaves no old bytes behind its catch-up" test_4

# Small files packed while OSS $VICTIM is down leave its shard of their
# pack stale; the catch-up rebuilds packs too, so that with two other
# OSSes down every file still reads back exactly.
test_5()
{
	local d=$WORK/pk i rc=0
	mkdir -p "$d" "$MNT/pk"
	"$NACRE" setstripe --pack "$MNT/pk"
	for i in $(seq 1 40); do
		mkdata "$d/s$i" $((20000 + i * 4999)) "$((500 + i))"
	done
	# A pack laid out over every OST, then more files into it with one down.
	for i in $(seq 1 10); do
		cp "$d/s$i" "$MNT/pk/s$i" || rc=1
	done
	sync "$MNT"/pk/s* || rc=1
	oss_stop "$VICTIM"
	for i in $(seq 11 40); do
		cp "$d/s$i" "$MNT/pk/s$i" || rc=1
	done
	sync "$MNT"/pk/s* || rc=1
	[ "$(stale_count "$MNT/pk")" -gt 0 ] || rc=2
	oss_start "$VICTIM"
	assert_eq "$rc" 0 "packing files with OSS $VICTIM down, and a stale mark on their pack"
	wait_until "$CATCHUP_WAIT" no_stale "$MNT/pk" ||
		_e2e_assert_failed "the pack's stale marks left after the catch-up"
	oss_stop "${OTHERS[@]}"
	for i in $(seq 1 40); do
		cmp_uncached "$d/s$i" "$MNT/pk/s$i" || rc=1
	done
	oss_start "${OTHERS[@]}"
	assert_eq "$rc" 0 "packed files read with OSS ${OTHERS[*]} down after the catch-up"
}
run_test 5 "the catch-up rebuilds packs written with an OSS down" test_5

# The rebuild holds the file's lock, so it must not wait for an OSS that
# is down (the client's retry time is 60 s, and a writer waiting that long
# for the lock gives up).  Before, a catch-up with another OSS down took a
# minute per file.
CATCHUP_QUICK=40
test_6()
{
	local d=$WORK/six rc=0
	mkdir -p "$d" "$MNT/six"
	mkdata "$d/old" $((9 * S)) 601
	mkdata "$d/new" $((9 * S)) 602
	cp "$d/old" "$MNT/six/f" && sync "$MNT/six/f" || rc=1
	oss_stop "$VICTIM"
	cp "$d/new" "$MNT/six/f" && sync "$MNT/six/f" || rc=1
	[ "$(stale_count "$MNT/six")" -gt 0 ] || rc=2
	oss_stop "${OTHERS[0]}"
	oss_start "$VICTIM"
	assert_eq "$rc" 0 "a file rewritten with OSS $VICTIM down, a stale mark on it"
	wait_until "$CATCHUP_QUICK" no_stale "$MNT/six" ||
		_e2e_assert_failed "stale mark left $CATCHUP_QUICK s after OSS $VICTIM came back with OSS ${OTHERS[0]} down"
	oss_start "${OTHERS[0]}"
	oss_stop "${OTHERS[@]}"
	cmp_uncached "$d/new" "$MNT/six/f" || rc=1
	oss_start "${OTHERS[@]}"
	assert_eq "$rc" 0 "the file read with OSS ${OTHERS[*]} down after the catch-up"
}
run_test 6 "a catch-up with another OSS down does not wait for it" test_6

finish
