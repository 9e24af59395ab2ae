"""Ported from PyTorch's test/torch_np/test_basic.py (issue #29): torch's
smoke tests of NumPy's functions on lists, arrays and shapes, each call run
by NumPy, eagerly by hop.numpy and by hop.compile (numpy_diff.check: values, dtype, shape,
ndarray or NumPy scalar or Python value, the exception type), so each
asserts NumPy's answer where torch asserts only that an ndarray came back.

Left out, and why: every `*_tensor` variant (a torch.Tensor argument:
torch's own type), TestDefaultDtype (torch._numpy's `set_default_dtype`,
which NumPy has not), TestExport (torch._numpy's names against NumPy's:
hop.numpy's are checked by its own tests), TestSmokeNotImpl (torch's
NotImplementedError for `like=`), TestMisc.test_ndarrays_to_tensors
(torch._numpy's private helper).  TestDivmod.test_divmod_pos_only,
torch's xfail, is here (NumPy takes the two outs positionally), and
TestMisc.test_f16_on_cuda as float16 products and statistics against
NumPy's.  So 31 of the file's 43 tests are here; all pass."""

import functools

import numpy as np
import pytest

from numpy_diff import ported
import numpy_diff

# each case by NumPy, by eager hop.numpy (every ndarray argument through
# hop.numpy.asarray) and compiled (the forty-eighth session)
check = functools.partial(numpy_diff.check, eager=True)
raises = functools.partial(numpy_diff.raises, eager=True)

SRC = "test_basic.py"
port = lambda test: ported(SRC, test)  # noqa: E731

LIST = [[1.0, 2, 3], [4, 5, 6]]

ONE_ARG = {"asarray": np.asarray, "empty_like": lambda a: np.empty_like(a).shape,
           "ones_like": np.ones_like, "zeros_like": np.zeros_like,
           "full_like": functools.partial(np.full_like, fill_value=42),
           "corrcoef": np.corrcoef, "squeeze": np.squeeze, "argmax": np.argmax, "prod": np.prod,
           "sum": np.sum, "real": np.real, "imag": np.imag, "angle": np.angle,
           "real_if_close": np.real_if_close, "isreal": np.isreal, "iscomplex": np.iscomplex,
           "isneginf": np.isneginf, "isposinf": np.isposinf, "i0": np.i0, "copy": np.copy,
           "array": np.array, "round": np.round, "around": np.around, "flip": np.flip,
           "vstack": np.vstack, "hstack": np.hstack, "dstack": np.dstack,
           "column_stack": np.column_stack, "row_stack": np.row_stack,
           "flatnonzero": np.flatnonzero}
UNARY = ["absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "cbrt", "ceil",
         "conjugate", "cos", "cosh", "deg2rad", "degrees", "exp", "exp2", "expm1", "fabs", "floor",
         "isfinite", "isinf", "isnan", "log", "log10", "log1p", "log2", "logical_not", "negative",
         "positive", "rad2deg", "radians", "reciprocal", "rint", "sign", "signbit", "sin", "sinh",
         "sqrt", "square", "tan", "tanh", "trunc", "invert", "bitwise_not"]
ONE_ARG.update({n: getattr(np, n) for n in UNARY})


@port("TestOneArr.test_asarray_list")
@port("TestOneArr.test_asarray_array")
@pytest.mark.parametrize("name", ONE_ARG)
def test_one_arr(name):
    func = ONE_ARG[name]
    check(lambda: func(LIST))
    check(lambda a: func(a), np.asarray(LIST))
    if name in ("invert", "bitwise_not"):  # (float: NumPy's TypeError) an int array too
        check(lambda a: func(a), np.asarray(LIST, dtype=int))


AXIS_FUNCS = {"argmax": np.argmax, "argmin": np.argmin, "prod": np.prod, "sum": np.sum,
              "all": np.all, "any": np.any, "mean": np.mean, "argsort": np.argsort, "std": np.std,
              "var": np.var, "flip": np.flip}


