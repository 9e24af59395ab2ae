"""hop.vmap against a Python loop over examples: every op rule, in_axes and
out_axes (ints, None, negative, pytrees), nesting, grad, closures, the map
fallback for HOPs without a batch rule, and the error messages."""

import ctypes
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from budget import examples

import hop


def loop(f, in_axes, args, out_axis=0):
    """f over the examples one at a time, stacked at out_axis."""
    n = next(a.shape[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = []
    for b in range(n):
        ex = [a if ax is None else hop.tensor(np.take(a.numpy(), b, axis=ax))
              for a, ax in zip(args, in_axes)]
        outs.append(f(*ex).numpy())
    return np.stack(outs, axis=out_axis)


def check(f, in_axes, *args, out_axes=0, rtol=1e-5):
    got = hop.vmap(f, in_axes=in_axes, out_axes=out_axes)(*args)
    want = loop(f, in_axes, args, out_axes)
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=1e-6)
    assert got.dtype.name == hop.tensor(want).dtype.name or want.dtype == np.bool_


def r(*shape):
    return hop.tensor(np.random.default_rng(sum(shape) + len(shape)).standard_normal(shape)
                      .astype(np.float32))


UNARY = ["neg", "abs", "exp", "sin", "cos", "tanh", "sigmoid", "relu", "floor", "ceil",
         "round", "sign", "expm1", "arctan", "tan"]


@pytest.mark.parametrize("name", UNARY)
def test_vmap_unary_ops_match_a_loop(name):
    check(lambda x: getattr(x, name)(), (0,), r(4, 3))


@pytest.mark.parametrize("name", ["log", "sqrt", "log1p", "log2", "log10", "exp2"])
def test_vmap_positive_unary_ops_match_a_loop(name):
    check(lambda x: getattr(x.abs() + 1.0, name)(), (1,), r(3, 4))


@pytest.mark.parametrize("op", [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b,
                                lambda a, b: a / (b.abs() + 1), hop.maximum, hop.minimum,
                                lambda a, b: (a < b), lambda a, b: (a >= b),
                                lambda a, b: a.abs() ** b, lambda a, b: hop.where(a > 0, a, b)])
@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 0), (1, 0)])
def test_vmap_binary_ops_broadcast_like_a_loop(op, axes):
    a = r(4, 3, 2) if axes[0] != 1 else r(3, 4, 2)
    b = r(4, 2) if axes[1] == 0 else r(2)
    check(op, axes, a, b)


def test_vmap_integer_and_logical_ops_match_a_loop():
    a = hop.tensor(np.arange(24).reshape(4, 6) - 7)
    b = hop.tensor(np.arange(6) + 1)
    for f in [lambda x, y: x // y, lambda x, y: x % y, hop.bitwise_and, hop.bitwise_or,
              hop.bitwise_xor, lambda x, y: hop.bitwise_not(x), lambda x, y: (x > 0) & (y > 2),
              lambda x, y: hop.logical_or(x > 0, y > 3), lambda x, y: hop.logical_not(x > 0)]:
        check(f, (0, None), a, b)


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "prod"])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_vmap_reductions_shift_their_dims(name, dim, keepdim):
    if dim is None:
        f = lambda x: getattr(x, name)()
    else:
        f = lambda x: getattr(x, name)(dim, keepdim=keepdim)
    check(f, (2,), r(3, 2, 4))


def test_vmap_reductions_of_a_logical_scalar():
    check(lambda x: x.sum(), (0,), r(5))
    check(lambda x: (x > 0).any(), (0,), r(5))
    check(lambda x: (x > 0).all(), (0,), r(5))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_vmap_argmax_with_and_without_dim(name):
    check(lambda x: getattr(x, name)(), (0,), r(4, 3, 2))
    check(lambda x: getattr(x, name)(1), (0,), r(4, 3, 2))
    check(lambda x: getattr(x, name)(-1, keepdim=True), (1,), r(3, 4, 2))


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)),
                                   ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((3,), (5, 3, 4)),
                                   ((5, 2, 3), (3,))])
@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 0)])
def test_vmap_matmul_of_every_rank_pairing(sa, sb, axes):
    a = r(6, *sa) if axes[0] == 0 else r(*sa)
    b = r(6, *sb) if axes[1] == 0 else r(*sb)
    check(lambda x, y: x @ y, axes, a, b, rtol=1e-4)


def test_vmap_view_ops_shift_their_dims():
    x = r(4, 2, 3)
    for f in [lambda t: t.reshape(6), lambda t: t.reshape(3, -1), lambda t: t.view(6),
              lambda t: t.transpose(0, 1), lambda t: t.permute(1, 0), lambda t: t.T,
              lambda t: t.unsqueeze(0), lambda t: t.unsqueeze(-1), lambda t: t[1],
              lambda t: t[:, 1:], lambda t: t[..., ::2], lambda t: t.expand(5, 2, 3),
              lambda t: t.unsqueeze(1).squeeze(1), lambda t: t[:, :1].squeeze(),
              lambda t: t.clone(), lambda t: t.to(hop.float64), lambda t: t.cumsum(1),
              lambda t: t.cumprod(0), lambda t: hop._C._op("sort", t, 1, False, 0),
              lambda t: hop._C._op("argsort", t, 0, True, 0)]:
        check(f, (0,), x)


def test_vmap_of_a_batch_of_one_squeezes_no_batch_dim():
    check(lambda t: t.squeeze(), (0,), r(1, 1, 3))


def test_vmap_cat_and_stack_broadcast_unbatched_operands():
    a, b = r(4, 2, 3), r(2, 3)
    check(lambda x, y: hop.cat([x, y], 0), (0, None), a, b)
    check(lambda x, y: hop.cat([x, y], -1), (0, None), a, b)
    check(lambda x, y: hop.stack([x, y], 1), (0, None), a, b)
    check(lambda x, y: hop.stack([y, x]), (0, None), a, b)


def take(t, dim, index):
    return hop._C._op("take", t, dim, index)


def test_vmap_take_with_batched_and_unbatched_indices():
    x = r(4, 5, 3)
    i = hop.tensor(np.array([[0, 4], [1, -1], [2, 2], [3, 0]]))
    check(lambda t, k: take(t, 1, k), (0, 0), r(4, 3, 5), i)
    check(lambda t, k: take(t, 0, k), (0, 0), x, i)
    check(lambda t, k: take(t, 0, k), (0, None), x, hop.tensor(np.array([4, -2, 0])))
    check(lambda t, k: take(t, 1, k), (None, 0), r(5, 6), i)
    check(lambda t, k: take(t, 0, k), (0, 0), x, hop.tensor(np.array([1, 0, 4, 2])))


def test_vmap_factories_stay_unbatched():
    check(lambda t: t + hop.zeros(3) + hop.ones(3) + hop.arange(3).to(hop.float32)
          + hop.full((3,), 2.0), (0,), r(4, 3))


def test_vmap_item_of_a_batched_value_is_a_scalar_operand_per_example_and_nothing_else():
    """item's int per example, as a weak scalar beside a tensor (the int plus
    an f32 tensor is f32), is that tensor of ints; used as a size it is an
    error naming the op that needs one int for the whole batch."""
    x = r(4, 3)
    check(lambda t: t.sum().to(hop.int64).item() + t, (0,), x)
    check(lambda t: (t.sum() > 0).item() * t.to(hop.int32), (0,), x)
    with pytest.raises(hop.UnsupportedError,
                       match=r"^vmap: the op item \(item\) has no batch rule: item of a batched "
                             r"value is data-dependent per example, and zeros uses its int "
                             r"\(item\) as more than a scalar operand of an elementwise op"):
        hop.vmap(lambda t: hop.zeros(t.sum().to(hop.int64).item().__abs__()) + 1)(x)


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(-3, 2), st.one_of(st.none(), st.integers(-2, 1)), st.integers(-3, 2),
       st.integers(1, 4))
def test_vmap_in_axes_and_out_axes_hypothesis(ax, bx, ox, n):
    shape = [2, 3]
    a = r(*(shape[:ax % 3] + [n] + shape[ax % 3:]))
    b = r(3) if bx is None else r(*([n, 3] if bx % 2 == 0 else [3, n]))
    f = lambda x, y: (x * y).sin() + x.sum(0, keepdim=True)
    got = hop.vmap(f, in_axes=(ax, bx), out_axes=ox)(a, b)
    want = loop(f, (ax % 3, None if bx is None else bx % 2), (a, b), ox % 3)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_vmap_pytrees_of_in_axes_and_out_axes():
    x, w = r(4, 3), r(3)
    out = hop.vmap(lambda d: {"y": d["x"] * d["w"], "s": d["w"].sum()},
                   in_axes=({"x": 0, "w": None},), out_axes={"y": 1, "s": None})({"x": x, "w": w})
    np.testing.assert_allclose(out["y"].numpy(), (x * w).numpy().T, rtol=1e-6)
    np.testing.assert_allclose(out["s"].numpy(), w.sum().numpy(), rtol=1e-6)


