"""NumPy's index tricks (numpy.lib.index_tricks) on hop arrays: mgrid,
ogrid, r_ and c_, with NumPy 1.24's semantics (index_exp and s_ are
NumPy's own objects, which make keys, not arrays).

hop.numpy's objects are instances of subclasses of NumPy's classes
(isinstance(hnp.r_, np.lib.index_tricks.RClass)).  What a key holds
decides how the result is made:

  - no hop value in it (numbers, NumPy arrays, lists of them, slices of
    constant bounds): NumPy's own object computes the result, which is a
    constant (np.mgrid[0:3, 0:1:5j], np.r_[1:4, 0, [7, 8]]), as a hop.numpy
    array;
  - a hop array, tensor or SymInt in it: r_ and c_ follow NumPy's
    AxisConcatenator step for step with hop.numpy's array, astype and
    concatenate, so traced parts are concatenated in the trace
    (np.r_[x, 0, y]); a slice there is NumPy's arange or linspace of its
    bounds (a constant; hop's arange of a SymInt bound);
  - a slice bound that is a traced value (a traced hop.numpy scalar or
    array; for mgrid and ogrid a SymInt too) would make the sizes depend on
    the data: _breaks.conversion with an UnsupportedError naming it (a
    graph break of hop.compile, where NumPy computes the statement on the
    real values; hop.trace's UnsupportedError).

The matrix directives ('r', 'c') and the string form np.r_['a, b'] make
NumPy's np.matrix, which hop lacks: NumPy's own result, and with a traced
part the same conversion.

While a trace runs, numpy.mgrid, ogrid, r_ and c_ are the _Traced forms
(_creation swaps them in, as it does the creation functions): their
results are the arrays NumPy code gets (NumpyArg, returned as np.ndarray),
and a constant result made for the user's code is held by hop as a
creation function's is (_creation.held), so that writes of traced values
into it are traced.
"""

import sys

import numpy as _np
from numpy.lib import index_tricks as _it

from .. import _C, _breaks
from ._ndarray import ndarray

__all__ = ["mgrid", "ogrid", "r_", "c_", "nditer"]

_NUMPYS_NDITER = _np.nditer


def _has_hop(key):
    """Whether a hop.numpy array, a hop tensor or a SymInt is in key (in
    slices, lists and tuples too)."""
    if isinstance(key, (ndarray, _C.Tensor, _C.SymInt)):
        return True
    if isinstance(key, slice):
        return _has_hop((key.start, key.stop, key.step))
    if isinstance(key, (list, tuple)):
        return any(_has_hop(v) for v in key)
    return False


def _traced_text(v):
    if isinstance(v, _C.SymInt):
        return "a symbolic size"
    from ._core import np_dtype
    t = v._t if isinstance(v, ndarray) else v
    return f"a traced {np_dtype(t)} value of shape {tuple(t.shape)}"


def _bound(v, where, symint_ok):
    """Slice bound v as NumPy reads it: a Python number or NumPy value
    (a concrete hop.numpy scalar is its NumPy scalar, a concrete array its
    ndarray); a SymInt as it is when symint_ok; a traced value is the
    conversion that ends hop.compile's compiled part (UnsupportedError)."""
    if isinstance(v, _C.SymInt):
        if symint_ok:
            return v
    elif isinstance(v, ndarray):
        if v._fixed():
            return v._t.numpy()[()] if v._scalar else v._t.numpy()
    elif isinstance(v, _C.Tensor):
        if not _C._is_proxy(v):
            return v.numpy()
    else:
        return v
    _breaks.conversion(_C.UnsupportedError,
                       f"hop.numpy: {where} is {_traced_text(v)}; the size of "
                       f"the result would depend on the data, which hop does not trace (give "
                       f"the bound as a Python number)")
    return v  # (not reached)


def _plain_slice(s, what, symint_ok=False):
    """Slice s with its bounds read by _bound."""
    return slice(*(_bound(v, f"the {part} of a slice in {what}", symint_ok)
                   for v, part in ((s.start, "start"), (s.stop, "stop"), (s.step, "step"))))


