"""The eager fast path of hop.numpy's ufuncs (_eager) gives what the general
path (_ufuncs.call_ufunc) gives and what NumPy 1.24 gives: the values, the
dtype, the type (a hop.numpy.ndarray, never a NumPy scalar) and the strides,
for every dtype pair and operand kind it takes; it takes what it should
(the common cases: `a + b`, `a * 2.0`, `a < b`, np.sin(a)) and leaves the
rest (keywords, 0-d operands, errstate that raises, tracing) to the general
path."""
import math

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from hop.numpy import _eager
from hop.numpy._ndarray import ndarray
from hop.numpy._ufuncs import call_ufunc

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
# (int values for every dtype: unsigned ones wrap, bool is nonzero)
_VALUES = [0, 1, -2, 3, 7, -5, 100, 2, -1, 5, 6, 9]
BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "maximum",
          "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
          "bitwise_and", "bitwise_or", "bitwise_xor", "arctan2", "hypot", "copysign", "fmod",
          "fmax", "fmin", "logaddexp", "heaviside", "gcd", "lcm", "left_shift", "right_shift",
          "ldexp", "nextafter", "power"]
UNARY = ["negative", "absolute", "sign", "sqrt", "square", "exp", "log", "sin", "cos", "tanh",
         "floor", "ceil", "rint", "trunc", "invert", "isnan", "isinf", "isfinite", "signbit",
         "conjugate", "degrees", "reciprocal", "positive", "spacing", "cbrt"]
# Python scalars of every class NumPy 1.24 casts by value (and NaN, inf, -0.0)
SCALARS = [True, False, 0, 1, 100, 127, 128, 200, 255, 256, 300, 32767, 32768, 70000, 2**31,
           2**32, 2**40, 2**63 - 1, 2**63, -1, -128, -129, -200, -32769, -2**31 - 1, -2**40,
           -2**63, 2.5, -0.0, 1e5, 1e40, 65504.0, math.inf, math.nan]


def _np_values(dtype, n=12, shape=None):
    a = np.array(_VALUES[:n], np.int64).astype(dtype)
    return a.reshape(shape) if shape else a


def _numpy(fn):
    with np.errstate(all="ignore"):
        try:
            return fn(), None
        except Exception as e:  # noqa: BLE001 - compared with hop's
            return None, e


# libm functions, whose last bit hop's kernels and NumPy's SIMD loops may
# round apart (the general path's too): to NumPy within a few ulps, to the
# general path exactly
LIBM = {"arctan2", "hypot", "logaddexp", "exp", "log", "sin", "cos", "tanh", "cbrt", "power"}


def _same(got, want, ulps=False, zero_sign_free=False):
    assert type(got) is ndarray, type(got)
    g = np.asarray(got)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    assert g.shape == want.shape and g.strides == want.strides, (g.strides, want.strides)
    if ulps and want.dtype.kind in "fc":
        eps = np.finfo(want.dtype).eps
        np.testing.assert_allclose(g, want, rtol=4 * eps, atol=4 * eps, equal_nan=True)
        return
    np.testing.assert_array_equal(g, want)
    if want.dtype.kind in "fc" and not zero_sign_free:  # the sign of zero too
        assert np.array_equal(np.signbit(g.real), np.signbit(want.real))


def _check(name, hargs, nargs, expect_fast=None):
    """ufunc name on hop arrays (hargs) by the fast path and by the general
    path, and on NumPy arrays (nargs): the same answer, or the same error
    type with the fast path declining."""
    want, err = _numpy(lambda: getattr(np, name)(*nargs))
    with np.errstate(all="ignore"):  # (NumPy's state for want: a warning has NumPy answer)
        return _check_quiet(name, hargs, nargs, want, err, expect_fast)


def _check_quiet(name, hargs, nargs, want, err, expect_fast):
    fast = _eager.call(name, tuple(hargs))
    if err is not None:
        assert fast is None, (name, [getattr(a, "dtype", a) for a in nargs])
        with pytest.raises(type(err)):
            call_ufunc(name, tuple(hargs), {}, ndarray)
        return False
    if fast is None:
        assert expect_fast is not True, (name, nargs)
        return False
    general = call_ufunc(name, tuple(hargs), {}, ndarray)
    _same(fast, np.asarray(general))
    # (maximum and minimum of 0.0 and -0.0: which zero NumPy's loop picks
    # differs from hop's kernels, the general path's too: a known divergence
    # of hop.numpy, not the fast path's)
    _same(fast, want, ulps=name in LIBM, zero_sign_free=name in ("maximum", "minimum"))
    return True


