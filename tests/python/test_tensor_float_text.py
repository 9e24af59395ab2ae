"""The text of a 0-d float tensor is NumPy's, digit for digit.

print(x.sum()) in a compiled function replays str() of a 0-d tensor on every
call, so tensor_repr.c makes the positional text of a float32 or float64 itself
(scalar_repr: the shortest digits from exact 128-bit floors and Ryu's digit
loop); the reference is NumPy's own repr of the same value as a 0-d array.
Longer sweeps (dense float32 bit patterns, old against new C):
scripts/check_float_text.py."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import hop
from budget import examples


def numpy_text(v, dtype):
    """hop's text of a 0-d tensor of dtype holding v, made from NumPy's repr
    of the same 0-d array (hop spells float64, never float32)."""
    r = repr(np.array(v, dtype=dtype))
    assert r.startswith("array(")
    body = r[len("array("):-1]
    if dtype == np.float32:
        assert body.endswith(", dtype=float32")
        return "hop.tensor(" + body[:-len(", dtype=float32")] + ")"
    return "hop.tensor(" + body + ", dtype=hop.float64)"


def check(v, dtype):
    t = hop.tensor(np.array(v, dtype=dtype))
    want = numpy_text(v, dtype)
    assert repr(t) == want and str(t) == want, (dtype, v, repr(t), want)


# the float32 nearest 1e-4 (just below it: the exponent form) up to 1e8 (a
# float32: the first in the exponent form) brackets the positional range
_F32_1E_4 = float(np.float32(1e-4))


def f32_of_bits(b):
    return np.array([b], np.uint32).view(np.float32)[0]


@settings(max_examples=examples(400), deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_any_float32_bit_pattern_prints_as_numpy_prints_it(b):
    check(f32_of_bits(b), np.float32)


@settings(max_examples=examples(400), deadline=None)
@given(st.floats(_F32_1E_4, 1e8, width=32) | st.floats(-1e8, -_F32_1E_4, width=32))
def test_a_positional_float32_prints_as_numpy_prints_it(v):
    check(v, np.float32)


@settings(max_examples=examples(400), deadline=None)
@given(st.floats(1e-4, 1e8) | st.floats(allow_nan=True, allow_infinity=True))
def test_a_float64_prints_as_numpy_prints_it(v):
    check(v, np.float64)


def test_float32_edges_print_as_numpy_prints_them():
    # where shortest digits are hardest: the ends of the positional range,
    # powers of two (the lower half of the rounding interval is half as
    # wide), powers of ten (digits carry into one more), floats whose
    # interval ends are short decimals (ties at the ends), subnormals, the
    # largest and smallest floats, and integers past 2^24 (digits past the
    # unique ones print in full)
    values = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-4, -1e-4, 1e8, 99999992.0,
              16777216.0, 16777217.0, 33554432.0, 67108864.0, 0.1, 0.3, 2.0 ** -14]
    bits = [1, 2, 0x7FFFFF, 0x800000, 0x7F7FFFFF, 0x00800001, 0x3F800000, 0x3F7FFFFF]
    for e in range(1, 255, 3):
        for m in (0, 1, 2, 0x7FFFFE, 0x7FFFFF):
            bits.append((e << 23) | m)
    for k in range(-45, 39):
        c = int(np.array([10.0 ** k], np.float32).view(np.uint32)[0])
        bits += [b for b in range(c - 3, c + 4) if 0 < b < 0x7F800000]
    values += [f32_of_bits(b) for b in bits]
    values += [-v for v in values]
    for v in values:
        check(v, np.float32)


def test_float64_edges_print_as_numpy_prints_them():
    values = [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e-4,
              0.00010000000000000002, 99999999.99999999, 1e8, 0.1, 0.2, 0.30000000000000004,
              1 / 3, 2.0 ** -14, 2.0 ** 26, 9007199254740993.0, 123456.789e-3]
    for k in range(-5, 10):
        c = np.array([10.0 ** k]).view(np.uint64)[0]
        values += list(np.arange(c - 3, c + 4, dtype=np.uint64).view(np.float64))
    for e in range(-15, 28):
        values += [2.0 ** e, np.nextafter(2.0 ** e, 0.0), np.nextafter(2.0 ** e, math.inf)]
    values += [-v for v in values]
    for v in values:
        check(v, np.float64)
