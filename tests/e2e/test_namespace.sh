#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: namespace semantics through the mount: rename, links,
# symlinks, unlink and rmdir errors, unlink of an open file, permissions,
# timestamps, user xattrs and large directories.  Object destruction after
# the last unlink is checked on the OSTs' disks.
#
# Listing with ls is what these tests exercise.
# The sh -c scripts get their paths as "$1", hence single quotes.
# shellcheck disable=SC2010,SC2012,SC2016

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

cluster_up
WORK=$(mktemp -d "$CDIR/e2e-ns.XXXXXX")
# The unprivileged identity of the permission tests.
AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# existing_objects PATH: prints the on-disk path of each of PATH's objects
# that exists now.
existing_objects()
{
	local objs p
	objs=$(shard_objects "$1") || return 1
	while read -r _ _ p; do
		if [ -n "$p" ] && [ -e "$p" ]; then
			echo "$p"
		fi
	done <<< "$objs"
}

# not_exists PATH: fails, saying so, when PATH exists.
not_exists()
{
	if [ -e "$1" ] || [ -L "$1" ]; then
		echo "$1 exists but should not" >&2
		return 1
	fi
}

test_1()
{
	local d=$MNT/t1
	mkdir "$d"
	echo one > "$d/a"
	mv "$d/a" "$d/b"
	not_exists "$d/a"
	assert_eq "$(cat "$d/b")" "one" "content after rename"
	assert_eq "$(ls "$d")" "b" "listing after rename"
	# A directory with content, renamed in place.
	mkdir "$d/dir"
	echo inner > "$d/dir/inner"
	mv "$d/dir" "$d/dir2"
	not_exists "$d/dir"
	assert_eq "$(cat "$d/dir2/inner")" "inner" "content inside the renamed dir"
	# Renaming onto itself changes nothing.
	python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[1])' "$d/b"
	assert_eq "$(cat "$d/b")" "one" "content after rename onto itself"
}
run_test 1 "rename within a directory" test_1

test_2()
{
	local d=$MNT/t2
	mkdir -p "$d/src/deep" "$d/dst"
	echo x > "$d/src/file"
	echo y > "$d/src/deep/file"
	mv "$d/src/file" "$d/dst/renamed"
	not_exists "$d/src/file"
	assert_eq "$(cat "$d/dst/renamed")" "x" "file moved across directories"
	mv "$d/src/deep" "$d/dst/deep"
	not_exists "$d/src/deep"
	assert_eq "$(cat "$d/dst/deep/file")" "y" "directory moved across directories"
	assert_eq "$(ls -A "$d/src" | wc -l)" "0" "source directory is empty"
	assert_eq "$(ls "$d/dst" | tr '\n' ' ')" "deep renamed " "destination listing"
	# ".." of the moved directory is its new parent.
	assert_eq "$(stat -c %i "$d/dst/deep/..")" "$(stat -c %i "$d/dst")" \
		"parent of the moved directory"
}
run_test 2 "rename across directories" test_2

test_3()
{
	local d=$MNT/t3 objs src_objs
	mkdir "$d"
	mkdata "$WORK/t3.src" $((S + 10)) 301
	mkdata "$WORK/t3.dst" $((2 * S + 5)) 302
	cp "$WORK/t3.src" "$d/src"
	cp "$WORK/t3.dst" "$d/dst"
	existing_objects "$d/dst" > "$WORK/t3.dst.objs"
	existing_objects "$d/src" > "$WORK/t3.src.objs"
	mapfile -t objs < "$WORK/t3.dst.objs"
	mapfile -t src_objs < "$WORK/t3.src.objs"
	assert_eq "${#objs[@]}" "$((N < 3 ? N : 3))" "objects of the target before rename"
	mv "$d/src" "$d/dst"
	not_exists "$d/src"
	assert_file_eq "$WORK/t3.src" "$d/dst"
	assert_eq "$(ls "$d")" "dst" "listing after rename over a file"
	# The replaced file's objects go; the renamed file's objects stay.
	wait_gone 15 "${objs[@]}"
	for p in "${src_objs[@]}"; do
		test -e "$p"
	done
	assert_file_eq "$WORK/t3.src" "$d/dst"
}
run_test 3 "rename over an existing file destroys the old target" test_3

