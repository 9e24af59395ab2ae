"""I/O in compiled functions (issue 28): a logging call, sys.stdout.write,
print(file=...), open() and np.save are graph breaks -- the call runs in
Python on every call, on the plan's values, and the rest of the function
stays compiled -- where the function ran eagerly whole before.  A call in a
loop is a break whose loop CPython runs (hop/_region.py); where it cannot,
the function stays eager (hop's concrete interpreter would run the loop
slower than CPython).  Library code handed print or an I/O function
(`any(map(log.info, xs))`, `sorted(xs, key=print)`) breaks there too: it
would have called it once, while hop translated (`list(map(print, xs))`
printed on the first call only).  Each function runs eagerly and compiled
over several calls with changing data; the results, the text logged or
written and its order agree.  docs/ARCHITECTURE.md, "Python effects in
compiled code"."""

import contextlib
import io
import logging
import sys
import warnings

import numpy as np
import pytest

import hop

LOG = logging.getLogger("hop.test.io_breaks")
LOG.propagate = False
STREAM = io.StringIO()
LOG.addHandler(logging.StreamHandler(STREAM))
LOG.setLevel(logging.INFO)


def _logged(fn, *args):
    STREAM.seek(0)
    STREAM.truncate()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        r = fn(*args)
    return r, STREAM.getvalue(), out.getvalue(), err.getvalue()


def _agree(fn, arg_sets, eager_calls=0):
    cf = hop.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no warning: neither eager's nor hop's ...)
        warnings.filterwarnings("ignore", "hop.compile: .* runs eagerly", RuntimeWarning)
        for args in arg_sets:
            want = _logged(fn, *args)
            got = _logged(cf, *args)
            np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
            assert type(got[0]) is type(want[0])
            assert got[1:] == want[1:], (got[1:], want[1:])
    assert cf.eager_calls == eager_calls, cf.explain()
    return cf


def _breaks(cf):
    return [line.strip() for line in cf.explain().splitlines() if "graph break at" in line]


def log_sum(x):
    y = x * 2.0 + 1.0
    LOG.info("sum %s", y.sum())
    return y * 3.0 - 1.0


def log_module_function(x):
    y = x * 2.0
    logging.warning("max %s, min %s", y.max(), y.min())  # (the root logger: to stderr)
    return y - 1.0


def log_twice_with_state(x):
    y = x + 1.0
    LOG.info("first %d", int(y[0]))
    z = y * y
    LOG.debug("hidden %s", z)  # (below the level: formats nothing)
    LOG.info("second %.3f", float(z.mean()))
    return z, y


def stdout_write(x):
    y = x * 4.0
    sys.stdout.write(f"{y.sum():.2f}\n")
    return y + 1.0


def print_to_stdout_file(x):
    y = x - 2.0
    print("y", y.min(), file=sys.stdout)
    return y


def helper_logs(x):
    def report(v):
        LOG.info("helper %s", v.sum())
    y = x * 3.0
    report(y)
    return y / 2.0


def hop_tensor_log(x):
    y = x * 2.0
    LOG.info("hop %s", float(y.sum()))
    return y + 1.0


DATA = [(np.arange(4.0),), (np.array([1.5, -2.0, 3.25, 0.0]),), (np.ones(4),)]


@pytest.mark.parametrize("fn", [log_sum, log_module_function, log_twice_with_state, stdout_write,
                                print_to_stdout_file, helper_logs])
def test_io_call_is_a_graph_break_and_the_rest_compiles(fn):
    cf = _agree(fn, DATA)
    assert cf.graphs and _breaks(cf), cf.explain()
    assert "may change state hop cannot see" in cf.explain() or "print()" in cf.explain()


def test_np_save_to_a_path_runs_in_python_on_every_call(tmp_path):
    path = str(tmp_path / "y.npy")

    def f(x):
        y = x * 0.5
        np.save(path, y)
        return y + 1.0

    cf = hop.compile(f)
    for (x,) in DATA:
        np.testing.assert_array_equal(cf(x), f(x))
        saved = np.load(path)
        f(x)
        np.testing.assert_array_equal(saved, np.load(path))
    assert cf.eager_calls == 0 and _breaks(cf)


def test_np_save_to_a_file_object_stays_eager():
    # (a BytesIO is an iterator numpy.save may advance: an effect the
    # translator neither replays nor breaks at)
    buf = io.BytesIO()

    def f(x):
        np.save(buf, x * 0.5)
        return x

    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf(DATA[0][0])
    assert cf.eager_calls == 1 and len(buf.getvalue()) > 0


def test_a_hop_tensor_function_logs_every_call():
    xs = [(hop.tensor([1.0, 2.0]),), (hop.tensor([5.0, -1.0]),)]
    cf = _agree(hop_tensor_log, xs)
    assert _breaks(cf)


def test_the_logger_level_is_read_on_every_call():
    cf = hop.compile(log_sum)
    x = np.arange(3.0)
    try:
        for level, logged in ((logging.INFO, True), (logging.WARNING, False), (logging.INFO, True)):
            LOG.setLevel(level)
            assert bool(_logged(cf, x)[1]) == logged
            assert _logged(cf, x)[1] == _logged(log_sum, x)[1]
    finally:
        LOG.setLevel(logging.INFO)
    assert cf.eager_calls == 0 and cf.recompiles == 0


