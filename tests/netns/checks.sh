# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The checks of make check-netns, sourced by scripts/check-netns once the
# hosts are up: client A's mount is $MNT_A, client B's $MNT_B (B and OSS
# host 3 sit behind delayed, lossy links).  Every byte is checked by
# sha256 against a local reference built with the same operations; reads
# meant to reach the OSTs drop the page cache first.
#
# The close-to-open rule asserted (test 7): what one client wrote and
# closed, the other sees at its next open, content and size, even with the
# old pages and attributes in its caches; a new name is seen at once, an
# unlinked file fails to open at once, and a renamed file's old name lasts
# at most the mount's entry timeout (entry_timeout, default 10 s).

S=1048576
W=$D/work
mkdir -p "$W"
# The mounts' name cache time (mount.nacre's default, utils/mnt_main.c).
ENTRY_TIMEOUT=10

# same REF FILE: FILE holds exactly REF's bytes (sha256 of every byte).
same() {
	local want got

	want=$(sha256sum <"$1") || _e2e_assert_failed "cannot read $1"
	got=$(timeout 120 sha256sum <"$2") || _e2e_assert_failed "cannot read $2"
	[ "$want" = "$got" ] ||
		_e2e_assert_failed "$2 ($(stat -c %s -- "$2" 2>/dev/null) bytes) differs from $1 ($(stat -c %s -- "$1") bytes)"
}

# same_both REF NAME: NAME reads back as REF through both mounts, from the
# OSTs.
same_both() {
	drop_caches || true
	same "$1" "$MNT_A/$2"
	same "$1" "$MNT_B/$2"
}

# size_is FILE SIZE
size_is() {
	assert_eq "$(stat -c %s -- "$1")" "$2" "size of $1"
}

# mnt_of A|B
mnt_of() {
	if [ "$1" = A ]; then echo "$MNT_A"; else echo "$MNT_B"; fi
}

# c2o_read FILE: opens FILE once, prints the size fstat gives on that open
# and the sha256 of what it reads.
c2o_read() {
	python3 - "$1" <<'PYEOF'
import hashlib, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
h = hashlib.sha256()
while True:
    b = os.read(fd, 1 << 20)
    if not b:
        break
    h.update(b)
os.close(fd)
print(size, h.hexdigest())
PYEOF
}

# c2o_expect REF FILE: FILE's next open shows REF's size and bytes.
c2o_expect() {
	local want
	want="$(stat -c %s -- "$1") $(sha256sum <"$1" | cut -d' ' -f1)"
	assert_eq "$(c2o_read "$2")" "$want" "size and sha256 of $2 at its next open"
}

# Sizes on and around the chunk and row boundaries of EC 4+2 with 1 MiB
# chunks (a row holds 4 MiB of data), and tens of MiB.
SIZES=(0 1 4095 $((S - 1)) "$S" $((S + 1)) $((4 * S - 1)) $((4 * S)) $((4 * S + 1))
	$((8 * S + 7)) $((13 * S + 5)) $((40 * S + 3)))

test_1() {
	local size i=0 who m json
	mkdir "$MNT_A/sizes"
	for size in "${SIZES[@]}"; do
		i=$((i + 1))
		mkdata "$W/f-$size" "$size" "$i"
		# Written by A and B in turn, by three kinds of writer.
		if [ $((i % 2)) = 0 ]; then who=A; else who=B; fi
		m=$(mnt_of $who)
		case $((i % 3)) in
		0) dd if="$W/f-$size" of="$m/sizes/f-$size" bs=1M status=none ;;
		1) dd if="$W/f-$size" of="$m/sizes/f-$size" bs=65536 conv=fsync status=none ;;
		2) pywrite "$W/f-$size" "$m/sizes/f-$size" 100003 ;;
		esac
	done
	# Size (fstat at open) and every byte, from the OSTs, on both.
	drop_caches || true
	for size in "${SIZES[@]}"; do
		c2o_expect "$W/f-$size" "$MNT_A/sizes/f-$size"
		c2o_expect "$W/f-$size" "$MNT_B/sizes/f-$size"
	done
	json=$(in_ns clb "$NACRE" getstripe --json "$MNT_B/sizes/f-$((13 * S + 5))")
	assert_eq "$(jget 'd["pattern"]' <<<"$json")" "ec 4+2" "pattern"
	assert_eq "$(jget 'sorted(s["ost"] for s in d["shards"])' <<<"$json")" \
		"[0, 1, 2, 3, 4, 5]" "shard OSTs"
}
run_test 1 "files of 0 B to 40 MiB written by A and B read back exactly from both" test_1

