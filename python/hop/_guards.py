"""Guard sources: what a traced function read from its environment, and how
a compiled call checks it is still the same.

A trace bakes in what the function read outside its tensor arguments: the
globals and closure cells of the function and of the helper functions it
calls, the defaults, the attributes of argument objects (`m.w`), and the
items of small containers reached through those.  `scan` walks them once at
trace time and records one Guard per value, each with a Source (a root --
a global, a closure cell, an argument, the function itself -- and a path of
attribute and item steps) that re-reads the value on a later call:

  tensor  a concrete tensor the trace captured: a root input of the plan.
          Each call passes the tensor its source holds now (the plan's C
          guards check its dtype and sizes), so rebinding `w` between calls
          is seen without a retrace.
  value   a Python scalar (int, float, bool, complex, str, bytes, None, a
          NumPy scalar): equal value AND the same type (2, 2.0 and True give
          different dtypes); NaN equals NaN, 0.0 does not equal -0.0.
  id      anything else (functions, classes, objects, uncaptured tensors,
          NumPy arrays, containers): the same object, held weakly where
          Python allows (Guard), so a replaced object is freed and a freed
          one's guard never passes; lists, dicts, tuples and objects of a
          class with __slots__ and no __weakref__ are held strongly.
  len     a list or dict, a deque, array.array or bytearray: the same
          length (its items guarded too when it has at most _MAX_ITEMS).
  eq      a small set: an equal set iterating in the same order (an equal
          set built another way can iterate in another order, which eager
          code reading it - list(s), a for loop - sees).
  absent  a global the code loads that neither the globals nor the
          builtins defined, or an empty closure cell: still so (eager reads
          a global defined or a cell filled later).
  lacks   an object of the user's class whose class answers names the
          code names (a method, a class attribute): its __dict__ still holds
          none of them (`o.m = g` between calls shadows the class's).
  names   one per plan: the builtins the code loads as globals (len, range)
          are still the builtins' objects and no global of the code's module
          shadows them (BuiltinNames: checked by dict version tags, in C);
          and the callables of modules the code names (math.sqrt, np.sin,
          not hop's own) are still the modules' objects.

What is not walked: modules' callables and classes (hop.cond, np.sin; only
their binding is guarded, above),
attributes the function's code does not name, containers of more than
_MAX_ITEMS items (guarded by identity and length only), anything deeper than
_MAX_DEPTH steps.  A captured tensor found through none of the sources keeps
the object it had at trace time (guarded by identity only); explain() lists
those.

Checking is two-tier.  The fast check, generated as one Python expression,
compares every source with `is` against the objects seen last; it costs a few
tens of ns per guard and nothing when there are none.  Only when it fails does
`revalidate` check each guard by its kind, and on success the runner keeps
the new objects (and the new captured tensors) for the next fast check.
"""

import array
import builtins
import collections
import functools
import keyword
import math
import operator
import sys
import types
import weakref

from . import _C
from ._reads import HopRef
from ._reads import MISSING, Policy, Walk, is_hop_function, is_hop_module, is_user_module, \
    loaded_hop_numpy, names_of, roots

try:
    import numpy as _np
except ImportError:  # NumPy is optional at run time
    _np = None

__all__ = ["scan", "Source", "Guard", "Guards"]

_MAX_DEPTH = 4     # path steps below a root
_MAX_ITEMS = 16    # container items walked; bigger ones are guarded by identity
_MAX_GUARDS = 512  # beyond this, what is left is not walked (and said so)
_MAX_FUNCTIONS = 64

_VALUE_TYPES = (int, float, complex, str, bytes, type(None), type(Ellipsis))
_INEXACT = (float, complex)
if _np is not None:
    _VALUE_TYPES += (_np.generic,)
    _INEXACT += (_np.inexact,)
# Objects whose attributes are not walked: code, classes, modules' innards.
_OPAQUE = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
           types.ModuleType, types.CodeType, _C.Tensor, type(_C.float32))


# The standard library's mutable sequences without a __dict__ to walk: their
# length and items are guarded as a list's (before, only their identity: a
# closed-over deque's d[0] or len(d) was baked into the plan, silently).
_SEQUENCES = (collections.deque, array.array, bytearray)


def is_value(v):
    return isinstance(v, _VALUE_TYPES) and not isinstance(v, _C.Tensor)


def same_value(a, b):
    """a and b are equal scalars of the same type (NaN equals NaN), and a
    float zero (or a complex's zero part) has the same sign in both: 0.0 ==
    -0.0, but a plan made for one gives 1 / x, copysign and the text of the
    other wrongly."""
    if type(a) is not type(b):
        return False
    try:
        if a == b:
            return not isinstance(a, _INEXACT) or _zero_signs(a) == _zero_signs(b)
        return a != a and b != b  # both NaN (or a NaN in a complex)
    except Exception:
        return False


def _zero_signs(z):
    """The signs of a float's (or a complex's two parts') zeros."""
    z = complex(z)
    return math.copysign(1.0, z.real), math.copysign(1.0, z.imag)


def _array_tensor(v, scalar):
    """The tensor hop.numpy array v holds now (its _t); TypeError when v is
    no longer such an array, or a NumPy scalar where it was an array (or
    the other way): NumPy's semantics for it differ."""
    if type(v) is not _hnp_ndarray() or v._scalar is not scalar:
        raise TypeError(f"it is no longer a hop.numpy {'scalar' if scalar else 'array'}")
    return v._t


def _entry(d, key):
    """The value of dict d's item whose key is the object key, found by
    identity: no __hash__ or __eq__ runs (a plain dict's items() runs no
    code of the user's).  KeyError when d holds no such key object, and
    TypeError when d is no longer a plain dict: the guard fails."""
    if type(d) is not dict:
        raise TypeError("it is no longer a dict")
    for k, v in d.items():
        if k is key:
            return v
    raise KeyError("the key object is no longer in the dict")


class Source:
    """Where a value comes from: a root and a path of ("attr", name),
    ("item", key), ("entry", key) and ("array", scalar) steps (entry: a
    plain dict's item whose key is the object key, found by identity,
    _entry; array: the tensor a
    hop.numpy array holds now, what eager computes with; the array must
    still be one, NumPy scalar or not as when traced).  kind is "global" (base: the globals dict, key:
    the name), "cell" (base: the cell, key: the variable's name), "arg"
    (key: the index of the argument leaf, text: its name) or "obj" (base:
    the object itself, text: how to name it)."""

    __slots__ = ("kind", "base", "key", "path", "text")

    def __init__(self, kind, base, key, text, path=()):
        self.kind = kind
        self.base = base
        self.key = key
        self.text = text
        self.path = path

    def child(self, step, key):
        return Source(self.kind, self.base, self.key, self.text, self.path + ((step, key),))

    def read(self, leaves):
        if self.kind == "global":
            v = self.base[self.key]
        elif self.kind == "cell":
            v = self.base.cell_contents
        elif self.kind == "arg":
            v = leaves[self.key]
        else:
            v = self.base
        for step, key in self.path:
            v = getattr(v, key) if step == "attr" else _array_tensor(v, key) \
                if step == "array" else _entry(v, key) if step == "entry" else v[key]
        return v

    def __repr__(self):
        # (an entry's key by its class: its repr would be the user's code)
        return self.text + "".join(f".{k}" if s == "attr" else "" if s == "array" else
                                   f"[<{type(k).__name__} key>]" if s == "entry" else
                                   f"[{k!r}]" for s, k in self.path)

    def hint(self):
        """A placeholder name for a tensor read from here."""
        parts = [self.key if self.kind in ("global", "cell") else
                 self.text if self.kind == "arg" else ""]
        for s, k in self.path:
            if s == "entry":
                parts.append(type(k).__name__)
                continue
            if s == "array" or k in ("__self__", "__defaults__", "__kwdefaults__"):
                continue  # (a hop.numpy array's tensor is named as the array)
            parts.append(str(k) if s == "attr" else str(k).strip("'\""))
        name = "_".join(p for p in parts if p)
        name = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
        return name if name and not name[0].isdigit() else "_" + name


class Guard:
    """One thing the trace assumed: source holds `expected` (kind: tensor,
    value, id, len or eq).  capture: for a tensor, its index among the
    plan's captured inputs.

    An id guard holds its object weakly where Python allows (weak: a
    weakref.ref in held), so a plan does not keep alive what the user
    replaced: `expected` is then the object, or None once it was freed, and
    a guard whose object was freed never passes (a new object at the same
    address is another object).  Objects that cannot be weakly referenced
    (lists, dicts, tuples, instances of a class with __slots__ and no
    __weakref__) are held as before, strongly."""

    __slots__ = ("source", "kind", "held", "capture", "weak")

    def __init__(self, source, kind, expected, capture=None):
        self.source = source
        self.kind = kind
        self.expected = expected
        self.capture = capture

    @property
    def expected(self):
        return self.held() if self.weak else self.held

    @expected.setter
    def expected(self, v):
        # (held: what the fast check's state holds for this guard)
        self.weak = False
        # (not an ndarray: NumPy refuses to resize an array with a weak
        # reference, `G.resize(n, refcheck=False)` raised after a compile
        # read G; the plan's captured tensor holds it anyway)
        if self.kind == "id" and not (_np is not None and isinstance(v, _np.ndarray)):
            try:
                self.held = HopRef(v)
                self.weak = True
                return
            except TypeError:
                pass
        self.held = v

    def describe(self):
        e = self.expected
        if self.weak and e is None:
            return f"{self.source!r} is the same object (freed since: never passes)"
        if self.kind == "tensor":
            return f"{self.source!r} is captured input {self.capture} (re-read every call)"
        if self.kind == "value":
            return f"{self.source!r} == {e!r} ({type(e).__name__})"
        if self.kind == "layout":
            return f"{self.source!r} keeps its shape, strides, dtype, memory and flags in place"
        if self.kind == "ndarray":
            return (f"{self.source!r} is the same ndarray object (its id and layout: hop keeps "
                    f"no reference to it)")
        if self.kind == "len":
            return f"len({self.source!r}) == {e}"
        if self.kind == "lacks":
            return f"{self.source!r} holds none of {', '.join(e)} (its class's answer)"
        if self.kind == "contents" and type(e) is Uncomparable:
            return (f"{self.source!r} holds Python objects (a HOP body read it, where NumPy "
                    f"computes with it while tracing; hop cannot compare such contents: every "
                    f"call retraces)")
        if self.kind == "contents":
            return (f"{self.source!r} holds what it held when traced (a HOP body read it, where "
                    f"NumPy computes with it while tracing: a change inside it retraces)")
        if self.kind == "eq":
            return f"{self.source!r} == {set(e)!r} iterating in the order {e!r}"
        if self.kind == "names":
            return "; ".join(e.describe())
        if self.kind == "absent":
            return f"{self.source!r} is " + ("not defined" if self.source.kind == "global" else
                                              "empty")
        return f"{self.source!r} is the same {_what(e)}"


def _array_like(v):
    """Whether v is an object a call's argument leaf can be that a trace
    takes for a proxy: a hop.Tensor or an ndarray."""
    return isinstance(v, _C.Tensor) or _np is not None and isinstance(v, _np.ndarray)


def _leaf_kind(v):
    return "ndarray" if _np is not None and isinstance(v, _np.ndarray) else "tensor"


def _what(v):
    if isinstance(v, _C.Tensor):
        return f"tensor ({_C._meta_text(v)})"
    if isinstance(v, (types.FunctionType, type)):
        return f"{type(v).__name__} {getattr(v, '__qualname__', '?')}"
    return f"{type(v).__name__} object"


