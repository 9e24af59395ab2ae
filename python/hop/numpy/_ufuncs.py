"""NumPy's ufuncs on hop tensors: np.add(x, 1) and x + 1 on a traced or
concrete array, with NumPy's dtypes (see _core), out= and where=.

A ufunc is computed in the dtype NumPy's loop uses (the result dtype, or for
comparisons the common dtype of the inputs), by hop ops; a scalar operand
stays a scalar of the op (a weak operand of that dtype), so `x * 2.5` is
one `mul` node.  Methods (array_ufunc, the one owner of hop.numpy's ufunc
objects' methods too: _ufunc_methods): __call__, outer, at, reduce
(np.add.reduce is sum, ...), accumulate (np.add.accumulate is cumsum) and
reduceat, those hop computes in _ufunc_methods.  A ufunc or method hop has no
implementation for raises hop.UnsupportedError naming it while tracing;
eagerly NumPy computes it on the arrays' memory.
"""

import builtins
import math

import numpy as _np

from .. import _C
from . import _core, _corder, _eager, _storage
from ._ndarray import ndarray, NumpyArg, result_kind, wrap

__all__ = ["array_ufunc", "call_ufunc", "takes", "UFUNCS"]


def _f(op):
    return lambda x: op(x)


def _isnan(x):
    return _C.ne(x, x)


def _isinf(x):
    return _C.eq(_C.abs(x), math.inf)


def _fmax(a, b):
    return _C.where(_isnan(a), b, _C.where(_isnan(b), a, _C.maximum(a, b)))


def _fmin(a, b):
    return _C.where(_isnan(a), b, _C.where(_isnan(b), a, _C.minimum(a, b)))


def _first_of_equal(impl):
    """NumPy's float16 maximum, minimum, fmax and fmin: the first operand
    where the two are equal (HALF_maximum's `in1 >= in2 ? in1 : in2`); its
    other floats' loops, and hop's kernels, give the second.  0.0 and -0.0
    tell them apart."""
    return lambda a, b: _C.where(_C.eq(a, b), a, impl(a, b))


def _trunc(x):
    return _C.where(_C.lt(x, 0), _C.ceil(x), _C.floor(x))


def _rint(x):
    """NumPy's rint: half to even; a complex value's parts each."""
    if _core.np_dtype(x).kind == "c":
        return _C._op("complex", _C.round(_C._op("real", x)), _C.round(_C._op("imag", x)))
    return _C.round(x)


def _power(a, b):
    return _C.pow(a, b)


def _float_power(a, b):
    """NumPy's float_power (float64 or complex128 operands): libm's pow
    element by element for real ones (its loop's npy_pow, where power's
    float64 loop is SVML's: the float_power op), power's complex pow."""
    if _core.np_dtype(a).kind == "c":
        return _C.pow(a, b)
    return _C._op("float_power", a, b)


def _positive(x):
    return x.clone()


def _square(x):
    return x * x


def _reciprocal(x):
    dt = _core.np_dtype(x)
    if dt.kind in "iu":
        # NumPy's integer loop: 1.0 / x in double, converted back as C
        # converts (1 / 0 is inf: INT_MIN, or 0 for the unsigned and 8/16-bit
        # ones, NumPy's astype on x86-64, which _core.cast reproduces; for
        # uint64, whose inf hop's conversion saturates, gcc's conversion
        # gives 0)
        r = _core.cast(_C.div(1.0, _core.cast(x, _np.dtype(_np.float64))), dt)
        if dt == _np.uint64:
            r = _C.where(_C.eq(x, 0), _C.zeros((), dtype=r.dtype), r)
        return r
    if dt.kind != "c":
        return _C.div(1.0, x)
    # NumPy's complex reciprocal loop, whose rounding is neither 1 / x's
    # (Smith's division) nor the textbook quotient's: scaled by the larger
    # part, 1/d and -r/d
    re, im = _C._op("real", x), _C._op("imag", x)
    r1 = _C.div(im, re)
    d1 = re + im * r1
    r2 = _C.div(re, im)
    d2 = re * r2 + im
    by_re = _C.le(_C.abs(im), _C.abs(re))
    return _C._op("complex", _C.where(by_re, _C.div(1.0, d1), _C.div(r2, d2)),
                  _C.where(by_re, _C.div(-r1, d1), _C.div(-1.0, d2)))


def _matmul(a, b):
    return _C.matmul(a, b)


def _signbit(x):
    if x.dtype is _C.bool:
        return _C.zeros(tuple(x.shape), dtype=_C.bool)
    if _core.np_dtype(x).kind != "f":
        return _C.lt(x, 0)
    one = _C.full((), 1.0, dtype=x.dtype)
    return _C.lt(_C.copysign(one, x), 0)  # the sign of nan and -0.0 too


def _spacing(x):
    # NumPy's npy_spacing: nextafter(x, copysign(inf, x)) - x (nan at inf)
    if x.dtype is _C.float16:
        return _spacing16(x)
    inf = _C.copysign(_C.full((), math.inf, dtype=x.dtype), x)
    return _C.nextafter(x, inf) - x


def _spacing16(x):
    """NumPy's npy_half_spacing: the (positive) spacing above |x|, below it
    for a negative power of two; inf at 65504, nan at inf and nan."""
    xf = x.to(_C.float32)
    ax = _C.abs(xf)
    one = _C.ones((), dtype=_C.float32)
    e = _C.floor(_C.log2(_C.maximum(ax, 2.0 ** -14)))
    neg_pow2 = _C.logical_and(_C.lt(_C.copysign(one, xf), 0), _C.eq(ax, _C.ldexp(one, e)))
    r = _C.maximum(_C.ldexp(one, _C.where(neg_pow2, e - 11, e - 10)), 2.0 ** -24)
    r = _C.where(_C.eq(xf, 65504.0), _C.full((), math.inf, dtype=_C.float32), r)
    r = _C.where(_C.logical_or(_C.eq(ax, math.inf), _C.ne(xf, xf)),
                 _C.full((), math.nan, dtype=_C.float32), r)
    return r.to(_C.float16)


def _nextafter(x, y):
    """NumPy's nextafter; float16 as NumPy's npy_half_nextafter (hop's f16
    ops compute in f32, whose next value would round back to x)."""
    if x.dtype is not _C.float16:
        return _C.nextafter(x, y)
    xf, yf = x.to(_C.float32), y.to(_C.float32)
    ax = _C.abs(xf)
    one = _C.ones((), dtype=_C.float32)
    # the f16 exponent of |x| (subnormals and 0: -14) and the spacing above it
    e = _C.floor(_C.log2(_C.maximum(ax, 2.0 ** -14)))
    ulp = _C.ldexp(one, e - 10)
    toward_zero = _C.logical_or(_C.logical_and(_C.gt(xf, 0), _C.lt(yf, xf)),
                                _C.logical_and(_C.lt(xf, 0), _C.gt(yf, xf)))
    pow2 = _C.logical_and(_C.eq(ax, _C.ldexp(one, e)), _C.gt(e, -14))
    step = _C.where(_C.logical_and(toward_zero, pow2), ulp * 0.5, ulp)
    r = _C.where(_C.gt(yf, xf), xf + step, xf - step)
    r = _C.copysign(r, xf)  # (from the smallest subnormal toward 0: 0 of x's sign)
    r = _C.where(_C.eq(xf, 0), _C.copysign(_C.full((), 2.0 ** -24, dtype=_C.float32), yf), r)
    r = _C.where(_C.eq(ax, math.inf), _C.copysign(_C.full((), 65504.0, dtype=_C.float32), xf), r)
    r = _C.where(_C.eq(xf, yf), xf, r)
    r = _C.where(_C.logical_or(_C.ne(xf, xf), _C.ne(yf, yf)),
                 _C.full((), math.nan, dtype=_C.float32), r)
    return r.to(_C.float16)


