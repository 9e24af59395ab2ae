"""NumPy's indexing routines on hop arrays (the functions; x[key] is
_indexing's): take_along_axis, choose, compress, extract, select,
piecewise, ravel_multi_index, unravel_index and ix_, and those that write
in place: put, place, putmask, copyto, fill_diagonal, put_along_axis and
ufunc.at, with NumPy 1.24's semantics.

The writes write as NumPy's do, also through a traced argument (_storage).
Index arrays NumPy computes from concrete coordinates are NumPy's; traced
coordinates out of range raise when the program runs.
"""

import builtins
import operator

import numpy as _np

from .. import _C, _breaks
from . import _core, _storage
from ._funcs import _axis, _axis_index, _has_hop, _kind_of, _size, _t, implements, ravel
from ._indexing import _plain_items
from ._lib import _arr, broadcast_shapes
from ._ndarray import ndarray, result_kind, wrap

__all__ = []


# ------------------------------------------------------ writes in place

def _flat_write(a, pos, values, what):
    """a.flat[pos] = values with NumPy's flat assignment: values cast to a's
    dtype and repeated (cyclically) as often as pos needs."""
    a = _require_array(a, what)
    _core.python_ints_warn(values, a.dtype, what)
    v = _core.cast(_t(values, what), a.dtype).reshape(-1)
    count = pos.shape[0]
    nv = v.shape[0]
    if isinstance(nv, int) and nv == 0:
        return
    if not (isinstance(count, int) and isinstance(nv, int) and nv >= count):
        v = _C._op("take", v, 0, _C.arange(count) % nv)
    elif nv > count:
        v = v.slice(0, 0, count, 1)
    _write_flat(a, pos, v, what)


def _write_flat(a, pos, v, what):
    """Writes v at the flat (C order) positions pos of a."""
    def select(p):
        return _C._op("take", p.reshape(-1), 0, pos)
    _storage_write_select(a, select, v, what)


def _storage_write_select(a, select, v, what):
    run = _storage.current()
    if run is None and not _C._is_proxy(a._tv):
        if a._ro:
            raise _storage.read_only_error(what)
        flat_pos = select(_C.arange(_size(a._tv.shape)).reshape(tuple(a._tv.shape)))

        def store():
            a._tv.numpy().flat[flat_pos.numpy()] = v.numpy()
        _storage.eager_write(a, store)
        return
    _storage.write(a, run, None, v, what, select=select)


def _numpy_writes(dst, *operands):
    """Whether NumPy itself makes this write: eagerly, into a plain
    np.ndarray (NumPy's function reached by its dispatch on a hop.numpy
    operand, or hop.numpy's called on NumPy's arrays), on NumPy's views of
    the operands' memory (_ufuncs.fallback).  hop's tensor of such an array
    is a copy where its memory has a negative stride, another byte order or
    no alignment, or is read-only, and a write into that copy was lost
    (np.copyto(a[::-1], G) left a as it was); NumPy's own write is NumPy's
    in every case, its errors, warnings and overlaps too."""
    if not isinstance(dst, _np.ndarray) or _core.tracing():
        return False
    from ._ufuncs import _traced_any
    return not _traced_any(operands)


def _by_numpy(func, args, kwargs=None):
    """func (NumPy's writer, _numpy_writes) run by NumPy; None, its answer."""
    from ._ufuncs import fallback
    fallback(func, func.__name__, args, kwargs or {}, None)


def _require_array(a, what):
    if isinstance(a, ndarray) and a._scalar:
        raise TypeError(f"{what}() argument 1 must be numpy.ndarray, not "
                        f"numpy.{a.dtype.type.__name__}")
    if isinstance(a, ndarray):
        return a
    if isinstance(a, _np.ndarray):
        if _core.tracing():
            raise _C.UnsupportedError(
                f"hop.numpy: {what} writes an np.ndarray made outside the traced function (or by "
                f"NumPy itself); hop can write only hop.numpy arrays and the function's "
                f"arguments while tracing")
        return ndarray(_C.asarray(a))
    raise TypeError(f"{what}: the array to write must be an ndarray, got {type(a).__name__}")


