"""Keyword arguments of a transformed function's call (hop.grad, hop.vmap,
hop.value_and_grad, a vjp function) outside a trace: the call's own
compile caches its plan for them as for positional arguments.  Before, a
call with keyword arguments compiled a fresh function each time, so every
such call traced f again; now one with the same names and values hits the
cache, and a changed value (or name) traces again and answers as eager."""

import numpy as np
import pytest

import hop

F64 = hop.float64


def t(a):
    return hop.tensor(np.asarray(a, dtype=np.float64).tolist(), dtype=F64)


def arr(x):
    return np.asarray(x.tolist(), dtype=np.float64)


def f(x, scale=1.0, w=None):
    y = (x * x).sum() * scale
    return y if w is None else y + (x * w).sum()


def traces(transformed):
    """The times a transformed function's call traced f: the graphs its
    compile holds (a transformed call never runs f eagerly)."""
    return len(transformed._compiled.graphs)


def test_grad_with_the_same_keyword_value_traces_once():
    g = hop.grad(f)
    x = t([1.0, 2.0])
    first = g(x, scale=3.0)
    runs = traces(g)
    assert runs == 1
    for _ in range(4):
        r = g(x, scale=3.0)
        assert arr(r).tolist() == [6.0, 12.0]
    assert traces(g) == runs
    assert arr(first).tolist() == [6.0, 12.0]


def test_grad_with_a_changed_keyword_value_traces_again_and_answers_as_eager():
    g = hop.grad(f)
    x = t([1.0, 2.0])
    assert arr(g(x, scale=3.0)).tolist() == [6.0, 12.0]
    runs = traces(g)
    assert arr(g(x, scale=0.5)).tolist() == [1.0, 2.0]
    assert traces(g) > runs
    runs = traces(g)
    assert arr(g(x, scale=0.5)).tolist() == [1.0, 2.0]
    assert arr(g(x, scale=3.0)).tolist() == [6.0, 12.0]
    assert traces(g) == runs  # (both plans are cached)


def test_grad_with_a_changed_keyword_name_answers_as_eager():
    g = hop.grad(f)
    x = t([1.0, 2.0])
    assert arr(g(x, scale=2.0)).tolist() == [4.0, 8.0]
    assert arr(g(x, w=t([10.0, 20.0]))).tolist() == [12.0, 24.0]
    assert arr(g(x)).tolist() == [2.0, 4.0]


def test_a_tensor_keyword_is_read_at_each_call_not_kept_from_the_first():
    g = hop.grad(f)
    x = t([1.0, 2.0])
    assert arr(g(x, w=t([10.0, 20.0]))).tolist() == [12.0, 24.0]
    runs = traces(g)
    assert arr(g(x, w=t([-1.0, 5.0]))).tolist() == [1.0, 9.0]
    assert traces(g) == runs


def test_a_keyword_int_changed_to_a_float_answers_as_eager():
    g = hop.grad(f)
    x = t([1.0, 2.0])
    assert arr(g(x, scale=2)).tolist() == [4.0, 8.0]
    assert arr(g(x, scale=2.5)).tolist() == [5.0, 10.0]


def test_value_and_grad_and_vmap_with_keywords_trace_once():
    vg = hop.value_and_grad(f)
    x = t([1.0, 2.0])
    v, g = vg(x, scale=2.0)
    v2, g2 = vg(x, scale=2.0)
    assert traces(vg) == 1
    assert v2.item() == v.item() == 10.0 and arr(g2).tolist() == arr(g).tolist() == [4.0, 8.0]

    vm = hop.vmap(f)
    X = t([[1.0, 2.0], [3.0, 4.0]])
    assert arr(vm(X, scale=2.0)).tolist() == [10.0, 50.0]
    assert arr(vm(X, scale=2.0)).tolist() == [10.0, 50.0]
    assert traces(vm) == 1
    assert arr(vm(X, scale=1.0)).tolist() == [5.0, 25.0]
    assert traces(vm) == 2


def test_keyword_calls_under_a_trace_and_under_compile_answer_as_eager():
    g = hop.grad(f)
    x = t([1.0, 2.0])

    @hop.compile
    def outer(x, s):
        return g(x, scale=s)

    assert arr(outer(x, 2.0)).tolist() == [4.0, 8.0]
    assert arr(outer(x, 3.0)).tolist() == [6.0, 12.0]


def test_an_unexpected_keyword_raises_pythons_error():
    g = hop.grad(f)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        g(t([1.0, 2.0]), bogus=1.0)
