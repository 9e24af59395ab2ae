"""NumPy's array manipulation on hop arrays beyond _funcs' (numpy.lib's
shape_base, arraypad, stride_tricks and the function_base helpers of that
kind), with NumPy 1.24's semantics: atleast_3d, dstack, column_stack,
row_stack, broadcast_shapes, broadcast_arrays, meshgrid, repeat, tile,
append, resize, pad, roll, rot90, flipud, fliplr, rollaxis, hsplit, vsplit,
dsplit, kron, block, delete, insert, apply_along_axis, apply_over_axes,
packbits and unpackbits; the creation functions indices, fromfunction,
from_dlpack, frombuffer, asfarray, logspace, geomspace and the windows;
NumPy's deprecated aliases (alltrue, sometrue, product, cumproduct,
round_); and the helpers the other modules share (_arr, _as, _const,
_static).

Each follows NumPy's own algorithm, written with hop.numpy's operations, so
that dtypes (value-based casting included) and views come out as NumPy's:
rot90, flipud, fliplr, broadcast_arrays and atleast_3d are views (see
_storage), the others new arrays.
"""

import builtins
import functools
import operator

import numpy as _np

from .. import _C
from .. import _breaks
from . import _core
from ._funcs import (_axis, _axis_index, _axis_tuple, _int_arg, _kind_of, _same, _shape_arg,
                     _sizes_arg, _t, _view, implements, new_sizes, concatenate,
                     reshape, transpose, flip, expand_dims, where, ravel)
from ._ndarray import ndarray, result_kind, view, wrap
from ._storage import Step

__all__ = []


def _arr(x, what="array"):
    """x as a hop.numpy array (the same object when it is one)."""
    if isinstance(x, ndarray):
        return x
    return ndarray(_t(x, what))


def _as(kind, r):
    """Array r as a result of kind (a view of r when the kind differs, so
    that it still shares r's storage)."""
    if kind is None or not isinstance(r, ndarray) or type(r) is kind:
        return r
    if kind is _C.Tensor:
        return r._t
    return view(kind, r, Step(lambda x: x, lambda x: x.view()), scalar=r._scalar, t=r._t)


def _const(a, kind):
    """An ndarray NumPy computed from sizes alone, as a concrete array."""
    t = _C.asarray(_np.array(a, order="C"))
    return wrap(kind or ndarray, t)


def _static(*vals):
    return builtins.all(isinstance(v, int) and not isinstance(v, bool) or
                        isinstance(v, _np.integer) for v in vals)


# ------------------------------------------------------------- stacking

@implements(_np.atleast_3d)
def atleast_3d(*arys, _kind=None):
    res = []
    for a in arys:
        t = _t(a)
        if t.ndim == 0:
            r = reshape(a, (1, 1, 1), _kind=_kind)
        elif t.ndim == 1:
            # NumPy's ary[newaxis, :, newaxis]: the new axes have stride 0,
            # where a reshape's (expand_dims) have C strides (an empty ary)
            r = _same(a, _kind)[None, :, None]
        elif t.ndim == 2:
            r = _same(a, _kind)[:, :, None]
        else:
            r = a if isinstance(a, ndarray) and _kind in (None, type(a)) else \
                wrap(_kind or _kind_of(a), t)
        res.append(r)
    return res[0] if len(res) == 1 else res


@implements(_np.dstack)
def dstack(tup, *, _kind=None):
    arrs = atleast_3d(*tup)
    if not isinstance(arrs, list):
        arrs = [arrs]
    return concatenate(arrs, 2, _kind=_kind or result_kind(list(tup), ndarray))


@implements(_np.column_stack)
def column_stack(tup, *, _kind=None):
    arrays = []
    for v in tup:
        t = _t(v, "column_stack")
        if t.ndim < 2:
            t = t.reshape(1, -1).T if t.ndim == 1 else t.reshape(1, 1)
        arrays.append(t)
    return concatenate(arrays, 1, _kind=_kind or result_kind(list(tup), ndarray))


@implements(_np.row_stack)
def row_stack(tup, *, dtype=None, casting="same_kind", _kind=None):
    from ._funcs import vstack
    return vstack(tup, dtype=dtype, casting=casting, _kind=_kind)


@implements(_np.broadcast_shapes)
def broadcast_shapes(*args, _kind=None):
    shapes = [_sizes_arg(s) for s in args]
    nd = builtins.max([len(s) for s in shapes], default=0)
    out = []
    for k in range(nd):
        n = 1
        for s in shapes:
            d = s[k - nd + len(s)] if k - nd + len(s) >= 0 else 1
            if d == 1:
                continue
            if n != 1 and d != n:
                raise ValueError(f"shape mismatch: objects cannot be broadcast to a single shape.  "
                                 f"Mismatch is between arg 0 with shape {shapes[0]} and arg "
                                 f"{shapes.index(s)} with shape {s}.")
            n = d
        out.append(n)
    return tuple(out)


@implements(_np.broadcast_arrays)
def broadcast_arrays(*args, subok=False, _kind=None):
    shapes = [tuple(_t(a).shape) for a in args]
    shape = broadcast_shapes(*shapes)
    if builtins.all(s == shape for s in shapes):
        return [a if isinstance(a, ndarray) else wrap(_kind or ndarray, _t(a)) for a in args]
    out = []
    for a in args:
        kind = _kind or _kind_of(a)
        if tuple(_t(a).shape) == shape:
            out.append(_arr(a))
            continue
        # writable (NumPy 1.24 warns on a write; the elements repeat)
        out.append(_view(kind, a, lambda x: x.expand(*shape),
                         (lambda x: _np.broadcast_to(x, shape)) if _static(*shape) else None))
    return out


