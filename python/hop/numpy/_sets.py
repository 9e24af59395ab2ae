"""NumPy's set routines on hop arrays (numpy.lib.arraysetops): unique
(with index, inverse, counts, axis and equal_nan), in1d, isin, union1d,
intersect1d (with return_indices), setdiff1d, setxor1d and ediff1d, with
NumPy 1.24's semantics.

Their result sizes follow the data: unbacked symbols under hop.trace and
hop.compile.  Values compare in NumPy's order of complex numbers (_corder).
"""

import numpy as _np

from .. import _C, _exact
from . import _core, _corder
from . import _funcs as F
from ._funcs import _axis_tuple, _kind_of, _t, implements
from ._ndarray import ndarray, result_kind, wrap
from ._sorting import lexsort

__all__ = []


# ------------------------------------------------------------ unique, sets

@implements(_np.unique)
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, _kind=None):
    kind = _kind or _kind_of(ar)
    t = _t(ar, "unique")
    if axis is not None:
        return _unique_axis(t, return_index, return_inverse, return_counts, axis, kind)
    res = _unique1d(t.reshape(-1), return_index, return_inverse, return_counts, equal_nan)
    res = tuple(wrap(kind, r) for r in res)
    return res[0] if len(res) == 1 else res


def _unique1d(t, return_index, return_inverse, return_counts, equal_nan):
    n = t.shape[0]
    # NumPy's sorts: a stable argsort for the indices, else a quicksort
    # (of the values, or an argsort for the inverse), whose order of equal
    # elements decides which of -0.0 and 0.0 a run keeps
    kind = _corder.STABLE if return_index else _corder.QUICK
    perm = _corder.argsort_any(t, 0, kind)
    aux = _C._op("take", t, 0, perm)
    if not return_index and not return_inverse and _core.checking():
        flag = F._ties_unknown(t, 0, "sort")  # NumPy's ar.sort() (AVX-512 for float32)
        if flag is not None:
            aux = _exact.checked(_core.unknown_if(flag, aux, _core.CHECK_TIES))
    if isinstance(n, int) and n == 0:
        mask = _C.zeros((0,), dtype=_C.bool)
    elif isinstance(n, int):
        head = _C.ones((1,), dtype=_C.bool)
        a1, a0 = aux.slice(0, 1, None, 1), aux.slice(0, 0, -1, 1)
        mask = _C.cat([head, _first_of_run(a1, a0, equal_nan)], 0)
    else:
        # a size known only at run time (the input of a unique already):
        # each element against the one before it, all of size n
        pos = _C.arange(n)
        prev = _C._op("take", aux, 0, _C.maximum(pos - 1, 0))
        mask = _C.logical_or(_C.eq(pos, 0), _first_of_run(aux, prev, equal_nan))
    keep = mask.nonzero().select(1, 0)
    ret = (_C._op("take", aux, 0, keep),)
    if return_index:
        ret += (_C._op("take", perm, 0, keep),)
    if return_inverse:
        imask = _C.cumsum(mask.to(_C.int64), 0) - 1
        inv = _C._op("put", _C.zeros((n,), dtype=_C.int64), perm, imask, False)
        ret += (inv,)
    if return_counts:
        ends = _C.cat([keep, _C.full((1,), n, dtype=_C.int64)], 0)
        ret += (ends.slice(0, 1, None, 1) - ends.slice(0, 0, -1, 1),)
    return ret


def _first_of_run(a1, a0, equal_nan):
    """a1 != a0 (each sorted element against the one before), nans equal
    under equal_nan (they sort last, all together)."""
    diff = _C.ne(a1, a0)
    kind = _core.np_dtype(a1).kind
    if equal_nan and kind in "fc":
        # a complex value with a NaN in either part is a NaN (np.isnan)
        nan1, nan0 = (_C.ne(a1, a1), _C.ne(a0, a0)) if kind == "f" else \
            (_corder.either_nan(a1), _corder.either_nan(a0))
        both = _C.logical_and(nan1, nan0)
        diff = _C.logical_and(diff, _C.logical_not(both))
    return diff


