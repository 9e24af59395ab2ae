"""Indexing of hop.numpy arrays: NumPy's basic indexing (ints, slices,
None, ...), integer-array (advanced) indexing and boolean masks.

Basic indexing gives views (select/slice/unsqueeze ops; a negative step
takes the elements in reverse).  An integer array index is a `take`, whose
indices are checked when it runs (an index out of range is an IndexError,
hop.OutOfBoundsError, as NumPy's).  A boolean mask is its nonzero(): so
x[x > 0] has a size known only at run time, an unbacked symbol (u0) that is
lifted into HOP bodies like any size.  Several advanced indices broadcast
together and, as in NumPy, their dims go where the first one was when they
are adjacent, else first.

Assignment (x[key] = v) writes a concrete array's memory with NumPy itself.
A traced array (one the function made, see _ndarray) gets a new value: a
`where` over the selected elements for ints, step-1 slices and boolean
masks; other keys are a hop.UnsupportedError.
"""

import numbers

import numpy as _np

from .. import _C
from . import _core
from ._ndarray import ndarray, wrap

__all__ = ["getitem", "setitem"]


def _is_int(k):
    return (isinstance(k, (numbers.Integral, _np.integer, _C.SymInt)) and
            not isinstance(k, (bool, _np.bool_)))


def _index_tensor(k):
    """An array index as a tensor (bool or integer), or None for a basic one."""
    if isinstance(k, (list, tuple)):
        if not k or all(isinstance(v, (bool, _np.bool_)) for v in k) or \
                any(isinstance(v, (list, tuple, ndarray, _C.Tensor, _np.ndarray)) for v in k) or \
                all(_is_int(v) for v in k):
            from ._funcs import array
            return array(list(k), dtype=None if k else _np.intp)._t
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
                         "and integer or boolean arrays are valid indices")
    if isinstance(k, (ndarray, _C.Tensor, _np.ndarray)) or \
            getattr(type(k), "__hop_tensor__", None) is not None:
        t = _core.tensor_of(k)
        kind = _core.np_dtype(t).kind
        if kind not in "biu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        return t
    return None


def _normalize(key, ndim):
    """(items, advanced): key expanded to one item per dim plus None items,
    Ellipsis replaced; advanced is whether an array index is among them."""
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    adv = False
    for k in key:
        if isinstance(k, (bool, _np.bool_)):
            raise _C.UnsupportedError("hop.numpy: indexing with a Python bool is not supported")
        t = _index_tensor(k)
        if t is not None:
            if _core.np_dtype(t) == _np.dtype(bool):
                adv = True
                items.append(("mask", t))
            elif t.ndim == 0 and not _C._is_proxy(t) and not _core.tracing() and \
                    not _core._recording():
                items.append(("int", int(t.item())))
            else:
                adv = True
                items.append(("array", t))
        elif k is None:
            items.append(("none", None))
        elif k is Ellipsis:
            items.append(("ellipsis", None))
        elif isinstance(k, slice):
            items.append(("slice", k))
        elif _is_int(k):
            items.append(("int", k if isinstance(k, _C.SymInt) else int(k)))
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                             "(`None`) and integer or boolean arrays are valid indices")
    consumed = sum(it[1].ndim if it[0] == "mask" else 1 for it in items
                   if it[0] not in ("none", "ellipsis"))
    nell = sum(it[0] == "ellipsis" for it in items)
    if nell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{consumed} were indexed")
    out = []
    for it in items:
        if it[0] == "ellipsis":
            out.extend([("slice", slice(None))] * (ndim - consumed))
        else:
            out.append(it)
    if nell == 0:
        out.extend([("slice", slice(None))] * (ndim - consumed))
    return out, adv


def _slice(t, dim, s):
    """t[..., s, ...] at dim: a view for steps > 0; reversed elements
    (take) for negative ones."""
    start, stop, step = s.start, s.stop, 1 if s.step is None else s.step
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step > 0:
        if start is None and stop is None and step == 1:
            return t
        return t.slice(dim, start, stop, step)
    n = t.shape[dim]
    if not isinstance(n, int):
        raise _C.UnsupportedError("hop.numpy: a negative slice step over a symbolic size is not "
                                  "supported")
    idx = list(range(n))[slice(start, stop, step)]
    return _C._op("take", t, dim, _C.tensor(idx, dtype=_C.int64) if idx else
                  _C.zeros(0, dtype=_C.int64))


