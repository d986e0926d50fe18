#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The manual pages: every page in man/ must format without a warning from
# mandoc -Tlint, and, where groff is installed, from groff -ww.  Style
# notes are printed but do not fail.  Exit 77 (skipped) only when neither
# formatter is installed.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname -- "$0")/../.." && pwd)}
pages=("$top_srcdir"/man/*.[1-8])
have=0 failed=0

if [ ! -e "${pages[0]}" ]; then
	echo "no manual pages in $top_srcdir/man" >&2
	exit 99
fi
if command -v mandoc >/dev/null 2>&1; then
	have=1
	for p in "${pages[@]}"; do
		out=$(mandoc -Tlint -Wwarning "$p" 2>&1)
		if [ -n "$out" ]; then
			echo "FAIL mandoc: $p"
			printf '%s\n' "$out"
			failed=1
		else
			echo "ok   mandoc: ${p##*/}"
		fi
		mandoc -Tlint -Wstyle "$p" 2>&1 | sed 's/^/     note: /'
	done
fi
if command -v groff >/dev/null 2>&1; then
	have=1
	for p in "${pages[@]}"; do
		out=$(groff -man -ww -z "$p" 2>&1)
		if [ -n "$out" ]; then
			echo "FAIL groff: $p"
			printf '%s\n' "$out"
			failed=1
		else
			echo "ok   groff:  ${p##*/}"
		fi
	done
fi
if [ $have = 0 ]; then
	echo "neither mandoc nor groff is installed: manual pages not checked"
	exit 77
fi
# Every page must also be one that make install installs.
for p in "${pages[@]}"; do
	if ! grep -q "man/${p##*/}" "$top_srcdir/Makefile.am"; then
		echo "FAIL: man/${p##*/} is not in Makefile.am's dist_man_MANS"
		failed=1
	fi
done
exit $failed
