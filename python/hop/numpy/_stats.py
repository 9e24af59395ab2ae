"""NumPy's statistics on hop arrays: averages (average, cov, corrcoef),
order statistics (quantile, percentile, median) and the nan-functions
(nanmean, nanvar, nanstd, nanmin, nanmax, nanargmin, nanargmax, nanprod,
nancumsum, nancumprod, nanmedian, nanquantile, nanpercentile), with NumPy
1.24's semantics.

Each follows NumPy's algorithm with hop.numpy's operations, so dtypes come
out as NumPy's (quantiles through NumPy's own table of methods).  Where
NumPy raises on the data (a weight sum of zero, an all-NaN slice) hop
decides the condition on the data: hop.compile specialises on it, hop.trace
raises a TraceError saying why.  Histograms are _histograms', searching and
sorting _sorting's, the set routines _sets', polynomials _polynomial's and
the other mathematical functions _mathfuncs's.
"""

import builtins
import math

import numpy as _np

from .. import _C, _exact
from . import _core, _corder
from . import _funcs as F
from ._funcs import (_axes, _axis, _axis_tuple, _kind_of, _size, _t, implements, sum as _sum)
from ._index_routines import _take_along
from ._lib import _arr
from ._reductions import _scan, in_order, masked_visit, ordered as _ordered, \
    x_memory_order
from ._fpcheck import checked, nan_may_say
from ._ndarray import ndarray, result_kind, wrap

__all__ = []


def _concrete(x):
    """x's value as an ndarray now, when it is known (a Python value, a
    NumPy array, a concrete array outside a trace), else None."""
    if isinstance(x, (int, float, bool, list, tuple, range, _np.ndarray, _np.generic)) and \
            not F._has_hop(x if isinstance(x, (list, tuple)) else [x]):
        return _np.asarray(x)
    if isinstance(x, ndarray) and x._fixed():
        return x._t.numpy()
    return None


# ----------------------------------------------------------- averages

@implements(_np.average)
@checked(_np.average)
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


def _cov_says(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
              **kwargs):
    """NumPy's cov's "Degrees of freedom <= 0 for slice" without weights:
    no more observations than ddof (its shapes say; None: no warning)."""
    if fweights is not None or aweights is not None:
        return None  # (the weights' sum decides: data)
    try:
        shape = tuple(_t(m, "cov").shape)
    except Exception:  # noqa: BLE001 - the implementation raises NumPy's error
        return None
    if len(shape) > 2:
        return None
    shape = (1,) * (2 - len(shape)) + shape
    if not rowvar and shape[0] != 1:
        shape = shape[::-1]
    n = shape[1]
    if ddof is None:
        ddof = 0 if bias else 1
    try:
        return "Degrees of freedom <= 0 for slice" if type(n) is int and shape[0] != 0 and \
            n - ddof <= 0 else None
    except TypeError:
        return None


@implements(_np.cov)
@checked(_np.cov, says=_cov_says)
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
    if _core.np_dtype(X).kind in "biu":  # NumPy's X -= avg[:, None] cannot cast back
        raise _core.ufunc_cast_error("subtract", _core.np_dtype(_t(avg)), _core.np_dtype(X),
                                     "same_kind")
    Xc = X - _t(avg).unsqueeze(1)
    X_T = Xc.T if w is None else (Xc * w).T
    if _core.np_dtype(X_T).kind == "c":  # NumPy's dot(X, X_T.conj()): Hermitian
        X_T = _C._op("conj", X_T)
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
@checked(_np.corrcoef)
def corrcoef(x, y=None, rowvar=True, bias=None, ddof=None, *, dtype=None, _kind=None):
    kind = _kind or result_kind((x, y), ndarray)
    c = _t(cov(x, y, rowvar, dtype=dtype, _kind=ndarray))
    if c.ndim == 0:
        return wrap(kind, c / c, scalar=True)
    d = _t(F.PUBLIC["diagonal"](ndarray(c)))
    cplx = _core.np_dtype(c).kind == "c"
    std = _C.sqrt(_C._op("real", d) if cplx else d)
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    if cplx:  # NumPy clips the real and the imaginary parts to [-1, 1] each
        return wrap(kind, _C._op("complex", _clip_unit(_C._op("real", c)),
                                 _clip_unit(_C._op("imag", c))))
    return wrap(kind, _clip_unit(c))


def _clip_unit(c):
    return _C.minimum(_C.maximum(c, -1.0), 1.0)


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
    if t.ndim:
        t = t.permute(*(keep + list(axes)))
    # (axis=(): a new last axis of size 1, each element its own slice)
    return t.reshape(tuple(t.shape[:len(keep)]) + (-1,)), len(keep)


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
    npd = _core.np_dtype(s)
    if not isinstance(n, int):
        res, last = _quantile_counted(s, n, _np.asanyarray(q), method, what)
    else:
        if n == 0:
            _numpy_empty_quantile(s, q, method)
        fb = _np.lib.function_base
        vi = _np.asanyarray(m["get_virtual_index"](n, _np.asanyarray(q)))
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
        last = s.select(0, n - 1) if n else None
    if npd.kind in "fc" and last is not None:
        # NumPy's partition puts a NaN (of either part) last, and a slice
        # whose last is one gets np.nan (nan+0j); the values taken before
        # it are the sorted ones, as hop's
        rt = res._t
        res = ndarray(_C.where(_C.ne(last, last), _nan_of(rt), rt))
        if rt.ndim == 0 and _core.np_dtype(rt) != npd and \
                _core.decide(_C.ne(last, last), f"{what}: whether the values hold a NaN"):
            res = ndarray(_core.cast(res._t, npd))  # (NumPy's arr.dtype.type(nan))
    return res


def _run_count(s, n):
    """n, the length of s's axis 0 known only when the plan runs (x[mask]'s
    unbacked size), as a 0-d int64 tensor that hands the call to eager
    (hop.compile) when it is 0: there NumPy's median warns of the empty
    slice and its quantile raises."""
    cnt = _C.full((), n, dtype=_C.int64)
    return _core.unknown_if(_C.eq(cnt, 0), cnt, _core.CHECK_EMPTY)


