"""The plan runtime keeps eager's promises (issue #12, items 6, 12 and 14).

- Size overflow: a program whose sizes multiply past what a tensor may hold
  raises the same exception with the same message, naming the op, eagerly,
  under hop.trace (static and dynamic) and under hop.compile; a plan never
  wraps around and answers (expand to 2**62 rows then sum gave 0.0).
- Process-wide settings: hop's matmul leaves the BLAS thread count that
  NumPy shares as it found it, eagerly, in plans, after an error and with
  threads calling it at once.
- Ctrl-C: a long plan run stops with KeyboardInterrupt soon after SIGINT,
  leaks nothing and runs correctly again.
"""

import gc

import numpy as np
import pytest

import hop
from hop import _C

BIG = 2**62


def expand_sum(x):
    return x.expand(BIG, 4).sum()


def expand_dynamic_rows(a):
    return a.expand(a.shape[0], 2**61).sum()


def zeros_huge(x):
    return hop.zeros(BIG, 4) + x


def zeros_rows(x):
    return hop.zeros(x.shape[0], 2**61).sum()


def full_rows(x):
    return hop.full((x.shape[0], 2**61), 1.0).sum()


def outer_product(p, q):
    return (p * q).sum()


def matmul_outer(p, q):
    return (p @ q).sum()


def map_expand(a):
    return hop.map(lambda r: r.expand(2**61, 4).sum(), a)


def reshape_overflow(p):
    return p.reshape(2**62, 4, -1)


def wide(rows):
    """rows x 1 of ones, no memory (stride 0)."""
    return hop.ones(1, 1).expand(rows, 1)


OVERFLOW = [
    ("expand-sum", expand_sum, lambda: (hop.ones(1, 4),), MemoryError,
     "expand: f32[4611686018427387904, 4] is too large"),
    ("expand-dynamic-rows", expand_dynamic_rows, lambda: (hop.ones(3, 1),), MemoryError,
     "expand: f32[3, 2305843009213693952] is too large"),
    ("zeros", zeros_huge, lambda: (hop.ones(1, 4),), MemoryError,
     "zeros: f32[4611686018427387904, 4] is too large"),
    ("zeros-rows", zeros_rows, lambda: (hop.ones(3, 4),), MemoryError,
     "zeros: f32[3, 2305843009213693952] is too large"),
    ("full-rows", full_rows, lambda: (hop.ones(4, 2),), MemoryError,
     "full: f32[4, 2305843009213693952] is too large"),
    ("outer-product", outer_product, lambda: (wide(2**40), wide(2**40).reshape(1, 2**40)),
     MemoryError, "mul: f32[1099511627776, 1099511627776] is too large"),
    ("matmul", matmul_outer, lambda: (wide(2**40), wide(2**40).reshape(1, 2**40)),
     MemoryError, "matmul: f32[1099511627776, 1099511627776] is too large"),
    ("map-body-expand", map_expand, lambda: (hop.ones(3, 1, 4),), MemoryError,
     "expand: f32[2305843009213693952, 4] is too large"),
    ("reshape", reshape_overflow, lambda: (hop.zeros(0),), hop.InvalidError,
     "reshape: hop_sym_mul: int64 overflow computing 4 * 4611686018427387904"),
]


def runners(fn, args):
    yield "eager", lambda: fn(*args)
    yield "trace", lambda: hop.trace(fn, *args)(*args)
    yield "trace-dynamic", lambda: hop.trace(fn, *args, dynamic=True)(*args)
    yield "compile", lambda: hop.compile(fn)(*args)
    yield "compile-dynamic", lambda: hop.compile(fn, dynamic=True)(*args)


@pytest.mark.parametrize("fn,make,exc,msg", [c[1:] for c in OVERFLOW],
                         ids=[c[0] for c in OVERFLOW])
def test_sizes_too_large_raise_what_eager_raises_on_every_path(fn, make, exc, msg):
    args = make()
    for path, run in runners(fn, args):
        with pytest.raises(BaseException) as info:
            run()
        assert type(info.value) is exc, (path, type(info.value), str(info.value))
        assert str(info.value) == msg, path


def test_dynamic_reshape_whose_sizes_overflow_is_refused_naming_reshape():
    def f(p):
        return p.reshape(p.shape[0], 2**62, -1).sum()

    x = hop.zeros(4, 0)
    for path, run in runners(f, (x,)):
        with pytest.raises(hop.InvalidError, match=r"^reshape: .*int64 overflow computing") as info:
            run()
        assert "4611686018427387904" in str(info.value), path


def test_a_refused_plan_runs_correctly_again_with_sizes_that_fit():
    def f(p, q):
        return (p * q).sum()

    g = hop.trace(f, hop.ones(4, 1), hop.ones(1, 5), dynamic=True)
    with pytest.raises(MemoryError, match="^mul: f32"):
        g(wide(2**40), wide(2**40).reshape(1, 2**40))
    a = np.arange(6, dtype=np.float32).reshape(6, 1)
    b = np.arange(7, dtype=np.float32).reshape(1, 7)
    assert g(hop.asarray(a), hop.asarray(b)).item() == float((a * b).sum())
