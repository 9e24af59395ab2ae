"""Reductions, statistics and scans with out= against NumPy 1.24 (issue
#29, the first rule): a reduction's result does not broadcast into out as
a ufunc's does.  NumPy checks out's shape first (its reduction iterator's
errors, modelled in hop/numpy/_reduce_out.py) and computes mean, var and
std into out in out's own dtype (the sum cast into out, then divided there).
Before this file hop.numpy broadcast a result into any out it could and
divided in the reduction's dtype: 1,169 of 2,505 drawn calls differed
(a.sum(out=np.ones(2)) of a 1-d array filled out with the sum; a.mean(
dtype=np.int8, out=<float64>) truncated 2.5 to 2.0).

Each case runs by NumPy, eagerly on hop.numpy arrays and by hop.compile,
out an argument of the call; the results, out's contents afterwards,
whether the result is out, and the exception type and text agree."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import hop
import hop.numpy as hnp
from hop.numpy import _reduce_out

from budget import examples
from test_numpy_operand_campaign import _as_numpy, differ



def _differ(got, want, src, a):
    """differ(), floats within their computation's last bits: hop's float
    sums add in another order than NumPy's pairwise loops, so a statistic
    of inexact values (a mean of 2/3, var's deviations) may differ there
    (docs/ARCHITECTURE.md, "NumPy semantics"); sums of the small integers
    drawn here are exact, and so bit for bit.  A float32 or float16
    computation's value in a float64 out keeps its own precision."""
    d = differ(got, want, ulps=4)
    if d is None or not d.startswith("values") or np.asarray(want).dtype.kind not in "fc":
        return d
    low = {"float16": 1e-3, "float32": 1e-6}
    rtol = min([low[k] for k in low if k in src or a.dtype == k] or [0])
    g, w = np.asarray(got), np.asarray(want)
    same = rtol and np.array_equal(np.isnan(g), np.isnan(w)) and \
        np.allclose(g, w, rtol=rtol, atol=0, equal_nan=True)
    return None if same else d

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                       HealthCheck.data_too_large])

# function -> (takes dtype=, takes keepdims=, takes where=)
FUNCS = {"sum": (1, 1, 1), "prod": (1, 1, 1), "max": (0, 1, 1), "min": (0, 1, 1),
         "any": (0, 1, 1), "all": (0, 1, 1), "mean": (1, 1, 1), "var": (1, 1, 1),
         "std": (1, 1, 1), "nansum": (1, 1, 0), "nanprod": (1, 1, 0), "nanmean": (1, 1, 1),
         "nanvar": (1, 1, 1), "nanstd": (1, 1, 1), "nanmax": (0, 1, 0), "nanmin": (0, 1, 0),
         "ptp": (0, 1, 0), "median": (0, 1, 0), "argmax": (0, 1, 0), "argmin": (0, 1, 0),
         "cumsum": (1, 0, 0), "cumprod": (1, 0, 0)}
ADTYPES = ["float64", "float32", "float16", "int64", "int8", "uint8", "bool_", "complex128"]
ODTYPES = ["float64", "float32", "int64", "int32", "int8", "uint64", "bool_", "complex128"]


def _source(fn, axis, keepdims, dtype, where):
    kw = [f"axis={axis!r}", "out=o"]
    if keepdims:
        kw.append("keepdims=True")
    if dtype:
        kw.append(f"dtype=np.{dtype}")
    if where:
        kw.append("where=w")
    return f"def f(a, o, w):\n    r = np.{fn}(a, {', '.join(kw)})\n    return r, r is o\n"


def _run(src, a, o, w):
    ns = {"np": np}
    exec(src, ns)  # noqa: S102
    f = ns["f"]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        want_o = o.copy()
        try:
            want = ("ok", f(a.copy(), want_o, w))
        except Exception as e:  # noqa: BLE001 (NumPy's own error is the answer)
            want = ("raised", type(e), str(e))
        # a float cast into an integer out out of its range (a negative one
        # into an unsigned out among them): C's undefined conversion, whose
        # value NumPy's own loops do not agree on (astype(np.uint64) of -1.0
        # is 2**64-1; maximum.reduce([-1.0, 5.0]) into a uint64 out is 0,
        # minimum's 5)
        undefined = o.dtype.kind in "biu" and any("invalid value" in str(x.message)
                                                  for x in seen) or \
            o.dtype.kind == "u" and a.dtype.kind in "fc" and bool(np.any(a.real < 0))
        warnings.simplefilter("ignore")
        runs = {}
        eager_o = hnp.asarray(o.copy())
        try:
            runs["eager"] = ("ok", f(hnp.asarray(a.copy()), eager_o, w)), eager_o
        except Exception as e:  # noqa: BLE001
            runs["eager"] = ("raised", type(e), str(e)), eager_o
        comp_o = o.copy()
        try:
            runs["compile"] = ("ok", hop.compile(f)(a.copy(), comp_o, w)), comp_o
        except Exception as e:  # noqa: BLE001
            runs["compile"] = ("raised", type(e), str(e)), comp_o
    return want, want_o, runs, undefined


