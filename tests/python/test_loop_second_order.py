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
import math
import warnings

import numpy as np
import pytest

import hop
from transform_values import lazy_import

torch = lazy_import("torch")
tf = lazy_import("functorch")  # torch.func of this PyTorch

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


# ---------------------------------------- forward mode: peeled phases too
#
# jvp through a loop instantiated a zero tangent for a carry whose init has
# none (jvp of grad: the backward's cotangent carry starts at the seed 1,
# which has no tangent), and its first step multiplied that zero by the
# step's partial: 0 * inf = nan where the partial overflowed (or divided by
# zero), where PyTorch, whose unrolled loop has no tangent there, gives inf
# or a finite value.  The first steps now run alone, each reading the
# tangents it has, until the set settles, as the reverse rule's seeds do.

def hop_hvp(f, ta):
    """The jvp along a of d/da sum(f(a, b)): a Hessian-vector product."""
    return lambda a, b: hop.jvp(lambda p: hop.grad(lambda q, r: f(q, r).sum())(p, b), (a,),
                                (ta,))[1]


def torch_hvp(f, ta):
    return lambda a, b: tf.jvp(lambda p: tf.grad(lambda q, r: f(q, r).sum())(p, b), (a,),
                               (ta,))[1]


PARTIAL_INF = {
    # (body, a, b, n, the Hessian-vector product along [1, 2], as torch gives it)
    "overflow": (lambda v, b: v * v * b, [1e200, 0.5], [0.5, 2.0], 2, [math.inf, 48.0]),
    "overflow3": (lambda v, b: v * v * 0.5 * b, [1e100, 3.0], [2.0, -1.0], 3,
                  [math.inf, -637.875]),
    "divide_by_zero": (lambda v, b: v / (b * b), [0.0, 1.0], [1.0, 0.0], 2, [0.0, 0.0]),
}


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("case", sorted(PARTIAL_INF))
def test_hessian_vector_product_through_a_loop_whose_partial_is_infinite(loop, case):
    body, a, b, n, want = PARTIAL_INF[case]
    ta = [1.0, 2.0]
    f = hop_loop(loop, body, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        torch_got = torch_hvp(torch_loop(body, n), T(ta))(T(a), T(b))
        got = hop_hvp(f, t(ta))(t(a), t(b))
        compiled = hop.compile(hop_hvp(f, t(ta)))(t(a), t(b))
    assert torch_got.tolist() == want
    assert got.tolist() == want
    assert compiled.tolist() == want


@pytest.mark.parametrize("loop", LOOPS)
def test_hessian_vector_product_through_a_loop_under_vmap(loop):
    body, _, b, n, _ = PARTIAL_INF["overflow"]
    a = np.array([[1e200, 0.5], [0.25, -0.5], [3.0, 1e300]])
    ta = t([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = hop.vmap(hop_hvp(hop_loop(loop, body, n), ta), in_axes=(0, None))(t(a), t(b))
        want = [torch_hvp(torch_loop(body, n), T([1.0, 2.0]))(T(r), T(b)).tolist() for r in a]
    assert got.tolist() == want
    assert not np.isnan(got.numpy()).any()


def test_peeled_forward_steps_read_the_fori_loop_index():
    # the step is a switch over the phases: the index i is one of its operands
    def hf(a, b):
        return hop.fori_loop(0, 3, lambda i, v: v * v * b * (i + 1.0), a)

    def tf_(a, b):
        for i in range(3):
            a = a * a * b * (i + 1.0)
        return a
    r = np.random.RandomState(3)
    a, b, ta = r.uniform(-0.9, 0.9, 2), r.uniform(-0.9, 0.9, 2), r.uniform(-1, 1, 2)
    same(hop_hvp(hf, t(ta))(t(a), t(b)), torch_hvp(tf_, T(ta))(T(a), T(b)))
    same(hop.compile(hop_hvp(hf, t(ta)))(t(a), t(b)), torch_hvp(tf_, T(ta))(T(a), T(b)))


def test_a_loop_whose_carries_all_have_tangents_peels_nothing():
    # the switch over phases is made only where a carry starts without a
    # tangent: a jvp along the init has none, a Hessian-vector product has one
    f = hop_loop("fori_loop", BODIES["poly"], 3)
    a, b = t([0.5, -0.25]), t([2.0, -1.0])
    plain = hop.trace(lambda a, b: hop.jvp(lambda p: f(p, b), (a,), (a,))[1], a, b)
    assert "_jvp_peel" not in plain.code and "switch" not in plain.code
    hvp = hop.trace(hop_hvp(f, a), a, b)
    assert "_bwd_jvp_peel" in hvp.code


# A jvp along a value the loop closes over (not its init) of a gradient
# through it: the reverse rule's stacked carries had an instantiated zero
# tangent in the row of the forward's first step (the init has none), which
# the backward's last step multiplied by an infinite cotangent.  The first
# step's backward now reads the init itself (its own phase), and a carry a
# loop's jvp never reaches keeps a symbolic zero tangent after the loop.

@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("n, want", [(0, [0.0, 0.0]), (1, [2e200, 2.0]), (2, [math.inf, 12.0]),
                                     (3, [math.inf, 56.0])])
def test_jvp_along_a_closed_over_value_of_a_gradient_through_a_loop_whose_forward_overflows(
        loop, n, want):
    f = hop_loop(loop, lambda v, b: v * v * b, n)
    a, b, tb = [1e200, 0.5], [0.5, 2.0], [1.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        torch_got = torch_jg(torch_loop(lambda v, b: v * v * b, n), T(tb))(T(a), T(b))
        got = hop_jg(f, t(tb))(t(a), t(b))
        compiled = hop.compile(hop_jg(f, t(tb)))(t(a), t(b))
    assert torch_got.tolist() == want
    assert got.tolist() == want
    assert compiled.tolist() == want


def test_the_first_steps_backward_reads_the_loops_init():
    # one phase of one step (`_bwd_first`) whose carries are the init passed
    # whole, after the scan of the other steps
    f = hop_loop("fori_loop", lambda v, b: v * v * b, 3)
    gm = hop.trace(hop.grad(lambda a, b: f(a, b).sum()), t([1.0, 2.0]), t([0.5, 0.25]))
    assert "fori_loop_body_0_bwd_first" in gm.code
    assert gm(t([1.0, 2.0]), t([0.5, 0.25])).tolist() == \
        tf.grad(lambda a, b: torch_loop(lambda v, b: v * v * b, 3)(a, b).sum())(
            T([1.0, 2.0]), T([0.5, 0.25])).tolist()


@pytest.mark.parametrize("loop", LOOPS)
def test_jvp_of_a_gradient_along_a_closed_over_value_under_vmap(loop):
    # the same composition batched: each example's answer is its own
    f = hop_loop(loop, lambda v, b: v * v * b, 2)
    a = np.array([[1e200, 0.5], [0.25, -0.5], [3.0, 1e300]])
    b, tb = [0.5, 2.0], [1.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = hop.vmap(hop_jg(f, t(tb)), in_axes=(0, None))(t(a), t(b))
        want = [torch_jg(torch_loop(lambda v, b: v * v * b, 2), T(tb))(T(r), T(b)).tolist()
                for r in a]
    assert got.tolist() == want
    assert not np.isnan(got.numpy()).any()
