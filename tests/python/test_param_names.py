"""A traced function's placeholders are named after its parameters
(hop._pytree.param_names).  A plain Python function's names are read from
its code; they are what inspect.signature gives, for every kind of
parameter, and a function that carries another signature (functools.wraps,
__signature__, a partialmethod's, a text one) still goes through
inspect.signature."""

import functools
import inspect

import pytest

import hop
from hop import _pytree


def plain(x, y):
    return x


def posonly(a, /, b, c=1, *, d=2):
    return a


def star(a, *rest, k=3, **kw):
    return a


def star_only(*xs):
    return xs[0]


def kwonly_then_star(a, b=0, *c, d, e=1, **f):
    return a


def with_locals(x):
    t = x * 2
    u = t + 1
    return u


@functools.wraps(plain)
def wrapper(*args, **kwargs):
    return plain(*args, **kwargs)


def signed(p, q):
    return p


signed.__signature__ = inspect.Signature(
    [inspect.Parameter("left", inspect.Parameter.POSITIONAL_OR_KEYWORD),
     inspect.Parameter("right", inspect.Parameter.POSITIONAL_OR_KEYWORD)])


class K:
    def method(self, v, w):
        return v

    part = functools.partialmethod(method, 1)


def closure_maker(z):
    def inner(a, b):
        return a + z
    return inner


FUNCTIONS = {
    "plain": plain, "posonly": posonly, "star": star, "star_only": star_only,
    "kwonly_then_star": kwonly_then_star, "with_locals": with_locals, "wrapper": wrapper,
    "signed": signed, "bound_method": K().method, "method": K.method,
    "partialmethod": K.part, "closure": closure_maker(1), "lambda": lambda x, *ys: x,
    "partial": functools.partial(plain, 1), "builtin": len, "hop_exp": hop.exp,
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
def test_param_names_are_the_signatures(name, n):
    fn = FUNCTIONS[name]
    assert _pytree.param_names(fn, n) == _pytree._signature_names(fn, n)


def test_the_code_is_read_only_for_plain_functions():
    assert _pytree._code_params(plain) == (("x", "y"), None)
    assert _pytree._code_params(star) == (("a",), "rest")
    assert _pytree._code_params(posonly) == (("a", "b", "c"), None)
    for fn in (wrapper, signed, K.part, K().method, functools.partial(plain, 1), len):
        assert _pytree._code_params(fn) is None


def test_a_wrapped_functions_placeholders_have_the_wrapped_names():
    def f(left, right):
        return left * right

    @functools.wraps(f)
    def g(*args):
        return f(*args)
    x, y = hop.randn(3, seed=1), hop.randn(3, seed=2)
    assert [n.name for n in hop.trace(g, x, y).graph.nodes if n.op == "placeholder"] == \
        ["left", "right"]
    assert [n.name for n in hop.trace(star, x, y).graph.nodes if n.op == "placeholder"] == \
        ["a", "rest_0"]
