"""Ordinary NumPy programs under hop.compile: the issue's five programs
(row softmax, 2-layer MLP, pairwise distances, log-sum-exp, k-means
assignment) against NumPy at small and large sizes; ndarray in, ndarray
out; HOPs inside NumPy code; data-dependent Python branches specialised by
path (each path traced once, a data guard for an unseen one, both sides
merged into one plan with a cond, no retrace after)."""
import contextlib
import inspect
import io
import sys
import warnings

import numpy as np
import pytest

import hop


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def mlp(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0)
    return h @ w2 + b2


def pairwise(a, b):
    d = a[:, None, :] - b[None, :, :]
    return np.sqrt((d * d).sum(axis=-1))


def logsumexp(x):
    m = np.max(x, axis=-1, keepdims=True)
    return (m + np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True)))[..., 0]


def kmeans_assign(x, c):
    d = ((x[:, None, :] - c[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(d, axis=1)


def _inputs(name, n, dtype, rng):
    r = lambda *s: rng.standard_normal(s).astype(dtype)
    if name == "softmax":
        return (r(n, 16),)
    if name == "mlp":
        return (r(n, 8), r(8, 32), r(32), r(32, 4), r(4))
    if name == "pairwise":
        return (r(n, 3), r(n // 2 + 1, 3))
    if name == "logsumexp":
        return (r(n, 32) * 10,)
    return (r(n, 2), r(5, 2))


PROGRAMS = {"softmax": softmax, "mlp": mlp, "pairwise": pairwise, "logsumexp": logsumexp,
            "kmeans": kmeans_assign}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_five_programs_compiled_match_numpy(name, dtype):
    fn = PROGRAMS[name]
    rng = np.random.default_rng(7)
    cf = hop.compile(fn)
    for n in (4, 50, 2000):  # the third size is dynamic (one recompile)
        args = _inputs(name, n, dtype, rng)
        want = fn(*args)
        got = cf(*args)
        assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
        if want.dtype.kind == "f":
            r = 1e-5 if dtype == "float32" else 1e-12
            np.testing.assert_allclose(got, want, rtol=r, atol=r)
        else:
            np.testing.assert_array_equal(got, want)
    assert cf.recompiles == 1 and cf.eager_calls == 0


def test_ndarrays_in_and_out_without_copies():
    a = np.arange(6.0).reshape(2, 3)
    same = hop.compile(lambda x: (x, x.T, x[1]))
    out = same(a)
    assert all(type(o) is np.ndarray and np.shares_memory(o, a) for o in out)
    np.testing.assert_array_equal(out[1], a.T)
    made = hop.compile(lambda x: np.sin(x) + 1)
    r = made(a)
    assert type(r) is np.ndarray and r.flags.writeable and not np.shares_memory(r, a)
    assert not np.shares_memory(made(a), r)  # every call's result is its own memory
    # hop tensors in, hop tensors out; NumPy scalars for NumPy's 0-d results
    t = made(hop.asarray(a))
    assert isinstance(t, hop.Tensor)
    s = hop.compile(lambda x: x.sum())(a)
    assert type(s) is np.float64 and s == a.sum()


def test_hops_inside_numpy_code():
    def f(x):
        return hop.cond(np.sum(x) > 0, lambda: np.sin(x), lambda: np.cos(x))

    a = np.linspace(-1, 2, 5)
    for run in (hop.compile(f), hop.compile(f, fullgraph=True), hop.trace(f, a)):
        for v in (a, -a):
            got = run(v)
            assert type(got) is np.ndarray
            np.testing.assert_allclose(got, np.sin(v) if v.sum() > 0 else np.cos(v))
    body = hop.compile(lambda x: hop.map(lambda r: np.exp(r) / np.exp(r).sum(), x))
    x = np.random.default_rng(0).random((3, 4))
    np.testing.assert_allclose(body(x), softmax(x))


def test_loop_bounds_and_switch_indices_from_numpy_code():
    # hop.numpy values (compiled) and ndarrays (eager) as a fori_loop bound
    # and a switch index, as cond's predicate takes them
    branches = [lambda a, k=k: a * k for k in range(5)]

    def sw(x):
        return hop.switch(np.sum(x > 0), branches, x)

    def fl(x):
        return hop.fori_loop(0, np.sum(x > 0), lambda i, c: c * 2, x)

    for x in (np.array([1.0, -2.0, 3.0]), np.array([4.0, 5.0, 6.0, 7.0])):
        n = int((x > 0).sum())
        np.testing.assert_array_equal(sw(x), x * n)
        for f, want in ((sw, x * n), (fl, x * 2.0 ** n)):
            got = hop.compile(f)(x)
            assert type(got) is np.ndarray
            np.testing.assert_array_equal(got, want)
    assert hop.switch(np.array(1), branches, hop.ones(2)).tolist() == [1.0, 1.0]
    assert hop.fori_loop(0, np.array(3), lambda i, c: c + 1, hop.zeros(1)).tolist() == [3.0]


def _while_reference(c):
    while np.sum(c) < 100:
        c = c * 2 + 1
    return c


def _loop_programs():
    """name: (a function of an ndarray x[3, 2] with a loop HOP, its NumPy
    reference)."""
    return {
        "fori_loop": (lambda x: hop.fori_loop(0, 3, lambda i, c: c * 2 + i, x),
                      lambda x: ((x * 2 + 0) * 2 + 1) * 2 + 2),
        "while_loop": (lambda x: hop.while_loop(lambda c: np.sum(c) < 100, lambda c: c * 2 + 1,
                                                x),
                       _while_reference),
        "scan": (lambda x: hop.scan(lambda c, r: (c + r, c * r), x[0] * 0, x),
                 lambda x: (x.sum(0), np.stack([np.zeros_like(x[0]), x[0] * x[1],
                                                (x[0] + x[1]) * x[2]]))),
        "map": (lambda x: hop.map(lambda r: np.sin(r) + r.sum(), x),
                lambda x: np.sin(x) + x.sum(1, keepdims=True)),
        "associative_scan": (lambda x: hop.associative_scan(lambda a, b: a + b, x, 0),
                             lambda x: np.cumsum(x, 0)),
    }


@pytest.mark.parametrize("name", sorted(_loop_programs()))
def test_loop_hops_take_ndarray_carries_and_xs_eagerly_as_compiled(name):
    # an ndarray carry or xs is what compile makes of an ndarray argument (a
    # hop.numpy array in the body), and comes back an ndarray, in every mode
    f, want = _loop_programs()[name]
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    keep = x.copy()
    expected = want(x)
    for run in (f, hop.compile(f), hop.trace(f, x)):
        got = run(x)
        for g, w in zip(got, expected) if name == "scan" else ((got, expected),):
            assert type(g) is np.ndarray and g.dtype == np.float32, (run, type(g))
            np.testing.assert_allclose(g, w, rtol=1e-6)
        np.testing.assert_array_equal(x, keep)


def test_an_ndarray_loop_operand_inside_hop_code_is_a_hop_numpy_array():
    # eagerly inside a function on hop tensors: the body sees NumPy's
    # semantics, the loop gives an ndarray back
    seen = []

    def body(i, c):
        seen.append(type(c).__name__)
        return c // 2

    got = hop.fori_loop(0, 2, body, np.array([9, 4, -3]))
    assert type(got) is np.ndarray and got.dtype == np.int64
    assert got.tolist() == [2, 1, -1] and seen == ["NumpyArg", "NumpyArg"]
    ys = hop.map(lambda r: r.astype(np.float64) / 2, np.array([[1], [3]], np.int32))
    assert type(ys) is np.ndarray and ys.dtype == np.float64 and ys.tolist() == [[0.5], [1.5]]
    # a scan of no steps traces f to learn the ys' shape: the same kinds
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c, ys = hop.scan(lambda c, r: (c + r, r * 2), np.zeros(2), np.ones((0, 2)))
    assert type(c) is np.ndarray and c.tolist() == [0.0, 0.0]
    assert type(ys) is np.ndarray and ys.shape == (0, 2) and ys.dtype == np.float64


STEPS = np.array(3)


def _two_loops(x):
    return hop.fori_loop(0, STEPS, lambda i, c: c + 1, x) + \
        hop.fori_loop(0, STEPS, lambda i, c: c * 2, x)


def test_an_ndarray_bound_read_twice_is_one_guarded_input():
    # a HOP's ndarray operand is captured as hop.numpy captures an array: one
    # input per array and trace, whose source (the global) the guards see
    global STEPS
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "guarded by identity only"
        gm = hop.trace(_two_loops, hop.ones(2))
        assert [n.op for n in gm.graph.nodes].count("placeholder") == 2
        cf = hop.compile(_two_loops)
        assert cf(hop.ones(2)).tolist() == [12.0, 12.0]
    keep = STEPS
    try:
        STEPS[...] = 1
        assert cf(hop.ones(2)).tolist() == [4.0, 4.0]
        STEPS = np.array(2)
        assert cf(hop.ones(2)).tolist() == _two_loops(hop.ones(2)).tolist() == [7.0, 7.0]
    finally:
        STEPS = keep
        STEPS[...] = 3


def test_a_data_dependent_if_inside_a_hop_body_points_to_hop_cond_when_compiled():
    # the body of a switch or cond on a constant is traced inline, at the
    # caller's depth; its branch on data is not path-specialised (that gave an
    # internal error), it is the error hop.trace gives
    def br(a):
        return a * 2 if a.sum() > 0 else a - 1

    t = hop.tensor([-3.0, 1.0])
    for f in (lambda x: hop.switch(0, [br], x), lambda x: hop.cond(True, br, br, (x,)),
              lambda x: hop.cond(x.sum() > 0, br, br, (x,))):
        assert f(t).tolist() == [-4.0, 0.0]
        with pytest.raises(hop.TraceError, match=r"data-dependent Python control flow; use "
                                                 r"hop\.cond"):
            hop.compile(f)(t)
        with pytest.raises(hop.TraceError, match=r"use hop\.cond"):
            hop.trace(f, t)


# ------------------------------------------------------- path specialisation

class _Runs:
    """Counts the Python runs of a function's code while active (a profile
    hook: counting inside the function would be a Python effect, which
    hop.compile runs eagerly)."""

    def __init__(self, fn):
        self.code = fn.__code__
        self.n = 0

    def __len__(self):
        return self.n

    def __enter__(self):
        self.previous = sys.getprofile()
        sys.setprofile(self._hook)
        return self

    def _hook(self, frame, event, arg):
        if event == "call" and frame.f_code is self.code:
            self.n += 1

    def __exit__(self, *exc):
        sys.setprofile(self.previous)


def branchy(x):
    if np.sum(x > 0) > 0:  # an integer sum: NumPy's bits, so a cond (see below)
        return np.sin(x) * 2
    else:
        return np.cos(x) - 1


IF_LINE = inspect.getsourcelines(branchy)[1] + 1
IF_TEXT = inspect.getsourcelines(branchy)[0][1].strip()


def _expected(x):
    return np.sin(x) * 2 if (x > 0).sum() > 0 else np.cos(x) - 1


@pytest.mark.parametrize("first_positive", [True, False])
def test_either_path_first_then_merged_then_no_retrace(first_positive):
    with _Runs(branchy) as calls:
        _either_path_first_then_merged(first_positive, calls)


def _either_path_first_then_merged(first_positive, calls):
    pos, neg = np.linspace(0.1, 1, 6), -np.linspace(0.1, 1, 6)
    first, second = (pos, neg) if first_positive else (neg, pos)
    cf = hop.compile(branchy)
    np.testing.assert_allclose(cf(first), _expected(first))
    assert cf.recompiles == 0 and len(cf.graphs) == 1
    # the one plan computes the predicate and checks it: same path, no retrace
    n = len(calls)
    np.testing.assert_allclose(cf(first * 3), _expected(first * 3))
    assert len(calls) == n and cf.recompiles == 0
    # the unseen side fails the data guard and is traced; both sides merge
    np.testing.assert_allclose(cf(second), _expected(second))
    assert cf.recompiles == 1 and len(cf.graphs) == 2
    merged = cf.graphs[-1]
    assert "cond(" in merged.code and "sin(" in merged.code and "cos(" in merged.code
    assert "guards: u" not in merged.code  # no trap side left
    n = len(calls)
    for v in (first, second, first * 2, second * 2, pos - 0.5):
        np.testing.assert_allclose(cf(v), _expected(v))
    assert len(calls) == n and cf.recompiles == 1 and cf.eager_calls == 0
    text = cf.explain()
    site = f"test_numpy_programs.py:{IF_LINE}"
    assert f"{site} (`{IF_TEXT}`) took its " \
           f"{'False' if first_positive else 'True'} side, not traced yet" in text
    assert f"{site}  `{IF_TEXT}`  True: traced" in text
    assert f"{site}  `{IF_TEXT}`  False: traced" in text


@pytest.mark.parametrize("reduce", ["np.sum", "x.sum", "np.mean"])
@pytest.mark.parametrize("x", [np.array([1e16, 1, 0, 0, -1e16, 0, 0]),
                               np.array([1e8, 1, -1e8], np.float32)], ids=["f64[7]", "f32[3]"])
def test_a_branch_on_a_float_reduction_takes_numpys_side_not_hops(reduce, x):
    # NumPy adds these in order, (1e16 + 1) - 1e16 == 0; hop's sum added in
    # another order and got 1: a cond on hop's value took the True side
    # where eager takes the False one.  hop's float sums now add in NumPy's
    # order (0 here too), but a sum in a compiled plan may be of a value
    # NumPy lays out otherwise (docs/ARCHITECTURE.md, "Summation order"), so
    # the branch is still decided by NumPy's value.
    red = {"np.sum": np.sum, "x.sum": lambda v: v.sum(), "np.mean": np.mean}[reduce]

    def f(x):
        return x * 2 if red(x) > 0 else x - 1

    assert not red(x) > 0
    assert float(np.asarray(hop.numpy.sum(hop.numpy.asarray(x)))) == 0.0  # NumPy's order
    cf = hop.compile(f)
    for v in (x, -x, x + 1):
        got = cf(v)
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got, f(v))
    assert cf.eager_calls == 0
    op = "mean" if reduce == "np.mean" else "sum"
    assert f"not traced as a cond: its condition is a value NumPy may compute with other " \
           f"bits ({op} ({op}" in cf.explain()


def test_a_branch_on_a_float_sum_takes_numpys_side_not_hops():
    # NumPy adds in order, (1e16 + 1) - 1e16 == 0; hop's sum gets 1, so a
    # cond on hop's value takes the True side where eager takes the False one
    def f(x):
        return x * 2 if np.sum(x) > 0 else x - 1

    x = np.array([1e16, 1, 0, 0, -1e16, 0, 0])
    cf = hop.compile(f)
    for v in (x, -x, x + 1):
        np.testing.assert_array_equal(cf(v), f(v))


def test_a_branch_on_a_float_max_or_min_is_one_cond_and_its_sign_of_zero_is_numpys():
    # amax/amin pick an element, so a comparison of one has NumPy's truth
    # (a cond, no break); only the sign of a zero may differ (NumPy's max
    # of [-0.0, 0.0] is 0.0, hop's -0.0), so its text and 1 / max(x) are
    # NumPy's own (a break decided in Python)
    def on_max(x):
        return x * 2 if np.max(x) > 0 else x - 1

    def on_range(x):
        return x * 2 if np.max(x) - np.min(x) > 1 else x

    def on_reciprocal(x):
        return x * 2 if 1 / np.max(x) > 0 else x - 1

    def printed(x):
        m = np.max(x)  # (on the print's line NumPy computes it: a break there)
        print(m, np.min(x))
        return x + 1

    inputs = (np.array([-0.0, 0.0]), np.array([0.0, -0.0]), np.array([1.0, 3.0]),
              np.array([-2.0, -1.0]))
    for fn in (on_max, on_range, on_reciprocal, printed):
        cf = hop.compile(fn)
        for v in inputs:
            want_out, got_out = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(want_out):
                want = fn(v)
            with contextlib.redirect_stdout(got_out):
                got = cf(v)
            assert repr(got) == repr(want), (fn.__name__, v)
            assert (got is v) == (want is v), (fn.__name__, v)
            assert got_out.getvalue() == want_out.getvalue(), (fn.__name__, v)
        assert cf.eager_calls == 0
        text = cf.explain()
        if fn is on_max:
            assert "graph break" not in text and "cond(" in text
        elif fn is on_range:
            # its False side returns x itself, which a cond's output would
            # copy: the `if` is decided in Python (on NumPy's own value)
            assert "its sides leave different arrays in the value it returns, one of them an " \
                   "argument" in text
        elif fn is on_reciprocal:
            assert "its condition is a value NumPy may compute with other bits (div (div) of " \
                   "amax (amax))" in text
        else:
            assert "amax (amax): its sign of zero may differ" in text


def test_a_float_sum_branch_inside_a_side_takes_numpys_side_whatever_its_node_name():
    # the nested condition is a node of the outer if's cond body named `gt`,
    # as the root's exact `x[0] > 0` is: _exact read the root's node and
    # merged hop's np.sum(y) > 0 (True) where NumPy's sum is 0.0 (False)
    def f(x, y):
        a = x[0] > 0
        if a:
            if np.sum(y) > 0:
                return y * 2
            return y - 1
        return y

    x, y = np.array([1.0]), np.array([1e16, 1, 0, 0, -1e16, 0, 0])
    cf = hop.compile(f)
    for v in (x, -x):
        for w in (y, -y, y + 1):
            np.testing.assert_array_equal(cf(v, w), f(v, w))


def test_fullgraph_and_hop_trace_keep_pointing_to_hop_cond():
    a = np.arange(3.0)
    with pytest.raises(hop.TraceError, match=r"data-dependent Python control flow; use "
                                             r"hop\.cond"):
        hop.compile(branchy, fullgraph=True)(a)
    with pytest.raises(hop.TraceError, match=r"use hop\.cond"):
        hop.trace(branchy, a)
    with pytest.raises(hop.TraceError, match=r"use hop\.cond"):
        hop.trace(branchy, hop.asarray(a))


def test_sequential_and_nested_branches_and_loops():
    def two(x):
        if x.sum() > 0:
            x = x * 2
        if x.max() > 5:
            return x - 5
        return x

    cf = hop.compile(two)
    values = [np.arange(4.0), -np.arange(4.0), np.arange(4.0) / 10, np.array([-10.0, 1, 1, 9])]
    for v in values + values:
        np.testing.assert_allclose(cf(v), two(v))
    assert len(cf.graphs) <= 4 and cf.eager_calls == 0
    n = len(cf.graphs)
    for v in values:
        cf(v)
    assert len(cf.graphs) == n

    def halve(x):
        while np.max(x) > 1:  # one path per trip count
            x = x / 2
        return x

    # in NumPy code a condition met again inside a side (the loop's second
    # trip) is a break: its value is decided by NumPy, and the result is eager's
    cl = hop.compile(halve)
    for v in (np.arange(4.0), np.arange(4.0) * 100, np.arange(4.0), np.arange(4.0) * 0.1):
        np.testing.assert_array_equal(cl(v), halve(v))
    assert "graph break" in cl.explain()

    def halve_t(x):
        while hop.amax(x) > 1:  # hop's own semantics: one path per trip count
            x = x / 2
        return x

    ct = hop.compile(halve_t)
    for v in (np.arange(4.0), np.arange(4.0) * 100, np.arange(4.0), np.arange(4.0) * 0.1):
        np.testing.assert_array_equal(ct(hop.asarray(v)).numpy(), halve_t(hop.asarray(v)).numpy())
    assert ct.recompiles == 2


def test_a_branch_on_a_number_ends_the_compiled_part_and_says_so():
    # float() of a traced value needs its data: a graph break (issue 28);
    # float() gets NumPy's sum (hop's may differ in the last bit, so the part
    # before the break runs in Python) and the rest resumes compiled;
    # explain() says why; fullgraph and hop.trace raise the error that
    # explains it
    def f(x):
        return x * 2 if float(x.sum()) > 1 else x

    line = inspect.getsourcelines(f)[1] + 1
    why = r"float\(\) of a traced array value .* not on a number's value"
    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(cf(np.arange(3.0)), [0.0, 2.0, 4.0])
        np.testing.assert_array_equal(cf(np.arange(3.0) / 4), np.arange(3.0) / 4)
    assert cf.eager_calls == 0 and len(cf.graphs) == 1
    text = cf.explain()
    assert f"graph break at test_numpy_programs.py:{line} (CALL): float() of a traced array" \
        in text and "the part before it runs in Python" in text
    for run in (lambda: hop.compile(f, fullgraph=True)(np.arange(3.0)),
                lambda: hop.trace(f, np.arange(3.0))):
        with pytest.raises(hop.TraceError, match=why):
            run()


# ------------------------------------------- hop.numpy arrays at the edges

def test_hop_asarray_of_a_hop_numpy_array_is_its_tensor_eager_and_compiled():
    import hop.numpy as hnp
    x = np.arange(3.0)
    t = hop.asarray(hnp.asarray(x))
    assert type(t) is hop.Tensor and np.shares_memory(t.numpy(), x)
    assert hop.asarray(hnp.asarray(x), dtype=hop.float32).dtype == hop.float32

    def f(x, y):
        return hop.asarray(x) + y

    want = f(x, hop.ones(3))
    for run in (hop.compile(f), hop.trace(f, x, hop.ones(3))):
        got = run(x, hop.ones(3))
        assert type(got) is type(want) is hop.Tensor and got.tolist() == want.tolist()

    class Bad:
        def __hop_tensor__(self):
            return 3
    with pytest.raises(TypeError, match=r"^asarray\(\): .*Bad.__hop_tensor__\(\) returned int, "
                                        r"not a Tensor$"):
        hop.asarray(Bad())


def test_a_hop_numpy_array_result_compiles_saves_and_loads(tmp_path):
    import hop.numpy as hnp

    def f(x):
        return hnp.sin(x) * 2, hnp.sin(x).sum()

    for x in (np.arange(3.0), hop.arange(3, dtype=hop.float64)):
        want = f(x)
        assert type(want[0]) is hnp.ndarray
        gm = hop.trace(f, x)
        path = str(tmp_path / "f.hop")
        hop.save(gm, path)
        for run in (hop.compile(f), gm, hop.load(path)):
            got = run(x)
            assert [type(g) for g in got] == [type(w) for w in want]
            np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
            assert float(got[1]) == float(want[1])
