#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: a full OST and a full MDT.  Six OSTs (erasure-coded 4+2
# by default) each live on a small tmpfs mounted over DIR/ost/I, and the MDT
# has a small LMDB map (DIR/mds.conf).  The suite fills one OST, then all of
# them, through the mount and through libnacre, then the MDT, and checks that
# the application gets ENOSPC (never EIO, a hang or a crash), that what was
# written before reads back exactly, also after dropping caches and
# restarting the daemons, and that the filesystem works again once space is
# freed.  The tmpfs mounts are the suite's own and go at exit.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || e2e_skip "python3 is not installed"

OSTS=6
OST_SIZE_MB=12
MAP_SIZE=1M
TMPFS_MOUNTS=()

# Unmounts our tmpfs mounts (after the daemons are down), then the usual
# cleanup of lib.sh.
enospc_cleanup() {
	local rc=$? m

	if [ -n "$CDIR" ] && [ -d "$CDIR" ]; then
		"$CLUSTER" down --dir "$CDIR" >/dev/null 2>&1
	fi
	for m in "${TMPFS_MOUNTS[@]}"; do
		umount -- "$m" 2>/dev/null || umount -l -- "$m" 2>/dev/null
	done
	(exit $rc)
	_e2e_cleanup
}

# Moves the files of directory $1 onto a new tmpfs of $2 mounted over it.
onto_tmpfs() {
	mv -- "$1" "$1.disk"
	mkdir -- "$1"
	mount -t tmpfs -o "size=$2" nacre-e2e "$1" || e2e_skip "cannot mount a tmpfs here"
	TMPFS_MOUNTS+=("$1")
	cp -a -- "$1.disk/." "$1/"
	rm -rf -- "$1.disk"
}

# A cluster as cluster_up makes it, then stopped, its OSTs and its MDT moved
# onto small tmpfs mounts, the MDS given a small map, and started again
# (nacre-cluster only makes a cluster in an empty directory).
enospc_cluster_up() {
	local i

	cluster_up
	trap enospc_cleanup EXIT
	"$CLUSTER" down --dir "$CDIR" >/dev/null
	for ((i = 0; i < OSTS; i++)); do
		onto_tmpfs "$CDIR/ost/$i" "${OST_SIZE_MB}m"
	done
	onto_tmpfs "$CDIR/mdt" 64m
	echo "map-size = $MAP_SIZE" >"$CDIR/mds.conf"
	"$CLUSTER" up --dir "$CDIR" >/dev/null
}

enospc_cluster_up
REF=$(mktemp -d "$CDIR/ref.XXXXXX")

# Free KiB on OST $1's tmpfs.
ost_free_kb() {
	df -k --output=avail -- "$CDIR/ost/$1" | tail -n 1 | tr -d ' '
}

# Fills OST $1's tmpfs to the last page with a file of our own.
ost_fill() {
	dd if=/dev/zero of="$CDIR/ost/$1/fill" bs=64k status=none 2>/dev/null || true
	dd if=/dev/zero of="$CDIR/ost/$1/fill" bs=4k oflag=append conv=notrunc \
		status=none 2>/dev/null || true
	[ "$(ost_free_kb "$1")" -lt 4 ]
}

# All files of the reference directory read back exactly through the mount.
check_refs() {
	local f

	for f in "$REF"/*; do
		[ -f "$f" ] || continue
		cmp_uncached "$f" "$MNT/${f##*/}" || return 1
	done
}

# Whether every daemon of the cluster runs (pids from its pid files).
daemons_alive() {
	local d p

	for d in mds oss0 oss1 oss2 oss3 oss4 oss5; do
		p=$(cluster_pid "$d") || return 1
		kill -0 "$p" 2>/dev/null || return 1
	done
}

# How many OSTs the MDS counts as full (its metrics port).
mds_osts_full() {
	python3 - "$(status_json | jget "[x['metrics'] for x in d['daemons'] if x['name'] == 'mds'][0]")" <<'PYEOF'
import sys, urllib.request
url = "http://" + sys.argv[1].split("://", 1)[-1] + "/metrics"
for line in urllib.request.urlopen(url, timeout=10).read().decode().splitlines():
    if line.startswith("nacre_mds_osts_full "):
        print(int(float(line.split()[1])))
PYEOF
}

