"""NumPy's order of complex numbers, composed of hop ops on their parts.

NumPy orders complex values lexicographically, the real part first, with
its own rules for a NaN in either part: the comparison macros CLT/CLE/CGT/
CGE of its ufunc loops (a real-part win counts only when neither imaginary
part is NaN), maximum/minimum keeping a NaN-holding first operand, fmax/fmin
a NaN-holding second one's other operand, argmax/argmin giving the first
element with a NaN, and sort placing R+Rj, R+nanj, nan+Rj, nan+nanj in that
order (npysort's CDOUBLE_LT).  hop's kernels order real numbers only, so
each of these is written here over the real, imag and complex ops and the
real kernels: it works eagerly, traced and compiled alike.  The callers
(_ufuncs, _funcs) send only complex operands here.
"""

import math

from .. import _C

__all__ = ["UFUNCS", "SCALAR_ORDER", "argextreme", "extreme", "sort_any", "argsort_any",
           "searchsorted_any", "either_nan"]


def _parts(z):
    return _C._op("real", z), _C._op("imag", z)


def _nan(x):
    return _C.ne(x, x)


def either_nan(z):
    re, im = _parts(z)
    return _C.logical_or(_nan(re), _nan(im))


def _order(real_op, tie_op):
    """NumPy's complex comparison: a strict real_op win when neither
    imaginary part is NaN, or equal real parts and tie_op of the imaginary
    ones."""
    def cmp(a, b):
        ar, ai = _parts(a)
        br, bi = _parts(b)
        both = _C.logical_not(_C.logical_or(_nan(ai), _nan(bi)))
        return _C.logical_or(_C.logical_and(real_op(ar, br), both),
                             _C.logical_and(_C.eq(ar, br), tie_op(ai, bi)))
    return cmp


def _plain_order(real_op, tie_op):
    """NumPy 1.24's scalar math on two complex scalars (scalarmath.c's
    ctype_less and friends): the real parts decide, or on a tie the
    imaginary ones, with no NaN rule (np.complex64(nanj) < True is True,
    np.array([nanj]) < True is [False])."""
    def cmp(a, b):
        ar, ai = _parts(a)
        br, bi = _parts(b)
        return _C.logical_or(real_op(ar, br), _C.logical_and(_C.eq(ar, br), tie_op(ai, bi)))
    return cmp


# scalar-math comparison name -> its implementation on two complex 0-d tensors
SCALAR_ORDER = {"less": _plain_order(_C.lt, _C.lt), "less_equal": _plain_order(_C.lt, _C.le),
                "greater": _plain_order(_C.gt, _C.gt),
                "greater_equal": _plain_order(_C.gt, _C.ge)}

less = _order(_C.lt, _C.lt)
less_equal = _order(_C.lt, _C.le)
greater = _order(_C.gt, _C.gt)
greater_equal = _order(_C.gt, _C.ge)


def _pick(nan_from, keep_a):
    """The elementwise choice of a where a NaN in operand nan_from (0: a,
    NaN-propagating maximum/minimum; 1: b, NaN-ignoring fmax/fmin) or
    keep_a(a, b) holds, else b."""
    def pick(a, b):
        keep = _C.logical_or(either_nan((a, b)[nan_from]), keep_a(a, b))
        return _C.where(keep, a, b)
    return pick


maximum = _pick(0, greater_equal)
minimum = _pick(0, less_equal)
fmax = _pick(1, greater_equal)
fmin = _pick(1, less_equal)


def clip(x, lo, hi):
    return minimum(maximum(x, lo), hi)


# ufunc name -> its implementation on complex tensors (the loops' dtype)
UFUNCS = {"less": less, "less_equal": less_equal, "greater": greater,
          "greater_equal": greater_equal, "maximum": maximum, "minimum": minimum,
          "fmax": fmax, "fmin": fmin, "clip": clip}


def _take(t, idx, axis):
    from ._index_routines import _take_along
    return _take_along(t, idx, axis)


def argextreme(op, t, axis, keepdims):
    """NumPy's argmax (op "argmax") or argmin of complex t along axis (an
    int in range, t.ndim >= 1): the first element holding a NaN if there
    is one, else the first lexicographic extreme."""
    big = op == "argmax"
    re, im = _parts(t)
    nan = _C.logical_or(_nan(re), _nan(im))
    r_best = (_C.amax if big else _C.amin)(re, [axis], True)
    cand = _C.eq(re, r_best)
    fill = _C.full((), float("-inf") if big else float("inf"), dtype=im.dtype)
    i_best = (_C.amax if big else _C.amin)(_C.where(cand, im, fill), [axis], True)
    hit = _C.logical_and(cand, _C.eq(im, i_best))
    first_hit = _C.argmax(hit.to(_C.uint8), axis, keepdims)
    first_nan = _C.argmax(nan.to(_C.uint8), axis, keepdims)
    return _C.where(_C.any(nan, [axis], keepdims), first_nan, first_hit)


def extreme(op, t, axes, keepdims):
    """NumPy's max (op "amax") or min of complex t over axes (a tuple of
    ints in range, not empty): the element argmax/argmin picks, so a NaN
    propagates as maximum.reduce propagates it."""
    nd = t.ndim
    rest = [d for d in range(nd) if d not in axes]
    x = t.permute(rest + list(axes)) if list(axes) != list(range(nd - len(axes), nd)) else t
    kept = [t.shape[d] for d in rest]
    # (the reduced size itself where it is known: -1 cannot be inferred
    # when a kept size is 0, and NumPy's result is then empty)
    red = [t.shape[d] for d in axes]
    x = x.reshape(tuple(kept) + (math.prod(red) if all(isinstance(d, int) for d in red) else -1,))
    idx = argextreme("argmax" if op == "amax" else "argmin", x, len(kept), True)
    r = _take(x, idx, len(kept)).reshape(tuple(kept))
    if keepdims:
        r = r.reshape(tuple(1 if d in axes else t.shape[d] for d in range(nd)))
    return r


# the sort ops' kind argument (include/hop/ops.h, hop_sort_kind)
STABLE, QUICK, HEAP = 0, 1, 2


def sort_any(t, axis, kind=STABLE):
    """hop's sort op along axis (an int in range, t.ndim >= 1), ordering
    ties as NumPy's kind does (STABLE, QUICK or HEAP) and complex numbers
    in NumPy's order (its CDOUBLE_LT, runtime/scan_sort.c): what every sort
    in hop.numpy calls."""
    return _C._op("sort", t, axis, False, kind)


def argsort_any(t, axis, kind=STABLE):
    """hop's argsort op of that kind (sort_any)."""
    return _C._op("argsort", t, axis, False, kind)


def searchsorted_any(s, v, right):
    """hop's searchsorted op: NumPy's binary search of a 1-d s in its sort
    order (complex ones too), NumPy's answer for an unsorted s as well."""
    return _C._op("searchsorted", s, v, right)
