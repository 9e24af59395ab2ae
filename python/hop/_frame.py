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

The translator is seven modules, one owner each: _frame (this one: the
Translator, its interpreter loop and its calls), _frame_base (its vocabulary:
exceptions, sentinels, the frame record, a code object's instruction table,
which code is the user's), _frame_state (the state outside the frame: the
overlay of cells, globals and attributes, shadow containers, the side-effect
table and its replay, lifted ints and the guards a translation drops),
_frame_library (library objects that hold the caller's state: the calls of
a partial, a methodcaller, a getter translated, other library calls
watched), _frame_merge (a data-dependent `if` traced as one cond),
_frame_resume (graph breaks: the frame handed to Python, Break and Resume)
and _frame_concrete (what only the concrete interpreter runs, and the scan
that the code after a break is all such code).
"""

import builtins
import contextlib
import dis
import functools
import inspect
import itertools
import operator
import os
import sys
import types
import warnings

from . import _C
from . import _breaks
from . import _paths
from . import _pytree
from ._frame_base import (
    _ALLOWED, _at_line, _BreakHere, _CONST, _CONTAINERS, _CONTROL_FLOW, _DELETED,
    _finding_a_module, _Frame, _generated_library, _HANDLED, _INERT, _instructions, _INTERNAL,
    _run_by_the_collector, _watching_the_collector,
    _KINDS, _LOAD, _LOAD_CONST, _NoMerge, _NULL, _numpy_written_back, _PAUSED,
    _rows_known_at_run_time, _site, _SKIP, _static_rows, _steps_table, _Stop, _STORE, _symfloat,
    _traced, _TransGen, _TransMap, _UNBOUND, _user_function, _userish, _YIELDED, is_user_code,
    Unsupported, user_dunder)
from ._effect_tables import _BUILTIN_DUNDERS, _ORDER
from ._frame_concrete import import_from, import_name
from ._effects import KINDS as _effects_KINDS, callable_effect, inserts_missing
from ._frame_library import _Library, _NOT_MODELLED, modelled
from ._frame_merge import _Merging, _touches
from ._frame_resume import _Breaking, Resume
from ._frame_state import _MUTATORS, _ndarray_type, _Recorded, _State
from ._reads import loaded_hop_numpy
from ._symfloat import SymFloat as _SymFloat

__all__ = ["Translator"]

_ITEMS_LOOKED_AT = 64  # items of a container argument _given_objects looks at


def _given_objects(args):
    """The objects of args whose special methods a library call may run:
    each argument not the builtins', NumPy's or traced, and the items of a
    list, tuple, set or dict argument (any([b]): b.__bool__, max([p, q]):
    p.__lt__, repr([s]): s.__repr__), one of each class."""
    seen = {}
    for a in args:
        t = type(a)
        if t in (list, tuple, set, frozenset, dict):
            items = itertools.islice(itertools.chain(a, a.values()) if t is dict else a,
                                     _ITEMS_LOOKED_AT)
        else:
            items = (a,)
        for v in items:
            if type(v).__module__ not in ("builtins", "numpy") and not _traced(v):
                seen.setdefault(type(v), v)
    return seen.values()


# Iterables whose iteration runs no code of the user's (items aside).
_ITERATED_PLAINLY = (_TransGen, _TransMap, list, tuple, dict, set, frozenset, range, str, bytes)


_PURE_MANAGERS = frozenset([contextlib.nullcontext])

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
_UNARY = {"UNARY_NEGATIVE": "-", "UNARY_POSITIVE": "+", "UNARY_INVERT": "~"}
_UNARY_OPS = {"UNARY_NEGATIVE": operator.neg, "UNARY_POSITIVE": operator.pos,
              "UNARY_INVERT": operator.invert}
_COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
            ">": operator.gt, ">=": operator.ge}
_SAFE_BUILTINS = frozenset(n for n in dir(builtins) if n not in (
    "print", "input", "open", "breakpoint", "exec", "eval", "__import__", "exit", "quit", "help",
    "next", "setattr", "delattr", "globals", "locals", "vars", "iter", "compile", "__build_class__"))


_MUTABLE = (list, dict, set, bytearray)
_FORWARD_IFS = frozenset(("POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE"))
_EXACT_INT = 1 << 53  # (the ints a float64 holds exactly, every one below)


def _f64_operand(v):
    """A comparison operand as a float64 value the graph compares exactly as
    Python compares it with a float: a SymFloat's tensor, a float, a bool, an
    int a float64 holds (Python compares a larger int exactly, a float64
    tensor would round it); else None."""
    t = type(v)
    if t is _SymFloat:
        return v._t
    if t is float or t is bool or t is int and -_EXACT_INT <= v <= _EXACT_INT:
        return float(v)
    return None


def _holds_symfloat(values, depth=0):
    """Whether values (call arguments) hold a SymFloat, themselves or in the
    tuples, lists, sets and dicts among them (three deep)."""
    for v in values:
        t = type(v)
        if t is _SymFloat:
            return True
        if depth < 3 and (t is tuple or t is list or t is set or t is frozenset or t is dict) \
                and _holds_symfloat(v.values() if t is dict else v, depth + 1):
            return True
    return False


def _hop_callable(f):
    """Whether f is hop's own (hop.full, a hop.Tensor's method, hop.numpy's
    functions), which take a SymFloat as the float it stands for."""
    owner = getattr(f, "__self__", None)
    if owner is not None and (type(owner) is _C.Tensor or type(owner) is _SymFloat):
        return True
    mod = getattr(f, "__module__", None) or getattr(type(f), "__module__", None) or ""
    return mod == "hop" or mod.startswith("hop.")


def _decided_compare(a, b, op, fr, pc):
    """a <op> b of a SymFloat (float() of a traced value, a float a size
    makes) and a number or another SymFloat where instruction pc of fr, the
    next, is an `if`'s forward jump: the comparison of their float64 values
    in the graph, a traced bool the jump decides as a cond (_merge_if), so
    never a value the user's code sees.  None otherwise: the SymFloat's own
    operator, which needs its value (a graph break)."""
    ins = _instructions(fr.code)[0]
    if pc >= len(ins) or ins[pc].opname not in _FORWARD_IFS:
        return None
    x, y = _f64_operand(a), _f64_operand(b)
    if x is None or y is None:
        return None
    return _COMPARE[op](x, y)
_SHARED_WHAT = "list, dict or set the function reaches through a global or closure (the " \
    "translation keeps the argument's effects apart from the environment's)"


def shared_containers(argpaths, env_ids):
    """The path of an argument's list, dict or set that is an object of the
    function's environment (env_ids: what it reaches through globals and
    cells, held by the guards), or None.  The translation records an
    argument's changes as the argument's and reads the environment's
    object as it was: the same object under both names would read stale
    values, so such a call is not compiled (and a plan checks each call)."""
    for i, (path, v) in argpaths.items():
        if i in env_ids and type(v) in _MUTABLE and len(path) >= 2:
            where = "positional argument" if path[0] == 0 else "keyword argument number"
            return f"{type(v).__name__} in {where} {path[1]}" + \
                (f" (at {list(path[2:])})" if len(path) > 2 else "")
    return None


def repeated_containers(args, kwargs, leaves=False):
    """Where the call's arguments hold one list, dict or other mutable
    structure at two places (`f(L, L)`, `{"p": L, "q": L}`), or None.  A
    trace rebuilds the arguments' structure at each place, so the function
    would see two objects where eager sees one: a change through one name
    would not show through the other, and `a is b` would be False.  Such a
    call is not compiled (and a plan whose arguments hold containers checks
    each call).  With leaves "arrays", one hop.numpy array at two places
    too (a node rebuilt per place); with leaves True, one hop.Tensor or
    ndarray as well (hop.compile traces those as one input, _trace._aliases:
    the message of a plan traced for distinct ones)."""
    seen, todo = {}, [((0,), args), ((1,), kwargs or {})]
    while todo:
        path, v = todo.pop()
        if type(v) not in (tuple, list, dict) and _pytree._kind(type(v)) == "leaf" or \
                _pytree.is_array_node(type(v)):
            if leaves and _one_object(v, leaves) and seen.setdefault(id(v), path) != path:
                a, b = sorted([seen[id(v)], path])
                return f"one {_leaf_what(v)} at two places of its arguments " \
                       f"({_arg_place(a)} and {_arg_place(b)})"
            continue  # (hop.numpy checks arrays sharing memory itself)
        if len(path) >= 2 and not isinstance(v, tuple):  # (a tuple cannot change)
            first = seen.setdefault(id(v), path)
            if first != path:
                a, b = sorted([first, path])
                return f"one {type(v).__name__} at two places of its arguments " \
                       f"({_arg_place(a)} and {_arg_place(b)})"
        todo.extend((path + (i,), c) for i, c in enumerate(_pytree._children(v)))
    return None


def _one_object(v, leaves):
    """Whether v is an argument leaf repeated_containers looks for: a
    hop.numpy array, and with leaves True a hop.Tensor or ndarray."""
    return _pytree.is_array_node(type(v)) or \
        leaves is True and isinstance(v, (_C.Tensor, _ndarray_type()))


def _leaf_what(v):
    if isinstance(v, _C.Tensor):
        return "hop.Tensor"
    return "hop.numpy array" if _pytree.is_array_node(type(v)) else "ndarray"


def _arg_place(path):
    where = "positional argument" if path[0] == 0 else "keyword argument number"
    return f"{where} {path[1]}" + (f" at {list(path[2:])}" if len(path) > 2 else "")


class Translator(_State, _Library, _Merging, _Breaking):
    """One translation of fn for one trace: run(args, kwargs, state) returns
    (result, values of the side-effect table); effects is that table."""

    def __init__(self, fn, lifted, env_ids, effect_lines, can_break=False, concrete=False,
                 stop_at=None):
        self.fn = fn
        self.lifted = list(lifted)      # (kind, cell or globals, name): inputs (lifted_sources)
        self.env_ids = env_ids  # ids of objects that existed before the call (+ the arguments')
        self.pre = set()
        # {(basename, line): an I/O effect there} of the effects _effects found
        self.effect_lines = effect_lines
        self.effects = []
        self.drops, self.holds = [], None  # (_dropped_later, _placed_drops)
        self.cells = {}      # id(cell) -> value assigned (overlay)
        self.globs = {}      # (id(globals), name) -> value assigned
        self.attrs = {}      # (id(obj), name) -> value assigned
        self.shadows = {}    # id(real container) -> its shadow copy
        # ids of the __dict__ of objects the function did not make, as
        # `o.__dict__` handed them out: a write into one changes what o.k
        # answers, which a shadow copy would not (_State._shadow refuses)
        self.namespaces = set()
        # ids of containers whose shadow was made while an iterator or view
        # over the real one was live (_State._check_live)
        self.live_over = set()
        self.real = {}       # id(shadow) -> real container
        self.made = {}       # id -> object the function made (kept alive)
        # id -> the functions that existed before the call whose code was
        # inlined: the plan's code guard (_guards.code_reads) checks their
        # __code__
        self.inlined = {}
        # id(ndarray) and id(its hop.numpy array) -> (both) (_env_array):
        # kept across the runs of one translation, whose restarts (a write
        # that needs a write-back slot) key the slot by the array's identity
        self.env_arrays = {}
        self.env_sources = {}  # id(ndarray) -> its guard's source (_trace)
        self.read = set()    # ("cell", id) / ("global", id, name) read before written
        self.written = set()
        self.opaque_objs, self.opaque_names = set(), set()
        self.loads = {}      # id(container) -> loads not as a write-only method's receiver
        self.set_reads = {}  # id(real set) -> [loads of its shadow not as a mutator's receiver, site]
        self.error = None
        self.depth = 0
        self.root = None
        self.frames = []  # the frames of the calls being translated, outermost first
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
        self.env_numpy = False  # it read an ndarray of the environment (_env_array)
        self._cur = None
        # A _Hoist of an earlier translation: this one ends at its pc (the
        # start of the statement around a break hop cannot end the graph at)
        self.stop_at = stop_at
        self.arg_containers = False
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
        with _watching_the_collector():
            return self._run(args, kwargs, state)

    def _run(self, args, kwargs, state):
        values = [t.item() for t in state]
        from ._pytree import nodes
        self.pre = set(self.env_ids)
        self._argtree = (tuple(args), dict(kwargs or {}))  # kept: its ids stay taken
        self.argpaths = nodes(self._argtree)
        # (whether an argument holds a container: _compile._Entry.run checks
        # those against the environment on every call; not the call's own
        # keyword dict, a root as the positional tuple is: shared_containers
        # looks at paths of two or more steps)
        self.arg_containers = any(type(v) in _MUTABLE and len(path) >= 2
                                  for path, v in self.argpaths.values())
        self.pre.update(self.argpaths)
        hnp = loaded_hop_numpy()
        # NumPy semantics: hop's float reductions may differ from NumPy's in
        # the last bit, which a conversion, a printed or a stored value would
        # show; Python gets only values with NumPy's bits (_exact)
        self.numpy_mode = hnp is not None and \
            any(isinstance(v, hnp.ndarray) for _, v in self.argpaths.values())
        self.env_numpy = False  # it read an ndarray of the environment (_env_array)
        self.read, self.written, self.loads = set(), set(), {}
        self.set_reads = {}
        self.opaque_objs, self.opaque_names = set(), set()  # (opaque_call)
        self.error = None
        self._cur = None
        self.effects = []
        self.drops, self.holds = [], None  # (_dropped_later, _placed_drops)
        self.cells.clear()
        self.globs.clear()
        self.attrs.clear()
        self.shadows.clear()
        self.namespaces.clear()
        self.live_over = set()
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
            elif kind == "attr":
                self.attrs[(id(base), name)] = v
                self._attr_objs[id(base)] = base
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
        done = False
        trace = _C.tracing()
        taker = None if trace is None else trace.scratch.get(_breaks.WARN)
        if trace is not None:
            trace.scratch[_breaks.WARN] = self._library_warning
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
            if self.drops:
                self.holds = self._placed_drops()
            done = True
        except _Stop as st:
            self._no_drops_past(st.snap)
            out = self._stopped(st)
            done = True
        finally:
            _C._call_guard(None)
            if old is not None and callable(old):
                sys.setprofile(old)  # a Python-level profiler the guard displaced
            if trace is not None:
                trace.scratch[_breaks.WARN] = taker
            if not done:
                # what is raised is the caller's now: kept, the error's
                # traceback would hold the translator (a cycle for the gc)
                self.error = None
        err, self.error = self.error, None
        if err is not None:
            # (the translator's error, which code it ran caught: taken off
            # the translator and dropped as it unwinds, for the same reason)
            try:
                raise err
            finally:
                del err
        self._set_order_unread()
        self._generators_left_open()
        out = self._unshadow(out)
        values = tuple(self._unshadow(e.values) for e in self.effects)
        return out, values

    def release(self):
        """Drops what this translation holds of the call's objects once its
        plan is made (_compile._translate): the shadow copies, the objects
        the function made, the arguments, the overlays and the frames.  The
        compile cache keeps the translator for its effect table, lifted ints
        and break; before, it kept these too, so an object the function
        dropped (`HOLD.pop()` of a global list, whose shadow still held the
        item) or made lived as long as the plan, and its __del__ or
        weakref.finalize ran late or never, where eager's runs at once."""
        for d in (self.shadows, self.real, self.made, self.cells, self.globs, self.attrs,
                  self.loads, self.set_reads, self.items):
            d.clear()
        self.namespaces, self.live_over, self.opaque_objs = set(), set(), set()
        self.drops = []
        self._cell_objs, self._glob_objs, self._attr_objs = [], {}, {}
        self._argtree, self.argpaths = ((), {}), {}
        self.root, self._cur, self.frames = None, None, []

    def _check_class(self, cls):
        """Unsupported for a class whose instances the translation cannot
        make as eager does: a metaclass of the user's with __call__ (it runs
        on every instantiation), or a __del__ of the user's (eager runs it
        when each call's object dies; the translation's object is made once)."""
        meta = type(cls).__call__
        if meta is not type.__call__ and _user_function(meta):
            self._fail(f"{cls.__qualname__}() runs its metaclass's __call__ "
                       f"({type(cls).__qualname__}), which the translator does not follow")
        d = getattr(cls, "__del__", None)
        if _user_function(d):
            self._fail(f"{cls.__qualname__} has a __del__ of the user's: eager runs it when "
                       f"each call's object dies, the translation makes its objects once")

    def _generators_left_open(self):
        """Unsupported when a generator of the user's the function started
        is left suspended inside a try, with or finally block: eager closes
        it when it dies (GeneratorExit there runs that code on every call);
        the translation never does."""
        for g in self.made.values():
            if type(g) is _TransGen and not g.done and g.pc > 0 and \
                    g.fr.code.co_exceptiontable:
                raise Unsupported(f"the generator {g.fr.code.co_qualname} is left suspended "
                                  f"where closing it runs its own code (a try, with or finally "
                                  f"block)", _site(g.fr.code, g.fr.line))

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
        if _paths._in_body() or self.error is not None or \
                _C._trace_depth() > self.trace_depth:
            # a HOP body or a transformation's function (hop.grad(f)) that hop
            # traces in a nested tracer: one graph, checked pure as today
            return
        if _finding_a_module(frame):
            return  # an import while translating (hop and NumPy import lazily)
        if _run_by_the_collector(frame):
            return  # a gc callback of the user's (and what it calls), run by a collection
        self.error = Unsupported(f"{code.co_qualname} is called by library code hop runs "
                                 f"directly (an operator, property or callback of the user's), "
                                 f"which the translator cannot follow", _site(code, frame.f_lineno))
        raise self.error

    def _fail(self, message, fr=None, brk=None):
        fr = fr or self._cur
        if fr is not None:
            where = _site(fr.code, fr.line)
        else:  # (before the first frame: the function itself, a generator function's)
            code = getattr(self.fn, "__code__", None)
            where = _site(code, code.co_firstlineno) if code is not None else "?"
        err = Unsupported(message, where)
        err.brk = brk  # the instruction, when this is a graph break not taken
        if self.error is None:
            self.error = err
        try:
            raise err
        finally:
            del err  # (its traceback holds this frame: a cycle for the gc)

    def _missing_key(self, obj, k):
        """`obj[k]` of a dict subclass obj: a key it lacks runs its
        __missing__, which for a defaultdict calls the default factory and
        inserts its value into the user's dict then and there, while the
        trace runs (a default made by np.zeros was hop's array, a traced
        value escaped into the dict, and the plan replayed no insertion on
        later calls): the function runs eagerly.  Counter's __missing__
        answers 0 and changes nothing."""
        if not inserts_missing(obj):
            return
        try:
            missing = k not in obj
        except Exception:  # (an unhashable or traced key: __missing__ may run)
            missing = True
        if missing:
            self._fail(f"a read of a key a {type(obj).__name__} lacks (its __missing__ runs "
                       f"code, which a defaultdict's inserts a value made then: an effect hop "
                       f"cannot replay)")

    # --------------------------------------------------------------- calls

    def _call_function(self, f, args, kwargs):
        if self.concrete:
            if f is warnings.warn:
                return self._warn(args, kwargs)
            return _at_line(self._cur, "call")(f, args, kwargs)
        if isinstance(f, types.MethodType) and _user_function(f.__func__):
            return self._inline(f.__func__, (f.__self__,) + args, kwargs)
        if _user_function(f):
            return self._inline(f, args, kwargs)
        if f is operator.getitem and len(args) == 2 and not kwargs:
            self._missing_key(args[0], args[1])
        elif isinstance(f, types.BuiltinMethodType) and f.__name__ == "__getitem__" and \
                len(args) == 1 and not kwargs:
            self._missing_key(f.__self__, args[0])
        if isinstance(f, _Recorded):
            real, shadow, name = f.real, f.shadow, f.name
            if name == "pop" and type(real) is set:
                self._fail("set.pop() of a set that existed before the call: the element it "
                           "takes is the one first in the set's table, which hop's copy of the "
                           "set does not share")
            out = getattr(shadow, name)(*args, **kwargs)
            self._record("call", real, name, (args, tuple(kwargs.items())),
                         f"{type(real).__name__}.{name}()")
            self._dropped_later(out)
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
        if (f is len or f is sorted or f is min or f is max or f is set or f is frozenset) \
                and len(args) == 1 and not kwargs:
            # (a set's answer in any iteration order; no key, whose ties keep
            # the order met)
            self._set_order_free(args[0])
        if f is builtins.print:
            return self._print(args, kwargs)
        if f is warnings.warn:
            return self._warn(args, kwargs)
        got = self._library_call(f, args, kwargs)
        if got is not _NOT_MODELLED:
            return got
        call = getattr(type(f), "__call__", None)
        if not isinstance(f, type) and _user_function(call):
            return self._inline(call, (f,) + args, kwargs)  # a callable object of the user's
        if isinstance(f, type) and not self.concrete:
            self._check_class(f)
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
        if not self.concrete:
            self._user_dunders(f, args, kwargs)
        fr = self._cur
        if fr is not None and self.effect_lines and \
                (os.path.basename(fr.code.co_filename), fr.line) in \
                self.effect_lines and not self._safe(f):
            io = self.effect_lines[(os.path.basename(fr.code.co_filename), fr.line)]
            raise _BreakHere(f"{getattr(f, '__qualname__', type(f).__name__)}() may change "
                             f"state hop cannot see (a Python effect on this line)", self.depth,
                             in_loop=not io)
        if f is globals and not args and not kwargs:
            return self._globals(fr)
        if (f is locals or f is vars or f is dir) and not args and not kwargs:
            return self._locals(fr) if f is not dir else self._make(sorted(self._locals(fr)))
        if f is id and len(args) == 1 and not self.concrete and id(args[0]) in self.made:
            # (the translation's object is not the call's: its id would be a
            # constant of every call, and after a break, where the call's
            # own object lives on, another object's: `seen[id(o)]` raised
            # KeyError where eager answers)
            raise _BreakHere("id() of an object the function made: its identity is each "
                             "call's own", self.depth)
        if f is isinstance and len(args) == 2 and not kwargs:
            return self._isinstance(*args)
        if (f is map and len(args) >= 2 or f is filter and len(args) == 2) and not kwargs and \
                not self.concrete and (_userish(args[:1]) or modelled(args[0])) and \
                not _userish([a for a in args[1:] if type(a) not in _ITERATED_PLAINLY]):
            # (the user's function translated at each next(), as a generator's frame;
            # a list of the user's objects is iterated without their code: what
            # f does with them is translated, attrgetter("v")(o) as o.v)
            return self._make(_TransMap(self, args[0], args[1:], f is filter))
        if (f is _C.tensor or f is _C.asarray) and args and self.env_arrays:
            # hop.tensor(G) of an environment ndarray: G itself, as eagerly;
            # the plain trace's capture over G's memory (no copy in the plan)
            hit = self.env_arrays.get(id(args[0]))
            if hit is not None and hit[1] is args[0]:
                args = (hit[0],) + tuple(args[1:])
        return self._library(f, args, kwargs)

    def _library(self, f, args, kwargs):
        """A call of library code, run for real (watched: _native): never
        one of I/O, the clock or random numbers, nor one handed such a
        callable (it would happen once, here): a break."""
        what = callable_effect(f)
        if what is not None:
            # (an I/O call the effect finder did not see: never run here,
            # once, while translating)
            raise _BreakHere(f"{what[1]} {_effects_KINDS[what[0]]}: it runs in Python on "
                             f"every call", self.depth, in_loop=False)
        for a in tuple(args) + tuple(kwargs.values()):
            what = callable_effect(a)
            if what is not None:
                # (library code given print: it would print once, here)
                raise _BreakHere(f"{getattr(f, '__qualname__', type(f).__name__)}() is given "
                                 f"{what[1]}, whose calls hop cannot see inside it (the call "
                                 f"runs in Python on every call)", self.depth, in_loop=False)
        if _holds_symfloat(tuple(args) + tuple(kwargs.values())) and not _hop_callable(f):
            # (NumPy takes an object it does not know for an object: np.array([s])
            # an object array holding the SymFloat, not its value)
            raise _BreakHere(f"{getattr(f, '__qualname__', type(f).__name__)}() is given a "
                             f"float known only when the program runs (a SymFloat), which "
                             f"only hop's functions take: it runs in Python on every call",
                             self.depth)
        self.opaque_call(f, args, kwargs)
        # (np.zeros(3), np.mean([...]) called by the user's code: hop.numpy's
        # wrapper of it answers as when the user's code calls it itself)
        creation = sys.modules.get("hop.numpy._creation") \
            if getattr(f, "__hop_original__", None) is not None else None
        try:
            if creation is not None:
                creation.for_user(f)
            if (self.cells or self.globs or self.attrs or self.items) and \
                    not isinstance(f, (types.BuiltinFunctionType, types.BuiltinMethodType, type)):
                out = self._materialized(f, args, kwargs)
            else:
                out = self._native(f, args, kwargs)
            if self.gen_break is not None:
                self._fail(f"{getattr(f, '__qualname__', type(f).__name__)}() caught a graph "
                           f"break of a generator it consumed ({self.gen_break.message})")
        except _breaks.GraphBreak as b:
            tr = _C.tracing()
            if tr is not None:  # the translator's to handle: a break or Unsupported
                tr.scratch.pop(_breaks._KEY, None)
            raise _BreakHere(b.message, self.depth) from None
        finally:
            if creation is not None:
                creation.for_user(None)
        if isinstance(f, type) and not _traced(out):
            self._make(out)
        self.made_arrays(out)
        return self._sub(out)

    def _print(self, args, kwargs):
        for a in list(args) + list(kwargs.values()):
            if not _printable(a):
                raise _BreakHere(f"print() of a {type(a).__name__}: hop replays print() "
                                 f"of numbers, strings and traced values", self.depth)
        if set(kwargs) - {"sep", "end"}:
            raise _BreakHere("print() with file= or flush=", self.depth)
        self._record("print", None, None, (args, tuple(kwargs.items())), "print()")

    def _warn(self, args, kwargs):
        """warnings.warn(message, category=None, stacklevel=1, source=None),
        given where eager's call would give it: at the frame stacklevel - 1
        calls out of this one.  Translated, recorded (the place fixed now,
        the frame one the translation follows); each call's replay gives it
        there (_paths.warn_at), after the plan, in program order.
        Concrete (the Python run of a break), given now, at that place (the
        call from here would name the translator's own line)."""
        try:
            message, category, stacklevel, source = _warn_arguments(*args, **kwargs)
        except TypeError as e:
            if self.concrete:
                return warnings.warn(*args, **kwargs)  # (eager's TypeError)
            self._fail(f"warnings.warn() with arguments it does not take ({e})")
        if isinstance(message, Warning):
            category = type(message)
        elif category is None:
            category = UserWarning
        if not (isinstance(category, type) and issubclass(category, Warning)) or \
                source is not None or type(stacklevel) not in (int, bool):
            if self.concrete:
                return warnings.warn(*args, **kwargs)  # (eager's error; source= read as eager's)
            self._fail("warnings.warn() with a category that is not a Warning subclass, "
                       "source= or a stacklevel that is not an int")
        if not self.concrete and not (
                type(message) is str or isinstance(message, Warning) and
                type(message).__module__ == "builtins" and
                all(type(a) in (str, int, float, bool) for a in message.args)):
            # (a traced value's text, an object of the user's: the call
            # runs in Python, with real values)
            raise _BreakHere(f"warnings.warn() of a {type(message).__name__}: hop replays "
                             f"warnings whose message is a string, or a built-in Warning of "
                             f"strings and numbers", self.depth)
        chain = list(self.frames)
        if self.root is not None and (not chain or chain[0] is not self.root):
            chain.insert(0, self.root)  # (a resume's root, run without _call)
        if not chain or self._cur is not chain[-1]:
            self._fail("warnings.warn() in a generator's frame")
        at = len(chain) - max(int(stacklevel), 1)
        if at >= 0:
            fr = chain[at]
            where = (fr.code.co_filename, fr.line, getattr(fr.func, "__globals__", None))
            if type(where[2]) is not dict:
                self._fail("warnings.warn() from a frame whose globals hop does not know")
        else:
            where = -at - 1  # (a frame of the compiled function's caller: found on each call)
        if self.concrete:
            return _paths.warn_at(message, category, where)
        self._record("warn", None, (message, category, where), (), "warnings.warn()")

    def _library_warning(self, message, category, where):
        """Takes a warning hop.numpy gives while the translation runs the
        function's own code (_breaks.replayed_warning): recorded at where
        (NumPy's own line), else the user's line that called it, as
        warnings.warn(stacklevel=2) of the library function names it;
        False where it cannot be (a side of an `if`: then a break, as any
        effect there)."""
        fr = self._cur
        if where is None and fr is not None:
            where = (fr.code.co_filename, fr.line, getattr(fr.func, "__globals__", None))
        if self._opaque is not None or self.concrete or where is None or \
                type(where[2]) is not dict:
            return False
        self._record("warn", None, (message, category, where), (),
                     f"hop.numpy's {category.__name__}")
        return True

    def _decided_float(self, fr, pc, v, stack):
        """float(v) at the CALL before instruction pc of fr, where v is a
        traced one-element real hop.Tensor and the float's one use is an
        `if` on its comparison with a number (`if float(y.sum()) > tol:`,
        `if tol < float(s):`): a SymFloat over v as float64 (as Python's
        float() of its item: exact for a float or a bool, the nearest double
        for an int), which _decided_compare turns into a traced bool the
        `if` decides as a cond.  The user's code never sees it.  None
        otherwise: float() ends the compiled part, as always (a SymFloat the
        code could hand anywhere would need its value at places hop cannot
        all see)."""
        if not self.can_break or type(v) is not _C.Tensor or not _C._is_proxy(v) or \
                v.dtype in (_C.complex64, _C.complex128) or \
                any(type(d) is not int or d != 1 for d in v.shape):
            return None
        ins = _instructions(fr.code)[0]
        nxt = [x.opname for x in ins[pc:pc + 3]]
        if nxt[:1] == ["COMPARE_OP"] and len(nxt) > 1 and nxt[1] in _FORWARD_IFS:
            other = stack[-1] if stack else None  # (the comparison's left operand)
        elif nxt[1:2] == ["COMPARE_OP"] and len(nxt) > 2 and nxt[2] in _FORWARD_IFS:
            other = self._loaded(fr, ins[pc])  # (the right operand, loaded next)
        else:
            return None
        if _f64_operand(other) is None or type(other) is _SymFloat:
            return None
        return _SymFloat(v.reshape(()).to(_C.float64), "float(tensor)")

    def _globals(self, fr):
        """globals() in the code of frame fr: its function's module dict (a
        call from here would give hop's).  Where the translation assigns or
        lifts a global of that dict, the dict does not show what hop
        replays after the plan (`'Z' in globals()`, `globals().get('Z')`
        after `Z = Z + 1`): hop cannot compile that yet (eager runs it)."""
        g = fr.func.__globals__
        if any(key[0] == id(g) for key in self.globs) or \
                any(ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL")
                    for ins in _instructions(fr.code)[0]):
            self._fail("globals() in a function that assigns globals (the dict would not "
                       "show the assignments hop replays after the plan)")
        return g

    def _locals(self, fr):
        """locals() (vars()) in the code of frame fr: a new dict of its bound
        variables in CPython 3.11's order (co_varnames, then its cells, then
        its free variables); a call from here would give the interpreter's
        own locals (before the fifty-first session, `self`, `f`, `args`)."""
        code = fr.code
        out = {}
        for n in code.co_varnames + tuple(n for n in code.co_cellvars
                                          if n not in code.co_varnames) + code.co_freevars:
            if n in fr.cells:
                try:
                    out[n] = self._load_cell(fr, n)
                except NameError:  # (an empty cell: not in locals(), as eagerly)
                    continue
            else:
                v = fr.fast.get(n, _UNBOUND)
                if v is not _UNBOUND:
                    out[n] = v
        return self._make(out)

    def _loaded(self, fr, i):
        """What instruction i of frame fr, a LOAD_CONST, or a LOAD_FAST or
        LOAD_DEREF of a bound name, will push, as it stands now (the next
        instruction, so nothing runs between); else None."""
        if i.opname == "LOAD_CONST":
            return i.argval
        if i.opname == "LOAD_FAST":
            return fr.fast.get(i.argval)
        if i.opname == "LOAD_DEREF" and i.argval in fr.cells:
            try:
                return self._load_cell(fr, i.argval)  # (the read its own load makes next)
            except NameError:  # (an unbound cell: the load raises it)
                return None
        return None

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

    def _user_dunders(self, f, args, kwargs):
        """A builtin, NumPy, math or operator function run for real on an
        object whose class has a special method of the user's (float(v):
        v.__float__, list(v): __iter__, np.asarray(v): __array__) would run
        that method once, while translating, where the translator cannot
        see its effects (a log it appends to, an array it caches: hop's, as
        made in a trace): a break, so the call runs in Python on every
        call."""
        names = None  # (any special method: NumPy, math, operator)
        if isinstance(f, types.BuiltinMethodType) and type(f.__self__) is list and \
                f.__name__ == "sort":
            # (`xs.sort()` of a list the function made: its items' order
            # methods; before, C.__lt__ ran once, while translating)
            names, args = _ORDER, (f.__self__,) + tuple(args)
        elif isinstance(f, (types.BuiltinFunctionType, type)) and \
                getattr(f, "__self__", builtins) in (builtins, None):
            names = _BUILTIN_DUNDERS.get(getattr(f, "__name__", None))
            if names is None or f is not getattr(builtins, f.__name__, None):
                return
        elif not (getattr(f, "__module__", None) or "").startswith(("numpy", "math",
                                                                     "_operator", "operator")) \
                and not (type(f).__module__ == "numpy" and type(f).__name__ == "ufunc"):
            return
        for a in _given_objects(tuple(args) + tuple(kwargs.values())):
            what = user_dunder(a, names)
            if what is not None:
                raise _BreakHere(f"{getattr(f, '__qualname__', type(f).__name__)}() of a "
                                 f"{type(a).__qualname__} runs {what}, whose effects hop cannot "
                                 f"see there (the call runs in Python on every call)",
                                 self.depth)

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
            # (and the library objects _library_call translates the calls of)
            return f in (list, tuple, dict, set, frozenset, int, float, bool, str, complex,
                         range, slice, zip, enumerate, reversed, map, filter, functools.partial,
                         operator.methodcaller, operator.attrgetter, operator.itemgetter)
        mod = getattr(f, "__module__", None) or ""
        return mod.startswith("hop") and not mod.startswith("hop.numpy")

    def _inline(self, func, args, kwargs):
        code = func.__code__
        if id(func) not in self.made:
            self.inlined[id(func)] = func
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
            # (a default that is an ndarray: hop.numpy's array over it, as
            # any load of one; _execute's LOAD_FAST does not look)
            fast = {k: self._sub(v) if type(v) is _ndarray_type() else v
                    for k, v in bound.arguments.items()}
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
        self.frames.append(fr)
        try:
            return self._execute(fr)
        finally:
            self.frames.pop()
            self.depth -= 1
            self._cur = saved

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
        ins, at, handlers, _, _, _ = _instructions(fr.code)
        table = _steps_table(fr.code, _step_for)
        stack = fr.stack
        push, pop = stack.append, stack.pop
        lo, n = region if region is not None else (0, len(ins))
        self._cur = fr
        root = fr is self.root and self.can_break
        stop_at = self.stop_at.pc if root and self.stop_at is not None else -1
        # Fixed while this loop runs (each is set before an _execute and
        # restored after it), so read once: the loop's own work for each
        # instruction is most of what hop.compile's first call costs
        pause_at = self.pause_at if root else None
        watch = pause_at is not None or stop_at >= 0
        empties = self.empties
        bounded = steps >= 0 or until is not None
        check = not self.concrete and not self.guarded
        concrete = self.concrete
        opaque = self._opaque
        inert = _INERT
        fast = fr.fast  # (a frame's dict is never replaced while it runs)
        # _LOAD_CONST's second instruction run with its first: not where a
        # run counts its instructions or stops at one, nor in an `if`'s side
        pairs = not bounded and not watch and region is None
        snap = None
        while pc < n:  # (and pc >= lo: checked where pc moves back)
            if bounded:
                if steps == 0 or until is not None and pc > until and not stack:
                    fr.pc = pc
                    return _PAUSED
                steps -= 1
            kind, arg, rest = table[pc]
            if root:
                if not stack:
                    empties.add(pc)
                if watch and (pc == pause_at or pc == stop_at):
                    return self._watched(fr, pc, pause_at)
            pc += 1
            if kind:  # the commonest instructions run here, without a call
                # (nothing they do reads fr.line: it is set for the others)
                if kind == _LOAD_CONST:
                    v = fast.get(arg[0], _UNBOUND)
                    if v is not _UNBOUND and type(v) not in _CONTAINERS:
                        push(v)
                        if pairs:  # (its stack is never empty: nothing to note)
                            push(arg[1])
                            pc += 1
                        continue
                elif kind == _LOAD:
                    v = fast.get(arg, _UNBOUND)
                    if v is not _UNBOUND and type(v) not in _CONTAINERS:
                        push(v)
                        continue
                elif kind == _STORE:
                    fast[arg] = pop()
                    continue
                elif kind == _CONST:
                    push(arg)
                    continue
                elif kind == _SKIP:
                    continue
                elif rest[1] == "POP_EXCEPT" or not self.concrete:
                    fr.line = rest[2]
                    got = self._rare(fr, rest[1], pc, push, pop, handling)
                    if got is not None:
                        return got
                    continue
            i, op, line, k, brk, step = rest
            fr.line = line
            if brk and root:  # its state before it (read only where brk is: _BreakHere)
                snap = (pc - 1, list(stack), dict(fast), fr.kwnames, len(self.effects))
            if k and opaque and _touches(stack[len(stack) - k:], opaque):
                self._fail_opaque(fr, op)
            try:
                # (_userish, with its commonest answer first: one or two
                # plain operands hand CPython nothing of the user's)
                if k and check and (k > 2 or type(stack[-1]) not in inert or
                                    k == 2 and type(stack[-2]) not in inert) and \
                        _userish(stack[len(stack) - k:]):
                    pc = self._guarded_step(step, fr, i, op, pc, at, stack, push, pop)
                elif op == "BINARY_OP" and not concrete:
                    # (_step's, without the call: the commonest; concrete:
                    # _binary's, at the user's line)
                    b = pop()
                    a = pop()
                    # (a new value's operator, from here: ACTS_FOR_USER as _binary)
                    push(_BINARY[arg](a, b) if arg < 13 else self._binary(arg, a, b))
                else:
                    pc = step(self, fr, i, op, pc, at, stack, push, pop)
            except _BreakHere as b:
                self._broke(fr, b, root, pc, op, snap if brk else None)
            except _INTERNAL:
                raise
            except BaseException as e:  # noqa: B036 (the function's own exception table)
                h = self._handler(fr, e, handlers.get(pc - 1))
                if h is None:
                    raise  # (a bare raise: no frame of hop's holds e, no cycle)
                got = self._handle(fr, e, h, ins[pc - 1].offset)
                if got is not _HANDLED:
                    return got
                pc = fr.pc
                if steps >= 0:
                    # the one instruction of a break raised: on until the
                    # statement after the handler is done
                    steps, until, bounded = -1, pc, True
            if pc < lo:
                if pc < 0:
                    return stack.pop()
                break
        return self._ran_out(fr, pc, n, region)

    def _watched(self, fr, pc, pause_at):
        """_execute of the root frame at pc, its pause_at or hop.compile's
        stop_at: _PAUSED there (fr.pc pc), or _Stop for the retranslation of
        a break hop.compile hoisted to pc."""
        if pc == pause_at:
            fr.pc = pc
            return _PAUSED
        raise _Stop((pc, list(fr.stack), dict(fr.fast), fr.kwnames, len(self.effects)),
                     self.stop_at.message, self.stop_at)

    def _fail_opaque(self, fr, op):
        raise _NoMerge(f"uses an iterator or object made before the `if` that hop cannot "
                       f"restore for the other side ({op} at {_site(fr.code, fr.line)})")

    def _ran_out(self, fr, pc, n, region):
        """_execute left its loop at pc without returning: _PAUSED at the
        join of an `if`'s side (region), else the side jumped out of it
        (_NoMerge) or the code fell off its end."""
        if region is not None:
            if pc == n:
                fr.pc = pc
                return _PAUSED
            raise _NoMerge(f"jumps out of the `if` (a break, a continue or a loop's end at "
                           f"{_site(fr.code, fr.line)})")
        self._fail("fell off the end of the code")

    def _rare(self, fr, op, pc, push, pop, handling):
        """_execute's POP_EXCEPT, and a translated generator's YIELD_VALUE and
        RETURN_GENERATOR: what _execute returns, or None to go on."""
        if op == "POP_EXCEPT":
            fr.handling = pop()
            if handling:
                fr.pc = pc
                return _HANDLED
            return None
        if op == "YIELD_VALUE":
            fr.pc = pc  # the value on top: _TransGen's
            return _YIELDED
        push(None)  # RETURN_GENERATOR (popped by the POP_TOP after it)
        return None

    def _broke(self, fr, b, root, pc, op, snap):
        """The instruction before pc raised _BreakHere b: the root frame
        breaks there (snap: its state before the instruction); an inlined
        call re-raises it for the root frame to break at its call, with the
        site inside; a frame that cannot break fails."""
        self.gen_break = None
        if not root:
            if self.can_break and fr is not self.root and not self.concrete:
                # in an inlined call: the root frame breaks at its call
                if not b.in_loop and b.loop is None and \
                        any(t <= pc - 1 <= j for t, j in _instructions(fr.code)[5]):
                    # (the root frame's statement calling it runs in Python
                    # where CPython can run it: _Breaking._break decides)
                    b.loop = f"{b.message}, inside a loop of {fr.code.co_qualname}: the call " \
                             f"runs eagerly, as CPython runs the loop faster than hop's " \
                             f"concrete interpreter would (CPython cannot run the statement " \
                             f"calling it as a region of its own)"
                if b.site is None:
                    b.site, b.opname = _site(fr.code, fr.line), op
                    b.func = fr.code.co_qualname
                raise b
            self._fail(b.message, fr, brk=op if b.depth == self.depth else None)
        self._break(fr, b, pc - 1, op, snap)

    def _guarded_step(self, step, fr, i, op, pc, at, stack, push, pop):
        """step (_step_for(op)) where CPython may run the user's code
        (_userish operands): under the call guard, on until this instruction
        is done (a generator of the user's that library code consumes runs
        its own instructions meanwhile, _TransGen)."""
        _C._call_guard(self._check, _ALLOWED)
        self.guarded = True
        try:
            return step(self, fr, i, op, pc, at, stack, push, pop)
        finally:
            _C._call_guard(None)
            self.guarded = False

    def _handler(self, fr, e, h):
        """Concrete: h, the handler of fr's exception table for e, which an
        instruction of fr raised; None: e leaves fr, placed (_leaving).  A
        translation's error leaves as it is: the eager call decides
        (_compile._eager_after)."""
        if not self.concrete:
            return None
        if getattr(fr, "raised", (0,))[0] != id(e):  # (id: no cycle through e)
            fr.raised = (id(e), fr.line)  # (where it first left an instruction of fr)
        if h is None:
            _leaving(fr, e)
        del e  # (see _placed)
        return h

    def _handle(self, fr, e, h, offset):
        """Concrete: runs the handler h (target, stack depth, push lasti) of
        fr's exception table for e, raised by the instruction at offset, in
        a nested _execute called inside the caller's `except`, so that
        sys.exc_info() is eager's: _HANDLED at its POP_EXCEPT (fr.pc the
        next instruction), else what the frame returned."""
        target, depth, lasti = h
        _root_at_place(fr, e)
        del fr.stack[depth:]
        if lasti:
            fr.stack.append(offset)
        fr.stack.append(e)
        del e  # (see _placed)
        got = self._execute(fr, target, -1, None, True)
        if got is _HANDLED:
            self._cur = fr
        return got

    def _step(self, fr, i, op, pc, at, stack, push, pop):
        """Runs one instruction: the next pc (-1: returned, the value on
        top of the stack).  Loads, calls and returns run here, the others
        in one method per family of opcodes (_STEPS).  _execute calls each
        instruction's method directly (_step_for, from its table), so no
        instruction walks another family's chain; here an instruction of
        a family goes on to its method.  (_execute runs STORE_FAST and
        LOAD_CONST itself, and LOAD_FAST and BINARY_OP where it can.)"""
        if op == "LOAD_FAST":
            v = fr.fast.get(i.argval, _UNBOUND)
            if v is _UNBOUND:
                raise UnboundLocalError(f"cannot access local variable {i.argval!r} where it "
                                        f"is not associated with a value")
            push(self._sub(v))
        elif op == "BINARY_OP":
            b = pop()
            a = pop()
            push(self._binary(i.arg, a, b))
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
            got = self._decided_float(fr, pc, args[0], stack) \
                if f is float and len(args) == 1 and not kw else None
            push(self._call_function(f, tuple(args), kw) if got is None else got)
            self._cur = fr
        elif op == "LOAD_GLOBAL":
            if i.arg & 1:
                push(_NULL)
            push(self._load_global(fr, i.argval))
        elif op == "LOAD_ATTR":
            push(self._getattr(pop(), i.argval))
        elif op == "LOAD_METHOD":
            obj = pop()
            push(_NULL)
            push(self._load_method(obj, i.argval))
        elif op == "PUSH_NULL":
            push(_NULL)
        elif op == "KW_NAMES":
            fr.kwnames = fr.code.co_consts[i.arg]
        elif op == "RETURN_VALUE":
            return -1
        elif op == "POP_TOP":
            pop()
        else:
            step = _STEPS.get(op)
            if step is None:
                self._fail(f"the instruction {op} is not translated yet")
            return step(self, fr, i, op, pc, at, stack, push, pop)
        return pc

    def _step_store(self, fr, i, op, pc, at, stack, push, pop):
        """_step for stores, deletes, cells (a cell's load first: the commonest)."""
        if op == "LOAD_DEREF" or op == "LOAD_CLASSDEREF":
            push(self._load_cell(fr, i.argval))
        elif op == "DELETE_FAST":
            if fr.fast.pop(i.argval, _UNBOUND) is _UNBOUND:
                raise UnboundLocalError(f"cannot access local variable {i.argval!r} where it "
                                        f"is not associated with a value")
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
        elif op == "STORE_DEREF":
            self._store_cell(fr, i.argval, pop())
        elif op == "DELETE_DEREF":
            self._store_cell(fr, i.argval, _DELETED)
        elif op == "STORE_ATTR":
            obj = pop()
            self._store_attr(obj, i.argval, pop())
        elif op == "DELETE_ATTR":
            self._store_attr(pop(), i.argval, _DELETED)
        elif op == "STORE_SUBSCR":
            k = pop()
            obj = pop()
            self._store_item(obj, k, pop())
        elif op == "DELETE_SUBSCR":
            k = pop()
            self._store_item(pop(), k, _DELETED)
        else:
            self._fail(f"the instruction {op} is not translated yet")
        return pc

    def _step_compare(self, fr, i, op, pc, at, stack, push, pop):
        """_step for COMPARE_OP (a loop's `i == n`: common enough for its own)."""
        b = pop()
        if self.concrete:
            push(_at_line(fr, i.argval)(pop(), b))
            return pc
        a = pop()
        decided = _decided_compare(a, b, i.argval, fr, pc) if \
            self.can_break and _SymFloat in (type(a), type(b)) else None
        push(_COMPARE[i.argval](a, b) if decided is None else decided)
        return pc

    def _step_value(self, fr, i, op, pc, at, stack, push, pop):
        """_step for operators on the stack's values."""
        if op == "CALL_FUNCTION_EX":
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
            obj = pop()
            if not self.concrete and type(obj) is not dict and isinstance(obj, dict):
                self._missing_key(obj, k)
            push(self._sub(_at_line(fr, "getitem")(obj, k) if self.concrete else obj[k]))
        elif op == "BUILD_SLICE":
            args = [pop() for _ in range(i.arg)][::-1]
            push(slice(*args))
        elif op == "IS_OP":
            b = pop()
            r = pop() is b
            push(r != bool(i.arg))
        elif op == "CONTAINS_OP":
            b = pop()
            self._set_order_free(b)
            r = _at_line(fr, "in")(pop(), b) if self.concrete else pop() in b
            push(r != bool(i.arg))
        elif op in _UNARY:
            push(_at_line(fr, _UNARY[op])(pop()) if self.concrete else _UNARY_OPS[op](pop()))
        elif op == "UNARY_NOT":
            push(not self._truth(pop()))
        elif op == "BEFORE_WITH":
            push(self._before_with(pop()))
            self._cur = fr
        elif op == "IMPORT_NAME" and self.concrete:
            # (the translator refuses an import: the function runs eagerly;
            # after a break, the rest runs it as CPython: _frame_concrete)
            fromlist = pop()
            push(import_name(fr, i.argval, fromlist, pop()))
        elif op == "IMPORT_FROM" and self.concrete:
            push(import_from(stack[-1], i.argval))
        else:
            self._fail(f"the instruction {op} is not translated yet")
        return pc

    def _step_build(self, fr, i, op, pc, at, stack, push, pop):
        """_step for containers and strings built and taken apart."""
        if op == "BUILD_TUPLE":
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
            if not self.concrete and type(v).__module__ not in ("builtins", "numpy") and \
                    user_dunder(v) is not None:
                raise _BreakHere(f"an f-string of a {type(v).__qualname__} runs "
                                 f"{user_dunder(v)}, whose effects hop cannot see there",
                                 self.depth)
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
                dup = next((k for k in v if k in d), _UNBOUND)
                if dup is not _UNBOUND:  # (CPython's text: the callee, the first repeat)
                    raise TypeError(f"{_function_str(stack[-2 - i.arg])} got multiple values "
                                    f"for keyword argument {dup!r}")
            d.update(v)
        elif op == "LIST_TO_TUPLE":
            push(tuple(pop()))
        elif op == "UNPACK_SEQUENCE":
            seq = _unpacked(pop(), i.arg)
            stack.extend(self._sub(x) for x in reversed(seq))
        elif op == "UNPACK_EX":
            before, after = i.arg & 0xFF, i.arg >> 8
            seq = list(_unpack_iter(pop()))
            if len(seq) < before + after:
                raise ValueError(f"not enough values to unpack (expected at least "
                                 f"{before + after}, got {len(seq)})")
            mid = self._make(seq[before:len(seq) - after])
            items = seq[:before] + [mid] + seq[len(seq) - after:]
            stack.extend(reversed(items))
        else:
            self._fail(f"the instruction {op} is not translated yet")
        return pc

    def _step_flow(self, fr, i, op, pc, at, stack, push, pop):
        """_step for control flow and exceptions (a loop's and an `if`'s first)."""
        if op == "FOR_ITER":
            it = stack[-1]
            try:
                v = next(it)
                push(self._sub(v))
            except StopIteration:
                pop()
                pc = at[i.argval]
        elif op in ("JUMP_BACKWARD", "JUMP_FORWARD", "JUMP_BACKWARD_NO_INTERRUPT"):
            pc = at[i.argval]
        elif op in ("POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE"):
            v = pop()
            if type(v) is not bool and op[9] == "F" and self._mergeable(v):
                return self._merge_if(fr, pc - 1, at[i.argval], v, False)
            if not self._truth(v):
                pc = at[i.argval]
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
        elif op == "LOAD_BUILD_CLASS" and self.concrete:
            # a class statement, run for real (the class body's function
            # is CPython's): a resume after a graph break that ran eagerly
            # refused it, after the break's instruction ran, and the
            # function fell back and ran its effects again (before the
            # forty-seventh session: each print before the break twice)
            push(builtins.__build_class__)
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
            try:
                if i.arg == 2:
                    raise exc from cause
                raise exc
            finally:  # (this frame, in exc's traceback, must not hold exc: a cycle)
                del exc, cause
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
        if self.concrete:  # (at the user's line: _at_line)
            return _at_line(self._cur, "truth")(v)
        if _traced(v):
            raise _BreakHere(_CONTROL_FLOW, self.depth)
        return bool(v)

    def _binary(self, op, a, b):
        if self.concrete:  # (at the user's line: _at_line)
            return _at_line(self._cur, op)(a, b)
        f = _BINARY[op]
        if op < 13:  # (not in place: a new value)
            return f(a, b)
        if hasattr(type(a), _INPLACE[op]) and type(a) not in (list, dict, set) \
                and self._kind(a) == "pre" and not _numpy_written_back(a):
            self._fail(f"an in-place {dis._nb_ops[op][1]} on a {type(a).__name__} the function "
                       f"did not make")
        if type(a) in (list, dict, set) and self._kind(a) != "made":
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


