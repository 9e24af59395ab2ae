"""scripts/check_reads.py - the walkers of what a function reads, old against new.

    HOP_PYTHONPATH=build/dev/python /usr/bin/python3 scripts/check_reads.py [REV]

Loads _guards.py, _purity.py and _hops.py as they were at git revision REV
(default: the commit before python/hop/_reads.py existed) beside today's
modules, gathers a large set of functions (every function and method
reachable from the tests' modules, from hop's own modules, and from NumPy's
and a set of standard-library modules, following globals and closure cells),
and runs both versions' walks on each: the guard scan (every guard's kind,
source and expected object, the captured tensors, what was skipped, the
functions and names walked), the invoke_subgraph key, the purity snapshot
(every list _Check fills, compared by identity) and the print search.  Prints
the count and every difference; exits 1 on any (issue #27).
"""

import glob
import importlib
import importlib.util
import os
import subprocess
import sys
import types
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
for p in reversed(os.environ.get("HOP_PYTHONPATH", "").split(os.pathsep)):
    if p:
        sys.path.insert(0, p)

import hop  # noqa: E402
from hop import _guards, _hops, _purity  # noqa: E402


def old_module(rev, name, renames):
    """hop.<name> as it was at rev, loaded as hop._old<name>."""
    src = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:python/hop/{name}.py"],
                         check=True, capture_output=True, text=True).stdout
    for a, b in renames:
        src = src.replace(a, b)
    full = f"hop._old{name}"
    mod = types.ModuleType(full)
    mod.__package__ = "hop"
    mod.__file__ = f"<{rev}:{name}.py>"
    sys.modules[full] = mod
    exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    return mod


def gather(limit=40000):
    """Functions to walk: module functions, class methods, and what their
    globals and cells hold, transitively."""
    mods = [hop]
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "python", "test_*.py"))):
        name = os.path.basename(path)[:-3]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mods.append(importlib.import_module(name))
        except Exception as e:  # a test module needing what is not installed
            print(f"skipped {name}: {type(e).__name__}: {e}")
    for name in ("numpy", "numpy.linalg", "numpy.fft", "numpy.random", "numpy.lib.npyio",
                 "numpy.core.numeric", "numpy.core.fromnumeric", "json", "re", "collections",
                 "functools", "os", "os.path", "inspect", "dis", "typing", "dataclasses",
                 "textwrap", "argparse", "logging", "email.message", "string", "random",
                 "statistics", "fractions", "decimal", "copy", "pickle", "tokenize", "ast",
                 "enum", "contextlib", "itertools", "operator", "heapq", "bisect", "shutil",
                 "tempfile", "weakref", "warnings", "pprint", "csv", "difflib", "calendar",
                 "datetime", "urllib.parse", "http.client", "unittest", "hypothesis"):
        try:
            mods.append(importlib.import_module(name))
        except Exception:
            pass
    mods += [m for n, m in list(sys.modules.items()) if n.startswith("hop.") and m]
    out, seen, todo = [], set(), []

    def add(v):
        if isinstance(v, (types.FunctionType, types.MethodType)) and id(v) not in seen:
            seen.add(id(v))
            todo.append(v)
    for m in mods:
        for v in list(vars(m).values()):
            add(v)
            if isinstance(v, type):
                for a in list(vars(v).values()):
                    add(getattr(a, "__func__", a))
                    if isinstance(a, property):
                        add(a.fget)
    while todo and len(out) < limit:
        f = todo.pop(0)
        out.append(f)
        fn = getattr(f, "__func__", f)
        for c in fn.__closure__ or ():
            try:
                add(c.cell_contents)
            except ValueError:
                pass
        g = fn.__globals__
        for n in fn.__code__.co_names:
            add(g.get(n))
        for d in fn.__defaults__ or ():
            add(d)
    return out


