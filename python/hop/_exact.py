"""Whether a traced value of NumPy code has the bits NumPy would give it.

hop.numpy computes NumPy's functions with hop's kernels.  Elementwise IEEE
arithmetic (+ - * /, sqrt, comparisons, casts, selections) and data movement
(views, indexing, concatenation) give each element the one correctly rounded
result, so hop's bits are NumPy's; so do sort and argsort, which make NumPy's
own comparisons (but NumPy's AVX-512 sort of float32 values, checked at run
time in the function's own code).  Float reductions (sum, mean, matmul, ...)
add in another order and the math functions (exp, tanh, ...) are other
approximations: their last bit may differ.  A float max or min is NumPy's
element up to the sign of a zero, so exact once compared (_ZERO_SIGN).  A compiled result may show that
difference (docs/ARCHITECTURE.md, "NumPy"); the text of a value, a number
converted to Python or a value the user's Python code keeps must not, since
eager would print or compare NumPy's own bits.

So a graph break or a replayed effect of a NumPy-mode translation (an
ndarray argument) hands Python only values whose lineage, read off the
graph (`Trace.describe`), is made of such exact operations over the plan's
inputs (`differs`).  Integer and bool values computed from integer and bool
values are exact whatever the operation (integer arithmetic does not
round).  Anything else is reported, and the frame translator then runs that
part of the function in Python on NumPy's own values instead (hop/_frame.py).
"""

from . import _C
from ._reads import loaded_hop_numpy

__all__ = ["differs", "relative_error", "absolute_error", "frobenius_error"]

# ops whose every element is one correctly rounded IEEE result or a copy:
# the same bits as NumPy's ufuncs and data movement; logaddexp and
# logaddexp2, whose kernels are NumPy 1.24's npy_logaddexp and
# npy_logaddexp2 (its only loops, on every machine) with the process's libm;
# and float_power, libm's pow (powf for float32, float16 through powf) one
# element at a time, as NumPy's float_power loop (npy_pow) and its float
# scalars' ** (npy_pow, npy_powf, the half one through npy_powf) call it
_EXACT = frozenset("""neg abs sqrt add sub mul div maximum minimum eq ne lt le gt ge
    logical_and logical_or logical_not where reshape view transpose permute unsqueeze squeeze
    expand select slice cat stack full zeros ones sym_size to clone sign floor ceil copysign
    take dynamic_slice dynamic_update_slice real imag conj nonzero put logaddexp
    logaddexp2 float_power""".split())

# amax/amin pick one element, so a float one is NumPy's up to the sign of a
# zero: NumPy's max of [-0.0, 0.0] is 0.0, hop's -0.0 (which of two equal
# elements a reduction keeps).  Such a value ("±0") stays one through ops
# that keep a ±0 difference a ±0 difference, and becomes exact through a
# comparison or a cast to bool/int (-0.0 == 0.0); anything else (a division:
# 1 / -0.0 is -inf; its text) may differ
_ZERO_SIGN = frozenset("amax amin".split())
_KEEPS_ZERO_SIGN = frozenset("""neg abs sqrt add sub mul maximum minimum where reshape view
    transpose permute unsqueeze squeeze expand select slice cat stack clone sign floor ceil take
    dynamic_slice dynamic_update_slice""".split())
_COMPARE = frozenset("eq ne lt le gt ge logical_and logical_or logical_not".split())
# ops whose float16 results are NumPy's although their float32 and float64
# ones are not: NumPy 1.24's float16 power is its scalar loop on every
# machine (glibc's powf of the float32 values, rounded to nearest even), and
# hop's float16 power is that same powf of the process's libm, rounded by
# hop_f16_from_float to nearest even (runtime/elementwise.c, pow_f16)
_EXACT_F16 = frozenset(["pow"])
_SIGNED = "a float max or min, whose sign of zero may differ"

_NODES = "hop.exact nodes"  # Trace.scratch: (node count, {name: node}, {name: verdict})
_CHECKED = "hop.exact checked"  # Trace.scratch: names of nodes checked at run time (checked)


def checked(t):
    """Marks traced tensor t as NumPy's bits although an op of its lineage
    may differ: the plan checks at run time that it does and otherwise runs
    the call eagerly (a float max/min whose zero's sign NumPy's SIMD loop
    picks, hop.numpy._funcs).  Returns t."""
    tr = _C.tracing()
    # inside a HOP body no lineage is read (_lineage), and a body's node
    # names may be the root's: marking one would vouch for the root's node
    if tr is None or (_C._trace_depth() > 1 and not own_body(tr)):
        return t
    name = _C._proxy_node(t)
    if name is not None:
        tr.scratch.setdefault(_CHECKED, set()).add(name)
    return t


