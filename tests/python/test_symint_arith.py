"""SymInt arithmetic that Python does on ints, traced: a traced or compiled
function returns what it returns eagerly, bit for bit, or raises a clear
error (docs/ARCHITECTURE.md, "SymInt arithmetic").

Inside traced bodies a loop index (u0) or a size (s0 under dynamic=True) is
a hop.SymInt; eagerly the same code sees an int.  i ** k (constant k >= 0)
and abs(i) stay SymInts; a SymInt with a float, or a true division, gives a
hop.SymFloat, computed from the symbol in double at run time and combined
with tensors as a weak Python float.

Bools are the ints 0 and 1 beside SymInts and SymFloats, as in Python:
i + True, i * False, True - i, i ** True, i // True, i % True and i == True
give what the int arithmetic gives eagerly, bit for bit, in fori_loop bodies
and with dynamic sizes (docs/ARCHITECTURE.md, "SymInt arithmetic").

A hop.SymFloat where a function takes a tensor or a number: eagerly the
argument is a Python float (i * 0.5 of an int i), while tracing a SymFloat;
it acts as that weak float (the tensors' float dtype, or float32), bit for
bit with eager, or raises a clear error naming it; a SymFloat returned from
a traced function is the Python float eager returns (docs/ARCHITECTURE.md,
"SymInt arithmetic").
"""
import os

import numpy as np
import pytest

import hop


def bits(t):
    return t.dtype, tuple(t.shape), t.numpy().tobytes()


def three_ways(f, *args, dynamic=False):
    """f eagerly, through hop.trace's GraphModule and through hop.compile."""
    eager = f(*args)
    traced = hop.trace(f, *args, dynamic=dynamic)(*args)
    compiled = hop.compile(f, dynamic=dynamic)(*args)
    assert hop._C._trace_depth() == 0
    return eager, traced, compiled


def same_bits_three_ways(body, seed, trips):
    """fori_loop(0, trips, body, x) eagerly, traced and compiled: the same
    bits; returns the eager result."""
    x = hop.randn(4, seed=seed)
    eager, traced, compiled = three_ways(lambda x: hop.fori_loop(0, trips, body, x), x)
    assert bits(traced) == bits(eager)
    assert bits(compiled) == bits(eager)
    return eager


BODIES = {
    "i * 0.25": lambda i, v: v + i * 0.25,
    "0.25 * i": lambda i, v: v + 0.25 * i,
    "i + 0.5": lambda i, v: v + (i + 0.5),
    "0.5 - i": lambda i, v: v + (0.5 - i),
    "i * 0.1": lambda i, v: v + i * 0.1,
    "i / 2": lambda i, v: v + i / 2,
    "i / 3": lambda i, v: v + i / 3,
    "7 / (i + 1)": lambda i, v: v + 7 / (i + 1),
    "i / 3 * 0.7 - i": lambda i, v: v + (i / 3 * 0.7 - i),
    "-(i * 0.3)": lambda i, v: v - (-(i * 0.3)),
    "abs(0.5 - i)": lambda i, v: v + abs(0.5 - i),
    "i ** 2": lambda i, v: v + i ** 2,
    "i ** 0": lambda i, v: v + i ** 0,
    "(i - 2) ** 3": lambda i, v: v + (i - 2) ** 3,
    "pow(i, 3, 4)": lambda i, v: v + pow(i, 3, 4),
    "abs(i - 2)": lambda i, v: v + abs(i - 2),
    "+i": lambda i, v: v + (+i),
    "tensor first": lambda i, v: v * 1.5 + (i * 0.1) * v,
    "sym float with sym": lambda i, v: v + (i * 0.1 + i) / (i + 2),
}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_fori_loop_bodies_give_the_eager_bits(name):
    assert same_bits_three_ways(BODIES[name], seed=1, trips=7).dtype == hop.float32


def test_the_float_is_rounded_from_double_as_eager_rounds_a_python_float():
    # v + i * 0.1: eager computes i * 0.1 in double and the f32 op rounds it
    # to f32; a float32 product (f32(i) * f32(0.1)) differs for some i, so
    # the comparison below would see a float32 shortcut.
    x = hop.zeros(64)
    idx = hop.arange(64).to(hop.float32)

    def f(x):
        return hop.fori_loop(0, 64, lambda i, v: v + (idx == i).to(hop.float32) * (i * 0.1), x)

    eager, traced, compiled = three_ways(f, x)
    want = np.array([np.float32(k * 0.1) for k in range(64)], dtype=np.float32)
    assert eager.numpy().tobytes() == want.tobytes()
    assert bits(traced) == bits(eager)
    assert bits(compiled) == bits(eager)
    shortcut = np.arange(64, dtype=np.float32) * np.float32(0.1)
    assert shortcut.tobytes() != want.tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64", "bool"])
