"""Tracing from Python: the lifting scenarios of the tracer issue, the four
HOPs' graphs, GraphModule introspection, and the errors of tracing."""

import itertools

import numpy as np
import pytest

import hop
from hop.testing import assert_graph_equal, placeholders


def X(*shape, seed=0):
    return hop.randn(*shape, seed=seed)


# --------------------------------------------------------------- lifting

def test_tensor_used_two_levels_deep_is_lifted_with_its_symbols_at_every_level():
    def f(x):
        return hop.wrap(lambda: hop.wrap(lambda: x.sin()))

    gm = hop.trace(f, X(3, 4), dynamic=True)
    assert_graph_equal(gm, '''
        def forward(s0: "Sym(s0)", s1: "Sym(s1)", x: "f32[s0, s1]"):
            def wrap_body_0(s0: "Sym(s0)", s1: "Sym(s1)", x: "f32[s0, s1]"):
                def wrap_body_1(s0: "Sym(s0)", s1: "Sym(s1)", x: "f32[s0, s1]"):
                    sin: "f32[s0, s1]" = sin(x)
                    return (sin,)

                wrap: "f32[s0, s1]" = wrap(wrap_body_1, (s0, s1, x))
                getitem: "f32[s0, s1]" = wrap[0]
                return (getitem,)

            wrap: "f32[s0, s1]" = wrap(wrap_body_0, (s0, s1, x))
            getitem: "f32[s0, s1]" = wrap[0]
            return (getitem,)
    ''')


def test_two_tensors_sharing_a_symbol_bind_it_once_per_level():
    def f(x, y):
        return hop.wrap(lambda: hop.wrap(lambda: x + y))

    gm = hop.trace(f, X(3, 4), X(4), dynamic=True)
    assert placeholders(gm) == {
        "forward": ["s0", "s1", "x", "y"],
        "wrap_body_0": ["s0", "s1", "x", "y"],
        "wrap_body_1": ["s0", "s1", "x", "y"],
    }


def test_closure_over_a_size_lifts_only_the_symbol_into_the_inner_body():
    def f(x):
        def outer():
            c = x.shape[0]
            y = x.cos()
            return y, hop.wrap(lambda: c)
        return hop.wrap(outer)

    gm = hop.trace(f, X(3, 4), dynamic=True)
    inner = gm.subgraphs["wrap_body_0"].subgraphs["wrap_body_1"]
    assert [n.name for n in inner.graph.placeholders] == ["s0"]
    assert inner.graph.placeholders[0].meta == hop.SymMeta("s0")


def test_unbacked_symbol_from_item_is_lifted_from_the_body_that_made_it():
    def f(x, n):
        def outer():
            c = n.item()
            return hop.wrap(lambda: c)
        return hop.wrap(outer)

    gm = hop.trace(f, X(3), hop.tensor(5), dynamic=True)
    assert placeholders(gm) == {
        "forward": ["s0", "x", "n"],
        "wrap_body_0": ["n"],
        "wrap_body_1": ["u0"],
    }
    assert gm(X(3), hop.tensor(7)) == (7,) or gm(X(3), hop.tensor(7)) == 7


def test_tensor_with_an_unbacked_size_brings_its_symbol_right_before_it():
    def f(n):
        def outer():
            r = hop.zeros(n.item())
            return hop.wrap(lambda: r + 1)
        return hop.wrap(outer)

    gm = hop.trace(f, hop.tensor(4))
    assert placeholders(gm)["wrap_body_1"] == ["u0", "zeros"]
    assert gm(hop.tensor(3)).tolist() == [1.0, 1.0, 1.0]


def test_a_free_value_used_three_times_gets_one_placeholder():
    def f(x):
        return hop.wrap(lambda: x * x + x)

    gm = hop.trace(f, X(4))
    assert placeholders(gm)["wrap_body_0"] == ["x"]


def test_a_value_made_in_a_middle_body_is_lifted_into_inner_bodies_only():
    def f(x):
        def middle():
            y = x.sin()
            return hop.wrap(lambda: y.exp())
        return hop.wrap(lambda: hop.wrap(middle))

    gm = hop.trace(f, X(4))
    assert placeholders(gm) == {
        "forward": ["x"],
        "wrap_body_0": ["x"],
        "wrap_body_1": ["x"],
        "wrap_body_2": ["sin"],
    }


def test_returning_a_free_value_unchanged_lifts_it():
    gm = hop.trace(lambda x: hop.wrap(lambda: x), X(2, 3))
    assert_graph_equal(gm.subgraphs["wrap_body_0"], '''
        def wrap_body_0(x: "f32[2, 3]"):
            return (x,)
    ''')


