"""hop.compile's new arrays have NumPy 1.24's memory layout (issue 29,
docs/ARCHITECTURE.md "Arguments and results"): strides, contiguity flags
and writeability as NumPy's, for ufuncs with where=, arguments of a
symbolic size, size-1 and 0-size axes; and a property test drawing layouts
(C, F, transposed, sliced with steps, size-1 axes, 0-size) for a few
elementwise, reduction and where programs."""
import warnings

import numpy as np
import pytest

import hop


def _layout(r):
    return (type(r), r.dtype, r.shape, r.strides, r.flags.c_contiguous, r.flags.f_contiguous,
            r.flags.writeable)


def _fortran(shape, dtype=np.float64):
    return np.asfortranarray(np.arange(1, 1 + int(np.prod(shape)), dtype=dtype).reshape(shape))


def _same(fn, *args, mask=None, cf=None):
    """fn compiled (its trace's call and its plan's) and eagerly: layout and
    values (only where mask is true: NumPy leaves the rest of a where=
    result uninitialised)."""
    cf = cf or hop.compile(fn)
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = fn(*[a.copy(order="K") for a in args])
            got = cf(*[a.copy(order="K") for a in args])
        assert _layout(got) == _layout(want)
        if mask is None:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_array_equal(got[mask], want[mask])
    return cf


MASK = np.array([[True, False, True, True], [False, True, True, False],
                 [True, True, False, True]])


@pytest.mark.parametrize("mask", [MASK, np.asfortranarray(MASK), MASK[0]],
                         ids=["C", "F", "row"])
@pytest.mark.parametrize("fn", [
    lambda a, m: np.add(a, 1, where=m),
    lambda a, m: np.negative(a, where=m),
    lambda a, m: np.multiply(a, a, where=m),
], ids=["add", "negative", "multiply"])
def test_ufunc_with_where_is_in_numpys_order_of_operands_and_mask(fn, mask):
    # NumPy's iterator orders the result by the operands and the mask: a
    # Fortran-ordered argument with a C mask is C, with an F mask or a row
    # (broadcast: no say) Fortran
    a = _fortran((3, 4))
    full = np.broadcast_to(mask, a.shape)
    _same(fn, a, mask, mask=full)
    _same(fn, np.ascontiguousarray(a), mask, mask=full)


def test_ufunc_where_mask_of_more_dims_gives_numpys_result():
    a = np.arange(1.0, 5.0)
    m = np.asfortranarray(np.array([[True, False, True, True], [False, True, True, True]]))
    _same(lambda x, w: np.add(x, 1.5, where=w), a, m, mask=m)


def _size1_layouts():
    """Arrays with a size-1 axis in several layouts: NumPy's flags ignore
    such an axis, and where it goes in a new array depends on which of
    NumPy's allocations makes it."""
    base = np.arange(1.0, 13.0).reshape(3, 1, 4)
    big = np.zeros((6, 1, 8))
    big[::2, :, ::2] = base
    bigf = np.asfortranarray(np.zeros((6, 1, 8)))
    bigf[::2, :, ::2] = base
    return {
        "F(3,1,4)": np.asfortranarray(base),
        "F(1,3,4)": _fortran((1, 3, 4)),
        "F(3,4,1)": _fortran((3, 4, 1)),
        "transposed": np.ascontiguousarray(base.transpose(2, 1, 0)).transpose(2, 1, 0),
        "sliced": big[::2, :, ::2],
        "sliced F": bigf[::2, :, ::2],
        "sliced F(1,1,3)": np.asfortranarray(np.zeros((2, 2, 6)))[:1, :1, ::2],
    }


SIZE1_PROGRAMS = {
    # the trivial loop: C or F by the operands' flags
    "negative": lambda a: -a,
    "sqrt": np.sqrt,
    "add_scalar": lambda a: a + 1.5,
    "add_self": lambda a: a + a,
    # an input NumPy casts first: its iterator, where a size-1 axis stays put
    "add_float32": lambda a: a.astype(np.float32) + a,
    "compare_int": lambda a: a.astype(np.int32) > a,
    # PyArray_NewLikeArray: C, F, or the axes sorted by their own strides
    "copy_k": lambda a: a.copy(order="K"),
    "astype": lambda a: a.astype(np.float32),
    "zeros_like": np.zeros_like,
    "empty_like_shape": lambda a: np.full_like(a, 2.0),
    # NumPy's where: its iterator
    "where": lambda a: np.where(a > 3, a, -a),
    # a view of the new array
    "transpose_of_result": lambda a: (a * 2).T,
}


