"""NumPy 1.24's complex NaN/inf semantics in hop.numpy's scans and order
statistics, bit for bit (eager hop.numpy and hop.compile): cumprod's
textbook complex product and kept first element, nanmedian's all-NaN
slice, and the cases hop does not follow (a complex quantile holding a NaN,
a complex nanmedian slice holding a NaN and an infinity, ravel order='K'),
which hop.compile runs in NumPy and eager hop.numpy refuses clearly."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp

NAN = float("nan")
INF = float("inf")


def _bits(x):
    """x's dtype, shape and bits, a NaN's sign and payload aside (they
    follow the order of the machine's operations, NumPy's too), a NaN part
    of a complex value and a zero's sign included."""
    a = np.array(x)
    parts = a.reshape(-1)
    if a.dtype.kind == "c":
        parts = parts.view(a.real.dtype)
    if a.dtype.kind in "fc":
        parts = np.where(np.isnan(parts), np.array(NAN, parts.dtype), parts)
    return a.dtype, a.shape, parts.view(np.uint8).tobytes()


def _eager_and_compiled(fn, a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(a)
        eager = fn(hnp.asarray(a))
        compiled = hop.compile(fn)(a)
    return want, eager, compiled


@pytest.mark.parametrize("fn", [lambda x: np.nancumprod(x), lambda x: np.cumprod(x),
                                lambda x: np.nancumprod(x, axis=0),
                                lambda x: np.cumsum(x)])
@pytest.mark.parametrize("a", [
    # before: the first element was 1*(inf+2j) = inf+nanj, and C's product
    # (Annex G) recovered inf where NumPy's textbook one gives nan+nanj
    np.array([INF + 2j, 1 + 1j, 2 - 1j, complex(NAN, 0), 3 + 0j]),
    np.array([[INF + 2j, 1 + 1j], [2 - 1j, complex(INF, INF)]], np.complex64),
    np.array([complex(INF, 0), complex(0, INF), complex(-INF, 1)]),
    np.array([-0.0, -0.0]),  # (the first element kept: -0.0, not 0.0 + -0.0)
])
def test_complex_scans_are_numpys_bits(fn, a):
    want, eager, compiled = _eager_and_compiled(fn, a)
    assert _bits(eager) == _bits(want), (want, eager)
    assert _bits(compiled) == _bits(want), (want, compiled)


@pytest.mark.parametrize("a, kw", [
    # an all-NaN slice of NumPy's _nanmedian1d (1-d, axis=None, all axes, or
    # 600 or more along the axis): its last element (before: nan+0j)
    (np.array([complex(NAN, 0), complex(0, NAN)]), {}),
    (np.array([complex(0, NAN), complex(INF, NAN)]), {"axis": 0}),
    (np.array([[complex(NAN, 1)] * 3] * 2), {"axis": (0, 1)}),
    (np.full((2, 700), complex(INF, NAN)), {"axis": 1}),
    (np.array([NAN, -NAN], np.float32), {}),
    # np.ma.median's (fewer than 600 along one axis): np.nan, nan+0j
    (np.array([[complex(NAN, 1)] * 3] * 2), {"axis": 1}),
])
def test_nanmedian_of_an_all_nan_slice_is_numpys_bits(a, kw):
    want, eager, compiled = _eager_and_compiled(lambda x: np.nanmedian(x, **kw), a)
    assert _bits(eager) == _bits(want), (want, eager)
    assert _bits(compiled) == _bits(want), (want, compiled)


NAN_INF = np.array([[INF + 0j, complex(NAN, 0)], [complex(NAN, 0), INF + 0j]])


def test_complex_nanmedian_slice_with_a_nan_and_an_inf_runs_in_numpy_under_compile():
    # np.ma.median gives [inf+nanj, nan+nanj] by where the NaN was; hop gave
    # inf+nanj for both rows: compile runs the statement in NumPy now
    fn = lambda x: np.nanmedian(x, axis=1)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(NAN_INF)
        got = hop.compile(fn)(NAN_INF)
        clean = np.array([[1 + 1j, 2 + 0j], [3 + 0j, complex(NAN, 0)]])
        got_clean = hop.compile(fn)(clean)
    assert _bits(got) == _bits(want), (want, got)
    assert _bits(got_clean) == _bits(fn(clean))
    with pytest.raises(hop.UnsupportedError, match="nanmedian over an axis of a complex array "
                       "whose slice holds both a NaN and an infinity is not supported"):
        np.nanmedian(hnp.asarray(NAN_INF), axis=1)


@pytest.mark.parametrize("name, q", [("percentile", 50), ("quantile", 0.3),
                                     ("nanquantile", 0.3), ("nanpercentile", 30)])
def test_complex_quantile_holding_a_nan_runs_in_numpy_under_compile(name, q):
    # before: hop.UnsupportedError under hop.compile, where NumPy answers
    a = np.array([1j, complex(NAN, 0), 1j, 3 + 0j])
    fn = eval(f"lambda x: np.{name}(x, {q})", {"np": np})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, got = fn(a), hop.compile(fn)(a)
    assert _bits(got) == _bits(want), (want, got)
    with pytest.raises(hop.UnsupportedError, match="of a complex array holding a NaN is not "
                       "supported"):
        fn(hnp.asarray(a))


@pytest.mark.parametrize("a", [np.arange(6.0).reshape(2, 3).T, np.arange(6.0).reshape(2, 3),
                               np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1)[::2]])
def test_ravel_order_k_runs_in_numpy_under_compile(a):
    # before: hop.UnsupportedError under hop.compile
    fn = lambda x: np.ravel(x, order="K") + 1  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = hop.compile(fn)(a)
    assert _bits(got) == _bits(fn(a))
    with pytest.raises(hop.UnsupportedError, match="ravel with order='K' is not supported"):
        np.ravel(hnp.asarray(a), order="K")
