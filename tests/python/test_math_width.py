"""The math backend's vector width does not change a result (issue #30): the
SLEEF functions at AVX-512 width (picked at run time where the CPU has it)
give the bits of the AVX2 ones (HOP_MATH=avx2), eagerly and in a fused
compiled group, and the float arithmetic the fused tiles run at the widest
vectors (add, mul, relu, ...) gives the bits of the plain loops."""
import os
import subprocess
import sys

import numpy as np
import pytest

import hop
from hop import _numpy_math

UNARY = ["exp", "log", "sin", "cos", "tanh", "sigmoid", "sqrt", "sinh", "cosh", "arcsin",
         "arccos", "arcsinh", "arccosh", "arctanh", "cbrt"]
BINARY = ["pow", "arctan2", "hypot"]

CHILD = r"""
import sys
import numpy as np
import hop
UNARY, BINARY = sys.argv[1].split(","), sys.argv[2].split(",")
rng = np.random.default_rng(30)
out = []
for dt in (np.float32, np.float64):
    edge = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 88.0, -88.0, 89.0, 700.0, 710.0, 1e-30, 1e19,
                     1e20, 1e151, np.inf, -np.inf, np.nan], dtype=np.float64).astype(dt)
    # 1,003 elements: full vectors of 8 and 16 and a tail of either
    x = np.concatenate([edge, (rng.standard_normal(986) * 4).astype(dt)])
    y = np.roll(x, 7)
    hx, hy = hop.asarray(x), hop.asarray(y)
    for name in UNARY:
        out.append(getattr(hop, name)(hx).numpy().tobytes())
    for name in BINARY:
        out.append(getattr(hop, name)(hx, hy).numpy().tobytes())
    fused = hop.compile(lambda a, b: ((a * 2 + b).relu() - a / 3).exp().tanh())
    out.append(fused(hx, hy).numpy().tobytes())
sys.stdout.buffer.write(b"".join(out))
"""


def run_child(env_math):
    env = dict(os.environ)
    env.pop("HOP_MATH", None)
    # the child imports the hop under test (conftest's path), not an installed one
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    if env_math is not None:
        env["HOP_MATH"] = env_math
    r = subprocess.run([sys.executable, "-c", CHILD, ",".join(UNARY), ",".join(BINARY)],
                       env=env, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


@pytest.mark.skipif("avx512f" not in cpu_flags() or "avx2" not in cpu_flags(),
                    reason="needs a CPU with both AVX2 and AVX-512F")
def test_avx512_math_gives_the_bits_of_avx2():
    # (HOP_MATH=sleef: the widest SLEEF backend, none of NumPy's functions
    # adopted; those give NumPy's bits instead: test_numpy_math_adopt.py)
    wide, narrow = run_child("sleef"), run_child("avx2")
    assert len(wide) == len(narrow) > 0
    assert wide == narrow


def test_wide_float_arithmetic_matches_numpy_bits():
    # add/sub/mul/div/maximum/minimum/neg/abs/relu run as target clones; each
    # is one IEEE operation, so NumPy's results are the exact reference
    rng = np.random.default_rng(7)
    for dt in (np.float32, np.float64):
        x = np.concatenate([np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40], dtype=dt),
                            rng.standard_normal(1001).astype(dt)])
        y = np.roll(x, 3)
        hx, hy = hop.asarray(x), hop.asarray(y)
        with np.errstate(all="ignore"):
            want = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y,
                    "maximum": np.maximum(x, y), "minimum": np.minimum(x, y), "neg": -x,
                    "abs": np.abs(x),
                    "relu": np.where((x > 0) | np.isnan(x), x, np.zeros_like(x))}
        got = {"add": hx + hy, "sub": hx - hy, "mul": hx * hy, "div": hx / hy,
               "maximum": hop.maximum(hx, hy), "minimum": hop.minimum(hx, hy), "neg": -hx,
               "abs": abs(hx), "relu": hx.relu()}
        for k in want:
            g = got[k].numpy()
            assert g.dtype == dt, k
            assert g.tobytes() == want[k].astype(dt).tobytes(), (k, dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["sinh", "cosh", "arcsinh", "arccosh", "arcsin", "arccos",
                                  "arctanh", "cbrt"])
