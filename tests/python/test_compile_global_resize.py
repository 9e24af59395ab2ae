"""ndarray.resize of an array a module global holds, with hop.compile
(issue 29, item 4).  hop's guard of a global ndarray held a weak reference
to it, and NumPy refuses to resize an array that has one ("cannot resize an
array that references or is referenced by another array"), even with
refcheck=False: after a compiled function read G, `G.resize(n,
refcheck=False)` raised, outside compiled code too, and a compiled function
that resized G raised where eager returns.  The guard holds an ndarray
strongly now (the plan's captured tensor holds it anyway); after a resize
the compiled function sees the new memory (its layout guard retraces)."""

import numpy as np
import pytest

import hop

G = np.arange(4.0)


@pytest.fixture(autouse=True)
def _fresh_global():
    global G
    G = np.arange(4.0)
    yield
    G = np.arange(4.0)


def reads(x):
    return G.sum() + x[0]


def resizes(x):
    y = G * 2
    G.resize(8, refcheck=False)
    return y + G[:4] + x[0]


def test_resize_after_a_compiled_read_is_numpys():
    f = hop.compile(reads)
    x = np.ones(2)
    assert f(x) == reads(x) == 7.0
    G.resize(8, refcheck=False)  # (raised ValueError before)
    assert G.tolist() == [0.0, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0]
    assert f(x) == reads(x) == 7.0
    G[:] = 1.0
    assert f(x) == reads(x) == 9.0


def test_compiled_resize_of_a_global_is_eagers():
    global G
    x = np.ones(2)
    want, want_g = resizes(x), G.copy()
    G = np.arange(4.0)
    got = hop.compile(resizes)(x)  # (raised ValueError before)
    assert got.tolist() == want.tolist() == [1.0, 4.0, 7.0, 10.0]
    assert G.tolist() == want_g.tolist() and G.shape == (8,)


def test_guard_of_a_global_ndarray_keeps_no_weak_reference():
    import weakref
    f = hop.compile(reads)
    f(np.ones(2))
    assert weakref.getweakrefcount(G) == 0
