"""NumPy's polynomial functions on plain coefficient arrays
(numpy.lib.polynomial; hop.numpy has no poly1d class): polyval, polyfit,
poly, roots, polyint, polyder, polyadd, polysub, polymul, polydiv, and
trim_zeros, with NumPy 1.24's semantics.

Where NumPy's result size follows the data (the leading zeros poly1d
strips, polydiv's remainder, roots' zero coefficients) hop decides each
zero test on the data: hop.compile specialises on it, hop.trace raises a
TraceError saying why.
"""

import builtins
import operator

import numpy as _np

from .. import _C
from . import _core
from . import _funcs as F
from ._funcs import _kind_of, _size, _t, implements
from ._lib import _arr, _as
from ._mathfuncs import convolve
from ._ndarray import ndarray, result_kind, wrap

__all__ = []


@implements(_np.polyval)
def polyval(p, x, *, _kind=None):
    kind = _kind or result_kind((p, x), ndarray)
    pa = _arr(p)
    xa = _arr(x)
    y = F.zeros_like(xa, _kind=ndarray)
    for k in builtins.range(pa.shape[0]):
        y = y * xa + pa[k]
    return _as(kind, y)


@implements(_np.polyfit)
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False, *, _kind=None):
    """NumPy 1.24's polyfit step for step: a least-squares fit of the scaled
    Vandermonde matrix (hop.numpy.linalg.lstsq); the rank check that warns
    is a data-dependent decision (hop.compile specialises on it)."""
    import warnings
    from . import linalg
    kind = _kind or _kind_of(x, y)
    order = int(deg) + 1
    x = ndarray(_t(x, "polyfit")) + 0.0
    y = ndarray(_t(y, "polyfit")) + 0.0
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(x) * _np.finfo(x.dtype).eps  # (a NumPy float, as NumPy's)
    from ._twodim import vander
    lhs = ndarray(vander(x, order)._t)
    rhs = y
    if w is not None:
        w = ndarray(_t(w, "polyfit")) + 0.0
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * w if rhs.ndim == 1 else rhs * w[:, None]
    scale = ndarray(_C.sqrt(_C.sum((lhs * lhs)._t, 0)))
    lhs = lhs / scale
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = ndarray(_C.transpose(c._t, 0, -1) if c.ndim > 1 else c._t)
    c = c / scale
    c = ndarray(_C.transpose(c._t, 0, -1)) if c.ndim > 1 else c
    rank_ok = rank == order if isinstance(rank, (int, _np.integer)) else \
        _core.decide(_C.eq(rank._t, order), "polyfit: whether the fit is well conditioned")
    if not rank_ok and not full:
        warnings.warn("Polyfit may be poorly conditioned", _np.RankWarning, stacklevel=4)
    if full:
        return wrap(kind, c._t), resids, rank, s, rcond
    if cov:
        # NumPy's: inv(lhs.T @ lhs) / outer(scale, scale), times the
        # residuals over the degrees of freedom unless cov='unscaled'
        from ._products import dot, outer
        vbase = linalg.inv(dot(lhs.T, lhs, _kind=ndarray), _kind=ndarray)
        vbase = vbase / outer(scale, scale, _kind=ndarray)
        if isinstance(cov, str) and cov == "unscaled":
            fac = 1
        else:
            if len(x) <= order:
                raise ValueError("the number of data points must exceed order to scale the "
                                 "covariance matrix")
            fac = resids / (len(x) - order)
        v = vbase * fac if y.ndim == 1 else vbase[:, :, None] * fac
        return wrap(kind, c._t), wrap(kind, v._t)
    return wrap(kind, c._t)


def _leading(flags, n, why):
    """The number of leading True elements of the 1-d bool array flags (of
    length n), each test a data-dependent decision (_core.decide)."""
    k = 0
    while k < n and _core.decide(flags[k]._t, why):
        k += 1
    return k


def _poly1d_coeffs(a, what):
    """poly1d(a)'s coefficients: a at least 1-d, its leading zeros stripped
    (one zero left of an all-zero polynomial)."""
    a = F.atleast_1d(_arr(a, what), _kind=ndarray)
    if a.ndim > 1:
        raise ValueError("Polynomial must be 1d only.")
    n = a.shape[0]
    k = _leading(a == 0, n, f"{what}: whether a leading coefficient is zero")
    if k == n:
        return F.zeros((1,), a.dtype)
    return a[k:]


@implements(_np.poly)
def poly(seq_of_zeros, *, _kind=None):
    kind = _kind or _kind_of(seq_of_zeros)
    z = F.atleast_1d(_arr(seq_of_zeros, "poly"), _kind=ndarray)
    sh = z.shape
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:
        from . import linalg
        z = linalg.eigvals(z, _kind=ndarray)
    elif len(sh) == 1:
        z = z.astype(_np.mintypecode(z.dtype.char))
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if z.shape[0] == 0:
        return 1.0
    dt = z.dtype
    a = F.ones((1,), dt)
    for k in builtins.range(z.shape[0]):
        a = convolve(a, F.stack([F.ones((), dt), -z[k]]), _kind=ndarray)
    if dt.kind == "c":
        # real coefficients when the roots come in conjugate pairs (NumPy's test)
        r = z.astype(_np.complex128)
        if _core.decide(F.all(F.sort(r) == F.sort(r.conjugate()))._t,
                        "poly: whether the roots are conjugate pairs"):
            a = a.real.copy()
    return _as(kind, a)