def test_a_concrete_global_tensor_becomes_one_root_input():
    w = X(4, seed=7)

    def f(x):
        return hop.wrap(lambda: x * w) + w

    gm = hop.trace(f, X(4))
    assert placeholders(gm)["forward"] == ["x", "w"]
    assert placeholders(gm)["wrap_body_0"] == ["x", "w"]
    x = X(4, seed=1)
    np.testing.assert_allclose(gm(x).numpy(), (x * w + w).numpy(), rtol=1e-6)


# ------------------------------------------------------------------ HOPs

def test_cond_merges_inputs_unique_to_each_branch():
    def f(x, a, b):
        return hop.cond(x.sum() > 0, lambda: x.sin() + a, lambda: x.cos() * b)

    gm = hop.trace(f, X(4), X(4), X(4))
    assert_graph_equal(gm, '''
        def forward(x: "f32[4]", a: "f32[4]", b: "f32[4]"):
            def cond_true_0(x: "f32[4]", a_true_branch: "f32[4]", b_false_branch: "f32[4]"):
                sin: "f32[4]" = sin(x)
                add: "f32[4]" = add(sin, a_true_branch)
                return (add,)

            def cond_false_0(x: "f32[4]", a_true_branch: "f32[4]", b_false_branch: "f32[4]"):
                cos: "f32[4]" = cos(x)
                mul: "f32[4]" = mul(cos, b_false_branch)
                return (mul,)

            sum: "f32[]" = sum(x, None, False)
            gt: "bool[]" = gt(sum, 0)
            cond: "f32[4]" = cond(gt, cond_true_0, cond_false_0, (x, a, b))
            getitem: "f32[4]" = cond[0]
            return (getitem,)
    ''')
    node = gm.graph.find("cond")
    assert node.op == "call_hop" and node.target == "cond"
    assert [a.name for a in node.args] == ["gt", "x", "a", "b"]
    assert node.subgraphs == ("cond_true_0", "cond_false_0")
    for sign in (1, -1):
        x, a, b = X(4, seed=1) * sign, X(4, seed=2), X(4, seed=3)
        np.testing.assert_allclose(gm(x, a, b).numpy(), f(x, a, b).numpy(), rtol=1e-6)


def test_map_with_a_closure_and_an_extra_argument():
    c = X(3, seed=5)

    def f(xs, w):
        return hop.map(lambda row, w: row * w + c, xs, w)

    gm = hop.trace(f, X(10, 3), X(3), dynamic=True)
    assert placeholders(gm)["map_body_0"] == ["xs", "w", "c"]  # c is captured with static sizes
    assert "Eq(s1, 3)" in gm.guards or "s1 == 3" in gm.guards
    xs, w = X(7, 3, seed=1), X(3, seed=2)
    np.testing.assert_allclose(gm(xs, w).numpy(), f(xs, w).numpy(), rtol=1e-6)


def test_invoke_subgraph_called_three_times_is_traced_once():
    calls = itertools.count()

    @hop.nested_compile_region
    def block(v):
        next(calls)
        return v.relu() * 2

    def f(x):
        return block(block(block(x)))

    gm = hop.trace(f, X(8))
    assert next(calls) == 1  # traced once
    assert list(gm.subgraphs) == ["subgraph_0"]
    assert [n.target for n in gm.graph.nodes if n.op == "call_hop"] == ["invoke_subgraph"] * 3


def test_invoke_subgraph_whose_body_closes_over_its_first_argument_keeps_the_closure():
    # The first call passes x, which the body also reads through a closure:
    # the shared subgraph_0 used to bind that closure to its input, so the
    # second call, passing x * 0.5, read x[0] of x * 0.5 (0.528 for 0.704).
    def f(x):
        g = lambda z: z.exp().sum() * x[0]
        return hop.invoke_subgraph(g, x) + hop.invoke_subgraph(g, x * 0.5)

    x = hop.tensor([0.5, -1.0, 2.0], dtype=hop.float64)
    gm = hop.trace(f, x)
    assert placeholders(gm)["subgraph_0"] == ["x", "x_1"]
    assert gm(x).tolist() == f(x).tolist() == hop.compile(f)(x).tolist()


def test_nested_structures_round_trip_through_bodies():
    def f(x, y):
        out = hop.wrap(lambda p: {"a": p[0] + 1, "b": (p[1], 3)}, (x, y))
        return out["a"], out["b"]

    gm = hop.trace(f, X(2), X(2))
    x, y = X(2, seed=1), X(2, seed=2)
    a, (b, three) = gm(x, y)
    assert three == 3
    np.testing.assert_allclose(a.numpy(), (x + 1).numpy())
    np.testing.assert_allclose(b.numpy(), y.numpy())


def test_numpy_arguments_give_numpy_results():
    gm = hop.trace(lambda x: hop.wrap(lambda: x * 2), np.ones(3, np.float32))
    out = gm(np.arange(3, dtype=np.float32))
    assert isinstance(out, np.ndarray)
    assert out.tolist() == [0.0, 2.0, 4.0]