@pytest.mark.parametrize("layout", sorted(_size1_layouts()))
@pytest.mark.parametrize("name", sorted(SIZE1_PROGRAMS))
def test_size1_axes_have_numpys_strides(name, layout):
    _same(SIZE1_PROGRAMS[name], _size1_layouts()[layout])


def test_trivial_loop_decision_follows_each_calls_layout():
    # traced on a Fortran array with a size-1 axis, then called with a C one
    # and a sliced one: each call's strides are NumPy's
    cf = hop.compile(lambda a: a + 1)
    for layout in ["F(3,1,4)", "sliced", "transposed", "F(3,1,4)"]:
        _same(lambda a: a + 1, _size1_layouts()[layout], cf=cf)
    _same(lambda a: a + 1, np.arange(12.0).reshape(3, 1, 4), cf=cf)


def test_trivial_loop_decision_by_a_traced_scalars_value():
    # float32 array + a Python float: NumPy 1.24 casts by value, so 1e300
    # takes the float64 loop (the array is cast: its iterator) where 1.5
    # keeps float32 (the trivial loop)
    a = np.asfortranarray(np.arange(1, 13, dtype=np.float32).reshape(3, 1, 4))
    for v in (1.5, 1e300):
        _same(lambda x, s=v: x + s, a)


@pytest.mark.parametrize("make", [np.asfortranarray, lambda x: x.T.copy().T,
                                  lambda x: np.asfortranarray(np.tile(x, (2, 2)))[::2, ::2]],
                         ids=["F", "transposed", "sliced F"])
@pytest.mark.parametrize("name,fn", [
    ("add", lambda a: a + 1),
    ("negative", lambda a: -a),
    ("transpose", lambda a: (a * 2).T),
    ("copy_k", lambda a: a.copy(order="K")),
    ("copy_a", lambda a: a.copy(order="A")),
    ("astype", lambda a: a.astype(np.float32)),
    ("zeros_like", np.zeros_like),
    ("where", lambda a: np.where(a > 2, a, 0.0)),
    ("slice_add", lambda a: a[::2] + 1),
])
def test_argument_of_symbolic_size_keeps_numpys_order(name, fn, make):
    # dynamic=True: sizes are symbols, the layout is read from the
    # argument's example and checked for each call's argument
    cf = hop.compile(fn, dynamic=True)
    for shape in [(4, 5), (6, 7), (6, 5)]:
        a = make(np.arange(1.0, 1.0 + shape[0] * shape[1]).reshape(shape))
        _same(fn, a, cf=cf)
        _same(fn, np.ascontiguousarray(a), cf=cf)


@pytest.mark.parametrize("fn", [lambda a: a + 1, lambda a: -a, lambda a: a.copy(order="K"),
                                lambda a: np.where(a > 0, a, 1.0), lambda a: a.astype(np.int32)],
                         ids=["add", "negative", "copy", "where", "astype"])
def test_new_empty_array_has_numpys_zero_strides(fn):
    _same(fn, np.zeros((2, 0, 3)))
    _same(fn, np.asfortranarray(np.zeros((0, 4))))


# -- property test: drawn layouts through a few programs ---------------------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from budget import examples  # noqa: E402


@st.composite
def _laid_out(draw, shape):
    """An array of shape in a drawn layout: C, F, a transpose of a C array,
    a slice with steps (negative too) of a bigger C or F array."""
    n = int(np.prod(shape))
    base = np.arange(1.0, 1.0 + n).reshape(shape) - n // 2
    how = draw(st.sampled_from(["C", "F", "T", "sliced"]))
    if how == "C":
        return base.copy()
    if how == "F":
        return np.asfortranarray(base)
    if how == "T":
        perm = draw(st.permutations(range(len(shape))))
        inv = tuple(np.argsort(perm))
        return base.transpose(perm).copy().transpose(inv)
    steps = [draw(st.sampled_from([1, 2, -1, -2])) for _ in shape]
    big = np.zeros(tuple(k * abs(s) for k, s in zip(shape, steps)),
                   order=draw(st.sampled_from(["C", "F"])))
    key = tuple(slice(None, None, s) for s in steps)
    big[key] = base
    return big[key]


