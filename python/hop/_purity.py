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

The same reading serves hop.compile's effect check (_effects.py): besides the
taint of each value it records where the value itself may come from (_V.prov:
a global, a cell, an argument, a call's result, or nothing for an object the
code made), locals per instruction, and per instruction the events that may
change state (Event: a global or nonlocal assigned, an attribute or item
written, an in-place operator, an iteration, a `with`, an attribute read, an
operator of an object) and every call (Site), with line numbers.
"""

import builtins
import dis
import sys
import types
import weakref
from collections import deque

from . import _C
from . import _breaks
from ._reads import MISSING as _MISSING, Policy, Walk, is_hop_module, names_of, root_value
from ._reads import code_names  # noqa: F401  (_frame_state imports it from here)

try:
    import numpy as _np
except ImportError:  # NumPy is optional at run time
    _np = None

__all__ = ["run_pure", "body_prints"]

_A_METHOD = object()  # what _callee returns for a method of a value

# Per root, what the body may do with it.
WRITE = 1    # mutate it in place (or something reached from it)
DATA = 2     # use it as a value: arithmetic, an argument of a hop function
ALL = WRITE | DATA

# The snapshot of what a body may mutate covers at most this many elements;
# beyond it a structure is checked by its length only (documented).
_SNAPSHOT_BUDGET = 1_000_000

# Methods that leave their receiver as it was (on the builtin containers,
# NumPy arrays and hop tensors).  Any other method may mutate it.
_READ_METHODS = frozenset("""
    get keys values items copy count index find rfind startswith endswith join split
    format lower upper strip __len__ __getitem__ __contains__ __iter__ __repr__ __str__
    isdisjoint issubset issuperset union intersection difference symmetric_difference
    sum mean max min std var prod any all argmax argmin argsort astype reshape ravel
    flatten transpose tolist item dot nonzero cumsum cumprod conj squeeze swapaxes
    tobytes view numpy size dim numel clone to exp log sin cos tanh sqrt abs relu
    sigmoid matmul permute unsqueeze expand select amax amin clip floor ceil round sign
    expm1 log1p log2 log10 exp2 tan arctan floor_divide remainder bitwise_and bitwise_or
    bitwise_xor bitwise_not
""".split())

# Builtins that do not mutate their arguments.
_PURE_BUILTINS = frozenset(getattr(builtins, n) for n in """
    len isinstance issubclass type id hash repr str int float bool complex abs min max sum
    any all sorted tuple list dict set frozenset range enumerate zip reversed iter print
    round divmod pow format hasattr getattr callable ord chr bytes ascii bin hex oct
