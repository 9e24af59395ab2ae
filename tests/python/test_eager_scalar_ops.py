"""`x * 1.5`, `1.0 - x`, `i + 3` on a concrete hop.Tensor and a Python number
take the quick path (hop_eager_quick_scalar): the same dtype and bits as the
general path (a strided view of the same values takes it), both orders,
special values, ints wrapping into int32, and the general path's errors."""
import math
import operator

import numpy as np
import pytest

import hop

OPS = [operator.add, operator.sub, operator.mul, operator.truediv]
SCALARS = [1.5, -0.0, 1e300, math.nan, math.inf, 1e-45, 3, -7, 0, 2**31, 2**62, True]
VALUES = [-6.0, -0.0, 0.5, 1e-310, 3.25, 1e9, -1e9, 7.0, 2147483647.0, -3.0, 1.0, 0.0]


def _general(x):
    """The same values as a strided view (the general path's operand)."""
    big = hop.tensor(np.repeat(x.numpy(), 2), dtype=x.dtype)
    return big[::2]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("op", OPS, ids=lambda o: o.__name__)
def test_scalar_ops_match_the_general_path(dtype, op):
    x = hop.tensor(np.array(VALUES).astype(dtype))
    g = _general(x)
    assert not g.is_contiguous()
    for s in SCALARS:
        for first in (False, True):
            call = (lambda t: op(s, t)) if first else (lambda t: op(t, s))
            try:
                want = call(g)
            except Exception as e:  # noqa: BLE001 (the quick path must raise the same)
                with pytest.raises(type(e)):
                    call(x)
                continue
            got = call(x)
            assert got.dtype == want.dtype and got.shape == want.shape, (s, first)
            assert got.numpy().tobytes() == want.numpy().tobytes(), (s, first)


def test_zero_d_and_errors():
    z = hop.tensor(np.float32(2.5))
    assert (z * 2).shape == () and float(z * 2) == 5.0
    with pytest.raises(OverflowError, match="int64"):
        hop.ones(3) - 2**70
    x = hop.ones(3, dtype=hop.int32)
    assert (x + 2**31).dtype == hop.int32
    assert np.array_equal((x * 3).numpy(), [3, 3, 3])


def test_results_are_new_and_inputs_unchanged():
    x = hop.arange(4, dtype=hop.float32)
    before = x.numpy().copy()
    ys = [x * 2.0 for _ in range(3)]
    assert len({id(y) for y in ys}) == 3
    assert np.array_equal(x.numpy(), before)
    del ys
    y = 1.0 - x  # (into a dead result's block)
    assert np.array_equal(y.numpy(), [1, 0, -1, -2]) and np.array_equal(x.numpy(), before)
