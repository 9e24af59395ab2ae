"""Regression test written by scripts/fuzz.py (category scalars).

AssertionError: call 1 after {'k': ['set', 2]}: the GraphModule: differs at (0, 0): 3.3615952 vs 2.3615952 (diff 1 > bound 4.5e-06)
 got=array([[3.3615952],
       [4.304    ]], dtype=float32)
want=array([[2.3615952],
       [3.304    ]], dtype=float32)
call 1 after {'k': ['set', 2]}: hop.compile: differs at (0, 0): 3.3615952 vs 2.3615952 (diff 1 > bound 4.5e-06)
 got=array([[3.3615952],
       [4.304    ]], dtype=float32)
want=array([[2.3615952],
       [3.304    ]], dtype=float32)

Found with seed 11; hop 0.1.0.  The program is a spec of
tests/python/fuzz_trust.py (fuzz_trust.source(SPEC) prints it), checked by
fuzz_trust.check_spec: every call equals eager on the current values.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_trust import check_spec  # noqa: E402

SPEC = {'category': 'scalars',
 'dtype': 'float32',
 'shape': [2, 1],
 'dynamic': False,
 'seed': 0,
 'init': {'k': 3, 'g': 2, 's': 2},
 'tree': ['wrap', ['invoke', ['sop', 'add', 'k', ['var', 'x']]]],
 'steps': [{'k': ['set', 2]}]}


def test_fuzz_scalars_float32_15f5e9fc1646():
    check_spec(SPEC)
