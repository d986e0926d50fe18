#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: the cluster key.  nacre-cluster makes DIR/cluster.key
# (mode 0600) and every daemon, the mount and the CLI prove they hold it.
# A CLI or a mount with a wrong key, a key file others may read, a
# malformed or missing one gets nothing and a clear error; a raw peer that
# skips the handshake is refused by the MDS and the OSSes alike; daemons
# without a usable key do not start.  Through all of it the daemons stay
# up, the refusals are in their logs, and data written before reads back.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

OSTS=2 cluster_up
WORK=$(mktemp -d "$CDIR/e2e-auth.XXXXXX")
AUTH_ERR="authentication failed: wrong or missing cluster key"

# A key file of another cluster, mode 0600.
WRONG=$WORK/wrong.key
(
	umask 077
	printf '# another cluster\n%s\n' "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$WRONG"
)

test_1()
{
	local mode line

	assert_eq "$NACRE_KEYFILE" "$CDIR/cluster.key" "NACRE_KEYFILE from cluster.conf"
	mode=$(stat -c %a -- "$NACRE_KEYFILE")
	assert_eq "$mode" "600" "mode of the cluster key"
	line=$(grep -v '^#' -- "$NACRE_KEYFILE")
	[[ $line =~ ^[0-9a-f]{64}$ ]] || _e2e_assert_failed "key line '$line' is not 64 hex digits"
	assert_eq "$(status_json | jget 'd["keyfile"]')" "$NACRE_KEYFILE" "keyfile in status --json"
	# Data written now must survive everything below.
	mkdata "$WORK/ref" 3000000 41
	cp "$WORK/ref" "$MNT/before"
	assert_file_eq "$WORK/ref" "$MNT/before"
}
run_test 1 "nacre-cluster made the cluster key (mode 0600, 64 hex digits)" test_1

test_2()
{
	# Through the mount (the key from NACRE_KEYFILE), and by address with
	# the key named explicitly and no environment.
	"$NACRE" osts "$MNT" | grep -w up
	env -u NACRE_KEYFILE "$NACRE" --mds "$MDS_ADDR" --fsname "$FSNAME" \
		--keyfile "$CDIR/cluster.key" getstripe /before | grep -i stripe
}
run_test 2 "the CLI with the right key works" test_2

test_3()
{
	local t0 rc=0

	t0=$SECONDS
	assert_errno "$AUTH_ERR" "$NACRE" --keyfile "$WRONG" osts "$MNT"
	# The message names the key file tried.
	assert_errno "key file $WRONG" "$NACRE" --keyfile "$WRONG" df "$MNT"
	# By address too, and from the environment; --keyfile wins over it.
	assert_errno "$AUTH_ERR" "$NACRE" --mds "$MDS_ADDR" --fsname "$FSNAME" \
		--keyfile "$WRONG" getstripe /before
	assert_errno "$AUTH_ERR" env NACRE_KEYFILE="$WRONG" "$NACRE" osts "$MNT"
	env NACRE_KEYFILE="$WRONG" "$NACRE" --keyfile "$CDIR/cluster.key" osts "$MNT" >/dev/null
	# A refusal is final: no waiting out the retry window.
	[ $((SECONDS - t0)) -lt 20 ] || _e2e_assert_failed "refusals took $((SECONDS - t0)) s"
	"$NACRE" --keyfile "$WRONG" osts "$MNT" >/dev/null 2>&1 || rc=$?
	assert_eq "$rc" "1" "exit status of a refused CLI"
	# A key file argument that is empty is a usage error.
	rc=0
	"$NACRE" --keyfile "" osts "$MNT" >/dev/null 2>&1 || rc=$?
	assert_eq "$rc" "2" "exit status of --keyfile ''"
}
run_test 3 "the CLI with a wrong key fails with a clear error" test_3

test_4()
{
	local k=$WORK/open.key

	cp -- "$CDIR/cluster.key" "$k"
	chmod 0644 "$k"
	assert_errno "may be read by group or others" "$NACRE" --keyfile "$k" osts "$MNT"
	assert_errno "key file $k" "$NACRE" --keyfile "$k" osts "$MNT"
	chmod 0640 "$k"
	assert_errno "may be read by group or others" "$NACRE" --keyfile "$k" osts "$MNT"
	# Malformed, and missing.
	printf 'not a key\n' >"$WORK/bad.key"
	chmod 0600 "$WORK/bad.key"
	assert_errno "malformed" "$NACRE" --keyfile "$WORK/bad.key" osts "$MNT"
	assert_errno "cluster key file not found" "$NACRE" --keyfile "$WORK/none.key" osts "$MNT"
	# The readable copy is the right key: with mode 0600 it works.
	chmod 0600 "$k"
	"$NACRE" --keyfile "$k" osts "$MNT" >/dev/null
}
run_test 4 "key files others may read, malformed or missing are refused" test_4

AUTH_MNT=""
auth_umount()
{
	if [ -n "$AUTH_MNT" ] && mountpoint -q "$AUTH_MNT"; then
		fusermount3 -u "$AUTH_MNT" || true
	fi
}

