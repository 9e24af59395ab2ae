"""Where hop.compile's compiled part ends: Python that needs a traced value.

While a function is traced its tensors have no values, so Python that needs
one cannot be part of a graph: float(), int(), complex(), .tolist(), .item()
of a float, np.asarray() of a traced value, its text (str, repr, format,
f-strings, print), hash(), round() to an int, a SymFloat's comparisons and
conversions, a decision on an unbacked SymInt (bool, int, a comparison of
.item() of an int tensor; from C), bool() inside a HOP body, and a NumPy
function hop.numpy lacks (hop.numpy._ufuncs.fallback: NumPy computes it).  Every such place calls
`conversion(error, message)`, the one owner of that decision:

  - in a hop.compile trace, outside HOP bodies, it raises GraphBreak: the
    compiled part ends here.  hop.compile then runs the call (and later calls)
    eagerly and explain() says why; fullgraph=True raises the break's error
    instead.  (The graph-breaks issue will resume compiled code after it.)
  - anywhere else (hop.trace, inside a HOP body, which must be one graph) it
    raises `error(message)`: the error it always was.

GraphBreak derives from BaseException, so a function's own `except
Exception:` cannot turn it into a silently different value; each one is also
recorded on the trace (`raised`), so a trace whose function swallowed one
anyway (`except BaseException:`) still ends there.

Text is special: hop's own code formats traced values in its messages and
introspection (`repr(proxy)` names its node), so `text(...)` gives the text
to hop, NumPy and hop.trace, and is a break only for the user's code in a
compile trace.
"""

import os
import sys

from . import _C
from . import _paths

__all__ = ["GraphBreak", "conversion", "raised", "internal", "text"]

_KEY = "hop.graph breaks"    # Trace.scratch: the breaks raised in this trace
_COMPILE = "hop.compile"     # Trace.scratch: set for a trace hop.compile makes
# Trace.scratch: the tracer depth of a side of a data-dependent `if` the frame
# translator traces as a cond body (_frame_merge, Translator._merge_if): the
# function's own code runs there, so a conversion is a break, as at the root
SIDE = "hop.frame side"
_HOPS_OWN = "hop.compile of hop's function"  # Trace.scratch: mark_compile's hops_own
# Trace.scratch: id(ndarray) -> (its _guards.Source, the ndarray) for each
# environment ndarray a HOP body of a hop.compile trace reads
# (_purity.body_env_arrays; guarded on its contents)
BODY_ARRAYS = "hop.body env arrays"
# Trace.scratch: the frame translator's taker of a warning hop.numpy gives
# (Translator._library_warning; replayed_warning)
WARN = "hop.compile warnings"
# Trace.scratch: set when NumPy's dispatch of a hop.Tensor (__array_ufunc__,
# __array_function__: `np.multiply(t, G)`, `G * t`) sent a call to hop.numpy
# while tracing: eagerly such a call warns and raises under NumPy's error
# state, so the plan's floating-point flags are NumPy's (hop.compile checks
# them as for ndarray arguments, _compile._fp_check)
NUMPY_DISPATCH = "hop.numpy dispatch"


class EnvArrays(BaseException):
    """hop.compile's trace of a function that can reach a plain ndarray
    through its environment (a global, a closure cell, a default, an
    attribute or item of one): such a function is traced through the frame
    translator instead (internal to hop.compile), which gives the function
    hop.numpy's array over the ndarray's memory (_frame_state._env_array),
    so that what it computes from it (`G * 2`, `np.sin(G)`, `G.sum()`) is
    in the graph and reads the array on every call; run by NumPy itself
    under the plain trace, it would be a constant of the plan that a
    change inside the array does not reach (issue 28)."""


class ArgumentChanged(BaseException):
    """hop.compile's plain trace (no Python effects found) of a function
    that changed the structure of its arguments all the same: a list or
    dict argument grown, shrunk or given another item through a path the
    effect finder does not follow (`inner = [lst]; inner[-1].append(1)`).
    The trace changed its own rebuilt copy, so a plan would never change
    the caller's: the call is translated instead, whose side-effect table
    records the change on the argument (internal to hop.compile)."""

    def __init__(self, what):
        super().__init__(what)
        self.what = what


