#!/bin/bash
# The demo's guest side: load the module, run a Portals program, unload.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-$top/build}

say() { printf '\n--- %s\n' "$*"; }

say "loading ptl.ko on this node (nid 7)"
insmod "$top/ptl.ko" nid=7
dmesg | grep -E 'ptl: ' | tail -2
ls -l /dev/portals

say "running ptl_hello, a minimal Portals 3.3 program"
"$build/tools/demo/ptl_hello"

say "unloading ptl.ko"
rmmod ptl
dmesg | grep -E 'ptl: ' | tail -1
echo "demo finished: module loaded, Portals calls answered, module unloaded"
