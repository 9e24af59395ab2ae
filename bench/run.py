#!/usr/bin/python3
"""bench/run.py - hop side by side with NumPy and PyTorch (issue #7).

    /usr/bin/python3 bench/run.py [--quick] [--only ROW[,ROW...]] [--json FILE] [--build DIR]
                                  [--markdown]

Every row of the issue's table is measured in this one process (hop next to
NumPy and PyTorch); the C-level rows (lifting, memory, allocations) come from
the C microbenchmarks of the same build, run as subprocesses and parsed.
Times are medians of many samples taken with time.perf_counter_ns after a
warm-up, with the garbage collector off; p10 and p90 go to --json.  Single
thread figures run with hop, OpenBLAS and PyTorch on one thread.  Benchmarks
are figures, not tests: nothing here fails on a missed target.
"""

import os

# One BLAS thread for NumPy's matmul (the "per thread" comparison); it must be
# set before NumPy loads OpenBLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

def _find_build(argv):
    """--build DIR (or $HOP_BUILD): its python/ goes first on sys.path."""
    for i, a in enumerate(argv):
        if a == "--build" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--build="):
            return a.split("=", 1)[1]
    return os.environ.get("HOP_BUILD")


_build = _find_build(sys.argv[1:])
if _build and os.path.isdir(os.path.join(_build, "python", "hop")):
    sys.path.insert(0, os.path.join(_build, "python"))

import numpy as np  # noqa: E402

import hop  # noqa: E402
from workloads import (best_cpu_ns, chain_fn, chain_with, grad_program, hop_step,  # noqa: E402
                       nested, nested_program, py_step, repeated, rnn_loop)
import c_side  # noqa: E402
from c_side import addr, c_bench, c_note, cref, hop_over_c  # noqa: E402
from np_programs import (blas_shapes, np_branchy, np_branchy_cond,  # noqa: E402,F401
                         np_programs)
from report import machine, print_table  # noqa: E402

try:
    import torch
    import torch.fx
except ImportError:  # the hop and NumPy columns still run
    torch = None

QUICK = False
NOTE_NO_TORCH = "PyTorch is not installed"


# ---------------------------------------------------------------- timing

class Stat:
    """Per-call figures of one measurement, in ns."""

    def __init__(self, samples):
        s = sorted(samples)
        self.median = statistics.median(s)
        self.p10 = s[int(0.1 * (len(s) - 1))]
        self.p90 = s[int(round(0.9 * (len(s) - 1)))]
        self.n = len(s)

    def as_dict(self, scale=1.0):
        return {"median": self.median * scale, "p10": self.p10 * scale,
                "p90": self.p90 * scale, "samples": self.n}


def _calibrate(fn, sample_ms):
    number = 1
    while True:
        t0 = time.perf_counter_ns()
        for _ in range(number):
            fn()
        dt = time.perf_counter_ns() - t0
        if dt >= sample_ms * 1e6 or number >= 1 << 20:
            return number
        number *= 2 if dt == 0 else max(2, min(10, int(sample_ms * 1e6 / dt) + 1))


def measure_all(fns, per=1, sample_ms=None, repeat=None, warmup=3):
    """Times each of fns (a dict name -> callable) after a warm-up, in
    samples of `number` calls (number chosen so that a sample lasts
    sample_ms), alternating between them sample by sample so that a noisy
    neighbour slows every contender alike.  Returns name -> Stat of ns per
    call / per."""
    sample_ms = sample_ms or (2 if QUICK else 10)
    repeat = repeat or (5 if QUICK else 25)
    numbers = {}
    for name, fn in fns.items():
        for _ in range(warmup):
            fn()
        numbers[name] = _calibrate(fn, sample_ms)
    samples = {name: [] for name in fns}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for name, fn in fns.items():
                number = numbers[name]
                t0 = time.perf_counter_ns()
                for _ in range(number):
                    fn()
                samples[name].append((time.perf_counter_ns() - t0) / number / per)
    finally:
        if enabled:
            gc.enable()
    return {name: Stat(v) for name, v in samples.items()}


def measure(fn, **kw):
    return measure_all({"fn": fn}, **kw)["fn"]


def rate(stat, amount):
    """A throughput (amount per second) from a time Stat; p10 and p90 swap."""
    return {"median": amount / stat.median * 1e9, "p10": amount / stat.p90 * 1e9,
            "p90": amount / stat.p10 * 1e9, "samples": stat.n}


def one_thread():
    hop.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)


# ------------------------------------------------------------ a busy machine

class CpuHog:
    """A CPU-bound process beside the measurement (a `while True` loop in
    another Python), for the rows that must hold on a busy machine.  It is
    a session of its own, as another user's work is: under the kernel's
    autogroup scheduling (sched_autogroup_enabled) a child in the bench's
    session would share the bench's CPU share instead of competing for
    the machine (BENCHMARKS.md, "threads on a busy machine")."""

    def __enter__(self):
        self.p = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                  start_new_session=True)
        time.sleep(0.2)
        return self

    def __exit__(self, *exc):
        self.p.kill()
        self.p.wait()


# ----------------------------------------------------------------- rows

ROWS = []


def row(rid, title, target):
    def deco(fn):
        ROWS.append((rid, title, target, fn))
        return fn
    return deco


def result(unit, hop_v, numpy_v=None, torch_v=None, met=None, ratios="", notes="", extra=None,
           c_v=None, hop_c=None):
    """One row's figures; c_v is the hand-written C reference's figure and
    hop_c hop/C (hop_over_c)."""
    return {"unit": unit, "hop": hop_v, "numpy": numpy_v, "torch": torch_v, "met": met,
            "ratios": ratios, "notes": notes, "extra": extra or {}, "c": c_v, "hop_c": hop_c}


def scaled(d, div):
    """A timing dict (minimum, median, ... and samples) with each time divided
    by div (1e3: ns to us; CREF_REPS: per call of the C reference's loop);
    None for None."""
    return {k: v / div if k != "samples" else v for k, v in d.items()} if d else None


def torch_result(unit, div, h, t, times, name, notes):
    """A row measured against torch alone (h hop's times, t torch's or None
    without torch), in unit (each time divided by div): met when torch takes
    at least `times` times as long as hop; without torch, unknown and noted."""
    met = t["median"] >= times * h["median"] if t else None
    return result(unit, scaled(h, div), None, scaled(t, div), met,
                  join(speedup(t, h, name)), notes if t else NOTE_NO_TORCH)


def speedup(other, mine, name):
    """'NumPy/hop 3.1x': how many times less time hop takes."""
    if other is None or mine is None:
        return None
    return f"{name}/hop {other['median'] / mine['median']:.2f}x"


def faster(mine, other, name):
    """For throughputs: 'hop/NumPy 1.3x'."""
    if other is None or mine is None:
        return None
    return f"hop/{name} {mine['median'] / other['median']:.2f}x"


def join(*parts):
    return ", ".join(p for p in parts if p)


@row("trace_node", "tracing from Python, per node (1,000-op function)", "fx/hop >= 150x")
def r_trace_node():
    f = chain_fn(1000)
    x, y = hop.randn(16, seed=1), hop.randn(16, seed=2)

    def trace_only():
        tr = hop._C.Trace()
        px, py = tr.add_input("x", x, False), tr.add_input("y", y, False)
        tr.start()
        try:
            tr.output([f(px, py)])
        finally:
            tr.stop()

    fns = {"hop": lambda: hop.trace(f, x, y), "trace_only": trace_only}
    if torch is not None:
        from torch.fx.experimental.proxy_tensor import make_fx
        xt, yt = torch.randn(16), torch.randn(16)
        fns["fx"] = lambda: torch.fx.symbolic_trace(f)
        fns["make_fx"] = lambda: make_fx(f)(xt, yt)
    s = measure_all(fns, per=1000, sample_ms=20, repeat=3 if QUICK else 11, warmup=1)
    h = s["hop"].as_dict()
    extra = {"hop_trace_only": s["trace_only"].as_dict()}
    t = None
    notes = ("hop: hop.trace (trace + lower to a plan, a callable GraphModule); "
             f"tracing alone {s['trace_only'].median:.0f} ns/node")
    if torch is not None:
        t = s["fx"].as_dict()
        extra["torch_make_fx"] = s["make_fx"].as_dict()
        notes += (f"; PyTorch: torch.fx.symbolic_trace; make_fx "
                  f"{s['make_fx'].median / 1e3:.0f} us/node (make_fx/hop "
                  f"{s['make_fx'].median / h['median']:.0f}x)")
    met = t["median"] / h["median"] >= 150 if t else None  # issue #30's target
    return result("ns/node", h, None, t, met, speedup(t, h, "fx"), notes, extra)


def count_nodes(gm):
    return len(gm.graph.nodes) + sum(count_nodes(s) for s in gm.subgraphs.values())


@row("trace_lower", "trace + lower a 1,000-node program with nested HOPs", "fx/hop >= 50x")
def r_trace_lower():
    x, y = hop.randn(8, 16, seed=1), hop.randn(16, seed=2)
    nseg = 1
    while count_nodes(hop.trace(nested_program(nseg), x, y)) < 1000:
        nseg += 1
    f = nested_program(nseg)
    nodes = count_nodes(hop.trace(f, x, y))
    fns = {"hop": lambda: hop.trace(f, x, y)}
    if torch is not None:
        g = chain_fn(1000)

        def fx_trace():
            torch.fx.symbolic_trace(g).recompile()
        fns["fx"] = fx_trace
    s = measure_all(fns, sample_ms=20, repeat=3 if QUICK else 11, warmup=1)
    h = s["hop"].as_dict()
    t = s["fx"].as_dict() if "fx" in s else None
    notes = (f"hop: hop.trace of {nseg} map(wrap(20 ops)) / cond(20 ops) / invoke_subgraph(20 "
             f"ops) segments, {nodes} nodes in all graphs, lowered to a plan")
    if t:
        notes += "; PyTorch: torch.fx.symbolic_trace + recompile of 1,000 ops (no HOPs)"
    met = t["median"] / h["median"] >= 50 if t else None  # issue #30's target
    return result("ns", h, None, t, met, speedup(t, h, "fx"), notes,
                  {"nodes": nodes})


@row("lift", "lifting: first lift at depth 64; repeated use", "linear in depth; O(1)")
def r_lift():
    out = c_bench("bench_lift")
    if out is None:
        return None
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", line)
        if m:
            d = int(m.group(1))
            rows[d] = {"first_ns": float(m.group(2)), "per_level_ns": float(m.group(3)),
                       "use_ns": float(m.group(4))}
    d64 = rows[64]
    base = rows[min(rows)]
    deepest = rows[max(rows)]
    # Linear: the cost per level up to depth 64 stays within 2x of depth 1;
    # O(1): a repeated use at the deepest level costs at most 2x one at depth 1.
    linear = max(r["per_level_ns"] for d, r in rows.items() if d <= 64) <= 2 * base["per_level_ns"]
    flat = deepest["use_ns"] <= 2 * base["use_ns"]
    per_level = ", ".join(f"d={d}: {r['per_level_ns']:.0f}" for d, r in sorted(rows.items()))
    return result("ns", {"median": d64["first_ns"]}, None, None, linear and flat, "",
                  f"C bench_lift: first lift at depth 64 {d64['first_ns'] / 1e3:.1f} us; "
                  f"ns per level {per_level}; repeated use {d64['use_ns']:.1f} ns at depth 64, "
                  f"{deepest['use_ns']:.1f} ns at depth {max(rows)}",
                  {"by_depth": rows})


def three(fns, h, n, t, **kw):
    """hop, NumPy and PyTorch figures (dicts) from one interleaved run."""
    if torch is None:
        fns.pop(t, None)
    s = measure_all(fns, **kw)
    return (s[h].as_dict(), s[n].as_dict() if n in s else None,
            s[t].as_dict() if t in s else None, s)


CREF_REPS = 1000


