"""The frame translator and library objects that hold the caller's state
(issue 28, "library holders"; a mixin of hop/_frame.py's Translator).

A library callable object runs code the translator does not see: called
for real, `functools.partial(list.append, G)(1)` changes G once, while
translating, and the plan never again; `operator.methodcaller("append",
1)(G)` the same.  Two answers, in this order:

  * Modelled (`_library_call`): the call such an object makes is
    translated as the code would make it.  functools.partial(g, *a, **k)
    called with (b, kw) is g(*a, *b, **k, **kw); operator.methodcaller(name,
    *a, **k)(o) is o.name(*a, **k); attrgetter and itemgetter read o's
    attributes and items through the translator (a read of its overlay and
    shadows, guarded as the code's own); a C method of list, dict or set
    called unbound (`list.append(L, v)`, what partial(list.append, G) calls)
    is L.append(v); setattr/delattr and operator.setitem/delitem are the
    translator's stores; iter(f, sentinel) of the user's f translates f at
    each next() (_TransCall).  So the change is recorded and replayed on
    every call, and a read sees the function's own changes.
  * Watched (`_native`): any other call of library code hop runs for real
    is given the lists, dicts, sets, bytearrays, deques and objects of the
    caller's it can reach through library objects (a partial's arguments, a
    bound method's object, an iterator's container, what a tuple or a list
    the function made holds: `_reachable`).  Their contents are taken before
    and compared after; a change is put back and the translation stops
    (Unsupported: the call runs eagerly, explain() names the callable).  A
    container the function changed before (its shadow holds the change)
    reached that way is Unsupported too: the library would read the old
    contents.
"""

import builtins
import collections
import functools
import gc
import itertools
import operator
import types
import warnings

from . import _C
from . import _breaks
from ._effect_holders import DEATH_CALLBACKS, death_callback
from ._frame_base import _DELETED, _Lazy, _userish

__all__ = ["_Library", "_TransCall", "modelled"]


# What _reachable walks through: library objects written in C that hold
# other objects (a partial, a bound C method, an iterator, a getter), never
# a module, a class, a function (its globals), a code object or a value.
_WALLS = frozenset([int, float, bool, complex, str, bytes, type(None), types.ModuleType,
                    types.FunctionType, types.CodeType, types.CellType, type, range, slice,
                    _C.Tensor, _C.SymInt, types.FrameType])
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by Python code
_WATCHED = (list, dict, set, bytearray, collections.deque)
_MAX_REACH = 256  # objects _reachable looks at per call


def _contents(x):
    """What x holds now, as a value to compare (by identity) and put back."""
    if isinstance(x, (list, bytearray, collections.deque)):
        return tuple(x)
    if isinstance(x, dict):
        return tuple(itertools.chain.from_iterable(x.items()))
    if isinstance(x, set):
        return tuple(x)
    return tuple(itertools.chain.from_iterable(vars(x).items()))


def _same(a, b):
    return len(a) == len(b) and all(p is q for p, q in zip(a, b))


def _put_back(x, c):
    if isinstance(x, (list, bytearray)):
        x[:] = c
        return
    d = x if isinstance(x, (dict, set, collections.deque)) else vars(x)
    d.clear()
    if isinstance(d, dict):
        d.update(zip(c[::2], c[1::2]))
    elif isinstance(d, set):
        d.update(c)
    else:
        d.extend(c)


def _restore(watched, before):
    """Puts back each of watched that changed from its contents before; the
    first that did, or None."""
    changed = None
    for x, c in zip(watched, before):
        if not _same(_contents(x), c):
            _put_back(x, c)
            changed = x if changed is None else changed
    return changed


def _reduce_args(f):
    """The arguments f's __reduce__ gives (operator's getters: the names,
    keys or (name, *args) they were made with), and the keyword arguments
    of a methodcaller made with some."""
    r = f.__reduce__()
    if isinstance(r[0], functools.partial):  # methodcaller(name, **kw)
        return tuple(r[0].args) + tuple(r[1]), dict(r[0].keywords)
    return tuple(r[1]), {}


