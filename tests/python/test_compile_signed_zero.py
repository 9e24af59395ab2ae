"""A Python float guard tells 0.0 from -0.0 (the first rule): they are
equal, but a plan made for one gives `x / s`, `math.copysign` and the text
of the other wrongly.  Before the fix every case below answered with the
first call's zero (hop._guards.same_value compared with == only)."""

import math

import numpy as np
import pytest

import hop

S = -0.0


def _bits(a):
    return np.asarray(a).tobytes(), np.asarray(a).dtype


def _over_global(x):
    return x / S


def test_a_global_float_zero_of_the_other_sign_recompiles():
    global S
    x = np.array([1.0, -2.0])
    f = hop.compile(_over_global)
    try:
        with np.errstate(divide="ignore"):
            S = -0.0
            assert _bits(f(x)) == _bits(x / -0.0)
            S = 0.0
            assert _bits(f(x)) == _bits(x / 0.0)  # was [-inf, inf]
            S = float("0")  # an equal zero, another object: no recompile
            assert _bits(f(x)) == _bits(x / 0.0)
        assert f.recompiles == 1
    finally:
        S = -0.0


@pytest.mark.parametrize("first, second", [(-0.0, 0.0), (0.0, -0.0)])
def test_a_float_argument_zero_of_the_other_sign_recompiles(first, second):
    def f(x, s):
        return x * math.copysign(1.0, s)
    cf = hop.compile(f)
    x = hop.tensor([1.0, 2.0])
    assert cf(x, first).tolist() == f(x, first).tolist()
    assert cf(x, second).tolist() == f(x, second).tolist()


def test_a_closed_over_complex_and_numpy_scalar_zero_keep_their_signs():
    z = complex(-0.0, 1.0)
    n = np.float64(-0.0)

    def f(x):
        return x * math.copysign(1.0, z.real) + math.copysign(2.0, float(n))
    cf = hop.compile(f)
    x = np.array([1.0])
    assert _bits(cf(x)) == _bits(f(x))
    z = complex(0.0, 1.0)
    assert _bits(cf(x)) == _bits(f(x))
    n = np.float64(0.0)
    assert _bits(cf(x)) == _bits(f(x))


def test_a_max_handed_to_python_at_a_break_keeps_numpys_zero_sign():
    # float(a.max()) is a break; the float goes to the resume as a constant
    # (NumPy's max of [0., -0.] is -0.0, of [-0., 0.] 0.0): the resume's
    # guard must tell them apart
    def sign_of_max(a):
        return a * math.copysign(1.0, float(a.max()))
    f = hop.compile(sign_of_max)
    for a in (np.array([0.0, -0.0]), np.array([-0.0, 0.0]), np.array([2.0, 1.0])):
        assert _bits(f(a)) == _bits(sign_of_max(a))


def test_same_value_tells_zero_signs_apart_and_keeps_nan_equal():
    from hop._guards import same_value
    assert not same_value(0.0, -0.0)
    assert same_value(-0.0, -0.0) and same_value(0.0, 0.0)
    assert not same_value(complex(0.0, -0.0), complex(0.0, 0.0))
    assert not same_value(np.float32(-0.0), np.float32(0.0))
    assert same_value(float("nan"), float("nan"))
    assert same_value(1.5, 1.5) and not same_value(1, 1.0) and same_value(0, 0)
