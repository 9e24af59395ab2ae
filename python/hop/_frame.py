"""hop.compile's frame translator: CPython 3.11 bytecode evaluated over the
tracer's values, with the function's Python effects recorded and replayed.

The tracer (hop/_trace.py) runs a function with proxies: every tensor
operation becomes a node, and the plan runs on later calls.  Python effects
of the function (a global or a nonlocal assigned, a list appended to, an
attribute written, print) would then happen once, at trace time.  The
translator runs the function's bytecode itself, instruction by instruction,
over the same values (real Python objects, and proxies for the traced
tensors), so it sees every write to state the function did not make:

  - a write to a closure cell, a global, an attribute or an item of an
    object that existed before the call, a mutating method of such a list,
    dict or set, and print() are not done while translating; each is an
    entry of the side-effect table (Effect: kind, target, values) in program
    order.  Later reads in the same translation see the new value (an
    overlay for cells, globals and attributes; a shadow copy of a mutated
    container, pushed in its place wherever it is loaded).
  - the values an effect needs are outputs of the traced function next to
    its result, so each compiled call runs the plan, then `replay`s the
    table with this call's values: the effects happen on every call, in the
    order the function makes them, with the values the plan computed.
  - an int held by a cell or global that the function assigns (`nonlocal
    n; n += 1`) is an input of the plan (a 0-d int64 tensor, read back as a
    SymInt), and its new value an output: no recompile per call.

Calls of the user's Python functions, methods, callable objects and classes
are inlined (their frames are translated too); library code (hop, NumPy,
builtins) is called.  User code that CPython would run for the translator (an
operator or property of the user's class, a callback of a library function)
is stopped before its first line by a C profile hook (_C._call_guard), on only
while an instruction's operands may lead there (_userish).

An instruction of the function's own frame that needs real values (a
conversion, control flow on a traced value, a call hop cannot see into) is a
graph break (Break): the plan returns the stack and locals, the instruction
runs in Python, and the rest is a Resume function compiled on its first call.
A break inside a loop, a with block, an inlined call or a generator is
hoisted (_Hoist): translated again, the plan ends before the root frame's
statement around it, which runs in Python (the concrete interpreter, with
the code's exception table), and the rest resumes compiled.

A data-dependent `if` is not a break where its sides can be cond bodies:
each side is translated, on a copy of the frame, as a body of one cond
(_merge_if), up to the end of the `if` or on to the return; a side with an
effect, a break, a jump out of the `if` or a change to an object the
function made keeps the break, with everything put back (_SideState).

Anything else the translator does not model raises Unsupported, and
hop.compile runs the call (and later calls) eagerly as for any effect it
cannot compile: never a different answer.  docs/ARCHITECTURE.md, "The frame
translator", lists what that covers.
"""

import builtins
import contextlib
import dis
import functools
import inspect
import operator
import os
import sys
import sysconfig
import types

from . import _C
from . import _breaks
from . import _exact
from . import _paths
from ._pytree import flatten, unflatten

__all__ = ["Unsupported", "Translator", "replay", "written_names", "REPLAYED"]

# The effect kinds the translator replays (_effects.KINDS keys).
# (and "type": nothing to replay, the translator answers type() as eagerly)
REPLAYED = frozenset(["global", "nonlocal", "attribute", "item", "mutation", "print", "type"])


class Unsupported(BaseException):
    """The translator cannot run this compiled: the call runs eagerly.
    BaseException (as GraphBreak), so a function's `except Exception:`
    cannot hide it; the translator also keeps the first one raised."""

    def __init__(self, message, site):
        super().__init__(message)
        self.message = message
        self.site = site
        self.brk = None


class _BreakHere(Exception):
    """The instruction being translated needs real values (a conversion of
    a traced value, a call hop cannot see into, control flow on a traced
    value): a graph break if it is an instruction of the root frame (depth
    1), else Unsupported."""

    def __init__(self, message, depth):
        super().__init__(message)
        self.message = message
        self.depth = depth
        self.site = None    # where, when in an inlined call (its frame's)
        self.opname = None
        self.func = None