def modelled(f):
    """Whether _library_call translates a call of f (so map(f, xs) and
    filter(f, xs) translate f at each next(), as for the user's f): a
    partial, a getter, a methodcaller, a C method of a list, dict or set
    that changes it (bound or not); print and warnings.warn, whose calls
    the translator records."""
    from ._frame_state import _MUTATORS
    if f is builtins.print or f is warnings.warn:
        return True
    t = type(f)
    if t in (functools.partial, operator.methodcaller, operator.attrgetter,
             operator.itemgetter):
        return True
    if t is types.BuiltinMethodType:
        return f.__name__ in _MUTATORS.get(type(f.__self__), ())
    if t in (types.MethodDescriptorType, types.WrapperDescriptorType):
        return f.__name__ in _MUTATORS.get(f.__objclass__, ())
    return False


def _equals(out, sentinel):
    """CPython's test of a callable iterator's result against its sentinel
    (the user's comparison: a traced value's truth there is a break)."""
    return out is sentinel or bool(out == sentinel)


class _TransCall(_Lazy):
    """iter(f, sentinel) of a user function f while translating: each next()
    translates f's call and stops at a result equal to sentinel (CPython's
    callable iterator: `is`, then ==)."""

    def __init__(self, tr, f, sentinel):
        self.tr = tr
        self.f = f
        self.sentinel = sentinel
        self.done = False

    def __next__(self):
        if self.done:
            raise StopIteration
        out = self._translate(self.tr._call_function, self.f, (), {})
        if self._translate(_equals, out, self.sentinel):
            self.done = True
            raise StopIteration
        return out


