"""SymInt arithmetic that Python does on ints, traced: a traced or compiled
function returns what it returns eagerly, bit for bit, or raises a clear
error (docs/ARCHITECTURE.md, "SymInt arithmetic").

Inside traced bodies a loop index (u0) or a size (s0 under dynamic=True) is
a hop.SymInt; eagerly the same code sees an int.  i ** k (constant k >= 0)
and abs(i) stay SymInts; a SymInt with a float, or a true division, gives a
hop.SymFloat, computed from the symbol in double at run time and combined
with tensors as a weak Python float.
"""
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
    body = BODIES[name]
    x = hop.randn(4, seed=1)
    f = lambda x: hop.fori_loop(0, 7, body, x)  # noqa: E731
    eager, traced, compiled = three_ways(f, x)
    assert eager.dtype == hop.float32
    assert bits(traced) == bits(eager)
    assert bits(compiled) == bits(eager)


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

def _raises(body, exc, message):
    x = hop.randn(4, seed=1)
    f = lambda x: hop.fori_loop(0, 5, body, x)  # noqa: E731
    for run in (lambda: hop.trace(f, x), lambda: hop.compile(f)(x)):
        with pytest.raises(exc) as e:
            run()
        assert str(e.value) == message
        assert hop._C._trace_depth() == 0
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
    f, x = _raises(body, exc, message)
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
    assert hop._C._trace_depth() == 0
