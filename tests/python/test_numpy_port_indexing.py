"""Ported from PyTorch's test/torch_np/test_indexing.py and
test/torch_np/numpy_tests/core/test_indexing.py (issue #29): each index is
read and assigned through by NumPy, eagerly by hop.numpy and by hop.compile (numpy_diff.check),
with the index a constant of the function and, where it is an integer
array, also an argument (a traced index)."""

import functools
import itertools

import numpy as np
import pytest

from numpy_diff import ported
import numpy_diff

# each case by NumPy, by eager hop.numpy (every ndarray argument through
# hop.numpy.asarray) and compiled (the forty-eighth session)
check = functools.partial(numpy_diff.check, eager=True)
raises = functools.partial(numpy_diff.raises, eager=True)

SRC = "test_indexing.py"

S = slice(None)


def _get_set(index):
    def f(a):
        r = a[index]
        b = a.copy()
        b[index] = np.ones(np.shape(r)) * 999
        return r, b
    return f


def _traced_index(index):
    """index with its lists as arguments: f(a, *arrays)."""
    items = index if isinstance(index, tuple) else (index,)
    where = [k for k, x in enumerate(items) if isinstance(x, list)]
    arrays = [np.array(items[k]) for k in where]

    def f(a, *arrs):
        key = list(items)
        for k, v in zip(where, arrs):
            key[k] = v
        key = tuple(key) if isinstance(index, tuple) else key[0]
        r = a[key]
        b = a.copy()
        b[key] = np.ones(np.shape(r)) * 999
        return r, b
    return f, arrays


def _case(shape, index):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    check(_get_set(index), a)
    f, arrays = _traced_index(index)
    if arrays:
        check(f, a, *arrays)


BASIC = [((10,), ([0, 2, 4],)), ((10,), ([1, 3, 5, 7],)), ((10,), ([0, 0, 1, 1],))] + [
    ((4, 6), i) for i in [(S, [0]), ([0], S), (slice(1, 3), [0, 2]), ([0, 2], slice(1, 4)),
                          ([0, 2], 1), (1, [0, 2, 4])]] + [
    ((3, 4, 5), i) for i in [([0, 2], S, S), (S, [0, 2], S), (S, S, [0, 2, 4]), ([0, 1], S, 2),
                             ([0, 2], 1, S), (1, [1, 3], S), (S, [0, 2], 3), ([0, 1], S, [0, 2]),
                             ([1, 2], slice(1, 3), [1, 3]), (S, [0], S)]] + [
    ((2, 3, 4, 5), i) for i in [(S, [0], 0, S), (S, [0], S, 0), (S, [0, 1], 0, S),
                                (S, [0, 1], S, 0), ([0, 1], S, [0, 2], S), (S, [0, 2], S, [0, 3]),
                                ([0], S, S, [1, 3]), (S, S, [0, 2], [1, 4])]]


@ported(SRC, "TestAdvancedIndexing.test_basic_patterns")
@pytest.mark.parametrize("shape,index", BASIC)
def test_advanced_basic_patterns(shape, index):
    _case(shape, index)


SEPARATED = [((3, 4, 5), i) for i in [([0, 1], S, [1, 2]), ([0, 2], slice(1, 3), [0, 1]),
                                      ([0, 1], 1, [1, 2])]] + [
    ((2, 3, 4, 5, 2), i) for i in [([0], S, [1], S, [0]), ([0, 1], 0, [1], S, [0, 1])]] + [
    ((3, 4, 5, 6, 7, 8), ([1, 2], S, [2, 4], S, [5, 2], S)),
    ((3, 4, 5, 6, 2, 2, 6, 2), ([1, 2], S, S, [2, 4], S, S, [5, 2], S)),
    ((3, 4, 5), ([0, 1], [1, 2])), ((3, 4, 5), ([0, 1], S, [1, 2])),
    ((3, 4, 5), ([0], S, [1])), ((3, 4, 5), ([-1], S, [-1])), ((3, 4, 5), ([0, -1], S, [1, -1]))]


@ported(SRC, "TestAdvancedIndexing.test_separated_indices")
@pytest.mark.parametrize("shape,index", SEPARATED)
def test_advanced_separated_indices(shape, index):
    _case(shape, index)


