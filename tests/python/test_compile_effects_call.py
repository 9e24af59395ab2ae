"""The C call of a translated plan (_C._EffectsCall, issue 30's print_mid):
a compiled function with Python effects and no graph break runs its guards,
its plan, its result and its side-effect table's replay in C.  Each test
checks that the call took that path and that it did what eager does: the
same results, the same effects in the same order with each call's values,
the same errors, and guards that still see every change."""

import builtins
import contextlib
import io
import warnings

import numpy as np
import pytest

import hop


def same(got, want):
    got = np.asarray(got)
    want = np.asarray(want, np.float32) if isinstance(want, list) else np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    np.testing.assert_array_equal(got, want)


def c_path(cf):
    """Whether cf's calls take the C call of its translated plan."""
    return type(cf._fast) is hop._C._EffectsCall


def quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args)


def printed_both(f, cf, x):
    """f(x) eagerly and cf(x) compiled, each with its own stdout:
    (want, eager's text, got, compiled's text)."""
    eager, compiled = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(eager):
        want = f(x)
    with contextlib.redirect_stdout(compiled):
        got = quiet(cf, x)
    return want, eager.getvalue(), got, compiled.getvalue()


class Box:
    pass


def make(log, box, table):
    def f(x):
        y = x * 2.0
        print("sum", y.sum(), sep="=")
        log.append(y.sum())
        box.last = y[0]
        table["k"] = y + 1.0
        log.append((y.mean(), "tag"))
        return y - 1.0, None, "text"
    return f


def test_every_effect_kind_replays_in_order_with_each_calls_values_on_the_c_path():
    logs, boxes, tables, outs = [[], []], [Box(), Box()], [{}, {}], [io.StringIO(), io.StringIO()]
    eager = make(logs[0], boxes[0], tables[0])
    cf = hop.compile(make(logs[1], boxes[1], tables[1]))
    for i, v in enumerate([1.0, -3.0, 0.5, 7.0]):
        x = hop.tensor([v, v + 1.0, v - 2.0])
        with contextlib.redirect_stdout(outs[0]):
            want = eager(x)
        with contextlib.redirect_stdout(outs[1]):
            got = quiet(cf, x)
        if i == 0:
            assert c_path(cf), cf.explain()
        same(got[0], want[0])
        assert got[1:] == (None, "text")
    assert cf.eager_calls == 0 and cf.recompiles == 0
    assert outs[1].getvalue() == outs[0].getvalue()
    assert outs[0].getvalue().count("sum=hop.tensor(") == 4
    assert len(logs[1]) == len(logs[0]) == 8
    for a, b in zip(logs[1], logs[0]):
        if isinstance(b, tuple):
            assert type(a) is tuple and a[1] == b[1] == "tag"
            a, b = a[0], b[0]
        same(a, b)
    same(boxes[1].last, boxes[0].last)
    same(tables[1]["k"], tables[0]["k"])


def test_each_call_returns_fresh_result_tuples():
    log = []

    def f(x):
        log.append(x.sum())
        return (x + 1.0, x * 2.0)
    cf = hop.compile(f)
    x = hop.ones(3)
    a, b = cf(x), cf(x)
    assert c_path(cf)
    assert type(a) is tuple and a is not b and a[0] is not b[0]
    assert len(log) == 2


def test_a_nonlocal_tensor_and_a_global_dict_item_are_written_every_call():
    state = {}
    last = hop.zeros(2)

    def f(x):
        nonlocal last
        last = x * 3.0
        state["n"] = x.sum()
        return x * 1.0
    cf = hop.compile(f)
    for v in (1.0, 2.0, 5.0):
        cf(hop.full([2], v))
        same(last, [3 * v, 3 * v])
        same(state["n"], np.float32(2 * v))
    assert c_path(cf) and cf.eager_calls == 0


