"""NumPy's mathematical functions on hop arrays that are not ufuncs:
interp, convolve and correlate, diff, gradient, trapz, cross, unwrap; the
small elementwise helpers (sinc, i0, nan_to_num, fix, isposinf, isneginf,
real, imag, angle, real_if_close); and the type tests and dtype queries
(iscomplex, isreal, iscomplexobj, isrealobj, isscalar, array_equiv,
common_type, min_scalar_type, can_cast), with NumPy 1.24's semantics.

Each follows NumPy's algorithm with hop.numpy's operations, so dtypes come
out as NumPy's.  convolve and correlate sum in matmul's order (NumPy's in
its dot's).
"""

import builtins
import math
import operator

import numpy as _np

from .. import _C, _breaks
from . import _core, _corder
from . import _funcs as F
from ._funcs import (_axes, _axis_index, _axis_tuple, _no_numpy_bool, _kind_of, _t, concatenate,
                     implements, sum as _sum)
from ._index_routines import copyto
from ._lib import _arr, _as, _hnp, broadcast_shapes
from ._ndarray import ndarray, result_kind, wrap
from ._stats import _concrete

__all__ = []


# ------------------------------------------ interpolation, convolution

@implements(_np.interp)
def interp(x, xp, fp, left=None, right=None, period=None, *, _kind=None):
    kind = _kind or result_kind((x, xp, fp), ndarray)
    f64 = _np.dtype(_np.float64)
    xt = _core.cast(_t(x, "interp"), f64)
    xpt = _core.cast(_t(xp, "interp"), f64)
    fpt = _t(fp, "interp")
    if _core.np_dtype(fpt).kind == "c":  # NumPy's own (eagerly; hop.compile: a graph break)
        from ._ufuncs import fallback
        return fallback(_np.interp, "interp", (x, xp, fp),
                        dict(left=left, right=right, period=period), kind)
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


def _correlate_mode(mode):
    """NumPy 1.24's PyArray_CorrelatemodeConverter: 'valid' 'same' 'full'
    (0, 1, 2), another string by its first letter in either case with a
    DeprecationWarning, an integer 0-2 (not a bool)."""
    if isinstance(mode, str):
        exact = {"valid": 0, "same": 1, "full": 2}
        if mode in exact:
            return exact[mode]
        if mode[:1].lower() in ("v", "s", "f"):
            _core.numpy_warns("convolve/correlate with an inexact mode",
                              "inexact matches and case insensitive matches for "
                              "convolve/correlate mode are deprecated, please use one of 'valid', "
                              "'same', or 'full' instead.", DeprecationWarning)
            return "vsf".index(mode[0].lower())
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    if isinstance(mode, (bool, _np.bool_)):
        raise TypeError("convolve/correlate mode not understood")
    try:
        mode = operator.index(mode)
    except TypeError:
        raise TypeError("convolve/correlate mode not understood") from None
    if not 0 <= mode <= 2:
        raise ValueError("integer convolve/correlate mode must be 0, 1, or 2")
    return mode


# Up to this kernel length correlate's float outputs at the ends are each
# one dot product of the overlap, as NumPy's (a Python loop of ops: longer
# kernels take the padded windows, which BLAS may sum in another order).
_EXACT_EDGES = 64


