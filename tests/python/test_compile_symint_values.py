"""A size or a lifted int (a SymInt while hop traces) gives in compiled code
what the Python int gives eagerly: comparisons with floats, complex numbers
and NumPy scalars, NumPy's scalar types from NumPy's functions and scalar
operators, ZeroDivisionError and big ints where the plan's int64 arithmetic
cannot follow (the call then runs eagerly), and NumPy's int64 wraparound.
Each case runs eagerly and compiled on the same values, a few calls with the
size or the counter changing, and compares the result (value and exact
type), the exception and the warnings."""

import warnings

import numpy as np
import pytest

import hop


def _given(fn, *args):
    """(result as (type, repr) leaves, or the exception's type and text; the
    warnings' category and text) of one call."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
        except Exception as e:  # noqa: BLE001 (the error is the answer)
            out = (type(e), str(e))
        else:
            leaves = out if isinstance(out, tuple) else (out,)
            out = [(type(v), repr(v)) for v in leaves]
    return out, [(w.category, str(w.message)) for w in got
                 if not str(w.message).startswith("hop")]


def _same_over_sizes(fn, sizes=(2, 3, 4, 5, 4)):
    """fn(np.ones(n)) eagerly and compiled for each n (the size goes
    dynamic from the second)."""
    cf = hop.compile(fn)
    for n in sizes:
        assert _given(cf, np.ones(n)) == _given(fn, np.ones(n)), n
    return cf


# ------------------------------------------------ comparisons with a size

def size_equals_float(x):
    if x.shape[0] == 4.0:
        return x * 100
    return x


def size_against_floats(x):
    m = x.shape[0]
    return (m == 4.0, m != 4.0, m < 3.5, m <= 3.5, m > 3.5, m >= 3.5, m < 4.0, m >= 4.0,
            4.0 == m, 3.5 < m, m in [4.0], [4.0, 4].count(m), (m, 1) == (4.0, 1))


def size_against_odd_floats(x):
    m = x.shape[0]
    nan, inf = float("nan"), float("inf")
    return (m == nan, m != nan, m < nan, m >= nan, m < inf, m > -inf, m == inf,
            m < 1e300, m > -1e300, m <= 2.0 ** 63, m < -(2.0 ** 63), m != 2 ** 70,
            m < 2 ** 70, m > -(2 ** 70), m == 2 ** 64)


def size_against_complex(x):
    m = x.shape[0]
    return m == 4 + 0j, m != 4 + 0j, m == 4 + 1j, 4j != m, m * 1j, 1j + m


def size_against_numpy_scalars(x):
    m = x.shape[0]
    return (m == np.float32(4), np.float32(4) == m, m < np.float64(3.5), np.int8(4) == m,
            m >= np.uint8(3), m == np.float16(4.0))


@pytest.mark.parametrize("fn", [size_equals_float, size_against_floats, size_against_odd_floats,
                                size_against_complex, size_against_numpy_scalars])
def test_a_size_compares_with_numbers_as_a_python_int_does(fn):
    _same_over_sizes(fn)


def size_less_than_complex(x):
    return x.shape[0] < 1j


def test_ordering_a_size_against_a_complex_number_is_pythons_type_error():
    cf = _same_over_sizes(size_less_than_complex)
    with pytest.raises(TypeError, match="'<' not supported between instances of 'int' and "
                                        "'complex'"):
        cf(np.ones(3))


# ------------------------------ NumPy's scalars from NumPy code on a size

def numpy_functions_of_a_size(x):
    m = x.shape[0]
    return (np.add(m, 1), np.abs(m), np.maximum(m, 2), np.multiply(m, 0.5), np.true_divide(m, 2),
            np.sum([m, 1]), np.power(m, 2), isinstance(np.add(m, 1), np.integer))


def numpy_scalars_with_a_size(x):
    m = x.shape[0]
    return (np.float64(1.5) * m, np.int64(3) * m, np.uint8(3) - m, m * np.float16(1.1),
            m + np.float32(0.5), np.int32(7) // m, m % np.int64(3), np.float64(2.0) ** m)


def numpy_scalar_wraps(x):
    m = x.shape[0]
    return np.int64(2 ** 62) * m, np.abs(m) * 2 ** 62


@pytest.mark.parametrize("fn", [numpy_functions_of_a_size, numpy_scalars_with_a_size])
def test_numpy_code_on_a_size_gives_numpys_scalars(fn):
    _same_over_sizes(fn)


def test_numpy_int64_scalars_of_a_size_wrap_around_as_numpys():
    # (the values; NumPy's "overflow encountered in scalar multiply" is not
    # reproduced, docs/ARCHITECTURE.md: NumPy's integer overflow warnings)
    cf = hop.compile(numpy_scalar_wraps)
    for n in (2, 3, 4, 5):
        assert _given(cf, np.ones(n))[0] == _given(numpy_scalar_wraps, np.ones(n))[0]


def test_numpy_scalars_with_a_size_stay_compiled():
    cf = _same_over_sizes(numpy_scalars_with_a_size)
    assert cf.eager_calls == 0


def numpy_scalar_of_a_float_of_a_size(x):
    m = x.shape[0]
    return np.float64(2.0) * (m * 0.5), (m / 4) + np.float32(1)


def test_a_float_made_of_a_size_with_a_numpy_scalar_is_numpys_scalar():
    _same_over_sizes(numpy_scalar_of_a_float_of_a_size)


# --------------------------- where int64 arithmetic cannot follow Python

def divides_by_size_minus_3(x):
    return 7 // (x.shape[0] - 3), 7 % (x.shape[0] - 2)


def numpy_int_divides_by_size_minus_4(x):
    m = x.shape[0]
    return np.int64(7) // (m - 4), np.maximum(m, 2) // (m - 4)


def big_product_of_size(x):
    return x.shape[0] * 2 ** 62 + 1


@pytest.mark.parametrize("fn", [divides_by_size_minus_3, numpy_int_divides_by_size_minus_4,
                                big_product_of_size])
def test_a_zero_divisor_or_an_int64_overflow_of_a_size_is_eagers(fn):
    cf = _same_over_sizes(fn, sizes=(2, 3, 4, 5, 3, 4))
    assert cf.recompiles <= 1  # (the plan stays: only the failing calls run eagerly)


def test_the_plans_int_arithmetic_that_fails_is_a_check_error_in_hop_trace():
    gm = hop.trace(lambda x: 7 // (x.shape[0] - 3), hop.ones(2), dynamic=True)
    assert gm(hop.ones(4)) == 7
    with pytest.raises(hop.CheckError, match=r"cannot evaluate 7//\(s0 - 3\): division by zero"):
        gm(hop.ones(3))


COUNT = 0


def counter_divides(x):
    global COUNT
    COUNT += 1
    return 7 // COUNT, 7 % COUNT, x + 1


def counter_grows_past_int64(x):
    global COUNT
    COUNT += 1
    return COUNT * 2 ** 62, np.int64(2 ** 62) * COUNT, x * 2


def counter_compares(x):
    global COUNT
    COUNT += 1
    return COUNT == 1.0, COUNT < 2.5, COUNT == np.float32(2), np.float64(1.5) * COUNT


@pytest.mark.parametrize("fn,starts", [(counter_divides, (0, -1, 1, -1)),
                                       (counter_grows_past_int64, (0, 1, 2, 0)),
                                       (counter_compares, (0, 1, 0, 2))])
def test_a_lifted_counter_gives_what_the_python_int_gives(fn, starts):
    global COUNT
    cf = hop.compile(fn)
    for start in starts:
        COUNT = start
        want = _given(fn, np.ones(2))
        after = COUNT
        COUNT = start
        assert _given(cf, np.ones(2)) == want, start
        assert COUNT == after  # the counter's write: applied once, eager's value