def _const(r, kind):
    """NumPy's result r (an ndarray, a list of them) as hop.numpy arrays of
    kind; NumPy's matrix as it is (hop has none)."""
    if isinstance(r, list):
        return [_const(x, kind) for x in r]
    if isinstance(r, _np.matrix) or not isinstance(r, _np.ndarray):
        return r
    return kind(_C.asarray(_np.array(r, order="C")))


# ---------------------------------------------------------------- grids

def _grid_key(key, what):
    """key with the bounds of its slices read by _bound (NumPy's nd_grid
    reads a non-slice item's attributes and raises its own error)."""
    if isinstance(key, slice):
        return _plain_slice(key, what)
    if isinstance(key, (tuple, list)):
        items = [_plain_slice(k, what) if isinstance(k, slice) else k for k in key]
        return tuple(items) if isinstance(key, tuple) else items
    return key


class _Grid:
    """mgrid's and ogrid's __getitem__: NumPy's own nd_grid on the key's
    bounds (constants), its arrays as hop.numpy arrays."""

    _traced = False

    def __getitem__(self, key):
        name = "numpy.mgrid" if not self.sparse else "numpy.ogrid"
        plain = _grid_key(key, f"{name}[...]") if _has_hop(key) else key
        r = _it.nd_grid.__getitem__(self, plain)
        return _result(self, r)


class MGridClass(_Grid, _it.MGridClass):
    __doc__ = _it.MGridClass.__doc__


class OGridClass(_Grid, _it.OGridClass):
    __doc__ = _it.OGridClass.__doc__


def _result(obj, r, frame_depth=3):
    """NumPy's constant result r for obj (hop.numpy's object: hop.numpy
    arrays; a _Traced one: NumPy's arrays, held by hop when the user's code
    made them)."""
    if not obj._traced:
        return _const(r, ndarray)
    from . import _creation
    if not isinstance(r, _np.matrix) and _creation.users_subscript(frame_depth):
        return _creation.held(r)
    return r


# -------------------------------------------------------- concatenators

def _directive(item, state):
    """NumPy's special directive item (the key's first entry) applied to
    state [axis, ndmin, trans1d, matrix, col]."""
    if item in ("r", "c"):
        state[3] = True
        state[4] = item == "c"
        return
    if "," in item:
        vec = item.split(",")
        try:
            state[0], state[1] = [int(x) for x in vec[:2]]
            if len(vec) == 3:
                state[2] = int(vec[2])
            return
        except Exception as e:
            raise ValueError("unknown special directive {!r}".format(item)) from e
    try:
        state[0] = int(item)
    except (ValueError, TypeError) as e:
        raise ValueError("unknown special directive") from e


def _slice_array(item, ndmin, trans1d, what):
    """An r_ slice: NumPy's arange(start, stop, step), or linspace of
    int(abs(step)) points for a complex step, of its bounds (a constant;
    hop's arange or linspace when a bound is a SymInt)."""
    from ._funcs import array, swapaxes, PUBLIC
    s = _plain_slice(item, what, symint_ok=True)
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    symbolic = any(isinstance(v, _C.SymInt) for v in (start, s.stop, step))
    if isinstance(step, (_np.complexfloating, complex)):
        size = int(abs(step))
        newobj = PUBLIC["linspace"](start, s.stop, num=size) if symbolic else \
            _const(_np.linspace(start, s.stop, num=size), ndarray)
    else:
        newobj = PUBLIC["arange"](start, s.stop, step) if symbolic else \
            _const(_np.arange(start, s.stop, step), ndarray)
    if ndmin > 1:
        newobj = array(newobj, copy=False, ndmin=ndmin)
        if trans1d != -1:
            newobj = swapaxes(newobj, -1, trans1d)
    return newobj


