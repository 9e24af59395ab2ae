"""NumPy's functions on hop tensors: shapes, joining and splitting,
creation, where/clip, sorting; the reductions are in _reductions and
dot/einsum in _products, on this module's registry and helpers.

Each is written once, on hop ops, with NumPy's signature and dtypes, and
serves three callers: hop.numpy.<name> (results are hop.numpy arrays),
numpy.<name> on hop.numpy arrays (__array_function__: results of the
arguments' kind) and numpy.<name> on hop tensors (results are tensors).  A
NumPy function hop has no implementation for raises hop.UnsupportedError
naming it while tracing; eagerly NumPy computes it on the arrays' memory.
"""

import builtins
import functools
import math
import numbers
import operator

import numpy as _np

from .. import _C, _exact
from . import _core, _corder, _eager, _eager_shape
from ._direct import check_keywords
from ._ndarray import ndarray, NumpyArg, result_kind, view, viewed_by, wrap
from ._storage import Step
from . import _storage
from ._fpcheck import checked as _checked

__all__ = []
FUNCS = {}  # NumPy function -> implementation
# ndarray.__array_function__ (np_eager.c) calls FUNCS[func](*args,
# _kind=ndarray) itself for positional arguments that are all hop.numpy
# arrays or strings, as array_function below would
_C._np_eager_functions(FUNCS)
PUBLIC = {}  # name in hop.numpy -> implementation (of every module that implements)


def implements(*np_funcs, name=None, public=True):
    """Registers fn as the implementation of the NumPy functions np_funcs
    (reached through __array_function__) and, when public, as
    hop.numpy.<name> (the functions of hop.numpy.linalg and .fft are not)."""
    def deco(fn):
        for f in np_funcs:
            FUNCS[f] = fn
        if public:
            __all__.append(name or fn.__name__)
            PUBLIC[name or fn.__name__] = fn
        return fn
    return deco


def _t(x, what="array"):
    """The tensor of an array-like (a scalar becomes a 0-d tensor)."""
    o = _core.operand(x, what)
    if o.t is not None:
        return o.t
    v = _core.scalar_arg(o)
    if isinstance(v, complex):
        return _core.complex_scalar(v, o.dtype if o.dtype is not None else _np.complex128)
    if o.dtype is not None:
        return _C.full((), v, dtype=_core.hop_dtype(o.dtype, what))
    if isinstance(v, _C.SymInt):
        return _C.full((), v, dtype=_C.int64)
    npd = _np.asarray(v).dtype
    return _C.full((), v, dtype=_core.hop_dtype(npd, what))


def _out(kind, t, scalar=False, out=None, what="out"):
    if out is not None:
        from ._ufuncs import _write_out, out_array
        if not out_array(out):
            raise TypeError(f"hop.numpy: {what}: out= must be an array")
        return _write_out(out, t, what, "unsafe")
    return wrap(kind, t, scalar=scalar)


def _axes(axis, ndim):
    """axis as a tuple of non-negative dims (None: all), read as a ufunc's
    reduce reads it: None, an int or a tuple of ints (not a list; a bool is
    refused, 'an integer is required'), NumPy's AxisError for one out of
    range and its ValueError for one repeated."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        if ndim == 0 and len(axis):  # (only an int axis 0 or -1 names a 0-d array's)
            raise _np.AxisError(_int_arg(axis[0]), 0)
        out = tuple(_axis(a, ndim, "an integer is required") for a in axis)
        if len(set(out)) != len(out):
            raise ValueError("duplicate value in 'axis'")
        return out
    return (_axis(axis, ndim, "an integer is required"),)


def _axis(a, ndim, what="an integer is required for the axis"):
    """One axis as PyArray_AxisConverter reads it (a bool refused with
    `what`), made non-negative; a 0-d array's reductions have axis 0 and -1."""
    a = _int_arg(a, what)
    if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
        raise _np.AxisError(a, ndim)
    return a + builtins.max(ndim, 1) if a < 0 else a


def _axis_index(a, ndim):
    """One axis as NumPy's normalize_axis_index reads it (sort, diff, stack,
    insert, delete, rollaxis, apply_along_axis, ...: a float refused with
    its own text, a bool taken as 0 or 1), made non-negative; a 0-d array
    has none. A NumPy bool, which NumPy takes with a DeprecationWarning, is
    refused (_no_numpy_bool)."""
    return _np.core.multiarray.normalize_axis_index(_no_numpy_bool(a), ndim)


def _no_numpy_bool(a, what="an integer is required for the axis"):
    """a, unless it is a NumPy bool: NumPy reads one as an index with a
    DeprecationWarning, which hop.numpy does not give; refused instead
    (TypeError), so that hop.compile runs such a call by NumPy."""
    if isinstance(a, _np.bool_):
        raise TypeError(what)
    return a


def _slice_index(b):
    """b as a slice's bound: an int, a SymInt or what has __index__ (NumPy's
    slicing TypeError)."""
    if isinstance(b, (int, _C.SymInt)):
        return b
    try:
        return operator.index(b)
    except TypeError:
        raise TypeError("slice indices must be integers or None or have an __index__ "
                        "method") from None


def _dim_at(t, axis):
    """t's size along axis as NumPy's `a.shape[axis]` reads axis (split,
    array_split, size, fft: a tuple's errors, a bool 0 or 1). A NumPy bool,
    which NumPy takes with a DeprecationWarning at each read, is refused
    (not matched eagerly; hop.compile runs such a call by NumPy)."""
    return tuple(t.shape)[_no_numpy_bool(axis)]


def _axis_tuple(axis, ndim, argname=None, allow_duplicate=False):
    """axis as NumPy's normalize_axis_tuple reads it (flip, roll, moveaxis,
    expand_dims, gradient, ...): an int, or any iterable of them, each read
    by normalize_axis_index; its ValueError for a repeated axis."""
    axis = [_no_numpy_bool(a) for a in axis] if isinstance(axis, (tuple, list)) \
        else _no_numpy_bool(axis)
    return _np.core.numeric.normalize_axis_tuple(axis, ndim, argname, allow_duplicate)


def _kind(*args):
    return result_kind(args)

def _kind_of(*args):
    return result_kind(args, ndarray)



def _size(shape):
    n = 1
    for d in shape:
        n = n * d
    return n


# ------------------------------------------------------------ reductions

# In _reductions.py, which takes the registry and helpers above: imported here,
# where they were, so that hop.numpy lists its names in the same order and
# _funcs.sum and the others still name them.
from ._reductions import (all, amax, amin, any, argmax, argmin, cumprod, cumsum,  # noqa: E402,F401
                          max, mean, min, nansum, prod, ptp, std, sum, var)


# ----------------------------------------------------------------- shapes

def scalar_method(m):
    """A method of NumPy scalars too: a NumPy scalar's method that makes a
    0-d array makes a NumPy scalar (np.float64(1).round(), .astype(int),
    .reshape(()), .T).  Also the functions NumPy calls as a's method
    (fromnumeric's _wrapfunc: np.squeeze(s) is s.squeeze())."""
    def sm(self, *args, **kwargs):
        r = m(self, *args, **kwargs)
        if getattr(self, "_scalar", False) and isinstance(r, ndarray) and r.ndim == 0 and \
                not r._scalar:
            r._scalar = True
        return r
    sm.__name__ = m.__name__
    sm.__doc__ = m.__doc__
    return sm


def _view(kind, a, fn, np_fn=None, readonly=False, step_kind=None, t=None, copies=False):
    """NumPy's view of a made by fn (and np_fn on an ndarray): shares a's
    memory, or under a trace its storage (see _storage); t: fn(a) when made
    already; copies: fn takes elements (Step.copies)."""
    return view(kind, a, Step(fn, np_fn, readonly, step_kind, copies), t=t)


def _shape_arg(shape):
    """sizes as NumPy's Python code reads them (`tuple(shape) if
    np.iterable(shape) else (shape,)`: a range or a 1-d array too), each an
    int (_int_arg)."""
    if isinstance(shape, (tuple, list)) or _np.iterable(shape):
        return tuple(_int_arg(n) for n in shape)
    return (_int_arg(shape),)


def _sizes_arg(shape):
    """A shape argument as NumPy's converter (PyArray_IntpConverter) reads
    it: a sequence (a tuple, a list, an array of one or more dimensions) of
    sizes, or one size; one value that is no size is its TypeError naming
    it; None is the shape () (with NumPy 1.24's DeprecationWarning)."""
    if shape is None:
        none_shape()
        return ()
    if isinstance(shape, (tuple, list, str, bytes, range)) or \
            (isinstance(shape, (ndarray, _np.ndarray)) and shape.ndim):  # (PySequence_Fast)
        return tuple(_int_arg(n) for n in shape)
    try:
        return (_int_arg(shape),)
    except TypeError:
        raise TypeError(f"expected a sequence of integers or a single integer, got "
                        f"'{shape!r}'") from None


def none_shape():
    """None as a shape: NumPy 1.24's DeprecationWarning (a graph break
    traced: _core.numpy_warns)."""
    _core.numpy_warns("None as a shape", "Passing None into shape arguments as an alias for () "
                      "is deprecated.", DeprecationWarning)


def _newshape(newshape):
    """reshape's shape argument as NumPy 1.24 reads it: (the shape as given,
    for its error's text; the shape to make), any negative size the one
    unknown dimension (-2 counts as -1), two of them NumPy's ValueError."""
    shape = _sizes_arg(newshape)
    _core.check_rank(len(shape), "reshape")
    unknown = [i for i, d in enumerate(shape) if isinstance(d, int) and d < 0]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    return shape, tuple(-1 if i in unknown else d for i, d in enumerate(shape))


def _int_arg(n, what="an integer is required"):
    """A size or axis argument as NumPy reads it: an int, a SymInt, or what
    has __index__ (not a bool, not a float: TypeError)."""
    if isinstance(n, (int, _C.SymInt)) and not isinstance(n, bool):
        return n
    if isinstance(n, (bool, _np.bool_)):
        raise TypeError(what)
    if isinstance(n, ndarray) and n._scalar and n.dtype.kind == "b":
        raise TypeError(what)  # (as np.bool_)
    if isinstance(n, ndarray) and not n._scalar and (n.ndim != 0 or n.dtype.kind not in "iu"):
        raise TypeError("only integer scalar arrays can be converted to a scalar index")
    return operator.index(n)


@implements(_np.reshape)
def reshape(a, newshape, order="C", *, _kind=None):
    if order == "C" and (_kind is None or _kind is ndarray):
        r = _eager_shape.reshape(a, newshape)  # (None: the general path's)
        if r is not None:
            return r
    return _reshape(a, newshape, order, _kind=_kind)


def _reshape_order(order):
    """reshape's order= as NumPy 1.24 reads it: 'C', 'F' or 'A', NumPy's
    errors for 'K' and anything else (_order_letter)."""
    order = _order_letter(order)
    if order == "K":
        raise ValueError("order 'K' is not permitted for reshaping")
    return order


