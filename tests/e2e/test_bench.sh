#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: nacre-bench.  On a 6-OST filesystem (EC 4+2) a quick run
# through libnacre, the FUSE mount and a local directory prints one JSON
# object with positive figures for every target and the loopback TCP limit,
# each with its ratio to the local directory, and small-file figures with
# packing on and off and on an empty FUSE filesystem (the mount's limit); a
# run whose verifier expects one wrong byte must exit 3, so the check of
# the data read is real (for the small files too); bad usage exits 2; a run
# stopped by SIGINT or SIGTERM removes its files; a run killed outright
# takes its FUSE filesystem with it; and nothing is left behind.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
export OSTS=6
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

BENCH=$NACRE_BIN_DIR/utils/nacre-bench
[ -x "$BENCH" ] || {
	echo "ERROR: $BENCH is not built" >&2
	exit 99
}

# Files per metadata run and per small-file size of the quick run (test 1):
# --quick's 200, or 50 where the daemons are built with the sanitizers,
# whose MDS creates run about fifty times slower (each change's nested
# LMDB transaction allocates megabytes, which ASan maps and unmaps).
QUICK_FILES=()
QUICK_N=200
if e2e_sanitized; then
	QUICK_N=50
	QUICK_FILES=(--files "$QUICK_N" --small-files "$QUICK_N")
fi

cluster_up
# nacre-bench mounts its empty FUSE filesystem (the small-file limit) here.
export TMPDIR=$CDIR
# The local directory lives beside the OSTs, on the same disk.
LOCAL=$(mktemp -d "$CDIR/bench-local.XXXXXX")

bench()
{
	"$BENCH" --mds "tcp://127.0.0.1:$PORT" --fsname "$FSNAME" \
		--local "$LOCAL" "$@"
}

# assert_clean: no bench directory is left on any target.
assert_clean()
{
	local left

	left=$(find "$LOCAL" "$MNT" -maxdepth 1 -name 'nacre-bench.*' | head -n 5)
	assert_eq "$left" "" "bench directories left behind"
	# The empty FUSE filesystem of the small-file limit: unmounted, its
	# directory gone, its server stopped.
	left=$(find "$TMPDIR" -maxdepth 1 -name 'nacre-bench-fuse.*' | head -n 5)
	assert_eq "$left" "" "FUSE limit directories left behind"
	assert_eq "$(grep -c " $TMPDIR/nacre-bench-fuse" /proc/mounts)" "0" \
		"FUSE limit mounts left behind"
}

# The checks of test 1 on the JSON document on stdin.
CHECK_JSON='
import json, sys
d = json.load(sys.stdin)
figs = d["figures"]
targets = {f["target"] for f in figs}
assert targets == {"libnacre", "fuse", "local", "tcp", "fuse_limit"}, targets
for f in figs:
    assert isinstance(f["value"], (int, float)) and f["value"] > 0, f
    assert f["unit"] and f["name"], f
    r = f["ratio_to_local"]
    assert isinstance(r, (int, float)) and r > 0, f
    if f["target"] == "local":
        assert abs(r - 1) < 1e-9, f
names = {(f["target"], f["name"]) for f in figs}
for t in ("libnacre", "fuse", "local"):
    for n in ("seq_write.1m.c1.gbps", "seq_read.4m.c8.gbps",
              "seq_read.1m.c4.lat_p99", "rand_read.4k.c4.iops",
              "rand_read.128k.c1.lat_p99", "meta_create.c4.ops",
              "meta_stat.c1.ops", "meta_open.c4.ops", "meta_unlink.c1.ops"):
        assert (t, n) in names, (t, n)
for t in ("fuse", "local"):
    assert (t, "seq_read_warm.1m.c4.gbps") in names, t
for c in (1, 4, 8):
    assert ("tcp", "tcp.1m.c%d.gbps" % c) in names, c
    # The empty FUSE filesystem: cold sequential reads of the same files.
    for r in ("1m", "4m"):
        for m in ("gbps", "lat_mean", "lat_p99"):
            assert ("fuse_limit", "seq_read.%s.c%d.%s" % (r, c, m)) in names, (r, c, m)