# opcode -> the Translator method that runs it (_step's other families)
_STEPS = {
    "LOAD_DEREF": Translator._step_store,
    "LOAD_CLASSDEREF": Translator._step_store,
    "DELETE_FAST": Translator._step_store,
    "STORE_GLOBAL": Translator._step_store,
    "DELETE_GLOBAL": Translator._step_store,
    "MAKE_CELL": Translator._step_store,
    "COPY_FREE_VARS": Translator._step_store,
    "LOAD_CLOSURE": Translator._step_store,
    "STORE_DEREF": Translator._step_store,
    "DELETE_DEREF": Translator._step_store,
    "STORE_ATTR": Translator._step_store,
    "DELETE_ATTR": Translator._step_store,
    "CALL_FUNCTION_EX": Translator._step_value,
    "MAKE_FUNCTION": Translator._step_value,
    "COPY": Translator._step_value,
    "SWAP": Translator._step_value,
    "BINARY_SUBSCR": Translator._step_value,
    "STORE_SUBSCR": Translator._step_store,
    "DELETE_SUBSCR": Translator._step_store,
    "BUILD_SLICE": Translator._step_value,
    "COMPARE_OP": Translator._step_compare,
    "IS_OP": Translator._step_value,
    "CONTAINS_OP": Translator._step_value,
    "UNARY_NEGATIVE": Translator._step_value,
    "UNARY_POSITIVE": Translator._step_value,
    "UNARY_INVERT": Translator._step_value,
    "UNARY_NOT": Translator._step_value,
    "BUILD_TUPLE": Translator._step_build,
    "BUILD_LIST": Translator._step_build,
    "BUILD_SET": Translator._step_build,
    "BUILD_MAP": Translator._step_build,
    "BUILD_CONST_KEY_MAP": Translator._step_build,
    "BUILD_STRING": Translator._step_build,
    "FORMAT_VALUE": Translator._step_build,
    "LIST_APPEND": Translator._step_build,
    "SET_ADD": Translator._step_build,
    "MAP_ADD": Translator._step_build,
    "LIST_EXTEND": Translator._step_build,
    "SET_UPDATE": Translator._step_build,
    "DICT_UPDATE": Translator._step_build,
    "DICT_MERGE": Translator._step_build,
    "LIST_TO_TUPLE": Translator._step_build,
    "UNPACK_SEQUENCE": Translator._step_build,
    "UNPACK_EX": Translator._step_build,
    "FOR_ITER": Translator._step_flow,
    "JUMP_BACKWARD": Translator._step_flow,
    "JUMP_FORWARD": Translator._step_flow,
    "JUMP_BACKWARD_NO_INTERRUPT": Translator._step_flow,
    "POP_JUMP_FORWARD_IF_FALSE": Translator._step_flow,
    "POP_JUMP_BACKWARD_IF_FALSE": Translator._step_flow,
    "GET_ITER": Translator._step_flow,
    "POP_JUMP_FORWARD_IF_TRUE": Translator._step_flow,
    "POP_JUMP_BACKWARD_IF_TRUE": Translator._step_flow,
    "POP_JUMP_FORWARD_IF_NONE": Translator._step_flow,
    "POP_JUMP_BACKWARD_IF_NONE": Translator._step_flow,
    "POP_JUMP_FORWARD_IF_NOT_NONE": Translator._step_flow,
    "POP_JUMP_BACKWARD_IF_NOT_NONE": Translator._step_flow,
    "JUMP_IF_FALSE_OR_POP": Translator._step_flow,
    "JUMP_IF_TRUE_OR_POP": Translator._step_flow,
    "LOAD_ASSERTION_ERROR": Translator._step_flow,
    "LOAD_BUILD_CLASS": Translator._step_flow,
    "BEFORE_WITH": Translator._step_value,
    "IMPORT_NAME": Translator._step_value,
    "IMPORT_FROM": Translator._step_value,
    "PUSH_EXC_INFO": Translator._step_flow,
    "CHECK_EXC_MATCH": Translator._step_flow,
    "WITH_EXCEPT_START": Translator._step_flow,
    "RERAISE": Translator._step_flow,
    "RAISE_VARARGS": Translator._step_flow,
}


