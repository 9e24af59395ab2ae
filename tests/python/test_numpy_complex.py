"""complex64/complex128 in hop.numpy (issue #29) against NumPy: creation,
arithmetic with real arrays and Python/NumPy complex scalars, the complex
ufuncs, parts and setters, reductions, matmul/dot/vdot, setitem, the
promotions, NumPy's TypeErrors; hop's own ordering ops refuse complex
tensors with a clear error (hop.numpy's NumPy order: test_numpy_complex_order.py); gradients of real
functions of complex arguments in JAX's convention against central
differences in the real and imaginary parts."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from numpy_diff import check

RNG = np.random.default_rng(0)
Z = RNG.standard_normal(6) + 1j * RNG.standard_normal(6)
Z32 = Z.astype(np.complex64)
ZM = Z.reshape(2, 3)
X = RNG.standard_normal(6)


def _set(a, key, v):
    a[key] = v
    return a


CASES = {  # name -> (function, arguments); float64 parts within 1e-12, float32 within 1e-5
    "add_real": (lambda a, b: a + b, Z, X), "mul": (lambda a, b: a * b, Z, Z),
    "div": (lambda a, b: a / b, Z, Z[::-1]),
    "sub_32": (lambda a, b: a - b, Z32, X.astype(np.float32)),
    "complex64_times_float64_is_complex128": (lambda a, b: a * b, Z32, X),
    "python_complex_scalar": (lambda a: a * 1j, X),
    "python_complex_scalar_32": (lambda a: a * (1 + 2j), X.astype(np.float32)),
    "numpy_complex_scalar": (lambda a: a + np.complex64(2 - 1j), X.astype(np.float32)),
    "abs": (lambda a: np.abs(a), Z), "abs_32": (lambda a: np.abs(a), Z32),
    "exp": (lambda a: np.exp(a), Z), "log": (lambda a: np.log(a), Z),
    "sqrt": (lambda a: np.sqrt(a), Z), "sin": (lambda a: np.sin(a), Z),
    "cos": (lambda a: np.cos(a), Z), "tanh": (lambda a: np.tanh(a), Z),
    "square": (lambda a: np.square(a), Z), "reciprocal": (lambda a: np.reciprocal(a), Z),
    "power_int": (lambda a: a ** 2, Z), "power_complex": (lambda a: a ** (0.5 + 1j), Z),
    "real": (lambda a: np.real(a), Z), "imag_attr": (lambda a: a.imag, Z),
    "conj": (lambda a: np.conj(a), Z), "conj_method": (lambda a: a.conj(), ZM),
    "conjugate_method_of_a_view": (lambda a: a @ a.T.conjugate(), ZM), "angle": (lambda a: np.angle(a), Z),
    "angle_deg": (lambda a: np.angle(a, deg=True), Z),
    "real_of_real": (lambda a: np.real(a), X), "imag_of_real": (lambda a: np.imag(a), X),
    "iscomplex": (lambda a: np.iscomplex(a), Z), "isreal": (lambda a: np.isreal(a), X),
    "sum": (lambda a: np.sum(a), Z), "sum_axis": (lambda a: a.sum(axis=0), ZM),
    "mean": (lambda a: np.mean(a), Z), "prod": (lambda a: np.prod(a), Z),
    "cumsum": (lambda a: np.cumsum(a), Z), "cumprod": (lambda a: np.cumprod(a), Z),
    "var": (lambda a: np.var(a), Z), "std_axis": (lambda a: np.std(a, axis=1), ZM),
    "matmul": (lambda a, b: a @ b, ZM, ZM.T), "matvec": (lambda a, b: a @ b, ZM, Z[:3]),
    "dot": (lambda a, b: np.dot(a, b), Z, Z), "vdot_conjugates": (lambda a, b: np.vdot(a, b), Z, Z),
    "eq": (lambda a, b: a == b, Z, Z), "ne_scalar": (lambda a: a != 0, Z),
    "isnan": (lambda a: np.isnan(a), Z), "isfinite": (lambda a: np.isfinite(a), Z),
    "astype": (lambda a: a.astype(np.complex64), X),
    "zeros_complex": (lambda a: np.zeros(3, dtype=complex) + a[:3], X),
    "where": (lambda a: np.where(a.real > 0, a, 0), Z),
    "concatenate_promotes": (lambda a, b: np.concatenate([a, b]), Z, X),
    "set_real": (lambda a: (setattr(a, "real", 0), a)[1], Z),
    "set_imag_slice": (lambda a: (setattr(a[1:3], "imag", 5), a)[1], Z),
    "setitem_python_complex": (lambda a: _set(a, 0, 1 + 1j), Z),
    "setitem_numpy_complex_scalar": (lambda a: _set(a, 0, np.complex64(1 + 1j)), Z),
    "setitem_real_into_complex": (lambda a: _set(a, slice(1, None), 2), Z),
    "setitem_mask": (lambda a: _set(a, a.real > 0, 1j), Z),
    "setitem_int_array": (lambda a: _set(a, [0, 2], np.float32(1.5)), Z),
    "setitem_complex_into_float_is_a_type_error": (lambda a: _set(a, 0, 1j), X),
    "floor_is_a_type_error": (lambda a: np.floor(a), Z),
    "arctan2_is_a_type_error": (lambda a: np.arctan2(a, a), Z),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_matches_numpy(name):
    fn, *args = CASES[name]
    check(fn, *args, rtol=1e-5 if "32" in name else 1e-12)


@pytest.mark.parametrize("fn", [lambda a: a < a, lambda a: a.amax(), lambda a: a.argmax()],
                             ids=["less", "max", "argmax"])
def test_complex_orderings_of_hop_tensors_are_refused_with_a_clear_error(fn):
    # hop's own ops order real numbers only; hop.numpy orders complex ones
    # as NumPy does (test_numpy_complex_order.py)
    with pytest.raises(hop.DTypeError, match="complex dtypes are not supported, got c128"):
        hop.compile(fn)(hop.asarray(Z))


def test_complex_dtypes_are_hop_dtypes():
    t = hop.asarray(Z32)
    assert t.dtype == hop.complex64 and hop.complex128.itemsize == 16
    assert np.dtype(hop.complex64) == np.complex64
    np.testing.assert_array_equal(t.numpy(), Z32)
    assert hop.zeros(2, dtype=np.complex128).dtype == hop.complex128


def _fd(f, z, eps=1e-6):
    """JAX's gradient of a real f at complex z: df/dx - i df/dy."""
    out = np.zeros_like(z)
    for i in range(z.size):
        d = np.zeros_like(z)
        d[i] = eps
        gx = (float(f(hop.asarray(z + d))) - float(f(hop.asarray(z - d)))) / (2 * eps)
        gy = (float(f(hop.asarray(z + 1j * d))) - float(f(hop.asarray(z - 1j * d)))) / (2 * eps)
        out[i] = gx - 1j * gy
    return out


