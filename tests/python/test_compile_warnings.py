"""hop.compile replays warnings.warn() as a side effect (issue #28): each
call gives the warning eager gives -- category, text, file and line, in
program order with the function's other effects, under the filters and
registry in force at that call -- with no recompile and no eager call."""

import sys
import warnings

import numpy as np
import pytest

import hop

LOG = []


def _given(fn, *args):
    """(result or the exception's type and text, the warnings given as
    (category, text, file name, line), LOG's entries) of one call."""
    del LOG[:]
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
        except Exception as e:  # noqa: BLE001 (the error is the answer)
            out = (type(e), str(e))
    out = out.tolist() if isinstance(out, (np.ndarray, hop.Tensor)) else out
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in got
                 if not str(w.message).startswith("hop.compile: ")], list(LOG)


def _same(fn, *args, calls=3):
    cf = hop.compile(fn)
    for _ in range(calls):
        assert _given(cf, *args) == _given(fn, *args)
    assert cf.eager_calls == 0 and cf.recompiles == 0
    return cf


def plain(x):
    warnings.warn("plain")
    return x * 2


def with_category(x):
    y = x + 1
    warnings.warn("deprecated here", DeprecationWarning)
    return y.sum()


def keyword_form(x):
    warnings.warn(category=RuntimeWarning, message="by keyword", stacklevel=1)
    return x - 1


def instance(x):
    warnings.warn(FutureWarning("an instance", 3))
    return x


def helper(msg):
    warnings.warn(msg, UserWarning, stacklevel=2)  # names helper's caller


def through_helper(x):
    helper("from a helper")
    LOG.append(1)
    helper("again")
    return x * 3


def in_order(x):
    LOG.append("a")
    warnings.warn("first")
    print("middle")
    LOG.append("b")
    warnings.warn("second", RuntimeWarning)
    return x


def in_a_loop(x):
    for i in range(3):
        x = x + i
        warnings.warn("loop")
    return x


@pytest.mark.parametrize("fn", [plain, with_category, keyword_form, instance, through_helper,
                                in_order, in_a_loop], ids=lambda f: f.__name__)
def test_each_call_warns_as_eager(fn, capsys):
    cf = _same(fn, np.arange(4.0))
    assert "warnings.warn() at test_compile_warnings.py:" in cf.explain()
    capsys.readouterr()


def test_a_hop_tensor_argument():
    _same(plain, hop.ones(3))


def test_explain_lists_the_warning():
    cf = hop.compile(with_category)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf(np.ones(2))
    text = cf.explain()
    line = with_category.__code__.co_firstlineno + 2
    assert f"  warnings.warn() at test_compile_warnings.py:{line}\n" in text
    assert "side effects replayed after each call (1):" in text


def test_an_error_filter_raises_where_eager_does():
    def f(x):
        LOG.append("before")
        warnings.warn("stop", UserWarning)
        LOG.append("after")
        return x

    cf = hop.compile(f)
    for fn in (f, cf, cf):
        del LOG[:]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(UserWarning, match="^stop$"):
                fn(np.ones(2))
        assert LOG == ["before"]
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert cf(np.ones(2)).tolist() == [1.0, 1.0]
    assert [str(w.message) for w in got] == ["stop"]
    assert cf.eager_calls == 0


def _registry_runs(fn, action, calls):
    """The messages each of calls calls gives under one filter action, the
    module's registry cleared first (as a fresh process has it)."""
    sys.modules[__name__].__dict__.pop("__warningregistry__", None)
    out = []
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter(action)
        for _ in range(calls):
            fn(np.ones(2))
            out.append(len(got))
    return out


@pytest.mark.parametrize("action", ["default", "module", "once", "ignore"])
def test_the_registry_decides_as_for_eager(action):
    def f(x):
        warnings.warn("registered")
        return x

    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf(np.ones(2))
    expected = [0, 0, 0] if action == "ignore" else [1, 1, 1]
    assert _registry_runs(cf, action, 3) == _registry_runs(f, action, 3) == expected
    assert cf.eager_calls == 0


def test_a_warning_after_a_graph_break():
    def f(x):
        warnings.warn("before the break")
        s = float(x.sum())  # a break: the plan ends, float() runs in Python
        warnings.warn(f"after, {s}")
        return x * s

    _same(f, np.arange(3.0))


