"""Graph breaks of the frame translator (hop/_frame.py): where a
translation ends (the _Breaking mixin of the Translator: the frame's stack
and locals as the plan returns them, or a _Hoist to the statement around a
break), what runs after the plan (Break: the instruction in Python, then the
resume) and the rest of the function as a function of its own (Resume),
compiled on its first call."""

import inspect
import sys
import types

from . import _C
from . import _breaks
from . import _exact
from . import _region
from ._frame_base import (
    _cell_value, _EMPTY, _Frame, _FUNC, _Hoist, _instructions, _METHOD, _NULL, _numpy_value,
    _PAUSED, _PLAIN, _site, _Stop, _symfloat, _traced, Unsupported)
from ._frame_concrete import unrunnable
from ._reads import loaded_hop_numpy

__all__ = ["Break", "Resume"]


_CALLABLES = (types.MethodType, types.FunctionType, types.BuiltinMethodType,
              types.MethodWrapperType)


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
        self.regions = {}  # the bound locals' names -> _region's function or None
        self._steady = False  # regions[names] once looked up (resume)

    def describe(self):
        where = f"; {self.where}" if self.where else ""
        prefix = f"; {self.prefix}" if self.prefix else ""
        return f"graph break at {self.site} ({self.opname}): {self.why}{where}{prefix}"

    def run_prefix(self, args, kwargs, compile):
        """The call with the part before the break run in Python (prefix):
        the function's code from its start to pc on real values, then the
        break and the resume as after a plan."""
        t = _frame.Translator(self.func, [], set(), set(), concrete=True, can_break=True)
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
        try:
            got = t._execute(fr, pc)
            if got is not _PAUSED:
                return got  # (another path: the function ended before the break)
            t.pause_at = None
            return self._finish(t, fr, compile)
        except Unsupported as u:
            raise self._refused_after_effects(u) from None

    def resume(self, out, compile):
        # (the try around the whole body, not a call of a second method:
        # a steady break comes here every call, and a try costs nothing)
        try:
            stack_vals, fast_vals, cell_vals = out
            if not stack_vals and self.until is not None and not any(map(_is_spec, fast_vals)):
                # (the steady break of a region, at a statement's start: its
                # locals straight into CPython's copy of the code, no frame)
                fn = self._steady
                if fn is False:
                    fn = self._steady = self._region_fn(self.names)
                if fn is not None:
                    return self._exited(fn(*fast_vals), compile)
            stack = []
            for v in stack_vals:
                if type(v) is tuple and len(v) == 3 and v[0] == _METHOD:
                    v = getattr(v[1], v[2])
                stack.append(v)
            for i in self.nulls:
                stack[i] = _NULL
            fr = _frame_for(self.func, dict(zip(self.names, fast_vals)), stack, cell_vals)
            fr.kwnames = self.kwnames
            return self._finish(None, fr, compile)
        except Unsupported as u:
            raise self._refused_after_effects(u) from None

    def _refused_after_effects(self, u):
        """The error for Unsupported u, raised by the code after the break
        once the plan ran and the effects before it happened: hop never runs
        the function again from its start (those effects would happen twice,
        as each print before a break did until the forty-eighth session), so
        the call raises.  The translation refuses a break after which an
        instruction the concrete interpreter does not run is reachable
        (_Breaking._check_runnable), so this is the last resort of what the
        concrete interpreter refuses at run time."""
        return _C.UnsupportedError(
            f"hop.compile: {self.func.__qualname__}: the code after the graph break at "
            f"{self.site} could not run in Python ({u.message} at {u.site}); the call's "
            f"effects before it happened once, and hop does not run the function again")

    def _concrete(self, fr):
        """The concrete interpreter on root frame fr (made where a resume
        needs one: ~1 us, a tenth of a steady break's cost)."""
        t = _frame.Translator(self.func, [], set(), set(), concrete=True)
        t.root = fr
        t.depth = 1
        return t

    def _region(self, t, fr):
        """The code from pc until it has passed until with an empty stack,
        on frame fr: run by CPython (_region: the function's code entered
        at pc, returning at the region's exits) where its code can be
        copied, else by the concrete interpreter t.  _PAUSED with fr at the
        exit, or the function's return value."""
        fn = self._region_fn(tuple(fr.fast)) if not fr.stack else None
        if fn is None:
            return (t or self._concrete(fr))._execute(fr, self.pc, until=self.until)
        got = fn(*fr.fast.values())
        fast = self._exit_locals(got)
        if fast is None:
            return got
        fr.fast = fast
        fr.pc = got[0][1]
        return _PAUSED

    def _region_fn(self, bound):
        """_region's function for the locals bound (their names, in the
        order it takes their values), or None where the code cannot be
        copied."""
        fn = self.regions.get(bound, False)
        if fn is False:
            code = _region.region(self.func.__code__, self.pc, self.until, bound)
            fn = self.regions[bound] = None if code is None else \
                types.FunctionType(code, self.func.__globals__, code.co_name, None,
                                   self.func.__closure__)
        return fn

    def _exit_locals(self, got):
        """The locals (in co_varnames' order) at a region's exit got, or
        None where got is the function's return value."""
        if type(got) is tuple and len(got) == 2 and type(got[0]) is tuple and \
                len(got[0]) == 2 and got[0][0] is _region.EXIT:
            # (locals() holds the free variables too: the frame's are its cells)
            now = got[1]
            return {n: now[n] for n in self.func.__code__.co_varnames if n in now}
        return None

    def _exited(self, got, compile):
        """The resume after a region whose result is got, run on the plan's
        locals alone (no frame: made here where the resume needs one)."""
        fast = self._exit_locals(got)
        if fast is None:
            return got
        if not self.func.__code__.co_cellvars:
            args = _plain_locals(fast)
            if args is not None:
                # (the steady break's common exit: _resume_from's, decided here)
                cf = self.resumes.get((got[0][1], 0, (), tuple(fast), (), ()))
                if cf is not None:
                    return cf(*args)
        fr = _frame_for(self.func, fast, [])
        fr.kwnames = self.kwnames
        fr.pc = got[0][1]
        return self._resume_from(None, fr, compile)

    def _finish(self, t, fr, compile):
        """The breaking instruction (or the region of until) in Python on
        frame fr, then the resume (t: the concrete interpreter on fr, or
        None to make one where it is needed)."""
        if self.until is None:
            t = t or self._concrete(fr)
            got = t._execute(fr, self.pc, 1)  # the instruction itself, in Python
        else:
            got = self._region(t, fr)  # the loop, block, statement
        if got is not _PAUSED:
            return got
        return self._resume_from(t, fr, compile)

    def _resume_from(self, t, fr, compile):
        """The resume from frame fr paused after the break (t: the concrete
        interpreter on fr, or None to make one where it is needed)."""
        args = None if fr.stack or fr.code.co_cellvars else _plain_locals(fr.fast)
        if args is not None:
            # (the steady break's common frame, decided in one pass: what
            # the checks below would find of it)
            nulls, aliases, floats = (), (), ()
        else:
            got = self._checked_args(t, fr)
            if type(got) is not tuple:
                return got[0]  # (the rest ran in Python)
            args, nulls, aliases, floats = got
        key = (fr.pc, len(fr.stack), nulls, tuple(fr.fast), floats, aliases)
        cf = self.resumes.get(key)
        if cf is None:
            cf = self.resumes[key] = compile(Resume(self.func, fr.pc, len(fr.stack), nulls,
                                                    tuple(fr.fast), self.lines,
                                                    aliases=aliases))
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
                                 self.lines, floats, aliases))
            dyn.quiet = True  # its fallback is not the user's to hear of
            out = dyn(*_float_inputs(args, floats, self.numpy))
            if dyn.eager_calls == 0 and dyn._eager_why is None:
                dyn.quiet = False
                self.resumes[key] = _FloatInputs(dyn, floats, self.numpy)
            return out
        return cf(*args)

    def _checked_args(self, t, fr):
        """(the resume's arguments, the NULL slots of the stack, aliases,
        the float arguments) for frame fr paused after the break; or
        [the function's return value] where the rest runs in Python."""
        # (a generator only where there is one to find: a steady call comes
        # here every time, and each generator costs ~1k instructions)
        nulls = tuple(i for i, v in enumerate(fr.stack) if v is _NULL) \
            if id(_NULL) in map(id, fr.stack) else ()
        if not self.numpy and (_has_numpy(fr.stack) or self.until is not None and
                               _has_numpy(fr.fast.values())):
            # tensor code: what the instruction made is NumPy's (np.asarray,
            # a NumPy function): compiled, the rest would compute with
            # hop.numpy, whose reductions may differ from NumPy's in the last
            # bit where eager's NumPy would not, so the rest runs eagerly in
            # Python.  (NumPy code computes with hop.numpy anyway; its
            # resume hands Python only NumPy's bits, as any of its breaks)
            t = t or self._concrete(fr)
            t.depth = 1
            return [t._execute(fr, fr.pc)]
        args = _resume_args(fr)
        if args is None or _holds_iterator(args):
            # a closure over the frame's own cells that cannot be made again
            # in the resume, or an iterator (`sum(iter(x))` broken at iter):
            # a translation consumes it, so a retranslation or the plan's
            # next call would see it spent; the rest runs in Python
            t = t or self._concrete(fr)
            t.depth = 1
            return [t._execute(fr, fr.pc)]
        args, aliases = _aliased(args)
        floats = tuple(i for i, v in enumerate(args) if type(v) is float) \
            if id(float) in map(id, map(type, args)) else ()
        return args, nulls, aliases, floats


