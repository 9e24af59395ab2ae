"""hop.numpy internals: dtypes, operands and NumPy 1.24's result types.

Every function of hop.numpy works on hop tensors (concrete or traced) and
gives NumPy's answer: its dtype is the one NumPy computes, found by asking
NumPy itself on stand-ins ("dummies") of the operands: empty arrays of the
operands' dtypes, and the values of scalars.  NumPy 1.24 casts by value
when scalars (Python numbers, NumPy scalars, 0-d arrays) meet arrays of the
same or a higher kind (`int8 array + 300 -> int16`, `float32 array / 70000
-> float64`), so the value of a 0-d operand can matter.  A concrete one is
its own stand-in; for a traced one (a reduction's result, say) every class
of values NumPy distinguishes is tried, and when they disagree the class of
the value is decided like Python's `if` on it: a data-dependent decision,
which hop.compile specialises on and hop.trace refuses.
"""

import itertools
import numbers

import numpy as _np

from .. import _breaks, _C, _exact
from .._reads import is_hop_module

__all__ = []

NAMES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float16", "float32", "float64", "complex64", "complex128")
_HOP = {_np.dtype(n): getattr(_C, n) for n in NAMES}
SUPPORTED = ", ".join(NAMES)


def hop_dtype(npd, what, makes=False):
    """The hop dtype of a NumPy dtype (of either byte order); DTypeError
    naming `what` otherwise.  While a trace runs, a dtype hop has no
    array of (float128, str, object, datetime64) and one in the other byte
    order (`>f4`, which NumPy keeps in the arrays it makes of it: an astype,
    a view, a captured array's copies) are a break of hop.compile's graph
    (NumPy's code runs it) and hop.trace's DTypeError.  makes: what makes
    an array of npd (astype, view), which a hop.numpy array of native order
    cannot be: the other byte order is a DTypeError eagerly too (an array
    hop takes in, hop.asarray(big_endian), is copied in native order)."""
    npd = _np.dtype(npd)
    d = _HOP.get(npd if npd.isnative else npd.newbyteorder("="))
    if d is None:
        msg = f"hop.numpy: {what}: NumPy dtype {_np.dtype(npd)} is not supported; hop " \
              f"supports {SUPPORTED}"
    elif not npd.isnative and npd.byteorder != "|" and (makes or tracing()):
        msg = f"hop.numpy: {what}: NumPy dtype {npd.str} is in the other byte order, which " \
              f"NumPy keeps in the arrays it makes of it; hop computes in native order"
    else:
        return d
    if tracing():
        from .._breaks import conversion
        conversion(_C.DTypeError, msg)
    raise _C.DTypeError(msg)


def check_rank(n, what):
    """hop's ShapeError (a ValueError) for a result of n > MAX_RANK dims,
    which NumPy (up to 32) would make: never another error's text (reshape's
    "cannot reshape array of size 6" of a size that fits)."""
    if n > _C.MAX_RANK:
        raise _C.ShapeError(f"hop.numpy: {what}: a result of {n} dims; hop arrays have at most "
                            f"{_C.MAX_RANK} (NumPy's 32)")


def kept_dtype(npd, what):
    """npd, a dtype NumPy keeps in the array it makes (a creation function's
    dtype=, array/asarray/copy of an ndarray, *_like of one): one of the
    other byte order or with metadata, which NumPy keeps and a hop.numpy
    array (native, no metadata) cannot, is hop's DTypeError (a break of
    hop.compile's graph while tracing), never silently another dtype."""
    npd = _np.dtype(npd)
    if not npd.isnative:
        hop_dtype(npd, what, makes=True)
    if npd.metadata is not None:
        msg = f"hop.numpy: {what}: NumPy dtype {npd} has metadata {dict(npd.metadata)!r}, " \
              f"which NumPy keeps in the arrays it makes of it; hop's arrays have none"
        if tracing():
            from .._breaks import conversion
            conversion(_C.DTypeError, msg)
        raise _C.DTypeError(msg)
    return npd


def np_dtype(t):
    """The NumPy dtype of a hop tensor."""
    return t.dtype.dtype


def tracing():
    return _C.tracing() is not None


def dispatched():
    """Marks the active trace, if any: NumPy's dispatch of a hop.Tensor sent
    a call to hop.numpy (_breaks.NUMPY_DISPATCH)."""
    tr = _C.tracing()
    if tr is not None:
        from .._breaks import NUMPY_DISPATCH
        tr.scratch[NUMPY_DISPATCH] = True


