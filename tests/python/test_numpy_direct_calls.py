"""hop.numpy's functions called by name (hnp.sum(x), not np.sum(x)) in a
traced or compiled function answer as they do eagerly (hop/numpy/_direct.py).

Eagerly hnp.sum(x) of an np.ndarray x is a 0-d hop.numpy array, and
hnp.asarray(x) a hop.numpy array over x's memory; compiled, x is a NumpyArg
that keeps NumPy's semantics for NumPy's own functions, and a direct call
gave NumPy's answer instead (np.float64, an np.ndarray): the type differed
from eager's.  Each case runs eagerly and compiled on fresh copies of the
same arguments and compares the result's type, dtype, shape and values and
the caller's arrays after the call."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from hop.numpy import _eager, _eager_shape

A = np.array([[2.0, 1.0], [1.0, 3.0]])
V = np.array([3.0, -1.0, 2.0, 5.0])
I = np.array([3, 1, 2, 3], dtype=np.int32)

CASES = {
    "sum": lambda a, v, i: hnp.sum(v),
    "sum_kw": lambda a, v, i: hnp.sum(a=v),
    "sum_axis": lambda a, v, i: hnp.sum(a, axis=0),
    "mean": lambda a, v, i: hnp.mean(v),
    "max": lambda a, v, i: hnp.max(v),
    "amax": lambda a, v, i: hnp.amax(a, axis=1),
    "amin": lambda a, v, i: hnp.amin(v),
    "around": lambda a, v, i: hnp.around(v / 3, 2),
    "argmax": lambda a, v, i: hnp.argmax(v),
    "prod_int": lambda a, v, i: hnp.prod(i),
    "dot": lambda a, v, i: hnp.dot(v, v),
    "matmul_vec": lambda a, v, i: hnp.dot(a, v[:2]),
    "concatenate": lambda a, v, i: hnp.concatenate([v, v]),
    "stack_tuple": lambda a, v, i: hnp.stack((v, v)),
    "where": lambda a, v, i: hnp.where(v > 0, v, 0.0),
    "clip": lambda a, v, i: hnp.clip(v, 0.0, 2.5),
    "sort": lambda a, v, i: hnp.sort(v),
    "cumsum": lambda a, v, i: hnp.cumsum(i),
    "asarray": lambda a, v, i: hnp.asarray(v),
    "asarray_times": lambda a, v, i: hnp.asarray(v) * 2,
    "asarray_sum_method": lambda a, v, i: hnp.asarray(v).sum(),
    "array_copy": lambda a, v, i: hnp.array(v),
    "reshape": lambda a, v, i: hnp.reshape(v, (2, 2)),
    "transpose": lambda a, v, i: hnp.transpose(a),
    "interp": lambda a, v, i: hnp.interp(1.5, np.sort(v), v),
    "median": lambda a, v, i: hnp.median(v),
    "linalg_norm": lambda a, v, i: hnp.linalg.norm(a),
    "linalg_norm_2": lambda a, v, i: hnp.linalg.norm(a, 2),
    "linalg_det": lambda a, v, i: hnp.linalg.det(a),
    "linalg_inv": lambda a, v, i: hnp.linalg.inv(a),
    "linalg_rank": lambda a, v, i: hnp.linalg.matrix_rank(a),
    "linalg_cond": lambda a, v, i: hnp.linalg.cond(a),
    "linalg_solve": lambda a, v, i: hnp.linalg.solve(a, v[:2]),
    "fft_rfft": lambda a, v, i: hnp.fft.rfft(v),
    "ufunc": lambda a, v, i: hnp.add(v, 1),
    "ufunc_of_sum": lambda a, v, i: hnp.exp(hnp.sum(v)),
    # NumPy's own functions keep NumPy's answers beside them
    "np_sum": lambda a, v, i: np.sum(v),
    "np_norm": lambda a, v, i: np.linalg.norm(a),
    "np_of_hnp": lambda a, v, i: np.sum(hnp.asarray(v)),
    "mixed_tuple": lambda a, v, i: (hnp.sum(v), np.sum(v), v.sum()),
}


def _args():
    return A.copy(), V.copy(), I.copy()


def _same(e, c, where):
    assert type(c) is type(e), f"{where}: compiled {type(c)}, eager {type(e)}"
    if isinstance(e, tuple):
        assert len(c) == len(e)
        for k, (x, y) in enumerate(zip(e, c)):
            _same(x, y, f"{where}[{k}]")
        return
    ev, cv = np.asarray(e), np.asarray(c)
    assert (cv.dtype, cv.shape) == (ev.dtype, ev.shape), where
    np.testing.assert_allclose(cv, ev, rtol=1e-12, atol=1e-12, err_msg=where)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_direct_call_answers_as_eagerly(name):
    fn = CASES[name]
    want = fn(*_args())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager would warn
        compiled = hop.compile(fn)
        for _ in range(2):  # the trace's call, then the plan's
            _same(want, compiled(*_args()), f"compile {name}")
        traced = hop.trace(fn, *_args())
        _same(want, traced(*_args()), f"trace {name}")


def test_writes_through_a_direct_calls_view_reach_the_callers_array():
    def f(v, a):
        y = hnp.asarray(v)
        y[0] = 5.0
        r = hnp.reshape(v, (2, 2))
        r[1, 0] = 7.0
        t = hnp.transpose(a)
        t[0, 1] = -4.0  # a[1, 0]
        return hnp.sum(v), hnp.linalg.norm(r)

    ev, ea = V.copy(), A.copy()
    want = f(ev, ea)
    compiled = hop.compile(f)
    for _ in range(2):
        cv, ca = V.copy(), A.copy()
        _same(want, compiled(cv, ca), "compiled")
        np.testing.assert_array_equal(cv, ev)
        np.testing.assert_array_equal(ca, ea)
    assert compiled.recompiles == 0 and len(compiled.graphs) == 1


def test_a_read_only_argument_stays_read_only_through_hnp_asarray():
    def f(v):
        y = hnp.asarray(v)
        y[0] = 1.0
        return y

    ro = V.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only") as eager:
        f(ro)
    with pytest.raises(ValueError, match="read-only") as compiled:
        hop.compile(f)(ro)
    assert str(compiled.value) == str(eager.value)
    np.testing.assert_array_equal(ro, V)


def test_hop_numpy_own_calls_keep_numpys_kind():
    # np.linalg.cond calls hop.numpy's svd and norm inside: NumPy's kind
    # stays through them (a NumPy scalar, as NumPy's cond gives)
    f = hop.compile(lambda a: (np.linalg.cond(a), np.linalg.matrix_rank(a), np.median(a)))
    got = f(A.copy())
    want = (np.linalg.cond(A), np.linalg.matrix_rank(A), np.median(A))
    assert [type(x) for x in got] == [type(x) for x in want]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_the_public_functions_are_wrapped_once_and_named_as_theirs():
    assert hnp.sum.__name__ == "sum" and hnp.linalg.norm.__name__ == "norm"
    assert hnp.sum.__wrapped_by_hop__ is hnp._funcs.PUBLIC["sum"]
    assert getattr(hnp.sum.__wrapped_by_hop__, "__wrapped_by_hop__", None) is None
    # what NumPy's dispatch reaches is the implementation itself
    assert hnp._funcs.FUNCS[np.sum] is hnp._funcs.PUBLIC["sum"]


@pytest.mark.parametrize("fn", ["sum", "prod", "cumsum", "mean", "var", "std"])
def test_eager_reductions_result_dtypes_are_numpys_whatever_the_spelling_of_dtype(fn):
    # the result dtype NumPy gives is asked once per (reduction, operand
    # dtype, dtype=) and kept (_reductions._reduce_dtype)
    for have in (np.int8, np.uint16, np.int32, np.float32, np.bool_):
        a = np.arange(6).astype(have).reshape(2, 3)
        for dtype in (None, np.float32, "float32", np.dtype("f4"), "i2", np.int64):
            for _ in range(2):
                got = getattr(hnp, fn)(a, dtype=dtype)
                want = getattr(np, fn)(a, dtype=dtype)
                assert np.asarray(got).dtype == np.asarray(want).dtype, (fn, have, dtype)
    with pytest.raises(TypeError) as e:
        getattr(np, fn)(a, dtype=[1])
    with pytest.raises(TypeError) as h:
        getattr(hnp, fn)(a, dtype=[1])  # an unhashable dtype= gets NumPy's error
    assert str(h.value) == str(e.value)


@pytest.mark.parametrize("fn", ["sum", "prod", "cumsum", "mean", "var", "std", "nanmean"])
def test_eager_reductions_ask_numpy_once_per_dtype_key(fn):
    # the dtype cache holds one entry per (reduction, dtype, dtype=): var
    # and std had keyed it by a new function object on every call, so it
    # grew by one entry a call and NumPy was asked every time
    from hop.numpy import _reductions
    a = hnp.arange(6.0)
    getattr(hnp, fn)(a)
    before = len(_reductions._REDUCE_DTYPE)
    for _ in range(20):
        getattr(hnp, fn)(a)
        getattr(a, fn)() if hasattr(a, fn) else None
    assert len(_reductions._REDUCE_DTYPE) == before


def test_eager_out_passed_by_position_or_keyword_is_found():
    # _fpcheck._out_of reads out= without binding the call when it is not
    # passed; passed by position it is still seen (an overlapping one runs
    # by NumPy, whose result reads the array as it writes it)
    for pass_out in ("position", "keyword"):
        a, b = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3)
        if pass_out == "position":
            hnp.sum(a, 0, None, a[0])
            np.sum(b, 0, None, b[0])
        else:
            hnp.sum(a, 0, None, out=a[0])
            np.sum(b, 0, None, out=b[0])
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "true_divide", "floor_divide",
                                  "remainder", "maximum", "less", "exp", "sin", "sqrt",
                                  "negative", "absolute", "bitwise_and"])
def test_eager_ufuncs_called_by_name_take_the_fast_path_with_numpys_answer(name):
    # hnp.exp(a) with no keywords takes the eager fast path (_eager), as
    # np.exp(a) and a + b do: same dtypes and bits as NumPy's
    import warnings as w
    arrays = [np.linspace(-2, 3, 6, dtype=np.float32), np.arange(-3, 3, dtype=np.int8),
              np.array([True, False, True, True, False, False])]
    scalars = [300, -1, 2.5, 1e40, True]
    uf, hf = getattr(np, name), getattr(hnp, name)
    nin = uf.nin
    combos = [(a,) for a in arrays] if nin == 1 else \
        [(a, b) for a in arrays for b in arrays + scalars] + [(s, a) for s in scalars for a in arrays]
    for args in combos:
        with w.catch_warnings():
            w.simplefilter("ignore")
            try:
                want = uf(*args)
            except Exception as e:  # noqa: BLE001 - NumPy's error is the answer
                with pytest.raises(type(e)):
                    hf(*[hnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
                continue
            got = hf(*[hnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
        assert type(got) is hnp.ndarray
        g = np.asarray(got)
        assert g.dtype == want.dtype, (name, args)
        np.testing.assert_array_equal(g, want, err_msg=f"{name}{args}")


@pytest.mark.parametrize("name", ["asarray", "reshape", "slice", "transpose"])
def test_a_returned_view_made_by_name_shares_the_callers_memory_as_eagerly(name):
    fn = {"asarray": lambda v: hnp.asarray(v), "reshape": lambda v: hnp.reshape(v, (2, 2)),
          "slice": lambda v: hnp.asarray(v)[1:], "transpose": lambda v: hnp.transpose(v)}[name]
    compiled = hop.compile(fn)
    results = []
    for run in (fn, compiled, compiled):  # eagerly, the trace's call, the plan's
        x = np.arange(4.0)
        r = run(x)
        assert type(r) is hnp.ndarray
        r[(0,) * r.ndim] = 99.0  # a write through the result reaches x, as eagerly
        results.append(x.tolist())
    assert results[1] == results[0] and results[2] == results[0], results
    assert compiled.recompiles == 0


@pytest.mark.filterwarnings("ignore:hop.*can guard by identity only")  # (the dict ns)
def test_a_call_from_hops_own_code_outside_hop_numpy_answers_for_the_user():
    # hop.compile's frame translator makes the user's calls from its own
    # frames (modules hop._*): only hop.numpy's own frames pass NumpyArgs
    # through as they are (_direct._from_hop_numpy)
    ns = {"__name__": "hop._a_translator_like_module", "hnp": hnp}
    exec("def call(v):\n    return hnp.sum(v)\n", ns)
    fn = lambda v: ns["call"](v)  # noqa: E731
    want = fn(V.copy())
    assert type(want) is hnp.ndarray
    for run in (hop.compile(fn), lambda v: hop.trace(fn, v)(v)):
        _same(want, run(V.copy()), "from a hop._ frame")


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "amax", "min", "amin"])
def test_eager_reductions_by_name_take_the_fast_path_with_numpys_answer(name):
    # hnp.sum(a), hnp.sum(a, 1), hnp.sum(a, axis=1) of a hop.numpy array go
    # through its __array_function__ as np.sum(a) does (_direct.as_called)
    for have in (np.float32, np.float64, np.int32, np.int8, np.bool_):
        base = (np.arange(12) % 5).astype(have).reshape(3, 4)
        h = hnp.asarray(base)
        for args, kw in (((), {}), ((1,), {}), ((), {"axis": 0}), ((None,), {}),
                         ((), {"axis": -1}), ((), {"keepdims": True})):
            want = getattr(np, name)(base, *args, **kw)
            got = getattr(hnp, name)(h, *args, **kw)
            assert type(got) is hnp.ndarray, (name, have, args, kw)
            g = np.asarray(got)
            assert (g.dtype, g.shape) == (want.dtype, np.shape(want)), (name, have, args, kw)
            np.testing.assert_array_equal(g, want)
    with pytest.raises(np.AxisError) as e:
        getattr(np, name)(np.ones((2, 2)), 2)
    with pytest.raises(np.AxisError) as h:
        getattr(hnp, name)(hnp.ones((2, 2)), 2)
    assert str(h.value) == str(e.value)


def test_eager_matmul_of_plain_arrays_is_the_general_paths_and_numpys():
    # _eager.matmul: a @ b of two plain float arrays without the general
    # path's decisions; the same kernel, so the general path's bits (asked
    # for with a keyword, which the fast path leaves to it) and NumPy's
    # dtypes, shapes, types and errors
    rng = np.random.default_rng(7)
    shapes = [((16, 16), (16,)), ((16,), (16, 16)), ((3, 4), (4, 5)), ((1, 4), (4, 1)),
              ((5, 3), (3, 2)), ((4,), (4,)), ((2, 3, 4), (4, 2))]
    for dt in (np.float32, np.float64, np.int64):
        for sa, sb in shapes:
            a = rng.standard_normal(sa).astype(dt)
            b = rng.standard_normal(sb).astype(dt)
            want = a @ b
            # (the fast path, C: two float arrays of one or two dims each)
            taken = _eager.matmul(hnp.asarray(a), hnp.asarray(b)) is not None
            assert taken == (dt != np.int64 and len(sa) <= 2 and len(sb) <= 2), (dt, sa, sb)
            for got in (hnp.asarray(a) @ hnp.asarray(b), hnp.matmul(hnp.asarray(a), hnp.asarray(b)),
                        np.matmul(hnp.asarray(a), hnp.asarray(b))):
                general = np.matmul(hnp.asarray(a), hnp.asarray(b), casting="same_kind")
                assert type(got) is type(general) is hnp.ndarray, (dt, sa, sb)
                # two vectors: NumPy's scalar (np.float64), as the general path's
                assert got._scalar == general._scalar == isinstance(want, np.generic)
                g = np.asarray(got)
                assert (g.dtype, g.shape) == (want.dtype, want.shape), (dt, sa, sb)
                np.testing.assert_array_equal(g, np.asarray(general))  # the same bits
                np.testing.assert_allclose(g, want, rtol=1e-5 if dt == np.float32 else 1e-12)
    # np.dot, hnp.dot and a.dot of arrays of one or two dims: matmul's fast
    # path (the general matmul's bits), but of an operand of one element
    # (NumPy's BLAS axpy: zeros for a zero alpha, even times NaN)
    for dt in (np.float32, np.float64):
        for sa, sb in shapes[:-1] + [((1,), (1,)), ((3, 1), (1,)), ((1, 1), (1, 4))]:
            a = rng.standard_normal(sa).astype(dt)
            b = rng.standard_normal(sb).astype(dt)
            ha, hb = hnp.asarray(a), hnp.asarray(b)
            one = a.size == 1 or b.size == 1
            assert (_eager_shape.dot(ha, hb) is None) == one, (sa, sb)
            want = np.dot(a, b)
            general = np.matmul(ha, hb, casting="same_kind")
            for got in (np.dot(ha, hb), hnp.dot(ha, hb), ha.dot(hb)):
                g = np.asarray(got)
                assert type(got) is hnp.ndarray and got._scalar == isinstance(want, np.generic)
                assert (g.dtype, g.shape) == (want.dtype, np.shape(want)), (dt, sa, sb)
                np.testing.assert_allclose(g, want, rtol=1e-5 if dt == np.float32 else 1e-12)
                if not one:
                    np.testing.assert_array_equal(g, np.asarray(general))
    # a.dot is a C method (the fast path first); a NumPy scalar has none
    s = hnp.arange(3.0).sum()
    with pytest.raises(AttributeError, match="'numpy.float64' object has no attribute 'dot'"):
        s.dot
    assert not hasattr(s, "dot") and not hasattr(np.float64(1.0), "dot")
    assert hnp.ndarray.dot(hnp.arange(3.0), hnp.arange(3.0)) == 5.0
    # (the axpy of a one-element operand: a zero alpha gives zeros, NaN too)
    z, nan = hnp.asarray(np.array([0.0])), hnp.asarray(np.array([[np.nan], [1.0]]))
    for got in (np.dot(nan, z), hnp.dot(nan, z), nan.dot(z)):
        np.testing.assert_array_equal(np.asarray(got), np.dot(np.array([[np.nan], [1.0]]),
                                                              np.array([0.0])))
    # a transposed operand, mixed dtypes, a NumPy scalar: the general path
    a = rng.standard_normal((4, 3))
    ha = hnp.asarray(a)
    assert _eager.matmul(ha.T, ha) is None and _eager.matmul(ha, ha.T.astype(np.float32)) is None
    assert _eager.matmul(ha[0], hnp.float64(2.0)) is None and _eager.matmul(np.ones(3), ha) is None
    np.testing.assert_allclose(np.asarray(hnp.asarray(a).T @ hnp.asarray(a)), a.T @ a)
    m = np.asarray(hnp.asarray(a.astype(np.float32)) @ hnp.asarray(a.T))
    assert m.dtype == (a.astype(np.float32) @ a.T).dtype
    with pytest.raises(ValueError) as e:
        np.ones((2, 3)) @ np.ones((2, 3))
    with pytest.raises(ValueError) as h:
        hnp.ones((2, 3)) @ hnp.ones((2, 3))
    assert str(h.value) == str(e.value)
    big = np.full((2, 2), 3e38, np.float32)
    with warnings.catch_warnings(record=True) as wn:
        warnings.simplefilter("always")
        want = big @ big
    with warnings.catch_warnings(record=True) as wh:
        warnings.simplefilter("always")
        got = hnp.asarray(big) @ hnp.asarray(big)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert [str(w.message) for w in wh] == [str(w.message) for w in wn]
