"""What a Python function reads from outside itself: the one walker.

Four callers need it, each for its own reason:

  the guards (_guards.scan)      what a compiled plan baked in, to re-check on
                                 every call;
  the invoke_subgraph key        what a body's subgraph depends on, so two
  (_hops._subgraph_key)          calls share it only when it would trace the
                                 same;
  the purity check               what a HOP body may mutate, to snapshot it;
  (_purity._Check, run_pure)
  the body effect search         whether a body may call print or a functools cache
                                 (_purity.body_effects).

All of them read the same things -- a function's closure cells, the globals
its code names, its defaults, and through those the Python functions it calls
-- so this module owns that reading: the names a code object uses (cached
per code object), the roots of a function (`roots`), and the walk from a
function to the functions whose code runs with it (`Walk`).  A `Policy` says
what one caller needs: which roots (defaults or not; hop's own functions by
their cells only), which functions count as called (the same module, the
user's modules, any), in which order (breadth first with a limit: the
guards; depth first with the roots of a callee recorded where it is met: the
purity check, the print search), how deep, and what to record at each root
(`Policy.root`).  What a caller records at a value (a Guard with its
Source, a key, a snapshot) stays the caller's: those are three different
answers about the same walk.

Caching.  A code object is immutable (co_names, co_consts, co_freevars are
fixed when it is made), so the names it uses are computed once per code
object and kept while it lives (a weak reference: the cache never keeps a
user's code alive).  What a name holds is never cached: globals, cells and
defaults can be rebound at any time, so every walk reads them anew.
"""

import builtins
import dis
import sys
import types
import weakref

__all__ = ["code_names", "names_of", "is_hop_module", "is_hop_function", "is_user_module",
           "class_attr", "root_value", "roots", "reads", "Policy", "Walk"]

MISSING = object()  # a name that holds nothing (an empty cell, a global not defined)

_ref = weakref.ref


class HopRef(weakref.ref):
    """A weak reference hop itself holds (a guard's, an environment
    array's): NumPy refuses to resize an array any weak reference points
    at, and hop.numpy's ndarray.resize counts the user's alone, so an array
    a compiled call read stays resizable exactly when NumPy's would be."""
    __slots__ = ()


def code_names(code, out):
    """Adds to out every global or attribute name code (and the code of the
    functions defined inside it) uses; returns out.  A string constant that
    is a name, or dotted names, counts too: the code may read the attribute
    it names at run time (`getattr(o, "n")`, `operator.attrgetter("a.b")`,
    `operator.methodcaller("count", 1)`), which the guards must check as
    they check `o.n`.  The keyword names of the code's calls do not (`f(a,
    scale=2.0)`: the tuple ("scale",) only KW_NAMES reads): as names they
    guarded a global of the same name the code never reads, and a loop that
    rebound it recompiled on every call."""
    out.update(code.co_names)
    # (KW_NAMES reads a tuple of strings: a code without one has nothing to
    # read its instructions for)
    kw_only = _scan(code)[1] if any(type(c) is tuple and c and type(c[0]) is str
                                    for c in code.co_consts) else ()
    _const_names(code, kw_only, out)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            code_names(const, out)
    return out


def _const_names(code, kw_only, out):
    """Adds to out the names code's own string constants spell (code_names'
    rule), but those of the constants at the indices kw_only (its calls'
    keyword names); returns out."""
    for i, const in enumerate(code.co_consts):
        if i in kw_only:
            continue
        if type(const) is str or type(const) in (tuple, frozenset):
            for c in (const,) if type(const) is str else const:
                if type(c) is str and len(c) <= 64:
                    out.update(p for p in c.split(".") if p.isidentifier())
    return out


# the instructions whose name operand is a global's (or, in a class body or
# at module level, a name's): LOAD_GLOBAL's operand is co_names[arg >> 1] in
# CPython 3.11, the others' co_names[arg]
_GLOBAL_OPS = {dis.opmap[n]: n == "LOAD_GLOBAL" for n in (
    "LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME", "STORE_NAME", "DELETE_NAME")
    if n in dis.opmap}
