"""Ported from PyTorch's test/torch_np/test_reductions.py (issue #29): all
33 of its tests, its complex sums and means, its overflow warnings
(compared call by call) and the array axes and tuples of axes its torch
port skips included.  Each case runs by NumPy, by hop.compile and eagerly
on hop.numpy arrays over the same memory (numpy_diff.check with
eager=True; `raises`: NumPy, compiled and eager hop.numpy raise the same
exception type)."""

import functools
import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp

import numpy_diff
from numpy_diff import as_hop, copied, ported, same

check = functools.partial(numpy_diff.check, eager=True)


def raises(exc, fn, *args):
    """NumPy, the compiled fn and fn eagerly on hop.numpy arrays raise exc."""
    numpy_diff.raises(exc, fn, *args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc):
            fn(*as_hop(copied(args)))


SRC = "test_reductions.py"


@ported(SRC, "TestFlatnonzero.test_basic")
def test_flatnonzero_basic():
    check(lambda x: np.flatnonzero(x), np.arange(-2, 3))


@ported(SRC, "TestAny.test_basic")
def test_any_basic():
    check(lambda: (np.any([0, 0, 1, 0]), np.any([1, 0, 1, 0]), np.any([0, 0, 0, 0])))
    check(lambda y: (np.any(y), np.any(y[1:] * 0)), np.array([0, 0, 1, 0]))


@ported(SRC, "TestAny.test_nd")
def test_any_nd():
    check(lambda y: (np.any(y), np.any(y, axis=0), np.any(y, axis=1)),
          np.array([[0, 0, 0], [0, 1, 0], [1, 1, 0]]))


@ported(SRC, "TestAny.test_method_vs_function")
def test_any_method_vs_function():
    check(lambda y: (np.any(y), y.any()), np.array([[0, 1, 0, 3], [1, 0, 2, 0]]))


@ported(SRC, "TestAll.test_basic")
def test_all_basic():
    check(lambda y: (np.all(y), np.all(~(y * 0).astype(bool)), np.all(y + 1)),
          np.array([0, 1, 1, 0]))


@ported(SRC, "TestAll.test_nd")
def test_all_nd():
    check(lambda y: (np.all(y), np.all(y, axis=0), np.all(y, axis=1)),
          np.array([[0, 0, 1], [0, 1, 1], [1, 1, 1]]))


@ported(SRC, "TestAll.test_method_vs_function")
def test_all_method_vs_function():
    check(lambda y: (np.all(y), y.all()), np.array([[0, 1, 0, 3], [1, 0, 2, 0]]))


@ported(SRC, "TestMean.test_mean")
def test_mean():
    check(lambda a: (np.mean(a), np.mean(a, 0), np.mean(a, 1), np.mean(a) == a.mean(),
                     np.isnan(np.mean(a[:0]))), np.array([[1, 2, 3], [4, 5, 6]]))


@ported(SRC, "TestMean.test_mean_values")
def test_mean_values():
    check(lambda m: [np.mean(m, axis=ax) * (m.shape[ax] if ax is not None else m.size)
                     for ax in (0, 1, None)], np.arange(20, dtype=float).reshape((4, 5)))


@ported(SRC, "TestMean.test_mean_float16")
def test_mean_float16():
    check(lambda x: np.mean(x) == 1, np.ones(100000, dtype="float16"))


@ported(SRC, "TestMean.test_mean_where")
def test_mean_where():
    wh_full = np.array([[False, True, False, True], [True, False, True, False],
                        [True, True, False, False], [False, False, True, True]])
    wh_partial = np.array([[False], [True], [True], [False]])

    def f(a, wf, wp):
        a3d = a.reshape((2, 2, 4))
        w3 = np.array([False, True, True, False])
        return [a.mean(axis=1, where=True), np.mean(a, axis=0, where=wf),
                np.mean(a, axis=1, where=wf), np.mean(a, axis=0, where=wp),
                a3d.mean(axis=2, where=w3), a.mean(axis=1, where=wp), np.mean(a, where=False)]
    check(f, np.arange(16).reshape((4, 4)), wh_full, wh_partial)


