"""logaddexp and logaddexp2 are ops of hop's table whose kernels are NumPy
1.24's npy_logaddexp and npy_logaddexp2 with libm (runtime/elementwise.c):
NumPy's bits for float16, float32 and float64 at every pair, eagerly, in a
compiled NumPy function, in a traced hop function and under vmap; NumPy's
warnings; derivatives that agree with finite differences and PyTorch's.
hop.numpy's former composition of hop's exp and log1p differed from NumPy in
1-3% of random pairs (9% of float16 ones)."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from numpy_diff import assert_numpys_bits_and_warnings
from hop import _exact

DTYPES = [np.float16, np.float32, np.float64]
NAMES = ["logaddexp", "logaddexp2"]
UINT = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}


def bits(a):
    a = np.asarray(a)
    return a.view("u%d" % a.dtype.itemsize)


def pairs(dtype, n=200_000, seed=0):
    """n pairs: near-equal ones (the log1p of exp(-|a - b|) near 1), huge ones
    (near the largest finite value), random bit patterns (subnormals, NaNs
    with payloads, infinities), equal ones, and every pair of the special
    values."""
    rng = np.random.default_rng(seed)
    big = float(np.finfo(dtype).max)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5,
                        float(np.finfo(dtype).tiny), float(np.finfo(dtype).smallest_subnormal),
                        big, -big], dtype)
    sa, sb = np.repeat(special, special.size), np.tile(special, special.size)
    k = (n - sa.size) // 5
    near = rng.standard_normal(k) * 10
    step = rng.standard_normal(k) * rng.choice([1e-6, 1e-3, 1.0, 30.0, 1e4], k)
    huge_a, huge_b = rng.uniform(-1.0, 1.0, (2, k)) * big
    rand_a, rand_b = (rng.integers(0, np.iinfo(UINT[dtype]).max, k, UINT[dtype], endpoint=True)
                      .view(dtype) for _ in range(2))
    equal = rng.standard_normal(n - sa.size - 3 * k - k // 2) * 100
    with np.errstate(all="ignore"):
        a = np.concatenate([near, huge_a, rand_a, rand_a[: k // 2], equal, sa]).astype(dtype)
        b = np.concatenate([near + step, huge_b, rand_b, rand_b[: k // 2], equal, sb]).astype(dtype)
    return a, b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_logaddexp_has_numpys_bits_eager_compiled_and_traced(name, dtype):
    a, b = pairs(dtype)
    uf = getattr(np, name)
    with np.errstate(all="ignore"):
        want = uf(a, b)
        assert want.dtype == dtype
        assert np.array_equal(bits(getattr(hnp, name)(hnp.asarray(a), hnp.asarray(b))),
                              bits(want))
        compiled = hop.compile(lambda x, y: uf(x, y))
        for _ in range(2):  # its first call, then its plan
            assert np.array_equal(bits(compiled(a, b)), bits(want))
        assert np.array_equal(bits(hop.compile(lambda x, y: uf(x[::3], y[::3]))(a, b)),
                              bits(want[::3]))
        hf = getattr(hop, name)
        ta, tb = hop.asarray(a), hop.asarray(b)
        assert np.array_equal(bits(hf(ta, tb).numpy()), bits(want))
        gm = hop.trace(lambda x, y: hf(x, y), ta, tb)
        assert np.array_equal(bits(gm(ta, tb).numpy()), bits(want))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_logaddexp_broadcast_scalar_and_vmap_have_numpys_bits(name, dtype):
    a, b = pairs(dtype, n=40_000, seed=1)
    uf, hf = getattr(np, name), getattr(hop, name)
    rows_a, rows_b = a.reshape(8, -1), b.reshape(8, -1)
    with np.errstate(all="ignore"):
        # a broadcast operand and a Python scalar (a weak operand of a's dtype)
        assert np.array_equal(bits(getattr(hnp, name)(hnp.asarray(rows_a),
                                                      hnp.asarray(rows_b[:1]))),
                              bits(uf(rows_a, rows_b[:1])))
        assert np.array_equal(bits(getattr(hnp, name)(hnp.asarray(a), 2.5)), bits(uf(a, 2.5)))
        got = hop.vmap(hf)(hop.asarray(rows_a), hop.asarray(rows_b)).numpy()
        assert np.array_equal(bits(got), bits(uf(rows_a, rows_b)))
        got = hop.vmap(hf, in_axes=(1, None))(hop.asarray(rows_a), hop.asarray(rows_b[:, 0]))
        assert np.array_equal(bits(got.numpy()), bits(uf(rows_a, rows_b[:, :1]).T))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NAMES)
def test_logaddexp_warns_as_numpy(name, dtype):
    # a NaN operand: "invalid value encountered in logaddexp" (NumPy compares
    # the NaN difference with 0); infinities of one sign and inf with -inf
    # raise nothing
    a, b = pairs(dtype, n=20_000, seed=2)
    uf, hf = getattr(np, name), getattr(hnp, name)
    assert_numpys_bits_and_warnings(lambda x: uf(x, b), lambda x: hf(x, hnp.asarray(b)), a, name)
    inf = np.array([np.inf, -np.inf, np.inf, -np.inf, 1.0], dtype)
    inf_b = np.array([np.inf, -np.inf, -np.inf, np.inf, -np.inf], dtype)
    assert_numpys_bits_and_warnings(lambda x: uf(x, inf_b), lambda x: hf(x, hnp.asarray(inf_b)),
                                    inf, name)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        hop.compile(lambda x, y: uf(x, y))(np.array([np.nan, 1.0], dtype), np.ones(2, dtype))
    assert [str(x.message) for x in w] == ["invalid value encountered in " + name]


def _grads(name, a, b):
    hf = getattr(hop, name)
    ga, gb = hop.grad(lambda x, y: hf(x, y).sum(), argnums=(0, 1))(hop.asarray(a),
                                                                   hop.asarray(b))
    return ga.numpy(), gb.numpy()


@pytest.mark.parametrize("name", NAMES)
def test_logaddexp_grad_matches_finite_differences(name):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(500) * 5
    b = a + rng.standard_normal(500) * rng.choice([1e-3, 1.0, 20.0], 500)
    ga, gb = _grads(name, a, b)
    uf, h = getattr(np, name), 1e-6
    fd_a = (uf(a + h, b) - uf(a - h, b)) / (2 * h)
    fd_b = (uf(a, b + h) - uf(a, b - h)) / (2 * h)
    # (the differences' rounding: |f| 2**-52 / h, about 1e-8)
    np.testing.assert_allclose(ga, fd_a, rtol=1e-6, atol=3e-8)
    np.testing.assert_allclose(gb, fd_b, rtol=1e-6, atol=3e-8)
    np.testing.assert_allclose(ga + gb, 1.0, rtol=1e-12)  # shares of one unit
    # jvp: the partials dotted with the tangents
    ta, tb = rng.standard_normal(500), rng.standard_normal(500)
    hf = getattr(hop, name)
    _, t = hop.jvp(hf, (hop.asarray(a), hop.asarray(b)), (hop.asarray(ta), hop.asarray(tb)))
    np.testing.assert_allclose(t.numpy(), ga * ta + gb * tb, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NAMES)
def test_logaddexp_grad_matches_torch(name, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(1000) * 30).astype(dtype)
    b = (a + rng.standard_normal(1000) * rng.choice([1e-3, 1.0, 50.0], 1000)).astype(dtype)
    # one infinite operand: all of the derivative to the other, or none
    a = np.concatenate([a, np.array([np.inf, -np.inf, 3.0, 3.0, 2.0], dtype)])
    b = np.concatenate([b, np.array([1.0, 1.0, np.inf, -np.inf, 2.0], dtype)])
    ta = torch.tensor(a, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    getattr(torch, name)(ta, tb).sum().backward()
    ga, gb = _grads(name, a, b)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(ga, ta.grad.numpy(), rtol=rtol, atol=0)
    np.testing.assert_allclose(gb, tb.grad.numpy(), rtol=rtol, atol=0)


@pytest.mark.parametrize("name", NAMES)
def test_logaddexp_grad_under_vmap_and_compile(name):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 4, 16))
    hf = getattr(hop, name)
    g = hop.grad(lambda x, y: hf(x, y).sum())
    per_row = hop.vmap(g)(hop.asarray(a), hop.asarray(b)).numpy()
    whole = _grads(name, a, b)[0]
    np.testing.assert_allclose(per_row, whole, rtol=1e-15)
    compiled = hop.compile(lambda x, y: hop.grad(lambda u: hf(u, y).sum())(x))
    np.testing.assert_allclose(compiled(hop.asarray(a), hop.asarray(b)).numpy(), whole,
                               rtol=1e-15)


def test_a_logaddexp_handed_to_python_stays_compiled():
    # its bits are NumPy's (_exact counts it so), so the print at the break
    # does not need the part before it to run in Python (an exp does)
    def f(x, y):
        z = np.logaddexp2(np.logaddexp(x, y), y)
        print(float(z[0]))
        return z

    def g(x, y):
        z = np.exp(x) + y
        print(float(z[0]))
        return z

    a, b = np.array([0.3, 2.0]), np.array([1.5, -40.0])
    for fn, in_python in ((f, False), (g, True)):
        cf = hop.compile(fn)
        np.testing.assert_array_equal(cf(a, b), fn(a, b))
        assert ("the part before it runs in Python" in cf.explain()) is in_python, cf.explain()
    assert {"logaddexp", "logaddexp2"} <= _exact._EXACT