def _unique_axis(t, return_index, return_inverse, return_counts, axis, kind):
    # NumPy's unique moves the axis to the front (np.moveaxis(ar, axis, 0):
    # normalize_axis_tuple's errors as moveaxis gives them) and raises an
    # AxisError without moveaxis's "source: " prefix
    try:
        src = _axis_tuple(axis, t.ndim, "source")
    except _np.AxisError:
        raise _np.AxisError(axis, t.ndim) from None
    if len(src) != 1:
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    ax = src[0]
    m = t.permute(*([ax] + [d for d in range(t.ndim) if d != ax])) if t.ndim > 1 else t
    k = 1
    for d in m.shape[1:]:
        k = k * d
    rows = m.reshape(m.shape[0], k)
    n = rows.shape[0]
    if not isinstance(k, int):
        raise _C.UnsupportedError("hop.numpy: unique along an axis with symbolic sizes is not "
                                  "supported")
    # lexicographic order of the rows (the first column decides first); NumPy
    # sorts the rows as a structured array, by its fields' compare functions:
    # float16's (HALF_compare) puts a NaN before every number, the other
    # floats' after
    keys = []
    for j in range(k - 1, -1, -1):
        col = rows.select(1, j)
        keys.append(col)
        if _core.np_dtype(rows) == _np.float16:
            keys.append(_C.eq(col, col))  # False (a NaN) first
    perm = _t(lexsort(keys, _kind=ndarray)) if k else _C.arange(n)
    srt = _C._op("take", rows, 0, perm)
    if isinstance(n, int) and n == 0:
        mask = _C.zeros((0,), dtype=_C.bool)
    else:
        differ = _C.any(_C.ne(srt.slice(0, 1, None, 1), srt.slice(0, 0, -1, 1)), [1], False) \
            if k else _C.zeros((n - 1,), dtype=_C.bool)
        mask = _C.cat([_C.ones((1,), dtype=_C.bool), differ], 0)
    keep = mask.nonzero().select(1, 0)
    u = _C._op("take", srt, 0, keep)
    u = u.reshape((u.shape[0],) + tuple(m.shape[1:]))
    if t.ndim > 1:
        inv_order = [0] * t.ndim
        order = [ax] + [d for d in range(t.ndim) if d != ax]
        for i, d in enumerate(order):
            inv_order[d] = i
        u = u.permute(*inv_order)
    ret = (wrap(kind, u),)
    if return_index:
        ret += (wrap(kind, _C._op("take", perm, 0, keep)),)
    if return_inverse:
        imask = _C.cumsum(mask.to(_C.int64), 0) - 1
        ret += (wrap(kind, _C._op("put", _C.zeros((n,), dtype=_C.int64), perm, imask, False)),)
    if return_counts:
        ends = _C.cat([keep, _C.full((1,), n, dtype=_C.int64)], 0)
        ret += (wrap(kind, ends.slice(0, 1, None, 1) - ends.slice(0, 0, -1, 1)),)
    return ret[0] if len(ret) == 1 else ret


@implements(_np.in1d)
def in1d(ar1, ar2, assume_unique=False, invert=False, *, kind=None, _kind=None):
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    a = _t(ar1, "in1d").reshape(-1)
    b = _t(ar2, "in1d").reshape(-1)
    if kind == "table" and not all(_core.np_dtype(x).kind in "uib" for x in (a, b)):
        raise ValueError("The 'table' method is only supported for boolean or integer arrays. "
                         "Please select 'sort' or None for kind.")
    a, b = _core.promote(a, b)
    bs = _corder.sort_any(b, 0)
    lo = _corder.searchsorted_any(bs, a, False)
    hi = _corder.searchsorted_any(bs, a, True)
    found = _C.gt(hi, lo)
    if _core.np_dtype(a).kind in "fc":  # NumPy compares with ==: a NaN is in nothing
        found = _C.logical_and(found, _C.eq(a, a))
    return wrap(_kind or result_kind((ar1, ar2), ndarray),
                _C.logical_not(found) if invert else found)


@implements(_np.isin)
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None, _kind=None):
    t = _t(element, "isin")
    r = _t(in1d(t, test_elements, assume_unique, invert, kind=kind, _kind=ndarray)).reshape(
        tuple(t.shape))
    return wrap(_kind or result_kind((element, test_elements), ndarray), r)  # 0-d: an array


@implements(_np.union1d)
def union1d(ar1, ar2, *, _kind=None):
    kind = _kind or result_kind((ar1, ar2), ndarray)
    a = _t(ar1).reshape(-1)
    b = _t(ar2).reshape(-1)
    return unique(F.concatenate((a, b), _kind=_C.Tensor), _kind=kind)


@implements(_np.intersect1d)
def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, _kind=None):
    kind = _kind or result_kind((ar1, ar2), ndarray)
    if return_indices:
        return _intersect1d_indices(ar1, ar2, assume_unique, kind)
    if assume_unique:  # NumPy's sorted concatenation, repeats and all
        return _intersect1d_indices(ar1, ar2, True, kind)[0]
    a = _t(unique(_t(ar1).reshape(-1), _kind=ndarray))
    b = _t(unique(_t(ar2).reshape(-1), _kind=ndarray))
    keep = _t(in1d(a, b, _kind=ndarray))
    # (NumPy's concatenation of both: their promoted dtype)
    a = _core.cast(a, _core.promoted_dtype([_t(ar1), _t(ar2)]))
    return wrap(kind, _C._op("take", a, 0, keep.nonzero().select(1, 0)))