@ported(SRC, "TestSum.test_sum")
def test_sum():
    check(lambda m: (np.sum(m, axis=1, keepdims=True), np.sum(m), m.sum()),
          np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]))


@ported(SRC, "TestSum.test_sum_stability")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_sum_stability(dt):
    # torch's bound: within 1.5e-4 of 0 (hop's float32 sum is more exact than NumPy's)
    want = (np.ones(500, dtype=dt) / 10.0).sum() - 50.0
    def f(a):
        return (a / 10.0).sum() - a.size / 10.0
    got = hop.compile(f)(np.ones(500, dtype=dt))
    assert type(got) is type(want) and abs(got) < 1.5e-4 and abs(want) < 1.5e-4
    eager = numpy_diff.as_numpy(f(hnp.ones(500, dtype=dt)))
    assert type(eager) is type(want) and abs(eager) < 1.5e-4


@ported(SRC, "TestSum.test_sum_boolean")
def test_sum_boolean():
    check(lambda x: ((x % 2 == 0).sum(), (x % 2 == 0).sum(dtype=np.float64)), np.arange(7))


@ported(SRC, "TestSum.test_sum_dtypes_2")
@pytest.mark.parametrize("dt", [int, np.float16, np.float32, np.float64])
def test_sum_of_strided_and_flipped(dt):
    def f(d):
        r = [np.sum(d[::2]), np.sum(d[1::2]), np.sum(d[::3]), np.sum(d[1::3]),
             np.sum(np.flip(d)[::2]), np.sum(np.flip(d)[1::2]), np.sum(np.flip(d)[::3]),
             np.sum(np.flip(d)[1::3])]
        e = np.ones((1,), dtype=dt)
        e += e
        return r + [e]
    check(f, np.ones(500, dtype=dt))


@ported(SRC, "TestSum.test_sum_initial")
def test_sum_initial():
    check(lambda x: (np.sum(x[:1], initial=2), np.sum(x[:1] * 0.2, initial=0.1),
                     np.sum(np.ones((2, 3, 5), dtype=np.int64), axis=(0, 2), initial=2)),
          np.array([3]))


@ported(SRC, "TestSum.test_sum_where")
def test_sum_where():
    check(lambda a: (np.sum(a, where=[True, False]),
                     np.sum(a, axis=0, initial=5.0, where=[True, False])),
          np.array([[1.0, 2.0], [3.0, 4.0]]))


@ported(SRC, "TestMean.test_mean_values")
def test_mean_values_complex():
    check(lambda r: [np.mean(m, axis=ax) * (m.shape[ax] if ax is not None else m.size)
                     for m in (r + 1j * r,) for ax in (0, 1, None)],
          np.arange(20, dtype=float).reshape((4, 5)))


def _sum_warnings(fn, d):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always", RuntimeWarning)
        r = fn(d)
    return r, sorted(str(x.message) for x in w)


@ported(SRC, "TestSum.test_sum_dtypes_warnings")
@pytest.mark.parametrize("dt", [int, np.float16, np.float32, np.float64])
def test_sum_dtypes_warnings(dt):
    # NumPy's sum and hop's compiled one: the same values (float16's
    # overflow to inf included) and the same overflow warnings, once a call
    def f(d):
        return np.sum(d), np.sum(np.flip(d))
    cf = hop.compile(f)
    for v in (0, 1, 2, 7, 8, 9, 15, 16, 19, 127, 128, 1024, 1235):
        d = np.arange(1, v + 1, dtype=dt)
        want, wwarn = _sum_warnings(f, d)
        got, gwarn = _sum_warnings(cf, d)
        same(got, want, rtol=1e-3 if dt is np.float16 else None, path=f"v={v}")
        assert gwarn == wwarn, (v, gwarn, wwarn)
        eager, ewarn = _sum_warnings(f, hnp.asarray(d.copy()))
        same(numpy_diff.as_numpy(eager), want, rtol=1e-3 if dt is np.float16 else None,
             path=f"eager v={v}")
        assert ewarn == wwarn, (v, ewarn, wwarn)


