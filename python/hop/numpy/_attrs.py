"""The rest of numpy.ndarray's attributes and methods on hop.numpy arrays:
flat, real and imag (with setters), view, resize and the shape setter (in
place), strides, flags and base, and the methods that are NumPy functions
of _lib, _twodim, _index_routines and _sorting (repeat, diagonal, trace,
searchsorted, put, choose, compress, partition, argpartition, ...), and
NumPy's text functions (array2string, array_repr, array_str).

Layout (strides, contiguity flags) is known of a concrete array; of a
traced one only what NumPy's rules fix (a read-only view is not writeable),
so asking a traced array for its strides is a hop.UnsupportedError, never a
guessed answer.
"""

import builtins
import operator
import sys
import weakref

import numpy as _np

from .. import _C, _breaks
from . import _core, _storage
from . import _funcs as F
from . import _index_routines, _lib, _sorting, _twodim
from ._ndarray import _size_1_text, item_key, ndarray, view, viewed_by, wrap
from ._storage import Step

__all__ = []


# ------------------------------------------------------------------ flat

class _flat_index_error:
    """NumPy's flatiter's text for an index out of bounds ("index 9 is out
    of bounds for size 6": no axis), where hop's indexing names axis 0
    (NumPy's a.flat[9] names it: on=False)."""

    def __init__(self, on=True):
        self.on = on

    def __enter__(self):
        return self

    def __exit__(self, tp, e, tb):
        text = " is out of bounds for axis 0 with size "
        if self.on and tp is not None and issubclass(tp, IndexError) and text in str(e):
            raise IndexError(str(e).replace(text, " is out of bounds for size ")) from None
        return False


class flatiter:
    """a.flat: the elements of a in C order (NumPy's flatiter): indexing
    gives copies or scalars, assignment writes a (values repeated as often
    as the positions need), iteration gives the elements."""

    __slots__ = ("base", "_n", "_i", "_r")

    def __init__(self, base):
        self.base = base
        self._n = F._size(base._t.shape)
        self._i = 0  # (NumPy's .index: the position the iteration is at)
        self._r = None

    def __len__(self):
        return self._n

    def __iter__(self):
        return self  # (NumPy's flatiter is its own iterator)

    def __next__(self):
        if self._i >= self._n:
            raise StopIteration
        if self._r is None:
            self._r = F.ravel(self.base, _kind=type(self.base))
        self._i += 1
        return self._r[self._i - 1]

    @property
    def index(self):
        return self._i

    @index.setter
    def index(self, value):
        raise AttributeError("attribute 'index' of 'numpy.flatiter' objects is not writable")

    @property
    def coords(self):
        return tuple(int(i) for i in _np.unravel_index(self._i, self.base.shape))

    def __delitem__(self, key):
        raise TypeError("Cannot delete iterator elements")

    def _positions(self, key):
        from ._indexing import index_tensor
        with _flat_index_error():
            return index_tensor(_C.arange(self._n), key)

    def __getitem__(self, key):
        flat = self.base._t.reshape(-1)
        from ._indexing import index_tensor
        with _flat_index_error(not isinstance(key, (int, _np.integer))):
            r, _, scalar = index_tensor(flat, key)
        # a copy, a scalar too (a value: a later write to base does not reach it)
        return wrap(type(self.base), r.clone(), scalar=scalar)

    def __setitem__(self, key, value):
        run = _storage.current()
        if run is not None and isinstance(value, ndarray) and not value._scalar and \
                _storage.storage_of(value, run) is _storage.storage_of(self.base, run):
            # NumPy's flat assignment reads the value as it writes, whatever
            # the key (`v.flat[::-1] = v` of v = a.reshape(-1): [0, 1, 2, 2,
            # 1, 0]); a traced write reads it whole (the plan gave the
            # reversal, silently: the forty-sixth session's stress draw)
            from ._indexing import _overlapping_value
            _overlapping_value("ndarray.flat[...] = value", "a flat key")
        if run is None and self._numpy_assigns(key, value):
            return
        pos = self._positions(key)[0].reshape(-1)
        _index_routines._flat_write(self.base, pos, value, "ndarray.flat[...] = value")

    def _numpy_assigns(self, key, value):
        """Eagerly, a value over the base's memory NumPy assigns itself on
        its views of both, reading the value as it writes (`v.flat[::-1] =
        v` of v = G[::2] or V[::2]: hop read the value whole, the reversal,
        silently; the forty-sixth session's stress draws); True when it
        did."""
        a = self.base
        if not isinstance(value, ndarray) or value._scalar or a._ro or \
                _C._is_proxy(a._tv) or _C._is_proxy(value._tv):
            return False
        if a._cp is not None and _storage.numpy_of_copy(a) is None:
            return False  # (hop's copy alone: no NumPy view of the memory to write)
        dst, src = _np.asarray(a), _np.asarray(value)
        if not _np.shares_memory(dst, src):
            return False
        key = _np.asarray(key) if isinstance(key, ndarray) else key
        try:
            dst.flat[key] = src
        finally:
            _storage.numpy_may_write()  # (hop's copies of that memory read it again)
        return True

    def copy(self):
        return F.copy(F.ravel(self.base, _kind=ndarray), _kind=type(self.base))

    def __array__(self, dtype=None):
        """NumPy's: a view of a contiguous base's memory (read-only if the
        base is), else a read-only copy."""
        a = self.base
        if not _C._is_proxy(a._t) and not _core.tracing() and a._t.is_contiguous() and \
                a._cp is None:
            r = _np.asarray(a).reshape(-1)
        else:
            r = _np.asarray(self.copy())
            r.flags.writeable = False
        return r if dtype is None else r.astype(dtype, copy=False)


