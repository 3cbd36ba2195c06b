#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The libfabric provider "ptl" against ptl.ko in a test guest: fi_info
# lists it, then libfabric's own API through it (build/ofi/tests/
# fi_ptl_test: every call and error path, two endpoints of one process).
# Prints TAP lines; exits non-zero if any failed.
#
# Loads ptl.ko (nid $PTL_TEST_NID, default 7) unless /dev/portals exists.
#   tools/testing/vm/run --smp 2 -- selftests/ofi_test.sh
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
tap_numbered=1
build=${BUILD:-$top/build}
export FI_PROVIDER_PATH=$build/ofi
out=$(mktemp -d)

loaded=0
if [ ! -c /dev/portals ]; then
	insmod "$top/ptl.ko" nid="${PTL_TEST_NID:-7}" || { echo "not ok 1 - load ptl.ko"; exit 1; }
	loaded=1
fi

fi_info -p ptl >"$out/info" 2>&1
grep -q 'provider: ptl' "$out/info" && grep -q 'type: FI_EP_RDM' "$out/info"
report $? "fi_info -p ptl lists the provider (FI_EP_RDM, domain ptl0)"

# gtest_run LABEL: fi_ptl_test, each GoogleTest case a TAP line.
gtest_run() {
	local label=$1 rc
	"$build/ofi/tests/fi_ptl_test" >"$out/gtest" 2>&1
	rc=$?
	# (the guest has no /dev/fd: no process substitution)
	sed -nE 's/^\[ +(OK|FAILED) +\] ([A-Za-z0-9_./]+) \(.*/\1 \2/p' "$out/gtest" >"$out/cases"
	while read -r verdict name; do
		if [ "$verdict" = OK ]; then report 0 "$label$name"; else report 1 "$label$name"; fi
	done <"$out/cases"
	if [ $rc -ne 0 ]; then
		grep -vE '^\[ +(RUN|OK) ' "$out/gtest" | head -60 | sed 's/^/# /'
	fi
	[ -s "$out/cases" ] && [ $rc -eq 0 ]
	report $? "${label}fi_ptl_test: every case passed (exit $rc)"
}

# Small receives are held by the provider and matched as their messages
# reach the heap (FI_PTL_RECV_MATCH_SIZE); the second run posts every
# receive to the kernel, so both paths see every case.
gtest_run ""
FI_PTL_RECV_MATCH_SIZE=0 gtest_run "all posted: "

if [ $loaded -eq 1 ]; then
	rmmod ptl
	report $? "ptl.ko unloads: the provider left nothing behind"
fi
echo "1..$tap_count"
exit $((failures > 0))