test_4()
{
	local d=$MNT/t4
	mkdir -p "$d/a/sub" "$d/b"
	echo keep > "$d/a/sub/f"
	mv -T "$d/a" "$d/b"
	not_exists "$d/a"
	assert_eq "$(cat "$d/b/sub/f")" "keep" "content after dir rename over an empty dir"
	assert_eq "$(ls "$d")" "b" "listing after dir rename"
}
run_test 4 "rename a directory over an empty directory" test_4

test_5()
{
	local d=$MNT/t5
	mkdir -p "$d/a" "$d/c"
	echo a > "$d/a/f"
	echo c > "$d/c/g"
	assert_errno "Directory not empty" mv -T "$d/a" "$d/c"
	assert_errno "Directory not empty" python3 -c \
		'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$d/a" "$d/c"
	# Both stay as they were.
	assert_eq "$(cat "$d/a/f")" "a" "source untouched"
	assert_eq "$(cat "$d/c/g")" "c" "target untouched"
	# A file over a directory and a directory over a file fail too.
	echo file > "$d/file"
	assert_errno "Is a directory" python3 -c \
		'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$d/file" "$d/a"
	assert_errno "Not a directory" python3 -c \
		'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$d/a" "$d/file"
	assert_eq "$(cat "$d/file")" "file" "file untouched"
}
run_test 5 "rename over a non-empty directory fails" test_5

test_6()
{
	local d=$MNT/t6
	mkdir -p "$d/p/q"
	echo z > "$d/p/q/z"
	assert_fail mv "$d/p" "$d/p/q/"
	assert_errno "Invalid argument" python3 -c \
		'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$d/p" "$d/p/q/p"
	assert_eq "$(cat "$d/p/q/z")" "z" "tree untouched"
	not_exists "$d/p/q/p"
}
run_test 6 "moving a directory into its own subdirectory fails" test_6

test_7()
{
	local d=$MNT/t7
	mkdir "$d"
	echo shared > "$d/f"
	ln "$d/f" "$d/g"
	assert_eq "$(stat -c %h "$d/f")" "2" "link count of f"
	assert_eq "$(stat -c %h "$d/g")" "2" "link count of g"
	assert_eq "$(stat -c %i "$d/f")" "$(stat -c %i "$d/g")" "same inode"
	echo more >> "$d/g"
	assert_eq "$(cat "$d/f")" "$(printf 'shared\nmore')" "content shared through f"
	# A third link in another directory.
	mkdir "$d/other"
	ln "$d/g" "$d/other/h"
	assert_eq "$(stat -c %h "$d/f")" "3" "link count with three names"
	rm "$d/f"
	not_exists "$d/f"
	assert_eq "$(cat "$d/g")" "$(printf 'shared\nmore')" "content kept after one unlink"
	assert_eq "$(stat -c %h "$d/g")" "2" "link count after one unlink"
	rm "$d/other/h"
	assert_eq "$(stat -c %h "$d/g")" "1" "link count after two unlinks"
	# Hard links to directories are refused.
	mkdir "$d/dir"
	assert_fail ln "$d/dir" "$d/dirlink"
	echo other > "$d/exists"
	assert_errno "File exists" ln "$d/g" "$d/exists"
	assert_eq "$(cat "$d/exists")" "other" "existing name untouched by a failed link"
}
run_test 7 "hard links" test_7

