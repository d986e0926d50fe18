#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: garbage on the wire.  While a client keeps writing and
# verifying a file through the mount, tests/e2e/fuzz.py sends malformed
# messages to the MDS and to every OSS, before authentication and after it
# (a peer holding the cluster key: every opcode with random, truncated and
# mis-sized bodies, absurd field values, every role, floods of small
# requests, peers that reset their connections with requests in flight).
# Each daemon must answer with an error or close the offending connection,
# log why with the peer's address, stay up with bounded memory, leave the
# namespace as it was and go on serving the client.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

# With the sanitizers, freed memory waits in ASan's quarantine (256 MiB by
# default) before it is reused, which would show as growth: the daemons
# get a small one, so that the memory bound below means the same in both
# builds.
if e2e_sanitized; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
fi
cluster_up
WORK=$(mktemp -d "$CDIR/e2e-garbage.XXXXXX")
# The client loop runs at least LOOPS rounds, and until the attacks end.
LOOPS=20
# What a daemon's log says about a bad message.
BAD_MSG_RE='malformed|protocol|bad magic|invalid'

# daemons: "NAME PID HOST PORT" for each daemon of the cluster.
daemons()
{
	status_json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for x in d["daemons"]:
    addr = x["address"].split("://", 1)[-1]
    host, port = addr.rsplit(":", 1)
    print(x["name"], x["pid"], host, port)
'
}

