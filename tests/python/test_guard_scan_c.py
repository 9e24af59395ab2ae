"""The guard scan's readings in C (python/_C/guard_scan.c, issue #30): the
breadth-first walk, each walked function's roots and the builtins its code
loads give what _reads' and _guards' Python gives, object for object, and a
compiled function still sees a rebound cell or global of a walked helper."""

import sys
import types

import pytest

import hop
from hop import _C, _guards, _reads

SCALE = 2.0
_lib = types.ModuleType("scanlib_user")  # a user's module: its named functions are walked
exec("def helper(v):\n    return v * 3.0\n", _lib.__dict__)


def helper(v, k=2, *, m=4):
    return v * SCALE + k + m


def uses_lib(v):
    return _lib.helper(v) + len([v]) + abs(1)


def reads_absent(v):
    return v + not_defined_anywhere  # noqa: F821  (an absent global, guarded as such)


def _empty_cell_fn():
    def fn(v):
        return v + later
    later = 1.0
    del later
    return fn


def _nest(depth):
    f = lambda v: v + 1.0  # noqa: E731
    for _ in range(depth):
        f = (lambda g: lambda v: hop.wrap(g, v))(f)
    return f


def _functions():
    k = 3.0
    box = [1.0]

    def closure(v):
        return helper(v) + k + box[0] + SCALE

    def calls_print(v):
        print(v)
        return range(3), float(v)

    wrapped = hop.nested_compile_region(helper)

    def through_hop_wrapper(v):
        return wrapped(v)

    no_name = types.FunctionType(helper.__code__, {"SCALE": 1.0})
    return [closure, uses_lib, reads_absent, _empty_cell_fn(), calls_print, helper,
            through_hop_wrapper, no_name, _nest(3), _nest(100), lambda v, *, z=sys: v]


def _python_walk(f):
    """_reads.Walk.breadth_first with _guards._Follow: the walk before C's."""
    ns = types.SimpleNamespace(names=set())
    w = _reads.Walk()
    w.breadth_first(f, _guards._Follow(ns))
    return w.functions, w.seen, ns.names


@pytest.mark.parametrize("i", range(11))
def test_the_walk_in_c_meets_the_functions_names_and_ids_of_pythons(i):
    f = _functions()[i]
    functions, seen, names = [], set(), set()
    assert _C._guard_walk(f, functions, seen, names, _guards._MAX_FUNCTIONS) is None
    py_functions, py_seen, py_names = _python_walk(f)
    assert [id(g) for g in functions] == [id(g) for g in py_functions]
    assert seen == py_seen and names == py_names
    assert len(functions) <= _guards._MAX_FUNCTIONS


@pytest.mark.parametrize("i", range(11))
def test_the_roots_in_c_are_pythons_object_for_object(i):
    for f in _python_walk(_functions()[i])[0]:
        got, want = _C._guard_roots(f, False), _reads.roots(f, _guards._FOLLOW)
        assert got is not None
        assert [(k, n) for k, n, _, _ in got] == [(k, n) for k, n, _, _ in want]
        assert all(a[2] is b[2] and a[3] is b[3] for a, b in zip(got, want))
        # (what the scan takes: the same without the roots holding hop's module)
        scanned = _C._guard_roots(f, True)
        assert [r[:2] for r in scanned] == [r[:2] for r in want if r[3] is not hop]


@pytest.mark.parametrize("i", range(11))
def test_the_builtins_in_c_are_pythons(i):
    for f in _python_walk(_functions()[i])[0]:
        keys, out = set(), []
        assert _C._guard_builtins(f, keys, out) is True
        py = types.SimpleNamespace(builtin_keys=set(), builtins=[])
        saved = _C._guard_builtins
        try:
            _C._guard_builtins = lambda *a: None  # _builtin_reads' own Python
            _guards._builtin_reads(py, f)
        finally:
            _C._guard_builtins = saved
        assert keys == py.builtin_keys
        assert [t[2:3] + t[4:] for t in out] == [t[2:3] + t[4:] for t in py.builtins]
        assert all(a[0] is b[0] and a[1] is b[1] and a[3] is b[3]
                   for a, b in zip(out, py.builtins))