@pytest.mark.parametrize("shape", [(5,), ()])
def test_a_sym_float_is_a_weak_scalar_beside_a_tensor(dtype, shape):
    # Eagerly a Python float: the tensor's float dtype, or float32 beside
    # ints and bools; a 0-d tensor's dtype counts as a 1-d one's.
    d = getattr(hop, dtype)
    x = (hop.randn(shape, seed=3) * 10).to(d)
    def f(x):
        def body(i, acc):
            return acc + (x + i / 3).to(hop.float64)  # exact: the bits of x + i / 3

        return hop.fori_loop(0, 5, body, hop.zeros(shape, dtype=hop.float64))

    def dtype_of(x):
        return hop.fori_loop(0, 1, lambda i, acc: acc * 0 + (x + i / 3), x + 1 / 3)

    eager, traced, compiled = three_ways(f, x)
    assert bits(traced) == bits(eager)
    assert bits(compiled) == bits(eager)
    want = {"float64": hop.float64, "float16": hop.float16}.get(dtype, hop.float32)
    assert (x + 1 / 3).dtype == want
    # the body's carry must keep its dtype: x + i / 3 has x + 1 / 3's
    assert hop.compile(dtype_of)(x).dtype == want
    assert hop.trace(dtype_of, x)(x).dtype == want


def test_zero_dim_float32_tensor_plus_sym_float_stays_float32():
    x = hop.tensor(1.25)

    def f(x):
        return hop.fori_loop(0, 6, lambda i, v: v + i / 7, x)

    eager, traced, compiled = three_ways(f, x)
    assert eager.dtype == hop.float32 and eager.shape == ()
    assert bits(traced) == bits(eager)
    assert bits(compiled) == bits(eager)


def test_a_symbolic_size_under_dynamic_shapes():
    def f(x):
        n = x.shape[0]
        return (x + n * 0.1, x.sum() + n / 3, x.to(hop.float64) * (n / 7),
                (x > 0) + n * 0.5, x.to(hop.float16) + (n + 0.25), x * (n ** 2 - abs(n - 7)))

    c = hop.compile(f, dynamic=True)
    for size, seed in ((4, 1), (7, 2), (9, 3), (13, 4)):
        x = hop.randn(size, seed=seed)
        eager = f(x)
        for e, got in zip(eager, c(x)):
            assert bits(got) == bits(e)
        gm = hop.trace(f, x, dynamic=True)
        for e, got in zip(eager, gm(x)):
            assert bits(got) == bits(e)
    assert c.recompiles == 0
    assert hop._C._trace_depth() == 0


def test_what_the_symbols_give_while_tracing():
    seen = {}

    def f(x):
        n = x.shape[0]
        seen["pow"] = n ** 3
        seen["abs"] = abs(n - 7)
        seen["mul"] = n * 0.5
        seen["div"] = n / 3
        seen["nested"] = -(n * 0.5) + 1
        return x

    hop.trace(f, hop.ones(4), dynamic=True)
    assert type(seen["pow"]) is hop.SymInt and seen["pow"].expr == "s0**3"
    assert type(seen["abs"]) is hop.SymInt and seen["abs"].expr == "Max(-s0 + 7, s0 - 7)"
    assert type(seen["mul"]) is hop.SymFloat and repr(seen["mul"]) == "SymFloat(s0 * 0.5)"
    assert str(seen["div"]) == "s0 / 3"
    assert str(seen["nested"]) == "(-(s0 * 0.5)) + 1"


def test_abs_of_a_size_simplifies_and_pow_expands():
    seen = {}

    def f(x):
        n = x.shape[0]
        seen["abs"] = abs(n)
        seen["pow"] = (n + 1) ** 2
        return x

    hop.trace(f, hop.ones(4), dynamic=True)
    assert seen["abs"].expr == "s0"
    assert seen["pow"].expr == "s0**2 + 2*s0 + 1"


def test_grad_and_vmap_through_a_sym_float():
    x = hop.randn(3, seed=5)
    g = hop.grad(lambda x: hop.fori_loop(0, 5, lambda i, v: v * (i * 0.25 + 1), x).sum())
    want = np.prod([k * 0.25 + 1 for k in range(5)])
    assert np.allclose(g(x).numpy(), want)
    assert bits(hop.compile(g)(x)) == bits(g(x))
    v = hop.vmap(lambda x: hop.fori_loop(0, 3, lambda i, v: v + i * 0.25, x))(hop.zeros(2, 3))
    assert v.numpy().tolist() == [[0.75] * 3] * 2


