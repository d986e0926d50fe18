#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: everyday tools on the mount (cp, tar, rsync, git, find,
# du, dd, python, sqlite3), each checked against the same work on a local
# directory.  A case whose tool is not installed passes with a SKIP note.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

cluster_up
WORK=$(mktemp -d "$CDIR/e2e-tools.XXXXXX")

# have TOOL: whether TOOL is installed.
have()
{
	command -v "$1" > /dev/null 2>&1
}

# mktree DIR: a reproducible tree of a few hundred small files (and a few
# larger ones), with nested directories, an empty directory, symlinks, a
# hard link, varied modes and names with spaces.
mktree()
{
	python3 - "$1" <<'PYEOF'
import os, random, sys
root = sys.argv[1]
r = random.Random(2024)
os.makedirs(root)
dirs = [root]
for i in range(10):
    d = os.path.join(root, "d%02d" % i)
    os.mkdir(d)
    dirs.append(d)
    for j in range(3):
        s = os.path.join(d, "sub%d" % j)
        os.mkdir(s)
        dirs.append(s)
os.mkdir(os.path.join(root, "empty dir"))
exts = [".txt", ".bin", ".dat", ".py"]
for n in range(300):
    d = r.choice(dirs)
    name = "file-%03d%s" % (n, r.choice(exts))
    if n % 50 == 7:
        name = "with space %03d.txt" % n
    if n % 100 == 3:
        size = 1536 * 1024 + r.randrange(4096)
    elif n % 10 == 0:
        size = r.randrange(50000, 200000)
    elif n % 37 == 0:
        size = 0
    else:
        size = r.randrange(1, 20000)
    p = os.path.join(d, name)
    with open(p, "wb") as f:
        f.write(r.randbytes(size))
    os.chmod(p, r.choice([0o644, 0o644, 0o600, 0o755]))
    os.utime(p, (1600000000 + n * 1000, 1600000000 + n * 1000))
os.symlink("d00", os.path.join(root, "link-to-dir"))
os.symlink("../d01/sub0", os.path.join(root, "d00", "rel-link"))
first = sorted(os.listdir(os.path.join(root, "d02")))
for name in first:
    p = os.path.join(root, "d02", name)
    if os.path.isfile(p):
        os.link(p, os.path.join(root, "d02", "hardlink-" + name))
        break
PYEOF
}

mktree "$WORK/tree"

test_1()
{
	cp -r "$WORK/tree" "$MNT/cp"
	diff -r "$WORK/tree" "$MNT/cp"
	assert_eq "$(cd "$MNT/cp" && find . | sort | md5sum)" \
		"$(cd "$WORK/tree" && find . | sort | md5sum)" "names in the copy"
	# And back out to a local directory.
	cp -r "$MNT/cp" "$WORK/cp-back"
	diff -r "$WORK/tree" "$WORK/cp-back"
}
run_test 1 "cp -r of a generated tree, diff -r" test_1

test_2()
{
	if ! have tar; then
		echo "SKIP (no tar)"
		return 0
	fi
	tar -C "$WORK" -cf "$WORK/tree.tar" tree
	mkdir "$MNT/untar"
	tar -C "$MNT/untar" -xf "$WORK/tree.tar"
	diff -r "$WORK/tree" "$MNT/untar/tree"
	# tar's own check: contents, sizes, modes and mtimes.
	tar -C "$MNT/untar" -df "$WORK/tree.tar"
	# An archive made from the mount extracts to the same tree.
	tar -C "$MNT/untar" -cf "$WORK/from-mnt.tar" tree
	mkdir "$WORK/from-mnt"
	tar -C "$WORK/from-mnt" -xf "$WORK/from-mnt.tar"
	diff -r "$WORK/tree" "$WORK/from-mnt/tree"
	# And an archive written onto the mount reads back.
	tar -C "$WORK" -czf "$MNT/tree.tgz" tree
	mkdir "$WORK/from-tgz"
	tar -C "$WORK/from-tgz" -xzf "$MNT/tree.tgz"
	diff -r "$WORK/tree" "$WORK/from-tgz/tree"
}
run_test 2 "tar out of and into the mount" test_2

