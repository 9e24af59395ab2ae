"""A compiled call after a graph break never runs the function's effects
twice (session 48).  At a break hop.compile runs the plan, replays the
effects before the break, runs the breaking instruction in Python and then
the rest of the function (the resume), compiled or, where hop cannot
compile it, in the concrete interpreter (hop/_frame.py with concrete=True).
An instruction the concrete interpreter could not run made the function
fall back and run again from its start, after the effects before the break
had happened: each case below printed 'a' twice and logged twice on its
first call (before this session: every case of _AFTER_BREAK whose comment
says "was").  Each construct sits after the break (`float(x.sum())`) with
an effect before it; compiled and eager must give the same results,
printed text, warnings, errors and state on every call."""

import textwrap
import warnings

import pytest

import hop
from hop import _frame, _frame_base
from hop._frame_base import Unsupported
from hop._frame_concrete import unrunnable
from compile_values import campaign, warned_outcome


program, check = campaign("s48", outcome=warned_outcome())

_WORLD = """
import contextlib
LOG = []
N = 0
class P:
    __match_args__ = ("u", "v")
    def __init__(self, u, v):
        self.u, self.v = u, v
class CM:
    def __enter__(self):
        LOG.append("enter")
        return self
    def __exit__(self, *exc):
        LOG.append(("exit", exc[0] is None))
        return False
class Holder:
    v = 0
H = Holder()
def snap():
    return LOG, N, H.v
"""

# construct -> the lines after the break, which bind r (the result's second
# part) or return themselves.
_AFTER_BREAK = {
    # was: IMPORT_NAME, IMPORT_FROM (the concrete interpreter refused them)
    "import": "import math\nr = math.floor(y)",
    "import_dotted_as": "import os.path as osp\nr = osp.basename('a/b') + str(y)",
    "from_import": "from math import floor, ceil\nr = floor(y) + ceil(y)",
    "from_import_missing": "from math import no_such_name\nr = y",
    # was: MATCH_CLASS, MATCH_SEQUENCE, MATCH_MAPPING, MATCH_KEYS, GET_LEN
    "match_builtin_class": "match y:\n    case float(v) if v > 1:\n        r = v\n"
                           "    case _:\n        r = 0.0",
    "match_user_class": "match P(y, 2):\n    case P(a, v=b):\n        r = a + b\n"
                        "    case _:\n        r = -1",
    "match_class_error": "match P(y, 2):\n    case P(a, b, c):\n        r = a\n"
                         "    case _:\n        r = -1",
    "match_sequence": "match [y, 1, 2]:\n    case [a, *rest]:\n        r = (a, rest)\n"
                      "    case _:\n        r = None",
    "match_mapping": "match {'k': y, 'j': 1}:\n    case {'k': v, **rest}:\n        r = (v, rest)\n"
                     "    case _:\n        r = None",
    "match_mapping_miss": "match {'j': y}:\n    case {'k': v}:\n        r = v\n"
                          "    case _:\n        r = 'none'",
    "match_literal_or": "match int(y):\n    case 0 | 1:\n        r = 'small'\n"
                        "    case 3 | 6:\n        r = 'three'\n    case _:\n        r = 'big'",
    # was: CHECK_EG_MATCH, PREP_RERAISE_STAR (except*: the function runs eagerly)
    "except_star": "try:\n    raise ExceptionGroup('g', [ValueError(y)])\n"
                   "except* ValueError as g:\n    LOG.append(len(g.exceptions))\nr = y",
    # each already ran in the concrete interpreter; kept as the contract
    "global_write": "global N\nN += 1\nr = N",
    "global_del": "global TMP\nTMP = y\ndel TMP\nr = 'TMP' in globals()",
    "del_local_item": "z = [y, 1]\ndel z[0]\nr = z\ndel z",
    "assert_fails": "assert y < 0, 'not negative'\nr = y",
    "star_unpack": "a, *b, c = [y, 1, 2, 3]\nr = (a, b, c)",
    "fstring_spec": "w = 8\ns = f'{y:.2f}|{y!r:>{w}}'\nprint(s)\nr = s",
    "print_star_kw": "a = [y, 2]\nk = {'sep': '-'}\nprint(*a, **k)\nr = y",
    "lambda_defaults": "g = lambda t, s=2, *, q=3: t * s + q + y\nr = g(1)",
    "closure_nonlocal": "def inner():\n    nonlocal y\n    y += 1\ninner()\nr = y",
    "raise_caught": "try:\n    raise ValueError(y)\nexcept ValueError as e:\n    r = e.args[0]",
    "bare_reraise": "try:\n    try:\n        raise KeyError(y)\n    except KeyError:\n"
                    "        LOG.append('k')\n        raise\nexcept KeyError as e:\n    r = str(e)",
    "return_in_finally": "try:\n    return (x * 2, y)\nfinally:\n    LOG.append('fin')",
    "with_user_manager": "with CM() as m:\n    r = type(m).__name__",
    "with_suppress": "with contextlib.suppress(KeyError):\n    {}['k']\nr = y",
    "set_dict_comprehension": "r = (sorted({i * y for i in range(3)}), {i: y for i in range(2)})",
    "generator_function": "def gen():\n    yield y\n    yield 2\nr = sum(gen())",
    "async_function": "async def co():\n    return y\nc = co()\ntry:\n    c.send(None)\n"
                      "except StopIteration as s:\n    r = s.value",
    "slicing": "r = [y, 1, 2, 3][1:3] + [y][::-1]",
    "exec": "ns = {}\nexec('v = 2', ns)\nr = ns['v'] + y",
    "class_statement": "class M:\n    m = y\nr = M.m",
    "attribute_augmented": "H.v += 1\nr = H.v",
    "dict_merge": "d = {'a': y}\nr = {**d, 'b': 1}",
    "walrus_chain": "if 1 < (n := int(y)) < 5:\n    r = n\nelse:\n    r = -n",
    "while_else": "i = 0\nwhile i < 2:\n    i += 1\nelse:\n    LOG.append('else')\nr = i",
    "import_after_a_second_break": "print(float(x.sum() * 2))\nimport math\nr = math.ceil(y)",
    "import_in_try_except": "try:\n    import no_such_module_s48\nexcept ImportError as e:\n"
                            "    r = e.name",
    "nested_comprehension": "r = [[i * y for i in range(j)] for j in range(3) if j]",
    "with_two_managers_raising": "try:\n    with CM(), CM():\n        raise KeyError(y)\n"
                                 "except KeyError as e:\n    r = repr(e)",
    "try_else_return": "try:\n    LOG.append('try')\nexcept ValueError:\n    r = 0\n"
                       "else:\n    return (x, y)\nfinally:\n    LOG.append('fin')",
    "raise_from_uncaught": "raise ValueError(y) from KeyError('k')\nr = 0",
}


