"""Regression test written by scripts/fuzz.py (category effects).

AssertionError: call 1 ({'n': 4, 'seed': 2, 'k': None, 'change': 'array'}): hop.compile gave (('ok', ('ndarray', 'float64', [17.785, 17.895, 19.443, 17.276])), ''), eager (('ok', ('ndarray', 'float64', [4.785, 4.895, 6.443, 4.276])), '')

Found with seed 7; hop 0.1.0.  The program is a spec of
tests/python/fuzz_effects.py (fuzz_effects.source(SPEC) prints it), checked by
fuzz_effects.check_spec: eager == hop.compile == fullgraph over the calls.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_effects import check_spec  # noqa: E402

SPEC = {'category': 'effects',
 'mode': 'numpy',
 'statements': ['str'],
 'calls': [{'n': 3, 'seed': 0, 'k': None, 'change': 'array'},
           {'n': 4, 'seed': 2, 'k': None, 'change': 'array'}],
 'returns': 'acc'}


def test_effects_ebca90ffb0b5():
    check_spec(SPEC)