def _f64(v):
    return _C.full((), v, dtype=_C.float64)


def _even(f):
    """Whether each integral float of f is even (NumPy's f % 2 == 0)."""
    return _C.eq(f - _C.floor(f * 0.5) * 2, 0.0)


def _discrete_index(index, on_previous):
    """NumPy's _discret_interpolation_to_boundaries on a float64 tensor:
    floor(index) where on_previous(gamma, index), else the next integer,
    as int64, negatives 0."""
    prev = _C.floor(index)
    res = _C.where(on_previous(index - prev, index), prev, prev + 1).to(_C.int64)
    return _C.where(_C.lt(res, 0), 0, res)


# The quantile methods whose NumPy virtual index or gamma (np.full, then
# np.copyto into it) cannot take a count that is a hop array: the same
# rules on tensors (NumPy 1.24's _inverted_cdf, _closest_observation and
# fix_gamma's _get_gamma_mask).  The others' lambdas run on the count as
# it is (an ndarray: their arithmetic and np.floor/np.around are hop's).
_COUNTED_INDEX = {
    "inverted_cdf": lambda n, q: _discrete_index(n * q - 1, lambda g, i: _C.eq(g, 0.0)),
    "closest_observation": lambda n, q: _discrete_index(
        n * q - 1 - 0.5, lambda g, i: _C.logical_and(_C.eq(g, 0.0), _even(_C.floor(i)))),
}
_COUNTED_GAMMA = {
    "averaged_inverted_cdf": lambda g, i: _C.where(_C.eq(g, 0.0), _f64(0.5), _f64(1.0)),
    "midpoint": lambda g, i: _C.where(_C.eq(_C.floor(i), i), _f64(0.0), _f64(0.5)),
}


def _quantile_counted(s, n, q, method, what):
    """NumPy's _quantile of s along axis 0 whose length n is known only when
    the plan runs (a boolean mask's selection): its virtual indexes, the
    neighbours _get_indexes picks (-1 past the end, 0 before the start),
    gamma and lerp, computed in the plan from n; (result, s's last row)."""
    cnt = _run_count(s, n)
    nf = cnt.to(_C.float64)
    qt = _C.asarray(_np.array(q, dtype=_np.float64, order="C"))
    if method in _COUNTED_INDEX:
        vi = _COUNTED_INDEX[method](nf, qt)
    else:
        vi = _t(_quantile_method(method)["get_virtual_index"](ndarray(cnt), q), what)
    last = _C._op("take", s, 0, cnt - 1)
    if _core.np_dtype(vi).kind in "iu":
        return ndarray(_C._op("take", s, 0, vi.to(_C.int64))), last
    # (_get_indexes: below the start wins over past the end, as NumPy
    # assigns it second; gamma is taken from these, -1 included)
    floor = _C.floor(vi)
    above, below = _C.ge(vi, nf - 1), _C.lt(vi, 0.0)
    prev = _C.where(below, _f64(0.0), _C.where(above, _f64(-1.0), floor)).to(_C.int64)
    nxt = _C.where(below, _f64(0.0), _C.where(above, _f64(-1.0), floor + 1)).to(_C.int64)
    gamma = vi - prev.to(_C.float64)
    fix = _COUNTED_GAMMA.get(method)
    if fix is not None:
        gamma = fix(gamma, vi)
    gamma = gamma.reshape(tuple(vi.shape) + (1,) * (s.ndim - 1))
    before = ndarray(_C._op("take", s, 0, prev))
    after = ndarray(_C._op("take", s, 0, nxt))
    return _lerp(before, after, ndarray(gamma)), last


def _numpy_empty_quantile(s, q, method):
    """Raise what NumPy's quantile raises over the empty axis 0 of s: its
    IndexError's text depends on the method and the dtype (an index of -1
    out of bounds, or a non-empty take from an empty axis), so NumPy's own
    quantile of an empty array of that shape and dtype says it. Returns
    when NumPy gives a result (no quantiles)."""
    shape = tuple(d if isinstance(d, int) else 1 for d in s.shape)
    _np.quantile(_np.empty(shape, _core.np_dtype(s)), q, axis=0, method=method)


def _lerp(a, b, t):
    """NumPy's _lerp: a + (b - a) * t, and b - (b - a) * (1 - t) where
    t >= 0.5 (exact at both ends); t a concrete NumPy array or scalar, or
    a hop.numpy ndarray."""
    diff = b - a
    low = a + diff * t
    high = b - diff * (1 - t)
    if isinstance(t, ndarray):  # (a gamma computed in the plan)
        return F.where(ndarray(_C.ge(t._t, 0.5)), high, low, _kind=ndarray)
    tt = _np.asarray(t)
    if tt.ndim == 0:
        return high if tt >= 0.5 else low
    w = ndarray(_C.asarray(_np.array(tt >= 0.5, order="C")))
    return F.where(w, high, low, _kind=ndarray)


def _method_of(method, interpolation, fname):
    """NumPy's _check_interpolation_as_method: interpolation= (its
    DeprecationWarning; with a method too its TypeError) or method."""
    if interpolation is None:
        return method
    _core.numpy_warns(f"{fname} with interpolation=",
                      f"the `interpolation=` argument to {fname} was renamed to `method=`, which "
                      f"has additional options.\nUsers of the modes 'nearest', 'lower', "
                      f"'higher', or 'midpoint' are encouraged to review the method they used. "
                      f"(Deprecated NumPy 1.22)", DeprecationWarning)
    if method != "linear":
        raise TypeError("You shall not pass both `method` and `interpolation`!\n"
                        "(`interpolation` is Deprecated in favor of `method`)")
    return interpolation


def _traced_q(what, noun):
    """A traced q (an argument, or a hop.numpy array of the function's
    environment, which hop.compile reads on every call): its values decide
    which elements are taken and whether NumPy's range check raises.  In
    hop.compile a graph break (NumPy computes the statement on every call,
    its answer and errors); elsewhere (hop.trace, a HOP body) hop's
    UnsupportedError."""
    from .. import _breaks
    _breaks.conversion(_C.UnsupportedError, f"hop.numpy: {what} with traced {noun} is not "
                                            f"supported (they decide which elements are taken)")


