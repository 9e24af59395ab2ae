"""Differential programs for issue #12 ("Trust"): state that changes between calls.

fuzz_programs.py checks that one program on one set of inputs gives the same
answer eagerly, traced, compiled and in NumPy.  This module checks the same
across a *sequence* of calls between which the program's world changes, the
way a user's does: a NumPy array a closed-over hop.Tensor views is written in
place, a closed-over or global name is rebound, an argument object gets a new
attribute, a Python scalar changes type, the rows of x change so that another
cond branch (and another slice size) applies, or other threads trace, compile
and compute at the same time.  After every change, every call must equal eager
on the current values, or raise the exception type eager raises; a
GraphModule may instead raise hop.GuardError where its documented guards apply
(what each category allows is in CATEGORIES), never give a stale answer.

A spec is plain data, like fuzz_programs' (saved and replayed the same way):

    {"category": "mutate" | "rebind" | "argobj" | "scalars" | "branch" | "threads",
     "dtype": "float32", "shape": [n, m], "dynamic": bool | [[dn, dm], [dm]],
     "seed": 123,
     "holder": "namedtuple" | "dataclass" | "object" | "dict",   (argobj; dict,
                                                   a pytree hop flattens, is the control)
     "init": {"k": 2, "g": 0.5, "s": True},                       (scalars, rebind)
     "tree": [...],
     "steps": [{slot: action, ...}, ...]}    one dict per call after the first

    threads: {"category": "threads", "seed": s, "reps": r,
              "threads": [{"mode": "eager" | "trace" | "compile", "spec": <a "plain" spec>}, ...]}

The program is generated as Python source (`source(spec)` shows it), so that
closures, globals and argument objects are real ones: tensors c0 [m], c1 []
and scalar k are cells of a factory function, G0 [m] and g are globals of the
program's own namespace, s and o (an object holding tensors o.w [m], o.v [])
are arguments: f(x, y), f(x, y, s) or f(x, y, o).

The tree language is fuzz_programs' plus:

    ["var", "G0" | "o.w" | "o.v"]       a global tensor, an argument object's attributes
    ["sop", op, slot, e]                 e <op> scalar, op add sub mul div, slot k g s;
                                         the dtype follows hop's (torch's) promotion
                                         of a Python bool/int/float, so it can change
                                         from call to call
    ["bslice", "head" | "tail", k, e]    e[:k] or e[-k:] (rows), then amax over rows
    ["reinvoke", "scalar" | "tensor", op, e, a, b]
                                         one nested_compile_region body closing over
                                         w, called with w = a and then w = b (tensor:
                                         w = c0, then c1); the two results combined

Actions in a step: tensors ["mutate", seed] (write new values into the array
the tensor views), ["rebind", seed] (bind the name to a new tensor); scalars
["set", value] ("nan" stands for float('nan')); argobj ["new", seed] (a new
argument object), ["attr", name, seed] (rebind one attribute), ["mutate", name,
seed] (write into its array); branch {"n": rows} (x has that many rows at this
call).  Each call is made once more with nothing changed: hop.compile must not
recompile for it.  A "plain" spec (one call, no steps) is what a thread runs.

check_spec(spec) runs a spec; specs(category) generates them; save_regression
writes one as a pytest file.  scripts/fuzz.py --category ... runs campaigns.
"""

import dataclasses
import functools
import json
import math
import sys
import threading
import weakref
from collections import namedtuple

import numpy as np
from hypothesis import strategies as st

import fuzz_programs as fp
import hop

CATEGORIES = {
    "mutate": "closures and globals over concrete tensors written in place between calls "
              "(no GuardError allowed: nothing a guard sees changed)",
    "rebind": "closed-over and global tensors and scalars rebound between calls, and one "
              "nested_compile_region body called with its closure rebound in between "
              "(GraphModule: new answer or GuardError)",
    "argobj": "namedtuple, dataclass, plain-object and dict arguments holding tensors, "
              "attributes rebound or written between calls (GraphModule: new answer or "
              "GuardError)",
    "scalars": "Python int, float, bool and NaN scalars as arguments, closure cells and "
               "globals, changing type and value between calls (dtypes as eager; "
               "GraphModule: new answer or GuardError; an unchanged call never recompiles)",
    "branch": "cond branches that slice rows (x[:k], x[-k:]) under dynamic rows, called with "
              "row counts where the other branch or a smaller slice applies (GuardError only "
              "when a size decision on the path taken changed)",
    "threads": "several threads at once computing eagerly, tracing and compiling generated "
               "programs, each compared with NumPy",
}

SCALARS = {"int": (2, 3, -1), "float": (2.0, 0.5, -1.5, "nan"), "bool": (True,)}
SOPS = ("add", "sub", "mul", "div")


def scalar(v):
    return float("nan") if v == "nan" else v


def _kind_of(v):
    return "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "float"


def promote(dt, v, op):
    """The dtype hop gives `tensor(dt) <op> v` for a Python scalar v: the
    tensor's, unless v is of a higher kind (bool < int < float): then int64 for
    an int, float32 for a float; true division of ints and bools gives float32."""
    k = fp.kind(dt)
    if op == "div":
        return dt if k == "float" else "float32"
    rank = {"bool": 0, "int": 1, "float": 2}
    sk = _kind_of(v)
    if rank[sk] <= rank[k]:
        return dt
    return "int64" if sk == "int" else "float32"


