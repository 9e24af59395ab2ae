"""A differential test of hop.compile's statistics against NumPy 1.24 over
real and complex arrays with NaN and infinities: median, quantile,
percentile and their nan-variants (methods with and without
interpolation), average with weights, ptp, var/std with ddof, over the axis
forms and keepdims.  Each drawn call is compiled and run, and compared with
NumPy's: each part's value (a NaN part as NaN), dtype, shape, the type of
the result (NumPy scalar or array) and the exception type and message.
(test_numpy_reductions_diff draws the reductions over real arrays.)"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import hop
from budget import examples
from test_numpy_reductions_diff import _compiled, _outcome

SHAPES = [(), (1,), (5,), (2, 3), (3, 4), (0, 3), (2, 1, 3)]
DTYPES = [np.float64, np.float32, np.float16, np.complex128, np.complex64, np.int64, np.bool_]
AXES = [None, 0, -1, 1, (0, 1), (), 2]
VALUES = [0.0, 1.0, -2.0, 3.0, 2.5, -0.5, np.nan, np.inf, -np.inf]
IMAG = [0.0, 1.0, -1.0, np.nan, np.inf, -np.inf]

_AX = {"axis": AXES, "keepdims": [False, True]}
_Q = ["linear", "lower", "higher", "nearest", "midpoint", "weibull", "inverted_cdf"]
# (a 2-d q: NumPy's nanquantile over an axis splits its dims, apply_along_axis)
_QS = [0.5, 0.3, 1.0, (0.1, 0.9), ((0.2, 0.4), (0.6, 0.8))]
SPACE = {
    "median": _AX, "nanmedian": _AX,
    "quantile": dict(_AX, q=_QS, method=_Q),
    "nanquantile": dict(_AX, q=_QS, method=_Q),
    "percentile": dict(_AX, q=[50, 30, (0, 100)], method=_Q),
    "nanpercentile": dict(_AX, q=[50, 30, (0, 100)], method=_Q),
    "average": {"axis": [None, 0, -1, (0, 1)], "keepdims": [False, True],
                "weights": [None, "w", "w1"]},
    "ptp": _AX,
    "var": dict(_AX, ddof=[0, 1, 3]), "std": dict(_AX, ddof=[0, 1, 3]),
    "nanvar": dict(_AX, ddof=[0, 1, 3]), "nanstd": dict(_AX, ddof=[0, 1, 3]),
}


@st.composite
def _case(draw):
    name = draw(st.sampled_from(sorted(SPACE)))
    shape = draw(st.sampled_from(SHAPES))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    n = int(np.prod(shape))
    # (a few values tiled over the array: small draws for hypothesis)
    re = draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=7))
    a = np.array((re * n)[:n], dtype=np.float64)
    if dtype.kind == "c":
        im = draw(st.lists(st.sampled_from(IMAG), min_size=1, max_size=5))
        a = a + 0j
        a.imag = (im * n)[:n]
    elif dtype.kind != "f":
        a = np.nan_to_num(a, nan=0.0, posinf=7.0, neginf=-2.0)
    a = a.astype(dtype).reshape(shape)
    kw, arrays = {}, {}
    for k, choices in SPACE[name].items():
        v = draw(st.sampled_from(choices))
        if v is None and k == "weights":
            continue
        if v == "w":  # (weights of a's shape)
            arrays[k] = (np.arange(n) % 3 + 0.5).reshape(shape)
        elif v == "w1":  # (1-d weights along the axis, for an int axis)
            ax = kw.get("axis")
            if not isinstance(ax, int) or not shape or not -len(shape) <= ax < len(shape):
                continue
            arrays[k] = np.arange(shape[ax]) % 2 + 1.0
        else:
            kw[k] = v
    return name, a, kw, arrays


def _parts(x):
    x = np.asarray(x)
    return (x.real, x.imag) if x.dtype.kind == "c" else (x,)


def assert_same(name, a, kw, arrays):
    want, err = _outcome(getattr(np, name), a, **kw, **arrays)
    got, herr = _outcome(_compiled(name, kw, arrays), a, *arrays.values())
    if err is not None or herr is not None:
        assert err is not None and herr is not None, (err, got, herr)
        assert type(herr) is type(err) or isinstance(herr, type(err)), (err, herr)
        assert str(herr) == str(err), (err, herr)
        return
    assert type(got) is type(want), (want, got)
    w, g = np.asarray(want), np.asarray(got)
    assert (g.dtype, g.shape) == (w.dtype, w.shape), (want, got)
    if w.dtype.kind not in "fc":
        np.testing.assert_array_equal(g, w)
        return
    rtol = {2: 1e-3, 4: 1e-5}.get(_parts(w)[0].dtype.itemsize, 1e-12)
    for gp, wp in zip(_parts(g), _parts(w)):
        np.testing.assert_array_equal(np.isnan(gp), np.isnan(wp), err_msg=f"{want} {got}")
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(gp, wp, rtol=rtol, atol=1e-12, equal_nan=True,
                                       err_msg=f"{want} {got}")


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_case())
def test_compiled_statistics_are_numpys(case):
    assert_same(*case)


# Found by the campaign above (HOP_TEST_BUDGET=stress and wider draws):

NAN_2D = np.array([[1.0, np.nan, 2.0, -0.5], [3.0, 4.0, 5.0, 0.5], [np.inf, 2.0, 1.0, 1.0]])


@pytest.mark.parametrize("a", [NAN_2D, NAN_2D.astype(np.float32), np.arange(24).reshape(2, 3, 4),
                               NAN_2D * (1 - 1j), np.arange(24.0).reshape(2, 3, 4) > 7])
@pytest.mark.parametrize("kw", [{"axis": 1}, {"axis": 0}, {"axis": -1}, {"axis": (0, 1)},
                                {"axis": 1, "keepdims": True}, {"axis": ()}, {},
                                {"axis": (0, -1), "keepdims": True}])
@pytest.mark.parametrize("method", ["linear", "lower", "weibull"])
def test_nanquantile_of_a_2d_q_has_numpys_order_of_dims(a, kw, method):
    # np.apply_along_axis puts q's dims where the axis was, and moveaxis
    # moves only the one there to the front (axis 1 of a 2 x 3 array with q
    # 2 x 2: q0, 2, q1).  Before: q's dims first, values in other places
    assert_same("nanquantile", a, dict(kw, q=((0.2, 0.4), (0.6, 0.8)), method=method), {})


@pytest.mark.parametrize("a", [NAN_2D, NAN_2D.astype(np.float32), np.nan_to_num(NAN_2D)])
@pytest.mark.parametrize("method", ["weibull", "inverted_cdf", "hazen", "closest_observation",
                                    "median_unbiased"])
@pytest.mark.parametrize("axis", [None, 1, (0, 1)])
def test_float_nanquantile_of_other_methods_is_numpys(a, method, axis):
    # before: an UnsupportedError (the trace's) for every float call; now
    # NumPy's quantile of the slices without a NaN, and with one a run-time
    # check that runs the call in NumPy
    assert_same("nanquantile", a, {"q": 0.3, "method": method, "axis": axis}, {})
    assert_same("nanpercentile", a, {"q": (20, 70), "method": method, "axis": axis}, {})


def test_complex_nanquantile_of_another_method_with_a_dtype_branch_runs_in_numpy():
    # a complex64 quantile whose 0-d result's dtype NumPy picks by a NaN (a
    # path-specialised branch): hop.compile's eager run recording the path
    # raised the eager UnsupportedError; now the trace's check decides
    a = np.array([[1 + 1j, complex(np.nan, 1), 2], [3, 4j, 5]], np.complex64)
    for q in (0.3, 1.0):
        assert_same("nanquantile", a, {"q": q, "method": "weibull"}, {})
        assert_same("nanquantile", np.nan_to_num(a), {"q": q, "method": "weibull"}, {})


def test_nanquantile_of_a_3d_q_raises_numpys_error():
    assert_same("nanquantile", NAN_2D, {"q": np.full((1, 1, 2), 0.5).tolist(), "axis": 1}, {})


def _warned(fn, *args):
    """fn(*args)'s result or exception, and its warnings (category, text)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(*args), None
        except Exception as e:  # noqa: BLE001 (compared with NumPy's)
            r = None, e
    return r, [(x.category, str(x.message)) for x in w if not str(x.message).startswith("hop")]


