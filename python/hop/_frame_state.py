"""The Python state outside a translated frame (hop/_frame.py): what the
function reads and writes of cells, globals, attributes and containers that
existed before the call.  Writes go to an overlay (cells, globals,
attributes) or a shadow copy (containers) and become entries of the
side-effect table (Effect), which every compiled call `replay`s after the
plan; ints the function assigns to a cell or global are lifted inputs
(lifted_sources, lifted_now); and `unguard` drops the guards those writes
make needless.  The Translator's methods for it are the _State mixin."""

import builtins
import gc
import inspect
import itertools
import sys
import types
import weakref
from collections import deque

from . import _C
from . import _exact
from . import _paths
from . import _reads
from ._frame_base import (
    _at_line, _BreakHere, _cell_value, _CONTAINERS, _DELETED, _EMPTY, _instructions, _NoMerge,
    _numpy_value, _numpy_written_back, _PLAIN, _site, _traced, _TransGen, _UNBOUND,
    _user_function, quiet_attr, Unsupported)

__all__ = ["BROKEN", "REPLAYED", "Effect", "replay", "written_names", "lifted_now", "lifted_sources",
           "unguard"]


# The effect kinds the translator replays (_effects.KINDS keys).
# (and "type": nothing to replay, the translator answers type() as eagerly;
# "holds": nothing to replay, the translator follows what the function stored)
REPLAYED = frozenset(["global", "nonlocal", "attribute", "item", "mutation", "print", "warn",
                      "type", "holds"])
# The kinds whose calls the translator makes graph breaks (issue 28): I/O
# (a logging call, sys.stdout.write, open, np.save) and a functools cache's
# call (its hits and misses) run in Python on every call, on the plan's
# values, and the rest of the function stays compiled.
# (Not next(), random draws or the clock: each call's new value would be a
# resume function's new constant, a recompile per call.)
BROKEN = frozenset(["io", "cache"])


class Effect:
    """One entry of the side-effect table: kind ("cell", "del_cell",
    "global", "del_global", "attr", "del_attr", "item", "del_item", "call",
    "print", "warn"), the target (a cell, a globals dict and name, an
    object), the key (a name; for "warn" _paths.warn_at's arguments), the
    values (a tuple that may hold traced values: an output of the plan),
    and where (file:line) and what, for explain()."""

    __slots__ = ("kind", "target", "key", "values", "site", "what")

    def __init__(self, kind, target, key, values, site, what):
        self.kind = kind
        self.target = target
        self.key = key
        self.values = values
        self.site = site
        self.what = what

    def __repr__(self):
        return f"{self.what} at {self.site}"


class _ArgPath:
    """The target of an effect that is (inside) an argument: the trace saw
    the argument's containers rebuilt, so each call finds its own by path."""

    __slots__ = ("path",)

    def __init__(self, path):
        self.path = path

    def resolve(self, tree):
        v = tree
        for i in self.path:
            v = list(v.values())[i] if type(v) is dict else v[i]
        return v


def replay(effects, values, tree, holds=None):
    """Applies the side-effect table with one call's values (the plan's
    outputs: values[i] for effects[i]), in program order; tree is the call's
    (args, kwargs), where targets inside the arguments are found.  holds
    ({call's index: the index of the effect after which its result dies,
    or len(effects): when the call ends}, _State._placed_drops): the results
    of calls (`o = HOLD.pop()`) whose death runs a finalizer, kept as long
    as the function kept them eagerly; the others are dropped at once.
    Returns the results kept until the call ends, for release()."""
    kept = {}
    for n, (e, v) in enumerate(zip(effects, values)):
        _replay_one(e, v, tree, n, holds, kept)
        if n in kept:
            release(kept.pop(n))
    return kept.pop(len(effects), [])


def release(results):
    """Drops results (replay's) in the order eager's frame drops its locals."""
    while results:
        del results[0]


def _replay_one(e, v, tree, n, holds, kept):
    """One effect of replay's; a kept call's result goes into kept."""
    k = e.kind
    if type(e.target) is _ArgPath:
        e = Effect(k, e.target.resolve(tree), e.key, e.values, e.site, e.what)
    if k == "cell":
        e.target.cell_contents = v[0]
    elif k == "del_cell":
        del e.target.cell_contents
    elif k == "global":
        e.target[e.key] = v[0]
    elif k == "del_global":
        del e.target[e.key]
    elif k == "attr":
        setattr(e.target, e.key, v[0])
    elif k == "del_attr":
        delattr(e.target, e.key)
    elif k == "item":
        e.target[v[0]] = v[1]
    elif k == "del_item":
        del e.target[v[0]]
    elif k == "call":
        r = getattr(e.target, e.key)(*v[0], **dict(v[1]))
        if holds and n in holds:
            kept.setdefault(holds[n], []).append(r)
    elif k == "print":
        print(*v[0], **dict(v[1]))
    elif k == "warn":
        _paths.warn_at(*e.key)


def written_names(fn):
    """(free variables, globals) fn's own code assigns: the state whose int
    values become inputs of the plan."""
    code = fn.__code__
    cells, globs = set(), set()
    for ins in _instructions(code)[0]:
        if ins.opname == "STORE_DEREF" and ins.argval in code.co_freevars:
            cells.add(ins.argval)
        elif ins.opname == "STORE_GLOBAL":
            globs.add(ins.argval)
    return cells, globs


def _written_items(code):
    """(kind, name, key) of each `NAME[key] = value` of code with a constant
    key and NAME a global or a free variable: an int item there may be a
    lifted input, as a nonlocal int is."""
    ins = _instructions(code)[0]
    out = set()
    for n, i in enumerate(ins):
        # NAME[key] = v, or NAME[key] += v (LOAD NAME, LOAD_CONST key, COPY 2,
        # COPY 2, BINARY_SUBSCR, ..., STORE_SUBSCR)
        if n >= 2 and ins[n - 1].opname == "LOAD_CONST" and \
                type(ins[n - 1].argval) in (str, int) and \
                (i.opname == "STORE_SUBSCR" or [x.opname for x in ins[n:n + 3]] ==
                 ["COPY", "COPY", "BINARY_SUBSCR"]):
            c = ins[n - 2]
            if c.opname == "LOAD_GLOBAL" and not c.arg & 1:
                out.add(("global", c.argval, ins[n - 1].argval))
            elif c.opname == "LOAD_DEREF" and c.argval in code.co_freevars:
                out.add(("cell", c.argval, ins[n - 1].argval))
    return out


