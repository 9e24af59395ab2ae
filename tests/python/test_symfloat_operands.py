"""A hop.SymFloat where a function takes a tensor or a number: eagerly the
argument is a Python float (i * 0.5 of an int i), while tracing a SymFloat;
it acts as that weak float (the tensors' float dtype, or float32), bit for
bit with eager, or raises a clear error naming it; a SymFloat returned from
a traced function is the Python float eager returns (docs/ARCHITECTURE.md,
"SymInt arithmetic").
"""
import os

import pytest

import hop


def bits(t):
    return t.dtype, tuple(t.shape), t.numpy().tobytes()


BODIES = {
    "where else": lambda i, v: hop.where(v > 0, v, i * 0.5),
    "where then": lambda i, v: hop.where(v > 0, i * 0.1, v),
    "where both": lambda i, v: v + hop.where(v > 0, i * 0.1, i / 3),
    "where int branch": lambda i, v: v + hop.where(v > 0, i * 0.3, hop.ones(4, dtype=hop.int32)),
    "maximum": lambda i, v: hop.maximum(v, i * 0.5 - 1),
    "minimum first": lambda i, v: hop.minimum(i * 0.7, v),
    "add": lambda i, v: hop.add(v, i * 0.1),
    "add first": lambda i, v: hop.add(i * 0.1, v),
    "mul method": lambda i, v: v.mul(i * 0.3 + True),
    "sub operator": lambda i, v: v - i / 7,
    "comparison": lambda i, v: v + (v > i * 0.3),
    "comparison first": lambda i, v: v + hop.lt(i * 0.3, v),
    "float16": lambda i, v: v + hop.maximum(v.to(hop.float16), i * 0.1).to(hop.float32),
    "float64": lambda i, v: v + hop.maximum(v.to(hop.float64), i * 0.1).to(hop.float32),
    "int tensor": lambda i, v: v + hop.maximum(hop.ones(4, dtype=hop.int32), i * 0.7),
    "bool tensor": lambda i, v: v + hop.add(v > 0, i * 0.7),
    "0-d tensor": lambda i, v: v + hop.maximum(v.sum(), i * 0.7),
    "full": lambda i, v: v + hop.full((4,), i * 0.1),
    "full float64": lambda i, v: v + hop.full((4,), i * 0.1, dtype=hop.float64).to(hop.float32),
    "full float16": lambda i, v: v + hop.full((2, 2), i / 3, dtype=hop.float16).reshape(4),
}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_sym_float_operands_give_the_eager_bits(name):
    body = BODIES[name]
    x = hop.randn(4, seed=2)
    f = lambda x: hop.fori_loop(0, 6, body, x)  # noqa: E731
    eager = f(x)
    assert bits(hop.trace(f, x)(x)) == bits(eager)
    assert bits(hop.compile(f)(x)) == bits(eager)
    assert hop._C._trace_depth() == 0


def test_sym_float_operands_with_a_dynamic_size():
    def f(x):
        n = x.shape[0]
        return (hop.where(x > 0, x, n * 0.1), hop.maximum(x.to(hop.float16), n / 3),
                hop.add(hop.arange(n), n * 0.25), x > n / 7, hop.full((n,), n * 0.5),
                hop.full((2, n), n / 3, dtype=hop.float64), hop.minimum(x.sum(), n * 0.1))

    c = hop.compile(f, dynamic=True)
    for size, seed in ((2, 1), (5, 2), (9, 3)):
        x = hop.randn(size, seed=seed)
        eager = f(x)
        for e, g in zip(eager, c(x)):
            assert bits(g) == bits(e)
        for e, g in zip(eager, hop.trace(f, x, dynamic=True)(x)):
            assert bits(g) == bits(e)
    assert c.recompiles == 0
    assert hop._C._trace_depth() == 0