# ------------------------------------------------------------------ scan

def _hop_object(v):
    """Whether v is one of hop's own objects (a hop.compile or hop.grad
    wrapper, a GraphModule, a HOP): never the user's state."""
    return not isinstance(v, (types.FunctionType, type, types.ModuleType)) and \
        is_hop_module(getattr(type(v), "__module__", "") or "")


def _hnp_ndarray():
    """hop.numpy's ndarray class, or None before hop.numpy is imported whole
    (no such array exists then; _reads.loaded_hop_numpy)."""
    m = loaded_hop_numpy()
    return m.ndarray if m is not None else None


def _wrapped(v):
    """The user's function a hop wrapper runs (hop.compile(f), hop.grad(f),
    hop.vmap(f) wrap f), or None."""
    for _ in range(16):
        if not _hop_object(v):
            return v if isinstance(v, types.FunctionType) else None
        v = getattr(v, "__wrapped__", None)
        if v is None:
            return None
    return None


class _Scan:
    """The state of one scan: guards found, tensors by identity, what was
    left unwalked."""

    def __init__(self):
        self.guards = []
        self.tensors = {}    # id(tensor) -> (tensor, [Source])
        self.walk = Walk()
        self.seen = self.walk.seen            # ids of walked functions and objects
        self.functions = self.walk.functions  # Python functions whose code was scanned
        self.names = set()   # every name the scanned code uses
        self.skipped = []    # text: what was guarded by identity without a walk
        self.builtins = []   # (globals, builtins, name, value, pinned): builtins the code names
        self.builtin_keys = set()
        self.probed = (0, ())  # (_probed)
        self.computed = (0, False)  # (_computed)
        self.fdicts = []     # (function, its __dict__): the names guard's, _function_attrs
        self.fattrs = set()  # ids of functions whose attributes _visit read
        # (__dict__ or None, class or None, the names known then, whether
        # computed names were) of each object, class and module whose
        # attributes were read (_walked)
        self.walked = []
        self.snap = (0, frozenset())
        self.orders = []     # (source, dict): small dicts whose key order is guarded
        self.dunder_classes = set()  # ids of classes whose special methods are guarded

    def add(self, source, kind, value):
        self.guards.append(Guard(source, kind, value))

    def full(self):
        return len(self.guards) >= _MAX_GUARDS


def scan(fn, arg_leaves=(), arg_names=(), static=()):
    """Walks what fn can read (see the module's doc) and returns a _Scan.
    arg_leaves are the flattened arguments; static[i] says leaf i is not a
    tensor argument (only those are walked: their own identity or value is
    guarded by the runner).

    An object's attributes are guarded for the names the code scanned so
    far names; code found later in the walk (a method of an object visited
    after, whose code reads `o.z` of a global o visited before) names more:
    then the walk runs again knowing every name (at most _MAX_PASSES times;
    before, such an o.z was not guarded and its traced value answered on)."""
    names, computed = set(), False
    for _ in range(_MAX_PASSES):
        s = _scan_once(fn, arg_leaves, arg_names, static, names, computed)
        if s.full() or not _stale(s):
            break
        names, computed = set(s.names), _computed(s)
    return s


_MAX_PASSES = 3


def _scan_once(fn, arg_leaves, arg_names, static, names, computed):
    s = _Scan()
    s.names |= names
    s.computed = (-1, True) if computed else s.computed  # (-1: kept, never asked again)
    roots = []
    if _hop_object(fn):
        # hop's wrapper (hop.compile(hop.grad(f))): what runs is the user's f;
        # the wrapper's own attributes (its caches) are not the user's state
        fn = _wrapped(fn)
        if fn is None:
            fn = _NOTHING
    body = getattr(fn, "_hop_body", None) if type(fn) is types.FunctionType else None
    if body is not None and not isinstance(body, types.FunctionType):
        # hop.grad's (hop.vmap's) run of a bound method or a callable
        # object: what it reads through its self is the user's state (run's
        # own cells are hop's); a function is walked through run's cell
        fn = body
    func, self_obj = fn, None
    if isinstance(fn, types.MethodType):
        func, self_obj = fn.__func__, fn.__self__
        roots.append((Source("obj", fn, None, "the bound method's self", (("attr", "__self__"),)),
                      self_obj))
    elif not isinstance(fn, types.FunctionType) and not isinstance(fn, _OPAQUE) and \
            isinstance(getattr(type(fn), "__call__", None), types.FunctionType):
        func, self_obj = type(fn).__call__, fn
        roots.append((Source("obj", fn, None, "the callable object"), fn))
    if isinstance(func, types.FunctionType):
        _collect_functions(s, func)
    # A function passed as an argument runs under the trace too (its own
    # identity is guarded by the runner).
    for i, leaf in enumerate(arg_leaves):
        if static[i] and _hop_object(leaf):
            leaf = _wrapped(leaf)
        if static[i] and isinstance(leaf, types.FunctionType) and not is_hop_function(leaf):
            _collect_functions(s, leaf)
    _spelled_names(s, [leaf for i, leaf in enumerate(arg_leaves) if static[i]])
    if self_obj is not None:
        _method_names(s, type(self_obj))
    for i, leaf in enumerate(arg_leaves):
        if static[i] and not is_value(leaf):
            src = Source("arg", None, i, arg_names[i] if i < len(arg_names) else f"arg{i}")
            _walk_children(s, src, leaf, 0)
    for src, value in roots:
        _visit(s, src, value, 0)
    # Visiting finds more code that runs under the trace (the methods of the
    # objects reached): their cells and globals are read too.  (In C: the
    # loop, each function's roots and builtins, and the identity guard of a
    # function in a cell or a global, a nest's every level; the rest here.)
    _C._guard_scan_functions(s, Source, Guard, _visit_root, _scan_function, _MAX_GUARDS)
    _globals_reads(s)
    _imports_read(s)
    _function_attrs(s)
    return s


def _imports_read(s):
    """The modules the scanned code imports itself (`import mod` or `from
    mod import k` inside a function): roots as a global module is, whose
    attributes the code names are guarded (before, `mod.k` read after an
    import in the body was baked into the plan: `mod.k = 2` between calls
    was not seen).  The module found now in sys.modules; a package's
    top module too (`import a.b` binds a)."""
    seen = set()
    # (the functions whose code imports, sifted in C: a nest's levels import
    # nothing, and this loop cost ~3 K instructions a function)
    fns = _C._guard_sift(s.functions, "imports", _SPELLED)
    for f in list(s.functions) if fns is None else fns:
        code = getattr(f, "__code__", None)
        # (the per-code record, keyed by id: a WeakKeyDictionary's lookup
        # made a weak reference and hashed the code, a nest's every level)
        imports = names_of(code).imported() if isinstance(code, types.CodeType) else ()
        if not imports:
            continue
        g = getattr(f, "__globals__", None) or {}
        for name, level in imports:
            if level:
                package = g.get("__package__") or ""
                parts = package.split(".")
                if level - 1 >= len(parts) or not package:
                    continue
                base = ".".join(parts[:len(parts) - level + 1])
                name = f"{base}.{name}" if name else base
            for full in {name, name.partition(".")[0]}:
                m = sys.modules.get(full)
                if isinstance(m, types.ModuleType) and id(m) not in seen:
                    seen.add(id(m))
                    _visit(s, Source("obj", m, None, f"module {full}"), m, 0)


def _function_attrs(s):
    """The attributes of the plain functions the scan reached (walked, or
    guarded by identity) that the code may read: those a function holds and
    the code names, guarded as an object's (`mylib.helper.k`, `C.m.k`: a
    function reached only through the walk, not through a global or a cell
    _visit reads; before, its old value answered), and the names the code
    probes with a default that it lacks (getattr(helper, "k", 5),
    hasattr(helper, "k"): before, the default answered on after `helper.k =
    1`).  The absent names are reads of the plan's names guard (BuiltinNames,
    checked in C by the dict's version tag: a compare per function on a
    steady call, not a lacks guard's Python call), with the function's
    __dict__ itself among its codes (an assigned __dict__)."""
    fns = {id(f): f for f in s.functions if type(f) is types.FunctionType}
    for g in s.guards:
        if g.kind == "id":
            e = g.held() if g.weak else g.held  # (Guard.expected, without the property's call)
            if type(e) is types.FunctionType:
                fns.setdefault(id(e), e)
    user = {}  # id(a module's globals) -> whether the module is the user's
    for f in fns.values():
        g = f.__globals__
        mine = user.get(id(g))
        if mine is None:
            mine = user[id(g)] = is_user_module(g.get("__name__") or "")
        if not mine:
            continue  # (hop's, the library's: not the user's state)
        d = f.__dict__  # (made when absent: a later `f.k = 1` writes into it)
        if type(d) is not dict:
            continue
        if id(f) not in s.fattrs and d and not s.names.isdisjoint(d):
            s.fattrs.add(id(f))
            src = Source("obj", f, None, f"function {f.__qualname__}")
            for name in sorted(n for n in s.names if n in d):
                _visit(s, src.child("attr", name), d[name], 1)
        # (_probed's answer while no function was added since: asked per function)
        probed = s.probed[1] if s.probed[0] == len(s.functions) else _probed(s)
        absent = _unanswered(s, types.FunctionType, d) if probed else ()
        if absent:
            s.fdicts.append((f, d))
            s.builtins.extend((d, d, name, f, False) for name in absent)


def _globals_reads(s):
    """The module dicts that code calling globals() reads whole: their
    length (`len(globals())`) and the names it may ask for that are absent
    (`'Q' in globals()`, `globals().get('W', 3)`: _Names.probed), still so
    (the names present are guarded as the globals they are)."""
    seen = set()
    # (the functions whose code calls globals(), sifted in C; the rest are skipped below too)
    fns = _C._guard_sift(s.functions, "globals", _SPELLED)
    for f in list(s.functions) if fns is None else fns:
        g = getattr(f, "__globals__", None)
        code = getattr(f, "__code__", None)
        if type(g) is not dict or id(g) in seen or not isinstance(code, types.CodeType) or \
                "globals" not in names_of(code).set or is_hop_module(g.get("__name__") or ""):
            continue
        seen.add(id(g))
        src = Source("obj", g, None, f"globals() of {g.get('__name__')}")
        s.add(src, "len", len(g))
        absent = tuple(n for n in _unanswered(s, object, {}) if n not in g)
        if absent:
            s.add(src, "lacks", absent)
        for name in sorted(n for n in names_of(code).probed() if n in g):
            _visit(s, Source("global", g, name, f"global {name!r}"), g[name], 0)


def _spelled_names(s, values):
    """Adds to s.names the attribute names the code may read through a
    value rather than its own text (_reads.code_names takes its string
    constants): a string in a global or closure cell its functions read, or
    a constant argument (`getattr(o, NAME)`, `getattr(o, name)`), and the
    names an operator.attrgetter or methodcaller there holds (`AG(o)`).
    Before, `o.w` read so was not guarded, and its old value answered."""
    # (_spell is called for the values it spells only: a nest's every level
    # reads a module, a missing global and the next level's function; C
    # finds them, and when the list holds other than plain functions, None:
    # the loop below)
    found = _C._guard_sift(s.functions, "spelled", _SPELLED)
    for v in found or ():
        _spell(s.names, v)
    for f in list(s.functions) if found is None else ():
        g = f.__globals__
        for name in f.__code__.co_names:
            v = g.get(name)
            if type(v) in _SPELLED:
                _spell(s.names, v)
        for cell in f.__closure__ or ():
            try:
                v = cell.cell_contents
            except ValueError:  # (an empty cell)
                continue
            if type(v) in _SPELLED:
                _spell(s.names, v)
    for v in values:
        _spell(s.names, v)


