"""The eager fast path of hop.numpy's shape functions (hop.numpy._eager_shape):
reshape, basic indexing, concatenate and where on concrete arrays give what
NumPy gives (values, dtype, shape, type, memory shared, writes through views,
read-only, errors), and exactly what the general path gives (_eager_shape.FAST
off), over many layouts and dtypes."""

import contextlib
import itertools

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from hop.numpy import _eager_shape

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64,
          np.complex64, np.complex128]


@contextlib.contextmanager
def general_path():
    _eager_shape.fast(False)
    try:
        yield
    finally:
        _eager_shape.fast(True)


def _base(dtype, n=24):
    v = np.arange(n) % 7 - 2
    if dtype is np.bool_:
        return (v > 0)
    return v.astype(dtype)


def layouts(dtype):
    """(name, NumPy array, the same hop.numpy array made the same way): C,
    0-d, empty, transposed, Fortran, sliced, reversed, broadcast and
    read-only layouts."""
    a = _base(dtype)
    h = hnp.asarray(a.copy())
    n = h._t.numpy()  # (the hop array's own memory: its views are NumPy's of it)
    yield "1d", n, h
    yield "2d", n.reshape(4, 6), h.reshape(4, 6)
    yield "3d", n.reshape(2, 3, 4), h.reshape(2, 3, 4)
    yield "transposed", n.reshape(4, 6).T, h.reshape(4, 6).T
    yield "fortran", n.reshape(6, 4).T.T.T, h.reshape(6, 4).T.T.T
    yield "strided", n[::2], h[::2]
    yield "reversed", n[::-1], h[::-1]
    yield "ones", n.reshape(2, 1, 12), h.reshape(2, 1, 12)
    yield "broadcast", np.broadcast_to(n[:6], (4, 6)), hnp.broadcast_to(h[:6], (4, 6))
    z = hnp.asarray(_base(dtype, 0))
    yield "empty", z._t.numpy(), z
    z2 = hnp.zeros((0, 3), dtype=dtype)
    yield "empty2d", z2._t.numpy(), z2
    d = hnp.asarray(np.asarray(_base(dtype, 1)[0]))
    d0 = d.reshape(())
    yield "0d", d0._t.numpy(), d0


def _as_np(r):
    return np.asarray(r)


def check_same(h_res, n_res, h_base=None, n_base=None):
    """h_res (hop.numpy) is NumPy's n_res: type, dtype, shape, values,
    read-only, and (with bases) whether it shares memory with the base and a
    write through it reaches the base."""
    if isinstance(n_res, np.generic):
        assert isinstance(h_res, hnp.ndarray) and h_res._scalar
    else:
        assert type(h_res) is hnp.ndarray and not h_res._scalar
    v = _as_np(h_res)
    assert v.dtype == n_res.dtype
    assert v.shape == np.shape(n_res)
    np.testing.assert_array_equal(v, n_res)
    if isinstance(n_res, np.ndarray):
        assert h_res.flags.writeable == n_res.flags.writeable
    if h_base is not None:
        shares = np.shares_memory(n_res, n_base) if isinstance(n_res, np.ndarray) else False
        assert np.shares_memory(_as_np(h_res), _as_np(h_base)) == shares
        if shares and n_res.flags.writeable and n_res.size:
            # a write through hop's view reaches the memory exactly where
            # NumPy's view of the same memory (n_base is hop's base's) lies
            saved = n_base.copy()
            mark = np.array(not n_res.flat[0] if n_res.dtype == bool else 99, n_res.dtype)
            h_res[...] = mark
            assert (n_res == mark).all()
            assert int((n_base != saved).sum()) <= n_res.size
            np.testing.assert_array_equal(_as_np(h_base), n_base)
            h_base[...] = saved