def _ureduce_axis(axis, ndim):
    """axis as NumPy's _ureduce reads it (median, quantile, percentile and
    their NaN-ignoring forms): normalize_axis_tuple's (an int, a bool, an
    integer array of no dimensions, or a sequence or array of them; its
    AxisError, its 'repeated axis' ValueError), one axis as an int."""
    if axis is None:
        return None
    axes = _axis_tuple(axis, ndim)
    return axes[0] if len(axes) == 1 else axes


def _quantile_common(a, q, axis, out, overwrite_input, method, keepdims, what, kind):
    qc = _concrete(q)
    if qc is None:
        _traced_q(what, "quantiles")
    if qc.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    t = _t(a, what)
    axis = _ureduce_axis(axis, t.ndim)
    t2, ax = _reduce_axes(t, axis)
    r = _quantile(t2, qc, ax, method, what)
    rt = _zero_sign_known(t, r._t, what)
    if rt is None:
        return _by_numpy(_np.quantile, a, qc, axis, out, method, keepdims, what, kind)
    if keepdims:
        rt = _numpy_keepdims(rt, t, axis)
    # (keepdims: NumPy's r[..., newaxis...], an array even when 0-d)
    return F._out(kind, rt, scalar=rt.ndim == 0 and out is None and not keepdims, out=out,
                  what=what)


def _zero_sign_known(t, r, what):
    """r, hop's quantiles of float tensor t, where its signs of zero are
    NumPy's: NumPy takes the elements from np.partition's order (and
    nanquantile from its NaN-removed copy's), which puts -0.0 and 0.0, equal
    values, where its introselect happens to, not where hop's sort does;
    when a result is a zero and t holds zeros of both signs NumPy's sign is
    one hop does not know.  Traced: a run-time check (NUMPY_ZERO_SIGN:
    hop.compile runs the call eagerly); eagerly None then (the caller's
    NumPy call on the memory); else r."""
    if _core.np_dtype(t).kind != "f":
        return r
    zero = _C.eq(t, 0)
    neg = _C.lt(_C.copysign(_C.full((), 1.0, dtype=t.dtype), t), 0)
    flag = _C.logical_and(
        _C.logical_and(_C.any(_C.eq(r, 0), None, False),
                       _C.any(_C.logical_and(zero, neg), None, False)),
        _C.any(_C.logical_and(zero, _C.logical_not(neg)), None, False))
    if _core.checking():
        return _exact.checked(_core.unknown_if(flag, r, _core.CHECK_ZERO_SIGN))
    if _core._recording():
        return r  # (the trace checks it)
    return None if _core.decide(flag, f"{what}: whether a zero's sign is NumPy's") else r


def _by_numpy(np_fn, a, qc, axis, out, method, keepdims, what, kind):
    """np_fn (np.quantile, np.nanquantile) by NumPy on a's memory, of the
    quantiles qc (a percentile's divided by 100 already, as NumPy's own)."""
    from ._ufuncs import fallback
    return fallback(np_fn, what, (a, qc), dict(axis=axis, out=out, method=method,
                                               keepdims=keepdims), kind)


def _check_q(qc, hi, name):
    if qc is not None and qc.size and not (_np.all(0 <= qc) and _np.all(qc <= hi)):
        raise ValueError(f"{name} must be in the range [0, {hi}]")


@implements(_np.quantile)
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, interpolation=None, _kind=None):
    method = _method_of(method, interpolation, "quantile")
    qc = _concrete(q)
    _check_q(qc, 1, "Quantiles")
    return _quantile_common(a, qc if qc is not None else q, axis, out, overwrite_input, method,
                            keepdims, "quantile", _kind or _kind_of(a))


