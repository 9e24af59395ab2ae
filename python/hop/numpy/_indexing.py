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

Assignment (x[key] = v) writes a concrete array's memory with NumPy itself,
and a traced array's storage through the same indexing applied to the
positions of its elements (_storage.write): any key NumPy takes.
"""

import builtins
import numbers

import numpy as _np

from .. import _C
from . import _core, _storage
from ._ndarray import ndarray, view, wrap
from ._storage import Step

__all__ = ["getitem", "setitem", "index_tensor", "whole_key", "numpy_key"]


def _is_int(k):
    return (isinstance(k, (numbers.Integral, _np.integer, _C.SymInt)) and
            not isinstance(k, (bool, _np.bool_)))


_ONLY = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer "
         "or boolean arrays are valid indices")


def _intp(v):
    """Integer index item v as NumPy reads it, an intp: one of uint64's range
    beyond it overflows (OverflowError), one beyond that is no index."""
    if -2**63 <= v < 2**63:
        return v
    if 0 < v < 2**64:
        raise OverflowError("Python int too large to convert to C long")
    raise IndexError(_ONLY)


def _index_tensor(k):
    """An array index as a tensor (bool or integer), or None for a basic one."""
    if isinstance(k, (list, tuple)):
        if not k or all(isinstance(v, (bool, _np.bool_)) for v in k) or \
                any(isinstance(v, (list, tuple, ndarray, _C.Tensor, _np.ndarray)) for v in k) or \
                all(_is_int(v) for v in k):
            from ._funcs import array
            t = array(list(k), dtype=None if k else _np.intp)._t
            if _core.np_dtype(t).kind in "biu":
                return t
        raise IndexError(_ONLY)  # (a float among nested lists too: NumPy's)
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
    arrays0 = []  # the positions of 0-d integer arrays among items
    for k in key:
        if isinstance(k, (bool, _np.bool_)):
            # a 0-d mask: a new dim of size 1 or 0, an advanced index
            adv = True
            items.append(("mask0", bool(k)))
            continue
        t = _index_tensor(k)
        if t is not None:
            if _core.np_dtype(t) == _np.dtype(bool) and t.ndim == 0:
                adv = True
                concrete = not _C._is_proxy(t) and not _core.tracing() and \
                    not _core._recording()
                items.append(("mask0", bool(t.item()) if concrete else t))
            elif _core.np_dtype(t) == _np.dtype(bool):
                adv = True
                items.append(("mask", t))
            elif t.ndim == 0:
                # a NumPy scalar (a hop.numpy scalar: np.int64) is an integer;
                # a 0-d integer array one only in a full integer index (below)
                if not (isinstance(k, ndarray) and k._scalar):
                    arrays0.append(len(items))
                items.append(("int", t))
            else:
                adv = True
                items.append(("array", t))
        elif k is None:
            items.append(("none", None))
        elif k is Ellipsis:
            items.append(("ellipsis", None))
        elif isinstance(k, slice):
            items.append(("slice", k))  # its bounds read below (IndexErrors first)
        elif _is_int(k):
            items.append(("int", k if isinstance(k, _C.SymInt) else _intp(int(k))))
        else:
            raise IndexError(_ONLY)
    if arrays0 and not (len(items) == ndim and all(kind == "int" for kind, _ in items)):
        # NumPy reads a 0-d integer array as an integer only in a full
        # integer index (a scalar); elsewhere it is an advanced index (a
        # copy: b[np.array(1)] of a 2-d b, b[np.array(1), :], b[..., i0])
        adv = True
        for i in arrays0:
            items[i] = ("array", items[i][1])
    concrete = not _core.tracing() and not _core._recording()
    items = [(kind, int(k.item())) if kind == "int" and isinstance(k, _C.Tensor) and concrete and
             not _C._is_proxy(k) else (kind, k) for kind, k in items]
    consumed = sum(it[1].ndim if it[0] == "mask" else 1 for it in items
                   if it[0] not in ("none", "ellipsis", "mask0"))
    nell = sum(it[0] == "ellipsis" for it in items)
    if nell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{consumed} were indexed")
    # (a slice's bounds are read once the count of indices holds, as NumPy
    # does: x[0.5:] of a 0-d x is its IndexError, not the bounds' TypeError)
    items = [("slice", _slice_key(k)) if kind == "slice" else (kind, k) for kind, k in items]
    out = []
    for it in items:
        if it[0] == "ellipsis":
            out.extend([("slice", slice(None))] * (ndim - consumed))
        else:
            out.append(it)
    if nell == 0:
        out.extend([("slice", slice(None))] * (ndim - consumed))
    if not adv and len(out) - sum(kind == "int" for kind, _ in out) > _NPY_MAXDIMS:
        # (NumPy's limit, before hop's own of HOP_MAX_RANK dims)
        raise IndexError(f"number of dimensions must be within [0, {_NPY_MAXDIMS}], indexing "
                         f"result would have {len(out) - sum(k == 'int' for k, _ in out)}")
    return out, adv


_NPY_MAXDIMS = 32


# A slice's int bounds are clamped into these as NumPy's (CPython's
# PySlice_Unpack) are: no dim is longer, so x[-2**70:2**70] is x[:] (the
# step's lower bound keeps its negation in range).
_BOUNDS = ((-2**63, 2**63 - 1), (-2**63, 2**63 - 1), (1 - 2**63, 2**63 - 1))
# |bound| above which _slice makes a positive-step slice's bounds those of
# slice.indices (the op adds a dim's size to them)
_HUGE = 2**62


def _slice_key(s):
    """slice s with int (or SymInt) bounds, as NumPy reads them (a float is
    a TypeError; an int beyond int64 clamped, _BOUNDS)."""
    parts = []
    for v, (lo, hi) in zip((s.start, s.stop, s.step), _BOUNDS):
        if v is None or isinstance(v, _C.SymInt):
            parts.append(v)
            continue
        if not isinstance(v, int) or isinstance(v, bool):
            if isinstance(v, ndarray) and (v.ndim != 0 or v.dtype.kind not in "iu"):
                raise TypeError("only integer scalar arrays can be converted to a scalar index")
            if isinstance(v, (float, _np.floating)) or not hasattr(type(v), "__index__"):
                raise TypeError("slice indices must be integers or None or have an __index__ "
                                "method")
            v = v.__index__()
        parts.append(min(max(v, lo), hi))
    return slice(*parts)


def _slice(t, dim, s):
    """t[..., s, ...] at dim: a view for steps > 0; reversed elements
    (take) for negative ones."""
    start, stop, step = s.start, s.stop, 1 if s.step is None else s.step
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step > 0:
        if start is None and stop is None and step == 1:
            return t
        n = t.shape[dim]
        if isinstance(n, int) and builtins.any(type(v) is int and abs(v) > _HUGE
                                               for v in (start, stop, step)):
            # bounds near int64's ends (clamped there by _slice_key): the op's
            # own arithmetic on them would overflow; the same slice within n
            start, stop, _ = slice(start, stop, step).indices(n)
            step = min(step, max(n, 1))
        return t.slice(dim, start, stop, step)
    n = t.shape[dim]
    if not isinstance(n, int):
        if start is None and stop is None:
            # x[::-k] over a symbolic size: n-1, n-1-k, ... (ceil(n / k) of them)
            k = -step
            count = (n + (k - 1)) // k if k > 1 else n
            idx = (n - 1) - _C.arange(count) * k if k > 1 else (n - 1) - _C.arange(count)
            return _C._op("take", t, dim, idx)
        raise _C.UnsupportedError("hop.numpy: a negative slice step with bounds over a "
                                  "symbolic size is not supported")
    first, _, _ = slice(start, stop, step).indices(n)
    count = len(range(*slice(start, stop, step).indices(n)))
    idx = _C.arange(count) * step + first  # nodes, not a captured constant
    return _reversed_in_order(t, dim, idx)


def _reversed_in_order(t, dim, idx):
    """take(t, dim, idx) of a negative step laid out in t's memory order,
    as NumPy's view (a negative stride, the others t's) is: a sum of it adds
    in that order.  hop's take is C-ordered, so a concrete t whose order is
    not C is permuted into it, taken and permuted back (a traced t's
    strides are not known while tracing: C order, as hop.compile lays out
    what it computes)."""
    if t.ndim < 2 or _C._is_proxy(t) or t.is_contiguous():
        return _C._op("take", t, dim, idx)
    from ._storage import decide_order
    mem = decide_order([(tuple(t.shape), tuple(t.stride()))], t.ndim, "iter")
    if mem is None:
        return _C._op("take", t, dim, idx)
    r = _C._op("take", t.permute(*mem), mem.index(dim), idx)
    return r.permute(*[mem.index(d) for d in range(t.ndim)])


def _takes(items):
    """Whether _basic(t, items) takes elements (Step.copies): True for a
    negative step (NumPy's view), "index" for only a 0-d integer array
    (NumPy's copy too), else False."""
    if any(kind == "slice" and k.step is not None and k.step < 0 for kind, k in items):
        return True
    return "index" if any(kind == "int" and isinstance(k, _C.Tensor) for kind, k in items) \
        else False


def _basic(t, items):
    """Basic indexing: (result, all dims taken by ints)."""
    dim = 0
    axis = -1  # the axis of the array indexed that k indexes (NumPy's messages)
    concrete = not _C._is_proxy(t)
    for kind, k in items:
        axis += kind != "none"
        if kind == "none":
            if concrete:
                # NumPy's new axis has stride 0 (hop's unsqueeze, that of a
                # C-ordered one): a new leading dim of expand, moved there
                n = len(t.shape)
                t = t.expand((1,) + tuple(t.shape)).permute(
                    tuple(range(1, dim + 1)) + (0,) + tuple(range(dim + 1, n + 1)))
            else:
                t = t.unsqueeze(dim)
            dim += 1
        elif kind == "slice":
            t = _slice(t, dim, k)
            dim += 1
        elif isinstance(k, _C.Tensor):  # a 0-d integer array: checked when it runs
            t = _C._op("take", t, dim, k)
        else:  # int
            n = t.shape[dim]
            if isinstance(k, int) and isinstance(n, int) and not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            t = t.select(dim, k)
    return t


def _nonzero(mask):
    """mask.nonzero(), one node per mask and trace: x[m] and x[m] = v with
    the same mask then have the same unbacked size (y[m] = f(y[m]) needs no
    decision of u0 == u1)."""
    tr = _C.tracing()
    if tr is None or not _C._is_proxy(mask):
        return mask.nonzero()
    key = ("hop.numpy nonzero", id(mask))
    hit = tr.scratch.get(key)
    if hit is not None and hit[0] is mask and _C._proxy_live(hit[1]):
        return hit[1]
    nz = mask.nonzero()
    tr.scratch[key] = (mask, nz)
    return nz


_EMPTY_RESULT = ("Out of bound index found. This was previously ignored when the indexing "
                 "result contained no elements. In the future the index error will be raised. "
                 "This error occurs either due to an empty slice, or if an array has zero "
                 "elements even before indexing.\n(Use `warnings.simplefilter('error')` to turn "
                 "this DeprecationWarning into an error and get more details on the invalid "
                 "index.)")


def _checked(idx, n, dim, empty_rows=False):
    """Index tensor idx into a dim of size n: wrapped to [0, n), each index
    checked when the program runs (take of arange(n)).  empty_rows: the
    result has no elements (another dim of size 0), where NumPy 1.24 only
    warns (DeprecationWarning) for a concrete index out of range, whose
    positions then take none (a dim of size n > 0: position 0)."""
    if idx.dtype is _C.uint64:
        # NumPy reads an index array as intp, a uint64 one wrapping (2**64 - 1
        # is -1, the last element)
        idx = idx.to(_C.int64)
    if isinstance(n, int) and n == 0 and all(isinstance(d, int) for d in idx.shape) and \
            any(d for d in idx.shape) and all(d for d in idx.shape):
        # no index fits a dim of size 0 (take's shape rule would say so
        # as a ShapeError)
        first = int(idx.numpy().flat[0]) if not _C._is_proxy(idx) else 0
        raise IndexError(f"index {first} is out of bounds for axis {dim} with size 0")
    if isinstance(n, int) and not _C._is_proxy(idx):
        # a concrete index: NumPy's IndexError, naming the first index out
        # of range and the array's axis (take's would name its dim)
        bad = _np.flatnonzero((idx.numpy() < -n) | (idx.numpy() >= n))
        if bad.size and empty_rows and n > 0:
            _core.numpy_warns("an index out of range of an empty result", _EMPTY_RESULT,
                              DeprecationWarning)
            idx = _C.zeros(tuple(idx.shape), dtype=_C.int64)
        elif bad.size:
            raise IndexError(f"index {int(idx.numpy().flat[bad[0]])} is out of bounds for axis "
                             f"{dim} with size {n}")
    return _C._op("take", _C.arange(n), 0, idx)


def _broadcast_indices(idx):
    """The index arrays' shapes broadcast together (IndexError as NumPy's
    when they cannot; sizes known only at run time are left to the ops)."""
    shapes = [tuple(k.shape) for k in idx]
    if all(isinstance(d, int) for sh in shapes for d in sh):
        try:
            _np.broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                             "with shapes " + " ".join(str(sh).replace(" ", "")
                                                       for sh in shapes)) from None


def index_tensor(t, key):
    """t[key] for a tensor t: (result, view, scalar).  view is the function
    that makes the result from t when NumPy's result is a view (basic
    indexing), else None (advanced indexing copies); scalar: NumPy gives a
    scalar (ints took every dim)."""
    return _index(t, key)[:3]


def _index(t, key):
    """index_tensor's (result, view, scalar) and the key's items
    (_normalize's), which getitem reads again."""
    items, adv = _normalize(key, t.ndim)
    if not adv:
        fn = lambda x: _basic(x, items)  # noqa: E731
        r = fn(t)
        # a scalar only when ints took every dim (with `...` NumPy gives a view)
        has_ellipsis = key is Ellipsis or (isinstance(key, tuple) and
                                           any(k is Ellipsis for k in key))
        scalar = not has_ellipsis and r.ndim == 0 and \
            all(k != "slice" and k != "none" for k, _ in items)
        return r, fn, scalar, items
    return _advanced(t, items), None, False, items


def getitem(a, key):
    t = a._t
    if not _C._is_proxy(t) and _core.tracing() and a._run is not None and a._made_of_constants():
        r = _fold(a, t, key)
        if r is not None:
            return r
    r, fn, scalar, items = _index(t, key)
    if fn is None:
        keys = key if isinstance(key, tuple) else (key,)
        others = [k for k in keys if not (k is None or k is Ellipsis or isinstance(k, slice) or
                                          _is_int(k) and not isinstance(k, (bool, _np.bool_)))]
        if r.ndim >= 2 and others and all(_int0(k) for k in others):
            return _index_copy(a, keys, r)
        lead = items[0][1].ndim if items[0][0] == "mask" else 1
        if len(keys) == 1 and items[0][0] in ("array", "mask") and t.ndim - lead >= 2 and \
                all(kd == "slice" and v == slice(None) for kd, v in items[1:]):
            # (one index array or mask: the rows NumPy lays out in a's order)
            r = _rows_in_order(a, r, lead)
        if t.ndim == 1 and r.ndim >= 2 and len(keys) == 1 and \
                isinstance(keys[0], (ndarray, _np.ndarray)):
            # an index array that picks elements (no dims after it): NumPy
            # lays the result out as the index is (PyArray_NewLikeArray of
            # it: a Fortran-ordered key, a Fortran-ordered result)
            from ._ufuncs import in_memory_order
            return in_memory_order(type(a), (keys[0],), tuple(r.shape),
                                   lambda view, _: view(r).clone())
        return wrap(type(a), r)
    if scalar:
        # a NumPy scalar: a value, a copy of the element, not a view: a later
        # write to a does not reach it, nor an array NumPy makes of it
        # (np.atleast_2d(s)), and the plan's result for it is not the
        # caller's memory
        return wrap(type(a), r.clone(), scalar=True)
    nk = _static_key(key)
    takes = _takes(items)
    mem = traced_order(a) if takes is True and all(k == "slice" for k, _ in items) and \
        len(items) == t.ndim else None
    if mem is not None:
        # (a traced array's slices in its memory order, reversed there)
        pitems, back = [items[d] for d in mem], [mem.index(d) for d in range(t.ndim)]
        fn = lambda x: _basic(x.permute(*mem), pitems).permute(*back)  # noqa: E731
        r = fn(t)
    step = Step(fn, (lambda x: x[nk]) if nk is not None else None, copies=takes)
    return view(type(a), a, step, t=r)


def _rows_in_order(a, r, lead):
    """r, the rows of concrete array a that one index array or mask over its
    first `lead` dims picks (the key's dims, then the rows' dims, C-ordered),
    laid out as NumPy's: the key's dims outermost, the rows' dims in a's
    memory order (their strides largest first, ties in dim order; a row of a
    Fortran-ordered array stays Fortran-ordered).  Eagerly only: a traced
    array's layout is decided when the plan runs (C order)."""
    t = a._t
    if _C._is_proxy(t) or _core.tracing() or _core._recording():
        return r
    sub = list(range(lead, t.ndim))
    strides = a.strides
    perm = sorted(sub, key=lambda d: -abs(strides[d]))
    if perm == sub:
        return r
    nk = r.ndim - len(sub)
    order = list(range(nk)) + [nk + d - lead for d in perm]
    back = [order.index(i) for i in range(r.ndim)]
    return r.permute(*order).clone().permute(*back)


def traced_order(a):
    """The axes of traced array a outermost in memory first, when hop.compile
    knows them and they are not C order (memory_order, which records the
    decision), else None: a view hop makes by taking elements in reverse (a
    negative step, np.flip), which NumPy makes with a negative stride, is
    taken in that order, so that it is laid out as NumPy's view (a sum of it
    adds in that order).  A concrete array's take is laid out by
    _reversed_in_order.  (An ndarray, a list, a hop.Tensor: None, none is
    a traced hop.numpy array.)"""
    from ._ufuncs import memory_order
    t = getattr(a, "_t", None) if isinstance(a, ndarray) else None
    if t is None or t.ndim < 2 or not _C._is_proxy(t):
        return None
    return memory_order(type(a), (a,), t.ndim)


def _int0(k):
    """Whether index item k is a 0-d integer array (not a bool one)."""
    return isinstance(k, (_np.ndarray, ndarray, _C.Tensor)) and k.ndim == 0 and \
        _np.dtype(k.dtype).kind in "iu"


def _index_copy(a, keys, r):
    """a[keys] whose only arrays are 0-d integer ones, whose elements r
    holds: NumPy indexes by their ints (HAS_SCALAR_ARRAY) and copies that
    view in its memory order (PyArray_NewCopy(view, NPY_KEEPORDER)): of a
    Fortran-ordered a a Fortran-ordered result.  The view's order is read
    of a's view at 0 in those places (the same dims, strides and order;
    a's layout is recorded for hop.compile as a copy's is)."""
    from ._ufuncs import in_memory_order
    at0 = tuple(0 if _int0(k) else k for k in keys)
    return in_memory_order(type(a), (getitem(a, at0),), tuple(r.shape),
                           lambda view, _: view(r).clone())


def _fold(a, t, key):
    """a[key] of an array the traced function made from constants
    (np.linspace(0, 1, 5) and not written since): computed now by NumPy, so
    that it stays a value (float(a[2]), a loop over a.tolist()); None for
    a key with a traced part.  A view is still a view of a's storage."""
    nk = _static_key(key)
    if nk is None or any(isinstance(k, (list, _np.ndarray)) for k in
                         (nk if isinstance(nk, tuple) else (nk,))):
        return None
    v = t.numpy()[nk]
    if isinstance(v, _np.generic):
        return wrap(type(a), _C.asarray(_np.asarray(v)), scalar=True)
    return view(type(a), a, Step(lambda x: _basic(x, _normalize(key, x.ndim)[0]),
                                 lambda x: x[nk], copies=_takes(_normalize(key, t.ndim)[0])),
                t=_C.asarray(v))


def _static_key(key):
    """key as NumPy indexes an ndarray with it, when it holds no traced
    value or SymInt (for deciding NumPy's views on offsets); else None."""
    keys = key if isinstance(key, tuple) else (key,)
    for k in keys:
        if isinstance(k, _C.SymInt) or isinstance(k, (ndarray, _C.Tensor)) or \
                (isinstance(k, slice) and any(isinstance(v, _C.SymInt)
                                              for v in (k.start, k.stop, k.step))):
            return None
    # (x[None] is x[(None,)]: None itself would read as "traced")
    return (None,) if key is None else key


def _advanced(t, items):
    # None and a 0-d mask add a size-1 dim: None then is a slice of it (it
    # separates advanced indices, as in NumPy), a 0-d mask an index array
    # of length 1 (True) or 0 (False) into it
    dim = 0
    new_items = []
    added = set()  # the positions of those dims (not the array's own, for messages)
    for kind, k in items:
        if kind in ("none", "mask0"):
            t = t.unsqueeze(dim)
            added.add(len(new_items))
            if kind == "none":
                new_items.append(("slice", slice(None)))
            elif isinstance(k, bool):
                new_items.append(("index", _C.zeros((1 if k else 0,), dtype=_C.int64)))
            else:
                new_items.append(("mask", k.reshape(1)))
            dim += 1
        else:
            new_items.append((kind, k))
            dim += k.ndim if kind == "mask" else 1
    items = new_items
    # Masks become their nonzero() index arrays (one per dim they cover).
    expanded = []
    dim = 0
    axes = []  # the array's axis each of expanded's indexes (None: an added dim)
    for j, (kind, k) in enumerate(items):
        axes.extend([None if j in added else dim - sum(p < j for p in added) + i
                     for i in range(k.ndim if kind == "mask" else 1)])
        if kind == "index":  # in range already
            expanded.append(("array", k, True))
            dim += 1
        elif kind == "mask":
            for i in range(k.ndim):
                n, m = t.shape[dim + i], k.shape[i]
                if isinstance(n, int) and isinstance(m, int) and n != m:
                    raise IndexError(f"boolean index did not match indexed array along dimension "
                                     f"{dim + i}; dimension is {n} but corresponding boolean "
                                     f"dimension is {m}")
            if k.ndim == 0:
                raise _C.UnsupportedError("hop.numpy: a 0-d boolean index is not supported")
            nz = _nonzero(k)
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
    # (a dim left whole of size 0: the result has no elements, where NumPy
    # 1.24 only warns for an index out of range)
    empty_rows = any(type(t.shape[i]) is int and t.shape[i] == 0
                     for i in range(t.ndim) if i not in adv_pos)
    idx = []
    for i in adv_pos:
        kind, k, from_mask = expanded[i]
        if kind == "int":
            k = _C.full((), k, dtype=_C.int64)
        idx.append(k if from_mask else _checked(k, t.shape[i], axes[i], empty_rows))
    _broadcast_indices(idx)
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
    return r



# ------------------------------------------------------------- assignment

def numpy_key(key):
    """key with its hop arrays as ndarrays (for NumPy's own indexing of a
    concrete array's memory)."""
    if isinstance(key, tuple):
        return tuple(numpy_key(k) for k in key)
    if isinstance(key, list):
        return [numpy_key(k) for k in key]
    t = None
    if isinstance(key, (ndarray, _C.Tensor)) or getattr(type(key), "__hop_tensor__", None):
        t = _core.tensor_of(key)
    return t.numpy() if t is not None else key


def whole_key(key, ndim):
    """Whether key selects every element as they are (x[...] = v, x[:] = v)."""
    keys = key if isinstance(key, tuple) else (key,)
    if len(keys) > ndim + 1:
        return False
    seen_ellipsis = False
    for k in keys:
        if k is Ellipsis and not seen_ellipsis:
            seen_ellipsis = True
        elif not (isinstance(k, slice) and k == slice(None)):
            return False
    return len(keys) - seen_ellipsis <= ndim


def _plain_items(seq):
    """Whether nested list/tuple seq holds only Python and NumPy scalars,
    str, bytes and None (no array, tensor or traced value)."""
    return all(_plain_items(x) if isinstance(x, (list, tuple)) else
               x is None or type(x) in (bool, int, float, complex, str, bytes) or
               isinstance(x, _np.generic) for x in seq)


def _float_as_long(value, npd):
    """A Python float as NumPy's setitem of an integer dtype reads it (its
    MyPyLong_AsLong: int(value), then a C long; uint32 and uint64 take an
    unsigned long too): an int in [-2**63, 2**63), or [-2**63, 2**64) for
    uint32/uint64, that the dtype then wraps (1e10 into int32 is
    1410065408); NaN's ValueError, inf's and a wider value's OverflowError."""
    i = int(value)
    hi = 2**64 if npd in (_np.dtype(_np.uint32), _np.dtype(_np.uint64)) else 2**63
    if not -2**63 <= i < hi:
        raise OverflowError("Python int too large to convert to C long")
    return i


def _sequence_fits(a, key, ndim):
    """NumPy's ValueError for a Python sequence of ndim dimensions written to
    a[key] of fewer (a[0, 0] = [1]; an array value broadcasts instead), for a
    basic key (ints, slices, Ellipsis, None) of an array of known shape."""
    keys = key if isinstance(key, tuple) else (key,)
    shape = tuple(a.shape)
    if not ndim or not all(type(d) is int for d in shape) or not all(
            k is None or k is Ellipsis or isinstance(k, slice) or type(k) is int for k in keys):
        return
    try:
        target = _np.lib.stride_tricks.as_strided(_np.zeros(1), shape, (0,) * len(shape))[key]
    except (IndexError, TypeError, ValueError):
        return  # (the write raises NumPy's error for the key)
    if ndim > target.ndim:
        raise ValueError("setting an array element with a sequence." + (
            f" The requested array would exceed the maximum number of dimension of "
            f"{target.ndim}." if target.ndim else ""))


def setitem(a, key, value):
    """a[key] = value with NumPy's casting (unsafe: 2.7 into an int array is
    2) and broadcasting, for any key NumPy takes."""
    what = "x[...] = value"
    npd = a.dtype
    number = isinstance(value, (bool, int, float, complex, _np.generic))
    if (not number and _core.tensor_of(value) is None and
            not isinstance(value, (list, tuple, _C.SymInt))) or (npd.kind != "c" and (
            isinstance(value, complex) or (isinstance(value, _np.generic) and
                                           value.dtype.kind == "c"))):
        # NumPy's conversion of the item: None a NaN, a str parsed, any
        # other object's float() or int() (a Decimal, a Fraction), a
        # complex into a real array its TypeError, a complex NumPy scalar
        # its real part with a ComplexWarning; NumPy's errors
        from ._funcs import _numpys_item
        value = _numpys_item(value, npd)
    elif isinstance(value, (list, tuple)) and _plain_items(value):
        # NumPy converts a sequence of numbers (str, None) item by item into
        # the array's dtype, as np.array(value, dtype) does, with its errors:
        # a complex into a real array a TypeError, NaN into an int one a
        # ValueError (hop cast the array it made of the list: [0., 2.], -2**63);
        # an out-of-bound int's DeprecationWarning on every compiled call
        import warnings
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "NumPy will stop allowing conversion of "
                                    "out-of-bound", DeprecationWarning)
            converted = _np.array(value, dtype=npd)
        _core.python_ints_warn(value, npd, what)
        _sequence_fits(a, key, converted.ndim)
        value = converted
    if number and not _C._is_proxy(a._tv) and _storage.current() is None:
        # eagerly NumPy writes a number itself (a._write: into the array's
        # memory): its conversion, its checks in its order (the key's
        # first), its warnings (an out-of-bound Python int's
        # DeprecationWarning, a cast's overflow) and errors
        a._write(key, value, what)
        return
    if npd.kind == "c" and (isinstance(value, (bool, int, float, complex)) or
                            isinstance(value, _np.number)):
        v = _core.complex_scalar(complex(value), npd)  # any number fits a complex array
    elif isinstance(value, (bool, int, float)) or isinstance(value, _np.generic):
        # (a complex one only into a complex array: converted above)
        _core.python_ints_warn(value, npd, what)
        if npd.kind in "iu" and type(value) is float:
            value = _float_as_long(value, npd)
        with _np.errstate(all="ignore"):
            cv = _np.asarray(value).astype(npd) if not isinstance(value, float) or \
                npd.kind == "f" else _np.asarray(_np.float64(value)).astype(npd)
        v = _C.full((), cv.item(), dtype=a._tv.dtype)
    elif isinstance(value, complex):
        raise TypeError("can't convert complex to float")
    else:
        run = _storage.current()
        if run is not None and isinstance(value, ndarray) and not value._scalar and \
                _advanced_key(key) and \
                _storage.storage_of(value, run) is _storage.storage_of(a, run):
            _overlapping_value(what)
        if run is None and isinstance(value, ndarray) and _advanced_key(key) and \
                _numpy_assigns(a, key, value):
            return
        vo = _core.operand(value, what)
        if vo.t is not None:
            _core.complex_cast_warns(_core.np_dtype(vo.t), a.dtype, what)
            v = _core.cast(vo.t, a.dtype)
        else:
            v = _C.full((), _core.as_compute(vo, a.dtype), dtype=a._tv.dtype)
    a._write(key, v, what)


