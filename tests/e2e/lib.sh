# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The shared library of nacre's end-to-end suites (tests/e2e/test_*.sh),
# sourced by bash after `make check` exported $top_builddir and $top_srcdir.
# A suite starts with
#
#   [ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
#   . "$(dirname -- "$0")/lib.sh"
#
# (automake runs it as "sh FILE", and lib.sh needs bash).  Sourcing sets
# $top_srcdir and $top_builddir where make did not (to the tree this file is
# in) and exports them, and sets LC_ALL=C: suites compare error texts, which
# must not be translated.
#
#   NOST, S, N               the number of OSTs (${OSTS:-4}), the stripe size
#                            and the stripe count (min(4, NOST)) of the
#                            default layout
#   cluster_up [ARGS]        start a cluster (nacre-cluster up ARGS) in a temp
#                            dir; exports CDIR, MNT, PORT, FSNAME,
#                            MDS_ADDR (what a client or mount is given, e.g.
#                            tcp://127.0.0.1:PORT) and NACRE_KEYFILE (the
#                            cluster key, for the CLI, tools and bindings);
#                            torn down at exit
#   run_test N "desc" FUNC   run FUNC in a subshell under set -e, print
#                            PASS/FAIL N desc (ONLY="1 3" / EXCEPT="2" pick)
#   finish                   print "P passed, F failed" and exit 0 or 1
#   assert_eq A B [MSG], assert_file_eq F1 F2, assert_fail CMD...,
#   assert_errno TEXT CMD... (TEXT may be an errno name like ENOENT)
#   ost_object_path I FID    the file of FID's object on OST I
#   shard_objects PATH       "SHARD OST OBJECT_PATH" for each shard of PATH
#   wait_until SECS CMD...   poll CMD until it succeeds or SECS pass
#   retry SECS CMD...        run CMD until it succeeds, for SECS of wall time
#   wait_gone SECS PATH...   wait until none of the PATHs exists
#   cluster_pid NAME         pid of daemon NAME (mds, oss0, ...) from CDIR/run
#   status_json              the launcher's view of the cluster, as JSON
#   mkdata FILE SIZE SEED    FILE gets SIZE pseudo-random bytes, the same for
#                            the same SEED on every run
#   jget EXPR                evaluate the Python EXPR on the JSON on stdin
#   drop_caches              drop the kernel's page cache (false when this
#                            machine does not let us)
#   cmp_uncached REF FILE    compare FILE, read past the page cache (within
#                            60 s), with REF
#   oss_stop I...            stop the OSS processes I... together
#   oss_start [--replace] I...  start them again together and wait until
#                            their OSTs are up (--replace: see nacre-cluster)
#
# Assertions exit the subshell of the test that calls them, so a failed
# assertion fails its test even where set -e is not in force (inside `if`,
# `&&` lists or functions called from them).
#
# NACRE_E2E_KEEP=1 keeps the cluster directory (daemons stopped) for a look
# at the logs and the objects after a run.
#
# NACRE_E2E_TEST_TIMEOUT (seconds, default 900): a test still running then
# is stopped, with the stacks of the cluster's processes shown (see
# "watchdog" below), and the suite's remaining tests are not run.
# NACRE_E2E_SUITE_TIMEOUT (seconds, default 1800) bounds a whole suite
# from its cluster_up, its own code between tests included: it is then
# stopped the same way, and its cluster with it.
#
# NACRE_E2E_TRANSPORT (tcp, rdma or both; default tcp) and NACRE_E2E_HOST
# (default 127.0.0.1) choose how the clusters of the suites listen: make
# check-rdma runs suites with rdma on an address of the RDMA device.
# XPRT and HOST hold them.

if [ -z "${BASH_VERSION:-}" ]; then
	echo "tests/e2e/lib.sh must be sourced by bash" >&2
	exit 99
fi

E2E_LIB_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
: "${top_srcdir:=$(cd -- "$E2E_LIB_DIR/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir
# Error texts are compared, so they must not be translated.
export LC_ALL=C

