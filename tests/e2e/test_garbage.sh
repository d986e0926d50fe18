#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: garbage on the wire.  While a client keeps writing and
# verifying a file through the mount, a script sends malformed messages to
# the MDS and to every OSS.  Each daemon must close the offending
# connections, log why, stay up with bounded memory and go on serving the
# client.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

cluster_up
WORK=$(mktemp -d "$CDIR/e2e-garbage.XXXXXX")
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

cat > "$WORK/fuzz.py" <<'PYEOF'
"""Sends malformed nacre messages to one daemon.

usage: fuzz.py cases|burst HOST PORT

The header (little-endian, 32 bytes): u32 magic, u16 version, u16 opcode,
u32 flags, i32 status, u64 reqid, u32 body_len, u32 bulk_len.
"""
import random
import socket
import struct
import sys
import time

MAGIC = 0x4E43524D
VERSION = (1 << 8) | 0
OP_CONNECT = 1
OP_GETATTR = 21
OP_OBJ_READ = 50
MF_REPLY = 0x1
HDR = struct.Struct("<IHHIiQII")
assert HDR.size == 32

mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
rnd = random.Random(port)
failures = []


def hdr(magic=MAGIC, version=VERSION, opcode=OP_CONNECT, flags=0, status=0,
        reqid=1, body_len=0, bulk_len=0):
    return HDR.pack(magic, version, opcode, flags, status, reqid, body_len,
                    bulk_len)


def connect():
    return socket.create_connection((host, port), timeout=10)


def send(s, data):
    """Sends what the peer takes; a peer that hangs up early is fine."""
    try:
        s.sendall(data)
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False


def drain(s, limit):
    """Reads until EOF: the bytes read, or None if the peer kept the
    connection open for @limit seconds."""
    got = b""
    deadline = time.monotonic() + limit
    s.settimeout(0.5)
    while time.monotonic() < deadline:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return got
        if not chunk:
            return got
        got += chunk
        if len(got) > (1 << 20):
            break
    return None


def expect_close(name, data, limit=10.0):
    """The daemon must drop the connection (an error reply first is fine)."""
    s = connect()
    send(s, data)
    got = drain(s, limit)
    s.close()
    if got is None:
        failures.append("%s: connection still open after %.0f s" % (name, limit))
    else:
        print("%s: closed by the daemon (%d reply bytes)" % (name, len(got)))


def expect_error_or_close(name, data, reqid, limit=10.0):
    """The daemon must answer with an error or drop the connection."""
    s = connect()
    send(s, data)
    s.settimeout(limit)
    got = b""
    try:
        while len(got) < HDR.size:
            chunk = s.recv(HDR.size - len(got))
            if not chunk:
                break
            got += chunk
    except socket.timeout:
        failures.append("%s: neither a reply nor a close in %.0f s" % (name, limit))
        s.close()
        return
    except (ConnectionResetError, BrokenPipeError):
        got = b""
    s.close()
    if len(got) < HDR.size:
        print("%s: closed by the daemon" % name)
        return
    magic, _, _, flags, status, rid, _, _ = HDR.unpack(got)
    if magic != MAGIC or not flags & MF_REPLY or rid != reqid or status == 0:
        failures.append("%s: bad reply magic=%#x flags=%#x reqid=%d status=%d"
                        % (name, magic, flags, rid, status))
    else:
        print("%s: error reply, status %d" % (name, status))


def alive():
    s = connect()
    s.close()


def cases():
    junk = rnd.randbytes(4096)
    if junk[:4] == struct.pack("<I", MAGIC):
        junk = b"\0" + junk[1:]
    expect_close("random bytes", junk)
    alive()
    expect_close("wrong magic", hdr(magic=0xDEADBEEF, body_len=16) + bytes(16))
    expect_close("byte-swapped magic", struct.pack(">I", MAGIC) + hdr()[4:])
    expect_close("4 GiB body", hdr(body_len=0xFFFFFFFF) + bytes(65536))
    expect_close("4 GiB bulk", hdr(opcode=OP_OBJ_READ, bulk_len=0xFFFFFFFF) +
                 bytes(65536))
    expect_close("body over the limit", hdr(body_len=64 << 20) + bytes(65536))
    # A truncated header, then we hang up.
    s = connect()
    send(s, hdr()[:13])
    s.close()
    alive()
    # A truncated body, then we hang up.
    s = connect()
    send(s, hdr(body_len=100) + bytes(50))
    s.close()
    alive()
    expect_error_or_close("unknown opcode before CONNECT",
                          hdr(opcode=0x7ABC, reqid=77), 77)
    expect_error_or_close("request before CONNECT",
                          hdr(opcode=OP_GETATTR, reqid=78, body_len=16) +
                          bytes(16), 78)
    expect_error_or_close("CONNECT of another major version",
                          hdr(version=(9 << 8), reqid=79, body_len=8) +
                          bytes(8), 79)
    expect_error_or_close("CONNECT with a garbage body",
                          hdr(reqid=80, body_len=64) + rnd.randbytes(64), 80)
    # A stray reply: the daemon may drop it or the connection, but lives on.
    s = connect()
    send(s, hdr(flags=MF_REPLY, status=-5, reqid=12345))
    s.close()
    alive()
    # Headers dribbled a byte at a time, then garbage.
    s = connect()
    for b in hdr(magic=0x01020304):
        if not send(s, bytes([b])):
            break
        time.sleep(0.001)
    if drain(s, 5.0) is None:
        failures.append("dribbled bad magic: connection still open after 5 s")
    s.close()
    alive()


