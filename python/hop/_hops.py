"""HOPs from Python: one path for every registered HOP, built-in or loaded.

`_apply` calls a HOP by name through `_C.call_hop`, which traces it (each body
once, in its own subtracer, whatever it closes over lifted into explicit
inputs by the C tracer) while a hop.trace is active on this thread, and
otherwise runs it eagerly through the class's eval slot, which calls the
bodies on concrete tensors.  This module adds what Python needs around the C
call and nothing a class checks itself: pytrees (groups of operands and body
results may be nested tuples/lists/dicts/namedtuples/dataclasses; plain
Python values are constants of the trace), the purity check of traced bodies,
and the escape check of what they return.  cond, map, wrap and
invoke_subgraph are thin over it, and `hop.ops.<name>` calls any registered
HOP (hop.load_library adds more).
"""

import builtins
import functools
import inspect
import numbers
import operator
import types

from . import _C
from ._breaks import _COMPILE
from ._paths import _in_body
from ._purity import body_effects, body_env_arrays, run_pure
from ._reads import Policy, is_hop_function, names_of, roots
from ._pytree import _REGISTERED, LEAF, Spec, flat_spec, flatten, unflatten
from ._reads import loaded_hop_numpy

try:
    import numpy as _np
except ImportError:  # NumPy is optional at run time
    _np = None

__all__ = ["cond", "map", "wrap", "invoke_subgraph", "nested_compile_region", "load_library",
           "while_loop", "fori_loop", "scan", "switch", "associative_scan"]


def _is_traced(x):
    return isinstance(x, _C.SymInt) or _C._is_proxy(x)


def _fill(traced, template, spec):
    if len(template) == len(traced):  # every leaf is traced (no constants)
        return unflatten(traced, spec)
    it = iter(traced)
    leaves = []
    for t in template:
        leaves.append(next(it) if t is _HOLE else t)
    return unflatten(leaves, spec)


_HOLE = object()
_Tensor = _C.Tensor
_BOOL = _C.bool
_TRACED = operator.attrgetter("traced")  # of a _Group
_JUST_TENSOR = frozenset([_Tensor])


def _holes(leaves):
    """Tensors and SymInts become holes; other leaves are constants."""
    traced, template = [], []
    for x in leaves:
        if isinstance(x, (_C.Tensor, _C.SymInt)):
            traced.append(x)
            template.append(_HOLE)
        else:
            template.append(x)
    return traced, template


class _Group:
    """One operand group of a HOP call: its structure (spec), its traced
    leaves (tensors and SymInts, in order) and its template (every leaf, a
    _HOLE where a traced one goes).  direct: the group is a tuple of traced
    leaves alone, so the body's inputs for it are a slice of its inputs.
    _apply also takes a _Group its caller made already (_call_group)."""

    __slots__ = ("spec", "leaves", "traced", "template", "direct")

    def __init__(self, group):
        if type(group) is tuple and _JUST_TENSOR.issuperset(builtins.map(type, group)) and \
                _Tensor not in _REGISTERED:
            # The common group (wrap's and cond's operands), hop.Tensors
            # themselves (a subclass may flatten otherwise): no walk, no
            # template scan (issue #30: per HOP call).  Its spec and template
            # are never read (its structure is a slice of the inputs).
            self.leaves = self.traced = group
            self.direct = True
            return
        if type(group) is _Tensor and _Tensor not in _REGISTERED:
            # One hop.Tensor (map's xs): what flatten and _holes give it,
            # without the walk (issue #30: per HOP call).
            self.leaves, self.spec = [group], LEAF
            self.traced, self.template = [group], [_HOLE]
            self.direct = False
            return
        self.leaves, self.spec = flatten(group)
        self.traced, self.template = _holes(self.leaves)
        n = len(self.template)
        self.direct = len(self.traced) == n and self.spec is flat_spec(n)


def _call_group(args, spec):
    """The _Group of a call (args, {}) whose args are n hop.Tensors
    themselves and whose structure is spec (_call_spec(n)): what _Group
    gives it, without the walk."""
    g = _Group.__new__(_Group)
    g.leaves, g.spec = list(args), spec
    g.traced, g.template = g.leaves, [_HOLE] * len(args)
    g.direct = False
    return g


def _check_callable(hop, what, fn):
    if not callable(fn):
        raise TypeError(f"hop.{hop}: {what} must be callable, got {type(fn).__name__}")


def _tracing(hop, leaves):
    tr = _C.tracing()
    if tr is None and builtins.any(_is_traced(x) for x in leaves):
        raise _C.TraceError(
            f"hop.{hop}: a traced value was used after its trace ended (it escaped the traced "
            f"function or body)")
    return tr


def _structs(ins, pos, groups):
    """Each group's structure rebuilt from a body's inputs ins (a tuple;
    from position pos: the inputs a HOP makes itself come first)."""
    structs = []
    for g in groups:
        n = len(g.traced)
        structs.append(ins[pos:pos + n] if g.direct else ins[pos] if g.spec is LEAF and n == 1
                       else _fill(ins[pos:pos + n], g.template, g.spec))
        pos += n
    return structs


class _Result:
    """What a body returned: its structure, its constant leaves and which
    body it was."""

    __slots__ = ("spec", "template", "which")

    def __init__(self, spec, template, which):
        self.spec = spec
        self.template = template
        self.which = which

    def describe(self):
        return repr(self.spec)


# which -> the _Result of a body that returns one tensor (a _Result is never
# changed, so every call shares it: issue #30, per HOP call).
_LEAF_RESULTS = {}


def _leaf_result(which):
    r = _LEAF_RESULTS[which] = _Result(LEAF, [_HOLE], which)
    return r


def _constants(result):
    consts = [t for t in result.template if t is not _HOLE]
    return f"(constants {consts}) " if consts else ""


def _array_agnostic(spec):
    """spec with hop.numpy arrays as plain tensors: branches may return a
    NumPy array in one and a tensor in the other (as eagerly)."""
    hnp = loaded_hop_numpy()
    return spec if hnp is None else hnp._array_agnostic_spec(spec)


def _merged(results):
    """The structure of a HOP's result from its bodies' (a hop.numpy array
    where any body returned one)."""
    hnp = loaded_hop_numpy()
    r = results[0]
    if hnp is None or len(results) == 1:
        return r
    spec = functools.reduce(hnp._merge_array_specs, [x.spec for x in results])
    return _Result(spec, r.template, r.which)


def _same_structure(hop, first, result, ncall):
    """Every body of one call returns one structure with the same constants
    (the HOP's result is built from it)."""
    if first.template != result.template or (first.spec != result.spec and
                                              _array_agnostic(first.spec) !=
                                              _array_agnostic(result.spec)):
        raise _C.TraceError(
            f"hop.{hop}: the branches return different structures: the {first.which} returns "
            f"{first.describe()} {_constants(first)}but the {result.which} returns "
            f"{result.describe()} {_constants(result)}")


class _Body:
    """A body of one call: the user's function, how the messages name it
    ("true branch"), how it is called with its groups' values (one object
    per group, rebuilt from the group's pytree), and the structure it must
    return when the HOP says so (expect, a _Result: a loop body returns its
    carry; None: whatever the call's other bodies return)."""

    __slots__ = ("fn", "which", "call", "expect")

    def __init__(self, fn, which, call=None, expect=None):
        self.fn = fn
        self.which = which
        self.call = call
        self.expect = expect


