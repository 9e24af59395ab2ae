"""What a compiled function learns from an absence or an object's class is
guarded like what it reads: an attribute the code reads with a default
(getattr(o, "k", 5), hasattr, `except AttributeError`) that was absent when
traced, a name `'Q' in globals()` found absent, the length of globals(), and
the class of an object of the user's class (isinstance(o, A), type(o) is A)
all make the plan miss when they change, so the call gives eager's answer.
globals() in translated code is the function's module dict (before, hop's
own), and a translation that assigns globals does not compile a globals()
call (eager runs it).  Found by the thirty-eighth session's campaign."""

import sys
import types

import pytest

import hop

x = hop.tensor([1.0])
_me = sys.modules[__name__]


class C:
    pass


class A:
    pass


class B:
    pass


def _clean():
    for name in ("k", "j", "m"):
        for target in (C, _OBJ, _NS):
            if name in vars(target):
                delattr(target, name)
    for name in ("P_S38", "Q_S38", "R_S38"):
        globals().pop(name, None)


_OBJ = C()
_NS = types.SimpleNamespace()


@pytest.fixture(autouse=True)
def clean():
    _clean()
    yield
    _clean()


def _try_attr(x):
    try:
        a = _OBJ.k
    except AttributeError:
        a = 5
    return x * a


def _getattr_default(x):
    return x * getattr(_OBJ, "k", 5)


def _hasattr(x):
    return x * (hasattr(_OBJ, "j") + 1)


def _class_default(x):
    return x * getattr(C, "m", 7)


def _namespace_default(x):
    return x * getattr(_NS, "k", 3)


def _module_default(x):
    return x * getattr(_me, "P_S38", 4)


def _in_globals(x):
    return x * ("Q_S38" in globals())


def _globals_get(x):
    return x * globals().get("Q_S38", 9)


def _globals_len(x):
    return x * len(globals())


def _add(name):
    def go():
        if name == "obj.k":
            _OBJ.k = 2
        elif name == "obj.j":
            _OBJ.j = 1
        elif name == "class.k":
            C.k = 11  # (the class now answers for the object)
        elif name == "class.m":
            C.m = 13
        elif name == "ns.k":
            _NS.k = 17
        elif name == "P":
            globals()["P_S38"] = 19
        elif name in ("Q", "R"):
            globals()[name + "_S38"] = 23
    return go


@pytest.mark.parametrize("fn,change", [
    (_try_attr, "obj.k"), (_try_attr, "class.k"),
    (_getattr_default, "obj.k"), (_getattr_default, "class.k"),
    (_hasattr, "obj.j"),
    (_class_default, "class.m"),
    (_namespace_default, "ns.k"),
    (_module_default, "P"),
    (_in_globals, "Q"), (_globals_get, "Q"), (_globals_len, "R"),
], ids=lambda v: getattr(v, "__name__", v))
def test_an_absence_the_trace_answered_is_guarded(fn, change):
    cf = hop.compile(fn)
    assert cf(x).tolist() == fn(x).tolist()
    _add(change)()
    assert cf(x).tolist() == fn(x).tolist()
    assert cf.recompiles == 1
    assert cf(x).tolist() == fn(x).tolist()  # (the new plan's answer)
    assert cf.recompiles == 1


def _isinstance(x):
    return x * isinstance(_OBJ, A) + (type(_OBJ) is A) * 10


def _isinstance_arg(x, p):
    return x * isinstance(p, A)


def test_an_objects_class_reassigned_makes_the_plan_miss():
    o = A()
    global _OBJ
    saved, _OBJ = _OBJ, o
    try:
        cf, cg = hop.compile(_isinstance), hop.compile(_isinstance_arg)
        assert cf(x).tolist() == _isinstance(x).tolist() == [11.0]
        assert cg(x, o).tolist() == [1.0]
        o.__class__ = B
        assert cf(x).tolist() == _isinstance(x).tolist() == [0.0]
        assert cg(x, o).tolist() == _isinstance_arg(x, o).tolist() == [0.0]
        assert "o.__class__" in cg.explain() or "__class__" in cg.explain()
    finally:
        _OBJ = saved


Z_S38 = 1


def _writes_and_reads_globals(x):
    global Z_S38
    has = "Z_S38" in globals()
    Z_S38 = Z_S38 + 1
    return x * has, globals().get("Z_S38", -1)


def _reads_globals_only(x):
    return x * len([k for k in globals() if k == "Z_S38"])


def test_globals_in_translated_code_is_the_functions_module_dict():
    global Z_S38
    cf = hop.compile(_writes_and_reads_globals)
    Z_S38 = 1
    want = _writes_and_reads_globals(x)
    Z_S38 = 1
    got = cf(x)
    assert got[0].tolist() == want[0].tolist() == [1.0] and got[1] == want[1] == 2
    assert Z_S38 == 2
    assert "globals() in a function that assigns globals" in cf.explain()
    cg = hop.compile(_reads_globals_only)
    assert cg(x).tolist() == _reads_globals_only(x).tolist() == [1.0]