test_2() {
	local i f=appended
	mkdata "$W/ap" $((S - 10)) 21
	cp "$W/ap" "$MNT_A/$f"
	mkdata "$W/piece" 100 22
	mkdata "$W/big" $((2 * S + 3)) 23
	# B's first append crosses the end of chunk 0; then turns.
	cat "$W/piece" >>"$W/ap"
	cat "$W/piece" >>"$MNT_B/$f"
	same "$W/ap" "$MNT_A/$f"
	for i in $(seq 1 10); do
		printf 'line %d\n' "$i" >>"$W/ap"
		printf 'line %d\n' "$i" >>"$(mnt_of "$([ $((i % 2)) = 0 ] && echo A || echo B)")/$f"
	done
	cat "$W/big" >>"$W/ap"
	cat "$W/big" >>"$MNT_A/$f"
	c2o_expect "$W/ap" "$MNT_B/$f"
	same_both "$W/ap" "$f"
}
run_test 2 "appends by A and B in turn" test_2

# The same unaligned overwrites on FILE, from offsets across chunk and row
# boundaries; one extends the file.
apply_overwrites() {
	python3 - "$1" "$S" <<'PYEOF'
import os, random, sys
path, S = sys.argv[1], int(sys.argv[2])
ops = [(S - 7, 20), (2 * S - 1, 2), (0, 1), (S, 1), (3 * S - 100, S + 200),
       (4 * S - 3, 10), (5 * S - 4096, 8192), (123457, 3 * S), (9 * S - 2, 10)]
r = random.Random(42)
fd = os.open(path, os.O_RDWR)
for off, n in ops:
    assert os.pwrite(fd, r.randbytes(n), off) == n
os.close(fd)
PYEOF
}

test_3() {
	local off
	mkdata "$W/ow" $((9 * S)) 31
	cp "$W/ow" "$MNT_A/ow"
	apply_overwrites "$W/ow"
	apply_overwrites "$MNT_B/ow"
	same_both "$W/ow" ow
	printf 'ABCDEFGHIJKLMNOPQRSTUVWXYZ' >"$W/patch"
	for off in $((S - 13)) $((4 * S - 26)) $((4 * S)) $((6 * S - 1)) 1; do
		dd if="$W/patch" of="$W/ow" bs=4096 seek="$off" oflag=seek_bytes conv=notrunc \
			status=none
		dd if="$W/patch" of="$MNT_A/ow" bs=4096 seek="$off" oflag=seek_bytes conv=notrunc \
			status=none
		same "$W/ow" "$MNT_B/ow"
	done
	same_both "$W/ow" ow
}
run_test 3 "overwrites in the middle by one client, read by the other" test_3

test_4() {
	local size
	mkdata "$W/tr" $((9 * S + 500)) 41
	cp "$W/tr" "$MNT_B/tr"
	# Down and up across rows: what was cut off comes back as zeros.
	for size in $((4 * S + 3)) $((9 * S + 7)) $((S - 1)) 0 10 $((8 * S)) 4097; do
		truncate -s "$size" "$W/tr"
		truncate -s "$size" "$MNT_A/tr"
		size_is "$MNT_A/tr" "$size"
		c2o_expect "$W/tr" "$MNT_B/tr"
	done
	printf 'after' | dd of="$W/tr" bs=1 seek=$((5 * S + 10)) conv=notrunc status=none
	printf 'after' | dd of="$MNT_B/tr" bs=1 seek=$((5 * S + 10)) conv=notrunc status=none
	same_both "$W/tr" tr
}
run_test 4 "truncate down and up by A, seen by B" test_4

test_5() {
	local pa pb rc=0 i
	# The same rows of one file, written by both clients at once.
	mkdata "$W/shared" $((5 * S)) 51
	cp "$W/shared" "$MNT_A/shared"
	python3 "$E2E_LIB_DIR/rows_writer.py" "$W/shared" expect
	python3 "$E2E_LIB_DIR/rows_writer.py" "$MNT_A/shared" A &
	pa=$!
	python3 "$E2E_LIB_DIR/rows_writer.py" "$MNT_B/shared" B &
	pb=$!
	wait "$pa" || rc=1
	wait "$pb" || rc=1
	assert_eq "$rc" 0 "both writers succeeded"
	same_both "$W/shared" shared
	# Different files at once, each read back by the other client.
	for i in 1 2; do
		mkdata "$W/par$i" $((6 * S + i * 4099)) $((52 + i))
	done
	dd if="$W/par1" of="$MNT_A/par1" bs=1M status=none &
	pa=$!
	pywrite "$W/par2" "$MNT_B/par2" 65539 &
	pb=$!
	rc=0
	wait "$pa" || rc=1
	wait "$pb" || rc=1
	assert_eq "$rc" 0 "both writers succeeded"
	same "$W/par1" "$MNT_B/par1"
	same "$W/par2" "$MNT_A/par2"
}
run_test 5 "two clients writing the same rows at once, and different files" test_5