class _NoMerge(Exception):
    """A side of a data-dependent `if` cannot be a cond body (an effect, a
    break, a jump out of the `if`, values a cond cannot return): the `if`
    stays a graph break (Translator._merge_if).  message says why, for
    explain()."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class _Stop(BaseException):
    """The translation of the root frame ends at a graph break (hoist: the
    _Hoist it ends at, whose region then runs in Python, else None: the
    instruction at snap's pc runs alone)."""

    def __init__(self, snap, message, hoist=None):
        super().__init__(message)
        self.snap = snap
        self.message = message
        self.hoist = hoist


class _Hoist(BaseException):
    """A graph break the root frame cannot end at its own instruction: one
    inside a loop (the loop's state is Python's: an iterator, a counter the
    next iteration reads), inside a with block (its __exit__ is on the
    stack), or inside an inlined call (the callee's frame is half run).
    The translation is done again and ends at `pc`, the start of the root
    frame's statement around it (an empty stack, before the outermost loop
    around the break); from there the code runs in Python until it has
    passed `until` with an empty stack (the loop, the with block or the
    statement done), and the rest resumes compiled.  Raised out of the
    first translation (whose state is past pc: a list it made may already
    hold the loop's appends) to hop.compile, which translates again with
    stop_at (Translator).  what: explain()'s words for where it was."""

    def __init__(self, pc, until, message, site, opname, what):
        super().__init__(message)
        self.pc = pc
        self.until = until
        self.message = message
        self.site = site
        self.opname = opname
        self.what = what


# The translator's own exceptions: never handled by the function's
# exception table (the concrete interpreter's _execute).
_INTERNAL = (Unsupported, _Stop, _Hoist, _BreakHere, _breaks.GraphBreak)

_BREAKABLE = frozenset("""CALL CALL_FUNCTION_EX FORMAT_VALUE POP_JUMP_FORWARD_IF_FALSE
    POP_JUMP_BACKWARD_IF_FALSE POP_JUMP_FORWARD_IF_TRUE POP_JUMP_BACKWARD_IF_TRUE
    JUMP_IF_FALSE_OR_POP JUMP_IF_TRUE_OR_POP UNARY_NOT STORE_SUBSCR STORE_ATTR""".split())
_PAUSED = object()
_HANDLED = object()  # an exception handler ran to its POP_EXCEPT (_execute)
_YIELDED = object()  # a translated generator's frame yielded (_TransGen)
_METHOD = "\x00hop.method"  # a stack slot holding a bound method of a traced value
_FUNC = "\x00hop.function"  # a slot holding a closure over the frame's own cells (_func_spec)
_EMPTY = "\x00hop.empty cell"  # an own cell not assigned yet


class Effect:
    """One entry of the side-effect table: kind ("cell", "del_cell",
    "global", "del_global", "attr", "del_attr", "item", "del_item", "call",
    "print"), the target (a cell, a globals dict and name, an object), the
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


def replay(effects, values, tree):
    """Applies the side-effect table with one call's values (the plan's
    outputs: values[i] for effects[i]), in program order; tree is the call's
    (args, kwargs), where targets inside the arguments are found."""
    for e, v in zip(effects, values):
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
            getattr(e.target, e.key)(*v[0], **dict(v[1]))
        elif k == "print":
            print(*v[0], **dict(v[1]))


_ALLOWED = {}      # code objects the call guard lets run (not the user's)
_UNBOUND = object()
_NULL = object()   # the NULL of CPython's stack (a call without self)
_DELETED = object()
_CODE = {}        # code -> _instructions(code)
_USER_DIRS = None


def _instructions(code):
    """(instructions, offset -> index, exception handlers (index -> (handler
    index, stack depth, push lasti); empty without), the line of each
    instruction, the operands each hands to code that may be the user's,
    the loops (back edge target index, back edge index)), cached."""
    got = _CODE.get(code)
    if got is None:
        ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
        at = {i.offset: n for n, i in enumerate(ins)}
        lines, line = [], code.co_firstlineno
        for i in ins:
            if i.starts_line is not None:
                line = i.starts_line
            lines.append(line)
        handlers = {}
        if code.co_exceptiontable:
            for e in dis._parse_exception_table(code):
                for n, i in enumerate(ins):
                    if e.start <= i.offset < e.end and n not in handlers:
                        handlers[n] = (at[e.target], e.depth, e.lasti)
        loops = [(at[i.argval], n) for n, i in enumerate(ins)
                 if "BACKWARD" in i.opname and i.argval in at]
        got = _CODE[code] = (ins, at, handlers, lines, [_operands(i) for i in ins], loops)
    return got


# How many values on top of the stack an instruction hands to code that may
# be the user's (an operator, a property, a call): those run under the call
# guard when one of them is the user's (_userish).  0: it runs no code.
_ONE = frozenset("""LOAD_ATTR LOAD_METHOD UNARY_NEGATIVE UNARY_POSITIVE UNARY_INVERT UNARY_NOT
    GET_ITER FOR_ITER UNPACK_SEQUENCE UNPACK_EX POP_JUMP_FORWARD_IF_FALSE
    POP_JUMP_BACKWARD_IF_FALSE POP_JUMP_FORWARD_IF_TRUE POP_JUMP_BACKWARD_IF_TRUE
    JUMP_IF_FALSE_OR_POP JUMP_IF_TRUE_OR_POP SET_ADD LIST_EXTEND SET_UPDATE DELETE_ATTR
    DICT_UPDATE DICT_MERGE""".split())
_TWO = frozenset("BINARY_OP COMPARE_OP CONTAINS_OP BINARY_SUBSCR DELETE_SUBSCR STORE_ATTR "
                 "MAP_ADD FORMAT_VALUE".split())


def _operands(i):
    op = i.opname
    if op == "CALL":
        return i.arg + 2
    if op == "CALL_FUNCTION_EX":
        return 4
    if op in _ONE:
        return 1
    if op in _TWO:
        return 2
    if op == "STORE_SUBSCR":
        return 3
    if op in ("BUILD_SET", "BUILD_SLICE"):
        return i.arg
    if op == "BUILD_MAP":
        return 2 * i.arg
    return 0


_USERISH = {}  # type -> whether its instances may run the user's code


def _user_type(t):
    """Whether instances of t may run the user's code: a class with Python
    methods of the user's, or a callable wrapper of hop's (hop.compile(f),
    a GraphModule, a HOP object: it runs the user's function)."""
    got = _USERISH.get(t)
    if got is None:
        got = (getattr(t, "__module__", "") or "").startswith("hop") and t not in _hop_data()
        for k in t.__mro__:
            if k is object:
                continue
            for v in vars(k).values():
                if isinstance(v, property):
                    v = v.fget
                elif isinstance(v, (staticmethod, classmethod)):
                    v = v.__func__
                if isinstance(v, types.FunctionType) and is_user_code(v.__code__):
                    got = True
                    break
            if got:
                break
        _USERISH[t] = got
    return got


def _hop_data():
    """hop's value types (never run the user's code), as opposed to its
    wrappers (hop.compile(f), GraphModules, transformations: they do)."""
    from ._symfloat import SymFloat
    out = {_C.Tensor, _C.SymInt, type(_C.float32), SymFloat}
    hnp = sys.modules.get("hop.numpy")
    if hnp is not None:
        out.add(hnp.ndarray)
    return out


_PURE_MANAGERS = frozenset([contextlib.nullcontext])
_CONTAINERS = frozenset([list, dict, set])  # a load of one goes through _sub
_PLAIN = frozenset([int, float, bool, str, bytes, complex, type(None), _C.Tensor, _C.SymInt,
                    slice, range, type(Ellipsis)])


def _userish(values, depth=0):
    """Whether CPython, handed these values, may run the user's code: a
    user function or method, an instance of a class with Python methods of
    the user's, hop's wrappers (hop.grad(f) runs f), containers of those."""
    for v in values:
        t = type(v)
        if t in _PLAIN:
            continue
        if t is types.FunctionType:
            if is_user_code(v.__code__) or _wraps_user(v):
                return True
        elif t is types.MethodType:
            return True
        elif t in (list, tuple, dict, set):
            if depth == 0 and _userish(v.values() if t is dict else v, 1):
                return True
        elif isinstance(v, type):
            if _user_type(v):
                return True
        elif _user_type(t):
            return True
        elif t is functools.partial or t is functools._lru_cache_wrapper:
            # library objects that run a function they hold (a cache's miss)
            f = v.func if t is functools.partial else getattr(v, "__wrapped__", None)
            if depth < 4 and _userish((f,), depth + 1):
                return True
    return False


def _wraps_user(f):
    """A function of a library (hop.grad's, functools.partial-like) that
    runs a user function it holds (its __wrapped__ or a closure cell)."""
    w = getattr(f, "__wrapped__", None)
    if w is not None:
        return True
    for c in f.__closure__ or ():
        try:
            v = c.cell_contents
        except ValueError:
            continue
        if type(v) is types.FunctionType and is_user_code(v.__code__) or \
                _user_type(type(v)):
            return True
    return False


def _library_dirs():
    global _USER_DIRS
    if _USER_DIRS is None:
        dirs = {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
        _USER_DIRS = tuple(os.path.abspath(d) + os.sep for d in dirs if d)
    return _USER_DIRS


def is_user_code(code):
    """Whether code is the user's (not hop's, NumPy's, the standard
    library's or frozen/built-in)."""
    got = _USER.get(code)
    if got is None:
        got = _USER[code] = _is_user_file(code.co_filename)
    return got


_USER = {}


def _is_user_file(f):
    if f.startswith("<frozen") or f.startswith("<__array_function__"):
        return False
    f = os.path.abspath(f)
    return not f.startswith(_paths._LIBRARY_DIRS) and not f.startswith(_library_dirs())


def _user_function(f):
    return isinstance(f, types.FunctionType) and is_user_code(f.__code__)


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

_BINARY = [operator.add, operator.and_, operator.floordiv, operator.lshift, operator.matmul,
           operator.mul, operator.mod, operator.or_, operator.pow, operator.rshift,
           operator.sub, operator.truediv, operator.xor,
           operator.iadd, operator.iand, operator.ifloordiv, operator.ilshift, operator.imatmul,
           operator.imul, operator.imod, operator.ior, operator.ipow, operator.irshift,
           operator.isub, operator.itruediv, operator.ixor]
_INPLACE = [None] * 13 + ["__i" + n[len("NB_INPLACE_"):].lower().replace("remainder", "mod")
                         .replace("floor_divide", "floordiv").replace("true_divide", "truediv")
                         .replace("multiply", "mul").replace("subtract", "sub")
                         .replace("matrix_mul", "matmul").replace("power", "pow") + "__"
                         for n, _ in dis._nb_ops[13:]]
_COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
            ">": operator.gt, ">=": operator.ge}
_CONTROL_FLOW = ("Python control flow on a traced value (if/while/and/or/not on it) needs its "
                 "value; hop.cond keeps it in the graph")
# At most this many sides of data-dependent ifs are traced per translation:
# a side that runs on to the return holds the ifs after it, each two more
# sides (a bound on chains of ifs that do not join)
_MAX_SIDES = 64
_SAFE_BUILTINS = frozenset(n for n in dir(builtins) if n not in (
    "print", "input", "open", "breakpoint", "exec", "eval", "__import__", "exit", "quit", "help",
    "next", "setattr", "delattr", "globals", "locals", "vars", "iter", "compile", "__build_class__"))


def _traced(v):
    if isinstance(v, _C.Tensor):
        return _C._is_proxy(v)
    if isinstance(v, _C.SymInt):
        return True
    hnp = sys.modules.get("hop.numpy")
    if hnp is not None and isinstance(v, hnp.ndarray):
        return True
    return type(v).__name__ == "SymFloat"


def _static_rows(v):
    """Whether v is a traced hop.numpy array or tensor of rank >= 1 whose
    leading size is a number (iterating it takes that many rows)."""
    hnp = sys.modules.get("hop.numpy")
    if not (isinstance(v, _C.Tensor) or hnp is not None and isinstance(v, hnp.ndarray)):
        return False
    shape = tuple(v.shape)
    return len(shape) >= 1 and isinstance(shape[0], int)


def _rows_known_at_run_time(v):
    """Whether v is a traced hop.numpy array or tensor of rank >= 1 whose
    leading size is symbolic (a selection's count: iterating it needs the
    values)."""
    hnp = sys.modules.get("hop.numpy")
    if not (isinstance(v, _C.Tensor) or hnp is not None and isinstance(v, hnp.ndarray)):
        return False
    shape = tuple(v.shape)
    return len(shape) >= 1 and isinstance(shape[0], _C.SymInt)


def _finding_a_module(frame):
    """Whether frame runs for the import system's search of a module: under
    importlib's _find_spec, a finder of sys.meta_path (setuptools'
    _distutils_hack, pytest's assertion rewriter: "user code" by where they
    live) and what it calls.  An import while translating (hop and NumPy
    import modules lazily) only locates the module there; the module's own
    code is checked as any other.  (Walks the stack: only for a frame the
    guard would otherwise refuse.)"""
    f = frame.f_back
    while f is not None:
        c = f.f_code
        if c.co_name == "_find_spec" and c.co_filename == "<frozen importlib._bootstrap>":
            return True
        f = f.f_back
    return False


def _numpy_written_back(v):
    """Whether a write to v is hop.numpy's to trace: v is a hop.numpy array
    of the trace (an ndarray argument as the function sees it, or its view),
    whose writes hop.numpy puts into the plan and copies into the caller's
    memory after each call (write-back slots, _trace), or refuses with its
    own error; never an effect of the table."""
    hnp = sys.modules.get("hop.numpy")
    return hnp is not None and isinstance(v, hnp.ndarray) and _C._is_proxy(v._t)


class _Recorded:
    """A mutating method of a container that existed before the call: the
    call is applied to its shadow and recorded."""

    __slots__ = ("real", "shadow", "name")

    def __init__(self, real, shadow, name):
        self.real = real
        self.shadow = shadow
        self.name = name


class _Frame:
    __slots__ = ("func", "code", "fast", "cells", "stack", "kwnames", "line", "pc", "handling")


class Translator:
    """One translation of fn for one trace: run(args, kwargs, state) returns
    (result, values of the side-effect table); effects is that table."""

    def __init__(self, fn, lifted, env_ids, effect_lines, can_break=False, concrete=False,
                 stop_at=None):
        self.fn = fn
        self.lifted = list(lifted)      # (kind, cell or globals, name): inputs (lifted_sources)
        self.env_ids = env_ids  # ids of objects that existed before the call (+ the arguments')
        self.pre = set()
        self.effect_lines = effect_lines  # {(basename, line)} _effects found effects on
        self.effects = []
        self.cells = {}      # id(cell) -> value assigned (overlay)
        self.globs = {}      # (id(globals), name) -> value assigned
        self.attrs = {}      # (id(obj), name) -> value assigned
        self.shadows = {}    # id(real container) -> its shadow copy
        self.real = {}       # id(shadow) -> real container
        self.made = {}       # id -> object the function made (kept alive)
        self.read = set()    # ("cell", id) / ("global", id, name) read before written
        self.written = set()
        self.loads = {}      # id(container) -> loads not as a write-only method's receiver
        self.error = None
        self.depth = 0
        self.root = None
        # Whether an instruction of the root frame that needs real values
        # ends the graph (a break, resumed after it) or the translation
        # (fullgraph, or not yet supported there).
        self.can_break = can_break
        # Concrete: the eager interpreter of a resume (real values, real
        # effects): runs the instruction at a break, and a resume hop cannot
        # compile.
        self.concrete = concrete
        self.stop = None     # the Break where this translation ended, or None
        self.numpy_mode = False  # an argument is an ndarray (NumPy's semantics)
        self._cur = None
        # A _Hoist of an earlier translation: this one ends at its pc (the
        # start of the statement around a break hop cannot end the graph at)
        self.stop_at = stop_at
        self.pause_at = None  # concrete: the root frame pauses here (Break.run_prefix)
        self.items = {}  # id(dict) -> {key: lifted int} (lifted ("item", dict, key))
        self.empties = set()  # root instructions reached with an empty stack
        self.guarded = False  # the call guard is on (_execute)
        self.gen_break = None  # a _BreakHere a _TransGen raised into library code
        self.merged = []     # explain()'s lines: the data-dependent ifs traced as conds
        # in a side of such an if: the ids it must not touch (_SideState);
        # None outside sides
        self._opaque = None
        self._sides = 0      # sides traced so far (bounded: _MAX_SIDES)

    # ---------------------------------------------------------------- run

    def run(self, args, kwargs, state):
        values = [t.item() for t in state]
        from ._pytree import nodes
        self.pre = set(self.env_ids)
        self._argtree = (tuple(args), dict(kwargs or {}))  # kept: its ids stay taken
        self.argpaths = nodes(self._argtree)
        self.pre.update(self.argpaths)
        hnp = sys.modules.get("hop.numpy")
        # NumPy semantics: hop's float reductions may differ from NumPy's in
        # the last bit, which a conversion, a printed or a stored value would
        # show; Python gets only values with NumPy's bits (_exact)
        self.numpy_mode = hnp is not None and \
            any(isinstance(v, hnp.ndarray) for _, v in self.argpaths.values())
        self.read, self.written, self.loads = set(), set(), {}
        self.error = None
        self._cur = None
        self.effects = []
        self.cells.clear()
        self.globs.clear()
        self.attrs.clear()
        self.shadows.clear()
        self.real.clear()
        self.made.clear()
        self._cell_objs, self._glob_objs, self._attr_objs = [], {}, {}
        self.items = {}
        for (kind, base, name), v in zip(self.lifted, values):
            if kind == "item":
                # its dict's shadow, made at the dict's first load, holds v
                self.items.setdefault(id(base), {})[name] = v
            elif kind == "cell":
                self.cells[id(base)] = v
                self._cell_objs.append(base)
            else:
                self.globs[(id(base), name)] = v
                self._glob_objs[id(base)] = base
        self.stop = None
        self.empties = set()
        self.merged = []
        self._opaque = None
        self._sides = 0
        self.trace_depth = _C._trace_depth()
        old = sys.getprofile()
        try:
            if isinstance(self.fn, Resume):
                out = self.fn.run(self, tuple(args))
            elif not _user_function(self.fn) and not self.concrete:
                # a library function compiled itself (hop.compile(np.apply_along_axis)):
                # called whole, under the call guard, as any call of library
                # code a step of the user's makes (a callback of the user's
                # it runs is Unsupported: its effects would not be seen)
                _C._call_guard(self._check, _ALLOWED)
                self.guarded = True
                try:
                    out = self._call_function(self.fn, tuple(args), dict(kwargs or {}))
                finally:
                    _C._call_guard(None)
                    self.guarded = False
            else:
                out = self._call_function(self.fn, tuple(args), dict(kwargs or {}))
        except _Stop as st:
            out = self._stopped(st)
        finally:
            _C._call_guard(None)
            if old is not None and callable(old):
                sys.setprofile(old)  # a Python-level profiler the guard displaced
        if self.error is not None:
            raise self.error
        out = self._unshadow(out)
        values = tuple(self._unshadow(e.values) for e in self.effects)
        return out, values

    def _stopped(self, st):
        """The graph ends at a break: what the plan returns is the root
        frame's stack and locals before the breaking instruction (traced
        values become outputs), and the effects recorded before it."""
        pc, stack, fast, kwnames, neffects = st.snap
        fr = self.root
        del self.effects[neffects:]
        seen = set()  # (one for the stack and locals: a list in both is one list)
        out_stack = self._portable(stack, seen)
        if out_stack is None:
            v = next(v for v in stack if self._portable([v], set()) is None)
            self._fail(f"a graph break with a {type(v).__name__} on the stack, which the plan "
                       f"cannot hand to the resume", fr)
        out_fast = []
        # the function's own cells (closures over its variables) go to the
        # resume by content: it makes them again, and the closures over
        # them (_func_spec)
        own = [(n, _cell_value(fr.cells[n])) for n in fr.code.co_cellvars if n in fr.cells]
        for k, v in list(fast.items()) + [(f"(cell) {n}", v) for n, v in own]:
            if type(v) is types.FunctionType and id(v) in self.made:
                v = _func_spec(v, fr)
                if v is None:
                    self._fail(f"a graph break with the local {k!r} holding a function it made "
                               f"whose closure or defaults the plan cannot hand to the resume",
                               fr)
            elif not (v is _EMPTY or self._live(v, seen)):
                self._fail(f"a graph break with the local {k!r} holding a {type(v).__name__}, "
                           f"which the plan cannot hand to the resume", fr)
            out_fast.append(v)
        prefix = None
        if self.numpy_mode:
            live = list(stack) + list(fast.values()) + [v for _, v in own] + \
                [e.values for e in self.effects]
            bad = _exact.differs(live)
            shared = None if bad is not None else _shared_memory(live)
            if bad is not None:
                # Python would get a value whose last bit may not be NumPy's:
                # the part before the break runs in Python instead (eager,
                # NumPy's own values), and the rest resumes compiled
                prefix = f"the part before it runs in Python (its graph is not run): it " \
                         f"hands Python a value NumPy may compute with other bits ({bad})"
            elif shared is not None:
                # the plan returns each array as new memory: a write in
                # Python through a view (or to the memory it views) would
                # be lost, so the views are NumPy's own, made in Python
                prefix = f"the part before it runs in Python (its graph is not run): it " \
                         f"hands Python {shared}, which the plan would return as a copy"
            if prefix is not None:
                self._check_prefix(fr, pc)
        tr = _C.tracing()
        if tr is not None:
            tr.scratch.pop(_breaks._KEY, None)  # the conversion is now the break's
        h = st.hoist
        self.stop = Break(fr.func, pc, tuple(i for i, v in enumerate(stack) if v is _NULL),
                          len(stack), tuple(fast), kwnames, st.message,
                          h.site if h else _site(fr.code, fr.line),
                          h.opname if h else _instructions(fr.code)[0][pc].opname,
                          self.effect_lines, until=h.until if h else None,
                          where=h.what if h else None, numpy=self.numpy_mode, prefix=prefix,
                          start=self.fn if isinstance(self.fn, Resume) else None)
        if prefix is not None:
            del self.effects[:]  # done for real by the part run in Python
            return ((), (), ())
        return (tuple(out_stack), tuple(out_fast[:len(fast)]), tuple(out_fast[len(fast):]))

    def _check_prefix(self, fr, pc):
        """A break whose part before it runs in Python (Break.prefix) must
        be the first time the root frame reaches pc: not inside a loop of
        the root frame (hoisted breaks end before the loop)."""
        _, _, _, _, _, loops = _instructions(fr.code)
        if any(t <= pc <= j for t, j in loops):
            self._fail("a graph break in NumPy code whose values hop may compute with other "
                       "bits than NumPy, where the part before it cannot run in Python alone", fr)

    def _portable(self, stack, seen):
        """The stack as the plan returns it to a resume (None at a NULL, a
        bound method of a traced value as (_METHOD, value, name)), or None
        when a value cannot go through the plan (_live)."""
        out = []
        for v in stack:
            if v is _NULL:
                out.append(None)
            elif type(v) in (types.BuiltinMethodType, types.MethodType) and \
                    _traced(getattr(v, "__self__", None)):
                if self.numpy_mode and not isinstance(v.__self__, _C.Tensor):
                    # a hop.numpy array's method (hop.numpy's own name,
                    # _fill_method) is not the ndarray's the plan returns
                    return None
                out.append((_METHOD, v.__self__, v.__name__))
            elif type(v) is types.FunctionType and id(v) in self.made:
                spec = _func_spec(v, self.root)
                if spec is None:
                    return None
                out.append(spec)
            elif self._live(v, seen):
                out.append(v)
            else:
                return None
        return out

    def _live(self, v, seen, depth=0):
        """Whether v can go through the plan to the resume as itself: a
        value, a traced value, a pre-existing object, or a container the
        function made of those (once: the plan rebuilds it)."""
        if type(v) is types.BuiltinMethodType and \
                not isinstance(v.__self__, (types.ModuleType, type(None))):
            # a method of an object (r.append): the plan would return the
            # one bound to this translation's object, so only the method of
            # an object that existed before the call (the same every call)
            return id(v.__self__) not in self.made and self._kind(v.__self__) == "pre"
        if v is None or type(v) in (int, float, bool, str, complex, bytes) or _traced(v) or \
                isinstance(v, (_C.Tensor, types.BuiltinFunctionType, types.ModuleType, type)):
            return True
        if depth > 8:
            return False
        if type(v) is tuple:
            return all(self._live(x, seen, depth + 1) for x in v)
        if id(v) in self.made and type(v) in (list, dict):
            if id(v) in seen:
                return False
            seen.add(id(v))
            return all(self._live(x, seen, depth + 1) for x in
                       (v.values() if type(v) is dict else v))
        return id(v) not in self.made and self._kind(v) == "pre"

    def _check(self, frame):
        """The C call guard's question (_C._call_guard) for a frame whose
        code it has not allowed yet: user code CPython runs for the
        translator (an operator, property or callback of the user's) must
        not run, its effects would not be seen; HOP bodies are traced as
        today (pure).  Library code is allowed once and for all."""
        code = frame.f_code
        if not is_user_code(code) or _generated_library(frame):
            _ALLOWED[code] = True
            return
        if getattr(_paths._in_body, "n", 0) or self.error is not None or \
                _C._trace_depth() > self.trace_depth:
            # a HOP body or a transformation's function (hop.grad(f)) that hop
            # traces in a nested tracer: one graph, checked pure as today
            return
        if _finding_a_module(frame):
            return  # an import while translating (hop and NumPy import lazily)
        self.error = Unsupported(f"{code.co_qualname} is called by library code hop runs "
                                 f"directly (an operator, property or callback of the user's), "
                                 f"which the translator cannot follow", _site(code, frame.f_lineno))
        raise self.error

    def _fail(self, message, fr=None, brk=None):
        fr = fr or self._cur
        err = Unsupported(message, _site(fr.code, fr.line))
        err.brk = brk  # the instruction, when this is a graph break not taken
        if self.error is None:
            self.error = err
        raise err

    def _unshadow(self, v, depth=0):
        """v with every shadow container replaced by the real one (the
        caller's object, as eager returns it)."""
        if not self.real or depth > 8:
            return v
        r = self.real.get(id(v))
        if r is not None:
            return r
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
            self.loads[i] = self.loads.get(i, 0) + 1
        return v

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

    def _shadow(self, obj):
        s = self.shadows.get(id(obj))
        if s is None:
            s = type(obj)(obj)
            self.shadows[id(obj)] = s
            self.real[id(s)] = obj
        return s

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
        self.effects.append(Effect(kind, target, key, values, _site(fr.code, fr.line), what))

    # --------------------------------------------------------------- calls

    def _call_function(self, f, args, kwargs):
        if self.concrete:
            return f(*args, **kwargs)
        if isinstance(f, types.MethodType) and _user_function(f.__func__):
            return self._inline(f.__func__, (f.__self__,) + args, kwargs)
        if _user_function(f):
            return self._inline(f, args, kwargs)
        if isinstance(f, _Recorded):
            real, shadow, name = f.real, f.shadow, f.name
            out = getattr(shadow, name)(*args, **kwargs)
            self._record("call", real, name, (args, tuple(kwargs.items())),
                         f"{type(real).__name__}.{name}()")
            return self._sub(out)
        if isinstance(f, types.BuiltinMethodType) and type(f.__self__) in _MUTATORS and \
                f.__name__ in _MUTATORS[type(f.__self__)]:
            # a container's mutating method, bound elsewhere (mid = log.append)
            owner = f.__self__
            kind = self._kind(owner)
            if kind is None and id(f) in self.pre:
                kind = "pre"  # the bound method is the environment's (guarded by identity)
            if kind == "pre":
                real = self.real.get(id(owner), owner)
                return self._call_function(_Recorded(real, self._shadow(real), f.__name__),
                                           args, kwargs)
            if kind is None:
                self._fail(f"{type(owner).__name__}.{f.__name__}() on a {type(owner).__name__} "
                           f"hop cannot trace to its owner")
        if f is builtins.print:
            for a in list(args) + list(kwargs.values()):
                if not _printable(a):
                    raise _BreakHere(f"print() of a {type(a).__name__}: hop replays print() "
                                     f"of numbers, strings and traced values", self.depth)
            if set(kwargs) - {"sep", "end"}:
                raise _BreakHere("print() with file= or flush=", self.depth)
            self._record("print", None, None, (args, tuple(kwargs.items())), "print()")
            return None
        call = getattr(type(f), "__call__", None)
        if not isinstance(f, type) and _user_function(call):
            return self._inline(call, (f,) + args, kwargs)  # a callable object of the user's
        if isinstance(f, type) and f.__new__ is object.__new__ and \
                _user_function(getattr(f, "__init__", None)):
            obj = self._make(object.__new__(f))
            self._inline(f.__init__, (obj,) + args, kwargs)
            return obj
        if f is getattr and len(args) >= 2 and isinstance(args[1], str) and not kwargs:
            return self._getattr(args[0], args[1], *args[2:])
        if f is hasattr and len(args) == 2 and isinstance(args[1], str) and not kwargs:
            return self._getattr(args[0], args[1], _UNBOUND) is not _UNBOUND
        if f in (vars, dir) and len(args) == 1 and not kwargs and self._written(args[0]):
            self._fail(f"{f.__name__}() of an object whose attributes the function set "
                       f"(hop replays those writes after the plan: {f.__name__}() would miss them)")
        if f is setattr and len(args) == 3 and isinstance(args[1], str) and not kwargs:
            return self._store_attr(args[0], args[1], args[2])
        if f is delattr and len(args) == 2 and isinstance(args[1], str) and not kwargs:
            return self._store_attr(args[0], args[1], _DELETED)
        if f is type and len(args) == 1 and not kwargs and not self.concrete and \
                hasattr(type(args[0]), "_user_class") and _C.tracing() is not None:
            # type(x[0, 0]) is np.float64 eagerly: NumPy's class, as
            # x.__class__ (_getattr), never hop's to the user's code
            return type(args[0])._user_class(args[0])
        fr = self._cur
        if fr is not None and self.effect_lines and \
                (os.path.basename(fr.code.co_filename), fr.line) in \
                self.effect_lines and not self._safe(f):
            raise _BreakHere(f"{getattr(f, '__qualname__', type(f).__name__)}() may change "
                             f"state hop cannot see (a Python effect on this line)", self.depth)
        if f is isinstance and len(args) == 2 and not kwargs:
            return self._isinstance(*args)
        try:
            if (self.cells or self.globs or self.attrs or self.items) and \
                    not isinstance(f, (types.BuiltinFunctionType, types.BuiltinMethodType, type)):
                out = self._materialized(f, args, kwargs)
            else:
                out = f(*args, **kwargs)
            if self.gen_break is not None:
                self._fail(f"{getattr(f, '__qualname__', type(f).__name__)}() caught a graph "
                           f"break of a generator it consumed ({self.gen_break.message})")
        except _breaks.GraphBreak as b:
            tr = _C.tracing()
            if tr is not None:  # the translator's to handle: a break or Unsupported
                tr.scratch.pop(_breaks._KEY, None)
            raise _BreakHere(b.message, self.depth) from None
        if isinstance(f, type) and not _traced(out):
            self._make(out)
        return self._sub(out)

    def _isinstance(self, obj, cls):
        """isinstance as the user's code sees it while hop traces: a
        hop.numpy array is also its NumPy class, a SymInt an int, a SymFloat
        a float (their _UserClass
        answers by the asking frame, which here is hop's)."""
        if isinstance(obj, cls):
            return True
        # (a SymInt is an int, a SymFloat a float: a resume's input, a size)
        user = getattr(type(obj), "_user_class", None)
        if user is None:
            return False
        return issubclass(user(obj), cls)

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

    def _safe(self, f):
        """A call that changes nothing the translator does not see."""
        if isinstance(f, types.BuiltinFunctionType):
            owner = getattr(f, "__self__", None)
            if owner is builtins or owner is None:
                return f.__name__ in _SAFE_BUILTINS
            if isinstance(owner, types.ModuleType):
                # (not operator's: operator.setitem and the in-place ones write)
                return owner.__name__ in ("math", "cmath") or owner.__name__.startswith("hop")
            if _traced(owner) or isinstance(owner, _C.Tensor):
                return True
            if type(owner) in _MUTATORS:
                from ._effects import _MUTATORS as every
                return f.__name__ not in every or id(owner) in self.made
            return id(owner) in self.made or isinstance(owner, (str, bytes, int, float, tuple))
        if isinstance(f, type):
            return f in (list, tuple, dict, set, frozenset, int, float, bool, str, complex,
                         range, slice, zip, enumerate, reversed, map, filter)
        mod = getattr(f, "__module__", None) or ""
        return mod.startswith("hop") and not mod.startswith("hop.numpy")

    def _inline(self, func, args, kwargs):
        code = func.__code__
        gen = code.co_flags & inspect.CO_GENERATOR
        if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR |
                            inspect.CO_ITERABLE_COROUTINE) or gen and self.depth == 0:
            self._fail(f"{func.__qualname__} is a coroutine" if not gen else
                       f"{func.__qualname__} is a generator function (hop.compile of it "
                       f"would return a generator)")
        if self.depth > 32:
            self._fail("calls nested deeper than 32 functions")
        if code.co_argcount == 1 and code.co_varnames[0] == ".0" and len(args) == 1 and \
                not kwargs:
            fast = {".0": args[0]}  # a comprehension's iterator (inspect renames it)
        else:
            try:
                bound = inspect.signature(func).bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{func.__qualname__}() {e}") from None
            bound.apply_defaults()
            fast = dict(bound.arguments)
        fr = _Frame()
        fr.func = func
        fr.code = code
        fr.fast = fast
        fr.cells = {}
        fr.stack = []
        fr.kwnames = ()
        fr.line = code.co_firstlineno
        fr.handling = None
        if gen:
            # runs on each next(), as CPython runs a generator's frame
            return self._make(_TransGen(self, fr))
        saved = self._cur
        if self.depth == 0:
            self.root = fr
        self.depth += 1
        try:
            return self._execute(fr)
        finally:
            self.depth -= 1
            self._cur = saved

    def _written(self, obj):
        """Whether the translation recorded an attribute write to obj."""
        i = id(obj)
        return any(k[0] == i for k in self.attrs)

    def _getattr(self, obj, name, *default):
        if name == "__class__" and not self.concrete and hasattr(type(obj), "_user_class") \
                and _C.tracing() is not None:
            return type(obj)._user_class(obj)
        if self.attrs:
            if name == "__dict__" and self._written(obj):
                self._fail("__dict__ of an object whose attributes the function set (hop "
                           "replays those writes after the plan: the dict would miss them)")
            v = self.attrs.get((id(obj), name), _UNBOUND)
            if v is _DELETED:
                if default:
                    return default[0]
                raise AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}")
            if v is not _UNBOUND:
                return v
        if default:
            return self._sub(getattr(obj, name, default[0]))
        return self._sub(getattr(obj, name))

    # --------------------------------------------------------- the loop

    def _execute(self, fr, pc=0, steps=-1, until=None, handling=False, region=None):
        """Runs fr's code from instruction pc: its return value, or _PAUSED
        (fr.pc the next instruction) after `steps` instructions or, with
        until, at the first instruction past until with an empty stack (a
        loop, a with block, a statement done).  Concrete, an exception in
        the code's exception table runs its handler (in a nested call, so
        that the handler runs inside a real `except` and sys.exc_info() is
        what eager's is; handling: that call, which returns _HANDLED at the
        handler's POP_EXCEPT).  region (lo, join): a side of an `if`
        (_merge_if), _PAUSED when it reaches join; leaving [lo, join)
        otherwise is _NoMerge."""
        ins, at, handlers, lines, uses, _ = _instructions(fr.code)
        stack = fr.stack
        push = stack.append
        pop = stack.pop
        lo, n = region if region is not None else (0, len(ins))
        self._cur = fr
        root = fr is self.root and self.can_break
        stop_at = self.stop_at.pc if root and self.stop_at is not None else -1
        snap = None
        while lo <= pc < n:
            if steps == 0 or until is not None and pc > until and not stack:
                fr.pc = pc
                return _PAUSED
            steps -= 1
            i = ins[pc]
            if root:
                if not stack:
                    self.empties.add(pc)
                if pc == self.pause_at:
                    fr.pc = pc
                    return _PAUSED
                if pc == stop_at:
                    # the retranslation of a break hop.compile hoisted here
                    raise _Stop((pc, list(stack), dict(fr.fast), fr.kwnames, len(self.effects)),
                                self.stop_at.message, self.stop_at)
                snap = (pc, list(stack), dict(fr.fast), fr.kwnames, len(self.effects)) \
                    if i.opname in _BREAKABLE else None
            fr.line = lines[pc]
            pc += 1
            op = i.opname
            if op == "LOAD_FAST":  # the commonest instructions, without a call
                v = fr.fast.get(i.argval, _UNBOUND)
                if v is not _UNBOUND and type(v) not in _CONTAINERS:
                    push(v)
                    continue
            elif op == "STORE_FAST":
                fr.fast[i.argval] = pop()
                continue
            elif op == "LOAD_CONST":
                push(i.argval)
                continue
            elif op in ("RESUME", "NOP", "PRECALL", "EXTENDED_ARG"):
                continue
            elif op == "POP_EXCEPT":
                fr.handling = pop()
                if handling:
                    fr.pc = pc
                    return _HANDLED
                continue
            elif op == "YIELD_VALUE" and not self.concrete:
                fr.pc = pc  # the value on top: _TransGen's
                return _YIELDED
            elif op == "RETURN_GENERATOR" and not self.concrete:
                push(None)  # (popped by the POP_TOP after it)
                continue
            k = uses[pc - 1]
            if k and self._opaque and _touches(stack[len(stack) - k:], self._opaque):
                raise _NoMerge(f"uses an iterator or object made before the `if` that hop "
                               f"cannot restore for the other side ({op} at "
                               f"{_site(fr.code, fr.line)})")
            try:
                if k and not self.concrete and not self.guarded and \
                        _userish(stack[len(stack) - k:]):
                    # CPython may run the user's code here: under the call guard
                    # (on until this instruction is done: a generator of the
                    # user's that library code consumes runs its own
                    # instructions meanwhile, _TransGen)
                    _C._call_guard(self._check, _ALLOWED)
                    self.guarded = True
                    try:
                        pc = self._step(fr, i, op, pc, at, stack, push, pop)
                    finally:
                        _C._call_guard(None)
                        self.guarded = False
                else:
                    pc = self._step(fr, i, op, pc, at, stack, push, pop)
            except _BreakHere as b:
                self.gen_break = None
                if not root:
                    if self.can_break and fr is not self.root and not self.concrete:
                        # in an inlined call: the root frame breaks at its call
                        if b.site is None:
                            b.site, b.opname = _site(fr.code, fr.line), op
                            b.func = fr.code.co_qualname
                        raise
                    self._fail(b.message, fr, brk=op if b.depth == self.depth else None)
                self._break(fr, b, pc - 1, op, snap)
            except _INTERNAL:
                raise
            except BaseException as e:  # noqa: B036 (the function's own exception table)
                h = handlers.get(pc - 1) if self.concrete else None
                if h is None:
                    raise
                target, depth, lasti = h
                del stack[depth:]
                if lasti:
                    push(ins[pc - 1].offset)
                push(e)
                got = self._execute(fr, target, -1, None, True)
                if got is not _HANDLED:
                    return got
                pc = fr.pc
                self._cur = fr
                if steps >= 0:
                    # the one instruction of a break raised: on until the
                    # statement after the handler is done
                    steps, until = -1, pc
                continue
            if pc < 0:
                return stack.pop()
        if region is not None:
            if pc == n:
                fr.pc = pc
                return _PAUSED
            raise _NoMerge(f"jumps out of the `if` (a break, a continue or a loop's end at "
                           f"{_site(fr.code, fr.line)})")
        self._fail("fell off the end of the code")

    def _break(self, fr, b, k, op, snap):
        """A _BreakHere reached the root frame at its instruction k: the
        graph ends before it (_Stop), or, inside a loop, a with block or an
        inlined call, hop.compile translates again to end it at the
        statement around it (_Hoist)."""
        code = fr.code
        ins, _, _, lines, _, loops = _instructions(code)
        lo, hi = k, k
        grown = True
        while grown:  # the outermost loop around k
            grown = False
            for t, j in loops:
                if t <= hi and j >= lo and (t < lo or j > hi):
                    lo, hi = min(lo, t), max(hi, j)
                    grown = True
        direct = b.depth == self.depth
        out = self._portable(snap[1], set()) if snap is not None else None
        if direct and lo == k and out is not None:
            raise _Stop(snap, b.message)
        if lo != k:
            head = lo - 1 if lo > 0 and (ins[lo - 1].opname == "GET_ITER" or
                                         ins[lo - 1].opname.startswith("POP_JUMP")) else lo
            what = f"inside the loop at {_site(code, lines[head])}, which runs in Python"
        elif not direct:
            what = f"in {b.func}() (from the call at {_site(code, fr.line)}, which runs in " \
                   f"Python)"
        else:
            blocker = next((v for v in (snap[1] if snap else ()) if
                            self._portable([v], set()) is None), None)
            what = "inside the with block, which runs in Python" if \
                getattr(blocker, "__name__", "") == "__exit__" else \
                f"with a {type(blocker).__name__} on the stack: the statement runs in Python"
        starts = [e for e in self.empties if e <= lo]
        if not starts:
            self._fail(f"{b.message} ({what}; but no statement start before it to resume from)",
                       fr, brk=op)
        raise _Hoist(max(starts), hi, b.message, b.site or _site(code, fr.line),
                     b.opname or op, what)

    def _step(self, fr, i, op, pc, at, stack, push, pop):
        """Runs one instruction: the next pc (-1: returned, the value on
        top of the stack)."""
        if op == "LOAD_FAST":
            v = fr.fast.get(i.argval, _UNBOUND)
            if v is _UNBOUND:
                raise UnboundLocalError(f"local variable {i.argval!r} referenced before "
                                        f"assignment")
            push(self._sub(v))
        elif op == "BINARY_OP":
            b = pop()
            a = pop()
            push(self._binary(i.arg, a, b))
        elif op == "STORE_FAST":
            fr.fast[i.argval] = pop()
        elif op == "LOAD_CONST":
            push(i.argval)
        elif op in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"):
            pc = at[i.argval]
        elif op in ("POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE"):
            v = pop()
            if type(v) is not bool and op[9] == "F" and self._mergeable(v):
                return self._merge_if(fr, pc - 1, at[i.argval], v, False)
            if not self._truth(v):
                pc = at[i.argval]
        elif op == "FOR_ITER":
            it = stack[-1]
            try:
                push(self._sub(next(it)))
            except StopIteration:
                pop()
                pc = at[i.argval]
        elif op == "CALL":
            argc = i.arg
            args = stack[len(stack) - argc:] if argc else []
            del stack[len(stack) - argc:]
            f = pop()
            below = pop()
            if below is not _NULL:  # a method: below is the function, f its self
                args = [f] + args
                f = below
            kw = {}
            if fr.kwnames:
                nk = len(fr.kwnames)
                kw = dict(zip(fr.kwnames, args[len(args) - nk:]))
                args = args[:len(args) - nk]
                fr.kwnames = ()
            push(self._call_function(f, tuple(args), kw))
            self._cur = fr
        elif op == "DELETE_FAST":
            del fr.fast[i.argval]
        elif op == "LOAD_GLOBAL":
            if i.arg & 1:
                push(_NULL)
            push(self._load_global(fr, i.argval))
        elif op == "STORE_GLOBAL":
            self._store_global(fr, i.argval, pop())
        elif op == "DELETE_GLOBAL":
            self._store_global(fr, i.argval, _DELETED)
        elif op == "MAKE_CELL":
            name = i.argval
            v = fr.fast.pop(name, _UNBOUND)
            c = types.CellType() if v is _UNBOUND else types.CellType(v)
            fr.cells[name] = self._make(c)
        elif op == "COPY_FREE_VARS":
            for name, c in zip(fr.code.co_freevars, fr.func.__closure__ or ()):
                fr.cells[name] = c
        elif op == "LOAD_CLOSURE":
            push(fr.cells[i.argval])
        elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
            push(self._load_cell(fr, i.argval))
        elif op == "STORE_DEREF":
            self._store_cell(fr, i.argval, pop())
        elif op == "DELETE_DEREF":
            self._store_cell(fr, i.argval, _DELETED)
        elif op == "LOAD_ATTR":
            push(self._getattr(pop(), i.argval))
        elif op == "LOAD_METHOD":
            obj = pop()
            push(_NULL)
            push(self._load_method(obj, i.argval))
        elif op == "STORE_ATTR":
            obj = pop()
            self._store_attr(obj, i.argval, pop())
        elif op == "DELETE_ATTR":
            self._store_attr(pop(), i.argval, _DELETED)
        elif op == "PUSH_NULL":
            push(_NULL)
        elif op == "KW_NAMES":
            fr.kwnames = fr.code.co_consts[i.arg]
        elif op == "CALL_FUNCTION_EX":
            kw = pop() if i.arg & 1 else {}
            args = pop()
            f = pop()
            if stack and stack[-1] is _NULL:
                pop()
            push(self._call_function(f, tuple(args), dict(kw)))
            self._cur = fr
        elif op == "MAKE_FUNCTION":
            code = pop()
            flags = i.arg
            closure = pop() if flags & 8 else None
            ann = pop() if flags & 4 else None
            kwdefaults = pop() if flags & 2 else None
            defaults = pop() if flags & 1 else None
            f = types.FunctionType(code, fr.func.__globals__, code.co_name, defaults,
                                   closure)
            f.__qualname__ = code.co_qualname
            if kwdefaults:
                f.__kwdefaults__ = kwdefaults
            if ann:
                f.__annotations__ = dict(zip(ann[::2], ann[1::2])) \
                    if isinstance(ann, tuple) else ann
            push(self._make(f))
        elif op == "RETURN_VALUE":
            return -1
        elif op == "POP_TOP":
            pop()
        elif op == "COPY":
            v = stack[-i.arg]
            if type(v) in (list, dict, set):
                # a second reference to a container is a second load: in
                # `c[0] += 1` one reads the item the other's store writes
                # (not write-only: c[0]'s value is guarded, or a replay of
                # the trace's c[0] + 1 would write a constant)
                r = self.real.get(id(v), v)
                self.loads[id(r)] = self.loads.get(id(r), 0) + 1
            push(v)
        elif op == "SWAP":
            k = i.arg
            stack[-1], stack[-k] = stack[-k], stack[-1]
        elif op == "BINARY_SUBSCR":
            k = pop()
            push(self._sub(pop()[k]))
        elif op == "STORE_SUBSCR":
            k = pop()
            obj = pop()
            self._store_item(obj, k, pop())
        elif op == "DELETE_SUBSCR":
            k = pop()
            self._store_item(pop(), k, _DELETED)
        elif op == "BUILD_SLICE":
            args = [pop() for _ in range(i.arg)][::-1]
            push(slice(*args))
        elif op == "COMPARE_OP":
            b = pop()
            push(_COMPARE[i.argval](pop(), b))
        elif op == "IS_OP":
            b = pop()
            r = pop() is b
            push(r != bool(i.arg))
        elif op == "CONTAINS_OP":
            b = pop()
            r = pop() in b
            push(r != bool(i.arg))
        elif op == "UNARY_NEGATIVE":
            push(-pop())
        elif op == "UNARY_POSITIVE":
            push(+pop())
        elif op == "UNARY_INVERT":
            push(~pop())
        elif op == "UNARY_NOT":
            push(not self._truth(pop()))
        elif op == "BUILD_TUPLE":
            items = tuple(stack[len(stack) - i.arg:]) if i.arg else ()
            del stack[len(stack) - i.arg:]
            push(items)
        elif op == "BUILD_LIST":
            items = stack[len(stack) - i.arg:] if i.arg else []
            del stack[len(stack) - i.arg:]
            push(self._make(list(items)))
        elif op == "BUILD_SET":
            items = stack[len(stack) - i.arg:] if i.arg else []
            del stack[len(stack) - i.arg:]
            push(self._make(set(items)))
        elif op == "BUILD_MAP":
            items = stack[len(stack) - 2 * i.arg:] if i.arg else []
            del stack[len(stack) - 2 * i.arg:]
            push(self._make(dict(zip(items[::2], items[1::2]))))
        elif op == "BUILD_CONST_KEY_MAP":
            keys = pop()
            vals = stack[len(stack) - i.arg:]
            del stack[len(stack) - i.arg:]
            push(self._make(dict(zip(keys, vals))))
        elif op == "BUILD_STRING":
            parts = stack[len(stack) - i.arg:]
            del stack[len(stack) - i.arg:]
            push("".join(parts))
        elif op == "FORMAT_VALUE":
            spec = pop() if (i.arg & 4) else ""
            v = pop()
            conv = i.arg & 3
            if _traced(v) and not self.concrete:
                raise _BreakHere("the text of a traced value (an f-string or format()) is "
                                 "known only when the plan runs", self.depth)
            if conv == 1:
                v = str(v)
            elif conv == 2:
                v = repr(v)
            elif conv == 3:
                v = ascii(v)
            push(format(v, spec))
        elif op == "LIST_APPEND":
            v = pop()
            stack[-i.arg].append(v)
        elif op == "SET_ADD":
            v = pop()
            stack[-i.arg].add(v)
        elif op == "MAP_ADD":
            v = pop()
            k = pop()
            stack[-i.arg][k] = v
        elif op == "LIST_EXTEND":
            v = pop()
            stack[-i.arg].extend(v)
        elif op == "SET_UPDATE":
            v = pop()
            stack[-i.arg].update(v)
        elif op in ("DICT_UPDATE", "DICT_MERGE"):
            v = pop()
            d = stack[-i.arg]
            if op == "DICT_MERGE":
                dup = set(d) & set(v)
                if dup:
                    raise TypeError(f"got multiple values for keyword argument "
                                    f"{sorted(dup)[0]!r}")
            d.update(v)
        elif op == "LIST_TO_TUPLE":
            push(tuple(pop()))
        elif op == "UNPACK_SEQUENCE":
            seq = list(pop())
            if len(seq) != i.arg:
                raise ValueError(f"expected {i.arg} values to unpack, got {len(seq)}")
            stack.extend(self._sub(x) for x in reversed(seq))
        elif op == "UNPACK_EX":
            before, after = i.arg & 0xFF, i.arg >> 8
            seq = list(pop())
            if len(seq) < before + after:
                raise ValueError(f"not enough values to unpack (expected at least "
                                 f"{before + after}, got {len(seq)})")
            mid = self._make(seq[before:len(seq) - after])
            items = seq[:before] + [mid] + seq[len(seq) - after:]
            stack.extend(reversed(items))
        elif op == "GET_ITER":
            v = pop()
            if self.concrete:
                push(iter(v))
                return pc
            if _traced(v) and not _static_rows(v):
                if _rows_known_at_run_time(v):  # the loop runs in Python, on the values
                    raise _BreakHere("a loop over a traced array whose length is known only "
                                     "when the program runs", self.depth)
                self._fail("a loop over a traced value")
            # (a traced array of a known number of rows: its rows, one
            # traced step each, as eagerly; a break inside the loop hoists
            # the whole loop to Python, as any loop's)
            r = iter(v)
            if r is v and id(v) not in self.made:
                self._fail(f"a loop over a {type(v).__name__} iterator the function did not "
                           f"make (each step advances it)")
            push(r)
        elif op in ("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE"):
            v = pop()
            if type(v) is not bool and op[9] == "F" and self._mergeable(v):
                return self._merge_if(fr, pc - 1, at[i.argval], v, True)
            if self._truth(v):
                pc = at[i.argval]
        elif op in ("POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NONE"):
            if pop() is None:
                pc = at[i.argval]
        elif op in ("POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE"):
            if pop() is not None:
                pc = at[i.argval]
        elif op == "JUMP_IF_FALSE_OR_POP":
            if not self._truth(stack[-1]):
                pc = at[i.argval]
            else:
                pop()
        elif op == "JUMP_IF_TRUE_OR_POP":
            if self._truth(stack[-1]):
                pc = at[i.argval]
            else:
                pop()
        elif op == "LOAD_ASSERTION_ERROR":
            push(AssertionError)
        elif op == "BEFORE_WITH":
            push(self._before_with(pop()))
            self._cur = fr
        elif op == "PUSH_EXC_INFO" and self.concrete:
            exc = pop()
            push(fr.handling)
            fr.handling = exc
            push(exc)
        elif op == "CHECK_EXC_MATCH" and self.concrete:
            cls = pop()
            push(isinstance(stack[-1], cls))
        elif op == "WITH_EXCEPT_START" and self.concrete:
            exc = stack[-1]
            push(stack[-4](type(exc), exc, exc.__traceback__))
        elif op == "RERAISE" and self.concrete:
            raise pop()
        elif op == "RAISE_VARARGS":
            if i.arg == 0:
                if not self.concrete:
                    self._fail("a bare raise", fr)
                if fr.handling is None:
                    raise RuntimeError("No active exception to reraise")
                raise fr.handling
            cause = pop() if i.arg == 2 else None
            exc = pop()
            if isinstance(exc, type):
                exc = exc()
            if i.arg == 2:
                raise exc from cause
            raise exc
        else:
            self._fail(f"the instruction {op} is not translated yet")
        return pc

    def _before_with(self, mgr):
        """BEFORE_WITH: pushes mgr's bound __exit__ and returns what its
        __enter__ returns.  Translated, a context manager of the user's
        class is inlined (its effects recorded as any); a library one is
        called only when known to change nothing (contextlib.nullcontext),
        any other is Unsupported: its __enter__ would run once, at trace
        time."""
        t = type(mgr)
        enter = getattr(t, "__enter__", None)
        exit_ = getattr(t, "__exit__", None)
        if enter is None or exit_ is None:
            raise TypeError(f"{t.__name__!r} object does not support the context manager "
                            f"protocol")
        bound_exit = exit_.__get__(mgr, t) if hasattr(exit_, "__get__") else exit_
        self._cur.stack.append(bound_exit)
        if self.concrete:
            return enter.__get__(mgr, t)()
        if _user_function(enter) and _user_function(exit_):
            return self._call_function(types.MethodType(enter, mgr), (), {})
        if t in _PURE_MANAGERS:
            return enter.__get__(mgr, t)()
        self._fail(f"a with block over a {t.__name__}, whose __enter__ and __exit__ hop "
                   f"cannot follow (they would run once, while translating)")

    def _truth(self, v):
        if type(v) is bool:
            return v
        if _traced(v) and not self.concrete:
            raise _BreakHere(_CONTROL_FLOW, self.depth)
        return bool(v)

    def _mergeable(self, v):
        """Whether a data-dependent `if` on v may become a cond (_merge_if):
        a traced tensor or hop.numpy array, in a translation that may break
        (fullgraph=True raises at such an `if`, as the plain tracer does)."""
        if self.concrete or not self.can_break:
            return False
        if isinstance(v, _C.Tensor):
            return _C._is_proxy(v)
        hnp = sys.modules.get("hop.numpy")
        return hnp is not None and isinstance(v, hnp.ndarray) and _C._is_proxy(v._t)

    def _merge_if(self, fr, k, target, v, jump_on):
        """A forward POP_JUMP_IF_<jump_on> at instruction k of fr on the
        traced value v: both sides traced as the bodies of one cond, as the
        plain tracer's path specialisation does (_paths), and the next pc;
        or, when a side cannot be a body (_NoMerge: a Python effect, a
        break, a jump out of the `if`, values a cond cannot return), the
        graph break at the `if` that was the rule before, its reason saying
        why.  Each side first runs to the join (the end of the `if`
        statement or conditional expression): the locals the `if` may
        assign and the value it pushes are the cond's outputs.  Where that
        fails and the `if` is in no loop of fr, each side runs to the
        return instead (the rest of the function in each body: a side that
        returns, sides that assign different Python numbers)."""
        ins, at, _, _, _, loops = _instructions(fr.code)
        try:
            if self.numpy_mode:
                bad = _exact.differs([v])
                if bad is not None:
                    # eager branches on NumPy's own value: a cond on hop's
                    # could take the other side where the two differ
                    raise _NoMerge(f"its condition is a value NumPy may compute with other "
                                   f"bits ({bad}), so hop could take another side than NumPy")
            pred = _paths._predicate(v if isinstance(v, _C.Tensor) else v._t)
        except _NoMerge as e:
            raise _BreakHere(f"{_CONTROL_FLOW}; not traced as a cond: {e.message}",
                             self.depth) from None
        except Exception:
            # bool() of it raises (more than one element): eager's error, in Python
            raise _BreakHere(_CONTROL_FLOW, self.depth) from None
        starts = {jump_on: target, not jump_on: k + 1}
        join = target
        prev = ins[target - 1]
        if prev.opname == "JUMP_FORWARD" and at[prev.argval] > target:
            join = at[prev.argval]  # an `else`: the `if` part jumps over it
        in_loop = any(t <= k <= j for t, j in loops)
        site = _paths.Site(fr.code.co_filename, fr.line)
        why = None
        for region in ((k + 1, join), None):
            if region is None and in_loop:
                break
            try:
                pc = self._merge_sides(fr, k, starts, region, pred, in_loop)
            except _NoMerge as e:
                why = e.message
                continue
            self.merged.append(f"data-dependent branch at {site} (`{site.text}`): both sides "
                               f"traced as one cond" +
                               ("" if region else " (each side runs on to the return)"))
            return pc
        raise _BreakHere(f"{_CONTROL_FLOW}; its sides were not traced as one cond: {why}",
                         self.depth)

    def _merge_sides(self, fr, k, starts, region, pred, in_loop):
        """The cond of _merge_if for one region ((k + 1, join), or None: to
        the return): the next pc, or _NoMerge with the translator and the
        objects the function made put back as they were at the `if`."""
        ins = _instructions(fr.code)[0]
        names = []  # the locals the `if` may assign: cond outputs
        if region is not None:
            for j in range(k + 1, region[1]):
                if ins[j].opname in ("STORE_FAST", "DELETE_FAST") and \
                        ins[j].argval not in names:
                    names.append(ins[j].argval)
            if not in_loop:
                # a local no code after the `if` reads is no output (a
                # temporary of one side: unassigned on the other)
                read = {i.argval for i in ins[region[1]:]
                        if i.opname in ("LOAD_FAST", "DELETE_FAST")}
                names = [n for n in names if n in read]
        h0 = len(fr.stack)
        state = _SideState(self, fr)
        tr = _C.tracing()
        results = {}

        def body(side):
            what = f"its {side} side"

            def run():
                self._sides += 1
                if self._sides > _MAX_SIDES:
                    raise _NoMerge(f"the function has more than {_MAX_SIDES} sides of "
                                   f"data-dependent ifs to trace")
                s = _Frame()
                s.func, s.code, s.cells, s.kwnames = fr.func, fr.code, fr.cells, fr.kwnames
                s.line, s.handling = fr.line, fr.handling
                s.fast = dict(fr.fast)
                s.stack = list(fr.stack)
                saved = (self._opaque, self.trace_depth, tr.scratch.get(_breaks.SIDE))
                self._opaque = state.opaque
                # the side's own code runs in this body: the call guard and
                # conversions treat it as the function's (_check, _breaks)
                self.trace_depth = _C._trace_depth()
                tr.scratch[_breaks.SIDE] = self.trace_depth
                try:
                    got = self._execute(s, starts[side], region=region)
                except _NoMerge as e:
                    raise _NoMerge(f"{what} {e.message}") from None
                except _BreakHere as b:
                    raise _NoMerge(f"{what} breaks the graph: {b.message}") from None
                except Unsupported as u:
                    raise _NoMerge(f"{what}: {u.message}") from None
                except _breaks.GraphBreak as b:  # (a conversion outside a call)
                    raise _NoMerge(f"{what} breaks the graph: {b.message}") from None
                except Exception as e:
                    raise _NoMerge(f"{what} raised {type(e).__name__}: {e}") from None
                finally:
                    self._opaque, self.trace_depth = saved[0], saved[1]
                    if saved[2] is None:
                        tr.scratch.pop(_breaks.SIDE, None)
                    else:
                        tr.scratch[_breaks.SIDE] = saved[2]
                    self._cur = fr
                changed = state.changed(self)
                if changed is not None:
                    raise _NoMerge(f"{what} {changed}")
                if region is not None:
                    if got is not _PAUSED:
                        raise _NoMerge(f"{what} returns inside the `if`")
                    if len(s.stack) < h0 or any(a is not b for a, b in zip(s.stack, fr.stack)):
                        raise _NoMerge(f"{what} ends with another stack")
                    vals = [s.fast.get(n, _UNBOUND) for n in names] + s.stack[h0:]
                    olds = [fr.fast.get(n, _UNBOUND) for n in names] + \
                        [_UNBOUND] * (len(s.stack) - h0)
                    labels = [f"the local {n!r}" for n in names] + \
                        ["the value of the conditional expression"] * (len(s.stack) - h0)
                else:
                    vals, olds, labels = [got], [_UNBOUND], ["the value it returns"]
                keep = []
                for v, old, label in zip(vals, olds, labels):
                    if v is old and not _cond_value(v, False):
                        keep.append((False, v))  # unchanged: no output (the other side's too)
                    elif v is _UNBOUND:
                        raise _NoMerge(f"{what} leaves {label} unassigned")
                    elif not _cond_value(v, region is None):
                        raise _NoMerge(f"{what} leaves in {label} a {type(v).__name__}, which "
                                       f"a cond cannot return")
                    else:
                        keep.append((True, v))
                leaves, spec = flatten([v for out, v in keep if out])
                traced = [x for x in leaves if isinstance(x, (_C.Tensor, _C.SymInt))]
                template = [None if isinstance(x, (_C.Tensor, _C.SymInt)) else x for x in leaves]
                other = results.get(not side)
                if other is not None:
                    same = [(o, None if o else id(v)) for o, v in keep] == \
                        [(o, None if o else id(v)) for o, v in other[2]]
                    if not same or _paths._agnostic(spec) != _paths._agnostic(other[0]) or \
                            not _same_constants(template, other[1]):
                        raise _NoMerge(f"its sides leave values of different kinds in "
                                       f"{', '.join(labels) or 'nothing'} (Python values a "
                                       f"cond cannot return as one)")
                results[side] = (spec, template, keep)
                return traced
            return run

        try:
            if tr is None:
                raise _NoMerge("no trace")
            outs = _C.call_hop("cond", (pred,), ((),), (body(True), body(False)))
        except _NoMerge:
            state.restore(self)
            raise
        except Exception as e:
            state.restore(self)
            raise _NoMerge(f"hop.cond cannot join its sides ({type(e).__name__}: {e})") from None
        spec, template, keep = results[True]
        spec = _paths._merge(spec, results[False][0])
        it = iter(outs)
        merged = iter(unflatten([next(it) if x is None else x for x in template], spec))
        final = [next(merged) if out else v for out, v in keep]
        if region is None:
            fr.stack.append(final[0])
            return -1  # (returned: the value on top of the stack)
        for n, v in zip(names, final):
            if v is _UNBOUND:
                fr.fast.pop(n, None)
            else:
                fr.fast[n] = v
        fr.stack[h0:] = final[len(names):]
        return region[1]

    def _binary(self, op, a, b):
        f = _BINARY[op]
        if self.concrete:
            return f(a, b)
        if op >= 13 and hasattr(type(a), _INPLACE[op]) and type(a) not in (list, dict, set) \
                and self._kind(a) == "pre" and not _numpy_written_back(a):
            self._fail(f"an in-place {dis._nb_ops[op][1]} on a {type(a).__name__} the function "
                       f"did not make")
        if op >= 13 and type(a) in (list, dict, set) and self._kind(a) != "made":
            # an in-place operator on a container: a mutation
            if self._kind(a) is None:
                self._fail(f"an in-place operator on a {type(a).__name__} hop cannot trace "
                           f"to its owner")
            real = self.real.get(id(a), a)
            s = self._shadow(real)
            f(s, b)
            self._record("call", real, _INPLACE[op],
                         ((b,), ()), f"{type(real).__name__} {dis._nb_ops[op][1]}")
            return s
        return f(a, b)

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
        try:
            return self._sub(g[name])
        except KeyError:
            b = g.get("__builtins__", builtins)
            b = b if isinstance(b, dict) else vars(b)
            if name in b:
                return b[name]
            raise NameError(f"name {name!r} is not defined") from None

    def _load_cell(self, fr, name):
        c = fr.cells[name]
        if self.cells:
            v = self.cells.get(id(c), _UNBOUND)
            if v is _DELETED:
                raise NameError(f"free variable {name!r} referenced before assignment")
            if v is not _UNBOUND:
                return v
        if id(c) not in self.made:
            key = ("cell", id(c))
            if key not in self.written:
                self.read.add(key)
        try:
            return self._sub(c.cell_contents)
        except ValueError:
            raise NameError(f"free variable {name!r} referenced before assignment in "
                            f"enclosing scope") from None

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
                del g[name]
            else:
                g[name] = v
            return
        self.written.add(("global", id(g), name))
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
                del c.cell_contents
            else:
                c.cell_contents = v
            return
        self.written.add(("cell", id(c)))
        self.cells[id(c)] = v
        self._cell_objs.append(c)
        if v is _DELETED:
            self._record("del_cell", c, name, (), f"del nonlocal {name}")
        else:
            self._record("cell", c, name, (v,), f"nonlocal {name} =")

    def _store_attr(self, obj, name, v):
        kind = "made" if self.concrete else self._kind(obj)
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
        self.attrs[(id(obj), name)] = v
        self._attr_objs[id(obj)] = obj
        if v is _DELETED:
            self._record("del_attr", obj, name, (), f"del .{name}")
        else:
            self._record("attr", obj, name, (v,), f"{type(obj).__name__}.{name} =")

    def _store_item(self, obj, k, v):
        kind = "made" if self.concrete else self._kind(obj)
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
        s = self._shadow(real)
        if v is _DELETED:
            del s[k]
            self._record("del_item", real, None, (k,), f"del {type(real).__name__}[...]")
        else:
            s[k] = v
            self._record("item", real, None, (k, v), f"{type(real).__name__}[...] =")

    # ------------------------------------------------------- afterwards

    def write_only(self):
        """The ids of pre-existing containers the function only wrote
        through write-only methods: their length and items need no guard."""
        return {id(r) for r in self.real.values() if self.loads.get(id(r), 0) <= 0}

    def unread_writes(self):
        """("cell", id) / ("global", id(globals), name) the function wrote
        and never read before: no guard on their value."""
        return self.written - self.read


