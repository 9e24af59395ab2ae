"""hop.compile: a guarded, bounded cache of traced, lowered plans.

The first call traces and lowers; later calls try the cached plans, newest
first.  A plan's guards are checked in C on entry (dtype, rank, sizes, symbol
relations) and by its runner for everything else the trace assumed: the
constant (non-tensor) arguments by value and type, the argument structure,
and what the function read from its environment (globals, closure cells,
attributes of argument objects; see _guards).  When no plan fits, the call
retraces; with dynamic=None the dims whose sizes changed become dynamic on
the recompile, as Dynamo does.

The cache is bounded: after recompile_limit recompiles, a call that no plan
fits runs the function eagerly (the same answer, without a plan) and the
first such call warns once, as torch.compile falls back.  explain() says so.

A function with Python effects (_effects: found in its bytecode before each
trace) is traced through the frame translator (_frame), which records writes
to globals, nonlocals, attributes, items and containers and print() and
replays them after every call of the plan; a conversion of a traced value
(_breaks) is a graph break whose rest is a compiled resume function.  What
neither covers runs eagerly on every call, warned once; fullgraph=True
raises instead (at an effect or the first break), before anything happened.  Keyword
arguments are guarded like positional ones.  Called inside another trace
(hop.grad(hop.compile(f))), the function is part of that trace.
"""

import dis
import functools
import re
import sys
import types
import warnings

from . import _C
from . import _breaks
from . import _effects
from . import _frame
from . import _frame_base
from . import _frame_resume
from . import _frame_state
from . import _paths
from . import _pytree
from ._reads import is_hop_function, is_hop_module
from ._pytree import flatten, nodes, structure_changed, unflatten
from ._trace import CaughtSymbolicError, EnvArgument, FPWarned, _any_dynamic, _call_tree, _trace, \
    eager_array
from ._writeback import SharedWrite, shares_memory
from ._reads import loaded_hop_numpy

__all__ = ["compile", "CompiledFunction"]

# What a failed trace raises as it is: hop cannot trace the call (the caller
# is told why), or a plan's guard failed.
_REFUSALS = (_C.TraceError, _C.UnsupportedError, _C.GuardError)


def _raised_by_user(e):
    """Whether a raise statement (or assert) of the user's own code raised e:
    the call's own error, which eager raises only after what the function
    did before it (_eager_after).  An error raised inside hop or by a call
    into it (a shape, a dtype, a limit of tracing) stays hop's, as it was."""
    tb = e.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    if is_hop_module(tb.tb_frame.f_globals.get("__name__") or ""):
        return False
    return 0 <= tb.tb_lasti < len(code.co_code) and \
        code.co_code[tb.tb_lasti] in (_RAISE_VARARGS, _RERAISE)


def _the_calls_own(e):
    """Whether e, raised while tracing, is for eager to decide: the call's
    own error, which eager raises too after what the call did before it
    (the user's raise, or an error hop.numpy raised as NumPy would: an index
    out of range, shapes that do not broadcast;
    hop.numpy._core.raised_as_numpy), or a decision hop.numpy met that NumPy
    makes on the values (whether a mask's count broadcasts:
    _core.decided_by_values)."""
    if _raised_by_user(e) or _holds_traced(e) or _buffer_refused(e):
        return True
    hnp = sys.modules.get("hop.numpy._core")
    return hnp is not None and (hnp.raised_as_numpy(e) or hnp.decided_by_values(e))


# CPython's TypeErrors of an object that exports no buffer (PyObject_GetBuffer
# and its callers: memoryview(), bytes-like arguments, hashlib's)
_NO_BUFFER = ("a bytes-like object is required", "object supporting the buffer API required")


def _buffer_refused(e):
    """Whether e is a library's refusal of a hop.numpy array the trace gave
    it where the call has an ndarray, which exports its memory and hop's
    array cannot (CPython 3.11 has no Python-level buffer export):
    `np.ndarray(shape, buffer=x)`, `memoryview(x)`, `hashlib.sha1(x)` of an
    argument x raised `TypeError: a bytes-like object is required, not
    'NumpyArg'` from the trace where eager answers.  Eager decides (and
    raises it where it is the call's own)."""
    return type(e) is TypeError and any(t in str(e) for t in _NO_BUFFER)


def _holds_traced(e):
    """Whether e's arguments hold a traced value: an error the user's code
    raised about one (`D[x[0]]`: KeyError(x[0]), the key hashed by
    identity), whose text would be the proxy's ('Tensor(proxy select_2:
    f32[])'); eager's, with eager's value, is the answer."""
    try:
        return any(_frame_base._traced(a) for a in e.args)
    except Exception:  # (an exception class's own args)
        return False


_RAISE_VARARGS = dis.opmap["RAISE_VARARGS"]
_RERAISE = dis.opmap["RERAISE"]


class _Entry:
    __slots__ = ("gm", "runner", "dynamic", "reason", "traps", "frame", "direct", "nodes")

    def __init__(self, gm, runner, dynamic, reason, traps, frame=None):
        self.gm = gm
        self.runner = runner
        # Whether its arguments hold a list, dict or other mutable
        # structure, which a call might pass at two places
        # (_frame.repeated_containers: checked on every call)
        spec = getattr(runner, "spec", None)
        self.nodes = spec is not None and _mutable_nodes(spec.children[0] if runner.kw
                                                         else spec) + \
            (_mutable_nodes(spec.children[1]) if runner.kw else 0) > 0
        self.dynamic = dynamic
        self.reason = reason
        self.traps = traps  # predicate symbol -> (site, side) of a branch side not traced
        # The translation (_frame.Translator) of a function with Python
        # effects: its side-effect table, replayed after each call of the
        # plan, and the lifted ints passed as its last argument.
        self.frame = frame
        # A translation with nothing to do per call besides the plan (no
        # effects, lifted ints, break or argument containers: a function
        # translated for the environment ndarrays it reads) whose runner
        # returns the function's result alone (Runner.result_only): its
        # call is a plain plan's, the environment arrays' buffers passed as
        # captures under the same guards.
        self.direct = frame is not None and not frame.effects and not frame.lifted and \
            frame.stop is None and not frame.arg_containers and _result_only(runner)

    def run(self, args, kwargs):
        """The plan's call (GuardError when it does not fit)."""
        fr = self.frame
        if self.nodes:
            twice = _frame.repeated_containers(args, kwargs)
            if twice is not None:
                raise _C.GuardError(f"guard failed: {twice}")
        if fr is None or self.direct:
            return _plan_run(self.runner.call_kw, args, _C.GuardError, kwargs)
        if fr.stop is not None and fr.stop.prefix is not None:
            # NumPy code whose break would hand Python a value of other bits
            # than NumPy's: the part before it runs in Python, the rest
            # resumes compiled (no guard: Python runs whatever the call is)
            try:
                return fr.stop.run_prefix(args, kwargs, _compile_resume)
            except (_C.GuardError,) + _RUN_ERRORS as e:
                raise _Ran(e) from None
        shared = _shared_with_env(args, kwargs, fr) if fr.arg_containers else None
        if shared is not None:
            raise _C.GuardError(f"guard failed: {shared}")
        state = _frame_state.lifted_now(fr.lifted)
        if state is None:
            raise _C.GuardError("guard failed: a lifted int of the function's state (a "
                                "nonlocal or global it assigns) no longer holds an int")
        out, values = _plan_run(self.runner.call_kw, tuple(args) + state, _C.GuardError, kwargs)
        try:
            held = _frame_state.replay(fr.effects, values, (tuple(args), dict(kwargs or {})),
                                       fr.holds)
            if fr.stop is not None:
                # a graph break: the instruction in Python, then the resume
                return fr.stop.resume(out, _compile_resume)
        except (_C.GuardError,) + _RUN_ERRORS as e:
            # (the user's code raised it after the plan ran and the effects
            # were replayed: the call's own error, never a rerun's cause)
            raise _Ran(e) from None
        _frame_state.release(held)  # (the function's locals die as it returns)
        return out

    def changed_contents(self):
        """The message of a contents guard this plan's run would fail on
        (Guards.changed_contents), found without running it; None when that
        does not tell (a translation's prefix runs without guards)."""
        fr = self.frame
        if fr is not None and fr.stop is not None and fr.stop.prefix is not None:
            return None
        guards = getattr(self.runner, "guards", None)
        return guards.changed_contents() if guards is not None else None

    def failure(self, e):
        """The reason a call did not fit this plan: a guard's message, or
        the data-dependent branch that took a side not traced yet."""
        m = _TRAP.match(str(e))
        if m and m.group(1) in self.traps:
            site, side = self.traps[m.group(1)]
            return f"the data-dependent branch at {site} (`{site.text}`) took its {side} side, " \
                   f"not traced yet"
        return str(e)


# What a plan raises while it runs for the call's values (an index array
# out of range, a singular matrix, masks of other counts): the call's own
# error, which eager raises only after what the function did before it;
# and a failed run-time check (CheckError, the op fail_if): a value hop
# cannot vouch for, which eager's NumPy decides.
# A plan writes the caller's arrays and replays effects only once it has
# run, so nothing happened yet and the call runs eagerly (_PlanRaised).
_RUN_ERRORS = (_C.OutOfBoundsError, _C.LinAlgError, _C.ShapeError, _C.InvalidError,
               _C.CheckError)


