"""The sanitizer pass's own setup (scripts/dev.sh sanitize) still finds leaks.

That pass runs CPython on pymalloc with its arenas taken from malloc (the
preloaded hop_pymalloc_arenas, tests/python/pymalloc_arenas.c).  Each test
starts a Python process with the pass's environment: a hop block no object
holds is reported as leaked, at hop's allocator; tensors that objects alive at
exit hold are not (with pymalloc's own mmap'd arenas they were).  Outside the
sanitizer pass there is nothing to check.
"""
import os
import subprocess
import sys

import pytest

import hop

SANITIZED = "libasan" in os.environ.get("LD_PRELOAD", "")
pytestmark = pytest.mark.skipif(not SANITIZED, reason="runs in the sanitizer pass only")

HELD_AT_EXIT = """
import hop
KEPT = [hop.randn(100, seed=i) for i in range(200)]
BY_NUMPY = hop.numpy.ones((3, 5))
CACHE = {"t": hop.zeros(7), "nested": [hop.ones(9)]}
print("done")
"""

# hop_tensor_empty(HOP_F32, 1, {5000}) through hop._C's exported C API;
# HOP_F32 is 8 (include/hop/ops.h; saved graphs store the enum's values).
# 20,000 bytes: a block of its own from the system's allocator.  A block of
# a size class hop keeps for reuse (1000 floats, 4 KiB, was this test's)
# can be one that memory `import hop` left behind still points to (the
# thirty-ninth session's import-time math probes made one), which
# LeakSanitizer then counts as reachable.
LEAKED = """
import ctypes, hop
lib = ctypes.CDLL(hop._C.__file__)
lib.hop_tensor_empty.restype = ctypes.c_void_p
block = lib.hop_tensor_empty(ctypes.c_int(8), ctypes.c_int(1),
                             (ctypes.c_int64 * 1)(5000))
assert block
del block
print("done")
"""


def _run(code):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(hop.__file__)))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_pass_preloads_the_arena_library_and_leaves_pymalloc_on():
    assert "libhop_pymalloc_arenas.so" in os.environ["LD_PRELOAD"]
    assert "PYTHONMALLOC" not in os.environ
    assert "detect_leaks=1" in os.environ.get("ASAN_OPTIONS", "")


def test_tensors_that_live_objects_hold_at_exit_are_not_leaks():
    r = _run(HELD_AT_EXIT)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout == "done\n"
    assert "LeakSanitizer" not in r.stderr


def test_a_hop_block_that_nothing_holds_is_reported_at_hops_allocator():
    r = _run(LEAKED)
    assert r.stdout == "done\n"
    assert r.returncode != 0
    assert "ERROR: LeakSanitizer: detected memory leaks" in r.stderr
    assert "Direct leak of" in r.stderr and "capped_alloc" in r.stderr, r.stderr[-3000:]