class _SideState:
    """What a side of a data-dependent `if` traced as a cond body could
    change (Translator._merge_if), kept at the `if`: the translator's
    tables, and the contents of the objects the function made (lists,
    dicts, sets, cells, objects' attributes, generators it translates),
    which the translator changes for real.  A side must change none of it
    (the other side, and the code after the cond, must see the state
    before the `if`: a cond body has no effects); `opaque` holds the ids of
    the objects whose state it cannot read (an iterator, a made object with
    __slots__), which a side must not hand to any code.  restore() puts it
    all back when the `if` stays a break."""

    def __init__(self, tr, fr):
        self.neffects = len(tr.effects)
        self.nmerged = len(tr.merged)
        self.overlays = (dict(tr.cells), dict(tr.globs), dict(tr.attrs))
        self.shadows = {i: (sh, _contents(sh)) for i, sh in tr.shadows.items()}
        self.real = dict(tr.real)
        self.written, self.loads = set(tr.written), dict(tr.loads)
        self.error, self.gen_break = tr.error, tr.gen_break
        trace = _C.tracing()
        self.scratch = None if trace is None else trace.scratch
        # the conversions raised so far (a side's is the `if`'s, or none)
        self.breaks = None if trace is None else list(trace.scratch.get(_breaks._KEY, ()))
        self.made = []
        opaque = set(tr._opaque or ())
        seen = set()
        # the objects a side may reach other than through the environment
        # (whose writes are effects): those the function made, the frame's
        # values, and what they hold (an RNG in a list it made), 3 deep
        todo = [(o, 0) for o in list(tr.made.values()) + list(fr.stack) +
                list(fr.fast.values()) + [_cell_value(c) for c in fr.cells.values()]]
        while todo:
            o, depth = todo.pop()
            if id(o) in seen or id(o) not in tr.made and tr._kind(o) == "pre":
                continue
            seen.add(id(o))
            c = _contents(o)
            if c is _OPAQUE:
                opaque.add(id(o))
                continue
            if c is not _FIXED:
                self.made.append((o, c))
            if depth < 3:
                todo.extend((x, depth + 1) for x in _held(o, c))
        self.opaque = opaque

    def changed(self, tr):
        """What a side changed (explain()'s words), or None."""
        if len(tr.effects) != self.neffects:
            e = tr.effects[self.neffects]
            return f"has a Python effect ({e.what} at {e.site})"
        for o, c in self.made:
            if not _same_contents(o, c):
                return f"changes a {type(o).__name__} the function made before the `if` " \
                       f"(the other side and the code after it must not see that)"
        return None

    def restore(self, tr):
        del tr.effects[self.neffects:]
        del tr.merged[self.nmerged:]
        for mine, kept in zip((tr.cells, tr.globs, tr.attrs), self.overlays):
            mine.clear()
            mine.update(kept)
        tr.shadows.clear()
        for i, (sh, c) in self.shadows.items():
            tr.shadows[i] = sh
            _put_contents(sh, c)
        tr.real.clear()
        tr.real.update(self.real)
        tr.written.clear()
        tr.written.update(self.written)
        tr.loads.clear()
        tr.loads.update(self.loads)
        tr.error, tr.gen_break = self.error, self.gen_break
        if self.scratch is not None:
            if self.breaks:
                self.scratch[_breaks._KEY] = self.breaks
            else:
                self.scratch.pop(_breaks._KEY, None)
        for o, c in self.made:
            _put_contents(o, c)