def numpy_warns(what, message, category, traced=False, replay=False, at=None):
    """NumPy's warning of a call (what: what the call does, for hop's
    error; message, category: NumPy's, a DeprecationWarning of an
    argument), given where NumPy gives it: at (module, line) of NumPy's
    own code, else the user's line.  Eagerly warned now; while tracing
    (or with traced: the call reads a traced value) a break of
    hop.compile's graph, so that the call runs eagerly and warns on every
    call, as NumPy (a warning at trace time would be the first call's
    only), hop.trace's UnsupportedError.  replay: a warning of the call's
    dtypes and arguments alone, never of values: in hop.compile's frame
    translator an effect it replays on every call (the graph goes on), in
    a trace of hop.trace given at trace time (the trace is of one call)."""
    where = None if at is None else (at[0].__file__, at[1], vars(at[0]))
    if _recording():
        # hop.compile's eager run that records a new path: the call that
        # follows it (the plan, which replays a warning of the dtypes, or
        # the eager run after a break, which warns) gives the warning, once
        if traced or not replay:
            _breaks.conversion(_C.UnsupportedError, f"hop.numpy: {what}: NumPy warns "
                                                    f"({category.__name__}: {message}) on "
                                                    f"every call")
        return
    if replay and _breaks.replayed_warning(message, category, where):
        return
    if traced or tracing() and (not replay or _breaks.in_compile_trace()):
        _breaks.conversion(_C.UnsupportedError, f"hop.numpy: {what}: NumPy warns "
                                                f"({category.__name__}: {message}) on every call")
    from .. import _paths
    if where is not None:
        _paths.warn_at(message, category, where)
    else:
        import warnings
        warnings.warn(message, category, stacklevel=_paths.user_stacklevel())


def complex_cast_warns(src, dst, what, traced=False):
    """NumPy's ComplexWarning for a cast of complex values (dtype src) into
    a real dtype dst that is not bool (NumPy's complex-to-bool cast tests
    for nonzero, silently): once per cast, whatever the values, an empty
    array's too.  A warning of the dtypes: replayed on every compiled call
    (numpy_warns)."""
    if _np.dtype(src).kind == "c" and _np.dtype(dst).kind in "iuf":
        numpy_warns(what, "Casting complex values to real discards the imaginary part",
                    _np.ComplexWarning, traced=traced, replay=not traced)


def python_ints_warn(values, npd, what):
    """NumPy 1.24's DeprecationWarning for each Python int of values (a
    number, or a list or tuple of them, nested) that an integer dtype npd
    (not bool) does not hold, converted into it (np.put(x, 0, 300) of a
    uint8 x): "The conversion of 300 to uint8 will fail in the future".  A
    warning of the call's arguments: replayed on every compiled call."""
    npd = _np.dtype(npd)
    if npd.kind not in "iu":
        return
    info = _np.iinfo(npd)
    stack = [values]
    while stack:
        v = stack.pop(0)
        if isinstance(v, (list, tuple)):
            stack[:0] = list(v)
        elif type(v) is int and not info.min <= v <= info.max:
            numpy_warns(what, f"NumPy will stop allowing conversion of out-of-bound Python "
                        f"integers to integer arrays.  The conversion of {v} to {npd} will fail "
                        f"in the future.\nFor the old behavior, usually:\n    "
                        f"np.array(value).astype(dtype)`\nwill give the desired result (the "
                        f"cast overflows).", DeprecationWarning, replay=True)


def fp_errors_reported():
    """Whether NumPy's floating-point error handling (numpy.errstate,
    numpy.seterr) now raises, calls, prints or logs for some kind of error,
    not only ignores or warns: each kind is 3 bits of geterrobj()'s mask,
    0 ignore, 1 warn, 2 raise, 3 call, 4 print, 5 log (read in C, as NumPy's
    ufuncs read it: python/_C/numpy_call.c)."""
    return _C._np_fp_reported()


def _recording():
    from .._paths import recording
    return recording()


def is_traced(t):
    return _C._is_proxy(t)


# ------------------------------------------------------------------ operands

class Opnd:
    """One operand of a NumPy function: a tensor (t), or a scalar (value: a
    Python number, a NumPy scalar or a SymInt).  dtype is the NumPy dtype of
    a tensor or NumPy scalar, None for a Python number or SymInt.  tests:
    the value-class conditions decided on its value so far (result_dtypes),
    so that a second question on the same operand (the loop probe of
    _ufuncs._k_order) reads the answer instead of branching on it again."""

    __slots__ = ("t", "value", "dtype", "tests")

    def __init__(self, t=None, value=None, dtype=None):
        self.t = t
        self.value = value
        self.dtype = dtype
        self.tests = None

    @property
    def ndim(self):
        return self.t.ndim if self.t is not None else 0

    def known(self):
        """Whether the value of a scalar operand is known now (never while
        hop.compile records a call's path: that run must decide what the
        trace decides, in the same order)."""
        if self.t is not None:
            return not tracing() and not is_traced(self.t) and not _recording()
        return not isinstance(self.value, _C.SymInt)


