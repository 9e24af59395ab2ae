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
#                                binaries at a time (two lanes over one queue)
# pytest runs the tests marked `serial` alone, then the rest on every core (pytest-xdist)
# (tests/python/conftest.py); each step prints its wall time and CPU time (user + system).
# Under .ci/run (HOP_CI_EARLY_LANE=1) `test` starts one valgrind lane once build/test is
# built, at nice 19 in a process group of its own (start_early_lane): it runs valgrind on the
# cores the test and sanitize phases leave idle, stopped while test_scale and the serial tests run; `valgrind`
# raises it to normal priority and adds the other lane.  test_scale runs in a ctest of its own
# after the other C tests.
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
# A shell in the background sets MARKS_TAG, so that its marks are its own.
timed() {
    label=$1
    shift
    started=$(date +%s)
    cpu_mark "$CPU_MARKS/${MARKS_TAG:-}before"
    "$@"
    cpu_mark "$CPU_MARKS/${MARKS_TAG:-}after"
    echo "dev.sh: $label took $(($(date +%s) - started)) s ($(cat "$CPU_MARKS/${MARKS_TAG:-}after" \
        "$CPU_MARKS/${MARKS_TAG:-}before" | awk 'NR == 1 { a = $1 } NR == 2 { printf "%.1f", a - $1 }') CPU-s)" >&2
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
    # (with the early lane, if any, stopped: these tests time themselves)
    early_lane_signal build/test STOP
    # shellcheck disable=SC2046 # one argument per module
    timed "pytest of the serial tests" pytest_allow_none -m "serial ${2:-}" \
        $(grep -l "pytest.mark.serial" tests/python/test_*.py)
    early_lane_signal build/test CONT
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

# warm_bytecode DIR: Python's bytecode of the whole suite against DIR's build
# (pytest rewrites the test modules' asserts; build/pycache keeps it), made
# once by one collection, at nice 5 beside the C tests: each pytest process
# that found it missing compiled it again on its own (a collection of the
# suite took 20.8 CPU-s cold, 7.9 warm).  It was the early lane's first step,
# at nice 19, where it had not ended when the pytest workers started (70 s
# beside ctest's 43 s in a CI run).  The collection no longer imports torch
# and functorch (tests/python/transform_values.py's lazy_import): they are
# imported here, so that their bytecode is made once too, not by both
# workers at their first test that uses them.
warm_bytecode() {
    collect() {
        HOP_PYTHONPATH="$PWD/$1/python" nice -n 5 $PYTHON -m pytest -q -p no:cacheprovider \
            --collect-only tests/python >/dev/null 2>&1 || true
        nice -n 5 $PYTHON -c "import functorch" >/dev/null 2>&1 || true
    }
    MARKS_TAG=warm. timed "collection of the suite (bytecode)" collect "$1"
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

# Valgrind's runs are taken one at a time from two queues in DIR/valgrind.lanes
# (valgrind_queues): `late`, the binaries that assert a wall-clock bound
# (test_lowering's interrupt latency, 1 s under valgrind), run in the
# valgrind phase only; `any`, the others, the slowest first.  A lane
# (valgrind_lane) runs one binary at a time until its queues are empty.
valgrind_queues() { # dir
    q=$1/valgrind.lanes
    rm -rf "$q"
    mkdir -p "$q"
    rm -f "$1"/tests/c/*.valgrind.failed "$1"/examples/*.valgrind.failed
    echo "$1/tests/c/test_lowering" >"$q/late"
    # The slowest under valgrind first (test_lowering, the late queue, is
    # the valgrind phase's own first), so that none ends the run alone; then
    # every other binary, each once (awk drops the repeats).
    {
        for t in test_runtime test_parallel_map test_rebase test_autodiff_ops test_runtime_ops \
            test_scale test_numpy_ops; do
            echo "$1/tests/c/$t"
        done
        for t in "$1"/tests/c/test_* "$1"/examples/*; do
            [ -f "$t" ] && [ -x "$t" ] || continue
            # (HOP libraries, which the tests load; logs; the late queue's)
            case "$t" in *.so | *.log | *.failed | */tests/c/test_lowering) continue ;; esac
            echo "$t"
        done
    } | awk '!seen[$0]++' >"$q/any"
    cat "$q/late" "$q/any" >"$q/all"
}