def test_vmap_broadcasts_an_unbatched_output_with_an_int_out_axis():
    out = hop.vmap(lambda x, w: (x, w * 2), in_axes=(0, None), out_axes=(0, 1))(r(4, 3), r(3))
    np.testing.assert_allclose(out[1].numpy(), np.stack([r(3).numpy() * 2] * 4, 1), rtol=1e-6)


def test_vmap_nested_matches_a_double_loop():
    x, y = r(3, 4, 2), r(4, 2)
    f = hop.vmap(hop.vmap(lambda a, b: (a * b).sum(), in_axes=(0, 0)), in_axes=(0, None))
    want = np.array([[(x.numpy()[i, j] * y.numpy()[j]).sum() for j in range(4)] for i in range(3)])
    np.testing.assert_allclose(f(x, y).numpy(), want, rtol=1e-5)


def test_vmap_of_grad_gives_per_example_gradients():
    def loss(w, x):
        return ((x @ w).tanh() ** 2).sum()
    w, xs = r(3, 2), r(5, 4, 3)
    got = hop.vmap(hop.grad(loss), in_axes=(None, 0))(w, xs)
    want = np.stack([hop.grad(loss)(w, hop.tensor(xs.numpy()[i])).numpy() for i in range(5)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_grad_of_vmap_differentiates_through_the_batched_body():
    xs, w = r(5, 3), r(3)
    g = hop.grad(lambda w, xs: hop.vmap(lambda x: (x * w).sin().sum())(xs).sum())(w, xs)
    want = sum(hop.grad(lambda w, x: (x * w).sin().sum())(w, hop.tensor(xs.numpy()[i])).numpy()
               for i in range(5))
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-5)


def test_vmap_closures_over_batched_and_unbatched_values():
    xs, c = r(4, 3), r(3)

    def outer(x):
        return hop.vmap(lambda y: y * x + c, in_axes=0)(xs)   # x: a value of the outer vmap
    got = hop.vmap(outer)(r(2, 3))
    want = np.stack([xs.numpy() * r(2, 3).numpy()[i] + c.numpy() for i in range(2)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_vmap_under_trace_and_compile_prints_one_vmap_node():
    f = lambda x, w: hop.vmap(lambda a: (a * w).relu(), in_axes=0)(x)
    gm = hop.trace(f, r(4, 3), r(3))
    assert "vmap([0, -1], [0], vmap_body_0_vmap, vmap_body_0, (x, w))" in gm.code
    np.testing.assert_allclose(hop.compile(f)(r(4, 3), r(3)).numpy(),
                               (r(4, 3) * r(3)).relu().numpy())


def test_vmap_takes_and_returns_numpy_arrays():
    out = hop.vmap(lambda x: x * 2)(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(np.asarray(out), np.arange(6.0).reshape(2, 3) * 2)


def test_vmap_wrap_and_invoke_subgraph_batch_their_body():
    x, w = r(4, 3), r(3)
    check(lambda t: hop.wrap(lambda a: a * w + 1, t), (0,), x)
    body = hop.nested_compile_region(lambda a: a.sin() * w)
    check(lambda t: body(t) + body(t * 2), (0,), x)
    gm = hop.trace(lambda t: hop.vmap(lambda a: hop.wrap(lambda b: b * w, a))(t), x)
    assert "wrap_body_0_vmap" in gm.code


def code_of(f, *args, in_axes=0):
    return hop.trace(lambda *a: hop.vmap(f, in_axes=in_axes)(*a), *args).code


def cheap(t):
    """a cheap, pure per-example cond: select"""
    return hop.cond(t.sum() > 0, lambda: t * 2, lambda: t - 1)


def costly(t, w):
    """a cond whose branches are not elementwise: compaction"""
    return hop.cond(t.sum() > 0, lambda: (t @ w).tanh() * t.sum(), lambda: t.cumsum(0) - 1)


def test_vmap_cond_with_a_batched_pred_selects_when_the_branches_are_cheap_and_pure():
    x = r(5, 3)
    check(cheap, (0,), x)
    code = code_of(cheap, x)
    assert "def cond_true_0_vmap_select(a_0: \"f32[5, 3]\")" in code
    assert "def cond_false_0_vmap_select(a_0: \"f32[5, 3]\")" in code
    assert "where(" in code and "nonzero" not in code and "= map(" not in code


def test_vmap_cond_with_a_batched_pred_compacts_costly_branches():
    x, w = r(6, 3), r(3, 3)
    check(costly, (0, None), x, w)
    check(costly, (0, 0), x, hop.tensor(np.stack([w.numpy() * k for k in range(6)])))
    code = code_of(costly, x, w, in_axes=(0, None))
    assert "def cond_true_0_vmap_compact(a_0: \"f32[u0, 3]\", a_1_true_branch: " in code
    assert "def cond_false_0_vmap_compact(a_0: \"f32[u1, 3]\", a_1_true_branch: " in code
    assert "take(cat, 0, where)" in code and "= map(" not in code


def test_vmap_cond_branches_close_over_batched_and_unbatched_values():
    x, y, c = r(6, 3), r(6, 3), r(3)
    # one branch returns an unbatched closure: broadcast to the batch
    check(lambda a, b: hop.cond(a.sum() > 0, lambda: b * 2, lambda: c + 0), (0, 0), x, y)
    check(lambda a, b: hop.cond(a.sum() > 0, lambda: c @ c * b, lambda: c.sum() + a), (0, 0),
          x, y)
    check(lambda a: hop.cond(a.sum() > 0, lambda: c, lambda: c * 2), (0,), x)


def test_vmap_cond_with_an_unbatched_pred_is_one_cond_over_the_batched_branches():
    x, flag = r(4, 3), r(3)
    f = lambda a, p: hop.cond(p.sum() > 0, lambda: (a @ p).sin() * p, lambda: a.cumsum(0) + p)
    check(f, (0, None), x, flag)
    check(f, (0, None), x, hop.tensor(-flag.numpy()))
    g = lambda a, p: hop.cond(p.sum() > 0, lambda: a * 2, lambda: p + 1)
    check(g, (0, None), x, flag)
    check(g, (0, None), x, hop.tensor(-flag.numpy()))
    code = code_of(f, x, flag, in_axes=(0, None))
    assert "cond(gt, cond_true_0_vmap, cond_false_0_vmap, (" in code and "where" not in code


@pytest.mark.parametrize("f", [cheap, lambda t: costly(t, hop.tensor(np.eye(3, dtype=np.float32)))])
@pytest.mark.parametrize("signs", ["all_true", "all_false", "mixed", "empty"])
def test_vmap_cond_all_true_all_false_and_an_empty_batch(f, signs):
    base = np.abs(r(5, 3).numpy()) + 0.1
    x = {"all_true": base, "all_false": -base, "mixed": base * np.array([[1], [-1], [1], [1], [-1]]),
         "empty": base[:0]}[signs]
    got = hop.vmap(f)(hop.tensor(x.astype(np.float32)))
    if signs == "empty":
        assert got.numpy().shape == (0, 3)
    else:
        np.testing.assert_allclose(got.numpy(), loop(f, (0,), (hop.tensor(x.astype(np.float32)),)),
                                   rtol=1e-5, atol=1e-6)


def three_way(i, t):
    return hop.switch(i, [lambda a: a + 1, lambda a: a * 2, lambda a: a.sin()], t)


def three_way_costly(i, t):
    return hop.switch(i, [lambda a: a.cumsum(0), lambda a: a * a.sum(), lambda a: (a @ a) + a],
                      t)


@pytest.mark.parametrize("f,strategy", [(three_way, "select"), (three_way_costly, "compact")])
def test_vmap_switch_with_a_batched_index_clamps_like_switch(f, strategy):
    idx = hop.tensor(np.array([-3, 0, 1, 2, 7, 1, 0], np.int64))
    x = r(7, 3)
    check(f, (0, 0), idx, x)
    check(f, (0, None), idx, r(3))
    check(f, (0, 0), hop.tensor(np.array([5, -1, 2, 0, 1, 1, 9], np.int32)), x)
    code = code_of(f, idx, x)
    assert f"switch_branch_0_vmap_{strategy}" in code and "= map(" not in code


def test_vmap_switch_with_an_unbatched_index_is_one_switch():
    x = r(4, 3)
    for k in (-1, 0, 1, 2, 5):
        check(three_way_costly, (None, 0), hop.tensor(np.array(k, np.int64)), x)
    code = code_of(three_way, hop.tensor(np.array(1, np.int64)), x, in_axes=(None, 0))
    assert "switch_branch_0_vmap, switch_branch_1_vmap, switch_branch_2_vmap" in code


def test_vmap_cond_nested_in_map_vmap_and_grad():
    xs, w = r(4, 5, 3), r(3, 3)
    # a cond inside a map inside vmap, and vmap of vmap of a cond
    check(lambda a: hop.map(lambda row: costly(row, w), a), (0,), xs)
    check(lambda a: hop.vmap(cheap)(a), (0,), xs)
    check(lambda a: hop.vmap(lambda t: costly(t, w))(a), (0,), xs)
    # cond inside vmap inside grad: the sum of per-example grads
    x2 = r(6, 3)
    for f in (lambda v, t: hop.cond(t.sum() > 0, lambda: (t * v).sin(), lambda: t * v * v),
              lambda v, t: hop.cond(t.sum() > 0, lambda: (t @ v.reshape(3, 1)).tanh() * v,
                                    lambda: (t * v).cumsum(0))):
        v = r(3)
        g = hop.grad(lambda v, xs: hop.vmap(lambda t: f(v, t))(xs).sum())(v, x2)
        want = sum(hop.grad(lambda v, t: f(v, t).sum())(v, hop.tensor(x2.numpy()[i])).numpy()
                   for i in range(6))
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-5, atol=1e-6)


def test_steady_runs_of_a_compiled_compaction_allocate_nothing():
    # nonzero, take, cumsum and the branches' tensors have sizes known only
    # mid-run: the plan's frame keeps their storage between runs
    x, w = r(1000, 16), r(16, 16)
    g = hop.compile(hop.vmap(costly, in_axes=(0, None)))
    want = loop(costly, (0, None), (x, w))
    for _ in range(2):
        got = g(x, w)
    counts = []
    for _ in range(3):
        before = hop._C._alloc_count()
        got = None
        got = g(x, w)
        counts.append(hop._C._alloc_count() - before)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    assert counts == [0, 0, 0], counts


def ticking_cond(kernels, prefix):
    """(f, ticks): f(t) = cond(t.sum() > 0, t * 2, t - 1) whose branches
    each call a side-effecting foreign kernel that counts its calls in
    ticks["true"] / ticks["false"]."""
    ticks = {"true": 0, "false": 0}

    def ticker(name):
        @ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.POINTER(ctypes.c_float))
        def tick(k, x):
            ticks[name] += k
        return tick

    cbs = {name: ticker(name) for name in ticks}
    tick_true = kernels(f"void {prefix}_true(int64_t k, const float *x)", cbs["true"],
                        side_effects=True)
    tick_false = kernels(f"void {prefix}_false(int64_t k, const float *x)", cbs["false"],
                         side_effects=True)
    w = r(3)

    def f(t):
        def yes():
            tick_true(1, w)
            return t * 2
        def no():
            tick_false(1, w)
            return t - 1
        return hop.cond(t.sum() > 0, yes, no)
    return f, ticks


def test_vmap_cond_compaction_runs_each_branch_once(kernels):
    f, ticks = ticking_cond(kernels, "vtick")
    x = hop.tensor(np.array([[1, 1, 1], [-1, -1, -1], [2, 0, 0], [0, 0, -3], [1, 0, 0]],
                            np.float32))
    g = hop.compile(hop.vmap(f))
    for calls in (1, 2, 3):
        got = g(x)
        np.testing.assert_allclose(got.numpy(), np.where(x.numpy().sum(1, keepdims=True) > 0,
                                                         x.numpy() * 2, x.numpy() - 1))
        assert ticks == {"true": calls, "false": calls}  # once per branch, not once per example
    assert "cond_true_0_vmap_compact" in code_of(f, x)


def test_vmap_cond_with_a_batched_pred_and_branch_shapes_that_differ_needs_one_branch_for_all():
    # rows of different shapes stack only when every example takes one
    # branch (the loop over them could not stack them either); before the
    # fifty-first session every such vmap was an UnsupportedError
    f = lambda t: hop.cond(t.sum() > 0, lambda: t[:2], lambda: t[:1])
    pos = hop.tensor(np.abs(r(4, 3).numpy()) + 0.1)
    for x in (pos, -pos):
        check(f, (0,), x)
        assert hop.vmap(f)(x).shape == ((4, 2) if x is pos else (4, 1))
    with pytest.raises(hop.CheckError, match=r"^fail_if: the examples of a vmap take different "
                       r"branches of a cond whose branches give outputs of different shapes, "
                       r"rows a batch cannot stack \(nor could a loop over the examples\) "
                       r"\(check .* of kind VMAP_BRANCHES\)$"):
        hop.vmap(f)(hop.cat([pos[:2], -pos[2:]]))
    # a switch's index has no one value for the batch: still the error
    s = lambda t: hop.switch((t.sum() > 0).to(hop.int64), [lambda t: t[:2], lambda t: t[:1]], t)
    with pytest.raises(hop.UnsupportedError, match=r"^vmap: switch \(switch\) with a batched "
                       r"index: output 0 has a different shape in branch 1 \(switch_branch_1\) "
                       r"than in branch 0 \(switch_branch_0\)$"):
        hop.vmap(s)(pos)
    # an unbatched predicate keeps cond's merged (unbacked) size
    g = lambda t, p: hop.cond(p.sum() > 0, lambda: t[:2], lambda: t[:1])
    for p in (r(2), hop.tensor(-np.abs(r(2).numpy()))):
        check(g, (0, None), r(4, 3), p)


def test_vmap_other_hops_fall_back_to_a_map_loop():
    x = r(5, 3)
    f = lambda t: hop.associative_scan(lambda a, b: a + b, t)  # no batch slot
    code = code_of(f, x)
    assert "associative_scan_vmap_loop" in code and "map(associative_scan_vmap_loop" in code


def test_vmap_loops_match_a_loop():
    x = r(5, 3)
    check(lambda t: hop.fori_loop(0, 3, lambda i, c: c * 2 + t, t), (0,), x)
    check(lambda t: hop.while_loop(lambda c: c.sum() < 10, lambda c: c + 1, t), (0,), x)
    check(lambda t: hop.scan(lambda c, y: (c + y, c * y), t[0], t)[1], (0,), r(5, 4, 3))


def test_vmap_errors_name_what_is_wrong():
    f = lambda x, y: x + y
    with pytest.raises(ValueError, match=r"^hop\.vmap: batched arguments have different sizes: "
                                         r"argument 0 \(leaf 0\) has 3 and argument 1 \(leaf 0\) "
                                         r"has 4 along their in_axes$"):
        hop.vmap(f)(r(3, 2), r(4, 2))
    with pytest.raises(ValueError, match=r"^hop\.vmap: in_axes has 1 entries but the function "
                                         r"got 2 positional arguments$"):
        hop.vmap(f, in_axes=(0,))(r(3, 2), r(3, 2))
    with pytest.raises(ValueError, match=r"^hop\.vmap: in_axes 2 is out of range for argument 0 "
                                         r"\(leaf 0\) of shape \[3, 2\]$"):
        hop.vmap(f, in_axes=2)(r(3, 2), r(3, 2))
    with pytest.raises(ValueError, match=r"^hop\.vmap: output leaf 0 depends on a batched "
                                         r"argument but its out_axes is None$"):
        hop.vmap(f, out_axes=None)(r(3, 2), r(3, 2))
    with pytest.raises(ValueError, match=r"^hop\.vmap: no argument is batched \(every in_axes "
                                         r"is None\)$"):
        hop.vmap(f, in_axes=None)(r(3, 2), r(3, 2))
    with pytest.raises(TypeError, match=r"^hop\.vmap: in_axes must be an int, None or a "
                                        r"tuple/list/dict of them, got str$"):
        hop.vmap(f, in_axes="0")
    with pytest.raises(ValueError, match=r"^hop\.vmap: in_axes \(0, 0\) does not match "
                                         r"argument 0, a Tensor$"):
        hop.vmap(f, in_axes=((0, 0), 0))(r(3, 2), r(3, 2))


OPS = {
    "sin": lambda t: t.sin(),
    "add_row": lambda t: t + t[0],
    "sum_last": lambda t: t.sum(-1),
    "mean_keep": lambda t: t.mean(0, keepdim=True),
    "amax": lambda t: t.amax(),
    "argmax": lambda t: t.argmax(-1),
    "matmul_t": lambda t: t @ t.T,
    "reshape": lambda t: t.reshape(-1),
    "transpose": lambda t: t.transpose(0, -1),
    "select": lambda t: t[-1],
    "slice": lambda t: t[:, 1:],
    "expand": lambda t: t.unsqueeze(0).expand(2, -1, -1),
    "cat": lambda t: hop.cat([t, t * 2], -1),
    "stack": lambda t: hop.stack([t, t.cos()], 0),
    "cumsum": lambda t: t.cumsum(-1),
    "where": lambda t: hop.where(t > 0, t, 0.0),
}


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(sorted(OPS)), st.integers(-3, 2), st.integers(-3, 2), st.integers(1, 3))
def test_vmap_op_rules_hypothesis_over_axes(name, ax, ox, n):
    f = OPS[name]
    shape = [2, 3]
    x = r(*(shape[:ax % 3] + [n] + shape[ax % 3:]))
    out_rank = f(r(2, 3)).ndim + 1
    if not -out_rank <= ox < out_rank:
        ox = 0
    got = hop.vmap(f, in_axes=ax, out_axes=ox)(x)
    want = loop(f, (ax % 3,), (x,), ox % out_rank)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_vmap_take_of_a_batched_index_out_of_range_raises():
    with pytest.raises(hop.OutOfBoundsError):
        hop.vmap(lambda t, k: take(t, 0, k))(r(4, 5), hop.tensor(np.array([0, 1, 5, 2])))


def test_vmap_keeps_the_binding_of_an_unbacked_size_from_an_unbatched_value():
    w = hop.tensor(np.array([0., 1., 0., 2., 3.], dtype=np.float32))
    xs = hop.tensor(np.arange(20, dtype=np.float32).reshape(4, 5))
    f = lambda x: take(x, 0, hop._C._op("nonzero", w)[:, 0]) * 2
    np.testing.assert_allclose(hop.vmap(f)(xs).numpy(), loop(f, (0,), (xs,)))


def test_vmap_nonzero_of_a_batched_value_is_unsupported():
    with pytest.raises(hop.UnsupportedError,
                       match=r"^vmap: the op nonzero \(nonzero\) has no batch rule: nonzero of a "
                             r"batched value has a data-dependent size per example$"):
        hop.vmap(lambda t: hop._C._op("nonzero", t))(r(4, 3))


def test_vmap_of_jvp_and_jvp_of_vmap():
    x, w = r(4, 3), r(3)
    out, tan = hop.jvp(lambda w: hop.vmap(lambda a: (a * w).sin())(x), (w,), (hop.ones(3),))
    np.testing.assert_allclose(tan.numpy(), (x * w).cos().numpy() * x.numpy(), rtol=1e-5)
    f = hop.vmap(lambda a: hop.jvp(lambda v: (v * w).sin(), (a,), (hop.ones(3),))[1])
    np.testing.assert_allclose(f(x).numpy(), (x * w).cos().numpy() * w.numpy(), rtol=1e-5)


def test_vmap_of_map_and_switch_with_an_unbatched_index_match_a_loop():
    check(lambda a: hop.map(lambda row: row * 2 + row.sum(), a), (0,), r(2, 3, 4))
    check(lambda a: hop.switch(1, [lambda b: b * 2, lambda b: b - 1], a), (0,), r(4, 3))
    check(lambda a: hop.associative_scan(lambda p, q: p + q, a, 0), (0,), r(4, 5))


def test_vmap_traced_with_dynamic_sizes_runs_on_other_sizes():
    f = lambda t: hop.vmap(lambda a: a.sum() * a + a[0])(t)
    gm = hop.trace(f, r(4, 3), dynamic=True)
    assert 'vmap([0], [0], vmap_body_0_vmap, vmap_body_0, (t,))' in gm.code
    for shape in [(5, 2), (7, 3)]:
        x = r(*shape)
        np.testing.assert_allclose(gm(x).numpy(), loop(lambda a: a.sum() * a + a[0], (0,), (x,)),
                                   rtol=1e-5)


# ------------------------------------------------- map lowered as one batch

def test_map_of_a_batchable_body_runs_once_over_all_rows():
    """A compiled map whose body is small batchable ops runs as one fused
    kernel over the whole input (no row loop in the plan); a symbolic row
    count keeps both codes and picks by size at run time (rows whose values
    exceed 64 MiB run row by row); a body with a HOP stays a row loop. Every
    way gives NumPy's values."""
    rng = np.random.default_rng(3)
    W = rng.normal(size=16).astype(np.float32)
    B = rng.normal(size=16).astype(np.float32)
    w, b = hop.asarray(W), hop.asarray(B)
    body = lambda r: (r * w + b).relu()  # noqa: E731
    f = hop.compile(lambda x: hop.map(body, x))
    X = rng.normal(size=(1000, 16)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(f(hop.asarray(X)).tolist(), np.float32),
                                  np.maximum(X * W + B, 0))
    dump = f._entries[0].runner.plan.dump()
    assert "LoopInit" not in dump and "relu(add(mul(x, w), b))" in dump, dump
    batched = "map (map_body_0): one batched body over all rows (map_body_0_rows)"
    assert f._entries[0].runner.plan.notes == (batched,)
    assert f"\nplan: {batched}\n" in f.explain()
    # a new row count makes dim 0 symbolic: both codes, chosen per call
    for n in (2000, 300000):
        X = rng.normal(size=(n, 16)).astype(np.float32)
        np.testing.assert_array_equal(np.asarray(f(hop.asarray(X)).tolist(), np.float32),
                                      np.maximum(X * W + B, 0))
    dump = f._entries[-1].runner.plan.dump()
    assert "LoopInit" in dump and "If" in dump, dump
    assert f._entries[-1].runner.plan.notes == (
        "map (map_body_0): one batched body over all rows (map_body_0_rows) when the values "
        "of all rows fit in 64 MiB (and none has more than 65536 elements per row), else row "
        "by row; decided each run",)
    # a body with a HOP in it runs row by row
    g = hop.compile(lambda x: hop.map(lambda r: hop.cond(r.sum() > 0, lambda: r * w,
                                                          lambda: r - b), x))
    X = rng.normal(size=(50, 16)).astype(np.float32)
    want = np.where(X.sum(1, keepdims=True) > 0, X * W, X - B)
    np.testing.assert_allclose(np.asarray(g(hop.asarray(X)).tolist(), np.float32), want,
                               rtol=1e-6)
    assert "LoopInit" in g._entries[0].runner.plan.dump()
    assert "\nplan: map (map_body_0): row by row: the body calls cond (a HOP)\n" in g.explain()
    # rows too wide to batch say so
    h = hop.compile(lambda x: hop.map(lambda r: r.sin(), x))
    h(hop.zeros(2, 70000))
    assert h._entries[0].runner.plan.notes == (
        "map (map_body_0): row by row: a value has 70000 elements per row, more than 65536",)


def test_map_with_matmul_rows_is_one_gemm_and_matches_numpy():
    rng = np.random.default_rng(4)
    Wm = rng.normal(size=(16, 8))
    X = rng.normal(size=(500, 16))
    wm = hop.asarray(Wm)
    f = hop.compile(lambda x: hop.map(lambda r: (r @ wm).tanh().sum(), x))
    np.testing.assert_allclose(np.asarray(f(hop.asarray(X)).tolist()),
                               np.tanh(X @ Wm).sum(1), rtol=1e-12, atol=1e-12)
    assert "LoopInit" not in f._entries[0].runner.plan.dump()


# ---------------------------------------------------------- loop HOP rules

def leaves(o):
    if isinstance(o, dict):
        return [x for k in sorted(o) for x in leaves(o[k])]
    if isinstance(o, (tuple, list)):
        return [x for v in o for x in leaves(v)]
    return [o]


def loop_tree(f, in_axes, args):
    """f over the examples one at a time; each output leaf stacked at 0."""
    n = next(a.shape[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = []
    for b in range(n):
        ex = [a if ax is None else hop.tensor(np.take(a.numpy(), b, axis=ax))
              for a, ax in zip(args, in_axes)]
        o = f(*ex)
        outs.append([t.numpy() for t in leaves(o)])
    return [np.stack([o[k] for o in outs]) for k in range(len(outs[0]))]


def check_tree(f, in_axes, *args, rtol=1e-5):
    got = leaves(hop.vmap(f, in_axes=in_axes)(*args))
    want = loop_tree(f, in_axes, args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=rtol, atol=1e-5)


def traced(f, in_axes, *args):
    return hop.trace(lambda *a: hop.vmap(f, in_axes=in_axes)(*a), *args).code


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("reverse", [False, True])
def test_vmap_scan_batches_the_carry_and_the_xs(dim, reverse):
    xs = r(4, 3, 5)                  # per example [3, 5]: scan dim 0 or 1 (-1)
    w = r(5) if dim == 0 else r(3)

    def f(t):
        init = t.sum(dim) * 0.0      # batched on entry (depends on t)
        return hop.scan(lambda c, x: (c * 0.5 + x, (c * x).sin()), init, t,
                        dim=dim, reverse=reverse)
    check_tree(f, (0,), xs)
    check_tree(f, (1,), r(3, 4, 5))
    # unbatched init, batched xs: the carry becomes batched (a fixed point)
    g = lambda t: hop.scan(lambda c, x: (c + x * w, c * 2), w * 0.0, t, dim=dim,
                           reverse=reverse)
    check_tree(g, (0,), xs)


def test_vmap_scan_carries_batched_unbatched_and_becoming_batched():
    xs, u = r(6, 4), r(4)

    def f(t, v):   # t: batched [4]; v: unbatched [4]
        def step(c, x):
            a, b, k = c
            return (a + x * t, b * 0.9 + x, k + 1.0 * b.sum()), a * b
        # a: unbatched init, batched through t; b and k: unbatched throughout
        return hop.scan(step, (v, v * 2, v.sum() * 0), xs)
    check_tree(lambda t: f(t, u), (0,), r(5, 4))
    code = traced(lambda t: f(t, u), (0,), r(5, 4))
    assert "_vmap_loop" not in code and "scan(False, 0" in code
    assert 'scan: "(f32[5, 4], f32[4], f32[], f32[6, 5, 4])" = scan(' in code  # b, k unbatched

    def g(t):      # c2 becomes batched only after c1 does (two rounds of the fixed point)
        def step(c, x):
            c1, c2 = c
            return (c1 + t * x, c2 + c1), c2
        return hop.scan(step, (u * 0, u * 0), xs)
    check_tree(g, (0,), r(3, 4))


def test_vmap_scan_with_only_a_batched_closure_and_no_xs():
    w = r(3)
    f = lambda t: hop.scan(lambda c, _: (c * t + w, c.sum()), w, None, length=4)
    check_tree(f, (0,), r(5, 3))
    check_tree(lambda t: hop.scan(lambda c, x: (c + x * t, c), t * 0, r(4, 3))[0], (0,), r(2, 3))


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0)])
def test_vmap_fori_loop_batches_its_carry(axes):
    a = r(4, 3) if axes[0] == 0 else r(3)
    b = r(4, 3) if axes[1] == 0 else r(3)

    def f(x, y):
        return hop.fori_loop(1, 4, lambda i, c: (c[0] * 0.5 + y * i, c[1] + c[0].sum()),
                             (x, x.sum() * 0))
    check_tree(f, axes, a, b)
    code = traced(f, axes, a, b)
    assert "_vmap_loop" not in code and "fori_loop(1, 4" in code


