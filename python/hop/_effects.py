"""What a compiled function does to Python state it did not make: the effect
check of hop.compile.

A trace runs the function once and its plan runs on every call, so any
Python effect of the function (assigning a global or a nonlocal, writing an
attribute or item of an object the caller or the module holds, appending to
a list it did not make, print(), next() of an iterator, drawing from
`random`/`np.random`, reading the clock) would happen once, at trace time,
and never again.  hop.compile cannot replay effects yet, so before each
trace it asks `find(fn, args, kwargs)` whether the call may have one; if so
the call runs eagerly (docs/ARCHITECTURE.md, "Python effects in compiled
code").

The check costs nothing per call and no copy of the user's data: it reads
bytecode.  _code_effects's abstract interpreter reads each code object once (cached
per code object) and records, per instruction, what may change state (an
Event) and every call (a Site), with where each value involved may come from
(_V.prov: a global, a closure cell, an argument, a module, the result of a
call; nothing for an object the function made).  `find` resolves those with
the values of this call: the arguments, the globals and closure cells, the
attributes they lead to.  It follows the calls into the user's functions
(methods, properties, operators of the user's classes, functions passed as
arguments), classifies the calls into builtins, the standard library, hop
and NumPy by tables, and reports every Effect: (kind, "file.py:line",
reason), in the order met.

It is conservative: a write through a value that may be pre-existing, a call
it cannot resolve, bytecode it cannot read are effects; an effect in a
branch the call does not take counts too.  What it cannot see is documented
in docs/ARCHITECTURE.md: state changed by C code it does not know, an
iterator reached only through a computation (not a name, attribute or item),
in-place operators on values it cannot resolve.
"""

import builtins
import collections.abc
import contextvars
import functools
import inspect
import itertools
import operator
import os
import random as _random
import sys
import types
import warnings
from collections import namedtuple

from . import _C
from ._code_effects import ANY, _effects as _code_effects, _READ_METHODS, op_dunders
from ._effect_tables import (
    _ARG0_WRITERS, _ARRAY_MUTATORS, _BUILTIN_ARGS, _BUILTIN_DUNDERS, _BUILTIN_EFFECTS,
    _BUILTIN_UNKNOWN, _CONSUMERS, _DATETIME_NOW, _EFFECT_MODULES, _FP_QUIET, _HOP_EFFECTS,
    _IO_FUNCTIONS, _ITERATOR_METHODS, _MUTATORS, _NP_EFFECTS, _NP_NEW, _NUMPY_DUNDERS,
    _ORDER, _PART_METHODS, _PURE_MODULES, _RANDOM_MAKERS, _STDLIB_MUTATORS,
    _TRACED_ARRAY_WRITES)
from ._effect_holders import (
    _Holders, _is_hop_object, _is_numpy, _is_stdlib, _is_user, _module_name, _TEST_PACKAGES,
    _top)
from ._purity import _NP_WRITERS
from ._reads import class_attr, is_hop_module, root_value
from ._reads import loaded_hop_numpy

try:
    import numpy as _np
except ImportError:  # NumPy is optional at run time
    _np = None

__all__ = ["Effect", "find", "KINDS"]


class Effect(namedtuple("Effect", "kind site reason")):
    """One Python effect hop.compile cannot replay yet: kind (a key of
    KINDS), site ("file.py:12") and reason (what the code does)."""

    __slots__ = ()

    def __str__(self):
        return f"{self.reason} ({self.site})"


KINDS = {
    "global": "assigns or deletes a global variable",
    "nonlocal": "assigns or deletes a variable of an enclosing function",
    "attribute": "sets or deletes an attribute of an object it did not make",
    "item": "writes an item or slice of a container or array it did not make",
    "mutation": "calls a method or function that changes an object it did not make",
    "print": "prints",
    "warn": "gives a warning (warnings.warn)",
    "iterator": "advances an iterator it did not make",
    "random": "draws from or reseeds a random generator",
    "time": "reads the clock",
    "io": "reads or writes files, streams or the environment",
    "call": "calls code hop cannot analyse",
    "cache": "calls a functools cache (lru_cache, cache), whose hits and misses count every call",
    "bytecode": "has bytecode hop's analysis does not read",
    # not an effect: a question only the frame translator answers as eagerly
    # (type() of a hop.numpy array is NumPy's class to the user's code)
    "type": "asks type() of a value",
    # not an effect: a container of the caller's stored into an object the
    # call made, which the analysis cannot follow changes through (the
    # frame translator can: it compiles such a call)
    "holds": "stores a list, dict or set it did not make into an object it made, or hands "
             "state it did not make to library code that may keep, change or read it",
    # not from the bytecode: met while tracing (hop/_breaks.py)
    "conversion": "needs the value of a traced value (its text, a number, a NumPy array)",
    "fperror": "has NumPy raise or report floating-point errors, which hop's kernels do not",
    "environ": "reads os.environ other than by a call (os.environ[k], dict(os.environ)): the "
               "process's environment, which may change between calls",
    "context": "reads or changes the thread's decimal context (decimal.getcontext(), an "
               "operation on a Decimal: its precision and rounding, its flags set)",
}

_MISSING = object()
_DATA = (list, tuple, dict, set, frozenset, str, bytes, int, float, complex, type(None))
# The class slot of a call's result that a library function (hop's, NumPy's)
# made: calling it runs no code of the user's but the functions it was given.
_LIBRARY = object()
_MAX_FUNCTIONS = 64  # functions analysed per call; beyond, an effect ("call")
# Contexts (known argument values) analysed per function; beyond, its frames
# know only their callable and object arguments (widening: a recursive walk
# over a concrete tree would otherwise be a frame per subtree).
_MAX_CONTEXTS = 4
# Frames per call: a widened frame still tells its object arguments apart.
_MAX_FRAMES = _MAX_FUNCTIONS * (_MAX_CONTEXTS + 1)
_MAX_ITEMS = 64    # candidates of an item step whose key is not a constant


def callable_effect(v):
    """(kind, what) when v is a callable whose call is an effect of that kind
    (print, warnings.warn, input, open, exec, eval, a function or bound
    method of a module of I/O, the clock or random numbers), else None.
    Handed to library code (`any(map(log.info, xs))`, `sorted(xs,
    key=print)`), v runs where hop cannot see it: the finder counts the
    effect at that call (callbacks) and the frame translator breaks there
    (its library code would call v once, while translating)."""
    if not callable(v) or isinstance(v, type):
        return None
    name = getattr(v, "__qualname__", None) or getattr(v, "__name__", None) or type(v).__name__
    if v is builtins.print:
        return ("print", "print()")
    if v is warnings.warn:
        return ("warn", "warnings.warn()")
    if isinstance(v, functools._lru_cache_wrapper):
        return ("cache", f"the cached {name}()")
    owner = getattr(v, "__self__", None)
    if isinstance(v, types.BuiltinFunctionType) and owner is builtins:
        hit = _BUILTIN_EFFECTS.get(v.__name__)
        return (hit[0], f"{name}()") if hit is not None else None
    if isinstance(v, types.MethodType):
        module = getattr(v.__func__, "__module__", None)
    elif isinstance(v, types.BuiltinMethodType) and owner is not None and \
            not isinstance(owner, types.ModuleType):
        module = type(owner).__module__  # (sys.stdout.write: _io's)
    elif isinstance(v, (types.FunctionType, types.BuiltinFunctionType)):
        module = owner.__name__ if isinstance(owner, types.ModuleType) else \
            getattr(v, "__module__", None)
    else:
        return None
    kind = _EFFECT_MODULES.get(_top(module or ""))
    return (kind, f"{module}.{name}()") if kind in ("io", "time", "random") else None


def _fp_errors_reported(site):
    """Whether the numpy.errstate(...) of call site may set a mode other
    than 'ignore' or 'warn' (raise, call, print, log: NumPy raises
    FloatingPointError or calls a function where hop's kernels compute on
    quietly): a spread argument, a positional one (call=), or a keyword
    whose value is not one of those constants."""
    if site.star or site.args:
        return True
    return any(k == "call" or getattr(v, "const", None) not in _FP_QUIET
               for k, v in zip(site.kwnames, site.kwargs))


def _unwrap(v):
    """The user's function a hop wrapper (hop.compile, hop.grad, hop.vmap)
    runs, or v."""
    for _ in range(16):
        if isinstance(v, types.FunctionType) or not _is_hop_object(v):
            break
        w = getattr(v, "__wrapped__", None)
        if w is None:
            break
        v = w
    return v


# The methods of a dict or set that hash their argument.
_HASHING_METHODS = frozenset("get pop setdefault __getitem__ __contains__ __delitem__ "
                             "__setitem__ add discard remove fromkeys".split())


def _special(cls):
    """The special methods cls's classes define (but construction's)."""
    if not _is_user(getattr(cls, "__module__", "") or ""):
        return ()
    return sorted({n for k in cls.__mro__[:-1] for n in vars(k)
                   if n.startswith("__") and n.endswith("__") and
                   n not in ("__init__", "__new__", "__del__")})


def _dispatched(v):
    """The user's functions registered with a functools.singledispatch
    function v (any of them may run), or []."""
    reg = getattr(v, "registry", None)
    if getattr(v, "__module__", None) is None or not callable(getattr(v, "dispatch", None)) or \
            not isinstance(reg, collections.abc.Mapping):
        return []
    return [_unwrap(impl) for impl in list(reg.values())
            if isinstance(_unwrap(impl), types.FunctionType) and
            _is_user(_module_name(_unwrap(impl)))]


_SAFE = None


def _safe_methods():
    """Method names that never change their receiver: the read-only methods
    of the builtin containers, strings, NumPy arrays, hop tensors and
    hop.numpy arrays."""
    global _SAFE
    if _SAFE is None:
        names = set(_READ_METHODS)
        kinds = [str, bytes, tuple, frozenset, int, float, complex, dict, list, set, _C.Tensor]
        if _np is not None:
            kinds += [_np.ndarray, _np.generic, _np.dtype]
        hnp = loaded_hop_numpy()
        if hnp is not None:
            kinds.append(hnp.ndarray)
        for k in kinds:
            names.update(n for n in dir(k) if not n.startswith("_") or n in (
                "__len__", "__getitem__", "__contains__", "__iter__", "__repr__", "__str__",
                "__format__", "__array__", "__hop_tensor__", "__eq__", "__ne__", "__lt__",
                "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__float__", "__int__",
                "__index__", "__neg__", "__abs__", "__pos__", "__invert__"))
        _SAFE = frozenset(names - _MUTATORS - _ITERATOR_METHODS)
    return _SAFE


