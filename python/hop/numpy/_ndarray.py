"""hop.numpy.ndarray: a NumPy array over a hop tensor.

The tensor may be concrete (eager hop.numpy) or traced (inside hop.trace and
hop.compile), and the array behaves as NumPy's does either way: operators,
methods and attributes follow NumPy 1.24 (dtypes included), and NumPy's
functions dispatch to hop.numpy through __array_ufunc__/__array_function__.

Inside a compiled function an np.ndarray argument is an instance of the
subclass NumpyArg: the same NumPy semantics, and what the function returns
as one is an np.ndarray again (a NumPy scalar where NumPy gives one).

In-place updates (`x += 1`, `x[mask] = 0`, ufuncs with out=) write the
memory of a concrete array, as NumPy does.  A traced array's updates are
NumPy's too, through its storage (_storage): every array that shares the
memory sees them, and an argument's or captured array's final value is
written back to the caller's memory after each call.
"""

import operator
import sys

import numpy as _np

from .. import _C
from .. import _breaks
from . import _callee, _core, _corder, _storage
from ._callee import _ATTR_READS

__all__ = ["ndarray", "NumpyArg"]


class ndarray:
    """A NumPy array whose data is a hop tensor (concrete or traced).

    _tv is the tensor; under a run (_storage) _st is the storage the array
    is a view of (through the steps _vw; _ver the storage version _tv or
    _cv reflects), _run the run that made it, _dp the tracer depth it was
    made at, _role None (made by the function), "input" (a HOP body's
    operand) or the leaf index of the argument it is; _ro NumPy's read-only
    flag (a broadcast or a diagonal); _cp, for an eager view whose steps
    copy (a[::-1], np.flip: NumPy's view, hop's copy) and for a view of
    one, [the array it is a view of, the step from it, _storage.WRITES when
    it last read that array, the step's positions]: its writes go through
    to that array (_storage.eager_write), its reads read it again after a
    write (_storage.fresh)."""

    __slots__ = ("_tv", "_scalar", "_st", "_vw", "_ver", "_cv", "_run", "_dp", "_role", "_ro", "_cp",
                 "_ob", "__weakref__")
    __array_priority__ = 200
    _pytree_repr_as_leaf = True  # in a structure's text it is the tensor it holds

    def __init__(self, t, scalar=False, owned=True):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"hop.numpy.ndarray wraps a hop.Tensor, got {type(t).__name__}; "
                            f"use hop.numpy.asarray")
        self._tv = t
        self._scalar = bool(scalar) and t.ndim == 0
        self._st = None
        self._vw = ()
        self._ver = 0
        self._cv = None
        self._ro = False
        self._cp = None
        self._ob = None
        run = _storage.current()
        self._run = run
        if run is None:
            self._dp = 0
            self._role = None
        else:
            self._dp = _C._trace_depth()
            self._role = None if owned and not _storage.making_operands() else "input"
            if run.arg_tensors:
                leaf = run.arg_tensors.get(id(t))
                if leaf is not None:
                    self._role = leaf
                    run.args[leaf] = self

    # the slots (but _tv) of an array __init__ makes outside a run, which the
    # eager fast path (python/_C/np_eager.c) gives its results without a call
    # of __init__
    _EAGER_SLOTS = (("_scalar", False), ("_st", None), ("_vw", ()), ("_ver", 0), ("_cv", None),
                    ("_ro", False), ("_cp", None), ("_run", None), ("_dp", 0), ("_role", None),
                    ("_ob", None))

    @property
    def _t(self):
        """The array's value now: its tensor, or its storage's value seen
        through its view steps (recomputed after a write)."""
        st = self._st
        if st is None:
            cp = self._cp
            if cp is None:
                return self._tv
            run = _storage.active_run()
            if run is not None:
                # (an eager view hop made as a copy, captured by a trace's
                # run: a view of the array it views, _copy_view_storage)
                st = _storage.storage_of(self, run)
            elif cp[2] == _storage.WRITES:
                return self._tv
            else:
                return _storage.fresh(self)  # (after a write)
        if st.foreign:
            if st.run is not _storage.current():
                return self._tv if self._cp is None else _storage.fresh(self)
            if self._ver != st.version or self._cv is None:
                self._cv = st.view(self._vw)
                self._ver = st.version
            return self._cv
        if self._ver != st.version:
            self._tv = st.view(self._vw)
            self._ver = st.version
        return self._tv

    def __hop_tensor__(self):
        return self._t

    def _user_class(self):
        """NumPy's class of this array: np.ndarray, or the NumPy scalar type
        of a 0-d result NumPy gives as a scalar."""
        return self.dtype.type if self._scalar else _np.ndarray

    # __class__ is NumPy's class to the user's code while hop traces it or
    # records its path, so that isinstance(x, np.ndarray) and isinstance(s,
    # float) answer as eagerly; the real class to hop and NumPy, and outside
    # a trace (a C descriptor: every failing isinstance asks for it), but
    # for a scalar, NumPy's scalar type to the user's code there too
    # (isinstance(s, collections.abc.Hashable), see __hash__).
    __class__ = _C._UserClass(_user_class)

    # ------------------------------------------------------------ attributes

    @property
    def shape(self):
        return tuple(self._t.shape)

    @property
    def ndim(self):
        return self._t.ndim

    @property
    def size(self):
        n = 1
        for d in self._t.shape:
            n = n * d
        return n

    @property
    def dtype(self):
        try:
            f = sys._getframe(1)
        except ValueError:  # (read from C with no Python frame above)
            f = None
        if f is not None and f.f_code.co_code[f.f_lasti] not in _ATTR_READS and \
                not self._scalar and _callee.calls_np_dtype(f):
            # np.dtype(a) (np.finfo(a), np.iinfo(a) call it): NumPy's own
            # ndarray is refused there before its dtype is read (_callee);
            # a NumPy scalar's dtype is read
            raise TypeError("Cannot construct a dtype from an array")
        return _core.np_dtype(self._t)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    @property
    def T(self):
        if self._scalar:
            return self  # a NumPy scalar's .T is the scalar itself
        from ._funcs import transpose
        return transpose(self, _kind=type(self))

    def __len__(self):
        if self.ndim == 0:  # (NumPy's texts: a scalar's as Python's for its type)
            raise TypeError(f"object of type 'numpy.{self.dtype.type.__name__}' has no len()"
                            if self._scalar else "len() of unsized object")
        return len(self._t)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError(f"'numpy.{self.dtype.type.__name__}' object is not iterable"
                            if self._scalar else "iteration over a 0-d array")
        return (self[i] for i in range(len(self)))

    # ----------------------------------------------------------- conversions

    def __array__(self, dtype=None):
        a = _storage.numpy_of_copy(self) if self._cp is not None and self._st is None else None
        if a is None:
            self._read_now("np.asarray()")
            a = self._t.numpy()
        if self._scalar:
            a = a.copy()  # (a NumPy scalar's array is new memory: np.asarray(s)[...] = 9)
        elif self._ro and a.flags.writeable:
            a = a.view()  # (NumPy's read-only array: a real array's imag, a broadcast)
            a.flags.writeable = False
        elif self._st is None and a.flags.writeable:
            # NumPy's code may write the memory through a (np.nditer's
            # readwrite operand): a view hop made as a copy reads again
            _storage.numpy_may_write()
        if dtype is not None and _np.dtype(dtype) != a.dtype:
            a = a.astype(dtype)  # (of its own dtype NumPy's __array__ is the array itself)
        return a

    def __bool__(self):
        if self.size == 0:
            _empty_truth(self)
            return False
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self._t.reshape(()) if self.ndim else self._t)

    def _fixed(self):
        """Whether the value is the same on every call, so that Python may
        read it now: eagerly always; while tracing, an array the function
        made from constants (np.arange(3)) and has not written."""
        t = self._t
        if _C._is_proxy(t):
            return False
        if not _core.tracing():
            return True
        run = _storage.current()
        return run is not None and self._run is run and self._made_of_constants()

    def _made_of_constants(self):
        """Whether this concrete array, made while a run traces, is one the
        function made from constants (np.arange(3)) or a view of one: not an
        argument's, a HOP body operand's, nor a view of a captured array
        (`G[...]`, `G.T` of a vector G: a view step that is no op leaves the
        capture's concrete tensor, whose contents change between calls)."""
        st = self._st
        return self._role is None and (st is None or (not st.foreign and st.root is None))

    def __int__(self):
        self._real_for("int() argument must be a string, a bytes-like object or a real number")
        if self._fixed():
            return int(self._scalar_value("int"))
        return int(self._scalar_tensor("int"))

    def __float__(self):
        self._real_for("float() argument must be a string or a real number")
        if self._fixed():
            return float(self._scalar_value("float"))
        return float(self._scalar_tensor("float"))

    def _real_for(self, message):
        # An array's int()/float() converts its Python item, which a complex
        # one refuses; a NumPy complex scalar drops the imaginary part.
        if self.dtype.kind == "c" and not self._scalar and self.size == 1:
            raise TypeError(f"{message}, not 'complex'")

    def __index__(self):
        # NumPy's integer scalars (np.True_ too) and 0-d integer arrays only
        if self.dtype.kind not in ("biu" if self._scalar else "iu") or self.ndim:
            if self._scalar:  # (a NumPy float or complex scalar: its type's own error)
                raise TypeError(f"'numpy.{self.dtype.type.__name__}' object cannot be "
                                f"interpreted as an integer")
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        if self._fixed():
            return int(self._scalar_value("index"))
        return int(self._scalar_tensor("index"))

    def _scalar_value(self, what):
        if self.size != 1:
            raise TypeError(_size_1_text(what))
        return self._t.numpy().reshape(())[()]

    def _scalar_tensor(self, what):
        if self.size != 1:
            raise TypeError(_size_1_text(what))
        t = self._t.reshape(()) if self.ndim else self._t
        if what in ("int", "float", "complex", "round", "hash") and _C._is_proxy(t):
            # hop.compile runs such a function eagerly (_breaks)
            _breaks.conversion(
                _C.TraceError,
                f"{what}() of a traced array value needs its data while tracing; hop.compile "
                f"specialises Python branches on comparisons (`if x.sum() > 1:`), not on a "
                f"number's value: keep it an array (compare it, or use it in arithmetic), or "
                f"use hop.cond")
        return t

    def item(self, *args):
        """The element as a Python scalar; while tracing, an integer element
        is an unbacked SymInt read at run time (as hop.Tensor.item), and a
        float or bool one ends hop.compile's compiled part (_breaks): a
        SymInt is an int, and eagerly a bool array's item() is a bool."""
        key = item_key(self, args)
        if key:
            return self[key].item()
        if self.size != 1:  # (int() and float() raise TypeError; item() NumPy's ValueError)
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        t = self._scalar_tensor("item")
        if _C._is_proxy(t) or _core.tracing():
            if self.dtype.kind not in "iu":
                _breaks.conversion(_C.TraceError, f"item() of a traced {self.dtype} value: a "
                                                  f"Python float is known only when the plan "
                                                  f"runs")
            return t.item()
        return t.numpy()[()].item()

    def tolist(self):
        self._read_now("tolist()")
        return self._t.numpy().tolist()

    def _changing(self):
        """Whether the value may differ from call to call while traced: a
        traced tensor, or while hop.compile traces an array it did not make
        from constants (an ndarray global of the function, read in place)."""
        return _C._is_proxy(self._t) or (_core.tracing() and not self._fixed())

    def _read_now(self, what):
        """A concrete array whose value the plan reads on each call (an
        ndarray global) read by Python while traced: the end of
        hop.compile's compiled part, never its value of this call baked in."""
        if not _C._is_proxy(self._t) and self._changing():
            _breaks.conversion(_C.TraceError, f"{what} of an array of the function's "
                                              f"environment reads its values while tracing")

    def _traced_text(self, frame):
        """The text of a traced array for hop's messages (and hop.trace); a
        break for the user's code in a compile trace (_breaks)."""
        return _breaks.text("a traced array", f"hop.numpy.ndarray(traced {self._t!r})", frame)

    def __repr__(self):
        if self._changing():
            return self._traced_text(sys._getframe(1))
        return repr(self._t.numpy()[()] if self._scalar else self._t.numpy())

    def __str__(self):
        if self._changing():
            return self._traced_text(sys._getframe(1))
        return str(self._t.numpy()[()] if self._scalar else self._t.numpy())

    def __format__(self, spec):
        if self._changing():
            return self._traced_text(sys._getframe(1))
        if not spec and not self._scalar:
            return str(self)
        # a NumPy scalar's own: f"{np.float32(0.1)}" is float()'s text,
        # 0.10000000149011612, not str()'s 0.1
        return format(self._t.numpy()[()], spec)

    # NumPy's ndarray's: no hash, so that collections.abc.Hashable, which
    # reads the class dicts, is False of an array; hash() itself is
    # python/_C/np_eager.c's np_hash (_np_hash_init below): NumPy's TypeError
    # for an array, _scalar_hash for a scalar, which is a Hashable through
    # its __class__ (NumPy's scalar type to the user's code)
    __hash__ = None

    def _scalar_hash(self):
        # NumPy scalars hash as their value (s in {6.0})
        return hash(self._scalar_tensor("hash").numpy()[()])

    def __reduce__(self):
        return (asarray_of, (self._t.numpy(),))

    # ------------------------------------------------------------- protocols

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if len(inputs) == 2 and inputs[1] is self and self._scalar and method == "__call__" and \
                not kwargs and _reported_scalar_math(self, inputs[0]) and \
                isinstance(inputs[0], _np.generic) and (py := _operator_of_caller(ufunc)):
            # `np.uint8(255) + s`: NumPy's scalar operator, not np.add (below)
            return _numpy_scalar_math(py, inputs)
        if ufunc is _np.power and method == "__call__" and not kwargs and len(inputs) == 2 and \
                inputs[1] is self and type(inputs[0]) is _np.ndarray and \
                inputs[0].dtype.kind in "biufc" and _operator_of_caller(ufunc):
            # `x ** a` of a NumPy array x: NumPy's ndarray.__pow__ reads the
            # value of the NumPy array a stands for when it is 0-d
            # (fast_scalar_power: x ** 2 is square, bool x ** 2.0 int8), and
            # calls np.power only because a is not NumPy's
            return _pow(wrap(type(self), _core.from_numpy(inputs[0])), self)
        if ufunc is _np.power and method == "__call__" and not kwargs and len(inputs) == 2 and \
                inputs[1] is self and isinstance(inputs[0], _np.generic) and \
                (ct := _scalar_power_dtype(self, inputs[0])) is not None and \
                _operator_of_caller(ufunc):
            # `np.float64(2) ** s`: NumPy's scalar math (libm's pow), which
            # handed s to the ufunc only because s is not its
            return _scalar_power(ct, inputs, type(self))
        from ._ufuncs import array_ufunc
        r = array_ufunc(ufunc, method, inputs, kwargs)
        if len(inputs) == 2 and inputs[1] is self and self._scalar and method == "__call__" and \
                not kwargs and ufunc.__name__ in SCALAR_CHECKED and \
                isinstance(inputs[0], _np.generic) and _operator_of_caller(ufunc):
            # `np.int64(4) * s` traced: NumPy's scalar math, which checks
            # for overflow, handed s to the ufunc only because s is not its
            return _scalar_math_checked(ufunc.__name__, inputs, r)
        return r

    def __array_function__(self, func, types, args, kwargs):
        from ._funcs import array_function
        return array_function(func, types, args, kwargs)

    # --------------------------------------------------------- in place

    def _write(self, key, value, what):
        """self[key] = value (key None: all of it) for a tensor value in
        self's dtype: into the memory of a concrete array, as NumPy writes;
        into the storage of a traced one (see _storage)."""
        run = _storage.current()
        if run is None and not _C._is_proxy(self._tv):
            if self._ro:
                raise _storage.read_only_error(what)
            from ._indexing import numpy_key
            dst = self._tv.numpy()
            src = value.numpy() if isinstance(value, _C.Tensor) else value

            def store():
                if key is None:
                    dst[...] = src
                else:
                    dst[numpy_key(key)] = src
            _storage.eager_write(self, store)
            return
        if run is None:
            raise _C.TraceError(f"hop.numpy: {what}: the array is a value of a trace that has "
                                f"ended")
        _storage.write(self, run, key, value, what)

    def _assign(self, value, what):
        """Replaces the whole value of self by tensor value (broadcast to
        self's shape, in self's dtype)."""
        if self._scalar:
            # a NumPy scalar is immutable: its in-place methods (fill,
            # nan_to_num(copy=False)) work on a temporary 0-d array, the
            # value having been checked and converted on the way
            return
        self._write(None, value, what)

    def __setitem__(self, key, value):
        if self._scalar:  # a NumPy scalar is immutable
            raise TypeError(f"'numpy.{self.dtype.type.__name__}' object does not support item "
                            f"assignment")
        from ._indexing import setitem
        setitem(self, key, value)

    def __delitem__(self, key):
        if self._scalar:
            raise TypeError(f"'numpy.{self.dtype.type.__name__}' object does not support item "
                            f"deletion")
        raise ValueError("cannot delete array elements")

    def __getattr__(self, name):
        # (only for a name the class lacks) a NumPy scalar's own methods
        # and attributes (float64's is_integer, hex, as_integer_ratio; the
        # integers' numerator, bit_count; byteswap, getfield) on its value
        # (a private name first: _scalar itself is looked up here before
        # __init__ sets it)
        scalar = not name.startswith("_") and self._scalar
        if not scalar or not hasattr(self.dtype.type, name):
            # (a scalar named as NumPy's: also the message of a method only
            # arrays have, _attrs._array_only, whose AttributeError ends here)
            what = f"numpy.{self.dtype.type.__name__}" if scalar else "numpy.ndarray"
            raise AttributeError(f"'{what}' object has no attribute '{name}'")
        return getattr(self._numpy_scalar(name), name)

    def _numpy_scalar(self, what):
        """The NumPy scalar self is (a scalar's value); while tracing, the
        end of hop.compile's compiled part (NumPy's code reads it)."""
        if not self._fixed():
            _breaks.conversion(_C.TraceError, f"{what} of a traced NumPy scalar needs its value "
                                              f"while tracing")
        return self._t.numpy()[()]

    def _math(self, name):
        """math.trunc, floor, ceil of a NumPy scalar whose type has them
        (float64, a float).  Of any other array or scalar what math does
        when the type has none: floor and ceil of float(self) (a size-1
        array's, an int64's), math.trunc's TypeError."""
        if not self._scalar or not hasattr(self.dtype.type, name):
            if name != "__trunc__":
                return getattr(float(self), name)()
            tname = f"numpy.{self.dtype.type.__name__}" if self._scalar else "numpy.ndarray"
            raise TypeError(f"type {tname} doesn't define {name} method")
        return getattr(self._numpy_scalar(name), name)()

    def __trunc__(self):
        return self._math("__trunc__")

    def __floor__(self):
        return self._math("__floor__")

    def __ceil__(self):
        return self._math("__ceil__")

    def _temporary(self):
        """The new 0-d array a NumPy scalar's in-place method (put, resize,
        .flat) works on, so that the scalar, a value, stays as it was."""
        return type(self)(self._t.clone())

    def __getitem__(self, key):
        # (_indexing imports this module, and is imported at the first
        # index; an import statement here was ~1 us of every a[i])
        return (_getitem or _load_getitem())(self, key)

    # ---------------------------------------------------------------- copies

    def copy(self, order="C"):
        from ._ufuncs import in_memory_order
        return in_memory_order(type(self), (self,), tuple(self._t.shape),
                               lambda view, _: view(self._t).clone(), order, default="C")

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        npd = _np.dtype(dtype)
        if npd.newbyteorder("=") not in _core._HOP and not _core.tracing():
            # a dtype hop has no arrays of (str, bytes, object, datetime64,
            # longdouble): NumPy's astype of the values, a NumPy array (a
            # NumPy scalar of a hop scalar), NumPy's sizes (str: U32 of
            # float64) and errors.  While tracing, hop_dtype's break (NumPy
            # runs the statement on every call), hop.trace's DTypeError.
            v = _np.asarray(self)
            return (v[()] if self._scalar else v).astype(dtype, order=order, casting=casting,
                                                         subok=subok, copy=copy)
        _core.hop_dtype(npd, "astype", makes=True)
        _core.kept_dtype(npd, "astype")  # (metadata)
        if not _np.can_cast(self.dtype, npd, casting=casting):
            if self.ndim:
                raise TypeError(f"Cannot cast array data from {self.dtype!r} to {npd!r} "
                                f"according to the rule {casting!r}")
            # a 0-d array or scalar: NumPy 1.24 casts by value (2.5 to
            # complex64 is 'safe', 300 to uint8 is not)
            if not _np.can_cast(self._numpy_scalar("astype's casting check"), npd,
                                casting=casting):
                raise TypeError(f"Cannot cast scalar from {self.dtype!r} to {npd!r} according "
                                f"to the rule {casting!r}")
        if self.dtype.kind == "c" and npd.kind in "iuf":
            _core.numpy_warns(f"astype of {self.dtype} to {npd}", "Casting complex values to "
                              "real discards the imaginary part", _np.ComplexWarning,
                              replay=True)
        if npd == self.dtype and not copy and not self._scalar:
            return self  # (a scalar's astype is a new scalar, as its other methods)
        if _core.fp_errors_reported() and not _core.tracing() and not _C._is_proxy(self._t):
            # numpy.errstate(invalid='raise'): NumPy's cast raises its
            # FloatingPointError (NaN to int, 1e300 to float16), hop's does not
            v = self._t.numpy()
            (v[()] if self._scalar else v).astype(npd)
        from ._ufuncs import in_memory_order, _from_numpy, _fp_checked

        def compute(view, _):
            v = view(self._t)
            t = _core.cast(v, npd)
            return t.clone() if t is v else t  # a conversion is a new tensor

        checked = _fp_checked((self,))  # (as an eager ufunc's)
        if checked:
            _C._fp_clear()
        r = in_memory_order(type(self), (self,), tuple(self._t.shape), compute, order)
        if checked and (_C._np_fp_warned() or self.dtype.kind == "f" and npd.kind in "iu" and
                        not _np.all(_np.abs(self._t.numpy()) < 2.0 ** 31)):
            # NaN to int, 1e300 to float32: NumPy 1.24's cast warns ("invalid
            # value encountered in cast"); its cast again, warning as it does.
            # A float beyond int32's range to an integer (3e9 to int8, 1e300
            # to int64) warns in NumPy's loops too, where hop's conversion,
            # which never overflows, raises no flag
            v = self._t.numpy()
            return _from_numpy((v[()] if self._scalar else v).astype(npd, order=order),
                               type(self))
        return r