@row("plan_op", "compiled plan, per small op (16 floats, 256-op chain)", "<= 3 ns")
def r_plan_op():
    nops = 256
    f = chain_fn(nops)
    x, y = hop.randn(16, seed=1), hop.randn(16, seed=2)
    cf = hop.compile(f)
    cf(x, y)
    xn, yn = x.numpy(), y.numpy()
    xt, yt = (torch.from_numpy(xn), torch.from_numpy(yn)) if torch else (None, None)
    fns = {"hop": lambda: cf(x, y), "np": lambda: f(xn, yn), "torch": lambda: f(xt, yt)}
    lib = cref()
    if lib:
        co = np.empty_like(xn)
        lib.cref_chain(addr(xn), addr(yn), addr(co), nops, 1)
        assert np.array_equal(co, cf(x, y).numpy()), "the C reference gives other bits than hop"
        fns["c"] = lambda: lib.cref_chain(addr(xn), addr(yn), addr(co), nops, CREF_REPS)
    h, n, t, s = three(fns, "hop", "np", "torch", per=nops)
    c = scaled(s["c"].as_dict(), CREF_REPS) if lib else None
    hc = hop_over_c(h, c)
    notes = (f"a {nops}-op elementwise chain on f32[16]; hop: hop.compile'd call from Python / "
             f"{nops}; NumPy, PyTorch: eager ops; {c_note()}: the chain in registers, "
             f"{CREF_REPS} calls per ctypes call")
    out = c_bench("bench_plan")
    extra = {}
    m = re.search(r"chain of 16 ops on 16 f32, fused\s+([\d.]+) ns per op", out or "")
    if m:
        extra["c_fused_chain16_ns_per_op"] = float(m.group(1))
        notes += f"; C bench_plan, 16-op chain: {m.group(1)} ns/op"
    return result("ns/op", h, n, t, h["median"] <= 3,
                  join(speedup(n, h, "NumPy"), speedup(t, h, "torch")), notes, extra, c_v=c,
                  hop_c=hc)


@row("eager_op", "eager hop op from Python (16 floats)", "<= 60 ns")
def r_eager_op():
    one_thread()
    a, b = hop.randn(16, seed=1), hop.randn(16, seed=2)
    an, bn = a.numpy(), b.numpy()
    at, bt = (torch.from_numpy(an), torch.from_numpy(bn)) if torch else (None, None)
    h, n, t, _ = three({"hop": lambda: a + b, "np": lambda: an + bn, "torch": lambda: at + bt},
                       "hop", "np", "torch")
    return result("ns", h, n, t, h["median"] <= 60,
                  join(speedup(n, h, "NumPy"), speedup(t, h, "torch")),
                  "a + b on f32[16], a new result each call")


@row("np_eager_op", "eager hop.numpy op vs NumPy (a + b, a * 2.0, a * a.sum(), a < b, np.sin(a), "
                   "np.exp(a), "
                   "a.sum(), np.sum(a), a.mean(), a.max(), m.sum(axis=0); 16 and 1M float64)",
     "<= 2x NumPy at 16, >= 1x at 1M")