@scalar_method
def _reshape(a, newshape, order="C", *, _kind=None):
    order = _reshape_order(order)
    if newshape is None:
        # NumPy 1.24's a.reshape(None) (and np.reshape(a, None)): a view of
        # a as it is, whatever the order
        kind = _kind or _kind_of(a)
        if isinstance(a, ndarray) and kind is not _C.Tensor:
            return view(kind, a, Step(lambda x: x, lambda x: x.view()), scalar=a._scalar,
                        t=a._t)
        t = _t(a, "reshape")
        return wrap(kind, t.reshape(tuple(t.shape)))
    if order == "A" and isinstance(a, ndarray) and not a._scalar:
        order = _order_a(a)
        if order is None:
            from .._breaks import conversion
            conversion(_C.UnsupportedError,
                       "hop.numpy: reshape with order='A' of an array whose memory order hop "
                       "cannot tell while tracing (NumPy reads it: 'F' for a Fortran-ordered one)")
    if order == "F":
        # Fortran order: the C-order reshape of the reversed axes, reversed
        # back (as NumPy's, a view exactly when that composition is one)
        kind = _kind or _kind_of(a)
        shape, make = _newshape(newshape)
        try:
            r = reshape(transpose(a, _kind=kind), make[::-1], "C", _kind=kind)
        except ValueError:
            raise ValueError(f"cannot reshape array of size {_size(_t(a, 'reshape').shape)} "
                             f"into shape {_core.shape_text(shape)}") from None
        res = _numpy_strides(a, transpose(r, _kind=kind), make, "F", kind)
        if isinstance(r, ndarray) and isinstance(r._ob, ndarray) and r._ob._ob is None and \
                _storage.current() is None and not _C._is_proxy(r._t) and \
                r._t.data_ptr() != _t(a, "reshape").data_ptr():
            # a copy: NumPy's base is a's copy in Fortran order in a's own
            # shape (PyArray_NewCopy(a, NPY_FORTRANORDER)), which owns its
            # memory, not the C-ordered copy of the transpose
            c = r._ob._t
            res._ob = type(res)(c.permute(*range(c.ndim - 1, -1, -1)))
        run = _storage.current()
        if run is not None and isinstance(res, ndarray) and isinstance(a, ndarray) and \
                res._st is not None and res._st is not a._st:
            run.fortran_copies[id(res._st)] = res._st  # (its .base breaks: _attrs._base)
        return res
    t = _t(a, "reshape")
    shape, make = _newshape(newshape)
    try:
        r = t.reshape(make)
    except _C.ShapeError:
        raise ValueError(f"cannot reshape array of size {_size(t.shape)} into shape "
                         f"{_core.shape_text(shape)}") from None
    kind = _kind or _kind_of(a)
    out = tuple(r.shape)
    run = _storage.current()
    if run is None or not isinstance(a, ndarray) or kind is _C.Tensor:
        if isinstance(a, ndarray) and a._scalar and kind is not _C.Tensor:
            r = r.clone()  # (of a new array made of the scalar: view() says why)
        if run is None and isinstance(a, ndarray) and a._cp is not None and \
                kind is not _C.Tensor:
            return _reshape_copy_view(kind, a, r, shape, out)
        # (eagerly hop's reshape views the memory exactly when NumPy's does,
        # and a view of a read-only array is read-only)
        res = _numpy_strides(a, wrap(kind, r), make, "C", kind)
        if isinstance(a, ndarray) and isinstance(res, ndarray) and not a._scalar and \
                run is None and not _C._is_proxy(r):
            if res._t.data_ptr() == t.data_ptr():
                res._ro = a._ro
                viewed_by(res, a)
            else:
                _copy_as_base(res, tuple(t.shape))
        return res
    is_view = _storage.reshape_is_view(a, run, out)
    if is_view or is_view is None:
        # NumPy's view, made again on an ndarray with the shape as given
        # (its strides differ by whether a -1 was: (3, 1) of strides (16, 8)
        # reshaped to (-1, 1) has (16, 16), to (3, 1) its own).  A view or
        # a copy by the call's sizes (None: symbolic sizes, a strided
        # array): its values are one either way, the runner makes NumPy's
        # reshape again for a result (NumPy decides per call), and a write
        # into either array is refused (check_write)
        np_shape = shape if builtins.all(isinstance(n, int) for n in shape) else None
        res = _view(kind, a, lambda x: x.reshape(out),
                    (lambda x: x.reshape(np_shape)) if np_shape is not None else None,
                    step_kind="reshape", t=r)
        if is_view is None:
            _storage.storage_of(a, run).ambiguous = True
        return res
    # NumPy copies: a new array in a's shape (C order), which knows what
    # the decision read, and the result is its view (its .base, as
    # _copy_as_base eagerly)
    base = wrap(kind, r.reshape(tuple(t.shape)))
    src = _storage.storage_of(a, run)
    dst = _storage.storage_of(base, run)
    dst.leaves |= src.leaves
    np_shape = shape if builtins.all(isinstance(n, int) for n in shape) else None
    return _view(kind, base, lambda x: x.reshape(out),
                 (lambda x: x.reshape(np_shape)) if np_shape is not None else None,
                 step_kind="reshape", t=r)


def _copy_as_base(res, shape):
    """res, an eager reshape that copied (new memory, C order), gets NumPy's
    .base: NumPy's reshape copies the array in its own shape (C order,
    PyArray_Newshape's PyArray_NewCopy) and returns a view of that copy,
    so `a.T.reshape(4).base` is a (2, 2) array that owns its memory and
    the result does not (before the forty-fifth session: no base, owndata
    True)."""
    res._ob = type(res)(res._t.reshape(shape))
    return res


def _numpy_strides(a, res, shape, order, kind):
    """res, the eager reshape of hop.numpy array a to shape (as given, any
    unknown size -1: _newshape's) in
    order, with the strides NumPy's has on its dims of size 1 (hop's are
    PyTorch's: `a[None].reshape(a[None].shape)` keeps the new axis's stride
    0 in NumPy); a hop.Tensor's, a traced one's and a copy's as they are."""
    t, r = _t(a, "reshape"), res._t if isinstance(res, ndarray) else res
    if kind is _C.Tensor or not isinstance(a, ndarray) or _C._is_proxy(t) or _C._is_proxy(r) \
            or _storage.current() is not None:
        return res
    empty = 0 in r.shape
    # (an empty array's strides are those it shows: a new one's are zero,
    # which a reshape to its own shape keeps, as NumPy's view)
    strides = tuple(s // t.dtype.itemsize for s in t.numpy().strides) \
        if empty and t.dtype.itemsize else t.stride()
    want = _storage.numpy_reshape_strides(t.shape, strides, shape, order)
    have = r.stride()
    if want is not None and empty and r.numpy().strides != tuple(
            w * r.dtype.itemsize for w in want):
        # a new empty array's memory (none) shows zero strides, as NumPy's
        # new empty array; its reshape, a view, fills in C strides again
        return wrap(kind, _empty_strided(r, want))
    if want is None or want == have or \
            builtins.any(w != h and n != 1 and not empty for w, h, n in zip(want, have, r.shape)):
        return res
    return wrap(kind, _C._restride(r, want))


def _empty_strided(r, strides):
    """A tensor of empty tensor r's shape and dtype with these strides (in
    elements), shown as they are (over memory of one element: a tensor
    over none shows zero strides)."""
    one = _C.zeros((1,), dtype=r.dtype).slice(0, 0, 0, 1)
    return _C._restride(one.reshape(tuple(r.shape)), tuple(strides))


def _order_a(a):
    """NumPy's order 'A' for hop.numpy array a: 'F' for an array in Fortran
    order and not C (PyArray_ISFORTRAN), else 'C'; None when hop cannot tell
    while tracing (the layout the answer read is checked every call)."""
    run = _storage.current()
    v = _storage.numpy_of_copy(a) if run is None and a._cp is not None else None
    if v is not None:  # (a view hop made as a copy: NumPy's view's flags)
        f_only = v.flags.f_contiguous and not v.flags.c_contiguous
    else:
        f_only = _storage.fortran_only(a, run) if run is not None else \
            a._t.numpy().flags.f_contiguous and not a._t.is_contiguous()
    return None if f_only is None else "F" if f_only else "C"


def _reshape_copy_view(kind, a, r, shape, out):
    """The eager reshape r of a, a view that hop made as a copy (a[::-1]):
    NumPy's reshape of NumPy's view (negative strides) decides, a view
    (which writes reach a's base through, and whose reads are fresh: a
    view step) or a copy (new memory, not a's copy's)."""
    v = _storage.numpy_of_copy(a)
    # (an empty one shares no memory, but NumPy's reshape views it: its
    # strides are the view's, C's with 0 dims counted as 1)
    if v is None or v.size and not _np.may_share_memory(v.reshape(shape), v):
        return _copy_as_base(wrap(kind, r.clone()), tuple(a._t.shape))
    np_shape = tuple(shape) if isinstance(shape, (tuple, list)) else shape
    return _view(kind, a, lambda x: x.reshape(out), lambda x: x.reshape(np_shape),
                 step_kind="reshape", t=r)


@implements(_np.ravel)
def ravel(a, order="C", *, _kind=None):
    if isinstance(order, str) and order.upper() == "K":
        # NumPy's iterator order: a transpose of a into its memory order,
        # then 'C' (_attrs._k_order, which a.ravel and a.flatten take too)
        from ._attrs import _k_order
        a, order = _k_order(a if isinstance(a, ndarray) else asarray(a), order)
    contiguous = True
    if isinstance(a, ndarray) and order in ("A", "F", "C"):
        if order == "A":
            order = _order_a(a)
        # (a is in Fortran order exactly when its transpose is in C order)
        contiguous = None if order is None else \
            _c_order(a if order == "C" else transpose(a, _kind=ndarray))
    if contiguous is None:
        # a view or a copy per call's layout, which the plan cannot decide
        # (symbolic sizes of an array the function computed): the statement
        # runs in Python (hop.trace: UnsupportedError), never a view silently
        from .._breaks import conversion
        conversion(_C.UnsupportedError,
                   "hop.numpy: ravel of an array whose memory order hop cannot tell while "
                   "tracing (symbolic sizes of a strided view): NumPy copies it or views it")
    r = reshape(a, -1, order, _kind=_kind)
    if contiguous is False:
        # NumPy's ravel views only an array contiguous in the order asked
        # (PyArray_Ravel) and else copies, where a reshape views a strided
        # vector (a[:, 1])
        r = copy(r, _kind=_kind)
    return r


def _c_order(a):
    """NumPy's flags.c_contiguous of hop.numpy array a: of its tensor
    eagerly, of its memory under a trace (recorded for the runner to check);
    None when hop cannot tell."""
    run = _storage.current()
    if run is None:
        # (a view hop made as a copy, a[::-1]: of NumPy's view, whose
        # negative strides are not C order; hop's copy is)
        v = _storage.numpy_of_copy(a) if a._cp is not None else None
        return a._t.is_contiguous() if v is None else v.flags.c_contiguous
    return _storage.c_contiguous(a, run)


def check_transpose(nd, axes):
    """NumPy's checks of transpose's axes: their count before their bounds
    ("axes don't match array"), then a repeated axis."""
    if axes is None:
        return
    axes = tuple(axes)
    if len(axes) != nd:
        raise ValueError("axes don't match array")
    norm = [_np.core.multiarray.normalize_axis_index(operator.index(x), builtins.max(nd, 1))
            for x in axes]
    if len(set(norm)) != len(norm):
        raise ValueError("repeated axis in transpose")


@implements(_np.transpose)
@scalar_method
def transpose(a, axes=None, *, _kind=None):
    t = _t(a, "transpose")
    check_transpose(t.ndim, axes)
    if axes is None:
        axes = tuple(range(t.ndim))[::-1]
    axes = tuple(_axis(x, t.ndim) for x in axes)
    if t.ndim <= 1:
        return _view(_kind or _kind_of(a), a, lambda x: x, lambda x: x.transpose(axes))
    return _view(_kind or _kind_of(a), a, lambda x: x.permute(*axes),
                 lambda x: x.transpose(axes))


@implements(_np.swapaxes)
@scalar_method
def swapaxes(a, axis1, axis2, *, _kind=None):
    t = _t(a, "swapaxes")
    a1, a2 = _swap_axis(axis1, t.ndim, "axis1"), _swap_axis(axis2, t.ndim, "axis2")
    return _view(_kind or _kind_of(a), a, lambda x: x.transpose(a1, a2),
                 lambda x: x.swapaxes(a1, a2))


def _swap_axis(a, ndim, name):
    """An axis of swapaxes as PyArray_SwapAxes reads it: a bool taken as 0
    or 1, the AxisError naming the argument."""
    a = int(a) if isinstance(a, bool) else _int_arg(_no_numpy_bool(a))
    if not -ndim <= a < ndim:
        raise _np.AxisError(a, ndim, name)
    return a + ndim if a < 0 else a


@implements(_np.moveaxis)
def moveaxis(a, source, destination, *, _kind=None):
    t = _t(a, "moveaxis")
    # NumPy's normalize_axis_tuple of each: its AxisError names the
    # argument, a repeated axis is its ValueError, a 0-d array has no axis
    norm = _axis_tuple
    src = list(norm(source, t.ndim, "source"))
    dst = list(norm(destination, t.ndim, "destination"))
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    order = [n for n in range(t.ndim) if n not in src]
    for d, s_ in sorted(zip(dst, src)):
        order.insert(d, s_)
    return transpose(a, order, _kind=_kind)


@implements(_np.expand_dims)
def expand_dims(a, axis, *, _kind=None):
    t = _t(a, "expand_dims")
    axes = axis if type(axis) in (tuple, list) else (axis,)
    axes = sorted(_axis_tuple(axes, t.ndim + len(axes)))  # (NumPy's expand_dims)

    def fn(x):
        for k in axes:
            x = x.unsqueeze(k)
        return x
    kind = _kind or _kind_of(a)
    res = _view(kind, a, fn, lambda x: _np.expand_dims(x, tuple(axes)), step_kind="reshape")
    shape = list(t.shape)
    for k in axes:
        shape.insert(k, 1)
    return _numpy_strides(a, res, tuple(shape), "C", kind)  # (NumPy's is a reshape)


@implements(_np.squeeze)
@scalar_method
def squeeze(a, axis=None, *, _kind=None):
    t = _t(a, "squeeze")
    if axis is None:
        axes = [d for d in range(t.ndim) if isinstance(t.shape[d], int) and t.shape[d] == 1]
    else:
        # (PyArray_ConvertMultiAxis: a tuple of ints, or an int)
        axes = [_axis(x, t.ndim, "integers are required for the axis tuple") for x in axis] \
            if isinstance(axis, tuple) else [_axis(axis, t.ndim)]
        if len(set(axes)) != len(axes):
            raise ValueError("duplicate value in 'axis'")
        axes.sort()
        for x in axes:
            if t.shape[x] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 "equal to one")

    if not axes and isinstance(a, ndarray) and _kind in (None, type(a)):
        if a._scalar:
            return wrap(type(a), t.clone(), scalar=True)  # (a scalar's: a new scalar)
        return a  # NumPy's squeeze of no axis (None: no size-1 axis): the array itself

    def fn(x):
        for k in reversed(axes):
            x = x.squeeze(k)
        return x
    return _view(_kind or _kind_of(a), a, fn, lambda x: _np.squeeze(x, tuple(axes)),
                 step_kind="reshape")


