"""Regressions of three fidelity bugs, against NumPy 1.24, eagerly and
compiled: the sign of a zero quantile (np.quantile, np.nanquantile and the
percentiles of arrays holding -0.0), np.arange's keyword forms, and float32
(and float64, float16) log10's bits (NumPy's SVML log10, now adopted)."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp


def _bits(x):
    x = np.asarray(x)
    return x.dtype, x.shape, np.ascontiguousarray(x).view("u%d" % x.itemsize).tolist()


QUANTILE_CASES = [
    ([-0.0], 0.5), ([-0.0, np.nan], 0.0), ([-0.0, np.nan, -0.0, np.nan, 0.0], 0.25),
    ([-0.0, -0.0, -0.0, 0.0, 0.0, -0.0], 0.9), ([0.0, -0.0, 1.0, -0.0, 0.0], [0.1, 0.5]),
    ([-0.0, -1.0, 0.0, 2.0], 0.3), ([-0.0, -0.0], 1.0)]


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("case", QUANTILE_CASES, ids=repr)
@pytest.mark.parametrize("fn", [np.quantile, np.nanquantile, np.percentile, np.nanpercentile])
def test_quantile_zero_sign(fn, case, dt):
    x, q = case
    x = np.array(x, dt)
    if "percentile" in fn.__name__:
        q = (np.asarray(q) * 100).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _bits(fn(x, q))
        assert _bits(getattr(hnp, fn.__name__)(hnp.asarray(x), q)) == want
        assert _bits(fn(hnp.asarray(x), q)) == want
        assert _bits(hop.compile(lambda a: fn(a, q))(x)) == want


def test_quantile_zero_sign_random():
    rng = np.random.default_rng(3)
    for _ in range(300):
        x = rng.choice(np.array([-0.0, 0.0, 1.0, -1.0, np.nan]), rng.integers(1, 20))
        q = float(rng.choice([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]))
        for fn in (np.quantile, np.nanquantile):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert _bits(getattr(hnp, fn.__name__)(hnp.asarray(x), q)) == _bits(fn(x, q)), \
                    (fn.__name__, x.tolist(), q)


ARANGE = [((), {"start": 3}), ((), {"stop": 3}), ((), {"start": 1, "stop": 5}),
          ((), {"start": 1, "stop": 5, "step": 2}), ((), {"stop": 3, "dtype": float}),
          ((), {"step": 2}), ((), {}), ((3,), {"stop": 5}), ((), {"start": 3, "step": 1}),
          ((2,), {"start": 1}), ((1, 5), {"step": 2}), ((1, 2, 1, None, 5), {}),
          ((), {"foo": 1}), ((3,), {"stop": None}), ((1,), {"dtype": None, "stop": 4}),
          ((1, 2, 1), {"dtype": float, "step": 2}), ((), {"stop": 3.5, "like": None})]


def _outcome(f):
    try:
        r = np.asarray(f())
        return r.dtype, r.tolist()
    except Exception as e:  # noqa: BLE001 (compared)
        return type(e), str(e)


@pytest.mark.parametrize("case", ARANGE, ids=repr)
def test_arange_keywords(case):
    args, kw = case
    want = _outcome(lambda: np.arange(*args, **kw))
    assert _outcome(lambda: hnp.arange(*args, **kw)) == want
    assert _outcome(lambda: hop.compile(lambda a: (np.arange(*args, **kw), a)[0])(
        np.zeros(1))) == want
    assert _outcome(lambda: hop.compile(lambda a: (hnp.arange(*args, **kw), a)[0])(
        np.zeros(1))) == want


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_log10_bits(dt):
    """Every 61st float32 bit pattern in [1e-3, 1e3] (and the float64 values
    near them), and the special values: NumPy's bits, eagerly and compiled
    (hop's libm log10 differed in up to 4 ulps from NumPy's SVML one for 46%
    of the float32 values)."""
    lo, hi = np.float32(1e-3).view(np.uint32), np.float32(1e3).view(np.uint32)
    x = np.arange(lo, hi, 61, dtype=np.uint32).view(np.float32).astype(dt)
    if dt == np.float64:
        x = x * (1 + 2.0 ** -30)
    x = np.concatenate([x, np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45,
                                     np.finfo(dt).tiny, np.finfo(dt).max], dt)])
    with np.errstate(all="ignore"):
        want = _bits(np.log10(x))
        assert _bits(hnp.log10(hnp.asarray(x))) == want
        assert _bits(hop.compile(lambda a: np.log10(a))(x)) == want
        assert _bits(hop.compile(lambda a: np.log10(a[::3]))(x)) == _bits(np.log10(x[::3]))


def test_log10_float16_all():
    x = np.arange(65536, dtype=np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        assert _bits(hnp.log10(hnp.asarray(x))) == _bits(np.log10(x))


def test_log10_warnings_are_numpys():
    x = np.array([0.0, -1.0, 2.0], np.float32)
    with warnings.catch_warnings(record=True) as wn:
        warnings.simplefilter("always")
        np.log10(x)
    with warnings.catch_warnings(record=True) as wh:
        warnings.simplefilter("always")
        hnp.log10(hnp.asarray(x))
    assert sorted(str(w.message) for w in wh) == sorted(str(w.message) for w in wn)
