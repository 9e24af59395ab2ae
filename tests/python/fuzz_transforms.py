"""Random small programs over every HOP, for checking the transformations
(issue #26): jvp, vjp, grad, vmap and their compositions against central
finite differences in float64 and against per-example loops.

Shared by tests/python/test_transform_campaign.py (a few hundred examples in
CI), scripts/fuzz.py --category transforms (long campaigns) and the
regression files that campaign writes into tests/python/regressions/.

A *spec* is plain data (JSON-able), so a failing program can be saved and
replayed:

    {"shape": [2, 3],        # x: a float64 argument of this shape (sizes 0..3)
     "batch": 3,             # examples of the vmap checks
     "seed": 5,              # input values
     "zeros": True,          # some entries of x exactly 0 (where sqrt's slope is inf)
     "mode": "plain",        # or "dynamic": every transformed call runs under
                             # hop.compile(dynamic=True, fullgraph=True)
     "batched": [True, False],  # vmap: the flag / the index argument per example
     "checks": ["jvp", "grad_vmap"],
     "prog": [layer, ...]}

The program is a function F(x, flag, k) of a float tensor x and two int64
0-d tensors (flag picks cond branches, k switch branches and dynamic
indexes); each layer maps the current value h to the next:

    ["op", name]                 sin tanh mulw (h * w, w a closed-over tensor)
                                 sq (h * h / 2) zeros (h + hop.zeros(h.shape):
                                 zero sizes in a trace) outer (h + the sum of the
                                 enclosing body's input / 10: a closure over a
                                 traced value of an outer body) idx (h * (1 + i/10),
                                 i the index of the enclosing fori_loop)
    ["guard"]                    cond((h > 0).all(), sqrt(h), h / 2): the
                                 double-where pattern (JAX's testCondGradVmapNan)
    ["cond", pred, p_t, p_f]     pred "flag" (flag > 0) or "data" (h.sum() > 0)
    ["switch", p0, p1, p2]       index k (out of range too: switch clamps)
    ["map", p] ["wrap", p] ["invoke", p]
    ["while", order, trips, p]   carries in `order`: a string over i (an int
                                 counter, Python 0 at first), h, b (a bool,
                                 toggled) and g (a second float); the
                                 condition is i < trips
    ["fori", order, trips, p, dyn]  fori_loop(0, trips); dyn: the body also
                                 indexes a closed-over table with the int carry
                                 (table[i], table[i:i + 2], h[i] = ...)
    ["scan", order, reverse, T, p]  over the rows of a closed-over [T, ...]
    ["ascan", op]                associative_scan along dim 0: add mul max
    ["dyn", what]                indexing with the argument k: table[k],
                                 table[k:k + 2], h[k] = ... (clamped, batched
                                 under vmap when k is)
    ["pyconst", what]            Python values where tensors were needed:
                                 "cond" branches returning different floats,
                                 "carry" a fori body returning a Python int for
                                 its int carry, "false" a while condition that
                                 is the Python bool False, "item" a while loop
                                 whose int carry starts at a SymInt (an item
                                 read at run time, plus 1) compared with an int
    ["repeat", n, p] ["fold", T, p]  the C HOPs of examples/ (hop.load_library),
                                 whose rules are the loop kit's (vjp and vmap;
                                 fold's jvp too): checked like the built-ins,
                                 but a jvp through repeat (no jvp rule) must
                                 raise UnsupportedError naming it

The checks (CHECKS) compare the transformed program with finite differences
of the eager program (jvp, vjp, grad: first directional derivatives; jvp_jvp,
grad_grad: second ones) where the program is smooth at x (two step sizes
agree), and with a loop over the examples (vmap and the compositions with it)
always.  A check fails on a wrong value, a NaN the reference does not have,
or an exception the eager program does not raise.
"""

import json
import os
import re
import warnings

import numpy as np
from hypothesis import strategies as st

import hop

warnings.filterwarnings("ignore", r"hop: .*<locals>", RuntimeWarning)

CHECKS = ("jvp", "vjp", "grad", "jvp_jvp", "grad_grad", "vmap", "vmap_grad", "grad_vmap",
          "jvp_vmap")
HOPS = ("guard", "cond", "switch", "map", "wrap", "invoke", "while", "fori", "scan", "ascan",
        "repeat", "fold")
