"""Ported from PyTorch's test/torch_np/numpy_tests/lib/test_function_base.py
(issue #29): each torch test's NumPy calls run by NumPy, eagerly by hop.numpy and by
hop.compile (numpy_diff.check).  Left out: complex inputs (another
issue's), np.vectorize (a Python function per element), Fraction objects,
memory order, reference counts."""

import functools

import numpy as np
import pytest

from numpy_diff import ported
import numpy_diff

# each case by NumPy, by eager hop.numpy (every ndarray argument through
# hop.numpy.asarray) and compiled (the forty-eighth session)
check = functools.partial(numpy_diff.check, eager=True)
raises = functools.partial(numpy_diff.raises, eager=True)

SRC = "numpy_tests/lib/test_function_base.py"


def port(test):
    return ported(SRC, test)


@port("TestRot90.test_basic")
def test_rot90_basic():
    for axes in [(0, 1, 2), (0, 2), (1, 1), (-2, 1)]:
        raises(ValueError, lambda x, axes=axes: np.rot90(x, axes=axes),
               np.ones((2, 2, 2)) if len(axes) != 2 or axes == (-2, 1) else np.ones((2, 2)))
    raises(ValueError, lambda x: np.rot90(x), np.ones(4))
    check(lambda a: [np.rot90(a, k=k) for k in range(-3, 13)] +
          [np.rot90(np.rot90(a, axes=(0, 1)), axes=(1, 0)),
           np.rot90(a, k=1, axes=(1, 0)), np.rot90(a, k=-1, axes=(0, 1))],
          np.array([[0, 1, 2], [3, 4, 5]]))


@port("TestRot90.test_axes")
@port("TestRot90.test_rotation_axes")
def test_rot90_axes():
    check(lambda a: (np.rot90(a).shape, np.rot90(a, axes=(0, 2)), np.rot90(a, axes=(0, -1)),
                     np.rot90(a, axes=(1, 2)), np.rot90(a, axes=(-2, -1))), np.ones((5, 4, 3)))
    check(lambda a: [np.rot90(a, axes=(0, 1)), np.rot90(a, axes=(1, 0)), np.rot90(a, axes=(1, 2))]
          + [np.rot90(a, k=k, axes=(2, 0)) for k in range(1, 5)], np.arange(8).reshape((2, 2, 2)))


@port("TestFlip.test_axes")
def test_flip_axes():
    for shape, axis in [((4,), 1), ((4, 4), 2), ((4, 4), -3), ((4, 4), (0, 3))]:
        raises(np.AxisError, lambda x, axis=axis: np.flip(x, axis=axis), np.ones(shape))


@port("TestFlip.test_basic_lr")
@port("TestFlip.test_basic_ud")
def test_flip_basic():
    a = np.arange(4)[:, None] + np.arange(4)[None, :]
    check(lambda a: (np.flip(a, 1), a[:, ::-1], np.flip(a, 0), a[::-1, :]), a)
    check(lambda: (np.flip([[0, 1, 2], [3, 4, 5]], 1), np.flip([[0, 1, 2], [3, 4, 5]], 0)))


@port("TestFlip.test_3d_swap_axis0")
@port("TestFlip.test_3d_swap_axis1")
@port("TestFlip.test_3d_swap_axis2")
@port("TestFlip.test_default_axis")
@port("TestFlip.test_multiple_axes")
def test_flip_3d():
    check(lambda a: (np.flip(a, 0), np.flip(a, 1), np.flip(a, 2), np.flip(a), np.flip(a, axis=()),
                     np.flip(a, axis=(0, 2)), np.flip(a, axis=(1, 2))),
          np.array([[[0, 1], [2, 3]], [[4, 5], [6, 7]]]))


@port("TestFlip.test_4d")
def test_flip_4d():
    check(lambda a: [(np.flip(a, i), np.flipud(a.swapaxes(0, i)).swapaxes(i, 0))
                     for i in range(a.ndim)], np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5))


@port("TestAny.test_basic")
@port("TestAny.test_nd")
@port("TestAll.test_basic")
@port("TestAll.test_nd")
def test_any_all():
    check(lambda y1, y2, y3: (np.any(y1), np.any(y3), np.any(y2), np.all(y1), np.all(y3),
                              np.all(y2), np.all(~y2.astype(bool))),
          np.array([0, 0, 1, 0]), np.array([0, 0, 0, 0]), np.array([1, 0, 1, 0]))
    check(lambda y: (np.any(y), np.sometrue(y, axis=0), np.sometrue(y, axis=1), np.all(y),
                     np.alltrue(y, axis=0), np.alltrue(y, axis=1)),
          np.array([[0, 0, 1], [0, 1, 1], [1, 1, 1]]))


@port("TestCopy.test_basic")
def test_copy_basic():
    def f(a):
        c = np.copy(a)
        c[0, 0] = 10
        return a, c
    check(f, np.array([[1, 2], [3, 4]]))


@port("TestAverage.test_basic")
def test_average_basic():
    def f(y1, y2, y4):
        y4[0, 1] = 0
        y4[1, 0] = 2
        return (np.average(y1, axis=0), np.average(y2, axis=0), np.average([0.0, 0.0, 0.0], axis=0),
                y4.mean(0), np.average(y4, 0), y4.mean(1), np.average(y4, 1))
    check(f, np.array([1, 2, 3]), np.array([1.0, 2.0, 3.0]), np.ones((4, 4)))


@port("TestAverage.test_basic_keepdims")
@pytest.mark.parametrize("x,axis,weights", [([1, 2, 3], None, [3, 4, 1]),
                                            ([[1, 2, 5], [1, 6, 11]], 0, [1, 3])])
def test_average_basic_keepdims(x, axis, weights):
    check(lambda x, w: (np.average(x, axis=axis, keepdims=True),
                        np.average(x, axis=axis, weights=w, keepdims=True),
                        np.average(x, axis=axis, weights=w, returned=True, keepdims=True)),
          np.array(x), np.array(weights))


@port("TestAverage.test_weights")
def test_average_weights():
    check(lambda y, w: np.average(y, weights=w), np.arange(10), np.arange(10))

    def f(y1):
        return (np.average(y1, weights=[1, 2], axis=0), np.average(y1, weights=[0, 0, 1], axis=1),
                np.average(y1, weights=[[0, 0, 1], [0, 0, 2]], axis=1),
                np.average(y1, weights=[[0, 0, 1], [0, 0, 2]]))
    check(f, np.array([[1, 2, 3], [4, 5, 6]]))
    rng = np.random.default_rng(1)
    check(lambda y, w: np.average(y, weights=w), rng.random(5).astype(np.float32), rng.random(5))
    check(lambda x, w: (np.average(x, weights=w, axis=1, keepdims=False),
                        np.average(x, weights=w, axis=1, keepdims=True)),
          np.array([2, 3, 4]).reshape(3, 1), np.array([4, 5, 6]).reshape(3, 1))


@port("TestAverage.test_returned")
def test_average_returned():
    def f(y):
        return (np.average(y, returned=True), np.average(y, 0, returned=True),
                np.average(y, 1, returned=True), np.average(y, weights=[1, 2], axis=0, returned=True),
                np.average(y, weights=[1, 2, 3], axis=1, returned=True),
                np.average(y, weights=[[0, 0, 1], [1, 2, 3]], axis=1, returned=True))
    check(f, np.array([[1, 2, 3], [4, 5, 6]]))


@port("TestAverage.test_upcasting")
@pytest.mark.parametrize("at,wt", [("i4", "i4"), ("i4", "f4"), ("f4", "i4"), ("f4", "f4"),
                                   ("f4", "f8")])
def test_average_upcasting(at, wt):
    check(lambda a, w: np.average(a, weights=w), np.array([[1, 2], [3, 4]], dtype=at),
          np.array([[1, 2], [3, 4]], dtype=wt))


CHOICES = [np.array([1, 2, 3]), np.array([4, 5, 6]), np.array([7, 8, 9])]
CONDITIONS = [np.array([False, False, False]), np.array([False, True, False]),
              np.array([False, False, True])]