def test_the_walk_follows_a_user_modules_function_and_a_hop_wrappers_function():
    fns = _functions()
    for f, reached in ((fns[1], _lib.helper), (fns[6], helper)):
        functions = []
        _C._guard_walk(f, functions, set(), set(), _guards._MAX_FUNCTIONS)
        assert functions[0] is f and any(g is reached for g in functions[1:])


def test_the_builtins_of_a_function_name_each_global_dict_once():
    keys, out = set(), []
    _C._guard_builtins(uses_lib, keys, out)
    _C._guard_builtins(uses_lib, keys, out)
    assert sorted(t[2] for t in out) == ["abs", "len"]
    assert all(t[4] is True for t in out)


def test_c_leaves_what_it_does_not_read_plainly_to_python():
    weird = types.FunctionType(helper.__code__, {})  # (Python reads `{} or {}`: another dict)
    assert _C._guard_roots(weird, True) is None
    assert _C._guard_roots(len, True) is None
    assert _C._guard_builtins(len, set(), []) is None


def test_a_function_whose_module_name_is_none_raises_as_pythons_walk_does():
    bad = types.FunctionType(helper.__code__, {"__name__": None, "SCALE": 1.0})

    def outer(v):
        return bad(v)
    with pytest.raises(AttributeError) as c:
        _C._guard_walk(outer, [], set(), set(), 64)
    with pytest.raises(AttributeError) as p:
        _python_walk(outer)
    assert str(c.value) == str(p.value)


def test_the_scan_of_a_nest_guards_what_pythons_scan_guarded():
    f = _nest(70)
    s = _guards.scan(f)
    assert len(s.functions) == _guards._MAX_FUNCTIONS
    assert [repr(g.source) for g in s.guards] == ["closure cell 'g'"] * _guards._MAX_FUNCTIONS
    assert [g.expected for g in s.guards] == s.functions[1:] + [s.functions[-1].__closure__[0]
                                                                 .cell_contents]


# a helper's cell and global, reached through the walk: a rebinding retraces

OFFSET = 1.0


def _make_helper():
    scale = 2.0

    def inner(v):
        return v * scale + OFFSET

    def rebind(x):
        nonlocal scale
        scale = x
    return inner, rebind


def test_a_compiled_function_sees_a_walked_helpers_cell_and_global_change():
    global OFFSET
    inner, rebind = _make_helper()
    cf = hop.compile(lambda v: inner(v) + 0.5)
    x = hop.tensor([1.0, 2.0])
    assert cf(x).tolist() == [3.5, 5.5]
    rebind(10.0)
    assert cf(x).tolist() == [11.5, 21.5]
    try:
        OFFSET = -1.0
        assert cf(x).tolist() == [9.5, 19.5]
    finally:
        OFFSET = 1.0
    assert cf(x).tolist() == [11.5, 21.5]


# the scan's loop over the walked functions in C (_C._guard_scan_functions):
# the guards, sources, seen ids and builtin reads of _guards' Python loop

def _many_globals(n):
    """A function whose code names n module functions (more guards than the
    scan keeps: _MAX_GUARDS)."""
    g = {"__name__": "scan_many_user"}
    src = "def f(v):\n    return v" + "".join(f" + h{i}(v)" for i in range(n)) + "\n"
    for i in range(n):
        exec(f"def h{i}(v):\n    return v\n", g)
    exec(src, g)
    return g["f"]


def _scan_record(s):
    guards = [(g.kind, g.source.kind, id(g.source.base), g.source.key, g.source.path,
               repr(g.source), g.weak, id(g.expected), g.capture) for g in s.guards]
    return (guards, [id(f) for f in s.functions], s.seen, s.builtin_keys,
            [(id(a), id(b), n, id(v), p) for a, b, n, v, p in s.builtins], s.skipped)