# ------------------------------------------------------------- strategies

def _names(cat, ctx):
    first = "x" if ctx == "full" else "row"
    if cat == "argobj":
        return (first, "y", "o.w", "o.v", "c0")
    if cat == "branch":
        return (first, "y", "c0", "c1")
    return (first, "y", "c0", "c1", "G0")


@functools.lru_cache(maxsize=None)
def leaves(cat, ctx, dt, main):
    var = st.sampled_from(_names(cat, ctx)).map(lambda v: ["var", v])
    if dt == main:
        return var
    if dt == "bool":
        return var.map(lambda v: ["gt0", v])
    if main == "bool" or fp.kind(main) == fp.kind(dt) or fp.kind(dt) == "float":
        return var.map(lambda v: ["cast", dt, v])
    return var.map(lambda v: ["cast", dt, ["gt0", v]])


@functools.lru_cache(maxsize=None)
def exprs(cat, ctx, dt, main, depth=0):
    """fuzz_programs.exprs over the category's names, with bslice nodes in
    cond branches (branch) and reinvoke nodes (rebind)."""
    leaf = leaves(cat, ctx, dt, main)
    if depth >= fp.MAX_DEPTH:
        return leaf

    def sub(d=dt, c=ctx):
        return st.deferred(lambda: exprs(cat, c, d, main, depth + 1))

    k = fp.kind(dt)
    options = [
        leaf,
        st.tuples(st.just("unary"), st.sampled_from(fp.UNARY[k]), st.just(dt), sub()).map(list),
        st.tuples(st.just("binary"), st.sampled_from(fp.BINARY[k]), st.just(dt), sub(),
                  sub()).map(list),
        st.tuples(st.just("wrap"), sub()).map(list),
        st.tuples(st.just("invoke"), sub()).map(list),
        st.tuples(st.just("cond"), preds(cat, ctx, main, depth + 1), sub(), sub()).map(list),
    ]
    if fp.SBIN[k]:
        options.append(st.tuples(st.just("sbin"), st.sampled_from(fp.SBIN[k]), st.just(dt), sub(),
                                 fp.sizes(ctx)).map(list))
    sources = fp._cast_sources(dt, main)
    if sources:
        options.append(st.sampled_from(sources).flatmap(
            lambda s: st.tuples(st.just("cast"), st.just(dt), sub(s)).map(list)))
    if dt == "bool" and main != "bool":
        src = main if fp.kind(main) == "int" else None
        options.append((sub(src) if src else leaves(cat, ctx, main, main))
                       .map(lambda e: ["gt0", e]))
    if ctx == "full":
        options.append(st.tuples(st.just("map"), sub(dt, "row"), sub(main), st.booleans())
                       .map(list))
    if cat == "mutate" and dt == main:
        # Ops between concrete tensors only: what a trace must not fold.
        conc = st.sampled_from(["c0", "c1", "G0"]).map(lambda v: ["var", v])
        options.append(st.one_of(
            st.tuples(st.just("unary"), st.sampled_from(fp.UNARY[k]), st.just(dt), conc)
            .map(list),
            st.tuples(st.just("binary"), st.sampled_from(fp.BINARY[k]), st.just(dt), conc,
                      conc).map(list)))
    if cat == "branch":
        options.append(st.tuples(st.just("bslice"), st.sampled_from(["head", "tail"]),
                                 st.integers(1, 6), sub()).map(list))
        # Weighted: a cond whose branch slices, the thing under test.
        options.append(st.tuples(st.just("cond"), preds(cat, ctx, main, depth + 1),
                                 st.tuples(st.just("bslice"), st.sampled_from(["head", "tail"]),
                                           st.integers(1, 6), sub()).map(list),
                                 sub()).map(list))
    return st.one_of(options)


@functools.lru_cache(maxsize=None)
def reinvokes(main):
    """A nested_compile_region body called twice with its closure rebound in
    between: at the root only, since rebinding a nonlocal inside a HOP body is
    a side effect hop refuses by design (DESIGN.md, Errors)."""
    k = fp.kind(main)
    e = exprs("rebind", "full", main, main, 1)
    options = [st.tuples(st.just("reinvoke"), st.just("tensor"), st.sampled_from(fp.BINARY[k]),
                         e, st.just("c0"), st.just("c1")).map(list)]
    if k != "bool":
        options.append(st.tuples(st.just("reinvoke"), st.just("scalar"),
                                 st.sampled_from(fp.SBIN[k]), e, st.sampled_from([2, 3, -1]),
                                 st.sampled_from([2, 3, 5])).map(list))
    one = st.one_of(options)
    return st.one_of(one, st.tuples(st.just("binary"), st.sampled_from(fp.BINARY[k]),
                                    st.just(main), one, e).map(list))


@functools.lru_cache(maxsize=None)
def preds(cat, ctx, main, depth):
    return st.one_of(
        st.tuples(st.just("pexpr"), exprs(cat, ctx, "bool", main, depth), st.integers(0, 3))
        .map(list),
        st.tuples(st.just("psize"), fp.sizes(ctx), st.integers(1, 5)).map(list),
    )


