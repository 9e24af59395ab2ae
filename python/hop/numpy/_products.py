"""hop.numpy's products: dot, vdot, inner, outer, tensordot and einsum (the
contraction they share), on the registry and helpers of _funcs (whose
docstring says how each function serves its three callers).  _funcs
imports this module partway through, once its helpers exist; import
hop.numpy (or _funcs), not this module, first.
"""

import builtins

import numpy as _np

from .. import _C
from . import _core
from ._funcs import _axis, _out, _shape_arg, _size, _t, implements, ravel
from ._ndarray import ndarray, result_kind, wrap


@implements(_np.dot)
def dot(a, b, out=None, *, _kind=None):
    kind = _kind or result_kind((a, b), ndarray)
    ta, tb = _t(a, "dot"), _t(b, "dot")
    if ta.ndim == 0 or tb.ndim == 0:
        from ._ufuncs import call_ufunc
        r = call_ufunc("multiply", (a, b), {}, kind)
        return r if out is None else _dot_into(r._t, out, kind)
    ta, tb = _core.promote(ta, tb)
    dt = _core.np_dtype(ta)
    if dt == _np.dtype(bool):
        ta, tb = ta.to(_C.int64), tb.to(_C.int64)
    if tb.ndim <= 2:
        if ta.shape[-1] != tb.shape[0 if tb.ndim == 1 else -2]:
            raise ValueError(f"shapes {_core.shape_text(ta.shape)} and "
                             f"{_core.shape_text(tb.shape)} not aligned: "
                             f"{ta.shape[-1]} (dim {ta.ndim - 1}) != "
                             f"{tb.shape[0 if tb.ndim == 1 else -2]} (dim "
                             f"{0 if tb.ndim == 1 else tb.ndim - 2})")
        r = _C.matmul(ta, tb)
    else:
        # dot(a, b)[i, j, k, m] = sum(a[i, j, :] * b[k, :, m])
        k = ta.shape[-1]
        rest = tuple(tb.shape[:-2]) + (tb.shape[-1],)
        b2 = tb.permute(tb.ndim - 2, *range(tb.ndim - 2), tb.ndim - 1).reshape(k, -1)
        r = _C.matmul(ta.reshape(-1, k) if ta.ndim > 1 else ta.reshape(1, k), b2)
        r = r.reshape(tuple(ta.shape[:-1]) + rest)
    if dt == _np.dtype(bool):
        r = _C.ne(r, 0)
    if out is not None:
        return _dot_into(r, out, kind)
    return _out(kind, r, scalar=r.ndim == 0, what="dot")


def _dot_into(r, out, kind):
    """np.dot(..., out=out) of result tensor r: NumPy's checks (out exactly
    the result's dtype and number of dimensions, a C-contiguous writeable
    array, then its shape), r written into it, and out returned (a 0-d
    one as its scalar, as NumPy's PyArray_Return gives)."""
    if not hasattr(out, "shape"):
        raise TypeError("'out' must be an array")
    flags = getattr(out, "flags", None)
    carray = flags is None or (flags.c_contiguous and flags.writeable and flags.aligned)
    if out.ndim != r.ndim or _np.dtype(out.dtype) != _core.np_dtype(r) or not carray:
        raise ValueError("output array is not acceptable (must have the right datatype, number "
                         "of dimensions, and be a C-Array)")
    if tuple(out.shape) != tuple(r.shape):
        raise ValueError("output array has wrong dimensions")
    _out(kind, r, out=out, what="dot")
    return out[()] if out.ndim == 0 else out


@implements(_np.vdot)
def vdot(a, b, *, _kind=None):
    ta = ravel(a, _kind=_C.Tensor)
    if _core.np_dtype(ta).kind == "c":  # NumPy conjugates the first operand
        ta = _C._op("conj", ta)
    return dot(ta, ravel(b, _kind=_C.Tensor),
               _kind=_kind or result_kind((a, b), ndarray))


