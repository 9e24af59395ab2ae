"""hop.numpy's reductions (sum, prod, max, min, any, all, argmax, argmin,
mean, var, std, ptp, nansum) and scans (cumsum, cumprod), on the registry
and helpers of _funcs (whose docstring says how each function serves its
three callers).  _funcs imports this module partway through, once its
helpers exist; import hop.numpy (or _funcs), not this module, first.
"""

import builtins
import math
import warnings

import numpy as _np

from .. import _C, _exact
from . import _core, _corder, _funcs, _reduce_out
from ._fpcheck import checked, mean_says, var_says, count_may_say
from ._funcs import _axes, _axis, _no_numpy_bool, _kind_of, _out, _size, _t, implements
from ._ndarray import NumpyArg, ndarray, wrap


# (NumPy's reduction, the operand's dtype, dtype=) -> the result's dtype:
# NumPy's answer depends on nothing else, and asking it again under errstate
# was ~20% of an eager hnp.sum of 16 floats
_REDUCE_DTYPE = {}


def _reduce_dtype(np_fn, t, dtype, what):
    have = _core.np_dtype(t)
    try:
        key = (np_fn, have, dtype)
        d = _REDUCE_DTYPE.get(key)
    except TypeError:  # (an unhashable dtype=: NumPy's probe raises its error)
        key = d = None
    if d is None:
        kw = {"dtype": dtype} if dtype is not None else {}
        with warnings.catch_warnings():
            # (the probe's ComplexWarning is the call's, given below on each)
            warnings.simplefilter("ignore", _np.ComplexWarning)
            d = _core.numpy_probe(lambda: _np.asarray(np_fn(_np.ones(1, have), **kw))).dtype
        if key is not None:
            _REDUCE_DTYPE[key] = d
    _core.hop_dtype(d, what)
    if dtype is not None:  # (NumPy casts a complex operand into dtype= once)
        _core.complex_cast_warns(have, dtype, f"{what} of complex values with dtype={dtype}")
    return d


def _dims(axes):
    return list(axes)


def _with_initial(x, axes, initial):
    """x, with one slice of initial appended along each reduced axis whose
    size may be 0: NumPy's max/min with initial reduce an empty array to
    initial (hop's amax/amin have no identity to start from)."""
    for d in axes:
        n = x.shape[d]
        if isinstance(n, int) and n > 0:
            continue
        v = _core.complex_scalar(complex(initial), _core.np_dtype(x)) if \
            _core.np_dtype(x).kind == "c" else _C.full((), initial, dtype=x.dtype)
        shp = list(x.shape)
        shp[d] = 1
        x = _C.cat([x, v.expand(*shp)], d)
    return x


def _zero_sign_checked(x, r, axes, keepdims, initial=None):
    """r, the max or min of float x over axes (and initial, when not None),
    checked at run time: where a result is a zero and its slice (with
    initial) holds zeros of both signs, NumPy 1.24 keeps the sign its SIMD
    reduction happens to keep (the last of the zeros for short arrays, then
    one depending on the lane count, the length and the layout), which no
    rule of hop's reproduces; the plan then hands the call to eager
    (_core.unknown_if).  In the function's own code the check is deferred
    to its end (_core.defer_zero_sign): it is made only for a result or a
    write that r reaches with its sign (not through a comparison), so `if
    np.max(x) > 0` stays compiled for every x.  Inside a hop.map, hop.cond
    or loop body the check is deferred to the body's end likewise
    (_core.defer_in_body): made only where r reaches the body's results
    with its sign.  Elsewhere (a side of a data-dependent `if`, hop.grad's
    or hop.vmap's body of the user's function, a body of hop.trace's direct
    call on hop.Tensors) r is checked where it is made, whether or not its
    sign reaches a result."""
    def flag():
        return _zero_sign_unknown(x, r, axes, keepdims, initial)
    if _C._trace_depth() == 1:
        _core.defer_zero_sign(r, flag)
        return r
    if _core.defer_in_body(r, flag):
        return r
    return _exact.checked(_core.unknown_if(flag(), r, _core.CHECK_ZERO_SIGN))


def _zero_sign_unknown(x, r, axes, keepdims, initial):
    """A 0-d bool: some result of r is a zero whose slice held zeros of both
    signs.  The slices are searched only when some result is a zero (a
    cond), so a max of nonzero values costs the cond and an all() over r."""
    from .._hops import cond
    dims = _dims(axes)

    def known(x, r):
        return _C.full((), False, dtype=_core.hop_dtype(_np.dtype(bool), "flag"))

    def searched(x, r):
        zero = _C.eq(x, 0)
        neg = _C.lt(_C.copysign(_C.full((), 1.0, dtype=x.dtype), x), 0)
        has_neg = _C.any(_C.logical_and(zero, neg), dims, keepdims)
        has_pos = _C.any(_C.logical_and(zero, _C.logical_not(neg)), dims, keepdims)
        if initial is not None and initial == 0:
            if math.copysign(1.0, initial) < 0:
                has_neg = _C.logical_or(has_neg, True)
            else:
                has_pos = _C.logical_or(has_pos, True)
        both = _C.logical_and(has_neg, has_pos)
        return _C.any(_C.logical_and(both, _C.eq(r, 0)), None, False)

    # true (nonzero) when no result is a zero: a one-element r is its own
    # predicate, a larger one's is one all() over it
    nonzero = r if r.ndim == 0 or r.shape == (1,) * r.ndim else _C.all(r, None, False)
    return cond(nonzero, known, searched, (x, r))


# np_fn (op) of array a as NumPy computes it.  visit: NumPy's iterator order
# of a where= reduction (a's axes, outermost first) when it is not that of a
# and where as given (masked_visit: a NaN-replaced copy's).
def _initial_in(initial, rdt, what):
    """A number initial= as NumPy casts it to the reduction's dtype first
    (min of a bool array with initial=-5 starts from True; prod of ints
    with 2.5 from 2), with its warning for an out-of-bound Python int.
    NumPy packs it into its result with the dtype's setitem, as NumPy's
    own reduction of no elements shows: into a signed integer dtype a float
    goes through Python's int() and a C long (OverflowError "cannot convert
    float infinity to integer" or "Python int too large to convert to C
    long", ValueError "cannot convert float NaN to integer").  A NumPy
    float scalar into an unsigned dtype is cast, which warns (NumPy's
    floating-point warnings under the caller's numpy.errstate) for a value
    out of range: traced, a break of hop.compile's graph, so that the call
    runs eagerly, as NumPy's, on every call; eagerly the invalid flag,
    which a checked reduction's own check (_fpcheck) reads to have NumPy
    compute the call (NumPy's call here cleared the flags: those raised
    before are put back), else NumPy's cast again, which warns as NumPy's."""
    raised = _C._fp_status()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                with _np.errstate(all="raise"):
                    v, flagged = _np.maximum.reduce(_np.zeros((0,), rdt), initial=initial), False
            except FloatingPointError:
                with _np.errstate(all="ignore"):
                    v, flagged = _np.maximum.reduce(_np.zeros((0,), rdt), initial=initial), True
    finally:
        if raised:
            _C._fp_note(raised)
    if flagged:
        from ._fpcheck import outer
        if _core.tracing():
            _core.numpy_warns(f"{what} with initial={initial!r}",
                              "invalid value encountered in cast", RuntimeWarning)
        elif outer():
            _C._fp_note(8)
        else:
            # (max and min are not checked: NumPy's own warnings, or its
            # FloatingPointError, under the caller's state)
            _np.maximum.reduce(_np.zeros((0,), rdt), initial=initial)
    _core.python_ints_warn(initial, rdt, f"{what} with initial=")
    return v.item()


