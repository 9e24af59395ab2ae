"""Ported from PyTorch's test/torch_np/test_ndarray_methods.py (issue #29):
each NumPy call run by NumPy, eagerly by hop.numpy and by hop.compile (numpy_diff.check: values,
dtype, shape, ndarray or NumPy scalar or Python value, the exception type,
the arguments after the call).  torch's `x.tensor._base is a.tensor`
checks are NumPy's `x.base is a` here (a view's base is the array it was
made from: compared as a bool computed in the function).  All 27 tests
are here, torch's own skip (TestArgmaxArgminCommon.test_all, which needs
`choose`) and xfails (the complex cases of test_combinations) included,
and argmax/argmin of `np.empty` data (torch's) is of `np.arange` data
(`np.empty`'s values are whatever memory held, on which NumPy and a
second run need not agree)."""

import functools
import itertools

import numpy as np
import pytest

import hop

from numpy_diff import as_numpy, ported, same
import numpy_diff

# each case by NumPy, by eager hop.numpy (every ndarray argument through
# hop.numpy.asarray) and compiled (the forty-eighth session)
check = functools.partial(numpy_diff.check, eager=True)
raises = functools.partial(numpy_diff.raises, eager=True)

SRC = "test_ndarray_methods.py"


@ported(SRC, "TestIndexing.test_indexing_simple")
def test_indexing_simple():
    # (eagerly a hop.numpy scalar's type is hop.numpy's ndarray, an open gap
    # of docs/RELIABILITY.md: the type's question compiled only)
    check(lambda a: (a[0, 0], a[0, :], a[0, :].base is a, type(a[0, 0]) is np.int64),
          np.array([[1, 2, 3], [4, 5, 6]]), eager=False)
    check(lambda a: (a[0, 0], a[0, :], a[0, :].base is a), np.array([[1, 2, 3], [4, 5, 6]]))


@ported(SRC, "TestIndexing.test_setitem")
def test_setitem():
    def f(a):
        a[0, 0] = 8
        return a
    check(f, np.array([[1, 2, 3], [4, 5, 6]]))


ARR = [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]


@ported(SRC, "TestReshape.test_reshape_function")
def test_reshape_function():
    check(lambda: np.reshape(ARR, (2, 6)))
    check(lambda a: (np.reshape(a, (2, 6)), np.transpose(a, (1, 0)).base is a,
                     np.reshape(a, (2, 6)).base is a), np.asarray(ARR))


@ported(SRC, "TestReshape.test_reshape_method")
def test_reshape_method():
    def f(a):
        shape = a.shape
        out = []
        for r in (a.reshape(2, 6), a.reshape((2, 6)), a.reshape(3, 4), a.reshape((3, 4)),
                  a.T.reshape((3, 4), order="C"), a.reshape((3, 4), order="F")):
            out += [r, r.base is a]
        return out + [a.shape == shape]
    check(f, np.array(ARR))


@ported(SRC, "TestTranspose.test_transpose_function")
def test_transpose_function():
    check(lambda: np.transpose([[1, 2], [3, 4], [5, 6]], (1, 0)))
    check(lambda a: (np.transpose(a, (1, 0)), np.transpose(a, (1, 0)).base is a),
          np.asarray([[1, 2], [3, 4], [5, 6]]))


@ported(SRC, "TestTranspose.test_transpose_method")
def test_transpose_method():
    a = np.array([[1, 2], [3, 4]])
    check(lambda a: (a.transpose(), a.transpose(None), a.transpose().base is a), a)
    for bad in ((0,), (0, 0), (0, 1, 2)):
        raises(ValueError, lambda a: a.transpose(*bad), a)


@ported(SRC, "TestRavel.test_ravel_function")
def test_ravel_function():
    check(lambda: np.ravel(ARR))
    check(lambda a: (np.ravel(a), np.ravel(a).base is a), np.asarray(ARR))


@ported(SRC, "TestRavel.test_ravel_method")
def test_ravel_method():
    check(lambda a: (a.ravel(), a.ravel().base is a, a.T.ravel(), a.T.ravel().base is a),
          np.array([[0, 1], [2, 3]]))


@ported(SRC, "TestNonzero.test_nonzero_trivial")
def test_nonzero_trivial():
    for x in (np.array([]), np.array([0]), np.array([1])):
        check(lambda x: (np.nonzero(x), x.nonzero()), x)
    check(lambda: (np.nonzero(np.array([])), np.array([0]).nonzero(), np.nonzero([1])))


