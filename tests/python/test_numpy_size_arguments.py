"""hop.numpy reads size, count and index arguments as NumPy 1.24 reads
them, by NumPy, by hop.compile and eagerly on hop.numpy arrays
(numpy_ways.check_all_ways): a range or a 1-d integer array where NumPy's
Python code takes `tuple(shape)`, a float number of sections or repeats
read by int(), NumPy's errors for negative sizes, a float kth.

Each case was found different by a sweep of odd arguments over 40 functions
(the forty-fourth session); before, eager hop.numpy refused what NumPy takes
(`np.broadcast_to(x, range(2, 4))`, `np.array_split(x, 3.0)`,
`np.repeat(x, 2.5)`, `np.take(x, np.float64(3.0))`, `np.percentile(x,
range(2, 4))`, `np.tri(-1)`), took what NumPy refuses (`np.partition(x,
3.0)`, `np.bincount(x, minlength=True)`), or raised hop's own error where
NumPy raises "negative dimensions are not allowed"."""

import numpy as np
import pytest

import hop.numpy as hnp
from numpy_ways import check_all_ways

X = np.arange(6.0)
M = np.arange(6.0).reshape(2, 3)

CASES = {
    "broadcast_to_range": lambda L, x: L.broadcast_to(x[:1], range(2, 4)),
    "broadcast_to_array": lambda L, x: L.broadcast_to(x[:1], np.array([2, 3])),
    "resize_range": lambda L, x: L.resize(x, range(2, 4)),
    "resize_array": lambda L, x: L.resize(x, np.array([2, 3])),
    "resize_0d": lambda L, x: L.resize(x, np.array(6)),
    "tile_range": lambda L, x: L.tile(x, range(2, 4)),
    "tile_array": lambda L, x: L.tile(x, np.array([2, 3])),
    "tile_bool": lambda L, x: L.tile(x, True),
    "tile_float": lambda L, x: L.tile(x, 3.0),
    "tile_negative": lambda L, x: L.tile(x, (2, -3)),
    "split_float": lambda L, x: L.split(x, 3.0),
    "split_numpy_float": lambda L, x: L.split(x, np.float64(3.0)),
    "split_unequal_float": lambda L, x: L.split(x, 2.5),
    "split_0d": lambda L, x: L.split(x, np.array(3)),
    "array_split_float": lambda L, x: L.array_split(x, 2.5),
    "array_split_float_bounds": lambda L, x: L.array_split(x, [1.5, 2]),
    "array_split_zero": lambda L, x: L.array_split(x, 0.5),
    "repeat_float": lambda L, x: L.repeat(x, 2.5),
    "repeat_numpy_float": lambda L, x: L.repeat(x, np.float64(2.7)),
    "repeat_negative_float": lambda L, x: L.repeat(x, -0.5),
    "repeat_0d_float": lambda L, x: L.repeat(x, np.array(2.0)),
    "repeat_complex": lambda L, x: L.repeat(x, 2 + 0j),
    "repeat_nan": lambda L, x: L.repeat(x, np.nan),
    "eye_negative": lambda L, x: L.eye(-1),
    "identity_negative": lambda L, x: L.identity(-1),
    "indices_negative": lambda L, x: L.indices((2, -3)),
    "tri_negative": lambda L, x: L.tri(-1),
    "tri_negative_rows": lambda L, x: L.tri(-1, 3),
    "partition_float_kth": lambda L, x: L.partition(x, 3.0),
    "partition_empty_kth": lambda L, x: L.partition(x, []),
    "partition_float_array_kth": lambda L, x: L.partition(x, np.array([2.0])),
    "take_numpy_float": lambda L, x: L.take(x, np.float64(3.5)),
    "take_numpy_float32": lambda L, x: L.take(x, np.float32(2)),
    "take_range": lambda L, x: L.take(x, range(1, 3)),
    "take_0d_float": lambda L, x: L.take(x, np.array(3.0)),
    "percentile_range": lambda L, x: L.percentile(x, range(2, 4)),
    "histogram_range_bins": lambda L, x: L.histogram(x, bins=range(2, 4)),
    "bincount_bool_minlength": lambda L, x: L.bincount(L.asarray([1, 2]), minlength=True),
    "diag_bool_k": lambda L, x: L.diag(x, k=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_size_argument_is_read_as_numpy_reads_it(name):
    call = CASES[name]
    check_all_ways(lambda x: call(np, x), X, direct=lambda x: call(hnp, x))


def test_a_two_dimensional_case():
    check_all_ways(lambda m: np.tile(m, range(1, 3)), M, direct=lambda m: hnp.tile(m, range(1, 3)))