# The instructions the concrete interpreter runs (Translator with
# concrete=True): _execute's own kinds, _step's and _STEPS'.  A graph break
# from which an instruction not among them is reachable is refused before
# anything of the call ran (_frame_concrete.unrunnable, _Breaking._stopped).
CONCRETE_RUNS = frozenset(_STEPS) | frozenset(_KINDS) | frozenset((
    "LOAD_FAST", "BINARY_OP", "CALL", "LOAD_GLOBAL", "LOAD_ATTR", "LOAD_METHOD", "PUSH_NULL",
    "KW_NAMES", "RETURN_VALUE", "POP_TOP"))


def _step_for(op):
    """The Translator method that runs the instruction op: its family's
    (_STEPS), else _step (_steps_table's step for each instruction)."""
    return _STEPS.get(op, Translator._step)


def _warn_arguments(message, category=None, stacklevel=1, source=None):
    """warnings.warn's arguments, by its signature."""
    return message, category, stacklevel, source


def _printable(a, depth=0):
    if a is None or type(a) in (str, int, float, bool, complex) or _traced(a) or \
            isinstance(a, _C.Tensor):
        return True
    return type(a) is tuple and depth < 4 and all(_printable(x, depth + 1) for x in a)


# str(), format() and the like the translator calls for the user's code are
# the user's: a traced value's text there is a break, never its proxy text
_breaks.ACTS_FOR_USER.update([Translator._call_function.__code__, Translator._step.__code__,
                              Translator._execute.__code__,
                              Translator._binary.__code__, Translator._materialized.__code__,
                              # (its `d[k] = v` hashes the user's key: a SymInt
                              # key is a break, as in the user's own code, never
                              # the symbol itself as a key beside the int's)
                              _State._store_item.__code__] +
                             [f.__code__ for f in set(_STEPS.values())])


