"""hop.compile's frame translator (issue 28, hop/_frame.py): Python effects
of a compiled function recorded while its bytecode is translated and
replayed by every call, in order, with the plan's values; ints a function
assigns to a nonlocal or global lifted to plan inputs (no recompile per
call); what the translator cannot run falls back to eager whole (issue 24).
Scenarios after Dynamo's test_misc/test_functions side-effect tests, each
eager against compiled: results, effects and their order."""

import contextlib
import inspect
import io
import os
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest

import hop

X = hop.tensor([1.0, 2.0, 3.0])


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    np.testing.assert_array_equal(got, want)


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args)


def test_a_nonlocal_counter_is_an_input_of_one_plan_with_no_recompile_per_call():
    n = 0

    def f(x):
        nonlocal n
        n += 1
        return x * n

    cf = hop.compile(f)
    for k in range(1, 21):
        same(quiet(cf, X), X.numpy() * k)
        assert n == k and type(n) is int
    assert len(cf.graphs) == 1 and cf.recompiles == 0 and cf.eager_calls == 0
    text = cf.explain()
    assert "lifted to plan inputs (their new values are outputs): nonlocal n" in text
    assert f"nonlocal n = at test_compile_frames.py:{line_of(f, 'n += 1')}" in text


def test_a_traced_values_text_made_by_an_operator_is_eagers_text_never_the_proxys():
    # `"%s" % y` runs str.__mod__ from the translator's loop itself (a
    # BINARY_OP that makes a new value): that is the user's code asking for
    # the text, so it is a break there, never "Tensor(proxy add: ...)"
    log = []

    def f(x):
        y = x + 1
        log.append("y = %s" % y)
        return y * 2

    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = [cf(X), cf(X)]
    want = f(X)
    for g in got:
        same(g, want.numpy())
    assert log == [f"y = {X + 1}"] * 3
    assert "proxy" not in "".join(log)


def test_a_training_step_appends_its_loss_and_bumps_a_step_counter_with_one_plan():
    losses, step = [], 0
    w = hop.tensor([0.5, -0.25, 2.0])

    def train(x):
        nonlocal step
        loss = ((x * w - 1.0) ** 2).sum()
        losses.append(loss)
        step += 1
        return loss * step

    want_losses = [((X.numpy() * k * w.numpy() - 1.0) ** 2).sum() for k in range(1, 31)]
    cf = hop.compile(train)
    for k in range(1, 31):
        same(quiet(cf, X * k), np.float32(want_losses[k - 1] * k))
    assert step == 30 and len(losses) == 30
    for got, want in zip(losses, want_losses):
        assert type(got) is hop.Tensor
        same(got, np.float32(want))
    # the list is only appended to: its length is not guarded
    assert len(cf.graphs) == 1 and cf.recompiles == 0 and cf.eager_calls == 0


G = None
H = 0


def test_a_global_assigned_then_read_in_the_same_call_sees_the_new_value():
    def f(x):
        global G
        G = x.sum()
        return G * 2

    cf = hop.compile(f)
    for k in (1, 2, 3):
        same(quiet(cf, X * k), np.float32(12 * k))
        assert type(G) is hop.Tensor and float(G) == 6 * k
    assert cf.recompiles == 0


def test_attribute_and_item_writes_on_preexisting_objects_are_replayed_in_order():
    box = types.SimpleNamespace(v=None, n=0)
    table = {}
    out = io.StringIO()

    def f(x):
        box.v = x + 1
        table["sum"] = box.v.sum()
        print("step", table["sum"], sep=":")
        box.v = box.v * 2
        return box.v

    with contextlib.redirect_stdout(out):
        for k in (1, 2):
            cf = hop.compile(f) if k == 1 else cf
            same(quiet(cf, X * k), (X.numpy() * k + 1) * 2)
            same(box.v, (X.numpy() * k + 1) * 2)
            same(table["sum"], np.float32((X.numpy() * k + 1).sum()))
    assert out.getvalue() == "step:hop.tensor(9.)\nstep:hop.tensor(15.)\n"
    text = cf.explain()
    assert "side effects replayed after each call (4):" in text
    for what in ("SimpleNamespace.v = at", "dict[...] = at", "print() at"):
        assert what in text


