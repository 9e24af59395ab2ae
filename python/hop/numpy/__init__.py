"""hop.numpy: NumPy's API over hop tensors, eager and traced.

    import hop.numpy as hnp
    x = hnp.asarray(np.arange(6.0).reshape(2, 3))
    hnp.exp(x - x.max(axis=1, keepdims=True))      # a hop.numpy.ndarray

    @hop.compile
    def softmax(x):                                 # plain NumPy code
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    softmax(np.random.rand(4, 5))                   # ndarray in, ndarray out

Every function has NumPy 1.24's signature, semantics and dtypes (casting of
scalars by value included); eagerly it runs hop's kernels, under hop.trace
and hop.compile it records hop ops.  NumPy's own functions reach it through
__array_ufunc__ and __array_function__, of hop.numpy arrays and of
hop.Tensor (whose results stay tensors).  What hop does not implement is a
hop.UnsupportedError naming the function while tracing, and computed by
NumPy on the arrays' memory eagerly.  Floating-point errors warn (or raise)
as NumPy's do under NumPy's error state: a ufunc whose kernels raised a
flag NumPy warns for runs again by NumPy, eagerly and compiled.  See
docs/ARCHITECTURE.md, "NumPy" and "Floating-point warnings".
"""
import builtins as _builtins
import math as _math

import numpy as _np

from .. import _C
from .._pytree import register_pytree_node as _register
from ._ndarray import ndarray, NumpyArg
from . import _direct, _eager, _eager_shape, _funcs, _products, _ufunc_methods
from ._funcs import *  # noqa: F401,F403 (the functions)
from ._ufuncs import UFUNCS as _UFUNCS, _TWO_OUT, call_ufunc as _call_ufunc, \
    tensor_array_ufunc
from ._funcs import tensor_array_function
from . import _lib, _twodim, _index_routines  # noqa: F401 (more functions: _funcs.PUBLIC)
from . import _sorting, _stats, _histograms, _sets, _mathfuncs, _polynomial  # noqa: F401
from . import _attrs  # noqa: F401 (the ndarray methods of those functions)
from . import linalg, fft  # noqa: F401 (numpy.linalg and numpy.fft)

globals().update({_k: _v for _k, _v in _funcs.PUBLIC.items() if _k not in globals()})
# (the user's array/asarray check the dtype NumPy would keep; _funcs' own are hop's calls)
array, asarray = _funcs.PUBLIC["array"], _funcs.PUBLIC["asarray"]

__all__ = ["linalg", "fft", "ndarray", "newaxis", "pi", "e", "inf", "nan", "dtype", "errstate"] + \
    list(_funcs.__all__)

from ._index_tricks import mgrid, ogrid, r_, c_, nditer  # noqa: E402 (NumPy's index tricks)
from ._vectorize import vectorize  # noqa: E402
__all__ += ["mgrid", "ogrid", "r_", "c_", "nditer", "vectorize"]

newaxis = None
pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
dtype = _np.dtype
errstate = _np.errstate  # NumPy's own: hop.numpy reads its state (its warnings are NumPy's)

# The dtypes, as NumPy's scalar types (hnp.float32(2.5), dtype=hnp.int8), the
# abstract ones (np.issubdtype(x.dtype, hnp.floating)) and NumPy's dtype
# helpers, which take hop.numpy arrays' dtypes (NumPy dtypes); complex64 and
# complex128 are hop's c64 and c128.
for _name in ("bool_", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
              "float16", "float32", "float64", "complex64", "complex128", "complex_", "csingle",
              "cdouble", "intp", "half", "single", "double", "byte",
              "ubyte", "short", "intc", "int_", "longlong", "ulonglong", "float_", "generic",
              "number", "integer", "signedinteger", "unsignedinteger", "inexact", "floating",
              "complexfloating", "typecodes", "sctypes", "issubdtype", "finfo", "iinfo",
              "AxisError", "index_exp", "s_", "True_", "False_", "mintypecode",
              "promote_types", "can_cast", "ndenumerate", "ndindex", "ushort", "uintc", "uint",
              "iterable", "base_repr", "binary_repr", "frompyfunc",
              # hop.numpy's repr/str read NumPy's print options (_attrs)
              "set_printoptions", "get_printoptions", "printoptions",
              # NumPy 1.24's other names of dtypes and constants, its type queries, and its
              # floating-point error state, which hop.numpy reads (errstate above)
              "cfloat", "singlecomplex", "uintp", "Inf", "Infinity", "NaN", "NAN", "NINF",
              "PINF", "NZERO", "PZERO", "infty", "euler_gamma", "little_endian", "ScalarType",
              "sctypeDict", "typename", "find_common_type", "obj2sctype", "sctype2char",
              "issctype", "issubsctype", "issubclass_", "maximum_sctype",
              "format_float_positional", "format_float_scientific", "seterr", "geterr",
              "seterrcall", "geterrcall", "setbufsize", "getbufsize"):
    if _name not in globals():
        globals()[_name] = getattr(_np, _name)
        __all__.append(_name)
