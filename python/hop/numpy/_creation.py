"""NumPy's array-creation functions called by traced code.

`b = np.empty(n); np.add(x, 1, out=b)` and `b = np.zeros(n); b[x > 0] = 1`
fill an array the function made with NumPy's own functions.  Those take no
array argument, so NumPy never dispatches them to hop.numpy, and the array
would be a real ndarray made at trace time: a constant whose memory cannot
hold a traced value, and whose later uses by NumPy alone hop never sees.  So
while hop.trace or hop.compile runs a function (a run with write-back,
_storage), the module attributes numpy.zeros, numpy.empty, ... are hop.numpy's
for calls from the user's code, as Dynamo maps np.* to torch._numpy: the
array is hop's, in the trace, and updates of it are traced.  Calls from
another thread, from NumPy itself or from hop go to NumPy's own function,
and so does any call that is not visibly `np.zeros(...)` in the calling
Python code (the bytecode of the call is read, once per call site: a
Cython function that looks numpy.empty up itself must get an ndarray);
`from numpy import zeros` binds NumPy's before any trace and is not seen.
The swap is made while any trace runs (counted across threads) and undone
when the last one ends.  numpy.mgrid, ogrid, r_ and c_ are swapped for
hop's objects too (_index_tricks), and numpy.vectorize's call over its
arguments (_vectorize_call) for hop's, which traces pyfunc with hop.vmap
when an argument is traced (_vectorize).
"""

import dis
import functools
import os
import sys
import threading

import numpy as _np

from .. import _C
from . import _core, _ndarray

__all__ = ["enter", "leave"]

# The creation functions of NumPy without an array argument to dispatch on.
_NAMES = ("zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "geomspace", "eye",
          "identity", "tri", "indices", "array", "asarray", "asanyarray", "ascontiguousarray",
          "asfortranarray", "require", "asarray_chkfinite", "isfortran",
          "asfarray", "fromiter", "hamming", "hanning", "bartlett", "blackman", "kaiser",
          "tril_indices", "triu_indices", "diag_indices", "fromfunction", "frombuffer",
          "from_dlpack")

# Those that turn data into an array: of traced hop.numpy arrays (and
# SymInts), hop.numpy's array (np.array([a[0], a[1]]) stacks them in the
# trace); of a hop tensor, a conversion (hop.compile's business).
_CONVERSIONS = frozenset({"array", "asarray", "asanyarray", "ascontiguousarray", "asfarray",
                          "asfortranarray", "require", "asarray_chkfinite", "isfortran",
                          "fromiter"})

_lock = threading.Lock()
_count = 0
_saved = {}
_tls = threading.local()
_LIBRARY_DIRS = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                 os.path.dirname(os.path.abspath(_np.__file__)))


def for_user(wrapper):
    """The frame translator (hop._frame) is about to call wrapper (a
    creation or dispatching function of this module) for the user's code it
    translates (None: the call is over): that call is the user's, as the
    calling frame tells when the user's code runs itself (_users_call)."""
    _tls.translated = wrapper


def _translated(wrapper):
    """Whether the translator called wrapper for the user's code: taken
    once, at the wrapper's entry, so that what NumPy calls in turn is
    NumPy's own."""
    if getattr(_tls, "translated", None) is wrapper:
        _tls.translated = None
        return True
    return False


def _users_call(name, translated=False):
    """Whether the creation function `name` was called by the user's code
    as `np.name(...)` while this thread traces a function (or records its
    path eagerly, _paths.record_path): the calling
    Python frame is outside NumPy and hop, and the call it is making is that
    of an attribute `name` (a C or Cython caller that looks numpy.empty up
    itself, inside a Python call of something else, gets NumPy's own).
    translated: the frame translator made the call for the user's code."""
    if not getattr(_tls, "depth", 0) or (_C.tracing() is None and not _core._recording()):
        return False
    if translated:
        return True
    f = sys._getframe(2)
    code = f.f_code
    if os.path.abspath(code.co_filename).startswith(_LIBRARY_DIRS):
        return False
    key = (code, f.f_lasti)
    callee = _callees.get(key, False)
    if callee is False:
        if len(_callees) > 4096:
            _callees.clear()
        callee = _callees[key] = _callee_name(code, f.f_lasti)
    return callee == name


_callees = {}


def _callee_name(code, lasti):
    """The attribute name of the callable that the call instruction at lasti
    of code calls (`np.empty(...)`: "empty"), or None when it is not such a
    call or the bytecode cannot tell (then NumPy's own function runs)."""
    try:
        ins = list(dis.get_instructions(code))
    except Exception:  # pragma: no cover (another bytecode format)
        return None
    at = max((k for k, x in enumerate(ins) if x.offset <= lasti), default=None)
    if at is None or ins[at].opname != "CALL" or ins[at].arg is None:
        return None
    need = ins[at].arg  # the arguments on the stack above the callable
    j = at - 1
    while j >= 0 and ins[j].opname in ("PRECALL", "KW_NAMES"):
        j -= 1
    while j >= 0:
        x = ins[j]
        if need == 0:
            return x.argval if x.opname in ("LOAD_METHOD", "LOAD_ATTR") else None
        try:
            need -= dis.stack_effect(x.opcode, x.arg if x.opcode >= dis.HAVE_ARGUMENT else None,
                                     jump=False)
        except ValueError:
            return None
        if need < 0:
            return None
        j -= 1
    return None