def _is_int(meta):
    """Whether a node's meta is one integer or bool tensor."""
    if type(meta) is tuple and len(meta) == 3 and meta[0] == "tensor":
        name = getattr(meta[1], "name", "")
        return name == "bool" or name.startswith(("int", "uint"))
    return False


def _simd_sorted(target, args, meta):
    """Whether a sort node is of float32 values with kind quick (its
    argument 3, 1), which NumPy 1.24 sorts with AVX-512 instructions that
    order -0.0 and 0.0 their own way (hop.numpy checks it when compiling,
    then the node is checked())."""
    return target == "sort" and len(args) > 3 and args[3] == 1 and \
        type(meta) is tuple and len(meta) == 3 and getattr(meta[1], "name", "") == "float32"


def _refs(args, out):
    for a in args:
        if type(a) is tuple and len(a) == 2 and a[0] == "%node":
            out.append(a[1])
        elif type(a) in (list, tuple):
            _refs(a, out)
    return out


def _graph(tr):
    """The root graph's nodes by name, and the verdicts so far (cached on the
    trace; the graph only grows, so a longer one is read again); in hop's
    own body (own_body), that body's, read anew on each call."""
    if _C._trace_depth() > 1:
        return {n[1]: n for n in tr.describe(None)["nodes"]}, {}
    desc = tr.describe([])
    nodes = desc["nodes"]
    got = tr.scratch.get(_NODES)
    if got is None or got[0] != len(nodes):
        got = (len(nodes), {n[1]: n for n in nodes}, got[2] if got else {})
        tr.scratch[_NODES] = got
    return got[1], got[2]


def _checked_names():
    tr = _C.tracing()
    return tr.scratch.get(_CHECKED, ()) if tr is not None else ()


_INPUTS = object()  # from a leaf function of _post_order: the value needs the inputs


def _post_order(name, nodes, memo, leaf, combine):
    """memo[name] made bottom-up over the lineage of node name (nodes: name
    -> node as Trace.describe gives it), iteratively: a lineage may be
    thousands deep.  leaf(n, node) is n's value when it needs no inputs
    (node None: n is not in nodes), else _INPUTS; then combine(n, node, ins)
    is its value once memo holds each of its inputs ins."""
    todo = [name]
    while todo:
        n = todo[-1]
        if n in memo:
            todo.pop()
            continue
        node = nodes.get(n)
        v = leaf(n, node)
        if v is _INPUTS:
            ins = _refs(node[3], [])
            pending = [i for i in ins if i not in memo]
            if pending:
                todo.extend(pending)
                continue
            v = combine(n, node, ins)
        memo[n] = v
        todo.pop()
    return memo[name]


def _node_differs(name, nodes, memo):
    """None when node name's value is NumPy's, else the first op of its
    lineage that may differ."""
    checked_names = _checked_names()

    def leaf(n, node):
        if node is None:
            return f"the value {n}"  # not of the root graph: unknown
        if node[0] == "placeholder" or n in checked_names:
            return None
        return _INPUTS

    def combine(n, node, ins):
        kind, target, args, meta = node[0], node[2], node[3], node[4]
        bad = next((memo[i] for i in ins if memo[i] is not None and
                    not memo[i].startswith(_SIGNED)), None)
        signed = bad is None and next((memo[i] for i in ins if memo[i] is not None), None)
        if signed:
            # an input is NumPy's up to the sign of a zero (_ZERO_SIGN)
            if kind == "call_op" and (target in _COMPARE or target == "to" and
                                      _is_int(meta) and meta[1].name == "bool"):
                return None
            if kind == "call_op" and target == "to" and _is_int(meta):
                return f"{target} ({n}: a float cast to an integer)"
            if kind == "call_op" and target in _KEEPS_ZERO_SIGN:
                return signed
            return f"{target} ({n}) of {signed[len(_SIGNED) + 1:]}" \
                if kind == "call_op" else f"{kind} {target} ({n})"
        if bad is not None:
            return bad
        if kind == "call_op" and target == "to" and _is_int(meta) and \
                not all(_is_int(nodes[i][4]) for i in ins if i in nodes):
            # a float cast to an integer: out of range it is C's undefined
            # behaviour, which NumPy's loops and hop's need not resolve alike
            return f"{target} ({n}: a float cast to an integer)"
        if kind == "call_op" and target in _EXACT:
            return None
        if kind == "call_op" and target in _EXACT_F16 and type(meta) is tuple and \
                len(meta) == 3 and getattr(meta[1], "name", "") == "float16":
            return None
        if kind == "call_op" and target in ("sort", "argsort") and not _simd_sorted(target,
                                                                                  args, meta):
            return None  # NumPy's own comparisons (runtime/scan_sort.c)
        if kind == "call_op" and target in _ZERO_SIGN and not _is_int(meta):
            return f"{_SIGNED} {target} ({n})"
        if kind == "call_op" and _is_int(meta) and \
                all(_is_int(nodes[i][4]) for i in ins if i in nodes):
            return None  # integer arithmetic on integers does not round
        return f"{target} ({n})" if kind == "call_op" else f"{kind} {target} ({n})"

    return _post_order(name, nodes, memo, leaf, combine)


