"""What the thread pool does with a compiled program's work (issue #30):
hop._C._pool_counts() counts the jobs it split over its threads, the jobs it
ran whole on the caller, and the pieces each side ran (runtime/pool.c)."""
import json
import os
import subprocess
import sys

import pytest

import hop
from hop import _C

# A fresh process: the pool's figures per kind of job start empty there, so
# the first jobs of the 16M group's kind take the pool whatever ran before.
CHILD = r"""
import json
import numpy as np
import hop
from hop import _C
n = 1 << 24
xn = np.linspace(-4, 4, n, dtype=np.float32)
x = hop.asarray(xn)
f = hop.compile(lambda x: (x * 2 + 1).relu().exp())
hop.set_num_threads(1)
c0 = _C._pool_counts()
one = f(x).numpy().copy()
c1 = _C._pool_counts()
hop.set_num_threads(2)
two = [f(x).numpy().copy() for _ in range(2)]
c2 = _C._pool_counts()
print(json.dumps({"one": {k: c1[k] - c0[k] for k in c0}, "two": {k: c2[k] - c1[k] for k in c1},
                  "same": all(t.tobytes() == one.tobytes() for t in two)}))
"""


def test_a_16m_fused_group_is_split_in_pieces_over_two_threads_with_one_threads_bits():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    got = json.loads(r.stdout)
    # one thread: the pool is not asked
    assert got["one"] == {"split": 0, "whole": 0, "caller_pieces": 0, "worker_pieces": 0}
    two = got["two"]
    # the first two jobs of a new kind take the pool (the caller alone is
    # tried at the third)
    assert (two["split"], two["whole"]) == (2, 0)
    pieces = two["caller_pieces"] + two["worker_pieces"]
    # every piece of both jobs ran once, on one side or the other, and a job
    # is many pieces (a late or descheduled thread holds back one)
    assert pieces % 2 == 0 and pieces // 2 >= 16
    assert got["same"]


@pytest.mark.parametrize("case", ["fused", "map"])
def test_small_work_stays_on_the_calling_thread(case):
    threads = hop.get_num_threads()
    try:
        hop.set_num_threads(2)
        if case == "fused":
            x = hop.randn(1000, seed=1)
            f = hop.compile(lambda x: (x * 2 + 1).relu().exp())
            args = (x,)
        else:
            x = hop.randn(100, 16, seed=1)
            w, b = hop.randn(16, seed=2), hop.randn(16, seed=3)
            f = hop.compile(lambda x, w, b: hop.map(lambda r, w, b: (r * w + b).relu(), x, w, b))
            args = (x, w, b)
        want = f(*args).numpy().copy()
        before = _C._pool_counts()
        for _ in range(50):
            got = f(*args)
        assert _C._pool_counts() == before
        assert got.numpy().tobytes() == want.tobytes()
    finally:
        hop.set_num_threads(threads)


def test_pool_counts_are_a_dict_of_four_counts():
    c = _C._pool_counts()
    assert sorted(c) == ["caller_pieces", "split", "whole", "worker_pieces"]
    assert all(type(v) is int and v >= 0 for v in c.values())
