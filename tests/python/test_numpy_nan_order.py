"""hop.numpy's nan reductions, std with dtype= and complex products against
NumPy 1.24, bit for bit, eagerly and compiled, in the argument's layout.

Each test failed before its fix (found by a reduction campaign of
2026-11-30 with fresh seeds)."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp

from test_numpy_summation_order import _check


def _fortran_f16():
    return np.asfortranarray(np.array([[1.257, -1.321, 6.402, 1.049],
                                       [-5.355, 3.615, 13.04, 9.47]], dtype=np.float16))


@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanprod"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_nan_reductions_of_a_fortran_array_add_in_its_memory_order(name, keepdims):
    # NumPy's _replace_nan copies the array in K order and sums that copy:
    # down axis -1 of a Fortran array a kept axis is innermost, so each
    # output is the sequential float16 sum (7.383), not the float32 one
    # (7.387).  hop's where() made a C-ordered copy
    fn = getattr(np, name)
    a = _fortran_f16()
    _check(lambda x: fn(x, axis=-1, keepdims=keepdims), a)
    b = a.copy(order="F")
    b[0, 1] = np.nan
    _check(lambda x: fn(x, axis=-1, keepdims=keepdims), b)
    _check(lambda x: fn(x, axis=1), np.asfortranarray(np.stack([a, b])))


def test_nansum_of_a_fortran_array_is_the_sum_of_its_copy():
    a = _fortran_f16()
    want = np.sum(a, axis=-1)
    got = hnp.nansum(hnp.asarray(a), axis=-1)
    assert np.asarray(got).tobytes() == want.tobytes(), (got, want)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32])
def test_nansum_takes_initial_and_where_as_numpys(dt):
    # NumPy 1.24's nansum(a, axis, dtype, out, keepdims, initial, where);
    # hop's had no initial= or where= (TypeError)
    a = np.array([[1.5, np.nan, 2.25], [4.0, 0.5, np.nan]]).astype(dt) if dt != np.int32 \
        else np.array([[1, 2, 3], [4, 5, 6]], dt)
    w = np.array([True, False, True])
    _check(lambda x: np.nansum(x, initial=2.5), a)
    _check(lambda x: np.nansum(x, axis=1, initial=-3), a)
    _check(lambda x: np.nansum(x, axis=0, where=w), a)
    _check(lambda x: np.nansum(x, axis=1, keepdims=True, initial=1, where=w), a)
    _check(lambda x: np.nansum(x, where=w), a)


def _int_fortran():
    return np.asfortranarray(np.arange(9, dtype=np.int32).reshape(3, 3))


def _outcome(f):
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001 (compared below)
        return None, e


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("axis", [None, (0, 1)])
def test_std_with_an_integer_dtype_and_keepdims_raises_numpys_error(layout, axis):
    # NumPy's _std: sqrt(ret, out=ret) of the keepdims array (int8: its
    # same_kind error); hop reduced a Fortran array without keepdims (its
    # permuted reduction) and took the scalar's root, int8(2)
    a = np.asarray(_int_fortran(), order=layout)
    f = lambda x: np.std(x, axis=axis, keepdims=True, dtype=np.int8)  # noqa: E731
    _, want = _outcome(lambda: f(a))
    assert isinstance(want, TypeError) and "Cannot cast ufunc 'sqrt' output" in str(want)
    for how, call in (("eager", lambda: f(hnp.asarray(a))),
                      ("compiled", lambda: hop.compile(f)(a))):
        got, err = _outcome(call)
        assert type(err) is type(want), (how, got, err)
        assert str(err) == str(want), how


@pytest.mark.parametrize("layout", ["C", "F"])
def test_std_with_an_integer_dtype_of_all_axes_is_numpys_scalar(layout):
    # without keepdims NumPy's result is a scalar: ret.dtype.type(sqrt(ret))
    a = np.asarray(_int_fortran(), order=layout)
    _check(lambda x: np.std(x, dtype=np.int8), a)
    _check(lambda x: np.std(x, axis=(0, 1), dtype=np.int8), a)
    _check(lambda x: np.std(x, keepdims=True, dtype=np.float32), a)
    _check(lambda x: np.std(x, dtype=np.int8, keepdims=True), np.array(4, np.int32))


def _complex(n, dt, seed=0):
    rng = np.random.default_rng(seed)
    return ((rng.standard_normal(n) + 1j * rng.standard_normal(n)) * 3).astype(dt)


@pytest.mark.parametrize("n", [2, 4, 12, 19, 40])
def test_complex64_products_multiply_in_complex64(n):
    # NumPy's multiply.reduce of complex64: the textbook product in float,
    # each part stored as float (np.prod of 12 elements -98082.8+16972.625j);
    # hop multiplied in double complex (-98082.8+16972.615j)
    x = _complex(n, np.complex64)
    _check(np.prod, x)
    _check(lambda v: np.prod(v.reshape(1, -1), axis=1), x)
    _check(lambda v: np.cumprod(v)[-1:], x)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_complex_products_multiply_in_numpys_iterator_order(axis):
    # a complex product is not associative: NumPy's iterator visits a
    # Fortran array's axis 0 innermost; hop multiplied in C order
    x = np.asfortranarray(_complex(30, np.complex64, seed=3).reshape(5, 6))
    _check(lambda v: np.prod(v, axis=axis), x)
    _check(lambda v: np.prod(v, axis=axis, keepdims=True), x.T)
    _check(lambda v: np.nanprod(v, axis=axis), x)


def _avx512f():
    try:
        with open("/proc/cpuinfo") as f:
            return " avx512f" in f.read()
    except OSError:
        return False


@pytest.mark.xfail(_avx512f(), strict=True, reason=(
    "NumPy 1.24's AVX512F complex128 multiply loop, which a reduction and an operand of "
    "stride 0 take, rounds each part by an FMA (re = fma(ar, br, -(ai*bi)), im = fma(ar, bi, "
    "ai*br)); hop's complex128 product is the textbook one in every loop"))
def test_complex128_products_of_a_broadcast_operand_are_numpys():
    x = _complex(12, np.complex128, seed=3)
    _check(np.prod, x)
    _check(lambda v: v * v[5], x)


@pytest.mark.parametrize("dt", [np.float16, np.float64, np.complex64])
def test_masked_products_multiply_in_numpys_iterator_order(dt):
    # prod(where=) of a Fortran array: NumPy's iterator of the array and
    # the broadcast mask (stride 0 down axis 0: it orders nothing) visits
    # axis 0 innermost; hop's where(mask, x, 1) was C-ordered, so its
    # product multiplied across the rows (2.3737985177537544e+16, NumPy's
    # ...548e+16)
    x = np.asfortranarray(np.array([[-89.98471043, 112.27745532, 60.307244, 76.09068234],
                                    [69.84923388, -93.9721777, 204.95185218, -77.93891715],
                                    [31.84286952, 67.60847745, 29.27044522, 15.51009087]]))
    if dt == np.complex64:
        x = x + 1j * x[::-1]
    x = np.asfortranarray(x.astype(dt) / (8 if dt == np.float16 else 1))
    w = np.array([False, True, True, True])
    _check(lambda v: np.prod(v, where=w), x)
    _check(lambda v: np.prod(v, where=w, keepdims=True), x)
    _check(lambda v: np.prod(v, axis=1, where=w), x)


def test_a_masked_float16_product_rounds_at_each_run_as_numpy():
    # NumPy's float16 multiply loop carries float32 through one call and
    # stores float16 at its end, and a masked reduction calls it once per
    # run of unmasked elements: a rounding at each run's end.  hop's
    # where(mask, x, 1) product was one run (-302.5); the masked_prod op
    # is NumPy's loop
    x = np.array([[-3.336, -1.133, 6.13, 1.94, 1.989, -1.542, -4.945, 0.5024]], np.float16)
    w = np.array([True, False, True, True, False, True, True, False])
    assert np.prod(x, axis=1, where=w)[0] == np.float16(-302.8)
    _check(lambda v: np.prod(v, axis=1, where=w), x)
    _check(lambda v: np.prod(v, where=w), x)
    _check(lambda v: np.prod(v, axis=1, where=w, initial=1.5, keepdims=True), x)
    _check(lambda v: np.prod(v, axis=0, where=w), np.concatenate([x, x[:, ::-1]]))
    _check(lambda v: np.prod(v, axis=1, where=w), np.asfortranarray(np.concatenate([x, -x])))
    x[0, 3] = np.nan
    _check(lambda v: np.nanprod(v, axis=1, where=w), x)
    _check(lambda v: np.prod(v, axis=1, where=w, dtype=np.float16), x.astype(np.float32))


def _fortran_f32(seed):
    rng = np.random.default_rng(seed)
    return np.asfortranarray((rng.standard_normal((5, 4)) *
                              10.0 ** rng.integers(-3, 4, (5, 4))).astype(np.float32))


def test_nan_sums_with_where_of_a_fortran_array_add_in_numpys_order():
    # the masked reduction of the NaN-replaced copy (a tensor, its mask
    # broadcast to the array's shape) took its order from that full mask's
    # C strides: C order, where NumPy's iterator of the copy and the mask as
    # given (a broadcast one's stride-0 axes order nothing) runs down axis 0
    w = np.array([True, False, True, True])
    _check(lambda v: np.nansum(v, where=w), _fortran_f32(0))  # -488.725, hop -488.72498


@pytest.mark.filterwarnings("ignore:Mean of empty slice")  # (NumPy's too: column 1 masked)
@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmean"])
@pytest.mark.parametrize("kw", [{}, {"axis": 1}, {"axis": 1, "keepdims": True}, {"axis": 0}])
@pytest.mark.parametrize("seed", [0, 1, 3])
def test_nan_reductions_with_where_visit_in_numpys_iterator_order(name, kw, seed):
    w = np.array([True, False, True, True])
    fn = getattr(np, name)
    x = _fortran_f32(seed)
    _check(lambda v: fn(v, where=w, **kw), x)
    x[2, 2] = np.nan
    _check(lambda v: fn(v, where=w, **kw), x)
    t = np.ascontiguousarray(x.T).T[:, ::-1]  # (a transposed, reversed view)
    _check(lambda v: fn(v, where=w, **kw), t)


@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"axis": 1, "keepdims": True},
                                {"axis": 1, "where": np.array([True, False, True, True])}])
def test_nanvar_of_a_fortran_array_adds_in_numpys_order(name, kw):
    # NumPy's nanvar computes the NaN-replaced copy, the deviations and
    # their squares in place, in the array's K order, and sums them in it;
    # hop's temporaries were C-ordered (np.nanvar 63.956234, hop 63.956226)
    rng = np.random.default_rng(0)
    x = np.asfortranarray((rng.standard_normal((5, 4)) * 10).astype(np.float32))
    x[1, 2] = np.nan
    fn = getattr(np, name)
    _check(lambda v: fn(v, **kw), x)
    _check(lambda v: fn(v, **kw), np.asfortranarray(x.astype(np.float16)))


def test_nanvar_of_complex64_divides_the_mean_as_numpy():
    # NumPy's _divide_by_count: divide(avg, cnt, out=avg, casting='unsafe'),
    # complex64 over intp in complex128, rounded back to complex64 before
    # the deviations; hop divided in complex64 (np.nanvar 202.28146, hop
    # 202.28143), np.var agreed
    for seed in (5, 47):
        rng = np.random.default_rng(seed)
        x = ((rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))) *
             10.0 ** rng.integers(-1, 3)).astype(np.complex64)
        if seed == 47:
            x[rng.random(x.shape) < .3] = np.nan
        for kw in ({}, {"axis": 0}, {"axis": 1, "keepdims": True}):
            _check(lambda v: np.nanvar(v, **kw), x)
            _check(lambda v: np.nanstd(v, **kw), x)


@pytest.mark.xfail(_avx512f(), strict=True, reason=(
    "NumPy's nanvar squares complex128 deviations in place (multiply(arr, arr.conj(), "
    "out=arr)), which takes its AVX512F loop on such a machine, rounding by FMAs; hop's "
    "product is the textbook one"))
def test_nanvar_of_complex128_is_numpys():
    rng = np.random.default_rng(1)
    x = ((rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))) * 10)
    _check(lambda v: np.nanvar(v, axis=1), x)


@pytest.mark.parametrize("name", ["prod", "nanprod", "sum", "nansum"])
@pytest.mark.parametrize("src, kw", [
    ("np.array(3.0)", {"initial": 2.5}),
    ("np.array(3, np.int8)", {"dtype": np.float32, "initial": -3}),
    ("np.array(3.0)", {"keepdims": True, "initial": 0, "where": False}),
    ("np.array(np.nan)", {"initial": 2.5}),
    ("np.array(1.5, np.float16)", {"initial": 2.5, "keepdims": True})])
def test_a_float_reduction_of_a_0d_array_with_initial_is_numpys(name, src, kw):
    # a 0-d array reduces over no axis: NumPy's initial combined with the
    # one element (np.prod(np.array(3.0), initial=2.5) is 7.5); hop put
    # initial in front of axis 0 of the 0-d array: IndexError
    fn = getattr(np, name)
    _check(lambda v: fn(v, **kw), eval(src))  # noqa: S307 (the sources above)


@pytest.mark.parametrize("name", ["prod", "sum"])
@pytest.mark.parametrize("dt", [None, np.float16])
def test_initial_of_a_fortran_array_starts_numpys_accumulator_in_its_order(name, dt):
    # NumPy's accumulator starts at initial and, a kept axis innermost in
    # memory, multiplies element by element rounding to float16 each time;
    # hop concatenated initial C-ordered, so its reduced axis was innermost
    # and float16 carried float32 (np.prod 308.5, hop 308.8)
    rng = np.random.default_rng(0)
    a = np.asfortranarray(rng.standard_normal((4, 2, 2)) * 10)
    fn = getattr(np, name)
    for axis in (1, 2):
        _check(lambda v: fn(v, axis=axis, dtype=dt, initial=2.5), a)
        _check(lambda v: fn(v, axis=axis, dtype=dt, initial=2.5, keepdims=True), a)