@ported(SRC, "TestAdvancedIndexing.test_current_logic_issues")
@pytest.mark.parametrize("index", [(0, S, [1], S), (0, [1], S, 0)])
def test_advanced_current_logic_issues(index):
    _case((2, 3, 4, 5), index)


@ported(SRC, "TestAdvancedIndexing.test_comprehensive_edge_cases")
@pytest.mark.parametrize("index", [(S, S, [1, 2], S, S), (S, [1, 2], S, 3, S),
                                   (S, S, S, [1, 2, 3], S), ([1, 2], S, S, S, S),
                                   (S, S, S, S, [1, 2]), (2, [1, 2], S, S, S),
                                   (S, [1, 2], 3, S, S), (2, 3, [1, 2], 4, S)])
def test_advanced_comprehensive_edge_cases(index):
    _case((5, 6, 7, 8, 9), index)


# torch's (10, 20, 30, 40, 50) made smaller: each index still in range
I1, I2 = [[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]
H1, H2 = [[[1, 2]], [[3, 4]]], [[[5, 6]], [[7, 8]]]
V1 = [[[[1, 2]], [[3, 4]]], [[[5, 6]], [[7, 8]]]]
V2 = [[[[9, 10]], [[11, 12]]], [[[13, 14]], [[15, 16]]]]


@ported(SRC, "TestAdvancedIndexing.test_high_dimensional_broadcast_cases")
@pytest.mark.parametrize("index", [(S, I1, I2), (S, I1, S, I2), (I1, S, S, I2, S),
                                   (I1, I2, S, S, S), (S, H1, S, H2), (S, V1, S, V2)])
def test_advanced_high_dimensional_broadcast(index):
    _case((13, 17, 3, 17, 2), index)


@ported(SRC, "TestAdvancedIndexing.test_numpy_docs_examples")
@pytest.mark.parametrize("shape,index", [((5, 7), ([0, 2, 4], slice(1, 3))),
                                         ((4, 3), ([0, 1, 2], [0, 1, 0])),
                                         ((4, 3), ([[0], [3]], [0, 2])), ((5, 7), ([0, 2, 4], 1)),
                                         ((3, 4), ([0, 2], S))])
def test_advanced_numpy_docs_examples(shape, index):
    _case(shape, index)


J1 = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
J2 = [[13, 14, 15, 16], [17, 18, 19, 20], [21, 22, 23, 24]]


@ported(SRC, "TestAdvancedIndexing.test_numpy_specification_examples")
@pytest.mark.parametrize("index", [(S, J1, J2), (S, J1, S, J2)])
def test_advanced_numpy_specification_examples(index):
    _case((2, 25, 3, 25, 2), index)


@ported(SRC, "TestAdvancedIndexing.test_special_cases")
@pytest.mark.parametrize("shape,index", [((4, 6), ([[0, 1], [0, 1]], [[0, 1], [2, 3]])),
                                         ((3, 4, 5), ([0, 1, 2], [0, 1, 0])),
                                         ((3, 4, 5), ([0, 2], slice(1, 3), [1, 3])),
                                         ((4, 5, 6), (S, [1, 3], slice(2, 5))),
                                         ((2, 3, 4), ([0], [1], [2])),
                                         ((5, 5, 5), ([0, 1], S, [2, 3]))])
def test_advanced_special_cases(shape, index):
    _case(shape, index)


@ported(SRC, "TestAdvancedIndexing.test_numpy_state_machine_edge_cases")
@pytest.mark.parametrize("shape,index", [((3, 4, 5, 6), (0, [1, 2], S, 3)),
                                         ((4, 5, 6), ([0, 1], 2, [3, 4])),
                                         ((3, 4, 5, 6), (..., [1, 2], S)),
                                         ((3, 4, 5, 6), ([0, 1], ..., 2)),
                                         ((3, 4, 5), (None, [1, 2], S)),
                                         ((3, 4, 5), ([1, 2], None, S)),
                                         ((3, 4, 5, 6, 7), ([0, 1], S, [2, 3], slice(1, 3), [4, 5])),
                                         ((3, 4, 5), ([0, 1], [2, 3], [1, 4]))])
def test_advanced_state_machine_edge_cases(shape, index):
    _case(shape, index)


# ------------------------------------------- numpy_tests/core/test_indexing

SRC = "numpy_tests/core/test_indexing.py"


def _index_errors(a, keys, exc):
    for key in keys:
        raises(exc, lambda x, key=key: x[key], a)


@ported(SRC, "TestIndexing.test_index_no_floats")
def test_index_no_floats():
    keys = [0.0, (0, 0.0), (0.0, 0), (0.0, S), (S, 0.0), (S, 0.0, S), (0.0, S, S), (0, 0, 0.0),
            (0.0, 0, 0), (0, 0.0, 0), -1.4, (0, -1.4), (-1.4, 0), (-1.4, S), (S, -1.4),
            (S, -1.4, S), (-1.4, S, S), (0, 0, -1.4), (-1.4, 0, 0), (0, -1.4, 0),
            (slice(0.0, None), 0.0), (slice(0.0, None), 0.0, S)]
    _index_errors(np.array([[[5]]]), keys, IndexError)


@ported(SRC, "TestIndexing.test_slicing_no_floats")
def test_slicing_no_floats():
    keys = [slice(0.0, None), (slice(0, None), slice(0.0, 2)), (slice(0.0, None, 2), slice(0)),
            (slice(0.0, 1, 2), S), (S, slice(0.0, None)), slice(0.0), (slice(0), slice(1, 2.0)),
            (slice(None, 0.0, 2), slice(0)), (slice(0.0), S), (S, slice(0, 4.0, 2)),
            slice(None, None, 1.0), (slice(0, None), slice(None, 2, 2.0)),
            (slice(1, None, 4.0), slice(0)), (slice(None, None, 5.0), S),
            (S, slice(0, 4, 2.0)), slice(1.0, 2, 2.0), slice(1.0, None, 2.0),
            (slice(0, None), slice(None, 2.0, 2.0)), (slice(1.0, 1, 4.0), slice(0)),
            (slice(1.0, 5.0, 5.0), S), (S, slice(0.4, 4.0, 2.0)), slice(None, None, 0.0)]
    _index_errors(np.array([[5]]), keys, TypeError)


@ported(SRC, "TestIndexing.test_none_index")
def test_none_index():
    check(lambda a: (a[None], a[np.newaxis], a[None].ndim), np.array([1, 2, 3]))


@ported(SRC, "TestIndexing.test_empty_tuple_index")
def test_empty_tuple_index():
    def f(a, z):
        v = a[()]
        v[0] = 7  # a view
        return a[()], z[()]  # (type(z[()]) under a trace: issue #24)
    check(f, np.array([1, 2, 3]), np.array(0))


@ported(SRC, "TestIndexing.test_same_kind_index_casting")
def test_same_kind_index_casting():
    def f(index):
        u_index = index.astype(np.uint8)
        arr = np.arange(10)
        r = [arr[index], arr[u_index]]
        arr[u_index] = np.arange(5)
        r.append(arr)
        arr2 = np.arange(10).reshape(5, 2)
        r += [arr2[index], arr2[u_index]]
        arr2[u_index] = np.arange(5)[:, None]
        r.append(arr2)
        arr3 = np.arange(25).reshape(5, 5)
        r += [arr3[u_index, u_index], arr3[index, index]]
        return r
    check(f, np.arange(5))


@ported(SRC, "TestIndexing.test_empty_fancy_index")
def test_empty_fancy_index():
    check(lambda a, b: (a[[]], a[[]].dtype, a[b]), np.array([1, 2, 3]),
          np.array([], dtype=np.intp))
    raises(IndexError, lambda a, b: a[b], np.array([1, 2, 3]), np.array([]))


@ported(SRC, "TestIndexing.test_ellipsis_index")
def test_ellipsis_index():
    def f(a):
        r = [a[...] is not a, a[...], a[0, ...], a[0], a[0, :], a[..., 0], a[:, 0], a[0, ..., 1]]
        v = a[...]
        v[1, 1] = 50  # a view
        b = np.array(1)
        b[(Ellipsis,)] = 2
        return r + [a, b]
    check(f, np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]))


