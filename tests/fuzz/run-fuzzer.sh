#!/bin/sh
# Builds the Portals core with its libFuzzer target (clang, ASan, UBSan) into
# build/fuzz/ and runs it for a bounded time. Usage: run-fuzzer.sh [seconds]
# Exits non-zero on any crash, sanitizer report, PTL_WARN_ON or leak.
set -eu

seconds=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${FUZZ_OUT:-"$top/build/fuzz"}
cc=${CC_FUZZ:-clang-14}
cxx=${CXX_FUZZ:-clang++-14}
command -v "$cc" >/dev/null 2>&1 || cc=clang
command -v "$cxx" >/dev/null 2>&1 || cxx=clang++

mkdir -p "$out/obj" "$out/corpus"
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 -DPTL_WARN_ABORT -I$top/uapi -I$top/include -I$top/kmod/core"

for src in "$top"/kmod/core/*.c; do
	"$cc" -std=gnu11 -Wall -Wextra -Werror $flags -fsanitize=fuzzer-no-link \
		-c "$src" -o "$out/obj/$(basename "$src" .c).o"
done
"$cxx" -std=c++20 -Wall -Wextra -Werror $flags \
	"$here/fuzz_receive.cc" "$out"/obj/*.o -o "$out/fuzz_receive"

# Seeds: the committed ones plus fresh copies in the working corpus.
cp "$here"/corpus/* "$out/corpus/" 2>/dev/null || true

"$out/fuzz_receive" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$out/" "$out/corpus"