def _numpy_assigns(a, key, value):
    """Eagerly, x[key] = v with an advanced key and a value over x's own
    memory NumPy assigns itself on its views of both, element by element
    in the index's order, reading the value as it goes (`v[[0, -1]] =
    v[::-1]` of v = a[1:]: hop read its copy of the reversed view whole,
    silently; open until the forty-seventh session); True when it did."""
    if value._scalar or a._ro or _C._is_proxy(a._tv) or _C._is_proxy(value._tv):
        return False
    if a._cp is not None and _storage.numpy_of_copy(a) is None:
        return False  # (hop's copy alone: no NumPy view of the memory to write)
    dst, src = _np.asarray(a), _np.asarray(value)
    if not _np.may_share_memory(dst, src) or not _np.shares_memory(dst, src):
        return False
    keys = tuple(_np.asarray(k) if isinstance(k, ndarray) else k for k in key) \
        if isinstance(key, tuple) else _np.asarray(key) if isinstance(key, ndarray) else key
    try:
        dst[keys] = src
    finally:
        _storage.numpy_may_write()  # (hop's copies of that memory read it again)
    return True


def _advanced_key(key):
    """Whether key has an index array, a list or a mask (NumPy's advanced
    indexing), not only ints, slices, None and Ellipsis."""
    keys = key if isinstance(key, tuple) else (key,)
    return any(not (k is None or k is Ellipsis or isinstance(k, (slice, int, _np.integer)) or
                    isinstance(k, ndarray) and k._scalar) for k in keys)


def _overlapping_value(what, key="an index array or mask"):
    """A traced x[key] = v with an advanced key and a value over x's own
    memory (`a[idx] = a`, `v[[0, -1]] = v[::-1]`): NumPy 1.24 assigns
    element by element in the index's order, reading the value as it goes
    (what it wrote already included), where a traced put reads the value
    whole; the compiled part ends here, so the statement runs in Python
    (hop.trace: UnsupportedError).  Before the forty-fifth session the plan
    read it whole, silently (`a[b[::-1]] = a` of b = [0, 0, 1, 5, 5, 2]:
    [6, 4, 1, ...] where NumPy and eager give [1, 4, 1, ...])."""
    from .._breaks import conversion
    conversion(_C.UnsupportedError,
               f"hop.numpy: {what} with {key} and a value over the array's "
               f"own memory: NumPy assigns element by element reading the value as it goes, "
               f"which a traced write does not reproduce (copy the value first: `v.copy()`)")
