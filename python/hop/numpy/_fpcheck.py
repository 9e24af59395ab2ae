"""NumPy 1.24's warnings and errors of hop.numpy's reductions (the first
rule; docs/ARCHITECTURE.md, "Floating-point warnings").

A NumPy reduction warns twice over: its ufuncs' loops warn for the IEEE
flags they raised ("overflow encountered in reduce" after a float sum that
became inf, "invalid value encountered in reduce" after inf + -inf), under
the caller's numpy.errstate, raising FloatingPointError under 'raise'; and
its Python code warns of the arguments ("Mean of empty slice.", "Degrees of
freedom <= 0 for slice") whatever the state.  checked(np_fn) wraps a
reduction's implementation so that an eager call on concrete hop.numpy
arrays does both as NumPy:

- under a state that raises, calls, prints or logs, NumPy computes it;
- when NumPy's Python code warns for these arguments (says(), a function of
  the arguments), NumPy computes it;
- else hop computes it with the flags cleared first; a flag NumPy's state
  warns for has NumPy compute it again (the call wrote nothing NumPy's run
  reads: an out= that overlaps the input is NumPy's from the start).  A
  spurious flag costs that run, never a warning.

Only the outermost checked call checks: the reductions and ufuncs it makes
on the way (var's mean, nanmean's sums) leave the flags to it (outer();
_ufuncs._fp_checked; the C fast path is off meanwhile).

Traced (hop.compile), the plan's flags re-run the call through NumPy
already; what says() reads of the shapes is known at trace time, so there a
warning NumPy's Python code gives is a graph break: the call runs in
Python, by NumPy, on every call, as eager.  A hop.Tensor's reduction is not
NumPy's and warns of nothing.
"""

import functools
import inspect
import sys
import threading

import numpy as _np

from .. import _C
from . import _core
from ._ndarray import SCALAR_CHECKED, ndarray

_STATE = threading.local()


def outer():
    """Whether a checked eager reduction is running on this thread: its
    inner reductions and ufuncs leave the floating-point flags to it."""
    return getattr(_STATE, "depth", 0) > 0


def _numpy_kind(kind):
    return isinstance(kind, type) and issubclass(kind, ndarray)


def checked(np_fn, says=None, post=None, nan=False):
    """Decorator: the reduction fn (NumPy's np_fn) warns and raises as
    NumPy's (above).  says(*args, **kwargs): the text of the RuntimeWarning
    NumPy's Python code gives for these arguments, or None.  post(*args,
    **kwargs): whether NumPy's Python code may warn for the data (an
    all-NaN slice, a where= mask's empty slice), which then shows in hop's
    eager result as a value that is not finite (nonfinite): NumPy computes
    that call again; traced, a slice of no more than ddof counted elements
    (nan: NaNs not counted; a where= mask's only) hands the call to eager
    at run time (_data_checked)."""
    def deco(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args, _kind=None, **kwargs):
            if outer():
                return fn(*args, _kind=_kind, **kwargs)
            a = args[0] if args else kwargs.get("a")
            kind = _kind or (type(a) if isinstance(a, ndarray) else ndarray)
            if isinstance(a, _C.Tensor) or not _numpy_kind(kind):
                return fn(*args, _kind=_kind, **kwargs)  # (hop.Tensor's own)
            uf = sys.modules["hop.numpy._ufuncs"]  # (imports _fpcheck: loaded by now)
            _traced_any, by_numpy = uf._traced_any, uf.by_numpy
            traced = _core.tracing() or _core._recording() or _traced_any(args) or \
                _traced_any(kwargs.values())
            said = says(*args, **kwargs) if says is not None else None
            if traced:
                if said is not None:
                    _core.numpy_warns(np_fn.__name__, said, RuntimeWarning, traced=True)
                r = fn(*args, _kind=_kind, **kwargs)
                if post is None or not post(*args, **kwargs):
                    return r
                return _data_checked(r, sig, args, kwargs, nan)
            if said is not None or _core.fp_errors_reported() or _out_overlaps(sig, args, kwargs):
                return by_numpy(np_fn, np_fn.__name__, args, kwargs, kind,
                                _out_of(sig, args, kwargs))
            _STATE.depth = 1
            _C._np_eager_off(1)
            try:
                _C._fp_clear()
                r = fn(*args, _kind=_kind, **kwargs)
                warned = _C._np_fp_warned()
            finally:
                _STATE.depth = 0
                _C._np_eager_off(-1)
            if warned or (post is not None and post(*args, **kwargs) and
                          (_nonfinite(r) or not _inexact(r))):
                return by_numpy(np_fn, np_fn.__name__, args, kwargs, kind,
                                _out_of(sig, args, kwargs))
            return r
        return call
    return deco


