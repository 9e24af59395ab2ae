"""Ported from PyTorch's test/torch_np/numpy_tests/core/test_dtype.py
(issue #29): np.dtype's construction, comparison, hashing and pickling,
and NumPy 1.24's (value-based) promotion.  hop.numpy's dtypes are NumPy's
(hnp.dtype is np.dtype), so each case runs by NumPy, by hop.numpy's own
names eagerly (numpy_diff.check_ns, xp the namespace), on the dtypes of
hop.numpy arrays and compiled, where the array is traced (numpy_diff.check
with eager=True: a.dtype, a.astype(), np.zeros(dtype=), np.result_type and
np.minimum of traced arrays).  torch's skips (attribute deletion, the
value-based promotion it lacks, the dtype class subscripts) are ported
too; TestMisc.test_class_getitem_38 is for Python 3.8 only and is not."""

import functools
import operator
import pickle
import sys
import types
from itertools import permutations
from typing import Any

import numpy as np
import pytest

import hop.numpy as hnp
from numpy_diff import ported

import numpy_diff

SRC = "numpy_tests/core/test_dtype.py"
port = lambda test: ported(SRC, test)  # noqa: E731
check = functools.partial(numpy_diff.check, eager=True)
check_ns = numpy_diff.check_ns
needs_39 = pytest.mark.skipif(sys.version_info < (3, 9), reason="Requires python 3.9")


# ---------------------------------------------------------------- TestBuiltin


@port("TestBuiltin.test_run")
@pytest.mark.parametrize("t", [int, float, complex, np.int32])
def test_run(t):
    check_ns(lambda xp: hash(xp.dtype(t)) == hash(np.dtype(t)))
    check(lambda a: (a.dtype, hash(a.dtype) == hash(np.dtype(t))), np.zeros(2, t))


@port("TestBuiltin.test_equivalent_dtype_hashing")
def test_equivalent_dtype_hashing():
    def f(xp):
        left, right = xp.dtype(xp.intp), xp.dtype(xp.int64)
        return left == right, hash(left) == hash(right)
    assert check_ns(f) == (True, True)
    check(lambda a, b: (a.dtype == b.dtype, hash(a.dtype) == hash(b.dtype)),
          np.zeros(2, np.intp), np.zeros(2, np.int64))


INVALID = ["O3", "O5", "O7", "b3", "h4", "I5", "e3", "f5", "l4", "L4"]


@port("TestBuiltin.test_invalid_types")
@pytest.mark.parametrize("code", INVALID)
def test_invalid_types(code):
    check_ns(lambda xp: xp.dtype(code), text=True)
    check_ns(lambda xp: xp.zeros(2, dtype=code), text=True)
    check(lambda a: a.astype(code), np.ones(2))
    check(lambda a: np.zeros(2, dtype=code) + a, np.ones(2))


@port("TestBuiltin.test_richcompare_invalid_dtype_equality")
def test_richcompare_invalid_dtype_equality():
    assert check_ns(lambda xp: (xp.dtype(xp.int32) == 7, xp.dtype(xp.int32) != 7)) == \
        (False, True)
    check(lambda a: (a.dtype == 7, a.dtype != 7), np.zeros(2, np.int32))


@port("TestBuiltin.test_richcompare_invalid_dtype_comparison")
@pytest.mark.parametrize("operation", [operator.le, operator.lt, operator.ge, operator.gt])
def test_richcompare_invalid_dtype_comparison(operation):
    check_ns(lambda xp: operation(xp.dtype(xp.int32), 7), text=True)
    check(lambda a: operation(a.dtype, 7), np.zeros(2, np.int32))


@port("TestBuiltin.test_numeric_style_types_are_invalid")
@pytest.mark.parametrize("dtype", ["Bool", "Bytes0", "Complex32", "Complex64", "Datetime64",
                                   "Float16", "Float32", "Float64", "Int8", "Int16", "Int32",
                                   "Int64", "Object0", "Str0", "Timedelta64", "UInt8", "UInt16",
                                   "Uint32", "UInt32", "Uint64", "UInt64", "Void0", "Float128",
                                   "Complex128"])
