"""Forward mode keeps a symbolic zero tangent for a value of a HOP that no
tangent reaches (docs/AUTODIFF.md, "Symbolic zeros").

One pass answers which outputs a tangent reaches: hop_ad_reach
(include/hop/autodiff.h), used by the rules of the wrap-like HOPs (cond,
switch, wrap, invoke_subgraph) and the loop kit (the peeled phases of scan,
fori_loop and while_loop).  It does not go through a nondiff op (a
comparison): the loop kit's old pass did, so a carry computed from a
comparison was read as reached and its instantiated zero tangent met an
infinite partial (0 * inf = nan where PyTorch's Python loop gives the
derivative of a constant).

The reference is PyTorch's functorch (torch 1.13) over the same program with
Python loops; exact values (they are sums of a few exact products).
"""

import warnings

import numpy as np
import pytest

import hop

torch = pytest.importorskip("torch")
functorch = pytest.importorskip("functorch")

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
