"""Keeping HOP bodies pure while they are traced.

A body is traced once and its graph runs many times, so it must not change
Python state outside itself: rebinding a nonlocal or global, mutating an outer
list, dict, set, deque or object attribute (at any depth), writing into an
outer NumPy array, or storing a traced value there (which would let it escape
its body).  `run_pure` runs a body and, on any such change, restores the outer
state and raises hop.TraceError naming the HOP.

What it costs must not grow with the user's data.  So it does not copy
everything a body can reach: it reads the body's bytecode once (cached per
code object) to find which outer names the body may mutate, and how:

  - a write through the name: `v[k] = ...`, `v.a = ...`, `del v[k]`, `v += ...`
    (on `v` or on anything reached from it, `v.items[0].append(...)`), a method
    call other than a known read-only one (`v.append`, `v.sort`, `v.fill`), or
    `v` passed to a function that is not known to leave its arguments alone
    (builtins such as len and sorted, hop's functions and NumPy's are known;
    a NumPy ufunc or function given `out=` is not);
  - a use as data (arithmetic, an argument of a hop function): hop may then
    wrap a NumPy array's memory without a copy, so the array cannot be made
    read-only.

Every global and nonlocal the body names is checked for rebinding (O(1) each).
Only the names the body may write get a snapshot: containers and object
attributes (recursively, up to _SNAPSHOT_BUDGET elements) by identity of
their items, compared after the body and restored on a change; a NumPy array
is made read-only for the body (O(1); a write raises and is reported), or,
when the body also uses it as data, its contents are compared.  The same
applies to the functions of the body's module (and closures) that it reaches.

What it cannot see is documented in docs/ARCHITECTURE.md (Python section).
The reading of the bytecode is _code_effects.py's; this module owns what a
body's check does with it (the verdict per root, the snapshot, run_pure)
and the effect search of hop.compile's bodies (print, a functools cache).
"""

import builtins
import dis
import functools
import os
import sys
import types
import weakref
from collections import deque

from . import _C
from . import _breaks
from ._code_effects import ALL, DATA, WRITE, _READ_METHODS, _effects
from ._reads import MISSING as _MISSING, Policy, Walk, is_hop_function, is_hop_module
from ._reads import class_attr, is_user_module
from ._reads import _names_cache
from ._reads import code_names  # noqa: F401  (_frame_state imports it from here)

try:
    import numpy as _np
except ImportError:  # NumPy is optional at run time
    _np = None

__all__ = ["run_pure", "body_effects", "body_env_arrays"]

_A_METHOD = object()  # the callee of a call of a value's method (_C._pure_callees)

# The snapshot of what a body may mutate covers at most this many elements;
# beyond it a structure is checked by its length only (documented).
_SNAPSHOT_BUDGET = 1_000_000


# Builtins that do not mutate their arguments.
_PURE_BUILTINS = frozenset(getattr(builtins, n) for n in """
    len isinstance issubclass type id hash repr str int float bool complex abs min max sum
    any all sorted tuple list dict set frozenset range enumerate zip reversed iter print
    round divmod pow format hasattr getattr callable ord chr bytes ascii bin hex oct
""".split())

# NumPy functions that write into an argument.
_NP_WRITERS = frozenset("copyto put place putmask fill_diagonal put_along_axis shuffle "
                        "random.shuffle".split())


def _call_summary(call, fn, callee):
    """[(taint, flags)] that one recorded call (calling callee, from
    _C._pure_callees) means for fn's outer names."""
    kind, path, npos, kw, arg_taint, head_taint, unknown_kw, _ = call
    if callee is _A_METHOD:
        if path[-1] in _READ_METHODS:
            return []
        return [(head_taint, WRITE), (arg_taint, ALL)]
    out = [(arg_taint, _call_flags(callee, npos, kw, unknown_kw))]
    bound = getattr(callee, "__self__", None)
    if kind == "f" and bound is not None and not isinstance(bound, (types.ModuleType, type)) \
            and getattr(callee, "__name__", "") not in _READ_METHODS:
        out.append((head_taint, WRITE))  # push = outer_list.append; push(x)
    return out


_HOP_ENTRIES = []