def reaching(tr, values, targets, body=False):
    """Per value of values (traced tensors of the root graph; body: of the
    graph the innermost tracer records into, a HOP body being traced;
    anything else reaches nothing): the names in targets (nodes of that
    graph) its lineage reaches with a zero's sign still showing, i.e. not
    only through a comparison or a cast to bool or an integer (-0.0 ==
    0.0).  A cond's output is followed into each body to the operands its
    output reaches there (`if np.max(x) > 0` inside a merged branch compares
    only); any other HOP, or a node hop cannot read, passes every operand's
    sign on."""
    base = (None,) if body else ()  # (Trace.describe's path of that graph)
    described = {}

    def nodes_of(path):
        got = described.get(path)
        if got is None:
            got = described[path] = {n[1]: n for n in tr.describe(list(path))["nodes"]}
        return got

    def kills(node):
        return node[0] == "call_op" and (node[2] in _COMPARE or
                                         node[2] == "to" and _is_int(node[4]))

    def cond_output(path, hop, i, outer):
        # output i of cond node hop of graph path: in each body, what its
        # output i reaches among the placeholders, as the operands' reach
        ops = hop[3][-1] if hop[3] and type(hop[3][-1]) is list else None
        bodies = [a[1] for a in hop[3] if type(a) is tuple and len(a) == 2 and a[0] == "%graph"]
        if hop[2] != "cond" or ops is None or not bodies:
            return None
        out = frozenset()
        for b in bodies:
            sub = path + (b,)
            ns = nodes_of(sub)
            phs = [n[1] for n in ns.values() if n[0] == "placeholder"]
            if len(phs) != len(ops):
                return None
            res = next((n[3] for n in ns.values() if n[0] == "output"), None)
            if res is None or i >= len(res) or not (type(res[i]) is tuple and
                                                    res[i][0] == "%node"):
                return None
            seeds = {ph: _refs([op], []) for ph, op in zip(phs, ops)}
            inner = walk(sub, res[i][1], {ph: frozenset().union(*(outer(r) for r in refs))
                                          for ph, refs in seeds.items()})
            out |= inner
        return out

    memos = {}

    def walk(path, name, phs):
        # phs: in a body, each placeholder's reach in the graph around it
        memo = memos.setdefault(path, {})
        nodes = nodes_of(path)

        def leaf(n, node):
            if path == base and n in targets:
                return frozenset((n,))
            if node is not None and node[0] == "placeholder":
                return phs.get(n, frozenset()) if phs is not None else frozenset()
            if node is None or kills(node):
                return frozenset()
            return _INPUTS

        def combine(n, node, ins):
            got = None
            if node[0] == "getitem" and ins and nodes.get(ins[0], ("",))[0] == "call_hop":
                got = cond_output(path, nodes[ins[0]], node[3][1],
                                  lambda r, m=memo: m.get(r, frozenset()))
            return got if got is not None else frozenset().union(*(memo[i] for i in ins))

        return _post_order(name, nodes, memo, leaf, combine)

    out = []
    for v in values:
        name = _C._proxy_node(v) if isinstance(v, _C.Tensor) and \
            (not body or _C._proxy_depth(v) == _C._trace_depth()) else None
        out.append(walk(base, name, None) if name is not None else frozenset())
    return out


# elementwise math functions: hop's (SLEEF, libm) and NumPy's (SVML, glibc)
# are each within a few ulps of the true value, so of each other within
# _ULPS_BUDGET ulps of the result's dtype for the same operands
_ULPS = frozenset("""pow exp exp2 expm1 log log2 log10 log1p sin cos tan sinh cosh tanh arcsin
    arctan cbrt""".split())
_ULPS_BUDGET = 16
# ops that keep each element's relative difference from NumPy's (they move or
# select elements, or change only a sign); mul and div add their operands'
# and one rounding, sqrt halves it and adds one
_MOVES = frozenset("""neg abs where reshape view transpose permute unsqueeze squeeze expand select
    slice cat stack clone take dynamic_slice""".split())
