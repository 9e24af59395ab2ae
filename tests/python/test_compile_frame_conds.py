"""A data-dependent `if` in a function the frame translator compiles (one
with Python effects, or a graph break): both sides traced into one cond, as
the plain tracer's path specialisation does, where neither side has an
effect, a break or a jump out of the `if`; otherwise the graph break at the
`if` it always was (hop/_frame.py, Translator._merge_if).  Each test: eager
against compiled over calls taking both sides, results, effects and printed
text equal; the graph, the recompile count and explain()'s text."""

import collections
import contextlib
import inspect
import io
import warnings

import numpy as np
import pytest

import hop

LOG = []
POS, NEG = hop.tensor([1.0, 2.0, 3.0]), hop.tensor([-1.0, -2.0, 0.5])


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def against_eager(f, inputs, cf=None, fallback=False):
    """f eagerly, then compiled, on each input in turn (LOG cleared before
    each): the same result (values, dtype, shape), LOG and printed text;
    no warning (no eager fallback) unless fallback."""
    cf = cf or hop.compile(f)
    for x in inputs:
        copy = (lambda: x.copy()) if isinstance(x, np.ndarray) else (lambda: x)
        LOG.clear()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            want = f(copy())
        want_log, want_out = repr(LOG), out.getvalue()
        LOG.clear()
        out = io.StringIO()
        with warnings.catch_warnings(), contextlib.redirect_stdout(out):
            warnings.simplefilter("ignore" if fallback else "error")
            got = cf(copy())
        assert out.getvalue() == want_out
        assert repr(LOG) == want_log
        assert type(got) is type(want)
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert (cf.eager_calls > 0) == fallback
    return cf


def conds(cf):
    """The conds of the graph's own code (not those inside their sides)."""
    return sum(line.startswith("    ") and not line.startswith("     ") and " = cond(" in line
               for line in cf.graphs[-1].code.splitlines())


def test_an_if_between_effects_is_one_cond_and_a_flip_does_not_recompile():
    def make():
        n = 0

        def f(x):
            nonlocal n
            n += 1
            LOG.append(1)
            print("before", n)
            if x.sum() > 0:
                y = x * 2
            else:
                y = x - 1
            LOG.append(n)
            print("after")
            return y + n
        return f

    f = make()
    cf = against_eager(f, [POS, NEG, POS, NEG, NEG, POS], hop.compile(make()))
    assert len(cf.graphs) == 1 and cf.recompiles == 0 and conds(cf) == 1
    text = cf.explain()
    assert "graph break" not in text
    site = f"test_compile_frame_conds.py:{line_of(f, 'if x.sum() > 0:')}"
    assert f"data-dependent branch at {site} (`if x.sum() > 0:`): both sides traced as one " \
           f"cond\n" in text
    assert "side effects replayed after each call (5):" in text


def test_a_print_inside_one_side_keeps_the_break_and_prints_as_eager():
    def f(x):
        LOG.append(0)
        if x.sum() > 0:
            print("positive")
            y = x * 2
        else:
            y = x - 1
        LOG.append(2)
        return y

    cf = against_eager(f, [POS, NEG, POS, NEG])
    assert cf.recompiles == 0
    text = cf.explain()
    site = f"test_compile_frame_conds.py:{line_of(f, 'if x.sum() > 0:')}"
    at = f"test_compile_frame_conds.py:{line_of(f, 'print(')}"
    assert f"graph break at {site} (POP_JUMP_FORWARD_IF_FALSE): Python control flow on a " \
           f"traced value (if/while/and/or/not on it) needs its value; hop.cond keeps it in " \
           f"the graph; its sides were not traced as one cond: its True side has a Python " \
           f"effect (print() at {at})" in text
    assert "traced as one cond\n" not in text


def test_sides_that_return_are_one_cond_holding_the_rest_of_the_function():
    def f(x):
        LOG.append(1)
        s = x.sum()
        if s > 0:
            return x * 2
        return x - 1

    cf = against_eager(f, [POS, NEG, POS * 3, NEG * 2])
    assert len(cf.graphs) == 1 and cf.recompiles == 0 and conds(cf) == 1
    assert "both sides traced as one cond (each side runs on to the return)" in cf.explain()