def _source(construct):
    body = textwrap.indent(construct, "    ")
    return _WORLD + f"""
def f(x):
    print('a')
    LOG.append(0)
    y = float(x.sum())
{body}
    return (x * 2, r)
"""


@pytest.mark.parametrize("construct", _AFTER_BREAK.values(), ids=_AFTER_BREAK.keys())
def test_a_construct_after_a_graph_break_runs_the_function_once(construct):
    check(_source(construct), calls=3, name="once")


def _import_after_break():
    ns = program(_source(_AFTER_BREAK["import"]), "scan")
    return ns, hop.compile(ns["f"])


def _run(cf, ns, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = ("ok", cf(hop.tensor([1.0, 2.0, 3.0]))[1])
        except Exception as e:
            got = ("error", type(e).__name__, str(e))
    return got, capsys.readouterr().out, list(ns["LOG"])


def test_a_break_followed_by_an_instruction_the_concrete_interpreter_refuses_runs_eagerly_once(
        monkeypatch, capsys):
    # the design's guarantee, tested with IMPORT_NAME taken out of what the
    # concrete interpreter runs: the translation refuses the break before
    # anything of the call ran (_Breaking._check_runnable), so the call runs
    # eagerly from its start, once ('a' printed once, LOG [0]); before this
    # session the import refused after the break printed 'a' twice
    monkeypatch.setattr(_frame, "CONCRETE_RUNS", _frame.CONCRETE_RUNS - {"IMPORT_NAME"})
    ns, cf = _import_after_break()
    assert _run(cf, ns, capsys) == (("ok", 6), "a\n", [0])
    assert cf.eager_calls == 1 and cf.graphs == []
    why = cf.explain()
    assert "hop's concrete interpreter cannot run IMPORT_NAME (at <campaign_s48_scan>:" in why
    assert "the call runs eagerly from its start, once" in why


def test_an_instruction_refused_at_run_time_after_a_break_raises_and_never_reruns(
        monkeypatch, capsys):
    # the last resort: what the concrete interpreter refuses at run time,
    # after the effects before the break happened, is a clear error; before,
    # the function ran again from its start ('a' twice, LOG [0, 0])
    def refuse(*args):
        raise Unsupported("refused for the test", "here:1")

    monkeypatch.setattr(_frame, "import_name", refuse)
    ns, cf = _import_after_break()
    got, out, log = _run(cf, ns, capsys)
    assert got == ("error", "UnsupportedError",
                   "hop.compile: f: the code after the graph break at <campaign_s48_scan>:25 "
                   "could not run in Python (refused for the test at here:1); the call's "
                   "effects before it happened once, and hop does not run the function again")
    assert (out, log) == ("a\n", [0])


def _match_after(x):
    y = float(x)
    match y:
        case float(v):
            return v
    return None


def _except_star_after(x):
    y = float(x)
    try:
        raise ExceptionGroup("g", [ValueError(y)])
    except* ValueError:
        y = -y
    return y


@pytest.mark.parametrize("fn,op", [(_match_after, "MATCH_CLASS"),
                                   (_except_star_after, "CHECK_EG_MATCH")])
def test_the_scan_finds_what_the_concrete_interpreter_cannot_run_after_a_point(fn, op):
    # (the effect analysis refuses such code as a whole today: the scan is
    # what stands between any such instruction and a double run)
    ins = _frame_base._instructions(fn.__code__)[0]
    after = next(n for n, i in enumerate(ins) if i.opname == "STORE_FAST")
    n, got = unrunnable(fn.__code__, after, _frame.CONCRETE_RUNS)
    assert got == op and ins[n].opname == op
    # from the last return on, nothing is left to refuse
    last = max(n for n, i in enumerate(ins) if i.opname == "RETURN_VALUE")
    assert unrunnable(fn.__code__, last, _frame.CONCRETE_RUNS) is None
