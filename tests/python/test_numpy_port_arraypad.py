"""Ported from PyTorch's test/torch_np/numpy_tests/lib/test_arraypad.py
(issue #29): np.pad's constant mode, each case by NumPy, eagerly on
hop.numpy arrays and compiled (numpy_diff.check with eager=True).  torch's
xfails (tuple constant values) are ported: NumPy defines them; its skip
(large integers, an int64 pad value) is ported too."""

import functools

import numpy as np
import pytest

from numpy_diff import ported

import numpy_diff

SRC = "numpy_tests/lib/test_arraypad.py"
port = lambda test: ported(SRC, test)  # noqa: E731
check = functools.partial(numpy_diff.check, eager=True)


@port("TestConstant.test_check_constant")
def test_check_constant():
    want = check(lambda a: np.pad(a, (25, 20), "constant", constant_values=(10, 20)),
                 np.arange(100))
    assert want.tolist() == [10] * 25 + list(range(100)) + [20] * 20


@port("TestConstant.test_check_constant_zeros")
def test_check_constant_zeros():
    want = check(lambda a: np.pad(a, (25, 20), "constant"), np.arange(100))
    assert want.tolist() == [0] * 25 + list(range(100)) + [0] * 20


@port("TestConstant.test_check_constant_float")
def test_check_constant_float():
    # an int array padded with a float constant keeps its dtype (1.1 -> 1)
    want = check(lambda a: np.pad(a, (1, 2), mode="constant", constant_values=1.1),
                 np.arange(30).reshape(5, 6))
    assert want.dtype == np.int64 and want[0, 0] == 1 and want.shape == (8, 9)


@port("TestConstant.test_check_constant_float2")
def test_check_constant_float2():
    want = check(lambda a: np.pad(a.astype(np.float64), ((1, 2), (1, 2)), mode="constant",
                                  constant_values=1.1), np.arange(30).reshape(5, 6))
    assert want[0, 0] == 1.1 and want[1, 1] == 0.0 and want.shape == (8, 9)


@port("TestConstant.test_check_constant_float3")
def test_check_constant_float3():
    want = check(lambda a: np.pad(a, (25, 20), "constant", constant_values=(-1.1, -1.2)),
                 np.arange(100, dtype=float))
    assert want.tolist() == [-1.1] * 25 + list(range(100)) + [-1.2] * 20


@port("TestConstant.test_check_constant_odd_pad_amount")
def test_check_constant_odd_pad_amount():
    want = check(lambda a: np.pad(a, ((1,), (2,)), mode="constant", constant_values=3),
                 np.arange(30).reshape(5, 6))
    assert want.shape == (7, 10) and want[1, 2] == 0 and want[0, 0] == 3


@port("TestConstant.test_check_constant_pad_2d")
def test_check_constant_pad_2d():
    want = check(lambda a: np.lib.pad(a, ((1, 2), (1, 3)), mode="constant",
                                      constant_values=((1, 2), (3, 4))),
                 np.arange(4).reshape(2, 2))
    assert want.tolist() == [[3, 1, 1, 4, 4, 4], [3, 0, 1, 4, 4, 4], [3, 2, 3, 4, 4, 4],
                             [3, 2, 2, 4, 4, 4], [3, 2, 2, 4, 4, 4]]


@port("TestConstant.test_check_large_integers")
def test_check_large_integers():
    int64_max = 2**63 - 1
    want = check(lambda a: np.pad(a, 1, mode="constant", constant_values=a.min()),
                 np.full(5, int64_max, dtype=np.int64))
    assert want.tolist() == [int64_max] * 7


@port("TestConstant.test_pad_empty_dimension")
@pytest.mark.parametrize("mode", ["constant", "edge", "wrap"])
def test_pad_empty_dimension(mode):
    # (edge and wrap of an empty axis padded: NumPy's ValueError)
    check(lambda a: np.pad(a, [(0,), (2,), (1,)], mode=mode), np.zeros((3, 0, 2)))
