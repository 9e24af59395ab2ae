"""hop.grad, hop.value_and_grad, hop.vjp and hop.jvp: JAX's API, thin over
the C `vjp` and `jvp` HOPs (hop/vjp.c, hop/jvp.c), which trace the function
into a body and replace it by its transformed graph (hop/autodiff.h:
hop_vjp_graph, hop_jvp_graph).

Under hop.trace / hop.compile a call records one vjp/jvp node whose body is
the backward (`vjp_body_0_bwd`) or tangent (`jvp_body_0_jvp`) graph, so the
transformations nest (grad of grad) and compose with every HOP.  Outside a
trace a call runs through a hop.compile of the same traced call, kept per
transformed function: trace, differentiate, run, with the plan cached.

Tensor leaves of the arguments are the HOP's operands (fresh inputs of f: a
tensor f also closes over stays a constant, as in JAX); other leaves are
constants of the trace.  Differentiated arguments must hold float or
complex tensors (a Python float becomes a 0-d f32 tensor, as JAX's weak
float does); a complex argument's gradient is JAX's (docs/AUTODIFF.md).
"""

import functools

from . import _C, _hops
from ._purity import body_env_arrays, run_pure
from ._pytree import flatten, unflatten
from ._trace import _name_hints

__all__ = ["grad", "value_and_grad", "vjp", "jvp"]


def _is_tensor(x):
    return isinstance(x, _C.Tensor)


def _argnums(fn, argnums, nargs):
    single = isinstance(argnums, int) and not isinstance(argnums, bool)
    nums = (argnums,) if single else argnums
    if not isinstance(nums, (tuple, list)) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in nums):
        raise TypeError(f"hop.{fn}: argnums must be an int or a tuple of ints, got {argnums!r}")
    out = []
    for i in nums:
        if not -nargs <= i < nargs:
            raise ValueError(f"hop.{fn}: argnums {i} is out of range for {nargs} positional "
                             f"argument{'s' if nargs != 1 else ''}")
        if i % nargs in out:
            raise ValueError(f"hop.{fn}: argnums {argnums!r} names argument {i % nargs} twice")
        out.append(i % nargs)
    return single, tuple(out)


def _describe(x):
    """A differentiated leaf in a message: a tensor as every message spells
    it (`i64[2]`, the C meta printer's text), anything else by its type."""
    return _C._meta_text(x) if _is_tensor(x) else type(x).__name__


def _leaves_of(fn, args, nums):
    """Flattens the positional args: (operands, per-arg (spec, slots)) where a
    slot is an operand index or ('const', value); a differentiated float
    leaf becomes a tensor."""
    operands, parts, wrt = [], [], []
    for i, a in enumerate(args):
        leaves, spec = flatten(a)
        slots = []
        for j, v in enumerate(leaves):
            if i in nums:
                if isinstance(v, float):
                    v = _C.full((), v)
                if not _is_tensor(v) or not (v.dtype.is_floating_point or
                                             v.dtype.name.startswith("complex")):
                    raise TypeError(
                        f"hop.{fn}: argument {i} (leaf {j}) is {_describe(v)}; gradients are "
                        f"taken with respect to float and complex tensors only")
            if _is_tensor(v):
                wrt.append(i in nums)
                slots.append(len(operands))
                operands.append(v)
            else:
                slots.append(("const", v))
        parts.append((spec, slots))
    return operands, parts, wrt


def _rebuild(parts, ins):
    return tuple(unflatten([ins[s] if isinstance(s, int) else s[1] for s in slots], spec)
                 for spec, slots in parts)


def _body(fn_name, f, parts, kwargs, has_aux, record):
    tr = _C.tracing()
    body_env_arrays(tr, [f])  # (an environment ndarray f reads: guarded on its contents)

    def body(*ins):
        _name_hints(tr, f)
        out = run_pure(fn_name, "function", f, _rebuild(parts, ins), kwargs)
        if has_aux:
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(f"hop.{fn_name}: with has_aux=True the function must return a "
                                f"pair (output, aux), got {type(out).__name__}")
            out, aux = out
        else:
            aux = None
        leaves, spec = flatten(out)
        aux_leaves, aux_spec = flatten(aux)
        for v in leaves + aux_leaves:
            if not _is_tensor(v):
                raise TypeError(f"hop.{fn_name}: the function must return tensors, got "
                                f"{type(v).__name__}")
        record.append((spec, len(leaves), aux_spec, len(aux_leaves)))
        return leaves + aux_leaves
    return body


