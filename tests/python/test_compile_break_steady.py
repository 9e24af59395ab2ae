"""The steady call of a function with a graph break, and the rebuild of a
plan's results, against eager.

A break's resume takes the frame's locals as they are when they are
distinct hop.Tensors, ints, bools, strings and None (_frame_resume's
_plain_locals); anything else (one tensor under two names, a float, an
ndarray, a closure over the frame's cells) goes through the full checks.
A plan's results are rebuilt from the second call on by one generated
expression (_pytree.builder): every call still gets containers of its own.
"""
import collections

import numpy as np
import pytest

import hop
from hop import _pytree


def _loop(x):
    y = x * 2
    n, flag, name, none = 0, False, "s", None
    for i in range(4):
        y = y + 1
        n += i
        if float(y.sum()) > 1e9:
            flag = True
            break
    return y * 3, n, flag, name, none, i


def _alias(x):
    a = x * 2
    b = a
    for _ in range(3):
        if float(a.sum()) > 1e9:
            break
        a = a + 1
    return a, b, a is b


def _alias_kept(x):
    a = x * 2
    b = a
    for _ in range(3):
        if a.sum().item() > 1e9:  # (a break: float() here is a cond, test_compile_float_if.py)
            break
    return a, b, a is b


def _float_local(x):
    s = 0.0
    for _ in range(3):
        s = s + float(x.sum())
    return x * s


def _early_exit(x):
    y = x + 1
    for i in range(5):
        if y.sum().item() > 10:  # (a break: float() here is a cond)
            return y * i
        y = y * 2
    return y


def _same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    if isinstance(a, hop.Tensor):
        return isinstance(b, hop.Tensor) and a.dtype == b.dtype and \
            np.array_equal(a.numpy(), b.numpy())
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("fn", [_loop, _alias, _alias_kept, _float_local, _early_exit])
def test_steady_break_calls_match_eager(fn):
    cf = hop.compile(fn)
    for k in range(6):
        x = hop.full((4,), float(k) - 1.5)
        got, want = cf(x), fn(x)
        assert _same(got, want), (fn.__name__, k, got, want)
    assert cf.eager_calls == 0
    assert "graph break at" in cf.explain()


def test_alias_through_a_break_is_one_object():
    cf = hop.compile(_alias_kept)
    for _ in range(3):
        a, b, same = cf(hop.ones(4))
        assert same is True and a is b


def test_plain_locals_takes_only_distinct_plain_values():
    from hop._frame_resume import _plain_locals
    t, u = hop.ones(2), hop.zeros(2)
    assert _plain_locals({"a": t, "b": u, "i": 3, "f": True, "s": "x", "n": None}) == \
        [t, u, 3, True, "x", None]
    assert _plain_locals({"a": t, "b": t}) is None  # one tensor, two names
    assert _plain_locals({"a": t, "s": 1.5}) is None  # a float: an input or a constant
    assert _plain_locals({"a": np.ones(2)}) is None
    assert _plain_locals({"a": [t]}) is None
    assert _plain_locals({}) == []


Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("obj", [
    ((), (1, 2, 3), ()),
    ((1,), 2),
    [1, {"a": 2, (3, 4): [5, None]}],
    7,
    None,
    (),
    ([], {}),
    Point(1, (2, 3)),
    {"k": Point(1, 2), "j": [3]},
    tuple(range(300)),  # (over the builder's size: the walk)
])
def test_builder_rebuilds_what_unflatten_does(obj):
    leaves, spec = _pytree.flatten(obj)
    build = _pytree.builder(spec)
    one, two = build(leaves), build(list(leaves) + ["extra"])
    assert one == obj and two == obj
    assert type(one) is type(obj)
    assert _pytree.unflatten(leaves, spec) == one


def test_builder_makes_new_containers_each_call():
    leaves, spec = _pytree.flatten([1, {"a": [2]}])
    build = _pytree.builder(spec)
    one, two = build(leaves), build(leaves)
    assert one == two and one is not two
    assert one[1] is not two[1] and one[1]["a"] is not two[1]["a"]


def test_compiled_results_are_new_containers_on_every_call():
    def f(x):
        return [x + 1, {"a": x * 2, "b": (x, [x - 1])}]

    cf = hop.compile(f)
    x = hop.arange(3, dtype=hop.float32)
    seen = []
    for _ in range(4):
        r = cf(x)
        want = f(x)
        assert np.array_equal(r[0].numpy(), want[0].numpy())
        assert np.array_equal(r[1]["b"][1][0].numpy(), want[1]["b"][1][0].numpy())
        assert r[1]["b"][0] is x  # (the argument itself, as eager)
        r.append("mine")  # a caller's write stays in its own result
        r[1]["a"] = None
        seen.append(r)
    assert all(len(r) == 3 and r[1]["a"] is None for r in seen)
    assert len({id(r) for r in seen}) == 4 and len({id(r[1]) for r in seen}) == 4
    assert cf.recompiles == 0


def test_graph_module_results_are_new_containers_on_every_call():
    gm = hop.trace(lambda x: ([x + 1], {"y": x * 2}), hop.ones(2))
    results = [gm(hop.ones(2)) for _ in range(3)]
    for r in results:
        assert isinstance(r, tuple) and isinstance(r[0], list) and isinstance(r[1], dict)
        assert np.array_equal(r[0][0].numpy(), [2.0, 2.0])
    assert len({id(r[0]) for r in results}) == 3 and len({id(r[1]) for r in results}) == 3
