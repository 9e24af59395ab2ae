"""A recorded add/sub/mul/div/maximum/minimum whose result has an operand's
metadata without a decision (graph/graph.c operand_result: a real float
tensor with a tensor of the same metadata or a Python scalar) gets what shape
inference gives, and the cases just outside it still go through inference:
the traced result's dtype and shape are eager's, and so are its values."""

import numpy as np
import pytest

import hop

OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "maximum": hop.maximum,
    "minimum": hop.minimum,
}


def tensor(dtype, shape=(3, 4), seed=0):
    return (hop.randn(*shape, seed=seed) + 2.0).to(dtype)


def check(fn, *args):
    eager = fn(*args)
    gm = hop.trace(fn, *args)
    node = [n for n in gm.graph.nodes if n.op == "call_op"][-1]
    assert (node.meta.dtype, tuple(node.meta.shape)) == (eager.dtype, tuple(eager.shape))
    traced = gm(*args)
    assert traced.dtype == eager.dtype
    assert np.array_equal(np.asarray(traced), np.asarray(eager), equal_nan=True)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", [hop.float16, hop.float32, hop.float64])
@pytest.mark.parametrize("scalar", [2, 0.5, True])
def test_float_tensor_and_a_scalar_either_side_keep_the_tensor_dtype(op, dtype, scalar):
    f = OPS[op]
    x = tensor(dtype)
    check(lambda x: f(x, scalar), x)
    check(lambda x: f(scalar, x), x)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", [hop.float16, hop.float32, hop.float64])
def test_two_tensors_of_one_metadata(op, dtype):
    f = OPS[op]
    check(lambda x, y: f(x, y), tensor(dtype), tensor(dtype, seed=1))
    check(lambda x: f(x, x), tensor(dtype))


@pytest.mark.parametrize("op", sorted(OPS))
def test_outside_the_shortcut_inference_decides(op):
    f = OPS[op]
    # other dtypes, other shapes, ints (div: f32), a bool tensor
    check(lambda x, y: f(x, y), tensor(hop.float32), tensor(hop.float64, seed=1))
    check(lambda x, y: f(x, y), tensor(hop.float32, (4,)), tensor(hop.float32, (3, 4), seed=1))
    ints = hop.tensor([[1, 2, 3], [4, 5, 6]], dtype=hop.int32)
    check(lambda x: f(x, 2), ints)
    check(lambda x: f(x, 2.5), ints)
    check(lambda x, y: f(x, y), ints, ints)


def test_bool_operands_of_sub_still_raise_inferences_error():
    b = hop.tensor([True, False])
    with pytest.raises(Exception, match="subtraction is not supported for bool operands"):
        hop.trace(lambda b: b - True, b)
