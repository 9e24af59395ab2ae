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
"""

import re
import sys
import warnings

from . import _C
from . import _paths
from ._pytree import flatten, unflatten
from ._trace import _trace

__all__ = ["compile", "CompiledFunction"]


class _Entry:
    __slots__ = ("gm", "runner", "dynamic", "reason", "traps")

    def __init__(self, gm, runner, dynamic, reason, traps):
        self.gm = gm
        self.runner = runner
        self.dynamic = dynamic
        self.reason = reason
        self.traps = traps  # predicate symbol -> (site, side) of a branch side not traced

    def failure(self, e):
        """The reason a call did not fit this plan: a guard's message, or
        the data-dependent branch that took a side not traced yet."""
        m = _TRAP.match(str(e))
        if m and m.group(1) in self.traps:
            site, side = self.traps[m.group(1)]
            return f"the data-dependent branch at {site} (`{site.text}`) took its {side} side, " \
                   f"not traced yet"
        return str(e)


_TRAP = re.compile(r"guard (u\d+) == [01] of cond_\w+ failed")


class CompiledFunction:
    """The callable hop.compile returns: calls run the newest compiled plan
    whose guards fit, else retrace (dims that changed become dynamic when
    dynamic is None), past recompile_limit run fn eagerly.  graphs,
    recompiles, eager_calls and explain() tell what it did.

    >>> f = hop.compile(lambda x: (x * 2).sum())
    >>> f(hop.ones(3)), f(hop.ones(5))
    (hop.tensor(6.), hop.tensor(10.))
    >>> f.recompiles, [gm.graph.placeholders[0].meta.expr for gm in f.graphs[1:]]
    (1, ['s0'])
    """

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
        self.recompiles = 0
        self.eager_calls = 0  # calls run eagerly since the limit was reached
        self._fallback_reason = None
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "compiled")
        self.__doc__ = getattr(fn, "__doc__", None)

    @property
    def graphs(self):
        """The GraphModules compiled so far, oldest first."""
        return [e.gm for e in self._entries]

    def __call__(self, *args):
        """fn(*args), through the newest plan that fits (see the class)."""
        entries = self._entries
        if entries:
            try:
                fast = self._fast
                if fast is not None:
                    r = fast(args)
                    if r is not NotImplemented:
                        return r
                return entries[-1].runner.call(args, _C.GuardError)
            except _C.GuardError as e:
                return self._miss(args, [entries[-1].failure(e)])
        return self._miss(args, None)

    def _miss(self, args, failures):
        """No plan was tried (failures None) or the newest one failed: the
        others, then a retrace, or past the limit an eager call."""
        if failures is not None:
            for entry in reversed(self._entries[:-1]):
                try:
                    return entry.runner.call(args, _C.GuardError)
                except _C.GuardError as e:
                    failures.append(entry.failure(e))
        reason = "first call" if failures is None else "; ".join(failures)
        if self._entries and self.recompiles >= self.recompile_limit:
            return self._eager(args, reason)
        saved = (None if self._dims is None else [set(d) for d in self._dims], self._first)
        dynamic = self._dynamic_for(args)
        try:
            gm, runner, paths = self._trace(args, dynamic)
        except BaseException:
            # A call that fails to trace must not change what later calls
            # make dynamic.
            self._dims, self._first = saved[0], saved[1]
            raise
        if paths is not None:
            self._tree = paths.tree()
        if self._entries:
            self.recompiles += 1
        self._entries.append(_Entry(gm, runner, dynamic, reason,
                                    paths.traps if paths is not None else {}))
        self._fast = runner.fast  # the newest plan's bound NumPy call, if any
        return runner.call(args, _C.GuardError)

    def _trace(self, args, dynamic):
        """Traces a call: with path specialisation (not fullgraph), a branch
        point met before the call's path is known makes it run eagerly once
        to record the path, then trace again (see _paths)."""
        if self.fullgraph:
            return _trace(self.fn, args, dynamic) + (None,)
        paths = _paths.PathTrace(self._tree, None)
        try:
            return _trace(self.fn, args, dynamic, paths) + (paths,)
        except _paths._NeedPath:
            pass
        path = _paths.record_path(self.fn, _eager_args(args))
        paths = _paths.PathTrace(self._tree, path)
        return _trace(self.fn, args, dynamic, paths) + (paths,)

    def _eager(self, args, reason):
        if self._fallback_reason is None:
            self._fallback_reason = reason
            warnings.warn(f"hop.compile: {self.__name__} reached its recompile limit "
                          f"({self.recompile_limit}); calls that no compiled plan fits run "
                          f"eagerly from now on. The last reason: {reason}", RuntimeWarning,
                          stacklevel=3)
        self.eager_calls += 1
        return self.fn(*args)

    def _dynamic_for(self, args):
        if self.dynamic is not None:
            return self.dynamic
        leaves, _ = flatten(tuple(args))
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
        """explain() -> str: the compiled graphs, their guards, and why each
        recompile happened.

        >>> f = hop.compile(lambda x: x + 1)
        >>> _ = f(hop.ones(3)), f(hop.ones(5))
        >>> print(f.explain().splitlines()[0])
        hop.compile(<lambda>): 2 graph(s), 1 recompile(s) (limit 8)
        """
        out = [f"hop.compile({self.__name__}): {len(self._entries)} graph(s), "
               f"{self.recompiles} recompile(s) (limit {self.recompile_limit})"]
        if self._fallback_reason is not None:
            out.append(f"fallback: the recompile limit was reached; {self.eager_calls} call(s) "
                       f"that no graph fits ran eagerly (the first because: "
                       f"{self._fallback_reason})")
        for i, e in enumerate(self._entries):
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


def _eager_args(args):
    """args for the recording run: an ndarray as the function sees it when
    traced (a hop.numpy array over its memory, never written)."""
    leaves, spec = flatten(tuple(args))
    np = sys.modules.get("numpy")
    if np is None or not any(isinstance(x, np.ndarray) for x in leaves):
        return args
    from .numpy import NumpyArg
    return unflatten([NumpyArg(_C.asarray(x), owned=False) if isinstance(x, np.ndarray) else x
                      for x in leaves], spec)


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
    hop.trace.

    >>> @hop.compile(dynamic=True)
    ... def g(x):
    ...     return x.relu() + 1
    >>> g(hop.tensor([-1.0, 2.0])), g(hop.ones(4)), g.recompiles
    (hop.tensor([1., 3.]), hop.tensor([2., 2., 2., 2.]), 0)
    """
    if fn is None:
        return lambda f: CompiledFunction(f, dynamic, recompile_limit, fullgraph)
    return CompiledFunction(fn, dynamic, recompile_limit, fullgraph)