@implements(_np.inner)
def inner(a, b, *, _kind=None):
    tb = _t(b, "inner")
    if tb.ndim <= 1:
        return dot(a, b, _kind=_kind)
    return tensordot(a, b, axes=([-1], [-1]), _kind=_kind)


@implements(_np.outer)
def outer(a, b, out=None, *, _kind=None):
    kind = _kind or result_kind((a, b), ndarray)
    from ._ufuncs import call_ufunc
    ta, tb = _t(a, "outer").reshape(-1), _t(b, "outer").reshape(-1)
    return call_ufunc("multiply", (wrap(kind, ta.reshape(-1, 1)), wrap(kind, tb.reshape(1, -1))),
                      {"out": out} if out is not None else {}, kind)


@implements(_np.tensordot)
def tensordot(a, b, axes=2, *, _kind=None):
    ta, tb = _t(a, "tensordot"), _t(b, "tensordot")
    if isinstance(axes, int):
        ax_a = list(range(-axes, 0))  # (NumPy's: an axis out of range is its IndexError)
        ax_b = list(range(axes))
    else:
        ax_a, ax_b = [list(_shape_arg(x)) for x in axes]
    sa_, sb_ = tuple(ta.shape), tuple(tb.shape)  # (an axis out of range: IndexError)
    if len(ax_a) != len(ax_b) or builtins.any(
            type(m) is int and type(n) is int and m != n
            for m, n in ((sa_[i], sb_[j]) for i, j in zip(ax_a, ax_b))):
        raise ValueError("shape-mismatch for sum")  # NumPy's check before its dot
    letters = "abcdefghijklmnopqrstuvwxyz"
    sa = list(letters[:ta.ndim])
    sb = list(letters[ta.ndim:ta.ndim + tb.ndim])
    for i, j in zip(ax_a, ax_b):
        sb[_axis(j, tb.ndim)] = sa[_axis(i, ta.ndim)]
    out = [c for c in sa if c not in sb] + [c for c in sb if c not in sa]
    r = einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b, _kind=_C.Tensor)
    # NumPy's dot of the reshaped operands, reshaped back: a full contraction
    # is a 0-d array, not einsum's scalar
    return wrap(_kind or result_kind((a, b), ndarray), r)


def _einsum_parse(subscripts, nops):
    s = subscripts.replace(" ", "")
    if "." in s:
        raise _C.UnsupportedError("hop.numpy: einsum with '...' is not supported")
    if "->" in s:
        ins, out = s.split("->")
    else:
        ins = s
        counts = {}
        for c in ins.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        out = "".join(sorted(c for c, n in counts.items() if n == 1))
    ins = ins.split(",")
    if len(ins) != nops:
        raise ValueError("more operands provided to einstein sum function than specified in "
                         "the subscripts string" if nops > len(ins) else
                         "fewer operands provided to einstein sum function than specified in "
                         "the subscripts string")
    return ins, out


def _einsum_reduce(t, subs, keep, k=0):
    """Sums out the indices of t (operand k) that keep does not contain,
    after taking the diagonal of each index repeated in it ('ii', 'iij')."""
    from ._twodim import _diagonal_fn
    for c in subs:
        while subs.count(c) > 1:
            i = subs.index(c)
            j = subs.index(c, i + 1)
            if t.shape[i] != t.shape[j]:
                raise ValueError(f"dimensions in operand {k} for collapsing index '{c}' don't "
                                 f"match ({t.shape[i]} != {t.shape[j]})")
            t = _diagonal_fn(t.ndim, 0, i, j)(t)  # the diagonal goes last
            subs = "".join(x for n, x in enumerate(subs) if n not in (i, j)) + c
    drop = [i for i, c in enumerate(subs) if c not in keep]
    if drop:
        t = _C.sum(t, drop, False)
        subs = "".join(c for c in subs if c in keep)
    return t, subs


