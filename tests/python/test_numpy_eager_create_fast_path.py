"""The eager fast path of hop.numpy's zeros, ones and empty
(python/_C/np_eager_create.c): a shape of exact ints and a dtype the table
maps make the new array in C (the general path, _funcs._filled, cost ~2 us
against NumPy's 0.08).  Each call is checked against NumPy (shape, dtype,
strides, values but empty's, errors and their text) by the fast path and by
the general path, and the fast path is checked to take what it should.  The
general path's own shape checks are NumPy's now too (a negative size, one
beyond intp, a size in bytes beyond intp were hop's InvalidError,
OverflowError and MemoryError)."""

import inspect
import math

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from hop.numpy import _eager_shape
from test_numpy_eager_shape_fast_path import general_path

SHAPES = [0, 1, 16, (), (3,), (4, 4), [2, 3], (2, 0, 3), (1, 1, 1, 1), np.int64(3),
          [np.int64(2)], 2.0, (2, 2.0), True, (True,), -1, (2, -3), 2**63, (2**40, 2**40),
          (0, 2**62), (2**62, 4), (-1, 2**63), (2**62, -1), (0, -1), (3, 0, 2**61), None,
          "ab", (2, None)]
DTYPES = [None, float, int, bool, complex, np.float64, np.float32, np.float16, np.int8, np.uint8,
          np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.bool_, np.complex64,
          np.complex128, "f4", "float32", "<f8", "i8", "u1", "?", "d", np.dtype("int16"), "c8",
          "U3", object, "datetime64[s]", "bogus"]
UNSUPPORTED = ["U3", object, "datetime64[s]"]