def _flat(self):
    if self._scalar:
        return flatiter(self._temporary())  # (a write through it leaves the scalar)
    return flatiter(self)


def _set_flat(self, value):
    _index_routines._flat_write(self, _C.arange(F._size(self._t.shape)), value,
                                "ndarray.flat = value")


ndarray.flat = property(_flat, _set_flat, doc="The elements in C order (numpy.flatiter).")


# ------------------------------------------------------------ real, imag

def _complex_part(self, op):
    """NumPy's c.real / c.imag of a complex array: a view of c's memory
    with the part's dtype and c's strides (twice the part's item), so a
    write through either reaches the other; of a complex NumPy scalar a
    scalar.  Eagerly the tensor over the NumPy view of c's memory; traced a
    view step (_storage.part_step: the part of the storage's value, a write
    through it puts into that part)."""
    if self._scalar:
        return wrap(type(self), _C._op(op, self._t), scalar=True)
    t = None
    if _storage.current() is None and not _C._is_proxy(self._t):
        arr = self._t.numpy()
        t = _C.asarray(arr.real if op == "real" else arr.imag)
    return view(type(self), self, _storage.part_step(op), t=t)


def _real(self):
    if _core.np_dtype(self._t).kind == "c":
        return _complex_part(self, "real")
    # a real array (and a real NumPy scalar) is its own real part: NumPy's
    # array_real_get gives the array itself (x.real is x)
    return self


def _set_real(self, value):
    if _core.np_dtype(self._t).kind == "c":
        _set_parts(self, value, "real")
        return
    self[...] = value


def _imag(self):
    if _core.np_dtype(self._t).kind == "c":
        return _complex_part(self, "imag")
    r = wrap(type(self), _C.zeros(tuple(self._t.shape), dtype=self._t.dtype),
             scalar=self._scalar)
    if self.ndim >= 2 and self.flags.f_contiguous and not self.flags.c_contiguous:
        r = _like_layout(self, r)  # (NumPy's PyArray_ISFORTRAN: else C order, not order 'K')
    r._ro = True  # NumPy's imaginary part of a real array is a read-only array
    return r


def _set_parts(self, value, which):
    # z.real = v / z.imag = v: the other part kept, NumPy's write through a view
    re, im = _C._op("real", self._t), _C._op("imag", self._t)
    v = _core.cast(F.asarray(value)._t, _core.np_dtype(re))
    self[...] = ndarray(_C._op("complex", v, im) if which == "real" else _C._op("complex", re, v))


def _set_imag(self, value):
    if _core.np_dtype(self._t).kind == "c":
        _set_parts(self, value, "imag")
        return
    raise TypeError("array does not have imaginary part to set")


def _like_layout(self, r):
    """r (a new array of self's shape) laid out in self's memory order, as
    NumPy's ufuncs lay out their results (order 'K': a Fortran-ordered
    array's round or imag is Fortran-ordered)."""
    if isinstance(r, ndarray) and not r._scalar and self.ndim >= 2 and r.shape == self.shape:
        from ._ufuncs import in_memory_order, memory_order
        if memory_order(type(self), (self,), self.ndim, "K", "K", "like") is not None:
            return in_memory_order(type(self), (self,), self.shape,
                                   lambda view, _: view(r._t).clone(), "K")
    return r


def _round_method(self, decimals=0, out=None, _numpy=ndarray.round):
    """x.round(d): of an integer array and d >= 0 x itself, as NumPy's
    PyArray_Round (a 0-d one's scalar: PyArray_Return); else in x's memory
    order (NumPy's ufuncs compute it)."""
    if out is None and self.dtype.kind in "iu" and not self._scalar and self.ndim and \
            operator.index(decimals) >= 0:
        return self
    r = _numpy(self, decimals, out)
    return r if out is not None else _like_layout(self, r)


def _round_function(a, decimals=0, out=None, *, _kind=None):
    """np.round(a, d) of a hop.numpy array: NumPy's calls a.round(d)."""
    if isinstance(a, ndarray) and _kind in (None, type(a)):
        return a.round(decimals, out)
    return F.round_(a, decimals, out, _kind=_kind)


ndarray.round = _round_method
for _fn in (_np.round, _np.around, _np.round_):
    F.FUNCS[_fn] = _round_function
ndarray.real = property(_real, _set_real, doc="The real part: a real array itself, as a view; "
                        "of a complex array a view of its memory, as NumPy's.")
ndarray.imag = property(_imag, _set_imag, doc="The imaginary part: zeros for a real array.")


# ---------------------------------------------------------------- views