def _with_initial_after(op, r, initial, cplx_order):
    """The reduction r combined with initial, in NumPy's operand order."""
    if cplx_order:
        comb = _corder.maximum if op == "amax" else _corder.minimum
        # (the accumulator, initial, is NumPy's first operand: it stays
        # on a tie, np.max(np.complex64(-0.0), initial=0) is 0j)
        return comb(_core.complex_scalar(complex(initial), _core.np_dtype(r)), r)
    comb = {"sum": _C.add, "prod": _C.mul, "amax": _C.maximum, "amin": _C.minimum}[op]
    # (a complex initial, cast to a complex reduction's dtype above,
    # is a complex 0-d tensor: hop's scalar operands are real)
    v = _initial_operand(initial, _core.np_dtype(r))
    # NumPy's accumulator starts at initial and takes each element
    # in turn; its float32/float64 maximum/minimum keep the second
    # of equal operands (hop's kernels too), so a zero element's
    # sign wins over a zero initial's (np.max(np.float32(-0.0),
    # initial=0) is -0.0); its float16 ones keep the first, initial
    second = op in ("amax", "amin") and _core.np_dtype(r) != _np.dtype(_np.float16)
    return comb(v, r) if second else comb(r, v)


def _initial_filled(x, axes, keepdims, initial):
    """A complex sum or prod over an empty slice: NumPy's output element is
    initial itself, where hop's kernel starts from the identity (1 * (-inf+0j)
    is -inf+nanj)."""
    shp = [1 if d in axes else x.shape[d] for d in range(x.ndim)] if keepdims else \
        [x.shape[d] for d in range(x.ndim) if d not in axes]
    v = _core.complex_scalar(complex(initial), _core.np_dtype(x))
    return v.expand(*shp).clone() if shp else v


def _reduce(op, np_fn, a, axis, dtype, out, keepdims, initial, where, kind, what, visit=None):
    t = _t(a, what)
    axes = _axes(axis, t.ndim)
    if t.ndim == 0:
        axes = ()  # (a 0-d array's axis 0 or -1, which NumPy's reduce takes, is no axis)
    rdt = _reduce_dtype(np_fn, t, dtype, what) if op not in ("amax", "amin") else \
        _core.np_dtype(t)
    if dtype is not None and op in ("amax", "amin"):
        rdt = _np.dtype(dtype)
    x = t
    if out is not None and dtype is None and hasattr(out, "dtype"):
        x = into_loop(t, axes, out, op in ("amax", "amin") and initial is None)
        rdt = _core.np_dtype(x)
    if initial is not None and isinstance(initial, (int, float, complex, _np.generic)):
        initial = _initial_in(initial, rdt, what)
    if op in ("sum", "prod") and (dtype is not None or _core.np_dtype(t).kind == "f"):
        x = _cast_in_order(a, kind, t, rdt)  # computed in the dtype asked for
    wmask = _masked_loop_mask(op, where, t, x, axes, what)
    if where is True and initial is not None and op == "sum" and axes and \
            _core.np_dtype(x).kind in "fc":
        # and with initial=: NumPy's output element starts at initial and
        # adds each inner loop's sum in turn, which is the masked loop's
        # with every element in (initial + sum rounds otherwise when an
        # output gets more than one inner loop)
        wmask = _mask_of(True, t, f"{what}: where")
    if where is not True and wmask is None:
        w = _t(where, f"{what}: where")
        if initial is None and op in ("amax", "amin"):
            raise ValueError(f"reduction operation '{_UFUNC_OF[op]}' does not have an identity, "
                             f"so to use a where mask one has to specify 'initial'")
        # a masked-out element is the op's identity; initial counts once
        # (max/min have none: initial, which takes part anyway)
        fill = initial if op in ("amax", "amin") else (0 if op == "sum" else 1 if op == "prod"
                                                       else False if op == "any" else True)
        fill = _core.complex_scalar(complex(fill), _core.np_dtype(x)) if \
            _core.np_dtype(x).kind == "c" else _initial_operand(fill, _core.np_dtype(x)) \
            if isinstance(fill, int) and fill >= 2**63 else _C.full((), fill, dtype=x.dtype)
        x = _masked_in_order(a, where, kind, x, w, fill, visit) if op == "prod" and \
            _core.np_dtype(x).kind in "fc" else _C.where(w, x, fill)
    _check_out(op, t, axes, keepdims, out, where)
    order = _reduce_order(a, where, t.ndim, axes, keepdims, kind) if out is None else None
    if wmask is not None:
        from ._ufuncs import memory_order
        visit = visit or memory_order(kind, (a, where), t.ndim) or tuple(range(t.ndim))
    if order is not None:
        # NumPy's result is in its iterator's order of a's axes: reduced in
        # that order (the reduced axes last) and returned as NumPy's view
        x = x.permute(*order[0])
        if wmask is not None:
            wmask = wmask.permute(*order[0])
            visit = tuple(order[0].index(d) for d in visit)
        axes, keepdims = tuple(range(t.ndim - len(axes), t.ndim)), False
    if wmask is not None:
        r = _masked_sum(x, wmask, axes, keepdims, initial, visit, op)
        return _finish(kind, _core.cast(r, rdt), order, out, what)
    if initial is not None and op in ("amax", "amin"):
        x = _with_initial(x, axes, initial)
    shape_kd = back = None
    if initial is not None and op in ("sum", "prod") and _core.np_dtype(x).kind == "c" and \
            where is True and axes and 0 in [x.shape[d] for d in axes]:
        return _finish(kind, _core.cast(_initial_filled(x, axes, keepdims, initial), rdt),
                       order, out, what)
    if initial is not None and op in ("sum", "prod") and _core.np_dtype(x).kind in "fc" and \
            axes and (len(axes) == 1 or len(axes) == x.ndim or _core.np_dtype(x).kind == "f"):
        # NumPy's accumulator starts at initial: ((initial * x0) * x1) ...,
        # ((initial + x0) + x1) ... down a kept axis innermost in memory;
        # (x0 * x1 ...) * initial rounds otherwise
        # (one axis: the concatenation in a's memory order, which NumPy's
        # loop runs in)
        mem = _x_mem(a, kind, x.ndim, order[0] if order else range(x.ndim)) \
            if len(axes) == 1 else None
        if len(axes) > 1:
            # (NumPy's loop takes each output's elements in its iterator's
            # order: the reduced axes in that order, flattened, after the
            # kept ones; `order` put x's axes in it already)
            from ._ufuncs import memory_order
            it = range(x.ndim) if order is not None else \
                memory_order(kind, (a,), t.ndim) or range(x.ndim)
            kept, red = [d for d in it if d not in axes], [d for d in it if d in axes]
            shape_kd = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)) \
                if keepdims else tuple(x.shape[d] for d in sorted(kept))
            back = [kept.index(d) for d in sorted(kept)]
            x = x.permute(*(kept + red)).reshape(tuple(x.shape[d] for d in kept) + (-1,))
            axes, keepdims = [len(kept)], False
        x, initial = in_order(x, mem, lambda y: _cat_initial(
            y, mem.index(axes[0]) if mem else axes[0], initial)), None
    cplx_order = op in ("amax", "amin") and _core.np_dtype(x).kind == "c"
    # a float max/min under hop.compile (and hop.trace, hop.grad, hop.vmap:
    # _core.checking): NumPy's zero sign is checked at run time
    # (_zero_sign_checked), unless a side of a merged branch replays the
    # root's own (deferred there)
    zero_sign = bool(axes) and op in ("amax", "amin") and _core.np_dtype(x).kind == "f" and \
        _core.checking()
    # axis=() reduces nothing (hop's empty dim list would mean all of them)
    if not axes:
        r = _core.cast(x.clone(), rdt)
        if op in ("sum", "prod") and initial is None and _core.np_dtype(r).kind in "fc":
            # each output element starts at the identity: 0 + (-0.0) is 0.0
            # (np.sum(np.array(-0.0)) and np.sum(a, axis=()) give 0.0), and
            # 1 * (inf+0j) is inf+nanj
            r = _core.over(_C.sum if op == "sum" else _C.prod, r, (), False)
    elif cplx_order:
        # (NumPy's lexicographic order)
        r = _empty_checked(_corder.extreme, kind, op, x, axes, keepdims)
    else:
        before = _core.memo_state() if zero_sign else None
        r = _empty_checked(getattr(_C, op), kind, x, _dims(axes), keepdims)
        if before is not None and _core.replayed(before):
            zero_sign = False  # the root's own max, whose check is deferred
    if initial is not None:
        r = _with_initial_after(op, r, initial, cplx_order)
    if zero_sign:
        r = _zero_sign_checked(x, r, axes, keepdims, initial)
    if shape_kd is not None:
        r = (r.permute(*back) if len(back) > 1 else r).reshape(shape_kd)
    r = _core.cast(r, rdt)
    return _finish(kind, r, order, out, what)


