"""First-rule gaps a probe of hop.numpy's public surface found (every
function of hop.numpy.__all__ called by NumPy, eagerly on hop.numpy arrays
and compiled, over a grid of inputs and non-default keywords).  Each case
compares against NumPy 1.24: value, dtype, shape, type and error."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from test_numpy_operand_campaign import _as_numpy

C1 = np.array([1 + 2j, 3 - 1j])
C2 = np.array([[1 + 2j, 3 - 1j, 2j], [1, 2 - 1j, 0.5 + 0j]])


def _run(f):
    try:
        r = _as_numpy(f())
    except Exception as e:  # noqa: BLE001 (NumPy's error is the answer)
        return type(e), str(e)
    a = np.asarray(r)
    return type(r).__name__.replace("ndarray", "array"), str(a.dtype), a.shape, a.round(12).tolist()


def _three_ways(fn, x, **kw):
    """NumPy's answer, then hop.numpy's eager and compiled ones."""
    want = _run(lambda: fn(x, **kw))
    eager = _run(lambda: fn(hnp.asarray(x), **kw))
    compiled = _run(lambda: hop.compile(lambda a: fn(a, **kw))(x))
    return want, eager, compiled


@pytest.mark.parametrize("fn", [np.cov, np.corrcoef])
@pytest.mark.parametrize("x,kw", [(C1, {}), (C1, {"bias": True}), (C2, {}), (C2, {"ddof": 0}),
                                  (C2, {"rowvar": False})])
def test_cov_and_corrcoef_of_complex_data_conjugate_as_numpy(fn, x, kw):
    # NumPy's cov is dot(X, X.T.conj()) (Hermitian); hop's left out the conj
    if fn is np.corrcoef:
        kw = {k: v for k, v in kw.items() if k == "rowvar"}
    want, eager, compiled = _three_ways(fn, x, **kw)
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("fn", [np.cov, np.corrcoef])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, bool])
def test_cov_with_an_integer_dtype_raises_numpys_casting_error(fn, dtype):
    # NumPy's X -= avg[:, None] cannot cast float64 back into X's dtype;
    # hop computed in float64 and returned an answer
    x = np.array([[1.0, 2.0, 4.0], [0.5, 3.0, 1.0]])
    want, eager, compiled = _three_ways(fn, x, dtype=dtype)
    assert want[0] is np.core._exceptions._UFuncOutputCastingError
    assert "Cannot cast ufunc 'subtract' output from dtype('float64')" in want[1]
    assert eager == want
    assert compiled == want
