#!/usr/bin/python3
"""scripts/ab_threads.py - two builds of hop, A and B, timed in turn on the
thread rows, for a change to the pool measured on a busy machine.

    /usr/bin/python3 scripts/ab_threads.py A_BUILD B_BUILD [--rounds N] [--rows R,...] [--hog]

A_BUILD and B_BUILD are build trees (their python/ holds the hop package).
Each build runs in a child process that loads it once and keeps every
workload compiled; the parent asks A, then B, then A ... for one sample of a
row (windows of 2 ms of calls on 1 thread and on 2, alternating, in turn
first; a window's figure is the median time of its calls, since on a busy
machine a mean is the scheduler's slices), so a noisy neighbour
slows both builds alike.  It prints, per row and build, the median time per
call on 1 and on 2 threads, 1-thread/2-thread, and the load average before
and after.  --hog runs a CPU-bound process beside the measurement (bench's
map_threads_load).  The rows are bench/run.py's (its workloads are imported
from there).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = ["gemv", "xtw", "wx", "gemm", "batched", "small", "dot", "outer", "map", "fused", "assoc"]

CHILD = r"""
import json, os, statistics, sys, time, gc
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.argv = ["run.py", "--build", BUILD]
sys.path.insert(0, BENCH)
import run
import hop
import numpy as np

shapes = run.blas_shapes()
names = {"gemv": "gemv X@w 1000", "xtw": "X.T@w 1000", "wx": "w@X 1000", "gemm": "gemm 256",
         "batched": "batched 64x32x32", "small": "small 8x8", "dot": "dot 1M",
         "outer": "outer 1000"}
work = {}
for k, n in names.items():
    f, args = shapes[n]
    cf = hop.compile(f)
    work[k] = (lambda cf, args: lambda: cf(*args))(cf, args)
mf, (x, w, b), _ = run.map_case(100000)
work["map"] = lambda: mf(x, w, b)
_, fx, ff = run.fused_fn()
work["fused"] = lambda: ff(fx)
ax = hop.randn(run.BIG, seed=1)
af = hop.compile(lambda x: hop.associative_scan(lambda a, b: a + b, x))
work["assoc"] = lambda: af(ax)
for fn in work.values():
    for nt in (1, 2):
        hop.set_num_threads(nt)
        fn(); fn()
print("ready", flush=True)
gc.disable()
for line in sys.stdin:
    row, ms = line.split()
    fn, ms = work[row], float(ms)
    out = {1: [], 2: []}
    end = time.perf_counter() + ms / 1000
    for i in range(1 << 30):
        for nt in ((1, 2) if i % 2 == 0 else (2, 1)):
            hop.set_num_threads(nt)
            fn()  # the first call after a switch is not counted
            ts = []
            t0 = t = time.perf_counter_ns()
            while len(ts) < 3 or t - t0 < 2e6:
                fn()
                t1 = time.perf_counter_ns()
                ts.append(t1 - t)
                t = t1
            out[nt].append(statistics.median(ts))
        if time.perf_counter() >= end:
            break
    print(json.dumps({k: statistics.median(v) for k, v in out.items()}), flush=True)
"""


class Child:
    def __init__(self, build):
        code = CHILD.replace("BUILD", repr(os.path.abspath(build))).replace(
            "BENCH", repr(os.path.join(os.path.dirname(HERE), "bench")))
        self.p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        if line.strip() != "ready":
            raise SystemExit(f"{build}: the child did not start ({line!r})")

    def sample(self, row, ms):
        self.p.stdin.write(f"{row} {ms}\n")
        self.p.stdin.flush()
        return {int(k): v for k, v in json.loads(self.p.stdout.readline()).items()}

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--ms", type=float, default=60)
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--hog", action="store_true")
    o = ap.parse_args()
    rows = o.rows.split(",")
    load0 = os.getloadavg()
    kids = {"A": Child(o.a), "B": Child(o.b)}
    # (a session of its own, as bench/run.py's CpuHog: see there)
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                           start_new_session=True) if o.hog else None
    try:
        got = {(r, k): [] for r in rows for k in kids}
        for i in range(o.rounds):
            for r in rows:
                order = ["A", "B"] if i % 2 == 0 else ["B", "A"]
                for k in order:
                    got[r, k].append(kids[k].sample(r, o.ms))
    finally:
        if hog:
            hog.kill()
            hog.wait()
        for c in kids.values():
            c.close()
    load1 = os.getloadavg()
    print(f"A = {o.a}, B = {o.b}; {o.rounds} rounds; hog: {o.hog}; load average "
          f"{load0[0]:.2f} before, {load1[0]:.2f} after ({time.strftime('%H:%M UTC', time.gmtime())})")
    print(f"{'row':8} {'build':5} {'1 thread':>12} {'2 threads':>12} {'1/2':>6}  (median us/call; "
          f"1/2 is the median of per-window ratios)")
    for r in rows:
        for k in kids:
            s = got[r, k]
            t1 = statistics.median(x[1] for x in s) / 1e3
            t2 = statistics.median(x[2] for x in s) / 1e3
            ratio = statistics.median(x[1] / x[2] for x in s)
            print(f"{r:8} {k:5} {t1:12.1f} {t2:12.1f} {ratio:6.2f}")


if __name__ == "__main__":
    main()
