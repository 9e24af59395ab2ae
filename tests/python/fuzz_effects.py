"""Differential campaign of hop.compile's Python effects (issue 24): eager vs
hop.compile vs hop.compile(fullgraph=True).

A spec is a generated function over x (a NumPy array or a hop tensor) that
mixes tensor code with Python effects (a global counter, a nonlocal one, a
list append, dict and attribute writes, print of numbers and of traced
values, next() of an iterator, a write into a captured array, a random
generator, storing traced values into a cell, an attribute or a global, an
augmented write to a list item, a set read then added to, a class attribute
through type(obj)),
conversions of traced values (str, f-strings, float, round, hash, .tolist(),
.item(), np.asarray, isinstance) and pure code, with a keyword argument, run
in f's body, in a loop, in a with block or in a helper f calls, and
a sequence of calls between which the outside world changes (the counter
reset, the list cleared, the array written, the generator reseeded, the
argument's size changed, the keyword changed).

check_spec builds the program three times, each in a world of its own, and
makes the same calls: eagerly, through hop.compile and through
hop.compile(fullgraph=True).  Every compiled call must give eager's result
(or raise eager's error), print eager's text and leave the world as eager
leaves it; a fullgraph call either does the same or raises hop.TraceError
before any effect (the world unchanged, nothing printed), and only for a
program with an effect or a conversion; a program of pure statements (and
isinstance, which compiled code answers as eager does) compiles: no call
runs eagerly.

    python3 scripts/fuzz.py --category effects --examples 2000
"""

import contextlib
import io
import itertools
import json
import os
import random
import types
import warnings

import numpy as np
from hypothesis import strategies as st

import hop
from hop import _C