def _effect_lines(effects):
    """{(file's basename, line): whether an effect there is one the
    translator breaks at (_frame_state.BROKEN: I/O)} for the lines of
    effects: the translator breaks at a call on such a line that it cannot
    see into (hop/_frame.py, _call_function)."""
    lines = {}
    for e in effects:
        if e.kind in ("type", "holds"):
            continue
        file, _, line = e.site.rpartition(":")
        if line.isdigit():
            key = (file, int(line))
            lines[key] = lines.get(key, False) or e.kind in _frame_state.BROKEN
    return lines


def _plan_run(call, *args):
    """call(*args), a plan's run: _PlanRaised for one of _RUN_ERRORS."""
    try:
        return call(*args)
    except _RUN_ERRORS as e:
        raise _PlanRaised(e) from None


class _PlanRaised(BaseException):
    """A plan raised one of _RUN_ERRORS before anything of the call
    happened: CompiledFunction runs the call eagerly, and eager decides
    (its error with its effects, or its answer)."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


class _Ran(BaseException):
    """A GuardError, or one of _RUN_ERRORS, that the user's code raised
    after the plan ran (a replayed effect, the code after a graph break: a
    reshape to a size the plan computed): the call's own error, never a
    guard's miss nor a plan's error, either of which would run the plan (or
    the call eagerly) and the effects again.  CompiledFunction raises the
    error itself."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


_TRAP = re.compile(r"guard (u\d+) == [01] of cond_\w+ failed")


