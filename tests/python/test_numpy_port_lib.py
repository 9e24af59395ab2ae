"""Ported from PyTorch's test/torch_np/numpy_tests/lib/ (issue #29):
test_twodim_base.py, test_arraysetops.py, test_histograms.py,
test_type_check.py, test_index_tricks.py, test_shape_base_.py,
test_arraypad.py and test_nanfunctions.py, each call run by NumPy, eagerly by hop.numpy and by
hop.compile (numpy_diff.check).  Complex inputs are another issue's and
left out."""

import functools

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from numpy_diff import ported
import numpy_diff

# each case by NumPy, by eager hop.numpy (every ndarray argument through
# hop.numpy.asarray) and compiled (the forty-eighth session)
check = functools.partial(numpy_diff.check, eager=True)
raises = functools.partial(numpy_diff.raises, eager=True)


def _src(name):
    def port(test):
        return ported(f"numpy_tests/lib/{name}", test)
    return port


# ------------------------------------------------------- test_twodim_base

port = _src("test_twodim_base.py")


@port("TestEye.test_basic")
@port("TestEye.test_diag")
@port("TestEye.test_2d")
@port("TestEye.test_diag2d")
@port("TestEye.test_eye_bounds")
@port("TestEye.test_bool")
@port("TestEye.test_order")
def test_eye():
    def f(x):
        r = [np.eye(4), np.eye(4, dtype="f"), np.eye(3) == 1, np.eye(3, dtype=bool), np.eye(4, k=1),
             np.eye(4, k=-1), np.eye(4, 3), np.eye(3, 4), np.eye(3, 4, k=2), np.eye(4, 3, k=-2),
             np.eye(4, 3, k=-1, order="F")]
        r += [np.eye(n, m, k) for n, m, k in [(2, 2, 1), (2, 2, -1), (2, 2, 2), (2, 2, -2),
                                              (3, 2, 2), (3, 2, 1), (3, 2, -1), (3, 2, -2),
                                              (3, 2, -3)]]
        return [e + x for e in r]
    check(f, np.array(0))


@port("TestDiag.test_vector")
@port("TestDiag.test_matrix")
@port("TestDiag.test_fortran_order")
@port("TestDiag.test_diag_bounds")
def test_diag():
    def f(vals):
        b = np.zeros((5, 5))
        for k in range(5):
            b[k, k] = vals[k]
        b2, c2 = np.zeros((7, 7)), np.zeros((7, 7))
        for k in range(5):
            b2[k, k + 2] = vals[k]
            c2[k + 2, k] = vals[k]
        return np.diag(vals), b, np.diag(vals, k=2), b2, np.diag(vals, k=-2), c2
    check(f, (100 * np.arange(5)).astype("l"))
    m = (100 * (np.arange(5)[:, None] + np.arange(5)[None, :]) + 1).astype("l")
    check(lambda v: (np.diag(v), np.diag(v, 2), np.diag(v, -2), np.diag(v.T.copy().T)), m)
    check(lambda a: [np.diag(a, k=k) for k in range(-3, 3)], np.array([[1, 2], [3, 4], [5, 6]]))


@port("TestDiag.test_failure")
def test_diag_failure():
    raises(ValueError, lambda x: np.diag(x), np.array([[[1]]]))


@port("TestFliplr.test_basic")
@port("TestFlipud.test_basic")
def test_fliplr_flipud():
    raises(ValueError, lambda x: np.fliplr(x), np.ones(4))
    a = np.arange(4)[:, None] + np.arange(4)[None, :]
    check(lambda a: (np.fliplr(a), np.flip(a, 1), np.flipud(a), np.flip(a, 0)), a)
    check(lambda: (np.fliplr([[0, 1, 2], [3, 4, 5]]), np.flipud([[0, 1, 2], [3, 4, 5]])))


@port("TestHistogram2d.test_simple")
def test_histogram2d_simple():
    x = np.array([0.41702200, 0.72032449, 1.1437481e-4, 0.302332573, 0.146755891])
    y = np.array([0.09233859, 0.18626021, 0.34556073, 0.39676747, 0.53881673])
    check(lambda x, y, e: (np.histogram2d(x, y, (e, e))[0], np.histogram2d(x, y, e)[0]), x, y,
          np.linspace(0, 1, 10))
    check(lambda r: np.histogram2d(r, r), np.arange(10))


@port("TestHistogram2d.test_asym")
@port("TestHistogram2d.test_density")
@port("TestHistogram2d.test_all_outliers")
@port("TestHistogram2d.test_empty")
@port("TestHistogram2d.test_binparameter_combination")
def test_histogram2d_more():
    check(lambda x, y: np.histogram2d(x, y, (6, 5), range=[[0, 6], [0, 5]], density=True),
          np.array([1, 1, 2, 3, 4, 4, 4, 5]), np.array([1, 3, 2, 0, 1, 2, 3, 4]))
    check(lambda x, y: np.histogram2d(x, y, [[1, 2, 3, 5], [1, 2, 3, 5]], density=True),
          np.array([1, 2, 3, 1, 2, 3, 1, 2, 3]), np.array([1, 1, 1, 2, 2, 2, 3, 3, 3]))
    check(lambda r: np.histogram2d(r, r, (4, 5), range=([0, 1], [0, 1])),
          np.random.default_rng(0).random(100) + 1.0 + 1e6)
    check(lambda e: (np.histogram2d(e, e, bins=([0, 1], [0, 1])), np.histogram2d(e, e, bins=4)),
          np.array([]))
    x = np.array([0, 0.09207008, 0.64575234, 0.12875982, 0.47390599, 0.59944483, 1])
    y = np.array([0, 0.14344267, 0.48988575, 0.30558665, 0.44700682, 0.15886423, 1])
    edges = (0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1)
    check(lambda x, y: (np.histogram2d(x, y, (edges, 4)), np.histogram2d(x, y, (4, edges))), x, y)


@port("TestHistogram2d.test_bad_length")
@pytest.mark.parametrize("x_len,y_len", [(10, 11), (20, 19)])
def test_histogram2d_bad_length(x_len, y_len):
    raises(ValueError, lambda x, y: np.histogram2d(x, y), np.ones(x_len), np.ones(y_len))


@port("TestTri.test_dtype")
@port("TestTri.test_tril_triu_ndim2")
@port("TestTri.test_tril_triu_ndim3")
@port("TestTri.test_tril_triu_with_inf")
@port("TestTri.test_tril_triu_dtype")
@pytest.mark.parametrize("dt", list("efdBbhil?"))
def test_tri_tril_triu(dt):
    check(lambda x: (np.tri(3) + x, np.tri(3, dtype=bool) | (x > 0)), np.array(0))
    check(lambda a, a3, z: (np.tril(a), np.triu(a), np.tril(a3), np.triu(a3), np.tril(z), np.triu(z)),
          np.ones((2, 2), dtype=dt),
          np.array([[[1, 1], [1, 1]], [[1, 1], [1, 0]], [[1, 1], [0, 0]]], dtype=dt),
          np.zeros((3, 3), dtype=dt))
    check(lambda a: (np.triu(a), np.tril(a)), np.array([[1, 1, np.inf], [1, 1, 1], [np.inf, 1, 1]]))


