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
"""

import builtins
import dis
import sys
import types
import weakref
from collections import deque

from . import _C

try:
    import numpy as _np
except ImportError:  # NumPy is optional at run time
    _np = None

__all__ = ["run_pure", "reads", "code_names"]

_MISSING = object()
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

_INPLACE_OPS = frozenset(i for i, (name, _) in enumerate(getattr(dis, "_nb_ops", ()))
                         if name.startswith("NB_INPLACE_"))


# ---------------------------------------------------------------- reading code

def code_names(code, out):
    """Adds to out every global or attribute name code (and the code of the
    functions defined inside it) uses; returns out."""
    out.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            code_names(const, out)
    return out


def reads(fn):
    """(name, value) for what fn reads from outside: its closure cells (those
    that are set) and the globals its code names (builtins excluded)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    out = []
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            out.append((name, cell.cell_contents))
        except ValueError:
            pass
    g = getattr(fn, "__globals__", None) or {}
    for name in sorted(code_names(code, set())):
        v = g.get(name, _MISSING)
        if v is not _MISSING:
            out.append((name, v))
    return out


class _Unknown(Exception):
    """An opcode the analysis does not model: assume the worst."""


class _Effects:
    """What one code object (with its nested functions) may do to the names it
    reads from outside: ("c", freevar) or ("g", global) -> WRITE/DATA flags,
    plus the calls whose callee is resolved at run time."""

    __slots__ = ("flags", "calls", "unknown", "names", "__weakref__")

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

    def mark(self, taint, flag):
        for t in taint:
            self.flags[t] = self.flags.get(t, 0) | flag


_effects_cache = weakref.WeakKeyDictionary()


def _effects(code):
    try:
        return _effects_cache[code]
    except (KeyError, TypeError):
        pass
    eff = _Effects()
    eff.names = tuple(sorted(code_names(code, set())))
    try:
        _analyze_all(code, eff)
    except _Unknown:
        eff.unknown = True
    except Exception:  # bytecode we misread: never let the check itself fail
        eff.unknown = True
    try:
        _effects_cache[code] = eff
    except TypeError:
        pass
    return eff


def _analyze_all(top, eff):
    """Abstract interpretation of top and its nested code objects: each stack
    slot carries the set of outer names ("taint") its value may come from.
    Cells shared with nested functions carry taint by name; the whole is
    repeated until nothing changes (taint only grows)."""
    codes = []

    def collect(c):
        codes.append(c)
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                collect(k)
    collect(top)
    outer_free = set(top.co_freevars)
    cells = {}   # local cell name -> taint
    params = {}  # nested code called in place (a comprehension) -> its arguments' taint
    for _ in range(8):
        before = (dict(cells), dict(params), dict(eff.flags), len(eff.calls))
        for c in codes:
            _Interp(c, outer_free, cells, params, eff).run()
        if (dict(cells), dict(params), dict(eff.flags), len(eff.calls)) == before:
            return
    raise _Unknown


_EMPTY = frozenset()


class _V:
    """A stack value: its taint, and what it is when that matters (a dotted
    path of globals for a callee, a bound method name on a receiver)."""

    __slots__ = ("taint", "path", "method", "code")

    def __init__(self, taint=_EMPTY, path=None, method=None, code=None):
        self.taint = taint
        self.path = path
        self.method = method
        self.code = code

    def merge(self, other):
        if self is other or (self.taint >= other.taint and self.path == other.path and
                             self.method == other.method and self.code is other.code):
            return self
        return _V(self.taint | other.taint, self.path if self.path == other.path else None,
                  self.method if self.method == other.method else None,
                  self.code if self.code is other.code else None)


_CLEAN = _V()
_NULL = _V()  # the NULL a call's callable slot may hold


def _union(vals):
    t = _EMPTY
    for v in vals:
        t = t | v.taint
    return _V(t) if t else _CLEAN