_KW_NAMES = dis.opmap.get("KW_NAMES")  # (CPython 3.11 and 3.12; None before)
_LOAD_CONST = dis.opmap["LOAD_CONST"]


def _scan(code):
    """One pass over code's own instructions: (the names they use as
    globals, the indices of the constants only KW_NAMES reads: the keyword
    names of its calls; a constant it also loads as a value, equal constants
    being one, is not among them)."""
    names, globs, kw, loaded = code.co_names, set(), set(), set()
    for _, op, arg in dis._unpack_opargs(code.co_code):
        shifted = _GLOBAL_OPS.get(op)
        if shifted is not None:
            globs.add(names[arg >> 1 if shifted and sys.version_info >= (3, 11) else arg])
        elif op == _KW_NAMES:
            kw.add(arg)
        elif op == _LOAD_CONST:
            loaded.add(arg)
    return globs, kw - loaded


def global_names(code, out, names):
    """Adds to out the names code (and the code of the functions defined
    inside it) may read or write as globals: those its instructions use as
    globals and those its string constants spell (`globals()["n"]`,
    `getattr(module, "n")`), not its attribute names (`a.shape`, `a.T`,
    `a.mean()`: co_names holds them too, and as global roots they guarded a
    global `shape` the code never reads, so a loop rebinding it recompiled
    every call up to the limit); and to names what code_names adds, from the
    same pass over each code object.  Returns out."""
    globs, kw_only = _scan(code)
    out |= globs
    names.update(code.co_names)
    spelled = _const_names(code, kw_only, set())
    out |= spelled
    names |= spelled
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            global_names(const, out, names)
    return out


class _Names:
    """What is known of one code object: `set`, its names (code_names) for
    membership; `order`, the same names in the order a set built by
    code_names iterates them (the guards queue callees in that order);
    `sorted`, sorted; `gorder` and `gsorted`, the names it may use as
    globals (global_names) in `order`'s order (the walk's candidates) and
    sorted (the order global roots are read in); `effects`, the purity
    analysis of the code (_code_effects._effects), made when first asked for."""

    __slots__ = ("set", "order", "sorted", "gorder", "gsorted", "effects", "code", "loads",
                 "probes", "computes", "imports", "__weakref__")

    def __init__(self, code, ref):
        s = set()
        g = global_names(code, set(), s)
        self.order = tuple(s)
        self.set = frozenset(s)
        self.sorted = tuple(sorted(s))
        self.gorder = tuple(n for n in self.order if n in g)
        self.gsorted = tuple(sorted(g))
        self.effects = None
        self.loads = None
        self.probes = None
        self.computes = None
        self.imports = None
        self.code = ref

    def probed(self):
        """The attribute names the code (and the code defined in it) may
        read where their absence is an answer: its identifier string
        constants (getattr(o, "k", d), hasattr(o, "k")) and the attributes
        it loads inside a try block (`o.k` under `except AttributeError`),
        made when first asked for."""
        if self.probes is None:
            code = self.code()
            self.probes = frozenset() if code is None else _probed(code, set())
        return self.probes

    def computed_names(self):
        """Whether the code (or the code defined in it) calls getattr or
        hasattr with an attribute name it computes (`getattr(o, "a" +
        str(i))`): not a constant, nor a global, a closure cell or a
        parameter (whose strings the guards spell, _guards._spelled_names),
        made when first asked for."""
        if self.computes is None:
            code = self.code()
            self.computes = code is not None and _computes_names(code)
        return self.computes

    def global_loads(self):
        """The names the code (and the code defined in it) loads or deletes
        as globals (LOAD_GLOBAL, DELETE_GLOBAL; a class body's LOAD_NAME),
        made when first asked for: not its attribute names."""
        if self.loads is None:
            code = self.code()
            self.loads = frozenset() if code is None else _global_loads(code, set())
        return self.loads

    def imported(self):
        """(name, level) of each `import` (IMPORT_NAME) in the code and the
        code defined in it, in order, made when first asked for (the guards
        root the modules a function imports itself: _guards._imports_read)."""
        if self.imports is None:
            code = self.code()
            self.imports = () if code is None else tuple(_imports(code, []))
        return self.imports


