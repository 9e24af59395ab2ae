"""A gc callback of the user's while hop.compile translates (the forty-eighth
session): a collection that the translation's own allocations start calls
gc.callbacks, as a collection of eager's run would; the translator's call
guard took the callback for user code that library code runs, refused the
translation after it had run the function's effects (a user __hash__), and
the call fell back and ran them again (a LOG one 'h' longer than eager's).
The case is the forty-sixth campaign's, run with a callback installed and
the collector's threshold low enough to collect while translating."""
import gc
import sys
import weakref

import pytest

from compile_values import campaign, warned_outcome

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


# ------------------------------------------------ finalizers (the forty-ninth session)

program, check = campaign("s49", outcome=warned_outcome())

class _Cycle:
    """A garbage cycle whose finalizer (by `how`) appends to FIN."""

    FIN, MADE = [], [0]

    def __init__(self, how):
        self.me = self
        n = _Cycle.MADE[0] = _Cycle.MADE[0] + 1
        if how == "finalize":
            weakref.finalize(self, _Cycle.finalized, n)
        elif how == "ref_callback":
            _Cycle.REFS.append(weakref.ref(self, lambda r: _Cycle.finalized(n)))
        self.n = n if how == "del" else None

    REFS = []

    @staticmethod
    def finalized(n):
        _Cycle.FIN.append(n)

    def __del__(self):
        if self.n is not None:
            _Cycle.finalized(self.n)


@pytest.mark.parametrize("how", ["del", "finalize", "ref_callback"])
def test_a_finalizer_the_collector_runs_while_translating_runs_once_and_f_compiles(
        monkeypatch, how):
    # was: the collector ran the finalizer of a garbage cycle while the
    # translator ran library code under the call guard (copy.deepcopy of a
    # user object); the guard refused it as user code, so it never ran
    # ("Exception ignored in ... Unsupported" on stderr, FIN one short) and
    # f fell back to eager for good.  Now code the collector runs is the
    # collector's (_frame_base._watching_the_collector): it runs once, as at
    # one of eager's collections.  Each collection leaves a new cycle behind
    # (a gc callback makes one), so the deepcopy's collections have one to
    # finalize; every cycle made must be finalized once.
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    _Cycle.FIN.clear()
    _Cycle.MADE[0] = 0

    def leave_a_cycle(phase, info):
        if phase == "stop":
            _Cycle(how)

    threshold = gc.get_threshold()
    gc.set_threshold(1000, 10, 10)  # (some collections come in the deepcopy)
    gc.callbacks.append(leave_a_cycle)
    try:
        cf = check("""
            import copy
            LOG = []
            class P:
                def __init__(self):
                    self.rows = [[i] for i in range(2500)]
            PT = P()
            def f(x):
                LOG.append('before')
                c = copy.deepcopy(PT)
                LOG.append('after')
                return x * len(c.rows)
            def snap():
                return LOG
            """, calls=3, name="collected")
    finally:
        gc.callbacks.remove(leave_a_cycle)
        gc.set_threshold(*threshold)
    gc.collect()
    assert not unraisable, [str(u.exc_value) for u in unraisable]
    assert _Cycle.MADE[0] > 3 and sorted(_Cycle.FIN) == list(range(1, _Cycle.MADE[0] + 1))
    assert cf.eager_calls == 0 and len(cf._entries) == 1, cf.explain()
    _Cycle.REFS.clear()


@pytest.mark.parametrize("stmt", ["HOLD.pop()", "del HOLD[-1]", "HOLD[-1:] = []"])
@pytest.mark.parametrize("how", ["del", "finalize"])
def test_an_object_f_drops_from_a_global_list_is_finalized_where_eager_does(stmt, how):
    # was: the compile cache kept the translator, whose shadow copy of HOLD
    # still held the items the function dropped: the first call's item was
    # finalized at the replay, as eagerly, but a later translation's (HOLD
    # shorter: a recompile) lived as long as its plan, so its __del__ or
    # finalize never ran (LOG lacked ('fin', 8) and ('fin', 7)); now the
    # translator drops the call's objects once the plan is made
    # (_frame.Translator.release)
    make = "D(i)" if how == "del" else "O(i)"
    check(f"""
        import weakref
        LOG = []
        class D:
            def __init__(self, n):
                self.n = n
            def __del__(self):
                LOG.append(('fin', self.n))
        class O:
            def __init__(self, n):
                self.n = n
        HOLD = [{make} for i in range(10)]
        for o in HOLD:
            if type(o) is O:
                weakref.finalize(o, LOG.append, ('fin', o.n))
        del o
        def f(x):
            print('a')
            LOG.append('before')
            {stmt}
            LOG.append('after')
            return x * 2
        def snap():
            return LOG
        """, calls=3, name="dropped")


def test_a_del_given_to_a_class_f_instantiates_between_calls_is_run_as_eagerly():
    # was: the plan of a function making and dropping an object of a class
    # without __del__ kept answering after `D.__del__ = dl` (LOG lacked
    # eager's 'del' on every later call: the plan makes no object); now a
    # user class's absent __del__ is guarded as its other special methods
    # are (_guards._IMPLICIT_SPECIALS), and the retrace refuses the class
    # (_frame.Translator._check_class): the call runs eagerly
    check("""
        LOG = []
        class D:
            pass
        def dl(self):
            LOG.append('del')
        def change(i):
            if i == 1:
                D.__del__ = dl
        def f(x):
            print('a')
            o = D()
            o = None
            LOG.append('after')
            return x * 2
        def snap():
            return LOG
        """, calls=3, name="del_added")