def _basic(t, items):
    """Basic indexing: (result, all dims taken by ints)."""
    dim = 0
    for kind, k in items:
        if kind == "none":
            t = t.unsqueeze(dim)
            dim += 1
        elif kind == "slice":
            t = _slice(t, dim, k)
            dim += 1
        else:  # int
            n = t.shape[dim]
            if isinstance(k, int) and isinstance(n, int) and not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {dim} with size {n}")
            t = t.select(dim, k)
    return t


def _checked(idx, n):
    """Index tensor idx into a dim of size n: wrapped to [0, n), each index
    checked when the program runs (take of arange(n))."""
    return _C._op("take", _C.arange(n), 0, idx)


def getitem(a, key):
    t = a._t
    items, adv = _normalize(key, t.ndim)
    if not adv:
        r = _basic(t, items)
        # a scalar only when ints took every dim (with `...` NumPy gives a view)
        has_ellipsis = key is Ellipsis or (isinstance(key, tuple) and
                                           any(k is Ellipsis for k in key))
        scalar = not has_ellipsis and r.ndim == 0 and \
            all(k != "slice" and k != "none" for k, _ in items)
        out = wrap(type(a), r, scalar=scalar)
        # NumPy gives a view: neither may be updated in place while traced
        a._viewed = True
        out._owned = False
        return out
    if any(k == "none" for k, _ in items):
        raise _C.UnsupportedError("hop.numpy: None (numpy.newaxis) together with an array index "
                                  "is not supported")
    # Masks become their nonzero() index arrays (one per dim they cover).
    expanded = []
    dim = 0
    for kind, k in items:
        if kind == "mask":
            for i in range(k.ndim):
                n, m = t.shape[dim + i], k.shape[i]
                if isinstance(n, int) and isinstance(m, int) and n != m:
                    raise IndexError(f"boolean index did not match indexed array along dimension "
                                     f"{dim + i}; dimension is {n} but corresponding boolean "
                                     f"dimension is {m}")
            if k.ndim == 0:
                raise _C.UnsupportedError("hop.numpy: a 0-d boolean index is not supported")
            nz = k.nonzero()
            for i in range(k.ndim):
                expanded.append(("array", nz.select(1, i), True))
            dim += k.ndim
        else:
            expanded.append((kind, k, False))
            dim += 1
    # Integer indices are advanced too once an array index is present.
    adv_pos = [i for i, (kind, _, _) in enumerate(expanded) if kind in ("array", "int")]
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1))
    # Slices first (views), keeping every dim.
    for i, (kind, k, _) in enumerate(expanded):
        if kind == "slice":
            t = _slice(t, i, k)
    sizes = [t.shape[i] for i in adv_pos]
    idx = []
    for i in adv_pos:
        kind, k, from_mask = expanded[i]
        if kind == "int":
            k = _C.full((), k, dtype=_C.int64)
        idx.append(k if from_mask else _checked(k, t.shape[i]))
    # The advanced dims to the front, flattened into one, and one linear
    # index into it: sum(idx_i * stride_i), broadcast.
    rest = [i for i in range(t.ndim) if i not in adv_pos]
    t = t.permute(*(adv_pos + rest)) if t.ndim > 1 else t
    flat = 1
    for n in sizes:
        flat = flat * n
    t = t.reshape(flat, *[t.shape[len(adv_pos) + j] for j in range(len(rest))])
    lin = None
    stride = 1
    for k, n in zip(reversed(idx), reversed(sizes)):
        term = k * stride if stride != 1 else k
        lin = term if lin is None else lin + term
        stride = stride * n
    if len(idx) == 1 and lin.dtype is not _C.int64:
        lin = lin.to(_C.int64)
    r = _C._op("take", t, 0, lin)
    if adjacent and adv_pos[0] > 0:
        nb = lin.ndim
        order = list(range(nb, nb + adv_pos[0])) + list(range(nb)) + \
            list(range(nb + adv_pos[0], r.ndim))
        r = r.permute(*order)
    return wrap(type(a), r)