def _written_attrs(code):
    """(kind, name, attr) of each `NAME.attr += v` of code, and of each
    `NAME.attr = value` where code also reads NAME.attr, with NAME a global,
    a free variable or an argument the code never rebinds: an int attribute
    there may be a lifted input, as a nonlocal int is (one only written
    needs no input: unguard drops its guard)."""
    ins = _instructions(code)[0]
    stores, loads, out = set(), set(), set()
    params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]) - \
        set(code.co_cellvars) - {i.argval for i in ins if i.opname in ("STORE_FAST", "DELETE_FAST")}

    def source(c, attr):
        if c.opname == "LOAD_GLOBAL" and not c.arg & 1:
            return ("global", c.argval, attr)
        if c.opname == "LOAD_DEREF" and c.argval in code.co_freevars:
            return ("cell", c.argval, attr)
        if c.opname == "LOAD_FAST" and c.argval in params:
            return ("arg", c.argval, attr)
        return None

    for n, i in enumerate(ins[1:], 1):
        c = ins[n - 1]
        if i.opname == "STORE_ATTR":
            stores.add(source(c, i.argval))  # NAME.attr = v (LOAD NAME, STORE_ATTR)
        elif i.opname == "LOAD_ATTR":
            loads.add(source(c, i.argval))
        elif i.opname == "COPY" and i.arg == 1 and n + 1 < len(ins) and \
                ins[n + 1].opname == "LOAD_ATTR":
            # NAME.attr += v (LOAD NAME, COPY 1, LOAD_ATTR attr, ..., STORE_ATTR attr)
            out.add(source(c, ins[n + 1].argval))
    out |= stores & loads
    out.discard(None)
    return out


def _liftable_attr(obj, name):
    """Whether obj.name is a plain int attribute hop can lift: held in the
    __dict__ of an ordinary object, no descriptor of its class in the way."""
    if isinstance(obj, (types.ModuleType, type, _C.Tensor)) or \
            type(getattr(obj, "__dict__", None)) is not dict:
        return False
    v = obj.__dict__.get(name)
    return type(v) is int and -_INT_BOUND < v < _INT_BOUND and \
        inspect.getattr_static(type(obj), name, None) is None


_MUTATORS = {
    list: frozenset("append extend insert pop remove clear sort reverse __setitem__ "
                    "__delitem__ __iadd__ __imul__".split()),
    dict: frozenset("update setdefault pop popitem clear __setitem__ __delitem__ "
                    "__ior__".split()),
    set: frozenset("add discard remove update clear pop difference_update "
                   "intersection_update symmetric_difference_update __ior__ __iand__ "
                   "__isub__ __ixor__".split()),
}
# Mutators that do not read the container: a container only written through
# these needs no guard on its length or items.
_WRITE_ONLY = frozenset("append extend insert update add clear __setitem__".split())


class _Recorded:
    """A mutating method of a container that existed before the call: the
    call is applied to its shadow and recorded."""

    __slots__ = ("real", "shadow", "name")

    def __init__(self, real, shadow, name):
        self.real = real
        self.shadow = shadow
        self.name = name


def _unbound_cell(fr, name):
    """Eager's error (CPython 3.11's text) for a cell variable read or
    deleted while empty: the frame's own cell or a free variable."""
    if name in fr.code.co_cellvars:
        return UnboundLocalError(f"cannot access local variable {name!r} where it is not "
                                 f"associated with a value")
    return NameError(f"cannot access free variable {name!r} where it is not associated with "
                     f"a value in enclosing scope")


def unguard(env, tr, leaves, captures=()):
    """Drops from env (a _guards._Scan) the guards the translation made
    needless: the lifted ints (inputs of the plan now), state the function
    assigned before reading it, and the length and items of a container it
    only wrote to (append, update, ...): their changes are the function's
    own, replayed on every call, never a reason to retrace."""
    roots = set()
    attrs = {}  # id(obj) -> the names the function wrote before reading them, or lifted
    for kind, base, name in tr.lifted:
        if kind == "attr":
            attrs.setdefault(id(base), set()).add(name)
        roots.add((kind, id(base), name))
    roots |= _unreached(tr)
    for w in tr.unread_writes():
        if w[0] == "attr":
            attrs.setdefault(w[1], set()).add(w[2])
        else:
            roots.add((w[0], w[1], w[2] if w[0] == "global" else None))
    written = tr.write_only()
    under = []
    items = {}  # id(dict) -> its lifted keys: their values are inputs, not guards
    for kind, base, name in tr.lifted:
        if kind == "item":
            items.setdefault(id(base), set()).add(name)
    lifted_items = []
    for g in env.guards:
        if g.kind == "id" and id(g.expected) in written:
            s = g.source
            under.append((s.kind, id(s.base), s.key, s.path))
        if g.kind == "id" and id(g.expected) in items:
            s = g.source
            lifted_items.extend((s.kind, id(s.base), s.key, s.path + (("item", k),))
                                for k in items[id(g.expected)])

    def keep(g):
        s = g.source
        key = s.key if s.kind == "global" else None
        if (s.kind, id(s.base), key) in roots:
            return False
        if attrs and s.path and _written_attr(s, attrs, leaves):
            return False
        for kind, base, k, path in under:
            if s.kind == kind and id(s.base) == base and s.key == k and \
                    s.path[:len(path)] == path and (len(s.path) > len(path) or g.kind == "len"):
                return False
        for kind, base, k, path in lifted_items:
            if s.kind == kind and id(s.base) == base and s.key == k and s.path == path:
                return False
        return True

    env.guards = [g for g in env.guards if keep(g)]
    # (the order of a dict it only wrote to: its own change, as the length)
    env.orders = [(src, d) for src, d in getattr(env, "orders", ()) if id(d) not in written]
    # the tensors the code names that the plan did not capture (each would
    # be guarded by identity): not those of state the function assigned
    # before reading it (`nonlocal w; w = a`: the old tensor is never the
    # function's, nor an object no argument may be, _guards._env_ids), nor,
    # at a graph break, those only code after the break reads
    taken = {id(t) for t in captures}
    for i, (t, sources) in list(env.tensors.items()):
        if i not in taken:
            sources[:] = [s for s in sources if (s.kind, id(s.base), s.key if s.kind == "global"
                                                 else None) not in roots and
                          not (tr.stop is not None and _attr_not_reached(s, tr, leaves))]
            if not sources:
                del env.tensors[i]


def _attr_not_reached(s, tr, leaves):
    """Whether the guard's source s is obj.name (a hop.numpy array's tensor
    there too) that the translation, ended at a graph break, never read:
    code after the break reads it (the resume guards it itself) or nothing
    does; the plan before the break never saw it.  Not so when something
    run whole (a HOP body, a call run eagerly) may have read it."""
    path = s.path[:-1] if s.path and s.path[-1][0] == "array" else s.path
    if not path or path[-1][0] != "attr":
        return False
    name = path[-1][1]
    try:
        obj = type(s)(s.kind, s.base, s.key, s.text, path[:-1]).read(leaves)
    except Exception:  # (a source that no longer reads: keep the guard)
        return False
    key = ("attr", id(obj), name)
    return key not in tr.read and key not in tr.written and \
        id(obj) not in tr.opaque_objs and name not in tr.opaque_names


def _written_attr(s, attrs, leaves):
    """Whether the guard's source s is obj.name, or under it (obj.name.w),
    of an attribute the function wrote before reading it (attrs: id(obj) ->
    names): the value the write replaces is no reason to retrace.  So is
    obj.__dict__[name] (the whole __dict__ guarded: vars(o), a getattr of
    a computed name)."""
    for i, (step, name) in enumerate(s.path):
        at = i
        if step == "item" and i and s.path[i - 1] == ("attr", "__dict__"):
            at = i - 1
        elif step != "attr":
            continue
        parent = type(s)(s.kind, s.base, s.key, s.text, s.path[:at])
        try:
            obj = parent.read(leaves)
        except Exception:  # (a source that no longer reads: keep the guard)
            return False
        if name in attrs.get(id(obj), ()):
            return True
    return False


