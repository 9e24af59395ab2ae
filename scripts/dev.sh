#!/bin/sh
# scripts/dev.sh - the README's commands: install what is missing, build, run.
#   sh scripts/dev.sh showcase   build, install the Python package (under /usr/local, see
#                                install_python), run `python3 -m hop demo` and the C showcase
#   sh scripts/dev.sh test       build from scratch, install the Python package (as showcase)
#                                and run every test (C via ctest, Python via pytest)
#   sh scripts/dev.sh bench      Release build in build/bench, the C microbenchmarks, then
#                                bench/run.py: hop next to NumPy and PyTorch (installs
#                                python3-torch; no other command does)
#   sh scripts/dev.sh sanitize   ASan + UBSan build in build/asan: ctest, then pytest with
#                                libasan preloaded; leaks checked (.ci/lsan.supp)
#   sh scripts/dev.sh valgrind   valgrind memcheck over every C test and example (a normal
#                                -O2 -g build in build/valgrind)
# Works on a fresh Debian bookworm machine as root (or with sudo available).
set -eu
cd "$(dirname "$0")/.."

PACKAGES="gcc make cmake pkg-config uthash-dev libffi-dev libcmocka-dev python3-dev python3-pytest
python3-numpy python3-hypothesis libopenblas-dev libopenblas-pthread-dev libsleef-dev python3-venv python3-pip
python3-setuptools python3-wheel python3-build python3-distributed graphviz python3-threadpoolctl"
PYTHON=/usr/bin/python3
JOBS=$(nproc 2>/dev/null || echo 2)

install_missing() {
    missing=""
    for p in $PACKAGES; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing="$missing $p"
        fi
    done
    [ -z "$missing" ] && return 0
    echo "dev.sh: installing$missing"
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
}

configure_and_build() { # dir, extra cmake args...
    dir=$1
    shift
    cmake -S . -B "$dir" -DPython3_EXECUTABLE=$PYTHON -DHOP_BUILD_PYTHON=ON -DHOP_WERROR=ON \
        "$@" >/dev/null
    cmake --build "$dir" -j "$JOBS" >/dev/null
}

# Installs the Python package under the prefix /usr/local, whose
# lib/python3.X/dist-packages is on Debian python3's sys.path (ahead of
# /usr/lib/python3/dist-packages), so that `/usr/bin/python3 -c "import hop"`
# works from any directory; then checks that it does.  Only showcase, test and
# bench install (non-sanitized builds); sanitize and valgrind never do, and no
# test writes outside its build directory.
PY_PREFIX=/usr/local
install_python() { # dir
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo cmake --install "$1" --component python --prefix "$PY_PREFIX" >/dev/null
    pydir=$(sed -n 's/^HOP_PYTHON_INSTALL_DIR:[A-Z]*=//p' "$1/CMakeCache.txt")
    got=$(cd / && $PYTHON -c 'import hop; print(hop.__file__)')
    if [ "$got" != "$PY_PREFIX/$pydir/hop/__init__.py" ]; then
        echo "dev.sh: installed hop into $PY_PREFIX/$pydir but $PYTHON imports $got" >&2
        exit 1
    fi
}

case "${1:-}" in
showcase)
    install_missing
    configure_and_build build/release -DCMAKE_BUILD_TYPE=Release -DHOP_BUILD_TESTS=OFF
    install_python build/release
    (cd / && $PYTHON -m hop demo)
    echo
    echo "# The same kind of program built through the C API"
    echo
    ./build/release/examples/showcase
    ;;
test)
    install_missing
    rm -rf build/test
    configure_and_build build/test
    install_python build/test
    (cd build/test && ctest --output-on-failure -j "$JOBS")
    HOP_PYTHONPATH="$PWD/build/test/python" $PYTHON -m pytest -q -p no:cacheprovider tests/python
    ;;
bench)
    PACKAGES="$PACKAGES python3-torch"
    install_missing
    configure_and_build build/bench -DCMAKE_BUILD_TYPE=Release -DHOP_BUILD_TESTS=OFF
    install_python build/bench
    for b in bench_lift bench_kernels bench_plan bench_memory; do
        echo "# $b"
        ./build/bench/bench/$b
        echo
    done
    $PYTHON bench/run.py --build build/bench --json build/bench/bench.json
    echo "figures and machine: build/bench/bench.json"
    ;;
sanitize)
    # Every C test and the Python tests under AddressSanitizer (leaks included)
    # and UndefinedBehaviorSanitizer; HOP_SANITIZE builds with
    # -fno-sanitize-recover, so any report fails its test.  docs/RELIABILITY.md.
    install_missing
    dir=${HOP_ASAN_DIR:-build/asan}
    rm -rf "$dir"
    configure_and_build "$dir" -DHOP_SANITIZE=ON
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    (cd "$dir" && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$JOBS")
    # The extension is sanitized, the interpreter is not: preload the runtime.
    # malloc_context_size=2 keeps only the allocation site, so .ci/lsan.supp
    # (CPython, NumPy, OpenBLAS by module) cannot hide a leak hop allocated.
    LD_PRELOAD="$(gcc -print-file-name=libasan.so)" PYTHONMALLOC=malloc \
        ASAN_OPTIONS=detect_leaks=1:malloc_context_size=2 \
        LSAN_OPTIONS="suppressions=$PWD/.ci/lsan.supp:print_suppressions=0" \
        HOP_PYTHONPATH="$PWD/$dir/python" $PYTHON -m pytest -q -p no:cacheprovider tests/python
    ;;
valgrind)
    PACKAGES="$PACKAGES valgrind"
    install_missing
    dir=${HOP_VALGRIND_DIR:-build/valgrind}
    rm -rf "$dir"
    configure_and_build "$dir" -DHOP_BUILD_PYTHON=OFF
    failed=""
    for t in "$dir"/tests/c/test_* "$dir"/examples/*; do
        [ -f "$t" ] && [ -x "$t" ] || continue
        case "$t" in *.so) continue ;; esac # libraries of HOPs: the tests load them
        if HOP_TEST_SCALE=10 valgrind -q --fair-sched=yes --error-exitcode=1 --leak-check=full \
            --errors-for-leak-kinds=definite,indirect "$t" >"$t.valgrind.log" 2>&1; then
            echo "valgrind: $t clean"
        else
            tail -n 60 "$t.valgrind.log"
            failed="$failed $t"
        fi
    done
    if [ -n "$failed" ]; then
        echo "valgrind: reports in$failed" >&2
        exit 1
    fi
    ;;
*)
    echo "usage: sh scripts/dev.sh showcase|test|bench|sanitize|valgrind" >&2
    exit 2
    ;;
esac