OPS = ("sin", "tanh", "mulw", "sq", "zeros", "outer", "idx")
# Features a run may leave out: what today's code does not have yet (the
# record of which bugs the campaign finds on an older hop is taken without
# them), and the C HOPs (only with the example libraries of a build tree).
FEATURES = frozenset({"dynidx", "pyconst", "c_hops"})
MAX_DEPTH = 2
C_HOPS = ("repeat", "fold")
F64 = hop.float64


# ------------------------------------------------------------- the C HOPs

_loaded = {}


def load_c_hops():
    """Loads the example libraries (repeat, fold) of the build tree next to
    HOP_PYTHONPATH; True when they are registered."""
    if "ok" in _loaded:
        return _loaded["ok"]
    ok = all(name in hop._C.list_hops() for name in C_HOPS)
    path = os.environ.get("HOP_PYTHONPATH")
    if not ok and path:
        d = os.path.join(os.path.dirname(os.path.abspath(path)), "examples")
        try:
            for name in C_HOPS:
                hop.load_library(os.path.join(d, f"libhop_{name}.so"))
            ok = True
        except hop.Error:
            ok = False
    _loaded["ok"] = ok
    return ok


# ------------------------------------------------------------- generation

ORDERS = {"while": ("ih", "hi", "ihb", "bhi", "hbi", "igh", "hgi", "gih"),
          "fori": ("h", "ih", "hi", "ibh", "hbi", "ghi", "igh"),
          "scan": ("h", "ih", "hi", "bh", "hib", "gh")}


def _layer(draw, shape, depth, ctx, feats):
    """One layer for a value of `shape` (a list of ints) at nesting depth;
    ctx: what the enclosing bodies give ("i": a fori index, "ic": an int
    carry, "outer": an enclosing body's input)."""
    kinds = ["op"] * 3
    if depth < MAX_DEPTH:
        kinds += ["guard", "cond", "switch", "wrap", "invoke", "while", "fori", "scan"]
        if shape and shape[0] > 0:
            kinds += ["map", "map"]  # (rank and size allow it less often)
        if shape:
            kinds += ["ascan"]
        if "c_hops" in feats:
            kinds += ["repeat", "fold"]
    if "dynidx" in feats:
        kinds += ["dyn"]
    if "pyconst" in feats and depth < MAX_DEPTH:
        kinds += ["pyconst"]
    kind = draw(st.sampled_from(kinds))
    sub = lambda s=shape, c=ctx: _prog(draw, s, depth + 1, c, feats)  # noqa: E731
    if kind == "op":
        ops = ["sin", "tanh", "mulw", "sq", "zeros"]
        if "outer" in ctx:
            ops.append("outer")
        if "i" in ctx:
            ops.append("idx")
        return ["op", draw(st.sampled_from(ops))]
    if kind == "guard":
        return ["guard"]
    if kind == "cond":
        return ["cond", draw(st.sampled_from(["flag", "data"])), sub(), sub()]
    if kind == "switch":
        return ["switch", sub(), sub(), sub()]
    if kind == "map":
        return ["map", _prog(draw, shape[1:], depth + 1, dict(ctx, outer=1), feats)]
    if kind == "wrap":
        return [kind, sub(shape, dict(ctx, outer=1))]
    if kind == "invoke":  # its function gets the flag, k and its input only
        return [kind, sub(shape, {"outer": 1})]
    if kind == "while":
        return ["while", draw(st.sampled_from(ORDERS["while"])), draw(st.integers(0, 3)),
                sub(shape, dict(ctx, outer=1))]
    if kind == "fori":
        order = draw(st.sampled_from(ORDERS["fori"]))
        dyn = "dynidx" in feats and "i" in order and draw(st.booleans())
        body = dict(ctx, outer=1, i=1)
        return ["fori", order, draw(st.integers(0, 3)), sub(shape, body), dyn]
    if kind == "scan":
        return ["scan", draw(st.sampled_from(ORDERS["scan"])), draw(st.booleans()),
                draw(st.integers(0, 3)), sub(shape, dict(ctx, outer=1))]
    if kind == "ascan":
        return ["ascan", draw(st.sampled_from(["add", "mul", "max"]))]
    if kind == "dyn":
        whats = ["get", "slice"]
        if shape and shape[0] > 0:
            whats.append("set")
        return ["dyn", draw(st.sampled_from(whats))]
    if kind == "pyconst":
        return ["pyconst", draw(st.sampled_from(["cond", "carry", "false", "item"]))]
    if kind == "repeat":
        return ["repeat", draw(st.integers(0, 2)), sub(shape, dict(ctx, outer=1))]
    return ["fold", draw(st.integers(0, 3)), sub(shape, dict(ctx, outer=1))]