def r_np_eager_op():
    import hop.numpy as hnp
    one_thread()
    per = {}
    ok = True
    for n in (16, 1_000_000):
        a, b = hnp.ones(n), hnp.ones(n) * 2.0
        an, bn = np.ones(n), np.ones(n) * 2.0
        # (m: the same elements as a 2-d array, 4 x n/4, reduced over its rows)
        m, mn = a.reshape(4, n // 4), an.reshape(4, n // 4)
        # (s: a reduction's 0-d result, NumPy's np.float64)
        s0, s0n = a.sum(), an.sum()
        cases = {"add": (lambda: a + b, lambda: an + bn),
                 "mul_scalar": (lambda: a * 2.0, lambda: an * 2.0),
                 "mul_0d": (lambda: a * s0, lambda: an * s0n),
                 "less": (lambda: a < b, lambda: an < bn),
                 "sin": (lambda: np.sin(a), lambda: np.sin(an)),
                 "exp": (lambda: np.exp(a), lambda: np.exp(an)),
                 "sum": (lambda: a.sum(), lambda: an.sum()),
                 "np_sum": (lambda: np.sum(a), lambda: np.sum(an)),
                 "mean": (lambda: a.mean(), lambda: an.mean()),
                 "max": (lambda: a.max(), lambda: an.max()),
                 "sum_axis0": (lambda: m.sum(axis=0), lambda: mn.sum(axis=0))}
        for name, (hf, nf) in cases.items():
            s = measure_all({"hop": hf, "np": nf}, repeat=11 if n > 16 else None)
            hm, nm = s["hop"].median, s["np"].median
            if n == 16 and name == "add":
                h, nv = s["hop"].as_dict(), s["np"].as_dict()
            per[f"{name}_{n}"] = {"hop_ns": hm, "numpy_ns": nm, "hop_over_numpy": hm / nm}
            ok = ok and (hm <= 2 * nm if n == 16 else hm <= nm)
    worst16 = max(v["hop_over_numpy"] for k, v in per.items() if k.endswith("_16"))
    worst1m = max(v["hop_over_numpy"] for k, v in per.items() if k.endswith("_1000000"))
    return result("ns", h, nv, None, ok,
                  f"hop/NumPy worst {worst16:.2f}x at 16, {worst1m:.2f}x at 1M",
                  "hop.numpy arrays outside hop.compile (the eager fast path, _eager); the "
                  "figures: a + b at 16; every op and size in extra", {"per_op": per})


def _per_call_within_2x(cases, figure, notes):
    """The eager hop.numpy rows: each case {name: (hop call, NumPy call)}
    measured side by side; the row's figure is case `figure`'s, met when
    every call is within 2x of NumPy's, every call's figures in extra."""
    per, h, nv = {}, None, None
    for name, (hf, nf) in cases.items():
        s = measure_all({"hop": hf, "np": nf})
        hm, nm = s["hop"].median, s["np"].median
        if name == figure:
            h, nv = s["hop"].as_dict(), s["np"].as_dict()
        per[name] = {"hop_ns": hm, "numpy_ns": nm, "hop_over_numpy": hm / nm}
    worst = max(per.items(), key=lambda kv: kv[1]["hop_over_numpy"])
    return result("ns", h, nv, None, worst[1]["hop_over_numpy"] <= 2,
                  f"hop/NumPy worst {worst[1]['hop_over_numpy']:.2f}x ({worst[0]})", notes,
                  {"per_call": per})


@row("np_eager_shape", "eager hop.numpy shape functions vs NumPy (a.reshape, reshape, a[2:5], "
                      "a[1:3, None, ...], a[3], concatenate, where; hnp.f and np.f; 16 float64)",
     "<= 2x NumPy at 16")
def r_np_eager_shape():
    import hop.numpy as hnp
    one_thread()
    a, an = hnp.arange(16.0), np.arange(16.0)
    c, cn = a > 3, an > 3
    # (hnp.f(a): hop.numpy's function; np.f(a): NumPy's, reaching hop.numpy
    # through __array_function__; both against NumPy's np.f on np.ndarrays)
    cases = {"reshape": (lambda: a.reshape(4, 4), lambda: an.reshape(4, 4)),
             "hnp_reshape": (lambda: hnp.reshape(a, (4, 4)), lambda: np.reshape(an, (4, 4))),
             "np_reshape": (lambda: np.reshape(a, (4, 4)), lambda: np.reshape(an, (4, 4))),
             "slice": (lambda: a[2:5], lambda: an[2:5]),
             "basic_key": (lambda: a[1:3, None, ...], lambda: an[1:3, None, ...]),
             "element": (lambda: a[3], lambda: an[3]),
             "hnp_concatenate": (lambda: hnp.concatenate([a, a]),
                                 lambda: np.concatenate([an, an])),
             "np_concatenate": (lambda: np.concatenate([a, a]), lambda: np.concatenate([an, an])),
             "hnp_where": (lambda: hnp.where(c, a, 0.0), lambda: np.where(cn, an, 0.0)),
             "np_where": (lambda: np.where(c, a, 0.0), lambda: np.where(cn, an, 0.0))}
    return _per_call_within_2x(cases, "slice",
                               "hop.numpy arrays outside hop.compile (the shape functions' eager "
                               "fast path, _eager_shape); the figures: a[2:5]; every call in extra")


@row("np_eager_layout", "eager hop.numpy index items, transposes, other memory orders and "
                       "assignments vs NumPy (a[np.int64], a[hop scalar], a.T, np.transpose, "
                       "Fortran-order ufuncs, where, concatenate, m[1, 2] = 3.0, a[2:9] = 0.0, "
                       "m[:] = b, m[1] = b[0], a.fill(1.5); 16 float64)", "<= 2x NumPy at 16")
def r_np_eager_layout():
    import hop.numpy as hnp
    one_thread()
    a, an = hnp.arange(16.0), np.arange(16.0)
    m, mn = a.reshape(4, 4), an.reshape(4, 4)
    f, fn = hnp.asarray(np.asfortranarray(mn)), np.asfortranarray(mn)
    i, j, jn = np.int64(3), hnp.argmax(hnp.arange(4)), np.argmax(np.arange(4))
    k, kn = hnp.arange(16) % 3, np.arange(16) % 3
    b, bn = hnp.ones((4, 4)), np.ones((4, 4))
    cases = {"int64_item": (lambda: a[i], lambda: an[i]),
             "hop_scalar_item": (lambda: m[j], lambda: mn[jn]),
             "int64_bounds": (lambda: a[i:], lambda: an[i:]),
             "T": (lambda: m.T, lambda: mn.T),
             "transpose": (lambda: m.transpose(1, 0), lambda: mn.transpose(1, 0)),
             "np_transpose": (lambda: np.transpose(m), lambda: np.transpose(mn)),
             "hnp_transpose": (lambda: hnp.transpose(m), lambda: np.transpose(mn)),
             "reshape_ones": (lambda: a[None].reshape(16), lambda: an[None].reshape(16)),
             "F_add": (lambda: f + f, lambda: fn + fn),
             "F_gt": (lambda: f > 3, lambda: fn > 3),
             "F_sin": (lambda: np.sin(f), lambda: np.sin(fn)),
             "T_mul": (lambda: m.T * 2.0, lambda: mn.T * 2.0),
             "where_int_cond": (lambda: hnp.where(k, a, 0.0), lambda: np.where(kn, an, 0.0)),
             "F_where": (lambda: hnp.where(f > 3, f, 0.0), lambda: np.where(fn > 3, fn, 0.0)),
             "F_concatenate": (lambda: hnp.concatenate([f, f]),
                               lambda: np.concatenate([fn, fn])),
             "set_element": (lambda: m.__setitem__((1, 2), 3.0),
                             lambda: mn.__setitem__((1, 2), 3.0)),
             "set_slice": (lambda: a.__setitem__(slice(2, 9), 0.0),
                           lambda: an.__setitem__(slice(2, 9), 0.0)),
             "set_array": (lambda: m.__setitem__(slice(None), b),
                           lambda: mn.__setitem__(slice(None), bn)),
             "set_row": (lambda: m.__setitem__(1, b[0]), lambda: mn.__setitem__(1, bn[0])),
             "fill": (lambda: a.fill(1.5), lambda: an.fill(1.5))}
    return _per_call_within_2x(cases, "T",
                               "hop.numpy arrays outside hop.compile (the eager fast paths, _eager "
                               "and _eager_shape, for layouts and index items their first version "
                               "left to the general path); the figures: a.T; every call in extra")


@row("np_eager_take", "eager hop.numpy integer-array and boolean-mask keys, element "
                     "conversions and sizes vs NumPy (a[idx], a[[1, 2, 3]], a[mask], m[idx], "
                     "m[mask], a[idx] = 0.0, a[mask] = 0.0, a.item(3), float(s), int(s), len(a), "
                     "a.shape, m.ndim, m.size; 16 float64, m 4 x 4, s = a[3])",
     "<= 2x NumPy at 16")
def r_np_eager_take():
    import hop.numpy as hnp
    one_thread()
    a, an = hnp.arange(16.0), np.arange(16.0)
    m, mn = a.reshape(4, 4), an.reshape(4, 4)
    i, i_n = hnp.asarray(np.array([1, 5, 3])), np.array([1, 5, 3])
    b, bn = a > 7, an > 7
    r, rn = hnp.asarray(np.array([2, 0])), np.array([2, 0])
    mb, mbn = m > 6, mn > 6
    s, sn = a[3], an[3]
    cases = {"int_array": (lambda: a[i], lambda: an[i_n]),
             "numpy_int_array": (lambda: a[i_n], lambda: an[i_n]),
             "int_list": (lambda: a[[1, 2, 3]], lambda: an[[1, 2, 3]]),
             "mask": (lambda: a[b], lambda: an[bn]),
             "rows": (lambda: m[r], lambda: mn[rn]),
             "mask_2d": (lambda: m[mb], lambda: mn[mbn]),
             "set_int_array": (lambda: a.__setitem__(i, 0.0), lambda: an.__setitem__(i_n, 0.0)),
             "set_mask": (lambda: a.__setitem__(b, 0.0), lambda: an.__setitem__(bn, 0.0)),
             "item": (lambda: a.item(3), lambda: an.item(3)),
             "float_scalar": (lambda: float(s), lambda: float(sn)),
             "int_scalar": (lambda: int(s), lambda: int(sn)),
             "len": (lambda: len(a), lambda: len(an)),
             "shape": (lambda: a.shape, lambda: an.shape),
             "ndim": (lambda: m.ndim, lambda: mn.ndim),
             "size": (lambda: m.size, lambda: mn.size)}
    return _per_call_within_2x(cases, "int_array",
                               "hop.numpy arrays outside hop.compile (the eager fast path for one "
                               "index array, np_eager_take.c); the figures: a[idx]; every call in "
                               "extra")


@row("np_eager_power", "eager hop.numpy a ** b vs NumPy (a ** 2, a ** 0.5, a ** -1, a ** 3, "
                      "a ** 1.7, 2.0 ** a, a ** a of 16 float64 in [1, 16]; i ** 2 of 16 int64)",
     "<= 2x NumPy at 16")
def r_np_eager_power():
    import hop.numpy as hnp
    one_thread()
    a, an = hnp.arange(1.0, 17.0), np.arange(1.0, 17.0)
    i, i_n = hnp.arange(16), np.arange(16)
    cases = {"square": (lambda: a ** 2, lambda: an ** 2),
             "sqrt": (lambda: a ** 0.5, lambda: an ** 0.5),
             "reciprocal": (lambda: a ** -1, lambda: an ** -1),
             "cube": (lambda: a ** 3, lambda: an ** 3),
             "float_power": (lambda: a ** 1.7, lambda: an ** 1.7),
             "reflected": (lambda: 2.0 ** a, lambda: 2.0 ** an),
             "arrays": (lambda: a ** a, lambda: an ** an),
             "int_square": (lambda: i ** 2, lambda: i_n ** 2)}
    return _per_call_within_2x(cases, "square",
                               "hop.numpy arrays outside hop.compile (the ** operator's eager fast "
                               "path, np_eager.c fast_power: NumPy's fast_scalar_power kernels and "
                               "power's plans); the figures: a ** 2; every call in extra")


@row("np_eager_matmul", "eager hop.numpy matrix products vs NumPy (a @ a, m @ m, m @ v, v @ m, "
                       "np.matmul(m, m), np.dot(a, a), hnp.dot(a, a), a.dot(a); a 16 float64, m "
                       "4 x 4, v 4)", "<= 2x NumPy at 16")
def r_np_eager_matmul():
    import hop.numpy as hnp
    one_thread()
    a, an = hnp.arange(16.0), np.arange(16.0)
    m, mn = a.reshape(4, 4), an.reshape(4, 4)
    v, vn = hnp.arange(4.0), np.arange(4.0)
    cases = {"dot_vectors": (lambda: a @ a, lambda: an @ an),
             "matrices": (lambda: m @ m, lambda: mn @ mn),
             "matrix_vector": (lambda: m @ v, lambda: mn @ vn),
             "vector_matrix": (lambda: v @ m, lambda: vn @ mn),
             "np_matmul": (lambda: np.matmul(m, m), lambda: np.matmul(mn, mn)),
             "np_dot": (lambda: np.dot(a, a), lambda: np.dot(an, an)),
             "hnp_dot": (lambda: hnp.dot(a, a), lambda: np.dot(an, an)),
             "method_dot": (lambda: a.dot(a), lambda: an.dot(an))}
    return _per_call_within_2x(cases, "matrices",
                               "hop.numpy arrays outside hop.compile (the eager fast path of the "
                               "matrix products, np_eager.c fast_matmul and fast_dot); the "
                               "figures: m @ m; every call in extra")


@row("np_eager_create", "eager hop.numpy creation vs NumPy (zeros(16), zeros((4, 4)), ones(16), "
                       "empty(16), zeros(16, dtype=np.float32), zeros(16, dtype=int), "
                       "ones(1,000,000), a.copy(), a.astype(np.float32), a.astype(int), "
                       "np.zeros_like(a), hnp.ones_like(a), m.flatten(), m.T.copy(), "
                       "np.copy(a) of 16 float64)", "<= 2x NumPy")
def r_np_eager_create():
    import hop.numpy as hnp
    one_thread()
    a, an = hnp.arange(16.0), np.arange(16.0)
    m, mn = a.reshape(4, 4), an.reshape(4, 4)
    cases = {"zeros": (lambda: hnp.zeros(16), lambda: np.zeros(16)),
             "zeros_2d": (lambda: hnp.zeros((4, 4)), lambda: np.zeros((4, 4))),
             "ones": (lambda: hnp.ones(16), lambda: np.ones(16)),
             "empty": (lambda: hnp.empty(16), lambda: np.empty(16)),
             "zeros_f32": (lambda: hnp.zeros(16, dtype=np.float32),
                           lambda: np.zeros(16, dtype=np.float32)),
             "zeros_int": (lambda: hnp.zeros(16, dtype=int), lambda: np.zeros(16, dtype=int)),
             "ones_1m": (lambda: hnp.ones(1000000), lambda: np.ones(1000000)),
             "copy": (lambda: a.copy(), lambda: an.copy()),
             "astype_f32": (lambda: a.astype(np.float32), lambda: an.astype(np.float32)),
             "astype_int": (lambda: a.astype(int), lambda: an.astype(int)),
             "zeros_like": (lambda: np.zeros_like(a), lambda: np.zeros_like(an)),
             "hnp_ones_like": (lambda: hnp.ones_like(a), lambda: np.ones_like(an)),
             "flatten": (lambda: m.flatten(), lambda: mn.flatten()),
             "T_copy": (lambda: m.T.copy(), lambda: mn.T.copy()),
             "np_copy": (lambda: np.copy(a), lambda: np.copy(an))}
    return _per_call_within_2x(cases, "zeros",
                               "hop.numpy's creation functions (C callables that try the eager "
                               "fast path, np_eager_create.c); the figures: zeros(16); every call "
                               "in extra")


@row("np_eager_join", "eager hop.numpy joins and products vs NumPy (hstack, vstack, stack, "
                     "outer, einsum 'i,i' (hnp and np), 'ij,j->i', 'ij,jk'; hnp.f and np.f; "
                     "16 float64, 16x16)", "<= 2x NumPy")
def r_np_eager_join():
    import hop.numpy as hnp
    one_thread()
    a, an = hnp.arange(16.0), np.arange(16.0)
    m, mn = hnp.asarray(np.arange(256.0).reshape(16, 16)), np.arange(256.0).reshape(16, 16)
    cases = {"hstack": (lambda: hnp.hstack([a, a]), lambda: np.hstack([an, an])),
             "np_hstack": (lambda: np.hstack([a, a]), lambda: np.hstack([an, an])),
             "vstack": (lambda: hnp.vstack([a, a]), lambda: np.vstack([an, an])),
             "stack": (lambda: hnp.stack([a, a], 1), lambda: np.stack([an, an], 1)),
             "outer": (lambda: hnp.outer(a, a), lambda: np.outer(an, an)),
             "einsum_dot": (lambda: hnp.einsum("i,i", a, a), lambda: np.einsum("i,i", an, an)),
             "np_einsum_dot": (lambda: np.einsum("i,i", a, a), lambda: np.einsum("i,i", an, an)),
             "einsum_mv": (lambda: hnp.einsum("ij,j->i", m, a),
                           lambda: np.einsum("ij,j->i", mn, an)),
             "einsum_mm": (lambda: hnp.einsum("ij,jk", m, m), lambda: np.einsum("ij,jk", mn, mn))}
    return _per_call_within_2x(cases, "hstack",
                               "hstack/vstack/stack: NumPy's composition by the eager fast paths "
                               "of indexing and concatenate; outer: multiply of the raveled "
                               "views; einsum: its decisions kept per subscripts, shapes and "
                               "dtypes (_products._EINSUM_PLANS); the figures: hstack; every "
                               "call in extra")


def map_case(rows):
    """The map rows' program and inputs: a compiled map of (r*w + b).relu()
    over rows x 16 floats (called once), its operands and their arrays."""
    x = hop.randn(rows, 16, seed=1)
    w, b = hop.randn(16, seed=2), hop.randn(16, seed=3)
    cf = hop.compile(lambda x, w, b: hop.map(lambda r, w, b: (r * w + b).relu(), x, w, b))
    cf(x, w, b)
    return cf, (x, w, b), (x.numpy(), w.numpy(), b.numpy())


@row("map_row", "compiled map over 10,000 rows x 16 floats, 3-op body", "<= 300 ns/row")
def r_map_row():
    rows = 10000
    cf, (x, w, b), (xn, wn, bn) = map_case(rows)
    xt, wt, bt = (torch.from_numpy(xn), torch.from_numpy(wn), torch.from_numpy(bn)) if torch \
        else (None, None, None)
    h, n, t, s = three({
        "hop": lambda: cf(x, w, b),
        "np": lambda: np.stack([np.maximum(r * wn + bn, 0) for r in xn]),
        "torch": lambda: torch.stack([torch.relu(r * wt + bt) for r in xt]),
        "whole": lambda: np.maximum(xn * wn + bn, 0)}, "hop", "np", "torch", per=rows,
        repeat=3 if QUICK else 11)
    whole = s["whole"].as_dict()
    return result("ns/row", h, n, t, h["median"] <= 300,
                  join(speedup(n, h, "NumPy loop"), speedup(t, h, "torch loop"),
                       speedup(whole, h, "NumPy whole-array")),
                  f"body (r*w + b).relu(); NumPy, PyTorch: a Python loop over rows + stack; "
                  f"NumPy whole-array {whole['median']:.1f} ns/row", {"numpy_whole": whole})


@row("map_whole", "compiled map(lambda r: (r*w + b).relu(), xs), 100,000 x 16 f32, per row",
     ">= 1.0x NumPy whole-array, <= 1.3x C")
def r_map_whole():
    one_thread()
    rows = 100000
    cf, (x, w, b), (xn, wn, bn) = map_case(rows)
    assert np.array_equal(cf(x, w, b).numpy(), np.maximum(xn * wn + bn, 0))
    fns = {"hop": lambda: cf(x, w, b), "np": lambda: np.maximum(xn * wn + bn, 0)}
    lib = cref()
    if lib:
        co = np.empty_like(xn)
        lib.cref_map(addr(xn), addr(wn), addr(bn), addr(co), rows)
        assert np.array_equal(co, cf(x, w, b).numpy()), "the C reference gives other bits"
        fns["c"] = lambda: lib.cref_map(addr(xn), addr(wn), addr(bn), addr(co), rows)
    h, n, _, s = three(fns, "hop", "np", None, per=rows, repeat=3 if QUICK else 11)
    c = s["c"].as_dict() if lib else None
    hc = hop_over_c(h, c)
    ratio = n["median"] / h["median"]
    return result("ns/row", h, n, None, ratio >= 1.0 and (hc is None or hc <= 1.3),
                  speedup(n, h, "NumPy whole-array"),
                  "the map runs as one fused kernel over all rows (docs/ARCHITECTURE.md, "
                  "\"Batched map\"); NumPy: the whole-array expression; all on 1 thread; "
                  f"{c_note()}: a loop over rows of 16", c_v=c, hop_c=hc)


@row("cond_call", "compiled cond called from Python (16 floats)", "<= 400 ns")
def r_cond_call():
    x = hop.randn(16, seed=1)
    cf = hop.compile(lambda x: hop.cond(x.sum() > 0, lambda x: x * 2.0, lambda x: x - 1.0, (x,)))
    cf(x)
    xn = x.numpy()
    xt = torch.from_numpy(xn) if torch else None

    def py_if(x):
        return x * 2.0 if x.sum() > 0 else x - 1.0
    fns = {"hop": lambda: cf(x), "np": lambda: py_if(xn), "torch": lambda: py_if(xt)}
    notes = "Python if: NumPy and PyTorch eager"
    fcond = None
    if torch is not None:
        try:
            from functorch.experimental.cond import cond as fcond
        except ImportError:
            notes += "; functorch cond: not available in this PyTorch"
    if fcond is not None:
        def tf(x):
            return x * 2.0

        def ff(x):
            return x - 1.0
        fns["functorch"] = lambda: fcond(xt.sum() > 0, tf, ff, [xt])
    lib = cref()
    if lib:
        co = np.empty_like(xn)
        lib.cref_cond(addr(xn), addr(co), 1)
        assert np.array_equal(co, cf(x).numpy()), "the C reference takes the other branch"
        fns["c"] = lambda: lib.cref_cond(addr(xn), addr(co), CREF_REPS)
    h, n, t, s = three(fns, "hop", "np", "torch")
    c = scaled(s["c"].as_dict(), CREF_REPS) if lib else None
    notes += f"; {c_note()}: the sum, the test and the branch on 16 floats"
    extra = {}
    if "functorch" in s:
        fc = s["functorch"]
        extra["functorch_cond"] = fc.as_dict()
        notes += (f"; functorch.experimental.cond, eager: {fc.median / 1e3:.0f} us "
                  f"(functorch/hop {fc.median / h['median']:.0f}x)")
    return result("ns", h, n, t, h["median"] <= 400,
                  join(speedup(n, h, "NumPy if"), speedup(t, h, "torch if")), notes, extra,
                  c_v=c, hop_c=hop_over_c(h, c))


_calls = 0


def _counted(x):
    """An effect-free function's effectful twin: a global counter (issue #24:
    hop.compile ran it eagerly, every call; issue #28: translated, the counter
    a lifted input and its new value replayed)."""
    global _calls
    _calls += 1
    return x + 1


@row("compile_call", "steady-state hop.compile'd call of an effect-free function (x + 1, "
     "f32[16]), from Python", "<= 1 us; no slower than before issue #24")
def r_compile_call():
    one_thread()
    x = hop.randn(16, seed=1)
    xn = x.numpy()
    w = hop.randn(16, seed=2)
    scale = [2.0]
    plain = hop.compile(lambda x: x + 1)
    arrays = hop.compile(lambda x: x + 1)
    # reads a global tensor and a Python number through a list: guards to check
    guarded = hop.compile(lambda x: x * w + scale[0])
    kw = hop.compile(lambda x, s=1.0: x * s)
    effect = hop.compile(_counted)
    fns = {"hop": lambda: plain(x), "np": lambda: xn + 1, "ndarray": lambda: arrays(xn),
           "guarded": lambda: guarded(x)}
    try:
        kw(x, s=2.0)
        fns["kw"] = lambda: kw(x, s=2.0)
    except TypeError:  # before issue #24: no keyword arguments
        pass
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        effect(x)
    fns["effect"] = lambda: effect(x)
    fns["eager"] = lambda: _counted(x)
    for f in fns.values():
        f()
    s = measure_all(fns, repeat=5 if QUICK else 15)
    h, n = s["hop"].as_dict(), s["np"].as_dict()
    parts = [f"ndarray in and out {s['ndarray'].median:.0f} ns",
             f"with environment guards (a global tensor, a list item) "
             f"{s['guarded'].median:.0f} ns"]
    if "kw" in s:
        parts.append(f"a keyword argument {s['kw'].median:.0f} ns")
    parts.append(f"a function with a global counter (translated: {effect.eager_calls} eager "
                 f"calls) {s['effect'].median:.0f} ns "
                 f"against {s['eager'].median:.0f} ns called plainly")
    extra = {k: v.as_dict() for k, v in s.items() if k not in ("hop", "np")}
    return result("ns", h, n, None, h["median"] <= 1000, speedup(n, h, "NumPy"),
                  "hop: lambda x: x + 1 compiled, on a hop.Tensor; NumPy: xn + 1 eager; "
                  + "; ".join(parts), extra)


# env_array_call's global: an ndarray of this module the compiled function
# reads, guarded by id and layout, no reference held (docs/ARCHITECTURE.md)
_ENV_G = np.linspace(0.0, 1.0, 16)


@row("env_array_call", "steady compiled `a * G`, G a global f64[16] ndarray, on a hop.Tensor "
     "(and on an ndarray), from Python", "hop.Tensor call <= the ndarray call")
def r_env_array_call():
    one_thread()
    # (one function per argument kind: a function's bound call is its newest plan's)
    cf, cfn = hop.compile(lambda a: a * _ENV_G), hop.compile(lambda a: a * _ENV_G)
    an = np.arange(16.0)
    at = hop.tensor(an)
    fns = {"hop": lambda: cf(at), "np": lambda: an * _ENV_G, "ndarray": lambda: cfn(an)}
    for f in fns.values():
        f()
        f()
    s = measure_all(fns, repeat=5 if QUICK else 15)
    h, n, nd = s["hop"].as_dict(), s["np"].as_dict(), s["ndarray"].as_dict()
    return result("ns", h, n, None, h["median"] <= nd["median"], speedup(n, h, "NumPy"),
                  f"hop: the call on a hop.Tensor (bound in C with the array's check, "
                  f"Plan.bind_tensors(..., live)); on an ndarray {nd['median']:.0f} ns; NumPy: "
                  f"an * G eager", {"ndarray": nd})


class _Interp:
    """A small tree interpreter, the shape of tests/python/fuzz_programs.py's
    Program.run (the function hop.compile's first call spends most of the
    test suite's compile time analysing): one method dispatching on a node's
    tag, recursing into its children, with cond and map bodies as lambdas."""

    def __init__(self, tree):
        self.tree = tree

    def run(self, t, env):
        op = t[0]
        if op == "var":
            return env[t[1]]
        if op == "unary":
            return _BENCH_UNARY[t[1]](self.run(t[2], env))
        if op == "binary":
            return _BENCH_BINARY[t[1]](self.run(t[2], env), self.run(t[3], env))
        if op == "cond":
            return hop.cond(self.run(t[1], env).sum() > 0, lambda: self.run(t[2], env),
                            lambda: self.run(t[3], env))
        if op == "map":
            return hop.map(lambda r: self.run(t[1], dict(env, x=r)), self.run(t[2], env))
        raise AssertionError(f"unknown node {op!r}")

    def function(self):
        def f(x, y):
            return self.run(self.tree, {"x": x, "y": y})
        return f


_BENCH_UNARY = {"sin": hop.sin, "exp": hop.exp, "neg": lambda v: -v}
_BENCH_BINARY = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b}
_BENCH_TREE = ["cond", ["binary", "add", ["var", "x"], ["var", "y"]],
               ["map", ["unary", "sin", ["binary", "mul", ["var", "x"], ["var", "x"]]],
                ["var", "x"]],
               ["unary", "exp", ["binary", "add", ["unary", "neg", ["var", "y"]],
                                 ["var", "x"]]]]