@ported(SRC, "TestNonzero.test_nonzero_onedim")
def test_nonzero_onedim():
    check(lambda x: (np.nonzero(x), x.nonzero()), np.array([1, 0, 2, -1, 0, 0, 8]))


@ported(SRC, "TestNonzero.test_nonzero_twodim")
def test_nonzero_twodim():
    check(lambda x: (np.nonzero(x), x.nonzero()), np.array([[0, 1, 0], [2, 0, 3]]))
    check(lambda x: (np.nonzero(x), x.nonzero()), np.eye(3))
    check(lambda: (np.nonzero(np.eye(3)), np.eye(3).nonzero()))


@ported(SRC, "TestNonzero.test_sparse")
def test_nonzero_sparse():
    def f(i):
        c = np.zeros(200, dtype=bool)
        c[i::20] = True
        d = np.zeros(400, dtype=bool)
        d[10 + i:20 + i] = True
        d[20 + i * 2] = True
        return np.nonzero(c)[0], c.nonzero()[0], np.nonzero(d)[0]
    check(f, calls=[(i,) for i in (0, 1, 7, 19)])


@ported(SRC, "TestNonzero.test_array_method")
def test_nonzero_array_method():
    check(lambda m: m.nonzero(), np.array([[1, 0, 0], [4, 0, 6]]))


SIZES = [(), (3,), (3, 2), (2, 3), (3, 3), (2, 3, 4), (4, 3, 2), (1, 2, 3, 4), (2, 3, 4, 1),
         (3, 4, 1, 2), (4, 1, 2, 3), (64,), (128,), (256,)]


def _keepdims_case(method, size, axis):
    def f(arr):
        r = [method(arr, axis=axis), method(arr, axis=axis, keepdims=True)]
        out = np.empty(r[1].shape, dtype=r[1].dtype)
        r1 = method(arr, axis=axis, out=out, keepdims=True)
        r += [r1 is out, out]
        # non-contiguous: through the transpose, into a transposed out
        r += [method(arr.T, axis=axis), method(arr.T, axis=axis, keepdims=True)]
        outT = np.empty(r[-1].shape[::-1], dtype=r[-1].dtype).T
        r1 = method(arr.T, axis=axis, out=outT, keepdims=True)
        return r + [r1 is outT, outT]
    # distinct values, the extreme not at the first place
    arr = (np.arange(int(np.prod(size))) * 7 % 11).reshape(size).astype(np.float64)
    check(f, arr)
    if len(size) > 0:
        new = list(size[::-1])
        if axis is None:
            new = [1] * len(size)
        else:
            new[axis] = 1
        wrong = list(new)
        wrong[0 if axis is None else axis] = 2
        raises(ValueError, lambda a: method(a.T, axis=axis, out=np.empty(wrong, dtype=np.intp),
                                            keepdims=True), arr)
        # one dimension fewer than the keepdims result's out
        raises(ValueError, lambda a: method(a[0], axis=axis,
                                            out=np.empty(new, dtype=np.intp).T,
                                            keepdims=True), arr)


@ported(SRC, "TestArgmaxArgminCommon.test_np_argmin_argmax_keepdims")
@pytest.mark.parametrize("size", SIZES, ids=str)
@pytest.mark.parametrize("method", [np.argmax, np.argmin], ids=["argmax", "argmin"])
def test_argmin_argmax_keepdims(size, method):
    for axis in list(range(-len(size), len(size))) + [None]:
        _keepdims_case(method, size, axis)


@ported(SRC, "TestArgmaxArgminCommon.test_all")
@pytest.mark.parametrize("method", ["max", "min"])
def test_argmax_argmin_all(method):
    def f(a):
        out = []
        for i in range(a.ndim):
            axes = list(range(a.ndim))
            axes.remove(i)
            vals = a.max(i) if method == "max" else a.min(i)
            args = a.argmax(i) if method == "max" else a.argmin(i)
            out += [vals, args, np.all(vals == args.choose(*a.transpose(i, *axes)))]
        return out
    check(f, np.arange(4 * 5 * 6 * 7 * 8).reshape((4, 5, 6, 7, 8)) % 97)


