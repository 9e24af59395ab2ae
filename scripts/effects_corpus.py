"""scripts/effects_corpus.py - hop.compile's effect analysis (_effects.find) on
the random programs of tests/python/fuzz_programs.py (the fiftieth session):

    /usr/bin/python3 scripts/effects_corpus.py BUILD [--seeds 0,1,2] [--n 40]
        [--repeat 3] [--compare COMMIT]

Draws n specs per hypothesis seed (derandomized, as test_differential's
first examples are drawn), makes each Program's function over its hop
inputs, reads every code object once, then times find over the corpus
(process CPU time, best of --repeat passes: a figure that load inflates
less than wall time; for instruction counts run it under callgrind with
----repeat 1 and 3 and --only, and take the difference).  With --compare it also runs the
_effects.find of COMMIT on each call (scripts/effects_same.py) and prints
every difference: none is the proof that a change found the same."""
import argparse
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))


def corpus(seeds, n):
    """(f, (x, y)) of n fuzz programs per seed."""
    import hop
    from hypothesis import HealthCheck, Phase, given, seed, settings

    import fuzz_programs as fp

    drawn = []
    for s in seeds:
        @seed(s)
        @settings(max_examples=n, database=None, phases=[Phase.generate], deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(fp.specs())
        def collect(spec):
            drawn.append(spec)
        collect()
    out = []
    for spec in drawn:
        vals = fp.inputs(spec)
        f = fp.Program(spec["tree"]).function(hop.asarray(vals["c0"]), hop.asarray(vals["c1"]))
        out.append((f, (hop.asarray(vals["x"]), hop.asarray(vals["y"]))))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--compare", default=None)
    ap.add_argument("--only", choices=("today", "base"), default=None,
                    help="time only this one and compare nothing (for callgrind)")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(os.path.abspath(a.build), "python"))
    sys.path.insert(0, os.path.join(_HERE, "..", "tests", "python"))
    sys.path.insert(0, _HERE)
    from hop import _effects

    calls = corpus([int(s) for s in a.seeds.split(",")], a.n)
    found = [_effects.find(f, args, {}) for f, args in calls]  # (code read once)
    finds = {"today": _effects.find}
    if a.compare:
        import effects_same

        finds["base"] = effects_same._load(a.compare).find
    if a.only:
        finds = {a.only: finds[a.only]}
    best = {}
    for _ in range(a.repeat):  # (alternating: the load changes both alike)
        for name, find in finds.items():
            t0 = time.process_time()
            for f, args in calls:
                find(f, args, {})
            t = time.process_time() - t0
            best[name] = min(best.get(name, t), t)
    print(f"{len(calls)} calls, {sum(map(len, found))} effects; find " + ", ".join(
        f"{name} {t / len(calls) * 1e3:.2f}" for name, t in best.items()) +
        f" ms a call (CPU, best of {a.repeat} alternating passes)")
    if a.compare and not a.only:
        effects_same.install(a.compare)
        for f, args in calls:
            _effects.find(f, args, {})
        print(effects_same.report())
        if effects_same._STATE["diffs"]:
            print("".join(effects_same._STATE["diffs"]))
            sys.exit(1)


if __name__ == "__main__":
    main()
