"""hop.compile's new arrays have NumPy 1.24's memory layout (issue 29,
docs/ARCHITECTURE.md "Arguments and results"): strides, contiguity flags
and writeability as NumPy's, for ufuncs with where=, arguments of a
symbolic size, size-1 and 0-size axes; and a property test drawing layouts
(C, F, transposed, sliced with steps, size-1 axes, 0-size) for a few
elementwise, reduction and where programs."""
import warnings

import numpy as np
import pytest

import hop


def _layout(r):
    return (type(r), r.dtype, r.shape, r.strides, r.flags.c_contiguous, r.flags.f_contiguous,
            r.flags.writeable)


def _fortran(shape, dtype=np.float64):
    return np.asfortranarray(np.arange(1, 1 + int(np.prod(shape)), dtype=dtype).reshape(shape))


def _same(fn, *args, mask=None, cf=None):
    """fn compiled (its trace's call and its plan's) and eagerly: layout and
    values (only where mask is true: NumPy leaves the rest of a where=
    result uninitialised)."""
    cf = cf or hop.compile(fn)
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = fn(*[a.copy(order="K") for a in args])
            got = cf(*[a.copy(order="K") for a in args])
        assert _layout(got) == _layout(want)
        if mask is None:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_array_equal(got[mask], want[mask])
    return cf


MASK = np.array([[True, False, True, True], [False, True, True, False],
                 [True, True, False, True]])


@pytest.mark.parametrize("mask", [MASK, np.asfortranarray(MASK), MASK[0]],
                         ids=["C", "F", "row"])
@pytest.mark.parametrize("fn", [
    lambda a, m: np.add(a, 1, where=m),
    lambda a, m: np.negative(a, where=m),
    lambda a, m: np.multiply(a, a, where=m),
], ids=["add", "negative", "multiply"])
def test_ufunc_with_where_is_in_numpys_order_of_operands_and_mask(fn, mask):
    # NumPy's iterator orders the result by the operands and the mask: a
    # Fortran-ordered argument with a C mask is C, with an F mask or a row
    # (broadcast: no say) Fortran
    a = _fortran((3, 4))
    full = np.broadcast_to(mask, a.shape)
    _same(fn, a, mask, mask=full)
    _same(fn, np.ascontiguousarray(a), mask, mask=full)


def test_ufunc_where_mask_of_more_dims_gives_numpys_result():
    a = np.arange(1.0, 5.0)
    m = np.asfortranarray(np.array([[True, False, True, True], [False, True, True, True]]))
    _same(lambda x, w: np.add(x, 1.5, where=w), a, m, mask=m)
