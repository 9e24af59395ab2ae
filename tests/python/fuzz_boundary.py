"""Differential campaign of hop.compile's Python boundary: generated
functions that put Python's own features next to tensor code, at random
places, called several times while the world changes; eager ==
hop.compile in results (values, types, dtypes and which results are one
object), printed text, raised exception (type and message), and every
effect on the world, in order.

The features (STATEMENTS): the text of traced values and of their scalars
(str, repr, format, f-strings, %-format, print), type()/isinstance/
issubclass, conversions (int, float, bool, complex, len, iter, hash,
operator.index, truth of an array), exceptions raised and caught
(try/except/finally, with blocks that suppress, raise from, exception
attributes, an uncaught raise on some calls), generators and
comprehensions, closures and nonlocal, globals the world rebinds, a
default argument the function mutates, writes to attributes, items,
lists, dicts and sets, identity (`is`), the standard library (math,
functools.reduce, itertools, operator, dataclasses, enum), recursion,
*args/**kwargs, methods of class instances, and a value returned twice.

Values are multiples of 1/4 below 8, so every sum is exact in any order:
text and values are compared exactly.  check_spec builds the program
twice, each in a World of its own, and makes the same calls eagerly and
through hop.compile, changing both worlds the same way before each.

    python3 scripts/fuzz.py --category boundary --examples 2000
"""

import contextlib
import dataclasses
import enum
import functools
import io
import itertools
import json
import math
import operator
import os
import warnings

import numpy as np
from hypothesis import strategies as st

import hop
from hop import _C

