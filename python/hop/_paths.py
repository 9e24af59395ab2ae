"""hop.compile's path specialisation: Python control flow on data
(`if (x > 0).all():`, `while err > tol:`, NumPy's casting of a 0-d value by
its value) in a compiled function.

A trace cannot take both sides of a Python `if`, so hop.compile traces the
side the current call takes, and the plan checks, at run time, that a later
call takes the same one.  Each such `if` is a *branch point*: bool() of a
traced tensor at the top level of the function (not inside a HOP body).  The
branches a function met form a tree (BranchNode), kept by the
CompiledFunction and grown by every trace.

Tracing one call:

1. The function runs on proxies.  At the first branch point the side the
   current call takes must be known: the trace stops (_NeedPath), the
   function runs once eagerly on the call's own values with bool() recorded
   (the path), and the trace starts again with it.
2. At a branch point the predicate becomes a node of the graph and the rest
   of the function a cond on it: each side is traced by running the function
   again from the start in that branch's body, with the decisions before it
   forced, so "the rest of the function" is exactly what Python executes
   after the `if`.  The side the call takes is traced (live); a side an
   earlier call took is traced too (it is in the tree); a side no call took
   is a *trap*: a body whose own guard (u == other side, on the predicate
   read as an unbacked symbol) fails when it would run, with outputs of the
   right kinds that are never used.  The function's values before the
   branch point are recomputed in the bodies (dead ones are never used).
3. A call that takes a trap side fails that guard (a GuardError, as any
   guard): hop.compile retraces, and the new plan has both sides of that
   branch in one cond.  Once every side calls take is known, no call
   retraces and no Python runs per call.

hop.trace (one graph for every input) and hop.compile(fn, fullgraph=True)
install no hook: bool() of a traced tensor raises the TraceError that points
to hop.cond, as before.
"""

import linecache
import os
import sys
import threading
import warnings

from . import _C
from ._pytree import flatten, repeats, unflatten_with
from ._reads import loaded_hop_numpy

# How many HOP bodies the Python layer is running on this thread (_hops
# counts them, in C: _C._in_body(d) adds d and gives the count): a branch on
# data inside one is not specialised.
_in_body = _C._in_body

__all__ = ["BranchNode", "PathTrace", "record_path", "recording"]

_HOP_DIR = os.path.dirname(os.path.abspath(__file__))
_LIBRARY_DIRS = (_HOP_DIR,)
try:
    import numpy as _np
    _LIBRARY_DIRS += (os.path.dirname(os.path.abspath(_np.__file__)),)
except ImportError:  # pragma: no cover
    _np = None

class _Local(threading.local):
    """Whether this thread records a path; the class default answers a
    thread that never did without the AttributeError a missing attribute
    of threading.local raises and catches (asked on every eager op)."""
    recording = False


_state = _Local()
PATHS = "hop.paths"  # Trace.scratch: the PathTrace of a compile trace


def recording():
    """Whether this thread runs a function eagerly to record its path (an
    in-place update of an argument is refused then, as while tracing, so
    that the recording run changes no user data)."""
    return getattr(_state, "recording", False)


class BreakMet(BaseException):
    """Raised by _breaks.conversion in record_path's eager run: the statement
    there is a graph break, which the trace meets on the same path; the path
    recorded so far is the whole of it (the rest runs in Python)."""


class _NeedPath(BaseException):
    """The trace reached a branch point before the call's path was known."""


class _Merged(BaseException):
    """The rest of the function was traced as a cond: its result, and the
    runs of the function whose results it merges (PathTrace.runs)."""

    def __init__(self, out, runs):
        super().__init__()
        self.out = out
        self.runs = runs


class _NotLive(Exception):
    """A side traced from the tree met what the tree does not know."""