def _masked_loop_mask(op, where, t, x, axes, what):
    """The where= mask (a bool tensor of t's shape) of a reduction of x that
    NumPy's masked reduction computes (_masked_sum), else None: a float or
    complex sum, and a float16 product (its loop rounds to float16 after
    each run of unmasked elements)."""
    if where is True or not axes:
        return None
    dt = _core.np_dtype(x)
    if (op == "sum" and dt.kind in "fc") or (op == "prod" and dt == _np.dtype(_np.float16)):
        return _mask_of(where, t, f"{what}: where")
    return None


def _cast_in_order(a, kind, t, dt):
    """Tensor t (array a's) cast to dt, laid out in a's memory order: NumPy
    casts into its buffer in that order and adds the cast values in it, so
    a reduction of the cast adds as NumPy's (hop's cast of a transposed
    array is C-ordered)."""
    if _core.np_dtype(t) == _np.dtype(dt) or t.ndim < 2:
        return _core.cast(t, dt)
    from ._ufuncs import memory_order
    mem = memory_order(kind, (a,), t.ndim)
    if mem is None:
        return _core.cast(t, dt)
    return _core.cast(t.permute(*mem), dt).permute(*[mem.index(d) for d in range(t.ndim)])


def _masked_in_order(a, where, kind, x, w, fill, vis=None):
    """where(w, x, fill) laid out in NumPy's iterator order of array a and
    its where= mask (a mask's axes of stride 0 order nothing; vis: that
    order when given), the order in which a float product of it
    multiplies, as NumPy's masked reduction visits a (hop's where is
    C-ordered)."""
    from ._ufuncs import memory_order
    vis = vis or memory_order(kind, (a, where), x.ndim)
    if vis is None:
        return _C.where(w, x, fill)
    wb = _C.logical_or(w, _C.zeros(tuple(x.shape), dtype=_C.bool))  # (w broadcast)
    return _C.where(wb.permute(*vis), x.permute(*vis), fill).permute(
        *[vis.index(d) for d in range(x.ndim)])


def x_memory_order(a, kind, t, axis, keepdims, where=True, out=None):
    """Array a's memory order (its axes outermost first) in the axes of the
    x that ordered() hands its compute: t (tensor of a), or _reduced's
    permutation of it; None for C order.  A copy of x laid out in it
    (in_order) is NumPy's copy of a in K order, which a sum of it adds in
    (hop.compile knows the order only from a)."""
    res = _reduce_order(a, where, t.ndim, _axes(axis, t.ndim), keepdims, kind) \
        if out is None else None
    return _x_mem(a, kind, t.ndim, range(t.ndim) if res is None else res[0])


def masked_visit(a, kind, t, axis, keepdims, where, out=None):
    """NumPy's iterator order (outermost first) of a where= reduction of a
    copy of array a in its K order (the nan functions' NaN-replaced one)
    with the mask where as given, in the axes of the x that ordered()
    hands its compute (None without a mask): the reduction of the copy, a
    tensor with the mask broadcast to its shape, would read the order from
    that full mask's C strides, where a broadcast mask's axes of stride 0
    order nothing.  (The copy's layout is taken as a's own, as
    x_memory_order's.)"""
    if where is True or t.ndim < 2:
        return None
    from ._ufuncs import memory_order
    vis = memory_order(kind, (a, where), t.ndim) or tuple(range(t.ndim))
    res = _reduce_order(a, where, t.ndim, _axes(axis, t.ndim), keepdims, kind) \
        if out is None else None
    return vis if res is None else tuple(res[0].index(d) for d in vis)


def _x_mem(a, kind, nd, xperm):
    """x_memory_order of the x whose axis i is axis xperm[i] of array a."""
    from ._ufuncs import memory_order
    mem = memory_order(kind, (a,), nd)
    return None if mem is None else tuple(sorted(range(nd), key=lambda i: mem.index(xperm[i])))


def in_order(x, mem, make):
    """make(x), a new tensor of x's shape made elementwise (hop's are in C
    order), laid out in memory order mem (x_memory_order's; None: C)."""
    if mem is None:
        return make(x)
    return make(x.permute(*mem)).permute(*[mem.index(d) for d in range(x.ndim)])


def _cast_first(a, kind, t, axis, keepdims, dtype, fn):
    """ordered()'s compute of fn(x, axes, dtype, keepdims) (an ndarray)
    with x cast to dtype first in array a's memory order (_cast_in_order)."""
    mem = x_memory_order(a, kind, t, axis, keepdims) if t.ndim else None

    def compute(x, axes, kd):
        if _core.np_dtype(x) != _np.dtype(dtype):
            _core.complex_cast_warns(_core.np_dtype(x), dtype,
                                     f"mean of complex values with dtype={dtype}")
            x = in_order(x, mem, lambda y: _core.cast(y, _np.dtype(dtype)))
        return fn(x, axes, dtype, kd)._t
    return compute


def _masked_sum(x, w, axes, keepdims, initial, visit, op="sum"):
    """NumPy's add.reduce (op "prod": multiply.reduce) of float or complex
    tensor x over axes where bool tensor w (of x's shape) holds, from
    initial (None: the identity, +0.0 or 1), bit for bit: the masked_sum
    (masked_prod) op over x and w permuted into visit, the order NumPy's
    iterator visits x's axes in (outermost first); the result has x's axes
    (keepdims as asked)."""
    npd = _core.np_dtype(x)
    if initial is None:
        initial = 1.0 if op == "prod" else 0.0
    start = _core.complex_scalar(complex(initial), npd) if npd.kind == "c" else \
        _C.full((), initial, dtype=x.dtype)
    visit = list(visit)
    r = _C._op(f"masked_{op}", x.permute(*visit), [visit.index(d) for d in axes], True,
               w.permute(*visit), start)
    r = r.permute(*[visit.index(d) for d in range(x.ndim)])
    if not keepdims:
        r = r.reshape(tuple(n for d, n in enumerate(x.shape) if d not in axes))
    return r


# the ufunc whose reduce NumPy's function runs into out= (its name is in
# NumPy's errors)
_UFUNC_OF = {"sum": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum",
             "any": "logical_or", "all": "logical_and", "mean": "add", "var": "add",
             "std": "add", "nansum": "add", "nanmean": "add", "nanvar": "add", "nanstd": "add",
             "nanprod": "multiply", "nanmax": "fmax", "nanmin": "fmin"}


