"""Every function of hop.numpy.linalg under hop.grad, hop.jvp and hop.vmap
(the forty-ninth session): grad and jvp against torch.func (functorch,
torch 1.13) and against central differences of NumPy's own function, vmap
bit for bit against the per-example loop.  One case per function and shape
(tall, square, wide where they differ); a case reads its input from a
fixed generator.  Functions of a symmetric matrix (cholesky, eigh,
eigvalsh) read one triangle: their derivatives are checked along symmetric
directions (hop's, PyTorch's and JAX's conventions agree there only).

transform_values.Campaign does not fit: its programs take two 3-vectors
under compositions of HOPs; these take one matrix of a shape each."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from transform_values import close

L = hnp.linalg


def _sq(r, n=3):
    return r.standard_normal((n, n)) + 2 * np.eye(n)


def _spd(r, n=3):
    a = r.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def _mat(m, n):
    return lambda r: r.standard_normal((m, n))


_B6 = np.arange(6.0) - 2.5
_B3 = np.array([0.5, -1.0, 2.0])


def _tl():
    import torch
    return torch, torch.linalg


def _uw(u):  # a sign-invariant function of singular/eigen vectors (columns)
    return u * u[..., :1, :]


# name: (hop's f(a), torch's f(a) or None (no torch reference: torch
# refuses it), input maker, symmetric input)
CASES = {
    "solve": (lambda a: L.solve(a, hnp.asarray(_B3)),
              lambda a: _tl()[1].solve(a, _tl()[0].tensor(_B3)), _sq, False),
    "inv": (L.inv, lambda a: _tl()[1].inv(a), _sq, False),
    "det": (L.det, lambda a: _tl()[1].det(a), _sq, False),
    "slogdet": (lambda a: L.slogdet(a)[1], lambda a: _tl()[1].slogdet(a)[1], _sq, False),
    "cholesky": (L.cholesky, lambda a: _tl()[1].cholesky(a), _spd, True),
    "qr_tall": (lambda a: L.qr(a)[0] * 2.0 + L.qr(a)[1].sum(),
                lambda a: _tl()[1].qr(a)[0] * 2.0 + _tl()[1].qr(a)[1].sum(), _mat(5, 3), False),
    "qr_square_complete": (lambda a: L.qr(a, "complete")[0] - L.qr(a, "complete")[1],
                           lambda a: _tl()[1].qr(a, "complete")[0] - _tl()[1].qr(a, "complete")[1],
                           _sq, False),
    "qr_wide": (lambda a: L.qr(a)[1] + L.qr(a)[0].sum(),
                lambda a: _tl()[1].qr(a)[1] + _tl()[1].qr(a)[0].sum(), _mat(3, 5), False),
    "qr_r": (lambda a: L.qr(a, "r"), None, _mat(5, 3), False),
    "svd_tall": (lambda a: _uw(L.svd(a, full_matrices=False)[0]) + L.svd(a, compute_uv=False).sum(),
                 lambda a: _uw(_tl()[1].svd(a, full_matrices=False)[0]) +
                 _tl()[1].svd(a)[1].sum(), _mat(5, 3), False),
    "svd_wide_vh": (lambda a: _uw(L.svd(a, full_matrices=False)[2].T),
                    lambda a: _uw(_tl()[1].svd(a, full_matrices=False)[2].T), _mat(3, 5), False),
    "svd_square_full": (lambda a: _uw(L.svd(a)[0]) * L.svd(a)[1],
                        lambda a: _uw(_tl()[1].svd(a)[0]) * _tl()[1].svd(a)[1], _sq, False),
    "svdvals": (lambda a: L.svd(a, compute_uv=False), lambda a: _tl()[1].svdvals(a),
                _mat(3, 5), False),
    "eigh": (lambda a: _uw(L.eigh(a)[1]) * L.eigh(a)[0],
             lambda a: _uw(_tl()[1].eigh(a)[1]) * _tl()[1].eigh(a)[0], _spd, True),
    "eigvalsh": (L.eigvalsh, lambda a: _tl()[1].eigvalsh(a), _spd, True),
    "lstsq_tall": (lambda a: L.lstsq(a, hnp.asarray(_B6), rcond=None)[0],
                   lambda a: _tl()[1].lstsq(a, _tl()[0].tensor(_B6)[:, None],
                                            driver="gelsd").solution[:, 0], _mat(6, 3), False),
    "lstsq_tall_qr": (lambda a: L.lstsq(a, hnp.asarray(_B6[:5]), rcond=None)[0],
                      lambda a: _tl()[1].lstsq(a, _tl()[0].tensor(_B6[:5])[:, None],
                                               driver="gelsd").solution[:, 0], _mat(5, 2), False),
    "lstsq_square": (lambda a: L.lstsq(a, hnp.asarray(_B3), rcond=None)[0],
                     lambda a: _tl()[1].lstsq(a, _tl()[0].tensor(_B3)[:, None],
                                              driver="gelsd").solution[:, 0], _sq, False),
    "lstsq_wide": (lambda a: L.lstsq(a, hnp.asarray(_B3), rcond=None)[0],
                   lambda a: _tl()[1].lstsq(a, _tl()[0].tensor(_B3)[:, None],
                                            driver="gelsd").solution[:, 0], _mat(3, 5), False),
    "pinv_tall": (L.pinv, lambda a: _tl()[1].pinv(a), _mat(5, 3), False),
    "pinv_wide": (L.pinv, lambda a: _tl()[1].pinv(a), _mat(3, 5), False),
    "matrix_power": (lambda a: L.matrix_power(a, -2), lambda a: _tl()[1].matrix_power(a, -2),
                     _sq, False),
    "multi_dot": (lambda a: L.multi_dot([a, a.T, a]), lambda a: _tl()[1].multi_dot([a, a.T, a]),
                  _mat(3, 4), False),
    "norm_fro": (L.norm, lambda a: _tl()[1].norm(a), _mat(3, 4), False),
    "norm_nuc": (lambda a: L.norm(a, "nuc"), lambda a: _tl()[1].matrix_norm(a, "nuc"),
                 _mat(3, 4), False),
    "norm_2": (lambda a: L.norm(a, 2), lambda a: _tl()[1].matrix_norm(a, 2), _mat(4, 3), False),
    "norm_1": (lambda a: L.norm(a, 1), lambda a: _tl()[1].matrix_norm(a, 1), _mat(3, 4), False),
    "norm_vector_3": (lambda a: L.norm(a, 3, axis=1),
                      lambda a: _tl()[1].vector_norm(a, 3, dim=1), _mat(3, 4), False),
    "cond": (L.cond, lambda a: _tl()[1].cond(a), _sq, False),
    "cond_fro": (lambda a: L.cond(a, "fro"), None, _sq, False),
    "tensorinv": (lambda a: L.tensorinv(a.reshape(2, 2, 4), 2),
                  lambda a: _tl()[1].tensorinv(a.reshape(2, 2, 4), 2),
                  lambda r: _sq(r, 4).reshape(2, 8), False),
    "tensorsolve": (lambda a: L.tensorsolve(a.reshape(2, 2, 4), hnp.asarray(np.ones((2, 2)))),
                    lambda a: _tl()[1].tensorsolve(a.reshape(2, 2, 4), _tl()[0].ones(2, 2, dtype=_tl()[0].float64)),
                    lambda r: _sq(r, 4).reshape(2, 8), False),
}


def _setup(name):
    hf, tf, make, sym = CASES[name]
    r = np.random.default_rng(sorted(CASES).index(name) + 4900)
    a = make(r)
    d = r.standard_normal(a.shape)
    if sym:
        d = d + d.T
    w = r.standard_normal(np.shape(hf(hnp.asarray(a))))
    return hf, tf, a, d, w, sym


def _central(hf, a, d, h=1e-6):
    """NumPy's own function (hop's eager one gives its bits) differenced
    along d."""
    hi = np.asarray(hf(hnp.asarray(a + h * d)))
    lo = np.asarray(hf(hnp.asarray(a - h * d)))
    return (hi - lo) / (2 * h)


def _sym(g):
    return (g + g.T) / 2


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg_grad_jvp_vmap_match_torch_and_differences(name):
    hf, tf, a, d, w, sym = _setup(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fd = _central(hf, a, d)
        # jvp: functorch's and the central difference
        _, t = hop.jvp(hf, (hnp.asarray(a),), (hnp.asarray(d),))
        close(t, fd, rtol=1e-6, atol=1e-7 * (1 + np.abs(fd).max()))
        # grad of <f, w>: its pairing with d is the jvp's with w
        g = np.asarray(hop.grad(lambda x: (hf(x) * hnp.asarray(w)).sum())(hnp.asarray(a)))
        assert g.dtype == np.float64 and g.shape == a.shape
        close((g * d).sum(), (np.asarray(t) * w).sum(), rtol=1e-12, atol=1e-12)
        if tf is not None:
            torch = pytest.importorskip("torch")
            import functorch
            ta, td = torch.tensor(a), torch.tensor(d)
            _, tt = functorch.jvp(tf, (ta,), (td,))
            close(t, tt, rtol=1e-10, atol=1e-12)
            tg = functorch.grad(lambda x: (tf(x) * torch.tensor(w)).sum())(ta).numpy()
            # one triangle read: compared as the gradients along symmetric
            # directions see them
            close(_sym(g) if sym else g, _sym(tg) if sym else tg, rtol=1e-10, atol=1e-12)
        # vmap: the loop's bits
        xs = np.stack([a, a * 1.5 - 0.25, a + 0.1 * d])
        got = hop.vmap(hf)(hnp.asarray(xs))
        want = np.stack([np.asarray(hf(hnp.asarray(x))) for x in xs])
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (got, want)


def _rank2(m, n, seed):
    """An m x n integer matrix of rank exactly 2 = N C, and perturbations
    that keep its rank (N' C and N C', integers: a + h d is exact)."""
    r = np.random.default_rng(seed)
    nn, c = r.integers(-3, 4, (m, 2)).astype(float), r.integers(-3, 4, (2, n)).astype(float)
    return nn @ c, [r.integers(-3, 4, (m, 2)) @ c, nn @ r.integers(-3, 4, (2, n))]


@pytest.mark.parametrize("shape", [(6, 3), (3, 5)])
def test_lstsq_derivative_of_a_rank_deficient_matrix_keeps_its_rank(shape):
    """lstsq of a rank-deficient matrix: hop's derivative is the one along
    perturbations that keep the rank (singular values at or below rcond *
    s_max stay zero), the central difference along those, and PyTorch's
    (torch.linalg.lstsq's, through pinv); along any other direction the
    solution jumps (no derivative exists) and hop gives the same value."""
    a, dirs = _rank2(*shape, seed=shape[0])
    b = np.arange(shape[0], dtype=float) - 1.0
    assert np.linalg.lstsq(a, b, rcond=None)[2] == 2

    def f(x):
        return L.lstsq(x, hnp.asarray(b), rcond=None)[0]
    h = 2.0 ** -20
    for d in dirs:
        d = d.astype(float)
        _, t = hop.jvp(f, (hnp.asarray(a),), (hnp.asarray(d),))
        assert np.linalg.lstsq(a + h * d, b, rcond=None)[2] == 2
        close(t, _central(f, a, d, h), rtol=1e-6, atol=1e-9)
    torch = pytest.importorskip("torch")
    import functorch
    d = np.random.default_rng(7).standard_normal(shape)
    _, t = hop.jvp(f, (hnp.asarray(a),), (hnp.asarray(d),))

    def tf(x):
        return torch.linalg.lstsq(x, torch.tensor(b)[:, None], driver="gelsd").solution[:, 0]
    _, tt = functorch.jvp(tf, (torch.tensor(a),), (torch.tensor(d),))
    close(t, tt, rtol=1e-9, atol=1e-12)
    g = hop.grad(lambda x: f(x).sum())(hnp.asarray(a))
    close(g, functorch.grad(lambda x: tf(x).sum())(torch.tensor(a)), rtol=1e-9, atol=1e-12)


def test_vmap_of_tall_lstsq_residuals_of_differing_rank_is_a_clear_error():
    """A tall system's residuals have n_rhs values at full rank and none
    below it: a batch whose examples differ in rank has no one shape, so
    vmap's run raises (x alone is fine: the residuals' cond is not needed)."""
    r = np.random.default_rng(1)
    a = r.standard_normal((6, 3))
    low = a.copy()
    low[:, 2] = 0.0
    xs, b = np.stack([a, low]), np.arange(6.0)

    def f(x):
        return L.lstsq(x, hnp.asarray(b), rcond=None)
    x = hop.vmap(lambda v: f(v)[0])(hnp.asarray(xs))
    want = np.stack([np.linalg.lstsq(v, b, rcond=None)[0] for v in xs])
    assert np.asarray(x).tobytes() == want.tobytes()
    # (an UnsupportedError for every batch until the fifty-first session's
    # vmap rule of a cond whose branches differ in shape: one cond on any of
    # the predicates, checked at run time to be every example's branch)
    with pytest.raises(hop.CheckError, match=r"the examples of a vmap take different branches "
                       r"of a cond whose branches give outputs of different shapes"):
        hop.vmap(lambda v: f(v)[1])(hnp.asarray(xs))