_STATE_OPS = frozenset("""LOAD_GLOBAL LOAD_DEREF LOAD_CLASSDEREF LOAD_NAME STORE_GLOBAL
    STORE_DEREF DELETE_GLOBAL DELETE_DEREF LOAD_CLOSURE""".split())


def _unreached(tr):
    """("global", id(globals), name) / ("cell", id(cell), None) of the state
    only code outside this plan names: the root frame's code before a
    resume's start or after the break (the loop or statement run in Python,
    the next resume: each reads it itself, with guards of its own).  Its
    value, length and items are no reason to retrace (a list a loop after
    the break appends to).  Kept when the translation read it, when the
    plan's part of the code, code nested in the function (a HOP body defined
    inside) or a function it names (a body traced by a library call) names
    it, and when the plan's part names an object whose methods may run."""
    from ._frame_resume import Resume  # (here: it imports _frame, which imports this module)
    fr = tr.root
    if fr is None:
        return set()  # not the user's code (np.sum compiled itself): called whole, no frame
    code = fr.code
    ins, _, _, _, _, loops = _instructions(code)
    start = tr.fn.pc if isinstance(tr.fn, Resume) else 0
    stop = tr.stop.pc if tr.stop is not None else len(ins)
    if start == 0 and stop == len(ins) or any(t < start <= j for t, j in loops):
        return set()
    for _, v in tr.argpaths.values():
        if not (v is None or type(v) in _PLAIN or type(v) in (list, tuple, dict) or _traced(v)
                or _numpy_value(v)):
            return set()  # a function or object argument: what it runs names is unknown
    from ._purity import code_names
    g = fr.func.__globals__
    cells = dict(zip(code.co_freevars, fr.func.__closure__ or ()))

    def source(name, g, cells):
        c = cells.get(name)
        if c is not None:
            try:
                return ("cell", id(c), None), c.cell_contents
            except ValueError:
                return ("cell", id(c), None), None
        return ("global", id(g), name), g.get(name)

    def closure(names, g, cells, out, whole=False):
        """The sources names reach, through the functions they hold; False
        when one holds an object whose methods may run: at once, or, whole,
        after all of them (out then does not depend on the order of names,
        a set's: its hash seed's)."""
        todo = [(n, g, cells) for n in names]
        methods = False
        while todo:
            name, g, cells = todo.pop()
            key, v = source(name, g, cells)
            if key in out:
                continue
            out.add(key)
            vals = [v]
            for _ in range(3):  # functions held by containers (three levels)
                flat = []
                for x in vals:
                    if type(x) in (list, tuple, dict, set):
                        flat.extend(x.values() if type(x) is dict else x)
                    else:
                        flat.append(x)
                if len(flat) > 64:
                    flat = vals = ()
                    methods = True
                    break
                vals = flat
            for v in vals:
                if isinstance(v, types.FunctionType):
                    c = v.__code__
                    more = code_names(c, set()) | set(c.co_freevars)
                    inner = dict(zip(c.co_freevars, v.__closure__ or ()))
                    todo.extend((n, v.__globals__, inner) for n in more)
                elif not (v is None or type(v) in _PLAIN or _traced(v) or _numpy_value(v) or
                          isinstance(v, (types.ModuleType, types.BuiltinFunctionType))):
                    methods = True  # an object whose methods may run (or a container deeper)
            if methods and not whole:
                return False
        return not methods

    early, late = set(), set()
    for n, i in enumerate(ins):
        if i.opname in _STATE_OPS:
            (early if start <= n < stop else late).add(i.argval)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            early |= code_names(c, set()) | set(c.co_freevars)
    reached = set()
    if not closure(early, g, cells, reached):
        return set()  # an object whose methods the plan may run: all kept
    after = set()
    closure(late, g, cells, after, whole=True)
    seen = {k if len(k) == 3 else (k[0], k[1], None) for k in tr.read | tr.written}
    return {k for k in after - reached if k not in seen}


def lifted_now(lifted):
    """The current values of the lifted sources as 0-d int64 tensors, or
    None when one no longer holds an int (the plan does not fit)."""
    out = []
    for kind, base, name in lifted:
        try:
            v = base.cell_contents if kind == "cell" else \
                base.__dict__[name] if kind == "attr" else base[name]
        except (ValueError, KeyError, AttributeError):
            return None
        if type(v) is not int or not -_INT_BOUND < v < _INT_BOUND:
            return None
        out.append(_C.tensor(v, dtype=_C.int64))
    return tuple(out)


_INT_BOUND = 1 << 62


def _argument(code, name, args, kwargs):
    """The value the call passes for code's parameter name (LookupError:
    none, a default's or no call given)."""
    if args is None:
        raise LookupError(name)
    i = code.co_varnames.index(name)
    if i < code.co_argcount and i < len(args):
        return args[i]
    return (kwargs or {})[name]


def lifted_sources(fn, args=None, kwargs=None):
    """(kind, cell or globals dict, name) of each int fn assigns to a cell or
    global, ("item", dict, key) of an int item and ("attr", obj, name) of an
    int attribute it reads and writes (obj a global's, a cell's or, given
    the call's args and kwargs, an argument's: the runner guards an object
    argument's identity, so it is the same object on every call of the
    plan): inputs of the plan, their new values outputs."""
    cells, globs = written_names(fn)
    out = []
    code = fn.__code__
    if isinstance(fn, types.MethodType):
        args = None  # (its code's parameters start with self, which args lacks)
    for what, (kind, name, key) in sorted([("item", w) for w in _written_items(code)] +
                                          [("attr", w) for w in _written_attrs(code)],
                                          key=repr):
        # D["n"] = D["n"] + 1 on a dict, o.n += 1 on an object, of a global or a cell
        try:
            if kind == "arg":
                d = _argument(code, name, args, kwargs)
            else:
                d = fn.__closure__[code.co_freevars.index(name)].cell_contents \
                    if kind == "cell" else fn.__globals__.get(name)
        except (ValueError, LookupError):
            continue
        if any(x[1] is d and x[2] == key for x in out):
            continue
        if what == "attr":
            if _liftable_attr(d, key):
                out.append(("attr", d, key))
        elif type(d) is dict:
            v = d.get(key)
            if type(v) is int and -_INT_BOUND < v < _INT_BOUND:
                out.append(("item", d, key))
    for name in sorted(cells):
        c = fn.__closure__[code.co_freevars.index(name)]
        try:
            v = c.cell_contents
        except ValueError:
            continue
        if type(v) is int and -_INT_BOUND < v < _INT_BOUND:
            out.append(("cell", c, name))
    g = fn.__globals__
    for name in sorted(globs):
        v = g.get(name)
        if type(v) is int and -_INT_BOUND < v < _INT_BOUND:
            out.append(("global", g, name))
    return out


# hop.numpy's array over an environment ndarray (_State._env_array) -> the
# ndarray: a view of it the function returns is NumPy's view of the ndarray
# (_trace._view_again)
# (by id: hop.numpy's arrays are unhashable; an entry goes with its array)
ENV_ARRAYS = {}
ENV_REFS = {}  # id(w) -> the weak reference whose callback forgets w


