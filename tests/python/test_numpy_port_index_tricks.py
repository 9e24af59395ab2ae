"""Ported from PyTorch's test/torch_np/numpy_tests/lib/test_index_tricks.py
(issue #29): unravel_index, ravel_multi_index, mgrid, ogrid, r_, c_,
ndenumerate, index_exp, s_, ix_, fill_diagonal, diag_indices,
diag_indices_from and ndindex against NumPy 1.24.  A call made of
constants runs by NumPy, by hop.numpy's own name eagerly and compiled
(numpy_diff.check_ns, xp the namespace); a call with an array argument
also eagerly on hop.numpy arrays (numpy_diff.check with eager=True), where
the array is traced in hop.compile.  Torch's xfails (mgrid, r_,
ndenumerate, ix_, ndindex "not implemented") are ported as tests: hop.numpy
has them.  Random inputs are drawn outside the function.
TestGrid.test_accepts_longdouble (torch's skip: long double, which hop has
not) is not ported."""

import functools

import numpy as np
import pytest

from numpy_diff import ported

import numpy_diff

SRC = "numpy_tests/lib/test_index_tricks.py"
port = lambda test: ported(SRC, test)  # noqa: E731
check = functools.partial(numpy_diff.check, eager=True)
check_ns = numpy_diff.check_ns
RNG = np.random.default_rng(29)


# ------------------------------------------------------ TestRavelUnravelIndex

BASIC = [
    lambda xp: xp.unravel_index(2, (2, 2)),
    lambda xp: xp.unravel_index(indices=2, shape=(2, 2)),
    lambda xp: xp.unravel_index(indices=2, hape=(2, 2)),
    lambda xp: xp.unravel_index(2, hape=(2, 2)),
    lambda xp: xp.unravel_index(254, ims=(17, 94)),
    lambda xp: xp.unravel_index(254, dims=(17, 94)),
    lambda xp: xp.ravel_multi_index((1, 0), (2, 2)),
    lambda xp: xp.unravel_index(254, (17, 94)),
    lambda xp: xp.ravel_multi_index((2, 66), (17, 94)),
    lambda xp: xp.unravel_index(-1, (2, 2)),
    lambda xp: xp.unravel_index(0.5, (2, 2)),
    lambda xp: xp.unravel_index(4, (2, 2)),
    lambda xp: xp.ravel_multi_index((-3, 1), (2, 2)),
    lambda xp: xp.ravel_multi_index((2, 1), (2, 2)),
    lambda xp: xp.ravel_multi_index((0, -3), (2, 2)),
    lambda xp: xp.ravel_multi_index((0, 2), (2, 2)),
    lambda xp: xp.ravel_multi_index((0.1, 0.0), (2, 2)),
    lambda xp: xp.unravel_index((2 * 3 + 1) * 6 + 4, (4, 3, 6)),
    lambda xp: xp.ravel_multi_index([2, 1, 4], (4, 3, 6)),
    lambda xp: xp.ravel_multi_index((3, 1, 4, 1), (6, 7, 8, 9)),
    lambda xp: xp.unravel_index(1621, (6, 7, 8, 9)),
]


@port("TestRavelUnravelIndex.test_basic")
@pytest.mark.parametrize("i", range(len(BASIC)))
def test_basic(i):
    check_ns(BASIC[i])


ARR = np.array([[3, 6, 6], [4, 5, 1]])
BASIC_ARRAYS = [
    lambda a: np.ravel_multi_index(a, (7, 6)),
    lambda a: np.ravel_multi_index(a, (7, 6), order="F"),
    lambda a: np.ravel_multi_index(a, (4, 6), mode="clip"),
    lambda a: np.ravel_multi_index(a, (4, 4), mode=("clip", "wrap")),
    lambda a: np.unravel_index(np.ravel_multi_index(a, (7, 6)), (7, 6)),
    lambda a: np.unravel_index(np.ravel_multi_index(a, (7, 6), order="F"), (7, 6), order="F"),
    lambda a: np.ravel_multi_index(a, (4, 6)),  # out of range: NumPy's ValueError
    lambda a: np.unravel_index(a, (2, 3)),      # out of range: NumPy's ValueError
    lambda a: np.unravel_index(a - 4, (7, 6)),  # negative: NumPy's ValueError
]