def _view_method(self, dtype=None, type=None):
    """ndarray.view(): a view of the same memory; with another dtype a
    reinterpretation of the bytes (traced: a bitcast of the base's value,
    recomputed after each write to the base; a write through it writes the
    base's bits, _storage.write), with NumPy's errors where the item sizes
    differ."""
    if isinstance(dtype, builtins.type) and issubclass(dtype, (ndarray, _np.ndarray)):
        dtype, type = None, dtype
    kind = builtins.type(self)
    # (a NumPy scalar's view is a scalar)
    if dtype is None or _np.dtype(dtype) == self.dtype:
        return view(kind, self, Step(lambda x: x, lambda x: x.view()), scalar=self._scalar,
                    t=self._t)
    npd = _np.dtype(dtype)
    t = self._t
    if _C._is_proxy(t) or _core.tracing():
        return _bitcast_view(self, kind, npd)
    _core.hop_dtype(npd, "ndarray.view", makes=True)
    if self._cp is not None and npd.itemsize != self.dtype.itemsize:
        # (hop's copy is contiguous where NumPy's view may not be: G[:, ::-2])
        nv = _storage.numpy_of_copy(self)
        if nv is not None:
            nv.view(npd)  # NumPy's ValueError where its last axis is not contiguous
    r = kind(_C.asarray(t.numpy().view(npd)), scalar=self._scalar)
    r._ro = self._ro  # (a view of a read-only array is read-only)
    if not self._scalar:
        viewed_by(r, self)
        if self._cp is not None:
            # a dtype view of a view hop made as a copy (`G[::-1].view(np.int64)`):
            # a view of the copy's memory that remembers it, so its writes
            # reach G and its reads are fresh as the copy's (_storage.eager_write;
            # it was a view of the copy alone, found by the forty-fifth
            # session's alias campaign)
            r._cp = [self, _bitcast_step(npd, self.dtype.itemsize), _storage.WRITES, None]
    return r


def _bitcast_step(npd, old):
    """The view step of ndarray.view(npd) of an array of item size old."""
    hd = _core.hop_dtype(npd, "ndarray.view")

    def bitcast(x):
        return _C._op("bitcast", x, hd)
    bitcast.dtype = npd  # (for the runner, which makes this view of the caller's array again)
    # (the memory offsets of a same-size view are its base's; of another
    # size hop does not follow them: a reshape of it is then undecided)
    return Step(bitcast, (lambda x: x) if old == npd.itemsize else None, kind="bitcast")


def _bitcast_view(a, kind, npd):
    """a.view(npd) of a traced array: NumPy's checks, in its order, then a
    view whose step is a bitcast."""
    _core.hop_dtype(npd, "ndarray.view")
    old, new = a.dtype.itemsize, npd.itemsize
    if old != new:
        if a._t.ndim == 0:
            raise ValueError("Changing the dtype of a 0d array is only supported if the itemsize "
                             "is unchanged")
        run = _storage.current()
        contiguous = _storage.last_axis_contiguous(a, run) if run is not None else True
        if contiguous is None:
            raise _C.UnsupportedError(
                f"hop.numpy: ndarray.view({npd}) of an array whose last axis is contiguous or "
                f"not depending on sizes hop knows only at run time; copy it first "
                f"(`.copy().view(...)`)")
        if not contiguous:
            raise ValueError("To change to a dtype of a different size, the last axis must be "
                             "contiguous")
        if new > old and (a._t.shape[-1] * old) % new != 0:
            raise ValueError("When changing to a larger dtype, its size must be a divisor of "
                             "the total size in bytes of the last axis of the array.")

    return view(kind, a, _bitcast_step(npd, old), scalar=a._scalar)


ndarray.view = _view_method


def _newbyteorder(self, new_order="S"):
    """ndarray.newbyteorder(): a view whose dtype has the other byte order
    (the same bytes read the other way); traced, NumPy's code runs it (a
    break in hop.compile: hop_dtype)."""
    return _view_method(self, self.dtype.newbyteorder(new_order))


ndarray.newbyteorder = _newbyteorder


def _byteswap(self, inplace=False):
    """ndarray.byteswap: the elements' bytes reversed (each part of a
    complex one), a new array or (inplace) into this one; NumPy's own
    swap of the concrete array (traced: NumPy's code runs it, a break)."""
    if _C._is_proxy(self._t) or _core.tracing():
        _breaks.conversion(_C.UnsupportedError, "hop.numpy: ndarray.byteswap of a traced array")
    v = self._t.numpy()
    if not inplace:
        from ._ufuncs import _from_numpy
        return _from_numpy((v[()] if self._scalar else v).byteswap(), builtins.type(self))
    if self._scalar:
        return self
    if self._ro:
        raise ValueError("array to be byte-swapped is read-only")
    self._write(None, _C.asarray(v.byteswap()), "ndarray.byteswap")
    return self


ndarray.byteswap = _byteswap