# name -> (kind, source lines): kind is "effect", "conversion" or "pure"
# (pure: compiles, never a fallback).  acc is the running tensor, x the
# argument, k the keyword argument.
STATEMENTS = {
    "global": ("effect", ["global N", "N += 1", "acc = acc + N"]),
    "nonlocal": ("effect", ["nonlocal c", "c += 1", "acc = acc * c"]),
    "append": ("effect", ["LOG.append(len(LOG))", "acc = acc + len(LOG)"]),
    "dict": ("effect", ["D['n'] = D.get('n', 0) + 1", "acc = acc - D['n']"]),
    "attribute": ("effect", ["OBJ.v = OBJ.v + 1", "acc = acc + OBJ.v"]),
    "print": ("effect", ["print('n', N, len(LOG))"]),
    "print-traced": ("effect", ["print('sum', acc.sum())"]),
    "next": ("effect", ["acc = acc + next(IT)"]),
    "array-write": ("effect", ["ARR[0] += 1.0", "acc = acc + float(ARR[0])"]),
    "random": ("effect", ["acc = acc * R.random()"]),
    "store-attribute": ("effect", ["OBJ.last = acc * 2"]),
    "store-cell": ("effect", ["nonlocal w", "w = acc + 1", "acc = acc + w"]),
    "store-global": ("effect", ["global G", "G = acc * 3"]),
    "str": ("conversion", ["acc = acc + len(str(acc.sum()))"]),
    "format": ("conversion", ["acc = acc + len(f'{float(acc.sum()):.3f}')"]),
    "float": ("conversion", ["acc = acc * float(acc.sum() > 1.5)"]),
    "hash": ("conversion", ["acc = acc + (1.0 if float(acc.sum()) in {6.0, 3.0} else 0.5)"]),
    "tolist": ("conversion", ["acc = acc + len(acc.tolist())"]),
    "item": ("conversion", ["acc = acc + acc.sum().item()"]),
    "asarray": ("conversion", ["acc = acc + np.asarray(acc).sum()"]),
    # a data-dependent branch on a conversion: a graph break whose resume
    # depends on the side taken (issue 28)
    "branch": ("conversion", ["if float(acc.sum()) > 1.0:", "    acc = acc * 2"]),
    # a data-dependent if on a traced value: one cond where its sides are
    # pure (the frame translator's merge, or path specialisation), else a
    # break at the if (a side with an effect; NumPy's inexact sum); a
    # conversion for fullgraph=True, which raises at it
    "if-data": ("conversion", ["if acc.sum() > 4.0:", "    acc = acc * 0.5", "else:",
                               "    acc = acc + 1"]),
    "if-exact": ("conversion", ["if (acc > 1.0).all():", "    acc = acc - 1",
                                "    _t = acc * 2", "    acc = _t + 1"]),
    "if-effect": ("effect", ["if acc.sum() > 4.0:", "    LOG.append(len(LOG))",
                             "    acc = acc - 1"]),
    "ternary": ("conversion", ["acc = acc * 2 if acc.sum() < 3.0 else acc - 0.5"]),
    "isinstance": ("pure", ["acc = acc + (1.0 if isinstance(acc, np.ndarray) else 2.0)"]),
    "scale": ("pure", ["acc = acc * 2 + 1"]),
    "normalise": ("pure", ["acc = acc / (1.0 + (acc * acc).sum())"]),
    "keyword": ("pure", ["acc = acc + k"]),
    "local-list": ("pure", ["parts = [acc, acc * 2]", "parts.append(acc - 1)",
                            "acc = parts[0] + parts[2]"]),
    "loop": ("pure", ["for _ in range(2):", "    acc = np.maximum(acc, 0.25) * 0.5"]),
    # generator expressions consumed by sum(): pure, with an effect per
    # item, with a conversion per item (issue 28)
    "genexpr": ("pure", ["acc = sum(v * 0.5 for v in (acc, acc + 1))"]),
    "genexpr-effect": ("effect", ["acc = acc + sum(LOG.append(i) or i for i in range(2))"]),
    "genexpr-str": ("conversion", ["acc = acc + sum(len(str(v)) for v in (acc.sum(), k))"]),
    # effects that read what they write (issue 24's audit): an augmented
    # item write to a global list, a set read then added to (with a size,
    # dynamic after a new length), a class attribute through type(obj)
    "list-item": ("effect", ["CNT[0] += 1"]),
    "set": ("effect", ["_seen = x.shape[0] in SEEN", "SEEN.add(x.shape[0])",
                       "acc = acc * (2.0 if _seen else 1.0)"]),
    "class-attribute": ("effect", ["type(CTR).count += 1", "acc = acc + type(CTR).count"]),
}

# what the outside world does before a call
CHANGES = {
    "none": "pass",
    "counter": "W.N += 5",
    "clear": "W.LOG.clear(); W.D.clear()",
    "attribute": "W.OBJ.v = 10",
    "array": "W.ARR[1] = 7.0",
    "reseed": "W.R.seed(9)",
    "cell": "W.set_c(4)",
    "class": "W.Counter.count = 7; W.CNT[0] = 5; W.SEEN.discard(3)",
}

CATEGORY = "effects: Python effects, conversions, keyword arguments and rebinding; eager vs " \
           "hop.compile vs fullgraph=True over calls with a changing world"


@st.composite
def specs(draw, dtypes=None):
    names = draw(st.lists(st.sampled_from(sorted(STATEMENTS)), min_size=1, max_size=4))
    calls = draw(st.lists(st.fixed_dictionaries({
        "n": st.sampled_from([3, 3, 4, 6]),
        "seed": st.integers(0, 99),
        "k": st.sampled_from([None, 1.0, 2.0, 2]),
        "change": st.sampled_from(sorted(CHANGES)),
    }), min_size=2, max_size=4))
    return {"category": "effects", "mode": draw(st.sampled_from(["numpy", "hop"])),
            "statements": names, "calls": calls,
            "returns": draw(st.sampled_from(["acc", "pair"])),
            "wrap": draw(st.sampled_from(WRAPS))}


# Where the statements run (issue 28: a break inside a loop, a with block or
# a called function resumes compiled around it): f's own body, a for or a
# while loop of two turns, a with block over a context manager of the
# program's (its __enter__ and __exit__ log to ENTERED), or a helper f calls.
WRAPS = ["none", "none", "loop", "while", "with", "helper"]


