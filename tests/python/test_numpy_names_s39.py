"""NumPy 1.24's other names in hop.numpy: the constants old code spells
np.NaN or np.Inf, the dtype aliases, the type queries, the floating-point
error state (NumPy's own, which hop.numpy reads), and mask_indices, eagerly
and compiled."""

import math

import numpy as np
import pytest

import hop
import hop.numpy as hnp

CONSTANTS = ("Inf", "Infinity", "NaN", "NAN", "NINF", "PINF", "NZERO", "PZERO", "infty",
             "euler_gamma", "little_endian")


@pytest.mark.parametrize("name", CONSTANTS)
def test_a_constant_is_numpys_value_and_type(name):
    mine, theirs = getattr(hnp, name), getattr(np, name)
    assert type(mine) is type(theirs)
    if isinstance(theirs, float) and math.isnan(theirs):
        assert math.isnan(mine)
    else:
        assert mine == theirs
        assert math.copysign(1.0, mine) == math.copysign(1.0, theirs)
    assert name in hnp.__all__


@pytest.mark.parametrize("name", ["cfloat", "singlecomplex", "uintp"])
def test_a_dtype_alias_is_numpys_type_and_makes_that_dtype(name):
    assert getattr(hnp, name) is getattr(np, name)
    a = hnp.zeros(3, dtype=getattr(hnp, name))
    assert a.dtype == np.dtype(getattr(np, name))


def test_the_error_state_functions_are_numpys_and_hop_numpy_obeys_them():
    assert hnp.seterr is np.seterr and hnp.geterr is np.geterr
    assert hnp.seterrcall is np.seterrcall and hnp.geterrcall is np.geterrcall
    old = hnp.seterr(divide="raise")
    try:
        with pytest.raises(FloatingPointError):
            hnp.divide(hnp.ones(2), hnp.zeros(2))
        assert hnp.geterr()["divide"] == "raise"
    finally:
        np.seterr(**old)
    assert np.geterr() == old


def test_type_queries_answer_for_hop_numpy_dtypes_as_for_numpys():
    a = hnp.arange(4.0, dtype=hnp.float32)
    assert hnp.obj2sctype(a) is np.obj2sctype(np.arange(4.0, dtype=np.float32)) is np.float32
    assert hnp.find_common_type([a.dtype], [np.int64]) == np.dtype(np.float32)
    assert hnp.typename(a.dtype.char) == "single precision"
    assert hnp.sctype2char(hnp.float64) == "d"
    assert hnp.issctype(hnp.int8) and not hnp.issctype(a)
    assert hnp.issubsctype(a.dtype, hnp.floating)
    assert hnp.issubclass_(hnp.int8, hnp.integer)
    assert hnp.maximum_sctype(hnp.int8) is np.int64
    assert hnp.sctypeDict["f4"] is np.float32
    assert hnp.ScalarType is np.ScalarType
    assert hnp.format_float_positional(np.float32(0.1)) == "0.1"
    assert hnp.format_float_scientific(np.float64(1234.5), precision=2) == "1.23e+03"


@pytest.mark.parametrize("n, k", [(0, 0), (1, 0), (3, 1), (4, -1), (5, 7), (4, -9)])
@pytest.mark.parametrize("fn", ["triu", "tril"])
def test_mask_indices_is_numpys(n, k, fn):
    want = np.mask_indices(n, getattr(np, fn), k)
    got = hnp.mask_indices(n, getattr(hnp, fn), k)
    assert len(got) == 2
    for g, w in zip(got, want):
        assert isinstance(g, hnp.ndarray)
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g), w)


def test_mask_indices_with_a_users_function_and_compiled():
    def band(m, k):
        return hnp.triu(hnp.tril(m, k), -k)

    got = hnp.mask_indices(4, band, 1)
    want = np.mask_indices(4, lambda m, k: np.triu(np.tril(m, k), -k), 1)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)

    def f(x):
        r, c = np.mask_indices(4, np.tril, -1)
        return x[r, c] * np.NaN if x.sum() < 0 else x[r, c] + np.euler_gamma

    x = np.arange(16.0).reshape(4, 4)
    cf = hop.compile(f)
    for arg in (x, -x):
        np.testing.assert_array_equal(cf(arg), f(arg))
