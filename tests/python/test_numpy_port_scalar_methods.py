"""Ported from PyTorch's test/torch_np/numpy_tests/core/test_scalar_methods.py
(issue #29): the methods of NumPy's scalars (as_integer_ratio, is_integer,
bit_count) and the subscripts of its abstract scalar classes.  torch skips
all of them; here each runs by NumPy, by hop.numpy (its scalars: the
elements of a hop.numpy array, the results of its functions; its classes:
NumPy's) and compiled, where the scalar is a traced value
(numpy_diff.check with eager=True; the method's Python answer ends the
compiled part).  TestClassGetitemMisc.test_class_getitem_38 is for Python
3.8 only and is not ported."""

import fractions
import functools
import sys
import types
from typing import Any

import numpy as np
import pytest

import hop.numpy as hnp
from numpy_diff import ported

import numpy_diff

SRC = "numpy_tests/core/test_scalar_methods.py"
port = lambda test: ported(SRC, test)  # noqa: E731
check = functools.partial(numpy_diff.check, eager=True)
check_ns = numpy_diff.check_ns
FTYPES = [np.half, np.single, np.double]


def _each(method, values, dtype):
    """method(element) of every element of an array of values, NumPy's
    scalar against hop.numpy's, eagerly and compiled."""
    def f(a):
        out = []
        for i in range(len(values)):
            try:
                out.append(method(a[i]))
            except (OverflowError, ValueError) as e:
                out.append(type(e).__name__)
        return out
    check(f, np.array(values, dtype=dtype))
    got = f(hnp.asarray(np.array(values, dtype=dtype)))
    assert got == f(np.array(values, dtype=dtype))
    return got


# --------------------------------------------------------- TestAsIntegerRatio


@port("TestAsIntegerRatio.test_small")
@pytest.mark.parametrize("ftype", FTYPES)
@pytest.mark.parametrize("f, ratio", [(0.875, (7, 8)), (-0.875, (-7, 8)), (0.0, (0, 1)),
                                      (11.5, (23, 2))])
def test_small(ftype, f, ratio):
    assert _each(lambda x: x.as_integer_ratio(), [f], ftype) == [ratio]
    check_ns(lambda xp: xp.asarray(f, dtype=ftype)[()].as_integer_ratio())


@port("TestAsIntegerRatio.test_simple_fractions")
@pytest.mark.parametrize("ftype", FTYPES)
def test_simple_fractions(ftype):
    R = fractions.Fraction
    got = _each(lambda x: R(*x.as_integer_ratio()), [0.0, 2.5, 0.5, -2100.0], ftype)
    assert got == [R(0, 1), R(5, 2), R(1, 2), R(-2100, 1)]


@port("TestAsIntegerRatio.test_errors")
@pytest.mark.parametrize("ftype", FTYPES)
def test_errors(ftype):
    got = _each(lambda x: x.as_integer_ratio(), [np.inf, -np.inf, np.nan], ftype)
    assert got == ["OverflowError", "OverflowError", "ValueError"]


@port("TestAsIntegerRatio.test_against_known_values")
def test_against_known_values():
    R = fractions.Fraction
    for ftype, want in ((np.half, R(1075, 512)), (np.single, R(4404019, 2097152)),
                        (np.double, R(4728779608739021, 2251799813685248))):
        got = _each(lambda x: R(*x.as_integer_ratio()), [2.1, -2.1], ftype)
        assert got == [want, -want]


@port("TestAsIntegerRatio.test_roundtrip")
@pytest.mark.parametrize("ftype, frac_vals, exp_vals", [
    (np.half, [0.0, 0.01154830649280303, 0.31082276347447274, 0.527350517124794,
               0.8308562335072596], [0, 1, 0, -8, 12]),
    (np.single, [0.0, 0.09248576989263226, 0.8160498218131407, 0.17389442853722373,
                 0.7956044195067877], [0, 12, 10, 17, -26]),
    (np.double, [0.0, 0.031066908499895136, 0.5214135908877832, 0.45780736035689296,
                 0.5906586745934036], [0, -801, 51, 194, -653]),
])
def test_roundtrip(ftype, frac_vals, exp_vals):
    # (torch's n / d in long double, which hop has not, is Fraction(n, d) here)
    def f(xp, fracs, exps):
        out = []
        for frac, e in zip(fracs, exps):
            v = xp.ldexp(fracs.dtype.type(frac), e)
            n, d = v.as_integer_ratio()
            out.append((v.dtype, n, d, fractions.Fraction(n, d) == fractions.Fraction(float(v))))
        return out
    got = check_ns(f, np.array(frac_vals, ftype), np.array(exp_vals))
    assert all(ok for *_, ok in got) and all(dt == ftype for dt, *_ in got)


