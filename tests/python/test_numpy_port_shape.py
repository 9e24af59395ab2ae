"""Ported from PyTorch's test/torch_np/numpy_tests/core/test_shape_base.py
(issue #29): atleast_nd, hstack, vstack, concatenate, stack and block, each
call run by NumPy, eagerly by hop.numpy and by hop.compile (numpy_diff.check).  Complex inputs
are another issue's and left out."""

import functools

import numpy as np
import pytest

from numpy_diff import ported
import numpy_diff

# each case by NumPy, by eager hop.numpy (every ndarray argument through
# hop.numpy.asarray) and compiled (the forty-eighth session)
check = functools.partial(numpy_diff.check, eager=True)
raises = functools.partial(numpy_diff.raises, eager=True)

SRC = "numpy_tests/core/test_shape_base.py"

A0, B0 = np.array(1), np.array(2)
A1, B1 = np.array([1, 2]), np.array([2, 3])
A2, B2 = np.array([[1, 2], [1, 2]]), np.array([[2, 3], [2, 3]])
A3, B3 = np.array([A2, A2]), np.array([B2, B2])


@pytest.mark.parametrize("fn", [np.atleast_1d, np.atleast_2d, np.atleast_3d],
                         ids=["1d", "2d", "3d"])
@pytest.mark.parametrize("a,b", [(A0, B0), (A1, B1), (A2, B2), (A3, B3)],
                         ids=["0D", "1D", "2D", "3D"])
def test_atleast(fn, a, b):
    check(lambda a, b: [fn(a), fn(b), fn(a, b)], a, b)


for _n, _fn in [("1", "atleast_1d"), ("2", "atleast_2d"), ("3", "atleast_3d")]:
    for _t in ["test_0D_array", "test_1D_array", "test_2D_array", "test_3D_array"]:
        ported(SRC, f"TestAtleast{_n}d.{_t}")(test_atleast)


@ported(SRC, "TestAtleast1d.test_r1array")
@ported(SRC, "TestAtleast2d.test_r2array")
def test_r1array_r2array():
    check(lambda: (np.atleast_1d(3).shape, np.atleast_1d(3.0).shape,
                   np.atleast_1d([[2, 3], [4, 5]]).shape, np.atleast_2d(3).shape,
                   np.atleast_2d([3, 1]).shape,
                   np.atleast_2d([[[3, 1], [4, 5]], [[3, 5], [1, 2]]]).shape))
    check(lambda x: (np.atleast_1d(x[0]), np.atleast_2d(x[0]), np.atleast_2d(x)),
          np.array([3.0, 1.0]))


@pytest.mark.parametrize("fn", [np.hstack, np.vstack], ids=["hstack", "vstack"])
def test_stack_non_iterable_and_empty(fn):
    raises(TypeError, lambda: fn(1))
    raises(ValueError, lambda: fn(()))


for _c in ["TestHstack", "TestVstack"]:
    ported(SRC, f"{_c}.test_non_iterable")(test_stack_non_iterable_and_empty)
    ported(SRC, f"{_c}.test_empty_input")(test_stack_non_iterable_and_empty)


@ported(SRC, "TestHstack.test_0D_array")
@ported(SRC, "TestHstack.test_1D_array")
@ported(SRC, "TestHstack.test_2D_array")
@ported(SRC, "TestVstack.test_0D_array")
@ported(SRC, "TestVstack.test_1D_array")
@ported(SRC, "TestVstack.test_2D_array")
@ported(SRC, "TestVstack.test_2D_array2")
@pytest.mark.parametrize("a,b", [(np.array(1), np.array(2)), (np.array([1]), np.array([2])),
                                 (np.array([[1], [2]]), np.array([[1], [2]])),
                                 (np.array([1, 2]), np.array([1, 2]))])
def test_hstack_vstack(a, b):
    check(lambda a, b: (np.hstack([a, b]), np.vstack([a, b]), np.hstack((a, b)),
                        np.vstack((b, a))), a, b)


@ported(SRC, "TestHstack.test_generator")
@ported(SRC, "TestVstack.test_generator")
def test_stack_generator():
    check(lambda x: np.hstack(x + k for k in range(2)), np.arange(3))
    check(lambda x: np.hstack(r for r in x), np.ones((3, 2)))


