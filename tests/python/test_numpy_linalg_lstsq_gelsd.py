"""hop.numpy.linalg.lstsq on LAPACK's gelsd as NumPy 1.24 calls it (issue
#29): x, the residuals, the rank and s are NumPy's bits, eagerly, compiled
and traced, for every shape (tall, square, wide, rank-deficient, empty,
no right-hand side), float64/complex128 and the dtypes NumPy computes in
double (float32, complex64, integers); gradients still go through the SVD
solution and match finite differences."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import hop
import hop.numpy as hnp
from hop import _C

LA = np.linalg


def _bits(got, want, path):
    """got has want's dtype, shape and bytes (got may be hop's ndarray)."""
    g = np.asarray(got)
    assert g.dtype == want.dtype, f"{path}: dtype {g.dtype} vs {want.dtype}"
    assert g.shape == want.shape, f"{path}: shape {g.shape} vs {want.shape}"
    assert g.tobytes() == want.tobytes(), f"{path}: {g!r} vs {want!r}"


def _same_bits(got, want, what):
    assert len(got) == 4
    for i, name in enumerate(("x", "residuals", "rank", "s")):
        _bits(got[i], np.asarray(want[i]), f"{what} {name}")


def _matrix(draw, m, n, deficient, dtype):
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    r = min(m, n)
    if deficient and r > 1:
        r = draw(st.integers(0, r - 1))
    a = rng.standard_normal((m, r)) @ rng.standard_normal((r, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * (rng.standard_normal((m, r)) @ rng.standard_normal((r, n)))
    if np.dtype(dtype).kind in "iu":
        a = np.round(a * 3)
    return a.astype(dtype), rng


@st.composite
def _systems(draw):
    m, n = draw(st.integers(0, 7)), draw(st.integers(0, 7))
    dtype = draw(st.sampled_from([np.float64, np.complex128, np.float32, np.complex64,
                                  np.int64]))
    a, rng = _matrix(draw, m, n, draw(st.booleans()), dtype)
    k = draw(st.sampled_from([None, 0, 1, 2, 3]))
    b = rng.standard_normal((m,) if k is None else (m, k))
    if np.dtype(dtype).kind == "c":
        b = b + 1j * rng.standard_normal(b.shape)
    if np.dtype(dtype).kind in "iu":
        b = np.round(b * 3)
    rcond = draw(st.sampled_from([None, -1, 1e-3, 0.5]))
    return a, b.astype(dtype), rcond


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_systems())
def test_lstsq_is_numpys_bits_eager_compiled_and_traced(system):
    a, b, rcond = system

    def f(x, y):
        return LA.lstsq(x, y, rcond=rcond)

    want = f(a, b)
    _same_bits(hnp.linalg.lstsq(hnp.asarray(a), hnp.asarray(b), rcond=rcond), want, "eager")
    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in range(2):
            got = cf(a, b)
            _same_bits(got, want, f"compiled call {call}")
            assert type(got[2]) is type(want[2])
    # the rank is gelsd's on NumPy's bits: no run-time check sends a call
    # near the cutoff back to eager
    assert cf.eager_calls == 0
    # a tall system's residuals, whose presence depends on the rank: a cond
    # of unbacked size under hop.trace (hop.compile specialises, above)
    gm = hop.trace(f, a, b)
    _same_bits(gm(a, b), want, "traced")


@pytest.mark.parametrize("m, n", [(5, 3), (3, 5), (4, 4), (40, 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lstsq_of_the_packed_op_is_gelsds(m, n, dtype):
    # the op by itself: x rows, residuals row, s and rank row
    rng = np.random.default_rng(m * 10 + n)
    a, b = rng.standard_normal((m, n)).astype(dtype), rng.standard_normal((m, 2)).astype(dtype)
    want = LA.lstsq(a, b, rcond=None)
    p = _C._op("linalg_lstsq", hnp.asarray(a)._t, hnp.asarray(b)._t,
               float(np.finfo(float).eps) * max(m, n)).numpy()
    k = min(m, n)
    assert p.shape == (n + 2, max(2, k + 1)) and p.dtype == dtype
    _bits(p[:n, :2], want[0], "x")
    _bits(p[n + 1, :k].real.copy(), want[3], "s")
    assert p[n + 1, k] == want[2]
    if m > n:
        _bits(p[n, :2].real.copy(), want[1], "residuals")


def test_lstsq_op_batches_and_broadcasts_like_solve():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 6, 4)), rng.standard_normal((6, 2))
    p = _C._op("linalg_lstsq", hop.tensor(a), hop.tensor(b), 1e-12).numpy()
    assert p.shape == (3, 6, 5)  # n + 2 rows, min(m, n) + 1 columns
    for i in range(3):
        _bits(p[i, :4, :2], LA.lstsq(a[i], b, rcond=1e-12)[0], f"x[{i}]")


def test_lstsq_op_errors_name_what_is_wrong():
    a = hop.tensor(np.ones((3, 2)))
    with pytest.raises(Exception, match="the rows of f64\\[3, 2\\] and f64\\[4, 1\\] differ"):
        _C._op("linalg_lstsq", a, hop.tensor(np.ones((4, 1))), 1e-3)
    with pytest.raises(Exception, match="dtypes differ"):
        _C._op("linalg_lstsq", a, hop.tensor(np.ones((3, 1), np.float32)), 1e-3)


def test_vmap_of_lstsq_is_the_loop_of_numpys():
    rng = np.random.default_rng(4)
    # (wide: a tall system's residuals depend on the rank, which vmap's
    # trace cannot decide)
    xs, b = rng.standard_normal((4, 3, 6)), rng.standard_normal(3)
    got = hop.vmap(lambda t: hnp.linalg.lstsq(t, hop.tensor(b), rcond=None)[0])(hop.tensor(xs))
    for i in range(4):
        _bits(got.numpy()[i], LA.lstsq(xs[i], b, rcond=None)[0], f"x[{i}]")


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (float(f(hop.tensor(x + d)).numpy()) - float(f(hop.tensor(x - d)).numpy())) / (2 * eps)
    return g


# Gradients under hop.grad, which traces: of a wide or square system, whose
# residuals are empty whatever the rank (a tall one's depend on it, a
# decision hop.trace cannot make, as before gelsd)
GRADS = {  # scalar functions of the matrix
    "x_wide": ((2, 4), lambda t: (hnp.linalg.lstsq(t, hnp.arange(2.0), rcond=None)[0] ** 2).sum()),
    "x_square": ((3, 3), lambda t: (hnp.linalg.lstsq(t, hnp.arange(3.0), rcond=None)[0]
                                    * hnp.arange(1.0, 4.0)).sum()),
    "x_matrix_rhs": ((3, 5), lambda t: (hnp.linalg.lstsq(t, hnp.ones((3, 2)), rcond=None)[0]
                                        ** 2).sum()),
    "s": ((3, 4), lambda t: (hnp.linalg.lstsq(t, hnp.ones(3), rcond=None)[3]
                             * hnp.arange(1.0, 4.0)).sum()),
}


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("name", sorted(GRADS))
def test_lstsq_gradients_match_central_differences(name, compiled):
    shape, f = GRADS[name]
    x = np.random.default_rng(5).standard_normal(shape)
    g = hop.grad(hop.compile(f) if compiled else f)(hop.tensor(x))
    np.testing.assert_allclose(np.asarray(g.numpy()), _fd(f, x), rtol=1e-5, atol=1e-6)


def test_lstsq_gradient_of_the_right_hand_side():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((3, 5)), rng.standard_normal(3)

    def f(y):
        return (hnp.linalg.lstsq(hop.tensor(a), y, rcond=None)[0] ** 2).sum()

    np.testing.assert_allclose(hop.grad(f)(hop.tensor(b)).numpy(), _fd(f, b), rtol=1e-5,
                               atol=1e-6)


def test_lstsq_jvp_matches_central_differences():
    rng = np.random.default_rng(7)
    a, b, t = rng.standard_normal((3, 5)), rng.standard_normal(3), rng.standard_normal(3)

    def f(y):
        return hnp.linalg.lstsq(hop.tensor(a), y, rcond=None)[0]

    _, tan = hop.jvp(f, (hop.tensor(b),), (hop.tensor(t),))
    eps = 1e-6
    fd = (f(hop.tensor(b + eps * t)).numpy() - f(hop.tensor(b - eps * t)).numpy()) / (2 * eps)
    np.testing.assert_allclose(tan.numpy(), fd, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("a, b, err, msg", [
    (np.ones(3), np.ones(3), LA.LinAlgError, "1-dimensional array given"),
    (np.ones((2, 2, 2)), np.ones(2), LA.LinAlgError, "3-dimensional array given"),
    (np.ones((2, 2)), np.ones((2, 2, 2)), LA.LinAlgError, "3-dimensional array given"),
    (np.ones((3, 2)), np.ones(4), LA.LinAlgError, "Incompatible dimensions"),
])
def test_lstsq_errors_are_numpys(a, b, err, msg):
    with pytest.raises(err, match=msg):
        LA.lstsq(a, b, rcond=None)
    with pytest.raises(err, match=msg):
        hnp.linalg.lstsq(hnp.asarray(a), hnp.asarray(b), rcond=None)
    with pytest.raises(err, match=msg):
        hop.compile(lambda x, y: LA.lstsq(x, y, rcond=None))(a, b)
