"""The guards of what a compiled function reads without naming it as a
global of its own: the builtins its code loads (len, range, float, abs),
which a global of its module defined later, or a builtin replaced, changes
for eager; and the iteration order of an equal set.  Each an eager-vs-
compiled differential test over several calls with the state changed
between them (test_compile_dynamo_scenarios2's harness)."""

import builtins

import numpy as np
import pytest

import hop
from test_compile_dynamo_scenarios2 import ARGS, own, namespace, plain, run


def _rebinder(g):
    def shadow(value):
        global len
        len = value  # noqa: F841 (the module's global: g's)

    def unshadow():
        global len
        del len

    return own(g, shadow), own(g, unshadow)


def len_shadowed_by_a_global_rebound_then_deleted():
    g = namespace()

    def f(x):
        return x * len(x)

    shadow, unshadow = _rebinder(g)

    def change(i):
        if i == 1:
            shadow(lambda v: 7)          # `global len; len = ...` in f's module
        elif i == 2:
            shadow(lambda v: -1)         # rebound again
        elif i == 3:
            unshadow()                   # `del len`: the builtin again
    return {"f": own(g, f), "change": change}


def range_and_float_of_a_builtins_dict_replaced():
    b = dict(vars(builtins))
    g = namespace(__builtins__=b, n=2)

    def f(x):
        t = x
        for i in range(n):
            t = t + float(i)
        return t

    def change(i):
        if i == 1:
            b["range"] = lambda k: [5, 6]   # builtins.range = ... (f's builtins)
        elif i == 2:
            b["float"] = lambda v: -v * 10
        elif i == 3:
            b["range"], b["float"] = range, float
    return {"f": own(g, f), "change": change}


def len_of_a_helper_inlined_from_another_module():
    other = namespace()
    other["__name__"] = __name__ + "_other"

    def helper_(x):
        return x + len(x)

    g = namespace(helper=own(other, helper_))

    def f(x):
        return helper(x) * 2

    shadow, unshadow = _rebinder(other)

    def change(i):
        if i == 1:
            shadow(lambda v: 100)        # the helper's module, not f's
        elif i == 3:
            unshadow()
    return {"f": own(g, f), "change": change}


def a_global_shadowing_a_builtin_at_trace_then_deleted():
    g = namespace(len=lambda v: 9)

    def f(x):
        return x * len(x)

    def change(i):
        if i == 2:
            del g["len"]
        elif i == 3:
            g["len"] = lambda v: 4
    return {"f": own(g, f), "change": change}


SCENARIOS = [
    len_shadowed_by_a_global_rebound_then_deleted,
    range_and_float_of_a_builtins_dict_replaced,
    len_of_a_helper_inlined_from_another_module,
    a_global_shadowing_a_builtin_at_trace_then_deleted,
]


@pytest.mark.parametrize("kind", sorted(ARGS))
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_a_builtin_shadowed_or_replaced_between_calls_is_seen(scenario, kind):
    want, _ = run(scenario, kind, False)
    got, _ = run(scenario, kind, True)
    for w, g in zip(want, got):
        assert g == w


def test_builtins_module_attribute_replaced_between_calls():
    def f(x):
        return x * abs(-3)

    cf = hop.compile(f)
    x = hop.tensor(np.array([1.0, 2.0], np.float32))
    assert plain(cf(x)) == plain(f(x))
    saved = builtins.abs
    try:
        builtins.abs = lambda v: 10
        want = plain(f(x))
        assert want == plain(x * 10)
        assert plain(cf(x)) == want
    finally:
        builtins.abs = saved
    assert plain(cf(x)) == plain(f(x)) == plain(x * 3)


def test_explain_names_the_builtin_guard_and_a_write_elsewhere_keeps_the_plan():
    g = namespace(counter=0)

    def f(x):
        return x * len(x)

    cf = hop.compile(own(g, f))
    x = hop.tensor(np.array([1.0, 2.0], np.float32))
    cf(x)
    assert ("environment guards:\n  builtins len: still the builtins' objects, no global "
            "shadows them\n") in cf.explain()
    for i in range(3):
        g["counter"] = i  # another global of the module moves its version: names re-read
        assert plain(cf(x)) == plain(x * 2)
    assert len(cf.graphs) == 1 and cf.eager_calls == 0


def _reorder(s):
    """Refills s with its own items in reverse (the same set object, equal
    to before, iterating in another order: colliding items land in other
    slots)."""
    before = list(s)
    s.clear()
    for x in reversed(before):
        s.add(x)
    assert list(s) != before


def an_equal_set_in_another_order_rebound_between_calls():
    g = namespace(S={8, 16, 24, 1})

    def f(x):
        out = x
        for i, v in enumerate(S):
            out = out + v * 10.0 ** i   # the order the function read
        return out, list(S)

    def change(i):
        if i in (1, 2):
            _reorder(g["S"])             # in place: the same, equal set
        elif i == 3:
            g["S"] = {1, 8, 16, 24}      # rebound to an equal set
    return {"f": own(g, f), "change": change}


@pytest.mark.parametrize("kind", sorted(ARGS))
def test_an_equal_set_in_another_order_is_seen(kind):
    want, _ = run(an_equal_set_in_another_order_rebound_between_calls, kind, False)
    got, _ = run(an_equal_set_in_another_order_rebound_between_calls, kind, True)
    for w, g in zip(want, got):
        assert g == w