def item_key(a, args):
    """The index of the element a.item(*args) and a.itemset(*args, v) name
    as NumPy reads args: one int a flat index (checked against a.size),
    else one int per dim (a tuple of them as one argument too); () for
    none (a.size must be 1)."""
    if len(args) == 1 and isinstance(args[0], tuple):
        args = args[0]
    if not args:
        return ()
    for k in args:
        if isinstance(k, (bool, _np.bool_)):
            raise TypeError("an integer is required")
    ks = tuple(operator.index(k) for k in args)
    if len(ks) == 1 and a.ndim != 1:
        n = a.size
        if not -n <= ks[0] < n:
            raise IndexError(f"index {ks[0]} is out of bounds for size {n}")
        return tuple(int(i) for i in _np.unravel_index(ks[0] % n, a.shape)) if a.ndim else ()
    if len(ks) != a.ndim:
        raise ValueError("incorrect number of indices for array")
    for axis, (k, n) in enumerate(zip(ks, a.shape)):
        if type(n) is int and not -n <= k < n:
            raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
    return ks


def _size_1_text(what):
    """NumPy 1.24's TypeError of int(), float() (and index) of an array of
    more than one element; complex()'s keeps the older wording."""
    size = "length" if what == "complex" else "size"
    return f"only {size}-1 arrays can be converted to Python scalars"


