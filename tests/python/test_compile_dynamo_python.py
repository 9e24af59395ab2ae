"""Scenarios of Python's own features in a compiled function, after the
ones PyTorch's Dynamo tests (test/dynamo/test_exceptions.py, test_misc.py,
test_functions.py), written for hop: exceptions raised and caught in loops,
nested handlers, else and finally, a re-raise from a called function, a
custom exception's args, KeyError from a mapping, __getattr__ fallbacks,
StopIteration ending a hand-written zip_longest, raise ... from None,
contextlib context managers that convert an error, nested with blocks
around a graph break, generators consumed partly and comprehensions with
effects, closures with nonlocal counters, print to a file, collections and
functools.partial.  Each runs eagerly and compiled, on a hop tensor and on
a NumPy array, three calls: the same results (values, types), printed
text, raised error (type and message) and state."""

import collections
import contextlib
import functools
import io
import warnings

import numpy as np
import pytest

import hop


def plain(v, depth=0):
    """v as comparable data: values, types and orders (a set's too); a
    function by its type only (its repr holds its address)."""
    if depth > 6:
        return ("deep",)
    if isinstance(v, hop.Tensor):
        return ("tensor", v.dtype.name, v.tolist())
    if isinstance(v, np.ndarray):
        return ("ndarray", str(v.dtype), v.tolist())
    if isinstance(v, np.generic):
        return (type(v).__name__, v.item())
    if isinstance(v, (list, tuple, set, frozenset)):
        return (type(v).__name__, [plain(x, depth + 1) for x in v])
    if isinstance(v, dict):
        return ("dict", [(plain(k, depth + 1), plain(x, depth + 1)) for k, x in v.items()])
    if callable(v) and not isinstance(v, type):
        return ("callable", type(v).__name__)
    return (type(v).__name__, repr(v))


def outcome(fn, x):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = ("ok", plain(fn(x)))
        except Exception as e:
            got = ("error", type(e).__name__, str(e))
    return got, out.getvalue()


class Custom(Exception):
    pass


def exc_in_loop_with_return():
    def f(x):
        for i in range(10):
            if i == 5:
                return x
            try:
                x = x * 2
                raise NotImplementedError
            except Exception:
                x = x - 1
        return x
    return f, None


def nested_handlers_and_finally():
    def f(x):
        x = x + 1
        try:
            x = x * 2
            raise NotImplementedError("ni")
        except AssertionError:
            x = x * 3
        except NotImplementedError:
            x = x * 5
            try:
                x = x + 1
                raise AssertionError
            except AssertionError:
                x = x - 2
        finally:
            x = x + 7
        return x
    return f, None


def reraise_from_called_function():
    def g(x):
        try:
            x = x + 1
            raise NotImplementedError("x")
        except NotImplementedError:
            x = x * 2
            raise

    def f(x):
        try:
            x = x * 3
            g(x)
        except Exception as e:
            return x, type(e).__name__, str(e)
        return x, None, None
    return f, None


def try_else():
    def g(x):
        return x * 2

    def f(x):
        try:
            x = g(x)
        except Exception:
            x = x - 1
        else:
            x = x + 10
        return x
    return f, None


def custom_exception_args():
    def f(x):
        try:
            raise Custom(1, 2.0)
        except Custom as e:
            return x + e.args[0] + e.args[1], repr(e)
    return f, None


def getattr_fallbacks():
    class A:
        def __init__(self):
            self._b = 20

        def __getattr__(self, name):
            if "_" + name in self.__dict__:
                return self.__dict__["_" + name]
            raise AttributeError(f"{name} absent")

    class B(A):
        def __init__(self):
            super().__init__()
            self.a = 10

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                return 30
    obj = B()

    def f(x):
        return x * obj.a * obj.b * obj.c, hasattr(obj, "zz")
    return f, None


def stop_iteration_zip_longest():
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
        return x + 1, tuple(zip_longest([1, 2, 3], [10, 11]))
    return f, None


