"""type() of values in compiled NumPy code (issue #29): eagerly x[0, 0] is a
np.float64 and x an np.ndarray; compiled, the user's code must see the same
classes (hop's own classes hold the traced values).  isinstance and
__class__ answered so already; type() is a call the frame translator
answers (hop/_effects.py marks a function that calls it, so hop.compile
translates it), so `type(v) is np.float64`, np.issubdtype(type(v), ...),
a dict keyed by type and type(v).__name__ take eager's branch, compiled."""

import numpy as np
import pytest

import hop
import hop.numpy  # noqa: F401


def _both(fn, *args):
    want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    c = hop.compile(fn)
    got = c(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    assert c._eager_why is None and c._untranslated is None, c.explain()  # compiled
    return got, want


def _is_float64_element(x):
    return type(x[0, 0]) is np.float64


def _issubdtype_of_type(x):
    v = x[0, 0]
    return np.issubdtype(type(v), np.floating), np.issubdtype(type(v), np.integer)


def _branch_on_type(x):
    v = x.sum()
    if type(v) is np.float64:
        return x * 2
    return x * 3


def _type_name(x):
    return type(x[0]).__name__, type(x).__name__, type(x.max()).__name__


def _dispatch(x):
    scale = {np.float64: 2.0, np.float32: 3.0, np.int64: 4, np.bool_: 5}
    return x * scale[type(x.ravel()[0])]


def _helper(v):
    return type(v) in (float, np.float64)


def _through_a_helper(x):
    return _helper(x[0, 0]), _helper(x)


def _classes(x):
    return type(x), type(x[0]), type(x[0, 0]), type(x.sum()), type(x.argmax()), \
        type(x > 0), type((x > 0).all())


@pytest.mark.parametrize("fn", [_is_float64_element, _issubdtype_of_type, _branch_on_type,
                                _type_name, _dispatch, _through_a_helper, _classes])
@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.bool_])
def test_type_of_a_value_is_numpys_class_compiled(fn, dt):
    x = np.arange(1, 7).reshape(2, 3).astype(dt)
    got, want = _both(fn, x)
    if isinstance(want, np.ndarray):
        assert type(got) is np.ndarray and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want


def test_type_of_a_value_in_a_data_dependent_branch_and_a_loop():
    def f(x):
        out = []
        for i in range(x.shape[0]):
            v = x[i].max()
            out.append(v * 2 if type(v) is np.float64 and v > 2 else v)
        return out
    x = np.array([[1.0, 5.0], [0.5, 1.5]])
    got, want = _both(f, x)
    assert [type(g) for g in got] == [type(w) for w in want] == [np.float64, np.float64]
    assert got == want


def test_type_in_a_loop_over_rows_compiles():
    def f(x):
        return [type(row.max()).__name__ for row in x]
    got, want = _both(f, np.ones((2, 2)))
    assert got == want == ["float64", "float64"]


def test_type_where_the_translator_stops_runs_the_function_eagerly_and_says_why():
    def f(x):  # a library context manager: the translator does not run it
        with np.errstate(all="ignore"):
            return type(x[0, 0]).__name__
    c = hop.compile(f)
    with pytest.warns(RuntimeWarning):
        assert c(np.ones((2, 2))) == "float64"  # eager's answer, never hop's class
    assert "calls type() of one value" in c.explain()


def test_type_of_other_objects_is_unchanged():
    def f(x, n, s):
        return type(n) is int, type(s) is str, type([x]) is list, x + n
    got, want = _both(f, np.ones(3), 2, "a")
    assert got[:3] == want[:3] == (True, True, True)
    np.testing.assert_array_equal(got[3], want[3])


def test_a_data_dependent_branch_under_a_type_test_takes_each_calls_side():
    def f(x):
        v = x.sum()
        if type(v) is np.float64:
            if v > 0:
                return x * 2
        return -x
    c = hop.compile(f)
    for x in (np.ones(3), -np.ones(3), np.ones(3)):
        np.testing.assert_array_equal(c(x), f(x))
    assert c._eager_why is None and c._untranslated is None, c.explain()


_SIZES = [
    lambda a: np.count_nonzero(a),
    lambda a: a[a > 0].size,
    lambda a: np.flatnonzero(a).shape[0],
    lambda a: np.count_nonzero(a) * 2.5,
    lambda a: np.count_nonzero(a) / 4,
]


@pytest.mark.parametrize("size", _SIZES, ids=["count_nonzero", "mask size", "flatnonzero",
                                               "times a float", "true division"])
def test_a_data_dependent_size_is_an_int_to_type_and_isinstance_as_eagerly(size):
    # A size only the run knows is a SymInt (or a SymFloat): type() said
    # SymInt and isinstance(n, int) was False compiled, True eagerly.
    def kinds(a):
        n = size(a)
        return type(n).__name__, isinstance(n, int), isinstance(n, float), \
            isinstance(n, (int, float)), n

    a = np.array([1.0, 0.0, 2.0, -1.0])
    want = kinds(a)
    assert hop.compile(kinds)(a) == want
    assert want[0] in ("int", "float")


def test_a_dynamic_size_is_an_int_to_type_and_isinstance_as_eagerly():
    f = hop.compile(lambda x: (isinstance(x.shape[0], int), type(x.shape[0]) is int, x * 2),
                    dynamic=True)
    for n in (3, 5):
        assert f(hop.ones(n))[:2] == (True, True)
    assert f.recompiles == 0  # one plan for both sizes: x.shape[0] is a SymInt
