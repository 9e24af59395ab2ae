"""The eager fast path of hop.numpy's shape functions: `a.reshape(4, 4)`,
`np.reshape(a, s)`, basic indexing (`a[2:5]`, `a[1, None, ...]`,
`a[np.int64(3)]`), one index array (`a[idx]`, `a[mask]`), `a[key] = number`,
`a.item()`, `float(a)`, `int(a)`, `a.T` and `np.transpose`, zeros, ones, empty,
`np.concatenate` and `np.where(c, x, y)` on concrete hop.numpy arrays
outside any trace.

Their general paths (_funcs.reshape, _indexing.getitem, _funcs.transpose,
_funcs.concatenate, _funcs.where) serve every caller: traced arrays and runs'
views, NumPy scalars, views hop made as copies (a[::-1]), symbolic sizes,
every kind of index and operand; that is 80-160 Python calls of bookkeeping
per call, 30-100x NumPy's time on a small array.  Here each function takes
only the common eager case, where most of that bookkeeping decides nothing,
and makes what the general path makes in that case (in C,
python/_C/np_eager_shape.c: hop's own ops cost more than NumPy's whole call here):
- the array is exactly hop.numpy.ndarray (not NumpyArg), not a NumPy
  scalar, not a view of a run's storage (_st) nor a view hop made as a copy
  (_cp), and its tensor is concrete;
- no trace, no run of hop.numpy's, no recording of a path (np_eager_shape.c
  shape_tensor, the ufuncs' gates);
- reshape: order 'C', a shape of plain ints (at most one -1), a non-empty
  array that is C-contiguous (NumPy's flag: the strides of dims of size 1
  aside); the view has NumPy's strides (_storage.numpy_reshape_strides):
  the array's own for its own shape given, else the new shape's C strides;
- indexing: ints, NumPy integer scalars and hop.numpy integer scalars
  (np.argmax's) inside int64, slices of them with no negative step, None
  and Ellipsis (no array, no bool), every int in range and every slice
  taking elements;
- assignment a[key] = value (ndarray.__setitem__): a basic key (as for
  indexing) of a writable array and a Python bool, int or float whose
  conversion to the array's dtype is a plain C one with no warning nor error
  (np_eager_shape.c scalar_element: an int in an integer dtype's range, a float
  or an int of at most 2**53 into float32/float64 without overflow,
  anything into bool; not float16 or complex): the elements filled in
  place and the write counted (_storage.WRITES), as the general path's
  NumPy write does;
- one integer or boolean index array (np_eager_take.c): a concrete
  hop.numpy array of one or more dims, an exact NumPy ndarray or a list of
  exact ints or of exact bools, alone or in a 1-tuple; a[idx] picks rows of
  the first dim (negative ones from the end, a uint64 index read as intp),
  a[mask] the rows of the mask's dims where it holds, in C order, into a
  new array laid out as NumPy's (the key's dims outermost, the rows' dims
  in the array's memory order); a[key] = number fills them in place after every
  position is read and checked (a key that aliases the array, an index out
  of range: nothing written); not an index of 2+ dims in another order
  into a 1-d array (NumPy's result is laid out as the index is);
- a.item(...), float(a), int(a) of a real element (not complex; int() of
  a finite value): the element read in place;
- zeros, ones and empty (np_eager_create.c; hnp.zeros/ones/empty are C
  callables that try it first): a shape of exact ints >= 0 (one, a tuple
  or a list), whose size in bytes fits in intp, and a dtype the table below
  maps, positional or dtype=; not order=, float16 or complex ones;
- asarray(a) of a NumPy array (np_eager_create.c asarray_fast; hnp.asarray
  is a C callable that tries it first): an exact, writable np.ndarray of
  one of hop's dtypes in native byte order, no negative stride, not empty,
  no other argument: a hop.numpy array over its memory (NumPy's base its
  base when it is a view), the general path's own result;
- a.ravel() (a C method, np_eager_shape.c hop_py__np_ravel_call): of an
  array whose tensor is in C order (the general path's _funcs._c_order),
  the reshape fast path's view, reshape(a, -1); no order=;
- a.copy() (a C method, np_eager.c fast_copy): of a C-contiguous array,
  its bytes into a new array (no order=);
- transpose (a.T, a.transpose(...), np.transpose, hnp.transpose): axes
  None or a permutation given as ints, a tuple or a list; one view header;
- concatenate: a list or tuple of arrays of one dtype and one or more dims,
  all C-contiguous, or (not flattened) all dense in one other memory order
  with no dim of size 1 (Fortran order, a transpose), joined in that order
  as NumPy's result is laid out (_funcs._join_order); an int axis in range
  or None, no out, dtype or casting;
- where: a condition array of any dtype (not bool: compared != 0 first, as
  the general path does), and x and y each an array of one or more dims or
  a Python bool, int or float (not both scalars), the arrays all
  C-contiguous (then NumPy's K order is C: _ufuncs.memory_order) or all of
  one shape and dense in one other order (computed in it and viewed back:
  NumPy's K-order result), the result dtype the general path's own
  decision, kept per operand key as the ufuncs' fast path keeps its plans
  (_eager).
Anything else returns None, and the caller's general path answers (its
errors included: an index out of range, a bad shape, arrays that do not
join).  fast(False) turns the fast path off (the tests compare both).
"""

