"""Regressions of four NumPy-fidelity bugs, against NumPy 1.24, compiled
(hop.compile) and eagerly (hop.numpy arrays through NumPy's functions, and
hop.numpy's own): np.round's loops in NumPy's value-based dtype (a float16
array rounded to 5 decimals multiplies by 1e5 in float32, not into NaNs),
round's out= checked by 'same_kind' before anything is written, integer
reductions' initial= converted as NumPy's setitem converts it (inf and NaN
raise), and setxor1d's concatenation in np.concatenate's dtype.  Each case
compares the result's type, dtype, shape and bits, the exception's type and
text, the warnings, and the caller's arrays after the call."""


import numpy as np
import pytest

import hop
import hop.numpy as hnp
from numpy_ways import check_all_ways


# ------------------------------------------------------------ np.round

ROUND_VALUES = [0.125, 3.14, 1.5, -2.5, 65000.0, 1e-3, 123.456, -0.0, 2.675, 0.5]
DECIMALS = [0, 1, 2, 3, 5, 8, -1, -2, -5, 20, 23, 39, 300, 310, -310]


def _values(dt, nd):
    x = np.array(ROUND_VALUES)
    if np.dtype(dt).kind == "c":
        x = x + 1j * x[::-1]
    if np.dtype(dt).kind == "b":
        x = x > 2
    with np.errstate(all="ignore"):
        a = x.astype(dt)
    return a if nd else a[3].copy().reshape(())


@pytest.mark.parametrize("state", ["ignore", "warn"])
@pytest.mark.parametrize("nd", [0, 1])
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.complex64,
                                np.complex128, np.int8, np.int16, np.uint8, np.int64, np.bool_])
def test_round_in_numpys_loop_dtype(dt, nd, state):
    a = _values(dt, nd)
    for d in DECIMALS:
        check_all_ways(lambda v: np.round(v, d), a, state=state,
                       direct=lambda v: hnp.round(v, d))


def test_round_float16_overflowing_factor_is_not_nan():
    # the finding: NumPy multiplies by 1e5 in float32, hop did in float16
    a = np.array([0.125, 3.14, 1.5], np.float16)
    want = check_all_ways(lambda v: np.round(v, 5), a)
    assert want[0][1][3] == np.array([0.12494, np.inf, np.inf], np.float16).tobytes()
    b = np.array([0.125, 3.14], np.float32)
    want = check_all_ways(lambda v: np.round(v, 39), b)
    assert want[0][1][3] == np.array([0.125, np.inf], np.float32).tobytes()


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.int16, np.uint16])
def test_round_random_bits(dt):
    rng = np.random.default_rng(38)
    x = rng.standard_normal(500) * rng.choice([1e-3, 1.0, 100.0, 1e4], 500)
    a = x.astype(dt) if np.dtype(dt).kind == "f" else (x * 50).astype(dt)
    for d in [-3, -1, 1, 2, 3, 4, 7, 25]:
        check_all_ways(lambda v: np.round(v, d), a)
        check_all_ways(lambda v: np.round(v[7], d), a)  # a NumPy scalar's: float64 loops


OUT_DTYPES = [np.float16, np.float32, np.float64, np.int16, np.int64, np.uint8, np.bool_,
              np.complex64, np.complex128]


@pytest.mark.parametrize("state", ["ignore", "warn"])
@pytest.mark.parametrize("odt", OUT_DTYPES)
@pytest.mark.parametrize("dt", OUT_DTYPES)
def test_round_out_same_kind(dt, odt, state):
    a = _values(dt, 1)

    def into_arg(v, o, d):
        r = np.round(v, d, out=o)
        return r

    def into_new(v, d):
        o = np.zeros_like(v, dtype=odt)
        np.around(v, d, out=o)
        return o

    for d in [0, 1, 5, -1, 39]:
        o = np.zeros(a.shape, odt)
        check_all_ways(into_arg, a, o, d, state=state,
                       direct=lambda v, o, d: hnp.round(v, d, out=o))
        check_all_ways(into_new, a, d, state=state)


@pytest.mark.parametrize("case", [
    (np.int16, -1, "divide"), (np.int16, -2, "divide"), (np.float64, 1, "multiply"),
    (np.float64, -1, "divide"), (np.float64, 0, "rint"), (np.float32, 3, "multiply"),
    (np.bool_, 0, "rint")], ids=repr)
def test_round_into_integer_out_raises_and_writes_nothing(case):
    dt, d, ufunc = case
    a = np.array([14, 15, 25, 31], dt) if dt is not np.bool_ else np.array([1, 0, 1, 1], bool)

    def in_place(v):
        o = v.astype(np.int32) if dt is not np.int16 else v
        np.round(v, d, out=o)
        return o

    def into_arg(v, o):
        np.round(v, d, out=o)
        return o

    want = check_all_ways(in_place, a)
    assert want[0][:2] == ("raised", "UFuncTypeError") and f"'{ufunc}'" in want[0][2]
    o = np.arange(4, dtype=np.int32)
    want = check_all_ways(into_arg, a, o)
    assert want[0][0] == "raised"


def test_round_of_integers_copies_by_same_kind():
    a = np.array([14, 15, 25, 31], np.int16)
    for odt in [bool, np.int8, np.uint8, np.float16, np.complex64]:
        for d in [0, 2]:
            check_all_ways(lambda v, o: np.round(v, d, out=o), a, np.zeros(4, odt))
    # an out= of another size
    check_all_ways(lambda v, o: np.round(v, 1, out=o), a.astype(float), np.zeros(3))
    check_all_ways(lambda v, o: np.round(v, 1, out=o), a.astype(float), np.zeros((1, 4)))