def asarray_of(a):
    """Unpickling: a concrete hop.numpy array of the data."""
    return ndarray(_C.tensor(a), owned=True)


class NumpyArg(ndarray):
    """An np.ndarray argument of a compiled or traced function, and what
    NumPy code makes of it: hop.numpy semantics inside, converted back to an
    np.ndarray (or a NumPy scalar) when the function returns it."""

    __slots__ = ()


_C._np_hash_init(ndarray, NumpyArg)


_getitem = None  # _indexing.getitem, once ndarray.__getitem__ has imported it


def _load_getitem():
    global _getitem
    from ._indexing import getitem
    _getitem = getitem
    return getitem


def _wrap_like(like, t, scalar=False):
    return type(like)(t, scalar=scalar)


def wrap(kind, t, scalar=False):
    """A result of kind `kind` (ndarray, NumpyArg or _C.Tensor) over t."""
    if kind is _C.Tensor:
        return t
    return kind(t, scalar=scalar)


def view(kind, a, step, scalar=False, t=None):
    """The view of array-like a that step (a _storage.Step: view ops, or a
    take for a reversed order) makes, as NumPy's view shares a's memory: a
    tensor view over a concrete array's memory, and under a run a view of
    a's storage, so writes through either reach the other."""
    if not isinstance(a, ndarray):
        from ._funcs import _t
        return wrap(kind, step.apply(_t(a)), scalar)
    if a._scalar and not scalar and kind is not _C.Tensor:
        # NumPy's view of a scalar is one of a new 0-d array made of it
        # (np.atleast_1d(s), s.reshape(1), s[None]): a write through it
        # does not reach the scalar, a value
        a, t = type(a)(a._t.clone()), None
    if t is None:  # (t: the view, when the caller has made it already)
        t = step.apply(a._t)
    if kind is _C.Tensor:
        return t
    r = kind(t, scalar=scalar)
    run = _storage.current()
    if run is not None:
        st = _storage.storage_of(a, run)
        r._st = st
        r._vw = a._vw + (step,)
        r._ver = st.version
        if st.foreign:
            r._cv = t
    r._ro = a._ro or step.readonly
    if run is None:
        viewed_by(r, a)
        # eagerly a step that takes elements makes a copy (hop's tensors
        # have no negative strides) where NumPy's is a view: it remembers
        # the array it views, which its writes then reach (eager_write)
        # (a view of such a copy shares its memory, and writes reach a
        # through it)
        if step.copies is True or a._cp is not None:
            r._cp = [a, step, _storage.WRITES, None]  # (_storage.fresh)
    return r