def _by_numpy_io(name):
    """ndarray.<name> (tofile, dump, dumps): NumPy's own on the concrete
    array (its file, its pickle); traced, NumPy's code runs it (a break),
    where the values are this call's."""
    def method(self, *args, **kwargs):
        if _C._is_proxy(self._t) or _core.tracing():
            _breaks.conversion(_C.UnsupportedError, f"hop.numpy: ndarray.{name} of a traced "
                                                    f"array writes its values out")
        v = self._t.numpy()
        return getattr(v[()] if self._scalar else v, name)(*args, **kwargs)
    method.__name__ = name
    return method


for _name in ("tofile", "dump", "dumps"):
    setattr(ndarray, _name, _by_numpy_io(_name))


def _shape_get(self):
    return tuple(self._t.shape)


def _shape_set(self, value):
    """a.shape = s: a becomes its own reshape, when NumPy's is a view."""
    if self._scalar:
        raise AttributeError("attribute 'shape' of 'numpy.generic' objects is not writable")
    shape, make = F._newshape(value)
    t = self._t
    try:
        r = t.reshape(make)
    except (_C.ShapeError, _C.InvalidError):
        raise ValueError(f"cannot reshape array of size {F._size(t.shape)} into shape "
                         f"{_core.shape_text(shape)}") from None
    out = tuple(r.shape)
    run = _storage.current()
    incompatible = AttributeError("Incompatible shape for in-place modification. Use "
                                  "`.reshape()` to make a copy with the desired shape.")
    if run is None and not _C._is_proxy(self._tv):
        try:
            self._tv = self._tv.view(out)
        except _C.Error:
            raise incompatible from None
        return
    if not _storage.reshape_is_view(self, run, out):
        raise incompatible
    st = _storage.storage_of(self, run)
    # (NumPy's reshape of the shape as given, its -1 too: reshape in _funcs)
    np_out = tuple(-1 if isinstance(n, (int, _np.integer)) and n == -1 else m
                   for n, m in zip(shape, out)) \
        if len(shape) == len(out) and all(isinstance(m, int) for m in out) else None
    step = Step(lambda x: x.reshape(out), (lambda x: x.reshape(np_out)) if np_out else None,
                kind="reshape")
    self._vw = self._vw + (step,)
    if st.foreign:
        self._cv = r
    else:
        self._tv = r
    self._ver = st.version


# (the getter a C method reading a concrete array's tensor first: np_eager.c)
ndarray.shape = property(_C._np_eager_method("attr", "shape", _shape_get), _shape_set,
                         doc="The dims; settable when NumPy's reshape of the array is a view.")


def _resize_method(refs, self, *new_shape, refcheck=True):
    """ndarray.resize: the array's own memory grown (zeros) or cut, in C
    order.  Refused, as NumPy refuses it, for a view or an array whose
    memory is the caller's, and, refcheck true, for one referenced by more
    than the call and one other reference (refs, the reference count NumPy's
    refcheck reads, from the C method ndarray.resize: y = x, a view of x, a
    list holding x; while hop traces too, where the user's code runs)."""
    if operator.index(refcheck) and refs > 2:  # ("hi": NumPy's TypeError)
        refcheck = _REFERENCED
    if self._scalar:
        # (NumPy resizes a temporary array of the scalar, which no name holds)
        return _resize_method(0, self._temporary(), *new_shape, refcheck=False)
    if len(new_shape) == 1 and isinstance(new_shape[0], (tuple, list)):
        new_shape = tuple(new_shape[0])
    if new_shape in ((), (None,)):
        return None
    shape = tuple(int(n) if isinstance(n, _C.SymInt) else operator.index(n)  # ("hi": a TypeError)
                  for n in new_shape)
    if any(n < 0 for n in shape):
        raise ValueError("negative dimensions not allowed")
    run = _storage.current()
    st = self._st
    t = self._t
    n = F._size(shape)
    flat = t.reshape(-1)
    m = flat.shape[0]
    # NumPy's checks (PyArray_Resize) only where the size changes
    if n != m or run is not None:
        if self._vw or (st is not None and st.vw_root is not self) or \
                (self._ro and run is not None) or self._ob is not None:
            raise ValueError("cannot resize this array: it does not own its data")
        if n != m and _weakly_referenced(self):
            raise ValueError("cannot resize an array that references or is referenced\nby "
                             "another array in this way. Use the np.resize function.")
        if self._role is not None or (run is not None and self._run is not run) or \
                (n != m and refcheck is _REFERENCED):
            raise ValueError("cannot resize an array that references or is referenced\nby "
                             "another array in this way.\nUse the np.resize function or "
                             "refcheck=False")
    if n == m and run is None:
        new = t.reshape(shape) if t.is_contiguous() else flat  # (NumPy's memory, new dims)
    elif n <= m:
        new = flat.slice(0, 0, n, 1).clone()
    else:
        new = _C.cat([flat, _C.zeros((n - m,), dtype=t.dtype)], 0)
    new = new.reshape(shape)
    if st is not None:
        st.value = new
        st.version += 1
    self._tv = new
    return None


def _weakly_referenced(a):
    """Whether a weak reference of the user's points at a (NumPy refuses to
    resize such an array, refcheck or not); hop's own are not counted."""
    from .._reads import HopRef
    return any(type(r) is not HopRef for r in weakref.getweakrefs(a))


