"""A call's keyword names are not reads of globals (hop/_reads.py,
code_names).

`helper(a, axis=0, scale=2.0)` compiles to KW_NAMES of the constant
("axis", "scale"); hop counted every string of a constant tuple as a name the
code may read (`getattr(o, "n")`), so a global named `scale` was guarded, and
a script's loop that rebound it recompiled on every call until the recompile
limit ran the function eagerly from then on.  A tuple the code also loads as
a value still counts, as a string constant does."""

import warnings

import numpy as np

import hop

scale = 0.0
axis = 0
x = None


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
    global scale, axis, x
    compiled = hop.compile(f)
    a = np.arange(12.0).reshape(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(12):
            scale, axis, x = float(i), i % 2, np.ones(i + 1)
            np.testing.assert_array_equal(compiled(a), f(a))
    assert compiled.recompiles == 0 and len(compiled.graphs) == 1
    assert "global 'scale'" not in compiled.explain()
    assert "global 'axis'" not in compiled.explain()


def test_a_hop_numpy_keyword_call_guards_no_global_of_its_keywords():
    import hop.numpy as hnp
    global x
    g = hop.compile(lambda a: hnp.where(condition=a > 3, x=a, y=0))
    a = np.arange(12.0).reshape(3, 4)
    for i in range(10):
        x = np.full(3, float(i))
        r = g(a)
        assert type(r) is hnp.ndarray  # (the call by name: a hop.numpy array, as eagerly)
        np.testing.assert_array_equal(np.asarray(r), np.where(a > 3, a, 0))
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