@port("TestOneArrAndAxis.test_andaxis_list")
@port("TestOneArrAndAxis.test_andaxis_array")
@pytest.mark.parametrize("name", AXIS_FUNCS)
def test_one_arr_and_axis(name):
    func = AXIS_FUNCS[name]
    check(lambda: [func(LIST, axis=axis) for axis in (0, 1, -1, None)])
    check(lambda a: [func(a, axis=axis) for axis in (0, 1, -1, None)], np.asarray(LIST))


@port("TestOneArrAndAxesTuple.test_andtuple_list")
@port("TestOneArrAndAxesTuple.test_andtuple_array")
@pytest.mark.parametrize("axes", [(0, 2, 1), (1, 2, 0), None])
def test_one_arr_and_axes_tuple(axes):
    t = [[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]]
    check(lambda: np.transpose(t, axes=axes))
    check(lambda a: (np.transpose(a, axes=axes), np.transpose(a, axes=axes).shape),
          np.asarray(t) * np.arange(3))


SHAPE_FUNCS = {"reshape": lambda a, s: np.reshape(a, newshape=s),
               "empty_like": lambda a, s: np.empty_like(a, shape=s).shape,
               "ones_like": lambda a, s: np.ones_like(a, shape=s),
               "full_like": lambda a, s: np.full_like(a, 42, shape=s),
               "broadcast_to": lambda a, s: np.broadcast_to(a, shape=s)}


@port("TestOneArrAndShape.test_andshape_list")
@port("TestOneArrAndShape.test_andshape_array")
@pytest.mark.parametrize("name", SHAPE_FUNCS)
def test_one_arr_and_shape(name):
    func = SHAPE_FUNCS[name]
    check(lambda: func([[1, 2, 3], [4, 5, 6]], (2, 3)))
    check(lambda a: func(a, (2, 3)), np.asarray([[1, 2, 3], [4, 5, 6]]))


@port("TestOneArrToScalar.test_toscalar_list")
@port("TestOneArrToScalar.test_toscalar_array")
@pytest.mark.parametrize("func", [np.size, np.shape, np.ndim])
def test_one_arr_to_scalar(func):
    check(lambda: func([[1, 2, 3], [4, 5, 6]]))
    check(lambda a: func(a), np.asarray([[1, 2, 3], [4, 5, 6]]))


@port("TestShapeLikeToArray.test_shape")
@pytest.mark.parametrize("func", [np.zeros, np.ones, functools.partial(np.full, fill_value=42),
                                  lambda s: np.empty(s).shape])
def test_shape_like_to_array(func):
    check(lambda: func((3, 4)))
    check(lambda n: func((n, 4)), 3)


SEQ_FUNCS = [np.atleast_1d, np.atleast_2d, np.atleast_3d, np.broadcast_arrays]


@port("TestSequenceOfArrays.test_single_list")
@port("TestSequenceOfArrays.test_single_array")
@port("TestSequenceOfArrays.test_several")
@pytest.mark.parametrize("func", SEQ_FUNCS)
def test_sequence_of_arrays(func):
    lst = [[1, 2, 3], [4, 5, 6]]
    check(lambda: func(lst))
    check(lambda a: func(a), np.asarray(lst))
    check(lambda a, b: func(a, b, lst), np.asarray(lst), np.asarray(lst, dtype=np.float32))


@port("TestSequenceOfArraysToSingle.test_several")
@pytest.mark.parametrize("func", [np.concatenate, np.stack, np.vstack, np.hstack, np.dstack,
                                  np.column_stack, np.row_stack])
def test_sequence_of_arrays_to_single(func):
    lst = [[1, 2, 3], [4, 5, 6]]
    check(lambda a, b: func((a, b, lst)), np.asarray(lst), np.asarray(lst, dtype=np.float32))


@port("TestArrayToSequence.test_asarray_list")
@port("TestArrayToSequence.test_asarray_array")
@pytest.mark.parametrize("func", [np.nonzero, np.where])
def test_array_to_sequence(func):
    check(lambda: func([[1, 2, 3], [4, 5, 6]]))
    check(lambda a: func(a), np.asarray([[1, 0, 3], [0, 5, 6]]))