def _check_out(what, t, axes, keepdims, out, where=True):
    """NumPy's errors for a reduction's out= that is not of its result's
    shape (a reduction's result does not broadcast into out), before any
    work; an out that is not an array is _out's error."""
    if out is None or what not in _UFUNC_OF or not hasattr(out, "shape"):
        return
    w = None if where is True else tuple(_t(where, f"{what}: where").shape)
    _reduce_out.check(_UFUNC_OF[what], tuple(t.shape), set(axes), bool(keepdims),
                      tuple(out.shape), w)


def _mask_of(where, t, what):
    """A where= mask (what: its name in errors) as a bool tensor of tensor
    t's shape."""
    return _C.logical_or(_t(where, what), _C.zeros(tuple(t.shape), dtype=_C.bool))


def into_loop(t, axes, out, first):
    """Tensor t as NumPy's reduction over axes into out= reads it: cast to
    its loop's dtype, out's and t's promoted (float32 summed into a float64
    out adds in float64; ints into a float out add in float).  first: the
    reduction has no identity (max, min, fmax, fmin) and no initial=, so
    NumPy starts out from t's first elements along the axes, cast to out's
    dtype, and the loop reads them back (PyArray_CopyInitialReduceValues):
    they go through that cast here too."""
    od = _np.dtype(out.dtype)
    x = _core.cast(t, _np.promote_types(od, _core.np_dtype(t)))
    if not first or _np.can_cast(_core.np_dtype(t), od, "safe") or not axes or \
            builtins.any(t.shape[a] == 0 for a in axes):
        return x
    mask = None
    for a in axes:
        at0 = _C.eq(_C.arange(t.shape[a]), 0).reshape(
            tuple(t.shape[a] if i == a else 1 for i in range(t.ndim)))
        mask = at0 if mask is None else _C.logical_and(mask, at0)
    through = _core.cast(_core.cast(t, od), _core.np_dtype(x))
    return _C.where(mask, through, x)


def _reduce_order(a, where, ndim, axes, keepdims, kind):
    """NumPy's memory order of a reduction's new result over axes of array
    a (ndim dims; where= mask where): None for C order, else (the order of
    a's axes to reduce in, the kept ones first; the shape of the reduced
    tensor in the result's memory order; the transpose giving the result's
    axes back).  NumPy's reduction iterator orders a's axes as its
    elementwise iterator does (_storage.decide_order's "iter") and lays the
    result out in that order, a kept (keepdims) axis of size 1 in its place."""
    nd_out = ndim if keepdims else ndim - len(axes)
    if kind not in (NumpyArg, ndarray) or nd_out < 2:
        return None  # (axis=(): NumPy's copy of a, in the same order)
    from ._ufuncs import memory_order
    operands = (a,) + ((where,) if where is not True else ())
    full = memory_order(kind, operands, ndim) or tuple(range(ndim))
    kept = [d for d in full if d not in axes]
    res = full if keepdims else tuple(sorted(kept).index(d) for d in kept)
    if res == tuple(range(nd_out)):
        return None
    shape = tuple(a.shape)
    inner = [1 if d in axes else shape[d] for d in full] if keepdims else [shape[d] for d in kept]
    return (tuple(kept) + tuple(d for d in full if d in axes), tuple(inner),
            tuple(sorted(range(nd_out), key=res.__getitem__)))


@implements(_np.sum)
@checked(_np.sum)
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True, *,
        _kind=None, _visit=None):
    return _reduce("sum", _np.sum, a, axis, dtype, out, keepdims, initial, where,
                   _kind or _kind_of(a), "sum", _visit)


@implements(_np.prod)
@checked(_np.prod)
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True, *,
         _kind=None, _visit=None):
    return _reduce("prod", _np.prod, a, axis, dtype, out, keepdims, initial, where,
                   _kind or _kind_of(a), "prod", _visit)


@implements(_np.max, _np.amax)
def max(a, axis=None, out=None, keepdims=False, initial=None, where=True, *, _kind=None):
    return _reduce("amax", _np.max, a, axis, None, out, keepdims, initial, where,
                   _kind or _kind_of(a), "max")


@implements(_np.min, _np.amin)
def min(a, axis=None, out=None, keepdims=False, initial=None, where=True, *, _kind=None):
    return _reduce("amin", _np.min, a, axis, None, out, keepdims, initial, where,
                   _kind or _kind_of(a), "min")


amax = max
amin = min
_funcs.__all__ += ["amax", "amin"]


@implements(_np.any)
def any(a, axis=None, out=None, keepdims=False, *, where=True, _kind=None):
    return _reduce("any", _np.any, a, axis, None, out, keepdims, None, where,
                   _kind or _kind_of(a), "any")


@implements(_np.all)
def all(a, axis=None, out=None, keepdims=False, *, where=True, _kind=None):
    return _reduce("all", _np.all, a, axis, None, out, keepdims, None, where,
                   _kind or _kind_of(a), "all")


_NUMPY_EMPTY = ("zero-size array to reduction operation", "attempt to get arg")


def _cat_initial(x, d, initial):
    """x with one slice of initial (cast to x's dtype) before its first
    along axis d."""
    shp = list(x.shape)
    shp[d] = 1
    v = _initial_operand(initial, _core.np_dtype(x))
    if not isinstance(v, _C.Tensor):
        v = _C.full((), v, dtype=x.dtype)
    return _C.cat([v.expand(*shp), x], d)


def _initial_operand(initial, npd):
    """initial (a Python number, already cast to the reduction's dtype) as
    an operand of hop's ops: a complex one, or an int beyond int64 (a uint64
    reduction's), as a 0-d tensor of dtype npd (hop's scalar operands are
    real and fit int64)."""
    if isinstance(initial, complex):
        return _core.complex_scalar(initial, npd)
    if isinstance(initial, int) and initial >= 2**63:
        return _C.asarray(_np.array(initial, dtype=npd))
    return initial


def _empty_checked(fn, kind, *args):
    """fn(*args), hop's max/min/argmax/argmin over an axis of size 0 raising
    NumPy's own ValueError (its text is in the parentheses of hop's
    ShapeError) eagerly on hop.numpy arrays; a trace and a hop.Tensor
    operand keep hop's ShapeError (a ValueError too)."""
    try:
        return fn(*args)
    except _C.ShapeError as e:
        text = str(e)
        at = text.find(" (")
        numpy_text = text[at + 2:-1] if at >= 0 and text.endswith(")") else ""
        if kind is _C.Tensor or _core.tracing() or not numpy_text.startswith(_NUMPY_EMPTY):
            raise
        raise ValueError(numpy_text) from None


def _arg(op, a, axis, out, keepdims, kind):
    t = _t(a, op)
    if t.dtype is _C.bool:
        t = _core.cast(t, _np.uint8)  # NumPy orders False < True
    if axis is not None:
        _axis(axis, t.ndim)
    if t.ndim == 0:
        r = _C.zeros((), dtype=_C.int64)
    elif _core.np_dtype(t).kind == "c":
        flat = t.reshape(-1) if axis is None else t
        ax = 0 if axis is None else _axis(axis, t.ndim)
        if flat.shape[ax] == 0:
            raise ValueError(f"attempt to get {op} of an empty sequence")
        r = _corder.argextreme(op, flat, ax, bool(keepdims) and axis is not None)
    else:
        r = _empty_checked(getattr(_C, op), kind, t, axis, bool(keepdims))
    if keepdims and axis is None:
        r = r.reshape((1,) * t.ndim)
    if out is not None and hasattr(out, "shape"):
        _reduce_out.check_arg(op, r.shape, out)
    return _out(kind, r, scalar=r.ndim == 0 and out is None, out=out, what=op)


