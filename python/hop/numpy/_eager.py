"""The eager fast path of hop.numpy's elementwise ufuncs and plain
reductions (`a.sum()`, `np.mean(a, 0)`: _reduce_plan, below).

`a + b`, `a * 2.0`, `a < b`, `np.sin(a)` on concrete hop.numpy arrays,
outside any trace and with NumPy's error state not raising: the general
path (_ufuncs.call_ufunc) asks NumPy for the result dtype on stand-ins,
builds operands, looks for a memory order, ... about a hundred Python calls
per op.  Here each decision it makes is made once per kind of operands and
kept: a dict from (ufunc, operand keys) to (hop implementation, the dtype
each tensor operand is read in, the result dtype).  The decisions are the
general path's own (_ufuncs.result_dtype, _ufuncs.loop, _core.as_compute),
so there is no second promotion table; what this module adds is the key.

An operand's key is what NumPy 1.24's dtype resolution reads of it:
- a C-contiguous hop.numpy array of one or more dimensions (exactly
  hop.numpy.ndarray, not a view of a run's storage nor a view hop made as
  a copy): its dtype (another layout's result has NumPy's K order, which
  the general path decides);
- a Python bool: its type;
- a Python int: its sign and bit length, which separate every class of
  values NumPy casts by (_core._INT_CLASSES: their bounds are 2**k - 1 and
  -2**k), so that every int of one key gets the dtype of the first;
- a Python float: NumPy's np.min_scalar_type of it (the class NumPy casts
  a float scalar by: float16, float32 or float64), by its type character;
- beside an array of one or more dimensions, a concrete 0-d hop.numpy array
  (a NumPy scalar's or not: a.sum(), a.mean(), a[3]) of float64, int64 or
  bool: the key of its value as a Python float, int or bool, which the plan
  then reads.  NumPy 1.24 casts such an operand by its value exactly as it
  casts the Python scalar (a Python float is a float64 0-d array to it);
  a 0-d array of another dtype is cast by its own dtype where the kinds
  differ (int8 + np.float32(1) is float32, int8 + 1.0 float64).
When every operand is 0-d or a Python scalar (`a.sum() / 16`, `a.mean() >
3`, `np.sqrt(s)`), NumPy promotes by dtype, not by value, and answers a
scalar: a 0-d operand's key is then its dtype (a 1-tuple, never an array's
key).  An operator is taken only for a float64 or bool result of add,
subtract, multiply, true_divide and the comparisons (the result a
hop.numpy scalar): an operator of NumPy scalars is NumPy's scalar math,
which warns on an integer overflow and rounds float16 and libm functions
its own way, and which the general path runs
(_ndarray._reported_scalar_math).  A ufunc's call (np.sqrt(s),
np.maximum(s, 0), call below) is NumPy's loop, as for arrays: every plan.
Anything else (a 0-d array of another dtype beside an array, a complex, a
list, an np.ndarray, a NumPy scalar, a hop.Tensor, a NumpyArg) has no key:
the
general path takes the call, as it does any call with keywords, one
while tracing or while hop.compile records a path, a ufunc the table does not take (logical ones, matmul,
power of integers and the composed ones given a scalar) and a call under an errstate
that raises, calls, prints or logs.  A call whose kernels raised a
floating-point flag NumPy's state warns for is handed to the general path
too, which has NumPy compute it and warn (docs/ARCHITECTURE.md,
"Floating-point warnings").
"""

import warnings

import numpy as _np

from .. import _C, _paths
from . import _core, _storage
from ._ndarray import ndarray

__all__ = ["call", "matmul"]

# (name, key[, key]) -> (impl, cast, cast, out_dt, out hop dtype) or None (the
# general path's): a cast is, per operand, the NumPy dtype a tensor operand is
# cast to first (None: as it is; a scalar is passed as it is, but in a
# complex loop, where the cast is the loop's hop dtype and the scalar becomes
# that 0-d complex tensor; the second is None for one operand); also the reductions' ("reduce:sum", below) and
# np.where's ("where", key, key) -> (dt, hop dt): _eager_shape._where_plan
# (no ufunc has either name)
_PLANS = {}
# ufuncs the fast path leaves to the general one: the logical ones (which
# read truth values), matmul (its core dimensions), power of integers
# (negative integer powers are refused on the data: a float or complex power
# is planned).  clip's three operands are planned for np.clip(a, lo, hi)
# (np_eager.c fast_clip: a key of a and the pair of lo's and hi's)
_GENERAL = {"logical_and", "logical_or", "logical_xor", "logical_not", "matmul", "power",
            "float_power"}


