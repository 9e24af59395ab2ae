"""hop.compile: the guarded cache, recompiles, automatic dynamic dims, explain."""

import warnings

import numpy as np
import pytest

import hop


def f(x, y):
    return hop.cond(x.sum() > 0, lambda: x * y, lambda: x - y)


def test_first_call_compiles_and_later_calls_reuse_the_plan():
    cf = hop.compile(f)
    x, y = hop.randn(4, 3, seed=1), hop.randn(3, seed=2)
    np.testing.assert_allclose(cf(x, y).numpy(), f(x, y).numpy(), rtol=1e-6)
    cf(hop.randn(4, 3, seed=3), y)
    assert len(cf.graphs) == 1 and cf.recompiles == 0


def test_a_changed_size_recompiles_once_with_that_dim_dynamic():
    cf = hop.compile(f)
    y = hop.randn(3, seed=2)
    cf(hop.randn(4, 3, seed=1), y)
    for rows in (5, 6, 7):
        x = hop.randn(rows, 3, seed=rows)
        np.testing.assert_allclose(cf(x, y).numpy(), f(x, y).numpy(), rtol=1e-6)
    assert cf.recompiles == 1
    assert 's0: "Sym(s0)"' in cf.graphs[1].code
    assert cf._entries[1].dynamic == [(True, False), (False,)]
    text = cf.explain()
    assert "2 graph(s), 1 recompile(s)" in text
    assert "guard failed" in text


def test_dynamic_false_recompiles_per_shape_then_runs_eagerly_past_the_limit():
    # The cache is bounded (issue #12): past recompile_limit recompiles, a
    # call that no plan fits runs eagerly and the first such call warns once.
    cf = hop.compile(lambda x: x + 1, dynamic=False, recompile_limit=1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in (2, 3, 4, 5, 2, 3):
            assert cf(hop.ones(n)).tolist() == [2.0] * n
    assert cf.recompiles == 1 and len(cf.graphs) == 2 and cf.eager_calls == 2
    msgs = [str(x.message) for x in w]
    assert len(msgs) == 1 and "reached its recompile limit (1)" in msgs[0]
    assert "fallback: the recompile limit was reached; 2 call(s)" in cf.explain()


def test_a_different_constant_argument_recompiles():
    cf = hop.compile(lambda x, k: x * k)
    assert cf(hop.ones(2), 2).tolist() == [2.0, 2.0]
    assert cf(hop.ones(2), 3).tolist() == [3.0, 3.0]
    assert cf.recompiles == 1


def test_a_dtype_change_is_a_guard_failure_not_a_wrong_answer():
    cf = hop.compile(lambda x: x + 1)
    cf(hop.ones(2))
    assert cf(hop.tensor([1, 2])).tolist() == [2, 3]
    assert cf.recompiles == 1


def test_compile_rejects_non_callables():
    with pytest.raises(TypeError, match="hop.compile: fn must be callable, got int"):
        hop.compile(3)