def _unpack_iter(v):
    """iter(v) for an unpacking: CPython's TypeError for a value that is
    not iterable ("cannot unpack non-iterable int object")."""
    t = type(v)
    if not hasattr(t, "__iter__") and not hasattr(t, "__getitem__"):
        raise TypeError(f"cannot unpack non-iterable {t.__name__} object")
    return iter(v)


def _unpacked(v, n):
    """UNPACK_SEQUENCE's n values of v, as CPython's unpack_iterable takes
    them: at most n + 1 items drawn (an iterator's others stay in it; an
    endless one ends), and its errors' texts."""
    it = _unpack_iter(v)
    seq = list(itertools.islice(it, n))
    if len(seq) < n:
        raise ValueError(f"not enough values to unpack (expected {n}, got {len(seq)})")
    if next(it, _UNBOUND) is not _UNBOUND:
        raise ValueError(f"too many values to unpack (expected {n})")
    return seq


def _function_str(f):
    """CPython's _PyObject_FunctionStr: how a call's error names its callee
    ("mod.C.m()", "print()")."""
    qual = getattr(f, "__qualname__", None)
    if qual is None:
        return str(f)
    mod = getattr(f, "__module__", None)
    return f"{mod}.{qual}()" if mod is not None and mod != "builtins" else f"{qual}()"


