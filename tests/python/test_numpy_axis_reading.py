"""hop.numpy reads an `axis` argument as the NumPy 1.24 function it stands
for reads it, and so raises what NumPy raises for a bad one (type and
text) or accepts what NumPy accepts: by NumPy, by hop.compile and eagerly
on hop.numpy arrays (numpy_ways.check_all_ways).

NumPy has several readers, and each function uses its own:
- a ufunc's reduce (sum, max, any, ptp, count_nonzero, the nan-reductions):
  None, an int or a tuple of ints; a list is no int, a bool "an integer is
  required", a repeated axis "duplicate value in 'axis'";
- mean, var, std, average: each axis read by normalize_axis_index first (a
  float's text is "integer argument expected, got float"), then the sum's;
- PyArray_AxisConverter (argmax, cumsum, argsort, take, concatenate,
  repeat, compress, squeeze's int): a bool "an integer is required for the
  axis"; squeeze's tuple items "integers are required for the axis tuple";
- normalize_axis_index (sort, diff, stack, partition, insert, delete,
  rollaxis, take_along_axis, apply_along_axis): a bool is 0 or 1;
- normalize_axis_tuple (flip, roll, moveaxis, expand_dims, gradient,
  median, quantile, unique's moveaxis): an int or any iterable of ints;
- a.shape[axis] (split, array_split, size, fft's length): a tuple's errors;
- swapaxes and diagonal: a bool is 0 or 1, an AxisError naming axis1/axis2.

Before, eager hop.numpy read every axis one way: `np.sum(a, axis=[0])` and
every reduction's list axis gave a result where NumPy raises TypeError,
`sort`/`flip`/`roll`/`expand_dims`/`stack`/`diff`/`moveaxis`/`unique`...
refused a bool axis, a 1-element array or a list NumPy takes, and the
texts were hop's own. (Compiled calls already matched: hop.compile runs a
function NumPy's errors come from through NumPy.)

Not matched eagerly: a NumPy bool (np.True_) where NumPy reads it as an
index with a DeprecationWarning (normalize_axis_index, normalize_axis_tuple,
a.shape[axis], swapaxes): eager hop.numpy refuses it with a TypeError and no
warning; compiled calls run by NumPy, as NumPy."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from numpy_ways import _copies, _outcome, check_all_ways

A = np.arange(24.0).reshape(2, 3, 4)
IDX = np.zeros((1, 1, 1), dtype=np.int64)

AXES = [1.5, "x", (0, 0), (0, 1), 3, -4, [0], [0, 1], np.float64(1.0), True, np.True_,
        np.int64(1), np.array(1), np.array([0]), np.array(1.0), None, -1, (2,), ()]

CALLS = {
    "sum": lambda L, x, ax: L.sum(x, axis=ax),
    "method_sum": lambda L, x, ax: x.sum(axis=ax),
    "max": lambda L, x, ax: L.max(x, axis=ax),
    "any": lambda L, x, ax: L.any(x, axis=ax),
    "prod": lambda L, x, ax: L.prod(x, axis=ax),
    "ptp": lambda L, x, ax: L.ptp(x, axis=ax),
    "count_nonzero": lambda L, x, ax: L.count_nonzero(x, axis=ax),
    "nansum": lambda L, x, ax: L.nansum(x, axis=ax),
    "nanmax": lambda L, x, ax: L.nanmax(x, axis=ax),
    "nanargmax": lambda L, x, ax: L.nanargmax(x, axis=ax),
    "mean": lambda L, x, ax: L.mean(x, axis=ax),
    "var": lambda L, x, ax: L.var(x, axis=ax),
    "std": lambda L, x, ax: L.std(x, axis=ax),
    "average": lambda L, x, ax: L.average(x, axis=ax),
    "argmax": lambda L, x, ax: L.argmax(x, axis=ax),
    "cumsum": lambda L, x, ax: L.cumsum(x, axis=ax),
    "argsort": lambda L, x, ax: L.argsort(x, axis=ax),
    "take": lambda L, x, ax: L.take(x, [0], axis=ax),
    "concatenate": lambda L, x, ax: L.concatenate([x, x], axis=ax),
    "repeat": lambda L, x, ax: L.repeat(x, 2, axis=ax),
    "squeeze": lambda L, x, ax: L.squeeze(x[:1], axis=ax),
    "sort": lambda L, x, ax: L.sort(x, axis=ax),
    "diff": lambda L, x, ax: L.diff(x, axis=ax),
    "stack": lambda L, x, ax: L.stack([x, x], axis=ax),
    "partition": lambda L, x, ax: L.partition(x, 0, axis=ax),
    "argpartition": lambda L, x, ax: L.argpartition(x, 0, axis=ax),
    "delete": lambda L, x, ax: L.delete(x, [0], axis=ax),
    "insert": lambda L, x, ax: L.insert(x, 0, 5.0, axis=ax),
    "rollaxis": lambda L, x, ax: L.rollaxis(x, ax, 0),
    "take_along_axis": lambda L, x, ax: L.take_along_axis(x, L.asarray(IDX), axis=ax),
    "apply_along_axis": lambda L, x, ax: L.apply_along_axis(L.sum, ax, x),
    "flip": lambda L, x, ax: L.flip(x, axis=ax),
    "roll": lambda L, x, ax: L.roll(x, 1, axis=ax),
    "moveaxis": lambda L, x, ax: L.moveaxis(x, ax, 0),
    "expand_dims": lambda L, x, ax: L.expand_dims(x, ax),
    "gradient": lambda L, x, ax: L.gradient(x, axis=ax),
    "median": lambda L, x, ax: L.median(x, axis=ax),
    "quantile": lambda L, x, ax: L.quantile(x, 0.5, axis=ax),
    "unique": lambda L, x, ax: L.unique(x, axis=ax),
    "split": lambda L, x, ax: L.split(x, 1, axis=ax),
    "array_split": lambda L, x, ax: L.array_split(x, 2, axis=ax),
    "size": lambda L, x, ax: L.size(x, ax),
    "fft": lambda L, x, ax: L.fft.fft(x, axis=ax),
    "trapz": lambda L, x, ax: L.trapz(x, axis=ax),
    "swapaxes": lambda L, x, ax: L.swapaxes(x, ax, 0),
    "diagonal": lambda L, x, ax: L.diagonal(x, axis1=ax),
    "trace": lambda L, x, ax: L.trace(x, axis1=ax),
    "tensordot": lambda L, x, ax: L.tensordot(x, x.T, axes=ax),
}


DEPRECATED = "In future, it will be an error for 'np.bool_' scalars to be interpreted as an index"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_an_axis_is_read_as_numpy_reads_it(name):
    call = CALLS[name]
    for ax in AXES:
        if ax is None and name in ("rollaxis", "moveaxis", "swapaxes", "diagonal", "trace",
                                   "expand_dims"):
            continue  # (not an axis of these: a TypeError of another argument's)
        fn = lambda x: call(np, x, ax)  # noqa: E731
        want = _outcome(fn, _copies((A,)), "ignore")
        if isinstance(ax, np.bool_) and DEPRECATED in want[1]:
            # NumPy reads the bool as an index, with a DeprecationWarning:
            # compiled, NumPy runs the call; eager hop.numpy refuses it
            assert _outcome(hop.compile(fn), _copies((A,)), "ignore") == want
            with pytest.raises(TypeError, match="^an integer is required"):
                call(hnp, hnp.asarray(A), ax)
            continue
        check_all_ways(fn, A, direct=lambda x: call(hnp, x, ax))


def test_a_reduction_refuses_a_list_axis_numpy_refuses():
    # the one that gave an answer: hop.numpy's sum read [0] as the tuple (0,)
    with pytest.raises(TypeError, match="^'list' object cannot be interpreted as an integer$"):
        hnp.sum(hnp.asarray(A), axis=[0])
    with pytest.raises(TypeError, match="^'list' object cannot be interpreted as an integer$"):
        np.sum(A, axis=[0])


def test_axes_numpy_takes_are_taken():
    h = hnp.asarray(A)
    assert np.array_equal(np.asarray(hnp.sort(h, axis=True)), np.sort(A, axis=True))
    assert np.array_equal(np.asarray(hnp.flip(h, axis=[0, 2])), np.flip(A, axis=[0, 2]))
    assert np.array_equal(np.asarray(hnp.roll(h, 1, axis=np.array([0]))),
                          np.roll(A, 1, axis=np.array([0])))
    assert hnp.expand_dims(h, [0, 4]).shape == np.expand_dims(A, [0, 4]).shape == (1, 2, 3, 4, 1)
    assert hnp.tensordot(h, h.T, np.int64(1)).shape == (2, 3, 3, 2)