@port("TestTri.test_tril_indices")
@port("TestTriuIndices.test_triu_indices")
@pytest.mark.parametrize("fn", [np.tril_indices, np.triu_indices])
def test_tril_triu_indices(fn):
    def f(a, b):
        i1, i2, i3, i4 = fn(4), fn(4, k=2), fn(4, m=5), fn(4, k=2, m=5)
        r = [a[i1], b[i3]]
        a[i1] = -1
        b[i3] = -1
        r += [a.copy(), b.copy()]
        a[i2] = -10
        b[i4] = -10
        return r + [a, b]
    check(f, np.arange(1, 17).reshape(4, 4), np.arange(1, 21).reshape(4, 5))


@port("TestTri.test_mask_indices")
def test_mask_indices():
    check(lambda a: (a[np.mask_indices(3, np.triu)], a[np.mask_indices(3, np.triu, 1)]),
          np.arange(9).reshape(3, 3))


@port("TestTrilIndicesFrom.test_exceptions")
@port("TestTriuIndicesFrom.test_exceptions")
def test_tril_triu_indices_from_exceptions():
    for fn in (np.tril_indices_from, np.triu_indices_from):
        for shape in [(2,), (2, 2, 2)]:
            raises(ValueError, lambda x, fn=fn: fn(x), np.ones(shape))
        check(lambda x, fn=fn: fn(x), np.ones((2, 3)))


@port("TestVander.test_basic")
@port("TestVander.test_dtypes")
def test_vander():
    check(lambda c: [np.vander(c)] + [np.vander(c, N=n) for n in range(6)], np.array([0, 1, -2, 3]))
    check(lambda c: np.vander(c), np.array([11, -12, 13], dtype=np.int8))


# ------------------------------------------------------ test_arraysetops

port = _src("test_arraysetops.py")


@port("TestSetOps.test_intersect1d")
@port("TestSetOps.test_intersect1d_array_like")
def test_intersect1d():
    check(lambda a, b: np.intersect1d(a, b, assume_unique=True), np.array([5, 7, 1, 2]),
          np.array([2, 4, 3, 1, 5]))
    check(lambda a, b: (np.intersect1d(a, b), np.intersect1d([], b[:0])),
          np.array([5, 5, 7, 1, 2]), np.array([2, 1, 4, 3, 3, 1, 5]))
    check(lambda a: (np.intersect1d(a, a), np.intersect1d([1, 2, 3], a + 1)), np.arange(3))


@port("TestSetOps.test_intersect1d_indices")
def test_intersect1d_indices():
    def f(a, b, unique):
        c, i1, i2 = np.intersect1d(a, b, assume_unique=unique, return_indices=True)
        if a.ndim == 1:
            return c, i1, i2, a[i1], b[i2]
        return c, i1, i2, a[np.unravel_index(i1, a.shape)], b[np.unravel_index(i2, b.shape)]
    check(f, np.array([1, 2, 3, 4]), np.array([2, 1, 4, 6]), True)
    check(f, np.array([1, 2, 2, 3, 4, 3, 2]), np.array([1, 8, 4, 2, 2, 3, 2, 3]), False)
    check(f, np.array([[2, 4, 5, 6], [7, 8, 1, 15]]), np.array([[3, 2, 7, 6], [10, 12, 8, 9]]),
          True)
    check(f, np.array([[2, 4, 5, 6, 6], [4, 7, 8, 7, 2]]), np.array([[3, 2, 7, 7], [10, 12, 8, 7]]),
          False)


@port("TestSetOps.test_setxor1d")
@port("TestSetOps.test_manyways")
def test_setxor1d():
    for a, b in [([5, 7, 1, 2], [2, 4, 3, 1, 5]), ([1, 2, 3], [6, 5, 4]), ([1, 8, 2, 3], [6, 5, 4, 8]),
                 ([5, 7, 1, 2, 8], [9, 8, 2, 4, 3, 1, 5])]:
        check(lambda a, b: (np.setxor1d(a, b),
                            np.setdiff1d(np.union1d(a, b), np.intersect1d(a, b))),
              np.array(a), np.array(b))
    check(lambda e: np.setxor1d(e, e), np.array([]))


@port("TestSetOps.test_ediff1d")
def test_ediff1d():
    def f(zero, one, two):
        return (np.ediff1d(zero), np.ediff1d(zero, to_begin=0), np.ediff1d(zero, to_end=0),
                np.ediff1d(zero, to_begin=-1, to_end=0), np.ediff1d(one), np.ediff1d(two),
                np.ediff1d(two, to_begin=7, to_end=9), np.ediff1d(two, to_begin=[5, 6], to_end=[7, 8]),
                np.ediff1d(two, to_end=9), np.ediff1d(two, to_end=[7, 8]), np.ediff1d(two, to_begin=7),
                np.ediff1d(two, to_begin=[5, 6]))
    check(f, np.array([]), np.array([1]), np.array([1, 2]))


@port("TestSetOps.test_ediff1d_forbidden_type_casts")
def test_ediff1d_forbidden_type_casts():
    for ary, pre, app in [(np.array([1, 2, 3], dtype=np.int64), None, np.nan),
                          (np.array([1, 2, 3], dtype=np.int64), np.array([5, 7, 2], np.float32), None),
                          (np.array([1.0, 3.0, 9.0], dtype=np.int8), np.nan, np.nan)]:
        raises(TypeError, lambda a, pre=pre, app=app: np.ediff1d(a, to_end=app, to_begin=pre), ary)


@port("TestSetOps.test_ediff1d_scalar_handling")
@pytest.mark.parametrize("ary,prepend,append", [
    (np.array([1, 2, 3], dtype=np.int16), 2**16, 2**16 + 4),
    (np.array([1, 2, 3], dtype=np.float32), np.array([5], dtype=np.float64), None),
    (np.array([1, 2, 3], dtype=np.int32), 0, 0), (np.array([1, 2, 3], dtype=np.int64), 3, -9)])
def test_ediff1d_scalar_handling(ary, prepend, append):
    check(lambda a: np.ediff1d(ary=a, to_end=append, to_begin=prepend), ary)


@port("TestSetOps.test_isin")
@pytest.mark.parametrize("kind", [None, "sort", "table"])
def test_isin(kind):
    a = np.arange(24).reshape([2, 3, 4])
    b = np.array([[10, 20, 30], [0, 1, 3], [11, 22, 33]])
    check(lambda a, b, f: (np.isin(a, b, kind=kind), np.isin(f, b, kind=kind),
                           np.isin(a, f, kind=kind), np.isin(f, f, kind=kind),
                           np.isin(5, b, kind=kind), np.isin(a, 6, kind=kind)), a, b, np.array(3))
    check(lambda c: np.isin(c, (9, 7), kind=kind), np.array([(9, 8), (7, 6)]))
    for dt in [bool, np.int64] + ([np.float64] if kind != "table" else []):
        ar = np.array([True, False, False]) if dt is bool else np.array([10, 20, 30], dtype=dt)
        e = np.array([], dtype=dt)
        check(lambda e, ar: (np.isin(e, ar, kind=kind), np.isin(ar, e, kind=kind),
                             np.isin(e, e, kind=kind)), e, ar)