def test_sides_assigning_different_python_numbers_run_on_to_the_return():
    def f(x):
        LOG.append(1)
        scale = 2.0 if x.sum() > 0 else 0.5
        return x * scale

    cf = against_eager(f, [POS, NEG, POS])
    assert cf.recompiles == 0 and conds(cf) == 1
    assert "graph break" not in cf.explain()


def test_different_python_numbers_with_an_effect_after_keep_the_break():
    def f(x):
        scale = 2.0 if x.sum() > 0 else 0.5
        LOG.append(scale)
        return x * scale

    cf = against_eager(f, [POS, NEG, POS, NEG])
    text = cf.explain()
    assert "its sides were not traced as one cond: its True side has a Python effect " \
           "(list.append() at" in text


def test_an_if_in_a_loop_is_one_cond_per_turn():
    def f(x):
        LOG.append(0)
        for i in range(3):
            if (x * i).sum() > 1:
                x = x - 1
            else:
                x = x + 2
            LOG.append(i)
        return x

    cf = against_eager(f, [POS, NEG, POS * 2])
    assert len(cf.graphs) == 1 and cf.recompiles == 0 and conds(cf) == 3


def test_a_conditional_expression_and_a_nested_if_are_conds():
    def f(x):
        LOG.append(0)
        y = x * 2 if x.sum() > 0 else x - 1
        if (y * y).sum() > 20:
            if y.sum() < 10:
                y = y * 0
            else:
                y = y + 1
        return y

    inputs = [POS, NEG, hop.tensor([2.0, 3.0, -1.0]), hop.tensor([4.0, 5.0, 6.0]), POS]
    cf = against_eager(f, inputs)
    assert len(cf.graphs) == 1 and cf.recompiles == 0 and conds(cf) == 2
    code = cf.graphs[-1].code
    assert code.count(" = cond(") == 3  # the nested one inside a side of the second


def test_a_side_changing_a_list_the_function_made_keeps_the_break():
    # the side's append happens for real while translating: the other side,
    # and the code after the if, must not see it (put back, then a break)
    def f(x):
        LOG.append(0)
        ys = [x]
        if x.sum() > 0:
            ys.append(x * 2)
        return ys[-1] + len(ys)

    cf = against_eager(f, [POS, NEG, POS, NEG])
    assert "its True side changes a list the function made before the `if`" in cf.explain()


def test_a_side_using_an_object_made_before_the_if_whose_state_hop_cannot_read_keeps_the_break():
    # (a deque: the side's popleft happens for real while translating, and
    # hop cannot put it back for the other side; the break then cannot hand
    # the deque to its resume either: the call runs eagerly)
    def f(x):
        LOG.append(0)
        dq = collections.deque([1, 2, 3])
        if x.sum() > 0:
            dq.popleft()
            y = x * 2
        else:
            y = x - 1
        return y + dq[0]

    cf = against_eager(f, [POS, NEG, POS, NEG], fallback=True)
    assert "a graph break with the local 'dq' holding a deque, which the plan cannot hand to " \
           "the resume" in cf.explain()


def test_a_side_that_raises_keeps_the_break_and_raises_as_eager_when_taken():
    items = [1.0, 2.0]

    def f(x):
        LOG.append(0)
        if x.sum() > 0:
            y = x * items[5]
        else:
            y = x - 1
        return y

    cf = hop.compile(f)
    against_eager(f, [NEG, NEG], cf)
    assert "its True side raised IndexError: list index out of range" in cf.explain()
    with pytest.raises(IndexError, match="list index out of range"):
        f(POS)
    with pytest.raises(IndexError, match="list index out of range"):
        cf(POS)


def test_fullgraph_still_raises_at_a_data_dependent_if():
    def f(x):
        LOG.append(0)
        if x.sum() > 0:
            return x * 2
        return x

    with pytest.raises(hop.TraceError, match=r"graph break at .* \(POP_JUMP_FORWARD_IF_FALSE\)"):
        hop.compile(f, fullgraph=True)(POS)


def test_numpy_code_with_an_exact_condition_is_one_cond():
    def f(x):
        LOG.append(1)
        if (x > 0).all():
            y = x * 2.0
        else:
            y = np.abs(x) - 1.0
        LOG.append(2)
        return y + 1.0

    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([-1.0, 2.0, 3.0], np.float32)
    cf = against_eager(f, [a, b, a, b])
    assert len(cf.graphs) == 1 and cf.recompiles == 0 and conds(cf) == 1
    assert "traced as one cond" in cf.explain() and "graph break" not in cf.explain()


