#!/bin/bash
# Runs inside a test guest (see tools/testing/vm/run): loads ptl.ko, runs every
# kselftest binary, and checks that the module unloads cleanly. Prints TAP
# lines; tools/testing/run-checks counts them. The guest's kernel log is scanned for
# splats by the harness itself.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$top/selftests/tap.sh"
build=${BUILD:-$top/build}
# Where ptl.ko is: the repository root (make), or the debug kernel's build
# of it (tools/testing/vm/mkdebugmodules, build/debug-modules).
moddir=${PTL_MODULE_DIR:-$top}
# ptl_kapi_test loads the kernel API's test client from here.
export PTL_MODULE_DIR=$moddir
export PTL_TEST_NID=${PTL_TEST_NID:-7}

insmod "$moddir/ptl.ko" nid="$PTL_TEST_NID"
report $? "ptl.ko loads (nid=$PTL_TEST_NID)"
test -c /dev/portals
report $? "ptl.ko creates /dev/portals"
[ "$(stat -c %a /dev/portals 2>/dev/null)" = 666 ]
report $? "/dev/portals is usable by every user (mode 0666)"

# ptl_kapi_test skips without its module: make sure that is not why.
test -f "$moddir/ptl_kapi_test.ko"
report $? "the kernel API's test client ptl_kapi_test.ko is built"

for test in "$build"/selftests/*_test; do
	echo "# running $(basename "$test")"
	"$test" || failures=$((failures + 1))
done

# The trusted launcher: the job id reaches the program through the
# descriptor ptlrun passes down, and only a privileged launcher may set it.
ptlrun=$build/tools/ptlrun/ptlrun
hello=$build/tools/demo/ptl_hello
"$ptlrun" --jid 4321 -- "$hello" | grep -q "jid 4321)"
report $? "ptlrun --jid gives the launched program its job id"
setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$ptlrun" --jid 4321 -- "$hello" 2>&1 >/dev/null |
	grep -q "setting a job id needs CAP_NET_ADMIN"
report $? "ptlrun without CAP_NET_ADMIN is refused"

# Kernel clients pin ptl.ko too; the kernel API test unloads its own.
if grep -q '^ptl_kapi_test ' /proc/modules; then
	report 1 "no kernel client of ptl.ko is left loaded"
	rmmod ptl_kapi_test
else
	report 0 "no kernel client of ptl.ko is left loaded"
fi

# A process holding the device pins the module: rmmod must refuse.
exec 3<>/dev/portals
if rmmod ptl 2>/dev/null; then
	report 1 "rmmod is refused while /dev/portals is open"
	exec 3>&-
else
	report 0 "rmmod is refused while /dev/portals is open"
	exec 3>&-
	rmmod ptl
	report $? "rmmod succeeds once the device is closed"
fi
! test -e /dev/portals
report $? "/dev/portals is gone after rmmod"

exit $((failures > 0))
