"""Sums with where= add in NumPy 1.24's order, bit for bit (the first rule;
docs/ARCHITECTURE.md, "Summation order"): np.sum (also with initial=),
np.mean, np.var and np.std with a where= mask, of float16, float32,
float64, complex64 and complex128 arrays of any layout, over any axes,
eagerly and compiled.  NumPy's masked reduction calls its add loop once
per run of unmasked elements of each inner loop (the run's pairwise sum
added to the output element), from initial (+0.0 without one); hop summed
the array with its masked elements replaced by zeros, another tree of adds
(and +0.0 where NumPy keeps -0.0).  The masked_sum op (include/hop/ops.h)
is NumPy's loop; its gradient, tangent and batch rule are checked here too."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import hop
import hop.numpy as hnp
from hop import _C

from budget import examples
from test_numpy_summation_order import _same_bits

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                       HealthCheck.data_too_large])


def _check(f, a, m):
    """f(a, m) by NumPy, eagerly on hop.numpy's array and compiled: the same
    type, dtype, shape, bits and strides, and NumPy's RuntimeWarnings (a
    where= mask's empty slice: NaN and "Mean of empty slice." or "Degrees of
    freedom <= 0 for slice", which the compiled call hands to eager for)."""
    with np.errstate(all="ignore"):
        want, said = _warned(lambda: f(a, m))
        for what, call in (("eager", lambda: f(hnp.asarray(a), m)),
                           ("compiled", lambda: hop.compile(f)(a, m))):
            got, warned = _warned(call)
            _same_bits(got, want, what)
            assert warned == said, (what, warned, said)
            if isinstance(want, np.ndarray):
                assert got.strides == want.strides, (what, got.strides, want.strides)
            if what == "compiled":  # (NumPy's own type, not hop.numpy's array)
                assert type(got) is type(want), (type(got), type(want))
    return want


def _warned(call):
    """call()'s result and the texts of NumPy's RuntimeWarnings it gave."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = call()
    return r, [str(x.message) for x in w if x.category is RuntimeWarning and
               not str(x.message).startswith("hop")]


def _laid_out(draw, rng, full, steps, fractions):
    """full sliced by steps, drawn contiguous, Fortran-ordered or
    transposed; a mask of its shape or of its last axis, true at one of
    fractions of the elements; axes: (array, mask, axis)."""
    nd = full.ndim
    a = full[tuple(slice(None, None, k) for k in steps)]
    layout = draw(st.sampled_from(["C", "F", "T"]))
    if layout == "F":
        a = np.asfortranarray(a)
    elif layout == "T" and nd > 1:
        a = a.transpose(draw(st.permutations(range(nd))))
    mshape = a.shape if draw(st.booleans()) else a.shape[-1:]
    m = rng.random(mshape) < draw(st.sampled_from(fractions))
    axis = draw(st.one_of(st.none(), st.lists(st.integers(-nd, nd - 1), min_size=1,
                                              max_size=nd, unique_by=lambda v: v % nd)
                          .map(tuple)))
    return a, m, axis


@st.composite
def masked(draw):
    """An array of 1 to 3 dims (values of many magnitudes, so the order of
    the adds shows in the last bits; complex ones too), contiguous, strided,
    Fortran-ordered or transposed, now and then with one long axis (NumPy's
    chunks of 8192); a mask of its shape or broadcast from its last axis
    (NumPy gathers the inner loop's runs across rows then); axes."""
    dt = draw(st.sampled_from([np.float16, np.float32, np.float64, np.complex64,
                               np.complex128]))
    nd = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 20), min_size=nd, max_size=nd))
    if draw(st.integers(0, 5)) == 0:
        shape = [min(s, 3) for s in shape[:-1]] + [draw(st.integers(129, 17000))]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    steps = [draw(st.sampled_from([1, 1, 2])) for _ in shape]
    big = [s * k for s, k in zip(shape, steps)]
    full = rng.standard_normal(big) * 10.0 ** rng.integers(-3, 4, size=big)
    if np.dtype(dt).kind == "c":
        full = full + 1j * rng.standard_normal(big) * 10.0 ** rng.integers(-3, 4, size=big)
    return _laid_out(draw, rng, full.astype(dt), steps, [0.2, 0.7, 0.95])