@pytest.mark.parametrize("name", BINARY)
def test_every_dtype_pair_of_two_arrays_is_numpys(name):
    taken = 0
    for da in DTYPES:
        for db in DTYPES:
            na, nb = _np_values(da), _np_values(db)[::-1].copy()
            if name in ("left_shift", "right_shift"):
                nb = np.abs(nb.astype(np.int64) % 7).astype(db)
            taken += _check(name, [hnp.asarray(na), hnp.asarray(nb)], [na, nb])
    assert taken > 0


@pytest.mark.parametrize("name", BINARY)
def test_every_dtype_and_python_scalar_is_numpys(name):
    for dt in DTYPES:
        na = _np_values(dt)
        for s in SCALARS:
            if name in ("left_shift", "right_shift", "ldexp") and not (
                    isinstance(s, int) and 0 <= s < 8):
                continue
            _check(name, [hnp.asarray(na), s], [na, s])
            _check(name, [s, hnp.asarray(na)], [s, na])


# 0-d operands the fast path reads as the Python scalar of their value:
# float64, int64 and bool (a.sum(), a.mean(), a[3], np.argmax's index)
ZERO_D = [np.float64(v) for v in (0.0, -0.0, 2.5, 1e5, 1e40, 65504.0, 3.4e38, 1e-300, math.inf,
                                  -math.inf, math.nan)] + \
    [np.int64(v) for v in (0, 1, 127, 128, 255, 256, 300, 32768, 70000, 2**31, 2**40, 2**63 - 1,
                           -1, -128, -129, -32769, -2**63)] + [np.bool_(True), np.bool_(False)]


@pytest.mark.parametrize("name", BINARY)
def test_every_dtype_and_a_zero_d_operand_is_numpys_and_takes_the_fast_path(name):
    # NumPy 1.24 casts a 0-d float64, int64 or bool operand of an array by
    # its value, as it casts the Python scalar: the fast path reads it as
    # that scalar (a * a.sum() was the general path's, 20 us), so it takes
    # exactly the calls it takes with the Python scalar, and answers them
    # as NumPy and the general path do
    for dt in DTYPES:
        na = _np_values(dt)
        ha = hnp.asarray(na)
        for s in ZERO_D:
            if name in ("left_shift", "right_shift", "ldexp") and not (
                    s.dtype.kind in "ib" and 0 <= s < 8):
                continue
            with np.errstate(all="ignore"):
                py = [_eager.call(name, (ha, s.item())) is not None,
                      _eager.call(name, (s.item(), ha)) is not None]
            # a 0-d array, and a NumPy scalar's (an element, as a[3] gives)
            for z in (hnp.asarray(np.array(s)), hnp.asarray(np.array([s]))[0]):
                assert z.ndim == 0 and z.dtype == s.dtype
                assert _check(name, [ha, z], [na, np.array(s)]) == py[0], (dt, s)
                assert _check(name, [z, ha], [np.array(s), na]) == py[1], (dt, s)


SCALAR_TAKEN = {"add", "subtract", "multiply", "true_divide", "less", "less_equal", "greater",
                "greater_equal", "equal", "not_equal"}


@pytest.mark.parametrize("name", BINARY)
def test_two_scalars_by_the_fast_path_are_numpys_and_the_general_paths(name):
    # every operand 0-d or a Python scalar (`np.add(a.sum(), 16)`,
    # `np.maximum(s, 0)`): NumPy promotes by dtype, not by value, runs the
    # ufunc's loop and answers a scalar; the fast path keys a 0-d operand by
    # its dtype and takes every plan of a ufunc's call (operators of NumPy
    # scalars are its scalar math: the next test)
    partners = [0, 3, -2, 2.5, 1e300, math.nan, True, np.float64(2.0), np.int64(3),
                np.float32(1.5), np.int8(-2), np.bool_(False)]
    taken = 0
    for dt in DTYPES:
        for v in (0, 1, -2, 7):
            z, zn = hnp.asarray(np.array([v]).astype(dt))[0], np.array([v]).astype(dt)[0]
            for p in partners:
                hp = hnp.asarray(np.array([p]))[0] if isinstance(p, np.generic) else p
                for hargs, nargs in (((z, hp), (zn, p)), ((hp, z), (p, zn))):
                    with np.errstate(all="ignore"):
                        fast = _eager.call(name, hargs)
                        want, err = _numpy(lambda: getattr(np, name)(*nargs))
                    if fast is None:
                        continue
                    assert err is None, (name, dt, v, p)
                    with np.errstate(all="ignore"):
                        general = call_ufunc(name, hargs, {}, ndarray)
                    assert type(fast) is type(general) is ndarray
                    assert fast._scalar and general._scalar and fast.ndim == 0
                    _same(fast, np.asarray(general))
                    _same(fast, np.asarray(want), ulps=name in LIBM,
                          zero_sign_free=name in ("maximum", "minimum"))
                    taken += 1
    assert taken > 0 or name not in SCALAR_TAKEN


