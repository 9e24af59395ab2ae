"""Ported from PyTorch's test/torch_np/test_unary_ufuncs.py,
test_binary_ufuncs.py, test_nep50_examples.py and test_scalars_0D_arrays.py
(issue #29): each NumPy call run by NumPy, eagerly by hop.numpy and by hop.compile
(numpy_diff.check: values, dtype, shape, ndarray or NumPy scalar or Python
value, the exception type).  torch's generated ufunc tests call each ufunc
on two Python numbers (and compare values only, `check_dtype=False`); here
each runs on those numbers, on NumPy scalars of three dtypes, on 0-d and
1-d arrays and on a mix, and the result's type and dtype are compared too.

test_nep50_examples.py tests torch._numpy's NEP 50 ("weak" scalars)
promotion against NumPy under `np._set_promotion_state("weak")`; hop.numpy
has NumPy 1.24's value-based promotion, the default of the NumPy it runs
beside, so each expression of the NEP's table and each (scalar, array,
dtype) triple of TestCompareToNumpy runs by NumPy 1.24 as it is and by
hop.compile (the "old" column of the table, which is what NumPy 1.24
gives; NumPy's OverflowError for `uint8(1) + 300` in the "new" column is
NEP 50's, not 1.24's).  All 3 tests are here (parametrized as torch's).

test_scalars_0D_arrays.py: all 6 tests, each run as NumPy runs it (torch
asserts torch._numpy's own choice there: its scalars are 0-d arrays, so
`np.int64(42) * [1, 2, 3]` is an array; in NumPy a NumPy integer times a
list repeats the list, a 0-d array times it is an array, and hop.numpy
gives NumPy's answer for each).  TestIsScalar is NumPy's `isscalar` (a 0-d
array and lists are no scalars in NumPy, a str is one: torch marks those
xfail under dynamo for that reason); the module and function values of
test_is_not_scalar, and the str ones, are Python objects, not data a
traced function takes: checked eagerly.

Left out of test_binary_ufuncs.py: nothing (the `subtract` of a weak
scalar and a bool array included).  Of test_unary_ufuncs.py: nothing."""

import functools
import itertools
import math

import numpy as np
import pytest

import hop
from numpy_diff import ported
import numpy_diff

# each case by NumPy, by eager hop.numpy (every ndarray argument through
# hop.numpy.asarray) and compiled (the forty-eighth session)
check = functools.partial(numpy_diff.check, eager=True)

UNARY = ["absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "cbrt", "ceil",
         "conjugate", "cos", "cosh", "deg2rad", "degrees", "exp", "exp2", "expm1", "fabs", "floor",
         "isfinite", "isinf", "isnan", "log", "log10", "log1p", "log2", "logical_not", "negative",
         "positive", "rad2deg", "radians", "reciprocal", "rint", "sign", "signbit", "sin", "sinh",
         "sqrt", "square", "tan", "tanh", "trunc"]

# the NumPy values each unary ufunc's test runs on: torch's number, NumPy
# scalars of it, arrays holding it with a few more points of the domain
SCALAR_KINDS = ["python", "float64", "float32", "float16", "int64", "array0d", "array1d",
                "array1d_f32", "array1d_int8"]


for _name in UNARY:
    ported("test_unary_ufuncs.py", "TestUnaryUfuncs.test_" + _name)(lambda: None)


def _of_kind(v, kind):
    return {"python": v, "float64": np.float64(v), "float32": np.float32(v),
            "float16": np.float16(v), "int64": np.int64(round(v)), "array0d": np.array(v),
            "array1d": np.array([v, -v, 2 * v, 0.0]),
            "array1d_f32": np.array([v, -v, 2 * v, 0.0], np.float32),
            "array1d_int8": np.array([round(v), -1, 2, 0], np.int8)}[kind]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("kind", SCALAR_KINDS)
def test_unary_ufunc(name, kind):
    ufunc = getattr(np, name)
    x = _of_kind(1.5 if name == "arccosh" else 0.5, kind)
    check(lambda a: ufunc(a), x, rtol=1e-6 if kind in ("float32", "array1d_f32") else None)
    if kind == "python":  # the number a constant of the function, as torch writes it
        check(lambda: ufunc(x))


BINARY = ["add", "arctan2", "bitwise_and", "bitwise_or", "bitwise_xor", "copysign", "divide",
          "equal", "float_power", "floor_divide", "fmax", "fmin", "fmod", "gcd", "greater",
          "greater_equal", "heaviside", "hypot", "lcm", "ldexp", "left_shift", "less",
          "less_equal", "logaddexp", "logaddexp2", "logical_and", "logical_or", "logical_xor",
          "matmul", "maximum", "minimum", "remainder", "multiply", "nextafter", "not_equal",
          "power", "right_shift", "subtract"]
for _name in BINARY:
    ported("test_binary_ufuncs.py", "TestBinaryUfuncBasic.test_" + _name)(lambda: None)
INTEGER_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm", "left_shift",
                "right_shift"}