@functools.lru_cache(maxsize=None)
def slayer(cat, ctx, main, slots, depth=0):
    """Trees whose dtype depends on the scalars in slots: sop nodes over
    fuzz_programs-typed trees, under wrap, invoke, cond and map."""
    base = exprs(cat, ctx, main, main, 2)
    sop = st.tuples(st.just("sop"), st.sampled_from(SOPS), st.sampled_from(slots),
                    st.deferred(lambda: slayer(cat, ctx, main, slots, depth + 1))
                    if depth < 2 else base).map(list)
    if depth >= 2:
        return sop
    inner = st.deferred(lambda: slayer(cat, ctx, main, slots, depth + 1))
    options = [sop, st.tuples(st.just("wrap"), inner).map(list),
               st.tuples(st.just("invoke"), inner).map(list),
               # Both branches apply the same scalar with ops of one promotion.
               st.tuples(st.sampled_from(["add", "mul"]), st.sampled_from(["add", "mul"]),
                         st.sampled_from(slots), base, base,
                         preds(cat, ctx, main, 2)).map(
                   lambda a: ["cond", a[5], ["sop", a[0], a[2], a[3]], ["sop", a[1], a[2], a[4]]])]
    if ctx == "full":
        options.append(st.tuples(st.just("map"), slayer(cat, "row", main, slots, depth + 1),
                                 exprs(cat, "full", main, main, 2), st.booleans()).map(list))
    return st.one_of(options)


def _tensor_action(actions):
    return st.tuples(st.sampled_from(actions), st.integers(0, 2**31)).map(list)


def _scalar_values(kinds):
    return st.sampled_from([v for k in kinds for v in SCALARS[k]])


@st.composite
def specs(draw, category, dtypes=fp.DTYPES):
    """Specs of one category (a key of CATEGORIES, or "plain": one call, no
    changes, as in fuzz_programs but with closures and globals as here)."""
    if category == "threads":
        n = draw(st.integers(2, 4))
        return {"category": "threads", "seed": draw(st.integers(0, 2**31)),
                "reps": draw(st.integers(2, 20)),
                "threads": [{"mode": draw(st.sampled_from(["eager", "trace", "compile"])),
                             "spec": draw(specs("plain", dtypes))} for _ in range(n)]}
    main = draw(st.sampled_from(dtypes))
    spec = {"category": category, "dtype": main,
            "shape": [draw(st.integers(2, 6)), draw(st.integers(1, 5))],
            "dynamic": draw(fp._dynamic()) if category not in ("argobj", "scalars") else
            draw(st.booleans()),
            "seed": draw(st.integers(0, 2**32 - 1))}
    ncalls = draw(st.integers(1, 4))
    if category in ("plain", "mutate", "branch"):
        cat = "mutate" if category == "plain" else category
        spec["tree"] = draw(exprs(cat, "full", main, main))
    if category == "plain":
        spec["steps"] = []
    elif category == "mutate":
        spec["steps"] = draw(st.lists(st.dictionaries(
            st.sampled_from(["c0", "c1", "G0"]), _tensor_action(["mutate"]), min_size=1),
            min_size=ncalls, max_size=ncalls))
    elif category == "rebind":
        slots = ("k", "g")
        spec["init"] = {s: draw(_scalar_values(["int", "float"])) for s in slots}
        spec["init"] = {s: (v if v != "nan" else 0.5) for s, v in spec["init"].items()}
        spec["tree"] = draw(st.one_of(exprs("rebind", "full", main, main),
                                      slayer("rebind", "full", main, slots), reinvokes(main)))
        steps = []
        for _ in range(ncalls):
            step = draw(st.dictionaries(st.sampled_from(["c0", "c1", "G0"]),
                                        _tensor_action(["mutate", "rebind"])))
            for s in slots:  # same type, another value
                if draw(st.booleans()):
                    pool = SCALARS[_kind_of(spec["init"][s])]
                    step[s] = ["set", draw(st.sampled_from([v for v in pool if v != "nan"]))]
            steps.append(step)
        spec["steps"] = steps
    elif category == "scalars":
        slots = ("k", "g", "s")
        kinds = ["int", "float", "bool"]
        spec["init"] = {s: draw(_scalar_values(kinds)) for s in slots}
        spec["tree"] = draw(slayer("scalars", "full", main, slots))
        spec["steps"] = draw(st.lists(st.dictionaries(
            st.sampled_from(slots), _scalar_values(kinds).map(lambda v: ["set", v]),
            min_size=1), min_size=ncalls, max_size=ncalls))
    elif category == "argobj":
        spec["holder"] = draw(st.sampled_from(["namedtuple", "dataclass", "object", "dict"]))
        spec["tree"] = draw(exprs("argobj", "full", main, main))
        action = st.one_of(
            st.tuples(st.just("new"), st.integers(0, 2**31)).map(list),
            st.tuples(st.just("attr"), st.sampled_from(["w", "v"]), st.integers(0, 2**31))
            .map(list),
            st.tuples(st.just("mutate"), st.sampled_from(["w", "v"]), st.integers(0, 2**31))
            .map(list))
        spec["steps"] = draw(st.lists(st.fixed_dictionaries({"o": action}), min_size=ncalls,
                                      max_size=ncalls))
    elif category == "branch":
        spec["dynamic"] = [[True, False], [False]]
        spec["steps"] = draw(st.lists(st.fixed_dictionaries({"n": st.integers(2, 8)}),
                                      min_size=ncalls, max_size=ncalls))
    else:
        raise ValueError(f"unknown category {category!r}; choose from {sorted(CATEGORIES)}")
    return spec


