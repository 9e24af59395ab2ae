"""A traced two-value operator whose operands are proxies of the trace and
Python floats, ints and bools, and a one-tensor op on a proxy, are recorded
by python/_C/trace_op.c without the general conversions
(hop_py__trace_binary, hop_py__trace_unary); every other operand takes the
general path.  Either way the graph, its names, the result's metadata and
values, and the errors are the same: the traced result is eager's, and an
operand of a number subclass (which takes the general path) records the same
graph code as the plain number."""

import operator

import numpy as np
import pytest

import hop

OPS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "lt": operator.lt,
    "le": operator.le,
    "eq": operator.eq,
    "ne": operator.ne,
    "gt": operator.gt,
    "ge": operator.ge,
}


class Int(int):
    pass


class Float(float):
    pass


def tensor(dtype, seed=0):
    return (hop.randn(3, 4, seed=seed) * 2.0 + 3.0).to(dtype)


def check(fn, *args):
    """fn traced and run eagerly: the last op node's metadata and the
    result's dtype, shape and values agree.  Returns the graph code."""
    eager = fn(*args)
    gm = hop.trace(fn, *args)
    node = [n for n in gm.graph.nodes if n.op == "call_op"][-1]
    assert (node.meta.dtype, tuple(node.meta.shape)) == (eager.dtype, tuple(eager.shape))
    traced = gm(*args)
    assert (traced.dtype, tuple(traced.shape)) == (eager.dtype, tuple(eager.shape))
    assert np.array_equal(np.asarray(traced), np.asarray(eager), equal_nan=True)
    return gm.code


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", [hop.float32, hop.float64, hop.int32])
@pytest.mark.parametrize("scalar", [3, 0.5, True])
def test_proxy_and_a_python_number_either_side(op, dtype, scalar):
    f = OPS[op]
    x = tensor(dtype)
    sub = Int(scalar) if type(scalar) is int else Float(scalar) if type(scalar) is float else None
    code = check(lambda x: f(x, scalar), x)
    rcode = check(lambda x: f(scalar, x), x)
    if sub is not None:  # the general path (a subclass) records the same graph
        assert check(lambda x: f(x, sub), x) == code
        assert check(lambda x: f(sub, x), x) == rcode


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtypes", [(hop.float32, hop.float32), (hop.float32, hop.float64),
                                    (hop.int32, hop.float32), (hop.int64, hop.int32)])
def test_two_proxies(op, dtypes):
    f = OPS[op]
    check(lambda x, y: f(x, y), tensor(dtypes[0]), tensor(dtypes[1], seed=1))
    check(lambda x: f(x, x), tensor(dtypes[0]))


def test_a_chain_names_its_nodes_as_before():
    def f(x, y):
        for _ in range(3):
            x = x * y
            x = x + 1.0
            x = 2 - x
        return x > 0.5
    gm = hop.trace(f, tensor(hop.float32), tensor(hop.float32, seed=1))
    names = [n.name for n in gm.graph.nodes if n.op == "call_op"]
    assert names == ["mul", "add", "sub", "mul_1", "add_1", "sub_1", "mul_2", "add_2", "sub_2",
                     "gt"]


def test_a_captured_tensor_takes_the_general_path():
    w = tensor(hop.float32, seed=2)
    x = tensor(hop.float32)
    code = check(lambda x: x * w + w, x)
    assert code == ('def forward(x: "f32[3, 4]", w: "f32[3, 4]"):\n'
                    '    mul: "f32[3, 4]" = mul(x, w)\n'
                    '    add: "f32[3, 4]" = add(mul, w)\n'
                    '    return (add,)\n')


def test_an_int_out_of_int64_raises_what_eager_raises():
    x = tensor(hop.float32)
    big = 1 << 70
    with pytest.raises(OverflowError) as eager:
        x * big
    with pytest.raises(OverflowError) as traced:
        hop.trace(lambda x: x * big, x)
    assert str(traced.value) == str(eager.value)


def test_a_proxy_of_another_trace_is_reported():
    leaked = []

    def first(x):
        leaked.append(x)
        return x + 1.0
    hop.trace(first, tensor(hop.float32))
    with pytest.raises(hop.TraceError, match="add: a traced value of another trace was used"):
        hop.trace(lambda y: y + leaked[0], tensor(hop.float32))


def test_an_operand_that_is_no_number_is_not_implemented():
    x = tensor(hop.float32)

    def f(x):
        assert x.__add__("a") is NotImplemented
        assert (x == None) is False  # noqa: E711 (Python's identity fallback)
        return x + 1.0
    check(f, x)
    with pytest.raises(TypeError, match="unsupported operand"):
        hop.trace(lambda x: x + "a", x)


def test_matmul_of_a_scalar_raises_as_eagerly():
    x = tensor(hop.float32)
    with pytest.raises(Exception) as eager:
        x @ 2.0
    with pytest.raises(Exception) as traced:
        hop.trace(lambda x: x @ 2.0, x)
    assert type(traced.value) is type(eager.value)


UNARY = {
    "neg": operator.neg,
    "abs": abs,
    "relu": lambda x: x.relu(),
    "exp": hop.exp,
    "sin": lambda x: x.sin(),
    "clone": lambda x: x.clone(),
}


@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("dtype", [hop.float32, hop.float64, hop.int32])
def test_one_tensor_ops_on_a_proxy(op, dtype):
    f = UNARY[op]
    x = tensor(dtype)
    code = check(lambda x: f(x) + 1, x)
    w = tensor(dtype, seed=3)  # a captured tensor: the general path, its own placeholder
    assert check(lambda x: f(w) + x, x) != code


def test_one_tensor_ops_name_their_nodes_as_before():
    def f(x):
        return (-x).relu().exp().relu()
    gm = hop.trace(f, tensor(hop.float32))
    assert [n.name for n in gm.graph.nodes if n.op == "call_op"] == \
        ["neg", "relu", "exp", "relu_1"]
