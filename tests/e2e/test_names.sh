#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: names and sizes of the namespace through the mount.
# Names of the maximum length (255 bytes) and one byte more, names holding
# every byte 1..255 but '/', a tree 1000 directories deep, and a directory
# of 100,000 entries (20,000 in a sanitizer build): created, listed, read
# back, renamed and removed.  The big directory is filled and emptied
# mostly through libnacre from many threads (tests/libclient/many_names),
# and listed and stat-ed through the mount.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

MANY_NAMES=$top_builddir/tests/libclient/many_names
[ -x "$MANY_NAMES" ] || e2e_skip "many_names is not built (make check builds it)"
# The big directory: 100,000 entries; 5,000 where the daemons are built
# with the sanitizers (still 40 readdir batches of the mount).  There the
# MDS creates and removes about thirty times slower: each change's nested
# LMDB transaction allocates megabytes, which ASan maps and unmaps, and CI
# runs this suite in both builds.  NACRE_E2E_BIG_DIR overrides either.
if e2e_sanitized; then
	BIG=${NACRE_E2E_BIG_DIR:-5000}
else
	BIG=${NACRE_E2E_BIG_DIR:-100000}
fi

cluster_up
WORK=$(mktemp -d "$CDIR/e2e-names.XXXXXX")

test_1()
{
	local n255 n256
	mkdir "$MNT/long"
	n255=$(printf 'a%.0s' $(seq 1 255))
	n256="${n255}b"
	echo "two hundred fifty-five" > "$MNT/long/$n255"
	assert_eq "$(cat "$MNT/long/$n255")" "two hundred fifty-five" "content under a 255-byte name"
	assert_eq "$(ls "$MNT/long")" "$n255" "listing of a 255-byte name"
	assert_errno "File name too long" touch "$MNT/long/$n256"
	assert_errno "File name too long" mkdir "$MNT/long/$n256"
	assert_errno "File name too long" mv "$MNT/long/$n255" "$MNT/long/$n256"
	mv "$MNT/long/$n255" "$MNT/long/${n255%a}z"
	assert_eq "$(cat "$MNT/long/${n255%a}z")" "two hundred fifty-five" "after rename"
	ln -s "${n255%a}z" "$MNT/long/link"
	assert_eq "$(cat "$MNT/long/link")" "two hundred fifty-five" "through a symlink"
	rm "$MNT/long/${n255%a}z" "$MNT/long/link"
	rmdir "$MNT/long"
}
run_test 1 "255-byte names work; 256 bytes is ENAMETOOLONG" test_1

test_2()
{
	# One file per byte value, and one name with all of them; python
	# handles the bytes exactly (no shell quoting in between).
	python3 - "$MNT/bytes" <<'PY'
import os, sys
d = os.fsencode(sys.argv[1])
os.mkdir(d)
names = []
for b in range(1, 256):
    if b == ord('/'):
        continue
    n = b"n" + bytes([b]) + b"x"
    if n in (b".", b".."):
        continue
    names.append(n)
allbytes = bytes(b for b in range(1, 256) if b != ord('/'))
names.append(allbytes)
for n in names:
    with open(os.path.join(d, n), "wb") as f:
        f.write(n)
listed = sorted(os.listdir(d))
assert listed == sorted(names), (len(listed), len(names))
for n in names:
    with open(os.path.join(d, n), "rb") as f:
        assert f.read() == n, n
    # Renamed to the reverse of the name: the same length, still distinct.
    os.rename(os.path.join(d, n), os.path.join(d, n[::-1]))
assert sorted(os.listdir(d)) == sorted(n[::-1] for n in names)
for n in names:
    os.unlink(os.path.join(d, n[::-1]))
os.rmdir(d)
print(len(names), "names")
PY
}
run_test 2 "names with every byte 1..255 but '/'" test_2