_SPELLED = frozenset((str, operator.attrgetter, operator.methodcaller))  # (what _spell reads)


def _spell(names, v):
    if type(v) is str:
        if len(v) <= 64:
            names.update(p for p in v.split(".") if p.isidentifier())
    elif type(v) in (operator.attrgetter, operator.methodcaller):
        args = v.__reduce__()[1]
        for a in args if type(v) is operator.attrgetter else args[:1]:
            _spell(names, a)


def _scan_functions(s):
    """_C._guard_scan_functions in Python: the walked functions' roots
    visited and builtin reads added, while s is not full."""
    done = 0
    while done < len(s.functions) and len(s.guards) < _MAX_GUARDS:  # (not s.full())
        f = s.functions[done]
        done += 1
        _scan_function(s, f)


def _scan_function(s, f, builtins_only=False):
    """One walked function's roots visited (not with builtins_only) and its
    builtin reads added."""
    if not builtins_only:
        for kind, name, holder, v in _function_roots(f):
            _visit_root(s, f, kind, name, holder, v)
    _builtin_reads(s, f)


def _visit_root(s, f, kind, name, holder, v):
    _visit(s, _root_source(f, kind, name, holder), v, 0)


class _Follow(Policy):
    """The guards' walk (_reads.Walk, breadth first): f, and the Python
    functions it reaches through its globals, closure cells, defaults and
    the attributes its code names on the user's modules (code of the
    standard library, hop, NumPy, ... excluded): their code is what runs
    under the trace, so what they read is guarded too.  A hop wrapper
    (nested_compile_region's) is followed to the user's function it wraps.
    Every root of a walked function is guarded (empty cells and defaults
    included)."""

    empty_cells = True
    absent_globals = True
    defaults = True
    limit = _MAX_FUNCTIONS

    def __init__(self, s):
        self.s = s

    def reached(self, walk, f):
        self.s.names |= names_of(f.__code__).set

    def modules_of(self, values):
        # mylib.helper(x): the functions of the user's modules the code names.
        return [m for m in values
                if isinstance(m, types.ModuleType) and is_user_module(m.__name__)]

    def callee(self, walk, f, v):
        if not isinstance(v, types.FunctionType):
            return None
        if is_hop_function(v):
            v = getattr(v, "__wrapped__", None)
            if not isinstance(v, types.FunctionType) or is_hop_function(v):
                return None
        return v if is_user_module(v.__globals__.get("__name__", "")) else None


def _function_roots(f):
    """(kind, name, holder, value) for what f reads from outside that a
    visit guards (_reads.roots: its closure cells, the globals its code
    names, its defaults; C's reading of a plain function,
    python/_C/guard_scan.c; a root holding hop's own module too: _visit
    guards the callables the code names on it, `hnp.sum = g`)."""
    rs = _C._guard_roots(f, False) if type(f) is types.FunctionType else None
    return roots(f, _FOLLOW) if rs is None else rs


def _root_source(f, kind, name, holder):
    """The Source of one of f's roots (_function_roots)."""
    if kind == "cell":
        return Source("cell", holder, name, f"closure cell {name!r}")
    if kind == "global":
        return Source("global", holder, name, f"global {name!r}")
    where = "__defaults__" if kind == "default" else "__kwdefaults__"
    return Source("obj", f, None, f"default of {f.__qualname__}", (("attr", where), ("item", name)))


_FOLLOW = _Follow(None)
_NOTHING = object()  # a hop callable wrapping no user function: nothing to scan


_BUILTINS = vars(builtins)
# The globals of a names-guard read of a module's function (`math.sqrt`):
# never written, so only the module's dict decides (BuiltinNames)
_NO_GLOBALS = {}


def _builtin_reads(s, f):
    """The builtins f's code loads as globals (len, range, float) that its
    globals do not define: eager finds the builtin, so a global defined
    later (or builtins.len replaced) changes what the code calls.  A
    plain function's in C (python/_C/guard_scan.c)."""
    if type(f) is types.FunctionType and \
            _C._guard_builtins(f, s.builtin_keys, s.builtins) is not None:
        return
    g = getattr(f, "__globals__", None)
    b = getattr(f, "__builtins__", None)
    b = vars(b) if isinstance(b, types.ModuleType) else b
    if not isinstance(g, dict) or not isinstance(b, dict) or \
            is_hop_module(g.get("__name__") or ""):
        return
    for name in sorted(names_of(f.__code__).global_loads()):
        key = (id(g), name)
        if name not in g and name in b and key not in s.builtin_keys:
            s.builtin_keys.add(key)
            # (pinned: builtins[name] must stay this object; builtins.print
            # need not: a replayed print reads it from this dict every call,
            # python/_C/compiled_call.c, and calls what it finds)
            s.builtins.append((g, b, name, b[name], not (name == "print" and b is _BUILTINS)))


class BuiltinNames(_C._NameGuard):
    """The "names" guard of a plan: every builtin its code names (_builtin_reads:
    globals dict, builtins dict, name, the builtin's object, pinned) is still
    what eager finds: name is not in globals and, pinned, builtins[name] is
    the object.  check() is C's (python/_C/name_guard.c): the dicts' PEP 509
    version tags against those of the last check that held, and, for the
    dicts whose tag moved, their names read again in C (a module-level loop
    writes its globals on every iteration: a lookup per name, no Python).
    The bound C calls check it in C (Guards.check_c), the Python paths
    through the generated check's term."""

    __slots__ = ()

    def failure(self):
        """Why the names (or the codes) no longer hold (a GuardError's
        text), or None."""
        for f, code in self.codes:
            if type(code) is dict and f.__dict__ is not code:
                return (f"guard failed: {f.__qualname__}.__dict__ was assigned since traced "
                        f"(the plan read the attributes of the dict it had then)")
            if type(code) is not dict and f.__code__ is not code:
                return (f"guard failed: {f.__qualname__}.__code__ was assigned since traced "
                        f"(the plan is of the code it had then)")
        for d, keys, text in self.orders:
            if tuple(d) != keys:
                return (f"guard failed: {text} iterated in the order {keys!r} when traced, now "
                        f"in the order {_short(tuple(d))}")
        for g, b, name, v, pinned in self.reads:
            if g is _NO_GLOBALS and b.get(name, MISSING) is not v:
                return (f"guard failed: {b.get('__name__')}.{name} was rebound (or deleted) "
                        f"since traced")
            if g is b and name in g and isinstance(v, type):
                return (f"guard failed: class {v.__qualname__} had no special method {name!r} "
                        f"when traced (Python's answer without it held), now it has")
            if g is b and name in g:
                return (f"guard failed: function {v.__qualname__} had no attribute {name!r} "
                        f"when traced (the code's default or test answered), now it has")
            if name in g:
                return (f"guard failed: {name!r} was the builtin when traced, now the global "
                        f"{name!r} of module {g.get('__name__')!r} shadows it")
            if pinned and b.get(name, MISSING) is not v:
                return f"guard failed: builtin {name!r} was rebound (or deleted) since traced"
        return None

    def __repr__(self):
        return "; ".join(self._parts())

    def _parts(self):
        return [t for t, _ in self._lines()]

    def _lines(self):
        """(what, what holds of it) for the builtins, the functions' absent
        attributes, the codes and the dicts' orders the guard reads, those
        it has."""
        builtin = sorted({r[2] for r in self.reads if r[0] is not r[1] and
                          r[0] is not _NO_GLOBALS})
        modules = sorted({f"{r[1].get('__name__')}.{r[2]}" for r in self.reads
                          if r[0] is _NO_GLOBALS})
        absent = [f"{r[3].__qualname__}.{r[2]}" for r in self.reads
                  if r[0] is r[1] and not isinstance(r[3], type)]
        classes = sorted({r[3].__qualname__ for r in self.reads
                          if r[0] is r[1] and isinstance(r[3], type)})
        codes = [f.__qualname__ for f, c in self.codes if type(c) is not dict]
        orders = [text for _, _, text in self.orders]
        return [(t, why) for t, why in (
            ("builtins " + ", ".join(builtin) if builtin else "",
             "still the builtins' objects, no global shadows them"),
            ("module functions " + ", ".join(modules) if modules else "",
             "still the objects traced"),
            ("function attributes " + ", ".join(absent) if absent else "",
             "still absent (the functions' __dict__ not assigned since)"),
            ("special methods of " + ", ".join(classes) if classes else "",
             "those they lacked still absent"),
            ("the __code__ of " + ", ".join(codes) if codes else "",
             "still the code objects traced (not assigned since)"),
            ("the key order of " + ", ".join(orders) if orders else "",
             "still the order traced (a dict refilled in another order is seen)")) if t]

    def describe(self):
        """explain()'s lines for the guard: the names', the absent
        attributes', the codes', the orders'."""
        return [f"{t}: {why}" for t, why in self._lines()]


def code_reads(functions):
    """The (function, code) pairs of a plan's code guard (BuiltinNames'
    codes): each Python function the trace ran or inlined (the scan's
    functions, the translator's inlined ones), each once, with its code
    now.  A function's identity guard does not see f.__code__ assigned."""
    out, seen = [], set()
    for f in functions:
        if type(f) is types.FunctionType and id(f) not in seen:
            seen.add(id(f))
            out.append((f, f.__code__))
    return tuple(out)


def _collect_functions(s, f):
    """f and the functions it reaches (_Follow), added to s.functions: a
    Python function's walk in C (python/_C/guard_scan.c, the same walk)."""
    if type(f) is types.FunctionType:
        _C._guard_walk(f, s.functions, s.seen, s.names, _MAX_FUNCTIONS)
    else:
        s.walk.breadth_first(f, _Follow(s))


_CLASS_IMPLICIT = frozenset(["__call__", "__enter__", "__exit__", "__init__", "__new__"])

# The special methods of the user's class that Python does not run on an
# object that already exists (the others it runs without a name in the code:
# `o * x` runs __mul__, len(o) __len__, f"{o}" __format__, `o.zz` a
# __getattr__, `o.d` a descriptor's __get__, print(o) __str__).
_NOT_ON_OBJECTS = frozenset(["__init__", "__new__", "__init_subclass__", "__set_name__",
                             "__class_getitem__", "__del__", "__subclasshook__"])


def _method_names(s, cls, implicit=frozenset(["__call__", "__enter__", "__exit__"])):
    """The names used by the methods and properties of cls that the code
    names (self.forward(x) reads what forward reads) and those of the
    special methods Python runs without a name in the code (implicit: a
    call, a with block; a class also CM() runs __init__ and __new__): of
    the user's classes, every special method but those it never runs on an
    existing object (_NOT_ON_OBJECTS; a class, implicit=_CLASS_IMPLICIT,
    may be instantiated: all of them).  Before, only the implicit three
    were: `o * x` kept the o.k its __mul__ read when traced, as did len(o),
    o[i], float(o), f"{o}", `o.zz` through __getattr__, ..."""
    every = implicit is _CLASS_IMPLICIT
    for klass in getattr(cls, "__mro__", ())[:-1]:
        user = is_user_module(getattr(klass, "__module__", "") or "")
        for name, attr in list(vars(klass).items()):
            if name not in s.names and name not in implicit and not (
                    user and name[:2] == name[-2:] == "__" and
                    (every or name not in _NOT_ON_OBJECTS)):
                continue
            fget = attr.fget if isinstance(attr, property) else \
                attr.__func__ if isinstance(attr, (classmethod, staticmethod)) else attr
            if isinstance(fget, types.FunctionType) and id(fget) not in s.seen:
                _collect_functions(s, fget)  # what the method reads is read too


