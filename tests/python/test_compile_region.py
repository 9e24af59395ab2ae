"""A graph break's region (a loop, a with block, the statement of an
inlined call: Break.until) run by CPython itself (hop/_region.py): the
function's own bytecode entered at the region's start, returning to hop at
its exits, where the concrete interpreter ran it ~50 times slower.  Each
scenario eager against compiled over several calls (results, raised errors
with their text, effects and their order, printed text), and which runner
ran the region."""

import dis
import types

import numpy as np
import pytest

import hop
from hop import _frame_resume, _region
from test_compile_frames import X
from test_compile_resume import against_eager


@pytest.fixture
def regions(monkeypatch):
    """The (code, pc, until) of each region copied for CPython (the list
    fills as Break makes them; a region that cannot be copied is None)."""
    made = []
    real = _region.region

    def spy(code, pc, until, bound):
        fn = real(code, pc, until, bound)
        made.append((code.co_name, fn is not None))
        return fn
    monkeypatch.setattr(_region, "region", spy)
    return made


def _by_cpython(made, name):
    assert made and all(ok for n, ok in made if n == name), made


def test_a_data_dependent_while_loop_runs_by_cpython_between_compiled_parts(regions):
    log = []

    def f(x):
        y = x * 2
        n = 0
        while float(y.sum()) < 100:
            y = y * 2
            n += 1
        log.append(n)
        return y + n

    cf = against_eager(f, [(X,), (X * 10,), (X * 0.5,), (X * 100,), (-X,)][:4], log)
    assert cf.eager_calls == 0
    _by_cpython(regions, "f")
    assert "add(y, n)" in cf.explain() or "add(" in cf.explain()


def test_break_continue_else_and_return_inside_the_loop(regions):
    log = []

    def f(x, limit):
        acc = x
        for i in range(6):
            if float(acc.sum()) > limit:
                log.append(("break", i))
                break
            if i % 2:
                continue
            acc = acc + 1
        else:
            log.append("else")
            return acc * 0
        for j in range(3):
            if float(acc[0]) > limit * 10:
                return acc - j
        return acc * 2

    against_eager(f, [(X, 1.0), (X, 1e9), (X * 50, 0.5), (X, -1e9)], log)
    _by_cpython(regions, "f")


def test_an_exception_in_the_loop_is_eagers_with_its_handler(regions):
    log = []

    def f(x, k):
        y = x + 1
        try:
            for i in range(4):
                if float(y[0]) > k:
                    raise ValueError(f"too big at {i}")
                y = y * 3
        except ValueError as e:
            log.append(str(e))
            y = y - 1
        log.append("after")
        return y

    def g(x, k):
        y = x + 1
        for i in range(4):
            if float(y[0]) > k:
                raise KeyError(i)
            y = y * 3
        return y

    against_eager(f, [(X, 5.0), (X, 1e9), (X, -1.0)], log)
    against_eager(g, [(X, 5.0), (X, 1e9)], log)


def test_an_unbound_local_after_the_loop_raises_as_eager(regions):
    log = []

    def f(x, n):
        y = x * 2
        for i in range(n):
            y = y + float(y[0])
        log.append("loop done")
        return y * i  # noqa: F821 - unbound when n == 0, as eagerly

    against_eager(f, [(X, 2), (X, 0), (X, 3)], log)
    _by_cpython(regions, "f")


def test_a_with_block_around_the_break(regions):
    log = []

    class Ctx:
        def __enter__(self):
            log.append("enter")
            return self

        def __exit__(self, *exc):
            log.append(("exit", exc[0].__name__ if exc[0] else None))
            return False

    def f(x, k):
        y = x - 1
        with Ctx():
            s = float(y.sum())
            if s > k:
                raise RuntimeError("over")
            y = y * s
        return y + 1

    against_eager(f, [(X, 1e9), (X, -1e9), (X, 1e9)], log)


def test_varargs_keyword_only_and_defaults(regions):
    # (every local a positional parameter of the copy; **kw breaks hand
    # the resume a dict, which is eager's whole call today)
    log = []

    def f(x, *rest, scale=2.0):
        y = x * scale
        while float(y.sum()) < 50 + len(rest):
            y = y * 2
        log.append((rest, scale))
        return y + len(rest)

    cf = hop.compile(f)
    for args, kw in [((X,), {}), ((X, 1, 2), {"scale": 3.0}), ((X * 9,), {}), ((X,), {})]:
        log.clear()
        want = f(*args, **kw)
        want_log = list(log)
        log.clear()
        got = cf(*args, **kw)
        assert np.array_equal(got.numpy(), want.numpy()) and log == want_log
    assert cf.eager_calls == 0
    _by_cpython(regions, "f")


def test_a_closure_keeps_the_concrete_interpreter(regions):
    log = []

    def f(x):
        n = 0

        def bump():
            nonlocal n
            n += 1
        y = x
        while float(y.sum()) < 30:
            y = y * 2
            bump()
        log.append(n)
        return y + n

    against_eager(f, [(X,), (X * 20,)], log)
    assert regions and not any(ok for _, ok in regions)  # (cells: not copied)


