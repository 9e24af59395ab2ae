"""The sanitizer pass's share of parametrized cases (budget.cases and
conftest.py): which cases a collection keeps, pass by pass and seed by seed.

Each check collects two modules in a child pytest (--collect-only, no test
runs): one whose functions have 2 to 31 cases each, and test_hostile.py,
marked every_case.  Run in the plain pass only (a child under the sanitizers
would load ASan's runtime for a collection)."""
import collections
import math
import os
import subprocess
import sys

import pytest

from budget import full

MODULES = ["test_numpy_eager_shape_fast_path.py", "test_hostile.py"]
HERE = os.path.dirname(os.path.abspath(__file__))

pytestmark = pytest.mark.skipif(not full(), reason="collects in a child process: plain pass only")


def collect(budget, seed):
    env = dict(os.environ, HOP_TEST_BUDGET=budget, HOP_TEST_SEED=str(seed))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "--collect-only", *MODULES], cwd=HERE, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    ids = [line for line in out.stdout.splitlines() if "::" in line]
    assert ids, out.stdout
    return ids, out.stdout


def by_function(ids):
    groups = collections.defaultdict(list)
    for i in ids:
        groups[i.split("[", 1)[0]].append(i)
    return groups


def test_the_plain_pass_keeps_every_case_and_the_sanitizer_pass_a_fifth_of_many():
    everything, _ = collect("full", 1)
    kept, text = collect("sanitize", 1)
    assert set(kept) <= set(everything)
    assert "HOP_TEST_SEED=1" in text
    groups, kept_groups = by_function(everything), by_function(kept)
    many = 0
    for name, cases in groups.items():
        n = len(cases)
        if "test_hostile.py" in name or n < 5 or "[" not in cases[0]:
            assert sorted(kept_groups[name]) == sorted(cases), name
        else:
            many += 1
            assert len(kept_groups[name]) == math.ceil(n / 5), name
    assert many >= 3  # the module has functions of 9 and of 31 cases
    # test_hostile.py's failed-call test has 62 cases; every_case keeps them
    assert len([i for i in kept if "test_a_failed_hop_call_in_a_trace_changes_nothing" in i]) == 62


def test_a_seed_draws_the_same_cases_again_and_another_seed_others():
    first, _ = collect("sanitize", 11)
    again, _ = collect("sanitize", 11)
    other, _ = collect("sanitize", 12)
    assert first == again
    assert len(other) == len(first) and set(other) != set(first)
