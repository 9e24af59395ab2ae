"""Ported from PyTorch's test/torch_np/numpy_tests/core/test_numerictypes.py
(issue #29): find_common_type, issubdtype, bitname and the names of the
scalar types.  hop.numpy's types and type queries are NumPy's, so each
case runs by NumPy, by hop.numpy's own names eagerly (numpy_diff.check_ns,
xp the namespace), on the dtypes of hop.numpy arrays and compiled, where
the array is traced (numpy_diff.check with eager=True).  torch's skip of
TestDocStrings is ported too."""

import functools
import itertools

import numpy as np
import pytest

import hop.numpy as hnp
from numpy_diff import ported

import numpy_diff

SRC = "numpy_tests/core/test_numerictypes.py"
port = lambda test: ported(SRC, test)  # noqa: E731
check = functools.partial(numpy_diff.check, eager=True)
check_ns = numpy_diff.check_ns


# ------------------------------------------------------------ TestCommonType

COMMON = [("test_scalar_loses1", ["f4", "f4", "i2"], ["f8"], "f4"),
          ("test_scalar_loses2", ["f4", "f4"], ["i8"], "f4"),
          ("test_scalar_wins", ["f4", "f4", "i2"], ["c8"], "c8"),
          ("test_scalar_wins2", ["u4", "i4", "i4"], ["f4"], "f8"),
          ("test_scalar_wins3", ["u8", "i8", "i8"], ["f8"], "f8")]


def _common_type_test(name, arrays, scalars, want):
    @port(f"TestCommonType.{name}")
    def test():
        assert check_ns(lambda xp: xp.find_common_type(arrays, scalars)) == want
        # of the dtypes of arrays (traced when compiled)
        check(lambda *a: np.find_common_type([x.dtype for x in a[:len(arrays)]],
                                             [x.dtype for x in a[len(arrays):]]),
              *[np.zeros(2, d) for d in arrays + scalars])
    test.__name__ = f"test_common_type_{name[5:]}"
    return test


for _case in COMMON:
    globals()[f"test_common_type_{_case[0][5:]}"] = _common_type_test(*_case)
del _case


# ------------------------------------------------------------ TestIsSubDType

WRAPPERS = [np.dtype, lambda x: x]


@port("TestIsSubDType.test_both_abstract")
def test_both_abstract():
    assert check_ns(lambda xp: (xp.issubdtype(xp.floating, xp.inexact),
                                xp.issubdtype(xp.inexact, xp.floating))) == (True, False)


@port("TestIsSubDType.test_same")
def test_same():
    def f(xp):
        return [xp.issubdtype(w1(cls), w2(cls)) for cls in (xp.float32, xp.int32)
                for w1, w2 in itertools.product(WRAPPERS, repeat=2)]
    assert all(check_ns(f))
    check(lambda a, b: (np.issubdtype(a.dtype, b.dtype), np.issubdtype(a.dtype, np.float32)),
          np.zeros(2, np.float32), np.zeros(2, np.float32))


@port("TestIsSubDType.test_subclass")
def test_subclass():
    def f(xp):
        return [xp.issubdtype(w(t), xp.floating) for w in WRAPPERS
                for t in (xp.float32, xp.float64)]
    assert all(check_ns(f))
    check(lambda a, b: (np.issubdtype(a.dtype, np.floating), np.issubdtype(b.dtype, np.floating),
                        np.issubdtype(a.dtype, np.integer)),
          np.zeros(2, np.float32), np.zeros(2, np.float64))


@port("TestIsSubDType.test_subclass_backwards")
def test_subclass_backwards():
    def f(xp):
        return [xp.issubdtype(xp.floating, w(t)) for w in WRAPPERS
                for t in (xp.float32, xp.float64)]
    assert not any(check_ns(f))
    check(lambda a: np.issubdtype(np.floating, a.dtype), np.zeros(2, np.float32))


@port("TestIsSubDType.test_sibling_class")
def test_sibling_class():
    def f(xp):
        return [xp.issubdtype(w1(a), w2(b)) for w1, w2 in itertools.product(WRAPPERS, repeat=2)
                for a, b in ((xp.float32, xp.float64), (xp.float64, xp.float32))]
    assert not any(check_ns(f))
    check(lambda a, b: (np.issubdtype(a.dtype, b.dtype), np.issubdtype(b.dtype, a.dtype)),
          np.zeros(2, np.float32), np.zeros(2, np.float64))


NONDTYPE = [(np.float32, "float64", False), (np.float32, "f8", False),
            (np.int32, "int64", False), (np.int8, int, False), (np.float32, float, False),
            (np.complex64, complex, False), (np.float32, "float", False),
            (np.float64, "f", False), (np.float64, "float64", True), (np.float64, "f8", True),
            (np.int64, "int64", True), (np.int8, np.integer, True),
            (np.float32, np.floating, True), (np.complex64, np.complexfloating, True),
            (np.float64, "float", True), (np.float32, "f", True)]


@port("TestIsSubDType.test_nondtype_nonscalartype")
@pytest.mark.parametrize("t, other, want", NONDTYPE)
def test_nondtype_nonscalartype(t, other, want):
    assert check_ns(lambda xp: xp.issubdtype(t, other)) is want
    check(lambda a: np.issubdtype(a.dtype, other), np.zeros(2, t))


# --------------------------------------------------------------- TestBitName


@port("TestBitName.test_abstract")
def test_bitname_abstract():
    # (numpy.core.numerictypes is NumPy's module, which hop.numpy has not:
    # NumPy's in eager and compiled code alike)
    check(lambda a: np.core.numerictypes.bitname(np.floating), np.ones(2))
    check(lambda a: np.core.numerictypes.bitname(a.dtype.type), np.ones(2))


# ------------------------------------------------------------ TestDocStrings


@port("TestDocStrings.test_platform_dependent_aliases")
def test_platform_dependent_aliases():
    assert hnp.int64 is hnp.int_ and "int64" in hnp.int_.__doc__


# ------------------------------------------------------- TestScalarTypeNames

NUMERIC_TYPES = [np.byte, np.short, np.intc, np.int_, np.ubyte, np.half, np.single, np.double,
                 np.csingle, np.cdouble]


@port("TestScalarTypeNames.test_names_are_unique")
def test_names_are_unique():
    types = [getattr(hnp, t.__name__) for t in NUMERIC_TYPES]
    assert len(set(types)) == len(types)
    names = [t.__name__ for t in types]
    assert len(set(names)) == len(names)


@port("TestScalarTypeNames.test_names_reflect_attributes")
@pytest.mark.parametrize("t", NUMERIC_TYPES)
def test_names_reflect_attributes(t):
    assert getattr(hnp, t.__name__) is t


@port("TestScalarTypeNames.test_names_are_undersood_by_dtype")
@pytest.mark.parametrize("t", NUMERIC_TYPES)
def test_names_are_undersood_by_dtype(t):
    assert check_ns(lambda xp: xp.dtype(t.__name__).type is t)
    # a hop.numpy array of the named dtype has t's type
    check(lambda a: (a.dtype.type is t, a.astype(t.__name__).dtype.type is t),
          np.zeros(2, t))
    assert hnp.zeros(2, dtype=t.__name__).dtype.type is t