@port("TestSetOps.test_in1d")
@port("TestSetOps.test_in1d_invert")
@port("TestSetOps.test_in1d_ravel")
@port("TestSetOps.test_in1d_hit_alternate_algorithm")
@port("TestSetOps.test_in1d_boolean")
@pytest.mark.parametrize("kind", [None, "sort", "table"])
def test_in1d(kind):
    for mult in (1, 10):
        for a, b, uniq in [([5, 7, 1, 2], [2, 4, 3, 1, 5] * mult, True),
                           ([8, 7, 1, 2], [2, 4, 3, 1, 5] * mult, True),
                           ([4, 7, 1, 8], [2, 4, 3, 1, 5] * mult, True),
                           ([5, 4, 5, 3, 4, 4, 3, 4, 3, 5, 2, 1, 5, 5], [2, 3, 4] * mult, False),
                           ([5, 4, 5, 3, 4, 4, 3, 4, 3, 5, 2, 1, 5, 5], [2, 3, 4, 5, 5, 4] * mult,
                            False), ([5, 7, 1, 1, 2], [2, 4, 3, 3, 1, 5] * mult, False),
                           ([5, 5], [2, 2] * mult, False)]:
            check(lambda a, b: (np.in1d(a, b, assume_unique=uniq, kind=kind),
                                np.in1d(a, b, invert=True, kind=kind)), np.array(a), np.array(b))
    check(lambda a, b: np.in1d(a, b, kind=kind), np.array([5]), np.array([2]))
    check(lambda a, b, lb: [np.in1d(a, x, assume_unique=u, kind=kind) for x in (b, lb)
                            for u in (True, False)],
          np.arange(6).reshape(2, 3), np.arange(3, 9).reshape(3, 2), np.arange(3, 63).reshape(30, 2))
    check(lambda a, b: (np.in1d(a, b, kind=kind), np.in1d(a, b, invert=True, kind=kind)),
          np.array([True, False]), np.array([False, False, False]))
    check(lambda a, b: (np.in1d(a, b), np.in1d(a, b, invert=True)),
          np.array([5, 4, 5, 3, 4, 4, 1e9], dtype=np.int64), np.array([2, 3, 4, 1e9], dtype=np.int64))
    if kind != "table":
        check(lambda a, b: np.in1d(a, b, kind=kind),
              np.array([5, 4, 5, 3, 4, 4, 3, 4, 3, 5, 2, 1, 5, 5], np.float32),
              np.array([2, 3, 4] * 10, np.float32))


@port("TestSetOps.test_in1d_mixed_dtype")
@port("TestSetOps.test_in1d_mixed_boolean")
@pytest.mark.parametrize("kind", [None, "sort"])
def test_in1d_mixed(kind):
    for d1, d2 in [(np.int8, np.int16), (np.int16, np.int8)]:
        check(lambda a, b: np.in1d(a, b, kind=kind), np.array([0, 0, 1, 1], dtype=d1),
              np.array([-128, 0, 127], dtype=d2))
    for dt in "bhilBq":
        check(lambda a, b: (np.in1d(a, b, kind=kind), np.in1d(b, a, kind=kind)),
              np.array([True, False, False]), np.array([0, 0, 0, 0], dtype=dt))


@port("TestSetOps.test_in1d_errors")
def test_in1d_errors():
    raises(ValueError, lambda a, b: np.in1d(a, b, kind="quicksort"), np.array([1, 2, 3, 4, 5]),
           np.array([2, 4, 6, 8, 10]))
    for dt in [np.int32, np.int64]:
        a, b = np.array([-1, 2, 3, 4, 5], dtype=dt), np.array([-1, np.iinfo(dt).max], dtype=dt)
        check(lambda a, b: (np.in1d(a, b, kind=None), np.in1d(a, b, kind="sort")), a, b)


@port("TestSetOps.test_union1d")
@port("TestSetOps.test_setdiff1d")
@port("TestSetOps.test_setdiff1d_unique")
def test_union1d_setdiff1d():
    check(lambda a, b: np.union1d(a, b), np.array([5, 4, 7, 1, 2]), np.array([2, 4, 3, 3, 2, 1, 5]))
    check(lambda x, y: np.union1d(x, y), np.array([[0, 1, 2], [3, 4, 5]]), np.array([0, 1, 2, 3, 4]))
    check(lambda a, b: np.setdiff1d(a, b), np.array([6, 5, 4, 7, 1, 2, 7, 4]),
          np.array([2, 4, 3, 3, 2, 1, 5]))
    check(lambda a, b: np.setdiff1d(a, b), np.arange(21), np.arange(19))
    check(lambda e: (np.union1d(e, e), np.setdiff1d(e, e)), np.array([]))
    check(lambda a, b: np.setdiff1d(a, b, assume_unique=True), np.array([3, 2, 1]),
          np.array([7, 5, 2]))


@port("TestUnique.test_unique_1d")
@pytest.mark.parametrize("dt", list("bhilBefd"))
def test_unique_1d(dt):
    a = np.array([5, 7, 1, 2, 1, 5, 7] * 10, dt)
    check(lambda a: (np.unique(a), np.unique(a, True, False, False), np.unique(a, False, True, False),
                     np.unique(a, False, False, True), np.unique(a, True, True, False),
                     np.unique(a, True, False, True), np.unique(a, False, True, True),
                     np.unique(a, True, True, True)), a)


@port("TestUnique.test_unique_1d_2")
@port("TestUnique.test_unique_nanequals")
def test_unique_nans():
    for a in [[2.0, np.nan, 1.0, np.nan], [np.nan] * 4, [1, 1, np.nan, np.nan, np.nan]]:
        check(lambda a: (np.unique(a), np.unique(a, return_index=True),
                         np.unique(a, return_inverse=True), np.unique(a, return_counts=True),
                         np.unique(a, equal_nan=False)), np.array(a))
    check(lambda a: (np.unique(a), np.unique(a, return_inverse=True)),
          np.array([(1, 2), (1, 2), (2, 3)]))
    check(lambda a: np.unique(a, return_inverse=True)[1].dtype, np.array([]))


@port("TestUnique.test_unique_axis_errors")
@port("TestUnique.test_unique_axis_list")
@port("TestUnique.test_unique_1d_with_axis")
def test_unique_axis_basic():
    raises(np.AxisError, lambda a: np.unique(a, axis=2), np.arange(10))
    raises(np.AxisError, lambda a: np.unique(a, axis=-2), np.arange(10))
    check(lambda a: (np.unique(a, axis=0), np.unique(a, axis=1),
                     np.unique([[0, 1, 0], [0, 1, 0]], axis=0)), np.asarray([[0, 1, 0], [0, 1, 0]]))
    check(lambda x: (np.unique(x, axis=0), np.unique(x, axis=-1)), np.array([4, 3, 2, 3, 2, 1, 2, 2]))


@port("TestUnique.test_unique_axis")
@port("TestUnique.test_unique_sort_order_with_axis")
@pytest.mark.parametrize("dt", list("bhilBfd"))
def test_unique_axis(dt):
    data = np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0]]).astype(dt)
    data3d = np.array([[[1, 1], [1, 0]], [[0, 1], [0, 0]]]).astype(dt)

    def f(data, data3d):
        r = [np.unique(data), np.unique(data, axis=0), np.unique(data, axis=1),
             np.unique(data3d, axis=2)]
        for ax in (0, 1):
            u, idx, inv, cnt = np.unique(data, axis=ax, return_index=True, return_inverse=True,
                                         return_counts=True)
            r += [u, idx, inv, cnt]
        return r
    check(f, data, data3d)
    if dt in "bhil":
        check(lambda a: np.unique(a, axis=0), np.array([[-1], [0]], dt))
    check(lambda d: np.unique(d, axis=0), np.array([[-0.0, 0.0], [0.0, -0.0], [-0.0, 0.0],
                                                    [0.0, -0.0]]))