def test_an_effect_in_an_inlined_helper_and_print_keep_eagers_order():
    events = []

    def log(what, v):
        events.append(what)
        print(what, v)

    def f(x):
        a = x * 2
        log("a", a.sum())
        b = a + 1
        log("b", (b * b).sum())
        return b

    eager_out = io.StringIO()
    with contextlib.redirect_stdout(eager_out):
        want = [f(X * k) for k in (1, 2)]
    want_events = list(events)
    events.clear()
    cf = hop.compile(f)
    got_out = io.StringIO()
    with contextlib.redirect_stdout(got_out):
        got = [quiet(cf, X * k) for k in (1, 2)]
    assert events == want_events == ["a", "b", "a", "b"]
    assert got_out.getvalue() == eager_out.getvalue()
    for g, w in zip(got, want):
        same(g, w)
    assert cf.eager_calls == 0 and cf.recompiles == 0


def test_an_argument_dict_written_by_the_function_is_the_callers_own_on_every_call():
    def f(x, d):
        d["out"] = x * 3
        return x

    cf = hop.compile(f)
    d1, d2 = {}, {}
    cf(X, d1)
    cf(X * 2, d2)
    same(d1["out"], X.numpy() * 3)
    same(d2["out"], X.numpy() * 6)


def test_a_nonlocal_list_mutated_then_read_is_guarded_and_stays_eager_equal():
    seen = []

    def f(x):
        seen.append(1)
        return x * len(seen)

    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(1, 12):
            same(cf(X), X.numpy() * k)
    assert seen == [1] * 11


def test_what_the_translator_cannot_run_falls_back_to_eager_whole_and_explain_says_where():
    import threading
    count = 0
    lock = threading.Lock()

    def f(x):
        nonlocal count
        with lock:  # a library context manager: its __enter__ would run once
            count += 1
        return x + count

    cf = hop.compile(f)
    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        same(cf(X), X.numpy() + 1)
    same(cf(X), X.numpy() + 2)
    assert count == 2 and cf.eager_calls == 2 and not lock.locked()
    assert "the frame translator, which replays effects, stopped at test_compile_frames.py:" \
        in cf.explain()
    assert "a with block over a lock, whose __enter__ and __exit__ hop cannot follow" \
        in cf.explain()


def test_a_try_block_whose_handler_is_not_taken_compiles_with_its_effects():
    count = 0

    def f(x):
        nonlocal count
        try:
            count += 1
        except ValueError:
            count = -100
        return x + count

    cf = hop.compile(f)
    for k in (1, 2, 3):
        same(quiet(cf, X), X.numpy() + k)
    assert count == 3 and cf.eager_calls == 0 and cf.recompiles == 0


def test_fullgraph_compiles_replayable_effects_and_raises_before_any_effect_otherwise():
    n = 0

    def f(x):
        nonlocal n
        n += 1
        return x - n

    same(hop.compile(f, fullgraph=True)(X), X.numpy() - 1)
    assert n == 1

    def g(x):
        nonlocal n
        n += 1
        return x * len(str(x.sum()))

    with pytest.raises(hop.TraceError):
        hop.compile(g, fullgraph=True)(X)
    assert n == 1


def test_user_code_run_by_a_library_call_is_not_translated_but_falls_back():
    hits = []

    class Acc:
        def __add__(self, other):
            hits.append(other)
            return self

    acc = Acc()

    def f(x):
        hits.append(0)
        acc + 1  # Acc.__add__: CPython would run it, unseen by the translator
        return x * 2

    cf = hop.compile(f)
    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        same(cf(X), X.numpy() * 2)
    same(cf(X), X.numpy() * 2)
    assert hits == [0, 1, 0, 1]


# ------------------------------------------------------------ graph breaks

def test_a_conversion_breaks_the_graph_and_the_rest_resumes_compiled():
    def h(x):
        s = x.sum()
        vals = x.tolist()  # needs the values: a break
        return x * len(vals) + s

    ch = hop.compile(h)
    for k in (1, 2, 3):
        same(quiet(ch, X * k), h(X * k))
    text = ch.explain()
    site = f"test_compile_frames.py:{line_of(h, 'x.tolist()')}"
    assert f"graph break at {site} (CALL): cannot convert a traced value to a Python list" in text
    assert "resume at instruction" in text and "hop.compile(h_resume_at_" in text
    assert ch.eager_calls == 0 and len(ch.graphs) == 1