def _correlate_float(a, v, n1, n2, lo, length):
    """NumPy's _pyarray_correlate of float a (n1) and v (n2 <= n1): the
    outputs before and after the full overlaps each the BLAS dot product of
    the overlapping elements (FLOAT_dot/DOUBLE_dot: cblas_sdot/ddot, which
    a 1 x 1 matmul calls), the full overlaps (n1 - n2 + 1) by
    small_correlate for a kernel of at most 11 (s = 0, then s += d[i + j] *
    k[j] for each j in order, in the dtype) or else by the dot too."""
    def dot(x, y):
        k = x.shape[0]
        return _C.matmul(x.reshape(1, 1, k), y.reshape(1, k, 1)).reshape(1)
    n_left = lo
    n_right = length - n_left - (n1 - n2 + 1)
    parts = [dot(a.slice(0, 0, n2 - n_left + i), v.slice(0, n_left - i, n2))
             for i in range(n_left)]
    mid = n1 - n2 + 1
    if n2 <= 11:
        s = _C.zeros((mid,), dtype=a.dtype)
        for j in range(n2):
            s = s + a.slice(0, j, j + mid) * v.select(0, j)
        parts.append(s)
    else:
        idx = _C.arange(mid).reshape(mid, 1) + _C.arange(n2).reshape(1, n2)
        win = _C._op("take", a, 0, idx)
        parts.append(_C.matmul(win.reshape(mid, 1, n2), v.reshape(1, n2, 1).expand(mid, n2, 1))
                     .reshape(mid))
    parts += [dot(a.slice(0, mid + i, n1), v.slice(0, 0, n2 - 1 - i)) for i in range(n_right)]
    return _C.cat(parts, 0) if len(parts) > 1 else parts[0]


def _correlate(a, v, mode, what):
    """NumPy's multiarray.correlate(a, v, mode) for 1-d a and v (v already
    conjugated/reversed by the caller)."""
    mode = _correlate_mode(mode)
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
        return _C._op("take", r, 0, (length - 1) - _C.arange(length)) if inverted else r
    # NumPy multiplies only the overlapping elements: v's element against a
    # padding zero is left out, so a NaN or inf in v spreads no further
    vm = v.reshape(1, n2).expand(length, n2)
    if pad:
        inside = _C.logical_and(idx >= pad, idx < pad + n1)
        vm = _C.where(inside, vm, _C.zeros((), dtype=v.dtype))
    half = _core.np_dtype(a) == _np.float16
    if _core.np_dtype(a).kind == "f" and n2 <= _EXACT_EDGES and not half:
        r = _correlate_float(a, v, n1, n2, lo, length)
    elif _core.np_dtype(a).kind == "f":
        # (float16: NumPy's HALF_dot for every output, no small_correlate: a
        # float32 sum of the products in order, rounded once, which hop's
        # float16 matmul is; the padding's zero products change no sum)
        r = _C.matmul(win.reshape(length, 1, n2), vm.reshape(length, n2, 1)).reshape(length)
    else:
        # NumPy's dot keeps the integer dtype (wrapping); sum widens to int64
        r = _core.cast(_C.sum(win * vm, [1], False), _core.np_dtype(a))
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
    return _core.promote(ta, tv)


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
    if _core.np_dtype(tv).kind == "c":
        tv = _C._op("conj", tv)  # NumPy's correlate (correlate2) conjugates v
    return wrap(_kind or result_kind((a, v), ndarray), _correlate(ta, tv, mode, "correlate"))


# --------------------------------------------------------------- calculus

@implements(_np.diff)
def diff(a, n=1, axis=-1, prepend=_np._NoValue, append=_np._NoValue, *, _kind=None):
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    t = _t(a, "diff")
    if t.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _axis_index(axis, t.ndim)
    parts = []
    for v, at_end in ((prepend, False), (append, True)):
        if v is _np._NoValue:
            continue
        vt = _t(v, "diff")
        if vt.ndim == 0:
            shape = list(t.shape)
            shape[ax] = 1
            vt = vt.expand(*shape)
        parts.append((vt, at_end))
    if parts:
        seq = [p for p, e in parts if not e] + [t] + [p for p, e in parts if e]
        t = _t(concatenate(seq, ax, _kind=_C.Tensor))
    for _ in range(n):
        hi = t.slice(ax, 1, None, 1)
        lo = t.slice(ax, 0, -1, 1)
        t = _C.ne(hi, lo) if _core.np_dtype(t) == _np.dtype(bool) else hi - lo
    return wrap(_kind or _kind_of(a), t)