@implements(_np.meshgrid)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy", _kind=None):
    ndim = len(xi)
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    s0 = (1,) * ndim
    out = [reshape(x, s0[:i] + (-1,) + s0[i + 1:], _kind=_kind) for i, x in enumerate(xi)]
    if indexing == "xy" and ndim > 1:
        out[0] = reshape(out[0], (1, -1) + s0[2:], _kind=_kind)
        out[1] = reshape(out[1], (-1, 1) + s0[2:], _kind=_kind)
    if not sparse:
        out = broadcast_arrays(*out, _kind=_kind)
    if copy:
        out = [x.copy() for x in out]
    return list(out)


@implements(name="indices")
def indices(dimensions, dtype=int, sparse=False):
    # (NumPy's empty((n,) + dimensions, dtype) reads and checks them as sizes)
    n = len(tuple(dimensions))
    dimensions = new_sizes((n,) + tuple(dimensions), _np.dtype(dtype))[1:]
    shape = (1,) * n
    npd = _np.dtype(dtype)
    parts = []
    for i, dim in enumerate(dimensions):
        idx = _C.arange(dim).reshape(shape[:i] + (dim,) + shape[i + 1:])
        parts.append(_core.cast(idx, npd))
    if sparse:
        return tuple(ndarray(p) for p in parts)
    if not parts:
        return ndarray(_C.zeros((0,), dtype=_core.hop_dtype(npd, "indices")))
    return ndarray(_C.stack([p.expand(*dimensions) for p in parts], 0))


@implements(_np.fromfunction)
def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """NumPy's fromfunction: function called once on the index grids of
    shape (indices), whatever it returns."""
    return function(*indices(shape, dtype=dtype), **kwargs)


@implements(_np.from_dlpack)
def from_dlpack(x, /):
    """NumPy's from_dlpack: a read-only view of the exporter's memory (of a
    hop.numpy array, traced or not: a read-only view of it)."""
    if isinstance(x, ndarray):
        return _view(_kind_of(x), x, lambda t: t, lambda a: a, readonly=True)
    if not isinstance(x, _np.ndarray):
        raise _C.UnsupportedError(f"hop.numpy: from_dlpack of a {type(x).__name__} is not "
                                  f"supported (of NumPy and hop.numpy arrays it is)")
    _np.from_dlpack(x)  # NumPy's errors (an unsupported dtype or device)
    r = ndarray(_core.from_numpy(x))  # over x's memory
    r._ro = True
    return r


@implements(_np.frombuffer)
def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None):
    """NumPy's frombuffer: the buffer's bytes as a 1-d array, over the same
    memory (read-only where NumPy's is: a bytes object's)."""
    a = _np.frombuffer(buffer, dtype, count, offset)
    _core.kept_dtype(a.dtype, "frombuffer")  # (NumPy keeps '>f8': never silently native)
    _core.hop_dtype(a.dtype, "frombuffer")
    r = ndarray(_C.asarray(a))
    r._ro = not a.flags.writeable
    r._ob = a.base  # (NumPy's .base: the buffer object)
    return r


# ------------------------------------------------------ repeat and tile

@implements(_np.repeat)
def repeat(a, repeats, axis=None, *, _kind=None):
    kind = _kind or _kind_of(a)
    t = _t(a, "repeat")
    if axis is None:
        t, axis = t.reshape(-1), 0
    elif t.ndim == 0:
        t = t.reshape(1)  # (NumPy's PyArray_CheckAxis: a 0-d array as a 1-d one)
    ax = _axis(axis, t.ndim)
    n = t.shape[ax]
    r = _core.operand(repeats, "repeat")
    if r.t is None or r.t.ndim == 0 and not _C._is_proxy(r.t) and not _core.tracing():
        if r.t is None:  # (a Python or NumPy scalar: NumPy converts it as int() does)
            k = _core.scalar_arg(r)
            k = k if isinstance(k, (int, _C.SymInt)) else int(k)
        else:
            if _core.np_dtype(r.t).kind not in "biu":
                raise TypeError(f"Cannot cast scalar from dtype('{_core.np_dtype(r.t)}') to "
                                f"dtype('int64') according to the rule 'safe'")
            k = operator.index(r.t.item())
        if k < 0 and not (type(n) is int and n == 0):  # (broadcast to no count: none checked)
            raise ValueError("negative dimensions are not allowed")
        idx = _C.arange(n * k) // k if k else _C.zeros(0, dtype=_C.int64)
        return wrap(kind, _C._op("take", t, ax, idx))
    rt = r.t.reshape(-1) if r.t.ndim == 0 else r.t
    if _core.np_dtype(rt).kind not in "biu":
        raise TypeError("Cannot cast array data from dtype('float64') to dtype('int64') according "
                        "to the rule 'safe'")
    rt = rt.to(_C.int64) if rt.dtype is not _C.int64 else rt
    if rt.shape[0] != 1 and rt.shape[0] != n:
        raise ValueError(f"operands could not be broadcast together with shape ({n},) "
                         f"({rt.shape[0]},)")
    if _core.decide(_C.any(_C.lt(rt, 0), None, False), "repeat: whether a count is negative"):
        raise ValueError("repeats may not contain negative values.")
    rt = rt.expand(n)
    ends = _C.cumsum(rt, 0)
    # a u64 count: its unbacked size is known not to be negative (arange's)
    total = _C.sum(rt, None, False).to(_C.uint64).item()
    # element j of the result comes from the first i with ends[i] > j
    idx = _C._op("searchsorted", ends, _C.arange(total), True)
    return wrap(kind, _C._op("take", t, ax, idx))


