"""NumPy's statistics, searching, set and signal functions on hop arrays:
quantiles and medians, the nan-functions, averages, covariance,
histograms, bincount, searchsorted and digitize, unique and the set
routines, sorting helpers (partition, lexsort), interp, convolve and
correlate, gradient, polynomials, cross, and the small elementwise helpers
(sinc, i0, nan_to_num, fix, ...), with NumPy 1.24's semantics.

Each follows NumPy's algorithm with hop.numpy's operations, so dtypes come
out as NumPy's.  Where NumPy's result has a size that depends on the data
(unique, bincount, the set routines, nonzero-like selections) the size is
an unbacked symbol under hop.trace and hop.compile.  Where NumPy raises on
the data (bincount of a negative value, a weight sum of zero) hop decides
the condition on the data: hop.compile specialises on it, hop.trace raises
a TraceError saying why.  partition and argpartition sort fully (a valid
partition; NumPy's introselect leaves the other elements in an order of its
own); convolve and correlate sum in matmul's order (NumPy's in its dot's).
"""

import builtins
import math
import operator

import numpy as _np

from .. import _C
from . import _core, _corder
from . import _funcs as F
from ._funcs import (_axes, _axis, _kind_of, _size, _t, implements, sum as _sum)
from ._lib import _arr, _as, _take_along, broadcast_shapes
from ._ndarray import ndarray, result_kind, wrap

__all__ = []


def _concrete(x):
    """x's value as an ndarray now, when it is known (a Python value, a
    NumPy array, a concrete array outside a trace), else None."""
    if isinstance(x, (int, float, bool, list, tuple, _np.ndarray, _np.generic)) and \
            not F._has_hop(x if isinstance(x, (list, tuple)) else [x]):
        return _np.asarray(x)
    if isinstance(x, ndarray) and x._fixed():
        return x._t.numpy()
    return None


# ------------------------------------------------------------- counting

@implements(_np.count_nonzero)
def count_nonzero(a, axis=None, *, keepdims=False, _kind=None):
    t = _t(a, "count_nonzero")
    nz = t if t.dtype is _C.bool else _C.ne(t, 0)
    if axis is None and not keepdims:
        c = _C.sum(nz.to(_C.int64), None, False)
        return int(c.item()) if not _C._is_proxy(c) else c.item()
    dims = list(_axes(axis, t.ndim))
    r = _C.sum(nz.to(_C.int64), dims, bool(keepdims)) if dims else nz.to(_C.int64)
    return wrap(_kind or _kind_of(a), r, scalar=r.ndim == 0)  # (a.sum(): a scalar at 0-d)


@implements(_np.bincount)
def bincount(x, weights=None, minlength=0, *, _kind=None):
    kind = _kind or result_kind((x, weights), ndarray)
    t = _t(x, "bincount")
    if t.ndim != 1:
        raise ValueError("object too deep for desired array")
    if not _np.can_cast(_core.np_dtype(t), _np.intp, casting="safe"):
        raise TypeError(f"Cannot cast array data from {_core.np_dtype(t)!r} to "
                        f"dtype('int64') according to the rule 'safe'")
    if minlength is None:
        raise TypeError("'NoneType' object cannot be interpreted as an integer")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    t = t.to(_C.int64) if t.dtype is not _C.int64 else t
    if _core.decide(_C.any(_C.lt(t, 0), None, False), "bincount: whether a value is negative"):
        raise ValueError("'list' argument must have no negative elements")
    top = _C.amax(t, None, False) + 1 if not (isinstance(t.shape[0], int) and t.shape[0] == 0) \
        else _C.zeros((), dtype=_C.int64)
    n = _C.maximum(top, minlength).to(_C.uint64).item()  # unbacked, known >= 0
    if weights is None:
        vals = _C.ones((), dtype=_C.int64)
        base = _C.zeros((n,), dtype=_C.int64)
    else:
        w = _core.cast(_t(weights, "bincount"), _np.dtype(_np.float64))
        if tuple(w.shape) != tuple(t.shape):
            raise ValueError("The weights and list don't have the same length.")
        vals = w
        base = _C.zeros((n,), dtype=_C.float64)
    return wrap(kind, _C._op("put", base, t, vals, True))


# ----------------------------------------------------------- averages

@implements(_np.average)
def average(a, axis=None, weights=None, returned=False, *, keepdims=False, _kind=None):
    kind = _kind or result_kind((a, weights), ndarray)
    arr = _arr(a)
    if weights is None:
        avg = F.mean(arr, axis, keepdims=keepdims, _kind=kind)
        asz = _size(arr.shape)
        rsz = _size(avg.shape) if isinstance(avg, ndarray) else 1
        scl_val = asz / rsz
        scl = wrap(kind, _C.full((), scl_val, dtype=_core.hop_dtype(avg.dtype, "average")),
                   scalar=True)
    else:
        wgt = _arr(weights)
        if arr.dtype.kind in "biu":
            rdt = _np.result_type(arr.dtype, wgt.dtype, "f8")
        else:
            rdt = _np.result_type(arr.dtype, wgt.dtype)
        if arr.shape != wgt.shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if wgt.ndim != 1:
                raise TypeError("1D weights expected when shapes of a and weights differ.")
            if wgt.shape[0] != arr.shape[axis]:
                raise ValueError("Length of weights not compatible with specified axis.")
            wgt = F.broadcast_to(wgt, (arr.ndim - 1) * (1,) + wgt.shape, _kind=ndarray)
            wgt = F.swapaxes(wgt, -1, axis, _kind=ndarray)
        scl = _sum(wgt, axis=axis, dtype=rdt, keepdims=keepdims, _kind=kind)
        if _core.decide(_C.any(_C.eq(_t(scl), 0), None, False),
                        "average: whether the weights sum to zero"):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        from ._ufuncs import call_ufunc
        prod = call_ufunc("multiply", (arr, wgt), {"dtype": rdt}, ndarray)
        avg = _sum(prod, axis, keepdims=keepdims, _kind=kind) / scl
    if returned:
        if scl.shape != avg.shape:
            scl = F.broadcast_to(scl, avg.shape, _kind=kind).copy()
        return avg, scl
    return avg