_LOADS = frozenset(["LOAD_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME"])
_ATTR_LOADS = frozenset(["LOAD_ATTR", "LOAD_METHOD"])


def _imports(code, out):
    # IMPORT_NAME's operands are the level and the fromlist, pushed in that
    # order: the level is the constant before the last (before, the last was
    # read, the fromlist of `from .cfg import K`: level 0, so the guards
    # looked for a top-level module cfg and never saw pkg.cfg.K change)
    level = last = 0
    for ins in dis.get_instructions(code):
        if ins.opname == "LOAD_CONST":
            level, last = last, ins.argval
        elif ins.opname == "IMPORT_NAME":
            out.append((ins.argval, level if type(level) is int else 0))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _imports(const, out)
    return out


def _probed(code, out):
    b = dis.Bytecode(code)
    spans = [(e.start, e.end) for e in b.exception_entries]
    for i in b:
        if i.opname in _ATTR_LOADS and any(a <= i.offset < z for a, z in spans):
            out.add(i.argval)
    for const in code.co_consts:
        if type(const) is str and const.isidentifier():
            out.add(const)
        elif isinstance(const, types.CodeType):
            _probed(const, out)
    return out


_JUMPS = frozenset(dis.hasjrel + dis.hasjabs)
_SPELLED = frozenset(["LOAD_CONST", "LOAD_GLOBAL", "LOAD_DEREF", "LOAD_CLASSDEREF"])


def _computes_names(code):
    """_Names.computed_names of code: each getattr/hasattr call's name
    operand found by the stack depth from the call's load to its PRECALL
    (a call's own operands sit above the NULL and function it pushes, so an
    inner PRECALL never meets its argument count as the depth); a call this
    cannot follow (a jump among its operands) counts."""
    ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    for n, i in enumerate(ins):
        if i.opname != "LOAD_GLOBAL" or i.argval not in ("getattr", "hasattr"):
            continue
        depth, name_at, before = 0, None, {}
        for j in range(n + 1, len(ins)):
            x = ins[j]
            if x.opcode in _JUMPS:
                return True
            before[j] = depth
            if x.opname == "PRECALL" and depth == x.arg:
                break
            after = depth + dis.stack_effect(x.opcode, x.arg if x.opcode >= dis.HAVE_ARGUMENT
                                             else None)
            if depth == 1 and after >= 2:
                name_at = j  # (the name operand starts here, the last time)
            depth = after
        else:
            return True
        # one instruction: up to the PRECALL, or to the default's start
        # (from which the depth stays above the name's until the PRECALL)
        if name_at is None or x.arg not in (2, 3) or \
                x.arg == 2 and j != name_at + 1 or \
                x.arg == 3 and any(before[k] < 3 for k in range(name_at + 2, j + 1)):
            return True
        first = ins[name_at]
        if not (first.opname in _SPELLED or
                first.opname == "LOAD_FAST" and first.argval in params):
            return True
    return any(_computes_names(c) for c in code.co_consts if isinstance(c, types.CodeType))


def _global_loads(code, out):
    import dis
    out.update(i.argval for i in dis.get_instructions(code) if i.opname in _LOADS)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _global_loads(const, out)
    return frozenset(out)


# id(code) -> its _Names, while the code lives: the weak reference's
# callback drops the entry when the code is freed, before its id can be
# reused; the check that the reference still gives this code is a guard all
# the same.  (Keyed by id, not by the code: a code object hashes its whole
# contents on every lookup.)
_names_cache = {}


def names_of(code):
    """The _Names of code, computed once per code object (see the module's
    doc: a code object cannot change)."""
    n = _names_cache.get(id(code))
    if n is not None and n.code() is code:
        return n
    key = id(code)
    # the callback holds the dict itself: at interpreter exit the module's
    # globals are cleared before the last code objects die
    n = _Names(code, _ref(code, lambda _, key=key, cache=_names_cache: cache.pop(key, None)))
    _names_cache[key] = n
    return n


