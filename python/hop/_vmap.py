"""hop.vmap: JAX's vmap, thin over the C `vmap` HOP (hop/vmap.c), which
traces the function on one example and replaces the body by its batched
graph (hop/batching.h: hop_vmap_graph).

Under hop.trace / hop.compile a call records the batched arguments' axes
moved to 0, one vmap node whose body is the batched graph
(`vmap_body_0_vmap`), and the outputs' batch dims moved to out_axes, so
vmap nests and composes with hop.grad.  Outside a trace a call runs through
a hop.compile of the same traced call, as hop.grad does.

in_axes and out_axes are ints, None or pytrees of them: a tuple with one
entry per positional argument (each an int, None, or a tree matching that
argument), or one int / None for all; out_axes likewise matched against the
output.  An output that does not depend on a batched argument is broadcast
to the batch when its out axis is an int, as in JAX.
"""

from . import _C
from ._autodiff import _Transformed
from ._purity import body_env_arrays
from ._purity import run_pure
from ._pytree import flatten, unflatten
from ._trace import _name_hints

__all__ = ["vmap"]


def _is_tensor(x):
    return isinstance(x, _C.Tensor)


def _is_axis(a):
    return a is None or (isinstance(a, int) and not isinstance(a, bool))


def _check_axes(name, axes):
    """Every leaf of axes is an int or None (TypeError otherwise)."""
    if _is_axis(axes):
        return
    if isinstance(axes, (tuple, list)):
        for a in axes:
            _check_axes(name, a)
        return
    if isinstance(axes, dict):
        for a in axes.values():
            _check_axes(name, a)
        return
    raise TypeError(f"hop.vmap: {name} must be an int, None or a tuple/list/dict of them, got "
                    f"{type(axes).__name__}")


def _axes_for(name, axes, value, where):
    """One axis per leaf of value: axes is an int or None for all of them,
    or a tuple/list/dict with value's structure at that level."""
    if _is_axis(axes):
        return [axes] * len(flatten(value)[0])
    if type(axes) in (tuple, list) and type(value) is type(axes):
        if len(axes) != len(value):
            raise ValueError(f"hop.vmap: {name} {axes!r} does not match {where}: "
                             f"{len(axes)} entries for {len(value)}")
        out = []
        for k, (a, v) in enumerate(zip(axes, value)):
            out += _axes_for(name, a, v, f"{where}[{k}]")
        return out
    if isinstance(axes, dict) and type(value) is dict:
        if set(axes) != set(value):
            raise ValueError(f"hop.vmap: {name} {axes!r} does not match {where}: keys "
                             f"{sorted(map(str, axes))} for {sorted(map(str, value))}")
        out = []
        for k in value:
            out += _axes_for(name, axes[k], value[k], f"{where}[{k!r}]")
        return out
    raise ValueError(f"hop.vmap: {name} {axes!r} does not match {where}, a "
                     f"{type(value).__name__}")


def _shape(x):
    return list(x.shape)


def _move(x, src, dst):
    if src == dst:
        return x
    order = [d for d in range(x.ndim) if d != src]
    order.insert(dst, src)
    return x.permute(*order)


