"""A HOP's results (and vmap's, grad's, jvp's and vjp's) never share memory
with its operands, the tensors its bodies close over, or each other: eagerly,
in a hop.trace'd GraphModule and in a hop.compile'd plan alike
(docs/ARCHITECTURE.md, "A HOP's results are fresh").  So a later write into a
result reaches nothing else in any mode.  Plain tensor ops keep their views
(X.T, X[0]) in every mode.

Each case runs on a fresh X = f32[2, 3] (0..5) and closes over Y (10..15);
the result's tensors are checked not to share memory with X, Y or each
other, then each is overwritten with -1 and X and Y are checked unchanged.
"""

import numpy as np
import pytest

import hop

X0 = np.arange(6, dtype=np.float32).reshape(2, 3)
Y0 = X0 + 10
Y = hop.tensor(Y0.copy())


def _new_x():
    return hop.tensor(X0.copy())


def _leaves(r):
    if isinstance(r, (tuple, list)):
        return [leaf for x in r for leaf in _leaves(x)]
    return [r]


def _transposed(f):
    return lambda X: tuple(leaf.T for leaf in _leaves(f(X)))


def _identity(x):
    return x


CASES = {
    "wrap_identity": lambda X: hop.wrap(lambda x: x, X),
    "wrap_view": lambda X: hop.wrap(lambda x: x[0], X),
    "wrap_transpose": lambda X: hop.wrap(lambda x: x.T, X),
    "wrap_closed_over": lambda X: hop.wrap(lambda x: Y, X),
    "wrap_same_twice": lambda X: hop.wrap(lambda x: (x, x), X),
    "wrap_made_twice": lambda X: hop.wrap(lambda x: (x * 2,) * 2, X),
    "wrap_made_and_view": lambda X: hop.wrap(lambda x: (lambda t: (t, t[0]))(x * 2), X),
    "fori_loop_zero_trips": lambda X: hop.fori_loop(0, 0, lambda i, c: c * 2, X),
    "cond_tensor_pred": lambda X: hop.cond(X.sum() > 0, lambda x: x, lambda x: x * 2, (X,)),
    "cond_constant_pred": lambda X: hop.cond(True, lambda x: x, lambda x: x * 2, (X,)),
    "cond_closed_over": lambda X: hop.cond(X.sum() > 0, lambda x: Y, lambda x: x, (X,)),
    # (branches of different sizes: the result's size is a symbol the plan
    # binds after the call, from the result it copies)
    "cond_merged_size": lambda X: hop.cond(X.sum() > 0, lambda x: x[:2], lambda x: x[:1], (X,)),
    "scan_carry_and_ys": lambda X: hop.scan(lambda c, x: (c, x), X[0], X),
    "while_loop_never": lambda X: hop.while_loop(lambda x: x.sum() < 0, lambda x: x * 2, X),
    "invoke_subgraph_identity": lambda X: hop.invoke_subgraph(_identity, X),
    "vmap_identity": lambda X: hop.vmap(lambda x: x)(X),
    "vmap_closed_over": lambda X: hop.vmap(lambda x: Y[0] + 0 * x + Y[0] * 0)(X),
    "map_identity": lambda X: hop.map(lambda x: x, X),
    "switch_tensor_index": lambda X: hop.switch((X.sum() * 0).to(hop.int64),
                                                [lambda x: x, lambda x: x * 2], X),
    "switch_constant_index": lambda X: hop.switch(0, [lambda x: x, lambda x: x * 2], X),
    "associative_scan_one_row": lambda X: hop.associative_scan(lambda a, b: a + b, X[:1]),
    "jvp_identity": lambda X: hop.jvp(lambda x: x, (X,), (X,)),
    "jvp_closed_over": lambda X: hop.jvp(lambda x: Y, (X,), (X,)),
    "vjp_identity_value": lambda X: hop.vjp(lambda x: x, X)[0],
    "vjp_closed_over_value": lambda X: hop.vjp(lambda x: Y, X)[0],
    "vjp_identity_cotangent": lambda X: hop.vjp(lambda x: x, X * 1)[1](X),
    "grad_of_sum": lambda X: hop.grad(lambda x: x.sum())(X),
}
CASES.update({name + "_T": _transposed(f) for name, f in list(CASES.items())})

# The values each case gives (on X0), computed by NumPy.
_EXPECT = {
    "wrap_identity": [X0], "wrap_view": [X0[0]], "wrap_transpose": [X0.T], "wrap_closed_over": [Y0],
    "wrap_same_twice": [X0, X0], "wrap_made_twice": [2 * X0, 2 * X0],
    "wrap_made_and_view": [2 * X0, 2 * X0[0]], "fori_loop_zero_trips": [X0],
    "cond_tensor_pred": [X0], "cond_constant_pred": [X0], "cond_closed_over": [Y0],
    "cond_merged_size": [X0],
    "scan_carry_and_ys": [X0[0], X0], "while_loop_never": [X0], "invoke_subgraph_identity": [X0],
    "vmap_identity": [X0], "vmap_closed_over": [np.stack([Y0[0], Y0[0]])], "map_identity": [X0],
    "switch_tensor_index": [X0], "switch_constant_index": [X0],
    "associative_scan_one_row": [X0[:1]], "jvp_identity": [X0, X0], "jvp_closed_over": [Y0, 0 * X0],
    "vjp_identity_value": [X0], "vjp_closed_over_value": [Y0], "vjp_identity_cotangent": [X0],
    "grad_of_sum": [np.ones_like(X0)],
}
_EXPECT.update({name + "_T": [v.T for v in vals] for name, vals in list(_EXPECT.items())})