def _check_expected(hop, which, result, expect):
    if expect is _PRED:
        # A condition may be a hop.numpy array (NumPy code's comparison), as
        # cond's pred may.
        if _array_agnostic(result.spec) != expect.spec or result.template != expect.template:
            got = result.describe() if result.template == [_HOLE] or len(result.template) != 1 \
                else f"the constant {result.template[0]!r}"
            raise _C.TraceError(f"hop.{hop}: {which} must return a bool scalar tensor, got {got}")
        return
    if result.spec != expect.spec or result.template != expect.template:
        raise _C.TraceError(
            f"hop.{hop}: {which} returns {result.describe()} {_constants(result)}but the "
            f"{expect.which} is {expect.describe()} {_constants(expect)}".rstrip())


def _default_call(kinds):
    """Calls with a VALUES group as one argument and a VARARGS group's items
    as positional arguments."""
    def call(structs):
        args = []
        for kind, s in zip(kinds, structs):
            if kind == "varargs":
                args.extend(s)
            else:
                args.append(s)
        return tuple(args), {}
    return call


def _apply(name, leads, groups, bodies, *, hop=None, keys=None, constants=True,
           same_structure=_same_structure, record=None, cached=None, empty=None, made=0,
           result=None):
    """Calls HOP `name` with its leads (Python values), groups (pytrees) and
    bodies (_Body).  Returns the HOP's result in the structure its bodies
    return.  constants: whether a body may return plain Python values (they
    are passed through, and must agree between bodies; else a string saying
    why not, for the error); record: a list that
    gets the first body result; cached: the result structure to use when no
    body ran (invoke_subgraph's cache hit); empty(outs): the result when no
    body ran otherwise (a loop that ran zero times); made: how many leading
    inputs the HOP makes itself (a loop's index), given to each body's call
    as the first positional arguments; result: the structure of the HOP's
    outputs when it is not its bodies' (a loop's carry), a _Result."""
    hop = hop or name
    parts = [g if type(g) is _Group else _Group(g) for g in groups]
    tr = _C.tracing()
    if tr is None:
        _tracing(hop, [x for g in parts for x in g.leaves] + list(leads))
    results = []
    ncall = [0]
    # Where each group's inputs are in a body's when every group is a tuple
    # of tensors (the common call: its structures are slices of the inputs,
    # no rebuild, no hop.numpy array among them), else None.
    if len(parts) == 1 and parts[0].direct:
        slices = (slice(made, made + len(parts[0].traced)),)
    else:
        slices = []
        pos = made
        for g in parts:
            if not g.direct:
                slices = None
                break
            slices.append(slice(pos, pos + len(g.traced)))
            pos += len(g.traced)

    def make(b):
        fn, which, call, expect = b.fn, b.which, b.call, b.expect

        def body(*ins):
            if tr is not None:
                tr.name_hints(fn)
            if slices is not None:
                structs = [ins[slices[0]]] if len(slices) == 1 else [ins[s] for s in slices]
            else:
                hnp = loaded_hop_numpy()
                if hnp is None:
                    structs = _structs(ins, made, parts)
                else:
                    with hnp._storage.operands():  # a hop.numpy array among them is the caller's
                        structs = _structs(ins, made, parts)
            args, kwargs = call(structs)
            if made:
                args = (*ins[:made], *args)
            if tr is not None:
                traced, result = _traced_body(tr, hop, which, fn, args, kwargs,
                                              (name, ins, made, parts))
            else:
                traced, result = _body_result(hop, which, fn(*args, **kwargs), False)
            if constants is not True and builtins.any(t is not _HOLE for t in result.template):
                raise _C.TraceError(f"hop.{hop}: the {which} must return tensors ({constants})")
            if expect is not None:
                _check_expected(hop, which, result, expect)
                return traced
            ncall[0] += 1
            if results:
                same_structure(hop, results[0], result, ncall[0] - 1)
            if len(results) < len(bodies):  # one per body (eagerly a body runs many times)
                results.append(result)
            return traced
        return body

    if tr is not None and _COMPILE in tr.scratch:  # (body_effects returns at once otherwise)
        body_effects(hop, bodies, tr)
        body_env_arrays(tr, [b.fn for b in bodies])
    outs = _C.call_hop(name, tuple(leads), tuple(builtins.map(tuple, builtins.map(_TRACED, parts))),
                       tuple(builtins.map(make, bodies)), keys)
    if record is not None and results:
        record.append(results[0])
    r = result or ((results[0] if len(results) == 1 else _merged(results)) if results else cached)
    return _shaped(hop, outs, r, empty)


def _traced_body(tr, hop, which, fn, args, kwargs, call):
    """_body_result of the body fn(*args, **kwargs) traced now, checked
    pure, and with the run-time checks hop.numpy deferred to its end (a
    float max/min whose zero's sign reaches the body's results:
    hop.numpy._core.body_begin).  call: (the HOP's name, the body's inputs,
    how many of them the HOP makes, the operand groups)."""
    hnp = loaded_hop_numpy()
    scope = hnp._core.body_begin(tr, call[0], _explicit_sources(*call)) \
        if hnp is not None else None
    try:
        _in_body(1)
        try:
            out = run_pure(hop, which, fn, args, kwargs)
        finally:
            _in_body(-1)
        traced, result = _body_result(hop, which, out, True)
        if scope is not None:
            traced = hnp._core.body_outputs(tr, scope, traced)
        return traced, result
    finally:
        if scope is not None:
            hnp._core.body_end(tr, scope)


def _explicit_sources(name, ins, made, parts):
    """What each explicit input of a body stands for in its enclosing graphs,
    for hop.numpy's lineage (_exact.Body): a map body's slice of xs
    ("slice") and its extra arguments ("same"), as {placeholder name: (how,
    the operand's tracer depth, its node name)}.  Empty for other HOPs: a
    loop's carries change, cond's operands are lifted (their sources are
    the tracer's)."""
    if name != "map":
        return {}
    out = {}
    ops = [x for g in parts for x in g.traced]
    nxs = len(parts[0].traced)
    for i, (ph, op) in enumerate(zip(ins[made:], ops)):
        n, src = _C._proxy_node(ph), _C._proxy_node(op)
        if n is not None and src is not None:
            out[n] = ("slice" if i < nxs else "same", _C._proxy_depth(op), src)
    return out


def _shaped(hop, outs, r, empty=None):
    """A HOP's outputs outs in the structure r (a _Result; None: no body
    ran, then empty(outs), or the outputs as they are)."""
    if r is None:
        return empty(outs) if empty is not None else (outs[0] if len(outs) == 1 else tuple(outs))
    if r.spec is LEAF and len(outs) == 1:
        return outs[0]  # one tensor (what _fill gives, without its walk)
    holes = builtins.sum(t is _HOLE for t in r.template)
    if len(outs) != holes:  # a class (a library's) whose eval gave other results
        raise _C.Error(f"hop.{hop}: the HOP gave {len(outs)} result{'s' * (len(outs) != 1)} "
                       f"where its bodies return {holes} values")
    return _fill(outs, r.template, r.spec)