@port("TestRavelUnravelIndex.test_basic")
@pytest.mark.parametrize("i", range(len(BASIC_ARRAYS)))
def test_basic_arrays(i):
    check(BASIC_ARRAYS[i], ARR)


EMPTY = [
    (True, lambda xp: xp.unravel_index([], (10, 3, 5))),
    (True, lambda xp: xp.unravel_index((), (10, 3, 5))),
    (True, lambda xp: xp.unravel_index(xp.array([]), (10, 3, 5))),
    (False, lambda xp: xp.unravel_index(xp.array([], dtype=int), (10, 3, 5))),
    (True, lambda xp: xp.ravel_multi_index(([], []), (10, 3))),
    (True, lambda xp: xp.ravel_multi_index(([], ["abc"]), (10, 3))),
    (True, lambda xp: xp.ravel_multi_index((xp.array([]), xp.array([])), (5, 3))),
    (False, lambda xp: xp.ravel_multi_index((xp.array([], dtype=int),
                                             xp.array([], dtype=int)), (5, 3))),
    (False, lambda xp: xp.ravel_multi_index(xp.array([[], []], dtype=int), (5, 3))),
]


@port("TestRavelUnravelIndex.test_empty_indices")
@pytest.mark.parametrize("i", range(len(EMPTY)))
def test_empty_indices(i):
    text, fn = EMPTY[i]
    check_ns(fn, text=text)


@port("TestRavelUnravelIndex.test_empty_indices")
def test_empty_indices_arrays():
    check(lambda a: np.unravel_index(a, (10, 3, 5)), np.array([], dtype=int))
    check(lambda a: np.unravel_index(a, (10, 3, 5)), np.array([]))
    check(lambda a, b: np.ravel_multi_index((a, b), (5, 3)), np.array([], dtype=int),
          np.array([], dtype=int))
    check(lambda a, b: np.ravel_multi_index((a, b), (5, 3)), np.array([]), np.array([]))


HALF_MAX = np.iinfo(np.intp).max // 2
BIG = [
    lambda xp: xp.ravel_multi_index(([1, 29], [3, 5], [3, 117], [19, 2], [2379, 1284], [2, 2],
                                     [0, 1]), (41, 7, 120, 36, 2706, 8, 6)),
    lambda xp: xp.unravel_index(1, (2**32 - 1, 2**31 + 1)),
    lambda xp: xp.ravel_multi_index(([0], [0]), (HALF_MAX, 2)),
    lambda xp: xp.ravel_multi_index(([0], [0]), (HALF_MAX + 1, 2)),
    lambda xp: xp.ravel_multi_index(([0], [0]), (HALF_MAX, 2), order="F"),
    lambda xp: xp.ravel_multi_index(([0], [0]), (HALF_MAX + 1, 2), order="F"),
]


@port("TestRavelUnravelIndex.test_big_indices")
@pytest.mark.parametrize("i", range(len(BIG)))
def test_big_indices(i):
    check_ns(BIG[i], text=True)


@port("TestRavelUnravelIndex.test_big_indices")
def test_big_indices_arrays():
    arr = np.array([[1, 29], [3, 5], [3, 117], [19, 2], [2379, 1284], [2, 2], [0, 1]])
    check(lambda a: np.ravel_multi_index(a, (41, 7, 120, 36, 2706, 8, 6)), arr)
    check(lambda a: np.ravel_multi_index(a, (HALF_MAX + 1, 2)), np.zeros((2, 1), int))
    check(lambda a: np.unravel_index(a, (2**32 - 1, 2**31 + 1)), np.array([1]))


