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
    # (with the code guard of the functions the plan ran, on the same C object)
    assert ("environment guards:\n  builtins len: still the builtins' objects, no global "
            "shadows them; the __code__ of test_explain_names_the_builtin_guard_and_a_write_"
            "elsewhere_keeps_the_plan.<locals>.f: still the code objects traced (not assigned "
            "since)\n") in cf.explain()
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


# The guard's cost and its reuse of plans (hop/_guards.py BuiltinNames, its
# check in C: python/_C/name_guard.c): a name read again when its module's
# globals moved, in C; a plan whose names hold again is used again.

def _x():
    return hop.tensor(np.array([1.0, 2.0], np.float32))


def f32(*values):
    """plain()'s answer for a float32 hop.Tensor of these values."""
    return ("tensor", "float32", list(values))


def test_a_global_added_shadowing_a_builtin_then_removed_reuses_the_first_plan():
    g = namespace()

    def f(x):
        return x * len(x)

    cf = hop.compile(own(g, f))
    x = _x()
    assert plain(cf(x)) == f32(2.0, 4.0)
    g["len"] = lambda v: 5                 # a global of f's module added between calls
    assert plain(cf(x)) == plain(own(g, f)(x)) == f32(5.0, 10.0)
    del g["len"]                           # removed again: the builtin, the first plan
    assert plain(cf(x)) == f32(2.0, 4.0)
    assert plain(cf(x)) == f32(2.0, 4.0)
    assert len(cf.graphs) == 2 and cf.recompiles == 1 and cf.eager_calls == 0


def test_builtins_len_replaced_and_restored_retraces_once_then_reuses_the_first_plan():
    items = [1.0, 2.0, 3.0]
    g = namespace(items=items)

    def f(x):
        return x * len(items)

    cf = hop.compile(own(g, f))
    x = _x()
    assert plain(cf(x)) == f32(3.0, 6.0)
    real = builtins.len
    try:
        builtins.len = lambda o: 7 if o is items else real(o)   # every other len as before
        assert plain(own(g, f)(x)) == f32(7.0, 14.0)
        assert plain(cf(x)) == f32(7.0, 14.0)
    finally:
        builtins.len = real
    assert plain(cf(x)) == f32(3.0, 6.0)
    assert plain(cf(x)) == f32(3.0, 6.0)
    assert len(cf.graphs) == 2 and cf.recompiles == 1 and cf.eager_calls == 0


def test_builtins_len_replaced_is_seen_by_a_plan_with_other_guards_too():
    w = hop.tensor(np.array([10.0, 20.0], np.float32))
    items = [1.0, 2.0, 3.0]
    g = namespace(items=items, w=w)

    def f(x):
        return x * w + len(items)          # a global tensor: the generated check runs

    cf = hop.compile(own(g, f))
    x = _x()
    assert plain(cf(x)) == f32(13.0, 43.0)
    real = builtins.len
    try:
        builtins.len = lambda o: 7 if o is items else real(o)
        assert plain(cf(x)) == plain(own(g, f)(x)) == f32(17.0, 47.0)
    finally:
        builtins.len = real
    assert plain(cf(x)) == f32(13.0, 43.0)
    assert len(cf.graphs) == 2 and cf.eager_calls == 0


_MODULE_LOOP = """
out = []
for i in range(12):
    if i == 8:
        len = lambda v: 5                  # the loop shadows the builtin from here on
    out.append(cf(x))
del len
out.append(cf(x))
"""


@pytest.mark.parametrize("other_guard", [False, True], ids=["names_only", "with_a_global"])
def test_a_module_level_loop_calling_the_compiled_function(other_guard):
    """The loop variable is a global of f's module: every iteration writes
    f's globals dict; the guard reads its names again and keeps the plan
    (one compile until the loop shadows len, one more after)."""
    g = namespace(w=hop.tensor(np.array([1.0, 1.0], np.float32)))

    def f(x):
        return (x * w if other_guard else x) * len(x)

    f = own(g, f)
    g.update(cf=hop.compile(f), x=_x())
    exec(_MODULE_LOOP, g)
    assert [plain(t) for t in g["out"]] == [f32(2.0, 4.0)] * 8 + [f32(5.0, 10.0)] * 4 + [f32(2.0, 4.0)]
    assert len(g["cf"].graphs) == 2 and g["cf"].recompiles == 1 and g["cf"].eager_calls == 0