@implements(_np.tile)
def tile(A, reps, *, _kind=None):
    kind = _kind or _kind_of(A)
    try:  # (NumPy's: a sequence of counts, else one)
        tup = tuple(reps)
    except TypeError:
        tup = (reps,)
    tup = tuple(int(x) if isinstance(x, bool) else _int_arg(x) for x in tup)
    if builtins.any(type(x) is int and x < 0 for x in tup):
        raise ValueError("negative dimensions are not allowed")
    t = _t(A, "tile")
    d = len(tup)
    while t.ndim < d:
        t = t.unsqueeze(0)
    tup = (1,) * (t.ndim - d) + tup
    if builtins.all(x == 1 for x in tup):
        return wrap(kind, t.clone())
    out = [n * k for n, k in zip(t.shape, tup)]
    if 0 in out and builtins.all(isinstance(n, int) for n in out):
        return _tile_empty(A, t, tup, out, kind)
    inter, big = [], []
    for n, k in zip(t.shape, tup):
        inter += [1, n]
        big += [k, n]
    r = t.reshape(inter).expand(*big).reshape(out)
    return wrap(kind, r.clone() if r.ndim == 0 else r)


def _tile_empty(A, t, tup, out, kind):
    """np.tile's result without elements, of NumPy 1.24's strides: its last
    step is `c.reshape(shape_out)` of c, A itself (as array(A, ndmin=d), a
    view with leading new axes) when A has no elements, else the new array
    of NumPy's last `c.reshape(-1, n).repeat(nrep, 0)`, whose shape decides
    whether the reshape keeps its zero strides (the same shape) or gives C
    strides, a 0 dim counted as 1 (hop.numpy's reshape gives both)."""
    n = _size(t.shape)
    if n == 0:
        c = _same(A, kind) if isinstance(A, ndarray) else wrap(kind, _t(A, "tile"))
        if c._t.ndim < t.ndim:
            c = c[(None,) * (t.ndim - c._t.ndim)]
        return reshape(c, tuple(out), _kind=kind)
    shape = tuple(t.shape)
    for dim_in, nrep in zip(t.shape, tup):
        if nrep != 1:
            shape = (_size(shape) // n * nrep, n)
        n //= dim_in
    return reshape(wrap(kind, _C.zeros(shape, dtype=t.dtype)), tuple(out), _kind=kind)


def _size(shape):
    return functools.reduce(operator.mul, shape, 1)


@implements(_np.append)
def append(arr, values, axis=None, *, _kind=None):
    kind = _kind or result_kind((arr, values), ndarray)
    t = _t(arr, "append")
    if axis is None:
        if t.ndim != 1:
            t = t.reshape(-1)
        v = _t(values, "append").reshape(-1)
        axis = t.ndim - 1
        return concatenate((t, v), axis=axis, _kind=kind)
    return concatenate((t, _t(values, "append")), axis=axis, _kind=kind)


@implements(_np.resize)
def resize(a, new_shape, *, _kind=None):
    kind = _kind or _kind_of(a)
    # (NumPy's: an int, else tuple(new_shape))
    shape = (new_shape,) if isinstance(new_shape, (int, _np.integer)) else tuple(new_shape)
    shape = tuple(_int_arg(n) for n in shape)
    t = _t(a, "resize").reshape(-1)
    new_size = 1
    for n in shape:
        if n < 0:
            raise ValueError("all elements of `new_shape` must be non-negative")
        new_size *= n
    if t.shape[0] == 0 or new_size == 0:
        return wrap(kind, _C.zeros(shape, dtype=t.dtype))
    idx = _C.arange(new_size) % t.shape[0]
    return wrap(kind, _C._op("take", t, 0, idx).reshape(shape))


# ------------------------------------------------------------- padding

def _as_pairs(x, ndim, as_index=False):
    if x is None:
        return ((None, None),) * ndim
    arr = _np.array(x)
    if as_index:
        arr = _np.round(arr).astype(_np.intp, copy=False)
        if arr.size and arr.min() < 0:
            raise ValueError("index can't contain negative values")
    if arr.ndim < 3:
        if arr.size == 1:
            v = arr.ravel()[0]
            return ((v, v),) * ndim
        if arr.size == 2 and arr.shape != (2, 1):
            v = arr.ravel()
            return ((v[0], v[1]),) * ndim
    return _np.broadcast_to(arr, (ndim, 2)).tolist()


def _pad_index(n, before, after, mode):
    """For an index mode (edge, wrap, reflect, symmetric), the source index
    along an axis of size n of each position of the padded axis: NumPy's own
    pad of arange(n), whose iterative filling (wrap and reflect wider than
    the axis) is then exactly NumPy's."""
    if isinstance(n, int):
        return _C.asarray(_np.pad(_np.arange(n, dtype=_np.int64), (before, after), mode=mode))
    i = _C.arange(-before, n + after)
    if mode == "edge":
        return _C.minimum(_C.maximum(i, 0), n - 1)
    raise _C.UnsupportedError(f"hop.numpy: pad mode {mode!r} over a symbolic size is not "
                              f"supported")


def _pad_by_numpy(array, pad_width, mode, kwargs, kind):
    """The pads hop has no kernels for (a statistic of the edge, a linear
    ramp, an odd reflection, a function, complex constants): NumPy's own
    pad of the values, eagerly, a graph break of hop.compile (_ufuncs.
    fallback)."""
    from ._ufuncs import fallback
    return fallback(_np.pad, "pad", (array, pad_width, mode), kwargs, kind)


@implements(_np.pad)
def pad(array, pad_width, mode="constant", *, _kind=None, **kwargs):
    kind = _kind or _kind_of(array)
    t = _t(array, "pad")
    if _np.asarray(pad_width).dtype.kind != "i":
        raise TypeError("`pad_width` must be of integral type.")
    widths = _as_pairs(pad_width, t.ndim, as_index=True)
    if callable(mode):  # (NumPy's own pad: eagerly, or a graph break)
        return _pad_by_numpy(array, pad_width, mode, kwargs, kind)
    allowed = {"constant": {"constant_values"}, "edge": set(), "wrap": set(),
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}, "empty": set(),
               "maximum": {"stat_length"}, "minimum": {"stat_length"}, "mean": {"stat_length"},
               "linear_ramp": {"end_values"}, "median": {"stat_length"}}
    if mode not in allowed:
        raise ValueError(f"mode '{mode}' is not supported")
    unsupported = set(kwargs) - allowed[mode]
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    npd = _core.np_dtype(t)
    if kwargs.get("reflect_type", "even") == "odd" or mode in (
            "maximum", "minimum", "mean", "linear_ramp", "median") or (
            mode == "constant" and _np.asarray(kwargs.get("constant_values", 0)).dtype.kind
            not in "biuf"):
        return _pad_by_numpy(array, pad_width, mode, kwargs, kind)
    if mode in ("constant", "empty"):
        values = _as_pairs(kwargs.get("constant_values", 0), t.ndim)
        for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, values)):
            parts = []
            for w, v in ((lo, vlo), (None, None), (hi, vhi)):
                if w is None:
                    parts.append(t)
                elif w > 0:
                    shape = list(t.shape)
                    shape[ax] = int(w)
                    with _np.errstate(all="ignore"):
                        cv = _np.asarray(v).astype(npd).item() if mode == "constant" else 0
                    parts.append(_C.full(tuple(shape), cv, dtype=t.dtype))
            t = _C.cat(parts, ax) if len(parts) > 1 else t
        return wrap(kind, t.clone() if builtins.all(w == (0, 0) for w in widths) else t)
    for ax, (lo, hi) in enumerate(widths):
        lo, hi = int(lo), int(hi)
        if lo == 0 and hi == 0:
            continue
        n = t.shape[ax]
        if isinstance(n, int) and n == 0:
            raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' or "
                             f"'empty'")
        t = _C._op("take", t, ax, _pad_index(n, lo, hi, mode))
    return wrap(kind, t.clone() if builtins.all(w == (0, 0) for w in widths) else t)


