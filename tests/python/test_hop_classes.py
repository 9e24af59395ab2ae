"""Every registered HOP is callable from Python: hop.ops.<name>, with the
built-ins and HOPs loaded from a C library (hop.load_library) going through
one path -- eager (the class's eval slot with Python bodies), traced and
compiled -- checked against each other and NumPy."""

import inspect
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from budget import examples

import hop


def _examples_dir():
    build_python = os.environ.get("HOP_PYTHONPATH")
    if not build_python:
        pytest.skip("HOP_PYTHONPATH is not set: the example libraries live in the build tree")
    d = os.path.join(os.path.dirname(os.path.abspath(build_python)), "examples")
    assert os.path.isdir(d), f"no examples directory next to {build_python}"
    return d


@pytest.fixture(scope="module")
def libs():
    d = _examples_dir()
    return {name: hop.load_library(os.path.join(d, f"libhop_{name}.so"))
            for name in ("repeat", "fold")}


def same(a, b, tol=1e-6):
    a = a.numpy() if isinstance(a, hop.Tensor) else np.asarray(a)
    b = b.numpy() if isinstance(b, hop.Tensor) else np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def all_modes(fn, *args):
    """fn eagerly, traced (one GraphModule) and compiled, on args."""
    eager = fn(*args)
    gm = hop.trace(fn, *args)
    return eager, gm(*args), hop.compile(fn)(*args), gm


# ------------------------------------------------------------------ hop.ops

def test_hop_ops_names_every_registered_hop_with_its_signature():
    names = set(dir(hop.ops))
    assert {"cond", "map", "wrap", "invoke_subgraph"} <= names
    assert str(inspect.signature(hop.ops.map)) == \
        "(f: 'a callable', xs: 'a tensor or a pytree of tensors', *args: 'tensors')"
    assert str(inspect.signature(hop.ops.cond)) == \
        "(pred: 'a tensor, a SymInt, a bool or an int', true_fn: 'a callable', false_fn: " \
        "'a callable', operands: 'a tensor or a pytree of tensors')"
    assert hop.ops.map.__doc__.startswith("map(f, xs, *args): ")
    with pytest.raises(AttributeError, match="hop.ops has no HOP named 'scanx'; registered: "):
        hop.ops.scanx
    import hop.ops as ops_module
    assert ops_module.map.__name__ == "map"


def test_hop_ops_built_ins_agree_with_the_friendly_functions_in_every_mode():
    x, w = hop.randn(5, 3, seed=1), hop.randn(3, seed=2)

    def f(x):
        # hop.ops.cond passes its operands group as one argument
        return hop.ops.cond(x.sum() > 0, lambda ops: hop.ops.map(lambda r, v: (r * v).sin(),
                                                                 ops[0], w),
                            lambda ops: -ops[0], (x,))

    def g(x):
        return hop.cond(x.sum() > 0, lambda a: hop.map(lambda r, v: (r * v).sin(), a, w),
                        lambda a: -a, (x,))

    for xin in (x, -x):
        eager, traced, compiled, gm = all_modes(f, xin)
        same(eager, g(xin))
        same(traced, eager)
        same(compiled, eager)
    assert gm.code == hop.trace(g, x).code


def test_hop_ops_arguments_are_checked_against_the_signature():
    x = hop.randn(3, seed=1)
    with pytest.raises(TypeError, match=r"hop.ops.map: missing a required argument: 'xs'"):
        hop.ops.map(lambda r: r)
    with pytest.raises(TypeError, match=r"hop.ops.map: f must be callable, got int"):
        hop.ops.map(1, x)
    with pytest.raises(hop.TraceError, match=r"hop.ops.map: the map body must return tensors "
                                             r"\(a constant is not a value of the graph\)"):
        hop.ops.map(lambda r: 1, hop.randn(2, 3, seed=1))


# ------------------------------------------------------------ repeat (a library)

def test_load_library_registers_its_hops_once(libs):
    assert libs == {"repeat": ["repeat"], "fold": ["fold"]}
    d = _examples_dir()
    assert hop.load_library(os.path.join(d, "libhop_repeat.so")) == ["repeat"]
    assert "repeat" in dir(hop.ops)
    with pytest.raises(hop.NotFoundError, match="load_library: cannot load .*no_such.so"):
        hop.load_library(os.path.join(d, "no_such.so"))
    with pytest.raises(hop.InvalidError,
                       match=r"^load_library: libm.so.6 has no descriptor hop_library; a library "
                             r"of HOPs declares itself with HOP_LIBRARY\(init\)"):
        hop.load_library("libm.so.6")
    assert str(inspect.signature(hop.ops.repeat)) == \
        "(n: 'int', body: 'a callable', x: 'a tensor or a pytree of tensors', *args: 'tensors')"