@port("TestPythonArgsToArray.test_argstoarray_simple")
@pytest.mark.parametrize("func,args", [
    (np.linspace, (0, 10, 11)), (np.logspace, (1, 2, 5)), (np.logspace, (1, 2, 5, 11)),
    (np.geomspace, (1, 1000, 5, 11)), (np.eye, (5, 6)), (np.identity, (3,)), (np.arange, (5,)),
    (np.arange, (5, 8)), (np.arange, (5, 8, 0.5)), (np.tri, (3, 3, -1))])
def test_python_args_to_array(func, args):
    check(lambda: func(*args))
    check(lambda *a: func(*a), *args)


@port("TestNormalizations.test_unknown_args")
@port("TestNormalizations.test_too_few_args_positional")
@port("TestNormalizations.test_unknown_args_with_defaults")
def test_normalizations():
    a = np.arange(7) % 2 == 0
    raises(TypeError, lambda a: np.nonzero(a, "kaboom"), a)
    raises(TypeError, lambda a: np.nonzero(a, oops="ouch"), a)
    raises(TypeError, lambda a: np.nonzero())
    check(lambda: np.eye(3))
    raises(TypeError, lambda: np.eye())


@port("TestCopyTo.test_copyto_basic")
@port("TestCopyTo.test_copytobcast")
@port("TestCopyTo.test_copyto_typecast")
def test_copyto():
    def basic(src):
        dst = np.empty(4)
        np.copyto(dst, src)
        return dst, (dst == src).all()
    check(basic, np.arange(4))
    raises(ValueError, lambda src: np.copyto(np.empty((4, 2)), src), np.arange(4))

    def bcast(src):
        dst = np.empty((2, 4))
        np.copyto(dst, src)
        return dst
    check(bcast, np.arange(4))
    raises(TypeError, lambda src: np.copyto(np.empty(4, dtype=int), src, casting="no"),
           np.arange(4, dtype=float))

    def unsafe(src):
        dst = np.empty(4, dtype=int)
        np.copyto(dst, src, casting="unsafe")
        return dst
    check(unsafe, np.arange(4, dtype=float))
    # into arguments
    check(lambda dst, src: np.copyto(dst, src, casting="unsafe"), np.zeros(4, dtype=int),
          np.arange(4, dtype=float) + 0.5)


@port("TestDivmod.test_divmod_out")
@port("TestDivmod.test_divmod_out_list")
@port("TestDivmod.test_divmod_pos_only")
@port("TestDivmod.test_divmod_no_out")
@port("TestDivmod.test_divmod_out_both_pos_and_kw")
def test_divmod_out():
    def kw(x1, x2):
        out = (np.empty_like(x1), np.empty_like(x1))
        quot, rem = np.divmod(x1, x2, out=out)
        return quot, rem, quot is out[0], rem is out[1]
    check(kw, np.arange(8, 15), np.arange(4, 11))
    check(lambda: kw([4, 5, 6], [2, 1, 2]))

    def pos(x1, x2):
        out1, out2 = np.empty_like(x1), np.empty_like(x1)
        quot, rem = np.divmod(x1, x2, out1, out2)
        return quot, rem, quot is out1, rem is out2
    check(pos, np.array([4, 5, 6]), np.array([2, 1, 2]))
    check(lambda x1, x2: np.divmod(x1, x2), np.array([4, 5, 6]), np.array([2, 1, 2]))

    def both(x):
        o = np.empty(1)
        return np.divmod(x, 2, o, o, out=(o, o))
    raises(TypeError, both, 1.0)


@port("TestCtorNested.test_arrays_in_lists")
def test_arrays_in_lists():
    check(lambda z: np.asarray([[1, 2], [3, np.array(4) + z]]), 0)
    check(lambda a: np.asarray([[1, 2], [3, a]]), np.array(4))


@port("TestMisc.test_f16_on_cuda")
def test_float16_products_and_statistics():
    # torch's CUDA-against-CPU test, as NumPy's float16 answers against hop's
    check(lambda t: (np.vdot(t, t), np.inner(t, t), np.matmul(t, t), np.einsum("i,i", t, t),
                     np.mean(t), np.cov(t, t), np.corrcoef(t)),
          np.arange(5, dtype=np.float16), rtol=1e-3)
