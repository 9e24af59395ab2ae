"""hop.numpy's products: dot, vdot, inner, outer, tensordot and einsum (the
contraction they share), on the registry and helpers of _funcs (whose
docstring says how each function serves its three callers).  _funcs
imports this module partway through, once its helpers exist; import
hop.numpy (or _funcs), not this module, first.
"""

import builtins
import functools
import operator

import numpy as _np

from .. import _C
from . import _core, _eager_shape, _storage
from ._funcs import _axis, _out, _shape_arg, _size, _t, implements, ravel
from ._ndarray import NumpyArg, ndarray, result_kind, wrap


@implements(_np.dot)
def dot(a, b, out=None, *, _kind=None):
    if out is None and _kind in (None, ndarray):
        r = _eager_shape.dot(a, b)  # (the eager fast path: None where it cannot)
        if r is not None:
            return r
    kind = _kind or result_kind((a, b), ndarray)
    ta, tb = _t(a, "dot"), _t(b, "dot")
    from ._mathfuncs import blas_axpy, dot_of_0d
    if ta.ndim == 0 or tb.ndim == 0:
        r = dot_of_0d(a, b)
        return _dot_into(r, out, kind) if out is not None else _out(kind, r, r.ndim == 0)
    ta, tb = _core.promote(ta, tb)
    dt = _core.np_dtype(ta)
    if dt == _np.dtype(bool):
        ta, tb = ta.to(_C.int64), tb.to(_C.int64)
    if ta.shape[-1] != tb.shape[0 if tb.ndim == 1 else -2]:
        raise ValueError(f"shapes {_core.shape_text(ta.shape)} and "
                         f"{_core.shape_text(tb.shape)} not aligned: "
                         f"{ta.shape[-1]} (dim {ta.ndim - 1}) != "
                         f"{tb.shape[0 if tb.ndim == 1 else -2]} (dim "
                         f"{0 if tb.ndim == 1 else tb.ndim - 2})")
    if tb.ndim <= 2:
        r = blas_axpy(ta, tb, _C.matmul(ta, tb))
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
    ta, tb = ravel(a, _kind=_C.Tensor), ravel(b, _kind=_C.Tensor)
    na, nb = ta.shape[0], tb.shape[0]
    if type(na) is int and type(nb) is int and na != nb:
        # (NumPy reshapes b to a's size)
        raise ValueError(f"cannot reshape array of size {nb} into shape ({na},)")
    if _core.np_dtype(ta).kind == "c":  # NumPy conjugates the first operand
        ta = _C._op("conj", ta)
    return dot(ta, tb, _kind=_kind or result_kind((a, b), ndarray))


@implements(_np.inner)
def inner(a, b, *, _kind=None):
    tb = _t(b, "inner")
    if tb.ndim <= 1:
        return dot(a, b, _kind=_kind)
    return tensordot(a, b, axes=([-1], [-1]), _kind=_kind)


@implements(_np.outer)
def outer(a, b, out=None, *, _kind=None):
    if out is None and _kind is None and type(a) is ndarray and type(b) is ndarray and \
            not _C.tracing():
        # eagerly, NumPy's own composition, multiply(a.ravel()[:, None],
        # b.ravel()[None, :]), each step of it an eager fast path (traced, the
        # views of an argument it makes would cost the plan's call a check)
        return a.ravel()[:, None] * b.ravel()[None, :]
    kind = _kind or result_kind((a, b), ndarray)
    from ._ufuncs import call_ufunc
    ta, tb = _t(a, "outer").reshape(-1), _t(b, "outer").reshape(-1)
    return call_ufunc("multiply", (wrap(kind, ta.reshape(-1, 1)), wrap(kind, tb.reshape(1, -1))),
                      {"out": out} if out is not None else {}, kind)


def _axes_list(x):
    """One side of tensordot's axes as NumPy reads it: what has no len() is
    one axis."""
    try:
        len(x)
    except TypeError:
        return [x]
    return list(_shape_arg(x))


@implements(_np.tensordot)
def tensordot(a, b, axes=2, *, _kind=None):
    ta, tb = _t(a, "tensordot"), _t(b, "tensordot")
    # NumPy's reading of axes: an int n (what is not iterable) is the last n
    # of a's and the first n of b's, else a pair, each a sequence or one axis
    # (an axis out of range is its IndexError, below)
    try:
        iter(axes)
    except Exception:
        ax_a, ax_b = list(range(-axes, 0)), list(range(0, axes))
    else:
        ax_a, ax_b = axes
    ax_a, ax_b = _axes_list(ax_a), _axes_list(ax_b)
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


