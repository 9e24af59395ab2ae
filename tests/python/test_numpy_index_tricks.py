"""NumPy's index tricks (mgrid, ogrid, r_, c_, index_exp), vectorize and
the conversions require, asfortranarray, isfortran and asarray_chkfinite
on hop: NumPy 1.24 against eager hop.numpy and against hop.compile of the
same NumPy program (numpy_diff.check): values, dtypes, shapes, types and
errors (type and text); traced parts of r_/c_ concatenated in the plan,
traced slice bounds refused (hop.trace's UnsupportedError, a graph break
of hop.compile), vectorize traced through hop.vmap or handed to NumPy."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hop
import hop.numpy as hnp
from budget import examples
from numpy_diff import check, same

X = np.arange(3.0)
Y = np.array([7, 8], dtype=np.int32)


def _hop_same(got, want):
    """An eager hop.numpy result against NumPy's: a hop.numpy array (list,
    tuple) of NumPy's dtype, shape and values; NumPy's matrix as it is."""
    if isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _hop_same(g, w)
        return
    if isinstance(want, np.matrix):
        assert type(got) is np.matrix
        np.testing.assert_array_equal(got, want)
        return
    assert type(got) is hnp.ndarray, type(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(np.asarray(got), want)


def _compiled_whole(fn, *args):
    """hop.compile(fn)(*args) equals NumPy's, in one plan (no graph break, no
    eager run)."""
    cf = hop.compile(fn)
    check(fn, *args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (an eager fallback warns)
        same(cf(*args), fn(*args))
    text = cf.explain()
    assert "graph break" not in text and "runs eagerly" not in text and "fallback" not in text, \
        text
    return text


def _raises_same(fn, *args):
    """NumPy and eager hop.numpy (fn of hop arrays) raise the same error,
    type and text."""
    with pytest.raises(Exception) as want:
        fn(*args)
    with pytest.raises(Exception) as got:
        fn(*[hnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)


# ------------------------------------------------------------------ objects

def test_objects_are_numpys_classes():
    it = np.lib.index_tricks
    assert isinstance(hnp.mgrid, it.MGridClass) and isinstance(hnp.ogrid, it.OGridClass)
    assert isinstance(hnp.r_, it.RClass) and isinstance(hnp.c_, it.CClass)
    assert len(hnp.r_) == 0 and len(hnp.c_) == 0
    assert hnp.index_exp is np.index_exp and hnp.s_ is np.s_
    assert hnp.index_exp[1:3, None] == np.index_exp[1:3, None]
    assert isinstance(hnp.vectorize(abs), np.vectorize)
    for name in ("mgrid", "ogrid", "r_", "c_", "vectorize", "require", "asfortranarray",
                 "isfortran", "asarray_chkfinite", "index_exp"):
        assert name in hnp.__all__, name


def test_numpys_objects_are_back_after_a_trace():
    saved = (np.r_, np.c_, np.mgrid, np.ogrid, np.vectorize._vectorize_call)
    hop.compile(lambda x: np.r_[x, 1] + np.mgrid[0:4])(X)
    assert (np.r_, np.c_, np.mgrid, np.ogrid, np.vectorize._vectorize_call) == saved
    assert type(np.r_) is np.lib.index_tricks.RClass


# ----------------------------------------------------------- mgrid, ogrid

GRIDS = [
    slice(0, 5), slice(0, 5, 2), slice(5), slice(-1, 1, 5j), slice(0, 1, 1j), slice(2, 8, 3j),
    slice(0.5, 2, 0.5), slice(0, 1, 0.3), slice(1, 0, -0.25), slice(np.float32(0), 2),
    slice(np.int8(1), np.int8(4)), slice(0, 3, np.complex64(4j)),
    (slice(0, 3), slice(0, 4)), (slice(0, 3), slice(0, 1, 3j)), (slice(0, 1, 0.25), slice(2, 4)),
    (slice(1, 3), slice(-1, 1, 0.5), slice(0, 2)), (slice(0, 2, 1j), slice(0, 1, 2j)),
    (slice(0, 0),), (slice(0, 3),), [slice(0, 2), slice(1, 3)],
]


@pytest.mark.parametrize("key", GRIDS, ids=repr)
@pytest.mark.parametrize("name", ["mgrid", "ogrid"])
def test_grid_eager(name, key):
    _hop_same(getattr(hnp, name)[key], getattr(np, name)[key])


@pytest.mark.parametrize("key", GRIDS, ids=repr)
def test_grid_compiled(key):
    def f(x):
        return np.mgrid[key], np.ogrid[key], x + 1
    _compiled_whole(f, X)


def test_grid_errors():
    for key in (3, (slice(0, 2), 3), "ab", (slice(0, "a"),)):
        with pytest.raises(Exception) as want:
            np.mgrid[key]
        with pytest.raises(Exception) as got:
            hnp.mgrid[key]
        assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


def test_grid_of_concrete_hop_bounds():
    n = hnp.asarray(np.int64(4))
    _hop_same(hnp.mgrid[0:n, 0:2], np.mgrid[0:4, 0:2])
    _hop_same(hnp.ogrid[hnp.float32(0.5):2], np.ogrid[np.float32(0.5):2])


def test_writes_into_a_grid_or_r_result():
    # (an item of np.r_ or np.mgrid is a new array: the writes compile;
    # tests/python/test_numpy_gaps_s34.py checks that no call runs eagerly)
    def f(x):
        g = np.mgrid[0:2, 0:3].astype(float)
        g[0, 0] = x.sum()
        return g
    check(f, X)

    def h(x):
        b = np.r_[0.0:4.0]
        b[1:] = x
        return b
    check(h, X)


@pytest.mark.parametrize("name", ["mgrid", "ogrid", "r_", "c_"])
@pytest.mark.parametrize("part", ["start", "stop", "step"])
def test_traced_slice_bound_is_refused(name, part):
    def f(x):
        v = x.sum()
        s = {"start": slice(v, 9), "stop": slice(0, v), "step": slice(0, 9, v)}[part]
        return getattr(np, name)[s]
    with pytest.raises(hop.UnsupportedError) as e:
        hop.trace(f, X)
    assert f"the {part} of a slice in numpy.{name}[...] is a traced float64 value of shape ()" \
        in str(e.value)
    # hop.compile: a graph break, where NumPy computes the statement
    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(cf(X), f(X))
        same(cf(X + 1), f(X + 1))
    assert f"the {part} of a slice in numpy.{name}[...]" in cf.explain()


def test_symint_bound_of_grid_is_refused_in_trace():
    def f(x):
        return np.mgrid[0:x.shape[0]] + x
    with pytest.raises(hop.UnsupportedError, match="is a symbolic size"):
        hop.trace(f, np.arange(4.0), dynamic=True)


def test_symint_bound_of_r_is_hops_arange():
    def f(x):
        return np.r_[x, 0:x.shape[0]]
    gm = hop.trace(f, np.arange(4.0), dynamic=True)
    for n in (3, 5):
        same(gm(np.arange(float(n))), f(np.arange(float(n))))


# ---------------------------------------------------------------- r_, c_

def _parts(x, y):
    """Keys of r_/c_ over arrays x (float64, 3) and y (int32, 2)."""
    return [
        ("r", (x, 0, y)), ("r", (x, y)), ("r", (y, 2.5)), ("r", (y, 7)), ("r", (y, True)),
        ("r", (y, np.float32(1.5))), ("r", (x.astype(np.float32), 1.5)),
        ("r", (y, 1 + 2j)), ("r", (x, slice(0, 2), slice(1, 2, 3j))), ("r", (x[0], x[1], y)),
        ("r", (x.sum(), y)), ("r", ([1, 2], x)), ("r", (x, [y[0], 1])),
        ("r", (np.float64(3), x)), ("r", (x,)), ("r", x),
        ("r", ("0,2", x, [1, 2, 3])), ("r", ("1,2", x, x)), ("r", ("0,2,0", x, [1, 2, 3])),
        ("r", ("0,3,1", x, x)), ("r", ("-1", x.reshape(3, 1), x.reshape(3, 1))),
        ("r", ("1", x.reshape(1, 3), x.reshape(1, 3))), ("r", ("0,2", x, slice(1, 4))),
        ("r", ("0,2,0", slice(0, 3), x)), ("r", (x.reshape(3, 1), np.ones((2, 1)))),
        ("c", (x, x)), ("c", (x, 2 * x, x)), ("c", (x.reshape(3, 1), x)),
        ("c", (x, slice(0, 3))), ("c", (x[:2], y)), ("c", (np.ones((3, 2)), x)),
        ("c", ("0,2", x, x)), ("c", (x, x[::-1])),
    ]


def _key(i, x, y):
    kind, key = _parts(x, y)[i]
    return (np.r_ if kind == "r" else np.c_), (hnp.r_ if kind == "r" else hnp.c_), key


N_PARTS = len(_parts(X, Y))


@pytest.mark.parametrize("i", range(N_PARTS))
def test_concatenator_eager(i):
    npo, hpo, key = _key(i, X, Y)
    want = npo[key]
    _, _, hkey = _key(i, hnp.asarray(X), hnp.asarray(Y))
    _hop_same(hpo[hkey], want)


@pytest.mark.parametrize("i", range(N_PARTS))
def test_concatenator_compiled_in_one_plan(i):
    def f(x, y):
        npo, _, key = _key(i, x, y)
        return npo[key]
    text = _compiled_whole(f, X, Y)
    assert "cat" in text


def test_concatenator_traced_by_hop_trace():
    gm = hop.trace(lambda x, y: np.r_[x, 0, y], X, Y)
    same(gm(X * 2, Y + 1), np.r_[X * 2, 0, Y + 1])
    gm = hop.trace(lambda x: hnp.c_[x, x * 2], hnp.asarray(X))
    got = gm(hnp.asarray(X + 1))
    assert type(got) is hnp.ndarray
    np.testing.assert_array_equal(np.asarray(got), np.c_[X + 1, 2 * X + 2])


@pytest.mark.parametrize("key", [
    lambda m, x: m.r_[x, "0,2"], lambda m, x: m.r_["a,b", x], lambda m, x: m.r_["x", x],
    lambda m, x: m.r_["0,2,a", x], lambda m, x: m.c_[x, np.ones((2, 2))],
    lambda m, x: m.r_[x.reshape(3, 1), x], lambda m, x: m.r_["2", x, x],
])
def test_concatenator_errors(key):
    check(lambda x: key(np, x), X)  # the type, compiled
    with pytest.raises(Exception) as want:
        key(np, X)
    with pytest.raises(Exception) as got:
        key(hnp, hnp.asarray(X))
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


def test_matrix_directives():
    hx = hnp.asarray(X)
    for d in ("r", "c"):
        _hop_same(hnp.r_[d, hx, hx], np.r_[d, X, X])
        _hop_same(hnp.r_[d, 1:4], np.r_[d, 1:4])
        check(lambda x, d=d: np.r_[d, x, x], X)  # compiled: NumPy's matrix (a break)
    a, b = np.ones((2, 2)), np.zeros((2, 2))  # (bmat reads them by name from this frame)
    _hop_same(hnp.r_["a, b; b, a"], np.r_["a, b; b, a"])
    assert a.sum() == 4 and b.sum() == 0
    with pytest.raises(hop.UnsupportedError, match="matrix directive"):
        hop.trace(lambda x: np.r_["r", x, x], X)


def test_concatenator_of_plain_values_gives_hop_arrays():
    _hop_same(hnp.r_[1:4, 0, [7, 8]], np.r_[1:4, 0, [7, 8]])
    _hop_same(hnp.c_[np.arange(3), [1, 2, 3]], np.c_[np.arange(3), [1, 2, 3]])
    with pytest.raises(ValueError, match="need at least one array to concatenate"):
        hnp.r_[()]


@st.composite
def _concat_spec(draw):
    """A key of r_ or c_: parts of slices, Python and NumPy scalars and 1-d
    arrays (passed as arguments), maybe a directive first."""
    parts, arrays = [], []
    for _ in range(draw(st.integers(1, 4))):
        what = draw(st.sampled_from(["slice", "cslice", "scalar", "array", "array"]))
        if what == "slice":
            a = draw(st.integers(-3, 3))
            parts.append(("v", slice(a, a + draw(st.integers(0, 4)), draw(st.sampled_from(
                [None, 1, 2, 0.5])))))
        elif what == "cslice":
            parts.append(("v", slice(draw(st.integers(-2, 2)), draw(st.integers(-2, 2)),
                                     complex(0, draw(st.integers(1, 4))))))
        elif what == "scalar":
            parts.append(("v", draw(st.sampled_from(
                [0, 3, -2, 1.5, True, np.float32(2.5), np.int8(3), np.int64(-1), 2j]))))
        else:
            dt = draw(st.sampled_from([np.int32, np.int64, np.float32, np.float64, np.bool_]))
            n = draw(st.integers(0, 3))
            arrays.append((np.arange(n) * 3 % 5).astype(dt))
            parts.append(("a", len(arrays) - 1))
    which = draw(st.sampled_from(["r_", "c_"]))
    if which == "r_" and draw(st.booleans()):
        parts.insert(0, ("v", draw(st.sampled_from(["0,2", "0,2,0", "1,2", "-1,2", "0,1"]))))
    return which, parts, arrays


@settings(max_examples=examples(40), deadline=None)
@given(_concat_spec())
def test_hypothesis_concatenators(spec):
    which, parts, arrays = spec

    def f(*arrs):
        key = tuple(arrs[v] if k == "a" else v for k, v in parts)
        return getattr(np, which)[key]
    try:
        want = f(*arrays)
    except Exception as e:  # noqa: BLE001 (compared below)
        with pytest.raises(type(e)):
            getattr(hnp, which)[tuple(hnp.asarray(arrays[v]) if k == "a" else v
                                      for k, v in parts)]
        check(f, *arrays)
        return
    got = getattr(hnp, which)[tuple(hnp.asarray(arrays[v]) if k == "a" else v
                                    for k, v in parts)]
    _hop_same(got, want)
    check(f, *arrays)


@st.composite
def _grid_spec(draw):
    out = []
    for _ in range(draw(st.integers(1, 3))):
        a = draw(st.integers(-3, 3))
        kind = draw(st.sampled_from(["int", "float", "complex"]))
        if kind == "int":
            out.append(slice(a, a + draw(st.integers(-1, 4)), draw(st.sampled_from([None, 1, 2]))))
        elif kind == "float":
            out.append(slice(a, a + draw(st.integers(0, 3)), draw(st.sampled_from([0.5, 0.3]))))
        else:
            out.append(slice(a, a + draw(st.integers(-2, 2)), complex(0, draw(st.integers(0, 4)))))
    return tuple(out) if len(out) > 1 or draw(st.booleans()) else out[0]


@settings(max_examples=examples(40), deadline=None)
@given(_grid_spec(), st.sampled_from(["mgrid", "ogrid"]))
def test_hypothesis_grids(key, name):
    check(lambda x: (getattr(np, name)[key], x * 2), X)
    try:
        want = getattr(np, name)[key]
    except Exception as e:  # noqa: BLE001 (NumPy's error: hop's is the same)
        with pytest.raises(type(e)) as got:
            getattr(hnp, name)[key]
        assert str(got.value) == str(e)
        return
    _hop_same(getattr(hnp, name)[key], want)


# --------------------------------------------------------------- vectorize

VFUNCS = {
    "affine": (lambda v: v * 2 + 1, {}),
    "tenth": (lambda v: v * 0.1, {}),
    "tenth_cached": (lambda v: v * 0.1, {"cache": True}),
    "sin": (lambda v: np.sin(v) + v, {}),
    "pair": (lambda v: (v, v * 2), {}),
    "otypes_f": (lambda v: v + 1, {"otypes": [np.float32]}),
    "otypes_i": (lambda v: v * 1.5, {"otypes": "i"}),
    "otypes_c": (lambda v: v * 1.5, {"otypes": [complex]}),
    "otypes_str": (lambda v: v // 2, {"otypes": "ld"}),
    "const": (lambda v: 3, {}),
    "half": (lambda v: v / 2, {}),
    "abs": (abs, {}),
    "where": (lambda v: np.where(v > 1, v, -v), {}),
}


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int32, np.int64, np.complex128])
@pytest.mark.parametrize("name", sorted(VFUNCS))
def test_vectorize(name, dt):
    fn, kw = VFUNCS[name]
    if name == "otypes_str":
        fn = lambda v: (v // 2, v / 2)  # noqa: E731
        if dt == np.complex128:
            return  # (NumPy's TypeError: no floor of complex; below)
    if name == "where" and dt == np.complex128:
        return
    x = (np.arange(6) - 2).astype(dt).reshape(2, 3)
    try:
        want = np.vectorize(fn, **kw)(x)
    except Exception as e:  # noqa: BLE001 (NumPy's error, eager and compiled)
        with pytest.raises(type(e)) as got:
            hnp.vectorize(fn, **kw)(hnp.asarray(x))
        assert str(got.value) == str(e)
        check(lambda a: np.vectorize(fn, **kw)(a), x)
        return
    _hop_same(hnp.vectorize(fn, **kw)(hnp.asarray(x)), want)
    if name == "otypes_i" or name == "otypes_str" and x.dtype.kind == "f":
        # NumPy converts each Python float with int() (NaN raises): a break
        check(lambda a: np.vectorize(fn, **kw)(a), x)
        cf = hop.compile(lambda a: np.vectorize(fn, **kw)(a))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same(cf(x), want)
        assert "NumPy converts to int" in cf.explain()
        return
    text = _compiled_whole(lambda a: np.vectorize(fn, **kw)(a), x)
    assert "vmap" in text


def test_vectorize_broadcasts_and_scalars():
    f = np.vectorize(lambda a, b: a * 10 + b)
    x, y = np.arange(3.0), np.arange(2)[:, None]
    _compiled_whole(lambda a, b: f(a, b), x, y)
    _compiled_whole(lambda a: f(a, 1.5), x)
    _compiled_whole(lambda a: f(a.sum(), 2), x)  # 0-d: a 0-d array, not a scalar
    want = np.vectorize(lambda v: v * 2)(2.0)
    assert type(want) is np.ndarray and want.shape == ()
    _hop_same(hnp.vectorize(lambda v: v * 2)(2.0), want)
    _hop_same(hnp.vectorize(lambda v: v * 2)(hnp.float64(2.0)), want)


def test_vectorize_excluded_and_keywords():
    def g(a, k, s=1.0):
        return a * k + s
    v = np.vectorize(g, excluded={1, "s"})
    _compiled_whole(lambda x: v(x, 3, s=0.5), X)
    _compiled_whole(lambda x: np.vectorize(g)(x, x[::-1], s=x), X)
    _hop_same(hnp.vectorize(g, excluded={1})(hnp.asarray(X), 3), v(X, 3))


def test_vectorize_empty():
    e = np.zeros((0, 2))
    _raises_same(lambda a: (hnp if isinstance(a, hnp.ndarray) else np).vectorize(
        lambda v: v)(a), e)
    check(lambda a: np.vectorize(lambda v: v)(a), e)
    check(lambda a: np.vectorize(lambda v: v, otypes="f")(a), e)
    _hop_same(hnp.vectorize(lambda v: v, otypes="f")(hnp.asarray(e)),
              np.vectorize(lambda v: v, otypes="f")(e))


def test_vectorize_python_number_semantics():
    # NumPy's loop calls pyfunc on Python floats: a float32 array's elements
    # computed in double, then cast (not float32 arithmetic)
    x = np.linspace(0, 1, 7, dtype=np.float32)
    f = np.vectorize(lambda v: v * 0.1 + 1e-9, otypes="f")
    want = f(x)
    assert want.dtype == np.float32
    assert not np.array_equal(want, x * np.float32(0.1) + np.float32(1e-9))
    _compiled_whole(lambda a: f(a), x)
    # and Python ints for an int8 array: no int8 wrap inside pyfunc
    i8 = np.array([100, 120, -128], dtype=np.int8)
    _compiled_whole(lambda a: np.vectorize(lambda v: v * 3 // 2)(a), i8)


@pytest.mark.parametrize("case", ["bool", "uint64", "math", "branch", "print", "signature",
                                  "object", "array_out"])
def test_vectorize_falls_back_to_numpy(case, capsys):
    x = X
    fn, kw = {
        "bool": (lambda v: v + v, {}), "uint64": (lambda v: v * 2, {}),
        "math": (lambda v: math.sin(v), {}), "branch": (lambda v: 1 if v > 0.5 else 0.5, {}),
        "print": (lambda v: print("elem", v) or v, {}),
        "signature": (lambda v: v.sum(), {"signature": "(n)->()"}),
        "object": (lambda v: None, {}), "array_out": (lambda v: np.array([v, v]), {}),
    }[case]
    if case == "bool":
        x = np.array([True, False])
    elif case == "uint64":
        x = np.array([2 ** 63 + 5, 1], dtype=np.uint64)
    elif case == "signature":
        x = np.arange(6.0).reshape(2, 3)

    def f(a):
        return np.vectorize(fn, **kw)(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = f(x)
        except Exception as e:  # noqa: BLE001
            want = e
        printed = capsys.readouterr().out
        cf = hop.compile(f)
        for _ in range(2):
            if isinstance(want, Exception):
                with pytest.raises(type(want)):
                    cf(x)
            else:
                same(cf(x), want)
            assert capsys.readouterr().out == printed  # every call prints as NumPy
    if case in ("math", "branch", "print", "signature", "bool", "uint64"):
        with pytest.raises((hop.UnsupportedError, hop.TraceError)):
            hop.trace(f, x)


def test_vectorize_effects_run_on_every_call():
    calls = []

    def pf(v):
        calls.append(1)
        return v * 2
    f = np.vectorize(pf)
    cf = hop.compile(lambda a: f(a))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            calls.clear()
            want = f(X)
            n = len(calls)
            calls.clear()
            same(cf(X), want)
            assert len(calls) == n == 4  # NumPy's: the first element twice


def test_vectorize_traced_by_hop_trace():
    f = np.vectorize(lambda v: v * v - 1)
    gm = hop.trace(lambda a: f(a), X)
    same(gm(X + 2), f(X + 2))


# ------------------------------------------- require and its kin

def _layouts():
    base = np.arange(12.0).reshape(3, 4)
    ro = base.copy()
    ro.flags.writeable = False
    return {"C": base, "F": np.asfortranarray(base), "view": base[:, ::2], "T": base.T,
            "readonly": ro, "1d": np.arange(4, dtype=np.int32), "0d": np.array(2.5)}


REQS = [None, "C", "F", "A", "W", "O", "E", ["C_CONTIGUOUS"], ["FORTRAN"], ["ALIGNED", "WRITEABLE"],
        "CW", "FO", ["owndata", "e"], ["ENSUREARRAY"], "cw"]


def _describe(r, arg):
    return (type(r), r.dtype, r.shape, r.flags.c_contiguous, r.flags.f_contiguous,
            r.flags.writeable, np.shares_memory(r, arg), r.tolist())


@pytest.mark.parametrize("req", REQS, ids=repr)
@pytest.mark.parametrize("layout", sorted(_layouts()))
def test_require(layout, req):
    a = _layouts()[layout]
    want = np.require(a, None, req)
    f = hop.compile(lambda x: np.require(x, None, req))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = f(a)
    assert _describe(got, a) == _describe(want, a)
    h = hnp.require(hnp.asarray(a), None, req)
    assert type(h) is hnp.ndarray and h.dtype == want.dtype
    assert (h.flags.c_contiguous, h.flags.f_contiguous) == \
        (want.flags.c_contiguous, want.flags.f_contiguous)
    np.testing.assert_array_equal(np.asarray(h), want)


def test_require_dtype_and_errors():
    check(lambda x: np.require(x, np.float32, "F"), np.arange(6).reshape(2, 3))
    check(lambda x: np.require(x, "i4"), X)
    for req, exc in (("CF", ValueError), ("X", KeyError), (["C", "FORTRAN"], ValueError)):
        with pytest.raises(exc) as want:
            np.require(X, None, req)
        with pytest.raises(exc) as got:
            hnp.require(hnp.asarray(X), None, req)
        assert str(got.value) == str(want.value)
        check(lambda x: np.require(x, None, req), X)


@pytest.mark.parametrize("layout", sorted(_layouts()))
@pytest.mark.parametrize("dtype", [None, np.float32])
def test_asfortranarray(layout, dtype):
    a = _layouts()[layout]
    want = np.asfortranarray(a, dtype)
    got = hop.compile(lambda x: np.asfortranarray(x, dtype))(a)
    assert _describe(got, a) == _describe(want, a)
    h = hnp.asfortranarray(hnp.asarray(a), dtype)
    assert type(h) is hnp.ndarray and h.shape == want.shape and h.dtype == want.dtype
    assert h.flags.f_contiguous == want.flags.f_contiguous
    np.testing.assert_array_equal(np.asarray(h), want)
    check(lambda x: np.asfortranarray([x[0], 1.0]), np.arange(3.0))


@pytest.mark.parametrize("layout", sorted(_layouts()))
def test_isfortran(layout):
    a = _layouts()[layout]
    want = np.isfortran(a)
    assert hnp.isfortran(hnp.asarray(a)) is want
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert hop.compile(lambda x: np.isfortran(x))(a) is want
    assert hnp.isfortran(hnp.float64(1.0)) is np.isfortran(np.float64(1.0))


@pytest.mark.parametrize("values", [[1.0, 2.0], [1.0, np.nan], [np.inf, 0.0], [-np.inf],
                                    [1 + 2j, 3j], [complex(np.nan, 0)], [complex(0, np.inf)]])
@pytest.mark.parametrize("dtype", [None, np.float32, np.float16])
def test_asarray_chkfinite_eager(values, dtype):
    if dtype is not None and isinstance(values[0], complex):
        return
    _raises_or_same = None
    try:
        want = np.asarray_chkfinite(np.array(values), dtype)
    except ValueError as e:
        _raises_or_same = e
    if _raises_or_same is not None:
        with pytest.raises(ValueError) as got:
            hnp.asarray_chkfinite(hnp.asarray(np.array(values)), dtype)
        assert str(got.value) == str(_raises_or_same) == "array must not contain infs or NaNs"
        with pytest.raises(ValueError, match="array must not contain infs or NaNs"):
            hnp.asarray_chkfinite(values, dtype)
    else:
        _hop_same(hnp.asarray_chkfinite(hnp.asarray(np.array(values)), dtype), want)
        _hop_same(hnp.asarray_chkfinite(values, dtype), want)


def test_asarray_chkfinite_compiled_checks_every_call():
    def f(x):
        return np.asarray_chkfinite(x) * 2

    def g(x):
        np.asarray_chkfinite(x)  # a check alone: its result unused
        return x + 1
    bad = np.array([1.0, np.nan, 3.0])
    inf = np.array([1.0, 2.0, np.inf])
    calls = [(X,), (bad,), (X,), (inf,), (X + 1,), (bad.astype(np.float32),),
             (X.astype(np.float32),)]
    for fn in (f, g):
        check(fn, calls=calls)
        cf = hop.compile(fn)
        for args in calls:
            try:
                fn(*args)
            except ValueError as want:
                with pytest.raises(ValueError) as got:
                    cf(*args)
                assert str(got.value) == str(want)
            else:
                same(cf(*args), fn(*args))
    # integer arrays have nothing to check; a list with traced items is checked
    _compiled_whole(lambda x: np.asarray_chkfinite(x.astype(np.int64)), X)
    check(lambda x: np.asarray_chkfinite([x[0], x[1] / 0.0]), X)
    check(lambda x: np.asarray_chkfinite(x, dtype=np.float32, order="F"), X)
    with pytest.raises(hop.TraceError, match="asarray_chkfinite"):
        hop.trace(f, X)
