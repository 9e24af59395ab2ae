"""hop.trace and hop.GraphModule.

trace(fn, *example_args, dynamic=False) runs fn on proxies inside a fresh
Trace (one C OutputGraph), records every op and HOP, and lowers the result to
a C plan.  The GraphModule it returns prints (code, table, DOT), exposes its
nodes and nested subgraphs, and runs the plan when called.
"""

import collections
import functools
import inspect
import re
import sys
import types
import warnings

from . import _C
from . import _breaks
from . import _frame_state
from . import _guards
from . import _paths
from . import _reads
from ._graph import Graph, Node, SymMeta, TensorMeta, _build_graph
from ._pytree import (LEAF, builder, flatten, leaf_names, repeats, structure_changed, subtree,
                      unflatten, unflatten_with)
from ._symfloat import SymFloat
from ._writeback import _WriteBack, _layout
from ._reads import loaded_hop_numpy

__all__ = ["trace", "GraphModule", "Graph", "Node", "TensorMeta", "SymMeta"]

try:
    import numpy as _np
except ImportError:  # NumPy is optional at run time
    _np = None


class GraphModule:
    """A traced program: its graph and nested subgraphs, and (for the root)
    the compiled plan that runs it.  hop.trace makes it; calling it runs the
    plan (NumPy in, NumPy out), with hop.GuardError for inputs the trace
    does not fit.  It pickles and saves (hop.save).  Its graph's nodes are
    Nodes: a call_hop's args are flat (its leads, then every value passed
    to its bodies) and its groups named (Node.leads, .groups, .lifted).

    >>> gm = hop.trace(lambda x, y: (x * y).sum(), hop.ones(3), hop.ones(3))
    >>> print(gm.code)
    def forward(x: "f32[3]", y: "f32[3]"):
        mul: "f32[3]" = mul(x, y)
        sum: "f32[]" = sum(mul, None, False)
        return (sum,)
    <BLANKLINE>
    >>> gm(hop.tensor([1.0, 2.0, 3.0]), hop.ones(3))
    hop.tensor(6.)
    """

    def __init__(self, trace, path, call=None):
        self._trace = trace
        self._path = tuple(path)
        self._call = call
        self._cache = {}

    # Describing and rebuilding the graph costs more than tracing it, so a
    # GraphModule that is only called (hop.compile) never pays for it.
    def _lazy(self, key, make):
        v = self._cache.get(key)
        if v is None:
            v = self._cache[key] = make()
        return v

    @property
    def _desc(self):
        return self._lazy("desc", lambda: self._trace.describe(self._path))

    def _text(self, kind):
        return self._lazy(kind, lambda: self._trace.text(self._path, kind))

    @property
    def name(self):
        """The graph's name: "forward" for the root, "cond_true_0", ..."""
        return self._desc["name"]

    @property
    def graph(self):
        """The Graph: this graph's nodes (subgraphs are in .subgraphs)."""
        return self._lazy("graph", lambda: _build_graph(self._desc, self))

    @property
    def subgraphs(self):
        """Name -> GraphModule of each subgraph installed in this graph."""
        return self._lazy("subgraphs", lambda: {
            name: GraphModule(self._trace, self._path + (name,))
            for name in self._desc["subgraphs"]})

    @property
    def code(self):
        """Python-like source of the graph, nested subgraphs included."""
        return self._text("code")

    def print_tabular(self):
        """print_tabular() -> None: prints tabular().

        >>> hop.trace(lambda x: x.sin(), hop.ones(2)).print_tabular()
        graph forward:
        opcode       name    target  args    meta
        -----------  ------  ------  ------  ------
        placeholder  x       x       ()      f32[2]
        call_op      sin     sin     (x,)    f32[2]
        output       output  output  (sin,)
        """
        print(self._text("table"), end="")

    def tabular(self):
        """tabular() -> str: one row per node (opcode, name, target, args,
        meta), then the subgraphs' tables; print_tabular prints it.

        >>> hop.trace(lambda x: x.sin(), hop.ones(2)).tabular().splitlines()[3]
        'placeholder  x       x       ()      f32[2]'
        """
        return self._text("table")

    def to_dot(self, lifted=False):
        """to_dot(lifted=False) -> str

        The graph in Graphviz DOT, one cluster per subgraph.  With lifted,
        each lifted input is filled and dashed, labelled with what it stands
        for, with a dotted edge from the parent's value it is lifted from.
        Graph.render draws it.

        >>> w = hop.tensor([1.0, 2.0])
        >>> gm = hop.trace(lambda x: hop.map(lambda r: r * w, x), hop.ones(2, 2))
        >>> print([l.strip() for l in gm.to_dot(lifted=True).splitlines() if "lifted" in l][0])
        "map_body_0.w" [label="w\\nf32[2]\\nlifted: capture w", style="filled,dashed", fillcolor="#fde8c4", shape=ellipse];
        """
        text = self._text("dot")
        if not lifted:
            return text
        paths = self._subgraph_paths()
        extra = []
        k = len(self._path)
        for r in _C._lifts(self._trace):
            path = paths.get(r["graph"], ())
            # Only the subgraphs below this one, named relative to it.
            if len(path) <= k or path[:k] != self._path:
                continue
            node = ".".join(path[k:] + (r["placeholder"],))
            what = f"{r['kind']} {r['origin']}"
            text = re.sub(r'^(\s*"' + re.escape(node) + r'" \[label=")([^"]*)(")',
                          lambda m: f'{m.group(1)}{m.group(2)}\\nlifted: {what}{m.group(3)}, '
                                    f'style="filled,dashed", fillcolor="#fde8c4"',
                          text, count=1, flags=re.M)
            if len(path) - 1 > k or not self._path:
                src = ".".join(path[k:-1] + (r["source"],))
                extra.append(f'    "{src}" -> "{node}" [style=dotted, color="#d9822b", '
                             f'constraint=false];')
        return text.rstrip().rstrip("}") + "\n".join([""] + extra) + "\n}\n"

    def _subgraph_paths(self):
        """Subgraph name -> its path of names from the root."""
        paths, todo = {}, [((), self._trace.describe(()))]
        while todo:
            path, desc = todo.pop()
            for name in desc["subgraphs"]:
                paths[name] = path + (name,)
                todo.append((path + (name,), self._trace.describe(path + (name,))))
        return paths

    def lifts(self):
        """lifts() -> list of dict

        One record per lifted input of every subgraph of the program (see
        explain_lifts): graph, placeholder, source (the parent's value),
        kind ("argument", "capture", "symbol", "intermediate"), origin and
        origin_graph, lifted_by (the graphs that lifted it, outer-first),
        shape_of (for a symbol: the tensor whose shape brought it in),
        shared_with (another body the call's one value also serves),
        for_other_body, location ("file:line" of the use that lifted it),
        operand (the value is an operand the HOP call was given: not a capture).

        >>> w = hop.tensor([1.0, 2.0])
        >>> gm = hop.trace(lambda x: hop.map(lambda r: r * w, x), hop.ones(2, 2))
        >>> r = gm.lifts()[0]
        >>> r["graph"], r["placeholder"], r["kind"], r["lifted_by"], r["operand"]
        ('map_body_0', 'w', 'capture', ('map_body_0',), False)
        """
        return _C._lifts(self._trace)

    def explain_lifts(self):
        """explain_lifts() -> str

        Why every subgraph has the inputs it has: for each lifted input,
        what it stands for (an argument, a captured tensor with the closure
        variable or global it was reached through, a symbol, an intermediate
        of an enclosing graph), which tracers lifted it on the way down, the
        file:line of the use that lifted it, whether one value serves it and
        another body (deduplicated), and for a symbol which tensor's shape
        brought it in.  Captured tensors the root reads are listed first.

        >>> w = hop.tensor([1.0, 2.0])
        >>> gm = hop.trace(lambda x: hop.map(lambda r: r * w, x), hop.ones(2, 2))
        >>> print(gm.explain_lifts())
        forward.w: captured tensor w (a root input the function reached without an argument)
            reached as: global 'w'
        map_body_0.w: captured tensor w (root input w)
            reached as: global 'w'
            lifted by: map_body_0
            first used at: <doctest ...>:1
        <BLANKLINE>
        """
        sources = self._capture_sources()
        lines = []
        for name, srcs in sources.items():
            lines.append(f"forward.{name}: captured tensor {name} (a root input the function "
                         f"reached without an argument)")
            lines.append("    reached as: " + ", ".join(srcs))
            if len(srcs) > 1:
                lines.append(f"    deduplicated: one input for {len(srcs)} sources (the same "
                             f"tensor object)")
        text = _C._explain_lifts(self._trace)
        if text == "no lifted inputs\n" and lines:
            text = ""
        out = []
        for line in text.splitlines():
            out.append(line)
            m = re.match(r"^\S+: captured tensor (\S+) \(root input", line)
            if m and m.group(1) in sources:
                out.append("    reached as: " + ", ".join(sources[m.group(1)]))
        return "\n".join(lines + out) + "\n"

    def _capture_sources(self):
        """Root capture name -> how the function reached it (closure
        variable, global, attribute: the guards' sources)."""
        runner = self._call
        out = {}
        names = self._trace.placeholder_names(())
        caps = self._trace.captures
        cap_names = names[len(names) - len(caps):] if caps else []
        for name in cap_names:
            out[name] = []
        guards = getattr(getattr(runner, "guards", None), "guards", ()) if runner else ()
        for g in guards:
            if g.kind == "tensor" and g.capture < len(cap_names):
                out[cap_names[g.capture]].append(repr(g.source))
        for name in out:
            if not out[name]:
                out[name] = ["(saved constant)" if isinstance(getattr(runner, "guards", None),
                                                              _NoGuardsType()) else
                             "(source not found)"]
        return out

    @property
    def guards(self):
        """Guards as text.  For the root: what the plan checks on entry.  For a
        subgraph: its own guards, checked each time it runs (a cond branch's
        conditions on sizes, which must not reject inputs that take the other
        branch).

        >>> hop.trace(lambda x: x[:4] + hop.ones(4), hop.ones(6, 4), dynamic=True).guards
        ['s1 == 4']
        """
        if self._path:
            return list(self._desc["guards"])
        return self._trace.guards()

    def __call__(self, *args, **kwargs):
        """Runs the plan on args (and the keyword arguments of the traced
        call), shaped like the example arguments (tensors and NumPy arrays
        where the trace had them, the same constants)."""
        if self._call is None:
            raise TypeError(f"the subgraph {self.name} is not callable on its own; call the "
                            f"root GraphModule")
        return self._call(*args, **kwargs)

    def __repr__(self):
        return f"GraphModule({self.name})\n{self.code}"


