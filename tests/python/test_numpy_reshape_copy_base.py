"""A reshape NumPy makes by copying (`a.T.reshape(4)`, `a[:, ::-1].reshape(-1)`,
`np.reshape(a.T, (2, 2))`) copies the array in its own shape, in C order
(PyArray_Newshape's PyArray_NewCopy), and returns a view of that copy: the
result's `.base` is the copy (shape and strides of a C-ordered array of the
source's shape, owning its memory) and the result owns nothing.  hop.numpy
gave such a result no base and `owndata` True, eagerly and compiled (the
forty-third session's port of test_numeric.py; fixed in the forty-fifth):
now `_funcs._copy_as_base` eagerly, and traced a new array in the source's
shape whose reshape view is the result.  A write through the result shows
in its base and the other way, as NumPy's."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp


def _describe(r):
    """What the caller can tell of a result (by NumPy's view of a hop.numpy
    array's memory, its flags by hop.numpy's own)."""
    if isinstance(r, tuple):
        return tuple(_describe(x) for x in r)
    if isinstance(r, (np.ndarray, hnp.ndarray)):
        x = np.asarray(r)
        return ("array", x.tolist(), x.dtype.str, x.shape, x.strides)
    return r


PROGRAMS = {
    "base": lambda a: a.T.reshape(4).base,
    "base facts": lambda a: (a.T.reshape(4).base is None, a.T.reshape(4).flags.owndata,
                             a.T.reshape(4).base.flags.owndata,
                             a.T.reshape(4).base.base is None,
                             a.T.reshape(4).base.flags.c_contiguous),
    "function": lambda a: (np.reshape(a.T, (2, 2)).base is None,
                           np.reshape(a.T, (2, 2)).base.shape),
    "reversed": lambda a: (a[:, ::-1].reshape(-1).base.shape,
                           a[:, ::-1].reshape(-1).base.strides),
    "stepped": lambda a: a[:, ::2].reshape(-1).base,
}


def _write_result(a):
    r = a.T.reshape(4)
    r[0] = 100.0
    return r.base


def _write_base(a):
    r = a.T.reshape(4)
    b = r.base
    b[0, 1] = -5.0
    return r


def _add_to_result(a):
    r = a.T.reshape(4)
    r += 1.0
    return r, r.base


PROGRAMS.update({"write the result": _write_result, "write the base": _write_base,
                 "in place": _add_to_result})


@pytest.mark.parametrize("mode", ["eager", "compiled"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_copying_reshape_has_the_copy_as_its_base_as_numpys(name, mode):
    fn = PROGRAMS[name]
    x = np.arange(8.0).reshape(2, 4) if name == "stepped" else np.arange(4.0).reshape(2, 2)
    want = _describe(fn(x.copy()))
    if mode == "eager":
        assert _describe(fn(hnp.asarray(x.copy()))) == want
        return
    cf = hop.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(2):
            assert _describe(cf(x.copy())) == want


def test_an_eager_copying_reshape_of_a_reversed_view_has_its_base():
    # (hop.numpy's reversed view is a copy itself, _reshape_copy_view)
    a = hnp.asarray(np.arange(6.0).reshape(2, 3))
    r = a[:, ::-1].reshape(6)
    assert r.base is not None and not r.flags.owndata and r.base.flags.owndata
    assert r.base.shape == (2, 3) and np.asarray(r.base).tolist() == [[2.0, 1.0, 0.0],
                                                                      [5.0, 4.0, 3.0]]
    r[0] = -1.0
    assert np.asarray(r.base)[0, 0] == -1.0 and np.asarray(a)[0, 2] == 2.0


def test_a_viewing_reshape_keeps_its_base_and_a_contiguous_one_the_array():
    a = hnp.asarray(np.arange(6.0))
    assert a.reshape(2, 3).base is a and a.reshape(2, 3).reshape(6).base is a
    assert a.reshape(3, 2).T.reshape(6).base.shape == (2, 3)