def _check(src, a, o, w):
    want, want_o, runs, undefined = _run(src, a, o, w)
    for how, (got, got_o) in runs.items():
        where = f"{how}: {src.splitlines()[1].strip()} a={a.dtype}{a.shape} o={o.dtype}{o.shape}"
        if got[0] == "raised" and "NumPy 1.24 takes some such outs" in got[2]:
            # (an accumulation into an out of another shape and dtype:
            # hop's refusal, _reduce_out.check_accumulate; NumPy raises a
            # ValueError or writes part of out)
            result = (a.size,) if "axis=None" in src else a.shape
            assert "cum" in src and got[1] is ValueError and o.shape != result, where
            assert want[0] == "ok" or want[1] is ValueError, where
            continue
        if want[0] == "raised":
            assert got[0] == "raised", f"{where}: NumPy raised {want[1:]}, hop gave {got}"
            assert got[1:] == want[1:], where
        else:
            assert got[0] == "ok", f"{where}: hop raised {got[1:]}, NumPy gave {want[1]}"
            assert got[1][1] == want[1][1], f"{where}: the result is out: {want[1][1]}"
            if undefined:
                continue
            d = _differ(_as_numpy(got[1][0]), want[1][0], src, a)
            assert d is None, f"{where}: result {d}"
        d = _differ(np.asarray(_as_numpy(got_o)), want_o, src, a)
        assert d is None, f"{where}: out afterwards {d}"


def _result_shape(fn, shape, axis, keepdims):
    if fn in ("cumsum", "cumprod"):
        return (int(np.prod(shape)),) if axis is None else shape
    axes = range(len(shape)) if axis is None else [axis % max(len(shape), 1)]
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


@st.composite
def cases(draw):
    fn = draw(st.sampled_from(sorted(FUNCS)))
    takes_dtype, takes_kd, takes_where = FUNCS[fn]
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    axis = draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    keepdims = takes_kd and draw(st.booleans())
    dtype = takes_dtype and draw(st.sampled_from([None, "float64", "float32", "int8"]))
    where = takes_where and draw(st.booleans())
    adt = draw(st.sampled_from(ADTYPES))
    a = np.arange(1, 1 + int(np.prod(shape))).reshape(shape) % 7
    a = (a - 2).astype(adt) if adt != "bool_" else a % 2 == 1
    if adt.startswith("float") and draw(st.booleans()):
        a.flat[draw(st.integers(0, a.size - 1))] = np.nan
    res = list(_result_shape(fn, shape, axis, keepdims))
    # out: the result's shape, or one axis longer, shorter or set to 1,
    # one dimension more or fewer
    kind = draw(st.sampled_from(["exact", "exact", "len", "one", "more", "fewer"]))
    if kind == "len" and res:
        i = draw(st.integers(0, len(res) - 1))
        res[i] += draw(st.sampled_from([-1, 1, 2]))
    elif kind == "one" and res:
        res[draw(st.integers(0, len(res) - 1))] = 1
    elif kind == "more":
        res.insert(draw(st.integers(0, len(res))), draw(st.integers(1, 3)))
    elif kind == "fewer" and res:
        res.pop(draw(st.integers(0, len(res) - 1)))
    # (NumPy 1.24 crashes on an accumulation into a 0-d out:
    # test_an_accumulation_into_a_0d_out_raises)
    assume(res or fn not in ("cumsum", "cumprod"))
    odt = draw(st.sampled_from(ODTYPES))
    o = np.full([max(d, 0) for d in res], 5, dtype=odt)
    w = np.arange(a.size).reshape(shape) % 3 != 1 if where else True
    return _source(fn, axis, keepdims, dtype, where), a, o, w


@settings(max_examples=examples(60), **_SETTINGS)
@given(cases())
def test_reductions_into_out_agree_with_numpy(case):
    _check(*case)


@settings(max_examples=examples(300), **_SETTINGS)
@given(st.lists(st.integers(0, 3), max_size=4), st.data())
def test_the_model_of_numpys_checks_is_numpys(shape, data):
    """_reduce_out.check raises what NumPy's reduction raises, text and all,
    over operand, out and where= shapes (the oracle: np.add.reduce)."""
    nd = len(shape)
    axes = data.draw(st.sets(st.integers(0, max(nd - 1, 0)), max_size=nd)) if nd else set()
    keepdims = data.draw(st.booleans())
    out_shape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4)))
    where_shape = data.draw(st.none() | st.lists(st.integers(1, 3), max_size=4).map(tuple))
    kw = {"axis": tuple(sorted(axes)), "keepdims": keepdims, "out": np.ones(out_shape)}
    if where_shape is not None:
        kw["where"] = np.ones(where_shape, bool)
    try:
        np.add.reduce(np.ones(shape), **kw)
        want = None
    except ValueError as e:
        want = str(e)
    try:
        _reduce_out.check("add", tuple(shape), axes, keepdims, out_shape, where_shape)
        got = None
    except ValueError as e:
        got = str(e)
    assert got == want


