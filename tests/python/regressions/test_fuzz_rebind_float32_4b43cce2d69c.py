"""Regression test written by scripts/fuzz.py (category rebind).

AssertionError: call 1 after {'g': ['set', 3]}: the GraphModule: differs at (0, 0): 4.361595 vs 5.361595 (diff 1 > bound 1.34e-05)
 got=array([[4.361595],
       [5.304   ]], dtype=float32)
want=array([[5.361595],
       [6.304   ]], dtype=float32)
call 1 after {'g': ['set', 3]}: hop.compile: differs at (0, 0): 4.361595 vs 5.361595 (diff 1 > bound 1.34e-05)
 got=array([[4.361595],
       [5.304   ]], dtype=float32)
want=array([[5.361595],
       [6.304   ]], dtype=float32)

Found with seed 11; hop 0.1.0.  The program is a spec of
tests/python/fuzz_trust.py (fuzz_trust.source(SPEC) prints it), checked by
fuzz_trust.check_spec: every call equals eager on the current values.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_trust import check_spec  # noqa: E402

SPEC = {'category': 'rebind',
 'dtype': 'float32',
 'shape': [2, 1],
 'dynamic': False,
 'seed': 0,
 'init': {'k': 2, 'g': 2},
 'tree': ['sop', 'add', 'k', ['invoke', ['sop', 'add', 'g', ['var', 'x']]]],
 'steps': [{'g': ['set', 3]}]}


def test_fuzz_rebind_float32_4b43cce2d69c():
    check_spec(SPEC)
