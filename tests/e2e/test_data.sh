#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: file data.  Every case builds the expected bytes in a
# local reference file, applies the same operations through the mount and
# compares byte for byte.  Sizes sit on and around the chunk boundaries of the
# default layout (1 MiB stripes over min(4, OSTs) OSTs, plain striping).

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

cluster_up
WORK=$(mktemp -d "$CDIR/e2e-data.XXXXXX")

# wait_all PID...: waits for every PID; fails if any of them failed.
wait_all()
{
	local pid rc=0
	for pid in "$@"; do
		wait "$pid" || rc=1
	done
	return "$rc"
}

# mount2 N: a second client of the filesystem on $MNT2 (its log is
# clientN.log), unmounted when the test's shell exits.
MNT2=
mount2_cleanup()
{
	set +e
	if [ -n "$MNT2" ] && mountpoint -q "$MNT2"; then
		fusermount3 -u "$MNT2" || umount -l "$MNT2"
	fi
	return 0
}
mount2()
{
	MNT2=$(mktemp -d "$WORK/mnt2.XXXXXX")
	trap mount2_cleanup EXIT
	"$MOUNT_NACRE" "$MDS_ADDR:/$FSNAME" "$MNT2" -o "log=$CDIR/log/client$1.log"
}

test_1()
{
	local sizes size i f
	sizes="0 1 $((S - 1)) $S $((S + 1)) $((N * S)) $((3 * N * S + 12345))"
	mkdir "$MNT/sizes"
	i=0
	for size in $sizes; do
		i=$((i + 1))
		f=sz-$size
		mkdata "$WORK/$f" "$size" "$i"
		# Three writers: large dd blocks, small dd blocks with fsync,
		# and odd-sized Python writes.
		case $((i % 3)) in
		0) dd if="$WORK/$f" of="$MNT/sizes/$f" bs=1M status=none ;;
		1) dd if="$WORK/$f" of="$MNT/sizes/$f" bs=4096 conv=fsync status=none ;;
		2) pywrite "$WORK/$f" "$MNT/sizes/$f" 100003 ;;
		esac
	done
	for size in $sizes; do
		f=sz-$size
		assert_eq "$(stat -c %s "$MNT/sizes/$f")" "$size" "size of $f"
		assert_file_eq "$WORK/$f" "$MNT/sizes/$f"
		# And once more through a reader with small blocks.
		dd if="$MNT/sizes/$f" bs=65536 status=none | cmp - "$WORK/$f"
	done
}
run_test 1 "files of sizes around the stripe size read back exactly" test_1

test_2()
{
	local off=$((5 * S + 100))
	python3 - "$WORK/sparse" "$MNT/sparse" "$off" <<'PYEOF'
import sys
off = int(sys.argv[3])
for p in sys.argv[1:3]:
    with open(p, "wb") as f:
        f.write(b"head")
        f.seek(off)
        f.write(b"tail of a sparse file")
PYEOF
	assert_eq "$(stat -c %s "$MNT/sparse")" "$((off + 21))" "size of the sparse file"
	assert_file_eq "$WORK/sparse" "$MNT/sparse"
	# The hole reads as zeros, checked directly as well.
	python3 - "$MNT/sparse" "$off" <<'PYEOF'
import sys
off = int(sys.argv[2])
with open(sys.argv[1], "rb") as f:
    assert f.read(4) == b"head"
    hole = f.read(off - 4)
    assert len(hole) == off - 4, len(hole)
    assert hole.count(0) == len(hole), "non-zero bytes in the hole"
    assert f.read() == b"tail of a sparse file"
PYEOF
	# A hole that ends the file, made by seeking past the end of a write.
	python3 - "$WORK/sparse2" "$MNT/sparse2" "$S" <<'PYEOF'
import os, sys
S = int(sys.argv[3])
for p in sys.argv[1:3]:
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.pwrite(fd, b"x" * 10, 3 * S - 5)
    os.pwrite(fd, b"y" * 3, 7)
    os.close(fd)
PYEOF
	assert_eq "$(stat -c %s "$MNT/sparse2")" "$((3 * S + 5))" "size of sparse2"
	assert_file_eq "$WORK/sparse2" "$MNT/sparse2"
}
run_test 2 "a sparse file reads zeros in its hole" test_2