class _Interp:
    def __init__(self, code, outer_free, cells, params, eff):
        self.code = code
        self.outer_free = outer_free
        self.cells = cells
        self.eff = eff
        self.kwnames = ()
        # Arguments of a nested function the code above calls in place.
        taint = params.get(code, _EMPTY)
        nargs = code.co_argcount + code.co_kwonlyargcount
        self.locals = {n: taint for n in code.co_varnames[:nargs]} if taint else {}
        self.params = params

    def run(self):
        ins = list(dis.get_instructions(self.code))
        self.ins = ins
        at = {x.offset: i for i, x in enumerate(ins)}
        handlers = []
        parse = getattr(dis, "_parse_exception_table", None)
        if getattr(self.code, "co_exceptiontable", b""):
            if parse is None:
                raise _Unknown
            handlers = [(e.start, e.end, e.target, e.depth, e.lasti) for e in parse(self.code)]
        states = {0: []}
        work = [0]
        # Locals are flow-insensitive: repeat until they stop growing.
        for _ in range(8):
            seen_locals = dict(self.locals)
            states = {0: []}
            work = [0]
            while work:
                i = work.pop()
                stack = states[i]
                x = ins[i]
                for off, depth, lasti in ((h[2], h[3], h[4]) for h in handlers
                                          if h[0] <= x.offset < h[1]):
                    if len(stack) < depth:
                        raise _Unknown
                    hs = list(stack[:depth]) + ([_CLEAN] if lasti else []) + [_CLEAN]
                    self._flow(states, work, at[off], hs)
                for nxt, st in self.step(x, list(stack), i):
                    self._flow(states, work, at[nxt] if nxt is not None else i + 1, st)
            if self.locals == seen_locals:
                return
        raise _Unknown

    def _flow(self, states, work, j, stack):
        if j >= len(self.ins):
            return
        old = states.get(j)
        if old is None:
            states[j] = stack
            work.append(j)
            return
        if len(old) != len(stack):
            raise _Unknown
        merged = [a.merge(b) for a, b in zip(old, stack)]
        if any(m is not a for m, a in zip(merged, old)):
            states[j] = merged
            work.append(j)

    # taint sources
    def deref(self, name):
        if name in self.outer_free:
            return _V(frozenset([("c", name)]), ("c", name))
        return _V(self.cells.get(name, _EMPTY))

    def store_local(self, name, v):
        t = self.locals.get(name, _EMPTY)
        if not v.taint <= t:
            self.locals[name] = t | v.taint

    def store_cell(self, name, v):
        if name in self.outer_free:
            return  # rebinding an outer cell: the binding check sees it
        t = self.cells.get(name, _EMPTY)
        if not v.taint <= t:
            self.cells[name] = t | v.taint

    def step(self, x, s, i):
        """Applies instruction x to stack s; returns [(next offset or None
        for the next instruction, stack)]."""
        op, arg, argval = x.opname, x.arg, x.argval
        eff = self.eff

        def pop(n=1):
            if len(s) < n:
                raise _Unknown
            out = s[len(s) - n:]
            del s[len(s) - n:]
            return out

        nxt = [(None, s)]
        if op in ("NOP", "RESUME", "CACHE", "EXTENDED_ARG", "PRECALL", "COPY_FREE_VARS",
                  "MAKE_CELL", "SETUP_ANNOTATIONS", "END_SEND"):
            pass
        elif op == "KW_NAMES":
            self.kwnames = tuple(argval)
        elif op == "PUSH_NULL":
            s.append(_NULL)
        elif op == "LOAD_CONST":
            s.append(_V(code=argval) if isinstance(argval, types.CodeType) else _CLEAN)
        elif op in ("LOAD_ASSERTION_ERROR", "LOAD_CLOSURE", "LOAD_BUILD_CLASS", "LOAD_LOCALS"):
            s.append(_CLEAN)
        elif op in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR"):
            s.append(_V(self.locals.get(argval, _EMPTY)))
        elif op == "LOAD_FAST_LOAD_FAST":
            for n in argval:
                s.append(_V(self.locals.get(n, _EMPTY)))
        elif op in ("STORE_FAST",):
            self.store_local(argval, pop()[0])
        elif op == "STORE_FAST_STORE_FAST":
            a, b = pop(2)
            self.store_local(argval[0], b)
            self.store_local(argval[1], a)
        elif op == "STORE_FAST_LOAD_FAST":
            self.store_local(argval[0], pop()[0])
            s.append(_V(self.locals.get(argval[1], _EMPTY)))
        elif op in ("DELETE_FAST", "DELETE_DEREF", "DELETE_GLOBAL", "DELETE_NAME"):
            pass
        elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF"):
            if op == "LOAD_FROM_DICT_OR_DEREF":
                pop()
            s.append(self.deref(argval))
        elif op == "STORE_DEREF":
            self.store_cell(argval, pop()[0])
        elif op in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"):
            if op == "LOAD_FROM_DICT_OR_GLOBALS":
                pop()
            name = argval
            v = _V(frozenset([("g", name)]), ("g", name))
            null = op == "LOAD_GLOBAL" and arg & 1
            if null and sys.version_info < (3, 13):
                s.append(_NULL)
            s.append(v)
            if null and sys.version_info >= (3, 13):
                s.append(_NULL)
        elif op in ("STORE_GLOBAL", "STORE_NAME"):
            pop()
        elif op == "LOAD_ATTR":
            (o,) = pop()
            name = argval
            path = o.path + (name,) if o.path else None
            method = sys.version_info >= (3, 12) and arg & 1
            if method:
                # [method, self] (or [NULL, attr], which calls the same way).
                s.append(_V(o.taint, path, method=name))
                s.append(o)
            else:
                s.append(_V(o.taint, path))
        elif op == "LOAD_METHOD":
            (o,) = pop()
            path = o.path + (argval,) if o.path else None
            s.append(_V(o.taint, path, method=argval))
            s.append(o)
        elif op == "LOAD_SUPER_ATTR":
            pop(3)
            s.append(_CLEAN)
            if arg & 1:
                s.append(_CLEAN)
        elif op in ("STORE_ATTR", "DELETE_ATTR"):
            if op == "STORE_ATTR":
                obj, val = pop(2)[::-1]
                eff.mark(obj.taint, WRITE)
                eff.mark(val.taint, DATA)  # now reachable from another object
            else:
                (obj,) = pop()
                eff.mark(obj.taint, WRITE)
        elif op == "STORE_SUBSCR":
            val, obj, key = pop(3)
            eff.mark(obj.taint, WRITE)
            eff.mark(val.taint, DATA)
        elif op == "DELETE_SUBSCR":
            obj, key = pop(2)
            eff.mark(obj.taint, WRITE)
        elif op == "STORE_SLICE":
            val, obj, a, b = pop(4)
            eff.mark(obj.taint, WRITE)
            eff.mark(val.taint, DATA)
        elif op == "BINARY_SUBSCR":
            obj, key = pop(2)
            s.append(_V(obj.taint | key.taint))
        elif op == "BINARY_SLICE":
            obj, a, b = pop(3)
            s.append(_V(obj.taint))
        elif op == "BINARY_OP":
            a, b = pop(2)
            if arg in _INPLACE_OPS:
                eff.mark(a.taint, WRITE)
            eff.mark(a.taint | b.taint, DATA)
            s.append(_union((a, b)))
        elif op in ("COMPARE_OP", "IS_OP", "CONTAINS_OP"):
            a, b = pop(2)
            if op == "COMPARE_OP":
                eff.mark(a.taint | b.taint, DATA)
            s.append(_CLEAN)
        elif op in ("UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT"):
            (a,) = pop()
            eff.mark(a.taint, DATA)
            s.append(_V(a.taint))
        elif op == "YIELD_VALUE":
            eff.mark(pop()[0].taint, DATA)
            s.append(_CLEAN)
        elif op in ("UNARY_NOT", "TO_BOOL"):
            pop()
            s.append(_CLEAN)
        elif op in ("GET_ITER", "GET_YIELD_FROM_ITER", "GET_LEN"):
            (a,) = pop()
            if op == "GET_LEN":
                s.extend([a, _CLEAN])
            else:
                s.append(_V(a.taint))
        elif op == "FOR_ITER":
            it = s[-1] if s else _CLEAN
            body = s + [_V(it.taint)]
            if sys.version_info >= (3, 12):
                done = s + [_CLEAN]  # jumps to END_FOR, which pops both
            else:
                done = s[:-1]
            nxt = [(None, body), (argval, done)]
        elif op in ("END_FOR",):
            pop(2 if sys.version_info < (3, 13) else 1)
        elif op in ("POP_TOP", "POP_ITER"):
            pop()
        elif op == "COPY":
            if len(s) < arg:
                raise _Unknown
            s.append(s[-arg])
        elif op == "SWAP":
            if len(s) < arg:
                raise _Unknown
            s[-1], s[-arg] = s[-arg], s[-1]
        elif op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING"):
            s.append(_union(pop(arg)))
        elif op == "BUILD_MAP":
            s.append(_union(pop(2 * arg)))
        elif op == "BUILD_CONST_KEY_MAP":
            s.append(_union(pop(arg + 1)))
        elif op == "BUILD_SLICE":
            s.append(_union(pop(arg)))
        elif op in ("LIST_APPEND", "SET_ADD", "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE",
                    "DICT_MERGE"):
            (v,) = pop()
            if len(s) < arg:
                raise _Unknown
            s[-arg] = s[-arg].merge(v)
        elif op == "MAP_ADD":
            k, v = pop(2)
            if len(s) < arg:
                raise _Unknown
            s[-arg] = s[-arg].merge(_union((k, v)))
        elif op == "LIST_TO_TUPLE":
            pass
        elif op in ("UNPACK_SEQUENCE", "UNPACK_EX"):
            (v,) = pop()
            n = arg if op == "UNPACK_SEQUENCE" else (arg & 0xFF) + (arg >> 8) + 1
            s.extend([_V(v.taint)] * n)
        elif op in ("FORMAT_VALUE", "CONVERT_VALUE", "FORMAT_SIMPLE"):
            pop()
            if op == "FORMAT_VALUE" and (arg & 0x04):
                pop()
            s.append(_CLEAN)
        elif op == "FORMAT_WITH_SPEC":
            pop(2)
            s.append(_CLEAN)
        elif op == "MAKE_FUNCTION":
            n = 1 + bin(arg & 0x0F).count("1") if sys.version_info < (3, 13) else 1
            vals = pop(n)
            # Defaults and closures the new function holds: its own code is
            # analyzed as a nested code object.
            eff.mark(_union(vals[:-1]).taint, DATA)
            s.append(_V(code=vals[-1].code))
        elif op == "SET_FUNCTION_ATTRIBUTE":
            pop(2)
            s.append(_CLEAN)
        elif op == "CALL":
            self.call(pop(arg + 2), arg - len(self.kwnames), self.kwnames, False, s)
            self.kwnames = ()
        elif op == "CALL_KW":
            pop()
            self.call(pop(arg + 2), arg, (), True, s)
        elif op == "CALL_FUNCTION_EX":
            vals = pop(3 + (arg & 1))
            self.call(vals, 0, (), True, s)
        elif op in ("CALL_INTRINSIC_1",):
            (v,) = pop()
            s.append(_V(v.taint))
        elif op in ("CALL_INTRINSIC_2",):
            s.append(_union(pop(2)))
        elif op in ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE",
                    "RETURN_GENERATOR"):
            if op == "RETURN_VALUE":
                pop()
            elif op == "RAISE_VARARGS":
                pop(arg)
            elif op == "RERAISE":
                pop()
            elif op == "RETURN_GENERATOR":
                s.append(_CLEAN)
                return [(None, s)]
            return []
        elif op in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
                    "JUMP_NO_INTERRUPT"):
            return [(argval, s)]
        elif op.startswith("POP_JUMP_"):
            pop()
            return [(None, s), (argval, list(s))]
        elif op in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):
            kept = list(s)
            pop()
            return [(None, s), (argval, kept)]
        elif op in ("PUSH_EXC_INFO",):
            (v,) = pop()
            s.extend([_CLEAN, v])
        elif op in ("POP_EXCEPT",):
            pop()
        elif op in ("CHECK_EXC_MATCH",):
            pop()
            s.append(_CLEAN)
        elif op == "BEFORE_WITH":
            (v,) = pop()
            s.extend([_CLEAN, _V(v.taint)])
        elif op == "WITH_EXCEPT_START":
            s.append(_CLEAN)
        elif op == "IMPORT_NAME":
            pop(2)
            s.append(_CLEAN)
        elif op == "IMPORT_FROM":
            s.append(_CLEAN)
        else:
            raise _Unknown
        return nxt

    def call(self, vals, npos, kw, unknown_kw, s):
        """A call: [callable or NULL, self or callable or NULL, *args]."""
        a, b, args = vals[0], vals[1], vals[2:]
        if sys.version_info >= (3, 13) or a is not _NULL:
            callee, receiver = a, b
        else:
            callee, receiver = b, _NULL
        arg_taint = _union(args).taint
        # each positional argument's taint: which one is a HOP's body
        positional = tuple(v.taint for v in args[:npos])
        s.append(_union(vals))
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
            t = self.params.get(callee.code, _EMPTY)
            if not arg_taint <= t:
                self.params[callee.code] = t | arg_taint
        elif callee.path is not None:
            self.eff.calls.add(("f", callee.path, npos, kw, arg_taint, callee.taint,
                                unknown_kw, positional))
        else:
            self.eff.mark(callee.taint, WRITE)  # maybe a bound method taken earlier
            self.eff.mark(arg_taint, ALL)