_REFERENCED = object()  # (refcheck's finding: another reference holds the array)
# (a C method: the reference count it passes on is NumPy's, np_eager.c's "refs")
ndarray.resize = _C._np_eager_method("refs", None, _resize_method)


def _strides(self):
    t = self._t
    if t.ndim == 0:
        return ()  # (a 0-d array's and a NumPy scalar's, whatever its memory)
    if _C._is_proxy(t) or (_core.tracing() and not self._fixed()):
        # hop.compile: the compiled part ends here (NumPy's code reads them)
        _breaks.conversion(_C.UnsupportedError, "hop.numpy: the strides of a traced array are "
                                                "not known while tracing (its memory is laid "
                                                "out when the program runs)")
    return t.numpy().strides


ndarray.strides = property(_strides, doc="The strides in bytes (of a concrete array).")


class _Flags:
    """NumPy's flags of a hop.numpy array: writeable always; the layout
    flags of a concrete array; a NumPy scalar's, which are fixed (not
    writeable, owning its data), of any scalar."""

    def __init__(self, a):
        self._a = a

    @property
    def writeable(self):
        return not self._a._ro and not self._a._scalar

    @writeable.setter
    def writeable(self, value):
        _setflags(self._a, write=value)  # (NumPy's flags.writeable = v is setflags)

    def _np_flags(self):
        a = self._a
        if a._scalar:
            return _np.zeros((), _core.np_dtype(a._t))[()].flags
        t = a._t
        if _C._is_proxy(t) or (_core.tracing() and not a._fixed()):
            # hop.compile: the compiled part ends here (NumPy's code reads them)
            _breaks.conversion(_C.UnsupportedError, "hop.numpy: the layout flags of a traced "
                                                    "array are not known while tracing")
        return t.numpy().flags

    @property
    def owndata(self):
        """NumPy's: the array is no view (a NumPy scalar owns its data);
        eagerly hop's record of the views it made (viewed_by)."""
        a = self._a
        if a._scalar:
            return True
        if type(a) is ndarray and a._run is None and a._st is None and \
                not _C._is_proxy(a._tv):
            return a._ob is None  # (a NumpyArg: the caller's ndarray, below)
        st = a._st
        if a._role is None and a._run is not None and a._run is _storage.current() and \
                (st is None or st.root is None and not st.foreign and st.run is a._run):
            # an array the traced run made: it owns its memory unless it is
            # a view of another (its .base), as eagerly (the tensor's NumPy
            # view, which owns nothing, says False for every one)
            return _base(a) is None
        return self._np_flags().owndata

    def __getattr__(self, name):
        return getattr(self._np_flags(), name)

    def __getitem__(self, key):
        if key in ("W", "WRITEABLE"):
            return self.writeable
        if key in ("O", "OWNDATA"):
            return self.owndata
        return self._np_flags()[key]


ndarray.flags = property(lambda self: _Flags(self), doc="NumPy's flags (see _Flags).")


def _base(self):
    st = self._st
    b = st.vw_root if st is not None and st.vw_root is not self else self._ob
    if _storage.current() is not None and (self._role is not None or st is not None and (
            st.root is not None or st.foreign)):
        # an argument, a captured array or a view of one: NumPy's answer is
        # the caller's array or its own base (x of an argument x[1:]), which
        # the plan cannot give for a later call (the compiled part ends here)
        _breaks.conversion(_C.UnsupportedError, "hop.numpy: the .base of an argument, a "
                                                "captured array or a view of one is the "
                                                "caller's array or its base, not known "
                                                "while tracing")
    run = _storage.current()
    if run is not None and st is not None and id(st) in run.fortran_copies:
        _breaks.conversion(_C.UnsupportedError, "hop.numpy: the .base of an order='F' reshape "
                                                "that copied is NumPy's copy of the array in "
                                                "Fortran order, which a trace does not make")
    return b


ndarray.base = property(_base, doc="The array whose memory this one views, or None.")


def _contains(self, x):
    if self._scalar:
        raise TypeError(f"argument of type 'numpy.{self.dtype.type.__name__}' is not iterable")
    return bool(F.any(self == x, _kind=ndarray))


def _array_only(name):
    """ndarray.<name>, which a NumPy scalar has not (AttributeError)."""
    method = getattr(ndarray, name)

    def get(self):
        if self._scalar:
            raise AttributeError(f"'numpy.{self.dtype.type.__name__}' object has no attribute "
                                 f"'{name}'")
        return method.__get__(self, type(self))
    return property(get, doc=method.__doc__)


ndarray.__contains__ = _contains
# (NumPy's copy.copy and copy.deepcopy keep the memory order: 'K')
ndarray.__copy__ = lambda self: self.copy(order="K")
ndarray.__deepcopy__ = lambda self, memo: self.copy(order="K")


def _complex(self):
    if self.size != 1:
        raise TypeError(_size_1_text("complex"))
    if self.dtype.kind != "c":
        return complex(float(self))
    if self._fixed():
        return complex(self._scalar_value("complex"))
    return complex(self._scalar_tensor("complex"))


ndarray.__complex__ = _complex


