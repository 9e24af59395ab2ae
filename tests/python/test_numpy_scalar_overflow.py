"""NumPy scalars' integer overflow in compiled code (the first rule: the
same effects as eager NumPy 1.24).  NumPy's scalar math warns when an
integer result wraps -- `np.int64(2**62) * 4`: "overflow encountered in
scalar multiply" -- where a ufunc on arrays (and np.multiply of scalars)
wraps silently.  A compiled function's NumPy scalars are traced values, and
hop's integer kernels raise no flag, so such a plan checks each scalar
operator's result at run time (fail_if of kind NUMPY_SCALAR_OVERFLOW) and a
call whose scalar math wraps runs by NumPy, which warns.  Each function
here runs by NumPy and by hop.compile, over values that wrap and values
that do not; the results (type, dtype, value) and the warnings (category,
text, count, order) agree, and a call that wraps nothing stays on the plan.
docs/ARCHITECTURE.md, "NumPy scalars"."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import hop
import hop._compile as _compile

from budget import examples
from test_numpy_operand_campaign import differ

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]

# (source of the body over scalars a and b, NumPy scalars taken out of the
# arguments' arrays: a traced value in the compiled function)
BODIES = [
    "a + b", "a - b", "a * b", "a // b", "-a", "abs(a)", "divmod(a, b)[0]",
    "a * 3", "3 * a", "a - 1", "1 - a", "a + True", "a * np.int64(-1)", "np.int64(4) * a",
    "a % b", "a ** 2", "a << 3",                       # wrap silently in NumPy too
    "np.add(a, b)", "np.multiply(a, b)", "np.negative(a)",  # ufuncs: no scalar math
    "x = a\nx += b\nx *= 2\nreturn x", "a * b + a * 2 - b",
]


def _function(body):
    src = body if "return" in body else f"return {body}"
    code = "def f(x, y):\n    a, b = x[0], y[0]\n" + \
        "".join(f"    {line}\n" for line in src.splitlines())
    env = {"np": np}
    exec(code, env)
    return env["f"]


def _run(fn, *args):
    """fn(*args): (result or exception type, [(category, text)])."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(*args)
        except Exception as e:  # noqa: BLE001 (compared by type)
            r = type(e)
    return r, [(x.category, str(x.message)) for x in w]