BINARY_KINDS = ["python", "float64", "float32", "array0d", "array1d", "array_scalar",
                "scalar_array", "array1d_f32"]


def _binary_args(name, kind):
    x, y = (5, 6) if name in INTEGER_ONLY else (0.5, 6) if name == "ldexp" else (0.5, 0.6)
    if name == "matmul":
        return {"python": ([x], [y]), "float64": (np.array([x]), np.array([y])),
                "float32": (np.array([x], np.float32), np.array([y], np.float32)),
                "array0d": (np.array([[x]]), np.array([y])),
                "array1d": (np.array([x, y]), np.array([[y], [x]])),
                "array_scalar": (np.array([x, y]), [y, x]),
                "scalar_array": ([x, y], np.array([y, x])),
                "array1d_f32": (np.array([x, y], np.float32), np.array([y, x]))}[kind]
    ty = type(x)
    yt = np.int32 if name == "ldexp" else None

    def arr(v, dt=None):
        return np.array([v, ty(3), ty(1)], dtype=dt)
    return {"python": (x, y), "float64": (np.float64(x) if ty is float else np.int64(x),
                                          np.float64(y) if type(y) is float else np.int64(y)),
            "float32": (np.float32(x) if ty is float else np.int32(x),
                        np.float32(y) if type(y) is float else np.int32(y)),
            "array0d": (np.array(x), np.array(y, dtype=yt)),
            "array1d": (arr(x), np.array([y, type(y)(2), type(y)(1)], dtype=yt)),
            "array_scalar": (arr(x), y), "scalar_array": (x, np.array([y, y], dtype=yt)),
            "array1d_f32": (arr(x, np.float32 if ty is float else np.int16),
                            np.array([y, y, y], dtype=yt or (np.float32 if type(y) is float
                                                             else np.int16)))}[kind]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("kind", BINARY_KINDS)
def test_binary_ufunc(name, kind):
    ufunc = getattr(np, name)
    x, y = _binary_args(name, kind)
    f32 = kind in ("float32", "array1d_f32")
    check(lambda a, b: ufunc(a, b), x, y, rtol=1e-6 if f32 else None)
    if kind == "python":
        check(lambda: ufunc(x, y))


@ported("test_binary_ufuncs.py",
        "TestBinaryUfuncBasic.test_subtract_weak_scalar_promotes_bool_array")
def test_subtract_scalar_and_bool_array():
    check(lambda b: (np.subtract(1, b), np.subtract(1.5, b), 1 - b, 1.5 - b),
          np.asarray([True, False]))
    # bool - bool is NumPy's TypeError, in both spellings
    check(lambda b: np.subtract(b, b), np.asarray([True, False]))
    check(lambda b: b - b, np.asarray([True, False]))


# ------------------------------------------------------ test_nep50_examples

NEP50 = "test_nep50_examples.py"
# torch's table: each expression with NumPy's names (NumPy 1.24 computes the
# "old" column); `array` is np.array
NEP50_EXAMPLES = [
    "uint8(1) + 2", "array([1], uint8) + int64(1)", "array([1], uint8) + array(1, int64)",
    "array([1.], float32) + float64(1.)", "array([1.], float32) + array(1., float64)",
    "array([1], uint8) + 1", "array([1], uint8) + 200", "array([100], uint8) + 200",
    "array([1], uint8) + 300", "uint8(1) + 300", "uint8(100) + 200", "float32(1) + 3e100",
    "array([1.0], float32) + 1e-14 == 1.0", "array([0.1], float32) == float64(0.1)",
    "array(1.0, float32) + 1e-14 == 1.0", "array([1.], float32) + 3",
    "array([1.], float32) + int64(3)", "3j + array(3, complex64)", "float32(1) + 1j",
    "int32(1) + 5j", "int16(2) + 2", "int16(4) + 4j", "float32(5) + 5j", "bool_(True) + 1",
    "True + uint8(2)"]
NEP50_NAMES = {n: getattr(np, n) for n in ("array", "bool_", "complex128", "complex64", "float32",
                                           "float64", "inf", "int16", "int32", "int64", "uint8")}


@ported(NEP50, "TestNEP50Table.test_nep50_exceptions")
@pytest.mark.parametrize("example", NEP50_EXAMPLES)
def test_nep50_table(example):
    code = compile(example, "<nep50>", "eval")
    check(lambda: eval(code, dict(NEP50_NAMES)))
    # the same with the expression's first operand, when it is an array or
    # NumPy scalar, an argument
    if "(" in example and example.index("(") < example.index(" "):
        depth, end = 0, 0
        for end, c in enumerate(example):
            depth += {"(": 1, ")": -1}.get(c, 0)
            if c == ")" and depth == 0:
                break
        left, rest = example[:end + 1], example[end + 1:]
        check(eval("lambda a: a" + rest, dict(NEP50_NAMES)), eval(left, dict(NEP50_NAMES)))


WEAKS = (True, 1, 2.0, 3j)
NON_WEAKS = (np.asarray(True), np.uint8(1), np.int8(1), np.int32(1), np.int64(1), np.float32(1),
             np.float64(1), np.complex64(1), np.complex128(1))
