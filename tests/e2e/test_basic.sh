#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: a cluster comes up, the FUSE mount works for the simplest
# operations, and the launcher reports every daemon as running.
#
# Listing with ls is what these tests exercise.
# shellcheck disable=SC2010,SC2012

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

cluster_up
WORK=$(mktemp -d "$CDIR/e2e-basic.XXXXXX")

test_1()
{
	local mnt type
	mnt=$(realpath "$MNT")
	type=$(awk -v m="$mnt" '$2 == m { t = $3 } END { print t }' /proc/mounts)
	assert_eq "$type" "fuse.nacre" "filesystem type of $mnt in /proc/mounts"
	mountpoint -q "$MNT"
	# The mount's root is a directory we can list and stat.
	test -d "$MNT"
	ls -la "$MNT" > /dev/null
	stat "$MNT" > /dev/null
}
run_test 1 "the mount is a fuse.nacre mount" test_1

test_2()
{
	printf 'hello, nacre\nsecond line\n' > "$WORK/hello"
	cp "$WORK/hello" "$MNT/hello"
	assert_file_eq "$WORK/hello" "$MNT/hello"
	assert_eq "$(cat "$MNT/hello")" "$(printf 'hello, nacre\nsecond line')" "content of hello"
	assert_eq "$(stat -c %s "$MNT/hello")" "25" "size of hello"
	test -f "$MNT/hello"
	# Overwrite with shorter content: the old tail must not survive.
	printf 'bye\n' > "$MNT/hello"
	assert_eq "$(cat "$MNT/hello")" "bye" "content after overwrite"
	assert_eq "$(stat -c %s "$MNT/hello")" "4" "size after overwrite"
	rm "$MNT/hello"
	if test -e "$MNT/hello"; then
		echo "hello still exists after rm" >&2
		false
	fi
}
run_test 2 "write and read back a small file" test_2

test_3()
{
	mkdir "$MNT/d1"
	mkdir -p "$MNT/d1/sub/deeper"
	: > "$MNT/d1/a"
	echo b > "$MNT/d1/b"
	test -d "$MNT/d1/sub/deeper"
	assert_eq "$(ls "$MNT/d1" | tr '\n' ' ')" "a b sub " "ls of d1"
	assert_eq "$(ls -A "$MNT/d1/sub")" "deeper" "ls of d1/sub"
	assert_eq "$(ls -A "$MNT/d1/sub/deeper" | wc -l)" "0" "deeper is empty"
	assert_eq "$(stat -c %F "$MNT/d1/sub")" "directory" "type of d1/sub"
	assert_eq "$(stat -c %F "$MNT/d1/b")" "regular file" "type of d1/b"
	assert_eq "$(cat "$MNT/d1/b")" "b" "content of d1/b"
	# The new directory shows up in its parent's listing.
	ls "$MNT" | grep -x d1 > /dev/null
	rmdir "$MNT/d1/sub/deeper"
	assert_eq "$(ls -A "$MNT/d1/sub" | wc -l)" "0" "sub is empty after rmdir"
}
run_test 3 "mkdir and ls" test_3

test_4()
{
	local total avail
	total=$(df -P -k "$MNT" | awk 'NR == 2 { print $2 }')
	avail=$(df -P -k "$MNT" | awk 'NR == 2 { print $4 }')
	echo "df: total ${total} KiB, available ${avail} KiB"
	[ -n "$total" ] && [ "$total" -gt 0 ]
	[ -n "$avail" ] && [ "$avail" -gt 0 ]
	[ "$avail" -le "$total" ]
	# statfs reports a real block size and file name limit too.
	[ "$(stat -f -c %S "$MNT")" -gt 0 ]
	[ "$(stat -f -c %l "$MNT")" -ge 255 ]
}
run_test 4 "df on the mount reports a total > 0" test_4