test_3()
{
	local changes f
	if ! have rsync; then
		echo "SKIP (no rsync)"
		return 0
	fi
	rsync -a "$WORK/tree/" "$MNT/rsync/"
	changes=$(rsync -anc --itemize-changes "$WORK/tree/" "$MNT/rsync/")
	assert_eq "$changes" "" "rsync differences after copying to the mount"
	rsync -a "$MNT/rsync/" "$WORK/rsync-back/"
	changes=$(rsync -anc --itemize-changes "$MNT/rsync/" "$WORK/rsync-back/")
	assert_eq "$changes" "" "rsync differences after copying from the mount"
	diff -r "$WORK/tree" "$WORK/rsync-back"
	# An update sends just the changed file, by rsync's delta transfer
	# into a temporary file renamed over the old one.
	f=$(cd "$WORK/rsync-back" && find . -type f -size +100k | sort | head -n 1)
	printf 'changed' | dd of="$WORK/rsync-back/$f" bs=1 seek=1000 conv=notrunc status=none
	touch -d "2020-01-01 00:00:00" "$WORK/rsync-back/$f"
	changes=$(rsync -ac --no-whole-file --itemize-changes "$WORK/rsync-back/" "$MNT/rsync/")
	echo "$changes"
	assert_eq "$(printf '%s\n' "$changes" | grep -c '^>f')" "1" "files sent by the update"
	changes=$(rsync -anc --itemize-changes "$WORK/rsync-back/" "$MNT/rsync/")
	assert_eq "$changes" "" "rsync differences after the update"
	cmp "$WORK/rsync-back/$f" "$MNT/rsync/$f"
}
run_test 3 "rsync -a to and from the mount" test_3

test_4()
{
	if ! have git; then
		echo "SKIP (no git)"
		return 0
	fi
	export HOME=$WORK/home GIT_CONFIG_NOSYSTEM=1
	export GIT_AUTHOR_NAME="nacre test" GIT_AUTHOR_EMAIL="test@nacre.invalid"
	export GIT_COMMITTER_NAME="nacre test" GIT_COMMITTER_EMAIL="test@nacre.invalid"
	mkdir -p "$HOME"
	git -c init.defaultBranch=main init -q "$MNT/repo"
	cp -r "$WORK/tree/d00" "$WORK/tree/d01" "$MNT/repo/"
	git -C "$MNT/repo" add -A
	git -C "$MNT/repo" commit -q -m "first commit"
	echo "a change" >> "$MNT/repo/d00/new-file.txt"
	git -C "$MNT/repo" add -A
	git -C "$MNT/repo" commit -q -m "second commit"
	git -C "$MNT/repo" mv d01 moved
	git -C "$MNT/repo" commit -q -m "third commit"
	assert_eq "$(git -C "$MNT/repo" log --oneline | wc -l)" "3" "commits in the log"
	assert_eq "$(git -C "$MNT/repo" log -1 --format=%s)" "third commit" "last commit message"
	assert_eq "$(git -C "$MNT/repo" status --porcelain)" "" "clean work tree"
	git -C "$MNT/repo" fsck --full --strict
	# Packing rewrites the object store; it must still check out.
	git -C "$MNT/repo" gc -q
	git -C "$MNT/repo" fsck --full --strict
	git clone -q "$MNT/repo" "$WORK/clone"
	diff -r --no-dereference --exclude=.git "$MNT/repo" "$WORK/clone"
	diff -r "$WORK/tree/d01" "$WORK/clone/moved"
}
run_test 4 "git init, commit, log and fsck inside the mount" test_4

test_5()
{
	local expr
	# cp -a keeps the hard link that -links 2 counts.
	cp -a "$WORK/tree" "$MNT/find"
	for expr in "-type f" "-type d" "-type l" "-name *.txt" "-name file-1*" \
		"-size +10k" "-size -2k" "-empty" "-type f -perm 0755" \
		"-type f -links 2" "-newermt 2000-01-01 -type f"; do
		# Word splitting of $expr is intended: it is a find expression.
		# shellcheck disable=SC2086
		assert_eq "$(find "$MNT/find" $expr | wc -l)" \
			"$(find "$WORK/tree" $expr | wc -l)" "find $expr"
	done
	[ "$(find "$MNT/find" -type f | wc -l)" -ge 300 ]
}
run_test 5 "find counts match the local tree" test_5

