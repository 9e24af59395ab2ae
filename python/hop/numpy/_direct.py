"""hop.numpy's functions as the user's code calls them.

Eagerly, a NumPy array handed to a hop.numpy function is an np.ndarray, and
what comes back is hop.numpy's: `hnp.sum(x)` is a 0-d hop.numpy array,
`hnp.asarray(x)` a hop.numpy array over x's memory, `hnp.linalg.norm(a)` a
0-d hop.numpy array.  Under hop.trace and hop.compile the function's NumPy
array arguments are NumpyArgs, which keep NumPy's semantics for NumPy's own
functions (`np.sum(x)` reaches hop.numpy through __array_function__ with the
NumpyArg kind, and is a NumPy scalar, as eagerly).  A direct call of a
hop.numpy function from the user's code must answer as eager's does, so it
sees each NumpyArg as a hop.numpy array over the same storage (a view:
writes through it reach the argument, and read-only stays read-only), as
eager's call sees the np.ndarray.

Calls from hop.numpy's own modules pass through as they are: its
implementations call each other with the kind they mean (a NumpyArg
operand of np.linalg.cond's own svd keeps NumPy's kind).  hop's other
modules call them for the user's code (hop.compile's frame translator makes
the user's calls from its own frames), so those calls are converted."""

import functools
import sys
import types

import numpy as _np

from ._ndarray import NumpyArg, ndarray, view
from ._storage import Step

# NumPy's functions written in C bind their own arguments after the
# dispatcher, which takes every parameter by keyword, handed them to
# __array_function__ (np.where(c, x=a, y=b) reaches hop.numpy's where with
# x= and y=): a keyword the C function does not take is its TypeError.  Each
# is (the name its messages give, its parameters NumPy's dispatcher names
# otherwise, in order: None where it takes no keyword at all, an int where it
# takes exactly that many positional arguments).  The keywords both name
# (bincount's weights=) are the same parameter.
C_PARAMETERS = {
    _np.where: ("where", None),
    _np.inner: ("inner", None),
    _np.min_scalar_type: ("min_scalar_type", None),
    _np.vdot: ("vdot", 2),
    _np.bincount: ("bincount", ("list",)),
    _np.concatenate: ("concatenate", ("seq",)),
    _np.packbits: ("pack", ("in",)),
    _np.unpackbits: ("unpack", ("in",)),
    _np.shares_memory: ("shares_memory_impl", ("self", "other")),
    _np.may_share_memory: ("shares_memory_impl", ("self", "other")),
    _np.putmask: ("putmask", ("arr",)),
}


def check_keywords(np_fn, nargs, kwargs):
    """Raises NumPy's TypeError where its C function np_fn (C_PARAMETERS)
    would refuse nargs positional arguments and the keywords kwargs (not
    empty): a keyword where it takes none, or a required positional
    parameter neither given by position nor by the C function's name."""
    spec = C_PARAMETERS.get(np_fn)
    if spec is None:
        return
    name, params = spec
    if params is None:
        raise TypeError(f"{name}() takes no keyword arguments")
    if isinstance(params, int):
        raise TypeError(f"{name}() takes exactly {params} arguments ({nargs} given)")
    for i, p in enumerate(params):
        if i >= nargs and p not in kwargs:
            raise TypeError(f"{name}() missing required argument '{p}' (pos {i + 1})")


def _has_numpy_arg(values):
    for v in values:
        if type(v) is NumpyArg:
            return True
        if isinstance(v, (list, tuple)) and _has_numpy_arg(v):
            return True
    return False


_SAME = Step(lambda x: x, lambda x: x.view())


def _as_array(v):
    """v as eager's call would see it: a NumpyArg a hop.numpy array over its
    storage; lists and tuples of them item by item."""
    if type(v) is NumpyArg:
        return view(ndarray, v, _SAME, scalar=v._scalar, t=v._t)
    if isinstance(v, (list, tuple)) and _has_numpy_arg(v):
        items = [_as_array(x) for x in v]
        return items if type(v) is list else tuple(items) if type(v) is tuple else \
            type(v)(*items)  # (a namedtuple)
    return v


def _from_hop_numpy(frame):
    """Whether frame is hop.numpy's own code.  hop's other modules call these
    functions for the user's code (hop.compile's frame translator runs the
    user's call `hnp.where(...)` from its own frame), so they do not count."""
    name = frame.f_globals.get("__name__", "")
    return name == "hop.numpy" or name.startswith("hop.numpy.")