def _round(self, ndigits=None):
    if not self._scalar or self.dtype.kind == "b":
        # (np.bool_ is not a number: no __round__, as an ndarray has none)
        raise TypeError(f"type numpy.{'bool_' if self._scalar else 'ndarray'} doesn't define "
                        f"__round__ method")
    if ndigits is None and self.dtype.kind != "c":
        return round(float(self))
    # a NumPy scalar rounded to digits, or a complex one, is a NumPy scalar
    # (np.complex128(2.5+1.6j).__round__() is np.complex128(2+2j))
    ndigits = 0 if ndigits is None else ndigits
    # a NumPy scalar rounded to digits is a NumPy scalar (np.float64)
    r = F.round_(self, ndigits, _kind=type(self))
    return type(self)(r._t, scalar=True) if self._scalar else r


ndarray.__round__ = _round


def _tobytes(self, order="C"):
    self._read_now("tobytes()")
    return self._t.numpy().tobytes(order)


def _bytes(self):
    """bytes(a) as CPython makes it of a NumPy array or scalar, which export
    their memory: an integer 0-d array or scalar (np.True_ too: __index__)
    is a count of zero bytes, any other array its elements' bytes in C
    order.  (Without this bytes() iterated a hop.numpy array, whose class
    exports no buffer: `bytes(hnp.arange(3))` was 3 bytes, NumPy's 24.)"""
    if self.ndim == 0:
        try:
            n = operator.index(self)
        except TypeError:
            pass
        else:
            return bytes(n)
    return self.tobytes()


ndarray.tobytes = _tobytes
ndarray.__bytes__ = _bytes


def _data(self):
    """NumPy's a.data: a memoryview of the memory NumPy's array views (a
    view hop made as a copy, a[::-1], included: a write through it reaches
    a's base; read-only where NumPy's array is), of a NumPy scalar a copy,
    read-only.  (memoryview(a) itself is CPython's TypeError: a hop.numpy
    array's class exports no buffer, docs/RELIABILITY.md.)"""
    a = self.__array__()
    if self._scalar:
        a.flags.writeable = False
    return a.data


ndarray.data = property(_data, doc="The memory (of a concrete array) as a memoryview.")


# ----------------------------------------------------- methods of functions

for _name, _fn in {"repeat": _lib.repeat, "diagonal": _twodim.diagonal, "trace": _twodim.trace,
                   "searchsorted": _sorting.searchsorted,
                   "compress": lambda a, condition, axis=None, out=None, _kind=None:
                   _index_routines.compress(condition, a, axis, out, _kind=_kind),
                   "argpartition": _sorting.argpartition}.items():
    setattr(ndarray, _name, F._method(_fn))


def _choose_method(self, *choices, out=None, mode="raise"):
    # NumPy's array_choose: one positional argument is the sequence of
    # choices, several are the choices themselves (`out` and `mode` are
    # keywords only)
    if not choices:
        raise TypeError("choose() takes exactly 1 argument (0 given)")
    choices = choices[0] if len(choices) == 1 else choices
    return _index_routines.choose(self, choices, out, mode, _kind=type(self))


ndarray.choose = F.scalar_method(_choose_method)


def _put_method(self, indices, values, mode="raise"):
    _index_routines.put(self, indices, values, mode)


def _partition_method(self, kth, axis=-1, kind="introselect", order=None):
    if isinstance(axis, float):  # (the method's axis is an int: None is np.partition's)
        raise TypeError("integer argument expected, got float")
    axis = operator.index(axis)
    _sorting.check_select(kind, order)
    _sorting._check_kth(self._t, kth, axis, F._axis_index)
    self._assign(F.sort(self, axis, _kind=_C.Tensor), "ndarray.partition (in place)")


def _setflags(self, write=None, align=None, uic=None):
    if write is not None and _core.tracing() and (self._role is not None or self._run is None):
        # (an argument's or a global's flag is the caller's array's: the
        # statement runs in Python, on it)
        _breaks.conversion(_C.UnsupportedError, "hop.numpy: setflags of an array the caller "
                                                "holds changes the caller's array")
    if write is not None:
        # NumPy's rule where hop keeps it: an array the user made read-only
        # may be made writeable again when its base is writeable; one hop
        # made read-only (a broadcast, a diagonal, .imag of a real array,
        # which hop may hold as a copy) is refused, never written apart
        if write and self._ro and not (self._ro is _USER_READ_ONLY and
                                       _writeable_base(_base(self))):
            raise ValueError("cannot set WRITEABLE flag to True of this array")
        self._ro = _USER_READ_ONLY if not write else False


class _UserReadOnly:
    """The read-only flag setflags(write=False) sets (true, as hop's own)."""

    def __bool__(self):
        return True

    def __repr__(self):
        return "_USER_READ_ONLY"


_USER_READ_ONLY = _UserReadOnly()


def _writeable_base(b):
    """Whether NumPy's base b of an array lets it be made writeable again."""
    if b is None:
        return True
    if isinstance(b, (ndarray, _np.ndarray)):
        return b.flags.writeable
    try:
        return not memoryview(b).readonly  # (frombuffer's buffer object)
    except TypeError:
        return False


