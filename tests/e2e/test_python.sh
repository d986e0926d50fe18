#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: the Python bindings (bindings/python).  Their unit tests
# (tests/python/test_bindings.py) run against a live cluster and its mount:
# bytes through libnacre and the mount both ways, errors as NacreError with
# the right errno, listings, read_many, packed files and nacre_sync, and
# NacreFileDataset alone, across fork and, when torch is importable, under a
# DataLoader with two workers.  Then examples/python/iterate_dataset.py
# builds a small tree, which the mount must show, and reads it.
#
# $PYTHON (default python3) runs them; the suite is skipped without it.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

SRC=${top_srcdir:?}
PYTHON=${PYTHON:-${E2E_USER_PYTHON:-python3}}
command -v "$PYTHON" >/dev/null 2>&1 || e2e_skip "$PYTHON is not installed"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
	e2e_skip "$PYTHON is older than 3.9"

NACRE_LIBRARY=$NACRE_BIN_DIR/.libs/libnacre.so.0
if [ ! -e "$NACRE_LIBRARY" ]; then
	echo "ERROR: $NACRE_LIBRARY is not built" >&2
	exit 99
fi
# A library built with --enable-sanitizers cannot be loaded into an
# interpreter that is not; the plain build runs this suite.
if ldd "$NACRE_LIBRARY" 2>/dev/null | grep -q libasan; then
	e2e_skip "libnacre is built with the sanitizers"
fi
PYTHONPATH=$SRC/bindings/python${PYTHONPATH:+:$PYTHONPATH}
NACRE_INCLUDE=$SRC/libclient
# Nothing is written into the source tree.
PYTHONDONTWRITEBYTECODE=1
export NACRE_LIBRARY PYTHONPATH NACRE_INCLUDE PYTHONDONTWRITEBYTECODE

cluster_up
NACRE_MDS=tcp://127.0.0.1:$PORT
NACRE_FSNAME=$FSNAME
NACRE_MOUNT=$MNT
export NACRE_MDS NACRE_FSNAME NACRE_MOUNT

if "$PYTHON" -c 'import torch' >/dev/null 2>&1; then
	echo "torch: $("$PYTHON" -c 'import torch; print(torch.__version__)')"
else
	echo "torch is not importable: the DataLoader test is skipped"
fi

test_1()
{
	local out rc=0

	out=$("$PYTHON" "$SRC/tests/python/test_bindings.py" -v 2>&1) || rc=$?
	printf '%s\n' "$out"
	assert_eq "$rc" 0 "status of the Python unit tests"
	# Every test that needs the cluster ran: only torch's (and the sizes
	# written down for x86-64) may be skipped.
	if grep -E '\.\.\. skipped' <<<"$out" |
		grep -v -e test_dataloader -e test_documented_sizes; then
		_e2e_assert_failed "tests skipped although the cluster is up"
	fi
}
run_test 1 "the Python unit tests" test_1

example()
{
	timeout 300 "$PYTHON" "$SRC/examples/python/iterate_dataset.py" "$@"
}

test_2()
{
	local out n

	out=$(example --root /ex/train --make 300 --classes 5 --mean-kib 20 --batch-size 32)
	printf '%s\n' "$out"
	grep -q '^made 300 files' <<<"$out"
	grep -q '^dataset /ex/train: 300 files in 5 classes' <<<"$out"
	grep -q 'dataset, batches of 32: 300 samples, .* samples/s, .* MB/s' <<<"$out"
	n=$(find "$MNT/ex/train" -type f | wc -l)
	assert_eq "$n" 300 "files the mount shows"
	assert_eq "$(find "$MNT/ex/train" -mindepth 1 -type d | wc -l)" 5 "class directories"
	# Again over the same tree, packed files in another, in random order.
	out=$(example --root /ex/train --num-workers 0 --shuffle)
	grep -q '^dataset /ex/train: 300 files in 5 classes' <<<"$out"
	out=$(example --root /ex/packed --make 100 --classes 2 --pack --no-torch)
	printf '%s\n' "$out"
	grep -q 'dataset, batches of 64: 100 samples' <<<"$out"
	assert_eq "$(find "$MNT/ex/packed" -type f | wc -l)" 100 "packed files the mount shows"
	"$PYTHON" -c 'import os, sys, nacre
fs = nacre.connect(os.environ["NACRE_MDS"], os.environ["NACRE_FSNAME"])
sys.exit(not fs.getlayout("/ex/packed/n0/img_00000000.bin").packed)'
	# Bad usage is refused.
	assert_fail env -u NACRE_MDS "$PYTHON" "$SRC/examples/python/iterate_dataset.py" \
		--fsname "$FSNAME" 2>/dev/null
}
run_test 2 "examples/python/iterate_dataset.py makes and reads a tree" test_2

finish