# name -> source lines.  acc is the running value, x the argument, args
# the extra positional arguments, k the keyword, bag a default argument;
# TXT collects text and Python values (compared exactly).
STATEMENTS = {
    # text of traced values and their scalars
    "str": ["TXT.append(str(acc.sum()))", "TXT.append(str(acc[0]))"],
    "repr": ["TXT.append(repr(acc.max()))", "TXT.append(repr(acc[-1]))"],
    "fstring": ["TXT.append(f'{acc.sum():.3f}|{acc[0]!r}|{acc.min()}|{acc.sum():>9}')"],
    "percent": ["TXT.append('%s %r %.2f %d' % (acc.sum(), acc[0], acc.max(), acc.min()))"],
    "format": ["TXT.append(format(acc.sum(), 'g') + format(acc[1], '+.1e'))"],
    "print": ["print('sum', acc.sum(), 'first', acc[0], sep=':')"],
    "print-array": ["print(acc)"],
    "text-array": ["TXT.append((str(acc), repr(acc > 1)))"],
    # types
    "type": ["TXT.append((type(acc).__name__, type(acc.sum()).__name__,",
             "            type(acc[0]).__name__))"],
    "isinstance": ["TXT.append((isinstance(acc, np.ndarray), isinstance(acc.sum(), float),",
                   "            isinstance(acc[0], (int, np.integer)),",
                   "            isinstance(acc, hop.Tensor),",
                   "            issubclass(type(acc), np.ndarray), type(acc) is type(x)))"],
    # conversions
    "int": ["acc = acc + int(acc.sum() > 3)"],
    "float": ["acc = acc * float(acc[0] >= 1)"],
    "bool": ["TXT.append(bool(acc[0]))", "acc = acc + bool(acc.max() > 2)"],
    "complex": ["TXT.append(complex(acc[1]))"],
    "len": ["acc = acc + len(acc)"],
    "iter": ["acc = acc + sum(iter(acc))"],
    "hash": ["TXT.append(hash(float(acc.sum())))"],
    "index": ["acc = acc + [0, 1, 2, 3, 4, 5, 6, 7, 8][operator.index((acc > 1).sum())]"],
    "truth": ["try:", "    TXT.append(bool(acc > 0))", "except ValueError as e:",
              "    TXT.append(str(e))"],
    "round": ["TXT.append((round(float(acc.sum())), math.floor(acc[0]), abs(-acc.sum())))"],
    "tolist": ["TXT.append(acc.tolist())"],
    # exceptions
    "try-raise": ["try:", "    if float(acc.sum()) > 6:",
                  "        raise ValueError(f'big {acc.sum()}')", "    acc = acc + 1",
                  "except ValueError as e:", "    TXT.append((str(e), e.args))",
                  "    acc = acc - 1"],
    "finally": ["try:", "    acc = acc * 2", "    LOG.append('body')", "finally:",
                "    LOG.append('finally')"],
    "raise-from": ["try:", "    try:", "        {}['missing']", "    except KeyError as e:",
                   "        raise RuntimeError('wrapped') from e",
                   "except RuntimeError as e2:",
                   "    TXT.append((str(e2), repr(e2.__cause__), e2.__suppress_context__))",
                   "    acc = acc + 2"],
    "with-suppress": ["with Suppress() as s:", "    acc = acc + s", "    if N % 2 == 0:",
                      "        raise IndexError('even')", "    acc = acc * 2"],
    "raise-some": ["if N % 3 == 2:", "    raise ArithmeticError(f'n is {N}, sum {acc.sum()}')"],
    "exc-attr": ["try:", "    [1, 2][len(LOG) + 5]", "except IndexError as e:",
                 "    TXT.append((type(e).__name__, e.args, e.__traceback__ is not None))"],
    # generators and comprehensions
    "generator": ["acc = acc + sum(gen(acc))"],
    "listcomp": ["acc = sum([v * i for i, v in enumerate((acc, acc + 1, acc))])"],
    "dictcomp": ["_d = {i: acc * i for i in range(3)}", "acc = _d[2] - _d[1]",
                 "TXT.append(sorted(_d))"],
    "genexpr-effect": ["acc = acc + sum(LOG.append(i) or i for i in range(2))"],
    # closures, nonlocal, globals
    "nonlocal": ["nonlocal c", "c += 1", "acc = acc * c"],
    "closure": ["acc = acc + scaled()"],
    "global": ["global N", "N += 1", "acc = acc + N"],
    "global-read": ["acc = acc * G"],
    "default": ["bag.append(len(bag))", "acc = acc + len(bag)"],
    # writes to objects and containers
    "attribute": ["OBJ.v = OBJ.v + 1", "OBJ.last = acc.sum()", "acc = acc + OBJ.v"],
    "item": ["D[len(D) % 3] = acc[0]", "D['n'] = D.get('n', 0) + 1"],
    "set": ["S.add(len(LOG) % 4)", "acc = acc + len(S)"],
    "list": ["LOG.append(acc.sum())", "LOG.extend([len(LOG)])", "LOG.insert(0, 'head')"],
    "store-twice": ["LOG.append(acc)", "LOG.append(acc)"],
    "dict-key": ["TXT.append({acc.sum(): 1, 'first': acc[0]})"],
    # identity
    "is": ["_y = acc", "TXT.append((_y is acc, acc is x, LOG is LOG, acc is None))"],
    # the standard library
    "math": ["acc = acc + math.floor(float(acc.sum()) / 4)", "TXT.append(math.isfinite(acc[0]))"],
    "reduce": ["acc = functools.reduce(operator.add, [acc, acc, x])"],
    "itertools": ["acc = acc + sum(itertools.islice(itertools.count(1), 3))",
                  "TXT.append(list(itertools.accumulate([1, 2, len(LOG)])))"],
    "dataclass": ["_p = Pair(acc, 2)", "acc = _p.a * _p.b", "TXT.append(repr(Pair(1, len(LOG))))",
                  "TXT.append(dataclasses.astuple(Pair(N, 3)))"],
    "enum": ["acc = acc * Color(1 + N % 2).value", "TXT.append((Color.RED.name, Color(2)))"],
    # recursion, *args/**kwargs, methods
    "recursion": ["acc = rec(acc, 3)"],
    "args": ["acc = acc + sum(args) + k"],
    "kwargs": ["acc = scale_by(acc, **{'by': 2})"],
    "method": ["acc = OBJ.scale(acc)", "ACC.add(float(acc[0]))"],
}

# what the outside world does before a call
CHANGES = {
    "none": "pass",
    "counter": "W.N += 1",
    "clear": "W.LOG.clear(); W.D.clear(); W.S.clear()",
    "attribute": "W.OBJ.v = 3",
    "global": "W.G = W.G + 1",
    "cell": "W.set_c(5)",
    "default": "W.f.__kwdefaults__['bag'].append(9)",
    "method": "W.Box.factor = W.Box.factor + 1",
    "rebind-method": "W.Box.scale, W.Box.scale_alt = W.Box.scale_alt, W.Box.scale",
}

