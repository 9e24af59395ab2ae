"""Branch-local shape conditions (issue #12, item 3).

A guard found while tracing one cond branch must never reject inputs that
take the other branch.  Slices keep their sizes symbolic (`Min(s0, 4)`), so
they need no guard at all; any other condition a branch's tracing decides by
a hint stays with that branch and is checked only when it runs.  Each test
checks eager == hop.trace's GraphModule == hop.compile == NumPy.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples

import hop

# Under the sanitizers every parametrized case runs: each is a memory path of its own
# (budget.cases).
pytestmark = pytest.mark.every_case


def arange(n, sign=1.0):
    return (np.arange(n, dtype=np.float32) + 1.0) * np.float32(sign)


def run_all(fn, *args):
    """fn's result (or exception type) eagerly, as NumPy."""
    try:
        out = fn(*[hop.tensor(a) for a in args])
    except hop.Error as e:
        return type(e)
    return np.asarray(out)


def assert_same(got, want):
    if isinstance(want, type):
        assert got is want
    else:
        np.testing.assert_array_equal(np.asarray(got), want)
        assert np.asarray(got).dtype == want.dtype


# -------------------------------------------------------- the issue's example


def issue_fn(x, p):
    return hop.cond(p, lambda: x[:4], lambda: x * 2)


def issue_numpy(x, p):
    return x[:4] if p else x * 2


ISSUE_CODE = '''\
def forward(s0: "Sym(s0)", x: "f32[s0]", p: "bool[]"):
    def cond_true_0(s0: "Sym(s0)", x: "f32[s0]"):
        slice: "f32[Min(s0, 4)]" = slice(x, 0, None, 4, 1)
        return (slice,)

    def cond_false_0(s0: "Sym(s0)", x: "f32[s0]"):
        mul: "f32[s0]" = mul(x, 2)
        return (mul,)

    cond: "f32[u0]" = cond(p, cond_true_0, cond_false_0, (s0, x))
    getitem: "f32[u0]" = cond[0]
    sym_size: "Sym(u0)" = sym_size(getitem, 0)
    return (getitem,)
'''


def test_slice_in_a_branch_is_min_of_size_and_bound_with_no_guard():
    gm = hop.trace(issue_fn, arange(8), np.array(True), dynamic=True)
    assert gm.code == ISSUE_CODE
    assert gm.guards == []
    assert gm.subgraphs["cond_true_0"].guards == []
    assert gm.subgraphs["cond_false_0"].guards == []


@pytest.mark.parametrize("trace_size", [2, 4, 8])
def test_issue_example_runs_every_size_and_pred_traced_and_compiled(trace_size):
    gm = hop.trace(issue_fn, arange(trace_size), np.array(True), dynamic=True)
    cf = hop.compile(issue_fn, dynamic=True)
    for n in (2, 4, 8, 3, 9):
        for p in (True, False):
            x, pred = arange(n), np.array(p)
            want = issue_numpy(x, p)
            assert_same(run_all(issue_fn, x, pred), want)
            assert_same(gm(x, pred), want)
            assert_same(cf(hop.tensor(x), hop.tensor(pred)).numpy(), want)
    # one plan serves them all: nothing was guarded
    assert len(cf.graphs) == 1
    assert cf.recompiles == 0


# ------------------------------------------- slices with negative bounds, steps

SLICES = [
    (None, 4, None), (4, None, None), (-3, None, None), (None, -1, None), (1, -1, None),
    (-6, -1, None), (None, None, 2), (1, 7, 3), (-6, None, 2), (5, 3, None), (3, 5, None),
    (-2, 6, 2), (0, 100, 1), (-100, 2, None),
]


def sliced_fn(sl):
    def fn(x, p):
        return hop.cond(p, lambda: x[sl] * 3 + 1, lambda: x * 2)
    return fn


@pytest.mark.parametrize("bounds", SLICES, ids=lambda b: "x[%s:%s:%s]" % b)
def test_slices_with_negative_bounds_and_steps_in_a_branch_need_no_guard(bounds):
    sl = slice(*bounds)
    fn = sliced_fn(sl)
    gm = hop.trace(fn, arange(8), np.array(True), dynamic=True)
    assert gm.guards == []
    assert gm.subgraphs["cond_true_0"].guards == []
    cf = hop.compile(fn, dynamic=True)
    for n in range(2, 11):
        for p in (True, False):
            x, pred = arange(n), np.array(p)
            want = x[sl] * np.float32(3) + np.float32(1) if p else x * np.float32(2)
            assert_same(run_all(fn, x, pred), want)
            assert_same(gm(x, pred), want)
            assert_same(cf(hop.tensor(x), hop.tensor(pred)).numpy(), want)
    assert cf.recompiles == 0