@implements(_np.fill_diagonal)
def fill_diagonal(a, val, wrap=False, *, _kind=None):
    if _numpy_writes(a, val):
        return _by_numpy(_np.fill_diagonal, (a, val, wrap))
    t = _t(a, "fill_diagonal")
    if t.ndim < 2:
        raise ValueError("array must be at least 2-d")
    end = None
    if t.ndim == 2:
        step = t.shape[1] + 1
        if not wrap:
            end = t.shape[1] * t.shape[1]
    else:
        if builtins.any(n != t.shape[0] for n in t.shape):
            raise ValueError("All dimensions of input must be of equal length")
        step, p = 1, 1
        for n in t.shape[:-1]:
            p *= n
            step += p
    total = _size(t.shape)
    stop = total if end is None else builtins.min(end, total)
    count = builtins.max(0, (stop + step - 1) // step)
    _flat_write(a, _C.arange(count) * step, val, "fill_diagonal")


@implements(_np.put)
def put(a, ind, v, mode="raise", *, _kind=None):
    if _numpy_writes(a, ind, v):
        return _by_numpy(_np.put, (a, ind, v, mode))
    mode = _clipmode(mode)
    if not isinstance(a, (ndarray, _np.ndarray)):
        raise TypeError(f"argument 1 must be numpy.ndarray, not {type(a).__name__}")
    if isinstance(a, ndarray) and a._scalar:
        a = a._temporary()  # (np.put(s, ...) is s.put: on a new array, s stays)
    i = _t(ind, "put")
    if _core.np_dtype(i).kind not in "iu":
        i = _core.cast(i, _np.dtype(_np.int64))
    i = i.reshape(-1)
    size = _size(_t(a).shape)
    if mode == "clip":  # (NumPy's: a negative index is 0)
        i = _C.minimum(_C.maximum(i, 0), size - 1)
    elif mode == "wrap":
        i = ((i % size) + size) % size
    elif not _C._is_proxy(i) and isinstance(size, int):
        bad = [k for k in i.numpy().tolist() if not -size <= k < size]
        if bad:  # (NumPy's text; traced, the take op's error says it)
            raise IndexError(f"index {bad[0]} is out of bounds for axis 0 with size {size}")
    pos = _C._op("take", _C.arange(size), 0, i)  # checks every index, wraps negative ones
    _flat_write(a, pos, v, "put")


def _safe_values(values, dst, what):
    """NumPy's place and putmask take an array of values only when it casts
    to dst's dtype by the rule 'safe' (a 0-d one by its value, NumPy 1.24's
    value-based casting: np.array(7) into int32 but not into bool), else its
    TypeError; Python numbers, lists and NumPy scalars are cast whatever
    they hold, converted as NumPy converts them (a list of numbers and
    strings item by item, with its errors: a complex into a real dtype is
    "float() argument must be ..."; its warnings, of the values alone, given
    at the user's line and replayed on every compiled call): the values to
    write."""
    if type(values) is complex or isinstance(values, (list, tuple)) and \
            _plain_items(values):
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            values = _np.array(values, dtype=dst)
        for x in w:
            _core.numpy_warns(f"{what} of values NumPy warns of", str(x.message), x.category,
                              replay=True)
        return values
    if not isinstance(values, _np.ndarray) and \
            not (isinstance(values, ndarray) and not values._scalar):
        return values
    vd = _np.dtype(values.dtype)
    if _np.can_cast(vd, dst, "safe"):
        return values
    if values.ndim == 0:
        v = values if isinstance(values, _np.ndarray) else \
            values._numpy_scalar(f"{what}'s casting check")
        if _np.can_cast(v, dst, "safe"):
            return values
        raise TypeError(f"Cannot cast scalar from {vd!r} to {dst!r} according to the rule 'safe'")
    raise TypeError(f"Cannot cast array data from {vd!r} to {dst!r} according to the rule 'safe'")


@implements(_np.place)
def place(arr, mask, vals, *, _kind=None):
    if _numpy_writes(arr, mask, vals):
        return _by_numpy(_np.place, (arr, mask, vals))
    m = _t(mask, "place").reshape(-1)
    if _core.np_dtype(m) != _np.dtype(bool):
        m = _C.ne(m, 0)
    ms, ts = _size(m.shape), _size(_t(arr, "place").shape)
    if isinstance(ms, int) and isinstance(ts, int) and ms != ts:
        raise ValueError("place: mask and data must be the same size")
    vals = _safe_values(vals, _np.dtype(arr.dtype), "place")
    _core.python_ints_warn(vals, arr.dtype, "place")
    pos = m.nonzero().select(1, 0)
    v = _t(vals, "place").reshape(-1)
    _core.complex_cast_warns(_core.np_dtype(v), arr.dtype, "place of complex values")
    if isinstance(v.shape[0], int) and v.shape[0] == 0:
        if _core.decide(_C.any(m, None, False), "place: whether the mask selects anything"):
            raise ValueError("Cannot insert from an empty array!")
        return
    _flat_write(arr, pos, v, "place")


@implements(_np.putmask)
def putmask(a, /, mask, values, *, _kind=None):  # (NumPy's a is positional only)
    if _numpy_writes(a, mask, values):
        return _by_numpy(_np.putmask, (a, mask, values))
    # NumPy's mask is any array of a's size (not broadcast: a scalar mask
    # of a 3-element a is refused), taken in C order
    arr = _require_array(a, "putmask")
    t = _t(arr, "putmask")
    m = _core.cast(_t(mask, "putmask"), _np.dtype(bool))
    ms, ts = _size(m.shape), _size(t.shape)
    if isinstance(ms, int) and isinstance(ts, int) and ms != ts:
        raise ValueError("putmask: mask and data must be the same size")
    values = _safe_values(values, _core.np_dtype(t), "putmask")
    _core.python_ints_warn(values, _core.np_dtype(t), "putmask")
    m = m.reshape(tuple(t.shape)).reshape(-1)
    pos = m.nonzero().select(1, 0)
    v = _t(values, "putmask")
    _core.complex_cast_warns(_core.np_dtype(v), _core.np_dtype(t), "putmask of complex values")
    v = _core.cast(v, _core.np_dtype(t)).reshape(-1)
    # the value for position p is values[p % len(values)]: by position, not count
    vals = _C._op("take", v, 0, pos % v.shape[0])
    _write_flat(arr, pos, vals, "putmask")


@implements(_np.copyto)
def copyto(dst, src, casting="same_kind", where=True, *, _kind=None):
    if _numpy_writes(dst, src, where):
        return _by_numpy(_np.copyto, (dst, src), {"casting": casting, "where": where})
    d = _require_array(dst, "copyto")
    s = _core.operand(src, "copyto")
    if s.t is not None:
        if not _np.can_cast(_core.np_dtype(s.t), d.dtype, casting=casting):
            raise TypeError(f"Cannot cast array data from {_core.np_dtype(s.t)!r} to "
                            f"{d.dtype!r} according to the rule {casting!r}")
        _core.complex_cast_warns(_core.np_dtype(s.t), d.dtype, "copyto of complex values")
        v = _core.cast(s.t, d.dtype)
    else:
        if not _np.can_cast(_np.asarray(s.value), d.dtype, casting=casting):
            raise TypeError(f"Cannot cast scalar from {_np.asarray(s.value).dtype!r} to "
                            f"{d.dtype!r} according to the rule {casting!r}")
        v = _core.as_compute(s, d.dtype)
        if not isinstance(v, _C.Tensor):  # (a complex dtype's is a 0-d tensor already)
            v = _C.full((), v, dtype=d._t.dtype)
    if where is not True:
        w = _core.cast(_t(where, "copyto"), _np.dtype(bool))
        v = _C.where(w, v, d._t)
    d._assign(v, "numpy.copyto")


# ------------------------------------------------- selecting along axes

@implements(_np.take_along_axis)
def take_along_axis(arr, indices, axis, *, _kind=None):
    kind = _kind or result_kind((arr, indices), ndarray)
    return wrap(kind, _take_along(_t(arr, "take_along_axis"), _t(indices, "take_along_axis"),
                                  axis))


def _take_along(a, idx, axis):
    # (NumPy's order: the axis, then the indices' dtype, then their ndim)
    a, ax = (a.reshape(-1), 0) if axis is None else (a, _axis_index(axis, a.ndim))
    if _core.np_dtype(idx).kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if idx.ndim != a.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    pos = _along_positions(a, idx, ax)
    return _C._op("take", a.reshape(-1), 0, pos)


def _along_positions(a, idx, ax):
    """The flat positions in a of take_along_axis(a, idx, ax) (each index
    checked against the axis, negative ones from its end)."""
    nd = a.ndim
    shape = []
    for d in range(nd):
        if d == ax:
            shape.append(idx.shape[d])
            continue
        n, m = a.shape[d], idx.shape[d]
        shape.append(m if isinstance(n, int) and n == 1 else n)
    idx = idx.expand(*shape)
    i = _C._op("take", _C.arange(a.shape[ax]), 0, idx)  # checked and wrapped
    strides = []
    s = 1
    for d in reversed(range(nd)):
        strides.append(s)
        s = s * a.shape[d]
    strides = strides[::-1]
    pos = i * strides[ax]
    for d in range(nd):
        if d == ax:
            continue
        r = _C.arange(shape[d]) if not (isinstance(a.shape[d], int) and a.shape[d] == 1) else \
            _C.zeros((shape[d],), dtype=_C.int64)
        pos = pos + (r * strides[d]).reshape([shape[d] if k == d else 1 for k in range(nd)])
    return pos


@implements(_np.put_along_axis)
def put_along_axis(arr, indices, values, axis, *, _kind=None):
    if _numpy_writes(arr, indices, values):
        return _by_numpy(_np.put_along_axis, (arr, indices, values, axis))
    a = _require_array(arr, "put_along_axis")
    t = a._t
    idx = _t(indices, "put_along_axis")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("`indices` and `arr` must have the same number of dimensions")
        src = t.reshape(-1)
        ax = 0
    else:
        src, ax = t, _axis_index(axis, t.ndim)  # (NumPy's normalize_axis_index, first)
        if idx.ndim != t.ndim:
            raise ValueError("`indices` and `arr` must have the same number of dimensions")
    pos = _along_positions(src, idx, ax)
    v = _core.cast(_t(values, "put_along_axis"), a.dtype).expand(*pos.shape)
    _write_flat(a, pos.reshape(-1), v.reshape(-1), "put_along_axis")


def _clipmode(mode):
    """NumPy's PyArray_ClipmodeConverter: 'raise', 'wrap' or 'clip' (a string
    by its first letter, None for raise, np.RAISE/np.WRAP/np.CLIP)."""
    if mode is None:
        return "raise"
    if isinstance(mode, str):
        for m in ("clip", "wrap", "raise"):
            if mode[:1] in (m[0], m[0].upper()):
                if mode != m:
                    _core.numpy_warns(f"clip mode {mode!r}",
                                      "inexact matches and case insensitive matches for clip "
                                      "mode are deprecated, please use one of 'clip', 'raise', "
                                      "or 'wrap' instead.", DeprecationWarning)
                return m
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    modes = {_np.CLIP: "clip", _np.WRAP: "wrap", _np.RAISE: "raise"}
    if isinstance(mode, int) and mode in modes:
        return modes[mode]
    raise ValueError("integer clipmode must be np.RAISE, np.WRAP, or np.CLIP")


@implements(_np.choose)
def choose(a, choices, out=None, mode="raise", *, _kind=None):
    mode = _clipmode(mode)
    kind = _kind or result_kind((a, choices), ndarray)
    idx = _t(a, "choose")
    ops = [_core.operand(c, "choose") for c in choices]
    cs = [_t(c, "choose") for c in choices]
    # (NumPy's PyArray_ConvertToCommonType: a Python scalar or 0-d choice by
    # its value beside arrays, np.choose([0], (1000, u8 array)) is uint16)
    dt = _core.result_dtype(ops, "choose") if ops else _core.promoted_dtype(cs)
    it = _core.np_dtype(idx)
    if not _np.can_cast(it, _np.intp, casting="safe"):
        # (NumPy's PyArray_FROM_OT of the indices: a safe cast to intp)
        raise TypeError(f"Cannot cast array data from {it!r} to {_np.dtype(_np.intp)!r} "
                        f"according to the rule 'safe'")
    shape = broadcast_shapes(tuple(idx.shape), *[tuple(c.shape) for c in cs])
    stacked = _C.stack([_core.cast(c, dt).expand(*shape) for c in cs], 0)
    n = len(cs)
    idx = idx.to(_C.int64)
    if mode == "clip":
        idx = _C.minimum(_C.maximum(idx, 0), n - 1)
    elif mode == "wrap":
        idx = ((idx % n) + n) % n
    elif _core.decide(_C.any(_C.logical_or(_C.lt(idx, 0), _C.ge(idx, n)), None, False),
                      "choose's check of its indices"):
        raise ValueError("invalid entry in choice array")
    i = _C._op("take", _C.arange(n), 0, idx.expand(*shape))
    r = _take_along(stacked, i.unsqueeze(0), 0).reshape(shape)
    from ._funcs import _out
    return _out(kind, r, out=out, what="choose")


@implements(_np.compress)
def compress(condition, a, axis=None, out=None, *, _kind=None):
    kind = _kind or _kind_of(a)
    t = _t(a, "compress")
    c = _core.cast(_t(condition, "compress"), _np.dtype(bool)).reshape(-1)
    if axis is None:
        t, axis = t.reshape(-1), 0
    ax = _axis(axis, t.ndim)
    n, m = t.shape[ax], c.shape[0]
    if isinstance(n, int) and isinstance(m, int) and m > n:
        # NumPy takes the condition's True positions: only a True past the
        # end is out of bounds (a.compress([True, False]) of one element is
        # fine), which a traced condition knows only when it runs
        beyond = c.slice(0, n, m, 1)
        if _C._is_proxy(beyond):
            _breaks.conversion(_C.UnsupportedError, "hop.numpy: compress with a traced "
                                                    "condition longer than the axis")
        bad = _np.flatnonzero(beyond.numpy())
        if bad.size:
            raise IndexError(f"index {n + int(bad[0])} is out of bounds for axis {ax} with size "
                             f"{n}")
        c = c.slice(0, 0, n, 1)
    if isinstance(n, int) and isinstance(m, int) and m < n:
        c = _C.cat([c, _C.zeros((n - m,), dtype=_C.bool)], 0)
    idx = c.nonzero().select(1, 0)
    from ._funcs import _out
    return _out(kind, _C._op("take", t, ax, idx), out=out, what="compress")


@implements(_np.extract)
def extract(condition, arr, *, _kind=None):
    return compress(ravel(condition, _kind=_C.Tensor), ravel(arr, _kind=_C.Tensor),
                    _kind=_kind or _kind_of(arr))


@implements(_np.select)
def select(condlist, choicelist, default=0, *, _kind=None):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    kind = _kind or result_kind(list(condlist) + list(choicelist), ndarray)
    ops = [_core.operand(c, "select") for c in choicelist] + [_core.operand(default, "select")]
    dt = _core.result_dtypes(lambda *d: _np.empty(0, _np.result_type(
        *[_np.asarray(x) for x in d])), ops, "select")[0]
    conds = []
    for i, c in enumerate(condlist):
        ct = _t(c, "select")
        if _core.np_dtype(ct) != _np.dtype(bool):
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
        conds.append(ct)
    vals = [_C.full((), _core.as_compute(o, dt), dtype=_core.hop_dtype(dt, "select"))
            if o.t is None else _core.cast(o.t, dt) for o in ops]
    shape = broadcast_shapes(*[tuple(x.shape) for x in conds + vals])
    r = vals[-1].expand(*shape)
    for c, v in zip(reversed(conds), reversed(vals[:-1])):
        r = _C.where(c, v, r)
    r = _core.cast(r, dt)
    return wrap(kind, r.clone() if r.ndim == 0 or tuple(vals[-1].shape) == shape and
                len(conds) == 0 else r)


@implements(_np.piecewise)
def piecewise(x, condlist, funclist, *args, _kind=None, **kw):
    kind = _kind or _kind_of(x)
    xa = _arr(x)
    n2 = len(funclist)
    def is_array(c):  # NumPy's isinstance(c, (list, ndarray)): a NumPy scalar is not one
        return isinstance(c, (list, _np.ndarray, _C.Tensor)) or \
            (isinstance(c, ndarray) and not c._scalar)
    if _np.isscalar(condlist) or (isinstance(condlist, ndarray) and condlist._scalar) or \
            (not is_array(condlist[0]) and xa.ndim != 0):
        condlist = [condlist]
    conds = [_core.cast(_t(c, "piecewise"), _np.dtype(bool)) for c in condlist]
    n = len(conds)
    if n == n2 - 1:  # the "otherwise" condition
        anyc = conds[0]
        for c in conds[1:]:
            anyc = _C.logical_or(anyc, c)
        conds.append(_C.logical_not(anyc))
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    from ._funcs import zeros_like
    y = zeros_like(xa, _kind=kind)
    for cond, func in zip(conds, funclist):
        c = ndarray(cond.expand(*xa._t.shape) if cond.ndim < xa.ndim else cond)
        if not callable(func):
            y[c] = func
        else:
            # NumPy skips a function whose condition selects nothing; hop
            # calls it on the empty selection (its size is known only when
            # the program runs)
            y[c] = func(xa[c], *args, **kw)
    return y


# ------------------------------------------------------------ ufunc.at

# put's combine codes (HOP_PUT_COMBINE_LIST in include/hop/ops.h, in its
# order from 1): the op of the table that combines.
_PUT_COMBINE = ("add", "mul", "maximum", "minimum", "div", "floor_divide", "remainder", "fmod",
                "pow", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
                "gcd", "lcm", "arctan2", "hypot", "copysign")
# NumPy's binary ufuncs whose .at hop traces, by the op that computes each
# in NumPy's loop dtype (subtract adds the negated values).
_AT_OPS = {"add": "add", "subtract": "add", "multiply": "mul", "maximum": "maximum",
           "minimum": "minimum", "divide": "div", "true_divide": "div",
           "floor_divide": "floor_divide", "remainder": "remainder", "fmod": "fmod",
           "power": "pow", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
           "bitwise_xor": "bitwise_xor", "left_shift": "left_shift",
           "right_shift": "right_shift", "gcd": "gcd", "lcm": "lcm", "arctan2": "arctan2",
           "hypot": "hypot", "copysign": "copysign"}


def ufunc_at(name, a, indices, b=None):
    """np.<ufunc>.at(a, indices, b): a[indices] op= b unbuffered (a repeated
    index applies the op each time, in index order).  A concrete array:
    NumPy's own on its memory, for every ufunc; traced: the binary ufuncs of
    _AT_OPS through one put that combines by the op, each step computed in
    NumPy's loop dtype (that of a and b) and cast back into a as NumPy casts
    it (complex maximum/minimum by NumPy's order: put's MAX/MIN take complex
    values); a unary ufunc by _unary_at."""
    from ._ufuncs import _check_negative_powers
    uf = getattr(_np, name)
    if uf.nout != 1:
        raise ValueError("Only single output ufuncs supported at this time")
    if uf.nin == 1 and b is not None:
        # NumPy 1.24 crashes here (a NULL loop operand); 1.25 raises this
        raise _core.not_numpys(ValueError("second operand provided when ufunc is unary"))
    if _numpy_writes(a, indices, b):
        return _by_numpy(uf.at, (a, indices) + (() if b is None else (b,)))
    arr = _require_array(a, f"numpy.{name}.at")
    run = _storage.current()
    t = arr._t
    if name in _AT_OPS and b is not None:
        # the loop dtype (by a 0-d value's value) and power's check decide on
        # the data: made eagerly too, since hop.compile's path specialisation
        # records the function's decisions in an eager run
        ops = [_core.Opnd(t=t, dtype=_core.np_dtype(t)), _core.operand(b, f"numpy.{name}.at")]
        loop = _core.result_dtypes(lambda x, y: uf(x, y), ops, f"numpy.{name}.at")[0]
        if name == "power" and loop.kind in "iu":
            from ._indexing import index_tensor
            pos = index_tensor(_C.arange(_size(t.shape)).reshape(tuple(t.shape)), indices)[0]
            if not any(isinstance(d, int) and d == 0 for d in pos.shape):
                _check_negative_powers(name, ops, loop)  # (NumPy's loop: only values used)
    if run is None and not _C._is_proxy(arr._tv) and not arr._ro:
        extra = () if b is None else (_t(b).numpy(),)
        _storage.eager_write(arr, lambda: uf.at(arr._t.numpy(), _indexing_key(indices), *extra))
        return
    if uf.nin == 1:
        return _unary_at(name, arr, run, t, indices)
    if name not in _AT_OPS:
        raise _C.UnsupportedError(
            f"hop.numpy: numpy.{name}.at of a traced array is not supported (the binary "
            f"ufuncs' are: {', '.join(sorted(_AT_OPS))})")
    if b is None:
        raise ValueError("second operand needed for ufunc")
    op = _AT_OPS[name]
    _core.hop_dtype(loop, f"numpy.{name}.at")
    from ._indexing import index_tensor
    pos = index_tensor(_C.arange(_size(t.shape)).reshape(tuple(t.shape)), indices)[0]
    o = ops[1]
    v = _core.cast(o.t, loop) if o.t is not None else \
        _C.full((), _core.scalar_arg(o), dtype=_core.hop_dtype(loop, name))
    if name == "subtract":
        v = -v
    try:
        v = _storage.setitem_value(v, pos, f"numpy.{name}.at")
    except ValueError:
        raise ValueError("array is not broadcastable to correct shape") from None

    def select(p):
        return _C._op("take", p.reshape(-1), 0, pos.reshape(-1))
    _storage.write(arr, run, None, v.reshape(-1), f"numpy.{name}.at", select=select,
                   accumulate=1 + _PUT_COMBINE.index(op))


def _unary_at(name, arr, run, t, indices):
    """np.<unary ufunc>.at(a, indices) on a traced array: an element indexed
    c times becomes f(f(...f(a)...)), c applications, each computed as
    hop.numpy's (NumPy's) ufunc computes it in its loop dtype and cast back
    into a's dtype as NumPy's ufunc.at casts (unsafely: np.sqrt.at of an
    int64 array truncates every step).  The applications go in rounds over
    the whole array, round r changing the elements indexed more than r
    times: a while_loop in the graph, since how many rounds the indices need
    is known only from their values."""
    from .._hops import while_loop
    from ._indexing import index_tensor
    from ._ufuncs import call_ufunc
    what = f"numpy.{name}.at"
    shape, adt = tuple(t.shape), _core.np_dtype(t)
    n = _size(shape)
    pos = index_tensor(_C.arange(n).reshape(shape) if shape else _C.arange(1).reshape(()),
                       indices)[0]
    # the loop and NumPy's TypeError (bool negative, float invert), after
    # the index's IndexError as in NumPy
    _core.result_dtypes(lambda x: getattr(_np, name)(x), [_core.Opnd(t=t, dtype=adt)], what)
    flat = pos.reshape(-1)
    counts = _C._op("put", _C.zeros((n,), dtype=_C.int64), flat,
                    _C.ones(tuple(flat.shape), dtype=_C.int64), True)

    def body(r, x):
        y = _core.cast(_t(call_ufunc(name, (wrap(ndarray, x),), {}, ndarray)), adt)
        return r + 1, _C.where(_C.gt(counts, r), y, x)
    x = while_loop(lambda r, x: _C.any(_C.gt(counts, r)), body,
                   (_C.zeros((), dtype=_C.int64), t.reshape(-1)))[1]
    _storage.write(arr, run, None, x.reshape(shape), what)


def _indexing_key(k):
    from ._indexing import numpy_key
    return numpy_key(k)


# ---------------------------------------------------------- index arrays

def _int_coords(ts):
    """ts (coordinate tensors) as int64, as NumPy casts them to intp with
    casting='same_kind' (floats refused, uint64 wrapped)."""
    for t in ts:
        if _core.np_dtype(t).kind not in "biu":
            raise TypeError("only int indices permitted")
    return [_core.cast(t, _np.dtype(_np.int64)) for t in ts]


def _outside(t, n):
    """A bool tensor: which elements of int64 t are outside [0, n)."""
    return _C.logical_or(_C.lt(t, 0), _C.ge(t, n))


@implements(_np.ravel_multi_index)
def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, _kind=None):
    """The flat index of each coordinate tuple: NumPy's of concrete
    coordinates.  Of traced ones, dims, mode and order are checked by
    NumPy's own function (on no coordinates: its errors in its order), and
    a coordinate out of range (mode 'raise') fails the plan's run-time
    check (NUMPY_INDEX): hop.compile runs the call by NumPy, which raises
    its ValueError; hop.trace's plan raises hop.CheckError."""
    kind = _kind or result_kind(tuple(multi_index), ndarray)
    if not _has_hop(multi_index):
        return _by_value(_np.ravel_multi_index(multi_index, dims, mode=mode, order=order), kind)
    ts = [_t(i, "ravel_multi_index") for i in multi_index]
    if not builtins.any(_C._is_proxy(t) for t in ts):
        return _by_value(_np.ravel_multi_index(tuple(t.numpy() for t in ts), dims, mode=mode,
                                               order=order), kind)
    empty = _np.zeros(0, _np.intp)
    _np.ravel_multi_index((empty,) * len(_np.atleast_1d(dims)), dims, mode=mode, order=order)
    dims = tuple(operator.index(d) for d in _np.atleast_1d(dims))
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    modes = (mode,) * len(dims) if isinstance(mode, (str, int)) or mode is None else tuple(mode)
    modes = [_mode_name(m) for m in modes]
    ts = _int_coords(ts)
    shape = broadcast_shapes(*[tuple(t.shape) for t in ts])
    if 0 in dims and _size(shape) != 0:
        raise ValueError("cannot unravel if shape has zero entries (is empty).")
    strides = [1] * len(dims)
    fortran = _fortran(order)
    seq = range(1, len(dims)) if fortran else range(len(dims) - 2, -1, -1)
    for k in seq:
        strides[k] = strides[k - 1] * dims[k - 1] if fortran else strides[k + 1] * dims[k + 1]
    lin = bad = None
    for t, n, st, md in zip(ts, dims, strides, modes):
        if md == "wrap":
            t = _C.remainder(t, n)
        elif md == "clip":
            t = _C.minimum(_C.maximum(t, 0), n - 1)
        else:
            out = _outside(t, n)
            bad = out if bad is None else _C.logical_or(bad, out)
        term = t * st
        lin = term if lin is None else lin + term
    lin = lin.expand(*shape)
    if bad is not None:
        lin = _core.unknown_if(bad, lin, _core.CHECK_INDEX)
    return wrap(kind, lin, scalar=lin.ndim == 0)