def test_a_module_level_loop_checks_the_names_without_python_code():
    """The steady bound call of a plan whose only guard is the builtin names
    runs no Python function of hop's, even when every call finds the
    module's globals written (before: BuiltinNames.recheck read the names
    in Python on each such call, ~7,300 callgrind instructions)."""
    import sys

    g = namespace()

    def f(x):
        return x * float(len(x))

    g.update(cf=hop.compile(own(g, f)), x=_x(), out=[])
    exec("out.append(cf(x))", g)          # the trace: Python's, before the loop
    calls = []

    def profile(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_filename)
    loop = compile("for i in range(20):\n    out.append(cf(x))\n", "<module loop>", "exec")
    sys.setprofile(profile)
    try:
        exec(loop, g)
    finally:
        sys.setprofile(None)
    assert [plain(t) for t in g["out"]] == [f32(2.0, 4.0)] * 21
    assert [c for c in calls if c != "<module loop>"] == []
    assert len(g["cf"].graphs) == 1


class _Globals(dict):
    """A dict subclass as a function's globals: the guard reads its names
    through the dict protocol on every check (its tag is no proof)."""


def test_globals_of_a_dict_subclass_shadowing_a_builtin_between_calls():
    g = _Globals(namespace())

    def f(x):
        return x * len(x)

    f = own(g, f)
    cf = hop.compile(f)
    x = _x()
    assert plain(cf(x)) == f32(2.0, 4.0)
    g["len"] = lambda v: 5
    assert plain(cf(x)) == plain(f(x)) == f32(5.0, 10.0)
    del g["len"]
    assert plain(cf(x)) == plain(f(x)) == f32(2.0, 4.0)
    assert len(cf.graphs) == 2 and cf.eager_calls == 0


def test_name_guard_rejects_a_read_that_is_not_dicts_name_value_pinned():
    from hop import _C
    with pytest.raises(TypeError, match=r"_NameGuard: read 1 is not \(globals dict, builtins "
                                        r"dict, name str, value, pinned bool\) but \(\[\], "):
        _C._NameGuard((({}, {}, "len", len, True), ([], {}, "len", len, True)))
    with pytest.raises(TypeError, match=r"_bind_names\(call, names\): a Plan.bind_\* call and "
                                        r"a _NameGuard, not int and hop._C._NameGuard"):
        _C._bind_names(1, _C._NameGuard(()))


def test_name_guard_check_reads_what_moved():
    from hop import _C
    g, b = {}, {"len": len}
    guard = _C._NameGuard(((g, b, "len", len, True),))
    assert guard.dicts == (g, b) and guard.check() is True
    g["other"] = 1                          # another name: still holds
    assert guard.check() is True
    g["len"] = 2                            # shadowed
    assert guard.check() is False
    del g["len"]
    assert guard.check() is True
    b["len"] = abs                          # the builtin replaced
    assert guard.check() is False
    b["len"] = len
    assert guard.check() is True
    loose = _C._NameGuard(((g, b, "len", len, False),))   # not pinned (print's)
    b["len"] = abs
    assert loose.check() is True and guard.check() is False


# A plan with the names guard and other guards (bench/run.py's plan_op: the
# closure cell of its count and `range`): its bound C call (_C._EffectsCall)
# checks the names in C, then the generated check of the other guards, which
# has no term for the names (hop/_guards.py Guards.check_c).  Each change
# below is seen as eager sees it, and the plan of the names' first state is
# used again once they hold again.

def _counted(g, n):
    """f(x) = n times x * 2 + abs(-1.0), n a closure cell, f's globals g."""
    def make(n):
        def f(x):
            for _ in range(n):
                x = x * 2.0 + abs(-1.0)
            return x
        return f
    return own(g, make)(n)


def _c_path(cf):
    return type(cf._fast) is hop._C._EffectsCall


