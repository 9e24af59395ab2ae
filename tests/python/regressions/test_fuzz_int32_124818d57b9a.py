"""Regression test written by scripts/fuzz.py.

Found by scripts/fuzz.py with loops (issue #14), shrunk by hand (lowering/toolkit.c hop_lower_swap):
AssertionError: hop.trace vs NumPy: differs at (0, 0): 0 != 3
A while_loop in a while_loop body: after the inner loop's odd trip count its carry
slots held each other's buffers, and on the next outer iteration the inner counter's
initial 0 (8 bytes) was copied into the buffer the memory plan had given to the inner
loop's init, clobbering two int32 elements.  Swap partners now share one live range.

Found with seed None; hop 0.1.0.  The program is a spec of
tests/python/fuzz_programs.py, checked eager == hop.trace == hop.compile ==
NumPy by fuzz_programs.check_program.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_programs import check_program  # noqa: E402

SPEC = {'dtype': 'int32',
 'shape': [2, 4],
 'dynamic': False,
 'seed': 2482335848,
 'tree': ['while', 2, None,
          ['while', 1, None, ['var', 'acc1'], ['unary', 'neg', 'int32', ['var', 'acc0']]],
          ['var', 'y']]}


def test_fuzz_int32_124818d57b9a():
    check_program(SPEC)
