"""Bools are the ints 0 and 1 beside SymInts and SymFloats, as in Python:
i + True, i * False, True - i, i ** True, i // True, i % True and i == True
give what the int arithmetic gives eagerly, bit for bit, in fori_loop bodies
and with dynamic sizes (docs/ARCHITECTURE.md, "SymInt arithmetic").
"""
import pytest

import hop


def bits(t):
    return t.dtype, tuple(t.shape), t.numpy().tobytes()


BODIES = {
    "i + True": lambda i, v: v + (i + True),
    "True + i": lambda i, v: v + (True + i),
    "i * False": lambda i, v: v + (i * False),
    "True - i": lambda i, v: v + (True - i),
    "i - True": lambda i, v: v * (i - True),
    "i ** True": lambda i, v: v + i ** True,
    "i ** False": lambda i, v: v + i ** False,
    "pow(i, True, 3)": lambda i, v: v + pow(i + 2, True, 3),
    "i // True": lambda i, v: v + i // True,
    "i % True": lambda i, v: v + i % True,
    "(i + 3) // (True + True)": lambda i, v: v + (i + 3) // (True + True),
    "i >= True": lambda i, v: v + (1.5 if i + 1 >= True else 0.5),
    "i / True": lambda i, v: v + i / True,
    "True / (i + 1)": lambda i, v: v + True / (i + 1),
    "i * 0.5 + True": lambda i, v: v + (i * 0.5 + True),
    "True * (i * 0.5)": lambda i, v: v + True * (i * 0.5),
    "(i * 0.5) / True": lambda i, v: v + (i * 0.5) / True,
    "False - i * 0.25": lambda i, v: v + (False - i * 0.25),
    "i + True is a SymInt": lambda i, v: v * hop.ones(i + True)[:1].sum(),
}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_fori_loop_bodies_with_bools_give_the_eager_bits(name):
    body = BODIES[name]
    x = hop.randn(4, seed=3)
    f = lambda x: hop.fori_loop(0, 6, body, x)  # noqa: E731
    eager = f(x)
    assert bits(hop.trace(f, x)(x)) == bits(eager)
    assert bits(hop.compile(f)(x)) == bits(eager)
    assert hop._C._trace_depth() == 0


def test_what_the_bools_give_while_tracing():
    seen = {}

    def f(x):
        n = x.shape[0]
        seen["add"] = n + True
        seen["rsub"] = True - n
        seen["mul"] = n * False
        seen["pow"] = n ** True
        seen["floordiv"] = n // True
        seen["mod"] = n % True
        seen["eq"] = n == True  # noqa: E712
        seen["float"] = n * 0.5 + True
        return x

    hop.trace(f, hop.ones(4), dynamic=True)
    for k in ("add", "rsub", "pow", "floordiv"):
        assert type(seen[k]) is hop.SymInt, k
    assert seen["add"].expr == "s0 + 1"
    assert seen["rsub"].expr == "-s0 + 1"
    assert seen["pow"].expr == "s0"
    assert seen["floordiv"].expr == "s0"
    assert type(seen["mul"]) is int and seen["mul"] == 0  # constants are ints
    assert type(seen["mod"]) is int and seen["mod"] == 0
    assert seen["eq"] is False
    assert type(seen["float"]) is hop.SymFloat and str(seen["float"]) == "(s0 * 0.5) + True"


def test_bools_with_a_dynamic_size():
    def f(x):
        n = x.shape[0]
        return (x + (n + True), x * (n * False), x - (True - n), x + n ** True, x + n // True,
                x + n % True, x + (n / True), x + (n * 0.5 + True), x * (False + n * 0.25),
                x + float(n == True), hop.zeros(n + True))  # noqa: E712

    c = hop.compile(f, dynamic=True)
    for size, seed in ((1, 1), (4, 2), (7, 3)):
        x = hop.randn(size, seed=seed)
        eager = f(x)
        got = c(x)
        assert len(got) == len(eager)
        for e, g in zip(eager, got):
            assert bits(g) == bits(e)
    assert hop._C._trace_depth() == 0


@pytest.mark.parametrize("body,exc,message", [
    (lambda i, v: v + i // False, ZeroDivisionError, "integer division or modulo by zero"),
    (lambda i, v: v + i // 0, ZeroDivisionError, "integer division or modulo by zero"),
    (lambda i, v: v + i % False, ZeroDivisionError, "integer modulo by zero"),
    (lambda i, v: v + i % 0, ZeroDivisionError, "integer modulo by zero"),
    (lambda i, v: v + i / False, ZeroDivisionError, "division by zero"),
    (lambda i, v: v + (i * 0.5) / False, ZeroDivisionError, "float division by zero"),
])
def test_a_false_divisor_raises_what_python_raises(body, exc, message):
    x = hop.randn(4, seed=1)
    f = lambda x: hop.fori_loop(0, 5, body, x)  # noqa: E731
    for run in (lambda: f(x), lambda: hop.trace(f, x), lambda: hop.compile(f)(x)):
        with pytest.raises(exc) as e:
            run()
        assert str(e.value) == message
        assert hop._C._trace_depth() == 0


def test_a_bool_base_with_a_sym_int_exponent():
    x = hop.randn(4, seed=1)
    f = lambda x: hop.fori_loop(0, 5, lambda i, v: v + True ** i, x)  # noqa: E731
    f(x)
    with pytest.raises(TypeError) as e:
        hop.compile(f)(x)
    assert str(e.value) == (
        "bool True ** SymInt u0: a SymInt exponent has no symbolic form (a SymInt power needs "
        "a constant int exponent >= 0); use a constant exponent, or a tensor base: "
        "hop.full((), True, dtype=hop.int64) ** u0")
    g = lambda x: hop.fori_loop(  # noqa: E731
        0, 5, lambda i, v: v + hop.full((), True, dtype=hop.int64) ** i, x)
    assert bits(hop.compile(g)(x)) == bits(g(x))