def _NoGuardsType():
    from ._saved import _NoGuards
    return _NoGuards


def _name_hints(tr, fn):
    """Names for the concrete tensors fn reaches through its closure cells
    and the globals its code names (Trace.name_hints, in C: every traced
    body asks); nothing without a trace."""
    if tr is not None:
        tr.name_hints(fn)


def _array_leaves(spec, inside=False, out=None):
    """Per leaf of spec: whether it is the tensor of a hop.numpy array node
    (a class with __hop_tensor__)."""
    out = [] if out is None else out
    if spec.kind == "leaf":
        out.append(inside)
    elif spec.kind != "none":
        inside = inside or (spec.kind == "custom" and hasattr(spec.cls, "__hop_tensor__"))
        for c in spec.children:
            _array_leaves(c, inside, out)
    return out


def _numpy_arg(p, leaf=None, read_only=False):
    from .numpy import _wrap_arg
    a = _wrap_arg(p, leaf)
    a._ro = read_only
    return a


def eager_array(x):
    """Why hop.compile runs a call with ndarray argument x eagerly, or None.
    NumPy's answer depends on what a hop tensor does not hold: the byte
    order (a copy or view of a `>f4` array keeps it: `.dtype`, `.tobytes()`,
    `.view(np.uint8)`), the alignment (a view of an unaligned array is
    unaligned), the dtype's metadata (NumPy's results keep it) and the
    array's class (a subclass's results keep its type and behaviour:
    np.matrix's `*` is a matrix product, a masked array's mask)."""
    if type(x) is not _np.ndarray:
        return f"an argument of type {type(x).__module__}.{type(x).__qualname__}, a subclass " \
               f"of numpy.ndarray (NumPy's results keep its type and behaviour; hop's " \
               f"plans take plain ndarrays)"
    if not x.dtype.isnative:
        return f"an argument in the other byte order (dtype {x.dtype.str}: NumPy keeps it in " \
               f"copies and views; hop's plans take native arrays)"
    if x.dtype.metadata is not None:
        return f"an argument whose dtype has metadata ({dict(x.dtype.metadata)!r}: NumPy keeps " \
               f"it in its results; hop's dtypes have none)"
    if not x.flags.aligned:
        return "an unaligned argument (NumPy's views of it are unaligned and its loops for " \
               "them round differently; hop's plans take aligned arrays)"
    return None


def _as_tensor(x):
    if isinstance(x, _C.Tensor):
        return x, False
    if _np is not None and isinstance(x, _np.ndarray):
        if not x.dtype.isnative:  # big-endian: NumPy computes on it in native order too
            x = x.astype(x.dtype.newbyteorder("="))
        return _C.asarray(x), True
    return None, False


def trace(fn, *example_args, dynamic=False, captures="allow", kwargs=None):
    """trace(fn, *example_args, dynamic=False, captures="allow", kwargs=None) -> GraphModule

    Traces fn on example arguments into a GraphModule.  Tensor (and NumPy
    array) arguments become graph inputs named after fn's parameters; with
    dynamic=True each dim gets a symbol (duck sizing, sizes 0 and 1
    specialised), with a sequence of bools per argument only those dims.
    Other arguments are constants of the trace.  kwargs (a dict) are fn's
    keyword arguments: tensors among them are inputs named after the
    keyword (after the positional ones), the others constants; the
    GraphModule is then called with the same keywords.

    captures="error" rejects implicit captures: a concrete tensor the
    function reaches without an argument (a closure, a global) and an outer
    value a HOP body uses without receiving it as an operand (map's and
    invoke_subgraph's bodies take only their arguments; cond's and wrap's
    their operands).  The error is a hop.TraceError whose message is the
    explain_lifts() report of the offending inputs; nothing is cached and
    no state changes.

    >>> def f(x):
    ...     return hop.cond(x.sum() > 0, lambda: x.sin(), lambda: x.cos())
    >>> gm = hop.trace(f, hop.randn(4, seed=0), dynamic=True)
    >>> [n.target for n in gm.graph.nodes if n.op != "placeholder"]
    ['sum', 'gt', 'cond', 'getitem', 'output']
    >>> gm(hop.zeros(7))
    hop.tensor([1., 1., 1., 1., 1., 1., 1.])
    >>> w = hop.ones(4)
    >>> hop.trace(lambda x: x * w, hop.ones(4), captures="error")
    Traceback (most recent call last):
        ...
    hop.TraceError: hop.trace(captures='error'): the function uses values it was not given as arguments or operands:
    forward.w: captured tensor w (a root input the function reached without an argument)
        reached as: global 'w'
    """
    if not callable(fn):
        raise TypeError(f"hop.trace: fn must be callable, got {type(fn).__name__}")
    if not isinstance(dynamic, (bool, list, tuple)):
        raise TypeError(f"hop.trace: dynamic must be a bool or a list with one entry per "
                        f"argument, got {type(dynamic).__name__}")
    if captures not in ("allow", "error"):
        raise ValueError(f"hop.trace: captures must be 'allow' or 'error', got {captures!r}")
    if kwargs is not None and not (isinstance(kwargs, dict) and
                                   all(isinstance(k, str) for k in kwargs)):
        raise TypeError(f"hop.trace: kwargs must be a dict of keyword arguments, got "
                        f"{type(kwargs).__name__}")
    try:
        gm = _trace(fn, example_args, dynamic, kwargs=kwargs)[0]
    except CaughtSymbolicError:
        # (the function ran once more: a trace's effects are the function's
        # at trace time, as a restart for write-back slots runs it again)
        gm = _trace(fn, example_args, False, kwargs=kwargs)[0]
    if captures == "error":
        _reject_implicit(gm)
    return gm


def _implicit(record):
    """Whether a lift record is an implicit capture (see trace)."""
    if record["for_other_body"] or record["shape_of"] is not None:
        return False  # the other body's or its tensor's record decides
    return not record["operand"]


def _reject_implicit(gm):
    bad = [r for r in gm.lifts() if _implicit(r)]
    roots = gm._capture_sources()
    if not bad and not roots:
        return
    keep = {f"{r['graph']}.{r['placeholder']}" for r in bad} | {f"forward.{n}" for n in roots}
    paragraphs, cur = [], None
    for line in gm.explain_lifts().splitlines():
        if not line.startswith(" "):
            cur = [line] if line.split(":")[0] in keep else None
            if cur is not None:
                paragraphs.append(cur)
        elif cur is not None:
            cur.append(line)
    raise _C.TraceError("hop.trace(captures='error'): the function uses values it was not "
                        "given as arguments or operands:\n" +
                        "\n".join("\n".join(p) for p in paragraphs))


def _out_value(x):
    """The graph value of a traced result.  A SymInt expression (s0 + 1, not
    one symbol) is a 0-d int64 tensor of its value and a SymFloat its 0-d
    float64 tensor: the runner returns them as the int or float eager
    returns (exact: int64 arithmetic, a float64 converted to a float)."""
    if isinstance(x, SymFloat):
        return x._t
    if isinstance(x, _C.SymInt) and x.node is None and not _SYMBOL.fullmatch(x.expr):
        return _C.zeros((), dtype=_C.int64) + x
    return x


_SYMBOL = re.compile(r"[A-Za-z_]\w*")


def _fits_static(leaf, static):
    """Whether a call's argument leaf is the trace's constant static: the
    same object, or a value equal to it and of its type (_guards)."""
    return leaf is static or (_guards.is_value(static) and _guards.same_value(leaf, static))


def _same_leaves(r, out_spec):
    """[(leaf index, ("arg", path) or ("obj", it))] of the caller's objects
    a result returns as themselves (_Results.same) when each is a leaf of
    out_spec and none is another's repeat (_Results.again); () otherwise."""
    if r.again:
        return ()
    out = []
    for path, how in r.same.items():
        if how[0] not in ("arg", "obj"):
            return ()
        spec, i = out_spec, 0
        for k in path:
            if spec.kind in ("leaf", "none"):
                return ()
            i += sum(c.num_leaves() for c in spec.children[:k])
            spec = spec.children[k]
        if spec.kind != "leaf":
            return ()
        out.append((i, how))
    return out


def _call_tree(args, kwargs):
    """The structure of a call's arguments: the positional ones as a tuple,
    and with keyword arguments (args, {keyword: value}) in the call's keyword
    order, which a function's **kwargs sees (the runner's kw flag tells it
    from a positional (tuple, dict) call)."""
    if not kwargs:
        return tuple(args)
    return (tuple(args), dict(kwargs))


_MAX_SLOTS = 256  # write-back slots of one trace (GrowSlots restarts)


def _trace(fn, example_args, dynamic, paths=None, kwargs=None, compiling=False, frame=None):
    """(GraphModule, runner) of fn on example_args (and keyword arguments
    kwargs).  With paths (a _paths.PathTrace: hop.compile), Python control
    flow on traced values is specialised instead of being an error; with
    compiling (hop.compile), Python that needs a traced value's value raises
    _breaks.GraphBreak instead of its error.  With frame (a _frame.Translator:
    hop.compile of a function with Python effects), the last positional
    argument is the tuple of the lifted ints' tensors, fn runs through the
    translator and returns (result, the side-effect table's values).

    A function that writes an argument or a captured hop.numpy array in
    place (NumPy code: `x += 1`, `x[m] = 0`) is traced again with a
    write-back slot for each such array (hop.numpy._storage): the slots are
    known only once the function has written them, and every run of the
    function (path specialisation runs it again) must return the same
    structure."""
    if compiling and _np is not None:
        # NumPy's floating-point exceptions of what the trace computes on
        # constants (np.log(0.0), np.float64(1e308) * 10): eager meets them
        # on every call, the plan never, so each run raises their flags and
        # the call's check has NumPy run it (docs/ARCHITECTURE.md,
        # "Floating-point warnings"); not given at trace time (np.errstate
        # is this thread's)
        flags = [0]

        def met(kind, status):
            flags[0] |= status & 15

        with _np.errstate(all="call", call=met):
            out = _trace_growing(fn, example_args, dynamic, paths, kwargs, compiling, frame)
        out[1].plan.fp_static = flags[0]
        return out
    return _trace_growing(fn, example_args, dynamic, paths, kwargs, compiling, frame)


