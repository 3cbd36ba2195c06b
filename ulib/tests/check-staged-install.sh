#!/bin/sh
# A staged install (cmake --install BUILD --prefix DIR, as packagers and
# users without root do) must give a pkg-config file that points into DIR,
# not at the configured prefix, and a program must build and link with it.
set -eu
build="$1"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$build" --prefix "$stage/usr" >/dev/null
pc=$(find "$stage" -name ptl-user.pc)
[ -n "$pc" ] || { echo "no ptl-user.pc installed" >&2; exit 1; }
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
cflags=$(pkg-config --cflags ptl-user)
libs=$(pkg-config --libs ptl-user)
case "$cflags $libs" in
*"$stage/usr/"*) ;;
*) echo "pkg-config does not point into the stage: $cflags $libs" >&2; exit 1 ;;
esac
cat >"$stage/app.c" <<'C'
#include <portals3.h>
#include <p3nal_linux.h>
#include <p3utils.h>
int main(void)
{
	int max;
	p3_print("%d\n", PTL_IFACE_DEFAULT != 0);
	return PtlInit(&max) == PTL_OK ? 0 : 1;
}
C
# shellcheck disable=SC2086
cc -o "$stage/app" "$stage/app.c" $cflags $libs
echo "staged install ok: $cflags $libs"
