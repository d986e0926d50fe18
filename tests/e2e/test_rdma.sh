#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: the RDMA transport.  Six OSTs, files laid out 4+2.
#
# Where the suite runs decides what it checks (make check-rdma runs it with
# NACRE_E2E_TRANSPORT=rdma inside a machine with an RDMA device; make check
# runs it on a host that has none):
#   - over RDMA: every OST is reached over RDMA, the reads of a large file
#     are RDMA READs with several in flight at once (the counters say so),
#     a registered buffer is registered once, and killing an OSS during
#     RDMA reads leaves the reader with degraded reads and the right bytes;
#   - without a device: the daemons are told to listen on rdma:// and
#     tcp:// both; they serve on TCP alone, clients given both addresses
#     fall back to TCP, and the same reads and the same fault work.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
export OSTS=6
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

READ_CHECK=$top_builddir/tests/libclient/read_check
[ -x "$READ_CHECK" ] || e2e_skip "read_check is not built (make check builds it)"
if [ "$XPRT" = tcp ]; then
	# No RDMA device here: ask for both and see TCP serve.
	XPRT=both
	WANT=tcp
else
	WANT=rdma
fi
cluster_up
WORK=$(mktemp -d "$CDIR/e2e-rdma.XXXXXX")
BIG=$((24 * S))
mkdata "$WORK/big.ref" "$BIG" 61

# read_check_run OUT ARGS...: reads /big through libnacre; JSON in OUT.
read_check_run()
{
	local out=$1
	shift
	"$READ_CHECK" --mds "$MDS_ADDR" --fsname "$FSNAME" --path /big \
		--ref "$WORK/big.ref" "$@" > "$out"
}

test_1()
{
	cp "$WORK/big.ref" "$MNT/big"
	"$NACRE" osts --json "$MNT" > "$WORK/osts.json"
	cat "$WORK/osts.json"
	python3 - "$WORK/osts.json" "$WANT" "$NOST" <<'PYEOF'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
want, nost = sys.argv[2], int(sys.argv[3])
assert len(d) == nost, d
for x in d:
    assert x["state"] == "up", x
    assert x["transport"] == want, x
    # The OST table lists every address its OSS listens on.
    if want == "rdma":
        assert x["address"].startswith("rdma://"), x
print("every OST over %s" % want)
PYEOF
	"$NACRE" df --json "$MNT" > "$WORK/df.json"
	assert_eq "$(jget "sorted(set(t['transport'] for t in d['targets'])), len(d['targets'])" \
		< "$WORK/df.json")" "(['$WANT'], $((NOST + 1)))" "df transports"
}
run_test 1 "nacre osts and df show the transport of every target" test_1

test_2()
{
	read_check_run "$WORK/r2.json" --loops 2
	cat "$WORK/r2.json"
	python3 - "$WORK/r2.json" "$WANT" "$BIG" <<'PYEOF'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
want, big = sys.argv[2], int(sys.argv[3])
assert d["mismatches"] == 0 and d["bytes"] == 2 * big, d
assert d["mds_transport"] == want, d
# The data OSTs of each row are read (the parity ones only when one is
# missing): the OSTs this client talks to are at least four.
used = [t for t in d["ost_transports"].values() if t != "-"]
assert len(used) >= 4 and set(used) == {want}, d
r = d["rdma"]
if want == "rdma":
    # The data came by RDMA READ, from several OSTs at once.
    assert r["reads"] > 0 and r["read_bytes"] >= 2 * big, r
    assert r["reads_inflight_max"] >= 2, r
else:
    assert r["conns"] == 0 and r["reads"] == 0, r
print("read %d bytes; rdma reads %d, at most %d in flight" %
      (d["bytes"], r["reads"], r["reads_inflight_max"]))
PYEOF
}
run_test 2 "a large file reads back through libnacre; RDMA READs in flight together" test_2

test_3()
{
	read_check_run "$WORK/r3.json" --pin --loops 3
	cat "$WORK/r3.json"
	python3 - "$WORK/r3.json" "$WANT" <<'PYEOF'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
want = sys.argv[2]
assert d["mismatches"] == 0, d
r = d["rdma"]
if want == "rdma":
    # Every chunk landed in the registered buffer: no per-read registration.
    assert r["pinned_hits"] >= r["reads"] > 0, r
PYEOF
}
run_test 3 "a registered read buffer is registered once" test_3

test_4()
{
	local pid rc=0

	rm -f "$WORK/progress"
	read_check_run "$WORK/r4.json" --loops 8 --progress "$WORK/progress" &
	pid=$!
	wait_until 120 test -s "$WORK/progress"
	"$CLUSTER" kill oss 2 --dir "$CDIR"
	wait "$pid" || rc=$?
	cat "$WORK/r4.json"
	assert_eq "$rc" "0" "read_check exit status with OSS 2 killed"
	assert_eq "$(jget 'd["loops"]' < "$WORK/r4.json")" "8" "loops done"
	"$CLUSTER" start oss 2 --dir "$CDIR"
	cmp_uncached "$WORK/big.ref" "$MNT/big"
}
run_test 4 "an OSS killed during reads: degraded reads give the right bytes" test_4

finish