# The suites run Python a few hundred times (JSON fields, byte-exact
# writes, load generators).  Where a version manager's shim (pyenv) stands
# ahead of Debian's python3 on PATH, every call costs about 0.3 s more
# than the interpreter itself (0.05 s): the tests then run Debian's, the
# one install-deps installs, through a directory of the build tree ahead on
# PATH.  E2E_USER_PYTHON keeps the one PATH gave (test_python runs the
# bindings with it, since that is where a user's torch would be).
E2E_USER_PYTHON=$(command -v python3 || true)
if [ -x /usr/bin/python3 ] && [ -n "$E2E_USER_PYTHON" ] &&
	[ "$E2E_USER_PYTHON" != /usr/bin/python3 ]; then
	_e2e_pybin=$top_builddir/tests/e2e/python-bin
	mkdir -p "$_e2e_pybin" 2> /dev/null || true
	[ -e "$_e2e_pybin/python3" ] || ln -s /usr/bin/python3 "$_e2e_pybin/python3" 2> /dev/null || true
	[ ! -x "$_e2e_pybin/python3" ] || PATH=$_e2e_pybin:$PATH
fi
export E2E_USER_PYTHON PATH

# e2e_sanitized: true when libnacre (and with it the daemons) is built with
# the sanitizers (--enable-sanitizers).
e2e_sanitized() {
	ldd "$NACRE_BIN_DIR/.libs/libnacre.so.0" 2> /dev/null | grep -q libasan
}

e2e_skip() {
	echo "SKIP: $*"
	exit 77
}

# ---------------------------------------------------------------- skip rules

[ "$(id -u)" = 0 ] || e2e_skip "needs root to mount FUSE filesystems"
[ -c /dev/fuse ] || e2e_skip "no /dev/fuse"
command -v fusermount3 >/dev/null 2>&1 || e2e_skip "fusermount3 is not installed"

# ---------------------------------------------------------------- programs

NACRE_BIN_DIR=$(cd -- "$top_builddir" && pwd)
NACRE=$NACRE_BIN_DIR/utils/nacre
CLUSTER=$NACRE_BIN_DIR/utils/nacre-cluster
MOUNT_NACRE=$NACRE_BIN_DIR/utils/mount.nacre
# nacre-cluster takes its daemons from this build tree.
NACRE_BINDIR=$NACRE_BIN_DIR
export NACRE_BIN_DIR NACRE_BINDIR NACRE CLUSTER MOUNT_NACRE
# Startup on a loaded 2-core runner may take a while.
: "${NACRE_CLUSTER_TIMEOUT:=60}"
export NACRE_CLUSTER_TIMEOUT

for e2e_prog in "$NACRE" "$CLUSTER" "$MOUNT_NACRE" \
	"$NACRE_BIN_DIR/mds/nacre-mds" "$NACRE_BIN_DIR/oss/nacre-oss"; do
	if [ ! -x "$e2e_prog" ]; then
		echo "ERROR: $e2e_prog is not built" >&2
		exit 99
	fi
done
unset e2e_prog

# ---------------------------------------------------------------- the cluster

# The default layout: stripes of S bytes over N of the NOST OSTs.  Not every
# suite needs all three.
NOST=${OSTS:-4}
# shellcheck disable=SC2034
S=1048576
# shellcheck disable=SC2034
N=$((NOST < 4 ? NOST : 4))

CDIR=""
MNT=""
PORT=""
FSNAME=""
MDS_ADDR=""
XPRT=${NACRE_E2E_TRANSPORT:-tcp}
HOST=${NACRE_E2E_HOST:-127.0.0.1}
export XPRT HOST
E2E_PASSED=0
E2E_FAILED=0
E2E_FAILED_LIST=""

# The address list of a daemon of the test cluster on port $1 (as
# nacre-cluster gives it to clients).
xprt_addr() {
	case "$XPRT" in
	rdma) printf 'rdma://%s:%s' "$HOST" "$1" ;;
	both) printf 'rdma://%s:%s,tcp://%s:%s' "$HOST" "$1" "$HOST" "$1" ;;
	*) printf 'tcp://%s:%s' "$HOST" "$1" ;;
	esac
}