def tensor_of(x):
    """The hop tensor of an array-like hop.numpy understands, or None."""
    if isinstance(x, _C.Tensor):
        return x
    get = getattr(type(x), "__hop_tensor__", None)
    if get is not None:
        return get(x)
    if isinstance(x, _np.ndarray):
        return from_numpy(x)
    return None


def from_numpy(a):
    """A hop tensor over ndarray a, without a copy when it can be wrapped
    (a copy in native byte order of a big-endian one).  While tracing, one
    tensor per array and trace (so an array used twice is one captured
    input), kept alive by the trace.  A dtype with metadata, which NumPy
    keeps in its results (ufuncs' too) and hop's dtypes cannot hold, is
    kept_dtype's DTypeError (the C fast paths leave such an array here:
    hop_py__np_borrow)."""
    hop_dtype(a.dtype, "array")
    if a.dtype.metadata is not None:
        kept_dtype(a.dtype, "array")
    orig = a
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    tr = _C.tracing()
    if tr is None:
        return _C.asarray(a)
    key = ("hop.numpy array", id(orig))
    hit = tr.scratch.get(key)
    if hit is not None and hit[0] is orig:
        return hit[1]
    t = _C.asarray(a)
    tr.scratch[key] = (orig, t)
    return t


def operand(x, what):
    """x as an Opnd; TypeError for what hop.numpy cannot take."""
    if isinstance(x, bool) or (isinstance(x, numbers.Number) and
                               isinstance(x, (int, float)) and not isinstance(x, _np.generic)):
        return Opnd(value=x)
    if isinstance(x, _C.SymInt):
        return Opnd(value=x)
    if isinstance(x, complex):
        return Opnd(value=x)
    if isinstance(x, _np.generic):
        hop_dtype(x.dtype, what)
        return Opnd(value=x, dtype=x.dtype)
    t = tensor_of(x)
    if t is not None:
        return Opnd(t=t, dtype=np_dtype(t))
    if isinstance(x, (list, tuple, range)):
        from ._funcs import array  # lists of arrays and traced scalars are stacked
        t = array(list(x) if isinstance(x, range) else x)._t
        return Opnd(t=t, dtype=np_dtype(t))
    if _array_like(x):
        # NumPy's array of an object of the array protocols (a PIL image, a
        # pandas frame, a memoryview): its memory where NumPy's asarray shares it
        return operand(_np.asarray(x), what)
    raise TypeError(f"hop.numpy: {what}: unsupported operand type {type(x).__name__}")


def _array_like(x):
    """Whether NumPy makes an array of x through one of its protocols (not
    one of the arrays, tensors and scalars hop.numpy takes itself)."""
    if isinstance(x, (_C.Tensor, _np.generic, _np.ndarray)) or \
            getattr(type(x), "__hop_tensor__", None) is not None:
        return False
    return isinstance(x, memoryview) or any(
        hasattr(x, name) for name in ("__array__", "__array_interface__", "__array_struct__"))


def scalar_arg(o):
    """A scalar operand as an op takes it: a Python number or a SymInt."""
    v = o.value
    if isinstance(v, _np.generic):
        return v.item()
    return v


# ------------------------------------------------------------- result types

# Stand-ins for each class of values NumPy's min_scalar_type tells apart,
# with the test that puts a value in the class.  A float with |v| < 65000
# (or not finite) is float16, below 3.4e38 float32; a non-negative integer
# uint8 below 256, uint16 below 65536, ...; a negative one int8 from -128.
# The classes of integer values NumPy 1.24 casts alike (its min_scalar_type
# of a value, and whether the value fits the signed type of that width).
_INT_CLASSES = [(0, 127, 0), (128, 255, 128), (256, 32767, 256), (32768, 65535, 32768),
                (65536, 2**31 - 1, 65536), (2**31, 2**32 - 1, 2**31),
                (2**32, 2**63 - 1, 2**32), (2**63, 2**64 - 1, 2**63),
                (-128, -1, -1), (-32768, -129, -129),
                (-2**31, -32769, -32769), (-2**63, -2**31 - 1, -2**31 - 1)]
_FLOAT_CLASSES = [(65000.0, 0.0), (3.4e38, 1e5), (float("inf"), 1e300)]


def _dummy_array(dtype):
    return _np.empty(0, dtype)


