#!/bin/bash
# SPDX-License-Identifier: MIT
#
# nacre end-to-end: OST administration on six OSTs.  Deactivating an OST
# keeps new objects off it while its old files still read and write;
# nacre-cluster add-oss grows the running filesystem and the existing mount
# uses the new OST at once; OST pools confine a directory's new files; bad
# arguments and non-root callers get clear errors.

# automake runs us as "sh FILE"; the suite needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=/dev/null
. "$(dirname -- "$0")/lib.sh"

export OSTS=6
cluster_up
WORK=$(mktemp -d "$CDIR/e2e-admin.XXXXXX")

# osts_on PATH: the OST indexes of PATH's shards, sorted, space separated.
osts_on() {
	"$NACRE" getstripe --json "$1" |
		jget '" ".join(str(o) for o in sorted({s["ost"] for s in d["shards"]}))'
}

# ost_field INDEX EXPR: EXPR of OST INDEX's object in `nacre osts --json`.
ost_field() {
	"$NACRE" osts --json "$MNT" | jget "[o for o in d if o[\"index\"] == $1][0][\"$2\"]"
}

# sums DIR: "NAME SHA256" of every file in DIR, read through the mount.
sums() {
	drop_caches || true
	(cd -- "$1" && sha256sum -- *)
}

# status CMD...: runs CMD and prints its exit status (its output goes to
# stderr, for the log).
status() {
	local rc=0

	"$@" >&2 || rc=$?
	echo "$rc"
}

test_deactivate() {
	local old=$MNT/old new=$MNT/new i on before after

	mkdir -p "$old" "$new"
	# Files striped over every OST: OST 2 holds a shard of each.
	"$NACRE" setstripe -c -1 "$old"
	for i in 0 1 2 3 4 5 6 7; do
		mkdata "$old/f$i" $((300000 + i * 4099)) "$i"
	done
	for i in 0 1 2 3 4 5 6 7; do
		[[ " $(osts_on "$old/f$i") " == *" 2 "* ]] || exit 1
	done
	before=$(sums "$old")

	"$NACRE" osts deactivate 2 "$MNT"
	assert_eq "$(ost_field 2 active)" false "OST 2 active after deactivate"
	assert_eq "$(ost_field 2 state)" up "OST 2 state"
	assert_eq "$(ost_field 3 active)" true "OST 3 active"
	"$NACRE" osts "$MNT" | grep -E '^2 .* up +inactive$' >/dev/null
	"$NACRE" df "$MNT" | grep -E "^$FSNAME-OST0002 .* inact " >/dev/null
	assert_eq "$("$NACRE" df --json "$MNT" | jget '[t["active"] for t in d["targets"] if t["name"].endswith("OST0002")][0]')" false "df active"
	# Deactivating twice is no error.
	"$NACRE" osts --json deactivate 2 "$MNT" | jget 'd["active"]' | grep -qx false

	# 30 new files, default layout and all-OST layout: none on OST 2.
	"$NACRE" setstripe -c -1 "$new"
	for i in $(seq 1 30); do
		if [ $((i % 2)) = 0 ]; then
			head -c $((i * 10007)) /dev/urandom >"$new/f$i"
		else
			head -c $((i * 10007)) /dev/urandom >"$MNT/root$i"
		fi
	done
	for i in $(seq 1 30); do
		if [ $((i % 2)) = 0 ]; then on=$(osts_on "$new/f$i"); else on=$(osts_on "$MNT/root$i"); fi
		[ -n "$on" ] || exit 1
		if [[ " $on " == *" 2 "* ]]; then
			echo "file $i has a shard on deactivated OST 2 ($on)" >&2
			exit 1
		fi
	done

	# Old files on OST 2 read back exactly, and can still be written.
	after=$(sums "$old")
	assert_eq "$after" "$before" "old files after deactivate"
	mkdata "$WORK/f3" 300000 33
	cp -- "$WORK/f3" "$old/f3"
	drop_caches || true
	assert_file_eq "$old/f3" "$WORK/f3"
	[[ " $(osts_on "$old/f3") " == *" 2 "* ]] || exit 1

	# Active again: the next all-OST files use it.
	"$NACRE" osts activate 2 "$MNT"
	assert_eq "$(ost_field 2 active)" true "OST 2 active after activate"
	head -c 100000 /dev/urandom >"$new/again"
	[[ " $(osts_on "$new/again") " == *" 2 "* ]] || exit 1
}