def _ndarray_type():
    np = sys.modules.get("numpy")
    return np.ndarray if np is not None else _NO_TYPE


class _NO_TYPE:
    pass


def _fresh(a, held):
    """Whether ndarray a has no more than held references and each base
    it views is held by the view before it alone: an array nothing else
    can reach (a view's chain of bases: np.linspace's result is one)."""
    if sys.getrefcount(a) > held:
        return False
    b = a.base
    while b is not None:
        # the view's reference, the local, getrefcount's argument
        if type(b) is not type(a) or sys.getrefcount(b) > 3:
            return False
        b = b.base
    return True


def _unreadable(a):
    """Why hop cannot compute with ndarray a over its own memory, or None."""
    from .numpy._core import hop_dtype
    try:
        hop_dtype(a.dtype, "array")
    except Exception:
        return f"has a dtype hop lacks ({a.dtype})"
    if not a.dtype.isnative:
        return f"has a byte order hop would copy ({a.dtype.str}), so a change inside it " \
            f"would not be seen"
    if a.dtype.metadata is not None:
        return f"has a dtype with metadata ({dict(a.dtype.metadata)!r}), which NumPy keeps in " \
            f"its results and hop's dtypes cannot hold"
    if not a.flags.writeable:
        return "is read-only: hop would compute with a copy of it, so a change inside it (a " \
            "write through a writable base) would not be seen"
    return None