def test_a_long_function_whose_jumps_need_extended_args(regions):
    # 300 statements before the loop and after it: the entry's jump to the
    # prologue and the exit's to its epilogue take EXTENDED_ARG prefixes
    lines = ["def f(x):", "    y = x"]
    lines += [f"    y = y + {i}.0" for i in range(300)]
    lines += ["    n = 0", "    while float(y[0]) < 1e6:", "        y = y * 2", "        n += 1"]
    lines += [f"    y = y - {i}.0" for i in range(300)]
    lines += ["    return y, n"]
    ns = {}
    exec(compile("\n".join(lines), "<long>", "exec"), ns)
    f = ns["f"]
    cf = hop.compile(f)
    for a in (X, X * 100, -X):
        y, n = f(a)
        gy, gn = cf(a)
        assert gn == n and np.array_equal(gy.numpy(), y.numpy())
    _by_cpython(regions, "f")
    code = next(fn for fn in _region._REGIONS.values() if fn is not None and
                fn.co_filename == "<long>")
    ops = [i.opname for i in dis.get_instructions(code)]
    assert "EXTENDED_ARG" in ops


def test_the_copy_differs_from_the_code_only_at_its_entry_and_exits():
    def f(x):
        y = x * 2
        n = 0
        while y < 100:
            y = y * 2
            n += 1
        return y + n

    ins = [i for i in dis.get_instructions(f.__code__) if i.opname != "CACHE"]
    pc = next(k for k, i in enumerate(ins) if i.opname == "LOAD_FAST" and i.argval == "y" and
              k > 4)
    until = next(k for k, i in enumerate(ins) if "BACKWARD" in i.opname)
    code = _region.region(f.__code__, pc, until, ("x", "y", "n"))
    old, new = f.__code__.co_code, code.co_code
    changed = [o for o in range(0, len(old), 2) if old[o:o + 2] != new[o:o + 2]]
    assert changed == [2, ins[until + 1].offset]  # the entry's jump, the exit's
    run = types.FunctionType(code, f.__globals__)
    (mark, k), fast = run(3, 6, 0)
    assert mark is _region.EXIT and k == until + 1 and fast == {"x": 3, "y": 192, "n": 5}
    assert run(3, 200, 0)[1] == {"x": 3, "y": 200, "n": 0}
    assert code.co_firstlineno == f.__code__.co_firstlineno
    assert list(code.co_lines())[:len(list(f.__code__.co_lines()))] == \
        list(f.__code__.co_lines())


def test_uncopyable_code_is_none():
    def gen(x):
        for i in range(3):
            yield x + i

    def cells(x):
        def inner():
            return x
        for i in range(3):
            x = x + i
        return inner

    for fn in (gen, cells):
        ins = [i for i in dis.get_instructions(fn.__code__) if i.opname != "CACHE"]
        until = next(k for k, i in enumerate(ins) if "BACKWARD" in i.opname)
        assert _region.region(fn.__code__, 2, until, ("x",)) is None


def test_no_region_runs_in_the_concrete_interpreter_once_copied(monkeypatch):
    # the while loop's first test breaks at its own instruction (run alone
    # by the concrete interpreter); the loop after it is the resume's region,
    # which CPython runs: no concrete run up to an exit (until=) in steady
    # calls, where the concrete interpreter ran one per call before
    regions = []
    real = _frame_resume._frame.Translator._execute

    def spy(self, fr, pc=0, steps=-1, until=None, *a, **k):
        if until is not None:
            regions.append(pc)
        return real(self, fr, pc, steps, until, *a, **k)

    def f(x):
        y = x * 2
        while float(y.sum()) < 1e5:
            y = y * 1.5 + 1
        return y - 1

    cf = hop.compile(f)
    for _ in range(2):
        cf(X)
    monkeypatch.setattr(_frame_resume._frame.Translator, "_execute", spy)
    for _ in range(3):
        np.testing.assert_array_equal(cf(X).numpy(), f(X).numpy())
    assert regions == []
    monkeypatch.setattr(_region, "region", lambda *a: None)  # (the concrete interpreter's)
    cf = hop.compile(f)
    for _ in range(3):
        np.testing.assert_array_equal(cf(X).numpy(), f(X).numpy())
    assert len(regions) >= 2


def test_the_callers_objects_come_back_as_themselves_after_a_break():
    # (the break's plan returns its locals, which hold the arguments: each
    # put back as itself, _trace._same_leaves)
    def f(x, items, k):
        y = x * 2
        for i in range(k):
            y = y + float(y[0])
        items.append(len(items))
        return x, items, y

    cf = hop.compile(f)
    for k in (2, 3, 2):
        items = [7]
        got = cf(X, items, k)
        want = f(X, [7], k)
        assert got[0] is X and got[1] is items and items == want[1]
        np.testing.assert_array_equal(got[2].numpy(), want[2].numpy())
    assert cf.eager_calls == 0