def _prog(draw, shape, depth, ctx, feats):
    return [_layer(draw, shape, depth, ctx, feats)
            for _ in range(draw(st.integers(1, 3 if depth == 0 else 2)))]


@st.composite
def specs(draw, features=FEATURES, checks=CHECKS):
    feats = set(features)
    if "c_hops" in feats and not load_c_hops():
        feats.discard("c_hops")
    rank = draw(st.integers(0, 2))
    shape = [draw(st.sampled_from([0, 1, 2, 2, 3, 3])) for _ in range(rank)]
    prog = _prog(draw, shape, 0, {}, feats)
    return {"shape": shape, "batch": draw(st.integers(1, 3)), "seed": draw(st.integers(0, 999)),
            "zeros": draw(st.booleans()),
            "mode": draw(st.sampled_from(["plain", "plain", "dynamic"])),
            "batched": [draw(st.booleans()), draw(st.booleans())],
            "checks": draw(st.lists(st.sampled_from(checks), min_size=1, max_size=3,
                                    unique=True)),
            "prog": prog}


# ------------------------------------------------------------- the program

def _f64(a):
    return hop.tensor(np.asarray(a, dtype=np.float64), dtype=F64)


def _i64(a):
    return hop.tensor(np.asarray(a, dtype=np.int64), dtype=hop.int64)


def _ignore(value):
    """Program.note outside a logging eager run."""
    return None


