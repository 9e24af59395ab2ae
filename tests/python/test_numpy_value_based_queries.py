"""NumPy 1.24's type queries that look at a 0-d array's or a scalar's value
(can_cast, min_scalar_type) and result_type's None, found beside the
forty-sixth session's port of torch's test_dtype.py (issue #29).  Each
case runs by NumPy, eagerly on hop.numpy arrays and compiled
(numpy_diff.check with eager=True).  Before: compiled
`np.can_cast(a, np.int8)` of a 0-d int64 array holding 3 was False where
NumPy says True (it decided by the dtype), silently; compiled
min_scalar_type of a traced 0-d value raised UnsupportedError where eager
answers; eager `np.result_type(a, None)` raised TypeError where NumPy gives
float64."""

import functools

import numpy as np
import pytest

import hop
import hop.numpy as hnp
import numpy_diff

check = functools.partial(numpy_diff.check, eager=True)


TOS = [np.int8, np.uint8, np.float16, np.float32, np.bool_]
CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]


def _can_casts(x):
    return [np.can_cast(x, to, casting) for to in TOS for casting in CASTINGS]


@pytest.mark.parametrize("value, dtype", [(3, np.int64), (300, np.int64), (-3, np.int64),
                                          (3.0, np.float64), (1e300, np.float64),
                                          (True, np.bool_), (2**40, np.uint64)])
def test_can_cast_of_a_0d_array_and_a_scalar_by_value(value, dtype):
    check(lambda a: (_can_casts(a), _can_casts(a[()])), np.array(value, dtype))
    check(lambda a: _can_casts(a[0]), np.array([value], dtype))


def test_can_cast_of_an_array_is_by_its_dtype_and_a_bad_casting_raises():
    check(lambda a: np.can_cast(a, np.int8), np.array([3], np.int64))
    check(lambda a: np.can_cast(a, np.int8, "bogus"), np.array(3, np.int64))
    check(lambda a: np.can_cast(a, np.int8, "bogus"), np.array([3], np.int64))


def test_a_value_query_of_a_traced_value_runs_by_numpy_in_a_compiled_call():
    # the rest of the function is NumPy's too: its result and its effects
    def f(a, out):
        out[0] = 1.5
        ok = np.can_cast(a, np.int8)
        out[1] = 2.5
        return ok, np.min_scalar_type(a), a * 2
    check(f, np.array(3, np.int64), np.zeros(2))
    check(f, np.array(-300, np.int64), np.zeros(2))
    # hop.trace has no eager call to hand it to: a clear error
    with pytest.raises(hop.UnsupportedError, match="can_cast of a traced 0-d array or scalar "
                       "depends on its value"):
        hop.trace(lambda a: np.can_cast(a, np.int8), np.array(3, np.int64))
    with pytest.raises(hop.UnsupportedError, match="min_scalar_type of a traced value"):
        hop.trace(np.min_scalar_type, np.array(3, np.int64))


@pytest.mark.parametrize("value", [3, 300, -1, 70000, 2.5, 1e300])
def test_min_scalar_type_of_a_0d_array_and_a_scalar(value):
    check(lambda a: (np.min_scalar_type(a), np.min_scalar_type(a[()])), np.array(value))
    check(lambda a: np.min_scalar_type(a[0]), np.array([value]))
    check(np.min_scalar_type, np.array([value]))


def test_result_type_of_none_is_float64():
    check(lambda a: (np.result_type(a, None), np.result_type(None, a)),
          np.zeros(2, np.float32))
    check(lambda a: np.result_type(a, None, np.int8), np.zeros(2, np.int16))
    assert hnp.result_type(hnp.zeros(2, dtype=np.int8), None) == np.float64