def _dispatching(name, original):
    """NumPy's function `name` (hop.numpy implements it) as the user's code
    calls it while a trace runs: with a traced value anywhere in its
    arguments (inside a list too: np.mean([a.max(), b.max()]), which
    NumPy's __array_function__ does not look into) hop.numpy's, else
    NumPy's own."""
    from . import _funcs

    @functools.wraps(original)
    def dispatching(*args, **kwargs):
        translated = _translated(dispatching)
        # an array among the arguments themselves: NumPy dispatches (the
        # same frames as eagerly, where path specialisation replays it)
        if not _top_level(args, kwargs) and \
                (_traced_in(args) or _traced_in(kwargs.values())) and \
                _users_call(name, translated) and \
                not (_tensor_in(args) or _tensor_in(kwargs.values())):
            # (NumPy's own function called: with no array among the values,
            # only sizes, NumPy's result -- np.sum([n, 1]) an np.int64)
            return _funcs.array_function(original, (), args, kwargs, _ndarray.NumpyArg)
        return original(*args, **kwargs)
    dispatching.__hop_original__ = original
    return dispatching


def _isscalar(original):
    """numpy.isscalar while a trace runs: of a hop.numpy array, whether it is
    one of NumPy's scalars (NumPy's own asks isinstance(element, np.generic)
    from NumPy's frame, which sees an array's real class, hop.numpy.ndarray,
    and then numbers.Number from abc's, which sees NumPy's class: a traced
    np.int64 was a scalar but a traced np.bool_, no Number, was not)."""
    @functools.wraps(original)
    def isscalar(element):
        if isinstance(element, _ndarray.ndarray):
            return element._scalar
        return original(element)
    isscalar.__hop_original__ = original
    return isscalar


_dispatched = None


def _top_level(args, kwargs):
    from ._ndarray import ndarray
    return any(isinstance(v, (ndarray, _C.Tensor)) for v in args) or \
        any(isinstance(v, (ndarray, _C.Tensor)) for v in kwargs.values())


def _dispatched_names():
    """The functions of the numpy module that hop.numpy implements (besides
    the creation functions): name -> NumPy's function."""
    global _dispatched
    if _dispatched is None:
        from . import _funcs
        _dispatched = {n: f for n, f in vars(_np).items()
                       if n not in _NAMES and not n.startswith("_") and callable(f) and
                       not isinstance(f, (type, _np.ufunc)) and _funcs.FUNCS.get(f) is not None}
    return _dispatched


def _redirect(name, original):
    from . import _funcs
    impl = _funcs.PUBLIC[name]

    @functools.wraps(original)
    def creation(*args, **kwargs):
        translated = _translated(creation)
        if kwargs.get("like") is not None or not _users_call(name, translated):
            return original(*args, **kwargs)
        if name == "fromiter":
            args = _fromiter_items(args, kwargs)
        elif name == "fromfunction":
            # the function gets hop's index grids (constants of the trace)
            return _as_numpys(impl(*args, **kwargs))
        if _traced_in(args) or _traced_in(kwargs.values()):
            if name in _CONVERSIONS and (_tensor_in(args) or _tensor_in(kwargs.values())):
                # a hop tensor made an ndarray: a conversion, hop.compile's
                return original(*args, **kwargs)
            kwargs.pop("like", None)
            return _as_numpys(impl(*args, **kwargs))
        # concrete arguments: NumPy's own array (values known now, usable as
        # Python data: .tolist(), float(a[0])), held by hop so that writes
        # of traced values into it are traced; but NumPy's warning of a None
        # shape is each call's (a graph break)
        if name in ("zeros", "ones", "empty", "full") and \
                (args[0] if args else kwargs.get("shape", ())) is None:
            _funcs.none_shape()
        return held(original(*args, **kwargs), list(args) + list(kwargs.values()))
    creation.__hop_original__ = original
    return creation


def held(r, args=()):
    """NumPy's result r of a creation function (or index trick) the user's
    code called with concrete arguments args while a trace runs, held by
    hop (a NumpyArg over its memory, which it keeps) so that writes of
    traced values into it are traced; r itself when hop cannot hold it (a
    dtype hop lacks or one with metadata, which hop's array would drop,
    not an array)."""
    if isinstance(r, _np.ndarray) and _np.dtype(r.dtype) in _core._HOP and \
            r.dtype.metadata is None:
        from . import _storage
        from ._ndarray import NumpyArg
        t = _C.asarray(r)  # concrete: over its memory, which it keeps
        run = _storage.current()
        if run is not None and not any(isinstance(a, _np.ndarray) and
                                       _np.may_share_memory(r, a) for a in args):
            run.made.append(t)  # new memory: nothing outside the call holds it
        r2 = NumpyArg(t)
        r2._ro = not r.flags.writeable  # np.asarray of a read-only array is that array
        return r2
    if type(r) is list:
        return [held(x, args) for x in r]
    return r


