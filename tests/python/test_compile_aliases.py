"""hop.compile and arguments that are one object or share memory (issue 28,
session 43): an aliased plan's bound C call (f(a, a) no slower than
f(a, b)), a call whose arrays share memory with one written recognised
without a retrace per call, saving an aliased plan."""

import warnings

import numpy as np
import pytest

import hop
from hop import _trace


def _counting(cf):
    """Counts the calls that leave the bound C call for _call_args."""
    seen = []
    general = cf._call_args

    def call_args(args):
        seen.append(args)
        return general(args)

    cf._call_args = call_args
    return seen


# ------------------------------- arrays that share memory, one written


def _count_traces(monkeypatch):
    n = [0]
    once = _trace._trace_once

    def counted(*a, **k):
        n[0] += 1
        return once(*a, **k)

    monkeypatch.setattr(_trace, "_trace_once", counted)
    return n


def _writes_a(a, b):
    a += 1
    return b * 2


@pytest.mark.parametrize("effects", [False, True], ids=["plain", "translated"])
def test_a_repeated_shared_write_runs_eagerly_without_a_trace(monkeypatch, effects):
    # Before: every call of f(x, x[::2]) traced the function again (two
    # _trace_once per call) before it found the shared write and ran eagerly
    log = []

    def f(a, b):
        if effects:
            log.append(len(log))
        a += 1
        return b * 2

    traces = _count_traces(monkeypatch)
    cf = hop.compile(f)
    x = np.arange(4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cf(x, x[::2]).tolist() == [2.0, 6.0] and x.tolist() == [1.0, 2.0, 3.0, 4.0]
        first = traces[0]
        assert first >= 1 and cf.eager_calls == 1
        for i in range(4):
            got = cf(x, x[::2])
            assert got.tolist() == [2.0 * (i + 2), 2.0 * (i + 4)]
            assert x.tolist() == [i + 2.0, i + 3.0, i + 4.0, i + 5.0]
        assert traces[0] == first and cf.eager_calls == 5
        # another view of x, written the same: the same decision
        got = cf(x[1:], x[:3])
        assert got.tolist() == [10.0, 14.0, 16.0] and traces[0] == first
        # the pattern changed: arrays that share nothing make a plan
        y = np.arange(4.0)
        assert cf(y, y.copy()).tolist() == [0.0, 2.0, 4.0, 6.0] and y.tolist() == [1.0, 2.0,
                                                                                    3.0, 4.0]
        assert traces[0] > first and cf.eager_calls == 6 and len(cf.graphs) == 1
        # and the plan's guard sends a shared call to the decision again
        after = traces[0]
        assert cf(y, y[::2]).tolist() == [4.0, 8.0] and y.tolist() == [2.0, 3.0, 4.0, 5.0]
        assert traces[0] == after and cf.eager_calls == 7
    assert log == (list(range(len(log))) if effects else [])
    assert "ran eagerly for their arguments (the last: argument 1 sharing memory with " \
           "argument 0 (the function writes argument 0 in place))" in cf.explain()


def test_a_shared_write_decision_needs_the_same_constants(monkeypatch):
    # a constant argument decides what is written: another value traces
    def f(a, b, write):
        if write:
            a += 1
        return b * 2

    traces = _count_traces(monkeypatch)
    cf = hop.compile(f)
    x = np.arange(4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cf(x, x[::2], True).tolist() == [2.0, 6.0] and cf.eager_calls == 1
        first = traces[0]
        assert cf(x, x[::2], False).tolist() == [2.0, 6.0] and x.tolist() == [1.0, 2.0, 3.0,
                                                                              4.0]
        assert traces[0] > first and cf.eager_calls == 1
        first = traces[0]
        assert cf(x, x[::2], True).tolist() == [4.0, 8.0] and traces[0] == first
        assert cf.eager_calls == 2 and x.tolist() == [2.0, 3.0, 4.0, 5.0]