def _hop_entries():
    """id -> the positions of its bodies, for the HOP functions that trace
    each body under run_pure: hop.cond, hop.wrap, ... (hop._hops, imported
    after this module).  switch's position holds its list of branches."""
    if not _HOP_ENTRIES:
        from . import _hops as h
        _HOP_ENTRIES.append({id(f): pos for f, pos in (
            (h.cond, (1, 2)), (h.switch, (1,)), (h.map, (0,)), (h.wrap, (0,)),
            (h.invoke_subgraph, (0,)), (h.while_loop, (0, 1)), (h.fori_loop, (2,)),
            (h.scan, (0,)), (h.associative_scan, (0,)))})
    return _HOP_ENTRIES[0]


def _call_flags(callee, npos, kwnames, unknown_kw):
    """What a call may do to its arguments."""
    try:
        if callee in _PURE_BUILTINS:
            return 0
    except TypeError:  # unhashable callee
        pass
    module = getattr(callee, "__module__", None) or ""
    if is_hop_module(module):
        return DATA
    if _np is not None:
        if isinstance(callee, _np.ufunc):
            return ALL if npos > callee.nin or "out" in kwnames or unknown_kw else 0
        if module == "numpy" or module.startswith("numpy."):
            name = getattr(callee, "__name__", "")
            if name in _NP_WRITERS or "out" in kwnames or unknown_kw:
                return ALL
            return 0
    return ALL


def _verdict(eff, fn):
    """The roots of fn, whose code's reading is eff: {"cell": {name: (flags,
    body)}, "global": {name: (flags, body)}} for its free variables and the
    names of eff.names, flags what the body may do to that outer name (its
    own flags and its calls' summaries), body whether it only hands the name
    to HOPs as a body (see _Check.root).

    They depend only on the code and on the objects its calls resolve to, so
    the last verdict is kept on eff with those callees (strong references,
    one set per code object) and reused while every callee resolves to the
    same object: a nested body is traced on every level and this loop was
    most of its check (issue #30).  The callees are resolved on every call,
    so a rebound global or cell, or a module attribute replaced, is a
    different object and is read again: a verdict is never stale."""
    calls = eff.call_list
    # (in C: purity.c; a nested body resolves its callees on every level)
    callees = _C._pure_callees(fn, eff.call_paths, builtins, _MISSING, _A_METHOD)
    memo = eff.verdict
    if memo is not None:
        # (inline, no frame per callee: each level of a nest runs this)
        for (weak, x), c in zip(memo[0], callees):
            if weak:
                x = x()
                if x is None:  # freed: never the same as a live callee (or None)
                    break
            if x is not c:
                break
        else:
            return memo[1]
    flags = dict(eff.flags)
    hops = _hop_entries()
    bodies, elsewhere = set(), set()
    for call, callee in zip(calls, callees):
        for taint, f in _call_summary(call, fn, callee):
            if f:
                for t in taint:
                    flags[t] = flags.get(t, 0) | f
        positions = hops.get(id(callee))
        if positions is not None and not call[6]:
            positional = call[7]
            for i, taint in enumerate(positional):
                if i in positions:
                    bodies |= taint
                else:
                    elsewhere |= taint
            if call[3] or len(positional) != call[2]:  # keyword arguments
                elsewhere |= call[4]
            elsewhere |= call[5]
        else:
            elsewhere |= call[4] | call[5]
    # A function the body only hands to HOPs as a body (in a body's position:
    # never calls it, passes it elsewhere, as an operand or by keyword, or
    # writes it) runs under its own run_pure when the HOP traces it; scanning
    # it here too made nested bodies cost O(depth) each (issue #30).
    bodies = frozenset(t for t in bodies - elsewhere if not eff.flags.get(t, 0) & WRITE)
    # Per root, by kind and name as _reads.roots gives them (made once per
    # verdict: a nested level's scan read two dicts per root, issue #30).
    roots = {"cell": {n: (flags.get(("c", n), 0), ("c", n) in bodies)
                      for n in fn.__code__.co_freevars},
             "global": {n: (flags.get(("g", n), 0), ("g", n) in bodies) for n in eff.names}}
    # plain: no root may be written, so the check of a call records no
    # snapshot, only what each name holds (run_pure's short path).
    plain = roots["plain"] = not builtins.any(f & WRITE for kind in ("cell", "global")
                                              for f, _ in roots[kind].values())
    held = tuple(map(_hold, callees))
    eff.verdict = (held, roots)
    # What _C._pure_roots needs to read such a call's roots and to tell
    # whether its callees are still the verdict's (purity.c).
    free = fn.__code__.co_freevars
    eff.plain = (eff.names, free, tuple(roots["cell"][n][1] for n in free),
                 tuple(roots["global"][n][1] for n in eff.names),
                 eff.call_paths, held, builtins, _MISSING,
                 _A_METHOD) if plain else None
    return roots


