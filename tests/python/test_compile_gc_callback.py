"""A gc callback of the user's while hop.compile translates (the forty-eighth
session): a collection that the translation's own allocations start calls
gc.callbacks, as a collection of eager's run would; the translator's call
guard took the callback for user code that library code runs, refused the
translation after it had run the function's effects (a user __hash__), and
the call fell back and ran them again (a LOG one 'h' longer than eager's).
The case is the forty-sixth campaign's, run with a callback installed and
the collector's threshold low enough to collect while translating."""
import gc

import pytest

from test_compile_campaign_s46 import \
    test_a_key_class_whose_hash_gets_effects_later_is_seen as _key_class_case


@pytest.fixture
def collector_with_a_callback():
    phases = []

    def callback(phase, info):
        phases.append(phase)

    threshold = gc.get_threshold()
    gc.callbacks.append(callback)
    gc.set_threshold(50, 2, 2)
    try:
        yield phases
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(callback)


@pytest.mark.parametrize("how", ["method", "helper"])
def test_a_collection_while_translating_runs_the_callback_and_no_effect_twice(
        collector_with_a_callback, how):
    _key_class_case(how)
    assert collector_with_a_callback, "no collection ran: the test would not test anything"