def viewed_by(r, a):
    """Eagerly, r (a concrete view of a's memory) has NumPy's base: a when
    a owns its memory, else a's base (NumPy collapses a chain of views);
    None (owns its data) is the default of every new array."""
    r._ob = a if a._ob is None else a._ob


def result_kind(values, default=ndarray):
    """The type NumPy code gets back from an op on values: hop.Tensor when one
    is among them (a Tensor wins, as it does over an np.ndarray), else
    hop.numpy.ndarray when one is, else NumpyArg when one is, else
    default."""
    kind = None
    for v in values:
        if isinstance(v, _C.Tensor):
            return _C.Tensor
        if isinstance(v, (list, tuple)):
            k = result_kind(v, None)
            if k is _C.Tensor:
                return k
            if k is ndarray or (k is NumpyArg and kind is None):
                kind = k
        elif type(v) is ndarray:
            kind = ndarray
        elif type(v) is NumpyArg and kind is None:
            kind = NumpyArg
    return kind if kind is not None else default


# Operators: NumPy's ufuncs on (self, other), as ndarray's operators are;
# NotImplemented for operands NumPy would not take, so Python tries the other
# side (a hop.Tensor's operators give hop's own semantics).
def _binop(name, reflected=False, py=None):
    """The operator of ufunc `name` (reflected: `other OP self`): the eager
    fast path in C (_eager; no Python frame between the operator and it),
    else op below."""
    def op(self, other):
        from ._ufuncs import call_ufunc, takes
        if name in ("equal", "not_equal"):
            r = _equal_of_other(self, other, name == "not_equal")
            if r is not NotImplemented:
                return r
        if self._scalar and not reflected and isinstance(other, _C.Tensor) and \
                getattr(_np, name, None) is not None:
            # `s + t` of the NumPy scalar s stands for: NumPy's scalar operator
            # calls the ufunc, which the tensor's __array_ufunc__ answers with
            # NumPy's dtypes (np.float64(1.5) + an int32 tensor is float64;
            # `t + s` is the tensor's own operator, s a weak float)
            from ._ufuncs import tensor_array_ufunc
            return tensor_array_ufunc(other, getattr(_np, name), "__call__", self, other)
        if _defers_to(self, other) or not takes(other):
            return NotImplemented
        if self._scalar and _reported_scalar_math(self, other):
            return _numpy_scalar_math(py, (other, self) if reflected else (self, other))
        if name == "multiply" and self._scalar and isinstance(other, (list, tuple)):
            return _repeat_sequence(self, other)
        if reflected and type(other) is complex and name in _PY_COMPLEX and self._scalar and \
                self.dtype == _np.dtype(_np.float64):
            # np.float64 is a Python float: `3j + s` is Python's complex
            # operation on float(s) (a Python complex), where `s + 3j` is
            # NumPy's (a complex128)
            return _PY_COMPLEX[name](other, float(self))
        if type(other) is complex and name in ("equal", "not_equal") and self._scalar and \
                self.dtype == _np.dtype(_np.float64) and _core.is_traced(self._t):
            _equal_of_python_complex(name)
        args = (other, self) if reflected else (self, other)
        if name in _corder.SCALAR_ORDER:
            ct = _scalar_math_complex(self, other)
            if ct is not None:
                return _scalar_order(name, ct, args, result_kind(args))
        if name == "power":
            ct = _scalar_power_dtype(self, other)
            if ct is not None:
                return _scalar_power(ct, args, result_kind(args))
        try:
            r = call_ufunc(name, args, {}, result_kind(args))
        except ValueError:  # (hop's ShapeError too)
            if name in ("equal", "not_equal") and _failed_comparison(name, self, other):
                return NotImplemented
            raise
        return _scalar_math_checked(name, args, r) if self._scalar else r
    op.__name__ = name
    return _C._np_eager_op(name, 2, reflected, op)


