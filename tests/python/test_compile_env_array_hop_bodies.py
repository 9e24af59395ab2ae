"""Issue 28 inside HOP bodies (first rule): NumPy's work on an environment
ndarray W (a global the body reads: `W * 2`, `np.sin(W)`, `W.sum()`) in a HOP
body of a compiled function -- hop.compile(hop.grad(f)), a hop.cond branch, a
hop.map body, hop.vmap, fori_loop -- was NumPy's at trace time, a constant of
the plan, so a change inside W between calls left the compiled function's
answer stale (hop.grad(f) called eagerly too).  Such an array's contents are
guarded now: a change retraces.  Each case runs the function eagerly and
compiled over several calls with W changed in place between them and compares
values, dtypes and shapes."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp

W = np.arange(1.0, 5.0)


def _w2(x):
    return x * (W * 2)


def _sin(x):
    return x * np.sin(W)


def _sum(x):
    return x * W.sum()


OPS = {"W * 2": _w2, "np.sin(W)": _sin, "W.sum()": _sum}


@pytest.fixture(autouse=True)
def _reset():
    W[...] = np.arange(1.0, 5.0)
    yield
    W[...] = np.arange(1.0, 5.0)


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tolist() == want.tolist()


def _changes(cf, f, x):
    """cf and f called on x three times, W changed in place before each."""
    for k in range(3):
        W[...] = np.arange(1.0, 5.0) * (k + 1) - k
        _same(cf(x), f(x))


def _grad_of(op):
    def loss(x):
        return op(x).sum()
    return hop.grad(loss)


def _cond_of(op):
    def f(x):
        return hop.cond(x.sum() > 0, op, lambda v: v - 1.0, (x,))
    return f


def _map_of(op):
    def f(x):
        return hop.map(op, x)
    return f


# d/dx of op(x).sum(), by NumPy from W now
GRADS = {"W * 2": lambda: W * 2, "np.sin(W)": lambda: np.sin(W),
         "W.sum()": lambda: np.full(4, W.sum())}


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_compiled_grad_reads_the_environment_ndarray_on_every_call(name):
    g = _grad_of(OPS[name])
    cf = hop.compile(g)
    x = hnp.asarray(np.linspace(0.5, 2.0, 4))
    # (hop.grad called eagerly is hop's own compile: stale as well)
    _changes(cf, lambda x: GRADS[name](), x)
    _changes(g, lambda x: GRADS[name](), x)
    _changes(cf, _grad_of(OPS[name]), x)
    assert "global 'W' holds what it held when traced (a HOP body read it" in cf.explain()


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_cond_branch_reads_the_environment_ndarray_on_every_call(name):
    f = _cond_of(OPS[name])
    cf = hop.compile(f)
    x = np.linspace(0.5, 2.0, 4)
    _changes(cf, f, x)
    _changes(cf, f, -x)  # (the other branch)


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_map_body_reads_the_environment_ndarray_on_every_call(name):
    f = _map_of(OPS[name])
    _changes(hop.compile(f), f, np.linspace(0.5, 6.0, 12).reshape(3, 4))


CONTENTS = ("global 'W' holds what it held when traced (a HOP body read it, where NumPy "
            "computes with it while tracing: a change inside it retraces)")


@pytest.mark.parametrize("make", [_cond_of, _map_of], ids=["cond", "map"])
def test_a_change_inside_an_array_a_hop_body_reads_retraces_and_nothing_else_does(make):
    # (the frame translator does not translate a body: the array's contents
    # are guarded; fullgraph=True compiles, no eager fallback)
    f = make(_sin)
    x = np.linspace(0.5, 6.0, 12).reshape(3, 4)
    cf = hop.compile(f, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for _ in range(3):
            _same(cf(x), f(x))
        assert cf.recompiles == 0
        W[0] = 7.0
        _same(cf(x), f(x))
        assert cf.recompiles == 1
        W[0] = 7.0  # (the same contents: no retrace)
        _same(cf(x), f(x))
    assert cf.recompiles == 1 and cf.eager_calls == 0
    assert CONTENTS in cf.explain()
    assert "guard failed: global 'W' changed inside since traced" in cf.explain()


def test_a_compiled_grad_whose_function_reads_an_environment_ndarray_stays_compiled():
    g = _grad_of(_w2)
    cf = hop.compile(g, fullgraph=True)
    x = hnp.asarray(np.ones(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _same(cf(x), W * 2)
        W[1] = -3.0
        _same(cf(x), W * 2)
    assert cf.eager_calls == 0 and cf.recompiles == 1 and CONTENTS in cf.explain()


_OTHERS = {
    "hop.vmap": (lambda: hop.vmap(_sin), lambda x: x * np.sin(W)),
    "hop.wrap": (lambda: lambda x: hop.wrap(_sin, x), lambda x: x * np.sin(W)),
    "hop.fori_loop": (lambda: lambda x: hop.fori_loop(0, 2, lambda i, c: _sin(c), x),
                      lambda x: x * np.sin(W) * np.sin(W)),
    "hop.jvp": (lambda: lambda x: hop.jvp(_sin, (x,), (hnp.asarray(np.ones(4)),))[1],
                lambda x: np.sin(W)),
}


@pytest.mark.parametrize("name", sorted(_OTHERS))
def test_other_hops_and_transformations_read_the_environment_ndarray_on_every_call(name):
    # (hop.vmap(f) and hop.jvp called eagerly are hop's own compile too;
    # fori_loop's body is hop's wrapper of the user's)
    make, want = _OTHERS[name]
    f = make()
    x = np.linspace(0.5, 6.0, 12).reshape(3, 4) if name == "hop.vmap" else \
        hnp.asarray(np.linspace(0.5, 2.0, 4)) if name == "hop.jvp" else np.linspace(0.5, 2.0, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (hop.compile(hop.vmap(f)): eager)
        cf = hop.compile(f)
        _changes(cf, lambda x: want(np.asarray(x)), x)
        _changes(f, lambda x: want(np.asarray(x)), x)


def test_an_eager_grad_over_an_array_changed_every_call_keeps_a_bounded_number_of_plans():
    # hop.grad called eagerly is hop's own compile, whose recompile limit is
    # unbounded: each new value of W retraces (its contents guard), and the
    # plans were kept without end (350 plans, 6.8 ms a call after 200
    # changes: an SGD loop updating W in place); now the 16 newest stay
    g = _grad_of(OPS["W * 2"])
    x = hnp.asarray(np.linspace(0.5, 2.0, 4))
    for k in range(40):
        W[...] = np.arange(1.0, 5.0) + k
        _same(g(x), W * 2)
    assert len(g._compiled.graphs) == 16
    cf = hop.compile(lambda v: v + 1, dynamic=False, recompile_limit=100)  # (a plan per shape)
    for n in range(1, 41):
        _same(cf(np.arange(float(n))), np.arange(float(n)) + 1)
    assert len(cf.graphs) == 16 and cf.recompiles == 39
    _same(cf(np.arange(1.0)), np.arange(1.0) + 1)  # (its plan was dropped: traced again)
    assert cf.recompiles == 40