def test_an_elements_bits_do_not_depend_on_the_values_beside_it(name, dt):
    # a value far out of SLEEF's range (1e20, 1e300) in the same vector once
    # sent the whole vector to libm, so 0.5's bits changed with a neighbour
    xs = np.array([0.5, 1.5, 3.0, -0.75, 0.25, 2.0, 5.0, 7.0] * 2, dtype=dt)
    alone = getattr(hop, name)(hop.asarray(xs)).numpy()
    far = np.array(1e300 if dt == np.float64 else 1e20, dtype=dt)
    for k in range(len(xs)):
        mixed = xs.copy()
        mixed[k] = far
        with np.errstate(all="ignore"):
            got = getattr(hop, name)(hop.asarray(mixed)).numpy()
        keep = np.arange(len(xs)) != k
        assert got[keep].tobytes() == alone[keep].tobytes(), (name, k)


NAN_BITS = {np.float32: (np.uint32, 0xffc00000, 0x7fc00000),
            np.float64: (np.uint64, 0xfff8000000000000, 0x7ff8000000000000)}


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_nan_results_are_x86s_default_nan_or_the_nan_operand(dt):
    # SLEEF returned positive, all-ones or payload NaNs (and different ones
    # at each width); NumPy and libm give x86's: the default NaN (negative)
    # for a NaN made from numbers, a NaN operand itself
    u, default, positive = NAN_BITS[dt]
    made = {"log": [(-1.0,)], "sin": [(np.inf,)], "cos": [(-np.inf,)], "arcsin": [(2.0,)],
            "arccos": [(-3.0,)], "arccosh": [(0.5,)], "arctanh": [(1.5,)],
            "pow": [(-1.0, 0.5)]}
    for name, cases in made.items():
        for args in cases:
            with np.errstate(all="ignore"):
                r = getattr(hop, name)(*[hop.asarray(np.full(19, a, dt)) for a in args]).numpy()
            assert set(r.view(u).tolist()) == {default}, (name, args, hex(r.view(u)[0]))
    pos, neg = np.array(np.nan, dt), -np.array(np.nan, dt)
    tag = "f32" if dt == np.float32 else "f64"
    for name in ["exp", "log", "sin", "tanh", "sinh", "arcsinh", "cbrt", "sqrt"]:
        for v, want in ((pos, positive), (neg, default)):
            if ({"arcsinh": "asinh"}.get(name, name), tag) in _numpy_math.ADOPTED:
                # an adopted function answers NumPy's bits, NaNs included (the
                # adoption's probe has them): NumPy's own float32 exp, log and
                # cos loops and its tanh loop give the positive default NaN for
                # any NaN, SVML's functions x86's rule
                want = int(getattr(np, name)(np.full(19, v, dt)).view(u)[0])
            r = getattr(hop, name)(hop.asarray(np.full(19, v, dt))).numpy()
            assert set(r.view(u).tolist()) == {want}, (name, hex(want), hex(r.view(u)[0]))
    for name in ["pow", "arctan2", "hypot"]:
        r = getattr(hop, name)(hop.asarray(np.full(19, neg, dt)),
                               hop.asarray(np.full(19, 2.0, dt))).numpy()
        assert set(r.view(u).tolist()) == {default}, (name, hex(r.view(u)[0]))
        r = getattr(hop, name)(hop.asarray(np.full(19, 0.5, dt)),
                               hop.asarray(np.full(19, pos, dt))).numpy()
        assert set(r.view(u).tolist()) == {positive}, (name, hex(r.view(u)[0]))