@ported(SRC, "TestHstack.test_casting_and_dtype")
@ported(SRC, "TestHstack.test_casting_and_dtype_type_error")
@ported(SRC, "TestVstack.test_casting_and_dtype")
@ported(SRC, "TestVstack.test_casting_and_dtype_type_error")
@pytest.mark.parametrize("fn", [np.hstack, np.vstack], ids=["hstack", "vstack"])
def test_stack_casting_and_dtype(fn):
    a, b = np.array([1, 2, 3]), np.array([2.5, 3.5, 4.5])
    check(lambda a, b: fn((a, b), casting="unsafe", dtype=np.int64), a, b)
    raises(TypeError, lambda a, b: fn((a, b), casting="safe", dtype=np.int64), a, b)


@ported(SRC, "TestConcatenate.test_out_and_dtype_simple")
def test_concatenate_out_and_dtype_simple():
    raises(TypeError, lambda a, b, out: np.concatenate((a, b), out=out, dtype=float),
           np.ones(3), np.ones(4), np.ones(7))


@ported(SRC, "TestConcatenate.test_returns_copy")
def test_concatenate_returns_copy():
    def f(a):
        b = np.concatenate([a])
        b[0, 0] = 2
        return a, b
    check(f, np.eye(3))


@ported(SRC, "TestConcatenate.test_exceptions")
def test_concatenate_exceptions():
    for ndim in [1, 2, 3]:
        a = np.ones((1,) * ndim)
        check(lambda a: np.concatenate((a, a), axis=0), a)
        raises(np.AxisError, lambda a: np.concatenate((a, a), axis=ndim), a)
        raises(np.AxisError, lambda a: np.concatenate((a, a), axis=-(ndim + 1)), a)
    raises(ValueError, lambda: np.concatenate((0,)))
    raises(ValueError, lambda x: np.concatenate((x,)), np.array(0))
    raises(ValueError, lambda a, b: np.concatenate((a, b)), np.zeros(1), np.zeros((1, 1)))
    a, b = np.ones((1, 2, 3)), np.ones((2, 2, 3))
    axis = list(range(3))
    for _ in range(3):
        check(lambda a, b: np.concatenate((a, b), axis=axis[0]), a, b)
        raises(ValueError, lambda a, b: np.concatenate((a, b), axis=axis[1]), a, b)
        raises(ValueError, lambda a, b: np.concatenate((a, b), axis=axis[2]), a, b)
        a, b = np.moveaxis(a, -1, 0), np.moveaxis(b, -1, 0)
        axis.append(axis.pop(0))
    raises(ValueError, lambda: np.concatenate(()))


@ported(SRC, "TestConcatenate.test_concatenate_axis_None")
def test_concatenate_axis_none():
    def f(a):
        b = list(range(3))
        r = np.concatenate((a, a), axis=None)
        r2 = np.concatenate((a, b), axis=None)
        out = np.zeros(a.size + len(b))
        rout = np.concatenate((a, b), axis=None, out=out)
        return r, r2, rout is out, out
    check(f, np.arange(4, dtype=np.float64).reshape((2, 2)))


@ported(SRC, "TestConcatenate.test_large_concatenate_axis_None")
def test_large_concatenate_axis_none():
    check(lambda x: np.concatenate(x, None), np.arange(1, 100))


@ported(SRC, "TestConcatenate.test_concatenate")
def test_concatenate():
    r4, r3 = list(range(4)), list(range(3))
    check(lambda: (np.concatenate((r4, r3)), np.concatenate((tuple(r4), r3)),
                   np.concatenate((r4, r3), 0), np.concatenate((r4, r3), -1)))
    check(lambda a: np.concatenate((a, r3)), np.array(r4))

    def f(a23, a13, res):
        r = [np.concatenate((a23, a13)), np.concatenate((a23, a13), 0),
             np.concatenate((a23.T, a13.T), 1), np.concatenate((a23.T, a13.T), -1)]
        a0, a1, a2 = res[..., :4], res[..., 4:6], res[..., 6:]
        r += [np.concatenate((a0, a1, a2), 2), np.concatenate((a0, a1, a2), -1),
              np.concatenate((a0.T, a1.T, a2.T), 0)]
        out = res.copy()
        rout = np.concatenate((a0, a1, a2), 2, out=out)
        return r + [rout is out, rout]
    check(f, np.array([[10, 11, 12], [13, 14, 15]]), np.array([[0, 1, 2]]),
          np.arange(2 * 3 * 7).reshape((2, 3, 7)))
    raises(ValueError, lambda a, b: np.concatenate((a.T, b.T), 0),
           np.array([[10, 11, 12], [13, 14, 15]]), np.array([[0, 1, 2]]))


