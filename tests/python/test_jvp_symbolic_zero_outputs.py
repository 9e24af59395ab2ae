"""Forward mode keeps a symbolic zero tangent for an output of a HOP that no
tangent reaches, in every HOP (docs/AUTODIFF.md, "Symbolic zeros").

One pass answers which outputs a tangent reaches: hop_ad_reach
(include/hop/autodiff.h), used by the rules of the wrap-like HOPs (cond,
switch, wrap, invoke_subgraph), map's jvp, and the loop kit (the peeled
phases of scan, fori_loop and while_loop, and scan's ys).  An output it does
not reach gets no tangent output from the transformed body, so a later rule
never multiplies an instantiated zero by an infinite partial (0 * inf = nan
where PyTorch's Python loop and JAX give the derivative of a constant).  A
call whose outputs a tangent all reach keeps the graph it had.

The reference is PyTorch's functorch (torch 1.13) over the same program with
Python loops; exact values (they are sums of a few exact products).
"""

import warnings

import numpy as np
import pytest

import hop
from transform_values import lazy_import

torch = lazy_import("torch")
functorch = lazy_import("functorch")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

F64 = hop.float64


def t(a):
    return hop.tensor(np.asarray(a, dtype=np.float64), dtype=F64)


def T(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


X = [[200.0, 3.0], [1.0, 2.0]]
Y = [0.5, -0.5]
ONES = [1.0, 1.0]


def hop_jvp(hf, x, y, dy):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hop.jvp(lambda b: hf(t(x), b), (t(y),), (t(dy),))


def torch_jvp(tf, x, y, dy):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return functorch.jvp(lambda b: tf(T(x), b), (T(y),), (T(dy),))


def jvp_code(hf, x, y):
    return hop.trace(lambda b, x: hop.jvp(lambda v: hf(x, v), (b,), (b,))[1], t(y), t(x)).code


# ------------------------------------------------------------------- map

def _h_map_int_output(x, y):
    a, k, b = hop.map(lambda r: ((r * 2.0).exp(), (r > 1.5).to(hop.int64), r / y), x)
    return ((a * 2.0).exp() + b).sum(), k


def _t_map_int_output(x, y):
    rows = [((r * 2.0).exp(), (r > 1.5).to(torch.int64), r / y) for r in x]
    a, k, b = (torch.stack(c) for c in zip(*rows))
    return ((a * 2.0).exp() + b).sum(), k


def test_map_output_no_tangent_reaches_beside_an_int_output_keeps_a_symbolic_zero():
    (v, k), (dv, dk) = hop_jvp(_h_map_int_output, X, Y, Y)
    (tv, tk), (tdv, _) = torch_jvp(_t_map_int_output, X, Y, Y)
    assert np.isinf(float(v)) and float(v) == float(tv)
    assert float(dv) == float(tdv) == -392.0
    assert k.dtype == hop.int64 and k.numpy().tolist() == tk.tolist() == [[1, 1], [0, 1]]
    assert dk.dtype == hop.int64 and dk.numpy().tolist() == [[0, 0], [0, 0]]


def test_the_tangent_map_outputs_only_the_tangents_a_tangent_reaches():
    code = jvp_code(lambda x, y: _h_map_int_output(x, y)[0], X, Y)
    # the body's tangent twin: exp and the int output have none, div's is neg
    assert "            return (exp, to, div, neg)\n" in code
    assert ('map_1: "(f64[2, 2], i64[2, 2], f64[2, 2], f64[2, 2])" = '
            "map(map_body_0_jvp, (x,), (b, b_dot))") in code


def _h_map_compared(x, y):
    return hop.map(lambda r: hop.where(r > y, (r * 2.0).exp(), r), x)


def test_a_map_whose_outputs_no_tangent_reaches_emits_no_tangent_map():
    # y is read by a comparison only: no output has a tangent, so the rule
    # emits no second map, and the tangent is zeros
    out, tan = hop_jvp(_h_map_compared, X, Y, ONES)
    assert tan.dtype == F64 and tan.numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert out.numpy()[0, 0] == np.exp(400.0)
    code = jvp_code(_h_map_compared, X, Y)
    assert code.count("map(") == 1 and "map_body_0_jvp" not in code


def _h_map_all_reached(x, y):
    a, b = hop.map(lambda r: ((r * y).sin(), r / y), x)
    return (a + b).sum()


def test_a_map_whose_outputs_a_tangent_all_reach_keeps_its_graph():
    assert jvp_code(_h_map_all_reached, X, Y) == (
        'def forward(b: "f64[2]", x: "f64[2, 2]"):\n'
        '    def jvp_body_0_jvp(b: "f64[2]", b_dot: "f64[2]", x: "f64[2, 2]"):\n'
        '        def map_body_0(x: "f64[2]", b: "f64[2]"):\n'
        '            mul: "f64[2]" = mul(x, b)\n'
        '            sin: "f64[2]" = sin(mul)\n'
        '            div: "f64[2]" = div(x, b)\n'
        '            return (sin, div)\n'
        '\n'
        '        def map_body_0_jvp(x: "f64[2]", b: "f64[2]", b_dot: "f64[2]"):\n'
        '            mul: "f64[2]" = mul(x, b)\n'
        '            mul_1: "f64[2]" = mul(b_dot, x)\n'
        '            sin: "f64[2]" = sin(mul)\n'
        '            cos: "f64[2]" = cos(mul)\n'
        '            mul_2: "f64[2]" = mul(mul_1, cos)\n'
        '            div: "f64[2]" = div(x, b)\n'
        '            mul_3: "f64[2]" = mul(b_dot, div)\n'
        '            div_1: "f64[2]" = div(mul_3, b)\n'
        '            neg: "f64[2]" = neg(div_1)\n'
        '            return (sin, div, mul_2, neg)\n'
        '\n'
        '        map: "(f64[2, 2], f64[2, 2])" = map(map_body_0, (x,), (b,))\n'
        '        map_1: "(f64[2, 2], f64[2, 2], f64[2, 2], f64[2, 2])" = '
        'map(map_body_0_jvp, (x,), (b, b_dot))\n'
        '        getitem: "f64[2, 2]" = map_1[2]\n'
        '        getitem_1: "f64[2, 2]" = map_1[3]\n'
        '        getitem_2: "f64[2, 2]" = map[0]\n'
        '        getitem_1_1: "f64[2, 2]" = map[1]\n'
        '        add: "f64[2, 2]" = add(getitem_2, getitem_1_1)\n'
        '        add_1: "f64[2, 2]" = add(getitem, getitem_1)\n'
        '        sum: "f64[]" = sum(add, None, False)\n'
        '        sum_1: "f64[]" = sum(add_1, None, False)\n'
        '        return (sum, sum_1)\n'
        '\n'
        '    jvp: "(f64[], f64[])" = jvp(jvp_body_0_jvp, (b,), (b,), (x,))\n'
        '    getitem: "f64[]" = jvp[0]\n'
        '    getitem_1: "f64[]" = jvp[1]\n'
        '    return (getitem_1,)\n')


# ------------------------------------------------------------------ scan

def _h_scan_late_ys(x, y):
    # the carry starts without a tangent and takes one at the first step, so
    # the ys (the carry before each step) are reached from the second step on
    c, ys = hop.scan(lambda c, r: (c + r / y, c * 2.0), x[0] * 0.0, x)
    return ys.sum() + c.sum()


def _t_scan_late_ys(x, y):
    c, ys = x[0] * 0.0, []
    for r in x:
        ys.append(c * 2.0)
        c = c + r / y
    return torch.stack(ys).sum() + c.sum()


def test_scan_ys_a_later_phase_reaches_keep_their_tangent():
    got = hop_jvp(_h_scan_late_ys, X, Y, ONES)[1]
    assert float(got) == float(torch_jvp(_t_scan_late_ys, X, Y, ONES)[1]) == -2448.0


def _h_scan_two_ys(x, y):
    c, (a, b) = hop.scan(lambda c, r: (c + r / y, ((r * 2.0).exp(), c * y)), x[0] * 0.0, x)
    return ((a * 2.0).exp() + b).sum() + c.sum()


def _t_scan_two_ys(x, y):
    c, a, b = x[0] * 0.0, [], []
    for r in x:
        a.append((r * 2.0).exp())
        b.append(c * y)
        c = c + r / y
    return ((torch.stack(a) * 2.0).exp() + torch.stack(b)).sum() + c.sum()


def test_scan_y_no_phase_reaches_keeps_a_symbolic_zero_beside_one_reached():
    v, dv = hop_jvp(_h_scan_two_ys, X, Y, ONES)
    tv, tdv = torch_jvp(_t_scan_two_ys, X, Y, ONES)
    assert np.isinf(float(v)) and float(v) == float(tv)
    assert float(dv) == float(tdv) == -824.0
    code = jvp_code(_h_scan_two_ys, X, Y)
    # the tangent scan returns the carry, its tangent, the step counter, the
    # two ys and the tangent of the second only
    assert ('"(f64[2], f64[2], i64[], f64[2, 2], f64[2, 2], f64[2, 2])" = scan(' in code)


# ------------------------------------------------- fori_loop, while_loop

def _h_fori_two_carries(x, y):
    a, b = hop.fori_loop(0, 3, lambda i, c: (c[0] * 2.0, c[1] + c[0] / y), (x[0], x[0] * 0.0))
    return ((a * 0.01).exp() + b).sum()


def _t_fori_two_carries(x, y):
    a, b = x[0], x[0] * 0.0
    for _ in range(3):
        a, b = a * 2.0, b + a / y
    return ((a * 0.01).exp() + b).sum()


def _h_while_two_carries(x, y):
    def body(i, a, b):
        return i + 1, a * 2.0, b + a / y

    return _h_after(*hop.while_loop(lambda i, a, b: i < 3, body, (0, x[0], x[0] * 0.0))[1:])


def _h_after(a, b):
    return ((a * 0.01).exp() + b).sum()


@pytest.mark.parametrize("hf", [_h_fori_two_carries, _h_while_two_carries])
def test_a_loop_carry_no_tangent_reaches_keeps_a_symbolic_zero(hf):
    # exp(0.01 a) overflows (a = 1600): the carry a has no tangent along y
    x = [[1.0e5, 3.0], [1.0, 2.0]]
    v, dv = hop_jvp(hf, x, Y, ONES)
    tv, tdv = torch_jvp(_t_fori_two_carries, x, Y, ONES)
    assert np.isinf(float(v)) and float(v) == float(tv)
    assert float(dv) == float(tdv) == -2800084.0


def _h_fori_compared(x, y):
    def body(i, c):
        a, b, e = c
        return a + 1.0, hop.where(a > 0, 1000.0, -1000.0) + x[0] * 0.0, b.exp()

    a, b, e = hop.fori_loop(0, 3, body, (y, x[0], x[0] * 0.0))
    return (a + e).sum()


def _h_while_compared(x, y):
    def body(i, a, b, e):
        return i + 1, a + 1.0, hop.where(a > 0, 1000.0, -1000.0) + x[0] * 0.0, b.exp()

    i, a, b, e = hop.while_loop(lambda i, a, b, e: i < 3, body, (0, y, x[0], x[0] * 0.0))
    return (a + e).sum()


def _t_compared(x, y):
    a, b, e = y, x[0], x[0] * 0.0
    for _ in range(3):
        a, b, e = a + 1.0, torch.where(a > 0, 1000.0, -1000.0) + x[0] * 0.0, b.exp()
    return (a + e).sum()


@pytest.mark.parametrize("hf", [_h_fori_compared, _h_while_compared])
def test_a_carry_reached_only_through_a_comparison_has_no_tangent(hf):
    # b = where(a > 0, 1000, -1000) takes no tangent from a (gt passes none),
    # so the next step's exp(b) (inf) is not multiplied by a zero tangent:
    # the loop's phases read b's tangent only once a tangent reaches it
    # (before, the loop kit's reach pass went through the comparison: nan)
    x = [[1000.0, 3.0], [1.0, 2.0]]
    v, dv = hop_jvp(hf, x, Y, ONES)
    tv, tdv = torch_jvp(_t_compared, x, Y, ONES)
    assert np.isinf(float(v)) and float(v) == float(tv)
    assert float(dv) == float(tdv) == 2.0


# ------------------------------------------------------ associative_scan

def test_associative_scan_has_one_output_a_tangent_reaches_or_none():
    # its one output has a tangent exactly when its one xs has: no gap
    def hf(x, y):
        return hop.associative_scan(lambda a, b: a * b, x[0] * y).sum() + (x[1] * 2.0).exp().sum()

    def tf(x, y):
        return torch.cumprod(x[0] * y, 0).sum() + (x[1] * 2.0).exp().sum()

    x = [[2.0, 3.0], [400.0, 2.0]]
    v, dv = hop_jvp(hf, x, Y, ONES)
    tv, tdv = torch_jvp(tf, x, Y, ONES)
    assert np.isinf(float(v)) and float(v) == float(tv)
    assert float(dv) == float(tdv) == 2.0
