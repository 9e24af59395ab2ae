"""hop.compile(m.step) of a bound method (fifty-first session): the method's
function compiled and bound to m, as `@hop.compile` on the method binds,
so that a method with Python effects (an attribute counter, out= into a
buffer it holds, a list it appends to) is compiled by the frame translator
instead of running eagerly on every call.  Each program runs on a twin
object eagerly and compiled over several calls with the object's state
changed between them: the same results, effects and errors."""

import warnings

import numpy as np
import pytest

import hop


class Model:
    scale = 2.0

    def __init__(self):
        self.buf = np.zeros(3)
        self.n = 0
        self.log = []

    def step(self, a):
        np.exp(a, out=self.buf)
        self.n += 1
        self.log.append(float(self.buf[0]))
        return self.buf * self.scale

    def check(self, a):
        if a.sum() > 100:
            raise ValueError(f"too large: {self.n}")
        self.n += 1
        return a - self.n

    @classmethod
    def make(cls, a):
        cls.made = getattr(cls, "made", 0) + 1
        return a * cls.scale


def _state(m):
    return (m.buf.copy(), m.n, list(m.log))


def _call(fn, a):
    try:
        return fn(a.copy()), None
    except Exception as e:  # noqa: BLE001 (compared)
        return None, e


def _same(got, want):
    (g, ge), (w, we) = got, want
    assert type(ge) is type(we) and str(ge) == str(we)
    if we is None:
        assert type(g) is type(w) and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("method", ["step", "check"])
def test_a_method_with_effects_compiles_and_does_what_eager_does(method):
    e, c = Model(), Model()
    cf = hop.compile(getattr(c, method))
    args = [np.arange(3.0), np.arange(3.0) + 1, np.full(3, 50.0), np.ones(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (compiled: no fall-back warning)
        for k, a in enumerate(args):
            if k == 3:  # the state changed between calls, on both twins
                for m in (e, c):
                    m.buf, m.n = np.full(3, -1.0), 10
            _same(_call(cf, a), _call(getattr(e, method), a))
            assert _state(c)[1:] == _state(e)[1:] and np.array_equal(c.buf, e.buf)
    assert cf.eager_calls == 0 and cf.graphs and "runs eagerly" not in cf.explain()


def test_a_compiled_method_follows_its_class_attribute_and_binds_its_own_object():
    m, other = Model(), Model()
    cf = hop.compile(m.step)
    a = np.arange(3.0)
    np.testing.assert_array_equal(cf(a), np.exp(a) * 2.0)
    Model.scale = 3.0
    try:
        np.testing.assert_array_equal(cf(a), np.exp(a) * 3.0)
    finally:
        Model.scale = 2.0
    assert (m.n, other.n) == (2, 0) and cf.__self__ is m


def test_a_compiled_classmethod_counts_on_its_class():
    class C(Model):
        pass
    cf = hop.compile(C.make)
    a = np.arange(3.0)
    for k in range(3):
        np.testing.assert_array_equal(cf(a), a * 2.0)
    assert C.made == 3 and not hasattr(Model, "made")