class Program:
    """F(x, flag, k) of a spec's program; its closed-over tensors are made
    once from the spec's seed (so every call sees the same ones)."""

    def __init__(self, spec):
        self.spec = spec
        rng = np.random.default_rng(spec["seed"] + 7)
        self.w = _f64(rng.uniform(0.5, 1.5))
        self.table = _f64(rng.uniform(-1, 1, 4))
        self.start = hop.tensor(np.int64(spec["seed"] % 3))  # pyconst item: 1 to 3 trips
        self.consts = {}  # a scan's xs or a fold's rows, per layer
        self.fns = {}     # invoke_subgraph's function, per layer (one subgraph)
        self.c_hops = set()
        self.log = None  # the data-dependent decisions of an eager run
        self.note = _ignore  # log.append while an eager run logs them
        self._walk(spec["prog"], list(spec["shape"]), rng)

    def _walk(self, prog, shape, rng):
        for layer in prog:
            kind = layer[0]
            if kind in C_HOPS:
                self.c_hops.add(kind)
            if kind in ("scan", "fold"):
                T = layer[3] if kind == "scan" else layer[1]
                self.consts[id(layer)] = _f64(rng.uniform(-1, 1, [T] + shape))
            if kind == "invoke":  # made now: a body may not add it (purity)
                self.fns[id(layer)] = self._invoked(layer[1])
            for part in layer[1:]:
                if isinstance(part, list) and part and isinstance(part[0], list):
                    self._walk(part, shape[1:] if kind == "map" else shape, rng)

    def __call__(self, x, flag, k):
        return self.run(self.spec["prog"], x, {"flag": flag, "k": k, "outer": x})

    def run(self, prog, h, env):
        for layer in prog:
            # a table, not getattr(self, "_" + kind): hop.compile's effect
            # check then follows the layers only (issue 24: a name made at
            # run time would mean every method, the constructor's helpers too)
            h = _LAYERS[layer[0]](self, layer, h, env)
        return h

    def body(self, prog, env, **more):
        """A body's function of its input: its env has that input as the
        enclosing body's input (a closure over a traced value for layers
        nested deeper)."""
        return lambda a: self.run(prog, a, dict(env, outer=a, **more))

    # layers

    def _op(self, layer, h, env):
        name = layer[1]
        if name == "sin":
            return h.sin()
        if name == "tanh":
            return h.tanh()
        if name == "mulw":
            return h * self.w
        if name == "sq":
            return h * h * 0.5
        if name == "zeros":
            return h + hop.zeros(tuple(h.shape), dtype=F64)
        if name == "outer":
            return h + env["outer"].sum() * 0.1
        return h * (1 + env["i"] * 0.1)  # idx

    def decided(self, pred):
        """pred, its value logged when an eager run logs its decisions (a
        finite difference across a branch change means nothing)."""
        if self.log is not None and not hop._C._is_proxy(pred):
            self.note(bool(pred.item()))
        return pred

    def _guard(self, layer, h, env):
        return hop.cond(self.decided((h > 0).all()), lambda: h.sqrt(), lambda: h * 0.5)

    def _cond(self, layer, h, env):
        pred = env["flag"] > 0 if layer[1] == "flag" else self.decided(h.sum() > 0)
        return hop.cond(pred, self.body(layer[2], env), self.body(layer[3], env), (h,))

    def _switch(self, layer, h, env):
        return hop.switch(env["k"], [self.body(p, env) for p in layer[1:]], h)

    def _map(self, layer, h, env):
        return hop.map(self.body(layer[1], env), h)

    def _wrap(self, layer, h, env):
        return hop.wrap(self.body(layer[1], env), h)

    def _invoked(self, prog):
        return lambda a, flag, k: self.run(prog, a, {"flag": flag, "k": k, "outer": a})

    def _invoke(self, layer, h, env):
        return hop.invoke_subgraph(self.fns[id(layer)], h, env["flag"], env["k"])

    def _carries(self, order, h):
        init = {"i": 0, "h": h, "b": True, "g": h * 0.5}
        return tuple(init[c] for c in order)

    def _step(self, order, prog, env, c, i=None):
        """One iteration of a loop body over carries c (in order)."""
        d = dict(zip(order, c))
        more = {} if i is None else {"i": i}
        h = self.run(prog, d["h"], dict(env, outer=d["h"], **more))
        if "b" in d:
            h = h * (d["b"].to(F64) * 0.5 + 0.5)
            d["b"] = d["b"].logical_not()
        if "g" in d:
            d["g"] = d["g"] * 0.5 + h * 0.25
        if "i" in d:
            d["i"] = d["i"] + 1
        d["h"] = h
        return d

    def _finish(self, order, c):
        d = dict(zip(order, c))
        return d["h"] + d["g"] if "g" in d else d["h"]

    def _while(self, layer, h, env):
        order, trips, prog = layer[1], layer[2], layer[3]

        def body(*c):
            d = self._step(order, prog, env, c)
            return tuple(d[k] for k in order)
        out = hop.while_loop(lambda *c: c[order.index("i")] < trips, body,
                             self._carries(order, h))
        return self._finish(order, out)

    def _fori(self, layer, h, env):
        order, trips, prog, dyn = layer[1:5]

        def body(i, c):
            d = dict(self._step(order, prog, env, c, i))
            if dyn:
                ic = c[order.index("i")]
                h2 = d["h"] + self.table[ic] * 0.1 + self.table[ic:ic + 2].sum() * 0.01
                if h2.ndim and self.spec_shape_ok(h2):
                    h2 = h2 * 1.0  # a copy (exact), which the function visibly made
                    h2[ic] = h2[ic] * 0.5 + 0.1
                d["h"] = h2
            return tuple(d[k] for k in order)
        out = hop.fori_loop(0, trips, body, self._carries(order, h))
        return self._finish(order, out)

    @staticmethod
    def spec_shape_ok(h):
        n = h.shape[0]
        return not isinstance(n, int) or n > 0

    def _scan(self, layer, h, env):
        order, reverse, prog = layer[1], layer[2], layer[4]
        xs = self.consts[id(layer)]

        def f(c, x):
            d = dict(self._step(order, prog, env, c))
            d["h"] = d["h"] + x * 0.1
            return tuple(d[k] for k in order), d["h"] * 0.5
        c, ys = hop.scan(f, self._carries(order, h), xs, reverse=reverse)
        return self._finish(order, c) + ys.sum(0) * 0.1

    def _ascan(self, layer, h, env):
        op = layer[1]
        if op == "add":
            return hop.associative_scan(lambda a, b: a + b, h)
        if op == "mul":
            return hop.associative_scan(lambda a, b: a * b, h.tanh())
        out = hop.associative_scan(lambda a, b: hop.maximum(a, b), h)
        if self.log is not None and not hop._C._is_proxy(h) and h.shape[0] > 1:
            # which element wins each step: a tie is a kink of the max (its
            # rule splits the slope), where a finite difference means nothing
            self.note(tuple(((h[1:] > out[:-1]) * 2 + (h[1:] == out[:-1]))
                                  .to(hop.int64).reshape(-1).tolist()))
        return out

    def _dyn(self, layer, h, env):
        k, what = env["k"], layer[1]
        if what == "get":
            return h + self.table[k] * 0.1
        if what == "slice":
            return h + self.table[k:k + 2].sum() * 0.1
        h = h * 1.0  # a copy (exact), which the function visibly made
        h[k] = h[k] * 0.5 + self.table[k]
        return h

    def _pyconst(self, layer, h, env):
        what = layer[1]
        if what == "cond":
            c = hop.cond(env["flag"] > 0, lambda: 1.5, lambda: 0.5)
            return h * c
        if what == "carry":
            out = hop.fori_loop(0, 2, lambda i, c: (7, c[1] * 0.5), (0, h))
            return out[1] + out[0].to(F64) * 0.01
        if what == "item":
            out = hop.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, v * 0.5),
                                 (self.start.item() + 1, h))
            return out[1] + out[0].to(F64) * 0.01
        out = hop.while_loop(lambda i, v: False, lambda i, v: (i + 1, v * 2.0), (0, h))
        return out[1]

    def _repeat(self, layer, h, env):
        return hop.ops.repeat(layer[1], self.body(layer[2], env), h)

    def _fold(self, layer, h, env):
        prog = layer[2]
        return hop.ops.fold(lambda c, r: self.run(prog, c, dict(env, outer=c)) + r * 0.1, h,
                            self.consts[id(layer)])