@implements(_np.argmax)
def argmax(a, axis=None, out=None, *, keepdims=False, _kind=None):
    return _arg("argmax", a, axis, out, keepdims, _kind or _kind_of(a))


@implements(_np.argmin)
def argmin(a, axis=None, out=None, *, keepdims=False, _kind=None):
    return _arg("argmin", a, axis, out, keepdims, _kind or _kind_of(a))


def _mean_t(t, axes, dtype, keepdims, what, scalar=None):
    """mean over axes, computed as NumPy does: integers in f64, f16 in f32.
    scalar: NumPy's result is a scalar (None: a 0-d one without keepdims;
    _reduced's permuted call passes keepdims False)."""
    rdt = _reduce_dtype(_np.mean, t, dtype, what)
    cdt = _np.dtype(dtype) if dtype is not None else \
        _np.dtype(_np.float32) if rdt == _np.dtype(_np.float16) else rdt
    x = _core.cast(t, cdt)
    if cdt.kind in "iub":
        # an integer dtype asked for: NumPy sums in it, then divides in
        # float64 (the caller's cast to it truncates)
        s = _core.over(_C.sum, x, axes, keepdims)
        n = _size([t.shape[i] for i in axes])
        return _C.div(_core.cast(s, _np.dtype(_np.float64)), n), rdt
    if cdt.kind == "c":
        # NumPy divides the complex sum by the count as a complex number
        # (inf+2j over 1 is inf+nanj; hop's mean divides each part)
        n = _size([t.shape[i] for i in axes])
        s = _core.over(_C.sum, x, axes, keepdims)
        if scalar is None:
            scalar = s.ndim == 0 and not keepdims
        if scalar and cdt == _np.dtype(_np.complex64):
            # a scalar's `ret.dtype.type(ret / rcount)`: complex64 over an
            # intp is NumPy's complex128 scalar math, rounded back
            return _core.cast(_over_count(_core.cast(s, _np.dtype(_np.complex128)), n), cdt), rdt
        return _over_count(s, n), rdt
    r = _core.over(_C.mean, x, axes, keepdims)
    return r, rdt


def _over_count(s, n):
    """A complex sum s over the count n as NumPy's complex division by
    n + 0j (its loop and scalar math alike): rat = 0 / n, scl = 1 / n in
    s's dtype, ((re + im rat) scl, (im - re rat) scl), which is s times the
    complex scl + 0j (hop's complex multiply); a symbolic n: hop's div."""
    if type(n) is not int or n == 0:
        return _C.div(s, n)
    dt = _core.np_dtype(s)
    part = _np.float32 if dt == _np.dtype(_np.complex64) else _np.float64
    scl = part(1) / part(n)
    return _C.mul(s, _core.complex_scalar(complex(float(scl), 0.0), dt))


def _count_axes(axis, ndim):
    """NumPy's _count_reduce_items reads mean's, var's and std's axis (each
    of a tuple's, else the one) with normalize_axis_index before the sum
    reads it: its errors come first (a float's own text, a list refused as
    an int), and a 0-d array has no axis 0 (its reductions do)."""
    if axis is not None:
        for ax in (axis if isinstance(axis, tuple) else (axis,)):
            _np.core.multiarray.normalize_axis_index(_no_numpy_bool(ax, "an integer is required"),
                                                     ndim)


def _divided(r, n, kind=ndarray):
    """NumPy's `true_divide(r, n, out=r, casting='unsafe')` of mean and var
    (`r.dtype.type(r / n)` of a scalar): the quotient in r's dtype (of
    kind: ndarray, or NumpyArg for an array NumPy's layout rules follow)."""
    from ._ufuncs import call_ufunc
    if r.ndim:  # (in place: the quotient keeps r's layout, as NumPy's out=r)
        return call_ufunc("true_divide", (r, n), {"out": (r,), "casting": "unsafe"}, kind)
    q = call_ufunc("true_divide", (r, n), {}, kind)
    return wrap(kind, _core.cast(q._t, r.dtype), scalar=r.ndim == 0)


def _mean_dtype(a, axis, dtype, keepdims):
    """mean with dtype=, as NumPy computes it: the sum in dtype (an integer
    one wraps), then divided and cast back to dtype."""
    t = _t(a, "mean")
    n = _size([t.shape[i] for i in _axes(axis, t.ndim)])
    return _divided(sum(wrap(ndarray, t), axis, dtype, keepdims=keepdims, _kind=ndarray), n)


def _var_dtype(a, axis, dtype, ddof, keepdims, root, w=True, into=None, kind=ndarray,
               scalar=None):
    """var (std: root) with dtype= or where= (w: the where= mask as given,
    broadcastable to a's shape), NumPy's _var step by step: the mean from
    the sum in dtype (float64 for an integer array without one) over the
    count (where=: of w's elements in each slice), the deviations in the
    type of arr - mean (an integer one wraps), their squares (|d|**2 of a
    complex one), summed in dtype, divided by max(count - ddof, 0) and cast
    back; std's square root into that array (NumPy's same_kind error for an
    integer one) or its scalar's type.  With where= each step's array is of
    kind (NumpyArg under hop.compile), so that its sums add in NumPy's
    iterator order of the array and the mask as given (a broadcast mask's
    axes of stride 0 order nothing) and the result has NumPy's layout; it
    is returned as an array.  into: out=, which the last sum is cast into
    and which is divided (casting='unsafe') and square-rooted in place, in
    its own dtype, as NumPy does; returned.  scalar: whether NumPy's result
    is 0-d (its scalar's type takes the root, no error), when the result
    here is not the result's shape (ordered's permuted reduction, without
    keepdims); by default when ret is 0-d."""
    from ._ufuncs import call_ufunc
    what = "std" if root else "var"
    ik = kind if w is not True and kind in (ndarray, NumpyArg) else ndarray
    arr = a if isinstance(a, ndarray) and ik is not ndarray else wrap(ik, _t(a, what))
    t = arr._t
    if dtype is None and arr.dtype.kind in "biu":
        dtype = _np.float64
    if w is True:
        n = n_kd = _size([t.shape[i] for i in _axes(axis, t.ndim)])
        mask = {}
    else:
        # NumPy's _count_reduce_items: the sum of where over the axes
        cnt = wrap(ndarray, _mask_of(w, t, f"{what}: where"))
        n = sum(cnt, axis, _np.intp, keepdims=keepdims, _kind=ndarray)
        # (a 0-d count divides the mean as NumPy's scalar, in the mean's
        # dtype: a complex64 one divides in complex64, not complex128)
        n_kd = n if n.ndim == 0 else sum(cnt, axis, _np.intp, keepdims=True, _kind=ndarray)
        mask = {"where": w}
    m = _divided(sum(arr, axis, dtype, keepdims=True, _kind=ik, **mask), n_kd, ik)
    d = call_ufunc("subtract", (arr, m), {}, ik)
    if d.dtype.kind == "c":
        # (NumPy squares the parts in place and adds them into x.real, a
        # view in x's layout: the squares are summed in x's memory order)
        sq = [call_ufunc("multiply", (p, p), {}, ik) for p in (d.real, d.imag)]
        d2 = call_ufunc("add", tuple(sq), {}, ik)
    else:
        d2 = call_ufunc("multiply", (d, d), {}, ik)
    ret = sum(d2, axis, dtype, into, keepdims=keepdims, _kind=ik if into is None else kind,
              **mask)
    denom = n - ddof
    if isinstance(denom, ndarray):
        denom = call_ufunc("maximum", (denom, 0), {}, ndarray)
    elif not isinstance(denom, _C.SymInt):
        denom = builtins.max(denom, 0)
    if into is not None:
        call_ufunc("true_divide", (into, denom), {"out": (into,), "casting": "unsafe"}, kind)
        if root:
            call_ufunc("sqrt", (into,), {"out": (into,)}, kind)
        return into
    ret = _divided(ret, denom, ik)
    if root and (ret.ndim == 0 if scalar is None else scalar):
        ret = wrap(ik, _core.cast(call_ufunc("sqrt", (ret,), {}, ik)._t, ret.dtype), scalar=True)
    elif root:  # (a 0-d one here: an array, ordered's reduction of NumPy's keepdims one)
        ret = wrap(ik, _t(ret, what)) if ret.ndim == 0 else ret
        ret = call_ufunc("sqrt", (ret,), {"out": (ret,)}, ik)
    return ret if w is not True else ret._t


