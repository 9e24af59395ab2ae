"""Regressions of NumPy-fidelity bugs found in the fortieth session,
against NumPy 1.24, compiled (hop.compile) and eagerly (hop.numpy arrays
through NumPy's functions, and hop.numpy's own): float_power and NumPy
scalars' ** by libm's pow (NumPy's float_power loop and its scalar math
call npy_pow, where power's float64 loop is SVML's); which NaN a complex
product with NaN parts gives (NumPy's SIMD and scalar loops' operand
orders); the eager fast path's casts done in C; and what a hypothesis
differential over ufuncs and reductions found (a traced complex128 0-d
operand's value-based cast, sums over no axes, max/min with initial,
empty complex products with initial, mean's warning in an integer
dtype).  Each case
compares the result's type, dtype, shape and bits, the exception's type
and text, the warnings, and the caller's arrays after the call."""

import os

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from numpy_ways import check_all_ways


def _bits(a):
    a = np.asarray(a)
    return a.dtype, a.shape, a.tobytes()


# ------------------------------------------------------------ float_power

def test_float_power_float64_is_libms_pow():
    # the finding: ~27% of float_power's float64 results were 1 ulp from
    # NumPy's (hop ran SVML's or SLEEF's vector pow, NumPy's loop libm's)
    rng = np.random.default_rng(40)
    a = rng.uniform(0.1, 10, 4096)
    b = rng.uniform(-5, 5, 4096)
    want = np.float_power(a, b)
    got = np.asarray(hnp.float_power(hnp.asarray(a), hnp.asarray(b)))
    assert got.tobytes() == want.tobytes()
    assert hop.compile(np.float_power)(a, b).tobytes() == want.tobytes()
    check_all_ways(np.float_power, a[:1001], b[:1001], direct=hnp.float_power)
    check_all_ways(lambda x, y: np.float_power(x[::3], y[1::3]), a, b)
    check_all_ways(lambda x: np.float_power(x, 2.7), a)
    check_all_ways(lambda x: np.float_power(1.7, x), b)
    check_all_ways(lambda x, y: np.float_power(x[:64, None], y[None, :64]), a, b)
    check_all_ways(lambda x, y: np.float_power(x[:50].reshape(5, 10).T, y[:10]), a, b)
    check_all_ways(lambda x, y: np.float_power(x[3], y[7]), a, b)


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.int64, np.uint8, bool])
def test_float_power_of_other_dtypes_is_float64_libm(dt):
    rng = np.random.default_rng(41)
    a = (rng.uniform(0, 5, 500)).astype(dt)
    b = (rng.uniform(-3, 3, 500)).astype(dt)
    check_all_ways(np.float_power, a, b, direct=hnp.float_power)
    check_all_ways(lambda x: np.float_power(x, 0.37), a)


def test_float_power_complex_and_specials():
    a = np.array([0.0, -0.0, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan, 1e300, -8.0, 0.5] * 3)
    b = np.array([-1.0, -3.0, np.nan, np.inf, 0.5, -0.5, 3.0, 0.0, 2.0, 1 / 3, -np.inf] * 3)
    for state in ("ignore", "warn"):
        check_all_ways(np.float_power, a, b, state=state)
        check_all_ways(np.float_power, a, b[::-1], state=state)
    rng = np.random.default_rng(42)
    z = rng.standard_normal(200) + 1j * rng.standard_normal(200)
    check_all_ways(np.float_power, z, z[::-1], direct=hnp.float_power)
    check_all_ways(np.float_power, z.astype(np.complex64), 2.5)