_NOT_DIRECT = _C._NOT_DIRECT  # _C._direct's answer where the call must go through _apply


# _C._direct(name, leads, operands, fns, whiches, same_structure) is _apply
# for the common traced call (issue #30: per HOP call), or _NOT_DIRECT where
# it may not go this way: traced by hop.trace (hop.compile's calls check
# their bodies' prints, _apply), hop.Tensor no registered pytree type, its
# operands (a tuple) hop.Tensors themselves (one flat group: the bodies take
# them as they are).  leads and bodies fns (tuples; whiches names them) are
# called as fn(*operands) that may return constants.  _C._call_direct does
# per body what _apply's body wrapper does, calling _direct_result only for
# a body that does not return one tensor, and _direct_finish shapes the
# outputs unless every body returned one tensor.  One C call for the test
# and the call: a Python call is ~500 instructions.


def _direct_finish(name, outs, results, whiches):
    """_C._direct's result: the outputs outs of a call whose bodies did not
    all return one tensor, in their structure (results: per body, None for
    one tensor, else its _Result)."""
    rs = [r or _LEAF_RESULTS.get(w) or _leaf_result(w) for r, w in zip(results, whiches)]
    return _shaped(name, outs, rs[0] if len(rs) == 1 else _merged(rs) if rs else None)


def _body_result(hop, which, out, traced_call):
    """A body's result out as (its traced leaves, its _Result); traced_call:
    whether its constants must hold no traced value (_check_no_escape)."""
    if type(out) is _Tensor and _Tensor not in _REGISTERED:
        # one tensor, the common result: a leaf, no constants
        return [out], _LEAF_RESULTS.get(which) or _leaf_result(which)
    leaves, spec = flatten(out)
    traced, template = _holes(leaves)
    if traced_call:
        _check_no_escape(hop, which, template)
    return traced, _Result(spec, template, which)


def _direct_result(hop, whiches, b, out, results, same_structure):
    """What _apply's body wrapper does with body b's result out, for
    _C._call_direct: its leaves (returned) and its _Result (appended to
    results, where None stands for a body that returned one tensor), checked
    against the first body's."""
    traced, result = _body_result(hop, whiches[b], out, True)
    if results:
        first = results[0] or _LEAF_RESULTS.get(whiches[0]) or _leaf_result(whiches[0])
        same_structure(hop, first, result, len(results))
    results.append(result)
    return traced


# How far the escape check looks into a returned object: a body returns a few
# values, and an object graph bigger than this is one the check cannot afford.
_ESCAPE_BUDGET = 10000
_LAZY = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
# Objects whose references lead to a whole program (a module's globals, a
# class's methods) and never hold a body's values.
_NOT_HOLDERS = (str, bytes, int, float, complex, bool, type(None), types.ModuleType, type,
                types.CodeType, types.BuiltinFunctionType, types.FrameType)


def _holds_traced(obj):
    """Whether obj reaches a traced value (a proxy or a SymInt) through its
    references: elements, attributes, closure cells, a generator's locals."""
    import gc
    stack, seen = [obj], set()
    while stack and len(seen) < _ESCAPE_BUDGET:
        o = stack.pop()
        if id(o) in seen or isinstance(o, _NOT_HOLDERS):
            continue
        seen.add(id(o))
        if isinstance(o, _C.SymInt) or (isinstance(o, _C.Tensor) and _C._is_proxy(o)):
            return True
        if isinstance(o, _C.Tensor):
            continue
        if isinstance(o, types.FunctionType):
            # Its globals are the module's, not the body's; its cells and
            # defaults are what it carries.
            stack.extend(o.__closure__ or ())
            stack.extend(o.__defaults__ or ())
            stack.extend((o.__kwdefaults__ or {}).values())
            continue
        stack.extend(gc.get_referents(o))
    return False


def _check_no_escape(hop, which, template):
    """A body's non-structure return values are constants of the trace; one
    that holds a traced value would carry it out of its body, where it means
    nothing, so that is an error rather than a silent escape."""
    for i, leaf in enumerate(template):
        if leaf is _HOLE:
            continue
        if isinstance(leaf, _LAZY):
            raise _C.TraceError(
                f"hop.{hop}: the {which} returns a {type(leaf).__name__} (output {i}); a body "
                f"runs once while it is traced, so it must return its values (a tuple, list or "
                f"dict), not a lazy {type(leaf).__name__}")
        if isinstance(leaf, _NOT_HOLDERS):
            continue
        if _holds_traced(leaf):
            raise _C.TraceError(
                f"hop.{hop}: the {which} returns a {type(leaf).__name__} that holds a traced "
                f"value (output {i}); a body may return tensors and SymInts in tuples, lists "
                f"and dicts, and anything else is a constant of the trace, so a traced value "
                f"inside it would escape the body")


# ------------------------------------------------------------------- cond

def cond(pred, true_fn, false_fn, operands=()):
    """Returns true_fn(*operands) if pred else false_fn(*operands).

    pred follows Python's `if`: a bool, an int or float (true when nonzero),
    a NumPy scalar or array with one element, or a tensor with one element of
    any dtype (true when nonzero); the same in eager, traced and compiled
    code.  Under tracing a tensor pred becomes an input and both branches
    become subgraphs cond_true_N and cond_false_N with one merged signature; a
    Python pred picks its branch while tracing.  The branches take the
    operands (a tuple or a pytree) and may close over any tensor; they return
    the same structure, dtypes and ranks.  Python numbers they return are
    passed through; where the branches return different ones
    (cond(p, lambda: 1, lambda: 2)) a traced cond gives a SymInt (floats: a
    SymFloat), returned as the number eager returns.

    >>> x = hop.tensor([1.0, -2.0, 3.0])
    >>> hop.cond(x.sum() > 0, lambda: x * 2, lambda: -x)
    hop.tensor([ 2., -4.,  6.])
    >>> hop.cond(True, lambda a, b: a + b, lambda a, b: a - b, (x, 1.0))
    hop.tensor([ 2., -1.,  4.])
    """
    if not (callable(true_fn) and callable(false_fn)):
        _check_callable("cond", "true_fn", true_fn)
        _check_callable("cond", "false_fn", false_fn)
    if type(operands) is not tuple:
        if not isinstance(operands, (tuple, list)):
            raise TypeError(f"hop.cond: operands must be a tuple or list, got "
                            f"{type(operands).__name__}")
        operands = tuple(operands)
    tr = _C.tracing()
    if tr is not None and type(pred) is _Tensor and pred.ndim == 0:
        # The common traced pred, a tensor of rank 0 (one element): what
        # _pred gives it, without its checks (issue #30: per HOP call).
        pred = pred if pred.dtype == _BOOL else _C.ne(pred, 0)
    else:
        pred = _pred(pred, tr is not None)
    # _branches' first step here, one Python call fewer (~0.5 K instructions
    # a traced cond call, issue #30)
    leads, fns = (pred,), (true_fn, false_fn)
    try:
        out = _C._direct("cond", leads, operands, fns, _COND_BRANCHES, _SAME_BRANCHES)
    except _ConstantsDiffer as e:  # the failed call left everything as it was
        return _branches("cond", leads, operands, fns, _COND_BRANCHES, e.kinds)
    return out if out is not _NOT_DIRECT else \
        _branches("cond", leads, operands, fns, _COND_BRANCHES, {})


