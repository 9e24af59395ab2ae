"""A list of more than the guards' walk takes (16 items) is guarded by its
length as well as its identity: a log the compiled function reads back
grows between calls, and a plan that baked in its old items must not
answer for the longer list.  Found by the boundary campaign
(fuzz_boundary.py, its "str" and "list" statements in a loop): from the
fifth call on, `TXT[-1:]` returned the text of call 4, and `len(LOG)` the
length of an older call (a silent wrong answer behind a RuntimeWarning)."""

import warnings

import numpy as np
import pytest

import hop


def quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


KINDS = {"hop": lambda v: hop.tensor(np.array([v, 2.0, 3.0], np.float32)),
         "numpy": lambda v: np.array([v, 2.0, 3.0])}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_growing_log_read_back_after_a_break_gives_this_calls_items(kind):
    txt = []

    def f(x):
        txt.append(str(x[0]))  # a conversion: the rest resumes after a break
        txt.append(str(x[0] * 2))
        return x + 1, txt[-1:], len(txt)
    cf = hop.compile(f)
    for i in range(12):
        r = quiet(cf, KINDS[kind](float(i)))
        assert r[1] == [str((KINDS[kind](float(i)) * 2)[0])] and r[2] == 2 * (i + 1), (i, r)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_length_of_a_big_global_list_is_read_anew_each_call(kind):
    log = list(range(20))

    def f(x):
        return x * len(log)
    cf = hop.compile(f)
    for n in (20, 21, 30, 20):
        del log[:]
        log.extend(range(n))
        got = quiet(cf, KINDS[kind](1.0))
        np.testing.assert_array_equal(np.asarray(got), np.asarray(KINDS[kind](1.0)) * n)


def test_explain_says_a_big_list_is_guarded_by_identity_and_length():
    big = list(range(40))

    def f(x):
        return x + big[3]
    cf = hop.compile(f)
    with pytest.warns(RuntimeWarning, match=r"a list of 40 items \(more than 16\), guarded by "
                                             r"identity and length, its items not guarded"):
        cf(KINDS["hop"](1.0))
    assert "guarded by identity and length" in cf.explain()