@implements(_np.percentile)
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, interpolation=None, _kind=None):
    method = _method_of(method, interpolation, "percentile")
    qc = _concrete(q)
    if qc is not None:
        qc = _np.true_divide(qc, 100)
        qc = _np.asanyarray(qc)
    if qc is not None and qc.size and not (_np.all(0 <= qc) and _np.all(qc <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return _quantile_common(a, qc if qc is not None else q, axis, out, overwrite_input, method,
                            keepdims, "percentile", _kind or _kind_of(a))


@implements(_np.median)
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False, *, _kind=None):
    kind = _kind or _kind_of(a)
    t = _t(a, "median")
    axis = _ureduce_axis(axis, t.ndim)
    if out is not None and hasattr(out, "shape") and (t.ndim or axis is None):
        from ._reduce_out import check_median
        axes = None if axis is None else set(_axes(axis, t.ndim))
        check_median(tuple(t.shape), axes, keepdims, out.shape)
        if keepdims and t.ndim:
            # (NumPy's _ureduce: the median into out[..., 0, :], 0 on each
            # reduced axis, whatever its length)
            index = tuple(0 if axes is None or i in axes else slice(None) for i in range(t.ndim))
            median(a, axis, out[(Ellipsis,) + index], overwrite_input, _kind=kind)
            return out
        return _median_into(t, axis, out, kind)
    if t.ndim == 0:  # the mean of the one value (a float); an array under keepdims
        if axis is not None:  # (NumPy's _ureduce checks the axes of a 0-d array too)
            _axis_tuple(axis, 0)
        rt = _t(F.mean(ndarray(t), _kind=ndarray))
        if _core.np_dtype(t).kind == "c":  # (a NaN of either part: NumPy's np.nan, nan+0j)
            rt = _C.where(_C.ne(t, t), _nan_of(rt), rt)
        return F._out(kind, rt, scalar=not keepdims and out is None, out=out, what="median")
    return _along_one_axis(a, t, axis, out, keepdims, kind, "median", _median_t)


def _along_one_axis(a, t, axis, out, keepdims, kind, what, compute, c_order=False):
    """median or nanmedian (compute(t, axis): the tensor of it along one
    axis, or all of t's axes flattened for None) as NumPy's _ureduce makes
    it: over one axis, NumPy's mean of a K-ordered copy of a, in a's order
    (_reductions.ordered), keepdims its view with a new axis (stride 0);
    over a tuple of axes a C-ordered copy with them moved last and
    flattened, so a C-ordered result, keepdims reshaped (c_order: that
    result over one axis too)."""
    axes = None if axis is None else _axes(axis, t.ndim)
    if axes is None or len(axes) != 1 or c_order:
        t2, ax = _reduce_axes(t, axis)
        rt = compute(t2, ax)
        if keepdims:
            rt = _numpy_keepdims(rt, t, axis)
        return F._out(kind, rt, scalar=rt.ndim == 0 and out is None and not keepdims, out=out,
                      what=what)
    if keepdims and out is None:
        r = _ordered(a, axes, False, kind, None, lambda x, ax, kd: compute(x, ax[0]), what)
        return r[(Ellipsis,) + tuple(None if d in axes else slice(None) for d in range(t.ndim))]
    return _ordered(a, axes, keepdims, kind, out,
                    lambda x, ax, kd: _keep(compute(x, ax[0]), x, ax, kd), what)


def _keep(r, x, axes, keepdims):
    return _numpy_keepdims(r, x, axes) if keepdims else r


def _median_t(t, axis):
    """The median of tensor t along axis (None: all of it)."""
    s, n = _sorted_along(t, axis)
    if isinstance(n, int):
        rt = _t(F.mean(ndarray(_middle_of(s, n)), axis=0, _kind=ndarray))
        last = s.select(0, n - 1) if n > 0 else None
    else:
        rt, last = _median_counted(s, n)
    if _core.np_dtype(t).kind in "fc" and last is not None:
        rt = _C.where(_C.ne(last, last), _nan_of(rt), rt)
    return rt


def _middle_of(s, n):
    """The middle element (n odd) or two (even) of s along axis 0 of length
    n: what NumPy's median takes the mean of."""
    return s.slice(0, n // 2 - (n % 2 == 0), n // 2 + 1, 1)


def _median_counted(s, n):
    """NumPy's median of s along axis 0 whose length n is known only when
    the plan runs (a boolean mask's selection): the mean of the middle
    element or of the middle two, taken at indexes computed in the plan
    (an odd count's one element is not the mean of it twice, which can
    overflow); (median, s's last row)."""
    cnt = _run_count(s, n)
    lo = _C._op("take", s, 0, (cnt - 1) // 2)
    hi = _C._op("take", s, 0, cnt // 2)
    one = _t(F.mean(ndarray(lo.unsqueeze(0)), axis=0, _kind=ndarray))
    two = _t(F.mean(ndarray(_C.stack([lo, hi], 0)), axis=0, _kind=ndarray))
    return _C.where(_C.eq(cnt % 2, 1), one, two), _C._op("take", s, 0, cnt - 1)


def _middle(t, axis):
    """t sorted along axis (None: all of it), moved to the front (nan
    last), its length, and its middle element (odd) or two (even): what
    NumPy's median takes the mean of.  A length known only when the plan
    runs (a boolean mask's selection) is a break (hop.compile runs the
    call in NumPy): median(..., out=) only comes here."""
    s, n = _sorted_along(t, axis)
    if not isinstance(n, int):
        from .._breaks import conversion
        conversion(_C.UnsupportedError, "hop.numpy: median(..., out=) over an axis whose "
                   "length is known only at run time is not supported")
    return s, n, _middle_of(s, n)


def _median_into(t, axis, out, kind):
    """np.median(..., out=out) as NumPy's _median runs it: the mean of the
    middle element(s) of each slice into out (mean's out=: the sum cast into
    out and divided there), then NaN where a slice holds one (its
    _median_nancheck's result[n] = np.nan, which an integer out refuses
    when some slice does)."""
    s, n, part = _middle(*_reduce_axes(t, axis))
    F.mean(ndarray(part), axis=0, out=out, _kind=kind)
    if _core.np_dtype(t).kind not in "fc" or n == 0:
        return out
    last = s.select(0, n - 1)
    nan = _C.ne(last, last)
    kind_out = _np.dtype(out.dtype).kind
    if kind_out in "fcb":  # (NumPy's result[n] = np.nan: NaN, nan+0j or True)
        from ._index_routines import copyto
        copyto(out, True if kind_out == "b" else math.nan, where=ndarray(nan))
        return out
    if _core.checking():
        # (NumPy's ValueError when a slice holds a NaN: the plan's run-time
        # check hands such a call to eager, which raises it)
        out._assign(_core.unknown_if(nan, _t(out, "median"), _core.CHECK_NAN_PATH),
                    "numpy.median(..., out=...)")
        return out
    if bool(_C.any(nan)):
        raise ValueError("cannot convert float NaN to integer")
    return out


def _nan_of(t):
    """A 0-d NaN of tensor t's dtype: nan+0j for a complex one (NumPy's
    np.nan stored into it)."""
    npd = _core.np_dtype(t)
    if npd.kind == "c":
        return _core.complex_scalar(complex(math.nan, 0.0), npd)
    return _C.full((), math.nan, dtype=t.dtype)


# -------------------------------------------------------- nan functions

def _nan_mask(t):
    return _C.ne(t, t) if _core.np_dtype(t).kind == "f" else None


def _replace_nan(t, v, mem=None):
    """NumPy's _replace_nan: (a copy of t with v for its NaNs, laid out in
    memory order mem as NumPy's copy of the array in K order, so that its
    sums add in NumPy's order (_reductions.x_memory_order; None: C order);
    the NaN mask, None for a dtype without NaN)."""
    if _core.np_dtype(t).kind == "c":
        # NumPy's isnan of a complex: either part NaN (nanmean, nanvar, ...
        # of a complex array skip it as of a float one)
        m = _corder.either_nan(t)
        fill = _core.complex_scalar(complex(v), _core.np_dtype(t))
        return in_order(t, mem, lambda x: _C.where(m if x is t else _corder.either_nan(x), fill,
                                                   x)), m
    m = _nan_mask(t)
    if m is None:
        return t, None
    fill = _C.full((), v, dtype=t.dtype)
    return in_order(t, mem, lambda x: _C.where(m if x is t else _nan_mask(x), fill, x)), m


@implements(_np.nanmean)
@checked(_np.nanmean, post=nan_may_say, nan=True)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True, _kind=None):
    kind = _kind or _kind_of(a)
    t = _t(a, "nanmean")
    _inexact_dtype(t, dtype, out)
    if _core.np_dtype(t).kind not in "fc":  # (no NaN: mean's)
        return F.mean(a, axis, dtype, out, keepdims, where=where, _kind=kind)
    if out is not None and hasattr(out, "dtype"):
        # NumPy's: the sum into out (its loop out's dtype and a's promoted),
        # divided there by the count (_divide_by_count(tot, cnt, out=out))
        from ._ufuncs import call_ufunc
        arr, mask = _replace_nan(t, 0, x_memory_order(a, kind, t, axis, keepdims, where, out))
        cnt = _sum(ndarray(_C.logical_not(mask)), axis, dtype=_np.intp, keepdims=keepdims,
                   where=where, _kind=ndarray)
        _sum(ndarray(arr), axis, dtype, out, keepdims, where=where, _kind=kind)
        call_ufunc("divide", (out, cnt), {"out": (out,), "casting": "unsafe"}, kind)
        return out

    mem = x_memory_order(a, kind, t, axis, keepdims, where)
    vis = masked_visit(a, kind, t, axis, keepdims, where)

    def compute(x, axes, kd, w=True):
        arr, mask = _replace_nan(x, 0, mem)
        cnt = _sum(ndarray(_C.logical_not(mask)), axes, dtype=_np.intp, keepdims=kd, where=w,
                   _kind=ndarray)
        tot = _sum(ndarray(arr), axes, dtype=dtype, keepdims=kd, where=w, _kind=ndarray,
                   _visit=vis)
        return _core.cast(_t(tot / cnt), _core.np_dtype(_t(tot)))
    # NumPy's sums of a copy of a (K order): in a's order (_reductions.ordered)
    return _ordered(a, axis, keepdims, kind, out, compute, "nanmean", where)


@implements(_np.nanprod)
@checked(_np.nanprod)
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True, *,
            _kind=None):
    kind = _kind or _kind_of(a)
    if _core.np_dtype(_t(a, "nanprod")).kind not in "fc":
        return F.prod(a, axis, dtype, out, keepdims, initial, where, _kind=kind)
    mem = x_memory_order(a, kind, _t(a, "nanprod"), axis, keepdims, where, out)
    vis = masked_visit(a, kind, _t(a, "nanprod"), axis, keepdims, where, out)
    return _ordered(a, axis, keepdims, kind, out, lambda x, axes, kd, w=True: _t(F.prod(
        _replace_nan(x, 1, mem)[0], axes, dtype, None, kd, initial, w, _kind=ndarray,
        _visit=vis)), "nanprod", where)


@implements(_np.nancumsum)
@checked(_np.nancumsum)
def nancumsum(a, axis=None, dtype=None, out=None, *, _kind=None):
    return _scan("cumsum", _np.cumsum, a, axis, dtype, out, _kind or _kind_of(a), nan=0)


@implements(_np.nancumprod)
@checked(_np.nancumprod)
def nancumprod(a, axis=None, dtype=None, out=None, *, _kind=None):
    return _scan("cumprod", _np.cumprod, a, axis, dtype, out, _kind or _kind_of(a), nan=1)


def _nanextreme(a, axis, out, keepdims, initial, where, fn, fill, what, kind):
    t = _t(a, what)
    if _core.np_dtype(t).kind not in "fc":
        # (NumPy's fmax/fmin.reduce, whose name its errors about out= give)
        from ._reductions import _check_out
        _check_out(what, t, () if t.ndim == 0 else _axes(axis, t.ndim), keepdims, out, where)
        return fn(a, axis, out, keepdims, initial=initial, where=where, _kind=kind)
    if out is not None and hasattr(out, "dtype"):
        # (NumPy's fmax/fmin.reduce into out: _reductions.into_loop)
        from ._reductions import into_loop
        a = wrap(ndarray, into_loop(t, () if t.ndim == 0 else _axes(axis, t.ndim), out,
                                    initial is None))

    def compute(x, axes, kd, w=True):
        if _core.np_dtype(x).kind == "c":
            # a NaN in either part is skipped; the fill is below (above)
            # every complex in NumPy's lexicographic order
            arr, mask = _replace_nan(x, complex(fill, fill))
        else:
            mask = _nan_mask(x)
            arr = _C.where(mask, _C.full((), fill, dtype=x.dtype), x)
        r = _t(fn(arr, axes, None, kd, initial=initial, where=w, _kind=ndarray))
        if initial is None:
            # (NumPy's fmax.reduce: an all-NaN slice is NaN, but with
            # initial it is initial, which takes part as any element does)
            allnan = _core.over(_C.all, mask, axes, kd)
            nan = _core.complex_scalar(complex(math.nan, 0.0), _core.np_dtype(r)) if \
                _core.np_dtype(r).kind == "c" else _C.full((), math.nan, dtype=r.dtype)
            r = _C.where(allnan, nan, r)
        return r
    # NumPy's fmin/fmax.reduce of a: in a's order (_reductions.ordered)
    return _ordered(a, axis, keepdims, kind, out, compute, what, where)


def _fextreme_errors(call, hop_name, numpy_name):
    """call(): NumPy's nanmin/nanmax are fmin/fmax.reduce, so an error of
    theirs names fmin/fmax where hop's min/max, which computes them, names
    minimum/maximum (a NumPy ValueError; hop's own ShapeError of a
    hop.Tensor operand is left as it is)."""
    try:
        return call()
    except ValueError as e:
        text = str(e)
        for said in (f" {hop_name} ", f"'{hop_name}'"):
            if type(e) is ValueError and said in text:
                raise ValueError(text.replace(said, said.replace(hop_name, numpy_name), 1)) \
                    from None
        raise


@implements(_np.nanmin)
@checked(_np.nanmin, post=nan_may_say, nan=True)
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=True, *, _kind=None):
    return _fextreme_errors(
        lambda: _nanextreme(a, axis, out, keepdims, initial, where, F.min, math.inf, "nanmin",
                            _kind or _kind_of(a)), "minimum", "fmin")


@implements(_np.nanmax)
@checked(_np.nanmax, post=nan_may_say, nan=True)
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=True, *, _kind=None):
    return _fextreme_errors(
        lambda: _nanextreme(a, axis, out, keepdims, initial, where, F.max, -math.inf, "nanmax",
                            _kind or _kind_of(a)), "maximum", "fmax")