@ported(SRC, "TestIndexing.test_single_int_index")
def test_single_int_index():
    a = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    check(lambda a: (a[0], a[-1]), a)
    raises(IndexError, lambda a: a[1 << 30], a)
    raises(IndexError, lambda a: a[1 << 64], a)


@ported(SRC, "TestIndexing.test_single_bool_index")
def test_single_bool_index():
    check(lambda a: (a[np.array(True)], a[None], a[np.array(False)], a[None][0:0]),
          np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]))


@ported(SRC, "TestIndexing.test_boolean_shape_mismatch")
def test_boolean_shape_mismatch():
    arr = np.ones((5, 4, 3))
    for index in [np.array([True]), np.array([False] * 6), np.zeros((4, 4), dtype=bool)]:
        raises(IndexError, lambda a, i: a[i], arr, index)
    raises(IndexError, lambda a, i: a[:, i], arr, np.zeros((4, 4), dtype=bool))


@ported(SRC, "TestIndexing.test_boolean_indexing_onedim")
def test_boolean_indexing_onedim():
    def f(a, b):
        r = a[b]
        a[b] = 1.0
        return r, a
    check(f, np.array([[0.0, 0.0, 0.0]]), np.array([True]))


@ported(SRC, "TestIndexing.test_boolean_assignment_value_mismatch")
@pytest.mark.parametrize("v", [[], [1, 2, 3]])
def test_boolean_assignment_value_mismatch(v):
    def f(a):
        a[a > -1] = v
        return a
    raises(ValueError, f, np.arange(4))

    def g(a):
        b = a[:1]
        b[b > -1] = [1, 2, 3]
        return a
    raises(ValueError, g, np.arange(4))


