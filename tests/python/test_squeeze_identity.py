"""np.squeeze / ndarray.squeeze() of an array without a size-1 axis is
that array itself (NumPy's PyArray_Squeeze; axis=() too), eagerly, traced and compiled:
`c = a.copy(); return c, np.squeeze(c)` returns c twice."""
import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp


def pair(a):
    c = a.copy()
    return c, np.squeeze(c)


def same(a):
    return np.squeeze(a) is a, a.squeeze() is a


@pytest.mark.parametrize("shape", [(2, 3), (1, 3)])
def test_squeeze_without_size_one_axes_is_the_array_itself(shape):
    a = np.arange(np.prod(shape), dtype=float).reshape(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = pair(a)
        for _ in range(3):
            got = hop.compile(pair)(a.copy())
            assert (got[0] is got[1]) == (want[0] is want[1]) == (shape == (2, 3))
            np.testing.assert_array_equal(got[1], want[1])
        assert hop.compile(same)(a.copy()) == same(a) == ((shape == (2, 3)),) * 2
        assert same(hnp.asarray(a)) == same(a)
    # no axis asked for is the array too; one is a new view
    h = hnp.asarray(a)
    assert np.squeeze(a, axis=()) is a and hnp.squeeze(h, axis=()) is h
    if shape == (1, 3):
        assert np.squeeze(a, 0) is not a and hnp.squeeze(h, 0) is not h