def _hold(obj):
    """What a verdict keeps of a callee: (True, a weak reference) when the
    object takes one (the cache must not keep a user's function alive, with
    what it closes over), else (False, the object: a builtin, a sentinel).
    A weak reference to a freed object gives None, never a live callee."""
    try:
        return True, weakref.ref(obj)
    except TypeError:
        return False, obj


# ------------------------------------------------------------- the snapshot

class _Check(Walk, Policy):
    """The outer state a body may change, captured before it runs: the
    policy of _reads' depth-first walk.  Every closure cell (empty ones
    too) and defined global a walked function names is recorded for
    rebinding; those it may write are snapshot (_snap); a function of the
    body's module (or a closure) that it may call is walked where it is met,
    since it mutates the same state, unless the body only hands it to HOPs
    as a body (it then runs under its own run_pure).  A function of hop's
    own (nested_compile_region's wrapper) is read through its cells only:
    hop's globals are caches and registries a first call fills, not state a
    body may change."""

    empty_cells = True
    hop_cells = True

    def __init__(self, known=None):
        self.known = known    # (fn, its verdict) when run_pure has it: not resolved twice
        self.cells = []       # (name, cell, value)
        self.globals = []     # (name, dict, value)
        self.containers = []  # (path, obj, saved)
        self.objects = []     # (path, obj, saved __dict__)
        self.slots = []       # (path, obj, saved {slot: value})
        self.arrays = []      # (path, array, saved copy)
        self.locked = []      # (path, array) made read-only for the body
        self.lengths = []     # (path, obj, len) past the budget
        self.budget = _SNAPSHOT_BUDGET
        self._seen = set()
        # The check is its own walk's state, keeping no list of the
        # functions walked: a nest keeps one check per level alive while its
        # inner bodies trace, and each object more is garbage collector work
        # that grows with the depth.
        Walk.__init__(self, keep=False)

    def scan(self, fn):
        """Records what fn (and each function it may call: visit) may
        change."""
        self.depth_first(fn, self)

    def visit(self, walk, fn, roots, depth, names):
        eff = names.effects or _effects(fn.__code__)
        if eff.unknown:  # anything may happen to every root
            v = eff.worst
            if v is None:
                v = eff.worst = {"cell": dict.fromkeys(fn.__code__.co_freevars, (ALL, False)),
                                 "global": dict.fromkeys(eff.names, (ALL, False))}
        elif self.known is not None and self.known[0] is fn:
            v = self.known[1]
        else:
            v = _verdict(eff, fn)
        for kind, name, holder, value in roots:
            flag, body = v[kind][name]
            (self.cells if kind == "cell" else self.globals).append((name, holder, value))
            # A function of the body's module (or a closure) that the body
            # may call mutates the same state: check what it reaches too
            # (unless it is only a HOP's body: see _verdict); a hop.compile
            # of one runs it inside the trace.
            callee = _compiled_fn(value)
            if isinstance(callee, types.FunctionType) and not body and (
                    callee.__globals__ is fn.__globals__ or name in fn.__code__.co_freevars):
                self.scan(callee)
            if flag & WRITE and value is not _MISSING:
                self._snap(name, value, flag)

    def _snap(self, path, value, flag):
        """Records value and what it holds (recursively) for comparison."""
        stack = [(path, value)]
        while stack:
            path, v = stack.pop()
            if id(v) in self._seen or isinstance(v, _ATOMS):
                continue
            self._seen.add(id(v))
            t = type(v)
            if _np is not None and isinstance(v, _np.ndarray):
                self._array(path, v, flag)
                continue
            if isinstance(v, (list, deque, bytearray, dict, set)):
                n = len(v)
                if n > self.budget:
                    self.lengths.append((path, v, n))
                    continue
                self.budget -= n
                if isinstance(v, dict):
                    saved = dict(v)
                    self.containers.append((path, v, saved))
                    stack.extend((f"{path}[{k!r}]", x) for k, x in saved.items())
                else:
                    saved = v.copy() if not isinstance(v, (list, deque)) else list(v)
                    self.containers.append((path, v, saved))
                    if not isinstance(v, (bytearray,)):
                        stack.extend((f"{path}[{i}]" if t is not set else f"{path} element", x)
                                     for i, x in enumerate(saved))
                continue
            if t is tuple or t is frozenset:
                self.budget -= len(v)
                stack.extend((f"{path}[{i}]", x) for i, x in enumerate(v))
                continue
            if t is types.FunctionType and v.__dict__:
                # (a function's own attributes, `f.runs += 1` in f: state
                # outside the body as an object's)
                saved = dict(v.__dict__)
                self.budget -= len(saved)
                self.objects.append((path, v, saved))
                stack.extend((f"{path}.{k}", x) for k, x in saved.items())
                continue
            if isinstance(v, _OPAQUE):
                bound = getattr(v, "__self__", None)  # a bound method writes its object
                if bound is not None and not isinstance(bound, (types.ModuleType, type)):
                    stack.append((f"{path}.__self__", bound))
                continue
            d = getattr(v, "__dict__", None)
            if isinstance(d, dict):
                saved = dict(d)
                self.budget -= len(saved)
                self.objects.append((path, v, saved))
                stack.extend((f"{path}.{k}", x) for k, x in saved.items())
            slots = [s for c in type(v).__mro__ for s in getattr(c, "__slots__", ())
                     if isinstance(s, str) and s not in ("__dict__", "__weakref__")]
            if slots:
                saved = {s: getattr(v, s, _MISSING) for s in slots}
                self.slots.append((path, v, saved))
                stack.extend((f"{path}.{k}", x) for k, x in saved.items() if x is not _MISSING)

    def _array(self, path, a, flag):
        if not a.flags.writeable:
            return  # read-only already: a write raises as it would eagerly
        if flag & DATA:
            # Used as data too: hop would wrap a read-only array by copying,
            # so compare its contents instead.
            self.budget -= a.size
            self.arrays.append((path, a, a.copy()))
        else:
            a.flags.writeable = False
            self.locked.append((path, a))

    def unlock(self):
        for _, a in self.locked:
            try:
                a.flags.writeable = True
            except ValueError:  # its base became read-only meanwhile
                pass

    def changes(self):
        """What changed, as text, or None."""
        what = _rebound(self.cells, self.globals)
        if what is not None:
            return what
        for path, obj, saved in self.containers:
            if not _same(obj, saved):
                return f"it mutates {path!r} (a {type(obj).__name__} defined outside the body)"
        for path, obj, saved in self.objects:
            if not _same(obj.__dict__, saved):
                return f"it sets an attribute of {path!r} (an object defined outside the body)"
        for path, obj, saved in self.slots:
            if any(getattr(obj, k, _MISSING) is not v for k, v in saved.items()):
                return f"it sets an attribute of {path!r} (an object defined outside the body)"
        for path, a, saved in self.arrays:
            if a.shape != saved.shape or a.dtype != saved.dtype or \
                    a.tobytes() != saved.tobytes():
                return f"it writes into {path!r} (a NumPy array defined outside the body)"
        for path, obj, n in self.lengths:
            if len(obj) != n:
                return f"it mutates {path!r} (a {type(obj).__name__} defined outside the body)"
        return None

    def restore(self):
        _rebind(self.cells, self.globals)
        for path, obj, saved in self.containers:
            if isinstance(obj, (dict, set, deque)):
                obj.clear()
                obj.update(saved) if not isinstance(obj, deque) else obj.extend(saved)
            else:
                obj[:] = saved
        for path, obj, saved in self.objects:
            obj.__dict__.clear()
            obj.__dict__.update(saved)
        for path, obj, saved in self.slots:
            for k, v in saved.items():
                if v is _MISSING:
                    try:
                        delattr(obj, k)
                    except AttributeError:
                        pass
                else:
                    setattr(obj, k, v)
        for path, a, saved in self.arrays:
            if a.shape == saved.shape:
                _np.copyto(a, saved)


