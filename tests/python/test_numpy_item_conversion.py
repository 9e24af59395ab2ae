"""NumPy 1.24's conversion of one item in ndarray.fill and item assignment
(x[k] = v): None is NaN in a float array, a str is parsed, a bool array
takes a value's truth, and NumPy's own exception type and message where the
conversion fails (ValueError for 'x' or a sequence, TypeError for a complex
into a real array or None into an int one, ValueError for NaN into an int),
eagerly and under hop.compile."""

import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import hop
import hop.numpy as hnp


def _outcome(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(x)
        except Exception as e:  # noqa: BLE001 (the exception is what is compared)
            return type(e), str(e)
    r = np.asarray(r)
    return "ok", r.dtype, repr(r.tolist())  # (repr: NaN equal to NaN)


VALUES = ["x", "3", None, [1, 2], [1], (), 1 + 2j, np.complex128(1 + 2j), float("nan"), 2.5,
          True, 2 ** 70, b"7"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8, np.bool_,
                                   np.complex128])
@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_fill_converts_and_raises_as_numpy(value, dtype):
    # before: fill("x") a TypeError "unsupported operand type str" (NumPy's
    # ValueError), fill(None) too (NumPy: NaN), fill([1, 2]) a ShapeError,
    # fill(1+2j) into a float array 1.0 (NumPy's TypeError), fill(nan) into
    # an int array 0 (NumPy's ValueError)
    def fn(x):
        x.fill(value)
        return x
    want = _outcome(fn, np.zeros(3, dtype))
    assert _outcome(fn, hnp.zeros(3, dtype)) == want
    assert _outcome(hop.compile(fn), np.zeros(3, dtype)) == want


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128])
@pytest.mark.parametrize("value", ["x", "3", None, 1 + 2j, np.complex128(1 + 2j), b"7"],
                         ids=repr)
def test_item_assignment_converts_and_raises_as_numpy(value, dtype):
    # before: x[0] = "x" / None / "3" a TypeError "unsupported operand type"
    # eagerly, x[0] = 1+2j "can't convert complex to float" (NumPy's
    # "float() argument must be ..."), a complex NumPy scalar too (NumPy:
    # its real part)
    def fn(x):
        x[0] = value
        return x
    want = _outcome(fn, np.zeros(3, dtype))
    assert _outcome(fn, hnp.zeros(3, dtype)) == want
    assert _outcome(hop.compile(fn), np.zeros(3, dtype)) == want


def test_fill_of_a_numpy_scalar_raises_as_numpy_and_changes_nothing():
    s = hnp.zeros(3).sum()
    with pytest.raises(ValueError, match="^could not convert string to float: 'x'$"):
        s.fill("x")
    s.fill(None)
    assert float(s) == 0.0


class _Floats:
    """An object NumPy converts through its __float__ and __int__."""

    def __float__(self):
        return 2.5

    def __int__(self):
        return 2


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128, np.bool_])
@pytest.mark.parametrize("value", [Decimal("1.5"), Fraction(1, 2), _Floats(), object()],
                         ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("write", ["x.fill(value)", "x[0] = value", "x[:2] = value"])
def test_fill_and_item_assignment_convert_any_object_as_numpy(write, value, dtype):
    # NumPy converts any object through float()/int() (a Decimal, a
    # Fraction, a class with __float__) and raises their TypeError for one
    # it cannot; hop.numpy raised "unsupported operand type Decimal"
    def fn(x):
        exec(write, {"x": x, "value": value})  # noqa: S102
        return x
    want = _outcome(fn, np.zeros(3, dtype))
    assert _outcome(fn, hnp.zeros(3, dtype)) == want


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint8, np.complex128, np.bool_])
@pytest.mark.parametrize("value", [[1j, 2], [np.complex64(1j), 1], [np.nan, 1], ["1.5", None],
                                   [2 ** 70, 1], (np.float32(1.5), np.int8(3)), [True, 2.5]],
                         ids=repr)
def test_assignment_of_a_sequence_converts_each_item_as_numpy(value, dtype):
    # NumPy converts a list's items into the array's dtype one by one (as
    # np.array(value, dtype)): [1j, 2] into a float array is float()'s
    # TypeError and [nan, 1] into an int one a ValueError, where hop.numpy
    # cast the complex array it made of the list ([0., 2.], silently) and
    # NaN to -2**63; ["1.5", None] was a DTypeError for the object array
    def fn(x):
        x[:] = value
        return x
    want = _outcome(fn, np.zeros(2, dtype))
    assert _outcome(fn, hnp.zeros(2, dtype)) == want
    assert _outcome(hop.compile(fn), np.zeros(2, dtype)) == want