# id of a checked function's signature (kept by its wrapper for good) -> the
# position of its out parameter, None for none (a Signature's own hash is
# a hash of every parameter)
_OUT_AT = {}


def _out_of(sig, args, kwargs):
    """The call's out= argument, however passed (None: none)."""
    at = _OUT_AT.get(id(sig), -1)
    if at == -1:
        at = _OUT_AT[id(sig)] = list(sig.parameters).index("out") if "out" in sig.parameters \
            else None
    if at is None or ("out" not in kwargs and len(args) <= at):
        # (not passed: what binding the call would say, without binding it,
        # ~25% of an eager hnp.sum of 16 floats)
        return None
    try:
        return sig.bind(*args, **kwargs).arguments.get("out")
    except TypeError:
        return None  # (the implementation raises NumPy's error)


def _out_overlaps(sig, args, kwargs):
    """Whether an out= array shares memory with an array argument (hop's
    run would change what NumPy's run again reads)."""
    out = _out_of(sig, args, kwargs)
    if out is None or not hasattr(out, "shape"):
        return False
    from ._ufuncs import _to_numpy
    o = _to_numpy(out)
    return any(isinstance(v, (ndarray, _np.ndarray)) and v is not out and
               _np.may_share_memory(o, _to_numpy(v))
               for v in list(args) + list(kwargs.values()))


# ---------------------------------------------- NumPy's Python-level warnings

def _count(a, axis):
    """The number of elements each slice of a over axis has (None: an axis
    out of range, the implementation's error), an int or a SymInt."""
    from ._funcs import _axes, _t
    try:
        t = _t(a, "count")
        axes = _axes(axis, t.ndim) if t.ndim else ()
    except Exception:  # noqa: BLE001 - the implementation raises NumPy's error
        return None
    n = 1
    for d in axes:
        n = n * t.shape[d]
    return n