@port("TestUnique.test_unique_axis_zeros")
def test_unique_axis_zeros():
    check(lambda z: [np.unique(z, axis=ax, return_index=True, return_inverse=True,
                               return_counts=True) for ax in (0, 1)],
          np.empty(shape=(2, 0), dtype=np.int8))
    shape = (0, 2, 0, 3, 0, 4, 0)
    check(lambda z: [np.unique(z, axis=ax) for ax in range(len(shape))], np.empty(shape=shape))


# ------------------------------------------------------- test_histograms

port = _src("test_histograms.py")
RNG = np.random.default_rng(20)


@port("TestHistogram.test_simple")
@port("TestHistogram.test_one_bin")
@port("TestHistogram.test_empty")
@port("TestHistogram.test_no_side_effects")
def test_histogram_simple():
    check(lambda v: (np.histogram(v), np.sum(np.histogram(v)[0], axis=0)), RNG.random(100))
    check(lambda v: np.histogram(v), np.linspace(0, 10, 100))
    check(lambda v: (np.histogram(v, [1, 2]), np.histogram(v[:2], bins=1)), np.array([1, 2, 3, 4]))
    raises(ValueError, lambda v: np.histogram(v, bins=0), np.array([1, 2]))
    check(lambda e: np.histogram(e, bins=([0, 1])), np.array([]))
    check(lambda v: (np.histogram(v, range=[-10, 10], bins=100), v), np.array([1.3, 2.5, 2.3]))


@port("TestHistogram.test_density")
@port("TestHistogram.test_outliers")
@port("TestHistogram.test_type")
@port("TestHistogram.test_weights")
def test_histogram_density_outliers_weights():
    def f(v, a, r, w):
        return (np.histogram(r, density=True), np.histogram(v, [0, 1, 3, 6, 10], density=True),
                np.histogram(v, [0, 1, 3, 6, 10], density=False),
                np.histogram(v, [0, 1, 3, 6, np.inf], density=True),
                np.histogram(v[1:5], [0.5, 1.5, np.inf], density=True),
                np.histogram(a, range=[0, 9]), np.histogram(a, range=[1, 10]),
                np.histogram(a, range=[1, 9], density=True),
                np.histogram(a, range=[1, 9], weights=w, density=True),
                np.histogram(a, bins=8, range=[1, 9], weights=w), np.histogram(a),
                np.histogram(a, weights=np.ones(10, int)), np.histogram(a, weights=np.ones(10, float)))
    check(f, np.arange(10), np.arange(10) + 0.5, RNG.random(100), np.arange(10) + 0.5, rtol=1e-13)

    def g(v, v2):
        w = np.ones(100) * 5
        w2 = np.concatenate((np.zeros(5), np.ones(5)))
        return (np.histogram(v), np.histogram(v, density=True), np.histogram(v, weights=w),
                np.histogram(v, weights=w, density=True),
                np.histogram(v2, bins=np.arange(11), weights=w2),
                np.histogram([1, 2, 2, 4], bins=4, weights=[4, 3, 2, 1]),
                np.histogram(v2[:9] * 0 + np.arange(9), [0, 1, 3, 6, 10],
                             weights=[2, 1, 1, 1, 1, 1, 1, 1, 1], density=True))
    check(g, RNG.random(100), np.linspace(0, 10, 10), rtol=1e-13)


@port("TestHistogram.test_arr_weights_mismatch")
@port("TestHistogram.test_error_binnum_type")
@port("TestHistogram.test_finite_range")
@port("TestHistogram.test_invalid_range")
@port("TestHistogram.test_bin_array_dims")
@port("TestHistogram.test_object_array_of_0d")
def test_histogram_errors():
    raises(ValueError, lambda a, w: np.histogram(a, range=[1, 9], weights=w, density=True),
           np.arange(10) + 0.5, np.arange(11) + 0.5)
    vals = np.linspace(0.0, 1.0, num=100)
    check(lambda v: (np.histogram(v, 5), np.histogram(v, range=[0.25, 0.75])), vals)
    raises(TypeError, lambda v: np.histogram(v, 2.4), vals)
    for rng in [[np.nan, 0.75], [0.25, np.inf], [0.1, 0.01]]:
        raises(ValueError, lambda v, rng=rng: np.histogram(v, range=rng), vals)
    raises(ValueError, lambda v, b: np.histogram(v, bins=b), vals, np.array([[0, 0.5], [0.6, 1.0]]))
    for end in [-np.inf, np.inf]:
        raises(ValueError, lambda v, end=end: np.histogram(np.concatenate([v, [end]])),
               np.full(10, 0.4))
    check(lambda v: (np.histogram(np.concatenate([v, [0.500000000000001]])),
                     np.histogram(np.concatenate([v, [0.5]]))), np.full(10, 0.5))


@port("TestHistogram.test_f32_rounding")
@port("TestHistogram.test_bool_conversion")
@port("TestHistogram.test_last_bin_inclusive_range")
@port("TestHistogram.test_bin_edge_cases")
def test_histogram_edges():
    check(lambda x, y: np.histogram2d(x, y, bins=100),
          np.array([276.318359, -69.593948, 21.329449], dtype=np.float32),
          np.array([5005.689453, 4481.327637, 6010.369629], dtype=np.float32))
    check(lambda a, b: (np.histogram(a), np.histogram(b)), np.array([1, 1, 0], dtype=np.uint8),
          np.array([True, True, False]))
    check(lambda a: np.histogram(a, bins=30, range=(-0.5, 5)),
          np.array([0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 3.0, 4.0, 5.0]))
    check(lambda a: np.histogram(a, bins=8296, range=(2, 2280)),
          np.array([337, 404, 739, 806, 1007, 1811, 2012]))


@port("TestHistogram.test_unsigned_monotonicity_check")
@port("TestHistogram.test_some_nan_values")
def test_histogram_monotonic_nans():
    raises(ValueError, lambda a, b: np.histogram(a, bins=b), np.array([2]),
           np.array([1, 3, 1], dtype=np.uint8))
    check(lambda o, a: (np.histogram(o, bins=[0, 1]), np.histogram(a, bins=[0, 1])),
          np.array([0, 1, np.nan]), np.array([np.nan, np.nan]))


@port("TestHistogram.test_signed_overflow_bounds")
@port("TestHistogram.test_signed_overflow_bounds_2")
@pytest.mark.parametrize("dt", [np.byte, np.short, np.intc, np.int_])
def test_histogram_signed_overflow_bounds(dt):
    e = 8 * np.dtype(dt).itemsize - 1
    check(lambda a: np.histogram(a, bins=2), np.array([-(2**e) + 4, 2**e - 4], dtype=dt))


@port("TestHistogram.test_precision")
@pytest.mark.parametrize("small,large", [(np.half, np.single), (np.half, np.double),
                                         (np.single, np.double)])
