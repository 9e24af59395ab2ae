"""A differential campaign on Python's operators with mixed operands (issue
#29, the first rule): each side a NumPy scalar of any dtype, a 0-d, 1-d or
2-d array, a Python int (2**63 and -2**63-1 too), float, complex or bool, a
list, a tuple or a nested list; the operators + - * / // % ** @ & | ^ << >>
(either side: the reflected forms), the comparisons, unary - + ~ abs,
divmod, the in-place forms on arrays (NumPy's UFuncTypeError where the
result's dtype cannot be cast back), round() and the conversions bool()
int() float() complex() operator.index() of 0-d and one-element arrays.

Each expression runs by NumPy 1.24 and by hop: eagerly on hop.numpy arrays,
compiled with the operands passed in, and compiled with one operand a
constant of the code.  The results agree on type() (an ndarray, a NumPy
scalar of the dtype or a Python number), dtype, shape and values (integers
bit for bit, floats too with NaN equal to NaN), or both raise the same
exception type; warnings aside.  The default pass runs thirty
expressions; HOP_TEST_BUDGET=stress ten times as many, with new draws."""

import operator
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import hop
import hop.numpy as hnp

from budget import examples, pinned

DTYPES = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
SHAPES = [(1,), (3,), (2, 3), (2, 1)]
PY_NUMBERS = ["0", "1", "-1", "3", "-7", "255", "-129", "2**31", "2**63", "-2**63-1", "2**64",
              "0.5", "-2.5", "1e300", "float('nan')", "float('inf')", "-0.0", "1j", "(2-3j)",
              "True", "False"]
SEQUENCES = ["[1, 2, 3]", "(1.5, -2, 0)", "[True, False, True]", "[[1], [2]]", "[1j, 2, 0]",
             "[[1, 2, 3], [4, 5, 6]]", "(3,)", "[0.5]", "[[2]]", "(-1, 2**40, 7)"]
BINARY = ["+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>",
          "==", "!=", "<", "<=", ">", ">="]
UNARY = ["-{}", "+{}", "~{}", "abs({})", "round({})", "round({}, 1)"]
CONVERSIONS = ["bool({})", "int({})", "float({})", "complex({})", "operator.index({})"]
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                       HealthCheck.data_too_large])
_NS = {"np": np, "operator": operator}


def _element(dt):
    kind = np.dtype(dt).kind
    if kind == "b":
        return st.sampled_from(["True", "False"])
    if kind == "f":
        return st.sampled_from(["0.0", "-0.0", "0.5", "-1.5", "2.0", "3.25", "-7.0", "np.nan",
                                "np.inf", "-np.inf", "100.0"])
    if kind == "c":
        return st.sampled_from(["1j", "(1-2j)", "(0.5+0j)", "0j", "(-3+0.5j)",
                                "complex(np.nan, 1)"])
    info = np.iinfo(dt)
    return st.sampled_from([str(v) for v in (0, 1, 2, 3, 5, 7, -1, -2, -5, 100, info.min,
                                             info.max) if info.min <= v <= info.max])


@st.composite
def operands(draw, array_only=False):
    """The source text of an operand: evaluating it makes the operand."""
    kind = draw(st.sampled_from(["array", "array0", "scalar"] if array_only else
                                ["array", "array", "array0", "scalar", "scalar", "python",
                                 "python", "sequence"]))
    if kind == "python":
        return draw(st.sampled_from(PY_NUMBERS))
    if kind == "sequence":
        return draw(st.sampled_from(SEQUENCES))
    dt = draw(st.sampled_from(DTYPES))
    if kind == "scalar":
        return f"np.{dt}({draw(_element(dt))})"
    shape = () if kind == "array0" else draw(st.sampled_from(SHAPES))
    n = int(np.prod(shape))
    flat = [draw(_element(dt)) for _ in range(n)]
    if not shape:
        return f"np.array({flat[0]}, dtype=np.{dt})"
    rows = [flat[i:i + shape[-1]] for i in range(0, n, shape[-1])]
    text = ", ".join("[" + ", ".join(r) + "]" for r in rows)
    return f"np.array([{text}], dtype=np.{dt})" if len(shape) == 2 else \
        f"np.array({'[' + text[1:-1] + ']'}, dtype=np.{dt})"