# NumPy's einsum (PyArray_EinsteinSum, optimize=False) parses and checks the
# subscripts in this order, each error with its text: every operand's labels
# (where a ',' or the end must be: its operand count errors, whose texts say
# the opposite of what happened, as NumPy's), the output's, the repeated
# labels' sizes, then the broadcast of the operands in its iterator.

def _einsum_parse(subscripts, ts):
    """(each operand's labels, the output's), as NumPy's parse.  An
    ellipsis stands for labels of its own (not letters, _ELLIPSIS), counted
    from the right as NumPy aligns its broadcast dimensions: an operand's
    last one is _ELLIPSIS[0] whatever the number of them."""
    s, ins, pos = subscripts, [], 0
    nb = 0
    for k, t in enumerate(ts):
        end = pos
        while end < len(s) and s[end] not in ",-":  # (strcspn)
            end += 1
        if k == len(ts) - 1 and s[end:end + 1] == ",":
            raise ValueError("more operands provided to einstein sum function than specified in "
                             "the subscripts string")
        if k < len(ts) - 1 and s[end:end + 1] != ",":
            raise ValueError("fewer operands provided to einstein sum function than specified "
                             "in the subscripts string")
        labels, ell = _einsum_labels(s[pos:end], t.ndim, f"operand {k}")
        if ell is None and len(labels) != t.ndim:
            raise ValueError("operand has more dimensions than subscripts given in einstein sum, "
                             "but no '...' ellipsis provided to broadcast the extra dimensions.")
        if ell is not None:
            ne = t.ndim - len(labels)
            nb = builtins.max(nb, ne)
            labels = labels[:ell] + _ELLIPSIS[ne - 1::-1] + labels[ell:] if ne else labels
        ins.append(labels)
        pos = end + (k < len(ts) - 1)
    rest = s[pos:]
    seen = "".join(ins)
    if not rest:
        outs = _ELLIPSIS[nb - 1::-1] if nb else ""
        outs += "".join(sorted(c for c in set(seen) if seen.count(c) == 1 and c not in _ELLIPSIS))
    elif not rest.startswith("->"):
        raise ValueError("einstein sum subscript string does not contain proper '->' output "
                         "specified")
    else:
        outs, ell = _einsum_labels(rest[2:], None, "the output")
        for i, c in enumerate(outs):
            if c in outs[i + 1:]:
                raise ValueError(f"einstein sum subscripts string includes output subscript "
                                 f"'{c}' multiple times")
            if c not in seen:
                raise ValueError(f"einstein sum subscripts string included output subscript "
                                 f"'{c}' which never appeared in an input")
        if ell is None and nb:
            raise ValueError("output has more dimensions than subscripts given in einstein sum, "
                             "but no '...' ellipsis provided to broadcast the extra dimensions.")
        if ell is not None and nb:
            outs = outs[:ell] + _ELLIPSIS[nb - 1::-1] + outs[ell:]
    return ins, outs


# the labels of broadcast dimensions, the last first (no letter: NumPy's
# labels are ASCII letters)
_ELLIPSIS = "".join(chr(0x2460 + i) for i in range(64))


def _einsum_labels(sub, ndim, where):
    """The labels of one operand's subscripts (ndim: its number of
    dimensions; None for the output) and where its ellipsis is among them
    (None without one), with NumPy's errors in its order.  (The output's
    checks of a repeated or unknown label come after, per label:
    _einsum_parse.)"""
    labels, ellipsis, i = [], None, 0
    while i < len(sub):
        c = sub[i]
        if c.isascii() and c.isalpha():
            if ndim is not None and len(labels) >= ndim:
                raise ValueError(f"einstein sum subscripts string contains too many subscripts "
                                 f"for {where}")
            labels.append(c)
        elif c == ".":
            if ellipsis is not None or i + 2 >= len(sub) or sub[i + 1:i + 3] != "..":
                raise ValueError(f"einstein sum subscripts string contains a '.' that is not "
                                 f"part of an ellipsis ('...') in {where}")
            ellipsis, i = len(labels), i + 2
        elif c != " ":
            raise ValueError(f"invalid subscript '{c}' in einstein sum subscripts string, "
                             f"subscripts must be letters")
        i += 1
    return "".join(labels), ellipsis


def _einsum_optimize(optimize):
    """The path optimize= names (False for none), with the TypeError
    NumPy's einsum_path gives before it reads the subscripts.  hop's
    contraction is its own whatever the path (the result the same up to
    rounding, as NumPy's own paths)."""
    if optimize is None or optimize is False:
        return False
    if optimize is True:
        return "greedy"
    if isinstance(optimize, str):
        return optimize
    if len(optimize) and optimize[0] == "einsum_path":
        return list(optimize[1:])
    if len(optimize) == 2 and isinstance(optimize[0], str) and \
            isinstance(optimize[1], (int, float)):
        return optimize[0]
    raise TypeError(f"Did not understand the path: {optimize}")