@port("TestSelect.test_basic")
@port("TestSelect.test_return_dtype")
def test_select_basic():
    check(lambda c0, c1, c2, x0, x1, x2: (np.select([c0, c1, c2], [x0, x1, x2], default=15),
                                          np.select([c0, c1, c2], [x0.astype(np.int8),
                                                                   x1.astype(np.int8),
                                                                   x2.astype(np.int8)])),
          *CONDITIONS, *CHOICES)
    d = np.array([1, 2, 3, np.nan, 5, 7])
    check(lambda d: np.select([np.isnan(d)], [d]), d)


@port("TestSelect.test_broadcasting")
def test_select_broadcasting():
    check(lambda c1, x: (np.select([np.array(True), c1], [1, x]),
                         np.select([True], [0], default=[0]).shape),
          np.array([False, True, False]), np.arange(12).reshape(4, 3))


@port("TestSelect.test_deprecated_empty")
@port("TestSelect.test_non_bool_deprecation")
def test_select_errors():
    raises(ValueError, lambda: np.select([], [], 3))
    raises(ValueError, lambda: np.select([], []))
    for dt in (np.int_, np.uint8):
        raises(TypeError, lambda c0, c1, c2, x0, x1, x2, dt=dt:
               np.select([c0.astype(dt), c1, c2], [x0, x1, x2]), *CONDITIONS, *CHOICES)


@port("TestSelect.test_many_arguments")
def test_select_many_arguments():
    check(lambda c, x: np.select([c] * 100, [x] * 100), np.array([False]), np.array([1]))


@port("TestAmax.test_basic")
@port("TestAmin.test_basic")
def test_amax_amin():
    check(lambda a, b: (np.amax(a), np.amax(b, axis=0), np.amax(b, axis=1), np.amin(a),
                        np.amin(b, axis=0), np.amin(b, axis=1)),
          np.array([3, 4, 5, 10, -3, -5, 6.0]),
          np.array([[3, 6.0, 9.0], [4, 10.0, 5.0], [8, 3.0, 2.0]]))


@port("TestPtp.test_basic")
def test_ptp():
    check(lambda a, b: (a.ptp(axis=0), b.ptp(axis=0), b.ptp(axis=-1), b.ptp(axis=0, keepdims=True),
                        b.ptp(axis=(0, 1), keepdims=True)),
          np.array([3, 4, 5, 10, -3, -5, 6.0]),
          np.array([[3, 6.0, 9.0], [4, 10.0, 5.0], [8, 3.0, 2.0]]))


@port("TestCumsum.test_basic")
@port("TestProd.test_basic")
@port("TestCumprod.test_basic")
@pytest.mark.parametrize("ctype", [np.int8, np.uint8, np.int16, np.int32, np.float32,
                                   np.float64])
def test_cumsum_prod_cumprod(ctype):
    ba = [1, 2, 10, 11, 6, 5, 4]
    ba2 = [[1, 2, 3, 4], [5, 6, 7, 9], [10, 3, 4, 5]]
    check(lambda a, a2: (np.cumsum(a, axis=0), np.cumsum(a2, axis=0), np.cumsum(a2, axis=1),
                         a.prod(axis=0), a2.prod(axis=0), a2.prod(axis=-1),
                         np.cumprod(a, axis=-1), np.cumprod(a2, axis=0), np.cumprod(a2, axis=-1)),
          np.array(ba, ctype), np.array(ba2, ctype))


@port("TestDiff.test_basic")
def test_diff_basic():
    check(lambda x: (np.diff(x), np.diff(x, n=2), np.diff(x, n=3)), np.array([1, 4, 6, 7, 12]))
    check(lambda x: np.diff(x), np.array([1.1, 2.2, 3.0, -0.2, -0.1]))
    check(lambda x: (np.diff(x), np.diff(x, n=2)), np.array([True, True, False, False]))


@port("TestDiff.test_axis")
def test_diff_axis():
    def f(x):
        x[:, 1::2, :] = 1
        return np.diff(x), np.diff(x, axis=-1), np.diff(x, axis=0), np.diff(x, axis=1), \
            np.diff(x, axis=-2)
    check(f, np.zeros((4, 6, 5)))
    raises(np.AxisError, lambda x: np.diff(x, axis=3), np.zeros((4, 6, 5)))
    raises(np.AxisError, lambda x: np.diff(x, axis=-4), np.zeros((4, 6, 5)))
    raises(ValueError, lambda x: np.diff(x), np.array(1.11111111111, np.float64))


@port("TestDiff.test_nd")
def test_diff_nd():
    check(lambda x: (np.diff(x), np.diff(x, n=2), np.diff(x, axis=0), np.diff(x, n=2, axis=0)),
          20 * np.random.default_rng(2).random((5, 6, 7)))


@port("TestDiff.test_n")
def test_diff_n():
    raises(ValueError, lambda x: np.diff(x, n=-1), np.arange(3))
    check(lambda x: [np.diff(x, n=n) for n in range(0, 5)], np.arange(3))


@port("TestDiff.test_prepend")
@port("TestDiff.test_append")
def test_diff_prepend_append():
    check(lambda x: (np.diff(x, prepend=0), np.diff(x, prepend=[0]),
                     np.cumsum(np.diff(x, prepend=0)), np.diff(x, prepend=[-1, 0]),
                     np.diff(x, append=0), np.diff(x, append=[0]), np.diff(x, append=[0, 2])),
          np.arange(5) + 1)
    check(lambda x: (np.diff(x, axis=1, prepend=0), np.diff(x, axis=1, prepend=[[0], [0]]),
                     np.diff(x, axis=0, prepend=0), np.diff(x, axis=0, prepend=[[0, 0]]),
                     np.diff(x, axis=1, append=0), np.diff(x, axis=1, append=[[0], [0]]),
                     np.diff(x, axis=0, append=0), np.diff(x, axis=0, append=[[0, 0]])),
          np.arange(4).reshape(2, 2))
    x = np.arange(4).reshape(2, 2)
    raises(ValueError, lambda x: np.diff(x, prepend=np.zeros((3, 3))), x)
    raises(ValueError, lambda x: np.diff(x, append=np.zeros((3, 3))), x)
    raises(np.AxisError, lambda x: np.diff(x, prepend=0, axis=3), x)
    raises(np.AxisError, lambda x: np.diff(x, append=0, axis=3), x)


@port("TestGradient.test_basic")
@port("TestGradient.test_specific_axes")
def test_gradient_basic():
    check(lambda x: (np.gradient(x), np.gradient(x, axis=0), np.gradient(x, axis=1),
                     np.gradient(x, axis=-1), np.gradient(x, axis=(1, 0)), np.gradient(x, axis=None),
                     np.gradient(x, 2, 3, axis=(1, 0))), np.array([[1, 1], [3, 4]]))
    check(lambda: np.gradient([[1, 1], [3, 4]]))
    x = np.array([[1, 1], [3, 4]])
    raises(TypeError, lambda x: np.gradient(x, 1, 2, axis=1), x)
    raises(np.AxisError, lambda x: np.gradient(x, axis=3), x)
    raises(np.AxisError, lambda x: np.gradient(x, axis=-3), x)


@port("TestGradient.test_args")
def test_gradient_args():
    dx = np.cumsum(np.ones(5))
    check(lambda v, dx: (np.gradient(v, 3.0), np.gradient(v, np.array(3.0)), np.gradient(v, dx)),
          np.arange(5), dx)
    f_2d = np.arange(25).reshape(5, 5)
    check(lambda f, dx: (np.gradient(f, 1.5), np.gradient(f, np.array(1.5)),
                         np.gradient(f, [1.0, 2.0, 5.0, 9.0, 11.0], [1.0, 2.0, 5.0, 9.0, 11.0]),
                         np.gradient(f, dx, 2), np.gradient(f, dx, axis=1)), f_2d, dx)
    raises(ValueError, lambda f, dx: np.gradient(f, np.stack([dx] * 2, axis=-1), 1), f_2d, dx)


@port("TestGradient.test_badargs")
def test_gradient_badargs():
    f_2d = np.arange(25).reshape(5, 5)
    x = np.cumsum(np.ones(5))
    for args in [(x, np.ones(2)), (1, np.ones(2)), (np.ones(2), np.ones(2))]:
        raises(ValueError, lambda f, args=args: np.gradient(f, *args), f_2d)
    for args, kw in [((x,), {}), ((x,), {"axis": (0, 1)}), ((x, x, x), {}), ((1, 1, 1), {}),
                     ((x, x), {"axis": 1}), ((1, 1), {"axis": 1})]:
        raises(TypeError, lambda f, args=args, kw=kw: np.gradient(f, *args, **kw), f_2d)