# ------------------------------------------------------------- source

class _Gen:
    """Python source of a spec's program."""

    def __init__(self, spec):
        self.spec = spec
        self.cat = spec["category"]
        self.defs = []  # factory-level definitions
        self.bodies = {}
        self.count = 0

    def fresh(self):
        self.count += 1
        return self.count - 1

    def args(self):
        return {"scalars": ["x", "y", "s"], "argobj": ["x", "y", "o"]}.get(self.cat, ["x", "y"])

    def locals_used(self, t, out):
        """The local names (arguments, sizes, row) a subtree reads; x always,
        since cond and map expand to its shape."""
        out.add("x")
        if isinstance(t, list) and t[0] == "map":
            inner = self.locals_used(t[1], set()) - {"row", "r", "y"}
            out |= inner | {"y"} | self.locals_used(t[2], set())
            return out
        if isinstance(t, list):
            if t[0] == "var" and t[1] not in ("c0", "c1", "G0"):  # those are read by closure
                out.add(t[1].split(".")[0])
            elif t[0] == "sbin":
                out.add(t[4])
            elif t[0] == "psize":
                out.add(t[1])
            elif t[0] == "sop" and t[2] == "s":
                out.add("s")
            for c in t[1:]:
                self.locals_used(c, out)
        return out

    def env(self, names):
        return "{" + ", ".join(f"{n!r}: {n}" for n in sorted(names)) + "}"

    def expr(self, t, ctx):
        op = t[0]
        base = "row" if ctx == "row" else "x"
        if op == "var":
            if t[1].startswith("o.") and self.spec.get("holder") == "dict":
                return f"o[{t[1][2:]!r}]"
            return t[1]
        if op == "unary":
            return f"_U[{t[1]!r}]({self.expr(t[3], ctx)})"
        if op == "binary":
            return f"_B[{t[1]!r}]({self.expr(t[3], ctx)}, {self.expr(t[4], ctx)})"
        if op == "sbin":
            return f"_S[{t[1]!r}]({self.expr(t[3], ctx)}, {t[4]})"
        if op == "cast":
            return f"({self.expr(t[2], ctx)}).to(hop.{t[1]})"
        if op == "gt0":
            return f"_gt0({self.expr(t[1], ctx)})"
        if op == "wrap":
            return f"hop.wrap(lambda: {self.expr(t[1], ctx)})"
        if op == "invoke":
            # One body per subtree and context: in a map body, cond and
            # bslice expand and cut to the row's shape, not x's.
            key = ctx + json.dumps(t[1])
            used = self.locals_used(t[1], set()) | ({"row"} if ctx == "row" else set())
            if key not in self.bodies:
                name = f"_inv{self.fresh()}"
                self.bodies[key] = name
                unpack = "".join(f"        {n} = env[{n!r}]\n" for n in sorted(used))
                self.defs.append(f"    @hop.nested_compile_region\n    def {name}(env):\n"
                                 f"{unpack}        return {self.expr(t[1], ctx)}\n")
            return f"{self.bodies[key]}({self.env(used)})"
        if op == "cond":
            return (f"hop.cond({self.pred(t[1], ctx)}, "
                    f"lambda: ({self.expr(t[2], ctx)}).expand({base}.shape), "
                    f"lambda: ({self.expr(t[3], ctx)}).expand({base}.shape))")
        if op == "map":
            params = "row, y" if t[3] else "row"
            extra = ", y" if t[3] else ""
            return (f"hop.map(lambda {params}: (lambda r: ({self.expr(t[1], 'row')})"
                    f".expand(row.shape))(row.shape[0]), ({self.expr(t[2], ctx)})"
                    f".expand(x.shape){extra})")
        if op == "sop":
            sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[t[1]]
            return f"(({self.expr(t[3], ctx)}) {sym} {t[2]})"
        if op == "bslice":
            cut = f"[:{t[2]}]" if t[1] == "head" else f"[-{t[2]}:]"
            return f"({self.expr(t[3], ctx)}).expand({base}.shape){cut}.amax(0, keepdim=True)"
        if op == "reinvoke":
            i = self.fresh()
            used = self.locals_used(t[3], set())
            unpack = "".join(f"            {n} = env[{n!r}]\n" for n in sorted(used))
            table = "_S" if t[1] == "scalar" else "_B"
            self.defs.append(
                f"    def _make{i}():\n        w = None\n\n"
                f"        @hop.nested_compile_region\n        def body(env):\n{unpack}"
                f"            return {table}[{t[2]!r}]({self.expr(t[3], ctx)}, w)\n\n"
                f"        def set_w(v):\n            nonlocal w\n            w = v\n"
                f"        return body, set_w\n    _rb{i}, _rs{i} = _make{i}()\n")
            a, b = (t[4], t[5]) if t[1] == "tensor" else (repr(t[4]), repr(t[5]))
            return f"_twice(_rb{i}, _rs{i}, {self.env(used)}, {a}, {b})"
        raise AssertionError(f"unknown node {op!r}")

    def pred(self, p, ctx):
        if p[0] == "psize":
            return f"{p[1]} > {p[2]}"
        return f"({self.expr(p[1], ctx)}).to(hop.int64).sum() > {p[2]}"

    def source(self):
        body = self.expr(self.spec["tree"], "full")
        return ("def _factory(c0, c1, k):\n" + "\n".join(self.defs) +
                f"\n    def f({', '.join(self.args())}):\n"
                f"        n, m = x.shape[0], x.shape[1]\n"
                f"        return ({body}).expand(x.shape)\n\n"
                f"    def _set(name, v):\n        nonlocal c0, c1, k\n"
                f"        if name == 'c0':\n            c0 = v\n"
                f"        elif name == 'c1':\n            c1 = v\n"
                f"        else:\n            k = v\n"
                f"    return f, _set\n")


