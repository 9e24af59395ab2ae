"""hop.compile and arguments that are one object or share memory (issue 28,
session 43): an aliased plan's bound C call (f(a, a) about as fast as
f(a, b)), a call whose arrays share memory with one written recognised
without a retrace per call, saving an aliased plan."""

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


@pytest.mark.parametrize("make", [
    lambda: (hop.tensor([1.0, 2.0]), hop.tensor([3.0, 5.0])),
    lambda: (np.array([1.0, 2.0]), np.array([3.0, 5.0])),
], ids=["tensors", "ndarrays"])
def test_an_aliased_plan_has_a_bound_call(make):
    # Before: cf(a, a)'s plan (one input for both) had no bound call, so
    # every such call took _call_args and the runner's general path
    cf = hop.compile(lambda x, y: x * y + x)
    a, b = make()
    assert cf(a, a).tolist() == [2.0, 6.0]
    assert type(cf._fast).__name__ == "_ArrayCall"
    assert len(cf.graphs[0].graph.placeholders) == 1
    seen = _counting(cf)
    for _ in range(3):
        got = cf(a, a)
        assert got.tolist() == [2.0, 6.0] and type(got) is type(a)
    assert seen == []
    # another object where the trace had the same one: not this plan's call
    assert cf(a, b).tolist() == [4.0, 12.0] and len(seen) == 1
    assert cf(b, b).tolist() == [12.0, 30.0] and cf(a, a).tolist() == [2.0, 6.0]
    assert cf.eager_calls == 0 and len(cf.graphs) == 2


def test_an_aliased_bound_call_takes_only_its_own_pattern():
    cf = hop.compile(lambda x, y, z: x + y * z + (10.0 if y is z else 0.0))
    a, b = hop.tensor([1.0]), hop.tensor([2.0])
    assert cf(a, a, b).tolist() == [3.0]  # plan: y is x, z its own
    seen = _counting(cf)
    assert cf(b, b, a).tolist() == [4.0] and seen == []
    # z the same object as x and y: y is z now (a constant of the plan)
    assert cf(a, a, a).tolist() == [12.0] and len(seen) == 1
    # x and y distinct: another pattern again
    assert cf(a, b, b).tolist() == [15.0] and len(seen) == 2
    assert cf(b, a, b).tolist() == [4.0] and len(seen) == 3
    assert cf.eager_calls == 0


S = 2.0
LOG = []


def _guarded(x, y):
    return x * y * S  # (a guard on the global S: the plan is bound by _EffectsCall)


def _logging(x, y):
    LOG.append(1)  # (an effect the translated plan replays)
    return x * y + x


@pytest.mark.parametrize("fn", [_guarded, _logging], ids=["guards", "effects"])
def test_an_aliased_plan_with_guards_or_effects_has_a_bound_call(fn):
    # Before: cf(a, a)'s plan had a bound call only without guards to check
    # and without a side-effect table; _EffectsCall now takes the pattern
    global S
    LOG.clear()
    cf = hop.compile(fn)
    a, b = hop.tensor([1.0, 2.0]), hop.tensor([3.0, 5.0])
    first = [2.0, 8.0] if fn is _guarded else [2.0, 6.0]
    assert cf(a, a).tolist() == first
    assert type(cf._fast).__name__ == "_EffectsCall"
    assert len(cf.graphs[0].graph.placeholders) == 1
    seen = _counting(cf)
    for _ in range(3):
        assert cf(a, a).tolist() == first
    assert seen == [] and (fn is _guarded or LOG == [1, 1, 1, 1])
    # another object where the trace had the same one: not this plan's call
    assert cf(a, b).tolist() == ([6.0, 20.0] if fn is _guarded else [4.0, 12.0])
    assert len(seen) == 1
    assert cf(b, b).tolist() == ([18.0, 50.0] if fn is _guarded else [12.0, 30.0])
    if fn is _guarded:
        S = 3.0  # the guard fails: a retrace, never the old value
        try:
            assert cf(a, a).tolist() == [3.0, 12.0]
        finally:
            S = 2.0
    assert cf.eager_calls == 0


def test_bind_rejects_a_bad_alias_pattern():
    gm = hop.trace(lambda x: x + 1, hop.ones(2))
    plan = gm.plan
    with pytest.raises(TypeError, match="alias is None or a tuple of nargs ints"):
        plan.bind_tensors(2, (), True, (0, -1))  # (an index not earlier)
    with pytest.raises(TypeError, match="alias is None or a tuple of nargs ints"):
        plan.bind_tensors(3, (), True, (-1, 0, 1))  # (an alias of an alias)
    with pytest.raises(TypeError, match="alias is None or a tuple of nargs ints"):
        plan.bind_arrays(2, (), (False,), None, (-1,))  # (the wrong length)
    with pytest.raises(TypeError, match="the plan takes 1 tensors"):
        plan.bind_tensors(2, (), True, (-1, -1))
    f = plan.bind_tensors(3, (), True, (-1, 0, 0))
    t = hop.tensor([1.0, 2.0])
    assert f((t, t, t)).tolist() == [2.0, 3.0]
    assert f((t, t, t.clone())) is NotImplemented and f((t, t)) is NotImplemented


