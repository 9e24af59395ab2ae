"""Object identity across hop.compile's boundary (the first rule covers
`is`): one object the function returns or stores at several places is one
object after a compiled call too, as eagerly, for hop tensors and NumPy
arrays alike.  Found while writing the boundary campaign (fuzz_boundary.py,
whose "twice" results and "store-twice" statement check it since): a value
returned twice came back as two tensors of separate memory, so a write
through one no longer showed through the other."""

import warnings

import numpy as np
import pytest

import hop


def quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


KINDS = {"hop": lambda: hop.tensor(np.array([1.0, 2.0, 3.5], np.float32)),
         "numpy": lambda: np.array([1.0, 2.0, 3.5])}


def identities(r, log, d):
    """Every `is` the program below makes true eagerly."""
    return [r[0] is r[1][0], r[1][0] is r[1][1], r[2] is d, r[3] is d, r[4] is r[5],
            r[6][1] is r[4], r[6][0] is r[0], r[7] is d["a"], r[8] is d["a"],
            log[0] is log[1], log[0] is r[0]]


def program(log):
    def f(x, d):
        y = x * 2
        made = [1, 2]
        log.append(y)
        log.append(y)
        return y, [y, y], d, d, made, made, (y, made), d["a"], d["a"]
    return f


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_object_returned_or_stored_twice_is_one_object_after_a_compiled_call(kind):
    make = KINDS[kind]
    log = []
    cf = hop.compile(program(log))
    for _ in range(3):
        log.clear()
        d = {"a": [make()]}
        r = quiet(cf, make(), d)
        assert identities(r, log, d) == [True] * 11
    assert cf.eager_calls == 0


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_write_through_one_place_of_a_value_returned_twice_shows_at_the_other(kind):
    def f(x):
        y = x + 1
        return y, y
    cf = hop.compile(f)
    for fn in (f, cf):
        a, b = quiet(fn, KINDS[kind]())
        a[0] = 100.0
        assert float(b[0]) == 100.0, fn
    assert cf.eager_calls == 0


def test_distinct_values_stay_distinct_and_each_call_returns_new_ones():
    def f(x):
        y = x + 1
        return y, x + 1, [y]
    cf = hop.compile(f)
    x = KINDS["hop"]()
    r1, r2 = cf(x), cf(x)
    assert r1[0] is r1[2][0] and r1[0] is not r1[1]
    assert r1[0] is not r2[0] and r1[2] is not r2[2]