def _scalar_math_checked(name, args, r):
    """r, NumPy scalar math `name` of args, with its traced integer
    overflow checked at run time (_fpcheck.scalar_overflow)."""
    if name not in SCALAR_CHECKED or not _C._is_proxy(r._t):
        return r
    from ._fpcheck import scalar_overflow
    return scalar_overflow(name, args, r)


# The operators whose NumPy scalar math checks an integer result for
# overflow (NumPy 1.24's scalarmath.c.src: `+ - *`, `//` and divmod's
# quotient, unary `-` and abs()); `%`, `**` and the shifts wrap silently, as
# every ufunc on arrays does, and np.add(s, t) is the ufunc: no check.
SCALAR_CHECKED = frozenset(("add", "subtract", "multiply", "floor_divide", "negative",
                            "absolute"))


def _equal_of_other(self, other, negated):
    """NumPy 1.24's `a == other` (negated: !=) where it is no ufunc of
    numbers: an object no ufunc takes (None, object(), a dict) compares
    elementwise as an object array, each element unequal (an array of
    False, an np.bool_ for a 0-d array or scalar; a NumPy scalar leaves
    None to Python); a str fails that comparison (a Python bool, with a
    FutureWarning but for a 0-d array or scalar).  Else NotImplemented: the
    ufunc's (operands whose shapes do not broadcast: _failed_comparison)."""
    from ._ufuncs import takes
    if other is None and self._scalar:
        return NotImplemented  # (a NumPy scalar leaves None to Python: a bool)
    if other is None or type(other).__eq__ in (object.__eq__, dict.__eq__, set.__eq__,
                                               frozenset.__eq__):
        if takes(other) or isinstance(other, _C.Tensor):
            return NotImplemented
        from ._ufuncs import none_comparison
        return none_comparison("not_equal" if negated else "equal", self, type(self))
    if isinstance(other, (str, bytes)):
        if self.ndim == 0:
            return negated
        _core.numpy_warns("an array compared with a string", "elementwise comparison failed; "
                          "returning scalar instead, but in the future will perform "
                          "elementwise comparison", FutureWarning, replay=True)
        return negated
    return NotImplemented


def _empty_truth(a):
    """NumPy 1.24's bool() of an empty array: its DeprecationWarning (then
    False; _core.numpy_warns: traced, a graph break)."""
    _core.numpy_warns("bool() of an empty array",
                      "The truth value of an empty array is ambiguous. Returning False, but in "
                      "future this will result in an error. Use `array.size > 0` to check that "
                      "an array is not empty.", DeprecationWarning, _C._is_proxy(a._t))


def _failed_comparison(name, self, other):
    """NumPy 1.24's `a == b` and `a != b` of operands that do not broadcast
    (where np.equal raises): its DeprecationWarning, then NotImplemented, so
    that Python asks the other operand and compares by identity at last (a
    Python bool; one warning per array taking part).  True where this is
    the case, the warning given (_core.numpy_warns: traced, a graph break)."""
    o = _core.operand(other, f"numpy.{name}")
    shapes = [tuple(self.shape), tuple(o.t.shape) if o.t is not None else ()]
    if not all(type(d) is int for s in shapes for d in s):
        return False
    try:
        _np.broadcast_shapes(*shapes)
        return False
    except ValueError:
        pass
    _core.numpy_warns(f"{'==' if name == 'equal' else '!='} of arrays whose shapes do not "
                      f"broadcast ({', '.join(map(str, shapes))})",
                      "elementwise comparison failed; this will raise an error in the future.",
                      DeprecationWarning, _core.is_traced(self._t))
    return True