def test_histogram_precision(small, large):
    eps = np.finfo(large).eps
    for rng in [np.array([1.0 + eps, 2.0], large), np.array([0.0, 1.0 - eps], large)]:
        # (the range decides the edges: a constant here, as in torch's test)
        check(lambda a, rng=rng: np.histogram(a, bins=1, range=rng), np.array([1.0], small))


@port("TestHistogram.test_histogram_bin_edges")
def test_histogram_bin_edges():
    check(lambda a: (np.histogram(a, [1, 2]), np.histogram_bin_edges(a, [1, 2])),
          np.array([1, 2, 3, 4]))
    check(lambda a: (np.histogram(a, bins=30, range=(-0.5, 5)),
                     np.histogram_bin_edges(a, bins=30, range=(-0.5, 5))),
          np.array([0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 3.0, 4.0, 5.0]))


# ------------------------------------------------------- test_type_check

port = _src("test_type_check.py")


@port("TestCommonType.test_basic")
@port("TestMintypecode.test_default_1")
@port("TestMintypecode.test_default_2")
@port("TestMintypecode.test_default_3")
@port("TestIsscalar.test_basic")
def test_common_type_mintypecode_isscalar():
    check(lambda a, b, c, d: (np.common_type(a), np.common_type(b), np.common_type(c),
                              np.common_type(d)),
          *[np.array([[1, 2], [3, 4]], dtype=dt) for dt in (np.int32, np.float16, np.float32,
                                                            np.float64)])
    codes = [t for t in "1bcsuwil"] + [i + x for i in "1bcsuwil" for x in "fdFD"] + \
        ["ff", "fd", "fF", "fD", "df", "dd", "dF", "dD", "Ff", "Fd", "FF", "FD", "Df", "Dd", "DF",
         "DD", "fdF", "fdD", "fFD", "dFD", "ifd", "ifF", "ifD", "idF", "idD"]
    check(lambda x: ([np.mintypecode(c) for c in codes], x), np.array(0))
    # (np.isscalar of a traced NumPy scalar is an isinstance test: issue #24's)
    check(lambda x: (np.isscalar(3), np.isscalar([3]), np.isscalar((3,)), np.isscalar(4.0),
                     np.isscalar(x)), np.array([1.0]))


@port("TestReal.test_real")
@port("TestImag.test_real")
def test_real_imag():
    check(lambda y, z: (np.real(y), np.real(z), np.real(1), np.imag(y), np.imag(z), np.imag(1)),
          RNG.random(10), np.array(1))


@port("TestIscomplex.test_fail")
@port("TestIsreal.test_isreal_real")
@port("TestIscomplexobj.test_basic")
@port("TestIscomplexobj.test_scalar")
@port("TestIscomplexobj.test_list")
@port("TestIsrealobj.test_basic")
def test_iscomplex_isreal():
    check(lambda z: (np.iscomplex(z), np.sometrue(np.iscomplex(z), axis=0), np.isreal(z),
                     np.isreal(z).all(), np.iscomplexobj(z), np.isrealobj(z),
                     np.iscomplexobj(1.0), np.iscomplexobj(1 + 0j), np.iscomplexobj([3, 1 + 0j, True]),
                     np.iscomplexobj([3, 1, True])), np.array([-1, 0, 1]))


@port("TestIsnan.test_goodvalues")
@port("TestIsnan.test_posinf")
@port("TestIsnan.test_neginf")
@port("TestIsnan.test_ind")
@port("TestIsnan.test_integer")
@port("TestIsfinite.test_goodvalues")
@port("TestIsfinite.test_posinf")
@port("TestIsfinite.test_neginf")
@port("TestIsfinite.test_ind")
@port("TestIsfinite.test_integer")
@port("TestIsinf.test_goodvalues")
@port("TestIsinf.test_posinf")
@port("TestIsinf.test_posinf_scalar")
@port("TestIsinf.test_neginf")
@port("TestIsinf.test_neginf_scalar")
@port("TestIsinf.test_ind")
@port("TestIsposinf.test_generic")
@port("TestIsneginf.test_generic")
def test_isnan_isfinite_isinf():
    def f(z, p, n, i, ps, ns):
        out = []
        for fn in (np.isnan, np.isfinite, np.isinf):
            out += [np.all(fn(z) == 0, axis=0), fn(p / 0.0), fn(n / 0.0), fn(i / 0.0), fn(1),
                    fn(ps / 0.0), fn(ns / 0.0)]
        v = np.array((-1.0, 0, 1)) * z[2] / 0.0
        return out + [np.isposinf(v), np.isneginf(v)]
    check(f, np.array((-1.0, 0.0, 1.0)), np.array((1.0,)), np.array((-1.0,)), np.array((0.0,)),
          np.array(1.0), np.array(-1.0))


@port("TestNanToNum.test_generic")
@port("TestNanToNum.test_array")
@port("TestNanToNum.test_integer")
@port("TestNanToNum.test_float")
@port("TestNanToNum.test_do_not_rewrite_previous_keyword")
def test_nan_to_num():
    def f(x):
        v = x / 0.0
        return (np.nan_to_num(v), np.nan_to_num(v, nan=10, posinf=20, neginf=30),
                np.nan_to_num(v, nan=np.inf, posinf=999), np.nan_to_num([1]),
                np.nan_to_num([1], nan=10, posinf=20, neginf=30), np.nan_to_num(x[2]),
                np.nan_to_num(1), np.nan_to_num(1.1, nan=10, posinf=20, neginf=30))
    check(f, np.array((-1.0, 0, 1)))


@port("TestArrayConversion.test_asfarray")
def test_asfarray():
    check(lambda a: np.asfarray(a), np.array([1, 2, 3]))
    raises(TypeError, lambda a: np.asfarray(a, dtype=np.array(1.0)), np.array([1, 2, 3]))


# ------------------------------------------------------ test_shape_base_

port = _src("test_shape_base_.py")


def _keepdims(func):
    def wrapped(a, axis, **kwargs):
        res = func(a, axis=axis, **kwargs)
        return np.expand_dims(res, axis=0 if axis is None else axis)
    return wrapped


@port("TestTakeAlongAxis.test_argequivalent")
@port("TestTakeAlongAxis.test_empty")
@port("TestTakeAlongAxis.test_broadcast")
def test_take_along_axis():
    def f(a):
        out = []
        for func, argfunc in [(np.sort, np.argsort), (_keepdims(np.min), _keepdims(np.argmin)),
                              (_keepdims(np.max), _keepdims(np.argmax))]:
            for axis in list(range(a.ndim)) + [None]:
                out += [func(a, axis=axis), np.take_along_axis(a, argfunc(a, axis=axis), axis=axis)]
        return out
    check(f, RNG.random((3, 4, 5)))
    check(lambda a, ai: np.take_along_axis(a, ai, axis=1), np.ones((3, 4, 5)),
          np.ones((3, 0, 5), dtype=np.intp))
    check(lambda a, ai: np.take_along_axis(a, ai, axis=1), np.ones((3, 4, 1)),
          np.ones((1, 2, 5), dtype=np.intp))