# ------------------------------------------------------- roll, rotations

@implements(_np.roll)
def roll(a, shift, axis=None, *, _kind=None):
    kind = _kind or _kind_of(a)
    t = _t(a, "roll")
    if axis is None:
        return wrap(kind, _t(roll(t.reshape(-1), shift, 0, _kind=_C.Tensor)).reshape(
            tuple(t.shape)))
    axes = _axis_tuple(axis, t.ndim, allow_duplicate=True)
    # NumPy's broadcast(shift, axis): its error for lengths that differ (a
    # length 1 stretches, to 0 too), then 1-d at most
    sshape = _np.shape(shift)
    both = _np.broadcast(_np.empty(sshape, bool), _np.empty(len(axes), bool))
    if both.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = _shape_arg(shift) if sshape else (shift,)
    shifts = shifts * both.size if len(shifts) == 1 else shifts
    axes = axes * both.size if len(axes) == 1 else axes
    total = {}
    for ax, sh in zip(axes, shifts):
        ax = _axis(ax, t.ndim)
        total[ax] = total.get(ax, 0) + operator.index(sh)
    for ax, sh in total.items():
        n = t.shape[ax]
        if isinstance(n, int) and n == 0:
            continue
        t = _C._op("take", t, ax, (_C.arange(n) - sh) % n)
    return wrap(kind, t if total else t.clone())


@implements(_np.rot90)
def rot90(m, k=1, axes=(0, 1), *, _kind=None):
    kind = _kind or _kind_of(m)
    t = _t(m, "rot90")
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or builtins.abs(axes[0] - axes[1]) == t.ndim:
        raise ValueError("Axes must be different.")
    if (axes[0] >= t.ndim or axes[0] < -t.ndim or axes[1] >= t.ndim or axes[1] < -t.ndim):
        raise ValueError(f"Axes={axes} out of range for array of ndim={t.ndim}.")
    k %= 4
    m = m if isinstance(m, ndarray) else wrap(kind, t)
    if k == 0:
        return _as(kind, m[...])
    if k == 2:
        return _as(kind, flip(flip(m, axes[0], _kind=kind), axes[1], _kind=kind))
    axes_list = list(range(t.ndim))
    axes_list[axes[0]], axes_list[axes[1]] = axes_list[axes[1]], axes_list[axes[0]]
    if k == 1:
        return transpose(flip(m, axes[1], _kind=kind), axes_list, _kind=kind)
    return flip(transpose(m, axes_list, _kind=kind), axes[1], _kind=kind)


@implements(_np.flipud)
def flipud(m, *, _kind=None):
    if _t(m).ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0, _kind=_kind)


@implements(_np.fliplr)
def fliplr(m, *, _kind=None):
    if _t(m).ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1, _kind=_kind)


