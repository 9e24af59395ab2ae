"""Regression test written by scripts/fuzz.py (category effects).

AssertionError: call 1 ({'n': 6, 'seed': 30, 'k': None, 'change': 'array'}): hop.compile gave (('ok', ('ndarray', 'float64', [0.20700000000000002, 0.7869999999999999, -0.22299999999999998, 1.278, 1.848, 2.1029999999999998])), ''), eager (('ok', ('ndarray', 'float64', [0.7070000000000001, 1.287, 0.277, 1.778, 2.348, 2.6029999999999998])), '')

Found with seed 12; hop 0.1.0.  The program is a spec of
tests/python/fuzz_effects.py (fuzz_effects.source(SPEC) prints it), checked by
fuzz_effects.check_spec: eager == hop.compile == fullgraph over the calls.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_effects import check_spec  # noqa: E402

SPEC = {'category': 'effects',
 'mode': 'numpy',
 'statements': ['hash'],
 'calls': [{'n': 3, 'seed': 0, 'k': None, 'change': 'array'},
           {'n': 6, 'seed': 30, 'k': None, 'change': 'array'}],
 'returns': 'acc'}


def test_effects_2e3ea4a2880c():
    check_spec(SPEC)