@implements(_np.mean)
@checked(_np.mean, mean_says, count_may_say)
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True, _kind=None):
    kind = _kind or _kind_of(a)
    t = _t(a, "mean")
    if where is True:  # (NumPy counts where='s elements by a sum instead)
        _count_axes(axis, t.ndim)
    if out is not None and hasattr(out, "dtype"):
        return _mean_into(t, axis, dtype, out, keepdims, kind, where)
    if dtype is not None and where is True:
        return ordered(a, axis, keepdims, kind, out, _cast_first(a, kind, t, axis, keepdims, dtype,
                                                                 _mean_dtype), "mean")
    if where is not True:
        return _mean_where(a, t, axis, dtype, keepdims, where, kind)
    axes = _axes(axis, t.ndim)
    scalar = not keepdims and len(axes) == t.ndim
    (r, rdt), order = _reduced(a, t, axes, keepdims, kind, out,
                               lambda x, axes, kd: _mean_t(x, axes, dtype, kd, "mean", scalar),
                               what="mean")
    if _core.np_dtype(r) != rdt and out is None and not scalar and kind in (ndarray, NumpyArg):
        # a float16 array's: NumPy's float32 quotient (in the reduction's
        # layout) cast by np.float16(ret), a copy in its K order (C for one
        # C-contiguous, size-1 axes aside; F for one F-contiguous)
        return _finish(kind, r, order, None, "mean").astype(rdt)
    return _finish(kind, _core.cast(r, rdt), order, out, "mean")


def _mean_into(t, axis, dtype, out, keepdims, kind, where):
    """mean(..., out=out) as NumPy's _mean runs it: the sum in dtype
    (float64 for an integer array, float32 for float16) cast into out, then
    true_divide(out, count, out=out, casting='unsafe'), in out's dtype."""
    from ._ufuncs import call_ufunc
    axes = _axes(axis, t.ndim) if t.ndim else ()
    _check_out("mean", t, axes, keepdims, out, where)
    kind_in = _core.np_dtype(t).kind
    if dtype is None and kind_in in "biu":
        dtype = _np.float64
    elif dtype is None and _core.np_dtype(t) == _np.dtype(_np.float16):
        dtype = _np.float32
    if where is True:
        mask, n = {}, _size([t.shape[i] for i in axes])
    else:  # (NumPy's _count_reduce_items: the sum of where over the axes)
        w = wrap(ndarray, _mask_of(where, t, "mean: where"))
        mask, n = {"where": w}, sum(w, axes, _np.intp, keepdims=keepdims, _kind=ndarray)
    sum(wrap(ndarray, t), axes, dtype, out, keepdims, _kind=kind, **mask)
    call_ufunc("true_divide", (out, n), {"out": (out,), "casting": "unsafe"}, kind)
    return out


def _mean_where(a, t, axis, dtype, keepdims, where, kind):
    """mean of array a (tensor t) with where=, as NumPy's _mean computes it:
    the masked sum of a in dtype (float64 for integers, float32 for
    float16; sum's masked reduction, in NumPy's order), true_divided by the
    count of where's elements in each slice, cast back to float16 for a
    float16 result."""
    rdt = _reduce_dtype(_np.mean, t, dtype, "mean")
    cdt = _np.dtype(_np.float32) if rdt == _np.dtype(_np.float16) else rdt
    axes = _axes(axis, t.ndim) if t.ndim else ()
    # (NumPy's _count_reduce_items: the sum of where over the axes)
    n = sum(wrap(ndarray, _mask_of(where, t, "mean: where")), axes, _np.intp,
            keepdims=keepdims, _kind=ndarray)
    s = sum(a, axis, cdt, keepdims=keepdims, where=where, _kind=kind)
    if s.ndim == 0:  # (NumPy's scalar: ret.dtype.type(ret / rcount))
        r = _divided(wrap(ndarray, _t(s, "mean")), n)
        return wrap(kind, _core.cast(r._t, rdt), scalar=True)
    from ._ufuncs import call_ufunc
    call_ufunc("true_divide", (s, n), {"out": (s,), "casting": "unsafe"}, kind)
    return s.astype(rdt) if cdt != rdt else s


def _reduced(a, t, axes, keepdims, kind, out, compute, where=True, what=None):
    """compute(x, axes, keepdims) of tensor t (array a's) reduced over axes,
    in NumPy's memory order of the result (_reduce_order, of a and a where=
    mask): (its value, the order for _finish).  With a mask (not True),
    compute(x, axes, keepdims, w) gets the mask as a tensor of x's shape.
    what: the function, whose out= is checked first (_check_out)."""
    _check_out(what, t, axes, keepdims, out, where)
    order = _reduce_order(a, where, t.ndim, axes, keepdims, kind) if out is None else None
    extra = ()
    if where is not True:
        extra = (_mask_of(where, t, "where"),)
    if order is None:
        return compute(t, axes, keepdims, *extra), None
    last = tuple(range(t.ndim - len(axes), t.ndim))
    return compute(t.permute(*order[0]), last, False,
                   *(e.permute(*order[0]) for e in extra)), order


def ordered(a, axis, keepdims, kind, out, compute, what, where=True):
    """A reduction of array a over axis that NumPy computes with its
    reductions or a copy of a in a's order (the nan functions, median,
    mean with dtype= or where=, ...): compute(x, axes, keepdims[, w]) of
    a's tensor (_reduced), as NumPy's array in NumPy's memory order of the
    result, or in out."""
    t = _t(a, what)
    # (a 0-d array's axis 0 or -1, which NumPy's reduce takes, is no axis)
    axes = _axes(axis, t.ndim) if t.ndim else (_axes(axis, 0), ())[1]
    r, order = _reduced(a, t, axes, keepdims, kind, out, compute, where, what)
    return _finish(kind, r, order, out, what)


def _finish(kind, r, order, out, what):
    """A reduction's result r (_reduced's) as NumPy's array, or in out.
    With an order (_reduce_order), r's elements in C order are NumPy's in
    memory: NumPy's iterator gives each axis of its new result, a kept
    size-1 axis too, the product of the sizes inside it as its stride.  A
    view r (a permutation of the compute's result back into place) may hold
    its size-1 axes at other strides, which a reshape keeps (a size-1 dim
    takes the stride of the run it joins): r is read as a flat vector
    first where NumPy's shape has a size-1 axis, so the reshape gives
    those strides."""
    if order is not None:
        flat = r.reshape(-1) if builtins.any(type(n) is int and n == 1 for n in order[1]) \
            else r
        return _funcs.transpose(wrap(kind, flat.reshape(order[1])), order[2], _kind=kind)
    return _out(kind, r, scalar=r.ndim == 0 and out is None, out=out, what=what)