def test_a_decision_on_an_int_item_breaks_the_graph_as_bool_of_a_tensor_does():
    # `.item()` of an int or bool tensor is an unbacked SymInt; Python's
    # truth of it (if, while, bool(), int(), a comparison) needs its value.
    # It raised DataDependentError under hop.compile where eager runs; it is
    # a conversion now: a break, the rest resumed compiled.
    def f(x):
        if (x.sum() > 1).item():
            return x
        return -x

    def g(x):
        n = 0
        while (x.sum() > 1).item():
            x = x / 2
            n += 1
        return x, n

    def h(x):
        k = (x > 1).sum().item()
        return x * int(k) + (k >= 2)

    for fn in (f, g, h):
        cf = hop.compile(fn)
        for k in (1.0, -1.0, 4.0):
            got, want = quiet(cf, X * k), fn(X * k)
            if fn is g:
                same(got[0], want[0])
                assert got[1] == want[1] and type(got[1]) is int
            else:
                same(got, want)
        assert "resume at instruction" in cf.explain(), fn.__name__
    cf = hop.compile(f)
    quiet(cf, X)
    site = f"test_compile_frames.py:{line_of(f, '.item():')}"
    assert f"graph break at {site} (POP_JUMP_FORWARD_IF_FALSE)" in cf.explain()
    assert cf.eager_calls == 0
    # One graph, so the errors they always were: fullgraph and hop.trace.
    msg = r"bool\(SymInt\): data-dependent: cannot decide u0 != 0"
    with pytest.raises(hop.DataDependentError, match=msg):
        hop.compile(f, fullgraph=True)(X)
    with pytest.raises(hop.DataDependentError, match=msg):
        hop.trace(f, X)
    with pytest.raises(hop.DataDependentError, match=r"int\(u0\): the value depends on data"):
        hop.trace(h, X)


def _prints_in_helper(v):
    print("helper", v.shape)
    return v * 2


_BODY_PRINTS = {
    "wrap": lambda x: hop.wrap(lambda v: (print("w"), v + 1)[1], x) * 2,
    "helper": lambda x: hop.wrap(lambda v: _prints_in_helper(v), x),
    "map": lambda x: hop.map(lambda r: (print("row"), r * 2)[1], x.reshape(3, 1)),
    "cond": lambda x: hop.cond(x.sum() > 0, lambda v: (print("T"), v)[1], lambda v: -v, (x,)),
    "fori": lambda x: hop.fori_loop(0, 3, lambda i, c: (print("it", i), c + 1)[1], x),
    "nested": lambda x: hop.wrap(lambda v: hop.wrap(lambda u: (print("in"), u)[1], v), x),
}


@pytest.mark.parametrize("name", sorted(_BODY_PRINTS))
def test_a_hop_body_that_prints_prints_on_every_compiled_call_as_eagerly(name):
    # The plan of a HOP call whose body prints printed once, at trace time,
    # and never again (eager prints on every call, on every turn of a loop):
    # the HOP call is a break now, run in Python on every call.
    f = _BODY_PRINTS[name]
    x = hop.ones(3)

    def run(fn):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            results = [fn(x) for _ in range(3)]
        return out.getvalue(), results

    want, got = run(f), run(hop.compile(f))
    assert got[0] == want[0] and want[0]
    for g, w in zip(got[1], want[1]):
        same(g, w)
    with pytest.raises(hop.TraceError, match=r"graph break at test_compile_frames.py:\d+ "
                                             r"\(CALL\): the .* of hop\.\w+ may call print\(\) "
                                             r"\(test_compile_frames.py:\d+\), which a plan "
                                             r"cannot repeat on every call"):
        hop.compile(f, fullgraph=True)(x)
    # hop.trace is one graph: the print runs once, while tracing (a loop's
    # index prints as its symbol)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        gm = hop.trace(f, x)
        gm(x)
        gm(x)
    assert len(out.getvalue().splitlines()) == 1