def test_slice_sizes_print_as_min_and_max():
    def fn(x, p):
        return hop.cond(p, lambda: x[-6:-1].sum() + x[3:5].sum(), lambda: x.sum())
    gm = hop.trace(fn, arange(8), np.array(True), dynamic=True)
    code = gm.subgraphs["cond_true_0"].code
    assert 'slice: "f32[s0 - Max(0, s0 - 6) - 1]" = slice(x, 0, -6, -1, 1)' in code
    assert 'slice_1: "f32[-Min(s0, 3) + Min(s0, 5)]" = slice(x, 0, 3, 5, 1)' in code
    for n in (2, 3, 4, 6, 9):
        x = arange(n)
        want = np.float32(x[-6:-1].sum() + x[3:5].sum())
        assert gm(x, np.array(True)) == pytest.approx(want)


def test_top_level_slice_is_symbolic_too_so_one_plan_serves_every_size():
    cf = hop.compile(lambda x: x[1:5] * 2, dynamic=True)
    for n in (8, 2, 3, 6, 2):
        x = arange(n)
        np.testing.assert_array_equal(cf(hop.tensor(x)).numpy(), x[1:5] * 2)
    assert len(cf.graphs) == 1
    assert "f32[Min(s0, 5) - 1]" in cf.graphs[0].code


# -------------------------------------------- guards that stay with a branch

W4 = hop.tensor(np.full(4, 10, dtype=np.float32))


def guarded_fn(x, p):
    # x[:4] + W4 needs 4 rows: a guard Min(s0, 4) == 4, of the true branch only
    return hop.cond(p, lambda: x[:4] + W4, lambda: x * 2)


def test_a_guard_one_branch_needs_stays_with_that_branch():
    gm = hop.trace(guarded_fn, arange(8), np.array(True), dynamic=True)
    assert gm.guards == []
    assert gm.subgraphs["cond_true_0"].guards == ["Min(s0, 4) == 4"]
    assert gm.subgraphs["cond_false_0"].guards == []
    assert "    def cond_true_0(s0: \"Sym(s0)\", x: \"f32[s0]\", W4_true_branch: \"f32[4]\"):\n" \
           "        # guards: Min(s0, 4) == 4\n" in gm.code
    assert "graph cond_true_0 (in forward):\nguards: Min(s0, 4) == 4\n" in gm.tabular()
    assert "guards: Min(s0, 4) == 4" in gm.to_dot()


def test_inputs_taking_the_other_branch_are_not_rejected():
    gm = hop.trace(guarded_fn, arange(8), np.array(True), dynamic=True)
    x2 = arange(2)
    np.testing.assert_array_equal(gm(x2, np.array(False)), x2 * 2)
    np.testing.assert_array_equal(gm(arange(6), np.array(True)), arange(6)[:4] + 10)
    # the true branch on 2 rows: eager fails (2 vs 4 rows); the plan never
    # answers wrong, it says which branch's guard failed
    with pytest.raises(hop.ShapeError):
        guarded_fn(hop.tensor(x2), hop.tensor(True))
    with pytest.raises(hop.GuardError) as e:
        gm(x2, np.array(True))
    assert str(e.value) == ("guard Min(s0, 4) == 4 of cond_true_0 failed with s0 = 2: "
                            "cond_true_0 was traced assuming it")


def test_compile_retraces_on_a_branch_guard_and_raises_what_eager_raises():
    cf = hop.compile(guarded_fn, dynamic=True)
    np.testing.assert_array_equal(cf(hop.tensor(arange(8)), hop.tensor(True)).numpy(),
                                  arange(8)[:4] + 10)
    # the other branch with 2 rows runs on the same plan
    np.testing.assert_array_equal(cf(hop.tensor(arange(2)), hop.tensor(False)).numpy(),
                                  arange(2) * 2)
    assert cf.recompiles == 0
    # the guarded branch with 2 rows: the guard fails, the retrace meets the
    # error eager raises
    with pytest.raises(hop.ShapeError):
        cf(hop.tensor(arange(2)), hop.tensor(True))
    assert len(cf.graphs) == 1


def test_a_guard_both_branches_need_is_checked_on_entry():
    def fn(x, p):
        return hop.cond(p, lambda: x[:4] + W4, lambda: x[:4] * W4)
    gm = hop.trace(fn, arange(8), np.array(True), dynamic=True)
    assert gm.guards == ["Min(s0, 4) == 4"]
    assert gm.subgraphs["cond_true_0"].guards == []
    assert gm.subgraphs["cond_false_0"].guards == []
    with pytest.raises(hop.GuardError, match=r"^guard Min\(s0, 4\) == 4 failed with s0 = 3$"):
        gm(arange(3), np.array(False))


def test_python_size_decision_inside_a_branch_is_the_branchs_guard():
    def fn(x, p):
        def big():
            return x * 3 if x.shape[0] > 4 else x * 5
        return hop.cond(p, big, lambda: x - 1)
    gm = hop.trace(fn, arange(8), np.array(True), dynamic=True)
    assert gm.guards == []
    assert gm.subgraphs["cond_true_0"].guards == ["s0 > 4"]
    x3 = arange(3)
    np.testing.assert_array_equal(gm(x3, np.array(False)), x3 - 1)
    with pytest.raises(hop.GuardError):
        gm(x3, np.array(True))
    cf = hop.compile(fn, dynamic=True)
    for n, p in [(8, True), (3, False), (3, True), (8, True), (2, True)]:
        x = arange(n)
        want = (x * 3 if n > 4 else x * 5) if p else x - 1
        np.testing.assert_array_equal(cf(hop.tensor(x), hop.tensor(p)).numpy(), want)
    assert cf.recompiles == 1  # only (3, True) needed a new trace