LAYOUT_PROGRAMS = {
    "negative": lambda a, b: -a,
    "add": lambda a, b: a + b,
    "multiply_scalar": lambda a, b: a * 3.0,
    "subtract_float32": lambda a, b: a - b.astype(np.float32),
    "maximum_first_row": lambda a, b: np.maximum(a, b[:1] if b.ndim else b),
    "where": lambda a, b: np.where(a > b, a, b),
    "ufunc_where": lambda a, b: np.add(a, b, where=a > 0),
    "copy": lambda a, b: a.copy(order="K"),
    "astype": lambda a, b: a.astype(np.float32),
    "ones_like": lambda a, b: np.ones_like(b),
    "sum_all": lambda a, b: np.sum(a, keepdims=False) + b,
    "sum_of_last": lambda a, b: (a + b).sum(axis=-1) if a.ndim == 2 else -a,
    "transpose_of_result": lambda a, b: (a + b).T,
    # reductions NumPy makes through its sums of a (copy of a) in a's order
    "nansum_first": lambda a, b: np.nansum(a / b, axis=0) if a.ndim else -a,
    "nanmean_last": lambda a, b: np.nanmean(a, axis=-1, keepdims=True) if a.ndim else -a,
    "mean_dtype_first": lambda a, b: a.mean(0, dtype=np.float32) if a.ndim else -a,
    "var_where_last": lambda a, b: a.var(-1, where=b > 0) if a.ndim else -a,
    "count_nonzero_no_axis": lambda a, b: np.count_nonzero(a, axis=()),
}