def ints(*v):
    return hop.tensor(np.array(v, np.int64))


def np_fori(lo, hi, body, val):
    """The reference: a Python loop over range(lo, hi) in NumPy."""
    for i in range(int(lo), int(hi)):
        val = body(i, val)
    return val


FORI_X = np.arange(10, dtype=np.float32).reshape(5, 2) / 4


@pytest.mark.parametrize("which", ["upper", "lower", "both"])
def test_vmap_fori_loop_with_batched_tensor_bounds_matches_a_loop_over_examples(which):
    # lanes: zero trips (lo == hi, and hi < lo), one trip, several
    lo_v, hi_v = np.array([2, 3, 0, 1, 0]), np.array([2, 1, 1, 4, 5])
    lo = ints(*lo_v) if which != "upper" else ints(1)
    hi = ints(*hi_v) if which != "lower" else ints(4)
    axes = (0, 0 if which != "upper" else None, 0 if which != "lower" else None)
    f = lambda x, a, b: hop.fori_loop(a, b, lambda i, c: c * 0.5 + i, x)
    got = hop.vmap(f, in_axes=axes)(hop.tensor(FORI_X), lo, hi).numpy()
    want = np.stack([np_fori(lo_v[b] if which != "upper" else 1,
                             hi_v[b] if which != "lower" else 4,
                             lambda i, c: c * np.float32(0.5) + i, FORI_X[b])
                     for b in range(5)])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    check(f, axes, hop.tensor(FORI_X), lo, hi)


