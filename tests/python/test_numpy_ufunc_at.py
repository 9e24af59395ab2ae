"""NumPy's ufunc.at compiled (issue #29): np.maximum.at, np.multiply.at and
the other binary ufuncs' .at on a traced array are one `put` that combines
by the ufunc's op, each repeated index applied in index order, computed in
NumPy's loop dtype and cast back into the array as NumPy casts it.  Each
case runs by NumPy and by hop.compile(fullgraph=True) on copies of the same
arguments; the results and the arguments after the call must be the same
bits, dtypes, shapes and types, or both raise the same exception."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import hop
import hop.numpy  # noqa: F401

R = np.random.default_rng(3)


def _run(fn, args, compiled):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    c = hop.compile(fn) if compiled else fn
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            r = c(*args)
        except Exception as e:  # noqa: BLE001 (compared by the caller)
            return e, args
    if compiled:  # compiled, not run eagerly after a fallback
        assert c._eager_why is None and c._untranslated is None, c.explain()
    return r, args


# hop's pow, arctan2 and hypot are SLEEF's, within a few ulps of libm's (as
# every hop.numpy transcendental function: numpy_diff.same's tolerance).
# NumPy's ufunc.at of complex multiply and divide runs a loop its build
# contracted to FMAs (np.multiply.at differs from x[k] * v there by an ulp,
# where np.multiply of arrays does not); hop's is x[k] * v.  Every other op
# here is exact.
_ULPS = {"power", "arctan2", "hypot"}
_COMPLEX_ULPS = {"multiply", "divide", "power"}


def _exact(got, want, path, ulps=False):
    assert type(got) is type(want), f"{path}: {type(got).__name__} vs {type(want).__name__}"
    assert got.dtype == want.dtype, f"{path}: {got.dtype} vs {want.dtype}"
    assert got.shape == want.shape, f"{path}: {got.shape} vs {want.shape}"
    if ulps and want.dtype.kind in "fc":
        tol = 8 * np.finfo(want.dtype).eps
        np.testing.assert_allclose(got, want, rtol=tol, atol=0, equal_nan=True, err_msg=path)
        return
    np.testing.assert_array_equal(got, want, err_msg=path)  # nan equals nan, else exact


def same_as_numpy(fn, *args, ulps=False, message=True):
    """message: compare the exception's text too (an index found out of
    bounds when the program runs has put's or take's text)."""
    want, wargs = _run(fn, args, False)
    got, gargs = _run(fn, args, True)
    if isinstance(want, Exception):
        assert isinstance(got, type(want)), f"NumPy raised {want!r}, hop gave {got!r}"
        if message:
            assert str(got) == str(want)
        return
    if isinstance(got, Exception):
        raise got
    _exact(got, want, "result", ulps)
    for k, (g, w) in enumerate(zip(gargs, wargs)):
        if isinstance(w, np.ndarray):
            _exact(g, w, f"argument {k} after the call", ulps)


BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "divide", "floor_divide",
          "remainder", "fmod", "power", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
          "right_shift", "gcd", "lcm", "arctan2", "hypot", "copysign"]
DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.uint8, np.bool_,
          np.complex128]


def _array(dt, n):
    if np.dtype(dt).kind == "b":
        return R.integers(0, 2, n).astype(bool)
    if np.dtype(dt).kind in "iu":
        return R.integers(1, 9, n).astype(dt)
    if np.dtype(dt).kind == "c":
        return (R.standard_normal(n) + 1j * R.standard_normal(n)).astype(dt)
    return (R.standard_normal(n) * 3).astype(dt)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_ufunc_at_applies_repeated_indices_in_order_as_numpy(name, dt):
    uf = getattr(np, name)
    ulps = name in _ULPS or (np.dtype(dt).kind == "c" and name in _COMPLEX_ULPS)
    idx = np.array([0, 2, 2, -1, 0, 2])
    x = _array(dt, 5)
    # values of the array's dtype, of a wider one (NumPy's loop is then the
    # wider dtype), and a Python scalar (cast by value)
    for v in (_array(dt, 6), _array(np.float64, 6), 2, 1.5):
        if name == "power" and np.dtype(dt).kind in "iu":
            v = np.abs(v) if isinstance(v, np.ndarray) else v
        same_as_numpy(lambda x, i, v: (uf.at(x, i, v), x)[1], x, idx, v, ulps=ulps)


def test_ufunc_at_nan_and_signed_zero_follow_numpys_order():
    x = np.array([1.0, -0.0, 3.0, np.nan])
    idx = np.array([0, 0, 1, 2, 3])
    v = np.array([np.nan, 5.0, 0.0, -np.inf, 2.0])
    for name in ("maximum", "minimum", "multiply", "copysign", "fmod"):
        uf = getattr(np, name)
        same_as_numpy(lambda x, i, v: (uf.at(x, i, v), x)[1], x, idx, v)


def test_multiply_at_rounds_each_step_back_into_float32():
    # NumPy's loop is float64 here: 1.1 then * 1.3, each product rounded to
    # float32, is 1.4300001, not float32(1.1 * 1.3) nor the float32 product
    x = np.ones(3, np.float32)
    same_as_numpy(lambda x, i, v: (np.multiply.at(x, i, v), x)[1], x, np.array([0, 0]),
                  np.array([1.1, 1.3]))
    want = np.ones(3, np.float32)
    np.multiply.at(want, [0, 0], np.array([1.1, 1.3]))
    assert want[0] == np.float32(1.4300001)


def test_ufunc_at_with_a_tuple_index_a_mask_and_a_slice_writes_through_views():
    x = R.standard_normal((4, 5))

    def f(x, v):
        np.maximum.at(x, (np.array([0, 0, 3]), np.array([1, 1, 4])), v)
        np.minimum.at(x[1:], np.array([[True, False, True, False, True]] * 3), -v[0])
        y = x[:, 2]
        np.multiply.at(y, [0, 0, 1], 2.0)  # a view: x's column 2 changes
        return x
    same_as_numpy(f, x, np.array([5.0, 7.0, -1.0]))


def test_ufunc_at_on_a_local_array_and_on_a_subarray_index():
    def f(i, v):
        out = np.zeros((3, 2))
        np.maximum.at(out, i, v)  # a[i] is a row: v broadcasts to (len(i), 2)
        np.multiply.at(out, i, 2.0)
        return out
    same_as_numpy(f, np.array([0, 2, 0]), np.array([[1.0, -2.0], [3.0, 4.0], [5.0, 0.5]]))


@pytest.mark.parametrize("case", ["out_of_bounds", "shape", "negative_power", "no_operand",
                                  "bool_subtract"])
def test_ufunc_at_raises_numpys_errors(case):
    x = np.arange(5.0)
    fns = {
        "out_of_bounds": lambda x: (np.maximum.at(x, np.array([1, 5]), 2.0), x)[1],
        "shape": lambda x: (np.multiply.at(x, np.array([0, 1]), np.array([1.0, 2, 3])), x)[1],
        "negative_power": lambda x: (np.power.at(x.astype(np.int64), [0], np.array([-1])), x)[1],
        "no_operand": lambda x: (np.maximum.at(x, [0]), x)[1],
        "bool_subtract": lambda x: (np.subtract.at(x > 1, [0], True), x)[1],
    }
    same_as_numpy(fns[case], x, message=case != "out_of_bounds")


# NumPy 1.24's unary single-output ufuncs (isnat takes datetimes only).
# Repeated indices apply the ufunc again to what the previous application
# left in the array (cast back to its dtype each time).
UNARY = ["absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "cbrt",
         "ceil", "conjugate", "cos", "cosh", "deg2rad", "degrees", "exp", "exp2", "expm1",
         "fabs", "floor", "invert", "isfinite", "isinf", "isnan", "log", "log10", "log1p", "log2",
         "logical_not", "negative", "positive", "rad2deg", "radians", "reciprocal", "rint",
         "sign", "signbit", "sin", "sinh", "spacing", "sqrt", "square", "tan", "tanh", "trunc"]
# SLEEF's transcendental functions (and absolute of complex64, hypotf's
# rounding), within a few ulps of NumPy's loops.
_UNARY_ULPS = {"arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "cbrt", "cos",
               "cosh", "exp", "exp2", "expm1", "log", "log10", "log1p", "log2", "sin", "sinh",
               "tan", "tanh"}


def _unary_array(dt):
    x = np.array([0.5, -1.75, 2.25, -0.0, 3.5, 0.25, -2.5])
    if np.dtype(dt).kind == "c":
        return (x + 1j * x[::-1]).astype(dt)
    if np.dtype(dt).kind == "b":
        return x > 0
    if np.dtype(dt).kind in "iu":
        return np.array([0, 1, 2, 3, 5, 7, 9]).astype(dt)
    return x.astype(dt)


@pytest.mark.parametrize("name", UNARY)
def test_unary_ufunc_at_applies_repeated_indices_in_order_as_numpy(name):
    uf = getattr(np, name)
    for dt in (np.float64, np.float32, np.float16, np.int8, np.uint8, np.int64, np.bool_,
               np.complex128):
        kind = np.dtype(dt).kind
        ulps = name in _UNARY_ULPS or (name == "absolute" and kind == "c")
        # repeated (0 three times, 2 twice), negative (-1), and a 2-d index
        same_as_numpy(lambda x, i: (uf.at(x, i), x)[1], _unary_array(dt),
                      np.array([[0, 2, 0], [-1, 0, 2]]), ulps=ulps)


def test_unary_ufunc_at_counts_change_from_call_to_call():
    # one plan for every index array: the rounds are a while_loop on the
    # counts, not a decision made when tracing
    c = hop.compile(lambda x, i: (np.square.at(x, i), x)[1])
    for idx in ([1, 1, 1], [], [0, 2], [2, 2, -3, 2, 0]):
        want, got = np.arange(1.0, 5.0), np.arange(1.0, 5.0)
        i = np.array(idx, dtype=np.intp)
        np.square.at(want, i)
        r = c(got, i)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(r, want)
    assert c._eager_why is None and c._untranslated is None, c.explain()
    assert "while_loop" in c.explain()


def test_unary_ufunc_at_through_a_view_a_mask_a_tuple_and_a_slice():
    x = np.arange(12.0).reshape(3, 4) - 5.5

    def f(x, m):
        np.negative.at(x[1:], (np.array([0, 0, 1]), np.array([3, 3, 0])))  # x's rows 1-2
        np.square.at(x[:, 1], m)  # a column view, by a mask
        np.sqrt.at(np.abs(x), [0])  # a temporary: x unchanged
        np.floor.at(x, (slice(None), 2))
        return x
    same_as_numpy(f, x, np.array([True, False, True]))


def test_unary_ufunc_at_on_a_local_array_casts_back_each_step():
    def f(i):
        a = np.arange(6)  # int64: sqrt's loop is float64, each result truncated back
        np.sqrt.at(a, i)
        return a

    def g(i):
        b = np.arange(6, dtype=np.int8) * 40  # square wraps in int8, twice
        np.square.at(b, i)
        return b
    for fn in (f, g):
        same_as_numpy(fn, np.array([5, 5, 3, 4, 4, 4]))


@pytest.mark.parametrize("case", ["out_of_bounds", "negative_out_of_bounds", "bool_negative",
                                  "float_invert", "two_outputs", "float_index"])
def test_unary_ufunc_at_raises_numpys_errors(case):
    x = np.arange(5.0)
    fns = {
        "out_of_bounds": lambda x: (np.negative.at(x, np.array([1, 5])), x)[1],
        "negative_out_of_bounds": lambda x: (np.negative.at(x, np.array([-6])), x)[1],
        "bool_negative": lambda x: (np.negative.at(x > 1, [0]), x)[1],
        "float_invert": lambda x: (np.invert.at(x, [0]), x)[1],
        "two_outputs": lambda x: (np.modf.at(x, [0]), x)[1],
        "float_index": lambda x: (np.negative.at(x, [1.0]), x)[1],
    }
    same_as_numpy(fns[case], x, message="out_of_bounds" not in case)


def test_unary_ufunc_at_with_a_second_operand_is_a_value_error():
    # NumPy 1.24 crashes here (a NULL loop operand); hop raises 1.25's error
    # and leaves the array as it was, eagerly and compiled.  In a child
    # process: a regression is a crash.
    program = "\n".join([
        "import numpy as np, hop, hop.numpy as hnp",
        "for compiled in (False, True):",
        "    x = np.arange(3.0)",
        "    f = lambda x: np.negative.at(x, [0], 2.0)",
        "    try:",
        "        hop.compile(f)(x) if compiled else f(hnp.asarray(x))",
        "    except ValueError as e:",
        "        print(e, x.tolist())",
    ])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "second operand provided when ufunc is unary [0.0, 1.0, 2.0]\n" * 2


def test_complex_maximum_minimum_at_follow_numpys_order_with_nan_and_signed_zero():
    nan = np.nan
    x = np.array([1 + 2j, 3 - 1j, complex(-0.0, 0.0), complex(nan, 1), 2 + 2j])
    idx = np.array([0, 0, 1, 1, 2, 2, 3, 4, 4, 0])
    v = np.array([1 + 3j, complex(1, nan), complex(nan, 0), 5 + 0j, complex(0.0, -0.0),
                  complex(0.0, 0.0), 9 + 9j, complex(2, -0.0), 2 + 2j, 7 + 0j])
    for name in ("maximum", "minimum"):
        uf = getattr(np, name)
        same_as_numpy(lambda x, i, v: (uf.at(x, i, v), x)[1], x, idx, v)
        same_as_numpy(lambda x, i, v: (uf.at(x, i, v), x)[1], x.astype(np.complex64), idx,
                      v.astype(np.complex64))
        # a float array, complex values: the loop is complex, cast back
        same_as_numpy(lambda x, i, v: (uf.at(x, i, v), x)[1], np.arange(5.0), idx, v)


def test_grad_of_complex_maximum_at_is_a_clear_error():
    def f(x, v):
        y = hop.numpy.asarray(x).copy()
        np.maximum.at(y, np.array([0, 0]), v)
        return hop.numpy.real(y).sum()
    x, v = hop.tensor(np.ones(3, complex)), hop.tensor(np.array([2j, 1 + 0j]))
    with pytest.raises(hop.UnsupportedError, match="no derivative of combining complex values"):
        hop.grad(f, argnums=1)(x, v)


def test_vmap_of_maximum_at_is_the_loop_over_examples():
    def f(x, v):
        y = hop.numpy.asarray(x).copy()
        np.maximum.at(y, np.array([0, 0, 2]), v)
        np.multiply.at(y, np.array([1, 1]), 3.0)
        return y
    xs, vs = R.standard_normal((4, 3)), R.standard_normal((4, 3))
    want = np.stack([np.asarray(f(x, v)) for x, v in zip(xs, vs)])
    got = hop.vmap(f)(hop.numpy.asarray(xs), hop.numpy.asarray(vs))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_grad_of_add_at_with_wider_values_gives_each_its_dtype():
    idx = np.array([0, 0, 2])

    def add(x, v):
        y = x.copy()
        np.add.at(y, idx, v)
        return (y * y).sum()
    x = hop.numpy.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    v = hop.numpy.asarray(np.array([0.5, 1.0, -2.0]))
    gx, gv = hop.grad(add, argnums=(0, 1))(x, v)
    y = np.array([2.5, 2.0, 1.0])
    np.testing.assert_allclose(np.asarray(gx), 2 * y, rtol=1e-6)
    assert np.asarray(gx).dtype == np.float32 and np.asarray(gv).dtype == np.float64
    np.testing.assert_allclose(np.asarray(gv), 2 * y[idx], rtol=1e-6)


IDX = np.array([0, 3, 0, 1, 3, 3])


def _max_at(x, v):
    y = x.copy()
    np.maximum.at(y, IDX, v)
    return y


def _min_at(x, v):
    y = x.copy()
    np.minimum.at(y, IDX, v)
    return y


def _mul_at(x, v):
    y = x.copy()
    np.multiply.at(y, IDX, v)
    return y


def _at(name):
    return {"maximum": _max_at, "minimum": _min_at, "multiply": _mul_at}[name]


def _reference(name):
    """The same values by one elementwise op per index, in order
    (differentiable op by op; equal to .at's derivative where nothing ties)."""
    op = {"maximum": hop.numpy.maximum, "minimum": hop.numpy.minimum,
          "multiply": lambda a, b: a * b}[name]

    def f(x, v):
        y = x
        pos = hop.numpy.arange(x.shape[0])
        for j, k in enumerate(IDX):
            y = hop.numpy.where(pos == k, op(y, v[j]), y)
        return y
    return f


@pytest.mark.parametrize("name", ["maximum", "minimum", "multiply"])
def test_grad_and_jvp_of_maximum_minimum_multiply_at_match_the_op_by_op_program(name):
    r = np.random.default_rng(11)
    x = hop.numpy.asarray(r.standard_normal(5))
    v = hop.numpy.asarray(r.standard_normal(6))
    w = hop.numpy.asarray(r.standard_normal(5))

    def loss(f):
        return lambda x, v: (f(x, v) * w).sum()
    got = hop.grad(loss(_at(name)), argnums=(0, 1))(x, v)
    want_g = hop.grad(loss(_reference(name)), argnums=(0, 1))(x, v)
    for g_, w_ in zip(got, want_g):
        np.testing.assert_allclose(np.asarray(g_), np.asarray(w_), rtol=1e-12, atol=1e-15)
    tx, tv = hop.numpy.asarray(r.standard_normal(5)), hop.numpy.asarray(r.standard_normal(6))
    got = hop.jvp(_at(name), (x, v), (tx, tv))[1]
    want = hop.jvp(_reference(name), (x, v), (tx, tv))[1]
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-15)
    # compiled, and batched over examples (vmap of grad)
    c = hop.compile(hop.grad(loss(_at(name)), argnums=(0, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # compiled, no eager fallback
        cg = c(x, v)
    for g_, w_ in zip(cg, want_g):
        np.testing.assert_allclose(np.asarray(g_), np.asarray(w_), rtol=1e-12, atol=1e-15)
    xs = hop.numpy.asarray(r.standard_normal((3, 5)))
    vg = hop.vmap(hop.grad(loss(_at(name)), argnums=1), in_axes=(0, None))(xs, v)
    for k in range(3):
        np.testing.assert_allclose(np.asarray(vg)[k], np.asarray(hop.grad(
            loss(_reference(name)), argnums=1)(xs[k], v)), rtol=1e-12, atol=1e-15)


def test_maximum_at_shares_the_gradient_among_ties_and_multiply_at_is_exact_with_zeros():
    def mx(x, v):
        y = x.copy()
        np.maximum.at(y, np.array([0, 0, 1]), v)
        return y.sum()
    gx, gv = hop.grad(mx, argnums=(0, 1))(hop.numpy.asarray(np.array([1.0, 2.0])),
                                           hop.numpy.asarray(np.array([1.0, 0.5, 2.0])))
    np.testing.assert_array_equal(np.asarray(gx), [0.5, 0.5])  # x[0] ties v[0], x[1] v[2]
    np.testing.assert_array_equal(np.asarray(gv), [0.5, 0.0, 0.5])

    def mul(x, v):
        y = x.copy()
        np.multiply.at(y, np.array([0, 0, 1]), v)
        return y.sum()
    gx, gv = hop.grad(mul, argnums=(0, 1))(hop.numpy.asarray(np.array([2.0, 3.0])),
                                            hop.numpy.asarray(np.array([0.0, 5.0, 0.0])))
    np.testing.assert_array_equal(np.asarray(gx), [0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(gv), [10.0, 0.0, 3.0])


def test_grad_through_another_combine_is_a_clear_error():
    def fd(x):
        y = x.copy()
        np.floor_divide.at(y, np.array([0, 0]), 2.0)
        return y.sum()
    with pytest.raises(hop.UnsupportedError, match="put: no derivative of combining by "
                                                   "floor_divide"):
        hop.grad(fd)(hop.numpy.asarray(np.array([1.0, 2.0, 3.0])))


def test_a_second_compile_of_the_same_code_adds_through_a_view_with_a_0d_value():
    # Found in CI by test_numpy_hypothesis.test_ufunc_at on a merge of ix28:
    # after a compile of the same code on a bool array, np.add.at through a
    # view of a uint8 array with a 0-d int32 value (NumPy's value-based
    # casting decides its loop dtype by the value) left the array as it
    # was: the value-based decision became a graph break and the write was
    # lost.  Each call must equal NumPy's.
    def make(name, through_view):
        uf = getattr(np, name)

        def f(a, i, v):
            uf.at(a[:, ::-1] if through_view else a, i, v)
            return a
        return f

    for x, v in ((np.zeros((1, 1), bool), np.array([[-1]], np.int32)),
                 (np.zeros((1, 1), np.uint8), np.array(-1, np.int32)),
                 (np.zeros((2, 1), np.int8), np.array(-1, np.int32))):
        i = np.array([0])
        want, got = make("add", True)(x.copy(), i, v), hop.compile(make("add", True))(x.copy(), i, v)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
