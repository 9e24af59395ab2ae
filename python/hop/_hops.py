"""The four HOPs from Python: cond, map, wrap, invoke_subgraph.

Eagerly they run their bodies directly.  While a hop.trace is active they
become nested graphs: each body is traced once in its own subtracer, and
whatever it closes over (outer traced values, concrete tensors, globals) is
lifted into explicit inputs by the C tracer.  Bodies may take and return
tensors, SymInts and nested tuples/lists/dicts of them (plus plain Python
values, which are constants of the trace).  wrap and invoke_subgraph pass
keyword arguments to their bodies; a keyword's tensors are inputs like a
positional argument's.
"""

import builtins
import functools
import numbers
import sys
import types

from . import _C
from ._purity import code_names, reads, run_pure
from ._pytree import flatten, unflatten
from ._trace import _name_hints

try:
    import numpy as _np
except ImportError:  # NumPy is optional at run time
    _np = None

__all__ = ["cond", "map", "wrap", "invoke_subgraph", "nested_compile_region"]


def _is_traced(x):
    return isinstance(x, _C.SymInt) or _C._is_proxy(x)


def _fill(traced, template, spec):
    it = iter(traced)
    leaves = []
    for t in template:
        leaves.append(next(it) if t is _HOLE else t)
    return unflatten(leaves, spec)


_HOLE = object()


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


class _Result:
    """What a traced body returned: its structure and its constant leaves."""

    __slots__ = ("spec", "template")

    def __init__(self, spec, template):
        self.spec = spec
        self.template = template

    def describe(self):
        return repr(self.spec)


def _body(hop, which, fn, make_args, record, check=None):
    """A C-callable body: (*traced inputs) -> traced output leaves.
    make_args(ins) gives the body's positional arguments, or (args, kwargs)
    when it returns a _Call."""
    def body(*ins):
        tr = _C.tracing()
        if tr is not None:
            _name_hints(tr, fn)
        call = make_args(ins)
        if isinstance(call, _Call):
            out = run_pure(hop, which, fn, call.args, call.kwargs)
        else:
            out = run_pure(hop, which, fn, call)
        leaves, spec = flatten(out)
        traced, template = _holes(leaves)
        _check_no_escape(hop, which, template)
        result = _Result(spec, template)
        if check is not None:
            check(result)
        record.append(result)
        return traced
    return body


class _Call:
    """Positional and keyword arguments for a body."""

    __slots__ = ("args", "kwargs")

    def __init__(self, args, kwargs):
        self.args = args
        self.kwargs = kwargs