def test_numeric_style_types_are_invalid(dtype):
    check_ns(lambda xp: xp.dtype(dtype), text=True)
    check(lambda a: a.astype(dtype), np.ones(2))


# ------------------------------------------------ TestDtypeAttributeDeletion

ATTRS = ["subdtype", "descr", "str", "name", "base", "shape", "isbuiltin", "isnative",
         "isalignedstruct", "fields", "metadata", "hasobject"]


@port("TestDtypeAttributeDeletion.test_dtype_non_writable_attributes_deletion")
@pytest.mark.parametrize("attr", ATTRS)
def test_dtype_non_writable_attributes_deletion(attr):
    check_ns(lambda xp: delattr(xp.dtype(xp.double), attr), text=True)
    check(lambda a: delattr(a.dtype, attr), np.ones(2))


@port("TestDtypeAttributeDeletion.test_dtype_writable_attributes_deletion")
def test_dtype_writable_attributes_deletion():
    check_ns(lambda xp: delattr(xp.dtype(xp.double), "names"), text=True)
    check(lambda a: delattr(a.dtype, "names"), np.ones(2))


# -------------------------------------------------------------- TestPickling


@port("TestPickling.test_builtin")
@pytest.mark.parametrize("t", [int, float, complex, np.int32, bool])
def test_pickling_builtin(t):
    def f(xp, dtype):
        out = []
        for proto in range(pickle.HIGHEST_PROTOCOL + 1):
            buf = pickle.dumps(dtype, proto)
            pickled = pickle.loads(buf)
            x, y = xp.zeros(3, dtype=dtype), xp.zeros(3, dtype=pickled)
            out += [b"_DType_reconstruct" not in buf, b"dtype" in buf, pickled == dtype, x, y,
                    x[0], y[0]]
        return out
    check_ns(f, np.dtype(t))
    check(lambda a: f(np, a.dtype), np.zeros(2, t))


@port("TestPickling.test_pickle_types")
@pytest.mark.parametrize("code", list(np.typecodes["All"]) + [None])
def test_pickle_types(code):
    def f(xp):
        DType = xp.dtype if code is None else type(xp.dtype(code))
        return [pickle.loads(pickle.dumps(DType, proto)) is DType
                for proto in range(pickle.HIGHEST_PROTOCOL + 1)]
    assert all(check_ns(f))
    if code is not None and code in "?bBhHiIlLefdFD":  # (hop's dtypes but longlong's gap)
        # the DType class of a hop.numpy array's dtype is NumPy's
        a = hnp.zeros(2, dtype=code)
        assert type(a.dtype) is type(np.dtype(code))
        assert pickle.loads(pickle.dumps(type(a.dtype))) is type(np.dtype(code))


# ------------------------------------------------------------- TestPromotion


@port("TestPromotion.test_complex_other_value_based")
@pytest.mark.parametrize("other, expected", [
    (2**16 - 1, np.complex64), (2**32 - 1, np.complex128), (np.float16(2), np.complex64),
    (np.float32(2), np.complex64), (np.complex64(2), np.complex64)])
def test_complex_other_value_based(other, expected):
    # (torch's weak_promotion=True cases are NEP 50's, which NumPy 1.24 has not by default)
    def f(xp, ones):
        return xp.result_type(other, xp.dtype(xp.complex64)), xp.minimum(other, ones).dtype
    assert check_ns(f, np.ones(3, dtype=np.complex64)) == (expected, expected)
    check(lambda ones: (np.result_type(other, ones), np.minimum(other, ones)),
          np.ones(3, dtype=np.complex64))


@port("TestPromotion.test_complex_scalar_value_based")
@pytest.mark.parametrize("other, expected", [
    (np.bool_, np.complex128), (np.int64, np.complex128), (np.float16, np.complex64),
    (np.float32, np.complex64), (np.float64, np.complex128), (np.complex64, np.complex64),
    (np.complex128, np.complex128)])
def test_complex_scalar_value_based(other, expected):
    def f(xp, ones):
        return xp.result_type(other, 1j), xp.minimum(ones, 1j).dtype
    assert check_ns(f, np.ones(3, dtype=other)) == (expected, expected)
    check(lambda ones: (np.result_type(ones, 1j), np.minimum(ones, 1j)), np.ones(3, dtype=other))


