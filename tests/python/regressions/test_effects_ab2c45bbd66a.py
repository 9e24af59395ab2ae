"""Regression test written by scripts/fuzz.py (category effects).

AssertionError: call 1 ({'n': 3, 'seed': 1, 'k': None, 'change': 'array'}): hop.compile gave (('ok', ('tensor', 'float32', [2.3529999256134033, 3.6689999103546143, 1.25])), 'sum hop.tensor(7.272)/n'), eager (('ok', ('tensor', 'float32', [2.3529999256134033, 3.668999671936035, 1.249999761581421])), 'sum hop.tensor(7.2719994)/n')

Found with seed 14; hop 0.1.0.  The program is a spec of
tests/python/fuzz_effects.py (fuzz_effects.source(SPEC) prints it), checked by
fuzz_effects.check_spec: eager == hop.compile == fullgraph over the calls.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuzz_effects import check_spec  # noqa: E402

SPEC = {'category': 'effects',
 'mode': 'hop',
 'statements': ['asarray', 'print-traced'],
 'calls': [{'n': 3, 'seed': 0, 'k': None, 'change': 'array'},
           {'n': 3, 'seed': 1, 'k': None, 'change': 'array'}],
 'returns': 'acc'}


def test_effects_ab2c45bbd66a():
    check_spec(SPEC)
