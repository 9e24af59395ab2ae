"""scripts/plan_text_snapshot.py - the texts a change to lowering or naming must
keep byte for byte: each program's graph code, table and DOT text, the plan's
EXPLAIN dump and an error message or two, written to one file.

    /usr/bin/python3 scripts/plan_text_snapshot.py BUILD OUT

Run it with the build before a change and after it, then `cmp` the two files
(issue #30's lowering pass: a fused group built once, its text made when asked).
The programs: bench/'s workloads (trace_node's chain, trace_lower's nested
program, the scale programs), examples/dask_map_blocks.py's function, and the
graphs of a few tests (every loop HOP, dtypes that convert inside a fused
group, comparisons, where, casts, f16, dynamic sizes with SymInt operands).
"""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "python"))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
import hop  # noqa: E402
from workloads import chain_fn, nested, nested_program, repeated  # noqa: E402


def mixed(x, n):
    a = (x * 2 + 1).relu().exp()
    b = hop.where(a > 1.5, a, x - 0.25)
    c = (b.to(hop.float16) * 3).to(hop.float32) + (n * 2).to(hop.float32)
    d = ((x > 0) & (a < 4.0)) | (x == 0.5)
    e = d.to(hop.int32) * 7 - 3
    return c.abs().sqrt() + e.to(hop.float32), (n + 1) * 3 < 40


def dyn(x):
    s = x.size(0)
    return (x * s + 1.0) * (x.sum() + s - 2)


def loops(x):
    y = hop.fori_loop(0, 5, lambda i, v: v * 0.999 + 0.001, x)
    w = hop.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2 - 1),
                       (hop.tensor(0), y))[1]
    _, hs = hop.scan(lambda h, r: ((h + r).tanh(),) * 2, x[0], x)
    z = hop.associative_scan(lambda a, b: a + b, x)
    s = hop.switch(hop.tensor(1), [lambda v: v + 1, lambda v: v * 2, lambda v: -v], x)
    return w + z[0] + s[0], hs


def programs():
    x16, y16 = hop.randn(16, seed=1), hop.randn(16, seed=2)
    x8 = hop.randn(8, 16, seed=3)
    yield "chain_1000", chain_fn(1000), (x16, y16), {}
    yield "chain_100", chain_fn(100), (x16, y16), {}
    yield "trace_lower", nested_program(16), (x8, y16), {}
    yield "wrap_x30", repeated(lambda v: hop.wrap(lambda u: u + 1.0, v), 30), (x16,), {}
    yield "cond_x30", repeated(lambda v: hop.cond(v.sum() > 0, lambda u: u + 1.0,
                                                  lambda u: u - 1.0, (v,)), 30), (x16,), {}
    yield "nested_20", nested(20), (x16,), {}
    yield "mixed", mixed, (x8, hop.arange(16).to(hop.int64)), {}
    yield "dyn", dyn, (x8,), {"dynamic": True}
    yield "dyn_chain", chain_fn(200), (x8, x8), {"dynamic": True}
    yield "loops", loops, (x8,), {}
    yield "map_row", lambda x, w, b: hop.map(lambda r, w, b: (r * w + b).relu(), x, w, b), \
        (x8, y16, y16), {}
    # examples/dask_map_blocks.py's model (the example itself needs dask)
    w = hop.randn(16, seed=1)
    yield "example_dask_model", (lambda x: hop.cond(
        x.sum() > 0, lambda: hop.map(lambda r: (r * w).tanh(), x), lambda: x * 0.5)), \
        (x8,), {"dynamic": True}


def texts(gm, out, path="forward"):
    out.append(f"--- {path} code\n{gm.code}")
    out.append(f"--- {path} table\n{gm.tabular()}")
    out.append(f"--- {path} dot\n{gm.to_dot()}")
    out.append(f"--- {path} nodes {[n.name for n in gm.graph.nodes]}")
    for name, sub in gm.subgraphs.items():
        texts(sub, out, path + "." + name)


def main():
    out = []
    for name, fn, args, kw in programs():
        out.append(f"===== {name}")
        try:
            gm = hop.trace(fn, *args, **kw)
            texts(gm, out)
            out.append("--- plan\n" + gm.plan.dump())
            cf = hop.compile(fn)
            cf(*args)
            out.append("--- compile explain\n" + str(cf.explain()))
        except Exception as e:  # noqa: BLE001 - the message is part of the snapshot
            out.append(f"--- error {type(e).__name__}: {e}")
    # an error that names a fused group's value: wrong input shape at run time
    gm = hop.trace(lambda x, y: (x * y + 1.0).relu(), hop.ones(4), hop.ones(4))
    try:
        gm(hop.ones(4), hop.ones(5))
    except Exception as e:  # noqa: BLE001
        out.append(f"--- run error {type(e).__name__}: {e}")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
