"""Identity through a data-dependent `if` the frame translator merges into
one cond (hop/_frame_merge.py, _Identities): a side that leaves an array or
a tensor made before the `if` (`y = c if p else d`, `else: y = x`) leaves
that object itself, as eagerly, so a write through y reaches c or d and
`y is c` is eager's answer; a cond's output would be a copy.  Where the
sides leave different such objects the `if` is decided in Python (a graph
break); an `if` whose sides only make new values stays one cond.  Each test
runs the function eagerly and compiled on fresh arguments over calls that
take both sides, and compares every value, identity and argument after the
call."""
import warnings

import numpy as np
import pytest

import hop

LOG = []  # an effect: the function is compiled by the frame translator


def _same(got, want):
    assert type(got) is type(want)
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, (np.ndarray, hop.Tensor)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert np.asarray(got).dtype == np.asarray(want).dtype
    else:
        assert got == want


def _against_eager(f, make, signs=(1.0, -1.0, 1.0, -1.0)):
    cf = hop.compile(f)
    for s in signs:
        eargs, cargs = make(s), make(s)
        want = f(*eargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = cf(*cargs)
        _same(got, want)
        for g, w in zip(cargs, eargs):
            _same(g, w)
    return cf


def _arrays(s):
    return np.arange(4.0), np.full(3, s)


def _tensors(s):
    return hop.tensor([1.0, 2.0, 3.0]), hop.tensor([s])


def test_write_through_a_conditional_expression_of_two_computed_arrays_reaches_the_one_picked():
    def f(a, b):
        LOG.append(0)
        c = a + 1
        d = a * 2
        y = c if b[0] > 0 else d
        y[0] = 100
        return c, d, y, y is c, y is d
    _against_eager(f, _arrays)


def test_in_place_update_of_a_local_assigned_one_of_two_computed_arrays_in_an_if():
    def f(a, b):
        LOG.append(0)
        c = a + 1
        d = a * 2
        if b[0] > 0:
            y = c
        else:
            y = d
        y += 5
        return c, d, y, y is c
    cf = _against_eager(f, _arrays)
    assert "graph break" in cf.explain()


def test_identity_of_a_conditional_expression_of_computed_arrays_read_only():
    def f(a, b):
        LOG.append(0)
        c = a + 1
        d = a * 2
        y = c if b[0] > 0 else d
        return y + 1, y is c
    _against_eager(f, _arrays)


def test_identity_of_a_conditional_expression_of_computed_tensors():
    def f(x, s):
        LOG.append(0)
        c = x + 1
        d = x * 2
        y = c if s.sum() > 0 else d
        return c, y, y is c
    _against_eager(f, _tensors)


def test_a_side_that_leaves_an_aliased_array_unchanged_keeps_it_itself():
    def f(a, b):
        LOG.append(0)
        y = a * 2
        z = y
        if b[0] > 0:
            y = y + 1
        y[0] = 7
        return z, y, y is z

    def g(a, b):
        LOG.append(0)
        y = a * 2
        held = [y]
        if b[0] > 0:
            y = y + 1
        y[1] = -7
        return held[0], y
    _against_eager(f, _arrays)
    _against_eager(g, _arrays)

    def h(a, b):
        # the old value held by that local alone: a cond's copy of it is
        # what nothing can tell apart, so the `if` stays one cond
        LOG.append(0)
        y = a * 2
        if (b > 0).all():
            y = y + 1
        LOG.append(1)
        return y * 3
    for make in (_arrays, _tensors):
        text = _against_eager(h, make).explain()
        assert "graph break" not in text and "both sides traced as one cond" in text


def test_a_side_that_leaves_the_argument_tensor_keeps_it_so_a_write_reaches_the_caller():
    def f(x, s):
        LOG.append(0)
        if s.sum() > 0:
            y = x + 1
        else:
            y = x
        y[0] = 5.0
        return y, y is x

    def g(x, s):
        LOG.append(0)
        y = x if (s > 0).all() else x * 2
        return y + 1, y is x
    _against_eager(f, _tensors)
    _against_eager(g, _tensors)


def test_an_if_in_an_inlined_call_keeps_the_callers_array_itself():
    # (the caller's frame holds c too: the callee's `if p: x = x + 1`
    # left c on its other side, which its cond copied, so x[0] = 50 missed
    # the caller's c)
    def helper(x, b):
        if b[0] > 0:
            x = x + 1
        x[0] = 50
        return x

    def f(a, b):
        LOG.append(0)
        c = a * 2
        y = helper(c, b)
        return c, y
    _against_eager(f, _arrays)
