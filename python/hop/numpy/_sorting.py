"""NumPy's sorting, searching and counting on hop arrays beyond _funcs'
sort, argsort, nonzero and argwhere: searchsorted, lexsort, partition and
argpartition, flatnonzero, count_nonzero, sort_complex and msort, with
NumPy 1.24's semantics and its order of complex numbers (_corder).

partition and argpartition sort fully (a valid partition; NumPy's
introselect leaves the other elements in an order of its own).
"""

import numpy as _np

from .. import _C
from . import _core, _corder
from . import _funcs as F
from ._funcs import _axes, _axis, _kind_of, _t, implements
from ._index_routines import _take_along
from ._ndarray import ndarray, result_kind, wrap

__all__ = []


# ------------------------------------------------------------- counting

@implements(_np.count_nonzero)
def count_nonzero(a, axis=None, *, keepdims=False, _kind=None):
    t = _t(a, "count_nonzero")
    nz = t if t.dtype is _C.bool else _C.ne(t, 0)
    if axis is None and not keepdims:
        c = _C.sum(nz.to(_C.int64), None, False)
        return int(c.item()) if not _C._is_proxy(c) else c.item()
    kind = _kind or _kind_of(a)
    dims = _axes(axis, t.ndim)
    from ._reductions import _finish, _reduced  # (NumPy's a.sum(axis): in its order)
    # (axis=(): NumPy's sum over no axis, a copy of the flags in a's order)
    r, order = _reduced(a, nz, dims, keepdims, kind, None,
                        lambda x, axes, kd: _core.over(_C.sum, x.to(_C.int64), axes, kd))
    return _finish(kind, r, order, None, "count_nonzero")


# ---------------------------------------------------------- searching

def _one_d(t):
    """t, a 1-d array argument of NumPy's searching functions; NumPy's error
    for another rank."""
    if t.ndim != 1:
        raise ValueError("object too deep for desired array" if t.ndim > 1 else
                         "object of too small depth for desired array")
    return t


@implements(_np.searchsorted)
def searchsorted(a, v, side="left", sorter=None, *, _kind=None):
    kind = _kind or _kind_of(a)
    if side not in ("left", "right"):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    at = _one_d(_t(a, "searchsorted"))
    vo = _core.operand(v, "searchsorted")
    dt = _core.result_dtype([_core.Opnd(t=at, dtype=_core.np_dtype(at)), vo], "searchsorted")
    if sorter is not None:
        st = _sorter(sorter, at.shape[0])
        if st is None:
            # NumPy's own search, which raises at an index outside a only
            # where its binary search reaches one
            from ._ufuncs import fallback
            return fallback(_np.searchsorted, "searchsorted", (a, v),
                            {"side": side, "sorter": sorter}, kind,
                            "numpy.searchsorted with a sorter index outside the array")
        at = _C._op("take", at, 0, st)
    vt = vo.t if vo.t is not None else _core.as_compute(vo, dt)
    if not isinstance(vt, _C.Tensor):
        vt = _C.full((), vt, dtype=_core.hop_dtype(dt, "searchsorted"))
    r = _corder.searchsorted_any(_core.cast(at, dt), _core.cast(vt, dt), side == "right")
    return wrap(kind, r, scalar=r.ndim == 0)


def _sorter(sorter, n):
    """searchsorted's sorter as NumPy 1.24 checks it before its search: a
    1-d integer array (else its TypeErrors) of a's size n; None where an
    index is outside [0, n), which NumPy's binary search refuses ("Sorter
    index out of range.") only if it reaches it, so the caller has NumPy
    search (hop.compile: a graph break on that path).  Traced, the range
    check is a decision on the data (hop.compile specialises on it)."""
    st = _t(sorter, "searchsorted")
    if st.ndim != 1:
        raise TypeError("could not parse sorter argument")
    if _np.dtype(_core.np_dtype(st)).kind not in "iu":
        raise TypeError("sorter must only contain integers")
    if st.shape[0] != n:
        raise ValueError("sorter.size must equal a.size")
    empty = isinstance(n, int) and n == 0
    if not empty and _core.decide(_C.any(_C.logical_or(_C.lt(st, 0), _C.ge(st, n)), None, False),
                                  "searchsorted's check of the sorter's indices"):
        return None
    return st