_OPAQUE = object()  # _contents: state it cannot read
_FIXED = object()   # _contents: an object with no state a side could change
_FIXED_TYPES = frozenset([int, float, bool, str, bytes, complex, tuple, frozenset, range, slice,
                          type(None), type(Ellipsis), _C.SymInt, types.CodeType,
                          types.BuiltinFunctionType, types.ModuleType])


def _contents(o):
    """What a side of an `if` could change in o, as a snapshot (_SideState)."""
    t = type(o)
    if t is list or t is set:
        return tuple(o)
    if t is dict:
        return tuple(o.items())
    if t is types.CellType:
        return (_cell_value(o),)
    if t is _TransGen:
        return (o.pc, o.done, tuple(o.fr.stack), tuple(o.fr.fast.items()))
    if t in _FIXED_TYPES or isinstance(o, (_C.Tensor, type)) or _traced(o):
        return _FIXED
    if t is types.MethodType:
        return _FIXED  # (its function and self are objects of their own)
    if t is types.FunctionType or t.__dictoffset__ and \
            not any("__slots__" in vars(k) for k in t.__mro__[:-1]):
        try:
            d = object.__getattribute__(o, "__dict__")  # (no property of the user's runs)
        except AttributeError:
            d = None
        if type(d) is dict:
            return (tuple(d.items()),)
    return _OPAQUE