@row("compile_first_call", "hop.compile's first call of a tree interpreter (cond, map), "
     "f32[4, 3]: the effect analysis and the miss", "effect analysis <= 2 ms")
def r_compile_first_call():
    one_thread()
    from hop import _effects
    x, y = hop.randn(4, 3, seed=1), hop.randn(4, 3, seed=2)
    f = _Interp(_BENCH_TREE).function()
    want = f(x, y).numpy()
    got = hop.compile(f)(x, y).numpy()
    assert np.array_equal(got, want), "compiled result differs from eager"
    s = measure_all({"find": lambda: _effects.find(f, (x, y), {}),
                     "first": lambda: hop.compile(f)(x, y)},
                    sample_ms=20, repeat=3 if QUICK else 9, warmup=1)
    h = scaled(s["find"].as_dict(), 1e3)
    first = scaled(s["first"].as_dict(), 1e3)
    return result("us", h, None, None, h["median"] <= 2000, "",
                  f"hop: _effects.find(f, (x, y)) per call (hop.compile's effect analysis, "
                  f"{len(_effects.find(f, (x, y), {}))} effects found); the first call of a new "
                  f"hop.compile(f) (analysis, trace, guards, plan) {first['median']:.0f} us",
                  {"first_call": first})


@row("env_guard", "compiled grad reading a closed-over f64 array (16, 100,000)", "guard <= 100 ns")
def r_env_guard():
    from workloads import env_guard_fns, env_guard_notes
    s = {k: v.as_dict() for k, v in measure_all(env_guard_fns((16, 100_000)),
                                                repeat=5 if QUICK else 15).items()}
    h, nn = s.pop("call16"), s.pop("np16")
    return result("ns", h, nn, None, s["guard16"]["median"] <= 100, speedup(nn, h, "NumPy"),
                  env_guard_notes(s), s)


BIG = 16 << 20


def big_rep():
    return {"sample_ms": 1, "repeat": 3 if QUICK else 15, "warmup": 2}


def rates(stats, amount):
    return {k: rate(v, amount) for k, v in stats.items()}


def fused_fn():
    n = BIG
    xn = np.linspace(-4, 4, n, dtype=np.float32)
    x = hop.asarray(xn)
    cf = hop.compile(lambda x: (x * 2 + 1).relu().exp())
    cf(x)
    return xn, x, cf


def same_as_c_exp(co, got):
    """Whether the C reference's exp(relu(2x+1)) is hop's: the same bits
    while hop runs SLEEF's expf, as C does; within 3 ulp once `import hop`
    adopted NumPy's own float32 exp loop (hop then answers NumPy's bits, up
    to 2.5 ulp from exp; SLEEF's within 1), as on CPUs with AVX2 and FMA."""
    if ("exp", "f32") not in hop._numpy_math.ADOPTED:
        return np.array_equal(co, got)
    ulps = np.abs(co.view(np.int32).astype(np.int64) - got.view(np.int32))
    return bool(ulps.max() <= 3)


def c_exp_note():
    return ("hop runs NumPy's own float32 exp loop (adopted at import: NumPy's bits), C "
            "SLEEF's; up to 3 ulp apart" if ("exp", "f32") in hop._numpy_math.ADOPTED
            else "the same bits")