_e2e_port_busy() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Prints a base port with $1 consecutive free ports.  Each test script
# starts at its own offset so parallel `make check -j` runs rarely meet.
_e2e_free_port() {
	local n=$1 step=10 base tries i busy

	[ "$n" -le "$step" ] || step=$n
	base=$((7300 + ($$ % 200) * 10))
	for ((tries = 0; tries < 400; tries++)); do
		if [ $((base + n)) -gt 65000 ]; then
			base=7300
		fi
		busy=0
		for ((i = 0; i < n; i++)); do
			if _e2e_port_busy $((base + i)); then
				busy=1
				break
			fi
		done
		if [ $busy = 0 ]; then
			printf '%s\n' "$base"
			return 0
		fi
		base=$((base + step))
	done
	echo "no free port range found" >&2
	return 1
}

_e2e_conf_get() {
	(
		# shellcheck disable=SC1091
		. "$CDIR/cluster.conf" && eval "printf '%s\n' \"\${$1}\""
	)
}

e2e_show_logs() {
	local f

	[ -n "$CDIR" ] && [ -d "$CDIR/log" ] || return 0
	for f in "$CDIR"/log/*.log; do
		[ -f "$f" ] || continue
		printf -- '---- %s (last 50 lines) ----\n' "${f##*/}"
		tail -n 50 -- "$f"
	done
}

