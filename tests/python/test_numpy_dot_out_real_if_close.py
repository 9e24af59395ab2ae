"""Two first-rule gaps a lead's probe of everyday NumPy found (issue #29):
np.dot(..., out=) wrote any out it could broadcast into, where NumPy takes
only an out of the result's exact dtype, number of dimensions and shape,
C-contiguous and writeable (and returns a 0-d out as its scalar); and
np.real_if_close returned its argument unchanged (a stub), where NumPy gives
the real part when every imaginary part is under tol epsilons.  Each case
runs by NumPy, eagerly on hop.numpy arrays and compiled."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from test_numpy_operand_campaign import _as_numpy

A = np.arange(6.0).reshape(2, 3)
V = np.arange(3.0)
NOT_ACCEPTABLE = ("output array is not acceptable (must have the right datatype, number of "
                  "dimensions, and be a C-Array)")


def _run(f):
    try:
        r = _as_numpy(f())
    except Exception as e:  # noqa: BLE001 (NumPy's error is the answer)
        return type(e), str(e)
    return type(r).__name__.replace("ndarray", "array"), np.asarray(r).tolist()


@pytest.mark.parametrize("x,y,make,error", [
    (A, A.T, lambda: np.ones((2, 2)), None),
    (A, A.T, lambda: np.ones((2, 2), np.float32), NOT_ACCEPTABLE),
    (A, A.T, lambda: np.ones((2, 3)), "output array has wrong dimensions"),
    (A, A.T, lambda: np.ones(4), NOT_ACCEPTABLE),
    (A, A.T, lambda: np.ones((2, 2, 1)), NOT_ACCEPTABLE),
    (A, A.T, lambda: np.ones((2, 4))[:, ::2], NOT_ACCEPTABLE),
    (A, A.T, lambda: np.ones((2, 2), order="F"), NOT_ACCEPTABLE),
    (A, A.T, lambda: np.ones((1, 2)), "output array has wrong dimensions"),
    (V, V, lambda: np.ones(()), None),
    (V, V, lambda: np.ones(1), NOT_ACCEPTABLE),
    (2.0, V, lambda: np.ones(3), None),
    (2.0, V, lambda: np.ones(3, np.float32), NOT_ACCEPTABLE),
    (np.arange(3), np.arange(3), lambda: np.ones((), np.int64), None),
    (A, V, lambda: np.ones(2), None),
])
def test_dot_out_is_numpys(x, y, make, error):
    o = make()
    want = _run(lambda: np.dot(x, y, out=o)) + (o.tolist(),)
    if error is not None:
        assert want[:2] == (ValueError, error)
    oc = make()
    got = _run(lambda: hop.compile(lambda p, q, r: np.dot(p, q, out=r))(x, y, oc))
    assert got + (oc.tolist(),) == want
    if make().flags.c_contiguous:  # (hop.numpy's asarray of it is C-ordered)
        oh = hnp.asarray(make())
        hx = hnp.asarray(x) if isinstance(x, np.ndarray) else x
        got = _run(lambda: np.dot(hx, hnp.asarray(y), out=oh))
        assert got + (np.asarray(oh).tolist(),) == want


@pytest.mark.parametrize("x,tol", [
    (np.arange(3.0) + 1e-20j, 100), (np.arange(3.0) + 1e-10j, 100), (np.arange(3.0) + 1e-10j, 1e-9),
    (np.arange(3.0), 100), (np.array([1 + 1e-6j], np.complex64), 100),
    (np.array([1 + 1e-5j], np.complex64), 1000), (np.array(2 + 0j), 100), (np.array([1, 2]), 5),
])
def test_real_if_close_is_numpys(x, tol):
    want = np.real_if_close(x, tol=tol)
    for got in (hop.compile(lambda a: np.real_if_close(a, tol=tol))(x),
                np.real_if_close(hnp.asarray(x), tol=tol)):
        g = np.asarray(got)
        assert (g.dtype, g.shape, g.tolist()) == (want.dtype, want.shape, want.tolist())
    assert np.shares_memory(hop.compile(lambda a: np.real_if_close(a, tol=tol))(x), x) == \
        np.shares_memory(want, x)