def test_operators_of_two_scalars_warn_and_wrap_as_numpys_scalar_math():
    # an integer result is NumPy's scalar math (its overflow warnings), a
    # float's flags hand the call to the general path, which warns as NumPy
    import operator
    import warnings
    cases = [("int8", 100, operator.add, 100), ("int64", 2**62, operator.mul, 4),
             ("uint8", 0, operator.sub, 1), ("int64", 7, operator.floordiv, 0),
             ("int64", 7, operator.truediv, 0), ("float64", 1e308, operator.mul, 10.0),
             ("float64", 0.0, operator.truediv, 0.0), ("float64", 1.5, operator.lt, 2),
             ("float64", 6.0, operator.truediv, 4), ("int64", 6, operator.truediv, 4)]
    for dt, v, op, w in cases:
        got = []
        for s in (hnp.asarray(np.array([v], dt))[0], np.array([v], dt)[0]):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                r = op(s, np.array([w], dt)[0] if not isinstance(w, float) else w)
            got.append((np.asarray(r).tolist(), np.asarray(r).dtype,
                        [str(c.message) for c in caught]))
        h, n = got
        assert (h[1], h[2]) == (n[1], n[2]), (dt, v, op, w, h, n)
        assert h[0] == n[0] or (math.isnan(h[0]) and math.isnan(n[0]))


def test_a_zero_d_operand_gives_what_the_general_path_gives_through_the_operators():
    a = hnp.arange(1.0, 17.0)
    na = np.arange(1.0, 17.0)
    ia, nia = hnp.arange(16, dtype=np.int8), np.arange(16, dtype=np.int8)
    cases = [(lambda x: x * x.sum(), na), (lambda x: x / x.sum(), na),
             (lambda x: x - x.mean(), na), (lambda x: (x - x.mean()) / x.std(), na),
             (lambda x: x > x.mean(), na), (lambda x: x ** x[2], na),
             (lambda x: x.max() - x, na), (lambda x: np.maximum(x, x.min() + 3.0), na),
             (lambda x: x * x.argmax(), na), (lambda x: x + (x > 3).any(), na)]
    for f, n in cases:
        got, want = f(a), f(n)
        assert type(got) is ndarray
        _same(got, want)
    # an int8 array and an int64 0-d: the value's class (int8 here)
    got, want = ia + ia.max(), nia + nia.max()
    assert got.dtype == want.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(got), want)
    # a value beyond int8: int16, as NumPy
    big = hnp.asarray(np.array(300))
    assert (ia + big).dtype == (nia + np.array(300)).dtype == np.int16


@pytest.mark.parametrize("name", UNARY)
def test_every_dtype_of_a_unary_ufunc_is_numpys(name):
    for dt in DTYPES:
        na = _np_values(dt)
        if name in ("sqrt", "log") and dt[0] in "iuf":
            na = np.abs(na.astype(np.float64)).astype(dt) if dt != "bool" else na
        if name in ("spacing", "cbrt", "degrees") and dt[0] == "c":
            continue
        _check(name, [hnp.asarray(na)], [na])


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (4,)), ((2, 3, 4), (1, 4)),
                                    ((1,), (5,)), ((0,), (0,)), ((2, 0), (1,))])
def test_broadcast_shapes_and_strides_are_numpys(shapes):
    sa, sb = shapes
    for da, db in [("float64", "float64"), ("int8", "float32"), ("uint8", "int8"),
                   ("int32", "complex64"), ("bool", "bool")]:
        na = np.arange(math.prod(sa)).astype(da).reshape(sa)
        nb = (np.arange(math.prod(sb)) + 1).astype(db).reshape(sb)
        for name in ("add", "multiply", "less", "maximum"):
            assert _check(name, [hnp.asarray(na), hnp.asarray(nb)], [na, nb], True)
            assert _check(name, [hnp.asarray(nb), hnp.asarray(na)], [nb, na], True)
        assert _check("sin", [hnp.asarray(na)], [na], True)