@ported(SRC, "TestConcatenate.test_bad_out_shape")
def test_concatenate_bad_out_shape():
    a, b = np.array([1, 2]), np.array([3, 4])
    for shape in [5, (4, 1), (1, 4)]:
        raises(ValueError, lambda a, b: np.concatenate((a, b), out=np.empty(shape)), a, b)
    check(lambda a, b: np.concatenate((a, b), out=np.empty(4)), a, b)


@ported(SRC, "TestConcatenate.test_out_and_dtype")
@pytest.mark.parametrize("axis", [None, 0])
@pytest.mark.parametrize("out_dtype", ["f4", "f8", "i8"])
@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_concatenate_out_and_dtype(axis, out_dtype, casting):
    def f(a, b):
        out = np.empty(4, dtype=out_dtype)
        r = np.concatenate((a, b), out=out, axis=axis, casting=casting)
        return r is out, out, np.concatenate((a, b), dtype=out_dtype, axis=axis, casting=casting)
    check(f, np.array([1.1, 2.2]), np.array([3.3, 4.4]))
    raises(TypeError, lambda a, b: np.concatenate((a, b), out=np.empty(4, out_dtype),
                                                  dtype=out_dtype, axis=axis),
           np.array([1.1, 2.2]), np.array([3.3, 4.4]))


@ported(SRC, "test_stack")
def test_stack():
    raises(TypeError, lambda: np.stack(1))
    check(lambda: (np.stack((1, 2, 3)), np.stack([np.int32(1), np.int32(2), np.int32(3)]),
                   np.stack([np.array(1), np.array(2), np.array(3)])))

    def f(a, b):
        return (np.stack((a, b)), np.stack((a, b), axis=1), np.stack([a, b]),
                np.stack(np.array([a, b])))
    a, b = np.array([1, 2, 3]), np.array([4, 5, 6])
    check(f, a, b)
    rng = np.random.default_rng(0)
    for shape, axes in [((3,), [0, 1, -1, -2]), ((3, 4), [0, 1, 2, -1, -2, -3])]:
        arrays = [rng.standard_normal(shape) for _ in range(10)]
        check(lambda *xs: [np.stack(xs, ax).shape for ax in axes] + [np.stack(xs, 1)], *arrays)
    arrays = [rng.standard_normal(3) for _ in range(10)]
    raises(np.AxisError, lambda *xs: np.stack(xs, axis=2), *arrays)
    raises(np.AxisError, lambda *xs: np.stack(xs, axis=-3), *arrays)
    check(lambda: (np.stack([[], [], []]).shape, np.stack([[], [], []], axis=1).shape))

    def g(a, b):
        out = np.zeros_like(np.array([[1, 2, 3], [4, 5, 6]]))
        np.stack((a, b), out=out)
        return out
    check(g, a, b)
    raises(ValueError, lambda: np.stack([]))
    raises(ValueError, lambda x: np.stack([1, x]), np.arange(3))
    raises(ValueError, lambda x: np.stack([x, 1]), np.arange(3))
    raises(ValueError, lambda x: np.stack([x, 1], axis=1), np.arange(3))
    raises(ValueError, lambda a, b: np.stack([a, b], axis=1), np.zeros((3, 3)), np.zeros(3))
    raises(ValueError, lambda a, b: np.stack([a, b]), np.arange(2), np.arange(3))
    # (NumPy does not dispatch a generator of arrays: a list here)
    check(lambda y: np.stack([y + x for x in range(3)]), np.array(0))
    a, b = np.array([1, 2, 3]), np.array([2.5, 3.5, 4.5])
    check(lambda a, b: np.stack((a, b), axis=1, casting="unsafe", dtype=np.int64), a, b)
    raises(TypeError, lambda a, b: np.stack((a, b), dtype=np.int64, axis=1, casting="safe"),
           a, b)


@ported(SRC, "test_stack_out_and_dtype")
@pytest.mark.parametrize("out_dtype", ["f4", "f8", "i8"])
@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_stack_out_and_dtype(out_dtype, casting):
    def f(a, b):
        out = np.zeros((2, 2), dtype=np.int64)
        r = np.stack((a, b), out=out, axis=0, casting=casting)
        return r is out, out, np.stack((a, b), dtype=out_dtype, axis=0, casting=casting)
    check(f, np.array([1, 2]), np.array([3, 4]))
    raises(TypeError, lambda a, b: np.stack((a, b), out=np.zeros((2, 2), dtype=np.int64),
                                            dtype=out_dtype, axis=0),
           np.array([1, 2]), np.array([3, 4]))