def same_as_general(fn):
    """fn() by the fast path and by the general path: the same type, dtype,
    shape, strides, values, flags, NumPy scalar or not, and base; or the same
    error (type and text)."""
    def run():
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001
            return ("error", type(e), str(e))
        return r
    fast = run()
    with general_path():
        slow = run()
    if isinstance(fast, tuple):
        assert fast == slow
        return
    assert not isinstance(slow, tuple), slow
    assert type(fast) is type(slow)
    assert fast._scalar == slow._scalar and fast._ro == slow._ro
    assert (fast._cp is None) == (slow._cp is None)
    # the same base: an argument, or a new array each call made alike (a
    # result in K order is a view of one)
    assert (fast._ob is None) == (slow._ob is None)
    assert fast._ob is slow._ob or fast._ob.shape == slow._ob.shape
    assert fast._t.dtype is slow._t.dtype and fast.shape == slow.shape
    assert fast.strides == slow.strides
    assert fast._t.is_contiguous() == slow._t.is_contiguous()
    np.testing.assert_array_equal(_as_np(fast), _as_np(slow))


def errors_alike(hfn, nfn):
    with pytest.raises(Exception) as ne:
        nfn()
    with pytest.raises(Exception) as he:
        hfn()
    assert isinstance(he.value, type(ne.value)), (he.value, ne.value)
    assert str(he.value) == str(ne.value)


# ------------------------------------------------------------------ reshape

