"""NumPy's ufunc methods and attributes on hop.numpy's ufuncs.

hop.numpy's ufuncs (hnp.add, hnp.sin, ... every name numpy has an np.ufunc
under) are plain Python functions, not instances of a class: the call
`hnp.add(a, b)` is the hottest path of hop.numpy, and a class's __call__
(a Python __call__ on a Python class, what a hop.numpy.ufunc class would
be) costs about 24 ns more per call (8% of a 16-element add, measured),
while no class hop could write would make `isinstance(hnp.add, np.ufunc)`
true (NumPy's ufunc type cannot be subclassed).  So each function carries
NumPy's methods and attributes itself: `hnp.add.reduce`, `.accumulate`,
`.reduceat`, `.outer`, `.at` and `nin nout nargs identity ntypes types
signature` (NumPy's own values: the loops NumPy has, which hop follows by
its type resolution; `__name__` is NumPy's name too: hnp.true_divide's is
'divide').

A method has one owner, _ufuncs.array_ufunc: it converts its data
arguments as hop.numpy's functions do (an np.ndarray or a list becomes a
hop.numpy array over it, a NumPy argument of a traced function a hop.numpy
view of it) and calls NumPy's method of the same name, which parses the
arguments (positional ones, defaults, its errors) and hands the call to
the hop array's __array_ufunc__, exactly as `np.add.reduce(x)` of a hop
array does.  What hop does not compute itself is NumPy's answer eagerly and
a graph break (hop.compile) or UnsupportedError (hop.trace) when traced:
_ufuncs.fallback.

The methods hop computes itself (reduce_method, accumulate_method,
reduceat_method below; outer and at in array_ufunc) are listed in
docs/ARCHITECTURE.md ("NumPy", "ufunc methods").
"""

import numpy as _np

from .. import _C
from . import _core
from ._ndarray import ndarray, NumpyArg, wrap

__all__ = ["attach", "reduce_method", "accumulate_method", "reduceat_method"]

_ATTRS = ("nin", "nout", "nargs", "identity", "ntypes", "types", "signature")
# method -> how many leading positional arguments are data (the rest:
# indices, keywords)
_DATA = {"reduce": 1, "accumulate": 1, "reduceat": 1, "outer": 2, "at": 1}


def _hop_array(x):
    """x as the data argument of a method of hop.numpy's ufunc: a hop.numpy
    array (or tensor, which keeps its kind) as it is, a NumPy argument of a
    traced function a hop.numpy view of its storage (as eager's call sees
    the np.ndarray), anything else hop.numpy's asarray of it (over an
    np.ndarray's memory: `at` writes reach it)."""
    if type(x) is NumpyArg:
        from ._direct import _as_array
        return _as_array(x)
    if isinstance(x, (ndarray, _C.Tensor)) or getattr(type(x), "__hop_tensor__", None) is not None:
        return x
    from ._funcs import asarray
    return asarray(x)


def _method(uf, method, qualname):
    bound = getattr(uf, method)
    ndata = _DATA[method]

    def call(*args, **kwargs):
        args = tuple(_hop_array(a) for a in args[:ndata]) + args[ndata:]
        if "array" in kwargs and ndata == 1 and not args:
            kwargs = dict(kwargs, array=_hop_array(kwargs["array"]))
        return bound(*args, **kwargs)
    call.__name__ = method
    call.__qualname__ = qualname
    call.__doc__ = f"numpy.{qualname} on hop arrays (see numpy.{qualname})."
    return call


def attach(fn, uf):
    """Gives hop.numpy's function fn of NumPy's ufunc uf uf's methods and
    attributes."""
    name = uf.__name__
    for attr in _ATTRS:
        setattr(fn, attr, getattr(uf, attr))
    for method in _DATA:
        setattr(fn, method, _method(uf, method, f"{name}.{method}"))
    fn.__name__ = fn.__qualname__ = name
    return fn


# ------------------------------------------------ the methods hop computes

def _out_arg(kwargs):
    """The out= of a method call as NumPy hands it to __array_ufunc__ (a
    1-tuple) or as given: its array, or None."""
    out = kwargs.get("out")
    if isinstance(out, tuple):
        if len(out) != 1:
            return out
        out = out[0]
    return out


def _concrete_shape(t):
    return all(type(d) is int for d in t.shape)


def _stand_in(t):
    """A read-only NumPy array of t's dtype and shape that costs no memory
    (zeros broadcast): NumPy's method on it checks the arguments, raises
    NumPy's errors and gives the result's dtype and shape."""
    return _np.broadcast_to(_np.zeros((), _core.np_dtype(t)), tuple(t.shape))


def _numpy_checks(uf, method, t, *args, **kwargs):
    """NumPy's method on a stand-in of t: its result (dtype, shape), or its
    exception raised."""
    import warnings
    with warnings.catch_warnings(), _np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return getattr(uf, method)(_stand_in(t), *args, **kwargs)


def _tensor(x, what):
    if isinstance(x, ndarray):
        return x._t
    if isinstance(x, _C.Tensor):
        return x
    return _core.operand(x, what).t