def _trace_growing(fn, example_args, dynamic, paths, kwargs, compiling, frame):
    """_trace's traces, with write-back slots for the arrays each run found
    written in place (hop.numpy._storage.GrowSlots), until one needs none
    more."""
    slots, arrays = (), {}
    while True:
        try:
            return _trace_once(fn, example_args, dynamic, paths, slots, arrays, kwargs, compiling,
                               frame)
        except BaseException as e:  # noqa: B036 (a restart, or the error as it is)
            hnp = loaded_hop_numpy()
            if hnp is None or not isinstance(e, hnp._storage.GrowSlots):
                raise
            if e.key in slots or len(slots) >= _MAX_SLOTS:
                # (a root the runs do not agree on, as an array each run
                # makes anew: restarting again would never end)
                raise _C.UnsupportedError(
                    f"hop: {getattr(fn, '__qualname__', 'the traced function')} writes in "
                    f"place more arrays than hop can give write-back slots to "
                    f"({len(slots)} so far): its runs do not write the same arrays") from None
            slots = slots + (e.key,)
            if e.key[0] == "capture":
                arrays[e.key] = e.array
            if paths is not None:
                paths.reset()


def _any_dynamic(dynamic):
    """Whether dynamic (hop.trace's argument) asks for a symbolic size."""
    if isinstance(dynamic, (list, tuple)):
        return any(d is True or (isinstance(d, tuple) and any(d)) for d in dynamic)
    return bool(dynamic)


class CaughtSymbolicError(_C.TraceError):
    """A dynamic trace whose function (or a HOP body, or hop's own code)
    caught an error hop raised while tracing.  The op that raised it
    decided on the trace's symbols, took back the guards of that decision
    (bad input leaves the ShapeEnv as it was) and named the symbols in its
    message, so nothing in the graph says "only for these sizes": the
    handler's answer (its text, its other branch) would be the graph's for
    every size.  hop.trace and hop.compile trace such a call again with
    static sizes, whose errors are eager's and whose sizes are guarded
    (docs/ARCHITECTURE.md, "An error the function may catch")."""

    def __init__(self, fn):
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        super().__init__(f"{name} caught an error hop raised on symbolic sizes")


def _invoke(fn, built, kw, frame=None):
    """fn called on the built arguments: (args, {keyword: value}) with kw;
    with frame (a _frame.Translator), through the translator on the
    arguments but the lifted ints (the last positional ones)."""
    if frame is not None:
        pos = built[0] if kw else built
        n = len(pos) - len(frame.lifted)
        return frame.run(pos[:n], built[1] if kw else None, pos[n:])
    if kw:
        return fn(*built[0], **built[1])
    return fn(*built)


def _trace_once(fn, example_args, dynamic, paths, slots, slot_arrays, kwargs, compiling,
                frame):
    """One attempt of _trace with write-back slots for the roots `slots`."""
    if _C.tracing() is not None:
        raise _C.TraceError("hop.trace: a trace is already active (hop.trace and hop.compile "
                            "cannot be nested)")
    kw = bool(kwargs)
    leaves, spec = flatten(_call_tree(example_args, kwargs))
    if isinstance(dynamic, (list, tuple)) and len(dynamic) != len(leaves):
        raise ValueError(f"hop.trace: dynamic has {len(dynamic)} entries but there are "
                         f"{len(leaves)} arguments (one bool, or one bool per dim, each)")
    tr = _C.Trace()
    arg_names = leaf_names(fn, example_args, kwargs)
    arg_strides = _arg_strides(leaves)
    alias = _aliases(leaves, spec) if compiling else {}
    proxies, kinds, numpy_in, as_array = _add_inputs(tr, leaves, arg_names, dynamic, alias)
    call = _Call(fn, kw, frame, spec, proxies, kinds, as_array, slots, slot_arrays,
                 arg_strides, compiling)
    call.alias = alias
    call.arg_examples = _arg_examples(leaves)
    # (a read-only ndarray argument is a read-only array in the function:
    # a write raises NumPy's error where eager's does)
    call.read_only = {i for i, x in enumerate(leaves)
                      if _np is not None and isinstance(x, _np.ndarray) and not x.flags.writeable}
    try:
        # What fn can read besides its tensor arguments: the values the plan
        # will bake in (see _guards); and names for the tensors among them (a
        # capture is named when it is made).
        env = _guards.scan(fn, leaves, arg_names,
                           [k is None and i not in alias for i, k in enumerate(kinds)])
        # (only a Python function can be translated: hop.compile of
        # hop.grad(f) traces f's body inside the vjp node, as any HOP body,
        # where NumPy still computes with such an array)
        if compiling and frame is None and _np is not None and \
                type(fn) is types.FunctionType and \
                any(g.kind == "id" and type(g.expected) is _np.ndarray for g in env.guards):
            raise _breaks.EnvArrays()
        if frame is not None:
            # (a capture over an environment ndarray is named after it)
            frame.env_sources = {id(g.expected): g.source for g in env.guards
                                 if g.kind == "id" and _np is not None and
                                 type(g.expected) is _np.ndarray}
            frame.env_ids = env.seen | {id(t) for t, _ in env.tensors.values()}
        for t, sources in env.tensors.values():
            tr.name_hint(t, sources[0].hint())
        out_leaves, out_spec, traced, sym_out, writes, results = \
            _run_traced(tr, call, fn, paths, compiling, slots, spec, env)
        caught = tr.errors > 0 and _any_dynamic(dynamic)
        if caught and not compiling:
            raise CaughtSymbolicError(fn)
        runs = call.runs
        # (a layout a decision read is checked on every call, written or not)
        writeback = _WriteBack(slots, slot_arrays, tr, leaves, runs, traced, writes,
                               frame.env_sources if frame is not None else None, alias) \
            if slots or any(run.layout for run in runs) else None
        template = [None if isinstance(x, _TRACED_OUT) else x for x in out_leaves]
        plan = tr.lower()
        statics = [_Alias(alias[i]) if i in alias else None if k is not None else leaves[i]
                   for i, k in enumerate(kinds)]
        all_numpy = bool(numpy_in) and all(numpy_in)
        views = {id(v[1]): v[0] for k, v in tr.scratch.items()
                 if isinstance(k, tuple) and k[0] == "hop.numpy array"}
        captures = tr.captures
        if frame is not None:
            _frame_state.unguard(env, frame, leaves, captures)
        made = _guards.made_captures(captures, views,
                                     frame.made if frame is not None else None) | \
            {id(t) for run in runs for t in run.made}
        guards = _guards.Guards(env, captures, leaves, views, made=made,
                                inlined=frame.inlined.values() if frame is not None else (),
                                contents=tr.scratch.get(_breaks.BODY_ARRAYS, {}).values(),
                                release=compiling and writeback is None and
                                (frame is None or frame.stop is None))
        # A result that is such a capture itself (`return np.zeros(n)`): the plan
        # hands back the captured tensor, so each call copies it (eager makes it
        # anew; a caller's write must not show in the next call's result or in
        # the plan's constant).  So is a returned capture whose source the guards
        # did not find: one the function made that made_captures misses (`return
        # hop.tensor([1, 2])`: the result holds the references it counts), or one
        # it cannot see (warned).
        anew = made | {id(captures[i]) for i in guards.unsourced}
        results.copied = {i for i, x in enumerate(out_leaves) if isinstance(x, _TRACED_OUT) and
                          id(getattr(x, "_tv", x)) in anew}
        order = [c for run in runs for c in run.order]
        if order:
            # (read on C-ordered arguments: the same decisions for C-ordered ones)
            read = {sp[1] for c in order for sp in c[0] if sp[0] != "fixed"}
            order = (order, tuple(i in read for i in range(len(leaves)))
                     if all(_layout(leaves[i]) is True for i in read) else None)
        if writeback is not None:
            writeback.environment(guards, leaves, captures)
        # (hop's own function, hop.grad's: its trace is its only answer,
        # there is no eager one to give for an argument of its environment)
        runner = _Runner(tr, plan, spec, statics, out_spec, template, all_numpy, sym_out, guards,
                         as_array, writeback, kw=kw, results=results, order=order,
                         apart=getattr(fn, "_hop_no_eager", False) is not True)
        runner.caught = caught  # (hop.compile's _trace_sizes traces it again)
        # (NumPy's dispatch of a hop.Tensor made some of the plan's ops: its
        # floating-point flags are NumPy's, _compile._fp_check)
        runner.numpy_dispatch = bool(tr.scratch.get(_breaks.NUMPY_DISPATCH))
        # explain()'s lines of what the guards cannot see (describing them
        # needs the placeholder names: a walk of the whole graph, skipped when
        # there is nothing to say).
        unguarded = guards.unguarded(runner.capture_names) \
            if guards.unsourced or guards.skipped else []
        if unguarded:
            # Never silent: what the guards cannot see is said once per trace.
            warnings.warn(f"hop: {getattr(fn, '__qualname__', 'the traced function')} reads values "
                          f"that hop can guard by identity only, so a change inside them is not "
                          f"seen by this trace: " + "; ".join(unguarded), RuntimeWarning,
                          stacklevel=_paths.user_stacklevel())
        if any(g.kind == "ndarray" for g in guards.guards):
            _hollow_live(tr, frame, captures, guards)
        gm = GraphModule(tr, (), runner)
        gm.plan = plan
        return gm, runner
    finally:
        _release(call, tr)


