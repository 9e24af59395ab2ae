"""Regression test written by scripts/fuzz.py (category argobj).

AssertionError: call 1 after {'o': ['attr', 'w', 0]}: the GraphModule: differs at (0, 0): 0.104900114 vs -0.22179505 (diff 0.327 > bound 2.12e-07)
 got=array([[0.10490011],
       [0.10490011]], dtype=float32)
want=array([[-0.22179505],
       [-0.22179505]], dtype=float32)
call 1 after {'o': ['attr', 'w', 0]}: hop.compile: differs at (0, 0): 0.104900114 vs -0.22179505 (diff 0.327 > bound 2.12e-07)
 got=array([[0.10490011],
       [0.10490011]], dtype=float32)
want=array([[-0.22179505],
       [-0.22179505]], dtype=float32)

Found with seed 11; hop 0.1.0.  The program is a spec of
tests/python/fuzz_trust.py (fuzz_trust.source(SPEC) prints it), checked by
fuzz_trust.check_spec: every call equals eager on the current values.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_trust import check_spec  # noqa: E402

SPEC = {'category': 'argobj',
 'dtype': 'float32',
 'shape': [2, 1],
 'dynamic': False,
 'seed': 0,
 'holder': 'object',
 'tree': ['invoke', ['var', 'o.w']],
 'steps': [{'o': ['attr', 'w', 0]}]}


def test_fuzz_argobj_float32_c9b25315fe3a():
    check_spec(SPEC)
