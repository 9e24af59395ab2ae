"""Second derivatives through the loop HOPs (while_loop, fori_loop, scan).

A loop's reverse rule runs the step's backward once per step, carrying the
carries' cotangents.  Under grad of grad the first grad's value output is
one nothing differentiates, so a carry's cotangent is a zero: fed to the
first backward step as a tensor of zeros it met the partials of the last
forward step, and 0 * inf (a partial that overflowed) gave NaN where
PyTorch, whose unrolled loop never multiplies by a gradient it does not
have, gives the finite answer.  The first backward step now runs alone
with those cotangents absent (a symbolic zero), as do the ys' cotangents
nothing differentiates at every step.  Each case is checked against
functorch (torch.func) over the same loop unrolled in Python, and against finite
differences where the answer is finite and smooth.
"""
import warnings

import numpy as np
import pytest

import hop

torch = pytest.importorskip("torch")
tf = pytest.importorskip("functorch")  # torch.func of this PyTorch

F64 = hop.float64


def t(a):
    return hop.tensor(np.asarray(a, dtype=np.float64), dtype=F64)


def T(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def same(got, want, rtol=1e-10, atol=1e-12):
    got = got.numpy()
    want = want.detach().numpy()
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=False)


W = np.array([[0.5, -0.3], [0.2, 0.4]])

# a step of the loop: (carry, b) -> carry, written once for hop and torch
BODIES = {
    "poly": lambda v, b: v * v * 0.5 * b,
    "exp_sin": lambda v, b: (v.sin() * b + (v * 0.3).exp()) * 0.5,
    "matmul": lambda v, b: ((v.reshape(1, 2) @ (W_(v) * b.reshape(1, 2))).reshape(2)).tanh() + v * b,
}


def W_(v):
    return T(W) if isinstance(v, torch.Tensor) else t(W)


def hop_loop(kind, body, n):
    """The loop HOP kind running body n times over carry a (b read freely)."""
    if kind == "while_loop":
        return lambda a, b: hop.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, body(v, b)),
                                           (0, a))[1]
    if kind == "fori_loop":
        return lambda a, b: hop.fori_loop(0, n, lambda i, v: body(v, b), a)
    rev = kind == "scan_reverse"
    return lambda a, b: hop.scan(lambda c, r: (body(c, b), c), a, hop.zeros((n, 2), dtype=F64),
                                 reverse=rev)[0]


def torch_loop(body, n):
    def f(a, b):
        for _ in range(n):
            a = body(a, b)
        return a
    return f


def hop_gg(f):
    """d/db of sum(d/da sum(f(a, b))), the first grad taken wrt (a, b)."""
    return lambda a, b: hop.grad(lambda u, v: hop.grad(lambda p, q: f(p, q).sum(),
                                                       argnums=(0, 1))(u, v)[0].sum(),
                                 argnums=1)(a, b)


def torch_gg(f):
    return lambda a, b: tf.grad(lambda u, v: tf.grad(lambda p, q: f(p, q).sum(),
                                                     argnums=(0, 1))(u, v)[0].sum(),
                                argnums=1)(a, b)


def hop_jg(f, tb):
    """The jvp along b of d/da sum(f(a, b))."""
    return lambda a, b: hop.jvp(lambda q: hop.grad(lambda p, r: f(p, r).sum())(a, q), (b,),
                                (tb,))[1]


def torch_jg(f, tb):
    return lambda a, b: tf.jvp(lambda q: tf.grad(lambda p, r: f(p, r).sum())(a, q), (b,),
                               (tb,))[1]


LOOPS = ["while_loop", "fori_loop", "scan", "scan_reverse"]


# --------------------------------------------------------- the overflowing step

