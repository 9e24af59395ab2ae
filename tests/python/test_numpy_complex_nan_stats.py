"""NumPy 1.24's complex NaN/inf semantics in hop.numpy's scans and order
statistics, bit for bit (eager hop.numpy and hop.compile): cumprod's
textbook complex product and kept first element, nanmedian's all-NaN
slice, complex quantiles with NaN computed in the plan, and the cases hop
does not follow (np.ma.median's NaN fill tied with an infinity, a complex
nanquantile method hop computes only without NaN: a run-time check; ravel
order='K': a break), which hop.compile runs in NumPy and eager hop.numpy
refuses clearly."""

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


def _compiled_calls(fn, arrays):
    """fn compiled and called on each of arrays in turn: the results and
    how many calls ran eagerly (a failed run-time check or a break)."""
    c = hop.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = [c(x) for x in arrays]
    return got, c.eager_calls, c.explain()


def test_complex_nanmedian_tie_with_the_nan_fill_runs_in_numpy_clean_data_in_the_plan():
    # np.ma.median sorts a masked NaN as inf+0j, tied with the row's inf+0j
    # in its quicksort's order: [inf+nanj, nan+nanj] by where the NaN was.
    # Before: every complex call was a graph break (NumPy ran the statement,
    # clean data too, after a call with NaN); now the plan computes it and a
    # run-time check hands only the tied call to eager
    fn = lambda x: np.nanmedian(x, axis=1)  # noqa: E731
    clean = np.array([[1 + 1j, 2 + 0j], [3 + 0j, complex(NAN, 0)]])
    infs = np.array([[INF + 0j, complex(-INF, 0)], [complex(NAN, 1), complex(-INF, 2)]])
    got, eager, text = _compiled_calls(fn, [NAN_INF, clean, infs, clean])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for g, x in zip(got, [NAN_INF, clean, infs, clean]):
            assert _bits(g) == _bits(fn(x)), (x, g, fn(x))
    assert eager == 1, text  # (NAN_INF's only)
    assert "graph break" not in text
    with pytest.raises(hop.UnsupportedError, match=r"nanmedian over axes of a complex array "
                       r"whose slice holds a NaN and as many numbers at or above inf\+0j as "
                       r"below it \(np.ma.median's tie with its NaN fill\) is not supported"):
        np.nanmedian(hnp.asarray(NAN_INF), axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _bits(np.nanmedian(hnp.asarray(infs), axis=1)) == _bits(fn(infs))


def test_complex_nanmedian_tie_raises_check_error_under_trace():
    gm = hop.trace(lambda x: np.nanmedian(x, axis=1), NAN_INF)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(hop.CheckError, match="a NaN sends NumPy down a path hop does not "
                           "follow .* of kind NUMPY_NAN_PATH"):
            gm(NAN_INF)
        clean = np.array([[1 + 1j, 2 + 0j], [3 + 0j, complex(NAN, 0)]])
        assert _bits(gm(clean)) == _bits(np.nanmedian(clean, axis=1))


def _with_nan(dt):
    a = np.array([[1j, complex(NAN, 1), 2, 0.5 - 1j], [complex(1, NAN)] * 4,
                  [1, 2, 3, 4j], [complex(INF, 1), -2j, complex(NAN, NAN), 1]], dt)
    return a


@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
@pytest.mark.parametrize("call", [
    "np.quantile(x, 0.3)", "np.quantile(x, [0.3, 0.5], axis=1)", "np.percentile(x, 50, axis=0)",
    "np.quantile(x, 0.3, axis=1, method='lower')", "np.median(x, axis=1)",
    "np.quantile(x[2], 0.25)", "np.percentile(x, 40, axis=1, keepdims=True)",
    "np.nanquantile(x, 0.3)", "np.nanquantile(x, [0.3, 0.6], axis=1)",
    "np.nanquantile(x[2:], 0.3, axis=1)", "np.nanquantile(x, 0.5, axis=0, method='midpoint')",
    "np.nanpercentile(x, 30, axis=1, method='nearest')", "np.nanpercentile(x, [10, 90])",
    "np.nanpercentile(x, 40, axis=1, keepdims=True)", "np.nanmedian(x)",
    "np.nanmedian(x, axis=1)", "np.nanmedian(x, axis=0, keepdims=True)",
    "np.nanquantile(x, 0.3, axis=1, method='weibull')",
])
def test_complex_quantiles_with_and_without_nan_are_numpys_in_the_plan(dt, call):
    # before: a complex quantile holding a NaN (and every complex nanquantile)
    # was a graph break under hop.compile, for every later call, clean ones
    # too; eagerly an UnsupportedError
    fn = eval(f"lambda x: {call}", {"np": np})
    nan = _with_nan(dt)
    clean = np.where(np.isnan(nan), dt(1.5 - 0.5j), nan).astype(dt)
    weibull = "weibull" in call
    got, eager, text = _compiled_calls(fn, [nan, clean, nan] if not weibull else [clean, nan])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for g, x in zip(got, [nan, clean, nan] if not weibull else [clean, nan]):
            want = fn(x)
            assert _bits(g) == _bits(want), (x, g, want)
            assert type(g) is type(want)
        if not weibull:
            e = fn(hnp.asarray(nan))
            assert _bits(e) == _bits(fn(nan)) and type(e) is hnp.ndarray, e
        else:
            with pytest.raises(hop.UnsupportedError, match="method='weibull' of an array "
                               "holding a NaN is not supported"):
                fn(hnp.asarray(nan))
    # (weibull: the NaN call's check; nanmedian, nanquantile and nanpercentile
    # over rows: NumPy warns "All-NaN slice encountered" of row 1, so the two
    # NaN calls run eagerly, by NumPy, and warn as it does:
    # test_numpy_reduction_fidelity.py, test_numpy_fidelity_s39.py)
    all_nan_row = call.startswith(("np.nanmedian(x,", "np.nanquantile(x,",
                                   "np.nanpercentile(x,")) and "axis=1" in call
    assert eager == (1 if weibull else 2 if all_nan_row else 0), text
    assert "graph break" not in text


@pytest.mark.parametrize("a", [np.arange(6.0).reshape(2, 3).T, np.arange(6.0).reshape(2, 3),
                               np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1)[::2]])
