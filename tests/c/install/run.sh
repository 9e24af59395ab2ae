#!/bin/sh
# Installs the build tree into a scratch prefix, then builds and runs a tiny C
# program against it twice: through find_package(hop) and through pkg-config.
# Also proves that `cmake --install --prefix P` writes nothing outside P: a
# first install goes to a staging root (DESTDIR), where anything outside
# DESTDIR/P shows up without touching the machine; only then the real one.
# With the Python package built, it must land in P/PYDIR and (when PYTHON is
# given: not for sanitized builds) import from there.
# usage: run.sh CMAKE BUILD_DIR WORK_DIR [CFLAGS [PYDIR [PYTHON]]]
set -eu
cmake=$1 build=$2 work=$3 cflags=${4:-} pydir=${5:-} python=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix

stage=$work/stage
DESTDIR=$stage "$cmake" --install "$build" --prefix "$prefix" >/dev/null
outside=$(find "$stage" ! -type d | grep -v "^$stage$prefix/" || true)
if [ -n "$outside" ]; then
    echo "FAIL: cmake --install --prefix $prefix writes outside the prefix:" >&2
    echo "$outside" | sed "s|^$stage||" >&2
    exit 1
fi
rm -rf "$stage"

"$cmake" --install "$build" --prefix "$prefix" >/dev/null
if [ -n "$pydir" ]; then
    for f in __init__.py _trace.py; do
        if [ ! -f "$prefix/$pydir/hop/$f" ]; then
            echo "FAIL: the Python package is not in $prefix/$pydir/hop ($f missing)" >&2
            exit 1
        fi
    done
    if ! ls "$prefix/$pydir/hop"/_C*.so >/dev/null 2>&1; then
        echo "FAIL: the extension hop._C is not in $prefix/$pydir/hop" >&2
        exit 1
    fi
    if [ -n "$python" ]; then
        got=$(cd / && PYTHONPATH="$prefix/$pydir" "$python" -c 'import hop; print(hop.__file__)')
        if [ "$got" != "$prefix/$pydir/hop/__init__.py" ]; then
            echo "FAIL: PYTHONPATH=$prefix/$pydir imports hop from $got" >&2
            exit 1
        fi
    fi
fi

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
echo "install test: nothing outside the prefix; find_package(hop) shared+static and pkg-config all build and run"