test_6()
{
	local total big
	cp -r "$WORK/tree" "$MNT/du"
	total=$(du -s -k "$MNT/du" | awk '{ print $1 }')
	echo "du -s: $total KiB"
	[ "$total" -gt 0 ]
	big=$(cd "$MNT/du" && find . -type f -size +1024k | sort | head -n 1)
	[ -n "$big" ]
	[ "$(du -k "$MNT/du/$big" | awk '{ print $1 }')" -ge 512 ]
	# Apparent sizes add up to the local tree's.
	assert_eq "$(find "$MNT/du" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')" \
		"$(find "$WORK/tree" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')" \
		"sum of file sizes"
}
run_test 6 "du -s gives a non-zero figure" test_6

test_7()
{
	dd if=/dev/urandom bs=1M count=8 iflag=fullblock status=none |
		tee "$WORK/random" | dd of="$MNT/random" bs=1M iflag=fullblock status=none
	assert_eq "$(stat -c %s "$MNT/random")" "8388608" "size of the random file"
	cmp "$WORK/random" "$MNT/random"
	dd if="$MNT/random" of="$WORK/random.back" bs=1M status=none
	cmp "$WORK/random" "$WORK/random.back"
}
run_test 7 "dd bs=1M count=8 from /dev/urandom" test_7

test_8()
{
	local p
	for p in "$WORK/seek" "$MNT/seek"; do
		python3 - "$p" <<'PYEOF'
import os, random, sys
path = sys.argv[1]
r = random.Random(8)
S = 1 << 20
with open(path, "w+b") as f:
    f.write(r.randbytes(3 * S + 11))
    for off, n in [(S - 5, 10), (0, 3), (2 * S + 7, S), (5 * S, 4), (17, 100000)]:
        f.seek(off)
        b = r.randbytes(n)
        f.write(b)
        f.seek(off)
        assert f.read(n) == b, "read back at %d" % off
    f.seek(0, os.SEEK_END)
    assert f.tell() == 5 * S + 4, f.tell()
    f.seek(-4, os.SEEK_END)
    f.write(b"end!")
    f.flush()
    os.fsync(f.fileno())
with open(path, "rb") as f:
    f.seek(4 * S)
    assert f.read(S) == bytes(S), "hole after the old end is not zeros"
    assert f.read() == b"end!"
PYEOF
	done
	cmp "$WORK/seek" "$MNT/seek"
}
run_test 8 "python3 writes and reads a file with seek" test_8

test_9()
{
	local db=$MNT/sqlite/test.db
	if ! have sqlite3; then
		echo "SKIP (no sqlite3)"
		return 0
	fi
	mkdir "$MNT/sqlite"
	sqlite3 "$db" <<'SQL'
CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL);
BEGIN;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000)
INSERT INTO t SELECT x, hex(randomblob(64)) FROM c;
COMMIT;
CREATE INDEX t_v ON t(v);
SQL
	assert_eq "$(sqlite3 "$db" 'PRAGMA integrity_check;')" "ok" "integrity_check"
	assert_eq "$(sqlite3 "$db" 'SELECT count(*) FROM t;')" "1000" "row count"
	assert_eq "$(sqlite3 "$db" 'SELECT sum(id) FROM t;')" "500500" "sum of ids"
	# A rolled-back transaction leaves no trace.
	sqlite3 "$db" 'BEGIN; DELETE FROM t; ROLLBACK;'
	assert_eq "$(sqlite3 "$db" 'SELECT count(*) FROM t;')" "1000" "row count after rollback"
	sqlite3 "$db" "UPDATE t SET v = 'x' WHERE id % 2 = 0; VACUUM;"
	assert_eq "$(sqlite3 "$db" "SELECT count(*) FROM t WHERE v = 'x';")" "500" "updated rows"
	assert_eq "$(sqlite3 "$db" 'PRAGMA integrity_check;')" "ok" "integrity_check after vacuum"
	# No journal is left behind.
	assert_eq "$(ls "$MNT/sqlite")" "test.db" "files next to the database"
}
run_test 9 "sqlite3 database on the mount" test_9

finish