def test_numpy_code_branching_on_a_sum_keeps_the_break_on_numpys_value():
    # hop's float sum may differ from NumPy's in the last bit, so hop could
    # take the other side: the break branches on NumPy's own value
    def f(x):
        LOG.append(1)
        if np.sum(x) > 0:
            y = x * 2.0
        else:
            y = x - 1.0
        return y

    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([-1.0, -2.0, 0.5], np.float32)
    cf = against_eager(f, [a, b, a, b])
    assert "not traced as a cond: its condition is a value NumPy may compute with other bits " \
           "(sum" in cf.explain()


def test_a_temporary_of_one_side_an_and_and_an_if_in_a_called_function_are_conds():
    def helper(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    def f(x):
        LOG.append(0)
        if x.sum() > 0 and (x * x).sum() > 5:
            t = x * 2  # read by nothing after the if: no output, unassigned on the other side
            y = t + 1
        else:
            # (not `y = x`: the argument itself in y, which a cond's output
            # would copy, keeps the `if` a break: test_compile_frame_identity)
            y = x - 1
        LOG.append(1)
        return helper(y)

    inputs = [POS, NEG, hop.tensor([1.0, 1.0, 1.0]), POS]
    cf = against_eager(f, inputs)
    assert len(cf.graphs) == 1 and cf.recompiles == 0 and conds(cf) == 2
    assert cf.explain().count("both sides traced as one cond") == 3  # (the `and`: two)


def test_an_if_with_no_else_and_nothing_read_after_it_is_no_break():
    def f(x):
        LOG.append(0)
        if x.sum() > 0:
            t = x * 2  # noqa: F841 (dead: the `if` changes nothing the rest reads)
        LOG.append(1)
        return x

    cf = against_eager(f, [POS, NEG, POS])
    assert len(cf.graphs) == 1 and cf.recompiles == 0 and "graph break" not in cf.explain()


def test_a_while_loop_on_a_traced_value_stays_a_break():
    def f(x):
        LOG.append(0)
        while x.sum() > 0:
            x = x - 1
        return x

    cf = against_eager(f, [POS, NEG, POS])
    assert "graph break at" in cf.explain()


@pytest.mark.parametrize("kind", ["float", "fstring"])
def test_a_conversion_inside_a_side_keeps_the_break_and_converts_in_python(kind):
    def f(x):
        LOG.append(0)
        if x.sum() > 0:
            if kind == "float":
                y = x * float(x.sum())
            else:
                y = x * len(f"{x.sum()}")
        else:
            y = x - 1
        LOG.append(1)
        return y

    cf = against_eager(f, [POS, NEG, POS, NEG])
    text = cf.explain()
    assert "(POP_JUMP_FORWARD_IF_FALSE): Python control flow on a traced value" in text
    assert "its sides were not traced as one cond: its True side breaks the graph: " in text
    assert "traced as one cond\n" not in text


def test_a_side_drawing_from_a_generator_in_a_list_the_function_made_keeps_the_break():
    # the draw happens for real while translating: without the break the
    # other side would draw the generator's second number
    def f(x):
        LOG.append(0)
        gens = [np.random.default_rng(0)]
        if x.sum() > 0:
            y = x * float(gens[0].random())
        else:
            y = x - 1
        return y + float(gens[0].random())

    cf = against_eager(f, [POS, NEG, POS, NEG], fallback=True)
    assert cf.eager_calls > 0


def test_numpy_code_with_a_print_inside_one_side_keeps_the_break_and_prints_numpys_text():
    def f(x):
        LOG.append(1)
        if (x > 0).all():
            print("all positive", x[0])
            y = x * 2.0
        else:
            y = x - 1.0
        LOG.append(2)
        return y

    a, b = np.array([1.5, 2.0, 3.0], np.float32), np.array([-1.0, 2.0, 3.0], np.float32)
    cf = against_eager(f, [a, b, a, b])
    text = cf.explain()
    assert "(POP_JUMP_FORWARD_IF_FALSE): Python control flow on a traced value" in text
    assert "its sides were not traced as one cond: its True side has a Python effect " \
           "(print() at" in text