def test_a_plan_with_a_cell_guard_checks_the_builtin_names_in_c():
    import sys

    cf = hop.compile(_counted(namespace(), 2))
    x = _x()
    assert plain(cf(x)) == f32(7.0, 11.0)
    assert _c_path(cf), cf.explain()
    events = []

    def profile(frame, event, arg):
        events.append((event, frame.f_code.co_filename, getattr(arg, "__self__", None)))
    sys.setprofile(profile)
    try:
        got = cf(x)
    finally:
        sys.setprofile(None)
    assert plain(got) == f32(7.0, 11.0)
    # the cell's guard in the generated check; the names' check no call of Python's
    assert ("call", "<hop guards>", None) in events
    assert [e for e in events if isinstance(e[2], hop._C._NameGuard)] == []
    assert len(cf.graphs) == 1 and cf.eager_calls == 0


def test_range_shadowed_by_a_global_after_the_first_call_then_deleted_on_the_c_path():
    g = namespace()
    f = _counted(g, 2)
    cf = hop.compile(f)
    x = _x()
    assert plain(cf(x)) == f32(7.0, 11.0)
    assert _c_path(cf)
    g["range"] = lambda n: [0]              # a global of f's module shadows range
    assert plain(cf(x)) == plain(f(x)) == f32(3.0, 5.0)
    g["range"] = lambda n: [0, 1, 2]        # rebound
    assert plain(cf(x)) == plain(f(x)) == f32(15.0, 23.0)
    del g["range"]                          # the builtin again: the first plan
    assert plain(cf(x)) == plain(f(x)) == f32(7.0, 11.0)
    assert plain(cf(x)) == f32(7.0, 11.0)
    assert len(cf.graphs) == 3 and cf.recompiles == 2 and cf.eager_calls == 0


def test_builtins_abs_replaced_between_calls_on_the_c_path():
    f = _counted(namespace(), 2)
    cf = hop.compile(f)
    x = _x()
    assert plain(cf(x)) == f32(7.0, 11.0)
    assert _c_path(cf)
    real = builtins.abs
    try:
        builtins.abs = lambda v: 3.0 if v == -1.0 else real(v)   # every other abs as before
        assert plain(f(x)) == f32(13.0, 17.0)
        assert plain(cf(x)) == f32(13.0, 17.0)
    finally:
        builtins.abs = real
    assert plain(cf(x)) == plain(f(x)) == f32(7.0, 11.0)
    assert plain(cf(x)) == f32(7.0, 11.0)
    assert len(cf.graphs) == 2 and cf.recompiles == 1 and cf.eager_calls == 0


def test_the_cell_guard_still_fails_when_the_names_hold():
    def make():
        n = 2

        def f(x):
            return x * float(n)

        def set_n(v):
            nonlocal n
            n = v
        return f, set_n
    f, set_n = make()
    cf = hop.compile(own(namespace(), f))
    x = _x()
    assert plain(cf(x)) == f32(2.0, 4.0)
    assert _c_path(cf)
    set_n(3)
    assert plain(cf(x)) == plain(f(x)) == f32(3.0, 6.0)
    assert len(cf.graphs) == 2 and cf.eager_calls == 0


class _Box:
    pass


def test_a_translated_plan_with_effects_checks_a_shadowed_builtin():
    """The other _EffectsCall: a function with a Python effect (an attribute
    written) whose code names float; its plan's bound call checks the names
    in C too."""
    g = namespace()
    box = _Box()

    def make(n, box):
        def f(x):
            y = x * float(n)
            box.last = y.sum()
            return y
        return f
    f = own(g, make)(2, box)
    cf = hop.compile(f)
    x = _x()
    assert plain(cf(x)) == f32(2.0, 4.0) and plain(box.last) == plain(hop.tensor(6.0))
    assert plain(cf(x)) == f32(2.0, 4.0)
    assert _c_path(cf) and cf._fast is not None, cf.explain()
    g["float"] = lambda v: 10.0             # a global shadows float
    assert plain(cf(x)) == f32(10.0, 20.0) and plain(box.last) == plain(hop.tensor(30.0))
    assert plain(f(x)) == f32(10.0, 20.0)
    del g["float"]
    assert plain(cf(x)) == f32(2.0, 4.0) and plain(box.last) == plain(hop.tensor(6.0))
    assert len(cf.graphs) == 2 and cf.eager_calls == 0