@ported(SRC, "TestSum.test_sum_complex_1")
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_sum_complex_1(dt):
    def f(d):
        e = np.empty(d.shape[0], dtype=dt)
        e.real = d
        e.imag = -d
        return np.sum(e), np.sum(np.flip(e))
    for v in (0, 1, 2, 7, 8, 9, 15, 16, 19, 127, 128, 1024, 1235):
        check(f, np.arange(1, v + 1))


@ported(SRC, "TestSum.test_sum_complex_2")
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_sum_complex_2(dt):
    def f(d):
        r = [np.sum(d[::2]), np.sum(d[1::2]), np.sum(d[::3]), np.sum(d[1::3]),
             np.sum(np.flip(d)[::2]), np.sum(np.flip(d)[1::2]), np.sum(np.flip(d)[::3]),
             np.sum(np.flip(d)[1::3])]
        e = np.ones((1,), dtype=dt) + 1j
        e += e
        return r + [e]
    check(f, np.ones(500, dtype=dt) + 1j)


FUNCS = [np.any, np.all, np.argmin, np.argmax, np.min, np.max, np.mean, np.sum, np.prod, np.std,
         np.var, np.count_nonzero]
AXES = [0, 1, 2, -1, -2, (0, 1), (1, 0), (0, 1, 2), (1, -1, 0)]
NO_TUPLE = {np.argmin, np.argmax}


@ported(SRC, "TestGenericReductions.test_bad_axis")
@pytest.mark.parametrize("func", FUNCS)
def test_generic_bad_axis(func):
    m = np.array([[0, 1, 7, 0, 0], [3, 0, 0, 2, 19]])
    raises(TypeError, lambda m: func(m, axis="foo"), m)
    raises(np.AxisError, lambda m: func(m, axis=3), m)
    raises(TypeError, lambda m: func(m, axis=1.5), m)
    raises(TypeError, lambda m: func(m, axis=np.array([[1], [2]])), m)


@ported(SRC, "TestGenericReductions.test_array_axis")
@pytest.mark.parametrize("func", FUNCS)
def test_generic_array_axis(func):
    check(lambda a: (func(a, axis=np.array(-1)), func(a, axis=-1)),
          np.array([[0, 1, 7, 0, 0], [3, 0, 0, 2, 19]]))
    raises(TypeError, lambda a: func(a, axis=np.array([1, 2])),
           np.array([[0, 1, 7, 0, 0], [3, 0, 0, 2, 19]]))


@ported(SRC, "TestGenericReductions.test_axis_empty_generic")
@pytest.mark.parametrize("func", [f for f in FUNCS if f not in NO_TUPLE])
def test_generic_axis_empty_tuple(func):
    check(lambda a: (func(a, axis=()), func(np.expand_dims(a, axis=0), axis=0)),
          np.array([[0, 0, 1], [1, 0, 1]]))


@ported(SRC, "TestGenericReductions.test_axis_bad_tuple")
@pytest.mark.parametrize("func", [f for f in FUNCS if f not in NO_TUPLE])
def test_generic_axis_bad_tuple(func):
    raises(ValueError, lambda m: func(m, axis=(1, 1)), np.array([[0, 1, 7, 0, 0],
                                                                 [3, 0, 0, 2, 19]]))


@ported(SRC, "TestGenericReductions.test_keepdims_generic")
@pytest.mark.parametrize("func", [f for f in FUNCS if f not in NO_TUPLE])
@pytest.mark.parametrize("axis", AXES)
def test_generic_keepdims(func, axis):
    check(lambda a: (func(a, axis, keepdims=True),
                     np.expand_dims(func(a, axis=axis), axis=axis)),
          np.arange(2 * 3 * 4).reshape((2, 3, 4)))


