"""Differential tests: random programs with nested HOPs, checked as
eager == hop.trace(...)(...) == hop.compile(...)(...) == a NumPy reference.

A program is a small expression tree over two inputs x: [n, m] and y: [m].
Its nodes are elementwise ops and the four HOPs, nested up to depth 4; HOP
bodies close over the inputs (and map bodies over their row), so lifting is
exercised at every level.  The same tree is interpreted with hop (eagerly, or
under tracing) and with NumPy.
"""

import numpy as np
from hypothesis import given, settings, strategies as st, HealthCheck

import hop

UNARY = {
    "sin": (lambda t: t.sin(), np.sin),
    "tanh": (lambda t: t.tanh(), np.tanh),
    "relu": (lambda t: t.relu(), lambda a: np.maximum(a, 0)),
    "neg": (lambda t: -t, np.negative),
    "abs": (lambda t: t.abs(), np.abs),
    "sigmoid": (lambda t: t.sigmoid(), lambda a: 1 / (1 + np.exp(-a))),
}
BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "maximum": (lambda a, b: hop.maximum(a, b), np.maximum),
}


def exprs(ctx, depth):
    """Trees valid in context ctx ("full": [n, m] values, "row": [m])."""
    leaves = st.sampled_from(["x", "y"] if ctx == "full" else ["row", "y"])
    if depth >= 4:
        return leaves.map(lambda v: ("var", v))
    sub = st.deferred(lambda: exprs(ctx, depth + 1))
    options = [
        leaves.map(lambda v: ("var", v)),
        st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), sub),
        st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), sub, sub),
        st.tuples(st.just("wrap"), sub),
        st.tuples(st.just("cond"), sub, sub, sub),
        st.tuples(st.just("invoke"), sub),
    ]
    if ctx == "full":
        row = st.deferred(lambda: exprs("row", depth + 1))
        options.append(st.tuples(st.just("map"), row, sub))
    return st.one_of(options)


def run_hop(tree, env):
    kind = tree[0]
    if kind == "var":
        return env[tree[1]]
    if kind == "unary":
        return UNARY[tree[1]][0](run_hop(tree[2], env))
    if kind == "binary":
        return BINARY[tree[1]][0](run_hop(tree[2], env), run_hop(tree[3], env))
    if kind == "wrap":
        return hop.wrap(lambda: run_hop(tree[1], env))
    if kind == "cond":
        p = run_hop(tree[1], env)
        base = env["row"] if "row" in env else env["x"]  # both branches get one shape
        return hop.cond(p.sum() > 0, lambda: run_hop(tree[2], env) + 0 * base,
                        lambda: run_hop(tree[3], env) + 0 * base)
    if kind == "invoke":
        return hop.invoke_subgraph(_invoke_body(tree[1]), env)
    if kind == "map":
        xs = run_hop(tree[2], env) + 0 * env["x"]
        return hop.map(lambda r: run_hop(tree[1], dict(env, row=r)), xs)
    raise AssertionError(kind)


_bodies = {}


def _invoke_body(tree):
    """One function object per tree, so repeated subtrees share a subgraph."""
    key = repr(tree)
    if key not in _bodies:
        _bodies[key] = lambda env: run_hop(tree, env)
    return _bodies[key]


def run_np(tree, env):
    kind = tree[0]
    if kind == "var":
        return env[tree[1]]
    if kind == "unary":
        return UNARY[tree[1]][1](run_np(tree[2], env)).astype(np.float32)
    if kind == "binary":
        return BINARY[tree[1]][1](run_np(tree[2], env), run_np(tree[3], env)).astype(np.float32)
    if kind == "wrap" or kind == "invoke":
        return run_np(tree[1], env)
    if kind == "cond":
        p = run_np(tree[1], env)
        base = env["row"] if "row" in env else env["x"]
        branch = tree[2] if p.sum(dtype=np.float32) > 0 else tree[3]
        return run_np(branch, env) + 0 * base
    if kind == "map":
        xs = run_np(tree[2], env) + 0 * env["x"]
        return np.stack([run_np(tree[1], dict(env, row=r)) for r in xs])
    raise AssertionError(kind)


def program(tree):
    def f(x, y):
        return run_hop(tree, {"x": x, "y": y}) + 0 * x
    return f


shapes = st.tuples(st.integers(2, 5), st.integers(2, 4))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=exprs("full", 0), shape=shapes, dynamic=st.booleans(), seed=st.integers(0, 10**6))
def test_random_nested_programs_agree_eager_traced_compiled_and_numpy(tree, shape, dynamic,
                                                                        seed):
    n, m = shape
    rng = np.random.default_rng(seed)
    xa = rng.standard_normal((n, m)).astype(np.float32)
    ya = rng.standard_normal(m).astype(np.float32)
    f = program(tree)
    x, y = hop.asarray(xa), hop.asarray(ya)
    expected = run_np(tree, {"x": xa, "y": ya}) + 0 * xa
    eager = f(x, y).numpy()
    np.testing.assert_allclose(eager, expected, rtol=2e-4, atol=2e-5)
    gm = hop.trace(f, x, y, dynamic=dynamic)
    np.testing.assert_allclose(gm(x, y).numpy(), eager, rtol=2e-4, atol=2e-5)
    if dynamic and n != m:
        # The same plan serves another size its guards accept (with n == m,
        # duck sizing gave both dims one symbol, so a new n would fail a guard).
        x2 = rng.standard_normal((n + 3, m)).astype(np.float32)
        exp2 = run_np(tree, {"x": x2, "y": ya}) + 0 * x2
        np.testing.assert_allclose(gm(hop.asarray(x2), y).numpy(), exp2, rtol=2e-4, atol=2e-5)
    compiled = hop.compile(f)
    np.testing.assert_allclose(compiled(x, y).numpy(), eager, rtol=2e-4, atol=2e-5)
