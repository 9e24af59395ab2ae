#!/usr/bin/env python3
"""Long differential fuzzing campaign for hop (issue #8).

Generates random programs (tests/python/fuzz_programs.py: the four HOPs
nested to depth 4, bodies closing over outer tensors and sizes, random shapes,
dtypes and dynamic dims) and checks eager == hop.trace == hop.compile ==
NumPy.  It runs in rounds of --chunk examples, each with its own Hypothesis
seed (printed, so a round can be replayed with --seed S --rounds 1).  A
failure is shrunk by Hypothesis and the minimal program is written into
--out (default tests/python/regressions/) as a runnable pytest file; one file
per distinct failure signature.

    HOP_PYTHONPATH=build/python nice python3 scripts/fuzz.py --minutes 30
    python3 scripts/fuzz.py --examples 100000 --seed 7
    python3 scripts/fuzz.py --examples 300 --inject relu --out /tmp/r   # test the fuzzer

Exit status: 0 if nothing failed, 1 if any failure was found (and saved).
"""

import argparse
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.normpath(os.path.join(HERE, "..", "tests", "python"))


def _setup_path():
    path = os.environ.get("HOP_PYTHONPATH")
    if path:
        sys.path.insert(0, os.path.abspath(path))
    sys.path.insert(0, os.path.abspath(TESTS))


def signature(exc):
    """A failure's kind without the numbers, to save one program per bug."""
    first = (str(exc).splitlines() or [""])[0]
    first = re.sub(r"0x[0-9a-f]+|\d+(\.\d+)?(e[-+]?\d+)?", "#", first)
    return f"{type(exc).__name__}: {first[:160]}"


def run_round(fp, seed, examples, dtypes, stats):
    """One Hypothesis run of `examples` examples with `seed`: the shrunk
    failing spec and its exception, or (None, None)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed

    last = {}

    @hseed(seed)
    @settings(max_examples=examples, deadline=None, database=None, print_blob=False,
              suppress_health_check=list(HealthCheck))
    @given(spec=fp.specs(dtypes=dtypes))
    def check(spec):
        stats["calls"] += 1
        try:
            fp.check_program(spec)
        except Exception as e:
            # Hypothesis replays the minimal failing example last.
            last["spec"], last["exc"] = spec, e
            raise

    try:
        check()
    except Exception as e:
        if "spec" not in last:
            raise  # a failure of the harness itself, not of a program
        return last["spec"], last["exc"] if last["exc"] is not None else e
    return None, None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=None,
                    help="stop after this many generated examples")
    ap.add_argument("--minutes", type=float, default=None, help="stop after this much time")
    ap.add_argument("--seed", type=int, default=None, help="first round's seed (default: time)")
    ap.add_argument("--chunk", type=int, default=500, help="examples per round")
    ap.add_argument("--rounds", type=int, default=None, help="stop after this many rounds")
    ap.add_argument("--out", default=os.path.join(TESTS, "regressions"),
                    help="where failing programs are saved as pytest files")
    ap.add_argument("--dtypes", default=None,
                    help="comma-separated subset of float32,float64,int32,int64,bool")
    ap.add_argument("--inject", default=None,
                    help="plant a known bug in hop's side of an op (relu, sin, not, neg)")
    ap.add_argument("--stop-on-failure", action="store_true")
    args = ap.parse_args(argv)
    if args.examples is None and args.minutes is None and args.rounds is None:
        args.examples = 10000

    _setup_path()
    import fuzz_programs as fp
    if args.inject:
        try:
            fp.inject(args.inject)
        except ValueError as e:
            ap.error(f"--inject: {e}")
    dtypes = tuple(args.dtypes.split(",")) if args.dtypes else fp.DTYPES
    for d in dtypes:
        if d not in fp.DTYPES:
            ap.error(f"--dtypes: unknown dtype {d!r}; choose from {','.join(fp.DTYPES)}")

    seed = args.seed if args.seed is not None else int(time.time()) % 2**31
    start = time.monotonic()
    stats = {"calls": 0, "examples": 0, "rounds": 0}
    seen, saved = set(), []
    print(f"fuzz: hop differential campaign, first seed {seed}, dtypes {','.join(dtypes)}"
          + (f", injected bug in {args.inject}" if args.inject else ""), flush=True)
    while True:
        if args.examples is not None and stats["examples"] >= args.examples:
            break
        if args.minutes is not None and time.monotonic() - start >= args.minutes * 60:
            break
        if args.rounds is not None and stats["rounds"] >= args.rounds:
            break
        n = args.chunk
        if args.examples is not None:
            n = min(n, args.examples - stats["examples"])
        calls = stats["calls"]
        spec, exc = run_round(fp, seed, n, dtypes, stats)
        stats["rounds"] += 1
        stats["examples"] += n if spec is None else stats["calls"] - calls
        elapsed = time.monotonic() - start
        if spec is None:
            print(f"  round {stats['rounds']}: seed {seed}: {n} examples ok "
                  f"({stats['examples']} total, {elapsed:.0f} s)", flush=True)
        else:
            sig = signature(exc)
            print(f"  round {stats['rounds']}: seed {seed}: FAILED: {sig}", flush=True)
            if sig not in seen:
                seen.add(sig)
                summary = f"{type(exc).__name__}: {exc}"
                path = fp.save_regression(spec, args.out, summary=summary, seed=seed)
                saved.append(path)
                print(f"    saved {path}\n    spec: {spec}", flush=True)
            if args.stop_on_failure:
                break
        seed += 1
    elapsed = time.monotonic() - start
    print(f"fuzz: {stats['examples']} examples ({stats['calls']} program runs with shrinking) "
          f"in {stats['rounds']} rounds, {elapsed:.0f} s; {len(seen)} distinct failure(s), "
          f"{len(saved)} regression file(s) written", flush=True)
    for p in saved:
        print(f"  {p}")
    return 1 if seen else 0


if __name__ == "__main__":
    sys.exit(main())
