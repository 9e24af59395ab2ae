"""The frame translator's vocabulary (hop/_frame.py): its exceptions and
sentinels, the frame record (_Frame) and a translated generator's frame
(_TransGen), what it knows of a code object before running it (its
instruction table: _instructions) and of a value (the user's code or a
library's, traced or not)."""

import contextlib
import dis
import functools
import gc
import os
import sys
import sysconfig
import threading
import types

from . import _C
from . import _breaks
from . import _paths
from ._reads import loaded_hop_numpy

__all__ = ["Unsupported", "is_user_code"]


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

    def __init__(self, message, depth, in_loop=True):
        super().__init__(message)
        self.message = message
        self.depth = depth
        # whether a break inside a loop is taken however the loop runs in
        # Python, or (an I/O call in a loop) only where CPython runs it as
        # a region (_region), else the function is eager: through hop's
        # concrete interpreter it was 4-6x slower than eager
        self.in_loop = in_loop
        # (not in_loop, inside a loop of an inlined call: why the function
        # runs eagerly where CPython cannot run the root frame's statement
        # calling it; _Breaking._break decides)
        self.loop = None
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


_ALLOWED = {}      # code objects the call guard lets run (not the user's)
_UNBOUND = object()
_NULL = object()   # the NULL of CPython's stack (a call without self)
_DELETED = object()
# The caches below are by the code object itself, not by equality: in 3.11
# two code objects compare equal when only co_filename or co_qualname differ
# (the same function at the same line of two modules), and the constants of
# one (a lambda's code) would then make the other's functions (another
# module's file in their tracebacks, text, __qualname__).  Each entry holds
# its code, so an id stays that code's while the entry lives.
_CODE = {}        # id(code) -> (code, _instructions(code))
_USER_DIRS = None


def _instructions(code):
    """(instructions, offset -> index, exception handlers (index -> (handler
    index, stack depth, push lasti); empty without), the line of each
    instruction, the operands each hands to code that may be the user's,
    the loops (back edge target index, back edge index)), cached."""
    got = _CODE.get(id(code))
    if got is not None:
        return got[1]
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
    got = (ins, at, handlers, lines, [_operands(i) for i in ins], loops)
    _CODE[id(code)] = (code, got)
    return got


_TABLES = {}      # id(code) -> (code, _steps_table(code)), as _CODE
# Translator._execute's own instructions (a kind; 0: the others, run by _step)
_LOAD, _STORE, _CONST, _SKIP, _RARE = 1, 2, 3, 4, 5
# a LOAD_FAST whose LOAD_CONST after it (never jumped to) _execute may run
# with it, as CPython's LOAD_FAST__LOAD_CONST does (argval: both argvals)
_LOAD_CONST = 6
_KINDS = {"LOAD_FAST": _LOAD, "STORE_FAST": _STORE, "LOAD_CONST": _CONST, "RESUME": _SKIP,
          "NOP": _SKIP, "PRECALL": _SKIP, "EXTENDED_ARG": _SKIP, "POP_EXCEPT": _RARE,
          "YIELD_VALUE": _RARE, "RETURN_GENERATOR": _RARE}


def _steps_table(code, step_for):
    """For each instruction of _instructions(code), by index: (its _KINDS
    kind, its argval, (the instruction, its opname, its line, how many
    operands it hands to code that may be the user's, whether it may break,
    the function that runs it: step_for(opname), the Translator's)), cached:
    all Translator._execute reads for an instruction, the part only the
    instructions of kind 0 read in a tuple of its own (_execute's own
    kinds unpack two values less).  (One caller, _frame's, so one
    step_for: the cache is by code.)"""
    got = _TABLES.get(id(code))
    if got is not None:
        return got[1]
    ins, at, handlers, lines, uses, _ = _instructions(code)
    got = [(_KINDS.get(i.opname, 0), i.argval,
            (i, i.opname, line, k, i.opname in _BREAKABLE, step_for(i.opname)))
           for i, line, k in zip(ins, lines, uses)]
    targets = {at[i.argval] for i in ins if i.opcode in _JUMPS and i.argval in at}
    targets.update(h[0] for h in handlers.values())
    for n in range(len(ins) - 1):
        if ins[n].opname == "LOAD_FAST" and ins[n + 1].opname == "LOAD_CONST" and \
                n + 1 not in targets:
            got[n] = (_LOAD_CONST, (ins[n].argval, ins[n + 1].argval), got[n][2])
    _TABLES[id(code)] = (code, got)
    return got