def _rebound(cells, globs):
    """Which of the recorded cells ((name, cell, value)) and globals ((name,
    globals dict, value)) holds another object now, as text, or None."""
    for name, cell, value in cells:
        try:
            now = cell.cell_contents
        except ValueError:
            now = _MISSING
        if now is not value:
            return f"it rebinds the nonlocal variable {name!r}"
    for name, g, value in globs:
        if g.get(name, _MISSING) is not value:
            return f"it rebinds the global variable {name!r}"
    return None


def _rebind(cells, globs):
    """Puts back what the recorded cells and globals held (_rebound)."""
    for name, cell, value in cells:
        if value is _MISSING:
            try:
                del cell.cell_contents
            except ValueError:
                pass
        else:
            cell.cell_contents = value
    for name, g, value in globs:
        g[name] = value


_ATOMS = (str, bytes, int, float, complex, bool, type(None), range, slice)
_OPAQUE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type,
           types.MethodType, types.CodeType, _C.Tensor, _C.SymInt)


def _same(obj, saved):
    if isinstance(obj, (list, deque)):
        return len(obj) == len(saved) and all(map(_is, obj, saved))
    if isinstance(obj, dict):
        items = tuple(obj.items())  # one C call: another thread may change obj meanwhile
        return len(items) == len(saved) and all(k in saved and x is saved[k] for k, x in items)
    return obj == saved