class CompiledFunction(_C._CompiledCall):
    """The callable hop.compile returns: calls run the newest compiled plan
    whose guards fit, else retrace (dims that changed become dynamic when
    dynamic is None), past recompile_limit run fn eagerly.  Python effects
    (globals, nonlocals, attributes, items, list/dict/set mutations, print)
    are replayed after each call of the plan; a conversion of a traced value
    (str(), float(), .tolist()) breaks the graph and the rest resumes
    compiled; what hop cannot do either way runs eagerly on every call.  graphs,
    recompiles, eager_calls and explain() tell what it did.

    >>> f = hop.compile(lambda x: (x * 2).sum())
    >>> f(hop.ones(3)), f(hop.ones(5))
    (hop.tensor(6.), hop.tensor(10.))
    >>> f.recompiles, [gm.graph.placeholders[0].meta.expr for gm in f.graphs[1:]]
    (1, ['s0'])
    """

    # hop's own attributes of a CompiledFunction (the others, but
    # underscored ones, are the user's: `g.scale` set on a decorated g,
    # which the guards read, _guards._walk_children)
    _hop_state = frozenset(("fn", "dynamic", "recompile_limit", "fullgraph", "quiet",
                            "eager_calls", "recompiles"))

    def __init__(self, fn, dynamic=None, recompile_limit=8, fullgraph=False):
        if not callable(fn):
            raise TypeError(f"hop.compile: fn must be callable, got {type(fn).__name__}")
        if dynamic not in (None, True, False):
            raise TypeError("hop.compile: dynamic must be None, True or False")
        if not isinstance(recompile_limit, int) or isinstance(recompile_limit, bool) or \
                recompile_limit < 0:
            raise TypeError(f"hop.compile: recompile_limit must be an int >= 0, got "
                            f"{recompile_limit!r}")
        self.fn = fn
        self.dynamic = dynamic
        self.recompile_limit = recompile_limit
        self.fullgraph = bool(fullgraph)
        self._tree = None  # the data-dependent branches met so far (_paths)
        self._entries = []
        self._fast = None
        self._dims = None  # per tensor leaf: set of dims made dynamic
        self._first = None  # the shapes of the first call
        self._static = False  # a dynamic trace failed where a static one did not
        # Its plain trace found an environment ndarray (_breaks.EnvArrays):
        # later traces go to the translator at once (an SGD loop under eager
        # hop.grad retraces on every call; the plain attempt was ~20% of it)
        self._env_arrays = False
        self.recompiles = 0
        self.eager_calls = 0  # calls run eagerly since the limit was reached
        self._fallback_reason = None
        # [calls run eagerly for an argument no plan takes, the last one's
        # reason] (_eager_for_argument), or None
        self._by_argument = None
        # (argument spec, (written leaf, other leaf), constant leaves, why):
        # the calls a trace found with two arguments sharing memory, one
        # written (_shared_write), which run eagerly without a trace
        # (_shared_again); the newest 8
        self._shared = []
        # Why every call runs eagerly: the Effects (_effects.Effect: kind,
        # site, reason) hop cannot compile; None while it compiles.
        self._eager_why = None
        # Why the frame translator could not compile the function (an
        # Effect), for explain(); None when it did or was not tried.
        self._untranslated = None
        self._retired = []  # the plans made before that
        # a plan reads an ndarray of the function's environment (a global,
        # a closure cell): every call is NumPy's (_numpy_call), whatever
        # its arguments
        self._numpy_env = False
        # hop's own trial compile (a resume with its floats as inputs,
        # _frame_resume.Break._finish): falling back is not the user's to hear of
        self.quiet = False
        # hop.grad's, hop.vmap's (and jvp's) run (_autodiff._compiled): it
        # has no eager call -- run outside a trace, its vjp/jvp/vmap HOP has
        # no graph -- so what would run it eagerly raises instead (_no_eager)
        self._hop_fn = getattr(fn, "_hop_no_eager", False) is True
        # the bound C call leaves a call with one object at two places of
        # its arguments (f(t, t)) to _call_args: a plan traced for distinct
        # objects refuses it (_trace._aliased), and the retrace makes one of
        # a single input for both (_trace._aliases)
        self._distinct = True
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "compiled")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __get__(self, obj, objtype=None):
        """On a class, a compiled function binds as the function it
        replaces does (`@hop.compile` on a method: m.step(x) is a call
        step(m, x), m an argument guarded by identity)."""
        if obj is None:
            return self
        return types.MethodType(self, obj)

    @property
    def graphs(self):
        """The GraphModules compiled so far, oldest first (at most the 16
        newest live plans: a recompile_limit above that drops the oldest)."""
        return [e.gm for e in self._retired + self._entries]

    # The call itself is _C._CompiledCall's (C): the bound plan self._fast
    # when it takes the arguments, else _call_args, or _call_kw with
    # keyword arguments.

    def _call_args(self, args):
        """fn(*args) through the newest plan that fits (see the class)."""
        if _C.tracing() is not None:
            # (inside another trace or translation, a compiled helper or a
            # callback: part of that trace, as in _call; a plan of its own
            # would run and replay its effects for real)
            return self.fn(*args)
        if _C._np_fp_reported() and not self._hop_fn and \
                (self._numpy_env or _numpy_call(args, None)):
            return self.fn(*args)  # (see _numpy_call)
        entries = self._entries
        if not entries:
            return self._call(args, {})
        try:
            try:
                if entries[-1].frame is not None and not entries[-1].direct or \
                        entries[-1].nodes:
                    return entries[-1].run(args, None)
                return entries[-1].runner.call(args, _C.GuardError)
            except EnvArgument as e:
                failures = e  # (this call eagerly, outside the handler)
            except _C.GuardError as e:
                failures = [entries[-1].failure(e)]
            except (_C.TraceError, TypeError):
                if _C.tracing() is not None:  # traced values: inside another trace
                    return self.fn(*args)
                raise
            except _RUN_ERRORS as e:  # (_plan_run, inline: no frame on this path)
                raise _PlanRaised(e) from None
            # (outside the guard's handler: an error of the retrace or the
            # eager call is raised as eager raises it, without the
            # GuardError as its __context__)
            if type(failures) is EnvArgument:
                return self._eager_for_argument(failures.why, args, {})
            return self._miss(args, {}, failures)
        except FPWarned:
            error = FPWarned  # (NumPy's run, below: its error without FPWarned as context)
        except _Ran as r:
            error = r.error
        except _PlanRaised as p:
            # (hop's own function -- hop.grad's, hop.vmap's -- has no eager
            # call: the plan's error is its answer)
            error = p.error if is_hop_function(self.fn) else None
        if error is FPWarned:
            return self._fp_rerun(args)
        if error is None:  # (outside the handler: eager's error as it raises it)
            return self._run_eagerly(args, {})
        raise error  # (outside the handler: the user's error as it was raised)

    def _fp_check(self, numpy=False):
        """The new plan's runner's fp_warned, and the C bound call's
        _fp_mode: _fp_any (2) for a function that may set NumPy's error
        state, else _fp_warned (1); None (0) for hop's own function
        (hop.grad's, hop.vmap's), whose call is hop's, not NumPy's.
        numpy: the plan computes with NumPy's semantics whatever the
        arguments (it reads an ndarray of the function's environment: a
        global, a closure cell), so every call of it is NumPy's."""
        if is_hop_function(self.fn):
            self._fp_mode = 0
            return None
        self._fp_mode = 2 if _sets_fp_state(getattr(self.fn, "func", self.fn)) else 1
        if numpy:
            return _fp_any_env if self._fp_mode == 2 else _fp_warned_env
        return _fp_any if self._fp_mode == 2 else _fp_warned

    def _fp_rerun(self, args, kwargs=None):
        """The call through NumPy: its plan raised a floating-point
        exception NumPy's error state warns for (_trace.FPWarned, or the C
        bound call's check), and nothing of the call was applied yet.
        NumPy's run gives its warnings -- category, text, count and order --
        and its answer; the plans stay.  (Not an eager call of
        eager_calls: the plan fits.)"""
        return self.fn(*args, **(kwargs or {}))

    def _call_kw(self, args, kwargs):
        """fn(*args, **kwargs), kwargs not empty."""
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        """A call with keyword arguments, or before the first plan."""
        if _C.tracing() is not None:
            # Called while this thread traces (hop.grad(hop.compile(f)), a
            # compiled helper in a compiled function): f is part of that
            # trace, as jit inside a JAX trace is.
            return self.fn(*args, **kwargs)
        if _C._np_fp_reported() and not self._hop_fn and \
                (self._numpy_env or _numpy_call(args, kwargs)):
            return self.fn(*args, **kwargs)  # (see _numpy_call; hop's call is not NumPy's)
        entries = self._entries
        try:
            failures = None
            if entries:
                try:
                    return entries[-1].run(args, kwargs)
                except EnvArgument as e:
                    failures = e  # (this call eagerly, outside the handler)
                except _C.GuardError as e:
                    failures = [entries[-1].failure(e)]
            if type(failures) is EnvArgument:
                return self._eager_for_argument(failures.why, args, kwargs)
            return self._miss(args, kwargs, failures)  # (outside the guard's handler)
        except FPWarned:
            error = FPWarned  # (NumPy's run, below: its error without FPWarned as context)
        except _Ran as r:
            error = r.error
        except _PlanRaised as p:
            # (hop's own function -- hop.grad's, hop.vmap's -- has no eager
            # call: the plan's error is its answer)
            error = p.error if is_hop_function(self.fn) else None
        if error is FPWarned:
            return self._fp_rerun(args, kwargs)
        if error is None:  # (outside the handler: eager's error as it raises it)
            return self._run_eagerly(args, kwargs)
        raise error  # (outside the handler: the user's error as it was raised)

    def _miss(self, args, kwargs, failures):
        """No plan was tried (failures None) or the newest one failed: the
        others, then a retrace, or past the limit an eager call."""
        if self._eager_why is not None:
            return self._run_eagerly(args, kwargs)
        why = self._why_eager(args, kwargs)
        if why is not None:
            if self._hop_fn:  # (no eager call: the same values in arrays a plan takes)
                return self._miss(*_plain_arrays(args, kwargs), failures)
            return self._eager_for_argument(why, args, kwargs)
        if failures is not None:
            for entry in reversed(self._entries[:-1]):
                # (a plan whose environment array changed inside: its run
                # would fail that guard, after flattening the arguments and
                # reading every guard before it)
                why = entry.changed_contents()
                if why is not None:
                    failures.append(why)
                    continue
                try:
                    return entry.run(args, kwargs)
                except EnvArgument as e:
                    env = e.why
                    break
                except _C.GuardError as e:
                    failures.append(entry.failure(e))
            else:
                env = None
            if env is not None:  # (outside the handler: eager's error as it raises it)
                return self._eager_for_argument(env, args, kwargs)
        reason = "first call" if failures is None else "; ".join(failures)
        if self._shared:
            why = self._shared_again(args, kwargs)
            if why is not None:
                return self._eager_for_argument(why, args, kwargs)
        if self._entries and self.recompiles >= self.recompile_limit:
            return self._eager(args, kwargs, reason)
        if isinstance(self.fn, _frame_resume.Resume):
            # the rest of a function after a graph break (its effects are
            # the function's, found before its first trace)
            out = self._translated(args, kwargs, [], reason)
            if out is not _UNTRANSLATED:
                return out
            return self._fall_back([self._untranslated], args, kwargs)
        # The Python effects of the call, from its bytecode: once per trace,
        # never per call (a call a plan fits had none when it was traced).
        effects = _effects.find(self.fn, args, kwargs)
        if effects and self._translatable(effects):
            # effects the frame translator replays or breaks at: translated, compiled
            out = self._translated(args, kwargs, effects, reason)
            if out is not _UNTRANSLATED:
                return out
        if effects:
            if self.fullgraph:
                raise _C.TraceError(_fullgraph_message(self.__name__, effects))
            return self._fall_back(effects, args, kwargs)
        saved = (None if self._dims is None else [set(d) for d in self._dims], self._first)
        dynamic = self._dynamic_for(args, kwargs)
        # what the trace refused, acted on outside its handler (the
        # translation or the eager call that follows runs the user's code,
        # whose error must not have hop's refusal as its __context__)
        refused = None
        try:
            if self._env_arrays:
                # (the translator compiles any Python function alike: were
                # the arrays gone, its plan would still be the function's)
                raise _breaks.EnvArrays()
            gm, runner, paths, note = self._trace_sizes(args, kwargs, dynamic)
        except _breaks.EnvArrays:
            self._env_arrays = True
            self._dims, self._first = saved[0], saved[1]
            refused = ("env arrays", None)
        except _breaks.ArgumentChanged as a:
            self._dims, self._first = saved[0], saved[1]
            refused = ("argument changed", a.what)
        except SharedWrite as w:  # (this call eagerly, below)
            shared = self._shared_write(w, saved, args, kwargs)
        except _breaks.GraphBreak as b:
            self._dims, self._first = saved[0], saved[1]
            if self.fullgraph:
                raise b.as_error() from None
            # (its site and text, not the exception: its traceback holds this frame)
            refused = ("break", (str(b.site), b.message))
        except BaseException as e:
            # A call that fails to trace must not change what later calls
            # make dynamic.
            self._dims, self._first = saved[0], saved[1]
            # (a DataDependentError is hop's refusal unless hop.numpy met
            # it for a decision NumPy makes on the values: _the_calls_own)
            if not isinstance(e, Exception) or is_hop_function(self.fn) or \
                    (isinstance(e, _REFUSALS) and not isinstance(e, _C.DataDependentError)) or \
                    not _the_calls_own(e):
                raise
            failed, shared = e, None
        else:
            failed = shared = None
        if refused is not None:
            return self._refused(refused, args, kwargs, reason)
        if shared is not None:  # (outside the handler: eager's error as it raises it)
            return self._eager_for_argument(shared, args, kwargs)
        if failed is not None:
            # outside the trace's handler, so eager's error is raised as it was
            return self._eager_after(_effects.Effect(
                "trace", "?", f"the trace raised {type(failed).__name__} ({failed}) where the "
                              f"call itself answers"), args, kwargs)
        return self._new_plan(gm, runner, paths, note, dynamic, reason, args, kwargs)

    def _refused(self, refused, args, kwargs, reason):
        """The plain trace refused the call (_miss's refused: (kind, what)):
        an environment ndarray or a graph break (the frame translator
        compiles the call, else it runs eagerly), or an argument the trace
        changed (_argument_changed)."""
        kind, what = refused
        if kind == "argument changed":
            return self._argument_changed(what, args, kwargs, reason)
        if kind == "env arrays":
            out = self._translated(args, kwargs, [], reason, plain=True)
            if out is not _UNTRANSLATED:
                return out
            return self._fall_back([self._untranslated], args, kwargs)
        if isinstance(self.fn, types.FunctionType):
            # a graph break: the translator compiles what comes before it
            # and resumes after it (not fullgraph: _miss raised that)
            out = self._translated(args, kwargs, [], reason)
            if out is not _UNTRANSLATED:
                return out
        return self._fall_back([_effects.Effect("conversion", *what)], args, kwargs)

    def _new_plan(self, gm, runner, paths, note, dynamic, reason, args, kwargs):
        """Keeps the plan _miss traced (the newest entry) and runs it on the
        call's arguments."""
        runner.distinct = True
        if note is not None:
            dynamic = False
            reason += f" ({note})"
        if paths is not None:
            self._tree = paths.tree()
        if self._entries:
            self.recompiles += 1
        numpy = runner.numpy_dispatch
        self._numpy_env = self._numpy_env or numpy
        runner.fp_warned = self._fp_check(numpy)
        self._add(_Entry(gm, runner, dynamic, reason, paths.traps if paths is not None else {}))
        # the newest plan's bound call: NumPy's or hop.Tensors' without guards
        # (Plan.bind_*), or with guards to check (_EffectsCall), if any
        self._fast = _checking_fp(runner.fast or _effects_call(self._entries[-1]), numpy, args,
                                  kwargs)
        try:
            return _plan_run(runner.call_kw, args, _C.GuardError, kwargs)
        except EnvArgument as e:
            env = e.why  # (this call eagerly, below, outside the handler)
        except _C.GuardError as e:
            # The trace itself changed what the new plan's guards read (a
            # functools.cached_property of an object the code reads stored
            # its value in the object's __dict__, which a lacks guard says
            # the class answers): nothing of the plan ran, so this call runs
            # eagerly and the next one retraces (before, the GuardError
            # reached the caller, where eager returns)
            raise _PlanRaised(e) from None
        # an argument that is an object of the function's environment
        # (`f(G)`, G a global the plan reads): the trace answered `x is G`
        # False; the plan stays for other arguments
        return self._eager_for_argument(env, args, kwargs)

    def _why_eager(self, args, kwargs):
        """Why a call must run eagerly for its arguments (_eager_argument),
        or for an argument's container that a translated plan reaches as the
        environment's (no plan takes it, and a translation would not)."""
        why = _eager_argument(args, kwargs, not self._hop_fn and "arrays")
        if why is None:
            why = next((w for w in (_shared_with_env(args, kwargs, e.frame)
                                    for e in self._entries
                                    if e.frame is not None and e.frame.arg_containers)
                        if w is not None), None)
        return why

    def _shared_write(self, w, saved, args, kwargs):
        """The trace met arguments that share memory, one written
        (_writeback.SharedWrite): which, for _eager_for_argument (eager's
        NumPy runs this call; the plans stay for other arguments).  hop's
        own function has no eager call, and two arrays of the function's
        environment are no call's arguments: w is raised.  Two arguments
        are kept as a decision (_shared_again), so the next call that
        repeats them runs eagerly without a trace."""
        self._dims, self._first = saved[0], saved[1]
        if self._hop_fn or not w.arg:
            raise w
        if w.pair is not None:
            leaves, spec = flatten(_call_tree(args, kwargs))
            consts = tuple(x for x in leaves if not _array_leaf(x))
            self._shared = [d for d in self._shared if d[:3] != (spec, w.pair, consts)][-7:]
            self._shared.append((spec, w.pair, consts, w.what))
        return w.what

    def _shared_again(self, args, kwargs):
        """The decision of an earlier trace (_shared_write) this call
        repeats: the same argument structure and constants, and the two
        arguments it found again sharing memory (the one written, the
        function the same: the trace would find it again).  Its words for
        _eager_for_argument, or None (then the call traces, as the first
        one did: a changed aliasing pattern makes a plan, or another
        decision)."""
        leaves, spec = flatten(_call_tree(args, kwargs))
        consts = None
        for s, pair, want, what in reversed(self._shared):
            if s != spec:
                continue
            if consts is None:
                consts = tuple(x for x in leaves if not _array_leaf(x))
            if _same_consts(consts, want) and shares_memory(leaves, pair):
                return what
        return None

    def _argument_changed(self, what, args, kwargs, reason):
        """A trace changed an argument the effect finder missed
        (_breaks.ArgumentChanged): the translator records the change, or the
        call runs eagerly; never a plan that would not make it."""
        code = getattr(self.fn, "__code__", None)
        missed = [_effects.Effect("mutation", _effects._site(code, code.co_firstlineno)
                                  if isinstance(code, types.CodeType) else "?",
                                  f"changes {what} (found while tracing)")]
        if self.fullgraph:
            raise _C.TraceError(_fullgraph_message(self.__name__, missed)) from None
        out = self._translated(args, kwargs, missed, reason)
        if out is not _UNTRANSLATED:
            return out
        return self._fall_back(missed + [self._untranslated], args, kwargs)

    def _translatable(self, effects):
        """Whether the frame translator compiles a function of these
        effects: each one it replays, or one of I/O (a break at its call in
        the user's code, which it runs instruction by instruction; not of a
        library function compiled itself, hop.compile(np.loadtxt), whose
        I/O is inside library calls it runs for real, once).  An effect it
        does neither for -- next(), random draws, the clock -- is a new
        value on every call, so a break there would recompile its resume on
        every call: such a function runs eagerly."""
        if not isinstance(self.fn, types.FunctionType):
            return False
        user = _frame_base.is_user_code(self.fn.__code__)
        return all(e.kind in _frame_state.REPLAYED or e.kind in _frame_state.BROKEN and user
                   for e in effects)

    def _translated(self, args, kwargs, effects, reason, plain=False):
        """_translate's answer, or _UNTRANSLATED when the translator cannot
        compile the function (why: self._untranslated, for explain() and
        the fall-back); with fullgraph=True, a graph break it stops at is
        raised (nothing ran)."""
        try:
            return self._translate(args, kwargs, effects, reason, plain)
        except _frame_base.Unsupported as u:
            self._untranslated = _effects.Effect("translation", u.site, u.message)
            if self.fullgraph and u.brk is not None:
                raise _C.TraceError(f"hop.compile(fullgraph=True): {self.__name__} has a "
                                    f"graph break (nothing ran): graph break at {u.site} "
                                    f"({u.brk}): {u.message}") from None
        return _UNTRANSLATED

    def _translate(self, args, kwargs, effects, reason, plain=False):
        """Traces fn through the frame translator (_frame): its effects are
        recorded and replayed by every call.  Unsupported: it cannot.
        plain: a function without effects translated for the ndarrays it
        reaches (_breaks.EnvArrays), whose refusals (an aliased write's
        UnsupportedError) are raised as its plain trace raises them."""
        # hop.numpy before the trace starts: the translator wraps an ndarray
        # of the environment as hop.numpy's array, whose writes need the
        # trace's storage run (_trace._Call.uses_numpy; imported only then,
        # a first compile's write to a global was refused)
        from . import numpy as _  # noqa: F401
        resume = isinstance(self.fn, _frame_resume.Resume)
        # (an argument's attribute: not a resume's, whose arguments are not fn's)
        lifted = _frame_state.lifted_sources(self.fn.func, None) if resume else \
            _frame_state.lifted_sources(self.fn, args, kwargs)
        lines = self.fn.effect_lines if resume else _effect_lines(effects)
        state = _frame_state.lifted_now(lifted)
        args2 = tuple(args) + state
        saved = (None if self._dims is None else [set(d) for d in self._dims], self._first)
        stop_at = failed = None
        try:
            while True:
                tr = _frame.Translator(self.fn, lifted, set(), lines,
                                       can_break=not self.fullgraph, stop_at=stop_at)
                dynamic = self._dynamic_for(args2, kwargs)
                try:
                    gm, runner = _trace(self.fn, args2, dynamic, kwargs=kwargs,
                                        compiling=True, frame=tr)
                    shared = _shared_with_env(args, kwargs, tr)
                    tr.release()  # (the entry keeps tr: not the call's objects)
                    break
                except (_frame_base.Unsupported, _breaks.GraphBreak, Exception):
                    if self.dynamic is not None or not _any_dynamic(dynamic):
                        raise
                    # with dynamic sizes (a dict keyed by a size, an error
                    # naming a symbol): the static way, as _trace_sizes
                    # (before, the call and every later one ran eagerly)
                    self._dims, self._first = saved[0], saved[1]
                    self._static = True
                except _frame_base._Hoist as h:
                    # a break inside a loop, a with block or an inlined call:
                    # translated again to end at the statement around it
                    self._dims, self._first = saved[0], saved[1]
                    if stop_at is not None:
                        raise _frame_base.Unsupported(f"{h.message} ({h.what}; the translation "
                                                 f"did not end there again)", h.site) from None
                    # (kept for the next translation without its traceback
                    # and context, whose frames hold this one: a gc cycle)
                    stop_at = h.with_traceback(None)
                    stop_at.__context__ = None
        except (_frame_base.Unsupported, _breaks.GraphBreak) as u:
            self._dims, self._first = saved[0], saved[1]
            if isinstance(u, _breaks.GraphBreak):
                raise _frame_base.Unsupported(u.message, str(u.site)) from None
            raise
        except SharedWrite as w:  # (this call eagerly, below)
            shared = self._shared_write(w, saved, args, kwargs)
        except Exception as e:
            # What the translation raised: the call's own error (eager raises
            # it too) or a case the translator misreads (eager answers):
            # either way eager decides, never the translator.
            # fullgraph=True refuses before anything ran, as for any effect
            # the translator cannot compile.
            self._dims, self._first = saved[0], saved[1]
            # (before eager's call: a shadow of a global list would keep
            # alive the item eager pops, its __del__ run late)
            tr.release()
            if self._hop_fn or (plain and isinstance(e, _REFUSALS) and
                                not isinstance(e, _C.DataDependentError)):
                raise  # (hop's own function: its error is the answer, no eager call decides)
            failed = _effects.Effect("translation", "?", f"the translation failed "
                                                         f"({type(e).__name__}: {e})")
            if self.fullgraph:
                # (the effects before the error would have to happen first,
                # so eager's error is not fullgraph's to raise)
                raise _C.TraceError(
                    f"hop.compile(fullgraph=True): {self.__name__} raised {type(e).__name__} "
                    f"while hop translated it ({e}); eagerly that error comes after its Python "
                    f"effects, which hop does not perform for a call it refuses (nothing ran)" +
                    "".join(f"\n  {x.kind} at {x.site}: {x.reason}" for x in effects)) from None
        resizes = _resizes_in_python(tr.stop) if failed is None and shared is None else None
        if resizes is not None:
            self._dims, self._first = saved[0], saved[1]
            raise _frame_base.Unsupported(resizes, tr.stop.site)
        if failed is not None:
            # outside the translation's handler: the eager call's
            # sys.exc_info() and its error's __context__ are eager's
            return self._eager_after(failed, args, kwargs, effects)
        if shared is not None:
            # this call only (the plans stay for other arguments), and
            # outside the translation's handlers: an error of the eager call
            # is the call's, not a failed translation to run eagerly again
            self._dims, self._first = saved[0], saved[1]
            return self._eager_for_argument(shared, args, kwargs)
        if self._entries:
            self.recompiles += 1
        numpy = tr.env_numpy or getattr(runner, "numpy_dispatch", False)
        self._numpy_env = self._numpy_env or numpy
        runner.distinct = True
        runner.fp_warned = self._fp_check(numpy)
        entry = self._add(_Entry(gm, runner, dynamic, reason, {}, frame=tr))
        self._fast = _checking_fp(entry.direct and runner.fast or _effects_call(entry), numpy,
                                  args, kwargs)
        if numpy and _C._np_fp_reported():
            # the plan reads an ndarray global or cell, found by this trace:
            # under an errstate that raises, NumPy's call (as _call's next
            # time; the trace ran nothing of the call)
            return self.fn(*args, **kwargs)
        try:
            return entry.run(args, kwargs)
        except EnvArgument as e:
            env = e.why  # (as _new_plan: this call eagerly, outside the handler)
        return self._eager_for_argument(env, args, kwargs)

    def _eager_after(self, failed, args, kwargs, effects=()):
        """The trace or translation raised an exception: the call's own
        (eager raises it too, but only after what the function did before
        it: a write into an argument, a print) or a case hop misreads (eager
        answers).  Either way eager decides.  If eager answers, hop cannot
        compile the function and it runs eagerly from now on, warned once
        with its effects, or else failed (the Effect explain() names)."""
        self._no_eager(failed.reason)
        self.eager_calls += 1
        out = self.fn(*args, **kwargs)
        self._untranslated = failed
        if self.fullgraph:
            # fullgraph promises one graph or an error: eager answered where
            # the trace raised, so there is no graph to give (eager had to
            # run first to tell the user's error from a misreading of hop's)
            raise _C.TraceError(
                f"hop.compile(fullgraph=True): {self.__name__} cannot be one graph: "
                f"{failed.reason}; the call ran eagerly once to tell (its effects happened) "
                f"and answered") from None
        self._fall_back(list(effects) or [failed], args, kwargs, run=False)
        return out

    def _trace_sizes(self, args, kwargs, dynamic):
        """_trace with dynamic sizes; where that fails (a size a function
        needs as an int: np.arange(n), range(n), len(x), x[::-1]), again with
        static sizes, as the first call was: (gm, runner, paths, note)."""
        if not _any_dynamic(dynamic):
            return self._trace(args, kwargs, dynamic) + (None,)
        try:
            out = self._trace(args, kwargs, dynamic)
            what = _handler_site(self.fn, out[1])
            if what is None and out[1].caught:
                what = str(CaughtSymbolicError(self.fn))
            if what is None:
                return out + (None,)
        except (Exception, _breaks.GraphBreak) as e:
            what = e.message if isinstance(e, _breaks.GraphBreak) else f"{type(e).__name__}: {e}"
        # what the dynamic trace raised is not what the call raises: trace
        # the static way; its error (or break) is the call's
        out = self._trace(args, kwargs, False)
        self._static = True
        return out + (f"traced with static sizes: with dynamic sizes {what}",)

    def _trace(self, args, kwargs, dynamic):
        """Traces a call: with path specialisation (not fullgraph), a branch
        point met before the call's path is known makes it run eagerly once
        to record the path, then trace again (see _paths)."""
        if self.fullgraph:
            return _trace(self.fn, args, dynamic, kwargs=kwargs, compiling=True) + (None,)
        try:
            return self._trace_paths(args, kwargs, dynamic, self._tree)
        except _paths.OtherBranches:
            if self._tree is None:
                raise
        # the earlier traces' branches are not this call's (an int argument
        # where a float was, another dtype): a tree of its own, which the
        # next retrace builds on
        return self._trace_paths(args, kwargs, dynamic, None)

    def _trace_paths(self, args, kwargs, dynamic, tree):
        paths = _paths.PathTrace(tree, None)
        try:
            return _trace(self.fn, args, dynamic, paths, kwargs=kwargs, compiling=True) + \
                (paths,)
        except _paths._NeedPath:
            pass
        # (on copies of the arguments' lists and dicts, as the trace's are:
        # the recording run is no call of the function's, and a change it
        # makes to them is one the effect finder missed)
        given = [unflatten(*flatten(a)) for a in (args, kwargs)]
        path = _paths.record_path(self.fn, _eager_args(given[0]), _eager_args(given[1]))
        for a, g in zip((args, kwargs), given):
            leaves, spec = flatten(a)
            what = structure_changed(g, spec, leaves)
            if what is not None:
                raise _breaks.ArgumentChanged(what)
        paths = _paths.PathTrace(tree, path)
        return _trace(self.fn, args, dynamic, paths, kwargs=kwargs, compiling=True) + (paths,)

    def _add(self, entry):
        """entry as the newest plan; past _LIVE_PLANS the oldest is dropped
        (a recompile_limit above it, as hop's own compile of hop.grad's and
        hop.vmap's functions has: a plan per value of an environment array
        a HOP body reads, whose contents guard fails on every change, would
        otherwise pile up without end).  Returns entry."""
        self._entries.append(entry)
        if len(self._entries) > _LIVE_PLANS:
            del self._entries[0]
        return entry

    def _fall_back(self, why, args, kwargs, run=True):
        """From now on every call runs eagerly (why: the Effects); warns
        once, naming the first and where it is.  run: this call too."""
        self._no_eager(str(why[0]))
        self._eager_why = list(why)
        self._retired.extend(self._entries)
        self._entries = []
        self._fast = None
        more = f" (and {len(why) - 1} more)" if len(why) > 1 else ""
        if self.quiet:
            return self._run_eagerly(args, kwargs) if run else None
        warnings.warn(f"hop.compile: {self.__name__} runs eagerly: {why[0]}{more}; hop cannot "
                      f"compile that yet (explain() says why)", RuntimeWarning,
                      stacklevel=_paths.user_stacklevel())
        if not run:
            return None
        return self._run_eagerly(args, kwargs)

    def _eager_for_argument(self, why, args, kwargs):
        """This call runs eagerly for an argument no plan takes (why: which,
        from _trace.eager_array); warned once, counted for explain().  The
        plans stay: later calls with other arguments use them."""
        self._no_eager(f"a call with {why}")
        if self.fullgraph:
            raise _C.TraceError(f"hop.compile(fullgraph=True): {self.__name__} cannot take "
                                f"{why} (nothing ran)")
        first = self._by_argument is None
        self._by_argument = [self._by_argument[0] + 1 if not first else 1, why]
        if first and not self.quiet:
            warnings.warn(f"hop.compile: {self.__name__}: a call with {why} runs eagerly "
                          f"(explain() counts them)", RuntimeWarning,
                          stacklevel=_paths.user_stacklevel())
        return self._run_eagerly(args, kwargs)

    def _run_eagerly(self, args, kwargs):
        self._no_eager(self._eager_why[0] if self._eager_why else "no compiled plan fits")
        self.eager_calls += 1
        return self.fn(*args, **kwargs)

    def _no_eager(self, why):
        """hop's own function (self._hop_fn) has no eager call to fall back
        on: UnsupportedError naming why hop could not compile it, where the
        eager call would raise that its HOP has no graph."""
        if self._hop_fn:
            raise _C.UnsupportedError(f"hop.compile: {self.__name__}: hop cannot compile this "
                                      f"transformed call ({why}) and it has no eager call")

    def _eager(self, args, kwargs, reason):
        self._no_eager(f"past its recompile limit: {reason}")
        if self._fallback_reason is None:
            self._fallback_reason = reason
            warnings.warn(f"hop.compile: {self.__name__} reached its recompile limit "
                          f"({self.recompile_limit}); calls that no compiled plan fits run "
                          f"eagerly from now on. The last reason: {reason}", RuntimeWarning,
                          stacklevel=_paths.user_stacklevel())
        return self._run_eagerly(args, kwargs)

    def _dynamic_for(self, args, kwargs):
        if self.dynamic is not None:
            return self.dynamic
        if self._static:
            return False
        leaves, _ = flatten(_call_tree(args, kwargs))
        shapes = [tuple(x.shape) if hasattr(x, "shape") else None for x in leaves]
        if self._dims is None:
            self._dims = [set() for _ in leaves]
            self._first = shapes
            return False
        if len(shapes) != len(self._first):
            # Another argument structure (a list of another length): its
            # leaves have no history to compare; they start static.
            return False
        for i, (now, then) in enumerate(zip(shapes, self._first)):
            if now is not None and then is not None and len(now) == len(then):
                self._dims[i].update(d for d in range(len(now)) if now[d] != then[d])
        return [tuple(d in self._dims[i] for d in range(len(s))) if s is not None else False
                for i, s in enumerate(shapes)]

    def explain(self):
        """explain() -> str: the compiled graphs, their guards, why each
        recompile happened, and why calls run eagerly.

        >>> f = hop.compile(lambda x: x + 1)
        >>> _ = f(hop.ones(3)), f(hop.ones(5))
        >>> print(f.explain().splitlines()[0])
        hop.compile(<lambda>): 2 graph(s), 1 recompile(s) (limit 8)
        """
        entries = self._retired + self._entries
        out = [f"hop.compile({self.__name__}): {len(entries)} graph(s), "
               f"{self.recompiles} recompile(s) (limit {self.recompile_limit})"]
        if self._eager_why is not None:
            out.append(f"fallback: every call runs eagerly ({self.eager_calls} so far), the "
                       f"function does what hop cannot compile yet:")
            out.extend(f"  {e.kind} at {e.site}: {e.reason}" for e in self._eager_why)
            if self._untranslated is not None:
                u = self._untranslated
                out.append(f"  (the frame translator, which replays effects, stopped at "
                           f"{u.site}: {u.reason})")
        if self._by_argument is not None:
            out.append(f"eager calls: {self._by_argument[0]} call(s) ran eagerly for their "
                       f"arguments (the last: {self._by_argument[1]})")
        if self._fallback_reason is not None:
            out.append(f"fallback: the recompile limit was reached; {self.eager_calls} call(s) "
                       f"that no graph fits ran eagerly (the first because: "
                       f"{self._fallback_reason})")
        for i, e in enumerate(entries):
            out.append(f"\n--- graph {i}: compiled because: {e.reason}")
            out.append(f"dynamic: {e.dynamic}")
            guards = e.gm.guards
            out.append("guards: " + (", ".join(guards) if guards else "(none beyond dtypes, "
                                                                      "ranks and sizes)"))
            r = e.runner
            env = r.guards.describe(r.capture_names) if r.captures or r.guards.guards or \
                r.guards.skipped else []
            out.append("environment guards:" + ("".join(f"\n  {g}" for g in env) if env else
                                                " (none)"))
            if e.frame is not None:
                out.extend(_frame_notes(e.frame))
            out.extend(_vmap_notes(e.gm.code))
            # The lowering's choices (hop_lower_note): each map batched over
            # all rows or row by row, and why.
            out.extend(f"plan: {n}" for n in r.plan.notes)
            out.append(e.gm.code.rstrip())
        if isinstance(self._tree, _paths.BranchNode):
            out.append("\ndata-dependent branches (path specialisation; each traced side is a "
                       "branch of a cond in the plan):")
            out.extend(self._tree.describe())
        return "\n".join(out) + "\n"