@implements(_np.broadcast_to)
def broadcast_to(array, shape, subok=False, *, _kind=None):
    t = _t(array, "broadcast_to")
    shape = _shape_arg(shape)
    _core.check_rank(len(shape), "broadcast_to")
    if len(shape) < t.ndim:
        raise ValueError("input operand has more dimensions than allowed by the axis remapping")
    if builtins.any(isinstance(n, int) and n < 0 for n in shape):
        raise ValueError("all elements of broadcast shape must be non-negative")
    try:
        t.expand(*shape)
    except (_C.ShapeError, _C.InvalidError):
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {tuple(t.shape)}  and requested shape "
                         f"{shape}") from None
    np_shape = shape if builtins.all(isinstance(n, int) for n in shape) else None
    return _view(_kind or _kind_of(array), array, lambda x: x.expand(*shape),
                 (lambda x: _np.broadcast_to(x, np_shape)) if np_shape else None,
                 readonly=True)


@implements(_np.atleast_1d)
def atleast_1d(*arys, _kind=None):
    res = [reshape(a, (1,), _kind=_kind) if _t(a).ndim == 0 else
           _same(a, _kind) for a in arys]
    return res[0] if len(res) == 1 else res


def _same(a, kind):
    """a as NumPy's asanyarray gives it back: the same array when it is one."""
    if isinstance(a, ndarray) and (kind is None or kind is type(a)):
        return a
    return wrap(kind or _kind_of(a), _t(a))


@implements(_np.atleast_2d)
def atleast_2d(*arys, _kind=None):
    res = []
    for a in arys:
        nd = _t(a).ndim
        if nd >= 2:
            res.append(_same(a, _kind))
        elif nd == 1:
            # NumPy's ary[newaxis, :]: the new axis has stride 0, not a
            # reshape's row size (a returned view of an argument shows it)
            res.append(_same(a, _kind)[None, :])
        else:
            res.append(reshape(a, (1, 1), _kind=_kind))
    return res[0] if len(res) == 1 else res


def _join_dtype(ts, dtype, what):
    if dtype is not None:
        return _np.dtype(dtype)
    return _core.promoted_dtype(ts)


@implements(_np.concatenate)
def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind", *, _kind=None):
    if out is None and dtype is None and casting == "same_kind" and \
            (_kind is None or _kind is ndarray):
        r = _eager_shape.concatenate(arrays, axis)  # (None: the general path's)
        if r is not None:
            return r
    ts = [_t(a, "concatenate") for a in arrays]
    if not ts:
        raise ValueError("need at least one array to concatenate")
    kind = _kind or result_kind(list(arrays), ndarray)
    if axis is None:
        ts = [t.reshape(-1) for t in ts]
        axis = 0
    if ts[0].ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ax = _axis(axis, ts[0].ndim)
    for i, t in enumerate(ts[1:], 1):  # NumPy's order: each array's ndim, then its sizes
        if t.ndim != ts[0].ndim:
            raise ValueError(f"all the input arrays must have same number of dimensions, but "
                             f"the array at index 0 has {ts[0].ndim} dimension(s) and the array "
                             f"at index {i} has {t.ndim} dimension(s)")
        for d, (m, n) in enumerate(zip(ts[0].shape, t.shape)):
            if d != ax and type(m) is int and type(n) is int and m != n:
                raise ValueError(f"all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along dimension {d}, the array "
                                 f"at index 0 has size {m} and the array at index {i} has size "
                                 f"{n}")
    dt = _join_cast(ts, out, dtype, casting)
    return _join_out(kind, _cat_in_order(ts, ax, dt, out), out, "concatenate")


def _cat_in_order(ts, ax, dt, out):
    """The tensors ts cast to dt and joined along ax, laid out as NumPy's
    concatenate lays out its new array (_join_order; out's, C order, when
    given)."""
    perm = _join_order(ts) if out is None else None
    if perm is None:
        return _C.cat([_core.cast(t, dt) for t in ts], ax)
    # (C order of the permuted axes)
    r = _C.cat([_core.cast(t, dt).permute(*perm) for t in ts], perm.index(ax))
    return r.permute(*[perm.index(d) for d in range(len(perm))])


def _join_order(ts):
    """The axes of concatenate's new array, outermost in memory first, as
    NumPy orders them from its inputs' strides (PyArray_CreateMultiSortedStridePerm:
    a stable insertion sort by absolute stride, largest first, where an axis
    of size 1 in an input has no say there and inputs that disagree keep the
    C order); None for C order, and for inputs being traced (their strides
    are not known: a plan lays out in C order).  Not _storage.k_order (the
    iterator's sort): there a zero stride has no say, here only a size of 1
    (two broadcast rows, strides (0, 1), join in F order in NumPy)."""
    ndim = ts[0].ndim
    if ndim < 2 or _core.tracing() or builtins.any(_C._is_proxy(t) for t in ts):
        return None
    layouts = [(tuple(t.shape), tuple(t.stride())) for t in ts]
    perm = list(range(ndim))
    for i0 in range(1, ndim):
        ipos, j0 = i0, perm[i0]
        for i1 in range(i0 - 1, -1, -1):
            j1 = perm[i1]
            ambiguous, swap = True, False
            for shape, strides in layouts:
                if shape[j0] != 1 and shape[j1] != 1:
                    if abs(strides[j0]) <= abs(strides[j1]):
                        swap = False  # (also when it was decided: C order wins a conflict)
                    elif ambiguous:
                        swap = True
                    ambiguous = False
            if not ambiguous:
                if not swap:
                    break
                ipos = i1
        perm.insert(ipos, perm.pop(i0))
    return None if perm == list(range(ndim)) else perm


def _join_cast(ts, out, dtype, casting):
    """The dtype concatenate and stack make (dtype, out's or the inputs'
    result type), each input castable to it under casting (NumPy's
    TypeError)."""
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both "
                        "were provided.")
    dt = _np.dtype(dtype) if dtype is not None else out.dtype if out is not None else \
        _join_dtype(ts, None, "concatenate")
    for t in ts:
        have = _core.np_dtype(t)
        if not _np.can_cast(have, dt, casting=casting):
            raise TypeError(f"Cannot cast array data from {have!r} to {dt!r} according to the "
                            f"rule {casting!r}")
    _core.hop_dtype(dt, "concatenate")
    return dt


def _join_out(kind, r, out, what):
    if out is not None:
        from ._ufuncs import out_array
        if not out_array(out):
            raise TypeError(f"hop.numpy: {what}: out= must be an array")
        if len(out.shape) != r.ndim or not builtins.all(
                _storage._same_size(d, n) for d, n in zip(r.shape, out.shape)):
            raise ValueError("Output array is the wrong shape")
    return _out(kind, r, out=out, what=what)


@implements(_np.stack)
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind", _kind=None):
    if out is None and dtype is None and casting == "same_kind" and _kind in (None, ndarray) \
            and type(axis) is int:
        r = _eager_stack(arrays, axis)
        if r is not None:
            return r
    ts = [_t(a, "stack") for a in arrays]
    if not ts:
        raise ValueError("need at least one array to stack")
    kind = _kind or result_kind(list(arrays), ndarray)
    # (compared, not hashed: a symbol's hash is its expression's, so s0 and
    # s1 would differ unguarded where eager's sizes may be equal)
    for t in ts[1:]:
        if tuple(t.shape) != tuple(ts[0].shape):
            raise ValueError("all input arrays must have the same shape")
    ax = _axis_index(axis, ts[0].ndim + 1)
    dt = _join_cast(ts, out, dtype, casting)
    # NumPy's stack: concatenate of each array viewed with the new axis, in
    # concatenate's layout (the transposed arrays' F order)
    return _join_out(kind, _cat_in_order([t.unsqueeze(ax) for t in ts], ax, dt, out), out,
                     "stack")


# vstack, hstack and stack of concrete hop.numpy arrays, eagerly: NumPy's own
# composition (each array viewed with its new axis, then one concatenate) by
# the fast paths of indexing and concatenate (_eager_shape), or None where
# one of them does not take it (the general path answers, its errors
# included): 12-15 us a call less on small arrays, which the general path's
# atleast_2d, casts and dispatch cost

def _eager_views_joined(arrays, axis, key):
    """concatenate(arrays, axis) by the eager fast path, each array first
    viewed as a[key(a)] by indexing's (key(a) None: the array as it is;
    False: not taken), or None."""
    if not isinstance(arrays, (list, tuple)) or not arrays:
        return None
    views = []
    for a in arrays:
        if type(a) is not ndarray:
            return None
        k = key(a)
        if k is False:
            return None
        if k is not None:
            a = _eager_shape.getitem(a, k)
            if a is None:
                return None
        views.append(a)
    return _eager_shape.concatenate(views, axis)


def _eager_join(arrays, axis, least):
    """concatenate(arrays, axis) by the eager fast path, each array of fewer
    than `least` dims (1 or 2) first viewed as NumPy's atleast_1d/_2d views
    it (a[None, :]; a 0-d array's reshape is the general path's), or None."""
    return _eager_views_joined(
        arrays, axis, lambda a: None if a.ndim >= least else
        (None, slice(None)) if a.ndim == 1 and least == 2 else False)


def _eager_stack(arrays, axis):
    """stack(arrays, axis) by the eager fast path (NumPy's: each array
    viewed with a new axis at `axis`, then concatenate), or None."""
    if not isinstance(arrays, (list, tuple)) or not arrays or type(arrays[0]) is not ndarray:
        return None
    shape = arrays[0].shape
    nd = len(shape)
    if not -nd - 1 <= axis <= nd:
        return None  # (NumPy's errors: the general path's)
    axis = axis + nd + 1 if axis < 0 else axis
    key = (slice(None),) * axis + (None,)
    # (arrays of another shape: NumPy's error, the general path's)
    return _eager_views_joined(
        arrays, axis, lambda a: key if a.shape == shape else False)


def _arrays_arg(tup, what):
    """The sequence of arrays of vstack/hstack (a generator is read once)."""
    if not isinstance(tup, (list, tuple)):
        if not hasattr(tup, "__iter__"):
            raise TypeError(f"arrays to {what} must be passed as a \"sequence\" type such as "
                            f"list or tuple.")
        tup = list(tup)
    return tup


@implements(_np.vstack)
def vstack(tup, *, dtype=None, casting="same_kind", _kind=None):
    tup = _arrays_arg(tup, "stack")
    if dtype is None and casting == "same_kind" and _kind in (None, ndarray):
        r = _eager_join(tup, 0, 2)
        if r is not None:
            return r
    return concatenate([atleast_2d(a, _kind=_C.Tensor) for a in tup], 0, dtype=dtype,
                       casting=casting, _kind=_kind or result_kind(list(tup), ndarray))


@implements(_np.hstack)
def hstack(tup, *, dtype=None, casting="same_kind", _kind=None):
    tup = _arrays_arg(tup, "stack")
    if dtype is None and casting == "same_kind" and _kind in (None, ndarray) and tup and \
            type(tup[0]) is ndarray:
        r = _eager_join(tup, 0 if tup[0].ndim == 1 else 1, 1)
        if r is not None:
            return r
    ts = [atleast_1d(a, _kind=_C.Tensor) for a in tup]
    return concatenate(ts, 0 if ts and ts[0].ndim == 1 else 1, dtype=dtype, casting=casting,
                       _kind=_kind or result_kind(list(tup), ndarray))