@port("TestGradient.test_second_order_accurate")
def test_gradient_second_order_accurate():
    def f(x):
        dx = x[1] - x[0]
        y = 2 * x**3 + 4 * x**2 + 2 * x
        analytical = 6 * x**2 + 8 * x + 2
        return np.abs((np.gradient(y, dx, edge_order=2) / analytical) - 1)
    check(f, np.linspace(0, 1, 10))

    def g(x):
        y = 2 * x**3 + 4 * x**2 + 2 * x
        analytical = 6 * x**2 + 8 * x + 2
        return np.abs((np.gradient(y, x, edge_order=2) / analytical) - 1)
    check(g, np.sort(np.random.default_rng(0).random(10)), rtol=1e-9)


@port("TestGradient.test_spacing")
def test_gradient_spacing():
    f0 = np.array([0, 2.0, 3.0, 4.0, 5.0, 5.0])
    f = np.tile(f0, (6, 1)) + f0.reshape(-1, 1)
    xu, xe = np.array([0.0, 0.5, 1.0, 3.0, 5.0, 7.0]), np.arange(6.0)

    def g(f, xe, xu):
        r = []
        for eo in (1, 2):
            r += [np.gradient(f, 1.0, axis=(0, 1), edge_order=eo),
                  np.gradient(f, xe, xe, axis=(0, 1), edge_order=eo),
                  np.gradient(f, xe, xe, axis=None, edge_order=eo),
                  np.gradient(f, 1.0, axis=0, edge_order=eo), np.gradient(f, xe, axis=0, edge_order=eo),
                  np.gradient(f, xe, axis=1, edge_order=eo),
                  np.gradient(f, xu, xu, axis=(0, 1), edge_order=eo),
                  np.gradient(f, xu, axis=0, edge_order=eo), np.gradient(f, xu, axis=1, edge_order=eo),
                  np.gradient(f, xe, xu, axis=(0, 1), edge_order=eo),
                  np.gradient(f, xu, xe, axis=(1, 0), edge_order=eo)]
        return r
    check(g, f, xe, xu, rtol=1e-12)


@port("TestGradient.test_inexact_dtypes")
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_gradient_inexact_dtypes(dt):
    check(lambda x: (np.gradient(x).dtype, np.diff(x).dtype, np.gradient(x)),
          np.array([1, 2, 3], dtype=dt))