# The special methods Python looks up on an object's class when it runs an
# operator, a conversion, a with block, a call, an attribute or item access,
# NumPy's protocols: one the user's class lacked when traced must still be
# absent (_special_bindings).
_IMPLICIT_SPECIALS = frozenset(
    [f"__{p}{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod",
                               "pow", "lshift", "rshift", "and", "xor", "or")
     for p in ("", "r", "i")] +
    [f"__{n}__" for n in (
        "divmod", "rdivmod", "neg", "pos", "abs", "invert", "lt", "le", "eq", "ne", "gt", "ge",
        "bool", "len", "length_hint", "index", "int", "float", "complex", "round", "trunc",
        "floor", "ceil", "hash", "bytes", "str", "repr", "format", "fspath", "iter", "next",
        "reversed", "contains", "getitem", "setitem", "delitem", "missing", "getattr",
        "getattribute", "setattr", "delattr", "call", "enter", "exit", "get", "set", "delete",
        "copy", "deepcopy", "array", "array_ufunc", "array_function", "array_priority",
        "array_interface",
        # (not run on an existing object by an operation, but when an object
        # of the class dies: one the function makes runs it, which the
        # translator refuses, _frame.Translator._check_class; `C.__del__ =
        # f` between calls kept a plan that never ran it)
        "del")])


def _special_bindings(s, cls):
    """Guards how the user's class cls resolves each special method its
    user classes define that Python runs on an existing object without a
    name in the code (`o + 1` runs type(o).__add__, len(o) __len__): by
    identity, once per class and scan.  Before, only their code was
    scanned, so `C.__add__ = g` between calls kept the traced method's
    answer."""
    if id(cls) in s.dunder_classes:
        return
    s.dunder_classes.add(id(cls))
    at = Source("obj", cls, None, cls.__qualname__)
    done = set()
    for klass in getattr(cls, "__mro__", ())[:-1]:
        if not is_user_module(getattr(klass, "__module__", "") or ""):
            continue
        for name, attr in list(vars(klass).items()):
            if name in done or name[:2] != "__" or name[-2:] != "__" or \
                    name in _NOT_ON_OBJECTS:
                continue
            done.add(name)
            if isinstance(attr, classmethod):
                # (a new bound method each time: its binding in the class)
                s.add(Source("obj", klass, None, klass.__qualname__).child("attr", "__dict__")
                      .child("item", name), "id", attr)
            elif isinstance(attr, (types.FunctionType, staticmethod, property)):
                s.add(at.child("attr", name), "id", getattr(cls, name))
            elif name in _IMPLICIT_SPECIALS and not hasattr(type(attr), "__get__"):
                # data (`__hash__ = None`, `__array_priority__ = 10`): as
                # the class resolves it
                s.add(at.child("attr", name), "value" if is_value(attr) else "id", attr)
    # Those no user class of it defines: still absent from each (`C.__add__
    # = f` between calls, where `o + 1` raised TypeError or __eq__ was
    # object's when traced: before, the trace's answer held), read by the
    # names guard in C (a tag compare per class on a steady call)
    lacking = sorted(_IMPLICIT_SPECIALS.difference(done))
    for klass in getattr(cls, "__mro__", ())[:-1]:
        if not is_user_module(getattr(klass, "__module__", "") or ""):
            continue
        d = _C._type_dict(klass)
        for name in lacking:
            if (id(d), name) not in s.builtin_keys and name not in d:
                s.builtin_keys.add((id(d), name))
                s.builtins.append((d, d, name, klass, False))


def _walked(s, d, cls):
    """Notes that the attributes of an object (d: its __dict__), a class or
    a module (cls: a class whose attributes answer through it) were read for
    the names known now."""
    if len(s.names) != s.snap[0]:  # (names only grow: the same count, the same set)
        s.snap = (len(s.names), frozenset(s.names))
    s.walked.append((d, cls, s.snap[1], d is not None and _computed(s)))


def _stale(s):
    """Whether code found after an object was walked names one of its
    attributes (or its class's), or computes the names it reads with
    getattr: then scan runs again, knowing every name."""
    late = _computed(s)  # (getattr of a computed name: every attribute of an object)
    for d, cls, known, computed in s.walked:
        if d and late and not computed:
            return True
        if len(known) == len(s.names):
            continue
        new = s.names - known
        if d is not None and not new.isdisjoint(d):
            return True
        for klass in getattr(cls, "__mro__", ())[:-1]:
            if not new.isdisjoint(vars(klass)):
                return True
    return False


def _visit(s, src, v, depth):
    if len(s.guards) >= _MAX_GUARDS:  # (s.full())
        return
    if type(v) is types.FunctionType:
        # What the general path below does with a function, in fewer calls
        # (a nest's every level reaches the next one's: issue #30): an
        # identity guard, the function marked seen; its code and what it
        # reads are the walk's (_collect_functions), not its children.
        s.guards.append(Guard(src, "id", v))
        if depth < _MAX_DEPTH:
            s.seen.add(id(v))
            d = v.__dict__
            if d and not s.names.isdisjoint(d):
                # its data attributes the code names (`helper.scale`): the
                # user's state, as an object's (before, not guarded)
                s.fattrs.add(id(v))
                for name in sorted(n for n in s.names if n in d):
                    _visit(s, src.child("attr", name), d[name], depth + 1)
        return
    if isinstance(v, types.ModuleType):
        # A module itself is not guarded (rebinding a module name is not
        # seen); its data attributes that the code names are (not hop's:
        # hop's own objects are not the user's state), and its callables,
        # hop's too (`hnp.sum = g` between calls: before, hop.numpy's were
        # not guarded and the traced sum answered on)
        if depth < _MAX_DEPTH and id(v) not in s.seen:
            hop_own = is_hop_module(v.__name__)
            s.seen.add(id(v))
            d = vars(v)
            if not hop_own:
                _walked(s, d, None)
            for name in sorted(s.names):
                if name not in d or isinstance(d[name], types.ModuleType) or \
                        hop_own and not callable(d[name]):
                    continue
                if callable(d[name]):
                    # its binding (`math.sqrt = g`, `mod.helper = g` between
                    # calls: before, the traced callable answered on), read
                    # by the names guard (the module dict's version tag, in
                    # C: np.sum keeps the plan's bound call); its code, if
                    # the user's, is the walk's
                    if (id(d), name) not in s.builtin_keys:
                        s.builtin_keys.add((id(d), name))
                        s.builtins.append((_NO_GLOBALS, d, name, d[name], True))
                else:
                    _visit(s, src.child("attr", name), d[name], depth + 1)
            if is_user_module(v.__name__):
                # (getattr(mod, "P", 0) answered by the default: still absent)
                absent = _unanswered(s, type(v), d)
                if absent:
                    s.add(src.child("attr", "__dict__"), "lacks", absent)
        return
    if v is MISSING:
        if not src.path and src.kind in ("global", "cell"):
            s.add(src, "absent", None)
        return
    if isinstance(v, _C.Tensor):
        if not _C._is_proxy(v):
            entry = s.tensors.setdefault(id(v), (v, []))
            entry[1].append(src)
        return
    if is_value(v):
        s.add(src, "value", v)
        return
    if type(v) is _hnp_ndarray():
        # its tensor is what the trace read (not the array object: an array
        # rebound to a new one of the same dtype and shape fits the plan)
        _visit(s, src.child("array", v._scalar), v._t, depth + 1)
        if v._cp is not None:
            # an eager view hop made as a copy (`V = G[::-1]`): a trace
            # reads and writes it as a view of the array whose memory it
            # views (hop.numpy._storage._copy_view_storage), whose tensor is
            # the capture, read from there too (V._cp[0]...), not only from
            # another name that held that array when traced (G, rebound)
            x = v
            while x._cp is not None:
                src, x = src.child("attr", "_cp").child("item", 0), x._cp[0]
            _visit(s, src, x, depth + 1)
        return
    s.add(src, "id", v)
    if id(v) in s.seen:
        return
    if depth >= _MAX_DEPTH:
        if isinstance(v, (list, tuple, dict, set)) and v or \
                not isinstance(v, _OPAQUE) and getattr(v, "__dict__", None):
            s.skipped.append(f"{src!r}: deeper than {_MAX_DEPTH} steps, guarded by identity, "
                             f"its contents not guarded")
        return
    s.seen.add(id(v))
    _walk_children(s, src, v, depth)


def _walk_children(s, src, v, depth):
    if isinstance(v, type) and is_user_module(getattr(v, "__module__", "") or ""):
        _walk_user_class(s, src, v, depth)
        return
    if type(v) is types.MethodType:
        # A bound method held as a value (`M = a.m`, a method in a list):
        # a call runs its function (scanned) on its self, whose attributes
        # that code names are read (before, only the method's identity was
        # guarded: `a.k = 3` between calls kept the traced a.k)
        fn = v.__func__
        if isinstance(fn, types.FunctionType) and not is_hop_function(fn):
            _collect_functions(s, fn)
        _visit(s, src.child("attr", "__func__"), fn, depth + 1)
        _visit(s, src.child("attr", "__self__"), v.__self__, depth + 1)
        return
    if isinstance(v, _OPAQUE):
        return
    if type(v) is _hnp_ndarray():
        # A hop.numpy array is the user's data: the tensor it holds now is
        # the capture, re-read every call (`W.shape = ...`, an in-place op
        # that makes a new tensor, a new array: the next call sees what
        # eager sees).
        _visit(s, src.child("array", v._scalar), v._t, depth + 1)
        return
    if _hop_object(v):
        # identity guarded (the user's binding); what it runs is the user's
        # function, scanned; its own attributes are hop's state, but those
        # the user set on it (`g.scale` on a decorated g: what is not in its
        # class's _hop_state nor underscored) that the code names
        w = _wrapped(v)
        if w is not None and not is_hop_function(w):
            _collect_functions(s, w)
        own, d = getattr(type(v), "_hop_state", None), getattr(v, "__dict__", None)
        if own is not None and type(d) is dict:
            for name in sorted(n for n in s.names if n in d and n not in own and n[0] != "_"):
                _visit(s, src.child("attr", name), d[name], depth + 1)
        return
    if isinstance(v, (list, tuple, dict) + _SEQUENCES):
        _walk_container(s, src, v, depth)
        return
    if type(v) is functools.partial:
        # what a call of it runs and passes: its function (scanned), its
        # arguments and keywords (`P.keywords["b"] = 10.0` between calls:
        # before, not guarded)
        if isinstance(v.func, types.FunctionType) and not is_hop_function(v.func):
            _collect_functions(s, v.func)
        for step in ("func", "args", "keywords"):
            _visit(s, src.child("attr", step), getattr(v, step), depth + 1)
        return
    if isinstance(v, (set, frozenset)):
        if len(v) <= _MAX_ITEMS and all(is_value(x) for x in tuple(v)):
            s.add(src, "eq", tuple(v))
        else:
            s.skipped.append(f"{src!r}: a {type(v).__name__} of {len(v)} items, guarded by "
                             f"identity only")
        return
    _walk_object(s, src, v, depth)