def test_the_operators_take_the_fast_path():
    a, b = hnp.ones(16), hnp.arange(16)
    _eager._PLANS.clear()
    for r, want in [(a + b, np.ones(16) + np.arange(16)), (a * 2.0, np.ones(16) * 2.0),
                    (2.0 * a, 2.0 * np.ones(16)), (a < b, np.ones(16) < np.arange(16)),
                    (np.sin(a), np.sin(np.ones(16))), (-b, -np.arange(16)),
                    (np.add(a, b), np.ones(16) + np.arange(16)), (b - 1, np.arange(16) - 1)]:
        _same(r, want)
    keys = {k[:2] for k, v in _eager._PLANS.items() if v is not None}
    f64, i64 = a._t.dtype, b._t.dtype
    assert {("add", f64), ("multiply", f64), ("less", f64), ("sin", f64), ("negative", i64),
            ("subtract", i64)} <= keys


def test_an_int_is_cast_by_its_value_class_not_the_first_one_seen():
    a = hnp.asarray(np.array([1, 2, 3], np.int8))
    n = np.array([1, 2, 3], np.int8)
    for s in [100, 127, 128, 200, 255, 256, 300, -1, -128, -129, 40000, 2**31, 2**63]:
        _same(a + s, n + s)
        _same(s * a, s * n)
    f = hnp.asarray(np.array([1, 2, 3], np.float16))
    nf = np.array([1, 2, 3], np.float16)
    for s in [2.5, 1e5, 1e40, 65504.0, 70000.0, math.inf, math.nan]:
        with np.errstate(all="ignore"):
            _same(f + s, nf + s)


def test_what_the_fast_path_leaves_to_the_general_path():
    a, b = hnp.ones(4), hnp.ones(4)
    # 0-d operands other than float64, int64 and bool (cast by their own
    # dtype where the kinds differ), two 0-d operands (a NumPy scalar's
    # result), a 0-d complex array, sequences, NumPy arrays and hop tensors
    # (a Python complex is taken: test_numpy_complex_scalar_fast_path.py)
    z32 = hnp.asarray(np.array(2.0, np.float32))
    zi8 = hnp.asarray(np.array(2, np.int8))
    z, s = hnp.asarray(np.array(2.0)), hnp.float64(2.0)
    assert _eager.call("add", (a, 1j)).dtype == np.complex128
    for args in [(a, z32), (z32, a), (a, zi8), (zi8, a),
                 (a, hnp.asarray(np.array(1j))), (a, [1, 2, 3, 4]), (a, np.ones(4)),
                 (a, hop.tensor([1.0, 2.0, 3.0, 4.0]))]:
        assert _eager.call("add", args) is None
    # two scalars: a ufunc's call (np.add(s, 2), _eager.call) is NumPy's loop
    # and taken; an operator (s + 2) is NumPy's scalar math, taken for a
    # float64 or bool result of + - * / and the comparisons only (an integer
    # result warns on overflow; other ufuncs round their own way)
    hs = hnp.asarray(np.array([2.0]))[0]  # (a hop.numpy scalar: s is NumPy's np.float64)
    assert _eager.call("add", (z, 2.0)) is not None and _eager.call("add", (hs, z)) is not None
    assert _eager.call("less", (hs, 3)) is not None and _eager.call("add", (s, 2.0)) is None
    i64 = hnp.asarray(np.array([3]))[0]
    assert _eager.call("add", (i64, 2)) is not None and _eager.call("power", (s, 2.0)) is None
    assert _eager.call("true_divide", (i64, 2)) is not None
    big = hnp.asarray(np.array([2**62]))[0]
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert int(np.add(big, big)) == int(np.add(np.int64(2**62), np.int64(2**62)))
        assert not w  # (the loop's wraparound: no warning, as NumPy's ufunc)
        assert int(big + big) == -2**63 and "overflow encountered in scalar add" in \
            str(w[-1].message)  # (the operator: NumPy's scalar math)
    for name in ("logical_and", "matmul", "float_power"):
        assert _eager.call(name, (a, b)) is None
    # power of integers (negative integer powers are refused on the data);
    # of floats it is planned
    ia = hnp.arange(4)
    assert _eager.call("power", (ia, ia)) is None and _eager.call("power", (ia, 2)) is None
    assert _eager.call("power", (a, b)) is not None and _eager.call("power", (a, 3)) is not None
    assert _eager.call("add", (a,)) is None and _eager.call("sin", (a, b)) is None
    with np.errstate(divide="raise"):
        assert _eager.call("true_divide", (a, b)) is None
        with pytest.raises(FloatingPointError):
            a / hnp.zeros(4)
    with np.errstate(divide="warn"):
        assert _eager.call("true_divide", (a, b)) is not None
    # keywords: the general path (out= writes, dtype= casts)
    out = hnp.zeros(4)
    assert np.add(a, b, out=out) is out and out.tolist() == [2.0] * 4
    assert np.add(a, b, dtype=np.float32).dtype == np.float32