test_5()
{
	local json
	json=$("$CLUSTER" status --json --dir "$CDIR")
	printf '%s\n' "$json" > "$WORK/status.json"
	# It must be valid JSON with the mds and one oss per OST, all running.
	python3 - "$WORK/status.json" "$NOST" <<'PYEOF'
import json, os, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
nost = int(sys.argv[2])
daemons = d["daemons"]
names = [x["name"] for x in daemons]
assert names.count("mds") == 1, "one mds expected: %r" % names
oss = [x for x in daemons if x["name"].startswith("oss")]
assert len(oss) == nost, "%d oss expected: %r" % (nost, names)
served = sorted(o for x in oss for o in x.get("osts", []))
assert served == list(range(nost)), "OSTs served: %r" % served
for x in daemons:
    assert x["state"] == "running", "%s is %s" % (x["name"], x["state"])
    pid = int(x["pid"])
    assert os.path.exists("/proc/%d" % pid), "%s pid %d is gone" % (x["name"], pid)
    # The first address a daemon listens on: RDMA when the cluster has it.
    want = {"tcp": "tcp", "rdma": "rdma", "both": "rdma"}[os.environ["XPRT"]]
    assert x["address"].startswith(want + "://" + os.environ["HOST"] + ":"), x["address"]
assert d["mount"]["mounted"] is True, d["mount"]
print("status ok: " + " ".join(names))
PYEOF
	assert_eq "$(jget 'd["fsname"]' < "$WORK/status.json")" "$FSNAME" "fsname in status"
	# The human form names the mds too.
	"$CLUSTER" status --dir "$CDIR" | grep mds > /dev/null
}
run_test 5 "nacre-cluster status --json lists every daemon as running" test_5

test_6()
{
	local i
	mkdir "$MNT/many"
	for i in $(seq 1 50); do
		printf 'file %d\n' "$i" > "$MNT/many/f$i"
	done
	for i in $(seq 1 50); do
		assert_eq "$(cat "$MNT/many/f$i")" "file $i" "content of many/f$i"
	done
	assert_eq "$(ls "$MNT/many" | wc -l)" "50" "entries in many"
	rm -r "$MNT/many"
	if test -e "$MNT/many"; then
		echo "many still exists after rm -r" >&2
		false
	fi
}
run_test 6 "create, read and remove 50 small files" test_6

# mount(8) finds helpers only in /sbin: put a one-line helper there for the
# duration of the test (unless one is installed already: then use that), and
# check that `mount -t nacre` and `umount` work as for any filesystem.
T7_HELPER=/sbin/mount.nacre
T7_MADE=0
T7_MNT=
test_7_cleanup()
{
	set +e
	[ "$T7_MADE" = 1 ] && rm -f "$T7_HELPER"
	[ -n "$T7_MNT" ] && grep -q " $T7_MNT " /proc/mounts && umount "$T7_MNT"
	return 0
}
test_7()
{
	T7_MNT=$(mktemp -d "$WORK/mnt2.XXXXXX")
	if [ ! -e "$T7_HELPER" ]; then
		printf '#!/bin/sh\nexec "%s" "$@"\n' "$MOUNT_NACRE" >"$T7_HELPER"
		chmod 755 "$T7_HELPER"
		T7_MADE=1
	fi
	trap test_7_cleanup EXIT
	mount -t nacre "$MDS_ADDR:/$FSNAME" "$T7_MNT"
	grep -q " $T7_MNT fuse.nacre " /proc/mounts
	echo "seen from the second mount" >"$MNT/second.txt"
	assert_eq "seen from the second mount" "$(cat "$T7_MNT/second.txt")" "content via mount -t nacre"
	umount "$T7_MNT"
	if grep -q " $T7_MNT " /proc/mounts; then
		echo "still mounted after umount"
		return 1
	fi
	rm -f "$MNT/second.txt"
}
run_test 7 "mount -t nacre and umount" test_7

test_8()
{
	# Bad daemon options exit 2 with a message and start nothing.
	local mds="$NACRE_BIN_DIR/mds/nacre-mds" err=$WORK/mds.err arg rc
	for arg in "--pack-gc-interval abc" "--pack-gc-interval -1" \
		"--pack-gc-interval 86401" "--pack-gc-threshold 0" \
		"--pack-gc-threshold 1.5" "--pack-gc-threshold x"; do
		rc=0
		# shellcheck disable=SC2086
		"$mds" --dir "$WORK/nomdt" --fsname x --listen tcp://127.0.0.1:1 \
			--format $arg 2>"$err" || rc=$?
		assert_eq "$rc" "2" "exit status of nacre-mds $arg"
		grep -q "bad ${arg%% *}" "$err" || _e2e_assert_failed "no message for $arg"
	done
	[ ! -e "$WORK/nomdt" ] || _e2e_assert_failed "an MDT was made"
	"$mds" --help | grep -q -- "--pack-gc-interval"
}
run_test 8 "nacre-mds rejects bad compaction options" test_8

finish