@implements(_np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None, _kind=None):
    kind = _kind or result_kind((m, y), ndarray)
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    mt = _t(m, "cov")
    if mt.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None:
        yt = _t(y, "cov")
        if yt.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dts = [_core.np_dtype(mt), _np.dtype(_np.float64)]
        if y is not None:
            dts.insert(1, _core.np_dtype(yt))
        dtype = _np.result_type(*dts)
    X = _core.cast(mt, _np.dtype(dtype))
    X = X.reshape(1, -1) if X.ndim < 2 else X
    if not rowvar and X.shape[0] != 1:
        X = X.T
    if X.shape[0] == 0:
        return wrap(kind, _C.zeros((0, 0), dtype=X.dtype))
    if y is not None:
        Y = _core.cast(yt, _np.dtype(dtype))
        Y = Y.reshape(1, -1) if Y.ndim < 2 else Y
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = _C.cat([X, Y], 0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        fw = _core.cast(_t(fweights, "cov"), _np.dtype(_np.float64))
        if not _core.decide(_C.all(_C.eq(fw, _C.round(fw)), None, False),
                            "cov: whether fweights are integers"):
            raise TypeError("fweights must be integer")
        if fw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fw.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if _core.decide(_C.any(_C.lt(fw, 0), None, False), "cov: whether fweights are negative"):
            raise ValueError("fweights cannot be negative")
        w = fw
    if aweights is not None:
        aw = _core.cast(_t(aweights, "cov"), _np.dtype(_np.float64))
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if _core.decide(_C.any(_C.lt(aw, 0), None, False), "cov: whether aweights are negative"):
            raise ValueError("aweights cannot be negative")
        w = aw if w is None else w * aw
    Xa = ndarray(X)
    avg, w_sum = average(Xa, axis=1, weights=None if w is None else ndarray(w), returned=True,
                         _kind=ndarray)
    w_sum = _t(w_sum)[0] if w_sum.ndim else _t(w_sum)
    if w is None:
        fact = X.shape[1] - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * _C.sum(w * aw, None, False) / w_sum
    Xc = X - _t(avg).unsqueeze(1)
    X_T = Xc.T if w is None else (Xc * w).T
    c = _C.matmul(Xc, X_T)
    if isinstance(fact, int):
        fact = builtins.max(fact, 0)
        c = c * (1.0 / fact if fact else math.inf)
    else:
        fact = _C.maximum(fact, 0)
        c = c * _C.div(1.0, fact)
    c = c.reshape(()) if c.shape == (1, 1) else c
    return wrap(kind, c)  # a 0-d array for one variable, as NumPy's


@implements(_np.corrcoef)
def corrcoef(x, y=None, rowvar=True, bias=None, ddof=None, *, dtype=None, _kind=None):
    kind = _kind or result_kind((x, y), ndarray)
    c = _t(cov(x, y, rowvar, dtype=dtype, _kind=ndarray))
    if c.ndim == 0:
        return wrap(kind, c / c, scalar=True)
    d = _t(F.PUBLIC["diagonal"](ndarray(c)))
    std = _C.sqrt(d)
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    c = _C.minimum(_C.maximum(c, -1.0), 1.0)
    return wrap(kind, c)


# ---------------------------------------------------------- quantiles

def _sorted_along(t, axis):
    """t sorted along axis (nan last), moved to the front: (sorted, n)."""
    if axis is None:
        t, axis = t.reshape(-1), 0
    ax = _axis(axis, t.ndim)
    s = _corder.sort_any(t, ax)
    if ax != 0:
        s = s.permute(*([ax] + [d for d in range(t.ndim) if d != ax]))
    return s, s.shape[0]


def _reduce_axes(t, axis):
    """For a reduction over a tuple of axes (NumPy's _ureduce): t with those
    axes flattened into one last axis, and that axis."""
    if axis is None or not isinstance(axis, (tuple, list)):
        return t, axis
    axes = _axes(axis, t.ndim)
    if len(axes) == 1:
        return t, axes[0]
    keep = [d for d in range(t.ndim) if d not in axes]
    t = t.permute(*(keep + list(axes)))
    return t.reshape(tuple(t.shape[:len(keep)]) + (-1,)), len(keep)


def _keepdims_shape(t, axis, rshape):
    """The shape of a reduction over axis with the reduced dims kept as 1,
    after the leading rshape dims (the quantiles')."""
    if axis is None:
        return tuple(rshape) + (1,) * t.ndim
    axes = _axes(axis, t.ndim)
    return tuple(rshape) + tuple(1 if d in axes else t.shape[d] for d in range(t.ndim))


def _quantile_method(method):
    """NumPy 1.24's own table of quantile methods (virtual index and gamma
    of each), computed on the quantiles' values, which are known now."""
    methods = getattr(_np.lib.function_base, "_QuantileMethods", None)
    if methods is None:  # pragma: no cover (another NumPy)
        raise _C.UnsupportedError("hop.numpy: quantile needs NumPy 1.24's method table")
    try:
        return methods[method]
    except KeyError:
        raise ValueError(f"{method!r} is not a valid method. Use one of: "
                         f"{methods.keys()}") from None


def _quantile(t, q, axis, method, what):
    """NumPy's _quantile of tensor t along axis (a sorted copy: t itself is
    never written), for concrete quantiles q: an ndarray."""
    m = _quantile_method(method)
    s, n = _sorted_along(t, axis)
    if not isinstance(n, int):
        raise _C.UnsupportedError(f"hop.numpy: {what} over a symbolic size is not supported")
    fb = _np.lib.function_base
    vi = _np.asanyarray(m["get_virtual_index"](n, _np.asanyarray(q)))
    npd = _core.np_dtype(s)
    if vi.dtype.kind in "iu":
        idx = _C.asarray(_np.array(vi, dtype=_np.int64, order="C"))
        res = ndarray(_C._op("take", s, 0, idx))
    else:
        prev, nxt = fb._get_indexes(_np.empty(0, npd), vi, n)
        gamma = _np.asanyarray(fb._get_gamma(vi, prev, m))
        gamma = gamma.reshape(vi.shape + (1,) * (s.ndim - 1))
        before = ndarray(_C._op("take", s, 0, _C.asarray(_np.array(prev, dtype=_np.int64,
                                                                     order="C"))))
        after = ndarray(_C._op("take", s, 0, _C.asarray(_np.array(nxt, dtype=_np.int64,
                                                                    order="C"))))
        res = _lerp(before, after, gamma if gamma.ndim else gamma[()])
    if npd.kind == "f" and n:
        last = s.select(0, n - 1)
        rt = res._t
        res = ndarray(_C.where(_C.ne(last, last), _C.full((), math.nan, dtype=rt.dtype), rt))
    return res


def _lerp(a, b, t):
    """NumPy's _lerp: a + (b - a) * t, and b - (b - a) * (1 - t) where
    t >= 0.5 (exact at both ends); t a concrete ndarray or NumPy scalar."""
    diff = b - a
    low = a + diff * t
    high = b - diff * (1 - t)
    tt = _np.asarray(t)
    if tt.ndim == 0:
        return high if tt >= 0.5 else low
    w = ndarray(_C.asarray(_np.array(tt >= 0.5, order="C")))
    return F.where(w, high, low, _kind=ndarray)


def _quantile_common(a, q, axis, out, overwrite_input, method, keepdims, interpolation,
                     what, kind):
    if interpolation is not None:
        method = interpolation
    qc = _concrete(q)
    if qc is None:
        raise _C.UnsupportedError(f"hop.numpy: {what} with traced quantiles is not supported "
                                  f"(they decide which elements are taken)")
    if qc.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    t = _t(a, what)
    t2, ax = _reduce_axes(t, axis)
    r = _quantile(t2, qc, ax, method, what)
    rt = r._t
    if keepdims:
        rt = rt.reshape(_keepdims_shape(t, axis, qc.shape))
    return F._out(kind, rt, scalar=rt.ndim == 0 and out is None, out=out, what=what)


def _check_q(qc, hi, name):
    if qc is not None and qc.size and not (_np.all(0 <= qc) and _np.all(qc <= hi)):
        raise ValueError(f"{name} must be in the range [0, {hi}]")


@implements(_np.quantile)
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, interpolation=None, _kind=None):
    qc = _concrete(q)
    _check_q(qc, 1, "Quantiles")
    return _quantile_common(a, qc if qc is not None else q, axis, out, overwrite_input, method,
                            keepdims, interpolation, "quantile", _kind or _kind_of(a))


@implements(_np.percentile)
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, interpolation=None, _kind=None):
    qc = _concrete(q)
    if qc is not None:
        qc = _np.true_divide(qc, 100)
        qc = _np.asanyarray(qc)
    _check_q(qc, 1, "Percentiles")
    if qc is not None and qc.size and not (_np.all(0 <= qc) and _np.all(qc <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return _quantile_common(a, qc if qc is not None else q, axis, out, overwrite_input, method,
                            keepdims, interpolation, "percentile", _kind or _kind_of(a))


@implements(_np.median)
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False, *, _kind=None):
    kind = _kind or _kind_of(a)
    t = _t(a, "median")
    t2, ax = _reduce_axes(t, axis)
    s, n = _sorted_along(t2, ax)
    if t.ndim == 0:  # the mean of the one value (a float); an array under keepdims
        rt = _t(F.mean(ndarray(t), _kind=ndarray))
        return F._out(kind, rt, scalar=not keepdims and out is None, out=out, what="median")
    if not isinstance(n, int):
        raise _C.UnsupportedError("hop.numpy: median over a symbolic size is not supported")
    if n % 2 == 1:
        part = s.slice(0, n // 2, n // 2 + 1, 1)
    else:
        part = s.slice(0, n // 2 - 1, n // 2 + 1, 1)
    r = F.mean(ndarray(part), axis=0, _kind=ndarray)
    rt = _t(r)
    if _core.np_dtype(t).kind == "f" and n > 0:
        last = s.select(0, n - 1)
        rt = _C.where(_C.ne(last, last), _C.full((), math.nan, dtype=rt.dtype), rt)
    if keepdims:
        rt = rt.reshape(_keepdims_shape(t, axis, ()))
    return F._out(kind, rt, scalar=rt.ndim == 0 and out is None, out=out, what="median")


# -------------------------------------------------------- nan functions

def _nan_mask(t):
    return _C.ne(t, t) if _core.np_dtype(t).kind == "f" else None


def _replace_nan(t, v):
    if _core.np_dtype(t).kind == "c":
        # NumPy's isnan of a complex: either part NaN (nanmean, nanvar, ...
        # of a complex array skip it as of a float one)
        m = _C.logical_or(_C.ne(_C._op("real", t), _C._op("real", t)),
                          _C.ne(_C._op("imag", t), _C._op("imag", t)))
        return _C.where(m, _core.complex_scalar(complex(v), _core.np_dtype(t)), t), m
    m = _nan_mask(t)
    if m is None:
        return t, None
    return _C.where(m, _C.full((), v, dtype=t.dtype), t), m


@implements(_np.nanmean)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True, _kind=None):
    kind = _kind or _kind_of(a)
    t = _t(a, "nanmean")
    _inexact_dtype(t, dtype)
    arr, mask = _replace_nan(t, 0)
    if mask is None:
        return F.mean(a, axis, dtype, out, keepdims, where=where, _kind=kind)
    cnt = _sum(ndarray(_C.logical_not(mask)), axis, dtype=_np.intp, keepdims=keepdims,
               where=where, _kind=ndarray)
    tot = _sum(ndarray(arr), axis, dtype=dtype, keepdims=keepdims, where=where, _kind=ndarray)
    avg = tot / cnt
    at = _core.cast(_t(avg), _core.np_dtype(_t(tot)))
    return F._out(kind, at, scalar=at.ndim == 0 and out is None, out=out, what="nanmean")


@implements(_np.nanprod)
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True, *,
            _kind=None):
    arr, _ = _replace_nan(_t(a, "nanprod"), 1)
    return F.prod(arr, axis, dtype, out, keepdims, initial, where, _kind=_kind or _kind_of(a))


@implements(_np.nancumsum)
def nancumsum(a, axis=None, dtype=None, out=None, *, _kind=None):
    arr, _ = _replace_nan(_t(a, "nancumsum"), 0)
    return F.cumsum(arr, axis, dtype, out, _kind=_kind or _kind_of(a))


@implements(_np.nancumprod)
def nancumprod(a, axis=None, dtype=None, out=None, *, _kind=None):
    arr, _ = _replace_nan(_t(a, "nancumprod"), 1)
    return F.cumprod(arr, axis, dtype, out, _kind=_kind or _kind_of(a))


def _nanextreme(a, axis, out, keepdims, initial, where, fn, fill, what, kind):
    t = _t(a, what)
    if _core.np_dtype(t).kind == "c":
        # a NaN in either part is skipped; the fill is below (above) every
        # complex in NumPy's lexicographic order
        arr, mask = _replace_nan(t, complex(fill, fill))
    else:
        mask = _nan_mask(t)
        if mask is None:
            return fn(a, axis, out, keepdims, initial=initial, where=where, _kind=kind)
        arr = _C.where(mask, _C.full((), fill, dtype=t.dtype), t)
    r = _t(fn(arr, axis, None, keepdims, initial=initial, where=where, _kind=ndarray))
    if initial is None:
        # (NumPy's fmax.reduce: an all-NaN slice is NaN, but with initial
        # it is initial, which takes part as any element does)
        dims = None if axis is None else list(_axes(axis, t.ndim))
        allnan = _C.all(mask, dims, bool(keepdims)) if t.ndim else mask
        nan = _core.complex_scalar(complex(math.nan, 0.0), _core.np_dtype(r)) if \
            _core.np_dtype(r).kind == "c" else _C.full((), math.nan, dtype=r.dtype)
        r = _C.where(allnan, nan, r)
    return F._out(kind, r, scalar=r.ndim == 0 and out is None, out=out, what=what)


@implements(_np.nanmin)
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=True, *, _kind=None):
    return _nanextreme(a, axis, out, keepdims, initial, where, F.min, math.inf, "nanmin",
                       _kind or _kind_of(a))


