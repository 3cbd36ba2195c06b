#!/bin/sh
# Fails if libptl-user exports anything but the Portals API.
set -eu
lib="$1"
extra=$(nm -D --defined-only "$lib" | awk '{print $3}' |
	grep -v -E '^(Ptl[A-Za-z]+|ptl_err_str)(@@?PTL_3\.3)?$' |
	grep -v -E '^PTL_3\.3$' || true)
if [ -n "$extra" ]; then
	echo "unexpected exported symbols:" >&2
	echo "$extra" >&2
	exit 1
fi
count=$(nm -D --defined-only "$lib" | grep -c ' T Ptl' || true)
[ "$count" -ge 7 ] || { echo "only $count API functions exported" >&2; exit 1; }
echo "exports ok: $count API functions"