# ------------------------------------------------------------- TestIsInteger


@port("TestIsInteger.test_special")
@pytest.mark.parametrize("str_value", ["inf", "nan"])
@pytest.mark.parametrize("code", "efd")  # np.typecodes["Float"] but long double
def test_special(code, str_value):
    assert _each(lambda x: x.is_integer(), [float(str_value)], code) == [False]


@port("TestIsInteger.test_true")
@pytest.mark.parametrize("code", "efd" + "Bbhil")
def test_true(code):
    assert _each(lambda x: x.is_integer(), np.arange(-5, 5).astype(code), code) == [True] * 10


@port("TestIsInteger.test_false")
@pytest.mark.parametrize("code", "efd")
def test_false(code):
    # (torch's codes are "bhil", whose `*= 1.1` NumPy refuses: NumPy's own
    # test takes np.typecodes["Float"], as torch's comment says)
    def f(xp, a):
        a = a.copy()
        a *= 1.1
        return [v.is_integer() for v in a if v != 0]
    assert not any(check_ns(f, np.arange(-5, 5).astype(code)))


# ---------------------------------------------------------- TestClassGetItem

needs_39 = pytest.mark.skipif(sys.version_info < (3, 9), reason="Requires python 3.9")


@port("TestClassGetItem.test_abc")
@needs_39
@pytest.mark.parametrize("name", ["number", "integer", "inexact", "unsignedinteger",
                                  "signedinteger", "floating"])
def test_abc(name):
    cls = getattr(hnp, name)
    assert cls is getattr(np, name)
    alias = cls[Any]
    assert isinstance(alias, types.GenericAlias) and alias.__origin__ is cls


@port("TestClassGetItem.test_abc_complexfloating")
@needs_39
def test_abc_complexfloating():
    alias = hnp.complexfloating[Any, Any]
    assert isinstance(alias, types.GenericAlias) and alias.__origin__ is np.complexfloating


@port("TestClassGetItem.test_abc_complexfloating_subscript_tuple")
@needs_39
@pytest.mark.parametrize("arg_len", range(4))
def test_abc_complexfloating_subscript_tuple(arg_len):
    arg_tup = (Any,) * arg_len
    if arg_len in (1, 2):
        assert hnp.complexfloating[arg_tup]
    else:
        match = f"Too {'few' if arg_len == 0 else 'many'} arguments"
        with pytest.raises(TypeError, match=match):
            hnp.complexfloating[arg_tup]


@port("TestClassGetItem.test_abc_non_numeric")
@needs_39
def test_abc_non_numeric():
    with pytest.raises(TypeError):
        hnp.generic[Any]


@port("TestClassGetItem.test_concrete")
@needs_39
@pytest.mark.parametrize("code", np.typecodes["All"])
def test_concrete(code):
    cls = hnp.dtype(code).type
    with pytest.raises(TypeError):
        cls[Any]


@port("TestClassGetItem.test_subscript_tuple")
@needs_39
@pytest.mark.parametrize("arg_len", range(4))
def test_subscript_tuple(arg_len):
    arg_tup = (Any,) * arg_len
    if arg_len == 1:
        assert hnp.number[arg_tup]
    else:
        with pytest.raises(TypeError):
            hnp.number[arg_tup]


@port("TestClassGetItem.test_subscript_scalar")
@needs_39
def test_subscript_scalar():
    assert hnp.number[Any]


# -------------------------------------------------------------- TestBitCount


@port("TestBitCount.test_small")
@pytest.mark.parametrize("itype", np.sctypes["int"] + np.sctypes["uint"])
def test_bit_count_small(itype):
    lo = max(np.iinfo(itype).min, 0)
    got = _each(lambda x: x.bit_count(), list(range(lo, 128)), itype)
    assert got == [bin(a).count("1") for a in range(lo, 128)]
    # (and of negative values: NumPy's counts the absolute value's bits)
    if np.iinfo(itype).min < 0:
        _each(lambda x: x.bit_count(), [-1, -5, np.iinfo(itype).min], itype)


@port("TestBitCount.test_bit_count")
def test_bit_count():
    for exp in [10, 17, 63]:
        a = 2**exp
        got = _each(lambda x: x.bit_count(), [a, a - 1, a ^ 63, (a - 1) ^ 510], np.uint64)
        assert got == [1, exp, 7, exp - 8]
