"""np.sort/np.argsort order ties (equal integers, -0.0 and 0.0, NaNs) as
NumPy 1.24 does for each kind (issue #29): its default "quicksort" is an
introsort whose order of equal keys is not the input's, "heapsort" another,
"stable"/"mergesort" keep them in order.  hop's sort ops make NumPy's own
comparisons (runtime/scan_sort.c); NumPy's AVX-512 sort of float32 values
orders -0.0 and 0.0 by its vector network, so a compiled call meeting both
runs eagerly.  Complex numbers sort by NumPy's CDOUBLE_LT in the same
kernels.  Also float power, whose bits NumPy's SVML loop decides: a
branch on it is decided by eager.  Compared bit for bit and index for index
with NumPy, eagerly and compiled."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hop
from hop import _numpy_math
import hop.numpy as hnp
from budget import examples

KINDS = [None, "quicksort", "heapsort", "stable", "mergesort", "Q", "h"]


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert got.tobytes() == want.tobytes(), (got, want)


def _ties(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.choice(np.array([-0.0, 0.0, 1.0, -1.0, np.nan, np.inf], dtype), n)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    return rng.integers(0, 3, n).astype(dtype)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32,
                                   np.uint16, np.uint8, np.bool_, np.float64, np.float32,
                                   np.float16])
def test_argsort_orders_equal_keys_as_numpy_for_each_kind(dtype, kind):
    # from 17 elements on NumPy's quicksort partitions, and equal keys
    # leave their order (np.argsort of an int array with repeats)
    f = hop.compile(lambda a: np.argsort(a, kind=kind))
    for n in (5, 16, 17, 40, 300):
        a = _ties(dtype, n, n)
        _same(f(a), np.argsort(a, kind=kind))
        _same(hnp.argsort(hnp.asarray(a), kind=kind), np.argsort(a, kind=kind))
    assert f.eager_calls == 0


def test_argsort_of_int_repeats_is_numpys_permutation():
    a = np.array([3, 1, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1, 0])
    want = np.argsort(a)
    assert not np.array_equal(want, np.argsort(a, kind="stable"))  # ties differ
    _same(hop.compile(lambda a: np.argsort(a))(a), want)
    _same(hop.compile(lambda a: a.argsort())(a), want)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_sort_orders_signed_zeros_and_nans_as_numpy(dtype, kind):
    f = hop.compile(lambda a: np.sort(a, kind=kind))
    for n in (5, 17, 64, 301):
        a = _ties(dtype, n, 7 * n)
        _same(f(a), np.sort(a, kind=kind))
    assert f.eager_calls == 0


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_and_argsort_along_any_axis_and_of_views(axis):
    a = _ties(np.float64, 40 * 21, 3).reshape(40, 21)
    for x in (a, a.T, a[::2, 1:]):
        _same(hop.compile(lambda x: np.argsort(x, axis=axis))(x), np.argsort(x, axis=axis))
        _same(hop.compile(lambda x: np.sort(x, axis=axis))(x), np.sort(x, axis=axis))


def test_descending_patterns_users_write_match_numpy():
    a = _ties(np.int64, 50, 11)
    f = np.asarray(_ties(np.float64, 50, 12))
    for fn in (lambda x: np.argsort(-x), lambda x: np.argsort(x)[::-1],
               lambda x: -np.sort(-x), lambda x: np.sort(x)[::-1],
               lambda x: x[np.argsort(-x, kind="stable")]):
        _same(hop.compile(fn)(a), fn(a))
        _same(hop.compile(fn)(f), fn(f))


def test_ndarray_sort_in_place_uses_the_kind():
    def f(x):
        y = x.copy()
        y.sort(kind="heapsort")
        return y
    a = _ties(np.float64, 60, 5)
    _same(hop.compile(f)(a), f(a))


def test_float32_sort_with_both_zeros_runs_eagerly_and_gives_numpys_bits():
    # NumPy's AVX-512 sort of float32 orders -0.0 and 0.0 by its network
    f = hop.compile(lambda a: np.sort(a))
    a = np.array([0.0, -0.0, 1.0] * 11, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _same(f(a), np.sort(a))
    assert f.eager_calls == 1
    b = np.array([-0.0, 2.0, np.nan, -1.0, -0.0] * 9, np.float32)  # one sign, nans
    _same(f(b), np.sort(b))
    assert f.eager_calls == 1


def test_float32_argsort_with_both_zeros_stays_compiled():
    f = hop.compile(lambda a: np.argsort(a))
    a = np.array([0.0, -0.0, 1.0] * 11, np.float32)
    _same(f(a), np.argsort(a))
    assert f.eager_calls == 0


def test_complex_quicksort_and_heapsort_order_equal_elements_as_numpy():
    # NumPy's CDOUBLE_LT in the kernel: equal numbers, NaN in either part
    pool = np.array([1 + 1j, 2, 1 + 1j, 0, complex(np.nan, 1), complex(1, np.nan), -0.0 + 0j,
                     complex(np.nan, np.nan)], np.complex128)
    for dt in (np.complex128, np.complex64):
        a = np.random.default_rng(4).choice(pool, 60).astype(dt)
        for kind in (None, "heapsort", "stable"):
            f = hop.compile(lambda a: (np.argsort(a, kind=kind), np.sort(a, kind=kind)))
            got, want = f(a), (np.argsort(a, kind=kind), np.sort(a, kind=kind))
            _same(got[0], want[0])
            _same(got[1], want[1])
            assert f.eager_calls == 0


def test_a_bad_sort_kind_raises_numpys_error():
    a = np.arange(3.0)
    with pytest.raises(ValueError, match=r"sort kind must be one of 'quick', 'heap', or "
                                         r"'stable' \(got 'x'\)"):
        hnp.sort(hnp.asarray(a), kind="x")
    with pytest.raises(TypeError, match="sort kind must be str, not int"):
        hnp.argsort(hnp.asarray(a), kind=3)


def test_the_sort_op_refuses_a_bad_kind_and_a_descending_numpy_kind():
    t = hop.tensor([3.0, 1.0])
    with pytest.raises(hop.Error, match=r"sort: kind must be 0 \(stable\), 1 \(quick\) or 2"):
        hop._C._op("sort", t, 0, False, 3)
    with pytest.raises(hop.Error, match="argsort: only the stable kind sorts in descending"):
        hop._C._op("argsort", t, 0, True, 1)


_VALUES = {"f": [-0.0, 0.0, 1.0, -1.0, float("nan"), float("inf"), 0.5],
           "i": [0, 1, 2, -1], "u": [0, 1, 2], "b": [False, True],
           "c": [0j, -0.0 + 0j, 1 + 1j, 1, complex("nan+1j"), complex("1+nanj"), 2j]}


@settings(max_examples=examples(150), deadline=None)
@given(st.sampled_from(["float64", "float16", "float32", "int64", "int32", "uint8", "bool",
                        "complex128", "complex64"]),
       st.sampled_from([None, "quicksort", "heapsort", "stable"]),
       st.integers(1, 3), st.data())
def test_sort_and_argsort_with_many_ties_match_numpy(dtype, kind, rows, data):
    dt = np.dtype(dtype)
    n = data.draw(st.integers(0, 80))
    vals = data.draw(st.lists(st.sampled_from(_VALUES[dt.kind]), min_size=rows * n,
                              max_size=rows * n))
    a = np.array(vals, dt).reshape(rows, n)
    axis = data.draw(st.sampled_from([-1, 0, None]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _same(hop.compile(lambda a: np.argsort(a, axis=axis, kind=kind))(a),
              np.argsort(a, axis=axis, kind=kind))
        _same(hop.compile(lambda a: np.sort(a, axis=axis, kind=kind))(a),
              np.sort(a, axis=axis, kind=kind))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_branch_on_float_power_is_decided_on_numpys_bits(dtype):
    # NumPy 1.24 computes float power in its AVX-512 SVML loop at every
    # length; hop's kernel differs in the last bit for some elements, so
    # a compiled branch on it must not take hop's side
    rng = np.random.default_rng(0)
    x = rng.uniform(0.1, 10, 400).astype(dtype)
    y = rng.uniform(-8, 8, 400).astype(dtype)
    mine = np.asarray(hnp.power(hnp.asarray(x), hnp.asarray(y)))
    differ = np.nonzero(mine != np.power(x, y))[0]
    if differ.size == 0:
        # hop runs NumPy's own SVML power here (python/hop/_numpy_math.py):
        # the same bits, so any element decides the same way
        assert ("pow", "f64" if dtype == np.float64 else "f32") in _numpy_math.ADOPTED
    i = int(differ[0]) if differ.size else 0
    a, b = x[i:i + 1].copy(), y[i:i + 1].copy()
    t = float(max(mine[i], np.power(x, y)[i]))

    def f(a, b):
        return 1 if np.power(a, b)[0] >= t else 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert hop.compile(f)(a, b) == f(a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.float32])
def test_unique_keeps_the_zero_numpys_quicksort_puts_first(dtype):
    # np.unique sorts with quicksort unless asked for indices: which of
    # -0.0 and 0.0 a run of zeros keeps is the sort's order of ties
    a = np.array([2.0, 1.0, 1.0, 0.0, 0.0, -0.0, -0.0, -0.0, -0.0, 2.0, 1.0, 2.0, 1.0, 1.0, 2.0,
                  1.0, 1.0, 1.0, 1.0, 2.0, 0.0, 2.0, 1.0, -0.0], dtype)
    assert np.signbit(np.unique(a.astype(np.float64))[0])  # not the first zero, 0.0
    for values_only, fn in ((True, lambda a: (np.unique(a),)),
                            (False, lambda a: np.unique(a, return_inverse=True)),
                            (False, lambda a: np.unique(a, return_index=True))):
        f = hop.compile(fn)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for got, want in zip(f(a), fn(a)):
                _same(got, want)
        # NumPy sorts float32 values alone with its AVX-512 sort: eager
        assert f.eager_calls == (1 if values_only and dtype == np.float32 else 0)
