"""How much of each randomized test a pass runs.

CI runs the Python suite twice (docs/RELIABILITY.md): plainly, where the
hypothesis tests run their full counts to find wrong answers, and under
ASan + UBSan, which looks for memory errors along code paths.  A few examples
reach the paths a test can reach; the full counts there only triple the
sanitizer pass's time.  So `scripts/dev.sh sanitize` sets
HOP_TEST_BUDGET=sanitize and each hypothesis test asks for its count through
examples():

    @settings(max_examples=examples(300), deadline=None)

The same share applies to a test function's parametrized cases where it has
many (cases(), below; conftest.py picks which): the sanitizer pass runs a fifth
of them, drawn anew each run from HOP_TEST_SEED.

The plain pass (no HOP_TEST_BUDGET, or "full") gets n itself.  By hand,
HOP_TEST_BUDGET=stress runs ten times the full counts: most hypothesis tests
are not derandomized, so every CI run draws new examples, and a stress run is
how a reference too weak for some draw is found before CI finds it.  A
campaign whose stress run has met a difference not yet fixed draws a fixed set
in the plain and sanitizer passes until it is fixed (pinned(), below).
"""

import math
import os

# The share of each full count that the sanitizer pass runs.
_SHARE = {"full": 1.0, "sanitize": 0.2, "stress": 10.0}

_budget = os.environ.get("HOP_TEST_BUDGET", "full")
if _budget not in _SHARE:
    raise RuntimeError(f"HOP_TEST_BUDGET must be one of {sorted(_SHARE)}, got {_budget!r}")


def full():
    """True in the plain pass: tests that assert what their examples covered
    (each kind of program drawn at least k times) assert it there only."""
    return _budget in ("full", "stress")


def examples(n):
    """The number of examples a test whose full count is n runs in this pass:
    n in the plain pass, a share of it (at least 1) under the sanitizers."""
    return max(1, math.ceil(n * _SHARE[_budget]))


# A test function with at least this many parametrized cases runs a share of
# them under the sanitizers; one with fewer runs them all in every pass.
MANY_CASES = 5


def cases(n):
    """How many of a test function's n parametrized cases this pass runs:
    all of them in the plain and stress passes and wherever n < MANY_CASES;
    examples(n) (a fifth, at least 1) under the sanitizers.  The cases of
    one function mostly take one code path over other data (a dtype, a
    shape, an operator); the plain pass runs each of them for the answer,
    and ASan looks for memory errors along paths.  A module whose cases are
    each a path of their own (hostile input, untrusted files, the trust
    tests) is marked every_case and keeps them all (conftest.py)."""
    return n if n < MANY_CASES else min(n, examples(n))


def seed():
    """The run's seed for drawing which cases a share keeps: HOP_TEST_SEED,
    which conftest.py sets once per run (before pytest-xdist starts its
    workers, which must all collect the same items) and prints at the end;
    set it by hand to draw the same cases again."""
    return int(os.environ["HOP_TEST_SEED"])


def pinned():
    """derandomize= for a campaign whose stress runs have found differences
    from NumPy that are not fixed yet (listed in the test's module): the
    plain and sanitizer passes draw one fixed set of examples, which passes,
    so CI does not fail at random on a known finding; HOP_TEST_BUDGET=stress
    still draws new ones every run, which is how those findings are met
    again and how the fixes are checked.  Remove a test's use of it once
    its stress run passes."""
    return _budget != "stress"



def size_safe_numbers():
    """Junk ints and floats that cannot make a real array of gigabytes:
    small (three of them multiply to at most 300^3 elements) or beyond any
    memory (2^44 and up, NaN, inf), so a junk test's draw costs a MemoryError
    at once, not a 12.5 GB allocation (zeros(3138415723): 6 s, and two such
    draws on two xdist workers under ASan can exhaust the machine)."""
    from hypothesis import strategies as st
    return st.one_of(st.integers(-300, 300), st.integers(2**44, 2**70),
                     st.integers(-2**70, -2**44), st.floats(-300, 300),
                     st.floats(min_value=1e13), st.floats(max_value=-1e13),
                     st.just(math.nan))
