"""hop.numpy's reductions give NumPy 1.24's results, warnings and errors
(the first rule; issue #29): each case runs by NumPy, eagerly on hop.numpy
arrays, compiled with the array as an argument and compiled with it as a
global (two calls each: the trace's and the plan's), under NumPy's default
error state, errstate(all='ignore') and errstate(all='raise'); the result's
type, dtype and bytes, the RuntimeWarnings (category and text, in order)
and the error (type and text) agree.  docs/ARCHITECTURE.md, "Floating-point
warnings" and "Summation order".  Each case failed before: no warning from
eager reductions (nor FloatingPointError under 'raise'), none from float16
conversions, none of NumPy's Python warnings under 'ignore' compiled; the
cases marked as controls warned of nothing before and still do."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp

from test_numpy_operand_campaign import _as_numpy

STATES = [{}, {"all": "ignore"}, {"all": "raise"}]
F16, F32 = np.float16, np.float32


def _described(call):
    """(what call() gave: its type, dtype and bytes, or the error's type
    and text; NumPy's warnings as (category, text)), hop's own notes left
    out."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = _as_numpy(call())
            got = (type(r).__name__, str(np.asarray(r).dtype), np.shape(r),
                   np.asarray(r).tobytes())
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            got = ("raised", type(e).__name__, str(e))
    return got, [(x.category, str(x.message)) for x in w
                 if not str(x.message).startswith("hop")]


def _ways(src, a, state):
    """{way: _described} for NumPy and the three ways of hop."""
    ns, gns = {"np": np}, {"np": np, "G": a.copy()}
    exec(f"def f(a):\n    return {src}\n", ns)  # noqa: S102 (the tests' own text)
    exec(f"def g():\n    a = G\n    return {src}\n", gns)  # noqa: S102
    f, g = ns["f"], gns["g"]
    cf, cg = hop.compile(f), hop.compile(g)
    with np.errstate(**state):
        out = {"numpy": _described(lambda: f(a.copy()))}
        out["eager"] = _described(lambda: f(hnp.asarray(a.copy())))
        for k in range(2):
            out[f"compiled argument, call {k}"] = _described(lambda: cf(a.copy()))
            out[f"compiled global, call {k}"] = _described(cg)
    return out


def check(src, a, states=STATES):
    for state in states:
        out = _ways(src, a, state)
        want = out.pop("numpy")
        bad = {way: got for way, got in out.items() if got != want}
        assert not bad, (state, want, bad)


CASES = [
    # float sums that overflow or meet inf - inf: "... encountered in reduce"
    ("np.sum(a)", np.array([3e38, 3e38], F32)),
    ("a.sum()", np.array([3e38, 3e38], F32)),
    ("np.sum(a)", np.array([1e308, 1e308])),
    ("np.sum(a, axis=0)", np.array([[1e308, 1.0], [1e308, 2.0]])),
    ("np.sum(a)", np.array([np.inf, -np.inf])),
    ("np.nansum(a)", np.array([np.inf, np.nan, -np.inf])),
    # float32 means accumulate in float32, as _methods._mean: inf
    ("np.mean(a)", np.array([3e38, 3e38], F32)),
    ("a.mean()", np.full(100, 1e37, F32)),
    ("np.mean(a, axis=0)", np.full((100, 3), 1e37, F32)),
    ("np.mean(a, axis=1)", np.full((3, 100), 1e37, F32)),
    ("np.mean(a)", np.full((3, 100), 1e37, F32).T),
    ("np.var(a)", np.array([3e38, -3e38], F32)),
    ("np.std(a, axis=0)", np.array([[1e200, 1.0], [-1e200, 2.0]])),
    ("np.average(a)", np.array([1e308, 1e308])),
    # average's product overflows: NumPy's multiply warns; eagerly hop's
    # flag was cleared by the NumPy calls that tell hop the sum's and the
    # division's dtypes (NumPy clears the flags before its loops)
    ("np.average(a, weights=np.array([2.0, 2.0], np.float32))", np.array([3e38, 3e38], F32)),
    ("np.average(a, axis=0, weights=np.array([1.0, 3.0], np.float32))",
     np.array([[3e38, 1.0], [3e38, 2.0]], F32)),
    ("np.average(a, weights=np.array([2.0, 2.0]))", np.array([1e308, 1e308])),
    ("np.average(a, axis=1, weights=np.array([2.0, 2.0]), keepdims=True)",
     np.array([[1e308, 1e308], [1.0, 2.0]])),
    ("np.average(a, weights=np.array([2.0, 2.0]), returned=True)", np.array([1e308, 1e308])),
    # (these two warned before too: the weights' sum, the float16 product)
    ("np.average(a, weights=np.array([3e38, 3e38], np.float32))", np.array([1.0, 2.0], F32)),
    ("np.average(a, weights=np.array([2, 2], np.float16))", np.array([60000, 60000], F16)),
    # products and scans
    ("np.prod(a)", np.array([3e38, 3e38], F32)),
    ("np.prod(a)", np.array([1e-30, 1e-30], F32)),
    ("np.nanprod(a)", np.array([1e300, np.nan, 1e300])),
    ("np.cumsum(a)", np.array([3e38, 3e38], F32)),
    ("np.cumprod(a)", np.array([3e38, 3e38], F32)),
    ("np.nancumsum(a)", np.array([1e308, np.nan, 1e308])),
    # float16: NumPy's conversion raises the overflow flag
    ("np.sum(a)", np.array([60000, 60000], F16)),
    ("np.sum(a, axis=0)", np.array([[60000, 1], [60000, 1]], F16)),
    ("np.sum(a, axis=1)", np.array([[60000, 60000], [1, 1]], F16)),
    ("np.cumsum(a)", np.array([60000, 60000], F16)),
    ("np.prod(a)", np.array([300, 300], F16)),
    ("a * a", np.array([300, 1], F16)),
    ("a + a", np.array([60000, 1], F16)),
    ("a.astype(np.float16)", np.array([1e6, 1.0])),
    ("a.astype(np.float16)", np.array([1e6, 1.0], F32)),
    # NumPy's Python warnings: under every state
    ("np.mean(a)", np.zeros(0)),
    ("np.mean(a, axis=0)", np.zeros((0, 3))),
    ("a.mean(axis=1)", np.zeros((2, 0), F32)),
    ("np.var(a)", np.zeros(0)),
    ("np.std(a, axis=0)", np.zeros((0, 2))),
    ("np.var(a, ddof=1)", np.array([1.0])),
    ("np.std(a, ddof=2)", np.array([1.0, 2.0])),
    ("np.var(a, axis=1, ddof=3)", np.arange(6.0).reshape(2, 3)),
    # controls: what warns of nothing stays so
    ("np.sum(a)", np.array([1.0, 2.0], F32)),
    ("np.mean(a, axis=0)", np.arange(6.0).reshape(3, 2)),
    ("np.var(a, ddof=1)", np.arange(4.0)),
    ("np.sum(a)", np.array([100, 100], np.int8)),
    ("np.sum(a)", np.array([30000, 30000], np.int16)),
    ("np.sum(a)", np.array([True, True, False])),
    ("np.sum(a, dtype=np.int8)", np.array([100, 100, 100], np.int8)),
    ("np.cumprod(a)", np.array([100, 100, 100], np.int8)),
    ("np.mean(a)", np.array([True, False, True])),
    ("np.nansum(a, axis=1)", np.array([[np.inf, -np.inf], [np.nan, 2.0]])),
    ("np.var(a, axis=0, ddof=2)", np.arange(12.0, dtype=F16).reshape(4, 3)),
    ("np.average(a, weights=np.array([1.0, 2.0, 3.0]))", np.array([1.0, 2.0, 4.0], F32)),
    ("np.max(a, initial=np.nan)", np.array([1.0, 2.0])),
    ("np.max(a, initial=5.0)", np.array([1.0, 7.0])),
    ("np.min(a, axis=0, initial=-1)", np.zeros((0, 2))),
]


@pytest.mark.parametrize("src,a", CASES, ids=[f"{s}-{a.dtype}-{i}" for i, (s, a) in
                                              enumerate(CASES)])
def test_reductions_warn_raise_and_answer_as_numpy(src, a):
    check(src, a)


def test_underflow_warns_when_asked():
    # NumPy's float16 conversion raises the underflow flag for an inexact
    # subnormal, float32 products and sums theirs; errstate(under='warn')
    # shows it (and 'raise' raises it)
    for src, a in [("a * a", np.array([1e-5, 1.0], F16)),
                   ("a.astype(np.float16)", np.array([1e-9, 1.0])),
                   ("np.prod(a)", np.array([1e-30, 1e-30], F32)),
                   ("np.cumprod(a)", np.array([1e-30, 1e-30], F32)),
                   ("np.sum(a)", np.array([1e-40, 1e-40], F32))]:
        check(src, a, [{"under": "warn"}, {"under": "raise"}])


def test_a_checked_reduction_leaves_its_inner_ufuncs_flags_to_itself():
    # np.var's subtract and multiply overflow inside; NumPy's var warns for
    # each of its own steps, and hop's eager var is NumPy's whole call (not
    # one NumPy warning per inner step of hop's)
    check("np.var(a)", np.array([3e38, -3e38, 1.0], F32))


def test_out_that_overlaps_the_input_is_numpys_from_the_start():
    a = np.array([[3e38, 1.0], [3e38, 2.0]], F32)
    h = hnp.asarray(a.copy())
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        np.sum(a, axis=0, out=a[0])
        r = np.sum(h, axis=0, out=h[0])
    assert r is not None and np.asarray(h).tobytes() == a.tobytes()
    assert [str(x.message) for x in w] == ["overflow encountered in reduce"] * 2


# NumPy's warnings of the data: an all-NaN slice, a where= mask's empty
# slice.  Eagerly a result that is not finite has NumPy compute the call;
# compiled, a run-time check hands such a call to eager (kind NUMPY_WARNS).
# Before, under errstate(all='ignore') (and for nanmax, nanmin, nanmedian
# under any state) compiled calls gave no warning.
DATA_CASES = [
    ("np.nanmean(a)", np.array([np.nan, np.nan])),
    ("np.nanmean(a, axis=0)", np.array([[np.nan, 1.0], [np.nan, 2.0]])),
    ("np.nanvar(a, axis=0)", np.array([[np.nan, 1.0], [np.nan, 2.0]])),
    ("np.nanstd(a, ddof=1)", np.array([np.nan, 1.0])),
    ("np.nanmax(a)", np.array([np.nan, np.nan])),
    ("np.nanmin(a, axis=1)", np.array([[np.nan, np.nan], [1.0, 2.0]])),
    ("np.nanmedian(a)", np.array([np.nan, np.nan])),
    ("np.mean(a, where=np.array([False, False]))", np.array([1.0, 2.0])),
    ("np.var(a, where=np.array([True, False]), ddof=1)", np.array([1.0, 2.0])),
    ("a[a > 100].mean()", np.array([1.0, 2.0])),  # (an unbacked size)
    ("np.var(a[a > 1.5], ddof=1)", np.array([1.0, 2.0])),
    ("np.var(a[a > 0.5], ddof=2)", np.array([1.0, 2.0])),  # (x/0: inf, not NaN)
    ("np.std(a[a > 0.5], ddof=3, axis=0)", np.array([1.0, 2.0])),
    ("np.nanvar(a, axis=1, ddof=2)", np.array([[np.nan, 1.0, 3.0], [1.0, 2.0, 4.0]])),
    ("np.nanmean(a, axis=0)", np.array([[np.inf, np.nan], [-np.inf, 2.0]])),  # (NaN, no warning)
    ("np.nanmean(a)", np.array([np.nan, 1.0])),  # (controls: nothing to warn of)
    ("np.nanmean(a)", np.array([np.inf, 1.0])),
]


@pytest.mark.parametrize("src,a", DATA_CASES, ids=[f"{s}-{i}" for i, (s, a) in
                                                   enumerate(DATA_CASES)])
def test_warnings_of_the_data_are_numpys(src, a):
    check(src, a)


def test_the_plan_counts_the_slices_only_when_a_result_is_not_finite():
    # the check of the data's warnings (kind NUMPY_WARNS) counts each
    # slice's elements again, as much work as nanmean's own: a cond on the
    # result's finiteness runs it only where a warning is possible
    f = hop.compile(lambda a: np.nanmean(a, axis=0))
    f(np.array([[1.0, 2.0], [3.0, np.nan]]))
    code = f.graphs[0].code
    top = [line for line in code.splitlines() if line.startswith("    ") and
           not line.startswith("        ") and "def " not in line]
    assert sum(" = ne(" in line for line in top) == 1, code
    assert any(" = cond(" in line for line in top) and " = fail_if(" in code, code


def test_a_plan_whose_data_warns_runs_eagerly_and_stays():
    # the run-time check hands the call to eager; the plan serves the next
    # call, which warns of nothing
    f = hop.compile(lambda a: np.nanmean(a, axis=0))
    good, bad = np.array([[1.0, 2.0], [3.0, np.nan]]), np.array([[np.nan, 1.0], [np.nan, 2.0]])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f(good)
        f(bad)
        r = f(good)
    assert [str(x.message) for x in w if not str(x.message).startswith("hop")] == \
        ["Mean of empty slice"]
    assert np.asarray(r).tobytes() == np.nanmean(good, axis=0).tobytes()


# ----------------------------------------- complex sums in NumPy's order

from hypothesis import given, settings, strategies as st  # noqa: E402

from budget import examples  # noqa: E402
from test_numpy_summation_order import _SETTINGS, _check, layouts  # noqa: E402


@settings(max_examples=examples(40), **_SETTINGS)
@given(layouts(), st.sampled_from([np.complex64, np.complex128]),
       st.sampled_from(["sum", "mean"]), st.booleans(), st.integers(0, 2**32 - 1))
def test_complex_sums_and_means_have_numpys_bits(case, dt, name, keepdims, seed):
    # NumPy's complex pairwise sum in the dtype (four accumulators per part,
    # blocks of 64 elements) down a reduced innermost axis, element by
    # element down a kept one; a mean divides as a complex number.  hop
    # added the parts one by one in double
    a, axis = case
    rng = np.random.default_rng(seed)
    im = rng.standard_normal(a.shape) * 10.0 ** rng.integers(-3, 4, size=a.shape)
    c = (a.astype(np.float64) + 1j * im).astype(dt)
    if a.ndim > 1 and not a.flags.c_contiguous:
        c = np.asfortranarray(c) if rng.integers(2) else c[..., ::-1]
    fn = getattr(np, name)
    _check(lambda x: fn(x, axis=axis, keepdims=keepdims), c)


@pytest.mark.parametrize("n", [3, 4, 5, 20, 64, 65, 200, 9000])
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_sums_of_lengths_around_numpys_blocks(n, dt):
    rng = np.random.default_rng(n)
    v = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, size=n) +
         1j * rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, size=n)).astype(dt)
    for f in (np.sum, np.mean):
        _check(f, v)
        _check(lambda x: f(x.reshape(1, -1), axis=1), v)
        _check(lambda x: f(np.stack([x, x[::-1]], axis=1), axis=0), v)


def test_fp_note_puts_flags_back_and_checks_them():
    from hop import _C
    _C._fp_clear()
    _C._fp_note(2 | 8)
    assert _C._fp_status() == 2 | 8
    _C._fp_clear()
    with pytest.raises(ValueError, match=r"_fp_note: flags must be hop_fp_status's bits \(0..15\), got 16"):
        _C._fp_note(16)
    assert _C._fp_status() == 0