def _is(a, b):
    return a is b


def _outer_array_write(exc, check):
    """The outer arrays exc says the body wrote into, or None: NumPy
    refusing a write into an array run_pure locked (read-only), or a store
    of a traced value into an array the body may write (`w[0] = x[0]`:
    NumPy converts the value first, and its ValueError's cause is hop's
    TraceError, so the write neither happens nor shows in the snapshot)."""
    if not isinstance(exc, ValueError):
        return None
    if check.locked and "read-only" in str(exc):
        return [p for p, _ in check.locked]
    paths = [p for p, _ in check.locked] + [p for p, _, _ in check.arrays]
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if not paths or not isinstance(exc.__cause__ or exc.__context__, _C.TraceError) or \
            tb is None or tb.tb_frame.f_code.co_code[tb.tb_lasti] != _STORE_SUBSCR:
        return None
    return paths


_STORE_SUBSCR = dis.opmap["STORE_SUBSCR"]


def _reads_no_global(fn, code):
    """Whether fn's code (nested functions included) reads none of its
    module's globals (a builtin it calls is not one)."""
    names = _effects(code).names
    if not names:
        return True
    g = getattr(fn, "__globals__", None) or {}
    return not any(name in g for name in names)


def body_effects(hop_name, bodies, tr=None):
    """A HOP call of a hop.compile'd function's own code whose body may
    print, or call a functools cache (itself or a user function it names:
    _effect_site), is a break at that call (_breaks.body_effect): its plan
    would print, or count a cache's hit or miss, once, at trace time, where
    eager does on every call (on every turn of a loop, for every row of a
    map, in the branch taken only).  bodies: the call's bodies (each has fn
    and which: hop._hops._Body).  Conservative, as the effect check is: a
    print in a branch not taken counts too (the HOP call then runs in
    Python).  HOP calls in
    hop.trace, in another HOP's body or in a transformation's function are
    traced as before (their print runs while tracing, as jax.jit's does).
    tr: the active trace, when the caller has it (a trace that is not
    hop.compile's returns at once)."""
    if tr is not None and _breaks._COMPILE not in tr.scratch or _breaks._compiling() is None:
        return
    for b in bodies:
        fn, which = b.fn, b.which
        found = _effect_site(fn)
        if found is not None:
            what, where = found
            why = "which a plan cannot repeat" if what == "print()" else \
                "whose hits and misses a plan cannot count"
            _breaks.body_effect(f"the {which} of hop.{hop_name} may call {what} ({where}), "
                                f"{why} on every call", where)


