"""float16 elementwise math against NumPy 1.24, bit for bit.

NumPy computes float16 `power` in its scalar loop on every machine (glibc's
powf of the float32 values, rounded to float16 to nearest even), and so
does hop, so a float16 power is NumPy's (_exact counts it so).  Its float16
exp, sin, ... round SVML's float32 routines on an AVX-512 machine, which
hop adopts for its float16 exp, log, sin, cos and tanh since the
thirty-ninth session (test_numpy_fidelity_s39.py checks all twenty such
functions); the functions whose bits hop's kernels give at every one of the
65,536 inputs on every backend are checked exhaustively here (cheap: one
array of every float16)."""

import os
import warnings

import numpy as np
import pytest

import hop

EVERY = np.arange(65536, dtype=np.uint16).view(np.float16)


def _same_bits_but_nan_payloads(got, want):
    # hop's float16 NaN is the default one whatever the operands' payloads
    # (a separate, known difference: the value is NaN either way)
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype == np.float16 and got.shape == want.shape
    both_nan = np.isnan(got) & np.isnan(want)
    bad = (got.view(np.uint16) != want.view(np.uint16)) & ~both_nan
    assert not bad.any(), (np.nonzero(bad)[0][:8], got[bad][:8], want[bad][:8])


# (base, exponent) where glibc's powf lands within a float32 ulp of a
# float16 halfway point and hop's vector powf rounded the other way
HALFWAY = [(4.02e-05, -0.3691), (737.0, -0.374), (936.5, -0.0629), (1877.0, -0.0629),
           (4042.0, 0.8945), (5200.0, 0.739), (29230.0, -0.03012)]


def test_float16_power_at_halfway_points_is_numpys_eager_and_compiled():
    a = np.array([b for b, _ in HALFWAY], np.float16)
    e = np.array([x for _, x in HALFWAY], np.float16)
    want = np.power(a, e)
    assert want.view(np.uint16).tolist() == [0x513e, 0x2d6a, 0x3933, 0x38fa, 0x6693, 0x6059,
                                             0x39df]
    _same_bits_but_nan_payloads(np.asarray(hop.asarray(a) ** hop.asarray(e)), want)
    cf = hop.compile(lambda x, y: (x ** y, np.power(x, y) + 0))
    for got, w in zip(cf(a, e), (want, want + np.float16(0))):
        _same_bits_but_nan_payloads(got, w)
    # a broadcast exponent (a scalar one is rounded to float16 first, as NumPy's)
    for base, ex in HALFWAY:
        row = np.full(5, base, np.float16)
        _same_bits_but_nan_payloads(hop.compile(lambda x, ex=float(ex): x ** ex)(row),
                                    row ** np.float16(ex))


def test_float16_power_of_every_base_is_numpys():
    ex = np.array([-2.5, -1.5, -0.3691, -0.0629, 0.3, 0.739, 0.8945, 1.5, 3.0, 7.25, -0.0, 0.0,
                   np.inf, -np.inf, np.nan, 65504.0], np.float16)
    a = np.repeat(EVERY, ex.size)
    e = np.tile(ex, EVERY.size)
    with np.errstate(all="ignore"):
        want = np.power(a, e)
    _same_bits_but_nan_payloads(np.asarray(hop.asarray(a) ** hop.asarray(e)), want)


def test_a_float16_power_handed_to_python_stays_compiled():
    # its bits are NumPy's, so the print at the break does not need the part
    # before it to run in Python (a float32 power does: SVML's bits)
    def f(x, y):
        z = x ** y
        print(float(z[0]))
        return z

    for dtype, in_python in ((np.float16, False), (np.float32, True)):
        a = np.array([4042.0, 2.0], dtype)
        b = np.array([0.8945, 0.5], dtype)
        cf = hop.compile(f)
        np.testing.assert_array_equal(cf(a, b), f(a, b))
        assert ("the part before it runs in Python" in cf.explain()) is in_python, cf.explain()


# hop's kernels give NumPy 1.24's float16 bits at every input (measured on
# all 65,536: NumPy's SVML half routines, or glibc's float32 ones rounded,
# agree with hop's float32 results rounded)
SAME = ["log", "log1p", "log2", "exp2", "tanh", "sinh", "arcsin", "arccos", "arcsinh",
        "arccosh", "arctanh", "sqrt", "floor", "ceil", "rint", "trunc", "reciprocal", "square"]


def _compiled_is_numpys_at_every_input(name):
    f = getattr(np, name)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        got = hop.compile(lambda a: f(a), fullgraph=True)(EVERY)
        want = f(EVERY)
    _same_bits_but_nan_payloads(got, want)


@pytest.mark.parametrize("name", SAME)
def test_float16_function_is_numpys_at_every_input(name):
    _compiled_is_numpys_at_every_input(name)


# NumPy's float16 functions on an AVX512_SKX CPU are its float32 SVML
# routines rounded to float16, which hop adopts: then its rounded float32
# results are NumPy's at every input (glibc's rounded differ at 1, 2, 2, 3,
# 2 and 20 inputs)
SVML = ["expm1", "tan", "arctan", "log10", "cosh", "cbrt"]
SKX = bool(getattr(np.core._multiarray_umath, "__cpu_features__", {}).get("AVX512_SKX"))


@pytest.mark.skipif(not SKX or bool(os.environ.get("HOP_MATH")),
                    reason="NumPy runs no SVML here, or HOP_MATH adopts nothing")
@pytest.mark.parametrize("name", SVML)
def test_float16_function_is_numpys_svml_at_every_input(name):
    _compiled_is_numpys_at_every_input(name)
