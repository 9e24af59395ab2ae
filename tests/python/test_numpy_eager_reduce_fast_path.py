"""The eager fast path of hop.numpy's reductions (`a.sum()`, `np.sum(a)`,
`a.mean()`, `a.max(axis)`, _eager._reduce_plan run by python/_C/np_eager.c)
and of NumPy's overrides (`np.sin(a)` through ndarray.__array_ufunc__, a C
method): it gives what the general path gives, bit for bit (the value, the
dtype, the type: a hop.numpy.ndarray that is a NumPy scalar's 0-d array for a
full reduction, its warnings), and what NumPy 1.24 gives; it takes the plain
calls and leaves the rest (keywords but axis, 0-d and empty arrays, an axis
out of range, a tuple of axes, results of two or more dimensions, errstate
that raises, tracing) to the general path."""
import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from hop import _C
from hop.numpy import _eager
from hop.numpy._ndarray import ndarray

DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int32", "int64", "bool",
          "complex64", "complex128"]
# small ints: every sum and mean of them is exact in every order, so NumPy's
# pairwise order and hop's kernels give the same bits
_VALUES = [3, 1, -2, 0, 7, -5, 4, 2, -1, 5, 6, -3, 1, 2, -4, 8]
SHAPES = [(1,), (16,), (4, 4), (3, 5)]
CALLS = {
    "a.sum()": lambda a: a.sum(), "np.sum(a)": lambda a: np.sum(a),
    "a.mean()": lambda a: a.mean(), "np.mean(a)": lambda a: np.mean(a),
    "a.max()": lambda a: a.max(), "np.max(a)": lambda a: np.max(a),
    "a.min()": lambda a: a.min(), "np.amin(a)": lambda a: np.amin(a),
    "a.prod()": lambda a: a.prod(), "a.sum(0)": lambda a: a.sum(0),
    "a.sum(axis=-1)": lambda a: a.sum(axis=-1), "np.sum(a, axis=0)": lambda a: np.sum(a, axis=0),
    "a.mean(axis=-1)": lambda a: a.mean(axis=-1), "np.mean(a, -1)": lambda a: np.mean(a, -1),
    "a.max(0)": lambda a: a.max(0), "np.min(a, axis=-1)": lambda a: np.min(a, axis=-1),
    "a.sum(None)": lambda a: a.sum(None),
    "a.argmax()": lambda a: a.argmax(), "np.argmax(a)": lambda a: np.argmax(a),
    "a.argmin()": lambda a: a.argmin(), "np.argmin(a, 0)": lambda a: np.argmin(a, 0),
    "a.argmax(axis=-1)": lambda a: a.argmax(axis=-1), "a.argmin(None)": lambda a: a.argmin(None),
    "a.any()": lambda a: a.any(), "np.all(a)": lambda a: np.all(a), "a.all(0)": lambda a: a.all(0),
    "np.any(a, axis=-1)": lambda a: np.any(a, axis=-1),
    "a.cumsum()": lambda a: a.cumsum(), "np.cumsum(a)": lambda a: np.cumsum(a),
    "a.cumprod()": lambda a: a.cumprod(), "np.cumsum(a, 0)": lambda a: np.cumsum(a, 0),
    "a.cumsum(axis=-1)": lambda a: a.cumsum(axis=-1),
}
UNARY = {"np.sin(a)": np.sin, "np.exp(a)": np.exp, "np.sqrt(a)": np.sqrt, "np.cos(a)": np.cos,
         "np.negative(a)": np.negative, "np.absolute(a)": np.absolute}
LIBM = {"np.sin(a)", "np.exp(a)", "np.cos(a)"}


def _arrays(dtype, shape):
    """NumPy arrays of dtype and shape: C order, F order and a strided view."""
    n = int(np.prod(shape))
    x = np.array((_VALUES * 2)[:n], np.int64).astype(dtype).reshape(shape)
    wide = np.array((_VALUES * 4)[:2 * n], np.int64).astype(dtype)
    strided = wide[::2].reshape(shape) if len(shape) == 1 else \
        wide.reshape(shape[0], 2 * shape[1])[:, ::2]
    return [x, np.asfortranarray(x), strided]


def _general(fn):
    """fn() with the fast path off on this thread (the general path's answer)."""
    _C._np_eager_off(1)
    try:
        return fn()
    finally:
        _C._np_eager_off(-1)