def _equal_of_python_complex(name):
    """`3j == s` is Python's complex == on float(s) (a bool: np.float64 is a
    Python float), `s == 3j` NumPy's (an np.bool_), and both reach hop as
    s.__eq__(3j): with s traced, a break of hop.compile's graph (Python
    compares the values, as eagerly), hop.trace's UnsupportedError."""
    _breaks.conversion(_C.UnsupportedError,
                       f"hop.numpy: {name} of a traced float64 scalar and a Python complex: "
                       f"`3j == s` is a Python bool and `s == 3j` an np.bool_, and both reach "
                       f"hop as the same call; compare with a NumPy complex (np.complex128(3j)) "
                       f"instead")


# The operations of a Python complex that take a Python float (so an
# np.float64) on their right, by NumPy's ufunc name.  (Its == and != take one
# too, giving a Python bool; hop.numpy's __eq__ cannot tell `3j == s` from
# `s == 3j`, so with s traced those are a break: _equal_of_python_complex.)
_PY_COMPLEX = {"add": complex.__add__, "subtract": complex.__sub__,
               "multiply": complex.__mul__, "true_divide": complex.__truediv__,
               "power": complex.__pow__}


def _scalar_math_complex(self, other):
    """The complex dtype in which NumPy 1.24 orders `self OP other` by its
    scalar math (no NaN rule: _corder.SCALAR_ORDER), or None where its ufunc
    loop decides.  Scalar math takes two scalars when the other converts
    safely into the handling scalar's type: a Python bool always, a Python
    int, float or complex only into complex128 (for complex64 NumPy must
    promote, which is the ufunc's), a NumPy scalar when either type casts
    safely to the other; a np.bool_ on the left is the ufunc's."""
    if not self._scalar:
        return None
    sdt = self.dtype
    if isinstance(other, bool):
        return sdt if sdt.kind == "c" else None
    if isinstance(other, (int, float, complex)) and not isinstance(other, _np.generic):
        return sdt if sdt == _np.dtype(_np.complex128) else None
    if isinstance(other, _np.generic):
        odt = other.dtype
    elif isinstance(other, ndarray) and other._scalar:
        odt = other.dtype
    else:
        return None
    if "c" not in (sdt.kind, odt.kind) or sdt.kind == "b":
        return None
    if odt.kind == "b":
        return sdt
    if _np.can_cast(odt, sdt):
        return sdt
    return odt if _np.can_cast(sdt, odt) else None


def _scalar_power_dtype(self, other):
    """The float dtype (float32 or float64) in which NumPy 1.24 computes
    `self ** other` (or `other ** self`) of NumPy scalar self by its scalar
    math, whose power is libm's pow or powf (npy_pow, scalarmath.c.src),
    or None where its ufunc (power's SIMD loop) or another dtype's does.
    convert_to_<type> takes a Python bool always, a Python int (one that
    fits a C long) when int64 casts safely to self's dtype, a Python float
    when float64 does; a NumPy scalar when either dtype casts safely to the
    other (the wider answers); a np.bool_ self is the ufunc's."""
    if not self._scalar:
        return None
    sdt = self.dtype
    if sdt.kind == "b":
        return None
    if isinstance(other, _np.generic) or (isinstance(other, ndarray) and other._scalar):
        odt = other.dtype
        ct = sdt if _np.can_cast(odt, sdt) else odt if _np.can_cast(sdt, odt) else None
    elif isinstance(other, bool):
        ct = sdt
    elif isinstance(other, int):
        ct = sdt if _np.can_cast(_np.int64, sdt) and -2**63 <= other < 2**63 else None
    elif isinstance(other, float):
        ct = sdt if _np.can_cast(_np.float64, sdt) else None
    else:
        return None
    return ct if ct is not None and ct in (_np.dtype(_np.float32), _np.dtype(_np.float64)) \
        else None


def _scalar_power(ct, args, kind):
    """NumPy scalar math's `a ** b` in float dtype ct: libm's pow (the
    float_power op), where power's ufunc loop is SVML's (a quarter of
    float64 results differ in the last bit: np.float64(10) ** -1.0 is 0.1,
    np.power's 0.09999999999999999)."""
    from ._ufuncs import compute_tensors
    vals = compute_tensors([_core.operand(a, "numpy.power") for a in args], ct, "power")
    return wrap(kind, _C._op("float_power", *vals), scalar=True)


def _scalar_order(name, ct, args, kind):
    from ._ufuncs import compute_tensors
    vals = compute_tensors([_core.operand(a, f"numpy.{name}") for a in args], ct, name)
    return wrap(kind, _corder.SCALAR_ORDER[name](*vals), scalar=True)


def _defers_to(self, other):
    """Whether self's operator leaves other's (a hop.Tensor) to answer.  An
    np.ndarray does not: `np.arange(3) + t` is NumPy's ufunc, which the
    tensor's __array_ufunc__ answers with NumPy's dtypes (int64 array + f32
    tensor is f64, where the tensor's own `t + a` is f32).  NumpyArg stands for
    an np.ndarray inside compiled code (an argument, or what NumPy's own
    functions make while tracing: `np.arange(x.shape[0])`), so it does the
    same; a NumPy scalar defers, as NumPy's scalars do, and so does a
    hop.numpy.ndarray (its documented contract: a Tensor wins)."""
    return isinstance(other, _C.Tensor) and (type(self) is not NumpyArg or self._scalar)


def _repeat_sequence(scalar, seq):
    """A NumPy scalar times a list or tuple: an integer one repeats the
    sequence (it is an index), a float one is Python's TypeError."""
    if scalar.dtype.kind not in "biu":
        raise TypeError(f"can't multiply sequence by non-int of type "
                        f"'numpy.{scalar.dtype.name}'")
    if not scalar._fixed():
        # (hop.compile: a graph break, Python repeating it by the value)
        _breaks.conversion(_C.TraceError, "hop.numpy: a NumPy integer times a list or tuple "
                           "repeats the sequence by the integer's value, which is known only "
                           "when the program runs; make the count a Python int, or the "
                           "sequence an array")
    return seq * operator_index(scalar)


def operator_index(a):
    import operator
    return operator.index(a)


def _iop(name, binary):
    def op(self, other):
        from ._ufuncs import call_ufunc, takes
        if _defers_to(self, other) or not takes(other):
            return NotImplemented
        if self._scalar:
            # A NumPy scalar is immutable, and has no in-place operators:
            # `s += 1` is `s = s + 1`, NumPy's scalar math (its warnings of
            # an integer overflow too), in the result type of the operation
            # (np.bool_(False) + 1 is an int64), so `a[k] += 1` stores that
            # value back into a bool a.
            return binary(self, other)
        call_ufunc(name, (self, other), {"out": (self,)}, type(self))
        return self
    op.__name__ = name
    return op


