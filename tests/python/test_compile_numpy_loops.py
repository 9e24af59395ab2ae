"""Loops over traced arrays and lengths known only at run time in compiled
NumPy code (issue #29): `for row in x:` over an array of a known number of
rows is traced row by row (the translator used to refuse any loop over a
traced value, so `[r.tolist() for r in x]` ran the whole function eagerly);
a conversion inside such a loop hoists the loop to Python and the rest stays
compiled; `len()` of, and a loop over, an array whose length is a count
found when the program runs (a mask's selection, np.unique) is a graph
break (it was a TraceError eager never raises).  Each case: eager against
compiled over several calls, the same values and types, no eager call, and
explain()'s words for where the function broke."""

import warnings

import numpy as np
import pytest

import hop


def _same(got, want):
    assert type(got) is type(want), f"{type(got).__name__} vs {type(want).__name__}"
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want


def against_eager(f, args_list):
    cf = hop.compile(f)
    for args in args_list:
        want = f(*[a.copy() for a in args])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no eager fallback warning
            got = cf(*[a.copy() for a in args])
        _same(got, want)
    assert cf.eager_calls == 0, cf.explain()
    return cf


X = [(np.array([[1.0, -2.0], [3.0, 3.0], [0.5, -0.5]]),),
     (np.array([[4.0, 0.0], [-3.0, 2.0], [1.5, 2.5]]),)]


def test_a_loop_over_the_rows_of_a_traced_array_is_traced_row_by_row():
    def f(x):
        total = np.zeros(2)
        for row in x * 2:
            total = total + np.maximum(row, 0)
        return total, [r.sum() for r in x]
    cf = against_eager(f, X)
    assert "graph break" not in cf.explain()


def test_tolist_inside_a_loop_hoists_the_loop_and_the_rest_stays_compiled():
    def f(x):
        y = x * 2
        rows = [r.tolist() for r in y]
        return rows, y + 1
    cf = against_eager(f, X)
    text = cf.explain()
    assert "graph break at" in text and "cannot convert a traced value" in text
    assert "add(y, 1)" in text  # the part after the loop: compiled


def test_writes_through_rows_of_a_loop_reach_the_array():
    def f(x):
        y = x.copy()
        for row in y:
            row[0] = row.sum()
        return y
    against_eager(f, X)


def test_len_of_a_selection_is_a_break_not_a_trace_error():
    def f(x):
        m = x[x > 0]
        return m.sum() / len(m), len(m)
    cf = against_eager(f, [(a.ravel(),) for (a,) in X])
    assert "len() of a traced tensor whose size u0 is symbolic" in cf.explain()


def test_a_loop_over_unique_values_and_list_of_a_selection_run_in_python_then_resume():
    def f(x):
        u = np.unique(x)
        doubled = [v * 2 for v in u]
        return doubled, list(x[x > 0]), x.sum() + 1
    against_eager(f, [(a.ravel(),) for (a,) in X])


def test_hop_trace_still_raises_for_len_of_a_symbolic_size():
    import hop.numpy as hnp
    with pytest.raises(hop.TraceError, match="len\\(\\) of a traced tensor whose size"):
        hop.trace(lambda x: len(x[x > 0]), hnp.ones(3))
