"""A gc callback of the user's while hop.compile translates (the forty-eighth
session): a collection that the translation's own allocations start calls
gc.callbacks, as a collection of eager's run would; the translator's call
guard took the callback for user code that library code runs, refused the
translation after it had run the function's effects (a user __hash__), and
the call fell back and ran them again (a LOG one 'h' longer than eager's)."""
import gc

import numpy as np
import pytest

import hop


@pytest.fixture
def collector_with_a_callback():
    phases = []

    def callback(phase, info):
        phases.append(phase)

    threshold = gc.get_threshold()
    gc.callbacks.append(callback)
    gc.set_threshold(50, 2, 2)
    try:
        yield phases
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(callback)


def _run(compile_it, n=5):
    LOG = []

    class K:
        def __init__(self, n):
            self.n = n

        def __hash__(self):
            return self.n

        def __eq__(self, o):
            return self.n == o.n

    def logging_hash(self):
        LOG.append("h")
        return self.n

    k = K(1)
    D = {k: 2.0}

    def f(x):
        return x * D[K(1)]

    g = hop.compile(f) if compile_it else f
    out = []
    for i in range(n):
        if i == 2:
            K.__hash__ = logging_hash
        D[k] = float(i + 2)
        r = g(hop.tensor(np.arange(3, dtype=np.float32)))
        out.append((r.tolist(), list(LOG)))
    return out


def test_a_collection_while_translating_runs_the_callback_and_no_effect_twice(
        collector_with_a_callback):
    eager = _run(False)
    compiled = _run(True)
    assert collector_with_a_callback, "no collection ran: the test would not test anything"
    assert compiled == eager
    assert eager[2] == ([0.0, 4.0, 8.0], ["h", "h"])
    assert eager[4] == ([0.0, 6.0, 12.0], ["h"] * 6)


def test_without_a_callback_the_same():
    assert _run(True) == _run(False)
