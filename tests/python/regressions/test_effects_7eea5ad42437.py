"""Regression test written by scripts/fuzz.py (category effects).

AssertionError: call 1 ({'n': 6, 'seed': 0, 'k': None, 'change': 'array'}): hop.compile gave (('ok', ('ndarray', 'float64', [18.411, 17.309, 16.623, 16.55, 18.94, 19.238])), ''), eager (('ok', ('ndarray', 'float64', [6.411, 5.309, 4.623, 4.55, 6.9399999999999995, 7.2379999999999995])), '')

Found with seed 10; hop 0.1.0.  The program is a spec of
tests/python/fuzz_effects.py (fuzz_effects.source(SPEC) prints it), checked by
fuzz_effects.check_spec: eager == hop.compile == fullgraph over the calls.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_effects import check_spec  # noqa: E402

SPEC = {'category': 'effects',
 'mode': 'numpy',
 'statements': ['hash', 'str'],
 'calls': [{'n': 3, 'seed': 0, 'k': None, 'change': 'array'},
           {'n': 6, 'seed': 0, 'k': None, 'change': 'array'}],
 'returns': 'acc'}


def test_effects_7eea5ad42437():
    check_spec(SPEC)