def test_vmap_fori_loop_where_every_lane_has_zero_trips_returns_the_inits():
    f = lambda x, n: hop.fori_loop(n, 3, lambda i, c: c + 1, x)
    got = hop.vmap(f)(hop.tensor(FORI_X), ints(3, 4, 7, 3, 9))
    np.testing.assert_array_equal(got.numpy(), FORI_X)


@pytest.mark.parametrize("which", ["upper", "lower", "both"])
def test_vmap_fori_loop_with_batched_bounds_over_no_examples_returns_empty_carries(which):
    # a batch of size 0: no lane runs, so the loop runs no iteration (there
    # is no min or max of the bounds to take)
    lo = ints(*[]) if which != "upper" else ints(1)
    hi = ints(*[]) if which != "lower" else ints(4)
    axes = (0, 0 if which != "upper" else None, 0 if which != "lower" else None)
    f = lambda x, a, b: hop.fori_loop(a, b, lambda i, c: c * 0.5 + i, x)
    x = hop.zeros(0, 2)
    for run in (hop.vmap(f, in_axes=axes), hop.compile(hop.vmap(f, in_axes=axes))):
        got = run(x, lo, hi)
        assert got.shape == (0, 2) and got.dtype.name == "float32"


def test_vmap_fori_loop_with_batched_bounds_reads_i_and_closures():
    w = np.array([1.5, -0.5], np.float32)      # unbatched closure
    xs = np.arange(15, dtype=np.float32).reshape(5, 3) / 7  # batched closure (a row each)
    n = np.array([0, 3, 1, 2, 3])

    def f(x, y, k):
        # i as an index into a batched closure, in arithmetic and in a shape
        return hop.fori_loop(0, k, lambda i, c: (c * hop.tensor(w) + y[i]
                                                 + hop.ones(i + 1).sum() * 0.1), x)
    got = hop.vmap(f)(hop.tensor(FORI_X), hop.tensor(xs), ints(*n)).numpy()
    want = np.stack([np_fori(0, n[b], lambda i, c: c * w + xs[b][i] + np.float32((i + 1) * 0.1),
                             FORI_X[b]) for b in range(5)])
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_vmap_fori_loop_with_batched_bounds_and_a_pytree_carry():
    n = np.array([1, 0, 2, 3, 0])
    f = lambda x, k: hop.fori_loop(0, k, lambda i, c: (c[0] + c[1], c[1] * 2), (x, x.sum()))
    check_tree(f, (0, 0), hop.tensor(FORI_X), ints(*n))