def test_an_error_after_the_plan_ran_is_raised_once_and_never_taken_for_a_guard_miss():
    log = []

    class Refusing:
        def __init__(self):
            self.calls = 0

        def write(self, text):
            self.calls += 1
            raise hop.GuardError("the file refuses")  # even hop's own error type

    out = Refusing()
    n = 0

    def f(x):
        log.append(x.sum())
        print(x.sum(), file=out)
        return x + 1.0

    def g(x):  # the same with a lifted int
        nonlocal n
        n += 1
        log.append(x.sum())
        print(x.sum(), file=out)
        return x + 1.0
    # print to the user's file is a graph break: the rest runs in Python and
    # a resume function, after the plan (Entry.run, not the C path)
    for fn in (f, g):
        cf = hop.compile(fn)
        log.clear()
        out.calls = 0
        for calls in (1, 2, 3):
            with pytest.raises(hop.GuardError, match="the file refuses"):
                cf(hop.ones(2))
            # one run of the plan, one replay: never retried as a guard's
            # miss, never traced again
            assert (len(log), out.calls) == (calls, calls)
        assert not c_path(cf) and cf.recompiles == 0 and cf.eager_calls == 0


def test_a_replayed_effect_that_raises_on_the_c_path_raises_once(monkeypatch):
    log, printed = [], []

    def refusing(*args, **kwargs):
        printed.append(args)
        raise hop.GuardError("print refuses")  # even hop's own error type

    def f(x):
        log.append(x.sum())
        print(x.sum())
        log.append(x.mean())
        return x + 1.0
    cf = hop.compile(f)
    with contextlib.redirect_stdout(io.StringIO()):
        cf(hop.ones(2))
    assert c_path(cf)
    monkeypatch.setattr(builtins, "print", refusing)
    for calls in (1, 2):
        with pytest.raises(hop.GuardError, match="print refuses"):
            cf(hop.ones(2))
        # the effects before it happened, the ones after it did not, and the
        # plan ran once: never retried as a guard's miss
        assert (len(log), len(printed)) == (2 + calls, calls)
    assert cf.recompiles == 0


def test_print_is_looked_up_at_every_call_as_eager_does(monkeypatch):
    seen = []

    def f(x):
        print(x.sum())
        return x * 1.0
    cf = hop.compile(f)
    with contextlib.redirect_stdout(io.StringIO()):
        cf(hop.ones(2))
    assert c_path(cf)
    monkeypatch.setattr(builtins, "print", lambda *a, **k: seen.append((a, k)))
    cf(hop.ones(2))
    assert len(seen) == 1 and seen[0][1] == {}
    same(seen[0][0][0], np.float32(2.0))


def test_a_changed_closure_value_still_fails_the_guard_and_retraces():
    log = []
    scale = 2.0

    def f(x):
        log.append(x.sum())
        return x * scale
    cf = hop.compile(f)
    same(cf(hop.ones(2)), [2.0, 2.0])
    assert c_path(cf)
    scale = 5.0
    same(cf(hop.ones(2)), [5.0, 5.0])
    assert cf.recompiles == 1 and len(log) == 2


def test_a_global_tensor_rebound_is_read_anew():
    log = []
    g = {"w": hop.ones(2)}

    def f(x):
        log.append(1)
        return x * w
    f = type(f)(f.__code__, dict(f.__globals__, w=g["w"]), "f", None, f.__closure__)
    cf = hop.compile(f)
    same(cf(hop.ones(2)), [1.0, 1.0])
    f.__globals__["w"] = hop.full([2], 3.0)
    same(cf(hop.ones(2)), [3.0, 3.0])
    assert len(log) == 2


def test_other_arguments_take_the_general_path_with_the_same_answer():
    log = []

    def f(x):
        log.append(x.sum())
        return x + 1.0
    cf = hop.compile(f)
    cf(hop.ones(3))
    assert c_path(cf)
    same(cf(np.ones(3, np.float32)), np.full(3, 2.0, np.float32))  # an ndarray: retraced
    same(cf(hop.ones(4)), [2.0] * 4)  # other sizes
    assert len(log) == 3