_JUMPS = frozenset(dis.hasjrel + dis.hasjabs)


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


def quiet_attr(v, name):
    """getattr(v, name, None) that runs no __getattr__ of the user's: hop
    probing a value (`__code__`, `__self__`) must not run the user's code
    (a __getattr__ that logs ran once more per probe)."""
    if type(v).__flags__ & _HEAPTYPE:
        try:
            return object.__getattribute__(v, name)
        except AttributeError:
            return None
    return getattr(v, name, None)


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by Python code


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
                elif not isinstance(v, (types.FunctionType, type)) and \
                        type(v).__module__ != "builtins":
                    # a descriptor of the user's (its __get__ runs on o.name)
                    v = getattr(type(v), "__get__", None) or getattr(type(v), "__set__", None)
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
    hnp = loaded_hop_numpy()
    if hnp is not None:
        out.add(hnp.ndarray)
    return out
_CONTAINERS = frozenset([list, dict, set])  # a load of one goes through _sub
_PLAIN = frozenset([int, float, bool, str, bytes, complex, type(None), _C.Tensor, _C.SymInt,
                    slice, range, type(Ellipsis)])
# _userish's answer without a look: _PLAIN and the iterators of a range
# (next() of one makes an int and runs nothing else; not _PLAIN, which also
# says what a break can carry across to Python)
_INERT = _PLAIN | {type(iter(range(0))), type(iter(range(1 << 64)))}


def _userish(values, depth=0):
    """Whether CPython, handed these values, may run the user's code: a
    user function or method, an instance of a class with Python methods of
    the user's, hop's wrappers (hop.grad(f) runs f), containers of those."""
    for v in values:
        t = type(v)
        if t in _INERT:
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
            if _user_type(v) or type(v) is not type and _user_type(type(v)):
                return True  # (its methods, or its metaclass's: Meta.__call__)
        elif _user_type(t):
            return True
        elif t is functools.partial or t is functools._lru_cache_wrapper:
            # library objects that run a function they hold (a cache's miss)
            f = v.func if t is functools.partial else getattr(v, "__wrapped__", None)
            if depth < 4 and _userish((f,), depth + 1):
                return True
        elif t in _LAZY or t.__module__ == "itertools":
            # a lazy iterator: consuming it runs what it holds (map(f, xs)
            # calls f; zip(map(...)), a user's generator): its __reduce__
            # gives the function and the iterables (conservative if not)
            try:
                held = v.__reduce__()[1]
            except Exception:
                return True
            if depth >= 4 or _userish(held if type(held) is tuple else (held,), depth + 1):
                return True
        elif t is types.GeneratorType:
            if is_user_code(v.gi_code):  # (a real one: the translator's are _TransGen)
                return True
    return False


class _Seq:
    def __getitem__(self, i):
        raise IndexError


# (iter() of an object with __getitem__ only calls it on each next(); so
# does iter(f, sentinel) call f)
_LAZY = frozenset([map, filter, zip, enumerate, reversed, type(iter(_Seq())), type(iter(int, 1))])


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
    got = _USER.get(id(code))
    if got is None:
        got = _USER[id(code)] = (code, _is_user_file(code.co_filename))
    return got[1]


_USER = {}  # id(code) -> (code, is_user_code(code)), as _CODE (co_filename)


def _is_user_file(f):
    if f.startswith("<frozen") or f.startswith("<__array_function__"):
        return False
    f = os.path.abspath(f)
    return not f.startswith(_paths._LIBRARY_DIRS) and not f.startswith(_library_dirs())


