"""The four HOPs from Python: cond, map, wrap, invoke_subgraph.

Eagerly they run their bodies directly.  While a hop.trace is active they
become nested graphs: each body is traced once in its own subtracer, and
whatever it closes over (outer traced values, concrete tensors, globals) is
lifted into explicit inputs by the C tracer.  Bodies may take and return
tensors, SymInts and nested tuples/lists/dicts of them (plus plain Python
values, which are constants of the trace).
"""

import builtins
import functools

from . import _C
from ._purity import run_pure
from ._pytree import flatten, unflatten
from ._trace import _name_hints

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
    """A C-callable body: (*traced inputs) -> traced output leaves."""
    def body(*ins):
        tr = _C.tracing()
        if tr is not None:
            _name_hints(tr, fn)
        out = run_pure(hop, which, fn, make_args(ins))
        leaves, spec = flatten(out)
        traced, template = _holes(leaves)
        result = _Result(spec, template)
        if check is not None:
            check(result)
        record.append(result)
        return traced
    return body


# ------------------------------------------------------------------- cond

def cond(pred, true_fn, false_fn, operands=()):
    """Returns true_fn(*operands) if pred else false_fn(*operands).

    pred is a bool, a bool scalar tensor, or (while tracing) a traced bool
    scalar; under tracing both branches become subgraphs cond_true_N and
    cond_false_N with one merged signature.
    """
    _check_callable("cond", "true_fn", true_fn)
    _check_callable("cond", "false_fn", false_fn)
    if not isinstance(operands, (tuple, list)):
        raise TypeError(f"hop.cond: operands must be a tuple or list, got "
                        f"{type(operands).__name__}")
    leaves, spec = flatten(tuple(operands))
    tr = _tracing("cond", leaves + [pred])
    if tr is None:
        if isinstance(pred, _C.Tensor):
            if pred.numel() != 1:
                raise _C.ShapeError(f"hop.cond: pred must have one element, got shape "
                                    f"{tuple(pred.shape)}")
            pred = bool(pred.item())
        elif not isinstance(pred, (bool, int)):
            raise TypeError(f"hop.cond: pred must be a bool or a bool tensor, got "
                            f"{type(pred).__name__}")
        return (true_fn if pred else false_fn)(*operands)

    traced, template = _holes(leaves)
    results = []

    def make_args(ins):
        return _fill(ins, template, spec)

    def same_as_true(result):
        if results and (results[0].spec != result.spec or results[0].template != result.template):
            raise _C.TraceError(
                f"hop.cond: the branches return different structures: the true branch returns "
                f"{results[0].describe()} {_constants(results[0])}but the false branch returns "
                f"{result.describe()} {_constants(result)}")

    outs = tr.cond(pred, _body("cond", "true branch", true_fn, make_args, results),
                   _body("cond", "false branch", false_fn, make_args, results, same_as_true),
                   traced)
    return _fill(outs, results[0].template, results[0].spec)


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


_SHORT = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64", "bool": "bool"}


def _meta_text(t):
    return f"{_SHORT.get(t.dtype.name, t.dtype.name)}{list(t.shape)}"


# ------------------------------------------------------------------- wrap

def wrap(fn, *args):
    """fn(*args); under tracing fn becomes a subgraph wrap_body_N with no free
    variables."""
    _check_callable("wrap", "fn", fn)
    leaves, spec = flatten(args)
    tr = _tracing("wrap", leaves)
    if tr is None:
        return fn(*args)
    traced, template = _holes(leaves)
    results = []
    outs = tr.wrap(_body("wrap", "wrap body", fn,
                         lambda ins: _fill(ins, template, spec), results), traced)
    return _fill(outs, results[0].template, results[0].spec)


# -------------------------------------------------------- invoke_subgraph

def _subgraph_key(tr, fn, spec, template):
    """One object per (function, argument structure, constants) and trace:
    the C cache reuses a subgraph only for the same key.  Also says whether
    this call added it (a failed call takes it out again)."""
    consts = tuple(t for t in template if t is not _HOLE)
    k = ("invoke_subgraph", fn, spec, consts)
    try:
        new = k not in tr.scratch
        return tr.scratch.setdefault(k, k), new
    except TypeError:  # an unhashable constant: never share
        return object(), False


def invoke_subgraph(fn, *args):
    """fn(*args); under tracing, calls of the same fn with matching argument
    metadata share one subgraph_N, traced once."""
    _check_callable("invoke_subgraph", "fn", fn)
    leaves, spec = flatten(args)
    tr = _tracing("invoke_subgraph", leaves)
    if tr is None:
        return fn(*args)
    traced, template = _holes(leaves)
    results = []
    key, new = _subgraph_key(tr, fn, spec, tuple(template))
    body = _body("invoke_subgraph", "invoke_subgraph body", fn,
                 lambda ins: _fill(ins, template, spec), results)
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
    def region(*args):
        return invoke_subgraph(fn, *args)

    return region