# The effect kinds _C._EffectsCall replays (its FX_* codes), with what the
# kind's target must be and how many values it reads; _frame_state.replay does the
# same for every kind.
_EFFECT_CODES = {"print": (0, type(None), 2), "call": (1, object, 2),
                 "cell": (2, types.CellType, 1), "global": (3, dict, 1),
                 "attr": (4, object, 1), "item": (5, object, 2)}


def _result_only(runner):
    """A translated plan's result is (the function's result, the side-effect
    table's values): with no effects (a function translated for the
    environment ndarrays it reads, _breaks.EnvArrays) runner returns the
    function's result alone from now on, as a plain trace's, so its calls
    take the plain fast paths under the same guards.  Whether it did (not
    with result nodes that are the caller's objects, _Results, whose paths
    are the pair's)."""
    s = runner.out_spec
    if runner._results is not None or s.kind != "tuple" or len(s.children) != 2 or \
            s.children[1].kind != "tuple" or s.children[1].children:
        return False
    runner.out_spec = s.children[0]
    runner._bind_calls()
    return True


_UNTRANSLATED = object()  # (CompiledFunction._translated: the translator could not)


class _NoFast(Exception):
    pass


def _leaf_tree(s, leaf, consts, traced):
    """_effects_call's tree of leaf indices for out spec s: next(leaf) for a
    traced leaf, a constant None appended to consts (not traced); _NoFast
    for a structure other than tuples.  (Not a closure: one that calls
    itself is a reference cycle, left to the cyclic gc by every compile.)"""
    if s.kind == "leaf":
        return next(leaf)
    if s.kind == "none":  # None: a constant leaf of its own
        consts.append(None)
        traced.append(False)
        return len(consts) - 1
    if s.kind != "tuple":
        raise _NoFast
    return tuple(_leaf_tree(c, leaf, consts, traced) for c in s.children)


