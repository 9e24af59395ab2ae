"""hop.numpy's float sums add in NumPy 1.24's order, bit for bit (the first
rule; docs/ARCHITECTURE.md, "Summation order"): np.sum, np.mean, np.var and
np.std of float16, float32 and float64 arrays of any layout (contiguous,
sliced, transposed) over any axes, eagerly and compiled.  NumPy sums each
inner loop of its reduction iterator pairwise (at most 8192 elements, its
buffer size) and adds element by element when a kept axis is innermost in
memory; float16 accumulates in float32 and is rounded to float16 after each
inner loop.  Each regression below failed before: hop added in four double
lanes."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import hop
import hop.numpy as hnp

from budget import examples
from test_numpy_operand_campaign import _as_numpy

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                       HealthCheck.data_too_large])


def _same_bits(got, want, what):
    """got (an ndarray or a NumPy scalar, hop.numpy's or NumPy's) is want:
    of its type, dtype, shape and bits."""
    got = _as_numpy(got)
    g, w = np.asarray(got), np.asarray(want)
    assert type(got) is type(want), (what, type(got), type(want))
    assert g.dtype == w.dtype and g.shape == w.shape, (what, g.dtype, w.dtype, g.shape, w.shape)
    assert g.tobytes() == w.tobytes(), (what, got, want)


def _check(f, a):
    """f of a by NumPy, eagerly on hop.numpy's array and compiled: the same
    bits."""
    with np.errstate(all="ignore"):
        want = f(a)
        _same_bits(f(hnp.asarray(a)), want, "eager")
        _same_bits(hop.compile(f)(a), want, "compiled")


@st.composite
def layouts(draw):
    """A float array of 1 to 3 dims, its values of many magnitudes (so the
    order of the adds shows in the last bits), contiguous, strided (every
    other element of a larger array) or transposed; now and then one long
    axis (NumPy's chunks of 8192 and its halving above 128)."""
    dt = draw(st.sampled_from([np.float16, np.float32, np.float64]))
    nd = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 24), min_size=nd, max_size=nd))
    if draw(st.integers(0, 5)) == 0:
        shape = [draw(st.integers(129, 17000))] + [min(s, 2) for s in shape[1:]]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    steps = [draw(st.sampled_from([1, 1, 2])) for _ in shape]
    big = [s * k for s, k in zip(shape, steps)]
    full = rng.standard_normal(big) * 10.0 ** rng.integers(-3, 4, size=big)
    a = full.astype(dt)[tuple(slice(None, None, k) for k in steps)]
    if nd > 1 and draw(st.booleans()):
        a = a.transpose(draw(st.permutations(range(nd))))
    axis = draw(st.one_of(st.none(), st.lists(st.integers(-nd, nd - 1), min_size=1,
                                              max_size=nd, unique_by=lambda v: v % nd)
                          .map(tuple)))
    return a, axis


@settings(max_examples=examples(40), **_SETTINGS)
@given(layouts(), st.sampled_from(["sum", "mean", "var", "std"]), st.booleans())
def test_float_sums_means_and_variances_have_numpys_bits(case, name, keepdims):
    a, axis = case
    fn = getattr(np, name)
    _check(lambda x: fn(x, axis=axis, keepdims=keepdims), a)


# Regressions: each failed before its fix.

def _ones_after(big, n, dtype):
    v = np.ones(n, dtype)
    v[0] = big
    return v


