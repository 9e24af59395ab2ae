"""float32 exp, log, sin and cos are NumPy 1.24's bits and floating-point
flags (runtime/vmath_numpy.c: hop's copies of NumPy's own AVX2/AVX512F
loops, adopted at `import hop` where NumPy runs them; docs/ARCHITECTURE.md,
"Math functions with NumPy's bits").

A dense sweep of the float32 bit patterns (every 509th, and every pattern
near the loops' thresholds) compares bits eager, compiled, contiguous and
strided, and the flags per block; single special values (NaN payloads,
signalling NaNs, infinities, zeros, subnormals, the overflow and underflow
thresholds, huge sin/cos arguments) compare bits and every warning alone.
All 2^32 inputs were compared once (scripts/float32_math_sweep.py)."""

import os
import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from hop import _C, _numpy_math
from numpy_diff import assert_numpys_bits_and_warnings

NAMES = ("exp", "log", "sin", "cos")
FEATURES = getattr(np.core._multiarray_umath, "__cpu_features__", {})
# where NumPy runs its own loops, hop must answer their bits (a CPU without
# AVX2 and FMA3 runs libm's functions in NumPy, as hop's scalar backend)
NUMPY_LOOPS = bool(FEATURES.get("AVX512F") or (FEATURES.get("AVX2") and FEATURES.get("FMA3")))
pytestmark = pytest.mark.skipif(not NUMPY_LOOPS or bool(os.environ.get("HOP_MATH")),
                                reason="NumPy runs libm here, or HOP_MATH is set")


def test_numpys_loops_are_adopted():
    assert {n for n, d in _numpy_math.ADOPTED if d == "f32" and n in NAMES} == set(NAMES)

KINDS = ("divide", "over", "under", "invalid")
# NumPy's error callback bits are hop's HOP_FP_* bits
BITS = {"divide": 1, "over": 2, "under": 4, "invalid": 8}


def f32(bits):
    return np.asarray(bits, np.uint32).view(np.float32)


def near(values, width):
    """Every bit pattern within width of each value's."""
    b = f32(np.array(values, np.float32).view(np.uint32))
    b = b.view(np.uint32).astype(np.int64)
    pats = (b[:, None] + np.arange(-width, width + 1)[None, :]).ravel()
    return f32(np.unique(pats % (1 << 32)).astype(np.uint32))


# the loops' thresholds: exp's overflow/underflow bounds and subnormal
# results, log's subnormal scaling and sqrt(1/2) split, the Cody-Waite
# ranges of sin and cos, multiples of pi/2, FLT_MIN, 1
EDGES = [88.72283935546875, 88.3762626647949, -103.97208404541015625, -87.33654475, -86.6,
         -88.0, 1.1754944e-38, 0.70710677, 1.4142135, 1.0, 71476.0625, 117435.992, 1.5707964,
         3.1415927, 4.712389, 6.2831855, 100.53096, 1e-38, 1e-45, 0.0]
SWEEP = np.concatenate([f32(np.arange(0, 1 << 32, 509, dtype=np.uint64).astype(np.uint32)),
                        near(EDGES, 3000), near([-e for e in EDGES], 3000)])

SPECIALS = f32(np.array([
    0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFFC12345, 0x7F800001, 0xFF800001, 0x7FA00000,
    0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF,
    0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000,
], np.uint32))
SINGLE = np.concatenate([SPECIALS, np.array(
    [88.72283935546875, 88.7228, 88.72284, -103.97208404541015625, -103.972, -103.9721, -87.5,
     -88.0, -95.0, 1e-30, -1e-30, 1e-40, 1e-20, 1e-19, 71476.0625, 71476.07, 117435.992,
     117436.0, 1e6, -1e6, 1e30, 3.4e38, -3.4e38, 0.70710677, 1.4142135, 2.0, 0.5],
    np.float32)])


def bits(a):
    return np.asarray(a).view(np.uint32)


def numpy_flags(fn, x):
    seen = []
    old = np.seterrcall(lambda kind, flag: seen.append(flag))
    try:
        with np.errstate(all="call"):
            y = fn(x)
    finally:
        np.seterrcall(old)
    return y, int(np.bitwise_or.reduce(seen)) if seen else 0


@pytest.mark.parametrize("name", NAMES)
def test_dense_sweep_is_numpys_bits_and_flags(name):
    uf = getattr(np, name)
    want, _ = numpy_flags(uf, SWEEP)
    got = np.empty_like(SWEEP)
    _C._math_run(name, "f32", got, SWEEP)
    assert np.array_equal(bits(got), bits(want)), SWEEP[bits(got) != bits(want)][:8]
    # the flags, per block of 65,536 (a flag's element is its block's)
    status = _C._fp_status()
    try:
        for i in range(0, SWEEP.size, 65536):
            x = SWEEP[i:i + 65536]
            _, nf = numpy_flags(uf, x)
            _C._fp_clear()
            _C._math_run(name, "f32", np.empty_like(x), x)
            assert _C._fp_status() & 15 == nf, (name, i)
    finally:
        _C._fp_clear()
        _C._fp_note(status)