def test_float_power_grad_jvp_and_vmap_match_pow():
    x = hop.tensor([1.5, 2.0, 3.0], dtype=hop.float64)
    y = hop.tensor([2.0, 0.5, -1.0], dtype=hop.float64)
    fp = lambda a, b: hop._C._op("float_power", a, b).sum()  # noqa: E731
    pw = lambda a, b: (a ** b).sum()  # noqa: E731
    for argnums in (0, 1):
        g1 = hop.grad(fp, argnums=argnums)(x, y)
        g2 = hop.grad(pw, argnums=argnums)(x, y)
        np.testing.assert_allclose(np.asarray(g1), np.asarray(g2), rtol=1e-15)
    t = hop.tensor([1.0, -2.0, 0.5], dtype=hop.float64)
    p1, d1 = hop.jvp(lambda a, b: hop._C._op("float_power", a, b), (x, y), (t, t))
    p2, d2 = hop.jvp(lambda a, b: a ** b, (x, y), (t, t))
    np.testing.assert_allclose(np.asarray(d1), np.asarray(d2), rtol=1e-15)
    assert np.asarray(p1).tobytes() == np.float_power(np.asarray(x), np.asarray(y)).tobytes()
    v = hop.vmap(lambda a, b: hop._C._op("float_power", a, b))(x.reshape(3, 1), y.reshape(3, 1))
    assert np.asarray(v).ravel().tobytes() == np.float_power(
        np.asarray(x), np.asarray(y)).tobytes()


# ------------------------------------------------------------ NumPy scalars' **

KINDS = {
    "f64": lambda v: np.float64(v), "f32": lambda v: np.float32(v), "py": float,
    "pyint": lambda v: int(round(v)) or 2, "i64": lambda v: np.int64(round(v)),
    "i32": lambda v: np.int32(round(v)), "b": lambda v: v > 1,
}


@pytest.mark.parametrize("left", ["f64", "f32", "i64"])
@pytest.mark.parametrize("right", list(KINDS))
@pytest.mark.parametrize("state", ["ignore", "warn"])
def test_scalar_power_is_numpys_scalar_math(left, right, state):
    # the finding: `s ** y` of a NumPy scalar (a.sum(), a[i]) and a scalar
    # is NumPy's scalar math, libm's pow (np.float64(10) ** -1.0 is 0.1),
    # which hop computed by power's SVML loop (0.09999999999999999) under
    # hop.compile and under numpy.errstate(all='ignore')
    rng = np.random.default_rng(43)
    a = rng.uniform(0.1, 10, 24)
    b = rng.uniform(-5, 5, 24)
    if left == "i64" and right in ("pyint", "i64", "i32", "b"):
        b = np.abs(b)
    rb = KINDS[right]
    cast = {"f64": np.float64, "f32": np.float32, "i64": lambda v: np.round(v).astype(np.int64)}
    x = cast[left](a)
    ys = [rb(v) for v in b]

    def f(x):
        return tuple(np.sum(x[i:i + 1]) ** ys[i] for i in range(24))

    def g(x):
        return tuple(ys[i] ** x[i] for i in range(24))

    def h(x):
        return tuple(x[i] ** x[23 - i] for i in range(24))

    for fn in (f, g, h):
        want = [(type(r).__name__, _bits(r)) for r in _np_run(fn, x, state)]
        for got in (_np_run(hop.compile(fn), x, state), _np_run(fn, hnp.asarray(x), state)):
            assert [(type(r).__name__ if not isinstance(r, hnp.ndarray) else
                     type(np.asarray(r)[()]).__name__, _bits(r)) for r in got] == want


def _np_run(fn, x, state):
    with np.errstate(all=state):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return list(fn(x))


def test_float64_scalar_reciprocal_power_is_libms():
    def f(a):
        return np.sum(a) ** -1.0

    a = np.array([10.0])
    assert repr(f(a)) == "0.1"
    check_all_ways(f, a)
    check_all_ways(lambda x: 10.0 ** -np.sum(x), np.array([1.0]))
    check_all_ways(lambda x: np.float64(10.0) ** -x[0], np.array([1.0]))
    for state in ("ignore", "warn"):
        check_all_ways(lambda x: x[0] ** x[1], np.array([0.0, -1.0]), state=state)
        check_all_ways(lambda x: x[0] ** 2000.0, np.array([10.0]), state=state)
        check_all_ways(lambda x: x[0] ** x[1], np.array([-8.0, 1 / 3]), state=state)
        check_all_ways(lambda x: x[0] ** x[1], np.array([10.0, -1.0], np.float32), state=state)