def test_ravel_order_k_runs_in_numpy_under_compile(a):
    # before: hop.UnsupportedError under hop.compile
    fn = lambda x: np.ravel(x, order="K") + 1  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = hop.compile(fn)(a)
    assert _bits(got) == _bits(fn(a))
    # (eagerly hop.numpy ravels in the memory order itself: NumPy's answer;
    # was hop.UnsupportedError)
    e = np.ravel(hnp.asarray(a), order="K")
    assert _bits(np.asarray(e)) == _bits(np.ravel(a, order="K"))


@pytest.mark.parametrize("v", [complex(NAN, INF), complex(1, NAN), complex(INF, NAN),
                               complex(INF, 1), 2 + 1j])
@pytest.mark.parametrize("keepdims", [False, True])
def test_median_of_a_0d_complex_array_is_numpys(v, keepdims):
    # NumPy's median of a 0-d array holding a NaN (either part) is np.nan
    # stored, nan+0j; the mean of the value otherwise (inf+1j: inf+nanj).
    # Before: the mean, nan+nanj (stats campaign, test_numpy_stats_diff)
    fn = lambda x: np.median(x, keepdims=keepdims)  # noqa: E731
    want, eager, compiled = _eager_and_compiled(fn, np.array(v))
    assert _bits(eager) == _bits(want), (want, eager)
    assert _bits(compiled) == _bits(want), (want, compiled)
    assert type(compiled) is type(want)


def test_complex_nanmedian_over_several_axes_checks_the_tie_too():
    # NumPy's _ureduce flattens the axes into one of 3 (< 600): np.ma.median
    # there too, whose tie gives nan+nanj where hop's median of the numbers
    # is inf+nanj.  Before: hop's, silently (stats campaign)
    a = np.array([[[3 - 1j * INF, complex(NAN, -INF), complex(1, INF)]],
                  [[complex(0, NAN), INF + 0j, complex(2.5, NAN)]]], np.complex64)
    fn = lambda x: np.nanmedian(x, axis=(0, 1))  # noqa: E731
    clean = np.where(np.isnan(a), np.complex64(1 - 1j), a)
    got, eager, text = _compiled_calls(fn, [a, clean])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [_bits(g) for g in got] == [_bits(fn(a)), _bits(fn(clean))]
    assert eager == 1, text
