"""Reading a code object: what it may do to the names it reads from outside.

An abstract interpretation of a function's bytecode (and of the code nested
in it), made once per code object and kept with its names (_reads.names_of):
for each outer name -- a closure cell ("c", name) or a global ("g", name) --
whether the code may write through it (WRITE: `v[k] = ...`, `v.a = ...`,
`v += ...`, a method other than a known read-only one, an argument of a
function not known to leave it alone) or use it as data (DATA: arithmetic, an
argument of a hop function), and the calls whose callee is resolved when the
function runs.  The purity check of HOP bodies (_purity.run_pure) reads it.

The same reading serves hop.compile's effect check (_effects.py): besides the
taint of each value it records where the value itself may come from (_V.prov:
a global, a cell, an argument, a call's result, or nothing for an object the
code made), locals per instruction, and per instruction the events that may
change state (Event: a global or nonlocal assigned, an attribute or item
written, an in-place operator, an iteration, a `with`, an attribute read, an
operator of an object) and every call (Site), with line numbers.
"""

import dis
import sys
import types

from ._reads import names_of

__all__ = ["WRITE", "DATA", "ALL", "ANY", "op_dunders", "Event", "Site"]


# Per root, what the body may do with it.
WRITE = 1    # mutate it in place (or something reached from it)
DATA = 2     # use it as a value: arithmetic, an argument of a hop function
ALL = WRITE | DATA

# Methods that leave their receiver as it was (on the builtin containers,
# NumPy arrays and hop tensors).  Any other method may mutate it.
# Methods that store their arguments into the receiver (holds)
_STORING = frozenset("append extend insert add update setdefault __setitem__ appendleft "
                     "extendleft".split())
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
                 "returns", "version", "verdict", "plain", "worst", "call_paths",
                 "__weakref__")

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
        # code -> _V: what a nested code object may return (a function made
        # here and handed to a library that calls it: iter(lambda: G, None))
        self.returns = {}
        self.version = 0  # grows with events and sites (the fixpoint's test)
        self.call_list = ()  # calls, in a fixed order (set once read)
        self.call_paths = ()  # (is a method call, callee path) of each, for _C._pure_callees
        self.verdict = None  # the last (callees, roots) of _verdict
        self.plain = None    # with a plain verdict, what _C._pure_roots reads by
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
    eff.call_paths = tuple((c[0] == "m", c[1]) for c in eff.call_list)
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
    todo = [top]  # (in pre-order; not a closure calling itself: a gc cycle)
    while todo:
        c = todo.pop()
        codes.append(c)
        todo.extend(reversed([k for k in c.co_consts if isinstance(k, types.CodeType)]))
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
# The attribute names of NumPy's index tricks (np.r_, np.c_, np.mgrid,
# np.ogrid): an item of one is a call (_binary_subscr)
_INDEX_TRICKS = frozenset(("r_", "c_", "mgrid", "ogrid"))
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


_UNARY = {"UNARY_NEGATIVE": "__neg__", "UNARY_POSITIVE": "__pos__", "UNARY_INVERT": "__invert__"}