def test_repeat_from_python_eager_traced_and_compiled_equals_numpy(libs):
    x, w = hop.randn(4, 3, seed=1), hop.randn(3, seed=2)

    def f(x):
        return hop.ops.repeat(3, lambda v: (v * w).tanh(), x)

    eager, traced, compiled, gm = all_modes(f, x)
    ref = x.numpy()
    for _ in range(3):
        ref = np.tanh(ref * w.numpy())
    same(eager, ref)
    same(traced, ref)
    same(compiled, ref)
    assert gm.code == '''\
def forward(x: "f32[4, 3]", w: "f32[3]"):
    def repeat_body_0(x: "f32[4, 3]", w: "f32[3]"):
        mul: "f32[4, 3]" = mul(x, w)
        tanh: "f32[4, 3]" = tanh(mul)
        return (tanh,)

    repeat: "f32[4, 3]" = repeat(3, repeat_body_0, (x,), (w,))
    getitem: "f32[4, 3]" = repeat[0]
    return (getitem,)
'''


def test_repeat_checks_hold_with_one_message_in_every_mode(libs):
    x = hop.randn(4, 3, seed=1)
    for mode in ("eager", "trace", "compile"):
        for fn, exc, msg in [
            (lambda x: hop.ops.repeat(-1, lambda v: v, x), hop.InvalidError,
             "repeat: n must be >= 0, got -1"),
            (lambda x: hop.ops.repeat(2, lambda v: v[:1], x), hop.TraceError,
             "repeat: the body must return one f32[4, 3] like x; it returns 1 value(s), the "
             "first f32[1, 3]"),
        ]:
            run = {"eager": fn, "trace": lambda a: hop.trace(fn, a)(a),
                   "compile": hop.compile(fn)}[mode]
            with pytest.raises(exc) as info:
                run(x)
            assert str(info.value) == msg, mode
    assert hop._C._trace_depth() == 0


def test_a_carry_in_the_body_is_the_current_value_not_the_one_it_started_from(libs):
    """The body closes over the x it started from and gets the current x: the
    two are different values (an input standing for its operand would make
    them one, and the traced loop would double every step)."""
    x = hop.ones(3)
    eager, traced, compiled, gm = all_modes(lambda x: hop.ops.repeat(3, lambda v: v + x, x), x)
    for got in (eager, traced, compiled):
        same(got, np.full(3, 4, np.float32))
    assert "def repeat_body_0(x: \"f32[3]\", x_1: \"f32[3]\"):" in gm.code
    xs = hop.randn(4, 3, seed=5)
    f = lambda xs: hop.ops.fold(lambda c, r: c + r + xs[0], xs[0], xs)
    eager, traced, compiled, _ = all_modes(f, xs)
    ref = xs.numpy()[0] * 5 + xs.numpy().sum(0)
    for got in (eager, traced, compiled):
        same(got, ref, 1e-5)


def test_repeat_zero_times_returns_x_in_every_mode(libs):
    x = hop.randn(2, 3, seed=4)
    eager, traced, compiled, _ = all_modes(lambda x: hop.ops.repeat(0, lambda v: v * 2, x), x)
    for got in (eager, traced, compiled):
        same(got, x)


def test_repeat_nests_in_map_in_cond_and_closes_over_values_at_two_depths(libs):
    x, w = hop.randn(6, 3, seed=3), hop.randn(3, seed=5)

    def f(x):
        k = x.sum()

        def pos():
            return hop.map(lambda r: hop.ops.repeat(2, lambda v: (v * w + k).sin(), r), x)
        return hop.cond(k > 0, pos, lambda: hop.ops.repeat(1, lambda v: v - w, x))

    for xin in (x, -x):
        eager, traced, compiled, gm = all_modes(f, xin)
        same(traced, eager, 1e-5)
        same(compiled, eager, 1e-5)
    assert "repeat(2, repeat_body_0, (x,), (w, sum))" in gm.code.replace("_true_branch", "")