@port("TestPromotion.test_python_integer_promotion")
@pytest.mark.parametrize("val", [2, 2**32, 2**63, 2**64, 2 * 100])
def test_python_integer_promotion(val):
    def f(xp):
        expected = xp.result_type(xp.array(val).dtype, xp.array(0).dtype) \
            if val < 2**64 else np.result_type(np.array(val).dtype, np.array(0).dtype)
        return expected, xp.result_type(val, 0), xp.result_type(val, xp.int8(0))
    want = check_ns(f)
    assert want[0] == want[1] == want[2]
    if val < 2**64:
        check(lambda z: (np.result_type(val, z), np.result_type(val, z[0])),
              np.zeros(2, np.int8))


@port("TestPromotion.test_permutations_do_not_influence_result")
@pytest.mark.parametrize("dtypes, expected", [
    ([np.int16, np.float16], np.float32), ([np.int8, np.float16], np.float32),
    ([np.uint8, np.int16, np.float16], np.float32), ([1, 1, np.float64], np.float64),
    ([1, 1.0, np.complex128], np.complex128), ([1, 1j, np.float64], np.complex128),
    ([1.0, 1.0, np.int64], np.float64), ([1.0, 1j, np.float64], np.complex128),
    ([1j, 1j, np.float64], np.complex128), ([1, True, np.bool_], np.int_)])
def test_permutations_do_not_influence_result(dtypes, expected):
    def f(xp):
        return [xp.result_type(*perm) for perm in permutations(dtypes)]
    got = check_ns(f)
    # (torch's float32 for int8 and float16 is not NumPy 1.24's float16: the
    # harness holds hop to NumPy's)
    assert all(r == (np.float16 if dtypes == [np.int8, np.float16] else expected) for r in got)
    # the types as arrays of them (hop.numpy arrays eagerly, traced compiled)
    arrays = [np.zeros(2, d) if isinstance(d, type) else d for d in dtypes]
    check(lambda *a: [np.result_type(*perm) for perm in permutations(a)], *arrays)


# ------------------------------------------------------------------ TestMisc


@port("TestMisc.test_dtypes_are_true")
def test_dtypes_are_true():
    assert check_ns(lambda xp: (bool(xp.dtype("f8")), bool(xp.dtype("i8")))) == (True, True)
    check(lambda a, b: (bool(a.dtype), bool(b.dtype)), np.ones(2), np.ones(2, "i8"))


@port("TestMisc.test_keyword_argument")
def test_keyword_argument():
    assert check_ns(lambda xp: xp.dtype(dtype=xp.float64) == xp.dtype(xp.float64))


# --------------------------------------------------------- TestFromDTypeAttribute


@port("TestFromDTypeAttribute.test_simple")
def test_from_dtype_attribute_simple():
    def f(xp):
        class dt:
            dtype = xp.dtype("f8")
        return xp.dtype(dt) == xp.float64, xp.dtype(dt()) == xp.float64
    assert check_ns(f) == (True, True)


@port("TestFromDTypeAttribute.test_simple")
@pytest.mark.parametrize("t", [np.float32, np.int64, np.bool_])
def test_dtype_of_an_array_is_refused(t):
    # NumPy's dtype() refuses its own ndarray ("Cannot construct a dtype
    # from an array") before it reads any other object's dtype attribute;
    # hop.numpy's arrays are refused too (eager hop.numpy's message is
    # NumPy's "Cannot interpret ... as a data type", compiled NumPy's own)
    check(lambda a: np.dtype(a), np.ones(2, t))
    check(lambda a: np.dtype(a.T), np.ones((2, 3), t))
    check_ns(lambda xp, a: xp.dtype(a), np.ones(2, t))
    check(lambda a: (np.dtype(a.dtype), np.dtype(a[0]), np.dtype(type(a)), getattr(a, "dtype"),
                     a.dtype, np.result_type(a), np.zeros(2, dtype=a.dtype)), np.ones(2, t))


def _dtype_of(a):
    return np.dtype(a)


def _dtype_by_name(a):
    from numpy import dtype
    return dtype(a)


