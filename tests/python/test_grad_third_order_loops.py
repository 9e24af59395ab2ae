"""Third-order derivatives through while_loop.

The second order's backward of a while_loop is a scan over the trip count u0
whose first step is peeled: slices [Max(0, u0 - 1), u0) of
u0 - Min(u0, Max(0, u0 - 1)) elements.  The third order slices those again,
and deciding those sizes' signs needs the bounds to see through Min and Max
(ops/sym_eval.c lin_bounds): it raised DataDependentError ("cannot decide
Min(0, u0 - Min(u0, Max(0, u0 - 1))) < 0").  Checked against PyTorch's
autograd of the same loop, unrolled."""

import numpy as np
import pytest

import hop
from transform_values import lazy_import

torch = lazy_import("torch")  # (not in the sanitizer pass, which blocks it)

X = np.array([0.3, -0.7, 1.1, 2.5])


def step_hop(v):
    return v * 1.3 + v.sin() * 0.2


def step_torch(v):
    return v * 1.3 + v.sin() * 0.2


def while_sum(n):
    return lambda x: hop.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, step_hop(v)),
                                    (0, x))[1].sum()


def torch_derivatives(n, order):
    xt = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    v = xt
    for _ in range(n):
        v = step_torch(v)
    g = v.sum()
    for k in range(order):
        if not g.requires_grad:  # (a linear loop: no derivative past the first)
            return np.zeros_like(X)
        (g,) = torch.autograd.grad(g.sum() if k else g, xt, create_graph=k + 1 < order)
    return g.detach().numpy()


@pytest.mark.parametrize("n", [0, 1, 3])
def test_third_order_grad_of_a_while_loop_is_autograds(n):
    f = while_sum(n)
    g3 = hop.grad(lambda x: hop.grad(lambda a: hop.grad(f)(a).sum())(x).sum())
    got = g3(hop.tensor(X)).numpy()
    np.testing.assert_allclose(got, torch_derivatives(n, 3), rtol=1e-12, atol=1e-12)


def test_jvp_of_a_second_order_grad_of_a_while_loop_is_autograds():
    f = while_sum(3)
    g2 = lambda x: hop.grad(lambda a: hop.grad(f)(a).sum())(x)  # noqa: E731
    t = np.ones_like(X)
    _, tangent = hop.jvp(g2, (hop.tensor(X),), (hop.tensor(t),))
    # the jvp with ones of the second derivative (diagonal: elementwise) is the third's
    np.testing.assert_allclose(tangent.numpy(), torch_derivatives(3, 3), rtol=1e-12,
                               atol=1e-12)
