"""A traced HOP call on plain hop.Tensors takes its operands' structure
without walking them (issue #30: per HOP call): invoke_subgraph's key and
group, map's xs.  The structure it takes is the one the walk gives, so keys,
graphs and results are the general path's."""
import numpy as np
import pytest

import hop
from hop import _hops, _pytree


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_the_shared_call_spec_equals_and_hashes_as_the_walked_one(n):
    args = tuple(hop.ones(2) for _ in range(n))
    walked = _pytree.flatten((args, {}))[1]
    shared = _hops._CALL_SPECS.get(n) or _hops._call_spec(n)
    assert shared == walked and hash(shared) == hash(walked)
    assert repr(shared) == repr(walked)
    assert _hops._call_spec(n) == shared  # made again: still equal


def _walks(monkeypatch):
    count = [0]
    walk = _pytree._walk

    def counting(o, leaves):
        count[0] += 1
        return walk(o, leaves)
    monkeypatch.setattr(_pytree, "_walk", counting)
    return count


def _program(ncalls):
    def block(v, y):
        return (v * y + 1.0).relu()

    def f(x, y):
        for _ in range(ncalls):
            a = hop.map(lambda r, y: hop.wrap(block, r, y), x, y)
            x = hop.invoke_subgraph(block, a, y)
        return x
    return f


def test_traced_map_and_invoke_subgraph_calls_of_tensors_walk_no_pytree(monkeypatch):
    x, y = hop.randn(3, 4, seed=1), hop.randn(4, seed=2)
    counts = {}
    for n in (1, 3):
        f = _program(n)
        hop.trace(f, x, y)  # warm: the caches of the first trace
        count = _walks(monkeypatch)
        hop.trace(f, x, y)
        monkeypatch.undo()
        counts[n] = count[0]
    # the trace's own walks (its arguments and result) and none per call
    assert counts[3] == counts[1]


_TWO_CALLS = """\
def forward(x: "f32[3, 4]", y: "f32[4]"):
    def map_body_0(x: "f32[4]", y: "f32[4]"):
        def wrap_body_0(x: "f32[4]", y: "f32[4]"):
            mul: "f32[4]" = mul(x, y)
            add: "f32[4]" = add(mul, 1.0)
            relu: "f32[4]" = relu(add)
            return (relu,)

        wrap: "f32[4]" = wrap(wrap_body_0, (x, y))
        getitem: "f32[4]" = wrap[0]
        return (getitem,)

    def subgraph_0(getitem: "f32[3, 4]", y: "f32[4]"):
        mul: "f32[3, 4]" = mul(getitem, y)
        add: "f32[3, 4]" = add(mul, 1.0)
        relu: "f32[3, 4]" = relu(add)
        return (relu,)

    def map_body_1(getitem_1: "f32[4]", y: "f32[4]"):
        def wrap_body_1(getitem_1: "f32[4]", y: "f32[4]"):
            mul: "f32[4]" = mul(getitem_1, y)
            add: "f32[4]" = add(mul, 1.0)
            relu: "f32[4]" = relu(add)
            return (relu,)

        wrap: "f32[4]" = wrap(wrap_body_1, (getitem_1, y))
        getitem: "f32[4]" = wrap[0]
        return (getitem,)

    map: "f32[3, 4]" = map(map_body_0, (x,), (y,))
    getitem: "f32[3, 4]" = map[0]
    invoke_subgraph: "f32[3, 4]" = invoke_subgraph(subgraph_0, (getitem, y))
    getitem_1: "f32[3, 4]" = invoke_subgraph[0]
    map_1: "f32[3, 4]" = map(map_body_1, (getitem_1,), (y,))
    getitem_2: "f32[3, 4]" = map_1[0]
    invoke_subgraph_1: "f32[3, 4]" = invoke_subgraph(subgraph_0, (getitem_2, y))
    getitem_3: "f32[3, 4]" = invoke_subgraph_1[0]
    return (getitem_3,)
"""


def test_invoke_subgraph_of_tensors_shares_one_subgraph_and_matches_eager():
    x, y = hop.randn(3, 4, seed=3), hop.randn(4, seed=4)
    f = _program(2)
    gm = hop.trace(f, x, y)
    assert gm.code.strip() == _TWO_CALLS.strip()
    np.testing.assert_array_equal(gm(x, y).numpy(), f(x, y).numpy())


def test_invoke_subgraph_with_a_constant_or_keyword_takes_the_walk_and_keys_apart():
    x = hop.randn(4, seed=5)

    def body(v, k=1.0):
        return v * k

    def f(x):
        a = hop.invoke_subgraph(body, x)        # tensors alone
        b = hop.invoke_subgraph(body, a, 2.0)   # a constant: its own subgraph
        c = hop.invoke_subgraph(body, b, k=2.0)  # a keyword: its own
        d = hop.invoke_subgraph(body, c)        # the first's again
        return d
    gm = hop.trace(f, x)
    calls = [line.split(" = ")[1] for line in gm.code.splitlines()
             if "= invoke_subgraph(" in line]
    assert calls == ["invoke_subgraph(subgraph_0, (x,))", "invoke_subgraph(subgraph_1, (getitem,))",
                     "invoke_subgraph(subgraph_2, (getitem_1,))",
                     "invoke_subgraph(subgraph_0, (getitem_2,))"]
    np.testing.assert_array_equal(gm(x).numpy(), f(x).numpy())