@implements(_np.nanmax)
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=True, *, _kind=None):
    return _nanextreme(a, axis, out, keepdims, initial, where, F.max, -math.inf, "nanmax",
                       _kind or _kind_of(a))


def _nanarg(a, axis, out, keepdims, fn, fill, what, kind):
    t = _t(a, what)
    arr, mask = _replace_nan(t, fill)
    if mask is not None:
        dims = None if axis is None else [_axis(axis, t.ndim)]
        allnan = _C.all(mask, dims, False) if t.ndim else mask
        if _core.decide(_C.any(allnan, None, False), f"{what}: whether a slice is all NaN"):
            raise ValueError("All-NaN slice encountered")
    return fn(arr, axis, out, keepdims=keepdims, _kind=kind)


@implements(_np.nanargmin)
def nanargmin(a, axis=None, out=None, *, keepdims=False, _kind=None):
    return _nanarg(a, axis, out, keepdims, F.argmin, math.inf, "nanargmin", _kind or _kind_of(a))


@implements(_np.nanargmax)
def nanargmax(a, axis=None, out=None, *, keepdims=False, _kind=None):
    return _nanarg(a, axis, out, keepdims, F.argmax, -math.inf, "nanargmax",
                   _kind or _kind_of(a))


def _inexact_dtype(t, dtype):
    """NumPy's nanmean/nanvar/nanstd take no integer dtype= for a float or
    complex array (a complex one too, though it has no NaN mask here)."""
    if dtype is not None and _core.np_dtype(t).kind in "fc" and \
            _np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")


def _nanvar_t(a, axis, dtype, ddof, keepdims, what, where=True):
    t = _t(a, what)
    _inexact_dtype(t, dtype)
    arr, mask = _replace_nan(t, 0)
    if mask is None and where is True:
        return None
    if dtype is None and _core.np_dtype(t).kind in "biu":
        dtype = _np.float64  # (np.var's of an integer array, which NumPy calls with where=)
    if where is not True:
        # an element where= leaves out counts as a NaN does: in no sum and
        # not in the count (NumPy passes where= to each of them)
        out = _C.logical_not(_C.logical_or(_t(where, f"{what}: where"),
                                           _C.zeros(tuple(t.shape), dtype=_C.bool)))
        mask = out if mask is None else _C.logical_or(mask, out)
        arr = _C.where(mask, _C.zeros((), dtype=arr.dtype), arr)
    dims = None if axis is None else list(_axes(axis, t.ndim))
    cnt = _C.sum(_C.logical_not(mask).to(_C.int64), dims, True)
    avg = _t(_sum(ndarray(arr), axis, dtype=dtype, keepdims=True, _kind=ndarray))
    avg = avg / cnt
    x = _core.cast(arr, _core.np_dtype(avg)) - avg
    x = _C.where(mask, _C.zeros((), dtype=x.dtype), x)
    if _core.np_dtype(x).kind == "c":  # |x|**2, real, as NumPy's x * conj(x)
        re, im = _C._op("real", x), _C._op("imag", x)
        x2 = re * re + im * im
    else:
        x2 = x * x
    var = _t(_sum(ndarray(x2), axis, dtype=dtype, keepdims=keepdims, _kind=ndarray))
    dof = _C.sum(_C.logical_not(mask).to(_C.int64), dims, bool(keepdims)) - ddof
    var = var / dof
    var = _C.where(_C.le(dof, 0), _C.full((), math.nan, dtype=var.dtype), var)
    return var


def _nanvar_out(a, axis, dtype, out, ddof, keepdims, _kind, what, plain, root, where=True):
    # nanvar/nanstd (root: the square root); an array with no nan-capable
    # dtype is plain's (var/std)
    kind = _kind or _kind_of(a)
    v = _nanvar_t(a, axis, dtype, ddof, keepdims, what, where)
    if v is None:
        return plain(a, axis, dtype, out, ddof, keepdims, _kind=kind)
    if root:
        v = _C.sqrt(v)
    return F._out(kind, v, scalar=v.ndim == 0 and out is None, out=out, what=what)


@implements(_np.nanvar)
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           _kind=None):
    return _nanvar_out(a, axis, dtype, out, ddof, keepdims, _kind, "nanvar", F.var, False,
                       where)


@implements(_np.nanstd)
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           _kind=None):
    return _nanvar_out(a, axis, dtype, out, ddof, keepdims, _kind, "nanstd", F.std, True,
                       where)


def _nan_sorted(t, axis):
    """Sorted along axis (moved to the front; nan last) and the count of
    non-nan values per slice."""
    s, n = _sorted_along(t, axis)
    mask = _C.ne(s, s)
    cnt = _C.sum(_C.logical_not(mask).to(_C.int64), [0], False)
    return s, n, cnt


def _nan_take(s, pos):
    """s[pos[...], ...]: per slice the element at pos (an int tensor of the
    slice shape), along axis 0."""
    return _take_along(s, _C.maximum(pos, 0).unsqueeze(0), 0).squeeze(0)