def _walk_user_class(s, src, v, depth):
    """A class of the user's: its methods (it may be instantiated), its
    metaclass's special methods, its data and the names it lacks."""
    _method_names(s, v, _CLASS_IMPLICIT)  # a class the code may instantiate
    _special_bindings(s, v)
    _walked(s, None, v)
    meta = type(v)
    if meta is not type and is_user_module(getattr(meta, "__module__", "") or ""):
        # (its metaclass's special methods run on it: `C.zz` through a
        # metaclass __getattr__), as they resolve and those it lacks
        # (`M.__len__ = g` between calls: before, len(C)'s TypeError held)
        _method_names(s, meta)
        _special_bindings(s, meta)
    _class_data(s, src, v, depth, ())
    absent = _unanswered(s, v, {})  # (getattr(C, "m", 0): still absent)
    if absent:
        s.add(src.child("attr", "__dict__"), "lacks", absent)


def _walk_container(s, src, v, depth):
    """The items of a list, tuple, dict or other sequence (up to _MAX_ITEMS),
    its length and a dict's key order."""
    if len(v) > _MAX_ITEMS:
        # its length at least (one C call): a log the function reads
        # back (`len(LOG)`, `LOG[-1]`) grows between calls, and a
        # trace that baked in its old items must not answer for it
        if not isinstance(v, tuple):
            s.add(src, "len", len(v))
        s.skipped.append(f"{src!r}: a {type(v).__name__} of {len(v)} items (more than "
                         f"{_MAX_ITEMS}), guarded by identity and length, its items not "
                         f"guarded")
        return
    hashing = {}  # (a key class's hashing methods, looked up once a class)
    if isinstance(v, dict) and any(_user_hashed(k, hashing) for k in v):
        # reading an item by its key runs the key's __hash__ and __eq__, the
        # user's code with effects, on every check (a __hash__ that logs
        # grew the log that another guard reads: GuardError where eager
        # answers); the call has an effect, so it is translated or eager
        s.add(src, "len", len(v))
        s.skipped.append(f"{src!r}: a {type(v).__name__} keyed by objects whose __hash__ or "
                         f"__eq__ has effects, guarded by identity and length, its items not "
                         f"guarded")
        return
    if not isinstance(v, tuple):
        s.add(src, "len", len(v))
    if type(v) is dict and len(v) > 1:
        # its order too (the names guard's, by the dict's tag in C):
        # refilled with the same items in another order, a for loop,
        # list(D) and D.values() see the new one (before, the traced
        # order answered on)
        s.orders.append((src, v))
    # One C call copies a list's or dict's items (another thread may
    # change it meanwhile); a subclass is read through its own v[k].
    if type(v) is dict:
        items = tuple(v.items())
    elif type(v) in (list, tuple):
        items = enumerate(tuple(v))
    else:
        items = ((k, v[k]) for k in (list(v.keys()) if isinstance(v, dict) else range(len(v))))
    for k, x in items:
        # (a key of the user's class with a pure __hash__ or __eq__: its
        # item is read by the key's identity, so no check runs them; a plan
        # traced while they were pure read `D[k]` through the key, running
        # the logging __hash__ assigned since before the class's guard
        # missed: LOG grew in the check, where eager's grew once a call)
        step = "entry" if type(v) is dict and _user_keyed(k, hashing) else "item"
        _visit(s, src.child(step, k), x, depth + 1)


def _user_keyed(k, hashing):
    """Whether looking the key k up runs a __hash__ or __eq__ of the user's
    (a tuple's or frozenset's items' too)."""
    t = type(k)
    if t in (str, int, float, bool, bytes, type(None), complex):
        return False
    if t is tuple or t is frozenset:
        return any(_user_keyed(x, hashing) for x in k)
    return bool(_hashing_methods(t, hashing))


def _user_hashed(k, hashing=None):
    """Whether hashing or comparing the key k runs code of the user's that
    has effects (a pure __hash__ may run: the items stay guarded, read by
    the key's identity, _user_keyed).  hashing: class -> its hashing
    methods, filled as met."""
    t = type(k)
    if t in (str, int, float, bool, bytes, type(None), complex):
        return False
    if t is tuple or t is frozenset:
        return any(_user_hashed(x, hashing) for x in k)
    fns = _hashing_methods(t, hashing)
    if not fns:
        return False
    if hashing is not None and hashing.get((t,)) is True:
        return False  # (the class's answer for this walk, asked once)
    if _pure_for_any_key(t, fns):
        if hashing is not None:
            hashing[(t,)] = True
        return False
    from . import _effects
    return any(_effects.find(f, (k,) * f.__code__.co_argcount, {}) for f in fns)


def _hashing_methods(t, hashing=None):
    """The user's __hash__ and __eq__ functions along t's MRO (from
    hashing, class -> them, when it has t; put there)."""
    if hashing is not None:
        out = hashing.get(t)
        if out is None:
            out = hashing[t] = _hashing_methods(t)
        return out
    out = []
    for c in t.__mro__[:-1]:
        for n in ("__hash__", "__eq__"):
            f = vars(c).get(n)
            if isinstance(f, types.FunctionType) and \
                    is_user_module(getattr(c, "__module__", "") or ""):
                out.append(f)
    return out


# class -> the signature (_method_signature) of its hashing methods, and of
# every function the effect finder followed from them, when the finder found
# them pure with the key unknown, so for any key: each _effects.find costs
# ~0.4 ms, and the guards' walk asked it for every key of a dict on every
# trace (a dict of 16 keys: 13 ms a trace; the forty-sixth session's figures,
# docs/BENCHMARKS.md).  A method replaced on the class, a code object
# replaced, a global one of those functions names rebound or a closure cell
# of one set is another signature: asked again.  Not seen (docs/
# RELIABILITY.md): a change inside a container or object those functions
# read a callee from (`HASHERS['k'] = logging_hash`).
_PURE_HASHING = weakref.WeakKeyDictionary()


def _method_signature(fns):
    def ref(v):
        try:
            return weakref.ref(v)
        except TypeError:
            return ("id", id(v))

    def cells(f):
        out = []
        for c in f.__closure__ or ():
            try:
                out.append(ref(c.cell_contents))
            except ValueError:  # (an empty cell)
                out.append(None)
        return tuple(out)
    return tuple((ref(f), ref(f.__code__),
                  tuple(ref(f.__globals__.get(n, _ABSENT)) for n in f.__code__.co_names),
                  cells(f)) for f in fns)


_ABSENT = object()


def _same_signature(a, b):
    def same(x, y):
        if isinstance(x, weakref.ref) and isinstance(y, weakref.ref):
            return x() is not None and x() is y()
        return x == y
    return len(a) == len(b) and all(
        same(fa, fb) and same(ca, cb) and len(ga) == len(gb) and all(map(same, ga, gb))
        and len(za) == len(zb) and all(map(same, za, zb))
        for (fa, ca, ga, za), (fb, cb, gb, zb) in zip(a, b))


def _pure_for_any_key(t, fns):
    """Whether t's hashing methods fns have no effects whatever the key
    (the finder's answer with the key unknown, which can only add effects;
    cached per class while the functions it followed are the same)."""
    try:
        old = _PURE_HASHING.get(t)
    except TypeError:  # (a class that cannot be weakly referenced)
        old = None
    if old is not None:
        # (the functions by weak reference: a strong one would keep t alive
        # through their module's globals)
        was = [e[0]() for e in old]
        if was[:len(fns)] == fns and None not in was and \
                _same_signature(old, _method_signature(was)):
            return True
    from . import _effects
    followed = []
    for f in fns:
        if _effects.find(f, (), {}, followed=followed):
            return False
    followed = fns + [f for f in dict.fromkeys(followed) if all(f is not g for g in fns)]
    try:
        _PURE_HASHING[t] = _method_signature(followed)
    except TypeError:
        pass
    return True


def _walk_object(s, src, v, depth):
    """An object's class, its attributes the code names, what it lacks, and
    (vars, a computed name) all of them."""
    d = getattr(v, "__dict__", None)
    user = is_user_module(getattr(type(v), "__module__", "") or "")
    if not isinstance(d, dict):
        if user and _slot_names(type(v)):
            # an object of the user's class with __slots__ and no __dict__
            # (before, nothing of it but its identity was guarded: `o.k = 2`
            # between calls kept the traced o.k)
            s.add(src.child("attr", "__class__"), "id", type(v))
            _method_names(s, type(v))
            _special_bindings(s, type(v))
            _walked(s, None, type(v))
            _class_data(s, src, type(v), depth, {})
            _slot_values(s, src, v, depth)
        return
    io = _io_class(type(v))
    if user:
        # its class: what the class holds is guarded on the class it had,
        # and isinstance(o, A), type(o) is A read it without naming anything
        # of it, so `o.__class__ = B` between calls must miss
        s.add(src.child("attr", "__class__"), "id", type(v))
    if not io:
        _method_names(s, type(v))
    if user:
        _special_bindings(s, type(v))
    _walked(s, d, type(v) if user else None)
    # (first: a descriptor's __get__ it scans names what the object's own
    # attributes below must guard, `return obj.k * 2`)
    _class_data(s, src, type(v), depth, d)
    if user:
        _slot_values(s, src, v, depth)
    # The names the code may read with a default (getattr(o, "k", 5),
    # hasattr, `except AttributeError`) that neither the object nor its
    # class answers: still absent (`o.k = 2` between calls; before, the
    # default answered on); and, of the user's class, the names its class
    # answers (and its methods' code names) that the object does not hold
    # itself: still so (`o.m = g` between calls shadows the class's method;
    # before, the class's answered on)
    absent = () if io and not user else _unanswered(s, type(v), d)
    lacking = (_shadowable(s, type(v), d) if user else ()) + absent
    if lacking:
        s.add(src.child("attr", "__dict__"), "lacks", lacking)
    if user and absent:
        # (and by its classes: `C.k = 11` between calls answers o.k; a
        # built-in class, a SimpleNamespace's, takes no attributes)
        for klass in type(v).__mro__[:-1]:
            s.add(Source("obj", klass, None, klass.__qualname__).child("attr", "__dict__"),
                  "lacks", absent)
    for name in sorted(n for n in s.names if n in d):
        _visit(s, src.child("attr", name), d[name], depth + 1)
    if not s.names.isdisjoint(("vars", "__dict__", "dir")) or not io and _computed(s):
        # vars(o), o.__dict__, dir(o): every attribute is read (an attribute
        # added between calls changes len(vars(o))); so does getattr(o,
        # name) of a name the code computes, which no name of the code
        # spells (before, o.a1 read as getattr(o, "a" + str(i)) answered on)
        _visit(s, src.child("attr", "__dict__"), d, depth + 1)



def _slot_names(cls):
    """The __slots__ names of cls and its bases (the attributes a member
    descriptor stores outside the object's __dict__)."""
    out = []
    for klass in cls.__mro__[:-1]:
        slots = vars(klass).get("__slots__", ())
        out += [slots] if isinstance(slots, str) else list(slots)
    return [n for n in out if n not in ("__dict__", "__weakref__")]


def _slot_values(s, src, v, depth):
    """The __slots__ attributes of v (an object of the user's class) that
    the code names, read as the code reads them when that is the member
    descriptor itself (no property of a subclass over it); an unset slot
    is not guarded."""
    if depth >= _MAX_DEPTH:
        return
    cls = type(v)
    for name in sorted(n for n in set(_slot_names(cls)) if n in s.names):
        member = getattr(cls, name, None)
        if type(member) is not types.MemberDescriptorType:
            continue
        try:
            value = member.__get__(v, cls)
        except AttributeError:
            continue
        _visit(s, src.child("attr", name), value, depth + 1)