def source(spec):
    """The program of spec as Python source (run in a World's namespace)."""
    body, declared = [], set()
    for name in spec["statements"]:
        for line in STATEMENTS[name][1]:
            if line.startswith(("global ", "nonlocal ")):
                declared.add(line)
                continue
            body.append(line)
    ret = "acc" if spec["returns"] == "acc" else "acc, len(LOG) + N"
    wrap = spec.get("wrap", "none")
    lines = ["class CM:", "    def __enter__(self):", "        ENTERED.append(1)",
             "        return self", "", "    def __exit__(self, *exc):",
             "        ENTERED.append(-1)", "        return False", "", "",
             "class Counter:", "    count = 0", "", "", "CTR = Counter()", "", "",
             "def make():", "    c = 1", "    w = None", ""]
    if wrap == "helper":
        lines += ["    def helper(acc, x, k):"] + [f"        {d}" for d in sorted(declared)]
        lines += [f"        {b}" for b in body] + ["        return acc", ""]
        declared, body = set(), ["acc = helper(acc, x, k)"]
    elif wrap == "loop":
        body = ["for _i in range(2):"] + [f"    {b}" for b in body]
    elif wrap == "while":
        body = ["_i = 0", "while _i < 2:"] + [f"    {b}" for b in body] + ["    _i += 1"]
    elif wrap == "with":
        body = ["with CM():"] + [f"    {b}" for b in body]
    lines += ["    def f(x, *, k=1.0):"]
    lines += [f"        {d}" for d in sorted(declared)]
    lines += ["        acc = x * k"] + [f"        {b}" for b in body]
    lines += [f"        return {ret}", "",
              "    def set_c(v):", "        nonlocal c", "        c = v", "",
              "    def cells():", "        return c, w", "",
              "    return f, set_c, cells", "", "", "f, set_c, cells = make()"]
    return "\n".join(lines) + "\n"


class World:
    """One copy of everything a program reads and changes: its globals (in
    a namespace of its own), cells, and the objects they hold."""

    def __init__(self, spec):
        self.ns = {"__name__": "fuzz_effects_world", "np": np, "hop": hop,
                   "N": 0, "LOG": [], "D": {}, "OBJ": types.SimpleNamespace(v=0),
                   "ARR": np.arange(3.0), "IT": itertools.count(1),
                   "R": random.Random(1), "G": None, "ENTERED": [], "CNT": [0],
                   "SEEN": set()}
        exec(compile(source(spec), "<fuzz_effects>", "exec"), self.ns)

    def __getattr__(self, name):
        return self.ns[name]

    def change(self, what):
        exec(CHANGES[what], {"W": _Setter(self)})

    def state(self):
        """Everything a call may change, as plain values (a traced value
        anywhere is a failure: it escaped its trace)."""
        ns = self.ns
        return {"N": ns["N"], "LOG": list(ns["LOG"]), "D": dict(ns["D"]),
                "OBJ": {k: _plain(v) for k, v in vars(ns["OBJ"]).items()},
                "ARR": ns["ARR"].tolist(), "IT": repr(ns["IT"]), "R": ns["R"].getstate(),
                "cells": [_plain(v) for v in ns["cells"]()], "G": _plain(ns["G"]),
                "ENTERED": list(ns["ENTERED"]), "CNT": list(ns["CNT"]),
                "SEEN": sorted(ns["SEEN"]), "Counter": ns["Counter"].count}


class _Setter:
    def __init__(self, world):
        self.__dict__["_w"] = world

    def __getattr__(self, name):
        return self._w.ns[name]

    def __setattr__(self, name, value):
        self._w.ns[name] = value