def _value_classes(o):
    """(stand-in, test) per class of values a traced scalar operand may be in;
    test(v) gives the condition (a bool, a SymInt comparison or a traced
    bool tensor) that the value is in the class."""
    dt = o.dtype if o.dtype is not None else _np.dtype(_np.int64)
    if dt == _np.dtype(_np.complex128):
        # NumPy 1.24's min_scalar_type of a complex128 value: complex64 when
        # both parts lie strictly within +-3.4e38 (a NaN or an infinite part
        # does not), else complex128
        return [(_np.zeros((), dt), ("cfits", 3.4e38)), (_np.full((), _np.inf, dt), None)]
    if dt.kind == "c":
        return [(_np.zeros((), dt), None)]
    if dt.kind == "b":
        return [(_np.zeros((), dt), None)]
    if dt.kind == "f":
        fmax = float(_np.finfo(dt).max)
        out = []
        for bound, rep in _FLOAT_CLASSES:
            if rep <= fmax:
                out.append((_np.full((), rep, dt), ("abs<", bound)))
        return out
    info = _np.iinfo(dt)
    out = []
    for lo, hi, rep in _INT_CLASSES:
        if info.min <= rep <= info.max:
            out.append((_np.full((), rep, dt) if o.dtype is not None else rep, ("in", lo, hi)))
    return out


def _test(o, cond):
    """The condition cond on operand o's value."""
    if cond[0] == "in":
        lo, hi = cond[1], cond[2]
        if o.t is None:  # a SymInt: decided through the ShapeEnv, with guards
            return lo <= o.value <= hi
        # Bounds outside the dtype's range are no condition (and compared
        # as a weak scalar they would wrap: int8 <= 255 is int8 <= -1).
        info = _np.iinfo(o.dtype)
        tests = ([_C.ge(o.t, lo)] if lo > info.min else []) + \
            ([_C.le(o.t, hi)] if hi < info.max else [])
        if not tests:
            return True
        return tests[0] if len(tests) == 1 else _C.logical_and(tests[0], tests[1])
    bound = cond[1]
    if cond[0] == "cfits":
        re, im = _C.abs(_C._op("real", o.t)), _C.abs(_C._op("imag", o.t))
        return _C.logical_and(_C.lt(re, bound), _C.lt(im, bound))
    a = _C.abs(o.t)
    return _C.logical_or(_C.lt(a, bound), _C.ne(a - a, 0))  # |v| < bound, or not finite


def decide(cond, why):
    """Python's truth of cond: a bool, or a traced/concrete bool tensor.
    While tracing this is a data-dependent decision: hop.compile specialises
    on it, hop.trace raises a TraceError saying why it was needed."""
    if isinstance(cond, bool):
        return cond
    try:
        return bool(cond)
    except _C.TraceError as e:
        if not str(e).startswith("bool() of a traced tensor is data-dependent"):
            raise  # from the rest of the function, which path specialisation traces here
        raise _C.TraceError(f"hop.numpy: {why} depends on the data, which hop.trace cannot "
                            f"decide ({e}); hop.compile specialises on it, or cast explicitly") \
            from None


def _decided(o, cond, what):
    """decide() of condition cond on operand o's value, once per operand:
    each decision on a traced value is a branch point of hop.compile's path
    specialisation, and one question asked twice (the result dtype, then
    the loop NumPy takes) would be two branches where the eager run that
    records the path may ask once."""
    if o.tests is None:
        o.tests = {}
    v = o.tests.get(cond)
    if v is None:
        v = o.tests[cond] = decide(
            _test(o, cond), f"{what}: the result dtype (NumPy 1.24 casts a scalar by its value)")
    return v


def _dtypes(res):
    if isinstance(res, tuple):
        return tuple(_np.asarray(r).dtype for r in res)
    return (_np.asarray(res).dtype,)


def numpy_probe(fn, *args, **kwargs):
    """fn(*args, **kwargs), a NumPy call on stand-ins that tells hop what
    NumPy's would give (a dtype), under errstate(all='ignore').  NumPy
    clears the thread's floating-point flags before its loops: those hop's
    kernels raised before are put back, for the checked call that reads
    them after (_fpcheck: np.average's product's overflow)."""
    raised = _C._fp_status()
    try:
        with _np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    finally:
        if raised:
            _C._fp_note(raised)


