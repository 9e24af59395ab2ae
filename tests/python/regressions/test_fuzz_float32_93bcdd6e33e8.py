"""Regression test written by scripts/fuzz.py.

Found by the differential fuzzer before scripts/fuzz.py existed (hop/builtins.c merge_size):
DataDependentError: expand: data-dependent: cannot decide s1 == u0 (u0 is unbacked; its value is only known at run time)
c0 (a closed-over f32[4]) expanded to x.shape [s0, s1] guards s1 == 4 and gives f32[s0, 4];
cond then saw sizes s1 and 4 as different and gave its output a fresh unbacked size.

Found with seed None; hop 0.1.0.  The program is a spec of
tests/python/fuzz_programs.py, checked eager == hop.trace == hop.compile ==
NumPy by fuzz_programs.check_program.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_programs import check_program  # noqa: E402

SPEC = {'dtype': 'float32',
 'shape': [3, 4],
 'dynamic': True,
 'seed': 7,
 'tree': ['cond', ['pexpr', ['gt0', ['var', 'y']], 3], ['var', 'y'], ['var', 'c0']]}


def test_fuzz_float32_93bcdd6e33e8():
    check_program(SPEC)