def test_merged_output_equal_only_under_one_branchs_guard_takes_the_other_size():
    # the true branch gives f32[6] under its guard s0 == 6, the false one
    # f32[s0]: whichever runs, the result has s0 rows, so no unbacked size
    w6 = hop.tensor(np.full(6, 10, dtype=np.float32))

    def fn(x, p):
        return hop.cond(p, lambda: x + w6, lambda: x * 2) * 2
    gm = hop.trace(fn, arange(6), np.array(True), dynamic=True)
    assert gm.guards == []
    assert gm.subgraphs["cond_true_0"].guards == ["s0 == 6"]
    assert 'cond: "f32[s0]" = cond(' in gm.code
    assert 'mul: "f32[s0]" = mul(getitem, 2)' in gm.code
    np.testing.assert_array_equal(gm(arange(6), np.array(True)), (arange(6) + 10) * 2)
    np.testing.assert_array_equal(gm(arange(7), np.array(False)), arange(7) * 4)
    with pytest.raises(hop.GuardError, match="guard s0 == 6 of cond_true_0 failed with s0 = 7"):
        gm(arange(7), np.array(True))


# ------------------------------------------- nested: cond in map in cond


def nested_fn(xs, p):
    def row_fn(row):
        return hop.cond(row.sum() > 0, lambda: (row[:4] + W4).sum(), lambda: row.sum() * 2)
    return hop.cond(p, lambda: hop.map(row_fn, xs), lambda: xs[:, -2:].sum(1))


def nested_numpy(xs, p):
    if not p:
        return xs[:, -2:].sum(1)
    out = []
    for row in xs:
        if row.sum() > 0:
            if row.shape[0] < 4:
                return hop.ShapeError
            out.append((row[:4] + 10).sum())
        else:
            out.append(row.sum() * 2)
    return np.array(out, dtype=np.float32)


def test_nested_cond_inside_map_inside_cond_checks_the_innermost_branch_per_row():
    xs8 = np.stack([arange(8), arange(8, -1), arange(8)])
    # hop tensors inside (an ndarray would compute `row.sum() * 2` in f64, as
    # NumPy does, against the f32 of the other branch)
    gm = hop.trace(nested_fn, hop.asarray(xs8), hop.asarray(np.array(True)), dynamic=True)
    assert gm.guards == []
    outer_true = gm.subgraphs["cond_true_0"]
    assert outer_true.guards == []
    inner = outer_true.subgraphs["map_body_0"].subgraphs["cond_true_1"]
    assert inner.guards == ["Min(s1, 4) == 4"]
    cf = hop.compile(nested_fn, dynamic=True)
    for rows, cols in [(3, 8), (2, 2), (4, 3), (1, 5), (3, 4)]:
        for signs in ([1, -1, 1], [-1, -1, -1], [1, 1, 1]):
            xs = np.stack([arange(cols, signs[i % 3]) for i in range(rows)])
            for p in (True, False):
                want = nested_numpy(xs, p)
                assert_same(run_all(nested_fn, xs, np.array(p)), want)
                try:
                    got = cf(hop.tensor(xs), hop.tensor(p)).numpy()
                except hop.Error as e:
                    got = type(e)
                assert_same(got, want)
                if rows == 1:
                    continue  # a size 1 is specialised: another trace
                try:
                    got = gm(xs, np.array(p))
                except hop.GuardError:
                    # only the branch needing 4 columns may refuse, and only
                    # where eager fails too
                    assert want is hop.ShapeError and p
                    continue
                assert_same(got, want)


# ----------------------------------------- differential: random slices in branches

bound = st.one_of(st.none(), st.integers(-12, 12))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=bound, stop=bound, step=st.one_of(st.none(), st.integers(1, 4)),
       trace_n=st.integers(2, 12), sizes=st.lists(st.integers(2, 12), min_size=1, max_size=4),
       preds=st.lists(st.booleans(), min_size=1, max_size=4))
def test_random_slices_in_branches_agree_eager_trace_compile_numpy(start, stop, step, trace_n,
                                                                   sizes, preds):
    sl = slice(start, stop, step)

    def fn(x, p):
        return hop.cond(p, lambda: (x[sl] + 1) * 2, lambda: x - 3)

    gm = hop.trace(fn, arange(trace_n), np.array(preds[0]), dynamic=True)
    assert gm.guards == []
    cf = hop.compile(fn, dynamic=True)
    for n in sizes:
        for p in preds:
            x = arange(n)
            want = (x[sl] + np.float32(1)) * np.float32(2) if p else x - np.float32(3)
            assert_same(run_all(fn, x, np.array(p)), want)
            assert_same(gm(x, np.array(p)), want)
            assert_same(cf(hop.tensor(x), hop.tensor(p)).numpy(), want)
    assert cf.recompiles == 0