class _Transformed:
    """A transformed function: traced into a vjp/jvp node under a trace, else
    run through a hop.compile of that traced call (its guards see what f
    reads, so rebinding a tensor f closes over is seen, as eagerly)."""

    def __init__(self, f, name, traced, spec):
        if not callable(f):
            raise TypeError(f"hop.{name}: f must be callable, got {type(f).__name__}")
        self._traced, self._spec = traced, spec
        self._compiled = None
        functools.update_wrapper(self, f, updated=())

    def __call__(self, *args, **kwargs):
        if _C.tracing() is not None:
            return self._traced(self._spec, args, kwargs)
        if self._compiled is None:
            self._compiled = _compiled(self._traced, self._spec)
        # (keyword arguments are the compiled call's own: its cache guards
        # their names and values as a positional argument's)
        return self._compiled(*args, **kwargs)


def _compiled(traced, spec):
    from ._compile import compile as _compile
    f, rest = spec[0], spec[1:]

    def run(*args, **kwargs):  # f is a cell of run: the guards walk what it reads
        return traced((f,) + rest, args, kwargs)
    # What the trace warns about is named by the user's function, not this
    # wrapper's (hop.vmap(f) warned "_compiled.<locals>.run reads ...").
    run.__name__ = getattr(f, "__name__", run.__name__)
    run.__qualname__ = getattr(f, "__qualname__", run.__qualname__)
    run._hop_no_eager = True  # (outside a trace its HOP has no graph: never run eagerly)
    # (what the guards walk for run: f itself, so a bound method's self and
    # a callable object are roots as for hop.compile(f), _guards.scan)
    run._hop_body = f
    return _compile(run, recompile_limit=1 << 30)


def _vjp_node(fn_name, f, args, kwargs, nums, has_aux, cts=None):
    operands, parts, wrt = _leaves_of(fn_name, args, nums)
    mask = 0
    for k, w in enumerate(wrt):
        if w:
            mask |= 1 << k
    if len(operands) > 62:
        raise ValueError(f"hop.{fn_name}: at most 62 tensor arguments, got {len(operands)}")
    record = []
    outs = _C.call_hop("vjp", (mask,), (tuple(operands), tuple(cts or ())),
                       (_body(fn_name, f, parts, kwargs, has_aux, record),), None)
    spec, nout, aux_spec, naux = record[0]
    value = unflatten(outs[:nout], spec)
    aux = unflatten(outs[nout:nout + naux], aux_spec)
    # one gradient per differentiated operand, in the operands' order (the
    # arguments' positions), given back in argnums' order
    grads = list(outs[nout + naux:])
    at = {}
    for k, w in enumerate(wrt):
        if w:
            at[k] = len(at)
    per_arg = [unflatten([grads[at[s]] for s in parts[i][1]], parts[i][0]) for i in nums]
    return value, aux, per_arg


def value_and_grad(f, argnums=0, has_aux=False):
    """value_and_grad(f, argnums=0, has_aux=False) -> a function returning
    (f(*args), the gradient), or ((value, aux), gradient) with has_aux.
    f must return a float scalar (shape ()).  argnums: an int (the gradient
    is one pytree like that argument) or a tuple of ints (a tuple of them).

    >>> vg = hop.value_and_grad(lambda x: (x * x).sum())
    >>> vg(hop.tensor([1.0, 2.0]))
    (hop.tensor(5.), hop.tensor([2., 4.]))
    """
    return _Transformed(f, "value_and_grad", _value_and_grad, (f, argnums, has_aux))


def _gradient(who, spec, args, kwargs):
    """(value, aux, gradient) of grad and value_and_grad: the gradient one
    pytree for an int argnums, a tuple of them for a tuple."""
    f, argnums, has_aux = spec
    single, nums = _argnums(who, argnums, len(args))
    value, aux, per_arg = _vjp_node(who, f, args, kwargs, nums, has_aux)
    return value, aux, per_arg[0] if single else tuple(per_arg)


def _value_and_grad(spec, args, kwargs):
    value, aux, g = _gradient("value_and_grad", spec, args, kwargs)
    return ((value, aux) if spec[2] else value), g


def grad(f, argnums=0, has_aux=False):
    """grad(f, argnums=0, has_aux=False) -> a function returning the
    gradient of f (a float scalar) with respect to argument argnums (an
    int, or a tuple of ints for a tuple of gradients); with has_aux f
    returns (output, aux) and the function (gradient, aux).  Works eagerly,
    under hop.trace / hop.compile, through every differentiable HOP and
    nested (grad of grad).

    >>> hop.grad(lambda x: (x * x).sum())(hop.tensor([1.0, 2.0]))
    hop.tensor([2., 4.])
    >>> hop.grad(lambda x: x.sum())(hop.tensor([1, 2]))
    Traceback (most recent call last):
        ...
    TypeError: hop.grad: argument 0 (leaf 0) is i64[2]; gradients are taken with respect to float and complex tensors only
    """
    return _Transformed(f, "grad", _grad, (f, argnums, has_aux))


def _grad(spec, args, kwargs):
    _, aux, g = _gradient("grad", spec, args, kwargs)
    return (g, aux) if spec[2] else g