class GraphBreak(BaseException):
    """The compiled part of a function ends here (internal to hop.compile:
    never seen by a caller).  error(message) is what hop.trace raises for
    the same place; site is the user's file:line."""

    def __init__(self, error, message, site):
        super().__init__(message)
        self.error = error
        self.message = message
        self.site = site

    def as_error(self):
        return self.error(self.message)

    def describe(self):
        return f"{self.message} (at {self.site})"


def mark_compile(tr, hops_own=False):
    """Marks tr (started) as a trace of hop.compile: conversions in it are
    breaks.  Its root's depth is where the function's own code runs.
    hops_own: the function is hop's (hop.grad's, hop.vmap's compile of the
    user's function, which runs in a body): no eager call to fall back to."""
    tr.scratch[_COMPILE] = _C._trace_depth()
    if hops_own:
        tr.scratch[_HOPS_OWN] = True


def in_compiled_body():
    """Whether hop.compile of the user's function traces a body of a HOP
    now (hop.map, hop.cond, a loop's body; not a side of the function's own
    data-dependent `if`, not hop.grad's or hop.vmap's own compile)."""
    tr = _C.tracing()
    return tr is not None and tr.scratch.get(_COMPILE) is not None and \
        not tr.scratch.get(_HOPS_OWN) and _compiling() is None


def _compiling():
    """The active trace when it is hop.compile's and the function's own
    code runs (no HOP body is being traced), else None."""
    tr = _C.tracing()
    if tr is None:
        return None
    root = tr.scratch.get(_COMPILE)
    if root is None or _paths._in_body():
        return None
    # path specialisation runs the code after a branch point in a side of a
    # cond: still the function's own code
    paths = tr.scratch.get(_paths.PATHS)
    here = paths.depth() if paths is not None else tr.scratch.get(SIDE)
    if _C._trace_depth() != (root if here is None else here):
        return None
    return tr


def in_compile_trace():
    """Whether the active trace is one hop.compile makes (anywhere in it)."""
    tr = _C.tracing()
    return tr is not None and tr.scratch.get(_COMPILE) is not None


def replayed_warning(message, category, where=None):
    """Whether hop.compile's frame translator took a warning that hop.numpy
    gives, for a call of the function's own code (not in a HOP body): an
    entry of the side-effect table, given after each call's plan at the
    user's line (or where: file, line, globals), as eager gives it on every
    call."""
    tr = _compiling()
    take = None if tr is None else tr.scratch.get(WARN)
    return take is not None and take(message, category, where)


def conversion(error, message):
    """Raises the break for a conversion of a traced value in a compile trace
    (see the module), else error(message)."""
    tr = _compiling()
    if tr is None:
        if _paths.recording():  # (hop.compile's eager run for the path: it ends here)
            raise _paths.BreakMet()
        raise error(message + _in_body(sys._getframe(1)))
    _break(tr, error, message, _paths.user_site(sys._getframe(1)))


def _in_body(frame):
    """The context of a conversion in a HOP body ("" elsewhere): which body,
    the user's line and why a body cannot have it."""
    if _C._trace_depth() < 2:
        return ""
    body = _C._body_name() or "a HOP body"
    how = "hop.compile makes no graph break inside one" if in_compile_trace() else \
        "traced once"
    return (f" (in {body}, at {_paths.user_site(frame)}: a HOP body is one graph, {how}, so "
            f"its Python code cannot read a traced value)")


def _break(tr, error, message, site):
    """Raises the break, recorded on trace tr (see `raised`)."""
    brk = GraphBreak(error, message, site)
    tr.scratch.setdefault(_KEY, []).append(brk)
    try:
        raise brk
    finally:
        del brk  # (its traceback holds this frame: a cycle for the cyclic gc)