# Unaligned overwrites: the same list of (offset, length) writes, applied to
# the reference and to the file on nacre, with the same bytes.
apply_overwrites()
{
	python3 - "$1" "$S" <<'PYEOF'
import os, random, sys
path, S = sys.argv[1], int(sys.argv[2])
ops = [
    (S - 7, 20), (2 * S - 1, 2), (0, 1), (S, 1), (S - 1, 1),
    (3 * S - 100, S + 200),           # covers a whole chunk and two ends
    (4 * S - 3, 10), (5 * S - 4096, 8192),
    (123457, 3 * S),                  # three chunk boundaries at once
    (6 * S - 2, 10),                  # extends the file past its end
]
r = random.Random(42)
fd = os.open(path, os.O_RDWR)
for off, n in ops:
    b = r.randbytes(n)
    assert os.pwrite(fd, b, off) == n
os.close(fd)
PYEOF
}

test_3()
{
	local off
	mkdata "$WORK/ow" $((6 * S)) 7
	cp "$WORK/ow" "$MNT/ow"
	apply_overwrites "$WORK/ow"
	apply_overwrites "$MNT/ow"
	assert_eq "$(stat -c %s "$MNT/ow")" "$(stat -c %s "$WORK/ow")" "size after overwrites"
	assert_file_eq "$WORK/ow" "$MNT/ow"
	# dd with conv=notrunc at byte offsets, each in its own process.
	printf 'ABCDEFGHIJKLMNOPQRSTUVWXYZ' > "$WORK/patch"
	for off in $((S - 13)) $((2 * S - 26)) $((2 * S)) $((3 * S - 1)) 1; do
		dd if="$WORK/patch" of="$WORK/ow" bs=4096 seek="$off" \
			oflag=seek_bytes conv=notrunc status=none
		dd if="$WORK/patch" of="$MNT/ow" bs=4096 seek="$off" \
			oflag=seek_bytes conv=notrunc status=none
	done
	assert_file_eq "$WORK/ow" "$MNT/ow"
}
run_test 3 "unaligned overwrites across chunk boundaries" test_3

test_4()
{
	local size
	mkdata "$WORK/tr" $((2 * S + 500)) 11
	cp "$WORK/tr" "$MNT/tr"
	# Down into the second chunk, then up again: the bytes cut off must
	# come back as zeros, not as the old data.
	for size in $((S + 3)) $((3 * S + 7)) $((S - 1)) $((S - 1)) 0 10 \
		$((4 * S)) 4097 $((N * S + 1)); do
		truncate -s "$size" "$WORK/tr"
		truncate -s "$size" "$MNT/tr"
		assert_eq "$(stat -c %s "$MNT/tr")" "$size" "size after truncate -s $size"
		assert_file_eq "$WORK/tr" "$MNT/tr"
	done
	# Writing after a shrink lands on zeros too.
	truncate -s 100 "$WORK/tr"
	truncate -s 100 "$MNT/tr"
	printf 'after' | dd of="$WORK/tr" bs=1 seek=$((S + 10)) conv=notrunc status=none
	printf 'after' | dd of="$MNT/tr" bs=1 seek=$((S + 10)) conv=notrunc status=none
	assert_file_eq "$WORK/tr" "$MNT/tr"
	# O_TRUNC on open.
	echo short > "$WORK/tr"
	echo short > "$MNT/tr"
	assert_file_eq "$WORK/tr" "$MNT/tr"
}
run_test 4 "truncate up and down" test_4

test_5()
{
	local i
	mkdata "$WORK/ap" $((S - 10)) 13
	cp "$WORK/ap" "$MNT/ap"
	mkdata "$WORK/ap-piece" 100 14
	# The first append crosses the end of chunk 0.
	cat "$WORK/ap-piece" >> "$WORK/ap"
	cat "$WORK/ap-piece" >> "$MNT/ap"
	assert_file_eq "$WORK/ap" "$MNT/ap"
	for i in $(seq 1 20); do
		printf 'line %d\n' "$i" >> "$WORK/ap"
		printf 'line %d\n' "$i" >> "$MNT/ap"
	done
	mkdata "$WORK/ap-big" $((2 * S + 3)) 15
	cat "$WORK/ap-big" >> "$WORK/ap"
	cat "$WORK/ap-big" >> "$MNT/ap"
	assert_eq "$(stat -c %s "$MNT/ap")" "$(stat -c %s "$WORK/ap")" "size after appends"
	assert_file_eq "$WORK/ap" "$MNT/ap"
}
run_test 5 "append with >>" test_5