UFuncTypeError = _np.core._exceptions.UFuncTypeError
__all__.append("UFuncTypeError")


def _make_ufunc(name):
    def ufunc(*args, **kwargs):
        if not kwargs:
            # the eager fast path (_eager), as np.exp(a) and a + b take it:
            # None where the general path must answer
            r = _eager.call(name, args)
            if r is not None:
                return r
        return _call_ufunc(name, args, kwargs, ndarray)
    ufunc.__doc__ = f"numpy.{name} on hop arrays: a hop.numpy.ndarray (see numpy.{name})."
    # NumPy's methods (reduce, accumulate, reduceat, outer, at) and attributes
    # (nin, nout, ..., its __name__): _ufunc_methods
    return _ufunc_methods.attach(ufunc, getattr(_np, name))


for _name in list(_UFUNCS) + list(_TWO_OUT) + ["isnat"]:
    if _name not in globals():
        globals()[_name] = _make_ufunc(_name)
        __all__.append(_name)
for _alias, _target in (("abs", "absolute"), ("conj", "conjugate"), ("bitwise_not", "invert"),
                        ("bitwise_invert", "invert")):
    globals()[_alias] = globals()[_target]
    __all__.append(_alias)


def divmod(x1, x2, /, out=None, **kwargs):
    from ._ufuncs import _call_divmod
    return _call_divmod((x1, x2), dict(kwargs, out=out) if out is not None else kwargs, ndarray)


_ufunc_methods.attach(divmod, _np.divmod)
__all__.append("divmod")
del _name, _alias, _target

# The user's calls of these functions see a traced function's NumPy array
# arguments as eager's calls see them (_direct): hnp.sum(x) is a hop.numpy
# array there too.  hop.numpy's own modules call _funcs' functions.
_direct.install(globals(), __all__,
                {_funcs.FUNCS[_f]: _f for _f in _eager._REDUCE_FUNCS if _f in _funcs.FUNCS},
                {_funcs.reshape: (_eager_shape.reshape, 2, 2),
                 _funcs.transpose: (_eager_shape.transpose, 1, 2),
                 _funcs.concatenate: (_eager_shape.concatenate, 1, 2),
                 _funcs.where: (_eager_shape.where, 3, 3),
                 _products.dot: (_eager_shape.dot, 2, 2)},
                {_funcs.FUNCS[_f]: _f for _f in _direct.C_PARAMETERS if _f in _funcs.FUNCS})
# zeros, ones, empty, asarray, the *_like functions, copy, arange and full: C callables that try
# the eager fast path (_eager_shape.zeros, ...) before the function above
for _name in ("zeros", "ones", "empty", "asarray", "zeros_like", "ones_like", "empty_like",
              "copy", "arange", "full"):
    globals()[_name] = _C._np_eager_method("create", _name, globals()[_name])
del _name


# ------------------------------------------------ pytrees and compile I/O

class _NumpyOut:
    """The structure node of a NumpyArg a traced function returns: rebuilt
    as an np.ndarray (or a NumPy scalar), what the function returns
    eagerly for np.ndarray arguments."""


class _Key:
    """A structure key of a hop.numpy array other than its NumPy-scalar flag,
    falsy as a writable array's key (False: code asking `bool(spec.keys)`
    reads "not a scalar"), pickled as the module's one instance (a saved
    GraphModule's structure).  _READ_ONLY: a read-only array (NumPy's view of
    a broadcast, a diagonal, a real array's imaginary part), rebuilt
    read-only as NumPy's is (a compiled `np.broadcast_to(a, s)` was
    writable, and a write into it reached the caller's array).  _COPY_VIEW:
    a writable eager view hop.numpy made as a copy (`G[::-1]`, `np.flip(G)`:
    ndarray._cp), whose writes must reach the array it views
    (_storage.eager_write): another structure, so no plan made for a plain
    array takes one (a plan writes into the copy alone), and hop.compile
    runs such a call eagerly (_compile._copy_view_argument)."""

    __slots__ = ("_text", "_name")

    def __init__(self, text, name):
        self._text, self._name = text, name

    def __bool__(self):
        return False

    def __repr__(self):
        return self._text

    def __reduce__(self):
        return self._name


_READ_ONLY = _Key("read-only", "_READ_ONLY")
_COPY_VIEW = _Key("copy-view", "_COPY_VIEW")


def _flatten(a):
    return (a._t,), _READ_ONLY if a._ro and not a._scalar else \
        _COPY_VIEW if a._cp is not None and not a._scalar else a._scalar


