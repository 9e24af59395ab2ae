#!/bin/sh
# scripts/dev.sh - the README's commands: install what is missing, build, run.
#   sh scripts/dev.sh showcase   build and run the showcase
#   sh scripts/dev.sh test       build from scratch and run every test (C via ctest, Python via pytest)
# Works on a fresh Debian bookworm machine as root (or with sudo available).
set -eu
cd "$(dirname "$0")/.."

PACKAGES="gcc make cmake pkg-config uthash-dev libffi-dev libcmocka-dev python3-dev python3-pytest
python3-numpy python3-hypothesis libopenblas-dev libsleef-dev"
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
    cmake -S . -B "$dir" -DPython3_EXECUTABLE=$PYTHON -DHOP_WERROR=ON "$@" >/dev/null
    cmake --build "$dir" -j "$JOBS" >/dev/null
}

case "${1:-}" in
showcase)
    install_missing
    configure_and_build build/release -DCMAKE_BUILD_TYPE=Release -DHOP_BUILD_TESTS=OFF
    ./build/release/examples/showcase
    ;;
test)
    install_missing
    rm -rf build/test
    configure_and_build build/test
    (cd build/test && ctest --output-on-failure -j "$JOBS")
    if ls tests/python/test_*.py >/dev/null 2>&1; then
        PYTHONPATH="$PWD/build/test/python${PYTHONPATH:+:$PYTHONPATH}" $PYTHON -m pytest -q tests/python
    fi
    ;;
*)
    echo "usage: sh scripts/dev.sh showcase|test" >&2
    exit 2
    ;;
esac