class Site:
    """Where a branch point is: the user's file, line and source text."""

    __slots__ = ("file", "line", "text")

    def __init__(self, file, line):
        self.file = file
        self.line = line
        self.text = linecache.getline(file, line).strip()

    def __eq__(self, other):
        return isinstance(other, Site) and (self.file, self.line) == (other.file, other.line)

    def __hash__(self):
        return hash((self.file, self.line))

    def __str__(self):
        return f"{os.path.basename(self.file)}:{self.line}"


def user_site(f):
    """The site of the first frame from f outward that is outside hop and
    NumPy: the user's line."""
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_LIBRARY_DIRS):
        f = f.f_back
    if f is None:
        return Site("<unknown>", 0)
    return Site(f.f_code.co_filename, f.f_lineno)


def is_hop_file(filename):
    """Whether code of filename is hop's own (a module of this package)."""
    return os.path.abspath(filename).startswith(_HOP_DIR)


def warn_at(message, category, where):
    """What warnings.warn(message, category) does for a frame at where:
    (file, line, globals), or an int n, the frame n calls out of the first
    one outside hop on this thread's stack (the compiled function's
    caller's, found now).  As CPython 3.11's setup_context
    (Python/_warnings.c): the module is the globals' __name__ (a str or
    None, else "<string>"), the registry their __warningregistry__, made
    there when missing; no source line (warn gives none either)."""
    filename, lineno, glb = _caller_place(where) if type(where) is int else where
    registry = glb.get("__warningregistry__")
    if registry is None:
        registry = glb["__warningregistry__"] = {}
    module = glb.get("__name__", "<string>")
    if module is not None and not isinstance(module, str):
        module = "<string>"
    warnings.warn_explicit(message, category, filename, lineno, module, registry)


def _caller_place(up):
    """(file, line, globals) of the frame up calls out of the first one
    outside hop on this thread's stack; CPython's ("sys", 1, sys.__dict__)
    past the stack's end."""
    f = sys._getframe(1)
    while f is not None and is_hop_file(f.f_code.co_filename):
        f = f.f_back
    for _ in range(up):
        if f is None:
            break
        f = f.f_back
    if f is None:
        return "sys", 1, sys.__dict__
    return f.f_code.co_filename, f.f_lineno, f.f_globals


def user_stacklevel():
    """The stacklevel for warnings.warn (called by hop) that names the first
    frame outside hop: the user's call."""
    f = sys._getframe(2)  # the caller of warnings.warn
    level = 2
    while f is not None and is_hop_file(f.f_code.co_filename):
        f = f.f_back
        level += 1
    return level


def _user_site():
    """The user's `if` (called by a bool hook)."""
    return user_site(sys._getframe(2))


END = "end"  # a side after which the function returned


class BranchNode:
    """A branch point: its site, and per side (True, False) the next branch
    point (a BranchNode) or END, for the sides some call took."""

    __slots__ = ("site", "sides")

    def __init__(self, site):
        self.site = site
        self.sides = {}

    def copy(self):
        n = BranchNode(self.site)
        n.sides = {k: v if v == END else v.copy() for k, v in self.sides.items()}
        return n

    def describe(self, indent="  "):
        lines = []
        for side in (True, False):
            nxt = self.sides.get(side)
            state = "traced" if nxt is not None else "not taken yet (a call taking it retraces)"
            lines.append(f"{indent}{self.site}  `{self.site.text}`  {side}: {state}")
            if isinstance(nxt, BranchNode):
                lines.extend(nxt.describe(indent + "    "))
        return lines


class _Ctx:
    """One run of the function in a trace: at tracer depth `depth`, with the
    first len(forced) decisions forced, now at branch point k, expecting
    tree node `node` (None: unknown) there, set in the tree by attach()."""

    __slots__ = ("depth", "forced", "sites", "k", "node", "attach", "live", "pidx")

    def __init__(self, depth, forced, sites, node, attach, live, pidx):
        self.depth = depth
        self.forced = forced
        self.sites = sites
        self.k = 0
        self.node = node
        self.attach = attach
        self.live = live
        self.pidx = pidx