def _var_t(t, axis, dtype, ddof, keepdims, what, mem=None):
    """var of t over axis as NumPy's _var computes it; mem: t's axes
    outermost in memory first (None: C order), the order NumPy lays out
    the deviations in, and so the order their sum adds them in."""
    axes = _axes(axis, t.ndim)
    if mem is not None and list(mem) != list(range(t.ndim)):
        r, rdt = _var_t(t.permute(*mem), tuple(mem.index(d) for d in axes), dtype, ddof, True,
                        what)
        r = r.permute(*[mem.index(d) for d in range(t.ndim)])
        if not keepdims:
            r = r.reshape(tuple(t.shape[d] for d in range(t.ndim) if d not in axes))
        return r, rdt
    rdt = _reduce_dtype(_np.var, t, dtype, what)
    if dtype is None and _core.np_dtype(t) == _np.dtype(_np.float16):
        return _var_half(t, axes, ddof, keepdims), rdt
    m, _ = _mean_t(t, axes, dtype, True, what)
    x = _core.cast(t, _core.np_dtype(m))
    d = x - m
    if _core.np_dtype(d).kind == "c":  # |d|**2, a real number as NumPy's
        re, im = _C._op("real", d), _C._op("imag", d)
        d2 = re * re + im * im
    else:
        d2 = d * d
    s = _core.over(_C.sum, d2, axes, keepdims)
    n = _size([t.shape[i] for i in axes])
    denom = n - ddof
    if not isinstance(denom, _C.SymInt):
        denom = builtins.max(denom, 0)
    return _C.div(s, denom), rdt


def _var_half(t, axes, ddof, keepdims):
    """var of a float16 array as NumPy's _var computes it without dtype=:
    every step in float16 (the sum, its division by the count, the
    deviations and their squares, which overflow to inf past 256), where
    mean alone computes in float32."""
    n = _size([t.shape[i] for i in axes])
    # (each division NumPy's true_divide by the count, cast back: a count
    # beyond float16's range divides in float64, as NumPy's value-based
    # casting does, where hop's float16 division made it inf)
    m = _divided(wrap(ndarray, _core.over(_C.sum, t, axes, True)), n)._t
    d = t - m
    s = _core.over(_C.sum, d * d, axes, keepdims)
    denom = n - ddof
    if not isinstance(denom, _C.SymInt):
        denom = builtins.max(denom, 0)
    return _divided(wrap(ndarray, s), denom)._t


def _var_out(a, axis, dtype, out, ddof, keepdims, kind, what, root, where=True):
    """var, or std (root: its square root), as NumPy computes each."""
    if out is not None and hasattr(out, "dtype"):
        t = _t(a, what)
        if where is True:
            _count_axes(axis, t.ndim)
        axes = _axes(axis, t.ndim) if t.ndim else ()
        _check_out(what, t, axes, keepdims, out, where)
        return _var_dtype(a if where is not True else t, axes, dtype, ddof, keepdims, root,
                          where, into=out, kind=kind)
    if where is not True:  # (NumPy counts where='s elements by a sum)
        r = _var_dtype(a, axis, dtype, ddof, keepdims, root, where, kind=kind)
        return r._t if kind is _C.Tensor else r
    _count_axes(axis, _t(a, what).ndim)
    # (a float16 array without dtype= takes the path below, _var_t's
    # _var_half: its deviations in the array's memory order compiled too,
    # where _var_dtype's arrays are in C order under hop.compile)
    if dtype is not None:
        # (NumPy's result is a scalar when it is 0-d: a keepdims=True one
        # is an array even where ordered reduces without keepdims)
        nd = _t(a, what).ndim
        scalar = nd == 0 or not keepdims and (axis is None or len(_axes(axis, nd)) == nd)
        return ordered(a, axis, keepdims, kind, out, lambda x, axes, kd: _var_dtype(
            x, axes, dtype, ddof, kd, root, scalar=scalar), what)
    t = _t(a, what)
    from ._ufuncs import memory_order
    mem = memory_order(kind, (a,), t.ndim)
    axes = _axes(axis, t.ndim)
    res = _reduce_order(a, True, t.ndim, axes, keepdims, kind) if out is None else None

    def compute(x, axes, kd):
        # x's axes outermost in memory first: t's, or _reduced's permutation
        # of them (res)
        xperm = range(t.ndim) if res is None else res[0]
        xmem = None if mem is None else sorted(range(t.ndim), key=lambda i: mem.index(xperm[i]))
        return _var_t(x, axes, dtype, ddof, kd, what, xmem)
    (r, rdt), order = _reduced(a, t, axes, keepdims, kind, out, compute, what=what)
    return _finish(kind, _core.cast(_C.sqrt(r) if root else r, rdt), order, out, what)


@implements(_np.var)
@checked(_np.var, var_says, count_may_say)
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        _kind=None):
    return _var_out(a, axis, dtype, out, ddof, keepdims, _kind or _kind_of(a), "var", False,
                    where)


@implements(_np.std)
@checked(_np.std, var_says, count_may_say)
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        _kind=None):
    return _var_out(a, axis, dtype, out, ddof, keepdims, _kind or _kind_of(a), "std", True,
                    where)


@implements(_np.ptp)
def ptp(a, axis=None, out=None, keepdims=False, *, _kind=None):
    # NumPy's subtract(maximum.reduce(a, out=out), min, out): its
    # reductions' results (in their order; the max into out first)
    # subtracted by the ufunc, whose new array is in their K order, and
    # whose TypeError a bool array (or a float one into an integer out,
    # after the max is in it) gets (every kind of array alike)
    from ._ufuncs import call_ufunc
    kind = _kind or _kind_of(a)
    hi = max(a, axis, out, keepdims=keepdims, _kind=kind)
    return call_ufunc("subtract", (hi, min(a, axis, keepdims=keepdims, _kind=kind)),
                      {} if out is None else {"out": out}, kind)


@implements(_np.nansum)
@checked(_np.nansum)
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True, *,
           _kind=None):
    kind = _kind or _kind_of(a)
    if _core.np_dtype(_t(a, "nansum")).kind not in "fc":
        return sum(a, axis, dtype, out, keepdims, initial, where, _kind=kind)
    from ._stats import _replace_nan  # (a complex NaN: either part)
    # NumPy's sum of a copy of a (K order): in a's order
    mem = x_memory_order(a, kind, _t(a, "nansum"), axis, keepdims, where, out)
    vis = masked_visit(a, kind, _t(a, "nansum"), axis, keepdims, where, out)
    return ordered(a, axis, keepdims, kind, out, lambda x, axes, kd, w=True: _t(sum(
        _replace_nan(x, 0, mem)[0], axes, dtype, None, kd, initial, w, _kind=ndarray,
        _visit=vis)), "nansum", where)