@implements(_np.rollaxis)
def rollaxis(a, axis, start=0, *, _kind=None):
    n = _t(a).ndim
    axis = _axis_index(axis, n)
    if start < 0:
        start += n
    if not (0 <= start < n + 1):
        raise _np.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was "
                            f"passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return _as(_kind or _kind_of(a), _arr(a)[...])
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return transpose(a, axes, _kind=_kind)


def _split_along(ary, sections, axis, what, nd):
    from ._funcs import split
    if _t(ary).ndim < nd:
        raise ValueError(f"{what} only works on arrays of {nd} or more dimensions")
    return split(ary, sections, axis)


@implements(_np.hsplit)
def hsplit(ary, indices_or_sections, *, _kind=None):
    if _t(ary).ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split_along(ary, indices_or_sections, 1 if _t(ary).ndim > 1 else 0, "hsplit", 1)


@implements(_np.vsplit)
def vsplit(ary, indices_or_sections, *, _kind=None):
    return _split_along(ary, indices_or_sections, 0, "vsplit", 2)


@implements(_np.dsplit)
def dsplit(ary, indices_or_sections, *, _kind=None):
    return _split_along(ary, indices_or_sections, 2, "dsplit", 3)


@implements(_np.kron)
def kron(a, b, *, _kind=None):
    kind = _kind or result_kind((a, b), ndarray)
    ta, tb = _t(a, "kron"), _t(b, "kron")
    while ta.ndim < tb.ndim:
        ta = ta.unsqueeze(0)
    nda, ndb = ta.ndim, tb.ndim
    if nda == 0 or ndb == 0:
        from ._ufuncs import call_ufunc
        return call_ufunc("multiply", (wrap(kind, ta), wrap(kind, tb)), {}, kind)
    nd = builtins.max(nda, ndb)
    while tb.ndim < nd:
        tb = tb.unsqueeze(0)
    as_, bs = tuple(ta.shape), tuple(tb.shape)
    for k in range(nd):
        ta = ta.unsqueeze(2 * k + 1)
        tb = tb.unsqueeze(2 * k)
    from ._ufuncs import call_ufunc
    r = call_ufunc("multiply", (wrap(ndarray, ta), wrap(ndarray, tb)), {}, ndarray)
    return wrap(kind, r._t.reshape(tuple(x * y for x, y in zip(as_, bs))))


@implements(_np.block)
def block(arrays, *, _kind=None):
    def depth(x):
        if isinstance(x, list):
            if not x:
                raise ValueError("List at arrays cannot be empty")
            ds = {depth(v) for v in x}
            if len(ds) != 1:
                raise ValueError("List depths are mismatched.")
            return ds.pop() + 1
        if isinstance(x, tuple):
            raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and "
                            "np.block does not allow implicit conversion from tuple to ndarray.")
        return 0
    d = depth(arrays)

    def leaves(x):
        return [y for v in x for y in leaves(v)] if isinstance(x, list) else [x]
    items = leaves(arrays)
    nd = builtins.max([d] + [_t(v).ndim for v in items])

    def rec(x, level):
        if not isinstance(x, list):
            t = _t(x, "block")
            while t.ndim < nd:
                t = t.unsqueeze(0)
            return t
        parts = [rec(v, level + 1) for v in x]
        return _t(concatenate(parts, axis=-(d - level), _kind=_C.Tensor))
    r = rec(arrays, 0)
    return wrap(_kind or result_kind(items, ndarray), r if d else r.clone())


@implements(_np.asfarray, name="asfarray")
def asfarray(a, dtype=_np.float64, *, _kind=None):
    from ._funcs import asarray
    if isinstance(dtype, (ndarray, _np.ndarray)):
        raise TypeError("data type not understood")
    if not _np.issubdtype(dtype, _np.inexact):
        dtype = _np.float64
    return _as(_kind or _kind_of(a), asarray(a, dtype=dtype))


@implements(name="require")
def require(a, dtype=None, requirements=None, *, like=None):
    """NumPy's require: an array of dtype that has the flags asked for
    (NumPy's names and letters, case-insensitive; an unknown one is NumPy's
    KeyError): C/F order through array(order=), and a copy (in order 'A',
    or the one asked for) when 'W' (writeable), 'O' (owns its data) or 'A'
    (aligned: hop's arrays always are) does not hold; 'E' (not a
    subclass) holds for every hop.numpy array.  Traced, 'O' reads the
    layout flags: hop.compile's compiled part ends there."""
    from ._funcs import array, asarray
    if not requirements:
        return asarray(a, dtype=dtype)
    reqs = {_np.core._asarray.POSSIBLE_FLAGS[x.upper()] for x in requirements}
    reqs.discard("E")
    order = "A"
    if reqs >= {"C", "F"}:
        raise ValueError('Cannot specify both "C" and "F" order')
    if "F" in reqs:
        order = "F"
        reqs.remove("F")
    elif "C" in reqs:
        order = "C"
        reqs.remove("C")
    arr = array(a, dtype=dtype, order=order, copy=False)
    for prop in sorted(reqs):
        if prop == "A" and (_C._is_proxy(arr._t) or _core.tracing()):
            continue  # (hop's memory is aligned)
        if not arr.flags[prop]:
            return arr.copy(order)
    return arr


@implements(name="isfortran")
def isfortran(a):
    """NumPy's: a.flags.fnc (Fortran-contiguous and not C-contiguous).
    Traced, a layout flag: hop.compile's compiled part ends there."""
    return a.flags.fnc