@pytest.mark.parametrize("src,a", [
    # the scalar campaign's pinned finding: NumPy's float64 sum of the int64
    # values, ((0 + 0) + 0) + 1 ..., is 0 (hop's four lanes gave 1)
    ("np.mean(a)", np.array([0, 0, 0, 1, -2**63, 2**63 - 1])),
    ("np.mean(a)", np.array([0, 0, 0, 1, -2**63, 2**63 - 1]).reshape(2, 3)),
    # eight accumulators, combined in pairs: 16777230 (not 16777232)
    ("np.sum(a)", _ones_after(2**24, 16, np.float32)),
    ("a.sum(axis=-1)", _ones_after(2**24, 16, np.float32).reshape(1, 16)),
    ("np.mean(a)", _ones_after(2**24, 16, np.float32)),
    # down a column (a kept axis innermost): one element at a time, 2**24
    ("np.sum(a, axis=0)", np.stack([_ones_after(2**24, 16, np.float32)] * 3, 1)),
    # 9000 elements: pairwise over 8192, then the 808 after them
    ("np.sum(a)", (np.arange(9000) % 13 * 0.37 - 2).astype(np.float32)),
    # float16 in float32, rounded to float16 after each inner loop (a row
    # of 3) and each add down a kept axis: 2068 and 2048, not 2064 and 2060
    ("np.sum(a, axis=(0, 2))", np.ones((6, 2, 3), np.float16) + np.array(
        [2047] + [0] * 5, np.float16)[:, None, None] * np.array([1, 0, 0], np.float16)),
    ("np.sum(a, axis=0)", np.stack([_ones_after(2048, 12, np.float16)] * 2, 1)),
    # np.var sums a float16 array in float16 (np.mean in float32)
    ("np.var(a)", np.array([1.257, -0.1321, 0.6406, 104.9], np.float16)),
    # compiled, a float16 array's deviations in its memory order too: an
    # F-ordered column is summed pairwise in float32 and rounded once (hop
    # compiled the deviations in C order and rounded after each add); the
    # stress run's draw, whose kept axes are transposed in memory
    ("np.var(a, axis=0)", np.asfortranarray(np.array(
        [[1.5, 13.5], [0.8, 2.6], [-0.0, 0.1], [19.6, 18.0]], np.float16))),
    ("np.var(a, axis=0)", np.ascontiguousarray(np.array(
        [[[1.258e-04, 6.404e-04], [-1.321e+02, 1.049e-01]],
         [[-5.355e-04, 1.304e+00], [3.616e-02, 9.473e-02]],
         [[-7.037e-02, -6.232e-04], [-1.266e-03, 4.131e-05]],
         [[-2.325e-03, -1.246e+00], [-2.188e+00, -7.324e+00]]],
        np.float16).transpose(0, 2, 1)).transpose(0, 2, 1)),
    # a float16 var's count beyond float16's range divides in float64 (NumPy's
    # value-based casting): 0.25 and inf (hop's count as float16 was inf:
    # 0 and nan); the stress run's draw (seed 31) had 66476 elements
    ("np.var(a)", (np.arange(70000) % 2).astype(np.float16)),
    ("np.std(a, axis=0)", (np.arange(70000) % 2).astype(np.float16).reshape(70000, 1)),
    ("np.var(a)", np.ones(70000, np.float16)),
    # the deviations of a transposed array summed in its memory order
    ("np.std(a)", (np.arange(20000) % 7 - 3).reshape(100, 200).T),
    ("np.var(a)", (np.arange(64.0) ** 1.5).reshape(8, 8).T),
    # initial= and the pairwise sum added to it: 1.5 + ((1e16 + 1) - 1e16)
    ("np.sum(a, initial=1.5)", np.array([1e16, 1.0, -1e16])),
    ("np.sum(a, axis=1, initial=1.5)", np.array([[1e16, 1.0, -1e16]])),
])
def test_sums_that_hops_double_lanes_rounded_otherwise(src, a):
    f = eval(f"lambda a: {src}", {"np": np})  # noqa: S307 (the list above)
    _check(f, a)


def _read_only(a):
    a.flags.writeable = False
    return a


# a Fortran-ordered float32 array whose sums in memory order (and reversed
# along axis 0, in its memory order) differ from C order's in the last bits
_RNG = np.random.default_rng(3)
_F = np.asfortranarray((_RNG.standard_normal((3, 50)) *
                        10.0 ** _RNG.integers(-3, 4, size=(3, 50))).astype(np.float32))
_SUMS = ["np.sum(a)", "np.sum(a, axis=1)", "np.mean(a)", "np.var(a, axis=1)"]


@pytest.mark.parametrize("src", _SUMS)
def test_a_read_only_arrays_sums_add_in_its_memory_order(src):
    # hop copies a read-only array (its tensor never aliases memory that
    # cannot be written); the copy was in C order, so a Fortran-ordered
    # array was summed in C order, eagerly and compiled
    f = eval(f"lambda a: {src}", {"np": np})  # noqa: S307 (the list above)
    a = _read_only(_F.copy(order="F"))
    _check(f, a)
    assert np.asarray(hnp.sin(hnp.asarray(a))).flags.f_contiguous  # (its layout, NumPy's)


@pytest.mark.parametrize("src", _SUMS)
def test_compiled_sums_of_a_negatively_strided_argument_add_in_its_memory_order(src):
    # hop copies an argument with negative strides: the copy was in C order,
    # so a reversed Fortran-ordered array was summed in C order
    f = eval(f"lambda a: {src}", {"np": np})  # noqa: S307 (the list above)
    a = np.flip(_F, 0)
    with np.errstate(all="ignore"):
        _same_bits(hop.compile(f)(a), f(a), "compiled")


