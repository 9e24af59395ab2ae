"""hop.numpy's ufuncs' methods and attributes (hnp.add.reduce, .accumulate,
.reduceat, .outer, .at; nin, nout, ...), differentially: NumPy 1.24 vs
hop.numpy eagerly (hnp.<ufunc>.<method> and np.<ufunc>.<method> of hop
arrays) vs hop.compile of the same function written against numpy (and
against hop.numpy): values, dtype, shape, ndarray vs NumPy scalar, the
arguments after the call (`at`), and an exception's type and message."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import hop
import hop.numpy as hnp

from numpy_diff import as_numpy, copied, quiet_call, same

UFUNC_NAMES = sorted(n for n in dir(np) if isinstance(getattr(np, n), np.ufunc))
BINARY = [n for n in UFUNC_NAMES if getattr(np, n).nin == 2 and getattr(np, n).nout == 1 and
          n != "matmul"]


def _same_error(got, want, who):
    assert got is not None, f"{who}: NumPy raised {type(want).__name__}: {want}; hop did not"
    assert type(got) is type(want) and str(got) == str(want), \
        f"{who}: NumPy raised {type(want).__name__}({want}), hop {type(got).__name__}({got})"


def check(body, *args, exact=False):
    """body(m, *args) with m numpy, by NumPy; with m hop.numpy eagerly; with
    m numpy on hop arrays eagerly; compiled (hop.compile) with m numpy and
    with m hop.numpy: the same results (exact: the same bits), and the
    same arguments after the call."""
    want_args = copied(args)
    want, werr = quiet_call(lambda *a: body(np, *a), want_args)
    rtol = 0.0 if exact else None

    def compare(got, gerr, got_args, who):
        if werr is not None:
            _same_error(gerr, werr, who)
            return
        if gerr is not None:
            raise AssertionError(f"{who}: hop raised {type(gerr).__name__}: {gerr}") from gerr
        same(as_numpy(got), want, rtol, who)
        same([as_numpy(a) for a in got_args], list(want_args), rtol, f"{who}: arguments")
        if exact:
            _same_bits(as_numpy(got), want, who)

    a1 = copied(args)
    compare(*quiet_call(lambda *a: body(hnp, *a), a1), a1, "hnp eager")
    a2 = tuple(hnp.asarray(a) if isinstance(a, np.ndarray) else a for a in copied(args))
    compare(*quiet_call(lambda *a: body(np, *a), a2), a2, "np on hop arrays")
    a3 = copied(args)
    compare(*quiet_call(hop.compile(lambda *a: body(np, *a)), a3), a3, "compiled numpy")
    a4 = copied(args)
    compare(*quiet_call(hop.compile(lambda *a: body(hnp, *a)), a4), a4, "compiled hop.numpy")
    return want


def _same_bits(got, want, who):
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            _same_bits(g, w, who)
        return
    w = np.asarray(want)
    g = np.asarray(got)
    if w.dtype.kind in "fc":
        as_int = "u%d" % w.dtype.itemsize
        if w.dtype.kind == "c":
            w, g, as_int = w.view(w.real.dtype), g.view(g.real.dtype), "u%d" % (w.itemsize // 2)
        assert np.array_equal(np.ascontiguousarray(g).view(as_int),
                              np.ascontiguousarray(w).view(as_int)), f"{who}: bits {g} vs {w}"


# ------------------------------------------------------------ attributes

@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_attributes_are_numpys(name):
    f, u = getattr(hnp, name), getattr(np, name)
    for attr in ("nin", "nout", "nargs", "identity", "ntypes", "types", "signature", "__name__"):
        assert getattr(f, attr) == getattr(u, attr), (name, attr)
    for method in ("reduce", "accumulate", "reduceat", "outer", "at"):
        assert callable(getattr(f, method)), (name, method)
        assert getattr(f, method).__qualname__ == f"{u.__name__}.{method}"


def test_aliases_share_the_object():
    assert hnp.abs is hnp.absolute and hnp.conj is hnp.conjugate
    assert hnp.abs.reduce.__qualname__ == "absolute.reduce"


# ------------------------------------------------------------ data

F = np.array([[1.5, -2.0, 3.25, 0.5], [4.0, -0.5, 2.0, 8.0], [-1.0, 0.25, 6.0, -3.5]])
I = np.array([[3, -7, 12, 5], [9, 2, -4, 6], [1, 8, 3, -2]], np.int64)
I8 = np.array([[100, 27, -90, 5], [9, 120, -4, 60]], np.int8)
U = np.array([[3, 7, 12, 5], [9, 2, 4, 6]], np.uint16)
B = np.array([[True, False, True, True], [True, True, False, True]])
F32 = (F * 1.1).astype(np.float32)
DATA = {"f": F, "i": I, "i8": I8, "u": U, "b": B, "f32": F32}
# ufuncs whose reduce hop computes itself
OWN_REDUCE = ["add", "multiply", "maximum", "minimum", "logical_and", "logical_or", "subtract"]


def _ok_data(name, key):
    """Whether NumPy's ufunc has a loop for data `key` (others are checked
    as errors by test_reduce_errors_are_numpys)."""
    a = DATA[key]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            getattr(np, name)(a, a)
        except TypeError:
            return False
        except ArithmeticError:
            pass
        except ValueError:
            pass
    return True


REDUCE_KW = [{}, {"axis": 1}, {"axis": -1, "keepdims": True}, {"axis": None},
             {"axis": (0, 1)}, {"axis": ()}, {"dtype": np.float32}, {"initial": 2},
             {"axis": 0, "keepdims": True, "initial": -1}]


@pytest.mark.parametrize("kw", REDUCE_KW, ids=lambda kw: repr(kw))
@pytest.mark.parametrize("key", sorted(DATA))
@pytest.mark.parametrize("name", BINARY)
def test_reduce(name, key, kw):
    if not _ok_data(name, key):
        pytest.skip("no loop")
    check(lambda m, a: getattr(m, name).reduce(a, **kw), DATA[key])


@pytest.mark.parametrize("name", OWN_REDUCE)
@pytest.mark.parametrize("key", ["f", "i", "b"])
def test_reduce_where(name, key):
    w = np.array([[True, False, True, True]])
    check(lambda m, a: getattr(m, name).reduce(a, where=w, initial=1), DATA[key])
    check(lambda m, a: getattr(m, name).reduce(a, axis=1, where=w), DATA[key])


@pytest.mark.parametrize("name", OWN_REDUCE + ["bitwise_or", "hypot", "power"])
def test_reduce_out(name):
    a = DATA["f"] if name != "bitwise_or" else DATA["i"]

    def body(m, x, o):
        r = getattr(m, name).reduce(x, axis=1, out=o)
        return r, o
    check(body, a, np.zeros(3, a.dtype))


@pytest.mark.parametrize("name", OWN_REDUCE)
def test_reduce_positional_and_keyword_array(name):
    check(lambda m, a: getattr(m, name).reduce(a, 1, None, None, True), F)
    check(lambda m, a: getattr(m, name).reduce(array=a), F)
    check(lambda m, a: getattr(m, name).reduce(a, axis=1, dtype=None), F)


@pytest.mark.parametrize("args", [(np.zeros((0, 3)), {}), (np.zeros((0, 3)), {"axis": 1}),
                                  (np.float64(2.5), {}), (F, {"axis": 2}), (F, {"axis": (0, 0)}),
                                  (F, {"foo": 1}), (B, {"dtype": np.int8})])
@pytest.mark.parametrize("name", OWN_REDUCE + ["divide", "sin"])
def test_reduce_errors_are_numpys(name, args):
    a, kw = args
    check(lambda m, x: getattr(m, name).reduce(x, **kw), a)


ACC_KW = [{}, {"axis": 1}, {"axis": -1}, {"axis": None}, {"axis": (1,)}, {"axis": (0, 1)},
          {"dtype": np.float32}, {"dtype": np.int8}, {"keepdims": True}]


@pytest.mark.parametrize("kw", ACC_KW, ids=lambda kw: repr(kw))
@pytest.mark.parametrize("key", ["f", "i", "i8", "b"])
@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "subtract",
                                  "logical_or", "fmax"])
def test_accumulate(name, key, kw):
    if not _ok_data(name, key):
        pytest.skip("no loop")
    check(lambda m, a: getattr(m, name).accumulate(a, **kw), DATA[key])


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum"])
def test_accumulate_edges(name):
    check(lambda m, a: getattr(m, name).accumulate(a[0], axis=None), F)  # 1-d: fine
    check(lambda m, a: getattr(m, name).accumulate(a[0, 0]), F)  # 0-d: NumPy's TypeError
    check(lambda m, a: getattr(m, name).accumulate(a), np.zeros((0, 2)))
    check(lambda m, a, o: (getattr(m, name).accumulate(a, out=o), o)[1], F, np.zeros_like(F))


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_extreme_accumulate_nan_zero_bits(name):
    a = np.array([[0.0, -0.0, np.nan, 1.0, -np.nan, 2.0], [-0.0, 0.0, 0.0, -0.0, -1.0, -2.0]])
    for dt in (np.float64, np.float32, np.float16):
        check(lambda m, x: getattr(m, name).accumulate(x, axis=1), a.astype(dt), exact=True)


def test_subtract_reduce_bits():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((7, 33)) * 10.0 ** rng.integers(-8, 8, (7, 33))
    a[2, 5] = np.nan
    a[3, 0] = -np.nan
    for x in (a, a.astype(np.float32)):
        check(lambda m, y: m.subtract.reduce(y, axis=1), x, exact=True)
        check(lambda m, y: m.subtract.reduce(y), x, exact=True)
        check(lambda m, y: m.subtract.reduce(y[0], axis=None), x, exact=True)
    check(lambda m, y: m.subtract.reduce(y, axis=1), np.array([[-0.0, 0.0], [0.0, -0.0]]),
          exact=True)


REDUCEAT = [([0, 2], {}), ([0, 3, 1], {"axis": 1}), ([1, 1, 2], {"axis": -1}),
            ([0, 2], {"dtype": np.float32}), ([0, 5], {}), ([-1], {}), ([], {}),
            ([0, 1], {"axis": 2}), (np.array([2, 0]), {})]


@pytest.mark.parametrize("case", REDUCEAT, ids=repr)
@pytest.mark.parametrize("key", ["f", "i8", "b"])
@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "subtract"])
def test_reduceat(name, key, case):
    idx, kw = case
    if not _ok_data(name, key):
        pytest.skip("no loop")
    check(lambda m, a: getattr(m, name).reduceat(a, idx, **kw), DATA[key])


def test_reduceat_bits():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((5, 300)) * 1e3
    for name in ("add", "multiply", "maximum", "minimum"):
        check(lambda m, x: getattr(m, name).reduceat(x, [0, 100, 7, 299], axis=1), a, exact=True)
        check(lambda m, x: getattr(m, name).reduceat(x.T, [0, 100, 7, 299]), a, exact=True)


OUTER = [("add", "f"), ("multiply", "f"), ("multiply", "i"), ("subtract", "i8"),
         ("less", "f"), ("logical_and", "b"), ("maximum", "f32"), ("arctan2", "f"),
         ("hypot", "f"), ("divmod", "f"), ("power", "f")]


@pytest.mark.parametrize("kw", [{}, {"dtype": np.float32}, {"out": None}], ids=repr)
@pytest.mark.parametrize("case", OUTER, ids=repr)
def test_outer(case, kw):
    name, key = case
    check(lambda m, a: getattr(m, name).outer(a[0], a[1], **kw), DATA[key])
    check(lambda m, a: getattr(m, name).outer(a, a[0, :2], **kw), DATA[key])


def test_outer_scalars_and_errors():
    check(lambda m: m.multiply.outer(2, 3))
    check(lambda m: m.add.outer([1, 2], 3.5))
    check(lambda m, a: m.sin.outer(a, a), F)


AT = [("add", lambda: ([0, 0, 2], 1.0)), ("add", lambda: ((0, [1, 1]), [1.0, 2.0])),
      ("multiply", lambda: ([1, 1], 3.0)), ("maximum", lambda: ([0, 2], 5.0)),
      ("minimum", lambda: (slice(None), -1.0)), ("subtract", lambda: ([2, 0, 2], 0.5)),
      ("negative", lambda: ([0, 0],)), ("power", lambda: ([1], 2.0))]


@pytest.mark.parametrize("case", AT, ids=lambda c: c[0])
@pytest.mark.parametrize("key", ["f", "i"])
def test_at(case, key):
    name, args = case

    def body(m, a):
        getattr(m, name).at(a, *args())
        return a
    check(body, DATA[key].copy())


def test_at_writes_through_to_a_numpy_array():
    a = F.copy()
    hnp.add.at(a, [0, 0], 1.0)
    want = F.copy()
    np.add.at(want, [0, 0], 1.0)
    assert np.array_equal(a, want)


# ------------------------------------------------------------ traced: computed by hop

@pytest.mark.parametrize("expr", [
    lambda m, a: m.add.reduce(a, axis=1), lambda m, a: m.maximum.accumulate(a, axis=1),
    lambda m, a: m.minimum.accumulate(a), lambda m, a: m.multiply.outer(a[0], a[1]),
    lambda m, a: m.logical_and.reduce(a > 0), lambda m, a: m.subtract.reduce(a, axis=1),
    lambda m, a: m.add.reduceat(a, [0, 2], axis=1), lambda m, a: m.maximum.reduce(a, dtype=np.float32),
    lambda m, a: m.add.accumulate(a, axis=None) if a.ndim == 1 else m.multiply.accumulate(a)])
def test_traced_without_numpy(expr):
    """hop.trace records these (no NumPy call on traced values)."""
    gm = hop.trace(lambda a: expr(np, a), F)
    same(gm(F * 2), expr(np, F * 2))


def test_traced_fallback_is_an_error_not_a_wrong_answer():
    with pytest.raises(hop.UnsupportedError, match="numpy.hypot.reduce"):
        hop.trace(lambda a: np.hypot.reduce(a), F)
    with pytest.raises(hop.UnsupportedError, match="numpy.hypot.reduce"):
        hop.trace(lambda a: hnp.hypot.reduce(a), F)


# ------------------------------------------------------------ hypothesis

_DT = st.sampled_from([np.float64, np.float32, np.int32, np.int8, np.bool_])


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(["add", "multiply", "maximum", "minimum", "subtract",
                             "logical_or", "bitwise_xor", "fmin"]),
       method=st.sampled_from(["reduce", "accumulate", "reduceat"]),
       shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), dt=_DT,
       axis=st.one_of(st.none(), st.integers(-3, 2)), seed=st.integers(0, 2 ** 16))
def test_hypothesis_methods(name, method, shape, dt, axis, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 4).astype(dt)
    kw = {} if axis is None and method != "reduce" else {"axis": axis}
    if method == "reduceat":
        n = shape[axis if axis is not None and -len(shape) <= axis < len(shape) else 0]
        idx = list(rng.integers(0, max(n, 1), 3))
        check(lambda m, x: getattr(m, name).reduceat(x, idx, **kw), a)
    else:
        check(lambda m, x: getattr(getattr(m, name), method)(x, **kw), a)