# valgrind_lane DIR QUEUE...: memcheck over the binaries taken from the
# queues, in order, one at a time, until all are empty; a binary with a
# report gets <binary>.valgrind.failed beside it.
valgrind_lane() {
    q=$1/valgrind.lanes
    shift
    for queue in "$@"; do
        # shellcheck disable=SC2016 # $1 is the inner shell's
        while t=$(flock "$q/lock" sh -c '[ -s "$1" ] && head -n 1 "$1" && sed -i 1d "$1"' \
            take "$q/$queue"); do
            s=$(date +%s)
            if HOP_TEST_SCALE=10 valgrind -q --fair-sched=yes --error-exitcode=1 --leak-check=full \
                --errors-for-leak-kinds=definite,indirect "$t" >"$t.valgrind.log" 2>&1; then
                echo "valgrind: $t clean ($(($(date +%s) - s)) s)"
                echo "$t" >>"$q/clean"
            else
                tail -n 60 "$t.valgrind.log"
                touch "$t.valgrind.failed"
            fi
        done
    done
}

# valgrind_lanes DIR N: N lanes over the late queue, then the other; then
# waits for the early lane, if one was started (its lock, early_lane_running),
# and prints what it printed; fails if a binary of the queues was neither
# found clean nor failed.
valgrind_lanes() {
    q=$1/valgrind.lanes
    i=0
    while [ "$i" -lt "$2" ]; do
        valgrind_lane "$1" late any &
        i=$((i + 1))
    done
    wait
    if [ -s "$q/early.pid" ]; then
        flock "$q/early.lock" true
        cat "$q/early.log"
        rm -f "$q/early.pid"
    fi
    while read -r t; do
        grep -qx "$t" "$q/clean" 2>/dev/null || [ -f "$t.valgrind.failed" ] || {
            echo "valgrind: $t did not run to its end" >&2
            touch "$t.valgrind.failed"
        }
    done <"$q/all"
}

# The early lane (.ci/run sets HOP_CI_EARLY_LANE=1): started by the test
# phase once build/test is built, at the lowest priority (nice 19), in a
# process group of its own: it runs the `any` queue under valgrind on
# whatever core the CI's own steps leave idle
# (the pip test's single core in ctest, the serial runs' tails, the pytest
# workers' ends, the sanitizer tree's configure, link and ctest tails), and
# gets the CPU it needs only when the valgrind phase raises it to normal
# priority.  The steps that time themselves (test_scale in ctest, the tests
# marked serial in both passes) run with it stopped (SIGSTOP to its process
# group).  .ci/run kills it if a phase fails.
# A process group of its own in CI's session, not a session of its own
# (setsid): with the kernel's autogroups (sched_autogroup_enabled, Debian's
# default), a new session is a scheduling group the kernel weighs as an equal
# of CI's, so nice 19 inside it yielded nothing: the lane took a third of the
# CPU from the pytest workers on a loaded machine.
# Its whole life is one lock, DIR/valgrind.lanes/early.lock, taken before its
# group's id is written to early.pid and held by every process of the group
# (an inherited descriptor): the lane runs while the lock is held, and the
# valgrind phase waits for its end by taking the lock (flock releases it when
# the last process holding it exits, reaped or not).
start_early_lane() { # dir
    valgrind_queues "$1"
    $PYTHON -c 'import fcntl, os, sys
os.setpgid(0, 0)
lock = os.open(sys.argv[1] + "/early.lock", os.O_WRONLY | os.O_CREAT, 0o644)
fcntl.flock(lock, fcntl.LOCK_EX)
os.set_inheritable(lock, True)
with open(sys.argv[1] + "/early.pid", "w") as f:
    f.write("%d\n" % os.getpid())
os.execvp("nice", ["nice", "-n", "19", "sh", "scripts/dev.sh", "early-lane", sys.argv[2]])' \
        "$1/valgrind.lanes" "$1" >"$1/valgrind.lanes/early.log" 2>&1 &
    while [ ! -s "$1/valgrind.lanes/early.pid" ]; do sleep 0.1; done
}