# The locals a steady break's resume takes as they are (_plain_locals).
_PLAIN_LOCALS = frozenset((_C.Tensor, int, bool, str, type(None)))


def _plain_locals(fast):
    """The resume's arguments for a frame with an empty stack and no cells
    of its own whose locals are distinct hop.Tensors, ints, bools, strings
    and None: fast's values, which _checked_args's checks would take as
    they are (no NumPy value, closure, iterator, alias or float); else
    None."""
    values = list(fast.values())
    tensors = 0
    for v in values:
        t = type(v)
        if t not in _PLAIN_LOCALS:
            return None
        tensors += t is _C.Tensor
    if tensors > 1 and len({id(v) for v in values if type(v) is _C.Tensor}) < tensors:
        return None  # (one tensor under two names: _aliased's)
    return values


def _aliased(args):
    """The resume's arguments with each object that is also an earlier
    argument left out (a helper that broke and returned its argument: `y`
    is `c`), and for each argument, the index among all of them of the
    object it is (None: itself), or () when none is another: the resume
    binds both names to the one object it is handed, so `y is c` and a
    write through y reaching c are as eager (values whose identity no
    code can tell apart, numbers and strings, are not aliased)."""
    first, aliases = {}, None
    for i, v in enumerate(args):
        if v is None or type(v) in _VALUES:
            continue
        j = first.setdefault(id(v), i)
        if j != i:
            if aliases is None:
                aliases = [None] * len(args)
            aliases[i] = j
    if aliases is None:
        return args, ()
    return [v for v, a in zip(args, aliases) if a is None], tuple(aliases)