def _heaviside(x, h):
    zero = _C.zeros((), dtype=x.dtype)
    r = _C.where(_C.eq(x, 0), h, _C.where(_C.lt(x, 0), zero, zero + 1))
    return _C.where(_C.ne(x, x), x, r)  # nan stays nan


def _modf(x):
    """(fractional part, integral part), both with x's sign (NumPy's modf)."""
    whole = _trunc(x)
    frac = _C.where(_isinf(x), _C.zeros((), dtype=x.dtype), x - whole)
    return _C.copysign(frac, x), whole


def _frexp(x):
    """(mantissa in [0.5, 1), int32 exponent) with x == m * 2**e; (x, 0) for
    0, inf and nan (NumPy's frexp).  The exponent from log2 in float64, then
    corrected by one where log2 rounded across a power of two."""
    d = x.to(_C.float64) if x.dtype is not _C.float64 else x
    ad = _C.abs(d)
    normal = _C.logical_and(_C.lt(ad, math.inf), _C.ne(ad, 0))
    e = _C.where(normal, _C.floor(_C.log2(_C.where(normal, ad, 1.0))) + 1.0, 0.0)
    m = _C.ldexp(d, -e)
    am = _C.abs(m)
    up = _C.logical_and(normal, _C.ge(am, 1.0))  # not inf, whose m is inf
    down = _C.logical_and(normal, _C.lt(am, 0.5))
    e = e + _C.where(up, 1.0, _C.where(down, -1.0, 0.0))
    m = _C.ldexp(d, -e)
    return m.to(x.dtype) if m.dtype is not x.dtype else m, e.to(_C.int32)


# name -> (number of inputs, implementation on tensors in the compute dtype)

# NumPy's float32 loops of degrees and radians multiply by 180.0f / NPY_PIf
# (NPY_PIf / 180.0f), a float32 division: 57.295776, an ulp below
# float32(180 / pi); float16's compute in float32 and round once.
_DEG_F32 = float(_np.float32(180.0) / _np.float32(math.pi))
_RAD_F32 = float(_np.float32(math.pi) / _np.float32(180.0))


def _angle(x, to_degrees):
    """degrees (to_degrees) or radians of float tensor x, as NumPy's loop of
    x's dtype computes it."""
    dt = _core.np_dtype(x)
    if dt == _np.float64:
        return x * (180.0 / math.pi if to_degrees else math.pi / 180.0)
    k = _DEG_F32 if to_degrees else _RAD_F32  # exact in float32
    if dt == _np.float16:
        return _core.cast(_core.cast(x, _np.dtype(_np.float32)) * k, dt)
    return x * k

UFUNCS = {
    "add": (2, _C.add), "subtract": (2, _C.sub), "multiply": (2, _C.mul),
    "true_divide": (2, _C.div), "divide": (2, _C.div), "floor_divide": (2, _C.floor_divide),
    "remainder": (2, _C.remainder), "mod": (2, _C.remainder), "power": (2, _power),
    "float_power": (2, _float_power), "maximum": (2, _C.maximum), "minimum": (2, _C.minimum),
    "fmax": (2, _fmax), "fmin": (2, _fmin), "equal": (2, _C.eq), "not_equal": (2, _C.ne),
    "less": (2, _C.lt), "less_equal": (2, _C.le), "greater": (2, _C.gt),
    "greater_equal": (2, _C.ge), "logical_and": (2, _C.logical_and),
    "logical_or": (2, _C.logical_or), "logical_xor": (2, _C.ne),
    "bitwise_and": (2, _C.bitwise_and), "bitwise_or": (2, _C.bitwise_or),
    "bitwise_xor": (2, _C.bitwise_xor), "logaddexp": (2, _C.logaddexp),
    "logaddexp2": (2, _C.logaddexp2), "matmul": (2, _matmul),
    "negative": (1, _C.neg), "positive": (1, _positive), "absolute": (1, _C.abs),
    "fabs": (1, _C.abs), "sign": (1, _C.sign), "sqrt": (1, _C.sqrt), "square": (1, _square),
    "reciprocal": (1, _reciprocal), "exp": (1, _C.exp), "exp2": (1, _C.exp2),
    "expm1": (1, _C.expm1), "log": (1, _C.log), "log2": (1, _C.log2), "log10": (1, _C.log10),
    "log1p": (1, _C.log1p), "sin": (1, _C.sin), "cos": (1, _C.cos), "tan": (1, _C.tan),
    "arctan": (1, _C.arctan), "tanh": (1, _C.tanh), "floor": (1, _C.floor),
    "ceil": (1, _C.ceil), "rint": (1, _rint), "trunc": (1, _trunc),
    "logical_not": (1, _C.logical_not), "invert": (1, _C.bitwise_not),
    "isnan": (1, _isnan), "isinf": (1, _isinf),
    "isfinite": (1, lambda x: _C.lt(_C.abs(x), math.inf)),
    "conjugate": (1, lambda x: _C._op("conj", x)), "deg2rad": (1, lambda x: _angle(x, False)),
    "radians": (1, lambda x: _angle(x, False)),
    "rad2deg": (1, lambda x: _angle(x, True)),
    "degrees": (1, lambda x: _angle(x, True)),
    "clip": (3, lambda x, lo, hi: _C.minimum(_C.maximum(x, lo), hi)),
    "sinh": (1, _C.sinh), "cosh": (1, _C.cosh), "arcsin": (1, _C.arcsin),
    "arccos": (1, _C.arccos), "arcsinh": (1, _C.arcsinh), "arccosh": (1, _C.arccosh),
    "arctanh": (1, _C.arctanh), "cbrt": (1, _C.cbrt), "signbit": (1, _signbit),
    "spacing": (1, _spacing), "arctan2": (2, _C.arctan2), "hypot": (2, _C.hypot),
    "copysign": (2, _C.copysign), "fmod": (2, _C.fmod), "nextafter": (2, _nextafter),
    "ldexp": (2, _C.ldexp), "gcd": (2, _C.gcd), "lcm": (2, _C.lcm),
    "left_shift": (2, _C.left_shift), "right_shift": (2, _C.right_shift),
    "heaviside": (2, _heaviside),
}
# ufuncs with two outputs: name -> the pair of tensors from the operand(s)
_TWO_OUT = {"modf": (1, _modf), "frexp": (1, _frexp)}
# Implementations that are one op of the table, which takes a Python scalar
# operand as it is (a weak scalar: x * 2 is one mul node).
_DIRECT = {_C.add, _C.sub, _C.mul, _C.div, _C.floor_divide, _C.remainder, _power, _C.maximum,
           _C.minimum, _C.eq, _C.ne, _C.lt, _C.le, _C.gt, _C.ge, _C.bitwise_and, _C.bitwise_or,
           _C.bitwise_xor, _C.arctan2, _C.hypot, _C.copysign, _C.fmod, _C.nextafter, _C.ldexp,
           _C.gcd, _C.lcm, _C.left_shift, _C.right_shift, _C.logaddexp, _C.logaddexp2}