# ------------------------------------------------------------- assignment

def _to_numpy_key(key):
    if isinstance(key, tuple):
        return tuple(_to_numpy_key(k) for k in key)
    t = None
    if isinstance(key, (ndarray, _C.Tensor)) or getattr(type(key), "__hop_tensor__", None):
        t = _core.tensor_of(key)
    return t.numpy() if t is not None else key


def setitem(a, key, value):
    t = a._t
    if not _C._is_proxy(t) and not _core.tracing():
        v = value
        vt = _core.tensor_of(v) if not isinstance(v, (bool, int, float, complex)) else None
        t.numpy()[_to_numpy_key(key)] = vt.numpy() if vt is not None else v
        return
    what = "x[...] = value"
    items, adv = _normalize(key, t.ndim)
    vo = _core.operand(value, what)
    v = _core.cast(vo.t, a.dtype) if vo.t is not None else _C.full(
        (), _core.as_compute(vo, a.dtype), dtype=t.dtype)
    if adv:
        masks = [k for kind, k in items if kind == "mask"]
        if len(masks) != 1 or any(kind != "slice" or k != slice(None)
                                  for kind, k in items if kind != "mask") or \
                items[0][0] != "mask":
            raise _C.UnsupportedError("hop.numpy: while tracing, x[key] = value takes ints, "
                                      "slices and one leading boolean mask, not integer arrays")
        m = masks[0]
        for _ in range(t.ndim - m.ndim):
            m = m.unsqueeze(-1)
        new = _C.where(m, v, t)
    else:
        if any(kind == "none" for kind, _ in items):
            raise _C.UnsupportedError("hop.numpy: None in an assignment's index is not supported "
                                      "while tracing")
        region = None
        ints, partial = [], []
        for d, (kind, k) in enumerate(items):
            n = t.shape[d]
            ar = _C.arange(n)
            if kind == "int":
                if isinstance(k, int) and isinstance(n, int) and not -n <= k < n:
                    raise IndexError(f"index {k} is out of bounds for axis {d} with size {n}")
                sel = _C.eq(ar, k + n if isinstance(k, int) and k < 0 else k)
                ints.append(d)
            else:
                if k == slice(None):
                    continue
                if not isinstance(n, int):
                    raise _C.UnsupportedError("hop.numpy: a sliced assignment over a symbolic "
                                              "size is not supported while tracing")
                start, stop, step = k.indices(n)
                if step != 1:
                    raise _C.UnsupportedError("hop.numpy: a slice with a step in an assignment "
                                              "is not supported while tracing")
                sel = _C.logical_and(_C.ge(ar, start), _C.lt(ar, stop))
                partial.append(d)
            shape = [1] * t.ndim
            shape[d] = n
            sel = sel.reshape(shape)
            region = sel if region is None else _C.logical_and(region, sel)
        # The value is given over the region, whose dims are t's without the
        # int-indexed ones: put size-1 dims there, so it broadcasts to t.
        full = v
        keep = t.ndim - len(ints)
        if full.ndim > keep:
            raise ValueError(f"could not broadcast input array from shape {tuple(v.shape)} into "
                             f"the indexed region")
        full = full.reshape([1] * (keep - full.ndim) + list(full.shape))
        for d in ints:
            full = full.unsqueeze(d)
        for d in partial:
            if full.shape[d] != 1:
                raise _C.UnsupportedError(
                    "hop.numpy: while tracing, a sliced assignment takes a value that is the same "
                    "along the sliced dims (a scalar, or a row for x[1:3] = row), not "
                    f"one of shape {tuple(v.shape)}")
        if region is None:
            new = (full + _C.zeros(tuple(t.shape), dtype=t.dtype)).to(t.dtype)
        else:
            new = _C.where(region, full, t)
    a._assign(new, what)