_EPS = {"float16": 2.0 ** -10, "float32": 2.0 ** -23, "float64": 2.0 ** -52,
        "complex64": 2.0 ** -23, "complex128": 2.0 ** -52}


def own_body(tr=None):
    """Whether the innermost tracer of trace tr (the active one) records
    the user's function as hop.grad or hop.vmap run it (their own
    hop.compile, whose root only passes the function's arguments to the one
    body of a vjp/jvp/vmap call): that body's placeholders are the
    arguments (or their examples), exact as the root's, so its lineage is
    read as the root's is."""
    from ._breaks import _COMPILE, _HOPS_OWN
    tr = tr or _C.tracing()
    return tr is not None and bool(tr.scratch.get(_HOPS_OWN)) and \
        _C._trace_depth() == tr.scratch.get(_COMPILE) + 1


BODIES = "hop.exact bodies"  # Trace.scratch: the Bodies being traced, innermost last


class Body:
    """A HOP body hop._hops._apply traces now (hop.numpy._core.body_begin):
    its tracer depth, the HOP's name, what its explicit inputs stand for
    ({placeholder: (how, depth, node)}, _hops._explicit_sources) and the
    zero-sign checks deferred to its end ({node: flag maker})."""

    __slots__ = ("depth", "hop", "inputs", "deferred")

    def __init__(self, depth, hop, inputs):
        self.depth = depth
        self.hop = hop
        self.inputs = inputs
        self.deferred = {}


# HOPs whose body's inputs stand for the same outer values every time the
# body runs, so its lineage continues in the enclosing graph (a loop's
# carries are fresh inputs: not followed); invoke_subgraph's body is shared
# by later calls with other operands: never followed
_FOLLOWED = frozenset("cond switch map wrap while_loop fori_loop scan".split())


class _Reader:
    """The trace's _node for the names of _body_nodes: "k:name" is node
    name of the tracer at depth k (lifted into the body by the ops made on
    it), a plain name the innermost graph's."""

    __slots__ = ("trace",)

    def __init__(self, trace):
        self.trace = trace

    def _node(self, name):
        k, sep, n = name.partition(":")
        return self.trace._node(n, int(k)) if sep else self.trace._node(name)


def _base_depth(tr):
    """The depth whose placeholders are exact values: the root's (1), or
    hop.grad's and hop.vmap's own body of the user's function (own_body)."""
    from ._breaks import _COMPILE, _HOPS_OWN
    return tr.scratch[_COMPILE] + 1 if tr.scratch.get(_HOPS_OWN) else 1


def _qualified(args, q):
    return [("%node", q(a[1])) if type(a) is tuple and len(a) == 2 and a[0] == "%node" else
            _qualified(a, q) if type(a) in (list, tuple) else a for a in args]


def _body_nodes(tr, depth, base):
    """The lineage inside a HOP body at tracer depth depth > base, read out
    to the graph at depth base: every graph's nodes by name in one dict
    (the innermost graph's names as they are, the others' as "k:name"),
    each placeholder of a body between them an op of what it stands for in
    its enclosing graph (clone: a lifted value, a map's extra argument;
    select: a map's slice of xs), or left out (no lineage: a loop's carry,
    an input of a HOP not _FOLLOWED or not traced through _apply)."""
    bodies = {}
    for b in tr.scratch.get(BODIES, ()):
        # (a cond on a constant traces its branch inline, at its caller's
        # depth: that depth's inputs are still the caller's body's)
        bodies.setdefault(b.depth, b)

    def q(k, n):
        return n if k == depth else f"{k}:{n}"
    nodes = {}
    for k in range(base, depth + 1):
        body = bodies.get(k)
        follow = k > base and body is not None and body.hop in _FOLLOWED
        lifted = tr._lifted_sources(k) if follow else {}
        explicit = body.inputs if follow else {}
        for n in tr.describe((k,))["nodes"]:
            name = q(k, n[1])
            if n[0] == "placeholder" and k > base:
                src = lifted.get(n[1])
                how, src = ("same", (k - 1, src)) if src is not None else \
                    (explicit[n[1]][0], explicit[n[1]][1:]) if n[1] in explicit else (None, None)
                if how is not None and src[0] >= base:
                    nodes[name] = ("call_op", name, "select" if how == "slice" else "clone",
                                   [("%node", q(*src))], n[4])
                continue
            nodes[name] = (n[0], name, n[2], _qualified(n[3], lambda x, k=k: q(k, x)), n[4])
    return nodes, {q(base, c) for c in _checked_names()}