def result_dtypes(fn, ops, what):
    """The dtypes NumPy's fn(*operands) gives (a tuple, one per output),
    computed on stand-ins.  NumPy's own TypeError (an unsupported loop, bool
    negative) is raised as NumPy raises it."""
    fixed, unknown = [], []
    any_array = any(o.t is not None and o.ndim > 0 for o in ops)
    for i, o in enumerate(ops):
        if o.t is not None and o.ndim > 0:
            fixed.append(_dummy_array(o.dtype))
        elif o.t is not None:
            if o.known():
                fixed.append(o.t.numpy())
            elif not any_array:
                fixed.append(_np.zeros((), o.dtype))  # value-based casting needs an array
            else:
                fixed.append(None)
                unknown.append(i)
        elif isinstance(o.value, _C.SymInt):
            if any_array:
                fixed.append(None)
                unknown.append(i)
            else:
                fixed.append(0)
        else:
            fixed.append(o.value)

    def run(args):
        return _dtypes(numpy_probe(fn, *args))

    if not unknown:
        return run(fixed)
    # Every combination of value classes of the unknown scalars (usually one).
    classes = [_value_classes(ops[i]) for i in unknown]
    results = {}
    for key in itertools.product(*[range(len(c)) for c in classes]):
        args = list(fixed)
        for j, c in enumerate(key):
            args[unknown[j]] = classes[j][c][0]
        results[key] = run(args)
    if len(set(results.values())) == 1:
        return next(iter(results.values()))
    # The values decide: find the class of each, one condition at a time,
    # skipping the conditions the result does not depend on.
    chosen = ()
    for j, i in enumerate(unknown):
        n = len(classes[j])
        pick = n - 1
        for c in range(n - 1):
            rest = {r for k, r in results.items() if k[:j] == chosen and k[j] >= c}
            if len(rest) == 1:
                pick = c
                break
            if _decided(ops[i], classes[j][c][1], what):
                pick = c
                break
        chosen += (pick,)
    return results[chosen]


def result_dtype(ops, what, extra=()):
    """NumPy's result_type of the operands ops (and the dtypes extra):
    result_dtypes of np.result_type, so scalars are cast by their values."""
    return result_dtypes(lambda *d: _np.empty(0, _np.result_type(*d, *extra)), ops, what)[0]


def promoted_dtype(ts):
    """The dtype NumPy promotes arrays of the tensors ts' dtypes to, as
    array coercion, concatenate and dot do (no casting by value: each is an
    array, whatever its shape)."""
    return _np.result_type(*[np_dtype(t) for t in ts])


def promote(*ts):
    """The tensors ts, each cast to their promoted_dtype."""
    dt = promoted_dtype(ts)
    return tuple(cast(t, dt) for t in ts)


def over(op, x, axes, keepdims):
    """op (_C.sum, _C.mean, _C.any, _C.all, ...) of tensor x over axes (None:
    all of them) as NumPy reduces: no axes (NumPy's axis=()) reduce nothing,
    each element is its own slice, where hop's empty dim list means every
    dim.  That case reduces over a new last dim of size 1, so the result has
    op's dtype and x's shape."""
    if axes is None:
        return op(x, None, bool(keepdims))
    if len(axes) == 0:
        r = op(x.unsqueeze(x.ndim), [x.ndim], False)
        if op in (_C.sum, _C.mean) and np_dtype(r).kind in "fc":
            # NumPy's sum over no axes starts each element at its identity:
            # 0 + (-0.0) is 0.0 (np.sum(np.array(-0.0)) is 0.0); hop's prod
            # kernel starts at 1 itself (1 * (inf+0j) is inf+nanj, NumPy's)
            zero = complex_scalar(0j, np_dtype(r)) if np_dtype(r).kind == "c" else \
                _C.zeros((), dtype=r.dtype)
            r = _C.add(zero, r)
        return r
    return op(x, list(axes), bool(keepdims))