# ------------------------------------------------------------- the checks

class Inputs:
    def __init__(self, spec):
        rng = np.random.default_rng(spec["seed"])
        shape, B = tuple(spec["shape"]), spec["batch"]

        def draw(*lead):
            a = rng.uniform(-1, 1, lead + shape)
            if spec["zeros"]:
                a.reshape(-1)[::2] = 0.0
            return a
        self.x, self.t, self.ct = draw(), rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)
        self.xs, self.ts, self.cts = draw(B), rng.uniform(-1, 1, (B,) + shape), \
            rng.uniform(-1, 1, (B,) + shape)
        self.flags = rng.integers(0, 2, B)
        self.ks = rng.integers(-1, 4, B)
        self.flag, self.k = int(self.flags[0]), int(self.ks[0])
        self.batched = spec["batched"]


class Expected(Exception):
    """A transform refused a C HOP with no rule, as it must."""


def _np(v):
    return np.asarray(v.numpy() if isinstance(v, hop.Tensor) else v, dtype=np.float64)


def close(what, got, want, rtol, atol):
    got, want = _np(got), _np(want)
    if got.shape != want.shape:
        raise AssertionError(f"{what}: shape {got.shape}, expected {want.shape}")
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if bad.any():
        i = np.argwhere(bad)[0]
        raise AssertionError(f"{what}: got {got[tuple(i)]!r} where the reference is "
                             f"{want[tuple(i)]!r} (at {tuple(int(v) for v in i)}; {int(bad.sum())} "
                             f"of {bad.size} differ)\n  got  {got.tolist()}\n  want {want.tolist()}")


_LAYERS = {k: getattr(Program, "_" + k) for k in (
    "op", "guard", "cond", "switch", "map", "wrap", "invoke", "while", "fori", "scan", "ascan",
    "dyn", "pyconst", "repeat", "fold")}


