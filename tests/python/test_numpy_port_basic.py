"""Ported from PyTorch's test/torch_np/test_ufuncs_basic.py (issue #29):
each torch test's NumPy calls, run by NumPy, eagerly by hop.numpy and by hop.compile
(numpy_diff.check).  Complex dtypes are left out of the ufunc tests
(another issue's).  test_reductions.py's port is
test_numpy_port_reductions.py."""

import functools
import operator

import numpy as np
import pytest

from numpy_diff import ported
import numpy_diff

# each case by NumPy, by eager hop.numpy (every ndarray argument through
# hop.numpy.asarray) and compiled (the forty-eighth session)
check = functools.partial(numpy_diff.check, eager=True)
raises = functools.partial(numpy_diff.raises, eager=True)

# ------------------------------------------------------ test_ufuncs_basic

SRC = "test_ufuncs_basic.py"
CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]
NUMERIC = [(np.add, operator.add, operator.iadd), (np.subtract, operator.sub, operator.isub),
           (np.multiply, operator.mul, operator.imul)]
BINARY = [np.add, np.subtract, np.multiply, np.float_power, np.power, np.floor_divide, np.hypot,
          np.arctan2, np.copysign, np.fmax, np.fmin, np.fmod, np.heaviside, np.logaddexp,
          np.logaddexp2, np.maximum, np.minimum]


@ported(SRC, "TestUnaryUfuncs.test_scalar")
def test_unary_ufunc_of_a_scalar_converts_to_float():
    check(lambda x: np.sin(x[0]), np.arange(5.0), post=float)


@ported(SRC, "TestUnaryUfuncs.test_x_and_out_casting")
@pytest.mark.parametrize("casting", CASTINGS)
@pytest.mark.parametrize("out_dtype", ["float64", "float32"])
def test_unary_ufunc_out_casting(casting, out_dtype):
    def f(x):
        out = np.empty_like(x, dtype=out_dtype)
        r = np.sin(x, out=out, casting=casting)
        return r is out, r.dtype, r
    check(f, np.arange(5.0))


@ported(SRC, "TestUnaryUfuncs.test_x_and_out_broadcast")
def test_unary_ufunc_out_broadcasts():
    def f(x):
        out = np.empty((x.shape[0], x.shape[0]))
        r = np.sin(x, out=out)
        out1 = np.empty((1, x.shape[0]))
        r1 = np.sin(x, out=out1)
        return r, r is out, np.sin(np.broadcast_to(x, out.shape)), r1, r1 is out1
    check(f, np.arange(5.0))


@ported(SRC, "TestBinaryUfuncs.test_scalar")
@pytest.mark.parametrize("ufunc", BINARY)
def test_binary_ufunc_of_scalars_converts_to_float(ufunc):
    check(lambda x, y: ufunc(x[0], y[0]), np.arange(5.0), np.arange(8.0, 13.0), post=float)


@ported(SRC, "TestBinaryUfuncs.test_vector_vs_scalar")
@pytest.mark.parametrize("ufunc", BINARY)
def test_binary_ufunc_vector_vs_scalars(ufunc):
    check(lambda x, y: (ufunc(x, y), [ufunc(a, b) for a, b in zip(x, y)]), np.arange(5.0),
          np.arange(8.0, 13.0), rtol=1e-15)


@ported(SRC, "TestBinaryUfuncs.test_xy_and_out_casting")
@pytest.mark.parametrize("ufunc", BINARY)
@pytest.mark.parametrize("casting", CASTINGS)
@pytest.mark.parametrize("out_dtype", ["float64", "float32"])
def test_binary_ufunc_out_casting(ufunc, casting, out_dtype):
    def f(x, y):
        out = np.empty_like(x, dtype=out_dtype)
        r = ufunc(x, y, out=out, casting=casting)
        return r is out, r.dtype, r
    check(f, np.arange(5.0), np.arange(8.0, 13.0), rtol=1e-6)


@ported(SRC, "TestBinaryUfuncs.test_xy_and_out_broadcast")
@pytest.mark.parametrize("ufunc", BINARY)
def test_binary_ufunc_out_broadcasts(ufunc):
    def f(x, y):
        y = y[:, None]
        out = np.empty((2, y.shape[0], x.shape[0]))
        r = ufunc(x, y, out=out)
        return r is out, r, ufunc(np.broadcast_to(x, out.shape), np.broadcast_to(y, out.shape))
    check(f, np.arange(5.0), np.arange(8.0, 13.0), rtol=1e-15)