def _io_class(cls):
    """Whether cls is a class of a module of I/O (logging.Logger, a file's
    io.TextIOWrapper: hop/_effect_tables.py): hop.compile's translator
    breaks at every call of its methods (_frame_state.BROKEN), which then
    run in Python on each call, so what they read is not the trace's (a
    module-level logger's methods walked were some 60 guards, sys.path's
    items among them, and a warning of its handlers' state)."""
    from ._effect_tables import _EFFECT_MODULES
    module = getattr(cls, "__module__", None) or ""
    return _EFFECT_MODULES.get(module.split(".")[0]) == "io"


def _shadowable(s, cls, own):
    """The names the code names that an object of the user's class cls
    does not hold itself (own: its __dict__) and that it would hold first
    if it did: those its class (or a base) holds but not as a data
    descriptor (a property, a slot: those win over the object's dict)."""
    out = []
    for name in sorted(s.names):
        if name in own or name.startswith("__"):  # (Python looks dunders up on the class)
            continue
        for klass in cls.__mro__[:-1]:
            a = vars(klass).get(name, MISSING)
            if a is not MISSING:
                if not hasattr(type(a), "__set__") and not hasattr(type(a), "__delete__"):
                    out.append(name)
                break
    return tuple(out)


def _unanswered(s, cls, own):
    """The attribute names the code reads with a default or a test
    (_Names.probed: getattr(o, "k", d), hasattr(o, "k"), `o.k` in a try
    block) that neither an object of cls (own: its __dict__) nor cls holds:
    an absent attribute answered the trace, so one added between calls must
    miss."""
    probed = _probed(s)
    if not probed:
        return ()  # (most code probes nothing: asked for every function and object visited)
    return tuple(n for n in probed
                 if n not in own and not n.startswith("__") and
                 not any(n in vars(k) for k in cls.__mro__))


def _probed(s):
    """The sorted probed names of the functions scanned so far, gathered
    again only when the walk has added functions since (s.probed: (how many
    functions, the names)): _unanswered asks for every object visited."""
    n, names = s.probed
    if n != len(s.functions):
        found = _C._guard_sift(s.functions, "probed", _SPELLED)  # (in C: issue #30)
        if found is None:  # (other than plain functions: read here)
            found = set()
            for f in s.functions:
                code = getattr(f, "__code__", None)
                if isinstance(code, types.CodeType):
                    found |= names_of(code).probed()
        s.probed = n, names = len(s.functions), tuple(sorted(found))
    return names


def _computed(s):
    """Whether a function scanned so far calls getattr or hasattr with a
    name it computes (_Names.computed_names), asked again only when the
    walk has added functions since (s.computed: (how many, the answer))."""
    n, found = s.computed
    if n != len(s.functions) and n >= 0:
        found = _C._guard_sift(s.functions, "computed", _SPELLED)  # (in C: issue #30)
        if found is None:  # (other than plain functions: read here)
            found = any(names_of(f.__code__).computed_names() for f in s.functions
                        if isinstance(getattr(f, "__code__", None), types.CodeType))
        s.computed = (len(s.functions), found)
    return found


def _class_data(s, src, cls, depth, own):
    """The data attributes of the user's class cls (or its user bases) that
    the code names and an object does not hold itself (own: its __dict__):
    `C.k`, `cls.k` in a classmethod, `self.k` of a class attribute are read
    through src (getattr, as the code does), so `C.k = 3.0` between calls is
    seen.  Methods, properties and other descriptors are code, scanned by
    _method_names instead."""
    if depth >= _MAX_DEPTH:
        return
    for name in sorted(s.names):
        if name in own or name.startswith("__"):
            continue
        for klass in getattr(cls, "__mro__", ())[:-1]:
            d = vars(klass)
            if name in d:
                a = d[name]
                if not is_user_module(getattr(klass, "__module__", "") or ""):
                    break
                if not hasattr(type(a), "__get__"):
                    _visit(s, src.child("attr", name), a, depth + 1)
                elif isinstance(a, classmethod) or not isinstance(
                        a, (types.FunctionType, staticmethod, property)):
                    # (C.m is a new bound method each time: the binding; a
                    # descriptor of another kind may run the user's __get__,
                    # which reads the descriptor's own state and what its
                    # code names: walked as an object, its class's __get__
                    # scanned by _method_names; before, its identity only)
                    at = Source("obj", klass, None, klass.__qualname__) \
                        .child("attr", "__dict__").child("item", name)
                    if isinstance(a, classmethod):
                        s.add(at, "id", a)
                    else:
                        _visit(s, at, a, depth + 1)
                else:
                    # a method, static method or property (its code is
                    # scanned by _method_names) as the class resolves it
                    # (a plain attribute read, `C.m is f`), so that `C.m =
                    # g` between calls is seen, on the class or a base
                    s.add(Source("obj", cls, None, cls.__qualname__).child("attr", name), "id",
                          getattr(cls, name))
                break


# ------------------------------------------------------------ the guards