def accumulate_method(ufunc, name, x, kwargs, kind):
    """np.<ufunc>.accumulate(x, axis=0, dtype=None, out=None) that hop
    computes: NumPy's checks of the axis (its errors: a 0-d x, axis=None or
    several axes of more than one dimension), then add and multiply by
    cumsum and cumprod, maximum and minimum of real dtypes by a scan.  None
    where hop computes nothing of its own (the caller's fallback)."""
    t = _tensor(x, f"numpy.{name}.accumulate")
    if t is None:
        return None
    kw = dict(kwargs)
    axis = kw.pop("axis", 0)
    if t.ndim == 0:
        raise TypeError("cannot accumulate on a scalar")
    if axis is None or isinstance(axis, tuple):
        axes = tuple(range(t.ndim)) if axis is None else axis
        if len(axes) != 1:
            raise ValueError("accumulate does not allow multiple axes")
        axis = axes[0]
    if set(kw) - {"dtype", "out"}:
        return None
    out = _out_arg(kw)
    if out is not None and not (isinstance(out, ndarray) and not out._scalar):
        return None  # (an np.ndarray out: NumPy's, eagerly)
    if out is not None:
        kw["out"] = out
    from . import _funcs, _reductions
    if name == "add":
        return _funcs.cumsum(x, axis=axis, _kind=kind, **kw)
    if name == "multiply":
        return _funcs.cumprod(x, axis=axis, _kind=kind, **kw)
    if name in ("maximum", "minimum") and out is None and \
            _core.np_dtype(t).kind in "biuf" and _concrete_shape(t):
        return _reductions.extreme_accumulate(name, ufunc, x, t, axis, kw.get("dtype"), kind)
    return None


def reduce_method(ufunc, name, x, kwargs, kind):
    """np.<ufunc>.reduce(x, axis=0, dtype=None, out=None, keepdims=False,
    initial=<no value>, where=True) that hop computes: add, multiply,
    maximum, minimum, logical_or, logical_and by hop.numpy's sum, prod, max,
    min, any, all (maximum and minimum with dtype= on x cast first; the
    logical ones without dtype= and initial=), subtract along one axis
    (NumPy's loop subtracts in order: cumsum of the negated tail).  None
    where hop computes nothing of its own (the caller's fallback)."""
    from . import _funcs, _reductions
    from ._ufuncs import _REDUCE
    kw = dict(kwargs)
    axis = kw.pop("axis", 0)
    out = _out_arg(kw)
    if out is not None and not (isinstance(out, ndarray) and not out._scalar):
        return None  # (an np.ndarray out: NumPy's, eagerly)
    if "out" in kw:
        kw["out"] = out
    if name in _REDUCE:
        fn = getattr(_funcs, _REDUCE[name])
        if name in ("logical_or", "logical_and") and ("initial" in kw or "dtype" in kw):
            return None
        if name in ("maximum", "minimum") and kw.get("dtype") is not None:
            t = _tensor(x, f"numpy.{name}.reduce")
            if t is None or not _concrete_shape(t):
                return None
            dt = _np.dtype(kw.pop("dtype"))
            if _core.np_dtype(t) != dt:
                # (NumPy's loop of dtype= reads x cast unsafely: its checks
                # and result dtype on a stand-in)
                _numpy_checks(ufunc, "reduce", t.reshape(-1)[:1] if t.ndim else t, axis=None,
                              dtype=dt)
                x = wrap(ndarray, _core.cast(t, dt))
        elif "dtype" in kw and kw["dtype"] is None:
            del kw["dtype"]  # (max, min, any, all take no dtype=)
        return fn(x, axis=axis, _kind=kind, **kw)
    if name == "subtract":
        return _reductions.subtract_reduce(ufunc, x, axis, kw, kind)
    return None


def reduceat_method(ufunc, name, x, indices, kwargs, kind):
    """np.<ufunc>.reduceat(x, indices, axis=0, dtype=None, out=None) for
    add, multiply, maximum and minimum with concrete indices and sizes:
    each segment's reduce along the axis (NumPy's inner loop runs along the
    axis: add's pairwise sum, multiply's product in order), x[i] where an
    index is not below the next one.  None where hop computes nothing of
    its own (the caller's fallback)."""
    from . import _reductions
    if name not in ("add", "multiply", "maximum", "minimum"):
        return None
    t = _tensor(x, f"numpy.{name}.reduceat")
    kw = dict(kwargs)
    if t is None or not _concrete_shape(t) or set(kw) - {"axis", "dtype", "out"} or \
            _out_arg(kw) is not None:
        return None
    if isinstance(indices, (ndarray, _C.Tensor)):
        it = _tensor(indices, f"numpy.{name}.reduceat")
        if _C._is_proxy(it) or _core.is_traced(it):
            return None
        indices = it.numpy()
    if any(isinstance(i, _C.SymInt) for i in _np.ravel(_np.asarray(indices, dtype=object))):
        return None
    return _reductions.reduceat(ufunc, name, x, t, indices, kw.get("axis", 0), kw.get("dtype"),
                                kind)
