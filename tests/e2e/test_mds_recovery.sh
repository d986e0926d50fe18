#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: MDS recovery.  A change the MDS executed but whose reply
# was lost (the MDS died between commit and reply) is answered from its
# reply record when the client sends it again, never executed twice; and a
# mount kept busy with namespace changes and writes rides through MDS
# restarts and crashes without one application error.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

cluster_up
WORK=$(mktemp -d "$CDIR/e2e-mds-recovery.XXXXXX")
D="$MNT/recovery"
mkdir "$D"

mds_log()
{
	echo "$CDIR/log/mds.log"
}

# replays: how many resent changes the MDS answered from their record.
replays()
{
	grep -c "was executed before the connection was lost" "$(mds_log)" || true
}

mds_dead()
{
	! kill -0 "$1" 2>/dev/null
}

# lost_reply OPCODE CMD...: runs CMD against an MDS that dies right after
# committing OPCODE, before replying, then starts the MDS again.  CMD must
# succeed, and its change must have been answered from the reply record.
lost_reply()
{
	local op=$1 pid job rc=0 before
	shift

	before=$(replays)
	NACRE_MDS_FAULT="crash-after-commit:$op" "$CLUSTER" restart mds --dir "$CDIR" >/dev/null
	pid=$(cluster_pid mds)
	"$@" > "$WORK/op.out" 2>&1 &
	job=$!
	if ! wait_until 60 mds_dead "$pid"; then
		echo "the MDS did not die at $op" >&2
		kill "$job" 2>/dev/null
		return 1
	fi
	grep -q "fault injection: dying after committing $op" "$(mds_log)"
	"$CLUSTER" start mds --dir "$CDIR" >/dev/null
	# The client waits out the restart (its retry window is 60 s).
	if ! wait_until 90 mds_dead "$job"; then
		echo "$* still blocked 90 s after the MDS came back" >&2
		kill "$job" 2>/dev/null
		return 1
	fi
	wait "$job" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "$* failed (status $rc) across the lost reply:" >&2
		cat "$WORK/op.out" >&2
		return 1
	fi
	assert_eq "$(replays)" $((before + 1)) "replies rebuilt after losing the $op reply"
}

# create_excl PATH: creates PATH with O_EXCL (a second execution would be
# EEXIST) and writes a line into it.
create_excl()
{
	python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
os.write(fd, b"created once\n")
os.close(fd)
' "$1"
}

test_1()
{
	lost_reply CREATE create_excl "$D/excl"
	assert_eq "$(cat "$D/excl")" "created once" "the O_EXCL file"
	lost_reply CREATE mkdir "$D/dir"
	[ -d "$D/dir" ]
	lost_reply LINK ln "$D/excl" "$D/dir/hard"
	assert_eq "$(stat -c %h "$D/excl")" 2 "links after LINK"
	lost_reply RENAME mv "$D/dir/hard" "$D/moved"
	[ ! -e "$D/dir/hard" ]
	assert_eq "$(cat "$D/moved")" "created once" "the renamed link"
	lost_reply UNLINK rm "$D/moved"
	[ ! -e "$D/moved" ]
	assert_eq "$(stat -c %h "$D/excl")" 1 "links after UNLINK"
	lost_reply UNLINK rmdir "$D/dir"
	[ ! -e "$D/dir" ]
	lost_reply CREATE ln -s excl "$D/sym"
	assert_eq "$(readlink "$D/sym")" excl "the symlink"
	lost_reply SETATTR chmod 600 "$D/excl"
	assert_eq "$(stat -c %a "$D/excl")" 600 "mode after SETATTR"
	# The namespace holds exactly what was asked for, once.
	assert_eq "$(cd "$D" && ls | tr '\n' ' ')" "excl sym " "entries"
	# Without the fault the MDS runs as always.
	"$CLUSTER" status --dir "$CDIR" >/dev/null
	echo again > "$D/after"
	assert_eq "$(cat "$D/after")" again "a file after the faults"
}
run_test 1 "a change whose reply was lost is answered from its record, not run twice" test_1

# load N: namespace changes and writes through the mount, each checked;
# the first failure is written to $WORK/load.err.  Stops after N rounds or
# when $WORK/load.stop appears.
load()
{
	local n=$1 i=0 L="$D/load"

	mkdir "$L"
	while [ "$i" -lt "$n" ] && [ ! -e "$WORK/load.stop" ]; do
		i=$((i + 1))
		{
			cp "$WORK/data.$((i % 4))" "$L/f$i" &&
				mkdir "$L/d$i" &&
				ln "$L/f$i" "$L/d$i/link" &&
				mv "$L/f$i" "$L/d$i/file" &&
				rm "$L/d$i/link" &&
				setfattr -n user.round -v "$i" "$L/d$i/file" &&
				cmp "$WORK/data.$((i % 4))" "$L/d$i/file" &&
				if [ $((i % 3)) = 0 ]; then
					rm -r "$L/d$((i - 1))"
				fi
		} 2> "$WORK/load.cmd.err" || {
			echo "round $i failed: $(cat "$WORK/load.cmd.err")" > "$WORK/load.err"
			return 1
		}
	done
	echo "$i" > "$WORK/load.rounds"
}

test_2()
{
	local k job rounds i before

	for k in 0 1 2 3; do
		mkdata "$WORK/data.$k" $((k * 300000 + 1234)) $((k + 40))
	done
	before=$(replays)
	rm -f "$WORK/load.stop" "$WORK/load.err"
	load 100000 &
	job=$!
	for k in restart kill restart kill; do
		sleep 3
		if ! kill -0 "$job" 2>/dev/null; then
			break # failed already
		fi
		echo "MDS: $k"
		if [ "$k" = kill ]; then
			"$CLUSTER" kill mds --dir "$CDIR" >/dev/null
			"$CLUSTER" start mds --dir "$CDIR" >/dev/null
		else
			"$CLUSTER" restart mds --dir "$CDIR" >/dev/null
		fi
	done
	sleep 3
	touch "$WORK/load.stop"
	if ! wait "$job"; then
		cat "$WORK/load.err" >&2
		return 1
	fi
	rounds=$(cat "$WORK/load.rounds")
	echo "$rounds rounds, $(($(replays) - before)) replies rebuilt"
	[ "$rounds" -ge 4 ]
	# What the rounds left: every third round removed the one before.
	for i in $(seq 1 "$rounds"); do
		if [ $((i % 3)) = 2 ] && [ "$i" -lt "$rounds" ]; then
			[ ! -e "$D/load/d$i" ]
			continue
		fi
		cmp "$WORK/data.$((i % 4))" "$D/load/d$i/file"
		assert_eq "$(stat -c %h "$D/load/d$i/file")" 1 "links of round $i"
		assert_eq "$(getfattr --absolute-names -n user.round --only-values \
			"$D/load/d$i/file")" "$i" "xattr of round $i"
	done
}
run_test 2 "a busy mount rides through MDS restarts and crashes without an error" test_2

finish