@implements(name="asarray_chkfinite")
def asarray_chkfinite(a, dtype=None, order=None):
    """NumPy's asarray that raises NumPy's ValueError when a float or
    complex array holds an inf or a NaN.  Traced, the check is a decision on
    the data (_core.decide): hop.compile's plan computes it on every call
    (a path specialisation: a call with infs or NaNs takes the side that
    raises NumPy's ValueError), hop.trace cannot decide it (TraceError)."""
    from ._funcs import asarray
    from ._ufuncs import call_ufunc
    r = asarray(a, dtype=dtype, order=order)
    if r.dtype.char in _np.typecodes["AllFloat"]:
        finite = _t(call_ufunc("isfinite", (r,), {}, ndarray), "asarray_chkfinite")
        if _core.decide(_C.logical_not(_C.all(finite, None, False)),
                        "asarray_chkfinite's check for infs and NaNs"):
            raise ValueError("array must not contain infs or NaNs")
    return r


# ------------------------------------------------------------- aliases

@implements(_np.alltrue, name="alltrue")
def alltrue(a, axis=None, out=None, keepdims=False, *, where=True, _kind=None):
    from ._funcs import all as _all
    return _all(a, axis, out, keepdims, where=where, _kind=_kind)


@implements(_np.sometrue, name="sometrue")
def sometrue(a, axis=None, out=None, keepdims=False, *, where=True, _kind=None):
    from ._funcs import any as _any
    return _any(a, axis, out, keepdims, where=where, _kind=_kind)


@implements(_np.product, name="product")
def product(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True, *,
            _kind=None):
    from ._funcs import prod
    return prod(a, axis, dtype, out, keepdims, initial, where, _kind=_kind)


@implements(_np.cumproduct, name="cumproduct")
def cumproduct(a, axis=None, dtype=None, out=None, *, _kind=None):
    from ._funcs import cumprod
    return cumprod(a, axis, dtype, out, _kind=_kind)


@implements(_np.round_, name="round_")
def round_alias(a, decimals=0, out=None, *, _kind=None):
    from ._funcs import round_
    return round_(a, decimals, out, _kind=_kind)


# ---------------------------------------------------- spaces and windows

@implements(name="logspace")
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    from ._funcs import linspace
    from ._ufuncs import call_ufunc
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    r = call_ufunc("power", (base, y), {}, ndarray)
    return r if dtype is None else r.astype(dtype, copy=False)


@implements(name="geomspace")
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    from ._funcs import asarray
    from ._ufuncs import call_ufunc
    s0 = asarray(start)
    s1 = asarray(stop)
    if _core.decide(_C.logical_or(_C.any(_C.eq(s0._t, 0), None, False),
                                  _C.any(_C.eq(s1._t, 0), None, False)),
                    "geomspace: whether a bound is zero"):
        raise ValueError("Geometric sequence cannot include zero")
    # NumPy's result_type(start, stop, float(num), zeros((), dtype)), casting
    # 0-d bounds by value: float16 or float32 array bounds keep their dtype
    dt = _core.result_dtype([_core.operand(s0, "geomspace"), _core.operand(s1, "geomspace"),
                             _core.Opnd(value=float(num))], "geomspace",
                            extra=(_np.zeros((), dtype),))
    dtype = dt if dtype is None else _np.dtype(dtype)
    s0, s1 = s0.astype(dt), s1.astype(dt)
    neg = ndarray(_C.logical_and(_C.lt(s0._t, 0), _C.lt(s1._t, 0)))
    sign = where(neg, -1.0, 1.0, _kind=ndarray).astype(dt)
    s0, s1 = s0 * sign, s1 * sign
    lo = call_ufunc("log10", (s0,), {}, ndarray)
    hi = call_ufunc("log10", (s1,), {}, ndarray)
    r = logspace(lo, hi, num=num, endpoint=endpoint, base=10.0, dtype=dtype)
    if num > 0:
        r[0] = s0
        if num > 1 and endpoint:
            r[-1] = s1
    r = sign * r
    if axis != 0:
        from ._funcs import moveaxis
        r = moveaxis(r, 0, axis)
    return r.astype(dtype, copy=False)


def _window(name):
    def window(*args):
        if not builtins.all(isinstance(a, (int, float, _np.integer, _np.floating))
                            for a in args):
            # (hop.compile: a graph break, NumPy's window of the values; a
            # traced beta of kaiser as much as a traced size)
            _breaks.conversion(_C.UnsupportedError, f"hop.numpy: {name} of a traced or "
                               f"symbolic argument is not supported")
        return _const(getattr(_np, name)(*args), ndarray)
    window.__name__ = window.__qualname__ = name
    window.__doc__ = f"numpy.{name}: the window NumPy computes (a constant of the trace)."
    return window


for _w in ("hamming", "hanning", "bartlett", "blackman", "kaiser"):
    implements(name=_w)(_window(_w))
del _w


# ------------------------------------------- delete, insert, apply_*

def _hnp():
    from . import _funcs as F
    return F.PUBLIC


def _axis_arg(arr, axis):
    """delete/insert's axis: the array raveled for None (axis then its
    last), else a checked axis."""
    if axis is None:
        if arr.ndim != 1:
            arr = _arr(ravel(arr, _kind=ndarray))
        return arr, arr.ndim - 1
    return arr, _axis_index(axis, arr.ndim)


