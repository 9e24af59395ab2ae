"""plain(v): a value a compiled or eager call returned, as comparable plain
values (a traced value anywhere in it is a failure), for the compile
campaigns (test_compile_campaign41.py, test_compile_campaign_s39.py and
later), and campaign(session): those campaigns' program and check."""

import contextlib
import io
import random
import sys
import textwrap
import types
import warnings

import numpy as np

import hop
from hop import _C


def plain(v):
    """v as comparable plain values (a proxy anywhere is a failure)."""
    if isinstance(v, hop.Tensor):
        assert not _C._is_proxy(v), "a traced value escaped its trace"
        return ("T", v.dtype.name, v.tolist())
    if isinstance(v, np.ndarray):
        return ("A", str(v.dtype), v.tolist())
    if isinstance(v, np.generic):
        return ("S", str(v.dtype), v.item())
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [plain(x) for x in v])
    if isinstance(v, dict):
        return ("dict", [(plain(k), plain(x)) for k, x in v.items()])
    if isinstance(v, (set, frozenset)):
        return (type(v).__name__, sorted(map(repr, v)))
    if isinstance(v, (int, float, str, bool, type(None), complex, bytes)):
        return (type(v).__name__, repr(v))
    if isinstance(v, type):
        return ("type", v.__qualname__)
    return (type(v).__name__, plain(dict(vars(v))) if hasattr(v, "__dict__") else repr(v))


def warned_outcome(values=plain):
    """An outcome for campaign(): one call's result as repr(values(r)) (NaN
    and the sign of zero count), or its error (type, text and what it was
    raised while handling); its printed text; the warnings the program
    raised (not hop's own: a fallback's, a recompile limit's); and the
    program's snap()."""
    def outcome(ns, fn, args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                got = ("ok", repr(values(fn(*args))))
            except Exception as e:  # eager's errors are part of the answer
                got = ("error", type(e).__name__, str(e), repr(e.__context__))
        said = [(x.category.__name__, str(x.message)) for x in w
                if not str(x.message).startswith("hop")]
        return got, out.getvalue(), said, repr(values(ns["snap"]())) if "snap" in ns else None
    return outcome


def _outcome(ns, fn, args):
    """What one call gave: its result (or error: type, text and what it was
    raised while handling), its printed text and the program's snap()."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = ("ok", plain(fn(*args)))
        except Exception as e:  # eager's errors are part of the answer
            got = ("error", type(e).__name__, str(e), repr(e.__context__))
    return got, out.getvalue(), plain(ns["snap"]()) if "snap" in ns else None


def campaign(session, outcome=_outcome):
    """(program, check) of a session's compile campaign (test_compile_campaign_<session>.py):
    each case is a small program built twice, one copy called eagerly and
    one through hop.compile.

    program(src, name): src run as the module campaign_<session>_<name> (in
    sys.modules, so that `sys.modules[__name__]` is its module object), its
    namespace returned.

    check(src, calls=4, name="case", **options): the program src (defining
    f, optionally args(i) -> the call's arguments (else a fresh f32[3] for
    each copy), snap() and change(i)) called eagerly and through
    hop.compile(f, **options) `calls` times, change(i) before call i: the
    same outcome (outcome(ns, fn, args): by default _outcome's results,
    printed text, errors and state) after every call.  Returns the compiled
    function."""
    def program(src, name):
        mod = types.ModuleType(f"campaign_{session}_{name}")
        mod.np, mod.hop = np, hop
        sys.modules[mod.__name__] = mod
        exec(compile(textwrap.dedent(src), f"<{mod.__name__}>", "exec"), vars(mod))
        return vars(mod)

    def check(src, calls=4, name="case", **options):
        eager, comp = program(src, name + "_e"), program(src, name + "_c")
        cf = hop.compile(comp["f"], **options)
        try:
            for i in range(calls):
                got = []
                for ns, fn in ((eager, eager["f"]), (comp, cf)):
                    if "change" in ns:
                        ns["change"](i)
                    args = ns["args"](i) if "args" in ns else \
                        (hop.tensor(np.arange(3, dtype=np.float32)),)
                    got.append(outcome(ns, fn, args))
                assert got[1] == got[0], f"call {i}: hop.compile gave {got[1]}, eager " \
                                         f"{got[0]}\n{cf.explain()}"
        finally:
            sys.modules.pop(f"campaign_{session}_{name}_e", None)
            sys.modules.pop(f"campaign_{session}_{name}_c", None)
        return cf
    return program, check


# The drawn part of a compile campaign round (s46 on): a program is a line of
# the function's own effects, a graph break or none, then one to three of the
# round's statements, each binding t0, t1, ... that the result adds up.
_DRAWN_BREAKS = ["", "", "print(float(x.sum()))", "if x.sum() > 3:\n        TAPE.append('big')",
                 "TAPE.append(int(x[0]))"]
_DRAWN_OWN = ["", "", "TAPE.append(1)", "print('call')"]


def drawn_program(seed, world, statements):
    """The source of drawn program `seed`: world (the module's names, TAPE
    among them), then f(x) and args(i) as check() takes them."""
    rng = random.Random(seed)
    lines = [rng.choice(_DRAWN_OWN), rng.choice(_DRAWN_BREAKS)]
    for k in range(rng.choice([1, 2, 3])):
        lines.append(rng.choice(statements).replace("t =", f"t{k} ="))
    body = "".join(f"\n    {s}" for s in lines if s)
    terms = " + ".join(f"t{k}" for k in range(len(lines) - 2))
    res = rng.choice([f"x * 0 + ({terms})", f"(x * 2, {terms})"])
    arg = rng.choice(["hop.arange(3.0) + i", "np.arange(3.0) * (i + 1)"])
    return world + f"""
def f(x):{body}
    return {res}
def args(i):
    return ({arg},)
"""


def drawn(world, statements):
    """check_drawn's draw of drawn_program over world and statements."""
    return lambda seed: drawn_program(seed, world, statements)


def check_drawn(check, draw, first_seed, count, calls=3, name="drawn"):
    """check() (a campaign's) of the programs draw(seed) gives for seeds
    first_seed .. first_seed + count - 1, each called `calls` times as the
    module name_seed; a difference names its seed and source."""
    for seed in range(first_seed, first_seed + count):
        src = draw(seed)
        try:
            check(src, calls=calls, name=f"{name}_{seed}")
        except AssertionError as e:
            raise AssertionError(f"seed {seed}:\n{src}\n{e}") from None
