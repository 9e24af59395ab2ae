"""The ndarray-method campaign, second pass (the first rule): what
test_numpy_method_campaign's probe left (searchsorted of unsorted data,
float16 overflow warnings, flags.owndata and flags.writeable, resize,
empty arrays' strides, byte orders and string dtypes) and methods and
attributes it did not draw (view(dtype), .flat, .T writes, .base, fill,
put, choose, compress, repeat, partition, argsort(kind=), sort(order=),
tofile/dump, __iter__, __len__ of 0-d, __index__, __complex__,
__round__, __divmod__, in-place operators with broadcasting and casting
errors).

Each expression runs four ways as the first campaign's (check,
differences): NumPy 1.24, eagerly on a hop.numpy array, compiled with
the array an argument and compiled with the array a global; they agree
on the result's type, dtype, layout, bytes, memory sharing, the input
after the call, the warnings and the error."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp

from test_numpy_method_campaign import differences


def agree(expr, src):
    bad = differences(expr, src)
    assert not bad, f"{expr} on {src}:\n" + "\n".join(bad)


# ------------------------------------------------------------ searchsorted

@pytest.mark.parametrize("expr,src", [
    ("a.searchsorted(1+1j)", "np.array([3+1j, 1-1j, 2+0j, 1+2j])"),
    ("a.searchsorted([0, 1+1j, 5])", "np.array([3+1j, 1-1j, 2+0j, 1+2j])"),
    ("a.searchsorted(2)", "np.array([1j, 3, 2+5j, -1])"),
    ("a.searchsorted([2, 1j, 3], side='right')", "np.array([1j, 3, 2+5j, -1], np.complex64)"),
    ("a.searchsorted([1+1j, 1+np.nan*1j, 0])", "np.array([np.nan+0j, 1+1j, 1j, 2])"),
    ("a.searchsorted([2, 3, 0, 5])", "np.array([5.0, 0, 2, 5, 4, 2, 2])"),
    ("a.searchsorted([2, 3, 0, 5], side='right')", "np.array([5.0, 0, 2, 5, 4, 2, 2])"),
    ("a.searchsorted([-1, 3, 5, 5, 2])", "np.array([0, 4, 2, 0, 5, 5])"),
    ("a.searchsorted([[1, 4], [3, 6]])", "np.array([1, 0, 1, 1, 5, 1, 4], np.int8)"),
    ("a.searchsorted([0.5, np.nan, 1])", "np.array([np.nan, 5.0, 1, 4, 2], np.float16)"),
    ("np.searchsorted(a, [3, 1], sorter=[2, 0, 1])", "np.array([3+0j, 1, 2])")])
def test_searchsorted_of_unsorted_data_is_numpys_binary_search(expr, src):
    # a complex searchsorted counted the elements before the value (right
    # for sorted data only); a real one searched each value from the whole
    # array, where NumPy's binsearch starts from the window the previous
    # value left: both other indices on unsorted data
    agree(expr, src)


# ------------------------------------------------------ float16 overflow

@pytest.mark.parametrize("expr,src", [
    ("a + a", "np.array([65000, 1], np.float16)"),
    ("a * a", "np.array([300, 1], np.float16)"),
    ("np.float16(60000) * a", "np.array([2, 1], np.float16)"),
    ("(a * 300) + 1", "np.array([300, 1], np.float16)"),
    ("np.exp(a)", "np.array([20, 1], np.float16)"),
    ("a / np.float16(0.001)", "np.array([65000, 1], np.float16)"),
    ("np.square(a)", "np.array([300, 1], np.float16)"),
    ("a.astype(np.float16)", "np.array([1e6, 1.0])"),
    ("a.astype(np.float16)", "np.array([70000, 1])"),
    ("a.astype(np.float16)", "np.array([1e6, 1.0], np.float32)"),
    ("a + a", "np.array([np.inf, 1], np.float16)")])
def test_float16_results_that_overflow_warn_as_numpy(expr, src):
    # hop's float16 kernels compute in float and round to binary16 in
    # software, which raised no IEEE flag: inf without NumPy's
    # "overflow encountered in add" (or "in cast")
    agree(expr, src)


@pytest.mark.parametrize("expr,src", [
    ("a * a", "np.array([1e-3, 1], np.float16)"),
    ("a.astype(np.float16)", "np.array([1e-8, 1.0])"),
    ("a.astype(np.float16)", "np.array([1e-6, 0.0], np.float32)")])
def test_float16_underflow_is_reported_where_numpys_state_asks(expr, src):
    # (NumPy's default ignores underflow; under errstate(under='warn') a
    # binary16 result below 2^-14 that is not exact warns)
    with np.errstate(under="warn"):
        agree(expr, src)