def _dtype_bound(a):
    f = np.dtype
    return f(a)


def _dtype_by_module(a):
    import numpy.core.numeric as numeric
    return numeric.dtype(a + 1)


@port("TestFromDTypeAttribute.test_simple")
@pytest.mark.parametrize("fn", [_dtype_of, _dtype_by_name, _dtype_bound, _dtype_by_module])
def test_dtype_of_an_array_is_refused_however_named(fn):
    # each spelling of NumPy's dtype() the caller's bytecode names
    check(fn, np.ones(2, np.float32))
    import hop.numpy as hnp_
    with pytest.raises(TypeError):
        fn(hnp_.ones(2, np.float32))


@port("TestFromDTypeAttribute.test_simple")
def test_a_dtype_attribute_read_is_still_the_dtype():
    # a read that is no np.dtype() call answers, eagerly: Python's getattr,
    # operator.attrgetter (C), a NumPy scalar's (a[0]) dtype() and its
    # finfo/iinfo, a user's class whose dtype is a hop.numpy array's
    a = hnp.ones(2, np.float32)
    i = hnp.ones(2, np.int16)

    class Holder:
        dtype = a.dtype

    assert getattr(a, "dtype") == np.float32
    assert operator.attrgetter("dtype")(a) == np.float32
    assert hasattr(a, "dtype") and np.dtype(a[0]) == np.float32
    assert np.finfo(a[0]).dtype == np.float32 and np.iinfo(i[0]).dtype == np.int16
    assert np.dtype(Holder()) == np.float32 and np.dtype(type(a)) == np.object_
    assert np.result_type(a, i) == np.float32 and np.array(a).dtype == np.float32


@port("TestFromDTypeAttribute.test_recursion")
def test_from_dtype_attribute_recursion():
    def f(xp):
        class dt:
            pass
        dt.dtype = dt
        out = []
        for arg in (dt, dt()):
            if isinstance(arg, dt):
                arg.dtype = dt
            try:
                xp.dtype(arg)
            except RecursionError:
                out.append("RecursionError")
        return out
    assert check_ns(f) == ["RecursionError"] * 2


# ---------------------------------------------------------- TestClassGetItem


@port("TestClassGetItem.test_dtype")
@needs_39
def test_class_getitem_dtype():
    alias = hnp.dtype[Any]
    assert isinstance(alias, types.GenericAlias) and alias.__origin__ is np.dtype


@port("TestClassGetItem.test_dtype_subclass")
@needs_39
@pytest.mark.parametrize("code", np.typecodes["All"])
def test_class_getitem_dtype_subclass(code):
    cls = type(hnp.dtype(code))
    alias = cls[Any]
    assert isinstance(alias, types.GenericAlias) and alias.__origin__ is cls


@port("TestClassGetItem.test_subscript_tuple")
@needs_39
@pytest.mark.parametrize("arg_len", range(4))
def test_class_getitem_subscript_tuple(arg_len):
    arg_tup = (Any,) * arg_len
    if arg_len == 1:
        assert hnp.dtype[arg_tup]
    else:
        with pytest.raises(TypeError):
            hnp.dtype[arg_tup]


@port("TestClassGetItem.test_subscript_scalar")
@needs_39
def test_class_getitem_subscript_scalar():
    assert hnp.dtype[Any]


@port("TestFromDTypeAttribute.test_simple")
def test_numpys_functions_that_read_an_arrays_dtype_first():
    # obj2sctype (and sctype2char, issctype through it) takes its own
    # ndarray's dtype.type before it calls dtype(): a hop.numpy array's too;
    # issubdtype calls dtype() of the array, which NumPy refuses
    a = np.arange(4.0, dtype=np.float32)
    h = hnp.asarray(a.copy())
    assert np.obj2sctype(h) is hnp.obj2sctype(h) is np.obj2sctype(a) is np.float32
    assert np.sctype2char(h) == np.sctype2char(a) == "f"
    assert np.issctype(h) is np.issctype(a) is False
    check(lambda x: (np.obj2sctype(x), np.sctype2char(x), np.issctype(x)), a)
    check(lambda x: np.issubdtype(x, np.floating), a)