test_8()
{
	local d=$MNT/t8
	mkdir -p "$d/sub"
	echo target > "$d/file"
	ln -s file "$d/link"
	ln -s ../file "$d/sub/rel"
	ln -s "$d/file" "$d/abs"
	test -L "$d/link"
	assert_eq "$(readlink "$d/link")" "file" "readlink"
	assert_eq "$(readlink "$d/sub/rel")" "../file" "readlink of a relative link"
	assert_eq "$(cat "$d/link")" "target" "reading through the link"
	assert_eq "$(cat "$d/sub/rel")" "target" "reading through a relative link"
	assert_eq "$(cat "$d/abs")" "target" "reading through an absolute link"
	assert_eq "$(stat -c %F "$d/link")" "symbolic link" "lstat type"
	assert_eq "$(stat -L -c %F "$d/link")" "regular file" "stat type through the link"
	# Writing through the link changes the target.
	echo appended >> "$d/link"
	assert_eq "$(cat "$d/file")" "$(printf 'target\nappended')" "write through the link"
	# Dangling links exist but cannot be followed.
	ln -s nowhere "$d/dangling"
	test -L "$d/dangling"
	assert_eq "$(readlink "$d/dangling")" "nowhere" "readlink of a dangling link"
	assert_errno "No such file or directory" cat "$d/dangling"
	# Removing the link leaves the target.
	rm "$d/link"
	not_exists "$d/link"
	test -f "$d/file"
	# A long target.
	local long
	long=$(printf 'x/%.0s' $(seq 1 200))end
	ln -s "$long" "$d/long"
	assert_eq "$(readlink "$d/long")" "$long" "readlink of a 400-byte target"
}
run_test 8 "symbolic links" test_8

test_9()
{
	local d=$MNT/t9
	mkdir -p "$d/full" "$d/empty"
	echo f > "$d/full/f"
	echo file > "$d/file"
	assert_errno "Directory not empty" rmdir "$d/full"
	assert_errno "Is a directory" rm "$d/full"
	assert_errno "Not a directory" rmdir "$d/file"
	assert_errno "No such file or directory" rm "$d/missing"
	assert_errno "No such file or directory" rmdir "$d/missing"
	assert_errno "File exists" mkdir "$d/full"
	assert_errno "Not a directory" ls "$d/file/x"
	# Nothing was removed by the failures.
	test -f "$d/full/f"
	test -f "$d/file"
	rmdir "$d/empty"
	not_exists "$d/empty"
	rm -r "$d/full"
	not_exists "$d/full"
}
run_test 9 "unlink and rmdir errors" test_9

test_10()
{
	local d=$MNT/t10 objs p
	mkdir "$d"
	mkdata "$WORK/t10" $((2 * S + 77)) 1001
	cp "$WORK/t10" "$d/open"
	existing_objects "$d/open" > "$WORK/t10.objs"
	mapfile -t objs < "$WORK/t10.objs"
	assert_eq "${#objs[@]}" "$((N < 3 ? N : 3))" "objects of the file"
	exec 3< "$d/open"
	rm "$d/open"
	not_exists "$d/open"
	# The data stays readable through the open descriptor...
	cat <&3 > "$WORK/t10.out"
	assert_file_eq "$WORK/t10" "$WORK/t10.out"
	# ...and its objects stay on disk while the file is open.
	sleep 2
	for p in "${objs[@]}"; do
		test -e "$p"
	done
	exec 3<&-
	wait_gone 15 "${objs[@]}"
}
run_test 10 "an unlinked open file stays readable until closed" test_10