@st.composite
def expressions(draw):
    """(template, operand sources): the template's {} are the operands,
    its statements end with the value `return`ed."""
    form = draw(st.sampled_from(["binary"] * 6 + ["divmod", "unary", "inplace", "convert"]))
    if form == "binary":
        return "return {} " + draw(st.sampled_from(BINARY)) + " {}", \
            [draw(operands()), draw(operands())]
    if form == "divmod":
        return "return divmod({}, {})", [draw(operands()), draw(operands())]
    if form == "unary":
        return "return " + draw(st.sampled_from(UNARY)), [draw(operands())]
    if form == "inplace":
        op = draw(st.sampled_from(BINARY[:13]))
        return "{} " + op + "= {}\n    return a0", [draw(operands(array_only=True)),
                                                   draw(operands())]
    dt = draw(st.sampled_from(DTYPES))
    shape = draw(st.sampled_from([(), (1,), (1, 1), (2,)]))
    src = f"np.array({draw(_element(dt))}, dtype=np.{dt})"
    if shape:  # one element or two, which no conversion takes
        src = f"np.full({shape}, {src})" if shape != (2,) else f"np.stack([{src}, {src}])"
    return "return " + draw(st.sampled_from(CONVERSIONS)), [src]


def _function(template, names):
    """A function of the arguments a0, a1 among names whose body is template
    over names (argument names or the constants' source)."""
    args = ", ".join(n for n in names if n in ("a0", "a1"))
    ns = dict(_NS)
    exec(f"def f({args}):\n    {template.format(*names)}\n", ns)  # noqa: S102 (the lists above)
    return ns["f"]


def _outcome(call):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return call(), None
        except Exception as e:  # noqa: BLE001 (compared by the caller)
            return None, e


def _as_numpy(x):
    """x with hop.numpy's arrays and scalars as NumPy's (their class: an
    hnp.ndarray flagged as a scalar is that dtype's NumPy scalar)."""
    if isinstance(x, tuple):
        return tuple(_as_numpy(v) for v in x)
    if isinstance(x, hnp.ndarray):
        v = np.asarray(x)
        return v[()] if x._scalar else v
    return x


def _same_bits(g, w, ulps=0):
    """Arrays of one dtype hold the same values: integers bit for bit,
    floats too (each part of a complex) with any NaN equal to any NaN, or
    within ulps units in the last place."""
    g, w = np.asarray(g), np.asarray(w)
    if w.dtype.kind == "c":
        return _same_bits(g.real, w.real, ulps) and _same_bits(g.imag, w.imag, ulps)
    if w.dtype.kind == "O":  # Python numbers (compiled: NumPy's own answer)
        return all(x == y and type(x) is type(y) or x != x and y != y
                   for x, y in zip(g.flat, w.flat))
    if w.dtype.kind != "f":
        return np.array_equal(g, w)
    nan = np.isnan(w)
    if not np.array_equal(np.isnan(g), nan):
        return False
    u = f"i{w.dtype.itemsize}"
    gb, wb = np.where(nan, 0, g.view(u)).astype(np.int64), np.where(nan, 0, w.view(u))
    return bool(np.all(np.abs(gb - wb.astype(np.int64)) <= ulps))


def differ(got, want, ulps=0):
    """What differs between hop's result and NumPy's, or None."""
    if type(got) is not type(want):
        return f"type {type(got).__name__} vs {type(want).__name__}"
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            d = differ(g, w, ulps)
            if d:
                return d
        return None if len(got) == len(want) else "tuple length"
    if isinstance(want, (np.ndarray, np.generic)):
        if got.dtype != want.dtype:
            return f"dtype {got.dtype} vs {want.dtype}"
        if np.shape(got) != np.shape(want):
            return f"shape {np.shape(got)} vs {np.shape(want)}"
        same = _same_bits(got, want, ulps)
        return None if same else f"values {got!r} vs {want!r}"
    if want == got or (want != want and got != got):
        if isinstance(want, float) and np.signbit(want) != np.signbit(got):
            return f"sign {got!r} vs {want!r}"
        return None
    return f"values {got!r} vs {want!r}"


def _object_refused(err, huge):
    """hop's clear refusal of an expression NumPy computes with a Python
    int beyond int64 and uint64 (huge), in an object array: hop has no
    object dtype (hop.compile runs such a call by NumPy)."""
    return huge and isinstance(err, hop.DTypeError) and "dtype object is not supported" in str(err)