# ------------------------------------------------------------------ errors

def _both(f, x, exc, message, eager=False, body=None):
    """f(x) traced and compiled (and eagerly, with eager) raises exactly
    exc(message) and leaves no trace on the stack.  body: the loop body
    whose conversion it is, whose graph and line the message then names
    (_breaks._in_body)."""
    runs = [("traced once", lambda: hop.trace(f, x)),
            ("hop.compile makes no graph break inside one", lambda: hop.compile(f)(x))]
    for how, run in ([("", lambda: f(x))] if eager else []) + runs:
        with pytest.raises(exc) as e:
            run()
        want = message if body is None or not how else \
            (f"{message} (in fori_loop_body_0, at test_symint_arith.py:"
             f"{body.__code__.co_firstlineno}: a HOP body is one graph, {how}, so its Python "
             f"code cannot read a traced value)")
        assert str(e.value) == want
        assert hop._C._trace_depth() == 0


def _raises(body, exc, message, conversion=False):
    x = hop.randn(4, seed=1)
    f = lambda x: hop.fori_loop(0, 5, body, x)  # noqa: E731
    _both(f, x, exc, message, body=body if conversion else None)
    return f, x


ALT = "(hop.zeros((), dtype=hop.float64) + u0)"
NO_FLOAT = ("a float result of {op} is not supported for SymInts (SymInts make floats only "
            "with +, -, * and /, which give Python's bits); use int operands, or compute it on "
            "a float64 tensor: ")
SF_NO = ("not supported while tracing: a SymFloat's value is known only at run time "
         "(SymFloats support +, -, *, /, unary -, + and abs(), and combine with tensors); "
         "do it on a tensor instead, e.g. hop.zeros((), dtype=hop.float64) + (u0 * 0.5)")