# ------------------------------- arrays that share memory, one written


def _count_traces(monkeypatch):
    n = [0]
    once = _trace._trace_once

    def counted(*a, **k):
        n[0] += 1
        return once(*a, **k)

    monkeypatch.setattr(_trace, "_trace_once", counted)
    return n


def _counted_compile(monkeypatch, f):
    """(the trace counter, hop.compile(f), an ndarray to call it on)."""
    return _count_traces(monkeypatch), hop.compile(f), np.arange(4.0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
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

    traces, cf, x = _counted_compile(monkeypatch, f)
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


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_shared_write_decision_needs_the_same_constants(monkeypatch):
    # a constant argument decides what is written: another value traces
    def f(a, b, write):
        if write:
            a += 1
        return b * 2

    traces, cf, x = _counted_compile(monkeypatch, f)
    assert cf(x, x[::2], True).tolist() == [2.0, 6.0] and cf.eager_calls == 1
    first = traces[0]
    assert cf(x, x[::2], False).tolist() == [2.0, 6.0] and x.tolist() == [1.0, 2.0, 3.0,
                                                                          4.0]
    assert traces[0] > first and cf.eager_calls == 1
    first = traces[0]
    assert cf(x, x[::2], True).tolist() == [4.0, 8.0] and traces[0] == first
    assert cf.eager_calls == 2 and x.tolist() == [2.0, 3.0, 4.0, 5.0]


# ------------------------------------------- saving an aliased plan


def test_an_aliased_plan_saves_and_loads(tmp_path):
    # Before: hop.save(cf.graphs[0]) raised TypeError "the constant argument
    # the same object as argument leaf 0 (_Alias) is not None, a bool, ..."
    cf = hop.compile(lambda x, y: x * y + x)
    a = hop.tensor([2.0, 3.0])
    assert cf(a, a).tolist() == [6.0, 12.0]
    path = tmp_path / "aliased.hop"
    hop.save(cf.graphs[0], path)
    gm = hop.load(path)
    assert len(gm.graph.placeholders) == 1
    assert gm(a, a).tolist() == [6.0, 12.0]
    b = hop.tensor([1.0, 1.0])
    assert gm(b, b).tolist() == [2.0, 2.0]
    with pytest.raises(hop.GuardError, match="argument leaf 1 was the same object as "
                                             "argument leaf 0 when traced"):
        gm(a, a.clone())


def test_an_unpickled_aliased_closure_keeps_its_pattern():
    import pickle
    k = 3.0
    cf = hop.compile(lambda x, y, z: x * y + z * k)
    a, c = hop.tensor([2.0]), hop.tensor([1.0])
    assert cf(a, a, c).tolist() == [7.0]
    frozen = pickle.loads(pickle.dumps(cf))
    assert frozen(a, a, c).tolist() == [7.0] and frozen(c, c, a).tolist() == [7.0]
    with pytest.raises(hop.GuardError, match="none fits this call: guard failed: argument "
                                             "leaf 1 was the same object"):
        frozen(a, c, c)


def test_saved_aliases_that_do_not_fit_are_refused():
    import json

    import fuzz_saved
    cf = hop.compile(lambda x, y, z: x * y + z)
    a, c = hop.tensor([2.0]), hop.tensor([1.0])
    cf(a, a, c)
    data = fuzz_saved._dumps(cf.graphs[0])
    assert json.loads(_section(data))["aliases"] == [[1, 0]]

    def replaced(aliases):
        def fn(d):
            info = json.loads(d)
            info["aliases"] = aliases
            return json.dumps(info).encode()
        p = fuzz_saved.unwrap(data)
        at, secs = fuzz_saved.sections(p)
        secs = [(n, fn(d) if n == b"hop.python" else d) for n, d in secs]
        return fuzz_saved.wrap(fuzz_saved.with_sections(p, at, secs), data)

    for bad, why in [([[0, 1]], "argument leaf 0 cannot be an alias of leaf 1"),
                     ([[1, 2]], "argument leaf 1 cannot be an alias of leaf 2"),
                     ([[1, 0], [1, 0]], "argument leaf 1 cannot be an alias of leaf 0"),
                     ([[1, 7]], "an alias is not a pair of argument leaf indices"),
                     ([[1, True]], "an alias is not a pair of argument leaf indices"),
                     ({"1": 0}, "aliases is not a list")]:
        with pytest.raises(hop.Error, match=f"the section hop.python is malformed \\({why}"):
            fuzz_saved._loads(replaced(bad))
    # no aliases: leaf 1 would be an input the program does not have
    with pytest.raises(hop.Error, match="hop.python does not match the program's inputs"):
        fuzz_saved._loads(replaced([]))
    assert fuzz_saved._loads(replaced([[1, 0]]))(a, a, c).tolist() == [5.0]


def _section(data):
    import fuzz_saved
    p = fuzz_saved.unwrap(data)
    return dict(fuzz_saved.sections(p)[1])[b"hop.python"]
