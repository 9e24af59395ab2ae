"""Campaign s39: the transformations in compositions the earlier campaigns
(test_transform_campaign*.py, fuzz_transforms.py) do not draw: third order
(grad of grad of grad, jvp of jvp of jvp), jvp of vjp, Jacobians as vmap of
vjp_fn / of jvp, vmap of vmap with negative, None and pytree in_axes and
out_axes, grad of vmap of cond and switch with a batched index, scans along
dim 1 with carries of lower rank and of mixed dtypes, reversed, of length 0
and 1, associative_scan with a non-commutative combine reversed under vmap,
and gathers whose cotangent is infinite somewhere.  References: PyTorch's
functorch / torch.autograd (float64), loops over the examples, central
finite differences.

The findings, each a test here that failed before its fix:

1. grad of a scan along dim 1 (or -2) whose carry has a lower rank than
   the dim asks (a 0-d counter, a 0-d float) raised "call_hop scan: output 2
   must be a tensor or a SymInt": the reverse rule stacks the carries each
   step starts from along the scan's dim (hop/loop_autodiff.c).
2. The gradient of a gather (take: hop.numpy.take, and the compaction a
   batched cond or switch does) was nan along the whole gathered dim when
   one element's cotangent was inf or nan: its scatter-add was a one-hot
   matmul, 0 * inf = nan (autodiff/index_rules.c vjp_take).  So grad of
   vmap of a cond whose branch has an infinite slope in one lane (sqrt at
   0) gave nan in the other lanes, where vmap of grad was right.
3. grad and jvp of a float16 cumulative associative_scan (add, mul, max,
   min) were UnsupportedError: the rules asked for the dtypes of the
   parallel kernel, not any float dtype (hop/associative_scan.c).
4. The vjp_fn of hop.vjp differentiated at the primals' values when it was
   called: writing into a primal after hop.vjp moved the point
   (python/hop/_autodiff.py vjp now keeps a copy of them).
5. A hop.vmap result moved to an out_axes other than 0, or an unbatched
   output broadcast to the batch, could be a view of an argument (writing
   the result wrote the argument; a broadcast's lanes were one memory):
   python/hop/_vmap.py copies them.
6. hop.grad with argnums out of the arguments' order (argnums=(1, 0))
   returned the gradients in the arguments' order, each under the other's
   name; an argument named twice was an IndexError (_autodiff._vjp_node).

7. Third order through a while_loop was a DataDependentError on the peeled
   step's slice sizes: the symbolic bounds now see through Min and Max
   (ops/sym_eval.c; tests/c/test_shape_env.c, test_grad_third_order_loops.py).

Not fixed: a tensor f closes over, written between hop.vjp and vjp_fn, is
read at the vjp_fn call (docs/AUTODIFF.md).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hop
import hop.numpy as hnp
from budget import examples
from transform_values import F64, T, close, lazy_import, same_bits, t
from transform_values import t as t_

torch = lazy_import("torch")
functorch = lazy_import("functorch")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# ------------------------------------------- 1. scan along dim >= 1, low-rank carries

X32 = np.arange(6.0).reshape(3, 2) * 0.1


def _scan_dim(x, c0, dim):
    c, ys = hop.scan(lambda c, r: (c * 1.5 + r.sum(), (c * r).sin()), c0, x, dim=dim)
    return ys.sum() + c.sum()


def _scan_dim_torch(x, c0, dim):
    c, ys = c0, []
    for k in range(x.shape[dim]):
        r = x.select(dim, k)
        ys.append((c * r).sin())
        c = c * 1.5 + r.sum()
    return torch.stack(ys).sum() + c.sum()


@pytest.mark.parametrize("dim", [1, -2])
def test_grad_of_scan_along_dim_1_with_a_0d_carry(dim):
    x = X32 if dim == 1 else X32.T.copy()  # (dim -2 of a [2, 3]: the rows)
    g = hop.grad(_scan_dim, argnums=(0, 1))(t(x), t(0.5), dim)
    want = functorch.grad(_scan_dim_torch, argnums=(0, 1))(T(x), T(0.5), dim)
    close(g[0].numpy(), want[0].numpy())
    close(g[1].numpy(), want[1].numpy())
    assert g[1].shape == ()


def test_second_order_and_vmap_of_grad_of_scan_along_dim_1_with_a_0d_carry():
    hh = hop.grad(lambda c: hop.grad(_scan_dim, argnums=1)(t(X32), c, 1))(t(0.5))
    want = functorch.grad(lambda c: functorch.grad(_scan_dim_torch, argnums=1)(T(X32), c, 1))(
        T(0.5))
    close(hh.numpy(), want.numpy())
    C = np.array([0.5, -0.25, 1.0])
    vg = hop.vmap(hop.grad(_scan_dim, argnums=1), in_axes=(None, 0, None))(t(X32), t(C), 1)
    close(vg.numpy(), [functorch.grad(_scan_dim_torch, argnums=1)(T(X32), T(c), 1).item()
                       for c in C])


def test_grad_of_scan_along_dim_1_with_an_int_counter_and_a_bool_carry():
    def f(x):
        def step(c, r):
            i, h, b = c
            h2 = hop.where(b, h * r, h + r) + i.to(F64) * 0.1
            return (i + 1, h2, b.logical_not()), (h2, i * hop.ones(3, dtype=hop.int64))
        (i, h, b), (ys, iis) = hop.scan(step, (hop.tensor(0), hop.ones(3, dtype=F64),
                                               hop.tensor(True)), x, dim=1)
        return (ys * iis.to(F64)).sum() + h.sum()

    def tf(x):
        i, h, b, tot = 0, torch.ones(3, dtype=torch.float64), True, 0
        for k in range(x.shape[1]):
            r = x[:, k]
            h = (h * r if b else h + r) + i * 0.1
            tot = tot + (h * i).sum()
            i, b = i + 1, not b
        return tot + h.sum()

    x = np.linspace(-1, 1, 12).reshape(3, 4)
    close(hop.grad(f)(t(x)).numpy(), functorch.grad(tf)(T(x)).numpy())
    close(hop.jvp(f, (t(x),), (t(x * 0.5),))[1].numpy(),
          functorch.jvp(tf, (T(x),), (T(x * 0.5),))[1].numpy())


# ------------------------------------------- 2. the gradient of a gather

def test_grad_of_take_keeps_an_infinite_cotangent_to_its_position():
    f = lambda x: hnp.sqrt(hnp.take(x, np.array([0, 2]))).sum()  # noqa: E731
    same_bits(hop.grad(f)(t([0.0, 4.0, 9.0])).numpy(), np.array([np.inf, 0.0, 1.0 / 6.0]))
    # along a middle dim, a repeated and a negative index: each adds to its own
    g = lambda x: (hnp.sqrt(hnp.take(x, np.array([1, -1, 1]), axis=1)) *  # noqa: E731
                   t([1.0, 2.0, 3.0]).reshape(1, 3, 1)).sum()
    x = np.array([[[4.0, 1.0], [0.0, 9.0], [16.0, 0.0]]])
    xt = T(x).requires_grad_()
    (xt[:, [1, -1, 1]].sqrt() * T([1.0, 2.0, 3.0]).reshape(1, 3, 1)).sum().backward()
    same_bits(hop.grad(g)(t(x)).numpy(), xt.grad.numpy())


def _lanes_ref(branches, X, K):
    return np.stack([functorch.grad(branches[min(max(int(k), 0), len(branches) - 1)])(
        T(x)).numpy() for x, k in zip(X, K)])


XL = np.array([[-1.0, 4.0], [4.0, 9.0], [0.0, 1.0]])


def test_grad_of_vmap_of_cond_with_an_infinite_lane_slope():
    f = lambda x, k: hop.cond(k > 0, lambda: x.sqrt().sum(), lambda: (x * 2).sum(), ())  # noqa
    K = [0, 1, 1]
    g = hop.grad(lambda X: hop.vmap(f)(X, hop.tensor(K)).sum())(t(XL))
    same_bits(g.numpy(), _lanes_ref([lambda x: (x * 2).sum(), lambda x: x.sqrt().sum()], XL, K))


def test_grad_of_vmap_of_switch_with_a_batched_index_and_an_infinite_lane_slope():
    fns = [lambda v: (v * 2).sum(), lambda v: v.sqrt().sum(), lambda v: v.log().sum()]
    f = lambda x, k: hop.switch(k, fns, x)  # noqa: E731
    for K in ([0, 1, 2], [2, 7, -3]):
        want = _lanes_ref(fns, XL, K)
        same_bits(hop.grad(lambda X: hop.vmap(f)(X, hop.tensor(K)).sum())(t(XL)).numpy(), want)
        same_bits(hop.vmap(hop.grad(f))(t(XL), hop.tensor(K)).numpy(), want)
        same_bits(hop.compile(hop.grad(lambda X: hop.vmap(f)(X, hop.tensor(K)).sum()))(
            t(XL)).numpy(), want)


# ------------------------------------------- the property test: new compositions
#
# A program maps h: f64[L, 2] (and w: f64[2], closed over by some layers) to
# f64[L, 2] through layers drawn from _LAYERS; each layer's HOP is one the
# earlier campaigns draw, in the variants they do not: scans along dim 1,
# reversed, with 0-d / int / bool carries, of length 0 and 1; associative
# scans reversed along dim -1; a cond returning a float and an int; a switch
# whose index is data (batched under vmap); a data-dependent while with an
# int carry; a wrap closing over the enclosing body's input.


def _ascan(op):
    return {"add": lambda a, b: a + b, "mul": lambda a, b: a * b,
            "max": lambda a, b: a.maximum(b), "min": lambda a, b: a.minimum(b)}[op]


def _layer(layer, h, w, outer):
    kind = layer[0]
    sub = lambda p, v: _prog(p, v, w, h)  # noqa: E731
    if kind == "sin":
        return (h * 1.3).sin()
    if kind == "tanhw":
        return (h * w).tanh() + h * 0.5
    if kind == "sq":
        return h * h * 0.5 - h * 0.25
    if kind == "outer":  # the enclosing body's input, closed over
        return h + outer.sum() * 0.1
    if kind == "scan0":  # along dim 0, a [2] float carry, an int and a bool carry
        def step(c, r):
            v, i, b = c
            v2 = hop.where(b, (v * r).sin() + r, v * 0.5 - r) + i.to(F64) * 0.1
            return (v2, i + 1, b.logical_not()), sub(layer[2], v * r + w)
        (v, i, b), ys = hop.scan(step, (w * 0.5, hop.tensor(0), hop.tensor(layer[3])), h,
                                 reverse=layer[1])
        return ys + v * 0.25
    if kind == "scan1":  # along dim 1: a 0-d float carry (finding 1), an int carry
        def step(c, col):
            v, i = c
            return (v * 0.8 + (col * v).sin().sum() * 0.1, i + 1), col * v + i.to(F64) * 0.05
        (v, i), ys = hop.scan(step, (w.sum() * 0.3, hop.tensor(1)), h, dim=1,
                              reverse=layer[1])
        return ys + v
    if kind == "ascan":
        return hop.associative_scan(_ascan(layer[1]), h, dim=layer[2], reverse=layer[3])
    if kind == "cond":  # a float and an int output
        def branch(p, n):
            return lambda: (sub(p, h), (h > n).sum())
        a, n = hop.cond(h.sum() > 0, branch(layer[1], 0.0), branch(layer[2], 0.5), ())
        return a * (n.to(F64) * 0.1 + 1.0)
    if kind == "switch":  # index from the data (batched under vmap)
        k = (h.sum() > 0).to(hop.int64) + (w.sum() > 0).to(hop.int64)
        return hop.switch(k, [lambda v: sub(layer[1], v), lambda v: sub(layer[2], v),
                              lambda v: sub(layer[3], v)], h)
    if kind == "while":  # data-dependent, an int carry, at most 4 steps
        return hop.while_loop(lambda i, v: (i < 4).logical_and(v.abs().sum() < 3.0),
                              lambda i, v: (i + 1, sub(layer[1], v) * 0.5 + v * 1.2 + 0.05),
                              (0, h))[1]
    if kind == "wrap":
        return hop.wrap(lambda v: sub(layer[1], v), h)
    if kind == "map":
        return hop.map(lambda r: _prog(layer[1], r, w, h), h)
    raise AssertionError(kind)


def _prog(prog, h, w, outer):
    for layer in prog:
        h = _layer(layer, h, w, outer)
    return h


@st.composite
def _programs(draw, depth=0, rows=True):
    leaf = ["sin", "tanhw", "sq", "outer"]
    # (rows: h is [L, 2]; else a row [2], as in a map's or a scan's body)
    kinds = leaf + ((["scan0", "scan1", "ascan", "map"] if rows else []) +
                    ["cond", "switch", "while", "wrap"] if depth < 2 else [])
    out = []
    for _ in range(draw(st.integers(1, 2))):
        k = draw(st.sampled_from(kinds))
        sub = lambda r=rows: draw(_programs(depth + 1, r))  # noqa: E731
        if k in leaf:
            out.append([k])
        elif k == "scan0":
            out.append([k, draw(st.booleans()), sub(False), draw(st.booleans())])
        elif k == "scan1":
            out.append([k, draw(st.booleans())])
        elif k == "ascan":
            out.append([k, draw(st.sampled_from(["add", "mul", "max", "min"])),
                        draw(st.sampled_from([0, 1, -1])), draw(st.booleans())])
        elif k == "cond":
            out.append([k, sub(), sub()])
        elif k == "switch":
            out.append([k, sub(), sub(), sub()])
        elif k == "map":
            out.append([k, sub(False)])
        else:
            out.append([k, sub()])
    return out


def _uses(prog, kind):
    return any(layer[0] == kind or any(isinstance(p, list) and _uses(p, kind)
                                       for p in layer[1:]) for layer in prog)


def _fd(fn, x, t, eps):
    return (fn(x + t * eps) - fn(x - t * eps)) / (2 * eps)


def _smooth_fd(fn, x, t):
    """The central difference of fn along t, or None where two step sizes
    disagree (a branch or a loop's trip count changes nearby)."""
    a, b = _fd(fn, x, t, 1e-6), _fd(fn, x, t, 2e-6)
    scale = max(1.0, abs(a), abs(b))
    return a if abs(a - b) <= 1e-6 * scale else None


def _num(v):
    return float(np.asarray(v.numpy() if hasattr(v, "numpy") else v))


def _check_third_order(F, w, x, t):
    """<grad^3 L . t, t, t>: each order against the central difference of
    the one below (the one below checked first the same way)."""
    L = lambda y: (F(y, w) * np.cos(np.arange(y.numel()).reshape(y.shape))).sum()  # noqa
    s0 = lambda y: _num(L(t_(y)))  # noqa: E731
    s1 = lambda y: _num((hop.grad(L)(t_(y)) * t_(t)).sum())  # noqa: E731
    g2 = hop.grad(lambda y: (hop.grad(L)(y) * t_(t)).sum())
    s2 = lambda y: _num((g2(t_(y)) * t_(t)).sum())  # noqa: E731
    g3 = hop.grad(lambda y: (g2(y) * t_(t)).sum())
    s3 = _num((g3(t_(x)) * t_(t)).sum())
    for got, lower, what in ((s1(x), s0, "first"), (s2(x), s1, "second"), (s3, s2, "third")):
        d = _smooth_fd(lower, x, t)
        if d is None:
            return
        assert abs(got - d) <= 1e-5 * max(1.0, abs(d)), (what, got, d)


def _per_example(fn, *args_axes):
    n = [a.shape[ax] for a, ax in args_axes if ax is not None][0]
    outs = [fn(*[a if ax is None else t_(np.take(a, b, axis=ax)) for a, ax in args_axes])
            for b in range(n)]
    return np.stack([o.numpy() for o in outs])


@settings(max_examples=examples(120), deadline=None, suppress_health_check=list(HealthCheck))
@given(prog=_programs(), rows=st.integers(0, 3), seed=st.integers(0, 2 ** 16),
       check=st.sampled_from(["third", "jvp_vjp", "vmap_vmap", "grad_vmap", "vmap_grad"]))
def test_new_compositions_agree_with_finite_differences_and_loops(prog, rows, seed, check):
    if rows == 0 and _uses(prog, "map"):
        rows = 1  # (map has nothing to map over in 0 rows: it raises, eagerly too)
    r = np.random.RandomState(seed)
    x, t, w = r.uniform(-1, 1, (rows, 2)), r.uniform(-1, 1, (rows, 2)), r.uniform(-1, 1, 2)
    F = lambda h, w: _prog(prog, h, w, h)  # noqa: E731
    if check == "third":
        _check_third_order(F, t_(w), x, t)
    elif check == "jvp_vjp":
        ct = t_(r.uniform(-1, 1, (rows, 2)))
        V = lambda y: hop.vjp(lambda z: F(z, t_(w)), y)[1](ct)[0]  # noqa: E731
        got = hop.jvp(V, (t_(x),), (t_(t),))[1].numpy()
        for j in np.ndindex(got.shape):
            d = _smooth_fd(lambda y: V(t_(y)).numpy()[j], x, t)
            if d is not None:
                assert abs(got[j] - d) <= 1e-5 * max(1.0, abs(d)), (j, got, d)
    elif check == "vmap_vmap":
        # X: [2, 3, rows, 2] laid out with the batch dims at the drawn axes
        ax_out, ax_in, oa_in, oa_out = (r.choice([0, 1, -1]), r.choice([0, 1, -1]),
                                        r.choice([0, -1]), r.choice([0, 1, -1]))
        base = r.uniform(-1, 1, (2, 3, rows, 2))
        inner_ex = np.moveaxis(base, 1, 1 + ax_in % 3)  # inner batch at ax_in of [3, rows, 2]
        X = np.moveaxis(inner_ex, 0, ax_out % 4)
        W = r.uniform(-1, 1, (3, 2))
        inner = hop.vmap(F, in_axes=(int(ax_in), 0), out_axes=int(oa_in))
        got = hop.vmap(inner, in_axes=(int(ax_out), None), out_axes=int(oa_out))(t_(X), t_(W))
        want = np.stack([np.moveaxis(np.stack([F(t_(base[i, j]), t_(W[j])).numpy()
                                               for j in range(3)]), 0, oa_in % 3)
                         for i in range(2)])
        want = np.moveaxis(want, 0, oa_out % 4)
        close(got.numpy(), want, 1e-12, 1e-13)
    else:
        X, CT, W = (r.uniform(-1, 1, (3, rows, 2)), r.uniform(-1, 1, (3, rows, 2)),
                    r.uniform(-1, 1, (3, 2)))
        loss = lambda h, c, w: (F(h, w) * c).sum()  # noqa: E731
        want = _per_example(hop.grad(loss), (X, 0), (CT, 0), (W, 0))
        if check == "grad_vmap":
            got = hop.grad(lambda X: (hop.vmap(F)(X, t_(W)) * t_(CT)).sum())(t_(X))
        else:
            got = hop.vmap(hop.grad(loss))(t_(X), t_(CT), t_(W))
        close(got.numpy(), want, 1e-10, 1e-12)


# ------------------------------------------- 3. float16 cumulative scans

@pytest.mark.parametrize("op", ["add", "mul", "max", "min"])
def test_grad_and_jvp_of_a_float16_associative_scan(op):
    # (the rules recognised a float16 combine_fn as no add/mul/max/min:
    # UnsupportedError "only a combine_fn of one add, mul, maximum or minimum
    # of its two operands over one float xs")
    x16 = hop.tensor(np.array([0.5, 1.5, 2.0, 0.75]), dtype=hop.float16)
    w = hop.tensor([1.0, 2.0, 3.0, 4.0])
    f = lambda x: (hop.associative_scan(_ascan(op), x).to(hop.float32) * w).sum()  # noqa
    g = hop.grad(f)(x16)
    want = hop.grad(f)(x16.to(hop.float32))
    assert g.dtype == hop.float16
    same_bits(g.numpy(), want.numpy().astype(np.float16))
    j = hop.jvp(lambda x: hop.associative_scan(_ascan(op), x), (x16,), (x16,))[1]
    jw = hop.jvp(lambda x: hop.associative_scan(_ascan(op), x), (x16.to(hop.float32),),
                 (x16.to(hop.float32),))[1]
    assert j.dtype == hop.float16
    same_bits(j.numpy(), jw.numpy().astype(np.float16))
    X = hop.stack([x16, x16 * 0.5])
    same_bits(hop.vmap(hop.grad(f))(X).numpy(), np.stack([hop.grad(f)(X[i]).numpy()
                                                          for i in range(2)]))


# ------------------------------------------- 4. vjp_fn after a primal is written

def _vjp_at_one_two():
    return np.cos([1.0, 2.0]) * [1.0, 2.0] + np.sin([1.0, 2.0])


def test_vjp_fn_differentiates_at_the_primals_as_they_were_when_vjp_was_called():
    x = hop.tensor([1.0, 2.0], dtype=F64)
    out, fn = hop.vjp(lambda a: a.sin() * a, x)
    x[0] = 5.0  # (before: vjp_fn linearised at [5, 2])
    np.testing.assert_allclose(fn(hop.tensor([1.0, 1.0], dtype=F64))[0].numpy(),
                               _vjp_at_one_two(), rtol=1e-15)
    same_bits(out.numpy(), np.sin([1.0, 2.0]) * [1.0, 2.0])
    a = hnp.array([1.0, 2.0])
    _, fn = hop.vjp(lambda v: hnp.sin(v) * v, a)
    a[0] = 5.0
    g = fn(hnp.array([1.0, 1.0]))[0]
    assert isinstance(g, type(a))
    np.testing.assert_allclose(np.asarray(g), _vjp_at_one_two(), rtol=1e-15)


def test_vjp_fn_under_a_trace_uses_the_primal_before_a_later_setitem():
    def f(x):
        x = x * 1.0
        _, fn = hop.vjp(lambda a: a.sin() * a, x)
        x[0] = 5.0
        return fn(x * 0 + 1)[0]
    x = hop.tensor([1.0, 2.0], dtype=F64)
    for run in (f, hop.trace(f, x), hop.compile(f)):
        np.testing.assert_allclose(run(x).numpy(), _vjp_at_one_two(), rtol=1e-15)


# ------------------------------------------- 5. vmap's results never alias an argument

def _arange23():
    return hop.tensor(np.arange(6.0).reshape(2, 3), dtype=F64)


@pytest.mark.parametrize("f, in_axes, out_axes", [
    (lambda x: x, 1, 1),
    (lambda x: x.unsqueeze(0), 0, -1),
    (lambda x: (x, x * 2), 0, (1, 0)),
    (lambda x: hop.wrap(lambda v: v, x), 1, 1),
])
def test_writing_a_vmap_result_does_not_write_the_argument(f, in_axes, out_axes):
    # (the loop over the examples stacks fresh values; a passed-through
    # input moved to out_axes was a view of the argument)
    X = _arange23()
    out = hop.vmap(f, in_axes=in_axes, out_axes=out_axes)(X)
    for y in out if isinstance(out, tuple) else (out,):
        y[(0,) * y.ndim] = -1.0
    same_bits(X.numpy(), np.arange(6.0).reshape(2, 3))


def test_an_unbatched_vmap_output_is_a_fresh_stack_not_a_broadcast_view():
    X, W = _arange23(), hop.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64)
    y = hop.vmap(lambda x, w: w, in_axes=(0, None), out_axes=1)(X, W)
    assert y.shape == (2, 2, 2)
    y[0, 0, 0] = 99.0
    same_bits(W.numpy(), np.array([[1.0, 2.0], [3.0, 4.0]]))
    want = np.stack([W.numpy()] * 2, 1)
    want[0, 0, 0] = 99.0  # (only that element: the lanes are separate values)
    same_bits(y.numpy(), want)