CATEGORY = "boundary: Python's features beside tensor code (text, types, conversions, " \
           "exceptions, generators, closures, stdlib, recursion, methods, identity); eager " \
           "vs hop.compile over calls with a changing world"

PRELUDE = '''
class Suppress:
    def __enter__(self):
        LOG.append("enter")
        return 2

    def __exit__(self, t, v, tb):
        LOG.append(("exit", t and t.__name__, str(v)))
        return True


class Box:
    factor = 2

    def __init__(self):
        self.v = 1

    def scale(self, t):
        return t * self.factor + self.v

    def scale_alt(self, t):
        return t * 3 - self.v


class Total:
    def __init__(self):
        self.items = []

    def add(self, v):
        self.items.append(v)
        return self


@dataclasses.dataclass
class Pair:
    a: object
    b: int = 1


class Color(enum.Enum):
    RED = 1
    GREEN = 2


def gen(v):
    yield v
    yield v * 2


def rec(v, n):
    return v if n == 0 else rec(v + n, n - 1)


def scale_by(v, by=1):
    return v * by


OBJ = Box()
ACC = Total()
'''


@st.composite
def specs(draw):
    names = draw(st.lists(st.sampled_from(sorted(STATEMENTS)), min_size=1, max_size=4))
    calls = draw(st.lists(st.fixed_dictionaries({
        "seed": st.integers(0, 99),
        "n": st.sampled_from([3, 3, 4]),
        "args": st.sampled_from([0, 0, 1, 2]),
        "k": st.sampled_from([None, 2, 0.5]),
        "change": st.sampled_from(sorted(CHANGES)),
    }), min_size=2, max_size=4))
    return {"category": "boundary", "mode": draw(st.sampled_from(["numpy", "hop"])),
            "dtype": draw(st.sampled_from(["float32", "float64", "int32"])),
            "statements": names, "calls": calls,
            "returns": draw(st.sampled_from(["acc", "twice", "all", "none"])),
            "wrap": draw(st.sampled_from(["none", "none", "loop", "helper", "try"]))}


def source(spec):
    """The program of spec as Python source (run in a World's namespace)."""
    body, declared = [], set()
    for name in spec["statements"]:
        for line in STATEMENTS[name]:
            if line.startswith(("global ", "nonlocal ")):
                declared.add(line)
            else:
                body.append(line)
    wrap = spec.get("wrap", "none")
    lines = PRELUDE.splitlines() + ["", "def make():", "    c = 1", "",
                                    "    def scaled():", "        return c * 2", ""]
    if wrap == "helper":
        lines += ["    def helper(acc, x, args, k, bag):"]
        lines += [f"        {d}" for d in sorted(declared)]
        lines += [f"        {b}" for b in body] + ["        return acc", ""]
        declared, body = set(), ["acc = helper(acc, x, args, k, bag)"]
    elif wrap == "loop":
        body = ["for _i in range(2):"] + [f"    {b}" for b in body]
    elif wrap == "try":
        body = ["try:"] + [f"    {b}" for b in body] + \
            ["except LookupError as _e:", "    TXT.append(('outer', repr(_e)))"]
    ret = {"acc": "acc", "twice": "acc, acc", "all": "acc, [acc, TXT[-1:]], len(LOG)",
           "none": "acc, None, (G, None)"}
    lines += ["    def f(x, *args, k=1, bag=[]):"]
    lines += [f"        {d}" for d in sorted(declared)]
    lines += ["        acc = x * k"] + [f"        {b}" for b in body]
    lines += [f"        return {ret[spec['returns']]}", "",
              "    def set_c(v):", "        nonlocal c", "        c = v", "",
              "    def cells():", "        return c", "",
              "    return f, set_c, cells", "", "", "f, set_c, cells = make()"]
    return "\n".join(lines) + "\n"


class World:
    """One copy of everything a program reads and changes."""

    def __init__(self, spec):
        self.ns = {"__name__": "fuzz_boundary_world", "np": np, "hop": hop, "math": math,
                   "functools": functools, "itertools": itertools, "operator": operator,
                   "dataclasses": dataclasses, "enum": enum,
                   "N": 0, "G": 2, "LOG": [], "D": {}, "S": set(), "TXT": []}
        exec(compile(source(spec), "<fuzz_boundary>", "exec"), self.ns)

    def change(self, what):
        exec(CHANGES[what], {"W": _Setter(self)})

    def state(self):
        """Everything a call may change, as plain values (a traced value
        anywhere is a failure: it escaped its trace)."""
        ns = self.ns
        return {"N": ns["N"], "G": ns["G"], "LOG": plain(ns["LOG"]), "D": plain(ns["D"]),
                "S": sorted(ns["S"]), "TXT": plain(ns["TXT"]),
                "OBJ": plain(vars(ns["OBJ"])), "ACC": plain(ns["ACC"].items),
                "factor": ns["Box"].factor, "cell": ns["cells"](),
                "defaults": plain(ns["f"].__kwdefaults__)}


