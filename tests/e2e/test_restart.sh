#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: restarts.  Data and namespace survive a full stop and
# start of the cluster; a live mount rides through an MDS restart and OSS
# restarts and crashes; the destroy queue outlives an OSS that was down when
# the file was deleted, and leaves an OSS that hangs out after one timeout.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

cluster_up
WORK=$(mktemp -d "$CDIR/e2e-restart.XXXXXX")
# How long a live mount may take to reconnect after a restart.
RECONNECT=60

# oss_names: the OSS daemons, one name a line (oss0, oss1, ...).
oss_names()
{
	status_json | jget '" ".join(x["name"] for x in d["daemons"] if x["name"] != "mds")' |
		tr ' ' '\n'
}

# listing DIR: the namespace under DIR with what must survive a restart.
listing()
{
	(
		cd "$1" &&
			find . \( -type f -printf 'f %m %n %s %T@ %p\n' \) -o \
				\( -type l -printf 'l %p -> %l\n' \) -o \
				-printf '%y %m %p\n' | sort
	)
}

# live PID: prints "running" while PID runs (a zombie does not: nobody
# may reap a daemon that left its parent).
live()
{
	if [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2> /dev/null; then
		echo running
	fi
}

# reads_back REF FILE: FILE has REF's bytes (one attempt, bounded in time so
# that a stuck request cannot hang the suite).
reads_back()
{
	timeout -k 5 90 cmp -s "$1" "$2"
}

# The dataset: a tree of small files, a hard link, a symlink, an xattr and a
# multi-stripe file spanning several rows.
BIG=$((3 * N * S + 4321))

test_1()
{
	local i
	mkdir -p "$WORK/ds/a/b" "$WORK/ds/c"
	for i in $(seq 1 40); do
		mkdata "$WORK/ds/a/small$i" $((i * 997)) "$i"
	done
	for i in $(seq 1 10); do
		mkdata "$WORK/ds/a/b/deep$i" $((i * 5003)) $((100 + i))
	done
	mkdata "$WORK/ds/c/big" "$BIG" 999
	: > "$WORK/ds/c/empty"
	ln "$WORK/ds/a/small1" "$WORK/ds/a/hardlink"
	ln -s ../a/small2 "$WORK/ds/c/symlink"
	cp -a "$WORK/ds" "$MNT/ds"
	setfattr -n user.survives -v yes "$MNT/ds/c/big"
	(cd "$WORK/ds" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$WORK/sums"
	(cd "$MNT/ds" && sha256sum --quiet -c "$WORK/sums")
	listing "$MNT/ds" > "$WORK/listing.before"
	assert_eq "$(wc -l < "$WORK/listing.before")" "$(cd "$WORK/ds" && find . | wc -l)" \
		"entries in the listing"
	sync
}
run_test 1 "write a dataset and record its checksums" test_1

test_2()
{
	local mpid i

	# Small files packed just before the stop: their bytes are still in
	# the mount's client when it is unmounted, and down waits for the
	# mount's process to write them before it stops the servers.
	mkdir "$MNT/packed"
	"$NACRE" setstripe --pack "$MNT/packed"
	mkdata "$WORK/packed" 3000 77
	for i in $(seq 1 200); do
		cp "$WORK/packed" "$MNT/packed/f$i"
	done
	read -r mpid < "$CDIR/mount.pid"
	assert_eq "$(live "$mpid")" "running" "the mount's process named by mount.pid"
	"$CLUSTER" down --dir "$CDIR"
	assert_eq "$(live "$mpid")" "" "the mount's process after down"
	assert_eq "$(ls "$CDIR/mount.pid" 2> /dev/null)" "" "mount.pid after down"
	if mountpoint -q "$MNT"; then
		echo "$MNT is still mounted after down" >&2
		false
	fi
	if [ "$(status_json | jget 'any(x["state"] == "running" for x in d["daemons"])')" != false ]; then
		echo "daemons still running after down" >&2
		false
	fi
	"$CLUSTER" up --dir "$CDIR"
	mountpoint -q "$MNT"
	all_running
	(cd "$MNT/ds" && sha256sum --quiet -c "$WORK/sums")
	for i in $(seq 1 200); do
		cmp "$WORK/packed" "$MNT/packed/f$i"
	done
	rm -r "$MNT/packed"
	listing "$MNT/ds" > "$WORK/listing.after-up"
	diff "$WORK/listing.before" "$WORK/listing.after-up"
	assert_eq "$(getfattr --absolute-names -n user.survives --only-values "$MNT/ds/c/big")" \
		"yes" "xattr after restart"
	assert_eq "$(stat -c %h "$MNT/ds/a/hardlink")" "2" "link count after restart"
	# The restarted filesystem takes new files as before.
	echo new > "$MNT/ds/after-up"
	assert_eq "$(cat "$MNT/ds/after-up")" "new" "a file created after restart"
	rm "$MNT/ds/after-up"
}
run_test 2 "down and up again: checksums and namespace identical, small files packed just before down" test_2

test_3()
{
	"$CLUSTER" restart mds --dir "$CDIR"
	all_running
	# The first requests wait for the mount to reconnect.
	retry "$RECONNECT" timeout -k 5 90 ls "$MNT/ds/a"
	retry "$RECONNECT" reads_back "$WORK/ds/c/big" "$MNT/ds/c/big"
	retry "$RECONNECT" timeout -k 5 90 touch "$MNT/ds/after-mds"
	mkdata "$WORK/after-mds" $((S + 3)) 31
	cp "$WORK/after-mds" "$MNT/ds/after-mds"
	cmp "$WORK/after-mds" "$MNT/ds/after-mds"
	mkdir "$MNT/ds/dir-after-mds"
	mv "$MNT/ds/after-mds" "$MNT/ds/dir-after-mds/moved"
	cmp "$WORK/after-mds" "$MNT/ds/dir-after-mds/moved"
	(cd "$MNT/ds" && sha256sum --quiet -c "$WORK/sums")
	rm -r "$MNT/ds/dir-after-mds"
	listing "$MNT/ds" > "$WORK/listing.after-mds"
	diff "$WORK/listing.before" "$WORK/listing.after-mds"
}
run_test 3 "the live mount works again after an MDS restart" test_3

test_4()
{
	local name
	oss_names > "$WORK/oss.names"
	assert_eq "$(wc -l < "$WORK/oss.names")" "$NOST" "OSS daemons"
	while read -r name; do
		echo "restarting $name"
		"$CLUSTER" restart oss "${name#oss}" --dir "$CDIR"
		all_running
		retry "$RECONNECT" reads_back "$WORK/ds/c/big" "$MNT/ds/c/big"
		cmp "$WORK/ds/c/big" "$MNT/ds/c/big"
	done < "$WORK/oss.names"
	(cd "$MNT/ds" && sha256sum --quiet -c "$WORK/sums")
}
run_test 4 "restart each OSS in turn and re-read the multi-stripe file" test_4

test_5()
{
	local pid
	if [ "$NOST" -lt 2 ]; then
		echo "SKIP (needs 2 OSS, have $NOST)"
		return 0
	fi
	pid=$(cluster_pid oss1)
	"$CLUSTER" kill oss 1 --dir "$CDIR"
	if [ -n "$(live "$pid")" ]; then
		echo "oss1 (pid $pid) still alive after kill" >&2
		false
	fi
	assert_eq "$(status_json | jget '[x["state"] for x in d["daemons"] if x["name"] == "oss1"][0]')" \
		"stopped" "state of oss1 after kill"
	"$CLUSTER" start oss 1 --dir "$CDIR"
	all_running
	retry "$RECONNECT" reads_back "$WORK/ds/c/big" "$MNT/ds/c/big"
	cmp "$WORK/ds/c/big" "$MNT/ds/c/big"
	# Writes reach the restarted OSS too.
	mkdata "$WORK/after-kill" $((N * S + 99)) 55
	retry "$RECONNECT" timeout -k 5 90 cp "$WORK/after-kill" "$MNT/ds/after-kill"
	cmp "$WORK/after-kill" "$MNT/ds/after-kill"
	rm "$MNT/ds/after-kill"
}
run_test 5 "kill oss 1, start it again and read" test_5

test_6()
{
	local name osts ost p down_objs up_objs
	mkdata "$WORK/doomed" $((N * S)) 66
	cp "$WORK/doomed" "$MNT/ds/doomed"
	"$NACRE" getstripe --json "$MNT/ds/doomed"
	shard_objects "$MNT/ds/doomed" > "$WORK/doomed.objs"
	# The last OSS goes down; its OSTs' objects of this file cannot be
	# destroyed until it is back.
	name=$(oss_names | tail -n 1)
	osts=$(status_json | jget '" ".join(str(o) for x in d["daemons"] if x["name"] == "'"$name"'" for o in x["osts"])')
	down_objs=()
	up_objs=()
	while read -r _ ost p; do
		test -e "$p"
		if [[ " $osts " == *" $ost "* ]]; then
			down_objs+=("$p")
		else
			up_objs+=("$p")
		fi
	done < "$WORK/doomed.objs"
	echo "$name serves OSTs $osts; objects there: ${down_objs[*]}"
	[ "${#down_objs[@]}" -ge 1 ]
	"$CLUSTER" stop oss "${name#oss}" --dir "$CDIR"
	rm "$MNT/ds/doomed"
	if [ -e "$MNT/ds/doomed" ]; then
		echo "doomed still exists after rm" >&2
		false
	fi
	if [ "${#up_objs[@]}" -gt 0 ]; then
		wait_gone 30 "${up_objs[@]}"
	fi
	for p in "${down_objs[@]}"; do
		test -e "$p"
	done
	# Retried once the OSS is back.
	"$CLUSTER" start oss "${name#oss}" --dir "$CDIR"
	all_running
	wait_gone 30 "${down_objs[@]}"
}
run_test 6 "a file deleted while an OSS is down loses its objects once it is back" test_6

test_7()
{
	# An OSS that hangs (stopped: its connections stay open, nothing
	# answers) while files with objects on it are deleted.  The MDS's
	# first destroy there (or its statfs poll, whichever asks first)
	# times out (10 s) and the OST counts as down at once: the other
	# records' destroys leave it out instead of waiting one timeout each,
	# and the other OSTs' objects go within one timeout.  Once it answers
	# again its objects go too.
	local i name ost pid up_objs=() hung_objs=() o p
	name=$(oss_names | tail -n 1)
	ost=$(status_json | jget '[x["osts"] for x in d["daemons"] if x["name"] == "'"$name"'"][0][0]')
	mkdir "$MNT/hung"
	for i in $(seq 1 8); do
		mkdata "$WORK/hung$i" $((N * S)) $((700 + i))
		cp "$WORK/hung$i" "$MNT/hung/f$i"
		while read -r _ o p; do
			if [ "$o" = "$ost" ]; then
				hung_objs+=("$p")
			else
				up_objs+=("$p")
			fi
		done < <(shard_objects "$MNT/hung/f$i")
	done
	assert_eq "${#hung_objs[@]}" 8 "objects on OST $ost"
	sync
	pid=$(cluster_pid "$name")
	STOPPED_PID=$pid
	kill -STOP "$pid"
	rm -r "$MNT/hung"
	# One destroy timeout (10 s) and a pass, generous for a loaded
	# machine; 8 timeouts in a row would take 80 s.
	wait_gone 40 "${up_objs[@]}"
	wait_until 10 eval '[ "$(ost_state "$ost")" = down ]'
	grep -q "OST $ost does not answer" "$CDIR/log/mds.log"
	for p in "${hung_objs[@]}"; do
		test -e "$p"
	done
	kill -CONT "$pid"
	STOPPED_PID=""
	wait_until 40 eval '[ "$(ost_state "$ost")" = up ]'
	wait_gone 60 "${hung_objs[@]}"
}
run_test 7 "a file deleted while an OSS hangs: destroys leave it out after one timeout" test_7

test_8()
{
	all_running
	(cd "$MNT/ds" && sha256sum --quiet -c "$WORK/sums")
	listing "$MNT/ds" > "$WORK/listing.end"
	diff "$WORK/listing.before" "$WORK/listing.end"
}
run_test 8 "after all restarts the dataset is intact" test_8

finish
