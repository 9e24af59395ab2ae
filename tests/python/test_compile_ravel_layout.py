"""hop.compile's ravel of an array whose C-contiguity is known only per
call (symbolic sizes of an array the function computed): NumPy copies a
non-C-contiguous one, so a write through the result must not reach it."""
import warnings

import numpy as np

import hop
import hop.numpy  # noqa: F401


def f(a):
    s = np.sort(a, 0)
    return s, np.ravel(s[:, 1])


def test_ravel_of_a_computed_strided_view_with_symbolic_sizes_is_a_copy():
    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for shape in [(3, 4), (5, 6), (4, 8), (6, 2)]:
            a = np.arange(np.prod(shape), dtype=float).reshape(shape)[::-1]
            ws, wr = f(a.copy())
            gs, gr = cf(a.copy())
            assert gr.strides == wr.strides == (8,)
            assert not np.shares_memory(gs, gr)
            gr[0] = -7.0
            wr[0] = -7.0
            np.testing.assert_array_equal(gs, ws)
            np.testing.assert_array_equal(gr, wr)