@settings(max_examples=examples(60), **_SETTINGS)
@given(masked(), st.booleans(), st.sampled_from([None, 0.0, -0.0, 1.5, -7.25]))
def test_masked_sums_have_numpys_bits(case, keepdims, initial):
    a, m, axis = case
    kw = {} if initial is None else {"initial": initial}
    _check(lambda x, w: np.sum(x, axis=axis, keepdims=keepdims, where=w, **kw), a, m)


@settings(max_examples=examples(40), **_SETTINGS)
@given(masked(), st.sampled_from(["mean", "var", "std"]), st.booleans())
def test_masked_means_and_variances_have_numpys_bits(case, name, keepdims):
    a, m, axis = case
    # (a slice without elements is NumPy's NaN and warning: eagerly NumPy
    # computes the call again, compiled a run-time check hands it to eager)
    fn = getattr(np, name)
    _check(lambda x, w: fn(x, axis=axis, keepdims=keepdims, where=w), a, m)


@st.composite
def masked_f16(draw):
    """A float16 array of 1 to 3 dims of values near 1 in size (their
    products neither overflow nor vanish), contiguous, strided, Fortran or
    transposed; a mask of its shape or of its last axis; axes."""
    nd = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 9), min_size=nd, max_size=nd))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    steps = [draw(st.sampled_from([1, 1, 2])) for _ in shape]
    big = [s * k for s, k in zip(shape, steps)]
    full = rng.choice([-1.0, 1.0], big) * np.exp2(rng.uniform(-0.7, 0.7, big))
    return _laid_out(draw, rng, full.astype(np.float16), steps, [0.3, 0.7, 0.95])


@settings(max_examples=examples(40), **_SETTINGS)
@given(masked_f16(), st.booleans(), st.sampled_from([None, 1.0, -0.75, 3.5]))
def test_masked_float16_products_have_numpys_bits(case, keepdims, initial):
    # NumPy's float16 multiply loop rounds to float16 after each run of
    # unmasked elements (after each multiply down a kept axis innermost);
    # hop's where(mask, x, 1) product rounded after each inner loop
    a, m, axis = case
    kw = {} if initial is None else {"initial": initial}
    _check(lambda x, w: np.prod(x, axis=axis, keepdims=keepdims, where=w, **kw), a, m)


def _mprod(x, m, dims=None, keepdim=False, initial=1.0):
    return _C._op("masked_prod", x, dims, keepdim, m, _C.full((), initial, dtype=x.dtype))


def test_masked_prod_op_checks_its_operands_and_multiplies_as_numpy():
    x = hop.tensor(np.ones((2, 3)))
    with pytest.raises(hop.ShapeError, match="masked_prod: mask"):
        _mprod(x, hop.tensor(np.ones(3, bool)))
    with pytest.raises(hop.DTypeError, match="masked_prod: mask must be a bool tensor"):
        _mprod(x, hop.tensor(np.ones((2, 3))))
    with pytest.raises(hop.DTypeError, match="masked_prod: x must be a float or complex"):
        _C._op("masked_prod", hop.tensor(np.ones((2, 3), np.int64)), None, False,
               hop.tensor(np.ones((2, 3), bool)), _C.full((), 1, dtype=_C.int64))
    xn = np.array([[1.5, -2.0, 3.0e30], [1e30, 0.5, -4.0]], np.float32)
    mn = np.array([[True, False, True], [True, True, True]])
    for dims, kd in ((None, False), ([1], True), ([0], False)):
        ax = None if dims is None else tuple(dims)
        got = np.asarray(_mprod(hop.tensor(xn), hop.tensor(mn), dims, kd, 2.0))
        with np.errstate(over="ignore"):  # (float32's inf, as hop's)
            want = np.prod(xn, axis=ax, keepdims=kd, where=mn, initial=2.0)
        assert got.tobytes() == want.tobytes() and got.shape == want.shape, (got, want)
    zn = (xn[:, :2] + 1j * xn[::-1, :2]).astype(np.complex128)
    got = np.asarray(_mprod(hop.tensor(zn), hop.tensor(mn[:, :2]), [1]))
    np.testing.assert_array_equal(got, np.prod(zn, axis=1, where=mn[:, :2]))