_BASENAMES = {}  # code.co_filename -> its basename


def _site(code, line):
    name = _BASENAMES.get(code.co_filename)
    if name is None:
        name = _BASENAMES[code.co_filename] = os.path.basename(code.co_filename)
    return f"{name}:{line if line is not None else '?'}"


_DATA_DESCRIPTORS = (property, types.GetSetDescriptorType, types.MemberDescriptorType)


def _user_get(a):
    """The __get__ of the user's a descriptor a (a class attribute) runs
    when read through an instance, or None (a function, property, class
    or static method: their code is followed elsewhere)."""
    if a is _MISSING or isinstance(a, (types.FunctionType, property, staticmethod, classmethod,
                                       type)):
        return None
    g = getattr(type(a), "__get__", None)
    return g if isinstance(g, types.FunctionType) and _is_user(_module_name(g)) else None


def _static_attr(v, name):
    """v.name without running the user's code (no property, no
    __getattr__): a module's attribute, a class attribute, an instance's
    own attribute, or a method bound to v."""
    if isinstance(v, types.ModuleType):
        return getattr(v, name, _MISSING)
    if isinstance(v, type):
        a = class_attr(v, name, _MISSING)
        if isinstance(a, staticmethod):
            return a.__func__
        if isinstance(a, classmethod):
            return types.MethodType(a.__func__, v)
        if isinstance(a, types.FunctionType) or a is _MISSING:
            return a
        if isinstance(a, _DATA_DESCRIPTORS):
            return _MISSING
        return a if not hasattr(a, "__get__") or callable(a) else _MISSING
    a = class_attr(type(v), name, _MISSING)
    if not isinstance(a, _DATA_DESCRIPTORS):
        try:
            own = object.__getattribute__(v, "__dict__")
        except (AttributeError, TypeError):
            own = None
        if isinstance(own, dict) and name in own:
            return own[name]
    if a is _MISSING:
        return _MISSING
    if isinstance(a, staticmethod):
        return a.__func__
    if isinstance(a, classmethod):
        return types.MethodType(a.__func__, type(v))
    if isinstance(a, types.FunctionType):
        return types.MethodType(a, v)
    if isinstance(a, (types.MemberDescriptorType, types.MethodDescriptorType,
                      types.WrapperDescriptorType, types.ClassMethodDescriptorType)):
        try:  # a slot's value, a C method bound to v: no Python code runs
            return getattr(v, name)
        except AttributeError:
            return _MISSING
    if isinstance(a, (property, types.GetSetDescriptorType)) or hasattr(a, "__get__"):
        return _MISSING
    return a


class _Frame:
    """One function under analysis: its Python function, the values of its
    parameters when known, which parameters hold (or reach) objects that
    existed before the call, and how it was reached (for the reasons)."""

    def __init__(self, func, values, pre, reach, via, self_new=False, new=None):
        self.func = func
        self.code = func.__code__
        self.eff = _code_effects(self.code)  # (the reading of code, once)
        self.values = values
        # parameter -> the class of the new object the caller passes for it
        # (`helper(A())`: an operator, property or method of A runs on it,
        # self made)
        self.new = new or {}
        self.pre = pre
        self.reach = reach
        self.via = via
        self.results = {}  # ("r", code, offset) -> (kind, class or None)
        self.cands = {}    # src -> candidates(src)
        self.self_new = self_new