def test_the_bound_call_rejects_inconsistent_tables():
    cf = hop.compile(lambda x: x + 1)
    cf(hop.ones(2))
    r = cf._entries[-1].runner
    with pytest.raises(TypeError, match="inconsistent"):
        hop._C._EffectsCall(r.plan, r, 1, None, (None,), b"\x01", ((5,), ()), ())
    with pytest.raises(TypeError, match="effect 0"):
        hop._C._EffectsCall(r.plan, r, 1, None, (None,), b"\x01", (0, ((),)), ((9, None, None),))
    with pytest.raises(TypeError, match="outputs"):
        hop._C._EffectsCall(r.plan, r, 1, None, (None, None), b"\x01\x01", (0, ()), ())


W = hop.ones(2)
SCALE = [2.0]


def test_a_plan_with_environment_guards_takes_the_c_call_and_sees_every_change():
    global W
    cf = hop.compile(lambda x: x * W + SCALE[0])
    same(cf(hop.ones(2)), [3.0, 3.0])
    assert c_path(cf)  # no effect: the C call of the guards, the plan, the result
    same(cf(hop.ones(2)), [3.0, 3.0])
    W = hop.full([2], 4.0)  # a global rebound: the new tensor is read
    same(cf(hop.ones(2)), [6.0, 6.0])
    SCALE[0] = 10.0  # a list item changed: retraced (a value guard)
    same(cf(hop.ones(2)), [14.0, 14.0])
    assert cf.recompiles == 1
    same(cf(hop.ones(2), ), [14.0, 14.0])
    assert c_path(cf)
    W = hop.ones(2)
    SCALE[0] = 2.0


class _Writes:
    """A stdout that keeps each write() call (a print's str() of each value,
    the separators and the end arrive as separate calls)."""

    def __init__(self):
        self.calls = []

    def write(self, s):
        self.calls.append(s)
        return len(s)

    def flush(self):
        self.calls.append("<flush>")


def test_a_replayed_print_makes_eagers_write_calls_on_sys_stdout(monkeypatch):
    def f(x):
        s = x.sum()
        print(s, "and", 3, s * 2.0)
        return x + 1.0
    cf = hop.compile(f)
    with contextlib.redirect_stdout(io.StringIO()):
        cf(hop.ones(2))
    assert c_path(cf)
    for x in (hop.ones(2), hop.tensor([0.1, 2.5])):
        eager, compiled = _Writes(), _Writes()
        monkeypatch.setattr("sys.stdout", eager)
        f(x)
        monkeypatch.setattr("sys.stdout", compiled)
        quiet(cf, x)
        assert compiled.calls == eager.calls and len(eager.calls) == 8, compiled.calls
    # sys.stdout None: print writes nothing and the call still answers
    monkeypatch.setattr("sys.stdout", None)
    same(quiet(cf, hop.ones(2)), [2.0, 2.0])



class _LoggedWrite:
    """A stdout whose write is logged when looked up and when called."""

    def __init__(self, log):
        self.log = log

    def __getattribute__(self, name):
        if name == "write":
            object.__getattribute__(self, "log").append("lookup")
        return object.__getattribute__(self, name)

    def write(self, s):
        self.log.append(s)
        return len(s)


class _WriteInInstance:
    """A stdout whose write is an attribute of the instance, not a method."""

    def __init__(self, log):
        self.write = log.append


class _NoWrite:
    pass


