"""The differential campaign of hop.compile's Python effects (issue 24,
tests/python/fuzz_effects.py): generated functions mixing tensor code with
each kind of Python effect, conversions of traced values, a keyword argument
and rebinding, called several times while the world changes; eager ==
hop.compile == hop.compile(fullgraph=True) in results, printed text and
every effect, or fullgraph refuses before any effect.  Longer runs:
scripts/fuzz.py --category effects."""

from hypothesis import HealthCheck, given, settings

import fuzz_effects as fe
from budget import examples


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=fe.specs())
def test_compiled_calls_have_eagers_results_output_and_effects(spec):
    fe.check_spec(spec)


def test_each_statement_kind_alone_with_every_change():
    # every kind at least once, whatever Hypothesis draws
    for name in sorted(fe.STATEMENTS):
        for mode in ("numpy", "hop"):
            fe.check_spec({"category": "effects", "mode": mode, "statements": [name],
                           "returns": "pair",
                           "calls": [{"n": 3, "seed": s, "k": k, "change": c}
                                     for s, (k, c) in enumerate(zip(
                                         [None, 2.0, None, 2], ["none", "counter", "array",
                                                                "reseed"]))]})


def test_each_statement_kind_in_numpy_code_in_a_loop_a_with_block_and_a_helper():
    # issue 28: NumPy code breaks too; Python gets NumPy's bits (printed
    # text and stored values equal eager's exactly)
    # (alone: test_each_statement_kind_alone_with_every_change)
    for wrap in ("loop", "helper"):
        for name in sorted(fe.STATEMENTS):
            fe.check_spec({"category": "effects", "mode": "numpy", "statements": [name],
                           "returns": "pair", "wrap": wrap,
                           "calls": [{"n": 3, "seed": s, "k": k, "change": c}
                                     for s, (k, c) in enumerate(zip(
                                         [None, 2.0, None], ["none", "counter", "clear"]))]})


def test_each_statement_kind_in_a_loop_a_with_block_and_a_helper():
    # issue 28: a break or an effect inside a loop, a with block or a called
    # function, eager == compiled in results, output and effects
    for wrap in ("loop", "while", "with", "helper"):
        for name in sorted(fe.STATEMENTS):
            fe.check_spec({"category": "effects", "mode": "hop", "statements": [name],
                           "returns": "pair", "wrap": wrap,
                           "calls": [{"n": 3, "seed": s, "k": k, "change": c}
                                     for s, (k, c) in enumerate(zip(
                                         [None, 2.0, None], ["none", "counter", "clear"]))]})