def loaded_hop_numpy():
    """hop.numpy once it is imported whole, else None (not imported, or
    another thread still importing it: a module half made, whose ndarray
    may not be defined yet; no hop.numpy array exists before it is).  Never
    imports it.  Before, a compiled function's first call while another
    thread imported hop.numpy failed its effect analysis on the half-made
    module and ran eagerly ever after."""
    m = _HOP_NUMPY[0]
    if m is not None:
        return m
    m = sys.modules.get("hop.numpy")
    if m is None or getattr(getattr(m, "__spec__", None), "_initializing", False):
        return None
    _HOP_NUMPY[0] = m  # (whole: the same module from now on, read per traced value)
    return m


_HOP_NUMPY = [None]


def is_hop_module(name):
    """Whether a module name is hop itself or one of its submodules: hop's
    own functions and globals are its machinery, not user state, so the
    walkers of what a function reads (the purity snapshot, guards, effects,
    the invoke_subgraph key) treat them alike."""
    return name == "hop" or name.startswith("hop.")


def is_hop_function(fn):
    """Whether fn (a Python function) is defined in hop itself."""
    return is_hop_module((getattr(fn, "__globals__", None) or {}).get("__name__") or "")


# Code of these packages is not the user's: the guards do not follow their
# functions (they are guarded by identity where they are values).
_LIBRARY_PACKAGES = frozenset({"hop", "numpy", "torch", "hypothesis", "pytest", "_pytest"})


def is_user_module(name):
    """Whether a module name is the user's: not the standard library, hop,
    NumPy or a test framework."""
    top = name.partition(".")[0]
    return top not in _LIBRARY_PACKAGES and top not in sys.stdlib_module_names


def class_attr(t, name, missing=MISSING):
    """The attribute name of class t as its MRO's dicts hold it (no
    descriptor runs), or missing."""
    for k in getattr(t, "__mro__", (t,)):
        d = k.__dict__
        if name in d:
            return d[name]
    return missing


def cell_value(cell, missing=MISSING):
    try:
        return cell.cell_contents
    except ValueError:
        return missing


def root_value(fn, kind, name, missing=MISSING):
    """What fn's global ("g": of its module, else a builtin) or closure cell
    ("c") called name holds now, or missing."""
    if kind == "g":
        v = fn.__globals__.get(name, MISSING)
        return getattr(builtins, name, missing) if v is MISSING else v
    for n, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        if n == name:
            return cell_value(cell, missing)
    return missing


# ------------------------------------------------------------------ roots

def roots(fn, policy, names=None):
    """(kind, name, holder, value) for what fn reads from outside, in the
    order every caller reads them: its closure cells ("cell", holder the
    cell; an empty one only when policy.empty_cells, with value MISSING),
    the globals its code may use (global_names) that are defined ("global",
    holder the globals dict; sorted by name; when policy.absent_globals, then those its
    code loads that neither its globals nor its builtins define, with value
    MISSING), then, when policy.defaults, its defaults
    ("default", name the index) and keyword defaults ("kwdefault", name the
    keyword; holder fn for both).  A function of hop itself gives its cells
    only when policy.hop_cells: hop's globals are its machinery (registries
    other threads change), not what the user's body computes.  names: the
    code's _Names when the caller has them."""
    code = fn.__code__
    out = []
    closure = getattr(fn, "__closure__", None)
    if closure:
        for name, cell in zip(code.co_freevars, closure):
            try:
                out.append(("cell", name, cell, cell.cell_contents))
            except ValueError:
                if policy.empty_cells:
                    out.append(("cell", name, cell, MISSING))
    g = getattr(fn, "__globals__", None) or {}
    if not policy.hop_cells or not is_hop_module(g.get("__name__") or ""):
        get = g.get
        names = names or names_of(code)
        for name in names.gsorted:
            v = get(name, MISSING)
            if v is not MISSING:
                out.append(("global", name, g, v))
        if policy.absent_globals:
            b = g.get("__builtins__", builtins)
            b = b if isinstance(b, dict) else vars(b)
            for name in names.gsorted:
                if name not in g and name not in b and name in names.global_loads():
                    out.append(("global", name, g, MISSING))
    if policy.defaults:
        for i, v in enumerate(fn.__defaults__ or ()):
            out.append(("default", i, fn, v))
        for k, v in (fn.__kwdefaults__ or {}).items():
            out.append(("kwdefault", k, fn, v))
    return out