test_add_oss() {
	local dir=$MNT/grow data=$WORK/grow.data json

	mkdir -p "$dir"
	"$NACRE" setstripe -c -1 "$dir"
	# The mount was started with six OSTs; it stays up throughout.
	"$CLUSTER" add-oss --dir "$CDIR" --osts 1
	assert_eq "$(ost_field 6 state)" up "new OST 6 state"
	assert_eq "$(ost_field 6 active)" true "new OST 6 active"
	"$NACRE" df "$MNT" | grep -E "^$FSNAME-OST0006 .* up " >/dev/null
	json=$(status_json)
	assert_eq "$(jget '[x["osts"] for x in d["daemons"] if x["name"] == "oss6"][0]' <<<"$json")" "[6]" "status of oss6"
	assert_eq "$(jget '[x["state"] for x in d["daemons"] if x["name"] == "oss6"][0]' <<<"$json")" running "oss6 runs"

	# New files through the existing mount use OST 6 at once.
	mkdata "$data" 700000 66
	cp -- "$data" "$dir/f"
	[[ " $(osts_on "$dir/f") " == *" 6 "* ]] || exit 1
	drop_caches || true
	assert_file_eq "$dir/f" "$data"

	# A pool holding only the new OST.
	"$NACRE" pool create new "$MNT" >/dev/null
	"$NACRE" pool add new 6 "$MNT" >/dev/null
	mkdir "$dir/only6"
	"$NACRE" setstripe -p new -c -1 "$dir/only6"
	cp -- "$data" "$dir/only6/f"
	assert_eq "$(osts_on "$dir/only6/f")" 6 "file of pool 'new'"
	drop_caches || true
	assert_file_eq "$dir/only6/f" "$data"
}