@ported(SRC, "TestGenericReductions.test_keepdims_generic_axis_none")
@pytest.mark.parametrize("func", FUNCS)
def test_generic_keepdims_axis_none(func):
    check(lambda a: (func(a, axis=None, keepdims=True),
                     np.full((1,) * a.ndim, fill_value=func(a, axis=None))),
          np.arange(2 * 3 * 4).reshape((2, 3, 4)))


@ported(SRC, "TestGenericReductions.test_out_scalar")
@pytest.mark.parametrize("func", [f for f in FUNCS if f is not np.count_nonzero])
def test_generic_out_scalar(func):
    def f(a):
        result = func(a)
        out = np.empty_like(result)
        r = func(a, out=out)
        return r is out, r, result
    check(f, np.arange(2 * 3 * 4).reshape((2, 3, 4)))


@ported(SRC, "TestGenericReductions.test_out_axis")
@pytest.mark.parametrize("func", [f for f in FUNCS if f not in NO_TUPLE and
                                  f not in (np.count_nonzero, np.std, np.var)])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("dtype", [bool, "int32", "float64"])
@pytest.mark.parametrize("keepdims", [True, False])
def test_generic_out_axis(func, axis, dtype, keepdims):
    def f(a):
        result = func(a, axis=axis, keepdims=keepdims).astype(dtype)
        out = np.empty_like(result, dtype=dtype)
        r = func(a, axis=axis, keepdims=keepdims, out=out)
        return r is out, r.dtype, r, result
    check(f, np.arange(2 * 3 * 4).reshape((2, 3, 4)))


@ported(SRC, "TestGenericReductions.test_keepdims_out")
@pytest.mark.parametrize("func", [f for f in FUNCS if f not in NO_TUPLE and
                                  f is not np.count_nonzero])
@pytest.mark.parametrize("axis", AXES[:5] + [(0, 1)])
def test_generic_keepdims_out(func, axis):
    def f(d):
        ax = (axis,) if isinstance(axis, int) else axis
        ax = tuple(x % d.ndim for x in ax)
        shape_out = tuple(1 if i in ax else d.shape[i] for i in range(d.ndim))
        out = np.empty(shape_out)
        r = func(d, axis=axis, keepdims=True, out=out)
        return r is out, r.shape, r
    check(f, np.ones((3, 5, 7, 11)))


@ported(SRC, "TestGenericCumSumProd.test_bad_axis")
@pytest.mark.parametrize("func", [np.cumsum, np.cumprod])
def test_cumulative_bad_axis(func):
    m = np.array([[0, 1, 7, 0, 0], [3, 0, 0, 2, 19]])
    raises(TypeError, lambda m: func(m, axis="foo"), m)
    raises(np.AxisError, lambda m: func(m, axis=3), m)
    raises(TypeError, lambda m: func(m, axis=1.5), m)
    raises(TypeError, lambda m: func(m, axis=np.array([[1], [2]])), m)


@ported(SRC, "TestGenericCumSumProd.test_array_axis")
@pytest.mark.parametrize("func", [np.cumsum, np.cumprod])
def test_cumulative_array_axis(func):
    check(lambda a: (func(a, axis=np.array(-1)), func(a, axis=-1)),
          np.array([[0, 1, 7, 0, 0], [3, 0, 0, 2, 19]]))
    raises(TypeError, lambda a: func(a, axis=np.array([1, 2])),
           np.array([[0, 1, 7, 0, 0], [3, 0, 0, 2, 19]]))


@ported(SRC, "TestGenericCumSumProd.test_axis_empty_generic")
@pytest.mark.parametrize("func", [np.cumsum, np.cumprod])
def test_cumulative_axis_none(func):
    check(lambda a: (func(a, axis=None), func(a.ravel(), axis=0)),
          np.array([[0, 0, 1], [1, 0, 1]]))


@ported(SRC, "TestGenericCumSumProd.test_axis_bad_tuple")
@pytest.mark.parametrize("func", [np.cumsum, np.cumprod])
def test_cumulative_axis_bad_tuple(func):
    raises(TypeError, lambda m: func(m, axis=(1, 1)), np.array([[0, 1, 7, 0, 0],
                                                                [3, 0, 0, 2, 19]]))