SHAPES = [(-1,), (4, 6), (6, -1), (-1, 1), (1, -1), (2, 3, 4), (24,), (2, 1, 12), 24, [3, 8],
          (1, 24, 1), (), (1,), (0,), (0, 3), (-1, 3), (5, 5), (4, 7), (-1, -1), (-2, 4),
          (3, -2), (True, 24)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_is_numpys_and_the_general_paths(dtype):
    for (name, n, h), shape in itertools.product(layouts(dtype), SHAPES):
        for hcall, ncall in ((lambda: h.reshape(shape), lambda: n.reshape(shape)),
                             (lambda: hnp.reshape(h, shape), lambda: np.reshape(n, shape)),
                             (lambda: np.reshape(h, shape), lambda: np.reshape(n, shape))):
            try:
                nr = ncall()
            except Exception:  # noqa: BLE001
                errors_alike(hcall, ncall)
                same_as_general(hcall)
                continue
            check_same(hcall(), nr, h, n)
            same_as_general(hcall)


@pytest.mark.parametrize("dtype", DTYPES)
def test_ravel_is_numpys_and_the_general_paths(dtype):
    # a.ravel() of an array in C order is the reshape fast path's view
    # (a C method, role "ravel": 0.85 us of Python before); every other
    # layout (a copy), order= and a NumPy scalar are the Python method's
    for name, n, h in layouts(dtype):
        for hcall, ncall in ((lambda: h.ravel(), lambda: n.ravel()),
                             (lambda: h.ravel("C"), lambda: n.ravel("C")),
                             (lambda: h.ravel(order="F"), lambda: n.ravel(order="F")),
                             (lambda: np.ravel(h), lambda: np.ravel(n))):
            check_same(hcall(), ncall(), h, n)
            same_as_general(hcall)
    s = hnp.arange(3.0, dtype=dtype).sum() if dtype is not np.bool_ else hnp.asarray([True])[0]
    check_same(s.ravel(), np.asarray(s).ravel())


def test_ravel_takes_the_fast_path_for_c_ordered_arrays():
    from hop.numpy import _funcs
    assert type(hnp.ndarray.ravel).__name__ != "function"  # (the C method)
    h = hnp.arange(12.0).reshape(3, 4).copy()  # (owns its memory)
    r = h.ravel()
    assert r.base is h and np.shares_memory(np.asarray(r), np.asarray(h))
    r[5] = 50.0
    assert float(h[1, 1]) == 50.0
    assert not np.shares_memory(np.asarray(h.T.ravel()), np.asarray(h))  # (a copy)
    g = _funcs.ravel(h, _kind=hnp.ndarray)
    assert g.base is r.base and g._tv.stride() == r._tv.stride()


def test_reshape_of_read_only_array_stays_read_only():
    b = hnp.broadcast_to(hnp.arange(4.0), (4,))
    assert not b.flags.writeable
    r = b.reshape(2, 2)
    assert not r.flags.writeable
    with pytest.raises(ValueError):
        r[0, 0] = 1
    same_as_general(lambda: b.reshape(2, 2))


def test_reshape_view_writes_reach_base_and_base_writes_reach_view():
    h = hnp.arange(16.0)
    v = h.reshape(4, 4)
    v[1, 2] = 99
    assert float(h[6]) == 99
    h[0] = -5
    assert float(v[0, 0]) == -5
    assert v.base is h and v.reshape(2, 8).base is h


def test_reshape_order_f_and_method_forms_take_the_general_path():
    h = hnp.arange(12)
    n = h._t.numpy()  # (hop's memory: NumPy's views of it are where hop's must be)
    for args, kw in (((3, 4), {"order": "F"}), (((3, 4),), {"order": "F"}), ((None,), {}),
                     (((3, 4),), {"order": "A"})):
        check_same(h.reshape(*args, **kw), n.reshape(*args, **kw), h, n)
    errors_alike(lambda: h.reshape(), lambda: n.reshape())
    errors_alike(lambda: h.reshape(3.0, 4), lambda: n.reshape(3.0, 4))


# ----------------------------------------------------------------- indexing

KEYS = [0, 3, -1, -24, 23, 24, -25, slice(2, 5), slice(None), slice(None, None, 2),
        slice(-5, None), slice(1, 100, 3), slice(100, 200), slice(5, 2), slice(None, None, -1),
        slice(None, None, 0), None, Ellipsis, (), (None,), (Ellipsis, None), (0, 0), (1, -1),
        (slice(1, 3), 2), (None, 1, None), (Ellipsis, 0), (0, Ellipsis), (0, Ellipsis, 0),
        (Ellipsis, Ellipsis), (0, 0, 0, 0), (slice(1, 2), None, slice(None, None, 2)),
        (-1, slice(None), None), (True,), True, np.int64(1), (0, 5), (5, 0),
        [1, 2], (slice(0, 1), 0, 0), (0, 0, 0)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_basic_indexing_is_numpys_and_the_general_paths(dtype):
    for (name, n, h), key in itertools.product(layouts(dtype), KEYS):
        try:
            nr = n[key]
        except Exception:  # noqa: BLE001
            errors_alike(lambda: h[key], lambda: n[key])
            same_as_general(lambda: h[key])
            continue
        check_same(h[key], nr, h, n)
        same_as_general(lambda: h[key])


def test_integer_index_is_a_scalar_copy_and_slice_a_view():
    h = hnp.arange(10)
    s = h[3]
    assert s._scalar and isinstance(s, hnp.ndarray)
    h[3] = 42
    assert int(s) == 3
    v = h[2:5]
    v[0] = -7
    assert int(h[2]) == -7 and v.base is h
    w = h.reshape(2, 5)[1, None, 1:]
    assert w.shape == (1, 4) and w.strides == np.arange(10).reshape(2, 5)[1, None, 1:].strides
    w[0, 0] = 100
    assert int(h[6]) == 100


def test_indexing_of_read_only_view_stays_read_only():
    b = hnp.broadcast_to(hnp.arange(6), (3, 6))
    v = b[1:, 2:4]
    assert not v.flags.writeable
    with pytest.raises(ValueError):
        v[0, 0] = 1


# -------------------------------------------------------------- concatenate

@pytest.mark.parametrize("dtype", DTYPES)
def test_concatenate_is_numpys_and_the_general_paths(dtype):
    arrays = list(layouts(dtype))
    for (n1, a, h), (n2, b, k) in itertools.product(arrays, arrays[:6] + arrays[-3:]):
        for axis in (0, 1, -1, 2, -3, None):
            for seq in (list, tuple):
                hc = lambda: hnp.concatenate(seq([h, k]), axis)  # noqa: E731
                nc = lambda: np.concatenate(seq([a, b]), axis)  # noqa: E731
                try:
                    nr = nc()
                except Exception:  # noqa: BLE001
                    errors_alike(hc, nc)
                    same_as_general(hc)
                    continue
                r = hc()
                check_same(r, nr, h, a)
                assert not np.shares_memory(np.asarray(r), np.asarray(k))
                # NumPy's own function reaches the fast path in __array_function__
                check_same(np.concatenate(seq([h, k]), axis), nr, h, a)
                same_as_general(hc)
                same_as_general(lambda: np.concatenate(seq([h, k]), axis=axis))


def test_concatenate_promotes_mixed_dtypes_and_takes_keywords_as_the_general_path():
    h = hnp.arange(4, dtype=np.int8)
    f = hnp.arange(4.0, dtype=np.float32)
    n, g = np.arange(4, dtype=np.int8), np.arange(4.0, dtype=np.float32)
    check_same(hnp.concatenate([h, f]), np.concatenate([n, g]))
    check_same(hnp.concatenate([h, h, h]), np.concatenate([n, n, n]))
    check_same(hnp.concatenate([h]), np.concatenate([n]))
    check_same(hnp.concatenate([h, f], dtype=np.float64), np.concatenate([n, g], dtype=np.float64))
    check_same(hnp.concatenate([h, [1, 2]]), np.concatenate([n, [1, 2]]))
    errors_alike(lambda: hnp.concatenate([]), lambda: np.concatenate([]))
    errors_alike(lambda: hnp.concatenate([f, h], casting="no"),
                 lambda: np.concatenate([g, n], casting="no"))
    errors_alike(lambda: hnp.concatenate([h, h], axis=1.0),
                 lambda: np.concatenate([n, n], axis=1.0))
    assert not np.shares_memory(np.asarray(hnp.concatenate([h])), np.asarray(h))


# -------------------------------------------------------------------- where

def _operands(dtype):
    a = _base(dtype, 12).reshape(3, 4)
    h = hnp.asarray(a.copy())
    yield h, h._t.numpy()
    yield h[0], h._t.numpy()[0]
    yield h.T, h._t.numpy().T
    yield h[:, ::-1], h._t.numpy()[:, ::-1]
    yield h[:1], h._t.numpy()[:1]
    for v in (0, 1, -1, True, False, 2.5, 300, -129, 70000, 1e39, 2**40, float("nan"),
              3 + 1j, np.float32(2)):
        yield v, v


@pytest.mark.parametrize("dtype", DTYPES)
def test_where_is_numpys_and_the_general_paths(dtype):
    c0 = (np.arange(12) % 3 == 0).reshape(3, 4)
    conds = [(hnp.asarray(c0.copy()), c0), (hnp.asarray(c0[0].copy()), c0[0]),
             (hnp.asarray(np.arange(12).reshape(3, 4) % 2), np.arange(12).reshape(3, 4) % 2),
             (hnp.asarray(c0.copy()).T, c0.T), (hnp.asarray(np.ones((2, 4), bool)),
                                                np.ones((2, 4), bool))]
    others = list(_operands(np.float32)) + list(_operands(np.int16))[:5]
    for (hc, nc), (hx, nx), (hy, ny) in itertools.product(conds, list(_operands(dtype)),
                                                          others):
        hw = lambda: hnp.where(hc, hx, hy)  # noqa: E731
        nw = lambda: np.where(nc, nx, ny)  # noqa: E731
        try:
            nr = nw()
        except Exception:  # noqa: BLE001
            errors_alike(hw, nw)
            same_as_general(hw)
            continue
        check_same(hw(), nr)
        check_same(np.where(hc, hx, hy), nr)
        same_as_general(hw)
        same_as_general(lambda: np.where(hc, hx, hy))


def test_where_result_is_new_memory_and_scalar_keys_follow_value_casting():
    h = hnp.arange(4, dtype=np.int8)
    n = np.arange(4, dtype=np.int8)
    for v in (127, 128, -128, -129, 255, 256, 2**31, 1.0, 70000.0, 1e39):
        check_same(hnp.where(h > 1, h, v), np.where(n > 1, n, v))
        check_same(hnp.where(h > 1, v, h), np.where(n > 1, v, n))
    r = hnp.where(h > 1, h, 0)
    assert not np.shares_memory(np.asarray(r), np.asarray(h))


G = hnp.arange(4.0)  # a concrete hop.numpy array the traced function reads


def test_fast_paths_are_off_while_tracing():
    seen = []

    def f(x):
        # the gates: even an eager array (G) takes the general path while
        # hop traces
        seen.append((_eager_shape.reshape(G, (2, 2)), _eager_shape.getitem(G, 1),
                     _eager_shape.concatenate([G, G], 0), _eager_shape.where(G > 1, G, 0)))
        return hnp.where(x > 0, x.reshape(2, 2)[:, 0:1], 0), hnp.concatenate([x, x]), G[1:3] * x[:2]

    x = np.arange(4.0)
    out = hop.compile(f)(x)
    assert seen and all(r == (None, None, None, None) for r in seen)
    np.testing.assert_array_equal(out[0], np.where(x > 0, x.reshape(2, 2)[:, 0:1], 0))
    np.testing.assert_array_equal(out[1], np.concatenate([x, x]))
    np.testing.assert_array_equal(out[2], np.arange(4.0)[1:3] * x[:2])
    # and they answer again after it
    assert _eager_shape.reshape(G, (2, 2)) is not None


def test_extreme_keys_and_shapes_fall_back_without_crashing():
    h = hnp.arange(24.0).reshape(2, 3, 4)
    n = h._t.numpy()
    for key in ((slice(-2**70, 2**70),), slice(None, None, 2**70), slice(2**63, None)):
        same_as_general(lambda: h[key])  # (NumPy's answer: the xfail below)
    for key in (2**70, -2**70, 2**62, (0, 0, 0, 0, 0), (None,) * 30, (Ellipsis, None) * 2):
        try:
            nr = n[key]
        except Exception:  # noqa: BLE001
            same_as_general(lambda: h[key])
            with pytest.raises(Exception):
                h[key]
            continue
        check_same(h[key], nr, h, n)
        same_as_general(lambda: h[key])
    for shape in ((2**62, -1), 2**70, (2**31, 2**31, 0), (-1, 2**62), (24,) + (1,) * 40):
        same_as_general(lambda: h.reshape(shape))
        with pytest.raises(Exception):
            n.reshape(shape)
        with pytest.raises(Exception):
            h.reshape(shape)


def test_where_of_lists_broadcast_and_read_only_operands_is_numpys():
    c = np.array([True, False, True, False])
    hc = hnp.asarray(c.copy())
    h = hnp.arange(4, dtype=np.int16)
    n = np.arange(4, dtype=np.int16)
    b = hnp.broadcast_to(hnp.arange(4.0, dtype=np.float32), (3, 4))
    nb = np.broadcast_to(np.arange(4.0, dtype=np.float32), (3, 4))
    for x, y, nx, ny in (([1, 2, 3, 4], h, [1, 2, 3, 4], n), (h, [0.5] * 4, n, [0.5] * 4),
                         (b, h, nb, n), (h, b, n, nb), (b, 7, nb, 7), (True, h, True, n),
                         (h[::2], 1, n[::2], 1)):
        hw = lambda: hnp.where(hc if np.shape(nx) != (2,) else hc[:2], x, y)  # noqa: E731
        nw = lambda: np.where(c if np.shape(nx) != (2,) else c[:2], nx, ny)  # noqa: E731
        check_same(hw(), nw())
        same_as_general(hw)
    errors_alike(lambda: hnp.where(hc, h, hnp.arange(3)), lambda: np.where(c, n, np.arange(3)))
    errors_alike(lambda: hnp.where(hc, h), lambda: np.where(c, n))


@pytest.mark.parametrize("key", [slice(-2**70, 2**70), slice(None, None, 2**70),
                                 slice(2**63, None), slice(None, -2**70), slice(None, None, -2**70),
                                 slice(2**70, -2**70, -1), slice(-2**64, 3), slice(1, 2**64, 2)])
def test_slice_bounds_beyond_int64_are_clamped_as_numpys(key):
    h = hnp.arange(6.0)
    n = h._t.numpy()  # (h's memory: check_same writes through the views)
    check_same(h[key], n[key], h, n)
    check_same(h.reshape(2, 3)[:, key], n.reshape(2, 3)[:, key])
    f = hop.compile(lambda a: a[key] * 2)
    np.testing.assert_array_equal(f(np.arange(6.0)), np.arange(6.0)[key] * 2)


@pytest.mark.parametrize("key", [slice(0.5, 1), slice(None, None, 1.0), (slice(0, 1), 0.5),
                                 (slice(0.5, None), 0)])
def test_too_many_indices_is_the_error_before_a_float_slice_bound(key):
    for a in (np.array(3.0), np.arange(3.0)):
        errors_alike(lambda: hnp.asarray(a.copy())[key], lambda: a[key])


def test_where_with_none_operands_is_numpys_object_array_or_a_clear_dtype_error():
    c, n = np.array([True, False]), np.arange(2.0)
    h = hnp.asarray(n.copy())
    for args in ((h, None), (None, h), (None, None), (1.0, None)):
        with pytest.raises(hop.DTypeError, match="numpy.where|where: NumPy dtype object is not "
                                                 "supported"):
            hnp.where(hnp.asarray(c), *args)
    # hop.compile gives eager's object array (NumPy's code answers the call)
    for f in (lambda a: np.where(c, a, None), lambda a: np.where(c, None, None)):
        want = f(n.copy())
        got = hop.compile(f)(n.copy())
        assert type(got) is np.ndarray and got.dtype == object and list(got) == list(want)
    # not given is not None: nonzero with neither, NumPy's ValueError with one
    check_same(hnp.where(hnp.asarray(c))[0], np.where(c)[0])
    errors_alike(lambda: hnp.where(hnp.asarray(c), h), lambda: np.where(c, n))


@pytest.mark.parametrize("shape", [(2, 3), (3, 2, 4), (1, 3), (2, 1, 3), (4, 1)])
def test_concatenate_lays_out_its_result_in_its_inputs_memory_order_as_numpy(shape):
    base = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    layouts = {"C": base.copy(), "F": np.asfortranarray(base),
               "moved": np.ascontiguousarray(np.moveaxis(base, 0, -1)).transpose(
                   len(shape) - 1, *range(len(shape) - 1)),
               "strided": np.repeat(base, 2, axis=-1)[..., ::2]}
    for (ka, a), (kb, b) in itertools.product(layouts.items(), repeat=2):
        for axis in range(-len(shape), len(shape)):
            want = np.concatenate([a, b], axis)
            got = hnp.concatenate([hnp.asarray(a), hnp.asarray(b)], axis)
            check_same(got, want)
            assert np.asarray(got).strides == want.strides, (ka, kb, axis)
    # broadcast rows (a zero stride has a say, unlike in the iterator's order)
    nb = np.broadcast_to(np.arange(4.0), (3, 4))
    hb = hnp.broadcast_to(hnp.arange(4.0), (3, 4))
    for axis in (0, 1):
        want = np.concatenate([nb, nb], axis)
        got = hnp.concatenate([hb, hb], axis)
        check_same(got, want)
        assert np.asarray(got).strides == want.strides
    # compiled: a plan lays out in C order (its values are the same)
    f = hop.compile(lambda a, b: np.concatenate([a, b], 1))
    a = layouts["F"]
    np.testing.assert_array_equal(f(a, a), np.concatenate([a, a], 1))