class Checker:
    """Runs a spec's checks."""

    def __init__(self, spec):
        # the example C HOPs registered before any check: hop.compile's
        # effect check follows every layer of the dispatch table, _fold's
        # hop.ops.fold too, which it cannot resolve (a call it must assume
        # has effects) while fold is not registered, whatever the program
        load_c_hops()
        self.spec = spec
        self.P = Program(spec)
        P = self.P
        self.F = lambda x, flag, k: P(x, flag, k)
        self.inp = Inputs(spec)
        # what several checks of the spec share, computed once: the eager
        # value at x, the finite differences, the per-example gradients
        self.memo = {}

    def once(self, key, fn):
        if key not in self.memo:
            self.memo[key] = fn()
        return self.memo[key]

    # helpers

    def call(self, fn, *args):
        """A transformed call as the spec's mode makes it."""
        if self.spec["mode"] == "dynamic":
            fn = hop.compile(fn, dynamic=True, fullgraph=True)
        return fn(*args)

    def ad(self, fn):
        """fn() for a check that differentiates: a C HOP without the rule on
        the path it differentiates must make it raise UnsupportedError
        naming it (Expected then); where no gradient passes through one (a loop that
        never runs it, a zero-size value whose gradient is no rule's), the
        values are checked as any.  (So the batched side of a check may
        refuse a C HOP its per-example reference never reached.)"""
        try:
            return fn()
        except hop.UnsupportedError as e:
            names = [n for n in self.P.c_hops if n in str(e)]
            if names and re.search(r"has no (vjp|jvp) rule", str(e)):
                raise Expected from e
            raise

    def eager(self, x, flag=None, k=None):
        i = self.inp
        return self.F(_f64(x), _i64(i.flag if flag is None else flag),
                      _i64(i.k if k is None else k)).numpy()

    def at(self, eps):
        """F at x + eps t, and its data-dependent decisions there."""
        self.P.log = []
        self.P.note = self.P.log.append
        try:
            return self.eager(self.inp.x + eps * self.inp.t), self.P.log
        finally:
            self.P.log = None
            self.P.note = _ignore

    def fd(self, eps, order):
        """The order-th directional derivative by central differences, or
        None where a data-dependent branch changes within eps of x (the
        function is not smooth there, whatever the differences say)."""
        (lo, dl), (mid, dm), (hi, dh) = self.at(-eps), self.at(0.0), self.at(eps)
        if not dl == dm == dh:
            return None
        return (hi - lo) / (2 * eps) if order == 1 else (hi - 2 * mid + lo) / eps ** 2

    def smooth(self, order):
        """The order-th directional derivative by finite differences, or
        None where the program is not smooth at x (a branch changes, or two
        step sizes disagree)."""
        eps = (1e-6, 1e-5) if order == 1 else (1e-4, 2e-4)
        a, b = self.fd(eps[0], order), self.fd(eps[1], order)
        tol = (1e-4, 1e-6) if order == 1 else (1e-3, 1e-4)
        ok = a is not None and b is not None and np.isfinite(a).all() and \
            np.allclose(a, b, rtol=tol[0], atol=tol[1])
        if not ok:
            return None
        # Both central differences err by c*eps**2 (plus rounding): one
        # Richardson step cancels that term, so the reference is accurate
        # well inside the tolerance the checks compare with.  Without it a
        # program with a large fourth derivative gave a second difference
        # 1.4e-4 off at eps 1e-4 while hop's exact jvp(jvp) was right
        # (seed 58 of a switch over sin(sin(sin))).
        r2 = (eps[1] / eps[0]) ** 2
        return (r2 * np.asarray(a) - np.asarray(b)) / (r2 - 1)

    def smooth1(self):
        return self.once("smooth1", lambda: self.smooth(1))

    def smooth2(self):
        return self.once("smooth2", lambda: self.smooth(2))

    def value(self):
        """F at x (the spec's flag and k)."""
        return self.once("value", lambda: self.eager(self.inp.x))

    def f(self):
        i = self.inp
        flag, k = _i64(i.flag), _i64(i.k)
        return lambda x: self.F(x, flag, k)

    def loss(self):
        """L(x) = sum(F(x) * ct)."""
        F, ct = self.f(), _f64(self.inp.ct)
        return lambda x: (F(x) * ct).sum()

    # first order

    def check_jvp(self):
        i = self.inp
        out, tan = self.ad(lambda: self.call(lambda x, t: hop.jvp(self.f(), (x,), (t,)),
                                             _f64(i.x), _f64(i.t)))
        close("jvp: primal output", out, self.value(), 1e-12, 1e-12)
        d = self.smooth1()
        if d is not None:
            close("jvp: tangent vs finite differences", tan, d, 1e-5, 1e-6)

    def check_vjp(self):
        i = self.inp
        F = self.f()

        def run(x, ct):
            out, fn = hop.vjp(F, x)
            return out, fn(ct)[0]
        out, g = self.ad(lambda: self.call(run, _f64(i.x), _f64(i.ct)))
        close("vjp: primal output", out, self.value(), 1e-12, 1e-12)
        d = self.smooth1()
        if d is not None:
            close("vjp: <vjp(ct), t> vs <ct, finite differences>", (_np(g) * i.t).sum(),
                  (i.ct * d).sum(), 1e-5, 1e-6)

    def check_grad(self):
        i = self.inp
        g = self.ad(lambda: self.call(hop.grad(self.loss()), _f64(i.x)))
        d = self.smooth1()
        if d is not None:
            close("grad: <grad, t> vs <ct, finite differences>", (_np(g) * i.t).sum(),
                  (i.ct * d).sum(), 1e-5, 1e-6)

    # second order

    def check_jvp_jvp(self):
        i = self.inp
        F = self.f()

        def run(x, t):
            return hop.jvp(lambda y: hop.jvp(F, (y,), (t,))[1], (x,), (t,))[1]
        got = self.ad(lambda: self.call(run, _f64(i.x), _f64(i.t)))
        d = self.smooth2()
        if d is not None:
            close("jvp(jvp): second directional derivative vs finite differences", got, d,
                  1e-4, 1e-4)

    def check_grad_grad(self):
        i = self.inp
        L = self.loss()

        def run(x, t):
            return hop.grad(lambda y: (hop.grad(L)(y) * t).sum())(x)
        hvp = self.ad(lambda: self.call(run, _f64(i.x), _f64(i.t)))
        d = self.smooth2()
        if d is not None:
            close("grad(grad): <Hessian t, t> vs <ct, second finite differences>",
                  (_np(hvp) * i.t).sum(), (i.ct * d).sum(), 1e-4, 1e-4)

    # vmap

    def batch_args(self):
        """(in_axes, flags, ks) of the vmap checks."""
        i = self.inp
        fb, kb = i.batched
        flags = _i64(i.flags) if fb else _i64(i.flag)
        ks = _i64(i.ks) if kb else _i64(i.k)
        return (0 if fb else None, 0 if kb else None), flags, ks

    def example(self, b):
        i = self.inp
        fb, kb = i.batched
        return _i64(i.flags[b] if fb else i.flag), _i64(i.ks[b] if kb else i.k)

    def per_example(self, fn):
        """fn(b) for every example, stacked (the reference of a vmap)."""
        outs = [_np(fn(b)) for b in range(self.spec["batch"])]
        return np.stack(outs) if outs else np.zeros((0,))

    def check_vmap(self):
        i = self.inp
        (fa, ka), flags, ks = self.batch_args()
        want = self.per_example(lambda b: self.F(_f64(i.xs[b]), *self.example(b)))
        got = self.call(lambda xs, fl, k: hop.vmap(self.F, in_axes=(0, fa, ka))(xs, fl, k),
                        _f64(i.xs), flags, ks)
        close("vmap vs a loop over the examples", got, want, 1e-9, 1e-12)

    def _loss2(self):
        F = self.F
        return lambda x, c, fl, k: (F(x, fl, k) * c).sum()

    def _grads_per_example(self):
        i = self.inp
        L = hop.grad(self._loss2())
        return self.once("grads per example", lambda: self.ad(lambda: self.per_example(
            lambda b: L(_f64(i.xs[b]), _f64(i.cts[b]), *self.example(b)))))

    def check_vmap_grad(self):
        i = self.inp
        want = self._grads_per_example()
        (fa, ka), flags, ks = self.batch_args()
        g = hop.vmap(hop.grad(self._loss2()), in_axes=(0, 0, fa, ka))
        got = self.ad(lambda: self.call(g, _f64(i.xs), _f64(i.cts), flags, ks))
        close("vmap(grad) vs grad per example", got, want, 1e-9, 1e-12)

    def check_grad_vmap(self):
        i = self.inp
        want = self._grads_per_example()
        (fa, ka), flags, ks = self.batch_args()
        F = self.F

        def total(xs, cts, fl, k):
            return (hop.vmap(F, in_axes=(0, fa, ka))(xs, fl, k) * cts).sum()
        got = self.ad(lambda: self.call(hop.grad(total), _f64(i.xs), _f64(i.cts), flags, ks))
        close("grad(vmap) vs grad per example", got, want, 1e-9, 1e-12)

    def check_jvp_vmap(self):
        i = self.inp
        F = self.F
        want = self.ad(lambda: self.per_example(
            lambda b: hop.jvp(lambda x: F(x, *self.example(b)), (_f64(i.xs[b]),),
                              (_f64(i.ts[b]),))[1]))
        (fa, ka), flags, ks = self.batch_args()

        def run(xs, ts, fl, k):
            return hop.jvp(lambda y: hop.vmap(F, in_axes=(0, fa, ka))(y, fl, k), (xs,), (ts,))[1]
        got = self.ad(lambda: self.call(run, _f64(i.xs), _f64(i.ts), flags, ks))
        close("jvp(vmap) vs jvp per example", got, want, 1e-9, 1e-12)


