"""hop.numpy.linalg.lstsq under hop's transforms (issue #29): hop.grad
(against central differences and torch.linalg.lstsq's gradient), hop.jvp,
hop.vmap,
hop.trace with and without dynamic=True and hop.compile(dynamic=True), for
full-rank tall, square and wide systems.  The residuals keep NumPy's
shapes: a tall full-rank system's are n_rhs values, any other system's
none; under hop.trace the decision is a cond whose output size is
unbacked, under hop.compile a specialised path."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp

LA = np.linalg
RNG = np.random.default_rng(29)
SYSTEMS = {"tall": (RNG.standard_normal((7, 3)), RNG.standard_normal(7)),
           "square": (RNG.standard_normal((3, 3)) + 2 * np.eye(3), RNG.standard_normal(3)),
           "wide": (RNG.standard_normal((3, 5)), RNG.standard_normal(3)),
           "tall_matrix_rhs": (RNG.standard_normal((6, 2)), RNG.standard_normal((6, 3)))}
WEIGHTS = {name: RNG.standard_normal(a.shape[1:2] + b.shape[1:])
           for name, (a, b) in SYSTEMS.items()}


def _bits(got, want, what):
    g = np.asarray(got)
    assert g.dtype == want.dtype and g.shape == want.shape, (what, g, want)
    assert g.tobytes() == want.tobytes(), (what, g, want)


def _same(got, want, what):
    for i, name in enumerate(("x", "residuals", "rank", "s")):
        _bits(got[i], np.asarray(want[i]), f"{what} {name}")


def _loss(name):
    w = WEIGHTS[name]

    def f(a, b):
        x, res, _, s = hnp.linalg.lstsq(a, b, rcond=None)
        return (x * hnp.asarray(w)).sum() + res.sum() * 0.5 + s.sum() * 0.25
    return f


def _numpy_loss(name, a, b):
    x, res, _, s = LA.lstsq(a, b, rcond=None)
    return (x * WEIGHTS[name]).sum() + res.sum() * 0.5 + s.sum() * 0.25


def _central(name, a, b, which, eps=1e-6):
    args = [a, b]
    g = np.zeros_like(args[which])
    for i in np.ndindex(g.shape):
        hi = [v.copy() for v in args]
        lo = [v.copy() for v in args]
        hi[which][i] += eps
        lo[which][i] -= eps
        g[i] = (_numpy_loss(name, *hi) - _numpy_loss(name, *lo)) / (2 * eps)
    return g


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_lstsq_gradient_matches_central_differences(name):
    a, b = SYSTEMS[name]
    ga, gb = hop.grad(_loss(name), argnums=(0, 1))(hnp.asarray(a), hnp.asarray(b))
    np.testing.assert_allclose(np.asarray(ga), _central(name, a, b, 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(gb), _central(name, a, b, 1), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_lstsq_solution_gradient_matches_torch(name):
    torch = pytest.importorskip("torch")
    a, b = SYSTEMS[name]
    w = WEIGHTS[name]
    ta = torch.tensor(a, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    # torch's lstsq takes a matrix right-hand side; gelsd is the driver
    # that solves wide systems by the minimum norm, as NumPy's
    tx = torch.linalg.lstsq(ta, tb if b.ndim == 2 else tb[:, None], driver="gelsd").solution
    (tx.reshape(w.shape) * torch.tensor(w)).sum().backward()

    def f(x, y):
        return (hnp.linalg.lstsq(x, y, rcond=None)[0] * hnp.asarray(w)).sum()
    ga, gb = hop.grad(f, argnums=(0, 1))(hnp.asarray(a), hnp.asarray(b))
    np.testing.assert_allclose(np.asarray(ga), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), tb.grad.numpy(), rtol=1e-10, atol=1e-12)


def _lstsq(x, y):
    return hnp.linalg.lstsq(x, y, rcond=None)


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_lstsq_traced_is_numpys_bits(name):
    a, b = SYSTEMS[name]
    gm = hop.trace(_lstsq, hnp.asarray(a), hnp.asarray(b))
    _same(gm(hnp.asarray(a), hnp.asarray(b)), LA.lstsq(a, b, rcond=None), "traced")


def test_traced_tall_lstsq_residuals_empty_when_rank_deficient():
    a, b = SYSTEMS["tall"]
    gm = hop.trace(_lstsq, hnp.asarray(a), hnp.asarray(b))
    low = a.copy()
    low[:, 2] = low[:, 0] * 2.0  # rank 2 of 3
    want = LA.lstsq(low, b, rcond=None)
    assert want[1].shape == (0,) and want[2] == 2
    _same(gm(hnp.asarray(low), hnp.asarray(b)), want, "traced, rank 2")
    _same(gm(hnp.asarray(a), hnp.asarray(b)), LA.lstsq(a, b, rcond=None), "traced, rank 3")


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_lstsq_traced_with_dynamic_sizes_is_numpys_bits_at_other_sizes(name):
    a, b = SYSTEMS[name]
    gm = hop.trace(_lstsq, hnp.asarray(a), hnp.asarray(b), dynamic=True)
    m, n = a.shape
    # twice the rows (and the columns of a wide system): rcond=None's
    # eps * max(m, n) is computed at run time from the sizes
    a2 = np.concatenate([a, a[::-1] * 0.5 + 1.0], axis=0)
    b2 = np.concatenate([b, b[::-1] - 1.0], axis=0)
    if m <= n:  # (a square one stays square: its two dims are one symbol)
        a2 = np.concatenate([a2, a2[:, :n if m == n else 2] * 3.0 - 1.0], axis=1)
    for x, y in ((a, b), (a2, b2)):
        _same(gm(hnp.asarray(x), hnp.asarray(y)), LA.lstsq(x, y, rcond=None),
              f"dynamic {x.shape}")


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_lstsq_compiled_with_dynamic_sizes_is_numpys_bits(name):
    a, b = SYSTEMS[name]
    cf = hop.compile(lambda x, y: LA.lstsq(x, y, rcond=None), dynamic=True)
    a2 = np.concatenate([a, a * 0.5 - 1.0], axis=0)
    b2 = np.concatenate([b, b + 1.0], axis=0)
    for x, y in ((a, b), (a2, b2), (a, b)):
        _same(cf(x, y), LA.lstsq(x, y, rcond=None), f"compiled {x.shape}")


# A tall system's residuals have a size that depends on each example's
# rank (a cond with a batched predicate whose branches differ in shape);
# vmap batches only what its outputs need, so x alone is the loop's (it
# batched that cond too before the forty-ninth session: UnsupportedError).
@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_vmap_of_lstsq_solution_is_the_loop(name):
    a, b = SYSTEMS[name]
    xs = np.stack([a, a * 2.0 - 0.5, a[::-1] + 1.0])
    ys = np.stack([b, b - 1.0, b * 3.0])
    got = hop.vmap(lambda x, y: hnp.linalg.lstsq(x, y, rcond=None)[0])(
        hnp.asarray(xs), hnp.asarray(ys))
    want = np.stack([LA.lstsq(x, y, rcond=None)[0] for x, y in zip(xs, ys)])
    _bits(got, want, "vmap")


def test_vmap_of_tall_lstsq_residuals_is_the_loop_or_a_check_error_across_ranks():
    # every example of one rank: the loop's stacked residuals (n_rhs
    # values each at full rank, none below it); ranks that differ give
    # rows of different sizes, which the loop cannot stack either: a
    # CheckError when the plan runs.  Before the fifty-first session every
    # batch was an UnsupportedError about a cond's branch shapes.
    a, b = SYSTEMS["tall"]
    low = a.copy()
    low[:, 2] = low[:, 0] * 2.0  # rank 2 of 3
    res = hop.vmap(lambda x, y: hnp.linalg.lstsq(x, y, rcond=None)[1])
    ys = np.stack([b, b - 1.0])
    for xs in (np.stack([a, a * 2.0 - 0.5]), np.stack([low, low * 3.0])):
        want = np.stack([LA.lstsq(x, y, rcond=None)[1] for x, y in zip(xs, ys)])
        _bits(res(hnp.asarray(xs), hnp.asarray(ys)), want, "vmap residuals")
    with pytest.raises(hop.CheckError, match="of kind VMAP_BRANCHES"):
        res(hnp.asarray(np.stack([a, low])), hnp.asarray(ys))


def test_lstsq_rcond_minus_inf_is_numpys():
    a, b = SYSTEMS["tall"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = LA.lstsq(a, b, rcond=-np.inf)
        _same(hnp.linalg.lstsq(hnp.asarray(a), hnp.asarray(b), rcond=-np.inf), want, "eager")
        _same(hop.compile(lambda x, y: LA.lstsq(x, y, rcond=-np.inf))(a, b), want, "compiled")


# (UnsupportedError before the forty-ninth session: linalg_svd and
# linalg_qr had no jvp rule)
@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_lstsq_jvp_matches_central_differences(name):
    a, b = SYSTEMS[name]
    da = np.random.default_rng(sorted(SYSTEMS).index(name)).standard_normal(a.shape)

    def f(x):
        return (hnp.linalg.lstsq(x, hnp.asarray(b), rcond=None)[0]).sum()
    _, t = hop.jvp(f, (hnp.asarray(a),), (hnp.asarray(da),))
    eps = 1e-6
    want = (LA.lstsq(a + eps * da, b, rcond=None)[0].sum() -
            LA.lstsq(a - eps * da, b, rcond=None)[0].sum()) / (2 * eps)
    np.testing.assert_allclose(float(t), want, rtol=1e-6)