def _same_leaves(tree, again, traced):
    """tree with the node at each path of again ({path: an earlier path},
    Runner._results: one object at both, as eager's `lst.append(y);
    return y`) the leaf index of the earlier path: the C call builds one
    object per leaf index.  _NoFast for an earlier node that is no traced
    tensor leaf (a tuple built twice would be two objects)."""
    def at(t, path):
        for i in path:
            t = t[i]
        return t

    def put(t, path, v):
        if not path:
            return v
        return t[:path[0]] + (put(t[path[0]], path[1:], v),) + t[path[0] + 1:]

    for p, first in sorted(again.items()):
        i = at(tree, first)
        if type(i) is not int or not traced[i]:
            raise _NoFast
        tree = put(tree, p, i)
    return tree


def _args_at(tree, same, nargs):
    """The (leaf index, argument index) pairs of the C call for same
    (Runner._results: a path of the result -> ("arg", path in the
    arguments)): each a leaf that is a positional argument itself, as a
    break's local holding the argument (Runner.finish puts it in place);
    _NoFast for any other."""
    out = []
    for path, how in same.items():
        i = tree
        for k in path:
            if type(i) is not tuple or k >= len(i):
                raise _NoFast
            i = i[k]
        if type(i) is not int or how[0] != "arg" or len(how[1]) != 1 or \
                not 0 <= how[1][0] < nargs:
            raise _NoFast
        out.append((i, how[1][0]))
    return tuple(out)


