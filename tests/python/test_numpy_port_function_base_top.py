"""Ported from PyTorch's test/torch_np/test_function_base.py (the
top-level one, issue #29; numpy_tests/lib/test_function_base.py's port is
test_numpy_port_function_base.py): np.arange's errors and keywords and
np.append, each case by NumPy, by hop.numpy's own names eagerly and
compiled (numpy_diff.check_ns).  torch's xfails (arange(start=4),
boolean ranges) are ported: NumPy defines both."""

import numpy as np
import pytest

from numpy_diff import check_ns, ported

SRC = "test_function_base.py"
port = lambda test: ported(SRC, test)  # noqa: E731


@port("TestArange.test_infinite")
def test_infinite():
    check_ns(lambda xp: xp.arange(0, xp.inf), text=True)


@port("TestArange.test_nan_step")
def test_nan_step():
    check_ns(lambda xp: xp.arange(0, 1, xp.nan), text=True)


@port("TestArange.test_zero_step")
@pytest.mark.parametrize("args", [(0, 10, 0), (0.0, 10.0, 0.0), (0, 0, 0), (0.0, 0.0, 0.0)])
def test_zero_step(args):
    check_ns(lambda xp: xp.arange(*args), text=True)


@port("TestArange.test_require_range")
@pytest.mark.parametrize("kw", [{}, {"step": 3}, {"dtype": "int64"}])
def test_require_range(kw):
    check_ns(lambda xp: xp.arange(**kw), text=True)


@port("TestArange.test_require_range_2")
def test_require_range_2():
    check_ns(lambda xp: xp.arange(start=4), text=True)


@port("TestArange.test_start_stop_kwarg")
def test_start_stop_kwarg():
    got = check_ns(lambda xp: (xp.arange(stop=3), xp.arange(start=0, stop=3),
                               xp.arange(start=3, stop=9)))
    assert [len(g) for g in got] == [3, 3, 6]


@port("TestArange.test_arange_booleans")
def test_arange_booleans():
    got = check_ns(lambda xp: (xp.arange(False, dtype=bool), xp.arange(True, dtype="bool"),
                               xp.arange(2, dtype="bool"), xp.arange(6, 8, dtype="bool")))
    assert [g.tolist() for g in got] == [[], [False], [False, True], [True, True]]
    check_ns(lambda xp: xp.arange(3, dtype="bool"), text=True)


@port("TestArange.test_error_paths_and_promotion")
@pytest.mark.parametrize("which", [0, 1, 2])
def test_error_paths_and_promotion(which):
    def f(xp, bad):
        args = [0, 10, 2]
        args[which] = xp.float64(2.0)
        assert xp.arange(*args).dtype == xp.float64
        args[which] = bad
        return xp.arange(*args)
    check_ns(f, [None, []])
    check_ns(lambda xp: xp.arange(*[xp.float64(2.0) if i == which else v
                                    for i, v in enumerate([0, 10, 2])]))


@port("TestAppend.test_basic")
def test_append_basic():
    check_ns(lambda xp: (xp.append([1, 2, 3], [[4, 5, 6], [7, 8, 9]]),
                         xp.append([[1, 2, 3], [4, 5, 6]], [[7, 8, 9]], axis=0)))
    check_ns(lambda xp, a, b: (xp.append(a, b), xp.append(a.reshape(3, 1), b.reshape(3, 2),
                                                            axis=1)),
             np.array([1, 2, 3]), np.arange(6))
    check_ns(lambda xp: xp.append([[1, 2, 3], [4, 5, 6]], [7, 8, 9], axis=0), text=True)


@port("TestArange.test_error_paths_and_promotion")
@pytest.mark.parametrize("args", [([1, 2],), (0, [None, []]), ("a",), (0, "5"), (0, [3]),
                                  ((3,),), (None,), (0, 10, [None, []]), ([None, []], 10, 2)])
def test_arange_of_objects_that_are_not_numbers(args):
    # NumPy's dtype discovery of each argument comes first: its exception
    # type and text, eagerly and compiled
    check_ns(lambda xp: xp.arange(*args), text=True)
