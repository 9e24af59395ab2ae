"""hop.compile returns through a data-dependent branch (path
specialisation's cond, the frame translator's merged `if`) what NumPy
returns: the argument itself, NumPy's view of it with its strides and
flags, the one of two arguments the branch picks, in tuples and dicts too,
and a write through the result reaches the caller's array, on calls that
take either side (docs/ARCHITECTURE.md, "Arguments and results")."""
import warnings

import numpy as np
import pytest

import hop


def _layout(r):
    return (r.dtype, r.shape, r.strides, r.flags.writeable, r.flags.c_contiguous,
            r.flags.f_contiguous)


def _args(sign, strided):
    a = np.arange(24.0).reshape(4, 6)[::2, 1:5] if strided else np.arange(8.0).reshape(2, 4)
    return a, np.full((2, 4), float(sign))


def _check(fn, signs=(1, -1, 1, -1, -1, 1), strided=(False, True)):
    """fn compiled and eagerly on fresh copies of the same arguments, over
    calls that take both sides: each result is the same argument (or
    none), with NumPy's layout, shares memory with the same arguments, and
    a write through it shows in the arguments as eagerly."""
    for lay in strided:
        cf = hop.compile(fn)
        for sign in signs:
            eargs, cargs = _args(sign, lay), _args(sign, lay)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want, got = fn(*eargs), cf(*cargs)
            wl = list(want.values()) if isinstance(want, dict) else \
                list(want) if isinstance(want, tuple) else [want]
            gl = list(got.values()) if isinstance(got, dict) else \
                list(got) if isinstance(got, tuple) else [got]
            assert type(got) is type(want) and len(gl) == len(wl)
            for w, g in zip(wl, gl):
                assert [g is x for x in cargs] == [w is x for x in eargs]
                assert [g.base is x for x in cargs] == [w.base is x for x in eargs]
                assert [np.shares_memory(g, x) for x in cargs] == \
                    [np.shares_memory(w, x) for x in eargs]
                np.testing.assert_array_equal(g, w)
                assert _layout(g) == _layout(w)
            for k, (w, g) in enumerate(zip(wl, gl)):
                if w.flags.writeable and w.size:
                    w[...] = -5 - k
                    g[...] = -5 - k
            for e, c in zip(eargs, cargs):
                np.testing.assert_array_equal(c, e)


def test_branch_that_returns_an_argument_returns_the_argument_itself():
    def f(a, b):
        if b[0, 1] > 0:
            pass
        return a
    _check(f)


def test_branch_that_returns_a_view_of_an_argument_returns_numpys_view():
    def f(a, b):
        if b[0, 1] > 0:
            pass
        return a.T
    _check(f)


def test_sides_returning_different_arguments_return_the_one_eager_returns():
    def f(a, b):
        return a if b[0, 0] > 0 else b
    _check(f)


def test_sides_returning_different_views_return_numpys_view_on_each_side():
    def f(a, b):
        if b[0, 0] > 0:
            return a[:, 1:]
        return a.T
    _check(f)


def test_sides_assigning_different_arguments_to_a_local_return_eagers():
    def f(a, b):
        x = b
        if b[0, 0] > 0:
            x = a
        return x + 0, x
    _check(f)


def test_branch_results_in_tuples_and_dicts_keep_their_arguments():
    def f(a, b):
        if b[0, 1] > 0:
            pass
        return (a, b[0], a + 1)

    def g(a, b):
        if b[0, 1] > 0:
            pass
        return {"a": a, "v": a[:, ::2], "c": b * 2}
    _check(f)
    _check(g)


def test_branch_that_returns_a_view_of_a_computed_array_returns_numpys_view():
    def f(a, b):
        c = a + 1
        if b[0, 1] > 0:
            pass
        return c.T, c[:, 1:]

    def g(a, b):
        c = a * 2
        if b[0, 1] > 0:
            pass
        return c.T
    _check(f)
    _check(g)


def test_branch_that_returns_an_empty_view_returns_numpys():
    def f(a, b):
        if b[0, 1] > 0:
            pass
        return a[:, 4:], a[1:1]
    _check(f)


def test_tensor_argument_returned_through_a_branch_is_itself():
    def f(x, y):
        if (y > 0).all():
            pass
        return x
    cf = hop.compile(f)
    for s in (1.0, -1.0, 1.0):
        x, y = hop.tensor([1.0, 2.0]), hop.tensor([s, s])
        assert cf(x, y) is x


@pytest.mark.parametrize("sign", [1, -1])
def test_branch_result_is_the_argument_on_the_plans_calls_too(sign):
    def f(a, b):
        if b[0, 1] > 0:
            pass
        return a
    cf = hop.compile(f)
    for _ in range(3):
        a, b = _args(sign, True)
        r = cf(a, b)
        assert r is a and r.strides == (96, 8)


def test_arrays_of_the_result_over_one_computed_array_share_it_through_a_branch():
    # (found by the view campaign: two outputs of the cond were two copies)
    def f(a, b):
        c = a + 1
        if b[0, 1] > 0:
            pass
        return c, c.reshape(-1)
    _check(f)
    cf = hop.compile(f)
    for s in (1, -1):
        c, v = cf(*_args(s, False))
        assert np.shares_memory(c, v)