def source(spec):
    """The program of spec as Python source (for reading a reproducer)."""
    return _Gen(spec).source()


def _gt0(v):
    return v if v.dtype == hop.bool else v > 0


def _twice(body, set_w, env, a, b):
    """Calls one nested_compile_region body with its closure bound to a,
    then to b (a user's loop over two weights), and combines the results."""
    set_w(a)
    r1 = body(env)
    set_w(b)
    r2 = body(env)
    return fp.HOP_BINARY["or" if r1.dtype == hop.bool else "add"](r1, r2)


Holder = namedtuple("Holder", ["w", "v"])


@dataclasses.dataclass
class DataHolder:
    w: object
    v: object


class PlainHolder:
    def __init__(self, w, v):
        self.w = w
        self.v = v


def _holder(kind, w, v):
    if kind == "namedtuple":
        return Holder(w, v)
    if kind == "dataclass":
        return DataHolder(w, v)
    if kind == "object":
        return PlainHolder(w, v)
    return {"w": w, "v": v}  # a pytree hop flattens: the control


def _held(v):
    """A reference to v that gives v while it lives: a weak one where Python
    allows (a checker that kept the world's replaced objects alive would
    change what hop's weak guards see), else v held (a namedtuple, a dict)."""
    try:
        return weakref.ref(v)
    except TypeError:
        return lambda: v


def _step_rng(*seed):
    """The values a step writes: a stream of its own, so that a step seed
    equal to the spec's seed still gives new values."""
    return np.random.default_rng(list(seed) + [0x5EED])


class World:
    """A spec's program and everything it reads: the NumPy arrays behind its
    concrete tensors, its cells, globals and argument values; `apply` changes
    them as a step says."""

    def __init__(self, spec):
        self.spec = spec
        self.dt = spec.get("dtype")
        n, self.m = spec["shape"]
        self.n = n
        rng = np.random.default_rng(spec["seed"])
        self.rng_seed = spec["seed"]
        dt, m = self.dt, self.m
        # np.array: a 0-d draw is a NumPy scalar, which cannot be written in place.
        self.arrays = {"c0": np.array(fp._array(rng, (m,), dt)),
                       "c1": np.array(fp._array(rng, (), dt)),
                       "G0": np.array(fp._array(rng, (m,), dt)),
                       "o.w": np.array(fp._array(rng, (m,), dt)),
                       "o.v": np.array(fp._array(rng, (), dt))}
        self.x = fp._array(rng, (n, m), dt)
        self.y = fp._array(rng, (m,), dt)
        self.tensors = {k: hop.asarray(a) for k, a in self.arrays.items()}
        init = spec.get("init", {})
        self.scalars = {s: scalar(init.get(s, 2)) for s in ("k", "g", "s")}
        self.ns = {"hop": hop, "_U": fp.HOP_UNARY, "_B": fp.HOP_BINARY, "_S": fp.HOP_SBIN,
                   "_gt0": _gt0, "_twice": _twice, "G0": self.tensors["G0"],
                   "g": self.scalars["g"]}
        exec(compile(source(spec), f"<fuzz_trust {spec['category']}>", "exec"), self.ns)
        self.f, self._set = self.ns["_factory"](self.tensors["c0"], self.tensors["c1"],
                                                self.scalars["k"])
        self.holder = spec.get("holder", "object")
        self.o = _holder(self.holder, self.tensors["o.w"], self.tensors["o.v"])

    def close(self):
        """Breaks the cycle between the program's namespace and its
        functions, so that its tensors die now, not in a late garbage
        collection (one at interpreter exit cannot free a NumPy view)."""
        self.ns.clear()

    def args(self):
        x, y = hop.asarray(self.x), hop.asarray(self.y)
        cat = self.spec["category"]
        if cat == "scalars":
            return (x, y, self.scalars["s"])
        if cat == "argobj":
            return (x, y, self.o)
        return (x, y)

    def _bind(self, slot, t):
        self.tensors[slot] = t
        if slot == "G0":
            self.ns["G0"] = t
        elif slot in ("c0", "c1"):
            self._set(slot, t)

    def apply(self, step, i):
        """Changes the world as step says, before call i (1, 2, ...)."""
        dt = self.dt
        for slot, act in sorted(step.items()):
            if slot == "n":
                self.n = act
                rng = _step_rng(self.rng_seed, i)
                self.x = fp._array(rng, (act, self.m), dt)
            elif slot in ("k", "g", "s"):
                v = scalar(act[1])
                self.scalars[slot] = v
                if slot == "g":
                    self.ns["g"] = v
                elif slot == "k":
                    self._set("k", v)
            elif slot == "o":
                self._apply_holder(act)
            else:
                rng = _step_rng(act[1])
                new = fp._array(rng, self.arrays[slot].shape, dt)
                if act[0] == "mutate":
                    self.arrays[slot][...] = new
                else:
                    self.arrays[slot] = new = np.array(new)
                    self._bind(slot, hop.asarray(new))

    def _apply_holder(self, act):
        dt = self.dt
        if act[0] == "new":
            rng = _step_rng(act[1])
            for a in ("o.w", "o.v"):
                self.arrays[a] = np.array(fp._array(rng, self.arrays[a].shape, dt))
                self.tensors[a] = hop.asarray(self.arrays[a])
            self.o = _holder(self.holder, self.tensors["o.w"], self.tensors["o.v"])
            return
        slot = "o." + act[1]
        new = fp._array(_step_rng(act[2]), self.arrays[slot].shape, dt)
        if act[0] == "mutate":
            self.arrays[slot][...] = new
            return
        self.arrays[slot] = new = np.array(new)
        self.tensors[slot] = t = hop.asarray(new)
        if self.holder == "namedtuple":
            self.o = self.o._replace(**{act[1]: t})
        elif self.holder == "dict":
            self.o[act[1]] = t
        else:
            setattr(self.o, act[1], t)

    def identity(self):
        """What a guard may look at: which objects the names are bound to
        (_held: weakly where Python allows, as hop's identity guards hold
        them), and the scalars' types and values (NaN equal to itself)."""
        sc = {k: (type(v).__name__, "nan" if isinstance(v, float) and math.isnan(v) else v)
              for k, v in self.scalars.items()}
        return ({k: _held(t) for k, t in self.tensors.items()}, sc, _held(self.o))

    def rebound_since(self, then):
        """Whether a name, object or scalar an identity() `then` saw was
        rebound since.  By the objects, not their id()s: an object freed
        since may have left its address to the one bound now (an
        ['attr', 'w', ...] step, the trace's o.w freed, its new tensor at
        the same address), and an id comparison took that for no change and
        refused hop's GuardError, which rightly sees another object."""
        tensors, scalars, o = then
        now = self.identity()
        return scalars != now[1] or o() is not self.o or \
            any(ref() is not self.tensors[k] for k, ref in tensors.items())

    def sizes(self):
        return {"n": self.n, "m": self.m, "r": self.m}

    def reference(self):
        """(value, error bound, size decisions taken) in NumPy."""
        env = {k: fp.Ref(a) for k, a in self.arrays.items()}
        env.update(x=fp.Ref(self.x), y=fp.Ref(self.y), n=self.n, m=self.m)
        env.update(self.scalars)
        decisions = []
        r = run_ref(self.spec["tree"], env, decisions)
        shape = self.x.shape
        return (np.broadcast_to(r.v, shape), np.broadcast_to(np.asarray(r.e, np.float64), shape),
                decisions)