def _held(o, c):
    """The objects o holds, from its snapshot c (_contents)."""
    t = type(o)
    if t is tuple or t is frozenset:
        return tuple(o)
    if t is list or t is set or t is types.CellType:
        return c
    if t is dict:
        return tuple(x for kv in c for x in kv)
    if c is _FIXED or t is _TransGen:
        return ()
    return tuple(v for _, v in c[0])  # an object's attributes


def _same_contents(o, c):
    now = _contents(o)
    if type(o) is set:
        return len(now) == len(c) and {id(x) for x in now} == {id(x) for x in c}
    return _same_items(now, c)


def _same_items(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        if type(x) is tuple and type(y) is tuple:
            if not _same_items(x, y):
                return False
        elif not (type(x) is type(y) and type(x) in (int, bool) and x == y):
            return False
    return True


def _put_contents(o, c):
    t = type(o)
    if t is list:
        o[:] = c
    elif t is set or t is dict:
        o.clear()
        o.update(c)
    elif t is types.CellType:
        if c[0] is _EMPTY:
            try:
                del o.cell_contents
            except ValueError:
                pass
        else:
            o.cell_contents = c[0]
    elif t is _TransGen:
        o.pc, o.done = c[0], c[1]
        o.fr.stack[:] = c[2]
        o.fr.fast.clear()
        o.fr.fast.update(c[3])
    else:
        d = o.__dict__
        d.clear()
        d.update(c[0])


def _touches(values, opaque):
    """Whether an instruction's operands hand code one of the opaque
    objects (itself, as a bound method's self, or in a tuple or list)."""
    for v in values:
        if id(v) in opaque:
            return True
        t = type(v)
        if t is types.BuiltinMethodType or t is types.MethodType:
            if id(v.__self__) in opaque:
                return True
        elif t is tuple or t is list:
            for x in v:
                if id(x) in opaque:
                    return True
    return False


def _cond_value(v, containers, depth=0):
    """Whether a cond can return v (a side's value): traced values, tensors,
    Python numbers, strings and None, in tuples (containers: also lists and
    dicts, for a side's return value, made anew on every call anyway)."""
    if v is None or type(v) in (int, float, bool, str, complex) or \
            isinstance(v, (_C.Tensor, _C.SymInt)):
        return True
    hnp = sys.modules.get("hop.numpy")
    if hnp is not None and isinstance(v, hnp.ndarray):
        return True
    if depth > 8:
        return False
    if type(v) is tuple or containers and type(v) is list:
        return all(_cond_value(x, containers, depth + 1) for x in v)
    if containers and type(v) is dict:
        return all(type(x) in (str, int) for x in v) and \
            all(_cond_value(x, containers, depth + 1) for x in v.values())
    return False


def _same_constants(a, b):
    """Whether two sides' templates (None at a traced leaf) agree: the
    same Python values at the same places."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if (x is None) != (y is None):
            return False
        if x is not y and not (type(x) is type(y) and x == y):
            return False
    return True


class _TransGen:
    """A generator of the user's (a generator function called, a generator
    expression) while translating: each next() translates its frame to the
    next YIELD_VALUE, so its effects are recorded where its consumer (a
    loop of the translated code, sum(), tuple(), any()) asks for them, in
    eager's order.  A break inside it is the consumer's call's (the root
    frame breaks at that statement: _Hoist); a library consumer that
    catches it makes the translation Unsupported (gen_break)."""

    def __init__(self, tr, fr):
        self.tr = tr
        self.fr = fr
        self.pc = 0
        self.done = False

    def __iter__(self):
        return self

    def __next__(self):
        if self.done:
            raise StopIteration
        tr = self.tr
        saved = tr._cur
        tr.depth += 1
        try:
            got = tr._execute(self.fr, self.pc)
        except _BreakHere as b:
            self.done = True
            tr.gen_break = b
            raise
        except BaseException:
            self.done = True
            raise
        finally:
            tr.depth -= 1
            tr._cur = saved
        if got is _YIELDED:
            self.pc = self.fr.pc
            v = self.fr.stack.pop()
            self.fr.stack.append(None)  # what next() sends (popped after RESUME)
            return v
        self.done = True
        raise StopIteration(got) if got is not None else StopIteration


def _generated_library(frame):
    """Code the standard library generates with exec (namedtuple's
    __new__): file "<string>", the globals of a library module."""
    if not frame.f_code.co_filename.startswith("<"):
        return False
    name = frame.f_globals.get("__name__") or ""
    return name.startswith("namedtuple_") or name.split(".")[0] in sys.stdlib_module_names or \
        name.startswith("hop")


def _printable(a, depth=0):
    if a is None or type(a) in (str, int, float, bool, complex) or _traced(a) or \
            isinstance(a, _C.Tensor):
        return True
    return type(a) is tuple and depth < 4 and all(_printable(x, depth + 1) for x in a)


# str(), format() and the like the translator calls for the user's code are
# the user's: a traced value's text there is a break, never its proxy text
_breaks.ACTS_FOR_USER.update([Translator._call_function.__code__, Translator._step.__code__,
                              Translator._binary.__code__, Translator._materialized.__code__])


def _site(code, line):
    return f"{os.path.basename(code.co_filename)}:{line}"


class Break:
    """Where a translation ended: the instruction at pc of func (opname,
    site, why) needs real values.  After the plan, `resume(out, compile)`
    rebuilds the stack (NULLs at nulls) and locals (names) from the plan's
    outputs, runs that instruction in Python (with until: the code from pc
    until it has passed until with an empty stack: a loop, a with block or
    the statement of an inlined call that broke, _Hoist; where says which,
    for explain()), and calls the resume function for the instruction after
    it: compiled (hop.compile of a Resume) on its first call and cached per
    (pc, stack layout, locals).

    prefix (NumPy code, numpy): the plan would hand Python a value whose
    last bit may not be NumPy's (_exact), so the part before the break runs
    in Python instead (`run_prefix`: the function from its start, or from
    start, the Resume this break ends, to pc) and hands the resume NumPy's
    own values; prefix says why, for explain()."""

    def __init__(self, func, pc, nulls, nstack, names, kwnames, why, site, opname, lines,
                 until=None, where=None, numpy=False, prefix=None, start=None):
        self.func = func
        self.pc = pc
        self.nulls = nulls
        self.nstack = nstack
        self.names = names
        self.kwnames = kwnames
        self.why = why
        self.site = site
        self.opname = opname
        self.lines = lines
        self.until = until
        self.where = where
        self.numpy = numpy
        self.prefix = prefix
        self.start = start
        # (pc, stack size, NULL slots, local names, float slots) ->
        # CompiledFunction (or _FloatInputs)
        self.resumes = {}
        self.floats_seen = {}  # key -> the float arguments of its first call

    def describe(self):
        where = f"; {self.where}" if self.where else ""
        prefix = f"; {self.prefix}" if self.prefix else ""
        return f"graph break at {self.site} ({self.opname}): {self.why}{where}{prefix}"

    def run_prefix(self, args, kwargs, compile):
        """The call with the part before the break run in Python (prefix):
        the function's code from its start to pc on real values, then the
        break and the resume as after a plan."""
        t = Translator(self.func, [], set(), set(), concrete=True, can_break=True)
        if self.start is not None:
            fr = self.start._frame(tuple(args))
            pc = self.start.pc
        else:
            bound = inspect.signature(self.func).bind(*args, **(kwargs or {}))
            bound.apply_defaults()
            fr = _frame_for(self.func, dict(bound.arguments), [])
            pc = 0
        t.root = fr
        t.depth = 1
        t.pause_at = self.pc
        got = t._execute(fr, pc)
        if got is not _PAUSED:
            return got  # (another path: the function ended before the break)
        t.pause_at = None
        return self._finish(t, fr, compile)

    def resume(self, out, compile):
        stack_vals, fast_vals, cell_vals = out
        stack = []
        for v in stack_vals:
            if type(v) is tuple and len(v) == 3 and v[0] == _METHOD:
                v = getattr(v[1], v[2])
            stack.append(v)
        for i in self.nulls:
            stack[i] = _NULL
        fr = _frame_for(self.func, dict(zip(self.names, fast_vals)), stack, cell_vals)
        fr.kwnames = self.kwnames
        t = Translator(self.func, [], set(), set(), concrete=True)
        t.root = fr
        t.depth = 1
        return self._finish(t, fr, compile)

    def _finish(self, t, fr, compile):
        """The breaking instruction (or the region of until) in Python on
        frame fr, then the resume."""
        if self.until is None:
            got = t._execute(fr, self.pc, 1)  # the instruction itself, in Python
        else:
            got = t._execute(fr, self.pc, until=self.until)  # the loop, block, statement
        if got is not _PAUSED:
            return got
        nulls = tuple(i for i, v in enumerate(fr.stack) if v is _NULL)
        if not self.numpy and (_has_numpy(fr.stack) or self.until is not None and
                               _has_numpy(fr.fast.values())):
            # tensor code: what the instruction made is NumPy's (np.asarray,
            # a NumPy function): compiled, the rest would compute with
            # hop.numpy, whose reductions may differ from NumPy's in the last
            # bit where eager's NumPy would not, so the rest runs eagerly in
            # Python.  (NumPy code computes with hop.numpy anyway; its
            # resume hands Python only NumPy's bits, as any of its breaks)
            t.depth = 1
            return t._execute(fr, fr.pc)
        args = _resume_args(fr)
        if args is None:
            # a closure over the frame's own cells that cannot be made again
            # in the resume: the rest runs in Python
            t.depth = 1
            return t._execute(fr, fr.pc)
        floats = tuple(i for i, v in enumerate(args) if type(v) is float)
        key = (fr.pc, len(fr.stack), nulls, tuple(fr.fast), floats)
        cf = self.resumes.get(key)
        if cf is None:
            cf = self.resumes[key] = compile(Resume(self.func, fr.pc, len(fr.stack), nulls,
                                                    tuple(fr.fast), self.lines))
            self.floats_seen[key] = [args[i] for i in floats]
        elif floats and key in self.floats_seen and \
                any(a is not b and a != b for a, b in
                    zip(self.floats_seen[key], (args[i] for i in floats))):
            # a Python float (`s = float(y.sum())`) whose value changed
            # since the first call: the resume takes it as an input (a 0-d
            # float64 array it reads as a SymFloat), not a recompile per
            # value -- when it translates so (a SymFloat does less than a
            # float: `s ** 2`, NumPy's ufuncs); else it stays a constant
            del self.floats_seen[key]
            dyn = compile(Resume(self.func, fr.pc, len(fr.stack), nulls, tuple(fr.fast),
                                 self.lines, floats))
            dyn.quiet = True  # its fallback is not the user's to hear of
            out = dyn(*_float_inputs(args, floats, self.numpy))
            if dyn.eager_calls == 0 and dyn._eager_why is None:
                dyn.quiet = False
                self.resumes[key] = _FloatInputs(dyn, floats, self.numpy)
            return out
        return cf(*args)


class _FloatInputs:
    """A resume compiled with its float arguments as inputs (cf), called
    with floats as its first call was (Break._finish)."""

    __slots__ = ("cf", "floats", "numpy")

    def __init__(self, cf, floats, numpy):
        self.cf = cf
        self.floats = floats
        self.numpy = numpy

    def __call__(self, *args):
        return self.cf(*_float_inputs(args, self.floats, self.numpy))


def _float_inputs(args, floats, numpy):
    """args with each float (at floats) a 0-d float64 array: an ndarray in
    NumPy code (whose arguments are ndarrays), else a hop.Tensor."""
    args = list(args)
    for i in floats:
        if numpy:
            args[i] = sys.modules["numpy"].array(args[i])
        else:
            args[i] = _C.full((), args[i], dtype=_C.float64)
    return args


def _shared_memory(values):
    """None when no hop.numpy array in values (nested in tuples, lists and
    dicts) shares memory with another array; else which one does, for
    explain().  A traced array that does is a view (its storage's value seen
    through view steps), an array over the caller's memory that is not the
    argument itself (a captured array), or one of two live arrays over one
    storage (hop/numpy/_storage.py).  Handed to Python, the plan's outputs
    are new memory each: a write through one would not reach the others."""
    hnp = sys.modules.get("hop.numpy")
    if hnp is None:
        return None
    try:
        return _shared_storage(_exact.leaves(values), hnp)
    except _exact.TooDeep:
        return "a value nested too deep to check"


def _shared_storage(values, hnp):
    storages = set()
    for v in values:
        if isinstance(v, hnp.ndarray):
            st = v._st
            if st is None:
                continue
            if v._vw:
                return "a view of another array"
            if st.root is not None and st.root != ("arg", v._role):
                return "an array over memory the caller owns"
            if id(st) in storages:
                return "two arrays over the same memory"
            storages.add(id(st))
    return None


def _numpy_value(v):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(v, (np.ndarray, np.generic))


def _has_numpy(values, depth=0):
    np = sys.modules.get("numpy")
    if np is None or depth > 2:
        return False
    for v in values:
        if isinstance(v, (np.ndarray, np.generic)) or \
                type(v) in (list, tuple) and _has_numpy(v, depth + 1) or \
                type(v) is dict and _has_numpy(list(v.values()), depth + 1):
            return True
    return False


def _cell_value(c):
    try:
        return c.cell_contents
    except ValueError:
        return _EMPTY


def _func_spec(v, fr):
    """A function fr's code made, closing over fr's own cells or its free
    variables, as values a plan or a resume's arguments can carry: (_FUNC,
    code, name, qualname, defaults, the names of its closure's cells) --
    made again over the resume's cells (_thaw) -- or None (another
    closure, other globals, keyword defaults or attributes)."""
    if v.__globals__ is not fr.func.__globals__ or v.__kwdefaults__ or v.__dict__:
        return None
    cells = {id(c): n for n, c in fr.cells.items()}
    names = []
    for c in v.__closure__ or ():
        n = cells.get(id(c))
        if n is None:
            return None
        names.append(n)
    return (_FUNC, v.__code__, v.__name__, v.__qualname__, v.__defaults__, tuple(names))


def _thaw(v, fr, make=None):
    """v, or the function a _func_spec stands for, made over fr's cells."""
    if type(v) is tuple and len(v) == 6 and v[0] == _FUNC:
        _, code, name, qualname, defaults, names = v
        v = types.FunctionType(code, fr.func.__globals__, name, defaults,
                               tuple(fr.cells[n] for n in names))
        v.__qualname__ = qualname
        if make is not None:
            make(v)
    return v


