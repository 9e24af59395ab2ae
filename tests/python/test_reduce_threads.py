"""Large reductions over the thread pool keep NumPy's bits (issues #29, #30).
A full float sum or mean of one contiguous run is NumPy's chunks of 8192
elements summed pairwise and added in order (docs/ARCHITECTURE.md,
"Summation order"); with two threads hop sums the chunks on both and adds
their sums in order on the caller (runtime/kernel.c, run_shared_sum), so
the bits are one thread's and NumPy's.  A float prod multiplies one element
at a time, so a full prod stays one piece; a prod over an axis splits its
output elements.  hop._C._pool_counts() shows that the pool took the job
(before, a reduction to one element was never split: pieces split output
elements)."""
import json
import os
import subprocess
import sys

# A fresh process: the pool's figures per kind of job start empty there, so
# the first jobs of a kind take the pool (runtime/pool.c).
CHILD = r"""
import json
import numpy as np
import hop
import hop.numpy as hnp
from hop import _C
rng = np.random.default_rng(7)
cases = {}
# lengths: NumPy's chunks and a tail, and more than one round of 256 chunks
for n, dt in ((1_000_003, np.float64), (1 << 20, np.float64), (2_100_001, np.float32)):
    v = rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))
    cases[f"{n} {np.dtype(dt).name}"] = v.astype(dt)
m = (1.0 + rng.standard_normal((8, 60_000)) * 1e-3)
ops = {"sum": lambda a: a.sum(), "mean": lambda a: a.mean(), "np.sum": lambda a: np.sum(a),
       "prod": lambda a: np.prod(a)}
out = {"split": {}, "same": {}}
for name, an in cases.items():
    a = hnp.asarray(an)
    for op, f in ops.items():
        want = f(an)
        hop.set_num_threads(1)
        one = f(a)
        hop.set_num_threads(2)
        c0 = _C._pool_counts()
        two = f(a)
        c1 = _C._pool_counts()
        hop.set_num_threads(1)
        key = f"{op} {name}"
        out["split"][key] = c1["split"] - c0["split"]
        out["same"][key] = [np.asarray(one).tobytes() == np.asarray(want).tobytes(),
                            np.asarray(two).tobytes() == np.asarray(want).tobytes(),
                            np.asarray(two).dtype == np.asarray(want).dtype]
a = hnp.asarray(m)
want = np.prod(m, axis=1)
hop.set_num_threads(2)
c0 = _C._pool_counts()
two = np.prod(a, axis=1)
c1 = _C._pool_counts()
hop.set_num_threads(1)
one = np.prod(a, axis=1)
out["split"]["prod axis=1"] = c1["split"] - c0["split"]
out["same"]["prod axis=1"] = [np.asarray(one).tobytes() == want.tobytes(),
                              np.asarray(two).tobytes() == want.tobytes(),
                              np.asarray(two).dtype == want.dtype]
print(json.dumps(out))
"""


def test_large_sums_means_and_prods_over_two_threads_give_one_threads_and_numpys_bits():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    got = json.loads(r.stdout)
    for key, (one, two, dtype) in got["same"].items():
        assert one and two and dtype, key
    # the first float64 sum and mean of a kind take the pool (later ones of
    # the same kind may run on the caller alone when that was faster)
    assert got["split"]["sum 1000003 float64"] == 1
    assert got["split"]["mean 1000003 float64"] == 1
    assert got["split"]["sum 2100001 float32"] >= 1  # its rounds: a job each
    # a full prod is one element at a time: one piece, never split
    assert all(v == 0 for k, v in got["split"].items() if k.startswith("prod ") and
               k != "prod axis=1")
    assert got["split"]["prod axis=1"] == 1