def _user_function(f):
    return isinstance(f, types.FunctionType) and is_user_code(f.__code__)


# Special methods no such call runs (construction, pickling, class hooks).
_NOT_RUN = frozenset("""__init__ __new__ __init_subclass__ __set_name__ __class_getitem__
    __del__ __getnewargs__ __getnewargs_ex__ __reduce__ __reduce_ex__ __getstate__
    __setstate__ __copy__ __deepcopy__ __subclasshook__ __post_init__""".split())


def user_dunder(v, names=None):
    """The name of a special method of the user's (a Python function of a
    class in the user's code) that v's class defines, or None: library code
    given v (float(v), np.asarray(v)) runs it where the translator cannot
    see inside, once, while translating.  names: only those (the ones the
    call may run: _effect_tables._BUILTIN_DUNDERS); else any.  Read from the
    classes each time (translation only): a class may gain one later
    (`C.__float__ = f`)."""
    for klass in type(v).__mro__[:-1]:
        for n, a in vars(klass).items():
            if (n in names if names is not None else
                    n.startswith("__") and n.endswith("__") and n not in _NOT_RUN) and \
                    isinstance(a, types.FunctionType) and is_user_code(a.__code__):
                return f"{klass.__qualname__}.{n}"
    return None


_CONTROL_FLOW = ("Python control flow on a traced value (if/while/and/or/not on it) needs its "
                 "value; hop.cond keeps it in the graph")


def _traced(v):
    if isinstance(v, _C.Tensor):
        return _C._is_proxy(v)
    if isinstance(v, _C.SymInt):
        return True
    hnp = loaded_hop_numpy()
    if hnp is not None and isinstance(v, hnp.ndarray):
        return True
    return type(v).__name__ == "SymFloat"


def _static_rows(v):
    """Whether v is a traced hop.numpy array or tensor of rank >= 1 whose
    leading size is a number (iterating it takes that many rows)."""
    hnp = loaded_hop_numpy()
    if not (isinstance(v, _C.Tensor) or hnp is not None and isinstance(v, hnp.ndarray)):
        return False
    shape = tuple(v.shape)
    return len(shape) >= 1 and isinstance(shape[0], int)


def _rows_known_at_run_time(v):
    """Whether v is a traced hop.numpy array or tensor of rank >= 1 whose
    leading size is symbolic (a selection's count: iterating it needs the
    values)."""
    hnp = loaded_hop_numpy()
    if not (isinstance(v, _C.Tensor) or hnp is not None and isinstance(v, hnp.ndarray)):
        return False
    shape = tuple(v.shape)
    return len(shape) >= 1 and isinstance(shape[0], _C.SymInt)


# Whether this thread's garbage collection runs now, while a translation
# runs (_run_by_the_collector): a gc callback hop puts first in gc.callbacks
# for the translation's duration (_watching_the_collector) sets it at
# "start" and clears it at "stop", on the thread that collects.
_COLLECTING = threading.local()
_WATCHERS = [0, threading.Lock()]  # translations watching, on any thread


def _collector_phase(phase, info):
    _COLLECTING.on = phase == "start"


def _collecting():
    return getattr(_COLLECTING, "on", False)


@contextlib.contextmanager
def _watching_the_collector():
    """Marks this thread's collections while a translation runs: code the
    collector runs then (a __del__ or a weakref callback of cyclic garbage,
    weakref.finalize's function) is the collector's, which eager runs at its
    own collections, not the function's.  gc.callbacks holds the watcher
    only meanwhile (once, however many translations run)."""
    # (a translation started inside a collection, by a finalizer calling a
    # compiled function, is not the collector's: the mark waits meanwhile)
    outer, _COLLECTING.on = _collecting(), False
    with _WATCHERS[1]:
        if _WATCHERS[0] == 0:
            gc.callbacks.insert(0, _collector_phase)
        _WATCHERS[0] += 1
    try:
        yield
    finally:
        with _WATCHERS[1]:
            _WATCHERS[0] -= 1
            if _WATCHERS[0] == 0:
                try:
                    gc.callbacks.remove(_collector_phase)
                except ValueError:  # (the user's code removed it)
                    pass
        _COLLECTING.on = outer