def _resume_args(fr):
    """The resume's arguments for frame fr paused after a break: its stack
    (None at NULLs), its locals and its own cells' contents, closures over
    those cells as _func_spec; None when one cannot be made again."""
    own = {id(fr.cells[n]) for n in fr.code.co_cellvars if n in fr.cells}
    values = [None if v is _NULL else v for v in fr.stack] + list(fr.fast.values()) + \
        [_cell_value(fr.cells[n]) for n in fr.code.co_cellvars if n in fr.cells]
    if not own:
        return values
    out = []
    for v in values:
        if type(v) is types.FunctionType and any(id(c) in own for c in v.__closure__ or ()):
            v = _func_spec(v, fr)
            if v is None:
                return None
        elif not _plain(v):
            return None  # it may hold a closure over the old cells, which the resume replaces
        out.append(v)
    return out


def _plain(v, depth=0):
    """Whether v holds no closure (numbers, strings, tensors, arrays, library
    functions and classes, and tuples, lists and dicts of those)."""
    if v is None or type(v) in _PLAIN or _traced(v) or _numpy_value(v) or \
            isinstance(v, (types.BuiltinFunctionType, types.ModuleType, type)):
        return True
    if type(v) is types.FunctionType:
        return not v.__closure__
    if depth > 4:
        return False
    if type(v) in (tuple, list, set, frozenset):
        return all(_plain(x, depth + 1) for x in tuple(v))  # one C call: see _hops._value_key
    if type(v) is dict:
        return all(_plain(x, depth + 1) for x in tuple(v.values()))
    return False