# ------------------------------------------- 6. argnums in another order than the arguments'

def test_grad_with_argnums_out_of_order_gives_each_gradient_its_own_place():
    x, y, z = (hop.tensor(v, dtype=F64) for v in ([1.0, 2.0], [3.0, 4.0], [2.0, 2.0]))
    f = lambda a, b: (a * a * b).sum()  # noqa: E731
    ga, gb = [6.0, 16.0], [1.0, 4.0]
    for nums in ((1, 0), (1, -2), (-1, 0)):
        g = hop.grad(f, argnums=nums)(x, y)
        same_bits(g[0].numpy(), np.array(gb))
        same_bits(g[1].numpy(), np.array(ga))
    v, g = hop.value_and_grad(lambda a, b, c: (a * b * c).sum(), argnums=(2, 0))(x, y, z)
    same_bits(g[0].numpy(), np.array([3.0, 8.0]))
    same_bits(g[1].numpy(), np.array([6.0, 8.0]))
    g = hop.grad(lambda s, t: (s["p"] * s["q"] * t).sum(), argnums=(1, 0))({"p": x, "q": y}, z)
    same_bits(g[0].numpy(), np.array([3.0, 8.0]))
    same_bits(g[1]["p"].numpy(), np.array([6.0, 8.0]))
    same_bits(g[1]["q"].numpy(), np.array([2.0, 4.0]))
    vg = hop.vmap(hop.grad(f, argnums=(1, 0)), in_axes=(0, None))(hop.stack([x, y]), y)
    same_bits(vg[0].numpy(), np.array([gb, [9.0, 16.0]]))
    same_bits(vg[1].numpy(), np.array([ga, [18.0, 32.0]]))
    cg = hop.compile(lambda a, b: hop.grad(f, argnums=(1, 0))(a, b))(x, y)
    same_bits(cg[0].numpy(), np.array(gb))


