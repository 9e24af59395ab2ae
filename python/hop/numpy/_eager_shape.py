"""The eager fast path of hop.numpy's shape functions: `a.reshape(4, 4)`,
`np.reshape(a, s)`, basic indexing (`a[2:5]`, `a[1, None, ...]`),
`np.concatenate` and `np.where(c, x, y)` on concrete hop.numpy arrays
outside any trace.

Their general paths (_funcs.reshape, _indexing.getitem, _funcs.concatenate,
_funcs.where) serve every caller: traced arrays and runs' views, NumPy
scalars, views hop made as copies (a[::-1]), symbolic sizes, every kind of
index and operand; that is 80-160 Python calls of bookkeeping per call,
30-100x NumPy's time on a small array.  Here each function takes only the
common eager case, where most of that bookkeeping decides nothing, and does
what the general path does in that case, by the same hop calls:
- the array is exactly hop.numpy.ndarray (not NumpyArg), not a NumPy
  scalar, not a view of a run's storage (_st) nor a view hop made as a copy
  (_cp), and its tensor is concrete;
- no trace, no run of hop.numpy's, no recording of a path (_gates_open);
- reshape: order 'C', a shape of plain ints (at most one -1), an array
  C-contiguous with no dim of size 1 nor 0 (so its strides are NumPy's C
  strides, and hop's reshape of it is a view with NumPy's strides on the
  new dims of size 1 too: _funcs._numpy_strides would change nothing);
- indexing: ints, slices of plain ints with no negative step, None and
  Ellipsis (no array, no bool, no NumPy integer), every int in range and
  every slice taking elements;
- concatenate: a list or tuple of C-contiguous arrays of one dtype and
  one or more dims, an int axis in range or None, no out, dtype or casting;
- where: a condition array, and x and y each an array of one or more dims
  or a Python bool, int or float (not both scalars), every array
  C-contiguous (then NumPy's K order is C: _ufuncs.memory_order), the
  result dtype the general path's own decision, kept per operand key as the
  ufuncs' fast path keeps its plans (_eager).
Anything else returns None, and the caller's general path answers (its
errors included: an index out of range, a bad shape, arrays that do not
join).  fast(False) turns the fast path off (the tests compare both).
"""

from .. import _C
from . import _core
from ._ndarray import ndarray

__all__ = ["reshape", "getitem", "concatenate", "where"]

FAST = True  # False: every call takes the general path (fast(False))


def fast(on):
    """Turns the fast path on or off (the tests compare the general path's
    answers); the old setting."""
    global FAST
    old = FAST
    FAST = bool(on)
    _C._np_eager_shape_fast(on)
    return old

_new = _C._np_eager_array  # a new ndarray over a tensor, as __init__ outside a run
_off = _C._np_eager_off
_tracing = _C.tracing
_is_proxy = _C._is_proxy


def _array_tensor(a):
    """The concrete tensor of a when the fast path takes a, else None."""
    if type(a) is not ndarray or a._st is not None or a._cp is not None or a._scalar:
        return None
    t = a._tv
    return None if _is_proxy(t) else t


def _gates_open():
    return FAST and not _off(0) and _tracing() is None


# reshape(a, newshape) (order 'C') and getitem(a, key) (a basic key) by the
# fast path, or None: C (python/_C/np_eager.c, fast_reshape and fast_getitem),
# one view header over a's storage made as the general path's hop ops make
# it, without their dispatch (hop's own reshape or slice is ~1.5 us); the
# ndarray methods a.reshape(...) and a[key] are C descriptors that try them
# first (_C._np_eager_method "reshape", "getitem")
reshape = _C._np_eager_reshape
getitem = _C._np_eager_getitem


# concatenate(arrays, axis=0) by the fast path, or None: C too
# (np_eager.c fast_concatenate: the new tensor _C.cat makes, filled with one
# copy per array and outer index)
concatenate = _C._np_eager_concatenate


# (x key, y key) -> (result NumPy dtype, its hop dtype) or None (the general
# path's); a key is _key's
_WHERE = {}


def _key(v):
    """v's key for where's result dtype (as _eager's for a ufunc: what NumPy
    1.24's dtype resolution reads of it), or None when the fast path does not
    take v: a C-contiguous array of one or more dims, its dtype; a Python
    bool, its type; an int, its sign and bit length; a float, its class."""
    tv = type(v)
    if tv is ndarray:
        t = _array_tensor(v)
        if t is None or t.ndim == 0 or not t.is_contiguous():
            return None
        return t.dtype
    if tv is bool:
        return bool
    if tv is int:
        if not -2**63 <= v < 2**63:
            return None
        return v.bit_length() if v >= 0 else -1 - (~v).bit_length()
    if tv is float:
        if -65000.0 < v < 65000.0 or v != v or v in (float("inf"), float("-inf")):
            return "e"
        return "f" if -3.4e38 < v < 3.4e38 else "d"
    return None


def _where_plan(x, y):
    """The general path's result dtype of where(c, x, y) for operands like x
    and y (_funcs.where), or None where the fast path does not take them:
    a scalar the op would convert first (_core.as_compute), an error."""
    import numpy as np
    try:
        ops = [_core.operand(x, "where"), _core.operand(y, "where")]
        dt = _core.result_dtypes(lambda a, b: np.where(np.empty(0, bool), a, b), ops,
                                 "where")[0]
        for o in ops:
            if o.t is None and _core.as_compute(o, dt) is not o.value:
                return None
        return dt, _core.hop_dtype(dt, "where")
    except Exception:  # noqa: BLE001 - the general path raises it
        return None


_MISS = object()


def where(condition, x, y):
    """np.where(condition, x, y) by the fast path, or None."""
    c = _array_tensor(condition)
    if c is None or not _gates_open() or not c.is_contiguous():
        return None
    kx, ky = _key(x), _key(y)
    if kx is None or ky is None or (type(x) is not ndarray and type(y) is not ndarray):
        return None
    k = (kx, ky)
    plan = _WHERE.get(k, _MISS)
    if plan is _MISS:
        plan = _WHERE[k] = _where_plan(x, y)
    if plan is None:
        return None
    dt, hdt = plan
    if c.dtype is not _C.bool:
        c = _C.ne(c, 0)
    vals = []
    for v in (x, y):
        if type(v) is ndarray:
            v = v._tv
            if v.dtype is not hdt:
                v = _core.cast(v, dt)
        vals.append(v)
    try:
        r = _C.where(c, vals[0], vals[1])
    except _C.ShapeError:
        return None  # (operands that do not broadcast: the general path's ValueError)
    if r.dtype is not hdt:
        r = _core.cast(r, dt)
    return _new(r)