def users_subscript(depth):
    """Whether hop's object swapped in for numpy.r_ (c_, mgrid, ogrid) is
    subscripted by the user's code while this thread traces a function (or
    records its path): the frame `depth` up from here is outside NumPy and
    hop (the frame translator's subscript, made in hop, gets NumPy's
    arrays)."""
    if not getattr(_tls, "depth", 0) or (_C.tracing() is None and not _core._recording()):
        return False
    code = sys._getframe(depth).f_code
    return not os.path.abspath(code.co_filename).startswith(_LIBRARY_DIRS)


def _fromiter_items(args, kwargs):
    """fromiter's arguments with its iterable read into a list (as many
    items as NumPy's fromiter reads), so that traced items are seen."""
    if not args or isinstance(args[0], (list, tuple)):
        return args
    count = args[2] if len(args) > 2 else kwargs.get("count", -1)
    if not isinstance(count, int):
        return args  # NumPy's error, from NumPy's fromiter
    it = iter(args[0])
    items = list(it) if count < 0 else [x for _, x in zip(range(count), it)]
    return (items,) + tuple(args[1:])


def _traced_in(values):
    """Whether a hop array, a hop tensor or a SymInt is among values (in
    lists and tuples too): then hop.numpy makes the array, in the trace."""
    from ._ndarray import ndarray
    for v in values:
        if isinstance(v, (ndarray, _C.Tensor, _C.SymInt)):
            return True
        if isinstance(v, (list, tuple)) and _traced_in(v):
            return True
    return False


def _tensor_in(values):
    """Whether a hop tensor (not a hop.numpy array) is among values."""
    from ._ndarray import ndarray
    for v in values:
        if isinstance(v, _C.Tensor) and not isinstance(v, ndarray):
            return True
        if isinstance(v, (list, tuple)) and _tensor_in(v):
            return True
    return False


def _as_numpys(r):
    """A hop.numpy array made for NumPy's function as the kind that stands
    for an np.ndarray (NumpyArg: returned as an ndarray, as NumPy's is)."""
    from ._ndarray import NumpyArg, ndarray
    if type(r) is ndarray:
        return NumpyArg(r._tv, scalar=r._scalar)
    if isinstance(r, tuple):
        return tuple(_as_numpys(x) for x in r)
    if isinstance(r, list):
        return [_as_numpys(x) for x in r]
    return r


def enter():
    """A run of a traced function starts on this thread."""
    global _count
    _tls.depth = getattr(_tls, "depth", 0) + 1
    with _lock:
        if _count == 0:
            # NumPy's functions the user has not rebound (`np.sum = g`: g is
            # what eager calls, and it stays bound after the run; before,
            # the run put hop's wrapper of the original in its place and
            # then the original back, and g was lost for good)
            originals, wrappers = _wrappers()
            d = vars(_np)
            put = {n: w for n, w in wrappers.items() if d.get(n) is originals[n]}
            _saved.update((n, originals[n]) for n in put)
            d.update(put)  # one dict update (each setattr costs more)
            # numpy.vectorize's call over its arguments: hop's for traced ones
            from ._vectorize import traced_vectorize_call
            _np.vectorize._vectorize_call = traced_vectorize_call
        _count += 1


_wrapper_cache = None


def _wrappers():
    """(name -> NumPy's function, name -> its wrapper), made once."""
    global _wrapper_cache
    if _wrapper_cache is None:
        from . import _funcs
        originals, wrappers = {}, {}
        for name in _NAMES:
            original = getattr(_np, name, None)
            if original is not None and name in _funcs.PUBLIC:
                originals[name] = original
                wrappers[name] = _redirect(name, original)
        for name, original in _dispatched_names().items():
            originals[name] = original
            wrappers[name] = _dispatching(name, original)
        originals["isscalar"] = _np.isscalar
        wrappers["isscalar"] = _isscalar(_np.isscalar)
        from ._index_tricks import traced_objects
        for name, obj in traced_objects().items():
            originals[name] = getattr(_np, name)
            wrappers[name] = obj
        _wrapper_cache = (originals, wrappers)
    return _wrapper_cache


def leave():
    """The run ends (its enter's pair)."""
    global _count
    _tls.depth -= 1
    with _lock:
        _count -= 1
        if _count == 0:
            d, wrappers = vars(_np), _wrappers()[1]
            # (not a name the function rebound while it ran: its binding stays)
            d.update({n: v for n, v in _saved.items() if d.get(n) is wrappers[n]})
            _saved.clear()
            from ._vectorize import _NUMPYS_CALL
            _np.vectorize._vectorize_call = _NUMPYS_CALL
