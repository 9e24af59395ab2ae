"""What a library object may hold of the caller's state: the holder rule of
hop.compile's effect finder (hop/_effects.py; issue 28, docs/ARCHITECTURE.md
"Changes through an object that holds a caller's container").

Whose code a callable is (the user's, the standard library's, NumPy's,
hop's) decides how the finder treats a call of it: the user's code is
analysed where it is called; a library's is classified by tables.  What a
library callable keeps of its arguments is not in any table, so:

  * a library call given a list, dict or set of the caller's may build an
    object holding it (`functools.partial(f, G)`, `itertools.chain([G])`):
    a change through that object is one the bytecode cannot follow back to
    G (library_holder, _builds_holder);
  * a callable a library made (functools.partial, operator.methodcaller,
    attrgetter, itemgetter) runs code the finder does not read when it is
    called: given or holding the caller's state, it may change or read it
    (`functools.partial(list.append, G)(1)`, `methodcaller("append", 1)(G)`:
    library_callable, made_callable), and so may a library call given a
    bound method that changes a container of the caller's (`map(G.append,
    xs)`, `sorted(xs, key=G.append)`: mutator_callbacks);
  * a function made in place whose result is the caller's state hands it to
    the library that calls it (`next(iter(lambda: G, None))`: returns_pre).

Each is the kind "holds": not an effect to replay, but a call the frame
translator compiles (hop/_frame_library.py: it translates the call such an
object makes, and watches what else library code can reach), never a plain
trace, which would change or read the state once, while tracing.
"""

import collections
import functools
import operator
import sys
import types
import weakref

from ._effect_tables import _KEEPS_NOTHING, _KEEPS_NOTHING_MODULES, _MUTATORS
from ._reads import is_hop_module

__all__ = ["DEATH_CALLBACKS", "death_callback"]


def _module_name(v):
    if isinstance(v, types.FunctionType):
        return v.__globals__.get("__name__") or ""
    m = getattr(v, "__module__", None)
    if isinstance(m, str):
        return m
    s = getattr(v, "__self__", None)
    if isinstance(s, types.ModuleType):
        return s.__name__
    return ""


def _top(name):
    return name.partition(".")[0]


def _is_numpy(name):
    return name == "numpy" or name.startswith("numpy.")


def _is_stdlib(name):
    top = _top(name)
    return top in sys.stdlib_module_names or top == "builtins"


# Test frameworks' helpers (pytest's rewritten asserts): not analysed.
_TEST_PACKAGES = frozenset(["hypothesis", "pytest", "_pytest"])
# Module name -> whether it is the user's, and whether it is hop's: the
# finder asks both of every callable and class it meets, a few thousand times
# a call (the fiftieth session: about 8% of a find's bytecodes).
_USER_NAMES = {}
_HOP_NAMES = {}


def _is_user(name):
    got = _USER_NAMES.get(name) if type(name) is str else None
    if got is None:
        got = not (is_hop_module(name) or _is_numpy(name) or _is_stdlib(name) or
                   _top(name) in _TEST_PACKAGES or _top(name) == "torch")
        if type(name) is str:
            _USER_NAMES[name] = got
    return got


def _is_hop_name(name):
    got = _HOP_NAMES.get(name) if type(name) is str else None
    if got is None:
        got = is_hop_module(name)
        if type(name) is str:
            _HOP_NAMES[name] = got
    return got


def _is_hop_object(v):
    return _is_hop_name(getattr(type(v), "__module__", "") or "")


# What a change through a library-built holder can reach (_Calls.library_holder)
_HELD = (list, dict, set, bytearray, collections.deque)
# Methods that store their arguments into their receiver (a queue's put, a
# ContextVar's set among them)
_HOLDING_METHODS = frozenset("append extend insert add update setdefault __setitem__ "
                             "__setattr__ appendleft extendleft put put_nowait set".split())
# Builtins whose result holds their arguments (or their items)
_HOLDER_BUILDERS = frozenset([dict, list, tuple, set, frozenset, zip, enumerate, reversed, iter,
                              map, filter, sorted, types.SimpleNamespace, collections.deque,
                              collections.OrderedDict, collections.defaultdict,
                              collections.ChainMap, collections.Counter])