def test_a_replayed_print_looks_up_write_before_each_write_as_eager_does(monkeypatch):
    # the replay finds write() without a bound method per call; each write
    # still looks it up first, as the builtin print does, wherever it is
    log = []

    def f(x):
        print(x.sum(), "and")
        return x + 1.0
    cf = hop.compile(f)
    with contextlib.redirect_stdout(io.StringIO()):
        cf(hop.ones(2))
    assert c_path(cf)
    for kind in (_LoggedWrite, _WriteInInstance):
        runs = []
        for fn in (f, cf):
            del log[:]
            monkeypatch.setattr("sys.stdout", kind(log))
            same(quiet(fn, hop.tensor([0.5, 2.0])), [1.5, 3.0])
            runs.append(list(log))
        assert runs[0] == runs[1], (kind, runs)
    assert runs[0] == ["hop.tensor(2.5)", " ", "and", "\n"]
    del log[:]
    monkeypatch.setattr("sys.stdout", _LoggedWrite(log))
    quiet(cf, hop.tensor([0.5, 2.0]))
    assert log == ["lookup", "hop.tensor(2.5)", "lookup", " ", "lookup", "and", "lookup", "\n"]
    # no write(): the same AttributeError, and the plan's result is not returned
    for fn in (f, cf):
        monkeypatch.setattr("sys.stdout", _NoWrite())
        with pytest.raises(AttributeError, match="'_NoWrite' object has no attribute 'write'"):
            quiet(fn, hop.ones(2))


def test_a_replayed_print_sees_print_stdout_and_write_changed_between_calls(monkeypatch):
    # the replay reads builtins.print and sys.stdout again only when their
    # dicts changed, and keeps io.TextIOWrapper's write while the file's
    # __dict__ is unchanged: every change between calls is still seen, in
    # the same writes eager makes
    def f(x):
        print(x.sum())
        return x + 1.0
    cf = hop.compile(f)
    with contextlib.redirect_stdout(io.StringIO()):
        cf(hop.ones(2))
    assert c_path(cf)

    def run(fn):
        files = [io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
                 for _ in range(2)]
        log, printed = [], []
        x = hop.tensor([0.5, 2.0])
        monkeypatch.setattr("sys.stdout", files[0])
        quiet(fn, x), quiet(fn, x)
        files[0].write = lambda s: log.append(s)  # on the instance: shadows the method
        quiet(fn, x)
        del files[0].write
        quiet(fn, hop.tensor([1.0, 2.0]))
        monkeypatch.setattr("sys.stdout", files[1])
        quiet(fn, x)
        files[0].tag = 1  # another attribute: the __dict__ moves, write is the type's
        monkeypatch.setattr("sys.stdout", files[0])
        quiet(fn, x)
        monkeypatch.setattr(builtins, "print", lambda *a, **k: printed.append(a))
        quiet(fn, x)
        monkeypatch.undo()
        monkeypatch.setattr("sys.stdout", files[1])
        quiet(fn, hop.tensor([0.25, 0.0]))
        return [fl.buffer.getvalue().decode() for fl in files], log, len(printed)

    eager, compiled = run(f), run(cf)
    assert compiled == eager
    assert eager == (["hop.tensor(2.5)\nhop.tensor(2.5)\nhop.tensor(3.)\nhop.tensor(2.5)\n",
                      "hop.tensor(2.5)\nhop.tensor(0.25)\n"], ["hop.tensor(2.5)", "\n"], 1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64", "bool"])
def test_a_replayed_print_of_0d_and_1d_values_is_eagers_text_under_each_print_option(dtype):
    # the replay writes str() of a hop.Tensor straight from its repr (no
    # PyObject_Str) and the digits two at a time; its text is eager's byte
    # for byte for every dtype and rank, under NumPy's print options as
    # they are at each call (set and reset between calls)
    def f(x):
        print(x.sum(), x[:3], x.sum() * 3)
        return x + x

    cf = hop.compile(f)
    vals = [[1.5, -2.25, 1e4 + 0.125, 3.0], [0.1, 7.0, -0.0, 12345.67],
            [1e-3, 2.0, 4.0, 8.0], [0.0, 0.0, 0.0, 0.0]]
    saved = np.get_printoptions()
    try:
        for opts in ({}, {"precision": 3}, {"floatmode": "fixed"}, {"sign": "+"}, {}):
            np.set_printoptions(**{**saved, **opts})
            for v in vals:
                want, text, got, ctext = printed_both(f, cf, hop.tensor(np.array(v).astype(dtype)))
                assert ctext == text, (dtype, opts, v)
                same(got, np.asarray(want))
    finally:
        np.set_printoptions(**saved)
    assert c_path(cf) and cf.recompiles == 0


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "uint8", "int32",
                                   "int64", "bool"])