def _plain(v):
    if isinstance(v, hop.Tensor):
        assert not _C._is_proxy(v), "a traced value escaped its trace"
        return ("tensor", v.dtype.name, v.tolist())
    if isinstance(v, np.ndarray):
        return ("ndarray", str(v.dtype), v.tolist())
    if isinstance(v, (tuple, list)):
        return type(v).__name__, [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return ("scalar", str(v.dtype), v.item())
    return v


# What fullgraph raises instead of running: TraceError for an effect, or the
# error hop.trace raises at the conversion (UnsupportedError for item() of a
# float, TypeError for a SymFloat's).
_REFUSALS = ("TraceError", "UnsupportedError", "TypeError")


def _same(a, b):
    """a == b, but floats of compiled arithmetic within rounding (a fused
    reduction may sum in another order than eager)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b) or abs(a - b) <= 1e-5 * max(1.0, abs(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return a == b


def _argument(spec, call):
    rng = np.random.default_rng(call["seed"])
    a = rng.uniform(-1, 2, call["n"]).round(3)
    return a if spec["mode"] == "numpy" else hop.tensor(a.astype(np.float32))


def _run(world, fn, x, k):
    """fn(x) (k=k unless None) in world: (result or error, printed text)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(x) if k is None else fn(x, k=k)
            got = ("ok", _plain(r))
        except Exception as e:  # eager's errors are part of the answer
            got = ("error", type(e).__name__, str(e))
    return got, out.getvalue()


def check_spec(spec):
    """The three ways of calling the program agree over the call sequence
    (see the module)."""
    eager, comp, full = World(spec), World(spec), World(spec)
    cf = hop.compile(comp.f)
    cg = hop.compile(full.f, fullgraph=True)
    kinds = {STATEMENTS[s][0] for s in spec["statements"]}
    if spec.get("wrap") == "with":
        kinds.add("effect")  # CM's __enter__ and __exit__ log to ENTERED
    refused = False
    for i, call in enumerate(spec["calls"]):
        for w in (eager, comp, full):
            w.change(call["change"])
        x, k = _argument(spec, call), call["k"]
        want = _run(eager, eager.f, x, k)
        got = _run(comp, cf, x, k)
        where = f"call {i} ({call})"
        assert _same(got, want), f"{where}: hop.compile gave {got}, eager {want}"
        assert comp.state() == eager.state(), \
            f"{where}: the world after hop.compile {comp.state()} != eager's {eager.state()}"
        before = full.state()
        got = _run(full, cg, x, k)
        if got[0][0] == "error" and got[0][1] in _REFUSALS and got[0] != want[0]:
            # refused before anything happened, for a program that needs it
            assert full.state() == before and got[1] == "", \
                f"{where}: fullgraph raised after an effect: {got}"
            assert kinds & {"effect", "conversion"}, f"{where}: fullgraph refused {got}"
            refused = True
            got = _run(full, full.f, x, k)  # the caller's eager run: the worlds stay equal
        assert _same(got, want), f"{where}: fullgraph gave {got}, eager {want}"
        assert full.state() == eager.state(), f"{where}: the world after fullgraph differs"
    if kinds == {"pure"}:
        assert cf.eager_calls == 0 and not refused, \
            f"a pure program ran eagerly: {cf.explain()}"


REGRESSION_TEMPLATE = '''"""Regression test written by scripts/fuzz.py (category effects).

{summary}

Found with seed {seed}; hop {version}.  The program is a spec of
tests/python/fuzz_effects.py (fuzz_effects.source(SPEC) prints it), checked by
fuzz_effects.check_spec: eager == hop.compile == fullgraph over the calls.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_effects import check_spec  # noqa: E402

SPEC = {spec}


def test_{name}():
    check_spec(SPEC)
'''


def save_regression(spec, directory, summary="", seed=None):
    """Writes spec as a runnable pytest file in directory; returns its path."""
    import hashlib
    import fuzz_programs as fp
    name = "effects_" + hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    return fp.write_regression(REGRESSION_TEMPLATE, spec, name, directory, summary, seed)


if __name__ == "__main__":  # print a spec's program: python3 fuzz_effects.py '<json>'
    import sys
    print(source(json.loads(sys.argv[1])), end="")
    os._exit(0)
