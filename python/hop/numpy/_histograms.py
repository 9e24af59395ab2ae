"""NumPy's histograms on hop arrays (its reference's "Histograms"):
histogram, histogram_bin_edges, histogram2d, histogramdd, bincount and
digitize, with NumPy 1.24's semantics and bin arithmetic.

bincount's length follows the data: an unbacked symbol under hop.trace and
hop.compile.  Where NumPy raises on the data (a negative value to count,
bins that do not increase, an autodetected range that is not finite) hop
decides the condition on the data: hop.compile specialises on it, hop.trace
raises a TraceError saying why.
"""

import builtins
import math
import operator

import numpy as _np

from .. import _C
from . import _core, _corder
from . import _funcs as F
from ._funcs import _kind_of, _t, implements
from ._ndarray import ndarray, result_kind, wrap
from ._sorting import _one_d, searchsorted

__all__ = []


# ------------------------------------------------------ counts and bins

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
        _core.numpy_warns("bincount(minlength=None)", "0 should be passed as minlength instead "
                          "of None; this will error in future.", DeprecationWarning)
        minlength = 0
    # (NumPy's "|O&" with PyArray_PyIntAsIntp: a bool is refused)
    minlength = F._int_arg(minlength)
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
        w = _t(weights, "bincount")
        if not _np.can_cast(_core.np_dtype(w), _np.float64, casting="safe"):
            raise TypeError(f"Cannot cast array data from {_core.np_dtype(w)!r} to "
                            f"dtype('float64') according to the rule 'safe'")
        w = _core.cast(w, _np.dtype(_np.float64))
        if tuple(w.shape) != tuple(t.shape):
            raise ValueError("The weights and list don't have the same length.")
        vals = w
        base = _C.zeros((n,), dtype=_C.float64)
    return wrap(kind, _C._op("put", base, t, vals, True))


@implements(_np.digitize)
def digitize(x, bins, right=False, *, _kind=None):
    kind = _kind or _kind_of(x)
    if _core.np_dtype(_t(x, "digitize")).kind == "c":
        raise TypeError("x may not be complex")
    b = _one_d(_t(bins, "digitize"))
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


# ------------------------------------------------------------- histograms

def _estimated_bins(t, name, range_, weights, what):
    """The number of equal bins NumPy's estimator `name` ('auto', 'fd',
    ...) chooses for concrete data t (NumPy's own selector on t's values:
    the count follows the data, which a traced t does not give)."""
    from numpy.lib import histograms as nh
    if name not in nh._hist_bin_selectors:
        raise ValueError(f"{name!r} is not a valid estimator for `bins`")
    if weights is not None:
        raise TypeError("Automated estimation of the number of bins is not supported for "
                        "weighted data")
    if _C._is_proxy(t):  # (hop.compile: a graph break, NumPy's own call on the values)
        from .. import _breaks
        _breaks.conversion(_C.UnsupportedError, f"hop.numpy: {what} with bins={name!r}: the "
                                                f"data choose the number of bins")
    a = t.numpy()
    first, last = nh._get_outer_edges(a, range_)
    if range_ is not None:
        a = a[(a >= first) & (a <= last)]
    if a.size == 0:
        return 1
    width = nh._hist_bin_selectors[name](a, (first, last))
    return int(_np.ceil(nh._unsigned_subtract(last, first) / width)) if width else 1


def _bin_edges(t, bins, range_, weights, what, dd=False):
    """NumPy's _get_bin_edges: (edges tensor, (first, last, n) for equal
    bins or None).  dd: histogramdd's equal bins instead, NumPy's
    linspace(smin, smax, n + 1) in float64 whatever the data's dtype."""
    if isinstance(bins, str):
        bins = _estimated_bins(t, bins, range_, weights, what)
    b = _core.operand(bins, what)
    if b.t is None or b.t.ndim == 0:
        try:
            n = operator.index(_core.scalar_arg(b) if b.t is None else b.t.item())
        except TypeError as e:
            raise TypeError("`bins` must be an integer, a string, or an array") from e
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
            if _core.np_dtype(t).kind == "f" and not dd:
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
            lo = _C.amin(t, None, False)
            hi = _C.amax(t, None, False)
            if not _core.decide(_C.logical_and(_C.lt(_C.abs(lo.to(_C.float64)), math.inf),
                                               _C.lt(_C.abs(hi.to(_C.float64)), math.inf)),
                                f"{what}: whether the range is finite"):
                raise ValueError(f"autodetected range of [{float('nan')}, {float('nan')}] is not "
                                 f"finite")
            # (NumPy's a.min() - 0.5 of equal ends: a NumPy scalar minus a
            # Python float, in float64 whatever the data's dtype)
            lo, hi = lo.to(_C.float64), hi.to(_C.float64)
            same = _C.eq(lo, hi)
            lo = _C.where(same, lo - 0.5, lo)
            hi = _C.where(same, hi + 0.5, hi)
        # NumPy's result_type(first, last, a): a float array's own dtype (the
        # ends are its scalars, or the Python ints 0 and 1 of an empty one)
        bin_type = _core.np_dtype(t) if _core.np_dtype(t).kind == "f" and not dd \
            else _np.dtype(_np.float64)
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
    return _weighted_counts(idx, w, sel, n, ntype)


