#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: every daemon serves Prometheus metrics that promtool
# accepts, the counters move by at least what the test did, a write with an
# OSS down and a degraded read show up at the MDS and the client, the client
# counters reach `nacre stats` and a mount's own metrics port, and the
# metrics ports answer nothing but GET /metrics.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# Six OSTs: the default layout is erasure-coded 4+2.
export OSTS=6
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

# scripts/install-deps puts promtool on PATH or in this directory.
PROMTOOL=${PROMTOOL:-$(command -v promtool || true)}
[ -n "$PROMTOOL" ] || PROMTOOL=/usr/local/lib/nacre/tools/promtool
[ -x "$PROMTOOL" ] || e2e_skip "promtool not found (run scripts/install-deps)"
command -v curl >/dev/null 2>&1 || e2e_skip "curl is not installed"

cluster_up
WORK=$(mktemp -d "$CDIR/e2e-metrics.XXXXXX")
MB=$((1024 * 1024))
SECOND_MNT=""
# In the log directory, which the teardown searches for sanitizer reports.
SECOND_LOG=$CDIR/log/mnt2.log

# The second mount (test 6) goes before the cluster's own teardown.
metrics_cleanup()
{
	local rc=$?

	if [ -n "$SECOND_MNT" ] && _e2e_is_mounted "$SECOND_MNT"; then
		fusermount3 -u -- "$SECOND_MNT" 2>/dev/null || umount -l -- "$SECOND_MNT"
	fi
	# _e2e_cleanup takes the script's exit status from $?.
	(exit "$rc")
	_e2e_cleanup
}
trap metrics_cleanup EXIT

# metrics_of NAME: the metrics address of daemon NAME from the launcher.
metrics_of()
{
	status_json | jget "[x['metrics'] for x in d['daemons'] if x['name'] == '$1'][0]"
}

# scrape ADDR [FILE]: GET /metrics of tcp://ADDR into FILE (stdout without).
scrape()
{
	curl -sS -f --max-time 10 -o "${2:-/dev/stdout}" "http://${1#tcp://}/metrics"
}

# mval FILE NAME [LABELS]: the sum of the samples of NAME (whose labels
# contain LABELS, e.g. op="create") in scrape FILE; 0 when there are none.
mval()
{
	awk -v n="$2" -v l="${3:-}" '
		$1 !~ /^#/ {
			name = $1; sub(/\{.*/, "", name)
			if (name == n && index($1, l)) s += $2
		}
		END { printf "%.0f\n", s }' "$1"
}

# http_code ADDR PATH [CURL ARGS]: the status of a request to the port.
http_code()
{
	local addr=$1 path=$2
	shift 2
	curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@" "http://${addr#tcp://}$path"
}

# ge A B MSG: A >= B, as integers.
ge()
{
	[ "$1" -ge "$2" ] || _e2e_assert_failed "$3: $1 < $2"
}

# client_counter MOUNT NAME: one counter from `nacre stats --json MOUNT`.
client_counter()
{
	"$NACRE" stats --json "$1" | jget "d['counters']['$2']"
}

DAEMONS=(mds oss0 oss1 oss2 oss3 oss4 oss5)

# The files test 2 writes, for tests run without it (ONLY=...).
ensure_data()
{
	[ -f "$MNT/m2/f1" ] && return 0
	mkdata "$WORK/data" $((6 * MB)) 2
	mkdir -p "$MNT/m2"
	cp "$WORK/data" "$MNT/m2/f0"
	cp "$WORK/data" "$MNT/m2/f1"
}