_COND_BRANCHES = ("true branch", "false branch")


class _ConstantsDiffer(Exception):
    """Raised by _branch_structure: the branches agree but for Python
    numbers at some leaves ({leaf index: "int" or "float"})."""

    def __init__(self, kinds):
        super().__init__(kinds)
        self.kinds = kinds


def _number_kind(v):
    """"int" or "float" for a Python (or NumPy) number that may become one
    value of a cond's output; None for anything else (bools included: a
    traced bool is returned as an int)."""
    if isinstance(v, (bool, _C.Tensor)) or (_np is not None and isinstance(v, _np.bool_)):
        return None
    if isinstance(v, numbers.Integral):
        return "int"
    if isinstance(v, numbers.Real):
        return "float"
    return None


def _branch_structure(promoted):
    """The structure check of cond and switch: as _same_structure, but
    branches whose results differ only in Python numbers at some leaves
    (cond(p, lambda: 1, lambda: 2)) raise _ConstantsDiffer, so the call is
    traced again with those leaves as values of the graph.  promoted: the
    leaves made values already (their kinds)."""
    def check(hop, first, result, ncall):
        if first.template == result.template and (first.spec is result.spec or
                                                  first.spec == result.spec):
            return
        same_spec = first.spec == result.spec or \
            _array_agnostic(first.spec) == _array_agnostic(result.spec)
        kinds = dict(promoted)
        if same_spec and len(first.template) == len(result.template):
            ok = True
            for i, (a, b) in enumerate(zip(first.template, result.template)):
                if a is _HOLE or b is _HOLE:
                    ok = ok and a is b
                elif type(a) is not type(b) or a != b:
                    # one kind in every branch: eager returns the taken
                    # branch's, which a traced number must have too
                    ka, kb = _number_kind(a), _number_kind(b)
                    ok = ok and ka is not None and ka == kb and kinds.get(i, ka) == ka
                    if ok:
                        kinds[i] = ka
            if ok and kinds != promoted:
                raise _ConstantsDiffer(kinds)
        _same_structure(hop, first, result, ncall)
    return check


# The structure check of branches none of whose numbers is a value yet (it
# keeps nothing of its own: every call shares it).
_SAME_BRANCHES = _branch_structure({})


def _promoting(fn, kinds):
    """fn with the leaves of its result named in kinds as 0-d tensors
    (int64 or float64)."""
    if not kinds:
        return fn

    def body(*args, **kwargs):
        leaves, spec = flatten(fn(*args, **kwargs))
        for i, kind in kinds.items():
            if i < len(leaves) and _number_kind(leaves[i]) is not None:
                leaves[i] = _C.full((), leaves[i], dtype=_C.int64 if kind == "int" else
                                    _C.float64)
        return unflatten(leaves, spec)
    return body


def _call_splat(structs):
    """A branch's call: the operands' items as positional arguments."""
    return tuple(structs[0]), {}


def _branches(name, leads, operands, fns, whiches, kinds=None):
    """cond and switch: _apply over the branches fns (functions, named
    whiches in messages), or _C._direct where it may (kinds None: not tried
    yet; else the caller tried it, and kinds are the leaves it found
    differing, as below).
    Branches that return different Python numbers at a leaf (only a traced
    call runs more than one) give that leaf as a value of the graph: a
    SymInt for ints, a SymFloat for floats, which a traced or compiled
    function returns as the int or float the branch taken returns eagerly
    (an int in one branch and a float in another is the structure error:
    one type could not be both).  Under vmap with a batched predicate the
    SymInt's item is batched where the int is a scalar operand of
    elementwise ops (docs/VMAP.md, the item row)."""
    if kinds is None:
        kinds = {}
        try:
            out = _C._direct(name, leads, operands, fns, whiches, _SAME_BRANCHES)
            if out is not _NOT_DIRECT:
                return out
        except _ConstantsDiffer as e:
            kinds = e.kinds  # the failed call left everything as it was
    while True:
        try:
            out = _apply(name, leads, [operands],
                         [_Body(_promoting(fn, kinds), which, _call_splat)
                          for fn, which in zip(fns, whiches)],
                         same_structure=_branch_structure(kinds))
            break
        except _ConstantsDiffer as e:
            kinds = e.kinds  # the failed call left everything as it was
    if not kinds:
        return out
    from ._symfloat import SymFloat
    leaves, spec = flatten(out)
    for i, kind in kinds.items():
        t = leaves[i]
        leaves[i] = t.item() if kind == "int" else SymFloat(t, f"{name} output")
    return unflatten(leaves, spec)


def _hnp():
    """hop.numpy, imported when a HOP first meets an ndarray or a hop.numpy
    array (`import hop` does not import it)."""
    from . import numpy
    return numpy


def _is_array(v):
    return _np is not None and isinstance(v, _np.ndarray)


def _as_tensor_arg(v):
    """A hop.numpy array as its tensor and an ndarray as a zero-copy tensor
    (a traced HOP reads it at run time); anything else unchanged.  This is
    hop.numpy's tensor_of (one captured input per array and trace, seen by
    the guards), which a value that is neither does not import."""
    if getattr(type(v), "__hop_tensor__", None) is None and not _is_array(v):
        return v
    return _hnp()._core.tensor_of(v)


def _numpy_arg(x):
    """An ndarray operand of a HOP as hop.compile makes an ndarray argument:
    a hop.numpy array over its memory (NumPy's semantics in the body), an
    ndarray again where the HOP returns it (_numpy_result)."""
    hnp = _hnp()
    return hnp.NumpyArg(hnp._core.tensor_of(x), owned=False)


def _numpy_result(out):
    """An eager HOP's result with each NumpyArg (the kind _numpy_arg makes)
    an ndarray again, as a compiled function returns it; traced, it stays
    the hop.numpy array that the function goes on computing with."""
    if _C.tracing() is not None:
        return out
    leaves, spec = flatten(out)
    return unflatten(leaves, _hnp()._numpy_out_spec(spec))


def _numpy_group(tree):
    """A HOP's group of operands with each ndarray in it a hop.numpy array
    (_numpy_arg): (the group, its leaves, whether there was an ndarray)."""
    if type(tree) is _Tensor and _Tensor not in _REGISTERED:
        return tree, [tree], False  # one hop.Tensor: flatten's answer, without the walk
    leaves, spec = flatten(tree)
    if _np is None or not builtins.any(isinstance(x, _np.ndarray) for x in leaves):
        return tree, leaves, False
    tree = unflatten([_numpy_arg(x) if isinstance(x, _np.ndarray) else x for x in leaves], spec)
    return tree, flatten(tree)[0], True


