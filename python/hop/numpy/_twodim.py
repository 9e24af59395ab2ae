"""NumPy's two-dimensional helpers on hop arrays (numpy.lib.twodim_base
and the diagonals): tri, tril, triu, tril_indices and triu_indices (and
their _from forms), diagonal, trace, diag, diagflat, diag_indices (and
_from) and vander, with NumPy 1.24's semantics.

diagonal is a read-only view (see _storage), the others new arrays.  Index
arrays NumPy computes from sizes alone (tril_indices with int sizes) are
constants made by NumPy; with symbolic sizes they are traced.
"""

import builtins

import numpy as _np

from .. import _C
from . import _core
from ._funcs import _kind_of, _swap_axis, _t, _view, implements, nonzero, ones
from ._lib import _as, _const, _static
from ._ndarray import ndarray, wrap

__all__ = []


# ---------------------------------------------------------- triangles

def _tri_mask(n, m, k):
    """arange(n)[:, None] + k >= arange(m): the lower triangle below
    diagonal k (NumPy's tri with dtype bool)."""
    # (a negative size: NumPy's arange of it, empty)
    n, m = (builtins.max(x, 0) if type(x) is int else x for x in (n, m))
    return _C.ge(_C.arange(n).reshape(n, 1) + k, _C.arange(m).reshape(1, m))


def _int_size(x):
    """Whether tri's N, M or k is an integer hop makes its mask of: an int
    (a SymInt), an integer NumPy or hop scalar or 0-d array."""
    if isinstance(x, (int, _C.SymInt)) and not isinstance(x, bool):
        return True
    return isinstance(x, (ndarray, _np.ndarray, _np.generic)) and x.ndim == 0 and \
        x.dtype.kind in "iu"


@implements(name="tri")
def tri(N, M=None, k=0, dtype=float, *, like=None):
    if not all(_int_size(x) for x in (N, M, k) if x is not None):
        # NumPy's tri gives them to arange and compares them with int8's
        # bounds: a float is a size, an array of more than one element
        # raises the truth-value error (NumPy's own tri of their values)
        from ._stats import _concrete
        vals = [_concrete(x) if isinstance(x, ndarray) else x for x in (N, M, k)]
        if any(v is None and x is not None for v, x in zip(vals, (N, M, k))):
            raise _C.UnsupportedError("hop.numpy: tri of a traced size that is no integer")
        r = _np.tri(*vals, dtype=dtype)
        return ndarray(_C.asarray(_np.ascontiguousarray(r)))
    M = N if M is None else M
    return ndarray(_core.cast(_tri_mask(N, M, k), _np.dtype(dtype)))


def _tri_where(m, k, lower, kind, what):
    t = _t(m, what)
    if t.ndim == 0:
        raise ValueError("tril/triu of a 0-d array") from None
    n, c = (t.shape[-2], t.shape[-1]) if t.ndim >= 2 else (t.shape[-1], t.shape[-1])
    mask = _tri_mask(n, c, k if lower else k - 1)
    zero = _C.zeros((), dtype=t.dtype)
    r = _C.where(mask, t, zero) if lower else _C.where(mask, zero, t)
    return wrap(kind, r)


@implements(_np.tril)
def tril(m, k=0, *, _kind=None):
    return _tri_where(m, k, True, _kind or _kind_of(m), "tril")


@implements(_np.triu)
def triu(m, k=0, *, _kind=None):
    return _tri_where(m, k, False, _kind or _kind_of(m), "triu")


def _tri_indices(n, k, m, upper):
    m = n if m is None else m
    if _static(n, m, k):
        fn = _np.triu_indices if upper else _np.tril_indices
        return tuple(_const(x, ndarray) for x in fn(n, k, m))
    mask = _tri_mask(n, m, k - 1)
    if upper:
        mask = _C.logical_not(mask)
    return nonzero(ndarray(mask))


@implements(name="tril_indices")
def tril_indices(n, k=0, m=None):
    return _tri_indices(n, k, m, False)


@implements(name="triu_indices")
def triu_indices(n, k=0, m=None):
    return _tri_indices(n, k, m, True)


@implements(name="mask_indices")
def mask_indices(n, mask_func, k=0):
    """NumPy's: the indices where mask_func(ones((n, n), int), k) is not 0
    (mask_func a hop.numpy function such as triu, or any function of an
    array and k)."""
    a = mask_func(ones((n, n), int), k)
    return nonzero(a != 0)


def _tri_indices_from(arr, k, upper, kind):
    t = _t(arr)
    if t.ndim != 2:
        raise ValueError("input array must be 2-d")
    return tuple(_as(kind or _kind_of(arr), r)
                 for r in _tri_indices(t.shape[-2], k, t.shape[-1], upper))