def _builds_holder(v):
    """Whether calling v may store its arguments in an object it returns or
    is given.  The general rule: any callable of a library (the standard
    library's, a C extension's, any module not the user's, whose code the
    finder does not read) may, since what it keeps of its arguments is not
    known (functools.partial, itertools' iterators, weakref's and queue's
    containers, types.MappingProxyType, staticmethod, heapq.heappush into a
    new list...); except the builtins and modules known to return numbers,
    strings or new arrays (_KEEPS_NOTHING, _KEEPS_NOTHING_MODULES, hop and
    NumPy), and a C method of a builtin type called unbound, which holds
    only when it is one of _HOLDING_METHODS (`list.append(box, G)`,
    `object.__setattr__`).  A user's function or class is not: its code is
    analysed where it is called."""
    try:
        if v in _HOLDER_BUILDERS:
            return True
        if v in _KEEPS_NOTHING:
            return False
    except TypeError:  # (unhashable)
        return False
    if isinstance(v, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return getattr(v, "__name__", None) in _HOLDING_METHODS
    if not callable(v) or _is_hop_object(v):
        return False
    name = _module_name(v) if not isinstance(v, type) else v.__module__
    if not isinstance(name, str) or _is_user(name) or _is_numpy(name) or is_hop_module(name):
        return False
    return _top(name) not in _KEEPS_NOTHING_MODULES


class _Holders:
    """_effects._Calls' holder rules (a mixin: self.f is the _Finder,
    self.frame and self.site the call being classified)."""

    def library_holder(self):
        """A library call that builds an object holding its arguments or
        stores them into one (`dict(k=G)`, `list((G,))`, `zip([G], ...)`,
        `list.append(box, G)`, `object.__setattr__(box, n, G)`,
        `b.__dict__.update(l=G)`) given a list, dict or set of the caller's:
        a change through what it built (`inner['k'].append(1)`) is one the
        analysis cannot follow back to G, so the frame translator, which
        follows real objects, compiles the call ("holds", as a store into
        an object the call made).  Before, the plain trace changed G once,
        while tracing (campaign 41)."""
        f, frame, site = self.f, self.frame, self.site
        callee = site.callee
        if callee.method is not None:
            if callee.method not in _HOLDING_METHODS:
                return
            # (list.append(box, G): the method of a class, its receiver an
            # argument; else a change of a receiver of the caller's is a
            # mutation, found as one)
            cls = f.candidates(frame, site.receiver.src)
            if not (cls and all(isinstance(c, type) for c in cls)) and self.pre(site.receiver):
                return
        elif not any(_builds_holder(v) for v in f.candidates(frame, callee.src)):
            return
        for v in list(site.args) + list(site.kwargs):
            if f.is_pre(frame, v.prov | v.reach) and self.holds_container(v):
                self.add("holds", "passes a list, dict or set it did not make to a call that "
                                  "stores it in an object (a change through that object is "
                                  "followed by the frame translator)")
                return

    def holds_container(self, v):
        """Whether v may be, or be a new object holding (`(G,)`, `[G]`), a
        list, dict, set or bytearray of the caller's that hop can name."""
        f, frame = self.f, self.frame
        vals = f.candidates(frame, v.src) if v.src is not None else \
            [x for r in v.prov | v.reach if r[0] in ("g", "c", "p")
             for x in f.candidates(frame, r)]
        return any(type(x) in _HELD for x in vals)

    def holds_state(self, v):
        """Whether the value v (a _V) may be, or hold, state of the caller's
        a library callable could change: a list, dict, set, a user object, a
        method that changes one (_stateful); unknown values that may be the
        caller's count."""
        f, frame = self.f, self.frame
        code = getattr(v, "code", None)
        if not f.is_pre(frame, v.prov | v.reach) and \
                not (code is not None and f.returns_pre(frame, code)):
            return False
        vals = f.candidates(frame, v.src) if v.src is not None else []
        if not vals:
            vals = [x for r in v.prov | v.reach if r[0] in ("g", "c", "p")
                    for x in f.candidates(frame, r)]
        return not vals or any(_stateful(x) for x in vals)

    def library_callable(self, v):
        """A call of a library callable object (functools.partial of a
        library function, operator.methodcaller, attrgetter, itemgetter):
        what it calls or reads is not the user's code, which the finder
        reads, so a call holding or given the caller's state is "holds"
        (the frame translator translates the call the object makes)."""
        site = self.site
        if type(v) is functools.partial:
            held = [v.func, *v.args, *v.keywords.values()]
        else:
            try:
                held = list(v.__reduce__()[1])
            except Exception:  # (a subclass's own reduce)
                held = [None]
        given = list(site.args) + list(site.kwargs)
        if site.star or any(_stateful(h) for h in held) or \
                any(self.holds_state(a) for a in given):
            self.add("holds", f"calls a {type(v).__qualname__} object holding or given state "
                              f"it did not make, which runs library code on it (the frame "
                              f"translator follows the call it makes)")

    def made_callable(self, callee):
        """A call of a callable a library call made here
        (`functools.partial(list.append, G)(1)`,
        `operator.methodcaller("append", 1)(G)`): library_callable's rule
        with the maker's arguments as what it holds."""
        f, frame, site = self.f, self.frame, self.site
        given = list(site.args) + list(site.kwargs)
        for r in callee.prov:
            maker = f.code_site(frame, r)
            if maker is None:
                continue
            makers = f.candidates(frame, maker.callee.src)
            if not any(_builds_holder(m) for m in makers):
                continue
            held = list(maker.args) + list(maker.kwargs)
            if site.star or maker.star or any(self.holds_state(a) for a in held + given):
                name = "/".join(sorted({getattr(m, "__qualname__", "?") for m in makers}))
                self.add("holds", f"calls what {name}() made at line {maker.line}, holding or "
                                  f"given state it did not make, which runs library code on it "
                                  f"(the frame translator follows the call it makes)")
                return

    def held_callee(self, callee):
        """A call of a callable taken out of an object the function made
        (`ms = [G.append]; ms[0](1)`): what that object holds may be a
        method of the caller's state."""
        if self.f.is_pre(self.frame, callee.reach):
            self.add("holds", "calls a callable taken from an object it made that holds state "
                              "it did not make (the frame translator follows the call)")

    def mutator_callbacks(self):
        """A method that changes the caller's state (`G.append`, a partial
        holding one) passed to a call, which may call it (`map(G.append,
        xs)`, `sorted(xs, key=G.append)`, `weakref.finalize(o, G.append)`).
        A callee that is the user's own function is analysed with what it
        is given (`_LAYERS[k](self, ...)`): what it calls is seen there."""
        f, frame, callee = self.f, self.frame, self.site.callee
        if callee.code is not None or (callee.method is None and _user_functions(
                f.candidates(frame, callee.src))):
            return
        for v in list(self.site.args) + list(self.site.kwargs):
            if v.code is not None or not f.is_pre(frame, v.prov | v.reach):
                continue
            for c in f.candidates(frame, v.src):
                if callable(c) and not isinstance(c, (type, types.FunctionType)) and \
                        _stateful(c):
                    self.add("holds", f"passes {f.describe(frame, v)}, which may change state "
                                      f"it did not make, to a call that may call it (the frame "
                                      f"translator follows it, or the call runs eagerly)")
                    return

    def getter_reads(self, getter):
        """An operator.attrgetter, itemgetter or methodcaller passed to a
        call that may apply it to what its other arguments hold
        (`sum(map(attrgetter("v"), ps))`, `sorted(ps, key=attrgetter("v"))`,
        `max(a, b, key=itemgetter(0))`): its reads of those objects run the
        user's code as `o.v`, `o[k]`, `o.m()` would (a property's getter, a
        descriptor, __getitem__, a method).  Before, not followed: a
        property that logs ran once, while tracing."""
        f, frame, site, line = self.f, self.frame, self.site, self.site.line
        try:
            r = getter.__reduce__()
            held = tuple(r[0].args) if isinstance(r[0], functools.partial) else tuple(r[1])
        except Exception:  # (a subclass's own reduce)
            held = (None,)
        for v in list(site.args) + list(site.kwargs):
            for c in f.candidates(frame, v.src):
                if c is getter:
                    continue
                items = [c]
                if type(c) in (list, tuple, set, frozenset, dict, collections.deque):
                    if len(c) > _MAX_HELD:
                        self.add("holds", f"passes a {type(getter).__qualname__} object and "
                                          f"a {type(c).__name__} of {len(c)} items to a call "
                                          f"that may apply one to the other")
                        return
                    items += list(c)
                for o in items:
                    if type(getter) is operator.itemgetter:
                        f.dunders(frame, o, ("__getitem__",), line, site.code)
                        continue
                    for name in held[:1] if type(getter) is operator.methodcaller else held:
                        self.getter_path(o, name, type(getter) is operator.methodcaller)

    def getter_path(self, o, name, call):
        """The reads of `attrgetter(name)(o)` (name dotted: each step) or,
        call, the method `methodcaller(name)(o)` runs."""
        f, frame, site = self.f, self.frame, self.site
        if not isinstance(name, str):
            self.add("holds", "passes a getter of a name hop cannot read to a call")
            return
        steps = name.split(".")
        for k, step in enumerate(steps):
            f.attribute_read(frame, o, step, site.line, site.code)
            nxt = _static_value(o, step)
            if nxt is _NOTHING:
                return
            if call and k == len(steps) - 1:
                if isinstance(nxt, types.FunctionType) and _is_user(_module_name(nxt)):
                    if step in (getattr(o, "__dict__", None) or {}):  # (not bound)
                        f.call_user(nxt, frame, None, unknown_args=True)
                    else:
                        f.call_user(nxt, frame, None, bound=o, unknown_args=True)
                return
            if hasattr(type(nxt), "__get__") and not isinstance(nxt, types.FunctionType):
                return  # (a descriptor's value: known when it runs; attribute_read ran it)
            o = nxt

    def own_iterator(self, v):
        """Whether v is an iterator this call made: iter(f, sentinel) of a
        function made here (`iter(lambda: G, None)`), or a generator of a
        generator function of the user's (`next(gen())`): what it yields
        may be the caller's (returns_pre; the generator's code is analysed
        where it is called), but advancing it is no effect."""
        f, frame = self.f, self.frame
        if not v.prov or v.src is not None:
            return False
        for r in v.prov:
            maker = f.code_site(frame, r)
            makers = f.candidates(frame, maker.callee.src) if maker is not None else []
            if maker is None or not makers:
                return False
            if all(isinstance(c, types.FunctionType) and _is_user(_module_name(c)) and
                   c.__code__.co_flags & _CO_GENERATOR for c in makers):
                continue
            if len(maker.args) != 2 or maker.kwargs or maker.star or \
                    maker.args[0].code is None or not all(c is iter for c in makers):
                return False
        return True

    def death_callbacks(self):
        """weakref.finalize(o, f) and a weak reference with a callback:
        eager registers one on every call, run when the object dies; a plan
        would have registered one, while tracing ("call": the call runs
        eagerly)."""
        site = self.site
        for c in self.f.candidates(self.frame, site.callee.src):
            if death_callback(c, len(site.args) + len(site.kwargs) + 2 * site.star):
                self.add("call", f"registers a callback run when an object dies "
                                 f"({DEATH_CALLBACKS[c]}), which eager registers on every call")
                return


_CO_GENERATOR = 0x20  # inspect.CO_GENERATOR
# What registers a callback run when an object dies (with a second argument,
# but for finalize)
DEATH_CALLBACKS = {weakref.finalize: "weakref.finalize", weakref.ref: "weakref.ref",
                   weakref.proxy: "weakref.proxy", weakref.WeakMethod: "weakref.WeakMethod"}


_MAX_HELD = 64  # items getter_reads follows; beyond, "holds" (the translator follows)
_NOTHING = object()


def _static_value(o, name):
    """o.name found without running code (an instance's __dict__, then its
    class's attribute: a method as the function), or _NOTHING."""
    d = getattr(o, "__dict__", None)
    if isinstance(d, dict) and name in d:
        return d[name]
    for klass in type(o).__mro__:
        if name in vars(klass):
            a = vars(klass)[name]
            return a.__func__ if isinstance(a, (staticmethod, classmethod)) else a
    return _NOTHING


def death_callback(c, nargs):
    """Whether c called with nargs arguments registers a callback run when
    an object dies (eager: one per call; a plan: one, while tracing)."""
    try:
        return c in DEATH_CALLBACKS and (c is weakref.finalize or nargs >= 2)
    except TypeError:  # (unhashable)
        return False

# Functions of the builtins and operator that change their first argument
# or an attribute of it
_ARG_CHANGERS = frozenset([setattr, delattr, operator.setitem, operator.delitem,
                           operator.iadd, operator.iconcat, operator.isub, operator.imul,
                           operator.ior, operator.iand, operator.ixor])


def _user_functions(vals):
    """Whether vals (a callee's candidates) are all Python functions of the
    user's, which the effect finder follows."""
    return bool(vals) and all(isinstance(v, types.FunctionType) and _is_user(_module_name(v))
                              for v in vals)


def _stateful(x, depth=0):
    """Whether x is, holds, or changes what it is given of, state a library
    callable could change: a list, dict, set, bytearray or deque, an object
    with attributes (not a module, class, function, hop's or NumPy's), a
    bound method of one, a C method of a container called unbound
    (`list.append`), setattr or operator.setitem, a partial holding one."""
    if depth > 3:
        return True
    if isinstance(x, _HELD):
        return True
    if isinstance(x, (tuple, list, frozenset)):
        return any(_stateful(y, depth + 1) for y in tuple(x)[:64])
    t = type(x)
    if t is functools.partial:
        return any(_stateful(y, depth + 1) for y in (x.func, *x.args, *x.keywords.values()))
    if t in (types.MethodDescriptorType, types.WrapperDescriptorType):
        return x.__name__ in _MUTATORS
    if t in (types.BuiltinMethodType, types.MethodType):
        s = x.__self__
        if isinstance(s, types.ModuleType) or s is None:
            try:
                return x in _ARG_CHANGERS
            except TypeError:
                return False
        return _stateful(s, depth + 1)
    if isinstance(x, (types.ModuleType, type, types.FunctionType)) or _is_hop_object(x) or \
            _is_numpy(getattr(t, "__module__", "") or ""):
        return False
    return isinstance(getattr(x, "__dict__", None), dict)