class _Finder:
    def __init__(self):
        self.effects = []
        self._seen_effects = set()
        self._frames = set()
        self._contexts = {}  # (code, closure) -> frames scheduled for it
        self._over = False  # past the limits: said once, nothing more analysed
        self.todo = []
        # id -> each Python function analysed (find(followed=...): what the
        # guards' cache of a class's pure hashing methods depends on)
        self.followed = {}
        # ids of the NumPy arrays among the call's arguments: traced as
        # hop.numpy arrays, whose writes hop.numpy writes back (written_back)
        self.array_args = set()
        self.np_random = None
        if _np is not None:
            self.np_random = (_np.random.RandomState, _np.random.Generator,
                              _np.random.BitGenerator)

    # ------------------------------------------------------------ effects

    def add(self, kind, frame, line, reason, code=None):
        e = Effect(kind, _site(code or frame.code, line), reason + frame.via)
        if e not in self._seen_effects:
            self._seen_effects.add(e)
            self.effects.append(e)

    # ------------------------------------------------------------- frames

    def schedule(self, func, values, pre, reach, via, self_new=False, new=None):
        if not isinstance(func, types.FunctionType):
            return
        fn_key = (func.__code__, id(func.__closure__))
        if self._contexts.get(fn_key, 0) >= _MAX_CONTEXTS:
            # widened: data arguments (containers, numbers, strings) unknown
            # and taken as pre-existing, which only adds effects
            values = {k: v for k, v in values.items() if not isinstance(v, _DATA)}
            pre = {k: b for k, b in pre.items() if k in values}
            reach = {k: b for k, b in reach.items() if k in values}
        key = fn_key + (tuple(sorted(pre.items())), tuple(sorted(reach.items())),
               tuple(sorted((k, id(v)) for k, v in values.items())),
               tuple(sorted((k, id(c)) for k, c in (new or {}).items())))
        if key in self._frames:
            return
        self._frames.add(key)
        self._contexts[fn_key] = self._contexts.get(fn_key, 0) + 1
        if len(self._contexts) > _MAX_FUNCTIONS or len(self._frames) > _MAX_FRAMES:
            if not self._over:
                self._over = True
                self.effects.append(Effect("call", _site(func.__code__,
                                                         func.__code__.co_firstlineno),
                                           f"calls more functions than hop analyses "
                                           f"({_MAX_FUNCTIONS} functions, {_MAX_FRAMES} frames)"))
            return
        self.followed[id(func)] = func
        self.todo.append(_Frame(func, values, pre, reach, via, self_new, new))

    def call_user(self, func, frame, site, bound=_MISSING, bound_pre=True, self_new=False,
                  unknown_args=False):
        """Schedules func as called from site of frame (its arguments' values
        and origins mapped to its parameters), with bound as self."""
        code = func.__code__
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        values, pre, reach, new = {}, {}, {}, {}
        pos = list(code.co_varnames[:code.co_argcount])
        if bound is not _MISSING and pos:
            first = pos.pop(0)
            values[first] = bound
            pre[first] = bound_pre and not self_new
            reach[first] = bound_pre
        if site is not None and not site.star and not unknown_args:
            for p, v in zip(pos, site.args):
                self.bind(frame, p, v, values, pre, reach, new)
            for k, v in zip(site.kwnames, site.kwargs):
                if k in names:
                    self.bind(frame, k, v, values, pre, reach, new)
        via = f" (in {func.__qualname__}, called at {_site(frame.code, site.line)})" \
            if site is not None else f" (in {func.__qualname__}){frame.via}"
        self.schedule(func, values, pre, reach, via, self_new, new)

    def bind(self, frame, name, v, values, pre, reach, new):
        c = self.candidates(frame, v.src)
        if len(c) == 1:
            values[name] = c[0]
        pre[name] = self.is_pre(frame, v.prov)
        reach[name] = self.is_pre(frame, v.reach | v.prov)
        made = [c for k, c in self.made(frame, v.prov) if k == "new" and isinstance(c, type)]
        if len(made) == 1:
            # (a new object of a known class: before, no value here, so the
            # helper's `a += 2` ran A.__iadd__ once, while tracing)
            new[name] = made[0]

    def made(self, frame, prov):
        """What each root of prov that a call made is: ("new" | "args" |
        "unknown", class) of a call's result here, ("new", cls) of a
        parameter the caller passed a new object of cls for."""
        out = []
        for r in prov:
            if r[0] == "r":
                out.append(self.result(frame, r))
            elif r[0] == "p" and r[1] in frame.new:
                out.append(("new", frame.new[r[1]]))
        return out

    # --------------------------------------------------------- resolution

    def root(self, frame, kind, name):
        if kind in ("g", "c"):
            return root_value(frame.func, kind, name, _MISSING)
        if kind == "p":
            return frame.values.get(name, _MISSING)
        if kind == "m":
            return sys.modules.get(name, _MISSING)
        return _MISSING

    def candidates(self, frame, src):
        """The values src (a root and steps) may name now, or [] (memoised
        per frame: the call's values do not change while it is analysed)."""
        if src is None:
            return []
        try:
            return frame.cands[src]
        except KeyError:
            pass
        except TypeError:  # an unhashable constant key
            return self._candidates(frame, src)
        out = frame.cands[src] = self._candidates(frame, src)
        return out

    def _candidates(self, frame, src):
        v = self.root(frame, src[0], src[1])
        if v is _MISSING:
            return []
        vals = [v]
        for step in src[2:]:
            nxt = []
            for v in vals:
                if isinstance(step, str):
                    a = _static_attr(v, step)
                    if a is not _MISSING:
                        nxt.append(a)
                elif type(v) in (dict, list, tuple):
                    key = step[1]
                    if key is ANY:
                        items = list(v.values()) if type(v) is dict else list(v)
                        if len(items) > _MAX_ITEMS:
                            return []
                        nxt.extend(items)
                    else:
                        try:
                            nxt.append(v[key])
                        except (KeyError, IndexError, TypeError):
                            pass
            vals = nxt
            if not vals:
                return []
        return vals

    def is_pre(self, frame, roots, seen=None):
        """Whether a value from these roots may be an object that existed
        before the call (or part of one)."""
        for r in roots:
            k = r[0]
            if k in ("g", "c", "m", "?"):
                return True
            if k == "p":
                if frame.pre.get(r[1], True):
                    return True
            elif k == "p*":
                if frame.reach.get(r[1], True):
                    return True
            elif k == "r":
                kind, _ = self.result(frame, r)
                if kind == "unknown":
                    return True
                if kind == "args":
                    # what its arguments are (a loop may pass a call's result
                    # back to the same call: each site once)
                    seen = set() if seen is None else seen
                    if r in seen:
                        continue
                    seen.add(r)
                    site = frame.eff.sites.get((r[1], r[2]))
                    if site is None:
                        return True
                    vals = list(site.args) + list(site.kwargs) + [site.receiver]
                    for v in vals:
                        if self.is_pre(frame, v.prov | v.reach, seen):
                            return True
                        code = getattr(v, "code", None)
                        if code is not None and self.returns_pre(frame, code, seen):
                            return True
        return False

    def returns_pre(self, frame, code, seen=None):
        """Whether the function made here with code may return an object
        that existed before the call (`lambda: G`, handed to a library that
        calls it: iter(f, sentinel), a key function).  What it returns of
        its own arguments ("?": the library passes them) is what the
        library's other arguments are, looked at by the caller."""
        ret = frame.eff.returns.get(code)
        if ret is None:
            return False
        return self.is_pre(frame, {r for r in ret.prov | ret.reach if r[0] != "?"}, seen)

    def code_site(self, frame, r):
        """The call site whose result root r is, or None."""
        return frame.eff.sites.get((r[1], r[2])) if r[0] == "r" else None

    def result(self, frame, r):
        """What call site r returns: ("new" | "args" | "unknown", class)."""
        got = frame.results.get(r)
        if got is None:
            frame.results[r] = ("unknown", None)  # a cycle: assume the worst
            site = frame.eff.sites.get((r[1], r[2]))
            got = ("unknown", None) if site is None else self.site(frame, site, effects=False)
            frame.results[r] = got
        return got

    def describe(self, frame, v):
        """Words for the value v (a _V) a write goes to."""
        src = v.src
        if src is None:
            if any(r[0] == "?" for r in v.prov):
                return "an argument of a nested function (hop cannot tell whether the caller " \
                       "made it)"
            for r in v.prov:
                if r[0] == "r":
                    site = frame.eff.sites.get((r[1], r[2]))
                    if site is None:
                        continue
                    c = site.callee
                    name = c.method or (c.src[-1] if c.src and isinstance(c.src[-1], str)
                                        else "a call")
                    roots = sorted({self.describe(frame, a) for a in
                                    list(site.args) + list(site.kwargs) + [site.receiver]
                                    if a.src is not None and self.is_pre(frame, a.prov)})
                    of = f" (which may be, or share memory with, {' or '.join(roots)})" \
                        if roots else ""
                    return f"the result of {name}() at line {site.line}{of}"
            return "an object hop cannot tell the function made"
        kind, name = src[0], src[1]
        text = {"g": f"the global {name!r}", "c": f"the closure variable {name!r}",
                "p": f"the argument {name!r}", "m": f"the module {name}"}[kind]
        steps = "".join(f".{s}" if isinstance(s, str) else
                        ("[...]" if s[1] is ANY else f"[{s[1]!r}]") for s in src[2:])
        return text + (f" (through {name}{steps})" if steps else "")

    def written_back(self, frame, v):
        """Whether every object the write target v may be is an array whose
        writes the compiled call replays: a NumPy array argument (traced as
        a hop.numpy array) or a concrete hop.numpy array the function reaches
        from outside, through itself or a view of it.  hop.numpy traces such
        writes into the plan and copies the final values into the caller's
        memory after each call (hop/numpy/_storage.py), or refuses them with
        its own error (a HOP body's operand, shared memory, read-only)."""
        vals = self.target_values(frame, v, set())
        if not vals:
            return False
        hnp = loaded_hop_numpy()
        for x in vals:
            if hnp is not None and isinstance(x, hnp.ndarray) and not _C._is_proxy(x._t):
                continue
            if _np is not None and type(x) is _np.ndarray and id(x) in self.array_args:
                continue
            return False
        return True

    def target_values(self, frame, v, seen):
        """The objects that existed before the call which v may be or be a
        part or view of; None when hop cannot tell."""
        if v.src is not None:
            return self.candidates(frame, v.src) or None
        out = []
        for r in v.prov:
            if r[0] != "r" or r in seen:
                return None if r[0] != "r" else out
            seen.add(r)
            # a library call whose result is (part of) its arguments: what
            # those are (reshape, a slice, np.asarray)
            site = frame.eff.sites.get((r[1], r[2]))
            if site is None or site.star or self.result(frame, r)[0] != "args":
                return None
            for a in list(site.args) + list(site.kwargs) + [site.receiver]:
                if not self.is_pre(frame, a.prov):
                    continue
                got = self.target_values(frame, a, seen)
                if got is None:
                    return None
                out.extend(got)
        return out

    # -------------------------------------------------------------- events

    def run(self, frame):
        eff = frame.eff
        if eff.unknown:
            self.add("bytecode", frame, frame.code.co_firstlineno,
                     f"{frame.func.__qualname__} has bytecode hop's effect analysis does not "
                     f"read")
            return
        evs = list(eff.events.values())
        # (in-place operators last: `W[0] += 1` is first of all the item
        # write it stores, the effect explain() and the warning name)
        for ev in [e for e in evs if e.kind != "inplace"] + [e for e in evs if e.kind == "inplace"]:
            self.event(frame, ev)
        for site in list(eff.sites.values()):
            self.site(frame, site, effects=True)

    def event(self, frame, ev):
        k, line, code = ev.kind, ev.line, ev.code
        if k == "global":
            verb, name = ev.detail
            self.add("global", frame, line, f"{'assigns' if verb == 'assign' else 'deletes'} the "
                                            f"global variable {name!r}", code)
        elif k == "nonlocal":
            verb, name = ev.detail
            self.add("nonlocal", frame, line, f"{'assigns' if verb == 'assign' else 'deletes'} "
                                              f"the variable {name!r} of an enclosing function "
                                              f"(nonlocal)", code)
        elif k in ("attr", "item"):
            t = ev.target
            if k == "attr":
                self.store_hooks(frame, t, ev.detail, line, code)
            if self.is_pre(frame, t.prov) and not self.immutable(frame, t) and \
                    not (k == "item" and self.written_back(frame, t)):
                what = self.describe(frame, t)
                if k == "attr":
                    verb, name = ev.detail
                    self.add("attribute", frame, line,
                             f"{'sets' if verb == 'set' else 'deletes'} the attribute {name!r} "
                             f"of {what}", code)
                else:
                    self.add("item", frame, line, f"{'writes' if ev.detail == 'set' else 'deletes'}"
                                                  f" an item of {what}", code)
        elif k == "hold":
            # a list, dict or set of the caller's stored into an object the
            # call made (`self.items = items` in a method of a new object):
            # a change through that object (`b.items.append(1)` in the
            # caller) is one the analysis cannot follow back, so the frame
            # translator, which follows objects, compiles the call
            obj, val = ev.detail, ev.target
            if not self.is_pre(frame, obj.prov) and self.is_pre(frame, val.prov | val.reach):
                vals = self.candidates(frame, val.src)
                if any(type(v) in (list, dict, set, bytearray) for v in vals):
                    self.add("holds", frame, line, "stores a list, dict or set it did not make "
                                                   "into an object it made (a change through "
                                                   "that object is followed by the frame "
                                                   "translator)", code)
        elif k == "inplace":
            t = ev.target
            if not self.is_pre(frame, t.prov) or self.written_back(frame, t):
                return
            vals = self.candidates(frame, t.src)
            if vals:
                if any(_mutable_inplace(v) for v in vals):
                    self.add("item", frame, line, f"updates {self.describe(frame, t)} in place "
                                                  f"({ev.detail})", code)
                for v in vals:
                    self.dunders(frame, v, (f"__i{ev.detail}__",), line, code)
            elif any(r[0] in ("g", "c", "m", "p") for r in t.prov):
                self.add("item", frame, line, f"may update {self.describe(frame, t)} in place "
                                              f"({ev.detail})", code)
        elif k == "iter":
            t = ev.target
            if not self.is_pre(frame, t.prov):
                # a new object of the user's class: its __iter__ (or, without
                # one, the __getitem__ iter() calls item by item), self made
                for kind, cls in self.made(frame, t.prov):
                    if kind == "new" and cls is not None:
                        self.iter_dunders(cls, code, line)
                return
            for v in self.candidates(frame, t.src):
                if isinstance(v, collections.abc.Iterator):
                    self.add("iterator", frame, line, f"iterates over the iterator "
                                                      f"{self.describe(frame, t)}, advancing it",
                             code)
                    break
                self.dunders(frame, v, ("__iter__", "__getitem__"), line, code)
        elif k == "with":
            vals = self.candidates(frame, ev.target.src)
            for v in vals:
                self.dunders(frame, v, ("__enter__", "__exit__"), line, code)
            if not vals:
                # `with CM():` -- a new object: its class's __enter__ and
                # __exit__ (self made by the call); a manager hop cannot
                # tell may run any code
                rs = self.made(frame, ev.target.prov)
                if not rs or len(rs) != len(ev.target.prov) or \
                        any(kind != "new" for kind, _ in rs):
                    self.add("call", frame, line, "enters a context manager hop cannot tell "
                                                  "the class of", code)
                for _, cls in rs:
                    for name in ("__enter__", "__exit__") if cls is not None else ():
                        a = _static_attr(cls, name)
                        if isinstance(a, types.FunctionType) and _is_user(_module_name(a)):
                            self.schedule(a, {}, {}, {}, f" (in {a.__qualname__}, run at "
                                                          f"{_site(code, line)})", self_new=True)
        elif k == "load":
            for v in self.candidates(frame, ev.target.src):
                self.attribute_read(frame, v, ev.detail, line, code)
            for kind, cls in self.made(frame, ev.target.prov):  # (`A().v`: a new
                # object's property, __getattr__)
                if kind == "new" and isinstance(cls, type):
                    self.new_attribute_read(cls, ev.detail, line, code)
        elif k == "op":
            self.operator(frame, ev.target, op_dunders(ev.detail), line, code)

    def attribute_read(self, frame, v, name, line, code):
        """v.name (a load event, or getattr(v, name)) runs the user's code
        of v's class: a property's getter, a descriptor's __get__, or
        __getattr__ for a name the class lacks (name None: not known
        before the call, so __getattr__ and every such getter)."""
        if isinstance(v, (types.ModuleType, type)):
            return
        if name is None:
            if not _is_user(getattr(type(v), "__module__", "") or ""):
                return  # (a library object's attributes run no code of the user's)
            names = {n for klass in type(v).__mro__ for n in vars(klass)
                     if not (n.startswith("__") and n.endswith("__"))}
            for n in sorted(names):
                self.attribute_read(frame, v, n, line, code)
            self.dunders(frame, v, ("__getattr__",), line, code)
            return
        try:
            a = inspect.getattr_static(type(v), name)
        except AttributeError:
            a = _MISSING
        get = _user_get(a)
        if isinstance(a, functools.cached_property) and \
                a.attrname not in (getattr(v, "__dict__", None) or {}):
            # not yet cached: runs the user's function and stores its value
            # in v's __dict__ (before, not followed: a value made in the
            # trace, hop's, was stored in the user's object)
            func = a.func
            if isinstance(func, types.FunctionType) and _is_user(_module_name(func)):
                self.schedule(func, {func.__code__.co_varnames[0]: v}
                              if func.__code__.co_argcount else {}, {}, {},
                              f" (in the cached property {func.__qualname__}, read at "
                              f"{_site(code, line)})")
            self.add("attribute", frame, line, f"reads the functools.cached_property "
                                               f"{name!r} of a {type(v).__qualname__} before it "
                                               f"is cached, which stores its value in the "
                                               f"object", code)
        elif isinstance(a, property) and isinstance(a.fget, types.FunctionType) and \
                _is_user(_module_name(a.fget)):
            self.schedule(a.fget, {a.fget.__code__.co_varnames[0]: v}
                          if a.fget.__code__.co_argcount else {}, {}, {},
                          f" (in the property {a.fget.__qualname__}, read at "
                          f"{_site(code, line)})")
        elif get is not None:
            # a descriptor of the user's: o.name runs its __get__(a, o, type(o))
            self.schedule(get, dict(zip(get.__code__.co_varnames[:2], (a, v))), {}, {},
                          f" (in the descriptor {get.__qualname__}, read at "
                          f"{_site(code, line)})")
        elif a is _MISSING:
            self.dunders(frame, v, ("__getattr__",), line, code)

    def new_attribute_read(self, cls, name, line, code):
        """o.name of a new object o of cls: attribute_read's getters, self
        made (and __getattr__ when the class lacks name: its instance may
        too)."""
        if not _is_user(getattr(cls, "__module__", "") or ""):
            return
        try:
            a = inspect.getattr_static(cls, name)
        except AttributeError:
            self.class_dunders(cls, ("__getattr__",), code, line)
            return
        plain = isinstance(a, (property, functools.cached_property))  # (self only)
        get = a.fget if isinstance(a, property) else a.func \
            if isinstance(a, functools.cached_property) else _user_get(a)
        if isinstance(get, types.FunctionType) and _is_user(_module_name(get)):
            self.schedule(get, {} if plain else
                          dict(zip(get.__code__.co_varnames[:1], (a,))), {}, {},
                          f" (in {get.__qualname__}, read at {_site(code, line)})",
                          self_new=True)

    def operator(self, frame, target, names, line, code):
        """An operator of target (an "op" event) runs the special methods
        names of the values it may be."""
        for kind, cls in self.made(frame, target.prov):  # (a new object: its class's)
            if kind == "new" and isinstance(cls, type):
                self.class_dunders(cls, names, code, line, frame)
        for v in self.candidates(frame, target.src):
            self.dunders(frame, v, names, line, code)
            if "__getitem__" in names and inserts_missing(v):
                # (the frame translator reads it: a key v has, or else eager)
                self.add("item", frame, line, f"reads an item of a {type(v).__name__}, whose "
                                              f"__missing__ inserts a missing one", code)
            if "__contains__" in names and type(v) in _COMPARED_ITEMS or \
                    "__getitem__" in names and type(v) is dict:
                # (D[k] compares k with D's keys of its hash: their __eq__)
                self.compared_items(frame, v, line, code)

    def compared_items(self, frame, v, line, code):
        """`a in v`: v's __contains__ runs the __eq__ of v's items (one item
        of each class; before, not followed)."""
        kinds = {}
        try:
            for item in itertools.islice(v, _MAX_COMPARED):
                kinds.setdefault(type(item), item)
        except RuntimeError:  # (changed meanwhile: what was read)
            pass
        for item in kinds.values():
            self.dunders(frame, item, ("__eq__",), line, code)

    def immutable(self, frame, t):
        """A write target that cannot be written (a tensor, a number): the
        write raises as it would eagerly."""
        vals = self.candidates(frame, t.src)
        return bool(vals) and all(isinstance(v, (int, float, complex, str, bytes, tuple,
                                                 frozenset, type(None))) for v in vals)

    def store_hooks(self, frame, t, detail, line, code):
        """The user's code `obj.name = v` or `del obj.name` runs: the
        __setattr__/__delattr__ of obj's class, a property's setter or
        deleter, a descriptor's __set__/__delete__ -- of a value the
        target may be, or of the class of a new object it was made as
        (self made by the call)."""
        verb, name = detail
        classes = [(type(v), v) for v in self.candidates(frame, t.src)
                   if not isinstance(v, (types.ModuleType, type))]
        classes += [(cls, None) for kind, cls in self.made(frame, t.prov)
                    if kind == "new" and cls is not None]
        for cls, v in classes:
            if not _is_user(getattr(cls, "__module__", "") or ""):
                continue
            meth = class_attr(cls, "__setattr__" if verb == "set" else "__delattr__", _MISSING)
            a = class_attr(cls, name, _MISSING)
            if isinstance(a, property):
                hook, first = a.fset if verb == "set" else a.fdel, "self"
            elif isinstance(meth, types.FunctionType):
                hook, first = meth, "self"
            else:
                hook = getattr(type(a), "__set__" if verb == "set" else "__delete__", None)
                first = "descriptor"
            if not isinstance(hook, types.FunctionType) or not _is_user(_module_name(hook)):
                continue
            names = hook.__code__.co_varnames
            values = {} if v is None or not names else \
                {names[0]: v} if first == "self" else dict(zip(names[:2], (a, v)))
            self.schedule(hook, values, {}, {}, f" (in {hook.__qualname__}, run at "
                                                f"{_site(code, line)})",
                          self_new=v is None and first == "self")

    def class_dunders(self, cls, names, code, line, frame=None):
        """The user's special methods names of cls that an operation on a
        new object of cls runs (and, with frame, the decimal context that
        one on a Decimal reads: decimal_context)."""
        if frame is not None:
            self.decimal_context(frame, cls, line, code)
        if not _is_user(getattr(cls, "__module__", "") or ""):
            return
        for name in names:
            a = _static_attr(cls, name)
            if isinstance(a, types.FunctionType) and _is_user(_module_name(a)):
                self.schedule(a, {}, {}, {}, f" (in {a.__qualname__}, run at "
                                             f"{_site(code, line)})", self_new=True)

    def iter_dunders(self, cls, code, line):
        """The user's methods iteration over a new object of cls runs."""
        for name in ("__iter__", "__getitem__") if _is_user(getattr(cls, "__module__", "")
                                                            or "") else ():
            a = _static_attr(cls, name)
            if isinstance(a, types.FunctionType) and _is_user(_module_name(a)):
                self.schedule(a, {}, {}, {}, f" (in {a.__qualname__}, run at "
                                             f"{_site(code, line)})", self_new=True)
                return

    def decimal_context(self, frame, cls, line, code):
        """An operation on a decimal.Decimal (an operator, a builtin given
        one, a method) reads the thread's decimal context and sets its
        flags: an effect ("context"), so the call runs eagerly (before, the
        trace computed it once with the context of that moment, and a
        precision changed between calls was not seen)."""
        if isinstance(cls, type) and _decimal_type(cls):
            self.add("context", frame, line, f"operates on a {cls.__qualname__}, which reads "
                                             f"and sets the thread's decimal context", code)

    def dunders(self, frame, v, names, line, code):
        """The user's special methods of v's class that an operation runs."""
        if isinstance(v, (types.ModuleType, type)):
            return
        cls = type(v)
        self.decimal_context(frame, cls, line, code)
        if cls is type(os.environ):
            # (`os.environ[k]`, `dict(os.environ)`: the process's environment,
            # which a caller may change between calls; before, read once,
            # while tracing)
            # (not a call the translator can break at: the function runs
            # eagerly)
            self.add("environ", frame, line, "reads os.environ, the process's environment",
                     code)
        if not _is_user(getattr(cls, "__module__", "") or ""):
            return
        for name in names:
            try:
                a = inspect.getattr_static(cls, name)
            except AttributeError:
                continue
            if isinstance(a, types.FunctionType) and _is_user(_module_name(a)):
                self.schedule(a, {a.__code__.co_varnames[0]: v} if a.__code__.co_argcount
                              else {}, {}, {}, f" (in {a.__qualname__}, run at "
                                               f"{_site(code, line)})")

    # --------------------------------------------------------------- calls

    def site(self, frame, site, effects):
        """Classifies a call: records its effects (when effects) and returns
        what it returns: ("new" | "args" | "unknown", class or None)."""
        out = _Calls(self, frame, site, effects)
        return out.run()