def test_effects_before_a_break_are_replayed_before_the_instruction_runs():
    events = []
    n = 0

    def f(x):
        nonlocal n
        n += 1
        events.append(n)
        y = x * n
        text = str(y.sum())  # a break: the effects above happen first
        events.append(text)
        return y + len(text)

    def run(fn, calls):
        nonlocal n
        n = 0
        events.clear()
        out = [fn(X * k) for k in calls]
        return out, list(events), n

    want = run(f, (1, 2, 3))
    cf = hop.compile(f)
    got = run(cf, (1, 2, 3))
    for g, w in zip(got[0], want[0]):
        same(g, w)
    assert got[1:] == want[1:]
    assert got[1] == [1, "hop.tensor(6.)", 2, "hop.tensor(24.)", 3, "hop.tensor(54.)"]
    assert cf.eager_calls == 0


def test_a_data_dependent_if_after_an_effect_resumes_on_the_side_it_took():
    # (a side with an effect of its own: the `if` stays a break; one whose
    # sides have none is a cond, test_compile_frame_conds.py)
    log = []

    def f(x):
        log.append(1)
        s = x.sum()
        if s > 0:
            log.append(2)
            return x * 2
        return x - 1

    cf = hop.compile(f)
    for v in (X, -X, X * 3, -X * 2):
        same(quiet(cf, v), f(v))
    assert log == [1, 2, 1, 2, 1, 1, 1, 2, 1, 2, 1, 1]
    assert "graph break at test_compile_frames.py:" in cf.explain()


def test_fullgraph_raises_at_the_first_break_naming_it_before_any_effect():
    hits = []

    def f(x):
        hits.append(1)
        return x * len(str(x.sum()))

    with pytest.raises(hop.TraceError) as e:
        hop.compile(f, fullgraph=True)(X)
    site = f"test_compile_frames.py:{line_of(f, 'str(x.sum())')}"
    assert str(e.value).startswith(f"hop.compile(fullgraph=True): f has a graph break (nothing "
                                   f"ran): graph break at {site} (CALL): str() of a traced value")
    assert hits == []


def test_a_break_inside_a_loop_runs_the_loop_in_python_and_the_rest_compiled():
    out = []

    def f(x):
        y = x * 2
        for i in range(2):
            out.append(i)
            y = y + len(str(y.sum()))
        return y * 3

    cf = hop.compile(f)
    for k in (1, 2, 3):
        out.clear()
        want = f(X * k)
        want_out = list(out)
        out.clear()
        same(quiet(cf, X * k), want)
        assert out == want_out == [0, 1]
    assert cf.eager_calls == 0 and cf.recompiles == 0 and len(cf.graphs) == 1
    assert f"inside the loop at test_compile_frames.py:{line_of(f, 'for i in')}, which runs " \
           f"in Python" in cf.explain()



def test_a_containers_method_bound_elsewhere_is_recorded_not_run_while_translating():
    log = []
    add = log.append

    def f(x):
        y = x * 2
        add(y.sum())
        return y

    cf = hop.compile(f)
    for k in (1, 2, 3):
        same(quiet(cf, X * k), X.numpy() * 2 * k)
    assert [float(v) for v in log] == [12.0, 24.0, 36.0]
    assert cf.recompiles == 0 and cf.eager_calls == 0


def test_a_compiled_function_called_inside_a_translated_one_never_runs_unseen():
    log = []

    def inner(x):
        log.append(1)
        return x * 2

    ci = hop.compile(inner)

    def outer(x):
        log.append(0)
        return ci(x) + 1

    co = hop.compile(outer)
    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        same(co(X), X.numpy() * 2 + 1)
    same(co(X), X.numpy() * 2 + 1)
    assert log == [0, 1, 0, 1]


def test_a_callable_object_and_a_class_of_the_users_are_inlined_and_their_writes_replayed():
    class Scale:
        def __init__(self, k):
            self.k = k
            self.calls = 0

        def __call__(self, x):
            self.calls += 1  # an attribute write on an object made before the call
            return x * self.k

    s = Scale(3.0)

    def f(x):
        t = Scale(2.0)  # made here: its writes happen while translating, on its own object
        return s(x) + t(x)

    cf = hop.compile(f)
    for k in (1, 2, 3):
        same(quiet(cf, X * k), X.numpy() * k * 5)
    assert s.calls == 3 and cf.eager_calls == 0