def body_env_arrays(tr, bodies):
    """The ndarrays the HOP bodies `bodies` (user functions) read from their
    environment (a global, a closure cell, an attribute or item of one;
    _guards.scan), recorded on hop.compile's trace tr: each gets a guard on
    its contents (_guards.Guards), so a change inside it retraces.  The
    frame translator does not translate a body, so NumPy computes with such
    an array while tracing it (`W * 2`, `np.sin(W)`, `W.sum()` in a cond
    branch, a map body, hop.grad's function) and the plan keeps the value
    (issue 28).  Conservative: an array the body only gives to hop.numpy's
    operations (`x * W`, read every call) is guarded too.  A body that is
    hop's wrapper of the user's function (fori_loop's) is looked through."""
    if tr is None or _breaks._COMPILE not in tr.scratch:
        return
    np = sys.modules.get("numpy")
    if np is None:
        return
    from . import _guards
    found = tr.scratch.setdefault(_breaks.BODY_ARRAYS, {})
    for fn in bodies:
        for f in _user_functions(fn):
            for g in _guards.scan(f).guards:
                if g.kind == "id" and type(g.expected) is np.ndarray and \
                        g.source.kind != "arg":
                    found.setdefault(id(g.expected), (g.source, g.expected))


def _user_functions(fn):
    """fn when it is the user's Python function; the user's functions in
    its cells when it is hop's wrapper of them."""
    if not isinstance(fn, types.FunctionType):
        return []
    if not is_hop_function(fn):
        return [fn]
    out = []
    for c in fn.__closure__ or ():
        try:
            v = c.cell_contents
        except ValueError:  # (an empty cell)
            continue
        if isinstance(v, types.FunctionType) and not is_hop_function(v):
            out.append(v)
    return out


class _EffectSearch(Policy):
    """The body effect search's walk (_reads.Walk, depth first): fn's code
    (nested code included) and the user functions it reads (its cells and
    globals, 6 calls deep; one code object once), stopping at the first that
    names the builtin print or, when caches, a functools cache (an
    lru_cache/cache wrapper it reads as a global or cell, or as an attribute
    its code names of a user module, class or object it reads: _cache_of).
    found: (what, "file.py:line") once met."""

    depth = 6
    by_code = True

    def __init__(self, caches):
        self.caches = caches
        self.found = None

    def visit(self, walk, fn, roots, depth, names):
        code = fn.__code__
        if "print" in names.set and "print" not in (getattr(fn, "__globals__", None)
                                                             or {}):
            self.found = ("print()", _name_line(code, "print", _GLOBAL_LOADS))
            walk.stop()
            return
        for root in roots:
            v = root[3]
            if self.caches:
                hit = _cache_of(v, root[1], names.set)
                if hit is not None:
                    name, loads = hit
                    qual = getattr(v if loads is _GLOBAL_LOADS else _cache_attr(v, name),
                                   "__qualname__", name)
                    self.found = (f"the cached {qual}()", _name_line(code, name, loads))
                    walk.stop()
                    return
            if isinstance(v, types.FunctionType):
                walk.depth_first(v, self, depth + 1)


_GLOBAL_LOADS = ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF")
_ATTR_LOADS = ("LOAD_ATTR", "LOAD_METHOD")


def _cache_of(v, name, names):
    """(the name to find in the code, the loads of it) when v, a root
    called name of a function whose code uses the names `names`, is a
    functools cache, or holds one as an attribute the code names (a user
    module's, a user class's through its MRO, a user object's or its
    class's: `k.scale(2)` of an lru_cache'd method); else None."""
    if isinstance(v, functools._lru_cache_wrapper):
        return name, _GLOBAL_LOADS
    if isinstance(v, types.ModuleType):
        if not is_user_module(v.__name__):
            return None
    elif not is_user_module(getattr(v if isinstance(v, type) else type(v), "__module__", None)
                            or ""):
        return None
    for n in sorted(names):
        if isinstance(_cache_attr(v, n), functools._lru_cache_wrapper):
            return n, _ATTR_LOADS
    return None


