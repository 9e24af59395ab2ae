"""NumPy 1.24's checks of a reduction's out= array, before anything is
written: the errors NumPy's reduction iterator raises for an out of the
wrong shape, with its text.

A reduction's result never broadcasts into out (a ufunc's does): out has
the result's dimensions, a reduced axis kept by keepdims has length 1, and
a kept axis has the operand's length.  NumPy's reduction (reduction.c's
PyUFunc_ReduceWrapper) maps out's axes onto the operand's (a reduced axis
is out's axis of length 1 with keepdims, none without), then its iterator
broadcasts the operands over the operand's axes and checks each axis, the
last first; the first failing check is the error.  Each is modelled here
in that order (tests/python/test_numpy_reduce_out.py draws shapes against
NumPy's own errors)."""

import math

from ._core import shape_text

_NEWAXIS = -1


def check(ufunc, shape, axes, keepdims, out_shape, where_shape=None):
    """Raise NumPy's ValueError when out (of out_shape) cannot take
    ufunc.reduce's result over axes (a set of the operand's axes) of an
    operand of shape, with a where= mask of where_shape (None: no mask)."""
    ndim = len(shape)
    # out's axis for each operand axis: ("reduced", k or None) or k
    result_axes, k = [], 0
    for i in range(ndim):
        if i in axes:
            result_axes.append(("reduced", k if keepdims else None))
            k += 1 if keepdims else 0
        else:
            result_axes.append(k)
            k += 1
    if k != len(out_shape):
        tail = " (must match the operand's when keepdims=True)" if keepdims else ""
        raise ValueError(f"output parameter for reduction operation {ufunc} has the wrong "
                         f"number of dimensions: Found {len(out_shape)} but expected {k}{tail}")

    def out_axis(i):
        a = result_axes[i]
        return a[1] if isinstance(a, tuple) else a

    # broadcasting: out (through its axes), the operand, then the mask
    # (aligned on the right)
    bshape = [1] * ndim
    remapped = [out_shape[out_axis(i)] if out_axis(i) is not None else _NEWAXIS
                for i in range(ndim)]
    ops = [remapped, list(shape)]
    if where_shape is not None:
        ops.append([1] * (ndim - len(where_shape)) + list(where_shape)
                   if len(where_shape) <= ndim else None)
    for op in ops:
        if op is None:
            raise ValueError("input operand has more dimensions than allowed by the axis "
                             "remapping")
        for i, d in enumerate(op):
            if d < 0:
                continue
            if bshape[i] == 1:
                bshape[i] = d
            elif d not in (1, bshape[i]):
                text = (f"operands could not be broadcast together with remapped shapes "
                        f"[original->remapped]: {shape_text(out_shape, '->')}"
                        f"{shape_text(remapped, ' ')}{shape_text(shape, ' ')}")
                if where_shape is not None:
                    text += shape_text(where_shape, " ")
                raise ValueError(text)
    # each axis, the last first: out's checks, then the operand's (which
    # is not broadcast: out cannot be larger than it)
    for i in reversed(range(ndim)):
        a = result_axes[i]
        if isinstance(a, tuple):
            if a[1] is not None and out_shape[a[1]] != 1:
                raise ValueError(f"operand was set up as a reduction along axis {a[1]}, but "
                                 f"the length of the axis is {out_shape[a[1]]} (it has to be 1)")
        elif out_shape[a] == 1 and bshape[i] != 1:
            raise ValueError(f"output operand requires a reduction along dimension {a}, but "
                             f"the reduction is not enabled. The dimension size of 1 does not "
                             f"match the expected output shape.")
        if shape[i] != bshape[i]:
            raise ValueError(f"non-broadcastable operand with shape {shape_text(shape)} "
                             f"doesn't match the broadcast shape {shape_text(bshape)}")