""".split())

# NumPy functions that write into an argument.
_NP_WRITERS = frozenset("copyto put place putmask fill_diagonal put_along_axis shuffle "
                        "random.shuffle".split())

_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08  # inspect.CO_VARARGS, CO_VARKEYWORDS

_CMP_DUNDERS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")


_NB_DUNDER = {"add": "add", "and": "and", "floor_divide": "floordiv", "lshift": "lshift",
              "matrix_multiply": "matmul", "multiply": "mul", "remainder": "mod", "or": "or",
              "power": "pow", "rshift": "rshift", "subtract": "sub", "true_divide": "truediv",
              "xor": "xor"}


def op_dunders(detail):
    """The special methods an "op" event's detail may run: ("names", names),
    or ("binary" | "reflected", BINARY_OP's arg)."""
    kind, v = detail
    if kind == "names":
        return v
    name = _nb_name(v)
    return (f"__r{name}__",) if kind == "reflected" else (f"__{name}__", f"__i{name}__")


def _nb_name(arg):
    """The dunder stem of BINARY_OP's operator arg ("add" for + and +=)."""
    ops = getattr(dis, "_nb_ops", ())
    if 0 <= arg < len(ops):
        name = ops[arg][0]
        stem = name[len("NB_INPLACE_"):] if name.startswith("NB_INPLACE_") else name[3:]
        return _NB_DUNDER.get(stem.lower(), stem.lower())
    return "op"


_INPLACE_OPS = frozenset(i for i, (name, _) in enumerate(getattr(dis, "_nb_ops", ()))
                         if name.startswith("NB_INPLACE_"))


# ---------------------------------------------------------------- reading code

class _Unknown(Exception):
    """An opcode the analysis does not model: assume the worst."""


class Event:
    """One instruction that may change state the code did not make (read by
    hop.compile's effect check, _effects.py): kind ("global", "nonlocal",
    "attr", "item", "inplace", "iter", "with", "load"), its line, a detail
    (a name, an operator) and the value it acts on (a _V: where that value may
    come from)."""

    __slots__ = ("kind", "code", "line", "detail", "target")

    def __init__(self, kind, code, line, detail, target):
        self.kind = kind
        self.code = code
        self.line = line
        self.detail = detail
        self.target = target


class Site:
    """One call instruction: its line, the callee, the receiver of a method
    call, the positional arguments, the keyword names and values, and whether
    the arguments are spread (f(*a, **k)): _V's, resolved with the values of
    a call by _effects.py."""

    __slots__ = ("code", "line", "callee", "receiver", "args", "kwnames", "kwargs", "star")

    def __init__(self, code, line, callee, receiver, args, kwnames, kwargs, star):
        self.code = code
        self.line = line
        self.callee = callee
        self.receiver = receiver
        self.args = args
        self.kwnames = kwnames
        self.kwargs = kwargs
        self.star = star

    def merge(self, other):
        """Merges other (the same instruction seen again) in place; whether
        anything grew."""
        grew = False
        for name in ("callee", "receiver"):
            a, b = getattr(self, name), getattr(other, name)
            m = a.merge(b)
            if m is not a:
                setattr(self, name, m)
                grew = True
        for vals, more in ((self.args, other.args), (self.kwargs, other.kwargs)):
            for i, (a, b) in enumerate(zip(vals, more)):
                m = a.merge(b)
                if m is not a:
                    vals[i] = m
                    grew = True
        return grew


class _Effects:
    """What one code object (with its nested functions) may do to the names it
    reads from outside: ("c", freevar) or ("g", global) -> WRITE/DATA flags,
    plus the calls whose callee is resolved at run time.  For hop.compile
    also, per instruction, the events and call sites that may change state
    (what they act on as _V's), resolved with a call's values in
    _effects.py."""

    __slots__ = ("flags", "calls", "call_list", "unknown", "names", "events", "sites",
                 "version", "verdict", "worst", "__weakref__")

    def __init__(self):
        self.names = ()  # code_names of the code object, sorted
        self.flags = {}
        # ("f", callee path, npos, kwnames, arg taint, callee taint, kw unknown,
        #  each positional argument's taint)
        # ("m", receiver path + method, npos, kwnames, arg taint, receiver taint,
        #  kw unknown, each positional argument's taint): resolved against the
        #  function's globals when checked.
        self.calls = set()
        self.unknown = False
        self.events = {}  # (code, offset) -> Event
        self.sites = {}   # (code, offset) -> Site
        self.version = 0  # grows with events and sites (the fixpoint's test)
        self.call_list = ()  # calls, in a fixed order (set once read)
        self.verdict = None  # the last (callees, roots) of _verdict
        self.worst = None    # the roots when the code is unknown: everything may happen

    def mark(self, taint, flag):
        for t in taint:
            self.flags[t] = self.flags.get(t, 0) | flag

    def event(self, key, kind, line, detail, target):
        old = self.events.get(key)
        if old is None:
            self.events[key] = Event(kind, key[0], line, detail, target)
            self.version += 1
            return
        m = old.target.merge(target)
        if m is not old.target:
            old.target = m
            self.version += 1

    def site(self, key, site):
        old = self.sites.get(key)
        if old is None:
            self.sites[key] = site
            self.version += 1
        elif old.merge(site):
            self.version += 1


def _effects(code):
    """The reading of code, made once per code object and kept with its
    names (_reads.names_of: a code object cannot change)."""
    info = names_of(code)
    eff = info.effects
    if eff is not None:
        return eff
    eff = _Effects()
    eff.names = info.sorted
    try:
        _analyze_all(code, eff)
    except _Unknown:
        eff.unknown = True
    except Exception:  # bytecode we misread: never let the check itself fail
        eff.unknown = True
    eff.call_list = tuple(eff.calls)
    info.effects = eff
    return eff


def _analyze_all(top, eff):
    """Abstract interpretation of top and its nested code objects: each stack
    slot and local carries the set of outer names ("taint") its value may
    come from (and, for hop.compile, where the value itself may come from:
    _V.prov).  Locals are followed per instruction; cells shared with nested
    functions carry their values by name, and the whole is repeated until
    nothing changes (everything only grows)."""
    codes = []

    def collect(c):
        codes.append(c)
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                collect(k)
    collect(top)
    outer_free = set(top.co_freevars)
    cells = {}   # local cell name -> _V
    params = {}  # nested code called in place (a comprehension) -> its arguments' _V
    decoded = {c: _decode(c) for c in codes}
    for _ in range(8):
        # Only cells and in-place arguments feed one code's reading into
        # another's: a pass that leaves them as they were read with their
        # final values, and its flags, calls, events and sites are complete.
        before = (dict(cells), dict(params))
        for c in codes:
            _Interp(c, top, outer_free, cells, params, eff).run(decoded[c])
        if (dict(cells), dict(params)) == before:
            return
    raise _Unknown


_EMPTY = frozenset()
_NOCONST = object()
ANY = "*"  # an item step with a key not known before the call


class _V:
    """A stack value.  For the purity check: its taint (the outer names it may
    reach), and what it is when that matters (a dotted path of globals for a
    callee, a bound method name on a receiver, the code of a function made
    here).  For hop.compile's effect check: prov, the roots the value itself
    may be or be part of (("g", name), ("c", name), ("p", param), ("m",
    module), ("r", code, offset) for a call's result, ("?",) unknown; empty:
    an object this call made), reach, the roots of what may be reached from
    it, src, the path that reads it from a root (attribute names and
    ("[]", key) steps), and const, the value of a constant."""

    __slots__ = ("taint", "path", "method", "code", "prov", "reach", "src", "const")

    def __init__(self, taint=_EMPTY, path=None, method=None, code=None, prov=_EMPTY,
                 reach=_EMPTY, src=None, const=_NOCONST):
        self.taint = taint
        self.path = path
        self.method = method
        self.code = code
        self.prov = prov
        self.reach = reach
        self.src = src
        self.const = const

    def merge(self, other):
        if self is other:
            return self
        same_path = self.path == other.path
        same_src = self.src == other.src
        same_const = self.const is other.const or (
            type(self.const) is type(other.const) and self.const == other.const)
        # None (and _NOCONST) is "any": self already covers other there
        if (self.taint >= other.taint and (same_path or self.path is None) and
                (self.method is None or self.method == other.method) and
                (self.code is None or self.code is other.code) and self.prov >= other.prov and
                self.reach >= other.reach and (same_src or self.src is None) and
                (same_const or self.const is _NOCONST)):
            return self
        return _V(self.taint | other.taint, self.path if same_path else None,
                  self.method if self.method == other.method else None,
                  self.code if self.code is other.code else None,
                  self.prov | other.prov, self.reach | other.reach,
                  self.src if same_src else None, self.const if same_const else _NOCONST)

    def part(self, taint=None):
        """A value reached from this one (an item, an attribute, an element
        of its iteration): it may be anything this one is or reaches."""
        both = self.prov | self.reach
        return _V(self.taint if taint is None else taint, prov=both, reach=both)


_CLEAN = _V()
_NULL = _V()  # the NULL a call's callable slot may hold
_UNKNOWN_ARG = frozenset([("?",)])


def _union(vals):
    t = _EMPTY
    for v in vals:
        t = t | v.taint
    return _V(t) if t else _CLEAN


def _made(vals, taint=None):
    """A new object holding vals (a tuple, a list, a sum): taint for the
    purity check as _union, nothing it is, everything they are or reach."""
    t = _EMPTY
    r = _EMPTY
    for v in vals:
        t = t | v.taint
        r = r | v.prov | v.reach
    return _V(t if taint is None else taint, reach=r) if (t or r) else _CLEAN


def _step_src(v, step):
    return v.src + (step,) if v.src is not None else None


def _decode(code):
    """(instructions, their lines, offset -> index, index -> [(handler
    index, stack depth, lasti)]) of code."""
    ins = list(dis.get_instructions(code))
    at = {x.offset: i for i, x in enumerate(ins)}
    handlers = {}
    if getattr(code, "co_exceptiontable", b""):
        parse = getattr(dis, "_parse_exception_table", None)
        if parse is None:
            raise _Unknown
        for e in parse(code):
            for i, x in enumerate(ins):
                if e.start <= x.offset < e.end:
                    handlers.setdefault(i, []).append((at[e.target], e.depth, e.lasti))
    return ins, _lines(ins), at, handlers


def _lines(ins):
    out, line = [], None
    for x in ins:
        pos = getattr(x, "positions", None)
        n = pos.lineno if pos is not None and pos.lineno is not None else x.starts_line
        if n is not None:
            line = n
        out.append(line)
    return out


# step's table: an opcode's name -> _Interp's handler of it (@_handles).
_OPS = {}


def _handles(*names):
    def register(handler):
        for name in names:
            _OPS[name] = handler
        return handler
    return register


def _pop(s, n=1):
    """The top n values of stack s, taken off it (bottom first)."""
    if len(s) < n:
        raise _Unknown
    out = s[len(s) - n:]
    del s[len(s) - n:]
    return out


class _Interp:
    def __init__(self, code, top, outer_free, cells, params, eff):
        self.code = code
        self.outer_free = outer_free
        self.cells = cells
        self.eff = eff
        self.kwnames = ()
        # Arguments: the top code's are the caller's objects ("p" roots); a
        # nested function called in place gets what the code above passes;
        # any other nested function's are unknown.
        nargs = code.co_argcount + code.co_kwonlyargcount + \
            bool(code.co_flags & _CO_VARARGS) + bool(code.co_flags & _CO_VARKEYWORDS)
        names = code.co_varnames[:nargs]
        given = params.get(code)
        if code is top:
            # ("p", n): the argument itself; ("p*", n): what it holds
            self.start = {n: _V(prov=frozenset([("p", n)]), reach=frozenset([("p*", n)]),
                                src=("p", n)) for n in names}
        elif given is not None:
            both = given.prov | given.reach
            self.start = {n: _V(given.taint, prov=both, reach=both) for n in names}
        else:
            self.start = {n: _V(prov=_UNKNOWN_ARG, reach=_UNKNOWN_ARG) for n in names}
        # An argument that nested functions close over is a cell from the
        # start (MAKE_CELL copies it; no STORE_DEREF shows it).
        for n in set(code.co_cellvars) & set(names):
            old = cells.get(n)
            m = self.start[n] if old is None else old.merge(self.start[n])
            if m is not old:
                cells[n] = m
        self.params = params
        self.loc, self.loc_shared = {}, False

    def run(self, decoded):
        """Interprets the code; decoded is _decode(code) (made once per code
        object and analysis)."""
        ins, self.lines, at, handlers = decoded
        self.ins = ins
        # Per instruction: (stack, locals) on entry, merged over the paths
        # that reach it, until nothing grows.
        states = {0: ([], self.start)}
        work = [0]
        budget = 256 * (len(ins) + 1)
        while work:
            budget -= 1
            if budget < 0:
                raise _Unknown
            i = work.pop()
            stack, loc = states[i]
            x = ins[i]
            for j, depth, lasti in handlers.get(i, ()):
                if len(stack) < depth:
                    raise _Unknown
                hs = list(stack[:depth]) + ([_CLEAN] if lasti else []) + [_CLEAN]
                self._flow(states, work, j, hs, loc)
            self.loc, self.loc_shared = loc, True  # copied on the first store
            for nxt, st in self.step(x, list(stack), i):
                self._flow(states, work, at[nxt] if nxt is not None else i + 1, st, self.loc)

    def _flow(self, states, work, j, stack, loc):
        if j >= len(self.ins):
            return
        old = states.get(j)
        if old is None:
            states[j] = (stack, loc)
            work.append(j)
            return
        ostack, oloc = old
        if len(ostack) != len(stack):
            raise _Unknown
        merged = [a.merge(b) for a, b in zip(ostack, stack)]
        grew = any(m is not a for m, a in zip(merged, ostack))
        mloc = oloc
        for name, v in loc.items():
            a = oloc.get(name)
            m = v if a is None else a.merge(v)
            if m is not a:
                if mloc is oloc:
                    mloc = dict(oloc)
                mloc[name] = m
                grew = True
        if grew:
            states[j] = (merged, mloc)
            work.append(j)

    # taint sources
    def deref(self, name):
        if name in self.outer_free:
            root = frozenset([("c", name)])
            return _V(root, ("c", name), prov=root, reach=root, src=("c", name))
        return self.cells.get(name, _CLEAN)

    def own_locals(self):
        """self.loc, copied first if it is still the state's."""
        if self.loc_shared:
            self.loc, self.loc_shared = dict(self.loc), False
        return self.loc

    def store_local(self, name, v):
        self.own_locals()[name] = v

    def store_cell(self, name, v, key, line, op):
        if name in self.outer_free:
            # rebinding an outer cell: the purity check's binding check sees
            # it; for hop.compile it is an effect
            self.eff.event(key, "nonlocal", line, (op, name), _CLEAN)
            return
        old = self.cells.get(name)
        m = v if old is None else old.merge(v)
        if m is not old:
            self.cells[name] = m

    def step(self, x, s, i):
        """Applies instruction x (the i-th) to stack s (and self.loc); returns
        [(next offset or None for the next instruction, stack)]."""
        handler = _OPS.get(x.opname)
        if handler is None:
            if not x.opname.startswith("POP_JUMP_"):  # the names vary by version
                raise _Unknown
            handler = _Interp._pop_jump
        nxt = handler(self, x, s, i)
        return [(None, s)] if nxt is None else nxt

    def at(self, x, i):
        """(the key of instruction x's events and calls, its line)."""
        return (self.code, x.offset), self.lines[i]

    # The opcode handlers (step's table _OPS, filled by @_handles): each
    # applies instruction x to the stack s and returns None to go on to the
    # next instruction with s, or step's list of (next offset, stack).

    # - nothing the analysis follows
    @_handles("NOP", "RESUME", "CACHE", "EXTENDED_ARG", "PRECALL", "COPY_FREE_VARS",
              "MAKE_CELL", "SETUP_ANNOTATIONS", "END_SEND", "LIST_TO_TUPLE", "DELETE_NAME")
    def _nothing(self, x, s, i):
        pass

    @_handles("KW_NAMES")
    def _kw_names(self, x, s, i):
        # (3.11's dis leaves argval unknown here: the names are a constant)
        self.kwnames = tuple(self.code.co_consts[x.arg])

    # - locals, cells and globals
    @_handles("PUSH_NULL")
    def _push_null(self, x, s, i):
        s.append(_NULL)

    @_handles("LOAD_CONST")
    def _load_const(self, x, s, i):
        argval = x.argval
        if isinstance(argval, types.CodeType):
            s.append(_V(code=argval))
        elif isinstance(argval, (str, int, bytes, float, type(None))):
            s.append(_V(const=argval))
        else:
            s.append(_CLEAN)

    @_handles("LOAD_ASSERTION_ERROR", "LOAD_CLOSURE", "LOAD_BUILD_CLASS", "LOAD_LOCALS",
              "WITH_EXCEPT_START")
    def _push_clean(self, x, s, i):
        s.append(_CLEAN)

    @_handles("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR")
    def _load_fast(self, x, s, i):
        s.append(self.loc.get(x.argval, _CLEAN))

    @_handles("LOAD_FAST_LOAD_FAST")
    def _load_fast_load_fast(self, x, s, i):
        for n in x.argval:
            s.append(self.loc.get(n, _CLEAN))

    @_handles("STORE_FAST")
    def _store_fast(self, x, s, i):
        self.store_local(x.argval, _pop(s)[0])

    @_handles("STORE_FAST_STORE_FAST")
    def _store_fast_store_fast(self, x, s, i):
        a, b = _pop(s, 2)
        self.store_local(x.argval[0], b)
        self.store_local(x.argval[1], a)

    @_handles("STORE_FAST_LOAD_FAST")
    def _store_fast_load_fast(self, x, s, i):
        self.store_local(x.argval[0], _pop(s)[0])
        s.append(self.loc.get(x.argval[1], _CLEAN))

    @_handles("DELETE_FAST")
    def _delete_fast(self, x, s, i):
        self.own_locals().pop(x.argval, None)

    @_handles("DELETE_DEREF")
    def _delete_deref(self, x, s, i):
        if x.argval in self.outer_free:
            key, line = self.at(x, i)
            self.eff.event(key, "nonlocal", line, ("del", x.argval), _CLEAN)

    @_handles("DELETE_GLOBAL")
    def _delete_global(self, x, s, i):
        key, line = self.at(x, i)
        self.eff.event(key, "global", line, ("del", x.argval), _CLEAN)

    @_handles("LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF")
    def _load_deref(self, x, s, i):
        if x.opname == "LOAD_FROM_DICT_OR_DEREF":
            _pop(s)
        s.append(self.deref(x.argval))

    @_handles("STORE_DEREF")
    def _store_deref(self, x, s, i):
        key, line = self.at(x, i)
        self.store_cell(x.argval, _pop(s)[0], key, line, "assign")

    @_handles("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS")
    def _load_global(self, x, s, i):
        op = x.opname
        if op == "LOAD_FROM_DICT_OR_GLOBALS":
            _pop(s)
        name = x.argval
        root = frozenset([("g", name)])
        v = _V(root, ("g", name), prov=root, reach=root, src=("g", name))
        null = op == "LOAD_GLOBAL" and x.arg & 1
        if null and sys.version_info < (3, 13):
            s.append(_NULL)
        s.append(v)
        if null and sys.version_info >= (3, 13):
            s.append(_NULL)

    @_handles("STORE_GLOBAL", "STORE_NAME")
    def _store_global(self, x, s, i):
        _pop(s)
        if x.opname == "STORE_GLOBAL":
            key, line = self.at(x, i)
            self.eff.event(key, "global", line, ("assign", x.argval), _CLEAN)

    # - attributes and items
    @_handles("LOAD_ATTR")
    def _load_attr(self, x, s, i):
        (o,) = _pop(s)
        name = x.argval
        path = o.path + (name,) if o.path else None
        method = sys.version_info >= (3, 12) and x.arg & 1
        part = o.part()
        if o.src is not None:
            key, line = self.at(x, i)
            self.eff.event(key, "load", line, name, o)
        if method:
            # [method, self] (or [NULL, attr], which calls the same way).
            s.append(_V(o.taint, path, method=name, prov=part.prov, reach=part.reach,
                        src=_step_src(o, name)))
            s.append(o)
        else:
            s.append(_V(o.taint, path, prov=part.prov, reach=part.reach,
                        src=_step_src(o, name)))

    @_handles("LOAD_METHOD")
    def _load_method(self, x, s, i):
        (o,) = _pop(s)
        argval = x.argval
        path = o.path + (argval,) if o.path else None
        part = o.part()
        s.append(_V(o.taint, path, method=argval, prov=part.prov, reach=part.reach,
                    src=_step_src(o, argval)))
        s.append(o)

    @_handles("LOAD_SUPER_ATTR")
    def _load_super_attr(self, x, s, i):
        _pop(s, 3)
        s.append(_CLEAN)
        if x.arg & 1:
            s.append(_CLEAN)

    @_handles("STORE_ATTR", "DELETE_ATTR")
    def _write_attr(self, x, s, i):
        store = x.opname == "STORE_ATTR"
        obj, val = _pop(s, 2)[::-1] if store else (_pop(s)[0], None)
        self.eff.mark(obj.taint, WRITE)
        if store:
            self.eff.mark(val.taint, DATA)  # now reachable from another object
        key, line = self.at(x, i)
        self.eff.event(key, "attr", line, ("set" if store else "del", x.argval), obj)

    @_handles("STORE_SUBSCR", "STORE_SLICE", "DELETE_SUBSCR")
    def _write_item(self, x, s, i):
        # [value, object, key], [value, object, start, stop] or [object, key]
        store = x.opname != "DELETE_SUBSCR"
        if store:
            val, obj = _pop(s, 3 if x.opname == "STORE_SUBSCR" else 4)[:2]
        else:
            obj = _pop(s, 2)[0]
        self.eff.mark(obj.taint, WRITE)
        if store:
            self.eff.mark(val.taint, DATA)
        key, line = self.at(x, i)
        self.eff.event(key, "item", line, "set" if store else "del", obj)

    @_handles("BINARY_SUBSCR")
    def _binary_subscr(self, x, s, i):
        obj, k = _pop(s, 2)
        if obj.src is not None:
            key, line = self.at(x, i)
            self.eff.event(key, "op", line, ("names", ("__getitem__",)), obj)
        step = ("[]", k.const if k.const is not _NOCONST else ANY)
        part = obj.part(obj.taint | k.taint)
        part.src = _step_src(obj, step)
        s.append(part)

    @_handles("BINARY_SLICE")
    def _binary_slice(self, x, s, i):
        obj, a, b = _pop(s, 3)
        s.append(obj.part())  # a list's slice is new, an array's a view

    # - operators
    @_handles("BINARY_OP")
    def _binary_op(self, x, s, i):
        a, b = _pop(s, 2)
        eff, arg = self.eff, x.arg
        key, line = self.at(x, i)
        eff.mark(a.taint | b.taint, DATA)
        if a.src is not None:
            eff.event(key, "op", line, ("binary", arg), a)
        if b.src is not None:
            eff.event((self.code, x.offset, 1), "op", line, ("reflected", arg), b)
        if arg in _INPLACE_OPS:
            eff.mark(a.taint, WRITE)
            eff.event(key, "inplace", line, x.argrepr, a)
            # a mutable a is changed and is the result; an immutable one
            # gives a new value
            s.append(_V(a.taint | b.taint, prov=a.prov, reach=a.reach | b.prov | b.reach,
                        src=a.src))
        else:
            s.append(_made((a, b)))

    @_handles("COMPARE_OP", "IS_OP", "CONTAINS_OP")
    def _compare_op(self, x, s, i):
        op = x.opname
        a, b = _pop(s, 2)
        if op == "COMPARE_OP":
            self.eff.mark(a.taint | b.taint, DATA)
        if op != "IS_OP":
            names = ("__contains__", "__iter__") if op == "CONTAINS_OP" else _CMP_DUNDERS
            line = self.lines[i]
            for j, v in enumerate((a, b)):
                if v.src is not None:
                    self.eff.event((self.code, x.offset, j), "op", line, ("names", names), v)
        s.append(_CLEAN)

    @_handles("UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT")
    def _unary(self, x, s, i):
        (a,) = _pop(s)
        self.eff.mark(a.taint, DATA)
        s.append(_made((a,)))

    @_handles("UNARY_NOT", "TO_BOOL", "CHECK_EXC_MATCH", "CONVERT_VALUE", "FORMAT_SIMPLE")
    def _pop_push_clean(self, x, s, i):
        # a bool, a str, or whether an exception matches: nothing outer
        _pop(s)
        s.append(_CLEAN)

    @_handles("FORMAT_VALUE")
    def _format_value(self, x, s, i):
        _pop(s)
        if x.arg & 0x04:
            _pop(s)
        s.append(_CLEAN)

    @_handles("FORMAT_WITH_SPEC", "SET_FUNCTION_ATTRIBUTE")
    def _pop2_push_clean(self, x, s, i):
        _pop(s, 2)
        s.append(_CLEAN)

    @_handles("YIELD_VALUE")
    def _yield_value(self, x, s, i):
        self.eff.mark(_pop(s)[0].taint, DATA)
        s.append(_CLEAN)

    # - iteration and the stack
    @_handles("GET_ITER", "GET_YIELD_FROM_ITER")
    def _get_iter(self, x, s, i):
        (a,) = _pop(s)
        key, line = self.at(x, i)
        self.eff.event(key, "iter", line, None, a)
        s.append(_V(a.taint, prov=a.prov, reach=a.prov | a.reach, src=a.src))

    @_handles("GET_LEN")
    def _get_len(self, x, s, i):
        (a,) = _pop(s)
        s.extend([a, _CLEAN])

    @_handles("FOR_ITER")
    def _for_iter(self, x, s, i):
        it = s[-1] if s else _CLEAN
        body = s + [it.part()]
        if sys.version_info >= (3, 12):
            done = s + [_CLEAN]  # jumps to END_FOR, which pops both
        else:
            done = s[:-1]
        return [(None, body), (x.argval, done)]

    @_handles("END_FOR")
    def _end_for(self, x, s, i):
        _pop(s, 2 if sys.version_info < (3, 13) else 1)

    @_handles("POP_TOP", "POP_ITER", "POP_EXCEPT")
    def _pop_top(self, x, s, i):
        _pop(s)

    @_handles("COPY")
    def _copy(self, x, s, i):
        if len(s) < x.arg:
            raise _Unknown
        s.append(s[-x.arg])

    @_handles("SWAP")
    def _swap(self, x, s, i):
        arg = x.arg
        if len(s) < arg:
            raise _Unknown
        s[-1], s[-arg] = s[-arg], s[-1]

    # - building values
    @_handles("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE")
    def _build(self, x, s, i):
        s.append(_made(_pop(s, x.arg)))

    @_handles("BUILD_MAP")
    def _build_map(self, x, s, i):
        s.append(_made(_pop(s, 2 * x.arg)))

    @_handles("BUILD_CONST_KEY_MAP")
    def _build_const_key_map(self, x, s, i):
        s.append(_made(_pop(s, x.arg + 1)))

    @_handles("LIST_APPEND", "SET_ADD", "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE",
              "DICT_MERGE", "MAP_ADD")
    def _add_to(self, x, s, i):
        arg = x.arg
        vals = _pop(s, 2 if x.opname == "MAP_ADD" else 1)
        if len(s) < arg:
            raise _Unknown
        c = s[-arg]
        r = c.reach
        t = c.taint
        for v in vals:
            r = r | v.prov | v.reach
            t = t | v.taint
        s[-arg] = _V(t, prov=c.prov, reach=r) if (t != c.taint or r != c.reach) else c

    @_handles("UNPACK_SEQUENCE", "UNPACK_EX")
    def _unpack(self, x, s, i):
        (v,) = _pop(s)
        arg = x.arg
        n = arg if x.opname == "UNPACK_SEQUENCE" else (arg & 0xFF) + (arg >> 8) + 1
        s.extend([v.part()] * n)

    @_handles("MAKE_FUNCTION")
    def _make_function(self, x, s, i):
        n = 1 + bin(x.arg & 0x0F).count("1") if sys.version_info < (3, 13) else 1
        vals = _pop(s, n)
        # Defaults and closures the new function holds: its own code is
        # analyzed as a nested code object.
        self.eff.mark(_union(vals[:-1]).taint, DATA)
        held = _made(vals[:-1])
        s.append(_V(code=vals[-1].code, reach=held.reach))

    # - calls
    @_handles("CALL")
    def _call(self, x, s, i):
        key, line = self.at(x, i)
        self.call(_pop(s, x.arg + 2), x.arg - len(self.kwnames), self.kwnames, False, s, key,
                  line)
        self.kwnames = ()

    @_handles("CALL_KW")
    def _call_kw(self, x, s, i):
        _pop(s)
        key, line = self.at(x, i)
        self.call(_pop(s, x.arg + 2), x.arg, (), True, s, key, line)

    @_handles("CALL_FUNCTION_EX")
    def _call_function_ex(self, x, s, i):
        vals = _pop(s, 3 + (x.arg & 1))
        key, line = self.at(x, i)
        self.call(vals, 0, (), True, s, key, line)

    @_handles("CALL_INTRINSIC_1")
    def _call_intrinsic_1(self, x, s, i):
        (v,) = _pop(s)
        s.append(_V(v.taint, prov=v.prov, reach=v.reach))

    @_handles("CALL_INTRINSIC_2")
    def _call_intrinsic_2(self, x, s, i):
        s.append(_made(_pop(s, 2)))

    # - control flow
    @_handles("RETURN_VALUE", "RERAISE")
    def _return_value(self, x, s, i):
        _pop(s)
        return []

    @_handles("RAISE_VARARGS")
    def _raise_varargs(self, x, s, i):
        _pop(s, x.arg)
        return []

    @_handles("RETURN_CONST")
    def _return_const(self, x, s, i):
        return []

    @_handles("RETURN_GENERATOR")
    def _return_generator(self, x, s, i):
        s.append(_CLEAN)

    @_handles("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
              "JUMP_NO_INTERRUPT")
    def _jump(self, x, s, i):
        return [(x.argval, s)]

    def _pop_jump(self, x, s, i):
        _pop(s)
        return [(None, s), (x.argval, list(s))]

    @_handles("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP")
    def _jump_or_pop(self, x, s, i):
        kept = list(s)
        _pop(s)
        return [(None, s), (x.argval, kept)]

    @_handles("PUSH_EXC_INFO")
    def _push_exc_info(self, x, s, i):
        (v,) = _pop(s)
        s.extend([_CLEAN, v])

    @_handles("BEFORE_WITH")
    def _before_with(self, x, s, i):
        (v,) = _pop(s)
        key, line = self.at(x, i)
        self.eff.event(key, "with", line, None, v)
        s.extend([_CLEAN, _V(v.taint, prov=v.prov, reach=v.reach)])

    # - imports
    @_handles("IMPORT_NAME")
    def _import_name(self, x, s, i):
        _pop(s, 2)
        root = frozenset([("m", x.argval)])
        s.append(_V(prov=root, reach=root, src=("m", x.argval)))

    @_handles("IMPORT_FROM")
    def _import_from(self, x, s, i):
        mod = s[-1] if s else _CLEAN
        s.append(_V(prov=mod.prov, reach=mod.reach, src=_step_src(mod, x.argval)))

    def call(self, vals, npos, kw, unknown_kw, s, key, line):
        """A call: [callable or NULL, self or callable or NULL, *args]."""
        a, b, args = vals[0], vals[1], vals[2:]
        if sys.version_info >= (3, 13) or a is not _NULL:
            callee, receiver = a, b
        else:
            callee, receiver = b, _NULL
        arg_taint = _union(args).taint
        # each positional argument's taint: which one is a HOP's body
        positional = tuple(v.taint for v in args[:npos])
        # The result: for hop.compile, whatever the call returns, resolved
        # with the callee (a new object, a part of its arguments, unknown).
        r = frozenset([("r", self.code, key[1])])
        s.append(_V(_union(vals).taint, prov=r, reach=r))
        self.eff.site(key, Site(self.code, line, callee, receiver, list(args[:npos]),
                                tuple(kw), list(args[npos:]), unknown_kw))
        if callee.method is not None:
            if callee.path is not None:  # resolved when checked: a module's function?
                self.eff.calls.add(("m", callee.path, npos, kw, arg_taint, receiver.taint,
                                    unknown_kw, positional))
            elif callee.method not in _READ_METHODS:
                self.eff.mark(receiver.taint, WRITE)
                self.eff.mark(arg_taint, ALL)
            return
        if receiver is not _NULL:
            arg_taint = arg_taint | receiver.taint
        if callee.code is not None:  # a function made here, called in place
            given = _made(args if receiver is _NULL else (receiver,) + tuple(args))
            given = _V(arg_taint, prov=given.reach, reach=given.reach)
            old = self.params.get(callee.code)
            m = given if old is None else old.merge(given)
            if m is not old:
                self.params[callee.code] = m
        elif callee.path is not None:
            self.eff.calls.add(("f", callee.path, npos, kw, arg_taint, callee.taint,
                                unknown_kw, positional))
        else:
            self.eff.mark(callee.taint, WRITE)  # maybe a bound method taken earlier
            self.eff.mark(arg_taint, ALL)


def _callee(call, fn):
    """The object a recorded call calls (its path: ("g" or "c", name),
    attributes..., followed through attributes of modules and classes only,
    never a property), or _A_METHOD when it is a method of a value (not of
    a module or class).  One frame per call: a nested body resolves its
    callees on every level (_verdict)."""
    path = call[1]
    if path[0] == "g":
        v = fn.__globals__.get(path[1], _MISSING)
        if v is _MISSING:
            v = getattr(builtins, path[1], _MISSING)
    else:
        v = root_value(fn, "c", path[1])
    method = call[0] == "m"
    for attr in path[2:-1] if method else path[2:]:
        if not isinstance(v, (types.ModuleType, type)):
            return _A_METHOD if method else _MISSING
        v = getattr(v, attr, _MISSING)
    if method:
        if not isinstance(v, (types.ModuleType, type)):
            return _A_METHOD
        return getattr(v, path[-1], _MISSING)
    return v


def _call_summary(call, fn, callee):
    """[(taint, flags)] that one recorded call (calling callee, from
    _callee) means for fn's outer names."""
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
    callees = []
    for call in calls:
        callees.append(_callee(call, fn))
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
    eff.verdict = (tuple(map(_hold, callees)), roots)
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

    def __init__(self):
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
        else:
            v = _verdict(eff, fn)
        for kind, name, holder, value in roots:
            flag, body = v[kind][name]
            (self.cells if kind == "cell" else self.globals).append((name, holder, value))
            # A function of the body's module (or a closure) that the body
            # may call mutates the same state: check what it reaches too
            # (unless it is only a HOP's body: see _verdict).
            if isinstance(value, types.FunctionType) and not body and (
                    value.__globals__ is fn.__globals__ or name in fn.__code__.co_freevars):
                self.scan(value)
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
        for name, cell, value in self.cells:
            try:
                now = cell.cell_contents
            except ValueError:
                now = _MISSING
            if now is not value:
                return f"it rebinds the nonlocal variable {name!r}"
        for name, g, value in self.globals:
            if g.get(name, _MISSING) is not value:
                return f"it rebinds the global variable {name!r}"
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
        for name, cell, value in self.cells:
            if value is _MISSING:
                try:
                    del cell.cell_contents
                except ValueError:
                    pass
            else:
                cell.cell_contents = value
        for name, g, value in self.globals:
            g[name] = value
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


def _read_only_write(exc, check):
    """Whether exc is NumPy refusing a write into an array run_pure locked."""
    return check.locked and isinstance(exc, ValueError) and "read-only" in str(exc)


def _reads_no_global(fn, code):
    """Whether fn's code (nested functions included) reads none of its
    module's globals (a builtin it calls is not one)."""
    names = _effects(code).names
    if not names:
        return True
    g = getattr(fn, "__globals__", None) or {}
    return not any(name in g for name in names)


def body_prints(hop_name, bodies, tr=None):
    """A HOP call of a hop.compile'd function's own code whose body may
    print (itself or a user function it names) is a break at that call
    (_breaks.body_effect): its plan would print once, at trace time, where
    eager prints on every call (on every turn of a loop).  bodies: the
    call's bodies (each has fn and which: hop._hops._Body).  Conservative,
    as the effect check is: a print in a branch not taken counts too (the
    HOP call then runs in Python).  HOP calls in
    hop.trace, in another HOP's body or in a transformation's function are
    traced as before (their print runs while tracing, as jax.jit's does).
    tr: the active trace, when the caller has it (a trace that is not
    hop.compile's returns at once)."""
    if tr is not None and _breaks._COMPILE not in tr.scratch or _breaks._compiling() is None:
        return
    for b in bodies:
        fn, which = b.fn, b.which
        where = _print_site(fn)
        if where is not None:
            _breaks.body_effect(f"the {which} of hop.{hop_name} may call print() ({where}), "
                                f"which a plan cannot repeat on every call", where)


class _PrintSearch(Policy):
    """The print search's walk (_reads.Walk, depth first): fn's code (nested
    code included) and the user functions it reads (its cells and globals,
    6 calls deep; one code object once), stopping at the first that names
    the builtin print."""

    depth = 6
    by_code = True

    def __init__(self):
        self.where = None

    def visit(self, walk, fn, roots, depth, names):
        code = fn.__code__
        if "print" in names.set and "print" not in (getattr(fn, "__globals__", None)
                                                             or {}):
            self.where = _print_line(code)
            walk.stop()
            return
        for root in roots:
            if isinstance(root[3], types.FunctionType):
                walk.depth_first(root[3], self, depth + 1)


def _print_site(fn):
    """Where fn or a user function it reads names the builtin print
    ("file.py:line"), or None (_PrintSearch)."""
    p = _PrintSearch()
    Walk().depth_first(fn, p)
    return p.where


def _print_line(code):
    """"file.py:line" of the first load of the name print in code or the
    code nested in it."""
    import os
    todo = [code]
    while todo:
        c = todo.pop(0)
        for ins in dis.get_instructions(c):
            if ins.argval == "print" and ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                return f"{os.path.basename(c.co_filename)}:{ins.positions.lineno}"
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def run_pure(hop_name, which, fn, args, kwargs=None):
    """fn(*args, **kwargs), raising hop.TraceError (with outer state restored)
    if the body changes state outside itself."""
    code = getattr(fn, "__code__", None)
    if code is None or not code.co_freevars and (not _effects(code).names or
                                                  _reads_no_global(fn, code)):
        # Nothing outside the body that it could change is reachable from it
        # (no cell, no global of its module: the scan would record nothing),
        # so the check is empty: call it (issue #30: a HOP call's body).
        return fn(*args, **kwargs) if kwargs else fn(*args)
    check = _Check()
    try:
        check.scan(fn)
    except BaseException:
        check.unlock()
        raise
    try:
        result = fn(*args, **kwargs) if kwargs else fn(*args)
    except BaseException as e:
        check.unlock()
        what = check.changes()
        if what is None and _read_only_write(e, check):
            names = ", ".join(repr(p) for p, _ in check.locked)
            what = (f"it writes into {names} (a NumPy array defined outside the body)"
                    if len(check.locked) == 1 else
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
