"""Answers NumPy 1.24 gives by which of its loops (SIMD or scalar) takes an
element, which hop cannot reproduce, so hop.compile runs such a call eagerly
when the plan meets one at run time (issue #29): the sign of zero a float
max/min keeps when its slice holds zeros of both signs, and a NaN or
out-of-range float cast to uint32.  Explicit arrays of the lengths where
NumPy's answer is not the scalar loop's (found by test_numpy_campaign under
the stress budget), compared bit for bit with NumPy's."""

import warnings

import numpy as np
import pytest

import hop


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), (got, want)


def _run(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = f(*args)
        got = hop.compile(f)(*args)
    return got, want


REDUCTIONS = {
    "max": lambda a: np.array([1.0, 2.0, 3.0]) / a.max(),
    "min": lambda a: np.array([1.0, 2.0, 3.0]) / a.min(),
    "amax_axis0": lambda a: 1.0 / np.amax(a, axis=0),
    "amin_axis1_keepdims": lambda a: 1.0 / np.amin(a, axis=-1, keepdims=True),
    "maximum_reduce": lambda a: 1.0 / np.maximum.reduce(a, axis=None),
    "nanmax": lambda a: 1.0 / np.nanmax(a),
    "nanmin_axis0": lambda a: 1.0 / np.nanmin(a, axis=0),
    "returned": lambda a: a.max(axis=0),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_min_of_zeros_of_both_signs_keep_numpys_sign(name, dtype):
    f = REDUCTIONS[name]
    # the last of the zeros for short arrays ([0., -0.].max() is -0.0), and
    # from 9 (float64) or 17 (float32) elements on the SIMD lanes' choice
    for zeros in ([0.0, -0.0], [-0.0, 0.0, 0.0], [-0.0] * 8 + [0.0] * 9,
                  [0.0] * 9 + [-0.0] * 8 + [0.0] * 8 + [-0.0] * 8,
                  [-1.0, 0.0] + [-0.0] * 17):
        a = np.array(zeros, dtype)
        _same_bits(*_run(f, np.stack([a, a[::-1]], axis=-1)))
        _same_bits(*_run(f, a))


def test_max_of_nonzero_values_and_of_one_sign_of_zero_stay_compiled():
    f = hop.compile(lambda a: 1.0 / a.max(axis=0))
    for a in (np.array([[1.0, -2.0], [3.0, 0.5]]), np.array([[-0.0, -1.0], [-0.0, -3.0]])):
        _same_bits(f(a), 1.0 / a.max(axis=0))
    assert f.eager_calls == 0


def test_max_of_mixed_zeros_runs_eagerly_only_for_that_call():
    f = hop.compile(lambda a: 1.0 / a.max())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _same_bits(f(np.array([0.0, -0.0])), np.float64(-np.inf))
        _same_bits(f(np.array([-0.0, 0.0])), np.float64(np.inf))
    assert f.eager_calls == 2
    _same_bits(f(np.array([2.0, 4.0])), np.float64(0.25))
    assert f.eager_calls == 2 and len(f.graphs) == 1


def test_elementwise_maximum_minimum_of_zeros_are_numpys_compiled():
    # np.maximum/minimum of equal zeros give the second operand at every length
    f = hop.compile(lambda a, b: (np.maximum(a, b), np.minimum(a, b), np.fmax(a, b)))
    for n in (1, 9, 17, 40):
        for x, y in ((-0.0, 0.0), (0.0, -0.0)):
            a, b = np.full(n, x), np.full(n, y)
            for got, want in zip(f(a, b), (np.maximum(a, b), np.minimum(a, b), np.fmax(a, b))):
                _same_bits(got, want)
    assert f.eager_calls == 0


CASTS = {
    "astype": lambda a: a.astype(np.uint32),
    "strided": lambda a: a[::2].astype(np.uint32),
    "ufunc_dtype": lambda a: np.add(a, 0, dtype=np.uint32, casting="unsafe"),
}


@pytest.mark.parametrize("name", sorted(CASTS))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_nan_and_out_of_range_float_to_uint32_are_numpys_at_every_length(name, dtype):
    # NumPy's SIMD loop (contiguous, from 10 elements on) and its scalar
    # loop give other answers outside (-2**31 - 1, 2**32)
    for v in (np.nan, np.inf, -np.inf, -1e10, 5e9, -2.0 ** 31 - 1, 3.0):
        for n in (1, 9, 10, 16, 17, 33, 64):
            a = np.full(n, v, dtype)
            a[0] = 1.0
            _same_bits(*_run(CASTS[name], a))


def test_float_to_other_integers_out_of_range_do_not_depend_on_length():
    # the loops of every other integer dtype agree at every length: compiled
    f = hop.compile(lambda a: tuple(a.astype(d) for d in (np.int8, np.uint8, np.int16, np.uint16,
                                                           np.int32, np.int64, np.uint64)))
    for dtype in (np.float16, np.float32, np.float64):
        for n in (1, 10, 17, 64):
            a = np.array([np.nan, np.inf, -np.inf, 1e20, -1e20, 5e9, -3.0, 2.0 ** 63, 3e9] * n,
                         dtype)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                for got, want in zip(f(a), (a.astype(d) for d in (np.int8, np.uint8, np.int16,
                                                                 np.uint16, np.int32, np.int64,
                                                                 np.uint64))):
                    _same_bits(got, want)
    assert f.eager_calls == 0


def test_checked_max_and_uint32_cast_handed_to_python_at_a_graph_break_are_numpys():
    import math

    def sign_of_max(a):
        return a * math.copysign(1.0, float(a.max()))

    f = hop.compile(sign_of_max)
    for a in (np.array([0.0, -0.0]), np.array([-0.0, 0.0]), np.array([2.0, 1.0])):
        _same_bits(f(a), sign_of_max(a))
    # the max is handed to Python, so NumPy computes it there (the part
    # before the break runs in Python: its zero's sign may differ in hop's
    # graph); no call ran eagerly as a whole
    assert f.eager_calls == 0
    assert "amax (amax): its sign of zero may differ" in f.explain()

    def text(a):
        return str(a.astype(np.uint32))

    g = hop.compile(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for a in (np.full(12, np.nan), np.full(12, 5.0), np.full(3, np.nan), np.full(3, 7.0)):
            assert g(a) == text(a)
    assert g.eager_calls == 2


@pytest.mark.parametrize("initial", [0.0, -0.0])
def test_max_min_with_an_initial_zero_of_the_other_sign_keep_numpys_sign(initial):
    # initial takes part as one more element: max([-0.0], initial=0.0) is
    # NumPy's -0.0 (its loop's pick), not hop's maximum
    for n in (1, 2, 9, 17):
        for z in (0.0, -0.0):
            a = np.full(n, z)
            _same_bits(*_run(lambda a: 1.0 / np.max(a, initial=initial), a))
            _same_bits(*_run(lambda a: 1.0 / np.min(a, axis=0, initial=initial), a))


MIXED = (np.array([0.0, -0.0]), np.array([-0.0, 0.0]), np.array([2.0, -1.0]))


def _compare_calls(f, inputs):
    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for a in inputs:
            want = f(a.copy())
            _same_bits(cf(a.copy()), want)
    return cf


def test_a_max_compared_only_is_not_checked_and_stays_compiled():
    # the check is made at the end of the trace, for results and writes the
    # max reaches with its sign: a comparison (also inside a merged branch's
    # side, and through max - min) does not show the sign
    cf = _compare_calls(lambda a: a * 2 if np.max(a) - np.min(a) >= 0 else a, MIXED)
    assert cf.eager_calls == 0
    cf = _compare_calls(lambda a: (a > np.max(a)) | (a == np.min(a)), MIXED)
    assert cf.eager_calls == 0


def test_a_max_returned_through_a_merged_branch_is_checked():
    # m reaches the result through a side of the data-dependent `if`
    def f(a):
        m = np.max(a)
        return m * 2 if a[0] >= -10 else m - 1
    cf = _compare_calls(f, MIXED)
    assert cf.eager_calls == 2


def test_a_max_written_into_the_argument_is_checked():
    def f(a):
        a[1:] = np.max(a)  # the write is a result of the plan too
        return a.sum()
    cf = _compare_calls(f, MIXED)
    assert cf.eager_calls == 2
