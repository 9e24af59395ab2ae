"""The globals a compiled function's guards check are those its code may
use as globals (hop/_reads.py, global_names), not every name it spells.

- A call's keyword names: `helper(a, axis=0, scale=2.0)` compiles to
  KW_NAMES of the constant ("axis", "scale"); hop counted every string of a
  constant tuple as a name the code may read (`getattr(o, "n")`), so a
  global named `scale` was guarded.
- Attribute names: `a.shape`, `a.T`, `a.mean()` put shape, T and mean in
  co_names, which hop read as globals, so a script's globals `shape`, `T`
  and `mean` were guarded.
Either way a script's loop that rebound such a global recompiled on every
call until the recompile limit ran the function eagerly from then on.  A
name the code loads as a global, a tuple of names it loads as a value and a
string it hands to `globals()` still count."""

import warnings

import numpy as np

import hop

scale = 0.0
axis = 0
a_min = None


def helper(a, axis=None, scale=1.0):
    return np.sum(a, axis=axis) * scale


def f(a):
    return helper(a, axis=0, scale=2.0)


class Cfg:
    scale = 1.0


cfg = Cfg()


def reads_by_name(a):
    names = ("scale",)  # a tuple of names loaded as a value: getattr reads them
    return a * getattr(cfg, names[0])


def test_rebinding_a_global_named_like_a_keyword_does_not_recompile():
    global scale, axis, a_min
    compiled = hop.compile(f)
    a = np.arange(12.0).reshape(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(12):
            scale, axis, a_min = float(i), i % 2, np.ones(i + 1)
            np.testing.assert_array_equal(compiled(a), f(a))
    assert compiled.recompiles == 0 and len(compiled.graphs) == 1
    assert "global 'scale'" not in compiled.explain()
    assert "global 'axis'" not in compiled.explain()


def test_a_hop_numpy_keyword_call_guards_no_global_of_its_keywords():
    import hop.numpy as hnp
    global a_min
    g = hop.compile(lambda a: hnp.clip(a, a_min=3.0, a_max=8.0))
    a = np.arange(12.0).reshape(3, 4)
    for i in range(10):
        a_min = np.full(3, float(i))
        r = g(a)
        assert type(r) is hnp.ndarray  # (the call by name: a hop.numpy array, as eagerly)
        np.testing.assert_array_equal(np.asarray(r), np.clip(a, 3.0, 8.0))
    assert g.recompiles == 0


def test_names_in_a_tuple_the_code_loads_are_still_guarded():
    compiled = hop.compile(reads_by_name)
    a = hop.ones(4)
    try:
        assert compiled(a).tolist() == [1.0] * 4
        cfg.scale = 3.0  # read through getattr of the tuple's name: seen
        assert compiled(a).tolist() == [3.0] * 4
    finally:
        cfg.scale = 1.0


shape = (0, 0)
T = 0
mean = 0.0
size = 0


def attrs(a):
    return a.sum(axis=0) * a.shape[0] + a.T.mean() + a.size


def test_rebinding_globals_named_like_attributes_the_code_reads_does_not_recompile():
    global shape, T, mean, size
    compiled = hop.compile(attrs)
    a = np.arange(12.0).reshape(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(12):
            shape, T, mean, size = (i, i), i, float(i), -i
            np.testing.assert_array_equal(compiled(a), attrs(a))
    assert compiled.recompiles == 0 and len(compiled.graphs) == 1
    text = compiled.explain()
    for name in ("shape", "T", "mean", "size"):
        assert f"global '{name}'" not in text


COUNT = 2


def by_globals_dict(a):
    return a * globals()["COUNT"]


def loads_count(a):
    return a * COUNT


def test_globals_read_by_name_or_through_globals_are_still_guarded():
    global COUNT
    a = hop.ones(3)
    for fn in (loads_count, by_globals_dict):
        compiled = hop.compile(fn)
        try:
            COUNT = 2
            assert compiled(a).tolist() == [2.0] * 3
            COUNT = 5  # rebound: seen, as eagerly
            assert compiled(a).tolist() == [5.0] * 3
        finally:
            COUNT = 2


FACTOR = 1.0


def std(x):  # a user function named like the method the code below calls
    return x.sum() * FACTOR


def calls_the_method(a):
    return a.std() + 1.0


def calls_the_function(a):
    return std(a) + 1.0


def test_a_global_function_named_like_a_method_is_not_walked_but_one_called_is():
    # the walk for guards followed the global `std` because the code spells
    # .std(): its global FACTOR was guarded, and rebinding it recompiled
    global FACTOR
    a = np.arange(12.0).reshape(3, 4)
    method = hop.compile(calls_the_method)
    function = hop.compile(calls_the_function)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for i in range(6):
                FACTOR = float(i)
                np.testing.assert_array_equal(method(a), calls_the_method(a))
                # the function the code does call reads FACTOR, a float: each
                # new value is seen (a retrace, as for any float global read)
                np.testing.assert_array_equal(function(a), calls_the_function(a))
        assert method.recompiles == 0 and function.recompiles == 5
        assert "FACTOR" not in method.explain()
    finally:
        FACTOR = 1.0
