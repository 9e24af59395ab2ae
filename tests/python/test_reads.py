"""The one walker of what a function reads (python/hop/_reads.py, issue #27):
its roots, its caches and the policies of its callers."""

import gc

import hop
from hop import _guards, _purity, _reads

SCALE = 2.0


def helper(v):
    return v * SCALE


def test_roots_are_cells_then_sorted_globals_then_defaults():
    k = 3

    def fn(x, d=5, *, e=6):
        return helper(x) + k + SCALE + d + e

    class All(_reads.Policy):
        defaults = True
    rs = _reads.roots(fn, All())
    assert [(kind, name) for kind, name, _, _ in rs] == [
        ("cell", "k"), ("global", "SCALE"), ("global", "helper"), ("default", 0),
        ("kwdefault", "e")]
    assert [r[3] for r in rs] == [3, 2.0, helper, 5, 6]


def test_an_empty_cell_is_a_root_only_when_the_policy_asks():
    def outer():
        def fn():
            return later  # noqa: F821  (assigned below, after fn is made)
        f = fn
        return f
        later = 1  # noqa: F841
    fn = outer()

    class Empty(_reads.Policy):
        empty_cells = True
    assert _reads.roots(fn, _reads.Policy()) == []
    assert _reads.roots(fn, Empty()) == [("cell", "later", fn.__closure__[0], _reads.MISSING)]


def test_a_hop_function_gives_its_cells_only_under_hop_cells():
    region = hop.nested_compile_region(helper)

    class Cells(_reads.Policy):
        hop_cells = True
    kinds = {r[0] for r in _reads.roots(region, Cells())}
    assert kinds == {"cell"}
    assert "global" in {r[0] for r in _reads.roots(region, _reads.Policy())}


def test_names_are_computed_once_per_code_object_and_not_kept_after_it(heap_frozen):
    # (compiled here, so that nothing but f holds the code object)
    make = eval(compile("lambda: lambda x: x.shape + SCALE", "<test>", "eval"), globals())
    f = make()
    n = _reads.names_of(f.__code__)
    assert n is _reads.names_of(make().__code__)  # another function, the same code
    assert n.set == {"shape", "SCALE"} and n.sorted == ("SCALE", "shape")
    key = id(f.__code__)
    assert key in _reads._names_cache
    del f, make, n
    gc.collect()
    assert key not in _reads._names_cache


def test_what_a_name_holds_is_read_on_every_walk_never_cached():
    box = [1.0]

    def body(v):
        box.append(1)
        return v

    check = _purity._Check()
    check.scan(body)
    assert [(n, v) for n, _, v in check.cells] == [("box", box)]
    box = [2.0]  # rebinding the cell: the next walk reads the new list  # noqa: F841
    check = _purity._Check()
    check.scan(body)
    assert check.cells[0][2] == [2.0]
    assert check.containers[0][1] is body.__closure__[0].cell_contents


def test_the_guards_walk_follows_user_functions_breadth_first_with_a_limit():
    fns = [lambda x: x]
    for _ in range(100):
        fns.append((lambda g: lambda x: g(x))(fns[-1]))
    s = _guards.scan(fns[-1])
    assert len(s.functions) == _guards._MAX_FUNCTIONS
    assert s.functions[:3] == [fns[-1], fns[-2], fns[-3]]


def test_the_print_search_stops_at_the_first_function_that_prints():
    def inner(x):
        print(x)
        return x

    def outer(x):
        return inner(x)

    where = _purity._print_site(outer)
    assert where is not None and where.startswith("test_reads.py:")
    assert _purity._print_site(helper) is None
