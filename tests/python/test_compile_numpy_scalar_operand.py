"""A NumPy scalar a function makes, used with a hop.Tensor: compiled, the
result has eager's dtype and values.

np.float64 is a Python float, so eagerly `x * np.float64(2.0)` keeps an f32
tensor's dtype (a weak operand).  Compiled, NumPy calls made in the function
run as hop.numpy, whose `np.array([...]).sum()` is a 0-d array standing for
that np.float64; as an operand of a hop.Tensor op it must be weak too (it
was a 0-d float64 tensor: the result became float64).  The other NumPy
scalars (np.float32, np.int64, np.bool_) are not Python numbers: eagerly
and compiled they are 0-d tensors of their dtype."""

import numpy as np
import pytest

import hop
import hop.numpy  # noqa: F401 (compiled NumPy calls run as hop.numpy)


def scalar_f64_sum(x):
    return x * np.array([1.0, 2.0]).sum()


def scalar_f64_left(x):
    return np.array([1.0, 2.0]).mean() + x


def scalar_f64_item_of_index(x):
    a = np.linspace(0.0, 1.0, 5)
    return x - a[3]


def scalar_f64_made(x):
    return x / np.float64(4.0) + np.sqrt(np.float64(2.0))


def scalar_f64_in_a_function(x):
    return hop.maximum(x, np.ones(3).sum() - 1.5)


def scalar_f64_in_where(x):
    return hop.where(x > 1, x, np.array([0.25, 0.5]).prod())


def scalar_f32(x):
    return x * np.ones(2, np.float32).sum()


def scalar_i64(x):
    return x + np.arange(4).sum()


def scalar_bool(x):
    return x * np.array([True, False]).any()


def scalar_left_ops(x):
    s = np.array([1.5, 2.5]).sum()
    t = np.ones(3, np.float32).sum()
    return (s - x, s / (x + 1), s ** (x % 3), s < x, s // (x + 1), s % (x + 1), t - x,
            t * x, np.int64(3) * x)


def array_0d(x):
    # a 0-d array NumPy keeps an array (not a scalar): a float64 operand
    return x * np.asarray(np.array(2.0))


FUNCS = [scalar_f64_sum, scalar_f64_left, scalar_f64_item_of_index, scalar_f64_made,
         scalar_f64_in_a_function, scalar_f64_in_where, scalar_f32, scalar_i64, scalar_bool,
         scalar_left_ops, array_0d]
DTYPES = ["float16", "float32", "float64", "int32", "int64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", FUNCS, ids=lambda f: f.__name__)
def test_a_numpy_scalar_with_a_tensor_compiled_is_eagers(fn, dtype):
    x = hop.tensor(np.arange(4).astype(dtype))
    try:
        want = fn(x)
    except Exception as e:  # noqa: BLE001 (eager's error is the answer)
        with pytest.raises(type(e)):
            hop.compile(fn)(x)
        return
    cf = hop.compile(fn)
    for _ in range(2):
        got = cf(x)
        assert type(got) is type(want)
        for g, w in zip(got, want) if type(want) is tuple else [(got, want)]:
            assert type(g) is type(w)
            assert g.dtype == w.dtype, (g.dtype, w.dtype)
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_the_weak_scalar_follows_its_value_from_call_to_call():
    def f(x, a):
        return x * np.asarray(a).sum()

    cf = hop.compile(f)
    x = hop.tensor(np.arange(3, dtype=np.float32))
    for a in (np.array([1.0, 2.0]), np.array([0.5, 0.25])):
        got, want = cf(x, a), f(x, a)
        assert got.dtype == want.dtype == hop.float32
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_a_hop_numpy_scalar_is_a_weak_operand_eagerly_too():
    import hop.numpy as hnp
    x = hop.tensor(np.arange(3, dtype=np.float32))
    s = hnp.array([1.0, 2.0]).sum()
    assert (x * s).dtype == hop.float32 and (s * x).dtype == hop.float32
    xi = hop.tensor(np.arange(3, dtype=np.int32))
    # as np.float64: the tensor's operator on the right, NumPy's ufunc on the left
    assert (xi * s).dtype == (xi * np.float64(3.0)).dtype == hop.float32
    assert (s * xi).dtype == (np.float64(3.0) * xi).dtype == hop.float64
    np.testing.assert_array_equal((x * s).numpy(), np.arange(3, dtype=np.float32) * 3)
    # a 0-d hop.numpy array that is an array stays a float64 operand
    assert (x * hnp.asarray(2.0)).dtype == hop.float64