@pytest.mark.parametrize("i", range(13))
def test_the_scans_loop_in_c_guards_what_pythons_loop_guards(i, monkeypatch):
    f = (_functions() + [_many_globals(600), _many_globals(3)])[i]
    got = _scan_record(_guards.scan(f))
    monkeypatch.setattr(_C, "_guard_scan_functions",
                        lambda s, *a: _guards._scan_functions(s))
    want = _scan_record(_guards.scan(f))
    assert got == want
    assert len(got[0]) <= _guards._MAX_GUARDS


def test_a_guard_made_in_c_is_a_guard_as_pythons():
    s = _guards.scan(_nest(2))
    g = s.guards[0]
    assert type(g) is _guards.Guard and type(g.source) is _guards.Source
    assert g.kind == "id" and g.weak and g.capture is None and g.source.path == ()
    assert g.expected is s.functions[1]
    assert g.describe() == _guards.Guard(g.source, "id", g.expected).describe()
    assert g.source.read(()) is g.expected and g.source.hint() == "g"


def test_the_scans_loop_in_c_rejects_a_class_without_the_slots():
    class NotSource:
        __slots__ = ("kind", "base", "key", "path")  # (text: none)

    class Plain:
        kind = base = key = path = text = None
    for cls in (NotSource, Plain):
        with pytest.raises(TypeError, match="text is not a slot|kind is not a slot"):
            _C._guard_scan_functions(_guards._Scan(), cls, _guards.Guard, None, None, 512)
    # (the layouts it keeps are still the real classes': a scan works after)
    assert [repr(g.source) for g in _guards.scan(_nest(2)).guards] == ["closure cell 'g'"] * 2


def _python_shape(guards):
    """_guards._shape's reading in Python (before C's, python/_C/guard_scan.c;
    a path's steps are _guards._path_steps', Python's in both)."""
    shape, objs, names = [], [], []
    for g in guards:
        src = g.source
        kind = src.kind
        if kind == "global":
            objs += (src.base, src.key)
        elif kind != "arg":
            objs.append(src.base)
        steps = _guards._path_steps(src.path, objs) if len(src.path) else ()
        if g.kind == "names":
            names.append(len(shape))
        shape.append(("weak" if g.weak else g.kind, kind,
                      src.key if kind == "arg" else None, steps))
    return shape, objs, names


class _DuckGuard:
    """Not a Guard: _guard_shape reads its attributes as Python does."""

    def __init__(self, source, kind, weak):
        self.source, self.kind, self.weak = source, kind, weak


def _shape_guards():
    S, G = _guards.Source, _guards.Guard
    box = types.SimpleNamespace(w=1.0)
    g = {"x": box}
    cell = types.CellType(box)
    import builtins
    names = _guards.BuiltinNames(((g, vars(builtins), "len", len, True),), ())
    return [
        G(S("global", g, "x", "global 'x'"), "id", box),
        G(S("cell", cell, "c", "closure cell 'c'"), "value", 1.0),
        G(S("arg", None, 1, "y", (("attr", "w"),)), "value", 1.0),
        G(S("obj", box, None, "the callable object", (("attr", "class"), ("item", 3),
                                                      ("attr", "not an identifier"),
                                                      ("array", True), ("array", False),
                                                      ("attr", "__self__"))), "len", 2),
        G(S("obj", names, None, repr(names)), "names", names),
        G(S("global", g, "x", "global 'x'", (("item", "k"),)), "eq", (1, 2)),
        _DuckGuard(S("cell", cell, "c", "closure cell 'c'"), "id", 1),
        _DuckGuard(types.SimpleNamespace(kind="global", base=g, key="x", path=[("item", 0)]),
                   "names", 0),
    ]