def test_vmap_of_vmap_fori_loop_with_bounds_batched_by_both_matches_a_loop():
    x = np.arange(24, dtype=np.float32).reshape(3, 4, 2) / 8
    lo = np.array([[0, 1, 2, 0], [3, 0, 1, 1], [2, 2, 2, 2]])
    hi = np.array([[3, 1, 4, 0], [5, 2, 0, 3], [1, 2, 3, 6]])
    f = lambda x, a, b: hop.fori_loop(a, b, lambda i, c: c * 0.5 + i, x)
    got = hop.vmap(hop.vmap(f))(hop.tensor(x), hop.tensor(lo), hop.tensor(hi)).numpy()
    want = np.array([[np_fori(lo[p, q], hi[p, q], lambda i, c: c * np.float32(0.5) + i, x[p, q])
                      for q in range(4)] for p in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_vmap_fori_loop_with_batched_bounds_traces_one_masked_loop():
    def g(x, lo, hi):
        return hop.vmap(lambda x, a, b: hop.fori_loop(a, b, lambda i, c: c * 2 + i, x))(x, lo, hi)
    code = hop.trace(g, hop.tensor(FORI_X[:3]), ints(0, 2, 1), ints(0, 1, 3)).code
    assert code == """\
def forward(x: "f32[3, 2]", lo: "i64[3]", hi: "i64[3]"):
    def vmap_body_0_vmap(x: "f32[3, 2]", lo: "i64[3]", hi: "i64[3]"):
        def fori_loop_body_0_vmap(i: "Sym(u2)", x: "f32[3, 2]", lower: "i64[3]", upper: "i64[3]"):
            le: "bool[3]" = le(lower, i)
            gt: "bool[3]" = gt(upper, i)
            logical_and: "bool[3]" = logical_and(le, gt)
            reshape: "bool[3, 1]" = reshape(logical_and, [3, 1])
            mask_gradient: "f32[3, 2]" = mask_gradient(x, reshape)
            mul: "f32[3, 2]" = mul(mask_gradient, 2)
            add: "f32[3, 2]" = add(mul, i)
            where: "f32[3, 2]" = where(reshape, add, x)
            return (where,)

        item: "i64[3]" = reshape(lo, [3])
        item_1: "i64[3]" = reshape(hi, [3])
        amin: "i64[]" = amin(item, [0], False)
        item_2: "Sym(u3)" = item(amin)
        amax: "i64[]" = amax(item_1, [0], False)
        item_3: "Sym(u4)" = item(amax)
        fori_loop: "f32[3, 2]" = fori_loop(item_2, item_3, fori_loop_body_0_vmap, (x,), (item, item_1))
        getitem: "f32[3, 2]" = fori_loop[0]
        return (getitem,)

    def vmap_body_0(x: "f32[2]", lo: "i64[]", hi: "i64[]"):
        def fori_loop_body_0(i: "Sym(u2)", x: "f32[2]"):
            mul: "f32[2]" = mul(x, 2)
            add: "f32[2]" = add(mul, i)
            return (add,)

        item: "Sym(u0)" = item(lo)
        item_1: "Sym(u1)" = item(hi)
        fori_loop: "f32[2]" = fori_loop(item, item_1, fori_loop_body_0, (x,), ())
        getitem: "f32[2]" = fori_loop[0]
        return (getitem,)

    vmap: "f32[3, 2]" = vmap([0, 0, 0], [0], vmap_body_0_vmap, vmap_body_0, (x, lo, hi))
    getitem: "f32[3, 2]" = vmap[0]
    return (getitem,)
"""


def test_vmap_fori_loop_with_a_batched_upper_bound_masks_only_the_upper_side():
    f = lambda x, b: hop.fori_loop(1, b, lambda i, c: c + i, x)
    code = traced(f, (0, 0), hop.tensor(FORI_X[:3]), ints(0, 2, 4))
    assert "fori_loop(1, item_1, fori_loop_body_0_vmap, (a_0,), (item,))" in code
    assert "gt(upper, i)" in code and "le(" not in code and "logical_and" not in code


def test_compiled_vmap_fori_loop_does_not_recompile_when_the_bounds_change():
    f = hop.compile(hop.vmap(lambda x, a, b: hop.fori_loop(a, b, lambda i, c: c * 0.5 + i, x)))
    x = hop.tensor(FORI_X)
    for lo_v, hi_v in [([0, 1, 2, 0, 0], [3, 3, 3, 0, 1]), ([4, 0, 0, 1, 2], [1, 6, 2, 2, 9]),
                       ([5, 5, 5, 5, 5], [0, 1, 2, 3, 4])]:
        got = f(x, ints(*lo_v), ints(*hi_v)).numpy()
        want = np.stack([np_fori(lo_v[b], hi_v[b], lambda i, c: c * np.float32(0.5) + i,
                                 FORI_X[b]) for b in range(5)])
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert f.explain().startswith("hop.compile(<lambda>): 1 graph(s), 0 recompile(s)")


def test_grad_of_vmap_fori_loop_with_batched_bounds_matches_per_example_grads():
    w = hop.tensor(np.array([0.5, -1.0], np.float32))
    loss = lambda x, n: hop.fori_loop(0, n, lambda i, c: (c * w).sin() + c, x).sum()
    n = ints(2, 0, 3, 1, 0)
    got = hop.grad(lambda x, n: hop.vmap(loss)(x, n).sum())(hop.tensor(FORI_X), n).numpy()
    want = np.stack([hop.grad(loss)(hop.tensor(FORI_X[b]), ints(int(n.numpy()[b]))).numpy()
                     for b in range(5)])
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_vmap_of_grad_through_fori_loop_with_a_batched_bound_runs_as_a_loop_over_examples():
    # grad's backward scans arange(0, Max(u0, 0)) steps, a length per example:
    # the bound's item is used beyond the loop, so the vjp call cannot be
    # batched and falls back to the loop over the batch
    w = hop.tensor(np.array([0.5, -1.0], np.float32))
    loss = lambda x, n: hop.fori_loop(0, n, lambda i, c: (c * w).sin() + c, x).sum()
    n = ints(2, 0, 3, 1, 0)
    vg = hop.vmap(hop.grad(loss))
    got = vg(hop.tensor(FORI_X), n).numpy()
    want = np.stack([hop.grad(loss)(hop.tensor(FORI_X[b]), ints(int(n.numpy()[b]))).numpy()
                     for b in range(5)])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    code = hop.trace(lambda x, n: vg(x, n), hop.tensor(FORI_X), n).code
    assert 'map: "(f32[5], f32[5, 2])" = map(vjp_vmap_loop, (x, n), (w,))' in code


def test_vmap_fori_loop_with_a_batched_bound_and_a_size_in_its_carry_is_per_example():
    # a size carried (dynamic=True: x.shape[0] is a symbol) is a 0-d int64
    # tensor in the body, as eager's int is, so it is masked per lane like any
    # carry (it was the SymInt of the shape, which vmap refused to mask)
    f = lambda x, n: hop.fori_loop(0, n, lambda i, c: (c[0] + c[1], c[1]), (x, x.shape[0]))[0]
    x, n = hop.tensor(np.ones((5, 3), np.float32)), ints(1, 2, 0, 1, 3)
    want = np.stack([f(x[k], n[k]).numpy() for k in range(5)])
    np.testing.assert_array_equal(want[:, 0], [4.0, 7.0, 1.0, 4.0, 10.0])
    gm = hop.trace(lambda x, n: hop.vmap(f)(x, n), x, n, dynamic=True)
    for got in (gm(x, n), hop.vmap(f)(x, n)):
        np.testing.assert_array_equal(got.numpy(), want)


def test_vmap_fori_loop_with_a_batched_bound_and_a_symint_carry_below_the_api_is_an_error():
    # hop.fori_loop carries a size as a tensor; a graph built through the HOP
    # call itself (as C builds one) may carry the SymInt, which cannot be
    # masked per lane
    from hop import _hops as H

    def f(x, n):
        carry = (x, x.shape[0])
        shape = H._as_result(carry, "carry")
        return H._apply("fori_loop", [0, n], [carry],
                        [H._Body(lambda i, c: (c[0] + c[1], c[1]), "body_fun",
                                 lambda s: ((s[0],), {}), shape)], made=1, result=shape)[0]
    with pytest.raises(hop.UnsupportedError,
                       match=r"^vmap: fori_loop \(fori_loop\) with a batched bound carries a "
                             r"SymInt \(carry 1\), which cannot differ per example$"):
        hop.trace(lambda x, n: hop.vmap(f)(x, n), hop.tensor(np.ones((5, 3), np.float32)),
                  ints(1, 2, 0, 1, 3), dynamic=True)


def test_vmap_item_of_a_batched_bound_also_a_scalar_operand_works_and_in_a_size_is_the_error():
    def f(x, n):
        k = n.item()
        return hop.fori_loop(0, n, lambda i, c: c + 1, x) * k
    check(f, (0, 0), hop.tensor(FORI_X), ints(1, 2, 0, 1, 3))

    def g(x, n):  # in an int expression first: computed per example (issue #26)
        k = n.item()
        return hop.fori_loop(0, n, lambda i, c: c + 1, x) * (k + 1)
    check(g, (0, 0), hop.tensor(FORI_X), ints(1, 2, 0, 1, 3))

    def h(x, n):
        k = n.item()
        return hop.fori_loop(0, n, lambda i, c: c + 1, x) + hop.zeros(k + 1).sum()
    with pytest.raises(hop.UnsupportedError, match=r"item \(item\) has no batch rule: .* zeros "
                                                   r"uses its int"):
        hop.vmap(h)(hop.tensor(FORI_X), ints(1, 2, 0, 1, 3))


def test_vmap_while_loop_with_per_example_trip_counts_masks_finished_lanes():
    x = hop.tensor(np.array([[5.0, 1.0], [20.0, 0.0], [0.5, 0.5], [11.0, -2.0]], np.float32))
    # lane 1 (sum 20) runs zero trips; the others run 2, 4 and 0 or more
    f = lambda t: hop.while_loop(lambda c, k: c.sum() < 10, lambda c, k: (c * 1.5 + 1, k + 1),
                                 (t, hop.tensor(np.array(0, np.int64))))
    got = hop.vmap(f)(x)
    want = loop_tree(f, (0,), (x,))
    np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-6)
    np.testing.assert_array_equal(got[1].numpy(), want[1])
    assert want[1][1] == 0 and len(set(want[1].tolist())) > 2
    code = traced(f, (0,), x)
    assert "_vmap_loop" not in code and "any(" in code and "where(" in code
    # compiled, twice (the plan holds no per-call state)
    cf = hop.compile(lambda t: hop.vmap(f)(t))
    for _ in range(2):
        np.testing.assert_array_equal(cf(x)[1].numpy(), want[1])


def test_vmap_while_loop_with_an_unbatched_predicate_batches_the_body():
    w = r(3)
    f = lambda t: hop.while_loop(lambda i, c: i < 5, lambda i, c: (i + 1, c * 0.5 + t * w),
                                 (hop.tensor(np.array(0, np.int64)), w))
    check_tree(f, (0,), r(4, 3))
    code = traced(f, (0,), r(4, 3))
    assert "_vmap_loop" not in code and "where(" not in code and "any(" not in code


def test_vmap_while_loop_pytrees_and_closures():
    c0 = r(3)

    def f(t, s):
        def body(st):
            return {"x": st["x"] + t, "n": st["n"] + 1, "c": st["c"] * 0.5 + c0}
        return hop.while_loop(lambda st: (st["x"].sum() < s) & (st["n"] < 50), body,
                              {"x": t * 0, "n": hop.tensor(np.array(0, np.int64)), "c": c0})
    t = hop.tensor(np.abs(r(4, 3).numpy()) + 0.1)
    s = hop.tensor(np.array([1.0, 5.0, -1.0, 3.0], np.float32))
    got = hop.vmap(f)(t, s)
    for k in ("x", "n", "c"):
        want = np.stack([f(hop.tensor(t.numpy()[b]), hop.tensor(s.numpy()[b]))[k].numpy()
                         for b in range(4)])
        np.testing.assert_allclose(got[k].numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0), (1, 0)])