# NumPy's functions that keep an ndarray argument's dtype in their result
# where it is in the other byte order ('>f8' on x86: copies, views, reorders
# and selections of its elements; NumPy's ufuncs, reductions and products
# give native results, which hop.numpy's are).  A hop.numpy array is native
# (hop computes in native order), so eagerly these are hop's DTypeError for
# such an argument (kept_dtype's, as asarray's and copy's), never silently
# the native dtype; hop.compile runs such a call by NumPy (_trace.eager_array).
KEEPS_ORDER = frozenset((
    "array_split asarray_chkfinite atleast_1d atleast_2d atleast_3d broadcast_arrays "
    "broadcast_to compress delete diag diagflat diagonal dsplit einsum expand_dims extract "
    "flip fliplr flipud gradient hsplit insert meshgrid moveaxis msort nan_to_num pad "
    "partition ravel real_if_close repeat require reshape roll rollaxis rot90 setdiff1d sort "
    "split squeeze swapaxes take take_along_axis tile transpose trim_zeros unique "
    "vsplit").split())


# the positional arguments whose dtype the result keeps (the first, unless
# here: None for all of them) and the keywords that name one
_KEPT_ARG = {"compress": 1, "extract": 1, "meshgrid": None, "broadcast_arrays": None,
             "einsum": None}
_KEPT_KEYWORDS = frozenset(("a", "arr", "ary", "m", "ar", "ar1", "array", "f"))


def other_order(name, args, kwargs):
    """kept_dtype's DTypeError for name (one of KEEPS_ORDER) when its array
    argument (_KEPT_ARG) is an ndarray in the other byte order; an index or
    condition array of another order is NumPy's to take (its values)."""
    i = _KEPT_ARG.get(name, 0)
    vs = args if i is None else args[i:i + 1]
    if kwargs:
        vs += tuple(v for k, v in kwargs.items() if k in _KEPT_KEYWORDS)
    for v in vs:
        if isinstance(v, _np.ndarray) and not v.dtype.isnative:
            from ._core import kept_dtype
            kept_dtype(v.dtype, name)


def as_called(fn, np_fn=None, eager=None, c_fn=None, keeps=False):
    """fn as hop.numpy.<name> (or hop.numpy.linalg's, .fft's): its NumPy
    array arguments seen as hop.numpy arrays when the user's code calls it
    under a trace (the module's text, above).  np_fn: NumPy's function of a
    reduction the eager fast path takes (_eager._REDUCE_FUNCS): hnp.sum(a),
    hnp.sum(a, axis) and hnp.sum(a, axis=k) of a hop.numpy array go through
    the array's __array_function__ as np.sum(a) does (python/_C/np_eager.c),
    which is the same call: fn with a's kind.  eager: (the shape function's
    eager fast path (_eager_shape), its fewest and most positional
    arguments): a call of that many arguments and no keyword tries it first
    (it takes exact hop.numpy arrays only, never a NumpyArg), as fn itself
    would.  c_fn: NumPy's function written in C whose binding of keywords
    (check_keywords) fn's call checks.  keeps: fn keeps its argument's byte
    order (KEEPS_ORDER: other_order's check)."""
    fast, kinds = ndarray.__array_function__, (ndarray,)
    shape_fast, least, most = eager or (None, 0, -1)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if least <= len(args) <= most and not kwargs:
            r = shape_fast(*args)
            if r is not None:
                return r
        if np_fn is not None and args and type(args[0]) is ndarray and (
                (not kwargs and len(args) <= 2) or
                (len(args) == 1 and len(kwargs) == 1 and "axis" in kwargs)):
            return fast(args[0], np_fn, kinds, args, kwargs)
        if kwargs and c_fn is not None:
            check_keywords(c_fn, len(args), kwargs)
        if keeps:
            other_order(fn.__name__, args, kwargs)
        if (_has_numpy_arg(args) or _has_numpy_arg(kwargs.values())) and \
                not _from_hop_numpy(sys._getframe(1)):
            args = tuple(_as_array(a) for a in args)
            kwargs = {k: _as_array(v) for k, v in kwargs.items()}
        return fn(*args, **kwargs)
    call.__wrapped_by_hop__ = fn
    return call


def install(namespace, names, reductions=None, eager=None, c_fns=None):
    """Replaces each function of hop.numpy's modules that namespace (a
    module's globals) has under a name in names by as_called's wrapper of
    it (a ufunc of hop.numpy itself takes the kind it means already);
    reductions: implementation -> NumPy's function, for those the eager fast
    path takes; eager: implementation -> as_called's eager; c_fns:
    implementation -> as_called's c_fn."""
    for name in names:
        fn = namespace.get(name)
        if isinstance(fn, types.FunctionType) and fn.__module__.startswith("hop.numpy.") and \
                getattr(fn, "__wrapped_by_hop__", None) is None:
            namespace[name] = as_called(fn, (reductions or {}).get(fn), (eager or {}).get(fn),
                                        (c_fns or {}).get(fn), name in KEEPS_ORDER and
                                        namespace.get("__name__") == "hop.numpy")