def test_choose_method_takes_the_choices_as_arguments():
    """ndarray.choose is NumPy's array_choose: one positional argument is
    the sequence of choices, several are the choices (`out` and `mode`
    keywords only; none is a TypeError).  hop.numpy's method took
    np.choose's (choices, out, mode), so `a.choose(c0, c1, c2)` raised a
    TypeError under trace (the port of TestArgmaxArgminCommon.test_all)
    and `a.choose(c0, c1)` took c1 for `out`."""
    def f(a, c0, c1, c2):
        out = np.zeros(3, dtype=np.int64)
        r = a.choose(c0, c1, c2, out=out, mode="clip")
        return [a.choose(c0, c1, c2, mode="wrap"), a.choose(c0, c1, mode="clip"),
                a.choose([c0, c1, c2], mode="clip"), a.choose((c0, c1), mode="clip"),
                a.choose(c0, c1, mode="wrap"), r is out, out, a[0].choose(c0, c1, c2, mode="wrap")]
    args = (np.array([0, 2, 1]), np.array([1, 2, 3]), np.array([4, 5, 6]), np.array([7, 8, 9]))
    check(f, *args, fullgraph=True)
    # mode="raise" (the default) checks the indices: a graph break, not an eager call
    g = lambda a, c0, c1, c2: (a.choose(c0, c1, c2), a.choose(c0, c1), a.choose([c0, c1]))  # noqa
    ok = (np.array([0, 1, 1]),) + args[1:]
    check(g, *ok)
    check(g, np.array([0, 3, 1]), *args[1:])  # NumPy's ValueError
    cg = hop.compile(g)
    same(cg(*ok), g(*ok))
    assert "every call runs eagerly" not in cg.explain()
    raises(TypeError, lambda a: a.choose(), args[0])
    # eager hop.numpy
    import hop.numpy as hnp
    same(as_numpy(f(hnp.asarray(args[0]), *args[1:])), f(*args))
    with pytest.raises(TypeError, match=r"^choose\(\) takes exactly 1 argument \(0 given\)$"):
        hnp.asarray(args[0]).choose()


@ported(SRC, "TestArgmaxArgminCommon.test_output_shape")
@pytest.mark.parametrize("method", ["argmax", "argmin"])
def test_output_shape(method):
    a = np.ones((10, 5))
    for shape in (11, (2, 5), (1, 10)):
        raises(ValueError, lambda a: getattr(a, method)(-1, out=np.ones(shape, dtype=np.int_)), a)

    def f(a):
        out = np.ones(10, dtype=np.int_)
        r = getattr(a, method)(-1, out=out)
        return r is out, out, getattr(a, method)(-1)
    check(f, a)
    check(lambda a, out: getattr(a, method)(-1, out=out), a, np.ones(10, dtype=np.int_))


@ported(SRC, "TestArgmaxArgminCommon.test_ret_is_out")
@pytest.mark.parametrize("ndim", [0, 1])
@pytest.mark.parametrize("method", ["argmax", "argmin"])
def test_ret_is_out(ndim, method):
    def f(a):
        out = np.empty((256,) * ndim, dtype=np.intp)
        ret = getattr(a, method)(axis=0, out=out)
        return ret is out, out
    check(f, np.ones((4,) + (256,) * ndim))


@ported(SRC, "TestArgmaxArgminCommon.test_np_vs_ndarray")
@pytest.mark.parametrize("arr_method,np_method", [("argmax", np.argmax), ("argmin", np.argmin)])
def test_np_vs_ndarray(arr_method, np_method):
    def f(a):
        out1 = np.zeros(3, dtype=int)
        out2 = np.zeros(3, dtype=int)
        return getattr(a, arr_method)(out=out1, axis=0), np_method(a, out=out2, axis=0), out1, out2
    check(f, np.arange(6).reshape((2, 3)))


@ported(SRC, "TestArgmaxArgminCommon.test_np_vs_ndarray_positional")
@pytest.mark.parametrize("arr_method,np_method", [("argmax", np.argmax), ("argmin", np.argmin)])
def test_np_vs_ndarray_positional(arr_method, np_method):
    def f(a):
        out1 = np.zeros(2, dtype=int)
        out2 = np.zeros(2, dtype=int)
        return getattr(a, arr_method)(1, out1), np_method(a, 1, out2), out1, out2
    check(f, np.arange(6).reshape((2, 3)))


def _argmax_data(usg, sg, nans):
    data = [(d, np.uint8) for d in usg]
    data += [(d, t) for d, t in itertools.product(
        usg + sg, (np.int8, np.int16, np.int32, np.int64, np.float32, np.float64))]
    data += [(d, t) for d, t in itertools.product(nans, (np.float32, np.float64))]
    return data


NANS = [[0, 1, 2, 3, np.nan], [0, 1, 2, np.nan, 3], [np.nan, 0, 1, 2, 3],
        [np.nan, 0, np.nan, 2, 3]] + [[1] * (k * 5 - 1) + [np.nan] for k in (2, 4, 8, 16, 32)]