def _made(fn):
    """fn(): (shape, dtype, strides, values) of its result, or its error
    (type, text)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            return (type(e).__name__, str(e))
    v = np.asarray(r)
    return (v.shape, v.dtype, v.strides, v)


def _alike(got, want, values):
    assert got[:3] == want[:3], (got[:3], want[:3])
    if len(want) == 4 and values:
        np.testing.assert_array_equal(got[3], want[3])


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_creation_is_numpys_by_the_fast_and_the_general_path(name):
    h, n, fast = getattr(hnp, name), getattr(np, name), getattr(_eager_shape, name)
    for shape in SHAPES:
        for dtype in DTYPES:
            forms = [((shape,), {}), ((shape, dtype), {}), ((shape,), {"dtype": dtype})]
            for args, kw in forms:
                if dtype is None and not kw and len(args) == 2:
                    continue
                want = _made(lambda: n(*args, **kw))
                if dtype in UNSUPPORTED and len(args) + len(kw) == 2:
                    # (a dtype hop has not: its DTypeError, or NumPy's error)
                    got = _made(lambda: h(*args, **kw))
                    assert got[0] == "DTypeError" or got == want, (shape, dtype, got, want)
                    continue
                _alike(_made(lambda: h(*args, **kw)), want, name != "empty")
                with general_path():
                    _alike(_made(lambda: h(*args, **kw)), want, name != "empty")
                    assert fast(*args, **kw) is None  # (the fast path is off)
    # what the fast path takes: exact ints (one, a tuple or a list) >= 0 and
    # a dtype of its table, positional or dtype=
    for args, kw in [((16,), {}), (((4, 4),), {}), (([2, 3],), {}), ((0,), {}),
                     ((3, np.float32), {}), ((3,), {"dtype": int}), ((3,), {"dtype": "f4"}),
                     (((2, 0, 3), "?"), {})]:
        r = fast(*args, **kw)
        assert type(r) is hnp.ndarray and r._ob is None and not r._ro, (args, kw)
    # what it leaves: order=, a shape keyword, NumPy ints, other dtypes,
    # float16 and complex ones, a size in bytes beyond intp
    for args, kw in [((16,), {"order": "F"}), ((), {"shape": 3}), ((np.int64(3),), {}),
                     (((0, 2**62),), {})] + \
            ([((3, np.float16), {}), ((3, complex), {})] if name == "ones" else []):
        assert fast(*args, **kw) is None, (args, kw)
        _alike(_made(lambda: h(*args, **kw)), _made(lambda: n(*args, **kw)), name != "empty")


def test_the_functions_keep_their_names_signatures_and_trace_behaviour():
    for name in ("zeros", "ones", "empty"):
        f = getattr(hnp, name)
        assert f.__name__ == name and "eager fast path" in repr(f)
        assert list(inspect.signature(f).parameters)[:2] == ["shape", "dtype"]
    # traced: the general path (a constant of the plan), the same answers
    cf = hop.compile(lambda x: x + hnp.zeros(3) + hnp.ones((3,), dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(cf(hnp.arange(3.0))), np.arange(3.0) + 1)
    cf2 = hop.compile(lambda x: x * hnp.ones(x.shape[0], dtype=int))
    for n in (3, 5):
        got = cf2(hnp.arange(float(n)))
        np.testing.assert_array_equal(np.asarray(got), np.arange(float(n)))


def test_ones_fills_every_element_of_every_dtype_and_size():
    for dtype in (bool, np.int8, np.uint16, np.int32, np.uint64, np.float32, np.float64):
        for n in (1, 2, 3, 7, 8, 1000, 4097):
            r = np.asarray(hnp.ones(n, dtype))
            assert r.dtype == np.dtype(dtype) and (r == 1).all(), (dtype, n)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32,
                                   np.float64, np.complex64, np.complex128])
def test_copy_is_numpys_and_the_general_paths(dtype):
    # a.copy() is a C method: an array's elements copied in C order by the
    # fast path, in every layout of its memory (transposed, strided,
    # broadcast); a view hop made as a copy (reversed), a NumPy scalar and
    # an order= the general path's (NumPy's order='C' result in each case)
    from test_numpy_eager_shape_fast_path import check_same, layouts, same_as_general
    taken = {"1d", "2d", "3d", "ones", "empty", "empty2d", "0d", "transposed", "fortran",
             "strided", "broadcast"}
    for name, n, h in layouts(dtype):
        fast = h.copy.__self__ is h and _copy_taken(h)
        assert fast == (name in taken), name
        got, want = h.copy(), n.copy()
        check_same(got, want)
        assert got.strides == want.strides and got._ob is None and got.flags.writeable
        same_as_general(lambda: h.copy())
        # (a new array: a write to it does not reach the original)
        if got.size:
            before = np.asarray(h).copy()
            got[...] = np.ones((), dtype)
            np.testing.assert_array_equal(np.asarray(h), before)
    s = hnp.arange(3.0).sum()
    assert s.copy()._scalar and float(s.copy()) == 3.0
    f = hnp.asarray(np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    assert f.copy("F").strides == np.asfortranarray(np.arange(6.0).reshape(2, 3)).copy("F").strides


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32,
                                   np.float64, np.complex128])
def test_flatten_is_numpys_and_the_general_paths(dtype):
    # a.flatten() is a C method: the copy fast path's C-order copy as one
    # dimension, in every layout of the array's memory; a copy-view, a NumPy
    # scalar and order= the general path's
    from test_numpy_eager_shape_fast_path import check_same, layouts, same_as_general
    taken = {"1d", "2d", "3d", "ones", "empty", "empty2d", "0d", "transposed", "fortran",
             "strided", "broadcast"}
    for name, n, h in layouts(dtype):
        assert _taken(lambda: h.flatten()) == (name in taken), name
        got, want = h.flatten(), n.flatten()
        check_same(got, want)
        assert got.strides == want.strides and got._ob is None and got.flags.writeable
        same_as_general(lambda: h.flatten())
        if got.size:
            before = np.asarray(h).copy()
            got[...] = np.ones((), dtype)
            np.testing.assert_array_equal(np.asarray(h), before)
        for order in ("F", "A", "K"):
            assert not _taken(lambda: h.flatten(order))
            check_same(h.flatten(order), n.flatten(order))
            # (K order is NumPy's iterator's: a broadcast axis, stride 0,
            # keeps its place, where it had been put innermost)
            np.testing.assert_array_equal(np.asarray(h.ravel(order)), n.ravel(order))
    s = hnp.arange(3.0).sum()
    assert not _taken(lambda: s.flatten())
    np.testing.assert_array_equal(np.asarray(s.flatten()), np.float64(3.0).flatten())


def _copy_taken(h):
    """Whether h.copy() took the fast path (the Python method never ran)."""
    return _taken(h.copy)


def _taken(fn):
    """Whether fn() (a.copy(), a.astype(...)) took the fast path: the
    Python method, which makes its array by _ufuncs.in_memory_order, never
    ran."""
    from hop.numpy import _ufuncs
    import warnings
    calls = []
    real = _ufuncs.in_memory_order
    _ufuncs.in_memory_order = lambda *a, **k: calls.append(1) or real(*a, **k)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the callers compare the warnings)
            fn()
    except Exception:  # noqa: BLE001 - (the callers compare the errors)
        pass
    finally:
        _ufuncs.in_memory_order = real
    return not calls


def _with_warnings(fn):
    """fn()'s result (or its error's type and text) and the texts of the
    warnings it gave."""
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            r = (type(e).__name__, str(e))
    return r, [(x.category, str(x.message)) for x in w]


ALL = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
       np.float16, np.float32, np.float64, np.complex64, np.complex128]
TO = ALL + [None, float, int, bool, complex, "f4", "float64", "i2", "u1", "?", "<f8",
            np.dtype("int32"), "c16", "U3", "bogus", [1]]
C_ORDER = {"1d", "2d", "3d", "ones", "empty", "empty2d", "0d"}


def _fast_astype(src, dt, values):
    """Whether the fast path converts an array of src in C order to dt
    holding values: its own dtype (a copy); a float's truncation to an
    integer other than uint32 and uint64 whose values lie in (-2**31 - 1,
    2**31) ([-2**63, 2**63) for int64); other conversions but float16's and
    a complex's to another kind (np_eager_create.c astype_direct)."""
    import math
    try:
        if isinstance(dt, list) or np.dtype(dt).kind in "UV" or np.dtype(dt).kind == "O":
            return False
        to = np.dtype(dt)
    except TypeError:
        return False
    src = np.dtype(src)
    if to == src:
        return True
    if np.float16 in (src.type, to.type):
        return False
    if src.kind == "c":
        return to.kind == "c"
    if src.kind == "f" and to.kind in "iu":
        if to in (np.dtype(np.uint32), np.dtype(np.uint64)):
            return False
        lo, hi = (-2.0 ** 63, 2.0 ** 63) if to == np.dtype(np.int64) else \
            (math.nextafter(-2147483649.0, 0), 2147483648.0)
        return all(lo <= float(v) < hi for v in np.asarray(values, dtype=np.float64).ravel())
    return True