# warm FILE: this client caches FILE: attributes, name, pages.
warm() {
	stat -- "$1" >/dev/null
	cat -- "$1" >/dev/null
}

test_6() {
	local v
	for v in 1 2 3 4 5; do
		mkdata "$W/c2o-$v" $((3 * S + 4096)) $((60 + v))
	done
	mkdata "$W/c2o-grown" $((9 * S + 17)) 66
	mkdata "$W/c2o-shrunk" 5000 67
	# Same size, other bytes, by A; B had read the old version.
	cp "$W/c2o-1" "$MNT_A/c2o"
	c2o_expect "$W/c2o-1" "$MNT_B/c2o"
	warm "$MNT_B/c2o"
	cp "$W/c2o-2" "$MNT_A/c2o"
	c2o_expect "$W/c2o-2" "$MNT_B/c2o"
	# The other way round: B overwrites in place, A had it cached.
	warm "$MNT_A/c2o"
	dd if="$W/c2o-3" of="$MNT_B/c2o" bs=1M conv=notrunc status=none
	c2o_expect "$W/c2o-3" "$MNT_A/c2o"
	# A file that grows: B holds the old size in its attribute cache.
	warm "$MNT_B/c2o"
	cp "$W/c2o-grown" "$MNT_A/c2o"
	c2o_expect "$W/c2o-grown" "$MNT_B/c2o"
	# One that shrinks.
	warm "$MNT_B/c2o"
	cp "$W/c2o-shrunk" "$MNT_A/c2o"
	c2o_expect "$W/c2o-shrunk" "$MNT_B/c2o"
	# Grown by an append, in the same second as B's last read.
	warm "$MNT_B/c2o"
	cat "$W/c2o-4" >>"$MNT_A/c2o"
	cat "$W/c2o-shrunk" "$W/c2o-4" >"$W/c2o-appended"
	c2o_expect "$W/c2o-appended" "$MNT_B/c2o"
	# Truncated to nothing and rewritten smaller, by B; A had it cached.
	warm "$MNT_A/c2o"
	truncate -s 0 "$MNT_B/c2o"
	head -c 777 "$W/c2o-5" >"$W/c2o-head"
	head -c 777 "$W/c2o-5" >>"$MNT_B/c2o"
	c2o_expect "$W/c2o-head" "$MNT_A/c2o"
	# Many rounds of alternating writers, each read by the other.
	for v in 1 2 3 4 5 1 2 3; do
		warm "$MNT_B/c2o"
		cp "$W/c2o-$v" "$MNT_A/c2o"
		c2o_expect "$W/c2o-$v" "$MNT_B/c2o"
		cp "$W/c2o-$(((v % 5) + 1))" "$MNT_B/c2o"
		c2o_expect "$W/c2o-$(((v % 5) + 1))" "$MNT_A/c2o"
	done
}
run_test 6 "close-to-open: what one client wrote and closed, the other sees at its next open" test_6

# gone_from_b NAME: B no longer opens NAME.
gone_from_b() {
	! cat -- "$MNT_B/c2o-dir/$1" >/dev/null 2>&1
}

