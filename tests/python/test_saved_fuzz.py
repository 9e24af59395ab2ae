"""The saved-format fuzzer in CI (tests/python/fuzz_saved.py, issue #25):
thousands of mutants of programs covering every built-in HOP and the two C
HOPs of examples/, each loaded, printed and run in a child process with a
time and a memory limit.  Each must give a result or a hop.Error (or, by
design, MemoryError / an interrupted slow loop), never a crash, a hang or
another exception.  Long campaigns: scripts/fuzz.py --category saved."""
import os

import pytest

import fuzz_saved
from budget import full

# Under the sanitizers every parametrized case runs: each is a memory path of its own
# (budget.cases).
pytestmark = pytest.mark.every_case

# Fewer under the sanitizer pass (budget.py): each mutant costs several times
# as much there, and some thousands reach its paths.
MUTANTS = 15000 if full() else 4000


@pytest.fixture(scope="module")
def seeds():
    if not os.environ.get("HOP_PYTHONPATH"):
        pytest.skip("HOP_PYTHONPATH is not set: the example libraries live in the build tree")
    return fuzz_saved.seed_programs()


def test_the_seeds_cover_every_builtin_hop_and_the_example_c_hops(seeds):
    import hop
    names = set()
    for _, data, _ in seeds:
        obj = fuzz_saved._loads(data)
        if isinstance(obj, hop.GraphModule):
            names |= {line.split("= ")[1].split("(")[0] for line in obj.code.splitlines()
                      if "= " in line}
            for sub in obj.subgraphs.values():
                names |= {line.split("= ")[1].split("(")[0] for line in sub.code.splitlines()
                          if "= " in line}
    builtins = {"wrap", "cond", "map", "invoke_subgraph", "while_loop", "fori_loop", "scan",
                "associative_scan", "switch", "vjp", "jvp", "vmap"}
    assert builtins | {"repeat", "fold"} <= names, (builtins | {"repeat", "fold"}) - names


def test_hostile_saved_files_give_a_result_or_a_hop_error_never_a_crash_or_hang(seeds):
    report = fuzz_saved.campaign(MUTANTS, rng_seed=25, batch=500, seeds=seeds)
    counts, failures = report["counts"], report["failures"]
    assert sum(counts.values()) == MUTANTS
    assert not failures, "\n".join(f"{kind}: {desc}: {outcome[:300]}"
                                   for kind, _, desc, outcome, _ in failures[:10])
    # The mutants reach past the checksum: most are refused, some load and run.
    assert counts.get("error", 0) > MUTANTS // 2 and counts.get("ok", 0) > MUTANTS // 50, counts