class _State:
    """The Translator's reads and writes of state outside its frames (a
    mixin: its tables are the Translator's, made in its __init__ and run)."""

    def _unshadow(self, v, depth=0):
        """v with every shadow container replaced by the real one (the
        caller's object, as eager returns it)."""
        if not self.real and not self.env_arrays or depth > 8:
            return v
        r = self.real.get(id(v))
        if r is not None:
            return r
        hit = self.env_arrays.get(id(v))
        if hit is not None and hit[1] is v:
            return hit[0]  # an environment ndarray as is (`return G`): G
        if type(v) is tuple:
            return tuple(self._unshadow(x, depth + 1) for x in v)
        if type(v) is list and id(v) in self.made:
            v[:] = [self._unshadow(x, depth + 1) for x in v]
        elif type(v) is dict and id(v) in self.made:
            for k in list(v):
                v[k] = self._unshadow(v[k], depth + 1)
        return v

    # ------------------------------------------------------------ objects

    def _make(self, obj):
        self.made[id(obj)] = obj
        return obj

    def _sub(self, v):
        """A loaded value: a mutated container's shadow in its place (each
        load of a container is counted: a read unless it is the receiver
        of a write-only method)."""
        t = type(v)
        if t is list or t is dict or t is set:
            i = id(v)
            s = self.shadows.get(i)
            if s is None and self.items and i in self.items:
                # a dict with lifted int items: a shadow holding their
                # values (inputs of the plan), from its first load on
                s = self._shadow(v)
                s.update(self.items[i])
            if s is not None:
                v = s
            else:
                r = self.real.get(i)
                if r is not None:
                    i = id(r)
                    s = v
            if t is set and s is not None and self.real.get(id(s)) is not None:
                # (a changed set's shadow: its order is the copy's table's,
                # not the real set's; _set_order_unread)
                n = self.set_reads.get(i)
                fr = self._cur
                self.set_reads[i] = [n[0] + 1, n[1]] if n else \
                    [1, _site(fr.code, fr.line) if fr is not None else "?"]
            self.loads[i] = self.loads.get(i, 0) + 1
        elif t is _ndarray_type() and not self.concrete and not self._own_array(v):
            v = self._env_array(v)
        return v

    def made_arrays(self, out):
        """Records the ndarrays a call of library code made (out, or the
        items of a tuple or list out): NumPy's own arrays of constants
        (`np.eye(3)`, `np.zeros(shape)`, `np.meshgrid(a, b)`), held by
        nothing but out.  They are the function's (_own_array), left to
        NumPy as the plain trace leaves them: over their memory they would
        be captures with no source (warned) and a write to one would
        restart the trace for a slot keyed by an array that the next run
        makes anew, forever."""
        nd = _ndarray_type()
        t = type(out)
        if t is nd:
            # out: the caller's local, this parameter, _fresh's, getrefcount's
            if _fresh(out, 4):
                self.made[id(out)] = out
        elif (t is tuple or t is list) and sys.getrefcount(out) <= 3:
            for a in out:
                # the container, the loop variable, _fresh's, getrefcount's
                if type(a) is nd and _fresh(a, 4):
                    self.made[id(a)] = a

    def _own_array(self, a):
        """Whether ndarray a is one the function made (made_arrays) or a
        view of one."""
        made = self.made
        if not made:
            return False
        while a is not None:
            if id(a) in made:
                return True
            a = getattr(a, "base", None)
        return False

    def _env_array(self, a):
        """hop.numpy's array over plain ndarray a's memory, as the function
        sees a while translated (issue 28): NumPy would compute with a now
        (`G * 2`, `np.sin(G)`, `G[1:]`), at trace time, and the plan would
        keep that value while a's contents change between calls.  Over a's
        memory, the capture is a root input that every call reads (the
        guards hold a by identity: _guards.Guards.viewed).  One array per
        ndarray and translation (`G is G`).  An ndarray hop cannot read in
        place (an object, str or other dtype hop lacks, a byte order or
        negative strides it would copy) is left to NumPy when the function
        made it, and ends the translation when it is the environment's."""
        from .numpy import NumpyArg
        from .numpy._core import from_numpy
        hit = self.env_arrays.get(id(a))
        if hit is not None and hit[0] is a:
            w = hit[1]
            tr = _C.tracing()
            key = ("hop.numpy array", id(a))
            if tr is not None and key not in tr.scratch:
                # a restart's new trace: the array's tensor as from_numpy's
                # (the guards find the ndarray whose memory it is there)
                tr.scratch[key] = (a, w._tv)
                self._hint(a, w._tv)
            return w
        why = _unreadable(a)
        t = None
        if why is None:
            t = from_numpy(a)
            if a.size and t.data_ptr() != a.__array_interface__["data"][0]:
                why = "is laid out so that hop would compute with a copy of it (negative " \
                    "strides or unaligned items), so a change inside it would not be seen"
        if why is not None:
            if id(a) in self.pre:
                self._fail(f"the function computes with an ndarray of its environment that "
                           f"{why}")
            return a
        self._hint(a, t)
        w = NumpyArg(t, owned=False)
        # a captured array (made before the run, as a hop.numpy global):
        # a write to it is the plan's write-back to a's memory
        w._run, w._role, w._dp = None, None, 0
        w._ro = not a.flags.writeable
        # NumPy's semantics from here on, as for an ndarray argument (the
        # bits Python may see, a method of the array across a break)
        self.numpy_mode = self.env_numpy = True
        self.env_arrays[id(a)] = (a, w)
        self.env_arrays[id(w)] = (a, w)  # (_unshadow: back to a)
        # (hop's own weak reference, which hop.numpy's resize does not
        # count: _reads.HopRef; it lives until w dies, its callback's key)
        ENV_ARRAYS[id(w)] = a
        ENV_REFS[id(w)] = _reads.HopRef(w, lambda _, k=id(w): (ENV_ARRAYS.pop(k, None),
                                                       ENV_REFS.pop(k, None)))
        return w

    def _hint(self, a, t):
        """Names the capture of environment ndarray a's tensor t after a."""
        src = self.env_sources.get(id(a))
        if src is not None:
            _C.tracing().name_hint(t, src.hint())

    def _kind(self, obj):
        """'made' (the function's own: changed for real), 'pre' (existed
        before the call: changes are effects) or None (unknown)."""
        i = id(obj)
        if i in self.real:
            return "pre"
        if i in self.made:
            return "made"
        if i in self.pre:
            return "pre"
        return None

    def _shadow(self, obj, op=None, key=None):
        """The shadow copy of obj, a container that existed before the call,
        for a change (op: "__setitem__" with key, or another change)."""
        s = self.shadows.get(id(obj))
        if s is None:
            if id(obj) in self.namespaces:
                # (o.__dict__["k"] = v: eagerly o.k answers v at once)
                self._fail("a change to the __dict__ of an object the function did not make "
                           "(its attributes would not see the change hop replays after the "
                           "plan)")
            if not self.concrete and self._iterators_over(obj):
                self.live_over.add(id(obj))
            s = type(obj)(obj)
            self.shadows[id(obj)] = s
            self.real[id(s)] = obj
        if self.live_over and id(obj) in self.live_over:
            self._check_live(obj, op, key)
        return s

    def _check_live(self, real, op, key):
        """Unsupported when an iterator or view over real (not its shadow:
        made before the first change) is still held and would see the
        change eagerly: the translation changes the shadow, so it would
        iterate on over the old items (`for v in L: L.append(...)` would
        stop early, a dict or set changing size would not raise eager's
        RuntimeError, a view taken before `D.pop(k)` would still hold k).
        A write of an item the iteration has passed is no change it sees
        (`for k, v in D.items(): D[k] = v * 2`, `for i, v in
        enumerate(L): L[i] = v + 1`)."""
        live = self._iterators_over(real)
        if not live:
            self.live_over.discard(id(real))
            return
        for it in live:
            if not _passed(it, real, op, key):
                self._fail(f"a change to a {type(real).__name__} while an iterator or view over "
                           f"it is live (eagerly it would see the change; hop's copy of the "
                           f"{type(real).__name__} is not the one it walks)")

    def _iterators_over(self, real):
        """The iterators and views over real that the frames being
        translated (and the suspended generators they hold) keep: on their
        stacks, in their locals and cells, or inside such an iterator
        (`enumerate(L)`, `zip(L, M)`)."""
        todo, seen, found = [], set(), []
        # (a resume's root frame runs without an inlined call: not in frames)
        frames = list(self.frames) + [fr for fr in (self.root, self._cur) if fr is not None]
        while frames:
            fr = frames.pop()
            if id(fr) in seen:
                continue
            seen.add(id(fr))
            todo.extend(fr.stack)
            todo.extend(fr.fast.values())
            for c in fr.cells.values():
                try:
                    todo.append(c.cell_contents)
                except ValueError:
                    pass
            for v in list(todo):
                if isinstance(v, _TransGen):
                    frames.append(v.fr)
        depth = 0
        while todo and depth < 4:
            nxt = []
            for v in todo:
                if id(v) in seen or not (_iterator_like(v) or depth and type(v) is tuple):
                    continue  # (an iterator's tuple: zip's iterators)
                seen.add(id(v))
                refs = gc.get_referents(v)
                if any(r is real for r in refs):
                    found.append(v)
                nxt.extend(refs)
            todo, depth = nxt, depth + 1
        return found

    def _record(self, kind, target, key, values, what):
        fr = self._cur
        if self._opaque is not None:
            # in a side of an `if` traced as a cond body: an effect there
            # keeps the `if` a break (_merge_if), whatever its values
            raise _NoMerge(f"has a Python effect ({what} at {_site(fr.code, fr.line)})")
        if self.numpy_mode:
            bad = _exact.differs(values)
            if bad is not None:
                # the plan's value may differ from NumPy's in the last bit: a
                # value stored or printed would show it; a break there gets
                # NumPy's own value (Break.prefix)
                raise _BreakHere(f"{what} of a value NumPy may compute with other bits "
                                 f"({bad})", self.depth)
        hit = self.argpaths.get(id(target)) if target is not None else None
        if hit is not None and hit[1] is target and id(target) not in self.env_ids:
            path = hit[0]
            v = self._argtree
            for i in path:  # only through tuples, lists and dicts (pytree's own)
                if type(v) not in (tuple, list, dict):
                    self._fail(f"a write to an object inside a {type(v).__name__} argument")
                v = list(v.values())[i] if type(v) is dict else v[i]
            if len(path) < 2:  # the (args, kwargs) tree, args or kwargs itself
                self._fail("a write to the arguments themselves")
            target = _ArgPath(path)
        for d in self.drops:  # (a kept result a frame still holds outlives this effect)
            if self._in_frames(d[1]):
                d[2] = len(self.effects)
        self.effects.append(Effect(kind, target, key, values, _site(fr.code, fr.line), what))

    def _dropped_later(self, out):
        """Notes the result of the call just recorded (`o = HOLD.pop()`) when
        its death runs code (a __del__, a weakref.finalize or a weakref's
        callback; not a weakref without one, as hop's own guards take):
        the replay keeps it as long as the function does (_placed_drops),
        not only as long as the replayed call."""
        if getattr(type(out), "__del__", None) is not None or \
                any(r.__callback__ is not None for r in weakref.getweakrefs(out)):
            self.drops.append([len(self.effects) - 1, out, len(self.effects) - 1])

    def _in_frames(self, obj):
        return any(v is obj for f in self.frames
                   for v in itertools.chain(f.fast.values(), f.stack))

    def _placed_drops(self):
        """replay's holds, once the function returned: each noted result
        dies after the last effect a frame of the function held it through,
        or, held by a local of the function's own at its return, when the
        call ends (in the order of those locals, as eager's frame drops
        them).  Unsupported for one held elsewhere too (a container, an
        object, a generator's frame), whose death hop cannot place."""
        holds, slots = {}, {}
        names = self.root.code.co_varnames if self.root is not None else ()
        fast = self.root.fast if self.root is not None else {}
        for n, obj, last in self.drops:
            at = [k for k, v in fast.items() if v is obj]
            # the references known: the entry, getrefcount's argument, obj
            # here, the real container's (the translation ran on its shadow)
            # and the function's locals
            known = 3 + len(at) + sum(x is obj for x in self._real_values(n))
            if sys.getrefcount(obj) > known:
                self._fail(f"the result of {self.effects[n].what} (whose death runs a "
                           f"finalizer) is held by an object hop does not follow, so the "
                           f"moment it dies cannot be replayed")
            holds[n] = len(self.effects) if at else last
            slots[n] = min((names.index(k) for k in at if k in names), default=len(names))
        # (kept to the end: ordered by the local's slot, replay keeps them in
        # its list in table order, so the table's order must be the slots')
        ends = sorted(n for n in holds if holds[n] == len(self.effects))
        if [slots[n] for n in ends] != sorted(slots[n] for n in ends):
            self._fail("results of calls whose death runs a finalizer held by locals in "
                       "another order than they were made: eager's frame drops them in its "
                       "locals' order, which hop's replay does not follow")
        self.drops = []
        return holds

    def _no_drops_past(self, snap):
        """Unsupported when the root frame holds a noted result at a graph
        break (snap: _Stop's): the plan would hand the translation's object
        to every call's resume as a constant, alive as long as the plan,
        where eager's dies with this call's frame."""
        _, stack, fast, _, neffects = snap
        for n, obj, _ in self.drops:
            if n < neffects and any(v is obj for v in itertools.chain(stack, fast.values())):
                self._fail(f"the result of {self.effects[n].what} (whose death runs a "
                           f"finalizer) is held across a graph break, where the plan would "
                           f"keep the translation's object alive")

    def _real_values(self, n):
        """The items of effect n's target (a container that existed before
        the call, whose shadow the translation changed)."""
        t = self.effects[n].target
        return t.values() if isinstance(t, dict) else t if isinstance(t, (list, deque)) else ()

    def _materialized(self, f, args, kwargs):
        """f(*args, **kwargs) (hop's: a HOP traces the user's bodies, which
        read cells, globals and attributes themselves) with the values this
        translation assigned put in place for the call, then taken back."""
        if self.shadows:
            self._fail(f"{getattr(f, '__qualname__', f)}() after a change to a list, dict or "
                       f"set the function did not make (its bodies would not see it)")
        undo = []
        try:
            for c in [c for c in self._cell_objs if id(c) in self.cells]:
                try:
                    undo.append(("cell", c, None, c.cell_contents))
                except ValueError:
                    undo.append(("cell", c, None, _DELETED))
                v = self.cells[id(c)]
                if v is _DELETED:
                    del c.cell_contents
                else:
                    c.cell_contents = v
            for (gid, name), v in self.globs.items():
                g = self._glob_objs[gid]
                undo.append(("global", g, name, g.get(name, _DELETED)))
                if v is _DELETED:
                    g.pop(name, None)
                else:
                    g[name] = v
            for kind, d, key in self.lifted:
                if kind == "item":  # (no shadow yet: its dict not loaded)
                    undo.append(("item", d, key, d[key]))
                    d[key] = self.items[id(d)][key]
            for (oid, name), v in self.attrs.items():
                o = self._attr_objs[oid]
                undo.append(("attr", o, name, o.__dict__.get(name, _DELETED)))
                if v is _DELETED:
                    o.__dict__.pop(name, None)
                else:
                    o.__dict__[name] = v
            return f(*args, **kwargs)
        finally:
            for kind, t, name, old in reversed(undo):
                if kind == "cell":
                    if old is _DELETED:
                        try:
                            del t.cell_contents
                        except ValueError:
                            pass
                    else:
                        t.cell_contents = old
                elif kind == "global":
                    if old is _DELETED:
                        t.pop(name, None)
                    else:
                        t[name] = old
                elif kind == "item":
                    t[name] = old
                elif old is _DELETED:
                    t.__dict__.pop(name, None)
                else:
                    t.__dict__[name] = old

    def _written(self, obj):
        """Whether the translation recorded an attribute write to obj (of a
        module: a write to a global of its dict)."""
        i = id(obj)
        if self.globs and isinstance(obj, types.ModuleType):
            d = getattr(obj, "__dict__", None)
            if id(d) in self._glob_objs:
                return True
        return any(k[0] == i for k in self.attrs)

    def _module_attr(self, obj, name, default):
        """mod.name where the translation assigned (or deleted, or lifted)
        the global name of mod's dict: the overlay's value, which hop
        replays after the plan (`global Z; Z = 2; me.Z`: before, the
        module's old Z answered); _UNBOUND where it did not."""
        d = getattr(obj, "__dict__", None)
        v = self.globs.get((id(d), name), _UNBOUND) if id(d) in self._glob_objs else _UNBOUND
        if v is _UNBOUND:
            return v
        if type(obj) is not types.ModuleType:
            self._fail(f"an attribute of a {type(obj).__name__} (a module subclass) whose "
                       f"global {name!r} the function assigned")
        if v is not _DELETED:
            return v
        if default:
            return default[0]
        if "__getattr__" in d:
            self._fail(f"the module attribute {name!r} the function deleted (its module's "
                       f"__getattr__ answers it)")
        raise AttributeError(f"module {obj.__name__!r} has no attribute {name!r}")

    def _getattr(self, obj, name, *default):
        if name == "__class__" and not self.concrete and hasattr(type(obj), "_user_class") \
                and _C.tracing() is not None:
            return type(obj)._user_class(obj)
        if name == "__dict__" and (self.attrs or self.globs) and self._written(obj):
            self._fail("__dict__ of an object whose attributes the function set (hop "
                       "replays those writes after the plan: the dict would miss them)")
        if self.globs and isinstance(obj, types.ModuleType):
            v = self._module_attr(obj, name, default)
            if v is not _UNBOUND:
                return v
        if self.attrs:
            v = self.attrs.get((id(obj), name), _UNBOUND)
            if v is _DELETED:
                if default:
                    return default[0]
                raise AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}")
            if v is not _UNBOUND:
                return v
        t = type(obj)
        if name in _WRITE_ONLY and t in _MUTATORS and name in _MUTATORS[t] and \
                self._kind(obj) == "pre":
            # G.append taken (for map(), a partial, a later call): the load of
            # G it consumed reads nothing of G (as a write-only method's
            # receiver, _load_method)
            i = id(self.real.get(id(obj), obj))
            self.loads[i] = self.loads.get(i, 1) - 1
        key = ("attr", id(obj), name)
        if key not in self.written:
            self.read.add(key)  # its value before the call: read (unguard keeps its guard)
        if default:
            return self._sub(getattr(obj, name, default[0]))
        v = getattr(obj, name)
        if name == "__dict__" and type(v) is dict and not self.concrete:
            self.namespaces.add(id(v))  # (the object holds it: its id stays its own)
        return self._sub(v)

    # ----------------------------------------------------- state: reads

    def _load_global(self, fr, name):
        g = fr.func.__globals__
        if self.globs:
            v = self.globs.get((id(g), name), _UNBOUND)
            if v is _DELETED:
                raise NameError(f"name {name!r} is not defined")
            if v is not _UNBOUND:
                return v
        key = ("global", id(g), name)
        if key not in self.written:
            self.read.add(key)
        # (no try around g[name]: eager's NameError has no __context__)
        if name in g:
            return self._sub(g[name])
        b = g.get("__builtins__", builtins)
        b = b if isinstance(b, dict) else vars(b)
        if name in b:
            return b[name]
        raise NameError(f"name {name!r} is not defined")

    def _load_cell(self, fr, name):
        c = fr.cells[name]
        if self.cells:
            v = self.cells.get(id(c), _UNBOUND)
            if v is _DELETED:
                raise _unbound_cell(fr, name)
            if v is not _UNBOUND:
                return v
        if id(c) not in self.made:
            key = ("cell", id(c))
            if key not in self.written:
                self.read.add(key)
        v = _cell_value(c)
        if v is _EMPTY:  # (raised outside an except: eager's error has no __context__)
            raise _unbound_cell(fr, name)
        return self._sub(v) if type(v) in _CONTAINERS or type(v) is _ndarray_type() else v

    def _load_method(self, obj, name):
        if self.concrete:
            return getattr(obj, name)
        t = type(obj)
        muts = _MUTATORS.get(t)
        if muts is not None and name in muts:
            kind = self._kind(obj)
            if kind == "pre":
                real = self.real.get(id(obj), obj)
                if name in _WRITE_ONLY:
                    i = id(real)
                    self.loads[i] = self.loads.get(i, 1) - 1
                if t is set and name != "pop" and id(real) in self.set_reads:
                    self.set_reads[id(real)][0] -= 1  # (a receiver: no order read)
                return _Recorded(real, self._shadow(real), name)
            if kind is None:
                self._fail(f"{t.__name__}.{name}() on a {t.__name__} hop cannot trace to its "
                           f"owner (not the function's own, not reached from its arguments "
                           f"or environment)")
        return self._getattr(obj, name)

    # ---------------------------------------------------- state: writes

    def _store_global(self, fr, name, v):
        g = fr.func.__globals__
        if self.concrete:
            if v is _DELETED:
                if name not in g:
                    raise NameError(f"name {name!r} is not defined")
                del g[name]
            else:
                g[name] = v
            return
        key = ("global", id(g), name)
        if v is _DELETED:
            # (del reads: the name must be bound, as eager's NameError says)
            now = self.globs.get((id(g), name), _UNBOUND) if self.globs else _UNBOUND
            if now is _DELETED or now is _UNBOUND and name not in g:
                raise NameError(f"name {name!r} is not defined")
            if now is _UNBOUND and key not in self.written:
                self.read.add(key)
        self.written.add(key)
        self.globs[(id(g), name)] = v
        self._glob_objs[id(g)] = g
        if v is _DELETED:
            self._record("del_global", g, name, (), f"del global {name}")
        else:
            self._record("global", g, name, (v,), f"global {name} =")

    def _store_cell(self, fr, name, v):
        c = fr.cells[name]
        if id(c) in self.made or self.concrete:
            if v is _DELETED:
                if _cell_value(c) is _EMPTY:  # (eager's error; CPython's cell allows it)
                    raise _unbound_cell(fr, name)
                del c.cell_contents
            else:
                c.cell_contents = v
            return
        if v is _DELETED:
            now = self.cells.get(id(c), _UNBOUND) if self.cells else _UNBOUND
            if now is _DELETED:
                raise _unbound_cell(fr, name)
            if now is _UNBOUND:
                if ("cell", id(c)) not in self.written:
                    self.read.add(("cell", id(c)))  # (del reads: its guard stays)
                if _cell_value(c) is _EMPTY:
                    raise _unbound_cell(fr, name)
        self.written.add(("cell", id(c)))
        self.cells[id(c)] = v
        self._cell_objs.append(c)
        if v is _DELETED:
            self._record("del_cell", c, name, (), f"del nonlocal {name}")
        else:
            self._record("cell", c, name, (v,), f"nonlocal {name} =")

    def _store_attr(self, obj, name, v):
        kind = "made" if self.concrete else self._kind(obj)
        hook = None if self.concrete else _attr_store_code(obj, name, v is _DELETED)
        if hook is not None:
            # (the user's __setattr__, __delattr__ or descriptor decides
            # what the object holds: the overlay's value would not be it,
            # and a made object's store run for real would run that code
            # once, at translation time)
            if kind == "made" and _user_function(hook[0]):
                self._inline(hook[0], hook[1] + (() if v is _DELETED else (v,)), {})
                return None
            self._fail(f"an attribute {'deletion' if v is _DELETED else 'write'} to a "
                       f"{type(obj).__name__} that runs code ({hook[2]})")
        if kind == "made":
            if v is _DELETED:
                delattr(obj, name)
            else:
                setattr(obj, name, v)
            return
        if kind is None or isinstance(obj, (types.ModuleType, type)) or \
                isinstance(obj, _C.Tensor):
            self._fail(f"an attribute write to a {type(obj).__name__} hop cannot trace to its "
                       f"owner" if kind is None else
                       f"an attribute write to the {type(obj).__name__} {obj!r}")
        if not hasattr(obj, "__dict__") or isinstance(inspect.getattr_static(type(obj), name,
                                                                             None), property):
            self._fail(f"an attribute write to a {type(obj).__name__} that runs code (a "
                       f"property or __slots__)")
        if isinstance(inspect.getattr_static(type(obj), name, None), types.GetSetDescriptorType):
            # `o.__class__ = B`, `o.__dict__ = {...}`: the store changes what
            # every later read of o answers (isinstance(o, A), o.k), which
            # the overlay of o.name would not (before: isinstance(o, A) kept
            # the old class after `o.__class__ = B`)
            self._fail(f"a write to {type(obj).__name__}.{name} (C code that changes what the "
                       f"object answers)")
        key = ("attr", id(obj), name)
        if v is _DELETED or id(obj) in self.opaque_objs or name in self.opaque_names:
            # (del needs the attribute to exist; code run eagerly before may have read it)
            if key not in self.written:
                self.read.add(key)
        self.written.add(key)
        self.attrs[(id(obj), name)] = v
        self._attr_objs[id(obj)] = obj
        if v is _DELETED:
            self._record("del_attr", obj, name, (), f"del .{name}")
        else:
            self._record("attr", obj, name, (v,), f"{type(obj).__name__}.{name} =")

    def _store_item(self, obj, k, v):
        hit = self.env_arrays.get(id(obj))
        if hit is not None and hit[1] is obj:
            # (an environment ndarray: a write to it is an effect hop does
            # not replay, as before it was loaded as hop.numpy's array)
            self._fail("an item write to a ndarray hop cannot replay")
        if self.concrete:  # (at the user's line: _at_line)
            if v is _DELETED:
                return _at_line(self._cur, "delitem")(obj, k)
            return _at_line(self._cur, "setitem")(obj, k, v)
        kind = self._kind(obj)
        if kind == "made" or kind is None and (_traced(obj) or isinstance(obj, _C.Tensor)) or \
                _numpy_written_back(obj):
            if v is _DELETED:
                del obj[k]
            else:
                obj[k] = v
            return
        if kind is None or type(obj) not in (list, dict):
            self._fail(f"an item write to a {type(obj).__name__} hop cannot replay" if
                       kind is not None else
                       f"an item write to a {type(obj).__name__} hop cannot trace to its owner")
        real = self.real.get(id(obj), obj)
        self.loads[id(real)] = self.loads.get(id(real), 1) - 1
        s = self._shadow(real, "__setitem__" if v is not _DELETED else "__delitem__", k)
        if v is _DELETED:
            del s[k]
            self._record("del_item", real, None, (k,), f"del {type(real).__name__}[...]")
        else:
            s[k] = v
            self._record("item", real, None, (k, v), f"{type(real).__name__}[...] =")

    # ------------------------------------------------------- afterwards

    def _set_order_free(self, v):
        """v, a load counted by _sub, is used for something that reads no
        order (`in`, len())."""
        if type(v) is set and self.set_reads:
            n = self.set_reads.get(id(self.real.get(id(v), v)))
            if n is not None:
                n[0] -= 1

    def _set_order_unread(self):
        """Unsupported when the function loaded a set it changed (a set that
        existed before the call) for anything but another change: what it
        was loaded for (iteration, list(), repr, |) may read its order, and
        the translation's copy of the set has another table than the real
        set the replay changes (the order of {1, 9, 17} after removals is
        the history's), so the translation would answer in another order
        than eager.  Its membership and length would do, but the load does
        not say what it is for."""
        for n, site in self.set_reads.values():
            if n > 0:
                raise Unsupported(f"a set the function changed is read again (its order may "
                                  f"differ from eager's: hop's copy of it has another table)",
                                  site)

    def write_only(self):
        """The ids of pre-existing containers the function only wrote
        through write-only methods: their length and items need no guard."""
        return {id(r) for r in self.real.values() if self.loads.get(id(r), 0) <= 0}

    def unread_writes(self):
        """("cell", id) / ("global", id(globals), name) / ("attr", id(obj),
        name) the function wrote and never read before: no guard on their
        value."""
        return self.written - self.read

    def opaque_call(self, f, args, kwargs):
        """Notes what a call run eagerly (not translated) may read: every
        attribute of the objects it is given and the attribute names the code
        of a function among f and its arguments mentions (a HOP body), so an
        attribute the function writes after is still guarded.  A container
        the function changed before (its shadow holds the change until the
        plan runs) that such a function reads is Unsupported: the body, traced
        now, would read the old contents."""
        changed = self._shadowed_reach((f,) + tuple(args) + tuple(kwargs.values()))
        if changed is not None:
            self._fail(f"{getattr(f, '__qualname__', type(f).__name__)}() runs a function "
                       f"that reads a {type(changed).__name__} the function changed before "
                       f"the call (the change is replayed after the plan runs, so the "
                       f"function would read the {type(changed).__name__} as it was)")
        for v in (f,) + tuple(args) + tuple(kwargs.values()):
            code = quiet_attr(v, "__code__")
            if isinstance(code, types.CodeType):
                self.opaque_names |= _code_names(code)
            elif quiet_attr(v, "__dict__") is not None and \
                    not isinstance(v, (types.ModuleType, type)):
                self.opaque_objs.add(id(v))
            s = quiet_attr(v, "__self__")
            if s is not None and quiet_attr(s, "__dict__") is not None:
                self.opaque_objs.add(id(s))


    def _shadowed_reach(self, vals):
        """A container the function changed before this point (one with a
        shadow) that the Python functions among vals read: through their
        closure cells and globals, the functions and containers those hold,
        a bound method's function and object, and the attributes of hop's
        transforms' callable objects (hop.grad(f) holds f; not the
        translator's own models, which read the shadows); at most
        _SHADOW_REACH objects are looked at.  None when there is none."""
        if not self.shadows:
            return None
        todo, seen = list(vals), set()
        while todo and len(seen) < _SHADOW_REACH:
            v = todo.pop()
            if id(v) in seen or type(v) in _SHADOW_WALLS:
                continue
            seen.add(id(v))
            if id(v) in self.shadows:
                return v
            t = type(v)
            if t is types.FunctionType:
                todo.extend(r[3] for r in _reads.roots(v, _SHADOW_POLICY)
                            if r[3] is not _reads.MISSING)
            elif t is types.MethodType:
                todo.extend((v.__func__, v.__self__))
            elif t in (list, tuple, set, frozenset) and len(v) <= _SHADOW_REACH:
                todo.extend(v)
            elif t is dict and len(v) <= _SHADOW_REACH:
                todo.extend(v.values())
            elif getattr(t, "__module__", None) in _SHADOW_HOLDERS and \
                    isinstance(getattr(v, "__dict__", None), dict):
                todo.extend(v.__dict__.values())
        return None


