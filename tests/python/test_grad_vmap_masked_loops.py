"""grad of vmap of a loop whose lanes finish at different times.

Under vmap, a while_loop with a batched predicate and a fori_loop with a
per-example bound run one loop for the whole batch: c' = where(active,
body(c), c), so a finished lane keeps running the body and where discards
its results (docs/VMAP.md).  In reverse mode where gives those results a
zero cotangent, and the body's own rules multiplied it by the body's
derivative at the finished lane's carry: where that is infinite (exp that
overflows once the lane is done, sqrt or log at the value that ended the
loop) 0 * inf made the example's gradient nan, and a closed-over value's
gradient, a sum over the lanes, nan for the whole batch.  The masked body
now reads each float input through mask_gradient with the lanes' mask
(docs/AUTODIFF.md, "The select rule"), so a finished lane never reads the
body's derivative.

Each program is checked against hop.grad of the same function on each
example alone (the examples' gradients stacked, a closure's summed), against
central finite differences of the per-example function in float64, and
under hop.compile; the forward of vmap is bit for bit the per-example
forward.
"""

import math

import numpy as np
import pytest

import hop

F64, F32 = hop.float64, hop.float32
DTYPES = {"float64": F64, "float32": F32}
NP = {"float64": np.float64, "float32": np.float32}


# Each program is f(x, w, n) on one example: x its float carry, w a value
# every example shares (vmap's in_axes None: a closure), n its int (a trip
# count or bound; the while programs ignore it).

def while_exp(x, w, n):
    """while c < 100: c = exp(c * w): exp overflows on a finished lane."""
    return hop.while_loop(lambda c: c < 100.0, lambda c: ((c * w).exp(),), (x,))[0]


def while_sqrt(x, w, n):
    """while c > 2: c = sqrt(c - 2) * w + 1: a finished lane reads sqrt at or
    below 0 (at 2 exactly, an example with zero trips)."""
    return hop.while_loop(lambda c: c > 2.0, lambda c: ((c - 2.0).sqrt() * w + 1.0,), (x,))[0]


def while_two_carries(x, w, n):
    """A count carried beside c, and c of two elements: the mask lined up
    against a [B, 2] carry and a [2] closure."""
    c, k = hop.while_loop(lambda c, k: c.sum() < 100.0,
                          lambda c, k: ((c * w).exp(), k + 1.0),
                          (x, hop.zeros((), dtype=x.dtype)))
    return c * 2.0 + k


def fori_exp(x, w, n):
    """fori_loop(0, n): exp(c * w), n per example (0: zero trips)."""
    return hop.fori_loop(0, n, lambda i, c: (c * w).exp(), x)


def fori_log_lower(x, w, n):
    """fori_loop(n, 3): log(c) * w, the lower bound per example; a lane
    that ends at c = 0 reads log at 0."""
    return hop.fori_loop(n, 3, lambda i, c: c.log() * w, x)


# name: (f, X, w, N, examples where f is not differentiable: no finite
# differences there)
PROGRAMS = {
    "while_exp": (while_exp, [0.0, 1.0, 50.0, 200.0], 1.0, [0, 0, 0, 0], ()),
    "while_sqrt": (while_sqrt, [10.0, 1.0, 30.0, 2.5, 2.0], 1.3, [0] * 5, (4,)),
    "while_two_carries": (while_two_carries, [[0.0, 0.5], [1.0, 1.0], [3.0, 3.5]], [1.0, 1.0],
                          [0, 0, 0], ()),
    "fori_exp": (fori_exp, [10.0, -10.0, 3.0, 0.5], 1.0, [1, 4, 0, 2], ()),
    "fori_log_lower": (fori_log_lower, [3.0, 20.0, 0.0, math.exp(0.5)], 2.0, [2, 0, 3, 1], ()),
}


def inputs(name, dtype):
    f, X, w, N, _ = PROGRAMS[name]
    return (f, hop.tensor(X, dtype=DTYPES[dtype]), hop.tensor(w, dtype=DTYPES[dtype]),
            hop.tensor(N))


def loss_of(f, N):
    """The batch's loss: vmap(f) with w shared, summed."""
    return lambda X, w: hop.vmap(f, in_axes=(0, None, 0))(X, w, N).sum()