@row("fused_bw", "fused exp(relu(x*2+1)) on 16M float32, 1 thread", ">= 5 GB/s, >= 0.8x C")
def r_fused_bw():
    one_thread()
    n = BIG
    xn, x, cf = fused_fn()
    dst = np.empty_like(xn)
    fns = {"hop": lambda: cf(x), "np": lambda: np.exp(np.maximum(xn * 2 + 1, 0)),
           "memcpy": lambda: np.copyto(dst, xn)}
    if torch is not None:
        xt = torch.from_numpy(xn)
        fns["torch"] = lambda: torch.exp(torch.relu(xt * 2 + 1))
    lib = cref()
    if lib:
        co = np.empty_like(xn)
        lib.cref_fused_exp(addr(xn), addr(co), n)
        assert same_as_c_exp(co, cf(x).numpy()), "the C reference computes another function"
        fns["c"] = lambda: lib.cref_fused_exp(addr(xn), addr(co), n)
    r = rates(measure_all(fns, **big_rep()), 2 * 4 * n / 1e9)
    h, nn, t, c = r["hop"], r["np"], r.get("torch"), r.get("c")
    hc = hop_over_c(h, c, rate_unit=True)
    return result("GB/s", h, nn, t, h["median"] >= 5 and (hc is None or hc <= 1 / 0.8),
                  join(faster(h, nn, "NumPy"), faster(h, t, "torch"),
                       faster(h, c, "C") if c else None),
                  f"bytes of x and the result per second; hop: hop.compile'd (one fused "
                  f"kernel; the plan reuses its released output buffer); memcpy (np.copyto) "
                  f"{r['memcpy']['median']:.1f} GB/s; {c_note()}: one loop, SLEEF's 1-ulp "
                  f"expf at its widest vectors ({c_exp_note()})", {"memcpy": r["memcpy"]},
                  c_v=c, hop_c=hc)


@row("fused_threads", "fused exp(relu(x*2+1)) on 16M float32, 2 threads vs 1", ">= 1.6x")
def r_fused_threads():
    xn, x, cf = fused_fn()
    s = threads_1_vs_2(lambda: cf(x), 1, **big_rep())
    ratio = s[1].median / s[2].median
    gbs = {k: 2 * 4 * BIG / v.median for k, v in s.items()}
    co = np.empty_like(xn)
    c = c_threads_1_vs_2(
        "cref_fused_exp_mt", lambda f, nt: f(addr(xn), addr(co), BIG, nt),
        lambda: same_as_c_exp(co, cf(x).numpy()), 1, **big_rep())
    return result("x", {"median": ratio}, None, None, ratio >= 1.6, c_ratio_text(c),
                  f"{gbs[1]:.1f} GB/s on 1 thread, {gbs[2]:.1f} on 2",
                  {"gb_per_s": gbs, "load_average": os.getloadavg(), "c_2_vs_1": c})


@row("add_into", "a + b on 16M float32 into an existing buffer", ">= 0.9 x NumPy")
def r_add_into():
    one_thread()
    n = BIG
    an = np.linspace(-4, 4, n, dtype=np.float32)
    bn = np.linspace(3, -1, n, dtype=np.float32)
    cn = np.empty_like(an)
    a, b = hop.asarray(an), hop.asarray(bn)
    cf = hop.compile(lambda a, b: a + b)
    cf(a, b)
    fns = {"hop": lambda: cf(a, b), "np": lambda: np.add(an, bn, out=cn)}
    if torch is not None:
        at, bt, ct = torch.from_numpy(an), torch.from_numpy(bn), torch.from_numpy(cn)
        fns["torch"] = lambda: torch.add(at, bt, out=ct)
    r = rates(measure_all(fns, **big_rep()), 3 * 4 * n / 1e9)
    h, nn, t = r["hop"], r["np"], r.get("torch")
    notes = ("bytes of a, b and the result per second; hop: hop.compile'd a + b, whose plan "
             "reuses the released output buffer; NumPy, PyTorch: out=")
    extra = {}
    m = re.search(r"1 thread\s+a \+ b, 16M f32 into existing\s+([\d.]+) GB/s",
                  c_bench("bench_kernels") or "")
    if m:
        extra["c_eager_out_gbs"] = float(m.group(1))
        notes += f"; C hop_eager_out into an existing tensor: {m.group(1)} GB/s"
    return result("GB/s", h, nn, t, h["median"] >= 0.9 * nn["median"],
                  join(faster(h, nn, "NumPy"), faster(h, t, "torch")), notes, extra)


@row("matmul", "matmul 1024x1024 float32, 1 thread", ">= 0.9 x NumPy")
def r_matmul():
    one_thread()
    m = 1024
    an = np.random.default_rng(1).standard_normal((m, m), dtype=np.float32)
    bn = np.random.default_rng(2).standard_normal((m, m), dtype=np.float32)
    a, b = hop.asarray(an), hop.asarray(bn)
    fns = {"hop": lambda: hop.matmul(a, b), "np": lambda: an @ bn}
    if torch is not None:
        at, bt = torch.from_numpy(an), torch.from_numpy(bn)
        fns["torch"] = lambda: at @ bt
    r = rates(measure_all(fns, **big_rep()), 2 * m ** 3 / 1e9)
    h, n, t = r["hop"], r["np"], r.get("torch")
    return result("GFLOP/s", h, n, t, h["median"] >= 0.9 * n["median"],
                  join(faster(h, n, "NumPy"), faster(h, t, "torch")),
                  "eager hop.matmul / @ with a new result; all on one thread (OpenBLAS "
                  "for hop and NumPy)")


def threads_1_vs_2(fn, per, **kw):
    """Times of fn on 1 and on 2 threads (hop.set_num_threads), sample by
    sample alternating: {1: Stat, 2: Stat}."""
    def on(nt):
        def run():
            hop.set_num_threads(nt)
            fn()
        return run
    s = measure_all({1: on(1), 2: on(2)}, per=per, **kw)
    hop.set_num_threads(1)
    return s


def c_threads_1_vs_2(name, call, same, per, **kw):
    """The hand-written C reference's 2-vs-1 ratio (an OpenMP loop of
    bench/cref.c, `call(f, nthreads)`), or None where it is not built.  It is
    timed after hop's samples, not alternating with them: OpenMP's idle
    threads spin after a loop and would take hop's second core, as NumPy's
    OpenBLAS threads did in blas_shapes.  `same()` checks, after a 2-thread
    call, that C computed hop's bits."""
    lib = cref()
    if not lib or not hasattr(lib, name):
        return None
    f = getattr(lib, name)
    call(f, 2)
    assert same(), "the C reference gives other bits than hop"
    s = measure_all({1: lambda: call(f, 1), 2: lambda: call(f, 2)}, per=per, **kw)
    return s[1].median / s[2].median


def c_ratio_text(c):
    return f"C 2 vs 1 {c:.2f}x (bench/cref.c, OpenMP)" if c else ""


def map_threads_row(target, loaded):
    rows = 100000
    cf, (x, w, b), (xn, wn, bn) = map_case(rows)
    if loaded:
        with CpuHog():
            s = threads_1_vs_2(lambda: cf(x, w, b), rows)
    else:
        s = threads_1_vs_2(lambda: cf(x, w, b), rows)
    times = {k: v.as_dict() for k, v in s.items()}
    ratio = times[1]["median"] / times[2]["median"]
    c = None
    if not loaded:
        co = np.empty_like(xn)
        c = c_threads_1_vs_2(
            "cref_map_mt", lambda f, nt: f(addr(xn), addr(wn), addr(bn), addr(co), rows, nt),
            lambda: np.array_equal(co, cf(x, w, b).numpy()), rows)
    return result("x", {"median": ratio}, None, None, ratio >= target, c_ratio_text(c),
                  f"compiled map over {rows} rows x 16 f32, 3-op body: "
                  f"{times[1]['median']:.1f} ns/row on 1 thread, {times[2]['median']:.1f} on 2"
                  + ("; beside a CPU-bound process (a Python `while True` loop)" if loaded
                     else ""),
                  {"ns_per_row": times, "load_average": os.getloadavg(), "c_2_vs_1": c})


@row("map_threads", "map on 2 threads vs 1", ">= 1.8x")
def r_map_threads():
    return map_threads_row(1.8, False)


@row("map_threads_load", "map on 2 threads vs 1, beside a CPU-bound process", ">= 1.0x")
def r_map_threads_load():
    return map_threads_row(1.0, True)


ITERS = 10000


def fori_fn(n):
    return hop.compile(lambda x: hop.fori_loop(0, n, lambda i, v: v * 0.999 + 0.001, x))


@row("fori_iter", "compiled fori_loop, small elementwise body (16 floats), per iteration",
     "<= 20 ns, >= 20x a NumPy loop, <= 1.2x C")
def r_fori_iter():
    one_thread()
    x = hop.randn(16, seed=1)
    cf = fori_fn(ITERS)
    cf(x)
    xn = x.numpy()
    xt = torch.from_numpy(xn) if torch else None
    a, b = np.float32(0.999), np.float32(0.001)
    lib = cref()
    cv = xn.copy()
    if lib:
        lib.cref_fori(addr(cv), ITERS)
        assert np.array_equal(cv, cf(x).numpy()), "the C reference gives other bits than hop"

    def np_loop():
        v = xn
        for _ in range(ITERS):
            v = v * a + b
        return v

    def torch_loop():
        v = xt
        for _ in range(ITERS):
            v = v * 0.999 + 0.001
        return v
    fns = {"hop": lambda: cf(x), "np": np_loop, "torch": torch_loop}
    if lib:
        fns["c"] = lambda: lib.cref_fori(addr(cv), ITERS)
    h, n, t, s = three(fns, "hop", "np", "torch", per=ITERS, repeat=3 if QUICK else 9)
    c = s["c"].as_dict() if lib else None
    hc = hop_over_c(h, c)
    return result("ns/iter", h, n, t, h["median"] <= 20 and n["median"] >= 20 * h["median"]
                  and (hc is None or hc <= 1.2),
                  join(speedup(n, h, "NumPy loop"), speedup(t, h, "torch loop")),
                  f"v = v * 0.999 + 0.001, {ITERS} iterations in one compiled call; NumPy, "
                  f"PyTorch: a Python for loop; {c_note()}: the loop over 16 floats in "
                  f"registers, the same bits", c_v=c, hop_c=hc)


@row("while_iter", "compiled while_loop with a data-dependent stop, per iteration",
     "<= 1.5x fori_loop")
def r_while_iter():
    one_thread()
    x = hop.randn(16, seed=1)
    n = hop.tensor(ITERS)
    cw = hop.compile(lambda x, n: hop.while_loop(lambda i, v: i < n,
                                                 lambda i, v: (i + 1, v * 0.999 + 0.001),
                                                 (0, x))[1])
    cf = fori_fn(ITERS)
    cw(x, n)
    cf(x)
    s = measure_all({"while": lambda: cw(x, n), "fori": lambda: cf(x)}, per=ITERS,
                    repeat=3 if QUICK else 9)
    w, f = s["while"].as_dict(), s["fori"].as_dict()
    return result("ns/iter", w, None, None, w["median"] <= 1.5 * f["median"],
                  f"while/fori {w['median'] / f['median']:.2f}x",
                  f"the same body, stopping when the carried counter reaches a tensor n "
                  f"(computed in the plan); fori_loop {f['median']:.1f} ns/iter", {"fori": f})


@row("fori_dyn_index", "compiled fori_loop reading table[i] (i a traced 0-d int tensor, a "
     "[1000, 16] table), per iteration", "<= 2x the same loop without the index")
def r_fori_dyn_index():
    one_thread()
    n = 1000
    table = hop.randn(n, 16, seed=5)
    first = table[0].clone()
    acc0 = hop.zeros(16)
    # The same loop twice: the int carry i counts in both; one adds the row
    # table[i] (dynamic_slice: a view at a start read from i), the other a
    # fixed row.
    dyn = hop.compile(lambda tb, acc: hop.fori_loop(
        0, n, lambda k, c: (c[0] + tb[c[1]], c[1] + 1), (acc, 0))[0])
    fixed = hop.compile(lambda row, acc: hop.fori_loop(
        0, n, lambda k, c: (c[0] + row, c[1] + 1), (acc, 0))[0])
    np.testing.assert_allclose(dyn(table, acc0).numpy(), table.numpy().sum(0), rtol=1e-4,
                               atol=1e-3)
    fixed(first, acc0)
    s = measure_all({"dyn": lambda: dyn(table, acc0), "fixed": lambda: fixed(first, acc0)},
                    per=n, repeat=3 if QUICK else 9)
    d, f = s["dyn"].as_dict(), s["fixed"].as_dict()
    return result("ns/iter", d, None, None, d["median"] <= 2 * f["median"],
                  f"indexed/fixed {d['median'] / f['median']:.2f}x",
                  f"acc = acc + table[i], i = i + 1 (i an int carry: a 0-d int64 tensor) against "
                  f"acc = acc + row with the same counter; {n} iterations per call; the fixed "
                  f"row: {f['median']:.1f} ns/iter", {"fixed": f})