def test_grad_with_an_argument_named_twice_in_argnums_is_a_value_error():
    x = hop.tensor([1.0, 2.0], dtype=F64)
    with pytest.raises(ValueError, match=r"hop.grad: argnums \(0, -2\) names argument 0 twice"):
        hop.grad(lambda a, b: (a * b).sum(), argnums=(0, -2))(x, x)


def test_the_fixed_rules_save_load_and_run_at_new_sizes(tmp_path):
    # the take gradient's put, the padded scan carries: saved, loaded, dynamic sizes
    f = lambda x: hop.grad(lambda y: hnp.sqrt(hnp.take(y, np.array([0, 2]))).sum())(x)  # noqa
    path = str(tmp_path / "take.hop")
    hop.save(hop.trace(f, t([0.0, 4.0, 9.0, 1.0]), dynamic=True), path)
    ld = hop.load(path)
    same_bits(ld(t([0.0, 4.0, 9.0, 1.0])).numpy(), np.array([np.inf, 0.0, 1.0 / 6.0, 0.0]))
    same_bits(ld(t([1.0, 4.0, 16.0, 1.0, 5.0])).numpy(), np.array([0.5, 0.0, 0.125, 0.0, 0.0]))
    g = lambda X: hop.grad(lambda X: _scan_dim(X, X.sum() * 0 + 0.5, 1))(X)  # noqa: E731
    path = str(tmp_path / "scan.hop")
    hop.save(hop.trace(g, t(X32), dynamic=True), path)
    ld = hop.load(path)
    for x in (X32, np.linspace(-1, 1, 12).reshape(3, 4)):
        want = functorch.grad(lambda x: _scan_dim_torch(x, x.sum() * 0 + 0.5, 1))(T(x))
        close(ld(t(x)).numpy(), want.numpy())