def check_spec(spec):
    """Runs every check of spec; raises AssertionError (or the transform's
    exception) on the first that fails."""
    if any(layer_uses(spec["prog"], k) for k in C_HOPS):
        assert load_c_hops(), "the C HOPs of examples/ are not loaded"
    c = Checker(spec)
    try:
        c.value()
    except hop.Error as e:
        # every generated program is valid: zero sizes included, it must run
        raise AssertionError(f"the eager program fails: {type(e).__name__}: {e}") from None
    for name in spec["checks"]:
        try:
            getattr(c, "check_" + name)()
        except Expected:
            continue
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None
        except Exception as e:
            raise type(e)(f"{name}: {e}") if _reraisable(e) else e


def _reraisable(e):
    try:
        type(e)("x")
        return True
    except Exception:
        return False


def layer_uses(prog, kind):
    for layer in prog:
        if layer[0] == kind:
            return True
        for part in layer[1:]:
            if isinstance(part, list) and part and isinstance(part[0], list) and \
                    layer_uses(part, kind):
                return True
    return False


# ------------------------------------------------------------- coverage

_GROUP = {"while": "loop", "fori": "loop", "scan": "loop", "repeat": "loop", "fold": "loop",
          "cond": "branch", "switch": "branch", "wrap": "call", "invoke": "call"}


