# shellcheck shell=bash
t0() {
	mkdata "$D/x" 5000000 1
	cp "$D/x" "$MNT_A/x"
	cmp "$D/x" "$MNT_B/x"
	in_ns clb "$NACRE" getstripe "$MNT_B/x"
}
run_test 0 smoke t0