class Guards:
    """The guards of one plan: check(expected, leaves) is the fast check;
    revalidate(state, leaves) the full one."""

    def __init__(self, s, captures, leaves, views=None, made=None, contents=(), inlined=(),
                 release=False):
        # (made: the ids of the captures the function made itself; release:
        # guard the ndarrays of the environment by id and layout, holding no
        # reference to them, _release)
        guards = list(s.guards)
        self.unsourced = []
        self.viewed = []
        self.made = []  # captures the function made itself: constants, no guard
        held = None  # id(object) -> its id guard, when a capture has no source
        arrays = {}  # id(ndarray) -> (its source, it): the arrays captures view
        # (the captures found through no source and viewing no array, in C;
        # the rest, by index, here)
        rest = range(len(captures))
        if type(captures) is list and type(s.tensors) is dict and \
                (views is None or type(views) is dict) and (made is None or type(made) is set):
            self.made, self.unsourced, rest = _C._guard_captures(captures, s.tensors, views, made)
        for i in rest:
            t = captures[i]
            entry = s.tensors.pop(id(t), None)
            if entry is None:
                # A tensor hop.numpy made over an ndarray the code reads
                # (guarded by identity) shares its memory: a change inside
                # the array is seen, rebinding it fails the guard.
                # So does hop.tensor(w) of such an array: its base is w.
                a = views.get(id(t)) if views else None
                if a is None:
                    a = _C._base(t)
                if held is None and a is not None:
                    held = {id(g.expected): g for g in guards if g.kind == "id"}
                if a is not None and id(a) in held and _shares(a, t):
                    self.viewed.append((i, held[id(a)].source))
                    arrays[id(a)] = (held[id(a)].source, a)
                elif made is not None and id(t) in made:
                    self.made.append(i)
                else:
                    self.unsourced.append(i)
                continue
            for src in entry[1]:
                guards.append(Guard(src, "tensor", t, i))
        if rest:  # (C's and the loop's of one kind, in order)
            self.made.sort()
            self.unsourced.sort()
        # Tensors the code can reach but the trace did not capture: the
        # trace may have read their shape or dtype, so they must stay.
        for t, sources in s.tensors.values():
            for src in sources:
                guards.append(Guard(src, "id", t))
        # A function that changed its own environment while traced (appended
        # to a list it closes over) is guarded on the state it left.  (C
        # reads again the weak identity guards of cells and exact dicts'
        # globals, every level of a nest: _C._guard_reread; the rest here.)
        for g in _C._guard_reread(guards):
            kind = g.kind
            if kind == "id" and g.weak and not g.source.path:
                # (a function in a cell or a global: Source.read and the
                # `expected` setter, without their calls; the same object
                # again keeps its reference)
                src = g.source
                try:
                    v = src.base.cell_contents if src.kind == "cell" else \
                        src.base[src.key] if src.kind == "global" else src.read(leaves)
                except Exception:
                    continue
                if g.held() is not v:
                    g.expected = v
                continue
            if kind not in ("tensor", "names", "lacks"):
                try:
                    v = g.source.read(leaves)
                except Exception:
                    continue
                # (an "eq" guard keeps the items in the set's order: the set
                # itself would equal itself whatever it holds later, and an
                # equal set can iterate in another order, which the trace
                # may have baked in)
                g.expected = len(v) if g.kind == "len" else \
                    tuple(v) if g.kind == "eq" and isinstance(v, (set, frozenset)) else v
        # An ndarray whose memory a capture is: the capture is its memory as
        # laid out when traced, so a change of the array object in place
        # (G.shape = (4, 4), G.strides, G.dtype, G.data, G.flags.writeable)
        # fails this guard and retraces, as rebinding G fails its id guard.
        for src, a in arrays.values():
            if _np is not None and type(a) is _np.ndarray:
                guards.append(Guard(src, "layout", _layout(a)))
        # An ndarray a HOP body read from its environment (contents: (source,
        # array)): NumPy computed with it while tracing (`W * 2` in a cond
        # branch), so a change inside it retraces (issue 28)
        for src, a in contents:
            guards.append(Guard(src, "contents", _contents(a)))
        self.live = {}  # capture index -> the "ndarray" guard whose array it is made from
        if release and _np is not None:
            self._release(guards, captures)
        # the builtin names and the code of the functions the plan ran:
        # one guard, checked in C (last: explain() lists it after the
        # values read)
        # (fdicts and orders: a _Scan's; another scan-like object may lack them)
        codes = code_reads(list(s.functions) + list(inlined)) + \
            tuple(getattr(s, "fdicts", ()))
        # (the order as the trace left it, of a dict still guarded)
        kept = {id(g.expected) for g in guards if g.kind == "id" and not g.weak}
        orders = tuple((d, tuple(d), repr(src)) for src, d in getattr(s, "orders", ())
                       if id(d) in kept)
        if s.builtins or codes or orders:
            names = BuiltinNames(tuple(s.builtins), codes, orders)
            guards.append(Guard(Source("obj", names, None, repr(names)), "names", names))
        self.guards = guards
        self.skipped = s.skipped
        self.uses_args = any(g.source.kind == "arg" for g in guards)
        shape = _shape(guards)
        self.check = _bind(*shape) if guards else None
        # The bound C calls (hop._trace: Plan.bind_*, _C._bind_names;
        # _C._EffectsCall) check the builtin names themselves, in C, and
        # then check_c: the generated check without the names' term (None:
        # no other guard).  The Python paths run check, every guard.
        self.names = guards[shape[2][0]].expected if shape[2] else None
        self.check_c = self.check if self.names is None else _bind(*shape, names_in_c=True)
        self.check_live = self._check_live(shape)
        # (what no argument of a call may be, besides the captures)
        self.env_ids = _env_ids(guards, self.unsourced, captures)

    def env_source(self, obj, captures):
        """The words for the object of the environment obj is (an argument
        _C._env_argument found among captures and env_ids): its source."""
        for g in self.guards:
            if g.kind == "tensor" and g.capture < len(captures) and captures[g.capture] is obj \
                    or g.kind == "id" and g.expected is obj \
                    or g.kind == "ndarray" and g.held[0] == id(obj):
                kind = "hop.numpy array" if g.source.path and g.source.path[-1][0] == "array" \
                    else _leaf_kind(obj)
                return f"the {kind} {g.source!r} holds"
        return f"a {_leaf_kind(obj)} the plan captured"

    def _release(self, guards, captures):
        """Makes the identity guard of each ndarray of the environment
        (not reached through an argument) an "ndarray" guard: the array's
        id and layout (_layout: its memory address, shape, strides, dtype,
        flags), no reference to it.  NumPy's resize refuses an array that
        has a weak reference, and with refcheck a strong one hop holds, so
        a plan that held it made the caller's `G.resize(n)` raise where
        eager resizes.  Held by id alone, a freed array's id could be a new
        object's; with its layout too the new one would be the same memory
        laid out the same, which the plan reads at every call (eager reads
        what the source holds).  The capture whose memory the array is is
        made anew from it at every call (live_state, revalidate), so hop
        keeps no tensor over the array either (_trace hollows the trace's)."""
        viewed = {}
        for i, src in self.viewed:
            viewed.setdefault(id(src), []).append(i)
        laid = {id(g.source) for g in guards if g.kind == "layout"}
        for g in list(guards):
            a = g.held if g.kind == "id" and not g.weak else None
            if type(a) is not _np.ndarray or _rooted_in_args(g.source):
                continue
            caps = viewed.get(id(g.source), ())
            lay = _layout(a)
            if len(caps) > 1 or lay is None or any(not _made_from(captures[i], a) for i in caps):
                continue
            if id(g.source) not in laid:
                guards.append(Guard(g.source, "layout", lay))
            g.kind, g.held, g.capture = "ndarray", (id(a), lay), caps[0] if caps else None
            if caps:
                self.live[caps[0]] = g

    def state(self, captures):
        """The first state: (the objects the fast check expects, the
        captured tensors to pass; None for a live one, made per call)."""
        return (tuple(g.held for g in self.guards),
                tuple(None if i in self.live else c for i, c in enumerate(captures)))

    def live_entries(self):
        """The entries of a _C._LiveCaptures (python/_C/live_capture.c) for
        the "ndarray" guards (_release): per guard (its capture's index or
        -1, its index, how its source is read: 0 a global (dict, name), 1 a
        cell (cell, None), 2 any other (the source, a reader of it), the
        array's id, its layout); () when there is none.  The object makes
        the captures from the arrays the sources hold at each call, or
        says that one is not the traced array laid out as traced."""
        return tuple(_live_entry(j, g) for j, g in enumerate(self.guards) if g.kind == "ndarray")

    def _check_live(self, shape):
        """The check of what a _C._LiveCaptures of live_entries() does not
        check itself (its "ndarray" guards and each layout guard of one's
        source that expects the layout it does) nor the builtin names;
        None when nothing else is left: Plan.bind_arrays then binds the plan
        with it (hop._trace._LiveRunner)."""
        lays = {id(g.source): g.held[1] for g in self.guards if g.kind == "ndarray"}
        covered = tuple(j for j, g in enumerate(self.guards)
                        if g.kind == "ndarray" or g.kind == "layout" and id(g.source) in lays and
                        type(g.expected) is bytes and g.expected == lays[id(g.source)])
        return _bind(*shape, names_in_c=True, in_c=covered) if covered else self.check_c

    def revalidate(self, state, leaves):
        """Checks every guard by its kind; returns the new state (the
        objects read now, the captures re-read from their sources) or raises
        hop.GuardError naming the first that failed."""
        expected, captures = state
        now = list(expected)
        caps = list(captures)
        fresh = set()
        for j, g in enumerate(self.guards):
            if g.kind == "names":
                if not g.expected.check():
                    raise _C.GuardError(g.expected.failure() or "guard failed: " + repr(g.expected))
                continue
            if g.kind == "absent":
                if not _absent(g.source):
                    raise _C.GuardError(f"guard failed: {g.source!r} was "
                                        f"{'not defined' if g.source.kind == 'global' else 'empty'}"
                                        f" when traced, now it holds a value")
                continue
            try:
                v = g.source.read(leaves)
            except Exception as e:
                raise _C.GuardError(f"guard failed: {g.source!r} can no longer be read "
                                    f"({type(e).__name__}: {e})") from None
            if g.kind == "tensor":
                if not isinstance(v, _C.Tensor) or _C._is_proxy(v):
                    raise _C.GuardError(f"guard failed: {g.source!r} was a tensor when traced, "
                                        f"now it is {type(v).__name__}")
                if g.capture in fresh and caps[g.capture] is not v:
                    raise _C.GuardError(f"guard failed: {g.source!r} and another source of "
                                        f"captured input {g.capture} held one tensor when "
                                        f"traced, now they differ")
                fresh.add(g.capture)
                caps[g.capture] = v
            elif g.kind == "value":
                if not same_value(v, g.expected):
                    raise _C.GuardError(f"guard failed: {g.source!r} was {g.expected!r} "
                                        f"({type(g.expected).__name__}) when traced, now "
                                        f"{_short(v)} ({type(v).__name__})")
            elif g.kind == "ndarray":
                if type(v) is not _np.ndarray or id(v) != g.held[0]:
                    raise _C.GuardError(f"guard failed: {g.source!r} was rebound (the trace used "
                                        f"an ndarray hop keeps no reference to, by its id and "
                                        f"layout; now it is a {_what(v)})")
                if not _same_layout(v, g.held[1]):
                    raise _C.GuardError(f"guard failed: {g.source!r} changed in place (its "
                                        f"shape, strides, dtype, memory or flags differ from "
                                        f"the traced array's, now {_array_text(v)})")
                if g.capture is not None:
                    caps[g.capture] = _C.asarray(v)
                now[j] = g.held
                continue
            elif g.kind == "layout":
                if _layout(v) != g.expected:
                    raise _C.GuardError(f"guard failed: {g.source!r} changed in place (its "
                                        f"shape, strides, dtype, memory or flags differ from "
                                        f"the traced array's, now {_array_text(v)})")
                continue
            elif g.kind == "contents":
                if type(g.expected) is Uncomparable and not g.expected.take():
                    raise _C.GuardError(f"guard failed: {g.source!r} holds Python objects (a HOP "
                                        f"body read it; hop cannot compare their contents: "
                                        f"every call retraces)")
                if type(g.expected) is not Uncomparable and not _same_contents(v, g.expected):
                    raise _C.GuardError(_changed_inside(g.source))
                continue
            elif g.kind == "lacks":
                held = [n for n in g.expected if n in v]
                if held:
                    raise _C.GuardError(f"guard failed: {g.source!r} holds {held[0]!r} now "
                                        f"(the class's answered when traced)")
                continue
            elif g.kind == "len":
                if len(v) != g.expected:
                    raise _C.GuardError(f"guard failed: {g.source!r} had {g.expected} items "
                                        f"when traced, now {len(v)}")
                continue
            elif g.kind == "eq":
                if not isinstance(v, (set, frozenset)) or v != set(g.expected):
                    raise _C.GuardError(f"guard failed: {g.source!r} was {set(g.expected)!r} "
                                        f"when traced, now {_short(v)}")
                if tuple(v) != g.expected:
                    raise _C.GuardError(f"guard failed: {g.source!r} iterated in the order "
                                        f"{g.expected!r} when traced, now in the order "
                                        f"{_short(tuple(v))} (an equal set)")
                continue
            elif g.weak:
                e = g.held()
                if e is None or v is not e:
                    what = "an object freed since" if e is None else f"the {_what(e)}"
                    raise _C.GuardError(f"guard failed: {g.source!r} was rebound (the trace used "
                                        f"{what}, now it is a {_what(v)})")
                continue  # (the state keeps the weak reference)
            elif v is not g.expected:
                raise _C.GuardError(f"guard failed: {g.source!r} was rebound (the trace used "
                                    f"the {_what(g.expected)}, now it is a {_what(v)})")
            now[j] = v
        return tuple(now), tuple(caps)

    def changed_contents(self):
        """revalidate's message for the first contents guard whose array
        holds other bytes now, else None: without a plan run or a state, a
        sure sign that this plan does not fit the call (an SGD loop that
        updates W in place misses every live plan on every call)."""
        for g in self.guards:
            if g.kind != "contents" or type(g.expected) is not bytes:
                continue
            try:
                v = g.source.read(None)
            except Exception:
                continue  # (revalidate tells)
            if not _C._np_same_contents(v, g.expected):
                return _changed_inside(g.source)
        return None

    def describe(self, capture_names):
        lines = [g.describe() for g in self.guards]
        for i, src in self.viewed:
            lines.append(f"captured input {i} ({capture_names[i]}) is the memory of the array "
                         f"{src!r} (read every call)")
        made = [f"captured input {i} ({capture_names[i]}): {MADE}" for i in self.made]
        return lines + self._unsourced(capture_names) + self.skipped + made

    def unguarded(self, capture_names):
        """describe's lines of what the guards cannot see (the unsourced
        captures' and what was skipped), without the others (hop.trace's
        warning: issue #30, one line a capture of thousands)."""
        return self._unsourced(capture_names) + [u for u in self.skipped if not u.endswith(MADE)]

    def _unsourced(self, capture_names):
        """One line per run of consecutive unsourced captures (a loop over a
        list of thousands: one line, where one a capture made a message of
        hundreds of KB, ~2 K instructions a capture to write and hash)."""
        u = self.unsourced  # (sorted, distinct: one run when its ends say so)
        if not u:
            return []
        starts = [0] if u[-1] - u[0] == len(u) - 1 else \
            [0] + [k for k in range(1, len(u)) if u[k] != u[k - 1] + 1]
        out = []
        for k, end in zip(starts, starts[1:] + [len(u)]):
            j = end - 1
            if j == k:
                out.append(f"captured input {u[k]} ({capture_names[u[k]]}): source not found, "
                           f"guarded by identity only (the tensor object of the trace is used "
                           f"every call)")
            else:
                out.append(f"captured inputs {u[k]}-{u[j]} ({capture_names[u[k]]} ... "
                           f"{capture_names[u[j]]}, {j - k + 1} tensors): source not found, "
                           f"guarded by identity only (the tensor objects of the trace are used "
                           f"every call)")
        return out


# How explain() describes a capture the function made: the last words of its
# line (the unguarded-reads warning leaves such lines out).
MADE = "made by the function itself (a constant of the plan, nothing to guard)"


class Uncomparable:
    """The expected contents of an ndarray of Python objects (dtype object,
    or with such fields): its bytes are the objects' addresses, which an
    object changed inside (a list appended to), or freed and another made at
    its address, keeps.  Such a guard passes once, for the run of the call
    that traced the plan (NumPy computed with what the array holds now), and
    never again: every later call retraces."""

    __slots__ = ("fresh",)

    def __init__(self):
        self.fresh = True

    def take(self):
        fresh, self.fresh = self.fresh, False
        return fresh


def _contents(a):
    """What a "contents" guard expects of ndarray a: its layout and its
    elements' bytes (_C._np_contents; without NumPy's C API, or with a
    datetime or structured dtype, the same read through Python, with the
    dtype), an Uncomparable for an array of Python objects, None for
    anything else."""
    if _np is None or type(a) is not _np.ndarray:
        return None
    if a.dtype.hasobject:
        return Uncomparable()
    if a.dtype.names is not None or a.dtype.kind in "mM":
        # (the dtype itself too: the layout's type number, size and byte
        # order are the same for another unit or other field names, which
        # a.dtype = ... sets in place)
        return _layout(a), a.dtype, a.tobytes()
    c = _C._np_contents(a)
    return c if c is not None else (_layout(a), a.tobytes())