@pytest.mark.parametrize("src", ALL)
def test_astype_is_numpys_and_the_general_paths(src):
    # a.astype(dtype) is a C method: a C-ordered array converted by the
    # fast path where its conversion is the general path's one op; every
    # other layout, a NumPy scalar, keywords and the other conversions the
    # general path's; results, dtypes, strides, warnings and errors NumPy's
    import warnings
    from test_numpy_eager_shape_fast_path import check_same, layouts, same_as_general
    for name, n, h in layouts(src):
        for dt in TO:
            got, gw = _with_warnings(lambda: h.astype(dt))
            if dt == "U3":  # (a dtype hop has no array of: NumPy's own astype of the values)
                want, ww = _with_warnings(lambda: n.astype(dt))
                assert type(got) is type(want) and got.dtype == want.dtype and gw == ww, (name, dt)
                np.testing.assert_array_equal(got, want)
                continue
            want, ww = _with_warnings(lambda: n.astype(dt))
            assert gw == ww, (name, dt)
            if isinstance(want, tuple):
                assert got == want, (name, dt)
                continue
            fast = _taken(lambda: h.astype(dt))
            assert fast == (name in C_ORDER and _fast_astype(src, dt, n)), (name, dt)
            check_same(got, want)
            assert got.strides == want.strides and got._ob is None and got.flags.writeable
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (compared above)
                same_as_general(lambda: h.astype(dt))
            if got.size:  # (a new array: a write to it does not reach the original)
                before = np.asarray(h).copy()
                got[...] = np.zeros((), got.dtype)
                np.testing.assert_array_equal(np.asarray(h), before)