# ---------------------------------------------------- explain(), one per kind

K_GLOBAL = 0
K_GONE = 1


class _Obj:
    pass


def test_explain_names_every_replayed_effect_kind_in_program_order():
    obj, items, things, seen = _Obj(), {"a": 1}, [0], set()
    obj.gone = 1
    n = 0

    def f(x):
        nonlocal n
        global K_GLOBAL, K_GONE
        n = 5                     # nonlocal
        K_GLOBAL = 7              # global
        del K_GONE                # del global
        obj.v = x.sum()           # attribute
        del obj.gone              # del attribute
        items["b"] = x * 2        # item
        del items["a"]            # del item
        things.append(1)          # list method
        seen.add(3)               # set method
        setattr(obj, "w", 4)      # setattr
        print("p", n)             # print
        return x

    cf = hop.compile(f)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        same(quiet(cf, X), X.numpy())
    assert out.getvalue() == "p 5\n"
    assert n == 5 and K_GLOBAL == 7 and "K_GONE" not in globals()
    assert float(obj.v) == 6.0 and not hasattr(obj, "gone") and obj.w == 4
    assert list(items) == ["b"] and things == [0, 1] and seen == {3}
    at = {k: f"test_compile_frames.py:{line_of(f, k)}" for k in (
        "n = 5", "K_GLOBAL = 7", "del K_GONE", "obj.v =", "del obj.gone", 'items["b"]',
        'del items["a"]', "things.append", "seen.add", "setattr(", "print(")}
    want = [f"nonlocal n = at {at['n = 5']}", f"global K_GLOBAL = at {at['K_GLOBAL = 7']}",
            f"del global K_GONE at {at['del K_GONE']}", f"_Obj.v = at {at['obj.v =']}",
            f"del .gone at {at['del obj.gone']}", "dict[...] = at " + at['items["b"]'],
            "del dict[...] at " + at['del items["a"]'],
            f"list.append() at {at['things.append']}",
            f"set.add() at {at['seen.add']}", f"_Obj.w = at {at['setattr(']}",
            f"print() at {at['print(']}"]
    text = cf.explain()
    assert "side effects replayed after each call (11):\n" + \
        "".join(f"  {w}\n" for w in want) in text


@pytest.mark.parametrize("kind", ["float", "tolist", "fstring", "if", "print-object"])
def test_explain_names_each_break_reason_with_its_instruction(kind):
    class Opaque:
        pass

    def f(x):
        s = x.sum()
        if kind == "float":
            v = float(s)
        elif kind == "tolist":
            v = len(x.tolist())
        elif kind == "fstring":
            v = len(f"{s}")
        elif kind == "if":
            # (a print on one side: the `if` stays a break, not a cond)
            v = 1 if s > 0 else print("not positive") or 2
        else:
            print(Opaque)
            v = 0
        return x + v

    cf = hop.compile(f)
    with contextlib.redirect_stdout(io.StringIO()):
        same(quiet(cf, X), f(X))
    want = {"float": "(CALL): cannot convert a traced value to a Python float",
            "tolist": "(CALL): cannot convert a traced value to a Python list",
            "fstring": "(FORMAT_VALUE): the text of a traced value (an f-string or format()) is "
                       "known only when the plan runs",
            "if": "(POP_JUMP_FORWARD_IF_FALSE): Python control flow on a traced value",
            "print-object": "(CALL): print() of a type: hop replays print() of numbers, "
                            "strings and traced values"}[kind]
    text = cf.explain()
    assert "graph break at test_compile_frames.py:" in text
    assert want in text, text


# ------------------------------------ Dynamo's side-effect scenarios, ported

G_TENSOR = hop.zeros(3)


