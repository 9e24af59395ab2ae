"""First-rule gaps a probe of everyday NumPy calls with unusual but valid
(or invalid) arguments found: comparisons of arrays that do not broadcast,
out= tuples, einsum/vdot errors, arange of arrays, reshape(None), histogram
edges; each compared against NumPy 1.24 eagerly on hop.numpy arrays and
compiled: value, dtype, shape, type, error type and text, and warnings
(hop.compile's own "runs eagerly" notice left out: a call hop cannot compile
runs eagerly, which is the first rule kept)."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp


def _describe(r):
    if isinstance(r, (tuple, list)):
        return type(r).__name__, tuple(_describe(v) for v in r)
    if isinstance(r, (bool, int, float, complex, str, type(None))):
        return type(r).__name__, repr(r)
    a = np.asarray(r)
    return (type(r).__name__.replace("ndarray", "array"), str(a.dtype), a.shape,
            repr((a.round(12) if a.dtype.kind in "fc" else a).tolist()))


def _run(f):
    """f()'s answer (or its error) and the warnings it gave."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = _describe(f())
        except Exception as e:  # noqa: BLE001 (NumPy's error is the answer)
            r = type(e), str(e)
    return r, [(x.category, str(x.message)) for x in w
               if not str(x.message).startswith("hop.compile: ")]


def _copy(x):
    return x.copy() if isinstance(x, np.ndarray) else x


def _three_ways(f, *xs):
    """NumPy's answer, then hop.numpy's eager and compiled ones (ndarray
    arguments: hop.numpy arrays eagerly, NumPy's arrays compiled)."""
    want = _run(lambda: f(*[_copy(x) for x in xs]))
    eager = _run(lambda: f(*[hnp.asarray(x.copy()) if isinstance(x, np.ndarray) else x
                             for x in xs]))
    compiled = _run(lambda: hop.compile(f)(*[_copy(x) for x in xs]))
    return want, eager, compiled


# ------------------------------------------------- comparisons that fail

_DEPRECATED = (DeprecationWarning,
               "elementwise comparison failed; this will raise an error in the future.")

COMPARISONS = [
    (lambda x, y: x == y, np.arange(3.0), np.arange(4.0)),
    (lambda x, y: x != y, np.arange(3.0), np.arange(4.0)),
    (lambda x, y: x == y, np.ones((2, 3)), np.ones((3, 2), np.int32)),
    (lambda x, y: (x != y, x == y), np.ones((2, 3)), np.ones(4)),
    (lambda x, y: x == [1, 2], np.arange(3.0), None),
    (lambda x, y: [1, 2] != x, np.arange(3), None),
    (lambda x, y: x == np.arange(4), np.arange(3), None),
    (lambda x, y: np.arange(4) != x, np.arange(3), None),
]


@pytest.mark.parametrize("f,a,b", COMPARISONS)
def test_equality_of_arrays_that_do_not_broadcast_is_numpys_deprecated_identity(f, a, b):
    # NumPy 1.24's == and != of operands that do not broadcast warn (once
    # per NumPy array taking part) and answer by identity (a Python bool);
    # hop raised the ValueError of np.equal
    want, eager, compiled = _three_ways(f, a, b)
    assert _DEPRECATED in want[1] and "bool" in str(want[0])
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("fn", [np.equal, np.not_equal, np.less, np.add])
def test_equal_function_of_arrays_that_do_not_broadcast_raises(fn):
    # (hop.compile(np.add) itself raised the traced op's ShapeError)
    want, eager, compiled = _three_ways(fn, np.arange(3.0), np.arange(4.0))
    assert want[0][0] is ValueError
    assert eager == want
    assert compiled == want


def test_failed_comparison_under_warnings_as_errors_raises_the_warning():
    def f(x, y):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return x == y
    want, eager, compiled = _three_ways(f, np.arange(3.0), np.arange(4.0))
    assert want[0][0] is DeprecationWarning
    assert eager == want
    assert compiled == want


def test_failed_comparison_under_hop_trace_is_a_clear_error():
    with pytest.raises(hop.UnsupportedError, match="do not broadcast"):
        hop.trace(lambda x, y: hnp.asarray(x) == hnp.asarray(y), np.arange(3.0), np.arange(4.0))