@port("TestRavelUnravelIndex.test_dtypes")
@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                   np.uint64])
def test_dtypes(dtype):
    def f(coords, coords3):
        out = []
        for c, shape in ((coords, (5, 8)), (coords3, (5, 8, 10))):
            for order in ("C", "F"):
                flat = np.ravel_multi_index(c, shape, order=order)
                out += [flat, np.unravel_index(flat, shape, order=order)]
        return out
    check(f, np.array([[1, 0, 1, 2, 3, 4], [1, 6, 1, 3, 2, 0]], dtype=dtype),
          np.array([[1, 0, 1, 2, 3, 4], [1, 6, 1, 3, 2, 0], [1, 3, 1, 0, 9, 5]], dtype=dtype))


@port("TestRavelUnravelIndex.test_clipmodes")
@pytest.mark.parametrize("mode", ["wrap", ("wrap", "raise", "clip", "raise"), "raise"])
def test_clipmodes(mode):
    check_ns(lambda xp: xp.ravel_multi_index([5, 1, -1, 2], (4, 3, 7, 12), mode=mode))
    check(lambda a: np.ravel_multi_index(a, (4, 3, 7, 12), mode=mode), np.array([5, 1, -1, 2]))


@port("TestRavelUnravelIndex.test_writeability")
def test_writeability():
    def f(a):
        x, y = np.unravel_index(a, (4, 5))
        x[0] = 9
        y[1] = 9
        return x.flags.writeable, y.flags.writeable, x, y
    check(f, np.array([1, 2, 3]))
    check_ns(lambda xp: [r.flags.writeable for r in xp.unravel_index([1, 2, 3], (4, 5))])


ZERO_D = [
    lambda xp: xp.unravel_index(0, ()),
    lambda xp: xp.unravel_index([0], ()),
    lambda xp: xp.unravel_index([1], ()),
]


@port("TestRavelUnravelIndex.test_0d")
@pytest.mark.parametrize("i", range(len(ZERO_D)))
def test_0d(i):
    check_ns(ZERO_D[i], text=True)


@port("TestRavelUnravelIndex.test_empty_array_ravel")
@pytest.mark.parametrize("mode", ["clip", "wrap", "raise"])
def test_empty_array_ravel(mode):
    check(lambda a: np.ravel_multi_index(a, (2, 1, 0), mode=mode), np.zeros((3, 0), np.intp))
    check(lambda a: np.ravel_multi_index(a, (2, 1, 0), mode=mode), np.zeros((3, 1), np.intp))


@port("TestRavelUnravelIndex.test_empty_array_unravel")
def test_empty_array_unravel():
    check(lambda a: np.unravel_index(a, (2, 1, 0)), np.zeros(0, np.intp))
    check(lambda a: np.unravel_index(a, (2, 1, 0)), np.array([1]))
    check_ns(lambda xp: xp.unravel_index([1], (2, 1, 0)), text=True)


# ------------------------------------------------------------------ TestGrid


@port("TestGrid.test_basic")
def test_grid_basic():
    check_ns(lambda xp: (xp.mgrid[-1:1:10j], xp.mgrid[-1:1:0.1]))


@port("TestGrid.test_linspace_equivalence")
def test_linspace_equivalence():
    check_ns(lambda xp: (xp.linspace(2, 10, retstep=True), xp.mgrid[2:10:50j]))


@port("TestGrid.test_nd")
def test_grid_nd():
    check_ns(lambda xp: (xp.mgrid[-1:1:10j, -2:2:10j], xp.mgrid[-1:1:0.1, -2:2:0.2]))


@port("TestGrid.test_sparse")
def test_grid_sparse():
    def f(xp):
        full = xp.mgrid[-1:1:10j, -2:2:10j]
        sparse = xp.ogrid[-1:1:10j, -2:2:10j]
        return full, sparse, xp.broadcast_arrays(*sparse)
    check_ns(f)


@port("TestGrid.test_mgrid_size_none_handling")
@pytest.mark.parametrize("start, stop, step", [(None, 10, 10j), (-10, 20, None)])
def test_mgrid_size_none_handling(start, stop, step):
    check_ns(lambda xp: (xp.mgrid[start:stop:step, start:stop:step],
                         xp.mgrid[start:stop:step]))