def _compare(how, got, want, huge, ulps):
    (g, gerr), (w, werr) = got, want
    if werr is not None:
        if gerr is None:
            return f"{how}: NumPy raised {type(werr).__name__} ({werr}); hop returned {g!r}"
        if type(gerr) is not type(werr) and not _object_refused(gerr, huge):
            return (f"{how}: NumPy raised {type(werr).__name__} ({werr}), "
                    f"hop {type(gerr).__name__} ({gerr})")
        return None
    if gerr is not None:
        if _object_refused(gerr, huge):
            return None
        return f"{how}: NumPy returned {w!r}; hop raised {type(gerr).__name__} ({gerr})"
    d = differ(g, w, ulps)
    return f"{how}: {d}" if d else None


def run(template, sources, ways=("eager", "args", "const")):
    """Runs one expression every way; returns the list of disagreements."""
    names = [f"a{i}" for i in range(len(sources))]
    make = lambda: [eval(s, _NS) for s in sources]  # noqa: E731,S307 (the lists above)
    f = _function(template, names)
    huge = any("2**64" in s or "2**63-1" in s for s in sources)
    # a float power may differ from NumPy's in the last bit (its SIMD loop's
    # bits are neither glibc's nor correctly rounded: docs/ARCHITECTURE.md)
    ulps = 1 if "**" in template else 0
    want = _outcome(lambda: f(*make()))
    want_args = make()
    _outcome(lambda: f(*want_args))
    bad = []
    if "eager" in ways and any(isinstance(v, np.ndarray) for v in make()):
        args = [hnp.asarray(v.copy()) if isinstance(v, np.ndarray) else v for v in make()]
        got = _outcome(lambda: _as_numpy(f(*args)))
        bad.append(_compare("eager", got, want, huge, ulps))
    if "args" in ways:
        args = make()
        got = _outcome(lambda: hop.compile(f)(*args))
        bad.append(_compare("compiled", got, want, huge, ulps))
        if got[1] is None and want[1] is None:
            for g, w in zip(args, want_args):
                d = differ(g, w, ulps) if isinstance(w, np.ndarray) else None
                bad.append(f"compiled: argument after the call: {d}" if d else None)
    if "const" in ways and len(sources) == 2:
        for k in range(2):  # the other side a constant of the code
            names = [f"({sources[i]})" if i == k else f"a{i}" for i in range(2)]
            if k == 0 and template.startswith("{} "):
                continue
            fc = _function(template, names)
            args = [v for i, v in enumerate(make()) if i != k]
            got = _outcome(lambda: hop.compile(fc)(*args))
            bad.append(_compare(f"compiled, operand {k} constant", got, want, huge, ulps))
    return [b for b in bad if b]


# pinned (budget.pinned): stress runs of 2026-11-30 (this file alone,
# --hypothesis-seed=1..20) met three differences; two are fixed (the
# regressions below: a NumPy array ** a 0-d hop.numpy array, an in-place
# operator with a Python int beyond int64), one is not: a 0-d bool or
# unsigned operand with 2**63 (`np.array(True) + 2**63`) is NumPy's
# np.ulonglong scalar (dtype char 'Q', from the Python int), hop's np.uint64
# ('L'; equal dtypes, other scalar types): hop.numpy has one uint64
@settings(max_examples=examples(30), derandomize=pinned(), **_SETTINGS)
@given(expressions())
def test_operators_with_mixed_operands_agree_with_numpy(case):
    template, sources = case
    bad = run(template, sources)
    assert not bad, f"{template.format(*sources)}:\n" + "\n".join(bad)


# Regressions: each failed before its fix.

def _eager(src):
    """src evaluated with hop.numpy arrays where it says A(...)."""
    return eval(src, {"np": np, "operator": operator,  # noqa: S307 (the tests' own text)
                      "A": lambda *a, **k: hnp.asarray(np.array(*a, **k))})


@pytest.mark.parametrize("src", [
    "int(A([1 - 2j]))", "float(A([[1 - 2j]], dtype=np.complex64))", "int(A(2j))",
    "operator.index(A([7], dtype=np.uint32))", "operator.index(A([[127]], dtype=np.int8))",
    "operator.index(A(True))"])
def test_conversions_numpy_refuses_raise_its_type_error(src):
    # were 1, 1.0, 0, 7, 127 and 1: a one-element complex array has no
    # int()/float() (its item is a Python complex), and operator.index takes
    # 0-d integer arrays only (np.True_ too, not a bool array)
    with pytest.raises(TypeError):
        eval(src.replace("A(", "np.array("), {"np": np, "operator": operator})  # noqa: S307
    with pytest.raises(TypeError):
        _eager(src)