# ------------------------------------------------------------ complex products with NaN parts

def _exact_complex(re, im, dt):
    z = np.empty(len(re), dt)
    part = np.float32 if dt == np.complex64 else np.float64
    z.view(part)[0::2] = re.astype(part)
    z.view(part)[1::2] = im.astype(part)
    return z


@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
def test_complex_product_nan_parts_are_numpys(dt):
    # the finding: which NaN (and so its sign) a product with NaN parts
    # gives: NumPy's SIMD loop computes the imaginary part as
    # (ai * br) + (ar * bi), its scalar loop (a broadcast operand) as
    # (ar * bi) + (ai * br), and x86 returns an operation's first NaN
    # operand; hop's compiler swapped products' operands, and its fused
    # broadcast kernel negated ai * bi's NaN: (-nan+nanj) * (nan+nanj)
    # gave nan+nanj, NumPy -nan+nanj (view('u8') tells them apart)
    rng = np.random.default_rng(44)
    pool = np.concatenate([np.array([np.nan, -np.nan, 0.0, -0.0, 1.5, -2.5, np.inf, -np.inf]),
                           np.array([0x7FF8000000000001, 0xFFF8000000000002],
                                    np.uint64).view(np.float64)])
    n = 3000
    a = _exact_complex(rng.choice(pool, n), rng.choice(pool, n), dt)
    b = _exact_complex(rng.choice(pool, n), rng.choice(pool, n), dt)
    u = "u8" if dt == np.complex128 else "u4"
    with np.errstate(all="ignore"):
        want = (a * b).view(u)
        assert np.asarray(hnp.asarray(a) * hnp.asarray(b)).view(u).tobytes() == want.tobytes()
    check_all_ways(np.multiply, a, b, direct=hnp.multiply)
    check_all_ways(lambda x, y: x * y[7], a, b)
    check_all_ways(lambda x, y: y[11] * x, a, b)
    check_all_ways(lambda x, y: x[:60, None] * y[None, :50], a, b)
    check_all_ways(lambda x, y: x[:100].reshape(10, 10) * y[:10], a, b)
    for s in (dt(complex(np.nan, 1)), dt(complex(1, -np.nan)), dt(complex(-np.nan, 0)),
              dt(complex(np.inf, np.nan)), dt(complex(0.0, np.inf))):
        check_all_ways(lambda x: x * s, a)
        check_all_ways(lambda x: s * x, a)


def test_complex_product_nan_from_inf_times_zero_beside_a_nan():
    # NumPy's broadcast complex128 loop fuses ar * bi + (ai * br): a NaN
    # addend wins over the NaN inf * 0 makes (the default NaN, negative)
    a = np.array([complex(np.inf, np.nan)] * 4)
    s = np.complex128(complex(-np.nan, 0.0))
    check_all_ways(lambda x: x * s, a)
    with np.errstate(all="ignore"):
        assert (np.asarray(hnp.asarray(a) * s).view("u8").tobytes() ==
                (a * s).view("u8").tobytes())


# ------------------------------------------------------------ the eager fast path's casts

@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16, np.int32, np.uint8, bool])
def test_r_times_complex_keeps_bits(dt):
    # the fast path casts an operand in C now (it called _core.cast):
    # the same values, dtypes and types as NumPy's
    r = (np.arange(16) * 0.37 - 2).astype(dt)
    for f in (lambda x: x * 2j, lambda x: 2j * x, lambda x: x + (1 - 1j), lambda x: x * 1.5,
              lambda x: x / np.float32(3), lambda x: x.sum() * 2j, lambda x: x[3] * 2j,
              lambda x: -x * np.complex64(1 + 2j)):
        check_all_ways(f, r)


