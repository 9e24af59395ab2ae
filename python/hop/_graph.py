"""The Python mirror of a traced graph: hop.Graph, hop.Node, hop.TensorMeta,
hop.SymMeta, built from the C graph's description (Trace.describe) when a
GraphModule is first asked for its graph (_trace.GraphModule.graph).

A call_hop's arguments come from C by parameter name (graph_data.c's
layout: leads, groups, lifted), never re-derived here by position: Node's
docstring says the one shape node.args has for every HOP.
"""

import os
import shutil
import subprocess

from . import _C

__all__ = ["Graph", "Node", "TensorMeta", "SymMeta"]

class TensorMeta:
    """A tensor's metadata in a graph: dtype and shape (ints, or strings like
    "s0" for symbolic sizes).  Node.meta of a tensor value.

    >>> gm = hop.trace(lambda x: x * 2, hop.ones(3, 4), dynamic=True)
    >>> gm.graph.find("x").meta
    TensorMeta(dtype=hop.float32, shape=('s0', 's1'))
    """

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype = dtype
        self.shape = tuple(shape)

    def __eq__(self, other):
        return isinstance(other, TensorMeta) and (self.dtype, self.shape) == (other.dtype,
                                                                              other.shape)

    def __repr__(self):
        return f"TensorMeta(dtype={self.dtype!r}, shape={self.shape!r})"


class SymMeta:
    """A SymInt value in a graph: its expression as text ("s0", "2*s0 + 1").
    Node.meta of a SymInt value.

    >>> gm = hop.trace(lambda x: x * 2, hop.ones(3, 4), dynamic=True)
    >>> gm.graph.placeholders[0].meta
    SymMeta(expr='s0')
    """

    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr

    def __eq__(self, other):
        return isinstance(other, SymMeta) and self.expr == other.expr

    def __repr__(self):
        return f"SymMeta(expr={self.expr!r})"


def _meta(m):
    if m is None:
        return None
    if m[0] == "sym":
        return SymMeta(m[1])
    return TensorMeta(m[1], m[2])


class Node:
    """One node of a graph.

    op: "placeholder", "call_op", "call_hop", "getitem" or "output"; name;
    target (the op or HOP name); args; subgraphs (names, for call_hop);
    meta (TensorMeta, SymMeta or None).

    A call_hop's arguments come by parameter name from its class's
    signature (hop/class.h; C's hop_node_param, hop_node_group,
    hop_node_lifted), and args has one shape for every HOP:

      leads   {name: value} of the lead parameters (cond's pred, switch's
              index), in signature order
      groups  {name: tuple of values} of the group parameters (cond's
              operands, map's xs and args, a loop's carries), in signature
              order; a final *args group (map's args) ends with the values
              the bodies lifted
      lifted  the values the bodies lifted when they are a list of their
              own (after a loop's carries), else ()
      args    flat: the leads' values, then every value passed to the
              bodies in body input order: each group's values, then lifted

    Other nodes have empty leads and groups, lifted () and args as recorded.

    >>> gm = hop.trace(lambda x, y: (x * y).sum(), hop.ones(3), hop.ones(3))
    >>> n = gm.graph.find("mul")
    >>> n.op, n.target, n.args, n.meta
    ('call_op', 'mul', (<Node placeholder x>, <Node placeholder y>), TensorMeta(dtype=hop.float32, shape=(3,)))
    >>> w = hop.ones(3)
    >>> m = hop.trace(lambda x: hop.map(lambda r: r * w, x), hop.ones(2, 3)).graph.find("map")
    >>> m.groups
    {'xs': (<Node placeholder x>,), 'args': (<Node placeholder w>,)}
    >>> m.args
    (<Node placeholder x>, <Node placeholder w>)
    """

    __slots__ = ("op", "name", "target", "args", "leads", "groups", "lifted", "subgraphs",
                 "meta", "outputs")

    def __repr__(self):
        return f"<Node {self.op} {self.name}>"


