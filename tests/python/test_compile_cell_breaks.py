"""Graph breaks in functions with cell variables (issue 28): a variable of
the compiled function that a nested function closes over (its own cells:
closures, `nonlocal` in an inner function).  At a break the plan hands the
cells' contents to the resume, which makes the cells again and the
closures over them (hop/_frame.py: _func_spec, _thaw), so a closure made
before the break sees what the code after it assigns, as eagerly.  Each
test: eager against compiled, results, printed text and effects in order,
and explain()'s text."""

import numpy as np

import hop
from test_compile_frames import X, line_of
from test_compile_resume import against_eager


def test_a_closure_made_before_a_break_sees_a_rebinding_after_it():
    log = []

    def f(x):
        scale = 2.0

        def body(r):
            return r * scale

        y = hop.map(body, x)
        log.append(float(y.sum()))
        scale = 3.0
        return hop.map(body, y) + 1

    cf = against_eager(f, [(X,), (X * 2,), (X,)], log)
    text = cf.explain()
    assert cf.eager_calls == 0
    assert f"graph break at test_compile_cell_breaks.py:{line_of(f, 'log.append(float')} " \
           f"(CALL)" in text
    # the resume made body again over its own cell, now holding 3.0
    assert "mul(y, 3.0)" in text


def test_a_nonlocal_counter_of_an_inner_function_counts_across_a_break():
    log = []

    def f(x):
        n = 0

        def bump(k):
            nonlocal n
            n += k
            log.append(("bump", n))

        bump(1)
        print("sum", str(x.sum()))
        bump(2)
        log.append(("end", n))
        return x * n

    cf = against_eager(f, [(X,), (X * 3,)], log)
    assert cf.eager_calls == 0
    assert "graph break at test_compile_cell_breaks.py:" in cf.explain()


def test_a_cell_assigned_only_after_the_break_and_a_closure_made_after_it():
    log = []

    def f(x):
        a = x * 2
        log.append(float(a.sum()))
        b = [3]
        g = lambda t: t + a + b[0]  # noqa: E731 - a closure over a and b
        return g(x)

    cf = against_eager(f, [(X,), (X - 1,)], log)
    assert cf.eager_calls == 0


def test_a_recursive_inner_function_is_made_again_over_its_own_cell():
    log = []

    def f(x):
        def p(k):
            return 1 if k == 0 else 2 * p(k - 1)

        log.append(float(x.sum()))
        return x * p(3)

    cf = against_eager(f, [(X,), (X * 2,)], log)
    assert cf.eager_calls == 0


def test_a_closure_that_escaped_before_the_break_keeps_eagers_cell():
    log = []
    kept = []

    def f(x):
        c = 1.0

        def get():
            return c

        kept.append(get)
        log.append(float(x.sum()))
        c = 5.0
        return x * kept[-1]()

    for k in range(2):
        kept.clear()
        log.clear()
        want = f(X)
        want_log, want_get = list(log), kept[-1]()
        kept.clear()
        log.clear()
        cf = hop.compile(f)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (it may run eagerly: a closure escaped)
            got = cf(X)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert log == want_log and kept[-1]() == want_get == 5.0


def test_a_closure_held_by_a_list_at_the_break_keeps_eagers_cell():
    def f(x):
        c = 1.0

        def get():
            return c

        fs = [get]
        s = float(np.exp(x).sum())
        c = s
        return x * fs[0]()

    a = np.arange(4.0, dtype=np.float32)
    cf = hop.compile(f)
    import warnings
    for arg in (a, a + 1, a):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (it runs eagerly: the list holds a closure)
            got = cf(arg)
        np.testing.assert_array_equal(got, f(arg))
    assert "the local 'fs' holding a list" in cf.explain()


def test_numpy_code_with_a_closure_breaks_and_resumes_compiled():
    def f(x):
        k = 2.0

        def scale(v):
            return v * k

        s = float(np.exp(x).sum())
        k = s
        return scale(x)

    a = np.arange(4.0, dtype=np.float32)
    cf = hop.compile(f)
    for arg in (a, a + 1):
        np.testing.assert_allclose(cf(arg), f(arg), rtol=1e-6)
    assert cf.eager_calls == 0
    assert "the part before it runs in Python" in cf.explain()