def test_a_replayed_print_of_odd_0d_values_is_eagers_text(dtype):
    # print_mid's shape (print(x.sum()) between ops) over the values whose
    # text is not plain digits: nan, infinities, negative zero, exponents
    # large and small, the dtype's extremes
    def f(x):
        y = x * 1
        print(y.sum())
        print(y[0], y.sum() * 2)
        return y + y

    info = np.finfo(dtype) if dtype.startswith("float") else \
        np.iinfo(dtype) if dtype != "bool" else None
    if info is None:
        vals = [[True], [False]]
    elif dtype.startswith("float"):
        vals = [[np.nan], [np.inf], [-np.inf], [-0.0], [0.0], [1e-7], [-3e-5], [1.5e16],
                [info.max], [info.min], [info.tiny], [info.eps], [123456789.0], [0.1],
                [1.0 / 3.0], [-2.5e-300], [1e300]]
    else:
        vals = [[info.max], [info.min], [0], [-1 if info.min < 0 else 1], [7]]
    cf = hop.compile(f)
    with np.errstate(all="ignore"):
        for v in vals:
            want, text, got, ctext = printed_both(f, cf, hop.tensor(np.array(v).astype(dtype)))
            assert ctext == text, (dtype, v)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert c_path(cf) and cf.recompiles == 0


# Lifted ints (issue #28's steady call): a counter a function bumps is a plan
# input read per call and its new value an output, on the C call as well.

COUNT = 0
TABLE = {"n": 0}


def bump_global(x):
    global COUNT
    COUNT += 1
    return x + COUNT


def bump_item(x):
    TABLE["n"] = TABLE["n"] + 2
    return x * 2.0


def test_a_global_counter_bumped_every_call_takes_the_c_call_with_each_calls_value():
    global COUNT
    COUNT = 0
    cf = hop.compile(bump_global)
    x = hop.tensor([1.0, 2.0])
    for n in range(1, 6):
        same(cf(x), [1.0 + n, 2.0 + n])
        assert type(COUNT) is int and COUNT == n
    assert c_path(cf) and cf.eager_calls == 0 and len(cf.graphs) == 1
    COUNT = 40  # changed outside: read anew
    same(cf(x), [42.0, 43.0])
    assert COUNT == 41
    COUNT = 2.5  # no longer an int: the general path's miss, then eager's answer
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(cf(x), [4.5, 5.5])
    assert COUNT == 3.5


def test_a_nonlocal_counter_and_a_dict_item_counter_are_read_and_written_every_call():
    def make():
        step = 0

        def f(x):
            nonlocal step
            step += 1
            return x * step
        return f, lambda: step
    f, step = make()
    g, gstep = make()
    cf = hop.compile(f)
    TABLE["n"] = 0
    ci = hop.compile(bump_item)
    for n in range(1, 5):
        got, want = cf(hop.ones(2)), g(hop.ones(2))
        same(got, want)
        same(got, [float(n)] * 2)
        assert type(step()) is int and step() == gstep() == n
        same(ci(hop.ones(1)), [2.0])
        assert TABLE == {"n": 2 * n} and type(TABLE["n"]) is int
    assert c_path(cf) and c_path(ci) and cf.eager_calls == ci.eager_calls == 0