def _resolve(path, fn):
    """The object a path (("g" or "c", name), attributes...) names for fn,
    following attributes of modules and classes only (never a property)."""
    kind, name = path[0], path[1]
    v = _MISSING
    if kind == "g":
        v = fn.__globals__.get(name, _MISSING)
        if v is _MISSING:
            v = getattr(builtins, name, _MISSING)
    else:
        code = fn.__code__
        for n, cell in zip(code.co_freevars, fn.__closure__ or ()):
            if n == name:
                try:
                    v = cell.cell_contents
                except ValueError:
                    pass
    for attr in path[2:]:
        if not isinstance(v, (types.ModuleType, type)):
            return _MISSING
        v = getattr(v, attr, _MISSING)
    return v


def _callee(call, fn):
    """The object a recorded call calls, or _A_METHOD when it is a method of
    a value (not of a module or class)."""
    kind, path = call[0], call[1]
    if kind == "m":
        owner = _resolve(path[:-1], fn)
        if not isinstance(owner, (types.ModuleType, type)):
            return _A_METHOD
        return getattr(owner, path[-1], _MISSING)
    return _resolve(path, fn)


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


_EMPTY_SET = frozenset()
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
    if module == "hop" or module.startswith("hop."):
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


# ------------------------------------------------------------- the snapshot