# call(name, args): ufunc `name` of args (a tuple of one or two operands, no
# keywords) by the fast path: its result, or None when the general path must
# answer.  It is C (python/_C/np_eager.c): the operands' keys (above), the
# gates (no trace nor run: _storage.current() is None; no path recorded
# (_C._np_eager_off counts both per thread); NumPy's error state not reported), the plan's lookup and run, and the
# result's ndarray with the slots __init__ gives outside a run
# (ndarray._EAGER_SLOTS); a miss asks _plan.
call = _C._np_eager


def _plan(name, args):
    """The general path's decisions for ufunc `name` on operands like args,
    or None where the fast path does not take them (an error included: the
    general path raises it)."""
    from . import _ufuncs
    if (name in _GENERAL and name != "power") or name not in _ufuncs.UFUNCS or \
            _ufuncs.UFUNCS[name][0] != len(args):
        return None
    uf = getattr(_np.core.umath, name, None) or getattr(_np, name)
    try:
        ops = [_core.operand(a, f"numpy.{name}") for a in args]
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            out_dt = _ufuncs.result_dtype(name, uf, ops, {})
        if warned:
            return None  # the general path warns on every call
        out_hop = _core.hop_dtype(out_dt, f"numpy.{name}")
        impl, cdt = _ufuncs.loop(name, ops, out_dt)
        if name == "power" and _np.dtype(cdt).kind not in "fc":
            return None  # (an integer power: negative ones are refused on the data)
        casts = []
        for o in ops:
            if o.t is not None:
                casts.append(None if o.dtype == cdt else cdt)
            elif _np.dtype(cdt).kind == "c" and name not in _ufuncs._LOGICAL and \
                    name not in ("clip", "matmul"):
                # a number in a complex loop: the 0-d complex tensor of its
                # value the general path makes (_core.complex_scalar; its
                # hop dtype here, which np_eager.c's plan_operand reads)
                casts.append(_core.hop_dtype(cdt, f"numpy.{name}"))
            elif not (_ufuncs.direct(impl) or name == "clip") or \
                    _core.as_compute(o, cdt) is not o.value:
                # the scalar would be converted (or made a tensor) first.  clip
                # is minimum(maximum(x, lo), hi) of x already in the loop's
                # dtype: two direct ops, each taking a scalar the conversion
                # leaves as it is exactly as its 0-d constant
                return None
            else:
                casts.append(None)
        if len(casts) > 2 and casts[2] is not None:
            return None  # (clip's hi is passed as it is: fast_clip)
    except Exception:  # noqa: BLE001 - the general path raises it, as it does now
        return None
    return (impl, casts[0], casts[1] if len(casts) > 1 else None, out_dt, out_hop)


# the reductions the fast path takes, as methods (`a.sum()`, `a.max(0)`) and
# as NumPy's functions (`np.sum(a)`, through ndarray.__array_function__): the
# name the descriptor and the plans know each by (no ufunc has a name with a
# colon, so their plans share _PLANS)
REDUCTIONS = {"sum": "reduce:sum", "prod": "reduce:prod", "mean": "reduce:mean",
              "max": "reduce:max", "min": "reduce:min", "argmax": "reduce:argmax",
              "argmin": "reduce:argmin", "any": "reduce:any", "all": "reduce:all",
              "cumsum": "reduce:cumsum", "cumprod": "reduce:cumprod"}
_REDUCE_FUNCS = {_np.sum: "reduce:sum", _np.prod: "reduce:prod", _np.mean: "reduce:mean",
                 _np.max: "reduce:max", _np.amax: "reduce:max", _np.min: "reduce:min",
                 _np.amin: "reduce:min", _np.argmax: "reduce:argmax",
                 _np.argmin: "reduce:argmin", _np.any: "reduce:any", _np.all: "reduce:all",
                 _np.cumsum: "reduce:cumsum", _np.cumprod: "reduce:cumprod"}