EDGES = [0.0, -0.0, 1.5, -1.5, 2.7, -2.7, 127.9, 128.0, -128.9, 255.5, 300.0, -300.0, 65535.9,
         2.0 ** 31 - 1, 2.0 ** 31 - 0.5, 2.0 ** 31, -2.0 ** 31, -2.0 ** 31 - 0.5, -2.0 ** 31 - 1,
         3e9, -3e9, 2.0 ** 53 + 2, 2.0 ** 63 - 1024, 2.0 ** 63, -2.0 ** 63, -2.0 ** 63 - 2048,
         1e300, -1e300, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("src", [np.float32, np.float64])
@pytest.mark.parametrize("to", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                np.int64, np.uint64, np.bool_])
def test_astype_of_floats_to_integers_is_numpys_at_every_edge(src, to):
    # a float's truncation to an integer by the fast path where NumPy's
    # loops truncate with no flag, else the general path's NumPy cast (its
    # values and its "invalid value encountered in cast"); each edge alone
    # and beside an ordinary value, whose array the fast path then leaves
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (1e300 to float32 is inf)
        cases = [np.array([v], dtype=src) for v in EDGES] + \
            [np.array([1.0, v, 2.0], dtype=src) for v in EDGES]
    for n in cases:
        h = hnp.asarray(n.copy())
        assert _taken(lambda: h.astype(to)) == _fast_astype(src, to, n), n
        got, gw = _with_warnings(lambda: h.astype(to))
        want, ww = _with_warnings(lambda: n.astype(to))
        assert gw == ww, n
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=str(n))


def test_astype_under_errstate_raises_as_numpy_and_narrows_with_numpys_warning():
    big = np.array([1e300, 1.0])
    h = hnp.asarray(big.copy())
    got, gw = _with_warnings(lambda: h.astype(np.float32))
    want, ww = _with_warnings(lambda: big.astype(np.float32))
    assert gw == ww and ww and np.array_equal(np.asarray(got), want)
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError) as e:
            big.astype(np.float32)
        with pytest.raises(FloatingPointError) as g:
            h.astype(np.float32)
        assert str(g.value) == str(e.value)
        # (a conversion by hop's op is then the general path's; a copy and a
        # truncation, which raise no flag, are the fast path's still)
        assert not _taken(lambda: hnp.arange(3.0).astype(np.float32))
        assert _taken(lambda: hnp.arange(3.0).astype(np.float64))
        assert _taken(lambda: hnp.arange(3.0).astype(np.int32))
    with np.errstate(all="ignore"):
        got, gw = _with_warnings(lambda: h.astype(np.float32))
        assert gw == [] and np.array_equal(np.asarray(got), big.astype(np.float32))


def test_astype_keywords_scalars_and_traces_take_the_general_path():
    h = hnp.arange(6.0).reshape(2, 3)
    assert not _taken(lambda: h.astype(np.float32, order="F"))
    assert h.astype(np.float32, order="F").strides == \
        np.arange(6.0).reshape(2, 3).astype(np.float32, order="F").strides
    assert not _taken(lambda: h.astype(np.float32, copy=False))
    assert h.astype(np.float64, copy=False) is h
    s = h.sum()
    assert not _taken(lambda: s.astype(np.float32))
    r = s.astype(np.float32)
    assert r._scalar and np.asarray(r).dtype == np.float32 and float(r) == 15.0
    with pytest.raises(TypeError) as e:
        h.astype(np.float16, casting="safe")
    with pytest.raises(TypeError) as w:
        np.arange(6.0).astype(np.float16, casting="safe")
    assert str(e.value) == str(w.value)

    def f(x):
        return x.astype(np.int32) + 1
    x = np.arange(6.0) - 2.5
    np.testing.assert_array_equal(np.asarray(hop.trace(f, x)(x)), x.astype(np.int32) + 1)
    cf = hop.compile(lambda x: x.astype(np.int64) * 2)
    np.testing.assert_array_equal(cf(x), x.astype(np.int64) * 2)
    assert cf.eager_calls == 0


