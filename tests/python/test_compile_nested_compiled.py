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


_HALF_IMPORTED = r'''
import importlib, importlib.abc, sys, threading, warnings
import numpy as np, hop
started, release = threading.Event(), threading.Event()
class Slow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "hop.numpy._ndarray" and threading.current_thread() is not threading.main_thread():
            started.set()
            release.wait(2)  # (the main thread waits on the import lock meanwhile)
        return None
assert "hop.numpy" not in sys.modules
sys.meta_path.insert(0, Slow())
t = threading.Thread(target=lambda: importlib.import_module("hop.numpy"))
t.start()
assert started.wait(10)
def f(x, log):
    log.append(1)
    return x * 2
cf = hop.compile(f)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    cf(hop.tensor(np.ones(2, np.float32)), [])  # hop.numpy half made in sys.modules
release.set()
t.join(10)
for n in (3, 4, 5):
    log = []
    assert np.allclose(cf(hop.tensor(np.ones(n, np.float32)), log).numpy(), 2) and log == [1]
print(cf.eager_calls, [str(m.message) for m in w])
'''


def test_a_first_call_while_another_thread_imports_hop_numpy_compiles():
    # (before: the effect analysis read the half-made module's ndarray,
    # failed, and the function ran eagerly for good)
    import os
    import subprocess
    import sys
    env = dict(os.environ)  # (this hop, not another on the path)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(hop.__file__))] +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    r = subprocess.run([sys.executable, "-c", _HALF_IMPORTED], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "0 []"