def _mutable_nodes(spec):
    """How many lists, dicts and other structures but tuples spec's
    children hold, at any depth."""
    return sum((c.kind not in ("leaf", "none", "tuple", "namedtuple") and
                not _pytree.is_array_node(c.cls)) + _mutable_nodes(c) for c in spec.children)


def _shared_with_env(args, kwargs, frame):
    """Why a call runs eagerly when an argument's list, dict or set is an
    object the translation frame reached through a global or closure
    (_frame.shared_containers), or None."""
    shared = _frame.shared_containers(nodes((tuple(args), kwargs or {})), frame.env_ids) \
        if frame.env_ids else None
    return None if shared is None else f"a {shared} that is the same object as a " \
                                       f"{_frame._SHARED_WHAT}"


def _effects_call(entry):
    """The C bound call (_C._EffectsCall) of a plan: the builtin names'
    guard in C and the other guards' fast check (Guards.check_c),
    the plan, the result (and for a translated plan the side-effect table's
    values) rebuilt from its outputs, the table replayed; no Python frame.
    The lifted ints are read per call in C as lifted_now reads them, and
    the plan's number outputs made as Runner.finish makes them.
    None where the call needs the general path (Entry.run, Runner.call):
    a graph break, arguments that are not all tensors, keyword arguments,
    a write-back, results made or copied per call or the caller's objects
    returned as themselves (one plan value appended and returned,
    Runner._results' "again", is taken: one leaf index at both places),
    guards on an argument, a SymInt result, a structure other than tuples,
    an effect inside an argument; and a plan with no guards to check,
    which Plan.bind_tensors binds."""
    fr, r = None if entry.direct else entry.frame, entry.runner
    res = r._results
    if not r.flat_in or res is not None and (res.fresh or res.copied or fr is None or
                                             res.same and (res.again or r.kw)):
        return None
    if getattr(r.guards, "uses_args", False):
        return None  # (its fast check, given no arguments, never holds)
    if fr is None and (r.fast is not None or r._check is None or any(r.sym_out)):
        return None
    stop = fr.stop if fr is not None else None
    if fr is not None and fr.holds:
        return None  # (results kept past their call: replay keeps them, _frame_state.replay)
    if stop is not None and (stop.prefix is not None or stop.numpy):
        return None  # (the part before the break in Python; NumPy code's fp checks)
    # the lifted ints (_frame_state.lifted_now, in C): (cell,) or (dict, key)
    # (an attribute's, (obj, name), is not: the general path reads obj.__dict__)
    lifted = tuple((base,) if kind == "cell" else (base, name)
                   for kind, base, name in (fr.lifted if fr is not None else ()))
    if any(type(s[0]) is not (types.CellType if len(s) == 1 else dict) for s in lifted):
        return None
    # Runner.finish's numbers: int(x.item()), float(x.item())
    sym = bytes(2 if s == "float" else 1 if s else 0 for s in r.sym_out)
    nargs = len(r.statics) - len(lifted)
    consts = list(r.template)
    traced = [t is None for t in consts]
    leaf = iter(range(len(consts)))

    spec = r.out_spec
    try:
        if fr is None:
            # (the result, no effects): the shape the C call takes (tree
            # first: a None in the result adds its constant leaf)
            whole = (_leaf_tree(spec, leaf, consts, traced), ())
            return _C._EffectsCall(r.plan, r, len(r.statics), r._check_c, tuple(consts),
                                   bytes(traced), whole, (), (), None, r._names, r.alias, None,
                                   None, r._env)
        if spec.kind != "tuple" or len(spec.children) != 2:
            return None
        whole = _leaf_tree(spec, leaf, consts, traced)
        if res is not None:
            whole = _same_leaves(whole, res.again, traced)
        args_at = _args_at(whole, res.same, len(r.statics) - len(lifted)) \
            if res is not None and res.same else None
    except _NoFast:
        return None
    values = whole[1]
    if not isinstance(values, tuple) or len(values) != len(fr.effects):
        return None
    table = []
    for e, v in zip(fr.effects, values):
        code = _EFFECT_CODES.get(e.kind)
        if code is None or not isinstance(e.target, code[1]) or \
                isinstance(e.target, _frame_state._ArgPath) or not isinstance(v, tuple) or \
                len(v) < code[2]:
            return None
        if code[0] <= 1 and not (isinstance(v[0], tuple) and isinstance(v[1], tuple) and
                                 all(isinstance(kv, tuple) and len(kv) == 2 for kv in v[1])):
            return None  # print and calls: (positional, keyword items)
        table.append((code[0], e.target, e.key))
    alias = r.alias[:nargs] if r.alias is not None else None
    # (a graph break: the plan's result is the frame's stack and locals,
    # which the break's resume takes, as Entry.run hands them)
    then = None if stop is None else functools.partial(stop.resume, compile=_compile_resume)
    return _C._EffectsCall(r.plan, r, nargs, r._check_c, tuple(consts), bytes(traced), whole,
                           tuple(table), lifted, sym, r._names, alias, then, args_at, r._env)


