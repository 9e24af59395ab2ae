"""hop.numpy's eager fast path takes a Python number in a complex loop:
`c * 2.0`, `c + 1`, `2j - c`, `r * 2j` (np_eager.c plan_operand and
operand_key, _eager._plan).  It made the general path answer, ~22 us against
NumPy's ~1 us for 16 elements.  The number becomes the 0-d complex tensor
the general path makes of it, in the loop's dtype, and a Python complex is
keyed by NumPy's min_scalar_type (complex64 when both parts are inside
(-3.4e38, 3.4e38), else complex128).  Each case compares the operator (the
fast path), the ufunc with a keyword (the general path) and NumPy: type,
dtype, bits and warnings."""

import operator
import warnings

import numpy as np
import pytest

import hop.numpy as hnp

ARRAYS = {
    "complex64": np.array([1 + 2j, -0.5 + 0j, 3e38 + 1j, 0 - 0j], np.complex64),
    "complex128": np.array([1 + 2j, -0.5 + 0j, 1e300 - 1e300j, np.nan + 1j], np.complex128),
    "float32": np.array([1.5, -0.0, 3e38, np.inf], np.float32),
    "float64": np.array([1.5, -0.0, 1e300, np.nan], np.float64),
    "float16": np.array([1.5, -0.0, 6e4, 0.1], np.float16),
    "int8": np.array([1, -2, 127, 0], np.int8),
    "bool": np.array([True, False, True, False]),
}
NUMBERS = [2.0, -0.5, 3, True, 2j, 1.5 - 0.25j, 1e39 + 0j, 3.5e38j, complex("inf"),
           complex(0, float("nan")), 70000 + 1j, -0j]
OPS = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
       "true_divide": operator.truediv}


def _outcome(fn, *args, nan_sign=True):
    """fn(*args): the result's dtype, shape and bits (with nan_sign False,
    every NaN's sign bit cleared), or the exception; the warnings."""
    with warnings.catch_warnings(record=True) as w, np.errstate(all="warn"):
        warnings.simplefilter("always")
        try:
            r = fn(*args)
            a = np.array(np.asarray(r))
            if not nan_sign and a.dtype.kind == "c":
                parts = a.view(a.real.dtype)
                parts[np.isnan(parts)] = np.abs(parts[np.isnan(parts)])
            got = ("ok", a.dtype, a.shape, a.tobytes())
        except Exception as e:  # noqa: BLE001 (compared)
            got = ("raised", type(e).__name__, str(e))
    return got, sorted(str(x.message) for x in w)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dt", sorted(ARRAYS))
def test_a_number_beside_an_array_in_a_complex_loop_is_numpys(dt, name):
    a = ARRAYS[dt]
    op, uf = OPS[name], getattr(hnp, name)
    complex_loops = 0
    for v in NUMBERS:
        for left in (False, True):
            args = (v, a) if left else (a, v)
            hargs = (v, hnp.asarray(a)) if left else (hnp.asarray(a), v)
            fast = _outcome(op, *hargs)
            general = _outcome(lambda x, y: uf(x, y, casting="same_kind"), *hargs)
            assert fast == general, (v, left, fast, general)
            # against NumPy up to a NaN's sign: a product with a NaN part
            # (0 + nanj) gives a real part of NaN's other sign (a known gap
            # of the fused complex product, eager and compiled alike)
            want = _outcome(op, *args, nan_sign=False)
            assert _outcome(op, *hargs, nan_sign=False) == want, (v, left, fast, want)
            complex_loops += want[0][0] == "ok" and want[0][1].kind == "c"
    assert complex_loops > 0


def test_the_result_is_a_hop_numpy_array_and_the_fast_path_is_taken():
    h = hnp.asarray(ARRAYS["complex128"])
    # the fast path answers without a Python frame of hop.numpy's: its result
    # comes back from _C._np_eager itself (None would send the general path)
    r = hnp._eager.call("multiply", (h, 2.0))
    assert isinstance(r, hnp.ndarray) and r.dtype == np.complex128
    assert hnp._eager.call("add", (hnp.asarray(ARRAYS["float32"]), 2j)).dtype == np.complex64
    assert hnp._eager.call("add", (hnp.asarray(ARRAYS["float32"]), 1e39j)).dtype == \
        np.complex128