def _unflatten_array(cls):
    def unflatten(children, scalar):
        a = cls(children[0], scalar=bool(scalar))
        a._ro = scalar is _READ_ONLY
        return a
    return unflatten


def _unflatten_numpy(children, scalar):
    t = children[0]
    # (a plan's result as the fast NumPy call makes it: a new array without
    # elements in C order has NumPy's zero strides)
    a = _C._np_result(t) if isinstance(t, _C.Tensor) and not _C._is_proxy(t) else \
        t.numpy() if isinstance(t, _C.Tensor) else _np.asarray(t)
    if scalar is _READ_ONLY:
        a.flags.writeable = False
    return a[()] if scalar else a


_register(ndarray, _flatten, _unflatten_array(ndarray))
_register(NumpyArg, _flatten, _unflatten_array(NumpyArg))
_register(_NumpyOut, _flatten, _unflatten_numpy)


def _numpy_out_spec(spec):
    """spec with each NumpyArg node made an np.ndarray one (_NumpyOut)."""
    from .._pytree import Spec
    if spec.kind == "leaf" or spec.kind == "none":
        return spec
    cls = _NumpyOut if spec.cls is NumpyArg else spec.cls
    return Spec(spec.kind, spec.keys, [_numpy_out_spec(c) for c in spec.children], cls)


def _simple_out(spec):
    """For a plan's fast NumPy call (Plan.run_arrays): the tuple of which
    results are NumPy scalars when spec is one returned array or a tuple of
    two or more, else None."""
    from .._pytree import LEAF

    def one(s):  # (a read-only result is made by _unflatten_numpy)
        return s.kind == "custom" and s.cls is _NumpyOut and s.children == (LEAF,) and \
            s.keys is not _READ_ONLY
    if one(spec):
        return (bool(spec.keys),)
    if spec.kind == "tuple" and len(spec.children) > 1 and \
            _builtins.all(one(c) for c in spec.children):
        return tuple(bool(c.keys) for c in spec.children)
    return None


def _flat_arrays(runner):
    """For _Runner's fast hop.numpy call (hop._trace): n when runner's plan
    takes a tuple of n writable, non-0-d hop.numpy arrays (the node's
    context False) and nothing else (no constant, keyword, write-back or
    layout decision) and returns one such array, else -1.  Such a call
    passes each array's tensor and wraps the result, without the general
    path's flatten and rebuild (most of its ~70K instructions)."""
    from .._pytree import LEAF, Spec
    r, one = runner, Spec("custom", False, [LEAF], ndarray)
    spec = r.spec
    if r.kw or r._results is not None or r._order or r.writeback is not None or \
            _builtins.any(s is not None for s in r.statics) or _builtins.any(r.as_array) or \
            len(r.template) != 1 or r.template[0] is not None or list(r.sym_out) != [False]:
        return -1
    if spec.kind == "tuple" and r.out_spec == one and \
            _builtins.all(c == one for c in spec.children):
        return len(spec.children)
    return -1


def _wrap_arg(t, leaf=None):
    """A traced (or concrete) tensor of an np.ndarray argument, as the
    function sees it: argument `leaf` of the traced function's run (an
    operand of a HOP body when leaf is None: never written)."""
    a = NumpyArg(t, owned=False)
    if leaf is not None:
        a._role = leaf
        if a._run is not None:
            a._run.args[leaf] = a
    return a


def _array_agnostic_spec(spec):
    """spec with each hop.numpy array node made the plain tensor leaf it
    holds (for comparing the structures of cond's branches)."""
    from .._pytree import LEAF, Spec
    if spec.kind == "custom" and spec.cls in (ndarray, NumpyArg):
        return LEAF
    if spec.kind in ("leaf", "none"):
        return spec
    return Spec(spec.kind, spec.keys, [_array_agnostic_spec(c) for c in spec.children], spec.cls)


def _merge_array_specs(a, b):
    """The structure of a cond whose branches return a and b (equal but for
    array kinds): where they differ the kind a binary op would give (a
    tensor wins over a hop.numpy.ndarray, which wins over a NumPy
    argument's kind); a NumPy scalar only when both are."""
    from .._pytree import LEAF, Spec
    arrays = (ndarray, NumpyArg)
    a_arr = a.kind == "custom" and a.cls in arrays
    b_arr = b.kind == "custom" and b.cls in arrays
    if a_arr or b_arr:
        if not (a_arr and b_arr):
            return LEAF
        cls = ndarray if ndarray in (a.cls, b.cls) else NumpyArg
        return Spec("custom", bool(a.keys) and bool(b.keys), a.children, cls)
    if a.kind in ("leaf", "none"):
        return a
    return Spec(a.kind, a.keys, [_merge_array_specs(x, y) for x, y in
                                 zip(a.children, b.children)], a.cls)