def _hollow_live(tr, frame, captures, guards):
    """Drops what the trace keeps of the ndarrays guards.live made from:
    the trace's tensor over each (hollowed: it stays among the trace's
    captures, over no memory of the array), hop.numpy's entry for it in
    the trace and the translation's wrapper."""
    from . import _frame_state
    body = tr.scratch.get(_breaks.BODY_ARRAYS) or {}
    for g in guards.guards:
        if g.kind != "ndarray":
            continue
        tr.scratch.pop(("hop.numpy array", g.held[0]), None)
        body.pop(g.held[0], None)
        if frame is not None:
            hit = frame.env_arrays.pop(g.held[0], None)
            if hit is not None:
                frame.env_arrays.pop(id(hit[1]), None)
                # (a result that is a view of the wrapper: NumPy's view of
                # the array the source holds at the call, _view_again)
                if id(hit[1]) in _frame_state.ENV_ARRAYS:
                    _frame_state.ENV_ARRAYS[id(hit[1])] = g.source
    for i in guards.live:
        _C._hollow(captures[i])


def _release(call, tr):
    """Breaks the reference cycles of the call's hop.numpy arrays once the
    trace is made (or has failed): hop.numpy._storage.release, of its runs
    and of tr's implicit one (hop.numpy imported while tracing)."""
    storage = sys.modules.get("hop.numpy._storage")
    if storage is not None:
        storage.release(call.runs + storage.implicit_runs(tr))
        call.runs = []
    call.given = None
    call.raw_out = [None, None]


# What a traced result can be besides a Python value: a SymInt returns as an
# int, a SymFloat as a float (eager returns a Python float): its 0-d float64
# tensor is the output, and its value converts to that float exactly.
_TRACED_OUT = (_C.Tensor, _C.SymInt, SymFloat)


def _add_inputs(tr, leaves, arg_names, dynamic, alias=None):
    """The trace's inputs for the argument leaves: (proxies: each tensor or
    ndarray leaf's input, any other leaf itself; kinds: each leaf's tensor or
    None; numpy_in: per tensor leaf, whether it was an ndarray; as_array: the
    same per leaf).  A leaf of alias (the same object as an earlier leaf,
    _aliases) is that leaf's input again, its kind None (no input of its
    own)."""
    proxies, kinds, numpy_in, as_array = [], [], [], []
    for i, leaf in enumerate(leaves):
        if alias and i in alias:
            proxies.append(proxies[alias[i]])
            kinds.append(None)
            as_array.append(as_array[alias[i]])
            continue
        t, was_np = _as_tensor(leaf)
        as_array.append(was_np)
        if t is None:
            proxies.append(leaf)
            kinds.append(None)
            continue
        dyn = dynamic[i] if isinstance(dynamic, (list, tuple)) else bool(dynamic)
        proxies.append(tr.add_input(arg_names[i], t, dyn))
        kinds.append(t)
        numpy_in.append(was_np)
    return proxies, kinds, numpy_in, as_array


class _Call:
    """The traced function called on the trace's inputs, once per run (path
    specialisation runs it again).  Keeps the last run's arguments as the
    function saw them (given), its result as it returned it (_Results: which
    objects) with the rebuilt one that stands for it (raw_out), and
    hop.numpy's record of each run (runs)."""

    def __init__(self, fn, kw, frame, spec, proxies, kinds, as_array, slots, slot_arrays,
                 arg_strides, compiling=False):
        self.fn, self.kw, self.frame, self.spec = fn, kw, frame, spec
        self.proxies, self.kinds, self.as_array = proxies, kinds, as_array
        self.slots, self.slot_arrays, self.arg_strides = slots, slot_arrays, arg_strides
        self.uses_numpy = any(as_array) or "hop.numpy" in sys.modules
        self.arg_examples = {}
        self.read_only = set()
        self.given = None
        self.raw_out = [None, None]
        self.runs = []
        self.compiling = compiling  # hop.compile's trace (_unchanged)
        self.alias = {}  # argument leaf -> the earlier leaf it is (_aliases)

    def _unchanged(self, built, leaves, spec=None):
        """hop.compile's plain trace: _breaks.ArgumentChanged when fn changed its
        arguments' structure (built, spec's), which the plan would not."""
        if self.frame is None and self.compiling:
            what = structure_changed(built, spec or self.spec, leaves)
            if what is not None:
                raise _breaks.ArgumentChanged(what)

    def __call__(self):
        # An ndarray argument behaves as an ndarray in the function (NumPy's
        # semantics, through hop.numpy), and returns as one; fresh wrappers
        # for each run of the function (path specialisation runs it again).
        if not self.uses_numpy:
            built = unflatten(self.proxies, self.spec)
            self.given = built
            out = _invoke(self.fn, built, self.kw, self.frame)
            self._unchanged(built, self.proxies)
            return out
        storage = sys.modules["hop.numpy._storage"] if "hop.numpy._storage" in sys.modules \
            else _hnp()._storage
        slots, slot_arrays = self.slots, self.slot_arrays
        run = storage.begin_run(True, slots, slot_arrays)
        self.runs.append(run)
        try:
            run.arg_strides = self.arg_strides
            run.arg_examples = self.arg_examples
            # a hop.numpy array argument is rebuilt from its tensor: that one
            run.arg_tensors = {id(p): i for i, (p, k) in enumerate(zip(self.proxies, self.kinds))
                               if k is not None}
            made = []
            for i, (p, a) in enumerate(zip(self.proxies, self.as_array)):
                # (one ndarray at two places: one hop.numpy array at both)
                j = self.alias.get(i)
                made.append(made[j] if j is not None else
                            _numpy_arg(p, i, i in self.read_only) if a else p)
            args = unflatten(made, self.spec)
            run.arg_tensors = {}
            self.given = args
            before = flatten(args)[1] if self.frame is None and self.compiling else None
            out = self.raw_out[0] = _invoke(self.fn, args, self.kw, self.frame)
            self._unchanged(args, None, before)
            # the result's arrays as they are now (a captured array's value
            # is the run's only while it lasts), and the final value of every
            # written root, then the tensor of each captured one (so that
            # the runner finds it among the captured inputs)
            # (one array at several places stays one: `return a, [a]`)
            out = unflatten_with(*flatten(out), {}, repeats(out, _is_atom))
            self.raw_out[1] = out
            if not slots:
                return out
            writes = [run.root_value(k) for k in slots]
            writes += [slot_arrays[k]._tv for k in slots if k[0] == "capture"]
            return out, tuple(writes)
        finally:
            storage.end_run(run)


def _run_traced(tr, call, fn, paths, compiling, slots, spec, env):
    """Runs call in the trace tr (through paths, hop.compile's path
    specialisation, when given) and sets the trace's outputs: (the result's
    leaves, its spec, the traced ones among them, sym_out: per traced one
    "float", True for a SymInt, False for a tensor, the write-back slots'
    values, _Results)."""
    tr.start()
    try:
        if compiling:
            _breaks.mark_compile(tr, _reads.is_hop_function(fn))
        try:
            if paths is not None:
                # NumPy's semantics: a branch on a value hop may compute with
                # other bits than NumPy is decided by NumPy's (_paths._hook)
                paths.numpy = any(call.as_array)
            out = call() if paths is None else paths.run(tr, call)
        except BaseException:
            brk = _breaks.raised(tr)
            if brk is not None:
                raise brk from None  # the break, whatever the function made of it
            raise
        brk = _breaks.raised(tr)
        if brk is not None:
            raise brk  # raised and caught inside the function: the trace ends there
        writes = ()
        if slots:
            out, writes = out
        out_leaves, out_spec = flatten(out)
        hnp = loaded_hop_numpy()
        if hnp is not None:
            out_spec = hnp._numpy_out_spec(out_spec)
        traced = [x for x in out_leaves if isinstance(x, _TRACED_OUT)]
        sym_out = ["float" if isinstance(x, SymFloat) else isinstance(x, _C.SymInt)
                   for x in traced]
        # the raw result only when the trace's result is that run's; path
        # specialisation merges the runs' results into new values: what of
        # them is the caller's comes from one run, the same in every one
        raw_out = call.raw_out
        raw = raw_out[0] if raw_out[1] is out and out is not None else out
        merged = paths is not None and paths.runs is not None and out is not None
        run, given = (call.runs[-1] if call.runs else None), call.given
        if merged:
            raw, run, given = paths.merged_result(env.seen)
        results = _Results(fn, raw, out_leaves, _TRACED_OUT, given, spec, env.seen,
                           _memory_owners(g.held() if g.weak else g.held for g in env.guards))
        if run is not None:
            whole = results.root_views(raw if merged else raw_out[0], raw is raw_out[0],
                                       merged, run, given, call.as_array, spec, out_spec)
            if whole:
                # (the plan returns the whole array a result is a view of)
                out_leaves = [whole.get(i, x) for i, x in enumerate(out_leaves)]
                traced = [x for x in out_leaves if isinstance(x, _TRACED_OUT)]
        outs = [_out_value(x) for x in traced] + list(writes)
        if hnp is not None:
            # a float max/min that reaches a result with its zero's sign:
            # checked at run time (hop.numpy._core.checked_outputs); a
            # failed check runs a compiled call eagerly, and hop.trace's
            # call raises hop.CheckError
            outs = hnp._core.checked_outputs(tr, outs)
        tr.output(outs)
    finally:
        tr.stop()
        _breaks.forget(tr)
        brk = None  # (a break's traceback holds this frame: a cycle for the cyclic gc)
    return out_leaves, out_spec, traced, sym_out, writes, results