def inserts_missing(v):
    """Whether `v[k]` may change v: a dict subclass whose __missing__ is not
    Counter's (which answers 0 and changes nothing), as a defaultdict's
    inserts the default factory's value."""
    if not isinstance(v, dict) or type(v) is dict:
        return False
    m = getattr(type(v), "__missing__", None)
    return m is not None and m is not collections.Counter.__missing__


class _Calls(_Holders):
    """The classification of one call site in one frame."""

    def __init__(self, finder, frame, site, effects):
        self.f = finder
        self.frame = frame
        self.site = site
        self.effects = effects

    def add(self, kind, reason):
        if self.effects:
            self.f.add(kind, self.frame, self.site.line, reason, self.site.code)

    def pre(self, v):
        return self.f.is_pre(self.frame, v.prov)

    def run(self):
        f, frame, site = self.f, self.frame, self.site
        callee = site.callee
        if self.effects:
            self.callbacks()
            self.library_holder()
            self.mutator_callbacks()
            self.death_callbacks()
        if callee.code is not None:
            # a function made here, called in place: analysed with this code
            name = callee.code.co_name
            return ("new", None) if name in ("<listcomp>", "<setcomp>", "<dictcomp>",
                                             "<genexpr>") else ("unknown", None)
        if callee.method is not None:
            return self.method_call(callee.method)
        vals = f.candidates(frame, callee.src)
        if not vals:
            return self.unresolved_callee()
        if operator.getitem in vals and site.args and \
                any(inserts_missing(v) for v in f.candidates(frame, site.args[0].src)):
            # (operator.getitem(D, k): as D[k], _Finder.operator)
            self.add("item", "reads an item of a dict whose __missing__ inserts a missing one")
        return self.merge([self.classify(v) for v in vals])

    def merge(self, results):
        kinds = [r[0] for r in results]
        if "unknown" in kinds:
            # (one result keeps its class: super's, for super().m)
            return results[0] if len(results) == 1 else ("unknown", None)
        if "args" in kinds:
            lib = all(r[1] is _LIBRARY for r in results if r[0] == "args")
            return ("args", _LIBRARY if lib else None)
        classes = {r[1] for r in results}
        return ("new", classes.pop() if len(classes) == 1 else None)

    def callbacks(self):
        """Functions passed as arguments may be called by the callee (on
        the callee's other arguments, or their items: any special method of
        the user's classes of those runs in them, `reduce(lambda a, b: a +
        b, [C(), C()])`; before, followed only for values the finder
        resolves, and C.__add__ there ran once, while tracing)."""
        f, frame, site = self.f, self.frame, self.site
        given = False
        for v in list(site.args) + list(site.kwargs):
            if v.code is not None:
                given = True
                continue  # nested: analysed with this code
            for c in f.candidates(frame, v.src):
                c = _unwrap(c)
                if isinstance(c, types.MethodType) and isinstance(c.__func__, types.FunctionType) \
                        and _is_user(_module_name(c.__func__)):
                    given = True
                    f.call_user(c.__func__, frame, None, bound=c.__self__, unknown_args=True)
                elif isinstance(c, types.FunctionType) and _is_user(_module_name(c)):
                    given = True
                    f.call_user(c, frame, None, unknown_args=True)
                elif isinstance(c, functools.partial):
                    fn = _unwrap(c.func)
                    if isinstance(fn, types.FunctionType) and _is_user(_module_name(fn)):
                        f.call_user(fn, frame, None, unknown_args=True)
                    elif (hit := callable_effect(fn)) is not None:
                        self.add(hit[0], f"passes a partial of {hit[1]} to a call that may "
                                         f"call it")
                elif type(c) in (operator.attrgetter, operator.itemgetter,
                                 operator.methodcaller):
                    self.getter_reads(c)
                elif (hit := callable_effect(c)) is not None:
                    self.add(hit[0], f"passes {hit[1]} to a call that may call it")
        if given:
            self.new_items_given()

    def new_items_given(self):
        """A library callee given a callback and objects of the user's
        classes that this code made (or a container of them): the callback
        may run any special method of those classes on them.  Not for hop's
        own callees (a HOP's body is traced on its operands: the purity
        check's)."""
        f, frame, site = self.f, self.frame, self.site
        for c in f.candidates(frame, site.callee.src) if site.callee.method is None else ():
            if _is_hop_object(c) or is_hop_module(_module_name(_unwrap(c)) or ""):
                return
        for a in list(site.args) + list(site.kwargs):
            for kind, cls in f.made(frame, a.prov | a.reach):
                if kind == "new" and isinstance(cls, type):
                    f.class_dunders(cls, _special(cls), site.code, site.line, frame)

    def given_dunders(self, names, items=True, kwargs=True):
        """A library function given these arguments (len(v), any(xs),
        repr([v]), sorted(xs), math.floor(v), np.asarray(v)) runs the
        special methods names (None: any) of the user's classes of what
        they may be -- a value the finder resolves, an object a call here
        made (`len(S())`, `np.asarray(A())`), and (items) the items of a
        container either holds (`any([B(), B()])`: the items' __bool__).
        Before, only the first kind was followed, and the others' effects
        ran once, while tracing."""
        f, frame, site = self.f, self.frame, self.site
        for a in list(site.args) + (list(site.kwargs) if kwargs else []):
            given = list(f.candidates(frame, a.src))
            for r in a.reach if items else ():  # (what a container made here holds: `repr([s])`)
                v = f.root(frame, r[0], r[1]) if r[0] in ("g", "c", "p") else _MISSING
                if v is not _MISSING:
                    given.append(v)
            for c in given:
                f.dunders(frame, c, _special(type(c)) if names is None else names, site.line,
                          site.code)
                if items and type(c) in _COMPARED_ITEMS:
                    kinds = {}
                    try:
                        for item in itertools.islice(c.values() if type(c) is dict else c,
                                                     _MAX_COMPARED):
                            kinds.setdefault(type(item), item)
                    except RuntimeError:  # (changed meanwhile: what was read)
                        pass
                    for item in kinds.values():
                        f.dunders(frame, item, names or _special(type(item)), site.line,
                                  site.code)
            for kind, cls in f.made(frame, a.prov | a.reach if items else a.prov):
                if kind == "new" and isinstance(cls, type):
                    f.class_dunders(cls, _special(cls) if names is None else names, site.code,
                                    site.line, frame)

    def consumed_iterators(self, what):
        """An iterator argument of a library call is advanced by it."""
        f, frame, site = self.f, self.frame, self.site
        for v in list(site.args) + list(site.kwargs):
            if not self.pre(v):
                continue
            for c in f.candidates(frame, v.src):
                if isinstance(c, collections.abc.Iterator):
                    self.add("iterator", f"passes the iterator {f.describe(frame, v)} to "
                                         f"{what}, which may advance it")
                    break

    def unresolved_callee(self):
        f, frame, site = self.f, self.frame, self.site
        callee = site.callee
        if not callee.prov:
            # made by this code (a lambda, one of a dict of them): its code
            # is one of the nested ones, analysed with this one; or taken
            # out of an object it made, which may hold the caller's state
            self.held_callee(callee)
            return ("unknown", None)
        got = self.resolved_getattr(callee)
        if got is not None:
            return got
        if self.dynamic_getattr(callee):
            return ("unknown", None)
        results = [f.result(frame, r) for r in callee.prov if r[0] == "r"]
        if results and len(results) == len(callee.prov) and \
                all(k == "new" or c is _LIBRARY for k, c in results):
            # a callable a library call made (hop.vmap(f), functools.partial,
            # np.vectorize): the functions it was given are analysed as
            # callbacks; an object of a user class runs its __call__
            self.made_callable(callee)
            classes = {c for _, c in results}
            for cls in classes:
                if isinstance(cls, type) and _is_user(getattr(cls, "__module__", "") or ""):
                    call = inspect.getattr_static(cls, "__call__", None)
                    if isinstance(call, types.FunctionType):
                        f.call_user(call, frame, site, bound=None, bound_pre=False)
            return ("unknown", None)
        self.add("call", "calls a function hop cannot resolve before the call")
        return ("unknown", None)

    def resolved_getattr(self, callee):
        """A call of getattr(module, name)'s result with the module and the
        name known now (`getattr(np, name)(x)`, name a closure variable):
        the call of that function.  None when the callee is not that."""
        f, frame = self.f, self.frame
        results = []
        for r in callee.prov:
            site = frame.eff.sites.get((r[1], r[2])) if r[0] == "r" else None
            if site is None or len(site.args) != 2 or site.kwargs or site.star:
                return None
            getters = f.candidates(frame, site.callee.src)
            objs = f.candidates(frame, site.args[0].src)
            names = f.candidates(frame, site.args[1].src)
            if not getters or any(g is not getattr for g in getters) or not objs or \
                    not names or not all(isinstance(n, str) for n in names):
                return None
            for obj in objs:
                if not isinstance(obj, types.ModuleType):
                    return None
                for n in names:
                    v = _static_attr(obj, n)
                    if v is _MISSING:
                        return None
                    results.append(self.classify(v))
        return self.merge(results) if results else None

    def dynamic_getattr(self, callee):
        """A call of getattr(obj, name)'s result, name not a constant: every
        method obj's class may give (the user's are analysed; a library
        object's change only it).  False when the callee is not that."""
        f, frame = self.f, self.frame
        sites = []
        for r in callee.prov:
            site = frame.eff.sites.get((r[1], r[2])) if r[0] == "r" else None
            vals = f.candidates(frame, site.callee.src) if site is not None else []
            if not (site is not None and site.args and vals and
                    all(v is getattr for v in vals)):
                return False
            sites.append(site)
        for site in sites:
            objs = f.candidates(frame, site.args[0].src)
            if not objs:
                return False
            for obj in objs:
                if isinstance(obj, (types.ModuleType, type)) or \
                        _is_user(getattr(type(obj), "__module__", "") or ""):
                    owner = obj if isinstance(obj, (types.ModuleType, type)) else type(obj)
                    # (not the special methods: a name made at run time is
                    # not __init__)
                    for klass in getattr(owner, "__mro__", (owner,)):
                        for n, a in list(vars(klass).items()):
                            if n.startswith("__") and n.endswith("__"):
                                continue
                            a = a.__func__ if isinstance(a, (staticmethod, classmethod)) else a
                            if isinstance(a, types.FunctionType) and _is_user(_module_name(a)):
                                f.call_user(a, frame, None, bound=obj, unknown_args=True)
                    if isinstance(obj, types.ModuleType):
                        return False  # a module's functions: any function at all
                elif isinstance(obj, (list, dict, set, bytearray, collections.deque)) or \
                        (_np is not None and isinstance(obj, _np.ndarray)):
                    if self.pre(site.args[0]):
                        self.add("mutation", f"calls a method of {f.describe(frame, site.args[0])}"
                                             f" named at run time, which may change it")
        return True

    # -- methods

    def method_call(self, m):
        f, frame, site = self.f, self.frame, self.site
        recv = site.receiver
        objs = f.candidates(frame, recv.src)
        if objs:
            results = []
            for obj in objs:
                if m == "__getitem__" and inserts_missing(obj):
                    # (D.__getitem__(k): as D[k], _Finder.operator)
                    self.add("item", f"reads an item of a {type(obj).__name__}, whose "
                                     f"__missing__ inserts a missing one")
                if m == "__getitem__" and _index_trick(obj):
                    # np.r_[...], np.mgrid[...]: a new array (a list of
                    # them for ogrid, a matrix for 'r'), none of its key's
                    # arrays or of NumPy's (_code_effects._binary_subscr)
                    results.append(("new", None))
                    continue
                meth = _static_attr(obj, m)
                if meth is _MISSING:
                    results.append(self.unresolved_method(m))
                    continue
                if isinstance(obj, (types.ModuleType, type)):
                    results.append(self.classify(meth))
                else:
                    results.append(self.classify(meth, receiver=obj))
            return self.merge(results)
        # the receiver is not a name: a new object of a known class?
        rs = f.made(frame, recv.prov)
        if rs and len(rs) == len(recv.prov) and all(k == "new" and c is not None
                                                    for k, c in rs):
            cls = rs[0][1]
            meth = _static_attr(cls, m)
            if isinstance(meth, types.FunctionType) and _is_user(_module_name(meth)):
                f.call_user(meth, frame, site, bound=None, bound_pre=False, self_new=True)
                return ("unknown", None)
            if not _is_user(getattr(cls, "__module__", "") or ""):
                # a method of a new library object (a deque, a Generator
                # seeded here): it changes only that object (a Decimal's
                # reads the thread's decimal context; given os.environ,
                # `Template(s).substitute(os.environ)`, it reads it)
                f.decimal_context(frame, cls, site.line, site.code)
                self.environ_given()
                return ("args", None)
        if rs and len(rs) == len(recv.prov) and all(c is super for _, c in rs):
            out = self.super_method(m)
            if out is not None:
                return out
        if m in ("__init__", "__new__"):
            return ("args", None)  # super(C, self).__init__(): not followed (documented)
        return self.unresolved_method(m)

    def super_method(self, m):
        """super().m(...) (no arguments) in a method of the user's class C
        (its `__class__` cell): the user's methods the MRO after C answers,
        for C and each subclass of it (a subclass of several bases may put
        another class after C), followed with the frame's self (before,
        `super().__init__(v)` was not followed, so the parent's effects --
        `LOG.append(v)` -- were not replayed on later calls).  A library's
        or object's method: its old answer (None: not resolved here)."""
        f, frame, site = self.f, self.frame, self.site
        code = frame.code
        if "__class__" not in code.co_freevars or not code.co_argcount or \
                frame.func.__closure__ is None:
            return None
        try:
            cls = frame.func.__closure__[code.co_freevars.index("__class__")].cell_contents
        except ValueError:  # (an empty cell)
            return None
        if not isinstance(cls, type):
            return None
        for r in self.site.receiver.prov:
            # super(C, self): C must be the class (another's MRO would be
            # followed from the wrong place)
            call = frame.eff.sites.get((r[1], r[2]))
            if call is None or call.star or call.kwnames or \
                    call.args and f.candidates(frame, call.args[0].src) != [cls]:
                return None
        found, todo, seen = [], [cls], set()
        while todo:
            k = todo.pop()
            if id(k) in seen:
                continue
            seen.add(id(k))
            todo.extend(type.__subclasses__(k))
            mro = k.__mro__
            for base in mro[mro.index(cls) + 1:]:
                if m in vars(base):
                    a = vars(base)[m]
                    a = a.__func__ if isinstance(a, (staticmethod, classmethod)) else a
                    if a not in found:
                        found.append(a)
                    break
        user = [a for a in found if isinstance(a, types.FunctionType) and
                _is_user(_module_name(a))]
        if not user:
            return None
        first = code.co_varnames[0]
        for a in user:
            f.call_user(a, frame, site, bound=frame.values.get(first),
                        bound_pre=frame.pre.get(first, True), self_new=frame.self_new)
        return ("unknown", None)

    def unresolved_method(self, m):
        """A method of a value whose class hop cannot tell."""
        recv = self.site.receiver
        self.environ_given()  # (`d.update(os.environ)` of a dict made here)
        pre = self.pre(recv)
        what = self.f.describe(self.frame, recv)
        if m in _ITERATOR_METHODS:
            if pre:
                self.add("iterator", f"calls .{m}() on {what}")
            return ("args", None)
        if m in _MUTATORS:
            if pre:
                self.add("mutation", f"calls .{m}() on {what}, which changes it")
            elif m == "sort":
                # (a list made here, `[C(2), C(1)].sort()`: its items' __lt__;
                # before, not followed, and C.__lt__ ran once, while tracing)
                for kind, cls in self.f.made(self.frame, recv.prov | recv.reach):
                    if kind == "new" and isinstance(cls, type):
                        self.f.class_dunders(cls, _ORDER, self.site.code, self.site.line,
                                             self.frame)
            return ("args", None)
        if m in _safe_methods():
            return ("args", None)
        if not pre and all(r[0] == "r" and self.f.result(self.frame, r)[0] == "new"
                           for r in recv.prov):
            return ("args", None)  # a method of an object a library call made
        self.add("call", f"calls .{m}() on {what}, a method hop cannot resolve before the call")
        return ("unknown", None)

    # -- callees

    def classify(self, v, receiver=_MISSING):
        """A call of the value v (receiver: the object a method is bound to,
        for a method call)."""
        f, frame, site = self.f, self.frame, self.site
        v = _unwrap(v)
        recv_pre = self.pre(site.receiver) if receiver is not _MISSING else True
        if isinstance(v, types.MethodType):
            receiver, v = v.__self__, v.__func__
            if site.callee.method is None:
                recv_pre = True  # a bound method found through a name
        if isinstance(v, functools.partial):
            self.callbacks_of([v.func])
            if not (isinstance(v.func, types.FunctionType) and _is_user(_module_name(v.func))):
                self.library_callable(v)
            return ("args", None)
        if isinstance(v, type):
            return self.class_call(v)
        if isinstance(v, types.FunctionType):
            name = _module_name(v)
            if is_hop_module(name):
                return self.hop_call(v.__name__)
            if _is_numpy(name):
                return self.numpy_call(v, name)
            if _is_stdlib(name):
                if impls := _dispatched(v):
                    # functools.singledispatch: one of the functions registered
                    # runs, chosen by the first argument's class (before: taken
                    # for the standard library's own code, its effects once)
                    for impl in impls:
                        f.call_user(impl, frame, site, bound=receiver, bound_pre=recv_pre)
                    return ("unknown", None)
                return self.stdlib_call(v, name, receiver, recv_pre)
            if _top(name) in _TEST_PACKAGES:
                return ("args", None)  # pytest's assertion rewriting, hypothesis
            if receiver is not _MISSING and receiver is not None and \
                    isinstance(receiver, (_random.Random,) + (f.np_random or ())):
                self.add("random", f"calls {v.__qualname__}() of a random generator")
            f.call_user(v, frame, site, bound=receiver, bound_pre=recv_pre)
            return ("unknown", None)
        if _np is not None and isinstance(v, _np.ufunc):
            if "out" in site.kwnames or len(site.args) > v.nin or site.star:
                outs = [w for k, w in zip(site.kwnames, site.kwargs) if k == "out"] + \
                    list(site.args[v.nin:])
                if site.star or any(self.pre(w) and not f.written_back(frame, w) for w in outs):
                    self.add("mutation", f"calls numpy.{v.__name__} with out= an array it did "
                                         f"not make")
            return ("new", None)
        if isinstance(v, (types.BuiltinFunctionType, types.BuiltinMethodType,
                          types.MethodWrapperType, types.MethodDescriptorType,
                          types.WrapperDescriptorType, types.ClassMethodDescriptorType)):
            return self.builtin_call(v, receiver, recv_pre)
        if _is_hop_object(v):
            return ("args", _LIBRARY)  # GraphModule, HopFunction: no Python effect
        if isinstance(v, functools._lru_cache_wrapper):
            # the call itself: a hit or a miss counted (cache_info()) and a
            # miss stored, on every call (before, the plan called the cache
            # when traced only: its counts were not eager's)
            self.add("cache", f"calls the cached {getattr(v, '__qualname__', 'function')}()")
            w = getattr(v, "__wrapped__", None)
            if isinstance(w, types.FunctionType) and _is_user(_module_name(w)):
                # functools.cache: a miss runs the user's function, whose
                # effects are the call's (cache_clear() makes them happen
                # again eagerly, never in a plan)
                f.call_user(w, frame, site, bound=None, bound_pre=True)
            return ("unknown", None)
        if callable(v):
            cls = type(v)
            name = getattr(cls, "__module__", "") or ""
            call = inspect.getattr_static(cls, "__call__", None)
            if isinstance(call, types.FunctionType) and _is_user(_module_name(call)):
                f.call_user(call, frame, site, bound=v, bound_pre=True)
                return ("unknown", None)
            if cls in (operator.methodcaller, operator.attrgetter, operator.itemgetter):
                # (a pure module's object that calls a method of its argument
                # or reads it)
                self.library_callable(v)
                return ("unknown", None) if cls is operator.methodcaller else ("args", None)
            if _is_numpy(name) or is_hop_module(name) or name.partition(".")[0] in _PURE_MODULES:
                return ("args", None)
            self.add("call", f"calls a {cls.__qualname__} object, which hop cannot analyse")
            return ("unknown", None)
        return ("unknown", None)  # not callable: raises as it would eagerly

    def callbacks_of(self, fns):
        for fn in fns:
            fn = _unwrap(fn)
            if isinstance(fn, types.FunctionType) and _is_user(_module_name(fn)):
                self.f.call_user(fn, self.frame, None, unknown_args=True)

    def class_call(self, cls):
        f, frame, site = self.f, self.frame, self.site
        if cls is memoryview and (site.star or site.args and self.pre(site.args[0])):
            # a view of a buffer that existed (a global bytearray, an
            # array): a write through it changes that buffer, which the
            # translator does not replay (before, `mv[0] = 1` ran once,
            # while tracing)
            what = f.describe(frame, site.args[0]) if site.args else "an object"
            self.add("call", f"makes a memoryview of {what}, whose writes through it hop does "
                             f"not replay")
            return ("args", None)
        if cls is type and len(site.args) == 1 and not site.star and not site.kwnames:
            self.add("type", "calls type() of one value, NumPy's class for a hop.numpy array "
                             "only when hop.compile translates the function")
        mod = getattr(cls, "__module__", "") or ""
        if _is_user(mod):
            meta = inspect.getattr_static(type(cls), "__call__", None)
            if isinstance(meta, types.FunctionType) and _is_user(_module_name(meta)):
                self.add("call", f"makes a {cls.__qualname__}, which runs its metaclass's "
                                 f"__call__ ({meta.__qualname__})")
            d = inspect.getattr_static(cls, "__del__", None)
            if isinstance(d, types.FunctionType) and _is_user(_module_name(d)):
                self.add("call", f"makes a {cls.__qualname__}, whose __del__ runs when it dies")
            # (an object made in a class body: the class statement calls
            # its __set_name__ when it makes the class; before, not followed,
            # so it ran once, while tracing)
            body = isinstance(site.code, types.CodeType) and \
                not site.code.co_flags & inspect.CO_NEWLOCALS
            for name in ("__new__", "__init__", "__post_init__") + (
                    ("__set_name__",) if body else ()):
                try:
                    a = inspect.getattr_static(cls, name)
                except AttributeError:
                    continue
                if isinstance(a, staticmethod):
                    a = a.__func__
                if isinstance(a, types.FunctionType) and _is_user(_module_name(a)):
                    f.call_user(a, frame, site if name in ("__new__", "__init__") else None,
                                bound=None, bound_pre=False, self_new=True,
                                unknown_args=name not in ("__new__", "__init__"))
            return ("new", cls)
        if cls is super:
            return ("unknown", super)  # (method_call follows super().m)
        if _np is not None and cls is _np.errstate and _fp_errors_reported(site):
            self.add("fperror", "enters numpy.errstate with an error raised, called, printed or "
                                "logged (FloatingPointError), which hop's kernels do not report")
        nargs = len(site.args) + len(site.kwargs)
        if cls is type and (nargs == 1 or site.star):
            # type(self) is an existing class: `type(self).count += 1`
            # writes it (as `self.__class__` does)
            return ("unknown", None)
        if cls is memoryview:
            return ("args", None)  # a view of its argument's memory
        if cls.__name__ in _RANDOM_MAKERS and (_is_numpy(mod) or _top(mod) in ("random",)) \
                and nargs == 0 and not site.star:
            self.add("random", f"makes a {cls.__name__} seeded from the operating system")
        if mod == "builtins":
            # float(v), list(v): the special methods of v's class they run
            names = _BUILTIN_DUNDERS.get(cls.__name__)
            if names is not None and cls is getattr(builtins, cls.__name__, None):
                self.given_dunders(names)
        if _is_stdlib(mod) or _is_numpy(mod) or is_hop_module(mod):
            self.consumed_iterators(f"{cls.__name__}()")
        return ("new", cls)

    def hop_call(self, name):
        site = self.site
        kind = _HOP_EFFECTS.get(name)
        if kind is not None:
            self.add(kind, f"calls hop.{name}()")
        if name in ("rand", "randn") and "seed" not in site.kwnames and not site.star:
            self.add("random", f"calls hop.{name}() without a seed (new numbers each call)")
        return ("args", _LIBRARY)

    def numpy_call(self, v, module):
        site = self.site
        name = getattr(v, "__name__", "")
        # np.asarray(v), np.mean(v): v's __array__, __len__, __getitem__, ...
        self.given_dunders(_NUMPY_DUNDERS, kwargs=False)
        if module.startswith("numpy.random"):
            if name in _RANDOM_MAKERS and (site.args or site.kwargs or site.star):
                return ("new", None)
            self.add("random", f"calls numpy.random.{name}()")
            return ("new", None)
        if name == "frombuffer" and (site.star or site.args and self.pre(site.args[0])):
            # NumPy's array shares the buffer's memory (a write through it
            # changes a global bytearray); hop.numpy's traced one does not
            # (before, `a[0] = 1` never reached the buffer, not even on the
            # first call)
            what = self.f.describe(self.frame, site.args[0]) if site.args else "an object"
            self.add("call", f"calls numpy.frombuffer() of {what}, whose memory NumPy's array "
                             f"shares")
            return ("args", None)
        kind = _NP_EFFECTS.get(name)
        if kind is not None:
            self.add(kind, f"calls numpy.{name}()")
        if name in _NP_WRITERS or "out" in site.kwnames or site.star:
            written = [w for k, w in zip(site.kwnames, site.kwargs) if k == "out"]
            if name in _NP_WRITERS and site.args:
                written.append(site.args[0])
            if site.star or any(self.pre(w) and not self.f.written_back(self.frame, w)
                                for w in written):
                self.add("mutation", f"calls numpy.{name}(), which writes into an array it did "
                                     f"not make")
        self.consumed_iterators(f"numpy.{name}()")
        return ("new", None) if name in _NP_NEW else ("args", _LIBRARY)

    def stdlib_call(self, v, module, receiver, recv_pre):
        """A function of the standard library written in Python."""
        top = _top(module)
        name = getattr(v, "__name__", "")
        if receiver is not _MISSING and receiver is not None:
            if isinstance(receiver, _random.Random):
                if recv_pre:
                    self.add("random", f"calls {name}() of a random generator it did not make")
                return ("args", None)
        if receiver is not _MISSING and receiver is not None and \
                not isinstance(receiver, (types.ModuleType, type)):
            if self.receiver_state(receiver, name, recv_pre):
                return ("unknown", None)
        kind = _EFFECT_MODULES.get(top)
        if kind is not None:
            if top == "datetime" and name not in _DATETIME_NOW:
                return ("args", None)
            self.add(kind, f"calls {module}.{name}()")
            return ("unknown", None)
        if f"{top}.{name}" in _IO_FUNCTIONS:
            self.add("io", f"calls {module}.{name}()")
            return ("unknown", None)
        if top in _PURE_MODULES:
            if name in _ARG0_WRITERS and self.site.args and self.pre(self.site.args[0]):
                self.add("mutation", f"calls {module}.{name}(), which changes its first "
                                     f"argument")
            self.consumed_iterators(f"{module}.{name}()")
            self.arg_dunders()
            return ("args", None)
        self.add("call", f"calls {module}.{name}() of the standard library, which hop does not "
                         f"analyse")
        return ("unknown", None)

    def environ_given(self):
        """os.environ handed to library code, which reads it (before, the
        environment was read once, while tracing)."""
        f, frame, site = self.f, self.frame, self.site
        for a in list(site.args) + list(site.kwargs):
            if any(type(c) is type(os.environ) for c in f.candidates(frame, a.src)):
                f.add("environ", frame, site.line, "hands os.environ, the process's "
                                                   "environment, to a call", site.code)

    def receiver_state(self, obj, name, pre):
        """A method of the standard library's written in Python bound to
        obj: os.environ's (`os.environ.get(k)`) reads the process's
        environment, which a caller may change between calls (io: a break,
        read on every call); a mutator of an object that existed before
        the call (`CNT.update(s)` of a global collections.Counter) changes
        it.  Before, both were a pure module's function of their
        arguments: the environment read once, while tracing, the Counter
        updated once.  True when the call is an io effect."""
        if type(obj) is type(os.environ):
            self.add("io", f"calls .{name}() of os.environ, the process's environment")
            return True
        if pre and (name in _MUTATORS or name in _STDLIB_MUTATORS):
            what = self.f.describe(self.frame, self.site.receiver) \
                if self.site.callee.method is not None else \
                f"a {type(obj).__name__} it did not make"
            self.add("mutation", f"calls .{name}() on {what}, which changes it")
        return False

    def arg_dunders(self):
        """A library function of the standard library (math.floor(v),
        operator.add(v, w)) given objects: any special method of the user's
        their classes have may run (math.floor: __floor__)."""
        self.given_dunders(None, items=False)

    def builtin_call(self, v, receiver, recv_pre):
        """A function or method written in C."""
        site = self.site
        name = getattr(v, "__name__", "")
        owner = getattr(v, "__self__", None)
        if receiver is _MISSING and owner is not None and \
                not isinstance(owner, types.ModuleType):
            receiver = owner
            recv_pre = True  # found through a name: an object that exists
        if isinstance(v, (types.MethodDescriptorType, types.WrapperDescriptorType)) and \
                receiver is _MISSING:
            # an unbound C method called with its object first: list.append(xs, 1)
            if name in _MUTATORS and site.args and self.pre(site.args[0]):
                self.add("mutation", f"calls {v.__qualname__}() on an object it did not make")
            return ("args", None)
        if receiver is not _MISSING and receiver is not None and \
                not isinstance(receiver, types.ModuleType):
            return self.bound_builtin(name, receiver, recv_pre)
        module = owner.__name__ if isinstance(owner, types.ModuleType) else \
            (getattr(v, "__module__", None) or "")
        if module == "builtins":
            return self.builtin(name)
        if is_hop_module(module):
            return self.hop_call(name)
        if _is_numpy(module):
            return self.numpy_call(v, module)
        top = _top(module)
        if v is warnings.warn:
            self.add("warn", "calls warnings.warn()")
            return ("new", None)
        kind = _EFFECT_MODULES.get(top)
        if kind is not None:
            self.add(kind, f"calls {module}.{name}()")
            return ("unknown", None)
        if top in _PURE_MODULES:
            if name in _ARG0_WRITERS and site.args and self.pre(site.args[0]):
                self.add("mutation", f"calls {module}.{name}(), which changes its first "
                                     f"argument")
            self.consumed_iterators(f"{module}.{name}()")
            self.arg_dunders()
            return ("args", None)
        self.add("call", f"calls {module + '.' if module else ''}{name}(), a C function hop "
                         f"does not know")
        return ("unknown", None)

    def bound_builtin(self, name, obj, pre):
        self.f.decimal_context(self.frame, type(obj), self.site.line, self.site.code)
        self.environ_given()  # (`'$X'.format_map(os.environ)`)

        def what():
            if self.site.callee.method is not None:
                return self.f.describe(self.frame, self.site.receiver)
            return f"a {type(obj).__name__} it did not make"
        if isinstance(obj, type):
            mod = getattr(obj, "__module__", "") or ""
            if _top(mod) == "datetime" and name in _DATETIME_NOW:
                self.add("time", f"calls {obj.__name__}.{name}()")
            return ("new", None)
        if isinstance(obj, (_random.Random,) + (self.f.np_random or ())):
            if pre:
                self.add("random", f"calls .{name}() of {what()}, a random generator")
            return ("new", None)
        if isinstance(obj, contextvars.ContextVar) and name == "get":
            # the current context's value, which the caller may set between
            # calls (before, read once, while tracing): a break, read in
            # Python on every call
            self.add("io", f"calls .get() of {what()}, a context variable")
            return ("new", None)
        if isinstance(obj, functools._lru_cache_wrapper) and name in ("cache_info",
                                                                      "cache_clear"):
            # its counts change on every call of the cache (before, read
            # once, while tracing: `h.cache_info().hits` 0 on every call)
            self.add("cache", f"calls .{name}() of {what()}, a functools cache")
            return ("new", None)
        if type(obj) in (dict, set, frozenset) and name in _HASHING_METHODS:
            # D.get(k), S.add(k): k's __hash__ and __eq__, and the __eq__ of
            # the keys of its hash (before, not followed)
            self.given_dunders(("__hash__", "__eq__"), items=False)
            self.f.compared_items(self.frame, obj, self.site.line, self.site.code)
        if name in _ITERATOR_METHODS and isinstance(obj, collections.abc.Iterator):
            if pre:
                self.add("iterator", f"calls .{name}() on {what()}")
            return ("args", None)
        if name in ("tofile", "dump") and _np is not None and isinstance(obj, _np.ndarray):
            self.add("io", f"calls .{name}() on {what()}")
        elif _mutates(obj, name):
            if pre and not (name in _TRACED_ARRAY_WRITES and isinstance(obj, _np.ndarray) and
                            self.site.callee.method is not None and
                            self.f.written_back(self.frame, self.site.receiver)):
                self.add("mutation", f"calls .{name}() on {what()}, which changes it")
            return ("args", None)
        return ("args", None) if name in _PART_METHODS else ("new", None)

    def builtin(self, name):
        f, frame, site = self.f, self.frame, self.site
        hit = _BUILTIN_EFFECTS.get(name)
        if hit is not None:
            self.add(hit[0], hit[1])
            return ("unknown", None)
        if name == "next":
            if site.args and self.pre(site.args[0]) and not self.own_iterator(site.args[0]):
                self.add("iterator", f"calls next() on {f.describe(frame, site.args[0])}")
            return ("args", None)
        if name in ("setattr", "delattr"):
            if site.star or (site.args and self.pre(site.args[0])):
                what = f.describe(frame, site.args[0]) if site.args else "an object"
                self.add("attribute", f"calls {name}() on {what}")
            elif name == "setattr" and len(site.args) >= 3 and self.pre(site.args[2]):
                # (a container of the caller's held by the object: "holds")
                vals = f.candidates(frame, site.args[2].src)
                if any(type(v) in (list, dict, set, bytearray) for v in vals):
                    self.add("holds", "stores a list, dict or set it did not make into an "
                                      "object it made with setattr() (a change through that "
                                      "object is followed by the frame translator)")
            return ("new", None)
        if name in ("getattr", "hasattr") and len(site.args) >= 2 and not site.star:
            # getattr(o, name): as o.name (its property, descriptor or
            # __getattr__, with every name when name is not known now)
            names = f.candidates(frame, site.args[1].src)
            names = names if names and all(isinstance(n, str) for n in names) else [None]
            for obj in f.candidates(frame, site.args[0].src):
                for n in names:
                    f.attribute_read(frame, obj, n, site.line, site.code)
        if name in _CONSUMERS:
            self.consumed_iterators(f"{name}()")
        if name in _BUILTIN_DUNDERS:
            self.given_dunders(_BUILTIN_DUNDERS[name])
        if name in _BUILTIN_UNKNOWN:
            return ("unknown", None)
        if name in _BUILTIN_ARGS:
            return ("args", None)
        return ("new", None)


