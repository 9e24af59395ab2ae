"""hop.grad / value_and_grad / vjp / jvp (issue #15): values against analytic
gradients, central finite differences in float64 and (when installed)
PyTorch autograd on the same programs with Python control flow; every
differentiable HOP nested two deep with closures; printing; errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from budget import examples

import hop

F64 = hop.float64


def t(a, dtype=F64):
    return hop.tensor(np.asarray(a, dtype=np.float64).tolist(), dtype=dtype)


def arr(x):
    return np.asarray(x.tolist(), dtype=np.float64)


def fd_grad(f, xs, i, eps=1e-6):
    """Central finite differences of scalar f w.r.t. argument i."""
    base = [arr(x) for x in xs]
    g = np.zeros_like(base[i])
    it = np.nditer(base[i], flags=["multi_index"])
    for _ in it:
        k = it.multi_index
        hi = [b.copy() for b in base]
        lo = [b.copy() for b in base]
        hi[i][k] += eps
        lo[i][k] -= eps
        fh = float(f(*[t(b) for b in hi]).item())
        fl = float(f(*[t(b) for b in lo]).item())
        g[k] = (fh - fl) / (2 * eps)
    return g


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(arr(a) if not isinstance(a, np.ndarray) else a, b, rtol=tol,
                               atol=tol)


# ------------------------------------------------------------------ basics

def test_grad_elementwise_matches_analytic():
    x = t([0.5, -1.0, 2.0])
    g = hop.grad(lambda x: (x.sin() * x).sum())(x)
    X = arr(x)
    close(g, np.cos(X) * X + np.sin(X))


def test_value_and_grad_and_argnums():
    x, y = t([1.0, 2.0]), t([3.0, -1.0])
    v, (gx, gy) = hop.value_and_grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(x, y)
    assert v.item() == 1.0
    close(gx, arr(y))
    close(gy, arr(x))
    assert hop.grad(lambda x, y: (x * y).sum(), argnums=1)(x, y).tolist() == [1.0, 2.0]


def test_has_aux_passes_aux_through():
    x = t([1.0, 2.0])
    g, aux = hop.grad(lambda x: ((x * x).sum(), x + 1), has_aux=True)(x)
    assert g.tolist() == [2.0, 4.0]
    assert aux.tolist() == [2.0, 3.0]


def test_pytree_argument_gives_pytree_gradient():
    p = {"w": t([1.0, 2.0]), "b": t(0.5)}
    g = hop.grad(lambda p, x: ((p["w"] * x).sum() + p["b"]) ** 2)(p, t([3.0, 4.0]))
    s = 1 * 3 + 2 * 4 + 0.5
    close(g["w"], 2 * s * np.array([3.0, 4.0]))
    close(g["b"], 2 * s)


def test_vjp_with_cotangent_and_jvp_with_tangent():
    x = t([0.3, 0.7])
    out, vjp_fn = hop.vjp(lambda x: x.sin() * 2.0, x)
    close(out, 2 * np.sin(arr(x)))
    (ct,) = vjp_fn(t([1.0, 10.0]))
    close(ct, 2 * np.cos(arr(x)) * np.array([1.0, 10.0]))
    y, ty = hop.jvp(lambda x: x.sin() * 2.0, (x,), (t([1.0, -1.0]),))
    close(y, 2 * np.sin(arr(x)))
    close(ty, 2 * np.cos(arr(x)) * np.array([1.0, -1.0]))


def test_grad_of_grad():
    x = t([0.1, 1.3, -2.0])
    g2 = hop.grad(lambda x: hop.grad(lambda y: y.sin().sum())(x).sum())(x)
    close(g2, -np.sin(arr(x)))


# ------------------------------------------------------------- HOP rules

W = t([0.5, -1.5, 2.0])


def test_map_closure_gradient_is_exact():
    # the example: w reaches the body only through a closure
    x = t(np.linspace(-1, 1, 12).reshape(4, 3))
    w = t([0.3, -0.7, 1.1])
    f = lambda x, w: hop.map(lambda r: (r * w).sin(), x).sum()  # noqa: E731
    gw = hop.grad(f, argnums=1)(x, w)
    X, Wn = arr(x), arr(w)
    close(gw, (np.cos(X * Wn) * X).sum(0))
    close(hop.grad(f)(x, w), np.cos(X * Wn) * Wn)


def cond_prog(x):
    return hop.cond(x.sum() > 0, lambda: (x * W).sin().sum(), lambda: (x * x * W).sum())


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_both_branches(sign):
    x = t(np.array([0.2, 0.4, 0.9]) * sign)
    g = hop.grad(cond_prog)(x)
    X, Wn = arr(x), arr(W)
    want = np.cos(X * Wn) * Wn if sign > 0 else 2 * X * Wn
    close(g, want)
    close(g, fd_grad(cond_prog, [x], 0), 1e-5)


def test_switch_wrap_invoke_subgraph():
    def f(x):
        b = [lambda: x.sin().sum(), lambda: hop.wrap(lambda: (x * x).sum()),
             lambda: hop.invoke_subgraph(lambda y: (y * W).sum(), x)]
        return hop.switch(k, b)
    for k in range(3):
        x = t([0.5, 1.0, -0.25])
        close(hop.grad(f)(x), fd_grad(f, [x], 0), 1e-5)


def test_nested_two_deep_with_closures_at_two_depths():
    w2 = t([2.0, -1.0, 0.5])

    def f(x, w):
        def row(r):
            return hop.cond(r.sum() > 0, lambda: (r * w).sin() * w2, lambda: r * w)
        return hop.map(row, x).sum()
    x = t([[0.5, 0.2, 0.1], [-0.5, -0.2, 0.3], [1.0, -2.0, 0.5]])
    w = t([0.3, 0.6, -0.9])
    for i in (0, 1):
        close(hop.grad(f, argnums=i)(x, w), fd_grad(f, [x, w], i), 1e-5)


def test_invoke_subgraph_backward_is_one_shared_subgraph():
    def body(y):
        return (y * W).sin()

    def f(x):
        return (hop.invoke_subgraph(body, x) + hop.invoke_subgraph(body, x * 2.0)).sum()
    gm = hop.trace(lambda x: hop.grad(f)(x), t([0.1, 0.2, 0.3]))
    assert gm.code.count("def subgraph_0_bwd(") == 1
    assert gm.code.count("invoke_subgraph(subgraph_0_bwd,") == 2
    x = t([0.1, 0.2, 0.3])
    close(gm(x), fd_grad(f, [x], 0), 1e-5)


def test_backward_graph_prints_bodies_named_after_their_forward():
    gm = hop.trace(lambda x: hop.grad(cond_prog)(x), t([1.0, 2.0, 3.0]))
    code = gm.code
    assert "def cond_true_0_bwd(" in code and "def cond_false_0_bwd(" in code
    assert "cond(gt, cond_true_0_bwd, cond_false_0_bwd, (x, W, " in code or \
        "cond_true_0_bwd, cond_false_0_bwd" in code
    assert "vjp(1, vjp_body_0_bwd," in code


# ------------------------------------------------------------------ scan

RNG = np.random.default_rng(7)
RW = t(RNG.normal(size=(4, 4)) * 0.5)
RU = t(RNG.normal(size=(3, 4)) * 0.5)


def rnn(h0, xs, w, u):
    def cell(h, x):
        h2 = (h @ w + x.reshape(1, 3) @ u).tanh()
        return h2, h2.sum()
    hT, ys = hop.scan(cell, h0, xs)
    return hT.sum() + (ys * ys).sum()


def test_scan_rnn_gradient_of_every_input_and_closure():
    h0, xs = t(RNG.normal(size=(1, 4))), t(RNG.normal(size=(6, 3)))
    args = [h0, xs, RW, RU]
    gs = hop.grad(rnn, argnums=(0, 1, 2, 3))(*args)
    for i in range(4):
        close(gs[i], fd_grad(rnn, args, i), 1e-5)
    # w reached only through a closure of the cell (a lifted value of the scan)
    gw = hop.grad(lambda w: rnn(h0, xs, w, RU))(RW)
    close(gw, arr(gs[2]))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_reverse_and_pytree_carries(reverse):
    def f(c0, xs):
        def step(c, x):
            a, b = c
            return (a * x.sin() + b, b * 0.5 + x), a * 2.0
        (a, b), ys = hop.scan(step, c0, xs, reverse=reverse)
        return (a * a).sum() + b.sum() + (ys * t([1.0, 2.0, 3.0])).sum()
    c0 = (t([0.5, 0.1, -0.3]), t([1.0, -1.0, 0.5]))
    xs = t(RNG.normal(size=(4, 3)))
    g = hop.grad(f, argnums=(0, 1))(c0, xs)
    flat = lambda a, b, x: f((a, b), x)  # noqa: E731
    close(g[0][0], fd_grad(flat, [c0[0], c0[1], xs], 0), 1e-5)
    close(g[0][1], fd_grad(flat, [c0[0], c0[1], xs], 1), 1e-5)
    close(g[1], fd_grad(flat, [c0[0], c0[1], xs], 2), 1e-5)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_jvp_equals_the_gradient_along_the_direction(reverse):
    def f(h0, xs, w):
        def cell(h, x):
            h2 = (h @ w + x.reshape(1, 3) @ RU).tanh()
            return h2, h2.sum()
        hT, ys = hop.scan(cell, h0, xs, reverse=reverse)
        return hT.sum() + (ys * ys).sum()
    args = (t(RNG.normal(size=(1, 4))), t(RNG.normal(size=(5, 3))), RW)
    dirs = tuple(t(RNG.normal(size=arr(a).shape)) for a in args)
    g = hop.grad(f, argnums=(0, 1, 2))(*args)
    _, tan = hop.jvp(f, args, dirs)
    close(tan, sum(float((arr(gi) * arr(d)).sum()) for gi, d in zip(g, dirs)), 1e-9)
    # a tangent only along xs: the carries still carry theirs (zeros at init)
    _, tan = hop.jvp(lambda xs: f(args[0], xs, RW), (args[1],), (dirs[1],))
    close(tan, float((arr(g[1]) * arr(dirs[1])).sum()), 1e-9)


def test_scan_backward_is_a_reverse_scan_in_the_graph():
    h0, xs = t(RNG.normal(size=(1, 4))), t(RNG.normal(size=(3, 3)))
    code = hop.trace(lambda h, x: hop.grad(rnn)(h, x, RW, RU), h0, xs).code
    assert "def scan_body_0_fwd(" in code and "def scan_body_0_bwd(" in code
    assert "scan(True, 0, -1, scan_body_0_bwd," in code


def test_scan_grad_matches_torch():
    torch = pytest.importorskip("torch")
    h0, xs = t(RNG.normal(size=(1, 4))), t(RNG.normal(size=(5, 3)))
    th = torch.tensor(arr(h0), requires_grad=True)
    tw, tu = torch.tensor(arr(RW)), torch.tensor(arr(RU))
    h, total = th, 0.0
    for x in torch.tensor(arr(xs)):
        h = (h @ tw + x.reshape(1, 3) @ tu).tanh()
        total = total + h.sum() ** 2
    (h.sum() + total).backward()
    close(hop.grad(rnn)(h0, xs, RW, RU), th.grad.numpy())


# ------------------------------------------------------------- fori_loop

def test_fori_loop_static_trip_count_gradient_with_pytree_carry_and_closure():
    w = t([0.5, -0.25, 1.5])

    def f(a, b, w):
        def body(i, c):
            x, y = c
            return (x * w).sin() + y * 0.5, hop.cond(y.sum() > 0, lambda: y * x, lambda: y - x)
        x, y = hop.fori_loop(2, 6, body, (a, b))
        return (x * x).sum() + y.sum()
    args = [t([0.3, 0.1, -0.2]), t([0.5, 0.4, 0.2]), w]
    g = hop.grad(f, argnums=(0, 1, 2))(*args)
    for i in range(3):
        close(g[i], fd_grad(f, args, i), 1e-5)
    # zero trips: the carry passes through
    close(hop.grad(lambda x: hop.fori_loop(3, 3, lambda i, v: v * 2.0, x).sum())(args[0]),
          np.ones(3))


def test_fori_loop_body_reading_its_index_and_dynamic_bounds():
    """The step's index is the body's i (x[i], i as a scalar), with int,
    tensor and unbacked bounds; a compiled grad does not recompile when only
    a tensor bound changes, and an empty range passes the carry through."""
    x = t([0.3, -0.7, 1.1, 0.4])
    X = arr(x)

    def f(x, lo, hi):
        return hop.fori_loop(lo, hi, lambda i, v: (v * x[i] + i).sin() * i, x).sum()

    def ref(X, lo, hi):
        v = X
        for i in range(lo, hi):
            v = np.sin(v * X[i] + i) * i
        return v.sum()

    def fd(lo, hi, h=1e-6):
        g = np.zeros_like(X)
        for k in range(len(X)):
            e = np.zeros_like(X)
            e[k] = h
            g[k] = (ref(X + e, lo, hi) - ref(X - e, lo, hi)) / (2 * h)
        return g

    grad = hop.grad(f)
    for lo, hi in [(0, 4), (1, 3), (2, 2), (3, 1)]:
        close(grad(x, lo, hi), fd(lo, hi), 1e-6)
        close(grad(x, hop.tensor(lo), hop.tensor(hi)), fd(lo, hi), 1e-6)
    cf = hop.compile(hop.grad(f))
    for lo, hi in [(0, 4), (1, 4), (0, 2), (2, 0)]:
        close(cf(x, hop.tensor(lo), hop.tensor(hi)), fd(lo, hi), 1e-6)
    assert len(cf._entries) == 1 and cf.recompiles == 0
    # an unbacked trip count: the upper bound is data
    unb = hop.grad(lambda x, m: hop.fori_loop(0, m.sum().item(),
                                              lambda i, v: v * x[i] + i, x).sum())
    close(unb(x, hop.tensor([1, 2])), fd_grad(lambda x: hop.fori_loop(
        0, 3, lambda i, v: v * x[i] + i, x).sum(), [x], 0), 1e-6)


def _while_program(x, w, bound):
    """A loop whose trip count depends on the data: grow c until its sum
    passes bound."""
    def body(c, k):
        return c * 1.2 + (c * w).sin() * 0.1 + x * 0.1, k + 1
    c, k = hop.while_loop(lambda c, k: c.sum() < bound, body, (x, hop.tensor(0)))
    return (c * c).sum() + k.to(hop.float64)


def test_while_loop_grad_with_a_data_dependent_stop_matches_torch():
    torch = pytest.importorskip("torch")
    w = t([0.9, 1.1, 0.7])

    def torch_grads(x, bound):
        tx = torch.tensor(arr(x), requires_grad=True)
        tw = torch.tensor(arr(w), requires_grad=True)
        c, k = tx, 0
        while float(c.sum()) < bound:
            c, k = c * 1.2 + (c * tw).sin() * 0.1 + tx * 0.1, k + 1
        ((c * c).sum() + k).backward()
        gw = tw.grad.numpy() if tw.grad is not None else np.zeros(3)  # no trip: w unused
        return tx.grad.numpy(), gw, k

    grad = hop.grad(_while_program, argnums=(0, 1))
    cgrad = hop.compile(grad)
    trips = set()
    for x, bound in [([0.1, 0.2, 0.3], 1.0), ([0.1, 0.2, 0.3], 3.0), ([2.0, 1.0, 1.0], 1.0),
                     ([0.3, 0.2, 0.1], 6.0)]:
        x = t(x)
        gx, gw, k = torch_grads(x, bound)
        trips.add(k)
        for fn in (grad, cgrad):
            got = fn(x, w, t(bound))  # a tensor bound: no recompile
            close(got[0], gx, 1e-10)
            close(got[1], gw, 1e-10)
    assert trips == {2, 6, 0, 9}  # a zero-trip loop and several trip counts
    assert len(cgrad._entries) == 1 and cgrad.recompiles == 0


def test_while_loop_grad_nested_in_cond_in_map_with_closures():
    w = t([0.5, -0.25, 0.75])
    s = t(1.5)

    def f(xs, w, s):
        def row(r):
            def loop():
                c, _ = hop.while_loop(lambda c, k: k < 3,
                                      lambda c, k: ((c * w).cos() * s + r, k + 1),
                                      (r, hop.tensor(0)))
                return c
            return hop.cond(r.sum() > 0, loop, lambda: r * w)
        return hop.map(row, xs).sum()
    xs = t([[0.2, 0.4, 0.1], [-0.3, -0.1, -0.2], [0.5, -0.1, 0.3]])
    args = [xs, w, s]
    g = hop.grad(f, argnums=(0, 1, 2))(*args)
    for i in range(3):
        close(g[i], fd_grad(f, args, i), 1e-6)
    g2 = hop.compile(hop.grad(f, argnums=(0, 1, 2)))(*args)
    for i in range(3):
        close(g2[i], arr(g[i]), 1e-12)


def _fori_program(x, w, n):
    return (hop.fori_loop(1, n, lambda i, c: (c * w[i % 3]).sin() + x * i, x) ** 2).sum()


@pytest.mark.parametrize("prog", ["while", "fori", "fori_in_map"])
def test_loop_jvp_is_the_transpose_of_the_loop_vjp(prog):
    """Forward mode through while_loop and fori_loop: <jvp(t), 1> equals
    <t, grad>, eagerly and compiled, with a data-dependent stop, a body
    reading its index and a tensor trip count, and nested in map."""
    w = t([0.9, 1.1, 0.7])
    if prog == "while":
        f = lambda x, w: _while_program(x, w, t(3.0))  # noqa: E731
    elif prog == "fori":
        f = lambda x, w: _fori_program(x, w, hop.tensor(5))  # noqa: E731
    else:
        f = lambda x, w: hop.map(lambda r: _fori_program(r, w, 4), x.reshape(1, 3)).sum()  # noqa
    x, tx, tw = t([0.1, 0.2, 0.3]), t([1.0, -0.5, 0.25]), t([0.3, 0.2, -0.1])
    gx, gw = hop.grad(f, argnums=(0, 1))(x, w)
    want = float((arr(gx) * arr(tx)).sum() + (arr(gw) * arr(tw)).sum())
    out, tan = hop.jvp(f, (x, w), (tx, tw))
    close(out, float(arr(f(x, w))), 1e-12)
    close(tan, want, 1e-10)
    cj = hop.compile(lambda x, w, a, b: hop.jvp(f, (x, w), (a, b)))
    close(cj(x, w, tx, tw)[1], want, 1e-10)
    fd = (float(arr(f(t(arr(x) + 1e-6 * arr(tx)), t(arr(w) + 1e-6 * arr(tw))))) -
          float(arr(f(t(arr(x) - 1e-6 * arr(tx)), t(arr(w) - 1e-6 * arr(tw)))))) / 2e-6
    close(tan, fd, 1e-5)


# ------------------------------------------------------- associative_scan

@pytest.mark.parametrize("dim,reverse", [(0, False), (0, True), (1, False), (-1, True)])
def test_associative_scan_add_gradient_is_the_scan_the_other_way(dim, reverse):
    x = t(RNG.normal(size=(3, 5)))
    w = t(RNG.normal(size=(3, 5)))
    f = lambda x: (hop.associative_scan(lambda a, b: a + b, x, dim=dim,  # noqa: E731
                                        reverse=reverse) * w).sum()
    W = arr(w)
    want = (np.cumsum(W, axis=dim) if reverse else
            np.flip(np.cumsum(np.flip(W, axis=dim), axis=dim), axis=dim))
    close(hop.grad(f)(x), want, 1e-12)
    _, tan = hop.jvp(f, (x,), (w,))
    close(tan, float((want * W).sum()), 1e-12)


# mul, maximum and minimum: the combine_fn spelled every way that traces to
# one op node of its two operands, in either order.
SCAN_COMBINES = {
    "mul": [lambda a, b: a * b, lambda a, b: b * a, lambda a, b: hop.mul(a, b)],
    "max": [lambda a, b: hop.maximum(a, b), lambda a, b: b.maximum(a),
            lambda a, b: np.maximum(a, b)],
    "min": [lambda a, b: hop.minimum(a, b), lambda a, b: a.minimum(b),
            lambda a, b: np.minimum(b, a)],
}


def scan_input(op, shape):
    x = RNG.normal(size=shape)
    if op == "mul":  # zeros: single, adjacent, first and last along every dim
        x[0, 0] = 0.0
        x[1, 2] = x[1, 3] = 0.0
        x[2, 4] = 0.0
        x[2, 1] = 0.0
    return x


def torch_scan(torch, op, x, dim, reverse):
    xx = x.flip(dim) if reverse else x
    y = (torch.cumprod(xx, dim) if op == "mul" else
         torch.cummax(xx, dim).values if op == "max" else torch.cummin(xx, dim).values)
    return y.flip(dim) if reverse else y


def unrolled_scan(fn, x, dim, reverse):
    """The inclusive scan as a Python loop of fn over selects, then a stack."""
    n = x.shape[dim]
    out, acc = {}, None
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        xi = x.select(dim, i)
        acc = xi if acc is None else fn(acc, xi)
        out[i] = acc
    return hop.stack([out[i] for i in range(n)], dim)


@pytest.mark.parametrize("op", ["mul", "max", "min"])
@pytest.mark.parametrize("dim,reverse", [(0, False), (0, True), (1, False), (1, True),
                                         (-1, False), (-1, True)])
def test_associative_scan_mul_max_min_gradients_match_torch_and_fd(op, dim, reverse):
    torch = pytest.importorskip("torch")
    X = scan_input(op, (3, 5))
    W = RNG.normal(size=(3, 5))
    x, w = t(X), t(W)
    tx = torch.tensor(X, requires_grad=True)
    (torch_scan(torch, op, tx, dim, reverse) * torch.tensor(W)).sum().backward()
    for fn in SCAN_COMBINES[op]:
        def f(x):
            return (hop.associative_scan(fn, x, dim=dim, reverse=reverse) * w).sum()
        g = hop.grad(f)(x)
        close(g, tx.grad.numpy(), 1e-12)
        close(g, fd_grad(f, [x], 0), 1e-6)
        # forward mode: <jvp(v), w> == <v, vjp(w)> for the scan itself
        scan = lambda x: hop.associative_scan(fn, x, dim=dim, reverse=reverse)  # noqa: E731
        V = RNG.normal(size=(3, 5))
        y, tan = hop.jvp(scan, (x,), (t(V),))
        close(y, torch_scan(torch, op, torch.tensor(X), dim, reverse).numpy(), 1e-12)
        _, vjp_fn = hop.vjp(scan, x)
        close(np.float64((arr(tan) * W).sum()), float((V * arr(vjp_fn(w)[0])).sum()), 1e-12)
    if op == "mul":  # the zeros make the exact gradient differ from y / x's
        assert np.isfinite(arr(g)).all() and (arr(g) != 0).any()


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dim,reverse", [(0, False), (0, True), (1, False), (1, True),
                                         (-1, True)])
def test_associative_scan_max_min_ties_are_the_unrolled_loops_exactly(op, dim, reverse):
    """maximum's rule splits a tie 0.5/0.5, so the gradient through a tie
    halves at each tied step, as the scan unrolled into a loop of
    hop.maximum gives (torch's cummax gives a tie to the later element)."""
    X = np.array([[1., 1., 2., 2., 0., 2., 3., 3.],
                  [0., 0., 0., 0., 0., 0., 0., 0.],
                  [3., 1., 3., 3., 2., 3., 3., 5.],
                  [-np.inf, -np.inf, 1., np.inf, np.inf, np.nan, 2., 2.]])
    W = np.arange(32.0).reshape(4, 8) + 1
    x, w = t(X), t(W)
    for fn in SCAN_COMBINES[op]:
        def f(x):
            return (hop.associative_scan(fn, x, dim=dim, reverse=reverse) * w).sum(dim)

        def u(x):
            return (unrolled_scan(fn, x, dim, reverse) * w).sum(dim)
        ct = t(RNG.normal(size=8 if dim == 0 else 4))
        want = arr(hop.vjp(u, x)[1](ct)[0])
        np.testing.assert_array_equal(arr(hop.vjp(f, x)[1](ct)[0]), want)
        np.testing.assert_array_equal(arr(hop.jvp(f, (x,), (w,))[1]),
                                      arr(hop.jvp(u, (x,), (w,))[1]))
        gc = hop.compile(lambda x, ct: hop.vjp(f, x)[1](ct)[0])
        np.testing.assert_array_equal(arr(gc(x, ct)), want)
    # the halving, by hand: a row of equal values is one long tie
    g = hop.grad(lambda x: hop.associative_scan(SCAN_COMBINES[op][0], x)[-1])(t([0.0] * 4))
    assert g.tolist() == [0.125, 0.125, 0.25, 0.5]


def test_associative_scan_mul_zeros_and_grad_of_grad_match_torch():
    torch = pytest.importorskip("torch")
    for X in ([0.0, 0.0, 2.0, 3.0], [2.0, 0.0, 3.0, 0.0, 4.0], [1.5, -2.0, 0.5, 3.0]):
        for reverse in (False, True):
            x = t(X)

            def f(x):
                return (hop.associative_scan(lambda a, b: a * b, x, reverse=reverse) ** 2).sum()
            tx = torch.tensor(X, requires_grad=True)
            ty = torch_scan(torch, "mul", tx, 0, reverse)
            (gx,) = torch.autograd.grad((ty ** 2).sum(), tx, create_graph=True)
            (gx * tx).sum().backward()
            close(hop.grad(f)(x), gx.detach().numpy(), 1e-12)
            close(hop.grad(lambda x: (hop.grad(f)(x) * x).sum())(x), tx.grad.numpy(), 1e-12)


@pytest.mark.parametrize("op", ["mul", "max"])
def test_associative_scan_mul_max_under_compile_with_new_shapes(op):
    torch = pytest.importorskip("torch")
    fn = SCAN_COMBINES[op][0]

    def f(x):
        return (hop.associative_scan(fn, x, dim=1, reverse=True) * x).sum()
    cf = hop.compile(hop.grad(f))
    for n in (3, 5, 8, 2):
        X = scan_input(op, (3, n)) if n >= 5 else RNG.normal(size=(3, n))
        tx = torch.tensor(X, requires_grad=True)
        (torch_scan(torch, op, tx, 1, True) * tx).sum().backward()
        close(cf(t(X)), tx.grad.numpy(), 1e-12)
        np.testing.assert_array_equal(arr(cf(t(X))), arr(hop.grad(f)(t(X))))
    assert cf.recompiles >= 1
    cj = hop.compile(lambda x, v: hop.jvp(f, (x,), (v,))[1])
    X, V = RNG.normal(size=(3, 6)), RNG.normal(size=(3, 6))
    close(cj(t(X), t(V)), np.float64((arr(hop.grad(f)(t(X))) * V).sum()), 1e-12)


@pytest.mark.parametrize("op", ["mul", "max", "min"])
def test_associative_scan_mul_max_nested_two_deep_with_closures(op):
    """map -> cond -> associative_scan, closing over w at the map's depth
    and w2 at the cond's."""
    fn = SCAN_COMBINES[op][0]
    w2 = t([2.0, -1.0, 0.5, 1.5])

    def f(x, w):
        def row(r):
            return hop.cond(r.sum() > 0,
                            lambda: (hop.associative_scan(fn, r * w, reverse=True) * w2).sin(),
                            lambda: hop.associative_scan(fn, r + w, dim=-1) * w2)
        return hop.map(row, x).sum()

    def ref(x, w):  # the branches taken decided from the concrete x
        rows = []
        for r, pos in zip(x, signs):
            if pos:
                rows.append((unrolled_scan(fn, r * w, 0, True) * w2).sin())
            else:
                rows.append(unrolled_scan(fn, r + w, 0, False) * w2)
        return hop.stack(rows, 0).sum()
    x = t([[0.5, 0.2, -0.1, 0.7], [-0.5, -0.2, 0.3, 0.1], [1.0, 0.0, 0.5, 0.25]])
    w = t([0.3, 0.6, -0.9, 1.2])
    signs = [bool(v > 0) for v in arr(x).sum(1)]
    assert signs == [True, False, True]
    for i in (0, 1):
        g = hop.grad(f, argnums=i)(x, w)
        close(g, arr(hop.grad(ref, argnums=i)(x, w)), 1e-12)
        close(g, fd_grad(f, [x, w], i), 1e-6)
    v = (t(RNG.normal(size=(3, 4))), t(RNG.normal(size=4)))
    _, tan = hop.jvp(f, (x, w), v)
    gx, gw = hop.grad(f, argnums=(0, 1))(x, w)
    close(tan, np.float64((arr(gx) * arr(v[0])).sum() + (arr(gw) * arr(v[1])).sum()), 1e-12)
    close(hop.compile(hop.grad(f, argnums=1))(x, w), arr(hop.grad(f, argnums=1)(x, w)), 1e-12)


SCAN_UNSUPPORTED = (r"autodiff: associative_scan associative_scan has no {} rule for its "
                    r"combine_fn: only a combine_fn of one add, mul, maximum or minimum of its "
                    r"two operands over one float xs \(a cumulative sum, product, max or min\) "
                    r"is differentiated$")


@pytest.mark.parametrize("fn,xs", [
    (lambda a, b: a * b + a, lambda: t([1.0, 2.0])),
    (lambda a, b: a - b, lambda: t([1.0, 2.0])),
    (lambda a, b: a * a, lambda: t([1.0, 2.0])),
    (lambda a, b: (a[0] * b[0], a[1] * b[1]), lambda: (t([1.0, 2.0]), t([3.0, 4.0]))),
])
def test_associative_scan_other_combines_are_a_clear_error(fn, xs):
    def f(x):
        y = hop.associative_scan(fn, x)
        return (y[0] if isinstance(y, tuple) else y).sum()
    with pytest.raises(hop.UnsupportedError, match=SCAN_UNSUPPORTED.format("vjp")):
        hop.grad(f)(xs())
    with pytest.raises(hop.UnsupportedError, match=SCAN_UNSUPPORTED.format("jvp")):
        hop.jvp(f, (xs(),), (xs(),))


# ---------------------------------------------------------- compile, shapes

def test_grad_under_compile_recompiles_on_new_shape():
    f = hop.compile(hop.grad(lambda x: (x.sin() * x).sum()))
    for n in (3, 5, 7):
        x = t(np.linspace(-1, 1, n))
        X = arr(x)
        close(f(x), np.cos(X) * X + np.sin(X))
    assert f.recompiles >= 1


def test_grad_with_dynamic_shapes():
    gm = hop.trace(lambda x: hop.grad(lambda y: (y * y).sum())(x), t([1.0, 2.0, 3.0]),
                   dynamic=True)
    assert "s0" in gm.code
    for n in (2, 6):
        x = t(np.arange(n, dtype=np.float64))
        close(gm(x), 2 * arr(x))


def test_eager_grad_sees_a_rebound_closure():
    global W2
    W2 = t([1.0, 2.0])
    g = hop.grad(lambda x: (x * W2).sum())
    assert g(t([0.0, 0.0])).tolist() == [1.0, 2.0]
    W2 = t([5.0, 6.0])
    assert g(t([0.0, 0.0])).tolist() == [5.0, 6.0]


# ------------------------------------------------------------------ errors

def test_grad_of_non_scalar_output_is_an_error():
    with pytest.raises(hop.ShapeError, match=r"grad: the function must return a float scalar "
                                             r"\(shape \(\)\) to take its gradient, got f64\[2\]"):
        hop.grad(lambda x: x * 2.0)(t([1.0, 2.0]))
    assert hop.tracing() is None if hasattr(hop, "tracing") else True


def test_grad_of_integer_input_is_an_error():
    with pytest.raises(TypeError, match=r"hop.grad: argument 0 \(leaf 0\) is i64\[2\]; "
                                        r"gradients are taken with respect to float and "
                                        r"complex tensors only$"):
        hop.grad(lambda x: x.sum())(hop.tensor([1, 2]))


def test_grads_type_error_spells_the_tensor_as_the_c_meta_printer_does():
    """hop.grad's message, eager's bool() message and a proxy's text are the
    one printer's (hop_meta_print), not a second Python spelling."""
    x = hop.tensor([[1, 2, 3]], dtype=hop.int32)
    assert hop._C._meta_text(x) == "i32[1, 3]"
    with pytest.raises(hop.ShapeError, match=r"got i32\[1, 3\]$"):
        bool(x)
    with pytest.raises(TypeError, match=r"\(leaf 0\) is i32\[1, 3\]; "):
        hop.grad(lambda a: a.sum())(x)
    seen = []
    hop.trace(lambda a: seen.append(hop._C._meta_text(a)) or a, hop.ones(3, 4), dynamic=True)
    assert seen == ["f32[s0, s1]"]
    with pytest.raises(TypeError, match=r"^_meta_text\(\): expected a Tensor, got int$"):
        hop._C._meta_text(3)


def test_while_loop_carrying_an_item_has_eagers_gradient():
    def f(x, m):  # m.sum().item() is an int eagerly, carried as an i64 tensor in every mode
        c, n = hop.while_loop(lambda c, n: c.sum() < 10.0, lambda c, n: (c * 2.0, n + 1),
                              (x, m.sum().item()))
        return c.sum() * n
    x, m = t([1.0, 2.0]), hop.tensor([1])
    for g in (hop.grad(f), hop.compile(hop.grad(f))):  # x doubles twice, n ends at 3
        assert g(x, m).tolist() == [12.0, 12.0]  # was UnsupportedError: carries a SymInt


def test_a_symint_carry_of_a_graph_built_below_the_python_api_is_a_clear_vjp_error():
    # hop.while_loop carries an int as a tensor; a graph built through the
    # HOP call itself (as C builds one) may carry a SymInt, which has no vjp
    from hop import _hops as H

    def f(x, m):
        carry = (x, m.sum().item())
        shape = H._as_result(carry, "carry")
        call = lambda s: (tuple(s[0]), {})  # noqa: E731
        c, n = H._apply("while_loop", [], [carry],
                        [H._Body(lambda c, n: c.sum() < 10.0, "cond_fn", call, H._PRED),
                         H._Body(lambda c, n: (c * 2.0, n), "body_fn", call, shape)],
                        result=shape)
        return c.sum()
    assert 'while_loop: "(f64[2], Sym(u2))"' in hop.trace(f, t([1.0, 2.0]), hop.tensor([0])).code
    with pytest.raises(hop.UnsupportedError, match=r"autodiff: while_loop while_loop carries a "
                                                   r"SymInt \(carry 1\); its vjp needs tensor "
                                                   r"carries"):
        hop.grad(f)(t([1.0, 2.0]), hop.tensor([0]))
    assert hop.grad(lambda x: (x * 2.0).sum())(t([1.0])).tolist() == [2.0]  # state intact


def test_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums 3 is out of range for 1 positional argument"):
        hop.grad(lambda x: x.sum(), argnums=3)(t([1.0]))


# ------------------------------------------------- finite differences (ops)

shapes = st.sampled_from([((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (4,)),
                          ((2, 3), (2, 3))])

PROGRAMS = {
    "mul_sin": lambda a, b: (a * b).sin().sum(),
    "add_cos": lambda a, b: ((a + b).cos() * a).sum(),
    "sub_exp": lambda a, b: (a - b).exp().sum(),
    "div": lambda a, b: (a / (b * b + 1.0)).sum(),
    "tanh_sigmoid": lambda a, b: ((a * b).tanh() + a.sigmoid() * b).sum(),
    "mean_amax": lambda a, b: (a * b).mean() + (a + b).amax(),
    "where": lambda a, b: hop.where(a > 0.1, a * b, b * 3.0).sum(),
    "maximum": lambda a, b: hop.maximum(a, b * 0.5).sum(),
    "log_sqrt": lambda a, b: ((a * a + 1.0).log() + (b * b + 2.0).sqrt()).sum(),
}


@settings(max_examples=examples(25), deadline=None)
@given(shapes, st.sampled_from(sorted(PROGRAMS)), st.integers(0, 2 ** 31 - 1))
def test_op_rules_against_finite_differences(shp, name, seed):
    rng = np.random.default_rng(seed)
    a = t(rng.uniform(-1.5, 1.5, shp[0]))
    b = t(rng.uniform(-1.5, 1.5, shp[1]))
    f = PROGRAMS[name]
    ga, gb = hop.grad(f, argnums=(0, 1))(a, b)
    close(ga, fd_grad(f, [a, b], 0), 1e-5)
    close(gb, fd_grad(f, [a, b], 1), 1e-5)
    # forward mode along a random direction equals the gradient's dot product
    da = t(rng.uniform(-1, 1, shp[0]))
    _, tan = hop.jvp(lambda a: f(a, b), (a,), (da,))
    close(tan, float((arr(ga) * arr(da)).sum()), 1e-5)


# ------------------------------------------------------ side by side: torch

def test_matches_torch_autograd_on_python_control_flow():
    torch = pytest.importorskip("torch")
    x = t([0.5, -0.25, 1.5])
    w = t([1.0, 2.0, -0.5])

    def f(x):
        def row(r):
            return hop.cond(r.sum() > 0, lambda: (r * w).sin(), lambda: r * r)
        return hop.map(row, x.reshape(3, 1) * w).sum()

    tx = torch.tensor(arr(x), requires_grad=True)
    tw = torch.tensor(arr(w))
    rows = (tx.reshape(3, 1) * tw)
    total = sum(((r * tw).sin() if r.sum() > 0 else r * r).sum() for r in rows)
    total.backward()
    close(hop.grad(f)(x), tx.grad.numpy(), 1e-6)


# ------------------------------------------------------------ NumPy programs

def test_grad_of_numpy_code_takes_and_returns_ndarrays():
    x = np.array([0.5, 1.0, 2.0])
    g = hop.grad(lambda x: np.sum(np.sin(x) * x))(x)
    assert isinstance(g, np.ndarray) and g.dtype == np.float64
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-12)


def test_grad_of_logsumexp_is_softmax():
    x = np.random.default_rng(3).normal(size=(4, 6))

    def lse(x):
        m = x.max(axis=1, keepdims=True)
        return np.sum(np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(hop.grad(lse)(x), e / e.sum(axis=1, keepdims=True), rtol=1e-10)


def test_grad_through_an_index_that_is_an_unbacked_symint():
    # the select's index is a SymInt node (item's result), not an expression
    g = hop.grad(lambda x, n: (x[n.item()] * 3.0).sum())(t([1.0, 2.0, 3.0]), hop.tensor(1))
    assert g.tolist() == [0.0, 3.0, 0.0]


# ------------------------------------------------------------------ memory

@pytest.mark.parametrize("hop_name", ["scan", "map", "fori_loop", "while_loop"])
def test_backward_of_a_loop_allocates_per_run_not_per_iteration(hop_name):
    """A steady compiled grad makes as many C allocations for 1,000 steps as
    for 10: stacked carries and gradients are sized once per run."""
    from hop import _C
    rng = np.random.default_rng(7)
    w = t(rng.normal(size=(8, 8)) * 0.3)

    def loss(w, xs):
        if hop_name == "scan":
            _, ys = hop.scan(lambda h, x: ((h @ w + x).tanh(),) * 2,
                             hop.zeros((1, 8), dtype=F64), xs)
            return ys.sum()
        if hop_name == "map":
            return hop.map(lambda r: ((r @ w).sin() * r).sum(), xs).sum()
        if hop_name == "fori_loop":
            return hop.fori_loop(0, xs.shape[0], lambda i, h: (h @ w + xs[i]).tanh(),
                                 hop.zeros((1, 8), dtype=F64)).sum()
        h, _ = hop.while_loop(lambda h, k: k < xs.shape[0],
                              lambda h, k: ((h @ w + xs[k.item()]).tanh(), k + 1),
                              (hop.zeros((1, 8), dtype=F64), hop.tensor(0)))
        return h.sum()

    g = hop.compile(hop.grad(loss), dynamic=True)
    counts = []
    for n in (10, 1000):
        xs = t(rng.normal(size=(n, 1, 8) if hop_name != "map" else (n, 8)))
        want = g(w, xs)
        g(w, xs)
        before = _C._alloc_count()
        got = g(w, xs)
        counts.append(_C._alloc_count() - before)
        close(got, arr(want), 0)
    assert counts[0] == counts[1] and counts[1] <= 4, counts