def test_len_shape_ndim_and_size_are_the_python_properties_answers():
    # len(a), a.shape, a.ndim, a.size: C reads of a concrete array's tensor
    # (np_eager.c fast_attr); a traced array, a copy-view and a run's view
    # are the Python properties' (the same answers), len() of a 0-d array
    # NumPy's TypeError
    from test_numpy_eager_shape_fast_path import layouts
    from hop.numpy import _ndarray
    for name, n, h in layouts(np.float64):
        assert h.shape == n.shape and h.ndim == n.ndim and h.size == n.size, name
        assert type(h.shape) is tuple and all(type(d) is int for d in h.shape)
        assert h.shape == _ndarray.ndarray.shape.fget.__wrapped__(h)
        if n.ndim:
            assert len(h) == len(n)
        else:
            with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
                len(h)
    s = hnp.arange(3.0).sum()
    assert (s.shape, s.ndim, s.size) == ((), 0, 1)

    def f(x):
        return x * (x.shape[0] + x.ndim + x.size + len(x))
    cf = hop.compile(f, dynamic=True)
    for k in (3, 5):
        x = np.arange(float(k))
        np.testing.assert_array_equal(np.asarray(cf(x)), f(x))


# ---------------------------------------------------------------- asarray

def _asarray_cases():
    """NumPy arrays of every kind hnp.asarray meets: views with their own
    strides and bases, size-1 dims, 0-d, every dtype of hop's, and what the
    fast path leaves to the general one (empty, negative strides, another
    byte order, read-only, a subclass)."""
    ro = np.arange(3.0)
    ro.flags.writeable = False
    base = np.arange(24.0).reshape(2, 3, 4)
    return [np.arange(16.0), base, base.T, base[:, 1:2, :], base[1], base[:, :, ::2],
            np.arange(16.0)[::2], np.array(2.0), np.ones((3, 1)), np.ones((1, 3)),
            np.arange(12).reshape(3, 4)[:, :1], np.arange(12.0).reshape(3, 1, 4),
            np.array([True, False]), np.arange(6, dtype=np.uint16).reshape(2, 3),
            np.arange(4, dtype=np.float32), np.arange(4, dtype=np.int8), np.array([1 + 2j]),
            np.zeros(0), np.arange(4.0)[::-1], np.arange(4).astype(">i4"), ro,
            np.asarray([[1.0, 2.0]]).view(np.ma.MaskedArray), np.arange(4, dtype=np.float16)]


def test_asarray_of_a_numpy_array_by_the_fast_path_is_the_general_paths():
    # hnp.asarray(a) was ~2.5 us of Python (_funcs.array) for an array
    # over a's memory; the fast path makes the same array in C: the same
    # tensor layout, the same slots (NumPy's base: a's base when a is a
    # view), memory shared both ways
    from hop.numpy._funcs import asarray as general
    from hop.numpy._ndarray import ndarray
    slots = [s for s in ndarray.__slots__ if s not in ("_tv", "__weakref__")]
    taken = 0
    for a in _asarray_cases():
        fast = _eager_shape.asarray(a)
        g = general(a)
        if not a.dtype.isnative:  # (NumPy keeps '>i4', a hop.numpy array cannot: s48)
            with pytest.raises(hop.DTypeError, match="in the other byte order"):
                hnp.asarray(a)
        else:
            assert type(hnp.asarray(a)) is type(g)
        if fast is None:
            assert type(a) is not np.ndarray or a.size == 0 or not a.flags.writeable or \
                any(s < 0 for s in a.strides) or not a.dtype.isnative, (a.dtype, a.strides)
            continue
        taken += 1
        assert type(fast) is ndarray and fast._tv.stride() == g._tv.stride()
        # the Tensor's base is the NumPy array (what the guards read)
        assert hop._C._base(fast._tv) is a and hop._C._base(g._tv) is a
        for s in slots:
            assert getattr(fast, s) is getattr(g, s) or getattr(fast, s) == getattr(g, s), s
        got = np.asarray(fast)
        assert got.dtype == a.dtype and got.shape == a.shape and got.strides == a.strides
        assert np.shares_memory(got, a) and np.array_equal(got, a)
        h = hnp.asarray(a)
        assert np.asarray(h).strides == a.strides and h._ob is g._ob
    assert taken >= 15