def test_a_lifted_counter_and_a_warning():
    n = 0

    def f(x):
        nonlocal n
        n += 1
        warnings.warn("counted")
        return x * n

    cf = hop.compile(f)
    got = [_given(cf, np.ones(2)) for _ in range(3)]
    assert [g[0] for g in got] == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    assert all(len(g[1]) == 1 for g in got)
    assert cf.recompiles == 0 and cf.eager_calls == 0


def test_a_warning_of_a_traced_value_runs_in_python():
    def f(x):
        y = x * 2
        warnings.warn(str(y.sum()))
        return y

    cf = _same(f, np.arange(3.0))
    assert "warnings.warn()" not in cf.explain().split("side effects")[-1]


@pytest.mark.parametrize("call", [
    lambda: warnings.warn("x", int),                     # not a Warning class
    lambda: warnings.warn("x", UserWarning, 1, "src"),   # source=
    lambda: warnings.warn(),                             # no message
], ids=["category", "source", "missing"])
def test_what_it_does_not_replay_runs_eagerly(call):
    def f(x):
        call()
        return x

    cf = hop.compile(f)
    for _ in range(2):
        assert _given(cf, np.ones(2)) == _given(f, np.ones(2))
    assert cf.eager_calls == 2
    assert "calls warnings.warn()" in cf.explain()