# ------------------------------------------------------------ a differential hunt

DTYPES = [np.float16, np.float32, np.float64, np.complex64, np.complex128, np.int8, np.uint8,
          np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.bool_]
SPECIAL = [0.0, -0.0, 1.0, -1.5, 2.0, 3.0, np.nan, np.inf, -np.inf, 0.5, 7.0, -3.0]
UNARY = ["negative", "absolute", "sqrt", "exp", "log", "sin", "square", "sign", "floor",
         "rint", "isnan", "isfinite", "logical_not", "reciprocal", "tanh", "arctan"]
BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power",
          "float_power", "maximum", "minimum", "fmax", "fmin", "equal", "less", "greater_equal",
          "logical_and", "logical_xor", "arctan2", "hypot", "copysign", "bitwise_and",
          "left_shift"]
REDUCE = ["sum", "prod", "max", "min", "mean", "any", "all", "argmax", "nansum", "std"]


def _array(draw, st, dt):
    shape = draw(st.sampled_from([(), (0,), (1,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]))
    n = int(np.prod(shape))
    vals = draw(st.lists(st.sampled_from(SPECIAL), min_size=n, max_size=n))
    with np.errstate(all="ignore"):
        a = np.array(vals, np.float64).astype(dt).reshape(shape)
    layout = draw(st.sampled_from(["c", "f", "rev", "stride"]))
    if layout == "f":
        a = np.asfortranarray(a)
    elif layout == "rev" and a.ndim:
        a = a[::-1]
    elif layout == "stride" and a.ndim:
        b = np.repeat(a, 2, axis=-1)
        a = b[..., ::2]
    return a


def _hunt_case(draw, st):
    kind = draw(st.sampled_from(["unary", "binary", "reduce"]))
    dt = draw(st.sampled_from(DTYPES))
    a = _array(draw, st, dt)
    if kind == "unary":
        name = draw(st.sampled_from(UNARY))
        return f"np.{name}(x)", (lambda x: getattr(np, name)(x)), (a,)
    if kind == "binary":
        name = draw(st.sampled_from(BINARY))
        other = draw(st.sampled_from(["same", "bcast", "scalar", "pyfloat", "pyint", "dtype"]))
        if other == "same":
            b = _array(draw, st, draw(st.sampled_from(DTYPES)))
            if b.shape != a.shape:
                b = np.resize(b, a.shape) if b.size else np.zeros(a.shape, b.dtype)
        elif other == "bcast":
            m = a.shape[-1] if a.ndim else 1
            vals = draw(st.lists(st.sampled_from(SPECIAL), min_size=m, max_size=m))
            with np.errstate(all="ignore"):
                b = np.array(vals, np.float64).astype(draw(st.sampled_from(DTYPES)))
        elif other == "scalar":
            with np.errstate(all="ignore"):
                b = np.array(draw(st.sampled_from(SPECIAL[:6]))).astype(
                    draw(st.sampled_from(DTYPES)))[()]
        elif other == "pyfloat":
            b = draw(st.sampled_from(SPECIAL))
        elif other == "pyint":
            b = draw(st.sampled_from([0, 1, 2, 3, -1, 300]))
        else:
            with np.errstate(all="ignore"):
                b = np.array(draw(st.sampled_from(SPECIAL))).astype(draw(st.sampled_from(DTYPES)))
        return f"np.{name}(x, {other})", (lambda x, y: getattr(np, name)(x, y)), (a, b)
    name = draw(st.sampled_from(REDUCE))
    if name in ("max", "min") and a.dtype.kind == "f":
        # (which of zeros of both signs NumPy's SIMD max keeps is known to
        # differ eagerly: docs/ARCHITECTURE.md, _exact._ZERO_SIGN)
        a = a + a.dtype.type(0.0)
    if name in ("sum", "nansum", "mean", "std", "prod") and a.dtype.kind in "fc":
        # (NOT FIXED: which NaN a sum holding a NaN and inf - inf gives,
        # the summation order's: no -inf beside +inf here)
        with np.errstate(all="ignore"):
            a = np.where(np.isinf(a), np.inf, a).astype(a.dtype)
    kw = {}
    if a.ndim and draw(st.booleans()):
        kw["axis"] = draw(st.integers(-a.ndim, a.ndim - 1))
    if name not in ("argmax",) and draw(st.booleans()):
        kw["keepdims"] = True
    if name in ("sum", "prod", "max", "min") and draw(st.booleans()):
        kw["initial"] = draw(st.sampled_from([0, 1, 2.5, -np.inf]))
        if name == "prod" and kw["initial"] == -np.inf:
            # (NOT FIXED: a product's NaN from an infinite initial: complex
            # initial * x0 is computed as (1 * initial) * x0; float16's sign)
            kw["initial"] = 2.5
    if name in ("sum", "prod", "max", "min", "mean", "any", "all", "nansum") and \
            draw(st.booleans()):
        kw["where"] = np.broadcast_to(np.array(draw(st.lists(
            st.booleans(), min_size=1, max_size=1))), a.shape).copy() if a.ndim else True
        if name in ("max", "min") and "initial" not in kw:
            kw["initial"] = 0
    if name in ("sum", "prod", "mean", "nansum") and draw(st.booleans()):
        kw["dtype"] = draw(st.sampled_from([np.float64, np.float32, np.int64, np.complex128]))
        if name == "mean" and a.dtype.kind == "c" and "where" in kw:
            kw["dtype"] = np.complex128  # (NOT FIXED: the cast warning is repeated eagerly)
    return f"np.{name}(x, **{kw})", (lambda x: getattr(np, name)(x, **kw)), (a,)


def test_hypothesis_differential_ufuncs_and_reductions():
    from hypothesis import HealthCheck, given, seed, settings
    from hypothesis import strategies as st

    @seed(int(os.environ.get("H3_SEED", 40)))
    @settings(max_examples=int(os.environ.get("H3_EXAMPLES", 250)), deadline=None, database=None, derandomize=not os.environ.get("H3_SEED"),
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def run(data):
        what, fn, args = _hunt_case(data.draw, st)
        try:
            check_all_ways(fn, *args)
        except AssertionError as e:
            raise AssertionError(f"{what} on {[getattr(a, 'dtype', type(a)) for a in args]} "
                                 f"{[np.shape(a) for a in args]}: {str(e)[:600]}") from None

    run()


@pytest.mark.parametrize("v", [complex(np.nan, 0), complex(0, np.inf), 1 + 2j, 3.5e38 + 0j,
                               complex(-3.4e38, 1)])
def test_complex128_zero_d_operand_casts_by_its_value_compiled(v):
    # found by the hunt: a 0-d complex128 argument was taken to fit
    # complex64 under hop.compile; NumPy's min_scalar_type gives complex128
    # for a part that is NaN, infinite or beyond +-3.4e38
    # (np.add(float16[3], np.array(nan+0j)) is complex128)
    for x in (np.zeros(3, np.float16), np.zeros(0, np.float32), np.ones((2, 2), np.complex64)):
        check_all_ways(np.add, x, np.array(v))
        check_all_ways(lambda a, b: a * b, x, np.array(v))


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_sum_over_no_axes_starts_at_zero(dt):
    # found by the hunt: np.sum of a 0-d -0.0 (and np.sum(a, axis=())) is
    # 0.0 in NumPy, whose output starts at the identity; hop kept -0.0
    z = np.array(complex(-0.0, -0.0) if np.dtype(dt).kind == "c" else -0.0).astype(dt)
    check_all_ways(np.sum, z)
    check_all_ways(np.nansum, z)
    check_all_ways(np.mean, z)
    check_all_ways(lambda x: np.sum(x, axis=()), np.stack([z, z]))
    check_all_ways(lambda x: np.sum(x, initial=-0.0), z)
    check_all_ways(lambda x: np.sum(x, keepdims=True), z)


def test_max_initial_zero_sign_is_the_elements():
    # found by the hunt: np.max(np.float32(-0.0), initial=0) is -0.0 (NumPy's
    # accumulator starts at initial; its maximum keeps the element on a tie)
    for dt in (np.float16, np.float32, np.float64):
        for v, init in ((-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0)):
            for f in (np.max, np.min):
                check_all_ways(lambda x: f(x, initial=init), np.array(v, dt))
                check_all_ways(lambda x: f(x, initial=init), np.array([v], dt))
                check_all_ways(lambda x: f(x, axis=0, initial=init, where=[True]),
                               np.array([v], dt))


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_max_initial_stays_on_a_tie(dt):
    # found by the hunt: np.max(np.complex64(-0.0), initial=0) is 0j (NumPy's
    # lexicographic maximum keeps its first operand, the accumulator, on a
    # tie); hop gave -0j
    vals = [complex(-0.0, 0), complex(0, -0.0), 0j, complex(np.nan, 0), 1 + 1j]
    for v in vals:
        for init in (0, -0.0, 1.0):
            for f in (np.max, np.min):
                check_all_ways(lambda x: f(x, initial=init), np.array(v, dt))
                check_all_ways(lambda x: f(x, initial=init), np.array([v, v], dt))


def test_mean_of_empty_masked_slice_in_an_integer_dtype_warns():
    # found by the hunt: np.mean(a, where=m, dtype=np.int64) with an empty
    # slice warns "Mean of empty slice." in NumPy; hop's eager result (the
    # NaN cast to int64) no longer showed the NaN that hands it to NumPy
    for state in ("ignore", "warn"):
        check_all_ways(lambda x: np.mean(x, where=np.array([], bool), dtype=np.int64),
                       np.zeros(0, np.float16), state=state)
        check_all_ways(lambda x: np.mean(x, axis=1, where=np.array([[True, False]] * 3).T,
                                         dtype=np.int32), np.ones((2, 3)), state=state)
        check_all_ways(lambda x: np.mean(x, where=np.array([True, False, True]), dtype=int),
                       np.arange(3.0), state=state)


def test_complex_prod_and_sum_of_empty_slices_and_no_axes():
    # found by the hunt: np.prod(empty complex64, initial=-inf) is -inf+0j
    # (NumPy's output is initial itself), hop's kernel gave 1 * initial =
    # -inf+nanj; np.prod of a 0-d inf+0j is 1 * (inf+0j) = inf+nanj in NumPy
    # (its reduction over no axes starts at the identity), hop gave inf+0j
    cases = [
        (lambda x: np.prod(x, initial=-np.inf), np.zeros(0, np.complex64)),
        (lambda x: np.prod(x, initial=-np.inf, dtype=np.complex128), np.zeros(0, np.float16)),
        (lambda x: np.prod(x, axis=0), np.array(complex(np.inf, 0))),
        (lambda x: np.prod(x), np.array(complex(np.inf, 0))),
        (lambda x: np.sum(x, axis=1, initial=complex(-0.0, np.inf), keepdims=True),
         np.zeros((2, 0), np.complex128)),
        (lambda x: np.prod(x, axis=1, initial=complex(np.inf, 0)), np.zeros((3, 0), np.complex64)),
        (lambda x: np.prod(x, axis=(), dtype=np.complex64), np.array([np.inf, 1.0])),
        (lambda x: np.prod(x, initial=2 + 0j), np.array([complex(np.inf, 0)] * 2)),
    ]
    for f, a in cases:
        check_all_ways(f, a)
