"""Issue 28: the guards of a compiled function on a tensor an argument's
object holds (o.v) read what eager reads: the tensor there now (a
hop.numpy array's tensor, never hop's own attribute of the array, nor the
array object), so a call with a new tensor of the same dtype and shape
runs the plan without a recompile, before and after a graph break; a
rebinding to something else (a number, another dtype) recompiles, with
eager's answer."""

import re
import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp


class Box:
    pass


def breaks_then_reads(x, o):
    y = x + 1
    s = float(y.sum())  # a graph break: the rest resumes compiled
    return y * o.v + s


def reads(x, o):
    return (x + 1) * o.v


def recompiles(text):
    """The recompile counts explain() gives: the function's, then each resume's."""
    return [int(n) for n in re.findall(r"graph\(s\), (\d+) recompile\(s\)", text)]


def values(r):
    return np.asarray(r).tolist()


def drive(fn, make, rebinds):
    """(result, type name) of fn per call: o.v a new make(k) each call, then
    the values of rebinds."""
    o, out = Box(), []
    for k, v in enumerate([make(k) for k in range(6)] + list(rebinds)):
        o.v = v
        x = make(1)
        r = fn(x, o)
        out.append((values(r), type(r).__name__))
    return out


@pytest.mark.parametrize("make", [lambda k: hop.ones(3) * k,
                                  lambda k: hnp.asarray(np.full(3, float(k)))],
                         ids=["hop.Tensor", "hop.numpy"])
@pytest.mark.parametrize("fn", [breaks_then_reads, reads])
def test_a_new_tensor_in_an_argument_attribute_does_not_recompile(fn, make):
    want = drive(fn, make, ())
    cf = hop.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert drive(cf, make, ()) == want
    assert cf.recompiles == 0 and cf.eager_calls == 0 and len(cf.graphs) == 1
    text = cf.explain()
    assert "._t" not in text and "is the same ndarray object" not in text
    assert "o.v is captured input 0 (re-read every call)" in text
    if fn is breaks_then_reads:
        # the part before the break never reads o.v: no guard on it (only
        # on the builtin float it calls, on its own code, and on o's class,
        # which every object of the user's class has: isinstance reads it,
        # and the special methods Box lacks, which Python would run on o)
        top = text.split("resume at instruction")[0]
        assert "o.v" not in top and ("environment guards:\n  o.__class__ is the same type "
                                     "Box\n  builtins float: still the "
                                     "builtins' objects, no global shadows them; special "
                                     "methods of Box: those they lacked still absent; the "
                                     "__code__ of breaks_then_reads: still the code objects "
                                     "traced (not assigned since)\nside") in top
    assert recompiles(text) == [0] * (2 if fn is breaks_then_reads else 1)


@pytest.mark.parametrize("fn", [breaks_then_reads, reads])
def test_an_argument_attribute_rebound_to_another_kind_recompiles_with_eagers_answer(fn):
    def make(k):
        return hnp.asarray(np.full(3, float(k)))

    rebinds = [2.5,                                    # a number
               hnp.asarray(np.full(3, 7, np.int32)),   # another dtype
               hop.ones(3) * 4,                        # a hop.Tensor, not an array
               hnp.float64(3.0),                       # a NumPy scalar, not an array
               make(9)]                                # an array again
    want = drive(fn, make, rebinds)
    # (a hop.Tensor there gives a hop.Tensor: the rebinding changes the answer's kind)
    assert [t for _, t in want[6:]] == ["ndarray", "ndarray", "Tensor", "ndarray", "ndarray"]
    cf = hop.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = drive(cf, make, rebinds)
    assert got == want
    # (after a break, the resumed part recompiles)
    assert cf.eager_calls == 0 and sum(recompiles(cf.explain())) >= 1
