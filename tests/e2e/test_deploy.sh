#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: the deployment pieces.  The systemd units pass
# systemd-analyze verify; the sample option files are accepted by the
# daemons; and a filesystem started exactly as the units start it (their
# ExecStart lines, with the samples turned to loopback) serves a mount.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

D=$(mktemp -d -t nacre-deploy.XXXXXX)
DMNT=$D/mnt
# The pids of the daemons this suite started, one a line (tests run in
# subshells, so they are kept in a file).
PIDF=$D/pids

deploy_cleanup()
{
	local rc=$? pid

	trap - EXIT
	set +e
	if _e2e_is_mounted "$DMNT"; then
		fusermount3 -u "$DMNT" || umount "$DMNT"
	fi
	if [ -f "$PIDF" ]; then
		while read -r pid; do
			kill -TERM "$pid" 2>/dev/null
		done < "$PIDF"
		while read -r pid; do
			wait_until 20 eval "! kill -0 $pid 2>/dev/null" ||
				kill -KILL "$pid" 2>/dev/null
		done < "$PIDF"
	fi
	if [ "$rc" -ne 0 ] || [ "$E2E_FAILED" -gt 0 ]; then
		for f in "$D"/*.log; do
			[ -f "$f" ] && { echo "---- ${f##*/}"; tail -n 40 "$f"; }
		done
	fi
	if grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$D"/*.log >/dev/null 2>&1; then
		echo "FAIL: sanitizer report in a daemon log"
		grep -h -A30 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$D"/*.log
		rc=1
	fi
	_e2e_is_mounted "$DMNT" || rm -rf --one-file-system -- "$D"
	exit "$rc"
}
trap deploy_cleanup EXIT

# The installed layout, in $D: sbin/ holds the daemons (links into this
# build tree), etc/nacre/ their option files, units/ the generated units.
mkdir -p "$D/sbin" "$D/etc/nacre" "$D/units" "$D/srv" "$DMNT"
ln -s "$NACRE_BIN_DIR/mds/nacre-mds" "$D/sbin/nacre-mds"
ln -s "$NACRE_BIN_DIR/oss/nacre-oss" "$D/sbin/nacre-oss"

# unit NAME: the unit generated from its template as make does.
unit()
{
	sed -e "s|@sbindir@|$D/sbin|g" -e "s|@sysconfdir@|$D/etc|g" \
		"$top_srcdir/systemd/$1.in" > "$D/units/$1"
}

# exec_start UNIT INSTANCE: the command line the unit runs.
exec_start()
{
	sed -n 's/^ExecStart=//p' "$D/units/$1" | sed "s|%i|$2|g"
}

test_1()
{
	local u out

	for u in nacre-mds@.service nacre-oss@.service; do
		unit "$u"
		grep -q "^ExecStart=$D/sbin/" "$D/units/$u"
	done
	if ! command -v systemd-analyze >/dev/null 2>&1; then
		echo "systemd-analyze is not installed: units not verified"
		return 0
	fi
	for u in nacre-mds@.service nacre-oss@.service; do
		cp "$D/units/$u" "$D/units/${u/@/@data}"
		# Any message is a finding: verify exits 0 on most of them.
		out=$(systemd-analyze verify --man=no "$D/units/${u/@/@data}" 2>&1)
		if [ -n "$out" ]; then
			printf '%s\n' "$out"
			false
		fi
	done
}
run_test 1 "the systemd units are well formed" test_1

test_2()
{
	# Every key of the samples is an option the daemon knows: the options
	# are parsed in order, and --help after them exits 0.
	"$D/sbin/nacre-mds" --config "$top_srcdir/examples/config/mds.conf" --help > /dev/null
	"$D/sbin/nacre-oss" --config "$top_srcdir/examples/config/oss.conf" --help > /dev/null
	# A misspelt key is refused, naming it.
	printf 'dirr = /x\n' > "$D/bad.conf"
	assert_errno "dirr" "$D/sbin/nacre-mds" --config "$D/bad.conf"
}
run_test 2 "the sample option files are accepted" test_2

test_3()
{
	local port key="$D/etc/nacre/data.key" size mds oss cmd

	port=$(_e2e_free_port 4)
	# The samples, moved to loopback and to $D.
	sed -e "s|tcp://10.0.0.1:7300|tcp://127.0.0.1:$port|" \
		-e "s|tcp://10.0.0.1:9300|tcp://127.0.0.1:$((port + 2))|" \
		-e "s|/srv/nacre|$D/srv|" -e "s|/etc/nacre/data.key|$key|" \
		-e "s|^nosquash = .*|nosquash = 127.0.0.1|" -e "s|^map-size = .*|map-size = 256M|" \
		"$top_srcdir/examples/config/mds.conf" > "$D/etc/nacre/mds-data.conf"
	sed -e "s|tcp://10.0.0.1:7300|tcp://127.0.0.1:$port|" \
		-e "s|tcp://10.0.0.11:7301|tcp://127.0.0.1:$((port + 1))|" \
		-e "s|tcp://10.0.0.11:9301|tcp://127.0.0.1:$((port + 3))|" \
		-e "s|/srv/nacre|$D/srv|" -e "s|/etc/nacre/data.key|$key|" \
		"$top_srcdir/examples/config/oss.conf" > "$D/etc/nacre/oss-data-oss1.conf"
	mkdir -p "$D/srv/data"
	# Started as the units start them (systemd would also give them no
	# terminal and collect stderr in the journal).
	# Run as the unit's command line itself, so $! is the daemon's pid.
	read -ra cmd <<< "$(exec_start nacre-mds@.service data)"
	"${cmd[@]}" > "$D/mds.log" 2>&1 &
	mds=$!
	echo "$mds" >> "$PIDF"
	wait_until 30 test -s "$key"
	assert_eq "$(stat -c %a "$key")" 600 "mode of the key the first start made"
	read -ra cmd <<< "$(exec_start nacre-oss@.service data-oss1)"
	"${cmd[@]}" > "$D/oss.log" 2>&1 &
	oss=$!
	echo "$oss" >> "$PIDF"
	wait_until 30 grep -qs "OST 1 registered" "$D/oss.log"
	# The mount, as fstab would give it to mount -t nacre.
	"$MOUNT_NACRE" "tcp://127.0.0.1:$port:/data" "$DMNT" -o "_netdev,keyfile=$key"
	mkdata "$D/ref" 3000000 7
	cp "$D/ref" "$DMNT/file"
	sync
	cmp "$D/ref" "$DMNT/file"
	size=$("$NACRE" --keyfile "$key" osts --json "$DMNT" | jget 'len(d)')
	assert_eq "$size" 2 "OSTs of the deployed filesystem"
	# The metrics ports of the samples answer.
	curl -fsS "http://127.0.0.1:$((port + 2))/metrics" | grep -q '^nacre_mds_'
	curl -fsS "http://127.0.0.1:$((port + 3))/metrics" | grep -q '^nacre_oss_'
	fusermount3 -u "$DMNT"
	kill -0 "$mds" "$oss"
	# The pids are the daemons themselves (what cleanup stops).
	grep -q nacre-mds "/proc/$mds/cmdline"
	grep -q nacre-oss "/proc/$oss/cmdline"
}
run_test 3 "a filesystem started as the units start it serves a mount" test_3

finish
