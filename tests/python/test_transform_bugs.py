"""Regressions of issue #26's four bugs, each as the transform-composition
campaign (test_transform_campaign.py) found it on the code before the fix,
shrunk and written as plain hop code:

1. forward mode dropped the tangents of a loop whose int carry comes before
   a float carry (while_loop, fori_loop, scan; eager, traced, under vmap);
2. jvp of jvp through while_loop / fori_loop raised a subgraph name clash;
3. the gradient of a vmapped cond was nan where the branch not taken is
   singular (the select strategy's 0 * inf);
4. zero-size tensors inside a trace (hop.zeros(3, 0)) raised.
"""

import numpy as np
import pytest

import hop

F64 = hop.float64


def t(a):
    return hop.tensor(np.asarray(a, dtype=np.float64), dtype=F64)


# ----------------------------------------------------------------- bug 1

LOOPS = {
    "while_loop": lambda x: hop.while_loop(lambda i, x: i < 2, lambda i, x: (i + 1, x * 2),
                                           (0, x))[1],
    "fori_loop": lambda x: hop.fori_loop(0, 2, lambda k, c: (c[0] + 1, c[1] * 2), (0, x))[1],
    "scan": lambda x: hop.scan(lambda c, r: ((c[0] + 1, c[1] * 2), r), (0, x),
                               hop.zeros(2, 1))[0][1],
    "bool first": lambda x: hop.fori_loop(0, 2, lambda k, c: (~c[0], c[1] * 2), (True, x))[1],
}


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_jvp_through_a_loop_whose_int_carry_comes_before_its_float_carry(loop):
    f, x = LOOPS[loop], t([1.0, 2.0])
    for jvp in (lambda: hop.jvp(f, (x,), (x,)),
                lambda: hop.compile(lambda x: hop.jvp(f, (x,), (x,)))(x),
                lambda: hop.trace(lambda x: hop.jvp(f, (x,), (x,)), x)(x)):
        out, tan = jvp()
        assert out.tolist() == [4.0, 8.0] and tan.tolist() == [4.0, 8.0]
    tans = hop.vmap(lambda x, d: hop.jvp(f, (x,), (d,))[1])(t([[1.0, 2.0], [3.0, 4.0]]),
                                                          t([[1.0, 0.0], [0.0, 1.0]]))
    assert tans.tolist() == [[4.0, 0.0], [0.0, 4.0]]


# ----------------------------------------------------------------- bug 2

def test_jvp_of_jvp_through_while_and_fori_loops():
    # two squarings: f(x) = x^4, f'' = 12 x^2
    w = lambda x: hop.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * v), (0, x))[1]
    f = lambda x: hop.fori_loop(0, 2, lambda k, v: v * v, x)
    x, one = t([1.0, 2.0]), t([1.0, 1.0])
    for g in (w, f):
        d2 = hop.jvp(lambda y: hop.jvp(g, (y,), (one,))[1], (x,), (one,))[1]
        assert d2.tolist() == [12.0, 48.0]
        # and the third derivative, 24 x
        d3 = hop.jvp(lambda z: hop.jvp(lambda y: hop.jvp(g, (y,), (one,))[1], (z,), (one,))[1],
                     (x,), (one,))[1]
        assert d3.tolist() == [24.0, 48.0]


# ----------------------------------------------------------------- bug 3

def test_grad_of_a_vmapped_cond_is_not_nan_where_the_branch_not_taken_is_singular():
    # JAX's testCondGradVmapNan
    def safe(x):
        return hop.cond(x < 1e-3, lambda: hop.tensor(1e-3), lambda: x.sqrt(), ())
    g = hop.grad(lambda x: hop.vmap(safe)(x).sum())(hop.zeros(10))
    assert g.tolist() == [0.0] * 10
    # switch, with a closure: at 0 the branch not taken is sqrt(-1), whose
    # slope is nan; the closure's gradient comes from the taken examples
    w = t(2.0)

    def two(x):
        return hop.switch((x > 1.0).to(hop.int64),
                          [lambda: (w * x + 1.0).sqrt(), lambda: (x - 1.0).sqrt()])
    xs = t([0.0, 5.0])
    gx, gw = hop.grad(lambda x, w2: hop.vmap(two)(x).sum(), argnums=(0, 1))(xs, w)
    per = [hop.grad(two)(xs[b]).item() for b in range(2)]
    assert gx.tolist() == per == [1.0, 0.25]
    assert hop.grad(lambda w: hop.vmap(lambda x: hop.switch(
        (x > 1.0).to(hop.int64), [lambda: (w * x + 1.0).sqrt(), lambda: (x - 1.0).sqrt()]))(
            xs).sum())(w).item() == 0.0


