#!/bin/sh
# scripts/dev.sh - the README's commands: install what is missing, build, run.
#   sh scripts/dev.sh showcase   build, install the Python package (under /usr/local, see
#                                install_python), run `python3 -m hop demo` and the C showcase
#   sh scripts/dev.sh test       build from scratch, install the Python package (as showcase)
#                                and run every test (C via ctest, Python via pytest)
#   sh scripts/dev.sh bench      Release build in build/bench, the C microbenchmarks, then
#                                bench/run.py: hop next to NumPy and PyTorch
#   sh scripts/dev.sh sanitize   ASan + UBSan build in build/asan: ctest, then pytest with
#                                libasan preloaded, fewer hypothesis examples and a share of
#                                many parametrized cases (tests/python/budget.py; the run's
#                                HOP_TEST_SEED draws them again); leaks checked (.ci/lsan.supp);
#                                built without ccache (nothing reuses its objects)
#   sh scripts/dev.sh valgrind   valgrind memcheck over every C test and example of the
#                                -O2 -g build in build/test (built first if missing), two
#                                binaries at a time
# pytest runs the tests marked `serial` alone, then the rest on every core (pytest-xdist)
# (tests/python/conftest.py); each step prints its wall time and CPU time (user + system).
# Works on a fresh Debian bookworm machine as root (or with sudo available).
set -eu
cd "$(dirname "$0")/.."

PACKAGES="gcc make cmake pkg-config uthash-dev libffi-dev libcmocka-dev python3-dev python3-pytest
python3-numpy python3-hypothesis libopenblas-dev libopenblas-pthread-dev libsleef-dev
python3-venv python3-pip python3-setuptools python3-wheel python3-build python3-distributed graphviz
python3-pytest-xdist python3-torch python3-threadpoolctl ccache liblapacke-dev libfftw3-dev"
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

# cpu_mark FILE: writes the CPU time (user + system) of the processes this
# shell has waited for so far to FILE, in seconds: the second line of the
# shell's `times` (run in this shell: in a pipeline or a command substitution
# it would report a subshell's children).
cpu_mark() {
    times >"$1.times"
    awk 'NR == 2 {
        n = 0
        for (i = 1; i <= 2; i++) { split($i, t, "m"); n += t[1] * 60 + t[2] }
        printf "%.1f\n", n
    }' "$1.times" >"$1"
}
CPU_MARKS=$(mktemp -d)
trap 'rm -rf "$CPU_MARKS"' EXIT

# timed LABEL COMMAND...: runs the command and prints how long it took, in
# wall time and in CPU time (user + system, of every process it waited for).
timed() {
    label=$1
    shift
    started=$(date +%s)
    cpu_mark "$CPU_MARKS/before"
    "$@"
    cpu_mark "$CPU_MARKS/after"
    echo "dev.sh: $label took $(($(date +%s) - started)) s ($(cat "$CPU_MARKS/after" \
        "$CPU_MARKS/before" | awk 'NR == 1 { a = $1 } NR == 2 { printf "%.1f", a - $1 }') CPU-s)" >&2
}

# Compiles go through ccache, its cache inside the build tree (build/ccache):
# a tree rebuilt from scratch, and the pip test's build of the same sources
# with the same flags (tests/c/CMakeLists.txt), reuse the objects.  The cache
# is keyed by the compile command, not the directory it runs in.
export CCACHE_DIR="$PWD/build/ccache" CCACHE_NOHASHDIR=1

# gold_flags: CMake arguments that link every target with GNU gold, if the
# compiler links a program with it (binutils' ld.gold); else nothing.
gold_flags() {
    if echo 'int main(void) { return 0; }' |
        gcc -x c -fuse-ld=gold -o /dev/null - >/dev/null 2>&1; then
        for kind in EXE SHARED MODULE; do
            printf ' %s' "-DCMAKE_${kind}_LINKER_FLAGS=-fuse-ld=gold"
        done
    fi
}

