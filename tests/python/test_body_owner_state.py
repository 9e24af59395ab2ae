"""A HOP body that writes state of the object it is a method of (a bound
method's self, a callable object, a function's own attributes) has a side
effect like a write to a global: hop.grad, hop.cond and the others raise
hop.TraceError naming it, the object left as it was, as for any body with
an effect; hop.compile replays such a write after each call of its plan.
Before, the check looked at closure cells and globals only: the body was
traced once, the write happened on the first call and never again
(m.runs stayed 1 over three hop.grad calls)."""

import re
import warnings

import pytest

import hop

_EFFECT = ("the function has a side effect: it sets an attribute of '{}' (an object defined "
           "outside the body); a body is traced once and must not change state outside itself")


class Model:
    def __init__(self):
        self.runs = 0
        self.scale = 2.0

    def loss(self, x):
        self.runs += 1
        return (x * x).sum() * self.scale

    def pure_loss(this, x):
        return (x * x).sum() * this.scale

    def __call__(self, x):
        self.runs += 1
        return (x * x).sum()


def test_grad_of_a_method_that_writes_its_object_raises():
    m = Model()
    g = hop.grad(m.loss)
    x = hop.tensor([1.0, 2.0])
    for _ in range(3):  # every call: never a plan that drops the write
        with pytest.raises(hop.TraceError, match=re.escape("hop.grad: " + _EFFECT.format("self"))):
            g(x)
        assert m.runs == 0 and m.scale == 2.0


def test_grad_of_a_callable_object_that_writes_itself_raises():
    m = Model()
    with pytest.raises(hop.TraceError, match=re.escape("hop.grad: " + _EFFECT.format("self"))):
        hop.grad(m)(hop.tensor([1.0]))
    assert m.runs == 0


def counted(x):
    counted.runs += 1
    return (x * x).sum()


def test_grad_of_a_function_that_writes_its_own_attribute_raises():
    counted.runs = 0
    with pytest.raises(hop.TraceError, match=re.escape("hop.grad: " + _EFFECT.format("counted"))):
        hop.grad(counted)(hop.tensor([1.0]))
    assert counted.runs == 0


def test_a_method_that_only_reads_its_object_is_a_body():
    m = Model()
    g = hop.grad(m.pure_loss)
    x = hop.tensor([1.0, 2.0])
    assert g(x).tolist() == [4.0, 8.0]
    # read through the object: guarded, as eagerly (before: the plan of
    # scale 2.0 answered [4.0, 8.0] again, hop.grad's compiled run walked
    # the bound method as one opaque object)
    m.scale = 3.0
    assert g(x).tolist() == [6.0, 12.0]
    assert m.runs == 0 and vars(m) == {"runs": 0, "scale": 3.0}


def test_cond_with_a_method_branch_that_writes_its_object_raises():
    m = Model()
    x = hop.tensor([1.0, 2.0])
    with pytest.raises(hop.TraceError, match="hop.cond: the true branch has a side effect: it "
                                             "sets an attribute of 'self'"):
        hop.trace(lambda x: hop.cond(x.sum() > 0, m.loss, m.pure_loss, (x,)), x)
    assert m.runs == 0


def test_compile_of_the_method_compiles_it_with_its_effect():
    # (it ran eagerly, the translator taking Python functions only; since
    # the fifty-first session hop.compile(m.loss) binds m as an argument of
    # the compiled function, whose attribute write the plan replays)
    m, e = Model(), Model()
    cf = hop.compile(m.loss)
    x = hop.tensor([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(3):
            assert cf(x).item() == e.loss(x).item() == 10.0
            assert m.runs == e.runs == i + 1
    assert cf.eager_calls == 0 and cf.recompiles == 0 and "eagerly" not in cf.explain()