def test_asarray_by_the_fast_path_shares_memory_and_keeps_the_array_alive():
    import gc
    a = np.arange(6.0).reshape(2, 3).copy()  # (owns its memory)
    h = hnp.asarray(a)
    a[0, 1] = 40.0
    h[1, 2] = 50.0
    assert np.asarray(h).tolist() == [[0.0, 40.0, 2.0], [3.0, 4.0, 50.0]] and a[1, 2] == 50.0
    v = a[1]  # a view: its base is a
    hv = hnp.asarray(v)
    assert hv._ob is a
    del a, v
    gc.collect()
    assert np.asarray(h).tolist() == [[0.0, 40.0, 2.0], [3.0, 4.0, 50.0]]
    assert (hv + 1.0).tolist() == [4.0, 5.0, 51.0]


def test_asarray_leaves_arguments_and_traces_to_the_general_path():
    a = np.arange(4.0)
    assert _eager_shape.asarray(a) is not None
    assert _eager_shape.asarray(a, np.float32) is None  # (a dtype: the general path's cast)
    assert _eager_shape.asarray(a, dtype=None) is None
    assert _eager_shape.asarray([1.0, 2.0]) is None and _eager_shape.asarray(3.0) is None
    h = hnp.asarray(a)
    assert _eager_shape.asarray(h) is None and hnp.asarray(h) is h
    assert hnp.asarray(a, dtype=np.float32).dtype == np.float32
    seen = []

    def f(x):
        r = hnp.asarray(a)
        seen.append(_eager_shape.asarray(a))
        return x + r
    assert np.asarray(hop.compile(f)(np.ones(4))).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert seen and all(s is None for s in seen)  # (tracing: the gates closed)


def _like_taken(fn):
    """Whether fn() (a *_like call) took the fast path: _funcs._like, the
    general path's, never ran."""
    from hop.numpy import _funcs
    calls = []
    real = _funcs._like
    _funcs._like = lambda *a, **k: calls.append(1) or real(*a, **k)
    try:
        fn()
    finally:
        _funcs._like = real
    return not calls


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32,
                                   np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "copy"])
def test_like_functions_are_numpys_and_the_general_paths(name, dtype):
    # hnp.zeros_like(a) (a C callable) and np.zeros_like(a) (a's
    # __array_function__, a C method) of an array in C order make a new
    # C-ordered array of its dtype and shape by the fast path (ones_like
    # not for float16 and complex: the general path's); every other layout
    # keeps NumPy's K order by the general path.  np.copy(a) likewise (its
    # order='K': a.copy()'s C order only for an array in C order)
    from test_numpy_eager_shape_fast_path import layouts, same_as_general
    h_fn, n_fn = getattr(hnp, name), getattr(np, name)
    for lay, n, h in layouts(dtype):
        want = n_fn(n)
        for call in (lambda: h_fn(h), lambda: n_fn(h)):
            fast = _taken(call) if name == "copy" else _like_taken(call)
            assert fast == (lay in C_ORDER and not (
                name == "ones_like" and np.dtype(dtype).type in (np.float16, np.complex64,
                                                                  np.complex128))), (lay, call)
            got = call()
            assert type(got) is hnp.ndarray and not got._scalar and got._ob is None
            assert np.asarray(got).dtype == want.dtype and got.shape == want.shape
            assert got.strides == want.strides and got.flags.writeable
            if name != "empty_like":
                np.testing.assert_array_equal(np.asarray(got), want)
                same_as_general(call)
            if got.size:  # (a new array: a write to it does not reach a)
                before = np.asarray(h).copy()
                got[...] = np.ones((), dtype)
                np.testing.assert_array_equal(np.asarray(h), before)