# Every tree links with GNU gold where the compiler can use it (gold_flags):
# the test tree's 47 links (each C test links every layer with its debug info
# and the static OpenBLAS) took 117 CPU-s with ld.bfd and 47 with gold, on
# the 2-core EPYC where its whole build took 152 s.
# USE_CCACHE=0 builds the tree without ccache: the sanitizer tree's objects
# are made once per run and never reused (the cache serves the test tree's
# rebuilds and the pip test), and a miss costs more than a plain compile: it
# preprocesses, hashes, compresses and stores every object (14 sampled ASan
# compiles, 2-core EPYC under load, three pairs: 10.4-11.3 CPU-s plain,
# 11.9-13.1 through an empty cache).
configure_and_build() { # dir, extra cmake args...
    dir=$1
    shift
    launcher=""
    if [ "${USE_CCACHE:-1}" = 1 ] && command -v ccache >/dev/null; then
        launcher=-DCMAKE_C_COMPILER_LAUNCHER=ccache
    fi
    # shellcheck disable=SC2046 # gold_flags prints several arguments, or none
    cmake -S . -B "$dir" -DPython3_EXECUTABLE=$PYTHON -DHOP_BUILD_PYTHON=ON -DHOP_WERROR=ON \
        $launcher $(gold_flags) "$@" >/dev/null
    timed "build of $dir" cmake --build "$dir" -j "$JOBS" >/dev/null
}

# pytest_suite DIR [MARKERS]: the Python suite against DIR's build: the tests
# marked serial on their own first (they time themselves: before the parallel
# run, whose workers under ASan leave gigabytes for the system to take back,
# a Ctrl-C latency bound of 0.1 s missed twice right after it), then the rest
# on every core.  MARKERS (e.g. "and not fuzztool") narrows both runs.  The
# interpreter is $PYRUN (a command or a function; default $PYTHON).
pytest_suite() {
    export HOP_PYTHONPATH="$PWD/$1/python"
    # The serial run collects only the modules that mark tests serial
    # (conftest.py refuses a serial test marked some other way): collecting
    # the whole suite took ~17 s, ~30 s under ASan, for 10 tests.
    # shellcheck disable=SC2046 # one argument per module
    timed "pytest of the serial tests" pytest_allow_none -m "serial ${2:-}" \
        $(grep -l "pytest.mark.serial" tests/python/test_*.py)
    timed "pytest on $JOBS cores" ${PYRUN:-$PYTHON} -m pytest -q -p no:cacheprovider -n "$JOBS" \
        -m "not serial ${2:-}" tests/python
}

# Python keeps the bytecode of what the suite imports, the test modules as
# pytest rewrote their asserts included, under build/pycache rather than
# compiling it again in every pytest process (one serial run and one per
# worker, in each pass: rewriting the test modules' asserts was ~10 s of
# each process's ~17 s of collection); nothing is written next to a source.
export PYTHONPYCACHEPREFIX="$PWD/build/pycache"
unset PYTHONDONTWRITEBYTECODE

