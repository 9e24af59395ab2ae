"""Random programs with nested HOPs, for differential testing.

Shared by tests/python/test_differential.py (a few hundred examples in CI),
scripts/fuzz.py (long campaigns) and the regression files the campaign writes
into tests/python/regressions/.

A *spec* is plain data (dicts, lists, strings, ints; JSON-able), so that a
failing program can be saved as text and replayed:

    {"dtype": "float32",              # dtype of the inputs x, y, c0, c1
     "shape": [n, m],                 # x: [n, m]; y, c0: [m]; c1: []
     "dynamic": true | false | [[dn, dm], [dm]],
     "seed": 123,                     # input values
     "tree": [...]}                   # the program, below

The tree is an expression over the inputs x, y (arguments), c0, c1 (concrete
tensors the program closes over: they become root inputs when traced) and the
sizes n = x.shape[0], m = x.shape[1] (SymInts under dynamic=True, closed over
by every body) and r = row.shape[0] inside a map body.  Nodes:

    ["var", name]                       x y c0 c1 (row inside a map body)
    ["unary", op, dtype, e]             sin tanh sigmoid relu neg abs not
    ["binary", op, dtype, e1, e2]       add sub mul maximum minimum mulc and or xor eq
    ["sbin", op, dtype, e, size]        e + size, e * size, e / size
    ["cast", dtype, e]                  e.to(dtype), exact conversions only
    ["gt0", e]                          e > 0 (bool)
    ["wrap", e]                         hop.wrap
    ["invoke", e]                       hop.invoke_subgraph (one fn per subtree)
    ["cond", pred, e_true, e_false]     hop.cond; pred is ["pexpr", bool e, t]
                                        (e.to(int64).sum() > t) or ["psize", size, t]
    ["map", e_body, e_xs, extra]        hop.map over the rows of e_xs (expanded
                                        to x's shape), with y as an extra argument
                                        if extra

The loops (issue #14).  A body closes over everything around it: the inputs,
the sizes, a map's row and the carries, slices and indexes of the loops it is
in, which are named after how many loop bodies are around them (acc0 is the
carry of an outermost loop, acc1 of one in its body).  Loop bodies nest two
deep at most; a body's next carry is squashed (tanh of a float, an int
clamped into [-MULC, MULC], a bool as is), so that no carry grows without
bound over the iterations.  A bound b is an int, ["size", s, t] (s - t, an
int or a SymInt; s may be a fori index) or ["data", e, t] (the count of the
exact bool tree e minus t, clamped into 0..DATA_TRIPS: an int64 scalar
tensor read at run time).

    ["fori", b, e_body, e_init]         hop.fori_loop(0, b, ...) from e_init; the
                                        body sees acc<k> and the index idx<k>
    ["while", b, stop, e_body, e_init]  hop.while_loop over (counter, acc<k>) from
                                        (0, e_init) while counter < b and, if stop
                                        is an int, acc<k>.to(int64).sum() <= stop
                                        (exact carries only); gives acc<k>
    ["scan", which, reverse, e_carry, e_y, e_init, e_xs]
                                        hop.scan over the rows of e_xs (expanded
                                        to x's shape) from e_init (a row); the
                                        body sees acc<k> and the row xt<k>;
                                        which = "ys" (x's shape, e_y stacked) or
                                        "carry" (the last carry, e_y is null)
    ["switch", index, e0, e1, ...]      hop.switch(index, [e0, e1, ...]); index is
                                        an int (out of range too), ["size", s, t]
                                        or ["data", e, t] (unclamped: switch
                                        clamps)
    ["ascan", op, reverse, e]           hop.associative_scan along dim 0: add mul
                                        maximum minimum (floats; mul's operands
                                        clamped into [-2, 2]), add maximum minimum
                                        (ints), or and xor eq (bools)

Every node is evaluated four ways: eagerly with hop, under hop.trace, under
hop.compile, and with NumPy (the loops as plain Python loops over NumPy
values).  Integer and bool programs must agree exactly.
Float results are compared against a running error bound: the NumPy
reference carries, per element, a bound on how far a correctly rounded
implementation may drift (a few ulps per op, propagated through each op's
condition number), so that sin(10**4 * x) does not give false alarms while a
wrong answer still does.  Conditions (cond preds) are only computed from exact
values (bool and int subtrees, comparisons of inputs with 0), so every
implementation takes the same branch; the same holds for loop bounds, stops
and switch indexes.  The loops keep the bound sound with short trips (at most
DATA_TRIPS for a data bound, max(n, m) + 2 = 8 for a size bound) and tanh's
slope within the bound; associative_scan's plan combines in chunks, so a
float sum or product is bounded for any order of combining (_np_ascan).
"""

import functools
import json
import os
import threading
import warnings

import numpy as np
from hypothesis import strategies as st

import hop

# A generated program's function closes over its own spec tree (deeper than
# the compile guards walk); the tree never changes, so hop's warning that it
# is guarded by identity only says nothing here.
warnings.filterwarnings("ignore", r"hop: Program\.function\.<locals>", RuntimeWarning)

DTYPES = ("float32", "float64", "int32", "int64", "bool")
FLOATS = ("float32", "float64")
INTS = ("int32", "int64")
MAX_DEPTH = 4
EPS = {"float32": float(np.finfo(np.float32).eps), "float64": float(np.finfo(np.float64).eps)}
ULPS = 4.0  # per op: correctly rounded is 0.5; vector math libraries promise <= 1-4

UNARY = {
    "float": ("sin", "tanh", "sigmoid", "relu", "neg", "abs"),
    "int": ("relu", "neg", "abs"),
    "bool": ("not",),
}
BINARY = {
    "float": ("add", "sub", "mul", "maximum", "minimum"),
    "int": ("add", "sub", "mulc", "maximum", "minimum"),
    "bool": ("and", "or", "xor", "eq"),
}
SBIN = {"float": ("add", "mul", "div"), "int": ("add", "mul"), "bool": ()}
# Integer products clamp their operands to [-MULC, MULC] first, so no
# program overflows int32 (depth 4 bounds every other growth).
MULC = 100


