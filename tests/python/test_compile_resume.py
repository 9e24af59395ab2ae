"""hop.compile's graph breaks where the root frame cannot end its graph at
the breaking instruction itself (issue 28, hop/_frame.py: _Hoist): inside a
for or while loop, inside a with block, inside a function the compiled one
calls.  The translation is done again to end before the statement around
the break; that statement (the loop, the with block, the call) runs in
Python and the rest of the function resumes compiled.  try/except/finally
and with blocks are translated; their handlers, when an exception is
raised, run in the concrete interpreter as CPython runs them.  Scenarios
after Dynamo's test_misc / test_functions / test_repros, each eager against
compiled: results, raised errors, effects and their order."""

import contextlib
import io
import warnings

import numpy as np
import pytest

import hop
from hop import _effects
from test_compile_frames import X, line_of, quiet, same  # one copy of the helpers


def outcome(fn, *args):
    """(result or the error raised, printed text) of one call."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            r = fn(*args)
            r = ("ok", np.asarray(r).tolist() if isinstance(r, hop.Tensor) else r)
        except Exception as e:
            r = ("error", type(e).__name__, str(e))
    return r, out.getvalue()


def against_eager(f, args_list, log, compiled=None):
    """Calls f eagerly then compiled on each args, the log cleared before
    each: equal outcomes and logs.  Returns the CompiledFunction."""
    cf = compiled or hop.compile(f)
    for args in args_list:
        log.clear()
        want = outcome(f, *args)
        want_log = list(log)
        log.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = outcome(cf, *args)
        assert got == want, (got, want)
        assert log == want_log, (log, want_log)
    return cf


class Logged:
    """A context manager of the user's: logs enter and exit (with the
    exception type), suppresses what `suppress` names."""

    def __init__(self, log, suppress=()):
        self.log = log
        self.suppress = suppress

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, typ, exc, tb):
        self.log.append(("exit", typ.__name__ if typ else None))
        return typ is not None and issubclass(typ, self.suppress)


# ------------------------------------------------------------------ loops

def test_a_break_in_a_for_loop_resumes_compiled_after_it_with_each_turns_effects_in_order():
    # test_misc test_graph_break_in_loop-like: prints and appends inside
    log = []

    def f(x):
        y = x * 2
        for i in range(3):
            log.append(("turn", i))
            print("sum", float(y.sum()))
            y = y + i
        log.append("after")
        return y - 1

    cf = against_eager(f, [(X,), (X * 2,), (X,)], log)
    assert cf.eager_calls == 0 and cf.recompiles == 0 and len(cf.graphs) == 1


def test_a_data_dependent_while_loop_runs_in_python_between_compiled_parts():
    log = []

    def f(x):
        y = x * 2
        n = 0
        while y.sum() < 100:
            y = y * 2
            n += 1
        log.append(n)
        return y + n

    cf = against_eager(f, [(X,), (X * 10,), (X * 0.5,), (X * 100,)], log)
    assert cf.eager_calls == 0
    assert f"inside the loop at test_compile_resume.py:{line_of(f, 'while y.sum()')}" \
           in cf.explain()


def test_a_break_in_a_nested_loop_runs_the_outer_loop_in_python():
    log = []

    def f(x):
        for i in range(2):
            for j in range(2):
                x = x + float(x[0]) * (i - j)
                log.append((i, j))
        return x

    cf = against_eager(f, [(X,), (X * 3,)], log)
    assert cf.eager_calls == 0
    assert f"inside the loop at test_compile_resume.py:{line_of(f, 'for i in')}" in cf.explain()


def test_a_return_and_a_break_statement_inside_the_python_run_loop_are_eagers():
    def f(x, limit):
        acc = x
        for i in range(10):
            if float(acc.sum()) > limit:
                break
            acc = acc * 2
        else:
            return acc - 1
        for v in [1.0, 2.0, 3.0]:
            if float(acc[0]) >= v:
                return acc + v
        return acc

    log = []
    cf = against_eager(f, [(X, 50.0), (X, 1e9), (X, 5.0), (X * -1, 1.0)], log)
    assert cf.eager_calls == 0


def test_a_loop_appending_to_a_global_list_needs_no_guard_on_it_no_recompile_per_call():
    # the plan before the loop does not read LOSSES: its length is no guard
    def f(x):
        y = x * 2
        for i in range(2):
            LOSSES.append(float(y.sum()) + i)
        return y

    LOSSES.clear()
    cf = hop.compile(f)
    for k in (1, 2, 3, 4):
        same(quiet(cf, X * k), X.numpy() * 2 * k)
    assert LOSSES == [12.0, 13.0, 24.0, 25.0, 36.0, 37.0, 48.0, 49.0]
    assert cf.recompiles == 0 and cf.eager_calls == 0


LOSSES = []


# ---------------------------------------------------------- called functions

def test_a_break_two_calls_deep_breaks_the_root_frame_at_its_call():
    # test_repros: a print of an object two inlined frames down
    log = []

    class Opaque:
        def __repr__(self):
            return "<opaque>"

    def inner(x):
        print("inner", Opaque())
        log.append("inner")
        return x + 1

    def middle(x):
        log.append("middle")
        return inner(x) * 2

    def f(x):
        y = x * 3
        log.append("f")
        z = middle(y)
        return z + y

    cf = against_eager(f, [(X,), (X * 2,)], log)
    assert cf.eager_calls == 0
    text = cf.explain()
    assert f"graph break at test_compile_resume.py:{line_of(inner, 'print(')} (CALL): " \
           f"{Opaque.__qualname__}() may change state hop cannot see (a Python effect on this line); in " \
           f"{inner.__qualname__}() (from the call at test_compile_resume.py:" \
           f"{line_of(f, 'middle(y)')}, which runs in Python)" in text


def test_a_helper_that_breaks_after_changing_a_list_the_caller_made_changes_it_once():
    # the first translation ran the helper up to its break (the append to
    # the caller's own list happened then, for real); the call must run
    # once, in Python, on the list as it was before the call
    log = []

    def helper(parts, x):
        parts.append(x * 2)
        log.append(len(str(x.sum())))
        return parts

    def f(x):
        parts = [x]
        parts = helper(parts, x + 1)
        return parts[0] + parts[-1] * len(parts)

    cf = against_eager(f, [(X,), (X * 4,)], log)
    assert cf.eager_calls == 0


def test_fullgraph_names_the_break_inside_a_called_function_before_any_effect():
    log = []

    def helper(x):
        return x * len(str(x.sum()))

    def f(x):
        log.append(1)
        return helper(x)

    with pytest.raises(hop.TraceError) as e:
        hop.compile(f, fullgraph=True)(X)
    assert str(e.value).startswith(
        f"hop.compile(fullgraph=True): f has a graph break (nothing ran): graph break at "
        f"test_compile_resume.py:{line_of(helper, 'str(x.sum())')} (CALL): str() of a traced value")
    assert log == []


# ------------------------------------------------------------- with blocks

def test_a_break_inside_a_with_block_runs_the_block_in_python_enter_and_exit_once_per_call():
    log = []

    def f(x):
        y = x + 1
        with Logged(log) as m:
            log.append(("in", m is not None))
            print("value", float(y.sum()))
        return y * 2

    cf = against_eager(f, [(X,), (X * 2,), (X,)], log)
    assert cf.eager_calls == 0
    assert "inside the with block, which runs in Python" in cf.explain()


def test_a_with_block_without_a_break_compiles_and_replays_enter_and_exit_every_call():
    # before issue 28's with support, _effects missed __enter__/__exit__ of
    # a new object: the plan ran them once, at trace time
    log = []

    def f(x):
        with Logged(log):
            y = x * 2
        return y + 1

    cf = against_eager(f, [(X,), (X,), (X * 2,)], log)
    assert cf.eager_calls == 0 and len(cf.graphs) == 1
    # (campaign 41's "holds", Logged.__init__ storing the log, is no effect:
    # it routes the call to the translator)
    assert [e.kind for e in _effects.find(f, (X,), {}) if e.kind != "holds"] == \
        ["mutation", "mutation"]


ENTERED = []


class Counted:
    def __enter__(self):
        ENTERED.append(1)

    def __exit__(self, *exc):
        ENTERED.append(-1)


def test_a_with_block_over_a_new_object_whose_methods_write_a_global_replays_them_every_call():
    # the function names neither ENTERED nor __enter__: before, nothing saw
    # the writes, the plan was traced once and later calls wrote nothing
    def f(x):
        with Counted():
            y = x * 2
        return y

    ENTERED.clear()
    cf = hop.compile(f)
    for k in (1, 2, 3):
        same(quiet(cf, X * k), X.numpy() * 2 * k)
    assert ENTERED == [1, -1] * 3 and cf.eager_calls == 0


def test_an_error_raised_inside_a_with_block_reaches_exit_and_propagates_as_eagerly():
    log = []

    def f(x, bad):
        with Logged(log):
            v = float(x.sum())  # a break: the block runs in Python
            if v > bad:
                raise ValueError(f"too big: {v}")
        return x + v

    cf = against_eager(f, [(X, 100.0), (X, 1.0), (X * 2, 100.0)], log)
    assert cf.eager_calls == 0


def test_an_exception_the_exit_suppresses_skips_the_rest_of_the_block_as_eagerly():
    log = []

    def f(x):
        with Logged(log, suppress=KeyError):
            v = float(x.sum())
            if v > 7:
                raise KeyError("k")
            log.append("not raised")
        return x * 2

    cf = against_eager(f, [(X,), (X * 0.5,)], log)
    assert cf.eager_calls == 0


def test_a_library_context_manager_is_not_entered_while_translating():
    import threading
    lock = threading.Lock()
    log = []

    def f(x):
        with lock:
            log.append(1)
        return x * 2

    cf = hop.compile(f)
    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        same(cf(X), X.numpy() * 2)
    same(cf(X), X.numpy() * 2)
    assert log == [1, 1] and not lock.locked()


# --------------------------------------------------------- exception handlers

def test_try_except_finally_with_no_exception_compiles_with_every_effect():
    log = []

    def f(x):
        try:
            log.append("try")
            y = x * 2
        except ValueError:
            log.append("except")
            y = x
        finally:
            log.append("finally")
        return y + 1

    cf = against_eager(f, [(X,), (X * 2,)], log)
    assert cf.eager_calls == 0 and len(cf.graphs) == 1


def test_an_exception_caught_inside_a_python_run_loop_is_handled_as_eagerly():
    log = []

    def f(x):
        for i in range(3):
            try:
                v = float(x.sum())
                if i == 1:
                    raise KeyError(i)
                x = x + v
            except KeyError as e:
                log.append(("caught", repr(e)))
            finally:
                log.append(("finally", i))
        return x

    cf = against_eager(f, [(X,), (X * 2,)], log)
    assert cf.eager_calls == 0


def test_an_error_raised_by_user_code_after_a_break_is_eagers_error():
    log = []

    def f(x, d):
        v = float(x.sum())
        log.append(v)
        return x * d[int(v)]  # KeyError for a key d lacks

    cf = hop.compile(f)
    d = {6: 2.0}
    for args in ((X, d), (X, d)):
        log.clear()
        want = outcome(f, *args)
        log.clear()
        assert outcome(cf, *args) == want
    log.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = outcome(cf, X * 2, d)
    assert got[0][:2] == ("error", "KeyError") and log == [12.0]


def test_a_bare_raise_in_a_handler_the_concrete_interpreter_runs_reraises_the_same_error():
    log = []

    def f(x):
        for i in range(2):
            try:
                if float(x.sum()) > 10 * (i + 1):
                    raise ValueError("big")
                log.append(i)
            except ValueError:
                log.append("caught")
                raise
        return x

    cf = against_eager(f, [(X,), (X * 3,), (X * 10,)], log)
    assert cf.eager_calls == 0


# ------------------------------------------------------------- generators

def test_a_generator_of_the_users_interleaves_its_effects_with_the_loops_as_eagerly():
    log = []

    def gen(x, n):
        for i in range(n):
            log.append(("gen", i))
            yield x * i
        log.append("gen done")

    def f(x):
        acc = x
        for y in gen(x, 3):
            log.append("body")
            acc = acc + y
        return acc

    cf = against_eager(f, [(X,), (X * 2,)], log)
    assert cf.eager_calls == 0 and cf.recompiles == 0 and len(cf.graphs) == 1


def test_a_generator_expression_consumed_by_a_library_function_compiles_its_effects():
    log = []

    def f(x):
        total = sum(log.append(i) or x * i for i in range(3))
        first = any(log.append(("any", i)) or i > 0 for i in range(5))  # stops at i == 1
        return total + first

    cf = against_eager(f, [(X,), (X * 2,)], log)
    assert cf.eager_calls == 0 and len(cf.graphs) == 1


def test_a_break_inside_a_generator_expression_breaks_its_consumers_statement():
    log = []

    def f(x):
        y = x + 1
        s = sum(float(v.sum()) for v in (y, y * 2))
        log.append(s)
        return y * s

    cf = against_eager(f, [(X,), (X * 2,)], log)
    assert cf.eager_calls == 0
    assert f"(from the call at test_compile_resume.py:{line_of(f, 'sum(float')}, which runs in " \
           f"Python)" in cf.explain()


def test_a_suppress_block_around_a_generators_break_falls_back_whole_with_eagers_answer():
    import contextlib
    log = []

    def consume(it):
        with contextlib.suppress(Exception):
            for v in it:
                log.append(v)

    def f(x):
        consume(len(str(v.sum())) for v in (x, x * 2))
        return x

    cf = hop.compile(f)
    eager = (f(X), list(log))
    log.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = cf(X)
    same(got, eager[0])
    assert log == eager[1]


# ---------------------------------------------------------------- guards

SCALE = 2.0


class Scaled:
    def __init__(self):
        self.k = SCALE


def test_a_global_read_by_a_classs_init_is_guarded():
    # the guards walk the special methods of a class the function names:
    # before, a change of SCALE kept the stale plan
    global SCALE

    def f(x):
        return x * Scaled().k

    cf = hop.compile(f)
    SCALE = 2.0
    same(cf(X), X.numpy() * 2)
    SCALE = 3.0
    same(cf(X), X.numpy() * 3)
    SCALE = 2.0


# ------------------------------------------------------- lifted dict items

STATE = {"step": 0, "scale": 3}


def test_an_int_dict_item_the_function_updates_is_a_plan_input_no_recompile_per_value():
    # d["k"] = n + 1 style state: before, a guard on its value (a recompile
    # per call, eager past the limit); now an input and an output of one plan
    def f(x):
        STATE["step"] = STATE["step"] + 1
        return x * STATE["step"] + STATE["scale"]

    STATE.update(step=0, scale=3)
    cf = hop.compile(f)
    for k in range(1, 13):
        same(quiet(cf, X), X.numpy() * k + 3)
        assert STATE["step"] == k and type(STATE["step"]) is int
    assert cf.recompiles == 0 and cf.eager_calls == 0 and len(cf.graphs) == 1
    assert "lifted to plan inputs (their new values are outputs): dict item ['step']" \
        in cf.explain()
    STATE["scale"] = 4  # not lifted (never written): still guarded
    same(quiet(cf, X), X.numpy() * 13 + 4)
    assert cf.recompiles == 1
    STATE["step"] = 2.5  # no longer an int: the plan does not fit, eager's answer
    same(quiet(cf, X), X.numpy() * 3.5 + 4)
    assert STATE["step"] == 3.5


def test_a_lifted_dict_item_read_through_other_methods_sees_the_new_value():
    counts = {"n": 1, "m": 10}

    def f(x):
        counts["n"] += 1
        return x * sum(counts.values()) + len(counts)

    cf = hop.compile(f)
    for k in range(2, 6):
        same(quiet(cf, X), X.numpy() * (k + 10) + 2)
    assert counts == {"n": 5, "m": 10} and cf.recompiles == 0


OFFSET = 1.0


def _body(r):
    return r + OFFSET


BODIES = [_body]


def test_a_global_read_by_a_hop_body_the_plan_runs_stays_guarded_when_only_later_code_names_it():
    # the plan before the loop traces BODIES[0] (it reads OFFSET); the loop
    # after the break names _body itself: the plan keeps OFFSET's guard
    global OFFSET
    log = []

    def f(x):
        y = hop.map(BODIES[0], x.reshape(3, 1))
        for i in range(2):
            log.append(float(y.sum()))
            y = _body(y)
        return y

    cf = hop.compile(f)
    OFFSET = 1.0
    same(quiet(cf, X), f(X))
    OFFSET = 5.0
    same(quiet(cf, X), f(X))
    OFFSET = 1.0
    assert cf.eager_calls == 0


def test_a_break_with_a_method_of_a_list_the_function_made_on_the_stack_keeps_its_appends():
    # r.append was handed to the resume as the plan's constant: the method
    # bound to the translation's own list, so each call's append went there
    # (the result lost it); the statement now runs in Python
    log = []

    def f(x):
        r = [x + 1]
        r.append(float(x.sum()))
        r.append(x - 1)
        log.append(len(r))
        return r[0] + r[2] * len(r)

    cf = against_eager(f, [(X,), (X * 2,), (X,)], log)
    assert cf.eager_calls == 0
    assert "with a builtin_function_or_method on the stack: the statement runs in Python" in \
        cf.explain()


# ------------------------------------------------ a float made at a break

def test_a_float_made_at_a_break_is_an_input_of_the_resume_not_a_recompile_per_value():
    # float(y.sum()) runs in Python at the break; the resume took its value
    # as a constant: a recompile per distinct value, eager past the limit.
    # After its value first changes it is an input (a SymFloat of the plan)
    log = []

    def f(x):
        y = x * 2
        s = float(y.sum())
        log.append((isinstance(s, float), s))
        return y * s + s / 3

    cf = hop.compile(f)
    xs = [[(k, 1.5, -0.25 * k)] for k in range(12)]
    against_eager(f, [(hop.tensor([float(a), b, c]),) for (a, b, c), in xs], log, cf)
    assert cf.recompiles == 0 and cf.eager_calls == 0
    text = cf.explain()
    assert "(its floats are inputs: stack0):" in text
    # the specialised resume of the first call, then the one with the float
    # as an input for the other eleven values: one graph, no recompile
    resume = text.split("(its floats are inputs: stack0):\n")[1].splitlines()[0]
    assert "hop.compile(f_resume_at_" in resume and "1 graph(s), 0 recompile(s)" in resume
    assert 'def forward(stack0: "f64[]", x: "f32[3]", y: "f32[3]"):' in text


def test_a_float_the_resume_cannot_take_as_an_input_stays_a_constant_with_eagers_results():
    # s ** 2 is not a SymFloat operation: the resume with the float as an
    # input does not translate, so (without a warning) it stays specialised
    def f(x):
        y = x * 2
        s = float(y.sum())
        return y * s ** 2

    cf = hop.compile(f)
    against_eager(f, [(hop.tensor([float(k), 1.0, 2.0]),) for k in range(4)], [], cf)
    assert cf.eager_calls == 0
    assert "its floats are inputs" not in cf.explain()


def test_a_float_that_never_changes_keeps_its_one_specialised_resume():
    def f(x):
        y = x * 2
        s = float(hop.ones(()) * 3)
        return y * s

    cf = hop.compile(f)
    against_eager(f, [(hop.tensor([float(k), 1.0, 2.0]),) for k in range(4)], [], cf)
    text = cf.explain()
    assert "its floats are inputs" not in text
    assert "hop.compile(f_resume_at_" in text and "1 graph(s), 0 recompile(s)" in text