assert not any(t == "fuse_limit" and not (n.startswith("seq_read.") or
                                          n.startswith("small_read."))
               for t, n in names), "fuse_limit figures other than cold reads"
# Small files: argv[1] per size, packing on and off side by side.
k = int(sys.argv[1])
assert d["small_files"] == k, d["small_files"]
assert d["small_sizes"] == ["4k", "64k", "128k", "mixed"], d["small_sizes"]
assert d["small_bytes"][:3] == [k * 4096, k * 65536, k * 131072], d
assert k * 1024 <= d["small_bytes"][3] <= k * 1048576, d
assert d["pack"] == "on", d["pack"]
# Packs are coded as the unpacked files are: like is compared with like.
assert d["pack_layout"].startswith("EC 4+2 over 6 objects,"), d["pack_layout"]
small = {(f["target"], f["name"]): f for f in figs
         if f["workload"].startswith("small_")}
for size in d["small_sizes"]:
    for w in ("small_write", "small_read", "small_read_warm"):
        for t, pack in (("libnacre", True), ("libnacre", False),
                        ("fuse", True), ("fuse", False), ("local", False)):
            for m in ("files_per_s", "mbps"):
                n = "%s.%s%s.c4.%s" % (w, size, ".pack" if pack else "", m)
                f = small[(t, n)]
                if m == "mbps":
                    r = f["ratio_to_seq_read"]
                    assert isinstance(r, (int, float)) and r > 0, f
                if pack:
                    r = f["ratio_to_pack_off"]
                    assert isinstance(r, (int, float)) and r > 0, f
# The empty FUSE filesystem: cold reads only, of every size.
for size in d["small_sizes"]:
    for m in ("files_per_s", "mbps"):
        assert ("fuse_limit", "small_read.%s.c4.%s" % (size, m)) in small, (size, m)
assert len(small) == 4 * 3 * 5 * 2 + 4 * 2, len(small)
print(len(figs), "figures, all positive, with ratios")
'

# The checks of test 4: small files only, odd sizes, no sequential run to
# compare with.
CHECK_SMALL='
import json, sys
d = json.load(sys.stdin)
figs = d["figures"]
assert d["small_sizes"] == ["1000", "mixed"], d["small_sizes"]
assert d["small_bytes"][0] == 40 * 1000, d["small_bytes"]
assert {f["workload"] for f in figs} == \
    {"small_write", "small_read", "small_read_warm"}, figs
assert len(figs) == 2 * 3 * 5 * 2 + 2 * 2, len(figs)
assert sum(f["target"] == "fuse_limit" and f["workload"] == "small_read"
           for f in figs) == 2 * 2, figs
for f in figs:
    assert f["value"] > 0, f
    if f["metric"] == "mbps":
        assert f["ratio_to_seq_read"] is None, f
print(len(figs), "small-file figures")
'

test_1()
{
	local json rc=0

	# Generous: a sanitizer build beside another suite takes over two minutes.
	json=$(timeout -k 30 400 "$BENCH" --quick --json "${QUICK_FILES[@]}" \
		--mds "tcp://127.0.0.1:$PORT" --fsname "$FSNAME" --mount "$MNT" \
		--local "$LOCAL") || rc=$?
	assert_eq "$rc" "0" "nacre-bench --quick --json exit status"
	python3 -c "$CHECK_JSON" "$QUICK_N" <<< "$json" || _e2e_assert_failed "bad JSON figures"
	assert_clean
}

test_2()
{
	local rc=0 err

	err=$(timeout -k 30 50 "$BENCH" --quick --json --self-test-corrupt \
		--mds "tcp://127.0.0.1:$PORT" --fsname "$FSNAME" --mount "$MNT" \
		--local "$LOCAL" 2>&1 >/dev/null) || rc=$?
	printf '%s\n' "$err" | grep -v '^nacre-bench: [a-z]*: [a-z]' || true
	assert_eq "$rc" "3" "exit status with a corrupted expectation"
	[[ $err == *"DATA MISMATCH"*"offset 0"* ]] ||
		_e2e_assert_failed "no mismatch report in: $err"
	assert_clean
	# The small-file reads check every byte too (the first file read
	# is a packed one, through libnacre).
	rc=0
	err=$(timeout -k 30 50 "$BENCH" --only small --small-files 8 \
		--small-sizes 4k --self-test-corrupt \
		--mds "tcp://127.0.0.1:$PORT" --fsname "$FSNAME" --mount "$MNT" \
		--local "$LOCAL" 2>&1 >/dev/null) || rc=$?
	assert_eq "$rc" "3" "small files: exit status with a corrupted expectation"
	[[ $err == *"DATA MISMATCH: libnacre"*"small-pack/4k-"*"offset 0"* ]] ||
		_e2e_assert_failed "no small-file mismatch report in: $err"
	assert_clean
}