@implements(_np.delete)
def delete(arr, obj, axis=None, *, _kind=None):
    """NumPy 1.24's delete: the elements kept are a mask (a traced index
    array gives a size known when the program runs)."""
    kind = _kind or _kind_of(arr)
    F = _hnp()
    a, axis = _axis_arg(_arr(arr, "delete"), axis)
    if a.ndim == 0 and axis is not None:
        raise _np.AxisError(axis, 0)
    N = a.shape[axis]
    slobj = [slice(None)] * a.ndim
    if isinstance(obj, slice):
        if not isinstance(N, int):
            raise _C.UnsupportedError("hop.numpy: delete of a slice over a symbolic size is not "
                                      "supported")
        keep = _np.ones(N, dtype=bool)
        keep[obj] = False
        if keep.all():
            return _as(kind, F["copy"](a, _kind=ndarray))
        slobj[axis] = keep
        return _as(kind, a[tuple(slobj)])
    if isinstance(obj, (int, _np.integer)) and not isinstance(obj, (bool, _np.bool_)):
        single = True
    else:
        single = False
        if isinstance(obj, ndarray) and obj._t is not None and _C._is_proxy(obj._t):
            o = obj
        else:
            o = _np.asarray(obj.__array__() if isinstance(obj, ndarray) else obj)
            if o.size == 0 and not isinstance(obj, (_np.ndarray, ndarray)):
                o = o.astype(_np.intp)
            elif o.size == 1 and o.dtype.kind in "ui":
                obj, single = o.item(), True
    if single:
        if isinstance(N, int) and (obj < -N or obj >= N):
            raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {N}")
        if obj < 0:
            obj += N
        parts = []
        for sl in (slice(None, obj), slice(obj + 1, None)):
            slobj[axis] = sl
            parts.append(a[tuple(slobj)])
        return _as(kind, concatenate(parts, axis, _kind=ndarray))
    if o.dtype == _np.dtype(bool):
        if tuple(o.shape) != (N,):
            raise ValueError(f"boolean array argument obj to delete must be one dimensional and "
                             f"match the axis length of {N}")
        keep = ~(o if isinstance(o, ndarray) else ndarray(_C.asarray(o)))
    else:
        keep = F["ones"](N, dtype=bool)
        keep[(o if isinstance(o, ndarray) else ndarray(_C.asarray(_np.ascontiguousarray(o)))),] \
            = False
    slobj[axis] = keep
    return _as(kind, a[tuple(slobj)])


@implements(_np.insert)
def insert(arr, obj, values, axis=None, *, _kind=None):
    """NumPy 1.24's insert, step for step (a traced index array must not be
    a single index: its value would decide the shape)."""
    kind = _kind or _kind_of(arr)
    F = _hnp()
    a, axis = _axis_arg(_arr(arr, "insert"), axis)
    if a.ndim == 0:
        raise _np.AxisError(axis, 0)
    ndim = a.ndim
    slobj = [slice(None)] * ndim
    N = a.shape[axis]
    newshape = list(a.shape)
    traced = isinstance(obj, ndarray) and _C._is_proxy(obj._t)
    if isinstance(obj, slice):
        indices = _np.arange(*obj.indices(N), dtype=_np.intp)
    elif traced:
        indices = obj
        if indices.ndim > 1:
            raise ValueError("index array argument obj to insert must be one dimensional or "
                             "scalar")
        if indices.size == 1:
            raise _C.UnsupportedError("hop.numpy: insert at a traced single index is not "
                                      "supported (it decides the layout of the result)")
    else:
        indices = _np.array(obj.__array__() if isinstance(obj, ndarray) else obj)
        if indices.dtype == bool:
            indices = indices.astype(_np.intp)
        elif indices.ndim > 1:
            raise ValueError("index array argument obj to insert must be one dimensional or "
                             "scalar")
        if indices.dtype.kind not in "iub" and (indices.size or
                                                isinstance(obj, (_np.ndarray, ndarray))):
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if not traced and indices.size == 1:
        index = indices.item()
        if index < -N or index > N:
            raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {N}")
        if index < 0:
            index += N
        _core.python_ints_warn(values, a.dtype, "insert")  # (NumPy's array(values, dtype))
        vals = F["array"](values, copy=False, ndmin=ndim, dtype=a.dtype)
        if indices.ndim == 0:
            vals = F["moveaxis"](vals, 0, axis)
        numnew = vals.shape[axis]
        newshape[axis] += numnew
        new = F["empty"](tuple(newshape), a.dtype)
        slobj[axis] = slice(None, index)
        new[tuple(slobj)] = a[tuple(slobj)]
        slobj[axis] = slice(index, index + numnew)
        new[tuple(slobj)] = vals
        slobj[axis] = slice(index + numnew, None)
        slobj2 = [slice(None)] * ndim
        slobj2[axis] = slice(index, None)
        new[tuple(slobj)] = a[tuple(slobj2)]
        return _as(kind, new)
    if not traced:
        if indices.size == 0 and not isinstance(obj, (_np.ndarray, ndarray)):
            indices = indices.astype(_np.intp)
        indices = ndarray(_C.asarray(_np.ascontiguousarray(indices.astype(_np.intp))))
    else:
        indices = F["array"](indices)
    indices[indices < 0] += N
    numnew = len(indices)
    order = F["argsort"](indices, kind="mergesort")
    indices[order] += F["arange"](numnew)
    newshape[axis] += numnew
    old_mask = F["ones"](newshape[axis], dtype=bool)
    old_mask[indices] = False
    new = F["empty"](tuple(newshape), a.dtype)
    slobj2 = [slice(None)] * ndim
    slobj[axis] = indices
    slobj2[axis] = old_mask
    new[tuple(slobj)] = values
    new[tuple(slobj2)] = a
    return _as(kind, new)