@implements(_np.array_split)
def array_split(ary, indices_or_sections, axis=0, *, _kind=None):
    t = _t(ary, "array_split")
    kind = _kind or _kind_of(ary)
    n = _dim_at(t, axis)  # (NumPy's ary.shape[axis])
    ax = operator.index(axis) % t.ndim
    try:  # (NumPy's: what has no len() is a number of sections, as int() reads it)
        len(indices_or_sections)
    except TypeError:
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extra = divmod(n, k)
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + each + (1 if i < extra else 0))
    else:
        bounds = [0] + [_slice_index(b) for b in indices_or_sections] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        key = (slice(None),) * ax + (slice(lo, hi),)
        out.append(_view(kind, ary, lambda x, lo=lo, hi=hi: x.slice(ax, lo, hi, 1),
                         (lambda x, key=key: x[key]) if builtins.all(
                             isinstance(v, int) for v in (lo, hi)) else None))
    return out


@implements(_np.split)
def split(ary, indices_or_sections, axis=0, *, _kind=None):
    try:  # (NumPy's: what has no len() is a number of sections)
        len(indices_or_sections)
    except TypeError:
        if _dim_at(_t(ary, "split"), axis) % indices_or_sections:
            raise ValueError("array split does not result in an equal division") from None
    return array_split(ary, indices_or_sections, axis, _kind=_kind)


@implements(_np.flip)
def flip(m, axis=None, *, _kind=None):
    t = _t(m, "flip")
    axes = _axes(None if axis is None else _axis_tuple(axis, t.ndim), t.ndim)

    from ._indexing import _reversed_in_order, traced_order
    mem = traced_order(m) if axes else None

    def taken(x, axes):
        for ax in axes:
            n = x.shape[ax]
            x = _reversed_in_order(x, ax, (n - 1) - _C.arange(n))
        return x

    def fn(x):
        if mem is None:
            return taken(x, axes)
        # (in a traced array's memory order, as NumPy's view is laid out)
        r = taken(x.permute(*mem), [mem.index(ax) for ax in axes])
        return r.permute(*[mem.index(d) for d in range(x.ndim)])
    return _view(_kind or _kind_of(m), m, fn, lambda x: _np.flip(x, axes), copies=bool(axes))


# ---------------------------------------------------------------- creation

def _creation_dtype(dtype, default, what="dtype"):
    """The NumPy dtype a creation function makes (a given one of the other
    byte order or with metadata, which NumPy keeps in the array, is hop's
    DTypeError, as astype's: hop's arrays are native and have none; before
    the forty-seventh and forty-eighth sessions a native array, silently
    another dtype)."""
    return _core.kept_dtype(default if dtype is None else dtype, what)


def _full_t(shape, value, npd):
    return _C.full(new_sizes(shape, npd), value, dtype=_core.hop_dtype(npd, "dtype"))


def _converted_sizes(shape):
    """_sizes_arg(shape), a size beyond intp NumPy's converter's ValueError:
    what NumPy's creation functions read first, before the dtype."""
    sizes = _sizes_arg(shape)
    for n in sizes:
        if type(n) is int and n >= 2**63:
            raise ValueError("Maximum allowed dimension exceeded")
    return sizes


def new_sizes(shape, npd):
    """The sizes of a new array of shape and NumPy dtype npd (_sizes_arg's),
    checked as NumPy 1.24 checks them, in its order: a size beyond intp
    (its converter's ValueError), a negative one, then a total of bytes
    beyond intp (PyArray_NewFromDescr's ValueErrors); a symbolic size is
    the plan's."""
    sizes = _converted_sizes(shape)
    known = [n for n in sizes if type(n) is int]
    nbytes = npd.itemsize
    for n in known:  # (one loop, as NumPy's: a size of 0 is left out of the product)
        if n == 0:
            continue
        if n < 0:
            raise ValueError("negative dimensions are not allowed")
        nbytes *= n
        if nbytes >= 2**63:
            raise ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than "
                             "the maximum possible size.")
    return sizes


def _order_letter(order):
    """An order= argument as NumPy 1.24's PyArray_OrderConverter reads it:
    'C', 'F', 'A' or 'K' (None is 'C'; any case, bytes too), its errors
    for anything else."""
    if order is None:
        return "C"
    if isinstance(order, bytes):
        order = order.decode("latin-1")
    if not isinstance(order, str):
        raise TypeError(f"order must be str, not {type(order).__name__}")
    if len(order) != 1 or order.upper() not in "CFAK":
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    return order.upper()


def _order_arg(order):
    """A creation function's order= as NumPy 1.24 reads it: 'C' or 'F',
    NumPy's errors for anything else (_order_letter)."""
    order = _order_letter(order)
    if order in "AK":
        raise ValueError("only 'C' or 'F' order is permitted")
    return order


def _filled(shape, value, npd, order):
    """NumPy's new array of shape filled with value, in order 'C' or 'F'
    (its strides; NumPy's errors for any other order)."""
    if _order_arg(order) == "C":
        return ndarray(_full_t(shape, value, npd))
    from ._ufuncs import in_memory_order
    return in_memory_order(ndarray, (), _sizes_arg(shape),
                           lambda _, s: _full_t(s, value, npd), "F")


@implements(name="zeros")
def zeros(shape, dtype=float, order="C", *, like=None):
    shape = _converted_sizes(shape)  # (NumPy reads the shape, then the dtype, the order)
    return _filled(shape, 0, _creation_dtype(dtype, float), order)


@implements(name="ones")
def ones(shape, dtype=None, order="C", *, like=None):
    shape = _converted_sizes(shape)
    return _filled(shape, 1, _creation_dtype(dtype, float), order)


@implements(name="empty")
def empty(shape, dtype=float, order="C", *, like=None):
    return zeros(shape, dtype, order)


@implements(_np.full)
def full(shape, fill_value, dtype=None, order="C", *, like=None, _kind=None):
    if dtype is None:
        o = _core.operand(fill_value, "full")
        dtype = o.dtype if o.t is None and o.dtype is not None else \
            _core.np_dtype(o.t) if o.t is not None else _np.asarray(_core.scalar_arg(o)).dtype \
            if not isinstance(o.value, _C.SymInt) else _np.dtype(_np.int64)
    npd = _creation_dtype(dtype, None, "full")
    shp = new_sizes(shape, npd)
    if isinstance(fill_value, (int, float, complex, _np.generic)):
        # (NumPy converts the number as it copies it in: into no element, only
        # a complex's warning)
        empty = not builtins.all(type(n) is not int or n != 0 for n in shp)
        fill_value = _numpys_element(fill_value, npd, empty)
    o = _core.operand(fill_value, "full")
    # (as_compute gives a 0-d tensor for a complex dtype, which _C.full takes not)
    v = o.t if o.t is not None else _core.as_compute(o, npd)
    if not isinstance(v, _C.Tensor):
        def make(s):
            return _full_t(s, v, npd)
    else:
        t = _core.cast(v, npd)

        def make(s):
            return (t.expand(*s) if s else t.reshape(())).clone()
    if _order_arg(order) == "F":
        from ._ufuncs import in_memory_order
        return in_memory_order(_kind or ndarray, (), shp, lambda _, s: make(s), "F")
    return wrap(_kind or ndarray, make(shp))


def _like(a, dtype, shape, order, kind, make, what):
    """NumPy's new array like a: of a's dtype and shape unless given, in
    order= of a (NumPy keeps a's order for a shape of a's rank, else C),
    make(shape_in_order, dtype) its tensor."""
    t = _t(a, what)
    npd = _creation_dtype(dtype, a.dtype if isinstance(a, _np.ndarray) else _core.np_dtype(t),
                          what)
    shp = tuple(t.shape) if shape is None else _sizes_arg(shape)
    if len(shp) != t.ndim and order in ("K", "k", "A", "a", None):
        order = "C"
    from ._ufuncs import in_memory_order
    return in_memory_order(kind or _kind_of(a), (a,), shp, lambda _, s: make(s, npd), order)


@implements(_np.zeros_like)
def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, _kind=None):
    return _like(a, dtype, shape, order, _kind, lambda s, d: _full_t(s, 0, d), "zeros_like")


@implements(_np.ones_like)
def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, _kind=None):
    return _like(a, dtype, shape, order, _kind, lambda s, d: _full_t(s, 1, d), "ones_like")


@implements(_np.empty_like)
def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, _kind=None):
    return _like(prototype, dtype, shape, order, _kind, lambda s, d: _full_t(s, 0, d),
                 "empty_like")


@implements(_np.full_like)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, _kind=None):
    return _like(a, dtype, shape, order, _kind,
                 lambda s, d: full(s, fill_value, d, _kind=ndarray)._t, "full_like")


def _arange_length(q):
    """NumPy's _arange_safe_ceil_to_intp of (stop - start) / step."""
    if q != q:
        raise ValueError("arange: cannot compute length")
    if q >= 2.0 ** 63:
        raise ValueError("Maximum allowed size exceeded")
    return math.ceil(q)


def _wrapped64(v):
    """An integer as the int64 with its low 64 bits (two's complement)."""
    return (v + 2**63) % 2**64 - 2**63


def _arange_filled(start, stop, step, npd):
    """NumPy 1.24's arange of concrete numbers into dtype npd
    (PyArray_ArangeObj): the length ceil((stop - start) / step), of a
    complex dtype the smaller of the real and imaginary parts'; the first
    two elements start and start + step converted as its setitem converts
    them (0.5 into an int is 0, so arange(0, 5, 0.5, dtype=int) is zeros);
    then the dtype's fill, start + i * delta with delta the difference of
    those two in the dtype's arithmetic (float32's in float32, float16's in
    float32 rounded once, an integer's in C's wrapping integers)."""
    q = (stop - start) / step
    if npd.kind == "c" and isinstance(q, complex):
        n = builtins.min(_arange_length(q.real), _arange_length(q.imag))
    else:
        n = _arange_length(q)
    if n <= 0:
        return ndarray(_full_t((0,), 0, npd))
    if npd.kind == "b" and n > 2:
        raise TypeError("arange() is only supported for booleans when the result has at most "
                        "length 2.")
    head = _np.empty(builtins.min(n, 2), npd)
    head[0] = start
    if n > 1:
        head[1] = start + step
    if n <= 2:
        return ndarray(_C.tensor(head))
    i = _C.arange(n)
    if npd.kind in "iu":
        h0 = int(head[0])
        t = i * _wrapped64(int(head[1]) - h0) + _wrapped64(h0)
    else:
        # float16's fill computes in float32; a complex one per part
        ct = npd if npd.itemsize >= (8 if npd.kind == "c" else 4) else _np.dtype(_np.float32)
        h = head.astype(ct)
        with _np.errstate(all="ignore"):
            d = h[1] - h[0]
        t = _core.cast(i, ct) * _t(d) + _t(h[0])
    t = _core.cast(t, npd)
    return ndarray(_C.cat([_C.tensor(head), t[2:]], 0))


_ARANGE_ARGS = ("start", "stop", "step", "dtype")


def _arange_args(args, kwargs):
    """NumPy 1.24's parse of arange's arguments (npy_parse_arguments, then
    array_arange): (start, stop, step, dtype), with its TypeErrors (their
    texts).  Without stop, NumPy needs a positional argument: arange(3) and
    arange(stop=3) are [0, 1, 2], arange(start=3) and arange() are errors."""
    if len(args) > 4:
        raise TypeError(f"arange() takes from 0 to 4 positional arguments but {len(args)} "
                        f"were given")
    got = dict(zip(_ARANGE_ARGS, args))
    for k, v in kwargs.items():
        if k == "like":
            continue
        if k not in _ARANGE_ARGS:
            raise TypeError(f"arange() got an unexpected keyword argument '{k}'")
        if k in got:
            raise TypeError(f"argument for arange() given by name ('{k}') and position "
                            f"(position {_ARANGE_ARGS.index(k)})")
        got[k] = v
    if "stop" not in got:
        if not args:
            raise TypeError("arange() requires stop to be specified.")
    elif "start" not in got:
        got["start"] = got.pop("stop")
    return got["start"], got.get("stop"), got.get("step"), got.get("dtype")


