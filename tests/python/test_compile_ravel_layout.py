"""hop.compile's ravel of an array whose C-contiguity is known only per
call (symbolic sizes of an array the function computed): NumPy copies a
non-C-contiguous one, so a write through the result must not reach it."""
import warnings

import numpy as np
import pytest

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


LAYOUTS = {
    "C": lambda: np.arange(12.0).reshape(3, 4),
    "F": lambda: np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    "strided": lambda: np.arange(24.0).reshape(3, 8)[:, ::2],
    "transposed": lambda: np.arange(12.0).reshape(4, 3).T,
    "column": lambda: np.arange(24.0).reshape(3, 8)[:, 1],
}


@pytest.mark.parametrize("order", ["A", "C", "F"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_ravel_in_an_order_views_exactly_when_numpys_does(order, layout):
    # 'A' is 'F' for an array in Fortran order (hop raveled it in C order),
    # and ravel copies an array not contiguous in the order asked
    a = LAYOUTS[layout]()
    want = np.ravel(a, order=order)
    h = hop.numpy.asarray(a)
    for got, base in ((np.asarray(hop.numpy.ravel(h, order=order)), h),
                      (hop.compile(lambda x: np.ravel(x, order=order))(a), a)):
        np.testing.assert_array_equal(got, want)
        assert got.strides == want.strides
        assert np.shares_memory(got, np.asarray(base)) == np.shares_memory(want, a)
