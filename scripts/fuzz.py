#!/usr/bin/env python3
"""Long differential fuzzing campaigns for hop (issues #8 and #12).

Categories (--category, comma-separated; "trust" = the six of issue #12,
"all" = every one):

  base     tests/python/fuzz_programs.py: the four HOPs and the loops
           (fori_loop, while_loop, scan, switch, associative_scan) nested to
           depth 4, bodies closing over outer tensors, sizes and the values of
           the bodies around them, random shapes, dtypes and dynamic dims;
           eager == hop.trace == hop.compile == NumPy.  The summary counts the
           programs with each node kind and loop feature.
  transforms
           tests/python/fuzz_transforms.py (issue #26): small programs over
           every HOP (the C HOPs of examples/ too, loaded from the build tree
           next to HOP_PYTHONPATH) with int, bool and float carries in any
           order, closures, zero sizes and dynamic shapes; jvp, vjp, grad,
           vmap and their compositions against central finite differences in
           float64 and against loops over the examples.  --without leaves
           features out (dynidx, pyconst, c_hops); --checks runs some checks
           only (a round stops at its first failure, so a frequent bug can
           hide the others).
  mutate, rebind, argobj, scalars, branch, threads
           tests/python/fuzz_trust.py: sequences of calls between which the
           program's world changes (arrays written in place, names rebound,
           argument objects, Python scalar types, row counts that take the
           other branch, other threads); every call must equal eager on the
           current values.  `--list` describes each.
  effects  tests/python/fuzz_effects.py (issue 24): functions mixing tensor
           code with Python effects, conversions of traced values, a keyword
           argument and rebinding, over calls with a changing world; eager ==
           hop.compile == fullgraph=True in results, printed text and
           effects (or fullgraph refuses before any effect).
  boundary tests/python/fuzz_boundary.py: Python's own features beside tensor
           code (text, types and conversions of traced values, exceptions,
           generators, closures, globals, defaults, the standard library,
           recursion, *args, methods, identity) over calls with a changing
           world; eager == hop.compile in values, types, identities, text,
           exceptions and effects.

  saved    tests/python/fuzz_saved.py: hostile saved programs (docs/SAVED_FORMAT.md,
           issue #25): mutants of programs covering every built-in HOP and the C HOPs
           of examples/ (truncations, bit flips and field values at their limits with
           the checksum fixed, splices between files, hostile and deep JSON), each
           loaded, printed and run in a child with a time and a memory limit; it must
           give a result or a hop.Error, never a crash, a hang or another exception.
           Its own campaign (not part of "all"): --chunk mutants per child process, a
           child that dies is run again mutant by mutant; each failing mutant is saved
           into --out as a .hop file and a pytest file that replays it.

Each category runs in rounds of --chunk examples, each round with its own
Hypothesis seed (printed, so a round can be replayed with --seed S --rounds 1)
in a child process, so that a crash or a hang is caught, not fatal.  A failure
is shrunk by Hypothesis (a crash or hang: the program that was running is kept
as it is) and written into --out (default tests/python/regressions/) as a
runnable pytest file; one file per distinct failure signature.

    HOP_PYTHONPATH=build/python nice python3 scripts/fuzz.py --minutes 30
    python3 scripts/fuzz.py --category trust --examples 2000 --out /tmp/r
    python3 scripts/fuzz.py --category threads --examples 200 --seed 7 --out /tmp/r
    python3 scripts/fuzz.py --examples 300 --inject relu --out /tmp/r   # test the fuzzer

--examples and --minutes count per category.  Exit status: 0 if nothing
failed, 1 if any failure was found (and saved).
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.normpath(os.path.join(HERE, "..", "tests", "python"))
TRUST = ("mutate", "rebind", "argobj", "scalars", "branch", "threads")
CATEGORIES = ("base", "transforms") + TRUST + ("effects", "boundary")


def _setup_path():
    path = os.environ.get("HOP_PYTHONPATH")
    if path:
        sys.path.insert(0, os.path.abspath(path))
    sys.path.insert(0, os.path.abspath(TESTS))


def signature(category, kind, message):
    """A failure's kind without the numbers, to save one program per bug."""
    first = (message.splitlines() or [""])[0]
    first = re.sub(r"0x[0-9a-f]+|\d+(\.\d+)?(e[-+]?\d+)?", "#", first)
    # The call a sequence failed at and the step before it are not the bug.
    first = re.sub(r"^call #( after \{.*?\})?: ", "", first)
    first = re.sub(r"\(the sizes at the trace.*", "", first)
    return f"{category}: {kind}: {first[:160]}"