def test_masked_prod_gradient_tangent_and_batch():
    xn = np.array([[1.5, 2.0, -3.0], [0.0, 4.0, 0.5]])
    mn = np.array([[True, False, True], [True, True, False]])
    m = hop.tensor(mn)
    g = hop.grad(lambda x: _mprod(x, m, [1], False, 2.0).sum())(hop.tensor(xn))
    # (d/dx_i of 2 * prod of x's unmasked elements: 2 times the others; 0 where masked)
    np.testing.assert_array_equal(np.asarray(g), [[-6.0, 0.0, 3.0], [8.0, 0.0, 0.0]])
    gi = hop.grad(lambda i: _C._op("masked_prod", hop.tensor(xn), [1], False, m, i).sum())(
        _C.full((), 2.0, dtype=_C.float64))
    assert float(np.asarray(gi)) == -4.5 + 0.0
    out, t = hop.jvp(lambda x: _mprod(x, m, [1]), (hop.tensor(xn),),
                     (hop.tensor(np.ones((2, 3))),))
    np.testing.assert_array_equal(np.asarray(out), np.prod(xn, axis=1, where=mn))
    np.testing.assert_array_equal(np.asarray(t), [1.5 - 3.0, 4.0])
    row = hop.tensor(mn[0])
    got = hop.vmap(lambda r: _mprod(r, row, None, False, 1.5))(hop.tensor(xn))
    np.testing.assert_array_equal(np.asarray(got),
                                  np.prod(xn, axis=1, where=mn[0], initial=1.5))


# Regressions: each failed before (hop's sum of the zero-filled array).

# a run of unmasked elements of 16 (pairwise: eight accumulators) is not the
# zero-filled row's tree: ...447, not ...445
_X16 = np.array([-132435.8995628145, -24.836162209524854, 0.4204452380655215,
                 1136.0465324896427, 109.70639932180819, -552.6473205362324,
                 -7.847803553442783e-08, 74874577.07345912, 16.347830429585773,
                 2727687.7584472178, -0.00012333286640307716, -0.009582652054360888,
                 1600019.0889991114, 2.028824405086084e-06, -1.7321348424395847e-07,
                 -0.0008369619281702581])
_M16 = np.array([0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1], bool)


@pytest.mark.parametrize("src,a,m", [
    ("np.sum(a, where=m)", _X16, _M16),
    ("np.mean(a, where=m)", _X16, _M16),
    ("np.sum(a.astype(np.complex128) * (1 + 1j), where=m)", _X16, _M16),
    ("np.sum(np.stack([a, a]), axis=1, where=m)", _X16, _M16),
    # the issue's case: each masked-out element counts as nothing, initial once
    ("np.sum(a, axis=0, initial=5.0, where=m)", np.arange(6.0).reshape(3, 2),
     np.array([True, False])),
    # -0.0 from initial=-0.0 down a kept axis (NumPy skips the masked
    # elements; -0.0 + 0.0 was +0.0) and along a reduced one
    ("np.sum(a, axis=0, initial=-0.0, where=m)", np.full((3, 2), -0.0),
     np.array([[True, False], [False, False], [True, True]])),
    ("np.sum(a, initial=-0.0, where=m)", np.full(20, -0.0), np.arange(20) % 3 > 0),
    # float16: each run summed in float32 and stored as float16
    ("np.sum(a, where=m)", np.array([2048, 1, 1, 1, 1, 0, 1, 1], np.float16),
     np.array([1, 1, 1, 1, 0, 1, 1, 1], bool)),
])
def test_masked_sums_that_the_zero_filled_sum_rounded_otherwise(src, a, m):
    f = eval(f"lambda a, m: {src}", {"np": np})  # noqa: S307 (the list above)
    _check(f, a, m)