def _einsum_path_check(path, ins, outs):
    """NumPy's einsum_path's errors of a path it cannot follow: an unknown
    name (read only when there is something to optimize) or an explicit path
    that leaves operands uncontracted."""
    if isinstance(path, list):
        n = len(ins)
        for step in path:
            n -= len(step) - 1
        if n != 1:
            raise RuntimeError(f"Invalid einsum_path is specified: {n - 1} more operands has "
                               f"to be contracted.")
    elif path and path not in ("greedy", "optimal") and len(ins) > 2 and \
            set("".join(ins)) != set(outs):
        raise KeyError("Path name %s not found", path)


def _einsum_sublists(operands):
    """NumPy's sublist form einsum(a, [0, 1], b, [1, 2], [0, 2]) as its
    subscripts string and arrays (0-25 are 'A'-'Z', 26-51 'a'-'z'), with
    c_einsum's errors."""
    def letters(sub):
        try:  # (PySequence_Fast: any sequence)
            sub = list(sub)
        except TypeError:
            raise TypeError("the subscripts for each operand must be a list or a "
                            "tuple") from None
        text, ell = "", False
        for v in sub:
            if v is Ellipsis:
                if ell:
                    raise ValueError("each subscripts list may have only one ellipsis")
                text, ell = text + "...", True
                continue
            if isinstance(v, (bool, _np.bool_)):
                raise TypeError("each subscript must be either an integer or an ellipsis")
            try:
                v = operator.index(v)
            except TypeError:
                raise TypeError("each subscript must be either an integer or an "
                                "ellipsis") from None
            if not 0 <= v < 52:
                raise ValueError("subscript is not within the valid range [0, 52)")
            text += chr(ord("A") + v) if v < 26 else chr(ord("a") + v - 26)
        return text
    if len(operands) < 2:
        raise ValueError("must provide at least an operand and a subscripts list to einsum")
    arrays = operands[0:len(operands) // 2 * 2:2]
    subs = ",".join(letters(s) for s in operands[1:len(operands) // 2 * 2:2])
    if len(operands) % 2:
        subs += "->" + letters(operands[-1])
    return subs, arrays


def _einsum_check(ts, ins, outs, single):
    """NumPy's errors for repeated labels of different sizes (in 'single
    operand' when NumPy tries a view of the one operand first: every label
    up to the mismatch in the output) and for operands that do not
    broadcast (its iterator's text: the output's labels, then the others in
    their code's order, a size 1 broadcasting)."""
    combined = []
    for k, (t, sub) in enumerate(zip(ts, ins)):
        sizes, view = {}, single
        for i, c in enumerate(sub):
            view = view and c in outs
            if c in sizes and sizes[c] != t.shape[i]:
                raise ValueError(f"dimensions in {'single operand' if view else f'operand {k}'} "
                                 f"for collapsing index '{c}' don't match ({sizes[c]} != "
                                 f"{t.shape[i]})")
            sizes.setdefault(c, t.shape[i])
        combined.append(sizes)
    order = list(outs) + sorted(set("".join(ins)) - set(outs))
    remapped = [[sizes.get(c, -1) for c in order] for sizes in combined]
    for i in range(len(order)):
        b = 1
        for r in remapped:
            if not isinstance(r[i], int) or not isinstance(b, int):
                continue  # (symbolic sizes: hop's op decides)
            if b == 1:
                b = r[i] if r[i] >= 0 else b
            elif r[i] not in (-1, 1, b):
                raise ValueError("operands could not be broadcast together with remapped shapes "
                                 "[original->remapped]: " + "".join(
                                     _core.shape_text(list(sizes.values()), "->") +
                                     _core.shape_text(r, " ")
                                     for sizes, r in zip(combined, remapped)))


def _einsum_reduce_plan(shape, subs, keep, k=0):
    """The steps that sum out the indices of an operand of this shape
    (operand k) that keep does not contain, after taking the diagonal of
    each index repeated in it ('ii', 'iij'), and the shape and labels they
    leave; the steps run by _einsum_run_reduce."""
    steps, shape = [], list(shape)
    for c in subs:
        while subs.count(c) > 1:
            i = subs.index(c)
            j = subs.index(c, i + 1)
            if shape[i] != shape[j]:
                raise ValueError(f"dimensions in operand {k} for collapsing index '{c}' don't "
                                 f"match ({shape[i]} != {shape[j]})")
            steps.append((len(shape), i, j))  # the diagonal goes last
            shape = [n for m, n in enumerate(shape) if m not in (i, j)] + [shape[i]]
            subs = "".join(x for n, x in enumerate(subs) if n not in (i, j)) + c
    drop = [i for i, c in enumerate(subs) if c not in keep]
    if drop:
        steps.append(drop)
        shape = [n for n, c in zip(shape, subs) if c in keep]
        subs = "".join(c for c in subs if c in keep)
    return steps, shape, subs


def _einsum_run_reduce(t, steps):
    for step in steps:
        if type(step) is tuple:  # (ndim, i, j): the diagonal of dims i and j
            from ._twodim import _diagonal_fn
            ndim, i, j = step
            t = _diagonal_fn(ndim, 0, i, j)(t)
        else:
            # (in the operand's dtype, as NumPy's einsum sums: hop's sum of
            # an integer narrower than int64 is int64, which the matmul
            # with the next operand would not take)
            r = _C.sum(t, step, False)
            t = r if r.dtype == t.dtype else r.to(t.dtype)
    return t


def _einsum_reduce(t, subs, keep, k=0):
    """Tensor t (operand k) reduced as _einsum_reduce_plan says, and its
    labels."""
    steps, _, subs = _einsum_reduce_plan(tuple(t.shape), subs, keep, k)
    return _einsum_run_reduce(t, steps), subs


def _einsum_pair_plan(shape_a, sa, shape_b, sb, keep):
    """How two operands of these shapes are contracted over their shared
    indices that keep does not need, with one matmul (_einsum_run_pair), and
    the shape and labels of the result.  Each operand is permuted to
    (batch, left, contract) and (batch, contract, right) and flattened to
    those three sizes, but without a batch to a matrix, or to a vector where
    its left or right is empty, so that the common forms are one plain
    matmul ('ij,jk', 'ij,j', 'i,i'); the steps of sizes known to change
    nothing (an identity permutation, an expand or a reshape to the shape
    the operand has) are left out."""
    shared = [c for c in sa if c in sb]
    contract = [c for c in shared if c not in keep]
    batch = [c for c in shared if c in keep]
    left = [c for c in sa if c not in sb]
    right = [c for c in sb if c not in sa]
    sizes = {}
    for shape, s in ((shape_a, sa), (shape_b, sb)):
        for i, c in enumerate(s):
            if c in sizes and sizes[c] != shape[i] and 1 not in (sizes[c], shape[i]):
                raise ValueError(f"operands could not be broadcast together with remapped shapes "
                                 f"for index {c!r}: {sizes[c]} and {shape[i]}")
            sizes[c] = shape[i] if c not in sizes or sizes[c] == 1 else sizes[c]
    ga, gb = batch + left + contract, batch + contract + right
    nb, nl, nk, nr = (_size([sizes[c] for c in g]) for g in (batch, left, contract, right))
    shape = [sizes[c] for c in batch + left + right]
    if batch:
        mm_a, mm_b, mm = [nb, nl, nk], [nb, nk, nr], [nb, nl, nr]
    else:
        mm_a, mm_b = [nl, nk] if left else [nk], [nk, nr] if right else [nk]
        mm = ([nl] if left else []) + ([nr] if right else [])
    a = _einsum_operand_steps(shape_a, sa, ga, sizes, mm_a)
    b = _einsum_operand_steps(shape_b, sb, gb, sizes, mm_b)
    return (a, b, None if _same_sizes(mm, shape) else shape), shape, "".join(batch + left + right)


def _same_sizes(a, b):
    """Whether two size lists are known to be equal (ints, not symbols)."""
    return len(a) == len(b) and builtins.all(type(m) is int and m == n for m, n in zip(a, b))


def _einsum_operand_steps(shape, s, order, sizes, mm):
    """The permutation, expand and reshape (each None where it would change
    nothing) that take an operand of this shape and labels s to the matmul
    operand of sizes mm."""
    perm = [s.index(c) for c in order]
    now = [shape[i] for i in perm]
    want = [sizes[c] for c in order]
    return (None if perm == list(range(len(shape))) else perm,
            None if _same_sizes(now, want) else want,
            None if _same_sizes(want, mm) else mm)


def _einsum_run_pair(ta, tb, plan):
    a, b, shape = plan
    t = _C.matmul(_einsum_run_operand(ta, a), _einsum_run_operand(tb, b))
    return t.reshape(*shape) if shape is not None else t


def _einsum_run_operand(t, steps):
    perm, exp, mm = steps
    if perm is not None:
        t = t.permute(*perm)
    if exp is not None:
        t = t.expand(*exp)
    return t.reshape(*mm) if mm is not None else t


class _PastMaxRank(Exception):
    """An intermediate of _einsum_plan's contraction has more dims than a
    hop tensor may (HOP_MAX_RANK, 8), where NumPy's einsum has none."""


def _einsum_by_numpy(kind, operands, out, dtype, order, casting, optimize):
    """NumPy's einsum where hop's left-to-right contraction would make an
    intermediate of more than 8 dims ('acdf,jbje,gihb,...': NumPy's
    optimize=False iterates over all indices at once): NumPy's own call of
    the concrete operands eagerly; while tracing a break of hop.compile's
    graph (NumPy's code runs it; hop.trace's ShapeError, as before)."""
    traced = _C.tracing() is not None or builtins.any(
        isinstance(a, ndarray) and _core.is_traced(a._t) for a in operands)
    if traced or out is not None:
        from .. import _breaks
        _breaks.conversion(_C.ShapeError, "hop.numpy: einsum: hop's contraction of these "
                                          "operands has an intermediate of more than 8 "
                                          "dimensions, hop's limit")
    args = [_np.asarray(a) if isinstance(a, ndarray) else a for a in operands]
    r = _np.einsum(*args, dtype=dtype, order=order, casting=casting, optimize=optimize)
    if isinstance(r, _np.generic):
        return ndarray(_C.tensor(_np.asarray(r)), scalar=True)
    return wrap(kind, _C.tensor(r))


def _einsum_standin(shape, strides):
    """An int8 array over a few bytes that NumPy's einsum reads as it reads
    an operand of this shape and these strides (in elements): each size
    over 1 made 2, the axes in the same memory order with the same signs,
    dense where the operand is (its C and F flags) and with a gap where it
    is not, a broadcast axis (stride 0) and a size-1 one of stride 0."""
    small = tuple(builtins.min(n, 2) for n in shape)
    axes = sorted((d for d in range(len(shape)) if shape[d] > 1 and strides[d]),
                  key=lambda d: -builtins.abs(strides[d]))
    want, dense = 1, True
    for d in reversed(axes):
        dense = dense and builtins.abs(strides[d]) == want
        want *= shape[d]
    new, step, start = [0] * len(shape), 1 if dense else 2, 0
    for d in reversed(axes):
        new[d] = step if strides[d] > 0 else -step
        start += 0 if strides[d] > 0 else step * (small[d] - 1)
        step *= small[d]
    memory = _np.zeros(start + step + 1, _np.int8)
    return _np.lib.stride_tricks.as_strided(memory[start:], small, new)


def einsum_layout(subscripts, order, optimize, layouts):
    """_einsum_layout's answer, kept per hashable question (at most 256:
    NumPy's probe costs ~20-50 us, a lookup ~1 us)."""
    key = (subscripts, order, optimize, tuple(layouts))
    try:
        hash(key)
    except TypeError:  # (an explicit path, a list)
        return _einsum_layout(subscripts, order, optimize, layouts)
    return _einsum_layout_kept(*key)


@functools.lru_cache(maxsize=256)
def _einsum_layout_kept(subscripts, order, optimize, layouts):
    return _einsum_layout(subscripts, order, optimize, list(layouts))


def _einsum_layout(subscripts, order, optimize, layouts):
    """The layout NumPy's einsum gives its new result of operands of these
    layouts ((shape, strides in elements) each) for order= and optimize=:
    (view, perm), view whether it is a view of the one operand (NumPy's
    einsum returns one where no label is summed, unless optimize's final
    asanyarray(order=) copies it) and perm its axes outermost in memory
    first (None: C order).  Asked of NumPy's einsum on stand-ins of each
    layout (_einsum_standin), the path of more than two operands planned on
    the real sizes first (optimize's plan reads them); NumPy's errors of
    order= are its own."""
    given = isinstance(optimize, list) and optimize[:1] == ["einsum_path"]
    if optimize is not False and len(layouts) > 2 and not given:
        shapes = [_np.lib.stride_tricks.as_strided(_np.zeros(1, _np.int8), shape,
                                                   (0,) * len(shape)) for shape, _ in layouts]
        optimize = _np.einsum_path(subscripts, *shapes, optimize=optimize)[0]
    ops = [_einsum_standin(*lay) for lay in layouts]
    r = _np.einsum(subscripts, *ops, order=order, optimize=optimize)
    if not isinstance(r, _np.ndarray) or r.ndim < 1:
        return False, None
    view = len(ops) == 1 and _np.shares_memory(r, ops[0])
    if r.ndim < 2 or view:
        return view, None
    from ._storage import decide_order
    return False, decide_order([(r.shape, r.strides)], r.ndim, "like")


def _einsum_layout_of(kind, arrays, subscripts, order, optimize, out):
    """einsum_layout of operands arrays as NumPy's arrays have them: an
    eager hop.numpy array's own layout, a compiled function's argument's
    recorded for each call (_storage.elementwise_order, as memory_order
    does); None (C order, a view where one operand's labels all stay) where
    hop cannot say (hop.trace of hop.numpy arrays, hop.Tensors), as
    memory_order's, and with out= (its own layout)."""
    fn = functools.partial(einsum_layout, subscripts, order, optimize)
    if out is not None:  # (out='s own layout: only NumPy's checks of order=)
        if optimize is False:
            _np.einsum("", 0, order=order)  # (c_einsum's)
        else:
            order.upper()  # (einsum's Python path reads nothing more of it with out=)
        return None
    run = _storage.current()
    if kind is ndarray and run is None and not _core.tracing():
        if optimize is False and order in ("C", "c"):
            return None  # (c_einsum's C order, without asking it)
        return fn([_storage.eager_layout(a) if isinstance(a, (ndarray, _np.ndarray)) else
                   (_np.shape(a), _storage._c_strides(_np.shape(a))) for a in arrays])
    if kind is NumpyArg and run is not None:
        return _storage.elementwise_order(arrays, 0, run, fn)
    return None


def _einsum_plan(ins, outs, shapes):
    """The steps of the contraction, left to right, an index kept while the
    output or a later operand needs it: the first operand's reduction, per
    later operand its reduction and its pair's matmul, the last reduction,
    the output's permutation (None: none)."""
    first, shape, s = _einsum_reduce_plan(shapes[0], ins[0], set(outs) | set("".join(ins[1:])))
    pairs = []
    for k in range(1, len(ins)):
        later = set(outs) | set("".join(ins[k + 1:]))
        steps, shape_b, sb = _einsum_reduce_plan(shapes[k], ins[k], later | set(s), k)
        pair, shape, s = _einsum_pair_plan(shape, s, shape_b, sb, later)
        if len(shape) > 8:
            raise _PastMaxRank
        pairs.append((steps, pair))
    last, shape, s = _einsum_reduce_plan(shape, s, set(outs))
    perm = [s.index(c) for c in outs] if s != outs and len(outs) > 1 else None
    return first, pairs, last, perm


def _einsum_one_matmul(plan):
    """Whether the plan is one matmul of the two operands as they are (no
    reduction, permutation, expand or reshape): 'ij,jk', 'ij,j->i', 'i,i',
    'bij,bjk->bik'."""
    first, pairs, last, perm = plan
    return not first and not last and perm is None and len(pairs) == 1 and \
        not pairs[0][0] and pairs[0][1] == ((None, None, None), (None, None, None), None)


def _einsum_run(ts, plan):
    first, pairs, last, perm = plan
    t = _einsum_run_reduce(ts[0], first)
    for k, (steps, pair) in enumerate(pairs, 1):
        t = _einsum_run_pair(t, _einsum_run_reduce(ts[k], steps), pair)
    t = _einsum_run_reduce(t, last)
    return t.permute(*perm) if perm is not None else t


def _einsum_view(kind, a, subscripts, sub, outs):
    """NumPy's einsum of one array whose labels all stay (no sum, no out=):
    a view of it (the repeated labels' diagonals, the axes in the output's
    order; dtype= and casting= not read), which a write reaches a through."""
    def fn(x):
        x, s = _einsum_reduce(x, sub, set(outs))
        return x.permute(*[s.index(c) for c in outs]) if s != outs else x
    from ._funcs import _view
    return _view(kind, a, fn, lambda x: _np.einsum(subscripts, x),
                 copies=len(set(sub)) < len(sub))


# einsum's decisions (the parse, NumPy's checks in its order, the dtypes and
# the contraction's steps) depend on the subscripts, the operands' shapes and
# dtypes and the keywords alone; kept per such key for concrete shapes (a call
# that raised keeps nothing, so each such call raises again; a view is not
# kept): they were ~20 us of an eager einsum of two small arrays
_EINSUM_PLANS = {}


def _einsum_key(subscripts, ts, single, view, dtype, casting, path):
    """The key of einsum's decisions for these operands, or None where they
    are not kept (a symbolic size, an explicit path, an unhashable keyword)."""
    shapes = []
    for t in ts:
        shape = tuple(t.shape)
        if builtins.any(type(n) is not int for n in shape):
            return None
        shapes.append((shape, t.dtype))
    if type(path) is list or type(casting) is not str or \
            not (dtype is None or isinstance(dtype, (str, type, _np.dtype))):
        return None
    return subscripts, tuple(shapes), single, view, dtype, casting, path


def _einsum_by_value(arrays, ts, dtype):
    """NumPy's result dtype of einsum's operands where a 0-d one (a Python
    or NumPy scalar, a 0-d array) is beside an array of dimensions and no
    dtype is given: NumPy 1.24's result_type of the operand arrays casts it
    by its value (`np.einsum(",i->", 3, v)` of an int8 v is int8), which
    the decisions' cache cannot key; else None."""
    if dtype is not None or not builtins.any(t.ndim == 0 for t in ts) or \
            not builtins.any(t.ndim > 0 for t in ts):
        return None
    return _core.result_dtype([_core.operand(a, "einsum") for a in arrays], "einsum")


def _einsum_dtypes(ts, dtype, casting, by_value=None, out_dt=None):
    """The result dtype and the one the contraction computes in, with the
    TypeError of NumPy's iterator for an operand it cannot cast (a 0-d one
    of a dtype by_value, by its value as NumPy casts it: a safe cast of 3
    to int8).  out_dt: out='s dtype, one of the operands NumPy's iterator
    finds the common dtype of when no dtype is given (float32 operands
    into a float64 out are summed in float64)."""
    dt = _np.dtype(dtype) if dtype is not None else \
        by_value if by_value is not None else _core.promoted_dtype(ts)
    if dtype is None and out_dt is not None:
        dt = _np.result_type(dt, out_dt)
    for i, t in enumerate(ts):  # NumPy's iterator casts each operand under `casting`
        if by_value is not None and t.ndim == 0 and casting in ("safe", "same_kind", "unsafe"):
            continue
        if not _np.can_cast(_core.np_dtype(t), dt, casting):
            raise TypeError(f"Iterator operand {i} dtype could not be cast from "
                            f"{_core.np_dtype(t)!r} to {dt!r} according to the rule {casting!r}")
    return dt, _np.dtype(_np.int64) if dt == _np.dtype(bool) else dt


def _einsum_out_dtype(out):
    """out='s dtype where out is an array (else None: _out refuses it)."""
    from ._ufuncs import out_array
    return None if out is None or not out_array(out) else _np.dtype(out.dtype)


def _einsum_out_check(ts, ins, outs, out, dt, casting):
    """NumPy's iterator's casting checks of einsum's out=, its operand
    len(ts), read and written (NumPy's einsum sums into it): its dtype cast
    to dt and dt cast back to it under `casting` (the default 'safe':
    float64 products into a float32 out are a TypeError).  Made only where
    out has the result's shape: another is the ValueError _write_out
    raises, which NumPy's iterator raises first."""
    sizes = {}
    for labels, t in zip(ins, ts):
        for c, n in zip(labels, t.shape):
            if n != 1 or c not in sizes:
                sizes[c] = n
    if tuple(out.shape) != tuple(sizes.get(c, 1) for c in outs):
        return
    od, n = _np.dtype(out.dtype), len(ts)
    if not _np.can_cast(od, dt, casting):
        raise TypeError(f"Iterator operand {n} dtype could not be cast from {od!r} to {dt!r} "
                        f"according to the rule {casting!r}")
    if not _np.can_cast(dt, od, casting):
        raise TypeError(f"Iterator requested dtype could not be cast from {dt!r} to {od!r}, "
                        f"the operand {n} dtype, according to the rule {casting!r}")


def _einsum_cast(ts, dt, cdt):
    """The operands in the dtype the contraction computes in: a bool result's
    (cdt int64) each cast to bool first, as NumPy's iterator casts them (0.5
    is True, not int64's 0)."""
    if dt == _np.dtype(bool):
        ts = [_core.cast(t, dt) for t in ts]
    return [_core.cast(t, cdt) for t in ts]


@implements(_np.einsum)
def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False,
           _kind=None):
    if not operands:
        raise ValueError("must specify the einstein sum subscripts string and at least one "
                         "operand, or at least one operand and its corresponding subscripts "
                         "list")
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0], operands[1:]
    else:
        subscripts, arrays = _einsum_sublists(operands)
    if not arrays:
        raise ValueError("must specify the einstein sum subscripts string and at least one "
                         "operand")
    fast, fast_ts = _einsum_fast_key(operands, out, dtype, order, casting, optimize, _kind)
    got = _EINSUM_PLANS.get(fast) if fast is not None else None
    if got is not None:  # (the decisions and NumPy's layout of C-ordered operands)
        return _einsum_finish(ndarray, fast_ts, got[0], None, lay=got[1])
    path = _einsum_optimize(optimize)
    kind = _kind or result_kind(arrays, ndarray)
    ts = [_t(a, "einsum") for a in arrays]
    single = len(ts) == 1 and out is None
    view = single and isinstance(arrays[0], ndarray) and not arrays[0]._scalar
    by_value = _einsum_by_value(arrays, ts, dtype)
    out_dt = _einsum_out_dtype(out)
    # (whether a view of one operand is NumPy's answer under optimize= reads
    # its layout and order=: decided afresh, _einsum_layout_of)
    key = None if by_value is not None or view and path is not False else \
        _einsum_key(subscripts, ts, single, view, dtype, casting, path)
    if key is not None and out is not None:
        # (out='s checks read its dtype and shape: _einsum_out_check)
        oshape = tuple(out.shape) if out_dt is not None else None
        key = None if oshape is None or builtins.any(type(n) is not int for n in oshape) \
            else (key, out_dt, oshape)
    got = _EINSUM_PLANS.get(key) if key is not None else None
    if got is None:
        ins, outs = _einsum_parse(subscripts, ts)
        _einsum_path_check(path, ins, outs)
        _einsum_check(ts, ins, outs, single)
        lay = _einsum_layout_of(kind, arrays, subscripts, order, optimize, out)
        if view and outs and set(ins[0]) <= set(outs) and (lay is None or lay[0]):
            return _einsum_view(kind, arrays[0], subscripts, ins[0], outs)
        dt, cdt = _einsum_dtypes(ts, dtype, casting, by_value, out_dt)
        if out_dt is not None:
            _einsum_out_check(ts, ins, outs, out, dt, casting)
        same = builtins.all(_core.np_dtype(t) == cdt for t in ts) and dt == cdt
        ts = _einsum_cast(ts, dt, cdt)
        try:
            plan = _einsum_plan(ins, outs, [tuple(t.shape) for t in ts])
        except _PastMaxRank:
            return _einsum_by_numpy(kind, operands, out, dtype, order, casting, optimize)
        got = dt, cdt, plan, same and _einsum_one_matmul(plan)
        if key is not None:
            if len(_EINSUM_PLANS) >= 512:
                _EINSUM_PLANS.clear()
            _EINSUM_PLANS[key] = got
            if fast is not None:
                _EINSUM_PLANS[fast] = got, lay
        return _einsum_finish(kind, ts, got, out, cast=False, array_0d=optimize is not False,
                              lay=lay)
    lay = _einsum_layout_of(kind, arrays, subscripts, order, optimize, out)
    return _einsum_finish(kind, ts, got, out, array_0d=optimize is not False, lay=lay)


def _einsum_fast_key(operands, out, dtype, order, casting, optimize, _kind):
    """The key of einsum's decisions for an eager call of a subscripts
    string and two or more exact hop.numpy arrays with no keywords (their
    shapes concrete), which einsum looks up before anything else (the
    general key is ~3 us of reading the operands), and the arrays' tensors;
    (None, None) for any other call.  Kept beside the general key of the
    same decisions, with NumPy's layout of the result (_einsum_layout_of),
    which the operands' strides (in the key where not C-contiguous) fix."""
    if len(operands) < 3 or type(operands[0]) is not str or _kind not in (None, ndarray) or \
            out is not None or dtype is not None or order != "K" or casting != "safe" or \
            optimize is not False or _C.tracing() is not None:
        return None, None
    for a in operands[1:]:
        if type(a) is not ndarray or a._cp is not None:
            return None, None
    ts = [a._t for a in operands[1:]]
    if builtins.any(t.ndim == 0 for t in ts):
        return None, None  # (a 0-d operand's dtype is cast by its value: _einsum_by_value)
    return (operands[0], *[(t.shape, t.dtype, None if t.is_contiguous() else t.stride())
                           for t in ts]), ts


def _einsum_finish(kind, ts, got, out, cast=True, array_0d=False, lay=None):
    """einsum's result of operands ts by its decisions got (the operands
    cast to the contraction's dtype unless cast is False: done).  array_0d:
    a result of no dimensions is a 0-d array, not a NumPy scalar (NumPy's
    einsum with an `optimize` other than False returns
    `asanyarray(result)`).  lay: NumPy's layout of it (_einsum_layout_of;
    None: C order)."""
    dt, cdt, plan, one_matmul = got
    if one_matmul:  # (the operands in their dtype; not bool)
        t = _C.matmul(ts[0], ts[1])
        return _einsum_result(kind, t, out, array_0d, lay)
    if cast:
        ts = _einsum_cast(ts, dt, cdt)
    t = _einsum_run(ts, plan)
    if dt == _np.dtype(bool):
        t = _C.ne(t, 0)
    # a result that may share an operand's memory (one operand, or a
    # permutation) is copied, C-ordered; a matmul's own result is not
    fresh = plan[1] and plan[3] is None
    t = _core.cast(t, dt)
    return _einsum_result(kind, t.clone() if t.ndim and not fresh else t, out, array_0d, lay)


def _einsum_result(kind, t, out, array_0d, lay):
    """einsum's result array of tensor t (C-ordered), or out= written, in
    NumPy's layout lay."""
    perm = lay[1] if lay is not None else None
    if perm is not None:
        from ._ufuncs import back_in_order
        return back_in_order(kind, t.permute(*perm).clone(), perm)
    return _out(kind, t, scalar=t.ndim == 0 and out is None and not array_0d, out=out,
                what="einsum")