def _mode_name(m):
    """A clip mode NumPy accepted (its probe warned of an inexact one) by
    its name."""
    if m is None:
        return "raise"
    if isinstance(m, str):
        return {"c": "clip", "w": "wrap"}.get(m[:1].lower(), "raise")
    return {_np.CLIP: "clip", _np.WRAP: "wrap"}.get(m, "raise")


def _fortran(order):
    """Whether an order NumPy accepted for ravel_multi_index and
    unravel_index is Fortran's ('F' or 'f'; None is 'C')."""
    return order is not None and order.upper() == "F"


def _by_value(r, kind):
    """NumPy's index array r (or tuple of them) as hop.numpy arrays of kind
    (NumPy's scalars where NumPy gives scalars)."""
    if isinstance(r, tuple):
        return tuple(_by_value(x, kind) for x in r)
    return wrap(kind, _C.asarray(_np.asarray(r)), scalar=_np.ndim(r) == 0)


@implements(_np.unravel_index)
def unravel_index(indices, shape, order="C", *, _kind=None):
    """The coordinates of flat indices: NumPy's of concrete indices.  Of
    traced ones, shape and order are checked by NumPy's own function (on no
    indices), and an index out of bounds fails the plan's run-time check
    (NUMPY_INDEX): hop.compile runs the call by NumPy, whose ValueError
    names the index; hop.trace's plan raises hop.CheckError."""
    kind = _kind or _kind_of(indices)
    if not _has_hop(indices):
        return _by_value(_np.unravel_index(indices, shape, order=order), kind)
    t = _t(indices, "unravel_index")
    if not _C._is_proxy(t):
        return _by_value(_np.unravel_index(t.numpy(), shape, order=order), kind)
    # (a shape () would raise NumPy's error of several indices: order alone)
    _np.unravel_index(_np.zeros(0, _np.intp), shape if _np.size(shape) else (1,), order=order)
    dims = tuple(operator.index(d) for d in _np.atleast_1d(shape))
    (t,) = _int_coords([t])
    if not dims and t.ndim:
        raise ValueError("multiple indices are not supported for 0d arrays")
    rest = _core.unknown_if(_outside(t, _size(dims)), t, _core.CHECK_INDEX)
    coords = {}
    for k in (range(len(dims)) if _fortran(order) else reversed(range(len(dims)))):
        coords[k] = _C.remainder(rest, dims[k])
        rest = _C.floor_divide(rest, dims[k])
    return tuple(wrap(kind, coords[k], scalar=coords[k].ndim == 0) for k in range(len(dims)))


@implements(_np.ix_)
def ix_(*args, _kind=None):
    out = []
    nd = len(args)
    for k, new in enumerate(args):
        if not isinstance(new, (ndarray, _np.ndarray)):
            new = _np.asarray(new)
            if new.size == 0:
                new = new.astype(_np.intp)
        t = _t(new, "ix_")
        if t.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if t.dtype is _C.bool:
            t = t.nonzero().select(1, 0)
        out.append(wrap(_kind or _kind_of(new), t.reshape((1,) * k + (-1,) + (1,) * (nd - k - 1))))
    return tuple(out)