def test_dynamo_global_tensor_accumulated_every_call():
    # test_functions: a global tensor rebound from itself each call
    def f(x):
        global G_TENSOR
        G_TENSOR = G_TENSOR + x
        return G_TENSOR * 2

    global G_TENSOR
    G_TENSOR = hop.zeros(3)
    cf = hop.compile(f)
    for k in (1, 2, 3):
        out = quiet(cf, X)
        same(G_TENSOR, X.numpy() * k)
        same(out, X.numpy() * k * 2)
    assert cf.recompiles == 0 and type(G_TENSOR) is hop.Tensor


def test_dynamo_list_argument_appended_and_returned_is_the_callers_list():
    # test_repros: a list argument mutated and returned (f(l) is l)
    def f(x, lst):
        lst.append(x * 2)
        return lst

    cf = hop.compile(f)
    a, b = [], [hop.ones(3)]
    assert quiet(cf, X, a) is a and len(a) == 1
    same(a[0], X.numpy() * 2)
    assert cf(X * 2, b) is b and len(b) == 2
    same(b[1], X.numpy() * 4)
    assert not any(hop._C._is_proxy(t) for t in a + b)


def test_dynamo_dict_item_set_and_popped_in_order():
    # test_misc: dict mutations replayed in program order
    def f(x, d):
        d["a"] = x + 1
        d.pop("b")
        d["c"] = d["a"] * 2
        return x

    d = {"b": 0}
    hop.compile(f)(X, d)
    assert list(d) == ["a", "c"]
    same(d["c"], (X.numpy() + 1) * 2)


def test_dynamo_closure_counter_read_after_its_update_in_the_same_call():
    # test_misc test_closure_*: a nonlocal updated, then read by an inlined helper
    count = 10

    def helper(x):
        return x + count

    def f(x):
        nonlocal count
        count = count - 1
        return helper(x)

    cf = hop.compile(f)
    for k in (9, 8, 7):
        same(quiet(cf, X), X.numpy() + k)
    assert count == 7 and cf.recompiles == 0


def test_dynamo_graph_break_in_a_called_helper_breaks_the_caller_at_the_call():
    # test_repros: a break inside an inlined function: the caller's graph
    # ends before the call's statement, the call runs in Python, the rest
    # of the caller resumes compiled
    log = []

    def helper(x):
        log.append(float(x.sum()))
        return x * 2

    def f(x):
        y = x - 1
        z = helper(y) + 1
        return z * y

    cf = hop.compile(f)
    for k in (1, 2, 3):
        same(quiet(cf, X * k), f(X * k))
    assert log == [3.0, 3.0, 9.0, 9.0, 15.0, 15.0]
    assert cf.eager_calls == 0 and cf.recompiles == 0
    text = cf.explain()
    assert f"graph break at test_compile_frames.py:{line_of(helper, 'float(')} (CALL): cannot " \
           f"convert a traced value to a Python float" in text
    assert f"in {helper.__qualname__}() (from the call at test_compile_frames.py:" \
           f"{line_of(f, 'helper(y)')}, which runs in Python)" in text

OP_TABLE = {}


def test_a_library_function_that_writes_its_argument_is_never_run_while_translating():
    import operator

    def f(x):
        operator.setitem(OP_TABLE, "k", x * 2)
        return x

    OP_TABLE.clear()
    cf = hop.compile(f)
    same(cf(X), X.numpy())
    assert type(OP_TABLE["k"]) is hop.Tensor and not hop._C._is_proxy(OP_TABLE["k"])
    same(OP_TABLE["k"], X.numpy() * 2)
    same(cf(X * 3), X.numpy() * 3)
    same(OP_TABLE["k"], X.numpy() * 6)


def test_a_translation_that_fails_runs_the_call_eagerly_counted_and_fullgraph_refuses_first():
    # the body's write into its operand is an effect the translator takes on,
    # and its translation raises (hop.numpy refuses writing a body's operand):
    # eager answers and writes the caller's array, counted as an eager call;
    # fullgraph=True raises before anything ran
    def f(x):
        def body(c):
            c[0] = 1
            return c
        return hop.map(body, x)
    mine, theirs = np.ones((2, 3)) * 5, np.ones((2, 3)) * 5
    cf = hop.compile(f)
    with pytest.warns(RuntimeWarning, match="f runs eagerly"):
        got = cf(mine)
    want = f(theirs)
    same(got, want)
    same(mine, theirs)
    assert cf.eager_calls == 1 and "runs eagerly (1 so far)" in cf.explain()
    untouched = np.ones((2, 3)) * 5
    strict = hop.compile(f, fullgraph=True)
    with pytest.raises(hop.TraceError, match=r"(?s)nothing ran.*writes an item of an argument"):
        strict(untouched)
    same(untouched, np.ones((2, 3)) * 5)
    assert strict.eager_calls == 0