@port("TestTakeAlongAxis.test_invalid")
def test_take_along_axis_invalid():
    a, ai = np.ones((10, 10)), np.ones((10, 2), dtype=np.intp)
    check(lambda a, ai: np.take_along_axis(a, ai, axis=1), a, ai)
    raises(ValueError, lambda a: np.take_along_axis(a, np.array(1), axis=1), a)
    raises(IndexError, lambda a, ai: np.take_along_axis(a, ai.astype(bool), axis=1), a, ai)
    raises(IndexError, lambda a, ai: np.take_along_axis(a, ai.astype(float), axis=1), a, ai)
    raises(np.AxisError, lambda a, ai: np.take_along_axis(a, ai, axis=10), a, ai)


@port("TestPutAlongAxis.test_replace_max")
@port("TestPutAlongAxis.test_broadcast")
def test_put_along_axis():
    def f(a_base):
        out = []
        for axis in list(range(a_base.ndim)) + [None]:
            a = a_base.copy()
            i_max = _keepdims(np.argmax)(a, axis=axis)
            np.put_along_axis(a, i_max, -99, axis=axis)
            out += [a, i_max, _keepdims(np.argmin)(a, axis=axis)]
        return out
    check(f, np.array([[10, 30, 20], [60, 40, 50]]))

    def g(a):
        ai = np.arange(10, dtype=np.intp).reshape((1, 2, 5)) % 4
        np.put_along_axis(a, ai, 20, axis=1)
        return a, np.take_along_axis(a, ai, axis=1)
    check(g, np.ones((3, 4, 1)))


@port("TestApplyAlongAxis.test_simple")
@port("TestApplyAlongAxis.test_simple101")
@port("TestApplyAlongAxis.test_3d")
@port("TestApplyAlongAxis.test_scalar_array")
@port("TestApplyAlongAxis.test_0d_array")
@port("TestApplyAlongAxis.test_tuple_func1d")
def test_apply_along_axis():
    check(lambda a, b: (np.apply_along_axis(len, 0, a), np.apply_along_axis(len, 0, b)),
          np.ones((20, 10), "d"), np.ones((10, 101), "d"))
    check(lambda a: np.apply_along_axis(np.sum, 0, a), np.arange(27).reshape((3, 3, 3)))

    def sum_to_0d(x):
        return np.squeeze(np.sum(x, keepdims=True))
    check(lambda a: (np.apply_along_axis(np.sum, 0, a), np.apply_along_axis(sum_to_0d, 0, a),
                     np.apply_along_axis(sum_to_0d, 1, a)), np.ones((6, 3)))
    check(lambda a: np.apply_along_axis(lambda x: (x[1], x[0]), 1, a), np.array([[1, 2], [3, 4]]))


@port("TestApplyAlongAxis.test_axis_insertion")
def test_apply_along_axis_insertion():
    def f1to2(x):
        return x[::-1] * x[1:, None]

    def f(a2d, a3d):
        return (np.apply_along_axis(f1to2, 0, a2d),
                np.stack([f1to2(a2d[:, i]) for i in range(a2d.shape[1])], axis=-1),
                np.apply_along_axis(f1to2, 1, a2d), np.apply_along_axis(f1to2, 1, a3d))
    check(f, np.arange(6 * 3).reshape((6, 3)), np.arange(6 * 5 * 3).reshape((6, 5, 3)))


@port("TestApplyAlongAxis.test_empty")
def test_apply_along_axis_empty():
    raises(ValueError, lambda a: np.apply_along_axis(lambda x: x, 0, a), np.empty((0, 0)))
    raises(ValueError, lambda a: np.apply_along_axis(lambda x: x, 1, a), np.empty((0, 0)))
    check(lambda a: np.apply_along_axis(lambda x: 1, 1, a), np.empty((10, 0)))
    raises(ValueError, lambda a: np.apply_along_axis(lambda x: 1, 0, a), np.empty((10, 0)))


@port("TestApplyOverAxes.test_simple")
def test_apply_over_axes():
    check(lambda a: np.apply_over_axes(np.sum, a, [0, 2]), np.arange(24).reshape(2, 3, 4))


@port("TestExpandDims.test_functionality")
@port("TestExpandDims.test_axis_tuple")
@port("TestExpandDims.test_axis_out_of_range")
@port("TestExpandDims.test_repeated_axis")
def test_expand_dims():
    check(lambda a: [(np.expand_dims(a, ax).shape, np.squeeze(np.expand_dims(a, ax)).shape)
                     for ax in range(-5, 4)], np.empty((2, 3, 4, 5)))
    check(lambda a: [np.expand_dims(a, axis=ax).shape for ax in [(0, 1, 2), (0, -1, -2),
                                                                  (0, 3, 5), (0, -3, -5)]],
          np.empty((3, 3, 3)))
    for shape, ax in [((2, 3, 4, 5), -6), ((2, 3, 4, 5), 5), ((3, 3, 3), (0, -6)),
                      ((3, 3, 3), (0, 5))]:
        raises(np.AxisError, lambda a, ax=ax: np.expand_dims(a, ax), np.empty(shape))
    raises(ValueError, lambda a: np.expand_dims(a, axis=(1, 1)), np.empty((3, 3, 3)))


@port("TestArraySplit.test_integer_0_split")
@port("TestArraySplit.test_integer_split")
@port("TestArraySplit.test_integer_split_2D_rows")
@port("TestArraySplit.test_integer_split_2D_cols")
@port("TestArraySplit.test_integer_split_2D_default")
@port("TestArraySplit.test_index_split_simple")
@port("TestArraySplit.test_index_split_low_bound")
@port("TestArraySplit.test_index_split_high_bound")
@port("TestSplit.test_equal_split")
@port("TestSplit.test_unequal_split")
def test_array_split():
    raises(ValueError, lambda a: np.array_split(a, 0), np.arange(10))
    check(lambda a: [np.array_split(a, n) for n in range(1, 12)], np.arange(10))
    check(lambda a: (np.array_split(a, 3, axis=0), np.array_split(a, [0, 1], axis=0),
                     np.array_split(a, 3, axis=-1), np.array_split(a, 3)),
          np.array([np.arange(10), np.arange(10)]))
    check(lambda a: (np.array_split(a, [1, 5, 7], axis=-1), np.array_split(a, [0, 5, 7], axis=-1),
                     np.array_split(a, [0, 5, 7, 10, 12], axis=-1), np.split(a, 2)), np.arange(10))
    raises(ValueError, lambda a: np.split(a, 3), np.arange(10))


@port("TestColumnStack.test_non_iterable")
@port("TestColumnStack.test_1D_arrays")
@port("TestColumnStack.test_2D_arrays")
@port("TestColumnStack.test_generator")
@port("TestDstack.test_non_iterable")
@port("TestDstack.test_0D_array")
@port("TestDstack.test_1D_array")
@port("TestDstack.test_2D_array")
@port("TestDstack.test_2D_array2")
@port("TestDstack.test_generator")
def test_column_stack_dstack():
    raises(TypeError, lambda: np.column_stack(1))
    raises(TypeError, lambda: np.dstack(1))
    check(lambda a, b: (np.column_stack((a, b)), np.dstack([a, b])), np.array((1, 2, 3)),
          np.array((2, 3, 4)))
    check(lambda a, b: (np.column_stack((a, b)), np.dstack([a, b])), np.array([[1], [2], [3]]),
          np.array([[2], [3], [4]]))
    for a, b in [(np.array(1), np.array(2)), (np.array([1]), np.array([2])),
                 (np.array([[1], [2]]), np.array([[1], [2]])), (np.array([1, 2]), np.array([1, 2]))]:
        check(lambda a, b: np.dstack([a, b]), a, b)
    check(lambda x: (np.column_stack([x + k for k in range(2)]), np.dstack([x + k for k in range(2)])),
          np.arange(3))


