"""Regression test written by scripts/fuzz.py (category rebind).

AssertionError: call 4 after {'G0': ['rebind', 0]}: the GraphModule: differs at (0, 0): 0.64042264 vs -0.22179505 (diff 0.862 > bound 2.12e-07)
 got=array([[0.64042264],
       [0.64042264]], dtype=float32)
want=array([[-0.22179505],
       [-0.22179505]], dtype=float32)
call 4 after {'G0': ['rebind', 0]}: hop.compile: differs at (0, 0): 0.64042264 vs -0.22179505 (diff 0.862 > bound 2.12e-07)
 got=array([[0.64042264],
       [0.64042264]], dtype=float32)
want=array([[-0.22179505],
       [-0.22179505]], dtype=float32)

Found with seed 12; hop 0.1.0.  The program is a spec of
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
 'tree': ['invoke', ['var', 'G0']],
 'steps': [{}, {}, {}, {'G0': ['rebind', 0]}]}


def test_fuzz_rebind_float32_2b2fb9bfc435():
    check_spec(SPEC)