def _lineage(t, tr):
    """(the trace, t's node name, the nodes of its lineage by name, the error
    bounds' leaf rule: 0.0 for a placeholder or a checked node, None for a
    node of no known lineage), or None when t is no traced value.  At the
    root (or in hop's own body: own_body) the root graph's nodes; inside a
    HOP body those of every graph out to the root (_body_nodes), and the
    trace a _Reader of their names."""
    tr = tr.trace if type(tr) is _Reader else tr or _C.tracing()
    name = _C._proxy_node(t) if tr is not None and isinstance(t, _C.Tensor) else None
    if name is None:
        return None
    depth = _C._trace_depth()
    if depth > 1 and not own_body(tr):
        base = _base_depth(tr)
        owner = _C._proxy_depth(t)
        if depth <= base or owner < base:
            return None
        nodes, checked_names = _body_nodes(tr, depth, base)
        name = name if owner == depth else f"{owner}:{name}"
        tr = _Reader(tr)
    else:
        nodes, _ = _graph(tr)
        checked_names = _checked_names()

    def leaf(n, node):
        if node is None:
            return None
        if node[0] == "placeholder" or n in checked_names:
            return 0.0
        return _INPUTS

    return tr, name, nodes, leaf


def relative_error(t, tr=None):
    """A bound r such that every element of traced tensor t (of any graph
    of the trace: _lineage) is within r * |element| of NumPy's (0.0: NumPy's bits), or None
    when its lineage allows no such bound (a float sum: cancellation makes
    the relative difference unbounded; absolute_error bounds it).  The
    lineage may hold elementwise math functions (x ** 3) of exact values,
    then ops that keep relative differences (data movement, sign changes,
    products, quotients, square roots, casts).  hop.numpy.linalg's rank
    decisions use it to bound how far hop's singular values may be from
    NumPy's (lstsq's, gelsd's own, need none when it is 0)."""
    got = _lineage(t, tr)
    if got is None:
        return None
    tr, name, nodes, leaf = got

    def combine(n, node, ins):
        return _relative(node, [memo[i] for i in ins], ins, nodes)

    memo = {}
    return _post_order(name, nodes, memo, leaf, combine)


def _dtype_name(meta):
    return getattr(meta[1], "name", "") if type(meta) is tuple and len(meta) == 3 and \
        meta[0] == "tensor" else ""


def _relative(node, got, ins, nodes):
    """relative_error's rule: node's relative bound from its inputs' (got,
    the bounds of the nodes ins), or None."""
    kind, target, meta = node[0], node[2], node[4]
    eps = _EPS.get(_dtype_name(meta))
    if kind != "call_op" or any(g is None for g in got):
        return None
    if not any(got):
        # exact operands: NumPy's bits unless the op itself may differ
        if target in _EXACT or _is_int(meta) and \
                all(_is_int(nodes[i][4]) for i in ins if i in nodes):
            return 0.0 if not (target == "to" and _is_int(meta) and
                               not all(_is_int(nodes[i][4]) for i in ins)) else None
        if target in _ULPS and eps is not None:
            return _ULPS_BUDGET * eps
        return None
    if eps is None or _is_int(meta):
        return None  # an integer or bool of a differing float: anything
    if target in _MOVES:
        return max(got)
    if target in ("mul", "div"):
        return sum(got) + eps
    if target == "sqrt":
        return got[0] / 2 + eps
    if target == "to":
        return got[0] + eps
    return None


# absolute_error's safety factor for its own arithmetic: the bound is
# computed in double, each step a sum or product of non-negative terms (k
# terms in a matmul or a sum, m n in frobenius_error's norm), so it comes
# out under the exact bound by at most the sum over its steps of
# gamma_k(2**-53), far below 2**-20 relative for chains of fewer than 2**30
# terms in all
_BOUND_SLACK = 1.0 + 2.0 ** -20
# ops absolute_error bounds by the largest difference of their tensor
# operands (they move, select or repeat elements): one scalar, coarse but
# sound for any layout
_MOVES_ABS = frozenset("""reshape view transpose permute unsqueeze squeeze expand select slice
    cat stack clone take dynamic_slice amax amin""".split())
_TINY = {"float16": 2.0 ** -24, "float32": 2.0 ** -149, "float64": 2.0 ** -1074}