# a @ b by the fast path: two concrete C-contiguous hop.numpy arrays (exactly
# hop.numpy.ndarray, not NumPy scalars, not a view of a run's storage nor a
# view hop made as a copy) of float32 or float64, the same for both, one or
# two dimensions each, whose core sizes match (two vectors: NumPy's scalar),
# with the fast path's gates open: the general path's computation itself
# (hop's matmul of the two tensors, already in the result's dtype, and a new
# array of it) without its ~40 Python calls of decisions (19x NumPy's time
# for f32[16, 16] @ f32[16]).  None where the general path must answer, and
# after a floating-point exception NumPy's state warns for (NumPy computes
# it and warns).  C (python/_C/np_eager.c fast_matmul), which the operator
# a @ b (a C descriptor) calls too.
matmul = _C._np_eager_matmul


def _reduce_plan(name, a, axis):
    """The general path's decisions for reduction `name` (a value of
    REDUCTIONS) of array a over axis (None or an int in range) with no other
    argument, for every array of a's dtype and rank: (the kernel, the dtype
    a's tensor is cast to first or None, the kernel's dims, the result's
    NumPy dtype, its hop dtype), the kernel called as kernel(x, dims, False)
    and its result cast to the result's dtype (python/_C/np_eager.c).  They
    are _reductions._reduce's (sum, prod, max, min, any, all), _scan's
    (cumsum, cumprod: _scan_plan), _reductions._mean_t's
    and _reductions._arg's (argmax, argmin: the kernel's dims an int or None,
    as it takes them) for these arguments.  None where the fast path does not take the call: a
    result of two or more dimensions (NumPy's memory order of it,
    _reductions._reduce_order, depends on a's strides), complex max, min and
    mean (_corder's order; the sum divided as a complex number), an error
    (the general path raises it)."""
    from . import _funcs, _reductions
    op = name.partition(":")[2]
    try:
        t = a._t
        if op in ("cumsum", "cumprod"):
            return _scan_plan(op, t, axis)
        axes = _funcs._axes(axis, t.ndim)
        dt = _core.np_dtype(t)
        if t.ndim == 0 or t.ndim - len(axes) >= 2 or (dt.kind == "c" and op != "sum" and
                                                       op != "prod"):
            return None
        pre = None
        if op == "mean":
            rdt = _reductions._reduce_dtype(_np.mean, t, None, "mean")
            cdt = _np.dtype(_np.float32) if rdt == _np.dtype(_np.float16) else rdt
            pre = None if cdt == dt else cdt
            kernel = _C.mean
        elif op in ("sum", "prod"):
            rdt = _reductions._reduce_dtype(getattr(_np, op), t, None, op)
            pre = rdt if dt.kind == "f" and rdt != dt else None
            kernel = getattr(_C, op)
        elif op in ("any", "all"):
            rdt, kernel = _np.dtype(bool), getattr(_C, op)  # (_reductions._reduce's)
        elif op in ("argmax", "argmin"):
            # (_reductions._arg's: hop's kernel over the axis or the whole
            # array, a bool array read as uint8, which orders False < True)
            pre = _np.dtype(_np.uint8) if dt.kind == "b" else None
            dims = None if axis is None else axes[0]
            return (getattr(_C, op), pre, dims, _np.dtype(_np.int64), _C.int64)
        else:
            rdt, kernel = dt, getattr(_C, "a" + op)
        return (kernel, pre, list(axes), rdt, _core.hop_dtype(rdt, op))
    except Exception:  # noqa: BLE001 - the general path raises it
        return None


def _scan_plan(op, t, axis):
    """A reduction plan (_reduce_plan's form) of cumsum or cumprod of a 1-d
    tensor t or of any t with axis None: _reductions._scan's decisions for
    them (the flattened array in C order, scanned in the dtype NumPy
    answers, cast first where _scan casts); None for a result of two or more
    dims (its memory order, which _scan reads) and complex."""
    from . import _reductions
    dt = _core.np_dtype(t)
    if (axis is not None and t.ndim != 1) or dt.kind == "c":
        return None
    rdt = _reductions._reduce_dtype(getattr(_np, op), t, None, op)
    pre = rdt if dt.kind == "f" or rdt.kind in "fc" else None
    kernel = getattr(_C, op)
    if t.ndim == 1:
        def scan(x, _dims, _keepdims):
            return kernel(x, 0)
    else:
        def scan(x, _dims, _keepdims):
            return kernel(x.reshape(-1), 0)
    return (scan, pre if pre != dt else None, None, rdt, _core.hop_dtype(rdt, op))


_C._np_eager_init(ndarray, _PLANS, lambda name, args: _plan(name, args), _core.cast,
                  ndarray._EAGER_SLOTS, _reduce_plan, _REDUCE_FUNCS)