@implements(_np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1, _kind=None):
    kind = _kind or _kind_of(f)
    ft = _t(f, "gradient")
    N = ft.ndim
    axes = tuple(range(N)) if axis is None else _axis_tuple(axis, N)
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
        # (NumPy converts integers only: a bool f stays bool, and its
        # differences are NumPy's boolean-subtract TypeError)
        fa = ndarray(ft.to(_C.float64)) if otype.kind != "b" else fa
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
    if x is None or _arr(x).ndim == 1:
        # (NumPy's trapz puts slice(1, None) at [axis] of a list of nd
        # slices, then reduces along axis: a list's errors, then add.reduce's)
        probe = [None] * nd
        probe[_no_numpy_bool(axis)] = None  # (a NumPy bool refused, as _dim_at)
        ax = _axes(axis, nd)[0]
    else:
        ax = _axis_index(axis, nd)

    def sl(k):
        s = [slice(None)] * nd
        s[ax] = k
        return tuple(s)
    if x is None:
        d = dx
    else:
        xa = _arr(x)
        if xa.ndim == 1:
            d = diff(xa, _kind=ndarray)
            shape = [1] * nd
            shape[ax] = d.shape[0]
            d = d.reshape(shape)
        else:
            d = diff(xa, axis=ax, _kind=ndarray)
    r = _sum(d * (ya[sl(slice(1, None))] + ya[sl(slice(None, -1))]) / 2.0, ax, _kind=kind)
    return r


@implements(_np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None, *, _kind=None):
    kind = _kind or result_kind((a, b), ndarray)
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    aa, ba = _arr(a), _arr(b)
    norm = _np.core.multiarray.normalize_axis_index
    axisa = norm(axisa, aa.ndim, msg_prefix="axisa")
    axisb = norm(axisb, ba.ndim, msg_prefix="axisb")
    aa = F.moveaxis(aa, axisa, -1, _kind=ndarray)
    ba = F.moveaxis(ba, axisb, -1, _kind=ndarray)
    msg = "incompatible dimensions for cross product\n(dimension must be 2 or 3)"
    if aa.shape[-1] not in (2, 3) or ba.shape[-1] not in (2, 3):
        raise ValueError(msg)
    shape = broadcast_shapes(aa[..., 0].shape, ba[..., 0].shape)
    if aa.shape[-1] == 3 or ba.shape[-1] == 3:
        shape += (3,)
        axisc = norm(axisc, len(shape), msg_prefix="axisc")
    dt = _np.promote_types(aa.dtype, ba.dtype)
    cp = F.empty(shape, dt)
    aa, ba = aa.astype(dt, copy=False), ba.astype(dt, copy=False)
    a0, a1 = aa[..., 0], aa[..., 1]
    a2 = aa[..., 2] if aa.shape[-1] == 3 else None
    b0, b1 = ba[..., 0], ba[..., 1]
    b2 = ba[..., 2] if ba.shape[-1] == 3 else None
    if cp.ndim != 0 and cp.shape[-1] == 3:
        cp0, cp1, cp2 = cp[..., 0], cp[..., 1], cp[..., 2]
    # (NumPy's ufuncs into cp's parts: of 1-d vectors the parts are 0-d and
    # their products NumPy scalars, whose operators would warn of an integer
    # overflow where NumPy's array subtraction does not)
    from ._ufuncs import call_ufunc

    def sub(x, y):
        return call_ufunc("subtract", (x, y), {}, ndarray)

    def neg(x):
        return call_ufunc("negative", (x,), {}, ndarray)
    if aa.shape[-1] == 2:
        if ba.shape[-1] == 2:
            call_ufunc("multiply", (a0, b1), {"out": cp}, ndarray)
            cp -= a1 * b0
            return _as(kind, cp)
        cp0[...] = a1 * b2
        cp1[...] = neg(a0 * b2)
        cp2[...] = sub(a0 * b1, a1 * b0)
    else:
        if ba.shape[-1] == 3:
            cp0[...] = sub(a1 * b2, a2 * b1)
            cp1[...] = sub(a2 * b0, a0 * b2)
            cp2[...] = sub(a0 * b1, a1 * b0)
        else:
            cp0[...] = neg(a2 * b1)
            cp1[...] = a2 * b0
            cp2[...] = sub(a0 * b1, a1 * b0)
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
    if _core.np_dtype(t) == _np.float16:
        return _as(kind, _i0_half(wrap(ndarray, t)))
    return wrap(kind, _C.i0(t))


