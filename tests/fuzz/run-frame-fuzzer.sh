#!/bin/sh
# Builds the RTS/CTS frame codec (rtscts/rtscts_frame.c, with the Portals
# header codec kmod/core/ptl_wire.c and the user-space CRC32C) with its
# libFuzzer target fuzz_frame.cc (clang, ASan, UBSan) into build/fuzz/frame/
# and runs it for a bounded time, like run-fuzzer.sh does for the core.
# Usage: run-frame-fuzzer.sh [seconds]
# Exits non-zero on any crash, sanitizer report or broken promise.
set -eu

seconds=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${FUZZ_OUT:-"$top/build/fuzz"}/frame
cc=${CC_FUZZ:-clang-14}
cxx=${CXX_FUZZ:-clang++-14}
command -v "$cc" >/dev/null 2>&1 || cc=clang
command -v "$cxx" >/dev/null 2>&1 || cxx=clang++

mkdir -p "$out/obj" "$out/corpus"
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 -DPTL_WARN_ABORT -I$top/uapi -I$top/include -I$top/kmod/core -I$top/rtscts -I$top/rtscts/user -I$top/tools/lib/include"

for src in "$top/rtscts/rtscts_frame.c" "$top/kmod/core/ptl_wire.c"; do
	"$cc" -std=gnu11 -Wall -Wextra -Werror $flags -fsanitize=fuzzer-no-link \
		-c "$src" -o "$out/obj/$(basename "$src" .c).o"
done
"$cxx" -std=c++20 -Wall -Wextra -Werror $flags -fsanitize=fuzzer-no-link \
	-c "$top/tools/lib/src/crc32c.cc" -o "$out/obj/crc32c.o"
"$cxx" -std=c++20 -Wall -Wextra -Werror $flags \
	"$here/fuzz_frame.cc" "$out"/obj/*.o -o "$out/fuzz_frame"

# Seeds: the committed ones (valid frames of every type, written by
# build/tests/rtscts/rtscts_make_corpus) plus the working corpus.
cp "$here"/corpus_frame/* "$out/corpus/" 2>/dev/null || true

"$out/fuzz_frame" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$out/" "$out/corpus"