class OtherBranches(_C.TraceError):
    """A run of the function did not meet the data-dependent branches the
    tree says it meets.  Within one trace: the function does not take the
    same branches each time.  Against an earlier trace's tree: this call
    takes other code (arguments of other types or values, a changed
    global), and hop.compile traces it with a tree of its own."""


class PathTrace:
    """Path specialisation for one trace: the tree so far (a copy, given
    back by tree() when the trace succeeds) and the path of the call being
    traced (None until it is needed)."""

    def __init__(self, tree, path):
        self._tree = tree
        self.root = tree.copy() if isinstance(tree, BranchNode) else tree
        self.path = path
        self.traps = {}  # predicate symbol ("u3") -> (site, side) of a trap branch
        self._stack = []
        self.numpy = False  # an argument is an ndarray: NumPy's semantics (_trace)
        # the runs whose results the trace's result merges, one per traced
        # path (a trap's side runs nothing): each (its result as the function
        # returned it, hop.numpy's record of the run, its arguments), for
        # _Results to tell what in the result is the caller's object (an
        # argument, a view of one), as on the straight path; None while no
        # branch point merged anything
        self.runs = None
        self._last = None  # the runs of the last _run
        self._merged = False  # whether the last _run's result is a cond's

    def reset(self):
        """As new, for a trace that starts again (hop.numpy's write-back
        slots, _trace)."""
        self.__init__(self._tree, self.path)

    def tree(self):
        return self.root

    def depth(self):
        """The tracer depth at which the function's own code runs now (a side
        of a branch runs it in a cond body), or None."""
        return self._stack[-1].depth if self._stack else None

    def merged_result(self, env_ids):
        """The run (its raw result, hop.numpy's record of it, its arguments)
        whose result stands for the trace's merged one in what of it is the
        caller's object (an argument or an object the environment holds,
        returned as itself; a view of an argument, a captured array or a
        computed array: _Results), when every traced path returns the same
        such objects at the same places (`if ...: pass; return a`).  Where
        they differ (`return a if b[0, 0] > 0 else b`) the merged tensors
        cannot say which object a call's result is: a graph break, and the
        function runs eagerly, which returns each path's own.  env_ids: the
        ids of the objects the guards' walk of the environment saw."""
        keys = [_caller_objects(r, env_ids) for r in self.runs]
        if any(k != keys[0] for k in keys[1:]):
            from . import _breaks
            _breaks.conversion(_C.TraceError, "the paths of the function's data-dependent "
                                              "branches return different objects of the "
                                              "caller's (an argument, a view of one, an object "
                                              "it reads) or different views at one place of "
                                              "the result; a merged result would be a copy")
        return self.runs[0]

    # ------------------------------------------------------------ running

    def run(self, tr, call):
        """call() runs the function on fresh arguments; its result, with the
        rest of the function after a branch point traced as conds."""
        self._tr = tr
        self._call = call

        def set_root(n):
            self.root = n
        depth = _C._trace_depth()
        ctx = _Ctx(depth, [], [], self.root, set_root, True, 0)
        tr.scratch[PATHS] = self  # where the function's own code runs (_breaks)
        previous = _C._set_bool_hook(self._hook)
        tr._memo("begin", 0, depth)  # the first run records the ops it makes
        try:
            out = self._run(ctx)
            self.runs = self._last if self._merged else None
            return out
        finally:
            _C._set_bool_hook(previous)
            tr._memo("stop")
            # the trace must not keep this object (it holds the trace's
            # proxies, which do not take part in the cycle collector)
            tr.scratch.pop(PATHS, None)

    def _run(self, ctx, replay=None):
        """Runs the function in ctx; replay: how many memo entries (the ops
        of the runs before the branch point) it gives back instead of
        recording again."""
        self._stack.append(ctx)
        saved = None
        if replay is not None:
            saved = self._tr._memo("state")
            self._tr._memo("begin", replay, ctx.depth)
        try:
            try:
                out = self._call()
            except _Merged as m:
                self._last, self._merged = m.runs, True
                return m.out
            call = self._call
            self._last = [(call.raw_out[0], call.runs[-1] if call.runs else None, call.given)]
            self._merged = False
        finally:
            self._stack.pop()
            if saved is not None:
                self._tr._memo("restore", saved)
        if ctx.k < len(ctx.forced):
            raise OtherBranches(f"hop.compile: the function returned before the data-dependent "
                                f"branch at {ctx.sites[ctx.k]} when run again for path "
                                f"specialisation; it must take the same branches each time")
        if ctx.node is None:
            ctx.attach(END)
        elif ctx.node != END:
            if not ctx.live:
                raise _NotLive()
            raise OtherBranches(f"hop.compile: the function returned without reaching the "
                                f"data-dependent branch at {ctx.node.site} that an earlier "
                                f"trace met")
        return out

    def _hook(self, t):
        # more than one element: eager's ShapeError whatever the data (not a
        # branch: eager's path has no bool() there, and a trace that took it
        # for one refused the call instead of raising what eager raises)
        _single(t)
        ctx = self._stack[-1] if self._stack else None
        if ctx is None or _C._trace_depth() != ctx.depth or _in_body():
            # inside a HOP body (also one traced inline, at the caller's
            # depth: a cond on a constant): the error that points to hop.cond
            return _C._truth(t)
        site = _user_site()
        if ctx.k < len(ctx.forced):
            if site != ctx.sites[ctx.k]:
                raise _C.TraceError(
                    f"hop.compile: the function reached a data-dependent branch at {site} where "
                    f"it had one at {ctx.sites[ctx.k]} when run again for path specialisation; "
                    f"it must take the same branches each time")
            v = ctx.forced[ctx.k]
            ctx.k += 1
            return v
        if self.numpy:
            self._numpy_exact(t, site)
        node = ctx.node
        if node == END or (node is not None and node.site != site):
            if not ctx.live:
                raise _NotLive()
            where = "returned" if node == END else f"branched at {node.site}"
            raise OtherBranches(f"hop.compile: the function branched on data at {site} where an "
                                f"earlier trace with the same inputs {where}")
        if node is None:
            if not ctx.live:
                raise _NotLive()
            node = BranchNode(site)
            ctx.attach(node)
        live = None
        if ctx.live:
            if self.path is None:
                raise _NeedPath()
            if ctx.pidx >= len(self.path) or self.path[ctx.pidx][1] != site:
                raise _C.TraceError(
                    f"hop.compile: the function branched on data at {site} while tracing but "
                    f"not there when run eagerly on the same values; its Python control flow "
                    f"must not depend on anything but its arguments")
            live = self.path[ctx.pidx][0]
        replay = self._tr._memo("state")[0]  # the ops so far: each side replays them
        pred = _predicate(t)
        out = self._branch(ctx, node, site, pred, live, replay)
        raise _Merged(out, self._last)

    def _numpy_exact(self, t, site):
        """A branch of NumPy code merges only on a condition with NumPy's
        bits (_exact: `(x > 0).all()`, `x[0] > 0`, integer sums).  hop's
        float sum adds in another order than NumPy's pairwise sum, so
        `np.sum(x) > 0` can be False in NumPy and True in hop (x = [1e16,
        1, -1e16]): a cond on hop's value would silently take the other
        side.  Such a branch is a graph break, which the frame translator
        decides on NumPy's own value, as its _merge_if does.  Inside a side
        (a branch after another) the condition is a node of a cond body,
        whose lineage _exact cannot read: a break too."""
        from . import _breaks
        from . import _exact
        if self._stack[-1].depth != self._stack[0].depth:
            bad = "a value of a branch's side, whose lineage hop does not check"
        else:
            bad = _exact.differs([t])
        if bad is not None:
            _breaks.conversion(_C.TraceError,
                               f"the data-dependent branch at {site} (`{site.text}`) is on a "
                               f"value NumPy may compute with other bits ({bad}), so a cond "
                               f"on hop's value could take another side than NumPy")

    def _branch(self, ctx, node, site, pred, live, replay):
        """The rest of the function as a cond on pred: the sides some call
        took traced (forced), the others traps."""
        kinds = {s: "live" if s == live else "known" if s in node.sides else "trap"
                 for s in (True, False)}
        try:
            return self._cond(ctx, node, site, pred, kinds, replay)
        except (_C.Error, _NotLive, TypeError, ValueError):
            # A side only the tree knew cannot be traced for these inputs (its
            # shapes or its result differ): a trap in this plan.
            if "known" not in kinds.values():
                raise
            kinds = {s: "trap" if k == "known" else k for s, k in kinds.items()}
            if "live" not in kinds.values():
                raise
            return self._cond(ctx, node, site, pred, kinds, replay)

    def _cond(self, ctx, node, site, pred, kinds, replay):
        tr = self._tr
        u = pred.item()  # an unbacked SymInt in [0, 1]: the traps guard on it
        first = True if kinds[True] != "trap" else False
        results = {}
        runs = {}

        def body(side):
            def run():
                if kinds[side] == "trap":
                    self.traps[str(u)] = (site, side)
                    _C.full((), u, dtype=_C.int64)  # binds u in this body, for its guard
                    tr._trap_guard(u, 0 if side else 1)
                    return _trap_outputs(results[not side])
                sub = _Ctx(ctx.depth + 1, ctx.forced + [side], ctx.sites + [site],
                           node.sides.get(side), lambda n: node.sides.__setitem__(side, n),
                           kinds[side] == "live", ctx.pidx + 1)
                out = self._run(sub, replay)
                runs[side] = self._last
                leaves, spec = flatten(out)
                traced = [x for x in leaves if isinstance(x, (_C.Tensor, _C.SymInt))]
                template = [None if isinstance(x, (_C.Tensor, _C.SymInt)) else x for x in leaves]
                other = results.get(not side)
                if other is not None and (_agnostic(other[0]) != _agnostic(spec) or
                                          other[1] != template):
                    raise _C.TraceError(f"hop.compile: the sides of the branch at {site} return "
                                        f"different structures: {other[0]!r} and {spec!r}")
                again = repeats(out, _atom)
                if other is not None and other[3] != again:
                    raise _C.TraceError(f"hop.compile: the sides of the branch at {site} return "
                                        f"one object at other places: {sorted(other[3])} and "
                                        f"{sorted(again)} are repeats of earlier places")
                results[side] = (spec, template, traced, again)
                return traced
            return run

        pred_arg = u if first else 1 - u
        outs = _C.call_hop("cond", (_C._sym_truth(pred_arg),), ((),),
                           (body(first), body(not first)))
        spec, template = results[first][:2]
        if (not first) in results and kinds[not first] != "trap":
            spec = _merge(spec, results[not first][0])
        self._last = [r for side in (first, not first) for r in runs.get(side, ())]
        it = iter(outs)
        # one object at several places of the sides' result (`return y, [y]`)
        # is one merged value there too, as eagerly
        return unflatten_with([next(it) if x is None else x for x in template], spec, {},
                              results[first][3])