def _place_of(fr, tb):
    """The first entry of traceback tb (whose first is the _execute of fr
    that caught it) that is a place of fr's code (_at_line), before any
    frame fr called; None if none."""
    code = fr.code
    tb = tb.tb_next if tb is not None else None  # (no f_locals read for it: its cost)
    while tb is not None:
        c = tb.tb_frame.f_code
        if c is Translator._execute.__code__ and tb.tb_frame.f_locals.get("fr") is not fr:
            return None  # (a frame fr called: its places are its own)
        if c.co_filename == code.co_filename and c.co_qualname == code.co_qualname:
            return tb
        tb = tb.tb_next
    return None


def _root_at_place(fr, e):
    """e, which a handler of fr's is about to handle, with the traceback
    eager's has there: from its place in fr's code on (hop's frames above
    it dropped), or one made at fr's line if an instruction of hop's raised
    it (a handler reads e.__traceback__.tb_lineno or prints it)."""
    tb = _place_of(fr, e.__traceback__)
    e.__traceback__ = tb if tb is not None else _placed(fr, [e])
    del e  # (see _placed)


def _placed(fr, box):
    """The traceback of the exception in box (a list of it) with an entry of
    fr's place (_at_line) at fr's line first: raised from there and caught.
    The entry's frame keeps its callers' frames (f_back), each with the
    locals it had when it returned: so none of them, the place's, this
    one's or its callers' in hop (_leaving, _handler, _handle), holds the
    exception when it returns, or it would live in a cycle with its own
    traceback (found by test_compile_cycles)."""
    try:
        _at_line(fr, "raise")(box)
    except BaseException as again:  # noqa: B036 (the exception, raised at fr's line)
        return again.__traceback__.tb_next


def _leaving(fr, e):
    """e, which leaves fr's code (the caller re-raises it), with a place of
    fr's line in its traceback, unless an operation run at a place of fr
    already raised it (or a handler of fr's raised it anew or again:
    RERAISE keeps the exception's place): so a traceback shows the user's
    frames where eager's does (a `raise`, an unbound name, an error of the
    code after a graph break)."""
    if _place_of(fr, e.__traceback__) is None:
        fr.line = fr.raised[1]  # (a handler's RERAISE: the line that raised it first)
        e.__traceback__ = _placed(fr, [e])
    del e  # (see _placed)


def user_binary_op(frame):
    """The BINARY_OP argument (an index of dis._nb_ops) of the user's
    instruction that translator frame `frame` is running now (it called an
    operator for it), or None.  hop.numpy tells `x ** a` from np.power(x,
    a) by the caller's instruction (NumPy's ndarray operators differ from
    its ufuncs), and here the caller is the translator: _execute runs the
    commonest BINARY_OP itself, _binary the others."""
    code = frame.f_code
    if code is Translator._binary.__code__:
        return frame.f_locals.get("op")
    if code is Translator._execute.__code__ and frame.f_locals.get("op") == "BINARY_OP":
        return frame.f_locals["i"].arg
    return None