def test_fold_with_a_pytree_carry_in_every_mode(libs):
    xs, w = hop.randn(5, 3, seed=1), hop.randn(3, seed=2)

    def f(xs):
        def step(carry, x):
            s, m = carry
            return (s + x * w, m.maximum(x))
        return hop.ops.fold(step, (hop.zeros(3), xs[0]), xs)

    eager, traced, compiled, gm = all_modes(f, xs)
    a, b = xs.numpy(), w.numpy()
    for got in (eager, traced, compiled):
        same(got[0], (a * b).sum(0), 1e-5)
        same(got[1], a.max(0))
    assert "fold(fold_body_0, (zeros, select), (xs,), (w,))" in gm.code
    with pytest.raises(hop.TraceError, match=r"fold: carry 0 enters as f32\[3\] but f returns "
                                             r"f32\[1\]"):
        hop.ops.fold(lambda c, x: c[:1], hop.zeros(3), xs)
    with pytest.raises(hop.TraceError, match=r"fold: carry 0 enters as f32\[3\] but f returns "
                                             r"f32\[1\]"):
        hop.trace(lambda xs: hop.ops.fold(lambda c, x: c[:1], hop.zeros(3), xs), xs)


@settings(max_examples=examples(25), deadline=None)
@given(n=st.integers(0, 4), rows=st.integers(1, 4), cols=st.integers(1, 4),
       seed=st.integers(0, 1000), dynamic=st.booleans())
def test_repeat_differential_eager_trace_compile_numpy(libs, n, rows, cols, seed, dynamic):
    x, b = hop.randn(rows, cols, seed=seed), hop.randn(cols, seed=seed + 1)

    def f(x):
        return hop.ops.repeat(n, lambda v: (v * 0.5 + b).tanh(), x)

    ref = x.numpy()
    for _ in range(n):
        ref = np.tanh(ref * np.float32(0.5) + b.numpy())
    same(f(x), ref, 1e-5)
    same(hop.trace(f, x, dynamic=dynamic)(x), ref, 1e-5)
    same(hop.compile(f)(x), ref, 1e-5)


# ------------------------------------------------- the examples' transforms

F64 = hop.float64