@pytest.mark.parametrize("src,a", [
    ("np.sum(a[::-1])", _F), ("np.sum(a[:, ::-1], axis=1)", _F), ("np.mean(a[::-2])", _F),
    ("np.sum(np.flip(a, 0))", _F), ("np.var(np.flip(a), axis=1)", _F),
    ("np.sum(a.T[::-1])", np.ascontiguousarray(_F.T)),
])
def test_a_reversed_view_of_an_array_not_in_c_order_adds_in_its_memory_order(src, a):
    # NumPy's view has a negative stride and the array's order; hop takes
    # the elements in reverse, a C-ordered copy, summed in C order (eagerly
    # and compiled)
    f = eval(f"lambda a: {src}", {"np": np})  # noqa: S307 (the list above)
    _check(f, a)


_F64 = np.asfortranarray(np.random.default_rng(3).standard_normal((3, 50)) *
                         10.0 ** np.random.default_rng(4).integers(-3, 4, size=(3, 50)))


@pytest.mark.parametrize("src", [
    "np.sum(a, dtype=np.float32)", "np.sum(a, axis=1, dtype=np.float32)",
    "np.mean(a, dtype=np.float32)", "np.mean(a, axis=1, dtype=np.float32)",
    "np.sum(a.astype(np.float16), dtype=np.float32)",
])
def test_a_sum_in_another_dtype_adds_the_cast_values_in_the_arrays_memory_order(src):
    # NumPy casts into its buffer in the array's memory order and adds the
    # cast values in it; hop's cast was C-ordered, so a Fortran-ordered
    # array's sum with dtype= added in C order (eagerly and compiled; mean's
    # compiled through _cast_first)
    f = eval(f"lambda a: {src}", {"np": np})  # noqa: S307 (the list above)
    _check(f, _F64)


# ------------------------------------------- products in the array's dtype

@pytest.mark.parametrize("values,dtype", [
    ([1e30, 1e10, 1e-30], np.float32),       # overflows on the way: inf, not 1e10
    ([1e-30, 1e-30, 1e30, 1e30], np.float32),  # underflows on the way: 0, not 1
    ([3e38, 10.0, 0.1], np.float32),
    ([1e300, 1e300, 1e-300], np.float64),
    ([300.0, 300.0, 1e-3], np.float16),
])
@pytest.mark.parametrize("axis", [None, 0])
def test_float_products_multiply_in_the_arrays_dtype(values, dtype, axis):
    # NumPy's multiply.reduce multiplies float32 in float32 (float16 in
    # float32): hop multiplied every float in double, so a float32 product
    # that overflows or underflows on the way was finite (the first rule)
    a = np.array(values, dtype)
    _check(lambda x: np.prod(x, axis=axis), a)
    _check(lambda x: x.prod(), a)
    if dtype != np.float16:  # (below)
        _check(lambda x: np.prod(np.stack([x, x[::-1]], axis=1), axis=0), a)


@pytest.mark.parametrize("src", ["np.prod(a)", "np.prod(a.astype(np.float32))",
                                 "np.prod(a, dtype=np.float32)",
                                 "np.prod(a.reshape(3, 2, 4, order='F'), axis=(0, 2))"])
def test_float_products_multiply_in_the_arrays_memory_order(src):
    # NumPy's multiply.reduce multiplies one element at a time in its
    # iterator's order (memory order); runtime/reduce.c multiplied float32
    # and float64 in C order (only float16 took numpy_order)
    f = eval(f"lambda a: {src}", {"np": np})  # noqa: S307 (the list above)
    _check(f, np.asfortranarray(np.random.default_rng(3).uniform(0.5, 2.0, (3, 8))))


def test_float16_products_down_an_outer_axis_round_each_step():
    # down an outer axis NumPy's half loop rounds to float16 after each
    # multiply (inf here, where float32 carried 90.06); along a reduced
    # innermost axis after each inner loop
    a = np.array([[300.0, 1e-3], [300.0, 300.0], [1e-3, 300.0]], np.float16)
    _check(lambda x: np.prod(x, axis=0), a)
    _check(lambda x: np.prod(x.T, axis=1), a)
    _check(lambda x: np.prod(x, axis=1), a.T.copy())
    _check(lambda x: np.prod(x), np.array([300.0, 300.0, 1e-3], np.float16))
    b = np.random.default_rng(5).uniform(0.5, 2.0, (40, 3, 5)).astype(np.float16)
    for axis in [None, 0, 1, 2, (0, 2), (1, 2)]:
        _check(lambda x: np.prod(x, axis=axis), b)
        _check(lambda x: np.prod(x, axis=axis), b.transpose(2, 0, 1))