test_pools() {
	local dir=$MNT/pooled i on json

	"$NACRE" pool create fast "$MNT" >/dev/null
	json=$("$NACRE" pool add --json fast 1 3 "$MNT")
	assert_eq "$(jget 'd["osts"]' <<<"$json")" "[1, 3]" "pool add --json"
	json=$("$NACRE" pool list --json "$MNT")
	assert_eq "$(jget '[p["osts"] for p in d if p["name"] == "fast"][0]' <<<"$json")" "[1, 3]" "pool list --json"
	assert_eq "$("$NACRE" pool list --json fast "$MNT" | jget 'len(d)')" 1 "pool list NAME"
	"$NACRE" pool list "$MNT" | grep -E '^fast +1,3$' >/dev/null

	mkdir "$dir"
	"$NACRE" setstripe -p fast -c -1 "$dir"
	assert_eq "$("$NACRE" getstripe --json "$dir" | jget 'd["pool"]')" fast "getstripe pool"
	"$NACRE" getstripe "$dir" | grep -qx 'pool: fast'
	mkdir "$dir/sub"
	assert_eq "$("$NACRE" getstripe --json "$dir/sub" | jget 'd["pool"]')" fast "inherited pool"
	for i in $(seq 1 10); do
		head -c $((i * 30011)) /dev/urandom >"$dir/f$i"
		head -c $((i * 30011)) /dev/urandom >"$dir/sub/f$i"
	done
	for i in $(seq 1 10); do
		assert_eq "$(osts_on "$dir/f$i")" "1 3" "OSTs of pooled file $i"
		assert_eq "$(osts_on "$dir/sub/f$i")" "1 3" "OSTs of inherited file $i"
	done
	# A new file given the pool on its own (setstripe creates it).
	"$NACRE" setstripe -p fast -c 2 -E none "$MNT/one_file"
	assert_eq "$(osts_on "$MNT/one_file")" "1 3" "setstripe -p on a new file"

	# A deactivated member is skipped; a removed one too.
	"$NACRE" osts deactivate 3 "$MNT" >/dev/null
	head -c 50000 /dev/urandom >"$dir/g1"
	assert_eq "$(osts_on "$dir/g1")" 1 "pool with OST 3 inactive"
	"$NACRE" osts activate 3 "$MNT" >/dev/null
	"$NACRE" pool remove fast 3 "$MNT" >/dev/null
	head -c 50000 /dev/urandom >"$dir/g2"
	assert_eq "$(osts_on "$dir/g2")" 1 "pool after remove"

	# Destroy refuses while OSTs remain.
	assert_eq "$(status "$NACRE" pool destroy fast "$MNT")" 1 "destroy of a non-empty pool"
	assert_errno "still has OSTs" "$NACRE" pool destroy fast "$MNT"
	# Clearing the directory's pool: every OST again.
	"$NACRE" setstripe --no-pool "$dir"
	assert_eq "$("$NACRE" getstripe --json "$dir" | jget 'd["pool"]')" None "pool cleared"
	head -c 50000 /dev/urandom >"$dir/g3"
	on=$(osts_on "$dir/g3")
	[ "$(wc -w <<<"$on")" -ge 5 ] || exit 1
	"$NACRE" setstripe -p fast "$dir"
	"$NACRE" setstripe -p '' "$dir"
	assert_eq "$("$NACRE" getstripe --json "$dir" | jget 'd["pool"]')" None "pool cleared by -p ''"

	"$NACRE" pool remove fast 1 "$MNT" >/dev/null
	"$NACRE" pool destroy --json fast "$MNT" | jget 'd["destroyed"]' | grep -qx true
	assert_eq "$("$NACRE" pool list --json "$MNT" | jget '[p for p in d if p["name"] == "fast"]')" "[]" "fast destroyed"
}