def test_conversions_of_numpy_scalars_and_0d_arrays_still_answer():
    s = hnp.asarray(np.array([1 - 2j])).sum()  # a complex128 NumPy scalar: drops the imaginary
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert int(s) == 1 and float(s) == 1.0 and complex(s) == 1 - 2j
    assert operator.index(_eager("A(5, dtype=np.uint8)")) == 5
    assert operator.index(_eager("A([True])").sum() > 0) == 1  # a np.bool_ scalar
    assert int(_eager("A([[2.5]])")) == 2 and complex(_eager("A([3])")) == 3 + 0j


@pytest.mark.parametrize("src", [
    "A([5, 0, 1], dtype=np.uint64) ^ 2**63", "2**63 - A([0, 1, 2], dtype=np.uint64)",
    "2**63 % A([2**64 - 1, 7], dtype=np.uint64)", "A([2**64 - 1], dtype=np.uint64) + 2**63",
    "A([127], dtype=np.int8) - 2**63", "A([3.5], dtype=np.float32) * (2**64 - 1)",
    "divmod(A(100, dtype=np.int32), 2**63)", "A([1, 2], dtype=np.uint64) < 2**63 + 1"])
def test_python_ints_beyond_int64_that_fit_uint64(src):
    # was OverflowError ("does not fit in int64"): NumPy casts such an int
    # by value to uint64 (with a signed array: float64)
    want = eval(src.replace("A(", "np.array("), {"np": np})  # noqa: S307
    got = _as_numpy(_eager(src))
    assert differ(got, want) is None, (got, want)


def test_python_ints_beyond_uint64_are_a_clear_error_eagerly_and_numpys_answer_compiled():
    # was OverflowError from the op (and `2**64 % a` of a 0-d float array the
    # same): NumPy computes in an object array, which hop has not
    with pytest.raises(hop.DTypeError, match="the Python int 18446744073709551616 .*object"):
        _eager("2**64 % A(3.0)")
    with pytest.raises(hop.DTypeError, match="dtype object is not supported"):
        _eager("2**64 % A([3.0])")
    # (divmod is NumPy's ufunc np.divmod, which has no object loop: NumPy's
    # own TypeError, exactly)
    with pytest.raises(TypeError, match="ufunc 'divmod' not supported for the input types"):
        divmod(np.array(100, dtype=np.int32), -2**63-1)
    with pytest.raises(TypeError, match="ufunc 'divmod' not supported for the input types"):
        _eager("divmod(A(100, dtype=np.int32), -2**63-1)")
    f = hop.compile(lambda a: a + 2**64)
    got = f(np.array(-0.0, np.float32))
    assert type(got) is float and got == 2.0**64


def test_bool_array_positive_is_a_copy():
    # was UFuncTypeError (np.positive has no bool loop; NumPy 1.24's +a copies)
    a = _eager("A([True, False])")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = +a
        want = +np.array([True, False])
        r0 = +_eager("A(True)")
    assert differ(_as_numpy(r), want) is None and r is not a
    assert type(_as_numpy(r0)) is np.bool_ and bool(r0) is True