def test_like_functions_with_arguments_scalars_and_traces_take_the_general_path():
    h = hnp.arange(6.0).reshape(2, 3)
    for call, ncall in ((lambda: hnp.zeros_like(h, dtype=np.int32),
                         lambda: np.zeros_like(np.arange(6.0).reshape(2, 3), dtype=np.int32)),
                        (lambda: np.ones_like(h, order="F"),
                         lambda: np.ones_like(np.arange(6.0).reshape(2, 3), order="F")),
                        (lambda: hnp.empty_like(h, shape=(3,)),
                         lambda: np.empty_like(np.arange(6.0).reshape(2, 3), shape=(3,))),
                        (lambda: np.zeros_like(h, np.float32),
                         lambda: np.zeros_like(np.arange(6.0).reshape(2, 3), np.float32))):
        assert not _like_taken(call)
        got, want = call(), ncall()
        assert np.asarray(got).dtype == want.dtype and got.strides == want.strides
    s = h.sum()
    assert not _like_taken(lambda: np.zeros_like(s))
    assert np.asarray(np.zeros_like(s)).shape == () and float(np.zeros_like(s)) == 0.0
    n = np.arange(3.0)
    assert not _like_taken(lambda: hnp.ones_like(n))  # (a NumPy array)
    assert np.asarray(hnp.ones_like(n)).tolist() == [1.0, 1.0, 1.0]
    cf = hop.compile(lambda x: np.ones_like(x) + x)
    np.testing.assert_array_equal(cf(n), np.ones_like(n) + n)
    assert cf.eager_calls == 0


ARANGES = [(5,), (0,), (-3,), (1, 7), (7, 1), (10, 0, -3), (0, 10, 3), (-5, 5, 2), (3, 3),
           (2**62, 2**62 + 5), (0, 2**62, 2**61), (5, 0, -1), (0.1, 1.0, 0.2), (-0.0, 1.0),
           (16.0,), (0.5, 3), (1, 2, 0.1), (0.0, 1.0, 0.3), (-1.5, 1.5, 0.5), (10.0, 0.0, -0.7),
           (1e-300, 2e-300, 3e-301), (0.1, 0.35, 0.05), (1, 2.0), (3.0, 3.0), (5.0, 1.0),
           (0, 1, 1e-5), (2**53, 2**53 + 4, 1.0), (-0.0, 2.0), (1, 1e300, 1e299),
           # what stays the general path's, and its errors
           (True,), (np.int64(4),), (np.float64(2.5),), (2**63,), (0, 5, 0), (0.0, 5.0, 0.0),
           (0.0, math.inf), (math.nan,), (0, 1, 1e-20), (2**64, 2**64 + 2), ("3",), (None,)]


def _arange_outcome(fn, *args):
    try:
        r = fn(*args)
    except Exception as e:  # noqa: BLE001 - compared with NumPy's
        return (type(e).__name__,)
    v = np.asarray(r)
    return (type(r).__name__ if not isinstance(r, np.ndarray) else "ndarray", v.dtype, v.shape,
            v.tobytes())


@pytest.mark.parametrize("args", ARANGES, ids=str)
def test_arange_is_numpys_and_the_general_paths(args):
    # hnp.arange of exact Python ints (int64: start + i * step) or numbers
    # one of them a float (float64: start + i * ((start + step) - start),
    # NumPy's fill) is made in C; the rest is the general path's; either
    # way NumPy's dtype, length and bits, or NumPy's kind of error
    from hop.numpy import _funcs
    from test_numpy_eager_shape_fast_path import general_path
    want = _arange_outcome(np.arange, *args)
    calls = []
    real = _funcs._creation_dtype
    _funcs._creation_dtype = lambda *a: calls.append(1) or real(*a)
    try:
        got = _arange_outcome(hnp.arange, *args)
    finally:
        _funcs._creation_dtype = real
    with general_path():
        slow = _arange_outcome(hnp.arange, *args)
    if len(want) > 1 and want[1] == np.dtype(object):  # (a dtype hop has no array of)
        assert got == slow == ("DTypeError",)
        return
    exact = all(type(v) in (int, float) for v in args) and \
        all(-2**63 <= v < 2**63 for v in args if type(v) is int) and \
        all(math.isfinite(v) for v in args if type(v) is float)
    if len(want) == 1:  # an error: NumPy's kind (the general path's text)
        assert got == slow and got[0] in (want[0], "DTypeError"), (got, want)
        return
    assert got[1:] == want[1:] == slow[1:], (got, want, slow)
    assert got[0] == "ndarray"
    if all(-2**63 <= v < 2**63 for v in args if type(v) is int):
        # (an int beyond int64 is NumPy's arange's own, by the general path,
        # which then asks no dtype of _creation_dtype)
        assert (not calls) == exact, args