DTYPES = (None, np.bool_, np.uint8, np.int8, np.int32, np.int64, np.float32, np.float64,
          np.complex64, np.complex128)


@ported(NEP50, "TestCompareToNumpy.test_direct_compare")
@pytest.mark.parametrize("scalar,array", itertools.product(WEAKS, NON_WEAKS))
def test_nep50_direct_compare(scalar, array):
    for dtype in DTYPES:
        kw = {} if dtype is None else {"dtype": dtype}
        check(lambda a: np.add(scalar, a, **kw), array)
        check(lambda a: np.add(scalar, np.asarray(a), **kw), array)


NEP50_BINARY = [n for n in BINARY if n not in ("matmul", "ldexp")] + ["true_divide"]


@ported(NEP50, "TestCompareToNumpy.test_compare_ufuncs")
@pytest.mark.parametrize("name", NEP50_BINARY)
def test_nep50_compare_ufuncs(name):
    ufunc = getattr(np, name)
    for scalar, array in itertools.product(WEAKS, NON_WEAKS):
        check(lambda a: ufunc(scalar, a), array)


# --------------------------------------------------- test_scalars_0D_arrays

S0D = "test_scalars_0D_arrays.py"
VALUES = {"int64": lambda: np.int64(42), "array": lambda: np.array(42),
          "asarray": lambda: np.asarray(42), "asarray_int": lambda: np.asarray(np.int64(42))}


@ported(S0D, "TestArrayScalars.test_array_scalar_basic")
@pytest.mark.parametrize("value", VALUES)
def test_array_scalar_basic(value):
    make = VALUES[value]
    check(lambda: (lambda v: (v.ndim, v.shape, v.size, v.dtype, v.dtype == np.dtype("int64"), v))(
        make()))
    check(lambda z: (lambda v: (v.ndim, v.shape, v.size, v.dtype, v))(make() + z), 0)


@ported(S0D, "TestArrayScalars.test_conversion_to_int")
@pytest.mark.parametrize("value", VALUES)
def test_conversion_to_int(value):
    make = VALUES[value]
    check(lambda: (int(make()), isinstance(int(make()), int), isinstance(make(), int)))


@ported(S0D, "TestArrayScalars.test_decay_to_py_scalar")
@pytest.mark.parametrize("value", VALUES)
def test_decay_to_py_scalar(value):
    make = VALUES[value]
    check(lambda: (make() * [1, 2, 3], [1, 2, 3] * make()))
    check(lambda z: ((make() + z) * [1, 2, 3], [1, 2, 3] * (make() + z)), 0)
    check(lambda z: ((make() + z) * [1, 2, 3], [1, 2, 3] * (make() + z)), np.int64(0))


@ported(S0D, "TestArrayScalars.test_scalar_comparisons")
def test_scalar_comparisons():
    def f(z):
        scalar = np.int64(42) + z
        arr = np.array(42) + z
        return (arr == scalar, arr >= scalar, arr <= scalar, scalar == 42, arr == 42,
                bool(arr == scalar))
    check(f, 0)
    check(f, np.int64(0))
    check(f, np.array(0))


SCALARS = {"literal": lambda: 42, "int": lambda: int(42.0), "float32": lambda: np.float32(42),
           "array_0D": lambda: np.array(42), "list": lambda: [42], "list-list": lambda: [[42]],
           "array_1D": lambda: np.array([42]), "array_2D": lambda: np.array([[42]])}
NOT_SCALARS = {"int": lambda: int, "float32_type": lambda: np.float32, "tuple": lambda: (),
               "list": lambda: [], "list2": lambda: [1, 2], "array": lambda: np.asarray([1, 2]),
               "float32_array": lambda: np.float32([1, 2])}


@ported(S0D, "TestIsScalar.test_is_scalar")
@pytest.mark.parametrize("value", SCALARS)
def test_is_scalar(value):
    make = SCALARS[value]
    check(lambda: np.isscalar(make()))


@ported(S0D, "TestIsScalar.test_is_not_scalar")
@pytest.mark.parametrize("value", NOT_SCALARS)
def test_is_not_scalar(value):
    make = NOT_SCALARS[value]
    check(lambda: np.isscalar(make()))
    for other in (math.sin, np, np.transpose, "s", "string"):  # eagerly: not traced data
        assert hop.numpy.isscalar(other) is np.isscalar(other)


def test_scalar_operators_with_a_list():
    """torch's decay test's point over the other operators: a NumPy scalar
    or a 0-d array with a list on either side is NumPy's array result."""
    def f(z):
        s = np.float64(3) + z
        t = np.array(3) + z
        lst = [1, 2]
        return [s + lst, s - lst, s / lst, s // lst, s % lst, s ** lst, s < lst, s == lst,
                lst + s, lst - s, lst / s, lst // s, lst % s, lst ** s, lst < s, lst == s,
                t + lst, t * lst, lst * t, lst - t, t == lst]
    check(f, 0.0, fullgraph=True)
    check(f, np.float64(0))