@pytest.mark.parametrize("i", range(13))
def test_the_shape_in_c_is_pythons_object_for_object(i):
    f = (_functions() + [_many_globals(600), _many_globals(3)])[i]
    guards = _guards.Guards(_guards.scan(f), [], []).guards
    got, want = _guards._shape(guards), _python_shape(guards)
    assert got[0] == want[0] and got[2] == want[2]
    assert [id(o) for o in got[1]] == [id(o) for o in want[1]]


def test_the_shape_in_c_of_every_kind_of_source_and_path_is_pythons():
    guards = _shape_guards()
    got, want = _guards._shape(guards), _python_shape(guards)
    assert got[0] == want[0] and got[2] == want[2] == [4, 7]
    assert [id(o) for o in got[1]] == [id(o) for o in want[1]]
    assert got[0][3][3] == ("attr", "item", "attr", "array_scalar", "array", "__self__")
    assert got[0][6][0] == "weak" and got[0][7] == ("names", "global", None, ("item",))


def test_the_shape_in_c_raises_what_python_raises_on_a_guard_without_its_attributes():
    with pytest.raises(AttributeError, match="weak"):
        _guards._shape([types.SimpleNamespace(source=None, kind="id")])
    with pytest.raises(AttributeError, match="kind"):
        _guards._shape([_DuckGuard(types.SimpleNamespace(), "id", False)])


def test_a_sources_text_made_in_c_is_the_same_for_every_name_and_level():
    ns = {"hop": hop}
    exec("def mk(inner):\n    def f(v):\n        return hop.wrap(\u00e9t\u00e9, v)\n"
         "    \u00e9t\u00e9 = inner\n    return f\n", ns)
    f = lambda v: v + 1.0  # noqa: E731
    for _ in range(3):
        f = ns["mk"](f)
    texts = [repr(g.source) for g in _guards.scan(f).guards]
    assert texts == ["closure cell '\u00e9t\u00e9'"] * 3
    assert [repr(g.source) for g in _guards.scan(_nest(3)).guards] == ["closure cell 'g'"] * 3


def _reread_guards():
    """Weak identity guards whose source now holds another object, nothing
    (an emptied cell, a deleted global) or the same; one of a dict
    subclass's global (Python reads it)."""
    class Globals(dict):
        pass

    def a():
        pass

    def b():
        pass
    S, G = _guards.Source, _guards.Guard
    cells = [types.CellType(a) for _ in range(3)]
    g, sub = {"f": a, "h": a, "k": a}, Globals(f=a)
    guards = [G(S("cell", c, "c", "closure cell 'c'"), "id", a) for c in cells] + \
        [G(S("global", d, n, f"global {n!r}"), "id", a) for d, n in
         ((g, "f"), (g, "h"), (g, "k"), (sub, "f"))] + \
        [G(S("obj", a, None, "the callable object"), "id", a), G(S("cell", cells[2], "c", "x"),
                                                                   "value", 1.0)]
    cells[0].cell_contents, g["f"], sub["f"] = b, b, b
    del cells[1].cell_contents, g["h"]
    return guards, a, b


@pytest.mark.parametrize("in_c", [True, False])
def test_the_weak_guards_read_again_in_c_hold_what_pythons_loop_holds(in_c, monkeypatch):
    _guards.scan(_nest(1))  # (C knows Guard's and Source's slots from a scan)
    reread = _C._guard_reread
    if not in_c:
        monkeypatch.setattr(_C, "_guard_reread", list)
    guards, a, b = _reread_guards()
    s = types.SimpleNamespace(guards=guards, tensors={}, functions=[], builtins=[], skipped=[])
    got = _guards.Guards(s, [], []).guards
    assert [g.expected for g in got] == [b, a, a, b, a, a, b, a, a]
    assert [g.weak for g in got] == [True] * 8 + [False]
    # (C reads the cells' and the exact dict's; the dict subclass's global,
    # the object's and the value guard are Python's)
    assert reread(guards) == guards[6:]