@implements(_np.nanmedian)
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False, *, _kind=None):
    kind = _kind or _kind_of(a)
    t = _t(a, "nanmedian")
    if _core.np_dtype(t).kind != "f":
        return median(a, axis, out, overwrite_input, keepdims, _kind=kind)
    t2, ax = _reduce_axes(t, axis)
    s, n, cnt = _nan_sorted(t2, ax)
    lo = _nan_take(s, (cnt - 1) // 2)
    hi = _nan_take(s, cnt // 2)
    r = _t(F.mean(ndarray(_C.stack([lo, hi], 0)), axis=0, _kind=ndarray))
    r = _C.where(_C.eq(cnt, 0), _C.full((), math.nan, dtype=r.dtype), r)
    if keepdims:
        r = r.reshape(_keepdims_shape(t, axis, ()))
    return F._out(kind, r, scalar=r.ndim == 0 and out is None, out=out, what="nanmedian")


def _nanquantile(a, qc, axis, out, method, keepdims, what, kind):
    t = _t(a, what)
    if _core.np_dtype(t).kind != "f":
        return quantile(a, qc, axis, out, method=method, keepdims=keepdims, _kind=kind)
    if method not in ("linear", "lower", "higher", "nearest", "midpoint"):
        raise _C.UnsupportedError(f"hop.numpy: {what} with method={method!r} is not supported")
    t2, ax = _reduce_axes(t, axis)
    s, n, cnt = _nan_sorted(t2, ax)
    q = _np.asarray(qc, dtype=_np.float64)
    outs = []
    for qv in q.reshape(-1).tolist():
        c1 = (cnt - 1).to(_C.float64)
        vi = c1 * qv
        if method == "lower":
            vi = _C.floor(vi)
        elif method == "higher":
            vi = _C.ceil(vi)
        elif method == "nearest":
            vi = _C.round(vi)
        elif method == "midpoint":
            vi = (_C.floor(vi) + _C.ceil(vi)) * 0.5
        prev = _C.floor(vi)
        above = _C.ge(vi, c1)
        prev_i = _C.where(above, c1, prev).to(_C.int64)
        next_i = _C.where(above, c1, prev + 1).to(_C.int64)
        before, after = ndarray(_nan_take(s, prev_i)), ndarray(_nan_take(s, next_i))
        gamma = vi - prev
        diff = after - before
        g = ndarray(_core.cast(gamma, before.dtype) if before.dtype != _np.float64 else gamma)
        low = before + diff * g
        high = after - diff * (1 - g)
        r = F.where(ndarray(_C.ge(gamma, 0.5)), high, low, _kind=ndarray)
        rt = _core.cast(_t(r), before.dtype)
        rt = _C.where(_C.eq(cnt, 0), _C.full((), math.nan, dtype=rt.dtype), rt)
        outs.append(rt)
    r = _C.stack(outs, 0).reshape(q.shape + tuple(outs[0].shape)) if outs else None
    if keepdims:
        r = r.reshape(_keepdims_shape(t, axis, q.shape))
    return F._out(kind, r, scalar=r.ndim == 0 and out is None, out=out, what=what)


@implements(_np.nanquantile)
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, interpolation=None, _kind=None):
    qc = _concrete(q)
    if qc is None:
        raise _C.UnsupportedError("hop.numpy: nanquantile with traced quantiles is not supported")
    _check_q(qc, 1, "Quantiles")
    return _nanquantile(a, qc, axis, out, interpolation or method, keepdims, "nanquantile",
                        _kind or _kind_of(a))


@implements(_np.nanpercentile)
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, interpolation=None, _kind=None):
    qc = _concrete(q)
    if qc is None:
        raise _C.UnsupportedError("hop.numpy: nanpercentile with traced percentiles is not "
                                  "supported")
    qc = _np.asanyarray(_np.true_divide(qc, 100))
    if qc.size and not (_np.all(0 <= qc) and _np.all(qc <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return _nanquantile(a, qc, axis, out, interpolation or method, keepdims, "nanpercentile",
                        _kind or _kind_of(a))


# ---------------------------------------------------------- searching

@implements(_np.searchsorted)
def searchsorted(a, v, side="left", sorter=None, *, _kind=None):
    kind = _kind or _kind_of(a)
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    at = _t(a, "searchsorted")
    if at.ndim != 1:
        raise ValueError("object too deep for desired array" if at.ndim > 1 else
                         "object of too small depth for desired array")
    vo = _core.operand(v, "searchsorted")
    dt = _core.result_dtypes(lambda x, y: _np.empty(0, _np.result_type(x, y)),
                             [_core.Opnd(t=at, dtype=_core.np_dtype(at)), vo], "searchsorted")[0]
    if sorter is not None:
        at = _C._op("take", at, 0, _t(sorter, "searchsorted"))
    vt = vo.t if vo.t is not None else _core.as_compute(vo, dt)
    if not isinstance(vt, _C.Tensor):
        vt = _C.full((), vt, dtype=_core.hop_dtype(dt, "searchsorted"))
    r = _corder.searchsorted_any(_core.cast(at, dt), _core.cast(vt, dt), side == "right")
    return wrap(kind, r, scalar=r.ndim == 0)


@implements(_np.digitize)
def digitize(x, bins, right=False, *, _kind=None):
    kind = _kind or _kind_of(x)
    if _core.np_dtype(_t(x, "digitize")).kind == "c":
        raise TypeError("x may not be complex")
    b = _t(bins, "digitize")
    if b.ndim != 1:
        raise ValueError("object too deep for desired array" if b.ndim > 1 else
                         "object of too small depth for desired array")
    n = b.shape[0]
    side = "left" if right else "right"
    if isinstance(n, int) and n <= 1:
        return searchsorted(b, x, side=side, _kind=kind)
    bd = _core.cast(b, _np.dtype(_np.float64))  # NumPy decides in doubles (gh-11022)
    inc = _C.all(_C.ge(bd.slice(0, 1, None, 1), bd.slice(0, 0, -1, 1)), None, False)
    dec = _C.all(_C.le(bd.slice(0, 1, None, 1), bd.slice(0, 0, -1, 1)), None, False)
    if not _core.decide(_C.logical_or(inc, dec), "digitize: whether bins are monotonic"):
        raise ValueError("bins must be monotonically increasing or decreasing")
    up = _t(searchsorted(b, x, side=side, _kind=ndarray))
    rev = _C._op("take", b, 0, (n - 1) - _C.arange(n))
    down = n - _t(searchsorted(rev, x, side=side, _kind=ndarray))
    r = _C.where(inc, up, down)
    return wrap(kind, r, scalar=r.ndim == 0)


@implements(_np.flatnonzero)
def flatnonzero(a, *, _kind=None):
    t = _t(a, "flatnonzero").reshape(-1)
    return F.nonzero(t, _kind=_kind or _kind_of(a))[0]


@implements(_np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None, *, _kind=None):
    t = _t(a, "partition")
    _check_kth(t, kth, axis)
    return F.sort(a, axis, _kind=_kind)


@implements(_np.argpartition)
def argpartition(a, kth, axis=-1, kind="introselect", order=None, *, _kind=None):
    t = _t(a, "argpartition")
    _check_kth(t, kth, axis)
    return F.argsort(a, axis, _kind=_kind)


def _check_kth(t, kth, axis):
    n = t.reshape(-1).shape[0] if axis is None else t.shape[_axis(axis, t.ndim)] if t.ndim else 1
    for k in _np.atleast_1d(_np.asarray(kth)).tolist():
        if isinstance(n, int) and not -n <= k < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")


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
    if not shape:
        return wrap(_kind or ndarray, _C.zeros((), dtype=_C.int64))
    ax = _axis(axis, len(shape))
    idx = _corder.argsort_any(ks[0], ax)
    for k in ks[1:]:
        kk = _take_along(k, idx, ax)
        order = _corder.argsort_any(kk, ax)
        idx = _take_along(idx, order, ax)
    return wrap(_kind or result_kind(list(keys) if isinstance(keys, (list, tuple)) else [keys],
                                     ndarray), idx)


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
    perm = _corder.argsort_any(t, 0)
    aux = _C._op("take", t, 0, perm)
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
    ax = _axis(axis, t.ndim)
    m = t.permute(*([ax] + [d for d in range(t.ndim) if d != ax])) if t.ndim > 1 else t
    k = 1
    for d in m.shape[1:]:
        k = k * d
    rows = m.reshape(m.shape[0], k)
    n = rows.shape[0]
    if not isinstance(k, int):
        raise _C.UnsupportedError("hop.numpy: unique along an axis with symbolic sizes is not "
                                  "supported")
    # lexicographic order of the rows (the first column decides first)
    keys = [rows.select(1, j) for j in range(k)][::-1]
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
    dt = _np.result_type(_core.np_dtype(a), _core.np_dtype(b))
    a, b = _core.cast(a, dt), _core.cast(b, dt)
    bs = _corder.sort_any(b, 0)
    lo = _corder.searchsorted_any(bs, a, False)
    hi = _corder.searchsorted_any(bs, a, True)
    found = _C.gt(hi, lo)
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
    a = _t(unique(_t(ar1).reshape(-1), _kind=ndarray))
    b = _t(unique(_t(ar2).reshape(-1), _kind=ndarray))
    keep = _t(in1d(a, b, _kind=ndarray))
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
    kind = _kind or result_kind((ar1, ar2), ndarray)
    a = _t(unique(_t(ar1).reshape(-1), _kind=ndarray))
    b = _t(unique(_t(ar2).reshape(-1), _kind=ndarray))
    ina = _t(in1d(a, b, invert=True, _kind=ndarray))
    inb = _t(in1d(b, a, invert=True, _kind=ndarray))
    both = _C.cat([_C._op("take", a, 0, ina.nonzero().select(1, 0)),
                   _C._op("take", b, 0, inb.nonzero().select(1, 0))], 0)
    return wrap(kind, _corder.sort_any(both, 0))


@implements(_np.ediff1d)
def ediff1d(ary, to_end=None, to_begin=None, *, _kind=None):
    kind = _kind or _kind_of(ary)
    t = _t(ary, "ediff1d").reshape(-1)
    d = t.slice(0, 1, None, 1) - t.slice(0, 0, -1, 1) if t.dtype is not _C.bool else \
        _C.ne(t.slice(0, 1, None, 1), t.slice(0, 0, -1, 1))
    parts = []
    dtype_req = _core.np_dtype(t)
    for v, name in ((to_begin, "to_begin"), (to_end, "to_end")):
        if v is not None and not _np.can_cast(_core.np_dtype(_t(v)) if isinstance(
                v, (ndarray, _C.Tensor, _np.ndarray)) else _np.asarray(v), dtype_req,
                casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the "
                            f"`same_kind` rule.")
    if to_begin is not None:
        parts.append(_core.cast(_t(to_begin).reshape(-1), dtype_req))
    parts.append(d)
    if to_end is not None:
        parts.append(_core.cast(_t(to_end).reshape(-1), dtype_req))
    return wrap(kind, _C.cat(parts, 0) if len(parts) > 1 else d)


# ------------------------------------------------------------- histograms

def _bin_edges(t, bins, range_, weights, what):
    """NumPy's _get_bin_edges: (edges tensor, (first, last, n) for equal
    bins or None)."""
    if isinstance(bins, str):
        raise _C.UnsupportedError(f"hop.numpy: {what} with bins={bins!r} is not supported (the "
                                  f"data would choose the number of bins)")
    b = _core.operand(bins, what)
    if b.t is None or b.t.ndim == 0:
        n = operator.index(_core.scalar_arg(b) if b.t is None else int(b.t.item()))
        if n < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range_ is not None:
            first, last = range_
            if first > last:
                raise ValueError("max must be larger than min in range parameter.")
            if not (math.isfinite(first) and math.isfinite(last)):
                raise ValueError(f"supplied range of [{first}, {last}] is not finite")
            if first == last:
                first, last = first - 0.5, last + 0.5
            if _core.np_dtype(t).kind == "f":
                # NumPy's own dtypes: the edges in result_type(first, last, a)
                # (value-based for the range's scalars), the data compared
                # with the range as NumPy compares an array with a scalar
                bin_type = _np.result_type(first, last, _np.empty(0, _core.np_dtype(t)))
                edges = _t(F.linspace(first, last, n + 1, endpoint=True, dtype=bin_type))
                return edges, (_np.asarray(first)[()], _np.asarray(last)[()], n)
            lo = _C.full((), float(first), dtype=_C.float64)
            hi = _C.full((), float(last), dtype=_C.float64)
        elif isinstance(t.shape[0], int) and t.shape[0] == 0:
            lo = _C.full((), 0.0, dtype=_C.float64)
            hi = _C.full((), 1.0, dtype=_C.float64)
        else:
            lo = _C.amin(t, None, False).to(_C.float64)
            hi = _C.amax(t, None, False).to(_C.float64)
            if not _core.decide(_C.logical_and(_C.lt(_C.abs(lo), math.inf),
                                               _C.lt(_C.abs(hi), math.inf)),
                                f"{what}: whether the range is finite"):
                raise ValueError(f"autodetected range of [{float('nan')}, {float('nan')}] is not "
                                 f"finite")
            same = _C.eq(lo, hi)
            lo = _C.where(same, lo - 0.5, lo)
            hi = _C.where(same, hi + 0.5, hi)
        bin_type = _np.result_type(_core.np_dtype(t), _np.float64) \
            if _core.np_dtype(t).kind in "f" else _np.dtype(_np.float64)
        edges = _t(F.linspace(ndarray(lo), ndarray(hi), n + 1, endpoint=True))
        return _core.cast(edges, bin_type), (lo, hi, n)
    edges = b.t
    if edges.ndim != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if _core.decide(_C.any(_C.lt(edges.slice(0, 1, None, 1), edges.slice(0, 0, -1, 1)), None,
                           False), f"{what}: whether the bins increase"):
        raise ValueError("`bins` must increase monotonically, when an array")
    return edges, None


def _histogram_uniform_range(t, w, edges, uniform, ntype):
    """NumPy 1.24's equal-bins histogram of float data over a given range
    (first, last: NumPy scalars), with its dtypes: the data compared with
    the range and offset from it as NumPy's value-based casting does."""
    first, last, n = uniform

    def const(v, dt):  # the scalar v in dtype dt, as NumPy casts it
        return _C.full((), _np.asarray(v).astype(dt).item(), dtype=_core.hop_dtype(dt, "histogram"))
    adt = _core.np_dtype(t)
    cdt = _np.result_type(_np.empty(0, adt), first, last)
    tc = _core.cast(t, cdt)
    keep = _C.logical_and(_C.ge(tc, const(first, cdt)),
                          _C.le(tc, const(last, cdt)))
    sel = keep.nonzero().select(1, 0)
    edt = _core.np_dtype(edges)
    tmp = _core.cast(_C._op("take", t, 0, sel), edt)
    with _np.errstate(all="ignore"):
        denom = _np.subtract(last, first, dtype=_np.result_type(last, first))
        sdt = _np.result_type(_np.empty(0, edt), first)
        fdt = _np.result_type(_np.empty(0, sdt), denom)
    diff = _core.cast(tmp, sdt) - const(first, sdt)
    f = _core.cast(diff, fdt) / const(denom, fdt)
    f = f * n
    idx = f.to(_C.int64)
    idx = _C.where(_C.eq(idx, n), idx - 1, idx)
    dec = _C.lt(tmp, _C._op("take", edges, 0, _C.remainder(idx, n + 1)))
    idx = _C.where(dec, idx - 1, idx)
    inc = _C.logical_and(_C.ge(tmp, _C._op("take", edges, 0, _C.remainder(idx + 1, n + 1))),
                         _C.ne(idx, n - 1))
    idx = _C.where(inc, idx + 1, idx)
    if w is None:
        return _C._op("put", _C.zeros((n,), dtype=_C.int64), idx, _C.ones((), dtype=_C.int64),
                      True)
    wd = _C._op("take", w, 0, sel)
    wd = _core.cast(wd, _np.dtype(_np.float64)) if ntype.kind in "iub" else wd
    return _core.cast(_C._op("put", _C.zeros((n,), dtype=wd.dtype), idx, wd, True), ntype)


@implements(_np.histogram_bin_edges)
def histogram_bin_edges(a, bins=10, range=None, weights=None, *, _kind=None):
    t = _t(a, "histogram_bin_edges").reshape(-1)
    edges, _ = _bin_edges(t, bins, range, weights, "histogram_bin_edges")
    return wrap(_kind or _kind_of(a), edges)


@implements(_np.histogram)
def histogram(a, bins=10, range=None, normed=None, weights=None, density=None, *, _kind=None):
    kind = _kind or _kind_of(a)
    if normed is not None:
        raise TypeError("histogram() got an unexpected keyword argument 'normed'")
    t = _t(a, "histogram").reshape(-1)
    w = None
    if weights is not None:
        w = _t(weights, "histogram").reshape(-1)
        if tuple(w.shape) != tuple(t.shape):
            raise ValueError("weights should have the same shape as a.")
    edges, uniform = _bin_edges(t, bins, range, weights, "histogram")
    ntype = _np.dtype(_np.intp) if w is None else _core.np_dtype(w)
    if uniform is not None and not isinstance(uniform[0], _C.Tensor):
        hist = _histogram_uniform_range(t, w, edges, uniform, ntype)
    elif uniform is not None:
        first, last, n = uniform
        x = _core.cast(t, _core.np_dtype(edges))
        keep = _C.logical_and(_C.ge(x, _core.cast(first, _core.np_dtype(edges))),
                              _C.le(x, _core.cast(last, _core.np_dtype(edges))))
        sel = keep.nonzero().select(1, 0)
        xs = _C._op("take", x, 0, sel)
        norm = n / (last - first)
        f_idx = (xs.to(_C.float64) - first) * norm
        idx = _C.floor(f_idx).to(_C.int64) if False else f_idx.to(_C.int64)
        idx = _C.where(_C.eq(idx, n), idx - 1, idx)
        dec = _C.lt(xs, _C._op("take", edges, 0, idx))
        idx = _C.where(dec, idx - 1, idx)
        inc = _C.logical_and(_C.ge(xs, _C._op("take", edges, 0, _C.minimum(idx + 1, n))),
                             _C.ne(idx, n - 1))
        idx = _C.where(inc, idx + 1, idx)
        if w is None:
            hist = _C._op("put", _C.zeros((n,), dtype=_C.int64), idx, _C.ones((), dtype=_C.int64),
                          True)
        else:
            wd = _core.cast(_C._op("take", w, 0, sel), _np.dtype(_np.float64)) \
                if ntype.kind in "iu" else _C._op("take", w, 0, sel)
            hist = _C._op("put", _C.zeros((n,), dtype=wd.dtype), idx, wd, True)
            hist = _core.cast(hist, ntype)
    else:
        order = _corder.argsort_any(t, 0)
        sa = _C._op("take", t, 0, order)
        dt = _np.result_type(_core.np_dtype(sa), _core.np_dtype(edges))
        sa_c, ed_c = _core.cast(sa, dt), _core.cast(edges, dt)
        m = edges.shape[0]
        left = _C._op("searchsorted", sa_c, ed_c.slice(0, 0, -1, 1), False)
        right = _C._op("searchsorted", sa_c, ed_c.slice(0, m - 1, m, 1), True)
        cum = _C.cat([left, right], 0)
        if w is None:
            hist = cum.slice(0, 1, None, 1) - cum.slice(0, 0, -1, 1)
        else:
            sw = _C._op("take", w, 0, order)
            cw = _C.cat([_C.zeros((1,), dtype=sw.dtype), _C.cumsum(sw, 0)], 0)
            cn = _C._op("take", cw, 0, cum)
            hist = cn.slice(0, 1, None, 1) - cn.slice(0, 0, -1, 1)
    if density:
        db = (edges.slice(0, 1, None, 1) - edges.slice(0, 0, -1, 1)).to(_C.float64)
        hist = hist.to(_C.float64) / db / _C.sum(hist.to(_C.float64), None, False)
    return wrap(kind, hist), wrap(kind, edges)


@implements(_np.histogramdd)
def histogramdd(sample, bins=10, range=None, normed=None, weights=None, density=None, *,
                _kind=None):
    kind = _kind or _kind_of(sample)
    if isinstance(sample, (list, tuple)) and not isinstance(sample, _np.ndarray):
        s = _C.stack([_t(x, "histogramdd").reshape(-1) for x in sample], 1)
    else:
        s = _t(sample, "histogramdd")
        if s.ndim == 1:
            s = s.reshape(-1, 1)
    N, D = s.shape[0], s.shape[1]
    try:
        M = len(bins)
        if M != D:
            raise ValueError("The dimension of bins must be equal to the dimension of the sample "
                             "x.")
        bins_list = list(bins)
    except TypeError:
        bins_list = [bins] * D
    ranges = [None] * D if range is None else list(range)
    edges, nbin, idxs = [], [], []
    for i in builtins.range(D):
        col = s.select(1, i)
        e, _ = _bin_edges(col, bins_list[i], ranges[i], None, "histogramdd")
        if _np.ndim(bins_list[i]) == 0:
            e = _core.cast(e, _np.dtype(_np.float64))  # NumPy's linspace(smin, smax, n + 1)
        edges.append(e)  # explicit edges keep their dtype, as NumPy's asarray(bins[i])
        nb = e.shape[0] + 1
        nbin.append(nb)
        cdt = _np.result_type(_core.np_dtype(e), _core.np_dtype(col))
        ec, c = _core.cast(e, cdt), _core.cast(col, cdt)
        k = _C._op("searchsorted", ec, c, True)
        on_edge = _C.eq(c, ec.select(0, nb - 2))
        k = _C.where(on_edge, k - 1, k)
        idxs.append(k)
    flat = idxs[0]
    for i in builtins.range(1, D):
        flat = flat * nbin[i] + idxs[i]
    total = 1
    for nb in nbin:
        total *= nb
    if weights is None:
        hist = _C._op("put", _C.zeros((total,), dtype=_C.float64), flat,
                      _C.ones((), dtype=_C.float64), True)
    else:
        w = _core.cast(_t(weights, "histogramdd").reshape(-1), _np.dtype(_np.float64))
        hist = _C._op("put", _C.zeros((total,), dtype=_C.float64), flat, w, True)
    hist = hist.reshape(tuple(nbin))
    for i in builtins.range(D):
        hist = hist.slice(i, 1, nbin[i] - 1, 1)
    if density:
        s_ = _C.sum(hist, None, False)
        for i in builtins.range(D):
            shape = [1] * D
            shape[i] = nbin[i] - 2
            de = edges[i].slice(0, 1, None, 1) - edges[i].slice(0, 0, -1, 1)
            hist = hist / _core.cast(de, _np.dtype(_np.float64)).reshape(shape)
        hist = hist / s_
    return wrap(kind, hist), [wrap(kind, e) for e in edges]


@implements(_np.histogram2d)
def histogram2d(x, y, bins=10, range=None, normed=None, weights=None, density=None, *,
                _kind=None):
    kind = _kind or result_kind((x, y), ndarray)
    xt, yt = _t(x, "histogram2d"), _t(y, "histogram2d")
    if xt.shape[0] != yt.shape[0]:
        raise ValueError("x and y must have the same length.")
    try:
        N = len(bins)
    except TypeError:
        N = 1
    if N != 1 and N != 2:
        bins = [bins, bins]
    h, e = histogramdd([xt, yt], bins, range, normed, weights, density, _kind=kind)
    return h, e[0], e[1]


# ---------------------------------------------------------- interpolation

@implements(_np.interp)
def interp(x, xp, fp, left=None, right=None, period=None, *, _kind=None):
    kind = _kind or result_kind((x, xp, fp), ndarray)
    f64 = _np.dtype(_np.float64)
    xt = _core.cast(_t(x, "interp"), f64)
    xpt = _core.cast(_t(xp, "interp"), f64)
    fpt = _t(fp, "interp")
    if _core.np_dtype(fpt).kind == "c":
        raise _C.UnsupportedError("hop.numpy: interp of complex values is not supported")
    fpt = _core.cast(fpt, f64)
    if xpt.ndim != 1 or fpt.ndim != 1:
        raise ValueError("object too deep for desired array")
    if xpt.shape[0] != fpt.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if isinstance(xpt.shape[0], int) and xpt.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = builtins.abs(period)
        left = right = None
        xt = _C.remainder(xt, period)
        xpt = _C.remainder(xpt, period)
        order = _corder.argsort_any(xpt, 0)
        xpt = _C._op("take", xpt, 0, order)
        fpt = _C._op("take", fpt, 0, order)
        n = xpt.shape[0]
        xpt = _C.cat([xpt.slice(0, n - 1, n, 1) - period, xpt, xpt.slice(0, 0, 1, 1) + period], 0)
        fpt = _C.cat([fpt.slice(0, n - 1, n, 1), fpt, fpt.slice(0, 0, 1, 1)], 0)
    n = xpt.shape[0]
    lval = fpt.select(0, 0) if left is None else _C.full((), float(left), dtype=_C.float64)
    rval = fpt.select(0, n - 1) if right is None else _C.full((), float(right), dtype=_C.float64)
    if isinstance(n, int) and 1 < n <= 4:
        # NumPy's linear search for 4 points or fewer: the run of leading
        # xp[1:] <= x (a nan among xp ends it, as it ends NumPy's)
        ge = _C.ge(xt.unsqueeze(-1), xpt.slice(0, 1, None, 1)).to(_C.int64)
        j = _C.sum(_C.cumprod(ge, -1), [-1], False)
    else:
        j = _C._op("searchsorted", xpt, xt, True) - 1
    jc = _C.minimum(_C.maximum(j, 0), n - 1)
    jn = _C.minimum(jc + 1, n - 1)
    x0, x1 = _C._op("take", xpt, 0, jc), _C._op("take", xpt, 0, jn)
    y0, y1 = _C._op("take", fpt, 0, jc), _C._op("take", fpt, 0, jn)
    slope = (y1 - y0) / (x1 - x0)
    r = slope * (xt - x0) + y0
    r2 = slope * (xt - x1) + y1
    r = _C.where(_C.ne(r, r), r2, r)
    r = _C.where(_C.logical_and(_C.ne(r, r), _C.eq(y0, y1)), y0, r)
    r = _C.where(_C.eq(x0, xt), y0, r)
    r = _C.where(_C.eq(j, n - 1), fpt.select(0, n - 1), r)
    r = _C.where(_C.lt(xt, xpt.select(0, 0)), lval, r)
    r = _C.where(_C.gt(xt, xpt.select(0, n - 1)), rval, r)
    r = _C.where(_C.ne(xt, xt), xt, r)
    return wrap(kind, r, scalar=r.ndim == 0)


def _correlate(a, v, mode, what):
    """NumPy's multiarray.correlate(a, v, mode) for 1-d a and v (v already
    conjugated/reversed by the caller)."""
    modes = {"valid": 0, "same": 1, "full": 2, 0: 0, 1: 1, 2: 2}
    if mode not in modes:
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    mode = modes[mode]
    n1, n2 = a.shape[0], v.shape[0]
    if not (isinstance(n1, int) and isinstance(n2, int)):
        raise _C.UnsupportedError(f"hop.numpy: {what} over symbolic sizes is not supported")
    if n1 == 0:
        raise ValueError("first array argument cannot be empty")
    if n2 == 0:
        raise ValueError("second array argument cannot be empty")
    inverted = n1 < n2
    if inverted:
        a, v, n1, n2 = v, a, n2, n1
    if mode == 0:
        lo, length = 0, n1 - n2 + 1
    elif mode == 1:
        lo, length = n2 // 2, n1
    else:
        lo, length = n2 - 1, n1 + n2 - 1
    pad = n2 - 1
    ap = _C.cat([_C.zeros((pad,), dtype=a.dtype), a, _C.zeros((pad,), dtype=a.dtype)], 0) \
        if pad else a
    start = pad - lo
    idx = (_C.arange(length) + start).reshape(length, 1) + _C.arange(n2).reshape(1, n2)
    win = _C._op("take", ap, 0, idx)
    if a.dtype is _C.bool:
        r = _C.any(_C.logical_and(win, v.reshape(1, n2)), [1], False)
    elif _core.np_dtype(a).kind == "f":
        r = _C.matmul(win, v)
    else:
        # NumPy's dot keeps the integer dtype (wrapping); sum widens to int64
        r = _core.cast(_C.sum(win * v.reshape(1, n2), [1], False), _core.np_dtype(a))
    if inverted:
        r = _C._op("take", r, 0, (length - 1) - _C.arange(length))
    return r


def _conv_args(a, v, what):
    ta = _t(a, what)
    tv = _t(v, what)
    ta = ta.reshape(-1) if ta.ndim == 0 else ta
    tv = tv.reshape(-1) if tv.ndim == 0 else tv
    if ta.ndim != 1 or tv.ndim != 1:
        raise ValueError("object too deep for desired array")
    dt = _np.result_type(_core.np_dtype(ta), _core.np_dtype(tv))
    return _core.cast(ta, dt), _core.cast(tv, dt)


@implements(_np.convolve)
def convolve(a, v, mode="full", *, _kind=None):
    ta, tv = _conv_args(a, v, "convolve")
    if tv.shape[0] > ta.shape[0]:
        ta, tv = tv, ta
    if ta.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if tv.shape[0] == 0:
        raise ValueError("v cannot be empty")
    n = tv.shape[0]
    rev = _C._op("take", tv, 0, (n - 1) - _C.arange(n))
    return wrap(_kind or result_kind((a, v), ndarray), _correlate(ta, rev, mode, "convolve"))


@implements(_np.correlate)
def correlate(a, v, mode="valid", *, _kind=None):
    ta, tv = _conv_args(a, v, "correlate")
    return wrap(_kind or result_kind((a, v), ndarray), _correlate(ta, tv, mode, "correlate"))


# --------------------------------------------------------------- calculus

@implements(_np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1, _kind=None):
    kind = _kind or _kind_of(f)
    ft = _t(f, "gradient")
    N = ft.ndim
    axes = tuple(range(N)) if axis is None else _axes(axis, N)
    len_axes = len(axes)
    n = len(varargs)
    if n == 0:
        dx = [1.0] * len_axes
    elif n == 1 and _np.ndim(varargs[0]) == 0 if not isinstance(varargs[0], ndarray) else \
            n == 1 and varargs[0].ndim == 0:
        dx = list(varargs) * len_axes
    elif n == len_axes:
        dx = list(varargs)
        for i, distances in enumerate(dx):
            d = _t(distances, "gradient") if not isinstance(distances, (int, float)) else None
            if d is None or d.ndim == 0:
                continue
            if d.ndim != 1:
                raise ValueError("distances must be either scalars or 1d")
            if d.shape[0] != ft.shape[axes[i]]:
                raise ValueError("when 1d, distances must match the length of the "
                                 "corresponding dimension")
            if _core.np_dtype(d).kind in "iub":
                d = d.to(_C.float64)
            diffx = d.slice(0, 1, None, 1) - d.slice(0, 0, -1, 1)
            if _core.decide(_C.all(_C.eq(diffx, diffx.select(0, 0)), None, False),
                            "gradient: whether the spacing is uniform"):
                dx[i] = ndarray(diffx.select(0, 0))
            else:
                dx[i] = ndarray(diffx)
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    fa = ndarray(ft)
    otype = fa.dtype
    if otype.kind in "iub":
        fa = ndarray(ft.to(_C.float64))
        otype = _np.dtype(_np.float64)
    outvals = []
    for ax, ax_dx in zip(axes, dx):
        if fa.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        out = F.empty_like(fa, dtype=otype, _kind=ndarray)
        uniform = _np.ndim(ax_dx) == 0 if not isinstance(ax_dx, ndarray) else ax_dx.ndim == 0

        def sl(k):
            s = [slice(None)] * N
            s[ax] = k
            return tuple(s)
        if uniform:
            out[sl(slice(1, -1))] = (fa[sl(slice(2, None))] - fa[sl(slice(None, -2))]) / \
                (2.0 * ax_dx)
        else:
            dx1, dx2 = ax_dx[0:-1], ax_dx[1:]
            a = -(dx2) / (dx1 * (dx1 + dx2))
            b = (dx2 - dx1) / (dx1 * dx2)
            c = dx1 / (dx2 * (dx1 + dx2))
            shape = [1] * N
            shape[ax] = -1
            a, b, c = a.reshape(shape), b.reshape(shape), c.reshape(shape)
            out[sl(slice(1, -1))] = a * fa[sl(slice(None, -2))] + b * fa[sl(slice(1, -1))] + \
                c * fa[sl(slice(2, None))]
        if edge_order == 1:
            dx_0 = ax_dx if uniform else ax_dx[0]
            out[sl(0)] = (fa[sl(1)] - fa[sl(0)]) / dx_0
            dx_n = ax_dx if uniform else ax_dx[-1]
            out[sl(-1)] = (fa[sl(-1)] - fa[sl(-2)]) / dx_n
        else:
            if uniform:
                a, b, c = -1.5 / ax_dx, 2. / ax_dx, -0.5 / ax_dx
            else:
                dx1, dx2 = ax_dx[0], ax_dx[1]
                a = -(2. * dx1 + dx2) / (dx1 * (dx1 + dx2))
                b = (dx1 + dx2) / (dx1 * dx2)
                c = - dx1 / (dx2 * (dx1 + dx2))
            out[sl(0)] = a * fa[sl(0)] + b * fa[sl(1)] + c * fa[sl(2)]
            if uniform:
                a, b, c = 0.5 / ax_dx, -2. / ax_dx, 1.5 / ax_dx
            else:
                dx1, dx2 = ax_dx[-2], ax_dx[-1]
                a = (dx2) / (dx1 * (dx1 + dx2))
                b = - (dx2 + dx1) / (dx1 * dx2)
                c = (2. * dx2 + dx1) / (dx2 * (dx1 + dx2))
            out[sl(-1)] = a * fa[sl(-3)] + b * fa[sl(-2)] + c * fa[sl(-1)]
        outvals.append(_as(kind, out))
    return outvals[0] if len_axes == 1 else outvals


@implements(_np.trapz)
def trapz(y, x=None, dx=1.0, axis=-1, *, _kind=None):
    kind = _kind or _kind_of(y)
    ya = _arr(y)
    nd = ya.ndim
    ax = _axis(axis, nd)

    def sl(k):
        s = [slice(None)] * nd
        s[ax] = k
        return tuple(s)
    if x is None:
        d = dx
    else:
        xa = _arr(x)
        if xa.ndim == 1:
            d = F.diff(xa, _kind=ndarray)
            shape = [1] * nd
            shape[ax] = d.shape[0]
            d = d.reshape(shape)
        else:
            d = F.diff(xa, axis=ax, _kind=ndarray)
    r = _sum(d * (ya[sl(slice(1, None))] + ya[sl(slice(None, -1))]) / 2.0, ax, _kind=kind)
    return r


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
        rcond = len(x) * float(_np.finfo(x.dtype).eps)
    from ._lib import vander
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
        raise _C.UnsupportedError("hop.numpy: polyfit(cov=True) is not supported")
    return wrap(kind, c._t)


@implements(_np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None, *, _kind=None):
    kind = _kind or result_kind((a, b), ndarray)
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    aa, ba = _arr(a), _arr(b)
    axisa = _axis(axisa, aa.ndim)
    axisb = _axis(axisb, ba.ndim)
    aa = F.moveaxis(aa, axisa, -1, _kind=ndarray)
    ba = F.moveaxis(ba, axisb, -1, _kind=ndarray)
    msg = "incompatible dimensions for cross product\n(dimension must be 2 or 3)"
    if aa.shape[-1] not in (2, 3) or ba.shape[-1] not in (2, 3):
        raise ValueError(msg)
    shape = broadcast_shapes(aa[..., 0].shape, ba[..., 0].shape)
    if aa.shape[-1] == 3 or ba.shape[-1] == 3:
        shape += (3,)
        axisc = _axis(axisc, len(shape))
    dt = _np.promote_types(aa.dtype, ba.dtype)
    cp = F.empty(shape, dt)
    aa, ba = aa.astype(dt, copy=False), ba.astype(dt, copy=False)
    a0, a1 = aa[..., 0], aa[..., 1]
    a2 = aa[..., 2] if aa.shape[-1] == 3 else None
    b0, b1 = ba[..., 0], ba[..., 1]
    b2 = ba[..., 2] if ba.shape[-1] == 3 else None
    if cp.ndim != 0 and cp.shape[-1] == 3:
        cp0, cp1, cp2 = cp[..., 0], cp[..., 1], cp[..., 2]
    if aa.shape[-1] == 2:
        if ba.shape[-1] == 2:
            from ._ufuncs import call_ufunc
            call_ufunc("multiply", (a0, b1), {"out": cp}, ndarray)
            cp -= a1 * b0
            return _as(kind, cp)
        cp0[...] = a1 * b2
        cp1[...] = -(a0 * b2)
        cp2[...] = a0 * b1 - a1 * b0
    else:
        if ba.shape[-1] == 3:
            cp0[...] = a1 * b2 - a2 * b1
            cp1[...] = a2 * b0 - a0 * b2
            cp2[...] = a0 * b1 - a1 * b0
        else:
            cp0[...] = -(a2 * b1)
            cp1[...] = a2 * b0
            cp2[...] = a0 * b1 - a1 * b0
    return _as(kind, F.moveaxis(cp, -1, axisc, _kind=ndarray))


# ------------------------------------------------------- small elementwise

@implements(_np.sinc)
def sinc(x, *, _kind=None):
    kind = _kind or _kind_of(x)
    xa = _arr(x)
    y = F.where(xa == 0, 1.0e-20, xa, _kind=ndarray) * math.pi
    from ._ufuncs import call_ufunc
    return _as(kind, call_ufunc("sin", (y,), {}, ndarray) / y)


@implements(_np.i0)
def i0(x, *, _kind=None):
    kind = _kind or _kind_of(x)
    t = _t(x, "i0")
    k = _core.np_dtype(t).kind
    if k == "c":
        raise TypeError("i0 not supported for complex values")
    if k != "f":
        t = t.to(_C.float64)
    return wrap(kind, _C.i0(t))


@implements(_np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None, *, _kind=None):
    kind = _kind or _kind_of(x)
    t = _t(x, "nan_to_num")
    npd = _core.np_dtype(t)
    if npd.kind != "f":
        r = t.clone() if copy else t
    else:
        info = _np.finfo(npd)
        pi = info.max if posinf is None else posinf
        ni = info.min if neginf is None else neginf
        # the three masks first, as NumPy's (nan=np.inf is not then rewritten)
        is_nan, is_pos, is_neg = _C.ne(t, t), _C.eq(t, math.inf), _C.eq(t, -math.inf)
        r = _C.where(is_nan, _C.full((), float(nan), dtype=t.dtype), t)
        r = _C.where(is_pos, _C.full((), float(pi), dtype=t.dtype), r)
        r = _C.where(is_neg, _C.full((), float(ni), dtype=t.dtype), r)
    if not copy and isinstance(x, ndarray):
        x._assign(r, "nan_to_num(copy=False)")
        return x
    scalar = isinstance(x, (int, float, _np.generic)) or (isinstance(x, ndarray) and x._scalar)
    return wrap(kind, r, scalar=scalar)


@implements(_np.fix)
def fix(x, out=None, *, _kind=None):
    from ._ufuncs import call_ufunc
    kind = _kind or _kind_of(x)
    c = call_ufunc("ceil", (x,), {}, kind)
    fl = call_ufunc("floor", (x,), {}, kind)
    r = F.where(call_ufunc("greater_equal", (x, 0), {}, kind), fl, c, _kind=kind)
    if out is not None:
        return F._out(kind, _t(r), out=out, what="fix")
    return _as(kind, r) if not (isinstance(r, ndarray) and r.ndim == 0) else \
        wrap(kind, _t(r), scalar=True)


def _isinf_signed(x, out, _kind, inf, what):
    t = _t(x, what)
    r = _C.eq(t, inf) if _core.np_dtype(t).kind == "f" else _C.zeros(tuple(t.shape),
                                                                      dtype=_C.bool)
    return F._out(_kind or _kind_of(x), r, scalar=r.ndim == 0 and out is None, out=out,
                  what=what)


@implements(_np.isposinf)
def isposinf(x, out=None, *, _kind=None):
    return _isinf_signed(x, out, _kind, math.inf, "isposinf")


@implements(_np.isneginf)
def isneginf(x, out=None, *, _kind=None):
    return _isinf_signed(x, out, _kind, -math.inf, "isneginf")


def _own_part(val, name):
    # NumPy's real/imag: val.real of an ndarray or of an object that has it
    # (a Python number's own), else asanyarray(val).real
    return isinstance(val, ndarray) or (hasattr(val, name) and not isinstance(val, _C.Tensor))


@implements(_np.real)
def real(val, *, _kind=None):
    if _own_part(val, "real"):
        return val.real
    t = _t(val, "real")
    if _kind is None:
        return ndarray(t).real
    return wrap(_kind, _C._op("real", t) if _core.np_dtype(t).kind == "c" else t)


@implements(_np.imag)
def imag(val, *, _kind=None):
    if _own_part(val, "imag"):
        return val.imag
    t = _t(val, "imag")
    if _core.np_dtype(t).kind == "c":
        return wrap(_kind or _kind_of(val), _C._op("imag", t), scalar=t.ndim == 0)
    return wrap(_kind or _kind_of(val), _C.zeros(tuple(t.shape), dtype=t.dtype))


def _imag_test(x, _kind, compare, real_answer, what):
    # iscomplex/isreal: compare(imag, 0) elementwise; a real dtype's answer
    # is real_answer (zeros or ones) everywhere
    t = _t(x, what)
    if _core.np_dtype(t).kind == "c":
        return wrap(_kind or _kind_of(x), compare(_C._op("imag", t), 0), scalar=t.ndim == 0)
    return wrap(_kind or _kind_of(x), real_answer(tuple(t.shape), dtype=_C.bool),
                scalar=t.ndim == 0)


@implements(_np.iscomplex)
def iscomplex(x, *, _kind=None):
    return _imag_test(x, _kind, _C.ne, _C.zeros, "iscomplex")


@implements(_np.isreal)
def isreal(x, *, _kind=None):
    return _imag_test(x, _kind, _C.eq, _C.ones, "isreal")


def _is_complex_obj(x):
    t = _core.tensor_of(x)
    if t is not None:
        return _core.np_dtype(t).kind == "c"
    return _np.iscomplexobj(x)


@implements(_np.iscomplexobj)
def iscomplexobj(x, *, _kind=None):
    return _is_complex_obj(x)


@implements(_np.isrealobj)
def isrealobj(x, *, _kind=None):
    return not _is_complex_obj(x)


@implements(_np.angle)
def angle(z, deg=False, *, _kind=None):
    t = _t(z, "angle")
    npd = _core.np_dtype(t)
    if npd.kind != "c":
        # NumPy: arctan2(0, z), in the loop its types pick (int8: float16,
        # uint16: float32, bool: float64; a 0-d z, a scalar to value-based
        # casting: float64)
        t = _core.cast(t, _np.arctan2(0, _np.ones((1,) * t.ndim, npd)).dtype)
    r = wrap(_kind or _kind_of(z), _C._op("angle", t), scalar=t.ndim == 0)
    if deg:  # NumPy's `a *= 180/pi`: a 0-d z's NumPy scalar times a float
        r = r * (180.0 / math.pi)
    return r


@implements(_np.real_if_close)
def real_if_close(a, tol=100, *, _kind=None):
    return _as(_kind or _kind_of(a), _arr(a))


@implements(name="isscalar")
def isscalar(element):
    if isinstance(element, ndarray):
        return element._scalar
    return _np.isscalar(element)


@implements(_np.array_equiv)
def array_equiv(a1, a2, *, _kind=None):
    x, y = _t(a1, "array_equiv"), _t(a2, "array_equiv")
    try:
        shape = broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        return False
    return _core.decide(_C.all(_C.eq(x.expand(*shape), y.expand(*shape)), None, False),
                        "array_equiv (a Python bool)")


@implements(_np.common_type)
def common_type(*arrays, _kind=None):
    is_complex = False
    precision = 0
    for a in arrays:
        t = _core.np_dtype(_t(a))
        if t.kind in "iub":
            p = 2
        else:
            p = {2: 0, 4: 1, 8: 2}[t.itemsize]
        precision = builtins.max(precision, p)
    return [_np.half, _np.single, _np.double][precision]


@implements(_np.min_scalar_type)
def min_scalar_type(a, *, _kind=None):
    c = _concrete(a)
    if c is not None:
        return _np.min_scalar_type(c)
    t = _t(a, "min_scalar_type")
    if t.ndim:
        return _core.np_dtype(t)
    raise _C.UnsupportedError("hop.numpy: min_scalar_type of a traced value depends on its value")


@implements(_np.can_cast)
def can_cast(from_, to, casting="safe", *, _kind=None):
    if isinstance(from_, (ndarray, _C.Tensor)):
        t = _t(from_)
        if t.ndim == 0 and not _C._is_proxy(t):
            return _np.can_cast(t.numpy(), to, casting)
        from_ = _core.np_dtype(t)
    return _np.can_cast(from_, to, casting)


# ------------------------------------------------------------ polynomials
# NumPy 1.24's poly*, roots and trim_zeros on plain coefficient arrays
# (hop.numpy has no poly1d class).  Where NumPy's result size follows the
# data (the leading zeros poly1d strips, polydiv's remainder, roots' zero
# coefficients) hop decides each zero test on the data: hop.compile
# specialises on it, hop.trace raises a TraceError saying why.

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