@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("compiled", [False, True])
def test_grad_of_grad_through_a_loop_whose_forward_overflows_is_finite(loop, compiled):
    # 0.5 * a * a overflows at a = 1e200; d/db d/da sum(0.5 a^2 b) = a
    f = hop_loop(loop, BODIES["poly"], 1)
    g = hop_gg(f)
    if compiled:
        g = hop.compile(g)
    a, b = [1e200, 3.0], [2.0, -1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = g(t(a), t(b))
    want = torch_gg(torch_loop(BODIES["poly"], 1))(T(a), T(b))
    assert want.tolist() == [1e200, 3.0]
    assert got.tolist() == [1e200, 3.0]


@pytest.mark.parametrize("loop", LOOPS)
def test_jvp_of_grad_through_a_loop_whose_forward_overflows_is_finite(loop):
    f = hop_loop(loop, BODIES["poly"], 1)
    a, b, tb = [1e200, 3.0], [2.0, -1.0], [1.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = hop_jg(f, t(tb))(t(a), t(b))
        want = torch_jg(torch_loop(BODIES["poly"], 1), T(tb))(T(a), T(b))
    # d/db (a b) along tb = a * tb
    assert want.tolist() == [1e200, 6.0]
    assert got.tolist() == [1e200, 6.0]


@pytest.mark.parametrize("loop", LOOPS)
def test_grad_of_grad_of_a_loop_of_no_step_passes_through(loop):
    # n = 0: f(a, b) = a, whose second derivative is zero
    f = hop_loop(loop, BODIES["poly"], 0)
    got = hop_gg(f)(t([1e200, 3.0]), t([2.0, -1.0]))
    assert got.tolist() == [0.0, 0.0]


# ------------------------------------------------------------ several bodies

@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("body", sorted(BODIES))
@pytest.mark.parametrize("n", [1, 3])
def test_second_derivatives_through_loops_agree_with_torch(loop, body, n):
    r = np.random.RandomState(n * 7 + len(body))
    a, b, tb = r.uniform(-0.9, 0.9, 2), r.uniform(-0.9, 0.9, 2), r.uniform(-1, 1, 2)
    hf, tf_ = hop_loop(loop, BODIES[body], n), torch_loop(BODIES[body], n)
    same(hop_gg(hf)(t(a), t(b)), torch_gg(tf_)(T(a), T(b)))
    same(hop.compile(hop_gg(hf))(t(a), t(b)), torch_gg(tf_)(T(a), T(b)))
    same(hop_jg(hf, t(tb))(t(a), t(b)), torch_jg(tf_, T(tb))(T(a), T(b)))
    # finite differences of the first derivative along b
    eps = 1e-6
    g1 = lambda bb: hop.grad(lambda p, q: hf(p, q).sum())(t(a), t(bb)).numpy()  # noqa: E731
    fd = (g1(b + eps * tb) - g1(b - eps * tb)) / (2 * eps)
    np.testing.assert_allclose(hop_jg(hf, t(tb))(t(a), t(b)).numpy(), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("body", sorted(BODIES))
def test_second_derivatives_through_a_data_dependent_while_loop(body):
    # the trip count depends on the data: run while |v| sums below 3
    step = BODIES[body]

    def hf(a, b):
        return hop.while_loop(lambda v: v.abs().sum() < 3.0,
                              lambda v: (step(v, b) + v * 1.5,), (a,))[0]

    def tf_(a, b):
        n = 0
        while a.abs().sum() < 3.0 and n < 100:
            a = step(a, b) + a * 1.5
            n += 1
        return a

    for a in ([0.3, -0.2], [0.05, 0.1], [2.0, 1.5]):
        b, tb = [0.4, 0.7], [1.0, -0.5]
        same(hop_gg(hf)(t(a), t(b)), torch_gg(tf_)(T(a), T(b)))
        same(hop.compile(hop_gg(hf))(t(a), t(b)), torch_gg(tf_)(T(a), T(b)))
        same(hop_jg(hf, t(tb))(t(a), t(b)), torch_jg(tf_, T(tb))(T(a), T(b)))


@pytest.mark.parametrize("loop", LOOPS)
def test_second_derivatives_through_loops_under_vmap(loop):
    a = np.array([[1e200, 3.0], [0.5, -0.25], [0.1, 0.2]])
    b = np.array([2.0, -1.0])
    f = hop_loop(loop, BODIES["poly"], 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = hop.vmap(hop_gg(f), in_axes=(0, None))(t(a), t(b))
        want = tf.vmap(torch_gg(torch_loop(BODIES["poly"], 1)), in_dims=(0, None))(T(a), T(b))
    assert np.isfinite(want.numpy()).all()
    same(got, want)
    r = np.random.RandomState(5)
    a, b = r.uniform(-0.9, 0.9, (3, 2)), r.uniform(-0.9, 0.9, 2)
    for body in sorted(BODIES):
        f = hop_loop(loop, BODIES[body], 3)
        got = hop.vmap(hop_gg(f), in_axes=(0, None))(t(a), t(b))
        want = tf.vmap(torch_gg(torch_loop(BODIES[body], 3)), in_dims=(0, None))(T(a), T(b))
        same(got, want)