def _pred(pred, tracing):
    """pred as the C cond takes it: a bool decided now, a bool tensor (a
    proxy, or a concrete tensor the tracer lifts to an input), or a SymInt
    (the tracer compares it with 0).  Eagerly always a bool."""
    if isinstance(pred, bool):
        return pred
    if type(pred) is not _Tensor:
        pred = _as_tensor_arg(pred)
    if isinstance(pred, _C.Tensor):
        shape = tuple(pred.shape)
        numel = 1
        for d in shape:
            numel = numel * d if isinstance(d, int) else -1
        if numel != 1:
            raise _C.ShapeError(f"hop.cond: pred must have one element, got shape {shape}")
        if not tracing:
            return bool(pred.item())
        # Python's truth: any number is true when nonzero (NaN included).
        return pred if pred.dtype == _C.bool else _C.ne(pred, 0)
    if isinstance(pred, _C.SymInt):
        return _C._sym_truth(pred)  # Python's truth of an int: nonzero, undecided
    if isinstance(pred, numbers.Number) and not isinstance(pred, complex) or \
            (_np is not None and isinstance(pred, _np.bool_)):
        return bool(pred)
    raise TypeError(f"hop.cond: pred must be a bool, a number or a tensor with one element, "
                    f"got {type(pred).__name__}")


# -------------------------------------------------------------------- map

def _rows_differ(hop, first, result, ncall):
    if first.spec != result.spec or first.template != result.template:
        raise _C.TraceError(f"hop.map: the body returned different structures for different "
                            f"rows: {first.spec!r} for row 0 but {result.spec!r} for row {ncall}")


def map(fn, xs, *args):
    """Applies fn(x, *args) to each slice x of xs along dim 0 and stacks the
    results.  xs is a tensor or a tuple/list/dict of tensors with the same
    leading size (not 0); fn returns a tensor or a pytree of tensors.  Under
    tracing fn becomes one subgraph map_body_N traced on a slice, and the
    plan runs its rows in parallel when they are independent and large.

    >>> xs = hop.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> hop.map(lambda row, w: row * w, xs, hop.tensor([10.0, 100.0]))
    hop.tensor([[ 10., 200.],
                [ 30., 400.]])
    """
    _check_callable("map", "fn", fn)
    xs, xleaves, arrays = _numpy_group(xs)
    if not xleaves or not builtins.all(isinstance(x, _C.Tensor) for x in xleaves):
        raise TypeError("hop.map: xs must be a tensor or a tuple/list/dict of tensors")
    call = lambda structs: ((structs[0], *structs[1]), {})  # noqa: E731
    out = _apply("map", [], [xs, args], [_Body(fn, "map body", call)],
                 constants="a constant cannot be stacked", same_structure=_rows_differ)
    return _numpy_result(out) if arrays else out


# ------------------------------------------------------------------- wrap

def _flatten_call(args, kwargs):
    """A call's arguments as one pytree.  Keywords are sorted by name, so
    f(x, a=1, b=y) and f(x, b=y, a=1) are the same call."""
    return (tuple(args), {k: kwargs[k] for k in sorted(kwargs)})


def _call_with(structs):
    args, kwargs = structs[0]
    return args, kwargs


def _call_positional(structs):
    return structs[0], {}


_WRAP_BODY = ("wrap body",)


def wrap(fn, /, *args, **kwargs):
    """fn(*args, **kwargs); under tracing fn becomes a subgraph wrap_body_N
    with no free variables (what it closes over is lifted to inputs).

    >>> xs = hop.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> hop.wrap(lambda a, b: a @ b, xs, xs)
    hop.tensor([[ 7., 10.],
                [15., 22.]])
    """
    if not callable(fn):
        _check_callable("wrap", "fn", fn)
    if not kwargs:  # the arguments alone: a flat group when they are tensors
        out = _C._direct("wrap", (), args, (fn,), _WRAP_BODY, _same_structure)
        if out is not _NOT_DIRECT:
            return out
        return _apply("wrap", [], [args], [_Body(fn, "wrap body", _call_positional)])
    return _apply("wrap", [], [_flatten_call(args, kwargs)], [_Body(fn, "wrap body", _call_with)])


# -------------------------------------------------------- invoke_subgraph

class _Id:
    """A key part that matches only the same object (a tensor, a function, an
    opaque object): it holds the object, so its id cannot be reused."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Id) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)

    def __repr__(self):
        return f"_Id({type(self.obj).__name__} at {id(self.obj):#x})"


# How many values the key of one invoke_subgraph call may look at.  A body
# that reads more (a big global list) gets a subgraph of its own at each call:
# never shared wrongly, only not shared.
_KEY_BUDGET = 4096
_SCALARS = (bool, int, str, bytes, type(None), type(Ellipsis))


class _OverBudget(Exception):
    pass


def _value_key(v, budget, seen, names=frozenset()):
    """A hashable key that equals another's only when v would trace the same:
    constants by type and value (2, 2.0 and True differ; NaN equals NaN),
    tensors and SymInts by identity, containers by their contents, functions
    by identity and what they read, other objects by identity and the
    attributes named by the code that reads them (names)."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _OverBudget
    t = type(v)
    if t in _SCALARS:
        return (t, v)
    if t is float:
        return (t, v.hex())  # tells -0.0 from 0.0 and makes NaN equal itself
    if t is complex:
        return (t, v.real.hex(), v.imag.hex())
    # A container is copied in one C call before its elements are keyed, so
    # another thread changing it meanwhile (the GIL is released between
    # bytecodes) gives the key of one of its states, not a RuntimeError.
    if t in (tuple, list):
        return (t, tuple(_value_key(x, budget, seen, names) for x in tuple(v)))
    if t is dict:
        return (t, tuple((_value_key(k, budget, seen, names), _value_key(x, budget, seen, names))
                         for k, x in tuple(v.items())))
    if t in (set, frozenset):
        return (t, frozenset(_value_key(x, budget, seen, names) for x in tuple(v)))
    if _np is not None and isinstance(v, _np.generic):
        return (t, _value_key(v.item(), budget, seen))
    if isinstance(v, types.FunctionType):
        if id(v) in seen:
            return _Id(v)
        seen.add(id(v))
        return (_Id(v), _reads_key(v, budget, seen))
    if isinstance(v, types.MethodType):
        code = getattr(v.__func__, "__code__", None)
        own = names_of(code).set if code is not None else frozenset()
        return (t, _value_key(v.__func__, budget, seen), _value_key(v.__self__, budget, seen, own))
    d = getattr(v, "__dict__", None)
    if not isinstance(d, dict) or isinstance(v, (type, types.ModuleType, _C.Tensor)) or \
            id(v) in seen:
        return _Id(v)  # a module is its identity: rebinding its data is not seen
    # `cfg.k` in the body: a new k is a new subgraph, as a new closed-over k is.
    seen.add(id(v))
    attrs = tuple((n, _value_key(d[n], budget, seen, names)) for n in sorted(names) if n in d)
    seen.discard(id(v))
    return (_Id(v), attrs)


class _Keyed(Policy):
    """The roots the key reads (_reads.roots): set closure cells and the
    defined globals the code names; a function of hop itself (the wrapper
    nested_compile_region makes) by its closure only: hop's own globals are
    its machinery, not what the body computes, and walking them would read
    registries other threads are changing."""

    hop_cells = True


_KEYED = _Keyed()


