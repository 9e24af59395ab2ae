"""What the guard scan does per walked function (issue #30's nested-wrap
row: a 64-deep nest walks 64 functions on every trace).  The scan's Python
passes ask each function's per-code record (_reads.names_of) for the
imports it makes, call _spell only for the values it spells, and skip the
absent-attribute check when no code probes a name; a compiled function
still sees what those passes guard."""

import os
import sys
import types

import hop
from hop import _guards, _reads

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from workloads import nested  # noqa: E402


def _python_calls(fn, *args):
    calls = [0]

    def count(frame, event, arg):
        if event == "call":
            calls[0] += 1
    sys.setprofile(count)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return calls[0]


def test_scan_of_a_64_deep_nest_makes_at_most_15_python_calls_a_function():
    # (before: 1,430 calls, 22 a function: _spell three times, an
    # expected property twice, is_user_module, _unanswered and its
    # generator for every level; now 916)
    x = hop.ones(4)
    f = nested(64)
    hop.trace(f, x)
    s = _guards.scan(f, [x], ["v"], [False])
    assert len(s.functions) == 64 and len(s.guards) == 64
    assert _python_calls(_guards.scan, f, [x], ["v"], [False]) <= 15 * 64


def test_scan_of_a_64_deep_nest_makes_fewer_python_calls_than_functions():
    # (before: 916 calls, 14 a function: the passes' loops asked names_of and
    # its record's imported, probed and computed_names for every level, and
    # _visit read the hop module each level names; now 23)
    x = hop.ones(4)
    f = nested(64)
    hop.trace(f, x)
    s = _guards.scan(f, [x], ["v"], [False])
    assert len(s.functions) == 64 and len(s.guards) == 64
    assert _python_calls(_guards.scan, f, [x], ["v"], [False]) <= 64


def _imports_all():
    import os.path
    from json import decoder

    def inner():
        import hop._guards  # (in the code defined inside)
        return hop._guards

    def relative():  # (never called)
        from .cfg import K
        return K
    return inner, relative, os.path, decoder


def test_names_of_imported_lists_a_codes_and_its_inner_codes_imports_in_order():
    got = _reads.names_of(_imports_all.__code__).imported()
    # (a relative import's level is IMPORT_NAME's operand before the
    # fromlist: before, `from .cfg import K` read level 0)
    assert got == (("os.path", 0), ("json", 0), ("hop._guards", 0), ("cfg", 1))
    assert _reads.names_of(nested.__code__).imported() == ()
    assert _reads.names_of(_imports_all.__code__).imported() is got  # made once


def test_compiled_function_sees_an_attribute_it_imports_relatively_change(tmp_path):
    # `from .cfg import K` in a function of package relpkg_user: before, the
    # scan looked for a top-level module cfg, so relpkg_user.cfg was not
    # guarded and the compiled function answered 2.0 after K = 5.0 (eager 5.0)
    pkg = tmp_path / "relpkg_user"
    pkg.mkdir()
    (pkg / "cfg.py").write_text("K = 2.0\n")
    (pkg / "__init__.py").write_text("def scaled(v):\n    from .cfg import K\n    return v * K\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import relpkg_user
        import relpkg_user.cfg as cfg
        cf = hop.compile(relpkg_user.scaled)
        x = hop.ones(2)
        assert cf(x).tolist() == [2.0, 2.0]
        cfg.K = 5.0
        assert relpkg_user.scaled(x).tolist() == [5.0, 5.0]
        assert cf(x).tolist() == [5.0, 5.0]
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("relpkg_user.cfg", "relpkg_user"):
            sys.modules.pop(name, None)


_mod = types.ModuleType("scan_imports_user")
exec("K = 2.0\n", _mod.__dict__)
sys.modules["scan_imports_user"] = _mod


def _reads_imported(v):
    import scan_imports_user
    return v * scan_imports_user.K


def test_compiled_function_sees_an_attribute_of_a_module_it_imports_itself_change():
    cf = hop.compile(_reads_imported)
    x = hop.ones(2)
    assert cf(x).tolist() == [2.0, 2.0]
    _mod.K = 5.0
    try:
        assert cf(x).tolist() == [5.0, 5.0]
    finally:
        _mod.K = 2.0


def _spelled(o):
    return getattr(o, NAME)


NAME = "w"


class _Holder:
    def __init__(self, w):
        self.w = w


def test_compiled_function_sees_an_attribute_named_by_a_global_string_change():
    h = _Holder(hop.ones(2))
    cf = hop.compile(lambda x: x + _spelled(h))
    x = hop.ones(2)
    assert cf(x).tolist() == [2.0, 2.0]
    h.w = hop.full((2,), 3.0)
    assert cf(x).tolist() == [4.0, 4.0]


def _probes(v):
    return v * getattr(_probes, "k", 2.0)


def test_compiled_function_sees_a_probed_function_attribute_added():
    cf = hop.compile(_probes)
    x = hop.ones(2)
    assert cf(x).tolist() == [2.0, 2.0]
    _probes.k = 7.0
    try:
        assert cf(x).tolist() == [7.0, 7.0]
    finally:
        del _probes.k