@pytest.mark.parametrize("src,a,o,want", [
    # a scalar result into a 1-d out: NumPy's error, not a broadcast fill
    ("r = a.sum(out=o)", np.arange(3.), np.ones(2), ValueError(
        "output parameter for reduction operation add has the wrong number of dimensions: "
        "Found 1 but expected 0")),
    ("r = a.max(axis=0, out=o, keepdims=True)", np.arange(6.).reshape(2, 3), np.ones((2, 3)),
     ValueError("operand was set up as a reduction along axis 0, but the length of the axis "
                "is 2 (it has to be 1)")),
    ("r = a.any(axis=1, out=o)", np.ones((2, 3)), np.ones(1, bool), ValueError(
        "output operand requires a reduction along dimension 0, but the reduction is not "
        "enabled. The dimension size of 1 does not match the expected output shape.")),
    ("r = np.ptp(a, axis=0, out=o)", np.arange(6.).reshape(2, 3), np.ones(2), ValueError(
        "operands could not be broadcast together with remapped shapes [original->remapped]: "
        "(2,)->(2) (2,3) ")),
    # the sum in int8 (15 wraps to 15), cast into out, divided there: 2.5
    ("r = a.mean(dtype=np.int8, out=o)", np.arange(6.), np.ones(()), np.array(2.5)),
    ("r = a.std(axis=0, out=o)", np.arange(6.).reshape(2, 3), np.ones(3, np.int8), TypeError(
        "Cannot cast ufunc 'sqrt' output from dtype('float16') to dtype('int8') with casting "
        "rule 'same_kind'")),
    ("r = np.nanmean(a, axis=0, out=o)", np.ones((2, 3)), np.ones(3, np.int64),
     TypeError("If a is inexact, then out must be inexact")),
    # median keepdims: NumPy writes out[0], not each row of out
    ("r = np.median(a, axis=0, out=o, keepdims=True)", np.arange(6.).reshape(2, 3),
     np.ones((2, 3)), np.array([[1.5, 2.5, 3.5], [1.0, 1.0, 1.0]])),
    ("r = np.argmax(a, axis=0, out=o)", np.arange(6.).reshape(2, 3), np.ones(3), TypeError(
        "Cannot cast array data from dtype('float64') to dtype('int64') according to the rule "
        "'safe'")),
    ("r = np.argmin(a, out=o, axis=0, keepdims=True)", np.arange(6.).reshape(2, 3),
     np.ones(3, np.int64), ValueError("output array does not match result of np.argmin.")),
    ("r = np.cumsum(a, out=o)", np.arange(6.).reshape(2, 3), np.ones((2, 3)),
     ValueError("provided out is the wrong size for the accumulation.")),
    ("r = np.cumsum(a, axis=0, out=o)", np.arange(6.).reshape(2, 3), np.ones((2, 1)),
     ValueError("non-broadcastable output operand with shape (2,1) [remapped to (1,2)] doesn't "
                "match the broadcast shape (2,3)")),
])
def test_known_cases(src, a, o, want):
    """The cases the campaign first met, each with NumPy's own answer
    spelled out (so NumPy's behaviour is pinned too)."""
    full = f"def f(a, o, w):\n    {src}\n    return r, r is o\n"
    ns = {"np": np}
    exec(full, ns)  # noqa: S102
    if isinstance(want, Exception):
        with pytest.raises(type(want)) as e:
            ns["f"](a.copy(), o.copy(), True)
        assert str(e.value) == str(want)
    else:
        o2 = o.copy()
        ns["f"](a.copy(), o2, True)
        assert np.array_equal(o2, want)
    _check(full, a, o, True)


def test_an_accumulation_into_an_out_numpy_fills_with_other_values_is_refused():
    """NumPy 1.24 takes an out with more dimensions than a cumsum's result
    and writes values that are not the cumsum into it; hop says so."""
    a = np.arange(6.).reshape(2, 3)
    with pytest.raises(ValueError, match="NumPy 1.24 takes some such outs and writes values"):
        np.cumsum(hnp.asarray(a), axis=0, out=hnp.zeros((2, 3, 2)))


@pytest.mark.parametrize("fn", ["cumsum", "cumprod", "nancumsum"])
def test_an_accumulation_into_a_0d_out_raises(fn):
    """NumPy 1.24 crashes the process on np.cumsum(a, out=<0-d array>) (a
    segmentation fault, not tried here); hop.numpy raises the error NumPy
    gives for every other out of the wrong size.  (hop.compile of it
    crashes as eager does: a trace that raises runs the function eagerly,
    by NumPy, for eager's own answer.)"""
    with pytest.raises(ValueError, match="^provided out is the wrong size for the accumulation.$"):
        getattr(np, fn)(hnp.asarray(np.arange(3.)), out=hnp.zeros(()))
