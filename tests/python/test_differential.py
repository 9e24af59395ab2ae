"""Differential tests: random programs with nested HOPs, checked as
eager == hop.trace(...)(...) == hop.compile(...)(...) == a NumPy reference.

The programs come from fuzz_programs.py: the four HOPs and the loops
(fori_loop, while_loop, scan, switch, associative_scan) nested to depth 4,
bodies closing over outer tensors (concrete ones, which become root inputs)
and sizes (SymInts of x.shape under dynamic=True, lifted into every body),
random shapes, every dtype hop has, and dynamic on, off or per dim.  Each
program also runs traced at a second size and compiled twice (the second call
recompiles).  CI runs a few hundred examples here; scripts/fuzz.py runs long
campaigns and saves failures into regressions/ (which pytest collects too).
"""

import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from budget import examples, full

import fuzz_programs as fp
import hop

HERE = os.path.dirname(os.path.abspath(__file__))
FUZZ = os.path.join(HERE, "..", "..", "scripts", "fuzz.py")


# What the random programs must have exercised: each loop node kind in at
# least 10 of the programs checked and each of these variants in at least 3
# (over 12 seeds of 300 programs the fewest seen were 53 and 10; CI once
# drew a set with 2 "while data bound").  The set is derandomized, so the
# coverage asserted is the coverage of the programs checked every run; the
# campaigns of scripts/fuzz.py draw new programs.  Rarer shapes (a map in a
# loop body, a loop in a map body: ~3% each) are in LOOPED below and in the
# long campaigns.
LOOP_VARIANTS = (
    "fori data bound", "fori size bound", "while data bound", "while carry stop", "scan ys",
    "scan carry", "scan reverse", "ascan reverse", "switch data index", "switch size index",
    "switch index out of range", "loop in loop", "loop in cond", "cond in loop",
    "switch in loop", "closure at two depths")


def test_random_nested_programs_agree_eager_traced_compiled_and_numpy():
    seen = Counter()

    @settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck),
              derandomize=True)
    @given(spec=fp.specs())
    def check(spec):
        fp.check_program(spec)
        seen.update(fp.features(spec["tree"]))

    check()
    if not full():
        return  # the sanitizer pass draws a share of the set: its coverage is the plain pass's
    rare = {f: seen[f] for f in fp.LOOPS if seen[f] < 10}
    rare.update({f: seen[f] for f in LOOP_VARIANTS if seen[f] < 3})
    assert not rare, f"too few programs exercised {rare}"


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(spec=fp.specs(dtypes=("int32", "bool")))
def test_integer_and_bool_programs_agree_exactly(spec):
    fp.check_program(spec)


NESTED = {
    "dtype": "float32", "shape": [4, 3], "dynamic": True, "seed": 5,
    "tree": ["map",
             ["cond", ["psize", "r", 2],
              ["wrap", ["sbin", "mul", "float32", ["invoke", ["var", "row"]], "n"]],
              ["unary", "sin", "float32", ["var", "c0"]]],
             ["binary", "add", "float32", ["var", "x"], ["var", "c1"]], True],
}


def test_a_fixed_program_with_all_four_hops_and_lifted_sizes_agrees():
    fp.check_program(NESTED)


def test_the_program_graph_lifts_the_closed_over_size_and_tensor_into_the_map_body():
    vals = fp.inputs(NESTED)
    f = fp.Program(NESTED["tree"]).function(hop.asarray(vals["c0"]), hop.asarray(vals["c1"]))
    gm = hop.trace(f, hop.asarray(vals["x"]), hop.asarray(vals["y"]), dynamic=True)
    # The slice and the extra argument, then what the body reaches: the size
    # n (s0), and every value of the env dict it hands to invoke_subgraph.
    assert hop.testing.placeholders(gm) == {
        "forward": ["s0", "s1", "x", "y", "c1", "c0"],
        "map_body_0": ["expand", "y", "s0", "s1", "x", "c0", "c1"],
        "wrap_body_0": ["s0", "s1", "x", "y", "c0", "c1", "expand"],
        "subgraph_0": ["x", "y", "c0", "c1", "s0", "s1", "expand", "s1_1"],
    }