def absolute_error(t, tr=None):
    """A traced float64 tensor E, broadcastable to traced tensor t (of any
    graph of the trace: _lineage; E is made in the innermost graph), with |hop's t - NumPy's t| <= E elementwise, or None when
    hop cannot bound the difference (complex or integer arithmetic on
    differing values, an op without a rule below, a size only known at run
    time).  Unlike relative_error it bounds sums and products, whose
    relative difference cancellation makes unbounded.

    Each node's bound follows from its operands' (a, b: hop's values, Ea,
    Eb: their bounds; u the unit roundoff of the node's dtype, eta its
    smallest subnormal: an underflowing product or quotient errs by
    eta / 2 more; Higham, Accuracy and Stability of Numerical Algorithms,
    2nd ed., 2.2 and 3.1-3.5):
      - an exact lineage (relative_error 0): 0; one with a relative bound r:
        r * |NumPy's| <= r / (1 - r) * |hop's|.
      - one rounding of two values d apart, hop's exact result x (|x| <=
        |out| / (1 - u) for its rounded out): |fl(x) - fl(x')| <= d +
        u|x| + u(|x| + d) = (1 + u) d + 2u / (1 - u) |out| (+ eta for mul,
        div, where a result may underflow).  For +, -: d = Ea + Eb; for *:
        d = |a| Eb + (|b| + Eb) Ea; for /: (Ea |b| + |a| Eb) / (|b| (|b| -
        Eb)) when |b| > Eb, else unbounded (inf); for sqrt: min(sqrt(Ea),
        Ea / sqrt(a)), unbounded where a - Ea < 0 (NumPy's may be NaN);
        for a narrowing cast: Ea (a widening one is exact: Ea).
      - neg, abs: Ea; maximum, minimum, where: max(Ea, Eb).
      - matmul of k-long dot products: whatever the order of the sum, with
        or without FMA, accumulated in u or finer, each of hop's and
        NumPy's (BLAS) results is within gamma_k |A| |B| + k eta of the
        exact product of its operands (gamma_k = k u / (1 - k u)), and the
        exact products differ by at most Ea |B| + (|A| + Ea) Eb; with
        |A'| <= |A| + Ea: E = 2 gamma_k (|A| + Ea)(|B| + Eb) + Ea |B| +
        (|A| + Ea) Eb + 2 k eta.
      - sum of k terms: likewise sum(Ea) + 2 gamma_k sum(|a| + Ea) (a
        sum's roundings never underflow); mean: that with gamma_(k+1) (the
        division's rounding), divided by k, + eta.
      - data movement, amax, amin: the largest of the operands' bounds.
    The bound is computed in double, each step of non-negative terms, so it
    may come out below the exact bound by gamma_k(2**-53) at most: it is
    multiplied by _BOUND_SLACK.  NaN or inf values make it NaN or inf,
    which no check passes."""
    got = _lineage(t, tr)
    if got is None:
        return None
    tr, name, nodes, leaf = got
    memo = {}

    def combine(n, node, ins):
        # a float: a relative bound (relative_error's); a tensor: absolute
        got = [memo[i] for i in ins]
        if any(g is None for g in got):
            return None
        if all(type(g) is float for g in got):
            r = _relative(node, got, ins, nodes)
            if r is not None:
                return r
        return _absolute(tr, node, nodes, memo)

    got = _post_order(name, nodes, memo, leaf, combine)
    if got is None:
        return None
    e = _as_absolute(tr, name, got)  # None: a relative bound of 0.5 or more
    if e is None:
        return None
    return e * _BOUND_SLACK if isinstance(e, _C.Tensor) else _C.zeros((), dtype=_C.float64)


def frobenius_error(t, tr=None):
    """A traced float64 tensor of shape t.shape[:-2] bounding, per matrix
    of traced tensor t (..., m, n), ||hop's - NumPy's||_F; or None where
    absolute_error has no bound.  For t = A @ B of exact operands it is
    2 gamma_k ||A||_F ||B||_F + 2 k eta sqrt(m n) (|| |A| |B| ||_F <=
    ||A||_F ||B||_F): two sums of squares instead of absolute_error's
    |A| @ |B|, at most a few times looser; otherwise the Frobenius norm of
    absolute_error(t).  Either is computed in double and multiplied by
    _BOUND_SLACK."""
    got = _lineage(t, tr)
    if got is None:
        return None
    tr, name, nodes, _ = got
    node = nodes.get(name)
    dt = _dtype_name(node[4]) if node is not None else ""
    if node is not None and node[0] == "call_op" and node[2] == "matmul" and dt in _TINY:
        ops = [_operand(node, 0), _operand(node, 1)]
        vals = [tr._node(o) if o is not None else None for o in ops]
        if all(v is not None and v.ndim >= 2 and relative_error(v, tr) == 0.0 for v in vals):
            k, mn = vals[0].shape[-1], t.shape[-2] * t.shape[-1]
            g = _gamma(k, _EPS[dt] / 2)
            if g is not None and type(mn) is int:
                fa, fb = (_C.sqrt(_C.sum(_C.mul(x, x), (-2, -1))) for x in
                          (v if v.dtype == _C.float64 else v.to(_C.float64) for v in vals))
                eta = 2 * k * _TINY[dt] * mn ** 0.5
                return (fa * fb * (2 * g) + eta) * _BOUND_SLACK
    e = absolute_error(t, tr)
    if e is None:
        return None
    if tuple(e.shape) != tuple(t.shape):
        e = e + _C.zeros(tuple(t.shape), dtype=_C.float64)
    return _C.sqrt(_C.sum(_C.mul(e, e), (-2, -1)))


