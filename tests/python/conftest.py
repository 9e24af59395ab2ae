"""Makes `import hop` import the package from the build tree.

Set HOP_PYTHONPATH to the build's python directory (<build>/python, where
hop/ and hop/_C*.so are assembled); PYTHONPATH works too.  Hypothesis's
examples and caches go to <build>/hypothesis.  budget.py says how many
examples and parametrized cases each pass runs; the markers below say which
tests run alone, which only in the plain pass and which run every case in
every pass.
"""
import gc
import os
import random
import sys

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

import budget

_path = os.environ.get("HOP_PYTHONPATH")
if _path:
    sys.path.insert(0, os.path.abspath(_path))
    # Hypothesis keeps its examples and caches in the build tree, not in the
    # checkout: a test run writes nowhere else.
    set_hypothesis_home_dir(os.path.join(os.path.dirname(os.path.abspath(_path)), "hypothesis"))


# Hypothesis's health checks that judge how a test's data was drawn, not
# what hop did, fail a run by chance: a draw that filters (nonzero divisors)
# overran its buffer 20 times in one sanitizer run ("data_too_large", a
# seed-dependent failure of a test that passes on every other seed), and
# "too_slow" is a timing under load.  Every test's settings inherit these
# (loaded before the test modules are imported); the checks that a strategy
# can draw at all (filter_too_much, ...) stay on.
settings.register_profile("hop", suppress_health_check=[HealthCheck.data_too_large,
                                                        HealthCheck.too_slow])
settings.load_profile("hop")


if os.environ.get("HOP_TEST_BUDGET") == "sanitize":
    # Under the sanitizer pass the tests that check hop against PyTorch skip
    # (they ran in the plain pass): with torch loaded, GCC 12's LeakSanitizer
    # crashes in its own stop-the-world at exit on a bogus dynamic-TLS entry
    # ("Tracer caught signal 11"), so the pass would fail whatever hop did.
    sys.modules["torch"] = None


def pytest_configure(config):
    # scripts/dev.sh runs the suite on both cores (pytest-xdist, -n 2) and then
    # the tests marked serial alone; the sanitizer pass leaves out fuzztool.
    config.addinivalue_line("markers", "serial: runs alone, after the parallel part of the "
                            "suite (it times itself or needs both cores)")
    config.addinivalue_line("markers", "fuzztool: a test of scripts/fuzz.py and its checkers "
                            "themselves, run once per CI, in the plain pass")
    config.addinivalue_line("markers", "every_case: every parametrized case runs in every "
                            "pass (budget.cases)")
    # One seed per run for the cases a share keeps, set here, in the process
    # that starts pytest-xdist's workers, before it starts them: they inherit
    # it, and each must collect the same items.
    os.environ.setdefault("HOP_TEST_SEED", str(random.SystemRandom().randrange(1 << 31)))
    # pytest resets warning filters per test: fuzz_programs' own filter for
    # its generated functions (which close over their never-changing spec
    # tree) is repeated here.
    config.addinivalue_line("filterwarnings",
                            r"ignore:hop. Program.function.<locals>:RuntimeWarning")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # scripts/dev.sh's serial run collects only the modules whose text says
    # pytest.mark.serial, and the parallel run deselects every serial test:
    # a test marked serial some other way would run in neither.  (tryfirst:
    # before -m deselects, so the parallel run, which collects all, checks.)
    for path in {item.path for item in items if item.get_closest_marker("serial")}:
        if "pytest.mark.serial" not in path.read_text():
            raise pytest.UsageError(f"{path.name} marks a test serial without the text "
                                    "pytest.mark.serial, which scripts/dev.sh looks for")
    keep_share_of_cases(config, items)


def keep_share_of_cases(config, items):
    # A test function with many parametrized cases runs the share of them
    # that budget.cases gives this pass (all but under the sanitizers), drawn
    # with the run's seed and the function's name, so each run of the
    # sanitizer pass covers other cases and HOP_TEST_SEED draws them again.
    if budget.full():
        return
    groups = {}
    for item in items:
        if "[" in item.nodeid and not item.get_closest_marker("every_case"):
            groups.setdefault(item.nodeid.split("[", 1)[0], []).append(item)
    dropped = set()
    for name, group in groups.items():
        keep = budget.cases(len(group))
        if keep < len(group):
            rng = random.Random(f"{budget.seed()} {name}")
            kept = set(rng.sample(range(len(group)), keep))
            dropped.update(id(item) for i, item in enumerate(group) if i not in kept)
    if dropped:
        config.hook.pytest_deselected(items=[item for item in items if id(item) in dropped])
        items[:] = [item for item in items if id(item) not in dropped]


def pytest_terminal_summary(terminalreporter):
    if not budget.full():
        terminalreporter.write_line(
            f"hop: a share of each test function's parametrized cases ran (budget.cases), "
            f"drawn with HOP_TEST_SEED={budget.seed()}")


@pytest.fixture
def heap_frozen():
    """The case runs with what the process held before it out of the
    collector's reach (gc.freeze): a gc.collect() in the case walks only what
    the case made, not the whole suite's heap (with every test collected, a
    full collection is a large part of the time of a test that collects per
    case, most of all under ASan).  What the case makes and drops is
    collected as before, so a count of live C blocks, a weakref to an object
    the case made or a count of the cycles it made means what it meant; a
    test that needs an object from before the case collected must not use
    this.  Garbage from before the case stays uncollected (and uncounted)
    until the case ends; freezing and unfreezing move lists, they walk
    nothing."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.fixture
def kernels():
    """make(sig, fn, **kw) -> a registered hop.foreign kernel, unregistered
    after the test."""
    import hop
    made = []

    def make(sig, fn, **kw):
        k = hop.foreign(sig, fn, **kw)
        made.append(k)
        return k

    yield make
    for k in made:
        k.unregister()