test_6()
{
	local i pids rc
	mkdir "$MNT/conc"
	for i in 1 2 3 4; do
		mkdata "$WORK/conc$i" $((2 * S + i * 4099)) $((100 + i))
	done
	pids=()
	for i in 1 2 3 4; do
		(
			if [ "$i" -le 2 ]; then
				dd if="$WORK/conc$i" of="$MNT/conc/f$i" bs=131072 status=none
			else
				pywrite "$WORK/conc$i" "$MNT/conc/f$i" 65539
			fi
		) &
		pids+=("$!")
	done
	rc=0
	wait_all "${pids[@]}" || rc=1
	assert_eq "$rc" "0" "all writers succeeded"
	# Readers of different files and two readers of the same file at once.
	pids=()
	for i in 1 2 3 4 1 1; do
		cmp "$WORK/conc$i" "$MNT/conc/f$i" &
		pids+=("$!")
	done
	rc=0
	wait_all "${pids[@]}" || rc=1
	assert_eq "$rc" "0" "all concurrent readers saw the right bytes"
	for i in 1 2 3 4; do
		assert_file_eq "$WORK/conc$i" "$MNT/conc/f$i"
	done
}
run_test 6 "concurrent writers of four files, then concurrent readers" test_6

test_7()
{
	mkdata "$WORK/rw" $((S + 777)) 21
	pywrite "$WORK/rw" "$MNT/rw" 1048576
	cat "$MNT/rw" > "$WORK/rw.out"
	assert_file_eq "$WORK/rw" "$WORK/rw.out"
}
run_test 7 "a file read by another process right after it was written" test_7

test_8()
{
	# The writer keeps the file open while another process reads it:
	# written data is visible to others before close.
	mkdata "$WORK/open-rw" $((2 * S + 5)) 22
	python3 - "$WORK/open-rw" "$MNT/open-rw" <<'PYEOF'
import os, subprocess, sys
ref, dst = sys.argv[1], sys.argv[2]
data = open(ref, "rb").read()
fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
off = 0
while off < len(data):
    off += os.write(fd, data[off:off + 300007])
seen = subprocess.run(["cat", dst], stdout=subprocess.PIPE, check=True).stdout
os.close(fd)
assert len(seen) == len(data), "reader saw %d bytes of %d" % (len(seen), len(data))
assert seen == data, "reader saw different bytes"
PYEOF
	assert_file_eq "$WORK/open-rw" "$MNT/open-rw"
}
run_test 8 "data written is visible to another reader before close" test_8

test_9()
{
	local shard ost obj count
	mkdata "$WORK/striped" $((N * S)) 31
	cp "$WORK/striped" "$MNT/striped"
	assert_file_eq "$WORK/striped" "$MNT/striped"
	assert_eq "$("$NACRE" getstripe --json "$MNT/striped" | jget 'd["stripe_count"]')" \
		"$N" "stripe count of the default layout"
	assert_eq "$("$NACRE" getstripe --json "$MNT/striped" | jget 'd["stripe_size"]')" \
		"$S" "stripe size of the default layout"
	shard_objects "$MNT/striped" > "$WORK/striped.objs"
	cat "$WORK/striped.objs"
	assert_eq "$(wc -l < "$WORK/striped.objs")" "$N" "one object per shard"
	assert_eq "$(awk '{ print $2 }' "$WORK/striped.objs" | sort -u | wc -l)" "$N" \
		"every shard on a different OST"
	count=0
	while read -r shard ost obj; do
		if [ ! -f "$obj" ]; then
			echo "object $shard of the file is missing: $obj" >&2
			false
		fi
		assert_eq "$(stat -c %s "$obj")" "$S" "size of object $shard on OST $ost"
		# Chunk c is the whole of object c here.
		dd if="$WORK/striped" bs="$S" skip="$shard" count=1 status=none | cmp - "$obj"
		count=$((count + 1))
	done < "$WORK/striped.objs"
	assert_eq "$count" "$N" "objects checked"
}
run_test 9 "a ${N}-stripe file puts one full chunk in each OST object" test_9

