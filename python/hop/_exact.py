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

__all__ = ["differs", "relative_error"]

# ops whose every element is one correctly rounded IEEE result or a copy:
# the same bits as NumPy's ufuncs and data movement
_EXACT = frozenset("""neg abs sqrt add sub mul div maximum minimum eq ne lt le gt ge
    logical_and logical_or logical_not where reshape view transpose permute unsqueeze squeeze
    expand select slice cat stack full zeros ones sym_size to clone sign floor ceil copysign
    take dynamic_slice dynamic_update_slice real imag conj nonzero put""".split())

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
    name = _C._proxy_node(t) if tr is not None else None
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
    trace; the graph only grows, so a longer one is read again)."""
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


def reaching(tr, values, targets):
    """Per value of values (traced tensors of the root graph; anything else
    reaches nothing): the names in targets (root nodes) its lineage reaches
    with a zero's sign still showing, i.e. not only through a comparison or
    a cast to bool or an integer (-0.0 == 0.0).  A cond's output is followed
    into each body to the operands its output reaches there (`if np.max(x)
    > 0` inside a merged branch compares only); any other HOP, or a node
    hop cannot read, passes every operand's sign on."""
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
            if not path and n in targets:
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
        name = _C._proxy_node(v) if isinstance(v, _C.Tensor) else None
        out.append(walk((), name, None) if name is not None else frozenset())
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


def relative_error(t, tr=None):
    """A bound r such that every element of traced tensor t (of the root
    graph) is within r * |element| of NumPy's (0.0: NumPy's bits), or None
    when its lineage allows no such bound (a float sum: cancellation makes
    the relative difference unbounded).  The lineage may hold elementwise
    math functions (x ** 3) of exact values, then ops that keep relative
    differences (data movement, sign changes, products, quotients, square
    roots, casts).  hop.numpy.linalg.lstsq uses it to bound how far hop's
    singular values may be from NumPy's."""
    tr = tr or _C.tracing()
    name = _C._proxy_node(t) if tr is not None and isinstance(t, _C.Tensor) else None
    if name is None or _C._trace_depth() > 1:
        return None
    nodes, _ = _graph(tr)
    checked_names = _checked_names()

    def leaf(n, node):
        if node is None:
            return None
        if node[0] == "placeholder" or n in checked_names:
            return 0.0
        return _INPUTS

    def combine(n, node, ins):
        kind, target, meta = node[0], node[2], node[4]
        got = [memo[i] for i in ins]
        eps = _EPS.get(getattr(meta[1], "name", ""), None) if type(meta) is tuple and \
            len(meta) == 3 and meta[0] == "tensor" else None
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

    memo = {}
    return _post_order(name, nodes, memo, leaf, combine)


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
        inner = getattr(v, "_t", None)
        if isinstance(inner, _C.Tensor):
            v = inner
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