class _Setter:
    def __init__(self, world):
        self.__dict__["_w"] = world

    def __getattr__(self, name):
        return self._w.ns[name]

    def __setattr__(self, name, value):
        self._w.ns[name] = value


def plain(v):
    """v as plain values with every type spelled out."""
    if isinstance(v, hop.Tensor):
        assert not _C._is_proxy(v), "a traced value escaped its trace"
        return ("tensor", v.dtype.name, v.tolist())
    if isinstance(v, np.ndarray):
        return ("ndarray", str(v.dtype), v.tolist())
    if isinstance(v, np.generic):
        return (type(v).__name__, v.item())
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, [plain(x) for x in v])
    if isinstance(v, dict):
        return ("dict", [(plain(k), plain(x)) for k, x in v.items()])
    if isinstance(v, (int, float, complex, str, bool, type(None))):
        return (type(v).__name__, v)
    return (type(v).__name__, repr(v))


def identities(r):
    """Which of a result's values are one object (tuple positions)."""
    if not isinstance(r, tuple):
        return ()
    flat = list(r) + (list(r[1]) if len(r) > 1 and isinstance(r[1], list) else [])
    return tuple((i, j) for i in range(len(flat)) for j in range(i)
                 if flat[i] is flat[j] and not isinstance(flat[i], (int, float, str, bool)))


def argument(spec, call):
    rng = np.random.default_rng(call["seed"])
    a = (rng.integers(1, 32, call["n"]) / 4).astype(spec["dtype"])
    if spec["dtype"] == "int32":
        a = rng.integers(0, 8, call["n"]).astype(np.int32)
    return a if spec["mode"] == "numpy" else hop.tensor(a)


def run(world, fn, x, call):
    """fn(x, *args, k=k) in world: (result or error, identities, printed text)."""
    out = io.StringIO()
    args = tuple(range(1, call["args"] + 1))
    kw = {} if call["k"] is None else {"k": call["k"]}
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(x, *args, **kw)
            got = ("ok", plain(r), identities(r))
        except Exception as e:  # eager's errors are part of the answer
            got = ("error", type(e).__name__, str(e))
    return got, out.getvalue()


def check_spec(spec):
    """eager == hop.compile over the spec's calls (see the module)."""
    eager, comp = World(spec), World(spec)
    cf = hop.compile(comp.ns["f"])
    for i, call in enumerate(spec["calls"]):
        for w in (eager, comp):
            w.change(call["change"])
        want = run(eager, eager.ns["f"], argument(spec, call), call)
        got = run(comp, cf, argument(spec, call), call)
        where = f"call {i} ({call})"
        assert got == want, f"{where}: hop.compile gave {got}, eager {want}"
        assert comp.state() == eager.state(), \
            f"{where}: the world after hop.compile {comp.state()} != eager's {eager.state()}"


REGRESSION_TEMPLATE = '''"""Regression test written by scripts/fuzz.py (category boundary).

{summary}

Found with seed {seed}; hop {version}.  The program is a spec of
tests/python/fuzz_boundary.py (fuzz_boundary.source(SPEC) prints it), checked by
fuzz_boundary.check_spec: eager == hop.compile over the calls.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_boundary import check_spec  # noqa: E402

SPEC = {spec}


def test_{name}():
    check_spec(SPEC)
'''


def save_regression(spec, directory, summary="", seed=None):
    """Writes spec as a runnable pytest file in directory; returns its path."""
    import hashlib

    import fuzz_programs as fp
    name = "boundary_" + hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    return fp.write_regression(REGRESSION_TEMPLATE, spec, name, directory, summary, seed)


if __name__ == "__main__":  # print a spec's program: python3 fuzz_boundary.py '<json>'
    import sys
    print(source(json.loads(sys.argv[1])), end="")
    os._exit(0)