@port("TestGradient.test_values")
def test_gradient_values():
    check(lambda a, b: (np.gradient(a, edge_order=1), np.gradient(b, edge_order=2)),
          np.arange(2), np.arange(3))
    for n, eo in [(0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]:
        raises(ValueError, lambda x, eo=eo: np.gradient(x, edge_order=eo), np.arange(n))


@port("TestGradient.test_f_decreasing_unsigned_int")
@port("TestGradient.test_x_decreasing_unsigned")
def test_gradient_unsigned():
    check(lambda f: np.gradient(f), np.array([5, 4, 3, 2, 1], dtype=np.uint8))
    check(lambda x, f: np.gradient(f, x), np.array([3, 2, 1], dtype=np.uint8), np.array([0, 2, 4]))


@port("TestGradient.test_f_signed_int_big_jump")
@port("TestGradient.test_x_signed_int_big_jump")
@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64])
def test_gradient_signed_big_jump(dt):
    mx, mn = np.iinfo(dt).max, np.iinfo(dt).min
    check(lambda x, f: np.gradient(f, x), np.array([1, 3]), np.array([-1, mx], dtype=dt))
    check(lambda x, f: np.gradient(f, x), np.array([-1, mx], dtype=dt), np.array([mn // 2, 0]))


@port("TestAngle.test_basic")
def test_angle_real():  # the real part of torch's (complex: another issue's)
    check(lambda x: (np.angle(x), np.angle(x, deg=True)), np.array([1.0, -1.0, 0.0, -0.0, 2.0]))


@port("TestExtins.test_basic")
@port("TestExtins.test_place")
@port("TestExtins.test_both")
def test_extract_place():
    check(lambda a: np.extract(a > 1, a), np.array([1, 3, 2, 1, 2, 3, 3]))

    def f(a):
        np.place(a, [0, 1, 0, 1, 0, 1, 0], [2, 4, 6])
        r1 = a.copy()
        np.place(a, np.zeros(7), [])
        r2 = a.copy()
        np.place(a, [1, 0, 1, 0, 1, 0, 1], [8, 9])
        return r1, r2, a
    check(f, np.array([1, 4, 3, 2, 5, 8, 7]))

    def g(a):
        mask = a > 0.5
        ac = a.copy()
        c = np.extract(mask, a)
        np.place(a, mask, 0)
        np.place(a, mask, c)
        return a, ac
    check(g, np.random.default_rng(3).random(10))


@port("TestDigitize.test_forward")
@port("TestDigitize.test_reverse")
@port("TestDigitize.test_right_basic")
@port("TestDigitize.test_right_open")
@port("TestDigitize.test_right_open_reverse")
def test_digitize():
    check(lambda x, b: (np.digitize(x, b), np.digitize(x[::-1], b[::-1]), np.digitize(x, b, True)),
          np.arange(-6, 5), np.arange(-5, 5))
    check(lambda x, b: (np.digitize(x, b), np.digitize(x, b, True)),
          np.array([1, 5, 4, 10, 8, 11, 0]), np.array([1, 5, 10]))
    check(lambda x, b: (np.digitize(x, b, True), np.digitize(x[::-1], np.arange(4, -6, -1), True)),
          np.arange(-6, 5), np.arange(-6, 4))


@port("TestDigitize.test_random")
@port("TestDigitize.test_right_open_random")
def test_digitize_random():
    def f(x):
        b = np.linspace(x.min(), x.max(), 10)
        return np.digitize(x, b), np.digitize(x, b, True)
    check(f, np.random.default_rng(4).random(10))


@port("TestDigitize.test_monotonic")
def test_digitize_monotonic():
    x = np.array([-1, 0, 1, 2])
    for bins in [[0, 0, 1], [1, 1, 0], [1, 1, 1, 1]]:
        check(lambda x, b: (np.digitize(x, b, False), np.digitize(x, b, True)), x, np.array(bins))
    for bins in [[0, 0, 1, 0], [1, 1, 0, 1]]:
        raises(ValueError, lambda x: np.digitize(x, bins), x)


@port("TestDigitize.test_large_integers_increasing")
@port("TestDigitize.test_large_integers_decreasing")
def test_digitize_large_integers():
    x = 2**54
    check(lambda b: (np.digitize(x, b), np.digitize(x, b[::-1])), np.array([x - 1, x + 1]))


@port("TestUnwrap.test_simple")
@port("TestUnwrap.test_period")
def test_unwrap():
    check(lambda a: (np.unwrap(a), np.diff(np.unwrap(a * 100)) < np.pi),
          np.array([1, 1 + 2 * np.pi]))
    check(lambda a: np.unwrap(a, period=255), np.array([1, 1 + 256]))
    check(lambda s: np.unwrap(np.mod(s, 255), period=255), np.array([0, 75, 150, 225, 300]))
    check(lambda s: (np.unwrap(np.mod(s, 250), period=250),
                     np.unwrap(np.mod(s, 250), period=250, discont=140)),
          np.array([0, 75, 150, 225, 300, 430]))


@port("TestFilterwindows.test_hanning")
@port("TestFilterwindows.test_hamming")
@port("TestFilterwindows.test_bartlett")
@port("TestFilterwindows.test_blackman")
@port("TestFilterwindows.test_kaiser")
@pytest.mark.parametrize("M", [0, 1, 10])
def test_windows(M):
    def f(x):
        ws = [np.hanning(M), np.hamming(M), np.bartlett(M), np.blackman(M), np.kaiser(M, 0)]
        return [(w + x, np.flipud(w + x), np.sum(w + x, axis=0)) for w in ws]
    check(f, np.array(0.0), rtol=1e-12)


@port("TestTrapz.test_simple")
def test_trapz_simple():
    check(lambda x: np.trapz(np.exp(-0.5 * x**2) / np.sqrt(2 * np.pi), dx=0.1),
          np.arange(-10, 10, 0.1), rtol=1e-12)


@port("TestTrapz.test_ndim")
def test_trapz_ndim():
    def f(x, y, z):
        q = x[:, None, None] + y[None, :, None] + z[None, None, :]
        return (np.trapz(q, x=x[:, None, None], axis=0), np.trapz(q, x=y[None, :, None], axis=1),
                np.trapz(q, x=z[None, None, :], axis=2), np.trapz(q, x=x, axis=0),
                np.trapz(q, x=y, axis=1), np.trapz(q, x=z, axis=2))
    check(f, np.linspace(0, 1, 3), np.linspace(0, 2, 8), np.linspace(0, 3, 13), rtol=1e-13)


@port("TestSinc.test_simple")
@port("TestSinc.test_array_like")
def test_sinc():
    check(lambda x: (np.sinc(0), np.sinc(x), np.flipud(np.sinc(x))), np.linspace(-1, 1, 100),
          rtol=1e-13)
    check(lambda: (np.sinc(np.array([0, 0.5])), np.sinc([0, 0.5]), np.sinc((0, 0.5))))


@port("TestUnique.test_simple")
def test_unique_simple():
    check(lambda x, y: (np.unique(x), np.unique(y)), np.array([4, 3, 2, 1, 1, 2, 3, 4, 0]),
          np.array([1, 1, 1, 1, 1]))


A_CC = np.array([[0.15391142, 0.18045767, 0.14197213], [0.70461506, 0.96474128, 0.27906989],
                 [0.9297531, 0.32296769, 0.19267156]])
B_CC = np.array([[0.10377691, 0.5417086, 0.49807457], [0.82872117, 0.77801674, 0.39226705],
                 [0.9314666, 0.66800209, 0.03538394]])


@port("TestCorrCoef.test_non_array")
@port("TestCorrCoef.test_simple")
@port("TestCorrCoef.test_extreme")
def test_corrcoef():
    check(lambda x: np.corrcoef(x, [1, 0, 1]), np.array([0, 1, 0]))
    check(lambda a, b: (np.corrcoef(a), np.corrcoef(a, b)), A_CC, B_CC, rtol=1e-12)
    check(lambda x: np.corrcoef(x), np.array([[1e-100, 1e100], [1e100, 1e-100]]))


@port("TestCorrCoef.test_ddof")
@port("TestCorrCoef.test_bias")
def test_corrcoef_ddof_bias():
    check(lambda a, b: (np.corrcoef(a, ddof=-1), np.corrcoef(a, b, ddof=3), np.corrcoef(a, bias=1)),
          A_CC, B_CC, rtol=1e-12)


@port("TestCorrCoef.test_empty")
@port("TestCov.test_empty")
def test_corrcoef_cov_empty():
    for fn in (np.corrcoef, np.cov):
        check(lambda a, b, c, fn=fn: (fn(a), fn(b), fn(c)), np.array([]),
              np.array([]).reshape(0, 2), np.array([]).reshape(2, 0))


@port("TestCorrCoef.test_corrcoef_dtype")
@port("TestCov.test_cov_dtype")
@pytest.mark.parametrize("dt", [np.half, np.single, np.double])
def test_corrcoef_cov_dtype(dt):
    check(lambda a: (np.corrcoef(a, dtype=dt), np.cov(a, dtype=dt)), A_CC.astype(dt), rtol=5e-3)


X1 = np.array([[0, 2], [1, 1], [2, 0]]).T
X2 = np.array([0.0, 1.0, 2.0], ndmin=2)
X3 = np.array([0.3942, 0.5969, 0.7730, 0.9918, 0.7964])
FREQ = np.array([1, 4, 1])
W = np.array([1.0, 4.0, 1.0])


@port("TestCov.test_basic")
@port("TestCov.test_1D_rowvar")
@port("TestCov.test_1D_variance")
@port("TestCov.test_wrong_ddof")
def test_cov_basic():
    y = np.array([0.0780, 0.3107, 0.2111, 0.0334, 0.8501])
    check(lambda x1, x3, y: (np.cov(x1), np.cov(x3), np.cov(x3, rowvar=False), np.cov(x3, y),
                             np.cov(x3, y, rowvar=False), np.cov(x3, ddof=1),
                             np.var(x3, ddof=1), np.cov(x1, ddof=5)), X1, X3, y, rtol=1e-12)


@port("TestCov.test_fweights")
@port("TestCov.test_aweights")
@port("TestCov.test_unit_fweights_and_aweights")
def test_cov_weights():
    def f(x1, x2, fr, w):
        uf, uw = np.ones(3, dtype=np.int_), np.ones(3)
        return (np.cov(x2, fweights=fr), np.cov(x1, fweights=fr), np.cov(x1, fweights=uf),
                np.cov(x1, aweights=w), np.cov(x1, aweights=3.0 * w), np.cov(x1, aweights=uw),
                np.cov(x2, fweights=fr, aweights=uw), np.cov(x1, fweights=fr, aweights=uw),
                np.cov(x1, fweights=uf, aweights=w), np.cov(x1, fweights=uf, aweights=3.0 * w))
    check(f, X1, X2, FREQ, W, rtol=1e-12)
    raises(TypeError, lambda x, f: np.cov(x, fweights=f), X1, FREQ + 0.5)
    raises(ValueError, lambda x, f: np.cov(x, fweights=f), X1, -FREQ)
    raises(ValueError, lambda x, f: np.cov(x, aweights=f), X1, -W)
    for bad in [np.ones((2, 3), dtype=np.int_), np.ones(2, dtype=np.int_)]:
        raises(RuntimeError, lambda x, f: np.cov(x, fweights=f), X1, bad)
        raises(RuntimeError, lambda x, f: np.cov(x, aweights=f), X1, bad * 1.0)


@port("Test_I0.test_simple")
def test_i0():
    check(lambda a, b: (np.i0(0.5), np.i0(a), np.i0(-a), np.i0(b), np.i0([0.0]).shape),
          np.array([0.49842636, 0.6969809, 0.22011976, 0.0155549, 10.0]),
          np.array([[0.827002, 0.99959078], [0.89694769, 0.39298162], [0.37954418, 0.05206293],
                    [0.36465447, 0.72446427], [0.48164949, 0.50324519]]), rtol=1e-14)


@port("TestKaiser.test_simple")
@port("TestKaiser.test_int_beta")
def test_kaiser():
    check(lambda x: [np.kaiser(1, 1.0) + x, np.kaiser(0, 1.0) + x, np.kaiser(2, 1.0) + x,
                     np.kaiser(5, 1.0) + x, np.kaiser(5, 1.56789) + x, np.kaiser(3, 4) + x],
          np.array(0.0))


@port("TestMsort.test_simple")
def test_msort():
    check(lambda a: np.msort(a), np.random.default_rng(5).random((3, 3)))


@port("TestMeshgrid.test_simple")
@port("TestMeshgrid.test_single_input")
@port("TestMeshgrid.test_indexing")
@port("TestMeshgrid.test_sparse")
def test_meshgrid():
    def f(x, y, z):
        return (np.meshgrid(x, y), np.meshgrid(x), np.meshgrid(x, y, indexing="ij"),
                np.meshgrid(x, y, z), np.meshgrid(x, y, z, indexing="ij"),
                np.meshgrid(x, y, sparse=True))
    check(f, np.array([1, 2, 3]), np.array([4, 5, 6, 7]), np.array([8, 9]))
    raises(ValueError, lambda x: np.meshgrid(x, x, indexing="notvalid"), np.array([1, 2]))


@port("TestMeshgrid.test_no_input")
@port("TestMeshgrid.test_invalid_arguments")
def test_meshgrid_no_input_invalid():
    check(lambda x: (np.meshgrid(), np.meshgrid(copy=False), x), np.array(1))
    raises(TypeError, lambda x: np.meshgrid(x, x, indices="ij"), np.array([1, 2]))


@port("TestMeshgrid.test_return_type")
@port("TestMeshgrid.test_writeback")
def test_meshgrid_return_type_writeback():
    check(lambda x, y: (np.meshgrid(x, y), np.meshgrid(x, y, copy=True),
                        np.meshgrid(x, y, sparse=True)),
          np.arange(0, 10, dtype=np.float32), np.arange(10, 20, dtype=np.float64))

    def f(X, Y):
        x, y = np.meshgrid(X, Y, sparse=False, copy=True)
        x[0, :] = 0
        return x, X
    check(f, np.array([1.1, 2.2]), np.array([3.3, 4.4]))


@port("TestMeshgrid.test_nd_shape")
@port("TestMeshgrid.test_nd_values")
@port("TestMeshgrid.test_nd_indexing")
def test_meshgrid_nd():
    check(lambda z: [m.shape for m in np.meshgrid(*(z[:i] for i in range(1, 6)))] +
          list(np.meshgrid(z[:1], z[1:3], z[3:6])) +
          list(np.meshgrid(z[:1], z[1:3], z[3:6], indexing="ij")), np.arange(6))


@port("TestPiecewise.test_simple")
@port("TestPiecewise.test_two_conditions")
@port("TestPiecewise.test_default")
def test_piecewise():
    def f(x):
        return (np.piecewise(x, [True, False], [1]), np.piecewise(x, [[True, False]], [1]),
                np.piecewise(x, np.array([True, False]), [1]),
                np.piecewise(x, np.array([1, 0]), [1]), np.piecewise(x, [np.array([1, 0])], [1]),
                np.piecewise(x, [[False, True]], [lambda x: -1]))
    check(f, np.array([0, 0]))
    check(lambda x: (np.piecewise(x, [[True, False], [False, True]], [3, 4]),
                     np.piecewise(x, [True, False], [2]), np.piecewise(x, [True, False], [2, 3])),
          np.array([1, 2]))
    for fs in [[], [1, 2, 3]]:
        raises(ValueError, lambda x, fs=fs: np.piecewise(x, [[False, True]], fs), np.array([0, 0]))


@port("TestPiecewise.test_0d")
@port("TestPiecewise.test_0d_comparison")
@port("TestPiecewise.test_0d_0d_condition")
@port("TestPiecewise.test_scalar_domains_three_conditions")
@port("TestPiecewise.test_multidimensional_extrafunc")
def test_piecewise_0d():
    check(lambda x: (np.piecewise(x, x > 3, [4, 0]), np.piecewise(x, [np.array(x > 3)], [1, 2])),
          np.array(3))
    check(lambda x: np.piecewise(x, [x < 0, x >= 2], [-1, 1, 3]),
          np.array([[-2.5, -1.5, -0.5], [0.5, 1.5, 2.5]]))
    check(lambda: (np.piecewise(5, [True, False], [1, 0]),
                   np.piecewise(5, [False, False, True], [1, 2, 3]),
                   np.piecewise(3, [True, False, False], [4, 2, 0]),
                   np.piecewise(3, [3 <= 3, 3 > 3], [4, 0])))
    for fs in [[1], [1, 1, 1, 1]]:
        raises(ValueError, lambda x, fs=fs: np.piecewise(x, [x <= 3, x > 3], fs), np.array(4))


@port("TestBincount.test_simple")
@port("TestBincount.test_simple2")
@port("TestBincount.test_simple_weight")
@port("TestBincount.test_simple_weight2")
@port("TestBincount.test_with_minlength")
@port("TestBincount.test_with_minlength_smaller_than_maxvalue")
@port("TestBincount.test_with_minlength_and_weights")
@port("TestBincount.test_empty")
@port("TestBincount.test_empty_with_minlength")
def test_bincount():
    check(lambda x: np.bincount(x), np.arange(4))
    check(lambda x: np.bincount(x), np.array([1, 5, 2, 4, 1]))
    check(lambda x, w: np.bincount(x, w), np.arange(4), np.array([0.2, 0.3, 0.5, 0.1]))
    x, w = np.array([1, 2, 4, 5, 2]), np.array([0.2, 0.3, 0.5, 0.1, 0.2])
    check(lambda x, w: (np.bincount(x, w), np.bincount(x, w, 8)), x, w)
    check(lambda x: np.bincount(x, minlength=3), np.array([0, 1, 0, 1, 1]))
    check(lambda x: (np.bincount(x, minlength=2), np.bincount(x, minlength=0)),
          np.array([0, 1, 1, 2, 2, 3, 3]))
    check(lambda x: (np.bincount(x), np.bincount(x, minlength=5)), np.array([], dtype=int))


@port("TestBincount.test_with_incorrect_minlength")
def test_bincount_incorrect_minlength():
    for x in [np.array([], dtype=int), np.arange(5)]:
        raises(TypeError, lambda x: np.bincount(x, minlength="foobar"), x)
        raises(ValueError, lambda x: np.bincount(x, minlength=-1), x)


@port("TestBincount.test_error_not_1d")
@pytest.mark.parametrize("vals", [[[2, 2]], 2])
def test_bincount_not_1d(vals):
    raises(ValueError, lambda x: np.bincount(x), np.asarray(vals))


@port("TestInterp.test_exceptions")
def test_interp_exceptions():
    for xp, fp, kw in [([], [], {}), ([0], [1, 2], {}), ([0, 1], [1, 2], {"period": 0}),
                       ([], [], {"period": 360}), ([0], [1, 2], {"period": 360})]:
        raises(ValueError, lambda x, xp, fp, kw=kw: np.interp(x, xp, fp, **kw), np.array(0.0),
               np.array(xp, float), np.array(fp, float))


@port("TestInterp.test_basic")
@port("TestInterp.test_if_len_x_is_small")
def test_interp_basic():
    check(lambda x, y, x0: np.interp(x0, x, y), np.linspace(0, 1, 5), np.linspace(0, 1, 5),
          np.linspace(0, 1, 50))
    check(lambda xp: np.interp(np.pi, xp, np.sin(xp)), np.arange(0, 10, 0.001))


@port("TestInterp.test_right_left_behavior")
@pytest.mark.parametrize("size", [1, 2, 5, 9])
def test_interp_right_left(size):
    def f(xp, yp, inc):
        dec = inc[::-1]
        return [np.interp(p, xp, yp, **kw) for p in (inc, dec)
                for kw in ({}, {"left": 0}, {"right": 2}, {"left": 0, "right": 2})]
    check(f, np.arange(size, dtype=np.double), np.ones(size, dtype=np.double),
          np.array([-1, 0, size - 1, size], dtype=np.double))


@port("TestInterp.test_scalar_interpolation_point")
@port("TestInterp.test_zero_dimensional_interpolation_point")
def test_interp_scalar_points():
    def f(x, y):
        return [np.interp(x0, x, y) for x0 in (0, 0.3, np.float32(0.3), np.float64(0.3), np.nan,
                                               np.array(0.3))]
    check(f, np.linspace(0, 1, 5), np.linspace(0, 1, 5))
    check(lambda xp, fp: (np.interp(np.array(1), xp, fp), np.interp(np.array(4.5), xp, fp, period=4)),
          np.array([0, 2, 4]), np.array([1, -1, 1]))


@port("TestInterp.test_non_finite_behavior_exact_x")
@port("TestInterp.test_non_finite_any_nan")
@port("TestInterp.test_non_finite_inf")
@port("TestInterp.test_non_finite_half_inf_xf")
@port("TestInterp.test_non_finite_half_inf_x")
@port("TestInterp.test_non_finite_half_inf_f")
def test_interp_non_finite():
    inf, nan = np.inf, np.nan
    check(lambda x: (np.interp(x, [1, 2, 3, 4], [1, 2, inf, 4]),
                     np.interp(x, [1, 2, 3, 4], [1, 2, nan, 4])), np.array([1, 2, 2.5, 3, 4]))
    cases = [([nan, 1], [0, 10]), ([0, nan], [0, 10]), ([0, 1], [nan, 10]), ([0, 1], [0, nan]),
             ([-inf, inf], [0, 10]), ([0, 1], [-inf, inf]), ([0, 1], [inf, -inf]),
             ([-inf, inf], [10, 10]), ([-inf, 1], [-inf, 10]), ([-inf, 1], [inf, 10]),
             ([-inf, 1], [0, -inf]), ([-inf, 1], [0, inf]), ([0, inf], [-inf, 10]),
             ([0, inf], [inf, 10]), ([0, inf], [0, -inf]), ([0, inf], [0, inf]),
             ([-inf, -inf], [0, 10]), ([-inf, 1], [0, 10]), ([0, inf], [0, 10]),
             ([inf, inf], [0, 10]), ([0, 1], [0, -inf]), ([0, 1], [0, inf]), ([0, 1], [-inf, 10]),
             ([0, 1], [inf, 10]), ([0, 1], [-inf, -inf]), ([0, 1], [inf, inf])]
    check(lambda x: [np.interp(x, xp, fp) for xp, fp in cases], np.array(0.5))


@port("TestInterp.test_period")
def test_interp_period():
    x = np.array([-180, -170, -185, 185, -10, -5, 0, 365])
    check(lambda x: (np.interp(x, [190, -190, 350, -350], [5, 10, 3, 4], period=360),
                     np.interp(x.reshape(2, -1), [190, -190, 350, -350], [5, 10, 3, 4], period=360)),
          x)


@port("TestPercentile.test_basic")
@port("TestPercentile.test_api")
@port("TestPercentile.test_2D")
@port("TestPercentile.test_sequence")
@port("TestPercentile.test_percentile_list")
@port("TestPercentile.test_linear_interpolation_extrapolation")
def test_percentile_basic():
    def f(x):
        r = [np.percentile(x, 0), np.percentile(x, 100), np.percentile(x, 50),
             np.percentile(x, [0, 100, 50])]
        x[1] = np.nan
        return r + [np.percentile(x, 0), np.percentile(x, 0, method="nearest")]
    check(f, np.arange(8) * 0.5)
    check(lambda d: (np.percentile(d, 5, None, None, False),
                     np.percentile(d, 5, None, None, False, "linear"),
                     np.percentile(d, 5, None, np.ones((1,)), False, "linear")), np.ones(5))
    check(lambda x: np.percentile(x, 50, axis=0),
          np.array([[1, 1, 1], [1, 1, 1], [4, 4, 3], [1, 1, 1], [1, 1, 1]]))
    check(lambda: np.percentile([1, 2, 3], 0))
    check(lambda a: (np.percentile(a, 100), a.max(), np.percentile(a, 0), a.min()),
          np.random.default_rng(6).random(5))


@port("TestPercentile.test_linear_nan_1D")
@port("TestPercentile.test_linear_interpolation")
@pytest.mark.parametrize("dt", ["l", "b", np.float32, np.float64])
@pytest.mark.parametrize("method", ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                                    "interpolated_inverted_cdf", "hazen", "weibull", "linear",
                                    "median_unbiased", "normal_unbiased"])
def test_percentile_methods(method, dt):
    check(lambda a: np.percentile(a, 40.0, method=method),
          np.asarray([15.0, 20.0, 35.0, 40.0, 50.0]).astype(dt), rtol=1e-14)
    if np.dtype(dt) == np.float64:  # (float32 with a nan: NumPy's dtype depends on the data)
        check(lambda a: np.percentile(a, 40.0, method="linear"),
              np.asarray([15.0, np.nan, 35.0, 40.0, 50.0], dtype=dt))


@port("TestPercentile.test_lower_higher")
@port("TestPercentile.test_midpoint")
@port("TestPercentile.test_nearest")
@pytest.mark.parametrize("dt", ["b", "h", "i", "l", "B", np.float16, np.float32, np.float64])
def test_percentile_lower_higher_midpoint_nearest(dt):
    def f(a10, a9, a11):
        return (np.percentile(a10, 50, method="lower"), np.percentile(a10, 50, method="higher"),
                np.percentile(a10, 51, method="midpoint"), np.percentile(a9 + 1, 50, method="midpoint"),
                np.percentile(a11, 51, method="midpoint"), np.percentile(a11, 50, method="midpoint"),
                np.percentile(a10, 51, method="nearest"), np.percentile(a10, 49, method="nearest"))
    check(f, np.arange(10, dtype=dt), np.arange(9, dtype=dt), np.arange(11, dtype=dt))


@port("TestPercentile.test_axis")
@port("TestPercentile.test_scalar_q")
@port("TestPercentile.test_scalar_q_2")
def test_percentile_axis_scalar_q():
    def f(x, x4):
        r = [np.percentile(x, (25, 50, 100)), np.percentile(x, (25, 50, 100), axis=0),
             np.percentile(x, (25, 50, 100), axis=1), np.percentile(x, 50),
             np.percentile(x, 50, axis=0), np.percentile(x, 50, axis=1),
             np.percentile(x, 50, method="lower"), np.percentile(x, 50, method="lower", axis=0),
             np.percentile(x, 50, method="lower", axis=1)]
        for out, ax in [(np.empty(1), None), (np.empty(4), 0), (np.empty(3), 1)]:
            r += [np.percentile(x, 50, axis=ax, out=out), out]
        for out, ax in [(np.empty((), dtype=x.dtype), None), (np.empty(4, dtype=x.dtype), 0),
                        (np.empty(3, dtype=x.dtype), 1)]:
            r += [np.percentile(x, 50, method="lower", axis=ax, out=out), out]
        for q in [(25, 50), (25, 50, 75)]:
            for ax in [None, 0, 1, 2, 3]:
                r += [np.percentile(x4, q, axis=ax).shape,
                      np.percentile(x4, q, axis=ax, method="higher").shape]
        return r
    check(f, np.arange(12).reshape(3, 4), np.arange(3 * 4 * 5 * 6).reshape(3, 4, 5, 6))


@port("TestPercentile.test_exception")
@port("TestPercentile.test_nan_q")
def test_percentile_exceptions():
    raises(ValueError, lambda x: np.percentile(x, 56, method="foobar"), np.array([1, 2]))
    for q in [101, -1, list(range(50)) + [101], list(range(50)) + [-0.1], np.nan, [np.nan]]:
        raises(ValueError, lambda x, q=q: np.percentile(x, q), np.array([1.0, 2, 3, 4]))


@port("TestPercentile.test_percentile_out")
def test_percentile_out():
    def f(x, x2, x3):
        p = (1, 2, 3)
        r = []
        for x_, ax, shape in [(x, None, (3,)), (x2, 0, (3, 3)), (x2, 1, (3, 2))]:
            y = np.zeros(shape)
            np.percentile(x_, p, axis=ax, out=y)
            r += [y, np.percentile(x_, p, axis=ax)]
        for q, ax, shape, dt, kw in [((25, 50), 0, (2, 4), float, {}), ((25, 50), 1, (2, 3), float, {}),
                                     ((25, 50), 0, (2, 4), x3.dtype, {"method": "lower"}),
                                     ((25, 50), 1, (2, 3), x3.dtype, {"method": "lower"})]:
            out = np.empty(shape, dtype=dt)
            r += [np.percentile(x3, q, axis=ax, out=out, **kw), out]
        return r
    check(f, np.array([1, 2, 3]), np.array([[1, 2, 3], [4, 5, 6]]), np.arange(12).reshape(3, 4))


@port("TestPercentile.test_percentile_empty_dim")
def test_percentile_empty_dim():
    check(lambda d: [np.percentile(d, 50, axis=ax).shape for ax in range(-4, 4)] +
          [np.percentile(d, 50, axis=2, method="midpoint").shape,
           np.percentile(d, 50, axis=-2, method="midpoint").shape] +
          [np.percentile(d, [10, 50], axis=ax).shape for ax in range(4)],
          np.arange(11 * 2).reshape(11, 1, 2, 1))


@port("TestPercentile.test_percentile_no_overwrite")
@port("TestPercentile.test_no_p_overwrite")
@port("TestPercentile.test_percentile_overwrite")
def test_percentile_overwrite():
    # (with overwrite_input=True NumPy leaves a partly sorted, as its documentation allows;
    # hop leaves it as it was: only the result is compared)
    check(lambda a: (np.percentile(a, [50], overwrite_input=False), a.copy(), np.percentile(a, [50]),
                     a.copy(), np.percentile(a.copy(), [50], overwrite_input=True)),
          np.array([2, 3, 4, 1]))
    check(lambda x: np.percentile(x, np.linspace(0.0, 100.0, num=5), method="midpoint"),
          np.arange(100.0))


@port("TestPercentile.test_extended_axis")
def test_percentile_extended_axis():
    o = np.random.default_rng(7).normal(size=(11, 7))

    def f(o):
        x = np.dstack([o] * 4)
        r = [np.percentile(x, 30, axis=(0, 1)), np.percentile(o, 30)]
        x = np.moveaxis(x, -1, 0)
        r += [np.percentile(x, 30, axis=(-2, -1))]
        x = x.swapaxes(0, 1).copy()
        r += [np.percentile(x, 30, axis=(0, -1)), np.percentile(x, [25, 60], axis=(0, 1, 2)),
              np.percentile(x, [25, 60], axis=None), np.percentile(x, [25, 60], axis=(0,)),
              np.percentile(x, [25, 60], axis=0)]
        return r
    check(f, o)
    d = np.arange(3 * 5 * 7 * 11).reshape((3, 5, 7, 11))
    np.random.default_rng(8).shuffle(d.ravel())
    check(lambda d: (np.percentile(d, 25, axis=(0, 1, 2)), np.percentile(d, [10, 90], axis=(0, 1, 3)),
                     np.percentile(d, 25, axis=(3, 1, -4)), np.percentile(d, 25, axis=(3, 1, 2)),
                     np.percentile(d, 25, axis=(3, 2)), np.percentile(d, 25, axis=(1, -2)),
                     np.percentile(d, 25, axis=(1, 3))), d)


@port("TestPercentile.test_extended_axis_invalid")
@port("TestMedian.test_extended_axis_invalid")
def test_percentile_median_extended_axis_invalid():
    d = np.ones((3, 5, 7, 11))
    for axis in [-5, (0, -5), 4, (0, 4)]:
        raises(np.AxisError, lambda d, axis=axis: np.percentile(d, 25, axis=axis), d)
        raises(np.AxisError, lambda d, axis=axis: np.median(d, axis=axis), d)
    for axis in [(1, 1), (-1, -1), (3, -1)]:
        raises(ValueError, lambda d, axis=axis: np.percentile(d, 25, axis=axis), d)
        raises(ValueError, lambda d, axis=axis: np.median(d, axis=axis), d)


@port("TestPercentile.test_keepdims")
@port("TestPercentile.test_keepdims_2")
@port("TestMedian.test_keepdims")
@port("TestMedian.test_keepdims_2")
def test_percentile_median_keepdims():
    def f(d):
        r = []
        for axis in [None, (0, 1), (0, 3), (1,), (0, 1, 2, 3), (0, 1, 3)]:
            r += [np.percentile(d, 7, axis=axis, keepdims=True).shape,
                  np.median(d, axis=axis, keepdims=True).shape]
        r += [np.percentile(d, [1, 7], axis=(0, 1, 3), keepdims=True).shape,
              np.percentile(d, [1, 7], axis=(0, 3), keepdims=True).shape]
        return r
    check(f, np.ones((3, 5, 7, 11)))


@port("TestPercentile.test_keepdims_out")
@port("TestMedian.test_keepdims_out")
@pytest.mark.parametrize("q", [7, [1, 7]])
@pytest.mark.parametrize("axis", [None, 1, (1,), (0, 1), (-3, -1)])
def test_percentile_median_keepdims_out(q, axis):
    def f(d):
        if axis is None:
            shape_out = (1,) * d.ndim
        else:
            ax = [a % d.ndim for a in ((axis,) if isinstance(axis, int) else axis)]
            shape_out = tuple(1 if i in ax else d.shape[i] for i in range(d.ndim))
        out = np.empty(np.shape(q) + shape_out)
        r = np.percentile(d, q, axis=axis, keepdims=True, out=out)
        out2 = np.empty(shape_out)
        r2 = np.median(d, axis=axis, keepdims=True, out=out2)
        return r is out, r.shape, r2 is out2, r2.shape
    check(f, np.ones((3, 5, 7, 11)))


@port("TestPercentile.test_out")
@port("TestPercentile.test_out_nan")
@port("TestMedian.test_out")
@port("TestMedian.test_out_nan")
@pytest.mark.parametrize("nan", [False, True])
def test_percentile_median_out(nan):
    def f(d):
        if nan:
            d[2, 1] = np.nan
        r = []
        for shape, q, ax in [((4,), 0, 0), ((3,), 1, 1), ((), 2, None)]:
            o = np.zeros(shape)
            r += [np.percentile(d, q, ax, out=o), o.copy(),
                  np.percentile(d, q, ax, method="nearest", out=o), o.copy(),
                  np.median(d, ax, out=o), o]
        return r
    check(f, np.ones((3, 4)))


@port("TestPercentile.test_nan_behavior")
@port("TestMedian.test_nan_behavior")
@port("TestMedian.test_nan_behavior_2")
@port("TestMedian.test_nan_behavior_3")
def test_percentile_median_nan_behavior():
    def f(a1, a):
        a1[2] = np.nan
        a[1, 2, 3] = np.nan
        a[1, 1, 2] = np.nan
        r = [np.percentile(a1, 0.3), np.percentile(a1, 0.3, axis=0),
             np.percentile(a1, [0.3, 0.6], axis=0), np.median(a1), np.median(a1, axis=0),
             np.median(a), np.median(a).ndim, np.median(a, 0), np.median(a, 1), np.median(a, (0, 2))]
        for ax in [None, 0, 1, (0, 2)]:
            r += [np.percentile(a, 0.3, ax), np.percentile(a, [0.3, 0.6], ax)]
        r += [np.percentile(a, [0.3, 0.6], (0, 2), method="nearest")]
        return r
    check(f, np.arange(24, dtype=float), np.arange(24, dtype=float).reshape(2, 3, 4))


@port("TestQuantile.test_max_ulp")
@port("TestQuantile.test_basic")
@port("TestQuantile.test_quantile_scalar_nan")
def test_quantile_basic():
    check(lambda x: (np.quantile(x, 0), np.quantile(x, 1), np.quantile(x, 0.5)), np.arange(8) * 0.5)
    check(lambda x: np.quantile(x, 0.45), np.array([0.0, 0.2, 0.4]), rtol=2.3e-16)

    def f(a):
        a[0][1] = np.nan
        return np.quantile(a, 0.5)
    check(f, np.array([[10.0, 7.0, 4.0], [3.0, 2.0, 1.0]]))


@port("TestQuantile.test_correct_quantile_value")
def test_quantile_bool():
    check(lambda a: np.quantile(a, np.array([False, True, True])), np.array([False, True, True]))


@port("TestQuantile.test_no_p_overwrite")
def test_quantile_no_p_overwrite():
    check(lambda x: (np.quantile(x, np.array([0, 0.75, 0.25, 0.5, 1.0]), method="midpoint")),
          np.arange(100.0))
    check(lambda: np.quantile(np.arange(100.0), [0, 0.75, 0.25, 0.5, 1.0], method="midpoint"))


@port("TestQuantile.test_quantile_preserve_int_type")
@pytest.mark.parametrize("dt", ["B", "b", "h", "i", "l"])
def test_quantile_preserve_int_type(dt):
    check(lambda a: np.quantile(a, [0.5], method="nearest"), np.array([1, 2], dtype=dt))


@port("TestQuantile.test_quantile_monotonic")
@pytest.mark.parametrize("method", ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                                    "interpolated_inverted_cdf", "hazen", "weibull", "linear",
                                    "median_unbiased", "normal_unbiased", "nearest", "lower",
                                    "higher", "midpoint"])
def test_quantile_monotonic(method):
    def f(a, b):
        p0 = np.linspace(0, 1, 101)  # (traced quantiles are not supported)
        q1 = np.quantile(a * 0.1, p0, method=method)
        q2 = np.quantile(b, p0, method=method)
        return q1, np.sort(q1), q2, np.sort(q2)
    check(f, np.array([0, 1, 1, 2, 2, 3, 3, 4, 5, 5, 1, 1, 9, 9, 9, 8, 8, 7]),
          np.array([0.0, 1.0, 2.0, 3.0]), rtol=1e-14)


@port("TestMedian.test_basic")
@port("TestMedian.test_basic_2")
def test_median_basic():
    check(lambda a0, a1, a2: (np.median(a0), np.median(a1), np.median(a2), np.median(a2, axis=0),
                              np.median(a2, axis=1), np.median(a2, axis=None)),
          np.array(1), np.arange(2), np.arange(6).reshape(2, 3))
    for a in [[0.0444502, 0.0463301, 0.141249, 0.0606775], [0.0463301, 0.0444502, 0.141249],
              [0.0444502, 0.141249, 0.0463301]]:
        check(lambda a: (np.median(a), np.median(a).ndim), np.array(a))

    def g(a):
        a[1] = np.nan
        return np.median(a), np.median(a).ndim
    check(g, np.array([0.0444502, 0.141249, 0.0463301]))


@port("TestMedian.test_axis_keyword")
@port("TestMedian.test_overwrite_keyword")
@port("TestMedian.test_array_like")
def test_median_axis_overwrite():
    a3 = np.array([[2, 3], [0, 1], [6, 7], [4, 5]])

    def f(a3, r):
        out = [np.median(a, axis=ax) for a in (a3, r) for ax in [None] + list(range(a.ndim))]
        out += [a3, r, np.median(a3.T, axis=1), np.median(a3.T)]
        out += [np.median(a3.copy(), overwrite_input=True, axis=0),
                np.median(a3.T.copy(), overwrite_input=True, axis=1)]
        return out
    check(f, a3, np.random.default_rng(9).integers(0, 100, size=(2, 3, 4)))
    a4 = np.arange(3 * 4 * 5, dtype=np.float32).reshape((3, 4, 5))
    np.random.default_rng(10).shuffle(a4.ravel())
    check(lambda a4: [(np.median(a4, axis=ax), np.median(a4.copy(), axis=ax, overwrite_input=True))
                      for ax in [None, 0, 1, 2]], a4)
    check(lambda: (np.median([1, 2, 3]), np.median([[1, 2, 3]]), np.median([[1, 2, 3]], axis=0)))


@port("TestMedian.test_empty")
def test_median_empty():
    check(lambda a, b: (np.median(a), np.median(b), np.median(b, axis=0), np.median(b, axis=1),
                        np.median(b, axis=2)),
          np.array([], dtype=float), np.array([], dtype=float, ndmin=3))


@port("TestMedian.test_extended_axis")
def test_median_extended_axis():
    o = np.random.default_rng(11).normal(size=(11, 7))

    def f(o):
        x = np.dstack([o] * 4)
        r = [np.median(x, axis=(0, 1)), np.median(o)]
        x = np.moveaxis(x, -1, 0)
        r += [np.median(x, axis=(-2, -1))]
        x = x.swapaxes(0, 1).copy()
        r += [np.median(x, axis=(0, -1)), np.median(x, axis=(0, 1, 2)), np.median(x, axis=None),
              np.median(x, axis=(0,)), np.median(x, axis=0), np.median(x, axis=(-1,)),
              np.median(x, axis=-1)]
        return r
    check(f, o)
    d = np.arange(3 * 5 * 7 * 11).reshape((3, 5, 7, 11))
    np.random.default_rng(12).shuffle(d.ravel())
    check(lambda d: [np.median(d, axis=ax) for ax in [(0, 1, 2), (0, 1, 3), (3, 1, -4),
                                                      (3, 1, 2), (3, 2), (1, -2), (1, 3)]], d)


@port("TestInsert.test_basic")
def test_insert_basic():
    def f(a, b):
        return (np.insert(a, 0, 1), np.insert(a, 3, 1), np.insert(a, [1, 1, 1], [1, 2, 3]),
                np.insert(a, 1, [1, 2, 3]), np.insert(a, [1, -1, 3], 9),
                np.insert(a, slice(-1, None, -1), 9), np.insert(a, [-1, 1, 3], [7, 8, 9]),
                np.insert(b, 0, b[0]), np.insert(b, [], []))
    check(f, np.array([1, 2, 3]), np.array([0, 1], dtype=np.float64))
    check(lambda a, i: np.insert(a, i, [7, 8, 9]), np.array([1, 2, 3]), np.array([-1, 1, 3]))


@port("TestInsert.test_multidim")
def test_insert_multidim():
    check(lambda a: (np.insert(a, 0, [1]), np.insert(a, 0, [2, 2, 2], axis=0),
                     np.insert(a, 0, 2, axis=0), np.insert(a, 2, 2, axis=1)), np.array([[1, 1, 1]]))
    check(lambda a: (np.insert(a, [1], [[1], [2], [3]], axis=1), np.insert(a, [1], [1, 2, 3], axis=1),
                     np.insert(a, 1, [1, 2, 3], axis=1), np.insert(a, 1, [[1], [2], [3]], axis=1)),
          np.array([[1, 1], [2, 2], [3, 3]]))
    check(lambda a: (np.insert(a[:, :1], 1, a[:, 1], axis=1), np.insert(a[:1, :], 1, a[1, :], axis=0)),
          np.arange(4).reshape(2, 2))
    a = np.arange(24).reshape((2, 3, 4))
    check(lambda a: (np.insert(a, 1, a[:, :, 3], axis=-1), np.insert(a, 1, a[:, :, 3], axis=2),
                     np.insert(a, 1, a[:, 2, :], axis=-2), np.insert(a, 1, a[:, 2, :], axis=1)), a)
    raises(np.AxisError, lambda a: np.insert(a, 1, a[:, 2, :], axis=3), a)
    raises(np.AxisError, lambda a: np.insert(a, 1, a[:, 2, :], axis=-4), a)


@port("TestInsert.test_0d")
@port("TestInsert.test_index_array_copied")
@port("TestInsert.test_index_floats")
@port("TestInsert.test_index_out_of_bounds")
def test_insert_errors():
    raises(np.AxisError, lambda a: np.insert(a, [], 2, axis=0), np.array(1))
    raises(TypeError, lambda a: np.insert(a, [], 2, axis="nonsense"), np.array(1))
    check(lambda x: (np.insert([0, 1, 2], x, [3, 4, 5]), x), np.array([1, 1, 1]))
    raises(IndexError, lambda a: np.insert(a, np.array([1.0, 2.0]), [10, 20]), np.array([0, 1, 2]))
    raises(IndexError, lambda a: np.insert(a, np.array([], dtype=float), []), np.array([0, 1, 2]))
    for idx in [4, -4]:
        raises(IndexError, lambda a, idx=idx: np.insert(a, [idx], [3, 4]), np.array([0, 1, 2]))


def _delete_inverse(indices):
    def f(a, nd_a):
        return np.delete(a, indices), np.delete(nd_a, indices, axis=1)
    check(f, np.arange(5), np.arange(5).repeat(2).reshape(1, 5, 2))


@port("TestDelete.test_slices")
def test_delete_slices():
    for start in [-6, -2, 0, 1, 2, 4, 5]:
        for stop in [-6, 0, 2, 5]:
            for step in [-3, -1, 1, 3]:
                _delete_inverse(slice(start, stop, step))


@port("TestDelete.test_fancy")
@port("TestDelete.test_single")
def test_delete_fancy_single():
    for idx in [np.array([[0, 1], [2, 1]]), [0, -1, 2, 2], [True, False, False, True, False], 0, -4]:
        _delete_inverse(idx)
    check(lambda a, i: np.delete(a, i), np.arange(5), np.array([0, -1, 2, 2]))  # traced indices
    for bad, exc in [([100], IndexError), ([-100], IndexError), (True, ValueError),
                     (False, ValueError), ([False] * 4, ValueError)]:
        raises(exc, lambda a, bad=bad: np.delete(a, bad), np.arange(5))


@port("TestDelete.test_0d")
@port("TestDelete.test_index_floats")
def test_delete_errors():
    raises(np.AxisError, lambda a: np.delete(a, [], axis=0), np.array(1))
    raises(TypeError, lambda a: np.delete(a, [], axis="nonsense"), np.array(1))
    raises(IndexError, lambda a: np.delete(a, np.array([1.0, 2.0])), np.array([0, 1, 2]))
    raises(IndexError, lambda a: np.delete(a, np.array([], dtype=float)), np.array([0, 1, 2]))


@port("TestDelete.test_single_item_array")
@port("TestDelete.test_single_item_array_non_int")
def test_delete_single_item_array():
    check(lambda a, nd: (np.delete(a, 1), np.delete(a, np.array([1])), np.delete(a, [1]),
                         np.delete(nd, 1, axis=1), np.delete(nd, np.array([1]), axis=1)),
          np.arange(5), np.arange(5).repeat(2).reshape(1, 5, 2))
    check(lambda a, x: (np.delete(a, np.array([False])), np.delete(x, np.array([False]), axis=-1),
                        np.delete(x, np.array([True]), axis=-1)), np.ones(1), np.ones((3, 1)))