def mean_says(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """_methods._mean's "Mean of empty slice." (a where= mask's counts are
    data: not read here)."""
    if where is not True:
        return None
    n = _count(a, axis)
    return "Mean of empty slice." if type(n) is int and n == 0 else None


def var_says(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True):
    """_methods._var's "Degrees of freedom <= 0 for slice"."""
    if where is not True:
        return None
    n = _count(a, axis)
    try:
        return "Degrees of freedom <= 0 for slice" if type(n) is int and ddof >= n else None
    except TypeError:
        return None  # (the implementation raises NumPy's error)


def _nonfinite(r):
    """Whether eager result r (an array, a NumPy scalar, a tuple) holds a
    value that is not finite."""
    if isinstance(r, tuple):
        return any(_nonfinite(x) for x in r)
    from ._ufuncs import _to_numpy
    v = _np.asarray(_to_numpy(r)) if isinstance(r, (ndarray, _np.ndarray, _np.generic)) else None
    return v is not None and v.dtype.kind in "fc" and not _np.isfinite(v).all()


def _inexact(r):
    """Whether eager result r (an array, a NumPy scalar, a tuple) is of a
    float or complex dtype: an integer one (np.mean(a, where=m,
    dtype=np.int64)) no longer shows the NaN of an empty slice, for which
    NumPy warns ("Mean of empty slice.")."""
    if isinstance(r, tuple):
        return all(_inexact(x) for x in r)
    dt = getattr(r, "dtype", None)
    return dt is None or _np.dtype(dt).kind in "fc"


def nan_may_say(*args, **kwargs):
    """NumPy's nan functions warn for an all-NaN slice ("All-NaN slice
    encountered", "Mean of empty slice", "Degrees of freedom <= 0 for
    slice."), whose result is NaN."""
    return True


def count_may_say(a, axis=None, *args, where=True, **kwargs):
    """mean, var and std warn for a where= mask's empty slice (or one of
    no more than ddof elements), whose result is NaN or inf, and so for a
    slice whose size is a symbol (hop.compile's dynamic or unbacked sizes:
    its value is the run's)."""
    return where is not True or type(_count(a, axis)) is not int


def _data_checked(r, sig, args, kwargs, nan):
    """A traced reduction's result r through a run-time check (_core.
    unknown_if, kind NUMPY_WARNS): a slice of no more elements than ddof
    (0 but for var and std) hands the call to eager (hop.compile), which is
    NumPy's and warns as it does for the data; elements are counted as
    NumPy's Python code counts them (nan: not the NaNs; a where= mask's
    only).  A result in out= is not checked (docs/ARCHITECTURE.md); one
    in NumPy's layout (a view of the run's new storage: a transposed
    reduction) is checked through its storage's value, so that it stays
    that view."""
    st = r._st if isinstance(r, ndarray) else None
    if not isinstance(r, ndarray) or not _C._is_proxy(r._t) or not _core.checking() or \
            (st is not None and (st.root is not None or st.foreign)):
        return r
    from ._funcs import _axes, _t
    try:
        b = sig.bind(*args, **kwargs)
    except TypeError:
        return r
    b.apply_defaults()
    if b.arguments.get("initial") is not None or b.arguments.get("out") is not None:
        # (nanmax/nanmin from initial: NumPy's result is no NaN to warn of;
        # out= is the result itself: not checked)
        return r
    x = _t(b.arguments["a"], "reduction")
    axes = list(_axes(b.arguments.get("axis"), x.ndim)) if x.ndim else []
    w = b.arguments.get("where", True)
    masks = (_t(w, "where"),) if w is not True else ()
    ddof = b.arguments.get("ddof", 0) or 0

    def counted(x, *masks):
        keep = _C.logical_not(_C.ne(x, x)) if nan and _core.np_dtype(x).kind in "fc" else \
            _C.full(tuple(x.shape), True, dtype=_C.bool)
        for m in masks:
            keep = _C.logical_and(keep, m)
        cnt = _core.cast(keep, _np.dtype(_np.int64))
        if axes:
            cnt = _C.sum(cnt, axes, False)
        flag = _C.le(cnt, ddof)
        return flag if flag.ndim == 0 else _C.any(flag, None, False)

    def warns(v, x, *masks):
        return _core.unknown_if(counted(x, *masks), v, _core.CHECK_WARNS)

    v = st.value if st is not None else r._t
    if _core.np_dtype(r._t).kind not in "fc":
        v = warns(v, x, *masks)
    else:
        # Such a slice's result is NaN or inf (0/0, x/0, NumPy's NaN for
        # it), so the slices are counted only when some result is not
        # finite (a cond): a call with finite results pays for an abs() and
        # an all() over its result (one fused instruction), a branch and a
        # copy of the result, not for another pass over x (it had cost as
        # much again as nanmean itself).  The check (fail_if) is in the
        # branch that counts, so the finite case runs none (a fail_if at
        # the top level was a view of the result made every call: 4x3
        # nanmean, 26.6 K -> 25.6 K instructions a call)
        from .._hops import cond
        finite = _C.lt(_C.abs(r._t), _np.inf)
        finite = finite if finite.ndim == 0 else _C.all(finite, None, False)
        v = cond(finite, lambda v, x, *m: v, warns, (v, x) + masks)
    if st is not None:  # (as a write of the same values: r and its views see it)
        st.value = v
        st.version += 1
        return r
    return type(r)(v, scalar=r._scalar)




# ----------------------------------------------- NumPy scalars' integer overflow

def scalar_overflow(name, args, r):
    """r, the traced result of NumPy scalar math `name` on args (hop.numpy
    scalars, Python and NumPy integers and bools), through a run-time check
    that its integer result did not wrap.  NumPy's scalar math warns there
    ("overflow encountered in scalar multiply"), hop's integer kernels
    raise no flag, so the plan fails the check (fail_if, kind
    NUMPY_SCALAR_OVERFLOW) and hop.compile runs that call by NumPy, which
    warns (or raises, under numpy.errstate) as eager does.  r itself when
    nothing here can overflow: a float result, an array operand (no
    scalar math), an eager value (_ndarray._reported_scalar_math's)."""
    if name not in SCALAR_CHECKED or not isinstance(r, ndarray) or not r._scalar or \
            r.dtype.kind not in "iu" or not _core.is_traced(r._t):
        return r
    dt = r.dtype
    info = _np.iinfo(dt)
    ops = []
    for a in args:
        if isinstance(a, ndarray) and a._scalar:
            ops.append(_core.cast(a._t, dt))
        elif isinstance(a, (bool, int, _np.integer, _np.bool_)) and \
                info.min <= int(a) <= info.max:
            ops.append(_C.full((), int(a), dtype=_core.hop_dtype(dt, name)))
        else:
            return r  # (an operand no scalar math takes as this dtype)
    flag = _overflowed(name, ops, r._t, info)
    if flag is None:
        return r
    return type(r)(_core.unknown_if(flag, r._t, _core.CHECK_OVERFLOW), scalar=True)


def _overflowed(name, ops, r, info):
    """The bool tensor: whether r, `name` of ops in r's integer dtype
    (wrapping), is not the exact result; None where it cannot differ."""
    signed = info.min < 0
    a = ops[0]
    if name == "negative":
        return _C.eq(a, info.min) if signed else _C.ne(a, 0)
    if name == "absolute":
        return _C.eq(a, info.min) if signed else None
    b = ops[1]
    if name == "floor_divide":  # (by zero: the kernel's flag, as an array's)
        return _C.logical_and(_C.eq(a, info.min), _C.eq(b, -1)) if signed else None
    if name == "add":  # signed: both operands' signs differ from the result's
        return _C.lt(_C.bitwise_and(_C.bitwise_xor(a, r), _C.bitwise_xor(b, r)), 0) \
            if signed else _C.lt(r, a)
    if name == "subtract":  # signed: a's and b's signs differ, and a's and r's
        return _C.lt(_C.bitwise_and(_C.bitwise_xor(a, b), _C.bitwise_xor(a, r)), 0) \
            if signed else _C.lt(a, b)
    # multiply: exact iff r // a == b (a wrapped product differs from a * b
    # by a multiple of 2**bits, more than |a|); a == -1 wraps only b ==
    # min (min // -1 itself wraps), and the divisor is never 0 or -1, whose
    # division would raise the kernel's own flag
    zero = _C.eq(a, 0)
    minus_one = _C.eq(a, -1) if signed else None
    odd = _C.logical_or(zero, minus_one) if signed else zero
    divisor = _C.where(odd, _C.full((), 1, dtype=a.dtype), a)
    flag = _C.logical_and(_C.logical_not(zero), _C.ne(_C.floor_divide(r, divisor), b))
    if signed:
        flag = _C.where(minus_one, _C.eq(b, info.min), flag)
    return flag