def kind(dt):
    return "float" if dt in FLOATS else "int" if dt in INTS else "bool"


# ------------------------------------------------------------- strategies

# A context says what a tree may use where it stands: (shape, vars, sizes,
# loops).  shape is "full" (values broadcast to x's [n, m]) or "row" (to
# [m]); vars are (name, dtype, shape) with dtype None for the inputs and the
# map slice (the program's dtype, combined as before loops existed) and a
# dtype for a loop's carry or scan slice; sizes are names of ints; loops
# counts the loop bodies around the tree (a loop's names end in it).
FULL = ("full", (("x", None, "full"), ("y", None, "row"), ("c0", None, "row"),
                 ("c1", None, "scalar")), ("n", "m"), 0)


def _cast_sources(dt, main):
    """dtypes e may have in ["cast", dt, e]: conversions that are exact (or
    correctly rounded, float64 -> float32), and that can reach main."""
    if kind(dt) == "float":
        return [s for s in DTYPES if s != dt]
    if kind(dt) == "int":
        return [s for s in INTS if s != dt] + ["bool"]
    return []


def _ctx(ctx):
    """ctx as a context tuple ("full" and "row" are the contexts before
    loops: the root and a map body at the root)."""
    if ctx == "full":
        return FULL
    if ctx == "row":
        return _map_ctx(FULL)
    return ctx


def _restrict(ctx, shape):
    """ctx's values that broadcast to shape."""
    if ctx[0] == shape:
        return ctx
    vars_ = tuple(v for v in ctx[1] if v[2] != "full")
    return (shape, vars_, ctx[2], ctx[3])


def _map_ctx(ctx):
    """A map body's context: the row, what broadcasts to it, and r."""
    row = _restrict(ctx, "row")
    return ("row", (("row", None, "row"),) + row[1], row[2] + ("r",), row[3])


def _loop_ctx(ctx, shape, carry_dt, index=False, slice_dt=None):
    """The context of a loop body: ctx's values that broadcast to shape, the
    carry acc<k> (of dtype carry_dt), and fori's index idx<k> or scan's slice
    xt<k>, k counting the loops around."""
    c = _restrict(ctx, shape)
    k = c[3]
    vars_ = c[1] + ((f"acc{k}", carry_dt, shape),)
    if slice_dt is not None:
        vars_ += ((f"xt{k}", slice_dt, shape),)
    return (shape, vars_, c[2] + ((f"idx{k}",) if index else ()), k + 1)


def _is_index(size):
    return size.startswith("idx")


def _var_leaf(name, vd, dt):
    """["var", name] (of dtype vd, a loop value, exact unless float) as a
    tree of dtype dt, or None if no exact conversion reaches dt."""
    v = ["var", name]
    if vd == dt:
        return v
    if kind(dt) == "float":
        return ["cast", dt, v]
    if kind(dt) == "int" and kind(vd) != "float":
        return ["cast", dt, v]
    if dt == "bool" and kind(vd) == "int":
        return ["gt0", v]
    return None  # a float loop value is not exact: no comparison of it


@functools.lru_cache(maxsize=None)
def leaves(ctx, dt, main):
    """The smallest trees of dtype dt: an input, or an input made dt exactly;
    in a loop body also the loop's carry and slice."""
    ctx = _ctx(ctx)
    names = [v[0] for v in ctx[1] if v[1] is None]
    var = st.sampled_from(names).map(lambda v: ["var", v])
    if dt == main:
        leaf = var
    elif dt == "bool":
        leaf = var.map(lambda v: ["gt0", v])
    elif main == "bool" or kind(main) == kind(dt) or kind(dt) == "float":
        leaf = var.map(lambda v: ["cast", dt, v])
    else:
        # float main, int dt: through bool (a float -> int cast is not exact).
        leaf = var.map(lambda v: ["cast", dt, ["gt0", v]])
    loop = [_var_leaf(name, vd, dt) for name, vd, _ in ctx[1] if vd is not None]
    loop = [t for t in loop if t is not None]
    if not loop:
        return leaf
    # One choice per loop value, so that a body uses its carry often.
    return st.one_of([leaf] + [st.just(t) for t in loop])


@functools.lru_cache(maxsize=None)
def sizes(ctx):
    """The size names of ctx (a loop index too: it may be 0)."""
    return st.sampled_from(list(_ctx(ctx)[2]))


@functools.lru_cache(maxsize=None)
def _sbins(ctx, k):
    # No division by a loop index, which starts at 0.
    return st.sampled_from([(op, s) for op in SBIN[k] for s in _ctx(ctx)[2]
                            if not (op == "div" and _is_index(s))])


MAX_LOOPS = 2
# Trip counts: a clamped data bound runs at most DATA_TRIPS times; a size
# bound at most max(n, m) + 2 = 8 (check_program's second size).
DATA_TRIPS = 4
ASCAN = {"float": ("add", "mul", "maximum", "minimum"), "int": ("add", "maximum", "minimum"),
         "bool": ("or", "and", "xor", "eq")}
# A float product scan clamps its operands to [-ASCAN_CLAMP, ASCAN_CLAMP]
# first, so that products of up to 8 rows (nested) stay finite.
ASCAN_CLAMP = 2.0


def _bounds(ctx, main, depth, lo):
    """A loop bound: an int (lo..4), ["size", s, t] (s - t), or ["data", e, t]
    (clamp(count of e - t, 0, DATA_TRIPS), e an exact bool tree)."""
    c = _ctx(ctx)
    return st.one_of(
        st.integers(lo, 4),
        st.tuples(st.just("size"), st.sampled_from(list(c[2])), st.integers(0, 3)).map(list),
        st.tuples(st.just("data"), exprs(c, "bool", main, depth), st.integers(0, 3)).map(list))


@st.composite
def _drawn_later(draw, ctx, dt, main, depth):
    """exprs(ctx, dt, main, depth), made when first drawn.  A deferred
    strategy is made when Hypothesis checks the strategy that holds it, and
    the loops' contexts (a carry of each dtype, two deep) are thousands:
    making them all up front cost ~10 s per process."""
    return draw(exprs(ctx, dt, main, depth))