def _cache_attr(v, name):
    """What v's attribute name holds without running code (a module's or an
    object's own dict, then its class's MRO; a class's MRO), or None."""
    if isinstance(v, type):
        d = None
    else:
        try:  # (object's: a class's own __dict__ property or __getattr__ would run code)
            d = object.__getattribute__(v, "__dict__")
        except AttributeError:  # (__slots__)
            d = None
    if isinstance(d, dict) and name in d:
        return d[name]
    if isinstance(v, types.ModuleType):
        return None
    return class_attr(v if isinstance(v, type) else type(v), name, None)


def _effect_site(fn):
    """(what, "file.py:line") where fn or a user function it reads names the
    builtin print or a functools cache (_EffectSearch), or None."""
    p = _EffectSearch(True)
    Walk().depth_first(fn, p)
    return p.found


def _print_site(fn):
    """Where fn or a user function it reads names the builtin print
    ("file.py:line"), or None (_EffectSearch)."""
    p = _EffectSearch(False)
    Walk().depth_first(fn, p)
    return p.found and p.found[1]


def _name_line(code, name, loads):
    """"file.py:line" of the first load (one of loads) of name in code or
    the code nested in it."""
    todo = [code]
    while todo:
        c = todo.pop(0)
        for ins in dis.get_instructions(c):
            if ins.argval == name and ins.opname in loads:
                return f"{os.path.basename(c.co_filename)}:{ins.positions.lineno}"
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def _run_plain(hop_name, which, fn, args, kwargs, cells, globs):
    """run_pure of a body whose check is plain: no outer name it reads may
    be written by it (its verdict's "plain") and none holds a function the
    check would walk (_Check.visit), so the check records only the (name,
    cell, value) of its closure cells and the (name, globals, value) of the
    globals it names that are defined (_C._pure_roots reads them, as _Check
    would, in its order); on a rebinding it does what the full check
    does.  (A HOP's direct call runs this path in C, python/_C/purity.c,
    calling _plain_undo and _plain_done where this calls them.)"""
    try:
        result = fn(*args, **kwargs) if kwargs else fn(*args)
    except BaseException:
        _plain_undo(cells, globs)
        raise
    _plain_done(hop_name, which, cells, globs)
    return result


_RUN_PLAIN = _run_plain  # the C path's own (python/_C/purity.c): where _run_plain is
                         # replaced (a test counting its bodies) the path is this one


def _plain_undo(cells, globs):
    """_run_plain where the body raised: what it rebound is put back."""
    if _rebound(cells, globs) is not None:
        _rebind(cells, globs)


def _plain_done(hop_name, which, cells, globs):
    """_run_plain where the body returned: None, or, when it rebound a
    recorded cell or global, that put back and the TraceError raised."""
    what = _rebound(cells, globs)
    if what is not None:
        _rebind(cells, globs)
        raise _C.TraceError(
            f"hop.{hop_name}: the {which} has a side effect: {what}; a body is traced once "
            f"and must not change state outside itself (return values instead)")


def _owner(fn):
    """(fn, (name, obj)) for a body that is a method of a user's object obj
    (a bound method, or an object whose class defines __call__ in Python:
    then its bound __call__), name its first parameter's; else (fn, None).
    The object is state outside the body like a global (`self.runs += 1`
    in a method given to hop.grad): a body is traced once, so such a write
    would happen on the first call only.  A module, a class and hop's own
    objects (hop.grad(f)'s) are not."""
    if isinstance(fn, types.MethodType):
        obj = fn.__self__
    elif isinstance(fn, (types.FunctionType, types.BuiltinFunctionType, type)):
        return fn, None
    else:
        call = getattr(type(fn), "__call__", None)
        if not isinstance(call, types.FunctionType):
            return fn, None
        obj, fn = fn, types.MethodType(call, fn)
    if obj is None or isinstance(obj, (types.ModuleType, type) + _ATOMS) or \
            is_hop_module(getattr(type(obj), "__module__", None)):
        return fn, None
    code = getattr(fn.__func__, "__code__", None)
    name = code.co_varnames[0] if code is not None and code.co_argcount else "self"
    return fn, (name, obj)


