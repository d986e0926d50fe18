#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: root squash.  With nacre-mds --root-squash, root on a
# client host that is not exempt acts as the squash identity on the MDS
# (the mount's kernel checks let root through; the MDS does not); an
# exempt address keeps root's powers; bad squash options are refused.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

cluster_up
SQUASH_UID=65534
SQUASH_GID=65533

# mds_with CONF_LINES: restarts the MDS with these lines as DIR/mds.conf
# and waits until the mount answers again.
mds_with()
{
	printf '%s\n' "$@" > "$CDIR/mds.conf"
	"$CLUSTER" restart mds --dir "$CDIR"
	retry 60 stat "$MNT/" > /dev/null
}

test_1()
{
	# Made by an unsquashed root: a private file, a shared directory and a
	# directory only root may write.
	mkdir "$MNT/shared" "$MNT/rootonly"
	chmod 1777 "$MNT/shared"
	chmod 0755 "$MNT/rootonly"
	echo secret > "$MNT/rootonly/private"
	chmod 0600 "$MNT/rootonly/private"
	echo public > "$MNT/rootonly/public"
	chmod 0644 "$MNT/rootonly/public"
	sync
}
run_test 1 "root makes files before squash is on" test_1

test_2()
{
	# Nobody is exempt but an address no client here has.
	mds_with "root-squash = $SQUASH_UID:$SQUASH_GID" "nosquash = 192.0.2.1"
	[ "$(id -u)" = 0 ]
	# Writing where only root may: refused by the MDS.
	assert_errno EACCES touch "$MNT/rootonly/new"
	assert_fail test -e "$MNT/rootonly/new"
	# Reading root's private file: refused; a public one still reads.
	assert_errno EACCES cat "$MNT/rootonly/private"
	assert_eq "$(cat "$MNT/rootonly/public")" public "public file"
	# What root creates where anyone may is owned by the squash identity.
	echo mine > "$MNT/shared/made-by-root"
	assert_eq "$(stat -c %u:%g "$MNT/shared/made-by-root")" "$SQUASH_UID:$SQUASH_GID" \
		"owner of a file root made under squash"
	assert_eq "$(cat "$MNT/shared/made-by-root")" mine "squashed file content"
	# Squashed root cannot give away or unlock root's files either.
	assert_errno EPERM chmod 0666 "$MNT/rootonly/private"
	assert_errno EPERM chown "$SQUASH_UID" "$MNT/rootonly/public"
}
run_test 2 "root from a squashed host acts as the squash uid and gid" test_2

test_3()
{
	# The client's own address is exempt: root is root again.
	mds_with "root-squash = $SQUASH_UID:$SQUASH_GID" "nosquash = 192.0.2.1, $HOST/32"
	touch "$MNT/rootonly/new"
	assert_eq "$(stat -c %u "$MNT/rootonly/new")" 0 "owner of a file root made, exempt"
	assert_eq "$(cat "$MNT/rootonly/private")" secret "private file read by exempt root"
	# Without squash, as before.
	mds_with "# no squash"
	touch "$MNT/rootonly/new2"
	assert_eq "$(stat -c %u "$MNT/rootonly/new2")" 0 "owner without squash"
}
run_test 3 "an exempt client address keeps root's powers" test_3

test_4()
{
	local mds="$NACRE_BIN_DIR/mds/nacre-mds" rc
	local args=(--dir "$CDIR/none" --fsname x --listen "tcp://127.0.0.1:1")

	for bad in "0:0" "65534" "a:b" "-1:5"; do
		rc=0
		"$mds" "${args[@]}" --root-squash "$bad" 2> "$CDIR/err" || rc=$?
		assert_eq "$rc" 2 "exit status for --root-squash $bad"
		grep -q "root squash" "$CDIR/err"
	done
	rc=0
	"$mds" "${args[@]}" --root-squash 99:99 --nosquash "not-an-address" 2> "$CDIR/err" || rc=$?
	assert_eq "$rc" 2 "exit status for a bad --nosquash"
	grep -q "bad exempt address 'not-an-address'" "$CDIR/err"
	rc=0
	"$mds" "${args[@]}" --nosquash 10.0.0.1 2> "$CDIR/err" || rc=$?
	assert_eq "$rc" 2 "exit status for --nosquash alone"
	grep -q "needs --root-squash" "$CDIR/err"
	# Nothing was created by the refused starts, and the MDS serves on.
	assert_fail test -e "$CDIR/none"
	kill -0 "$(cluster_pid mds)"
}
run_test 4 "bad squash options are refused before anything starts" test_4

finish