@functools.lru_cache(maxsize=None)
def _loops(ctx, dt, main, depth):
    """The loop nodes of dtype dt in ctx (their bodies at depth)."""
    ctx = _ctx(ctx)
    shape = ctx[0]
    k = kind(dt)

    def sub(d, c, deeper=0):
        return _drawn_later(c, d, main, min(depth + deeper, MAX_DEPTH))

    def aside(d, c):
        # What is not a body (an init, xs, a bound, an index) is kept one
        # level smaller: the bodies are what the loops are about.
        return sub(d, c, 1)

    fori_body = _loop_ctx(ctx, shape, dt, index=True)
    while_body = _loop_ctx(ctx, shape, dt)
    scan_body = _loop_ctx(ctx, "row", dt, slice_dt=main)
    row = _restrict(ctx, "row")
    stop = st.one_of(st.none(), st.integers(0, 3)) if k != "float" else st.none()
    index = st.one_of(
        st.integers(-1, 3),
        st.tuples(st.just("size"), st.sampled_from(list(ctx[2])), st.integers(0, 6)).map(list),
        st.tuples(st.just("data"), aside("bool", ctx), st.integers(0, 3)).map(list))
    return [  # the loops that bind values in their bodies first (exprs relies on it)
        st.tuples(st.just("fori"), _bounds(ctx, main, depth + 1, 0), sub(dt, fori_body),
                  aside(dt, ctx)).map(list),
        st.tuples(st.just("while"), _bounds(ctx, main, depth + 1, 0), stop, sub(dt, while_body),
                  aside(dt, ctx)).map(list),
        # scan gives its ys ([n, m]) only where they broadcast; else its carry.
        st.one_of([st.tuples(st.just("scan"), st.just(w), st.booleans(), sub(dt, scan_body),
                             sub(dt, scan_body) if w == "ys" else st.none(), aside(dt, row),
                             aside(main, ctx)).map(list)
                   for w in (("ys", "carry") if shape == "full" else ("carry",))]),
        st.tuples(st.just("switch"), index, st.lists(sub(dt, ctx), min_size=1, max_size=3))
        .map(lambda t: [t[0], t[1]] + t[2]),
        st.tuples(st.just("ascan"), st.sampled_from(ASCAN[k]), st.booleans(), sub(dt, ctx))
        .map(list),
    ]


@functools.lru_cache(maxsize=None)
def exprs(ctx, dt, main, depth=0):
    """Trees of dtype dt valid in ctx ("full": values broadcastable to x's
    shape; "row": to a row's; or a context tuple)."""
    ctx = _ctx(ctx)
    leaf = leaves(ctx, dt, main)
    if depth >= MAX_DEPTH:
        return leaf

    def sub(d=dt, c=ctx):
        return st.deferred(lambda: exprs(c, d, main, depth + 1))

    k = kind(dt)
    options = [
        leaf,
        st.tuples(st.just("unary"), st.sampled_from(UNARY[k]), st.just(dt), sub()).map(list),
        st.tuples(st.just("binary"), st.sampled_from(BINARY[k]), st.just(dt), sub(),
                  sub()).map(list),
        st.tuples(st.just("wrap"), sub()).map(list),
        st.tuples(st.just("invoke"), sub()).map(list),
        st.tuples(st.just("cond"), preds(ctx, main, depth + 1), sub(), sub()).map(list),
    ]
    if SBIN[k]:
        options.append(st.tuples(sub(), _sbins(ctx, k)).map(
            lambda t: ["sbin", t[1][0], dt, t[0], t[1][1]]))
    sources = _cast_sources(dt, main)
    if sources:
        # One strategy per source dtype, made once (a flatmap would make new
        # strategies at every draw, which Hypothesis validates each time).
        options.append(st.one_of([st.tuples(st.just("cast"), st.just(dt), sub(s)).map(list)
                                  for s in sources]))
    if dt == "bool" and main != "bool":
        # A comparison of an exact value: an int tree, or a float input.
        src = main if kind(main) == "int" else None
        options.append((sub(src) if src else leaves(ctx, main, main)).map(lambda e: ["gt0", e]))
    if ctx[0] == "full":
        # xs has the inputs' dtype, so that a row is like y, c0 and c1.
        options.append(st.tuples(st.just("map"), sub(dt, _map_ctx(ctx)), sub(main), st.booleans())
                       .map(list))
    # The loops last: shrinking prefers the options before them.  Bodies that
    # bind a carry nest MAX_LOOPS deep at most, so that trip counts multiply
    # at most twice and the contexts (a carry's dtype is part of one) stay
    # few; switch and ascan bind nothing and go anywhere.
    loops = _loops(ctx, dt, main, depth + 1)
    options.append(st.one_of(loops if ctx[3] < MAX_LOOPS else loops[3:]))
    return st.one_of(options)


@functools.lru_cache(maxsize=None)
def preds(ctx, main, depth):
    ctx = _ctx(ctx)
    # A loop index is unbacked under tracing: `i > t` cannot be decided there
    # (hop raises DataDependentError, as for any Python `if` on data).
    decidable = [s for s in ctx[2] if not _is_index(s)]
    return st.one_of(
        st.tuples(st.just("pexpr"), exprs(ctx, "bool", main, depth), st.integers(0, 3)).map(list),
        st.tuples(st.just("psize"), st.sampled_from(decidable), st.integers(1, 5)).map(list),
    )


def _dynamic():
    return st.one_of(st.booleans(), st.tuples(st.booleans(), st.booleans()).map(
        lambda d: [list(d), [d[1]]]))


@st.composite
def specs(draw, dtypes=DTYPES):
    main = draw(st.sampled_from(dtypes))
    return {
        "dtype": main,
        "shape": [draw(st.integers(1, 6)), draw(st.integers(1, 5))],
        "dynamic": draw(_dynamic()),
        "seed": draw(st.integers(0, 2**32 - 1)),
        "tree": draw(exprs("full", main, main)),
    }