@ported(SRC, "TestIndexing.test_boolean_indexing_twodim")
def test_boolean_indexing_twodim():
    def f(a, b):
        r = [a[b], a[b[1]], a[b[0]], a[b[2]]]
        a[b] = 0
        return r + [a]
    check(f, np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]),
          np.array([[True, False, True], [False, True, False], [True, False, True]]))


@ported(SRC, "TestIndexing.test_boolean_indexing_list")
def test_boolean_indexing_list():
    check(lambda a: (a[[True, False, True]], a[None, [True, False, True]]), np.array([1, 2, 3]))


@ported(SRC, "TestIndexing.test_reverse_strides_and_subspace_bufferinit")
def test_reverse_strides_and_subspace_bufferinit():
    def f(a, b0, a2):
        b = b0[::-1]
        c = np.arange(5)[::-1]
        a[b] = c
        a2[b, :] = np.arange(10).reshape(5, 2)[::-1]
        return a, a2
    check(f, np.ones(5), np.zeros(5, dtype=np.intp), np.ones((5, 2)))


@ported(SRC, "TestIndexing.test_reversed_strides_result_allocation")
def test_reversed_strides_result_allocation():
    check(lambda a, i0: (a[i0[::-1]], a[i0[::-1].copy("C")]), np.arange(10)[:, None],
          np.arange(10))


@ported(SRC, "TestIndexing.test_uncontiguous_subspace_assignment")
def test_uncontiguous_subspace_assignment():
    def f(a, b):
        a[[0, 1]] = np.arange(2 * 4 * 2).reshape(2, 4, 2).T
        b[[0, 1]] = np.arange(2 * 4 * 2).reshape(2, 4, 2).T.copy()
        return a, b
    check(f, np.full((3, 4, 2), -1), np.full((3, 4, 2), -1))


@ported(SRC, "TestIndexing.test_scalar_array_bool")
def test_scalar_array_bool():
    check(lambda a: (a[np.bool_(True)], a[np.array(True)], a[np.bool_(False)],
                     a[np.array(False)]), np.array(1))


@ported(SRC, "TestIndexing.test_everything_returns_views")
def test_everything_returns_views():
    def f(a):
        r = [a is not a[()], a is not a[...], a is not a[:]]
        a[()][0] = 10
        a[...][1] = 11
        a[:][2] = 12
        return r, a
    check(f, np.arange(5))


@ported(SRC, "TestIndexing.test_broaderrors_indexing")
def test_broaderrors_indexing():
    raises(IndexError, lambda a: a[[0, 1], [0, 1, 2]], np.zeros((5, 5)))

    def f(a):
        a[[0, 1], [0, 1, 2]] = 0
    raises(IndexError, f, np.zeros((5, 5)))


@ported(SRC, "TestIndexing.test_trivial_fancy_out_of_bounds")
@pytest.mark.parametrize("at,v", [(-1, 10), (0, 11)])
def test_trivial_fancy_out_of_bounds(at, v):
    ind = np.ones(20, dtype=np.intp)
    ind[at] = v
    raises(IndexError, lambda a, i: a[i], np.zeros(5), ind)

    def f(a, i):
        a[i] = 0
    raises(IndexError, f, np.zeros(5), ind)