def _reads_key(fn, budget, seen):
    """The key of what fn reads from outside (_Keyed's roots) and, through
    them, of the functions it calls and the attributes its code names."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ()
    # (the attributes hop's wrapper names are its own, not the body's)
    names = frozenset() if is_hop_function(fn) else names_of(code).set
    return tuple((r[1], _value_key(r[3], budget, seen, names)) for r in roots(fn, _KEYED))


def _subgraph_key(tr, fn, spec, template):
    """One object per (function, what it reads, argument structure,
    constants) and trace: the C cache reuses a subgraph only for the same key.
    Also says whether this call added it (a failed call takes it out again).
    What the body reads is part of the key because it is traced into the
    subgraph: a closed-over scalar is a constant of it, a closed-over tensor
    one of its lifted inputs; a change means a new subgraph."""
    budget, seen = [_KEY_BUDGET], set()
    try:
        consts = tuple(_value_key(t, budget, seen) for t in template if t is not _HOLE)
        k = ("invoke_subgraph", _value_key(fn, budget, seen), spec, consts)
        got = tr.scratch.setdefault(k, k)  # (one lookup: k is a new tuple)
        return got, got is k
    except (_OverBudget, TypeError):  # too much to compare, or unhashable: never share
        return object(), False


# n -> the spec of a call (args, {}) with n tensors in args: one object per
# n, equal to what flatten gives (a spec is never changed; the key of
# _subgraph_key holds it, and one object compares by identity).
_CALL_SPECS = {}


def _call_spec(n):
    # (setdefault: of two threads making it at once, both get the one kept)
    return _CALL_SPECS.setdefault(n, Spec("tuple", None, [flat_spec(n), Spec("dict", (), [])]))


def invoke_subgraph(fn, /, *args, **kwargs):
    """fn(*args, **kwargs); under tracing, calls of the same fn with matching
    argument metadata, constants and closed-over values share one
    subgraph_N, traced once.

    >>> hop.invoke_subgraph(lambda a: a.relu() + 1, hop.tensor([1.0, -2.0, 3.0]))
    hop.tensor([2., 1., 4.])
    """
    _check_callable("invoke_subgraph", "fn", fn)
    call = _flatten_call(args, kwargs)
    body = _Body(fn, "invoke_subgraph body", _call_with)
    tr = _C.tracing()
    if tr is None:
        return _apply("invoke_subgraph", [], [call], [body])
    if not kwargs and _JUST_TENSOR.issuperset(builtins.map(type, args)) and \
            _Tensor not in _REGISTERED:
        # hop.Tensors alone, the common call: flatten's spec and template
        # without the walk, and its _Group for _apply (issue #30: per call)
        spec = _CALL_SPECS.get(len(args)) or _call_spec(len(args))
        template, group = (_HOLE,) * len(args), _call_group(args, spec)
    else:
        leaves, spec = flatten(call)
        template, group = tuple(_holes(leaves)[1]), call
    key, new = _subgraph_key(tr, fn, spec, template)
    record = []
    try:
        out = _apply("invoke_subgraph", [], [group], [body], keys=(key,), record=record,
                     cached=tr.scratch.get(("result", key)))
    except BaseException:
        if new:  # a failed call leaves the cache as it was
            tr.scratch.pop(key, None)
        raise
    if record:
        tr.scratch[("result", key)] = record[0]
    return out


def nested_compile_region(fn):
    """Decorator: every call of fn goes through invoke_subgraph, so repeated
    calls with matching inputs share one traced subgraph.

    >>> @hop.nested_compile_region
    ... def block(a):
    ...     return (a * 2).sin()
    >>> gm = hop.trace(lambda a: block(block(a)), hop.ones(3))
    >>> [n.target for n in gm.graph.nodes if n.op == "call_hop"]
    ['invoke_subgraph', 'invoke_subgraph']
    >>> list(gm.subgraphs)
    ['subgraph_0']
    """
    _check_callable("nested_compile_region", "fn", fn)

    @functools.wraps(fn)
    def region(*args, **kwargs):
        return invoke_subgraph(fn, *args, **kwargs)

    return region


# ------------------------------------------------------------------ loops

def _carry(hop, carry):
    """A loop's carry as values, and whether it had an ndarray: Python
    numbers in it become 0-d tensors (int64, float64, bool: NumPy's
    defaults), in every mode, so a counter can be carried; an ndarray a
    hop.numpy array (_numpy_arg); everything else that is not a tensor is a
    constant the body must return unchanged."""
    from ._symfloat import SymFloat
    leaves, spec = flatten(carry)
    out = []
    arrays = False
    for x in leaves:
        # full() is a node while tracing: the carry starts from a constant of
        # the graph, not from a captured tensor.  A SymInt (SymFloat) is the
        # int (float) eager has there, so it starts a 0-d tensor as well: the
        # body compares it as eager's body does, and the loop returns a tensor.
        if isinstance(x, (_C.SymInt, SymFloat)):
            x = _C.full((), x, dtype=_C.int64 if isinstance(x, _C.SymInt) else _C.float64)
        elif isinstance(x, (bool, _np.bool_) if _np is not None else bool):
            x = _C.full((), bool(x), dtype=_C.bool)
        elif isinstance(x, numbers.Integral):
            x = _C.full((), int(x), dtype=_C.int64)
        elif isinstance(x, numbers.Real):
            x = _C.full((), float(x), dtype=_C.float64)
        elif _is_array(x):
            x = _numpy_arg(x)
            arrays = True
        out.append(x)
    return unflatten(out, spec), arrays


def _carry_value(v, like):
    """A body's result leaf v for the carry leaf `like`: a Python number, or
    the SymInt (SymFloat) a traced body has where eager's has one, becomes a
    0-d tensor of the carry's dtype, as the loop's init does (a body may
    return 0 for an int counter); anything else is v (the class checks it)."""
    from ._symfloat import SymFloat
    sym = isinstance(v, (_C.SymInt, SymFloat))
    if not isinstance(like, _C.Tensor) or isinstance(v, (_C.Tensor, complex)) or \
            not (sym or isinstance(v, numbers.Number)):
        return v
    dt = like.dtype
    if isinstance(v, bool) or (_np is not None and isinstance(v, _np.bool_)):
        ok = dt == _C.bool
    elif isinstance(v, (numbers.Integral, _C.SymInt)):
        ok = dt != _C.bool
    else:
        ok = dt.is_floating_point
    return _C.full((), v, dtype=dt) if ok else v


def _carry_like(out, carry):
    """out (a body's next carry) with its Python numbers as _carry_value
    makes them, leaf by leaf against carry (the body's current one)."""
    leaves, spec = flatten(out)
    ref, rspec = flatten(carry)
    if spec != rspec:
        return out  # the class names the difference
    return unflatten([_carry_value(v, r) for v, r in zip(leaves, ref)], spec)


def _as_pred_value(v):
    """A loop condition's result: a Python bool (or NumPy bool) as a bool
    scalar tensor, so `lambda *c: False` is a loop that never runs."""
    if isinstance(v, bool) or (_np is not None and isinstance(v, _np.bool_)):
        return _C.full((), bool(v), dtype=_C.bool)
    return v


def _as_result(value, which):
    leaves, spec = flatten(value)
    return _Result(spec, _holes(leaves)[1], which)


# What a loop's condition returns: one value (a bool scalar tensor; the class
# checks its dtype and shape).
_PRED = _Result(flatten(object())[1], [_HOLE], "condition")


def while_loop(cond_fn, body_fn, carried_inputs):
    """Runs body_fn while cond_fn is true and returns the final carry.

    carried_inputs is a tuple (or a pytree) of tensors; cond_fn(*carry)
    returns a bool scalar tensor (or a Python bool: a constant condition)
    and body_fn(*carry) returns the next carry, with the same structure,
    dtypes and shapes (checked in every mode, with an error naming the
    carry).  A Python number in the carry (or a SymInt or SymFloat: eager's
    int or float while tracing) is carried as a 0-d tensor, and a body may
    return one for it (converted to the carry's dtype).
    Traced, the loop runs in the plan: its condition is computed there and
    the carries are double-buffered.

    >>> x = hop.tensor([1.0, -2.0, 3.0])
    >>> hop.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2), (0, x))
    (hop.tensor(3), hop.tensor([  8., -16.,  24.]))
    """
    _check_callable("while_loop", "cond_fn", cond_fn)
    _check_callable("while_loop", "body_fn", body_fn)
    carry, arrays = _carry("while_loop", carried_inputs)
    splat = isinstance(carry, (tuple, list))
    call = (lambda s: (tuple(s[0]), {})) if splat else (lambda s: ((s[0],), {}))
    shape = _as_result(carry, "carry")

    def cond(*c):
        return _as_pred_value(cond_fn(*c))

    def body(*c):
        return _carry_like(body_fn(*c), c if splat else c[0])
    out = _apply("while_loop", [], [carry],
                 [_Body(cond, "cond_fn", call, _PRED), _Body(body, "body_fn", call, shape)],
                 result=shape)
    return _numpy_result(out) if arrays else out


def _bound(hop, name, v):
    if _np is not None and isinstance(v, _np.integer):
        return int(v)
    v = _as_tensor_arg(v)
    if isinstance(v, bool) or not isinstance(v, (int, _C.Tensor, _C.SymInt)):
        raise TypeError(f"hop.{hop}: {name} must be an int, a SymInt or an int scalar tensor, "
                        f"got {type(v).__name__}")
    return v


def fori_loop(lower, upper, body_fun, init_val):
    """JAX's fori_loop: val = body_fun(i, val) for i in range(lower, upper);
    returns the final val.

    The bounds are Python ints, SymInts or int scalar tensors (a tensor
    bound is read at run time: a compiled loop does not recompile when it
    changes).  i is an int (a SymInt when traced); val is a tensor or a
    pytree of them, which body_fun returns with the same structure, dtypes
    and shapes.  Traced with constant bounds it is a counted loop in the
    plan.  Under hop.vmap a tensor bound may be batched (a trip count per
    example): one loop over [min lower, max upper) runs, each example's
    carries updated only while lower <= i < upper for it (docs/VMAP.md).

    >>> xs = hop.arange(6, dtype=hop.float32).reshape(3, 2)
    >>> hop.fori_loop(0, 3, lambda i, acc: acc + xs[i] * i, hop.zeros(2))
    hop.tensor([10., 13.])
    """
    _check_callable("fori_loop", "body_fun", body_fun)
    lower, upper = _bound("fori_loop", "lower", lower), _bound("fori_loop", "upper", upper)
    carry, arrays = _carry("fori_loop", init_val)
    shape = _as_result(carry, "carry")

    def body(i, c):
        return _carry_like(body_fun(i, c), c)
    out = _apply("fori_loop", [lower, upper], [carry],
                 [_Body(body, "body_fun", lambda s: ((s[0],), {}), shape)],
                 made=1, result=shape)
    return _numpy_result(out) if arrays else out


def scan(f, init, xs, *, length=None, reverse=False, dim=0):
    """carry = init; for each slice x of xs along dim (last first with
    reverse), (carry, y) = f(carry, x); returns (final carry, ys), the ys
    stacked along dim.

    init and xs are tensors or pytrees of tensors (xs may be None with
    length giving the number of steps, as in jax.lax.scan).  f returns the
    carry with the structure, dtypes and shapes it got, and a y (a tensor,
    a pytree of tensors or None).  Traced, the plan runs the steps with the
    carries double-buffered and each y written straight into the stacked
    result.

    >>> xs = hop.arange(6, dtype=hop.float32).reshape(3, 2)
    >>> hop.scan(lambda c, x: (c + x, c * x), hop.zeros(2), xs)
    (hop.tensor([6., 9.]), hop.tensor([[ 0.,  0.],
                [ 0.,  3.],
                [ 8., 20.]]))
    """
    _check_callable("scan", "f", f)
    if xs is None and length is None:
        raise TypeError("hop.scan: xs is None, so length must be given")
    if length is not None and (isinstance(length, bool) or not isinstance(length, numbers.Integral)
                               or length < 0):
        raise TypeError(f"hop.scan: length must be an int >= 0, got {length!r}")
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"hop.scan: dim must be an int, got {type(dim).__name__}")
    carry, arrays = _carry("scan", init)
    cspec = flatten(carry)[1]
    xgroup, xleaves, xarrays = _numpy_group(() if xs is None else xs)
    arrays = arrays or xarrays
    if not builtins.all(isinstance(x, _C.Tensor) for x in xleaves):
        raise TypeError("hop.scan: xs must be a tensor, a pytree of tensors or None")
    if _C.tracing() is None:
        steps = length if length is not None else (
            xleaves[0].shape[dim] if xleaves and -xleaves[0].ndim <= dim < xleaves[0].ndim else 1)
        if steps == 0:
            # f never runs, but the ys' shapes are f's: trace it to learn
            # them, with the carry and xs as arguments (hop.numpy arrays
            # stay ones, and return as ndarrays).
            from ._trace import trace

            def empty_scan(c, x):
                return scan(f, c, x, length=length, reverse=reverse, dim=dim)
            args = (carry, None if xs is None else xgroup)
            return trace(empty_scan, *args)(*args)

    def step(c, x):
        out = f(c, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise _C.TraceError(f"hop.scan: f must return a pair (carry, y), got "
                                f"{type(out).__name__}")
        got = flatten(out[0])[1]
        if got != cspec:
            raise _C.TraceError(f"hop.scan: f returns a carry {got!r} but init is {cspec!r}")
        return (_carry_like(out[0], c), out[1])

    call = (lambda s: ((s[0], s[1]), {})) if xs is not None else (lambda s: ((s[0], None), {}))
    out = _apply("scan", [bool(reverse), int(dim), -1 if length is None else int(length)],
                 [carry, xgroup], [_Body(step, "f", call)])
    return _numpy_result(out) if arrays else out


def switch(index, branches, *operands):
    """JAX's switch: branches[clamp(index, 0, len(branches) - 1)](*operands).

    index is an int or an int scalar tensor (read at run time: a compiled
    switch does not recompile when it changes); branches is a sequence of
    callables that return the same structure, dtypes and ranks.  Under
    tracing every branch becomes a subgraph, all with one merged signature.

    >>> x = hop.tensor([1.0, -2.0, 3.0])
    >>> hop.switch(1, [lambda a: a + 1, lambda a: a * 2, lambda a: -a], x)
    hop.tensor([ 2., -4.,  6.])
    """
    if isinstance(branches, (str, bytes)) or not hasattr(branches, "__len__"):
        raise TypeError(f"hop.switch: branches must be a sequence of callables, got "
                        f"{type(branches).__name__}")
    branches = list(branches)
    if not branches:
        raise ValueError("hop.switch: branches is empty")
    for k, b in enumerate(branches):
        _check_callable("switch", f"branch {k}", b)
    if _np is not None and isinstance(index, (_np.integer, _np.bool_)):
        index = int(index)
    if isinstance(index, bool):
        index = int(index)
    index = _as_tensor_arg(index)
    if not isinstance(index, (int, _C.Tensor, _C.SymInt)):
        raise TypeError(f"hop.switch: index must be an int or an int scalar tensor, got "
                        f"{type(index).__name__}")
    return _branches("switch", (index,), tuple(operands), tuple(branches),
                     tuple(f"branch {k}" for k in range(len(branches))))


def associative_scan(combine_fn, xs, dim=0, reverse=False):
    """torch's associative_scan: the inclusive scan of xs along dim with an
    associative combine_fn, out[0] = x[0], out[i] = combine_fn(out[i-1], x[i])
    (from the end with reverse).

    xs is a tensor or a pytree of tensors with one size along dim;
    combine_fn(a, b) takes two elements (slices along dim, with xs'
    structure) and returns one.  Traced, the plan runs a work-efficient
    parallel scan (chunks on the thread pool), so combine_fn must really be
    associative.

    >>> hop.associative_scan(lambda a, b: a.maximum(b), hop.tensor([1.0, 3.0, 2.0, 5.0]))
    hop.tensor([1., 3., 3., 5.])
    """
    _check_callable("associative_scan", "combine_fn", combine_fn)
    xs, leaves, arrays = _numpy_group(xs)
    if not leaves or not builtins.all(isinstance(x, _C.Tensor) for x in leaves):
        raise TypeError("hop.associative_scan: xs must be a tensor or a pytree of tensors")
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"hop.associative_scan: dim must be an int, got {type(dim).__name__}")
    shape = _Result(flatten(xs)[1], [_HOLE] * len(leaves), "element")
    out = _apply("associative_scan", [int(dim), bool(reverse)], [xs, xs],
                 [_Body(combine_fn, "combine_fn", lambda s: ((s[0], s[1]), {}), shape)],
                 result=shape)
    return _numpy_result(out) if arrays else out


# ------------------------------------------------ any registered HOP: hop.ops

_KIND_TEXT = {"int": "int", "float": "float", "bool": "bool", "dtype": "hop.dtype",
              "value": "a tensor, a SymInt, a bool or an int", "body": "a callable",
              "bodies": "a sequence of callables",
              "values": "a tensor or a pytree of tensors",
              "carry": "a tensor or a pytree of tensors", "varargs": "tensors"}


class HopFunction:
    """A registered HOP, callable from Python: `hop.ops.<name>(...)`.

    Arguments follow the class's signature (`inspect.signature` shows it):
    ints, floats, bools and dtypes as Python values, a value as a tensor,
    SymInt or bool, each body as a callable, a group of operands as a tensor
    or a pytree of tensors, the variadic group as the remaining positional
    arguments.  A body is called with one argument per group (a variadic
    group's items spread) and returns a tensor or a pytree of tensors; the
    HOP's result has that structure.  Eager outside a trace, traced inside
    hop.trace / hop.compile.

    >>> hop.ops.map
    <hop.ops.map(f: 'a callable', xs: 'a tensor or a pytree of tensors', *args: 'tensors')>
    >>> hop.ops.map(lambda r: r * 2, hop.tensor([[1.0], [2.0]]))
    hop.tensor([[2.],
                [4.]])
    """

    def __init__(self, name):
        params, doc, self._made = _C.hop_signature(name)
        self.__name__ = self.__qualname__ = name
        self._params = params
        self.__doc__ = doc or f"The HOP {name}."
        kinds = {inspect.Parameter.POSITIONAL_OR_KEYWORD: None}
        sig = []
        for pname, kind in params:
            pk = (inspect.Parameter.VAR_POSITIONAL if kind == "varargs"
                  else inspect.Parameter.POSITIONAL_OR_KEYWORD)
            sig.append(inspect.Parameter(pname, pk, annotation=_KIND_TEXT[kind]))
        del kinds
        self.__signature__ = inspect.Signature(sig)

    def __repr__(self):
        return f"<hop.ops.{self.__name__}{self.__signature__}>"

    def __call__(self, *args, **kwargs):
        """Calls the HOP: bound to its signature, eagerly or into the trace."""
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"hop.ops.{self.__name__}: {e}") from None
        leads, groups, kinds, bodies = [], [], [], []
        for pname, kind in self._params:
            v = bound.arguments.get(pname, ())
            if kind == "body":
                _check_callable(f"ops.{self.__name__}", pname, v)
                bodies.append(v)
            elif kind == "bodies":
                for k, b in enumerate(v):
                    _check_callable(f"ops.{self.__name__}", f"{pname}[{k}]", b)
                    bodies.append(b)
            elif kind in ("values", "carry", "varargs"):
                groups.append(tuple(v) if kind == "varargs" else v)
                kinds.append(kind)
            else:
                leads.append(v)
        call = _default_call(kinds)
        return _apply(self.__name__, leads, groups, [_Body(b, f"{self.__name__} body", call)
                                                     for b in bodies],
                      hop=f"ops.{self.__name__}", made=self._made,
                      constants="a constant is not a value of the graph")