@implements(_np.flatnonzero)
def flatnonzero(a, *, _kind=None):
    t = _t(a, "flatnonzero").reshape(-1)
    return F.nonzero(t, _kind=_kind or _kind_of(a))[0]


# ---------------------------------------------------------------- sorting

@implements(_np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None, *, _kind=None):
    t = _t(a, "partition")
    check_select(kind, order)
    _check_kth(t, kth, axis, F._axis_index)  # (ndarray.partition's axis: normalize_axis_index's)
    return F.sort(a, axis, _kind=_kind)


@implements(_np.argpartition)
def argpartition(a, kth, axis=-1, kind="introselect", order=None, *, _kind=None):
    t = _t(a, "argpartition")
    check_select(kind, order)
    _check_kth(t, kth, axis, _axis)  # (argpartition's: PyArray_AxisConverter's)
    return F.argsort(a, axis, _kind=_kind)


def check_select(kind, order):
    """NumPy's checks of partition's kind (introselect, its only one; hop's
    partition is a full sort, which is one of NumPy's partitions) and order."""
    if isinstance(kind, bytes):
        kind = kind.decode("latin-1")
    if not isinstance(kind, str):
        raise TypeError(f"select kind must be str, not {type(kind).__name__}")
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")
    F.no_fields(order)


def _check_kth(t, kth, axis, read_axis):
    n = t.reshape(-1).shape[0] if axis is None else t.shape[read_axis(axis, t.ndim)] if t.ndim \
        else 1
    kth = _np.asarray(kth)
    if kth.dtype.kind not in "biu":  # (NumPy's: kth cast safely to intp; [] is float64)
        raise TypeError("Partition index must be integer")
    size = t.numel()
    if isinstance(size, int) and size == 0:  # (NumPy checks kth against a non-empty array only)
        return
    for k in _np.atleast_1d(kth).tolist():
        if isinstance(n, int) and not -n <= k < n:
            raise ValueError(f"kth(={k + n if k < 0 else k}) out of bounds ({n})")


@implements(_np.lexsort)
def lexsort(keys, axis=-1, *, _kind=None):
    if isinstance(keys, (list, tuple)):
        ks = [_t(k, "lexsort") for k in keys]
    else:
        t = _t(keys, "lexsort")
        ks = [t.select(0, i) for i in range(t.shape[0])]
    if not ks:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = tuple(ks[0].shape)
    for k in ks:
        if tuple(k.shape) != shape:
            raise ValueError("all keys need to be the same shape")
    if not shape:  # (0-d keys, a 1-d array's items: NumPy's intp scalar 0)
        return wrap(_kind or ndarray, _C.zeros((), dtype=_C.int64), scalar=True)
    ax = _axis(axis, len(shape))
    idx = _corder.argsort_any(ks[0], ax)
    for k in ks[1:]:
        kk = _take_along(k, idx, ax)
        order = _corder.argsort_any(kk, ax)
        idx = _take_along(idx, order, ax)
    return wrap(_kind or result_kind(list(keys) if isinstance(keys, (list, tuple)) else [keys],
                                     ndarray), idx)


@implements(_np.sort_complex)
def sort_complex(a, *, _kind=None):
    b = F.sort(a, -1, _kind=_kind or _kind_of(a))
    dt = b.dtype
    if dt.kind != "c":
        b = b.astype("F" if dt.char in "bhBH" else "D")
    return b


@implements(_np.msort)
def msort(a, *, _kind=None):
    return F.sort(a, 0, _kind=_kind or _kind_of(a))