def _flatten_call(args, kwargs):
    """Leaves and spec of a call's arguments.  Keywords are sorted by name, so
    f(x, a=1, b=y) and f(x, b=y, a=1) are the same call."""
    return flatten((tuple(args), {k: kwargs[k] for k in sorted(kwargs)}))


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
    Python pred picks its branch while tracing.
    """
    _check_callable("cond", "true_fn", true_fn)
    _check_callable("cond", "false_fn", false_fn)
    if not isinstance(operands, (tuple, list)):
        raise TypeError(f"hop.cond: operands must be a tuple or list, got "
                        f"{type(operands).__name__}")
    leaves, spec = flatten(tuple(operands))
    tr = _tracing("cond", leaves + [pred])
    pred = _pred(pred, tr is not None)
    if tr is None:
        return (true_fn if pred else false_fn)(*operands)

    traced, template = _holes(leaves)
    results = []

    def make_args(ins):
        return _fill(ins, template, spec)

    def same_as_true(result):
        if results and (_array_agnostic(results[0].spec) != _array_agnostic(result.spec) or
                        results[0].template != result.template):
            raise _C.TraceError(
                f"hop.cond: the branches return different structures: the true branch returns "
                f"{results[0].describe()} {_constants(results[0])}but the false branch returns "
                f"{result.describe()} {_constants(result)}")

    outs = tr.cond(pred, _body("cond", "true branch", true_fn, make_args, results),
                   _body("cond", "false branch", false_fn, make_args, results, same_as_true),
                   traced)
    spec = results[0].spec if len(results) == 1 else _merge_array_kinds(results[0].spec,
                                                                       results[1].spec)
    return _fill(outs, results[0].template, spec)


def _array_agnostic(spec):
    """spec with hop.numpy arrays as plain tensors: branches may return a
    NumPy array in one and a tensor in the other (as eagerly)."""
    hnp = sys.modules.get("hop.numpy")
    return spec if hnp is None else hnp._array_agnostic_spec(spec)


def _merge_array_kinds(a, b):
    hnp = sys.modules.get("hop.numpy")
    return a if hnp is None else hnp._merge_array_specs(a, b)


def _pred(pred, tracing):
    """pred as the C cond takes it: a bool decided now, a bool tensor (a
    proxy, or a concrete tensor the tracer lifts to an input), or a SymInt
    (the tracer compares it with 0).  Eagerly always a bool."""
    if isinstance(pred, bool):
        return pred
    get = getattr(type(pred), "__hop_tensor__", None)
    if get is not None:  # a hop.numpy array: its tensor
        pred = get(pred)
    if _np is not None and isinstance(pred, _np.ndarray):
        pred = _C.asarray(pred)  # zero-copy: a traced cond reads it at run time
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
        return pred
    if isinstance(pred, numbers.Number) and not isinstance(pred, complex) or \
            (_np is not None and isinstance(pred, _np.bool_)):
        return bool(pred)
    raise TypeError(f"hop.cond: pred must be a bool, a number or a tensor with one element, "
                    f"got {type(pred).__name__}")


def _constants(result):
    consts = [t for t in result.template if t is not _HOLE]
    return f"(constants {consts}) " if consts else ""


# -------------------------------------------------------------------- map

def map(fn, xs, *args):
    """Applies fn(x, *args) to each slice x of xs along dim 0 and stacks the
    results.  xs is a tensor or a tuple/list/dict of tensors with the same
    leading size."""
    _check_callable("map", "fn", fn)
    xleaves, xspec = flatten(xs)
    if not xleaves or not builtins.all(isinstance(x, _C.Tensor) for x in xleaves):
        raise TypeError("hop.map: xs must be a tensor or a tuple/list/dict of tensors")
    aleaves, aspec = flatten(args)
    tr = _tracing("map", xleaves + aleaves)
    if tr is None:
        return _map_eager(fn, xleaves, xspec, args)

    traced, template = _holes(aleaves)
    nx = len(xleaves)
    results = []

    def make_args(ins):
        return (unflatten(ins[:nx], xspec), *_fill(ins[nx:], template, aspec))

    def tensors_only(result):
        if builtins.any(t is not _HOLE for t in result.template):
            raise _C.TraceError("hop.map: the map body must return tensors (a constant cannot "
                                "be stacked)")

    outs = tr.map(_body("map", "map body", fn, make_args, results, tensors_only), xleaves,
                  traced)
    return unflatten(outs, results[0].spec)


def _map_eager(fn, xleaves, xspec, args):
    n = xleaves[0].shape[0] if xleaves[0].ndim else None
    for i, x in enumerate(xleaves):
        if x.ndim < 1:
            raise _C.ShapeError(f"hop.map: xs {i} has shape {tuple(x.shape)}; map needs a "
                                f"tensor of rank >= 1")
        if x.shape[0] != n:
            raise _C.ShapeError(f"hop.map: xs {i} has {x.shape[0]} rows but xs 0 has {n}; every "
                                f"xs needs the same leading size")
    if n == 0:
        raise _C.ShapeError(f"hop.map: xs 0 has shape {tuple(xleaves[0].shape)}: zero-length "
                            f"along dim 0, so there is nothing to map over")
    outs = [fn(unflatten([x[i] for x in xleaves], xspec), *args) for i in range(n)]
    per_row = [flatten(o) for o in outs]
    spec = per_row[0][1]
    for i, (leaves, s) in enumerate(per_row):
        if s != spec:
            raise _C.TraceError(f"hop.map: the body returned different structures for "
                                f"different rows: {spec!r} for row 0 but {s!r} for row {i}")
        if not builtins.all(isinstance(v, _C.Tensor) for v in leaves):
            raise _C.TraceError("hop.map: the map body must return tensors (a constant cannot "
                                "be stacked)")
    # As traced: every row must give each output the same dtype and shape.
    for k, first in enumerate(per_row[0][0]):
        for i, (leaves, _) in enumerate(per_row):
            v = leaves[k]
            if v.dtype != first.dtype or tuple(v.shape) != tuple(first.shape):
                raise _C.ShapeError(
                    f"hop.map: output {k} of the body is {_meta_text(first)} for row 0 but "
                    f"{_meta_text(v)} for row {i}; every row must give the same shape and dtype")
    stacked = [_C.stack([row[0][k] for row in per_row], 0) for k in range(len(per_row[0][0]))]
    return unflatten(stacked, spec)


_SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "uint8": "u8",
          "int16": "i16", "int32": "i32", "int64": "i64", "uint64": "u64", "bool": "bool"}


def _meta_text(t):
    return f"{_SHORT.get(t.dtype.name, t.dtype.name)}{list(t.shape)}"


# ------------------------------------------------------------------- wrap

def wrap(fn, /, *args, **kwargs):
    """fn(*args, **kwargs); under tracing fn becomes a subgraph wrap_body_N
    with no free variables."""
    _check_callable("wrap", "fn", fn)
    leaves, spec = _flatten_call(args, kwargs)
    tr = _tracing("wrap", leaves)
    if tr is None:
        return fn(*args, **kwargs)
    traced, template = _holes(leaves)
    results = []
    outs = tr.wrap(_body("wrap", "wrap body", fn, lambda ins: _fill_call(ins, template, spec),
                         results), traced)
    return _fill(outs, results[0].template, results[0].spec)


def _fill_call(traced, template, spec):
    args, kwargs = _fill(traced, template, spec)
    return _Call(args, kwargs)


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
    if t in (tuple, list):
        return (t, tuple(_value_key(x, budget, seen, names) for x in v))
    if t is dict:
        return (t, tuple((_value_key(k, budget, seen, names), _value_key(x, budget, seen, names))
                         for k, x in v.items()))
    if t in (set, frozenset):
        return (t, frozenset(_value_key(x, budget, seen, names) for x in v))
    if _np is not None and isinstance(v, _np.generic):
        return (t, _value_key(v.item(), budget, seen))
    if isinstance(v, types.FunctionType):
        if id(v) in seen:
            return _Id(v)
        seen.add(id(v))
        return (_Id(v), _reads_key(v, budget, seen))
    if isinstance(v, types.MethodType):
        code = getattr(v.__func__, "__code__", None)
        own = frozenset(code_names(code, set())) if code is not None else frozenset()
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


def _reads_key(fn, budget, seen):
    """The key of what fn reads from outside: its closure cells and the
    globals its code names (and, through them, the same for the functions it
    calls and the attributes its code names)."""
    names = frozenset(code_names(fn.__code__, set()))
    return tuple((name, _value_key(value, budget, seen, names)) for name, value in reads(fn))


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
        new = k not in tr.scratch
        return tr.scratch.setdefault(k, k), new
    except (_OverBudget, TypeError):  # too much to compare, or unhashable: never share
        return object(), False


def invoke_subgraph(fn, /, *args, **kwargs):
    """fn(*args, **kwargs); under tracing, calls of the same fn with matching
    argument metadata, constants and closed-over values share one
    subgraph_N, traced once."""
    _check_callable("invoke_subgraph", "fn", fn)
    leaves, spec = _flatten_call(args, kwargs)
    tr = _tracing("invoke_subgraph", leaves)
    if tr is None:
        return fn(*args, **kwargs)
    traced, template = _holes(leaves)
    results = []
    key, new = _subgraph_key(tr, fn, spec, tuple(template))
    body = _body("invoke_subgraph", "invoke_subgraph body", fn,
                 lambda ins: _fill_call(ins, template, spec), results)
    try:
        outs = tr.invoke_subgraph(body, key, traced)
    except BaseException:
        if new:  # a failed call leaves the cache as it was
            tr.scratch.pop(key, None)
        raise
    if results:
        tr.scratch[("result", key)] = results[0]
    result = tr.scratch[("result", key)]
    return _fill(outs, result.template, result.spec)


def nested_compile_region(fn):
    """Decorator: every call of fn goes through invoke_subgraph."""
    _check_callable("nested_compile_region", "fn", fn)

    @functools.wraps(fn)
    def region(*args, **kwargs):
        return invoke_subgraph(fn, *args, **kwargs)

    return region