def check_accumulate(shape, out_shape, cast):
    """Raise NumPy's ValueError when out (of out_shape) cannot take
    ufunc.accumulate's result for an operand of shape (already 1-d for
    cumsum's axis=None), or hop's where NumPy 1.24 takes an out it then
    fills with other values (a longer one, or one the operand broadcasts
    to).  True when NumPy takes out and writes nothing into it (an empty
    out, or an empty 1-d operand): the result is out as it was.  cast:
    out's or the operand's dtype is not the accumulation's, which NumPy
    copies through a buffer and checks another way (a (1,) result into a (4,) out writes
    out[0] and leaves the rest), modelled only as hop's refusal."""
    ndim = len(shape)
    out_shape = tuple(out_shape)
    if out_shape == tuple(shape):
        return False
    if cast:
        raise ValueError(_REFUSED.format(out_shape, tuple(shape)))
    size = math.prod(out_shape)
    if ndim <= 1:
        if size == 0 or (ndim and shape[0] == 0):
            return True
        raise ValueError("provided out is the wrong size for the accumulation.")
    k = len(out_shape)
    if k < ndim:
        raise ValueError(f"Iterator input op_axes[0][{ndim - 1 - k}] (=={k}) is not a valid "
                         f"axis of op[0], which has {k} dimensions ")
    head = out_shape[:ndim]
    for o, d in zip(head, shape):
        if o != 1 and d not in (1, o):
            raise ValueError(f"operands could not be broadcast together with remapped shapes "
                             f"[original->remapped]: {shape_text(out_shape, '->')}"
                             f"{shape_text(head, ' ')}{shape_text(shape, '->')}"
                             f"{shape_text(shape, ' ')}")
    bshape = [d if o == 1 else o for o, d in zip(head, shape)]
    if any(o == 1 and b != 1 for o, b in zip(head, bshape)):
        raise ValueError(f"non-broadcastable output operand with shape "
                         f"{shape_text(out_shape)} [remapped to {shape_text(head[::-1])}] "
                         f"doesn't match the broadcast shape {shape_text(bshape)}")
    if size == 0:
        return True
    raise ValueError(_REFUSED.format(out_shape, tuple(shape)))


_REFUSED = ("hop.numpy: an accumulation's out= of shape {} for a result of shape {}: NumPy 1.24 "
            "takes some such outs and writes values other than the accumulation's, and refuses "
            "others; hop refuses it")


def check_arg(op, result_shape, out):
    """argmax/argmin(..., out=): NumPy's errors for an out that is not of the
    result's shape, or whose dtype the index type (intp) cannot safely be
    read from (NumPy's writeback copy converts out to intp first; a 0-d
    out by its value)."""
    import numpy as np
    if tuple(out.shape) != tuple(result_shape):
        raise ValueError(f"output array does not match result of np.{op}.")
    have = np.dtype(out.dtype)
    if np.can_cast(have, np.intp, "safe"):
        return
    if out.ndim == 0 and have.kind == "u":
        try:  # (NumPy's value-based cast of a 0-d array: an unsigned one that fits)
            value = np.asarray(out)
        except Exception:  # (a traced one: its value is not known)
            value = None
        if value is not None and np.can_cast(value, np.intp, "safe"):
            return
    what = "scalar" if out.ndim == 0 else "array data"
    raise TypeError(f"Cannot cast {what} from {have!r} to {np.dtype(np.intp)!r} according to "
                    f"the rule 'safe'")


def check_median(shape, axes, keepdims, out_shape):
    """np.median(a, axis, out=out, keepdims=...): NumPy's errors for an out
    of the wrong shape.  NumPy's _ureduce indexes out with 0 on each
    reduced axis when keepdims (out[..., 0, :]); median then takes the
    mean of the one or two middle elements of its partitioned copy (the
    reduced axes flattened into the last one) into out: its add.reduce
    checks out.  axes: the reduced axes, None for all."""
    nd = len(shape)
    out_shape = tuple(out_shape)
    if keepdims:
        index = [i for i in range(nd) if axes is None or i in axes]
        if len(out_shape) < nd:
            raise IndexError(f"too many indices for array: array is {len(out_shape)}-dimensional, "
                             f"but {nd} were indexed")
        lead = len(out_shape) - nd
        for i in index:
            if out_shape[lead + i] == 0:
                raise IndexError(f"index 0 is out of bounds for axis {lead + i} with size 0")
        out_shape = tuple(d for j, d in enumerate(out_shape)
                          if j < lead or (j - lead) not in index)
    if axes is None:
        part, ax = (math.prod(shape),), 0
    elif len(axes) == 1:
        part, ax = tuple(shape), next(iter(axes))
    else:
        keep = tuple(d for i, d in enumerate(shape) if i not in axes)
        part, ax = keep + (math.prod(shape[i] for i in axes),), len(keep)
    n = part[ax]
    middle = len(range(n)[n // 2 - (n % 2 == 0):n // 2 + 1])
    check("add", part[:ax] + (middle,) + part[ax + 1:], {ax}, False, out_shape)