test_7() {
	local start took names
	mkdir "$MNT_A/c2o-dir"
	mkdata "$W/ren" 300000 71
	mkdata "$W/unl" 200000 72
	cp "$W/ren" "$MNT_A/c2o-dir/old"
	cp "$W/unl" "$MNT_A/c2o-dir/doomed"
	# B caches both names (and the absence of "new").
	warm "$MNT_B/c2o-dir/old"
	warm "$MNT_B/c2o-dir/doomed"
	assert_fail stat "$MNT_B/c2o-dir/new"
	start=$SECONDS
	mv "$MNT_A/c2o-dir/old" "$MNT_A/c2o-dir/new"
	rm "$MNT_A/c2o-dir/doomed"
	# Unlinked: B's next open fails at once, whatever it cached.
	assert_errno ENOENT cat "$MNT_B/c2o-dir/doomed"
	# The new name is there at once (B's negative entry lasts 1 s: retried
	# that long at most) and holds the file.
	wait_until 5 test -e "$MNT_B/c2o-dir/new"
	c2o_expect "$W/ren" "$MNT_B/c2o-dir/new"
	# B's listing is read fresh at each opendir.
	names=$(python3 -c 'import os, sys; print(" ".join(sorted(os.listdir(sys.argv[1]))))' \
		"$MNT_B/c2o-dir")
	assert_eq "$names" "new" "B's listing after the rename and the unlink"
	# The old name may live on in B's name cache, entry_timeout at most
	# after B last looked it up (before the rename): polled for twice
	# that (no bound tighter than the kernel's own clock: a loaded machine
	# may take long over the checks above).
	wait_until $((2 * ENTRY_TIMEOUT)) gone_from_b old ||
		_e2e_assert_failed "B still opens the old name $((2 * ENTRY_TIMEOUT)) s on"
	took=$((SECONDS - start))
	echo "B lost the old name ${took} s after the rename (entry_timeout ${ENTRY_TIMEOUT} s)"
	assert_errno ENOENT stat "$MNT_B/c2o-dir/old"
}
run_test 7 "close-to-open for names: a rename and an unlink by A seen by B" test_7

# Degraded reads: hosts disappear from the network (their link goes down,
# the daemons keep running), then come back.
# A row and a byte: data or parity on every OST.
DEG_FILES=(f-1 f-$((4 * S + 1)))

# cut HOST... / restore HOST...
cut() {
	local h
	for h in "$@"; do
		ip -n "$(ns_of "$h")" link set eth0 down
	done
}
restore() {
	local h
	for h in "$@"; do
		ip -n "$(ns_of "$h")" link set eth0 up
	done
}

# read_degraded: every DEG_FILE read from the OSTs by both clients, one
# file at a time on each (A's reads beside B's); fails when any differs.
read_degraded() {
	local rc=0 pa pb
	drop_caches || true
	read_all "$MNT_A" &
	pa=$!
	read_all "$MNT_B" &
	pb=$!
	wait "$pa" || rc=1
	wait "$pb" || rc=1
	return $rc
}
read_all() {
	local f
	for f in "${DEG_FILES[@]}"; do
		same "$W/$f" "$1/sizes/$f"
	done
}

test_8() {
	local rc t f
	# One host is two shards of six: every file still reads right.
	t=$SECONDS
	cut oss3
	rc=0
	read_degraded || rc=1
	restore oss3
	assert_eq "$rc" 0 "reads with oss3 cut off"
	echo "   read with oss3 cut off in $((SECONDS - t)) s"
	# Two hosts are four shards of six, more than 4+2 can lose: reads
	# fail, never with wrong bytes, and do not hang.
	t=$SECONDS
	cut oss1 oss2
	drop_caches || true
	rc=0
	f=f-$((4 * S + 1))
	timeout 300 cat "$MNT_A/sizes/$f" >"$W/8.out" 2>"$W/8.err" || rc=$?
	restore oss1 oss2
	cat "$W/8.err"
	echo "   read with oss1 and oss2 cut off failed in $((SECONDS - t)) s"
	[ "$rc" != 0 ] || _e2e_assert_failed "a read with 4 of 6 shards cut off succeeded"
	[ "$rc" != 124 ] || _e2e_assert_failed "a read with 4 of 6 shards cut off hung"
	grep -q "Input/output error" "$W/8.err" || _e2e_assert_failed "no EIO reported"
	cmp -n "$(stat -c %s "$W/8.out")" "$W/8.out" "$W/$f" ||
		_e2e_assert_failed "a failing read returned wrong bytes"
	# All back: the files read right from both clients.
	t=$SECONDS
	read_degraded || _e2e_assert_failed "reads after the hosts came back"
	echo "   read after the hosts came back in $((SECONDS - t)) s"
}
run_test 8 "degraded reads with OSS hosts cut off the network, then back" test_8

# A host that vanishes sends no reset: its idle connection to the MDS ends
# by TCP keepalive (about 30 s), and the MDS lists its OSTs down; they come
# back up when the host does.
test_10_gone() {
	[ "$(osts_up)" = "0 1 2 3" ]
}

test_10_back() {
	[ "$(osts_up)" = "0 1 2 3 4 5" ]
}