def _chbevl_half(y, vals):
    """NumPy's _chbevl of a float16 array y, as written: every step a
    float16 op, the Python float coefficients cast to float16 by each op
    (with NumPy's underflow warnings for the tiny ones)."""
    b0, b1, b2 = vals[0], 0.0, 0.0
    for v in vals[1:]:
        b2, b1 = b1, b0
        b0 = y * b1 - b2 + v
    return 0.5 * (b0 - b2)


def _i0_half(x):
    """NumPy 1.24's i0 of a float16 array, op for op in float16 (the
    float32 and float64 kernel's one rounding at the end differs in the
    last bit for a third of the float16 values): piecewise over |x| <= 8
    (exp(x) * chbevl(x / 2 - 2, A)) and beyond (exp(x) * chbevl(32 / x - 2,
    B) / sqrt(x)), each branch given a harmless value (0, 9) where the other
    applies, so no branch warns for an element it does not own, and run
    only when it owns one (piecewise calls no function of an empty
    selection: its casts of the coefficients warn only then)."""
    from ._ufuncs import call_ufunc
    h = _np.float16
    # (piecewise computes on x[cond], of one dimension: a 0-d x's values
    # are not scalars, whose float operands would make them float64)
    ax = call_ufunc("absolute", (x.reshape(-1),), {}, ndarray)
    small = ax <= 8.0
    r = F.zeros_like(ax, _kind=ndarray)
    if _core.decide(_C.any(small._t, None, False), "i0: which of NumPy's pieces run"):
        x1 = F.where(small, ax, h(0.0), _kind=ndarray)
        r1 = call_ufunc("exp", (x1,), {}, ndarray) * _chbevl_half(x1 / 2.0 - 2, _I0A)
        r = F.where(small, r1, r, _kind=ndarray)
    if _core.decide(_C.any(_C.logical_not(small._t), None, False),
                    "i0: which of NumPy's pieces run"):
        x2 = F.where(small, h(9.0), ax, _kind=ndarray)
        r2 = (call_ufunc("exp", (x2,), {}, ndarray) * _chbevl_half(32.0 / x2 - 2.0, _I0B)
              / call_ufunc("sqrt", (x2,), {}, ndarray))
        r = F.where(small, r, r2, _kind=ndarray)
    return r.reshape(x.shape)


_I0A = tuple(_np.lib.function_base._i0A)
_I0B = tuple(_np.lib.function_base._i0B)


@implements(_np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None, *, _kind=None):
    kind = _kind or _kind_of(x)
    t = _t(x, "nan_to_num")
    npd = _core.np_dtype(t)
    if npd.kind == "f":
        r = _nan_to_num_t(t, npd, nan, posinf, neginf)
    elif npd.kind == "c":
        # NumPy's: the real and the imaginary part each, as a float array
        part = _np.dtype(npd.char.lower())
        r = _C._op("complex", _nan_to_num_t(_C._op("real", t), part, nan, posinf, neginf),
                   _nan_to_num_t(_C._op("imag", t), part, nan, posinf, neginf))
    else:
        r = t.clone() if copy else t
    # (NumPy's x[()] of a 0-d result: a scalar, written in place first)
    scalar = t.ndim == 0
    if not copy and isinstance(x, ndarray) and not x._scalar:
        x._assign(r, "nan_to_num(copy=False)")
        if not scalar:
            return x
    return wrap(kind, r, scalar=scalar)