@implements(name="arange")
def arange(*args, **kwargs):
    start, stop, step, dtype = _arange_args(args, kwargs)
    given = [v for v in (start, stop, step) if isinstance(v, (ndarray, _np.ndarray))]
    if not given and builtins.any(v is not None and
                                  not isinstance(v, (numbers.Number, _np.generic))
                                  for v in (start, stop, step)):
        # a list, str or other object: NumPy's own arange, which discovers
        # its dtype first (ValueError for [None, []], TypeError for a str,
        # its message), and hop's copy of what it answers
        a = _np.arange(start, stop, step, dtype=dtype)
        _core.hop_dtype(a.dtype, "arange")
        return ndarray(_C.tensor(a))
    if given:
        # An array argument: NumPy's arange takes its value through Python's
        # number protocol (its dtype in the result's, a size-1 array's item,
        # its errors and warnings for others), on the value: a traced one is
        # a break of hop.compile's graph
        if builtins.any(isinstance(v, ndarray) and _core.is_traced(v._t) for v in given):
            from .. import _breaks
            _breaks.conversion(_C.UnsupportedError, "hop.numpy: arange of a traced array: its "
                                                    "length is the array's value")
        args = [_np.asarray(v) if isinstance(v, ndarray) else v for v in (start, stop, step)]
        a = _np.arange(*args, dtype=dtype)
        _core.hop_dtype(a.dtype, "arange")
        return ndarray(_C.tensor(a))
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    vals = [start, stop, step]
    stop - start  # (NumPy's first arithmetic: its TypeError for None, a str)
    if builtins.any(type(v) is int and not -2**63 <= v < 2**63 for v in vals):
        # beyond int64: NumPy's own answer (a float64 or object array, whose
        # dtype hop has not), made of Python numbers only
        a = _np.arange(start, stop, step, dtype=dtype)
        _core.hop_dtype(a.dtype, "arange")
        return ndarray(_C.tensor(a))
    cplx = builtins.any(isinstance(v, (complex, _np.complexfloating)) for v in vals)
    npd = _creation_dtype(dtype, None, "arange") if dtype is not None else \
        _np.dtype(_np.complex128) if cplx else None
    if npd is not None and builtins.all(
            type(v) in (bool, int, float, complex) or isinstance(v, _np.number) for v in vals) \
            and (cplx or npd.kind in "bc" or npd in (_np.dtype(_np.float16), _np.dtype(_np.float32))
                 or (npd.kind in "iu" and not builtins.all(
                     isinstance(v, (int, _np.integer)) for v in vals))):
        # where NumPy's fill differs from start + i * step computed in
        # float64 (or int64) and cast
        return _arange_filled(start, stop, step, npd)
    if builtins.any(isinstance(v, float) or (isinstance(v, _np.floating)) for v in vals) or \
            (dtype is not None and _np.dtype(dtype).kind == "f"):
        # NumPy's fill: start, start + step, then start + i * delta with
        # delta = (start + step) - start
        q = (stop - start) / step
        if q != q:
            raise ValueError("arange: cannot compute length")
        if q >= 2.0 ** 63:
            raise ValueError("Maximum allowed size exceeded")
        n = math.ceil(q)
        if n <= 0:
            return ndarray(_full_t((0,), 0, _creation_dtype(dtype, float)))
        npd = _creation_dtype(dtype, _np.result_type(*[_np.asarray(v) for v in vals]))
        delta = (start + step) - start
        t = _C.arange(n).to(_C.float64) * delta + start
        if type(n) is int and builtins.all(type(v) in (int, float) for v in (start, step)):
            # (its first two as NumPy sets them: start itself, -0.0 kept, and
            # start + step, which start + 1 * delta may round apart from)
            head = _C.tensor([float(start), float(start + step)][:n], dtype=_C.float64)
            t = _C.cat([head, t[2:]], 0) if n > 2 else head
        return ndarray(_core.cast(t, npd))
    if step == 0:
        raise ZeroDivisionError("division by zero")
    npd = _creation_dtype(dtype, _np.int64)
    if builtins.all(isinstance(v, (int, _np.integer)) for v in (start, stop, step)) and \
            -((start - stop) // step) <= 0:
        return ndarray(_full_t((0,), 0, npd))  # NumPy: empty, not an error
    return ndarray(_C.arange(start, stop, step, dtype=_core.hop_dtype(npd, "arange")))


_PLAIN_BOUNDS = (int, float, bool)  # (linspace's bounds whose dtype needs no probe)


@implements(name="linspace")
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    if type(start) in _PLAIN_BOUNDS and type(stop) in _PLAIN_BOUNDS and \
            -2**63 <= start < 2**63 and -2**63 <= stop < 2**63:
        # Python numbers: start * 1.0 and stop * 1.0 are Python floats, and
        # result_type of two of them and float(num) is float64, what the
        # probes below would find (they are most of a small linspace's cost)
        dt = _np.dtype(_np.float64)
        s, e = _core.cast(_t(start, "linspace"), dt), _core.cast(_t(stop, "linspace"), dt)
    else:
        # NumPy's start * 1.0 and stop * 1.0, then result_type(start, stop,
        # float(num)), casting by value: float32 or float16 bounds keep their
        # dtype unless a 0-d bound's value or num needs a wider one
        s, e = (_core.cast(t, _core.result_dtypes(_np.multiply, [_core.operand(t, "linspace"),
                                                                _core.Opnd(value=1.0)],
                                                  "linspace")[0])
                for t in (_t(start, "linspace"), _t(stop, "linspace")))
        dt = _core.result_dtype([_core.operand(s, "linspace"), _core.operand(e, "linspace"),
                                 _core.Opnd(value=float(num))], "linspace")
        s, e = _core.cast(s, dt), _core.cast(e, dt)
    delta = e - s
    y = _C.arange(num).to(_core.hop_dtype(dt, "linspace"))
    shape_extra = (1,) * s.ndim
    y = y.reshape(num, *shape_extra)
    if div > 0:
        step = delta / div
        # NumPy: y * step, or (y / div) * delta where the step is 0
        y = _C.where(_C.eq(step, 0), (y / div) * delta, y * step)
    else:
        y = y * delta
    y = y + s
    if endpoint and num > 1:
        last = _C.eq(_C.arange(num), num - 1).reshape(num, *shape_extra)
        y = _C.where(last, e, y)
    if axis != 0:  # NumPy's moveaxis(y, 0, axis)
        nd = y.ndim
        ax = _int_arg(axis, "an integer is required for the axis")
        if not -nd <= ax < nd:
            raise _np.AxisError(ax, nd, "destination")
        ax %= nd
        y = y.permute(*range(1, ax + 1), 0, *range(ax + 1, nd))
    npd = _np.dtype(dtype) if dtype is not None else dt
    if npd.kind in "iu":
        y = _C.floor(y)  # (NumPy floors, then casts: -0.5 is -1)
    r = ndarray(_core.cast(y, npd))
    if not retstep:
        return r
    # (NumPy's step: delta / div, a scalar of scalar bounds; Python's nan
    # where there is no step)
    return r, ndarray(step, scalar=step.ndim == 0) if div > 0 else math.nan


@implements(name="eye")
def eye(N, M=None, k=0, dtype=float, order="C", *, like=None):
    # (NumPy's zeros((N, M), dtype) reads and checks them first, as sizes)
    N, M = new_sizes((N, N if M is None else M), _creation_dtype(dtype, None, "eye"))
    rows = _C.arange(N).reshape(N, 1)
    cols = _C.arange(M).reshape(1, M)
    m = _C.eq(rows + k, cols)
    return ndarray(_core.cast(m, _np.dtype(dtype)))


@implements(name="identity")
def identity(n, dtype=None, *, like=None):
    return eye(n, dtype=float if dtype is None else dtype)


def _from_nested(obj, dtype):
    """array() of a list or tuple: NumPy's own conversion of the concrete
    parts, stacking where an item is a hop array or traced value."""
    if not builtins.any(_has_hop(x) for x in obj):
        with _np.errstate(all="ignore"):
            a = _np.array(obj, dtype=dtype)
        _core.hop_dtype(a.dtype, "array", makes=dtype is not None)
        return _C.tensor(a)
    items = [_from_nested(x, None) if isinstance(x, (list, tuple)) else _t(x, "array")
             for x in obj]
    # array coercion promotes the items' dtypes (no casting by value)
    dt = _np.dtype(dtype) if dtype is not None else _core.promoted_dtype(items)
    return _C.stack([_core.cast(t, dt) for t in items], 0)


def _has_hop(x):
    if isinstance(x, (list, tuple)):
        return builtins.any(_has_hop(v) for v in x)
    return isinstance(x, (ndarray, _C.Tensor, _C.SymInt))


def _in_order(a, order):
    """Whether array a's memory already is in the order order asks of
    array(a, copy=False), as NumPy decides whether it copies: only 'C' and
    'F' ask ('A', 'K' and None take any); raises where hop cannot tell."""
    if order not in ("C", "F"):
        return True
    run = _storage.current()
    if run is None:  # eagerly hop's tensor is the memory
        flags = a._t.numpy().flags
        c, f = flags.c_contiguous, flags.f_contiguous
    else:
        c, f_only = _storage.c_contiguous(a, run), _storage.fortran_only(a, run)
        if c is None or f_only is None:
            raise _C.UnsupportedError(
                f"hop.numpy: array(a, copy=False, order={order!r}) of an array that is in that "
                f"order or not depending on sizes hop knows only at run time; copy it first")
        # a C-ordered array is also in Fortran order when at most one dim
        # has more than one element
        f = f_only or c and builtins.sum(1 for n in a._t.shape if not isinstance(n, int) or
                                         n > 1) <= 1
    return c if order == "C" else f


def _kept_dtype_of(a, dtype, what):
    """NumPy's array/asarray/copy of ndarray a keep its dtype (given none):
    one hop.numpy's arrays cannot have is kept_dtype's DTypeError.  (hop's
    own calls of array/asarray, whose results hop computes on, take any.)"""
    if dtype is not None:
        _core.kept_dtype(dtype, what)
    elif isinstance(a, _np.ndarray):
        _core.kept_dtype(a.dtype, what)


@implements(name="array")
def _public_array(object, dtype=None, copy=True, order="K", subok=False, ndmin=0, *,
                  like=None):
    _kept_dtype_of(object, dtype, "array")
    if copy is None:
        raise ValueError("NoneType copy mode not allowed.")  # (NumPy 1.24's copy converter)
    if not isinstance(copy, _np._CopyMode):
        return array(object, dtype, bool(copy), order, subok, ndmin)
    if copy is not _np._CopyMode.NEVER:
        return array(object, dtype, copy is _np._CopyMode.ALWAYS, order, subok, ndmin)
    return _array_never_copied(object, dtype, order, subok, ndmin)


def _array_never_copied(object, dtype, order, subok, ndmin):
    """np.array(object, copy=np._CopyMode.NEVER): NumPy's array with no
    copy, or its ValueError saying why one would be made."""
    if _core._array_like(object):
        if not isinstance(object, memoryview) and not builtins.any(
                hasattr(object, n) for n in ("__array_interface__", "__array_struct__")):
            raise ValueError("Unable to avoid copy while converting from an object implementing "
                             "the `__array__` protocol.  NumPy cannot ensure that no copy will "
                             "be made.")
        object = _np.asarray(object)
    if not isinstance(object, (ndarray, _np.ndarray)):
        raise ValueError("Unable to avoid copy while creating an array.")
    if dtype is not None and _np.dtype(dtype) != object.dtype:
        raise ValueError("Unable to avoid copy while creating an array from given array.")
    if isinstance(object, _np.ndarray):
        if _core.tracing():
            # (whether hop's tensor of a captured ndarray is its memory is
            # known when the program runs: NumPy's code decides)
            from .. import _breaks
            _breaks.conversion(_C.UnsupportedError, "hop.numpy: array(copy=np._CopyMode.NEVER) "
                                                    "of an ndarray while tracing")
        a = asarray(object)
        if not _np.shares_memory(object, _np.asarray(a)):  # (hop's copy of a read-only one)
            raise ValueError("Unable to avoid copy while creating a new array.")
        object = a
    if array(object, None, False, order) is not object:
        raise ValueError("Unable to avoid copy while creating a new array.")
    if ndmin > object.ndim:  # (NumPy's view with leading dims of 1)
        return object.reshape((1,) * (ndmin - object.ndim) + object.shape)
    return object


def array(object, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, like=None):
    ro = False
    if _core._array_like(object):
        object = _np.asarray(object)  # (its .base is the object, as NumPy's)
    if isinstance(object, ndarray) and object._scalar:
        copy = True  # a NumPy scalar is a value: its array is a new 0-d array, never itself
    if isinstance(object, (list, tuple)):
        t = _from_nested(object, dtype)
    else:
        o = _core.operand(object, "array")
        t = o.t if o.t is not None else _t(object, "array")
        src = t
        if dtype is not None:
            _core.complex_cast_warns(_core.np_dtype(t), dtype, "array of complex values with "
                                     "a real dtype=")
            t = _core.cast(t, _np.dtype(dtype))
        if isinstance(object, ndarray) and (copy or t is not src or
                                            not _in_order(object, order)) and ndmin <= t.ndim:
            # a new array of an array: in NumPy's order= (K: the array's)
            from ._ufuncs import in_memory_order

            def compute(view, _):
                v = view(src)
                c = _core.cast(v, _np.dtype(dtype)) if dtype is not None else v
                return c.clone() if c is v else c

            return in_memory_order(_kind_of(object), (object,), tuple(src.shape), compute,
                                   order)
        if isinstance(object, ndarray) and t is src and ndmin <= t.ndim:
            return object  # NumPy's too: the array itself, its layout kept
        if copy and (t is o.t):
            t = t.clone()
        # without a copy NumPy's result is the array itself, read-only if it
        # is (hop's tensor over a read-only array is a copy: a write would be lost)
        ro = t is o.t and isinstance(object, _np.ndarray) and not object.flags.writeable
    while t.ndim < ndmin:
        t = t.unsqueeze(0)
    r = ndarray(t)
    r._ro = ro
    if t is not None and isinstance(object, _np.ndarray) and o.t is t and ndmin <= 0 and \
            object.base is not None and not _C._is_proxy(t):
        r._ob = object.base  # (hop's array over a NumPy view's memory: that view's base)
    return r


@implements(name="asarray")
def _public_asarray(a, dtype=None, order=None, *, like=None):
    _kept_dtype_of(a, dtype, "asarray")
    return asarray(a, dtype, order)


def asarray(a, dtype=None, order=None, *, like=None):
    if isinstance(a, ndarray) and not a._scalar and \
            (dtype is None or _np.dtype(dtype) == a.dtype) and order not in ("C", "F"):
        return a
    if type(a) is _np.ndarray and order not in ("C", "F") and \
            (dtype is None or _np.dtype(dtype) == a.dtype) and a.flags.writeable and \
            builtins.any(s < 0 for s in a.strides) and not _core.tracing():
        # NumPy's asarray is the array itself, whose negative strides hop's
        # memory cannot hold: hop's view of its memory in positive strides,
        # reversed (a view hop makes as a copy, which writes go back
        # through), not a copy that writes would be lost in
        flips = tuple(slice(None, None, -1) if s < 0 else slice(None) for s in a.strides)
        return asarray(a[flips])[flips]
    return array(a, dtype=dtype, copy=False, order=order)


@implements(name="fromiter")
def fromiter(iter, dtype, count=-1, *, like=None):
    """NumPy's fromiter: the iterable's first count items (all of them for
    count < 0) as a 1-d array of dtype, each item cast as NumPy casts it
    (unsafely); items that are traced values are stacked in the trace."""
    count = operator.index(count)
    it = builtins.iter(iter)
    items = list(it) if count < 0 else [x for _, x in zip(range(count), it)]
    if not builtins.any(_has_hop(x) for x in items):
        a = _np.fromiter(items, dtype, count)
        _core.hop_dtype(a.dtype, "fromiter")
        return ndarray(_C.tensor(a))
    if count >= 0 and len(items) < count:
        raise ValueError(f"iterator too short: Expected {count} but iterator had only "
                         f"{len(items)} items.")
    dt = _np.dtype(dtype)
    ts = [_t(x, "fromiter") for x in items]
    if builtins.any(t.ndim != 0 for t in ts):
        raise ValueError("setting an array element with a sequence.")
    return ndarray(_C.stack([_core.cast(t, dt) for t in ts], 0))


_public_array.__name__ = _public_array.__qualname__ = "array"
_public_asarray.__name__ = _public_asarray.__qualname__ = "asarray"
asanyarray = _public_asarray
__all__ += ["asanyarray"]
PUBLIC.update(asanyarray=_public_asarray)


@implements(name="ascontiguousarray")
def ascontiguousarray(a, dtype=None, *, like=None):
    """NumPy's: a itself (cast to dtype) when its memory is in C order, else
    a copy in C order (asarray's order='C', _in_order); at least 1-d (a 0-d
    array's view of shape (1,))."""
    _kept_dtype_of(a, dtype, "ascontiguousarray")
    r = asarray(a, dtype=dtype, order="C")
    return reshape(r, (1,)) if r.ndim == 0 else r


@implements(name="asfortranarray")
def asfortranarray(a, dtype=None, *, like=None):
    """NumPy's: a itself (cast to dtype) when its memory is in Fortran
    order, else a copy in Fortran order (asarray's order='F'); at least 1-d
    (a 0-d array's view of shape (1,))."""
    _kept_dtype_of(a, dtype, "asfortranarray")
    r = asarray(a, dtype=dtype, order="F")
    return reshape(r, (1,)) if r.ndim == 0 else r


@implements(_np.copy)
def copy(a, order="K", subok=False, *, _kind=None):
    from ._ufuncs import in_memory_order
    _kept_dtype_of(a, None, "copy")
    t = _t(a, "copy")
    return in_memory_order(_kind or _kind_of(a), (a,), tuple(t.shape),
                           lambda view, _: view(t).clone(), order)


# ------------------------------------------------------ where, clip, round

@implements(_np.where)
def where(condition, x=_np._NoValue, y=_np._NoValue, *, _kind=None):
    # (not given is NumPy's _NoValue: an x or y of None is an operand, of
    # which NumPy makes an object array, hop's DTypeError below)
    if x is _np._NoValue and y is _np._NoValue:
        return nonzero(condition, _kind=_kind)
    if x is _np._NoValue or y is _np._NoValue:
        raise ValueError("either both or neither of x and y should be given")
    if x is None or y is None:
        _core.hop_dtype(_np.dtype(object), "where")  # (raises)
    if _kind is None or _kind is ndarray:
        r = _eager_shape.where(condition, x, y)  # (None: the general path's)
        if r is not None:
            return r
    kind = _kind or result_kind((condition, x, y), ndarray)
    c = _t(condition, "where")
    if _core.np_dtype(c) != _np.dtype(bool):
        c = _C.ne(c, 0)
    ops = [_core.operand(x, "where"), _core.operand(y, "where")]
    dt = _core.result_dtypes(lambda a, b: _np.where(_np.empty(0, bool), a, b), ops, "where")[0]
    vals = [_core.as_compute(o, dt) for o in ops]
    if not builtins.any(isinstance(v, _C.Tensor) for v in vals):
        vals[0] = _C.full((), vals[0], dtype=_core.hop_dtype(dt, "where"))
    from ._lib import broadcast_shapes
    try:
        shape = broadcast_shapes(*(tuple(v.shape) for v in (c, *vals)
                                   if isinstance(v, _C.Tensor)))
    except ValueError:
        shapes = [tuple(c.shape)] + [tuple(o.t.shape) if o.t is not None else () for o in ops]
        if not builtins.all(type(d) is int for s in shapes for d in s):
            raise
        raise ValueError("operands could not be broadcast together with shapes " +
                         "".join(_core.shape_text(s) + " " for s in shapes)) from None
    from ._ufuncs import in_memory_order
    # NumPy's where iterates condition, x and y in K order
    return in_memory_order(kind, (condition, x, y), shape, lambda view, _: _core.cast(
        _C.where(view(c), *(view(v) for v in vals)), dt), how="iter")


def _scalar_nan(v):
    """Whether v is a NaN of no dimensions whose value is known (a Python
    or NumPy scalar, a concrete 0-d array): NumPy's _clip_dep_is_scalar_nan."""
    if type(v) is float:
        return v != v
    if isinstance(v, complex):
        return math.isnan(v.real) or math.isnan(v.imag)
    t = _core.tensor_of(v)
    if t is not None:
        if t.ndim != 0 or _core.np_dtype(t).kind not in "fc":
            return False
        # traced (an argument, or a capture: its memory may change), a
        # decision hop.compile specialises on (a NaN is no bound, as
        # eagerly, where the recording run decides the same) and hop.trace
        # cannot make
        return _core.decide(_C.ne(t, t), "clip: whether a bound of no dimensions is NaN")
    if isinstance(v, (_np.generic, _np.ndarray)) and _np.ndim(v) == 0 and v.dtype.kind in "fc":
        return bool(_np.isnan(v))
    return False


@implements(_np.clip)
def clip(a, a_min, a_max, out=None, *, _kind=None, **kwargs):
    nan_lo, nan_hi = _scalar_nan(a_min), _scalar_nan(a_max)
    if nan_lo or nan_hi:
        # NumPy 1.24's _clip: a NaN bound of no dimensions means no bound
        # (-inf, inf: a Python float, which its dtype resolution reads as it
        # reads the NaN), and warns; a NaN in a bound array propagates
        # (_core.numpy_warns: traced, a break of hop.compile's graph, so
        # that every call warns)
        a_min, a_max = -math.inf if nan_lo else a_min, math.inf if nan_hi else a_max
        _core.numpy_warns("clip with a NaN bound", "Passing `np.nan` to mean no clipping in "
                          "np.clip has always been unreliable, and is now deprecated. In future, "
                          "this will always return nan, like it already does when min or max are "
                          "arrays that contain nan. To skip a bound, pass either None or an np.inf "
                          "of an appropriate sign.", DeprecationWarning)
    if out is None and not kwargs and (_kind is None or _kind is ndarray):
        # (the eager fast path: np_eager.c fast_clip; None where this one answers)
        r = _C._np_eager_clip(a, a_min, a_max)
        if r is not None:
            return r
    from ._ufuncs import call_ufunc
    kind = _kind or result_kind((a, a_min, a_max), ndarray)
    kw = dict(kwargs, out=out) if out is not None else kwargs
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    if a_min is None:
        name, args = "minimum", (a, a_max)
    elif a_max is None:
        name, args = "maximum", (a, a_min)
    else:
        name, args = "clip", (a, a_min, a_max)
    if "casting" in kwargs:
        return call_ufunc(name, args, kw, kind)
    # NumPy 1.24's _clip_dep_invoke_with_casting: without casting=, an out=
    # the result does not cast to by 'same_kind' is written unsafely, with
    # its DeprecationWarning (a warning of the dtypes: replayed on every
    # compiled call), given at the line of _methods._clip that calls it
    from numpy.core._exceptions import _UFuncOutputCastingError
    try:
        return call_ufunc(name, args, kw, kind)
    except _UFuncOutputCastingError as e:
        _core.numpy_warns("clip into an out= of another kind",
                          f"Converting the output of clip from {e.from_!r} to {e.to!r} is "
                          f"deprecated. Pass `casting=\"unsafe\"` explicitly to silence this "
                          f"warning, or correct the type of the variables.", DeprecationWarning,
                          replay=True, at=_clip_line(name))
    return call_ufunc(name, args, dict(kw, casting="unsafe"), kind)


_CLIP_LINES = None


def _clip_line(name):
    """(module, line) of NumPy 1.24's _methods._clip that calls
    _clip_dep_invoke_with_casting with ufunc name (minimum, maximum or
    clip), found in NumPy's source once; None without it."""
    global _CLIP_LINES
    if _CLIP_LINES is None:
        import inspect
        mod = _np.core._methods
        try:
            lines, first = inspect.getsourcelines(mod._clip)
        except (AttributeError, OSError, TypeError):
            lines, first = [], 0
        calls = {}
        for i, text in enumerate(lines):
            for uf in ("minimum", "maximum", "clip"):
                if f"um.{uf}, a," in text and "_clip_dep_invoke_with_casting(" in lines[i - 1]:
                    calls[uf] = first + i - 1
        _CLIP_LINES = (mod, calls)
    line = _CLIP_LINES[1].get(name)
    return None if line is None else (_CLIP_LINES[0], line)


@implements(_np.round, _np.around, _np.round_, name="round")
@_checked(_np.round)
def round_(a, decimals=0, out=None, *, _kind=None):
    """NumPy 1.24's PyArray_Round: an integer array with decimals >= 0 is
    itself (copied into out= by the 'same_kind' rule), decimals 0 is rint;
    else multiply(a, f, out=o), rint(o, out=o), true_divide(o, f, out=o)
    (divide, then multiply, for decimals < 0), with f the Python float
    power_of_ten(|decimals|) and o out= or a new array of a's dtype (float64
    for an integer a, cast back to a's dtype after): each ufunc's loop is
    the one NumPy's value-based promotion picks for o and f (1e5 does not
    fit float16, so float16's multiply runs in float32; a 0-d array's in
    float64), its result cast into o under 'same_kind' (NumPy's
    UFuncTypeError before anything is written).  A complex array rounds
    each part.  Eagerly its floating-point warnings are NumPy's (_checked:
    a flag raised has NumPy compute the call again)."""
    kind = _kind or _kind_of(a)
    t = _t(a, "round")
    # (NumPy's round of a 0-d array is a NumPy scalar: PyArray_Return)
    scalar = t.ndim == 0 and out is None
    dt = _core.np_dtype(t)
    if out is not None:
        from ._ufuncs import out_array
        if not out_array(out):
            raise TypeError("hop.numpy: round: out= must be an array")
        if _size(tuple(out.shape)) != _size(tuple(t.shape)):
            raise ValueError("invalid output shape")
    decimals = operator.index(decimals)
    if dt.kind == "c":
        # NumPy's: arr = out (or a copy of a); arr.real = a.real.round(d);
        # arr.imag = a.imag.round(d)
        re = _round_t(_C._op("real", t), decimals, None, t.ndim)
        if out is not None and out.dtype.kind != "c":
            # (a real out's .real is itself, written unsafely; it has no
            # imaginary part to set.  Eagerly NumPy's own call: its warnings
            # of both parts' rounding come before its TypeError)
            from ._ufuncs import _traced_any, by_numpy
            if not _core.tracing() and not _core._recording() and \
                    not _traced_any((a, out)):
                return by_numpy(_np.round, "round", (a, decimals, out), {}, kind, out)
            _out(kind, _core.cast(re(), out.dtype), out=out, what="round")
            raise TypeError("array does not have imaginary part to set")
        im = _round_t(_C._op("imag", t), decimals, None, t.ndim)
        r = _C._op("complex", re(), im())
        if out is not None:
            r = _core.cast(r, out.dtype)
        return _out(kind, r, scalar=scalar, out=out, what="round")
    if dt.kind in "iu" and decimals >= 0:
        # PyArray_AssignArray into out= (NPY_DEFAULT_ASSIGN_CASTING)
        if out is not None and not _np.can_cast(dt, out.dtype, "same_kind"):
            raise TypeError(f"Cannot cast array data from {dt!r} to {out.dtype!r} according "
                            f"to the rule 'same_kind'")
        r = t.clone() if out is None else _core.cast(t, out.dtype)
        return _out(kind, r, scalar=scalar, out=out, what="round")
    # (decimals 0 is rint(a) or rint(a, out=out): a bool's is float16)
    od = out.dtype if out is not None else None if decimals == 0 else \
        _np.dtype(_np.float64) if dt.kind in "iu" else dt
    r = _round_t(t, decimals, od, out.ndim if out is not None else t.ndim)()
    if out is None and dt.kind in "iu":
        r = _core.cast(r, dt)  # (unsafely: 127 of an int8 rounds to 130, which wraps)
    return _out(kind, r, scalar=scalar, out=out, what="round")


def _power_of_ten(n):
    """NumPy's power_of_ten: 1e9 multiplied by 10. n - 9 times above 8."""
    if n < 9:
        return float(10 ** n)
    r = 1e9
    for _ in range(n - 9):
        r *= 10.0
        if r == _np.inf:
            break
    return r


def _loop_dtype(uf, dt, nd, f=None):
    """The dtype of NumPy's loop of ufunc uf on an array of dtype dt and nd
    dims (0: a scalar to value-based promotion) and the Python float f."""
    return _loop_dtype_of(uf, _np.dtype(dt), nd > 0, f)


@functools.lru_cache(maxsize=512)
def _loop_dtype_of(uf, dt, dims, f):
    x = _np.zeros((0,) if dims else (), dt)
    return _core.numpy_probe(lambda: uf(x) if f is None else uf(x, f)).dtype


def _round_t(t, decimals, od, nd):
    """PyArray_Round of tensor t (real) into a new array of dtype od
    (None: t's own; with decimals 0 rint's), which has nd dims: a function
    that computes it.  NumPy's UFuncTypeError when a ufunc's result does not
    cast to od by 'same_kind', raised here, before anything is computed:
    the loops' dtypes are asked of NumPy first, whose ufunc calls clear the
    floating-point flags that hop's computing raises and the caller reads."""
    dt = _core.np_dtype(t)
    if decimals == 0:
        ldt = _loop_dtype(_np.rint, dt, t.ndim)
        od = ldt if od is None else _np.dtype(od)
        _same_kind(_np.rint, ldt, od)
        return lambda: _core.cast(_rint(_core.cast(t, ldt)), od)
    od = dt if od is None else _np.dtype(od)
    f = _power_of_ten(abs(decimals))
    op1, op2 = (_np.multiply, _np.true_divide) if decimals > 0 else \
        (_np.true_divide, _np.multiply)
    l1 = _same_kind(op1, _loop_dtype(op1, dt, t.ndim, f), od)
    l2 = _same_kind(op2, _loop_dtype(op2, od, nd, f), od)

    def step(uf, x, ldt):
        x = _core.cast(x, ldt)
        return _core.cast(x * f if uf is _np.multiply else x / f, od)

    # op1(a, f, out=o); rint(o, out=o) in o's dtype; op2(o, f, out=o)
    return lambda: step(op2, _rint(step(op1, t, l1)), l2)


def _same_kind(uf, ldt, od):
    """ldt, NumPy's UFuncTypeError unless ufunc uf's loop dtype ldt casts to
    the out= dtype od by 'same_kind'."""
    if not _np.can_cast(ldt, od, "same_kind"):
        raise _core.ufunc_cast_error(uf.__name__, ldt, od, "same_kind")
    return ldt


def _rint(x):
    """NumPy's rint of tensor x (a complex one's each part)."""
    if _core.np_dtype(x).kind == "c":
        return _C._op("complex", _C.round(_C._op("real", x)), _C.round(_C._op("imag", x)))
    return _C.round(x)


around = round_
__all__ += ["around"]


# ------------------------------------------------------------ linear algebra

# In _products.py, on the registry and helpers above: imported here, where
# they were, so that hop.numpy lists its names in the same order.
from ._products import dot, einsum, inner, outer, tensordot, vdot  # noqa: E402,F401


# ---------------------------------------------------------------- sorting

def _sorting(a, axis, _kind, what, sort_any, kind=None, order=None):
    # sort/argsort: axis None sorts the flattened array.  A 0-d array has
    # no axis to sort along (NumPy's AxisError), but argsort takes it as
    # one element (array([0]), its axis checked against 1 dim)
    t = _t(a, what)
    k = _sort_kind(kind)
    no_fields(order)
    if axis is None:
        t, axis = t.reshape(-1), 0
    elif t.ndim == 0:
        if what != "argsort":
            _np.core.multiarray.normalize_axis_index(axis, 0)
        t = t.reshape(1)
    # (ndarray.sort reads its axis as normalize_axis_index does, argsort as
    # PyArray_AxisConverter)
    ax = _axis_index(axis, t.ndim) if what == "sort" else _axis(axis, t.ndim)
    out_kind = _kind or _kind_of(a)
    # np.sort sorts a.copy(order="K"): its result has a's memory order (a
    # Fortran-ordered a gives a Fortran-ordered result); argsort's is C's
    perm = None
    if what == "sort" and axis is not None:
        from ._ufuncs import memory_order
        perm = memory_order(out_kind, (a,), t.ndim, "K", how="like")
    if perm is not None:
        t, ax = t.permute(*perm), perm.index(ax)
    r = sort_any(t, ax, k)
    if k != _corder.STABLE and _core.checking():
        flag = _ties_unknown(t, ax, what)
        if flag is not None:
            r = _exact.checked(_core.unknown_if(flag, r, _core.CHECK_TIES))
    if perm is None:
        return wrap(out_kind, r)
    inverse = tuple(sorted(range(len(perm)), key=perm.__getitem__))
    return transpose(wrap(out_kind, r), inverse, _kind=out_kind)


# NumPy's sortkind_parser: the first letter decides
_SORT_KINDS = {"q": _corder.QUICK, "h": _corder.HEAP, "m": _corder.STABLE, "s": _corder.STABLE}


def _sort_kind(kind):
    """The sort ops' kind for NumPy's kind argument (None: quicksort)."""
    if kind is None:
        return _corder.QUICK
    if isinstance(kind, bytes):
        kind = kind.decode("latin-1")
    if not isinstance(kind, str):
        raise TypeError(f"sort kind must be str, not {type(kind).__name__}")
    k = _SORT_KINDS.get(kind[:1].lower())
    if k is None:
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")
    return k


def _ties_unknown(t, ax, what):
    """The 0-d bool "NumPy's order of ties is not hop's" for a quicksort or
    heapsort of t along ax, or None where hop's kernel makes NumPy's own
    comparisons (runtime/scan_sort.c): all but one case.  NumPy 1.24's
    sort of float32 values on an AVX-512 machine is a vector sort, whose
    order of -0.0 and 0.0 (its only distinguishable ties) is its network's,
    so a line holding both zeros is unknown."""
    npd = _core.np_dtype(t)
    if what != "sort" or npd != _np.dtype(_np.float32):
        return None
    zero = _C.eq(t, 0)
    neg = _C.lt(_C.copysign(_C.full((), 1.0, dtype=t.dtype), t), 0)
    has_neg = _C.any(_C.logical_and(zero, neg), [ax], False)
    has_pos = _C.any(_C.logical_and(zero, _C.logical_not(neg)), [ax], False)
    return _C.any(_C.logical_and(has_neg, has_pos), None, False)


@implements(_np.sort)
def sort(a, axis=-1, kind=None, order=None, *, _kind=None):
    return _sorting(a, axis, _kind, "sort", _corder.sort_any, kind, order)


@implements(_np.argsort)
def argsort(a, axis=-1, kind=None, order=None, *, _kind=None):
    return _sorting(a, axis, _kind, "argsort", _corder.argsort_any, kind, order)


def no_fields(order):
    """NumPy's refusal of order= (a field name or names) for an array
    without fields, which every hop.numpy array is."""
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")


@implements(_np.take)
def take(a, indices, axis=None, out=None, mode="raise", *, _kind=None):
    from ._index_routines import _clipmode
    mode = _clipmode(mode)
    kind = _kind or result_kind((a, indices), ndarray)
    t = _t(a, "take")
    if axis is None:
        t, axis = t.reshape(-1), 0
    axis = _axis(axis, t.ndim)
    i = _t(indices, "take")
    dt = _core.np_dtype(i)
    # (an array's indices cast safely to intp; a Python or NumPy scalar's, or
    # a list's, by value, as int() reads them)
    if isinstance(indices, (ndarray, _np.ndarray)) and not getattr(indices, "_scalar", False):
        if not _np.can_cast(dt, _np.intp):
            what = "scalar" if indices.ndim == 0 else "array data"
            raise TypeError(f"Cannot cast {what} from {dt!r} to {_np.dtype(_np.intp)!r} "
                            f"according to the rule 'safe'")
    if dt.kind in "fb":  # (NumPy makes a list's numbers intp: [] and [1.0] too)
        i = i.to(_C.int64)
    n = t.shape[axis]
    if n == 0 and _size(i.shape) != 0:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    if mode != "raise":  # NumPy's: clip into the axis (a negative index is 0), or wrap around
        if n != 0:
            i = _C.minimum(_C.maximum(i, 0), n - 1) if mode == "clip" else _C.remainder(i, n)
    elif isinstance(n, int) and not _C._is_proxy(i):
        from ._indexing import _checked
        _checked(i, n, axis)  # (NumPy's IndexError for an index out of range)
    r = _C._op("take", t, axis, i)
    return _out(kind, r, scalar=r.ndim == 0 and out is None, out=out, what="take")


@implements(_np.nonzero)
def nonzero(a, *, _kind=None):
    t = _t(a, "nonzero")
    if t.ndim == 0:
        # NumPy 1.24 deprecates it (an error from NumPy 2.1) and answers as
        # of atleast_1d(a); its bool loop words the warning for a condition,
        # its others for arr
        text = "Use `atleast_1d(cond).nonzero()` if the old behavior was intended. If the " \
            "context of this warning is of the form `arr[nonzero(cond)]`, just use `arr[cond]`." \
            if _core.np_dtype(t) == _np.dtype(bool) else \
            "Use `atleast_1d(arr).nonzero()` if the old behavior was intended."
        _core.numpy_warns("nonzero of a 0-d array", "Calling nonzero on 0d arrays is deprecated, "
                          "as it behaves surprisingly. " + text, DeprecationWarning)
        t = t.reshape(1)
    nz = t.nonzero()
    kind = _kind or _kind_of(a)
    res = tuple(wrap(kind, nz.select(1, d)) for d in range(t.ndim))
    if kind is _C.Tensor:
        return res
    # NumPy's columns are views of its (n, ndim) array of ndim * 8 bytes'
    # stride, also without elements (a new empty array's are zero)
    run = _storage.current()
    if run is not None and t.ndim == 1:
        run.columns.append(res[0])  # (C strides: the runner tells them from a new array's)
    elif run is None and not _C._is_proxy(nz) and nz.shape[0] == 0:
        res = tuple(wrap(kind, _empty_strided(r._t, (t.ndim,))) for r in res)
    return res


@implements(_np.argwhere)
def argwhere(a, *, _kind=None):
    t = _t(a, "argwhere")
    if t.ndim == 0:
        t = t.reshape(1)
        return wrap(_kind or _kind_of(a), t.nonzero().slice(1, 0, 0, 1))
    return wrap(_kind or _kind_of(a), t.nonzero())


# ------------------------------------------------------------ comparisons

@implements(_np.isclose)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False, *, _kind=None):
    kind = _kind or result_kind((a, b), ndarray)
    x, y = _t(a, "isclose"), _t(b, "isclose")
    shapes = (tuple(x.shape), tuple(y.shape))
    if builtins.all(type(d) is int for s in shapes for d in s):
        try:
            _np.broadcast_shapes(*shapes)
        except ValueError:  # NumPy's x - y (or its isfinite(x) & isfinite(y))
            raise ValueError(f"operands could not be broadcast together with shapes "
                             f"{_core.shape_text(shapes[0])} {_core.shape_text(shapes[1])} ") \
                from None
    dt = _np.result_type(_core.np_dtype(x), _core.np_dtype(y), 1.0)
    x, y = _core.cast(x, dt), _core.cast(y, dt)
    finite = _C.logical_and(_C.lt(_C.abs(x), math.inf), _C.lt(_C.abs(y), math.inf))
    close = _C.le(_C.abs(x - y), atol + rtol * _C.abs(y))
    r = _C.where(finite, close, _C.eq(x, y))
    if equal_nan:
        r = _C.logical_or(r, _C.logical_and(_C.ne(x, x), _C.ne(y, y)))
    return wrap(kind, r, scalar=r.ndim == 0)