@ported(SRC, "TestIndexing.test_trivial_fancy_not_possible")
def test_trivial_fancy_not_possible():
    def f(a):
        idx = np.arange(6, dtype=np.intp).reshape(2, 1, 3)[:, :, 0]
        r = a[idx]
        a[idx] = -1
        return r, a
    check(f, np.arange(6))


@ported(SRC, "TestIndexing.test_small_regressions")
def test_small_regressions():
    def f(a):
        a[np.array([0], dtype=np.intp)] = 1
        a[np.array([0], dtype=np.uint8)] = 1
        return a
    check(f, np.array([0]))
    for dt in (np.intp, np.uint8):
        def g(a, i):
            a[i] = 1
        raises(IndexError, g, np.array([0]), np.array([1], dtype=dt))


@ported(SRC, "TestIndexing.test_tuple_subclass")
def test_tuple_subclass():
    class TupleSubclass(tuple):
        pass
    index = TupleSubclass(([1], [1]))
    check(lambda a: (a[index].shape, a[index, ].shape), np.ones((5, 5)))


@ported(SRC, "TestIndexing.test_indexing_array_weird_strides")
def test_indexing_array_weird_strides():
    def f(x, x2, ind0):
        ind = np.broadcast_to(ind0[:, None, None, None], (10, 5, 4, 4))
        zind = np.zeros(4, dtype=np.intp)
        return x[ind], x[ind.copy()], x2[ind, zind], x2[ind.copy(), zind]
    check(f, np.ones(10), np.ones((10, 2)), np.arange(10))


@ported(SRC, "TestIndexing.test_indexing_array_negative_strides")
def test_indexing_array_negative_strides():
    def f(arro):
        arr = arro[::-1, ::-1]
        arr[(S, [0, 1, 2, 3])] = 10
        return arr, arro
    check(f, np.zeros((4, 4)))


@ported(SRC, "TestIndexing.test_nontuple_ndindex")
def test_nontuple_ndindex():
    check(lambda a: (a[[0, 1]], np.array([a[0], a[1]]), a[[0, 1], [0, 1]]),
          np.arange(25).reshape((5, 5)))


@ported(SRC, "TestBroadcastedAssignments.test_prepending_ones")
def test_prepending_ones():
    def f(a):
        a[...] = np.ones((1, 3, 2))
        a[[0, 1, 2], :] = np.ones((1, 3, 2)) * 2
        a[:, [0, 1]] = np.ones((1, 3, 2)) * 3
        a[[[0], [1], [2]], [0, 1]] = np.ones((1, 3, 2)) * 4
        return a
    check(f, np.zeros((3, 2)))


def _assign(index, value):
    def f(a):
        a[index] = value
        return a
    return f


@ported(SRC, "TestBroadcastedAssignments.test_prepend_not_one")
def test_prepend_not_one():
    for index, v in [((...,), np.ones((2, 1))), (([1, 2, 3],), np.ones((2, 1))),
                     (([[1], [2]],), np.ones((2, 2, 1)))]:
        raises(ValueError, _assign(index, v), np.zeros(5))


@ported(SRC, "TestBroadcastedAssignments.test_simple_broadcasting_errors")
def test_simple_broadcasting_errors():
    for index, v in [((...,), np.zeros((5, 2))), ((...,), np.zeros((5, 0))),
                     ((S, [0]), np.zeros((5, 2))), ((S, [0]), np.zeros((5, 0))),
                     (([0], S), np.zeros((2, 1)))]:
        raises(ValueError, _assign(index, v), np.zeros((5, 1)))


@ported(SRC, "TestBroadcastedAssignments.test_broadcast_error_reports_correct_shape")
@pytest.mark.parametrize("index", [(..., [1, 2], S), ([0, 1], ..., 0), (..., [1, 2], [1, 2])])
def test_broadcast_error_reports_correct_shape(index):
    raises(ValueError, _assign(index, np.zeros((100, 100))), np.zeros((3, 4, 5, 6, 7)))