def test_no_guard_walks_into_the_logger():
    cf = hop.compile(log_sum)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cf(np.arange(3.0))
    text = cf.explain()
    assert "sys'.path" not in text and "Logger._log" not in text and "handlers" not in text


def test_open_and_write_in_a_with_block_writes_as_eager(tmp_path):
    path = tmp_path / "out.txt"

    def f(x):
        y = x * 2.0
        with open(path, "a") as fh:
            fh.write(f"{y[0]}\n")
        return y + 1.0

    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for (x,) in DATA:
            np.testing.assert_array_equal(cf(x), f(x))
    lines = path.read_text().splitlines()
    assert lines[0::2] == lines[1::2] and len(lines) == 6
    # eager still: hop cannot tell the class of the context manager open()
    # returns before the call (its effect kind is "call")
    assert cf.eager_calls == 3 and "context manager" in cf.explain()


def test_io_in_a_loop_is_a_break_whose_loop_cpython_runs():
    def f(x):
        for i in range(3):
            x = x * 2.0
            LOG.info("step %d", i)
        return x

    cf = _agree(f, DATA)
    assert len(cf.graphs) == 1 and _breaks(cf) == [
        "graph break at test_compile_io_breaks.py:205 (CALL): Logger.info() may change state "
        "hop cannot see (a Python effect on this line); inside the loop at "
        "test_compile_io_breaks.py:203, which runs in Python"], cf.explain()


def test_io_in_a_loop_of_a_helper_is_a_break_at_its_call():
    def report(v):
        for k in range(2):
            LOG.info("%d %s", k, v[0])

    def f(x):
        y = x + 1.0
        report(y)
        return y

    cf = _agree(f, DATA)
    assert "in test_io_in_a_loop_of_a_helper_is_a_break_at_its_call.<locals>.report() (from " \
        "the call at test_compile_io_breaks.py:222, which runs in Python)" in cf.explain()


def test_io_in_a_loop_cpython_cannot_run_as_a_region_keeps_the_function_eager():
    def f(x):
        scale = 2.0  # (a cell variable: _region cannot copy the code)
        for i in range(3):
            x = x * scale
            LOG.info("step %d", i)
        return (lambda: scale)() * x

    cf = _agree(f, DATA, eager_calls=3)
    assert not cf.graphs
    assert "CPython cannot run this loop as a region of its own" in cf.explain()


def test_io_in_a_loop_of_a_helper_called_from_a_function_with_cells_keeps_it_eager():
    def report(v):
        for k in range(2):
            LOG.info("%d %s", k, v[0])

    def f(x):
        y = x + 1.0
        report(y)
        return (lambda: y)()

    cf = _agree(f, DATA, eager_calls=3)
    assert "inside a loop of" in cf.explain() and "CPython cannot run the statement" in \
        cf.explain()


def test_fullgraph_raises_at_the_io_break():
    cf = hop.compile(log_sum, fullgraph=True)
    with pytest.raises(hop.TraceError) as e:
        cf(np.arange(3.0))
    assert "graph break at" in str(e.value) and "log_sum" not in STREAM.getvalue()


def _map_print(x):
    y = x * 2.0
    list(map(print, [1, 2]))
    return y


def _any_map_log(x):
    y = x * 2.0
    any(map(LOG.info, ["a", "b"]))
    return y


def _print_alias(x):
    y = x * 2.0
    p = print
    any(map(p, [y.sum(), 5]))
    return y


def _sorted_key_print(x):
    y = x * 2.0
    sorted([3, 1, 2], key=lambda v: (print(v), v)[1])
    return y


@pytest.mark.parametrize("fn", [_map_print, _any_map_log, _print_alias, _sorted_key_print])
def test_library_code_given_print_or_an_io_function_prints_on_every_call(fn):
    # (list(map(print, xs)) printed on the first call only: library code
    # the translator ran for real called print once, while translating)
    cf = hop.compile(fn)
    for (x,) in DATA:
        want, got = _logged(fn, x), _logged(cf, x)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1:] == want[1:] and (want[1] or want[2])


def test_a_library_function_compiled_itself_reads_its_file_on_every_call(tmp_path):
    # hop.compile(np.loadtxt): its I/O is inside library calls the
    # translator would run for real, once (the second call gave the first
    # file's rows): such a function stays eager
    path = tmp_path / "rows.txt"
    c = hop.compile(np.loadtxt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for text, want in (("1 2\n", [1.0, 2.0]), ("7 8\n", [7.0, 8.0])):
            path.write_text(text)
            np.testing.assert_array_equal(c(str(path)), want)
    assert c.eager_calls == 2


def test_user_code_calling_loadtxt_breaks_there_and_reads_every_call(tmp_path):
    path = str(tmp_path / "rows.txt")

    def f(p):
        return np.loadtxt(p) * 2.0

    cf = hop.compile(f)
    for text in ("1 2\n", "7 8\n"):
        with open(path, "w") as fh:
            fh.write(text)
        np.testing.assert_array_equal(cf(path), f(path))
    assert cf.eager_calls == 0 and _breaks(cf)