test_3()
{
	local rc

	rc=0; bench --bogus 2>/dev/null || rc=$?
	assert_eq "$rc" "2" "unknown option"
	rc=0; bench --size 0 2>/dev/null || rc=$?
	assert_eq "$rc" "2" "--size 0"
	rc=0; bench --streams 1,x 2>/dev/null || rc=$?
	assert_eq "$rc" "2" "--streams 1,x"
	rc=0; "$BENCH" --mds "tcp://127.0.0.1:$PORT" 2>/dev/null || rc=$?
	assert_eq "$rc" "2" "missing --fsname"
	rc=0; bench --streams 1 --help >/dev/null || rc=$?
	assert_eq "$rc" "0" "--help"
	rc=0; bench --quick --fsname "no-such-fs" 2>/dev/null || rc=$?
	assert_eq "$rc" "1" "wrong fsname"
	rc=0; bench --only small,bogus 2>/dev/null || rc=$?
	assert_eq "$rc" "2" "--only small,bogus"
	rc=0; bench --small-files 0 2>/dev/null || rc=$?
	assert_eq "$rc" "2" "--small-files 0"
	rc=0; bench --small-sizes 2m 2>/dev/null || rc=$?
	assert_eq "$rc" "2" "--small-sizes 2m (larger than 1M)"
	rc=0; bench --small-sizes 4k,4k 2>/dev/null || rc=$?
	assert_eq "$rc" "2" "--small-sizes 4k,4k"
	rc=0; bench --small-sizes mixed,x 2>/dev/null || rc=$?
	assert_eq "$rc" "2" "--small-sizes mixed,x"
	rc=0; bench --repeat 0 2>/dev/null || rc=$?
	assert_eq "$rc" "2" "--repeat 0"
	rc=0; bench --repeat 10 2>/dev/null || rc=$?
	assert_eq "$rc" "2" "--repeat 10"
}

# Every sequential figure of a --repeat 3 run has three samples and is
# their median.
CHECK_REPEAT='
import json, sys
d = json.load(sys.stdin)
assert d["repeat"] == 3, d["repeat"]
figs = [f for f in d["figures"] if f["workload"].startswith("seq_")]
assert figs, "no sequential figures"
for f in figs:
    s = sorted(f["samples"])
    assert len(s) == 3, f
    assert f["value"] == s[1], f
print(len(figs), "sequential figures, each the median of 3")
'

test_5()
{
	local json rc=0

	json=$(timeout -k 30 300 "$BENCH" --quick --json --only seq --repeat 3 --streams 1 \
		--threads 1 --mds "tcp://127.0.0.1:$PORT" --fsname "$FSNAME" \
		--mount "$MNT" --local "$LOCAL") || rc=$?
	assert_eq "$rc" "0" "nacre-bench --repeat 3 exit status"
	python3 -c "$CHECK_REPEAT" <<< "$json" || _e2e_assert_failed "bad --repeat figures"
	assert_clean
}

test_4()
{
	local json rc=0

	json=$(timeout -k 30 200 "$BENCH" --json --only small --small-files 40 \
		--small-sizes 1000,mixed --mds "tcp://127.0.0.1:$PORT" \
		--fsname "$FSNAME" --mount "$MNT" --local "$LOCAL") || rc=$?
	assert_eq "$rc" "0" "nacre-bench --only small exit status"
	python3 -c "$CHECK_SMALL" <<< "$json" || _e2e_assert_failed "bad small-file JSON"
	assert_clean
}