class _ShadowPolicy(_reads.Policy):
    hop_cells = True  # hop's functions: their cells (a user's function), not hop's globals


_SHADOW_POLICY = _ShadowPolicy()
_SHADOW_REACH = 512
_SHADOW_HOLDERS = frozenset(["hop._autodiff", "hop._vmap", "hop._hops", "hop._compile"])
_SHADOW_WALLS = frozenset([int, float, bool, complex, str, bytes, type(None), types.ModuleType,
                           types.CodeType, type, range, slice, _C.Tensor, _C.SymInt])
_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))
_DICT_ITERS = frozenset(type(it) for it in (iter({}), iter({}.values()), iter({}.items())))


def _iterator_like(v):
    """Whether v is a builtin iterator or dict view (what may walk a
    container lazily: not a container itself, not the user's object)."""
    t = type(v)
    if t in _VIEWS:
        return True
    return t.__module__ in ("builtins", "itertools") and hasattr(t, "__next__")


def _passed(it, real, op, key):
    """Whether the change op(key) of real leaves what iterator or view
    `it` over it still yields eager's items: a write of an existing key
    of a dict a keys view or an iterator has passed, of a list index a
    list iterator has passed."""
    if op != "__setitem__":
        return False
    t = type(it)
    if type(real) is dict:
        try:
            if key not in real:
                return False
        except TypeError:
            return False
        if t is _VIEWS[0]:
            return True  # (the keys stay)
        if t in _DICT_ITERS:
            keys = list(real)
            return all(k is not key and k != key
                       for k in keys[len(keys) - it.__length_hint__():])
        return False
    if type(real) is list and t is type(iter([])) and type(key) is int:
        r = it.__reduce__()
        at = r[2] if len(r) > 2 else len(real)  # (an exhausted one: nothing left)
        i = key + len(real) if key < 0 else key
        return 0 <= i < at
    return False


