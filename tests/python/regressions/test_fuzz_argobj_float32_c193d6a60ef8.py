"""Regression test written by scripts/fuzz.py (category argobj).

AssertionError: call 4 after {'o': ['attr', 'w', 0]}: the GraphModule: raised GuardError: guard failed: o.w was rebound (the trace used an object freed since, now it is a tensor (f32[1])) where eager returned a value

Found with seed 4161; hop 0.1.0.  The program is a spec of
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
 'tree': ['binary', 'add', 'float32', ['var', 'y'],
          ['cond', ['psize', 'n', 2], ['var', 'o.w'], ['var', 'x']]],
 'steps': [{'o': ['attr', 'w', 0]}, {'o': ['attr', 'w', 0]}, {'o': ['mutate', 'w', 0]},
           {'o': ['attr', 'w', 0]}]}


def test_fuzz_argobj_float32_c193d6a60ef8():
    check_spec(SPEC)
