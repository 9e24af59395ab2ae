"""A graph break inside an inlined call keeps the identity of what the call
returns: `y = helper(c)` where helper breaks (prints a traced value's text,
calls a function hop cannot trace) and returns its argument, or an element
of a list argument, is c itself under hop.compile as eagerly, so `y is c`
holds and a write through y reaches c.  The resume is handed each object
once and binds every name of it to that one object (_frame_resume._aliased);
before, it took y and c as two arguments, traced as two arrays (`y is c`
False)."""
import warnings

import numpy as np
import pytest

import hop
import hop.numpy  # noqa: F401



def _prints(c):
    str(c)  # (the traced value's text: a break)
    return c


def _unsupported(c):
    np.array2string(c)  # (no translation: a break)
    return c


def _list_item(xs):
    str(xs[0])
    return xs[0]


def _maybe_copy(c, copy):
    str(c)
    return c.copy() if copy else c


def _is(a):
    y = _prints(a)
    return y is a


def _is_unsupported(a):
    y = _unsupported(a)
    return y is a


def _write_argument(a):
    y = _prints(a)
    y[0] = 1
    return a, y is a


def _write_computed(a):
    c = a * 2
    y = _unsupported(c)
    y[0] = 1
    return c, y is c


def _list_element(a):
    c = a + 1
    y = _list_item([c])
    y[1] = 5
    return c, y is c


def _two_breaks(a):
    c = a * 3
    y = _prints(c)
    z = _prints(y)
    z[2] = -1
    return c, y is c, z is c, z is y


@pytest.mark.parametrize("fn", (_is, _is_unsupported, _write_argument, _write_computed,
                                _list_element, _two_breaks))
def test_what_a_breaking_helper_returns_is_its_argument_as_eagerly(fn):
    want_arg, got_arg = np.arange(4.0), np.arange(4.0)
    want = fn(want_arg)
    cf = hop.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (compiled, not a fallback)
        for _ in range(2):
            got_arg = np.arange(4.0)
            got = cf(got_arg)
            if isinstance(want, tuple):
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    if isinstance(w, np.ndarray):
                        np.testing.assert_array_equal(g, w)
                    else:
                        assert g is w
                if fn is _write_argument:
                    assert got[0] is got_arg
            else:
                assert got is want
            np.testing.assert_array_equal(got_arg, want_arg)


def test_resume_for_an_alias_and_for_a_copy_are_each_right():
    def f(a, copy):
        y = _maybe_copy(a, copy)
        y[0] = 9
        return a, y is a

    cf = hop.compile(f)
    for copy in (False, True, False, True):
        want_arg, got_arg = np.zeros(3), np.zeros(3)
        want = f(want_arg, copy)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (compiled, not a fallback)
            got = cf(got_arg, copy)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] is want[1]
        np.testing.assert_array_equal(got_arg, want_arg)