@row("scan_rnn", "compiled scan of an RNN cell h = tanh(h @ W + x_t @ U), h: [1, 32], 1,000 "
     "steps", ">= 5x NumPy loop, >= 10x torch loop, <= 2x C")
def r_scan_rnn():
    one_thread()
    steps = 1000
    W, U = hop.randn(32, 32, seed=1) * 0.2, hop.randn(32, 32, seed=2) * 0.2
    xs, h0 = hop.randn(steps, 32, seed=3), hop.zeros(1, 32)

    def cell(h, x):
        h = (h @ W + x @ U).tanh()
        return h, h
    cf = hop.compile(lambda xs, h0: hop.scan(cell, h0, xs))
    cf(xs, h0)
    Wn, Un, xn, hn = W.numpy(), U.numpy(), xs.numpy(), h0.numpy()

    fns = {"hop": lambda: cf(xs, h0), "np": lambda: rnn_loop(np, hn, Wn, Un, xn, steps)}
    if torch is not None:
        Wt, Ut, xt, ht = (torch.from_numpy(a) for a in (Wn, Un, xn, hn))
        fns["torch"] = lambda: rnn_loop(torch, ht, Wt, Ut, xt, steps)
    lib = cref()
    if lib:
        chs, chT = np.empty((steps, 32), np.float32), np.empty(32, np.float32)
        lib.cref_scan_rnn(addr(Wn), addr(Un), addr(xn), addr(hn), addr(chs), addr(chT), steps)
        # the matmuls sum in another order (BLAS vs hop's small-matmul tiles)
        np.testing.assert_allclose(chs, cf(xs, h0)[1].numpy().reshape(steps, 32), rtol=1e-5,
                                   atol=1e-5)
        fns["c"] = lambda: lib.cref_scan_rnn(addr(Wn), addr(Un), addr(xn), addr(hn), addr(chs),
                                             addr(chT), steps)
    h, n, t, s = three(fns, "hop", "np", "torch", repeat=3 if QUICK else 9)
    c = s["c"].as_dict() if lib else None
    hc = hop_over_c(h, c)
    met = n["median"] >= 5 * h["median"] and (t is None or t["median"] >= 10 * h["median"]) \
        and (hc is None or hc <= 2)
    return result("us", scaled(h, 1e3), scaled(n, 1e3), scaled(t, 1e3),
                  met, join(speedup(n, h, "NumPy loop"), speedup(t, h, "torch loop")),
                  f"the whole 1,000-step scan (final h and the stacked hs) per call; {c_note()}: "
                  f"two cblas_sgemm calls (1 x 32 by 32 x 32, OpenBLAS, one thread) and SLEEF's "
                  f"tanhf per step; hop runs these products with its own small-matmul tiles",
                  c_v=scaled(c, 1e3), hop_c=hc)


@row("vmap_cond", "compiled vmap of a per-example cond program over 10,000 examples",
     ">= 50x a NumPy loop")