def _values(dt):
    info = np.iinfo(dt)
    return sorted({info.min, info.min + 1, -1 if info.min else 0, 0, 1, 2, 3,
                   info.max // 2 + 1, info.max - 1, info.max} - {None})


class _PlanFailures:
    """Counts the plan runs that raised (a failed check sends the call to
    eager)."""

    def __init__(self, monkeypatch):
        self.n = 0
        real = _compile._plan_run

        def counted(call, *args):
            try:
                return real(call, *args)
            except _compile._PlanRaised:
                self.n += 1
                raise
        monkeypatch.setattr(_compile, "_plan_run", counted)


def _agree(fn, cf, x, y, where):
    want, w_np = _run(fn, x, y)
    got, w_hop = _run(cf, x, y)
    if isinstance(want, type):
        assert got is want, where
    else:
        assert differ(got, want) is None, (where, got, want)
    assert w_hop == w_np, where
    return bool(w_np)


@pytest.mark.parametrize("dt", INTS)
@pytest.mark.parametrize("body", BODIES)
def test_scalar_integer_overflow_warns_as_numpy_compiled(body, dt, monkeypatch):
    fn = _function(body)
    cf = hop.compile(fn)
    fails = _PlanFailures(monkeypatch)
    quiet = 0
    vals = _values(dt)
    for i, va in enumerate(vals):
        for vb in vals[i % 3::3]:
            x, y = np.array([va, 5], dt), np.array([vb, 7], dt)
            before = fails.n
            warned = _agree(fn, cf, x, y, (body, dt, va, vb))
            if not warned:
                quiet += 1
                assert fails.n == before, ("a call that wraps nothing left the plan",
                                           body, dt, va, vb)
    assert quiet > 0 and cf.recompiles <= 1


def test_the_plan_checks_scalar_math_and_not_ufuncs_or_arrays():
    def scalars(x):
        return x[0] * x[1]

    def ufunc(x):
        return np.multiply(x[0], x[1])

    def arrays(x):
        return x * 3

    x = np.array([2, 3])
    cf = hop.compile(scalars)
    cf(x)
    assert "fail_if(" in cf.graphs[0].code and ", 8)" in cf.graphs[0].code
    for fn in (ufunc, arrays):
        cf = hop.compile(fn)
        cf(x)
        assert "fail_if(" not in cf.graphs[0].code


def test_a_float_result_and_a_shift_have_no_check():
    def f(x):
        return x[0] * 2.5 + float(x[1] << 2)

    cf = hop.compile(f)
    assert cf(np.array([3, 4])) == f(np.array([3, 4]))
    assert "fail_if(" not in cf.graphs[0].code


@pytest.mark.parametrize("mode", ["raise", "ignore", "warn"])
def test_caller_errstate_decides_what_the_overflow_does(mode):
    def f(x):
        return x[0] * np.int64(4)

    cf = hop.compile(f)
    x = np.array([2**62, 1])
    with np.errstate(over=mode):
        want, w_np = _run(f, x)
        got, w_hop = _run(cf, x)
    assert (got is want) if isinstance(want, type) else differ(got, want) is None
    assert w_hop == w_np
    assert (want is FloatingPointError) == (mode == "raise")


def test_trace_raises_check_error_where_scalar_math_wraps():
    gm = hop.trace(lambda x: x[0] - x[1], np.array([1, 2], np.uint8))
    assert int(np.asarray(gm(np.array([5, 2], np.uint8)))) == 3
    with pytest.raises(hop.CheckError) as e:
        gm(np.array([2, 5], np.uint8))
    assert "a NumPy scalar's integer arithmetic overflowed" in str(e.value)
    assert "NUMPY_SCALAR_OVERFLOW" in str(e.value)
    assert hop._C._trace_depth() == 0


def test_eager_hop_numpy_scalar_augmented_assignment_warns_as_numpy():
    import hop.numpy as hnp
    for make in (np, hnp):
        s = make.array([2**62, 0]).sum()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s *= 4
        assert int(s) == 0
        assert [str(x.message) for x in w] == ["overflow encountered in scalar multiply"], make


_OPS = ["+", "-", "*", "//"]


@st.composite
def _programs(draw):
    dt = draw(st.sampled_from(INTS))
    info = np.iinfo(dt)
    edge = st.sampled_from([info.min, info.max, 0, 1, -1 if info.min else 2, info.max // 2 + 1])
    vals = st.one_of(edge, st.integers(int(info.min), int(info.max)))
    n = draw(st.integers(1, 4))
    lines, names = [], ["a", "b"]
    for i in range(n):
        op = draw(st.sampled_from(_OPS))
        lhs, rhs = draw(st.sampled_from(names)), draw(st.sampled_from(names + ["2", "-1"]))
        if draw(st.booleans()):
            lines.append(f"t{i} = -{lhs} if {lhs} != {info.min} else {lhs}")
        else:
            lines.append(f"t{i} = {lhs} {op} {rhs}")
        names.append(f"t{i}")
    lines.append(f"return {names[-1]}")
    return dt, "\n".join(lines), [(draw(vals), draw(vals)) for _ in range(3)]


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_programs())
def test_drawn_scalar_programs_agree_with_numpy_in_values_and_warnings(prog):
    dt, body, calls = prog
    fn = _function(body)
    cf = hop.compile(fn)
    for va, vb in calls:
        x, y = np.array([va, 1], dt), np.array([vb, 1], dt)
        _agree(fn, cf, x, y, (body, dt, va, vb))


@pytest.mark.parametrize("dt, big", [(np.uint8, 255), (np.float64, 1e308)])
def test_a_data_dependent_branch_warns_once_on_its_first_call(dt, big):
    # hop.compile's first call of such a function runs it eagerly to record
    # the path, then runs the plan: the warning is the plan's (or its eager
    # fallback's) only (it was given twice, the recording run's too)
    def f(x, y):
        b = y[0]
        return -b * big if b != 0 else b

    cf = hop.compile(f)
    for v in (255, 0, 3):
        x, y = np.array([1], dt), np.array([v], dt)
        want, w_np = _run(f, x, y)
        got, w_hop = _run(cf, x, y)
        assert differ(got, want) is None and w_hop == w_np and len(w_np) == (v != 0), v