def cast(t, npd):
    """t converted to NumPy dtype npd (t itself when it has it).  A float
    converted to a signed or 8-bit integer dtype out of its range is what
    NumPy's x86-64 loops give (a truncation to int32, or int64, whose
    out-of-range value is INT_MIN, then the low bits), where hop's own
    conversion saturates.  To uint32 NumPy's answer for a value out of
    (-2**31 - 1, 2**32) depends on the array's length (its SIMD loop and its
    scalar tail differ); hop gives the scalar tail's (int64, then the low
    bits) everywhere, which both agree with inside that range, and under
    hop.compile a float32/float64 array with a value outside it runs the call
    eagerly (unknown_if): NumPy's own loops answer (hop.trace, hop.grad and
    hop.vmap raise hop.CheckError: checking).  float16 values go
    through NumPy's scalar loop whatever the length."""
    src = np_dtype(t)
    if src == npd:
        return t
    npd = _np.dtype(npd)
    if src.kind == "c" and npd.kind in "iu":
        # NumPy converts the real part as it converts a float (hop's own
        # conversion of a complex saturated: -3+1j to uint8 was 0, not 253)
        re = _C._op("real", t)
        return cast(re, npd)
    if src.kind == "f" and npd == _np.dtype(_np.uint64):
        # NumPy's x86-64 loop: below 2**63 through int64 (-3.0 is 2**64 - 3),
        # up to 2**64 exact, beyond it 0, and NaN or below -2**63 2**63
        x = t.to(_C.float64) if src != _np.dtype(_np.float64) else t
        lo = _C.logical_and(_C.ge(x, -2.0 ** 63), _C.lt(x, 2.0 ** 63))
        hi = _C.logical_and(_C.ge(x, 2.0 ** 63), _C.lt(x, 2.0 ** 64))
        big = _C.ge(x, 2.0 ** 64)
        top = _C.full((), -2 ** 63, dtype=_C.int64).to(_C.uint64)  # 2**63
        u = _C.where(hi, t.to(_C.uint64), _C.where(big, _C.zeros((), dtype=_C.uint64), top))
        return _C.where(lo, _C.where(lo, x, _C.zeros((), dtype=_C.float64)).to(_C.int64)
                        .to(_C.uint64), u)
    if src.kind == "f" and npd.kind in "iu" and npd != _np.dtype(_np.uint64):
        x = t.to(_C.float64) if src != _np.dtype(_np.float64) else t
        t64 = t.to(_C.int64)  # exact for |x| < 2**63
        if npd in (_np.dtype(_np.int64), _np.dtype(_np.uint32)):
            ok = _C.logical_and(_C.ge(x, -2.0 ** 63), _C.lt(x, 2.0 ** 63))  # nan: not ok
            v = _C.where(ok, t64, _C.full((), -2 ** 63, dtype=_C.int64))
            if npd == _np.dtype(_np.int64):
                return v
            v = v.to(_C.uint32)
            if checking() and src.itemsize >= 4:
                # out of (-2**31 - 1, 2**32) or NaN, NumPy's answer depends on
                # which of its loops takes the element: the call runs eagerly
                agree = _C.logical_and(_C.gt(x, -2147483649.0), _C.lt(x, 4294967296.0))
                v = _exact.checked(unknown_if(_C.logical_not(_C.all(agree, None, False)), v,
                                               CHECK_CAST))
            return v
        ok = _C.logical_and(_C.gt(x, -2147483649.0), _C.lt(x, 2147483648.0))
        v = _C.where(ok, t64, _C.full((), -2 ** 31, dtype=_C.int64))
        return v.to(hop_dtype(npd, "astype"))  # the low bits (integer narrowing wraps)
    return t.to(hop_dtype(npd, "astype"))


def as_compute(o, npd):
    """Operand o in dtype npd for an op: a tensor cast to it, or a scalar
    (a Python value: the op takes it as a weak scalar of npd's kind)."""
    if o.t is not None:
        return cast(o.t, npd)
    v = scalar_arg(o)
    if isinstance(v, _C.SymInt):
        return v
    kind = _np.dtype(npd).kind
    if kind == "c" or isinstance(v, complex):
        return complex_scalar(complex(v), npd)
    if kind == "b":
        return bool(v)
    big = isinstance(v, int) and not -2**63 <= v < 2**63
    if big and not 0 <= v < 2**64:  # NumPy computes with it in an object array
        hop_dtype(_np.dtype(object), f"the Python int {v} (beyond int64 and uint64)")
    if kind in "iu":
        if big:  # a uint64 op's operand beyond int64 (ops take int64 scalars)
            return cast(_C.full((), v - 2**64, dtype=_C.int64), npd)
        return int(v) if not isinstance(v, float) else v
    # an int stays an int (a weak scalar of the float op: x * 2 is mul(x, 2))
    return v if isinstance(v, int) and not isinstance(v, bool) and not big else float(v)


def complex_scalar(v, npd):
    """A complex number as a 0-d tensor of complex dtype npd (hop's scalar
    operands are real: the parts are two constants of the graph)."""
    npd = _np.dtype(npd)
    if npd.kind != "c":
        npd = _np.dtype(_np.complex128)
    part = _C.float32 if npd == _np.dtype(_np.complex64) else _C.float64
    re = _C.full((), v.real, dtype=part)
    im = _C.full((), v.imag, dtype=part)
    return _C._op("complex", re, im)


def ufunc_cast_error(name, have, want, casting, output=True, i=0):
    """NumPy's own exception for a ufunc's casting failure (a UFuncTypeError,
    a TypeError), with NumPy's message."""
    from numpy.core import _exceptions
    uf = getattr(_np, name, None)
    if not isinstance(uf, _np.ufunc):  # (np.clip is a function; its ufunc is umath's)
        uf = getattr(_np.core.umath, name, None)
    cls = _exceptions._UFuncOutputCastingError if output else _exceptions._UFuncInputCastingError
    if isinstance(uf, _np.ufunc):
        return cls(uf, casting, _np.dtype(have), _np.dtype(want), i)
    return TypeError(f"Cannot cast ufunc '{name}' {'output' if output else 'input'} from "
                     f"{_np.dtype(have)!r} to {_np.dtype(want)!r} with casting rule {casting!r}")


# ------------------------------------------------------------------- errors