ERRORS = {
    "i // 0.5": (lambda i, v: v + i // 0.5, TypeError,
                 "SymInt u0 // float 0.5: " + NO_FLOAT.format(op="//") + ALT + " // 0.5"),
    "i % 0.5": (lambda i, v: v + i % 0.5, TypeError,
                "SymInt u0 % float 0.5: " + NO_FLOAT.format(op="%") + ALT + " % 0.5"),
    "i ** 0.5": (lambda i, v: v + i ** 0.5, TypeError,
                 "SymInt u0 ** float 0.5: " + NO_FLOAT.format(op="**") + ALT + " ** 0.5"),
    "0.5 ** i": (lambda i, v: v + 0.5 ** i, TypeError,
                 "float 0.5 ** SymInt u0: " + NO_FLOAT.format(op="**")
                 + "hop.full((), 0.5, dtype=hop.float64) ** u0"),
    "i ** -2": (lambda i, v: v + i ** -2, TypeError,
                "SymInt u0 ** int -2: a negative exponent gives a float, and SymInts make floats "
                "only with +, -, * and /; write 1 / u0 ** 2 for that float"),
    "2 ** i": (lambda i, v: v + 2 ** i, TypeError,
               "int 2 ** SymInt u0: a SymInt exponent has no symbolic form (a SymInt power needs "
               "a constant int exponent >= 0); use a constant exponent, or a tensor base: "
               "hop.full((), 2, dtype=hop.int64) ** u0"),
    "i ** i": (lambda i, v: v + i ** i, TypeError,
               "SymInt u0 ** SymInt u0: a SymInt exponent has no symbolic form (a SymInt power "
               "needs a constant int exponent >= 0); use a constant exponent"),
    "1 / i": (lambda i, v: v + 1 / i, hop.DataDependentError,
              "int 1 / SymInt u0: cannot tell whether the divisor u0 is 0 (it depends on data), "
              "where Python raises ZeroDivisionError; divide a float64 tensor by it instead "
              "(inf or nan for 0, no error): hop.full((), 1, dtype=hop.float64) / u0"),
    "i / 0": (lambda i, v: v + i / 0, ZeroDivisionError, "division by zero"),
    "i / 0.0": (lambda i, v: v + i / 0.0, ZeroDivisionError, "float division by zero"),
    "i * 0.5 / 0": (lambda i, v: v + i * 0.5 / 0, ZeroDivisionError, "float division by zero"),
    "sf // 2": (lambda i, v: v + (i * 0.5) // 2, TypeError, "SymFloat u0 * 0.5 // int 2: " + SF_NO),
    "sf > 1": (lambda i, v: v if i * 0.5 > 1 else v, TypeError,
               "SymFloat u0 * 0.5 > int 1: " + SF_NO),
    "float(sf)": (lambda i, v: v + float(i * 0.5), TypeError, "float(SymFloat u0 * 0.5): " + SF_NO),
    "int(sf)": (lambda i, v: v + int(i * 0.5), TypeError, "int(SymFloat u0 * 0.5): " + SF_NO),
    "1 / sf": (lambda i, v: v + 1 / (i * 0.5), TypeError,
               "int 1 / SymFloat u0 * 0.5: dividing by a SymFloat is not supported while tracing "
               "(hop cannot tell whether it is 0, where Python raises ZeroDivisionError); divide "
               "by a tensor or a SymInt instead"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_what_cannot_be_done_raises_a_clear_error(name):
    body, exc, message = ERRORS[name]
    f, x = _raises(body, exc, message, conversion=message.endswith(SF_NO))
    if exc is ZeroDivisionError:
        with pytest.raises(ZeroDivisionError, match=f"^{message}$"):
            f(x)  # eager raises the same
    elif name in ("1 / i", "i ** -2", "1 / sf"):
        with pytest.raises(ZeroDivisionError):
            f(x)  # eager divides by i == 0 too
    else:
        f(x)  # eager computes it


def test_the_suggested_alternatives_run():
    x = hop.randn(4, seed=1)
    z = lambda i: hop.zeros((), dtype=hop.float64) + i  # noqa: E731
    for body in (lambda i, v: v + (z(i) // 0.5).to(hop.float32),
                 lambda i, v: v + (z(i) ** 0.5).to(hop.float32),
                 lambda i, v: v + 1 / (i + 1) ** 2,
                 lambda i, v: v + hop.full((), 2, dtype=hop.int64) ** i,
                 lambda i, v: v + (hop.full((), 1, dtype=hop.float64) / (i + 1)).to(hop.float32)):
        f = lambda x: hop.fori_loop(0, 5, body, x)  # noqa: E731
        assert bits(hop.compile(f)(x)) == bits(f(x))


def test_a_sym_float_used_outside_its_trace():
    kept = []

    def f(x):
        kept.append(x.shape[0] * 0.5)
        return x

    hop.trace(f, hop.ones(3), dynamic=True)
    with pytest.raises(hop.TraceError):
        kept[0] + 1.0
    with pytest.raises(hop.TraceError):
        hop.ones(3) + kept[0]
    with pytest.raises(hop.TraceError):                     # as a function's operand
        hop.where(hop.ones(3) > 0, kept[0], 1.0)
    with pytest.raises(hop.TraceError):
        hop.full((3,), kept[0])
    assert hop._C._trace_depth() == 0


# ------------------------------------------------------------------ bools

BOOL_BODIES = {
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


@pytest.mark.parametrize("name", sorted(BOOL_BODIES))
def test_fori_loop_bodies_with_bools_give_the_eager_bits(name):
    same_bits_three_ways(BOOL_BODIES[name], seed=3, trips=6)


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
    _both(f, x, exc, message, eager=True)


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


# ------------------------------------------------- SymFloat operands of functions

OPERAND_BODIES = {
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


@pytest.mark.parametrize("name", sorted(OPERAND_BODIES))
def test_sym_float_operands_give_the_eager_bits(name):
    same_bits_three_ways(OPERAND_BODIES[name], seed=2, trips=6)


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


# ------------------------------------------------- SymInt expressions returned

def test_a_returned_sym_int_expression_is_the_eager_int():
    # s0 + 1, s0 * s1, 7 - s1: a 0-d int64 value of the plan, returned as
    # the int eager returns, for every size without a recompile
    fns = [lambda x: x.shape[0] + 1, lambda x: (x * 2, x.shape[0] * x.shape[1]),
           lambda x: {"n": 7 - x.shape[1], "m": x.shape[0]}]
    for f in fns:
        cf = hop.compile(f, dynamic=True)
        for shape in ((5, 3), (2, 9), (4, 4)):  # (sizes 0 and 1 specialise)
            x = hop.randn(*shape, seed=1)
            want, got, traced = f(x), cf(x), hop.trace(f, x, dynamic=True)(x)
            for out in (got, traced):
                w, g = (want[1], out[1]) if isinstance(want, tuple) else (want, out)
                assert type(g) is type(w) and g == w, (shape, g, w)
        assert len(cf.graphs) == 1
    assert hop._C._trace_depth() == 0


def test_a_returned_sym_int_expression_survives_pickling():
    import pickle
    f = lambda x: x.shape[0] * 3 - 1  # noqa: E731
    cf = hop.compile(f, dynamic=True)
    cf(hop.ones(4))
    back = pickle.loads(pickle.dumps(cf))
    assert back(hop.ones(6)) == 17 and type(back(hop.ones(6))) is int
