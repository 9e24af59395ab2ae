"""NumPy code whose value hop.numpy cannot trace ends the compiled part
(a graph break: NumPy computes it on the plan's values, or the call runs
eagerly where the translator cannot break) instead of raising where NumPy
gives a value: np.kaiser of a traced beta, a NumPy integer times a list.  Found by the thirty-eighth session's campaign."""

import numpy as np
import pytest

import hop


@pytest.mark.parametrize("name", ["kaiser"])
def test_a_window_of_a_traced_argument_is_numpys(name):
    def f(b):
        return np.kaiser(7, b[0]) * 2.0

    cf = hop.compile(f)
    for v in ([5.0, 1.0], [0.5, 2.0], [14.0, 0.0]):
        b = np.array(v)
        got, want = cf(b), f(b)
        assert type(got) is type(want) and got.dtype == want.dtype
        assert np.array_equal(got, want)
    assert cf.eager_calls == 0 and "graph break at" in cf.explain()
    with pytest.raises(hop.UnsupportedError, match="kaiser of a traced or symbolic argument"):
        hop.trace(f, np.array([5.0, 1.0]))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.bool_])
def test_a_numpy_integer_times_a_list_repeats_it_as_numpy(dtype):
    def f(x):
        return x[0] * [1, 2], [3] * x[1]

    cf = hop.compile(f)
    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        # (an operator is no place the translator breaks at: the call runs
        # eagerly, NumPy's answer; before, a TraceError)
        assert cf(np.array([3, 1], dtype=dtype)) == f(np.array([3, 1], dtype=dtype))
    for v in ([0, 2], [1, 0]):
        x = np.array(v, dtype=dtype)
        assert cf(x) == f(x)