def _fd_grad(f, x, eps=1e-6):
    """Central differences of the scalar f at x (a float64 array)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def test_repeat_grad_is_the_loop_kits_two_scans_and_matches_finite_differences(libs):
    w = hop.tensor(np.array([0.5, -1.25, 2.0]), dtype=F64)
    x = hop.tensor(np.random.default_rng(3).uniform(-1, 1, (4, 3)), dtype=F64)

    def f(x):
        return hop.ops.repeat(3, lambda v: (v * w).tanh(), x).sum()

    def ref(a):
        for _ in range(3):
            a = np.tanh(a * w.numpy())
        return a.sum()
    want = _fd_grad(ref, x.numpy())
    for got in (hop.grad(f)(x), hop.compile(hop.grad(f))(x)):
        same(got, want, 1e-7)
    code = hop.trace(hop.grad(f), x).code
    assert 'scan: "(f64[4, 3], f64[3, 4, 3])" = scan(False, 0, -1, repeat_body_0_fwd, (x,), ' \
        '(arange,), (w,))' in code
    # the backward: steps 2 and 1 over the stacked carries' rows, then step 0
    # on its own reading the init x itself (docs/AUTODIFF.md, "Symbolic zeros")
    assert "scan(True, 0, -1, repeat_body_0_bwd, (expand, full_1), (slice, slice_1), (w,))" \
        in code
    assert 'slice_1: "f64[2, 4, 3]" = slice(getitem_1, 0, 1, 3, 1)' in code
    assert "scan(True, 0, -1, repeat_body_0_bwd_first, (getitem_2, getitem_3), (slice_2,), " \
        "(x, w))" in code
    # the gradient of a value passed whole (w) is summed over the steps
    gw = hop.grad(lambda w: hop.ops.repeat(2, lambda v: (v * w).tanh(), x).sum())(w)
    same(gw, _fd_grad(lambda b: np.tanh(np.tanh(x.numpy() * b) * b).sum(), w.numpy()), 1e-7)
    # zero steps: x's gradient passes through
    same(hop.grad(lambda x: hop.ops.repeat(0, lambda v: v * w, x).sum())(x), np.ones((4, 3)))


def test_repeat_has_no_jvp_rule_and_jvp_names_it(libs):
    x = hop.tensor(np.ones(3), dtype=F64)
    with pytest.raises(hop.UnsupportedError,
                       match=r"autodiff: the HOP repeat \(repeat\) has no jvp rule"):
        hop.jvp(lambda x: hop.ops.repeat(2, lambda v: v * 2.0, x), (x,), (x,))


def test_repeat_vmap_batches_the_body_and_equals_a_loop_over_the_examples(libs):
    rng = np.random.default_rng(5)
    xs = hop.tensor(rng.uniform(-1, 1, (5, 2, 3)), dtype=F64)
    ws = hop.tensor(rng.uniform(-1, 1, (5, 3)), dtype=F64)

    def f(x, w):
        return hop.ops.repeat(2, lambda v: (v * w).sin(), x)
    want = np.stack([np.sin(np.sin(a * b) * b) for a, b in zip(xs.numpy(), ws.numpy())])
    for in_axes in ((0, 0), (0, None), (None, 0)):
        a = xs if in_axes[0] == 0 else xs[0]
        b = ws if in_axes[1] == 0 else ws[0]
        got = hop.vmap(f, in_axes=in_axes)(a, b)
        ref = np.stack([np.sin(np.sin(p * q) * q) for p, q in zip(
            a.numpy() if in_axes[0] == 0 else [a.numpy()] * 5,
            b.numpy() if in_axes[1] == 0 else [b.numpy()] * 5)])
        same(got, ref, 1e-12)
    same(hop.vmap(f)(xs, ws), want, 1e-12)
    code = hop.trace(hop.vmap(f), xs, ws).code
    assert "repeat(2, repeat_body_0_vmap, (x,), (w,))" in code
    assert "_vmap_loop" not in code and " = map(" not in code  # the rule, not the loop fallback


def test_fold_grad_jvp_and_vmap_match_references(libs):
    rng = np.random.default_rng(7)
    c0 = hop.tensor(rng.uniform(-1, 1, 3), dtype=F64)
    xs = hop.tensor(rng.uniform(-1, 1, (4, 3)), dtype=F64)
    w = hop.tensor(rng.uniform(0.5, 1.5, 3), dtype=F64)

    def f(c, xs):
        return hop.ops.fold(lambda c, x: (c * x + w).tanh(), c, xs)

    def ref(c, xs):
        for x in xs:
            c = np.tanh(c * x + w.numpy())
        return c
    ct = rng.uniform(-1, 1, 3)
    L = lambda c, xs: (f(c, xs) * hop.tensor(ct, dtype=F64)).sum()  # noqa: E731
    gc, gx = hop.grad(L, argnums=(0, 1))(c0, xs)
    same(gc, _fd_grad(lambda a: (ref(a, xs.numpy()) * ct).sum(), c0.numpy()), 1e-7)
    same(gx, _fd_grad(lambda a: (ref(c0.numpy(), a) * ct).sum(), xs.numpy()), 1e-7)
    tc, tx = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, (4, 3))
    out, tan = hop.jvp(f, (c0, xs), (hop.tensor(tc, dtype=F64), hop.tensor(tx, dtype=F64)))
    eps = 1e-6
    fd = (ref(c0.numpy() + eps * tc, xs.numpy() + eps * tx) -
          ref(c0.numpy() - eps * tc, xs.numpy() - eps * tx)) / (2 * eps)
    same(out, ref(c0.numpy(), xs.numpy()))
    same(tan, fd, 1e-7)
    cs = hop.tensor(rng.uniform(-1, 1, (2, 3)), dtype=F64)
    xss = hop.tensor(rng.uniform(-1, 1, (2, 4, 3)), dtype=F64)
    same(hop.vmap(f)(cs, xss), np.stack([ref(a, b) for a, b in zip(cs.numpy(), xss.numpy())]),
         1e-12)
    same(hop.vmap(f, in_axes=(None, 0))(c0, xss),
         np.stack([ref(c0.numpy(), b) for b in xss.numpy()]), 1e-12)
    code = hop.trace(hop.vmap(f, in_axes=(None, 0)), c0, xss).code
    assert "fold(fold_body_0_vmap, (expand,), (permute,), (w,))" in code