def test_round_dynamic_sizes():
    cf = hop.compile(lambda v: np.round(v, 5), dynamic=True)
    for n in [3, 5, 8]:
        a = np.linspace(-2, 2, n).astype(np.float16)
        with np.errstate(all="ignore"):
            want, got = np.round(a, 5), cf(a)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


# ------------------------------------------------- reductions' initial=

INITIALS = [np.inf, -np.inf, np.nan, 1e30, -1e30, 1e10, 2.5, -2.5, 1e19, -1.0,
            np.float64(np.inf), np.float32(np.nan), np.float64(1e30), np.float16(-np.inf),
            np.float32(1e10), 3, True, 2**70]

REDUCTIONS = {
    "sum": lambda x, i: np.sum(x, initial=i),
    "prod": lambda x, i: np.prod(x, initial=i),
    "max_axis0": lambda x, i: np.max(x, axis=0, initial=i),
    "min_method": lambda x, i: x.min(axis=1, initial=i),
    "add_reduce": lambda x, i: np.add.reduce(x, initial=i),
    "maximum_reduce": lambda x, i: np.maximum.reduce(x, axis=None, initial=i),
    "amax_where": lambda x, i: np.amax(x, where=np.array([[True, False], [True, True]]),
                                       initial=i, axis=0),
    "sum_where": lambda x, i: np.sum(x, where=np.array([[True, False], [True, True]]),
                                     initial=i, axis=1),
    "sum_dtype": lambda x, i: np.sum(x, initial=i, dtype=np.int32),
}


@pytest.mark.parametrize("state", ["ignore", "warn"])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32,
                                np.uint64, np.bool_, np.float16, np.float32, np.complex64])
def test_reduction_initial_as_numpy_converts_it(dt, name, state):
    x = np.array([[1, 2], [3, -4]]).astype(dt)
    fn = REDUCTIONS[name]
    for i in INITIALS:
        check_all_ways(fn, x, i, state=state)


@pytest.mark.parametrize("case", [
    (lambda x: np.max(x, axis=0, initial=-np.inf), "OverflowError",
     "cannot convert float infinity to integer"),
    (lambda x: np.sum(x, initial=np.nan), "ValueError", "cannot convert float NaN to integer"),
    (lambda x: np.prod(x, initial=1e30), "OverflowError",
     "Python int too large to convert to C long"),
    (lambda x: x.astype(np.int64).min(axis=1, initial=np.inf), "OverflowError",
     "cannot convert float infinity to integer"),
    (lambda x: np.add.reduce(x, initial=np.inf), "OverflowError",
     "cannot convert float infinity to integer"),
    (lambda x: x.astype(np.uint8).min(initial=np.nan), "ValueError",
     "cannot convert float NaN to integer")])
def test_reduction_nonfinite_initial_raises(case):
    fn, exc, text = case
    x = np.array([[1, 2], [3, -4]], np.int16)
    want = check_all_ways(fn, x)
    assert want[0] == ("raised", exc, text)


def test_reduction_finite_initial_unchanged():
    x = np.array([[1, 2], [3, -4]], np.int16)
    for fn in (lambda x: np.max(x, axis=0, initial=2.9), lambda x: np.sum(x, initial=-7.5),
               lambda x: np.prod(x, initial=3), lambda x: np.min(x, initial=-1e10)):
        assert check_all_ways(fn, x)[0][0] == "ok"


# ------------------------------------------------------------ setxor1d

SET_ARGS = [np.array([3, 1, 2], np.float16), np.array([1.5, 2], np.float32), np.array([2, 7]),
            np.array([2, 7], np.int16), np.array([2**53, 2**53 + 1]), np.array([1.5]),
            np.array([np.nan, 0.0, -0.0, 1, np.nan]), np.array([-0.0, np.nan, 5], np.float32),
            np.array([], np.uint8), np.array([True, False]),
            np.array([1 + 2j, 3, 1 + 2j], np.complex64), np.array([[1, 2], [2, 5]], np.uint64),
            np.array([1, 1, 2], np.int8), np.array([300, 1], np.int16),
            np.array([65504, 65505], np.int32), np.array([[]])]


@pytest.mark.parametrize("assume_unique", [False, True])
@pytest.mark.parametrize("i", range(len(SET_ARGS)))
def test_setxor1d_as_numpy(i, assume_unique):
    x = SET_ARGS[i]
    for y in SET_ARGS + [[1, 9], 3, np.float64(2.0)]:
        check_all_ways(lambda p, q: np.setxor1d(p, q, assume_unique=assume_unique), x, y,
                       direct=lambda p, q: hnp.setxor1d(p, q, assume_unique=assume_unique))


@pytest.mark.parametrize("case", [
    (np.array([3, 1, 2], np.float16), [1, 9], np.float64),
    (np.array([1.5, 2], np.float32), np.array([2, 7]), np.float64),
    (np.array([1.5, 2], np.float16), np.array([2, 7], np.int16), np.float32)], ids=repr)
def test_setxor1d_dtype(case):
    a, b, dt = case
    want = check_all_ways(lambda p, q: np.setxor1d(p, q), a, b)
    assert want[0][1][1] == np.dtype(dt)


def test_setxor1d_dynamic_sizes():
    f = lambda p, q: np.setxor1d(p, q)  # noqa: E731
    g = lambda p, q: np.setxor1d(p, q, assume_unique=True)  # noqa: E731
    cf, cg = hop.compile(f, dynamic=True), hop.compile(g, dynamic=True)
    rng = np.random.default_rng(1)
    for n in [0, 1, 3, 7, 12]:
        p = rng.integers(0, 6, n).astype(np.float16)
        q = rng.integers(0, 6, n + 1)
        for fn, c in ((f, cf), (g, cg)):
            want, got = fn(p, q), c(p, q)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (n, want, got)