def _abs64(tr, name):
    """|value of node name| in float64 (a traced tensor)."""
    v = tr._node(name)
    return _C.abs(v.to(_C.float64) if v.dtype != _C.float64 else v)


def _as_absolute(tr, name, bound):
    """An absolute bound (a tensor, or 0.0) from absolute_error's memo."""
    if type(bound) is float:
        return 0.0 if bound == 0 else _abs64(tr, name) * (bound / (1 - bound)) \
            if bound < 0.5 else None
    return bound


def _operand(node, i):
    """The name of node's argument i when it is a node, else None."""
    args = node[3]
    a = args[i] if i < len(args) else None
    return a[1] if type(a) is tuple and len(a) == 2 and a[0] == "%node" else None


def _absolute(tr, node, nodes, memo):
    """absolute_error's rule for one node (its docstring), or None."""
    kind, n, target, meta = node[0], node[1], node[2], node[4]
    dt = _dtype_name(meta)
    if kind != "call_op" or dt not in _TINY:
        return None  # complex, integer or bool results of differing values
    u, eta = _EPS[dt] / 2, _TINY[dt]

    def err(i):
        a = _operand(node, i)
        if a is None:
            return 0.0 if i < len(node[3]) and type(node[3][i]) in (int, float, bool) else None
        if a not in nodes or _dtype_name(nodes[a][4]) not in _EPS and not _is_int(nodes[a][4]):
            return None
        return _as_absolute(tr, a, memo[a])

    def val(i):
        return _abs64(tr, _operand(node, i)) if _operand(node, i) is not None else \
            abs(float(node[3][i]))

    def rounded(d, extra=0.0):
        return d * (1 + u) + _abs64(tr, n) * (2 * u / (1 - u)) + extra

    if target in _MOVES_ABS:
        es = [_as_absolute(tr, i, memo[i]) for i in _refs(node[3], [])
              if _dtype_name(nodes[i][4]) in _EPS]
        if any(e is None for e in es):
            return None
        es = [_C.amax(e) for e in es if isinstance(e, _C.Tensor)]
        return _largest(es)
    if target in ("neg", "abs"):
        return err(0)
    ea = err(0)
    if ea is None:
        return None
    if target == "to":
        src = _dtype_name(nodes[_operand(node, 0)][4]) if _operand(node, 0) else ""
        return ea if src in _EPS and _EPS[src] >= _EPS[dt] else rounded(ea, eta)
    if target == "sqrt":
        x = val(0)
        d = _C.minimum(_C.sqrt(ea + x * 0), _C.div(ea, _C.sqrt(x)))
        return _C.where(_C.ge(x - ea, 0.0), rounded(d), float("inf"))
    if target in ("sum", "mean"):
        return _summed(tr, node, target, ea, u, eta)
    eb = err(1)
    if eb is None:
        return None
    if target in ("add", "sub"):
        return rounded(ea + eb)
    if target in ("maximum", "minimum"):
        return _largest([e for e in (ea, eb) if isinstance(e, _C.Tensor)])
    if target == "where":
        ec = err(2)
        return None if ec is None else _largest([e for e in (eb, ec) if isinstance(e, _C.Tensor)])
    if target == "mul":
        a, b = val(0), val(1)
        return rounded(a * eb + (b + eb) * ea, eta)
    if target == "div":
        a, b = val(0), val(1)
        if not isinstance(b, _C.Tensor):  # a constant divisor, exact
            return rounded(ea * (1.0 / b) if b else ea + float("inf"), eta)
        den = b * (b - eb)
        pos = _C.gt(den, 0.0)
        d = _C.where(pos, _C.div(ea * b + a * eb, _C.where(pos, den, 1.0)), float("inf"))
        return rounded(d, eta)
    if target == "matmul":
        return _matmul_bound(tr, node, ea, eb, u, eta)
    return None