mds_sees_full() {
	[ "$(mds_osts_full)" = "$1" ]
}

# The stale shards of PATH, as OST indexes.
stale_osts() {
	"$NACRE" getstripe --json "$1" |
		jget '" ".join(str(s["ost"]) for s in d["shards"] if s["state"] == "stale")'
}

# ---- 1: data written before the filesystem fills
t_before() {
	mkdata "$REF/pre1" $((4 * S + 12345)) 1
	mkdata "$REF/pre2" 300000 2
	cp "$REF/pre1" "$REF/pre2" "$MNT/"
	# Plain striping over all six OSTs (no erasure code) in plain/.
	mkdir "$MNT/plain"
	"$NACRE" setstripe -E none -c -1 "$MNT/plain"
	mkdata "$REF.plain1" $((3 * S + 5)) 7
	cp "$REF.plain1" "$MNT/plain/plain1"
	sync -f "$MNT/pre1"
	check_refs
	cmp_uncached "$REF.plain1" "$MNT/plain/plain1"
}

# ---- 2: one full OST of six: an erasure-coded write degrades (stale shard)
t_one_full() {
	local st

	ost_fill 5
	# Written before the MDS sees OST 5 full: the write there fails with
	# ENOSPC and the client marks the shard stale.
	mkdata "$REF/degraded" $((2 * 4 * S)) 3
	dd if="$REF/degraded" of="$MNT/degraded" bs=1M conv=fsync status=none
	st=$(stale_osts "$MNT/degraded")
	assert_eq "$st" "5" "stale shards of a file written with OST 5 full"
	# Created once the MDS knows: the layout leaves OST 5 out (stale from
	# the start), and no write goes there.
	wait_until 60 mds_sees_full 1 || _e2e_assert_failed "the MDS did not see OST 5 full"
	mkdata "$REF/degraded2" $((4 * S + 99)) 6
	dd if="$REF/degraded2" of="$MNT/degraded2" bs=1M conv=fsync status=none
	assert_eq "$(stale_osts "$MNT/degraded2")" "5" "stale shards of a file created with OST 5 full"
	check_refs
	rm -f -- "$CDIR/ost/5/fill"
	wait_until 60 mds_sees_full 0 || _e2e_assert_failed "the MDS did not see OST 5 free"
	timeout 120 "$NACRE" rebuild "$MNT/degraded" "$MNT/degraded2" >/dev/null
	assert_eq "$(stale_osts "$MNT/degraded")" "" "stale shards after the rebuild"
	assert_eq "$(stale_osts "$MNT/degraded2")" "" "stale shards after the rebuild"
	check_refs
}

# ---- 3: the whole filesystem full, through the mount
t_fill_mount() {
	local rc=0 err i size

	err=$(timeout 300 dd if=/dev/zero of="$MNT/filler1" bs=1M count=1000 \
		conv=fsync status=none 2>&1) || rc=$?
	echo "$err"
	[ $rc -ne 0 ] || _e2e_assert_failed "dd wrote 1000 MiB into ${OSTS}x${OST_SIZE_MB} MiB"
	[ $rc -ne 124 ] || _e2e_assert_failed "dd hung on a full filesystem"
	[[ $err == *"No space left on device"* ]] ||
		_e2e_assert_failed "dd failed, but not with ENOSPC: $err"
	assert_errno ENOSPC dd if=/dev/zero of="$MNT/filler1b" bs=1M count=8 conv=fsync \
		status=none
	assert_errno ENOSPC dd if=/dev/zero of="$MNT/plain/filler1c" bs=1M count=8 \
		conv=fsync status=none
	cmp_uncached "$REF.plain1" "$MNT/plain/plain1"
	# Every OST full to the last byte: appending to a file written before
	# fails with ENOSPC (at the write or the fsync), and the file stays as
	# it was.
	for ((i = 0; i < OSTS; i++)); do
		ost_fill "$i"
	done
	assert_errno ENOSPC dd if=/dev/urandom of="$MNT/pre1" bs=100000 count=1 \
		oflag=append conv=notrunc,fsync status=none
	# A write that failed may have added some of its bytes (as on any
	# filesystem); those before it are intact, and truncation works on a
	# full filesystem.
	size=$(stat -c %s -- "$REF/pre1")
	[ "$(stat -c %s -- "$MNT/pre1")" -ge "$size" ] || _e2e_assert_failed "pre1 shrank"
	cmp -n "$size" -- "$REF/pre1" "$MNT/pre1"
	truncate -s "$size" -- "$MNT/pre1"
	check_refs
}