@implements(_np.tril_indices_from)
def tril_indices_from(arr, k=0, *, _kind=None):
    return _tri_indices_from(arr, k, False, _kind)


@implements(_np.triu_indices_from)
def triu_indices_from(arr, k=0, *, _kind=None):
    return _tri_indices_from(arr, k, True, _kind)


# ------------------------------------------------------------ diagonals

def _diagonal_fn(nd, offset, a1, a2):
    """The view step of diagonal(offset, a1, a2) on an nd-dim tensor: the
    two axes go last, flattened, and the diagonal taken from them."""
    def fn(x):
        n1, n2 = x.shape[a1], x.shape[a2]
        rest = [d for d in range(nd) if d not in (a1, a2)]
        y = x.permute(*(rest + [a1, a2])) if nd > 2 or (a1, a2) != (0, 1) else x
        y = y.reshape(tuple(x.shape[d] for d in rest) + (n1 * n2,))
        if offset >= 0:
            count = builtins.max(0, builtins.min(n1, n2 - offset))
            start = offset
        else:
            count = builtins.max(0, builtins.min(n1 + offset, n2))
            start = -offset * n2
        idx = _C.arange(count) * (n2 + 1) + start
        return _C._op("take", y, y.ndim - 1, idx)
    return fn


@implements(_np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1, *, _kind=None):
    t = _t(a, "diagonal")
    if t.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    a1, a2 = _swap_axis(axis1, t.ndim, "axis1"), _swap_axis(axis2, t.ndim, "axis2")
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    return _view(_kind or _kind_of(a), a, _diagonal_fn(t.ndim, offset, a1, a2),
                 lambda x: _np.diagonal(x, offset, a1, a2), readonly=True, copies=True)


@implements(_np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None, *, _kind=None):
    from ._funcs import sum as _sum
    for ax in (axis1, axis2):  # (ndarray.trace reads its axes as normalize_axis_index does)
        if isinstance(ax, float):
            raise TypeError("integer argument expected, got float")
    d = diagonal(a, offset, axis1, axis2, _kind=ndarray)
    return _sum(d, axis=-1, dtype=dtype, out=out, _kind=_kind or _kind_of(a))


@implements(_np.diag)
def diag(v, k=0, *, _kind=None):
    kind = _kind or _kind_of(v)
    t = _t(v, "diag")
    k = int(k) if isinstance(k, bool) else k  # (NumPy's arithmetic on k: a bool is 0 or 1)
    if t.ndim == 1:
        n = t.shape[0]
        size = n + builtins.abs(k)
        rows = _C.arange(n) + builtins.max(-k, 0)
        cols = _C.arange(n) + builtins.max(k, 0)
        pos = rows * size + cols
        flat = _C.zeros((size * size,), dtype=t.dtype)
        return wrap(kind, _C._op("put", flat, pos, t, False).reshape(size, size))
    if t.ndim == 2:
        return diagonal(v, k, _kind=kind)
    raise ValueError("Input must be 1- or 2-d.")


@implements(_np.diagflat)
def diagflat(v, k=0, *, _kind=None):
    return diag(_t(v, "diagflat").reshape(-1), k, _kind=_kind or _kind_of(v))


@implements(name="diag_indices")
def diag_indices(n, ndim=2):
    idx = ndarray(_C.arange(n))
    return (idx,) * ndim


@implements(_np.diag_indices_from)
def diag_indices_from(arr, *, _kind=None):
    t = _t(arr)
    if not t.ndim >= 2:
        raise ValueError("input array must be at least 2-d")
    if builtins.any(n != t.shape[0] for n in t.shape):
        raise ValueError("All dimensions of input must be of equal length")
    # (NumPy's one array, ndim times; NumPy's class where arr is NumPy's)
    idx = _as(_kind or _kind_of(arr), diag_indices(t.shape[0])[0])
    return (idx,) * t.ndim


# ---------------------------------------------------------- Vandermonde

@implements(_np.vander)
def vander(x, N=None, increasing=False, *, _kind=None):
    kind = _kind or _kind_of(x)
    t = _t(x, "vander")
    if t.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = t.shape[0] if N is None else N
    dt = _np.promote_types(_core.np_dtype(t), int)
    cols = [_C.ones((t.shape[0],), dtype=_core.hop_dtype(dt, "vander"))] if n > 0 else []
    if n > 1:
        xt = _core.cast(t, dt)
        acc = xt
        cols.append(acc)
        for _ in range(2, n):
            acc = acc * xt
            cols.append(acc)
    if not increasing:
        cols = cols[::-1]
    if not cols:
        return wrap(kind, _C.zeros((t.shape[0], 0), dtype=_core.hop_dtype(dt, "vander")))
    return wrap(kind, _C.stack(cols, 1))
