"""bench/run.py runs and prints its table (a smoke run, not a timing test:
nothing here looks at a figure)."""
import json
import os
import subprocess
import sys

import hop
from transform_values import lazy_import

lazy_import("torch")  # (bench/run.py's torch column; skipped where torch is blocked)

RUN = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "run.py")


def _env():
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(hop.__file__)))
    if "ASAN_OPTIONS" in env:
        # Under the sanitizer pass, no leak check in the bench process: with
        # torch loaded, GCC 12's LeakSanitizer can crash in its own
        # stop-the-world on a bogus dynamic-TLS entry ("Tracer caught signal
        # 11", "DTLS ... at 0x583"), depending only on the memory layout
        # (adding unexecuted functions to bench/run.py moved it there).
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    return env


def test_bench_quick_eager_row_prints_the_table_and_writes_json(tmp_path):
    out = tmp_path / "bench.json"
    # The package under test, whichever directory it was imported from.
    env = _env()
    p = subprocess.run([sys.executable, RUN, "--quick", "--only", "eager_op", "--json", str(out)],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["row", "hop", "C", "NumPy", "PyTorch", "hop/C", "ratio(s)", "target",
                                "met?"]
    assert lines[2].startswith("eager hop op from Python (16 floats)")
    data = json.loads(out.read_text())
    assert [r["id"] for r in data["rows"]] == ["eager_op"]
    assert data["quick"] is True
    assert data["machine"]["numpy"]


def test_bench_rejects_an_unknown_row():
    env = _env()
    p = subprocess.run([sys.executable, RUN, "--only", "no_such_row"], capture_output=True,
                       text=True, env=env, timeout=60)
    assert p.returncode == 2
    assert "unknown row(s) no_such_row" in p.stderr
