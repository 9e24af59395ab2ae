"""`if float(t) > tol:` in a function hop.compile translates: the comparison
of a traced one-element tensor's float with a number is decided by the
`if` as a cond (no graph break), with eager's answers on both sides; every
other use of such a float still ends the compiled part at float(), as
before.  And a float a resume takes as an input (a SymFloat) is never
handed to NumPy, which would keep it as an object (np.array([s]) an object
array)."""

import io
import math
import contextlib

import numpy as np
import pytest

import hop


def _breaks(cf):
    return [line for line in cf.explain().splitlines() if "graph break at" in line]


def _merged(cf):
    return [line for line in cf.explain().splitlines()
            if "data-dependent branch at" in line and "one cond" in line]


def _same(a, b):
    if isinstance(a, hop.Tensor):
        assert isinstance(b, hop.Tensor) and a.dtype == b.dtype
        assert np.array_equal(np.asarray(a.tolist()), np.asarray(b.tolist()), equal_nan=True)
    elif isinstance(a, tuple):
        assert type(b) is tuple and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert type(a) is type(b) and (a == b or a != a and b != b), (a, b)


def _clip(x):
    g = x * 2.0
    if float(g.sum()) > 1.5:
        g = g * 0.5
    return g + 1.0


def _reflected(x):
    if 0.25 < float(x.amax()):
        return x - 1.0
    return x + 1.0


def _int_const(x):
    s = x.sum()
    r = x * 3.0
    if float(s) >= 2:
        r = r - 2.0
    return r


def _not_equal(x):
    if float(x.sum()) != 0.5:
        y = x + 1.0
    else:
        y = x - 1.0
    return y


def _both(x):
    a = x * 1.0
    if float(x.sum()) > 0.0 and float(x.amax()) < 2.0:
        a = a + 10.0
    return a


def _negated(x):
    out = x + 0.0
    if not float(x.mean()) <= 0.1:
        out = out * 4.0
    return out


def _in_loop(x):
    y = x + 0.0
    for _ in range(3):
        if float(y.sum()) > 1.0:
            y = y * 0.5
    return y


def _tolerance(x, tol=0.5):
    y = x * 1.0
    if float(y.sum()) < tol:  # (a local: its value is the comparison's operand)
        y = y - 1.0
    return y


def _bool_const(x):
    y = x * 1.0
    if float((x > 0).all()) == True:  # noqa: E712 (the bool operand itself)
        y = y + 1.0
    return y


def _closure(tol):
    def f(x):
        y = x * 1.0
        if float(y.sum()) > tol:
            y = y + 2.0
        return y
    return f


def _rebound():
    tol = 100.0

    def f(x):
        nonlocal tol
        tol = 0.5  # (the translator's value of the cell, not the cell's yet)
        y = x * 1.0
        if float(y.sum()) > tol:
            y = y + 2.0
        return y
    return f


_closure_half, _rebound_half = _closure(0.5), _rebound()
MERGED = [_clip, _tolerance, _closure_half, _rebound_half, _reflected, _int_const, _not_equal, _both, _negated, _in_loop, _bool_const]
INPUTS = [[0.5, 0.25], [1.0, 2.0], [-1.0, 0.25], [0.0, 0.0], [0.25, 0.25],
          [float("nan"), 1.0], [float("inf"), 1.0], [-0.0, 0.0]]


@pytest.mark.parametrize("fn", MERGED, ids=lambda f: f.__qualname__)
def test_an_if_on_a_float_of_a_traced_value_is_one_cond_with_eagers_answers(fn):
    cf = hop.compile(fn)
    for v in INPUTS:
        x = hop.tensor(v)
        _same(cf(x), fn(x))
    assert _breaks(cf) == []
    assert _merged(cf), cf.explain()
    assert cf.recompiles == 0 and cf.eager_calls == 0