# perm_checks MOUNT: the checks of test 11, run through a second mount that
# lets other users in.
perm_checks()
{
	local m=$1
	# Control: nobody can reach and read what is open to everyone.
	"${AS_NOBODY[@]}" ls "$m/t11/open" > /dev/null
	assert_eq "$("${AS_NOBODY[@]}" cat "$m/t11/open/f")" "root's file" "nobody reads a 0644 file"
	assert_errno "Permission denied" "${AS_NOBODY[@]}" ls "$m/t11/private"
	assert_errno "Permission denied" "${AS_NOBODY[@]}" cat "$m/t11/private/f"
	assert_errno "Permission denied" "${AS_NOBODY[@]}" sh -c 'echo x >> "$1"' sh "$m/t11/open/f"
	assert_errno "Permission denied" "${AS_NOBODY[@]}" sh -c 'echo x > "$1"' sh "$m/t11/open/f"
	assert_errno "Permission denied" "${AS_NOBODY[@]}" touch "$m/t11/open/new"
	assert_errno "Permission denied" "${AS_NOBODY[@]}" rm -f "$m/t11/open/f"
	assert_errno "Permission denied" "${AS_NOBODY[@]}" cat "$m/t11/open/secret"
	assert_eq "$(cat "$m/t11/open/f")" "root's file" "the file is unchanged"
	# A file given to nobody is writable by nobody.
	"${AS_NOBODY[@]}" sh -c 'echo "nobody was here" >> "$1"' sh "$m/t11/open/mine"
	assert_eq "$(cat "$m/t11/open/mine")" "nobody was here" "nobody wrote its own file"
	# A directory nobody may enter but not list.
	chmod 0711 "$m/t11/private"
	assert_eq "$("${AS_NOBODY[@]}" cat "$m/t11/private/f")" "hidden" "read through a 0711 dir"
	assert_errno "Permission denied" "${AS_NOBODY[@]}" ls "$m/t11/private"
	# Files nobody creates in its own directory are its own.
	"${AS_NOBODY[@]}" sh -c 'echo x > "$1"' sh "$m/t11/nobodys/created"
	assert_eq "$(stat -c %u:%g "$m/t11/nobodys/created")" "65534:65534" "owner of a file nobody created"
}

test_11()
{
	local m rc
	mkdir -p "$MNT/t11/private" "$MNT/t11/open" "$MNT/t11/nobodys"
	chmod 0755 "$MNT/t11" "$MNT/t11/open"
	chmod 0700 "$MNT/t11/private"
	echo hidden > "$MNT/t11/private/f"
	chmod 0644 "$MNT/t11/private/f"
	echo "root's file" > "$MNT/t11/open/f"
	chmod 0644 "$MNT/t11/open/f"
	echo secret > "$MNT/t11/open/secret"
	chmod 0600 "$MNT/t11/open/secret"
	: > "$MNT/t11/open/mine"
	chown 65534:65534 "$MNT/t11/open/mine"
	chmod 0600 "$MNT/t11/open/mine"
	chown 65534:65534 "$MNT/t11/nobodys"
	# FUSE lets only the mounting user into a mount without allow_other,
	# so other users are tested through a second mount of our own.
	m=$(mktemp -d)
	chmod 0755 "$m"
	if ! "$MOUNT_NACRE" "$MDS_ADDR:/$FSNAME" "$m" -o allow_other; then
		rmdir "$m"
		echo "the second mount failed" >&2
		false
	fi
	set +e
	(
		set -e
		mountpoint -q "$m"
		perm_checks "$m"
	)
	rc=$?
	set -e
	fusermount3 -u "$m" || umount -l "$m"
	rmdir "$m"
	assert_eq "$rc" "0" "permission checks through the second mount"
}
run_test 11 "permissions are enforced for other users" test_11

test_12()
{
	local f=$MNT/t12
	echo data > "$f"
	chmod 0640 "$f"
	assert_eq "$(stat -c %a "$f")" "640" "mode after chmod 0640"
	chmod u+x,o+r "$f"
	assert_eq "$(stat -c %a "$f")" "744" "mode after chmod u+x,o+r"
	chmod 4755 "$f"
	assert_eq "$(stat -c %a "$f")" "4755" "setuid bit"
	chmod 0644 "$f"
	chown 65534:65534 "$f"
	assert_eq "$(stat -c %u:%g "$f")" "65534:65534" "owner after chown"
	chgrp 0 "$f"
	assert_eq "$(stat -c %u:%g "$f")" "65534:0" "owner after chgrp"
	mkdir "$f.dir"
	chmod 0750 "$f.dir"
	chown 65534 "$f.dir"
	assert_eq "$(stat -c %a:%u "$f.dir")" "750:65534" "directory mode and owner"
	# Still there once the attribute cache has expired.
	sleep 2
	assert_eq "$(stat -c %a:%u:%g "$f")" "644:65534:0" "attributes after the cache expired"
	assert_eq "$(cat "$f")" "data" "content unchanged by chmod and chown"
}
run_test 12 "chmod and chown show in stat" test_12