# Ufuncs whose loop reads its inputs in the common dtype of the inputs (the
# result is bool): comparisons; and the logical ones, which read bools.
_COMPARE = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
_LOGICAL = {"logical_and", "logical_or", "logical_xor", "logical_not"}
_PREDICATES = {"isnan", "isinf", "isfinite", "signbit"}
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_or": "any", "logical_and": "all"}
_KWARGS = {"out", "where", "dtype", "casting", "order", "subok", "signature"}


def takes(x):
    """Whether x is an operand a ufunc on hop.numpy arrays takes."""
    if isinstance(x, (bool, int, float, complex, _np.generic, _np.ndarray, ndarray, _C.Tensor,
                      _C.SymInt, list, tuple)):
        return True
    return getattr(type(x), "__hop_tensor__", None) is not None


def _traced_any(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            if _traced_any(v):
                return True
        elif isinstance(v, ndarray):
            if _C._is_proxy(v._t):
                return True
        elif isinstance(v, _C.Tensor) and _C._is_proxy(v):
            return True
        elif isinstance(v, _C.SymInt):
            return True
    return False


def _to_numpy(v):
    """For NumPy itself: hop arrays as ndarrays over their memory."""
    if isinstance(v, (list, tuple)):
        return type(v)(_to_numpy(x) for x in v)
    if isinstance(v, ndarray):
        if v._scalar:
            return v._t.numpy()[()]
        # (a view hop made as a copy, a[::-1]: NumPy's own view of the
        # memory, as np.asarray gives, which NumPy's out= writes)
        a = _storage.numpy_of_copy(v) if v._cp is not None and v._st is None else None
        return a if a is not None else v._t.numpy()
    if isinstance(v, _C.Tensor):
        return v.numpy()
    return v


def _from_numpy(r, kind):
    """NumPy's result of a fallback, as hop arrays where hop has the dtype."""
    if isinstance(r, tuple):
        return tuple(_from_numpy(x, kind) for x in r)
    if isinstance(r, list):
        return [_from_numpy(x, kind) for x in r]
    if isinstance(r, (_np.ndarray, _np.generic)) and _np.dtype(r.dtype) in _core._HOP:
        # (NumPy's result in its own layout: an F-ordered one keeps its
        # strides, as NumPy's does; a negative stride hop cannot wrap)
        t = _C.asarray(_np.asarray(r) if not isinstance(r, _np.ndarray) else
                       _np.ascontiguousarray(r) if builtins.any(s < 0 for s in r.strides) else r)
        return wrap(kind, _numpy_moveless_strides(t, r), scalar=isinstance(r, _np.generic))
    return r


def _numpy_moveless_strides(t, r):
    """Tensor t over NumPy array r's memory with r's strides where they
    move nothing (dims of size 1, any dim of an empty r), which hop's
    asarray gives in C order: NumPy's F-ordered var(keepdims=True) is of
    strides (2, 2), not (4, 2)."""
    if not isinstance(r, _np.ndarray) or r.ndim == 0 or r.itemsize == 0:
        return t
    want = tuple(s // r.itemsize for s in r.strides)
    have, empty = tuple(t.stride()), r.size == 0
    if want == have or builtins.any(s < 0 or s % r.itemsize for s in r.strides) or \
            builtins.any(w != h and n != 1 and not empty for w, h, n in zip(want, have, r.shape)):
        return t
    return _C._restride(t, want)


def fallback(func, name, args, kwargs, kind, what=None):
    """func by NumPy on the arrays' memory when nothing is traced; else it
    needs the traced values: in hop.compile's own code a graph break (the
    call runs in Python, by NumPy, and compiling resumes after it), in
    hop.trace or a HOP body the error that says hop cannot trace it
    (naming what, default NumPy's name of func)."""
    if _core.tracing() or _traced_any(args) or _traced_any(kwargs.values()):
        from .. import _breaks
        _breaks.conversion(
            _C.UnsupportedError,
            f"hop.numpy: {what or _qualified(func, name)} is not supported by hop, so it cannot be "
            f"traced (it would "
            f"have to run on the traced values now); use the functions hop.numpy lists "
            f"(hop.numpy.__all__) or compute it outside the traced function")
    try:
        r = func(*_to_numpy(args), **{k: _to_numpy(v) for k, v in kwargs.items()})
    finally:
        _storage.numpy_may_write()  # (out=, ufunc.at: NumPy wrote the memory)
    return _from_numpy(r, kind)


def by_numpy(func, name, args, kwargs, kind, out):
    """func (a ufunc, a reduction) called by NumPy on the arrays' memory
    where hop's own run would not warn or raise as NumPy does: NumPy's
    warnings or errors for floating-point exceptions (and its Python
    code's), and its answer; out: the call's out= argument however it was
    passed (None: none), which is what NumPy returns when given (a tuple of
    several outputs: the tuple; of one: its array), not a new view of it."""
    r = fallback(func, name, args, kwargs, kind)
    if out is None:
        return r
    return out if not isinstance(out, tuple) or len(out) > 1 else out[0]


def _qualified(func, name):
    """numpy.linalg.norm for NumPy's norm (its module), numpy.sin for a
    ufunc, numpy.add.reduce for a ufunc method."""
    module = getattr(func, "__module__", None) or "numpy"
    # numpy.core's and numpy.lib's functions are NumPy's top-level ones,
    # except those it does not export (numpy.lib.stride_tricks's
    # sliding_window_view)
    if ((module.startswith("numpy.core") or module.startswith("numpy.lib")) and
            getattr(_np, name, None) is not None) or module == "numpy" or "." in name:
        module = "numpy"
    return f"{module}.{name}"


def out_array(o):
    """Whether o can be an out= array: an ndarray, not a NumPy scalar (an
    immutable value, which NumPy refuses with a TypeError)."""
    return isinstance(o, _np.ndarray) or isinstance(o, ndarray) and not o._scalar


def _out_tuple(out, nout, name):
    """out= as a tuple of nout arrays (or Nones), with NumPy 1.24's errors
    (its texts) for anything else."""
    if out is None:
        return None
    if not isinstance(out, tuple):
        if nout > 1:
            raise TypeError("'out' must be a tuple of arrays")
        out = (out,)
    if len(out) != nout:
        raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
    for o in out:
        if o is not None and not out_array(o):
            raise TypeError("return arrays must be of ArrayType")
        if o is not None and (o._ro if isinstance(o, ndarray) else not o.flags.writeable):
            # (NumPy's check as it takes the argument, before any dtype's)
            raise ValueError("output array is read-only")
    return out


def _all_tensor(ops, cdt):
    """The compute operands; when none is a tensor, the first becomes a 0-d
    tensor (a constant) so that the op has one."""
    vals = [_core.as_compute(o, cdt) for o in ops]
    if not any(isinstance(v, _C.Tensor) for v in vals):
        vals[0] = _C.full((), vals[0], dtype=_core.hop_dtype(cdt, "scalar"))
    return vals


def _check_negative_powers(name, ops, dt):
    """NumPy raises for an integer base to a negative integer power; so does
    hop, deciding on the data when the exponent is an array."""
    if dt.kind not in "iu" or len(ops) < 2:
        return
    if any(any(d == 0 for d in o.t.shape) for o in ops if o.t is not None):
        return  # NumPy's check is in its loop: an empty result raises nothing
    e = ops[1]
    bad = None
    if e.t is None:
        v = _core.scalar_arg(e)
        bad = not isinstance(v, _C.SymInt) and v < 0
    elif _core.np_dtype(e.t).kind == "i":
        bad = _core.decide(_C.any(_C.lt(e.t, 0)), f"{name}: whether an exponent is negative")
    if bad:
        raise ValueError("Integers to negative integer powers are not allowed.")


def _truth(o, cdt):
    """Operand o's truth in a logical ufunc that reads its operands in
    dtype cdt: a bool tensor or a Python bool.  A scalar (or 0-d array)
    is cast to a float cdt first, as NumPy casts it."""
    if o.t is None:
        v = _core.scalar_arg(o)
        if isinstance(v, _C.SymInt) or cdt.kind != "f":
            return bool(v)
        with _np.errstate(all="ignore"):
            return bool(_np.asarray(v).astype(cdt))
    t = o.t
    if t.ndim == 0 and cdt.kind == "f":
        t = _core.cast(t, cdt)
    return t if _core.np_dtype(t) == _np.dtype(bool) else _C.ne(t, 0)


def _compute(name, ops, out_dt):
    """The tensor of ufunc `name` on operands ops with result dtype out_dt."""
    nin, impl = UFUNCS[name]
    if name in _LOGICAL:
        # Each operand's truth: a bool tensor, or a Python bool now.  NumPy
        # reads the operands in its loop's dtype, to which a scalar is cast
        # by value first: a float scalar too small for a float16 or float32
        # array's dtype is 0 there (np.logical_or(float16 array, 1e-8) is
        # the array's truth).  An integer scalar always fits its loop.
        cdt = _core.result_dtype(ops, name)
        vals = [_truth(o, cdt) for o in ops]
        if not any(isinstance(v, _C.Tensor) for v in vals):
            vals[0] = _C.full((), vals[0], dtype=_C.bool)
        if name == "logical_not":
            return _C.logical_not(vals[0])
        return impl(*vals)
    if name == "matmul" and out_dt == _np.dtype(bool):
        vals = [_core.cast(o.t, _np.dtype(_np.int64)) for o in ops]
        return _C.ne(_C.matmul(*vals), 0)
    impl, cdt = loop(name, ops, out_dt)
    if name in ("power", "float_power"):
        _check_negative_powers(name, ops, cdt)
    # (composed of several ops: every operand a tensor)
    vals = _all_tensor(ops, cdt) if impl in _DIRECT else compute_tensors(ops, cdt, name)
    r = impl(*vals)
    return _core.cast(r, out_dt)


def loop(name, ops, out_dt):
    """(implementation, compute dtype) of ufunc `name` (not a logical one)
    on operands ops whose result dtype is out_dt: the dtype NumPy's loop
    reads its inputs in, and hop's implementation of that loop."""
    impl = UFUNCS[name][1]
    if name in _COMPARE:
        cdt = _core.result_dtype(ops, name)
    elif name in _PREDICATES:
        cdt = ops[0].dtype if ops[0].dtype is not None else _np.dtype(float)
    elif name in ("absolute", "fabs") and ops[0].dtype is not None and ops[0].dtype.kind == "c":
        cdt = ops[0].dtype  # |z|: read complex, give its parts' dtype
    else:
        cdt = out_dt
    if cdt.kind == "c" and name in _corder.UFUNCS:
        impl = _corder.UFUNCS[name]  # NumPy's lexicographic order, on the parts
    elif cdt == _np.dtype(_np.float16) and name in _HALF_EXTREMES:
        impl = _HALF_EXTREMES[name]
    return impl, cdt


_HALF_EXTREMES = {n: _first_of_equal(UFUNCS[n][1]) for n in ("maximum", "minimum", "fmax", "fmin")}
# NumPy's float16 clip is its float16 maximum, then minimum (the first of
# equal operands: np.clip of a float16 -0.0 with a bound 0 keeps -0.0)
_HALF_EXTREMES["clip"] = lambda x, lo, hi: \
    _HALF_EXTREMES["minimum"](_HALF_EXTREMES["maximum"](x, lo), hi)


def direct(impl):
    """Whether implementation impl is one op that takes a Python scalar
    operand as it is (a weak scalar)."""
    return impl in _DIRECT


def compute_tensors(ops, cdt, name):
    """Every operand as a tensor of dtype cdt, for an implementation
    composed of several ops (a scalar becomes a 0-d constant)."""
    vals = [_core.as_compute(o, cdt) for o in ops]
    return [v if isinstance(v, _C.Tensor) else _C.full((), v, dtype=_core.hop_dtype(cdt, name))
            for v in vals]


def _write_out(o, value, name, casting):
    """ufunc(..., out=o): value cast into o under `casting`, broadcast to
    o's shape.  An np.ndarray out is written eagerly; while tracing it is a
    constant of the trace, which cannot take a traced value."""
    have, want = _core.np_dtype(value), o.dtype
    if isinstance(o, _np.ndarray):
        if not _np.can_cast(have, want, casting=casting):
            raise _core.ufunc_cast_error(name, have, want, casting)
        if _C._is_proxy(value) or _core.tracing():
            raise _C.UnsupportedError(
                f"hop.numpy: numpy.{name}(..., out=<np.ndarray>) while tracing: an ndarray made "
                f"with NumPy's own functions (np.zeros(n)) is a constant of the trace and cannot "
                f"hold a traced value; make it from an array argument (np.zeros_like(x)) or with "
                f"hop.numpy.zeros")
        o[...] = value.numpy()
        return o
    if not _np.can_cast(have, want, casting=casting):
        raise _core.ufunc_cast_error(name, have, want, casting)
    v = _core.cast(value, want)
    if tuple(v.shape) != o.shape:
        try:
            v = v.expand(*o.shape) if v.ndim <= o.ndim else None
        except (ValueError, _C.Error):
            v = None
        if v is None:
            raise ValueError(f"non-broadcastable output operand with shape {o.shape} doesn't "
                             f"match the broadcast shape {_core.shape_text(value.shape)}")
        v = v.clone()
    o._assign(v, f"numpy.{name}(..., out=...)")
    return o


def _call_two(name, args, kwargs, kind):
    """A ufunc of one input and two outputs (modf, frexp)."""
    uf = getattr(_np, name)
    nin, impl = _TWO_OUT[name]
    if len(args) != nin:
        raise TypeError(f"{name}() takes from {nin} to {nin + 2} positional arguments but "
                        f"{len(args)} were given")
    out = _out_tuple(kwargs.get("out"), 2, name)
    if kwargs.get("where", True) is not True or kwargs.get("signature") is not None:
        return fallback(uf, name, args, kwargs, kind)
    dtype = kwargs.get("dtype")
    ops = [_core.operand(a, f"numpy.{name}") for a in args]
    extra = {"dtype": dtype} if dtype is not None else {}
    if "casting" in kwargs:  # (the input's cast to the loop's dtype, as call_ufunc's)
        extra["casting"] = kwargs["casting"]
    dts = _core.result_dtypes(lambda *d: uf(*d, **extra), ops, f"numpy.{name}")
    x = ops[0]
    xt = x.t if x.t is not None else _C.full((), _core.scalar_arg(x),
                                               dtype=_core.hop_dtype(dts[0], name))
    casting = kwargs.get("casting", "same_kind")
    if out is not None:  # NumPy's checks: each output's cast, then the broadcast
        for k, o in enumerate(out):
            if o is not None and not _np.can_cast(dts[k], o.dtype, casting=casting):
                raise _core.ufunc_cast_error(name, dts[k], o.dtype, casting, i=nin + k)
        if not any(isinstance(a, _C.Tensor) for a in args):
            _check_broadcast(ops, out, True)
    checked = _fp_checked(args)
    if checked:
        _C._fp_clear()
    rs = impl(_core.cast(xt, dts[0]))
    if checked and _C._np_fp_warned():
        return by_numpy(uf, name, args, kwargs, kind, kwargs.get("out"))  # (as call_ufunc's)
    res = [None, None]
    for k in (1, 0):  # NumPy's loop writes the second output first (out=(o, o): the first's)
        r = _core.cast(rs[k], dts[k])
        if out is not None and out[k] is not None:
            res[k] = _write_out(out[k], r, name, casting)
        else:
            res[k] = wrap(kind, r, scalar=r.ndim == 0)
    return tuple(res)


def _fp_checked(args):
    """Whether an eager ufunc call on args reads the floating-point
    exceptions its kernels raise, to warn as NumPy does: concrete operands
    outside a trace and outside hop.compile's recording run (whose plan
    warns for the call)."""
    from ._fpcheck import outer  # (a checked reduction checks its ufuncs' flags itself)
    return not _core.tracing() and not _core._recording() and not _traced_any(args) and \
        not outer()


def _check_broadcast(ops, out, where):
    """NumPy's error where the operands (inputs, outputs, the where mask) do
    not broadcast together, eagerly and traced with sizes known (hop's op
    would raise its ShapeError; a trace's sizes are guarded)."""
    shapes = [tuple(o.t.shape) if o.t is not None else () for o in ops]
    shapes += [tuple(o.shape) for o in out or () if o is not None]
    if where is not True:
        shapes.append(tuple(_np.shape(where)))
    if any(type(d) is not int for s in shapes for d in s):
        return  # (symbolic sizes: hop's op decides)
    if len(shapes) > 1:
        try:
            b = _np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError("operands could not be broadcast together with shapes " +
                             "".join(_core.shape_text(s) + " " for s in shapes)) from None
        for o in out or ():
            if o is not None and tuple(o.shape) != b:
                raise ValueError(f"non-broadcastable output operand with shape "
                                 f"{_core.shape_text(o.shape)} doesn't match the broadcast "
                                 f"shape {_core.shape_text(b)}")


def _matmul_dtype(uf, args, ops, extra):
    """np.matmul's core-dimension errors (NumPy's text) and result dtype."""
    for o in ops:
        if o.ndim == 0:
            raise ValueError(f"matmul: Input operand {ops.index(o)} does not have enough "
                             f"dimensions (has 0, gufunc core with signature "
                             f"(n?,k),(k,m?)->(n?,m?) requires 1)")
    ka, kb = ops[0].t.shape[-1], ops[1].t.shape[-2 if ops[1].ndim > 1 else 0]
    # (on arrays, eagerly and in a trace, whose error a handler of the
    # function may catch: before, a compiled `try: x @ y except ValueError
    # as e: return str(e)` returned hop's text; a hop.Tensor operand keeps
    # the op's ShapeError, hop's own; a SymInt: the op's check)
    if not any(isinstance(a, _C.Tensor) for a in args) and \
            type(ka) is int and type(kb) is int and ka != kb:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {kb} is "
                         f"different from {ka})")
    sa, sb = tuple(ops[0].t.shape), tuple(ops[1].t.shape)
    if not any(isinstance(a, _C.Tensor) for a in args) and \
            all(type(d) is int for d in sa + sb) and not _broadcasts(sa[:-2], sb[:-2]):
        # the batch dims do not broadcast: NumPy's ValueError (its text, from
        # its matmul of stand-ins of no memory), not the op's ShapeError
        _np.matmul(*[_np.lib.stride_tricks.as_strided(_np.zeros(1), s, (0,) * len(s))
                     for s in (sa, sb)])
    return _core.result_dtypes(
        lambda a, b: uf(_np.empty((1, 1), _np.asarray(a).dtype),
                        _np.empty((1, 1), _np.asarray(b).dtype), **extra), ops, "matmul")[0]


def _matmul_first(args, kwargs, kind):
    """np.matmul(a, b) of two plain arrays by the eager fast path, or with
    axes= (_matmul_axes); None where neither answers."""
    if not kwargs and kind is ndarray:
        return _eager.matmul(*args)  # (None where it cannot)
    if "axes" in kwargs:
        return _matmul_axes(args, dict(kwargs), kind)
    return None


def _matmul_axes(args, kwargs, kind):
    """np.matmul(a, b, axes=[ia, ib, iout]): each operand's core axes (two,
    or one of a 1-d operand) moved last, matmul, the result's core axes
    moved to iout (omitted where the result has none)."""
    from ._funcs import moveaxis, _t
    axes = kwargs.pop("axes")
    out = kwargs.pop("out", None)
    cores = [1 if _t(x, "matmul").ndim == 1 else 2 for x in args]
    rcore = (cores[0] == 2) + (cores[1] == 2)
    axes = list(axes)
    if len(axes) != 3 and not (len(axes) == 2 and rcore == 0):
        raise ValueError("axes should be a list with an entry for all 3 inputs and outputs; "
                         "entries for outputs can only be omitted if none of them has core axes.")

    def entry(e, k):
        e = tuple(e) if isinstance(e, (tuple, list)) else (e,)
        if len(e) != k:
            raise ValueError(f"axes item {axes.index(e) if e in axes else 0} should be a tuple "
                             f"with {k} elements")
        return e
    moved = [moveaxis(x, entry(axes[i], cores[i]), tuple(range(-cores[i], 0)), _kind=kind)
             for i, x in enumerate(args)]
    if out is not None:
        # out= the result's layout: the matmul writes through out's view
        # with the core axes last (NumPy's gufunc moves out's axes alike)
        o = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if rcore and isinstance(o, (ndarray, _np.ndarray)):
            src, dst = entry(axes[2], rcore), tuple(range(-rcore, 0))
            view = _np.moveaxis(o, src, dst) if isinstance(o, _np.ndarray) else \
                moveaxis(o, src, dst, _kind=type(o))
            kwargs["out"] = (view,) if isinstance(out, tuple) else view
            call_ufunc("matmul", moved, kwargs, kind)
            return o
        kwargs["out"] = out
    r = call_ufunc("matmul", moved, kwargs, kind)
    if rcore and out is None:
        r = moveaxis(r, tuple(range(-rcore, 0)), entry(axes[2], rcore), _kind=kind)
    return r


def _broadcasts(*shapes):
    try:
        _np.broadcast_shapes(*shapes)
    except ValueError:
        return False
    return True


def none_comparison(name, other, kind):
    """np.equal(a, None) and np.not_equal (a == None of an array): NumPy's
    object loop compares each element with None, so every element is
    unequal; a 0-d result is a scalar."""
    o = _core.operand(other, f"numpy.{name}")
    shape = tuple(o.t.shape) if o.t is not None else ()
    return wrap(kind, _C.full(shape, name == "not_equal", dtype=_C.bool), scalar=not shape)


def call_ufunc(name, args, kwargs, kind):
    """ufunc `name` called on args: results of type `kind`."""
    r = _matmul_first(args, kwargs, kind) if name == "matmul" and len(args) == 2 else None
    if r is not None:
        return r
    uf = getattr(_np.core.umath, name, None) or getattr(_np, name)
    if isinstance(uf, _np.ufunc) and uf.__name__ in UFUNCS:
        # true_divide and mod are NumPy's divide and remainder, whose errors
        # give those names
        name = uf.__name__
    bad = set(kwargs) - _KWARGS
    if bad:
        raise TypeError(f"{name}() got an unexpected keyword argument '{sorted(bad)[0]}'")
    if name in _TWO_OUT:
        return _call_two(name, args, kwargs, kind)
    if name in ("equal", "not_equal") and len(args) == 2 and not kwargs and \
            (args[0] is None) != (args[1] is None):
        return none_comparison(name, args[args[0] is None], kind)
    if name == "isnat":
        # defined only for datetime64 and timedelta64, which no hop array
        # is: NumPy's type error for every array hop holds
        if len(args) != 1:
            raise TypeError(f"isnat() takes from 1 to 2 positional arguments but {len(args)} "
                            f"were given")
        raise TypeError("ufunc 'isnat' is only defined for np.datetime64 and np.timedelta64.")
    if name not in UFUNCS:
        return fallback(uf, name, args, kwargs, kind)
    if _core.fp_errors_reported() and not _core.tracing() and \
            not (_traced_any(args) or _traced_any(kwargs.values())):
        # numpy.errstate(divide='raise', ...): NumPy's FloatingPointError (or
        # its call, print, log), which hop's kernels do not report
        return by_numpy(uf, name, args, kwargs, kind, kwargs.get("out"))
    nin = UFUNCS[name][0]
    if len(args) != nin:
        raise TypeError(f"{name}() takes from {nin} to {nin + uf.nout} positional arguments "
                        f"but {len(args)} were given")
    out = _out_tuple(kwargs.get("out"), uf.nout, name)
    where = kwargs.get("where", True)
    dtype = kwargs.get("dtype")
    casting = kwargs.get("casting", "same_kind")
    if kwargs.get("signature") is not None:
        return fallback(uf, name, args, kwargs, kind)
    ops = [_core.operand(a, f"numpy.{name}") for a in args]
    if name == "clip" and any(o.t is None and o.value is None for o in ops):
        raise ValueError("One of max or min must be given")
    extra = {"dtype": dtype} if dtype is not None else {}
    if "casting" in kwargs:
        extra["casting"] = casting  # the inputs are cast to the loop's dtypes under this rule
    if name == "matmul":
        out_dt = _matmul_dtype(uf, args, ops, extra)
    else:
        try:
            out_dt = result_dtype(name, uf, ops, extra)
        except (ArithmeticError, TypeError):
            # the stand-ins computed in object dtype (a Python int beyond
            # uint64: False ** (-2**63-1) divides by zero, 0.0 & it has no
            # float &), which NumPy does only after it checks out's cast
            # (below); NumPy's own TypeError (no loop) is raised as it was
            if out is None or out[0] is None or \
                    _core.result_dtype(ops, name) != _np.dtype(object):
                raise
            out_dt = _np.dtype(object)
    if out is not None and out[0] is not None and \
            not _np.can_cast(out_dt, out[0].dtype, casting=casting):
        raise _core.ufunc_cast_error(name, out_dt, out[0].dtype, casting)  # before computing
    _core.hop_dtype(out_dt, f"numpy.{name}")
    if dtype is not None and name not in _COMPARE and name not in _LOGICAL:
        ops = [_core.Opnd(t=_core.cast(o.t, _np.dtype(dtype)), dtype=_np.dtype(dtype))
               if o.t is not None else o for o in ops]
    wt = True
    if where is not True:
        w = _core.operand(where, f"numpy.{name}: where")
        wt = w.t if w.t is not None else bool(w.value)
        if isinstance(wt, _C.Tensor) and _core.np_dtype(wt) != _np.dtype(bool):
            raise TypeError(f"Cannot cast array data from {_core.np_dtype(wt)!r} to "
                            f"dtype('bool') according to the rule 'safe'")
    if name != "matmul" and not any(isinstance(a, _C.Tensor) for a in args):
        _check_broadcast(ops, out, where)  # (after the dtypes, as NumPy's iterator)
    new = out is None or out[0] is None
    # where=: the mask is one more operand of NumPy's iterator
    order = None
    if new and name != "matmul":
        given = kwargs.get("order", "K")
        order = _k_order(uf, extra, args, ops, kind, where, wt) if given in ("K", "k", None) \
            else memory_order(kind, args, max([o.t.ndim for o in ops if o.t is not None] + [0]),
                              order=given)
    if order is not None:
        # NumPy's result is in the operands' memory order (K): computed in
        # that order and returned as NumPy's view of it (its strides)
        ops = [_core.Opnd(t=_in_order(o.t, order), dtype=o.dtype) if o.t is not None else o
               for o in ops]
        wt = _in_order(wt, order)
    checked = _fp_checked(args)
    if checked:
        _C._fp_clear()
    r = _compute(name, ops, out_dt)
    if checked and _C._np_fp_warned():
        # a floating-point exception NumPy warns for (or a spurious one: a
        # masked lane, a SIMD tail): NumPy's run warns as it does, and
        # answers; nothing was written yet (docs/ARCHITECTURE.md,
        # "Floating-point warnings")
        return by_numpy(uf, name, args, kwargs, kind, kwargs.get("out"))
    if out is not None and out[0] is not None and \
            (where is not True or not isinstance(out[0], _np.ndarray)):
        # (into an np.ndarray _write_out's NumPy assignment warns itself)
        _core.complex_cast_warns(_core.np_dtype(r), out[0].dtype,
                                 f"numpy.{name} of complex values into a real out=")
    if where is not True:
        if out is not None and out[0] is not None:
            base = _core.tensor_of(out[0])
            r = _C.where(wt, _core.cast(r, out[0].dtype), base) if isinstance(wt, _C.Tensor) \
                else (_core.cast(r, out[0].dtype) if wt else base)
        elif isinstance(wt, _C.Tensor):
            r = _C.where(wt, r, _C.zeros((), dtype=r.dtype))
    if out is not None and out[0] is not None:
        return _write_out(out[0], r, name, casting)
    if order is not None:
        return back_in_order(kind, r, order)
    return wrap(kind, r, scalar=r.ndim == 0)


def back_in_order(kind, r, perm):
    """NumPy's new array of kind whose elements tensor r holds in memory
    order perm (r's dim k is the array's dim perm[k]): eagerly r's view in
    the array's own order, an array that owns its memory (NumPy's base
    None); under a run the transpose's view, which records the layout
    hop.compile's result takes."""
    inverse = tuple(sorted(range(len(perm)), key=perm.__getitem__))
    if _storage.current() is None and not _C._is_proxy(r):
        return wrap(kind, r.permute(*inverse))
    from ._funcs import transpose
    return transpose(wrap(kind, r), inverse, _kind=kind)


def result_dtype(name, uf, ops, extra):
    """The result dtype of ufunc uf (`name`, not matmul) on operands ops
    with keywords extra (dtype=, casting=), as NumPy resolves it."""
    try:
        return _core.result_dtypes(lambda *d: uf(*d, **extra), ops, f"numpy.{name}")[0]
    except ValueError:
        if name != "power" or extra:
            raise
        # an integer to a negative power: NumPy resolves the types (and
        # checks out's cast) before it raises for the values
        return _core.result_dtype(ops, name)


def _in_order(t, order):
    """Tensor t (broadcastable to a result of len(order) dims) seen with the
    result's axes in memory order; anything else as it is."""
    if not isinstance(t, _C.Tensor) or t.ndim == 0:
        return t
    nd = len(order)
    return t.reshape((1,) * (nd - t.ndim) + tuple(t.shape)).permute(*order)


def _k_order(uf, extra, args, ops, kind, where=True, wt=None):
    """The memory order of NumPy's new result of ufunc uf (keywords extra)
    on args (memory_order's K) and its where= mask (where, as given; wt its
    tensor), or None for C order.  Without where=, NumPy takes its trivial
    loop (C or F order by the operands' flags, _storage.decide_order's
    "ufunc") unless it casts an input of a dimension first."""
    nd = max([o.t.ndim for o in ops if o.t is not None] +
             [wt.ndim if isinstance(wt, _C.Tensor) else 0])
    if where is not True:
        return memory_order(kind, tuple(args) + (where,), nd)
    how = "iter"
    if kind is ndarray and _storage.current() is None:
        # eager: C order when every operand is C-contiguous (one check)
        if nd < 2 or _storage.eager_c(args):
            return None
        if _reads_inputs_as_they_are(uf, extra, ops):
            how = "ufunc"
        return _storage.eager_order(args, nd, how)
    # (asked in hop.compile's eager run that records the path too: a value
    # class the probe alone needs is a branch point of both runs)
    if kind is NumpyArg and nd >= 2 and (_storage.current() is not None or _core._recording()) \
            and _reads_inputs_as_they_are(uf, extra, ops):
        how = "ufunc"
    return memory_order(kind, args, nd, how=how)


def _reads_inputs_as_they_are(uf, extra, ops):
    """Whether NumPy's loop for uf on operands ops reads every input of a
    dimension in its own dtype (no cast first, which sends NumPy to its
    iterator): asked of NumPy on Fortran-ordered stand-ins with a size-1
    axis, whose result is Fortran-ordered exactly when the trivial loop ran
    (scalars by their values, as result_dtypes decides them)."""
    shape = (2, 1, 2)

    def probe(*d):
        args = [_np.zeros(shape, x.dtype, order="F") if isinstance(x, _np.ndarray) and x.ndim
                else x for x in d]
        r = uf(*args, **extra)
        trivial = r.strides == _np.zeros(shape, r.dtype, order="F").strides
        return _np.empty(0, bool if trivial else _np.int8)

    return _core.result_dtypes(probe, ops, f"numpy.{uf.__name__}: its loop")[0] == \
        _np.dtype(bool)


def memory_order(kind, operands, nd, order="K", default="K", how="iter"):
    """The axes, outermost in memory first, of NumPy's new array of nd dims
    made from operands (hop.numpy arrays, ndarrays; others are skipped) for
    order= (None: the function's default): 'K' the operands' own order (_storage.elementwise_order, which
    records a decision that read an argument's layout for hop.compile to
    make again), 'F' reversed, 'A' 'F' when the first operand is in Fortran
    order and not C order (_storage.fortran_only), else 'C'.  None for C
    order, also for arrays that are not NumPy's (hop.Tensor; hop.numpy's
    arrays of hop.trace) and when a layout is known only at run time.  An
    eager hop.numpy array's layout is its own (_storage.eager_order, by the
    same rules; C order after one check when every operand is C-contiguous)."""
    if order is None:
        order = default
    if isinstance(order, str) and order.upper() in ("C", "F", "A", "K"):
        order = order.upper()
    else:
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if kind not in (NumpyArg, ndarray) or nd < 2 or order == "C":
        return None
    run = _storage.current()
    if kind is ndarray and (run is not None or _core.tracing()):
        return None
    if order == "F":
        return tuple(reversed(range(nd)))
    arrays = [a for a in operands if isinstance(a, (ndarray, _np.ndarray))]
    if run is None:
        if kind is NumpyArg:
            return None
        # eager hop.numpy: its arrays' own layouts, by the same rules
        if _storage.eager_c(arrays[:1] if order == "A" else arrays):
            return None
        if order == "A":
            c, f = _storage._contiguous(*_storage.eager_layout(arrays[0]))
            return tuple(reversed(range(nd))) if f and not c else None
        return _storage.eager_order(arrays, nd, how)
    if order == "A":
        fortran = bool(arrays) and _storage.fortran_only(arrays[0], run)
        if fortran is None:
            from .._breaks import conversion
            conversion(_C.UnsupportedError,
                       "hop.numpy: order='A' of an array that is in Fortran order or not "
                       "depending on a layout hop knows only at run time")
        return tuple(reversed(range(nd))) if fortran else None
    return _storage.elementwise_order(arrays, nd, run, how)


def in_memory_order(kind, operands, shape, compute, order="K", default="K", how="like"):
    """NumPy's new array of shape made from operands in order= (memory_order):
    compute(view, shape_in_order) gives hop's tensor of it in that order,
    view(t) putting a tensor t (broadcastable to shape) in the order, and
    the result is NumPy's view of it (its strides), as the elementwise
    ufuncs' results are.  order=None is the function's default."""
    nd = len(shape)
    perm = memory_order(kind, operands, nd, order, default, how)
    if perm is None:
        return wrap(kind, compute(lambda t: t, tuple(shape)))

    def view(t):
        if not isinstance(t, _C.Tensor) or t.ndim == 0:
            return t
        return t.reshape((1,) * (nd - t.ndim) + tuple(t.shape)).permute(*perm)

    return back_in_order(kind, compute(view, tuple(shape[i] for i in perm)), perm)


def _call_divmod(args, kwargs, kind):
    out = _out_tuple(kwargs.pop("out", None), 2, "divmod")
    if _fp_checked(args) and _C._np_fp_warns():
        # NumPy warns once for both results ("... encountered in divmod"),
        # where hop's two ufuncs below would each have NumPy warn for its own
        return by_numpy(_np.divmod, "divmod", args, dict(kwargs, out=out) if out else kwargs,
                        kind, out)
    if out is not None:
        # NumPy checks both outputs' casts before it writes either, reads
        # each element of the inputs before it writes (out=(x, y) with x an
        # input), and writes the remainder first (out=(o, o): the quotient's)
        ops = [_core.operand(a, "numpy.divmod") for a in args]
        extra = {k: kwargs[k] for k in ("dtype", "casting") if k in kwargs}
        casting = kwargs.get("casting", "same_kind")
        dts = _core.result_dtypes(lambda *d: _np.divmod(*d, **extra), ops, "numpy.divmod")
        for k, o in enumerate(out):
            if o is not None and not _np.can_cast(dts[k], o.dtype, casting=casting):
                raise _core.ufunc_cast_error("divmod", dts[k], o.dtype, casting, i=2 + k)
        args = tuple(a.copy() if isinstance(a, (ndarray, _np.ndarray)) else a for a in args)
    r = call_ufunc("remainder", args, dict(kwargs, out=out[1] if out else None)
                   if out and out[1] is not None else kwargs, kind)
    q = call_ufunc("floor_divide", args, dict(kwargs, out=out[0] if out else None)
                   if out and out[0] is not None else kwargs, kind)
    return q, r


def array_ufunc(ufunc, method, inputs, kwargs, default=ndarray):
    """__array_ufunc__ of hop.numpy arrays and hop.Tensor (and, default
    NumpyArg, hop.SymInt: symint_array_ufunc)."""
    name = ufunc.__name__
    if getattr(_np.core.umath, name, None) is not ufunc:
        # not NumPy's own ufunc of that name (np.frompyfunc's, another
        # library's): hop knows nothing of it, its name included; by NumPy
        # on the values (a break of hop.compile's graph while traced)
        kind = result_kind(inputs, NumpyArg if any(type(x) is NumpyArg for x in inputs)
                           else default)
        r = fallback(getattr(ufunc, method), name, inputs, kwargs, kind,
                     what=f"the ufunc {name!r} (not one of NumPy's own: np.frompyfunc's, "
                          f"another library's)")
        out = kwargs.get("out") if method != "at" else None
        if out is None:
            return r
        if not isinstance(out, tuple):
            return out  # (NumPy returns its out= array itself)
        if len(out) == 1:
            return r if out[0] is None else out[0]
        return tuple(r_i if o is None else o for o, r_i in zip(out, r))
    if method == "__call__" and not kwargs:
        r = _eager.call(name, inputs)
        if r is not None:
            return r
    if method in ("reduce", "accumulate", "reduceat") and ("array" in kwargs or
                                                          "indices" in kwargs):
        # np.add.reduce(array=x): NumPy 1.24 hands the keyword on beside the
        # input it made of it
        kwargs = {k: v for k, v in kwargs.items() if k not in ("array", "indices")}
    # (at's indices: anything NumPy's indexing takes)
    data = (inputs[:1] + inputs[2:]) if method == "at" else inputs
    everything = tuple(data) + tuple(v for v in (kwargs.get("out") or ())
                                       if isinstance(kwargs.get("out"), tuple)) \
        + ((kwargs["out"],) if "out" in kwargs and not isinstance(kwargs["out"], tuple) else ())
    if not all(takes(x) or x is None for x in everything):
        return NotImplemented
    kind = result_kind(inputs, NumpyArg if any(type(x) is NumpyArg for x in inputs) else default)
    if method == "__call__":
        if name == "divmod":
            return _call_divmod(inputs, dict(kwargs), kind)
        if name in _corder.SCALAR_ORDER and not kwargs and len(inputs) == 2:
            _check_left_scalar(name, *inputs)
        return call_ufunc(name, inputs, kwargs, kind)
    if method == "outer" and name in UFUNCS and UFUNCS[name][0] == 2 and len(inputs) == 2:
        a, b = (_core.operand(x, f"numpy.{name}.outer") for x in inputs)
        ta = a.t if a.t is not None else _C.full((), _core.scalar_arg(a), dtype=_core.hop_dtype(
            _np.asarray(_core.scalar_arg(a)).dtype if a.dtype is None else a.dtype, name))
        nb = b.t.ndim if b.t is not None else 0
        ta = ta.reshape(tuple(ta.shape) + (1,) * nb)
        return call_ufunc(name, (wrap(ndarray, ta), inputs[1]), kwargs, kind)
    if method == "at" and ((name in UFUNCS and UFUNCS[name][0] in (1, 2)) or ufunc.nout != 1):
        from ._index_routines import ufunc_at
        return ufunc_at(name, *inputs)
    if method in ("reduce", "accumulate", "reduceat") and len(inputs) == 1 + (method == "reduceat"):
        # (_ufunc_methods: None where hop computes nothing of its own)
        from . import _ufunc_methods as m
        r = m.reduce_method(ufunc, name, inputs[0], kwargs, kind) if method == "reduce" else \
            m.accumulate_method(ufunc, name, inputs[0], kwargs, kind) if method == "accumulate" \
            else m.reduceat_method(ufunc, name, inputs[0], inputs[1], kwargs, kind)
        if r is not None:
            return r
    return fallback(getattr(ufunc, method), f"{name}.{method}", inputs, kwargs, kind)


def _check_left_scalar(name, left, right):
    """`np.int8(1) > s` for a traced scalar s: NumPy's scalar hands it to
    the ufunc as a 0-d array of itself (s is no NumPy scalar it knows), the
    very call `np.array(1, np.int8) > s` and `np.greater(np.array(1,
    np.int8), s)` make, which NumPy orders by the ufunc's NaN rule where
    `np.int8(1) > np.complex128(s)` takes its scalar math (no NaN rule,
    _ndarray._scalar_math_complex).  Where the two would differ hop cannot
    tell which the program wrote: a break of hop.compile's graph (NumPy's
    code compares the values), hop.trace's UnsupportedError."""
    from ._ndarray import _scalar_math_complex
    if type(left) is not _np.ndarray or left.ndim != 0 or left.dtype.kind == "b" or \
            not isinstance(right, ndarray) or not right._scalar or not _core.is_traced(right._t) or \
            _scalar_math_complex(right, left[()]) is None:
        return
    from .._breaks import conversion
    conversion(_C.UnsupportedError,
               f"hop.numpy: numpy.{name} of a 0-d {left.dtype} array or NumPy scalar and a "
               f"traced complex scalar: NumPy orders `np.{left.dtype}(v) > s` by its scalar "
               f"math and `np.array(v) > s` by the ufunc's NaN rule, and both reach hop as the "
               f"same call; convert the constant to a Python number or put the traced value "
               f"on the left")


def tensor_array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """hop.Tensor.__array_ufunc__: NumPy's ufuncs on hop tensors give hop
    tensors, with NumPy's dtypes."""
    _core.dispatched()
    return array_ufunc(ufunc, method, inputs, kwargs)


def symint_array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """hop.SymInt.__array_ufunc__: NumPy's ufuncs on a size or lifted int
    while hop traces (np.add(n, 1), and `np.float64(1.5) * n`, which
    NumPy's scalar hands to the ufunc) are NumPy code's: hop.numpy computes
    them, and the function returns NumPy's scalar (np.int64, np.float64),
    as eagerly.  (NumPy's own object loop gave Python ints.)"""
    return array_ufunc(ufunc, method, inputs, kwargs, NumpyArg)