class _Library:
    """The Translator's calls of library objects (a mixin: its tables are
    the Translator's)."""

    def _library_call(self, f, args, kwargs):
        """f(*args, **kwargs) translated as the call the library object f
        makes (see the module), or _NOT_MODELLED."""
        t = type(f)
        if f is functools.partial and args and not self.concrete:
            # made: what it is given is not read now (each call of it loads
            # what it holds, _held), so a container of the caller's it only
            # changes (partial(list.append, G)) keeps no guard on its items
            out = self._make(f(*args, **kwargs))
            for a in (*args[1:], *kwargs.values()):
                if type(a) in _WATCHED and self._kind(a) == "pre":
                    i = id(self.real.get(id(a), a))
                    self.loads[i] = self.loads.get(i, 1) - 1
            return out
        if t is functools.partial:
            held = tuple(self._held(a) for a in f.args)
            kw = {k: self._held(v) for k, v in f.keywords.items()}
            return self._call_function(f.func, held + tuple(args), {**kw, **kwargs})
        if t in (operator.methodcaller, operator.attrgetter, operator.itemgetter) and \
                len(args) == 1 and not kwargs:
            given, kw = _reduce_args(f)
            obj = args[0]
            if t is operator.methodcaller:
                return self._call_function(self._load_method(obj, given[0]), given[1:], kw)
            if t is operator.itemgetter:
                out = tuple(self._sub(obj[k]) for k in given)
            else:
                out = []
                for name in given:
                    v = obj
                    for part in name.split("."):
                        v = self._getattr(v, part)
                    out.append(v)
                out = tuple(out)
            return out[0] if len(given) == 1 else out
        if t in (types.MethodDescriptorType, types.WrapperDescriptorType) and args and \
                type(args[0]) is f.__objclass__ and f.__name__ in self._mutators(args[0]):
            # list.append(L, v): L.append(v), a container's change
            return self._call_function(self._load_method(args[0], f.__name__), tuple(args[1:]),
                                       kwargs)
        if (f is operator.setitem and len(args) == 3 or f is operator.delitem and
                len(args) == 2) and not kwargs and type(args[0]) in (list, dict):
            return self._store_item(args[0], args[1], args[2] if len(args) == 3 else _DELETED)
        if death_callback(f, len(args) + len(kwargs)):
            self._fail(f"{DEATH_CALLBACKS[f]}() registers a callback run when an object dies: "
                       f"eager registers one on every call, the translation once")
        if f is iter and len(args) == 2 and not kwargs and _userish(args[:1]):
            return self._make(_TransCall(self, args[0], args[1]))
        if f is next and args and isinstance(args[0], _Lazy) and not kwargs:
            return next(*args)  # (a translated iterator: its next() is translation)
        return _NOT_MODELLED

    def _held(self, v):
        """An object a library object holds, as the function sees it when it
        loads it (a changed container's shadow, an environment ndarray's
        hop.numpy array); one of the caller's that the translation cannot
        trace to its owner (so no guard of the plan checks it) ends it."""
        if type(v) in _WATCHED and self._kind(v) is None:
            self._fail(f"a library object holds a {type(v).__name__} hop cannot trace to its "
                       f"owner (not the function's own, not reached from its arguments or "
                       f"environment): no guard of the plan would check it")
        return self._sub(v)

    @staticmethod
    def _mutators(obj):
        from ._frame_state import _MUTATORS
        return _MUTATORS.get(type(obj), ())

    def _native(self, f, args, kwargs):
        """f(*args, **kwargs) of library code run for real, watching what of
        the caller's it can reach (see the module)."""
        watched = self._reachable(f, args, kwargs)
        if not watched:
            return f(*args, **kwargs)
        before = [_contents(x) for x in watched]
        try:
            out = f(*args, **kwargs)
        except BaseException:
            _restore(watched, before)  # (eager runs the call again, from the state it had)
            raise
        changed = _restore(watched, before)
        if changed is not None:
            name = getattr(f, "__qualname__", None) or type(f).__qualname__
            self._fail(f"{name}() changed a {type(changed).__name__} of the caller's inside "
                       f"library code, which hop cannot replay (a library object holding it "
                       f"or given it)")
        return out

    def _reachable(self, f, args, kwargs):
        """The caller's containers and objects (that existed before the call)
        a library call of f can reach through the library objects it is
        given; a changed container's real object reached past its shadow is
        Unsupported (the library would read the old contents)."""
        todo = [f, *args, *kwargs.values()]
        seen, out = set(), []
        while todo and len(seen) < _MAX_REACH:
            v = todo.pop()
            t = type(v)
            if t in _WALLS or id(v) in seen:
                continue
            seen.add(id(v))
            if isinstance(v, _WATCHED):
                kind = self._kind(v)
                if kind == "pre":
                    if id(v) in self.shadows:
                        self._fail(f"{getattr(f, '__qualname__', type(f).__qualname__)}() is "
                                   f"given a {t.__name__} the function changed through a "
                                   f"library object holding it (it would read the "
                                   f"{t.__name__} as it was before the change)")
                    out.append(v)
                    # (what library code reaches it may read: its items stay
                    # guarded, as for a load of it by the function)
                    i = id(self.real.get(id(v), v))
                    self.loads[i] = self.loads.get(i, 0) + 1
                if len(v) <= _MAX_REACH:
                    todo.extend(v.values() if isinstance(v, dict) else v)
            elif (t is tuple or t is frozenset) and len(v) <= _MAX_REACH:
                todo.extend(v)
            elif t.__flags__ & _HEAPTYPE:
                mod = getattr(t, "__module__", "") or ""
                if mod.startswith("hop") or isinstance(v, _Lazy):
                    continue
                d = getattr(v, "__dict__", None)
                if isinstance(d, dict):
                    if self._kind(v) == "pre":
                        out.append(v)
                    elif id(v) in self.made:
                        todo.extend(d.values())
            elif not isinstance(v, (type, types.ModuleType)) and \
                    not (_ndarray is not None and isinstance(v, _ndarray)):
                todo.extend(gc.get_referents(v))
        return out


_NOT_MODELLED = object()

# (str(), bool() and the like called here for the user's code are the
# user's: a traced value's text or truth there is a break, as in _frame)
_breaks.ACTS_FOR_USER.update([_Library._native.__code__, _Library._library_call.__code__,
                              _equals.__code__])
try:
    import numpy as _np
    _ndarray = _np.ndarray
except ImportError:  # NumPy is optional at run time
    _ndarray = None