# x[x > 0] of these: 0 to 5 values, a NaN among them in the last
_SELECTIONS = [[-1.0, -2.0, -3.0, -4.0, -5.0, -6.0], [2.0, -1.0, -1.0, -1.0, -1.0, -1.0],
               [3.0, 1.0, -1.0, -1.0, -1.0, -1.0], [4.0, -1.0, 1.0, 9.0, -1.0, -1.0],
               [-0.0, 4.0, 2.5, 1.0, 7.0, -1.0], [5.0, 1.0, 1.0, 2.0, 8.0, 0.5],
               [5.0, np.nan, 1.0, 2.0, -1.0, -1.0]]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.complex128])
@pytest.mark.parametrize("name, kw", [("median", {})] + [
    ("quantile", {"q": q, "method": m})
    for m in sorted(np.lib.function_base._QuantileMethods) for q in (0.3, (0.0, 0.5, 1.0))] + [
    ("percentile", {"q": 40}), ("percentile", {"q": (10, 100), "method": "nearest"})])
def test_median_and_quantiles_of_a_masked_selection_are_computed_in_the_plan(dtype, name, kw):
    # a boolean mask's selection has a size known only when the plan runs:
    # NumPy's virtual indexes, neighbours and gamma are computed in the plan
    # from it (before: UnsupportedError "median over a symbolic size is not
    # supported" from every compiled call); an empty selection, where
    # NumPy's median warns and its quantile raises, runs in NumPy (a run-time
    # check, kind NUMPY_EMPTY)
    args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    fn = eval(f"lambda x: np.{name}(x[x.real > 0]{', ' if args else ''}{args})", {"np": np})
    cf = hop.compile(fn)
    empty = 0
    for vals in _SELECTIONS[1:] + _SELECTIONS[:1] + _SELECTIONS[1:]:
        x = np.nan_to_num(vals, nan=6.0) if np.dtype(dtype).kind == "i" else np.array(vals)
        x = x.astype(dtype)
        empty += not (x.real > 0).any()
        (want, err), wwarn = _warned(fn, x)
        (got, herr), hwarn = _warned(cf, x)
        assert hwarn == wwarn, (vals, wwarn, hwarn)
        if err is not None or herr is not None:
            assert type(herr) is type(err) and str(herr) == str(err), (vals, err, herr)
            continue
        assert type(got) is type(want), (vals, want, got)
        w, g = np.asarray(want), np.asarray(got)
        assert (g.dtype, g.shape) == (w.dtype, w.shape), (vals, want, got)
        for gp, wp in zip(_parts(g), _parts(w)):  # (the bits: the sign of a zero too)
            np.testing.assert_array_equal(gp, wp, err_msg=f"{vals}")
            np.testing.assert_array_equal(np.signbit(gp), np.signbit(wp), err_msg=f"{vals}")
    assert len(cf.graphs) == 1 and cf.eager_calls == empty, cf.explain()


def test_median_of_a_masked_selection_into_out_runs_in_numpy():
    def fn(x):
        o = np.zeros(())
        np.median(x[x > 0], out=o)
        return o

    cf = hop.compile(fn)
    for vals in _SELECTIONS[1:]:
        x = np.array(vals)
        np.testing.assert_array_equal(cf(x), fn(x))