# ------------------------------------------------------------- the child

class _EagerCompiled:
    """hop.compile's stand-in under --eager-stand-in: calls fn eagerly."""

    recompiles = 0
    # the campaign asserts hop.compile did not fall back to eager; the
    # stand-in is eager by design (it checks the checker), so it says 0
    eager_calls = 0

    def __init__(self, fn, **kwargs):
        self.fn = fn

    def __call__(self, *args):
        return self.fn(*args)


def _eager_stand_in():
    import hop
    hop.trace = lambda fn, *args, dynamic=False: fn
    hop.compile = _EagerCompiled


def worker(category, seed, examples, dtypes, current, inject, stand_in, without=(), checks=None):
    """One Hypothesis run in this process; prints one JSON line: the shrunk
    failing spec and its exception, or none.  Before each example, writes the
    spec into `current`, so the parent knows what was running if we crash."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed

    import fuzz_programs as fp
    if inject:
        fp.inject(inject)
    if stand_in:
        _eager_stand_in()
    if category == "base":
        strategy, check = fp.specs(dtypes=dtypes), fp.check_program
    elif category == "effects":
        import fuzz_effects as fe
        strategy, check = fe.specs(), fe.check_spec
    elif category == "boundary":
        import fuzz_boundary as fb
        strategy, check = fb.specs(), fb.check_spec
    elif category == "transforms":
        import warnings

        import fuzz_transforms as ftr
        warnings.simplefilter("ignore", RuntimeWarning)
        strategy = ftr.specs(features=ftr.FEATURES - set(without),
                             checks=tuple(checks) if checks else ftr.CHECKS)
        check = ftr.check_spec
    else:
        import fuzz_trust as ft
        strategy, check = ft.specs(category, dtypes=dtypes), ft.check_spec
    last = {}
    stats = {"calls": 0}
    seen = {}  # feature -> programs with it (base: fuzz_programs.features), shrinking not counted

    @hseed(seed)
    @settings(max_examples=examples, deadline=None, database=None, print_blob=False,
              suppress_health_check=list(HealthCheck))
    @given(spec=strategy)
    def run(spec):
        stats["calls"] += 1
        with open(current, "w") as fh:
            json.dump({"examples": stats["calls"], "spec": spec}, fh)
        if category in ("base", "transforms") and "first_failure" not in stats:
            for f in (fp.features(spec["tree"]) if category == "base" else ftr.features(spec)):
                seen[f] = seen.get(f, 0) + 1
        try:
            check(spec)
        except Exception as e:
            # Hypothesis replays the minimal failing example last.
            last["spec"], last["exc"] = spec, e
            stats.setdefault("first_failure", stats["calls"])
            raise

    start = time.monotonic()
    result = {"calls": 0, "spec": None}
    try:
        run()
    except Exception as e:
        if "spec" not in last:
            raise  # a failure of the harness itself, not of a program
        exc = last["exc"] if last["exc"] is not None else e
        result.update(spec=last["spec"], kind=type(exc).__name__, message=str(exc))
    result["calls"] = stats["calls"]
    # The examples generated up to the first failure; the rest was shrinking.
    result["examples"] = stats.get("first_failure", stats["calls"])
    result["seconds"] = time.monotonic() - start
    result["features"] = seen
    print("FUZZ-RESULT " + json.dumps(result), flush=True)


def run_round(category, seed, examples, args, tmp):
    """Runs one round in a child process: (result dict, None) or, if it
    crashed or hung, (dict with the running spec, kind, message)."""
    current = os.path.join(tmp, f"current-{category}.json")
    if os.path.exists(current):
        os.remove(current)
    cmd = [sys.executable, "-X", "faulthandler", os.path.abspath(__file__), "--worker",
           category, "--seed", str(seed), "--examples", str(examples), "--current", current]
    if args.dtypes:
        cmd += ["--dtypes", args.dtypes]
    if args.inject:
        cmd += ["--inject", args.inject]
    if args.eager_stand_in:
        cmd += ["--eager-stand-in"]
    if args.without:
        cmd += ["--without", args.without]
    if args.checks:
        cmd += ["--checks", args.checks]
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.round_timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
        kind = None
    except subprocess.TimeoutExpired as e:
        rc, out, err = None, e.stdout or "", e.stderr or ""
        out = out.decode() if isinstance(out, bytes) else out
        err = err.decode() if isinstance(err, bytes) else err
        kind = "Hang"
    for line in out.splitlines():
        if line.startswith("FUZZ-RESULT "):
            return json.loads(line[len("FUZZ-RESULT "):])
    # No result: the child crashed, hung or the harness failed.
    spec, examples = None, None
    if os.path.exists(current):
        with open(current) as fh:
            try:
                running = json.load(fh)
                spec, examples = running["spec"], running["examples"]
            except (ValueError, KeyError):
                pass
    if kind is None:
        # A worker that ends without an answer crashed: killed by a signal,
        # or stopped by a sanitizer (which catches SIGSEGV itself).
        kind = "Crash"
        report = [line for line in err.splitlines() if "ERROR: " in line and "Sanitizer" in line]
        if rc is not None and rc < 0:
            msg = f"the process was killed by {signal.Signals(-rc).name}"
        elif report:
            msg = "a sanitizer stopped the process: " + re.sub(r"==\d+==", "", report[0]).strip()
        else:
            msg = f"the process exited with status {rc} without an answer"
    else:
        msg = f"no answer within {args.round_timeout} s (deadlock?)"
    tail = "\n".join(err.strip().splitlines()[-12:])
    if spec is None:
        raise SystemExit(f"fuzz: {category} round with seed {seed}: {msg} before any program "
                         f"ran\n{tail}")
    return {"calls": examples, "examples": examples, "seconds": time.monotonic() - start, "spec": spec,
            "kind": kind,
            "message": f"{msg} (not shrunk: the program that was running)\n{tail}"}


def saved_campaign(args):
    """--category saved: fuzz_saved's campaign, in chunks of --chunk mutants
    until --examples or --minutes (default 20,000 mutants)."""
    import base64
    import hashlib
    import fuzz_saved as fs
    seed = args.seed if args.seed is not None else int(time.time()) % 2**31
    seeds = fs.seed_programs()
    print(f"fuzz: saved-format campaign, seed {seed}, {len(seeds)} seed programs", flush=True)
    start, total, counts, saved = time.monotonic(), 0, {}, []
    os.makedirs(args.out, exist_ok=True)

    def keep(failure):
        kind, seed_name, desc, outcome, data = failure
        h = hashlib.sha1(data).hexdigest()[:12]
        hop_path = os.path.join(args.out, f"saved_{kind}_{h}.hop")
        with open(hop_path, "wb") as f:
            f.write(data)
        test_path = os.path.join(args.out, f"test_fuzz_saved_{kind}_{h}.py")
        with open(test_path, "w") as f:
            f.write(f'''"""Saved-format fuzzer regression (scripts/fuzz.py --category saved):
{desc}: {outcome[:200]}"""
import base64

import fuzz_saved

DATA = base64.b64decode("{base64.b64encode(data).decode()}")


def test_fuzz_saved_{kind}_{h}():
    args = {{name: a for name, _, a in fuzz_saved.seed_programs()}}.get({seed_name!r}, ())
    outcome = fuzz_saved._run_all([args], [(0, DATA)], fuzz_saved._child_env())[0]
    assert outcome.split(" ")[0] in ("ok", "error", "memory", "slow"), outcome
''')
        saved.append(test_path)
        print(f"  FAILED: {kind}: {desc}: {outcome[:200]}\n    saved {test_path}", flush=True)

    while True:
        elapsed = time.monotonic() - start
        if (args.examples is not None and total >= args.examples) or \
                (args.minutes is not None and elapsed >= args.minutes * 60) or \
                (args.examples is None and args.minutes is None and total >= 20000):
            break
        n = args.chunk if args.examples is None else min(args.chunk, args.examples - total)
        r = fs.campaign(n, seed, batch=min(n, 500), seeds=seeds, on_failure=keep)
        for k, v in r["counts"].items():
            counts[k] = counts.get(k, 0) + v
        total += n
        print(f"  seed {seed}: {n} mutants ({total} total, {time.monotonic() - start:.0f} s): "
              + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), flush=True)
        seed += 1
        if saved and args.stop_on_failure:
            break
    print(f"fuzz: {total} mutants in {time.monotonic() - start:.0f} s; {len(saved)} failing "
          f"mutant(s) saved", flush=True)
    return 1 if saved else 0


def main(argv=None):
    ap = _parser()
    args = ap.parse_args(argv)

    _setup_path()
    if args.category == "saved":
        return saved_campaign(args)
    import fuzz_programs as fp
    dtypes = tuple(args.dtypes.split(",")) if args.dtypes else fp.DTYPES
    for d in dtypes:
        if d not in fp.DTYPES:
            ap.error(f"--dtypes: unknown dtype {d!r}; choose from {','.join(fp.DTYPES)}")
    if args.inject:
        try:
            fp.inject(args.inject)
        except ValueError as e:
            ap.error(f"--inject: {e}")
    if args.worker:
        worker(args.worker, args.seed, args.examples, dtypes, args.current, args.inject,
               args.eager_stand_in, tuple(args.without.split(",")) if args.without else (),
               args.checks.split(",") if args.checks else None)
        return 0

    import fuzz_boundary as fb
    import fuzz_effects as fe
    import fuzz_trust as ft
    if args.list:
        import fuzz_transforms as ftr
        print(f"base: {fp.__doc__.splitlines()[0]}")
        print(f"transforms: {' '.join(ftr.__doc__.splitlines()[:2])}")
        for c in TRUST:
            print(f"{c}: {ft.CATEGORIES[c]}")
        print(f"effects: {fe.CATEGORY}")
        print(f"boundary: {fb.CATEGORY}")
        return 0
    cats = _categories(ap, args.category)
    if args.examples is None and args.minutes is None and args.rounds is None:
        args.examples = 10000

    # SIGTERM as an exception, so that subprocess.run kills the running worker.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    return _campaign(args, cats, dtypes, {"base": fp, "effects": fe, "boundary": fb,
                                          "trust": ft})


def _parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--category", default="base",
                    help="comma-separated categories: " + ",".join(CATEGORIES) +
                    ", trust (the six of issue #12) or all (default: base)")
    ap.add_argument("--list", action="store_true", help="describe the categories and exit")
    ap.add_argument("--examples", type=int, default=None,
                    help="stop after this many generated examples per category")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop after this much time per category")
    ap.add_argument("--seed", type=int, default=None, help="first round's seed (default: time)")
    ap.add_argument("--chunk", type=int, default=500, help="examples per round")
    ap.add_argument("--rounds", type=int, default=None,
                    help="stop after this many rounds per category")
    ap.add_argument("--round-timeout", type=float, default=900,
                    help="seconds a round may take before it counts as a hang")
    ap.add_argument("--out", default=os.path.join(TESTS, "regressions"),
                    help="where failing programs are saved as pytest files")
    ap.add_argument("--dtypes", default=None,
                    help="comma-separated subset of float32,float64,int32,int64,bool")
    ap.add_argument("--inject", default=None,
                    help="plant a known bug in hop's side of an op (relu, sin, not, neg), "
                    "fold every unary op on a concrete tensor while tracing (fold), or crash "
                    "(segv)")
    ap.add_argument("--eager-stand-in", action="store_true",
                    help="replace hop.trace and hop.compile by eager calls: checks the "
                    "generator and the NumPy reference (any failure is theirs, not hop's)")
    ap.add_argument("--without", default=None,
                    help="transforms: comma-separated features to leave out of the programs "
                    "(dynidx, pyconst, c_hops)")
    ap.add_argument("--checks", default=None,
                    help="transforms: comma-separated checks to run (default: all of "
                    "jvp,vjp,grad,jvp_jvp,grad_grad,vmap,vmap_grad,grad_vmap,jvp_vmap)")
    ap.add_argument("--stop-on-failure", action="store_true")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--current", default=None, help=argparse.SUPPRESS)
    return ap


def _categories(ap, spec):
    """The categories --category names (a comma-separated list, "trust" and
    "all" standing for theirs), each once, in order."""
    cats = []
    for c in spec.split(","):
        c = c.strip()
        more = {"trust": TRUST, "all": CATEGORIES}.get(c, (c,))
        for m in more:
            if m not in CATEGORIES:
                ap.error(f"--category: unknown category {m!r}; choose from "
                         f"{','.join(CATEGORIES)}, trust or all")
            if m not in cats:
                cats.append(m)
    return cats


def _campaign(args, cats, dtypes, mods):
    """Rounds of each category in cats until each is done (--examples,
    --minutes, --rounds); mods: the fuzz modules of base, effects and trust.
    Each new failure signature is saved as a regression file.  Exit status:
    1 if anything failed."""
    fp = mods["base"]
    seed = args.seed if args.seed is not None else int(time.time()) % 2**31
    first_seed = seed
    start = time.monotonic()
    per = {c: {"examples": 0, "calls": 0, "rounds": 0, "seconds": 0.0, "failures": 0}
           for c in cats}
    features = {}
    seen, saved = set(), []
    total_rounds = 0
    print(f"fuzz: hop differential campaign, first seed {seed}, categories {','.join(cats)}, "
          f"dtypes {','.join(dtypes)}"
          + (f", injected bug in {args.inject}" if args.inject else "")
          + (", eager standing in for trace and compile" if args.eager_stand_in else ""),
          flush=True)

    def done(c):
        s = per[c]
        return ((args.examples is not None and s["examples"] >= args.examples)
                or (args.minutes is not None and s["seconds"] >= args.minutes * 60)
                or (args.rounds is not None and s["rounds"] >= args.rounds))

    stop = False
    with tempfile.TemporaryDirectory(prefix="hop-fuzz-") as tmp:
        while not stop and not all(done(c) for c in cats):
            for c in cats:
                if done(c):
                    continue
                s = per[c]
                n = args.chunk
                if args.examples is not None:
                    n = min(n, args.examples - s["examples"])
                r = run_round(c, seed, n, args, tmp)
                total_rounds += 1
                s["rounds"] += 1
                s["seconds"] += r["seconds"]
                s["calls"] += r["calls"] or 0
                for f, k in r.get("features", {}).items():
                    features[f] = features.get(f, 0) + k
                ok = r["spec"] is None
                s["examples"] += n if ok else r.get("examples") or 0
                elapsed = time.monotonic() - start
                if ok:
                    print(f"  round {s['rounds']}: seed {seed}: {n} examples ok ({c}, "
                          f"{s['examples']} total, {n / max(r['seconds'], 1e-9):.0f}/s, "
                          f"{elapsed:.0f} s)", flush=True)
                    continue
                s["failures"] += 1
                sig = signature(c, r["kind"], r["message"])
                print(f"  round {s['rounds']}: seed {seed}: FAILED ({c}): {sig}", flush=True)
                if sig not in seen:
                    seen.add(sig)
                    saved.append(_save_failure(c, r, args.out, seed, mods))
                if args.stop_on_failure:
                    stop = True
                    break
            seed += 1
    elapsed = time.monotonic() - start
    examples = sum(s["examples"] for s in per.values())
    calls = sum(s["calls"] for s in per.values())
    print(f"fuzz: {examples} examples ({calls} program runs with shrinking) in {total_rounds} "
          f"rounds, {elapsed:.0f} s; {len(seen)} distinct failure(s), {len(saved)} regression "
          f"file(s) written (first seed {first_seed})", flush=True)
    _summary(cats, per, features, fp)
    for p in saved:
        print(f"  {p}")
    return 1 if seen else 0


def _save_failure(c, r, out, seed, mods):
    """Saves round r's failing program of category c as a regression file
    into out; its path."""
    summary = f"{r['kind']}: {r['message']}"
    import fuzz_transforms as ftr
    mod = mods["base"] if c == "base" else ftr if c == "transforms" else \
        mods[c] if c in ("effects", "boundary") else mods["trust"]
    path = mod.save_regression(r["spec"], out, summary=summary, seed=seed)
    print(f"    saved {path}\n    spec: {r['spec']}", flush=True)
    return path


def _summary(cats, per, features, fp):
    """Per category (when not base alone) its examples, speed and failed
    rounds; then how many programs had each feature."""
    if len(cats) > 1 or cats != ["base"]:
        for c in cats:
            s = per[c]
            print(f"  {c}: {s['examples']} examples in {s['seconds']:.0f} s "
                  f"({s['examples'] / max(s['seconds'], 1e-9):.0f}/s), {s['failures']} failed "
                  f"round(s)", flush=True)
    if features and "base" in cats:
        kinds = ("map", "cond", "wrap", "invoke") + fp.LOOPS
        print("  programs with: " + ", ".join(f"{k} {features.get(k, 0)}" for k in kinds),
              flush=True)
        rest = sorted((f for f in features if " " in f), key=lambda f: -features[f])
        print("  and: " + ", ".join(f"{f} {features[f]}" for f in rest), flush=True)
    elif features:
        print("  programs with: " + ", ".join(
            f"{f} {k}" for f, k in sorted(features.items(), key=lambda fk: -fk[1])), flush=True)


if __name__ == "__main__":
    sys.exit(main())