@implements(_np.apply_along_axis)
def apply_along_axis(func1d, axis, arr, *args, _kind=None, **kwargs):
    """NumPy 1.24's apply_along_axis: func1d called on each 1-d slice (a
    Python loop over the other dims, whose sizes must be known)."""
    F = _hnp()
    kind = _kind or _kind_of(arr)
    arr = _arr(arr, "apply_along_axis")
    nd = arr.ndim
    axis = _axis_index(axis, nd)
    in_dims = list(range(nd))
    inarr_view = transpose(arr, in_dims[:axis] + in_dims[axis + 1:] + [axis], _kind=ndarray)
    outer = tuple(inarr_view.shape[:-1])
    if not _static(*outer):
        raise _C.UnsupportedError("hop.numpy: apply_along_axis over symbolic sizes is not "
                                  "supported")
    inds = iter(_np.ndindex(outer))
    try:
        ind0 = next(inds)
    except StopIteration:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0") from None
    res = F["asarray"](func1d(inarr_view[ind0], *args, **kwargs))
    buff = F["zeros"](outer + tuple(res.shape), res.dtype)
    buff_dims = list(range(buff.ndim))
    buff_permute = (buff_dims[0:axis] + buff_dims[buff.ndim - res.ndim:buff.ndim] +
                    buff_dims[axis:buff.ndim - res.ndim])
    buff[ind0] = res
    for ind in inds:
        buff[ind] = F["asarray"](func1d(inarr_view[ind], *args, **kwargs))
    return _as(kind, transpose(buff, buff_permute, _kind=ndarray))


@implements(_np.apply_over_axes)
def apply_over_axes(func, a, axes, *, _kind=None):
    val = _arr(a, "apply_over_axes")
    N = val.ndim
    if _np.array(axes).ndim == 0:
        axes = (axes,)
    for axis in axes:
        if axis < 0:
            axis = N + axis
        res = func(val, axis)
        if res.ndim != val.ndim:
            res = expand_dims(res, axis)
            if res.ndim != val.ndim:
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return _as(_kind or _kind_of(a), val)


# ------------------------------------------------------------- bit packing

def _bitorder(bitorder):
    """NumPy's bitorder argument: True for 'little' (its first letter decides)."""
    if not isinstance(bitorder, str):
        raise TypeError(f"pack() argument 3 must be str, not {type(bitorder).__name__}")
    if bitorder[:1] in ("l", "L"):
        return True
    if bitorder[:1] in ("b", "B"):
        return False
    raise ValueError("'order' must be either 'little' or 'big'")


def _bits_axis(a, axis):
    """a with the packed axis last (all of a flattened for axis None), and
    where that axis goes back."""
    if axis is None:
        return reshape(a, (-1,), _kind=ndarray), 0
    if a.ndim == 0:
        a = reshape(a, (1,), _kind=ndarray)  # NumPy packs a 0-d array as a 1-d one
    ax = _axis(axis, a.ndim)
    return _hnp()["moveaxis"](a, ax, -1, _kind=ndarray), ax


@implements(_np.packbits)
def packbits(a, axis=None, bitorder="big", *, _kind=None):
    """NumPy's packbits: each run of eight elements along axis (zero-padded
    at the end) as one uint8, its first element the high bit (bitorder
    'big') or the low one ('little')."""
    F = _hnp()
    kind = _kind or _kind_of(a)
    arr = _arr(a, "packbits")
    if arr.dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    little = _bitorder(bitorder)
    b, ax = _bits_axis(arr, axis)
    b = (b != 0).astype(_np.uint8)
    n = b.shape[-1]
    pad = -n % 8
    if pad:
        b = concatenate((b, F["zeros"](tuple(b.shape[:-1]) + (pad,), _np.uint8)), -1,
                        _kind=ndarray)
    b = reshape(b, tuple(b.shape[:-1]) + ((n + pad) // 8, 8), _kind=ndarray)
    weights = _const(_np.array([1 << (i if little else 7 - i) for i in range(8)], _np.uint8),
                     ndarray)
    r = F["sum"](b * weights, -1, dtype=_np.uint8, _kind=ndarray)
    return _as(kind, F["moveaxis"](r, -1, ax, _kind=ndarray))


@implements(_np.unpackbits)
def unpackbits(a, axis=None, count=None, bitorder="big", *, _kind=None):
    """NumPy's unpackbits: each uint8 as its eight bits along axis, then
    the first count of them (count < 0 drops that many from the end; a
    count past the end pads with zeros)."""
    F = _hnp()
    kind = _kind or _kind_of(a)
    arr = _arr(a, "unpackbits")
    if arr.dtype != _np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if count is not None:
        count = operator.index(count)
    little = _bitorder(bitorder)
    b, ax = _bits_axis(arr, axis)
    n = b.shape[-1]
    shifts = _const(_np.array([i if little else 7 - i for i in range(8)], _np.uint8), ndarray)
    bits = (expand_dims(b, -1, _kind=ndarray) >> shifts) & _np.uint8(1)
    bits = reshape(bits, tuple(b.shape[:-1]) + (8 * n,), _kind=ndarray)
    if count is not None:
        if count < 0 and -count > 8 * n:
            raise ValueError("-count larger than number of elements")
        if count > 8 * n:
            bits = concatenate((bits, F["zeros"](tuple(bits.shape[:-1]) + (count - 8 * n,),
                                                 _np.uint8)), -1, _kind=ndarray)
        else:
            bits = bits[..., :count if count >= 0 else 8 * n + count]
    return _as(kind, F["moveaxis"](bits, -1, ax, _kind=ndarray))