def _itemset(self, *args):
    if self._scalar:
        raise ValueError("array-scalars are immutable")  # (NumPy's, before its arguments)
    if not args:
        raise ValueError("itemset must have at least one argument")
    *key, value = args
    key = item_key(self, tuple(key))
    if not key and self.size != 1:
        raise ValueError("can only convert an array of size 1 to a Python scalar")
    self[key] = value


ndarray.put = _put_method
ndarray.partition = _partition_method
ndarray.setflags = _setflags
ndarray.itemset = _itemset
del _name, _fn


# --------------------------------------------------------- shared memory

def _share(a, b, exact):
    """NumPy's may_share_memory (exact=False: the memory bounds overlap) and
    shares_memory (an element in common) of hop.numpy arrays: eagerly
    NumPy's on their memory; while tracing from their storages (an array and
    its views share one; arguments are taken as not sharing memory)."""
    if not (isinstance(a, (ndarray, _np.ndarray)) and isinstance(b, (ndarray, _np.ndarray))):
        return False  # NumPy converts anything else to a new array
    run = _storage.current()
    fn = _np.shares_memory if exact else _np.may_share_memory
    if not (isinstance(a, ndarray) and isinstance(b, ndarray)):
        # an ndarray beside a hop.numpy array: NumPy's answer on both
        # memories (before, False whatever they shared)
        if run is not None:
            _breaks.conversion(_C.UnsupportedError, "hop.numpy: shares_memory of an ndarray "
                                                    "and a hop.numpy array while tracing")
        return bool(fn(*(_memory(x) if isinstance(x, ndarray) else x for x in (a, b))))
    if run is None or (not _C._is_proxy(a._tv) and not _C._is_proxy(b._tv) and
                       a._st is None and b._st is None):
        return bool(fn(_memory(a), _memory(b)))
    sa, sb = _storage.storage_of(a, run), _storage.storage_of(b, run)
    if sa is not sb:
        return False
    oa, ob = _storage._offsets(a, sa), _storage._offsets(b, sb)
    if oa is None or ob is None:
        raise _C.UnsupportedError("hop.numpy: shares_memory of views whose layout is symbolic is "
                                  "not supported")
    if oa.size == 0 or ob.size == 0:
        return False
    pa, pb = _in_parts(a, sa), _in_parts(b, sb)
    if pa != pb:  # a complex item k is the parts' items 2k and 2k + 1
        if pa:
            ob = _np.concatenate([ob.reshape(-1) * 2, ob.reshape(-1) * 2 + 1])
        else:
            oa = _np.concatenate([oa.reshape(-1) * 2, oa.reshape(-1) * 2 + 1])
    if exact:
        return bool(_np.intersect1d(oa, ob).size)
    return bool(oa.max() >= ob.min() and ob.max() >= oa.min())


def _in_parts(a, st):
    """Whether a's memory offsets (_storage._offsets) count in the items of
    a complex storage's parts (a view of its real or imag part)."""
    return st.value.dtype.dtype.kind == "c" and any(s.kind in ("real", "imag") for s in a._vw)


def _memory(a):
    """The NumPy array of the memory eager array a is: a view hop made as a
    copy (a diagonal, a negative step: a._cp) is NumPy's view of the memory
    it reads (_storage.numpy_of_copy)."""
    if a._cp is None:
        return a._t.numpy()
    v = _storage.numpy_of_copy(a)
    if v is None:
        raise _C.UnsupportedError("hop.numpy: shares_memory of a view hop made as a copy by a "
                                  "step without a NumPy form is not supported")
    return v


@F.implements(_np.may_share_memory)
def may_share_memory(a, b, max_work=None, *, _kind=None):
    return _share(a, b, False)


@F.implements(_np.shares_memory)
def shares_memory(a, b, max_work=None, *, _kind=None):
    return _share(a, b, True)


# ------------------------------------------------------------------- text

def _text(np_fn, a, args, kwargs):
    """NumPy's text function np_fn of a: NumPy's exact text of a concrete
    array (NumPy's print options apply); a traced array's text is known only
    when the plan runs, so, as str() of one, it is a conversion for the
    user's code in a compile trace (hop.compile runs that part in Python)
    and the value's description for hop and hop.trace (_breaks.text)."""
    t = a._t if isinstance(a, ndarray) else a if isinstance(a, _C.Tensor) else None
    if t is not None:
        if _C._is_proxy(t):
            # the asker: the first frame outside hop and NumPy (a call through
            # np.array2string's dispatch passes both)
            f = sys._getframe(2)
            while f.f_back is not None and _breaks.internal(f):
                f = f.f_back
            return _breaks.text("a traced array", f"hop.numpy.ndarray(traced {t!r})", f)
        a = t.numpy()[()] if getattr(a, "_scalar", False) else t.numpy()
    return np_fn(a, *args, **kwargs)


@F.implements(_np.array2string)
def array2string(a, *args, _kind=None, **kwargs):
    return _text(_np.array2string, a, args, kwargs)


@F.implements(_np.array_repr)
def array_repr(arr, *args, _kind=None, **kwargs):
    return _text(_np.array_repr, arr, args, kwargs)