def test_call_hop_nodes_give_their_arguments_by_name_and_args_flat_for_every_hop():
    # node.args of a call_hop is its leads, then every value passed to its
    # bodies (each group's, then the lifted ones); .leads, .groups and
    # .lifted name them as the class's signature does.  map's args were
    # ((x,), w) and a loop's ((carries...), lifted...) before.
    w = X(3, seed=1)

    def f(x):
        a = hop.map(lambda r: r * w, x)
        b = hop.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v + w), (0, a[0]))[1]
        c = hop.scan(lambda h, xi: (h + xi * w, h), b, x)[0]
        d = hop.fori_loop(0, 3, lambda i, v: v * w, c)
        return hop.cond(d.sum() > 0, lambda v: v * w, lambda v: v, (d,))

    gm = hop.trace(f, X(4, 3, seed=2))
    calls = {n.target: n for n in gm.graph if n.op == "call_hop"}

    def names(values):
        return tuple(v if isinstance(v, (int, bool)) else v.name for v in values)

    m = calls["map"]
    assert m.leads == {} and m.lifted == ()
    assert {k: names(v) for k, v in m.groups.items()} == {"xs": ("x",), "args": ("w",)}
    assert names(m.args) == ("x", "w")
    wl = calls["while_loop"]
    assert wl.leads == {}
    assert {k: names(v) for k, v in wl.groups.items()} == {"carried_inputs": ("full", "select")}
    assert names(wl.lifted) == ("w",)
    assert names(wl.args) == ("full", "select", "w")
    sc = calls["scan"]
    assert sc.leads == {"reverse": False, "dim": 0, "length": -1}
    assert {k: names(v) for k, v in sc.groups.items()} == {"init": ("getitem_2",), "xs": ("x",)}
    assert names(sc.args) == (False, 0, -1, "getitem_2", "x", "w")
    fl = calls["fori_loop"]
    assert fl.leads == {"lower": 0, "upper": 3}
    assert names(fl.args) == (0, 3, "getitem_3", "w")
    cd = calls["cond"]
    assert names(cd.leads.values()) == ("gt",)
    assert {k: names(v) for k, v in cd.groups.items()} == {"operands": ("getitem_5", "w")}
    assert cd.lifted == () and names(cd.args) == ("gt", "getitem_5", "w")
    # Not a call_hop: args as recorded, no groups.
    mul = gm.subgraphs["map_body_0"].graph.find("mul")
    assert names(mul.args) == ("x", "w") and mul.groups == {} and mul.lifted == ()


# ---------------------------------------------------------------- errors

def test_bool_of_a_traced_tensor_says_to_use_cond():
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(hop.TraceError, match="use hop.cond"):
        hop.trace(f, X(3))


def test_mismatched_branch_outputs_name_the_output_and_both_branches():
    def f(x):
        return hop.cond(x.sum() > 0, lambda: x, lambda: x.sum(0))

    with pytest.raises(hop.TraceError,
                       match=r"cond: output 0 of the true branch is f32\[3, 2\] but the false "
                             r"branch gives f32\[2\]"):
        hop.trace(f, X(3, 2))


def test_a_body_that_raises_surfaces_its_own_exception_and_changes_nothing():
    class Boom(Exception):
        pass

    def bad():
        raise Boom("inside")

    def f(x):
        return hop.cond(x.sum() > 0, bad, lambda: x)

    with pytest.raises(Boom, match="inside"):
        hop.trace(f, X(3))


def test_rebinding_a_nonlocal_in_a_body_is_a_trace_error_and_is_undone():
    def f(x):
        count = 0

        def body():
            nonlocal count
            count += 1
            return x

        try:
            return hop.wrap(body)
        finally:
            assert count == 0

    with pytest.raises(hop.TraceError, match=r"hop.wrap: the wrap body has a side effect: it "
                                             r"rebinds the nonlocal variable 'count'"):
        hop.trace(f, X(3))


def test_mutating_an_outer_list_in_a_body_is_a_trace_error_and_is_undone():
    seen = []

    def f(x):
        return hop.cond(x.sum() > 0, lambda: seen.append(x) or x, lambda: x)

    with pytest.raises(hop.TraceError, match="it mutates 'seen'"):
        hop.trace(f, X(3))
    assert seen == []


def test_a_proxy_used_after_its_trace_ended_is_a_trace_error():
    kept = {}

    def f(x):
        kept["x"] = x
        return x + 1

    hop.trace(f, X(3))
    with pytest.raises(hop.TraceError):
        kept["x"] + 1


def test_map_over_zero_rows_is_a_shape_error():
    with pytest.raises(hop.ShapeError, match="zero-length"):
        hop.trace(lambda xs: hop.map(lambda r: r, xs), hop.zeros(0, 3))