def _caller_objects(rep, env_ids):
    """{path: what} for the nodes of a run's raw result that are not made
    anew by each run: ("arg", path in the arguments) for an argument object,
    ("obj", id) for an object of the environment, ("view", key) for a
    view NumPy makes of memory (hop.numpy._storage.view_key)."""
    from ._pytree import nodes
    raw, run, given = rep
    given_ids = {i: p for i, (p, _) in nodes(given).items()} if given is not None else {}
    storage = sys.modules.get("hop.numpy._storage")
    out = {}
    for i, (path, node) in nodes(raw).items():
        if _atom(node):
            continue
        if i in given_ids:
            out[path] = ("arg", given_ids[i])
        elif i in env_ids:
            out[path] = ("obj", i)
        elif storage is not None and run is not None and storage._is_array(node):
            key = storage.view_key(node, run)
            if key is not None:
                out[path] = ("view", key)
    return out


def _atom(x):
    from ._trace import _is_atom
    return _is_atom(x)


def _single(t):
    """bool()'s ShapeError (eager's, C's truth) unless t has one element."""
    n = 1
    for d in t.shape:
        n = n * d
    if n != 1:
        raise _C.ShapeError(f"bool(): the truth value of a tensor with {n} elements is "
                            f"ambiguous, got {_C._meta_text(t)}")


