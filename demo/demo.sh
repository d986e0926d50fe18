#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre in five minutes: start a 4-OST filesystem on this machine, write an
# ImageNet-like dataset through the FUSE mount, restart everything, and prove
# every byte came back.  Run it from a built tree (it builds nothing), as
# root (FUSE mounts):  demo/demo.sh
#
# Environment: DEMO_FILES (200), DEMO_LARGE_MIB (64), DEMO_PORT (a free one
# from 7300 up), DEMO_KEEP=1 to keep the work directory.

set -euo pipefail

TOP=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
CLUSTER=$TOP/utils/nacre-cluster
NACRE=$TOP/utils/nacre
FILES=${DEMO_FILES:-200}
LARGE_MIB=${DEMO_LARGE_MIB:-64}
CLASSES=10

step_no=0

step() {
	step_no=$((step_no + 1))
	printf '\n=== Step %s: %s\n' "$step_no" "$1"
	shift
	[ $# -eq 0 ] || printf '    %s\n' "$@"
}

fail() {
	printf '\ndemo: FAILED: %s\n' "$*" >&2
	exit 1
}

# Runs a command after showing it.
show() {
	printf '$ %s\n' "$*"
	"$@"
}

for prog in "$CLUSTER" "$NACRE" "$TOP/mds/nacre-mds" "$TOP/oss/nacre-oss" "$TOP/utils/mount.nacre"; do
	[ -x "$prog" ] || fail "$prog is missing: build nacre first (./configure && make)"
done
[ "$(id -u)" = 0 ] || fail "run the demo as root: it mounts a FUSE filesystem"
[ -c /dev/fuse ] || fail "/dev/fuse is missing"
command -v fusermount3 >/dev/null || fail "fusermount3 is missing (Debian: fuse3)"

port_busy() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

pick_port() {
	local base=7300 i busy

	while [ $base -lt 65000 ]; do
		busy=0
		for ((i = 0; i <= 4; i++)); do
			if port_busy $((base + i)); then
				busy=1
				break
			fi
		done
		if [ $busy = 0 ]; then
			printf '%s' "$base"
			return 0
		fi
		base=$((base + 10))
	done
	return 1
}

WORK=$(mktemp -d -t nacre-demo.XXXXXX)
CDIR=$WORK/cluster
LOCAL=$WORK/local
MNT=$CDIR/mnt

cleanup() {
	local rc=$?

	trap - EXIT
	set +e
	cd /
	printf '\n=== Cleanup: unmount, stop the daemons, remove the work directory\n'
	if [ -f "$CDIR/cluster.conf" ]; then
		[ $rc -eq 0 ] || "$CLUSTER" status --dir "$CDIR"
		"$CLUSTER" down --dir "$CDIR"
	fi
	if [ "${DEMO_KEEP:-0}" = 1 ]; then
		echo "kept $WORK"
	else
		rm -rf --one-file-system -- "$WORK"
	fi
	if [ $rc -eq 0 ]; then
		printf '\ndemo: OK: all checksums matched\n'
	else
		printf '\ndemo: FAILED (status %s)\n' "$rc" >&2
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PORT=${DEMO_PORT:-$(pick_port)} || fail "no free port"

step "Start a filesystem with 4 OSTs" \
	"One MDS (namespace, layouts) and one OSS per OST, all on 127.0.0.1," \
	"formatted in $CDIR and mounted at $MNT."
show "$CLUSTER" up --dir "$CDIR" --osts 4 --port "$PORT"
# The CLI proves it holds the cluster key nacre-cluster made.
export NACRE_KEYFILE=$CDIR/cluster.key

step "Look at the filesystem" \
	"nacre df lists the MDT and every OST, like lfs df."
show "$NACRE" df -h "$MNT"

step "Build a dataset locally" \
	"$FILES files of 1 KiB..300 KiB in $CLASSES class directories (like an" \
	"image dataset), plus two ${LARGE_MIB} MiB shards, in $LOCAL."
RANDOM=42
for ((c = 0; c < CLASSES; c++)); do
	mkdir -p -- "$LOCAL/train/class$c"
done
mkdir -p -- "$LOCAL/shards"
for ((i = 0; i < FILES; i++)); do
	size=$((1024 + (RANDOM * 32768 + RANDOM) % (300 * 1024 - 1024 + 1)))
	head -c "$size" /dev/urandom >"$LOCAL/train/class$((i % CLASSES))/img$i.bin"
done
for i in 0 1; do
	dd if=/dev/urandom of="$LOCAL/shards/shard$i.bin" bs=1M count="$LARGE_MIB" status=none
done
printf '    %s files, %s KiB\n' "$(find "$LOCAL" -type f | wc -l)" "$(du -sk "$LOCAL" | cut -f1)"

step "Write the dataset through the mount" \
	"Small files with cp, the large shards with dd (1 MiB writes striped" \
	"over the OSTs)."
start=$SECONDS
show cp -r -- "$LOCAL/train" "$MNT/"
mkdir -p -- "$MNT/shards"
for i in 0 1; do
	show dd if="$LOCAL/shards/shard$i.bin" of="$MNT/shards/shard$i.bin" bs=1M conv=fsync status=none
done
printf '    written in %s s\n' "$((SECONDS - start))"

step "Show how a large file is laid out" \
	"getstripe prints the stripe size, count and the OST of each object."
show "$NACRE" getstripe "$MNT/shards/shard0.bin"
printf '    bytes per OST directory:\n'
du -sh -- "$CDIR"/ost/* | sed 's/^/      /'

step "Restart the whole cluster" \
	"Unmount and stop every daemon, then start again on the same directories:" \
	"whatever is read next comes from the OSTs, not from a cache."
show "$CLUSTER" down --dir "$CDIR"
show "$CLUSTER" up --dir "$CDIR"

step "Compare checksums" \
	"sha256sum of every file in the local copy and through the mount."
(cd -- "$LOCAL" && find . -type f | LC_ALL=C sort | xargs -r -d '\n' sha256sum) >"$WORK/local.sha256"
(cd -- "$MNT" && find . -type f | LC_ALL=C sort | xargs -r -d '\n' sha256sum) >"$WORK/mount.sha256"
nlocal=$(wc -l <"$WORK/local.sha256")
nmount=$(wc -l <"$WORK/mount.sha256")
printf '    %s files locally, %s through the mount\n' "$nlocal" "$nmount"
if ! diff -u -- "$WORK/local.sha256" "$WORK/mount.sha256"; then
	fail "checksums differ (lines above)"
fi
printf '    all %s checksums match\n' "$nlocal"

step "Final state" "The filesystem after the run."
show "$NACRE" df "$MNT"
show "$CLUSTER" status --dir "$CDIR"