@implements(_np.allclose)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False, *, _kind=None):
    r = isclose(a, b, rtol, atol, equal_nan, _kind=_C.Tensor)
    return _core.decide(_C.all(r, None, False), "allclose (a Python bool)")


@implements(_np.array_equal)
def array_equal(a1, a2, equal_nan=False, *, _kind=None):
    x, y = _t(a1, "array_equal"), _t(a2, "array_equal")
    if tuple(x.shape) != tuple(y.shape):
        return False
    eq = _C.eq(x, y)
    if equal_nan:
        eq = _C.logical_or(eq, _C.logical_and(_C.ne(x, x), _C.ne(y, y)))
    return _core.decide(_C.all(eq, None, False), "array_equal (a Python bool)")


# --------------------------------------------------------- shape queries

@implements(_np.shape)
def shape(a, *, _kind=None):
    return tuple(_t(a, "shape").shape)


@implements(_np.ndim)
def ndim(a, *, _kind=None):
    return _t(a, "ndim").ndim


@implements(_np.size)
def size(a, axis=None, *, _kind=None):
    t = _t(a, "size")
    return _size(t.shape) if axis is None else _dim_at(t, axis)


@implements(_np.result_type)
def result_type(*arrays_and_dtypes, _kind=None):
    # (None is a dtype: NumPy's float64)
    ops = [_core.operand(x, "result_type") if not isinstance(x, (type, _np.dtype, str))
           and x is not None else None for x in arrays_and_dtypes]
    extra = [_np.dtype(x) for x, o in zip(arrays_and_dtypes, ops) if o is None]
    ops = [o for o in ops if o is not None]
    return _core.result_dtype(ops, "result_type", extra)