def test_an_ndarray_argument_written_in_place_beside_replayed_effects_compiles():
    # hop.numpy writes the argument back (its write-back slots); the nonlocal
    # counter is lifted and the list append replayed: eager's results,
    # arrays and effects, no eager call, one plan
    def make():
        n, log = 0, []

        def f(x):
            nonlocal n
            n += 1
            x += 1
            x[0] = n
            log.append(n)
            return x * 2
        return f, log, lambda: n
    f, log, count = make()
    cf = hop.compile(f)
    g, glog, gcount = make()
    for k in range(3):
        theirs, mine = np.arange(3.0), np.arange(3.0)
        want = g(theirs)
        got = quiet(cf, mine)
        same(got, want)
        same(mine, theirs)
        assert count() == gcount() == k + 1 and log == glog == list(range(1, k + 2))
    assert cf.eager_calls == 0 and len(cf.graphs) == 1 and cf.recompiles == 0


_LAZY_IMPORT = """
import sys, warnings
import numpy as np
import hop
class Finder:
    def find_spec(self, name, path=None, target=None):
        return None
sys.meta_path.insert(0, Finder())
N = 0
def f(x):
    global N
    N += 1
    x += 1
    return x * 2
lazy = [m for m in ("hop.numpy._creation", "hop.numpy") if m in sys.modules]
warnings.simplefilter("error")
a = np.arange(3.0)
cf = hop.compile(f)
print(cf(a).tolist(), a.tolist(), N, cf.eager_calls, lazy)
"""


def test_a_finder_of_sys_meta_path_is_not_user_code_while_translating(tmp_path):
    # hop.numpy imports lazily while the first translation runs; every
    # finder of sys.meta_path is asked (setuptools' _distutils_hack lives in
    # dist-packages, i.e. "user code" to the call guard): the translation
    # went on only once it was seen as the import system
    script = tmp_path / "lazy_import.py"
    script.write_text(_LAZY_IMPORT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "[2.0, 4.0, 6.0] [1.0, 2.0, 3.0] 1 0 []"


@pytest.mark.parametrize("kind", ["for", "while", "with", "call", "genexpr"])
def test_explain_names_each_break_kind_issue_28_resumes_around(kind):
    # issue 28: a break the root frame cannot end its graph at runs the
    # statement around it in Python; explain() says which and where
    log = []

    class Block:
        def __enter__(self):
            log.append("enter")

        def __exit__(self, *exc):
            log.append("exit")

    def helper(v):
        return v * len(str(v.sum()))

    def f(x):
        y = x * 2
        if kind == "for":
            for i in range(2):
                y = y + len(str(y.sum()))
        elif kind == "while":
            while y.sum() < 50:
                y = y * 2
        elif kind == "with":
            with Block():
                y = y + len(str(y.sum()))
        elif kind == "call":
            y = helper(y)
        else:
            y = y + sum(len(str(v.sum())) for v in (y, x))
        return y - 1

    cf = hop.compile(f)
    for k in (1, 2):
        same(quiet(cf, X * k), f(X * k))
    assert cf.eager_calls == 0
    text = cf.explain()
    site = {"for": "for i in", "while": "while y.sum()", "with": "with Block()",
            "call": "helper(y)", "genexpr": "sum(len("}[kind]
    where = f"test_compile_frames.py:{line_of(f, site)}"
    want = {"for": f"; inside the loop at {where}, which runs in Python",
            "while": f"; inside the loop at {where}, which runs in Python",
            "with": "; inside the with block, which runs in Python",
            "call": f"; in {helper.__qualname__}() (from the call at {where}, which runs in "
                    f"Python)",
            "genexpr": f"<genexpr>() (from the call at {where}, which runs in Python)"}[kind]
    assert want in text, text
    assert "graph break at test_compile_frames.py:" in text
