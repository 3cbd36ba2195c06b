#!/bin/sh
# Fails if libptl-user exports anything but the Portals API, or misses a
# function of it (the 29 calls of the 3.3 API, the string helpers, the debug
# and runtime calls: the list Open MPI's configure probe expects).
set -eu
lib="$1"
syms=$(nm -D --defined-only "$lib")
extra=$(echo "$syms" | awk '{print $3}' |
	grep -v -E '^(Ptl[A-Za-z]+|ptl_err_str|p3_out)(@@?PTL_3\.3)?$' |
	grep -v -E '^PTL_3\.3$' || true)
if [ -n "$extra" ]; then
	echo "unexpected exported symbols:" >&2
	echo "$extra" >&2
	exit 1
fi
api="PtlInit PtlFini PtlNIInit PtlNIFini PtlNIStatus PtlNIDist PtlNIHandle
PtlGetUid PtlGetId PtlGetJid PtlMEAttach PtlMEAttachAny PtlMEInsert PtlMEUnlink
PtlMDAttach PtlMDBind PtlMDUnlink PtlMDUpdate PtlEQAlloc PtlEQFree PtlEQGet
PtlEQWait PtlEQPoll PtlACEntry PtlPut PtlPutRegion PtlGet PtlGetRegion PtlGetPut
PtlMEDump PtlNIEqDump PtlTblDump PtlNIDebug PtlErrorStr PtlEventKindStr
PtlNIFailStr PtlGetNIDMap PtlGetPIDMap PtlGetRank PtlGetRankId PtlSetJID
PtlSetNIDMap PtlSetPIDMap PtlSetRank"
missing=
for f in $api; do
	echo "$syms" | grep -q -E " T $f(@@PTL_3\.3)?\$" || missing="$missing $f"
done
if [ -n "$missing" ]; then
	echo "API functions not exported:$missing" >&2
	exit 1
fi
echo "$syms" | grep -q -E ' [DR] ptl_err_str(@@PTL_3\.3)?$' ||
	{ echo "ptl_err_str not exported" >&2; exit 1; }
echo "$syms" | grep -q -E ' [BD] p3_out(@@PTL_3\.3)?$' ||
	{ echo "p3_out not exported" >&2; exit 1; }
count=$(echo "$syms" | grep -c ' T Ptl' || true)
[ "$count" -ge 44 ] || { echo "only $count API functions exported" >&2; exit 1; }
echo "exports ok: $count API functions"
