# shellcheck shell=bash
# TAP lines for the shell selftests; sourced, not run.
#
#   report STATUS DESCRIPTION...   "ok - DESCRIPTION" if STATUS is 0, else
#                                  "not ok - DESCRIPTION" and one more failure
#   skip DESCRIPTION REASON        "ok - DESCRIPTION # SKIP REASON"
#
# failures counts the failures (a script ends with exit $((failures > 0))),
# tap_count the results. With tap_numbered=1 the lines carry their number
# ("ok 3 - ..."), for a script that prints the plan "1..$tap_count" last.

failures=0
tap_count=0
tap_numbered=0

report() {
	local n=
	tap_count=$((tap_count + 1))
	[ "$tap_numbered" = 1 ] && n=" $tap_count"
	if [ "$1" -eq 0 ]; then
		echo "ok$n - ${*:2}"
	else
		echo "not ok$n - ${*:2}"
		failures=$((failures + 1))
	fi
}

skip() {
	tap_count=$((tap_count + 1))
	echo "ok - $1 # SKIP $2"
}