def norm(k, ids):
    """A key with every _Id (old class or new) as ("Id", id)."""
    if type(k).__name__ == "_Id":
        return ("Id", id(k.obj))
    if isinstance(k, tuple):
        return tuple(norm(x, ids) for x in k)
    if isinstance(k, frozenset):
        return frozenset(norm(x, ids) for x in k)
    return k


def guards_of(mod, fn):
    s = mod.scan(fn)
    return ([(g.kind, repr(g.source), g.source.kind, id(g.source.base), g.source.key,
              g.source.path, id(g.expected) if g.kind == "id" else g.expected)
             for g in s.guards],
            {k: [repr(x) for x in v[1]] for k, v in s.tensors.items()},
            list(s.skipped), [id(f) for f in s.functions], sorted(s.names), set(s.seen))


def key_of(mod, fn):
    try:
        return norm(mod._value_key(fn, [mod._KEY_BUDGET], set()), None)
    except Exception as e:
        return ("raised", type(e).__name__)


def check_of(mod, fn):
    c = mod._Check()
    try:
        c.scan(fn)
    except Exception as e:
        c.unlock()
        return ("raised", type(e).__name__, str(e))
    c.unlock()
    ident = [[(p, id(o)) for p, o, *_ in lst] for lst in
             (c.containers, c.objects, c.slots, c.arrays, c.lengths)]
    return ([(n, id(h), id(v)) for n, h, v in c.cells],
            [(n, id(h), id(v)) for n, h, v in c.globals],
            ident, [(p, id(a)) for p, a in c.locked], c.budget)


def main():
    rev = sys.argv[1] if len(sys.argv) > 1 else subprocess.run(
        ["git", "-C", ROOT, "log", "--diff-filter=A", "--format=%H~1", "--",
         "python/hop/_reads.py"], check=True, capture_output=True, text=True).stdout.split()[-1]
    old_purity = old_module(rev, "_purity", [])
    old_guards = old_module(rev, "_guards", [("from ._purity import", "from ._old_purity import")])
    old_hops = old_module(rev, "_hops", [("from ._purity import", "from ._old_purity import")])
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", rev], check=True,
                         capture_output=True, text=True).stdout.strip()
    fns = gather()
    # The walkers' own "nothing here" sentinels (an empty cell): a function
    # of hop's that reads one as a global sees the other version skip it.
    from hop import _reads
    marks = {id(_reads.MISSING), id(old_guards._EMPTY), id(old_purity._MISSING)}

    def reads_mark(fn):
        fn = getattr(fn, "__func__", fn)
        g = fn.__globals__
        return any(id(g.get(n)) in marks for n in _reads.names_of(fn.__code__).set) or \
            any(id(d) in marks for d in fn.__defaults__ or ())
    kept = [f for f in fns if not reads_mark(f)]
    skipped, fns = len(fns) - len(kept), kept
    diffs = {"guards": 0, "key": 0, "purity": 0, "print": 0}
    shown = 0
    warnings.simplefilter("ignore")
    for fn in fns:
        pairs = (("guards", guards_of(old_guards, fn), guards_of(_guards, fn)),
                 ("key", key_of(old_hops, fn), key_of(_hops, fn)),
                 ("purity", check_of(old_purity, fn), check_of(_purity, fn)),
                 ("print", old_purity._print_site(getattr(fn, "__func__", fn), set(), 0),
                  _purity._print_site(getattr(fn, "__func__", fn))))
        for what, a, b in pairs:
            if a != b:
                diffs[what] += 1
                if shown < 20:
                    shown += 1
                    print(f"DIFF {what}: {getattr(fn, '__module__', '?')}."
                          f"{getattr(fn, '__qualname__', fn)}\n  old {str(a)[:400]}\n"
                          f"  new {str(b)[:400]}")
    print(f"{len(fns)} functions (old: {rev[:10]}; {skipped} that read a walker's sentinel "
          f"left out), differences: {diffs}")
    return 1 if any(diffs.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