def _nan_to_num_t(t, npd, nan, posinf, neginf):
    """nan_to_num of float tensor t of dtype npd."""
    info = _np.finfo(npd)
    pi = info.max if posinf is None else posinf
    ni = info.min if neginf is None else neginf
    # the three masks first, as NumPy's (nan=np.inf is not then rewritten)
    is_nan, is_pos, is_neg = _C.ne(t, t), _C.eq(t, math.inf), _C.eq(t, -math.inf)
    r = _C.where(is_nan, _C.full((), float(nan), dtype=t.dtype), t)
    r = _C.where(is_pos, _C.full((), float(pi), dtype=t.dtype), r)
    return _C.where(is_neg, _C.full((), float(ni), dtype=t.dtype), r)


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
    if _core.np_dtype(t).kind == "c":  # NumPy's signbit refuses complex
        raise TypeError(f"This operation is not supported for {_core.np_dtype(t)} values "
                        f"because it would be ambiguous.")
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
    """NumPy's: a complex array whose imaginary parts are all under tol
    machine epsilons of its type (tol itself when at most 1) is its real
    part (a view), else a itself; a data-dependent decision while tracing
    (_core.decide: hop.compile specialises on it)."""
    kind = _kind or _kind_of(a)
    x = _arr(a)
    if x.dtype.kind != "c":
        return _as(kind, x)
    if tol > 1:
        tol = _np.finfo(x.dtype).eps * tol
    if _core.decide(_C.all(_C.lt(_C.abs(x.imag._t), tol), None, False),
                    "real_if_close: whether every imaginary part is under tol"):
        return _as(kind, x.real)
    return _as(kind, x)


# ------------------------------------------------ type tests and dtypes

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


# NumPy 1.24's tables of common_type (numpy.lib.type_check)
_PRECISION = {_np.half: 0, _np.single: 1, _np.double: 2, _np.csingle: 1, _np.cdouble: 2}
_COMMON = ((_np.half, _np.single, _np.double), (None, _np.csingle, _np.cdouble))


@implements(_np.common_type)
def common_type(*arrays, _kind=None):
    """NumPy 1.24's common_type of the arrays' dtypes: an integer counts as
    double, complex wins; a bool array is NumPy's TypeError."""
    is_complex = False
    precision = 0
    for a in arrays:
        t = _core.np_dtype(_t(a))
        is_complex = is_complex or t.kind == "c"
        if t.kind in "iu":
            p = 2
        else:
            p = _PRECISION.get(t.type)
            if p is None:
                raise TypeError("can't get common type for non-numeric array")
        precision = builtins.max(precision, p)
    return _COMMON[is_complex][precision]


@implements(_np.min_scalar_type)
def min_scalar_type(a, *, _kind=None):
    c = _concrete(a)
    if c is not None:
        return _np.min_scalar_type(c)
    t = _t(a, "min_scalar_type")
    if t.ndim:
        return _core.np_dtype(t)
    # (hop.compile: the call runs by NumPy from here)
    _breaks.conversion(_C.UnsupportedError,
                       "hop.numpy: min_scalar_type of a traced value depends on its value")


@implements(_np.can_cast)
def can_cast(from_, to, casting="safe", *, _kind=None):
    """NumPy's can_cast.  Of a 0-d array or scalar NumPy 1.24 decides by
    its value where its dtype does not cast (min_scalar_type of the value,
    any casting but 'unsafe'): of a traced one that is a conversion of the
    value (hop.compile runs the call by NumPy from there)."""
    if isinstance(from_, (ndarray, _C.Tensor)):
        t = _t(from_)
        if t.ndim == 0 and not _C._is_proxy(t):
            return _np.can_cast(t.numpy(), to, casting)
        ok = _np.can_cast(_core.np_dtype(t), to, casting)
        if t.ndim == 0 and not ok:
            _breaks.conversion(_C.UnsupportedError, "hop.numpy: can_cast of a traced 0-d "
                               "array or scalar depends on its value (NumPy 1.24's "
                               "value-based casting)")
        return ok
    return _np.can_cast(from_, to, casting)


# ------------------------------------------------------------------ phase