test_13()
{
	local d=$MNT/t13 want before m
	mkdir "$d"
	echo x > "$d/f"
	want=$(date -d "2001-02-03 04:05:06" +%s)
	touch -d "2001-02-03 04:05:06" "$d/f"
	assert_eq "$(stat -c %Y "$d/f")" "$want" "mtime set by touch -d"
	touch -a -d "2002-03-04 05:06:07" "$d/f"
	assert_eq "$(stat -c %X "$d/f")" "$(date -d "2002-03-04 05:06:07" +%s)" "atime set by touch -a"
	assert_eq "$(stat -c %Y "$d/f")" "$want" "mtime kept by touch -a"
	sleep 2
	assert_eq "$(stat -c %Y "$d/f")" "$want" "mtime after the cache expired"
	before=$(date +%s)
	echo more >> "$d/f"
	m=$(stat -c %Y "$d/f")
	echo "mtime after write: $m, clock before write: $before"
	[ "$m" -ge $((before - 2)) ]
	[ "$m" -le $(($(date +%s) + 2)) ]
	# Creating an entry updates the directory's mtime.
	touch -d "2001-02-03 04:05:06" "$d"
	assert_eq "$(stat -c %Y "$d")" "$want" "directory mtime set by touch -d"
	before=$(date +%s)
	: > "$d/g"
	[ "$(stat -c %Y "$d")" -ge $((before - 2)) ]
	# touch with no date sets the time to now.
	touch -d "2001-02-03 04:05:06" "$d/g"
	before=$(date +%s)
	touch "$d/g"
	[ "$(stat -c %Y "$d/g")" -ge $((before - 2)) ]
}
run_test 13 "timestamps" test_13

test_14()
{
	local f=$MNT/t14 big
	echo x > "$f"
	setfattr -n user.color -v blue "$f"
	setfattr -n user.shape -v round "$f"
	assert_eq "$(getfattr --absolute-names -n user.color --only-values "$f")" "blue" "get user.color"
	assert_eq "$(getfattr --absolute-names -n user.shape --only-values "$f")" "round" "get user.shape"
	assert_eq "$(getfattr --absolute-names -m '^user\.' "$f" | grep '^user\.' | sort | tr '\n' ' ')" \
		"user.color user.shape " "list of user xattrs"
	getfattr --absolute-names -d "$f" | grep -x 'user.color="blue"' > /dev/null
	# Replace, then a larger value.
	setfattr -n user.color -v green "$f"
	assert_eq "$(getfattr --absolute-names -n user.color --only-values "$f")" "green" "replaced value"
	big=$(head -c 3000 /dev/zero | tr '\0' 'v')
	setfattr -n user.big -v "$big" "$f"
	assert_eq "$(getfattr --absolute-names -n user.big --only-values "$f")" "$big" "a 3000-byte value"
	# Remove.
	setfattr -x user.color "$f"
	assert_errno "No such attribute" getfattr --absolute-names -n user.color "$f"
	assert_errno "No such attribute" setfattr -x user.missing "$f"
	assert_eq "$(getfattr --absolute-names -m '^user\.' "$f" | grep '^user\.' | sort | tr '\n' ' ')" \
		"user.big user.shape " "list after remove"
	# On a directory too.
	mkdir "$f.dir"
	setfattr -n user.tag -v dir "$f.dir"
	assert_eq "$(getfattr --absolute-names -n user.tag --only-values "$f.dir")" "dir" "xattr on a directory"
	# The data did not change.
	assert_eq "$(cat "$f")" "x" "content unchanged by xattrs"
}
run_test 14 "user extended attributes" test_14