test_bad_args() {
	local nobody keydir

	# Unknown index, not a number, missing arguments.
	assert_eq "$(status "$NACRE" osts deactivate 99 "$MNT")" 1 "unknown OST index"
	assert_errno "no OST with that index" "$NACRE" osts deactivate 99 "$MNT"
	assert_eq "$(status "$NACRE" osts deactivate abc "$MNT")" 2 "bad OST index"
	assert_eq "$(status "$NACRE" osts deactivate 100000 "$MNT")" 2 "index out of range"
	assert_eq "$(status "$NACRE" osts activate)" 2 "missing INDEX"
	assert_eq "$(status "$NACRE" osts activate 1 "$MNT" extra)" 2 "too many arguments"
	assert_eq "$(status "$NACRE" pool)" 2 "pool without subcommand"
	assert_eq "$(status "$NACRE" pool frob x "$MNT")" 2 "unknown pool subcommand"
	assert_eq "$(status "$NACRE" pool create)" 2 "pool create without NAME"
	assert_eq "$(status "$NACRE" pool create 'bad/name' "$MNT")" 2 "bad pool name"
	assert_errno "bad pool name" "$NACRE" pool create 'sixteen-chars-xx' "$MNT"
	assert_eq "$(status "$NACRE" pool add p1 "$MNT")" 2 "pool add without INDEX"
	assert_eq "$(status "$NACRE" pool add nosuch 1 "$MNT")" 1 "add to a missing pool"
	"$NACRE" pool create p1 "$MNT" >/dev/null
	assert_eq "$(status "$NACRE" pool create p1 "$MNT")" 1 "pool exists"
	assert_errno "no OST 99" "$NACRE" pool add p1 99 "$MNT"
	assert_errno "is not in pool" "$NACRE" pool remove p1 1 "$MNT"
	"$NACRE" pool add p1 1 "$MNT" >/dev/null
	assert_errno "already in pool" "$NACRE" pool add p1 1 "$MNT"
	assert_eq "$(status "$NACRE" pool list nosuch "$MNT")" 1 "list of a missing pool"
	assert_eq "$("$NACRE" pool list --json p1 "$MNT" | jget 'd[0]["osts"]')" "[1]" "failed add changed nothing"
	assert_eq "$(status "$NACRE" setstripe -p 'a b' "$MNT")" 2 "setstripe bad pool name"
	assert_eq "$(status "$NACRE" setstripe -p p1 --no-pool "$MNT")" 2 "-p with --no-pool"
	assert_errno "no OST pool 'nosuch'" "$NACRE" setstripe -p nosuch "$MNT"
	assert_eq "$(status "$CLUSTER" add-oss --dir "$CDIR" --osts 0)" 2 "add-oss --osts 0"
	assert_eq "$(status "$CLUSTER" add-oss --dir "$CDIR" --mount /x)" 2 "add-oss --mount"

	# Not root: refused by the MDS, nothing changes.
	command -v setpriv >/dev/null || { echo "no setpriv: non-root checks skipped"; return 0; }
	# A client needs the cluster key, in a file only it may read: nobody
	# gets its own copy, so the MDS itself is what refuses.
	keydir=$(mktemp -d -t nacre-e2e-key.XXXXXX)
	chmod 0755 "$keydir"
	install -o 65534 -g 65534 -m 0600 "$NACRE_KEYFILE" "$keydir/nobody.key"
	nobody=(env NACRE_KEYFILE="$keydir/nobody.key" setpriv --reuid=65534 --regid=65534
		--clear-groups)
	assert_errno "only root" "${nobody[@]}" "$NACRE" --mds "$MDS_ADDR" --fsname "$FSNAME" \
		osts deactivate 1
	assert_eq "$(status "${nobody[@]}" "$NACRE" --mds "$MDS_ADDR" --fsname "$FSNAME" \
		pool create p2)" 1 "non-root pool create"
	assert_errno "only root" "${nobody[@]}" "$NACRE" --mds "$MDS_ADDR" --fsname "$FSNAME" \
		pool remove p1 1
	assert_eq "$(ost_field 1 active)" true "OST 1 after a refused deactivate"
	# Anyone may list.
	"${nobody[@]}" "$NACRE" --mds "$MDS_ADDR" --fsname "$FSNAME" pool list p1 | grep -qE '^p1 +1$'
	rm -rf -- "$keydir"
}

test_restart_keeps() {
	"$NACRE" osts deactivate 4 "$MNT" >/dev/null
	"$CLUSTER" restart mds --dir "$CDIR" >/dev/null
	retry 30 "$NACRE" osts "$MNT" >/dev/null
	assert_eq "$(ost_field 4 active)" false "OST 4 after an MDS restart"
	"$CLUSTER" restart oss 4 --dir "$CDIR" >/dev/null
	assert_eq "$(ost_field 4 active)" false "OST 4 after its OSS restarted"
	head -c 300000 /dev/urandom >"$MNT/after_restart"
	[[ " $(osts_on "$MNT/after_restart") " != *" 4 "* ]] || exit 1
	"$NACRE" osts activate 4 "$MNT" >/dev/null
}

run_test 1 "deactivated OST gets no new objects, old files intact, activate again" test_deactivate
run_test 2 "add-oss grows a live filesystem; the mount uses the new OST" test_add_oss
run_test 3 "pools: create, add, list, setstripe -p, remove, destroy" test_pools
run_test 4 "bad arguments and non-root callers" test_bad_args
run_test 5 "inactive state survives MDS and OSS restarts" test_restart_keeps
finish
