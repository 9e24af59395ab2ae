"""A 0-d integer array in an index is NumPy's integer only in a full
integer index (all ints, one per dim: a scalar); anywhere else it is an
advanced index, and the result a copy (`b[np.array(1)]` of a 2-d b,
`b[np.array(1), :]`, `b[..., np.array(1)]`), where an integer, an
np.int64 or a NumPy scalar hop.numpy made is a basic index, a view.  Eager
hop.numpy and hop.compile give NumPy's answer: the result's values, type
and shape, and whether a write through it reaches b."""
import warnings

import numpy as np
import pytest
import hop
import hop.numpy as hnp

KEYS = ["np.array(1)", "np.array(-1)", "np.array(1, dtype=np.int32)", "(np.array(1), slice(None))",
        "(slice(None), np.array(2))", "(Ellipsis, np.array(1))", "(np.array(1), None)",
        "(None, np.array(1))", "(np.array(1), slice(None, None, -1))",
        "(np.array(0), np.array(1), Ellipsis)", "(np.array(0), [0, 2])", "(np.array(True), 0)",
        "np.array(True)", "[1]", "np.int64(1)", "(np.int64(1), slice(1, None))", "np.uint8(1)",
        "(np.array(1), 1)", "(0, 1, Ellipsis)", "b.argmax() - 4", "(b.argmax() - 4, slice(1, None))"]


def _run(b, key):
    r = eval(key, {"np": np, "b": b})  # noqa: S307
    r = b[r]
    # (type() of an eager hop.numpy scalar is hop.numpy.ndarray: _scalar says)
    scalar = isinstance(r, np.generic) or getattr(r, "_scalar", False)
    out = [scalar, np.shape(r), str(np.asarray(r).dtype), np.asarray(r).tolist()]
    try:
        if np.ndim(r):
            r[...] = 99
        else:
            r[()] = 99
    except TypeError as e:  # (a NumPy scalar)
        out.append(str(e))
    out.append(np.asarray(b).tolist())
    return out


def test_write_through_an_index_result_changes_what_numpys_changes():
    # (np.array(1) and its mixes with slices, None and `...` were views;
    # the ints, lists, masks and NumPy scalars beside them already NumPy's)
    for key in KEYS:
        want = _run(np.arange(6.0).reshape(2, 3), key)
        assert _run(hnp.asarray(np.arange(6.0).reshape(2, 3)), key) == want, key

        def f(b):
            return _run(b, key)
        cf = hop.compile(f)
        for _ in range(2):
            b = np.arange(6.0).reshape(2, 3)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert cf(b) == want, key
            assert b.tolist() == want[-1], key


def test_zero_d_array_index_made_in_a_compiled_function_selects_a_copy():
    # (the plan wrote row 1 of the caller's array through `r`)
    def f(b):
        r = b[np.array(1)]
        r[0] = 99
        return r
    cf = hop.compile(f)
    for _ in range(2):
        b = np.arange(6.0).reshape(2, 3)
        np.testing.assert_array_equal(cf(b), [99.0, 4.0, 5.0])
        np.testing.assert_array_equal(b, np.arange(6.0).reshape(2, 3))


def test_index_out_of_range_is_numpys_index_error_naming_the_arrays_axis():
    # (an advanced index's error was take's, naming its dim: a new axis
    # of None or a 0-d mask counted; now NumPy's, from the concrete index)
    for key in ["np.array(5)", "(np.array(-3),)", "(slice(None), np.array(7))",
                "(None, np.array(5))", "(np.array(True), np.array(5))", "(None, slice(None), [7])",
                "([1, -3, 9],)", "(5, [0])"]:
        k = eval(key, {"np": np})  # noqa: S307
        with pytest.raises(IndexError) as want:
            np.arange(6.0).reshape(2, 3)[k]
        with pytest.raises(IndexError) as got:
            hnp.asarray(np.arange(6.0).reshape(2, 3))[k]
        assert str(got.value) == str(want.value), key