test_10()
{
	local f=rows
	# Rebuilt from the objects alone, with chunk c on shard c % N at
	# object offset (c / N) * S, the file must equal its reference.
	mkdata "$WORK/$f" $((3 * N * S + 12345)) 41
	pywrite "$WORK/$f" "$MNT/$f" 1000003
	assert_file_eq "$WORK/$f" "$MNT/$f"
	shard_objects "$MNT/$f" > "$WORK/big.objs"
	python3 - "$WORK/$f" "$S" "$WORK/big.objs" <<'PYEOF'
import sys
ref = open(sys.argv[1], "rb").read()
S = int(sys.argv[2])
objs = [line.split(None, 2)[2].strip() for line in open(sys.argv[3])]
N = len(objs)
data = [open(p, "rb").read() for p in objs]
nchunks = (len(ref) + S - 1) // S
for c in range(nchunks):
    want = ref[c * S:(c + 1) * S]
    off = (c // N) * S
    got = data[c % N][off:off + len(want)]
    assert got == want, "chunk %d differs on shard %d" % (c, c % N)
for j in range(N):
    last = max([c for c in range(nchunks) if c % N == j], default=-1)
    want_len = 0 if last < 0 else (last // N) * S + len(ref[last * S:(last + 1) * S])
    assert len(data[j]) == want_len, "object %d is %d bytes, %d expected" % (j, len(data[j]), want_len)
print("%d chunks over %d objects ok" % (nchunks, N))
PYEOF
}
run_test 10 "a multi-row file is laid out chunk by chunk over its objects" test_10

# The kernel keeps a file's pages across opens only while the MDS shows the
# file unchanged: a rewrite through another mount (another client) is seen
# at the next open, not the cached old bytes.
test_11()
{
	mount2 11
	mkdata "$WORK/epoch1" $((3 * S)) 111
	mkdata "$WORK/epoch2" $((3 * S)) 112
	cp -- "$WORK/epoch1" "$MNT/epoch"
	assert_file_eq "$WORK/epoch1" "$MNT/epoch"
	assert_file_eq "$WORK/epoch1" "$MNT/epoch"
	# Same size, other bytes, written by the other client.
	cp -- "$WORK/epoch2" "$MNT2/epoch"
	assert_file_eq "$WORK/epoch2" "$MNT/epoch"
	fusermount3 -u "$MNT2"
}
run_test 11 "a file rewritten by another client is read fresh after caching" test_11

# mds_requests OP: how many OP requests the MDS has served.
mds_requests()
{
	local addr
	addr=$(status_json | jget '[x["metrics"] for x in d["daemons"] if x["name"] == "mds"][0]')
	curl -sf "http://${addr#tcp://}/metrics" |
		awk -v l="op=\"$1\"" '$1 ~ /^nacre_mds_requests_total\{/ && index($1, l) { s += $2 }
			END { printf "%.0f\n", s }'
}

test_12()
{
	local i o0 l0 o1 l1
	drop_caches || { echo "SKIP: /proc/sys/vm is read-only here"; return 0; }
	mount2 12
	mkdir "$MNT/intent"
	for i in $(seq 1 20); do
		mkdata "$WORK/in$i" $((i * 4099)) $((1200 + i))
		cp -- "$WORK/in$i" "$MNT/intent/f$i"
	done
	# Opening a file the kernel has no entry for: the lookup brings what
	# the open needs, and the open asks the MDS nothing.
	drop_caches
	ls "$MNT/intent" >/dev/null
	o0=$(mds_requests open)
	l0=$(mds_requests lookup)
	for i in $(seq 1 20); do
		cmp -- "$WORK/in$i" "$MNT/intent/f$i"
	done
	o1=$(mds_requests open)
	l1=$(mds_requests lookup)
	assert_eq "$((o1 - o0))" 0 "MDS opens for 20 files read after their lookup"
	[ $((l1 - l0)) -ge 20 ] || { echo "only $((l1 - l0)) lookups for 20 files"; return 1; }

	# Close-to-open: a name looked up (stat), rewritten longer by another client,
	# then opened by the same thread more than MNT_INTENT_MS later, reads
	# the new bytes; and the thread's own truncate shows in its next open.
	mkdata "$WORK/in-new" 30001 1299
	python3 - "$MNT/intent/f3" "$MNT2/intent/f3" "$WORK/in-new" <<'PYEOF'
import os, shutil, sys, time
mine, other, new = sys.argv[1:4]
def drop_caches():
    # The kernel forgets its entries: the next stat looks the name up.
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")
drop_caches()
os.stat(mine)
t0 = time.monotonic()
shutil.copyfile(new, other)
time.sleep(max(0.0, 0.3 - (time.monotonic() - t0)))
with open(mine, "rb") as f:
    got = f.read()
with open(new, "rb") as f:
    want = f.read()
assert got == want, "read %d bytes, not the %d the other client wrote" % (len(got), len(want))
drop_caches()
os.stat(mine)
os.truncate(mine, 100)
with open(mine, "rb") as f:
    got = f.read()
assert got == want[:100], "read %d bytes after a truncate to 100" % len(got)
PYEOF
	fusermount3 -u "$MNT2"
}
run_test 12 "a lookup carries the open; close-to-open holds" test_12

# mount_counter NAME: one of the mount's counters (`nacre stats`).
mount_counter()
{
	"$NACRE" stats --json "$MNT" | jget "d['counters']['$1']"
}

# epoch_files DIR N write|read: writes f0..f(N-1) of DIR (4 KiB each), or
# reads them, checking each file's bytes.
epoch_files()
{
	python3 - "$1" "$2" "$3" <<'PYEOF'
import os, sys
d, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def want(i):
    return (b"%08d" % i) * 512
for i in range(n):
    p = "%s/f%d" % (d, i)
    if mode == "write":
        with open(p, "wb") as f:
            f.write(want(i))
        continue
    with open(p, "rb") as f:
        got = f.read()
    assert got == want(i), "%s: %d bytes, not the %d written" % (p, len(got), len(want(i)))
PYEOF
}

test_13()
{
	# More files than the mount once kept cache records of (4096, in a
	# table indexed by inode number, where files whose numbers collided
	# pushed each other out): the second epoch still finds them all in
	# the kernel's page cache.  A few may be read again: the kernel may
	# drop pages of idle files on its own.
	local n=5000 r0 r1 r2 kept
	# What the mount keeps does not depend on the transport, and 5000
	# files take minutes over a software RDMA device.
	[ "$XPRT" = tcp ] || { echo "the mount's records: skipped over $XPRT"; return 0; }
	mkdir "$MNT/epochs"
	"$NACRE" setstripe --pack "$MNT/epochs"
	epoch_files "$MNT/epochs" "$n" write
	r0=$(mount_counter nacre_client_reads_total)
	epoch_files "$MNT/epochs" "$n" read
	r1=$(mount_counter nacre_client_reads_total)
	epoch_files "$MNT/epochs" "$n" read
	r2=$(mount_counter nacre_client_reads_total)
	echo "reads through the mount: first epoch $((r1 - r0)), second $((r2 - r1))"
	[ $((r1 - r0)) -ge "$n" ] ||
		_e2e_assert_failed "the first epoch read $((r1 - r0)) times for $n files"
	[ $((r2 - r1)) -lt $((n / 10)) ] ||
		_e2e_assert_failed "the second epoch read $((r2 - r1)) of $n files again"
	kept=$(mount_counter nacre_mount_inodes)
	[ "$kept" -ge "$n" ] || _e2e_assert_failed "records of $kept inodes, not $n"
	# The records go with the kernel's inodes (FORGET).
	drop_caches || { echo "SKIP (the rest): /proc/sys/vm is read-only here"; return 0; }
	wait_until 30 eval '[ "$(mount_counter nacre_mount_inodes)" -lt 100 ]' ||
		_e2e_assert_failed "records of $(mount_counter nacre_mount_inodes) inodes after the kernel dropped its inodes"
}
run_test 13 "a second epoch over 5000 files is read from the kernel's page cache" test_13

finish