# pytest_allow_none ARGS...: pytest -q, where "no test was selected" (exit 5)
# is not a failure.
pytest_allow_none() {
    ${PYRUN:-$PYTHON} -m pytest -q -p no:cacheprovider "$@" || [ $? -eq 5 ]
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

# sanitized_python ARGS...: Debian's python3 with ASan's runtime preloaded,
# for the sanitizer pass's pytest (see sanitize).  CPython's objects stay on
# pymalloc (PYTHONMALLOC=malloc made the pass twice as slow: most of its time
# is CPython, and every object went through ASan's allocator), its arenas
# taken from malloc (the preloaded hop_pymalloc_arenas) so that LeakSanitizer
# sees what live objects hold; hop's blocks come from malloc and are checked.
# A 16 MB quarantine of freed blocks, not ASan's 256 MB: each worker frees
# gigabytes, and the large one kept its heap's pages faulting in (the pass
# 138 -> 117 s; docs/RELIABILITY.md says what the shorter window costs).
sanitized_python() {
    LD_PRELOAD="$(gcc -print-file-name=libasan.so) $SANITIZE_DIR/python/libhop_pymalloc_arenas.so" \
        ASAN_OPTIONS=detect_leaks=1:malloc_context_size=2:quarantine_size_mb=16 \
        LSAN_OPTIONS="suppressions=$PWD/.ci/lsan.supp:print_suppressions=0" \
        HOP_TEST_BUDGET=sanitize $PYTHON "$@"
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
    (cd build/test && timed ctest ctest --output-on-failure -j "$JOBS")
    pytest_suite build/test
    ;;
bench)
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
    # Only what this phase runs: no C microbenchmarks (HOP_BUILD_BENCH=OFF).
    # (Linked by gold, as every tree: each of the ~40 links of ASan objects
    # with -g took 1.4 s of CPU with ld.bfd, 0.6 s with gold.)
    # Without ccache (configure_and_build): nothing reuses the ASan objects.
    USE_CCACHE=0 configure_and_build "$dir" -DHOP_SANITIZE=ON -DHOP_BUILD_BENCH=OFF
    SANITIZE_DIR=$(cd "$dir" && pwd) # for sanitized_python
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    (cd "$dir" && export ASAN_OPTIONS=detect_leaks=1 && timed ctest ctest --output-on-failure \
        -j "$JOBS")
    # The extension is sanitized, the interpreter is not: preload the runtime.
    # malloc_context_size=2 keeps only the allocation site, so .ci/lsan.supp
    # (CPython, NumPy, OpenBLAS by module) cannot hide a leak hop allocated.
    # HOP_TEST_BUDGET=sanitize: each hypothesis test runs a share of its
    # examples, and each test function with many parametrized cases a share of
    # them (tests/python/budget.py); the tests of the fuzz tool itself ran in
    # the plain pass.
    PYRUN=sanitized_python pytest_suite "$dir" "and not fuzztool"
    ;;
valgrind)
    # Memcheck over the C tests and examples of build/test (the README's test
    # build, -O2 -g; built here if it is missing), $JOBS binaries at a time,
    # the slowest first.
    PACKAGES="$PACKAGES valgrind"
    install_missing
    dir=${HOP_VALGRIND_DIR:-build/test}
    [ -f "$dir/CMakeCache.txt" ] || configure_and_build "$dir"
    rm -f "$dir"/tests/c/*.valgrind.failed "$dir"/examples/*.valgrind.failed
    # test_runtime, test_parallel_map, test_lowering and test_rebase take most
    # of the time under valgrind: started first, they do not end the run alone.
    for t in test_runtime test_parallel_map test_lowering test_rebase; do
        echo "$dir/tests/c/$t"
    done >"$dir/valgrind.list"
    for t in "$dir"/tests/c/test_* "$dir"/examples/*; do
        [ -f "$t" ] && [ -x "$t" ] || continue
        case "$t" in *.so | *.log | *.failed) continue ;; esac # HOP libraries: the tests load them
        grep -qx "$t" "$dir/valgrind.list" || echo "$t"
    done >>"$dir/valgrind.list"
    # shellcheck disable=SC2016 # $1 is the inner shell's
    timed valgrind xargs -P "$JOBS" -n 1 sh -c '
        s=$(date +%s)
        if HOP_TEST_SCALE=10 valgrind -q --fair-sched=yes --error-exitcode=1 --leak-check=full \
            --errors-for-leak-kinds=definite,indirect "$1" >"$1.valgrind.log" 2>&1; then
            echo "valgrind: $1 clean ($(($(date +%s) - s)) s)"
        else
            tail -n 60 "$1.valgrind.log"
            touch "$1.valgrind.failed"
        fi' valgrind-one <"$dir/valgrind.list"
    failed=$(cd "$dir" && ls tests/c/*.valgrind.failed examples/*.valgrind.failed 2>/dev/null |
        sed 's/.valgrind.failed$//' | tr '\n' ' ')
    if [ -n "$failed" ]; then
        echo "valgrind: reports in $failed(logs: <binary>.valgrind.log under $dir)" >&2
        exit 1
    fi
    ;;
*)
    echo "usage: sh scripts/dev.sh showcase|test|bench|sanitize|valgrind" >&2
    exit 2
    ;;
esac