@port("TestHsplit.test_non_iterable")
@port("TestHsplit.test_0D_array")
@port("TestHsplit.test_1D_array")
@port("TestHsplit.test_2D_array")
@port("TestVsplit.test_non_iterable")
@port("TestVsplit.test_0D_array")
@port("TestVsplit.test_1D_array")
@port("TestVsplit.test_2D_array")
@port("TestDsplit.test_non_iterable")
@port("TestDsplit.test_0D_array")
@port("TestDsplit.test_1D_array")
@port("TestDsplit.test_2D_array")
@port("TestDsplit.test_3D_array")
def test_hsplit_vsplit_dsplit():
    for fn in (np.hsplit, np.vsplit, np.dsplit):
        raises(ValueError, lambda fn=fn: fn(1, 1))
        raises(ValueError, lambda a, fn=fn: fn(a, 2), np.array(1))
    check(lambda a: np.hsplit(a, 2), np.array([1, 2, 3, 4]))
    raises(ValueError, lambda a: np.vsplit(a, 2), np.array([1, 2, 3, 4]))
    raises(ValueError, lambda a: np.dsplit(a, 2), np.array([1, 2, 3, 4]))
    check(lambda a: (np.hsplit(a, 2), np.vsplit(a, 2)), np.array([[1, 2, 3, 4], [1, 2, 3, 4]]))
    raises(ValueError, lambda a: np.dsplit(a, 2), np.array([[1, 2, 3, 4], [1, 2, 3, 4]]))
    check(lambda a: np.dsplit(a, 2), np.array([[[1, 2, 3, 4], [1, 2, 3, 4]],
                                               [[1, 2, 3, 4], [1, 2, 3, 4]]]))


@port("TestSqueeze.test_basic")
@port("TestSqueeze.test_basic_2")
@port("TestSqueeze.test_squeeze_axis")
@port("TestSqueeze.test_squeeze_type")
@port("TestSqueeze.test_squeeze_axis_handling")
def test_squeeze():
    check(lambda a, b, c: (np.squeeze(a), np.squeeze(b), np.squeeze(c), np.squeeze([[[1.5]]])),
          RNG.random((20, 10, 10, 1, 1)), RNG.random((20, 1, 10, 1, 20)), RNG.random((1, 1, 20, 10)))

    def f(z):
        A = [[[1, 1, 1], [2, 2, 2], [3, 3, 3]]]
        return (np.squeeze(A).shape, np.squeeze(A, axis=()), np.squeeze(z).shape,
                np.squeeze(z, axis=0).shape, np.squeeze(z, axis=-1).shape,
                np.squeeze(z, axis=2).shape, np.squeeze([z[0]]).shape)
    check(f, np.zeros((1, 3, 1)))

    def g(aa):
        v = aa.squeeze()
        v[0, 0] = 5  # a view
        return aa
    check(g, np.ones((3, 1, 4, 1, 1)))
    check(lambda a, b: (a.squeeze(), b.squeeze()), np.array([3]), np.array(3))
    raises(ValueError, lambda a: np.squeeze(a, axis=0), np.array([[1], [2], [3]]))


@port("TestKron.test_basic")
@port("TestKron.test_kron_shape")
def test_kron():
    for a, b in [(np.array(1), np.array([[1, 2], [3, 4]])), (np.array([3]), np.array([[1, 2], [3, 4]])),
                 (np.array([[[1]], [[2]]]), np.array([[1, 2], [3, 4]]))]:
        check(lambda a, b: (np.kron(a, b), np.kron(b, a)), a, b)
    for sa, sb in [((1, 1), (1, 1)), ((1, 2, 3), (4, 5, 6)), ((2, 2), (2, 2, 2)), ((1, 0), (1, 1)),
                   ((2, 0, 2), (2, 2)), ((2, 0, 0, 2), (2, 0, 2))]:
        check(lambda a, b: np.kron(a, b).shape, np.ones(sa), np.ones(sb))


@port("TestTile.test_basic")
@port("TestTile.test_tile_one_repetition_on_array_gh4679")
@port("TestTile.test_empty")
@port("TestTile.test_kroncompare")
def test_tile():
    check(lambda a: (np.tile(a, 2), np.tile(a, (2, 2)), np.tile(a, (1, 2)),
                     np.tile([[1, 2], [3, 4]], 2), np.tile([[1, 2], [3, 4]], (2, 1)),
                     np.tile([[1, 2], [3, 4]], (2, 2))), np.array([0, 1, 2]))

    def f(a):
        b = np.tile(a, 1)
        b += 2
        return a, b
    check(f, np.arange(5))
    check(lambda a, b: (np.tile(b, 2).shape, np.tile(a, (3, 2, 5)).shape), np.array([[[]]]),
          np.array([[], []]))
    for s in [(3,), (2, 3), (3, 4, 3), (3, 2, 3), (4, 3, 2, 4), (2, 2)]:
        b = np.random.default_rng(3).integers(0, 10, size=s)
        check(lambda b: [(np.tile(b, r), np.kron(np.ones(r, b.dtype), b))
                         for r in [(2,), (1, 2), (2, 1), (2, 2), (2, 3, 2), (3, 2)]], b)


@port("TestMayShareMemory.test_basic")
def test_may_share_memory():
    def f(d, d2):
        return (np.may_share_memory(d, d), np.may_share_memory(d, d[::-1]),
                np.may_share_memory(d, d[::2]), np.may_share_memory(d, d[1:, ::-1]),
                np.may_share_memory(d[::-1], d2), np.may_share_memory(d[::2], d2),
                np.may_share_memory(d[1:, ::-1], d2), np.may_share_memory(d2[1:, ::-1], d2),
                np.may_share_memory(d[:10], d[10:]), np.shares_memory(d[::2], d[1::2]),
                np.may_share_memory(d[::2], d[1::2]), np.shares_memory(d.T, d[3]),
                np.may_share_memory(d, d.copy()), np.shares_memory(d2[:, 1:3, 0], d2[:, 2, :]))
    check(f, np.ones((50, 60)), np.ones((30, 60, 6)))


# ----------------------------------------------------- test_nanfunctions

port = _src("test_nanfunctions.py")
NDAT = np.array([[0.6244, np.nan, 0.2692, 0.0116, np.nan, 0.1170],
                 [0.5351, -0.9403, np.nan, 0.2100, 0.4759, 0.2833],
                 [np.nan, np.nan, np.nan, 0.1042, np.nan, -0.5954],
                 [0.1610, np.nan, np.nan, 0.1859, 0.3146, np.nan]])