def _nanarg(a, axis, out, keepdims, fn, fill, what, kind):
    t = _t(a, what)
    arr, mask = _replace_nan(t, fill)
    if mask is not None:
        dims = None if axis is None else list(_axes(axis, t.ndim))  # (NumPy's np.all(mask, axis))
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


def _inexact_dtype(t, dtype, out=None):
    """NumPy's nanmean/nanvar/nanstd take no integer dtype= or out= for a
    float or complex array (a complex one too, though it has no NaN mask
    here)."""
    if _core.np_dtype(t).kind not in "fc":
        return
    if dtype is not None and _np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")
    if out is not None and hasattr(out, "dtype") and _np.dtype(out.dtype).kind not in "fc":
        raise TypeError("If a is inexact, then out must be inexact")


def _nanvar_in(t, mem, axis, dtype, ddof, keepdims, what, where):
    """_nanvar_t of tensor t computed on t permuted to memory order mem (its
    axes outermost first), so that the copies it makes (the NaN-replaced
    array, the deviations, their squares) lie as NumPy's, in the array's K
    order, and their sums add in NumPy's order; the result in t's axes."""
    nd = t.ndim
    inv = [mem.index(d) for d in range(nd)]
    axes = _axes(axis, nd)
    w = where
    if where is not True:
        w = _C.logical_or(_t(where, f"{what}: where"),
                          _C.zeros(tuple(t.shape), dtype=_C.bool)).permute(*mem)
    v = _nanvar_t(t.permute(*mem), tuple(sorted(inv[d] for d in axes)), dtype, ddof, keepdims,
                  what, w)
    if v is None or keepdims:
        return v if v is None else v.permute(*inv)
    kept = [mem[i] for i in range(nd) if mem[i] not in axes]  # (t's axes, in v's order)
    return v.permute(*sorted(range(len(kept)), key=kept.__getitem__)) if kept else v