test_10() {
	local t=$SECONDS
	cut oss3
	if ! wait_until 90 test_10_gone; then
		restore oss3
		_e2e_assert_failed "the MDS still lists OSS host 3's OSTs: $(osts_up)"
	fi
	echo "   the MDS listed OSTs 4 and 5 down after $((SECONDS - t)) s"
	restore oss3
	wait_until 90 test_10_back || _e2e_assert_failed "OSTs up after the host returned: $(osts_up)"
	echo "   and up again $((SECONDS - t)) s after the cut"
}
run_test 10 "a vanished OSS host's OSTs go down at the MDS and come back" test_10

# nacre_read_many() (a data loader's batches) over packed small files with
# an OSS host cut off, from client A's host through libnacre: the files
# with bytes on its OSTs are decoded from the others.  An OST whose request
# timed out is not asked again for a while, so the first batch waits for
# the request timeout and the others do not (each one did, before).
RM_FILES=640
RM_TIMEOUT_MS=8000
test_11_read() {
	in_ns cla env NACRE_LIBRARY="$NACRE_BIN_DIR/.libs/libnacre.so.0" \
		PYTHONPATH="$top_srcdir/bindings/python" PYTHONDONTWRITEBYTECODE=1 \
		timeout 300 python3 - "$MDS_ADDR" "$FSNAME" "$KEYFILE" "$W/rm" "$RM_FILES" \
		"$RM_TIMEOUT_MS" <<'PYEOF'
import sys
import nacre
mds, fsname, keyfile, ref, n, tmo = sys.argv[1:7]
fs = nacre.connect(mds, fsname, keyfile=keyfile, timeout_ms=int(tmo))
names = ["s%d" % i for i in range(int(n))]
bad = 0
for i in range(0, len(names), 64):
    part = names[i:i + 64]
    got = fs.read_many(["/rm/" + x for x in part], size_hint=65536)
    for x, b in zip(part, got):
        with open(ref + "/" + x, "rb") as f:
            if b != f.read():
                bad += 1
                print("differs:", x, b if isinstance(b, Exception) else len(b))
sys.exit(1 if bad else 0)
PYEOF
}

test_11() {
	local i rc=0 t took
	if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null ||
		[ ! -e "$NACRE_BIN_DIR/.libs/libnacre.so.0" ] || e2e_sanitized; then
		echo "   skipped: no Python 3.9 or a sanitizer build"
		return 0
	fi
	mkdir -p "$W/rm" "$MNT_A/rm"
	in_ns cla "$NACRE" setstripe --pack "$MNT_A/rm"
	for i in $(seq 0 $((RM_FILES - 1))); do
		head -c $((3000 + i * 37)) /dev/urandom > "$W/rm/s$i"
		cp -- "$W/rm/s$i" "$MNT_A/rm/s$i"
	done
	sync "$MNT_A"/rm/*
	test_11_read || rc=1
	assert_eq "$rc" 0 "the files read with every host up"
	cut oss3
	drop_caches || true
	t=$SECONDS
	test_11_read || rc=1
	took=$((SECONDS - t))
	restore oss3
	echo "   $RM_FILES packed files read in batches of 64 with oss3 cut off in $took s"
	wait_until 90 test_10_back || _e2e_assert_failed "OSTs up after oss3 returned: $(osts_up)"
	assert_eq "$rc" 0 "the files read with oss3 cut off"
	assert_eq "$([ "$took" -lt 40 ] && echo quick || echo "$took s")" "quick" \
		"$((RM_FILES / 64)) batches with oss3 cut off (one request timeout is 8 s)"
}
run_test 11 "nacre_read_many with an OSS host cut off: one timeout, not one a batch" test_11

test_9() {
	local pid k name
	while read -r pid k name; do
		case "$k" in
		mds | oss) grep -q "nacre-$k" "/proc/$pid/cmdline" ||
			_e2e_assert_failed "$name (pid $pid) is not running" ;;
		mount) grep -q "mount.nacre" "/proc/$pid/cmdline" ||
			_e2e_assert_failed "$name (pid $pid) is not running" ;;
		link) grep -q "netns_link" "/proc/$pid/cmdline" ||
			_e2e_assert_failed "$name (pid $pid) is not running" ;;
		esac
	done <"$PIDS"
	assert_eq "$(osts_up)" "0 1 2 3 4 5" "OSTs up at the MDS"
	_e2e_is_mounted "$MNT_A" || _e2e_assert_failed "A's mount is gone"
	_e2e_is_mounted "$MNT_B" || _e2e_assert_failed "B's mount is gone"
}
run_test 9 "every daemon, mount and link is alive at the end" test_9