def test_matmul_core_size_mismatch_is_numpys_value_error():
    # was hop.ShapeError (a ValueError, but not NumPy's type)
    with pytest.raises(ValueError) as e:
        _eager("A([1, 2], dtype=np.int32) @ [0.5]")
    assert type(e.value) is ValueError
    assert str(e.value) == ("matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                            "gufunc signature (n?,k),(k,m?)->(n?,m?) (size 1 is different from 2)")


def test_constant_0d_array_with_a_list_after_another_compile():
    # was TraceError ("branched on data ... not there when run eagerly"):
    # the trace asked the constant's value class twice (the result dtype,
    # then NumPy's loop for a 2-d result), the eager run that records the
    # path once
    hop.compile(lambda x: x + 1)(np.ones(2))  # any earlier compile

    def f(a):
        return np.array(3, dtype=np.uint64) % a
    assert differ(hop.compile(f)([[2]]), f([[2]])) is None


@pytest.mark.parametrize("src,arg", [
    ("np.array(3, dtype=np.uint64) % a", "[[2]]"), ("a < np.array(3, dtype=np.uint64)", "[[2]]"),
    ("np.array(200, np.uint8) + a", "np.array([[1]], np.int8)"),
    ("np.array(3, dtype=np.uint64) % a", "np.array([[2], [5]])"),
    ("a.sum() % np.array([[7, 9]])", "np.array([3], np.uint64)")])
def test_0d_operand_with_a_2d_array_compiles_without_falling_back(src, arg):
    # was a TraceError with a list, and with an array a graph break (every
    # call eager, warned): a 0-d operand's value class was a second branch
    # point inside the first's side
    ns = {"np": np}
    exec(f"def f(a):\n    return {src}\n", ns)  # noqa: S102
    f, x = ns["f"], eval(arg, ns)  # noqa: S307
    c = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback warning
        got = c(x)
    assert differ(got, f(x)) is None
    assert "runs eagerly" not in c.explain() and "fallback" not in c.explain()


@pytest.mark.parametrize("src", [
    "A(True) ** A(2.0, dtype=np.float16)", "A([True]) ** A(2.0)",
    "A([3], dtype=np.int8) ** A(2.0, dtype=np.float16)"])
def test_power_of_a_0d_array_exponent_takes_numpys_fast_path(src):
    # was float16, float64 and float16: NumPy's fast_scalar_power reads a
    # 0-d integer or float exponent's value as a scalar's (** 2 is square)
    want = eval(src.replace("A(", "np.array("), {"np": np})  # noqa: S307
    assert differ(_as_numpy(_eager(src)), want) is None
    a, b = [eval(s.strip().replace("A(", "np.array("), {"np": np})  # noqa: S307
            for s in src.split("**")]
    assert differ(hop.compile(lambda x, y: x ** y)(a, b), want) is None


@pytest.mark.parametrize("left,right", [
    ("np.array(True, dtype=np.bool_)", "np.array(2.0, dtype=np.float16)"),
    ("np.array([1.0, -0.0])", "np.array(0.5)"), ("np.array([4.0, 0.0])", "np.array(-1)"),
    ("np.array([2, 3], dtype=np.int8)", "np.array(2.0)")])
def test_numpy_array_to_the_power_of_a_hop_0d_array_takes_numpys_fast_path(left, right):
    # (stress campaign: `np.array(True) ** a1` compiled, a1 a 0-d float16
    # argument, was float16 1.0 for NumPy's int8 1, and eagerly `x **
    # hnp.asarray(a1)` too; `[1, -0.] ** 0.5` was 0.0 for sqrt's -0.0):
    # NumPy's ndarray.__pow__ reads a 0-d exponent's value (x ** 2 is
    # square), and called np.power only because the exponent was hop's
    x, y = eval(left, _NS), eval(right, _NS)  # noqa: S307 (the lists above)
    want = x ** y
    got = _as_numpy(x ** hnp.asarray(y))
    assert differ(got, want) is None and np.array_equal(np.signbit(got), np.signbit(want))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (NumPy reads the value: the call runs eagerly)
        got = hop.compile(lambda b: x ** b)(y)
    assert differ(got, want) is None and np.array_equal(np.signbit(got), np.signbit(want))
    assert differ(_as_numpy(np.power(x, hnp.asarray(y))), np.power(x, y)) is None


@pytest.mark.parametrize("target,rest", [("A(False)", "**= -2**63-1"),
                                         ("A(0.0, dtype=np.float16)", "&= -2**63-1"),
                                         ("A([1, 2], dtype=np.int8)", "|= -2**63-1")])
def test_in_place_operator_with_a_python_int_beyond_int64_is_numpys_cast_error(target, rest):
    # (stress campaign: ZeroDivisionError and TypeError, Python's, of the
    # object-dtype stand-ins hop computed the result dtype on; NumPy checks
    # that object cannot be cast to the array's dtype before it computes)
    ns = {"np": np, "A": lambda *a, **k: np.array(*a, **k)}
    exec(f"x = {target}", ns)  # noqa: S102 (the test's own text)
    with pytest.raises(np.core._exceptions._UFuncOutputCastingError) as want:
        exec(f"x {rest}", ns)  # noqa: S102
    ns["A"] = lambda *a, **k: hnp.asarray(np.array(*a, **k))
    exec(f"x = {target}", ns)  # noqa: S102
    with pytest.raises(np.core._exceptions._UFuncOutputCastingError) as got:
        exec(f"x {rest}", ns)  # noqa: S102
    assert str(got.value) == str(want.value)
