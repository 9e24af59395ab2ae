"""hop.numpy.linalg against numpy.linalg (issue #29): each call run by NumPy
and by hop.compile (numpy_diff.check: values, dtype, shape, ndarray or
NumPy scalar, the exception's type), batched over leading dims, float32,
float64, int and complex inputs, LinAlgError where NumPy raises it; the
gradients of the differentiable ones against central differences, vmap
against a loop; a hypothesis campaign over shapes and dtypes."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import hop
import hop.numpy as hnp
from budget import examples
from numpy_diff import check, same
from test_numpy_operand_campaign import _as_numpy

LA = np.linalg
RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4))
B = RNG.standard_normal((4, 2))
V = RNG.standard_normal(4)
SPD = A @ A.T + 4 * np.eye(4)
A3 = RNG.standard_normal((2, 3, 3))
R = RNG.standard_normal((5, 3))
C = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
HC = C @ C.conj().T + 3 * np.eye(3)
I2 = np.array([[2, 1], [1, 3]])

CASES = {  # name -> (function, arguments); rtol 1e-9 in float64
    "solve_matrix": (lambda a, b: LA.solve(a, b), A, B),
    "solve_vector": (lambda a, b: LA.solve(a, b), A, V),
    "solve_batched": (lambda a, b: LA.solve(a, b), A3, RNG.standard_normal((2, 3, 1))),
    "solve_complex": (lambda a, b: LA.solve(a, b), C, C[:, :1]),
    "inv": (lambda a: LA.inv(a), A),
    "inv_batched": (lambda a: LA.inv(a), A3),
    "inv_int_is_float64": (lambda a: LA.inv(a), I2),
    "inv_complex": (lambda a: LA.inv(a), C),
    "det": (lambda a: LA.det(a), A),
    "det_batched": (lambda a: LA.det(a), A3),
    "det_complex": (lambda a: LA.det(a), C),
    "det_int": (lambda a: LA.det(a), I2),
    "slogdet": (lambda a: LA.slogdet(a), A),
    "slogdet_complex": (lambda a: LA.slogdet(a), C),
    "slogdet_singular": (lambda a: LA.slogdet(a), np.zeros((2, 2))),
    "cholesky": (lambda a: LA.cholesky(a), SPD),
    "cholesky_complex": (lambda a: LA.cholesky(a), HC),
    "qr_reduced": (lambda a: LA.qr(a), R),
    "qr_complete": (lambda a: LA.qr(a, mode="complete"), R),
    "qr_r": (lambda a: LA.qr(a, mode="r"), R),
    "svd_values": (lambda a: LA.svd(a, compute_uv=False), R),
    "svd_values_batched": (lambda a: LA.svd(a, compute_uv=False), A3),
    "svd_reconstructs": (lambda a: (lambda u, s, vh: (u * s) @ vh)(*LA.svd(a, full_matrices=False)),
                         R),
    "eigvalsh": (lambda a: LA.eigvalsh(a), SPD),
    "eigvalsh_upper": (lambda a: LA.eigvalsh(a, UPLO="U"), SPD),
    "eigvalsh_complex": (lambda a: LA.eigvalsh(a), HC),
    "eigh_values": (lambda a: LA.eigh(a)[0], SPD),
    "eigh_reconstructs": (lambda a: (lambda w, v: (v * w) @ v.T)(*LA.eigh(a)), SPD),
    "lstsq": (lambda a, b: LA.lstsq(a, b, rcond=None), R, RNG.standard_normal(5)),
    "lstsq_matrix_rhs": (lambda a, b: LA.lstsq(a, b, rcond=None)[0], R, RNG.standard_normal((5, 2))),
    "pinv": (lambda a: LA.pinv(a), R),
    "matrix_power_3": (lambda a: LA.matrix_power(a, 3), A),
    "matrix_power_0": (lambda a: LA.matrix_power(a, 0), A),
    "matrix_power_negative": (lambda a: LA.matrix_power(a, -2), A),
    "matrix_power_int": (lambda a: LA.matrix_power(a, 3), np.array([[1, 2], [3, 4]])),
    "matrix_rank": (lambda a: LA.matrix_rank(a), R),
    "matrix_rank_zero": (lambda a: LA.matrix_rank(a), np.zeros((3, 3))),
    "multi_dot": (lambda a, b, c: LA.multi_dot([a, b, c]), A, B, B.T),
    "norm": (lambda a: LA.norm(a), A),
    "norm_fro": (lambda a: LA.norm(a, "fro"), A),
    "norm_nuc": (lambda a: LA.norm(a, "nuc"), A),
    "norm_2": (lambda a: LA.norm(a, 2), A),
    "norm_inf": (lambda a: LA.norm(a, np.inf), A),
    "norm_minus_1": (lambda a: LA.norm(a, -1), A),
    "norm_vector_3": (lambda a: LA.norm(a, 3), V),
    "norm_vector_0": (lambda a: LA.norm(a, 0), V),
    "norm_axis_keepdims": (lambda a: LA.norm(a, axis=1, keepdims=True), A),
    "norm_int": (lambda a: LA.norm(a), np.arange(5)),
    "norm_complex": (lambda a: LA.norm(a), C),
    "cond": (lambda a: LA.cond(a), A),
    "cond_minus_2": (lambda a: LA.cond(a, -2), A),
    "cond_1": (lambda a: LA.cond(a, 1), A),
    "cond_inf_batched": (lambda a: LA.cond(a, np.inf), A3),
    "cond_fro_complex_is_complex": (lambda a: LA.cond(a, "fro"), C),
    "cond_singular_is_inf": (lambda a: LA.cond(a), np.array([[1.0, 2.0], [2.0, 4.0]]) * 0),
    "tensorinv": (lambda a: LA.tensorinv(a, ind=2), RNG.standard_normal((4, 6, 8, 3))),
    "tensorinv_ind_1": (lambda a: LA.tensorinv(a, ind=1), A),
    "tensorsolve": (lambda a, b: LA.tensorsolve(a, b), RNG.standard_normal((6, 2, 3)),
                    RNG.standard_normal(6)),
    "tensorsolve_axes": (lambda a, b: LA.tensorsolve(a, b, axes=(0,)),
                         RNG.standard_normal((6, 2, 3)), RNG.standard_normal((2, 3))),
    "tensorsolve_identity": (lambda a, b: LA.tensorsolve(a, b),
                             np.eye(24).reshape(6, 4, 2, 3, 4), RNG.standard_normal((6, 4))),
    "eig_complex_eigenvalues_of_a_real_matrix": (lambda a: LA.eig(a), A),
    "eig_real_eigenvalues_are_real": (lambda a: LA.eig(a), SPD),
    "eig_rotation_is_complex": (lambda a: LA.eig(a), np.array([[0.0, -1.0], [1.0, 0.0]])),
    "eig_complex": (lambda a: LA.eig(a), C),
    "eig_batched": (lambda a: LA.eig(a), A3),
    "eig_int_is_float64": (lambda a: LA.eig(a), I2),
    "eig_reconstructs": (lambda a: (lambda w, v: v @ np.diag(w) @ LA.inv(v))(*LA.eig(a)), A),
    "eigvals": (lambda a: LA.eigvals(a), A),
    "eigvals_real": (lambda a: LA.eigvals(a), SPD),
    "eigvals_complex": (lambda a: LA.eigvals(a), C),
    "eigvals_batched": (lambda a: LA.eigvals(a), A3),
    "polyfit": (lambda x, y: np.polyfit(x, y, 2), np.arange(6.0), RNG.standard_normal(6)),
    "least_squares_fit": (lambda x, y: LA.lstsq(np.stack([x, np.ones_like(x)], 1), y,
                                                rcond=None)[0], np.arange(8.0),
                          2 * np.arange(8.0) + 1 + RNG.standard_normal(8) * 0.1),
}

ERRORS = {  # NumPy raises; hop.compile raises the same type
    "inv_singular": (lambda a: LA.inv(a), np.zeros((2, 2))),
    "inv_not_square": (lambda a: LA.inv(a), R),
    "inv_vector": (lambda a: LA.inv(a), V),
    "solve_singular": (lambda a, b: LA.solve(a, b), np.ones((2, 2)), np.ones(2)),
    "cholesky_not_positive_definite": (lambda a: LA.cholesky(a), -SPD),
    "det_not_square": (lambda a: LA.det(a), R),
    "norm_fro_of_vector": (lambda a: LA.norm(a, "fro"), V),
    "norm_bad_ord": (lambda a: LA.norm(a, "x"), A),
    "matrix_power_not_square": (lambda a: LA.matrix_power(a, 2), R),
    "qr_bad_mode": (lambda a: LA.qr(a, mode="x"), R),
    "cond_empty": (lambda a: LA.cond(a), np.zeros((0, 0))),
    "eig_of_nan_is_numpys_error": (lambda a: LA.eig(a), np.array([[1.0, np.nan], [0.0, 1.0]])),
    "eigvals_of_inf_is_numpys_error": (lambda a: LA.eigvals(a), np.array([[np.inf]])),
    "eig_not_square": (lambda a: LA.eig(a), R),
    "eigvals_vector": (lambda a: LA.eigvals(a), V),
    "cond_of_a_nan_matrix_svd_does_not_converge": (lambda a: LA.cond(a),
                                                   np.array([[1.0, np.nan], [0.0, 1.0]])),
    "cond_1_not_square": (lambda a: LA.cond(a, 1), R),
    "tensorinv_bad_ind": (lambda a: LA.tensorinv(a, ind=0), A),
    "tensorinv_not_square": (lambda a: LA.tensorinv(a, ind=1), R),
    "tensorsolve_bad_shapes": (lambda a, b: LA.tensorsolve(a, b), RNG.standard_normal((6, 2, 4)),
                               RNG.standard_normal(6)),
}


@pytest.mark.parametrize("name", sorted(n for n in CASES if n.startswith(("cond", "tensor", "eig"))
                                         and not n.startswith("eigh")))
def test_cond_tensorinv_tensorsolve_eig_eigvals_eagerly_match_numpy(name):
    fn, *args = CASES[name]
    with np.errstate(all="ignore"):
        want = fn(*args)
    got = fn(*[hnp.asarray(a) for a in args])
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        assert getattr(g, "_scalar", False) == isinstance(w, np.generic)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-9, atol=1e-12)


def test_eig_of_a_real_matrix_recompiles_when_its_eigenvalues_turn_complex():
    # NumPy's result dtype depends on the data: hop.compile guards the path
    f = hop.compile(lambda a: LA.eigvals(a))
    assert f(SPD).dtype == np.float64
    assert f(np.array([[0.0, -1.0], [1.0, 0.0]])).dtype == np.complex128
    assert f(2 * SPD).dtype == np.float64
    np.testing.assert_allclose(np.sort(f(A)), np.sort(LA.eigvals(A)), rtol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg_matches_numpy(name):
    fn, *args = CASES[name]
    check(fn, *args, rtol=1e-9)


@pytest.mark.parametrize("name", ["inv", "det", "solve_matrix", "cholesky", "eigvalsh",
                                  "svd_values", "norm_2", "cond_1", "tensorinv_ind_1", "eigvals",
                                  "eig_real_eigenvalues_are_real"])
def test_linalg_in_float32_keeps_float32(name):
    fn, *args = CASES[name]
    check(fn, *[a.astype(np.float32) for a in args], rtol=2e-5)


_F32_2 = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
_MIXED = {
    "solve f32, int": lambda a, b: np.linalg.solve(a, b),
    "solve int8, f32": lambda a, b: np.linalg.solve(b.astype(np.int8) * np.eye(2, dtype=np.int8),
                                                    a[0]),
    "solve f32, bool": lambda a, b: np.linalg.solve(a, b > 1),
    "solve c64, int": lambda a, b: np.linalg.solve(a.astype(np.complex64), b),
    "solve f32, f32": lambda a, b: np.linalg.solve(a, a[0]),
    "lstsq f32, int": lambda a, b: np.linalg.lstsq(a, b, rcond=None),
    "tensorsolve f32, int": lambda a, b: np.linalg.tensorsolve(a, b),
}


@pytest.mark.parametrize("case", _MIXED)
def test_single_precision_with_an_integer_operand_computes_and_answers_in_double(case):
    # NumPy's _commonType counts a bool or integer operand as double: float32
    # with int64 is float64 (hop kept float32), eager and compiled
    fn = _MIXED[case]
    b = np.array([1, 2])
    want = fn(_F32_2, b)
    got = fn(hnp.asarray(_F32_2), hnp.asarray(b))
    same(_as_numpy(got), want, rtol=1e-6)
    check(fn, _F32_2, b, rtol=1e-6)


_BOOL3 = np.array([[True, False, False], [True, True, False], [False, True, True]])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, -1])
def test_matrix_power_of_a_bool_matrix_is_numpys_bool_matmul(n):
    # (hop's matmul has no bool: DTypeError; NumPy's bool matmul is an OR of
    # ANDs), a matrix and a stack, eager and compiled
    for x in (_BOOL3, np.stack([_BOOL3, ~_BOOL3])):
        fn = lambda a: np.linalg.matrix_power(a, n)  # noqa: E731
        want = fn(x)
        same(_as_numpy(fn(hnp.asarray(x))), want)
        check(fn, x)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_linalg_errors_are_numpys(name):
    fn, *args = ERRORS[name]
    check(fn, *args)


def test_singular_matrix_is_a_numpy_linalg_error_with_numpys_message():
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        hop.compile(lambda a: LA.inv(a))(np.zeros((2, 2)))
    with pytest.raises(hop.LinAlgError):
        hnp.linalg.inv(hnp.zeros((2, 2)))
    assert issubclass(hnp.linalg.LinAlgError, np.linalg.LinAlgError)


def test_one_singular_matrix_of_a_batch_fails_the_call():
    a = np.stack([np.eye(2), np.zeros((2, 2))])
    check(lambda x: LA.inv(x), a)


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (float(f(hop.tensor(x + d))) - float(f(hop.tensor(x - d)))) / (2 * eps)
    return g


GRADS = {  # scalar functions of a 3x3 float64 matrix
    "det": lambda t: hnp.linalg.det(t),
    "inv": lambda t: (hnp.linalg.inv(t) * hnp.arange(9.0).reshape(3, 3)).sum(),
    "slogdet": lambda t: hnp.linalg.slogdet(t)[1],
    "solve": lambda t: hnp.linalg.solve(t, hnp.ones(3)).sum(),
    "cholesky": lambda t: (hnp.linalg.cholesky(t @ t.T + hnp.eye(3)) ** 2).sum(),
    "qr": lambda t: (hnp.linalg.qr(t)[1] * hnp.arange(9.0).reshape(3, 3)).sum(),
    "svd_values": lambda t: (hnp.linalg.svd(t, compute_uv=False) * hnp.arange(1.0, 4.0)).sum(),
    "eigvalsh": lambda t: (hnp.linalg.eigvalsh(t + t.T) * hnp.arange(1.0, 4.0)).sum(),
    "eigh_vectors": lambda t: (hnp.abs(hnp.linalg.eigh(t + t.T)[1][:, 0])).sum(),
    "pinv": lambda t: (hnp.linalg.pinv(t) ** 2).sum(),
    "lstsq": lambda t: hnp.linalg.lstsq(t, hnp.arange(3.0), rcond=None)[0].sum(),
    "norm_fro": lambda t: hnp.linalg.norm(t),
    "norm_nuc": lambda t: hnp.linalg.norm(t, "nuc"),
    "matrix_power": lambda t: hnp.linalg.matrix_power(t, 3).sum(),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_linalg_gradients_match_central_differences(name):
    x = np.random.default_rng(1).standard_normal((3, 3)) + 2 * np.eye(3)
    f = GRADS[name]
    g = hop.grad(f)(hop.tensor(x))
    np.testing.assert_allclose(np.asarray(g.numpy()), _fd(f, x), rtol=1e-5, atol=1e-6)


def test_vmap_of_linalg_ops_is_the_loop():
    xs = np.random.default_rng(2).standard_normal((4, 3, 3)) + 3 * np.eye(3)
    for f in (lambda t: hnp.linalg.det(t), lambda t: hnp.linalg.inv(t),
              lambda t: hnp.linalg.solve(t, hnp.ones(3)),
              lambda t: hnp.linalg.svd(t, compute_uv=False)):
        got = np.asarray(hop.vmap(f)(hop.tensor(xs)).numpy())
        want = np.stack([np.asarray(f(hop.tensor(x)).numpy()) for x in xs])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(1, 5), batch=st.sampled_from([(), (2,), (1, 3)]),
       dtype=st.sampled_from([np.float64, np.float32, np.complex128]),
       op=st.sampled_from(["solve", "inv", "det", "slogdet", "eigvalsh", "svdvals", "norm",
                           "pinv", "cholesky"]),
       seed=st.integers(0, 2**16))
def test_random_well_conditioned_problems_match_numpy(n, batch, dtype, op, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (n, n))
    if dtype == np.complex128:
        a = a + 1j * rng.standard_normal(batch + (n, n))
    a = a + 2 * n * np.eye(n)  # diagonally dominant: far from singular
    if op in ("eigvalsh", "cholesky"):
        a = a @ np.swapaxes(a, -1, -2).conj()
    a = a.astype(dtype)
    b = rng.standard_normal(batch + (n, 2)).astype(dtype)
    fns = {"solve": lambda x, y: LA.solve(x, y), "inv": lambda x, y: LA.inv(x),
           "det": lambda x, y: LA.det(x), "slogdet": lambda x, y: LA.slogdet(x),
           "eigvalsh": lambda x, y: LA.eigvalsh(x),
           "svdvals": lambda x, y: LA.svd(x, compute_uv=False),
           "norm": lambda x, y: LA.norm(x, axis=(-2, -1)), "pinv": lambda x, y: LA.pinv(x),
           "cholesky": lambda x, y: LA.cholesky(x)}
    check(fns[op], a, b, rtol=1e-4 if dtype == np.float32 else 1e-9)


def test_linalg_calls_trace_to_lapack_ops_not_to_numpy():
    f = hop.compile(lambda a, b: (LA.solve(a, b), LA.det(a), LA.eigvalsh(a @ a.T),
                                  LA.svd(a, compute_uv=False), LA.qr(a)[1], LA.cholesky(a @ a.T)))
    f(A, B)
    (g,) = f.graphs
    for op in ("linalg_solve", "linalg_det", "linalg_eigvalsh", "linalg_svdvals", "linalg_qr",
               "linalg_cholesky"):
        assert f"= {op}(" in g.code, op


def test_tall_matrices_whose_square_overflows_int32_factor():
    # m * m > INT_MAX, but the reduced factors are m x 2: svd and lstsq refused them
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((50000, 2)), rng.standard_normal(50000)
    check(lambda x, y: LA.lstsq(x, y, rcond=None)[0], a, b, rtol=1e-9)
    check(lambda x: LA.svd(x, full_matrices=False)[1], a, rtol=1e-9)


def _eig_packed(a, vectors=True):
    w, v = np.linalg.eig(a) if vectors else (np.linalg.eigvals(a), None)
    return np.concatenate([w[..., None, :], v], -2) if vectors else w


def _fd_complex(f, x, eps=1e-6):
    """JAX's gradient of a real f: df/dx - i df/dy per element (df/dx for a real x)."""
    g = np.zeros(x.shape, dtype=x.dtype)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        g[idx] = (f(x + d) - f(x - d)) / (2 * eps)
        if np.iscomplexobj(x):
            d[idx] = 1j * eps
            g[idx] -= 1j * (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("vectors", [True, False], ids=["eig", "eigvals"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eig_gradient_matches_central_differences_phase_included(vectors, dtype):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 3))
    if dtype == np.complex128:
        a = a + 1j * rng.standard_normal((2, 3, 3))
    assert (np.linalg.eigvals(a).imag != 0).any()  # complex eigenvalues and vectors
    c1, c2 = rng.standard_normal((2, 4 if vectors else 1, 3))
    if not vectors:
        c1, c2 = c1[0], c2[0]

    def loss_np(x):  # depends on the eigenvectors' phase: geev's normalisation is differentiated
        p = _eig_packed(x, vectors)
        return float((p.real * c1 + p.imag * c2).sum())

    t1, t2 = hop.tensor(c1), hop.tensor(c2)

    def loss(x):
        p = hop._C._op("linalg_eig", x, vectors)
        return (hop._C._op("real", p) * t1 + hop._C._op("imag", p) * t2).sum()
    assert float(loss(hop.tensor(a))) == pytest.approx(loss_np(a), rel=1e-12)
    g = np.asarray(hop.grad(loss)(hop.tensor(a)).numpy())
    assert g.dtype == a.dtype
    np.testing.assert_allclose(g, _fd_complex(loss_np, a), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eig_jvp_matches_central_differences(dtype):
    rng = np.random.default_rng(5)
    a, da = rng.standard_normal((2, 4, 4)), rng.standard_normal((2, 4, 4))
    if dtype == np.complex128:
        a, da = a + 1j * rng.standard_normal((2, 4, 4)), da + 1j * rng.standard_normal((2, 4, 4))
    for vectors in (True, False):
        _, t = hop.jvp(lambda x: hop._C._op("linalg_eig", x, vectors), (hop.tensor(a),),
                       (hop.tensor(da),))
        eps = 1e-6
        want = (_eig_packed(a + eps * da, vectors) - _eig_packed(a - eps * da, vectors)) / (2 * eps)
        np.testing.assert_allclose(np.asarray(t.numpy()), want, rtol=1e-6, atol=1e-7)


def test_eigh_and_eigvalsh_jvp_match_central_differences():
    rng = np.random.default_rng(6)
    s = rng.standard_normal((3, 3))
    s, ds = s + s.T, rng.standard_normal((3, 3))
    ds = ds + ds.T
    eps = 1e-6

    def packed(x):
        w, v = np.linalg.eigh(x)
        return np.concatenate([w[None], v], 0)
    want = (packed(s + eps * ds) - packed(s - eps * ds)) / (2 * eps)
    _, t = hop.jvp(lambda x: hop._C._op("linalg_eigh", x, False), (hop.tensor(s),),
                   (hop.tensor(ds),))
    np.testing.assert_allclose(np.asarray(t.numpy()), want, rtol=1e-6, atol=1e-7)
    _, t = hop.jvp(lambda x: hop._C._op("linalg_eigvalsh", x, False), (hop.tensor(s),),
                   (hop.tensor(ds),))
    np.testing.assert_allclose(np.asarray(t.numpy()), want[0], rtol=1e-6, atol=1e-7)
    with pytest.raises(hop.UnsupportedError, match=r"linalg_eigh: forward-mode differentiation "
                                                   r"\(jvp\) for complex inputs"):
        hop.jvp(lambda x: hop._C._op("linalg_eigh", x, False), (hop.tensor(s + 0j),),
                (hop.tensor(ds + 0j),))


def test_numpy_eig_of_a_real_matrix_under_a_transform_is_an_error_naming_eig_and_the_transform():
    # NumPy's eig decides its result dtype on the data (real when every
    # eigenvalue is real): a transform's body, traced once, cannot.  Before
    # the fifty-first session: a TraceError about a bool() the user never
    # wrote (_eig's finiteness check)
    calls = {"vjp_body_0, traced by hop.grad or hop.vjp":
             lambda f: hop.grad(hop.compile(lambda a: f(a).real.sum()))(A),
             "jvp_body_0, traced by hop.jvp": lambda f: hop.jvp(f, (hop.tensor(A),), (hop.tensor(A),)),
             "vmap_body_0, traced by hop.vmap": lambda f: hop.vmap(f)(np.stack([A, A]))}
    for where, call in calls.items():
        for what, f in (("eigvals", LA.eigvals), ("eig", lambda a: LA.eig(a)[0])):
            with pytest.raises(hop.UnsupportedError, match=rf"^{what} of a real matrix in {where}: "
                               r"NumPy's result is real when every eigenvalue is real and "
                               r"complex otherwise.*\(a\.astype\(complex\)\)"):
                call(f)


def test_numpy_eig_of_a_complex_matrix_works_under_grad_jvp_and_vmap():
    a = A + 0.5j * RNG.standard_normal((4, 4))
    d = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
    # the eigenvalues sum to the trace: its gradient (JAX's convention for
    # a complex input) is the identity, its tangent along d tr(d)
    g = hop.grad(lambda x: LA.eigvals(x).real.sum())(a)
    np.testing.assert_allclose(g, np.eye(4), atol=1e-12)
    _, t = hop.jvp(lambda x: LA.eigvals(x).sum(), (a,), (d,))
    assert abs(complex(t) - np.trace(d)) < 1e-12
    got = hop.vmap(LA.eigvals)(np.stack([a, 2 * a]))
    want = np.stack([LA.eigvals(a), LA.eigvals(2 * a)])
    assert got.dtype == want.dtype == np.complex128
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # the finiteness check is the op's: NumPy's error under vmap too
    with pytest.raises(LA.LinAlgError, match="^Array must not contain infs or NaNs$"):
        hop.vmap(LA.eigvals)(np.stack([a, a * np.inf]))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eig_gradient_is_torch_linalg_eigs(dtype):
    # a loss invariant to each eigenvector's phase (torch refuses the others);
    # torch's gradient of a real loss in a complex input is JAX's conjugated
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 4, 4))
    if dtype == np.complex128:
        a = a + 1j * rng.standard_normal((2, 4, 4))
    c = rng.standard_normal((2, 4, 4))
    c1, c2 = rng.standard_normal((2, 2, 4))
    ta = torch.tensor(a, requires_grad=True)
    w, v = torch.linalg.eig(ta)
    ((v.abs() ** 2 * torch.tensor(c)).sum() +
     (w.real * torch.tensor(c1) + w.imag * torch.tensor(c2)).sum()).backward()
    want = ta.grad.numpy()
    tc, t1, t2 = hop.tensor(c), hop.tensor(c1), hop.tensor(c2)

    def loss(x):
        p = hop._C._op("linalg_eig", x, True)
        hw, hv = p.select(-2, 0), hop._C._op("abs", p.slice(-2, 1, 5))
        return (hv * hv * tc).sum() + (hop._C._op("real", hw) * t1 +
                                       hop._C._op("imag", hw) * t2).sum()
    got = np.asarray(hop.grad(loss)(hop.tensor(a)).numpy())
    np.testing.assert_allclose(got, np.conj(want), rtol=1e-10, atol=1e-12)