# ------------------------------------------------------------------- block

SRC_BLOCK = SRC


def _blk(name):
    return ported(SRC, f"TestBlock.{name}")


@_blk("test_returns_copy")
def test_block_returns_copy():
    def f(a):
        b = np.block(a)
        b[0, 0] = 2
        return a, b
    check(f, np.eye(3))


@_blk("test_block_simple_row_wise")
@_blk("test_block_simple_column_wise")
@_blk("test_block_with_1d_arrays_row_wise")
@_blk("test_block_with_1d_arrays_multiple_rows")
@_blk("test_block_with_1d_arrays_column_wise")
@_blk("test_block_mixed_1d_and_2d")
def test_block_simple():
    def f(a2, a1):
        b2, b1 = 2 * a2, a1 + 1
        return (np.block([a2, b2]), np.block([[a2], [b2]]), np.block([a1, b1]),
                np.block([[a1, b1], [a1, b1]]), np.block([[a1], [b1]]),
                np.block([[a2], [np.array([2, 2])]]))
    check(f, np.ones((2, 2)), np.array([1, 2]))


@_blk("test_block_complicated")
def test_block_complicated():
    def f(one_2d, four_1d):
        return np.block([[one_2d, one_2d * 2], [np.array([[3, 3, 3, 3, 3, 3]])], [four_1d],
                         [np.array(5), np.array([6, 6, 6, 6, 6])], [np.zeros((2, 6))]])
    check(f, np.array([[1, 1, 1]]), np.array([4, 4, 4, 4, 4, 4]))


@_blk("test_nested")
def test_block_nested():
    def f(one, two):
        three, four = one * 3, one * 4
        return np.block([[np.block([[one], [three], [four]]), two],
                         [np.array(5), np.array([6, 6, 6, 6, 6])], [np.zeros((2, 6))]])
    check(f, np.array([1, 1, 1]), np.full((3, 3), 2))


@_blk("test_3d")
def test_block_3d():
    def f(o):
        def ones(*shape):
            return np.ones(shape, int) * o
        return np.block([[[ones(2, 2, 2), ones(2, 2, 3) * 4],
                          [ones(2, 3, 2) * 3, ones(2, 3, 3) * 5]],
                         [[ones(3, 2, 2) * 2, ones(3, 2, 3) * 6],
                          [ones(3, 3, 2) * 7, ones(3, 3, 3) * 8]]])
    check(f, np.array(1))


@_blk("test_block_with_mismatched_shape")
def test_block_with_mismatched_shape():
    raises(ValueError, lambda a, b: np.block([a, b]), np.array([0, 0]), np.eye(2))
    raises(ValueError, lambda a, b: np.block([b, a]), np.array([0, 0]), np.eye(2))
    raises(ValueError, lambda: np.block([[np.ones((2, 3)), np.ones((2, 2))],
                                         [np.ones((2, 2)), np.ones((2, 2))]]))


@_blk("test_no_lists")
def test_block_no_lists():
    check(lambda x: (np.block(1), np.block(x)), np.eye(3))


@_blk("test_invalid_nesting")
@_blk("test_empty_lists")
@_blk("test_tuple")
def test_block_invalid():
    for bad in [[1, [2]], [1, []], [[1], 2], [[], 2], [[[1], [2]], [[3, 4]], [5]], [], [[]],
                [[1], []]]:
        raises(ValueError, lambda bad=bad: np.block(bad))
    raises(TypeError, lambda: np.block(([1, 2], [3, 4])))
    raises(TypeError, lambda: np.block([(1, 2), (3, 4)]))


@_blk("test_different_ndims")
@_blk("test_different_ndims_depths")
def test_block_different_ndims():
    def f(b, c):
        return np.block([1.0, b, c]), np.block([[1.0, b[:, :2]], [c.reshape(1, 1, 3)[..., :3]]])
    check(f, 2 * np.ones((1, 2)), 3 * np.ones((1, 1, 3)))
    check(lambda b, c: np.block([[1.0, b], [c]]), 2 * np.ones((1, 2)), 3 * np.ones((1, 2, 3)))