test_5()
{
	local rc=0 log=$WORK/mount-wrong.log

	AUTH_MNT=$(mktemp -d "$WORK/mnt.XXXXXX")
	trap auth_umount EXIT
	"$MOUNT_NACRE" "$MDS_ADDR:/$FSNAME" "$AUTH_MNT" -o "keyfile=$WRONG,log=$log" \
		>"$WORK/mount.out" 2>&1 || rc=$?
	cat "$WORK/mount.out" "$log" 2>/dev/null || true
	[ "$rc" -ne 0 ] || _e2e_assert_failed "mount.nacre with a wrong key succeeded"
	assert_fail mountpoint -q "$AUTH_MNT"
	grep -qF "$AUTH_ERR" "$WORK/mount.out" "$log" ||
		_e2e_assert_failed "mount.nacre did not say '$AUTH_ERR'"
	# The same mount with the cluster's key works.
	"$MOUNT_NACRE" "$MDS_ADDR:/$FSNAME" "$AUTH_MNT" \
		-o "keyfile=$CDIR/cluster.key,log=$WORK/mount-right.log"
	wait_until 10 mountpoint -q "$AUTH_MNT"
	assert_file_eq "$WORK/ref" "$AUTH_MNT/before"
	fusermount3 -u "$AUTH_MNT"
}
run_test 5 "mount.nacre -o keyfile= with a wrong key fails" test_5

# raw_ping PORT: a PING as the first message, no handshake; prints the
# reply's status and whether the server closed the connection.
raw_ping()
{
	python3 - "$HOST" "$1" <<'PYEOF'
import socket, struct, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
# magic, version 1.3, PING, flags, status, reqid, body, bulk
s.sendall(struct.pack("<IHHIiQII", 0x4e43524d, 0x0103, 2, 0, 0, 7, 0, 0))
hdr = b""
while len(hdr) < 32:
    b = s.recv(32 - len(hdr))
    if not b:
        break
    hdr += b
status = struct.unpack_from("<i", hdr, 12)[0] if len(hdr) == 32 else None
closed = s.recv(1) == b""
print(status, "closed" if closed else "open")
PYEOF
}

test_6()
{
	[ "$XPRT" = tcp ] || { echo "raw TCP bytes: skipped over $XPRT"; return 0; }
	# 1010 is the AUTH wire status.
	assert_eq "$(raw_ping "$PORT")" "1010 closed" "the MDS to a PING before the handshake"
	assert_eq "$(raw_ping $((PORT + 1)))" "1010 closed" "an OSS to a PING before the handshake"
	grep -E "refused .*PING \(opcode 2\) before authentication" "$CDIR/log/oss0.log"
}
run_test 6 "the MDS and the OSSes refuse requests before authentication" test_6

test_7()
{
	local k=$WORK/mds-new.key rc=0 mds="$NACRE_BIN_DIR/mds/nacre-mds"
	local oss="$NACRE_BIN_DIR/oss/nacre-oss"

	# Formatting an MDT creates the key named, mode 0600...
	timeout 20 "$mds" --dir "$WORK/mdt2" --fsname authfs --listen tcp://127.0.0.1:0 \
		--format --keyfile "$k" --pidfile "$WORK/mds2.pid" >"$WORK/mds2.log" 2>&1 &
	wait_until 10 test -s "$WORK/mds2.pid"
	assert_eq "$(stat -c %a -- "$k")" "600" "mode of the key made by --format"
	grep -q "created the cluster key $k" "$WORK/mds2.log"
	kill -TERM "$(cat "$WORK/mds2.pid")"
	wait "$!" || true
	wait_gone 10 "$WORK/mds2.pid"
	# ...and a key readable by others keeps the daemons from starting.
	chmod 0644 "$k"
	timeout 20 "$mds" --dir "$WORK/mdt2" --fsname authfs --listen tcp://127.0.0.1:0 \
		--keyfile "$k" >"$WORK/mds3.log" 2>&1 || rc=$?
	cat "$WORK/mds3.log"
	assert_eq "$rc" "1" "exit status of nacre-mds with an open key file"
	grep -q "cluster key $k: cluster key file may be read by group or others" "$WORK/mds3.log"
	rc=0
	timeout 20 "$oss" --mds "$MDS_ADDR" --fsname "$FSNAME" --listen tcp://127.0.0.1:0 \
		--ost "9:$WORK/ost9" --format --keyfile "$WORK/none.key" >"$WORK/oss9.log" 2>&1 ||
		rc=$?
	cat "$WORK/oss9.log"
	assert_eq "$rc" "1" "exit status of nacre-oss without a key file"
	grep -q "cluster key $WORK/none.key: cluster key file not found" "$WORK/oss9.log"
}
run_test 7 "daemons: --format creates the key; no usable key, no start" test_7

test_8()
{
	local name pid

	# Every daemon survived the refusals.
	for name in mds oss0 oss1; do
		pid=$(cluster_pid "$name")
		kill -0 "$pid" || _e2e_assert_failed "$name (pid $pid) is gone"
	done
	# The refusals are logged with the peer.
	grep -E "refused tcp://[0-9.]+:[0-9]+ \(connection [0-9]+\): authentication failed" \
		"$CDIR/log/mds.log"
	# Data written before reads back, through the mount and libnacre.
	drop_caches || true
	assert_file_eq "$WORK/ref" "$MNT/before"
	assert_eq "$("$NACRE" osts "$MNT" | grep -cw up)" "2" "OSTs up"
}
run_test 8 "daemons alive, refusals logged, data intact" test_8

finish