@pytest.mark.parametrize("dtype,values,const", [
    ("int64", [2 ** 53 + 1], 2.0 ** 53),      # the int rounds to 2**53, as float() rounds it
    ("int64", [-(2 ** 53) - 1], -(2.0 ** 53)),
    ("int32", [7], 6.5),
    ("float16", [1.1], 1.099609375),          # float16's 1.1, exactly
    ("float64", [0.1 + 0.2], 0.3),
    ("bool", [True], 0.5),
])
def test_the_float_compared_is_pythons_float_of_the_item(dtype, values, const):
    def f(x):
        y = x.to(hop.float64) * 1.0
        if float(x) > const:
            y = y + 1.0
        return y
    cf = hop.compile(f)
    x = hop.tensor(values, dtype=getattr(hop, dtype))
    _same(cf(x), f(x))
    assert _breaks(cf) == [] and cf.eager_calls == 0


def test_a_one_by_one_tensor_converts_and_two_elements_raise_eagers_error():
    def f(x):
        if float(x) > 0.5:
            return x * 2.0
        return x
    cf = hop.compile(f)
    x = hop.tensor([[0.75]])
    _same(cf(x), f(x))
    with pytest.raises(hop.ShapeError) as eager:
        f(hop.tensor([0.5, 1.0]))
    with pytest.raises(hop.ShapeError) as compiled:
        cf(hop.tensor([0.5, 1.0]))
    assert str(compiled.value) == str(eager.value)


def _big_int(x):
    y = x * 1.0
    if float(x.sum()) > 2 ** 60:  # (not a float64 exactly: Python compares it exactly)
        y = y + 1.0
    return y


def _tensor_operand(x):
    y = x * 1.0
    if float(x.sum()) > x.amax():
        y = y + 1.0
    return y


def _kept(x):
    s = float(x.sum())  # (a local the code could hand anywhere)
    if s > 0.5:
        return x * s
    return x


def _value(x):
    return float(x.sum()) > 0.5, x + 1.0


def _printed(x):
    if float(x.sum()) > 0.5:
        print("big")
    return x * 2.0


def _tensor_local(x):
    y = x * 1.0
    tol = x.sum() * 0.5  # (a traced value, not a number)
    if float(y.sum()) > tol:
        y = y + 1.0
    return y


@pytest.mark.parametrize("fn", [_big_int, _tensor_operand, _tensor_local, _kept, _value,
                                _printed],
                         ids=lambda f: f.__name__)
def test_other_uses_of_the_float_still_break_with_eagers_answers(fn):
    cf = hop.compile(fn)
    for v in ([0.75, 0.5], [0.25, 0.0], [-3.0, 1.0]):
        x = hop.tensor(v)
        outs = []
        for g in (fn, cf):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                outs.append((g(x), buf.getvalue()))
        _same(outs[1][0], outs[0][0])
        assert outs[1][1] == outs[0][1]
    assert _breaks(cf), cf.explain()
    assert cf.eager_calls == 0


def _loop_break(x):
    y = x * 2
    for _ in range(10):
        y = y + 1
        if float(y.sum()) > 40.0:
            break
    return y * 3


def _early_return(x):
    y = x + 1
    for i in range(5):
        if float(y.sum()) > 10:
            return y * i  # (the loop's index at the turn it returns)
        y = y * 2
    return y


def _alias_kept(x):
    a = x * 2
    b = a
    for _ in range(3):
        if float(a.sum()) > 1e9:
            break
    return a, b, a is b


@pytest.mark.parametrize("fn", [_loop_break, _early_return, _alias_kept],
                         ids=lambda f: f.__name__)
