#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: kill -9 in a loop under load.  On a 6-OST filesystem
# (EC 4+2), writers create files of varied sizes from a seeded generator
# (through the mount, and through libnacre when the Python bindings can
# load it; one writes small files into a packing directory), fsync them
# and only then journal their name and sha256, while
# a loop kills a random daemon (the MDS or one OSS: at most one daemon down
# at a time, so every row stays readable) with SIGKILL at random moments
# and starts it again, for NACRE_E2E_CRASH_SECONDS (default 60).  Writer
# errors during the chaos are allowed and counted; a writer that hangs is
# not.  Afterwards every daemon runs (each started without any repair),
# the catch-up rebuild clears every stale mark, every journaled file reads
# back exactly, `nacre scrub` finds nothing wrong, and the mount still
# creates, writes and reads files.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

OSTS=6
export OSTS
cluster_up
WORK=$(mktemp -d "$CDIR/e2e-crash.XXXXXX")
LOAD=$E2E_LIB_DIR/io_load.py
CHAOS=${NACRE_E2E_CRASH_SECONDS:-60}
# Generous: a loaded machine (or a sanitizer build) is slow.
CATCHUP_WAIT=240
# A writer still running this long after the chaos ends is hung.
WRITER_GRACE=300
# Pause of each writer after a file: bounds the files to check afterwards.
PACE=0.5
SEED=${NACRE_E2E_CRASH_SEED:-$$}
echo "chaos for $CHAOS s, seed $SEED (NACRE_E2E_CRASH_SEED to replay the choices)"
RANDOM=$SEED

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

# chaos SECONDS: kills a random daemon now and then, starting it again
# before the next, until SECONDS have passed.  One line per kill in
# $WORK/kills.
chaos()
{
	local end=$((SECONDS + $1)) victim n
	local -a names=(mds oss0 oss1 oss2 oss3 oss4 oss5)

	while [ "$SECONDS" -lt "$end" ]; do
		sleep "$((RANDOM % 3)).$((RANDOM % 10))"
		n=${names[$((RANDOM % ${#names[@]}))]}
		if [ "$n" = mds ]; then
			victim=(mds)
		else
			victim=(oss "${n#oss}")
		fi
		echo "$((SECONDS)) kill ${victim[*]}" >> "$WORK/kills"
		"$CLUSTER" kill "${victim[@]}" --dir "$CDIR" > /dev/null || return 1
		sleep "0.$((RANDOM % 10))"
		# `start` waits until the daemon serves (an OSS: until the MDS
		# lists its OSTs up).
		if ! "$CLUSTER" start "${victim[@]}" --dir "$CDIR" > /dev/null; then
			echo "${victim[*]} did not start again" >&2
			return 1
		fi
	done
}

test_1()
{
	local d=$WORK/load stop=$WORK/load/stop w rc=0 hung=0 errs=0 f json
	local -a pids=() opts
	mkdir -p "$d" "$MNT/crash/pk"
	# Small files packed (and rewritten, which moves them to new extents).
	"$NACRE" setstripe --pack "$MNT/crash/pk"
	# shellcheck disable=SC2064 # the path is that of this run
	trap "touch '$stop'" EXIT

	for w in m1 m2 m3; do
		opts=(--pace "$PACE")
		[ "$w" != m1 ] || opts+=(--rewrite)
		timeout -k 10 $((CHAOS + WRITER_GRACE)) \
			python3 "$LOAD" write posix "$MNT/crash" "$d/j.$w" "$w" "$stop" "${opts[@]}" &
		pids+=("$!")
	done
	if [ "$NACRE_WRITER" = 1 ]; then
		timeout -k 10 $((CHAOS + WRITER_GRACE)) \
			python3 "$LOAD" write nacre /crash "$d/j.n1" n1 "$stop" --pace "$PACE" --rewrite &
		pids+=("$!")
	fi
	timeout -k 10 $((CHAOS + WRITER_GRACE)) \
		python3 "$LOAD" write posix "$MNT/crash/pk" "$d/p.p1" p1 "$stop" --pace "$PACE" \
		--rewrite --small &
	pids+=("$!")
	chaos "$CHAOS" || rc=1
	touch "$stop"
	for w in "${pids[@]}"; do
		wait "$w" || { f=$?; [ "$f" -lt 124 ] || hung=$((hung + 1)); }
	done
	echo "kills: $(wc -l < "$WORK/kills") ($(cut -d' ' -f3 "$WORK/kills" | sort | uniq -c | tr -s ' \n' ' '))"
	local -a js=("$d"/j.m?)
	[ "$NACRE_WRITER" = 0 ] || js+=("$d/j.n1")
	cat "${js[@]}" > "$d/all"
	for f in "$d"/j.*.err "$d"/p.*.err; do
		[ -e "$f" ] || continue
		errs=$((errs + $(wc -l < "$f")))
	done
	echo "writer errors during the chaos (allowed): $errs"
	cat "$d"/j.*.err "$d"/p.*.err 2>/dev/null | head -n 5
	assert_eq "$rc" 0 "the kill loop"
	assert_eq "$hung" 0 "writers that hung"
	# Something was written and acknowledged despite the chaos.
	[ -s "$d/all" ] || _e2e_assert_failed "no write was acknowledged during the chaos"

	# Every daemon runs, each restarted by nacre-cluster alone.
	wait_until 60 all_running || _e2e_assert_failed "daemons not running: $(status_json)"
	if grep -i "corrupt" "$CDIR"/log/mds.log "$CDIR"/log/oss*.log; then
		_e2e_assert_failed "a daemon found damage after the crashes"
	fi

	echo "$(date +%T) daemons up; waiting for the catch-up"
	if ! wait_until "$CATCHUP_WAIT" no_stale "$MNT/crash"; then
		grep -h catch-up "$CDIR/log/mds.log" >&2 || true
		_e2e_assert_failed "stale marks left after $CATCHUP_WAIT s: $(stale_count "$MNT/crash")"
	fi
	echo "$(date +%T) no stale mark left"
	drop_caches || true
	python3 "$LOAD" verify "$d/all" "$MNT/crash"
	python3 "$LOAD" verify "$d/p.p1" "$MNT/crash/pk"
	echo "$(date +%T) verified"

	json=$("$NACRE" --json scrub "$MNT") || _e2e_assert_failed "nacre scrub failed: $json"
	echo "scrub: $(jget '{k: d[k] for k in ("files", "chunks_bad", "errors")}' <<< "$json")"
	assert_eq "$(jget 'd["chunks_bad"]' <<< "$json")" 0 "corrupt chunks found by scrub"
	assert_eq "$(jget 'd["errors"]' <<< "$json")" 0 "scrub errors"
	assert_eq "$(stale_count "$MNT/crash")" 0 "stale shards after scrub"

	# The mount still works.
	mkdata "$WORK/after" $((6 * S + 99)) 4242
	cp "$WORK/after" "$MNT/crash/after"
	sync "$MNT/crash/after"
	cmp_uncached "$WORK/after" "$MNT/crash/after"
}
run_test 1 "kill -9 of random daemons under load: acknowledged data survives" test_1

finish