def vjp(f, *primals):
    """vjp(f, *primals) -> (f(*primals), vjp_fn); vjp_fn(ct) (ct shaped like
    the output) returns a tuple with the cotangent of each primal.

    >>> out, vjp_fn = hop.vjp(lambda x: x * 3.0, hop.tensor([1.0, 2.0]))
    >>> vjp_fn(hop.tensor([1.0, 10.0]))
    (hop.tensor([ 3., 30.]),)
    """
    if not callable(f):
        raise TypeError(f"hop.vjp: f must be callable, got {type(f).__name__}")
    # f(*primals) as a transform's result: fresh, never sharing memory with
    # a primal, a tensor f closes over or another output (f returning its
    # argument gave the argument itself), eagerly and traced alike
    # (docs/ARCHITECTURE.md, "A HOP's results are fresh").  Eagerly a
    # hop.wrap, which copies only a result that shares; traced, a clone of
    # each output (a wrap node would make the primals HOP operands, which a
    # later traced setitem into one refuses).
    if _C.tracing() is None:
        out = _hops.wrap(f, *primals)
    else:
        leaves, spec = flatten(f(*primals))
        out = unflatten([v.clone() if _is_tensor(v) else v for v in leaves], spec)
    out_leaves, out_spec = flatten(out)
    nums = tuple(range(len(primals)))
    _leaves_of("vjp", primals, nums)  # the primals' errors now, as JAX raises them
    # vjp_fn differentiates at the primals as they are now: a copy of each
    # tensor leaf, so that writing into a primal afterwards (x[0] = 5, a
    # hop.numpy array's setitem) does not move the point it linearises at
    # (JAX's arrays cannot change; a silently different gradient here).
    leaves, spec = flatten(primals)
    primals = unflatten([v.clone() if _is_tensor(v) else v for v in leaves], spec)

    return out, _Transformed(f, "vjp", _vjp_fn, (f, primals, out_spec))


def _vjp_fn(spec, args, kwargs):
    f, primals, out_spec = spec
    ct_leaves, ct_spec = flatten(args[0] if len(args) == 1 else args)
    bad = [c for c in ct_leaves if not _is_tensor(c)]
    if (bad or ct_spec != out_spec) and repr(ct_spec) == repr(out_spec):
        # (the same shape of tree, another kind of leaf: a number, a NumPy
        # array where the output has a hop.Tensor; the structures' texts
        # read alike)
        what = f"a {type(bad[0]).__qualname__}" if bad else "a NumPy or hop.numpy array" \
            if "Numpy" in getattr(ct_spec.cls, "__name__", "") else "of another kind"
        raise TypeError(f"hop.vjp: a cotangent is {what} where the output has a hop.Tensor; "
                        f"pass hop.tensor(...) of it")
    if ct_spec != out_spec:
        raise ValueError(f"hop.vjp: the cotangent's structure {ct_spec!r} differs from the "
                         f"output's {out_spec!r}")
    if bad:
        raise TypeError("hop.vjp: cotangents must be tensors")
    nums = tuple(range(len(primals)))
    _, _, per_arg = _vjp_node("vjp", f, primals, {}, nums, False, ct_leaves)
    return tuple(per_arg)


def jvp(f, primals, tangents):
    """jvp(f, primals, tangents) -> (f(*primals), the directional derivative
    along tangents); primals and tangents are tuples of the same structure,
    float tensors.

    >>> hop.jvp(lambda x: x * x, (hop.tensor([1.0, 2.0]),), (hop.tensor([1.0, 0.5]),))
    (hop.tensor([1., 4.]), hop.tensor([2., 2.]))
    """
    if not callable(f):
        raise TypeError(f"hop.jvp: f must be callable, got {type(f).__name__}")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("hop.jvp: primals and tangents must be tuples")
    if len(primals) != len(tangents):
        raise ValueError(f"hop.jvp: {len(tangents)} tangents for {len(primals)} primals")

    return _Transformed(f, "jvp", _jvp, (f,))(tuple(primals), tuple(tangents))


def _jvp(spec, args, kwargs):
    f, = spec
    prims, tans = args
    nums = tuple(range(len(prims)))
    operands, parts, _ = _leaves_of("jvp", prims, nums)
    t_leaves, t_spec = flatten(tuple(tans))
    if t_spec != flatten(tuple(prims))[1]:
        raise ValueError("hop.jvp: tangents must have the structure of primals")
    t_leaves = [_C.full((), t) if isinstance(t, float) else t for t in t_leaves]
    record = []
    outs = _C.call_hop("jvp", (), (tuple(operands), tuple(t_leaves)),
                       (_body("jvp", f, parts, {}, False, record),), None)
    spec, nout, _, _ = record[0]
    return unflatten(outs[:nout], spec), unflatten(outs[nout:2 * nout], spec)
