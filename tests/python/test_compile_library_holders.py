"""hop.compile and objects a library builds that hold a list, dict or set
of the caller's (issue 28, session 43): a change through such an object
(`next(itertools.chain([G])).append(1)`) is a change of G, which the
effect finder cannot follow back from the bytecode.  The general rule
(_effects._builds_holder): any library callable given a container of the
caller's may keep it, except those known to return numbers, strings or new
arrays; such a call is compiled by the frame translator, which follows real
objects, or runs eagerly.  Before, only a list of builtins was known, and
the examples below changed G once, while tracing, and never again (a
silently dropped effect).  The cases marked xfail are what is still missed
(docs/ARCHITECTURE.md): a library object that calls a method on what it
holds when called (functools.partial(list.append, G), operator.methodcaller)
and a function made in place that returns the caller's container to a
library iterator (iter(lambda: G, None))."""

import warnings

import pytest

from test_compile_campaign41 import SIZES, check

HEADER = '''
import collections, contextvars, copy, functools, itertools, operator, queue, types, weakref
G = [1]
class Box: pass
def snap(): return G
def f(x):
'''

HOLDERS = {
    "partial_args": "p = functools.partial(len, G); p.args[0].append(1)",
    "chain": "next(itertools.chain([G])).append(1)",
    "repeat": "next(itertools.repeat(G)).append(1)",
    "cycle": "next(itertools.cycle([G])).append(1)",
    "islice": "next(itertools.islice([G], 1)).append(1)",
    "zip_longest": "next(itertools.zip_longest([G], [0]))[0].append(1)",
    "product": "next(itertools.product([G]))[0].append(1)",
    "accumulate": "next(itertools.accumulate([G])).append(1)",
    "tee": "a, b = itertools.tee([G]); next(b).append(1)",
    "mappingproxy": "types.MappingProxyType({'k': G})['k'].append(1)",
    "userlist": "collections.UserList([G])[0].append(1)",
    "contextvar": "v = contextvars.ContextVar('v'); v.set(G); v.get().append(1)",
    "simple_queue": "q = queue.SimpleQueue(); q.put(G); q.get().append(1)",
    "staticmethod": "staticmethod(G).__func__.append(1)",
    "deque": "collections.deque([G])[0].append(1)",
    "simple_namespace": "types.SimpleNamespace(k=G).k.append(1)",
    "weak_value_dict": "o = Box(); o.l = G; weakref.WeakValueDictionary(k=o)['k'].l.append(1)",
    "copy": "copy.copy([G])[0].append(1)",
}

MISSED = {
    "partial_append": "functools.partial(list.append, G)(1)",
    "methodcaller": "operator.methodcaller('append', 1)(G)",
    "iter_callable": "next(iter(lambda: G, None)).append(1)",
}


def _program(body):
    return HEADER + "    " + body + "\n    return x + len(G)\n"


@pytest.mark.parametrize("name", sorted(HOLDERS))
def test_a_change_through_a_library_holder_is_eagers(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(_program(HOLDERS[name]), SIZES, name=name)


@pytest.mark.parametrize("name", sorted(MISSED))
@pytest.mark.xfail(strict=True, reason="missed: documented in docs/ARCHITECTURE.md (library "
                                       "holders)")
def test_what_the_holder_rule_still_misses(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(_program(MISSED[name]), SIZES, name=name)


def test_library_calls_that_keep_nothing_stay_plain():
    # numbers and strings of the caller's list: no holder, no translation,
    # no eager call
    cf = check(HEADER.replace("G = [1]", "import math\nG = [3, 1, 2]") +
               "    return x + len(G) + sum(G) + int(str(max(G))) + math.prod(G) + "
               "abs(min(G))\n", SIZES)
    assert cf.eager_calls == 0 and "side-effect table" not in cf.explain()