# ------------------------------------------------------------- dispatch

def array_function(func, types, args, kwargs, default=ndarray):
    """__array_function__ of hop.numpy arrays and hop.Tensor (and, default
    NumpyArg, hop.SymInt: symint_array_function)."""
    impl = FUNCS.get(func)
    if kwargs:
        check_keywords(func, len(args), kwargs)
    vals = list(args) + list(kwargs.values())  # np.ediff1d(ary=a): arrays as keywords too
    kind = result_kind(vals, NumpyArg if builtins.any(type(x) is NumpyArg for x in vals)
                       else default)
    if impl is None:
        from ._ufuncs import fallback
        return fallback(func, func.__name__, args, kwargs, kind)
    return impl(*args, _kind=kind, **kwargs)


def tensor_array_function(self, func, types, args, kwargs):
    """hop.Tensor.__array_function__: NumPy's functions on hop tensors give
    hop tensors."""
    _core.dispatched()
    return array_function(func, types, args, kwargs)


def symint_array_function(self, func, types, args, kwargs):
    """hop.SymInt.__array_function__: NumPy's functions on a size or lifted
    int (np.clip(n, 0, 3)) are NumPy code's, as symint_array_ufunc."""
    return array_function(func, types, args, kwargs, NumpyArg)


round = round_  # noqa: A001 (NumPy's name)