class _Results:
    """What a trace learned about the function's result besides its traced
    values: which of its nodes are objects that existed before the call (an
    argument's container or leaf, an object the function's environment
    holds), returned as themselves (eager: f(d) is d), and which constants
    the call made, made anew on every call (a NumPy array, a set).  A result
    that holds a traced value where a plan cannot rebuild it (a closure, an
    object's attribute, a set) ends the compiled part (_breaks).

    Pre-existing means reached by the arguments' structure or by the
    guards' walk of the environment (_guards.scan: its depth and size
    limits); an object the function returns from deeper is taken as made by
    the call (documented)."""

    __slots__ = ("same", "fresh", "copied", "again", "columns")

    def root_views(self, raw, kept, merged, run, given, as_array, arg_spec, out_spec):
        """The arrays of the result that NumPy gives as views of the caller's
        memory (an argument, a captured hop.numpy array), each made again
        from it on every call (_view_again; hop.numpy._storage.root_view):
        the plan's result holds hop's memory, a copy where hop copied the
        argument on the way in (read-only, negative strides) or where a
        step is a take.  kept: whether raw is the trace's result; merged:
        raw is one run of those path specialisation merged into new
        arrays (the same views in each, _paths.merged_result), with
        run its record and given its arguments: a view of a computed
        array there is one only where the plan's result is NumPy's view."""
        storage = sys.modules.get("hop.numpy._storage")
        if storage is None or raw is None:
            return None
        whole = {}  # result leaf -> the tensor of the array it is a view of
        leaf_at = {p: i for i, p in enumerate(_leaf_paths(out_spec))}
        hnp = sys.modules["hop.numpy"]
        numpy_arg, hnp_array = hnp.NumpyArg, hnp.ndarray
        given = {id(n): p for p, n in _pytree_nodes(given, arg_spec).values()} \
            if given is not None else {}
        nodes = [(p, n, storage.root_view(n, run)) for p, n in _pytree_nodes(raw).values()
                 if isinstance(n, hnp_array)]
        reach = collections.Counter(id(n._st) for _, n, _ in nodes if n._st is not None)
        # the arrays of the result (an effect's value too) over one computed
        # array (`b, b[0]`; `b[0], b[1]`): views of one plan result, as eagerly
        # (a whole-array reshape or ravel of a computed array, which
        # root_view leaves to the plan, counts too: `c.reshape(3, 4),
        # np.ravel(c)` are two views of c's memory, as eagerly)
        first = {id(n._st) for _, n, how in nodes if how and how[0][0] in ("out", "made") or
                 how is None and n._vw and not n._scalar and n._st is not None and
                 n._st.run is run and n._st.root is None}
        first = {id(n._st): leaf_at[p + (0,)] for p, n, _ in reversed(nodes)
                 if id(n._st) in first and reach[id(n._st)] > 1 and not n._scalar}
        columns = getattr(run, "columns", ())
        for path, node, how in nodes:
            if how is None and type(node) is numpy_arg and any(node is c for c in columns):
                # NumPy's nonzero column of a 1-d array: C strides without
                # elements too, where a new array's are zero (finish)
                self.columns.append(leaf_at[path + (0,)])
                continue
            if merged and node._st is not None and node._st.root is None and \
                    reach[id(node._st)] > 1:
                how = False  # (`c, c.reshape(-1)`: a cond's outputs share no memory)
            if id(node._st) in first and not merged:
                whole[first[id(node._st)]] = node._st.value
            if id(node._st) in first and how is not False and \
                    (how[0][0] == "made" if how else True) and not node._scalar:
                # the computed array itself, returned too, a reshape of it
                # (`np.expand_dims(c, 0)`: the plan's result there is the
                # whole array now), or (made from constants) with it: each
                # made from one (copied) result
                steps = how[1] if how else node._vw
                how = (("out", node._st.value), steps) if all(
                    s.apply_np is not None or s.kind == "bitcast" for s in steps) else False
            if type(node) is hnp_array and node._run is None and kept and \
                    not _C._is_proxy(node._tv) and \
                    (how is None and node._st is None or node._cp is not None):
                # a hop.numpy array of the function's environment itself
                # (`return G`; `C += 1`, which stores C in its cell again):
                # the array its source holds at the call, as eagerly (also
                # a captured view hop made as a copy, `return V` of `V =
                # G[::-1]`, which the run sees as a view of G's storage)
                how = (("capture", node), ())
            elif how and how[0][0] == "arg" and type(node) is hnp_array:
                # a view of a hop.numpy argument: made again from the
                # caller's array by eager's steps (the plan's tensor is a
                # copy where a step takes elements, b[::-1], or of a written
                # argument's new value, and eager's view of a view hop made
                # as a copy writes through to its base, _cp)
                how = _hnp_arg_view(how, arg_spec)
            if how is None or (how is not False and how[0][0] not in ("capture", "hnparg") and
                               type(node) is not numpy_arg):
                continue  # (a hop.numpy array the function returns stays one)
            if how is not False and how[0][0] in ("out", "made") and merged:
                # the whole array is a value of a cond's body (one path's)
                how = None if storage.plan_gives_view(node, reach[id(node._st)] > 1) else False
                if how is None:
                    continue
            if how is not False and how[0][0] == "out" and kept:
                if storage.plan_gives_view(node, reach[id(node._st)] > 1):
                    continue  # the plan's own result is NumPy's view (C order, base unseen)
                i = leaf_at[path + (0,)]
                whole[i] = how[0][1]
                how = (("out", first.get(id(node._st), i)), how[1])
            if how is not False and how[0][0] == "arg":
                arg = run.args.get(how[0][1])
                where = given.get(id(arg)) if arg is not None and \
                    as_array[how[0][1]] else None
                how = False if where is None else (("arg", where), how[1])
            if how is False or not (kept or merged):
                _breaks.conversion(_C.TraceError, "the function returns a view of an argument "
                                                  "or captured array that hop cannot make "
                                                  "again from the caller's array (a step with "
                                                  "a traced part)")
            self.same[path] = ("view", how, bool(node._ro), type(node))
        return whole

    def __init__(self, fn, out, out_leaves, outs, given, arg_spec, env_ids, env_owners=()):
        self.same = {}   # path in the result -> ("arg", path in the arguments) or ("obj", it)
        self.fresh = {}  # index of a constant leaf -> a function making it anew
        self.copied = set()  # indices of traced leaves each call copies (_trace)
        self.columns = []  # indices of leaves that are NumPy's nonzero columns (root_views)
        # path -> the earlier path of the same object: `return y, [y]` or
        # `log.append(y); return y` (the effects' values are part of the
        # result) is one object at both places, as eagerly
        self.again = repeats(out, _is_atom)
        given_nodes = _pytree_nodes(given, arg_spec) if given is not None else {}
        for node_id, (path, node) in _pytree_nodes(out).items():
            if isinstance(node, dict) and \
                    any(isinstance(k, outs) or _holds_traced(k) for k in tuple(node)):
                # a key is the structure's, not a leaf the plan returns:
                # it would come back as the trace's value
                _breaks.conversion(_C.TraceError, "the function returns a dict keyed by a "
                                                  "traced value; only its values come back "
                                                  "from a plan")
            if _is_atom(node) or isinstance(node, outs):
                hit = given_nodes.get(node_id)
                if hit is not None and hit[1] is node and isinstance(node, _C.Tensor):
                    self.same[path] = ("arg", hit[0])  # a tensor argument, returned
                continue
            hit = given_nodes.get(node_id)
            if hit is not None and hit[1] is node:
                self.same[path] = ("arg", hit[0])
            elif node_id in env_ids:
                self.same[path] = ("obj", node)
        # the caller's object returned twice is itself at both places
        for p, q in self.again.items():
            if q in self.same:
                self.same[p] = self.same[q]
        # a node inside one already taken whole is not looked at
        self.same = {p: a for p, a in self.same.items()
                     if not any(p[:k] in self.same for k in range(len(p)))}
        self.again = {p: q for p, q in self.again.items()
                      if not any(p[:k] in self.same for k in range(len(p) + 1)) and
                      not any(q[:k] in self.same for k in range(len(q)))}
        mine = None
        for i in range(len(out_leaves)):
            x = out_leaves[i]
            if isinstance(x, outs) or _is_atom(x) or id(x) in env_ids:
                continue
            if _holds_traced(x):
                if isinstance(x, types.CoroutineType) and \
                        inspect.getcoroutinestate(x) == inspect.CORO_CREATED:
                    # (the trace's own coroutine over proxies, never to be
                    # awaited: closed, or its "never awaited" RuntimeWarning
                    # would be one eager does not give)
                    x.close()
                _breaks.conversion(_C.TraceError, f"the function returns a "
                                                  f"{type(x).__name__} that holds a traced "
                                                  f"value; only tensors, numbers and pytrees "
                                                  f"of them come back from a plan")
            if mine is None:
                mine = _nested_codes(fn)
            if isinstance(x, types.FunctionType):
                if x.__code__ in mine:
                    _breaks.conversion(_C.TraceError, f"the function returns the function "
                                                      f"{x.__qualname__} it makes, a new one "
                                                      f"on each call eagerly")
                continue
            if _np is not None and isinstance(x, _np.ndarray):
                # a NumPy view of an array the environment holds (`G.T` of a
                # global) is a new view of its memory on every call, as
                # eagerly; an array the call made, a new copy
                owner = env_owners.get(id(_memory_owner(x))) if x.base is not None else None
                self.fresh[i] = functools.partial(_env_view, x, owner) \
                    if owner is not None else x.copy
            elif _mutable(x) and not any(x is g[1] for g in given_nodes.values()):
                import copy
                try:
                    copy.deepcopy(x)
                except Exception:
                    _breaks.conversion(_C.TraceError, f"the function returns a "
                                                      f"{type(x).__name__} it makes, which hop "
                                                      f"cannot make anew for every call")
                self.fresh[i] = functools.partial(copy.deepcopy, x)

    def __bool__(self):
        return bool(self.same or self.fresh or self.copied or self.again or self.columns)


def _itself(obj):
    return obj


def _memory_owner(x):
    """The object at the end of ndarray x's base chain (what owns its memory)."""
    while isinstance(x, _np.ndarray) and x.base is not None:
        x = x.base
    return x


def _memory_owners(values):
    """id(owner) -> an ndarray among values whose memory that owner holds."""
    if _np is None:
        return {}
    return {id(_memory_owner(v)): v for v in values if isinstance(v, _np.ndarray)}


def _env_view(x, owner):
    """A new view of x, NumPy's view of the environment's array owner made
    when traced (guarded by identity): its memory, strides and flags, and
    read-only while owner is."""
    v = x.view()
    if v.flags.writeable and not owner.flags.writeable:
        v.flags.writeable = False
    return v


def _as_ndarray(x):
    # (as the plan's other results: a new array without elements has
    # NumPy's zero strides, so the views made of it have them too)
    return _C._np_result(x) if isinstance(x, _C.Tensor) else x


def _leaf_paths(spec, path=(), out=None):
    """The path of each leaf of spec, in flatten's order."""
    out = [] if out is None else out
    if spec.kind == "leaf":
        out.append(path)
    elif spec.kind != "none":
        for i, c in enumerate(spec.children):
            _leaf_paths(c, path + (i,), out)
    return out