@port("TestGrid.test_accepts_npfloating")
def test_accepts_npfloating():
    def f(xp):
        f32 = np.float32
        return (xp.mgrid[0.1:0.33:0.1, ], xp.mgrid[f32(0.1):f32(0.33):f32(0.1), ],
                xp.mgrid[0.1:0.33:0.1], xp.mgrid[f32(0.1):f32(0.33):f32(0.1)])
    check_ns(f)


@port("TestGrid.test_accepts_npcomplexfloating")
def test_accepts_npcomplexfloating():
    # (the clongdouble steps left out: hop has no long double)
    def f(xp):
        return (xp.mgrid[0.1:0.3:3j, ], xp.mgrid[0.1:0.3:np.complex64(3j), ],
                xp.mgrid[0.1:0.3:3j], xp.mgrid[0.1:0.3:np.complex64(3j)],
                xp.mgrid[0.1:0.3:3.3j], xp.mgrid[0.1:0.3:3.3j, ][0])
    check_ns(f)


# ---------------------------------------------------------- TestConcatenator


@port("TestConcatenator.test_1d")
def test_r_1d():
    check_ns(lambda xp: xp.r_[1, 2, 3, 4, 5, 6])
    check(lambda b: np.r_[b, 0, 0, b], np.ones(5))


@port("TestConcatenator.test_mixed_type")
def test_r_mixed_type():
    check_ns(lambda xp: xp.r_[10.1, 1:10])


@port("TestConcatenator.test_more_mixed_type")
def test_r_more_mixed_type():
    check_ns(lambda xp: xp.r_[-10.1, xp.array([1]), xp.array([2, 3, 4]), 10.0])
    check(lambda a, b: np.r_[-10.1, a, b, 10.0], np.array([1]), np.array([2, 3, 4]))


@port("TestConcatenator.test_complex_step")
def test_r_complex_step():
    check_ns(lambda xp: (xp.r_[0:36:100j], xp.r_[0:36:np.complex64(100j)]))


@port("TestConcatenator.test_2d")
def test_r_2d():
    check(lambda b, c: (np.r_["1", b, c], np.r_[b, c]), RNG.random((5, 5)), RNG.random((5, 5)))


@port("TestConcatenator.test_0d")
def test_r_0d():
    check_ns(lambda xp: (xp.r_[0, xp.array(1), 2], xp.r_[[0, 1, 2], xp.array(3)],
                         xp.r_[xp.array(0), [1, 2, 3]]))
    check(lambda a, b: (np.r_[0, a, 2], np.r_[[0, 1, 2], b], np.r_[a, [1, 2, 3]]), np.array(1),
          np.array(3))


# ------------------------------------------------- TestNdenumerate, TestNdIndex


@port("TestNdenumerate.test_basic")
def test_ndenumerate():
    check_ns(lambda xp, a: list(xp.ndenumerate(a)), np.array([[1, 2], [3, 4]]))


@port("TestNdIndex.test_ndindex")
def test_ndindex():
    def f(xp):
        return [list(xp.ndindex(1, 2, 3)),
                [ix for ix, e in xp.ndenumerate(xp.zeros((1, 2, 3)))],
                list(xp.ndindex((1, 2, 3))), list(xp.ndindex((3,))), list(xp.ndindex(3)),
                list(xp.ndindex()), list(xp.ndindex(())), list(xp.ndindex(*[0]))]
    check_ns(f)


# ------------------------------------------------------- TestIndexExpression


@port("TestIndexExpression.test_regression_1")
def test_index_expression_regression_1():
    check(lambda a: (a[:-1], a[np.s_[:-1]], a[np.index_exp[:-1]]), np.arange(2))


@port("TestIndexExpression.test_simple_1")
def test_index_expression_simple_1():
    check(lambda a: (a[:, :3, [1, 2]], a[np.index_exp[:, :3, [1, 2]]], a[np.s_[:, :3, [1, 2]]]),
          RNG.random((4, 5, 6)))


# ------------------------------------------------------------------ TestIx_


@port("TestIx_.test_regression_1")
def test_ix_regression_1():
    check_ns(lambda xp: (xp.ix_(range(0)), xp.ix_([]), xp.ix_(xp.array([], dtype=xp.float32))))
    check(lambda a: np.ix_(a), np.array([], dtype=np.float32))