# ------------------------------------------------------------- inputs

def _array(rng, shape, dt):
    if dt == "bool":
        return rng.random(shape) < 0.5
    if kind(dt) == "int":
        return rng.integers(-3, 4, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def inputs(spec, n=None):
    """NumPy inputs x, y, c0, c1 of spec (x with n rows if given)."""
    n0, m = spec["shape"]
    rng = np.random.default_rng(spec["seed"])
    dt = spec["dtype"]
    vals = {"x": _array(rng, (n0, m), dt), "y": _array(rng, (m,), dt),
            "c0": _array(rng, (m,), dt), "c1": _array(rng, (), dt)}
    if n is not None and n != n0:
        vals["x"] = _array(np.random.default_rng(spec["seed"] + 1), (n, m), dt)
    return vals


# ------------------------------------------------------------- hop

HOP_UNARY = {
    "sin": lambda a: a.sin(), "tanh": lambda a: a.tanh(), "sigmoid": lambda a: a.sigmoid(),
    "relu": lambda a: a.relu(), "neg": lambda a: -a, "abs": lambda a: a.abs(),
    "not": lambda a: hop.logical_not(a),
}


def _hop_clamp(a):
    return hop.minimum(hop.maximum(a, -MULC), MULC)


HOP_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "mulc": lambda a, b: _hop_clamp(a) * _hop_clamp(b),
    "maximum": hop.maximum, "minimum": hop.minimum,
    "and": hop.logical_and, "or": hop.logical_or, "xor": hop.ne, "eq": hop.eq,
}
HOP_SBIN = {"add": lambda a, s: a + s, "mul": lambda a, s: a * s, "div": lambda a, s: a / s}


def _folding(right):
    """right, except that while a trace is active an operand that is a
    concrete tensor is computed now and baked into the graph as a constant
    (issue #12 item 1, planted on purpose)."""
    def op(a):
        if hop._C.tracing() is not None and not a.is_proxy:
            # Tracing state is per thread: another thread computes eagerly.
            box = []
            worker = threading.Thread(target=lambda: box.append(right(a)))
            worker.start()
            worker.join()
            return box[0]  # a concrete tensor of its own: captured as a constant
        return right(a)
    return op


def inject(op):
    """Plants a known bug in hop's side of unary op (for testing the fuzzer
    itself): relu becomes abs, sin becomes 1.01 * sin, ...; "fold" makes
    every unary op on a concrete tensor fold to a constant while tracing;
    "segv" makes every unary op crash the process."""
    if op == "fold":
        for name, right in list(HOP_UNARY.items()):
            HOP_UNARY[name] = _folding(right)
        return
    if op == "segv":  # a crash, for testing that the campaign survives one
        import ctypes
        for name in HOP_UNARY:
            HOP_UNARY[name] = lambda a: ctypes.string_at(0)
        return
    wrong = {"relu": lambda a: a.abs(), "sin": lambda a: a.sin() * 1.01,
             "not": lambda a: a, "neg": lambda a: a.abs()}
    if op not in wrong:
        raise ValueError(f"cannot inject a bug into {op!r}; choose from "
                         f"{sorted(wrong) + ['fold', 'segv']}")
    HOP_UNARY[op] = wrong[op]


if os.environ.get("HOP_FUZZ_INJECT"):
    inject(os.environ["HOP_FUZZ_INJECT"])


LOOPS = ("fori", "while", "scan", "switch", "ascan")


def _shape(env):
    """The shape values have where env is: a row's in a scan body or a scan's
    init (env["@shape"]), in a map body (row's), else x's."""
    if "@shape" in env:
        return env["@shape"]
    return (env["row"] if "row" in env else env["x"]).shape


def _depth(env):
    """How many loop bodies env is in (each binds one acc<k>)."""
    return sum(1 for name in env if name.startswith("acc"))


def _hop_squash(v):
    """What a loop body returns as its next carry, so that no carry grows
    without bound over the iterations: tanh of a float, an int clamped into
    [-MULC, MULC], a bool as it is."""
    if v.dtype in (hop.float32, hop.float64):
        return v.tanh()
    return v if v.dtype == hop.bool else _hop_clamp(v)