def _call_here(fn):
    """fn(np.ones(2)) from this line: (where its warnings were given, the
    line of the call)."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fn(np.ones(2))
    return [(w.filename, w.lineno) for w in got], sys._getframe().f_lineno - 1


def _plain_call(fn):
    fn(np.ones(2))


def test_a_stacklevel_past_the_function_names_each_calls_caller():
    def f(x):
        warnings.warn("the caller's line", stacklevel=2)
        return x

    def g(x):
        warnings.warn("two out", stacklevel=3)
        return x

    cf, cg = hop.compile(f), hop.compile(g)
    for fn in (f, cf, cf):
        given, line = _call_here(fn)
        assert given == [(__file__, line)]
    for fn in (g, cg, cg):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            _plain_call(fn)
        assert [(w.filename, w.lineno) for w in got] == [(__file__, sys._getframe().f_lineno - 1)]
    assert cf.eager_calls == 0 and cg.eager_calls == 0


def test_fullgraph_still_compiles_it():
    cf = hop.compile(plain, fullgraph=True)
    assert _given(cf, np.ones(2)) == _given(plain, np.ones(2))


# ------------------------------------------------ hop.numpy's own warnings

def astype_complex(a):
    return a.astype(np.float64) * 2


def compared_with_str(a):
    b = a + 1
    return b, b == "text"


def bool_plus(a):
    m = a > 1
    return (+m).sum()


def rfft_complex(a):
    return np.fft.rfft(a * 1j + a)


@pytest.mark.parametrize("fn,arg", [
    (astype_complex, np.array([1 + 2j, 3 + 0j])),
    (compared_with_str, np.arange(3.0)),
    (bool_plus, np.arange(4.0)),
    (rfft_complex, np.arange(4.0)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_numpys_warnings_of_a_call_are_given_on_every_call(fn, arg):
    def norm(got):
        out, warned, log = got
        if isinstance(out, tuple):
            out = tuple(o.tolist() if isinstance(o, np.ndarray) else o for o in out)
        return out, warned, log

    cf = hop.compile(fn)
    for _ in range(3):
        assert norm(_given(cf, arg)) == norm(_given(fn, arg))
    assert cf.eager_calls == 0 and cf.recompiles == 0
    assert "hop.numpy's" in cf.explain()


def test_hop_trace_still_traces_a_call_numpy_warns_for():
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        gm = hop.trace(astype_complex, np.array([1 + 2j]))
    assert [w.category for w in got] == [np.ComplexWarning]
    assert gm(np.array([3 - 1j])).tolist() == [6.0]


# ----------------------------------- the Python run of a break (concrete)

def after_a_break(x):
    s = float(x.sum())      # a break: the rest runs in Python (NumPy's values)
    y = np.log(x - 1)       # divide by zero, invalid: NumPy's warnings, from C
    z = np.float64(s) / 0.0  # scalar math's
    w = -np.int8(-128)       # (overflow in a unary operator)
    return y, z, w


def test_warnings_after_a_break_name_the_users_lines():
    cf = hop.compile(after_a_break)
    x = np.arange(3.0)
    _given(cf, x)  # (the first call translates)
    for _ in range(2):
        got, want = _given(cf, x), _given(after_a_break, x)
        assert got[1] == want[1]
        assert [w[2] for w in got[1]] == [__file__] * 4


def rfft_first_axis(a):
    return np.fft.rfft(a * 1j, axis=0)


def test_rfft_warns_at_numpys_line_for_either_axis():
    m = np.ones((4, 3))
    cf = hop.compile(rfft_first_axis)
    for _ in range(2):
        got, want = _given(cf, m), _given(rfft_first_axis, m)
        assert got[1] == want[1] and want[1][0][2].endswith("_pocketfft.py")
    import hop.numpy as hnp
    for a, axis in ((m, 0), (m, -1)):
        with warnings.catch_warnings(record=True) as mine:
            warnings.simplefilter("always")
            hnp.fft.rfft(hnp.asarray(a * 1j), axis=axis)
        with warnings.catch_warnings(record=True) as numpys:
            warnings.simplefilter("always")
            np.fft.rfft(a * 1j, axis=axis)
        assert [(w.category, str(w.message), w.filename, w.lineno) for w in mine] == \
            [(w.category, str(w.message), w.filename, w.lineno) for w in numpys]


# ------------------- NumPy's floating-point warnings of constants (static)

def log_of_a_constant(x):
    c = np.log(np.float64(0.0))      # divide by zero, on every eager call
    return x + c


def scalar_overflow(x):
    c = np.float64(1e308) * 10       # scalar math's overflow
    return x * 0 + c


def with_an_effect(x):
    LOG.append(len(LOG))
    c = np.log(np.float64(0.0))
    return x + c


def quiet_constant(x):
    with np.errstate(divide="ignore"):
        c = np.log(np.float64(0.0))  # (the function's own errstate: nothing to say)
    return x + c


@pytest.mark.parametrize("fn", [log_of_a_constant, scalar_overflow, with_an_effect,
                                quiet_constant], ids=lambda f: f.__name__)
def test_numpys_warnings_of_constants_are_given_on_every_call(fn):
    cf = hop.compile(fn)
    for _ in range(3):
        assert _given(cf, np.ones(2)) == _given(fn, np.ones(2))
    assert cf.eager_calls == 0 and cf.recompiles == 0


def test_a_constants_flags_follow_the_callers_error_state():
    cf = hop.compile(log_of_a_constant)
    _given(cf, np.ones(2))
    assert cf.graphs[0].plan.fp_static == 1  # HOP_FP_DIVIDE
    for state in ("ignore", "warn", "raise"):
        with np.errstate(divide=state):
            assert _given(cf, np.ones(2)) == _given(log_of_a_constant, np.ones(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="divide by zero encountered in log"):
            cf(np.ones(2))


def test_no_flags_for_a_plain_function():
    cf = hop.compile(lambda x: np.sqrt(x) + 1)
    cf(np.ones(2))
    assert [g.plan.fp_static for g in cf.graphs] == [0]


def test_plan_fp_static_is_checked():
    gm = hop.trace(lambda x: x + 1, hop.ones(2))
    with pytest.raises(ValueError, match=r"fp_static must be hop_fp_status's bits \(0..15\)"):
        gm.plan.fp_static = 16
    with pytest.raises(ValueError, match="not deleted"):
        del gm.plan.fp_static
    assert gm.plan.fp_static == 0


def truth_of(x):
    if x:
        LOG.append("yes")
        return 1
    return 0


def test_the_truth_of_an_empty_array_warns_at_the_users_line():
    # (a break at `if x:`; the Python part tests it at the user's line, so
    # NumPy's DeprecationWarning names it, as eagerly)
    cf = hop.compile(truth_of)
    for x in (np.array([1.0]), np.array([0.0]), np.array([]), np.array([])):
        assert _given(cf, x) == _given(truth_of, x)
    with pytest.raises(ValueError, match="truth value of an array with more than one element"):
        cf(np.ones(2))