class _Check:
    """The outer state a body may change, captured before it runs."""

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
        self._fns = set()

    def scan(self, fn):
        code = getattr(fn, "__code__", None)
        if code is None or id(fn) in self._fns:
            return
        self._fns.add(id(fn))
        eff = _effects(code)
        g = getattr(fn, "__globals__", None) or {}
        flags = {}
        bodies = _EMPTY_SET
        if eff.unknown:
            flags = None
        else:
            flags = dict(eff.flags)
            hops = _hop_entries()
            bodies, elsewhere = set(), set()
            for call in eff.calls:
                callee = _callee(call, fn)
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
            # A function the body only hands to HOPs as a body (in a body's
            # position: never calls it, passes it elsewhere, as an operand
            # or by keyword, or writes it) runs under its own run_pure when
            # the HOP traces it; scanning it here too made nested bodies
            # cost O(depth) each (issue #30).
            bodies = {t for t in bodies - elsewhere if not eff.flags.get(t, 0) & WRITE}
        closure = getattr(fn, "__closure__", None) or ()
        for name, cell in zip(code.co_freevars, closure):
            try:
                value = cell.cell_contents
            except ValueError:
                value = _MISSING
            self.cells.append((name, cell, value))
            self._root(fn, name, value, ALL if flags is None else flags.get(("c", name), 0),
                       ("c", name) in bodies)
        for name in eff.names:
            value = g.get(name, _MISSING)
            if value is _MISSING:
                continue
            self.globals.append((name, g, value))
            self._root(fn, name, value, ALL if flags is None else flags.get(("g", name), 0),
                       ("g", name) in bodies)

    def _root(self, fn, name, value, flag, body=False):
        # A function of the body's module (or a closure) that the body may
        # call mutates the same state: check what it reaches too (unless it
        # is only a HOP's body: see scan).
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
        return obj.keys() == saved.keys() and all(obj[k] is saved[k] for k in obj)
    return obj == saved


def _is(a, b):
    return a is b


def _read_only_write(exc, check):
    """Whether exc is NumPy refusing a write into an array run_pure locked."""
    return check.locked and isinstance(exc, ValueError) and "read-only" in str(exc)


def run_pure(hop_name, which, fn, args, kwargs=None):
    """fn(*args, **kwargs), raising hop.TraceError (with outer state restored)
    if the body changes state outside itself."""
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