def r_vmap_cond():
    one_thread()
    n = 10_000
    xs = hop.randn(n, 16, seed=3)
    w = hop.randn(16, 16, seed=4)
    xn, wn = xs.numpy(), w.numpy()

    # cheap, pure branches: select (both branches over the batch, then where)
    def cheap(x):
        return hop.cond(x.sum() > 0, lambda: (x * 2.0 + 1.0).tanh(), lambda: x * x - 1.0)

    # a branch with a matmul: compaction (each branch once on its examples)
    def costly(x):
        return hop.cond(x.sum() > 0, lambda: (x @ w).tanh(), lambda: x * x - 1.0)
    vc, vk = hop.compile(hop.vmap(cheap)), hop.compile(hop.vmap(costly))
    vc(xs)
    vk(xs)

    def np_cheap():
        return np.stack([np.tanh(r * 2.0 + 1.0) if r.sum() > 0 else r * r - 1.0 for r in xn])

    def np_costly():
        return np.stack([np.tanh(r @ wn) if r.sum() > 0 else r * r - 1.0 for r in xn])
    np.testing.assert_allclose(vc(xs).numpy(), np_cheap(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(vk(xs).numpy(), np_costly(), rtol=1e-4, atol=1e-5)
    kw = {"sample_ms": 1, "repeat": 3 if QUICK else 9, "warmup": 1}
    s = measure_all({"hop": lambda: vc(xs), "np": np_cheap, "hop_compact": lambda: vk(xs),
                     "np_compact": np_costly}, **kw)
    ms = lambda st: {"median": st.median / 1e6, "p10": st.p10 / 1e6, "p90": st.p90 / 1e6,
                     "samples": st.n}
    h, nl = ms(s["hop"]), ms(s["np"])
    hk, nk = ms(s["hop_compact"]), ms(s["np_compact"])
    ratio, ratio_k = nl["median"] / h["median"], nk["median"] / hk["median"]
    return result("ms", h, nl, None, ratio >= 50,
                  f"NumPy loop/hop {ratio:.0f}x (select), {ratio_k:.0f}x (compaction)",
                  f"16 floats per example; select: cond(x.sum() > 0, tanh(x*2+1), x*x-1); "
                  f"compaction (a branch with x @ W, W 16x16): hop {hk['median']:.2f} ms, "
                  f"NumPy loop {nk['median']:.1f} ms (met? reads the select program); NumPy: a "
                  f"Python loop over the rows, stacked", {"compact": {"hop": hk, "numpy": nk}})


@row("grad_cond", "compiled hop.grad of a 20-step cond/elementwise program, 16 floats, per call",
     ">= 5x torch.autograd")
def r_grad_cond():
    one_thread()
    w = hop.randn(16, seed=2)
    x = hop.randn(16, seed=1)
    g = hop.compile(hop.grad(grad_program(hop_step, w)))
    g(x)
    fns = {"hop": lambda: g(x)}
    if torch is not None:
        wt = torch.from_numpy(w.numpy())
        ft = grad_program(py_step, wt)
        xn = x.numpy()

        def torch_grad():
            xt = torch.tensor(xn, requires_grad=True)
            ft(xt).backward()
            return xt.grad
        fns["torch"] = torch_grad
    h, _, t, _ = three(fns, "hop", None, "torch")
    return torch_result("us", 1e3, h, t, 5, "torch.autograd",
                        "torch: the same program with Python if, autograd backward")


@row("grad_ratio", "time of compiled grad / time of compiled forward (the 20-step program)",
     "<= 4")
def r_grad_ratio():
    one_thread()
    w = hop.randn(16, seed=2)
    x = hop.randn(16, seed=1)
    f = grad_program(hop_step, w)
    fwd, g = hop.compile(f), hop.compile(hop.grad(f))
    fwd(x)
    g(x)
    s = measure_all({"fwd": lambda: fwd(x), "grad": lambda: g(x)})
    r = s["grad"].median / s["fwd"].median
    return result("x", {"median": r, "p10": r, "p90": r, "samples": s["grad"].n}, None, None,
                  r <= 4, f"grad {s['grad'].median / 1e3:.1f} us, forward "
                  f"{s['fwd'].median / 1e3:.1f} us",
                  "both compiled, called from Python; reverse mode recomputes each cond body's "
                  "forward (docs/AUTODIFF.md)")


@row("grad_rnn", "grad of a scan of 1,000 RNN steps (h: [1, 32]) w.r.t. W, per call",
     ">= 5x torch")
def r_grad_rnn():
    one_thread()
    steps = 1000
    W, U = hop.randn(32, 32, seed=1) * 0.2, hop.randn(32, 32, seed=2) * 0.2
    xs, h0 = hop.randn(steps, 32, seed=3), hop.zeros(1, 32)

    def loss(W, xs, h0):
        def cell(h, x):
            h = (h @ W + x @ U).tanh()
            return h, h
        hT, hs = hop.scan(cell, h0, xs)
        return hs.sum()
    g = hop.compile(hop.grad(loss))
    g(W, xs, h0)
    fns = {"hop": lambda: g(W, xs, h0)}
    if torch is not None:
        Wn, Un, xn, hn = W.numpy(), U.numpy(), xs.numpy(), h0.numpy()
        Ut, xt, ht = (torch.from_numpy(a) for a in (Un, xn, hn))

        def torch_grad():
            Wt = torch.tensor(Wn, requires_grad=True)
            h, total = ht, 0.0
            for t in range(steps):
                h = torch.tanh(h @ Wt + xt[t] @ Ut)
                total = total + h.sum()
            total.backward()
            return Wt.grad
        fns["torch"] = torch_grad
    h, _, t, _ = three(fns, "hop", None, "torch", repeat=3 if QUICK else 9)
    return torch_result("ms", 1e6, h, t, 5, "torch",
                        "the gradient w.r.t. W; torch: a Python loop with autograd")


@row("vmap_grad_mlp", "vmap of grad (per-example gradients) of a small MLP, 1,000 examples",
     ">= 10x the PyTorch Python loop")
def r_vmap_grad_mlp():
    one_thread()
    n, din, dh = 1000, 16, 32
    W1, b1 = hop.randn(din, dh, seed=1) * 0.3, hop.randn(dh, seed=2) * 0.1
    W2, b2 = hop.randn(dh, seed=3) * 0.3, hop.randn(1, seed=4) * 0.1
    xs, ys = hop.randn(n, din, seed=5), hop.randn(n, seed=6)

    def loss(W1, b1, W2, b2, x, y):
        h = (x @ W1 + b1).tanh()
        return ((h @ W2 + b2 - y) ** 2).sum()
    # outside a trace hop.vmap runs through a hop.compile of the traced call
    g = hop.vmap(hop.grad(loss, argnums=(0, 1, 2, 3)), in_axes=(None, None, None, None, 0, 0))
    got = g(W1, b1, W2, b2, xs, ys)
    fns = {"hop": lambda: g(W1, b1, W2, b2, xs, ys)}
    if torch is not None:
        P = [torch.from_numpy(t.numpy()) for t in (W1, b1, W2, b2)]
        xt, yt = torch.from_numpy(xs.numpy()), torch.from_numpy(ys.numpy())

        def torch_loop():
            out = [[] for _ in P]
            for i in range(n):
                p = [t.detach().requires_grad_(True) for t in P]
                h = torch.tanh(xt[i] @ p[0] + p[1])
                ((h @ p[2] + p[3] - yt[i]) ** 2).sum().backward()
                for k in range(4):
                    out[k].append(p[k].grad)
            return [torch.stack(o) for o in out]
        fns["torch"] = torch_loop
        for a, b in zip(got, torch_loop()):  # the same per-example gradients
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)
    h, _, t, _ = three(fns, "hop", None, "torch", repeat=3 if QUICK else 9)
    return torch_result("ms", 1e6, h, t, 10, "torch",
                        "the gradients of W1, b1, W2, b2 per example (hop.vmap compiles); torch: a "
                        "Python loop of per-example autograd")


@row("assoc_scan", "associative_scan add over 16M float32, 2 threads",
     ">= 0.8x np.cumsum on 1 thread, >= 1.8x on 2 threads vs 1")
def r_assoc_scan():
    x = hop.randn(BIG, seed=1)
    cf = hop.compile(lambda x: hop.associative_scan(lambda a, b: a + b, x))
    xn = x.numpy()
    cf(x)

    def on(nt):
        def run():
            hop.set_num_threads(nt)
            cf(x)
        return run
    fns = {1: on(1), 2: on(2), "np": lambda: np.cumsum(xn)}
    lib = cref()
    if lib:
        co = np.empty_like(xn)
        lib.cref_cumsum_chunked(addr(xn), addr(co), BIG, 2)
        assert np.array_equal(co, cf(x).numpy()), "the C reference gives other bits than hop"
        fns["c"] = lambda: lib.cref_cumsum(addr(xn), addr(co), BIG)
        fns["c2"] = lambda: lib.cref_cumsum_chunked(addr(xn), addr(co), BIG, 2)
    s = measure_all(fns, **big_rep())
    hop.set_num_threads(1)
    ms = (lambda st: {"median": st.median / 1e6, "p10": st.p10 / 1e6, "p90": st.p90 / 1e6,
                      "samples": st.n})
    h2, h1, n = ms(s[2]), ms(s[1]), ms(s["np"])
    c = ms(s["c"]) if lib else None
    hc = hop_over_c(h1, c)
    scale = h1["median"] / h2["median"]
    notes = (f"hop on 1 thread {h1['median']:.1f} ms, 2 threads vs 1 {scale:.2f}x; np.cumsum "
             f"one thread; {c_note()}: the sequential loop on one thread (hop/C compares hop's "
             f"1-thread time with it)")
    if lib:
        notes += f"; hop's 16-chunk split in C on 2 threads {s['c2'].median / 1e6:.1f} ms"
    return result("ms", h2, n, None, n["median"] >= 0.8 * h1["median"] and scale >= 1.8,
                  f"NumPy/hop {n['median'] / h2['median']:.2f}x on 2 threads, "
                  f"{n['median'] / h1['median']:.2f}x on 1", notes,
                  {"hop_1_thread": h1, "threads_2_vs_1": scale,
                   "c_chunked_2_threads": ms(s["c2"]) if lib else None}, c_v=c, hop_c=hc)


@row("memory", "memory per graph node (100k ops, 1k ops, nested wraps); allocations per map "
     "iteration", "<= 200 bytes each; 0")
def r_memory():
    out = c_bench("bench_memory")
    if out is None:
        return None
    def root(ops):
        return float(re.search(r"graph of\s+%d ops, root graph\s+([\d.]+) bytes per node" % ops,
                               out).group(1))
    # Met only when every graph shape is within the bound (issue #30: 200
    # bytes): a large graph (100,000 binary ops), a small one (1,000 ops,
    # which carries up to one arena chunk of slack) and nested wraps (a
    # graph's fixed cost per body).
    per_node, small = root(100000), root(1000)
    nested = float(re.search(r"nested wraps\s+([\d.]+) bytes per node", out).group(1))
    allocs = [float(v) for v in re.findall(r"([\d.]+) per iteration", out)]
    return result("bytes", {"median": per_node}, None, None,
                  max(per_node, small, nested) <= 200 and max(allocs) == 0, "",
                  f"C bench_memory: {per_node:.0f} bytes/node in a 100,000-op root graph, "
                  f"{small:.0f} at 1,000 ops, {nested:.0f} in nested wraps (arena slack and "
                  f"malloc overhead included); allocations per map iteration: {max(allocs):g}",
                  {"bytes_per_node_1000_ops": small, "nested_bytes_per_node": nested,
                   "allocs_per_map_iteration": max(allocs)})


# ---------------------------------------------------- NumPy programs (#17)

def np_programs_row(large, target):
    progs = np_programs(large)
    fns = {}
    for name, (f, args) in progs.items():
        cf = hop.compile(f)
        cf(*args)
        fns["hop " + name] = (lambda cf, args: lambda: cf(*args))(cf, args)
        fns["np " + name] = (lambda f, args: lambda: f(*args))(f, args)
    kw = big_rep() if large else {}
    s = measure_all(fns, **kw)
    ratios = {n: s["np " + n].median / s["hop " + n].median for n in progs}
    geo = statistics.geometric_mean(ratios.values())
    h = {"median": sum(s["hop " + n].median for n in progs)}
    n = {"median": sum(s["np " + n].median for n in progs)}
    notes = ("hop.compile'd NumPy code called with ndarrays vs the same code on NumPy, "
             "float32, 1 thread; hop and NumPy columns: the calls' times added; "
             "NumPy/hop per program: " +
             ", ".join(f"{k} {v:.2f}x ({s['hop ' + k].median / 1e3:.1f} vs "
                       f"{s['np ' + k].median / 1e3:.1f} us)" for k, v in ratios.items()))
    return result("ns", h, n, None, min(ratios.values()) >= 1.0 and geo >= target,
                  f"NumPy/hop geomean {geo:.2f}x, min {min(ratios.values()):.2f}x", notes,
                  {"ratios": ratios, "per_program": {k: v.as_dict() for k, v in s.items()}})


@row("np_small", "eleven NumPy programs compiled, <= 1k elements",
     "each >= 1.0x NumPy, geomean >= 3x")
def r_np_small():
    one_thread()
    return np_programs_row(False, 3.0)


@row("np_large", "eleven NumPy programs compiled, >= 1M elements",
     "each >= 1.0x NumPy, geomean >= 1.5x")
def r_np_large():
    one_thread()
    return np_programs_row(True, 1.5)


@row("blas_shapes", "every BLAS shape compiled vs NumPy, float64, 1 and 2 threads",
     ">= 0.95x NumPy each")
def r_blas_shapes():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    shapes = blas_shapes()
    ratios, per = {}, {}
    for nt in (1, 2):
        hop.set_num_threads(nt)
        limit = threadpool_limits(nt, user_api="blas") if threadpool_limits else None
        try:
            hops, nps = {}, {}
            for name, (f, args) in shapes.items():
                cf = hop.compile(f)
                cf(*args)
                hops["hop " + name] = (lambda cf, args: lambda: cf(*args))(cf, args)
                nps["np " + name] = (lambda f, args: lambda: f(*args))(f, args)
            # hop's samples alternate among themselves and NumPy's among
            # theirs: NumPy's OpenBLAS threads spin for ~0.1 s after a call
            # (its THREAD_TIMEOUT), so a hop sample right after a NumPy one
            # shares the second core with that spin
            s = {**measure_all(hops), **measure_all(nps)}
        finally:
            if limit is not None:
                limit.restore_original_limits()
        for name in shapes:
            ratios[f"{name} @{nt}"] = s["np " + name].median / s["hop " + name].median
        per[nt] = {k: v.as_dict() for k, v in s.items()}
    hop.set_num_threads(1)
    worst = min(ratios, key=ratios.get)
    notes = ("hop.compile'd x @ w etc. called with ndarrays vs NumPy (OpenBLAS both; NumPy's "
             "threads set by threadpoolctl" + ("" if threadpool_limits else ", absent here") +
             "); NumPy/hop: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()))
    return result("x", {"median": ratios[worst]}, None, None, ratios[worst] >= 0.95,
                  f"min {ratios[worst]:.2f}x ({worst})", notes,
                  {"ratios": ratios, "per_shape": per})


@row("np_if", "data-dependent Python if, compiled, after both paths", "<= 1.2x hop.cond")
def r_np_if():
    one_thread()
    pos = np.linspace(0.1, 1.0, 256, dtype=np.float32)
    neg = -pos
    pf, cf = hop.compile(np_branchy), hop.compile(np_branchy_cond)
    for f in (pf, cf):
        f(pos), f(neg)
    before = pf.recompiles

    def alt(f):
        return lambda: (f(pos), f(neg))
    s = measure_all({"if": alt(pf), "cond": alt(cf), "np": alt(np_branchy)}, per=2)
    assert pf.recompiles == before and len(pf.graphs) == 2  # merged: no retrace
    h, c, n = s["if"].as_dict(), s["cond"].as_dict(), s["np"].as_dict()
    ratio = h["median"] / c["median"]
    return result("ns", h, n, None, ratio <= 1.2,
                  join(f"if/cond {ratio:.2f}x", speedup(n, h, "NumPy")),
                  f"`if np.sum(x > 0) > 0: sin(x)*2 else cos(x)-1` on f32[256], calls alternating "
                  f"between the two sides; hop.cond version {c['median']:.0f} ns",
                  {"cond": c})


# ------------------------------------------------- scale (issue #30)

def _trace_once_ns(fn, *args, repeat=3):
    """The best of repeat hop.trace(fn, *args) times (best_cpu_ns: this
    thread's CPU time, gc off), warnings silenced (a body reading thousands
    of tensors warns about them)."""
    import warnings

    def trace():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hop.trace(fn, *args)
    return best_cpu_ns(trace, repeat, gc_off=True)


def _flat(figures, limit, ratio=None):
    """Met when every figure is <= limit (and the largest / smallest <=
    ratio, when given)."""
    ok = max(figures) <= limit
    if ratio is not None:
        ok = ok and max(figures) <= ratio * min(figures)
    return ok


@row("scale_hop_calls", "tracing one HOP call (wrap, cond with one op per body), 100 / 1,000 / "
     "10,000 calls in one function, per call", "<= 10 us, flat")
def r_scale_hop_calls():
    x = hop.randn(16, seed=1)
    sizes = (100, 1000) if QUICK else (100, 1000, 10000)
    makes = {"wrap": lambda v: hop.wrap(lambda u: u + 1.0, v),
             "cond": lambda v: hop.cond(v.sum() > 0, lambda u: u + 1.0, lambda u: u - 1.0, (v,))}
    per = {k: {n: _trace_once_ns(repeated(m, n), x, repeat=3 if n < 10000 else 1) / n
               for n in sizes} for k, m in makes.items()}
    worst = max(max(v.values()) for v in per.values())
    notes = "; ".join(f"{k}: " + " / ".join(f"{v[n] / 1e3:.1f}" for n in sizes) + " us"
                      for k, v in per.items())
    met = all(_flat(list(v.values()), 10000) for v in per.values())
    return result("ns", {"median": worst}, None, None, met, "",
                  f"hop.trace of n calls x = hop.<hop>(..., x), per call (the worst shown); {notes}",
                  {"per_call_ns": {k: {str(n): t for n, t in v.items()} for k, v in per.items()}})


@row("scale_nested", "nested wrap, per level, depth 64 / 256 / 512 / 1,000", "<= 10 us each")
def r_scale_nested():
    x = hop.randn(16, seed=1)
    depths = (64, 256) if QUICK else (64, 256, 512, 1000)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 50000))
    try:
        per = {d: _trace_once_ns(nested(d), x, repeat=3 if d < 1000 else 1) / d for d in depths}
    finally:
        sys.setrecursionlimit(limit)
    return result("ns", {"median": max(per.values())}, None, None, _flat(list(per.values()), 10000),
                  "", "hop.trace of wrap(lambda v: wrap(lambda v: ... v + 1.0)), per level (the "
                  "worst shown): " + " / ".join(f"{per[d] / 1e3:.1f}" for d in depths) + " us",
                  {"per_level_ns": {str(d): t for d, t in per.items()}})


def _lift_per_capture(hop_call):
    """ns per capture of hop.trace(lambda x: hop_call(body, x)), body adding
    k closed-over tensors, for each k (QUICK: fewer)."""
    ks = (1000, 4000) if QUICK else (1000, 4000, 16000)
    per = {}
    for k in ks:
        caps = [hop.full((16,), float(i)) for i in range(k)]

        def body(v, caps=caps):
            for c in caps:
                v = v + c
            return v
        per[k] = _trace_once_ns(lambda x: hop_call(body, x), hop.ones(16),
                                repeat=3 if k < 16000 else 1) / k
    return ks, per


def _lift_result(ks, per, what):
    return result("ns", {"median": max(per.values())}, None, None, _flat(list(per.values()), 2000),
                  "", f"hop.trace, {what}, per capture (the worst shown): " +
                  " / ".join(f"{per[k] / 1e3:.1f}" for k in ks) + " us; the trace warns that "
                  "the list's tensors are guarded by identity only",
                  {"per_capture_ns": {str(k): t for k, t in per.items()}})