def body_effect(message, site):
    """A Python effect of a HOP body that a plan cannot repeat (print(), a
    functools cache's call: _purity.body_effects): in
    a hop.compile trace, at a HOP call of the function's own code, a break
    there (the call then runs in Python, with its effects, on every call);
    elsewhere nothing (hop.trace runs a body's print once, while tracing, as
    jax.jit does)."""
    tr = _compiling()
    if tr is not None:
        _break(tr, _C.TraceError, message, site)


def forget(tr):
    """Drops the breaks recorded on trace tr once it has stopped (a break's
    traceback holds the trace's proxies: kept there, a cycle the collector
    cannot see through)."""
    tr.scratch.pop(_KEY, None)


def raised(tr):
    """The first break raised in trace tr, or None."""
    breaks = tr.scratch.get(_KEY)
    return breaks[0] if breaks else None


_HOP_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


# Code of hop that acts for the user's code: the frame translator's calls
# and instructions (hop/_frame.py) are the user's function running.
ACTS_FOR_USER = set()


def internal(frame):
    """Whether frame runs hop's or NumPy's code (not the user's)."""
    if frame.f_code in ACTS_FOR_USER:
        return False
    name = frame.f_globals.get("__name__") or ""
    return name == "hop" or name.startswith(("hop.", "numpy")) or \
        frame.f_code.co_filename.startswith(_HOP_DIR)


def _for_user(frame):
    """Whether frame (the one that asked for a traced value's text) is the
    user's code in a compile trace, where that text is a break."""
    return _compiling() is not None and not internal(frame)


def text(what, value_text, frame):
    """The text of a traced value (what names it) for frame, the code that
    asked for it: value_text for hop, NumPy and hop.trace; in a compile trace
    the user's code gets a break."""
    if not _for_user(frame):
        return value_text
    conversion(_C.TraceError, f"str() of {what}: its text is known only when the plan runs, "
                              f"not while tracing")


def proxy_text(t, value_text):
    """repr()/str() of a proxy (called from C: the caller is the frame that
    asked)."""
    return text("a traced value", value_text, sys._getframe(1))


def _symint_value(s, how):
    """s specialised to its value (a guard, as int() does), or a break for a
    value known only at run time (an unbacked symbol)."""
    try:
        return int(s)
    except _C.DataDependentError:
        conversion(_C.TraceError, f"{how} of the SymInt {s.expr}: its value is known only when "
                                  f"the plan runs, not while tracing")


def symint_str(s, value_text):
    """str() of a SymInt: its expression for hop and in hop.trace, the int's
    text for the user's code in a compile trace (as eagerly)."""
    if not _for_user(sys._getframe(1)):
        return value_text
    return str(_symint_value(s, "str()"))


def symint_repr(s, value_text):
    if not _for_user(sys._getframe(1)):
        return value_text
    return repr(_symint_value(s, "repr()"))


def symint_hash(s, expr_hash):
    """hash(s) (called from C): expr_hash for hop's and NumPy's code; in the
    user's code a dynamic size used as a set member or a dict key needs its
    int (the expression's hash missed every int key silently: `n in {3, 4}`
    was False), and the int's hash would let the symbol itself stay in a set,
    a dict or a functools.cache after the trace: a break (hop.compile traces
    the function with static sizes), or TypeError (hop.trace)."""
    if internal(sys._getframe(1)):
        return expr_hash
    conversion(TypeError, f"hash() of the SymInt {s.expr}: a dynamic size used as a set member "
                          f"or a dict key (`n in {{3, 4}}`, a functools.cache argument) needs "
                          f"its int; hop.compile traces such a function with static sizes")


def symint_format(s, spec):
    """format(s, spec): the int's format for the user's code in a compile
    trace, else the expression's (an empty spec; another is a TypeError)."""
    if not _for_user(sys._getframe(1)):
        if spec:
            raise TypeError(f"unsupported format string passed to hop.SymInt.__format__ "
                            f"(the SymInt {s.expr} has no value while tracing)")
        return s.expr
    return format(_symint_value(s, "format()"), spec)