class _Ops(types.ModuleType):
    """hop.ops: every registered HOP by name (built-ins and loaded ones)."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in _C.list_hops():
            raise AttributeError(f"hop.ops has no HOP named {name!r}; registered: "
                                 f"{', '.join(_C.list_hops())} (hop.load_library adds more)")
        return HopFunction(name)

    def __dir__(self):
        return sorted(set(_C.list_hops()) | set(super().__dir__()))


ops = _Ops("hop.ops", "Every registered HOP, callable as hop.ops.<name>(...).")


def load_library(path):
    """Loads a shared library of HOPs written in C, checks its descriptor
    (HOP_LIBRARY(init) in hop/prim_hop.h: built for this hop's ABI version)
    and runs its init, which registers them; returns their names, each then
    callable as hop.ops.<name>.  Loading the same library again returns the
    same names.  hop.Error subclasses for a missing file, a library without
    a descriptor or built for another ABI version (hop.InvalidError naming
    both versions), or an init that fails (whatever the init registered is
    unregistered again before the library is unloaded).  A saved program (hop.save) that
    calls one of its HOPs loads only once the library is loaded.  With the
    example library of the build tree, hop.load_library(
    "build/dev/examples/libhop_repeat.so") returns ['repeat'].

    >>> hop.load_library("/no/such/lib.so")
    Traceback (most recent call last):
        ...
    hop.NotFoundError: load_library: cannot load /no/such/lib.so: /no/such/lib.so: cannot open shared object file: No such file or directory
    """
    import os
    path = os.fspath(path)
    if (b"\0" if isinstance(path, bytes) else "\0") in path:
        raise _C.NotFoundError(f"load_library: cannot load {path!r}: the path has a NUL character")
    return _C.load_library(path)