def test_a_loop_with_an_if_on_a_float_is_one_plan_with_eagers_answers(fn):
    """Each side of such an `if` in a `for` loop over a range runs on to the
    return (the rest of the loop in each cond body, the range iterator put
    back between the sides), so a loop that breaks on a float is one plan."""
    cf = hop.compile(fn)
    for v in ([0.5, 0.25], [3.0, 4.0], [-10.0, -20.0], [1.0, 1.5], [0.0, 2.0],
              [float("nan"), 0.0]):
        x = hop.tensor(v)
        _same(cf(x), fn(x))
    assert _breaks(cf) == [] and len(cf.graphs) == 1
    assert cf.recompiles == 0 and cf.eager_calls == 0


def test_a_named_range_iterator_keeps_eagers_place():
    cf = hop.compile(_named_iterator)
    for v in ([0.5, 0.25], [3.0, 4.0], [-10.0, -20.0]):
        x = hop.tensor(v)
        _same(cf(x), _named_iterator(x))
    assert "graph break at" in cf.explain() or cf.eager_calls > 0


def test_a_loop_over_a_list_stays_a_break():
    """A list's iterator cannot be put back once it ran out (its reduce
    forgets the list), so such a loop still runs in Python."""
    def f(x):
        y = x * 2
        for k in [1.0, 2.0, 3.0]:
            y = y + k
            if float(y.sum()) > 10.0:
                break
        return y * 3
    cf = hop.compile(f)
    for v in ([0.5, 0.25], [3.0, 4.0], [-10.0, -20.0]):
        x = hop.tensor(v)
        _same(cf(x), f(x))
    assert _breaks(cf) and cf.eager_calls == 0


def _named_iterator(x):
    y = x * 2
    it = iter(range(5))  # (named: read after the loop, its place must be eager's)
    for _ in it:
        y = y + 1
        if float(y.sum()) > 10.0:
            break
    return y, list(it)


def _numbers(x):
    y = x * 1.0
    n = 0
    for i in range(3):
        if float(y.sum()) > i:
            n = n + 1  # (the sides return different Python ints: no cond returns both)
        y = y - 1.0
    return y, n


def _continues(x):
    y = x * 1.0
    for i in range(8):
        if float(y.sum()) > i:
            y = y + 1.0
            continue  # (a jump out of the `if`: each side runs on to the return)
        y = y - 0.5
    return y


@pytest.mark.parametrize("fn,why", [
    (_numbers, "Python values a cond cannot return as one"),
    (_continues, "more than 64 sides"),  # (2**8 bodies: both sides go on with the loop)
], ids=["numbers", "continues"])
def test_a_loop_whose_sides_cannot_be_one_cond_stays_a_break(fn, why):
    cf = hop.compile(fn)
    for v in ([0.5, 0.25], [30.0, 4.0], [-10.0, -20.0], [2.0, 1.0]):
        x = hop.tensor(v)
        _same(cf(x), fn(x))
    assert any(why in line for line in _breaks(cf)), cf.explain()
    assert cf.eager_calls == 0


def test_fullgraph_still_raises_at_such_an_if():
    def f(x):
        if float(x.sum()) > 0.5:
            return x * 2.0
        return x
    with pytest.raises(hop.TraceError, match="cannot convert a traced value to a Python float"):
        hop.compile(f, fullgraph=True)(hop.tensor([1.0]))


@pytest.mark.parametrize("make", [
    lambda s: np.array([s]),
    lambda s: np.float64(s) + np.zeros(2),
    lambda s: np.full(2, s),
    lambda s: [math.fsum([s, 1.0])],
], ids=["array", "float64", "full", "fsum"])
def test_a_resumes_float_input_is_never_handed_to_library_code(make):
    def f(x):
        s = float(x.sum())
        return make(s), x * 2
    cf = hop.compile(f)
    for v in ([0.75, 0.5], [0.25, 0.5], [1.0, 2.0], [-4.0, 0.5]):
        x = hop.tensor(v)
        got, want = cf(x), f(x)
        assert np.asarray(got[0]).dtype == np.asarray(want[0]).dtype
        assert np.array_equal(np.asarray(got[0]), np.asarray(want[0]))
        _same(got[1], want[1])