@F.implements(_np.array_str)
def array_str(a, *args, _kind=None, **kwargs):
    return _text(_np.array_str, a, args, kwargs)

# (last: the methods are all set above)

for _name in ("partition", "argpartition"):
    setattr(ndarray, _name, _array_only(_name))
# a.dot(b): a C method that tries the eager fast path (_eager_shape.dot)
# first; a NumPy scalar has none (its AttributeError, as _array_only's)
ndarray.dot = _C._np_eager_method("dot", None, ndarray.dot)


# --------------------------------------- NumPy's argument checks first
# (the methods and functions of _funcs with the errors and the 0-d cases
# NumPy's C code has before its work)

def _transpose_method(self, *axes, _fn=F.transpose):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return _fn(self, axes or None, _kind=type(self))


def _squeeze_checked(a, axis=None, _kind=None, _fn=F.squeeze):
    """squeeze of a 0-d array: NumPy takes axis 0 or -1 as an int (its
    reductions' rule), an axis tuple by the bounds of 0 dims."""
    if isinstance(a, ndarray) and a.ndim == 0 and axis is not None:
        for x in axis if isinstance(axis, (tuple, list)) else (axis,):
            x = operator.index(x)
            if isinstance(axis, (tuple, list)) or x not in (0, -1):
                raise _np.AxisError(x, 0)
        axis = None
    return _fn(a, axis, _kind=_kind)


def _sort_checked(self, axis=-1, kind=None, order=None, _fn=ndarray.sort):
    if axis is None:  # (np.sort flattens for None; the method takes an int)
        raise TypeError("'NoneType' object cannot be interpreted as an integer")
    return _fn(self, axis, kind, order)


F.FUNCS[_np.squeeze] = _squeeze_checked
# a.transpose(...): the eager fast path first (a C descriptor: one view
# header; axes that are no permutation are F.transpose's errors, NumPy's)
ndarray.transpose = _C._np_eager_method("transpose", None, F.scalar_method(_transpose_method))
ndarray.swapaxes = F.swapaxes  # (its axes checked as NumPy's C code: F._swap_axis)
ndarray.squeeze = F.scalar_method(_squeeze_checked)
ndarray.sort = _sort_checked


def _take_checked(a, indices, axis=None, out=None, mode="raise", *, _kind=None, _fn=F.take):
    """np.take / a.take: NumPy's IndexErrors for concrete indices out of
    bounds (an empty axis: its own text), and an empty list of indices
    (float64 to NumPy's conversion, which takes it as intp)."""
    if isinstance(indices, (list, tuple)) and len(indices) == 0:
        indices = _np.zeros(0, _np.intp)
    t = _core.tensor_of(a)
    if mode == "raise" and t is not None and not _C._is_proxy(t) and not _core.tracing():
        it = _core.tensor_of(indices)
        vals = _np.asarray(indices) if it is None else None if _C._is_proxy(it) else it.numpy()
        if vals is not None and vals.dtype.kind in "iu":
            ax = 0 if axis is None else F._axis(axis, t.ndim)
            n = t.numel() if axis is None or t.ndim == 0 else t.shape[ax]
            if vals.size and n == 0:
                raise IndexError("cannot do a non-empty take from an empty axes.")
            bad = vals.reshape(-1)[(vals.reshape(-1) < -n) | (vals.reshape(-1) >= n)]
            if bad.size:
                raise IndexError(f"index {int(bad[0])} is out of bounds for axis {ax} with size "
                                 f"{n}")
    return _fn(a, indices, axis, out, mode, _kind=_kind)


def _take_method(self, indices, axis=None, out=None, mode="raise"):
    return _take_checked(self, indices, axis, out, mode, _kind=type(self))


F.FUNCS[_np.take] = _take_checked
ndarray.take = F.scalar_method(_take_method)


def _k_order(a, order):
    """(a, order) for ravel and flatten: order 'K' as a transpose of a into
    its memory order (outermost axis first), then 'C'.  The order is
    NumPy's iterator's (how="iter"), which copies them: a broadcast axis
    (stride 0) is ambiguous to it and keeps its place in C order, where
    NewLikeArray's sort ("like") would put it innermost."""
    if not (isinstance(order, str) and order.upper() == "K" and isinstance(a, ndarray)):
        return a, order
    if a.ndim < 2:
        return a, "C"
    from ._ufuncs import memory_order
    perm = memory_order(type(a), (a,), a.ndim, "K", "K", "iter")
    return (a if perm is None else F.transpose(a, perm, _kind=type(a))), "C"


def _ravel_method(self, order="C"):
    return F.ravel(self, order, _kind=type(self))


def _flatten_checked(self, order="C", _fn=ndarray.flatten):
    a, order = _k_order(self, order)
    return _fn(a, order)


# (a C method that tries the reshape fast path's view of a C-ordered array
# first: np_eager_shape.c, role "ravel")
ndarray.ravel = _C._np_eager_method("ravel", None, F.scalar_method(_ravel_method))
# (a.flatten(): a C method that tries the copy fast path's C-order copy, of one
# dimension, first: np_eager.c, role "copy", name "flatten")
ndarray.flatten = _C._np_eager_method("copy", "flatten", _flatten_checked)
