"""The guard scan's per-function passes read in C (_C._guard_sift, issue
#30's nested-wrap row: a 64-deep nest walks 64 functions on every trace and
each pass was a Python loop over them): C gives what each pass's Python
loop found, function for function and value for value, and leaves the pass
to Python when the list holds other than plain functions."""

import operator
import os
import sys
import types

import pytest

import hop
from hop import _C, _guards, _reads

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from workloads import nested  # noqa: E402

NAME = "w"
GETTER = operator.attrgetter("a.b", "c")
CALLER = operator.methodcaller("scale", 2)
LONG = "x" * 100


def calls_globals(v):
    return v + len(globals())


def imports(v):
    import json
    return json, v


def spells(o):
    return getattr(o, NAME), GETTER(o), CALLER(o), LONG, o.not_a_global  # (a name no global has)


def probes(o):
    return getattr(o, "k", 2.0), hasattr(o, "j")


def computes(o, i):
    return getattr(o, "a" + str(i))


class _OwnGet(dict):
    """Globals whose get() answers for NAME: the pass reads them through it."""

    def get(self, key, default=None):
        return "own" if key == "NAME" else dict.get(self, key, default)


def _cells():
    tag, getter = "cell.name", operator.attrgetter("z")

    def inner(o):
        return getattr(o, tag), getter(o), later
    if tag is None:
        later = None  # (never: later's cell stays empty)
    return inner


def _functions():
    own = types.FunctionType(spells.__code__, _OwnGet(__name__="sift_user", GETTER=GETTER))
    fns = [calls_globals, imports, spells, probes, computes, _cells(), own, nested(3)]
    walked = []
    _C._guard_walk(nested(5), walked, set(), set(), _guards._MAX_FUNCTIONS)
    return fns + walked


def _python(fs, what):
    """The pass's own Python reading (the loops before C's)."""
    if what == "globals":
        return [f for f in fs if type(f.__globals__) is dict and
                "globals" in _reads.names_of(f.__code__).set]
    if what == "imports":
        return [f for f in fs if _reads.names_of(f.__code__).imported()]
    if what == "probed":
        return set().union(*(_reads.names_of(f.__code__).probed() for f in fs))
    if what == "computed":
        return any(_reads.names_of(f.__code__).computed_names() for f in fs)
    out = []
    for f in fs:
        out += [v for v in map(f.__globals__.get, f.__code__.co_names)
                if type(v) in _guards._SPELLED]
        for cell in f.__closure__ or ():
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            if type(v) in _guards._SPELLED:
                out.append(v)
    return out


@pytest.mark.parametrize("what", ["globals", "imports", "spelled", "probed", "computed"])
def test_c_reads_what_each_pass_read_in_python(what):
    fs = _functions()
    got = _C._guard_sift(fs, what, _guards._SPELLED)
    want = _python(fs, what)
    assert type(got) is type(want)
    if what in ("probed", "computed"):
        assert got == want
    else:
        assert [id(v) for v in got] == [id(v) for v in want]


def test_each_reading_finds_what_its_function_holds():
    fs = _functions()
    assert _C._guard_sift(fs, "globals", _guards._SPELLED) == [calls_globals]
    assert _C._guard_sift(fs, "imports", _guards._SPELLED) == [imports]
    spelled = _C._guard_sift(fs, "spelled", _guards._SPELLED)
    cells = {f: c.cell_contents for f, c in zip(fs[5].__code__.co_freevars, fs[5].__closure__)
             if f != "later"}  # (the empty cell: nothing)
    assert spelled == ["w", GETTER, CALLER, LONG] + [v for v in cells.values()] + \
        ["own", GETTER]  # (own: its get() answers NAME; CALLER is not its global)
    assert sorted(cells) == ["getter", "tag"]
    assert _C._guard_sift(fs, "probed", _guards._SPELLED) >= {"k", "j"}
    assert _C._guard_sift(fs, "computed", _guards._SPELLED) is True
    assert _C._guard_sift(fs[:4], "computed", _guards._SPELLED) is False
    assert _C._guard_sift([], "probed", _guards._SPELLED) == set()


def test_a_list_with_other_than_plain_functions_is_left_to_python():
    for odd in (len, hop.Tensor.sum, _OwnGet().get):
        for what in ("globals", "imports", "spelled", "probed", "computed"):
            assert _C._guard_sift([spells, odd], what, _guards._SPELLED) is None


def test_the_scan_with_an_odd_function_reads_it_in_python():
    # (something read as a function is, with no function's type)
    odd = types.SimpleNamespace(__globals__=probes.__globals__, __code__=probes.__code__,
                                __closure__=None)
    s = _guards._Scan()
    s.functions.extend([spells, odd])
    _guards._spelled_names(s, ())
    assert {"w", "a", "b", "c", "scale"} <= s.names and "x" * 100 not in s.names
    assert _guards._probed(s) == ("j", "k")
    assert _guards._computed(s) is False
    s.functions.append(computes)
    assert _guards._computed(s) is True


def test_an_unknown_reading_is_a_value_error():
    with pytest.raises(ValueError, match="_guard_sift: 'names' with"):
        _C._guard_sift([spells], "names", _guards._SPELLED)
    with pytest.raises(ValueError, match="_guard_sift: 'spelled' with None"):
        _C._guard_sift([spells], "spelled", None)
    with pytest.raises(TypeError):
        _C._guard_sift((spells,), "globals", _guards._SPELLED)