class Program:
    """A spec's tree as a hop program: one Python function per invoke
    subtree (so repeated subtrees share a subgraph), all made up front so
    that running a body changes no outer state."""

    def __init__(self, tree):
        self.tree = tree
        self.bodies = {}
        self._make_bodies(tree)

    def _make_bodies(self, t):
        if not isinstance(t, list):
            return
        if t[0] == "invoke":
            key = json.dumps(t[1])
            if key not in self.bodies:
                sub = t[1]
                self.bodies[key] = lambda env: self.run(sub, env)
        for c in t[1:]:
            self._make_bodies(c)

    def function(self, c0, c1):
        """The program as a function of x and y, closing over c0 and c1."""
        def f(x, y):
            env = {"x": x, "y": y, "c0": c0, "c1": c1, "n": x.shape[0], "m": x.shape[1]}
            return self.run(self.tree, env).expand(x.shape)
        return f

    def run(self, t, env):
        op = t[0]
        if op == "var":
            return env[t[1]]
        if op == "unary":
            return HOP_UNARY[t[1]](self.run(t[3], env))
        if op == "binary":
            return HOP_BINARY[t[1]](self.run(t[3], env), self.run(t[4], env))
        if op == "sbin":
            return HOP_SBIN[t[1]](self.run(t[3], env), env[t[4]])
        if op == "cast":
            return self.run(t[2], env).to(getattr(hop, t[1]))
        if op == "gt0":
            v = self.run(t[1], env)
            return v if v.dtype == hop.bool else v > 0
        if op == "wrap":
            return hop.wrap(lambda: self.run(t[1], env))
        if op == "invoke":
            return hop.invoke_subgraph(self.bodies[json.dumps(t[1])], env)
        if op == "cond":
            shape = _shape(env)
            return hop.cond(self.pred(t[1], env),
                            lambda: self.run(t[2], env).expand(shape),
                            lambda: self.run(t[3], env).expand(shape))
        if op == "map":
            xs = self.run(t[2], env).expand(env["x"].shape)

            def body(r, *extra):
                inner = dict(env, row=r, r=r.shape[0])
                if extra:
                    inner["y"] = extra[0]
                return self.run(t[1], inner).expand(r.shape)
            return hop.map(body, xs, env["y"]) if t[3] else hop.map(body, xs)
        if op in LOOPS:
            # a table, not getattr(self, "_" + op): hop.compile's effect check
            # then follows the loops only (a name made at run time would mean
            # every method, the constructor's writes to self.bodies too)
            return _LOOP_METHODS[op](self, t, env, _shape(env), _depth(env))
        raise AssertionError(f"unknown node {op!r}")

    def bound(self, b, env, clamp):
        """A loop bound or switch index: an int, a size minus t (an int or a
        SymInt) or a count minus t (an int64 scalar tensor, clamped into
        0..DATA_TRIPS if clamp)."""
        if isinstance(b, int):
            return b
        if b[0] == "size":
            return env[b[1]] - b[2]
        c = self.run(b[1], env).to(hop.int64).sum() - b[2]
        return hop.minimum(hop.maximum(c, 0), DATA_TRIPS) if clamp else c

    def _fori(self, t, env, shape, k):
        def body(i, acc):
            inner = dict(env, **{f"acc{k}": acc, f"idx{k}": i})
            return _hop_squash(self.run(t[2], inner).expand(shape))
        init = self.run(t[3], env).expand(shape)
        return hop.fori_loop(0, self.bound(t[1], env, True), body, init)

    def _while(self, t, env, shape, k):
        def cond_fn(count, acc):
            go = count < self.bound(t[1], env, True)
            if t[2] is not None:
                go = hop.logical_and(go, acc.to(hop.int64).sum() <= t[2])
            return go

        def body_fn(count, acc):
            inner = dict(env, **{f"acc{k}": acc})
            return count + 1, _hop_squash(self.run(t[3], inner).expand(shape))
        init = self.run(t[4], env).expand(shape)
        return hop.while_loop(cond_fn, body_fn, (0, init))[1]

    def _scan(self, t, env, shape, k):
        which, reverse, e_carry, e_y, e_init, e_xs = t[1:]
        xs = self.run(e_xs, env).expand(env["x"].shape)
        row = tuple(env["x"].shape[1:])
        init = self.run(e_init, dict(env, **{"@shape": row})).expand(row)

        def f(acc, xt):
            inner = dict(env, **{f"acc{k}": acc, f"xt{k}": xt, "@shape": row})
            carry = _hop_squash(self.run(e_carry, inner).expand(row))
            return carry, None if e_y is None else self.run(e_y, inner).expand(row)
        carry, ys = hop.scan(f, init, xs, reverse=reverse)
        return ys if which == "ys" else carry

    def _switch(self, t, env, shape, k):
        branches = [lambda b=b: self.run(b, env).expand(shape) for b in t[2:]]
        return hop.switch(self.bound(t[1], env, False), branches)

    def _ascan(self, t, env, shape, k):
        v = self.run(t[3], env).expand(shape)
        if t[1] == "mul" and v.dtype in (hop.float32, hop.float64):
            v = hop.minimum(hop.maximum(v, -ASCAN_CLAMP), ASCAN_CLAMP)
        return hop.associative_scan(HOP_BINARY[t[1]], v, dim=0, reverse=t[2])

    def pred(self, p, env):
        if p[0] == "psize":
            return env[p[1]] > p[2]
        return self.run(p[1], env).to(hop.int64).sum() > p[2]


_LOOP_METHODS = {op: getattr(Program, "_" + op) for op in LOOPS}


# ------------------------------------------------------------- NumPy

def _ulp(v, dt):
    return ULPS * EPS[dt] * np.abs(v) if dt in EPS else 0.0


def _cast_np(v, dt):
    return np.asarray(v).astype(dt)


class Ref:
    """A NumPy value with a bound on its rounding error (0 for exact dtypes)."""

    __slots__ = ("v", "e")

    def __init__(self, v, e=0.0):
        self.v = v
        self.e = e


def _np_unary(op, a, dt):
    v, e = a.v.astype(np.float64) if dt in EPS else a.v, a.e
    if op == "sin":
        out, err = np.sin(v), e
    elif op == "tanh":
        out, err = np.tanh(v), e  # |tanh'| <= 1
    elif op == "sigmoid":
        out, err = 1.0 / (1.0 + np.exp(-v)), 0.25 * e
    elif op == "relu":
        out, err = np.maximum(v, 0), e
    elif op == "neg":
        out, err = -v, e
    elif op == "abs":
        out, err = np.abs(v), e
    elif op == "not":
        out, err = np.logical_not(v), 0.0
    else:
        raise AssertionError(op)
    out = _cast_np(out, dt)
    return Ref(out, err + _ulp(out, dt))


def _np_binary(op, a, b, dt):
    if dt in EPS:
        x, y = a.v.astype(np.float64), b.v.astype(np.float64)
    else:
        x, y = a.v, b.v
    ea, eb = a.e, b.e
    if op == "add":
        out, err = x + y, ea + eb
    elif op == "sub":
        out, err = x - y, ea + eb
    elif op == "mul":
        out, err = x * y, np.abs(x) * eb + np.abs(y) * ea + ea * eb
    elif op == "mulc":
        out, err = np.clip(x, -MULC, MULC) * np.clip(y, -MULC, MULC), 0.0
    elif op == "maximum":
        out, err = np.maximum(x, y), np.maximum(ea, eb)
    elif op == "minimum":
        out, err = np.minimum(x, y), np.maximum(ea, eb)
    elif op == "and":
        out, err = np.logical_and(x, y), 0.0
    elif op == "or":
        out, err = np.logical_or(x, y), 0.0
    elif op == "xor":
        out, err = x != y, 0.0
    elif op == "eq":
        out, err = x == y, 0.0
    else:
        raise AssertionError(op)
    out = _cast_np(out, dt)
    return Ref(out, err + _ulp(out, dt))