# ------------------------------------------------------------- NumPy

def _sop_ref(op, a, v, dt):
    """a <op> v for a Ref a of dtype dt and a Python scalar v."""
    res = promote(dt, v, op)
    if res in fp.EPS:
        x, s = a.v.astype(np.float64), float(v)
    else:
        x, s = a.v.astype(res), np.asarray(v).astype(res)
    with np.errstate(all="ignore"):
        if op == "add":
            out, err = x + s, a.e
        elif op == "sub":
            out, err = x - s, a.e
        elif op == "mul":
            out, err = x * s, a.e * abs(s)
        else:
            out, err = x / s, a.e / abs(s)
    out = np.asarray(out).astype(res)
    return fp.Ref(out, err + fp._ulp(out, res))


def decide(d, sizes):
    """The value of a size decision (size name, ">" or ">=", threshold)."""
    size, op, t = d
    return sizes[size] > t if op == ">" else sizes[size] >= t


def run_ref(t, env, decisions):
    """fuzz_programs.run_np over this module's tree language; appends every
    size decision the path it takes depends on to decisions: (size, op, t)
    for a psize cond and for the clamping of a slice (x[:k] has k rows if
    n >= k)."""
    op = t[0]
    if op == "var":
        return env[t[1]]
    if op == "unary":
        return fp._np_unary(t[1], run_ref(t[3], env, decisions), t[2])
    if op == "binary":
        return fp._np_binary(t[1], run_ref(t[3], env, decisions), run_ref(t[4], env, decisions),
                             t[2])
    if op == "sbin":
        return _sop_ref(t[1], run_ref(t[3], env, decisions), env[t[4]], t[2])
    if op == "cast":
        a, dt = run_ref(t[2], env, decisions), t[1]
        out = fp._cast_np(a.v, dt)
        return fp.Ref(out, (a.e + fp._ulp(out, dt)) if dt in fp.EPS else 0.0)
    if op == "gt0":
        a = run_ref(t[1], env, decisions)
        return fp.Ref(a.v if a.v.dtype == np.bool_ else a.v > 0)
    if op in ("wrap", "invoke"):
        return run_ref(t[1], env, decisions)
    if op == "cond":
        base = env["row"] if "row" in env else env["x"]
        p = t[1]
        if p[0] == "psize":
            take = env[p[1]] > p[2]
            decisions.append((p[1], ">", p[2]))
        else:
            take = int(run_ref(p[1], env, decisions).v.astype(np.int64).sum()) > p[2]
        r = run_ref(t[2] if take else t[3], env, decisions)
        return fp.Ref(np.broadcast_to(r.v, base.v.shape),
                      np.broadcast_to(np.asarray(r.e, np.float64), base.v.shape))
    if op == "map":
        xs = run_ref(t[2], env, decisions)
        shape = env["x"].v.shape
        xv, xe = np.broadcast_to(xs.v, shape), np.broadcast_to(np.asarray(xs.e, np.float64),
                                                               shape)
        rows = []
        for i in range(shape[0]):
            row = fp.Ref(xv[i], xe[i])
            inner = dict(env, row=row, r=shape[1], _rows="r")  # what slices cut here
            # Every row takes the same size decisions; record one row's.
            r = run_ref(t[1], inner, decisions if i == 0 else [])
            rows.append(fp.Ref(np.broadcast_to(r.v, row.v.shape),
                               np.broadcast_to(np.asarray(r.e, np.float64), row.v.shape)))
        if not rows:
            raise AssertionError("map over zero rows")
        return fp.Ref(np.stack([r.v for r in rows]), np.stack([r.e for r in rows]))
    if op == "sop":
        a = run_ref(t[3], env, decisions)
        return _sop_ref(t[1], a, env[t[2]], a.v.dtype.name)
    if op == "bslice":
        base = env["row"] if "row" in env else env["x"]
        a = run_ref(t[3], env, decisions)
        v = np.broadcast_to(a.v, base.v.shape)
        e = np.broadcast_to(np.asarray(a.e, np.float64), base.v.shape)
        cut = slice(None, t[2]) if t[1] == "head" else slice(-t[2], None)
        decisions.append((env.get("_rows", "n"), ">=", t[2]))
        return fp.Ref(v[cut].max(axis=0, keepdims=True), e[cut].max(axis=0, keepdims=True))
    if op == "reinvoke":
        a = run_ref(t[3], env, decisions)
        dt = a.v.dtype.name
        if t[1] == "scalar":
            r1, r2 = _sop_ref(t[2], a, t[4], dt), _sop_ref(t[2], a, t[5], dt)
        else:
            r1 = fp._np_binary(t[2], a, env[t[4]], dt)
            r2 = fp._np_binary(t[2], a, env[t[5]], dt)
        dt = r1.v.dtype.name
        return fp._np_binary("or" if dt == "bool" else "add", r1, r2, dt)
    raise AssertionError(f"unknown node {op!r}")