def _hnp_arg_view(how, arg_spec):
    """root_view's ("arg", leaf) how of a view of a hop.numpy argument as
    (("hnparg", the argument array's path in the call's tree), steps), or
    None when the leaf is not such an array's (an ndarray or hop.Tensor
    argument the function made a hop.numpy array of, hnp.asarray(v): the
    plan's result, a view of the argument's tensor, as before)."""
    (_, leaf), steps = how
    path = _leaf_paths(arg_spec)[leaf][:-1]
    spec = arg_spec
    for i in path:
        spec = spec.children[i]
    if spec.kind != "custom" or spec.cls is not sys.modules["hop.numpy"].ndarray:
        return None
    return ("hnparg", path), steps


def _view_again(tree, arg_spec, how, readonly, cls, leaves, made, now=None):
    """NumPy's view of the caller's memory that a result is (_Results.
    root_views): its steps applied again to the caller's array, after the
    call's writes reached it, so the view has NumPy's strides, flags and
    memory (a view of a read-only argument is read-only, of a reversed one
    has negative strides).  made: this call's views by their steps, so
    that results made by the same steps from one array are one array, as
    eagerly (`v = a[1:]; return v, np.squeeze(v)`: v twice)."""
    (kind, ref), steps = how
    # (an environment ndarray's capture: NumPy's view of that ndarray)
    env = _frame_state.ENV_ARRAYS.get(id(ref)) if kind == "capture" else None
    if type(env) is _guards.Source:
        # (an array hop holds no reference to, Guards.live: the one its
        # source holds at this call, whose id and layout the guards checked)
        env = env.read(None)
    if kind not in ("capture", "hnparg") or env is not None:
        v = base = env if env is not None else subtree(tree, arg_spec, ref) if kind == "arg" \
            else _as_ndarray(leaves[ref]) if kind == "out" else ref._tv.numpy().copy(order="K")
        if kind == "out":
            leaves[ref] = base  # one ndarray for all its views (`b, b.real`: b twice)
        from .numpy._storage import numpy_view
        key = (kind, id(ref)) if kind in ("made", "capture") else (kind, ref)
        for s in steps:
            key += (id(s),)  # (the steps live as long as the plan)
            v = made[key] if key in made else made.setdefault(key, numpy_view(s, v))
        if v is base and not (readonly and v.flags.writeable):
            return v  # (a.real of a real array, np.squeeze without size-1 axes: itself)
        if readonly and v.flags.writeable:
            v = v.view() if v is base else v
            v.flags.writeable = False
        return v
    from .numpy import _ndarray
    # a captured hop.numpy array (the one its global or cell holds at this
    # call: now) or a hop.numpy argument: its views, as eager makes them
    v = subtree(tree, arg_spec, ref) if kind == "hnparg" else now(ref) if now else ref
    for s in steps:
        # (a complex part: eager's attribute, NumPy's view of the memory,
        # where the step's tensor op is a copy; a dtype view: eager's
        # ndarray.view, where the step's bitcast op is a copy, so `return
        # G.view(np.int64)` shared no memory with G until the forty-fifth
        # session's alias campaign found it)
        v = getattr(v, s.kind) if s.kind in ("real", "imag") else \
            v.view(s.apply.dtype) if s.kind == "bitcast" else _ndarray.view(cls, v, s)
    return v


def _pytree_nodes(obj, spec=None):
    from ._pytree import nodes
    return nodes(obj, spec=spec)


_ATOMS = (int, float, complex, str, bytes, bool, type(None), range, slice, type(Ellipsis),
          type, types.ModuleType, types.BuiltinFunctionType, frozenset)


def _is_atom(x):
    """An immutable value: the same object on every call is what eager gives
    (or cannot be told from it)."""
    if isinstance(x, _ATOMS):
        return not isinstance(x, frozenset) or all(_is_atom(v) for v in x)
    if _np is not None and isinstance(x, (_np.generic, _np.dtype)):
        return True
    return isinstance(x, type(_C.float32))


def _mutable(x):
    return not isinstance(x, (types.FunctionType, types.MethodType, _C.Tensor))


def _holds_traced(x):
    from ._hops import _holds_traced as holds
    return holds(x)


def _nested_codes(fn):
    """The code objects of the functions fn makes when called."""
    out = set()
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    todo = list(code.co_consts) if code is not None else []
    while todo:
        c = todo.pop()
        if isinstance(c, types.CodeType):
            out.add(c)
            todo.extend(c.co_consts)
    return out


def _hnp():
    from . import numpy
    return numpy