def _intersect1d_indices(ar1, ar2, assume_unique, kind):
    """NumPy 1.24's intersect1d with return_indices, step for step."""
    a, b = _t(ar1).reshape(-1), _t(ar2).reshape(-1)
    if not assume_unique:
        a, ind1 = _unique1d(a, True, False, False, True)
        b, ind2 = _unique1d(b, True, False, False, True)
    aux = _C.cat([a, b], 0)
    order = _corder.argsort_any(aux, 0)  # stable, as NumPy's mergesort
    aux = _C._op("take", aux, 0, order)
    n = aux.shape[0]
    pos = _C.arange(n)
    nxt = _C._op("take", aux, 0, _C.minimum(pos + 1, n - 1))  # (sizes of size n only)
    mask = _C.logical_and(_C.eq(aux, nxt), _C.lt(pos, n - 1))
    sel = mask.nonzero().select(1, 0)
    int1d = _C._op("take", aux, 0, sel)
    i1 = _C._op("take", order, 0, sel)
    i2 = _C._op("take", order, 0, sel + 1) - a.shape[0]
    if not assume_unique:
        i1 = _C._op("take", ind1, 0, i1)
        i2 = _C._op("take", ind2, 0, i2)
    return wrap(kind, int1d), wrap(kind, i1), wrap(kind, i2)


@implements(_np.setdiff1d)
def setdiff1d(ar1, ar2, assume_unique=False, *, _kind=None):
    kind = _kind or result_kind((ar1, ar2), ndarray)
    a = _t(ar1).reshape(-1)
    if not assume_unique:
        a = _t(unique(a, _kind=ndarray))
    keep = _t(in1d(a, ar2, invert=True, _kind=ndarray))
    return wrap(kind, _C._op("take", a, 0, keep.nonzero().select(1, 0)))


@implements(_np.setxor1d)
def setxor1d(ar1, ar2, assume_unique=False, *, _kind=None):
    """NumPy 1.24's, step for step: the uniques of both (the arrays as
    given with assume_unique), concatenated (np.concatenate's dtype of the
    two: float16 and int64 make float64, where values of one array may meet),
    sorted, and the elements that differ from both neighbours."""
    kind = _kind or result_kind((ar1, ar2), ndarray)
    a, b = _t(ar1), _t(ar2)
    if not assume_unique:
        a = _t(unique(a.reshape(-1), _kind=ndarray))
        b = _t(unique(b.reshape(-1), _kind=ndarray))
    aux = F.concatenate((a, b), _kind=_C.Tensor)
    n = aux.shape[0] if aux.ndim == 1 else None
    if isinstance(n, int) and n == 0 or aux.ndim > 1 and 0 in tuple(aux.shape):
        return wrap(kind, aux)  # (NumPy's aux itself, unsorted)
    if aux.ndim != 1:
        # NumPy's concatenate(([True], aux[1:] != aux[:-1], [True]))
        raise ValueError(f"all the input arrays must have same number of dimensions, but the "
                         f"array at index 0 has 1 dimension(s) and the array at index 1 has "
                         f"{aux.ndim} dimension(s)")
    aux = _corder.sort_any(aux, 0)
    # (each element against its neighbours, by position: n may be known
    # only at run time; NaN != NaN keeps each NaN)
    pos = _C.arange(n)
    prev = _C._op("take", aux, 0, _C.maximum(pos - 1, 0))
    nxt = _C._op("take", aux, 0, _C.minimum(pos + 1, n - 1))
    keep = _C.logical_and(_C.logical_or(_C.eq(pos, 0), _C.ne(aux, prev)),
                          _C.logical_or(_C.eq(pos, n - 1), _C.ne(aux, nxt)))
    return wrap(kind, _C._op("take", aux, 0, keep.nonzero().select(1, 0)))


BOOL_SUBTRACT = ("numpy boolean subtract, the `-` operator, is not supported, use the "
                 "bitwise_xor, the `^` operator, or the logical_xor function instead.")


@implements(_np.ediff1d)
def ediff1d(ary, to_end=None, to_begin=None, *, _kind=None):
    kind = _kind or _kind_of(ary)
    t = _t(ary, "ediff1d").reshape(-1)
    parts = []
    dtype_req = _core.np_dtype(t)
    for v, name in ((to_begin, "to_begin"), (to_end, "to_end")):
        if v is not None and not _np.can_cast(_core.np_dtype(_t(v)) if isinstance(
                v, (ndarray, _C.Tensor, _np.ndarray)) else _np.asarray(v), dtype_req,
                casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the "
                            f"`same_kind` rule.")
    if t.dtype is _C.bool:  # NumPy's ary[1:] - ary[:-1] (after to_begin/to_end's checks)
        raise TypeError(BOOL_SUBTRACT)
    d = t.slice(0, 1, None, 1) - t.slice(0, 0, -1, 1)
    if to_begin is not None:
        parts.append(_core.cast(_t(to_begin).reshape(-1), dtype_req))
    parts.append(d)
    if to_end is not None:
        parts.append(_core.cast(_t(to_end).reshape(-1), dtype_req))
    return wrap(kind, _C.cat(parts, 0) if len(parts) > 1 else d)