# Every loop, nested both ways: a switch and a while_loop (stopped by a data
# bound and by its bool carry) in a map body in a fori body, whose index the
# inner bodies read (closures two bodies out); a reversed scan with a cond in
# its body; associative scans (float sum, reassociated by the plan).
LOOPED = {
    "dtype": "float32", "shape": [4, 3], "dynamic": True, "seed": 11,
    "tree": ["fori", ["size", "n", 1],
             ["map",
              ["switch", ["size", "idx0", 1],
               ["sbin", "add", "float32", ["var", "row"], "idx0"],
               ["cast", "float32",
                ["while", ["data", ["gt0", ["var", "c0"]], 0], 1,
                 ["binary", "xor", "bool", ["var", "acc1"], ["gt0", ["var", "y"]]],
                 ["gt0", ["var", "row"]]]]],
              ["binary", "add", "float32", ["var", "acc0"], ["var", "x"]], True],
             ["scan", "ys", True,
              ["binary", "add", "float32", ["var", "acc0"], ["var", "xt0"]],
              ["cond", ["psize", "n", 2], ["ascan", "add", False, ["var", "xt0"]],
               ["var", "acc0"]],
              ["var", "c0"], ["ascan", "maximum", True, ["var", "x"]]]],
}


def test_a_fixed_program_with_every_loop_nested_both_ways_agrees():
    assert {"fori", "while", "scan", "switch", "ascan", "map", "cond", "loop in switch",
            "map in loop", "switch in map", "closure at two depths", "while carry stop",
            "scan reverse", "cond in loop", "fori size bound", "switch size index"} \
        <= fp.features(LOOPED["tree"])
    fp.check_program(LOOPED)
    fp.check_program(dict(LOOPED, dynamic=False, seed=12))


@pytest.mark.fuzztool
def test_the_checker_catches_a_loop_that_runs_once_too_often(monkeypatch):
    spec = dict(NESTED, tree=["fori", 2, ["sbin", "add", "float32", ["var", "acc0"], "idx0"],
                              ["var", "x"]])
    fp.check_program(spec)
    bound = fp.Program.bound
    monkeypatch.setattr(fp.Program, "bound", lambda self, b, env, clamp:
                        bound(self, b, env, clamp) + 1)
    with pytest.raises(AssertionError, match=r"eager vs NumPy: differs at"):
        fp.check_program(spec)


def test_the_associative_scan_bound_holds_in_any_order_of_combining_and_no_further():
    # The plan's parallel scan combines in chunks: prefix k is
    # (x0 + ... + xj) + (xj+1 + ... + xk) rather than left to right.
    rng = np.random.default_rng(0)
    for op in ("add", "mul"):
        x = (rng.standard_normal((8, 64)) * 1e3).astype(np.float32)
        if op == "mul":
            x = np.clip(x / 1e3 + np.float32(1), -fp.ASCAN_CLAMP, fp.ASCAN_CLAMP)
        r = fp._np_ascan(["ascan", op, False, ["var", "v"]],
                         {"v": fp.Ref(x), "@shape": x.shape}, x.shape, 0)
        fn = np.add if op == "add" else np.multiply
        chunked = np.empty_like(x)
        for k in range(8):
            left = fn.reduce(x[:min(k + 1, 4)], axis=0, dtype=np.float32)
            right = fn.reduce(x[4:k + 1], axis=0, dtype=np.float32) if k >= 4 else None
            chunked[k] = left if right is None else fn(left, right)
        fp.assert_close(chunked, r.v, r.e, "float32", f"chunked {op}")
        with pytest.raises(AssertionError, match="differs at"):
            fp.assert_close(chunked * np.float32(1.01), r.v, r.e, "float32", f"1% off {op}")


@pytest.mark.fuzztool
def test_the_checker_catches_a_float_answer_off_by_one_percent(monkeypatch):
    monkeypatch.setitem(fp.HOP_UNARY, "sin", lambda a: a.sin() * 1.01)
    spec = dict(NESTED, tree=["wrap", ["unary", "sin", "float32", ["var", "x"]]])
    with pytest.raises(AssertionError, match=r"eager vs NumPy: differs at"):
        fp.check_program(spec)