def features(spec):
    """What spec exercises: its layer kinds and checks, carries of several
    kinds in a loop ("int before float", "float before int", "bool carry"),
    nesting ("loop in cond", ...), zero sizes, exact zeros, dynamic mode."""
    out = {f"check {c}" for c in spec["checks"]}
    if 0 in spec["shape"]:
        out.add("zero size")
    if spec["zeros"]:
        out.add("exact zeros")
    out.add(f"mode {spec['mode']}")
    out.add(f"rank {len(spec['shape'])}")

    def walk(prog, outer):
        for layer in prog:
            kind = layer[0]
            out.add(kind if kind not in ("op", "dyn", "pyconst") else f"{kind} {layer[1]}")
            if outer:
                out.add(f"{kind} in {outer}")
                if kind in HOPS:
                    out.add(f"hop in {_GROUP.get(outer, outer)}")
            if kind in ORDERS:
                order = layer[1]
                if "i" in order:
                    out.add("int before float" if order.index("i") < order.index("h")
                            else "float before int")
                if "b" in order:
                    out.add("bool carry")
                if kind == "fori" and layer[4]:
                    out.add("fori dynamic index")
            for part in layer[1:]:
                if isinstance(part, list) and part and isinstance(part[0], list):
                    walk(part, kind)
    walk(spec["prog"], None)
    return out


# ------------------------------------------------------------- regressions

REGRESSION_TEMPLATE = '''"""Regression test written by scripts/fuzz.py --category transforms.

{summary}

Found with seed {seed}; hop {version}.  The program is a spec of
tests/python/fuzz_transforms.py, checked against finite differences and
per-example loops by fuzz_transforms.check_spec.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_transforms import check_spec  # noqa: E402

SPEC = {spec}


def test_{name}():
    check_spec(SPEC)
'''


def spec_name(spec):
    import hashlib
    digest = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    return f"fuzz_transforms_{digest}"


def save_regression(spec, directory, summary="", seed=None):
    from fuzz_programs import write_regression
    return write_regression(REGRESSION_TEMPLATE, spec, spec_name(spec), directory, summary, seed)
