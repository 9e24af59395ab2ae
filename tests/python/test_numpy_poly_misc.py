"""hop.numpy's polynomial functions and trim_zeros (issue #29) against
NumPy 1.24: each call by NumPy, by hop.numpy eagerly and by hop.compile
(numpy_diff.check: values, dtype, shape, ndarray-vs-scalar type, the
arguments after the call, the exception type)."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from numpy_diff import check, same


def _eager(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        r = fn(*[hnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args])

    def conv(x):
        if isinstance(x, tuple):
            return tuple(conv(y) for y in x)
        if isinstance(x, hnp.ndarray):
            return np.asarray(x)[()] if x._scalar else np.asarray(x)
        return x
    return conv(r)


def _both(fn, *args, compiles=True, rtol=None):
    """fn by NumPy, eagerly on hop.numpy arrays and compiled, all equal (or
    all raising the same type); compiles: hop.compile traces fn (no
    fallback to eager)."""
    check(fn, *args, rtol=rtol)
    try:
        want = fn(*args)
    except Exception as e:  # noqa: BLE001 (compared below)
        with pytest.raises(type(e)):
            _eager(fn, *args)
        return
    same(_eager(fn, *args), want, rtol)
    if compiles:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            hop.compile(fn)(*args)


POLYS = [np.array([1.0, -3.0, 2.0]), np.array([2, 0, -1, 5]), np.array([0.0, 0.0, 1.5, 2.0]),
         np.array([3], dtype=np.int32), np.array([1.0, 2.0], dtype=np.float32),
         np.array([0.0, 0.0]), np.array([1 + 2j, 3.0])]


@pytest.mark.parametrize("p", POLYS, ids=range(len(POLYS)))
def test_polyder_polyint_match_numpy_for_every_order(p):
    for m in (0, 1, 2, 4):
        _both(lambda a: np.polyder(a, m), p)
        _both(lambda a: np.polyint(a, m), p)
    _both(lambda a: np.polyint(a, 2, k=[1.0, 2.0]), p)
    _both(lambda a: np.polyint(a, 3, k=2.5), p)


def test_polyder_polyint_reject_negative_orders_and_short_k():
    for fn in (lambda a: np.polyder(a, -1), lambda a: np.polyint(a, -1),
               lambda a: np.polyint(a, 3, k=[1.0, 2.0])):
        _both(fn, POLYS[0])


@pytest.mark.parametrize("i", range(len(POLYS)))
def test_polyadd_polysub_pad_the_shorter_with_numpys_dtype(i):
    for q in POLYS:
        _both(lambda a, b: np.polyadd(a, b), POLYS[i], q)
        _both(lambda a, b: np.polysub(a, b), POLYS[i], q)
    _both(lambda a: np.polyadd(a, 2.0), POLYS[i])


@pytest.mark.parametrize("i", range(len(POLYS)))
def test_polymul_strips_leading_zeros_as_poly1d_does(i):
    for q in POLYS:
        _both(lambda a, b: np.polymul(a, b), POLYS[i], q)


def test_polymul_of_a_2d_array_raises_valueerror():
    _both(lambda a, b: np.polymul(a, b), np.ones((2, 2)), POLYS[0])


@pytest.mark.parametrize("u,v", [([1.0, 2, 3, 4], [1.0, 2]), ([3.0, 5, 2], [2.0, 1]),
                                 ([1.0, -3, 2], [1.0, -1]), ([1, 2], [1, 2, 3]),
                                 ([2.0], [4.0]), ([1.0, 0, 0, 1e-9], [1.0, 0, 0]),
                                 ([1 + 1j, 2], [1.0, 1j]), ([4, 8, 2], [2, 1])])
def test_polydiv_quotient_and_trimmed_remainder_match_numpy(u, v):
    _both(lambda a, b: np.polydiv(a, b), np.array(u), np.array(v))


@pytest.mark.parametrize("z", [[1.0, 2.0, 3.0], [2, -1], [1j, -1j], [1 + 1j, 2.0],
                               [[1.0, 2.0], [3.0, 4.0]], [[2.0, 0.0], [0.0, 3.0]],
                               np.array([0.5, 0.25], np.float32), [0.0]])
def test_poly_builds_coefficients_from_roots_or_a_matrix(z):
    _both(lambda a: np.poly(a), np.array(z), rtol=1e-12)


def test_poly_of_no_roots_is_the_float_one_and_bad_shapes_raise():
    _both(lambda a: np.poly(a), np.array([]), compiles=False)
    _both(lambda a: np.poly(a), np.ones((2, 3)))
    _both(lambda a: np.poly(a), np.ones((2, 2, 2)))


@pytest.mark.parametrize("p", [[1.0, -3.0, 2.0], [0, 0, 1, -3, 2, 0, 0], [1, 0, -1], [5.0],
                               [0.0, 2.0], [2.0, 0.0], [1.0, 0.0, 1.0]])
def test_roots_match_numpy_with_leading_and_trailing_zeros(p):
    _both(lambda a: np.roots(a), np.array(p), rtol=1e-10)


def test_roots_of_zeros_is_empty_and_2d_raises():
    _both(lambda a: np.roots(a), np.zeros(3))
    _both(lambda a: np.roots(a), np.ones((2, 2)))


@pytest.mark.parametrize("trim", ["fb", "f", "b", "FB", "", "bf"])
@pytest.mark.parametrize("a", [[0, 0, 1, 2, 0, 3, 0], [0.0, 0.0], [], [4, 5], [0, 0, -1],
                               [False, True, False]])
def test_trim_zeros_matches_numpy(a, trim):
    _both(lambda x: np.trim_zeros(x, trim), np.array(a))


def test_trim_zeros_is_numpys_view_eagerly_and_read_only_compiled():
    a = hnp.asarray(np.array([0.0, 1.0, 2.0, 0.0]))
    t = hnp.trim_zeros(a)
    t[0] = 7.0
    assert np.asarray(a).tolist() == [0.0, 7.0, 2.0, 0.0]

    def write(x):
        y = np.trim_zeros(x)
        y[0] = 7.0
        return y
    x = np.array([0.0, 1.0, 2.0, 0.0])
    with pytest.raises(ValueError, match="read-only"):
        hop.trace(write, x)
    assert x.tolist() == [0.0, 1.0, 2.0, 0.0]


def test_trim_zeros_has_an_unbacked_size_under_compile():
    cf = hop.compile(lambda x: np.trim_zeros(x) * 2)
    for a in ([0, 1, 2, 0], [0, 0, 0, 5, 6, 7, 0], [3, 0, 0]):
        same(cf(np.array(a)), np.trim_zeros(np.array(a)) * 2)


def test_trim_zeros_of_lists_0d_and_2d_arrays_matches_numpy():
    assert hnp.trim_zeros([0, 1, 0]) == [1]
    _both(lambda a: np.trim_zeros(a), np.array(3))
    _both(lambda a: np.trim_zeros(a), np.zeros((3, 2)))
    _both(lambda a: np.trim_zeros(a), np.array([[0], [1], [0]]))


def test_integer_convolve_keeps_numpys_dtype_and_wraps():
    a = np.array([100, 3, -7], dtype=np.int8)
    for dt in (np.int8, np.int16, np.int32, np.uint8):
        _both(lambda x, y: np.convolve(x, y), a.astype(dt), np.array([3, 1], dtype=dt))


def test_integer_arange_with_an_empty_range_is_empty():
    for args in ((-1, 0, -1), (0, 5, -1), (5, 0, 1), (5, 0, -2)):
        same(np.asarray(hnp.arange(*args)), np.arange(*args))
    _both(lambda x: (x + np.arange(-1, 0, -1), x + np.arange(5, 0, 1), x + np.arange(5, 0, -2)),
          np.array(1))


def test_data_dependent_polynomial_sizes_are_decided_per_call_under_compile():
    # one compiled function, inputs whose zero patterns differ: each call
    # gets NumPy's size (hop.compile specialises on the zero tests)
    check(lambda p: np.roots(p), calls=[(np.array([1.0, -3.0, 2.0]),),
                                        (np.array([0.0, 1.0, -3.0, 2.0]),),
                                        (np.array([1.0, -3.0, 0.0]),),
                                        (np.array([0.0, 0.0, 0.0]),)],
          rtol=1e-10)
    check(lambda a, b: np.polymul(a, b), calls=[(np.array([1.0, 2.0]), np.array([0.0, 3.0])),
                                                (np.array([0.0, 2.0]), np.array([0.0, 0.0])),
                                                (np.array([4.0, 2.0]), np.array([1.0, 3.0]))])
    check(lambda u, v: np.polydiv(u, v), calls=[(np.array([1.0, -3.0, 2.0]), np.array([1.0, -1.0])),
                                                (np.array([1.0, -3.0, 3.0]), np.array([1.0, -1.0])),
                                                (np.array([2.0, 4.0, 2.0]), np.array([1.0, 1.0]))])


# ------------------------------------------------------------ bit packing

BITS = [np.array([1, 0, 1, 1, 0, 0, 1]), np.array([[True, False, True], [False, True, True]]),
        np.arange(-5, 19, dtype=np.int8).reshape(2, 3, 4), np.array(3), np.zeros((0,), bool),
        np.ones((3, 0), np.uint16), np.arange(17, dtype=np.uint64)]


@pytest.mark.parametrize("i", range(len(BITS)))
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_matches_numpy_on_every_axis(i, bitorder):
    a = BITS[i]
    _both(lambda x: np.packbits(x, bitorder=bitorder), a)
    for axis in range(-a.ndim, a.ndim):
        _both(lambda x: np.packbits(x, axis=axis, bitorder=bitorder), a)


BYTES = [np.array([3, 255, 0, 128], np.uint8), np.arange(24, dtype=np.uint8).reshape(2, 3, 4) * 7,
         np.array(5, np.uint8), np.zeros((2, 0), np.uint8)]


@pytest.mark.parametrize("i", range(len(BYTES)))
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_unpackbits_matches_numpy_with_axis_and_count(i, bitorder):
    a = BYTES[i]
    # (NumPy 1.24 pads an empty input's count with uninitialised bytes: not compared)
    for count in (None, 0, -1, -5) if a.size == 0 else (None, 0, 3, 9, 40, -1, -5):
        _both(lambda x: np.unpackbits(x, count=count, bitorder=bitorder), a)
        for axis in range(-a.ndim, a.ndim):
            _both(lambda x: np.unpackbits(x, axis=axis, count=count, bitorder=bitorder), a)


def test_packbits_unpackbits_round_trip_and_errors_match_numpy():
    a = np.array([[1, 0, 1, 1, 0, 0, 1, 0, 1], [0, 1, 1, 0, 1, 1, 1, 0, 0]], np.uint8)
    _both(lambda x: np.unpackbits(np.packbits(x, axis=1), axis=1, count=9), a)
    _both(lambda x: np.packbits(x), np.ones(3))                      # float: TypeError
    _both(lambda x: np.packbits(x, bitorder="middle"), a)            # ValueError
    _both(lambda x: np.packbits(x, axis=2), a)                       # AxisError
    _both(lambda x: np.packbits(x, axis=0), np.array(3))             # a 1-d one
    _both(lambda x: np.packbits(x, axis=1), np.array(3))             # AxisError
    _both(lambda x: np.unpackbits(x, axis=-1), np.array(3, np.uint8))
    _both(lambda x: np.unpackbits(x), np.ones(3, np.int64))          # TypeError
    _both(lambda x: np.unpackbits(x, count=-30), a)                  # ValueError
    _both(lambda x: np.unpackbits(x, count=1.5), a)                  # TypeError


# -------------------------------------------------- fromfunction, fromiter, frombuffer

def test_fromfunction_calls_the_function_on_index_grids():
    _both(lambda x: np.fromfunction(lambda i, j: i * 10 + j + x, (2, 3)), np.array(0.5))
    _both(lambda x: np.fromfunction(lambda i, j: x[j] * i, (2, 3), dtype=int), np.arange(3.0))
    _both(lambda x: np.fromfunction(lambda i: i + x, (4,), dtype=np.int8), np.array(1, np.int8))
    _both(lambda x: np.fromfunction(lambda i, j: x[j] * i, (2, 3)), np.arange(3.0))  # IndexError
    same(np.asarray(hnp.fromfunction(lambda i, j: i == j, (3, 3), dtype=int)),
         np.fromfunction(lambda i, j: i == j, (3, 3), dtype=int))


@pytest.mark.parametrize("dtype", [np.float32, np.int8, bool, None, np.float64])
def test_fromiter_casts_items_as_numpy_and_reads_count_of_them(dtype):
    _both(lambda x: np.fromiter((x[i] * 2.5 for i in range(3)), dtype), np.arange(4.0))
    _both(lambda x: np.fromiter((x[i] for i in range(4)), dtype, 2), np.arange(4.0) - 1)
    _both(lambda x: x + np.fromiter(iter([1, 2, 3]), dtype), np.array(1))
    same(np.asarray(hnp.fromiter(iter([1.5, 0.0, -2.0]), dtype)),
         np.fromiter(iter([1.5, 0.0, -2.0]), dtype))


def test_fromiter_errors_and_iterator_consumption_match_numpy():
    _both(lambda x: np.fromiter((x[i] for i in range(2)), float, 5), np.arange(3.0))
    _both(lambda x: np.fromiter([x, x], float), np.arange(3.0))
    _both(lambda x: np.fromiter([x[0]], float, 1.5), np.arange(3.0))
    for mod in (np, hnp):
        it = iter(range(10))
        mod.fromiter(it, int, 3)
        assert next(it) == 3


def test_frombuffer_shares_the_buffer_and_is_read_only_over_bytes():
    for args in ((b"abcdefgh", np.uint8), (b"abcdefgh", np.int16, 2, 2),
                 (np.arange(4.0).tobytes(), float), (b"abc", np.int16)):
        try:
            want = np.frombuffer(*args)
        except ValueError:
            with pytest.raises(ValueError):
                hnp.frombuffer(*args)
            continue
        same(np.asarray(hnp.frombuffer(*args)), want)
    with pytest.raises(ValueError, match="read-only"):
        hnp.frombuffer(b"abcd", np.uint8)[0] = 1
    buf = bytearray(b"abcd")
    hnp.frombuffer(buf, np.uint8)[1] = 66
    assert buf == bytearray(b"aBcd")
    _both(lambda x: x + np.frombuffer(b"\x01\x02", np.uint8), np.array(3, np.uint8))


def test_writing_a_traced_value_into_frombuffer_over_bytes_raises_as_numpy():
    def f(x):
        y = np.frombuffer(b"abcd", np.uint8)
        y[0] = x
        return y
    check(f, np.uint8(3))


def test_creation_functions_of_lib_compile_with_writes_of_traced_values():
    # np.tri, np.indices, np.hamming are redirected while tracing as
    # np.zeros is (_creation), with fromfunction and frombuffer now among them
    def f(x):
        b = np.tri(3)
        b[0, 1] = x
        g = np.indices((2, 2))
        g[0, 0, 0] = 7
        w = np.hamming(4)
        w[1] = x
        return b, g, w
    _both(f, np.float64(2.0))


# ------------------------------------------------------------------ text

TEXTS = [np.array([[1.5, 2.25], [np.nan, -1e-9]]), np.arange(2000), np.array([True, False]),
         np.array(3.0), np.zeros((2, 0)), np.array([1 + 2j, -0.5j]), np.float64(2.5), np.int8(-3),
         np.array([1e20, 1.0], np.float32), np.arange(6, dtype=np.uint16).reshape(2, 3)]
TEXT_CALLS = {
    "array2string": lambda a: np.array2string(a),
    "array2string_opts": lambda a: np.array2string(a, precision=2, separator=", ", prefix="x(",
                                                   suppress_small=True, max_line_width=30),
    "array2string_formatter": lambda a: np.array2string(a, formatter={"all": lambda v: "<>"}),
    "array_repr": lambda a: np.array_repr(a),
    "array_repr_opts": lambda a: np.array_repr(a, max_line_width=20, precision=1),
    "array_str": lambda a: np.array_str(a),
    "array_str_opts": lambda a: np.array_str(a, precision=3, suppress_small=True),
}


@pytest.mark.parametrize("i", range(len(TEXTS)))
@pytest.mark.parametrize("call", sorted(TEXT_CALLS))
def test_text_functions_give_numpys_exact_text(i, call):
    fn = TEXT_CALLS[call]
    a = TEXTS[i]
    _both(fn, a, compiles=False)  # a traced array's text runs in Python
    arr = hnp.asarray(a)
    if isinstance(a, np.generic):
        arr = hnp.ndarray(arr._t, scalar=True)
    try:
        want = fn(a)
    except Exception as e:  # noqa: BLE001 (NumPy's own errors, as array_str of a scalar)
        with pytest.raises(type(e)):
            fn(arr)
        return
    assert fn(arr) == want
    assert getattr(hnp, call.split("_opts")[0].split("_formatter")[0])(arr) == \
        getattr(np, call.split("_opts")[0].split("_formatter")[0])(a)


def test_text_functions_read_numpys_print_options():
    a = np.array([1.0 / 3, 2.0])
    with np.printoptions(precision=3, sign="+"):
        for name in ("array2string", "array_repr", "array_str"):
            assert getattr(hnp, name)(hnp.asarray(a)) == getattr(np, name)(a)


def test_text_of_a_traced_array_runs_in_python_under_compile():
    # a graph break (issue 28): the text is NumPy's, of the plan's x + 1
    # (integer arithmetic: NumPy's bits), and the rest resumes compiled
    cf = hop.compile(lambda x: (x * 2, np.array_repr(x + 1)))
    for x in (np.arange(3), np.arange(3) - 5):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = cf(x)
        same(got, (x * 2, np.array_repr(x + 1)))
    assert cf.eager_calls == 0
    assert "text is known only when the plan runs" in cf.explain()


def test_text_of_a_constant_array_compiles():
    _both(lambda x: (x + 1, np.array2string(np.arange(3)), np.array_str(np.eye(2))), np.array(1.0))


@pytest.mark.parametrize("x", [np.array(2.0), np.arange(4), np.linspace(-1, 1, 5, dtype=np.float32),
                               np.array([[1, 2], [3, 4]], np.int8), np.float64(0.5)])
@pytest.mark.parametrize("i", [0, 1, 3, 4, 6])
def test_polyval_matches_numpy_for_array_and_scalar_points(x, i):
    _both(lambda p, v: np.polyval(p, v), POLYS[i], x)
    _both(lambda v: np.polyval([3, 0, 1], v), x)