@port("TestNanFunctions_MinMax.test_mutation")
@port("TestNanFunctions_MinMax.test_keepdims")
@port("TestNanFunctions_MinMax.test_out")
@port("TestNanFunctions_MinMax.test_result_values")
@port("TestNanFunctions_MinMax.test_scalar")
@port("TestNanFunctions_ArgminArgmax.test_mutation")
@port("TestNanFunctions_ArgminArgmax.test_result_values")
@port("TestNanFunctions_ArgminArgmax.test_scalar")
def test_nan_minmax_argminmax():
    def f(d, mat):
        out = [d]
        for nf, rf in [(np.nanmin, np.min), (np.nanmax, np.max)]:
            out += [nf(d), nf(d, axis=1), nf(0.0)]
            for axis in [None, 0, 1]:
                out += [nf(mat, axis=axis, keepdims=True), rf(mat, axis=axis, keepdims=True)]
            resout = np.zeros(3)
            out += [nf(mat, axis=1, out=resout), resout]
        for nf in (np.nanargmin, np.nanargmax):
            out += [nf(d), nf(d, axis=1), [nf(row) for row in d], nf(0.0)]
        return out
    check(f, NDAT.copy(), np.eye(3))


@port("TestNanFunctions_MinMax.test_dtype_from_input")
@port("TestNanFunctions_MinMax.test_initial")
@port("TestNanFunctions_MinMax.test_where")
@pytest.mark.parametrize("dt", list("efd"))
def test_nan_minmax_dtypes_initial_where(dt):
    def f(mat, ar, ar2):
        out = []
        for nf in (np.nanmin, np.nanmax):
            out += [nf(mat, axis=1), nf(mat, axis=None), nf(ar, initial=100 if nf is np.nanmax else 0)]
            where = np.ones_like(ar2, dtype=np.bool_)
            where[:, 0] = False
            out += [nf(ar2, where=where, initial=5)]
        return out
    ar = np.arange(9).astype(dt)
    ar[:5] = np.nan
    ar2 = np.arange(9).reshape(3, 3).astype(dt)
    ar2[0, :] = np.nan
    check(f, np.eye(3, dtype=dt), ar, ar2)


@port("TestNanFunctions_MinMax.test_allnans")
@port("TestNanFunctions_ArgminArgmax.test_allnans")
@port("TestNanFunctions_ArgminArgmax.test_empty")
@pytest.mark.parametrize("dt", list("efd"))
def test_nan_allnans_empty(dt):
    for array in [np.array(np.nan), np.full((3, 3), np.nan)]:
        for axis in [None, 0, 1] if array.ndim else [None]:
            check(lambda a, axis=axis: (np.nanmin(a, axis=axis), np.nanmax(a, axis=axis)),
                  array.astype(dt))
            for fn in (np.nanargmin, np.nanargmax):
                raises(ValueError, lambda a, fn=fn, axis=axis: fn(a, axis=axis), array.astype(dt))
    for fn in (np.nanargmin, np.nanargmax):
        for axis in [0, None]:
            raises(ValueError, lambda m, fn=fn, axis=axis: fn(m, axis=axis), np.zeros((0, 3)))
        check(lambda m, fn=fn: fn(m, axis=1), np.zeros((0, 3)))


@port("TestNanFunctions_ArgminArgmax.test_keepdims")
@port("TestNanFunctions_ArgminArgmax.test_out")
@pytest.mark.parametrize("dt", list("efd"))
def test_nan_argminmax_keepdims_out(dt):
    def f(ar):
        out = []
        for fn in (np.nanargmin, np.nanargmax):
            o = np.zeros((), dtype=np.intp)
            r = fn(ar, out=o)
            out += [fn(ar, keepdims=True), r is o, o]
        return out
    ar = np.arange(9).astype(dt)
    ar[:5] = np.nan
    check(f, ar)


@port("TestNanFunctions_NumberTypes.test_nanfunc")
@port("TestNanFunctions_NumberTypes.test_nanfunc_q")
@pytest.mark.parametrize("dt", list("bhilBefd"))
def test_nan_number_types(dt):
    pairs = [(np.nanmin, np.min), (np.nanmax, np.max), (np.nanargmin, np.argmin),
             (np.nanargmax, np.argmax), (np.nansum, np.sum), (np.nanprod, np.prod),
             (np.nancumsum, np.cumsum), (np.nancumprod, np.cumprod), (np.nanmean, np.mean),
             (np.nanmedian, np.median), (np.nanvar, np.var), (np.nanstd, np.std)]
    # (nanpercentile of float16/float32 data: NumPy's dtype follows its interpolation path,
    # float64 here; hop's keeps the data's: compared by value)
    small = np.dtype(dt).kind == "f" and np.dtype(dt).itemsize < 8
    for mat in [np.array(5), np.array([127, 39, 93, 87, 46])]:
        with np.errstate(over="ignore"):
            check(lambda m: [(nf(m), f(m)) for nf, f in pairs] +
                  [(np.nanquantile(m, q=1), np.quantile(m, q=1),
                    np.nanpercentile(m, q=1).astype(np.float64) if small else
                    np.nanpercentile(m, q=1), np.percentile(m, q=1))], mat.astype(dt), rtol=2e-3)


# ------------------------------------- eagerly on hop.numpy arrays too (s47)


@port("TestNanFunctions_NumberTypes.test_nanfunc_q")
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_nanquantile_of_an_integer_q_eagerly(dt):
    # an integer q: NumPy takes the element at the integer virtual index
    # (n - 1) * q, no lerp, so the result keeps a's dtype (eager hop.numpy
    # gave float64; inf - inf in its lerp would have made a NaN)
    check(lambda m: [np.nanquantile(m, q=q, method=meth, axis=ax)
                     for q in (1, 0, [0, 1], True, 0.5, [0.5, 1])
                     for meth in ("linear", "midpoint", "lower") for ax in (None, 0, 1)],
          np.array([[127, 39, np.nan], [np.inf, -0.0, np.nan], [-np.inf, 3, 4]], dt),
          eager=True)


@port("TestHistogram.test_bin_edge_cases")
@pytest.mark.parametrize("dt", [np.float16, np.float32])
@pytest.mark.parametrize("kw", [{"bins": 100}, {"bins": [3, 5]},
                                {"bins": 7, "range": [[-1.3, 300.7], [4000.1, 6100.3]]}],
                         ids=["bins", "two_bins", "range"])
def test_histogram2d_edges_of_narrow_floats_are_numpys_bits(dt, kw):
    # NumPy's histogramdd makes equal bins by linspace(smin, smax, n + 1) in
    # float64 whatever the data's dtype; eager hop.numpy made them in the
    # data's dtype and widened them (97 of 101 float32 edges off in their
    # last bits)
    x = np.array([276.318359, -69.593948, 21.329449], dtype=dt)
    y = np.array([5005.689453, 4481.327637, 6010.369629], dtype=dt)
    for ys in (y, np.full(3, y[0])):  # equal ends: smin - 0.5, smax + 0.5
        want = np.histogram2d(x, ys, **kw)
        for got in (hnp.histogram2d(hnp.asarray(x), hnp.asarray(ys), **kw),
                    hop.compile(lambda a, b: np.histogram2d(a, b, **kw))(x, ys)):
            assert len(got) == 3
            for g, w in zip(got, want):
                g = np.asarray(g)
                assert g.dtype == w.dtype == np.float64 and g.shape == w.shape
                assert np.array_equal(g.view(np.uint64), w.view(np.uint64))