# Regressions of variances and empty slices: each failed before.
def _drawn(seed, shape, dt, fortran=False):
    """An array as masked() draws them (values of many magnitudes)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, size=shape)
    if np.dtype(dt).kind == "c":
        a = a + 1j * rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, size=shape)
    a = a.astype(dt)
    return np.asfortranarray(a) if fortran else a


_F3 = np.asfortranarray(np.arange(1.0, 19.0).reshape(2, 3, 3) ** 1.7)


@pytest.mark.parametrize("src,a,m", [
    # var summed the deviations in the C order of the mask hop had made of
    # the broadcast one (NumPy: the array's F order): the last bits
    ("np.var(a, axis=1, where=m)", _F3, np.array([False, True, True])),
    ("np.std(a, axis=(0, 2), where=m)", _drawn(2, (2, 3, 4), np.float64, True),
     np.array([True, True, False, True])),
    # complex64 var over all axes: NumPy divides the mean by its 0-d count
    # in complex64 (hop in complex128), and adds the squared parts in the
    # deviations' F order (hop's parts were C-ordered copies)
    ("np.var(a, where=m)", _drawn(116, (22,), np.complex64), np.arange(22) % 5 > 0),
    ("np.var(a, where=m)", _drawn(0, (2, 11, 1), np.complex64, True), np.array([True])),
    # a complex sum from initial=-0.0 over nothing is -0.0 (hop: +0.0)
    ("np.sum(a, initial=-0.0, where=m)", np.array([1 + 2j], np.complex64), np.array([False])),
    # an empty slice: NaN and NumPy's warning; eagerly NumPy's strides
    # (hop's C strides on the size-1 axis), compiled a 2-D result's warning
    ("np.var(a, axis=0, keepdims=True, where=m)", _F3[..., 0],
     np.array([True, False, True])),
    ("np.mean(a, keepdims=True, where=m)", _F3[:1, :1, 0], np.array([False])),
    ("np.std(a, axis=2, where=m)", _F3, np.array([[[True, False, True]], [[False] * 3]])),
])
def test_masked_variances_and_empty_slices_as_numpy(src, a, m):
    f = eval(f"lambda a, m: {src}", {"np": np})  # noqa: S307 (the list above)
    _check(f, a, m)


def test_issue_example_counts_initial_once():
    got = _check(lambda a, w: np.sum(a, axis=0, initial=5.0, where=w),
                 np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), [True, False])
    assert got.tolist() == [14.0, 5.0]


# ------------------------------------------------- the op in hop's own API

def _msum(x, m, dims=None, keepdim=False, initial=0.0):
    return _C._op("masked_sum", x, dims, keepdim, m, _C.full((), initial, dtype=x.dtype))


def test_masked_sum_op_checks_its_operands():
    x = hop.tensor(np.ones((2, 3)))
    with pytest.raises(hop.ShapeError, match="masked_sum: mask"):
        _msum(x, hop.tensor(np.ones(3, bool)))
    with pytest.raises(hop.DTypeError, match="masked_sum: mask must be a bool tensor"):
        _msum(x, hop.tensor(np.ones((2, 3))))
    with pytest.raises(hop.DTypeError, match="masked_sum: x must be a float or complex"):
        _C._op("masked_sum", hop.tensor(np.ones((2, 3), np.int64)), None, False,
               hop.tensor(np.ones((2, 3), bool)), _C.full((), 0, dtype=_C.int64))


def test_masked_sum_gradient_tangent_and_batch():
    xn = np.arange(6.0).reshape(2, 3)
    mn = np.array([[True, False, True], [False, True, True]])
    m = hop.tensor(mn)
    g = hop.grad(lambda x: _msum(x, m, [1]).sum())(hop.tensor(xn))
    np.testing.assert_array_equal(np.asarray(g), mn.astype(float))
    out, t = hop.jvp(lambda x: _msum(x, m, [1]), (hop.tensor(xn),),
                     (hop.tensor(np.ones((2, 3))),))
    np.testing.assert_array_equal(np.asarray(out), np.sum(xn, axis=1, where=mn))
    np.testing.assert_array_equal(np.asarray(t), mn.sum(1).astype(float))
    row = hop.tensor(mn[0])
    got = hop.vmap(lambda r: _msum(r, row, None, False, 1.5))(hop.tensor(xn))
    np.testing.assert_array_equal(np.asarray(got),
                                  np.sum(xn, axis=1, where=mn[0], initial=1.5))


# Sums with initial= and no where= (issue 29, item 2): NumPy's output element
# starts at initial and adds each inner loop's pairwise sum in turn; hop
# added initial to its whole sum, which rounds otherwise when an output gets
# more than one inner loop (several reduced axes that do not merge, a run
# longer than NumPy's buffer of 8192).  Compared bit for bit (before: within
# a tolerance).

def _check_unmasked(f, a):
    with np.errstate(all="ignore"):
        want = f(a)
        for what, call in (("eager", lambda: f(hnp.asarray(a))),
                           ("compiled", lambda: hop.compile(f)(a)),
                           ("traced", lambda: hop.trace(f, a)(a))):
            got = call()
            _same_bits(got, want, what)
            if isinstance(want, np.ndarray) and what != "traced":
                assert got.strides == want.strides, (what, got.strides, want.strides)


@settings(max_examples=examples(60), **_SETTINGS)
@given(masked(), st.booleans(), st.sampled_from([0.0, -0.0, 1.5, -7.25, 1e-3]))
def test_sums_with_initial_have_numpys_bits(case, keepdims, initial):
    a, _, axis = case
    _check_unmasked(lambda x: np.sum(x, axis=axis, keepdims=keepdims, initial=initial), a)


def _drawn(shape, dt, layout, seed=29):
    """Values of many magnitudes (the order of the adds shows in the last
    bits), of dtype dt, laid out C, F or transposed (T)."""
    r = np.random.default_rng(seed)
    a = r.standard_normal(shape) * 10.0 ** r.integers(-3, 4, size=shape)
    a = a * (1 + 1j) if np.dtype(dt).kind == "c" else a
    a = a.astype(dt)
    return np.asfortranarray(a) if layout == "F" else a.T if layout == "T" else a


# each gave other bits before
@pytest.mark.parametrize("shape,dt,layout,axis,initial", [
    ((2, 3, 4), np.float64, "T", (0, 2), 1e-3),
    ((3, 5, 7), np.float16, "C", (0, 2), 1.5),
    ((3, 5, 7), np.float16, "C", None, 1.5),
    ((2, 9000), np.float64, "F", 1, -7.25),
    ((20000,), np.complex128, "C", 0, 1.5),
    ((5, 4, 3), np.complex128, "T", (0, 2), 1e-3),
])
def test_sum_with_initial_over_several_inner_loops_regressions(shape, dt, layout, axis, initial):
    _check_unmasked(lambda x: np.sum(x, axis=axis, initial=initial), _drawn(shape, dt, layout))


# Float products with initial= (issue 29, item 2): NumPy's loop multiplies
# each output from initial by its elements one at a time in its iterator's
# order, ((initial * x0) * x1) ...; over several axes hop multiplied
# (x0 * x1 ...) * initial, and over all of them took the elements in C
# order, not the iterator's (a Fortran-ordered or transposed array).
@pytest.mark.parametrize("shape,dt,layout,axis", [
    ((3, 5, 7), np.float64, "C", (0, 2)),
    ((3, 5, 7), np.float64, "C", (1, 2)),
    ((4, 6, 2), np.float32, "F", (0, 1)),
    ((2, 3, 4, 5), np.float64, "T", (0, 2)),
    ((3, 5, 7), np.float64, "F", None),
    ((4, 6, 2), np.float32, "T", None),
])
@pytest.mark.parametrize("keepdims", [False, True])
def test_products_with_initial_have_numpys_bits(shape, dt, layout, axis, keepdims):
    r = np.random.default_rng(3)
    a = (1 + r.standard_normal(shape) * 0.1).astype(dt)
    a = np.asfortranarray(a) if layout == "F" else a.T if layout == "T" else a
    _check_unmasked(lambda x: np.prod(x, axis=axis, keepdims=keepdims, initial=1.25), a)


@settings(max_examples=examples(40), **_SETTINGS)
@given(masked(), st.booleans(), st.sampled_from([1.25, -0.5, 3.0]))
def test_float_products_with_initial_have_numpys_bits(case, keepdims, initial):
    a, _, axis = case
    if a.dtype.kind != "f" or a.dtype == np.float16:
        a = a.real.astype(np.float64)  # (float16's and complex products: not yet NumPy's)
    b = np.empty_like(a)  # (a's layout: K order)
    np.add(1, a / (10 * np.abs(a).max() + 1), out=b)  # (no overflow to inf)
    a = b
    _check_unmasked(lambda x: np.prod(x, axis=axis, keepdims=keepdims, initial=initial), a)


# A kept size-1 axis: NumPy's iterator gives it stride 0, so it orders
# nothing and stays where the sort of the other axes leaves it, and the new
# result gives it the product of the sizes inside it.  hop's masked sum
# permuted its result back into place, a view whose size-1 axes kept the
# permuted strides, and the reshape into NumPy's order kept them
# ((8, 16, 16) below, NumPy (8, 16, 8); found by --hypothesis-seed=9191).
def test_a_kept_size_one_axis_of_a_fortran_array_with_a_broadcast_mask_has_numpys_strides():
    a = np.asfortranarray(np.arange(4.0).reshape(2, 2, 1))
    _check(lambda x, w: np.sum(x, axis=1, keepdims=True, where=w), a, np.array([False]))


def _layouts(shape, dt):
    """An array of shape in C order, F order, strided (every other element)
    and transposed (its axes reversed in memory, then the first two swapped)."""
    rng = np.random.default_rng(len(shape) * 10 + shape[0])
    base = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dt)
    big = np.zeros([2 * n for n in shape], dt)
    big[tuple(slice(None, None, 2) for _ in shape)] = base
    perm = (1, 0) + tuple(range(2, len(shape)))
    return [base, np.asfortranarray(base), big[tuple(slice(None, None, 2) for _ in shape)],
            np.ascontiguousarray(base.transpose(perm)).transpose(perm)]


@pytest.mark.parametrize("shape,axis", [((2, 2, 1), 1), ((3, 1, 2), 2), ((1, 3, 2), (0, 2)),
                                        ((2, 3, 1), 0), ((3, 1), 0), ((2, 1, 1, 3), 3)])
@pytest.mark.parametrize("mask", ["one", "last", "first"])
@pytest.mark.parametrize("name", ["sum", "mean", "var", "std"])
def test_kept_size_one_axes_with_broadcast_masks_have_numpys_strides(shape, axis, mask, name):
    # (each F-ordered case with a size-1 axis last failed before: its kept
    # axes took F strides)
    m = {"one": np.array([True]), "last": np.arange(shape[-1]) % 2 == 0,
         "first": (np.arange(shape[0]) % 2 == 0).reshape((-1,) + (1,) * (len(shape) - 1))}[mask]
    fn = getattr(np, name)
    for a in _layouts(shape, np.float64) + _layouts(shape, np.float16):
        _check(lambda x, w: fn(x, axis=axis, keepdims=True, where=w), a, m)


@st.composite
def with_size_one_axes(draw):
    """An array of 2 to 4 dims, some of size 1 (C, F, strided or
    transposed), a mask broadcast to it (its last axis, a size-1 one, or
    with size-1 axes of its own) and axes to reduce."""
    nd = draw(st.integers(2, 4))
    shape = draw(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=nd, max_size=nd))
    dt = draw(st.sampled_from([np.float16, np.float32, np.float64, np.complex128]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)
    if np.dtype(dt).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    a = a.astype(dt)
    layout = draw(st.sampled_from(["C", "F", "S", "T"]))
    if layout == "F":
        a = np.asfortranarray(a)
    elif layout == "S":
        big = np.zeros([2 * n for n in shape], dt)
        big[tuple(slice(None, None, 2) for _ in shape)] = a
        a = big[tuple(slice(None, None, 2) for _ in shape)]
    elif layout == "T":
        p = draw(st.permutations(range(nd)))
        a = np.ascontiguousarray(a.transpose(np.argsort(p))).transpose(p)
    mshape = [n if draw(st.booleans()) else 1 for n in shape][draw(st.integers(0, nd - 1)):]
    m = rng.random(mshape) < 0.7
    axis = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True)
                .map(tuple))
    return a, m, axis


@settings(max_examples=examples(60), **_SETTINGS)
@given(with_size_one_axes(), st.sampled_from(["sum", "prod", "mean", "var", "std"]),
       st.booleans())
def test_where_reductions_keep_numpys_strides_of_size_one_axes(case, name, keepdims):
    a, m, axis = case
    if name == "prod" and (a.dtype == np.float16 or a.dtype.kind == "c"):
        # (float16's and complex products: not yet NumPy's bits)
        a = np.empty_like(a, np.float64)
        np.copyto(a, case[0].real)
    fn = getattr(np, name)
    _check(lambda x, w: fn(x, axis=axis, keepdims=keepdims, where=w), a, m)