def test_vmap_map_maps_over_the_inner_dim(axes):
    a = {0: r(2, 5, 3), 1: r(5, 2, 3), None: r(5, 3)}[axes[0]]
    b = r(2, 3) if axes[1] == 0 else r(3)
    f = lambda x, y: hop.map(lambda row, v: ((row * v).sum(), row + v), x, y)
    check_tree(f, axes, a, b)
    code = traced(f, axes, a, b)
    assert "_vmap_loop" not in code and "map(map_body_0_vmap" in code


def test_vmap_of_a_scan_inside_a_cond():
    xs = r(3, 4, 2)

    def f(t):
        return hop.cond(t.sum() > 0,
                        lambda: hop.scan(lambda c, x: (c + x, c * x), t[0], t)[1],
                        lambda: t * 2)
    check_tree(f, (0,), xs)


def test_grad_of_vmap_of_scan_and_vmap_of_grad_of_scan():
    xs, w = r(5, 4, 3), r(3)

    def per(w, x):
        return hop.scan(lambda c, y: ((c * w + y).tanh(), c.sum()), w * 0, x)[1].sum()
    g = hop.grad(lambda w, xs: hop.vmap(lambda x: per(w, x))(xs).sum())(w, xs)
    want = sum(hop.grad(per)(w, hop.tensor(xs.numpy()[i])).numpy() for i in range(5))
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-4, atol=1e-5)
    pe = hop.vmap(hop.grad(per), in_axes=(None, 0))(w, xs)
    want = np.stack([hop.grad(per)(w, hop.tensor(xs.numpy()[i])).numpy() for i in range(5)])
    np.testing.assert_allclose(pe.numpy(), want, rtol=1e-4, atol=1e-5)
    code = hop.trace(lambda w, xs: hop.vmap(hop.grad(per), in_axes=(None, 0))(w, xs), w, xs).code
    assert "_vmap_loop" not in code