test_15()
{
	local d=$MNT/t15 name i
	mkdir "$d"
	python3 - > "$WORK/t15.names" <<'PYEOF'
for i in range(880):
    print("entry-%04d" % i)
for i in range(100):
    print("long-%03d-%s" % (i, "n" * (100 + i)))
for i in range(20):
    print("with space %d" % i)
PYEOF
	assert_eq "$(wc -l < "$WORK/t15.names")" "1000" "names generated"
	while IFS= read -r name; do
		: > "$d/$name"
	done < "$WORK/t15.names"
	sort "$WORK/t15.names" > "$WORK/t15.want"
	ls -A "$d" | sort > "$WORK/t15.got"
	assert_file_eq "$WORK/t15.want" "$WORK/t15.got"
	assert_eq "$(find "$d" -mindepth 1 | wc -l)" "1000" "entries seen by find"
	# Remove every other entry: the listing is the other half.
	i=0
	while IFS= read -r name; do
		if [ $((i % 2)) -eq 0 ]; then
			rm "$d/$name"
		fi
		i=$((i + 1))
	done < "$WORK/t15.names"
	awk 'NR % 2 == 0' "$WORK/t15.names" | sort > "$WORK/t15.want2"
	ls -A "$d" | sort > "$WORK/t15.got2"
	assert_file_eq "$WORK/t15.want2" "$WORK/t15.got2"
	rm -r "$d"
	not_exists "$d"
}
run_test 15 "a directory of 1000 entries lists exactly those names" test_15


# Two mounts of one filesystem are two clients: what one closed, the other
# sees at its next open, although both cache names and attributes.
cto_checks()
{
	local a=$1 b=$2
	printf 'first' > "$a/t16/f"
	# b caches the name, the attributes and the pages.
	assert_eq "$(cat "$b/t16/f")" "first" "b reads a's file"
	stat -c %s "$b/t16/f" > /dev/null
	printf 'first, then longer' > "$a/t16/f"
	assert_eq "$(cat "$b/t16/f")" "first, then longer" "b sees a's rewrite at open"
	printf ' and longer still' >> "$a/t16/f"
	assert_eq "$(cat "$b/t16/f")" "first, then longer and longer still" \
		"b sees a's append at open"
	# The name now means another file: b must not open the old one.
	rm "$a/t16/f"
	printf 'second file' > "$a/t16/f"
	assert_eq "$(cat "$b/t16/f")" "second file" "b opens the new file of that name"
	assert_eq "$(stat -c %s "$b/t16/f")" "11" "b's stat after the open"
	# A name that b found absent shows once the negative cache expires.
	if [ -e "$b/t16/g" ]; then
		echo "g exists too early" >&2
		return 1
	fi
	echo late > "$a/t16/g"
	wait_until 5 test -e "$b/t16/g"
	assert_eq "$(cat "$b/t16/g")" "late" "b reads the file a created"
}

test_16()
{
	local m rc
	mkdir -p "$MNT/t16"
	m=$(mktemp -d)
	if ! "$MOUNT_NACRE" "$MDS_ADDR:/$FSNAME" "$m"; then
		rmdir "$m"
		echo "the second mount failed" >&2
		false
	fi
	set +e
	(
		set -e
		cto_checks "$MNT" "$m"
	)
	rc=$?
	set -e
	fusermount3 -u "$m" || umount -l "$m"
	rmdir "$m"
	rm -r "$MNT/t16"
	assert_eq "$rc" "0" "close-to-open between two mounts"
}
run_test 16 "close-to-open consistency between two mounts" test_16

finish