def test_cond_outputs_of_different_sizes_get_an_unbacked_size():
    def f(x):
        return hop.cond(x.sum() > 0, lambda: x, lambda: x.sum(0, keepdim=True))

    gm = hop.trace(f, X(3, 2))
    assert gm.graph.find("cond").outputs[0] == hop.TensorMeta(hop.float32, ("u0", 2))
    x = X(3, 2, seed=4)
    for sign in (1, -1):
        np.testing.assert_allclose(gm(x * sign).numpy(), f(x * sign).numpy(), rtol=1e-6)


def test_non_callable_body_is_a_type_error():
    with pytest.raises(TypeError, match="hop.cond: true_fn must be callable, got int"):
        hop.cond(True, 1, lambda: 0)


_HINTED = hop.ones(4)


class _Scaler:
    def body(self, v):
        return v - _HINTED


def test_captured_tensors_are_named_after_the_cell_or_global_holding_them_in_any_body():
    # Trace.name_hints reads a body's cells and the globals its code names: a
    # lambda's closure tensor and global, and a bound method's global (read
    # through the method's attributes).
    def make():
        w_cell = hop.full((4,), 2.0)
        unset = None  # noqa: F841  (a cell holding no tensor is not hinted)

        def f(x):
            y = hop.wrap(lambda v: v * w_cell, x)
            return hop.wrap(_Scaler().body, y)
        return f

    gm = hop.trace(make(), hop.ones(4))
    assert_graph_equal(gm, '''
        def forward(x: "f32[4]", w_cell: "f32[4]", _HINTED: "f32[4]"):
            def wrap_body_0(x: "f32[4]", w_cell: "f32[4]"):
                mul: "f32[4]" = mul(x, w_cell)
                return (mul,)

            def wrap_body_1(getitem: "f32[4]", _HINTED: "f32[4]"):
                sub: "f32[4]" = sub(getitem, _HINTED)
                return (sub,)

            wrap: "f32[4]" = wrap(wrap_body_0, (x, w_cell))
            getitem: "f32[4]" = wrap[0]
            wrap_1: "f32[4]" = wrap(wrap_body_1, (getitem, _HINTED))
            getitem_1: "f32[4]" = wrap_1[0]
            return (getitem_1,)
    ''')


_REBOUND = hop.ones(4)


def test_a_body_whose_global_and_cell_are_rebound_between_traces_reads_the_new_values():
    # What a body reads is read anew on every trace (only what its code object
    # alone decides is kept per code object): the same body code, its cell
    # and its module's global rebound between two traces.
    global _REBOUND
    scale = hop.full((4,), 2.0)

    def f(x):
        return hop.wrap(lambda v: v * scale + _REBOUND, x)

    x = hop.ones(4)
    first = hop.trace(f, x)
    assert first(x).tolist() == [3.0] * 4
    old_global = _REBOUND
    try:
        scale = hop.full((4,), 3.0)
        _REBOUND = hop.full((4,), 10.0)
        second = hop.trace(f, x)
        assert second(x).tolist() == [13.0] * 4
    finally:
        _REBOUND = old_global
    assert placeholders(second) == placeholders(first) == {
        "forward": ["x", "scale", "_REBOUND"], "wrap_body_0": ["x", "scale", "_REBOUND"]}


def test_traced_cond_takes_each_kind_of_tensor_pred_and_list_operands_as_eager_does():
    # cond's common traced call (a rank-0 tensor pred, tuple operands) skips
    # _pred's walk (issue #30); a float or int rank-0 pred is still compared
    # with 0, a one-element pred of rank 1 still goes through _pred, and list
    # operands are still a tuple of operands.
    def f(x):
        a = hop.cond(x.sum(), lambda u: u + 1.0, lambda u: u - 1.0, (x,))
        b = hop.cond(x.sum() > 0, lambda u: u * 2.0, lambda u: u * 3.0, [a])
        c = hop.cond((x.sum() > 0).reshape(1), lambda u: u + 5.0, lambda u: u - 5.0, (b,))
        return hop.cond(x.sum().to(hop.int32), lambda u: -u, lambda u: u, (c,))
    for x in (hop.tensor([1.0, 2.0]), hop.tensor([-1.0, -2.0]), hop.tensor([0.0, 0.0])):
        gm = hop.trace(f, x)
        np.testing.assert_array_equal(gm(x).numpy(), f(x).numpy())
    code = gm.code
    assert code.count("= ne(") == 2 and code.count("= cond(") == 4
    with pytest.raises(hop.ShapeError, match=r"hop.cond: pred must have one element, got shape "
                                             r"\(2,\)"):
        hop.trace(lambda x: hop.cond(x > 0, lambda u: u, lambda u: -u, (x,)), hop.ones(2))