# The exceptions NumPy raises for a program's values (an index out of range,
# shapes that do not broadcast, a cast the rules forbid, a singular matrix),
# and hop's classes for the same: hop.numpy raises them where NumPy would.
_VALUE_ERRORS = (IndexError, ValueError, TypeError, ArithmeticError, _np.linalg.LinAlgError)
# hop's limits (a function, dtype or form it does not implement; a decision
# a trace cannot make): hop's answer, not NumPy's.
_LIMITS = (_C.UnsupportedError, _C.TraceError, _C.GuardError, _C.DTypeError)


def not_numpys(e):
    """e, marked as hop.numpy's own answer where NumPy 1.24 has none to give
    (it crashes): hop.compile raises it from the trace and never lets NumPy
    decide (raised_as_numpy)."""
    e._hop_not_numpys = True
    return e


def compiling():
    """Whether hop.compile traces the function's own code now (not a body of
    a HOP, not hop.trace/grad/vmap): where a run-time check may hand a call
    back to eager (unknown_if)."""
    from .._breaks import _compiling
    return _compiling() is not None


# fail_if's kinds (include/hop/ops.h, HOP_CHECK_KIND_LIST): what a failed
# check says
CHECK_CUTOFF, CHECK_ZERO_SIGN, CHECK_CAST = \
    _C.CHECK_NUMPY_CUTOFF, _C.CHECK_NUMPY_ZERO_SIGN, _C.CHECK_NUMPY_CAST
CHECK_TIES, CHECK_NAN_PATH = _C.CHECK_NUMPY_TIES, _C.CHECK_NUMPY_NAN_PATH
CHECK_WARNS, CHECK_EMPTY = _C.CHECK_NUMPY_WARNS, _C.CHECK_NUMPY_EMPTY
CHECK_OVERFLOW, CHECK_INDEX = _C.CHECK_NUMPY_SCALAR_OVERFLOW, _C.CHECK_NUMPY_INDEX


def checking():
    """Whether a value traced now may be guarded by a run-time check
    (unknown_if): in any trace, at a function's own level or inside a HOP
    body (hop.map, hop.cond, a loop).  A failed check raises hop.CheckError
    from the whole plan (a body's fail_if is the body's value's, batched
    flags reduced with any): hop.compile then runs the whole call eagerly,
    and hop.trace, hop.grad and hop.vmap, which have no eager call to hand
    it to, raise it.  Not eagerly (no trace: hop's own answer)."""
    return _C.tracing() is not None


def unknown_if(flag, r, kind):
    """r, through the op fail_if: the plan raises hop.CheckError (kind's
    message, a code of HOP_CHECK_KIND_LIST) when it runs with any element
    of the bool tensor flag true, NumPy's answer being one hop cannot know
    (the sign of zero NumPy's SIMD max keeps, a SIMD cast's NaN, a rank at
    its cutoff).  hop.compile then runs the call eagerly, so NumPy gives
    it; hop.trace, hop.grad and hop.vmap, which have no eager call to hand
    it to, raise the error.  r is the op's result (a view of r), so the
    check is part of r's lineage and runs before r is used."""
    return _C._op("fail_if", r, flag, kind)


_DEFERRED = "hop.numpy zero sign"  # Trace.scratch: {node name of r: flag maker}


def memo_state():
    """Inside a side of a merged branch (hop.compile's path specialisation
    runs the function again there, replaying the ops before the branch from
    its memo), the memo's state before an op, for replayed(); else None."""
    tr = _C.tracing()
    if tr is None or _C._trace_depth() == 1:
        return None
    return tr._memo("state")


def replayed(before):
    """Whether the op since memo_state() gave the node of the run before the
    branch (the memo replayed it, nothing recorded) rather than a new one."""
    now = _C.tracing()._memo("state")
    return now[0] == before[0] and now[1] == before[1] + 1


def defer_zero_sign(r, flag):
    """Registers r, a float max/min whose zero's sign NumPy's SIMD loop picks,
    with flag(), which traces the 0-d bool "NumPy's sign is unknown here":
    checked_outputs makes the check only for the results and writes r
    reaches with its sign."""
    tr = _C.tracing()
    name = _C._proxy_node(r) if tr is not None else None
    if name is not None:
        tr.scratch.setdefault(_DEFERRED, {})[name] = flag


def checked_outputs(tr, outs):
    """outs, the traced values a compiled function's plan hands out (its
    results and the writes into the caller's arrays), each that a deferred
    max/min (defer_zero_sign) reaches with its sign of zero made to hand the
    call to eager when that sign is unknown (unknown_if).  Values handed to
    Python at a break or to a replayed effect are _exact's: they do not come
    here."""
    return _reached_checked(tr, outs, tr.scratch.pop(_DEFERRED, None), False)