def test_inside_a_trace_the_general_path_answers():
    seen = []
    real = _eager._plan

    def fn(x):
        y = hnp.asarray(x)
        seen.append(_eager.call("add", (y, y)))
        return (y + y)._t

    try:
        _eager._plan = lambda *a: pytest.fail("planned while tracing")
        gm = hop.trace(fn, hop.tensor([1.0, 2.0]))
    finally:
        _eager._plan = real
    assert seen and all(r is None for r in seen)
    assert gm(hop.tensor([1.0, 3.0])).tolist() == [2.0, 6.0]


def test_a_fast_result_has_the_slots_ndarray_init_gives():
    # the C fast path fills the result's slots itself (ndarray._EAGER_SLOTS)
    a, b = hnp.ones(4), hnp.arange(4)
    names = [n for n in ndarray.__slots__ if n != "__weakref__"]
    for r in (a + b, -b, np.sin(a), a < b, 2 * b):
        made = ndarray(r._tv)
        assert {n: getattr(r, n) for n in names} == {n: getattr(made, n) for n in names}
        assert r._tv is not a._tv and r._tv is not b._tv


def test_the_operators_are_methods_that_fall_back_to_the_general_path():
    a, b = hnp.ones(3), hnp.arange(3)
    add = ndarray.__add__
    assert add.__name__ == "add" and add.__module__ == "hop.numpy._ndarray"
    assert a.__add__(b).tolist() == [1.0, 2.0, 3.0]
    assert ndarray.__add__(a, b).tolist() == [1.0, 2.0, 3.0]
    assert a.__rsub__(1).tolist() == [0.0, 0.0, 0.0] and (1 - b).tolist() == [1, 0, -1]
    assert a.__add__("x") is NotImplemented
    with pytest.raises(TypeError, match="unsupported operand"):
        a + "x"
    assert (a + [1, 2, 3]).tolist() == [2.0, 3.0, 4.0]  # (a list: the general path)
    with pytest.raises(TypeError):
        add(a, b, c=1)
    # +a of a bool array: NumPy's copy, where np.positive refuses bool
    q = hnp.asarray(np.array([True, False]))
    p = +q
    assert p is not q and p.dtype == np.bool_ and p.tolist() == [True, False]


def test_float_scalars_at_numpys_class_bounds_are_cast_as_numpy_casts_them():
    # np.min_scalar_type of a float (the key the C path computes itself):
    # float16 inside (-65000, 65000) or not finite, float32 inside (-3.4e38,
    # 3.4e38), else float64
    for dt in ("float16", "float32", "int8", "bool"):
        na = _np_values(dt, 4)
        for s in [64999.99, 65000.0, -65000.0, -64999.99, 65504.0, 3.3999999e38, 3.4e38,
                  -3.4e38, -3.3999999e38, 1e-300, 5e-324, -0.0, math.inf, -math.inf, math.nan]:
            for name in ("add", "multiply", "less"):
                _check(name, [hnp.asarray(na), s], [na, s], True)
                _check(name, [s, hnp.asarray(na)], [s, na], True)


def test_alternating_int_classes_each_get_their_own_dtype():
    # the plans seen last are found by the keys' identity: ints of classes
    # in turn (a negative one's key beyond -5 is a new int object each time)
    na = np.array([1, 2, 3], np.int8)
    a = hnp.asarray(na)
    for s in [100, 200, 100, -129, -2**40, -129, 2**40, 1, -2**40, 70000, -1]:
        _same(a + s, na + s)
        _same(s - a, s - na)


def test_a_run_on_this_thread_turns_the_fast_path_off_on_this_thread_only():
    import threading
    from hop import _C
    from hop.numpy import _storage
    a, b = hnp.ones(2), hnp.ones(2)
    assert _eager.call("add", (a, b)) is not None
    run = _storage.begin_run(False, ())
    seen = []
    try:
        assert _storage.current() is run
        assert _eager.call("add", (a, b)) is None and _eager.call("sin", (a,)) is None
        t = threading.Thread(target=lambda: seen.append(_eager.call("add", (a, b))))
        t.start()
        t.join()
    finally:
        _storage.end_run(run)
    assert seen[0] is not None and seen[0].tolist() == [2.0, 2.0]
    assert _eager.call("add", (a, b)) is not None
    with pytest.raises(ValueError, match="more ends than beginnings"):
        _C._np_eager_off(-1)
    assert _eager.call("add", (a, b)) is not None