BOUND_CHILD = r"""
import math, sys
import numpy as np
import hop
wide = np.concatenate([np.linspace(-20, 20, 1002), np.geomspace(1e-300, 1e300, 601)])
inputs = {"exp": np.concatenate([np.linspace(-745, 709, 1001), np.linspace(-1, 1, 1002)]),
          "log": np.concatenate([np.geomspace(1e-300, 1e300, 1001), np.linspace(0.5, 2, 1002)]),
          "sin": np.concatenate([np.linspace(-700, 700, 1001), wide, -wide]),
          "cos": np.concatenate([np.linspace(-700, 700, 1001), wide, -wide]),
          "tanh": np.concatenate([np.linspace(-40, 40, 1001), wide, -wide])}
out = {}
for name, xs in inputs.items():
    got = getattr(hop, name)(hop.asarray(xs)).numpy()
    ref = getattr(np, name)(xs.astype(np.longdouble))
    # the spacing of doubles at the reference (subnormals: 2^-1074)
    e = np.maximum(np.frexp(ref.astype(np.float64))[1] - 1, -1022) - 52
    ulps = np.abs(got.astype(np.longdouble) - ref) / np.ldexp(np.longdouble(1), e)
    libm = np.array([getattr(math, name)(v) for v in xs])
    out[name] = (float(np.max(ulps[np.isfinite(ref)])), bool(np.array_equal(got, libm)))
print(repr(out))
"""


def bounds_under(env_math):
    env = dict(os.environ)
    env.pop("HOP_MATH", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    if env_math is not None:
        env["HOP_MATH"] = env_math
    r = subprocess.run([sys.executable, "-c", BOUND_CHILD], env=env, capture_output=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    return eval(r.stdout.decode())


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs x87 long double")
@pytest.mark.parametrize("env_math", ["sleef", "avx2", "scalar"])
def test_every_math_backend_within_its_bound(env_math):
    # HOP_MATH forces each backend (CI runs them all, whatever the CPU;
    # "sleef" is the widest SLEEF one without NumPy's functions adopted, which
    # test_numpy_math_adopt.py checks for NumPy's bits instead):
    # the libm loops give libm's bits (Python's math module: the same libm),
    # SLEEF's u10 functions (AVX-512 by default where the CPU has it, AVX2)
    # are within their documented 1.0 ulp of a long double reference (whose
    # own error is under 2^-10 ulp)
    res = bounds_under(env_math)
    for name, (worst, is_libm) in res.items():
        if env_math == "scalar":
            assert is_libm, name
        else:
            assert worst <= 1.0 + 2.0 ** -10, (name, worst)
    if env_math != "scalar" and "avx2" in cpu_flags():
        # the SLEEF backends are not libm: the forced setting did change it
        assert not all(is_libm for _, is_libm in res.values())


TYPO_CHILD = r"""
import sys
try:
    import hop
except Exception as e:
    print(type(e).__name__, isinstance(e, ValueError), str(e))
    sys.exit(3)
print("imported")
"""


def import_under(env_math):
    env = dict(os.environ)
    env.pop("HOP_MATH", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env["HOP_MATH"] = env_math
    return subprocess.run([sys.executable, "-c", TYPO_CHILD], env=env, capture_output=True,
                          timeout=120)


@pytest.mark.parametrize("typo", ["avx512", "AVX2", "scalar ", "sse"])
def test_an_unknown_hop_math_fails_the_import(typo):
    # a typo used to run the widest backend silently: importing hop raises
    # (no crash: the child catches it) naming the variable, the value and
    # the valid values
    r = import_under(typo)
    assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)
    assert r.stdout.decode() == (
        'InvalidError True HOP_MATH="%s" is not a math backend: valid values are "avx2", '
        '"scalar", "sleef" (the widest SLEEF backend, with nothing adopted), or unset (or '
        'empty) for the widest the CPU runs\n' % typo)


def test_an_empty_hop_math_is_unset():
    r = import_under("")
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().startswith("imported")