@implements(_np.unwrap)
def unwrap(p, discont=None, axis=-1, *, period=6.283185307179586, _kind=None):
    """NumPy 1.24's unwrap, step for step."""
    F = _hnp()
    kind = _kind or _kind_of(p)
    p = _arr(p, "unwrap")
    nd = p.ndim
    dd = F["diff"](p, axis=axis, _kind=ndarray)
    if discont is None:
        discont = period / 2
    slice1 = [slice(None, None)] * nd
    slice1[axis] = slice(1, None)
    slice1 = tuple(slice1)
    dtype = _np.result_type(_np.empty(0, dd.dtype), period)
    if _np.issubdtype(dtype, _np.integer):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
    interval_low = -interval_high
    ddmod = _np.mod(dd - interval_low, period) + interval_low
    if boundary_ambiguous:
        copyto(ddmod, interval_high, where=(ddmod == interval_low) & (dd > 0))
    ph_correct = ddmod - dd
    copyto(ph_correct, 0, where=abs(dd) < discont)
    up = F["array"](p, copy=True, dtype=dtype)
    up[slice1] = p[slice1] + F["cumsum"](ph_correct, axis, _kind=ndarray)
    return _as(kind, up)


# ------------------------------------------------ dot's scalar operands

_BLAS = frozenset(_np.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))


def _dot_dtype(x):
    """The dtype np.dot converts operand x to: its own (an array's, a NumPy
    scalar's), a Python number's default (int64, float64, complex128, bool:
    dot has no value-based casting, so np.dot(float32 array, 2.0) is
    float64)."""
    if isinstance(x, _C.SymInt):
        return _np.dtype(_np.int64)
    dt = getattr(x, "dtype", None)
    if dt is not None and not isinstance(x, (list, tuple)):
        return _np.dtype(dt)
    t = _core.tensor_of(x)
    return _core.np_dtype(t) if t is not None else _np.asarray(x).dtype


def _scalar_shaped(t):
    """NumPy's _select_matrix_shape(t) == _scalar: a 0-d array, or one of
    one element and at most 2 dims."""
    return t.ndim <= 2 and all(type(d) is int and d == 1 for d in t.shape)


def dot_of_0d(a, b):
    """np.dot(a, b) where a or b is 0-d (NumPy's PyArray_MatrixProduct2):
    both converted to their promoted dtype (no value-based casting), then
    for BLAS's dtypes the scalar times the other (blas_axpy, below), for
    the others a multiply."""
    dt = _np.promote_types(_dot_dtype(a), _dot_dtype(b))
    hd = _core.hop_dtype(dt, "dot")
    ts = []
    for x in (a, b):
        o = _core.operand(x, "dot")
        if o.t is not None:
            ts.append(_core.cast(o.t, dt))
        else:
            v = _core.as_compute(o, dt)
            ts.append(v if isinstance(v, _C.Tensor) else _C.full((), v, dtype=hd))
    ta, tb = ts
    if dt in _BLAS:
        r = blas_axpy(ta, tb)
    elif dt == _np.dtype(bool):
        r = _C.logical_and(ta, tb)
    else:
        r = ta * tb
    return r


def blas_axpy(ta, tb, r=None):
    """np.dot(ta, tb) (one dtype) as NumPy's cblas_matrixproduct computes
    it for float32/64 and complex64/128 where it is a scalar times an array
    (one operand 0-d, or of one element and at most 2 dims; both at most 2
    dims); r the matmul's answer (None: a 0-d operand's broadcast product).
    With one element in all the product; else BLAS's axpy y = 0 + alpha * x,
    which returns at once for alpha == 0 (zeros, even for NaN and inf) and
    turns -0.0 into +0.0.  r itself where NumPy's dot takes another path."""
    if not (ta.ndim <= 2 and tb.ndim <= 2 and (_scalar_shaped(ta) or _scalar_shaped(tb))) or \
            _core.np_dtype(ta) not in _BLAS:
        return r
    x, alpha = (tb, ta) if _scalar_shaped(ta) else (ta, tb)
    if r is None:  # (broadcast before alpha's reshape: dot of (1,) and () is of shape (1,))
        r = _C.mul(x, alpha)
    alpha = alpha.reshape(())
    n = 1
    for d in r.shape:
        n = n * d
    if type(n) is int and n == 1:
        return _C.mul(x.reshape(()), alpha).reshape(tuple(r.shape))
    zero = _C.zeros((), dtype=r.dtype)
    return _C.where(_C.eq(alpha, zero), _C.zeros(tuple(r.shape), dtype=r.dtype),
                    _C.add(r, zero))