def _run_by_the_collector(frame):
    """Whether frame is a call of one of gc.callbacks by the collector, or runs
    under one: a collection the translation's own allocations start calls the
    callbacks as any collection of eager's run does, at no instruction of the
    function's (its effects are the callback's, not the function's, and eager
    makes them at its own collections).  Known by the callback's code and by
    its last two arguments, the collector's (a phase, "start" or "stop", and
    the info dict), so a callback that library code calls with other arguments
    is refused as before.  Or any frame while this thread's collector runs
    (_watching_the_collector): a finalizer of cyclic garbage, whose effects
    are the collector's; refused, the finalizer was lost (its error printed
    as "Exception ignored in") and f fell back.  (Walks the stack: only for
    a frame the guard would otherwise refuse.)"""
    if _collecting():
        return True
    codes = set()
    for cb in gc.callbacks:
        code = getattr(getattr(cb, "__func__", cb), "__code__", None)
        if code is not None:
            codes.add(code)
    f = frame
    while f is not None:
        c = f.f_code
        if c in codes and c.co_argcount >= 2:
            phase, info = (f.f_locals.get(n) for n in c.co_varnames[c.co_argcount - 2:c.co_argcount])
            if phase in ("start", "stop") and type(info) is dict and "generation" in info:
                return True
        f = f.f_back
    return False


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
    hnp = loaded_hop_numpy()
    return hnp is not None and isinstance(v, hnp.ndarray) and _C._is_proxy(v._t)


class _Frame:
    __slots__ = ("func", "code", "fast", "cells", "stack", "kwnames", "line", "pc", "handling",
                 "raised")  # raised: (id, line) of the exception leaving it (_leaving)


class _Lazy:
    """What the translator hands a consumer in place of a lazy iterator of
    the user's (_TransGen, _TransMap): each next() translates more of the
    user's code, its effects recorded where the consumer asks for them, in
    eager's order.  A break inside it is the consumer's call's (the root
    frame breaks at that statement: _Hoist); a library consumer that
    catches it makes the translation Unsupported (gen_break)."""

    def __iter__(self):
        return self

    def _translate(self, step, *args):
        """step(*args), the translation of the next part; the iterator is
        done once it raised."""
        tr = self.tr
        saved = tr._cur
        try:
            return step(*args)
        except _BreakHere as b:
            self.done = True
            tr.gen_break = b
            raise
        except BaseException:
            self.done = True
            raise
        finally:
            tr._cur = saved


class _TransGen(_Lazy):
    """A generator of the user's (a generator function called, a generator
    expression) while translating: each next() translates its frame to the
    next YIELD_VALUE (for its consumer: a loop of the translated code,
    sum(), tuple(), any())."""

    def __init__(self, tr, fr):
        self.tr = tr
        self.fr = fr
        self.pc = 0
        self.done = False

    def __next__(self):
        if self.done:
            raise StopIteration
        got = self._translate(self._resume)
        if got is _YIELDED:
            self.pc = self.fr.pc
            v = self.fr.stack.pop()
            self.fr.stack.append(None)  # what next() sends (popped after RESUME)
            return v
        self.done = True
        raise StopIteration(got) if got is not None else StopIteration

    def _resume(self):
        tr = self.tr
        tr.depth += 1
        try:
            return tr._execute(self.fr, self.pc)
        finally:
            tr.depth -= 1


