"""hop.Tensor's x[key] = value (its __setitem__; hop._C calls `setitem`).

Eagerly it writes x's memory, as PyTorch does, so every view of x sees it.
While tracing a tensor has no memory: its value is replaced by a new one
(dynamic_update_slice ops over the indexed region), which is the same thing
only when nothing else shares x's memory.  hop._C._rebind refuses the
others with an UnsupportedError saying why (an input of the function or of
a body, a value an outer body closes over, a view, a tensor with a live
view, a HOP's result or operand): write `x = x.clone()` first.

Keys: ints and SymInts (eager's ints while tracing: IndexError out of
range, as x[i]; a SymInt's range is checked when the plan runs), 0-d integer
tensors (dynamic: a negative index counts from the end, then it is clamped
into the dim, as x[i] reads it: JAX's dynamic_update_slice), slices with
step 1 (x[a:b] with int bounds; x[i:i + k] with a 0-d integer tensor i, the
dynamic slice x[i:i + k] reads), and one Ellipsis.  value is a tensor or a
Python number, converted to x's dtype and broadcast to the region (without
the dims an index drops).
"""

import numbers
import operator

from . import _C

__all__ = ["setitem"]


def _dynamic(k):
    return isinstance(k, _C.Tensor) and k.ndim == 0 and k.dtype != _C.bool and \
        not k.dtype.is_floating_point


def _start(a, n):
    """Python's start of x[a:] in a dim of n elements (n may be a SymInt)."""
    if a is None:
        return 0
    if not isinstance(a, _C.SymInt):
        a = operator.index(a)
    if isinstance(a, int) and isinstance(n, int):
        return slice(a, None).indices(n)[0]
    if a < 0:
        a = a + n
        return a if a >= 0 else 0
    return a if a <= n else n


def _parts(x, key):
    """The region key names in x: (dim, start, size, dropped) per indexed
    dim, start an int, a SymInt or a 0-d integer tensor (dynamic)."""
    keys = key if isinstance(key, tuple) else (key,)
    nell = sum(k is Ellipsis for k in keys)
    if nell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    rank = x.ndim
    if len(keys) - nell > rank:
        raise IndexError(f"too many indices for a tensor of {rank} dims: {len(keys) - nell} "
                         f"given")
    parts, d = [], 0
    for k in keys:
        if k is Ellipsis:
            d += rank - (len(keys) - nell)
            continue
        n = x.shape[d]
        full = [slice(None)] * d
        if isinstance(k, slice):
            if k.step is not None and operator.index(k.step) != 1:
                raise IndexError("hop.Tensor.__setitem__: a slice takes step 1 (x[a:b] = v)")
            if k != slice(None):
                # the region x[k] reads, with getitem's rules for its size
                size = x[tuple(full + [slice(k.start, k.stop)])].shape[d]
                start = k.start if _dynamic(k.start) else _start(k.start, n)
                parts.append((d, start, size, False))
        elif _dynamic(k):
            parts.append((d, k, 1, True))
        elif isinstance(k, _C.SymInt):
            parts.append((d, _checked(k, n), 1, True))
        elif isinstance(k, (bool, float, _C.Tensor)) or k is None or \
                not hasattr(type(k), "__index__"):
            raise TypeError(f"hop.Tensor indices of an assignment must be ints, slices, 0-d "
                            f"integer tensors or ..., not {type(k).__name__}")
        else:
            i = operator.index(k)
            if isinstance(n, int) and not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dim {d} with size {n}")
            parts.append((d, i if i >= 0 else n + i, 1, True))
        d += 1
    return parts


def _checked(k, n):
    """A SymInt index k of a dim of n elements as the start of its update:
    eager's k is an int, so out of [-n, n) it is an IndexError, not clamped.
    The start is element k of a stride-0 view of n copies of k: the select
    checks the range when the plan runs (as x[k] reads), and being the start
    it stays in the graph; dynamic_update_slice counts a negative start from
    the end."""
    return _C.full((), k, dtype=_C.int64).expand(n).select(0, k)


def _region(x, d, start, size):
    """The view x[..., start:start + size, ...] on dim d (kept)."""
    if isinstance(start, _C.Tensor):
        return _C._op("dynamic_slice", x, d, start, size)
    return x.slice(d, start, start + size)


def _value(x, parts, value):
    """value as a tensor of the region's shape and x's dtype."""
    shape = list(x.shape)
    for d, _, size, _ in parts:
        shape[d] = size
    dropped = [d for d, _, _, drop in parts if drop]
    vshape = [s for d, s in enumerate(shape) if d not in dropped]
    if not isinstance(value, _C.Tensor):
        from ._symfloat import SymFloat
        if isinstance(value, SymFloat):
            value = value._t
        elif isinstance(value, (numbers.Number, _C.SymInt)):
            value = _C.full((), value, dtype=x.dtype)
        else:
            value = _C.tensor(value)
    if value.dtype != x.dtype:
        value = value.to(x.dtype)
    try:
        value = value.expand(*vshape) if vshape or value.ndim else value
    except _C.ShapeError:
        raise _C.ShapeError(f"__setitem__: a value of shape {tuple(value.shape)} does not "
                            f"broadcast to the indexed region of shape {tuple(vshape)}") from None
    for d in dropped:  # in increasing order
        value = value.unsqueeze(d)
    return value


def _update(x, parts, u):
    """x with u written over the region of parts: nested dynamic updates."""
    d, start, size, _ = parts[0]
    inner = u if len(parts) == 1 else _update(_region(x, d, start, size), parts[1:], u)
    return _C._op("dynamic_update_slice", x, inner, d, start)


def setitem(x, key, value):
    """x[key] = value (see the module's text)."""
    traced = _C._is_proxy(x)
    if not traced and _C.tracing() is not None:
        raise _C.UnsupportedError(
            "__setitem__: cannot update a concrete tensor in place while tracing: the traced "
            "program would write memory of the caller's; compute a new tensor (x.clone(), "
            "then assign into that)")
    if traced:
        _C._rebind(x)
    parts = _parts(x, key)
    u = _value(x, parts, value)
    if not traced:
        region = x
        for d, start, size, _ in parts:
            region = _region(region, d, start, size)
        _C._write(region, u)
        return
    new = _update(x, parts, u) if parts else u.clone()
    _C._rebind(x, new)


_C._set_setitem(setitem)