def _frame_for(func, fast, stack, cell_vals=(), make=None):
    """A root frame of func at a resume: its locals, stack and own cells
    (made again from cell_vals, as are the closures over them in the stack
    and the locals; make registers each new object with a translator)."""
    fr = _Frame()
    fr.func = func
    fr.code = func.__code__
    fr.fast = fast
    fr.cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
    if cell_vals:
        for n, v in zip(func.__code__.co_cellvars, cell_vals):
            c = types.CellType()
            fr.cells[n] = c
            if make is not None:
                make(c)
        for n, v in zip(func.__code__.co_cellvars, cell_vals):
            if not (type(v) is str and v == _EMPTY):
                fr.cells[n].cell_contents = _thaw(v, fr, make)
        for k, v in fast.items():
            fast[k] = _thaw(v, fr, make)
        stack[:] = [_thaw(v, fr, make) for v in stack]
    fr.stack = stack
    fr.kwnames = ()
    fr.line = func.__code__.co_firstlineno
    fr.handling = None
    return fr


class Resume:
    """The rest of func from instruction pc, as a function of the stack
    (nstack values, None at the NULL slots) and the locals (names): what a
    graph break resumes.  hop.compile compiles it through the translator;
    called itself, it runs the rest eagerly (the concrete interpreter)."""

    def __init__(self, func, pc, nstack, nulls, names, lines, floats=()):
        self.func = func
        self.pc = pc
        self.nstack = nstack
        self.nulls = nulls
        self.names = names
        self.floats = floats  # the arguments that are floats given as 0-d arrays
        self.effect_lines = lines
        self.__wrapped__ = func  # what its trace reads: func's globals and cells
        self.__code__ = func.__code__
        self.__name__ = f"{func.__name__}_resume_at_{pc}"
        self.__qualname__ = f"{func.__qualname__}_resume_at_{pc}"
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(f"stack{i}", inspect.Parameter.POSITIONAL_ONLY)
             for i in range(nstack)] +
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names] +
            [inspect.Parameter(f"cell_{n}", inspect.Parameter.POSITIONAL_ONLY)
             for n in func.__code__.co_cellvars])

    def _frame(self, args, make=None, traced=False):
        if self.floats:
            args = list(args)
            for i in self.floats:
                # traced: the float as a SymFloat of the graph; else its value
                a = getattr(args[i], "_t", args[i])
                args[i] = _symfloat().SymFloat(a, f"float {self._arg_name(i)}") if traced \
                    else float(a)
        stack = list(args[:self.nstack])
        for i in self.nulls:
            stack[i] = _NULL
        k = self.nstack + len(self.names)
        return _frame_for(self.func, dict(zip(self.names, args[self.nstack:k])), stack,
                          tuple(args[k:]), make)

    def _arg_name(self, i):
        return f"stack{i}" if i < self.nstack else \
            (self.names + self.func.__code__.co_cellvars)[i - self.nstack]

    def run(self, tr, args):
        """Translates the rest (tr: the Translator)."""
        fr = self._frame(args, tr._make, traced=True)
        tr.root = fr
        tr.depth = 1
        try:
            return tr._execute(fr, self.pc)
        finally:
            tr.depth = 0

    def __call__(self, *args):
        t = Translator(self.func, [], set(), set(), concrete=True)
        fr = self._frame(args)
        t.root = fr
        t.depth = 1
        return t._execute(fr, self.pc)