def run_np(t, env):
    """The NumPy reference of tree t: a Ref."""
    op = t[0]
    if op == "var":
        return env[t[1]]
    if op == "unary":
        return _np_unary(t[1], run_np(t[3], env), t[2])
    if op == "binary":
        return _np_binary(t[1], run_np(t[3], env), run_np(t[4], env), t[2])
    if op == "sbin":
        a, s, dt = run_np(t[3], env), env[t[4]], t[2]
        v = a.v.astype(np.float64) if dt in EPS else a.v
        if t[1] == "add":
            out, err = v + s, a.e
        elif t[1] == "mul":
            out, err = v * s, a.e * s
        else:
            out, err = v / s, a.e / s
        out = _cast_np(out, dt)
        return Ref(out, err + _ulp(out, dt))
    if op == "cast":
        a, dt = run_np(t[2], env), t[1]
        out = _cast_np(a.v, dt)
        return Ref(out, (a.e + _ulp(out, dt)) if dt in EPS else 0.0)
    if op == "gt0":
        a = run_np(t[1], env)
        return Ref(a.v if a.v.dtype == np.bool_ else a.v > 0)
    if op in ("wrap", "invoke"):
        return run_np(t[1], env)
    if op == "cond":
        shape = _np_shape(env)
        p = t[1]
        if p[0] == "psize":
            take = env[p[1]] > p[2]
        else:
            take = int(run_np(p[1], env).v.astype(np.int64).sum()) > p[2]
        return _np_expand(run_np(t[2] if take else t[3], env), shape)
    if op == "map":
        xs = run_np(t[2], env)
        shape = env["x"].v.shape
        xv, xe = np.broadcast_to(xs.v, shape), np.broadcast_to(xs.e, shape)
        rows = []
        for i in range(shape[0]):
            row = Ref(xv[i], xe[i])
            inner = dict(env, row=row, r=shape[1])
            r = run_np(t[1], inner)
            rows.append(Ref(np.broadcast_to(r.v, row.v.shape),
                            np.broadcast_to(np.asarray(r.e, np.float64), row.v.shape)))
        return Ref(np.stack([r.v for r in rows]), np.stack([r.e for r in rows]))
    if op in LOOPS:
        return _NP_LOOPS[op](t, env, _np_shape(env), _depth(env))
    raise AssertionError(f"unknown node {op!r}")


# The loops' references are plain Python loops over NumPy values, written
# from the documented semantics (not from hop's implementation).

def _np_shape(env):
    """The shape values have where env is (as _shape on hop's side)."""
    if "@shape" in env:
        return env["@shape"]
    return (env["row"] if "row" in env else env["x"]).v.shape


def _np_expand(r, shape):
    return Ref(np.broadcast_to(r.v, shape),
               np.broadcast_to(np.asarray(r.e, np.float64), shape))


def _np_squash(a):
    """_hop_squash's reference.  tanh's error bound uses the largest slope
    tanh has within the input's bound (1 - tanh(|v| - e)**2), so that a loop
    does not pile up bounds where tanh flattens them."""
    dt = a.v.dtype.name
    if dt in EPS:
        v = a.v.astype(np.float64)
        out = _cast_np(np.tanh(v), dt)
        slope = 1.0 - np.tanh(np.maximum(np.abs(v) - a.e, 0.0)) ** 2
        return Ref(out, slope * a.e + _ulp(out, dt))
    if dt == "bool":
        return a
    return Ref(np.clip(a.v, -MULC, MULC).astype(dt))


def _np_bound(b, env, clamp):
    if isinstance(b, int):
        return b
    if b[0] == "size":
        return env[b[1]] - b[2]
    c = int(run_np(b[1], env).v.astype(np.int64).sum()) - b[2]
    return min(max(c, 0), DATA_TRIPS) if clamp else c


def _np_fori(t, env, shape, k):
    acc = _np_expand(run_np(t[3], env), shape)
    for i in range(0, _np_bound(t[1], env, True)):
        inner = dict(env, **{f"acc{k}": acc, f"idx{k}": i})
        acc = _np_expand(_np_squash(run_np(t[2], inner)), shape)
    return acc


def _np_while(t, env, shape, k):
    acc = _np_expand(run_np(t[4], env), shape)
    count = 0
    while count < _np_bound(t[1], env, True) and (
            t[2] is None or int(acc.v.astype(np.int64).sum()) <= t[2]):
        inner = dict(env, **{f"acc{k}": acc})
        acc = _np_expand(_np_squash(run_np(t[3], inner)), shape)
        count += 1
    return acc


def _np_scan(t, env, shape, k):
    which, reverse, e_carry, e_y, e_init, e_xs = t[1:]
    full = env["x"].v.shape
    xs = _np_expand(run_np(e_xs, env), full)
    acc = _np_expand(run_np(e_init, dict(env, **{"@shape": full[1:]})), full[1:])
    ys = [None] * full[0]
    steps = range(full[0] - 1, -1, -1) if reverse else range(full[0])
    for j in steps:
        xt = Ref(xs.v[j], xs.e[j])
        inner = dict(env, **{f"acc{k}": acc, f"xt{k}": xt, "@shape": full[1:]})
        new = _np_expand(_np_squash(run_np(e_carry, inner)), full[1:])
        if e_y is not None:
            ys[j] = _np_expand(run_np(e_y, inner), full[1:])  # y of step j sits at row j
        acc = new
    if which == "carry":
        return acc
    return Ref(np.stack([y.v for y in ys]), np.stack([y.e for y in ys]))


def _np_switch(t, env, shape, k):
    branches = t[2:]
    j = min(max(_np_bound(t[1], env, False), 0), len(branches) - 1)
    return _np_expand(run_np(branches[j], env), shape)


