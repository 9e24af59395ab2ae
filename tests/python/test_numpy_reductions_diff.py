"""hop.compile of hop.numpy's reductions and statistics against NumPy 1.24:
values (NaN positions included), dtype, shape, the type of the result and
the exception (type and message) over the axis forms (None, (), ints,
tuples, out of range, repeated), keepdims, ddof, where=, dtype= and
initial= on empty, 0-d, one-element, NaN/inf, integer and bool arrays
(where= masks of the array's shape or broadcast), and complex cases."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import hop
from budget import examples

SHAPES = [(), (0,), (1,), (4,), (2, 3), (0, 3), (3, 0), (1, 1), (2, 1, 3)]
# (complex arrays are the targeted cases below and in
# test_numpy_complex_nan_stats)
DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.uint8, np.bool_]
AXES = [None, (), 0, -1, (0, 1), (-1, 0), 3, -3, (0, 0)]
DTYPE_ARG = [None, np.float64, np.int64, np.float32]

_AX = {"axis": AXES, "keepdims": [False, True]}
_ARG = {"axis": [None, 0, -1, 3], "keepdims": [False, True]}
_SCAN = {"axis": [None, 0, -1, 3], "dtype": DTYPE_ARG}
# each function's keywords and the values drawn for them ("mask": a where=
# array of the argument's shape, "w": weights of its shape)
SPACE = {
    "sum": dict(_AX, dtype=DTYPE_ARG, where=[True, "mask"], initial=[None, 2]),
    "prod": dict(_AX, dtype=DTYPE_ARG, where=[True, "mask"], initial=[None, 2]),
    "mean": dict(_AX, dtype=DTYPE_ARG, where=[True, "mask"]),
    "var": dict(_AX, dtype=DTYPE_ARG, where=[True, "mask"], ddof=[0, 1, 5]),
    "std": dict(_AX, dtype=DTYPE_ARG, where=[True, "mask"], ddof=[0, 1, 5]),
    "nansum": dict(_AX, dtype=DTYPE_ARG),
    "nanprod": dict(_AX, dtype=DTYPE_ARG),
    "nanmean": dict(_AX, dtype=DTYPE_ARG, where=[True, "mask"]),
    "nanvar": dict(_AX, dtype=DTYPE_ARG, where=[True, "mask"], ddof=[0, 1, 5]),
    "nanstd": dict(_AX, dtype=DTYPE_ARG, where=[True, "mask"], ddof=[0, 1, 5]),
    "amin": dict(_AX, initial=[None, 1], where=[True, "mask"]),
    "amax": dict(_AX, initial=[None, 1], where=[True, "mask"]),
    "nanmin": dict(_AX, initial=[None, 1], where=[True, "mask"]),
    "nanmax": dict(_AX, initial=[None, 1], where=[True, "mask"]),
    "argmin": _ARG, "argmax": _ARG, "nanargmin": _ARG, "nanargmax": _ARG,
    "all": dict(_AX, where=[True, "mask"]),
    "any": dict(_AX, where=[True, "mask"]),
    "count_nonzero": _AX,
    "ptp": _AX,
    "median": _AX, "nanmedian": _AX,
    "quantile": dict(_AX, q=[0.5, 0.25, (0.1, 0.9)]),
    "nanquantile": dict(_AX, q=[0.5, 0.25, (0.1, 0.9)]),
    "percentile": dict(_AX, q=[50, 30]),
    "nanpercentile": dict(_AX, q=[50, 30]),
    "average": dict(_AX, weights=[None, "w"]),
    "cumsum": _SCAN, "cumprod": _SCAN, "nancumsum": _SCAN, "nancumprod": _SCAN,
}


def _array(shape, dtype, values):
    n = int(np.prod(shape))
    v = np.array((values * (n // len(values) + 1))[:n], dtype=np.float64)
    if np.dtype(dtype).kind == "c":  # (the imaginary parts: the values reversed)
        return (v + 1j * np.nan_to_num(v[::-1], nan=1.0, posinf=2.0, neginf=-1.0)
                ).astype(dtype).reshape(shape)
    if np.dtype(dtype).kind != "f":
        v = np.nan_to_num(v, nan=0.0, posinf=7.0, neginf=-2.0)
    return v.astype(dtype).reshape(shape)


@st.composite
def _case(draw):
    name = draw(st.sampled_from(sorted(SPACE)))
    shape = draw(st.sampled_from(SHAPES))
    dtype = draw(st.sampled_from(DTYPES))
    values = draw(st.lists(st.sampled_from([0.0, 1.0, -2.0, 3.0, 2.5, np.nan, np.inf, -np.inf]),
                           min_size=1, max_size=6))
    a = _array(shape, dtype, values)
    kw, arrays = {}, {}
    for k, choices in SPACE[name].items():
        v = draw(st.sampled_from(choices))
        if v is None and k in ("dtype", "initial", "weights"):
            continue
        if v == "mask":
            bits = draw(st.lists(st.booleans(), min_size=1, max_size=4))
            # (a's shape, or its last dim's: broadcast)
            mshape = shape[-1:] if shape and draw(st.booleans()) else shape
            n = int(np.prod(mshape))
            arrays[k] = np.array((bits * (n + 1))[:n], dtype=bool).reshape(mshape)
        elif v == "w":
            arrays[k] = (np.arange(a.size) % 3 + 0.5).reshape(shape)
        else:
            kw[k] = v
    return name, a, kw, arrays


def _source(v):
    return "np." + v.__name__ if isinstance(v, type) else repr(v)


def _compiled(name, kw, arrays):
    """hop.compile of `lambda x, <arrays>: np.<name>(x, <keywords>)` (the
    keywords spelled out: a **kwargs call would break the graph)."""
    args = [f"{k}={_source(v)}" for k, v in kw.items()] + [f"{k}={k}" for k in arrays]
    code = f"lambda x, {', '.join(arrays)}: np.{name}(x, {', '.join(args)})"
    return hop.compile(eval(code, {"np": np}))


def _outcome(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kw), None
        except Exception as e:  # noqa: BLE001 (compared with NumPy's)
            return None, e


def _exact_bits(name, kw, w):
    """Whether hop's answer is NumPy's bits: a float or complex sum, or a
    float32/float64 product, with initial= and without where=."""
    if kw.get("initial") is None or kw.get("where", True) is not True or \
            w.dtype.kind not in "fc":
        return False
    return name == "sum" or name == "prod" and w.dtype in (np.float32, np.float64)


def assert_same(name, a, kw, arrays):
    want, err = _outcome(getattr(np, name), a, **kw, **arrays)
    got, herr = _outcome(_compiled(name, kw, arrays), a, *arrays.values())
    if err is not None or herr is not None:
        assert err is not None and herr is not None, (err, got, herr)
        assert isinstance(herr, type(err)), (err, herr)
        assert str(herr) == str(err), (err, herr)
        return
    assert type(got) is type(want), (want, got)
    w, g = np.asarray(want), np.asarray(got)
    assert (g.dtype, g.shape) == (w.dtype, w.shape), (want, got)
    if _exact_bits(name, dict(kw, **arrays), w):
        # sums and float products with initial= and no mask: NumPy's order,
        # bit for bit (issue 29; docs/ARCHITECTURE.md, "Summation order")
        assert g.tobytes() == w.tobytes(), (want, got)
    elif w.dtype.kind in "fc":
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        rtol = {2: 1e-3, 4: 1e-6}.get(w.dtype.itemsize, 1e-13)
        with np.errstate(invalid="ignore"):  # (a complex inf's parts)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


@settings(max_examples=examples(600), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_case())
def test_compiled_reduction_is_numpys(case):
    assert_same(*case)


NAN_ARRAY = np.array([[0.0, np.nan, 2.0], [3.0, 4.0, 5.0]])


@pytest.mark.parametrize("name", ["nanvar", "nanstd", "nanmean"])
@pytest.mark.parametrize("kw", [{"axis": ()}, {"axis": (), "keepdims": True},
                                {"axis": (), "ddof": 1}])
def test_nan_statistics_over_no_axis_are_elementwise(name, kw):
    # axis=() reduces nothing: each element is its own slice (nanvar and
    # nanstd were hop's reduction over every axis, broadcast)
    if name == "nanmean" and "ddof" in kw:
        return
    assert_same(name, NAN_ARRAY, kw, {})


_F32_NAN = np.array([[1.0, np.nan, 2.0], [3.0, 4.0, 5.0]], dtype=np.float32)
_F32_ALLNAN_FIRST = np.array([[np.nan, np.nan], [3.0, 4.0]], dtype=np.float32)


@pytest.mark.parametrize("name, a, kw", [
    # keepdims: NumPy's r[..., newaxis], a 0-d array, never a scalar
    ("quantile", np.array(3), {"q": 0.5, "keepdims": True}),
    ("percentile", np.array(3.0, np.float32), {"q": 50, "keepdims": True}),
    ("nanquantile", np.array(2.0), {"q": 0.25, "keepdims": True}),
    ("nanmedian", np.array(2.0), {"keepdims": True}),
    # a 0-d quantile of values holding a NaN: arr.dtype.type(nan)
    ("quantile", _F32_NAN, {"q": 0.5}),
    ("percentile", _F32_NAN.astype(np.float16), {"q": 30, "axis": (-1, 0)}),
    ("quantile", _F32_NAN, {"q": 0.5, "axis": (0, 1), "keepdims": True}),
    # nanquantile's lerp is in float64 (an all-NaN first slice: a's dtype)
    ("nanquantile", _F32_NAN, {"q": 0.25, "axis": -1}),
    ("nanpercentile", _F32_NAN.astype(np.float16), {"q": 30}),
    ("nanquantile", _F32_ALLNAN_FIRST, {"q": 0.25, "axis": 1}),
    ("nanquantile", np.array([np.inf, np.inf, 1.0]), {"q": 0.75, "method": "lower"}),
    # an empty array: NumPy's nanmean (q's shape not in the result)
    ("nanquantile", np.zeros((0, 3), np.float16), {"q": 0.25, "axis": -1}),
    ("nanquantile", np.zeros((0, 3), np.int64), {"q": (0.1, 0.9), "axis": -1,
                                                  "keepdims": True}),
    # a 0-d array's axis is checked
    ("median", np.array(1.0, np.float32), {"axis": 3}),
    ("nanmedian", np.array(1, np.int32), {"axis": (0, 0)}),
])
def test_quantiles_have_numpys_type_dtype_shape_and_errors(name, a, kw):
    assert_same(name, a, kw, {})


_I32 = np.arange(6, dtype=np.int32).reshape(2, 3)
_MASK = np.array([[True, False, True], [True, True, False]])


@pytest.mark.parametrize("name, a, kw, arrays", [
    # an integer array's nanvar/nanstd is NumPy's var/std with where=: its
    # dtype= (an integer one wraps; std's sqrt into it is a same_kind
    # error) and count - ddof clipped at 0 (inf, not nan)
    ("nanvar", _I32.astype(np.uint8), {"axis": -1, "dtype": np.int64}, {"where": _MASK}),
    ("nanvar", _I32, {"axis": -1, "ddof": 5}, {"where": _MASK}),
    ("nanstd", _I32, {"axis": -1, "dtype": np.int64}, {"where": _MASK}),
    ("var", _I32, {"axis": 0, "ddof": 1}, {"where": _MASK}),
    ("std", _I32.astype(np.float32), {"axis": (0, 1), "keepdims": True}, {"where": _MASK}),
    # where= given: NumPy counts by a sum, so a 0-d array takes axis 0
    ("mean", np.array(2.0), {"axis": 0}, {"where": np.array(True)}),
    ("std", np.array(2.0), {"axis": -1}, {"where": np.array(True)}),
    # nanvar's deviations and squares are in the array's dtype (NumPy's
    # subtract(arr, avg, out=arr)), the sums in dtype=
    ("nanstd", np.array([[1, 2.5, 3, 0], [5, -2, 0, 1]], np.float16), {"axis": -1,
                                                                       "dtype": np.float64}, {}),
    ("nanvar", np.array([[1, 2.5, 3], [0, 5, -2]], np.float32), {"axis": (-1, 0),
                                                                 "dtype": np.float64}, {}),
    # mean of an integer dtype with where=: the sum divided in float64
    ("mean", np.array([[np.inf, 1, 2], [3, np.inf, 0]], np.float16), {"dtype": np.int64},
     {"where": _MASK}),
])
def test_var_and_mean_with_where_and_dtype_are_numpys(name, a, kw, arrays):
    assert_same(name, a, kw, arrays)


@pytest.mark.parametrize("name, kw", [("median", {}), ("nanmedian", {}),
                                      ("quantile", {"q": (0.1, 0.9)}), ("percentile", {"q": 30})])
@pytest.mark.parametrize("a", [NAN_ARRAY.astype(np.float32), np.array(2.0), NAN_ARRAY[0]])
@pytest.mark.parametrize("keepdims", [False, True])
def test_order_statistics_over_no_axis_compile_as_one_graph(name, kw, a, keepdims):
    # axis=(): NumPy's _ureduce appends an axis of size 1 (each element its
    # own slice); hop's trace raised IndexError/TypeError and ran eagerly
    src = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    fn = hop.compile(eval(f"lambda x: np.{name}(x, axis=(), keepdims={keepdims}, {src})",
                          {"np": np}), fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, got = getattr(np, name)(a, axis=(), keepdims=keepdims, **kw), fn(a)
    assert type(got) is type(want)
    assert (np.asarray(got).dtype, np.shape(got)) == (np.asarray(want).dtype, np.shape(want))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("src, a", [
    # NumPy's reduce of a 0-d array takes the int axis 0 or -1 (no axis:
    # initial= still takes part), but not a tuple naming it
    ("np.max(x, axis=-1, initial=5)", np.array(3.0)),
    ("np.min(x, axis=0, initial=1, keepdims=True)", np.array(3.0)),
    ("np.nanmin(x, axis=0, initial=1)", np.array(np.nan)),
    ("np.sum(x, axis=(0,))", np.array(3.0)),
    ("np.prod(x, axis=(-1,), initial=2)", np.array(3)),
    ("np.any(x, axis=(0,))", np.array(True)),
    ("np.all(x, axis=(0, 0))", np.array(True)),
    ("np.nanmax(x, axis=(0,))", np.array(3.0)),
    ("np.nansum(x, axis=-1)", np.array(3.0)),
    ("np.nanvar(x, axis=0)", np.array(3.0)),
])
def test_reductions_of_a_0d_array_take_numpys_axes(src, a):
    want, err = _outcome(eval(f"lambda x: {src}", {"np": np}), a)
    got, herr = _outcome(hop.compile(eval(f"lambda x: {src}", {"np": np}), fullgraph=True), a)
    if err is not None:
        assert type(herr) is type(err) and str(herr) == str(err), (err, herr)
        return
    assert herr is None, herr
    assert type(got) is type(want) and np.shape(got) == np.shape(want), (want, got)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name, a, kw", [
    # NumPy's mean divides a complex sum by the count as a complex number
    ("mean", np.array([np.inf + 2j, 1 + 1j]), {}),
    ("mean", np.array([[np.inf + 2j, 1 + 1j], [2 - 1j, 1j]], np.complex64), {"axis": 0}),
    ("median", np.array([np.inf + 2j]), {}),
    # a complex median's NaN is NumPy's np.nan stored: nan+0j
    ("median", np.array([1j, np.nan + 0j, 1j, 2 + 0j]), {}),
    # nanmedian skips a complex NaN
    ("nanmedian", np.array([1j, np.nan + 0j, 1j, np.nan + 0j]), {}),
    ("nanmedian", np.array([[1j, np.nan + 0j, 2 - 1j], [np.nan + 0j, np.nan + 1j, 3j]]),
     {"axis": 1}),
    # a complex array's nanvar/nanstd with a real dtype=: NumPy's mean
    # drops its imaginary part, the deviations (in a's dtype) keep theirs
    ("nanvar", np.array([[1 + 1j], [2 - 1j]]), {"axis": 0, "dtype": np.float32}),
    ("nanstd", np.array([[1 + 2j, np.nan, 3 - 1j], [0j, 2j, 1]]), {"dtype": np.float64,
                                                                  "ddof": 1}),
])
def test_complex_statistics_are_numpys(name, a, kw):
    assert_same(name, a, kw, {})


@pytest.mark.parametrize("name, q", [("percentile", 50), ("quantile", 0.3),
                                     ("nanquantile", 0.3), ("nanpercentile", 30)])
def test_complex_quantile_holding_a_nan_is_numpys(name, q):
    # hop does not follow NumPy's NaN checks of a complex array's quantiles
    # (it gave 1.5+0.5j for NumPy's nan+0j): hop.compile runs the statement
    # in NumPy (test_numpy_complex_nan_stats), the same without a NaN compiled
    assert_same(name, np.array([1j, np.nan + 0j, 1j, 3 + 0j]), {"q": q}, {})
    assert_same(name, np.array([1j, 2 - 1j, 1j, 3 + 0j]), {"q": q}, {})