def burst():
    opened, refused = 0, 0
    socks = []
    for i in range(200):
        try:
            s = connect()
        except OSError:
            refused += 1
            continue
        opened += 1
        if i % 2:
            # Half of them end with a reset instead of a FIN.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                         struct.pack("ii", 1, 0))
        socks.append(s)
    for s in socks:
        s.close()
    print("burst: %d connections opened together, %d failed" % (opened, refused))
    if opened == 0:
        failures.append("burst: no connection could be opened")
    quick = 0
    for i in range(200):
        try:
            s = connect()
        except OSError:
            continue
        if i % 3 == 0:
            send(s, rnd.randbytes(rnd.randrange(1, 64)))
        s.close()
        quick += 1
    print("burst: %d connections opened and dropped one by one" % quick)
    if quick == 0:
        failures.append("burst: no quick connection could be opened")
    time.sleep(1)
    alive()


try:
    {"cases": cases, "burst": burst}[mode]()
except OSError as e:
    failures.append("%s: %s" % (mode, e))
for f in failures:
    print("FAILED: " + f)
sys.exit(1 if failures else 0)
PYEOF

# The client at work during the attack: write a file, read it back, LOOPS
# times, alternating two contents so that every round changes every byte.
client_loop()
{
	local i src
	for i in $(seq 1 "$LOOPS"); do
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

# Before the attack: the log lines about bad messages there already are.
daemons > "$WORK/daemons"
while read -r name _ _ _; do
	echo "$name $(bad_msg_lines "$name")"
done < "$WORK/daemons" > "$WORK/bad-before"
mkdata "$WORK/loop-a" $((3 * S + 5)) 1
mkdata "$WORK/loop-b" $((3 * S + 5)) 2
mkdir "$MNT/loop"
client_loop &
LOOP_PID=$!

test_1()
{
	local name host port
	read -r name _ host port < <(grep '^mds ' "$WORK/daemons")
	echo "attacking $name at $host:$port"
	python3 "$WORK/fuzz.py" cases "$host" "$port"
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
		python3 "$WORK/fuzz.py" cases "$host" "$port"
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
		python3 "$WORK/fuzz.py" burst "$host" "$port"
	done < "$WORK/daemons"
}
run_test 3 "200 connections opened and dropped quickly, on every daemon" test_3

test_4()
{
	wait_until 300 test -e "$WORK/loop.done" || true
	cat "$WORK/loop.log"
	assert_eq "$(cat "$WORK/loop.done" 2> /dev/null)" "ok" "result of the client loop"
	assert_eq "$(grep -c ' ok$' "$WORK/loop.log")" "$LOOPS" "rounds that succeeded"
}
run_test 4 "the client wrote and verified its file $LOOPS times meanwhile" test_4

test_5()
{
	status_json > "$WORK/status.json"
	cat "$WORK/status.json"
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
run_test 5 "every daemon is still running and serving" test_5

test_6()
{
	local name pid rss
	while read -r name pid _ _; do
		rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
		echo "$name (pid $pid): VmRSS $rss kB"
		[ -n "$rss" ]
		if [ "$rss" -ge $((500 * 1024)) ]; then
			echo "$name uses $rss kB, over 500 MiB" >&2
			false
		fi
	done < "$WORK/daemons"
}
run_test 6 "each daemon's memory stays under 500 MiB" test_6

test_7()
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
	done < "$WORK/bad-before"
}
run_test 7 "the daemons logged the malformed messages" test_7

if kill -0 "$LOOP_PID" 2> /dev/null; then
	kill "$LOOP_PID"
fi
wait "$LOOP_PID" 2> /dev/null
rm -rf "$MNT/loop" "$MNT/after"
finish