def test_the_error_bound_accepts_an_ill_conditioned_but_correct_sin():
    # sin(1e4 * x) in float32: one ulp of the argument moves the result by
    # ~1e-3, far beyond a fixed tolerance; the propagated bound allows it.
    spec = {"dtype": "float32", "shape": [3, 4], "dynamic": False, "seed": 3,
            "tree": ["unary", "sin", "float32",
                     ["sbin", "mul", "float32",
                      ["sbin", "mul", "float32", ["sbin", "mul", "float32",
                                                  ["sbin", "mul", "float32", ["var", "x"], "n"],
                                                  "n"], "n"], "n"]]}
    fp.check_program(spec)


@pytest.mark.fuzztool
def test_the_checker_compares_integer_programs_exactly(monkeypatch):
    monkeypatch.setitem(fp.HOP_UNARY, "relu", lambda a: a.abs())
    spec = {"dtype": "int64", "shape": [3, 2], "dynamic": False, "seed": 0,
            "tree": ["unary", "relu", "int64", ["var", "x"]]}
    want = np.maximum(fp.inputs(spec)["x"], 0)
    assert (want == 0).any()
    with pytest.raises(AssertionError, match=r"eager vs NumPy: differs at"):
        fp.check_program(spec)


@pytest.mark.fuzztool
def test_save_regression_writes_a_pytest_file_that_replays_the_program(tmp_path):
    path = fp.save_regression(NESTED, str(tmp_path), summary='AssertionError: boom """ \\ x',
                              seed=42)
    assert os.path.basename(path) == f"test_{fp.spec_name(NESTED)}.py"
    text = open(path).read()
    assert "Found with seed 42" in text and "AssertionError: boom ''' / x" in text
    ns = {"__file__": path}
    exec(compile(text, path, "exec"), ns)
    assert ns["SPEC"] == NESTED
    ns[f"test_{fp.spec_name(NESTED)}"]()  # runs and passes


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([HERE] + [p for p in sys.path if p])
    return env


@pytest.mark.fuzztool
def test_the_campaign_shrinks_a_planted_bug_and_saves_a_failing_regression(tmp_path):
    out = tmp_path / "regressions"
    # Three rounds, each meeting the bug again: one failure, one file.
    r = subprocess.run([sys.executable, FUZZ, "--examples", "300", "--chunk", "150", "--rounds",
                        "3", "--seed", "1", "--dtypes", "int32", "--inject", "relu", "--out",
                        str(out)], capture_output=True, text=True, env=_env(), timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    for seed in (1, 2, 3):
        assert f"round {seed}: seed {seed}: FAILED (base)" in r.stdout, r.stdout
    assert "in 3 rounds" in r.stdout, r.stdout
    assert "1 distinct failure(s), 1 regression file(s) written" in r.stdout
    files = sorted(out.glob("test_fuzz_int32_*.py"))
    assert len(files) == 1
    ns = {"__file__": str(files[0])}
    exec(compile(files[0].read_text(), str(files[0]), "exec"), ns)
    # Shrunk to the smallest program that shows the bug.
    assert ns["SPEC"]["tree"] == ["unary", "relu", "int32", ["var", "x"]]
    # The saved file is a pytest file: it fails while the bug is there and
    # passes once it is fixed.
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(files[0])]
    env = _env()
    env["HOP_FUZZ_INJECT"] = "relu"
    bad = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 1 and "1 failed" in bad.stdout, bad.stdout + bad.stderr
    good = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=300)
    assert good.returncode == 0 and "1 passed" in good.stdout, good.stdout + good.stderr


@pytest.mark.fuzztool
def test_the_campaign_reports_seeds_and_counts_when_nothing_fails(tmp_path):
    r = subprocess.run([sys.executable, FUZZ, "--examples", "40", "--chunk", "20", "--seed", "9",
                        "--out", str(tmp_path)], capture_output=True, text=True, env=_env(),
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "round 1: seed 9: 20 examples ok" in r.stdout
    assert "round 2: seed 10: 20 examples ok" in r.stdout
    assert "fuzz: 40 examples" in r.stdout and "0 distinct failure(s)" in r.stdout
    assert list(tmp_path.iterdir()) == []