def _compiled_fn(v):
    """The function a hop.compile object runs inside a trace (its plans are
    for calls outside one: _compile._call_args), or v itself."""
    while isinstance(v, _C._CompiledCall):
        v = v.fn
    return v


def run_pure(hop_name, which, fn, args, kwargs=None):
    """fn(*args, **kwargs), raising hop.TraceError (with outer state restored)
    if the body changes state outside itself."""
    if type(fn) is not types.FunctionType:
        # (a hop.compile'd body is its function: checked as one, and run as
        # the trace would run it; before, it ran unchecked, its effect once)
        fn = _compiled_fn(fn)
    if type(fn) is not types.FunctionType:
        fn, owner = _owner(fn)
        if owner is not None:  # (its object's state: the full check)
            return _run_checked(hop_name, which, fn, args, kwargs, None, owner)
    code = getattr(fn, "__code__", None)
    if code is None or not code.co_freevars and (not _effects(code).names or
                                                  _reads_no_global(fn, code)):
        # Nothing outside the body that it could change is reachable from it
        # (no cell, no global of its module: the scan would record nothing),
        # so the check is empty: call it (issue #30: a HOP call's body).
        return fn(*args, **kwargs) if kwargs else fn(*args)
    # _effects(code), its cache read here (two Python calls fewer a body
    # with a cell: a level of a nest, issue #30)
    n = _names_cache.get(id(code))
    eff = n.effects if n is not None and n.code() is code else None
    if eff is None:
        eff = _effects(code)
    if eff.unknown:
        return _run_checked(hop_name, which, fn, args, kwargs, None)
    # A plain verdict whose callees are still the same objects: the check
    # is what the body's cells and globals hold (_C._pure_roots, issue #30:
    # a level of a nest).  None: the verdict is made again (or the reading
    # is Python's); False: a root is a function to walk.
    read = _C._pure_roots(fn, eff.plain, True) if eff.plain is not None else None
    return _run_read(hop_name, which, fn, args, kwargs, eff, read)


def _run_read(hop_name, which, fn, args, kwargs, eff, read):
    """run_pure of a body whose code's effects eff are known, once
    _C._pure_roots(fn, eff.plain, True) gave read (None without a plain
    verdict); a HOP's direct call comes here from C (python/_C/purity.c)
    where read is not the plain check's pair."""
    known = None
    if read is None:
        known = (fn, _verdict(eff, fn))
        if eff.plain is not None:
            read = _C._pure_roots(fn, eff.plain, False)
    if read:
        return _run_plain(hop_name, which, fn, args, kwargs, *read)
    return _run_checked(hop_name, which, fn, args, kwargs, known)


def _run_checked(hop_name, which, fn, args, kwargs, known, owner=None):
    """run_pure with the full check (_Check; known: the verdict made for fn
    already, or None; owner: (name, the object fn is a method of), _owner's,
    whose state is checked as a written global's)."""
    check = _Check(known)
    try:
        if owner is not None:
            check._snap(owner[0], owner[1], ALL)
        check.scan(fn)
    except BaseException:
        check.unlock()
        raise
    try:
        result = fn(*args, **kwargs) if kwargs else fn(*args)
    except BaseException as e:
        check.unlock()
        what = check.changes()
        paths = _outer_array_write(e, check) if what is None else None
        if paths:
            names = ", ".join(repr(p) for p in paths)
            what = (f"it writes into {names} (a NumPy array defined outside the body)"
                    if len(paths) == 1 else
                    f"it writes into one of {names} (NumPy arrays defined outside the body)")
            check.restore()
            raise _C.TraceError(
                f"hop.{hop_name}: the {which} has a side effect: {what}; a body is traced "
                f"once and must not change state outside itself (return values instead)") from e
        if what is not None:
            check.restore()
        raise
    check.unlock()
    what = check.changes()
    if what is not None:
        check.restore()
        raise _C.TraceError(
            f"hop.{hop_name}: the {which} has a side effect: {what}; a body is traced once "
            f"and must not change state outside itself (return values instead)")
    return result