def _einsum_pair(ta, sa, tb, sb, keep):
    """Contracts two operands over their shared indices that keep does not
    need, with one (batched) matmul."""
    shared = [c for c in sa if c in sb]
    contract = [c for c in shared if c not in keep]
    batch = [c for c in shared if c in keep]
    left = [c for c in sa if c not in sb]
    right = [c for c in sb if c not in sa]
    sizes = {}
    for t, s in ((ta, sa), (tb, sb)):
        for i, c in enumerate(s):
            if c in sizes and sizes[c] != t.shape[i] and 1 not in (sizes[c], t.shape[i]):
                raise ValueError(f"operands could not be broadcast together with remapped shapes "
                                 f"for index {c!r}: {sizes[c]} and {t.shape[i]}")
            sizes[c] = t.shape[i] if c not in sizes or sizes[c] == 1 else sizes[c]
    pa = ta.permute(*[sa.index(c) for c in batch + left + contract]) if ta.ndim > 1 else ta
    pb = tb.permute(*[sb.index(c) for c in batch + contract + right]) if tb.ndim > 1 else tb
    nb, nl, nk, nr = (_size([sizes[c] for c in g]) for g in (batch, left, contract, right))
    pa = pa.expand(*[sizes[c] for c in batch + left + contract]) if batch + left + contract \
        else pa
    pb = pb.expand(*[sizes[c] for c in batch + contract + right]) if batch + contract + right \
        else pb
    r = _C.matmul(pa.reshape(nb, nl, nk), pb.reshape(nb, nk, nr))
    r = r.reshape([sizes[c] for c in batch + left + right])
    return r, "".join(batch + left + right)


@implements(_np.einsum)
def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False,
           _kind=None):
    if not operands or not isinstance(operands[0], str):
        raise _C.UnsupportedError("hop.numpy: einsum takes a subscripts string (the sublist "
                                  "form is not supported)")
    subscripts, arrays = operands[0], operands[1:]
    kind = _kind or result_kind(arrays, ndarray)
    ins, outs = _einsum_parse(subscripts, len(arrays))
    ts = [_t(a, "einsum") for a in arrays]
    for t, s in zip(ts, ins):
        if t.ndim != len(s):
            raise ValueError(f"einstein sum subscripts string contains too many subscripts for "
                             f"operand {ts.index(t)}" if len(s) > t.ndim else
                             f"operand has more dimensions than subscripts given in einstein sum, "
                             f"but no '...' ellipsis provided to broadcast the extra dimensions.")
    dt = _np.dtype(dtype) if dtype is not None else _core.promoted_dtype(ts)
    for i, t in enumerate(ts):  # NumPy's iterator casts each operand under `casting`
        if not _np.can_cast(_core.np_dtype(t), dt, casting):
            raise TypeError(f"Iterator operand {i} dtype could not be cast from "
                            f"{_core.np_dtype(t)!r} to {dt!r} according to the rule {casting!r}")
    cdt = _np.dtype(_np.int64) if dt == _np.dtype(bool) else dt
    ts = [_core.cast(t, cdt) for t in ts]
    # contract left to right; an index is kept while the output or a later
    # operand needs it
    t, s = _einsum_reduce(ts[0], ins[0], set(outs) | set("".join(ins[1:])))
    for k in range(1, len(ts)):
        later = set(outs) | set("".join(ins[k + 1:]))
        tb, sb = _einsum_reduce(ts[k], ins[k], later | set(s), k)
        t, s = _einsum_pair(t, s, tb, sb, later)
    t, s = _einsum_reduce(t, s, set(outs))
    if s != outs:
        t = t.permute(*[s.index(c) for c in outs]) if len(outs) > 1 else t
    if dt == _np.dtype(bool):
        t = _C.ne(t, 0)
    return _out(kind, _core.cast(t, dt).clone() if t.ndim else _core.cast(t, dt),
                scalar=t.ndim == 0 and out is None, out=out, what="einsum")