def body_begin(tr, hop, inputs):
    """Opens the scope of a HOP body hop._hops._apply is about to trace (the
    tracer depth now is the body's; hop: the HOP's name; inputs: what its
    explicit inputs stand for, _exact.Body): a float max/min made in it is
    checked at its end (body_outputs) only where it reaches the body's
    results, as the function's own are at the trace's end, and its lineage
    is read out to the enclosing graphs (_exact._body_nodes).  Returns the
    scope for body_outputs and body_end."""
    scope = _exact.Body(_C._trace_depth(), hop, inputs)
    tr.scratch.setdefault(_exact.BODIES, []).append(scope)
    return scope


def defer_in_body(r, flag):
    """defer_zero_sign for a max/min made at the level of the innermost HOP
    body traced through body_begin; False (nothing deferred: check r where
    it is made) anywhere else (a body hop.grad or hop.vmap traces, a side of
    a data-dependent branch, a body of hop.trace's direct call)."""
    tr = _C.tracing()
    stack = tr.scratch.get(_exact.BODIES) if tr is not None else None
    name = _C._proxy_node(r)
    if not stack or stack[-1].depth != _C._trace_depth() or name is None:
        return False
    stack[-1].deferred[name] = flag
    return True


def body_outputs(tr, scope, outs):
    """outs, the traced results of the body of scope (body_begin), each that
    a max/min deferred in it reaches with its sign of zero checked (a
    body's fail_if fails the whole plan: hop.compile runs the whole call
    eagerly, hop.trace, hop.grad and hop.vmap raise hop.CheckError)."""
    pending, scope.deferred = scope.deferred, {}
    return _reached_checked(tr, outs, pending, True)


def body_end(tr, scope):
    """Closes scope (body_begin), whether or not its body returned."""
    stack = tr.scratch.get(_exact.BODIES)
    if stack and stack[-1] is scope:
        stack.pop()
    if not stack:
        # (the trace's state as before the body: a failed HOP call changes
        # nothing)
        tr.scratch.pop(_exact.BODIES, None)


def _reached_checked(tr, outs, pending, body):
    if not pending:
        return outs
    reached = _exact.reaching(tr, outs, pending, body)
    needed = sorted(set().union(*reached))
    if not needed:
        return outs
    flag = None
    for name in needed:
        f = pending[name]()
        flag = f if flag is None else _C.logical_or(flag, f)
    return [unknown_if(flag, v, CHECK_ZERO_SIGN) if hit else v
            for v, hit in zip(outs, reached)]


def raised_as_numpy(e):
    """Whether hop.numpy raised e on behalf of NumPy's semantics: e is of a
    class NumPy raises for a program's values, not one of hop's limits, and
    it came out of a call the program's code made into hop.numpy (a
    function, operator, method or attribute, also through NumPy's
    dispatch).  NumPy raises such an error too, and only after what the
    program did before the call (a write into an argument), so hop.compile
    lets the eager call raise it (_compile)."""
    if not isinstance(e, _VALUE_ERRORS) or isinstance(e, _LIMITS) or \
            getattr(e, "_hop_not_numpys", False):
        return False
    return _called_by_program(e)


def decided_by_values(e):
    """Whether e is a decision a trace cannot make (a DataDependentError)
    that a call the program made into hop.numpy met: whether a mask's count
    broadcasts against a slice's length (`a[a > 2] += a[:2]`).  NumPy
    decides it on the values, raising its ValueError or answering, so
    hop.compile lets the eager call decide (_compile)."""
    return isinstance(e, _C.DataDependentError) and _called_by_program(e)


def _called_by_program(e):
    """Whether e came out of a call the program's code made into hop.numpy."""
    tb = e.__traceback__
    outer = None
    while tb is not None:
        name = tb.tb_frame.f_globals.get("__name__") or ""
        # the boundary: a frame of hop.numpy called by one outside hop (the
        # program's, or NumPy's Python code dispatching to hop.numpy); hop's
        # own machinery calling hop.numpy (the trace setting up the
        # arguments) is not a call of the program's
        if outer is not None and not is_hop_module(outer) and \
                (name == "hop.numpy" or name.startswith("hop.numpy.")):
            return True
        outer = name
        tb = tb.tb_next
    return False


def shape_text(dims, ending=""):
    """NumPy's convert_shape_to_string: (2,3), (5,), a leading unknown
    dimension left out and a later one named newaxis.  Every caller words
    an error: one naming a symbol of a trace is counted as the trace's
    (Trace.errors: caught, it makes the trace one with static sizes)."""
    dims = list(dims)
    if any(isinstance(d, _C.SymInt) for d in dims):
        _C._trace_error_raised()
    i = 0
    while i < len(dims) and dims[i] < 0:
        i += 1
    if i == len(dims):
        return "()" + ending
    parts = [str(dims[i])] + ["newaxis" if d < 0 else str(d) for d in dims[i + 1:]]
    if len(dims) == 1:
        return f"({parts[0]},){ending}"
    return "(" + ",".join(parts) + ")" + ending