@ported(SRC, "TestBroadcastedAssignments.test_index_is_larger")
def test_index_is_larger():
    def f(a):
        a[[[0], [1], [2]], [0, 1, 2]] = [2, 3, 4]
        return a, (a[:3, :3] == [2, 3, 4]).all()
    check(f, np.zeros((5, 5)))


@ported(SRC, "TestBroadcastedAssignments.test_broadcast_subspace")
def test_broadcast_subspace():
    def f(a):
        v = np.arange(20)[:, None]
        b = np.arange(20)[::-1]
        a[b] = v
        return a, (a[::-1] == v).all()
    check(f, np.zeros((20, 20)))


@ported(SRC, "TestFancyIndexingCast.test_boolean_index_cast_assign")
def test_boolean_index_cast_assign():  # the real part (complex is another issue's)
    def f(z, bool_index):
        z[bool_index] = np.array([1])
        z[[0], [1]] = np.array([2.0])
        return z
    b = np.zeros((8, 63), dtype=bool)
    b[0, 1] = True
    check(f, np.zeros((8, 63)), b)


# TestMultiIndexingAutomated: NumPy's answer for each index, instead of
# torch's Python mimic of it
COMPLEX = [Ellipsis, 0, np.array([True, False, False]), np.array([[True, False], [False, True]]),
           np.array([[[False, False], [False, False]]]), slice(-5, 5, 2), slice(1, 1, 100),
           slice(4, -1, -2), slice(None, None, -3), np.empty((0, 1, 1), dtype=np.intp),
           np.array([0, 1, -2]), np.array([[2], [0], [1]]),
           np.array([[0, -1], [0, 1]], dtype=np.intp), np.array([2, -1], dtype=np.int8),
           np.array([0.0, 1.0])]
SIMPLE = [Ellipsis, None, -1, [1], np.array([True])]
FILL = [slice(None, None), 0]


def _multi(arr, index):
    def f(a):
        r = a[index]
        b = a.copy()
        b[index] = r + 1000
        return r, b
    check(f, arr)


@ported(SRC, "TestMultiIndexingAutomated.test_boolean")
def test_multi_boolean():
    def f(a):
        r = a[np.array(True)]
        a[np.array(True)] = 1
        return r, a
    check(f, np.array(5))
    a = np.arange(3 * 1 * 5 * 6).reshape(3, 1, 5, 6)
    for index in [np.zeros_like(a, dtype=bool), np.zeros_like(a, dtype=bool)[..., 0],
                  np.zeros_like(a, dtype=bool)[None, ...]]:
        _multi(a, (index,))


@ported(SRC, "TestMultiIndexingAutomated.test_multidim")
@pytest.mark.parametrize("simple_pos", [0, 2, 3])
def test_multi_multidim(simple_pos):
    a = np.arange(3 * 1 * 5 * 6).reshape(3, 1, 5, 6)
    b = np.empty((3, 0, 5, 6))
    # a third of the product (torch runs it all): every complex index, the
    # simple ones in turn, the fill indices in turn
    for k, c in enumerate(COMPLEX):
        s = SIMPLE[k % len(SIMPLE)]
        fill = [FILL[(k + j) % 2] for j in range(3)]
        parts = [fill[0], c, fill[1], fill[2]]
        parts[simple_pos] = s
        _multi(a if k % 3 else b, tuple(parts))
    _multi(a, (0, 0, 0, 0))
    raises(IndexError, lambda x: x[0, 0, 0, 0, 0], a)
    raises(IndexError, lambda x: x[0, 0, [1], 0, 0], a)


@ported(SRC, "TestMultiIndexingAutomated.test_1d")
@pytest.mark.parametrize("index", COMPLEX, ids=range(len(COMPLEX)))
def test_multi_1d(index):
    _multi(np.arange(10), index)


@ported(SRC, "TestFloatNonIntegerArgument.test_valid_indexing")
def test_valid_indexing():
    check(lambda a: (a[np.array([0])], a[[0, 0]], a[:, [0, 0]], a[:, 0, :], a[:, :, :]),
          np.array([[[5]]]))


@ported(SRC, "TestFloatNonIntegerArgument.test_valid_slicing")
def test_valid_slicing():
    check(lambda a: (a[::], a[0:], a[:2], a[0:2], a[::2], a[1::2], a[:2:2], a[1:2:2]),
          np.array([[[5]]]))