def _unop(name, py):
    def op(self):
        from ._ufuncs import call_ufunc
        if name == "positive" and self.dtype == _np.dtype(bool):
            # NumPy 1.24's +a of a bool array: a copy (and a DeprecationWarning;
            # np.positive refuses bool), a NumPy scalar of a 0-d one; +s is s
            if self._scalar:
                return self
            _core.numpy_warns("+ of a bool array", "Applying '+' to a non-numerical array is "
                              "ill-defined. Returning a copy, but in the future this will "
                              "error.", DeprecationWarning, replay=True)
            return self.copy()[()] if self.ndim == 0 else self.copy()
        if self._scalar and _reported_scalar_math(self, None):
            return _numpy_scalar_math(py, (self,))
        if name == "absolute" and self._scalar and self.dtype.kind == "c":
            # NumPy's abs() of a complex scalar: npy_hypot of its parts (its
            # ufunc's SIMD loop rounds otherwise: |3.3 + 0.001j|)
            return call_ufunc("hypot", (self.real, self.imag), {}, type(self))
        r = call_ufunc(name, (self,), {}, type(self))
        return _scalar_math_checked(name, (self,), r) if self._scalar else r
    op.__name__ = name
    # the eager fast path first (_eager), but for +a, whose bool array NumPy
    # copies where np.positive refuses it (above)
    return op if name == "positive" else _C._np_eager_op(name, 1, False, op)


def _reported_scalar_math(self, other):
    """Whether an operator of NumPy scalar self (and other: None, a Python
    number, a NumPy scalar) runs by NumPy's own scalar math: eagerly, when
    numpy.errstate raises, calls or warns (NumPy's default) for some error,
    which NumPy's scalar math reports (an integer overflow too:
    np.int8(100) * 2, "overflow encountered in scalar multiply") and hop's
    kernels do not.  Not in hop.compile's recording run, whose plan (its
    flags, its checks of integer overflow) warns for the call."""
    from ._fpcheck import outer  # (a checked reduction's own steps: its flags decide)
    if _core.tracing() or _C._is_proxy(self._t) or outer() or _core._recording() or \
            not (_core.fp_errors_reported() or _C._np_fp_warns()):
        return False
    if isinstance(other, ndarray):
        return other._scalar and not _C._is_proxy(other._t)
    return other is None or isinstance(other, (int, float, complex, _np.generic))


def _nb_ops():
    """Per BINARY_OP argument (dis._nb_ops' order: `+`, ..., `+=`, ...),
    the ufunc NumPy's scalar operator calls for an operand it does not know
    and the operator; {} where the interpreter has no BINARY_OP (before
    3.11: hop cannot tell the operator, as before)."""
    import dis
    op = dis.opmap.get("BINARY_OP")
    by_symbol = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide",
                 "//": "floor_divide", "%": "remainder", "**": "power", "@": "matmul",
                 "&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor", "<<": "left_shift",
                 ">>": "right_shift"}
    py = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "truediv",
          "floor_divide": "floordiv", "remainder": "mod", "power": "pow", "matmul": "matmul",
          "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
          "left_shift": "lshift", "right_shift": "rshift"}
    if op is None or not hasattr(dis, "_nb_ops"):
        return op, {}
    table = {}
    for i, (_, symbol) in enumerate(dis._nb_ops):
        name = by_symbol.get(symbol[:-1] if symbol.endswith("=") else symbol)
        if name is not None:
            table[i] = (name, getattr(operator, f"__{py[name]}__"))
    return op, table


_BINARY_OP, _NB_OPS = _nb_ops()


def _operator_of_caller(ufunc):
    """The operator (operator.add) when the Python code that made NumPy
    call ufunc (with a NumPy scalar left of a hop.numpy scalar: NumPy's
    scalar math hands an operand it does not know to the ufunc) runs the
    binary operator of that ufunc (`np.uint8(255) + s`, BINARY_OP), not a
    call (np.add(np.uint8(255), s)); else None.  The two reach
    __array_ufunc__ as the same call, and differ under numpy.errstate:
    NumPy's scalar math reports an integer overflow, its ufuncs do not.  The
    caller is the frame above __array_ufunc__ (NumPy's C code makes none),
    or hop.compile's frame translator running the instruction (NumPy's
    ndarray ** tells `x ** a` from np.power(x, a) too); a call from C
    (operator.add, sum, functools.reduce) is a CALL there: hop cannot tell
    it from np.add's and takes the ufunc."""
    f = sys._getframe(2)
    code, i = f.f_code.co_code, f.f_lasti
    if f.f_code in _breaks.ACTS_FOR_USER:
        # hop.compile's frame translator runs the user's instruction
        from .._frame import user_binary_op
        arg = user_binary_op(f)
    elif _BINARY_OP is None or not 0 <= i < len(code) - 1 or code[i] != _BINARY_OP:
        return None
    else:
        arg = code[i + 1]
    op = _NB_OPS.get(arg)
    return op[1] if op is not None and op[0] == ufunc.__name__ else None


def _numpy_scalar_math(py, args):
    """py (an operator) of args (hop.numpy scalars, Python numbers, NumPy
    scalars) by NumPy's scalar math, its result as hop.numpy's."""
    from ._ufuncs import _from_numpy, _to_numpy
    vals = [_to_numpy(a) for a in args]
    return _from_numpy(py(*vals), result_kind(args))


_BINOPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
    "rshift": "right_shift",
}
for _dunder, _uf in _BINOPS.items():
    _py = getattr(operator, f"__{_dunder}__")
    setattr(ndarray, f"__{_dunder}__", _binop(_uf, py=_py))
    setattr(ndarray, f"__r{_dunder}__", _binop(_uf, reflected=True, py=_py))
    setattr(ndarray, f"__i{_dunder}__", _iop(_uf, getattr(ndarray, f"__{_dunder}__")))


def _fast_power(self, other):
    """NumPy 1.24's fast_scalar_power: a float or complex array (not a NumPy
    scalar) ** -1 is reciprocal and ** 0.5 is sqrt, which differ from power
    ((-inf) ** 0.5 is nan, (-0.0) ** 0.5 is -0.0, a complex reciprocal rounds
    otherwise), ** 2 square and ** 1 positive (power's bits, but the array's
    dtype).  Any other array ** 2 is square, whose dtype differs from
    power's for a bool array."""
    if isinstance(other, (_np.ndarray, ndarray)) and not getattr(other, "_scalar", False) \
            and other.ndim == 0 and other.dtype.kind in "iuf" and not self._scalar:
        # NumPy reads a 0-d integer or float array exponent's value too
        if isinstance(other, ndarray) and not other._fixed():
            _breaks.conversion(_C.TraceError, "hop.numpy: a ** b of a 0-d array b: NumPy "
                                              "picks the kernel by b's value (** 2 is square)")
        other = _np.asarray(other)[()]
    if self._scalar or not isinstance(other, (int, float, _np.integer, _np.floating)):
        return None
    if self.dtype.kind == "b":
        # a bool array ** 2 is square (int8), not power (int64 for a Python 2)
        return "square" if float(other) == 2.0 else None
    if self.dtype.kind in "iu":
        # an integer array ** 2 is square in its own dtype (a 0-d int8 is
        # no scalar to power's value-based casting); ** 2.0 NumPy squares
        # in float64, which is power's dtype anyway
        if float(other) != 2.0:
            return None
        return "square" if isinstance(other, (int, _np.integer)) else "square of float64"
    # (** 2 and ** 1 are square and positive: their dtype is the array's,
    # where power's of a 0-d array casts by both values: complex64 ** 2 is
    # complex128)
    return {-1.0: "reciprocal", 0.5: "sqrt", 2.0: "square", 1.0: "positive",
            0.0: "ones_like"}.get(float(other))