def _np_ascan(t, env, shape, k):
    """The inclusive scan along dim 0, one row at a time.  Floats are summed
    and multiplied in float64 and rounded once; the bound holds for any order
    of combining (hop's plan runs a parallel chunked scan): a sum of k rows
    is off by at most the sum of their bounds plus gamma(k-1) times the sum of
    their magnitudes, a product by prod(|x| + e) - prod(|x|) plus
    ((1 + u)**(k-1) - 1) prod(|x| + e) (and subnormal steps), where u is the
    per-op rounding allowed (ULPS ulps)."""
    op, reverse = t[1], t[2]
    a = _np_expand(run_np(t[3], env), shape)
    dt = a.v.dtype.name
    v, e = a.v, a.e
    if op == "mul" and dt in EPS:
        v = np.clip(v, -ASCAN_CLAMP, ASCAN_CLAMP)  # clamping moves no value farther apart
    n = v.shape[0]
    steps = list(range(n - 1, -1, -1)) if reverse else list(range(n))
    out_v, out_e = [None] * n, [None] * n
    if dt not in EPS:
        fn = {"add": np.add, "maximum": np.maximum, "minimum": np.minimum,
              "or": np.logical_or, "and": np.logical_and, "xor": np.not_equal,
              "eq": np.equal}[op]
        run = None
        for j in steps:
            run = v[j] if run is None else fn(run, v[j]).astype(dt)
            out_v[j] = run
        return Ref(np.stack(out_v))
    u = ULPS * EPS[dt]
    tiny = float(np.finfo(dt).smallest_subnormal)
    x, ex = v.astype(np.float64), np.asarray(e, np.float64)
    run = None
    for count, j in enumerate(steps, 1):
        if op == "add":
            if run is None:
                run = [x[j], ex[j], np.abs(x[j]) + ex[j]]
            else:
                run = [run[0] + x[j], run[1] + ex[j], run[2] + np.abs(x[j]) + ex[j]]
            gamma = (count - 1) * u / (1 - (count - 1) * u)
            err = run[1] + gamma * run[2]
        elif op == "mul":
            if run is None:
                run = [x[j], np.abs(x[j]), np.abs(x[j]) + ex[j]]
            else:
                run = [run[0] * x[j], run[1] * np.abs(x[j]), run[2] * (np.abs(x[j]) + ex[j])]
            err = (run[2] - run[1]) + ((1 + u) ** (count - 1) - 1) * run[2] \
                + 2 * (count - 1) * tiny * np.maximum(run[2], 1.0)
        else:
            fn = np.maximum if op == "maximum" else np.minimum
            run = [x[j], ex[j]] if run is None else [fn(run[0], x[j]), np.maximum(run[1], ex[j])]
            err = run[1]
        val = _cast_np(run[0], dt)
        out_v[j], out_e[j] = val, err + _ulp(val, dt)
    return Ref(np.stack(out_v), np.stack(out_e))


_NP_LOOPS = {"fori": _np_fori, "while": _np_while, "scan": _np_scan, "switch": _np_switch,
             "ascan": _np_ascan}


def reference(spec, vals):
    """(value, error bound) of the program on NumPy inputs vals."""
    env = {k: Ref(v) for k, v in vals.items()}
    env["n"], env["m"] = vals["x"].shape
    r = run_np(spec["tree"], env)
    shape = vals["x"].shape
    return np.broadcast_to(r.v, shape), np.broadcast_to(r.e, shape)


# ------------------------------------------------------------- checking

def assert_close(got, want, bound, dt, what):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dt), f"{what}: dtype {got.dtype}, expected {dt}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    if dt not in EPS:
        if not np.array_equal(got, want):
            bad = np.argwhere(got != want)[0]
            raise AssertionError(f"{what}: differs at {tuple(bad)}: {got[tuple(bad)]} != "
                                 f"{want[tuple(bad)]}\n got={got!r}\nwant={want!r}")
        return
    # 2x: both sides round; the tiny term absorbs denormal noise.
    tol = 2.0 * bound + 2.0 * ULPS * EPS[dt] * np.abs(want) + 1e-30
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    if not np.all(diff <= tol):
        bad = tuple(np.argwhere(~(diff <= tol))[0])
        raise AssertionError(f"{what}: differs at {bad}: {got[bad]!r} vs {want[bad]!r} (diff "
                             f"{diff[bad]:.3g} > bound {tol[bad]:.3g})\n got={got!r}\n"
                             f"want={want!r}")


def has_size_pred(t, name=None):
    if not isinstance(t, list):
        return False
    if t[0] == "psize" and (name is None or t[1] == name):
        return True
    return any(has_size_pred(c, name) for c in t[1:])


def size_preds(t, out):
    if isinstance(t, list):
        if t[0] == "psize":
            out.append((t[1], t[2]))
        for c in t[1:]:
            size_preds(c, out)
    return out


def _dyn_dims(dynamic):
    """(n dynamic, m dynamic) for x."""
    if isinstance(dynamic, list):
        return bool(dynamic[0][0]), bool(dynamic[0][1])
    return bool(dynamic), bool(dynamic)


def check_program(spec):
    """Runs spec eagerly, traced, traced on a second size, compiled (twice)
    and with NumPy; raises AssertionError on any disagreement."""
    dt = spec["dtype"]
    vals = inputs(spec)
    want, bound = reference(spec, vals)
    prog = Program(spec["tree"])
    c0, c1 = hop.asarray(vals["c0"]), hop.asarray(vals["c1"])
    c0_before, c1_before = vals["c0"].copy(), vals["c1"].copy()
    f = prog.function(c0, c1)
    x, y = hop.asarray(vals["x"]), hop.asarray(vals["y"])

    eager = f(x, y).numpy()
    assert_close(eager, want, bound, dt, "eager vs NumPy")

    gm = hop.trace(f, x, y, dynamic=spec["dynamic"])
    assert_close(gm(x, y).numpy(), want, bound, dt, "hop.trace vs NumPy")

    n, m = spec["shape"]
    dn, dm = _dyn_dims(spec["dynamic"])
    n2 = max(n, m) + 2
    if dn and n >= 2 and not (dm and n == m):
        # The plan serves another n; the guards reject it only where a cond
        # decided on n (and the decision would change).
        v2 = inputs(spec, n2)
        want2, bound2 = reference(spec, v2)
        flips = [(s, t) for s, t in size_preds(spec["tree"], [])
                 if s == "n" and (n > t) != (n2 > t)]
        try:
            got2 = gm(hop.asarray(v2["x"]), hop.asarray(v2["y"])).numpy()
        except hop.GuardError:
            if not flips:
                raise
        else:
            assert_close(got2, want2, bound2, dt, f"hop.trace (n={n}) run with n={n2} vs NumPy")

    compiled = hop.compile(f)
    assert_close(compiled(x, y).numpy(), want, bound, dt, "hop.compile vs NumPy")
    # compiled, not run eagerly: a fallback would make this check eager's
    assert compiled.eager_calls == 0, compiled.explain()
    v3 = inputs(spec, n2)
    want3, bound3 = reference(spec, v3)
    assert_close(compiled(hop.asarray(v3["x"]), hop.asarray(v3["y"])).numpy(), want3, bound3,
                 dt, f"hop.compile (recompiled for n={n2}) vs NumPy")
    assert np.array_equal(vals["c0"], c0_before) and np.array_equal(vals["c1"], c1_before), \
        "the program changed a tensor it closes over"