class Policy:
    """What one caller of the walk needs (a caller subclasses it).

    empty_cells  an empty closure cell is a root (with value MISSING)
    absent_globals  a global the code loads that is not defined is a root
                 (with value MISSING)
    defaults     defaults and keyword defaults are roots
    hop_cells    a function of hop itself has its cells as roots, no globals
    by_code      functions are walked once per code object (not per function)
    limit        functions walked at most, breadth first (None: no limit)
    depth        calls deep at most, depth first (None: no limit)
    """

    empty_cells = False
    absent_globals = False
    defaults = False
    hop_cells = False
    by_code = False
    limit = None
    depth = None

    def visit(self, walk, fn, roots, depth, names):
        """Depth first: records fn's roots (the list roots() gives; names:
        its code's _Names), and
        walks the functions whose code runs with fn where it meets them
        (walk.depth_first(callee, self, depth + 1)); walk.stop() ends the
        walk."""

    def reached(self, walk, fn):
        """Breadth first: called as fn is added to walk.functions."""

    def modules_of(self, values):
        """Breadth first: the modules among values whose attributes the
        code names are candidates too (none by default)."""
        return ()

    def callee(self, walk, fn, value):
        """Breadth first: the Python function whose code runs when fn runs,
        if value (a candidate of fn's) is one to follow; else None."""
        return None


class Walk:
    """The state of one walk from a function to what it reads and the
    functions it calls, each step as a Policy says.  functions: the Python
    functions walked, in the order met (None unless keep); seen: the ids of the functions
    walked (and, for the guards, of the objects they visited: one set, so an
    object met twice is walked once).  The walk does not hold the policy
    (each step is given it): a policy keeps its walk, and a cycle between
    the two would leave every purity check to the garbage collector."""

    def __init__(self, keep=True):
        self.functions = [] if keep else None  # (None: not kept)
        self.seen = set()
        self.stopped = False

    def stop(self):
        self.stopped = True

    def depth_first(self, fn, p, depth=0):
        """Visits fn (policy.visit with its roots) unless the walk stopped,
        fn has no code, was walked already, or is deeper than policy.depth.
        The policy walks a callee where it meets it, so the callee's roots
        come before the rest of fn's."""
        code = getattr(fn, "__code__", None)
        if code is None or self.stopped or p.depth is not None and depth > p.depth:
            return
        key = id(code) if p.by_code else id(fn)
        if key in self.seen:
            return
        self.seen.add(key)
        if self.functions is not None:
            self.functions.append(fn)
        names = names_of(code)
        p.visit(self, fn, roots(fn, p, names), depth, names)

    def breadth_first(self, fn, p):
        """Adds fn and the functions it reaches, breadth first, to
        self.functions (at most policy.limit in all).  The candidates of a
        function are its cells, the globals its code may use (global_names,
        in the order of its names; not a global named like an attribute it
        reads: `a.mean()` does not call a global `mean`), the attributes of
        the policy's modules that its code names (policy.modules_of) and its
        defaults; the policy's callee()
        says which of them are functions whose code runs too."""
        todo = [fn]
        while todo and (p.limit is None or len(self.functions) < p.limit):
            f = todo.pop(0)
            if id(f) in self.seen:
                continue
            self.seen.add(id(f))
            self.functions.append(f)
            p.reached(self, f)
            code = f.__code__
            info = names_of(code)
            names = info.order
            cells = [cell_value(c) for c in (f.__closure__ or ())]
            g = f.__globals__
            glob = [g.get(n) for n in info.gorder]
            mods = p.modules_of(cells + glob)
            attrs = [getattr(m, n, None) for m in mods for n in names] if mods else []
            for v in cells + glob + attrs + list(f.__defaults__ or ()):
                v = p.callee(self, f, v)
                if v is not None and id(v) not in self.seen:
                    todo.append(v)


def reads(fn):
    """(name, value) for what fn reads from outside: its closure cells (those
    that are set) and the globals its code names (builtins excluded)."""
    if getattr(fn, "__code__", None) is None:
        return []
    return [(r[1], r[3]) for r in roots(fn, _PLAIN)]


_PLAIN = Policy()