import numpy as _np

from .. import _C
from . import _core, _storage

__all__ = ["reshape", "getitem", "transpose", "concatenate", "where", "fast"]


def fast(on):
    """Turns the fast path on or off (the tests compare the general path's
    answers); the old setting."""
    return _C._np_eager_shape_fast(on)


# reshape(a, newshape) (order 'C') and getitem(a, key) (a basic key) by the
# fast path, or None: C (python/_C/np_eager_shape.c, fast_reshape and fast_getitem),
# one view header over a's storage made as the general path's hop ops make
# it, without their dispatch (hop's own reshape or slice is ~1.5 us); the
# ndarray methods a.reshape(...) and a[key] are C descriptors that try them
# first (_C._np_eager_method "reshape", "getitem")
reshape = _C._np_eager_reshape
getitem = _C._np_eager_getitem
# transpose(a, axes) (None, or a permutation as a tuple or list of ints) by
# the fast path, or None: C too (np_eager_shape.c fast_transpose: one view header;
# a.T and a.transpose(...) are C descriptors that try it first)
transpose = _C._np_eager_transpose


# concatenate(arrays, axis=0) by the fast path, or None: C too
# (np_eager_shape.c fast_concatenate: the new tensor _C.cat makes, filled with one
# copy per array and outer index)
concatenate = _C._np_eager_concatenate


def _where_plan(x, y):
    """The general path's result dtype of where(c, x, y) for operands like x
    and y (_funcs.where) and its hop dtype, or None where the fast path does
    not take them: a scalar the op would convert first (_core.as_compute),
    an error (the general path raises it).  Kept per pair of operand keys
    (np_eager.c operand_key, the ufuncs' keys: an array's dtype, a Python
    int's sign and bit length, a float's class) with _eager's plans."""
    import numpy as np
    try:
        ops = [_core.operand(x, "where"), _core.operand(y, "where")]
        dt = _core.result_dtypes(lambda a, b: np.where(np.empty(0, bool), a, b), ops,
                                 "where")[0]
        for o in ops:
            if o.t is None and _core.as_compute(o, dt) is not o.value:
                return None
        return dt, _core.hop_dtype(dt, "where")
    except Exception:  # noqa: BLE001 - the general path raises it
        return None


# where(condition, x, y) by the fast path, or None: C (np_eager_shape.c
# fast_where: the keys, the plan's lookup, _C.where and the cast)
where = _C._np_eager_where
# NumPy's np.reshape(a, s), np.concatenate(arrays[, axis]) and
# np.where(c, x, y) of hop.numpy arrays reach ndarray.__array_function__,
# a C method (np_eager.c eager_array_function_call) that tries the same fast
# path before the general one (_funcs.array_function): ~2.5 us less a call.
# zeros(shape, dtype), ones(shape, dtype), empty(shape, dtype) by the fast
# path, or None: C (np_eager_create.c), a shape of exact ints >= 0 and a
# dtype argument the table below maps (what NumPy's np.dtype(arg) reads as
# one of hop's dtypes: None, Python's float, int, bool, complex, NumPy's
# scalar types, dtype objects and the common names), a new C-ordered array
# (order= and anything else: the general path, _funcs._filled)
zeros, ones, empty = _C._np_eager_zeros, _C._np_eager_ones, _C._np_eager_empty
# asarray(a) of a NumPy array by the fast path, or None (np_eager_create.c)
asarray = _C._np_eager_asarray


def _dtype_table():
    table = {None: _C.float64}
    names = ["float", "int", "bool", "complex", "f", "d", "i", "l", "b", "B", "h", "H", "I", "L",
             "q", "Q", "e", "F", "D", "?"]
    kinds = [float, int, bool, complex]
    for dt in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
               "float16", "float32", "float64", "complex64", "complex128"):
        d = _np.dtype(dt)
        names += [d.name, d.str, d.char, f"{d.kind}{d.itemsize}"]
        kinds += [d, d.type]
    for k in kinds + names:
        try:
            d = _np.dtype(k)
            table[k] = _core.hop_dtype(d, "dtype")
        except (TypeError, ValueError, _C.UnsupportedError, _C.DTypeError):
            pass
    return table


_C._np_eager_create_init(_dtype_table(),
                         (_np.zeros_like, _np.ones_like, _np.empty_like, _np.copy))

# dot(a, b) by the fast path, or None: C (np_eager.c fast_dot: of arrays of
# one or two dims matmul's fast path, but for an operand of one element,
# BLAS's axpy: the general path's); np.dot(a, b) reaches it through
# __array_function__, hnp.dot(a, b) through _direct, a.dot(b) through
# _products.dot
dot = _C._np_eager_dot
_C._np_eager_shape_init(_where_plan, _C.where, _np.reshape, _np.concatenate, _np.where,
                        _np.transpose, _C.ne, _np.integer, _storage, _np.dot)