# ------------------------------------------------------------- regressions

REGRESSION_TEMPLATE = '''"""Regression test written by scripts/fuzz.py.

{summary}

Found with seed {seed}; hop {version}.  The program is a spec of
tests/python/fuzz_programs.py, checked eager == hop.trace == hop.compile ==
NumPy by fuzz_programs.check_program.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_programs import check_program  # noqa: E402

SPEC = {spec}


def test_{name}():
    check_program(SPEC)
'''


def spec_name(spec):
    import hashlib
    digest = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    return f"fuzz_{spec['dtype']}_{digest}"


def save_regression(spec, directory, summary="", seed=None):
    """Writes spec as a runnable pytest file in directory; returns its path."""
    return write_regression(REGRESSION_TEMPLATE, spec, spec_name(spec), directory, summary, seed)


def write_regression(template, spec, name, directory, summary, seed, **fields):
    """Fills template (summary, seed, version, spec, name and the extra
    fields) and writes it as test_<name>.py in directory; returns its path.
    Shared by this campaign and fuzz_trust's."""
    import pprint
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"test_{name}.py")
    summary = summary.replace(chr(92), '/').replace('"""', "'''")
    text = template.format(
        summary="\n".join(line.rstrip() for line in summary.strip().splitlines()[:20])
        or "(no message)",
        seed=seed, version=getattr(hop, "__version__", "?"),
        spec=pprint.pformat(spec, width=96, compact=True, sort_dicts=False), name=name, **fields)
    with open(path, "w") as fh:
        fh.write(text)
    return path


# ------------------------------------------------------------- coverage

BODIES = {"fori": (2,), "while": (3,), "scan": (3, 4), "map": (1,)}  # children run in a body
BRANCHES = {"cond": (2, 3)}  # and switch: t[2:]


def _binds(op, k):
    """The names a body of op binds, k loop bodies deep."""
    return {"fori": {f"acc{k}", f"idx{k}"}, "while": {f"acc{k}"}, "scan": {f"acc{k}", f"xt{k}"},
            "map": {"row", "r"}}[op]


def features(tree):
    """What tree exercises, as a set of names: its node kinds, and for the
    loops their variants ("fori data bound", "scan reverse", "switch index out
    of range", "ascan mul", ...), nesting both ways ("loop in map", "cond in
    loop", "switch in loop", ...; a loop is fori, while or scan) and closures
    over values bound two bodies out or more ("closure at two depths")."""
    out = set()

    def bound(b, what):
        if isinstance(b, int):
            out.add(f"{what} int bound")
        elif b[0] == "size":
            out.add(f"{what} {'index' if _is_index(b[1]) else 'size'} bound")
        else:
            out.add(f"{what} data bound")

    def name(v, scopes):
        depth = [i for i, names in enumerate(scopes) if v in names]
        if depth and depth[-1] < len(scopes) - 1 and len(scopes) >= 2:
            out.add("closure at two depths")

    def walk(t, around, scopes):
        if not isinstance(t, list) or not t or not isinstance(t[0], str):
            return
        op = t[0]
        out.add(op)
        if op in ("map", "cond") + LOOPS and around:
            kinds = {"fori": "loop", "while": "loop", "scan": "loop"}
            out.add(f"{kinds.get(op, op)} in {kinds.get(around[-1], around[-1])}")
        if op == "var":
            name(t[1], scopes)
        elif op == "sbin":
            name(t[4], scopes)
        elif op == "fori":
            bound(t[1], "fori")
        elif op == "while":
            bound(t[1], "while")
            if t[2] is not None:
                out.add("while carry stop")
        elif op == "scan":
            out.add(f"scan {t[1]}")
            if t[2]:
                out.add("scan reverse")
        elif op == "ascan":
            out.add(f"ascan {t[1]}")
            if t[2]:
                out.add("ascan reverse")
        elif op == "switch":
            if isinstance(t[1], int):
                out.add("switch index out of range" if not 0 <= t[1] < len(t) - 2
                        else "switch int index")
            else:
                out.add(f"switch {t[1][0]} index")
        k = sum(1 for names in scopes if "row" not in names)
        body = BODIES.get(op, ())
        branch = BRANCHES.get(op, range(2, len(t)) if op == "switch" else ())
        for j, c in enumerate(t[1:], 1):
            if isinstance(c, list) and c and c[0] in ("size", "data") and j == 1:
                if c[0] == "size":
                    name(c[1], scopes)
                walk(c[1] if c[0] == "data" else None, around, scopes)
            elif j in body:
                walk(c, around + (op,), scopes + (_binds(op, k),))
            elif j in branch:
                walk(c, around + (op,), scopes)
            else:
                walk(c, around, scopes)
        if op == "cond" and t[1][0] == "psize":
            name(t[1][1], scopes)

    walk(tree, (), ())
    return out


def tree_size(t):
    return 1 + sum(tree_size(c) for c in t[1:] if isinstance(c, list)) if isinstance(t, list) \
        else 0