def test_a_deleted_lifted_source_is_eagers_error():
    def make():
        step = 0

        def f(x):
            nonlocal step
            step += 1
            return x + 1.0
        return f
    f = make()
    cf = hop.compile(f)
    cf(hop.ones(1))
    cf(hop.ones(1))
    assert c_path(cf)
    TABLE.pop("n", None)
    ci = hop.compile(bump_item)
    with pytest.raises(KeyError):
        ci(hop.ones(1))
    TABLE["n"] = 0


def test_the_bound_call_rejects_bad_lifted_sources_and_sym():
    cf = hop.compile(lambda x: x + 1)
    cf(hop.ones(2))
    r = cf._entries[-1].runner
    with pytest.raises(TypeError, match="lifted source 0"):
        hop._C._EffectsCall(r.plan, r, 1, None, (None,), b"\x01", (0, ()), (), ([],), None)
    with pytest.raises(TypeError, match="sym"):
        hop._C._EffectsCall(r.plan, r, 1, None, (None,), b"\x01", (0, ()), (), (), b"")


def make_train():
    losses, step, w = [], 0, hop.zeros(4)

    def train(x, y):
        nonlocal step, w
        loss = ((x @ w - y) ** 2).sum()
        w = w - 0.01 * (x.sum(0) * loss)
        losses.append(loss)
        step += 1
        return loss
    return train, losses, lambda: (step, w)


def general_calls(monkeypatch):
    """A list that grows by one at each call of the general (Python) path."""
    from hop import _trace
    seen, call_kw = [], _trace._Runner.call_kw

    def counted(self, *a, **k):
        seen.append(1)
        return call_kw(self, *a, **k)
    monkeypatch.setattr(_trace._Runner, "call_kw", counted)
    return seen


def test_a_list_append_of_the_returned_value_takes_the_c_call_with_one_object_at_both(
        monkeypatch):
    # `lst.append(y); return y`: the appended and the returned value are one
    # object, as eager's (Runner._results' "again"); and `w = w - lr * g`
    # rebinds a closed-over tensor the plan captures, so the guards' fast
    # check fails every call and the full one passes (Runner._recheck).
    # Before, this plan took the general Python path every call.
    eager, elog, estate = make_train()
    train, log, state = make_train()
    cf = hop.compile(train)
    seen = general_calls(monkeypatch)
    x, y = hop.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4) / 10), hop.tensor([1., 2, 3])
    for k in range(100):
        want, got = eager(x, y), quiet(cf, x, y)
        same(got, want.numpy())
        assert got is log[-1] and want is elog[-1]
        assert k > 0 or c_path(cf)
    assert c_path(cf) and cf.recompiles == 0 and cf.eager_calls == 0 and len(cf.graphs) == 1
    assert len(seen) == 1  # (the first call's: the trace)
    assert len(log) == len(elog) == 100 and len({id(v) for v in log}) == 100
    for a, b in zip(log, elog):
        same(a, b.numpy())
    (s1, w1), (s2, w2) = state(), estate()
    assert s1 == s2 == 100
    same(w1, w2.numpy())


def appends_twice(x):
    y = x + 1.0
    log.append(y)
    log.append((y, y))
    return y, y


log = []


def test_one_value_appended_and_returned_several_times_is_one_object_everywhere(monkeypatch):
    cf = hop.compile(appends_twice)
    seen = general_calls(monkeypatch)
    for k in range(3):
        log.clear()
        r = quiet(cf, hop.tensor([1.0, float(k)]))
        assert c_path(cf)
        assert r[0] is r[1] is log[0] is log[1][0] is log[1][1]
        same(r[0], [2.0, k + 1.0])
    assert len(seen) == 1


def test_the_bound_call_rejects_names_that_are_not_a_name_guard():
    cf = hop.compile(lambda x: x + 1)
    cf(hop.ones(2))
    r = cf._entries[-1].runner
    with pytest.raises(TypeError, match="^_EffectsCall: names is None or a _NameGuard, not int$"):
        hop._C._EffectsCall(r.plan, r, 1, None, (None,), b"\x01", (0, ()), (), (), None, 1)