# ----------------------------------------------------------------- methods

def _method(fn):
    """fn(a, ...) as the method a.fn(...), its result of a's kind (a NumPy
    scalar's method a scalar method: scalar_method)."""
    def m(self, *args, **kwargs):
        return fn(self, *args, _kind=type(self), **kwargs)
    m.__name__ = fn.__name__
    m.__doc__ = fn.__doc__
    return scalar_method(m)


def _reshape_method(self, *shape, order="C"):
    if not shape:
        raise TypeError("reshape() takes exactly 1 argument (0 given)")
    if len(shape) == 1:  # (NumPy's: one argument is the shape; None a view)
        shape = shape[0]
    return reshape(self, shape, order, _kind=type(self))


def _flatten_method(self, order="C"):
    return copy(ravel(self, order, _kind=type(self)), _kind=type(self))


def _sort_method(self, axis=-1, kind=None, order=None):
    self._assign(sort(self, axis, kind, order, _kind=_C.Tensor), "ndarray.sort (in place)")


def _fill_method(self, value):
    t = _core.tensor_of(value)
    if t is not None and not builtins.all(type(n) is int and n == 1 for n in t.shape):
        # NumPy converts the array to one element: one of more elements, or
        # none, is its error (a ValueError, a complex array's TypeError), or
        # for a bool array its warning and False
        if _C._is_proxy(t):
            raise ValueError("setting an array element with a sequence.")
        probe = _np.zeros(1, self.dtype)
        probe.fill(t.numpy())
        value, t = probe[0], None
    if t is None and not isinstance(value, _C.SymInt):
        # (no array: NumPy's conversion of the object, a Decimal's or a
        # Fraction's float() too, and its errors)
        value = _numpys_item(value, self.dtype)
    o = _core.operand(value, "ndarray.fill")
    v = _core.as_compute(o, self.dtype) if o.t is None else _core.cast(o.t, self.dtype)
    self._assign(_C.full(tuple(self._t.shape), v, dtype=self._t.dtype)
                 if not isinstance(v, _C.Tensor) else
                 (v + _C.zeros(tuple(self._t.shape), dtype=self._t.dtype)).to(self._t.dtype),
                 "ndarray.fill")


def _numpys_element(value, npd, empty=False):
    """Number value as NumPy's full converts it into dtype npd (copyto with
    casting='unsafe'), into one element or (empty) none: a NumPy scalar of
    npd (a float beyond an integer dtype's range its loops' low bits; for
    none, 0), NumPy's warnings (a complex's imaginary part dropped, an
    overflow; _core.numpy_warns: traced, a break of hop.compile's graph)
    and its errors under numpy.errstate."""
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        box = _np.full((0,) if empty else (1,), value, dtype=npd)
    for x in w:
        _core.numpy_warns("full of a number its dtype does not hold", str(x.message), x.category)
    return box[0] if not empty else _np.zeros((), npd)[()]


def _numpys_item(value, npd):
    """value (not an array: a Python or NumPy scalar, a str, None, a
    sequence, any object) converted to dtype npd as NumPy's fill and item
    assignment convert it (None to NaN for a float, a str parsed, a bool's
    truth), raising NumPy's exception where NumPy's conversion fails
    (ValueError for 'x' into a float or a sequence, TypeError for a complex
    into a float, OverflowError); a NumPy scalar of npd.  NumPy's warnings
    of the conversion (an out-of-bound Python int's DeprecationWarning, a
    complex's ComplexWarning) are the value's alone: given at the user's
    line and replayed on every compiled call (_core.numpy_warns)."""
    import warnings
    box = _np.empty((), npd)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        box.fill(value)
    for x in w:
        _core.numpy_warns("a conversion NumPy warns of", str(x.message), x.category, replay=True)
    return box[()]


def _clip_method(self, min=None, max=None, out=None, **kwargs):
    return clip(self, min, max, out, _kind=type(self), **kwargs)


for _n, _f in {"sum": sum, "prod": prod, "mean": mean, "std": std, "var": var, "max": max,
               "min": min, "argmax": argmax, "argmin": argmin, "any": any, "all": all,
               "cumsum": cumsum, "cumprod": cumprod, "swapaxes": swapaxes, "squeeze": squeeze,
               "ravel": ravel, "dot": dot, "round": round_, "nonzero": nonzero,
               "argsort": argsort, "take": take, "ptp": ptp}.items():
    setattr(ndarray, _n, _method(_f))
for _n, _f in _eager.REDUCTIONS.items():  # a.sum(), a.max(0): the eager fast path first
    setattr(ndarray, _n, _C._np_eager_method("reduce", _f, getattr(ndarray, _n)))
# a.reshape(...): the eager fast path first (_eager_shape; a C descriptor),
# then the general method (a NumPy scalar's a scalar method)
ndarray.reshape = _C._np_eager_method("reshape", None, scalar_method(_reshape_method))
ndarray.flatten = _flatten_method
ndarray.sort = _sort_method
# a.fill(value): a C method trying a[...] = value's fast path first (a number
# it converts exactly: np_eager_shape.c hop_py__np_fill_call)
ndarray.fill = _C._np_eager_method("fill", None, _fill_method)
ndarray.clip = scalar_method(_clip_method)


def _conj_method(self, out=None):
    """x.conj(out=None): NumPy's PyArray_Conjugate: of a complex array the
    conjugate ufunc (of a 0-d array a NumPy scalar); of a real one the
    array itself (NumPy's conj() is x, 0-d too), or out, x written into it.
    A real NumPy scalar's conj() is a new scalar of its own dtype (NumPy runs
    the 0-d array's method and returns a new scalar: bool stays bool, where
    the conjugate ufunc would give int8)."""
    if out is not None and not hasattr(out, "shape"):
        raise TypeError("output must be an array")
    if self._scalar and out is None and _core.np_dtype(self._tv).kind != "c":
        return self.copy()
    if _core.np_dtype(self._tv).kind == "c":
        from ._ufuncs import call_ufunc
        r = call_ufunc("conjugate", (self,), {} if out is None else {"out": out}, type(self))
        if out is None and r.ndim == 0:
            r._scalar = True  # (PyArray_Return)
        return r
    if out is None:
        return self
    if not _np.can_cast(self.dtype, out.dtype, "same_kind"):
        raise TypeError(f"Cannot cast array data from {self.dtype!r} to {_np.dtype(out.dtype)!r} "
                        f"according to the rule 'same_kind'")
    out[...] = self
    return out


ndarray.conj = ndarray.conjugate = scalar_method(_conj_method)
ndarray.copy = scalar_method(ndarray.copy)
# a.copy(): a C method that tries the eager fast path (an array's elements
# in C order, np_eager.c hop_py__np_copy) first
ndarray.copy = _C._np_eager_method("copy", "copy", ndarray.copy)
# a.astype(dtype): likewise (np_eager_create.c hop_py__np_astype: a
# C-ordered array to a dtype _eager_shape's table maps, by one conversion)
ndarray.astype = _C._np_eager_method("astype", None, scalar_method(ndarray.astype))
# a.T: the eager fast path first (a C descriptor: one view header), then the
# general getter (a.transpose() is _attrs's, with NumPy's checks of the axes)
ndarray.T = property(_C._np_eager_method("transpose", None, scalar_method(ndarray.T.fget)),
                     doc=ndarray.T.__doc__)
del _n, _f