def _nanvar_t(a, axis, dtype, ddof, keepdims, what, where=True, into=None, kind=ndarray,
              mem=None):
    """NumPy's nanvar step by step.  into: out=, which the last sum goes
    into (its loop out's dtype and the squares' promoted), divided there
    by the degrees of freedom (casting='unsafe'), NaN where they are not
    positive; returned.  mem: the array's memory order in a's axes
    (_reductions.x_memory_order), which NumPy's copies keep (_nanvar_in)."""
    t = _t(a, what)
    if mem is not None and into is None:
        return _nanvar_in(t, mem, axis, dtype, ddof, keepdims, what, where)
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
    dims = None if axis is None else _axes(axis, t.ndim)
    cnt = _core.over(_C.sum, _C.logical_not(mask).to(_C.int64), dims, True)
    avg = _t(_sum(ndarray(arr), axis, dtype=dtype, keepdims=True, _kind=ndarray))
    # (NumPy's _divide_by_count: divide(avg, cnt, out=avg, casting='unsafe'),
    # the quotient in the promoted dtype, complex128 for complex64, rounded
    # back into avg's)
    from ._reductions import _divided
    avg = _t(_divided(ndarray(avg), ndarray(cnt)), "nanvar")
    # (NumPy's subtract(arr, avg, out=arr, casting='unsafe'): the deviations
    # in arr's dtype, and so their squares; a complex arr keeps its
    # imaginary part though a real dtype= dropped the mean's)
    x = _core.cast(_C.sub(*_core.promote(arr, avg)), _core.np_dtype(arr))
    x = _C.where(mask, _C.zeros((), dtype=x.dtype), x)
    if _core.np_dtype(x).kind == "c":  # |x|**2, real, as NumPy's x * conj(x)
        re, im = _C._op("real", x), _C._op("imag", x)
        x2 = re * re + im * im
    else:
        x2 = x * x
    dof = _core.over(_C.sum, _C.logical_not(mask).to(_C.int64), dims, keepdims) - ddof
    if into is not None:
        from ._index_routines import copyto
        from ._ufuncs import call_ufunc
        _sum(ndarray(x2), axis, dtype, into, keepdims, where=where, _kind=kind)
        call_ufunc("divide", (into, ndarray(dof)), {"out": (into,), "casting": "unsafe"}, kind)
        copyto(into, math.nan, casting="unsafe", where=ndarray(_C.le(dof, 0)))
        return into
    var = _t(_sum(ndarray(x2), axis, dtype=dtype, keepdims=keepdims, _kind=ndarray))
    var = var / dof
    var = _C.where(_C.le(dof, 0), _C.full((), math.nan, dtype=var.dtype), var)
    return var


def _nanvar_out(a, axis, dtype, out, ddof, keepdims, _kind, what, plain, root, where=True):
    # nanvar/nanstd (root: the square root); an array with no nan-capable
    # dtype is plain's (var/std)
    kind = _kind or _kind_of(a)
    t = _t(a, what)
    _inexact_dtype(t, dtype, out)
    if _core.np_dtype(t).kind not in "fc":  # (NumPy's var/std of it, where= passed on)
        return plain(a, axis, dtype, out, ddof, keepdims, where=where, _kind=kind)
    if out is not None and hasattr(out, "dtype"):
        _nanvar_t(t, axis, dtype, ddof, keepdims, what, where, into=out, kind=kind)
        if root:  # (NumPy's np.sqrt(var, out=var))
            from ._ufuncs import call_ufunc
            call_ufunc("sqrt", (out,), {"out": (out,)}, kind)
        return out

    mem = x_memory_order(a, kind, t, axis, keepdims, where)

    def compute(x, axes, kd, w=True):
        v = _nanvar_t(x, axes, dtype, ddof, kd, what, w, mem=mem)
        return _C.sqrt(v) if root else v
    # NumPy's sums of a copy of a (K order): in a's order (_reductions.ordered)
    return _ordered(a, axis, keepdims, kind, out, compute, what, where)