_VALUES = (int, float, bool, str, bytes, complex, type(None), type(...))


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
    hnp = loaded_hop_numpy()
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


def _is_spec(v):
    """Whether v is a _func_spec (that _thaw makes a function again)."""
    return type(v) is tuple and len(v) == 6 and v[0] == _FUNC


def _thaw(v, fr, make=None):
    """v, or the function a _func_spec stands for, made over fr's cells."""
    if _is_spec(v):
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


def _holds_iterator(values):
    """Whether values (a resume's arguments), or the items of a tuple or
    list among them, hold an iterator: state that a Python call advances."""
    for v in values:
        if hasattr(type(v), "__next__"):
            return True
        if type(v) in (tuple, list) and any(hasattr(type(x), "__next__") for x in v):
            return True
    return False


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
    # (a function the frame made is a _func_spec in the stack or the locals
    # whether or not it closes over the frame's cells: `(lambda r: r)(float(
    # a[0]))` breaks with the lambda on the stack)
    for k, v in fast.items():
        if type(v) is tuple:
            fast[k] = _thaw(v, fr, make)
    for j, v in enumerate(stack):
        if type(v) is tuple:
            stack[j] = _thaw(v, fr, make)
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

    def __init__(self, func, pc, nstack, nulls, names, lines, floats=(), aliases=()):
        self.func = func
        # (_aliased: for each of the stack, locals and cells, the index of
        # the earlier one it is; those are not parameters)
        self.aliases = aliases
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
        every = [f"stack{i}" for i in range(nstack)] + list(names) + \
            [f"cell_{n}" for n in func.__code__.co_cellvars]
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY)
             for i, n in enumerate(every) if not aliases or aliases[i] is None])

    def _frame(self, args, make=None, traced=False):
        if self.floats:
            args = list(args)
            for i in self.floats:
                # traced: the float as a SymFloat of the graph; else its value
                a = getattr(args[i], "_t", args[i])
                args[i] = _symfloat().SymFloat(a, f"float {self._arg_name(i)}") if traced \
                    else float(a)
        if self.aliases:
            given = iter(args)
            args = []
            for j in self.aliases:
                args.append(next(given) if j is None else args[j])
        stack = list(args[:self.nstack])
        for i in self.nulls:
            stack[i] = _NULL
        k = self.nstack + len(self.names)
        return _frame_for(self.func, dict(zip(self.names, args[self.nstack:k])), stack,
                          tuple(args[k:]), make)

    def _arg_name(self, i):
        if self.aliases:  # (i among the parameters: its index among all)
            i = [k for k, j in enumerate(self.aliases) if j is None][i]
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
        t = _frame.Translator(self.func, [], set(), set(), concrete=True)
        fr = self._frame(args)
        t.root = fr
        t.depth = 1
        return t._execute(fr, self.pc)