_BLOCK = 65536  # NumPy's histogram takes its data in blocks of this many


def _weighted_counts(idx, w, sel, n, ntype, part=False):
    """NumPy 1.24's weighted equal-bins counts: per block of _BLOCK data
    elements np.bincount of the kept ones' weights (in double: a float32
    weight too) added to the counts (of ntype, from 0): cast to ntype first
    (`n += bincount(...).astype(ntype)`), but for a complex weight's parts,
    each added in double into its part (`n.real += bincount(...)`).  sel:
    the kept elements' positions in the data, idx: their bins."""
    if ntype.kind == "c":
        pdt = _np.dtype(ntype.char.lower())
        re = _weighted_counts(idx, _C._op("real", w), sel, n, pdt, True)
        im = _weighted_counts(idx, _C._op("imag", w), sel, n, pdt, True)
        return _C._op("complex", re, im)
    wd = _core.cast(_C._op("take", w, 0, sel), _np.dtype(_np.float64))
    size = w.shape[0]
    nblocks = 1 if size <= _BLOCK else int(-(-size // _BLOCK))  # (a size's guard)
    if nblocks == 1:
        return _core.cast(_C._op("put", _C.zeros((n,), dtype=_C.float64), idx, wd, True), ntype)
    flat = idx + (sel // _BLOCK) * n
    per = _C._op("put", _C.zeros((nblocks * n,), dtype=_C.float64), flat, wd, True)
    per = per.reshape(nblocks, n)
    out = _core.cast(_C.zeros((n,), dtype=_C.float64), ntype)
    for k in builtins.range(nblocks):
        if part:
            out = _core.cast(_core.cast(out, _np.dtype(_np.float64)) + per.select(0, k), ntype)
        else:
            out = out + _core.cast(per.select(0, k), ntype)
    return out


def _ravel_and_check_weights(a, weights, what):
    """NumPy's: a and weights (None or of a's own shape, before either is
    flattened) as 1-d tensors."""
    t = _t(a, what)
    if _core.np_dtype(t) == _np.dtype(bool):
        _core.numpy_warns(f"{what} of a bool array", "Converting input from bool to <class "
                          "'numpy.uint8'> for compatibility.", RuntimeWarning)
        t = t.to(_C.uint8)
    w = None
    if weights is not None:
        w = _t(weights, what)
        if tuple(w.shape) != tuple(t.shape):
            raise ValueError("weights should have the same shape as a.")
        w = w.reshape(-1)
    return t.reshape(-1), w


def _edges_out(kind, bins, edges):
    """The bin edges as NumPy returns them, np.asarray(bins): the array
    given as bins itself (the same object: a write into either is the
    other's), a new array of a list's or of a number of bins."""
    if (isinstance(bins, ndarray) and not bins._scalar or type(bins) is _np.ndarray) and \
            bins.ndim == 1:
        return bins
    return wrap(kind, edges)


@implements(_np.histogram_bin_edges)
def histogram_bin_edges(a, bins=10, range=None, weights=None, *, _kind=None):
    t, _ = _ravel_and_check_weights(a, weights, "histogram_bin_edges")
    if _core.np_dtype(t).kind == "c":
        from ._ufuncs import fallback
        return fallback(_np.histogram_bin_edges, "histogram_bin_edges", (a, bins),
                        dict(range=range, weights=weights), _kind or _kind_of(a))
    edges, _ = _bin_edges(t, bins, range, weights, "histogram_bin_edges")
    return _edges_out(_kind or _kind_of(a), bins, edges)


@implements(_np.histogram)
def histogram(a, bins=10, range=None, normed=None, weights=None, density=None, *, _kind=None):
    kind = _kind or _kind_of(a)
    if normed is not None:
        raise TypeError("histogram() got an unexpected keyword argument 'normed'")
    t, w = _ravel_and_check_weights(a, weights, "histogram")
    if _core.np_dtype(t).kind == "c":  # (NumPy's own: complex edges, ComplexWarnings)
        from ._ufuncs import fallback
        return fallback(_np.histogram, "histogram", (a, bins),
                        dict(range=range, weights=weights, density=density), kind)
    edges, uniform = _bin_edges(t, bins, range, weights, "histogram")
    ntype = _np.dtype(_np.intp) if w is None else _core.np_dtype(w)
    if uniform is not None and not isinstance(uniform[0], _C.Tensor):
        hist = _histogram_uniform_range(t, w, edges, uniform, ntype)
    elif uniform is not None:
        first, last, n = uniform
        edt = _core.np_dtype(edges)
        x = _core.cast(t, edt)
        keep = _C.logical_and(_C.ge(x, _core.cast(first, edt)), _C.le(x, _core.cast(last, edt)))
        sel = keep.nonzero().select(1, 0)
        xs = _C._op("take", x, 0, sel)
        # NumPy's ((a - first) / (last - first)) * n in the edges' dtype (its
        # scalars cast to a float16/32 array's), last - first in the ends'
        # own (the data's; float64 when they were moved apart by 0.5)
        lo, hi = _core.cast(first, edt), _core.cast(last, edt)
        denom = _C.where(_C.eq(_core.cast(lo, _np.dtype(_np.float64)), first), hi - lo,
                         _core.cast(last - first, edt))
        f_idx = (xs - lo) / denom * _core.cast(_C.full((), n, dtype=_C.float64), edt)
        idx = f_idx.to(_C.int64)
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
            hist = _weighted_counts(idx, w, sel, n, ntype)
    else:
        order = _corder.argsort_any(t, 0)
        sa = _C._op("take", t, 0, order)
        sa_c, ed_c = _core.promote(sa, edges)
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
    if density:  # NumPy's n / db / n.sum(): the sum in the counts' own dtype
        db = ndarray((edges.slice(0, 1, None, 1) - edges.slice(0, 0, -1, 1)).to(_C.float64))
        h = ndarray(hist)
        hist = (h / db / h.sum())._t
    return wrap(kind, hist), _edges_out(kind, bins, edges)


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
            # (NumPy 1.24's text, two spaces and all)
            raise ValueError("The dimension of bins must be equal to the dimension of the  "
                             "sample x.")
        bins_list = list(bins)
    except TypeError:
        bins_list = [bins] * D
    ranges = [None] * D if range is None else list(range)
    edges, nbin, idxs = [], [], []
    for i in builtins.range(D):
        if isinstance(bins_list[i], str):
            # NumPy's histogramdd takes no estimator ('auto', 'fd', ...: histogram's
            # alone): it compares a scalar bins[i] with 1 first
            raise TypeError("'<' not supported between instances of 'str' and 'int'")
        col = s.select(1, i)
        e, _ = _bin_edges(col, bins_list[i], ranges[i], None, "histogramdd", dd=True)
        edges.append(e)  # explicit edges keep their dtype, as NumPy's asarray(bins[i])
        nb = e.shape[0] + 1
        nbin.append(nb)
        ec, c = _core.promote(e, col)
        k = _C._op("searchsorted", ec, c, True)
        # NumPy's sample[:, i] == edges[i][-1]: an array and a scalar, cast
        # by the scalar's value (float16 data 5004 is on the edge 5004.5)
        on_edge = (ndarray(col) == ndarray(e)[nb - 2])._t
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
    return wrap(kind, hist), [_edges_out(kind, b, e) for b, e in zip(bins_list, edges)]


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
        if isinstance(bins, str):
            # NumPy's [asarray(bins)] * 2: histogramdd compares the 0-d array with 1
            raise TypeError("'<' not supported between instances of 'numpy.ndarray' and 'int'")
        bins = [bins, bins]
    h, e = histogramdd([xt, yt], bins, range, normed, weights, density, _kind=kind)
    return h, e[0], e[1]
