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

Every node is evaluated four ways: eagerly with hop, under hop.trace, under
hop.compile, and with NumPy.  Integer and bool programs must agree exactly.
Float results are compared against a running error bound: the NumPy
reference carries, per element, a bound on how far a correctly rounded
implementation may drift (a few ulps per op, propagated through each op's
condition number), so that sin(10**4 * x) does not give false alarms while a
wrong answer still does.  Conditions (cond preds) are only computed from exact
values (bool and int subtrees, comparisons of inputs with 0), so every
implementation takes the same branch.
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

def _cast_sources(dt, main):
    """dtypes e may have in ["cast", dt, e]: conversions that are exact (or
    correctly rounded, float64 -> float32), and that can reach main."""
    if kind(dt) == "float":
        return [s for s in DTYPES if s != dt]
    if kind(dt) == "int":
        return [s for s in INTS if s != dt] + ["bool"]
    return []


@functools.lru_cache(maxsize=None)
def leaves(ctx, dt, main):
    """The smallest trees of dtype dt: an input, or an input made dt exactly."""
    names = ["x", "y", "c0", "c1"] if ctx == "full" else ["row", "y", "c0", "c1"]
    var = st.sampled_from(names).map(lambda v: ["var", v])
    if dt == main:
        return var
    if dt == "bool":
        return var.map(lambda v: ["gt0", v])
    if main == "bool" or kind(main) == kind(dt) or kind(dt) == "float":
        return var.map(lambda v: ["cast", dt, v])
    # float main, int dt: through bool (a float -> int cast is not exact).
    return var.map(lambda v: ["cast", dt, ["gt0", v]])


@functools.lru_cache(maxsize=None)
def sizes(ctx):
    return st.sampled_from(["n", "m"] if ctx == "full" else ["n", "m", "r"])


@functools.lru_cache(maxsize=None)
def exprs(ctx, dt, main, depth=0):
    """Trees of dtype dt valid in ctx ("full": values broadcastable to x's
    shape; "row": to a row's)."""
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
        options.append(st.tuples(st.just("sbin"), st.sampled_from(SBIN[k]), st.just(dt), sub(),
                                 sizes(ctx)).map(list))
    sources = _cast_sources(dt, main)
    if sources:
        options.append(st.sampled_from(sources).flatmap(
            lambda s: st.tuples(st.just("cast"), st.just(dt), sub(s)).map(list)))
    if dt == "bool" and main != "bool":
        # A comparison of an exact value: an int tree, or a float input.
        src = main if kind(main) == "int" else None
        options.append((sub(src) if src else leaves(ctx, main, main)).map(lambda e: ["gt0", e]))
    if ctx == "full":
        # xs has the inputs' dtype, so that a row is like y, c0 and c1.
        options.append(st.tuples(st.just("map"), sub(dt, "row"), sub(main), st.booleans())
                       .map(list))
    return st.one_of(options)


@functools.lru_cache(maxsize=None)
def preds(ctx, main, depth):
    return st.one_of(
        st.tuples(st.just("pexpr"), exprs(ctx, "bool", main, depth), st.integers(0, 3)).map(list),
        st.tuples(st.just("psize"), sizes(ctx), st.integers(1, 5)).map(list),
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
            base = env["row"] if "row" in env else env["x"]
            return hop.cond(self.pred(t[1], env),
                            lambda: self.run(t[2], env).expand(base.shape),
                            lambda: self.run(t[3], env).expand(base.shape))
        if op == "map":
            xs = self.run(t[2], env).expand(env["x"].shape)

            def body(r, *extra):
                inner = dict(env, row=r, r=r.shape[0])
                if extra:
                    inner["y"] = extra[0]
                return self.run(t[1], inner).expand(r.shape)
            return hop.map(body, xs, env["y"]) if t[3] else hop.map(body, xs)
        raise AssertionError(f"unknown node {op!r}")

    def pred(self, p, env):
        if p[0] == "psize":
            return env[p[1]] > p[2]
        return self.run(p[1], env).to(hop.int64).sum() > p[2]


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
        base = env["row"] if "row" in env else env["x"]
        p = t[1]
        if p[0] == "psize":
            take = env[p[1]] > p[2]
        else:
            take = int(run_np(p[1], env).v.astype(np.int64).sum()) > p[2]
        r = run_np(t[2] if take else t[3], env)
        return Ref(np.broadcast_to(r.v, base.v.shape), np.broadcast_to(r.e, base.v.shape))
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
    raise AssertionError(f"unknown node {op!r}")


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


def tree_size(t):
    return 1 + sum(tree_size(c) for c in t[1:] if isinstance(c, list)) if isinstance(t, list) \
        else 0
