"""The captures' sorting in C (python/_C/guard_scan.c, issue #30: per capture
of a trace): _C._guard_captures and _C._few_refs give what Guards' and
made_captures' Python loops give, and a trace's warning about unguarded
captures says what it said, in order, without the made ones."""

import sys
import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from hop import _C, _guards


def _python_sort(captures, tensors, views, made):
    """Guards.__init__'s loop, without the viewed and sourced cases' work:
    (made, unsourced, rest) by index, as _guard_captures gives them."""
    m, u, rest = [], [], []
    for i, t in enumerate(captures):
        if id(t) in tensors or (views and id(t) in views) or type(t) is not _C.Tensor or \
                _C._base(t) is not None:
            rest.append(i)
        elif made is not None and id(t) in made:
            m.append(i)
        else:
            u.append(i)
    return m, u, rest


def _captures():
    a = np.arange(4.0)
    viewed = hop.tensor([1.0])
    based = hnp.asarray(a)._tv if hasattr(hnp.asarray(a), "_tv") else hop.tensor([2.0])
    made, plain, sourced = hop.tensor([3.0]), hop.tensor([4.0]), hop.tensor([5.0])
    caps = [plain, sourced, made, viewed, based, "not a tensor", plain, made]
    tensors = {id(sourced): (sourced, [])}
    views = {id(viewed): a}
    return caps, tensors, views, {id(made)}


@pytest.mark.parametrize("views_none", [False, True])
@pytest.mark.parametrize("made_none", [False, True])
def test_the_captures_sorted_in_c_are_pythons(views_none, made_none):
    caps, tensors, views, made = _captures()
    views = None if views_none else views
    made = None if made_none else made
    got = _C._guard_captures(caps, tensors, views, made)
    assert got == _python_sort(caps, tensors, views, made)
    assert got[0] == ([] if made_none else [2, 7])
    assert got[1] == sorted([0, 6] + ([2, 7] if made_none else []) + ([3] if views_none else []))
    assert got[2] == [1] + ([] if views_none else [3]) + [4, 5]


def test_the_captures_sort_checks_its_arguments():
    with pytest.raises(TypeError, match="views must be a dict or None and made a set or None"):
        _C._guard_captures([], {}, [], None)
    with pytest.raises(TypeError, match="views must be a dict or None and made a set or None"):
        _C._guard_captures([], {}, None, [1])
    with pytest.raises(TypeError):
        _C._guard_captures((), {}, None, None)


def test_few_refs_in_c_counts_what_getrefcount_counts():
    held = hop.tensor([1.0])
    caps = [hop.tensor([2.0]), held, hop.tensor([3.0]), hop.tensor([4.0])]
    views = {id(caps[3]): None}
    keep = list(caps)  # (a second reference to each: what the trace's kept dict is)
    expected = [caps.index(t) for t in caps  # (as made_captures' loop counts: no enumerate tuple)
                if sys.getrefcount(t) <= 4 + (id(t) in views)]
    got = _C._few_refs(caps, views)
    assert got == expected == [0, 2, 3]
    del keep


def test_made_captures_gives_what_its_python_loop_gives(monkeypatch):
    caps = [hop.tensor([2.0]), hop.tensor([1.0]), hop.tensor([3.0])]
    keep = list(caps)  # (the trace's second reference)
    user = caps[1]  # the user holds this one
    in_c = _guards.made_captures(caps, {})
    monkeypatch.setattr(_C, "_few_refs", lambda caps, views: range(len(caps)))
    assert _guards.made_captures(caps, {}) == in_c == {id(caps[0]), id(caps[2])}
    del keep, user


def test_the_unguarded_warning_lists_unsourced_captures_in_order_not_made_ones():
    caps = [hop.full((4,), float(i)) for i in range(20)]  # 20 items: identity only
    w = hop.full((4,), 0.5)

    def f(x):
        x = x * w + hop.tensor(1.0)  # w: a global's, sourced; hop.tensor(1.0): made
        for c in caps:
            x = x + c
        return x
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        gm = hop.trace(f, hop.ones(4))
    text = str([r for r in rec if issubclass(r.category, RuntimeWarning)][0].message)
    assert "made by the function itself" not in text
    names = gm._call.capture_names
    # (one line for the run of 20: one a capture made a message of hundreds
    # of KB for a loop over thousands)
    lines = [f"captured inputs 2-21 ({names[2]} ... {names[21]}, 20 tensors): source not found, "
             f"guarded by identity only (the tensor objects of the trace are used every call)"]
    skipped = ("closure cell 'caps': a list of 20 items (more than 16), guarded by identity and "
               "length, its items not guarded")
    assert text == (f"hop: {f.__qualname__} reads values that hop can guard by identity only, so a "
                    f"change inside them is not seen by this trace: " + "; ".join(lines + [skipped]))
    g = gm._call.guards
    assert g.made == [1] and g.unsourced == list(range(2, 22))
    assert g.describe(names)[-1].endswith(_guards.MADE)
    assert gm(hop.ones(4)).tolist() == f(hop.ones(4)).tolist()


def test_the_unguarded_warning_gives_each_run_of_unsourced_captures_one_line():
    # two runs of a list's captures around a global's (sourced) and a single
    # one: a line a run, the single one as before (explain() says the same)
    caps = [hop.full((4,), float(i)) for i in range(40)]
    w, w2 = hop.full((4,), 0.5), hop.full((4,), 2.0)

    def f(x):
        for c in caps[:17]:
            x = x + c
        x = x * w
        for c in caps[17:34]:
            x = x + c
        x = x * w2 + caps[39]
        return x
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        gm = hop.trace(f, hop.ones(4))
    text = str([r for r in rec if issubclass(r.category, RuntimeWarning)][0].message)
    names = gm._call.capture_names
    assert gm._call.guards.unsourced == list(range(0, 17)) + list(range(18, 35)) + [36]
    lines = [f"captured inputs 0-16 ({names[0]} ... {names[16]}, 17 tensors): source not found, "
             f"guarded by identity only (the tensor objects of the trace are used every call)",
             f"captured inputs 18-34 ({names[18]} ... {names[34]}, 17 tensors): source not "
             f"found, guarded by identity only (the tensor objects of the trace are used every "
             f"call)",
             f"captured input 36 ({names[36]}): source not found, guarded by identity only (the "
             f"tensor object of the trace is used every call)"]
    assert text.startswith(f"hop: {f.__qualname__} reads values that hop can guard by identity "
                           f"only, so a change inside them is not seen by this trace: " +
                           "; ".join(lines) + "; ")
    assert text.count("captured input") == 3
    assert gm(hop.ones(4)).tolist() == f(hop.ones(4)).tolist()
