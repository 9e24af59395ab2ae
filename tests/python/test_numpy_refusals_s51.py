"""Calls hop.numpy refused with its UnsupportedError where NumPy answers or
raises its own error (fifty-first session): each now compiles, raises
NumPy's error, or is a graph break of hop.compile where NumPy computes the
call, and stays hop.trace's UnsupportedError only where hop cannot trace it.
Each case runs by NumPy and by hop.compile (numpy_diff.check: values,
dtypes, the arguments after the call, exceptions), and fails before."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp

from numpy_diff import check

R = np.random.default_rng(51)


def _matmul_out(axes, out_tuple=False):
    if out_tuple:
        def f(a, b, o):
            r = np.matmul(a, b, axes=axes, out=(o,))
            return r, r is o, o * 2
    else:
        def f(a, b, o):
            r = np.matmul(a, b, axes=axes, out=o)
            return r, r is o, o * 2
    return f


@pytest.mark.parametrize("case", [
    ([(0, 1), (0, 1), (1, 0)], (3, 2), (2, 4), (4, 3), np.float64, False),
    ([(1, 2), (1, 2), (2, 0)], (5, 2, 3), (5, 3, 4), (4, 5, 2), np.float64, True),
    ([(1, 0), (0,), (0,)], (3, 2), (3,), (2,), np.float64, False),
    ([(0, 1), (0, 1), (1, 0)], (3, 2), (2, 4), (4, 3), np.float32, False),  # a cast into out
    ([(0, 1), (0, 1), (1, 0)], (3, 2), (2, 4), (3, 4), np.float64, False),  # NumPy's ValueError
])
def test_matmul_with_axes_and_out_writes_out_as_numpy_does(case):
    axes, sa, sb, so, dt, tup = case
    check(_matmul_out(axes, tup), R.standard_normal(sa), R.standard_normal(sb),
          np.zeros(so, dt), fullgraph=True)


def test_matmul_with_axes_and_out_of_a_hop_array_is_a_view_write():
    a, b = hnp.asarray(R.standard_normal((3, 2))), hnp.asarray(R.standard_normal((2, 4)))
    o = hnp.zeros((4, 3))
    r = np.matmul(a, b, axes=[(0, 1), (0, 1), (1, 0)], out=o)
    assert r is o
    np.testing.assert_allclose(np.asarray(o), (np.asarray(a) @ np.asarray(b)).T, rtol=1e-12)


def _qr(mode):
    def f(a):
        return np.linalg.qr(a, mode=mode)
    return f


@pytest.mark.parametrize("mode", ["full", "f", "economic", "e"])
def test_qr_of_a_deprecated_mode_is_numpys_answer_and_warning(mode):
    a = R.standard_normal((4, 3))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        want = _qr(mode)(a.copy())
    c = hop.compile(_qr(mode))
    for _ in range(2):  # (the warning on every call, as NumPy's)
        with warnings.catch_warnings(record=True) as g:
            warnings.simplefilter("always")
            got = c(a.copy())
        assert [(str(x.message), x.category) for x in g] == \
            [(str(x.message), x.category) for x in w]
        for gg, ww in zip(got if isinstance(want, tuple) else (got,),
                          want if isinstance(want, tuple) else (want,)):
            assert type(gg) is np.ndarray and gg.shape == ww.shape
            np.testing.assert_allclose(gg, ww, rtol=1e-12, atol=1e-12)
    if mode in ("economic", "e"):  # (LAPACK's raw matrix alone: hop does not trace it)
        with pytest.raises(hop.UnsupportedError, match="qr mode"):
            hop.trace(_qr(mode), hnp.asarray(a))


@pytest.mark.parametrize("order", ["c", "f", "a", "A", b"F", None, "K", "k", "X", "", 1])
@pytest.mark.parametrize("fortran", [False, True])
def test_reshape_reads_order_as_numpy_does(order, fortran):
    # (lower case and bytes are NumPy's orders; 'K' and others NumPy's
    # ValueError, a non-string its TypeError: hop raised UnsupportedError)
    a = np.arange(6.0).reshape(2, 3)
    a = np.asfortranarray(a) if fortran else a

    def f(x):
        return x.reshape(3, 2, order=order), np.reshape(x, (6,), order=order)
    check(f, a, eager=True)