def _pow(self, other, mod=None):
    from ._ufuncs import call_ufunc, takes
    if mod is not None:  # (pow(a, b, m): NumPy's arrays and scalars have no such power)
        what = f"numpy.{self.dtype.type.__name__}" if self._scalar else "numpy.ndarray"
        raise TypeError(f"unsupported operand type(s) for ** or pow(): '{what}', "
                        f"'{type(other).__name__}', '{type(mod).__name__}'")
    fast = _fast_power(self, other) if takes(other) else None
    if fast is None:
        return _plain_pow(self, other)
    if fast == "ones_like":  # the array's dtype (a 0-d one: its NumPy scalar)
        return call_ufunc("power", (self, other), {"dtype": self.dtype}, type(self))
    if fast == "square of float64":
        # NumPy casts the integer array to float64 (PyArray_CastToType in
        # Fortran order for a Fortran-ordered array, else C: astype's 'A')
        # and squares that: a 0-d one stays an array
        t = call_ufunc("square", (self.astype(_np.float64, order="A"),), {}, type(self))._t
        return wrap(type(self), t)
    return call_ufunc(fast, (self,), {}, type(self))


def _ipow(self, other):
    from ._ufuncs import call_ufunc, takes
    fast = _fast_power(self, other) if takes(other) else None
    if fast is None:
        return _plain_ipow(self, other)
    if fast == "ones_like":
        call_ufunc("power", (self, other), {"out": (self,)}, type(self))
        return self
    # (in place an integer array squares in its own dtype: no float64 copy)
    call_ufunc("square" if fast == "square of float64" else fast, (self,), {"out": (self,)},
               type(self))
    return self


_plain_pow, _plain_ipow = ndarray.__pow__, ndarray.__ipow__
# a ** b: the eager fast path first (np_eager.c fast_power: _fast_power's
# kernels for a Python int or float exponent), then _pow
ndarray.__pow__ = _C._np_eager_op("power", 2, False, _pow)
ndarray.__ipow__ = _ipow
_plain_imatmul = ndarray.__imatmul__


def _imatmul(self, other):
    """NumPy 1.24 has no in-place matmul: `a @= b` of an array raises,
    writing nothing (a NumPy scalar has none: s @ b, rebound)."""
    if self._scalar:
        return _plain_imatmul(self, other)
    raise TypeError("In-place matrix multiplication is not (yet) supported. Use 'a = a @ b' "
                    "instead of 'a @= b'.")


ndarray.__imatmul__ = _imatmul
for _dunder, _uf in {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                     "eq": "equal", "ne": "not_equal"}.items():
    setattr(ndarray, f"__{_dunder}__", _binop(_uf, py=getattr(operator, f"__{_dunder}__")))
for _dunder, _uf in {"neg": "negative", "pos": "positive", "abs": "absolute",
                     "invert": "invert"}.items():
    setattr(ndarray, f"__{_dunder}__", _unop(_uf, getattr(operator, f"__{_dunder}__")))
del _dunder, _uf, _py


def _divmod(self, other, reflected=False):
    """divmod() of an array: NumPy's ufunc np.divmod (its warnings and
    errors name divmod); of two NumPy scalars their floor division and
    remainder."""
    from ._ufuncs import call_ufunc, takes
    if _defers_to(self, other) or not takes(other):
        return NotImplemented
    args = (other, self) if reflected else (self, other)
    kind = result_kind(args)
    if not self._scalar or isinstance(other, (list, tuple, _np.ndarray)) or \
            isinstance(other, ndarray) and not other._scalar:
        return call_ufunc("divmod", args, {}, kind)
    return (_scalar_math_checked("floor_divide", args, call_ufunc("floor_divide", args, {}, kind)),
            call_ufunc("remainder", args, {}, kind))


def _rdivmod(self, other):
    return _divmod(self, other, True)


ndarray.__divmod__ = _divmod
ndarray.__rdivmod__ = _rdivmod


from . import _eager  # noqa: E402 (it imports ndarray from here)

# NumPy's overrides call these unbound: C methods that try the eager fast
# path (_eager) first, then the Python ones above
ndarray.__array_ufunc__ = _C._np_eager_method("array_ufunc", None, ndarray.__array_ufunc__)
ndarray.__array_function__ = _C._np_eager_method("array_function", None,
                                                 ndarray.__array_function__)
# a[key]: the shape functions' eager fast path of a basic key first
# (_eager_shape), then _indexing's
ndarray.__getitem__ = _C._np_eager_method("getitem", None, ndarray.__getitem__)
# a[key] = value: a basic key and a Python number filled in place by the same
# fast path (_eager_shape), else _indexing.setitem
ndarray.__setitem__ = _C._np_eager_method("setitem", None, ndarray.__setitem__)
# a.item(...), float(a), int(a) of a real element: read in place by the same
# fast path (_eager_shape), else the Python ones above
ndarray.item = _C._np_eager_method("element", "item", ndarray.item)
ndarray.__float__ = _C._np_eager_method("element", "float", ndarray.__float__)
ndarray.__int__ = _C._np_eager_method("element", "int", ndarray.__int__)
# len(a), a.ndim, a.size of an array whose value is its concrete tensor: read
# off the tensor in C (np_eager.c fast_attr), else the Python ones above
# (a.shape's getter: _attrs)
ndarray.__len__ = _C._np_eager_method("attr", "len", ndarray.__len__)
ndarray.ndim = property(_C._np_eager_method("attr", "ndim", ndarray.ndim.fget),
                        doc=ndarray.ndim.__doc__)
ndarray.size = property(_C._np_eager_method("attr", "size", ndarray.size.fget),
                        doc=ndarray.size.__doc__)
# a.dtype of such an array read by a LOAD_ATTR/LOAD_METHOD (`a.dtype`) in C
# too; any other read (np.dtype(a) from C, getattr) the Python getter's (_callee)
ndarray.dtype = property(_C._np_eager_method("attr", "dtype", ndarray.dtype.fget),
                         doc=ndarray.dtype.__doc__)