@settings(max_examples=examples(200), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_drawn_layouts_give_numpys_strides_and_flags(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    a = data.draw(_laid_out(shape))
    b = data.draw(_laid_out(shape))
    name = data.draw(st.sampled_from(sorted(LAYOUT_PROGRAMS)))
    fn = LAYOUT_PROGRAMS[name]
    mask = (a > 0) if name == "ufunc_where" else None
    if mask is not None and mask.ndim == 0:
        mask = None if mask else np.zeros((), bool)
    if mask is not None and not mask.any():
        return  # nothing written: every element is NumPy's uninitialised memory
    _same(fn, a, b, mask=mask)


def _reduction_layouts():
    base = np.arange(1.0, 25.0).reshape(2, 3, 4)
    return {
        "C": base,
        "F": np.asfortranarray(base),
        "transposed": base.transpose(2, 0, 1).copy().transpose(1, 2, 0),
        "sliced F": np.asfortranarray(np.zeros((4, 6, 8)))[::2, ::2, ::2] + 0 * base,
        "F(3,1,4)": _fortran((3, 1, 4)),
        "F(1,3,4)": _fortran((1, 3, 4)),
        "C(3,4,1) sliced": np.zeros((6, 8, 1))[::2, ::2],
    }


REDUCTIONS = {
    "sum_0": lambda a: a.sum(0),
    "sum_last": lambda a: a.sum(-1),
    "max_1": lambda a: a.max(1),
    "sum_0_keepdims": lambda a: a.sum(0, keepdims=True),
    "sum_02_keepdims": lambda a: a.sum((0, 2), keepdims=True),
    "prod_last": lambda a: a.prod(-1),
    "any_1": lambda a: np.any(a > 1, axis=1),
    "min_initial": lambda a: a.min(axis=2, initial=5.0),
    "sum_where": lambda a: a.sum(1, where=a > 2),
    "mean_0": lambda a: a.mean(0),
    "mean_keepdims": lambda a: a.mean(-1, keepdims=True),
    "std_0": lambda a: a.std(0),
    "var_01_keepdims": lambda a: a.var(axis=(0, 1), keepdims=True),
    "ptp_0": lambda a: np.ptp(a, axis=0),
    "ptp_1_keepdims": lambda a: np.ptp(a, axis=1, keepdims=True),
    "ptp_02": lambda a: a.ptp((0, 2)),
    "count_nonzero_0": lambda a: np.count_nonzero(a > 3, axis=0),
    "count_nonzero_2_keepdims": lambda a: np.count_nonzero(a, axis=2, keepdims=True),
    "count_nonzero_01": lambda a: np.count_nonzero(a - 2, axis=(0, 1)),
    "cumsum_1": lambda a: np.cumsum(a, axis=1),
    "cumprod_0_int": lambda a: (a % 3).astype(np.int32, order="K").cumprod(0),
    "cumsum_2_dtype": lambda a: a.cumsum(2, dtype=np.float32),
}


@pytest.mark.parametrize("layout", sorted(_reduction_layouts()))
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_result_is_in_numpys_order(name, layout):
    # NumPy's reduction iterator orders the argument's axes as its
    # elementwise iterator does and lays the result out in that order
    a = _reduction_layouts()[layout]
    fn = REDUCTIONS[name]
    cf = hop.compile(fn)
    for _ in range(2):
        want, got = fn(a.copy(order="K")), cf(a.copy(order="K"))
        assert _layout(got) == _layout(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)


# -- the other reductions: nan functions, order statistics, dtype=/where= --

def _with_nan(a):
    a = a.copy(order="K")
    a[(0,) * a.ndim] = np.nan
    return a


STATISTICS = {
    "nansum_0": lambda a: np.nansum(a, 0),
    "nansum_last_keepdims": lambda a: np.nansum(a, -1, keepdims=True),
    "nanprod_1": lambda a: np.nanprod(a, 1),
    "nanmean_0": lambda a: np.nanmean(a, 0),
    "nanmean_where": lambda a: np.nanmean(a, 1, where=a > 3),
    "nanmax_0": lambda a: np.nanmax(a, 0),
    "nanmin_last": lambda a: np.nanmin(a, -1),
    "nanmax_initial": lambda a: np.nanmax(a, 1, initial=4.0),
    "nanvar_0": lambda a: np.nanvar(a, 0),
    "nanstd_02_keepdims": lambda a: np.nanstd(a, (0, 2), keepdims=True),
    "nancumsum_0": lambda a: np.nancumsum(a, 0),
    "nancumprod_last": lambda a: np.nancumprod(a, -1),
    "median_0": lambda a: np.median(a, 0),
    "median_last_keepdims": lambda a: np.median(a, -1, keepdims=True),
    "median_01": lambda a: np.median(a, (0, 1)),
    "nanmedian_0": lambda a: np.nanmedian(a, 0),
    "nanmedian_1_keepdims": lambda a: np.nanmedian(a, 1, keepdims=True),
    "quantile_0": lambda a: np.quantile(a, [0.25, 0.5], axis=0),
    "percentile_last": lambda a: np.percentile(a, 40, axis=-1),
    "nanquantile_0": lambda a: np.nanquantile(a, 0.3, axis=0),
    "average_0": lambda a: np.average(a, 0),
    "average_weights": lambda a: np.average(a, -1, weights=np.arange(1.0, 1.0 + a.shape[-1])),
    "mean_dtype": lambda a: a.mean(0, dtype=np.float32),
    "mean_where": lambda a: a.mean(1, where=a > 2),
    "var_dtype": lambda a: a.var(-1, dtype=np.float32),
    "std_dtype_keepdims": lambda a: np.std(a, 0, dtype=np.float64, keepdims=True),
    "var_where": lambda a: np.var(a, 0, where=a > 2),
    "count_nonzero_none": lambda a: np.count_nonzero(a, axis=()),
    "sum_none": lambda a: np.sum(a, axis=()),
}


@pytest.mark.parametrize("layout", sorted(_reduction_layouts()))
@pytest.mark.parametrize("name", sorted(STATISTICS))
def test_statistics_result_is_in_numpys_order(name, layout):
    # NumPy computes these with its reductions of the argument or of a copy
    # of it in its order (K), so their results follow the argument's order;
    # the quantiles and a median over several axes are C-ordered copies, and
    # median's keepdims is a view with a new axis (stride 0)
    a = _with_nan(_reduction_layouts()[layout])
    fn = STATISTICS[name]
    cf = hop.compile(fn)
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want, got = fn(a.copy(order="K")), cf(a.copy(order="K"))
        assert _layout(got) == _layout(want)
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("shape,new", [((0, 4), (4, 0)), ((0, 4), (2, 0, 2)), ((3, 0), (0, 5)),
                                       ((2, 0, 3), (0, 6))])
def test_reshape_of_an_empty_computed_array_has_numpys_strides(shape, new):
    # the computed array has zero strides; NumPy's reshape of it fills in
    # C strides, a 0 dim counted as 1
    _same(lambda a: (a + 1).reshape(new), np.ones(shape))
    _same(lambda a: (a * 2).reshape(new), np.asfortranarray(np.ones(shape)))


def test_ptp_of_bool_raises_numpys_type_error():
    import hop.numpy as hnp
    b = np.array([[True, False], [True, True]])
    calls = [lambda: np.ptp(b, axis=0), lambda: hop.compile(lambda a: np.ptp(a))(b),
             lambda: hop.compile(lambda a: np.ptp(a, axis=0))(b),
             lambda: hnp.ptp(hnp.asarray(b), axis=0), lambda: hnp.asarray(b).ptp(),
             lambda: hop.compile(lambda a: np.ptp(a, 0, out=np.empty(2, bool)))(b),
             lambda: hop.compile(lambda a: np.ptp(a))(hnp.asarray(b))]
    for call in calls:
        with pytest.raises(TypeError) as e:
            call()
        assert type(e.value) is TypeError
        assert str(e.value).startswith("numpy boolean subtract, the `-` operator, is not supported")