def vmap(f, in_axes=0, out_axes=0):
    """vmap(f, in_axes=0, out_axes=0) -> f over a batch of examples: each
    argument with an int in_axes is batched along that axis (all of one
    size), None arguments are passed whole to every example; each output
    gets its batch dim at out_axes (None: the output must not depend on a
    batched argument).  Works eagerly, under hop.trace / hop.compile, nested,
    and with hop.grad (per-example gradients: vmap(grad(loss), in_axes=(None, 0))).

    >>> hop.vmap(lambda x, w: (x * w).sum(), in_axes=(0, None))(
    ...     hop.tensor([[1.0, 2.0], [3.0, 4.0]]), hop.tensor([1.0, 10.0]))
    hop.tensor([21., 43.])
    """
    if not callable(f):
        raise TypeError(f"hop.vmap: f must be callable, got {type(f).__name__}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_axes("in_axes", in_axes)
    _check_axes("out_axes", out_axes)
    return _Transformed(f, "vmap", _vmap, (f, in_axes, out_axes))


def _vmap(spec, args, kwargs):
    f, in_axes, out_axes = spec
    if isinstance(in_axes, tuple):
        if len(in_axes) != len(args):
            raise ValueError(f"hop.vmap: in_axes has {len(in_axes)} entries but the function "
                             f"got {len(args)} positional argument{'s' if len(args) != 1 else ''}")
        per_arg = [_axes_for("in_axes", a, v, f"argument {i}")
                   for i, (a, v) in enumerate(zip(in_axes, args))]
    else:
        per_arg = [_axes_for("in_axes", in_axes, v, f"argument {i}") for i, v in enumerate(args)]
    operands, parts, mask, size, first = [], [], 0, None, None
    for i, a in enumerate(args):
        leaves, spec_i = flatten(a)
        slots = []
        for j, (v, ax) in enumerate(zip(leaves, per_arg[i])):
            where = f"argument {i} (leaf {j})"
            if ax is not None:
                if not _is_tensor(v):
                    raise ValueError(f"hop.vmap: {where} is {type(v).__name__}, which has no "
                                     f"axis {ax} to batch over")
                if not -v.ndim <= ax < v.ndim:
                    raise ValueError(f"hop.vmap: in_axes {ax} is out of range for {where} of "
                                     f"shape {_shape(v)}")
                ax %= v.ndim
                n = v.shape[ax]
                if size is None:
                    size, first = n, where
                elif n != size:
                    raise ValueError(f"hop.vmap: batched arguments have different sizes: {first} "
                                     f"has {size} and {where} has {n} along their in_axes")
                v = _move(v, ax, 0)
                mask |= 1 << len(operands)
            if _is_tensor(v):
                slots.append(len(operands))
                operands.append(v)
            else:
                slots.append(("const", v))
        parts.append((spec_i, slots))
    if size is None:
        raise ValueError("hop.vmap: no argument is batched (every in_axes is None)")
    if len(operands) > 62:
        raise ValueError(f"hop.vmap: at most 62 tensor arguments, got {len(operands)}")
    record = []
    tr = _C.tracing()
    body_env_arrays(tr, [f])

    def body(*ins):
        _name_hints(tr, f)
        rebuilt = tuple(unflatten([ins[s] if isinstance(s, int) else s[1] for s in slots], sp)
                        for sp, slots in parts)
        out = run_pure("vmap", "function", f, rebuilt, kwargs)
        leaves, out_spec = flatten(out)
        for v in leaves:
            if not _is_tensor(v):
                raise TypeError(f"hop.vmap: the function must return tensors, got "
                                f"{type(v).__name__}")
        record.append((out, out_spec, [v.ndim for v in leaves]))
        return leaves

    outs = _C.call_hop("vmap", (mask, 0), (tuple(operands),), (body,), None)
    example, out_spec, ranks = record[0]
    axes = _axes_for("out_axes", out_axes, example, "the output")
    res = []
    for j, (v, ax, r) in enumerate(zip(outs, axes, ranks)):
        batched = v.ndim == r + 1
        if ax is None:
            if batched:
                raise ValueError(f"hop.vmap: output leaf {j} depends on a batched argument but "
                                 f"its out_axes is None")
            res.append(v)
            continue
        if not -(r + 1) <= ax <= r:
            raise ValueError(f"hop.vmap: out_axes {ax} is out of range for output leaf {j} "
                             f"of shape {_shape(v)[1:] if batched else _shape(v)} (batched: rank "
                             f"{r + 1})")
        dst = ax % (r + 1)
        if batched and dst == 0:
            res.append(v)
            continue
        if not batched:
            v = v.unsqueeze(0).expand(size, *v.shape)
        v = _move(v, 0, dst)
        # A view here may be one of an argument's: the vmap's output is its
        # operand when f passes an input through (lambda x: x, x.T), or the
        # unbatched value f returns (w of in_axes None), and the plan returns
        # views of views.  The loop over the examples that vmap stands for
        # stacks fresh values, so writing into the result never writes an
        # argument: a copy (out_axes 0 of a batched output is the vmap's
        # own output, which the plan already gives as a fresh tensor).
        res.append(v.clone())
    return unflatten(res, out_spec)