def _predicate(t):
    """bool(t) as a 0-d bool tensor of the graph: t itself (reshaped) when a
    bool, else t != 0; the same errors as bool() for more than one element."""
    _single(t)
    p = t.reshape(()) if t.ndim else t
    return p if p.dtype is _C.bool else _C.ne(p, 0)


def _trap_outputs(result):
    """Values of the kinds the traced side returns (never used: the trap's
    guard fails first)."""
    out = []
    for x in result[2]:
        if isinstance(x, _C.SymInt):
            out.append(_C.zeros((), dtype=_C.int64).item())
            continue
        try:
            out.append(_C.zeros(tuple(x.shape), dtype=x.dtype))
        except (_C.TraceError, _C.Error):
            # a size known only inside the other side: this one gets 0
            shape = [d if isinstance(d, int) else 0 for d in x.shape]
            out.append(_C.zeros(tuple(shape), dtype=x.dtype))
    return out


def _agnostic(spec):
    hnp = loaded_hop_numpy()
    return spec if hnp is None else hnp._array_agnostic_spec(spec)


def _merge(a, b):
    hnp = loaded_hop_numpy()
    return a if hnp is None else hnp._merge_array_specs(a, b)


def record_path(fn, args, kwargs=None):
    """Runs fn(*args, **kwargs) eagerly and returns [(bool, Site)] for every
    bool() of a tensor, in order: the path the call takes.  The hop.numpy
    arrays of the arguments are copies, so that what the function writes in
    place changes nothing of the caller's (the compiled call writes it)."""
    path = []
    args = _copied_arrays(args)
    kwargs = _copied_arrays((kwargs or {},))[0]

    def hook(t):
        v = _C._truth(t)
        path.append((v, _user_site()))
        return v

    # NumPy's creation functions the function calls make hop.numpy arrays
    # here too, as in the trace: a branch on one (`if (np.ones(3) * 2).sum()
    # > 5:`, or hop.numpy's own in eigvals of such an array) is then met by
    # both runs, where NumPy's own arrays would take it unseen
    creation = getattr(loaded_hop_numpy(), "_creation", None)
    previous = _C._set_bool_hook(hook)
    was = recording()
    _state.recording = True
    _C._np_eager_off(1)  # (hop.numpy's eager fast path, numpy/_eager, is off while recording)
    if creation is not None:
        creation.enter()
    try:
        fn(*args, **kwargs)
    except BreakMet:
        pass
    finally:
        if creation is not None:
            creation.leave()
        _state.recording = was
        _C._np_eager_off(-1)
        _C._set_bool_hook(previous)
    return path


def _copied_arrays(args):
    """args with each hop.numpy array in them (in tuples, lists and dicts) a
    copy of the same class."""
    hnp = loaded_hop_numpy()
    if hnp is None:
        return args

    def copy(a):
        if isinstance(a, hnp.ndarray):
            return type(a)(a._t.clone(), scalar=a._scalar)
        if isinstance(a, (list, tuple)) and type(a) in (list, tuple):
            return type(a)(copy(x) for x in a)
        if type(a) is dict:
            return {k: copy(v) for k, v in a.items()}
        return a
    return tuple(copy(a) for a in args)