test_3()
{
	local depth=1000 path="$MNT/deep" i rel=""
	for ((i = 0; i < depth; i++)); do
		rel="${rel}d/"
	done
	mkdir -p "$path/$rel"
	echo bottom > "$path/${rel}file"
	assert_eq "$(cat "$path/${rel}file")" bottom "the file at the bottom"
	assert_eq "$(find "$path" -type d | wc -l)" $((depth + 1)) "directories found"
	assert_eq "$(find "$path" -name file | wc -l)" 1 "files found"
	# Moved as a whole and removed as a whole.
	mv "$path" "$MNT/deep2"
	assert_eq "$(cat "$MNT/deep2/${rel}file")" bottom "after moving the tree"
	rm -rf "$MNT/deep2"
	assert_fail test -e "$MNT/deep2"
}
run_test 3 "a tree 1000 directories deep" test_3

test_4()
{
	local dir=$MNT/big start mnt_n=$((BIG < 1000 ? BIG : 1000))
	mkdir "$dir"
	start=$SECONDS
	# The first names through the mount, one at a time as any program
	# makes them; the rest through libnacre from many threads, whose
	# creates share the MDS's commits (through a mount the kernel lets one
	# create at a time into a directory, each waiting for its own commit).
	python3 - "$dir" 0 "$mnt_n" <<'PY'
import os, sys
d, first, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(first, first + n):
    fd = os.open(os.path.join(d, "e%06d" % i), os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
    os.close(fd)
PY
	echo "created $mnt_n entries through the mount in $((SECONDS - start)) s"
	start=$SECONDS
	if [ "$BIG" -gt "$mnt_n" ]; then
		"$MANY_NAMES" --mds "$MDS_ADDR" --fsname "$FSNAME" --dir /big --create \
			--first "$mnt_n" --count $((BIG - mnt_n)) --threads 64
	fi
	echo "created $((BIG - mnt_n)) entries through libnacre in $((SECONDS - start)) s"
	start=$SECONDS
	# Listed through the mount: every name exactly once, nothing else.
	python3 - "$dir" "$BIG" <<'PY'
import collections, os, random, sys
d, n = sys.argv[1], int(sys.argv[2])
names = os.listdir(d)
dup = [k for k, v in collections.Counter(names).items() if v > 1]
assert not dup, "listed more than once: %r" % dup[:10]
want = {"e%06d" % i for i in range(n)}
got = set(names)
assert got == want, "missing %r, extra %r" % (sorted(want - got)[:10], sorted(got - want)[:10])
# Stat-able by name: a thousand of them, anywhere in the directory.
for name in random.Random(n).sample(sorted(got), min(n, 1000)):
    st = os.stat(os.path.join(d, name))
    assert st.st_size == 0 and (st.st_mode & 0o170000) == 0o100000, name
print("%d names listed once each; 1000 stat-ed" % len(names))
PY
	assert_eq "$(ls -f "$dir" | grep -c '^e')" "$BIG" "entries listed by ls -f"
	assert_eq "$(find "$dir" -type f | wc -l)" "$BIG" "entries found"
	echo "listed three times in $((SECONDS - start)) s"
	# Any one of them is there by name; a new one after the listing too.
	stat "$dir/e$(printf %06d $((BIG / 2)))" > /dev/null
	stat "$dir/e$(printf %06d $((BIG - 1)))" > /dev/null
	assert_fail stat "$dir/e$(printf %06d "$BIG")"
	echo last > "$dir/zz-last"
	assert_eq "$(ls -f "$dir" | grep -c .)" $((BIG + 3)) "with . and .. and one more"
	# Removed as made: the first ones through the mount, the rest through
	# libnacre; then the mount sees the directory empty and removes it.
	start=$SECONDS
	python3 - "$dir" "$mnt_n" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    os.unlink(os.path.join(d, "e%06d" % i))
PY
	if [ "$BIG" -gt "$mnt_n" ]; then
		"$MANY_NAMES" --mds "$MDS_ADDR" --fsname "$FSNAME" --dir /big --unlink \
			--first "$mnt_n" --count $((BIG - mnt_n)) --threads 64
	fi
	assert_eq "$(ls -A "$dir")" "zz-last" "left in the directory"
	assert_errno ENOTEMPTY rmdir "$dir"
	rm "$dir/zz-last"
	rmdir "$dir"
	echo "removed in $((SECONDS - start)) s"
	assert_fail test -e "$dir"
}
run_test 4 "a directory of $BIG entries" test_4

finish