# ----------------------------------------------------------------- bug 4

ZERO_SIZE = {
    "zeros": lambda x: hop.zeros(3, 0) + x.sum(),
    "ones into matmul": lambda x: hop.ones(3, 0) @ x.reshape(0, 2),
    "sum over empty": lambda x: x.reshape(0, 2).sum(0),
    "cat": lambda x: hop.cat([x, x * 2]),
    "expand": lambda x: x.reshape(1, 0).expand(3, 0) * 2,
    "take": lambda x: hop._C._op("take", hop.arange(4), 0, x.to(hop.int64)),
    "cumsum": lambda x: x.reshape(0, 3).cumsum(0),
    "scan": lambda x: hop.scan(lambda c, r: (c + r.sum(), r * 2), hop.zeros(()),
                               hop.zeros(75, 0))[0] + x.sum(),
    "map rows": lambda x: hop.map(lambda r: r * 2, hop.zeros(3, 0)) + x.sum(),
}


@pytest.mark.parametrize("name", sorted(ZERO_SIZE))
def test_zero_size_tensors_in_every_mode(name):
    f = ZERO_SIZE[name]
    x = hop.zeros(0)
    eager = f(x)
    for got in (hop.trace(f, x)(x), hop.compile(f)(x), hop.compile(f, dynamic=True)(x)):
        assert got.shape == eager.shape and got.tolist() == eager.tolist()


def test_zero_size_tensors_through_the_transforms():
    def f(x, m):
        return (hop.zeros(3, 0) @ m).sum() + (x * 2).sum() + hop.cat([x, x]).sum()
    x, m = hop.zeros(0, dtype=F64), hop.zeros(0, 2)
    assert hop.grad(f)(x, m).shape == (0,)
    assert hop.jvp(lambda x: f(x, m), (x,), (x,))[1].item() == 0.0
    assert hop.vmap(lambda x: f(x, m))(hop.zeros(4, 0, dtype=F64)).tolist() == [0.0] * 4


# ------------------------------------------- as the campaign shrank them

def test_campaign_jvp_of_a_zero_trip_while_loop_with_an_int_carry_first():
    # ['while', 'ih', 0, [['op', 'sin']]]: the tangent of x is x's own
    x, dx = t(0.7), t(-0.46)
    f = lambda x: hop.while_loop(lambda i, h: i < 0, lambda i, h: (i + 1, h.sin()), (0, x))[1]
    assert hop.jvp(f, (x,), (dx,))[1].item() == -0.46


def test_campaign_jvp_of_jvp_through_a_cond_names_its_subgraphs_apart():
    # [['guard']] under jvp(jvp): `cond_true_0_jvp` was made twice
    f = lambda x: hop.cond((x > 0).all(), lambda: x.sqrt(), lambda: x * 0.5)
    x, one = t(0.25), t(1.0)
    d2 = hop.jvp(lambda y: hop.jvp(f, (y,), (one,))[1], (x,), (one,))[1]
    assert d2.item() == -0.25 * 0.25 ** -1.5


def test_campaign_zero_size_values_under_jvp_and_grad_of_vmap():
    # [['op', 'zeros']] on f64[2, 0] under jvp; a zero-step scan over f64[0]
    # rows under grad(vmap): `sum: out f64[2, 0] has stride 0`
    x = hop.zeros(2, 0, dtype=F64)
    out, tan = hop.jvp(lambda x: x + hop.zeros((2, 0), dtype=F64), (x,), (x,))
    assert out.shape == tan.shape == (2, 0)

    def f(x):
        c, ys = hop.scan(lambda c, r: (c.sin() + r * 0.1, c * 0.5), x, hop.zeros(0, 0, dtype=F64))
        return c + ys.sum(0) * 0.1
    g = hop.grad(lambda xs: hop.vmap(f)(xs).sum())(hop.zeros(2, 0, dtype=F64))
    assert g.shape == (2, 0)