# daemon_log NAME: the log file of daemon NAME.
daemon_log()
{
	local f
	for f in "$CDIR/log/$1.log" "$CDIR"/log/*"$1"*.log; do
		if [ -f "$f" ]; then
			echo "$f"
			return 0
		fi
	done
	echo "no log file for $1 in $CDIR/log" >&2
	return 1
}

# bad_msg_lines NAME: how many lines of NAME's log talk about bad messages.
bad_msg_lines()
{
	local log
	log=$(daemon_log "$1") || return 1
	grep -c -i -E "$BAD_MSG_RE" "$log" || true
}

FUZZ="$top_srcdir/tests/e2e/fuzz.py"

# The client at work during the attack: write a file, read it back, at
# least LOOPS times and until $WORK/stop exists, alternating two contents so
# that every round changes every byte.
client_loop()
{
	local i=0 src
	while [ "$i" -lt "$LOOPS" ] || [ ! -e "$WORK/stop" ]; do
		i=$((i + 1))
		if [ $((i % 2)) -eq 0 ]; then
			src=$WORK/loop-a
		else
			src=$WORK/loop-b
		fi
		if ! timeout -k 5 120 cp "$src" "$MNT/loop/file" ||
			! timeout -k 5 120 cmp "$src" "$MNT/loop/file"; then
			echo "round $i failed" >> "$WORK/loop.log"
			echo fail > "$WORK/loop.done"
			return 1
		fi
		echo "round $i ok" >> "$WORK/loop.log"
		sleep 0.5
	done
	echo ok > "$WORK/loop.done"
}

# rss PID: the resident memory of PID in kB.
rss()
{
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# all_alive: every daemon of the cluster is still the process it was.
all_alive()
{
	local name pid
	while read -r name pid _ _; do
		if ! kill -0 "$pid" 2> /dev/null; then
			echo "$name (pid $pid) is gone" >&2
			return 1
		fi
	done < "$WORK/daemons"
}

# tree_sum DIR: every path under DIR with its type, size and (for files)
# sha256, sorted.
tree_sum()
{
	(cd "$1" && find . -printf '%y %s %p\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0 sha256sum)
}

# Before the attack: the log lines about bad messages there already are, a
# tree of files to compare afterwards, and the memory of every daemon once
# it has served some client work.
daemons > "$WORK/daemons"
while read -r name _ _ _; do
	echo "$name $(bad_msg_lines "$name")"
done < "$WORK/daemons" > "$WORK/bad-before"
mkdata "$WORK/loop-a" $((3 * S + 5)) 1
mkdata "$WORK/loop-b" $((3 * S + 5)) 2
mkdir -p "$MNT/keep/sub/deeper" "$MNT/loop"
mkdata "$MNT/keep/big" $((5 * S + 3)) 3
mkdata "$MNT/keep/sub/small" 1000 4
echo hello > "$MNT/keep/sub/deeper/hello"
ln -s ../big "$MNT/keep/sub/link"
setfattr -n user.fz -v kept "$MNT/keep/big" 2> /dev/null || true
cp "$WORK/loop-a" "$MNT/loop/file"
cmp "$WORK/loop-a" "$MNT/loop/file"
drop_caches || true
tree_sum "$MNT/keep" > "$WORK/keep.before"
while read -r name pid _ _; do
	echo "$name $(rss "$pid")"
done < "$WORK/daemons" > "$WORK/rss-before"
client_loop &
LOOP_PID=$!

test_1()
{
	local name host port
	read -r name _ host port < <(grep '^mds ' "$WORK/daemons")
	echo "attacking $name at $host:$port"
	python3 "$FUZZ" cases "$host" "$port"
	all_alive
}
run_test 1 "malformed messages to the MDS" test_1

test_2()
{
	local name host port count=0
	while read -r name _ host port; do
		if [ "$name" = mds ]; then
			continue
		fi
		echo "attacking $name at $host:$port"
		python3 "$FUZZ" cases "$host" "$port"
		all_alive
		count=$((count + 1))
	done < "$WORK/daemons"
	assert_eq "$count" "${OSTS:-4}" "OSS daemons attacked"
}
run_test 2 "malformed messages to every OSS" test_2

test_3()
{
	local name host port
	while read -r name _ host port; do
		echo "connection burst on $name at $host:$port"
		python3 "$FUZZ" burst "$host" "$port"
		all_alive
	done < "$WORK/daemons"
}
run_test 3 "200 connections opened and dropped quickly, on every daemon" test_3

test_4()
{
	local name host port
	read -r name _ host port < <(grep '^mds ' "$WORK/daemons")
	echo "authenticated attack on $name at $host:$port"
	python3 "$FUZZ" auth "$host" "$port" "$NACRE_KEYFILE" "$FSNAME" \
		"$top_srcdir/common/wire.h"
	all_alive
}
run_test 4 "after authentication: every opcode garbled, absurd values, to the MDS" test_4

test_5()
{
	local name host port count=0
	while read -r name _ host port; do
		if [ "$name" = mds ]; then
			continue
		fi
		echo "authenticated attack on $name at $host:$port"
		python3 "$FUZZ" auth "$host" "$port" "$NACRE_KEYFILE" "$FSNAME" \
			"$top_srcdir/common/wire.h"
		all_alive
		count=$((count + 1))
	done < "$WORK/daemons"
	assert_eq "$count" "${OSTS:-4}" "OSS daemons attacked"
}
run_test 5 "after authentication: every opcode garbled, absurd values, to every OSS" test_5

test_6()
{
	local name host port hog
	while read -r name _ host port; do
		# The peer that never reads costs ~10 s a daemon (the server's
		# stall limit); the MDS and one OSS run the same RPC server code.
		hog=""
		if [ "$name" = mds ] || [ "$name" = oss0 ]; then
			hog=hog
		fi
		echo "flood on $name at $host:$port${hog:+, and a peer that never reads}"
		python3 "$FUZZ" flood "$host" "$port" "$NACRE_KEYFILE" "$FSNAME" $hog
		all_alive
	done < "$WORK/daemons"
}
run_test 6 "after authentication: floods of small requests, a peer that never reads, peers that vanish with requests in flight" test_6

test_7()
{
	touch "$WORK/stop"
	wait_until 300 test -e "$WORK/loop.done" || true
	tail -n 3 "$WORK/loop.log"
	assert_eq "$(cat "$WORK/loop.done" 2> /dev/null)" "ok" "result of the client loop"
	assert_eq "$(grep -c -v ' ok$' "$WORK/loop.log")" "0" "rounds that failed"
	[ "$(grep -c ' ok$' "$WORK/loop.log")" -ge "$LOOPS" ]
}
run_test 7 "the client wrote and verified its file meanwhile, every round" test_7

test_8()
{
	status_json > "$WORK/status.json"
	python3 - "$WORK/status.json" <<'PYEOF'
import json, os, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
for x in d["daemons"]:
    assert x["state"] == "running", "%s is %s" % (x["name"], x["state"])
    assert os.path.exists("/proc/%d" % x["pid"]), "%s is gone" % x["name"]
PYEOF
	# The same processes as before the attack: none was restarted.
	daemons | awk '{ print $1, $2 }' > "$WORK/daemons.after"
	awk '{ print $1, $2 }' "$WORK/daemons" | diff - "$WORK/daemons.after"
	# And they still serve a new client request end to end.
	mkdata "$WORK/after" $((2 * S + 1)) 5
	cp "$WORK/after" "$MNT/after"
	cmp "$WORK/after" "$MNT/after"
	"$NACRE" df "$MNT"
	assert_eq "$("$NACRE" df --json "$MNT" | jget 'sum(1 for t in d["targets"] if t["state"] != "up")')" \
		"0" "targets not up"
}
run_test 8 "every daemon is still running and serving" test_8

test_9()
{
	drop_caches || true
	tree_sum "$MNT/keep" > "$WORK/keep.after"
	diff "$WORK/keep.before" "$WORK/keep.after"
	# Nothing the attacks named was made at the root.
	assert_eq "$(find "$MNT" -mindepth 1 -maxdepth 1 ! -name keep ! -name loop \
		! -name after)" "" "unexpected entries at the root"
}
run_test 9 "the namespace and the files made before are unchanged" test_9

test_10()
{
	local name pid rss0 rss1
	while read -r name pid _ _; do
		rss0=$(awk -v n="$name" '$1 == n { print $2 }' "$WORK/rss-before")
		rss1=$(rss "$pid")
		echo "$name (pid $pid): VmRSS $rss0 kB before, $rss1 kB after"
		[ -n "$rss1" ]
		if [ "$rss1" -ge $((2 * rss0 + 64 * 1024)) ]; then
			echo "$name grew from $rss0 kB to $rss1 kB: over 2x + 64 MiB" >&2
			false
		fi
		if [ "$rss1" -ge $((500 * 1024)) ]; then
			echo "$name uses $rss1 kB, over 500 MiB" >&2
			false
		fi
	done < "$WORK/daemons"
}
run_test 10 "each daemon's memory stays within 2x + 64 MiB of what it was" test_10

test_11()
{
	local name before after log
	while read -r name before; do
		log=$(daemon_log "$name")
		after=$(bad_msg_lines "$name")
		echo "$name: $before lines about bad messages before, $after after"
		grep -i -E "$BAD_MSG_RE" "$log" | tail -n 3
		if [ "$after" -le "$before" ]; then
			echo "$name logged nothing about the malformed messages" >&2
			false
		fi
		# Authenticated garbage: the line names the request and the peer.
		if ! grep -q -E "req [0-9]+ from [a-z]+://[0-9.]+:[0-9]+: malformed" "$log"; then
			echo "$name: no line names the peer of a malformed request" >&2
			false
		fi
	done < "$WORK/bad-before"
}
run_test 11 "the daemons logged the malformed messages and their peers" test_11

if kill -0 "$LOOP_PID" 2> /dev/null; then
	kill "$LOOP_PID"
fi
wait "$LOOP_PID" 2> /dev/null
# Bounded: with a daemon gone, every request waits out the mount's retry.
timeout -k 5 120 rm -rf "$MNT/loop" "$MNT/after" "$MNT/keep" || true
finish