def test_nested_vmap_of_loops_matches_a_double_loop():
    x = r(2, 3, 4)
    f = lambda t: hop.scan(lambda c, y: (c + y, c.sum()), t[0] * 0, t)[1]
    got = hop.vmap(hop.vmap(f))(hop.tensor(np.abs(x.numpy())).reshape(2, 3, 2, 2))
    xn = np.abs(x.numpy()).reshape(2, 3, 2, 2)
    want = np.stack([np.stack([f(hop.tensor(xn[i, j])).numpy() for j in range(3)])
                     for i in range(2)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    g = lambda t: hop.while_loop(lambda c: c.sum() < 4, lambda c: c + 1, t)
    got = hop.vmap(hop.vmap(g))(x)
    want = np.stack([np.stack([g(hop.tensor(x.numpy()[i, j])).numpy() for j in range(3)])
                     for i in range(2)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_compile_explain_names_the_strategy_of_each_batched_cond():
    w = r(3, 3)
    f = hop.compile(lambda xs, i: hop.vmap(lambda t, k: cheap(t) + costly(t, w) +
                                           three_way(k, t))(xs, i))
    f(r(4, 3), hop.tensor(np.array([0, 2, 1, 5], np.int64)))
    lines = [line for line in f.explain().splitlines() if line.startswith("vmap: ")]
    assert lines == [
        "vmap: cond (cond_true_0, cond_false_0): select: every branch is cheap and pure (at "
        "most 16 elementwise ops in all, no HOP or foreign call), so all run on the whole batch "
        "and where picks",
        "vmap: cond (cond_true_1, cond_false_1): compaction: a branch is not cheap or not pure "
        "(docs/VMAP.md), so the examples are partitioned and each branch runs once on its own",
        "vmap: switch (switch_branch_0, switch_branch_1, switch_branch_2): select: every branch "
        "is cheap and pure (at most 16 elementwise ops in all, no HOP or foreign call), so all "
        "run on the whole batch and where picks"]


def test_compile_explain_notes_a_call_that_runs_as_a_loop_over_the_batch():
    f = hop.compile(hop.vmap(lambda t: hop.associative_scan(lambda a, b: a + b, t) * 2))
    x = r(4, 3)
    np.testing.assert_allclose(f(x).numpy(), np.cumsum(x.numpy(), axis=1) * 2, rtol=1e-5)
    lines = [line for line in f.explain().splitlines() if line.startswith("vmap: ")]
    assert lines == ["vmap: associative_scan has no batch rule: it runs as a loop over the batch "
                     "(a map whose body associative_scan_vmap_loop makes the call on one "
                     "example)"]


def double_loop(f, in_axes_outer, in_axes_inner, args):
    """f over examples [i, j] one at a time: the outer vmap's axes, then the
    inner's, each 0 or None."""
    n1 = next(a.shape[0] for a, ax in zip(args, in_axes_outer) if ax is not None)
    outs = []
    for i in range(n1):
        ex = [a if ax is None else hop.tensor(a.numpy()[i]) for a, ax in zip(args, in_axes_outer)]
        n2 = next(a.shape[0] for a, ax in zip(ex, in_axes_inner) if ax is not None)
        row = []
        for j in range(n2):
            e2 = [a if ax is None else hop.tensor(a.numpy()[j]) for a, ax in zip(ex, in_axes_inner)]
            row.append(f(*e2).numpy())
        outs.append(np.stack(row))
    return np.stack(outs)


def costly_switch(i, t, w):
    return hop.switch(i, [lambda: t.cumsum(0), lambda: (t @ w).tanh(), lambda: t * t.sum()])


@pytest.mark.parametrize("outer,inner", [((0, 0), (0, 0)), ((0, None), (0, 0)),
                                         ((None, 0), (0, 0)), ((0, 0), (0, None)),
                                         ((0, 0), (None, 0))])
def test_nested_vmap_of_a_compacted_cond_is_one_compaction_not_a_loop(outer, inner):
    w = r(3, 3)
    f = lambda t, u: costly(t + u, w)
    # an argument batched at both levels is [4, 5, 3]; at one level [4, 3] or [5, 3]
    def shape(k):
        dims = [n for n, ax in ((4, outer[k]), (5, inner[k])) if ax is not None]
        return r(*dims, 3) if k == 0 else hop.tensor(np.random.default_rng(7).standard_normal(
            dims + [3]).astype(np.float32))
    t, u = shape(0), shape(1)
    g = hop.vmap(hop.vmap(f, in_axes=inner), in_axes=outer)
    want = double_loop(f, outer, inner, (t, u))
    np.testing.assert_allclose(g(t, u).numpy(), want, rtol=1e-5, atol=1e-5)
    code = hop.trace(g, t, u).code
    assert "_vmap_loop" not in code and "= map(" not in code
    import re
    assert re.search(r'cond_true_0_vmap_compact\(\w+: "f32\[u', code)
    assert re.search(r'vmap_body_1_vmap_composed\(\w+: "f32\[20, 3\]"', code)  # one batch of 4 x 5


def test_nested_vmap_of_a_compacted_switch_matches_a_double_loop():
    w = r(3, 3)
    idx = hop.tensor(np.array([[-1, 0, 1, 2, 7], [2, 2, 0, 1, 1], [0, 0, 0, 0, 0]], np.int64))
    x = r(3, 5, 3)
    g = hop.vmap(hop.vmap(lambda i, t: costly_switch(i, t, w)))
    want = double_loop(lambda i, t: costly_switch(i, t, w), (0, 0), (0, 0), (idx, x))
    np.testing.assert_allclose(g(idx, x).numpy(), want, rtol=1e-5, atol=1e-5)
    code = hop.trace(g, idx, x).code
    assert "switch_branch_0_vmap_compact" in code and "_vmap_loop" not in code


def test_nested_vmap_closes_over_outer_batched_values():
    w = r(3, 3)
    xs, ys = r(4, 3), r(4, 6, 3)
    # the inner function closes over a (a row of the outer batch) and an
    # inner-unbatched output depends on the outer batch only
    def outer(a, b):
        return hop.vmap(lambda t: (costly(t * a, w), (a * 2).sin()), out_axes=(0, None))(b)
    g = hop.vmap(outer)
    got0, got1 = g(xs, ys)
    for i in range(4):
        for j in range(6):
            np.testing.assert_allclose(
                got0.numpy()[i, j], costly(hop.tensor(ys.numpy()[i, j] * xs.numpy()[i]), w).numpy(),
                rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(got1.numpy()[i], (hop.tensor(xs.numpy()[i]) * 2).sin().numpy())
    assert "_vmap_loop" not in hop.trace(g, xs, ys).code


def test_nested_vmap_compaction_runs_each_branch_once_for_the_whole_batch(kernels):
    f, ticks = ticking_cond(kernels, "ntick")
    x = r(6, 7, 3)
    g = hop.compile(hop.vmap(hop.vmap(f)))
    xn = x.numpy()
    for calls in (1, 2):
        got = g(x)
        np.testing.assert_allclose(got.numpy(), np.where(xn.sum(2, keepdims=True) > 0, xn * 2,
                                                         xn - 1), rtol=1e-6)
        # once per branch for all 6 x 7 examples: not once per outer example
        assert ticks == {"true": calls, "false": calls}
    notes = g.explain()
    assert notes.count("vmap: cond (cond_true_0, cond_false_0): compaction") == 1
    assert "as a loop over the batch" not in notes
    assert ("vmap: vmap_body_1 is nested in an outer vmap: it runs once over the examples of both "
            "batches flattened into one (vmap_body_1_vmap_composed), not as a loop") in notes


def test_nested_vmap_keeps_grad_and_jvp_through_vmap_nodes():
    w = r(3, 3)
    xs = r(3, 4, 3)
    f = lambda w, xs: hop.vmap(hop.vmap(lambda t: costly(t, w)))(xs).sum()
    g = hop.grad(f)(w, xs)
    want = sum(hop.grad(lambda w, t: costly(t, w).sum())(w, hop.tensor(xs.numpy()[i, j])).numpy()
               for i in range(3) for j in range(4))
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-4, atol=1e-5)


def test_triple_nested_vmap_of_a_compacted_cond_composes_again():
    w = r(3, 3)
    x = r(2, 3, 4, 3)
    g = hop.vmap(hop.vmap(hop.vmap(lambda t: costly(t, w))))
    want = np.stack([np.stack([np.stack([costly(hop.tensor(x.numpy()[i, j, k]), w).numpy()
                                         for k in range(4)]) for j in range(3)])
                     for i in range(2)])
    np.testing.assert_allclose(g(x).numpy(), want, rtol=1e-5, atol=1e-5)
    code = hop.trace(g, x).code
    assert "_vmap_loop" not in code and 'vmap_body_2_vmap_composed(t: "f32[24, 3]"' in code


# ------------------------------------------- HOP rules under hypothesis

HW = r(3, 3)


def _while(x, y):
    lim = (x > 0).sum()  # a trip count per example when x is batched
    return hop.while_loop(lambda c, k: k < lim, lambda c, k: (c * 0.5 + y, k + 1),
                          (x, hop.tensor(0)))[0]


def _scan(x, y):
    c, ys = hop.scan(lambda c, row: (c * 0.5 + row, (c * row).sum()), y,
                     x.unsqueeze(1) * y)
    return c + ys


# Each takes one example x: f32[3], y: f32[3] and returns f32[3] or f32[3, 3].
HOPS = {
    "cond_select": lambda x, y: hop.cond(x.sum() > 0, lambda: x * y, lambda: x - y),
    "cond_compact": lambda x, y: hop.cond(x.sum() > 0, lambda: (x @ HW).tanh() * y,
                                          lambda: x.cumsum(0) - y),
    "switch": lambda x, y: hop.switch((x.sum() > 0).to(hop.int64) + (y.sum() > 0).to(hop.int64),
                                      [lambda: x * y, lambda: x.cumsum(0), lambda: (x @ HW).tanh()]),
    "scan": _scan,
    "fori": lambda x, y: hop.fori_loop(0, 3, lambda i, c: c * 0.9 + x[i] * y, x),
    "fori_bound": lambda x, y: hop.fori_loop(0, (x > 0).sum(), lambda i, c: c * 0.5 + y, x),
    "while": _while,
    "map": lambda x, y: hop.map(lambda row: (row * y).sin() + x.sum(), x.unsqueeze(0) * y.unsqueeze(1)),
    "wrap": lambda x, y: hop.wrap(lambda a, b: (a * b).exp(), x, y),
    "assoc_scan": lambda x, y: hop.associative_scan(lambda a, b: a + b, x * y),
    "nested": lambda x, y: hop.vmap(lambda a: hop.cond(a > 0, lambda: a * y.sum(),
                                                       lambda: (a - 1).sin()))(x),
}


@settings(max_examples=examples(int(os.environ.get("HOP_VMAP_EXAMPLES", "80"))), deadline=None)
@given(name=st.sampled_from(sorted(HOPS)), ax=st.integers(-2, 1),
       by=st.one_of(st.none(), st.integers(-2, 1)), ox=st.integers(-2, 1), n=st.integers(1, 4),
       mode=st.sampled_from(["eager", "compile", "dynamic"]), seed=st.integers(0, 3))
def test_vmap_hop_rules_hypothesis_over_axes_and_modes(name, ax, by, ox, n, mode, seed):
    """Every HOP rule (and the loop fallback, and a nested vmap) against a
    Python loop over the examples: in_axes on either argument (None for y),
    out_axes, the batch size; eagerly, compiled, and compiled with dynamic
    sizes."""
    f = HOPS[name]
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((n, 3)).astype(np.float32)
    ys = rng.standard_normal((n, 3)).astype(np.float32)
    x = hop.tensor(np.moveaxis(xs, 0, ax % 2))
    y = hop.tensor(ys[0]) if by is None else hop.tensor(np.moveaxis(ys, 0, by % 2))
    out_rank = f(hop.tensor(xs[0]), hop.tensor(ys[0])).ndim + 1
    ox = ox if -out_rank <= ox < out_rank else 0
    v = hop.vmap(f, in_axes=(ax, by), out_axes=ox)
    run = {"eager": v, "compile": hop.compile(v), "dynamic": hop.compile(v, dynamic=True)}[mode]
    got = run(x, y)
    want = loop(f, (ax % 2, None if by is None else by % 2), (x, y), ox % out_rank)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_compiled_dynamic_vmap_of_a_cond_whose_branch_sizes_are_equal_only_by_value():
    # branch 0 gives f32[3] (x @ W), branch 1 f32[s1] (x.cumsum(0)): with
    # dynamic sizes they are equal by the hint only, so compaction guards
    # s1 == 3 (hypothesis found that it refused them before)
    W = hop.tensor(np.eye(3, dtype=np.float32))
    f = lambda x, y: hop.cond(x.sum() > 0, lambda: (x @ W).tanh() * y, lambda: x.cumsum(0) - y)
    v = hop.compile(hop.vmap(f, in_axes=(0, None)), dynamic=True)
    y = hop.ones(3)
    for rows in ([[1, 2, 3], [-1, -2, -3]], [[1, 2, 3], [-1, -2, -3], [4, 5, 6]]):
        x = hop.tensor(np.array(rows, np.float32))
        np.testing.assert_allclose(v(x, y).numpy(), loop(f, (0, None), (x, y)), rtol=1e-6)
    assert v.recompiles == 0 and v._entries[0].gm.guards == ["s1 == 3"]
