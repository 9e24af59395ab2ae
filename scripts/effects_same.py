"""scripts/effects_same.py - hop.compile's effect analysis of another commit
beside today's, on every call a test run makes (the fiftieth session's proof
that a faster _effects.find finds the same):

    EFFECTS_BASE=<commit> PYTHONPATH=scripts /usr/bin/python3 -m pytest \\
        -p effects_same -p no:cacheprovider tests/python/test_compile*.py

A pytest plugin: it loads the base commit's python/hop/_effects.py and
_effect_holders.py (git show, from the checkout this file is in) as modules of
the hop package beside today's, and wraps hop._effects.find so that every call
(hop.compile's, the guards', a test's own) runs both on the same arguments and
compares the Effect lists (kinds, sites, reasons, order), the functions
reported as followed (identity and order) and an exception raised.  At the
end each process prints the number of calls compared and writes every
difference to EFFECTS_SAME_OUT (default /tmp/effects_same.<pid>.txt).
`compare(fn, args, kwargs)` does the same for one call (the fuzz programs'
corpus: scripts/effects_corpus.py).
"""
import importlib.util
import os
import subprocess
import sys

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
_STATE = {"calls": 0, "diffs": []}
_BASE = {}


def _load(commit):
    """hop._effects of commit, with its own _effect_holders."""
    import hop

    pkg = os.path.dirname(hop.__file__)
    for name, text_of in (("_effect_holders", None), ("_effects", "_effect_holders")):
        text = subprocess.run(["git", "-C", _ROOT, "show", f"{commit}:python/hop/{name}.py"],
                              check=True, capture_output=True, text=True).stdout
        if text_of is not None:
            text = text.replace(f"from .{text_of} import", f"from .{text_of}_base import")
        full = f"hop.{name}_base"
        spec = importlib.util.spec_from_loader(full, loader=None, origin=os.path.join(pkg, name))
        mod = importlib.util.module_from_spec(spec)
        mod.__package__ = "hop"
        sys.modules[full] = mod
        exec(compile(text, f"<{commit[:8]}:{name}.py>", "exec"), mod.__dict__)
    return sys.modules["hop._effects_base"]


def _outcome(find, fn, args, kwargs):
    """(the Effects as tuples or the exception raised, ids of the functions
    followed), the result or the exception, followed."""
    followed = []
    try:
        res = find(fn, args, kwargs, followed=followed)
        got = [tuple(e) for e in res]
    except Exception as e:  # compared, then raised to the caller
        res, got = e, ("raised", type(e).__name__, str(e))
    return (got, [id(f) for f in followed]), res, followed


def compare(fn, args=(), kwargs=None, where=""):
    """Runs today's and the base's find on one call and keeps a difference;
    today's result (or exception) and followed functions."""
    kwargs = kwargs or {}
    new, res, followed = _outcome(_BASE["new"], fn, args, kwargs)
    old = _outcome(_BASE["old"].find, fn, args, kwargs)[0]
    _STATE["calls"] += 1
    if new != old:
        _STATE["diffs"].append(f"{where}: {getattr(fn, '__qualname__', fn)!r}\n"
                               f"  base:  {old[0]!r}\n  today: {new[0]!r}\n"
                               f"  followed equal: {old[1] == new[1]}\n")
    return res, followed


def install(commit):
    from hop import _effects

    if "new" in _BASE:
        return
    _BASE["old"] = _load(commit)
    _BASE["new"] = _effects.find

    def find(fn, args=(), kwargs=None, followed=None):
        res, got = compare(fn, args, kwargs, where=os.environ.get("PYTEST_CURRENT_TEST", ""))
        if followed is not None:
            followed.extend(got)
        if isinstance(res, Exception):
            raise res
        return res

    _effects.find = find


def report():
    out = os.environ.get("EFFECTS_SAME_OUT", f"/tmp/effects_same.{os.getpid()}.txt")
    with open(out, "w") as fh:
        fh.write(f"{_STATE['calls']} calls compared, {len(_STATE['diffs'])} differ\n")
        fh.writelines(_STATE["diffs"])
    return f"effects_same: {_STATE['calls']} calls compared, {len(_STATE['diffs'])} differ " \
           f"({out})"


def pytest_configure(config):
    install(os.environ["EFFECTS_BASE"])


def pytest_unconfigure(config):
    print("\n" + report())