def _operand(v):
    """Whether the special methods an operator runs of v can be resolved:
    v is read from a root (src), or a call here may have made it (its
    class known when checked: `len(S())`, `D[K(1)]`, `S() + x`)."""
    return v.src is not None or any(r[0] == "r" for r in v.prov)


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
        if _operand(o):
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
            self.holds(obj, [val])
            self.stored(x, i, obj, val)
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
            self.holds(obj, [val])
            self.stored(x, i, obj, val)
        key, line = self.at(x, i)
        self.eff.event(key, "item", line, "set" if store else "del", obj)

    @_handles("BINARY_SUBSCR")
    def _binary_subscr(self, x, s, i):
        obj, k = _pop(s, 2)
        if _operand(obj):
            key, line = self.at(x, i)
            self.eff.event(key, "op", line, ("names", ("__getitem__",)), obj)
        if _operand(k):
            # the key's __index__ (a list's), __hash__ and __eq__ (a dict's)
            self.eff.event((self.code, x.offset, 1), "op", self.lines[i],
                           ("names", ("__index__", "__hash__", "__eq__")), k)
        step = ("[]", k.const if k.const is not _NOCONST else ANY)
        part = obj.part(obj.taint | k.taint)
        part.src = _step_src(obj, step)
        if obj.src is not None and len(obj.src) > 2 and obj.src[-1] in _INDEX_TRICKS:
            # `np.r_[x, y]`, `np.mgrid[0:3]`: an item of a module's object
            # that may be NumPy's index trick, whose __getitem__ makes a new
            # array: a call of __getitem__, resolved when checked
            # (_effects._Calls.method_call: a new object, or else a part of
            # the receiver, as any other item)
            key, line = self.at(x, i)
            self.eff.site(key, Site(self.code, line, _V(method="__getitem__"), obj, [k], (), [],
                                    False))
            part.prov = part.reach = frozenset([("r", self.code, key[1])])
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
        if _operand(a):
            eff.event(key, "op", line, ("binary", arg), a)
        if _operand(b):
            eff.event((self.code, x.offset, 1), "op", line, ("reflected", arg), b)
        if arg in _INPLACE_OPS:
            eff.mark(a.taint, WRITE)
            # (a key of its own: under the "op" event's key above it merged
            # into that event and `a = L; a += [3]` changed no global)
            eff.event((self.code, x.offset, 2), "inplace", line, x.argrepr, a)
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
            # `a in b`: b's __contains__ (or iteration), which compares a
            # with b's items (their __eq__ and a's: _effects, "__contains__")
            # and hashes a for a set or dict
            names = (("__eq__", "__ne__", "__hash__"), ("__contains__", "__iter__")) \
                if op == "CONTAINS_OP" else (_CMP_DUNDERS, _CMP_DUNDERS)
            line = self.lines[i]
            for j, v in enumerate((a, b)):
                if _operand(v):
                    self.eff.event((self.code, x.offset, j), "op", line, ("names", names[j]), v)
        s.append(_CLEAN)

    @_handles("UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT")
    def _unary(self, x, s, i):
        (a,) = _pop(s)
        self.eff.mark(a.taint, DATA)
        if _operand(a):  # (its class's __neg__, __pos__, __invert__)
            self.eff.event((self.code, x.offset, 0), "op", self.lines[i],
                           ("names", (_UNARY[x.opname],)), a)
        s.append(_made((a,)))

    @_handles("UNARY_NOT", "TO_BOOL", "CHECK_EXC_MATCH", "CONVERT_VALUE", "FORMAT_SIMPLE")
    def _pop_push_clean(self, x, s, i):
        # a bool, a str, or whether an exception matches: nothing outer
        (a,) = _pop(s)
        if x.opname in ("UNARY_NOT", "TO_BOOL"):
            self._truth(x, i, a)
        s.append(_CLEAN)

    @_handles("FORMAT_VALUE")
    def _format_value(self, x, s, i):
        if x.arg & 0x04:
            _pop(s)
        (v,) = _pop(s)
        if _operand(v):
            # f"{v}": its class's __format__ (__str__, __repr__ for !s, !r)
            self.eff.event((self.code, x.offset, 4), "op", self.lines[i],
                           ("names", ("__format__", "__str__", "__repr__")), v)
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
        vals = _pop(s, x.arg)
        if x.opname == "BUILD_SET":
            self._hashed(x, i, vals)
        s.append(_made(vals))

    @_handles("BUILD_MAP")
    def _build_map(self, x, s, i):
        vals = _pop(s, 2 * x.arg)
        self._hashed(x, i, vals[::2])
        s.append(_made(vals))

    def _hashed(self, x, i, keys):
        """`{a, b}`, `{a: 1}`: the keys' __hash__ and __eq__ (before, not
        followed: a __hash__ that logged ran once, while tracing)."""
        for j, k in enumerate(keys):
            if _operand(k):
                self.eff.event((self.code, x.offset, 8 + j), "op", self.lines[i],
                               ("names", ("__hash__", "__eq__")), k)

    @_handles("BUILD_CONST_KEY_MAP")
    def _build_const_key_map(self, x, s, i):
        s.append(_made(_pop(s, x.arg + 1)))

    @_handles("LIST_APPEND", "SET_ADD", "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE",
              "DICT_MERGE", "MAP_ADD")
    def _add_to(self, x, s, i):
        arg = x.arg
        vals = _pop(s, 2 if x.opname == "MAP_ADD" else 1)
        if x.opname in ("SET_ADD", "MAP_ADD"):
            self._hashed(x, i, vals[:1])
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
        (v,) = _pop(s)
        if x.opname == "RETURN_VALUE":
            old = self.eff.returns.get(self.code)
            self.eff.returns[self.code] = v if old is None else old.merge(v)
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
        (a,) = _pop(s)
        if "NONE" not in x.opname:  # (`is None` runs nothing of a's)
            self._truth(x, i, a)
        return [(None, s), (x.argval, list(s))]

    @_handles("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP")
    def _jump_or_pop(self, x, s, i):
        kept = list(s)
        self._truth(x, i, _pop(s)[0])
        return [(None, s), (x.argval, kept)]

    def _truth(self, x, i, a):
        """A truth test of a (`if a:`, `a and b`, `not a`): its class's
        __bool__, else __len__ (before, not followed: a __bool__ that
        counted its calls ran on the first call only)."""
        if _operand(a):
            self.eff.event((self.code, x.offset, 3), "op", self.lines[i],
                           ("names", ("__bool__", "__len__")), a)

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

    def holds(self, receiver, args):
        """receiver (a local's value) now holds args (`box.append(G)`): what
        is read back from it (`box[-1]`) may be what they are, so the
        locals bound to it reach what they are and reach (as `[G]` does)."""
        held = _made(args)
        if held.reach <= receiver.reach:
            return
        new = _V(receiver.taint, receiver.path, receiver.method, receiver.code, receiver.prov,
                 receiver.reach | held.reach, receiver.src, receiver.const)
        for name in [n for n, v in self.loc.items() if v is receiver]:
            self.store_local(name, new)

    def stored(self, x, i, obj, val):
        """A "hold" event: val stored into obj (an attribute or item), for
        _effects to tell a container of the caller's stored into an object
        the call made, which later code may change through it."""
        if val.prov or val.reach:
            key, line = self.at(x, i)
            self.eff.event((key[0], -1 - key[1]), "hold", line, obj, val)

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
        if callee.method in _STORING and receiver is not _NULL and args:
            self.holds(receiver, args)
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