def _decimal_type(cls):
    """Whether cls is decimal.Decimal or a subclass of it (decimal loaded)."""
    dec = sys.modules.get("decimal")
    return dec is not None and issubclass(cls, getattr(dec, "Decimal", ()))


def _index_trick(obj):
    """Whether obj is NumPy's np.r_, np.c_, np.mgrid or np.ogrid (or
    hop.numpy's, their subclasses): an item of one is a new array."""
    if _np is None:
        return False
    tricks = _np.lib.index_tricks
    return isinstance(obj, (tricks.AxisConcatenator, tricks.nd_grid))


def _mutates(obj, name):
    """Whether obj's method name may change obj."""
    if isinstance(obj, _C.Tensor):
        return False
    hnp = loaded_hop_numpy()
    if (_np is not None and isinstance(obj, _np.ndarray)) or \
            (hnp is not None and isinstance(obj, hnp.ndarray)):
        return name in _ARRAY_MUTATORS
    return name in _MUTATORS


# Containers whose `in` compares the needle with their items (a dict's and
# a set's compare only the items of the same hash: all, conservatively)
_COMPARED_ITEMS = (list, tuple, set, frozenset, dict, collections.deque)
_MAX_COMPARED = 256


def _mutable_inplace(v):
    if isinstance(v, (list, dict, set, bytearray, collections.deque)):
        return True
    if _np is not None and isinstance(v, _np.ndarray):
        return True
    hnp = loaded_hop_numpy()
    if hnp is not None and isinstance(v, hnp.ndarray):
        return True
    return False