# ---- 4: the whole filesystem full, through libnacre
t_fill_lib() {
	if e2e_sanitized; then
		echo "libnacre is built with the sanitizers: the bindings cannot load it"
		return 0
	fi
	PYTHONPATH=${top_srcdir:?}/bindings/python \
		NACRE_LIBRARY=$NACRE_BIN_DIR/.libs/libnacre.so.0 \
		timeout 300 python3 - "$MDS_ADDR" "$FSNAME" <<'PYEOF'
import errno, sys
import nacre

fs = nacre.Filesystem(sys.argv[1], sys.argv[2])
buf = b"\x5a" * (1 << 20)
f = None
try:
    # The create itself fails once the MDS sees every OST full.
    f = fs.open("/filler2", "wb")
    for i in range(1000):
        f.write(buf)
    f.fsync()
    f.close()
except OSError as e:
    if e.errno != errno.ENOSPC:
        sys.exit("libnacre write failed with %s, not ENOSPC" % e)
    print("libnacre: %s" % e)
else:
    sys.exit("libnacre wrote 1000 MiB into a full filesystem")
try:
    if f:
        f.close()
except OSError as e:
    if e.errno != errno.ENOSPC:
        sys.exit("libnacre close failed with %s, not ENOSPC" % e)
fs.close()
PYEOF
	# Every OST full to the last byte (test 3): a small write at the end of
	# a file written before (buffered by libnacre until fsync) fails with
	# ENOSPC at the write, the fsync or the close, and the file stays as it
	# was.
	PYTHONPATH=${top_srcdir:?}/bindings/python \
		NACRE_LIBRARY=$NACRE_BIN_DIR/.libs/libnacre.so.0 \
		timeout 300 python3 - "$MDS_ADDR" "$FSNAME" <<'PYEOF'
import errno, sys
import nacre

fs = nacre.Filesystem(sys.argv[1], sys.argv[2])
f = fs.open("/pre2", "r+b")
step = "write"
try:
    f.pwrite(b"\xa5" * 100000, 300000)
    step = "fsync"
    f.fsync()
    step = "close"
    f.close()
except OSError as e:
    if e.errno != errno.ENOSPC:
        sys.exit("libnacre %s failed with %s, not ENOSPC" % (step, e))
    print("libnacre %s: %s" % (step, e))
else:
    sys.exit("libnacre appended to a file on full OSTs")
try:
    f.close()
except OSError as e:
    if e.errno != errno.ENOSPC:
        sys.exit("libnacre close failed with %s, not ENOSPC" % e)
fs.close()
PYEOF
	check_refs
}

# ---- 5: what was written before survives dropped caches and restarts
t_restart() {
	check_refs
	"$CLUSTER" restart mds --dir "$CDIR" >/dev/null
	oss_stop 0 1 2 3 4 5
	oss_start 0 1 2 3 4 5
	retry 60 check_refs
	cmp_uncached "$REF.plain1" "$MNT/plain/plain1"
	}

osts_have_room() {
	local i

	for ((i = 0; i < OSTS; i++)); do
		[ "$(ost_free_kb "$i")" -gt $((OST_SIZE_MB * 1024 / 2)) ] || return 1
	done
}

# ---- 6: deleting files frees the OSTs (destroy queue); writes work again
t_free_space() {
	local i

	rm -f -- "$MNT"/filler* "$MNT"/plain/filler*
	for ((i = 0; i < OSTS; i++)); do
		rm -f -- "$CDIR/ost/$i/fill"
	done
	wait_until 120 osts_have_room ||
		_e2e_assert_failed "the OSTs did not get their space back: $(df -k "$CDIR"/ost/*)"
	wait_until 60 mds_sees_full 0 || _e2e_assert_failed "the MDS still sees full OSTs"
	mkdata "$REF/after" $((4 * S + 777)) 4
	dd if="$REF/after" of="$MNT/after" bs=1M conv=fsync status=none
	assert_eq "$(stale_osts "$MNT/after")" "" "stale shards of a file written after the purge"
	check_refs
}