def per_example_grads(f, X, w, N):
    """hop.grad of f on each example alone: x's stacked, w's summed."""
    g = hop.grad(lambda x, w, n: f(x, w, n).sum(), argnums=(0, 1))
    gs = [g(X[i], w, N[i]) for i in range(X.shape[0])]
    return (np.stack([np.asarray(gx.numpy()) for gx, _ in gs]),
            np.sum([np.asarray(gw.numpy()) for _, gw in gs], axis=0))


def finite_differences(f, X, w, N, skip):
    """Central differences of f on each example alone, in float64."""
    X, w = np.asarray(X, dtype=np.float64), np.asarray(w, dtype=np.float64)

    def ell(x, w, i):
        return float(f(hop.tensor(x, dtype=F64), hop.tensor(w, dtype=F64),
                       hop.tensor(N[i])).sum())

    def diff(fun, v):
        v = np.array(v, dtype=np.float64)
        g = np.zeros_like(v)
        for idx in np.ndindex(v.shape):
            eps = 1e-6 * max(1.0, abs(v[idx]))
            vp, vm = v.copy(), v.copy()
            vp[idx] += eps
            vm[idx] -= eps
            g[idx] = (fun(vp) - fun(vm)) / (2 * eps)
        return g

    keep = [i for i in range(X.shape[0]) if i not in skip]
    gx = {i: diff(lambda x: ell(x, w, i), X[i]) for i in keep}
    gw = sum(diff(lambda v: ell(X[i], v, i), w) for i in keep)
    return keep, gx, gw


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vmap_of_a_masked_loop_gives_each_example_its_own_forward_bit_for_bit(name, dtype):
    f, X, w, N = inputs(name, dtype)
    got = hop.vmap(f, in_axes=(0, None, 0))(X, w, N).numpy()
    want = np.stack([f(X[i], w, N[i]).numpy() for i in range(X.shape[0])])
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_grad_of_vmap_of_a_masked_loop_is_the_per_example_gradient(name, dtype):
    f, X, w, N = inputs(name, dtype)
    gx, gw = hop.grad(loss_of(f, N), argnums=(0, 1))(X, w)
    gx, gw = gx.numpy(), gw.numpy()
    want_x, want_w = per_example_grads(f, X, w, N)
    assert np.isfinite(gx).all() and np.isfinite(gw).all(), (gx, gw)
    # each example's gradient is its own computation, elementwise the same
    np.testing.assert_array_equal(gx, want_x)
    # the closure's is a sum over the examples, in another order
    rtol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(gw, want_w, rtol=rtol)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_grad_of_vmap_of_a_masked_loop_matches_finite_differences(name):
    f, X, w, N = inputs(name, "float64")
    skip = PROGRAMS[name][4]
    gx, gw = hop.grad(loss_of(f, N), argnums=(0, 1))(X, w)
    keep, fd_x, fd_w = finite_differences(f, X.numpy(), w.numpy(), N.numpy(), skip)
    for i in keep:
        np.testing.assert_allclose(gx.numpy()[i], fd_x[i], rtol=1e-5, atol=1e-8)
    if not skip:
        np.testing.assert_allclose(gw.numpy(), fd_w, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_grad_of_vmap_of_a_masked_loop_is_the_plain_one(name, dtype):
    f, X, w, N = inputs(name, dtype)
    L = loss_of(f, N)
    gx, gw = hop.compile(hop.grad(L, argnums=(0, 1)))(X, w)
    want_x, want_w = hop.grad(L, argnums=(0, 1))(X, w)
    assert np.isfinite(gx.numpy()).all() and np.isfinite(gw.numpy()).all()
    rtol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(gx.numpy(), want_x.numpy(), rtol=rtol)
    np.testing.assert_allclose(gw.numpy(), want_w.numpy(), rtol=rtol)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_an_example_with_zero_trips_has_gradient_one_at_the_singular_bound(dtype):
    # x = 2 and x = 1 make no trip (c > 2 is false on entry): f(x) = x, so
    # the gradient is exactly 1 and w gets nothing from them, although the
    # lane reads sqrt(0) (x = 2) and sqrt(-1) (x = 1) on every trip the
    # other example makes
    dt = DTYPES[dtype]
    X, w = hop.tensor([2.0, 1.0, 30.0], dtype=dt), hop.tensor(1.3, dtype=dt)
    N = hop.tensor([0, 0, 0])
    gx, gw = hop.grad(loss_of(while_sqrt, N), argnums=(0, 1))(X, w)
    assert gx.numpy()[:2].tolist() == [1.0, 1.0]
    gw_alone = hop.grad(while_sqrt, argnums=1)(X[2], w, N[2])
    np.testing.assert_allclose(gw.numpy(), gw_alone.numpy(), rtol=1e-6)
    fori = lambda x, w, n: hop.fori_loop(0, n, lambda i, c: (c - 2.0).sqrt() * w + 2.0, x)
    gx = hop.grad(lambda X: hop.vmap(fori, in_axes=(0, None, 0))(X, w, hop.tensor([0, 3])).sum())(
        hop.tensor([2.0, 6.0], dtype=dt))
    assert gx.numpy()[0] == 1.0 and np.isfinite(gx.numpy()).all()


def test_the_reported_repros_give_the_per_example_gradient():
    X = hop.tensor([0.0, 1.0, 50.0], dtype=F64)
    f = lambda x: hop.while_loop(lambda c: c < 100.0, lambda c: (c.exp(),), (x,))[0]
    got = hop.grad(lambda X: hop.vmap(f)(X).sum())(X).numpy()
    np.testing.assert_array_equal(got, [float(hop.grad(f)(X[i])) for i in range(3)])
    np.testing.assert_allclose(got, [1.57123718660846e8, 1.57123718660846e8, 5.184705528587e21],
                               rtol=1e-12)
    g = lambda x, n: hop.fori_loop(0, n, lambda i, c: c.exp(), x)
    X2, N = hop.tensor([10.0, -10.0], dtype=F64), hop.tensor([1, 4])
    got = hop.grad(lambda X: hop.vmap(g)(X, N).sum())(X2).numpy()
    np.testing.assert_array_equal(got, [float(hop.grad(g)(X2[i], N[i])) for i in range(2)])
    np.testing.assert_allclose(got[0], math.exp(10.0), rtol=1e-12)


def test_grad_of_vmap_of_vmap_of_a_masked_loop_is_the_per_example_gradient():
    # the outer vmap batches the inner masked body's mask_gradient again
    X = hop.tensor([[0.0, 1.0, 50.0], [200.0, 2.0, 0.5]], dtype=F64)
    w, N = hop.tensor(1.0, dtype=F64), hop.tensor([[0] * 3] * 2)
    inner = hop.vmap(while_exp, in_axes=(0, None, 0))
    gx, gw = hop.grad(lambda X, w: hop.vmap(inner, in_axes=(0, None, 0))(X, w, N).sum(),
                      argnums=(0, 1))(X, w)
    want_x, want_w = per_example_grads(while_exp, X.reshape(-1), w, N.reshape(-1))
    np.testing.assert_array_equal(gx.numpy().reshape(-1), want_x)
    np.testing.assert_allclose(gw.numpy(), want_w, rtol=1e-12)


def test_the_masked_body_reads_its_float_inputs_through_mask_gradient():
    vf = hop.vmap(while_exp, in_axes=(0, None, 0))
    code = hop.trace(lambda X, w: vf(X, w, hop.tensor([0, 0])),
                     hop.tensor([0.0, 1.0]), hop.tensor(1.0)).code
    # the carry, and the closure broadcast to the batch first
    assert code.count("mask_gradient(") == 2
    assert "expand(" in code


@pytest.mark.parametrize("ct,what", [(np.ones(3), "a NumPy or hop.numpy array"),
                                     (2.0, "a float")], ids=["ndarray", "float"])
def test_a_cotangent_of_another_kind_names_it(ct, what):
    """(found beside this file's bug: the message read `structure * differs
    from the output's *`)"""
    _, fn = hop.vjp(lambda x: x.sin(), hop.ones(3))
    with pytest.raises(TypeError, match=f"a cotangent is {what} where the output has a "
                                        f"hop.Tensor; pass hop.tensor"):
        fn(ct)