@ported(SRC, "TestFloatNonIntegerArgument.test_non_integer_argument_errors")
def test_non_integer_argument_errors():
    a = np.array([[5]])
    raises(TypeError, lambda a: np.reshape(a, (1.0, 1.0, -1)), a)
    raises(TypeError, lambda a: np.reshape(a, (np.array(1.0), -1)), a)
    raises(TypeError, lambda a: np.take(a, [0], 1.0), a)
    raises(TypeError, lambda a: np.take(a, [0], np.float64(1.0)), a)


@ported(SRC, "TestFloatNonIntegerArgument.test_reduce_axis_float_index")
@pytest.mark.parametrize("axis", [0.5, (0.5, 1), (1, 2.2), (0.2, 1.2)])
def test_reduce_axis_float_index(axis):
    raises(TypeError, lambda d: np.min(d, axis), np.zeros((3, 3, 3)))


@ported(SRC, "TestBooleanIndexing.test_bool_as_int_argument_errors")
def test_bool_as_int_argument_errors():
    a = np.array([[[1]]])
    raises(TypeError, lambda a: np.reshape(a, (True, -1)), a)
    raises(TypeError, lambda a: np.take(a, [0], False), a)


@ported(SRC, "TestBooleanIndexing.test_boolean_indexing_weirdness")
def test_boolean_indexing_weirdness():
    a = np.ones((2, 3, 4))
    check(lambda a: (a[False, True, ...].shape, a[True, [0, 1], True, True, [1], [[2]]].shape), a)
    raises(IndexError, lambda a: a[False, [0, 1], ...], a)


@ported(SRC, "TestBooleanIndexing.test_boolean_indexing_fast_path")
def test_boolean_indexing_fast_path():
    for idx in [np.array([[False] * 9]), np.array([[False] * 8 + [True]]),
                np.array([[False] * 10])]:
        raises(IndexError, lambda a, i: a[i], np.ones((3, 3)), idx)
    raises(IndexError, lambda a, i: a[i], np.ones((1, 1, 2)), np.array([[[True], [False]]]))


@ported(SRC, "TestArrayToIndexDeprecation.test_array_to_index_error")
def test_array_to_index_error():
    raises(TypeError, lambda a: np.take(a, [0], a), np.array([[[1]]]))


@ported(SRC, "TestNonIntegerArrayLike.test_basic")
def test_non_integer_array_like():
    raises(IndexError, lambda a: a[[0.5, 1.5]], np.arange(10))
    raises(IndexError, lambda a: a[["1", "2"], ], np.arange(10))
    check(lambda a: a[[]], np.arange(10))


@ported(SRC, "TestMultipleEllipsisError.test_basic")
def test_multiple_ellipsis_error():
    for key in [(..., ...), ((Ellipsis,) * 2, ), ((Ellipsis,) * 3, )]:
        raises(IndexError, lambda a, key=key: a[key], np.arange(10))


def test_every_product_of_few_index_kinds_in_two_positions():
    """Beyond torch's: pairs of index kinds on a 3-d array, read and assigned."""
    kinds = [0, -1, slice(1, None), slice(None, None, -2), [1, 0], np.array([[0], [1]]), None,
             Ellipsis, np.array([True, False])]
    a = np.arange(2 * 3 * 2).reshape(2, 3, 2)
    for k1, k2 in itertools.islice(itertools.product(kinds, kinds), 0, None, 3):
        if k1 is Ellipsis and k2 is Ellipsis:
            continue
        _multi(a, (k1, k2))


@ported(SRC, "TestIndexing.test_index_no_array_to_index")
def test_index_no_array_to_index():
    raises(TypeError, lambda a: a[a:a:a], np.array([[[1]]]))


@ported(SRC, "TestIndexing.test_too_many_advanced_indices")
@pytest.mark.parametrize("num", [32, 40])
def test_too_many_advanced_indices(num):
    raises(IndexError, lambda a: a[(np.array([0]),) * num], np.ones(1))

    def f(a):
        a[(np.array([0]),) * num] = 1.0
    raises(IndexError, f, np.ones(1))


@ported(SRC, "TestFloatNonIntegerArgument.test_non_integer_sequence_multiplication")
def test_non_integer_sequence_multiplication():
    raises(TypeError, lambda x: [1] * x[0], np.array([3.0]))
    check(lambda x: ([1] * np.int_(3), x), np.array([3]))  # (a traced count: TraceError)
