"""A hop.compile'd function used inside another trace -- called by a
compiled function being translated, handed to a library callback there
(sorted's key, functools.reduce), or given to a HOP as its body -- is part
of that trace: its own plan never runs (nor replays its effects) while the
outer function traces, and a body's effects are checked as a plain
function's are.  Before, a warm helper's plan ran for real during the
caller's translation (its effects twice, out of order, a counter's value
wrong), and a compiled body's effect ran once, at trace time."""

import functools
import warnings

import numpy as np
import pytest

import hop


def _vec(*v):
    return hop.tensor(np.array(v, dtype=np.float32))


def _make(compiled, call):
    """(f, g, log, state): f calls g by `call`, each logging its name; g
    scales by a counter it bumps."""
    log, state = [], {"n": 0}

    def g(x):
        log.append("g")
        state["n"] += 1
        return x * state["n"]

    if compiled:
        g = hop.compile(g)
        g(_vec(0.0, 0.0))  # warm: g has a plan before f first runs

    def f(x):
        log.append("f")
        return call(g, x + 1)

    return (hop.compile(f) if compiled else f), g, log, state


CALLS = {
    "direct": lambda g, x: g(x),
    "partial": lambda g, x: functools.partial(g)(x),
    "map": lambda g, x: list(map(g, [x, x]))[1],
    "sorted_key": lambda g, x: sorted([1.0, 2.0], key=lambda k: float(g(x * k).sum()))[0] + x,
    "reduce": lambda g, x: functools.reduce(lambda a, b: a + g(b), [x, x], x),
    # (library code calling g itself, with Python numbers: sorted's key, map)
    "sorted_by_it": lambda g, x: x + sorted([3.0, 1.0, 2.0], key=g)[0],
    "map_numbers": lambda g, x: x + sum(map(g, [1.0, 2.0])),
}


@pytest.mark.parametrize("how", sorted(CALLS))
def test_a_warm_compiled_helper_runs_once_per_call_in_order(how):
    results = []
    for compiled in (False, True):
        f, g, log, state = _make(compiled, CALLS[how])
        del log[:]
        state["n"] = 0
        got = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(3):
                r = f(_vec(1.0, 2.0))
                got.append((list(log), state["n"], np.asarray(r.numpy()).tolist()))
                del log[:]
        results.append(got)
    assert results[1] == results[0]


def _run_body(which, compiled):
    log = []

    def mapped(v):
        log.append("m")
        return v * 3

    def scanned(c, v):
        log.append("s")
        return c + v, v

    def looped(i, c):
        log.append("i")
        return c + 1

    if compiled:
        mapped, scanned, looped = (hop.compile(b) for b in (mapped, scanned, looped))

    def f(x):
        log.append("f")
        if which == "map":
            return hop.map(mapped, x)
        if which == "scan":
            return hop.scan(scanned, x[0], x)[0]
        return hop.fori_loop(0, 2, looped, x)

    cf = hop.compile(f)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            r = cf(hop.ones(2, 2))
            out.append((list(log), r.tolist()))
            del log[:]
    return out


@pytest.mark.parametrize("which", ["map", "scan", "fori_loop"])
def test_a_compiled_hop_body_with_an_effect_is_checked_as_a_function(which):
    # (the body's effect: the call runs eagerly, every call, as with a
    # plain function body)
    got = _run_body(which, True)
    assert got == _run_body(which, False)
    tag = {"map": "m", "scan": "s", "fori_loop": "i"}[which]
    assert [log for log, _ in got] == [["f", tag, tag]] * 3  # (two rows, steps, trips)


LOG = []


def appends(v):
    LOG.append("g")
    return v * 3


appends_compiled = hop.compile(appends)


def calls_compiled(v):
    return appends_compiled(v) + 1


@pytest.mark.parametrize("body", [appends, appends_compiled, calls_compiled],
                         ids=["plain", "compiled", "calls_compiled"])
def test_hop_trace_refuses_a_body_whose_compiled_function_has_an_effect(body):
    appends_compiled(hop.ones(2))  # (warm: it has a plan)
    del LOG[:]
    with pytest.raises(hop.TraceError, match="the map body has a side effect: it mutates 'LOG'"):
        hop.trace(lambda x: hop.map(body, x), hop.ones(2, 2))
    assert LOG == []  # (the outer state as it was)


def test_a_pure_compiled_body_traces_and_computes():
    body = hop.compile(lambda v: v * 2 + 1)
    body(hop.ones(3))
    gm = hop.trace(lambda x: hop.map(body, x), hop.ones(2, 3))
    np.testing.assert_array_equal(gm(hop.ones(2, 3)).numpy(), np.full((2, 3), 3.0))
