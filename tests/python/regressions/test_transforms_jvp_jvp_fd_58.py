"""Regression test from CI's sanitize pass (category transforms).

AssertionError: jvp_jvp: jvp(jvp): second directional derivative vs finite
differences: got -658.1314655778804 where the reference is -658.2205893779225

hop was right; the reference was not.  A central second difference errs by
eps**2/12 times the fourth derivative, which is large here, so the step
1e-4 was 1.4e-4 off while the smoothness check (two steps agreeing to 1e-3)
accepted it.  fuzz_transforms.Checker.smooth now returns the Richardson
extrapolation of its two steps (-658.13138...), which hop's exact value
matches to 1e-7.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import fuzz_transforms as ft  # noqa: E402

SPEC = {'shape': [], 'batch': 1, 'seed': 58, 'zeros': True, 'mode': 'plain',
        'batched': [False, False], 'checks': ['jvp_jvp'],
        'prog': [['switch', [['dyn', 'get'], ['guard']], [['op', 'sin']], [['op', 'sin']]],
                 ['op', 'sin'], ['op', 'sin']]}


def test_transforms_jvp_jvp_fd_58():
    ft.check_spec(SPEC)


def test_the_second_difference_reference_is_extrapolated():
    c = ft.Checker(SPEC)
    plain = c.fd(1e-4, 2)
    ref = c.smooth2()
    # The plain step is off by more than the check's tolerance; the
    # extrapolated one is not (the exact value is hop's jvp(jvp)).
    assert not np.isclose(plain, -658.1314655778804, rtol=1e-4, atol=1e-4)
    assert np.isclose(ref, -658.1314655778804, rtol=1e-6, atol=0)
