"""hop.compile at Python's boundary (the first rule): the differential
campaign of fuzz_boundary.py (text, types, conversions, exceptions,
generators, closures, the standard library, recursion, methods, identity,
beside tensor code, over calls with a changing world), each statement kind
alone in every place, and the bugs the campaign found, as plain tests.
Longer runs: scripts/fuzz.py --category boundary."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import fuzz_boundary as fb
import hop
from budget import examples


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=fb.specs())
def test_compiled_calls_have_eagers_results_text_errors_and_effects(spec):
    fb.check_spec(spec)


CALLS = [{"seed": s, "n": n, "args": a, "k": k, "change": c} for s, (n, a, k, c) in enumerate(
    [(3, 0, None, "none"), (3, 1, 2, "counter"), (4, 0, None, "global"), (3, 2, 0.5, "clear"),
     (3, 0, None, "cell"), (3, 0, None, "default"), (3, 0, None, "method"),
     (3, 0, None, "rebind-method"), (3, 0, None, "counter")])]


@pytest.mark.parametrize("mode", ["hop", "numpy"])
@pytest.mark.parametrize("name", sorted(fb.STATEMENTS))
def test_each_statement_kind_alone_over_every_change(name, mode):
    # every kind at least once, whatever Hypothesis draws, each in one of
    # the places (by its name, so the places and dtypes rotate over kinds)
    i = sorted(fb.STATEMENTS).index(name) + (mode == "numpy")
    dtype, wrap = [("float32", "none"), ("float32", "loop"), ("int32", "helper"),
                   ("float64", "try")][i % 4]
    fb.check_spec({"mode": mode, "dtype": dtype, "statements": [name], "calls": CALLS,
                   "returns": "all", "wrap": wrap})


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def test_a_numpy_array_returned_twice_through_a_merged_branch_is_one_array():
    # found by the campaign ("iter", float32): NumPy's float32 sum of Python
    # floats is a data-dependent branch merged into a cond, whose outputs
    # (and the rebuilt result of each run) were one array per place
    def f(x):
        acc = x * 1
        acc = acc + sum(iter(acc))
        return acc, [acc]
    cf = hop.compile(f)
    for v in (1.0, 2.0):
        r = quiet(cf, np.array([v, 2.0, 3.0], np.float32))
        assert r[0] is r[1][0]
        np.testing.assert_array_equal(r[0], f(np.array([v, 2.0, 3.0], np.float32))[0])
    assert cf.eager_calls == 0


def test_two_locals_bound_to_one_value_stay_one_across_a_merged_branch():
    def f(x):
        a = x + 1
        if x.sum() > 0:  # a pure data-dependent if: one cond
            a = a * 2
        b = a
        c = a if x.sum() > 1 else a
        return b, c
    cf = hop.compile(f)
    for v in (1.0, -5.0, 3.0):
        x = hop.tensor([v, 1.0])
        r = quiet(cf, x)
        assert r[0] is r[1]
        np.testing.assert_array_equal(np.asarray(r[0]), np.asarray(f(x)[0]))


def test_a_retrace_for_another_argument_type_does_not_need_the_earlier_branches():
    # found by the campaign ("iter", int32 then k=0.5): the int32 trace met
    # a data-dependent branch (NumPy's int sum) that the float64 one never
    # reaches; the retrace took the first trace's branches as its own and
    # raised TraceError where eager answers
    def f(x, k=1):
        acc = x * k
        return acc + sum(iter(acc))
    cf = hop.compile(f)
    x = np.array([1, 2, 3], np.int32)
    for k in (1, 0.5, 1, 0.25):
        got, want = quiet(cf, x, k), f(x, k)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert cf.eager_calls == 0 and cf.recompiles >= 1
    # and the other way round: a branch where the earlier trace (float64)
    # returned ("branched on data ... where an earlier trace with the same
    # inputs returned", found by the campaign's "iter" in a helper)
    cf = hop.compile(f)
    for k in (0.5, 1, 0.25, 1):
        got, want = quiet(cf, x, k), f(x, k)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert cf.eager_calls == 0 and cf.recompiles >= 1


SCALE = 2.0


def test_a_result_holding_none_with_guards_to_check_runs_compiled():
    # from Dynamo's test_exceptions (a zip_longest with a fill value, a
    # mapping raising KeyError from None): a result with None in it and an
    # environment guard made the C call's leaves from the constants before
    # the None's own was added: TypeError "_EffectsCall: inconsistent
    # arguments" where eager answers
    def zip_longest(*its, fill=None):
        iters = [iter(i) for i in its]
        out = []
        while True:
            for it in iters:
                try:
                    v = next(it)
                except StopIteration:
                    out.append(fill)
                    return out
                out.append(v)

    def f(x):
        return x * SCALE, tuple(zip_longest([1, 2, 3], [10, 11]))
    cf = hop.compile(f)
    for v in (1.0, 2.0):
        x = hop.tensor([v, 3.0])
        got, want = cf(x), f(x)
        assert got[1] == want[1] == (1, 10, 2, 11, 3, None)
        np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
    assert cf.eager_calls == 0


LOG = []
STORED = None


class Holder:
    pass


HELD = Holder()


def _keyed(x):
    global STORED
    y = x * 2
    LOG.append({y: 1})
    STORED = {"a": {y: 2}}
    HELD.d = {(y, 1): 3}
    return y, {y: 2}


def test_a_dict_keyed_by_a_traced_value_never_hands_out_the_traced_value():
    # found by hand beside the campaign (its "dict-key" statement since): a
    # dict key is the structure's, not a leaf the plan returns, so the
    # result's dict, the list's, the global's and the attribute's came back
    # keyed by the trace's own value (a proxy: `==` on it raised "no trace
    # is active"); now the call runs eagerly (warned)
    cf = hop.compile(_keyed)
    for v in (1.0, 2.0):
        LOG.clear()
        r = quiet(cf, hop.tensor([v, 3.0]))
        keys = [next(iter(r[1])), next(iter(LOG[0])), next(iter(STORED["a"])),
                next(iter(HELD.d))[0]]
        assert not any(hop._C._is_proxy(k) for k in keys)
        assert keys[0] is r[0] and [float(k[0]) for k in keys] == [2 * v] * 4
    assert cf.eager_calls == 2


class Scaler:
    k = 2.0

    def scale(self, t):
        return t * self.k


SCALER = Scaler()


def test_a_method_rebound_on_its_class_between_calls_is_seen():
    # found by hand beside the campaign (its "rebind-method" change since):
    # the guards scanned the method's code but did not guard the class's
    # binding of it, so `Scaler.scale = other` between calls left the plan
    # of the old method answering: a silent wrong answer
    def f(x):
        return SCALER.scale(x) + 1
    cf = hop.compile(f)
    old = Scaler.scale
    try:
        for i, impl in enumerate([old, lambda self, t: t - self.k, old, lambda self, t: t * 0]):
            Scaler.scale = impl
            x = hop.tensor([1.0, 2.0 + i])
            np.testing.assert_array_equal(np.asarray(cf(x)), np.asarray(f(x)))
        assert "Scaler.scale is the same function" in cf.explain()
    finally:
        Scaler.scale = old


class _Base:
    def m(self, t):
        return t * 2

    @classmethod
    def c(cls, t):
        return t + 1

    @staticmethod
    def s(t):
        return t - 1

    @property
    def p(self):
        return 3.0


class _Derived(_Base):
    pass


def test_methods_class_methods_static_methods_and_properties_rebound_are_seen_once_each():
    o = _Derived()

    def f(x):
        return o.m(x) + o.c(x) + o.s(x) + o.p
    cf = hop.compile(f)
    x = hop.tensor([1.0, 2.0])
    saved = dict(vars(_Base))
    try:
        changes = [lambda: None, lambda: setattr(_Derived, "m", lambda self, t: t * 5),
                   lambda: setattr(_Base, "c", classmethod(lambda cls, t: t + 10)),
                   lambda: setattr(_Base, "s", staticmethod(lambda t: t - 10)),
                   lambda: setattr(_Base, "p", property(lambda self: 7.0)), lambda: None]
        for i, change in enumerate(changes):
            change()
            np.testing.assert_array_equal(np.asarray(cf(x)), np.asarray(f(x)))
            # one retrace per change (a bound class method is not a new
            # object to the guard on every call)
            assert cf.recompiles == min(i, 4)
    finally:
        del _Derived.m
        for k in ("c", "s", "p"):
            setattr(_Base, k, saved[k])


def test_an_iterator_on_the_stack_at_a_break_is_not_consumed_by_a_translation():
    # sum(iter(x)) of an array of symbolic size breaks at iter (len of a
    # symbolic size); the resume had the iterator on its stack, and its
    # translation consumed it, so compiled returned x + 0 from the second
    # size on (found by the stress budget of the boundary campaign)
    class O:
        pass
    obj = O()

    def f(x):
        acc = x + sum(iter(x))
        obj.last = acc.sum()
        return acc
    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in (3, 4, 5, 4):
            x = np.arange(n) / 4 + 1
            want = f(x)
            last = obj.last
            np.testing.assert_array_equal(cf(x), want)
            assert obj.last == last
    fb.check_spec({"category": "boundary", "mode": "numpy", "dtype": "float64",
                   "statements": ["iter", "attribute"],
                   "calls": [{"seed": 0, "n": 3, "args": 0, "k": None, "change": "none"},
                             {"seed": 0, "n": 4, "args": 0, "k": None, "change": "none"}],
                   "returns": "acc", "wrap": "none"})