class Graph:
    """The nodes of one graph, in program order (GraphModule.graph): iterable,
    with .nodes, .placeholders and find(name).

    >>> gm = hop.trace(lambda x, y: (x * y).sum(), hop.ones(3), hop.ones(3))
    >>> [n.name for n in gm.graph]
    ['x', 'y', 'mul', 'sum', 'output']
    >>> gm.graph.placeholders
    [<Node placeholder x>, <Node placeholder y>]
    """

    def __init__(self, nodes, gm=None):
        self.nodes = nodes
        self.placeholders = [n for n in nodes if n.op == "placeholder"]
        self._gm = gm

    def render(self, path, format=None):
        """render(path, format=None) -> str

        Draws the graph with Graphviz's `dot` (Debian: graphviz) into path,
        in the format its extension names (svg, png, pdf; or `format`):
        nested subgraphs are clusters, lifted inputs are filled and dashed,
        labelled with what they stand for, and joined by a dotted edge to
        the value of the parent graph they are lifted from.  Returns path.
        hop.UnsupportedError when `dot` is not installed.

        >>> import os, tempfile
        >>> gm = hop.trace(lambda x: hop.map(lambda r: r * 2, x), hop.ones(2, 3))
        >>> path = os.path.join(tempfile.mkdtemp(), "f.svg")
        >>> gm.graph.render(path) == path and open(path).read().count("<svg")
        1
        """
        fmt = format or os.path.splitext(os.fspath(path))[1].lstrip(".") or "svg"
        dot = shutil.which("dot")
        if dot is None:
            raise _C.UnsupportedError("Graph.render needs Graphviz's dot program, which is not "
                                      "on PATH (Debian: apt-get install graphviz); "
                                      "GraphModule.to_dot() gives the DOT text")
        text = self._gm.to_dot(lifted=True)
        r = subprocess.run([dot, "-T" + fmt, "-o", os.fspath(path)], input=text.encode(),
                           capture_output=True)
        if r.returncode != 0:
            raise _C.Error(f"Graph.render: dot failed: {r.stderr.decode(errors='replace')}")
        return path

    def find(self, name):
        """find(name) -> Node: the node called name (KeyError if none).

        >>> hop.trace(lambda x: x.sin(), hop.ones(2)).graph.find("sin").target
        'sin'
        """
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def __iter__(self):
        return iter(self.nodes)

    def __len__(self):
        return len(self.nodes)


def _build_graph(desc, gm=None):
    by_name = {}
    nodes = []
    for op, name, target, args, meta, outs, layout in desc["nodes"]:
        n = Node()
        n.op, n.name, n.target = op, name, target
        n.meta = _meta(meta)
        n.outputs = [_meta(o) for o in outs]
        by_name[name] = n
        nodes.append((n, args, layout))

    def conv(a):
        if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str) and \
                a[0].startswith("%"):
            kind, value = a
            if kind == "%node":
                return by_name[value]
            return value  # %sym: its text; %graph: its name
        if isinstance(a, list):
            return tuple(conv(x) for x in a)
        return a

    out = []
    for n, args, layout in nodes:
        n.subgraphs = tuple(v for k, v in (a for a in args if _is_ref(a, "%graph")))
        if layout is not None:
            # By name, as the C accessors read the node (Node's docstring).
            leads, groups, lifted = layout
            n.leads = {k: conv(v) for k, v in leads}
            n.groups = {k: conv(v) for k, v in groups}
            n.lifted = conv(lifted)
            n.args = (tuple(n.leads.values()) + tuple(x for g in n.groups.values() for x in g) +
                      n.lifted)
        else:
            n.leads, n.groups, n.lifted = {}, {}, ()
            n.args = tuple(conv(a) for a in args)
        out.append(n)
    return Graph(out, gm)


def _is_ref(a, kind):
    return isinstance(a, tuple) and len(a) == 2 and a[0] == kind