def _largest(es):
    """The elementwise largest of bounds es (tensors), or 0.0 for none."""
    if not es:
        return 0.0
    out = es[0]
    for e in es[1:]:
        out = _C.maximum(out, e)
    return out


def _gamma(k, u):
    """Higham's gamma_k = k u / (1 - k u), or None (k unknown or too big)."""
    return k * u / (1 - k * u) if type(k) is int and k * u < 0.5 else None


def _matmul_bound(tr, node, ea, eb, u, eta):
    """matmul's bound (absolute_error's docstring); None when the length k
    of its dot products is not a known int."""
    k = tr._node(_operand(node, 0)).shape[-1]
    g = _gamma(k, u)
    if g is None:
        return None
    aa, ab = _abs64(tr, _operand(node, 0)), _abs64(tr, _operand(node, 1))
    if type(ea) is float and type(eb) is float:  # exact operands
        return _C.matmul(aa, ab) * (2 * g) + 2 * k * eta
    an = aa + ea
    bn = ab + eb
    out = _C.matmul(an, bn) * (2 * g) + 2 * k * eta
    if isinstance(ea, _C.Tensor):
        out = out + _C.matmul(ea + aa * 0, ab)
    if isinstance(eb, _C.Tensor):
        out = out + _C.matmul(an, eb + ab * 0)
    return out


def _summed(tr, node, target, ea, u, eta):
    """sum's and mean's bound over dims args[1] (keepdim args[2])."""
    args = node[3]
    dims = args[1] if len(args) > 1 else None
    keep = bool(args[2]) if len(args) > 2 else False
    x = tr._node(_operand(node, 0))
    out = tr._node(node[1])
    total, kept = 1, 1
    for d in x.shape:
        total *= d
    for d in out.shape:
        kept *= d
    if type(total) is not int or type(kept) is not int or dims is not None and \
            type(dims) not in (int, list, tuple):
        return None
    k = total // kept if kept else 0
    g = _gamma(k + (target == "mean"), u)
    if g is None:
        return None
    ax = _abs64(tr, _operand(node, 0))
    e = ea + ax * 0  # the operand's bound over its whole shape
    dims = tuple(dims) if type(dims) in (list, tuple) else dims
    bound = _C.sum(e, dims, keep) + _C.sum(ax + e, dims, keep) * (2 * g)
    return bound * (1.0 / k) + eta if target == "mean" and k else bound


class TooDeep(Exception):
    """leaves() met a container nested deeper than it checks."""


def leaves(values):
    """The values in values that are not tuples, lists or dicts, down to 8
    levels (each container copied in one C call first: see
    _hops._value_key); TooDeep past that."""
    todo = [(v, 0) for v in values]
    while todo:
        v, d = todo.pop()
        t = type(v)
        if t in (tuple, list):
            if d > 8:
                raise TooDeep
            todo.extend((x, d + 1) for x in tuple(v))
        elif t is dict:
            todo.extend((x, d + 1) for x in tuple(v.values()))
        else:
            yield v


def differs(values, tr=None, depth=0):
    """None when every traced value in values (tuples, lists, dicts,
    hop.numpy arrays, SymInts) has NumPy's bits; else what may not (the op
    and its node, for explain())."""
    tr = tr or _C.tracing()
    if tr is None:
        return None
    # the lineage is read off the root graph by node name; inside a cond
    # body (a side of a data-dependent `if`) a traced value is a node of
    # the body, whose name may also be a root node's (`gt` of `x[0] > 0`
    # there, `gt` of `np.sum(y) > 0` here): never answered from the root
    inside = _C._trace_depth() > 1
    try:
        return _first_differing(leaves(values), tr, inside)
    except TooDeep:
        return "a value nested too deep to check"


def _first_differing(values, tr, inside):
    nodes = memo = None
    for v in values:
        hnp = loaded_hop_numpy()
        if hnp is not None and isinstance(v, hnp.ndarray):
            v = v._t  # (by class: getattr(v, "_t") ran a user's __getattr__)
        if isinstance(v, _C.SymInt):
            name = v.node
        elif isinstance(v, _C.Tensor):
            name = _C._proxy_node(v)
        elif type(v).__name__ == "SymFloat":
            return "a traced Python float (SymFloat)"
        else:
            continue
        if name is None:
            continue
        if inside:
            return "a value of a cond body, whose lineage hop does not read"
        if nodes is None:
            nodes, memo = _graph(tr)
        bad = _node_differs(name, nodes, memo)
        if bad is not None:
            return bad[len(_SIGNED) + 1:] + ": its sign of zero may differ" \
                if bad.startswith(_SIGNED) else bad
    return None