FULL_VALUES = [0, 1, -1, 7, 300, -129, 2**40, 2**63 - 1, 2**63, True, False, 0.0, -0.0, 2.5,
               -1e300, 1e300, 3.4e38, math.nan, math.inf, 1 + 2j, np.float32(1.5), "3", None]
FULL_DTYPES = [None, float, int, bool, np.float32, np.int8, np.uint8, np.int16, np.uint64,
               np.float16, np.complex64, "f8", "i4"]


def _full_outcome(fn):
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            return (type(e).__name__,), []
    v = np.asarray(r)
    return (type(r).__name__, v.dtype, v.shape, v.strides, v.tobytes()), \
        [(x.category, str(x.message)) for x in w]


@pytest.mark.parametrize("dtype", FULL_DTYPES, ids=str)
def test_full_is_numpys_and_the_general_paths(dtype):
    # hnp.full(shape, number[, dtype]) is made in C where the number
    # converts to the dtype as a plain C conversion (the dtype NumPy gives
    # the number without one: bool, int64, float64); the rest (a float into
    # an integer dtype, an int out of range, float16, complex, an array or
    # NumPy scalar value) is the general path's; values, dtype, warnings and
    # error kinds NumPy's
    from hop.numpy import _funcs
    from test_numpy_eager_shape_fast_path import general_path
    for shape in (4, (2, 3), (), (0, 2)):
        for value in FULL_VALUES:
            forms = [((shape, value), {})] if dtype is None else \
                [((shape, value, dtype), {}), ((shape, value), {"dtype": dtype})]
            for args, kw in forms:
                want, ww = _full_outcome(lambda: np.full(*args, **kw))
                calls = []
                real = _funcs.new_sizes
                _funcs.new_sizes = lambda *a: calls.append(1) or real(*a)
                try:
                    got, gw = _full_outcome(lambda: hnp.full(*args, **kw))
                finally:
                    _funcs.new_sizes = real
                with general_path():
                    slow, sw = _full_outcome(lambda: hnp.full(*args, **kw))
                assert got == slow and gw == sw, (args, kw)
                if len(want) == 1 or want[1] == np.dtype(object):
                    assert len(got) == 1, (args, kw, got)
                    continue
                if value is None or isinstance(value, str):
                    continue  # (NumPy's object or str arrays: hop's errors)
                assert got[1:] == want[1:] and gw == ww, (args, kw, got, want)
                if not calls:  # (taken: exact Python numbers only)
                    assert type(value) in (bool, int, float), (args, kw)


def test_large_blocks_kept_per_thread_are_reused_and_given_back_when_the_thread_ends():
    # core/alloc.c keeps a thread's freed blocks of 32 KiB to 64 MiB for its
    # next ones (an eager temporary of 1M doubles came back from the system
    # on every call): the same memory serves the next result of that size,
    # the values are each call's own, and a thread that ends gives its
    # blocks back (the live count returns to where it was)
    import gc
    import threading
    from hop import _C
    n = 1 << 17  # (1 MiB of float64)
    a = hnp.arange(float(n))
    ((a * 2.0) - 1.0).std()  # (the first calls' plans and caches, kept for good)
    gc.collect()
    live = _C._alloc_live()
    first = a + 1.0
    addr = np.asarray(first).__array_interface__["data"][0]
    del first
    again = a + 2.0
    assert np.asarray(again).__array_interface__["data"][0] == addr  # (the kept block)
    assert float(again[5]) == 7.0 and float(again[-1]) == n + 1.0
    del again
    errors = []

    def work(k):
        try:
            for i in range(20):
                r = (a * float(k)) - float(i)
                assert float(r[3]) == 3.0 * k - i and float(r[-1]) == (n - 1) * k - i
                s = r.std()  # (two temporaries of 1 MiB a call)
                assert abs(float(s) - float(np.arange(float(n)).std()) * k) < 1e-6 * k * n
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k + 1,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    gc.collect()
    # (this thread's own kept blocks count as freed too)
    assert _C._alloc_live() == live