def _same_contents(a, expected):
    """Whether ndarray a holds what _contents gave (a contents guard):
    _C._np_same_contents compares a's memory in place, allocating nothing."""
    if type(expected) is bytes:
        return _C._np_same_contents(a, expected)
    if type(expected) is Uncomparable:
        return expected.take()
    return _contents(a) == expected


def _changed_inside(source):
    return (f"guard failed: {source!r} changed inside since traced (a HOP body read it, where "
            f"NumPy computed with it while tracing)")


def _layout(a):
    """What of ndarray a its own attributes can change in place: bytes
    from _C._np_layout, or (without NumPy's C API) the same read through
    Python; equal for two reads exactly when nothing of it changed."""
    r = _C._np_layout(a)
    if r is not None:
        return r
    try:
        return (a.__array_interface__["data"][0], a.shape, a.strides, a.dtype.str,
                a.flags.writeable, a.flags.aligned)
    except AttributeError:
        return None


def _array_text(a):
    try:
        return f"{a.dtype}{list(a.shape)} strides {a.strides}" + \
            ("" if a.flags.writeable else ", read-only")
    except AttributeError:
        return type(a).__name__


def made_captures(captures, views, held=None):
    """The ids of the captured tensors the traced function made itself
    (hop.tensor(0), np.arange(5), a NumPy scalar or a list used as an
    operand): nothing but the trace refers to it (nor to the ndarray whose
    memory it is, which owns that memory), so nothing can change it between
    calls and it needs no guard.  A value the user holds has one reference
    more at least (a module, an object, a list, a cell): counted with
    sys.getrefcount against the references hop holds here (tests check both
    sides: test_compile_effects.py).  held: the frame translator's dict of
    the objects the function made (id -> object), one reference more to
    each of them."""
    out = set()
    held = held or {}
    # (the captures whose count is low enough, in C: the rest are held by
    # someone else; a list and a dict, as hop.trace gives them)
    few = _C._few_refs(captures, views) if type(captures) is list and type(views) is dict \
        else range(len(captures))
    for i in few:
        t = captures[i]
        viewed = id(t) in views
        # t: the trace's kept dict, captures, the loop's t, getrefcount's
        # argument; and hop.numpy's (array, tensor) entry of the trace
        if sys.getrefcount(t) > 4 + viewed:
            continue
        owner = views[id(t)] if viewed else _C._base(t)
        # the owner: t's base and buffer, the local, getrefcount's argument;
        # and that entry and the views dict
        if owner is not None and not (_np is not None and isinstance(owner, _np.ndarray) and
                                      sys.getrefcount(owner) <=
                                      4 + 2 * viewed + (id(owner) in held)):
            continue
        # a view (np.linspace's result is one): its bases, each held by the
        # view before it only (and the local, getrefcount's argument)
        while owner is not None and owner.base is not None:
            owner = owner.base
            if not isinstance(owner, _np.ndarray) or \
                    sys.getrefcount(owner) > 3 + (id(owner) in held):
                break
        else:
            out.add(id(t))
        del owner
    return out


def _env_ids(guards, unsourced, captures):
    """The addresses of the environment's tensors and ndarrays the guards
    hold by identity ("id", "ndarray") and of the array under a capture
    without a source: what no argument leaf of a call may be, besides the
    captures.  The trace took each argument for an object of its own (a
    proxy), so `x is G` answered False: a call that passes G itself is not
    the plan's (_trace.EnvArgument).  Addresses, no references: a call
    checks them after the guards held, when each is the traced object,
    alive (docs/ARCHITECTURE.md, "An argument that is an object of the
    environment")."""
    env = [id(g.expected) if g.kind == "id" else g.held[0] for g in guards
           if g.kind == "ndarray" or g.kind == "id" and _array_like(g.expected)]
    for i in unsourced:
        a = _C._base(captures[i])
        if _np is not None and type(a) is _np.ndarray:
            env.append(id(a))
    return tuple(dict.fromkeys(env))


def _live_entry(j, g):
    """Guards.live_entries' entry of "ndarray" guard g, the plan's j-th."""
    # (a layout read without NumPy's C API, a tuple, is never the same to
    # _C: every call then takes the full check, which compares it and makes
    # the capture)
    src, (ident, lay) = g.source, g.held
    cap = -1 if g.capture is None else g.capture
    if src.kind == "global" and not src.path and type(src.base) is dict:
        return (cap, j, 0, src.base, src.key, ident, lay)
    if src.kind == "cell" and not src.path:
        return (cap, j, 1, src.base, None, ident, lay)
    return (cap, j, 2, src, _read_no_leaves, ident, lay)


def _read_no_leaves(src):
    return src.read(None)


def _rooted_in_args(src):
    """Whether source src starts at an argument (read with the call's leaves)."""
    return src.kind == "arg"


def _made_from(t, a):
    """Whether capture t is what _C.asarray(a) makes: ndarray a's whole
    memory, its base a (so a tensor made from a at each call is the same
    input)."""
    if _C._base(t) is not a:
        return False
    try:
        u = _C.asarray(a)
    except Exception:  # noqa: BLE001 (not an array hop wraps: kept as traced)
        return False
    return (u.data_ptr(), u.shape, u.stride(), u.dtype) == \
        (t.data_ptr(), t.shape, t.stride(), t.dtype)


def _same_layout(a, lay):
    """Whether ndarray a is laid out as layout lay says (_layout)."""
    return _C._np_same_layout(a, lay) if type(lay) is bytes else _layout(a) == lay


def _shares(a, t):
    """Whether hop tensor t is ndarray a's memory, not a copy."""
    try:
        return a.__array_interface__["data"][0] == t.data_ptr() and a.nbytes > 0
    except Exception:
        return False


def _empty_cell(cell):
    try:
        cell.cell_contents
    except ValueError:
        return True
    return False


def _absent(src):
    """Whether an absent guard's source (a global, a cell) still holds nothing."""
    return src.key not in src.base if src.kind == "global" else _empty_cell(src.base)


def _lacks(d, names):
    """Whether dict d holds none of names (a "lacks" guard)."""
    for n in names:
        if n in d:
            return False
    return True


def _short(v):
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


_FACTORIES = {}  # guard shapes -> a function binding the objects, returning check


def _generate(guards, names_in_c=False):
    """One function `check(e, l)`: every source `is` (len: ==) the object
    in e (a weak id guard: the object its reference in e gives, never a
    freed one's None); False on any difference or error.  Its text depends only on the
    guards' shapes (kinds and paths), so it is compiled once per shape and
    each plan binds its own objects (globals dicts, cells, keys).  With
    names_in_c, the names guard has no term (its caller checks it in C):
    None when no guard is left."""
    return _bind(*_shape(guards), names_in_c)


def _shape(guards):
    """(the guards' shapes, the objects their check binds, the indices of
    the names guards): _generate's reading of the guards, which _bind turns
    into a check with or without the names' term.  Per guard (in C,
    python/_C/guard_scan.c): ("weak" or its kind, its source's kind, an
    argument's key else None, its path's steps); the objects: a global's
    dict and name, another non-argument root's base, then the path's
    (_path_steps)."""
    return _C._guard_shape(guards if type(guards) is list else list(guards), _path_steps)


def _path_steps(path, objs):
    """The steps of a non-empty source path in a check's shape (an
    attribute named by an identifier is its name, a hop.numpy array's
    tensor "array" or "array_scalar", any other step its kind, its key
    appended to objs)."""
    steps = []
    for step, key in path:
        if step == "array":
            steps.append("array_scalar" if key else "array")
        elif step == "attr" and key.isidentifier() and not keyword.iskeyword(key):
            steps.append(key)
        else:
            steps.append(step)
            objs.append(key)
    return tuple(steps)


def _bind(shape, objs, names, names_in_c=False, in_c=()):
    """_generate's check of guards of these shapes, bound to objs; with
    names_in_c, without the terms of the names guards and of the guards in_c
    (indices), which C checks."""
    if names_in_c:
        skip = set(names).union(in_c)
        if len(skip) == len(shape):
            return None
        shape = list(shape)
        for j in skip:
            shape[j] = ("names_c",) + shape[j][1:]
    shape = tuple(shape)
    if not shape:
        return None
    make = _FACTORIES.get(shape)
    if make is None:
        make = _compile_factory(shape)
        if len(_FACTORIES) >= 1024:
            # (the oldest shape goes: a full cache that kept its first 1,024
            # made a new factory, an exec'd function in a cycle with its
            # namespace, for every later plan of a new shape, again and again)
            try:
                del _FACTORIES[next(iter(_FACTORIES))]
            except (RuntimeError, KeyError, StopIteration):
                pass  # (another thread changed it meanwhile)
        _FACTORIES[shape] = make
    return make(*objs)


def _compile_factory(shape):
    params = []

    def param():
        params.append(f"_o{len(params)}")
        return params[-1]

    terms = []
    for j, (kind, root, arg, steps) in enumerate(shape):
        if root == "global":
            text = f"{param()}[{param()}]"
        elif root == "cell":
            text = f"{param()}.cell_contents"
        elif root == "arg":
            text = f"l[{int(arg)}]"
        else:
            text = param()
        for step in steps:
            if step == "attr":
                text = f"getattr({text}, {param()})"
            elif step == "item":
                text = f"{text}[{param()}]"
            elif step == "entry":
                text = f"_entry({text}, {param()})"
            elif step in ("array", "array_scalar"):
                text = f"_array_tensor({text}, {step == 'array_scalar'})"
            else:
                text += f".{step}"
        if kind == "absent":
            # (a global: its dict and name; a cell: the cell)
            terms.append(f"{params[-1]} not in {params[-2]}" if root == "global" else
                         f"_empty({params[-1]})")
        elif kind == "layout":
            terms.append(f"_same_layout({text}, e[{j}])")
        elif kind == "ndarray":
            # (its id; the layout guard of the same source follows)
            terms.append(f"id({text}) == e[{j}][0]")
        elif kind == "names":
            # (the dicts' tags as last checked, else the names read again)
            terms.append(f"{text}.check()")
        elif kind == "names_c":
            continue  # (checked in C before this check: Guards.check_c, check_live)
        elif kind == "contents":
            terms.append(f"_same_contents({text}, e[{j}])")
        elif kind == "len":
            terms.append(f"len({text}) == e[{j}]")
        elif kind == "lacks":
            terms.append(f"_lacks({text}, e[{j}])")
        elif kind == "eq":
            terms.append(f"isinstance({text}, _SETS) and tuple({text}) == e[{j}]")
        elif kind == "weak":
            # (a freed object's reference gives None, which nothing passes)
            terms.append(f"{text} is e[{j}]() is not None")
        else:
            terms.append(f"{text} is e[{j}]")
    src = (f"def make({', '.join(params)}):\n"
           "    def check(e, l):\n        try:\n            return (" +
           "\n                    and ".join(terms) +
           ")\n        except Exception:\n            return False\n    return check\n")
    # (_C's own compare where NumPy's C API answers: no Python frame, no
    # bytes made per check)
    fast = _np is not None and _C._np_layout(_np.empty(0)) is not None
    scope = {"_array_tensor": _array_tensor, "_entry": _entry, "_empty": _empty_cell,
             "_SETS": (set, frozenset),
             "_lacks": _lacks,
             "_same_contents": _C._np_same_contents if fast else _same_contents,
             "_same_layout": _C._np_same_layout if fast else lambda a, e: _layout(a) == e}
    exec(compile(src, "<hop guards>", "exec"), scope)
    return scope["make"]
