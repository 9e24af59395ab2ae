#!/bin/sh
# Installs the build tree into a scratch prefix, then builds and runs a tiny C
# program against it twice: through find_package(hop) and through pkg-config.
# usage: run.sh CMAKE BUILD_DIR WORK_DIR [CFLAGS]
set -eu
cmake=$1 build=$2 work=$3 cflags=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" >/dev/null

# CMake package, shared and static.
for lib in hop hop_static; do
    "$cmake" -S "$here" -B "$work/cmake-$lib" -DCMAKE_PREFIX_PATH="$prefix" -DHOP_LIB=$lib \
        -DCMAKE_C_FLAGS="$cflags" >/dev/null
    "$cmake" --build "$work/cmake-$lib" >/dev/null
    LD_LIBRARY_PATH="$prefix/lib:${LD_LIBRARY_PATH:-}" "$work/cmake-$lib/hello_hop" >"$work/out-$lib.txt"
done

# pkg-config, shared.
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -n 1)
PKG_CONFIG_PATH=$libdir cc -std=c11 $cflags -o "$work/hello_pc" "$here/hello_hop.c" \
    $(PKG_CONFIG_PATH=$libdir pkg-config --cflags --libs hop)
LD_LIBRARY_PATH="$(dirname "$libdir"):${LD_LIBRARY_PATH:-}" "$work/hello_pc" >"$work/out-pc.txt"

for f in "$work"/out-*.txt; do
    for expected in 'def forward(x: "f32[3]"):' 'exp(x) = 1.0000 2.7183 7.3891; m @ m = 7 10 15 22'; do
        if ! grep -qF "$expected" "$f"; then
            echo "FAIL: $f does not contain: $expected" >&2
            cat "$f" >&2
            exit 1
        fi
    done
done
echo "install test: find_package(hop) shared+static and pkg-config all build and run"
