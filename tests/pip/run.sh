#!/bin/sh
# The pip install test (ctest test_pip_install): in a fresh venv made with
# `python3 -m venv --system-site-packages`, `pip install --no-build-isolation`
# of the source tree builds hop offline (pyproject.toml + setup.py run CMake)
# and the venv imports and runs it; `python3 -m build --wheel --no-isolation`
# makes a wheel with the extension, py.typed and the stubs.  Everything goes
# under WORK (the venv, setuptools' and CMake's trees, pip's temporary files,
# the wheel); the source tree must not change outside its ignored build*/
# directories, which the test checks.
# usage: run.sh PYTHON SOURCE_DIR WORK_DIR
set -eu
python=$1 src=$(cd "$2" && pwd) work=$3
rm -rf "$work"
mkdir -p "$work/tmp" "$work/cache"
work=$(cd "$work" && pwd)
marker=$work/started
touch "$marker"
sleep 1 # mtimes have a resolution of a second on some file systems

# Offline and self-contained: no index, no cache, temporary files under WORK.
export TMPDIR="$work/tmp" XDG_CACHE_HOME="$work/cache" PIP_NO_CACHE_DIR=1 PIP_NO_INDEX=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 HOP_PIP_BUILD_DIR="$work/build"
unset PYTHONPATH HOP_PYTHONPATH || true

# --without-pip: the venv runs the system's pip (Debian's python3-pip, seen
# through --system-site-packages), which installs into the venv; ensurepip's
# own copy took 4 of the test's 33 s.
"$python" -m venv --system-site-packages --without-pip "$work/venv"
"$work/venv/bin/python" -m pip install -q --no-build-isolation "$src" >"$work/pip.log" 2>&1 || {
    tail -n 40 "$work/pip.log" >&2
    echo "FAIL: pip install --no-build-isolation $src" >&2
    exit 1
}
got=$(cd / && "$work/venv/bin/python" -c 'import hop; print(hop.__file__)')
case "$got" in
"$work/venv/"*) ;;
*)
    echo "FAIL: the venv imports hop from $got, not from the venv" >&2
    exit 1
    ;;
esac
(cd / && "$work/venv/bin/python" - <<'PY')
import inspect, os, hop
w = hop.randn(4, seed=1)
def f(x):
    return hop.cond(x.sum() > 0, lambda: hop.map(lambda r: r * w, x), lambda: x - 1)
x = hop.randn(3, 4, seed=2)
gm = hop.trace(f, x, dynamic=True)
assert (gm(x).numpy() == f(x).numpy()).all()
assert str(inspect.signature(hop.trace)).startswith("(fn")
assert os.path.exists(os.path.join(os.path.dirname(hop.__file__), "py.typed"))
PY

"$python" -m build --wheel --no-isolation --outdir "$work/dist" "$src" >"$work/build.log" 2>&1 || {
    tail -n 40 "$work/build.log" >&2
    echo "FAIL: python3 -m build --wheel --no-isolation" >&2
    exit 1
}
wheel=$(ls "$work"/dist/hop-*.whl)
for f in 'hop/_C\..*\.so' 'hop/__init__\.py' 'hop/py\.typed' 'hop/_C\.pyi'; do
    if ! "$python" -m zipfile -l "$wheel" | grep -q "^$f "; then
        echo "FAIL: the wheel $wheel has no $f" >&2
        exit 1
    fi
done

changed=$(find "$src" -newer "$marker" ! -type d ! -path "$src/build*" ! -path "$src/.git/*" \
    ! -path "$work/*" | head -n 20)
if [ -n "$changed" ]; then
    echo "FAIL: building wrote into the source tree:" >&2
    echo "$changed" >&2
    exit 1
fi
echo "pip install test: the venv builds, imports and runs hop; the wheel has the extension, py.typed and stubs; the source tree is unchanged"