# stop_after SIG PATTERN ARGS...: starts a run, sends SIG once its progress
# lines show PATTERN (a workload under way) and it has made a file, and
# prints the run's exit status; a run still there 60 s later is killed
# (status 999).
stop_after()
{
	local sig=$1 pattern=$2 pid i rc=0
	shift 2

	# Not through bench(): $! must be nacre-bench itself.
	"$BENCH" --mds "tcp://127.0.0.1:$PORT" --fsname "$FSNAME" --local "$LOCAL" \
		--mount "$MNT" "$@" > /dev/null 2> "$CDIR/bench-stop.err" &
	pid=$!
	wait_until 60 grep -q -e "$pattern" "$CDIR/bench-stop.err" || true
	wait_until 60 eval '[ -n "$(find "$MNT" "$LOCAL" -mindepth 2 -type f 2> /dev/null |
		head -n 1)" ]' || true
	kill -s "$sig" "$pid"
	for ((i = 0; i < 600; i++)); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2> /dev/null; then
		kill -9 "$pid"
		wait "$pid" || true
		echo 999
		return
	fi
	wait "$pid" || rc=$?
	echo "$rc"
}

# A run stopped by SIGINT (Ctrl-C) or SIGTERM removes what it made on
# every target and exits 128 + the signal.
test_6()
{
	local rc

	# Mid-way through writing 4 streams of 256 MiB.
	rc=$(stop_after INT "libnacre: sequential" --only seq --size 256m --streams 4 --threads 1)
	cat "$CDIR/bench-stop.err"
	assert_eq "$rc" "130" "exit status after SIGINT"
	grep -q "stopped by Interrupt" "$CDIR/bench-stop.err" ||
		_e2e_assert_failed "no stop message"
	assert_clean
	# Mid-way through the small files: packs, plain files, local files.
	rc=$(stop_after TERM "libnacre pack off: small" --only small --small-files 600 \
		--small-sizes 4k)
	cat "$CDIR/bench-stop.err"
	assert_eq "$rc" "143" "exit status after SIGTERM"
	grep -q "stopped by Terminated" "$CDIR/bench-stop.err" ||
		_e2e_assert_failed "no stop message"
	assert_clean
	# Nothing of them is left in the filesystem either.
	assert_eq "$(ls -A "$MNT")" "" "entries left in the filesystem"
}

# The empty FUSE filesystem's server goes with a run that is killed
# outright: it unmounts and removes its directory.
test_7()
{
	local pid mnt

	"$BENCH" --mds "tcp://127.0.0.1:$PORT" --fsname "$FSNAME" --local "$LOCAL" \
		--mount "$MNT" --only small --small-files 400 --small-sizes 4k \
		> /dev/null 2> "$CDIR/bench-kill.err" &
	pid=$!
	# It is mounted before the run connects.
	wait_until 60 grep -q " $TMPDIR/nacre-bench-fuse" /proc/mounts || true
	mnt=$(grep " $TMPDIR/nacre-bench-fuse" /proc/mounts | awk '{ print $2 }')
	kill -9 "$pid"
	wait "$pid" || true
	cat "$CDIR/bench-kill.err"
	assert_eq "$([ -n "$mnt" ] && echo mounted)" "mounted" "the FUSE limit mounted during the run"
	wait_until 20 eval '! grep -q " $mnt " /proc/mounts && [ ! -e "$mnt" ]' || true
	# What the killed run made is removed by hand (a request it sent
	# before it died may still make a file meanwhile).
	wait_until 20 eval 'rm -rf "$LOCAL"/nacre-bench.* "$MNT"/nacre-bench.* 2> /dev/null' || true
	assert_clean
}

run_test 1 "quick run: JSON figures for libnacre, fuse, local, tcp and the FUSE limit" test_1
run_test 2 "a wrong byte fails verification with exit 3" test_2
run_test 3 "bad usage exits 2, a wrong fsname 1" test_3
run_test 4 "small files only: odd sizes, every target, no sequential reference" test_4
run_test 5 "--repeat 3: every sequential figure is the median of three runs" test_5
run_test 6 "SIGINT or SIGTERM stops a run and removes its files" test_6
run_test 7 "a run killed outright takes its empty FUSE filesystem with it" test_7
finish