# ------------------------------------------------------------- checking

def assert_same(got, want, bound, what):
    """fuzz_programs.assert_close with want's dtype, NaN equal to NaN."""
    dt = want.dtype.name
    got = np.asarray(got)
    if dt in fp.EPS:
        nan = np.isnan(want)
        if nan.any():
            g = np.asarray(got)
            assert g.shape == want.shape and np.array_equal(np.isnan(g), nan), \
                f"{what}: NaN at other places\n got={g!r}\nwant={want!r}"
            want = np.where(nan, 0, want).astype(dt)
            got = np.where(nan, 0, g).astype(g.dtype)
            bound = np.where(nan, 0, bound)
    fp.assert_close(got, want, bound, dt, what)


class _Raised:
    def __init__(self, exc):
        self.exc = exc


def _attempt(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # compared with what eager did
        return _Raised(e)


def _value(r):
    return r.numpy() if isinstance(r, hop.Tensor) else r


def _agree(got, eager, want, bound, what, guard_ok, why=""):
    """got (a result or _Raised) against eager's: the same value within the
    bound, or the same exception type, or (if guard_ok) hop.GuardError."""
    if isinstance(got, _Raised):
        if isinstance(got.exc, hop.GuardError) and guard_ok:
            return "guard"
        if isinstance(eager, _Raised):
            if type(got.exc) is type(eager.exc):
                return "raised"
            raise AssertionError(f"{what}: raised {type(got.exc).__name__}: {got.exc} where "
                                 f"eager raised {type(eager.exc).__name__}: {eager.exc}") \
                from got.exc
        raise AssertionError(f"{what}: raised {type(got.exc).__name__}: {got.exc}{why} where "
                             f"eager returned a value") from got.exc
    if isinstance(eager, _Raised):
        raise AssertionError(f"{what}: returned a value where eager raised "
                             f"{type(eager.exc).__name__}: {eager.exc}")
    assert_same(_value(got), want, bound, what)
    return "value"


def check_spec(spec):
    """Runs spec's calls eagerly, through one GraphModule traced at the first
    call, through one hop.compile function and with NumPy, changing the
    world between calls; raises AssertionError on any disagreement (all of
    one call's, the GraphModule's first)."""
    if spec["category"] == "threads":
        return check_threads(spec)
    w = World(spec)
    try:
        _check_calls(spec, w)
    finally:
        w.close()


def _check_calls(spec, w):
    cat = spec["category"]
    gm = compiled = None
    trace_id = trace_sizes = None
    steps = [{}] + list(spec.get("steps", []))
    for i, step in enumerate(steps):
        if i:
            w.apply(step, i)
        args = w.args()
        state = f"call {i}" + (f" after {step}" if step else "")
        eager = _attempt(w.f, *args)
        if isinstance(eager, _Raised) and not isinstance(eager.exc, hop.Error):
            # Only hop refuses programs (a bool minus a bool); anything else
            # is a program the generator got wrong, not an agreement.
            raise AssertionError(f"{state}: eager raised {type(eager.exc).__name__}: "
                                 f"{eager.exc}: a bug of the generated program\n"
                                 f"{source(spec)}") from eager.exc
        want = bound = None
        decisions = []
        if not isinstance(eager, _Raised):
            want, bound, decisions = w.reference()
            assert_same(_value(eager), want, bound, f"{state}: eager vs NumPy")
        if i == 0:
            gm = _attempt(hop.trace, w.f, *args, dynamic=spec["dynamic"])
            trace_id, trace_sizes = w.identity(), w.sizes()
            compiled = hop.compile(w.f)
            if isinstance(gm, _Raised):
                _agree(gm, eager, want, bound, f"{state}: hop.trace", False)
                gm = None
        errors = []

        def agree(*a):
            try:
                _agree(*a)
            except AssertionError as e:
                errors.append(e)
                return False
            return True
        if gm is not None:
            # Guards may only reject a call whose own path decided a size
            # differently from the trace (hop traces both branches of a cond).
            changed = [d for d in decisions if decide(d, trace_sizes) != decide(d, w.sizes())]
            guard_ok = bool(changed) if cat == "branch" else \
                cat not in ("mutate", "plain") and w.rebound_since(trace_id)
            why = (f" (the sizes at the trace {trace_sizes}, now {w.sizes()}; the path taken "
                   f"decides {sorted(set(decisions))}, the same way at both)"
                   if cat == "branch" else "")
            agree(_attempt(gm, *args), eager, want, bound, f"{state}: the GraphModule", guard_ok,
                  why)
        if agree(_attempt(compiled, *args), eager, want, bound, f"{state}: hop.compile", False):
            before = compiled.recompiles
            if agree(_attempt(compiled, *args), eager, want, bound,
                     f"{state}: hop.compile called again", False) and \
                    compiled.recompiles != before:
                errors.append(AssertionError(
                    f"{state}: hop.compile recompiled on a repeated call with nothing "
                    f"changed:\n{compiled.explain()}"))
        if errors:
            raise AssertionError("\n".join(str(e) for e in errors)) from errors[0]
        if isinstance(eager, _Raised) and i == 0:
            return


def _thread_job(sub, mode, reps, barrier, errors, idx):
    w = None
    try:
        w = World(sub)
        barrier.wait()
        args = w.args()
        want, bound, _ = w.reference()
        cf = hop.compile(w.f) if mode == "compile" else None
        for r in range(reps):
            what = f"thread {idx} ({mode}) rep {r}"
            if mode == "eager":
                got = w.f(*args)
            elif mode == "trace":
                got = hop.trace(w.f, *args, dynamic=sub["dynamic"])(*args)
            else:
                got = cf(*args)
            assert_same(_value(got), want, bound, what)
    except BaseException as e:  # reported by the main thread
        errors.append((idx, mode, e))
        try:
            barrier.abort()
        except Exception:
            pass
    finally:
        if w is not None:
            w.close()


def check_threads(spec):
    """Each thread runs its own program (eager, traced or compiled) reps
    times, all starting together, with a tiny switch interval so that the
    interpreter switches threads inside tracing and HOP calls."""
    jobs = spec["threads"]
    # Eager must work single-threaded first, or the spec is not a test of threads.
    for j in jobs:
        w = World(j["spec"])
        try:
            want, bound, _ = w.reference()
            assert_same(_value(w.f(*w.args())), want, bound, "single-threaded eager vs NumPy")
        finally:
            w.close()
    barrier = threading.Barrier(len(jobs))
    errors = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=_thread_job, args=(j["spec"], j["mode"], spec["reps"],
                                                              barrier, errors, i))
                   for i, j in enumerate(jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
            if t.is_alive():
                raise AssertionError("a thread did not finish within 120 s (deadlock?)")
    finally:
        sys.setswitchinterval(old)
    real = [e for e in errors if not isinstance(e[2], threading.BrokenBarrierError)]
    if real:
        idx, mode, e = real[0]
        raise AssertionError(f"thread {idx} ({mode}) of {len(jobs)}: {type(e).__name__}: "
                             f"{e}") from e


# ------------------------------------------------------------- regressions

REGRESSION_TEMPLATE = '''"""Regression test written by scripts/fuzz.py (category {category}).

{summary}

Found with seed {seed}; hop {version}.  The program is a spec of
tests/python/fuzz_trust.py (fuzz_trust.source(SPEC) prints it), checked by
fuzz_trust.check_spec: every call equals eager on the current values.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_trust import check_spec  # noqa: E402

SPEC = {spec}


def test_{name}():
    check_spec(SPEC)
'''


def spec_name(spec):
    import hashlib
    digest = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    return f"fuzz_{spec['category']}_{spec.get('dtype', 'mixed')}_{digest}"


def save_regression(spec, directory, summary="", seed=None):
    """Writes spec as a runnable pytest file in directory; returns its path."""
    return fp.write_regression(REGRESSION_TEMPLATE, spec, spec_name(spec), directory, summary,
                               seed, category=spec["category"])