# early_lane_group DIR: prints the early lane's process group and succeeds,
# if one was started for DIR and not yet waited for.
early_lane_group() {
    [ -s "$1/valgrind.lanes/early.pid" ] && cat "$1/valgrind.lanes/early.pid"
}

# early_lane_running DIR: succeeds while the early lane started for DIR runs
# (holds its lock).
early_lane_running() {
    [ -s "$1/valgrind.lanes/early.pid" ] && ! flock -n "$1/valgrind.lanes/early.lock" true
}

# early_lane_signal DIR STOP|CONT: stops or continues the early lane, if any.
early_lane_signal() {
    if g=$(early_lane_group "$1"); then
        kill -s "$2" -- "-$g" 2>/dev/null || true
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
    [ "${HOP_CI_EARLY_LANE:-0}" = 1 ] && PACKAGES="$PACKAGES valgrind"
    install_missing
    rm -rf build/test
    configure_and_build build/test
    install_python build/test
    [ "${HOP_CI_EARLY_LANE:-0}" = 1 ] && start_early_lane build/test
    # The suite's bytecode (warm_bytecode) beside the C tests, done before
    # anything times itself or pytest starts
    warm_bytecode build/test &
    warming=$!
    # test_scale (RUN_SERIAL) times itself: after the rest, with the early
    # lane stopped
    (cd build/test && timed ctest ctest --output-on-failure -j "$JOBS" -E '^test_scale$')
    wait "$warming"
    early_lane_signal build/test STOP
    (cd build/test && timed "ctest of test_scale" ctest --output-on-failure -R '^test_scale$')
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
    # build, -O2 -g; built here if it is missing), $JOBS binaries at a time
    # (valgrind_lanes), the slowest first.  Under .ci/run one lane started in
    # the test phase (start_early_lane): it is given normal priority here and
    # $JOBS - 1 lanes join it.
    PACKAGES="$PACKAGES valgrind"
    install_missing
    dir=${HOP_VALGRIND_DIR:-build/test}
    [ -f "$dir/CMakeCache.txt" ] || configure_and_build "$dir"
    lanes=$JOBS
    if early=$(early_lane_group "$dir"); then
        # (its queues are the ones it takes from; it may have ended already,
        # having run all it could take)
        if early_lane_running "$dir"; then
            renice -n 0 -g "$early" >/dev/null 2>&1 || true # root only; else it stays at 19
            early_lane_signal "$dir" CONT
            lanes=$((JOBS > 1 ? JOBS - 1 : 1)) # (one at least: the late queue is the phase's)
        fi
    else
        valgrind_queues "$dir"
    fi
    timed valgrind valgrind_lanes "$dir" "$lanes"
    failed=$(cd "$dir" && ls tests/c/*.valgrind.failed examples/*.valgrind.failed 2>/dev/null |
        sed 's/.valgrind.failed$//' | tr '\n' ' ')
    if [ -n "$failed" ]; then
        echo "valgrind: reports in $failed(logs: <binary>.valgrind.log under $dir)" >&2
        exit 1
    fi
    ;;
early-lane) # internal: start_early_lane's process
    timed "early lane: valgrind" valgrind_lane "$2" any
    ;;
*)
    echo "usage: sh scripts/dev.sh showcase|test|bench|sanitize|valgrind" >&2
    exit 2
    ;;
esac