@implements(_np.roots)
def roots(p, *, _kind=None):
    kind = _kind or _kind_of(p)
    p = F.atleast_1d(_arr(p, "roots"), _kind=ndarray)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = p.shape[0]
    zero = p == 0
    lead = _leading(zero, n, "roots: whether a coefficient is zero")
    if lead == n:
        return _as(kind, F.array([]))
    trailing = _leading(zero[::-1], n, "roots: whether a coefficient is zero")
    p = p[lead:n - trailing]
    if p.dtype.kind not in "fc":
        p = p.astype(float)
    N = p.shape[0]
    if N > 1:
        A = F.PUBLIC["diag"](F.ones((N - 2,), p.dtype), -1)
        A[0, :] = -p[1:] / p[0]
        from . import linalg
        r = linalg.eigvals(A, _kind=ndarray)
    else:
        r = F.array([])
    return _as(kind, F.hstack((r, F.zeros(trailing, r.dtype))))


@implements(_np.polyint)
def polyint(p, m=1, k=None, *, _kind=None):
    kind = _kind or _kind_of(p)
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    if k is None:
        k = F.zeros(m, float)
    k = F.atleast_1d(_arr(k, "polyint"), _kind=ndarray)
    if k.shape[0] == 1 and m > 1:
        k = k[0] * F.ones(m, float)
    if k.shape[0] < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = _arr(p, "polyint")
    for i in builtins.range(m):
        n = p.shape[0]
        p = F.concatenate((p / F.arange(n, 0, -1), k[i:i + 1]))
    return _as(kind, p)


@implements(_np.polyder)
def polyder(p, m=1, *, _kind=None):
    kind = _kind or _kind_of(p)
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = _arr(p, "polyder")
    for _ in builtins.range(m):
        n = p.shape[0] - 1
        p = p[:-1] * F.arange(n, 0, -1)
    return _as(kind, p)


def _polyaddsub(a1, a2, op, what, kind):
    a1 = F.atleast_1d(_arr(a1, what), _kind=ndarray)
    a2 = F.atleast_1d(_arr(a2, what), _kind=ndarray)
    diff = a2.shape[0] - a1.shape[0]
    if diff > 0:
        a1 = F.concatenate((F.zeros(diff, a1.dtype), a1))
    elif diff < 0:
        a2 = F.concatenate((F.zeros(-diff, a2.dtype), a2))
    return _as(kind, op(a1, a2))


@implements(_np.polyadd)
def polyadd(a1, a2, *, _kind=None):
    return _polyaddsub(a1, a2, operator.add, "polyadd", _kind or result_kind((a1, a2), ndarray))


@implements(_np.polysub)
def polysub(a1, a2, *, _kind=None):
    return _polyaddsub(a1, a2, operator.sub, "polysub", _kind or result_kind((a1, a2), ndarray))


@implements(_np.polymul)
def polymul(a1, a2, *, _kind=None):
    kind = _kind or result_kind((a1, a2), ndarray)
    return _as(kind, convolve(_poly1d_coeffs(a1, "polymul"), _poly1d_coeffs(a2, "polymul"),
                              _kind=ndarray))


@implements(_np.polydiv)
def polydiv(u, v, *, _kind=None):
    kind = _kind or result_kind((u, v), ndarray)
    u = F.atleast_1d(_arr(u, "polydiv"), _kind=ndarray) + 0.0
    v = F.atleast_1d(_arr(v, "polydiv"), _kind=ndarray) + 0.0
    w = u[0] + v[0]
    m = u.shape[0] - 1
    n = v.shape[0] - 1
    scale = 1. / v[0]
    q = F.zeros((max(m - n + 1, 1),), w.dtype)
    r = u.astype(w.dtype)
    for k in builtins.range(0, m - n + 1):
        d = scale * r[k]
        q[k] = d
        r[k:k + n + 1] -= d * v
    # NumPy drops the remainder's leading elements allclose to 0 (atol 1e-8)
    small = abs(r) <= 1e-8
    drop = _leading(small, r.shape[0] - 1, "polydiv: whether the remainder's leading "
                                           "coefficient is zero")
    return _as(kind, q), _as(kind, r[drop:])


@implements(_np.trim_zeros)
def trim_zeros(filt, trim="fb", *, _kind=None):
    """NumPy's trim_zeros.  Of a concrete array NumPy's view filt[first:last];
    under a trace the bounds are data, so the result is the selection of
    the kept elements with an unbacked size (as unique's), read-only since
    it is a copy where NumPy's is a view (a write through it raises rather
    than miss the argument)."""
    trim = trim.upper()
    if isinstance(filt, (list, tuple)) and not F._has_hop(filt):
        return _np.trim_zeros(filt, trim)
    kind = _kind or _kind_of(filt)
    a = _arr(filt, "trim_zeros")
    if a.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    n = a.shape[0]
    if a.ndim > 1 and _size(a.shape[1:]) != 1:
        if _size(a.shape[1:]) == 0 or n == 0:
            return _as(kind, a[0:n])
        raise ValueError("The truth value of an array with more than one element is "
                         "ambiguous. Use a.any() or a.all()")
    nz = (a.reshape((n,)) if a.ndim > 1 else a) != 0
    keep = F.ones(n, bool)
    if "F" in trim:
        keep = keep & (F.cumsum(nz) > 0)
    if "B" in trim:
        keep = keep & (F.cumsum(nz[::-1])[::-1] > 0)
    if a._fixed():
        sel = keep._t.numpy().nonzero()[0]
        first, last = (int(sel[0]), int(sel[-1]) + 1) if sel.size else (0, 0)
        if "F" not in trim:
            first = 0
        if "B" not in trim:
            last = n if sel.size else 0
        return _as(kind, a[first:builtins.max(first, last)])
    r = wrap(kind, _C._op("take", a._t, 0, keep._t.nonzero().select(1, 0)))
    r._ro = True
    return r