COMPLEX = [[0, 1, 2, 3, complex(0, np.nan)], [0, 1, 2, 3, complex(np.nan, 0)],
           [0, 1, 2, complex(np.nan, 0), 3], [0, 1, 2, complex(0, np.nan), 3],
           [complex(0, np.nan), 0, 1, 2, 3], [complex(np.nan, np.nan), 0, 1, 2, 3],
           [complex(np.nan, 0), complex(np.nan, 2), complex(np.nan, 1)],
           [complex(np.nan, np.nan), complex(np.nan, 2), complex(np.nan, 1)],
           [complex(np.nan, 0), complex(np.nan, 2), complex(np.nan, np.nan)],
           [complex(0, 0), complex(0, 2), complex(0, 1)],
           [complex(1, 0), complex(0, 2), complex(0, 1)],
           [complex(1, 0), complex(0, 2), complex(1, 1)]]
BOOLS = [[False, False, False, False, True], [False, False, False, True, False],
         [True, False, False, False, False], [True, False, True, False, False],
         [True, True, True, True, False], [True, True, True, False, True],
         [False, True, True, True, True], [False, True, False, True, True]]
ARGMAX_DATA = _argmax_data(
    [[1] * 8 + [0] * 7, [3, 3, 3, 3, 2, 2, 2, 2], list(range(8)), list(range(7, -1, -1))],
    [[1, 2, 3, 4, -4, -3, -2, -1], [1, 2, 3, 4, -1, -2, -3, -4]], NANS) + \
    [(d, np.complex128) for d in COMPLEX] + [(d, np.bool_) for d in BOOLS]


def _combinations(arg, val, pad):
    def f(arr):
        out = [arg(arr), arr[arg(arr)], val(arr)]
        rarr = np.repeat(arr, 129)  # padding for the SIMD loops
        out += [arg(rarr), rarr[arg(rarr)]]
        rarr = np.concatenate((arr, np.repeat(pad(arr), 513)))
        return out + [arg(rarr), rarr[arg(rarr)]]
    return f


@ported(SRC, "TestArgmax.test_combinations")
@ported(SRC, "TestArgmin.test_combinations")
@pytest.mark.parametrize("method", ["argmax", "argmin"])
def test_combinations(method):
    fns = {"argmax": _combinations(np.argmax, np.max, np.min),
           "argmin": _combinations(np.argmin, np.min, np.max)}
    for data, dtype in ARGMAX_DATA:
        check(fns[method], np.array(data, dtype=dtype))
    # a list, as torch passes the complex and bool cases
    for data in COMPLEX[:3] + BOOLS[:2]:
        check(lambda: (np.argmax(data), np.argmin(data), np.max(data), np.min(data)))


@ported(SRC, "TestArgmax.test_maximum_signed_integers")
@ported(SRC, "TestArgmin.test_minimum_signed_integers")
@pytest.mark.parametrize("dtype,bits", [(np.int8, 7), (np.int16, 15), (np.int32, 31),
                                        (np.int64, 63)])
def test_extreme_signed_integers(dtype, bits):
    check(lambda a: np.argmax(a), np.array([1, 2**bits - 1, -(2**bits)], dtype=dtype))
    check(lambda a: np.argmin(a),
          np.array([1, -(2**bits), -(2**bits) + 1, 2**bits - 1], dtype=dtype))


@ported(SRC, "TestAmax.test_basic")
@ported(SRC, "TestAmin.test_basic")
def test_amax_amin_basic():
    a = [3, 4, 5, 10, -3, -5, 6.0]
    b = [[3, 6.0, 9.0], [4, 10.0, 5.0], [8, 3.0, 2.0]]
    check(lambda: (np.amax(a), np.amax(b, axis=0), np.amax(b, axis=1), np.amin(a),
                   np.amin(b, axis=0), np.amin(b, axis=1)))
    check(lambda x: (np.amax(x), x.max(), np.amin(x), x.min()), np.asarray(a))


@ported(SRC, "test_contains")
def test_contains():
    check(lambda a: (2 in a, 42 not in a, 2.0 in a, 11 in a[1:]),
          np.arange(12).reshape(3, 4))
    check(lambda: (2 in np.arange(12).reshape(3, 4), 42 in np.arange(12)))


@ported(SRC, "test_extra_methods")
@pytest.mark.parametrize("name", ["fn", "ivar", "method", "name", "plain", "rvar"])
def test_extra_methods(name):
    raises(AttributeError, lambda a: getattr(a, name), np.ones(3))
    raises(AttributeError, lambda: getattr(np.ones(3), name))