@port("TestIx_.test_shape_and_dtype")
def test_ix_shape_and_dtype():
    sizes = (4, 5, 3, 2)
    check_ns(lambda xp: (xp.ix_(*[range(sz) for sz in sizes]),
                         xp.ix_(*[xp.arange(sz) for sz in sizes])))
    check(lambda a, b, c, d: np.ix_(a, b, c, d), *[np.arange(sz) for sz in sizes])


@port("TestIx_.test_bool")
def test_ix_bool():
    check_ns(lambda xp: (xp.ix_([True, False, True, True])[0],
                         xp.nonzero([True, False, True, True])))
    check(lambda m: np.ix_(m), np.array([True, False, True, True]))


@port("TestIx_.test_1d_only")
def test_ix_1d_only():
    check_ns(lambda xp: xp.ix_([[1, 2, 3], [4, 5, 6]]), text=True)
    check(lambda a: np.ix_(a), np.array([[1, 2, 3], [4, 5, 6]]))


@port("TestIx_.test_repeated_input")
def test_ix_repeated_input():
    check(lambda x: (np.ix_(x, x), x.shape), np.arange(5))


# --------------------------------------------------------------------- TestC


@port("TestC.test_c_")
def test_c_():
    check_ns(lambda xp: xp.c_[xp.array([[1, 2, 3]]), 0, 0, xp.array([[4, 5, 6]])])
    check(lambda a, b: np.c_[a, 0, 0, b], np.array([[1, 2, 3]]), np.array([[4, 5, 6]]))


# ---------------------------------------------------------- TestFillDiagonal


def _fill(a, *args):
    np.fill_diagonal(a, *args)
    return a


@port("TestFillDiagonal.test_basic")
def test_fill_diagonal_basic():
    check(_fill, np.zeros((3, 3), dtype=int), 5)


@port("TestFillDiagonal.test_tall_matrix")
def test_fill_diagonal_tall_matrix():
    check(_fill, np.zeros((10, 3), dtype=int), 5)


@port("TestFillDiagonal.test_tall_matrix_wrap")
def test_fill_diagonal_tall_matrix_wrap():
    check(_fill, np.zeros((10, 3), dtype=int), 5, True)


@port("TestFillDiagonal.test_wide_matrix")
def test_fill_diagonal_wide_matrix():
    check(_fill, np.zeros((3, 10), dtype=int), 5)


@port("TestFillDiagonal.test_operate_4d_array")
def test_fill_diagonal_operate_4d_array():
    check(lambda a: np.where(_fill(a, 4) != 0), np.zeros((3, 3, 3, 3), dtype=int))


@port("TestFillDiagonal.test_low_dim_handling")
def test_fill_diagonal_low_dim_handling():
    check(_fill, np.zeros(3, dtype=int), 5)


@port("TestFillDiagonal.test_hetero_shape_handling")
def test_fill_diagonal_hetero_shape_handling():
    check(_fill, np.zeros((3, 3, 7, 3), dtype=int), 2)


# ------------------------------------------- TestDiagIndices, TestDiagIndicesFrom


@port("TestDiagIndices.test_diag_indices")
def test_diag_indices():
    def f(a, b):
        a[np.diag_indices(4)] = 100
        b[np.diag_indices(2, 3)] = 1
        return a, b, np.diag_indices(4), np.diag_indices(2, 3)
    check(f, np.arange(1, 17).reshape(4, 4), np.zeros((2, 2, 2), dtype=int))
    check_ns(lambda xp: (xp.diag_indices(4), xp.diag_indices(2, 3)))


@port("TestDiagIndicesFrom.test_diag_indices_from")
def test_diag_indices_from():
    check(np.diag_indices_from, RNG.random((4, 4)))


@port("TestDiagIndicesFrom.test_error_small_input")
def test_diag_indices_from_error_small_input():
    check(np.diag_indices_from, np.ones(7))


@port("TestDiagIndicesFrom.test_error_shape_mismatch")
def test_diag_indices_from_error_shape_mismatch():
    check(np.diag_indices_from, np.zeros((3, 3, 2, 3), dtype=int))
