"""NumPy's floating-point RuntimeWarnings (the first rule: the same effects
as eager NumPy 1.24): under NumPy's default error state (divide, over and
invalid 'warn', under 'ignore') `np.array([1.0]) / 0` warns "divide by
zero encountered in divide".  Each function runs by NumPy, eagerly on
hop.numpy arrays, and by hop.compile (its first call, and its steady calls
through the plan); the warnings recorded -- category, text, count and order
-- and the results agree, under the default state, under numpy.errstate
around the call, and under warnings.simplefilter('error') (the same
exception and message).  docs/ARCHITECTURE.md, "Floating-point warnings"."""

import io
import sys
import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp

from test_numpy_operand_campaign import differ

I64_MIN = -2**63

# (name, function, arguments): NumPy arrays and scalars
CASES = [
    ("divide", lambda a, b: a / b, (np.array([1.0, -1.0, 2.0]), np.array([0.0, 0.0, 1.0]))),
    ("invalid_divide", lambda a: a / 0, (np.array([0.0, 1.0]),)),
    ("invalid_sqrt", lambda a: np.sqrt(a), (np.array([-1.0, 4.0]),)),
    ("log_divide_then_invalid", lambda a: np.log(a), (np.array([0.0, -1.0, 1.0]),)),
    ("overflow_multiply", lambda a: a * 1e300, (np.array([1e300, 1.0]),)),
    ("overflow_exp", lambda a: np.exp(a), (np.array([1000.0, 0.0]),)),
    ("overflow_then_divide", lambda a, b: (a * a) + (b / 0), (np.array([1e300]), np.array([1.0]))),
    ("sin_of_inf", lambda a: np.sin(a), (np.array([np.inf, 0.0]),)),
    ("pow_of_zero", lambda a: a ** -2.0, (np.array([2.0, 0.0, 3.0, 1.0, 5.0]),)),
    ("f32_pow_of_zero", lambda a: np.power(a, np.float32(-3)),
     (np.array([0.0, 2.0], np.float32),)),
    ("float_floor_divide", lambda a: a // 0, (np.array([1.0, 2.0]),)),
    ("int_floor_divide_by_zero", lambda a, b: a // b, (np.array([1, 7]), np.array([0, 2]))),
    ("int_remainder_by_zero", lambda a, b: a % b, (np.array([1, 7]), np.array([0, 2]))),
    ("int_min_floor_divide", lambda a, b: a // b, (np.array([I64_MIN, 6]), np.array([-1, 3]))),
    ("int_min_remainder", lambda a, b: a % b, (np.array([I64_MIN, 6]), np.array([-1, 4]))),
    ("int_array_overflow", lambda a: a * 4, (np.array([2**62, 1]),)),
    ("f32_overflow", lambda a: a * np.float32(1e10), (np.array([1e30], np.float32),)),
    ("nothing_raises", lambda a, b: np.sqrt(a) / b + 1, (np.array([4.0, 9.0]), np.array([2.0, 3.0]))),
    ("two_ops_same_kind", lambda a: (a / 0, a / 0), (np.array([1.0]),)),
    # NumPy's nc_pow raises FE_INVALID for a complex 0 to a power that is not
    # a positive real (hop's nan was silent: hunt29 bug16)
    ("complex_zero_pow", lambda a: 0 ** a, (np.array([0j, -3 + 0j, 5 + 0j]),)),
    ("complex_zero_pow_complex", lambda a, b: a ** b,
     (np.array([0j, 0j, 2 + 0j], np.complex64), np.array([1j, 2 + 0j, 1j], np.complex64))),
    ("int_pow_imaginary", lambda a: a ** 2j, (np.array([0, -3, 5], np.int8),)),
    ("complex_pow_nothing_raises", lambda a: a ** (1 + 1j), (np.array([1j, 2 + 0j]),)),
    # NumPy's npy_logaddexp compares a - b with 0, which raises FE_INVALID
    # for a NaN operand (hop's composition was silent: hunt29 bug16)
    ("logaddexp_of_nan", lambda a: np.logaddexp(a, np.nan), (np.array([0.5, -3.0, 5.0]),)),
    ("logaddexp_nan_operand", lambda a, b: np.logaddexp(a, b),
     (np.array([np.nan, 1.0, np.inf], np.float32), np.array([1.0, 2.0, np.inf], np.float32))),
    ("logaddexp2_of_nan", lambda a, b: np.logaddexp2(a, b),
     (np.array([np.nan, 1.0]), np.array([np.nan, -np.inf]))),
    ("logaddexp_infinities_raise_nothing", lambda a, b: np.logaddexp(a, b),
     (np.array([np.inf, -np.inf, np.inf]), np.array([np.inf, -np.inf, -np.inf]))),
]
# (name, function, arguments, errstate): underflow warns only when asked
UNDER = [("underflow", lambda a: a * 1e-300, (np.array([1e-300]),))]


def _hnp(args):
    return tuple(hnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)


def _as_numpy(r):
    if isinstance(r, tuple):
        return tuple(_as_numpy(x) for x in r)
    return np.asarray(r) if isinstance(r, hnp.ndarray) else r


def _recorded(fn, args):
    """fn(*args)'s result (as NumPy's) and its warnings: (category, text)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn(*args)
    return _as_numpy(r), [(x.category, str(x.message)) for x in w]


def _raised(fn, args):
    """What fn(*args) raises under simplefilter('error'): (type, text)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            return type(e), str(e)
    return None


def _printed(call):
    """call()'s result and what it printed to sys.stdout."""
    out = io.StringIO()
    old, sys.stdout = sys.stdout, out
    try:
        return call(), out.getvalue()
    finally:
        sys.stdout = old


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert type(got) is type(want) and differ(got, want) is None, (got, want)


def _all_ways(fn, args, state):
    """NumPy's (result, warnings), then each other way's: hop.numpy eagerly,
    a compiled function's first call and its next two (the plan)."""
    c = hop.compile(fn)
    with np.errstate(**state):
        want = _recorded(fn, args)
        ways = [("hop.numpy", _recorded(fn, _hnp(args)))]
        for k in range(3):
            ways.append((f"compiled call {k}", _recorded(c, args)))
    return want, ways, c


@pytest.mark.parametrize("fn,args", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("state", [{}, {"all": "ignore"}, {"divide": "ignore"},
                                   {"over": "ignore", "invalid": "warn"}],
                         ids=["default", "all_ignore", "divide_ignore", "over_ignore"])
def test_warnings_are_numpys_eager_and_compiled(fn, args, state):
    # (was: no warning from hop.numpy nor from a compiled call, where NumPy
    # warned)
    want, ways, c = _all_ways(fn, args, state)
    for way, got in ways:
        _same(got[0], want[0])
        assert got[1] == want[1], (way, got[1], want[1])
    # a warned call ran through NumPy: the plan stays and serves the others
    assert len(c.graphs) == 1 and c.recompiles == 0 and c.eager_calls == 0


@pytest.mark.parametrize("fn,args", [c[1:] for c in UNDER], ids=[c[0] for c in UNDER])
@pytest.mark.parametrize("state", [{}, {"under": "warn"}], ids=["default", "under_warn"])
def test_underflow_warns_only_when_numpys_state_says_so(fn, args, state):
    want, ways, _ = _all_ways(fn, args, state)
    assert want[1] == ([] if not state else
                       [(RuntimeWarning, "underflow encountered in multiply")])
    for way, got in ways:
        _same(got[0], want[0])
        assert got[1] == want[1], (way, got[1], want[1])


@pytest.mark.parametrize("fn,args", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_simplefilter_error_raises_numpys_runtime_warning(fn, args):
    want = _raised(fn, args)
    c = hop.compile(fn)
    assert _raised(lambda *a: fn(*_hnp(a)), args) == want
    for _ in range(3):  # the first call and the plan's
        assert _raised(c, args) == want
    if want is None:  # (nothing raised: the plan answered)
        assert c(*args) is not None


@pytest.mark.parametrize("src,count", [
    ("np.float64(1.0) / 0", 1), ("np.int64(1) // 0", 1), ("np.int64(2**62) * 4", 1),
    ("np.int8(100) * np.int8(2)", 1), ("-np.int64(-2**63)", 1), ("np.int64(5) % 0", 1),
    ("np.float32(1e38) * np.float32(10)", 1), ("np.int64(3) * 4", 0)])
def test_numpy_scalar_math_warns_as_numpys(src, count):
    # NumPy's scalar math warns "... in scalar multiply", and for an integer
    # overflow too (an array's integer overflow does not)
    def run(mod):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = eval(src, {"np": mod})  # noqa: S307
        return _as_numpy(r), [(x.category, str(x.message)) for x in w]
    want = run(np)
    got = run(hnp)
    assert len(want[1]) == count and got[1] == want[1]
    _same(np.asarray(got[0])[()], np.asarray(want[0])[()])


def test_divmod_and_astype_warn_as_numpys():
    for fn, args in [(lambda a: np.divmod(a, 0), (np.array([1, 2]),)),
                     (lambda a: np.divmod(a, 0.0), (np.array([1.0]),)),
                     (lambda a: a.astype(np.int64), (np.array([np.nan, 1.0]),)),
                     (lambda a: a.astype(np.float32), (np.array([1e300]),))]:
        want, ways, _ = _all_ways(fn, args, {})
        assert want[1], want
        for way, got in ways:
            _same(got[0], want[0])
            assert got[1] == want[1], (way, got[1], want[1])


def test_where_masked_lanes_warn_for_nothing():
    # np.divide(..., where=): a masked lane is not computed by NumPy (hop
    # computes it and selects: its flag costs a run by NumPy, never a warning)
    fn = lambda a, m: np.divide(1.0, a, where=m, out=np.zeros(2))  # noqa: E731
    args = (np.array([0.0, 2.0]), np.array([False, True]))
    want, ways, _ = _all_ways(fn, args, {})
    assert want[1] == []
    for way, got in ways:
        _same(got[0], want[0])
        assert got[1] == [], way


def test_a_warned_call_keeps_its_python_effects_once_and_in_order():
    # the plan's flags are read before anything of the call is applied
    # (print, a global): NumPy's run of the call prints and warns once
    log = []

    def fn(a):
        print("before")
        log.append(1)
        return a / 0

    c = hop.compile(fn)
    x = np.array([1.0])
    for _ in range(3):
        got, printed = _printed(lambda: _recorded(c, (x,)))
        assert printed == "before\n"
        assert got[1] == [(RuntimeWarning, "divide by zero encountered in divide")]
        _same(got[0], np.array([np.inf]))
    assert log == [1, 1, 1]
    with warnings.catch_warnings():  # the warning as an error: raised after the print
        warnings.simplefilter("error")
        raised, printed = _printed(lambda: _raised(c, (x,)))
        assert raised == (RuntimeWarning, "divide by zero encountered in divide")
        assert printed == "before\n" and log == [1, 1, 1, 1]


def test_a_warning_after_a_graph_break_runs_the_rest_by_numpy_once():
    # the part before the break ran (and printed); the resume function's
    # plan raised the flag: the rest runs by NumPy, from the break on
    def fn(a):
        s = float(a.sum())  # a graph break
        print("at", s)
        return a / (s - s)

    c = hop.compile(fn)
    x = np.array([1.0, 2.0])
    for _ in range(3):
        got, printed = _printed(lambda: _recorded(c, (x,)))
        assert printed == "at 3.0\n"
        assert got[1] == [(RuntimeWarning, "divide by zero encountered in divide")]
        _same(got[0], np.array([np.inf, np.inf]))


def test_errstate_inside_a_compiled_function_is_numpys():
    # the plan computes as if no errstate were entered: a function that sets
    # NumPy's state itself takes any flag as a reason for NumPy's run
    def quiet(a):
        with np.errstate(divide="ignore"):
            return a / 0

    def loud(a):
        with np.errstate(divide="warn"):
            return a / 0

    x = np.array([1.0])
    for fn, state, want in [(quiet, {}, []), (loud, {"all": "ignore"},
                            [(RuntimeWarning, "divide by zero encountered in divide")])]:
        got, ways, c = _all_ways(fn, (x,), state)
        assert got[1] == want
        for way, g in ways:
            assert g[1] == want, (fn.__name__, way, g[1])
        assert c._eager_why is None and len(c.graphs) == 1


def test_big_arrays_warn_once_whichever_thread_raised():
    # a kernel split over the pool: the worker's flags reach the caller
    x = np.ones(1 << 21)
    x[-1] = 0.0
    fn = lambda a: 1.0 / a  # noqa: E731
    want, ways, _ = _all_ways(fn, (x,), {})
    assert want[1] == [(RuntimeWarning, "divide by zero encountered in divide")]
    for way, got in ways:
        assert got[1] == want[1], way


def test_hop_tensor_calls_do_not_read_numpys_state():
    # hop.Tensor's own operations are not NumPy's: no warning, eager or compiled
    c = hop.compile(lambda t: t / 0)
    for call in (lambda t: t / 0, c, c):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert call(hop.ones(2)).tolist() == [float("inf")] * 2
        assert w == []


def test_an_eager_ufunc_that_warns_keeps_numpys_layout():
    # (the call NumPy computes because it warns: its result came back
    # C-ordered, where NumPy's of a transposed array is F-ordered; found by
    # test_compile_view_campaign's random programs)
    a = np.array([[1.0, -1.0, 2.0], [3.0, 4.0, -5.0]])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        want = np.sqrt(a.T)
        got = np.asarray(np.sqrt(hnp.asarray(a).T))
    assert got.strides == want.strides == (8, 24)
    assert np.array_equal(got, want, equal_nan=True)
    assert [str(w.message) for w in seen] == ["invalid value encountered in sqrt"] * 2