def _bind(fn, args, kwargs):
    """Parameter name -> value of a call fn(*args, **kwargs) (defaults
    included; *args and **kwargs as a tuple and a dict); what does not bind
    is left out (the call raises as it would eagerly)."""
    code = fn.__code__
    n, k = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames
    values = dict(zip(names[:n], args))
    defaults = fn.__defaults__ or ()
    for name, d in zip(names[n - len(defaults):n], defaults):
        values.setdefault(name, d)
    values.update((name, d) for name, d in (fn.__kwdefaults__ or {}).items())
    at = n + k
    if code.co_flags & inspect.CO_VARARGS:
        values[names[at]] = tuple(args[n:])
        at += 1
    rest = {}
    for name, v in kwargs.items():
        if name in names[:n + k]:
            values[name] = v
        else:
            rest[name] = v
    if code.co_flags & inspect.CO_VARKEYWORDS:
        values[names[at]] = rest
    return values


def _numpy_function(finder, fn, args, kwargs):
    """The Effects of the NumPy function fn called directly on (args,
    kwargs): its own (I/O, global settings), a write into an argument that
    is not an np.ndarray (hop.numpy writes back into those), and the
    effects of the user's functions it is given (apply_along_axis)."""
    name = fn.__name__
    site = f"numpy.{name}"
    if _module_name(fn).startswith("numpy.random") and \
            not (name in _RANDOM_MAKERS and (args or kwargs)):
        return [Effect("random", site, f"calls numpy.random.{name}()")]
    kind = _NP_EFFECTS.get(name)
    if kind is not None:
        return [Effect(kind, site, f"calls numpy.{name}()")]
    written = ([args[0]] if name in _NP_WRITERS and args else []) + \
        ([kwargs["out"]] if "out" in kwargs else [])
    from ._pytree import flatten
    if any(type(x) is not _np.ndarray for w in written for x in flatten(w)[0]):
        return [Effect("mutation", site, f"calls numpy.{name}(), which writes into an "
                                         f"argument that is not a NumPy array")]
    for v in list(args) + list(kwargs.values()):
        v = _unwrap(v)
        if isinstance(v, types.FunctionType) and _is_user(_module_name(v)):
            pre = {n: True for n in v.__code__.co_varnames}
            finder.schedule(v, {}, pre, dict(pre), f" (given to numpy.{name})")
    try:
        while finder.todo:
            finder.run(finder.todo.pop(0))
    except Exception as e:  # a case the resolution misreads: never the call's failure
        return finder.effects + [Effect("bytecode", site, f"hop's effect analysis failed "
                                                          f"({type(e).__name__}: {e}); the "
                                                          f"call runs eagerly")]
    return finder.effects