@row("scale_lift", "lifted captured tensors, one wrap body adding k closed-over tensors, per "
     "capture, k = 1k / 4k / 16k", "<= 2 us, flat")
def r_scale_lift():
    return _lift_result(*_lift_per_capture(hop.wrap), "one wrap body")


@row("scale_cond_lift", "lifted captured tensors, both branches of a cond adding the same k "
     "closed-over tensors, per capture, k = 1k / 4k / 16k", "<= 2 us, flat")
def r_scale_cond_lift():
    def cond(body, x):
        return hop.cond(x.sum() > 0, body, lambda v: body(v) * 2.0, (x,))
    return _lift_result(*_lift_per_capture(cond), "a cond whose branches share every capture")


@row("scale_trace_lower", "trace + lower per node, 1k vs 100k ops", "100k within 1.3x of 1k")
def r_scale_trace_lower():
    x, y = hop.randn(16, seed=1), hop.randn(16, seed=2)
    sizes = (1000, 10000) if QUICK else (1000, 100000)
    per = {n: _trace_once_ns(chain_fn(n), x, y, repeat=5 if n < 100000 else 2) / n for n in sizes}
    small, large = per[sizes[0]], per[sizes[-1]]
    return result("ns/node", {"median": large}, None, None, large <= 1.3 * small,
                  f"{sizes[-1] // 1000}k/1k {large / small:.2f}x",
                  f"hop.trace of the trace_node chain: {small:.0f} ns/node at {sizes[0]:,} ops, "
                  f"{large:.0f} at {sizes[-1]:,}",
                  {"per_node_ns": {str(n): t for n, t in per.items()}})


@row("scale_code", "gm.code of a 1,000-deep nested graph", "<= 100 ms")
def r_scale_code():
    depth = 300 if QUICK else 1000
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 50000))
    try:
        gm = hop.trace(nested(depth), hop.randn(16, seed=1))
        best, size = None, 0
        for _ in range(3):
            g = hop.trace(nested(depth), hop.randn(16, seed=1)) if best is not None else gm
            t0 = time.thread_time_ns()
            size = len(g.code)
            dt = time.thread_time_ns() - t0
            best = dt if best is None else min(best, dt)
    finally:
        sys.setrecursionlimit(limit)
    return result("ns", {"median": best}, None, None, best <= 100e6, "",
                  f"depth {depth}, {size / 1e6:.1f} MB of text (first gm.code of a fresh trace)",
                  {"chars": size})


@row("print_mid", "200 elementwise ops on f32[16], one print(x.sum()) in the middle: compiled "
     "vs eager hop", ">= 10x eager; <= 1.5x without the print")
def r_print_mid():
    one_thread()
    nops = 200

    def show(x):
        print(x.sum())

    f, g = chain_with(nops, show), chain_with(nops, lambda x: None)
    cf, cg = hop.compile(f), hop.compile(g)
    x = hop.randn(16, seed=1)
    saved = sys.stdout
    sys.stdout = open(os.devnull, "w")
    try:
        cf(x), cg(x)
        s = measure_all({"c": lambda: cf(x), "e": lambda: f(x), "n": lambda: cg(x)})
    finally:
        sys.stdout.close()
        sys.stdout = saved
    assert cf.recompiles == 0 and cf.eager_calls == 0
    h, e, n = s["c"].as_dict(), s["e"].as_dict(), s["n"].as_dict()
    vs_eager, vs_plain = e["median"] / h["median"], h["median"] / n["median"]
    return result("ns", h, None, None, vs_eager >= 10 and vs_plain <= 1.5,
                  f"eager/compiled {vs_eager:.1f}x, compiled/compiled-without-print "
                  f"{vs_plain:.2f}x",
                  f"print replayed from the side-effect table after the plan (no graph break); "
                  f"eager hop {e['median']:.0f} ns, compiled without the print "
                  f"{n['median']:.0f} ns; stdout to /dev/null", {"eager": e, "plain": n})


@row("log_mid", "200 elementwise ops on f32[16], one log.info(..., x.sum()) between two halves: "
     "compiled (a graph break) vs eager hop", ">= 5x eager")
def r_log_mid():
    import io
    import logging
    one_thread()
    log = logging.getLogger("hop.bench.log_mid")
    log.propagate = False
    sink = io.StringIO()
    log.addHandler(logging.StreamHandler(sink))
    log.setLevel(logging.INFO)
    half = chain_with(100, lambda x: None)

    def f(x):
        x = half(x)
        log.info("sum %s", x.sum())
        return half(x)

    cf = hop.compile(f)
    x = hop.randn(16, seed=1)
    cf(x)
    s = measure_all({"c": lambda: cf(x), "e": lambda: f(x)})
    breaks = sum("graph break at" in line for line in cf.explain().splitlines())
    ok = cf.recompiles == 0 and cf.eager_calls == 0 and breaks == 1
    h, e = s["c"].as_dict(), s["e"].as_dict()
    ratio = e["median"] / h["median"]
    return result("ns", h, None, None, ratio >= 5 and ok, f"eager/compiled {ratio:.1f}x",
                  f"the logging call runs in Python on every call (issue 28: an I/O effect is "
                  f"a graph break; the function ran eagerly whole before); {breaks} break, "
                  f"{cf.eager_calls} eager calls; eager hop {e['median']:.0f} ns",
                  {"eager": e, "breaks": breaks})


@row("loop_break", "a for loop of 10 turns with float(y.sum()) in each between two compiled "
     "parts (f32[16]), compiled vs eager", "<= 1x eager")
def r_loop_break():
    one_thread()

    def f(x):
        y = x * 2
        for i in range(10):
            y = y + 1
            if float(y.sum()) > 1e9:
                break
        return y * 3

    cf = hop.compile(f)
    x = hop.randn(16, seed=1)
    cf(x)
    s = measure_all({"c": lambda: cf(x), "e": lambda: f(x)})
    h, e = s["c"].as_dict(), s["e"].as_dict()
    ratio = h["median"] / e["median"]
    ok = cf.recompiles == 0 and cf.eager_calls == 0
    return result("ns", h, None, None, ratio <= 1 and ok, f"compiled/eager {ratio:.1f}x",
                  f"one plan: each turn's `if float(y.sum()) > 1e9` is a cond whose sides run "
                  f"on to the return (the loop was the break's region, run by CPython, before); "
                  f"eager hop {e['median']:.0f} ns; {len(cf.graphs)} graph(s), "
                  f"{cf.eager_calls} eager calls", {"eager": e})


@row("train_step", "a training step appending its loss to a list and bumping a nonlocal step, "
     "compiled vs eager", ">= 5x eager; 1 plan, 0 recompiles over 100 calls")
def r_train_step():
    one_thread()

    def make():
        losses, step, w = [], 0, hop.zeros(16)

        def loss_fn(w, x, y):
            return ((x @ w - y) ** 2).sum()

        def train(x, y):
            nonlocal step, w
            loss, g = hop.value_and_grad(loss_fn)(w, x, y)
            w = w - 0.001 * g
            losses.append(loss)
            step += 1
            return loss
        return train, lambda: (step, len(losses))

    train, state = make()
    eager, _ = make()
    cf = hop.compile(train)
    x, y = hop.randn(64, 16, seed=4), hop.randn(64, seed=5)
    for _ in range(100):
        cf(x, y)
    calls_ok = cf.recompiles == 0 and len(cf.graphs) == 1 and state() == (100, 100) and \
        cf.eager_calls == 0
    s = measure_all({"c": lambda: cf(x, y), "e": lambda: eager(x, y)})
    h, e = s["c"].as_dict(), s["e"].as_dict()
    ratio = e["median"] / h["median"]
    return result("ns", h, None, None, ratio >= 5 and calls_ok,
                  f"eager/compiled {ratio:.1f}x",
                  f"linear regression on f32[64, 16]: value_and_grad, w -= lr * g (w a "
                  f"nonlocal tensor rebound), losses.append(loss), step += 1 (a lifted int: "
                  f"plan input, new value an output); {len(cf.graphs)} plan, {cf.recompiles} "
                  f"recompiles over 100 calls; eager {e['median']:.0f} ns", {"eager": e})


@row("translate_op", "hop.compile first call through the frame translator, 1,000-op function, "
     "per op", "<= 3 us/op")
def r_translate_op():
    one_thread()
    nops = 1000
    log = []
    f = chain_with(nops, log.append)
    g = chain_with(nops, lambda x: None)
    x = hop.randn(16, seed=1)

    def first(fn):
        return lambda: hop.compile(fn)(x)
    fns = {"t": first(f), "p": first(g)}
    if torch is not None:
        xt = torch.randn(16)

        def fx_first():
            # the fallback measure where Dynamo is missing: fx captures the same
            # function (its list.append included) and runs the captured module once
            del log[:]
            torch.fx.symbolic_trace(f)(xt)
        fns["fx"] = fx_first
    s = measure_all(fns, per=nops, repeat=5)
    del log[:]
    h, p = s["t"].as_dict(), s["p"].as_dict()
    t = s["fx"].as_dict() if "fx" in s else None
    notes = (f"a chain of {nops} elementwise ops with one list.append (translated: bytecode "
             f"evaluated by hop/_frame.py over the tracer) vs the same chain traced directly "
             f"({p['median']:.0f} ns/op, includes lowering both); PyTorch's Dynamo is not in "
             f"this python3-torch (no torch._dynamo), so the PyTorch column is "
             f"torch.fx.symbolic_trace of the same function and its first call")
    ratios = f"translated/traced {h['median'] / p['median']:.2f}x"
    if t:
        ratios = join(ratios, speedup(t, h, "fx"))
    return result("ns/op", h, None, t, h["median"] <= 3000, ratios, notes, {"traced": p})


# ------------------------------------------------------------ the run

def main(argv=None):
    global QUICK, BUILD_DIR
    ap = argparse.ArgumentParser(description="hop next to NumPy and PyTorch (issue #7)")
    ap.add_argument("--quick", action="store_true", help="few samples: a smoke run")
    ap.add_argument("--only", help="comma-separated row ids: " + ", ".join(r[0] for r in ROWS))
    ap.add_argument("--json", help="write every figure and the machine to this file")
    ap.add_argument("--markdown", action="store_true", help="print the table in Markdown")
    ap.add_argument("--build", help="the CMake build dir (C benches, python/); default: the "
                                    "one holding the imported hop package, or $HOP_BUILD")
    args = ap.parse_args(argv)
    QUICK = args.quick
    BUILD_DIR = args.build or _build or _guess_build()
    c_side.BUILD_DIR = BUILD_DIR
    only = set(args.only.split(",")) if args.only else None
    unknown = (only or set()) - {r[0] for r in ROWS}
    if unknown:
        ap.error(f"unknown row(s) {', '.join(sorted(unknown))}; rows: "
                 + ", ".join(r[0] for r in ROWS))
    one_thread()
    results = []
    for rid, title, target, fn in ROWS:
        if only and rid not in only:
            continue
        r = fn()
        if r is None:
            r = result("", None, notes=f"skipped: C benchmark not built in {BUILD_DIR}")
        r.update(id=rid, title=title, target=target)
        if torch is None and r["torch"] is None and "PyTorch" not in r["notes"]:
            r["notes"] = join(r["notes"], NOTE_NO_TORCH)
        results.append(r)
        print(f"  measured {rid}", file=sys.stderr, flush=True)
    print_table(results, args.markdown)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(BUILD_DIR, c_side.C_OUTPUT, torch), "quick": QUICK,
                       "when": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "rows": results}, f,
                      indent=1)
    return 0


def _guess_build():
    d = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(hop.__file__))))
    return d if os.path.isdir(os.path.join(d, "bench")) else None


BUILD_DIR = None

if __name__ == "__main__":
    sys.exit(main())