def test_recording_a_path_turns_the_fast_path_off():
    from hop import _paths
    a, b = hnp.ones(2), hnp.ones(2)
    seen = []
    _paths.record_path(lambda: seen.append(_eager.call("add", (a, b))), (), {})
    assert seen == [None]
    assert _eager.call("add", (a, b)) is not None


POW_DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32",
              "float64", "complex64", "complex128"]
# (not 2**70: NumPy makes an object array of it, a dtype hop.numpy refuses)
EXPONENTS = [2, 2.0, 0.5, -1, -1.0, 1, 1.0, 0, 0.0, 3, -2, 1.7, -0.5, 2**62, math.nan,
             math.inf, -math.inf, True, np.float64(2.0), np.int64(2)]


def _pow_result(fn):
    """fn(): its result as an ndarray (values, dtype, type), or its error
    type, and the warnings it gave."""
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn()
            out = (type(r).__name__ == "ndarray", np.asarray(r))
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            out = (type(e), None)
    return out, sorted({(x.category, str(x.message)) for x in w})


def _same_pow(got, want, ulps):
    (gk, g), gw = got
    (wk, w), ww = want
    assert gk == wk and gw == ww, (gk, wk, gw, ww)
    if g is not None:
        assert g.dtype == w.dtype and g.shape == w.shape
        if ulps and w.dtype.kind in "fc":
            eps = np.finfo(w.dtype).eps
            np.testing.assert_allclose(g, w, rtol=8 * eps, atol=0, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)
        if w.dtype.kind in "fc":
            assert np.array_equal(np.signbit(g.real), np.signbit(w.real))


@pytest.mark.parametrize("dtype", POW_DTYPES)
def test_the_power_operator_is_numpys_and_the_general_paths(dtype):
    # a ** e: NumPy 1.24's fast_scalar_power (** 2 square, ** 0.5 sqrt, ** -1
    # reciprocal, ** 1 positive, ** 0 ones_like) and power otherwise, by the
    # fast path (np_eager.c fast_power) and by _ndarray._pow; on values
    # without zeros, infinities or NaNs (plain) a float array's power with a
    # Python number or array exponent that NumPy computes without a warning
    # is the fast path's (a complex one's plans decline: the general path)
    from hop.numpy import _ndarray
    inexact = dtype.startswith(("float", "complex"))
    plain = np.array([1, -2, 3, 7, -5, 2, -1], np.int64).astype(dtype)
    edge = np.array([0, 1, -2, 3], np.int64).astype(dtype)
    if inexact:
        plain = np.concatenate([plain, np.array([0.5, 1.25, -0.75], dtype)])
        edge = np.concatenate([edge, np.array([-0.0, np.inf, -np.inf, np.nan, 1e-3], dtype)])
    for n, fast_expected in ((plain, dtype.startswith("float")), (edge, False)):
        for e in EXPONENTS + [n[::-1].copy(), np.abs(n[::-1]).astype(dtype)]:
            h = hnp.asarray(n.copy())
            he = hnp.asarray(e.copy()) if isinstance(e, np.ndarray) else e
            want = _pow_result(lambda: n ** e)
            ulps = not (isinstance(e, (int, float)) and float(e) in (2.0, 1.0, 0.0, -1.0, 0.5))
            _same_pow(_pow_result(lambda: h ** he), want, ulps)
            _same_pow(_pow_result(lambda: _ndarray._pow(h, he)), want, ulps)
            if fast_expected and not want[1] and type(e) in (int, float, np.ndarray) and \
                    e is not True and not (type(e) is not np.ndarray and e == 0):
                assert _eager_fast_power(h, he), e


def _eager_fast_power(h, e):
    """Whether h ** e took the fast path (the general _pow never ran)."""
    import hop.numpy._ndarray as nd
    calls = []
    real = nd._fast_power
    nd._fast_power = lambda *a: calls.append(1) or real(*a)
    try:
        h ** e
    finally:
        nd._fast_power = real
    return not calls