class _Breaking:
    """The Translator's end at a graph break (a mixin)."""

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
        self._check_runnable(fr, pc, prefix)
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

    def _check_runnable(self, fr, pc, prefix):
        """Unsupported, before anything of the call ran, when an
        instruction the concrete interpreter does not run is reachable from
        the break at pc (or, where the part before it runs in Python, from
        where that part starts): the break's instruction and the rest run
        in Python after the effects before the break happened, and an
        instruction refused there could only raise (never run the function
        again from its start: those effects would happen twice)."""
        starts = [pc]
        if prefix is not None:
            starts.append(self.fn.pc if isinstance(self.fn, Resume) else 0)
        for start in starts:
            bad = unrunnable(fr.code, start, _frame.CONCRETE_RUNS)
            if bad is not None:
                n, op = bad
                line = _instructions(fr.code)[3][n]
                self._fail(f"a graph break after which the rest of the function runs in Python, "
                           f"where hop's concrete interpreter cannot run {op} (at "
                           f"{_site(fr.code, line)}): the call runs eagerly from its start, "
                           f"once", fr)

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
        starts = [e for e in self.empties if e <= lo]
        if lo != k:
            head = lo - 1 if lo > 0 and (ins[lo - 1].opname == "GET_ITER" or
                                         ins[lo - 1].opname.startswith("POP_JUMP")) else lo
            what = f"inside the loop at {_site(code, lines[head])}, which runs in Python"
            if not b.in_loop and not (starts and _region_runs(code, max(starts), hi)):
                self._fail(f"{b.message}, inside the loop at {_site(code, lines[head])}: the "
                           f"call runs eagerly, as CPython runs the loop faster than hop's "
                           f"concrete interpreter would (CPython cannot run this loop as a "
                           f"region of its own)", fr, brk=op)
        elif not direct:
            if b.loop is not None and not (starts and _region_runs(code, max(starts), hi)):
                self._fail(b.loop, fr, brk=op)
            what = f"in {b.func}() (from the call at {_site(code, fr.line)}, which runs in " \
                   f"Python)"
        else:
            blocker = next((v for v in (snap[1] if snap else ()) if
                            self._portable([v], set()) is None), None)
            # (a bound __exit__; by class: getattr of a user's object ran its __getattr__)
            what = "inside the with block, which runs in Python" if \
                isinstance(blocker, _CALLABLES) and blocker.__name__ == "__exit__" else \
                f"with a {type(blocker).__name__} on the stack: the statement runs in Python"
        if not starts:
            self._fail(f"{b.message} ({what}; but no statement start before it to resume from)",
                       fr, brk=op)
        raise _Hoist(max(starts), hi, b.message, b.site or _site(code, fr.line),
                     b.opname or op, what)


def _region_runs(code, start, until):
    """Whether CPython runs code's region from start to until (_region)
    whatever locals are bound there: an I/O call in a loop is then a break
    whose loop runs at CPython's speed (Break._region), else the function
    runs eagerly (hop's concrete interpreter takes ~1.5 us an instruction)."""
    params = code.co_argcount + code.co_kwonlyargcount + \
        bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    return _region.region(code, start, until, code.co_varnames[:params]) is not None


# The Translator (Break and Resume run code in Python with a concrete one):
# imported last, so that either module may be imported first
from . import _frame  # noqa: E402