def _attr_store_code(obj, name, delete):
    """(function, its arguments, what) of the Python code that
    `obj.name = v` (delete: `del obj.name`) runs besides object's own
    store -- a __setattr__ or __delattr__ of obj's class, a property's
    setter or deleter, a descriptor's __set__ or __delete__ -- the
    arguments but v (the caller adds it to a store's); None when the store
    is object's own."""
    cls = type(obj)
    meth = getattr(cls, "__delattr__" if delete else "__setattr__", None)
    if isinstance(meth, types.FunctionType):
        what = "__delattr__" if delete else "__setattr__"
        return meth, (obj, name), f"{cls.__name__}.{what}"
    attr = inspect.getattr_static(cls, name, None)
    if isinstance(attr, property):
        fn = attr.fdel if delete else attr.fset
        what = f"the property {cls.__name__}.{name}"
        return (fn, (obj,), what) if isinstance(fn, types.FunctionType) else (None, (), what)
    hook = getattr(type(attr), "__delete__" if delete else "__set__", None)
    if isinstance(hook, types.FunctionType):
        return hook, (attr, obj), f"the descriptor {cls.__name__}.{name}"
    return None


def _code_names(code, depth=0):
    out = set(code.co_names)
    if depth < 8:
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                out |= _code_names(c, depth + 1)
    return out