_e2e_is_mounted() {
	local want mp

	want=$1
	want=${want//\\/\\134}
	want=${want// /\\040}
	while read -r _ mp _; do
		[ "$mp" = "$want" ] && return 0
	done </proc/self/mounts
	return 1
}

# An OSS a test stopped with SIGSTOP (its connections stay open, nothing
# answers): the test clears it once it continues the OSS, and the cleanup
# continues it, so that the cluster can stop.
STOPPED_PID=""

_e2e_continue_stopped() {
	[ -z "$STOPPED_PID" ] || kill -CONT "$STOPPED_PID" 2> /dev/null
	STOPPED_PID=""
}

_e2e_cleanup() {
	local rc=$?

	trap - EXIT
	set +e
	_e2e_continue_stopped
	cd / || true
	if [ -n "$CDIR" ] && [ -d "$CDIR" ]; then
		if [ "$rc" -ne 0 ] || [ "$E2E_FAILED" -gt 0 ]; then
			e2e_show_logs
		fi
		"$CLUSTER" down --dir "$CDIR" || echo "WARNING: nacre-cluster down failed" >&2
		# A daemon built with sanitizers reports leaks and errors into its
		# log as it exits: any such report fails the suite.
		if grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
			"$CDIR"/log/*.log >/dev/null 2>&1; then
			echo "FAIL: sanitizer report in a daemon log:"
			grep -h -A30 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$CDIR"/log/*.log
			rc=1
		fi
		if [ -n "$MNT" ] && _e2e_is_mounted "$MNT"; then
			echo "WARNING: $MNT is still mounted; leaving $CDIR" >&2
		elif [ "${NACRE_E2E_KEEP:-0}" = 1 ]; then
			echo "kept $CDIR"
		else
			rm -rf --one-file-system -- "$CDIR"
		fi
	fi
	exit "$rc"
}

# Starts a cluster of ${OSTS:-4} OSTs on free ports; extra arguments go to
# `nacre-cluster up`.  Exits the script when the cluster cannot start.
cluster_up() {
	local osts=${OSTS:-4} attempt port out rc

	if [ -n "$CDIR" ]; then
		echo "cluster_up: a cluster is already up in $CDIR" >&2
		exit 1
	fi
	trap _e2e_cleanup EXIT
	for attempt in 1 2 3; do
		CDIR=$(mktemp -d -t nacre-e2e.XXXXXX) || exit 99
		port=$(_e2e_free_port $((osts + 1))) || exit 99
		rc=0
		out=$("$CLUSTER" up --dir "$CDIR" --port "$port" --osts "$osts" \
			--transport "$XPRT" --host "$HOST" "$@" 2>&1) || rc=$?
		printf '%s\n' "$out"
		[ $rc -ne 0 ] || break
		# Another test may have taken the ports between the probe and the
		# bind; anything else is a real failure.
		if [ $attempt -lt 3 ] && [[ $out == *"in use"* ]]; then
			echo "cluster_up: ports taken, trying again"
			"$CLUSTER" down --dir "$CDIR" >/dev/null 2>&1
			rm -rf --one-file-system -- "$CDIR"
			CDIR=""
			continue
		fi
		echo "cluster_up: nacre-cluster up failed (status $rc)" >&2
		exit 1
	done
	MNT=$(_e2e_conf_get MOUNT)
	PORT=$(_e2e_conf_get PORT)
	FSNAME=$(_e2e_conf_get FSNAME)
	MDS_ADDR=$(xprt_addr "$PORT")
	NACRE_KEYFILE=$(_e2e_conf_get KEYFILE)
	export CDIR MNT PORT FSNAME MDS_ADDR NACRE_KEYFILE
	_e2e_suite_watch "$NACRE_E2E_SUITE_TIMEOUT" "$$" &
}

cluster_pid() {
	local pid

	read -r pid <"$CDIR/run/$1.pid" || return 1
	printf '%s\n' "$pid"
}

# status_json: the launcher's view of the cluster.
status_json() {
	"$CLUSTER" status --json --dir "$CDIR"
}

# pywrite SRC DST CHUNK: SRC copied to DST with Python in CHUNK-byte writes
# (odd sizes make every write straddle chunk boundaries).
pywrite() {
	python3 - "$1" "$2" "$3" <<'PYEOF'
import sys
src, dst, step = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(src, "rb") as i, open(dst, "wb") as o:
    while True:
        b = i.read(step)
        if not b:
            break
        o.write(b)
PYEOF
}

# all_running: every daemon of the cluster is running.
all_running() {
	[ "$(status_json | jget 'all(x["state"] == "running" for x in d["daemons"])')" = true ]
}

# stale_count DIR: stale shards over every regular file under DIR.
stale_count() {
	local -a files
	mapfile -t files < <(find "$1" -type f)
	if [ "${#files[@]}" = 0 ]; then
		echo 0
		return 0
	fi
	"$NACRE" getstripe --json "${files[@]}" |
		python3 -c 'import json, sys
d = json.load(sys.stdin)
d = d if isinstance(d, list) else [d]
print(sum(s["state"] == "stale" for l in d for s in l.get("shards", [])))'
}

# no_stale DIR: no shard of a file under DIR is marked stale.
no_stale() {
	[ "$(stale_count "$1")" = 0 ]
}

# ---------------------------------------------------------------- tests

_e2e_selected() {
	local num=$1

	if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $num "* ]]; then
		return 1
	fi
	if [ -n "${EXCEPT:-}" ] && [[ " $EXCEPT " == *" $num "* ]]; then
		return 1
	fi
	return 0
}

# ---------------------------------------------------------------- watchdog

# A test that runs past NACRE_E2E_TEST_TIMEOUT seconds is stopped, so that
# a hang (a request nobody answers, a mount that stopped serving) fails its
# suite in minutes and shows where it hung, instead of holding up the whole
# check until an outer limit kills everything without a word.
: "${NACRE_E2E_TEST_TIMEOUT:=900}"
# Set once a test timed out: what it left may hang the next ones too, so
# they are not run.
E2E_TIMED_OUT=""

# _e2e_procs_of_cluster: pids of this suite's cluster: the daemons of its
# pid files and every mount.nacre serving a directory under it (the
# launcher's mount or a test's own).
_e2e_procs_of_cluster() {
	local f pid cmd

	[ -n "$CDIR" ] && [ -d "$CDIR" ] || return 0
	for f in "$CDIR"/run/*.pid; do
		[ -f "$f" ] && read -r pid < "$f" && printf '%s\n' "$pid"
	done
	for f in /proc/[0-9]*/cmdline; do
		cmd=$(tr '\0' ' ' 2> /dev/null < "$f") || continue
		# (libtool's wrapper runs the binary of .libs)
		[[ ${cmd%% *} == */mount.nacre && $cmd == *" $CDIR/"* ]] || continue
		pid=${f#/proc/}
		printf '%s\n' "${pid%/cmdline}"
	done
}

# _e2e_descendants PID: PID's descendants, one per line.
_e2e_descendants() {
	local c

	for c in $(ps -o pid= --ppid "$1" 2> /dev/null); do
		printf '%s\n' "$c"
		_e2e_descendants "$c"
	done
}

# _e2e_stacks_of PID: the threads of process PID, one line per distinct
# stack (innermost call first), with how many threads share it.
_e2e_stacks_of() {
	timeout -k 5 60 gdb -p "$1" -batch -nx -ex 'set pagination off' \
		-ex 'set width 0' -ex 'thread apply all bt 16' < /dev/null 2>&1 |
		awk '
		function flush() { if (st != "") n[st]++; st = "" }
		/^Thread [0-9]+ / { flush(); st = "-"; next }
		/^#[0-9]+ / && st != "" {
			fn = ($3 == "in") ? $4 : $2
			# The C library: its innermost call only, by name.
			if (fn ~ /^_|^start_thread$|^clone3?$/) {
				if ($1 == "#0") {
					sub(/^_*(GI_)?_*/, "", fn)
					st = st " " fn
				}
				next
			}
			at = ""
			if (match($0, / at [^ ]+$/))
				at = substr($0, RSTART + 4)
			sub(/.*\//, "", at)
			st = st " " fn (at == "" ? "" : "(" at ")")
		}
		END { flush(); for (s in n) printf "  %d thread(s):%s\n", n[s], substr(s, 2) }'
}

# _e2e_show_stacks PID...: each process's state, number of threads and
# (where gdb is installed) their stacks.
_e2e_show_stacks() {
	local pid

	for pid in "$@"; do
		[ -d "/proc/$pid" ] || continue
		printf -- '---- process %s: %s\n' "$pid" \
			"$(tr '\0' ' ' 2> /dev/null < "/proc/$pid/cmdline")"
		ps -o stat=,nlwp=,wchan:32= -p "$pid" 2> /dev/null || true
		! command -v gdb > /dev/null 2>&1 || _e2e_stacks_of "$pid"
	done
}

# _e2e_abort_mounts: aborts the connection of every FUSE filesystem mounted
# under the cluster's directory.  A process killed while a request of its
# is with the server waits for the answer in the kernel, unkillable: only
# the connection's end (every request fails with ENOTCONN) lets it go.
_e2e_abort_mounts() {
	local dev mp fstype ctl=/sys/fs/fuse/connections mounted_ctl=""

	[ -n "$CDIR" ] || return 0
	# mountinfo: ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS... - TYPE ...
	while read -r dev mp fstype; do
		[[ $mp == "$CDIR/"* && $fstype == fuse* && $dev == 0:* ]] || continue
		# The connections are files of the fusectl filesystem, which
		# not every machine mounts: mounted for this, and unmounted
		# after.
		if [ ! -e "$ctl/${dev#0:}" ] && [ -z "$mounted_ctl" ] &&
			mount -t fusectl fusectl "$ctl" 2> /dev/null; then
			mounted_ctl=1
		fi
		echo "aborting the FUSE connection of $mp"
		{ echo 1 > "$ctl/${dev#0:}/abort"; } 2> /dev/null ||
			echo "cannot abort it: no $ctl/${dev#0:}/abort"
	done < <(awk '{ for (i = 7; $i != "-"; i++); print $3, $5, $(i + 1) }' \
		/proc/self/mountinfo)
	[ -z "$mounted_ctl" ] || umount "$ctl" 2> /dev/null || true
}

# _e2e_show_hang PID PROCS: what PID and its processes PROCS (a list) wait
# on, and the stacks of the cluster's daemons and mounts.
_e2e_show_hang() {
	# shellcheck disable=SC2086
	ps -o pid,ppid,stat,wchan:32,etime,args -p "$1" $2 2> /dev/null || true
	# shellcheck disable=SC2046
	_e2e_show_stacks $(_e2e_procs_of_cluster)
}

# _e2e_watch SECONDS PIDFILE NUM: once SECONDS pass, shows what test NUM
# (the subshell whose pid is in PIDFILE) and the cluster are doing, kills
# the test's processes, aborts the FUSE connections under the cluster's
# directory and leaves PIDFILE.timeout.  SIGTERM stops it when the test
# ends first.
_e2e_watch() {
	local limit=$1 pidfile=$2 num=$3 sleeper="" tpid procs

	set +e
	trap '[ -z "$sleeper" ] || kill "$sleeper" 2> /dev/null; exit 0' TERM
	sleep "$limit" &
	sleeper=$!
	wait "$sleeper" || exit 0
	# From here on, run_test waits for this to end.
	trap '' TERM
	read -r tpid < "$pidfile" 2> /dev/null || exit 0
	kill -0 "$tpid" 2> /dev/null || exit 0
	: > "$pidfile.timeout"
	echo "TIMEOUT: test $num still running after $limit s (NACRE_E2E_TEST_TIMEOUT)"
	procs=$(_e2e_descendants "$tpid")
	_e2e_show_hang "$tpid" "$procs"
	# shellcheck disable=SC2086
	kill -KILL "$tpid" $procs 2> /dev/null || true
	_e2e_abort_mounts
	exit 0
}

# _e2e_alive PID: PID runs (a zombie waiting for its parent does not).
_e2e_alive() {
	local state

	state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2> /dev/null)
	[ -n "$state" ] && [ "$state" != Z ]
}

# _e2e_suite_watch SECONDS PID: ends when the suite (the shell PID) ends.
# Once SECONDS pass, shows what the suite and the cluster are doing,
# kills the suite's other processes, aborts the FUSE connections under the
# cluster's directory, and ends the suite with SIGTERM, whose EXIT trap
# stops the cluster.  For hangs outside any test (run_test has its own).
: "${NACRE_E2E_SUITE_TIMEOUT:=1800}"
_e2e_suite_watch() {
	local limit=$1 suite=$2 deadline procs me

	set +e
	trap - EXIT
	me=$BASHPID
	deadline=$((SECONDS + limit))
	while _e2e_alive "$suite"; do
		if [ "$SECONDS" -lt "$deadline" ]; then
			sleep 2
			continue
		fi
		echo "TIMEOUT: suite ${0##*/} still running after $limit s (NACRE_E2E_SUITE_TIMEOUT)"
		procs=$(_e2e_descendants "$suite" | grep -v -x -e "$me")
		_e2e_show_hang "$suite" "$procs"
		# The suite first: it ends at once, running its EXIT trap,
		# which stops the cluster (its daemons are not the suite's
		# children: the launcher detaches them).  Then what it waited
		# on, and the requests they may wait on in the kernel.
		kill -TERM "$suite" 2> /dev/null
		# shellcheck disable=SC2086
		kill -KILL $procs 2> /dev/null || true
		_e2e_abort_mounts
		break
	done
	exit 0
}

# run_test N "desc" FUNC [ARGS]
run_test() {
	local num=$1 desc=$2 func=$3 rc=0 errexit=0 start pidfile watch
	shift 3

	if ! _e2e_selected "$num"; then
		echo "SKIP $num $desc (not selected)"
		return 0
	fi
	echo "== test $num: $desc"
	if [ -n "$E2E_TIMED_OUT" ]; then
		E2E_FAILED=$((E2E_FAILED + 1))
		E2E_FAILED_LIST+="${E2E_FAILED_LIST:+ }$num"
		echo "FAIL $num $desc (not run: test $E2E_TIMED_OUT timed out)"
		return 0
	fi
	start=$SECONDS
	pidfile=$(mktemp -t nacre-e2e-test.XXXXXX) || exit 99
	_e2e_watch "$NACRE_E2E_TEST_TIMEOUT" "$pidfile" "$num" &
	watch=$!
	# The subshell must not run in an `||` or `if` context: bash would then
	# ignore set -e inside it.
	case $- in
	*e*)
		errexit=1
		set +e
		;;
	esac
	(
		echo "$BASHPID" > "$pidfile"
		set -e
		"$func" "$@"
	)
	rc=$?
	kill "$watch" 2> /dev/null
	wait "$watch" 2> /dev/null
	[ $errexit = 0 ] || set -e
	if [ -e "$pidfile.timeout" ]; then
		E2E_TIMED_OUT=$num
		rc=124
	fi
	rm -f -- "$pidfile" "$pidfile.timeout"
	if [ $rc -eq 0 ]; then
		E2E_PASSED=$((E2E_PASSED + 1))
		echo "PASS $num $desc ($((SECONDS - start)) s)"
	else
		E2E_FAILED=$((E2E_FAILED + 1))
		E2E_FAILED_LIST+="${E2E_FAILED_LIST:+ }$num"
		echo "FAIL $num $desc (exit $rc)"
	fi
	return 0
}

finish() {
	[ -z "$E2E_FAILED_LIST" ] || echo "failed tests: $E2E_FAILED_LIST"
	echo "$E2E_PASSED passed, $E2E_FAILED failed"
	if [ "$E2E_FAILED" -gt 0 ]; then
		exit 1
	fi
	exit 0
}

# ---------------------------------------------------------------- asserts

_e2e_assert_failed() {
	printf 'ASSERTION FAILED: %s\n' "$*" >&2
	exit 1
}

# assert_eq VALUE EXPECTED [MESSAGE]
assert_eq() {
	if [ "$1" != "$2" ]; then
		_e2e_assert_failed "${3:-values differ}: got '$1', expected '$2'"
	fi
}

assert_file_eq() {
	local s1 s2

	if ! cmp -- "$1" "$2" >&2; then
		s1=$(stat -c %s -- "$1" 2>/dev/null) || s1="missing"
		s2=$(stat -c %s -- "$2" 2>/dev/null) || s2="missing"
		_e2e_assert_failed "files differ: $1 ($s1 bytes) and $2 ($s2 bytes)"
	fi
}

# The command must fail.
assert_fail() {
	if "$@"; then
		_e2e_assert_failed "command succeeded, expected a failure: $*"
	fi
}

# assert_errno TEXT CMD...: CMD fails and its stderr contains TEXT.  TEXT
# may be an errno name (ENOTEMPTY), which stands for its strerror text.
assert_errno() {
	local text=$1 errf rc=0
	shift

	if [[ $text =~ ^E[A-Z0-9]+$ ]] && command -v python3 >/dev/null 2>&1; then
		text=$(python3 -c 'import errno, os, sys
print(os.strerror(getattr(errno, sys.argv[1])))' "$text" 2>/dev/null) || text=$1
	fi
	errf=$(mktemp -t nacre-e2e-err.XXXXXX) || exit 99
	if "$@" 2>"$errf"; then
		rc=0
	else
		rc=$?
	fi
	cat -- "$errf" >&2
	if [ $rc -eq 0 ]; then
		rm -f -- "$errf"
		_e2e_assert_failed "command succeeded, expected '$text': $*"
	fi
	if ! grep -qF -- "$text" "$errf"; then
		rm -f -- "$errf"
		_e2e_assert_failed "error output of '$*' (status $rc) lacks '$text'"
	fi
	rm -f -- "$errf"
}

# ---------------------------------------------------------------- utilities

# ost_object_path OST_INDEX FID: the object store names an object
# O/XX/SEQ:OID, XX the low byte of the oid in lower-case hex.
ost_object_path() {
	local idx=$1 fid=$2 seq oid

	fid=${fid#[}
	fid=${fid%]}
	if ! [[ $fid =~ ^(0x)?([0-9a-fA-F]{1,16}):(0x)?([0-9a-fA-F]{1,16})$ ]]; then
		echo "ost_object_path: invalid FID '$2'" >&2
		return 1
	fi
	seq=$(printf '%016x' "0x${BASH_REMATCH[2]}")
	oid=$(printf '%016x' "0x${BASH_REMATCH[4]}")
	printf '%s/ost/%s/O/%s/%s:%s\n' "$CDIR" "$idx" "${oid:14:2}" "$seq" "$oid"
}

# shard_objects PATH: prints "SHARD OST OBJECT_PATH" for each shard of PATH's
# layout, in shard order.  Fails (in any context) when the layout cannot be
# read.
shard_objects() {
	local json fid osts shard ost p

	json=$("$NACRE" getstripe --json "$1") || return 1
	fid=$(jget 'd["fid"]' <<<"$json") || return 1
	osts=$(jget '" ".join(str(s["ost"]) for s in d["shards"])' <<<"$json") || return 1
	shard=0
	for ost in $osts; do
		p=$(ost_object_path "$ost" "$fid") || return 1
		echo "$shard $ost $p"
		shard=$((shard + 1))
	done
}

# wait_until SECONDS CMD...: true as soon as CMD succeeds; false once
# SECONDS have passed, counted in tries 0.2 s apart and in wall time (a
# try may itself block, on a mount whose MDS is gone, say).
wait_until() {
	local limit=$1 ticks deadline
	shift

	ticks=$((limit * 5))
	deadline=$((SECONDS + limit + 1))
	while ! "$@"; do
		ticks=$((ticks - 1))
		[ $ticks -gt 0 ] && [ $SECONDS -lt $deadline ] || return 1
		sleep 0.2
	done
	return 0
}

# retry SECONDS CMD...: runs CMD until it succeeds, giving up once SECONDS
# have passed.  Unlike wait_until it counts wall time, as one attempt may
# block for a while on a reconnecting mount.
retry() {
	local secs=$1 deadline
	shift

	deadline=$((SECONDS + secs))
	until "$@"; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "still failing after ${secs}s: $*" >&2
			return 1
		fi
		sleep 1
	done
}

# wait_gone SECONDS PATH...: waits until none of the PATHs exists.
wait_gone() {
	local secs=$1 deadline left p
	shift

	deadline=$((SECONDS + secs))
	while :; do
		left=""
		for p in "$@"; do
			if [ -e "$p" ]; then
				left="$left $p"
			fi
		done
		if [ -z "$left" ]; then
			return 0
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "still present after ${secs}s:$left" >&2
			return 1
		fi
		sleep 0.5
	done
}

# mkdata FILE SIZE SEED: FILE gets SIZE pseudo-random bytes, the same for the
# same SEED on every run.  (Written 1 MiB at a time, the bytes are those of a
# single Random(SEED).randbytes(SIZE).)
mkdata() {
	python3 - "$1" "$2" "$3" <<'PYEOF'
import random, sys
path, size, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(seed)
with open(path, "wb") as f:
    left = size
    while left > 0:
        n = min(left, 1 << 20)
        f.write(r.randbytes(n))
        left -= n
PYEOF
}

# jget EXPR: evaluates the Python expression EXPR with d bound to the JSON
# document read from stdin and prints the result: JSON for lists and dicts,
# true or false for booleans.  `nacre getstripe --json` prints a list of
# layouts when given several paths; a list of exactly one layout (a dict
# with a "fid") stands for that layout, so d["fid"] reads the same either
# way.  Any other list, one-element or not, is left as it is.
jget() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
if isinstance(d, list) and len(d) == 1 and isinstance(d[0], dict) and "fid" in d[0]:
    d = d[0]
v = eval(sys.argv[1], {"d": d})
if isinstance(v, bool):
    print("true" if v else "false")
elif isinstance(v, (dict, list)):
    print(json.dumps(v, sort_keys=True))
else:
    print(v)
' "$1"
}

# ost_state I: "up" or "down", as the MDS lists OST I.
ost_state() {
	"$NACRE" osts --json "$MNT" | jget "[o for o in d if o[\"index\"] == $1][0][\"state\"]"
}

# drop_caches: empties the kernel's page cache, so that the next read of a
# file goes through the mount to the OSTs.  False when /proc/sys/vm is
# read-only here (some containers).
drop_caches() {
	{ echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null
}

# cmp_uncached REF FILE: FILE's bytes as the OSTs give them now, compared
# with REF.  Without drop_caches the read uses O_DIRECT.  A read that hangs
# (a client waiting for a server that is down) fails after 60 s.
cmp_uncached() {
	if drop_caches; then
		timeout 60 cmp -- "$1" "$2"
	else
		timeout 60 dd if="$2" iflag=direct bs=1M status=none | cmp -- "$1" -
	fi
}

# oss_stop I...: stops the OSS processes I... (in parallel).
oss_stop() {
	local i rc=0
	local -a pids=()

	for i in "$@"; do
		"$CLUSTER" stop oss "$i" --dir "$CDIR" >/dev/null &
		pids+=("$!")
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=1
	done
	return $rc
}

# oss_start [--replace] I...: starts the OSS processes I... (in parallel)
# and waits until the MDS lists their OSTs as up.
oss_start() {
	local i rc=0
	local -a pids=() extra=()

	if [ "${1:-}" = --replace ]; then
		extra=(--replace)
		shift
	fi
	for i in "$@"; do
		"$CLUSTER" start oss "$i" --dir "$CDIR" "${extra[@]}" >/dev/null &
		pids+=("$!")
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=1
	done
	return $rc
}