GRADS = {
    "abs_squared": lambda t: (hnp.abs(t) ** 2).sum(),
    "real_of_square": lambda t: hnp.real(t * t).sum(),
    "imag_of_exp": lambda t: hnp.imag(hnp.exp(t)).sum(),
    "abs_of_fft": lambda t: hnp.abs(hnp.fft.fft(t)).sum(),
    "det_of_outer": lambda t: hnp.real(hnp.linalg.det(hnp.outer(t[:2], t[:2]) + hnp.eye(2))),
    "angle": lambda t: hnp.angle(t).sum(),
    "conj_product": lambda t: hnp.real(hnp.conj(t) * t * t).sum(),
    "sqrt_over_z": lambda t: hnp.real(hnp.sqrt(t) / t).sum(),
    "matmul": lambda t: hnp.abs(hnp.outer(t, t) @ t).sum(),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_complex_gradients_follow_jax_convention(name):
    z = np.array([3 + 4j, 1 - 2j, -0.5 + 0.25j])
    f = GRADS[name]
    g = hop.grad(f)(hop.asarray(z))
    assert g.dtype == hop.complex128
    np.testing.assert_allclose(np.asarray(g.numpy()), _fd(f, z), rtol=1e-5, atol=1e-6)


def test_abs_squared_gradient_is_twice_the_conjugate():
    z = np.array([3 + 4j, 1 - 2j])
    g = hop.grad(lambda t: (hnp.abs(t) ** 2).sum())(hop.asarray(z))
    np.testing.assert_allclose(np.asarray(g.numpy()), 2 * np.conj(z))


def test_grad_of_a_complex_result_asks_for_a_real_one():
    with pytest.raises(hop.ShapeError, match=r"must return a float scalar .* got c128\[\]"):
        hop.grad(lambda t: (t * t).sum())(hop.asarray(Z))


def test_complex_graphs_and_tensors_save_and_load():
    import hop._saved as saved
    z = hop.asarray(Z)
    gm = hop.trace(lambda t: (hnp.fft.fft(hnp.conj(t)) * t).sum() + hnp.linalg.det(
        hnp.outer(t[:2], t[:2]) + hnp.eye(2)), z)
    again = saved.loads(saved.dumps(gm))
    assert again.code == gm.code and "c128" in gm.code
    np.testing.assert_array_equal(again(z).numpy(), gm(z).numpy())
    c = hop.asarray(Z32)
    back = saved.loads(saved.dumps(c))
    assert back.dtype == hop.complex64
    np.testing.assert_array_equal(back.numpy(), Z32)


def _special(dt):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(2000) + 1j * rng.standard_normal(2000)).astype(dt)
    sp = np.array([0, 1e-39j, 1e-39, np.inf, -np.inf * 1j, np.nan, 1e38 + 1e38j, 3e-45j,
                   complex(np.inf, np.nan), complex(1, np.inf), -0.0 - 0j, 2 + 3j], dt)
    return np.concatenate([a, sp * 1e-10, sp, sp * 1e10, np.repeat(sp, sp.size)]), \
        np.concatenate([a[::-1], sp, sp[::-1], sp, np.tile(sp, sp.size)])


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_arithmetic_is_numpys_bit_for_bit(dt):
    # NumPy's textbook product, Smith's division, nc_pow's integer powers and
    # its reciprocal loop (C's Annex G product/quotient differ at infinities
    # and overflow: 1 / 1.5e-39j in complex64 is NumPy's nan - inf j)
    a, b = _special(dt)
    fns = [lambda x, y: x * y, lambda x, y: x / y, lambda x, y: np.reciprocal(x),
           lambda x, y: x ** -1, lambda x, y: x ** 0.5, lambda x, y: np.power(x, -1)]
    fns += [lambda x, y, k=k: x ** k for k in (-12, -3, -2, 2, 3, 5, 50, 99)]
    for f in fns:
        got, want = hop.compile(f)(a, b), f(a, b)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_float_power_minus_one_and_half_are_numpys_reciprocal_and_sqrt():
    # NumPy's fast_scalar_power: x ** 0.5 is sqrt ((-inf) ** 0.5 is nan and
    # (-0.0) ** 0.5 is -0.0, where pow gives inf and 0.0)
    x = np.array([-0.0, -np.inf, 4.0, 2.0, -1.0])

    def inplace(a):
        a **= 0.5
        return a
    for f in (lambda a: a ** 0.5, lambda a: a ** -1, lambda a: a ** np.float32(0.5), inplace):
        got, want = hop.compile(f)(x.copy()), f(x.copy())
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    # a NumPy scalar's power is scalar math, without the fast path
    assert hop.compile(lambda a: a[1] ** 0.5)(x) == np.inf