class _TransMap(_Lazy):
    """map(f, *iterables) / filter(f, iterable) of a user function f while
    translating: each next() takes the next items and translates f's call."""

    def __init__(self, tr, f, iterables, keep):
        self.tr = tr
        self.f = f
        self.its = [iter(i) for i in iterables]
        self.keep = keep  # filter: the item when f's answer is true
        self.done = False

    def __next__(self):
        while not self.done:
            args = []
            for it in self.its:
                try:
                    args.append(next(it))
                except StopIteration:
                    self.done = True
                    raise
            out = self._translate(self.tr._call_function, self.f, tuple(args), {})
            if not self.keep:
                return out
            if self._translate(bool, out):
                return args[0]
        raise StopIteration


def _generated_library(frame):
    """Code the standard library generates with exec (namedtuple's
    __new__): file "<string>", the globals of a library module."""
    if not frame.f_code.co_filename.startswith("<"):
        return False
    name = frame.f_globals.get("__name__") or ""
    return name.startswith("namedtuple_") or name.split(".")[0] in sys.stdlib_module_names or \
        name.startswith("hop")


def _one_line_templates():
    """The code the concrete interpreter runs an operation of the user's
    with (_at_line), each on one line: a call, each binary operator (by
    BINARY_OP's argument, in place ones too), comparison and unary
    operator, an item read, write and delete, `in`, a truth test (`if
    a:`: NumPy's DeprecationWarning of an empty array's truth), and a
    raise (_frame._placed: its frame, in the traceback, holds an emptied
    list, not the exception: no reference cycle)."""
    src = {"call": "def t(f, a, k): return f(*a, **k)",
           "getitem": "def t(a, k): return a[k]",
           "setitem": "def t(a, k, v): a[k] = v",
           "delitem": "def t(a, k): del a[k]",
           "in": "def t(a, b): return a in b",
           "truth": "def t(a): return True if a else False",
           "raise": "def t(box): raise box.pop()",
           "-": "def t(a): return -a", "+": "def t(a): return +a", "~": "def t(a): return ~a"}
    for n, (_, symbol) in enumerate(getattr(dis, "_nb_ops", ())):
        src[n] = f"def t(a, b): a {symbol} b; return a" if symbol.endswith("=") else \
            f"def t(a, b): return a {symbol} b"
    for symbol in dis.cmp_op:
        src[symbol] = f"def t(a, b): return a {symbol} b"
    out = {}
    for key, text in src.items():
        scope = {}
        exec(compile(text, "<hop>", "exec"), scope)  # noqa: S102 (hop's own text)
        out[key] = scope["t"].__code__
    return out


_TEMPLATES = _one_line_templates()
_PLACES = {}  # (code, line, id(globals), operation) -> (function, globals), a few thousand


def _at_line(fr, what):
    """A function that runs operation `what` (a key of _TEMPLATES: "call"
    takes (f, args, kwargs), an operator its operands) from a frame of fr's
    code at fr's line, under its function's globals: the frame CPython's
    warnings read (file, line, the module's name and __warningregistry__;
    NumPy's warnings from C, warnings.warn's stacklevel), a traceback shows
    and hop.numpy asks which operator ran (_ndarray._operator_of_caller: the
    template's own BINARY_OP).  The concrete interpreter runs the user's
    operations through it: from its own frame, eager's warnings would name
    hop's line."""
    glb = getattr(fr.func, "__globals__", None)
    key = (fr.code, fr.line, id(glb), what)
    hit = _PLACES.get(key)
    if hit is not None and hit[1] is glb:
        return hit[0]
    code = _TEMPLATES[what].replace(co_filename=fr.code.co_filename, co_name=fr.code.co_name,
                                    co_qualname=fr.code.co_qualname,
                                    co_firstlineno=max(fr.line or 1, 1))
    place = types.FunctionType(code, glb if type(glb) is dict else {"__name__": None})
    if len(_PLACES) >= 4096:
        _PLACES.clear()
    _PLACES[key] = (place, glb)
    return place


def _site(code, line):
    return f"{os.path.basename(code.co_filename)}:{line}"


def _numpy_value(v):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(v, (np.ndarray, np.generic))


def _cell_value(c):
    try:
        return c.cell_contents
    except ValueError:
        return _EMPTY


def _symfloat():
    from . import _symfloat
    return _symfloat