def _scan(op, np_fn, a, axis, dtype, out, kind, nan=None, scan=None):
    """cumsum/cumprod of a (nancumsum/nancumprod: NaN read as nan); scan:
    another scan of a tensor along an axis, in place of hop's op."""
    t = _t(a, op)
    scan = scan or getattr(_C, op)
    if nan is not None and _core.np_dtype(t).kind in "fc":
        from ._stats import _replace_nan  # (a complex NaN: either part)
        t = _replace_nan(t, nan)[0]
    if axis is None or t.ndim == 0:  # NumPy scans a 0-d array as 1-d
        t = t.reshape(-1)
        axis = 0 if axis is None else axis
    ax = _axis(axis, t.ndim)
    rdt = _reduce_dtype(np_fn, t, dtype, op)
    if out is not None and dtype is None and hasattr(out, "dtype"):
        # (NumPy's accumulate into out: the loop of out's dtype and a's
        # promoted, no upcast of small ints; cumsum of uint8 into a bool
        # out wraps at 256)
        rdt = _np.promote_types(_np.dtype(out.dtype), _core.np_dtype(t))
    if out is not None and hasattr(out, "shape") and _reduce_out.check_accumulate(
            tuple(t.shape), out.shape, len({rdt, _np.dtype(out.dtype), _core.np_dtype(t)}) > 1):
        return out  # (NumPy writes nothing into an empty out)
    x = _core.cast(t, rdt) if dtype is not None or _core.np_dtype(t).kind == "f" or \
        rdt.kind in "fc" else t
    from ._ufuncs import memory_order
    perm = memory_order(kind, (a,), t.ndim) if out is None else None
    if perm is not None:
        # NumPy's accumulate lays its result out in its iterator's (K) order
        # of the argument's axes: scanned in that order, NumPy's view
        r = _core.cast(scan(x.permute(*perm), perm.index(ax)), rdt)
        inverse = tuple(sorted(range(t.ndim), key=perm.__getitem__))
        return _funcs.transpose(wrap(kind, r), inverse, _kind=kind)
    r = _core.cast(scan(x, ax), rdt)
    return _out(kind, r, out=out, what=op)


@implements(_np.cumsum)
@checked(_np.cumsum)
def cumsum(a, axis=None, dtype=None, out=None, *, _kind=None):
    return _scan("cumsum", _np.cumsum, a, axis, dtype, out, _kind or _kind_of(a))


@implements(_np.cumprod)
@checked(_np.cumprod)
def cumprod(a, axis=None, dtype=None, out=None, *, _kind=None):
    return _scan("cumprod", _np.cumprod, a, axis, dtype, out, _kind or _kind_of(a))


# ------------------------------------------------ ufunc methods' own (_ufunc_methods)

# NumPy's maximum.accumulate and minimum.accumulate, as _reduce_dtype's probe
_EXTREME_ACCUMULATE = {n: (lambda a, _uf=getattr(_np, n), **kw: _uf.accumulate(a, **kw))
                       for n in ("maximum", "minimum")}


def _moved(x, src, dst):
    """Tensor x with its axis src moved to dst (NumPy's moveaxis)."""
    src %= x.ndim
    order = [d for d in range(x.ndim) if d != src]
    order.insert(dst % x.ndim if x.ndim else 0, src)
    return x.permute(*order)


def extreme_accumulate(name, ufunc, a, t, axis, dtype, kind):
    """np.maximum.accumulate / np.minimum.accumulate of a (tensor t, of a
    real dtype) along axis: an associative scan of the ufunc's loop (NumPy's
    loop propagates the first NaN, and of equal values keeps the second,
    the first in float16: an associative choice either way)."""
    from .._hops import associative_scan
    from ._ufuncs import loop

    def scan(x, ax):
        impl = loop(name, [_core.Opnd(t=x, dtype=_core.np_dtype(x))] * 2, _core.np_dtype(x))[0]
        return associative_scan(impl, x, dim=ax)
    return _scan(f"{name}.accumulate", _EXTREME_ACCUMULATE[name], a, axis, dtype, None, kind,
                 scan=scan)


def subtract_reduce(ufunc, a, axis, kw, kind):
    """np.subtract.reduce(a, axis, dtype=, keepdims=) of an integer, float32
    or float64 array along at most one axis: NumPy's loop subtracts in
    order, x0 - x1 - x2 ..., which is x0 + (-x1) + (-x2) ... exactly (a NaN
    x_k kept as it is: the NaN x0 - x_k gives), a cumsum's last element.
    NumPy's checks (several axes: not reorderable; an empty axis: no
    identity; bools) on a stand-in.  None for where=, initial=, out= and
    other dtypes (the caller's fallback)."""
    from ._ufunc_methods import _numpy_checks, _concrete_shape
    t = _t(a, "numpy.subtract.reduce")
    if not _concrete_shape(t):
        return None
    extra = {k: kw[k] for k in ("dtype", "keepdims") if k in kw}
    want = _np.asarray(_numpy_checks(ufunc, "reduce", t, axis=axis, **extra))
    if builtins.any(k not in ("dtype", "keepdims") for k in kw) or \
            want.dtype.kind not in "iuf" or want.dtype == _np.float16:
        return None
    keepdims = bool(kw.get("keepdims", False))
    axes = tuple(range(t.ndim)) if axis is None else \
        tuple(axis) if isinstance(axis, (tuple, list)) else (axis,) if t.ndim else ()
    x = _core.cast(t, want.dtype)
    if axes:
        ax = _axis(axes[0], t.ndim)
        x = _moved(x, ax, 0)
        head, tail = x[0:1], x[1:]
        neg = _C.neg(tail)
        if want.dtype.kind == "f":
            neg = _C.where(_C.ne(tail, tail), tail, neg)
        x = _core.cast(_C.cumsum(_C.cat([head, neg], 0), 0)[-1], want.dtype)
        if keepdims:
            x = x.unsqueeze(ax)
    return wrap(kind, x.clone(), scalar=x.ndim == 0)


def _add_segment(first, rest, dt):
    """NumPy's add.reduceat of one segment: its first element plus the
    pairwise sum of the rest (the binary loop's reduce), which is hop's sum
    of the rest (0 + that sum) but where all the rest are -0.0 (their sum
    -0.0, 0 + it 0.0)."""
    s = _t(sum(wrap(ndarray, rest.clone()), axis=-1, dtype=dt, _kind=ndarray), "add.reduceat")
    r = first + s
    if dt.kind in "fc":
        one = _C.ones((), dtype=rest.dtype)
        negzero = _C.logical_and(_C.eq(rest, 0), _C.lt(_C.copysign(one, rest), 0)) \
            if dt.kind == "f" else None
        if negzero is not None:
            r = _C.where(_C.all(negzero, -1), first, r)
    return _core.cast(r, dt)


def reduceat(ufunc, name, a, t, indices, axis, dtype, kind):
    """np.<name>.reduceat(a, indices, axis, dtype) of add, multiply,
    maximum or minimum (concrete indices and sizes): each segment
    x[i:j] (j the next index, or the end) reduced along the axis as NumPy's
    inner loop reduces it (a contiguous line: add's pairwise sum, multiply's
    product in order), x[i] where j <= i.  NumPy's checks (indices out of
    bounds, the axis, dtype=) and result dtype on a stand-in."""
    from ._ufunc_methods import _numpy_checks
    want = _np.asarray(_numpy_checks(ufunc, "reduceat", t, indices, axis=axis, dtype=dtype))
    idx = [int(i) for i in _np.asarray(indices).reshape(-1)]
    if want.dtype.kind not in "biufc" or not idx:
        return None
    ax = _axis(axis, t.ndim)
    x = _moved(_core.cast(t, want.dtype), ax, -1)
    n = x.shape[-1]
    fn = {"add": sum, "multiply": prod, "maximum": max, "minimum": min}[name]
    kw = {"dtype": want.dtype} if name in ("add", "multiply") else {}
    parts = []
    for k, i in enumerate(idx):
        j = idx[k + 1] if k + 1 < len(idx) else n
        if i + 1 < j and name == "add":
            parts.append(_add_segment(x[..., i], x[..., i + 1:j], kw["dtype"]))
        elif i < j:
            seg = wrap(ndarray, x[..., i:j].clone())
            parts.append(_core.cast(_t(fn(seg, axis=-1, _kind=ndarray, **kw), name),
                                    want.dtype))
        else:
            parts.append(x[..., i])
    r = _moved(_C.stack(parts, -1), -1, ax)
    return wrap(kind, r.clone(), scalar=False)