def test_common_type_of_complex_arrays_is_complex_and_of_bool_ones_numpys_type_error():
    # hop gave float64 for complex64 and a KeyError for complex128
    check(lambda a, b, c: (np.common_type(a), np.common_type(b), np.common_type(a, X),
                           np.common_type(c, Z32), np.common_type(c)),
          Z32, Z, X.astype(np.float16))
    for args in ((hnp.asarray(Z32),), (hnp.asarray(Z), hnp.asarray(X)), (hnp.asarray(X),)):
        assert hnp.common_type(*args) is np.common_type(*[np.asarray(a) for a in args])
    with pytest.raises(TypeError, match="can't get common type for non-numeric array"):
        np.common_type(np.array([True]))
    with pytest.raises(TypeError, match="can't get common type for non-numeric array"):
        hnp.common_type(hnp.asarray(np.array([True])))


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_sign_of_a_complex_with_a_nan_part_is_nan_as_numpys(dt):
    # NumPy 1.24 compares the complex with 0 (CGT, CLT, CEQ): a nan in
    # either part makes them all false, so sign(-1.5+nanj) is nan+0j; hop
    # gave -1+0j (the stress budget of test_numpy_campaign found it)
    vals = [complex(r, i) for r in (-1.5, 0.0, -0.0, 2.0, np.nan, np.inf, -np.inf)
            for i in (np.nan, 0.0, -0.0, 1.0, -1.0, np.inf)]
    a = np.array(vals, dt)
    want = np.sign(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = hop.compile(lambda a: np.sign(a))(a)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(hop.tensor(a).sign().numpy(), want)


@pytest.mark.parametrize("kw", [{}, {"copy": False}, {"nan": 5.0, "posinf": 7.0, "neginf": -7.0}],
                         ids=repr)
@pytest.mark.parametrize("x", [
    np.array([complex(np.nan, np.inf), 1 + 2j, complex(-np.inf, np.nan)]),
    np.array([complex(np.nan, -np.inf)], np.complex64), np.array(complex(np.inf, 1)),
    np.array(np.nan), np.array(3)], ids=lambda x: f"{x.dtype}{x.shape}")
def test_nan_to_num_of_complex_and_0d_arrays_is_numpys(x, kw):
    # NumPy replaces NaN and infinities in both parts of a complex array
    # (hop.numpy gave it back unchanged: nan+infj) and returns x[()] of a
    # 0-d array, a NumPy scalar (hop.numpy: a 0-d array, with copy=False
    # the argument itself)
    def run(mod, a):
        r = mod.nan_to_num(a, **kw)
        return (type(r) is (hnp.ndarray if mod is hnp else np.ndarray) and not
                getattr(r, "_scalar", False), r is a, np.asarray(r).dtype,
                repr(np.asarray(r).tolist()), repr(np.asarray(a).tolist()))
    a = x.copy()
    want = run(np, a)
    assert run(hnp, hnp.asarray(x.copy())) == want
    got = hop.compile(lambda y: np.nan_to_num(y, **kw))(x.copy())
    r = np.nan_to_num(x.copy(), **kw)
    assert type(got) is type(r) and np.asarray(got).dtype == np.asarray(r).dtype
    assert repr(np.asarray(got).tolist()) == repr(np.asarray(r).tolist())


@pytest.mark.parametrize("where", [True, [True, False, True]], ids=["all", "mask"])
@pytest.mark.parametrize("src", [1j, 2, 2.5, np.complex64(1 + 1j)], ids=repr)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_copyto_of_a_scalar_into_a_complex_array_is_numpys(dtype, src, where):
    # a Python or NumPy scalar into a complex array: hop.numpy raised
    # "full(): argument 'fill_value' must be a number ..., not hop.Tensor"
    # (its complex scalar is a 0-d tensor already)
    def fn(z):
        np.copyto(z, src, where=np.array(where))
        return z
    want = fn(np.zeros(3, dtype))
    got = fn(hnp.zeros(3, dtype))
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(hop.compile(fn)(np.zeros(3, dtype)), want)