@ported(SRC, "TestNdarrayDunderVsUfunc.test_basic")
@pytest.mark.parametrize("ufunc,op,iop", NUMERIC)
def test_dunder_vs_ufunc_basic(ufunc, op, iop):
    def f(a, lst):  # lst: a.tolist(), Python data (made outside: of a traced a, a TraceError)
        out = [op(a, 1), ufunc(a, 1), op(a, lst), ufunc(a, lst), op(a, a),
               op(1, a), ufunc(1, a), op(lst, a)]
        b = a.copy() * 2
        c = b.copy()
        iop(c, 2)
        d = b.copy()
        iop(d, d)
        return out + [c, op(b, 2), d, op(b, b)]
    check(f, np.array([1, 2, 3]), [1, 2, 3])


@ported(SRC, "TestNdarrayDunderVsUfunc.test_other_scalar")
@pytest.mark.parametrize("ufunc,op,iop", NUMERIC)
@pytest.mark.parametrize("other_dtype", [np.int32, np.float32, np.float64])
def test_dunder_vs_ufunc_other_scalar(ufunc, op, iop, other_dtype):
    def f(a):
        b = other_dtype(3)
        r = [op(a, b), ufunc(a, b), op(b, a), ufunc(b, a)]
        a0 = a.copy()
        r.append(iop(a, b))  # raises when the result cannot be cast back
        r.append(ufunc(a0, b))
        return r
    check(f, np.array([1, 2, 3]))


@ported(SRC, "TestNdarrayDunderVsUfunc.test_other_array")
@pytest.mark.parametrize("ufunc,op,iop", NUMERIC)
@pytest.mark.parametrize("other_dtype", [np.int32, np.float32, np.float64])
def test_dunder_vs_ufunc_other_array(ufunc, op, iop, other_dtype):
    def f(a, b):
        r = [op(a, b), ufunc(a, b), op(b, a), ufunc(b, a)]
        a0 = a.copy()
        r.append(iop(a, b))
        r.append(ufunc(a0, b))
        return r
    check(f, np.array([1, 2, 3]), np.array([5, 6, 7], dtype=other_dtype))


@ported(SRC, "TestNdarrayDunderVsUfunc.test_other_array_bcast")
@pytest.mark.parametrize("ufunc,op,iop", NUMERIC)
def test_dunder_vs_ufunc_broadcasting(ufunc, op, iop):
    def f(a):
        r = [op(a, a[:, None]), ufunc(a, a[:, None]), op(a[:, None], a), ufunc(a[:, None], a)]
        aa = np.broadcast_to(a, (3, 3)).copy()
        aa0 = aa.copy()
        r += [iop(aa, a), ufunc(aa0, a)]
        return r
    check(f, np.array([1, 2, 3]))
    # in-place does not broadcast self
    raises(ValueError, lambda a: iop(a, a[:, None].copy()), np.array([1, 2, 3]))


@ported(SRC, "TestUfuncDtypeKwd.test_binary_ufunc_dtype")
def test_binary_ufunc_dtype_keyword():
    def f(x):
        r64 = np.add(x, 1e-15)
        r32 = np.add(x, 1e-15, dtype="float32")
        rb = np.add(x, 1e-15, dtype=bool, casting="unsafe")
        return r64, r64 - 1 > 0, r32, r32 == 1, rb
    check(f, np.ones(1))
    check(lambda: (np.add(1, 1e-15), np.add(1, 1e-15, dtype="float32"),
                   np.add(1.0, 1e-15, dtype=bool, casting="unsafe")))


@ported(SRC, "TestUfuncDtypeKwd.test_binary_ufunc_dtype_and_out")
def test_binary_ufunc_dtype_and_out():
    def f(x):
        out64 = np.empty(2, dtype=np.float64)
        r64 = np.add(x, 1.0e-15, out=out64)
        out32 = np.empty(2, dtype=np.float32)
        r32 = np.add(x, 1.0e-15, dtype=np.float32, out=out32)
        o = np.empty(2, dtype=np.float64)
        r = np.add(x, 1.0e-15, dtype=np.float32, out=o)
        o2 = np.empty(2, dtype=np.float32)
        r2 = np.add(x, 1.0e-15, dtype=np.float64, out=o2)
        return r64, (r64 != [1.0, 2.0]).all(), r32, (r32 == [1, 2]).all(), r, r2
    check(f, np.array([1.0, 2.0]))