def _symfloat():
    from . import _symfloat
    return _symfloat


def unguard(env, tr):
    """Drops from env (a _guards._Scan) the guards the translation made
    needless: the lifted ints (inputs of the plan now), state the function
    assigned before reading it, and the length and items of a container it
    only wrote to (append, update, ...): their changes are the function's
    own, replayed on every call, never a reason to retrace."""
    roots = set()
    for kind, base, name in tr.lifted:
        roots.add((kind, id(base), name))
    roots |= _unreached(tr)
    for w in tr.unread_writes():
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
        for kind, base, k, path in under:
            if s.kind == kind and id(s.base) == base and s.key == k and \
                    s.path[:len(path)] == path and (len(s.path) > len(path) or g.kind == "len"):
                return False
        for kind, base, k, path in lifted_items:
            if s.kind == kind and id(s.base) == base and s.key == k and s.path == path:
                return False
        return True

    env.guards = [g for g in env.guards if keep(g)]


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

    def closure(names, g, cells, out):
        """The sources names reach, through the functions they hold; False
        when one holds an object whose methods may run."""
        todo = [(n, g, cells) for n in names]
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
                    return False
                vals = flat
            for v in vals:
                if isinstance(v, types.FunctionType):
                    c = v.__code__
                    more = code_names(c, set()) | set(c.co_freevars)
                    inner = dict(zip(c.co_freevars, v.__closure__ or ()))
                    todo.extend((n, v.__globals__, inner) for n in more)
                elif not (v is None or type(v) in _PLAIN or _traced(v) or _numpy_value(v) or
                          isinstance(v, (types.ModuleType, types.BuiltinFunctionType))):
                    return False  # an object whose methods may run (or a container deeper)
        return True

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
    closure(late, g, cells, after)
    seen = {k if len(k) == 3 else (k[0], k[1], None) for k in tr.read | tr.written}
    return {k for k in after - reached if k not in seen}


def lifted_now(lifted):
    """The current values of the lifted sources as 0-d int64 tensors, or
    None when one no longer holds an int (the plan does not fit)."""
    out = []
    for kind, base, name in lifted:
        try:
            v = base.cell_contents if kind == "cell" else base[name]
        except (ValueError, KeyError):
            return None
        if type(v) is not int or not -_INT_BOUND < v < _INT_BOUND:
            return None
        out.append(_C.tensor(v, dtype=_C.int64))
    return tuple(out)


_INT_BOUND = 1 << 62


def lifted_sources(fn):
    """(kind, cell or globals dict, name) of each int fn assigns to a cell or
    global: inputs of the plan, their new values outputs."""
    cells, globs = written_names(fn)
    out = []
    code = fn.__code__
    for kind, name, key in sorted(_written_items(code), key=repr):
        # d[key] = ... on a dict of a global or a cell (D["n"] = D["n"] + 1)
        try:
            d = fn.__closure__[code.co_freevars.index(name)].cell_contents \
                if kind == "cell" else fn.__globals__.get(name)
        except ValueError:
            continue
        if type(d) is dict:
            v = d.get(key)
            if type(v) is int and -_INT_BOUND < v < _INT_BOUND and \
                    all(x[1] is not d or x[2] != key for x in out):
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
