"""An argument that is the very tensor or array the function's environment
holds (a global, a closure cell, an item of a global list): the trace took
the argument for an object of its own (a proxy) and the environment's
object for another, so `x is G` answered False, `if x is G:` took the other
side.  A plan assumes no argument leaf is one of those objects; a call that
breaks it runs eagerly (hop.compile), on every bound path (Plan.bind_tensors / bind_arrays with and without
_LiveCaptures, _EffectsCall, the Python paths, a resume after a graph
break).  docs/ARCHITECTURE.md, "An argument that is an object of the
environment"; the campaign's IDENTITY cases (test_compile_campaign_s50.py)
are the first six programs of the kind."""

import warnings

import pytest

import hop
from compile_values import campaign, warned_outcome

program, check = campaign("s51env", outcome=warned_outcome())

P = {}
# an argument's container holds G: the leaf, not the argument, is G
P["list_argument"] = """
G = hop.arange(3.0)
def f(xs):
    return xs[0] is G, xs[0] * G
def args(i):
    return ([G if i % 2 else hop.ones(3)],)
"""
P["dict_argument"] = """
G = hop.arange(3.0)
def f(d):
    return d['w'] is G, d['w'] + 1
def args(i):
    return ({'w': G if i % 2 == 0 else hop.ones(3)},)
"""
P["dataclass_argument"] = """
from dataclasses import dataclass
@dataclass
class Pair:
    w: object
    n: int = 2
G = hop.arange(3.0)
def f(p):
    if p.w is G:
        return p.w * p.n
    return p.w - p.n
def args(i):
    return (Pair(G if i % 2 else hop.ones(3)),)
"""
# a closure cell's tensor, captured (the plan's input, re-read every call)
P["closure_capture"] = """
def make():
    C = hop.arange(3.0)
    def f(x):
        return x is C, x * C
    return f, C
f, C = make()
def args(i):
    return ((C if i % 2 else hop.ones(3)),)
"""
# an ndarray of a closure cell: a capture hop holds no reference to
# (_LiveCaptures, Plan.bind_arrays(..., live))
P["ndarray_closure_capture"] = """
def make():
    C = np.arange(3.0)
    def f(x):
        if x is C:
            return x * 3
        return x * C
    return f, C
f, C = make()
def args(i):
    return ((C if i % 2 else np.ones(3)),)
"""
# the identity asked after a graph break: the resume's plan reads G too
P["after_a_break"] = """
G = hop.arange(3.0)
LOG = []
def f(x):
    y = float(x.sum())
    LOG.append(y)
    return x is G, x * y
def args(i):
    return ((G if i % 2 else hop.ones(3)),)
def snap():
    return LOG
"""
P["hop_numpy_global"] = """
import hop.numpy as hnp
H = hnp.arange(3.0)
def f(x):
    return x is H, x * H
def args(i):
    return ((H if i % 2 else hnp.ones(3)),)
"""


@pytest.mark.parametrize("name", list(P))
def test_an_argument_that_is_an_object_of_the_environment_is_that_object(name):
    check(P[name], calls=4, name=name)


def test_such_a_call_runs_eagerly_once_warned_and_the_plan_stays_for_other_arguments():
    G = hop.arange(3.0)
    cf = hop.compile(lambda x: (x is G, x * G))
    x = hop.ones(3)
    assert cf(x)[0] is False
    with pytest.warns(RuntimeWarning, match=r"a call with argument leaf 0 that is the tensor "
                                            r"closure cell 'G' holds .* runs eagerly"):
        same, y = cf(G)
    assert same is True and y.tolist() == [0.0, 1.0, 4.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (warned once)
        assert cf(G)[0] is True
        assert cf(x)[0] is False and cf(x)[1].tolist() == [0.0, 1.0, 2.0]
    assert (cf.eager_calls, cf.recompiles, len(cf.graphs)) == (2, 0, 1)
    assert "eager calls: 2 call(s) ran eagerly for their arguments (the last: argument leaf 0 " \
           "that is the tensor closure cell 'G' holds" in cf.explain()