def _concatenate(obj, key, what):
    """NumPy 1.24's AxisConcatenator.__getitem__ of a key holding hop
    values, with hop.numpy's array, astype and concatenate: a hop.numpy
    array (NumPy's matrix for the matrix directives, of a concrete key)."""
    from ._funcs import array, concatenate, transpose
    if not isinstance(key, tuple):
        key = (key,)
    # [axis, ndmin, trans1d, matrix, col]: the object's, which a directive
    # (the first entry) overrides
    state = [obj.axis, obj.ndmin, obj.trans1d, obj.matrix, False]
    objs, scalars, arraytypes, scalartypes = [], [], [], []
    for k, item in enumerate(key):
        axis, ndmin, trans1d = state[:3]
        scalar = False
        if isinstance(item, slice):
            newobj = _slice_array(item, ndmin, trans1d, what)
        elif isinstance(item, str):
            if k != 0:
                raise ValueError("special directives must be the first entry.")
            _directive(item, state)
            continue
        elif type(item) in _np.ScalarType or isinstance(item, ndarray) and item._scalar:
            newobj = array(item, ndmin=ndmin)
            scalars.append(len(objs))
            scalar = True
            scalartypes.append(newobj.dtype)
        else:
            newobj = array(item, copy=False)
            item_ndim = newobj.ndim
            newobj = array(newobj, copy=False, ndmin=ndmin)
            if trans1d != -1 and item_ndim < ndmin:
                k2 = ndmin - item_ndim
                k1 = trans1d
                if k1 < 0:
                    k1 += k2 + 1
                defaxes = list(range(ndmin))
                axes = defaxes[:k1] + defaxes[k2:] + defaxes[k1:k2]
                newobj = transpose(newobj, axes)
        objs.append(newobj)
        if not scalar:
            arraytypes.append(newobj.dtype)
    # scalars do not up-cast unless warranted (NumPy's find_common_type)
    final_dtype = _np.find_common_type(arraytypes, scalartypes)
    if final_dtype is not None:
        for k in scalars:
            objs[k] = objs[k].astype(final_dtype)
    res = concatenate(tuple(objs), axis=state[0])
    if state[3]:
        if not res._fixed():
            _breaks.conversion(_C.UnsupportedError,
                               f"hop.numpy: {what} with the matrix directive 'r' or 'c' makes "
                               f"an np.matrix, which hop lacks, of traced values")
        oldndim = res.ndim
        res = _np.matrix(res._t.numpy())
        if oldndim == 1 and state[4]:
            res = res.T
    return res


class _Concatenator:
    """r_'s and c_'s __getitem__ (see the module's text)."""

    _traced = False

    def __getitem__(self, key):
        what = f"numpy.{'r_' if self.axis == 0 else 'c_'}[...]"
        if isinstance(key, str):
            # NumPy's matrix builder: names of the caller's frame
            frame = sys._getframe(1)
            return _np.bmat(key, frame.f_globals, frame.f_locals)
        if not _has_hop(key):
            return _result(self, _it.AxisConcatenator.__getitem__(self, key))
        r = _concatenate(self, key, what)
        if self._traced and isinstance(r, ndarray):
            from ._creation import _as_numpys
            return _as_numpys(r)
        return r


class RClass(_Concatenator, _it.RClass):
    __doc__ = _it.RClass.__doc__


class CClass(_Concatenator, _it.CClass):
    __doc__ = _it.CClass.__doc__


mgrid = MGridClass()
ogrid = OGridClass()
r_ = RClass()
c_ = CClass()


class _NditerType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _NUMPYS_NDITER)


class nditer(metaclass=_NditerType):
    """NumPy's nditer (its own iterator, over the memory of hop.numpy
    arrays, whose readwrite operands write it), with hop.numpy operands
    made NumPy arrays first: NumPy 1.24's nditer of several operands
    crashes the process (a segfault) when converting one raises, as a
    traced array's conversion does (the break that runs the statement in
    NumPy, hop.trace's error).  numpy.nditer while a trace runs
    (_creation); isinstance(it, nditer) holds for NumPy's iterators."""

    def __new__(cls, op, *args, **kwargs):
        if isinstance(op, ndarray):
            op = _np.asarray(op)
        elif isinstance(op, (list, tuple)):
            op = type(op)(_np.asarray(o) if isinstance(o, ndarray) else o for o in op)
        return _NUMPYS_NDITER(op, *args, **kwargs)


nditer.__doc__ = _NUMPYS_NDITER.__doc__


def traced_objects():
    """name -> the object numpy.<name> is while a trace runs (_creation):
    its results are NumPy code's arrays (numpy.nditer: hop.numpy's)."""
    out = {"nditer": nditer}
    for name, cls in (("mgrid", MGridClass), ("ogrid", OGridClass), ("r_", RClass),
                      ("c_", CClass)):
        o = cls()
        o._traced = True
        out[name] = o
    return out