def _outcome(fn, *args):
    """fn(*args) as (its result or its exception, the text of its warnings)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(*args)
        except Exception as e:  # noqa: BLE001 - compared
            r = e
    return r, [(x.category, str(x.message)) for x in w]


def _bits(r):
    """Everything of a hop.numpy result the user can tell apart."""
    assert type(r) is ndarray, type(r)
    v = np.asarray(r)
    return (r._scalar, v.dtype, v.shape, v.strides, v.tobytes())


def _same_as_general(fn, a):
    """fn(a) by the fast path and by the general path: the same bits, the same
    warnings, or the same error."""
    (fast, wf), (gen, wg) = _outcome(fn, a), _general(lambda: _outcome(fn, a))
    assert wf == wg
    if isinstance(gen, Exception):
        assert type(fast) is type(gen) and str(fast) == str(gen)
        return None
    assert _bits(fast) == _bits(gen)
    return fast


def _same_as_numpy(got, want, ulps=False):
    """A hop.numpy result against NumPy's: a NumPy scalar is a hop.numpy 0-d
    array marked as one (its __class__ to traced code); the dtype, the shape
    and the value bit for bit (libm functions within 4 ulps)."""
    assert got._scalar == isinstance(want, np.generic), (got._scalar, type(want))
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    if ulps and w.dtype.kind in "fc":
        eps = np.finfo(w.dtype).eps
        np.testing.assert_allclose(g, w, rtol=4 * eps, atol=4 * eps)
    else:
        assert g.tobytes() == w.tobytes(), (g, w)


def _taken(name, a, axis=None):
    """Whether the fast path has a plan for reduction name of a over axis."""
    t = a._t
    code = 0 if axis is None else 1 + axis % t.ndim
    return _eager._PLANS.get((f"reduce:{name}", t.dtype, t.ndim * 16 + code)) is not None


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_reduction_of_every_dtype_and_layout_is_the_general_paths_and_numpys(dtype):
    for shape in SHAPES:
        for x in _arrays(dtype, shape):
            for text, fn in CALLS.items():
                a = hnp.asarray(x)
                fast = _same_as_general(fn, a)
                want, _ = _outcome(fn, x)
                if isinstance(want, Exception):
                    assert fast is None, text
                    continue
                _same_as_numpy(fast, want)


def test_the_plain_reductions_take_the_fast_path():
    _eager._PLANS.clear()
    a, b = hnp.asarray(np.arange(16.0)), hnp.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    a.sum(), np.sum(a), a.mean(), a.max(), np.min(a), a.prod()
    b.sum(0), np.mean(b, axis=1), b.max(axis=-1), np.amin(b, 0)
    for name, arr, axis in [("sum", a, None), ("mean", a, None), ("max", a, None),
                            ("min", a, None), ("prod", a, None), ("sum", b, 0),
                            ("mean", b, 1), ("max", b, 1), ("min", b, 0)]:
        assert _taken(name, arr, axis), (name, axis)


def test_cumsum_and_cumprod_of_vectors_and_whole_arrays_take_the_fast_path():
    # a 1-d array along its axis, or any array with axis None (the
    # flattened array in C order); a result of 2+ dims and complex are the
    # general path's; small ints accumulate in NumPy's wider dtype
    _eager._PLANS.clear()
    v = hnp.asarray(np.array([100, 100, 100, -50], np.int8))
    m = hnp.asarray(np.arange(1.0, 13.0).reshape(3, 4))
    f = hnp.asarray(np.asfortranarray(np.arange(1.0, 13.0).reshape(3, 4)))
    for arr, fn, name, axis in ((v, lambda a: a.cumsum(), "cumsum", None),
                                (v, lambda a: np.cumprod(a, 0), "cumprod", 0),
                                (m, lambda a: a.cumsum(), "cumsum", None),
                                (f, lambda a: np.cumsum(a), "cumsum", None)):
        got = _same_as_general(fn, arr)
        _same_as_numpy(got, fn(np.asarray(arr)))
        assert _taken(name, arr, axis), (name, axis)
    for arr, axis in ((m, 0), (m, 1), (f, 0)):
        got = _same_as_general(lambda a: a.cumsum(axis), arr)
        _same_as_numpy(got, np.asarray(arr).cumsum(axis))
        assert not _taken("cumsum", arr, axis)
    c = hnp.asarray(np.array([1 + 1j, 2j]))
    _same_as_numpy(_same_as_general(lambda a: a.cumsum(), c), np.asarray(c).cumsum())
    assert not _taken("cumsum", c)
    big = hnp.asarray(np.array([1e308, 1e308]))
    got = _outcome(lambda a: a.cumsum(), big)
    want = _outcome(lambda a: a.cumsum(), np.asarray(big))
    assert got[1] == want[1] and np.asarray(got[0]).tolist() == want[0].tolist()


def test_any_and_all_take_the_fast_path_and_read_truth_as_numpy():
    # NaN and -0.0 are true and false as NumPy reads them; a full reduction
    # is a NumPy bool scalar; complex is the general path's
    _eager._PLANS.clear()
    for v in ([0.0, -0.0], [0.0, np.nan], [0.0, 1e-300], [1.0, 2.0], [np.inf, 0.0]):
        for dtype in ("float16", "float32", "float64"):
            x = np.array(v, dtype)
            a = hnp.asarray(x)
            for op in ("any", "all"):
                got = _same_as_general(lambda a: getattr(a, op)(), a)
                _same_as_numpy(got, getattr(x, op)())
                assert _taken(op, a)
    m = hnp.asarray(np.array([[0, 3, 0], [0, 0, 5]], np.uint8))
    for op, axis in (("any", 0), ("all", 1), ("any", -1)):
        got = _same_as_general(lambda a: getattr(a, op)(axis), m)
        _same_as_numpy(got, getattr(np.asarray(m), op)(axis))
        assert _taken(op, m, axis)
    c = hnp.asarray(np.array([0j, 1j]))
    _same_as_numpy(_same_as_general(lambda a: a.any(), c), np.asarray(c).any())
    assert not _taken("any", c)


def test_argmax_and_argmin_take_the_fast_path_and_find_numpys_index():
    # the first of equal extremes, the first NaN, in every layout (the
    # index is into C order); a bool array ordered False < True; complex
    # and a result of two or more dims are the general path's
    _eager._PLANS.clear()
    nan = np.nan
    cases = [[1.0, 3.0, 3.0, -2.0, -2.0], [nan, 1.0, nan], [1.0, nan, 5.0, nan], [-0.0, 0.0],
             [np.inf, 1.0, np.inf], [-np.inf, nan, -np.inf], [2.0, 2.0, 2.0]]
    for dtype in ("float16", "float32", "float64"):
        for v in cases:
            x = np.array(v, dtype)
            a = hnp.asarray(x)
            for op in ("argmax", "argmin"):
                got = _same_as_general(lambda a: getattr(a, op)(), a)
                _same_as_numpy(got, getattr(x, op)())
                assert _taken(op, a)
    m = hnp.asarray(np.array([[1, 5, 5], [7, 0, 7]], np.int16))
    for op, axis in (("argmax", 0), ("argmin", 1), ("argmax", -1)):
        got = _same_as_general(lambda a: getattr(a, op)(axis), m)
        _same_as_numpy(got, getattr(np.asarray(m), op)(axis))
        assert _taken(op, m, axis)
    _eager._PLANS.clear()
    _same_as_numpy(_same_as_general(lambda a: hnp.argmin(a, 0), m), np.argmin(np.asarray(m), 0))
    assert _taken("argmin", m, 0)
    b = hnp.asarray(np.array([False, True, True, False]))
    _same_as_numpy(_same_as_general(lambda a: a.argmax(), b), np.array([0, 1, 1, 0]).argmax())
    assert _taken("argmax", b)
    c = hnp.asarray(np.array([1 + 1j, 1 + 2j, 0j]))
    _same_as_numpy(_same_as_general(lambda a: a.argmax(), c), np.asarray(c).argmax())
    assert not _taken("argmax", c)
    t = hnp.asarray(np.arange(24.0).reshape(2, 3, 4))
    _same_as_numpy(_same_as_general(lambda a: a.argmax(1), t), np.asarray(t).argmax(1))
    assert not _taken("argmax", t, 1)
    for bad in (lambda: hnp.zeros(0).argmax(), lambda: t.argmax(3), lambda: t.argmax(1.0)):
        _same_as_general(lambda a: bad(), t)
    with pytest.raises(ValueError, match="empty sequence"):
        hnp.zeros(0).argmax()


def test_full_reductions_are_numpy_scalars_of_numpys_dtype():
    for dtype, want in [("float32", np.float32), ("float64", np.float64), ("float16", np.float16),
                        ("int8", np.int64), ("uint8", np.uint64), ("bool", np.int64)]:
        a = hnp.asarray(np.ones(16, dtype))
        for r in (a.sum(), np.sum(a)):
            assert r._scalar and r.ndim == 0 and np.asarray(r).dtype == want
            assert isinstance(np.asarray(r)[()], want)
    m = hnp.asarray(np.ones(16, np.float32)).mean()
    assert m._scalar and np.asarray(m).dtype == np.float32
    assert hnp.asarray(np.ones(16, np.int32)).mean().dtype == np.float64
    assert hnp.asarray(np.ones(16, bool)).max().dtype == np.bool_
    assert not hnp.asarray(np.ones((2, 3))).sum(0)._scalar


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_unary_ufuncs_through_array_ufunc_are_the_general_paths_and_numpys(dtype):
    for shape in SHAPES:
        for x in _arrays(dtype, shape):
            for text, fn in UNARY.items():
                fast = _same_as_general(fn, hnp.asarray(x))
                with np.errstate(all="ignore"):
                    want, _ = _outcome(fn, x)
                if isinstance(want, Exception):
                    assert fast is None, text
                    continue
                if fast is not None:
                    g = np.asarray(fast)
                    assert not fast._scalar and g.dtype == want.dtype and g.shape == want.shape
                    if text in LIBM and want.dtype.kind in "fc":
                        eps = np.finfo(want.dtype).eps
                        np.testing.assert_allclose(g, want, rtol=4 * eps, atol=4 * eps)
                    else:
                        np.testing.assert_array_equal(g, want)


def test_zero_d_and_empty_arrays_take_the_general_path():
    _eager._PLANS.clear()
    z = hnp.asarray(np.array(2.5))
    for fn in (lambda a: a.sum(), lambda a: np.sum(a), lambda a: a.max(), lambda a: a.mean(),
               lambda a: a.sum(0), lambda a: np.mean(a, axis=-1)):
        r, (want, _) = _same_as_general(fn, z), _outcome(fn, np.array(2.5))
        if isinstance(want, Exception):  # (np.mean(z, axis=-1): NumPy's AxisError)
            with pytest.raises(type(want), match=str(want)):
                fn(z)
        else:
            _same_as_numpy(r, want)
    assert not any(k[0].startswith("reduce:") for k in _eager._PLANS)
    for shape in [(0,), (2, 0), (0, 3)]:
        x = np.zeros(shape)
        for text, fn in CALLS.items():
            got, wh = _outcome(fn, hnp.asarray(x))
            want, wn = _outcome(fn, x)
            _same_as_general(fn, hnp.asarray(x))
            if isinstance(want, Exception):
                assert type(got) is type(want) and str(got) == str(want), text
            else:
                _same_as_numpy(got, want)
                # (NumPy's "Mean of empty slice." the general path does not
                # give: a known divergence of hop.numpy's mean, not the fast
                # path's, which leaves empty arrays to it)
                assert wh == wn or "mean" in text, text
    assert not any(k[0].startswith("reduce:") and v is not None for k, v in _eager._PLANS.items()
                   if k[2] % 16 == 0 and k[2] // 16 == 0)


def test_what_the_reductions_leave_to_the_general_path():
    x = np.arange(24.0).reshape(2, 3, 4)
    a = hnp.asarray(x)
    _eager._PLANS.clear()
    cases = [lambda a: a.sum(axis=(0, 1)), lambda a: a.sum(0), lambda a: np.sum(a, 1),
             lambda a: a.sum(keepdims=True), lambda a: a.sum(0, keepdims=True),
             lambda a: a.sum(dtype=np.float32), lambda a: a.max(initial=100.0),
             lambda a: a.sum(where=np.arange(4) > 1), lambda a: np.mean(a, axis=np.int64(1)),
             lambda a: a.mean(axis=True), lambda a: a.sum(None, None), lambda a: a.mean(0, float)]
    for fn in cases:
        got, (want, _) = _same_as_general(fn, a), _outcome(fn, x)
        if isinstance(want, Exception):  # (axis=True: NumPy's TypeError)
            with pytest.raises(type(want), match=str(want)):
                fn(a)
        else:
            _same_as_numpy(got, want)
    assert all(v is None for k, v in _eager._PLANS.items() if k[0].startswith("reduce:"))
    # an axis out of range: NumPy's AxisError, from the general path
    for fn in (lambda a: a.sum(3), lambda a: np.sum(a, axis=-4), lambda a: a.max(5)):
        with pytest.raises(np.AxisError, match="out of bounds"):
            fn(a)
    # out=: written, as NumPy writes it
    out = hnp.zeros(4)
    assert np.sum(hnp.asarray(np.ones((3, 4))), axis=0, out=out) is out
    assert out.tolist() == [3.0] * 4
    # a max of nothing: NumPy's error
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        hnp.zeros(0).max()
    # complex max, min and mean: the general path's plan is None
    c = hnp.asarray(np.array([1 + 2j, 3 - 1j]))
    _same_as_numpy(c.max(), np.array([1 + 2j, 3 - 1j]).max())
    _same_as_numpy(c.mean(), np.array([1 + 2j, 3 - 1j]).mean())
    assert _eager._PLANS[("reduce:max", c._t.dtype, 16)] is None


def test_warnings_and_errstate_are_the_general_paths_and_numpys():
    big = hnp.asarray(np.full(16, 3e38, np.float32))
    for fn in CALLS.values():
        _same_as_general(fn, big)
        with np.errstate(over="raise", invalid="raise"):
            _same_as_general(fn, big)
    # a unary ufunc's floating-point warnings are NumPy's, under NumPy's state
    neg = hnp.asarray(-np.arange(1.0, 17.0))
    r, w = _outcome(np.sqrt, neg)
    assert w == [(RuntimeWarning, "invalid value encountered in sqrt")]
    assert np.isnan(np.asarray(r)).all()
    with np.errstate(invalid="ignore"):
        assert _outcome(np.sqrt, neg)[1] == []
    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError, match="invalid value encountered in sqrt"):
            np.sqrt(neg)
    with np.errstate(invalid="raise"):  # (a reduction's gates: the general path answers)
        assert hnp.asarray(np.arange(16.0)).sum().tolist() == 120.0


def test_the_methods_fall_back_and_name_themselves():
    a = hnp.asarray(np.arange(6.0).reshape(2, 3))
    assert ndarray.sum.__name__ == "sum" and ndarray.mean.__module__ == "hop.numpy._funcs"
    assert "eager fast path" in repr(ndarray.max)
    assert ndarray.sum(a).tolist() == 15.0 and a.sum.__self__ is a
    assert a.sum(axis=1, keepdims=True).tolist() == [[3.0], [12.0]]
    assert a.max(-1).tolist() == [2.0, 5.0] and a.min(axis=None).tolist() == 0.0
    assert a.__array_ufunc__(np.add, "__call__", a, a).tolist() == (2 * np.arange(6.0)).reshape(
        2, 3).tolist()
    assert a.__array_function__(np.sum, (ndarray,), (a,), {}).tolist() == 15.0
    # the ufunc's other methods and keywords: the general path
    assert np.add.reduce(a, axis=0).tolist() == [3.0, 5.0, 7.0]
    out = hnp.zeros((2, 3))
    assert np.sqrt(a, out=out) is out
    assert out.tolist() == np.sqrt(np.arange(6.0).reshape(2, 3)).tolist()
    with pytest.raises(TypeError):
        a.sum(1, 2, 3, 4, 5, 6, 7, 8)


def test_inside_hop_compile_the_reductions_are_traced_not_planned():
    real = _eager._reduce_plan
    try:
        _eager._reduce_plan = lambda *a: pytest.fail("planned while tracing")
        cf = hop.compile(lambda a: a.sum() + np.mean(a, axis=0).max())
        x = np.arange(12.0).reshape(3, 4)
        for _ in range(2):
            assert cf(hnp.asarray(x)).tolist() == x.sum() + np.mean(x, axis=0).max()
        gm = hop.trace(lambda t: hnp.asarray(t).sum()._t, hop.tensor([1.0, 2.0]))
        assert gm(hop.tensor([1.0, 3.0])).tolist() == 4.0
    finally:
        _eager._reduce_plan = real