def test_an_integer_array_squared_by_a_float_is_laid_out_as_numpys():
    # a ** 2.0 of an integer array is float64's square of it cast as NumPy's
    # PyArray_CastToType casts: Fortran order for a Fortran-ordered array,
    # else C (a 3-d array in another order); the cast was always C-ordered
    for n in (np.arange(6, dtype=np.uint8).reshape(2, 3).T,
              np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)),
              np.arange(24).reshape(2, 3, 4).transpose(1, 0, 2),
              np.arange(24).reshape(2, 3, 4).T):
        h = hnp.asarray(n)
        r, want = h ** 2.0, n ** 2.0
        _same(r, want)


# clip's bounds: every class NumPy casts a scalar by, NaN, crossed bounds
CLIP_BOUNDS = [(0, 1), (-1, 5), (2.5, 6.0), (0, 300), (-129, 100), (True, 5), (False, True),
               (1e40, 2e40), (math.nan, 3), (0, math.nan), (5, 2), (-0.0, 0.0), (2**40, 2**63),
               (-2**63, 0), (0.5, 2**31), (-math.inf, math.inf), (1, 2.5)]


def _clip_general(h, lo, hi):
    from hop import _C
    _C._np_eager_off(1)
    try:
        return np.clip(h, lo, hi)
    finally:
        _C._np_eager_off(-1)


def _clip_outcome(fn):
    """fn()'s result or error, the texts of its warnings, and whether the
    general path (call_ufunc) ran."""
    import warnings
    from hop.numpy import _ufuncs
    calls = []
    real = _ufuncs.call_ufunc
    _ufuncs.call_ufunc = lambda *a, **k: calls.append(1) or real(*a, **k)
    try:
        with warnings.catch_warnings(record=True) as w, np.errstate(all="ignore"):
            warnings.simplefilter("always")
            try:
                r = fn()
            except Exception as e:  # noqa: BLE001 - compared with NumPy's
                r = e
    finally:
        _ufuncs.call_ufunc = real
    return r, [(x.category, str(x.message)) for x in w], bool(calls)


