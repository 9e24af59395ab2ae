#!/bin/sh
# scripts/dev.sh - the README's commands: install what is missing, build, run.
#   sh scripts/dev.sh showcase   build, install the Python package, run `python3 -m hop demo`
#                                and the C showcase
#   sh scripts/dev.sh test       build from scratch and run every test (C via ctest, Python
#                                via pytest)
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
    cmake -S . -B "$dir" -DPython3_EXECUTABLE=$PYTHON -DHOP_BUILD_PYTHON=ON -DHOP_WERROR=ON \
        "$@" >/dev/null
    cmake --build "$dir" -j "$JOBS" >/dev/null
}

# Installs the package into the interpreter's site-packages, so that
# `/usr/bin/python3 -c "import hop"` works from any directory.
install_python() { # dir
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo cmake --install "$1" --component python >/dev/null
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
*)
    echo "usage: sh scripts/dev.sh showcase|test" >&2
    exit 2
    ;;
esac