@pytest.mark.parametrize("name", NAMES)
def test_hop_numpy_eager_compiled_and_strided_are_numpys(name):
    uf, hf = getattr(np, name), getattr(hnp, name)
    x = SWEEP[: 3 * 1021 * 97].reshape(3 * 97, 1021)
    cf = hop.compile(lambda a: uf(a))
    with np.errstate(all="ignore"):
        for a in (x, x[:, ::3], x[::-2, 5:], x.T, np.asfortranarray(x[:40]), x[7, ::-1],
                  x[:5, :7], x[3, :1]):
            want = uf(a)
            for got in (hf(a), cf(a), cf(a)):
                assert got.dtype == np.float32 and got.shape == want.shape
                assert np.array_equal(bits(got), bits(want)), (name, a.shape, a.strides)
        # out= into another array and in place, as NumPy's
        a = x[:20].copy()
        want = uf(a)
        out = np.empty_like(a)
        hf(a, out=out)
        assert np.array_equal(bits(out), bits(want))
        hf(a, out=a)
        assert np.array_equal(bits(a), bits(want))


@pytest.mark.parametrize("name", NAMES)
def test_each_special_value_alone_is_numpys_bits_and_warnings(name):
    uf, hf = getattr(np, name), getattr(hnp, name)
    cf = hop.compile(lambda a: uf(a))
    for v in SINGLE:
        x = np.array([v, v], np.float32)[:1]
        want, nf = numpy_flags(uf, x)
        for fn in (hf, cf):
            with np.errstate(all="ignore"):
                got = fn(x)
            assert np.array_equal(bits(got), bits(want)), (name, hex(bits(x)[0]))
            for kind in KINDS:
                raised = None
                try:
                    with np.errstate(**{"all": "ignore", kind: "raise"}):
                        fn(x)
                except FloatingPointError as e:
                    raised = str(e)
                expect = ("%s encountered in %s" % (
                    {"divide": "divide by zero", "over": "overflow", "under": "underflow",
                     "invalid": "invalid value"}[kind], name)) if nf & BITS[kind] else None
                assert raised == expect, (name, hex(bits(x)[0]), kind, raised)


def test_the_block_flags_are_the_union_of_the_elements():
    # a warning is raised once per call whatever the mix, as NumPy's
    x = np.array([200.0, -200.0, 0.0, -1.0, 1e-40, np.nan], np.float32)
    for name in NAMES:
        uf, hf = getattr(np, name), getattr(hnp, name)
        assert_numpys_bits_and_warnings(uf, hf, x, name)


def test_float16_keeps_the_backends_own_functions():
    # NumPy's float16 exp/log/sin/cos are not its float32 loops (glibc's
    # float32 functions, or SVML's half ones): hop's float16 results round
    # the backend's own float32 functions, not the adopted copies
    every = np.arange(65536, dtype=np.uint16).view(np.float16)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = hop.compile(lambda a: np.log(a), fullgraph=True)(every)
        want = np.log(every)
    nan = np.isnan(got) & np.isnan(want)
    assert not ((got.view(np.uint16) != want.view(np.uint16)) & ~nan).any()


def test_adopt_numpy_errors_change_nothing():
    x = np.linspace(-3, 3, 21, dtype=np.float32)
    before = np.empty_like(x)
    _C._math_run("exp", "f32", before, x)
    with pytest.raises(hop.Error, match="float32 exp, log, sin and cos, got tanh"):
        _C._math_adopt_numpy("tanh", True)
    after = np.empty_like(x)
    _C._math_run("exp", "f32", after, x)
    assert np.array_equal(bits(before), bits(after))
    assert np.array_equal(bits(after), bits(np.exp(x)))


def test_hop_math_sleef_adopts_none_of_numpys_loops():
    import subprocess
    import sys
    env = dict(os.environ, HOP_MATH="sleef")
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-c", "import hop._numpy_math as m; print(m.ADOPTED)"],
                       env=env, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().strip() == "()"


def test_float32_i0_is_numpys_bits():
    # NumPy's i0 is a series over np.exp of |x|: float32 takes its own exp
    # loop, which hop's kernel takes from the table (runtime/elementwise.c)
    x = np.concatenate([np.linspace(-30, 30, 4001), [0.0, -0.0, 8.0, -8.0, 85.0, 90.0, np.inf,
                                                      -np.inf, np.nan]]).astype(np.float32)
    with np.errstate(all="ignore"):
        want = np.i0(x)
        for got in (hnp.i0(x), hop.compile(lambda a: np.i0(a * 1))(x), hnp.i0(x[::3])):
            w = want if got.size == want.size else want[::3]
            assert got.dtype == np.float32
            assert np.array_equal(bits(got), bits(w))