def _run(mode, f, X):
    if mode == "eager":
        return f(X)
    if mode == "trace":
        return hop.trace(f, _new_x())(X)
    g = hop.compile(f)
    g(_new_x())  # (the first call traces; the second runs the plan)
    return g(X)


def _shares(a, b):
    return np.shares_memory(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("mode", ["eager", "trace", "compile"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_hop_result_is_fresh_and_a_write_into_it_reaches_nothing(case, mode):
    X = _new_x()
    out = _leaves(_run(mode, CASES[case], X))
    expect = _EXPECT[case]
    assert len(out) == len(expect)
    for r, e in zip(out, expect):
        assert type(r) is hop.Tensor and r.dtype == hop.float32
        np.testing.assert_array_equal(np.asarray(r), e, strict=True)
    for i, r in enumerate(out):
        assert not _shares(r, X), f"{case} {mode}: result {i} shares X's memory"
        assert not _shares(r, Y), f"{case} {mode}: result {i} shares Y's memory"
        for j in range(i):
            assert not _shares(r, out[j]), f"{case} {mode}: results {j} and {i} share memory"
    for r in out:
        r[...] = -1.0
    for r in out:
        np.testing.assert_array_equal(np.asarray(r), np.full(r.shape, -1.0, np.float32))
    np.testing.assert_array_equal(np.asarray(X), X0, strict=True)
    np.testing.assert_array_equal(np.asarray(Y), Y0, strict=True)


@pytest.mark.parametrize("mode", ["eager", "trace", "compile"])
def test_in_place_add_into_a_passed_through_result_leaves_the_operand(mode):
    X = _new_x()
    r = _run(mode, lambda X: hop.wrap(lambda x: x, X), X)
    r += 1
    np.testing.assert_array_equal(np.asarray(r), X0 + 1, strict=True)
    np.testing.assert_array_equal(np.asarray(X), X0, strict=True)


@pytest.mark.parametrize("mode", ["eager", "trace", "compile"])
@pytest.mark.parametrize("view", ["T", "row"])
def test_plain_views_still_alias_their_base(view, mode):
    f = (lambda X: X.T) if view == "T" else (lambda X: X[0])
    X = _new_x()
    r = _run(mode, f, X)
    assert _shares(r, X)
    r[...] = -1.0
    want = X0.copy()
    (want.T if view == "T" else want[0])[...] = -1.0
    np.testing.assert_array_equal(np.asarray(X), want, strict=True)


@pytest.mark.parametrize("mode", ["eager", "trace", "compile"])
def test_a_view_of_a_fresh_vmap_result_views_that_result_not_the_operand(mode):
    X = _new_x()
    v, t = _run(mode, lambda X: (lambda v: (v, v.T))(hop.vmap(lambda x: x)(X)), X)
    assert not _shares(v, X) and not _shares(t, X)
    assert _shares(t, v)
    t[0, 1] = -1.0
    np.testing.assert_array_equal(np.asarray(v)[1, 0], np.float32(-1.0))
    np.testing.assert_array_equal(np.asarray(X), X0, strict=True)


def test_a_fresh_result_is_not_copied_eagerly():
    """A result the body made and let go of is the HOP's result itself (no
    copy): the rule costs one check per result in the common case."""
    seen = []

    def body(x):
        t = x * 2
        seen.append(np.asarray(t).__array_interface__["data"][0])
        return t

    r = hop.wrap(body, _new_x())
    assert np.asarray(r).__array_interface__["data"][0] == seen[0]


@pytest.mark.parametrize("mode", ["eager", "compile"])
def test_a_hop_numpy_setitem_into_a_passed_through_result_leaves_the_operand(mode):
    import hop.numpy as hnp
    A = hnp.asarray(X0.astype(np.float64))
    f = lambda a: hop.wrap(lambda x: x, a)
    if mode == "compile":
        f = hop.compile(f)
        f(hnp.asarray(X0.astype(np.float64)))
    r = f(A)
    assert type(r) is hnp.ndarray and not np.shares_memory(np.asarray(r), np.asarray(A))
    r[0, 0] = -1.0
    np.testing.assert_array_equal(np.asarray(A), X0.astype(np.float64), strict=True)
    assert np.asarray(r)[0, 0] == -1.0


def _write_result(x):
    r = hop.wrap(lambda v: v * 2.0, x * 1.0)
    r[0] = 5.0
    return r


def _write_operand_after(x):
    y = x * 1.0
    r = hop.cond(x.sum() > 0, lambda v: v + 1.0, lambda v: v - 1.0, (y,))
    y[1] = 7.0
    return r, y


def _write_passthrough(x):
    y = x * 1.0
    r = hop.wrap(lambda v: v, y)
    r[0] = -3.0
    y[1] = 9.0
    return r, y


@pytest.mark.parametrize("fn", [_write_result, _write_operand_after, _write_passthrough])
def test_traced_setitem_into_a_hop_result_or_an_operand_is_allowed_and_matches_eager(fn):
    """Since a HOP's results are fresh, a traced x[i] = v into a HOP's result,
    or into a value a HOP took (after the call), changes only that value: hop
    traces it (it refused both before), with eager's values."""
    x = hop.tensor(np.arange(1.0, 5.0, dtype=np.float32))
    eager = fn(x)
    eager = eager if isinstance(eager, tuple) else (eager,)
    for run in (hop.trace(fn, x), hop.compile(fn)):
        got = run(x)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(eager)
        for g, e in zip(got, eager):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e), strict=True)
    np.testing.assert_array_equal(np.asarray(x), np.arange(1.0, 5.0, dtype=np.float32))