@implements(_np.nanvar)
@checked(_np.nanvar, post=nan_may_say, nan=True)
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           _kind=None):
    return _nanvar_out(a, axis, dtype, out, ddof, keepdims, _kind, "nanvar", F.var, False,
                       where)


@implements(_np.nanstd)
@checked(_np.nanstd, post=nan_may_say, nan=True)
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
@checked(_np.nanmedian, post=nan_may_say, nan=True)
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False, *, _kind=None):
    kind = _kind or _kind_of(a)
    t = _t(a, "nanmedian")
    if not isinstance(_size(t.shape), int) or _size(t.shape):  # (empty: NumPy's nanmean's)
        axis = _ureduce_axis(axis, t.ndim)
    if _core.np_dtype(t).kind not in "fc":
        return median(a, axis, out, overwrite_input, keepdims, _kind=kind)
    axes = None if axis is None else _axes(axis, t.ndim)
    n = t.shape[axes[0]] if axes is not None and len(axes) == 1 else 0
    masked = isinstance(n, int) and n < 600
    # NumPy's _nanmedian1d (a 1-d a, axis=None or all axes, or 600 or more
    # along the axes: apply_along_axis) gives an all-NaN slice's last element;
    # np.ma.median's (fewer, over one axis or several flattened) np.nan
    m = _size([t.shape[d] for d in axes]) if axes is not None else 0
    last = axes is None or len(axes) == t.ndim or (isinstance(m, int) and m >= 600)
    ties = not last and _core.np_dtype(t).kind == "c"

    def compute(x, ax):
        r = _nanmedian_t(x, ax, last)
        return _nan_path_checked(_masked_ties(x, ax), r, "nanmedian over axes of a complex "
                                 "array whose slice holds a NaN and as many numbers at or above "
                                 "inf+0j as below it (np.ma.median's tie with its NaN fill)") \
            if ties else r
    # (600 or more along the axis: NumPy's apply_along_axis, C-ordered)
    return _along_one_axis(a, t, axis, out, keepdims, kind, "nanmedian", compute,
                           c_order=not masked)


def _masked_ties(t, axis):
    """Where NumPy's nanmedian over one axis of fewer than 600 (np.ma.median
    of t with its NaNs masked) is not the median of the slice's numbers: a
    bool tensor over the slices.  np.ma sorts a masked NaN as its fill
    inf+0j, among the numbers equal to it in an order of its quicksort's,
    and replaces a masked pick by inf+infj; the middle picks (count // 2 and
    the one before) reach that tie exactly when the numbers at or above
    inf+0j (a real part of +inf, an imaginary one >= 0) are at least half of
    the count.  Below that the picks are the sorted numbers', as hop's."""
    nan = _corder.either_nan(t)
    num = _C.logical_not(nan)
    re, im = _C._op("real", t), _C._op("imag", t)
    top = _C.logical_and(_C.logical_and(_C.eq(re, math.inf), _C.ge(im, 0.0)), num)
    cnt = _C.sum(num.to(_C.int64), [axis], False)
    ntop = _C.sum(top.to(_C.int64), [axis], False)
    tie = _C.logical_and(_C.gt(ntop, 0), _C.ge(ntop * 2, cnt))
    return _C.logical_and(_C.any(nan, [axis], False), tie)


def _nan_path_checked(flag, r, what):
    """r, where no element of the bool tensor flag is true: flag marks where
    a NaN sends NumPy down a path hop does not follow.  Traced, a run-time
    check (kind NUMPY_NAN_PATH: hop.compile runs the call in NumPy);
    eagerly an UnsupportedError naming what when flag holds a true (but
    not in hop.compile's eager run recording a path: the trace checks it)."""
    if _core.checking():
        return _exact.checked(_core.unknown_if(flag, r, _core.CHECK_NAN_PATH))
    if _core._recording():
        return r
    if _core.decide(_C.any(flag, None, False), what):
        raise _C.UnsupportedError(f"hop.numpy: {what} is not supported")
    return r