def test_a_returned_sym_float_is_the_eager_float(tmp_path):
    f = lambda x: (x * 2, x.shape[0] * 0.1, x.shape[0] / 3, x.shape[0])  # noqa: E731
    c = hop.compile(f, dynamic=True)
    gm = hop.trace(f, hop.ones(4), dynamic=True)
    path = os.path.join(tmp_path, "f.hop")
    hop.save(gm, path)
    loaded = hop.load(path)
    for size in (4, 7, 10):
        x = hop.randn(size, seed=size)
        eager = f(x)
        for run in (c, gm, loaded):
            got = run(x)
            assert bits(got[0]) == bits(eager[0])
            assert type(got[1]) is float and got[1] == eager[1]
            assert type(got[2]) is float and got[2] == eager[2]
            assert type(got[3]) is int and got[3] == eager[3]
    assert c.recompiles == 0
    g = lambda x: hop.fori_loop(0, 3, lambda i, v: v + 1, x).shape[0] * 0.7  # noqa: E731
    x = hop.ones(6)
    got = hop.compile(g, dynamic=True)(x)
    assert type(got) is float and got == g(x) == 6 * 0.7


def _both(f, x, exc, message):
    for run in (lambda: hop.trace(f, x), lambda: hop.compile(f)(x)):
        with pytest.raises(exc) as e:
            run()
        assert str(e.value) == message
        assert hop._C._trace_depth() == 0


def test_full_of_a_sym_float_with_an_int_dtype():
    x = hop.randn(4, seed=1)
    f = lambda x: hop.fori_loop(  # noqa: E731
        0, 5, lambda i, v: v + hop.full((4,), i * 0.5, dtype=hop.int32), x)
    f(x)  # eager: int(0.5 * i) fills
    _both(f, x, TypeError,
          "full(): argument 'fill_value' is SymFloat u0 * 0.5, a float known only at run time, "
          "and dtype int32 is not a float dtype: hop fills float dtypes with a SymFloat; use a "
          "float dtype and .to(hop.int32), or an int fill value")


def test_no_tensor_operand_raises_what_eager_raises():
    x = hop.randn(4, seed=1)
    f = lambda x: hop.fori_loop(0, 5, lambda i, v: v + hop.maximum(i * 0.5, 2), x)  # noqa: E731
    with pytest.raises(hop.InvalidError) as e:
        f(x)
    assert str(e.value) == "maximum: expected at least one tensor operand, got 0.0 and 2"
    _both(f, x, hop.InvalidError,
          "maximum: expected at least one tensor operand, got a SymFloat and no tensor (a "
          "SymFloat is a Python float eagerly)")


def test_a_sym_float_in_a_logical_op_or_a_shape():
    x = hop.randn(4, seed=1)
    f = lambda x: hop.fori_loop(  # noqa: E731
        0, 5, lambda i, v: v + hop.zeros(int(i * 0.5) + 1).sum(), x)
    with pytest.raises(TypeError) as e:
        hop.compile(f)(x)
    assert str(e.value).startswith("int(SymFloat u0 * 0.5): not supported while tracing")
    g = lambda x: hop.fori_loop(  # noqa: E731
        0, 5, lambda i, v: v + hop.zeros((i * 0.5,)).sum(), x)
    with pytest.raises(TypeError) as e:
        hop.compile(g)(x)
    assert str(e.value) == "zeros(): argument 'size' must be a tuple of ints, but item 0 is SymFloat"
    assert hop._C._trace_depth() == 0


def test_a_sym_float_used_outside_its_trace_in_a_function():
    kept = []

    def f(x):
        kept.append(x.shape[0] * 0.5)
        return x

    hop.trace(f, hop.ones(3), dynamic=True)
    with pytest.raises(hop.TraceError):
        hop.where(hop.ones(3) > 0, kept[0], 1.0)
    with pytest.raises(hop.TraceError):
        hop.full((3,), kept[0])
    assert hop._C._trace_depth() == 0