test_1()
{
	local json name addr seen=" "
	json=$(status_json)
	echo "$json"
	for name in "${DAEMONS[@]}"; do
		addr=$(metrics_of "$name")
		[[ $addr =~ ^tcp://127\.0\.0\.1:[0-9]+$ ]] ||
			_e2e_assert_failed "metrics address of $name: '$addr'"
		[[ $seen != *" $addr "* ]] || _e2e_assert_failed "$addr listed twice"
		seen+="$addr "
		assert_eq "$(http_code "$addr" /metrics)" 200 "GET /metrics of $name"
	done
	# The text listing has them too.
	"$CLUSTER" status --dir "$CDIR" | grep -q "$(metrics_of oss5)"
}
run_test 1 "nacre-cluster status lists a working metrics port per daemon" test_1

test_2()
{
	local name f n=4 i size=$((6 * MB)) r0 w0 r1 w1 c0 c1 l0 l1
	mkdir "$MNT/m2"
	scrape "$(metrics_of mds)" "$WORK/mds0"
	r0=0 w0=0
	for name in "${DAEMONS[@]:1}"; do
		scrape "$(metrics_of "$name")" "$WORK/$name.0"
		r0=$((r0 + $(mval "$WORK/$name.0" nacre_oss_read_bytes_total)))
		w0=$((w0 + $(mval "$WORK/$name.0" nacre_oss_write_bytes_total)))
	done
	mkdata "$WORK/data" "$size" 2
	for ((i = 0; i < n; i++)); do
		cp "$WORK/data" "$MNT/m2/f$i"
	done
	sync
	for ((i = 0; i < n; i++)); do
		cmp_uncached "$WORK/data" "$MNT/m2/f$i"
	done
	scrape "$(metrics_of mds)" "$WORK/mds1"
	r1=0 w1=0
	for name in "${DAEMONS[@]:1}"; do
		scrape "$(metrics_of "$name")" "$WORK/$name.1"
		r1=$((r1 + $(mval "$WORK/$name.1" nacre_oss_read_bytes_total)))
		w1=$((w1 + $(mval "$WORK/$name.1" nacre_oss_write_bytes_total)))
	done
	echo "OSS bytes read $r0 -> $r1, written $w0 -> $w1"
	# Every byte went to the OSTs once, with parity on top; every byte came
	# back past the page cache.
	ge $((w1 - w0)) $((n * size)) "bytes written at the OSSes"
	ge $((r1 - r0)) $((n * size)) "bytes read at the OSSes"
	c0=$(mval "$WORK/mds0" nacre_mds_requests_total 'op="create"')
	c1=$(mval "$WORK/mds1" nacre_mds_requests_total 'op="create"')
	ge $((c1 - c0)) "$n" "MDS creates"
	l0=$(mval "$WORK/mds0" nacre_mds_requests_total 'op="lookup"')
	l1=$(mval "$WORK/mds1" nacre_mds_requests_total 'op="lookup"')
	ge $((l1 - l0)) 1 "MDS lookups"
	ge "$(mval "$WORK/mds1" nacre_mds_inodes)" $((n + 2)) "inodes"
	assert_eq "$(mval "$WORK/mds1" nacre_mds_osts 'state="up"')" 6 "OSTs up"
	assert_eq "$(mval "$WORK/mds1" nacre_mds_osts 'state="down"')" 0 "OSTs down"
	ge "$(mval "$WORK/mds1" nacre_mds_connections 'transport="tcp"')" 1 "MDS TCP connections"
	ge "$(mval "$WORK/mds1" nacre_mds_lmdb_map_size_bytes)" $((MB)) "LMDB map size"
	ge "$(mval "$WORK/mds1" nacre_mds_lmdb_used_bytes)" 4096 "LMDB bytes used"
	ge "$(mval "$WORK/oss0.1" nacre_oss_ost_size_bytes 'ost="0"')" 1 "size of OST 0"
	# A histogram counts every request its counter counts.
	assert_eq "$(mval "$WORK/mds1" nacre_mds_request_duration_seconds_count 'op="create"')" \
		"$c1" "create latency observations"
	grep -q '^nacre_oss_request_duration_seconds_bucket{op="obj_write",le="+Inf"} ' \
		"$WORK/oss0.1"
}
run_test 2 "request, byte and space figures move by what the test did" test_2

test_3()
{
	local name out
	for name in "${DAEMONS[@]}"; do
		scrape "$(metrics_of "$name")" "$WORK/$name.prom"
		out=$("$PROMTOOL" check metrics < "$WORK/$name.prom" 2>&1) ||
			_e2e_assert_failed "promtool on $name: $out"
		[ -z "$out" ] || _e2e_assert_failed "promtool on $name: $out"
	done
}
run_test 3 "promtool check metrics finds no problem in any daemon's metrics" test_3

test_4()
{
	local r w out
	ensure_data
	cmp_uncached "$WORK/data" "$MNT/m2/f0"
	"$NACRE" stats "$MNT" > "$WORK/stats.txt"
	cat "$WORK/stats.txt"
	grep -Eq '^COUNTER +VALUE$' "$WORK/stats.txt"
	r=$(awk '$1 == "nacre_client_read_bytes_total" { print $2 }' "$WORK/stats.txt")
	ge "$r" $((6 * MB)) "client bytes read (text)"
	# Any path on the mount names it.
	w=$(client_counter "$MNT/m2" nacre_client_write_bytes_total)
	ge "$w" $((2 * 6 * MB)) "client bytes written (json)"
	ge "$(client_counter "$MNT" nacre_client_writes_total)" 1 "client writes"
	# Not a nacre mount: a clear error, status 1.
	assert_fail "$NACRE" stats "$WORK"
	out=$("$NACRE" stats "$WORK" 2>&1 || true)
	[[ $out == *"no client counters"* ]] || _e2e_assert_failed "message: $out"
	assert_fail "$NACRE" stats "$MNT" extra
	# The attribute is read-only.
	assert_fail setfattr -n nacre.stats -v 1 "$MNT"
}
run_test 4 "nacre stats shows the mount's client counters, as text and JSON" test_4

test_5()
{
	local f=$MNT/m5/stale m0 m1 d0 d1 s0 s1 down ost
	mkdata "$WORK/stale" $((4 * MB)) 5
	mkdir "$MNT/m5"
	: > "$f"
	# The OST of the first data chunk (OSS j serves OST j here): reading
	# without it needs the parity.
	ost=$("$NACRE" getstripe --json "$f" | jget 'd["shards"][0]["ost"]')
	m0=$(scrape "$(metrics_of mds)" | mval /dev/stdin nacre_mds_shards_marked_stale_total)
	s0=$(client_counter "$MNT" nacre_client_shards_marked_stale_total)
	d0=$(client_counter "$MNT" nacre_client_degraded_reads_total)
	oss_stop "$ost"
	dd if="$WORK/stale" of="$f" bs=1M status=none
	# Read with that OST still down: its chunk comes from parity.
	cmp_uncached "$WORK/stale" "$f"
	down=$(scrape "$(metrics_of mds)" | mval /dev/stdin nacre_mds_osts 'state="down"')
	oss_start "$ost"
	assert_eq "$down" 1 "OSTs down at the MDS while OSS $ost was stopped"
	m1=$(scrape "$(metrics_of mds)" | mval /dev/stdin nacre_mds_shards_marked_stale_total)
	s1=$(client_counter "$MNT" nacre_client_shards_marked_stale_total)
	d1=$(client_counter "$MNT" nacre_client_degraded_reads_total)
	ge $((m1 - m0)) 1 "stale marks at the MDS"
	ge $((s1 - s0)) 1 "stale marks by the client"
	ge $((d1 - d0)) 1 "degraded reads"
	"$NACRE" rebuild "$MNT/m5" > /dev/null
	ge "$(scrape "$(metrics_of mds)" | mval /dev/stdin nacre_mds_shards_cleared_stale_total)" 1 \
		"stale marks cleared at the MDS"
}
run_test 5 "a write with an OSS down, a degraded read and a rebuild are counted" test_5

test_6()
{
	local addr out rc
	ensure_data
	SECOND_MNT=$WORK/mnt2
	mkdir "$SECOND_MNT"
	# A bad address is refused before anything is mounted.
	rc=0
	"$MOUNT_NACRE" "$MDS_ADDR:/$FSNAME" "$SECOND_MNT" -o metrics=bogus 2> "$WORK/bad.err" || rc=$?
	assert_eq "$rc" 2 "exit status of mount.nacre -o metrics=bogus"
	grep -q "bad value for option metrics" "$WORK/bad.err"
	"$MOUNT_NACRE" "$MDS_ADDR:/$FSNAME" "$SECOND_MNT" \
		-o "metrics=tcp://127.0.0.1:0,log=$SECOND_LOG"
	addr=$(grep -o 'metrics on tcp://[0-9.]*:[0-9]*' "$SECOND_LOG" | tail -n 1)
	addr=${addr#metrics on }
	[ -n "$addr" ] || _e2e_assert_failed "no metrics address in the mount's log"
	cmp "$WORK/data" "$SECOND_MNT/m2/f0"
	scrape "$addr" "$WORK/mnt2.prom"
	ge "$(mval "$WORK/mnt2.prom" nacre_client_read_bytes_total)" $((6 * MB)) \
		"bytes read through the second mount"
	out=$("$PROMTOOL" check metrics < "$WORK/mnt2.prom" 2>&1) ||
		_e2e_assert_failed "promtool on the mount: $out"
	[ -z "$out" ] || _e2e_assert_failed "promtool on the mount: $out"
	assert_eq "$(http_code "$addr" /other)" 404 "GET /other of the mount"
	fusermount3 -u -- "$SECOND_MNT"
	SECOND_MNT=""
}
run_test 6 "mount.nacre -o metrics serves the client counters on its own port" test_6

test_7()
{
	local name addr pid
	ensure_data
	for name in "${DAEMONS[@]}"; do
		addr=$(metrics_of "$name")
		assert_eq "$(http_code "$addr" /other)" 404 "GET /other of $name"
		assert_eq "$(http_code "$addr" /)" 404 "GET / of $name"
		assert_eq "$(http_code "$addr" /metrics -X POST -d x=1)" 405 "POST of $name"
		assert_eq "$(http_code "$addr" /metrics -X DELETE)" 405 "DELETE of $name"
		# Garbage instead of HTTP gets no metrics.
		printf 'garbage\r\n\r\n' | timeout 10 curl -s --max-time 5 \
			"telnet://${addr#tcp://}" 2>/dev/null | grep -q nacre_ &&
			_e2e_assert_failed "garbage got metrics from $name"
	done
	for name in "${DAEMONS[@]}"; do
		pid=$(cluster_pid "$name")
		kill -0 "$pid" || _e2e_assert_failed "$name (pid $pid) is gone"
		assert_eq "$(http_code "$(metrics_of "$name")" /metrics)" 200 "$name still serves"
	done
	cmp_uncached "$WORK/data" "$MNT/m2/f1"
}
run_test 7 "metrics ports answer 404 and 405 and the daemons stay up" test_7

test_8()
{
	local bin err=$WORK/d.err rc
	for bin in mds/nacre-mds oss/nacre-oss; do
		"$NACRE_BIN_DIR/$bin" --help | grep -q -- "--metrics ADDR"
	done
	# A metrics address that cannot work stops the MDS at start, saying why.
	rc=0
	timeout 30 "$NACRE_BIN_DIR/mds/nacre-mds" --dir "$WORK/mdt" --fsname x --format \
		--listen tcp://127.0.0.1:0 --metrics udp://127.0.0.1:1 2> "$err" || rc=$?
	cat "$err"
	[ "$rc" != 0 ] || _e2e_assert_failed "nacre-mds started with a bad metrics address"
	grep -q "bad metrics address 'udp://127.0.0.1:1'" "$err"
}
run_test 8 "a bad --metrics address stops a daemon with a message" test_8

finish