# Creates files in directory $1 until one fails; prints how many it made.
# Any failure but ENOSPC is an error.
create_until_full() {
	timeout 300 python3 - "$1" <<'PYEOF'
import errno, os, sys
d = sys.argv[1]
for i in range(200000):
    try:
        fd = os.open(os.path.join(d, "f%06d-%s" % (i, "x" * 100)), os.O_CREAT | os.O_WRONLY, 0o644)
        os.close(fd)
    except OSError as e:
        if e.errno != errno.ENOSPC:
            sys.exit("create %d failed with %s, not ENOSPC" % (i, e))
        print(i)
        sys.exit(0)
sys.exit("200000 creates fit in a small MDT")
PYEOF
}

# ---- 7: the MDT full: creates get ENOSPC, the rest survives
t_mdt_full() {
	local w n=0 got
	local -a pids=()

	# Four creators at once, so that the MDS commits them in batches.
	for w in 1 2 3 4; do
		mkdir -p "$MNT/many/$w"
		create_until_full "$MNT/many/$w" >"$REF.many.$w" &
		pids+=("$!")
	done
	for w in "${pids[@]}"; do
		wait "$w" || _e2e_assert_failed "a creator failed"
	done
	for w in 1 2 3 4; do
		n=$((n + $(cat "$REF.many.$w")))
	done
	echo "$n files created before ENOSPC"
	[ "$n" -gt 100 ] || _e2e_assert_failed "only $n files fit"
	assert_errno ENOSPC touch "$MNT/many/one-more"
	assert_errno ENOSPC mkdir "$MNT/many/dir-more"
	kill -0 "$(cluster_pid mds)" || _e2e_assert_failed "the MDS died"
	# df shows the MDT with nothing available (the rest is the reserve).
	assert_eq "$("$NACRE" --json df "$MNT" |
		jget '[x["avail"] for x in d["targets"] if x["type"] == "mdt"][0]')" 0 \
		"MDT space available in nacre df"
	# Every file the MDS said it created is there, also after a restart of
	# the full MDS, and nothing else.
	got=$(find "$MNT/many" -type f | wc -l)
	assert_eq "$got" "$n" "files listed after ENOSPC"
	"$CLUSTER" restart mds --dir "$CDIR" >/dev/null
	retry 60 test "$(find "$MNT/many" -type f | wc -l)" = "$n"
	assert_errno ENOSPC touch "$MNT/many/one-more"
	check_refs
	echo "$n" >"$REF.many"
}

# ---- 8: removing files makes room on the MDT again
t_mdt_free() {
	local n

	n=$(cat "$REF.many")
	find "$MNT/many" -type f | head -n $((n / 2)) | xargs rm -f --
	touch "$MNT/many/one-more"
	mkdir "$MNT/many/dir-more"
	mkdata "$REF/after-mdt" 100000 5
	cp "$REF/after-mdt" "$MNT/after-mdt"
	rm -rf -- "$MNT/many"
	check_refs
}

# ---- 9: the daemons stayed up; the full devices were logged, not flooded
t_logs() {
	local f lines

	daemons_alive || _e2e_assert_failed "a daemon died"
	for f in "$CDIR"/log/*.log; do
		lines=$(grep -c -i -E 'no space|full' "$f" || true)
		echo "${f##*/}: $lines lines about a full device"
		[ "$lines" -le 40 ] || _e2e_assert_failed "${f##*/} has $lines lines about a full device"
	done
	grep -q -i 'MDT is full' "$CDIR/log/mds.log" ||
		_e2e_assert_failed "the MDS did not log its full MDT"
}

run_test 1 "files written before the filesystem fills" t_before
run_test 2 "one full OST: erasure-coded writes degrade, rebuild after freeing" t_one_full
run_test 3 "full OSTs: writes through the mount get ENOSPC" t_fill_mount
run_test 4 "full OSTs: writes through libnacre get ENOSPC" t_fill_lib
run_test 5 "earlier files intact after dropped caches and restarts" t_restart
run_test 6 "deleting files frees the OSTs, writes work again" t_free_space
run_test 7 "full MDT: creates get ENOSPC, the MDS stays up" t_mdt_full
run_test 8 "full MDT: removing files makes room again" t_mdt_free
run_test 9 "daemons alive, full devices logged without a flood" t_logs
finish