def _arg_strides(leaves):
    """Per ndarray argument leaf that is not C-contiguous, its strides in
    elements (hop.numpy decides NumPy's views with them)."""
    out = {}
    for i, x in enumerate(leaves):
        if _np is not None and isinstance(x, _np.ndarray) and not x.flags.c_contiguous and \
                x.itemsize:
            out[i] = tuple(s // x.itemsize for s in x.strides)
    return out


def _arg_examples(leaves):
    """Per ndarray argument leaf, the example's shape and strides in
    elements (hop.numpy's order decisions read them when sizes are
    symbolic)."""
    return {i: (x.shape, tuple(s // x.itemsize for s in x.strides))
            for i, x in enumerate(leaves)
            if _np is not None and isinstance(x, _np.ndarray) and x.itemsize}


class FPWarned(BaseException):
    """A NumPy call's plan raised a floating-point exception NumPy's error
    state warns for (_C._np_fp_warned): raised right after the plan ran,
    before anything of the call is applied (a write-back into an argument,
    a replayed effect), so that hop.compile runs the call through NumPy,
    which warns as it does and answers (docs/ARCHITECTURE.md, "Floating-point
    warnings")."""


class EnvArgument(_C.GuardError):
    """A call's argument (a leaf) is an object of the plan's environment:
    a tensor or ndarray of a global, a closure cell or an object the
    function reads, which the trace took for an object distinct from every
    argument (the argument was a proxy), so `x is G` answered False and
    `if x is G:` took the other side.  The guards held: hop.compile runs
    such a call eagerly (_eager_for_argument, its plans stay for other
    arguments); a GraphModule raises it (docs/ARCHITECTURE.md, "An argument
    that is an object of the environment")."""

    def __init__(self, why):
        super().__init__(f"guard failed: {why}")
        self.why = why


class _Alias:
    """A runner's static for an argument leaf that is the same object as
    leaf i (_aliases): the plan has no input for it, and a call fits only
    with that object there again."""

    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i

    def __repr__(self):
        return f"the same object as argument leaf {self.i}"


def _aliases(leaves, spec):
    """{j: i}: argument leaf j is the same hop.Tensor or ndarray object as
    the earlier leaf i (f(t, t), f(x, [x])).  hop.compile traces them as one
    input, as Dynamo specialises a plan to "arg0 is arg1": the function sees
    one object at both places (`a is b`; a write through one shows through
    the other), and the plan fits only calls with the same aliasing
    (_Runner.tensors).  Not the tensor of a hop.numpy array node (rebuilt
    per place: such a call runs eagerly, _frame.repeated_containers)."""
    inside = _array_leaves(spec)
    first, out = {}, {}
    for j, x in enumerate(leaves):
        if inside[j] or not (type(x) is _C.Tensor or _np is not None and type(x) is _np.ndarray):
            continue
        i = first.setdefault(id(x), j)
        if i != j:
            out[j] = i
    return out


def _twice(xs):
    """Whether one object is at two places of the list xs."""
    return len(xs) > 1 and len({id(x) for x in xs}) < len(xs)


def _aliased(args, kwargs):
    """GuardError when the call's arguments hold one hop.Tensor, ndarray or
    hop.numpy array at two places (_frame.repeated_containers) where the
    plan was traced with an input per place: `a is b` and a write through
    one seen through the other would be lost.  hop.compile then traces the
    call again with one input for both (_aliases), or runs it eagerly (a
    hop.numpy array's node: _compile._eager_argument).  (Called once two
    leaves are one object, which for other leaves -- two tensors of one
    hop.numpy array -- is not a repeat.)"""
    from . import _frame
    twice = _frame.repeated_containers(args, kwargs, True)
    if twice is not None:
        raise _C.GuardError(f"guard failed: {twice}, traced as distinct objects")


class _Runner:
    """Calls a plan with the tensor leaves of the arguments (plus captured
    tensors) and rebuilds the result's structure.

    Arguments that are not tensors were constants of the trace: a scalar
    must be equal and of the same type, anything else the same object.  The
    guards of what the function read from its environment (_guards.Guards)
    are checked with `is` on every call; when that fast check fails, the full
    check re-reads each source, and the captured tensors it finds are the
    ones passed from then on (a rebound global tensor is used, not the one
    of the trace)."""

    # whether the function caught an error hop raised on the trace's symbols
    # (CaughtSymbolicError; _trace_once sets it)
    caught = False

    def __init__(self, tr, plan, spec, statics, out_spec, template, all_numpy, sym_out, guards,
                 as_array, writeback=None, kw=False, results=None, order=None, apart=True):
        self.plan = plan
        # The decisions of the memory order of elementwise results that read
        # argument layouts (NumPy's K order), made again for each call's
        # arguments: another order is another plan for hop.compile (a
        # GraphModule, one trace, keeps its order); and which arguments a
        # fast call checks for C order instead (None: no fast call).
        self._order, self._c_order = order if order else (None, None)
        self._order_memo = {}  # the argument layouts the order records held for
        self.writeback = writeback
        # Whether the trace's call had keyword arguments: spec is then that
        # of (args, {keyword: value}), and only such calls fit.
        self.kw = kw
        # Result nodes that are the caller's own objects, constants made
        # anew per call (_Results); None when there are none.
        self._results = results if results else None
        # Which arguments were ndarrays (NumPy's semantics in the function):
        # hop.compile retraces when an argument changes kind.
        self.as_array = as_array
        self.sym_out = sym_out
        self.spec = spec
        self.statics = statics
        self.captures = list(tr.captures)
        self._tr = tr
        self.out_spec = out_spec
        self.template = template
        self.all_numpy = all_numpy
        self.guards = guards
        self._check = guards.check
        # what the bound C calls check: the builtin names in C, then _check_c
        # (the other guards; None: none), hop/_guards.py Guards.check_c
        self._names = getattr(guards, "names", None)
        self._check_c = getattr(guards, "check_c", self._check)
        # hop.compile's runners: fp_warned(args, kwargs) says whether a call
        # has NumPy's semantics, and a plan run of such a call that raised a
        # floating-point exception NumPy warns for raises FPWarned.  None
        # (a GraphModule's): never checked.
        self.fp_warned = None
        # hop.compile's runners: one tensor or array at two places of the
        # arguments where the trace had distinct ones fails (_aliased);
        # False (a GraphModule's): two inputs, as traced
        self.distinct = False
        # (the objects the fast check expects, the captured tensors): one
        # tuple, replaced whole, so a call on another thread reads a
        # consistent pair.  (A plan that reads ndarrays of the environment
        # held by no reference: _LiveRunner's, its captures made per call.)
        # What no argument may be: the captures and the environment's
        # objects at these addresses (Guards.env_ids), which the trace took
        # for objects distinct from every argument (EnvArgument); None when
        # there is nothing to check, or apart is False (hop's own function)
        ids = tuple(getattr(guards, "env_ids", ()))
        self._env = ids if apart and (ids or self.captures) else None
        live = guards.live_entries() if getattr(guards, "live_entries", None) else ()
        if live:
            self.__class__ = _LiveRunner
            self._live = _C._LiveCaptures(live, guards.state(self.captures))
        else:
            self._state = guards.state(self.captures)
        self._bind_calls()

    def _bind_calls(self):
        """The fast calls for the argument and result specs (_compile._result_only)."""
        # Which results a NumPy call (all_numpy) returns as ndarrays: not the tensor of a
        # hop.numpy array the function returned (eagerly that array; its node rebuilds it).
        self._to_numpy = [not a for a in _array_leaves(self.out_spec)]
        # The common call, fn(t1, ..., tn) on hop.Tensors returning tensors,
        # skips flattening and rebuilding (most of a small plan's call cost).
        spec, out_spec, template, plan = self.spec, self.out_spec, self.template, self.plan
        flat = flat_args = spec.kind == "tuple" and all(c == LEAF for c in spec.children) and \
            not self.kw
        # (hop.Tensors only, positional, each its own leaf or, for the bound
        # calls, an earlier one's object: _Alias, checked in C by the pattern)
        alias = tuple(s.i if type(s) is _Alias else -1 for s in self.statics)
        aliased = any(i >= 0 for i in alias)
        tensors = all(s is None or type(s) is _Alias for s in self.statics)
        flat_in = flat and tensors and not any(self.as_array)
        flat = flat and self._results is None
        self._nflat = len(self.statics) if flat_in and flat else -1
        self._one_out = out_spec == LEAF and len(template) == 1 and template[0] is None and \
            self.sym_out == [False] and self._results is None
        # The common NumPy call, fn(a1, ..., an) on ndarrays returning
        # arrays: (whether a tuple, the 0-d results to return as NumPy
        # scalars), or None.
        hnp = loaded_hop_numpy()
        self._ndflat = len(self.statics) if flat and tensors and all(self.as_array) else -1
        self._ndout = hnp._simple_out(self.out_spec) if hnp is not None and \
            all(t is None for t in self.template) and not any(self.sym_out) else None
        # That call with no environment guards to check (the captures never
        # change): bound in C, fast(args) runs it for a tuple of ndarrays
        # and is NotImplemented for anything else (hop.compile's __call__).
        # A plan whose results' order followed C-ordered arguments keeps the
        # fast calls for C-ordered arrays: _c_order marks the arguments they
        # check (the general path checks any other traced layout).
        if self._order:
            self._nflat = -1
            if self._c_order is None:
                self._ndflat = -1
        if self.writeback is not None:  # every call writes back: the general path
            self._nflat = self._ndflat = -1
        # hop.numpy arrays in, one out (hop.compile(hop.grad(f))): call()'s fast hop.numpy call
        self._hnflat = hnp._flat_arrays(self) if hnp is not None else -1
        self._hnarr = hnp and hnp.ndarray
        # The call fn(a1, ..., an) of hop.Tensors and constants (a resume's
        # locals: a loop counter, a flag), positional, whatever its results
        # (a break's plan returns the caller's own objects): the statics,
        # checked here without flattening (_mixed_tensors); None: not this
        # call
        self._mixed = tuple(self.statics) if flat_args and not any(self.as_array) and \
            not aliased and not self._order and self.writeback is None else None
        # finish's caller's objects that are leaves of the result: [(leaf
        # index, ("arg", path) or ("obj", it))], () when another kind is
        # (_same_leaves); None until finish first needs it
        self._same_leaves = None
        # Whether finish's leaves are the plan's outputs as they are (no
        # constant, SymInt or caller's object among them), and its rebuild
        # of the result from leaves (_unflatten): made on the second call
        # (_pytree.builder: one generated expression for a structure of
        # tuples, lists and dicts); None until then, 0 after the first call
        self._plain_out = all(t is None for t in self.template) and \
            not any(self.sym_out) and self._results is None
        self._build_out = None
        # Arguments _C._EffectsCall takes as they are (_compile._effects_call),
        # an aliased plan's with its pattern (alias)
        self.flat_in = flat_in and not self._order and self.writeback is None
        self.alias = alias if aliased else None
        # (a plan whose only guard is the builtin names' is bound with it:
        # the bound call checks it, _C._bind_names; so is a NumPy call's
        # whose other guards are those of the environment's ndarrays it
        # holds no reference to, which its _C._LiveCaptures checks and makes
        # the captures of at each call)
        live = getattr(self, "_live", None)
        unchecked = self._check_c is None or \
            live is not None and getattr(self.guards, "check_live", 0) is None
        # (an aliased plan's bound call takes the arguments with their
        # pattern, f(a, a): alias[j] is the earlier argument j must be, -1
        # an input of its own, which must differ from the other own ones)
        bound_alias = alias if aliased else None
        self.fast = plan.bind_arrays(self._ndflat, self._state[1] if live is None else
                                     live.state[1], self._ndout, self._c_order, bound_alias,
                                     live, self._env) \
            if self._ndflat >= 0 and self._ndout is not None and unchecked else None
        # The same for hop.Tensors in and a tensor or a flat tuple of them
        # out: bound in C, no Python frame between the call and the plan;
        # with the environment's ndarrays checked and borrowed there too, as
        # for NumPy's call (the _EffectsCall that took this call before
        # checked them in Python; hop.Tensor arguments compute with hop's
        # semantics, no floating-point check, as that call)
        flat_out = out_spec.kind == "tuple" and all(c == LEAF for c in out_spec.children) and \
            all(t is None for t in template) and not any(self.sym_out)
        if self.fast is None and self._nflat >= 0 and unchecked and (self._one_out or flat_out):
            self.fast = plan.bind_tensors(self._nflat, self._state[1] if live is None else
                                          live.state[1], self._one_out, bound_alias, live,
                                          self._env)
        if self.fast is not None and self._names is not None:
            _C._bind_names(self.fast, self._names)
        if aliased:  # (call()'s Python paths pass each argument as its own input)
            self._nflat = self._ndflat = -1

    @property
    def capture_names(self):
        """The placeholder names of the captured inputs (the last root
        placeholders), for explain()."""
        n = len(self.captures)
        if not n:
            return []
        names = self._tr.placeholder_names(())
        return names[len(names) - n:]

    def _captured(self, leaves):
        """The captured tensors to pass: from the state when the fast check
        holds, else re-read and checked in full (GuardError on a change)."""
        st = self._state
        check = self._check
        if check is None or check(st[0], leaves):
            return st[1]
        st = self._state = self.guards.revalidate(st, leaves)
        return st[1]

    def _apart(self, leaves, caps):
        """EnvArgument when an argument leaf is an object of the plan's
        environment: one of caps (this call's captures, after the guards)
        or at an address of Guards.env_ids.  Not a GraphModule's (distinct
        False: one fixed trace whose inputs run as traced, as for gm(a, a))."""
        if not self.distinct:
            return
        i = _C._env_argument(leaves, caps, self._env)
        if i >= 0:
            raise EnvArgument(f"argument leaf {i} that is "
                              f"{self.guards.env_source(leaves[i], caps)} (the trace took them "
                              f"for distinct objects)")

    def _capture_now(self, tree, ref):
        """The hop.numpy array of the function's environment that the
        trace's captured array ref stands for at this call (tree: its
        arguments): the one its source (a global, a cell, an attribute)
        holds, whose tensor the plan was given (the name rebound to a new
        array of the same dtype and shape fits the plan: a result that is
        that array or its view is of the new one, as eagerly); ref when it
        has no such source."""
        caps = self._state[1]
        j = next((j for j, c in enumerate(self.captures) if c is ref._tv), None)
        if j is None:
            return ref
        found, leaves = [], None
        for g in getattr(self.guards, "guards", ()):
            src = g.source
            if g.kind != "tensor" or g.capture != j or not src.path or \
                    src.path[-1][0] != "array":
                continue
            if src.kind == "arg" and leaves is None:
                leaves = flatten(tree)[0]
            try:
                v = _guards.Source(src.kind, src.base, src.key, src.text,
                                   src.path[:-1]).read(leaves)
            except Exception:  # noqa: BLE001 (revalidate read it; a getter's own error)
                continue
            if type(v) is type(ref) and v._tv is caps[j]:
                found.append(v)
        if found:
            # (two names of one tensor: the one still holding the traced array)
            return next((v for v in found if v is ref), found[0])
        return ref if ref._tv is caps[j] else type(ref)(caps[j], scalar=ref._scalar)

    def _recheck(self):
        """_C._EffectsCall's full check when the fast one failed (its plan
        has no guard on an argument): the new state, as _captured keeps it,
        or None on a guard's miss (the general path then raises it)."""
        try:
            st = self._state = self.guards.revalidate(self._state, None)
        except _C.GuardError:
            return None
        return st

    def tensors(self, args, mismatch=TypeError, kwargs=None):
        leaves, spec = flatten(_call_tree(args, kwargs))
        if spec != self.spec or bool(kwargs) != self.kw:
            if bool(kwargs) != self.kw:
                raise mismatch(f"expected {'keyword' if self.kw else 'no keyword'} arguments "
                               f"(the traced call's), got {sorted(kwargs) if kwargs else 'none'}")
            raise mismatch(f"expected arguments shaped like {self.spec!r}, got {spec!r}")
        tensors = []
        numpy_in = []
        for i, (leaf, static) in enumerate(zip(leaves, self.statics)):
            if type(static) is _Alias:
                if leaf is not leaves[static.i]:
                    raise _C.GuardError(f"guard failed: argument leaf {i} was {static!r} when "
                                        f"traced (one input of the plan), now another object")
                continue
            if static is None:
                t, was_np = _as_tensor(leaf)
                if t is None:
                    raise mismatch(f"expected a tensor, got {type(leaf).__name__}")
                why = eager_array(leaf) if was_np and mismatch is _C.GuardError else None
                if why is not None:
                    raise _C.GuardError(f"guard failed: argument {i} is {why}")
                if was_np != self.as_array[i] and mismatch is _C.GuardError:
                    kinds = ("a hop.Tensor", "an ndarray")
                    raise _C.GuardError(f"guard failed: argument {i} was {kinds[self.as_array[i]]} "
                                        f"when traced (its semantics), now it is "
                                        f"{kinds[was_np]}")
                tensors.append(t)
                numpy_in.append(was_np)
            elif not _fits_static(leaf, static):
                raise _C.GuardError(f"guard failed: the constant argument {static!r} "
                                    f"({type(static).__name__}) was traced but {leaf!r} "
                                    f"({type(leaf).__name__}) was given")
        if self.distinct and len(tensors) > 1 and \
                _twice([x for x, s in zip(leaves, self.statics) if s is None]):
            _aliased(args, kwargs)
        if self._order is not None and mismatch is _C.GuardError:
            from .numpy._storage import orders_hold
            if not orders_hold(self._order, leaves, self._order_memo):
                raise _C.GuardError("guard failed: the arguments' memory layouts give an "
                                    "elementwise result another memory order than when "
                                    "traced (NumPy's K order)")
        # ndarrays where the trace had hop.Tensors (a GraphModule's NumPy
        # interop): its tensor results come back as ndarrays.  A trace on
        # ndarrays returns what the function did: its arrays as ndarrays (their
        # nodes), a hop.Tensor it made or read as a hop.Tensor, as eagerly.
        as_numpy = bool(numpy_in) and all(numpy_in) and not any(self.as_array)
        return tensors, as_numpy, leaves

    def __call__(self, *args, **kwargs):
        if kwargs:
            return self.call_kw(args, TypeError, kwargs)
        return self.call(args, TypeError)

    def call(self, args, mismatch):
        """Runs the plan on args.  Arguments of another structure raise
        `mismatch` (TypeError for a GraphModule, GuardError for hop.compile,
        which then retraces)."""
        if len(args) == self._nflat:
            for a in args:
                if type(a) is not _C.Tensor:
                    break
            else:
                if self.distinct and _twice(args):
                    _aliased(args, None)
                # _captured(None), inlined: this is the whole call overhead.
                st = self._state
                if self._check is not None and not self._check(st[0], None):
                    st = self._state = self.guards.revalidate(st, None)
                if self._env is not None:
                    self._apart(args, st[1])
                results = self.plan.run(args + st[1])
                if self.fp_warned is not None and self.fp_warned(args, None):
                    raise FPWarned  # (a plan whose flags are NumPy's: _compile._checking_fp)
                return results[0] if self._one_out else self.finish(results, False)
        elif len(args) == self._ndflat and self._ndout is not None:
            c_order = self._c_order
            for i, a in enumerate(args):
                # (eager_array's test, inlined: this is the whole call overhead)
                if type(a) is not _np.ndarray or not (d := a.dtype).isnative or \
                        d.metadata is not None or not a.flags.aligned or \
                        (c_order is not None and c_order[i] and not a.flags.c_contiguous):
                    break
            else:
                if self.distinct and _twice(args):
                    _aliased(args, None)
                st = self._state
                if self._check is not None and not self._check(st[0], args):
                    st = self._state = self.guards.revalidate(st, args)
                if self._env is not None:
                    self._apart(args, st[1])
                r = self.plan.run_arrays(args, st[1], self._ndout)
                if self.fp_warned is not None and self.fp_warned(args, None):
                    raise FPWarned
                return r
        elif len(args) == self._hnflat:  # (the result wrapped as unflatten wraps it)
            for a in args:
                if type(a) is not self._hnarr or a._ro or a._scalar or a._cp is not None:
                    break  # (a copy-view: the general path, whose structure differs)
            else:
                if self.distinct and _twice(args):
                    _aliased(args, None)
                leaves = [a._t for a in args]  # (what flatten's leaves are)
                caps = tuple(self._captured(leaves))
                if self._env is not None:
                    self._apart(leaves, caps)
                results = self.plan.run(tuple(leaves) + caps)
                if self.fp_warned is not None and self.fp_warned(args, None):
                    raise FPWarned
                return self._hnarr(results[0])
        elif self._mixed is not None and len(args) == len(self._mixed):
            tensors = self._mixed_tensors(args)
            if tensors is not None:
                if self.distinct and len(tensors) > 1 and _twice(tensors):
                    _aliased(args, None)
                return self._run(tensors, False, list(args), args)
        tensors, as_numpy, leaves = self.tensors(args, mismatch)
        return self._run(tensors, as_numpy, leaves, args)

    def _mixed_tensors(self, args):
        """The tensors of a call fn(a1, ..., an) of hop.Tensors (where the
        trace had one) and constants equal to the trace's, as tensors()
        finds them; None for anything else (tensors() then answers, with
        its errors)."""
        tensors = []
        for a, s in zip(args, self._mixed):
            if s is None:
                if type(a) is not _C.Tensor:
                    return None
                tensors.append(a)
            elif not _fits_static(a, s):
                return None
        return tensors

    def call_kw(self, args, mismatch, kwargs):
        """call() with keyword arguments (none: call())."""
        if not kwargs:
            return self.call(args, mismatch)
        if mismatch is TypeError and self.kw:
            # a GraphModule is one fixed trace: the traced keywords in
            # another order are the same call to it
            keys = self.spec.children[1].keys
            if tuple(kwargs) != keys and set(kwargs) == set(keys):
                kwargs = {k: kwargs[k] for k in keys}
        tensors, as_numpy, leaves = self.tensors(args, mismatch, kwargs)
        return self._run(tensors, as_numpy, leaves, args, kwargs)

    def _run(self, tensors, as_numpy, leaves, args, kwargs=None):
        """The plan run on the call's tensors and the captures, the written
        arrays copied back (_WriteBack), and the results built."""
        captured = self._captured(leaves)
        if self._env is not None:
            self._apart(leaves, tuple(captured))
        wb = self.writeback
        if wb is not None:
            wb.check(leaves, _C.GuardError, captured)
        results = self.plan.run(tensors + list(captured))
        if self.fp_warned is not None and self.fp_warned(args, kwargs):
            raise FPWarned  # (before the write-back: nothing of the call happened)
        if wb is not None:
            results = wb.apply(results, leaves, captured)
        return self.finish(results, as_numpy, args, kwargs)

    def _unflatten(self, leaves):
        """unflatten(leaves, self.out_spec), by a builder from the second
        call on (a GraphModule may have no other)."""
        build = self._build_out
        if build:
            return build(leaves)
        if build is None:
            self._build_out = 0
            return unflatten(leaves, self.out_spec)
        self._build_out = build = builder(self.out_spec)
        return build(leaves)

    def finish(self, results, as_numpy, args=None, kwargs=None):
        if self._plain_out and not as_numpy:
            return self._unflatten(results)
        results = [float(r.item()) if sym == "float" else int(r.item()) if sym else r
                   for r, sym in zip(results, self.sym_out)]
        it = iter(results)
        leaves = [next(it) if t is None else t for t in self.template]
        r = self._results
        if as_numpy:
            leaves = [_C._np_result(x) if c and isinstance(x, _C.Tensor) else x
                      for x, c in zip(leaves, self._to_numpy)]
        for i in r.columns if r is not None else ():
            # (a NumPy nonzero column, _NumpyOut's leaf: NumPy's C stride
            # without elements too, where a new array's are zero)
            x = leaves[i]
            x = _C._np_result(x) if isinstance(x, _C.Tensor) else x
            leaves[i] = _np.lib.stride_tricks.as_strided(x, strides=(x.itemsize,)) \
                if x.size == 0 else x
        if r is None:
            return self._unflatten(leaves)
        for i, make in r.fresh.items():
            leaves[i] = make()  # a constant made anew, as eager makes it
        for i in r.copied:
            x = leaves[i]
            leaves[i] = x.clone() if isinstance(x, _C.Tensor) else x.copy()
        if not r.same and not r.again:
            return self._unflatten(leaves)
        # the caller's own objects, returned as themselves (eager: f(d) is d)
        tree = _call_tree(args, kwargs)
        if self._same_leaves is None:
            self._same_leaves = _same_leaves(r, self.out_spec)
        if self._same_leaves:
            # each a leaf of the result (a break's locals holding an
            # argument): put in place of its leaf, no rebuild around it
            for i, (kind, ref) in self._same_leaves:
                leaves[i] = subtree(tree, self.spec, ref) if kind == "arg" else ref
            return self._unflatten(leaves)
        made = {}
        return unflatten_with(leaves, self.out_spec, {
            p: functools.partial(subtree, tree, self.spec, a[1]) if a[0] == "arg" else
            functools.partial(_view_again, tree, self.spec, *a[1:], leaves, made,
                              functools.partial(self._capture_now, tree))
            if a[0] == "view" else
            functools.partial(_itself, a[1]) for p, a in r.same.items()}, r.again)


def _set_live_state(runner, st):
    """_LiveRunner's _state setter: st kept without the captures made per
    call."""
    live = runner.guards.live
    runner._live.state = (st[0], tuple(None if i in live else c for i, c in enumerate(st[1])))


class _LiveRunner(_Runner):
    """The runner of a plan that reads ndarrays of the function's
    environment that hop holds no reference to (_guards.Guards._release:
    guarded by id and layout, so the caller can resize them as eagerly):
    its _live (a _C._LiveCaptures) checks them and makes the captures of
    their memory from the arrays the sources hold at each read of _state
    (in C: the Python paths and _C._EffectsCall read it), and a NumPy call
    whose only other guard is the builtin names' is bound with it
    (Plan.bind_arrays: the whole call in C); the state is kept without
    them."""

    _state = property(_C._live_state, _set_live_state)