def _resizes_in_python(stop):
    """Why a translation that ends at graph break `stop` runs eagerly when
    the code Python runs around the break (after it; before it too when
    the part before runs in Python, Break.prefix) may call `.resize()`, or
    None.  hop's interpreter runs that code holding references to the
    function's values (its frame's locals and stack, the resume's
    arguments) that eager's frame does not have, and NumPy's resize counts
    them (refcheck): `x = a * 1.0; if a.sum() > 2: x.resize((5, 1))` raised
    "cannot resize an array that references or is referenced by another
    array" where eager resizes x."""
    code = getattr(stop.func, "__code__", None) if stop is not None else None
    if code is None:
        return None
    start = 0 if stop.prefix is not None else stop.pc
    codes = [code]
    for c in codes:
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    for c in codes:
        for i in dis.get_instructions(c):
            if i.argval == "resize" and (c is not code or i.offset >= start):
                line = i.positions.lineno or c.co_firstlineno
                return (f"it calls .resize() at {_frame_base._site(c, line)}, in "
                        f"the code Python runs around the graph break at {stop.site}, where "
                        f"hop's interpreter holds references to the function's arrays that "
                        f"NumPy's resize would count (refcheck) and eager's frame does not")
    return None


def _compile_resume(resume):
    """The CompiledFunction of a graph break's resume function (compiled on
    its first call, cached by the Break)."""
    return CompiledFunction(resume)


def _frame_notes(tr):
    """explain()'s lines for a translated graph: the ints lifted to inputs,
    the side-effect table replayed after every call, in order, the
    data-dependent ifs traced as conds, and the break it ends at."""
    out = []
    if tr.lifted:
        out.append("lifted to plan inputs (their new values are outputs): " +
                   ", ".join(f"dict item [{n!r}]" if k == "item" else
                             f"attribute {type(b).__name__}.{n}" if k == "attr" else
                             f"{'nonlocal' if k == 'cell' else 'global'} {n}"
                             for k, b, n in tr.lifted))
    out.append(f"side effects replayed after each call ({len(tr.effects)}):" +
               "".join(f"\n  {e.what} at {e.site}" for e in tr.effects))
    out.extend(tr.merged)  # the data-dependent ifs traced as conds (no break)
    if tr.stop is not None:
        out.append(tr.stop.describe())
        for key, cf in tr.stop.resumes.items():
            floats = ""
            if hasattr(cf, "floats"):  # (_frame_resume._FloatInputs)
                floats = " (its floats are inputs: " + \
                    ", ".join(cf.cf.fn._arg_name(i) for i in cf.floats) + ")"
                cf = cf.cf
            out.append(f"resume at instruction {key[0]}{floats}:")
            out.extend("    " + line for line in cf.explain().rstrip().splitlines())
    return out


def _fullgraph_message(name, effects):
    lines = [f"hop.compile(fullgraph=True): {name} has Python effects hop cannot compile "
             f"(nothing ran):"]
    lines.extend(f"  {e.kind} at {e.site}: {e.reason}" for e in effects)
    return "\n".join(lines)


def _handler_site(fn, runner):
    """Where the code a dynamic trace ran (fn's own, the functions its
    plan's code guard lists) may catch an exception ('the function may
    catch an error raised on symbolic sizes (an exception handler in
    f.py:3)'), or None.  An error hop raised on a symbolic size (a
    broadcast of f32[3] with f32[s0]) names the symbol, and the C
    operation that raised it takes back the guards of its decisions: a
    handler that caught it would bake that text, or the other branch, into
    a plan that then answered for every size, the size that broadcasts
    too.  Such a function is traced with static sizes, whose errors are
    eager's and whose sizes are guarded."""
    codes = []
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if isinstance(code, types.CodeType):
        codes.append((getattr(fn, "__qualname__", "?"), code))
    names = getattr(getattr(runner, "guards", None), "names", None)
    for f, c in getattr(names, "codes", ()):
        if isinstance(c, types.CodeType):
            codes.append((f.__qualname__, c))
    for name, code in codes:
        line = _handler_line(code)
        if line is not None:
            return f"{name} may catch an error raised on symbolic sizes (an exception " \
                   f"handler at {code.co_filename}:{line})"
    return None


def _handler_line(code):
    """The first line of an exception handler (an except, a with block's
    exit, a finally) in code or its nested code, or None."""
    found = False
    for ins in dis.get_instructions(code):
        found = found or ins.opname == "PUSH_EXC_INFO"
        if found and ins.positions is not None and ins.positions.lineno is not None:
            return ins.positions.lineno  # (the handler's first line: its own has none)
    if found:
        return code.co_firstlineno
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            line = _handler_line(const)
            if line is not None:
                return line
    return None


_VMAP_WHY = {
    "select": "select: every branch is cheap and pure (at most 16 elementwise ops in all, no "
              "HOP or foreign call), so all run on the whole batch and where picks",
    "compact": "compaction: a branch is not cheap or not pure (docs/VMAP.md), so the examples "
               "are partitioned and each branch runs once on its own",
}


def _vmap_notes(code):
    """explain()'s vmap lines: one per cond/switch that vmap batched with a
    batched predicate (its branches' subgraphs are <branch>_vmap_select or
    _vmap_compact, defined one after the other; a cond's true branch starts a
    new one), and one per call that runs as a loop over the batch."""
    import re
    # a vmap node's second body is f on one example, kept for an outer vmap
    # to batch (docs/VMAP.md); it never runs, so its own vmaps are not told
    kept = set(re.findall(r"= vmap\(\[[^]]*\], \[[^]]*\], \w+, (\w+), \(", code))
    lines, skip = [], None
    for line in code.splitlines():
        indent = len(line) - len(line.lstrip())
        if skip is not None and line.strip() and indent <= skip:
            skip = None
        m = re.match(r"^( *)def (\w+)\(", line)
        if skip is None and m and m.group(2) in kept:
            skip = len(m.group(1))
        if skip is None:
            lines.append(line)
    code = "\n".join(lines) + "\n"
    groups = []
    for m in re.finditer(r"^( *)def ((cond_true|cond_false|switch_branch)_\w*?)_vmap_"
                         r"(select|compact)\(", code, re.M):
        indent, name, kind, how = m.group(1), m.group(2), m.group(3), m.group(4)
        g = groups[-1] if groups else None
        if (g is None or kind == "cond_true" or g["indent"] != indent or g["how"] != how or
                (kind == "switch_branch") != g["switch"]):
            g = {"indent": indent, "how": how, "switch": kind == "switch_branch", "names": []}
            groups.append(g)
        g["names"].append(name)
    notes = [f"vmap: {'switch' if g['switch'] else 'cond'} ({', '.join(g['names'])}): "
             f"{_VMAP_WHY[g['how']]}" for g in groups]
    # a vmap node an outer vmap composed with its own batch: its f runs once
    # over both batches, in a body named <f>_vmap_composed (hop/vmap.c)
    for m in re.finditer(r"= vmap\(\[[^]]*\], \[[^]]*\], (\w+_vmap_composed), (\w+), \(",
                         code):
        notes.append(f"vmap: {m.group(2)} is nested in an outer vmap: it runs once over the "
                     f"examples of both batches flattened into one ({m.group(1)}), not as a loop")
    # a call with no batch rule runs as a map over the batch: its body is
    # <call>_vmap_loop (hop_batch_loop)
    for m in re.finditer(r"^ *def (\w+?)_vmap_loop\(", code, re.M):
        notes.append(f"vmap: {m.group(1)} has no batch rule: it runs as a loop over the batch "
                     f"(a map whose body {m.group(1)}_vmap_loop makes the call on one example)")
    return notes


def _eager_argument(args, kwargs, leaves="arrays"):
    """Why a call must run eagerly for one of its arguments
    (_trace.eager_array; a structure at two places of them, with leaves
    "arrays" one hop.numpy array at two places too:
    _frame.repeated_containers), or None."""
    twice = _frame.repeated_containers(args, kwargs, leaves)
    if twice is not None:
        return f"{twice}, which hop would trace as two objects"
    view = _copy_view_argument(args, kwargs)
    if view is not None:
        return view
    np = sys.modules.get("numpy")
    if np is None:
        return None
    leaves, _ = flatten(_call_tree(args, kwargs))
    for x in leaves:
        if isinstance(x, np.ndarray):
            why = eager_array(x)
            if why is not None:
                return why
    return None


def _copy_view_argument(args, kwargs):
    """Why a call takes a writable hop.numpy view made as a copy (`G[::-1]`
    of a hop.numpy array, eagerly: ndarray._cp), or None: a plan would write
    into the copy alone, where eager's write reaches the array it views
    (_storage.eager_write), so such a call runs eagerly (a graph break's
    resume handed such a view too)."""
    # (hop.numpy loaded, or half-imported by another thread: no array yet)
    cls = getattr(sys.modules.get("hop.numpy"), "ndarray", None)
    if cls is None:
        return None
    todo = [args, kwargs]
    while todo:
        x = todo.pop()
        if isinstance(x, cls):
            if x._cp is not None and not x._ro and not x._scalar:
                return "a writable hop.numpy view made as a copy (a reversed or flipped " \
                       "view), whose writes reach the array it views only eagerly"
        elif isinstance(x, (list, tuple)):
            todo.extend(x)
        elif isinstance(x, dict):
            todo.extend(x.values())
    return None


def _array_leaf(x):
    """Whether an argument leaf is an array (a hop.Tensor, an ndarray): not
    one of the constants a decision compares (_shared_again)."""
    np = sys.modules.get("numpy")
    return isinstance(x, _C.Tensor) or np is not None and isinstance(x, np.ndarray)