@pytest.mark.parametrize("dtype", DTYPES)
def test_clip_of_every_dtype_and_scalar_bounds_is_numpys_and_the_general_paths(dtype):
    # np.clip(a, lo, hi) by the fast path (np_eager.c fast_clip: ufunc clip's
    # plan for a's key and the pair of the bounds' keys) gives the general
    # path's answer and NumPy's: dtype (value-based, over all three), values,
    # crossed bounds (hi wins), a NaN bound of no dimensions as no bound
    # with NumPy's DeprecationWarning
    taken = 0
    for lo, hi in CLIP_BOUNDS:
        x = _np_values(dtype)
        h = hnp.asarray(x.copy())
        want, ww, _ = _clip_outcome(lambda: np.clip(x, lo, hi))
        fast, fw, general_ran = _clip_outcome(lambda: np.clip(h, lo, hi))
        general, gw, _ = _clip_outcome(lambda: _clip_general(h, lo, hi))
        assert fw == gw == ww, (lo, hi)
        if isinstance(want, Exception):
            assert type(fast) is type(general) is type(want), (lo, hi, fast)
            continue
        _same(general, want, zero_sign_free=True)
        _same(fast, np.asarray(general))
        _same(fast, want, zero_sign_free=True)
        taken += not general_ran
        np.testing.assert_array_equal(np.asarray(h), x)  # (a is not written)
    assert taken >= (0 if dtype.startswith("complex") else len(CLIP_BOUNDS) // 2), taken


def test_clip_with_array_bounds_and_every_spelling_takes_the_fast_path(monkeypatch):
    from hop.numpy import _ufuncs
    x = np.linspace(-3.0, 3.0, 12)
    h = hnp.asarray(x.copy())
    lo = hnp.asarray(np.full(12, -1.0))
    calls = []
    real = _ufuncs.call_ufunc
    monkeypatch.setattr(_ufuncs, "call_ufunc", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    for got, want in ((np.clip(h, 0, 1), np.clip(x, 0, 1)),
                      (hnp.clip(h, -1.5, 2), np.clip(x, -1.5, 2)),
                      (h.clip(0.5, 2.5), x.clip(0.5, 2.5)),
                      (np.clip(h, lo, 2.0), np.clip(x, np.full(12, -1.0), 2.0)),
                      (np.clip(h, 0, lo), np.clip(x, 0, np.full(12, -1.0)))):
        _same(got, want)
    assert calls == []
    # what stays the general path's: out=, a None bound, a bound of another
    # dtype to cast, an operand in another layout, a 0-d bound, NumPy arrays
    for call, ref in ((lambda: np.clip(h, 0, 1, out=hnp.empty(12)), lambda: np.clip(x, 0, 1)),
                      (lambda: np.clip(h, None, 1), lambda: np.clip(x, None, 1)),
                      (lambda: np.clip(h, 0, hnp.ones(12, dtype=np.float32)),
                       lambda: np.clip(x, 0, np.ones(12, dtype=np.float32))),
                      (lambda: np.clip(h[::2], 0, 1), lambda: np.clip(x[::2], 0, 1)),
                      (lambda: np.clip(h, h.min(), 1), lambda: np.clip(x, x.min(), 1)),
                      (lambda: hnp.clip(x, 0, 1), lambda: np.clip(x, 0, 1))):
        calls.clear()
        _same(call(), ref())
        assert calls, ref
    monkeypatch.undo()
    with np.errstate(invalid="raise"):
        # (a gate closed: NumPy's error state raises; clip raises no flag)
        _same(np.clip(h, 0, 1), np.clip(x, 0, 1))


def test_clip_with_a_nan_bound_warns_on_every_compiled_call_as_eagerly():
    # NumPy's _clip reads a NaN bound of no dimensions as no bound and
    # warns each call: compiled, the clip is a graph break (the warning a
    # trace would give once), the rest of the function compiled
    import warnings
    x = np.array([-1.0, 5.0, np.nan, 2.0])

    def f(x):
        return np.clip(x * 1.0, np.nan, 3.0) * 2

    cf = hop.compile(f)
    for _ in range(3):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = cf(x)
        with warnings.catch_warnings(record=True) as e:
            warnings.simplefilter("always")
            want = f(x)
        np.testing.assert_array_equal(got, want)
        assert [(m.category, str(m.message)) for m in w] == \
            [(m.category, str(m.message)) for m in e] and len(e) == 1
    assert cf.eager_calls == 0 and "graph break" in str(cf.explain())
    assert "clip with a NaN bound" in str(cf.explain())


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "complex64"])
def test_vector_norm_is_numpys_bit_for_bit_eagerly_and_compiled(dtype):
    # np.linalg.norm(v): the sum of squares' square root taken without the
    # ufunc's dispatch for a float32/float64 one, as NumPy's own value and
    # scalar type
    vals = [[3.0, 4.0], [1e-200, 1e-200], [1e200, 1e200], [np.nan, 1.0], [np.inf, 1.0],
            [0.0, -0.0], list(np.linspace(-2, 2, 33))]
    cf = hop.compile(lambda v: np.linalg.norm(v))
    for v in vals:
        x = np.array(v).astype(dtype) if dtype != "int32" else np.array(v[:1] * 3).astype(int)
        want = np.linalg.norm(x)
        for got in (np.linalg.norm(hnp.asarray(x)), hnp.linalg.norm(hnp.asarray(x)), cf(x)):
            g = np.asarray(got)
            assert g.dtype == np.asarray(want).dtype and g.shape == ()
            assert g.tobytes() == np.asarray(want).tobytes() or \
                (np.isnan(g) and np.isnan(want)), (v, got, want)
            assert isinstance(got, np.generic) or got._scalar


@pytest.mark.parametrize("name", UNARY)
def test_a_ufunc_of_a_scalar_is_the_loops_answer_by_the_fast_path(name):
    # np.sqrt(a.sum()), np.exp(s): a ufunc's call on a hop.numpy scalar runs
    # NumPy's loop (not its scalar math), so the fast path takes it for
    # every dtype it plans; the answer, a NumPy scalar's, and the warnings
    # (sqrt(-1), log(0): the general path's, as NumPy's) are NumPy's
    from test_numpy_eager_reduce_fast_path import _outcome
    taken = 0
    for dt in DTYPES:
        for v in (0, 1, -2, 7, 100):
            z = hnp.asarray(np.array([v]).astype(dt))[0]
            zn = np.array([v]).astype(dt)[0]
            got, hw = _outcome(getattr(np, name), z)
            want, nw = _outcome(getattr(np, name), zn)
            if isinstance(want, Exception):
                assert type(got) is type(want), (name, dt, v)
                continue
            assert hw == nw, (name, dt, v)
            assert type(got) is ndarray and got._scalar, (name, dt, v)
            _same(got, np.asarray(want), ulps=name in LIBM)
            with np.errstate(all="ignore"):
                taken += _eager.call(name, (z,)) is not None
    assert taken > 0, name