def _nanmedian_t(t, axis, last=False):
    """The median of tensor t's numbers (NaN skipped) along axis; of an
    all-NaN slice NaN, or its last element (last: NumPy's _nanmedian1d)."""
    s, n, cnt = _nan_sorted(t, axis)
    if isinstance(n, int) and n == 0:  # NumPy's mean of the empty slices (NaN, nan+nanj)
        return _t(F.mean(ndarray(s), axis=0, _kind=ndarray))
    lo = _nan_take(s, (cnt - 1) // 2)
    hi = _nan_take(s, cnt // 2)
    r = _t(F.mean(ndarray(_C.stack([lo, hi], 0)), axis=0, _kind=ndarray))
    nan = _nan_of(r)
    size = _size(t.shape)
    if last and isinstance(size, int) and size != 0:
        nan = _core.cast(t.reshape(-1).select(0, -1) if axis is None else t.select(axis, -1),
                         _core.np_dtype(r))
    return _C.where(_C.eq(cnt, 0), nan, r)


def _nanquantile(a, qc, axis, out, method, keepdims, what, kind):
    t = _t(a, what)
    if isinstance(_size(t.shape), int) and _size(t.shape) == 0:  # (NumPy's nanmean then)
        return nanmean(a, axis, out=out, keepdims=keepdims, _kind=kind)
    if _np.ndim(qc) > 2:  # (NumPy's _quantile of each slice)
        raise ValueError("q must be a scalar or 1d")
    axis = _ureduce_axis(axis, t.ndim)
    npd = _core.np_dtype(t)
    t2, ax = _reduce_axes(t, axis)
    if npd.kind in "fc" and method in ("linear", "lower", "higher", "nearest", "midpoint"):
        r = _nanquantile_t(t, t2, ax, qc, method, what)
    else:
        if npd.kind in "fc":
            # NumPy's quantile of each slice's numbers: without a NaN the
            # slice's quantile (the virtual index of another method depends
            # on the count, which hop follows only for the five above)
            t2 = _nan_path_checked(_C.any(_C.ne(t2, t2), None, False), t2,
                                   f"{what} with method={method!r} of an array holding a NaN")
        r = _quantile(t2, qc, ax, method, what)._t
    r = _zero_sign_known(t, r, what)
    if r is None:
        return _by_numpy(_np.nanquantile, a, qc, axis, out, method, keepdims, what, kind)
    r = _along_axis_order(r, _np.ndim(qc), t2, axis)
    if keepdims:
        r = _numpy_keepdims(r, t, axis)
    # (keepdims: NumPy's r[..., newaxis...], an array even when 0-d)
    return F._out(kind, r, scalar=r.ndim == 0 and out is None and not keepdims, out=out,
                  what=what)


def _nanquantile_t(t, t2, ax, qc, method, what):
    """NumPy's nanquantile of float or complex tensor t (t2 with the axes
    flattened into ax: _reduce_axes) for one of the methods whose virtual
    index hop computes from each slice's count of numbers: a tensor of
    shape q's + the slices'."""
    s, n, cnt = _nan_sorted(t2, ax)
    # an integer q (linear's, midpoint's virtual index (n - 1) * q is an
    # integer then): NumPy takes the element, no lerp, in a's dtype
    taken = method in ("lower", "higher", "nearest") or _np.asanyarray(
        _quantile_method(method)["get_virtual_index"](2, _np.asanyarray(qc))).dtype.kind in "iu"
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
        if taken:
            rt = before._t  # (NumPy's take of an integer index: no lerp)
        else:
            # NumPy's _lerp: the difference in a's dtype, times gamma (f64);
            # linear's gamma is vi - previous index, which NumPy sets to -1
            # at the last number (_get_indexes): 1 for one number, whose
            # lerp then keeps -0.0 (gamma 0 made it -0.0 + 0.0)
            gamma = ndarray(vi - _C.where(above, -1.0, prev) if method == "linear" else
                            vi - prev)
            diff = after - before
            low = before + diff * gamma
            high = after - diff * (1 - gamma)
            rt = _t(F.where(ndarray(_C.ge(gamma._t, 0.5)), high, low, _kind=ndarray))
        rt = _C.where(_C.eq(cnt, 0), _nan_of(rt), rt)
        outs.append(rt)
    r = _C.stack(outs, 0).reshape(q.shape + tuple(outs[0].shape))
    return _core.cast(r, _nanquantile_dtype(t, cnt, "lower" if taken else method, what))


def _along_axis_order(r, k, t2, axis):
    """r (q's k dims, then the slices') in the order of NumPy's
    nanquantile over an array of 2 or more dims (t2: with the axes
    flattened): np.apply_along_axis puts q's dims where the axis was, then
    np.moveaxis(result, axis, 0) moves only the one at axis (the axis
    normalized; -1 for several axes, the last) to the front, so a 2-d q
    comes out split (axis 1: q0, the slices' first dim, q1, ...)."""
    if k < 2 or axis is None or t2.ndim == 1:
        return r
    m = t2.ndim - 1  # (the slices' dims)
    single = not isinstance(axis, (tuple, list)) or len(axis) == 1
    ax = _axes(axis, t2.ndim)[0] if single else m
    dims = [k + i for i in range(ax)] + list(range(k)) + [k + i for i in range(ax, m)]
    src = ax if single else len(dims) - 1
    return r.permute(*([dims[src]] + [d for j, d in enumerate(dims) if j != src]))


def _numpy_keepdims(r, t, axis):
    """NumPy's _ureduce keepdims of a result r over tensor t's axes:
    r[(..., newaxis for a reduced dim, : for a kept one)], the kept ones
    r's last dims."""
    axes = range(t.ndim) if axis is None else _axes(axis, t.ndim)
    lead = r.ndim - (t.ndim - len(axes))
    tail = list(r.shape[lead:])
    return r.reshape(tuple(r.shape[:lead]) +
                     tuple(1 if d in axes else tail.pop(0) for d in range(t.ndim)))


def _nanquantile_dtype(t, cnt, method, what):
    """The dtype of NumPy's nanquantile of float or complex tensor t (cnt:
    the numbers in each slice): a's dtype for a method that takes an
    element, else float64 or complex128 (its lerp's), but an all-NaN slice
    is np.full(nan, a's dtype), and NumPy's apply_along_axis gives the dtype
    of its first slice's."""
    npd = _core.np_dtype(t)
    wide = _np.dtype(_np.complex128 if npd.kind == "c" else _np.float64)
    if method in ("lower", "higher", "nearest") or npd == wide:
        return npd
    first = cnt.reshape(-1)
    if first.shape[0] == 0:
        return wide
    allnan = _core.decide(_C.eq(first.select(0, 0), 0), f"{what}: whether a slice is all NaN")
    return npd if allnan else wide


@implements(_np.nanquantile)
@checked(_np.nanquantile, post=nan_may_say, nan=True)
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, interpolation=None, _kind=None):
    method = _method_of(method, interpolation, "nanquantile")
    qc = _concrete(q)
    if qc is None:
        _traced_q("nanquantile", "quantiles")
    _check_q(qc, 1, "Quantiles")
    return _nanquantile(a, qc, axis, out, method, keepdims, "nanquantile", _kind or _kind_of(a))


@implements(_np.nanpercentile)
@checked(_np.nanpercentile, post=nan_may_say, nan=True)
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, interpolation=None, _kind=None):
    method = _method_of(method, interpolation, "nanpercentile")
    qc = _concrete(q)
    if qc is None:
        _traced_q("nanpercentile", "percentiles")
    qc = _np.asanyarray(_np.true_divide(qc, 100))
    if qc.size and not (_np.all(0 <= qc) and _np.all(qc <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return _nanquantile(a, qc, axis, out, method, keepdims, "nanpercentile", _kind or _kind_of(a))
