"""Regression test written by scripts/fuzz.py.

Found by scripts/fuzz.py with loops (issue #14), shrunk by hand (hop/switch.c merge_size):
DataDependentError: expand: data-dependent: cannot decide s1 == u1 (u1 is unbacked; its value is only known at run time)
Branch 0 expands c0 (f32[4]) to x's [s0, s1], giving f32[s0, 4] and guarding s1 == 4 in
that branch; switch ignored a branch's own guards (cond does not) and gave its output a
fresh unbacked size, so expanding the result to x.shape could not be decided.

Found with seed None; hop 0.1.0.  The program is a spec of
tests/python/fuzz_programs.py, checked eager == hop.trace == hop.compile ==
NumPy by fuzz_programs.check_program.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_programs import check_program  # noqa: E402

SPEC = {'dtype': 'float32',
 'shape': [6, 4],
 'dynamic': True,
 'seed': 48827,
 'tree': ['switch', ['data', ['gt0', ['var', 'c1']], 0], ['var', 'c0'], ['var', 'x']]}


def test_fuzz_float32_ca6ccc2b6533():
    check_program(SPEC)