_PLAIN = (int, float, bool, str, complex, type(None))


def _same_consts(xs, ys):
    """Whether two calls' constant leaves are the same: one object, or
    equal plain values of one type (as the plans' statics compare them)."""
    return len(xs) == len(ys) and all(
        x is y or type(x) is type(y) and type(x) in _PLAIN and x == y for x, y in zip(xs, ys))


def _plain_arrays(args, kwargs):
    """(args, kwargs) of a transformed call (hop.grad's, hop.vmap's) with
    each ndarray no plan takes (_trace.eager_array) as a native, aligned
    copy: its function is traced, so the byte order and alignment NumPy
    would keep in copies and views are not seen.  A subclass (np.matrix, a
    masked array) gives its operations other meanings: TypeError."""
    np = sys.modules["numpy"]
    leaves, spec = flatten(_call_tree(args, kwargs))
    out = []
    for i, x in enumerate(leaves):
        if isinstance(x, np.ndarray) and eager_array(x) is not None:
            if type(x) is not np.ndarray:
                raise TypeError(
                    f"hop's transformations take plain ndarrays: argument leaf {i} is a "
                    f"{type(x).__module__}.{type(x).__qualname__}, a subclass of numpy.ndarray "
                    f"whose operations mean something else (np.asarray(x) is its plain array)")
            x = np.require(x, x.dtype.newbyteorder("="), "A")
        out.append(x)
    tree = unflatten(out, spec)
    return (tuple(tree), {}) if not kwargs else (tuple(tree[0]), tree[1])


def _numpy_call(args, kwargs):
    """Whether a call takes NumPy's semantics: an ndarray, a NumPy scalar or
    a hop.numpy array among its arguments.  While NumPy's error state
    raises, calls, prints or logs for some floating-point error
    (_C._np_fp_reported: the caller's numpy.errstate or numpy.seterr) such a
    call runs fn eagerly, through NumPy, which reports the error as it does
    eagerly (hop's kernels report none); the plans stay for the other calls.
    (Plan.bind_arrays's C call asks the same and leaves such a call to
    _call_args.)  A call on hop.Tensors only is not NumPy's: its plan does
    not read NumPy's state, as hop.Tensor's eager operations do not.  A call
    with no tensor among its arguments (Python numbers only) is NumPy's
    where hop.numpy is loaded: every array it computes with is one the
    function made, by NumPy's functions (`np.int8(a) + np.int8(b)` of 127
    and 127 warns "overflow encountered in scalar add" on every call, as
    NumPy; a function of hop's own API gives the same eagerly)."""
    np = sys.modules.get("numpy")
    if np is None:
        return False
    hnp = loaded_hop_numpy()
    kinds = (np.ndarray, np.generic) if hnp is None else (np.ndarray, np.generic, hnp.ndarray)
    # (not flatten's leaves: a hop.numpy array's is its tensor)
    todo = [args, kwargs]
    tensors = False
    while todo:
        x = todo.pop()
        if isinstance(x, kinds):
            return True
        if isinstance(x, (tuple, list)):
            todo.extend(x)
        elif isinstance(x, dict):
            todo.extend(x.values())
        elif isinstance(x, _C.Tensor):
            tensors = True
    return hnp is not None and not tensors


def _checking_fp(fast, numpy, args, kwargs):
    """The bound call fast of a new plan, for a plan whose floating-point
    flags are NumPy's (numpy: it reads an ndarray of the function's
    environment, or NumPy's dispatch of a hop.Tensor made some of its ops,
    `np.multiply(t, G)`) called with hop.Tensors (not _numpy_call): a C
    bound call of hop.Tensors (_ArrayCall) then checks them as an ndarray
    call's (its _numpy_fp: NumPy's error state before the run, the flags
    after it, a flag NumPy warns for the call again through NumPy); another
    (_EffectsCall) checks none, so such calls take the general path (None),
    whose Runner.fp_warned checks them."""
    if not numpy or fast is None or _numpy_call(args, kwargs):
        return fast
    if type(fast).__name__ == "_ArrayCall":  # (hop._C._ArrayCall, not exported)
        fast._numpy_fp = 1
        return fast
    return None


def _fp_warned(args, kwargs):
    """A runner's fp_warned (_trace._Runner) for most functions: a
    floating-point exception the plan raised that the caller's NumPy error
    state warns for, in a call with NumPy's semantics."""
    return _C._np_fp_warned() and _numpy_call(args, kwargs)


def _fp_any(args, kwargs):
    """fp_warned for a function that may set NumPy's error state itself
    (_sets_fp_state): any floating-point exception the plan raised.  The
    plan computes as if no numpy.errstate were entered, and only NumPy's
    run knows which of its ops ran under which state."""
    return _C._fp_status() != 0 and _numpy_call(args, kwargs)


def _fp_warned_env(args, kwargs):
    """_fp_warned of a plan that reads an ndarray of the function's
    environment: a NumPy call whatever its arguments."""
    return _C._np_fp_warned()


def _fp_any_env(args, kwargs):
    """_fp_any of a plan that reads an ndarray of the environment."""
    return _C._fp_status() != 0


_FP_STATE_NAMES = frozenset(["errstate", "seterr", "seterrobj"])


def _sets_fp_state(fn, seen=None, depth=3):
    """Whether fn's code, a function nested in it or a Python function it
    names as a global or closure value (to depth levels) names
    numpy.errstate or numpy.seterr: a look at the names, not a proof (a
    state set by a method reached through an object is not seen)."""
    code = getattr(fn, "__code__", None)
    if code is None or depth < 0:
        return False
    seen = set() if seen is None else seen
    if id(code) in seen:
        return False
    seen.add(id(code))
    todo = [code]
    names = set()
    while todo:
        c = todo.pop()
        names.update(c.co_names)
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    if names & _FP_STATE_NAMES:
        return True
    env = getattr(fn, "__globals__", {})
    callees = [env.get(n) for n in names]
    callees += [c.cell_contents for c in (getattr(fn, "__closure__", None) or ())
                if _cell_set(c)]
    return any(isinstance(f, types.FunctionType) and _sets_fp_state(f, seen, depth - 1)
               for f in callees)


def _cell_set(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _eager_args(args):
    """args (a tuple, or a dict of keyword arguments) for the recording run:
    an ndarray as the function sees it when traced (a hop.numpy array over
    its memory, never written)."""
    leaves, spec = flatten(args)
    np = sys.modules.get("numpy")
    if np is None or not any(isinstance(x, np.ndarray) for x in leaves):
        return args
    from .numpy import NumpyArg
    return unflatten([NumpyArg(_C.asarray(x), owned=False) if isinstance(x, np.ndarray) else x
                      for x in leaves], spec)


# the most plans a compiled function keeps (_add: the oldest dropped); a
# recompile_limit under it never reaches it
_LIVE_PLANS = 16


def compile(fn=None, *, dynamic=None, recompile_limit=8, fullgraph=False):
    """compile(fn=None, *, dynamic=None, recompile_limit=8, fullgraph=False) -> CompiledFunction

    Compiles fn with a guarded, bounded cache of traced plans; usable as
    @hop.compile or @hop.compile(dynamic=True).  A call returns what fn
    returns eagerly, or raises what it raises.  dynamic=None makes dims
    dynamic once they change between calls; True from the first call; False
    never.  After recompile_limit recompiles, calls no plan fits run eagerly
    (a RuntimeWarning says so once).  Python control flow on traced values
    (`if x.sum() > 0:`) is specialised on the paths calls take, unless
    fullgraph: then it is the TraceError pointing to hop.cond, as in
    hop.trace.  Python effects -- a global or nonlocal assigned (an int one
    becomes a plan input: no recompile per call), an attribute or item
    written, a list appended to, print -- are replayed after every call of
    the plan, in order, with its values; a conversion of a traced value
    (str, float, .tolist()) is a graph break: the part before runs compiled,
    the instruction in Python, the rest in a compiled resume function
    (docs/ARCHITECTURE.md, "The frame translator").  What hop cannot compile
    that way (next(), random draws, the clock, a break in a loop) makes
    every call run eagerly (a RuntimeWarning says so once; explain() lists
    why); with fullgraph it raises hop.TraceError instead, before any
    effect (a raise of fn's own met while tracing runs fn eagerly first:
    its error is the answer, and only if fn then answers is it the
    TraceError).  Keyword arguments are guarded like positional ones.

    >>> @hop.compile(dynamic=True)
    ... def g(x):
    ...     return x.relu() + 1
    >>> g(hop.tensor([-1.0, 2.0])), g(hop.ones(4)), g.recompiles
    (hop.tensor([1., 3.]), hop.tensor([2., 2., 2., 2.]), 0)
    """
    if fn is None:
        return lambda f: compile(f, dynamic=dynamic, recompile_limit=recompile_limit,
                                 fullgraph=fullgraph)
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        # hop.compile(m.step): the method's function compiled and bound to
        # m, as @hop.compile on the method binds (CompiledFunction.__get__:
        # m an argument guarded by identity), so that the frame translator,
        # which takes Python functions, compiles a method with effects
        # (before, such a method ran eagerly on every call)
        return types.MethodType(CompiledFunction(fn.__func__, dynamic, recompile_limit,
                                                 fullgraph), fn.__self__)
    return CompiledFunction(fn, dynamic, recompile_limit, fullgraph)