def raise_from_none_mapping():
    class MyMap:
        def __init__(self, d):
            self._d = d

        def __getitem__(self, k):
            try:
                return self._d[k]
            except KeyError:
                raise KeyError(k) from None
    d = MyMap({"a": 1})

    def get(o, k, v=None):
        try:
            return o[k]
        except KeyError as e:
            return (v, e.__suppress_context__, e.__cause__)

    def f(x):
        return x * 2, get(d, "m"), get(d, "a")
    return f, None


def contextmanager_converts_error():
    log = []

    @contextlib.contextmanager
    def cm():
        log.append("in")
        try:
            yield 3
        except BaseException as e:
            log.append(("caught", type(e).__name__))
            raise ValueError("converted")
        finally:
            log.append("out")

    def f(x):
        try:
            with cm() as v:
                x = x * v
                raise IndexError
        except ValueError as e:
            x = x + 1
            log.append(str(e))
        return x
    return f, lambda: list(log)


def nested_with_around_a_break():
    stack = []

    class CM:
        def __init__(self, n):
            self.n = n

        def __enter__(self):
            stack.append(("in", self.n))
            return self

        def __exit__(self, *a):
            stack.append(("out", self.n, a[0] is not None))
            return False

    def f(x):
        with CM(1):
            with CM(2) as c:
                y = x * c.n
                print(float(y.sum()))
            y = y + 1
        return y
    return f, lambda: list(stack)


def generator_consumed_in_parts():
    log = []

    def g(v):
        log.append("g0")
        yield v
        log.append("g1")
        print("mid", float(v.sum()))
        yield v * 2
        log.append("g2")

    def f(x):
        it = g(x)
        return next(it) + next(it)
    return f, lambda: list(log)


def comprehensions_with_effects():
    log = []

    def f(x):
        out = [log.append(i) or x * i for i in range(3)]
        d = {i: log.append(-i) for i in range(2)}
        return out[2], d
    return f, lambda: list(log)


def nonlocal_counter_in_a_closure():
    n = 0

    def f(x):
        def inc():
            nonlocal n
            n += 1
            return n
        a = inc()
        print("n", n)
        return x * a + inc()
    return f, lambda: n


def print_to_a_file():
    buf = io.StringIO()

    def f(x):
        y = x * 2
        print("a", y.sum(), sep="|", end="!\n", file=buf)
        print(y[0], file=buf, flush=True)
        buf.write(f"w{y.max()}\n")
        return y
    return f, lambda: buf.getvalue()


def collections_and_partial():
    def f(x):
        d = collections.OrderedDict(a=x)
        d["b"] = x * 2
        dd = collections.defaultdict(list)
        dd["k"].append(1)
        p = functools.partial(lambda a, b, c=1: a * b + c, x)
        nt = collections.namedtuple("P", "a b")(x, 2)
        return d["b"] + nt.a * nt.b, list(d), dict(dd), p(2), p(3, c=5), \
            collections.Counter("abca").most_common(1)
    return f, None


SCENARIOS = [exc_in_loop_with_return, nested_handlers_and_finally, reraise_from_called_function,
             try_else, custom_exception_args, getattr_fallbacks, stop_iteration_zip_longest,
             raise_from_none_mapping, contextmanager_converts_error, nested_with_around_a_break,
             generator_consumed_in_parts, comprehensions_with_effects,
             nonlocal_counter_in_a_closure, print_to_a_file, collections_and_partial]

ARGS = {"hop": lambda v: hop.tensor(np.array([v, 2.0, 3.5], np.float32)),
        "numpy": lambda v: np.array([v, 2.0, 3.5])}


@pytest.mark.parametrize("kind", sorted(ARGS))
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_a_compiled_scenario_does_what_eager_does(scenario, kind):
    f, state = scenario()
    g, cstate = scenario()
    cf = hop.compile(g)
    for v in (1.0, -2.0, 1.0):
        want = outcome(f, ARGS[kind](v))
        got = outcome(cf, ARGS[kind](v))
        assert got == want
        if state is not None:
            assert cstate() == state()