def find(fn, args=(), kwargs=None, followed=None):
    """The Effects a call fn(*args, **kwargs) may have, in the order met
    (empty: none); followed, a list, is given the Python functions analysed."""
    kwargs = kwargs or {}
    finder = _Finder()
    try:
        return _find(finder, fn, args, kwargs)
    finally:
        if followed is not None:
            followed.extend(finder.followed.values())


def _find(finder, fn, args, kwargs):
    fn = _unwrap(fn)
    bound = _MISSING
    if isinstance(fn, functools.partial):
        args = tuple(fn.args) + tuple(args)
        kwargs = {**fn.keywords, **kwargs}
        fn = _unwrap(fn.func)
    if isinstance(fn, types.MethodType):
        bound, fn = fn.__self__, fn.__func__
    elif not isinstance(fn, types.FunctionType) and callable(fn):
        call = inspect.getattr_static(type(fn), "__call__", None)
        if isinstance(call, types.FunctionType):
            bound, fn = fn, call
    if not isinstance(fn, types.FunctionType):
        name = _module_name(fn)
        if is_hop_module(name) or _is_numpy(name) or _top(name) in _PURE_MODULES or \
                (_np is not None and isinstance(fn, _np.ufunc)) or \
                name == "builtins" and getattr(fn, "__name__", "") not in _BUILTIN_EFFECTS:
            return []
        return [Effect("call", "?", f"{getattr(fn, '__qualname__', type(fn).__name__)} is not "
                                    f"a Python function hop can analyse")]
    if is_hop_module(_module_name(fn)):
        return []  # hop's own code (a transformation's call): its bodies are bodies
    if bound is _MISSING and _is_numpy(_module_name(fn)):
        # a NumPy function compiled itself (hop.compile(np.polyadd)): NumPy's
        # rules by its name, as for a call in the user's code (numpy_call),
        # not its __array_function__ wrapper's bytecode (whose star call to
        # the dispatcher would be a write hop cannot see through)
        return _numpy_function(finder, fn, args, kwargs)
    values = _bind(fn, ((bound,) if bound is not _MISSING else ()) + tuple(args), kwargs)
    if _np is not None:
        from ._pytree import flatten
        finder.array_args = {id(x) for x in flatten((tuple(args), kwargs))[0]
                             if type(x) is _np.ndarray}
    pre = {n: True for n in fn.__code__.co_varnames}
    finder.schedule(fn, values, pre, dict(pre), "")
    try:
        while finder.todo:
            finder.run(finder.todo.pop(0))
    except Exception as e:  # a case the resolution misreads: never the call's failure
        return finder.effects + [Effect("bytecode", _site(fn.__code__,
                                                          fn.__code__.co_firstlineno),
                                        f"hop's effect analysis failed ({type(e).__name__}: "
                                        f"{e}); the call runs eagerly")]
    return finder.effects
