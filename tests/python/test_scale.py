"""Tracing costs that grow with the work, not faster (issue #30).

Each test stands for one scaling fix and fails if its cost turns superlinear
again.  Where the cost can be counted (functions the purity check scans) the
test counts; elsewhere it compares the time per unit of work at two sizes
ten or more times apart, in CPU time, in a serial test, with a bound between
the flat figure and the superlinear one (each bound's comment gives both),
and the best of a few runs, the two sizes taking turns, to ride out a busy
machine.  The sanitizer pass runs those sizes once and asserts no time
(assert_flat_per_unit says why); the plain pass asserts the bounds.
"""
import os
import sys
import time
import warnings

import pytest

import hop
from hop import _purity
from budget import full

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from workloads import best_cpu_ns, nested, repeated  # noqa: E402


def per_unit_ns(run_small, small, run_large, large, rounds=3):
    """(CPU ns per unit at the small size, at the large size): the least of
    `rounds` runs of each, the two sizes taking turns, so that a busy spell
    on the machine (a neighbour filling the shared cache, say) falls on both
    sizes rather than on all the runs of one."""
    run_small()  # warm up
    t_small = t_large = None
    for _ in range(rounds):
        # (each run on a trimmed heap: the small size would otherwise run in
        # pages the large one left, and only the large one pay page faults)
        s = best_cpu_ns(run_small, repeat=1, fresh_memory=True) / small
        t_small = s if t_small is None else min(t_small, s)
        g = best_cpu_ns(run_large, repeat=1, fresh_memory=True) / large
        t_large = g if t_large is None else min(t_large, g)
    return t_small, t_large


def assert_flat_per_unit(run_small, small, run_large, large, bound):
    """Asserts that a unit of work at the large size costs at most `bound`
    times what it costs at the small size (per_unit_ns).

    In the sanitizer pass (budget.full() is false) each size runs once, for
    ASan and UBSan to watch its paths, and nothing about time is asserted:
    there every block carries redzones and every freed block waits in ASan's
    quarantine, so the large size's working set is several times larger and
    its time per unit rises with the caches, by a factor that depends on the
    machine's caches, not on hop (the lifting test, flat in callgrind's count,
    measured 1.1-1.6x under ASan on one machine and 2.11x and 2.23x on the
    CI's, which failed two stops).  The plain pass of the same CI run asserts
    every bound."""
    if not full():
        run_small()
        run_large()
        return
    t_small, t_large = per_unit_ns(run_small, small, run_large, large)
    assert t_large <= bound * t_small, (t_small, t_large)


def wrap_call(x):
    return hop.wrap(lambda v: v + 1.0, x)


def cond_call(x):
    return hop.cond(x.sum() > 0, lambda v: v + 1.0, lambda v: v - 1.0, (x,))


@pytest.mark.serial
@pytest.mark.parametrize("make", [wrap_call, cond_call], ids=["wrap", "cond"])
def test_tracing_hop_calls_costs_the_same_per_call_at_ten_times_the_calls(make):
    # Each call adds subgraphs to the root graph: finding one by name (every
    # node name reserved, every subgraph installed, verification) scanned
    # them all, O(n^2) in all.
    x = hop.randn(16, seed=1)
    small, large = 300, 3000
    # 1.1-1.4x; 3.1x (wrap), 6.5x before
    assert_flat_per_unit(lambda: hop.trace(repeated(make, small), x), small,
                         lambda: hop.trace(repeated(make, large), x), large, 2.0)


def _count_scans(monkeypatch):
    """The list each purity scan appends its function to: a walk
    (_Check.scan) or the check of a body that is plain (_run_plain: no
    outer name it reads may be written, none holds a function to walk)."""
    scanned = []
    real, plain = _purity._Check.scan, _purity._run_plain

    def counting(self, fn):
        scanned.append(fn)
        return real(self, fn)

    def counting_plain(hop_name, which, fn, *rest):
        scanned.append(fn)
        return plain(hop_name, which, fn, *rest)
    monkeypatch.setattr(_purity._Check, "scan", counting)
    monkeypatch.setattr(_purity, "_run_plain", counting_plain)
    return scanned


def test_nested_bodies_are_each_scanned_once_by_the_purity_check(monkeypatch):
    # A body that only hands a function to a HOP leaves it to that HOP's own
    # run_pure: scanning it (and all it reaches) from every enclosing body
    # cost O(depth) per level.
    scanned = _count_scans(monkeypatch)
    depth = 40
    gm = hop.trace(nested(depth), hop.ones(3))
    # one scan per level's body; the innermost function (v + 1.0) reads no
    # cell and no global, so it has nothing to scan
    assert len(scanned) == depth - 1
    assert gm(hop.ones(3)).tolist() == [2.0, 2.0, 2.0]


def test_a_body_that_reads_no_cell_and_no_global_runs_without_a_snapshot(monkeypatch):
    # Such a body can change nothing outside itself that the check would
    # see, so run_pure calls it directly (a builtin it calls is no global
    # of its module); one that reads a global is scanned as before, with the
    # module's function it reaches.
    scanned = _count_scans(monkeypatch)
    gm = hop.trace(lambda x: hop.wrap(lambda v: abs(v) * 2.0, x), hop.ones(2))
    assert scanned == []
    assert gm(-hop.ones(2)).tolist() == [2.0, 2.0]
    hop.trace(lambda x: hop.wrap(lambda v: wrap_call(v), x), hop.ones(2))
    assert [f.__name__ for f in scanned] == ["<lambda>", "wrap_call"]


def _plain_runs(monkeypatch):
    """The list of bodies run_pure checks by its short path (_run_plain)."""
    runs = []
    real = _purity._run_plain

    def counting(hop_name, which, fn, *rest):
        runs.append(fn)
        return real(hop_name, which, fn, *rest)
    monkeypatch.setattr(_purity, "_run_plain", counting)
    return runs


def test_a_nested_body_rebinding_its_cell_is_an_error_on_the_short_check(monkeypatch):
    # A level of a nest reads a cell (the next level) and a global (hop):
    # no name it may write, so its check only records what they hold; a
    # rebinding is still the side-effect error, and the cell is put back.
    runs = _plain_runs(monkeypatch)
    inner = lambda v: v + 1.0  # noqa: E731
    hop.trace(lambda x: hop.wrap(lambda v: hop.wrap(inner, v), x), hop.ones(2))
    assert len(runs) == 1
    count = 0

    def rebinding(v):
        nonlocal count
        count = 1
        return v * 2.0
    with pytest.raises(hop.TraceError, match="the wrap body has a side effect: it rebinds the "
                       "nonlocal variable 'count'"):
        hop.trace(lambda x: hop.wrap(lambda v: hop.wrap(rebinding, v), x), hop.ones(2))
    assert count == 0
    assert len(runs) == 3  # the level and rebinding: both short


def test_a_nested_level_is_checked_in_c_with_the_short_checks_errors(monkeypatch):
    # A HOP's direct call runs the short check of a body with a cell in C
    # (python/_C/purity.c): no Python of the check for a level that changes
    # nothing, and on a rebinding the same error, the cell put back.
    rebound = []
    real = _purity._rebound

    def counting(cells, globs):
        rebound.append(len(cells) + len(globs))
        return real(cells, globs)
    monkeypatch.setattr(_purity, "_rebound", counting)
    f = nested(8)
    hop.trace(f, hop.ones(3))  # (a level's code analysed once, in Python)
    rebound.clear()
    gm = hop.trace(f, hop.ones(3))
    assert rebound == []
    assert gm(hop.ones(3)).tolist() == [2.0, 2.0, 2.0]
    count = 0

    def rebinding(v):
        nonlocal count
        count = 1
        return v * 2.0
    def level(v):
        return hop.wrap(rebinding, v)
    for _ in range(2):  # the second trace: both bodies' effects cached, the C path
        with pytest.raises(hop.TraceError, match="^hop.wrap: the wrap body has a side effect: "
                           "it rebinds the nonlocal variable 'count'; a body is traced once"):
            hop.trace(lambda x: hop.wrap(level, x), hop.ones(2))
        assert count == 0


def test_a_body_with_a_cell_that_raises_after_rebinding_a_global_restores_it_in_c():
    ns = {"hop": hop, "level": 1}
    exec("def make(k):\n"
         "    def body(v):\n"
         "        global level\n"
         "        level = k\n"
         "        raise KeyError('from the body')\n"
         "    return body\n", ns)
    body = ns["make"](2)
    for _ in range(2):  # the second trace: the body's effects cached, the C path
        with pytest.raises(KeyError, match="from the body"):
            hop.trace(lambda x: hop.wrap(body, x), hop.ones(2))
        assert ns["level"] == 1


def test_a_body_that_raises_after_rebinding_a_global_restores_it_on_the_short_check(
        monkeypatch):
    runs = _plain_runs(monkeypatch)
    ns = {"hop": hop, "level": 1}
    exec("def body(v):\n"
         "    global level\n"
         "    level = 2\n"
         "    raise KeyError('from the body')\n", ns)
    with pytest.raises(KeyError, match="from the body"):
        hop.trace(lambda x: hop.wrap(ns["body"], x), hop.ones(2))
    assert runs == [ns["body"]]
    assert ns["level"] == 1


def test_a_function_a_body_also_calls_is_still_scanned_for_side_effects():
    # The skip covers functions only passed to HOPs: one the body calls
    # itself is checked as before.
    log = []

    def helper(v):
        log.append(1)
        return v

    def f(x):
        return hop.wrap(lambda v: hop.wrap(helper, helper(v)), x)
    with pytest.raises(hop.TraceError, match=r"hop.wrap: the wrap body has a side effect: "
                                             r"it mutates 'log'"):
        hop.trace(f, hop.ones(2))
    assert log == []


def test_a_function_passed_to_a_hop_as_an_operand_is_still_scanned_for_side_effects():
    # Only a body's position counts: a function among the operands is
    # called by the branch, whose own check does not see it.
    log = []

    def helper(v):
        log.append(1)
        return v

    def f(x):
        return hop.wrap(lambda v: hop.cond(True, lambda v, h: h(v), lambda v, h: v,
                                           (v, helper)), x)
    with pytest.raises(hop.TraceError, match=r"hop.wrap: the wrap body has a side effect: "
                                             r"it mutates 'log'"):
        hop.trace(f, hop.ones(2))
    assert log == []


def test_a_body_passed_to_a_hop_is_checked_by_that_hop():
    state = {"n": 0}

    def inner(v):
        state["n"] += 1
        return v * 2.0

    def f(x):
        return hop.wrap(lambda v: hop.wrap(inner, v), x)
    with pytest.raises(hop.TraceError, match=r"it mutates 'state'"):
        hop.trace(f, hop.ones(2))
    assert state == {"n": 0}


@pytest.mark.serial
def test_lifting_captured_tensors_costs_the_same_per_capture_at_sixteen_times_as_many():
    # A wrap body lifting k captured tensors: the signature merge searched
    # all earlier lifts for each one, O(k^2).  Today the work per capture is
    # flat (callgrind: 36.5 K instructions at k = 2,000, 36.3 K at 16,000),
    # but the time per capture still rises with k through the caches: 1.55x
    # on the Xeon, 1.5-2.55x on a 2-core EPYC, where the bound of 2.1 failed
    # CI (2.11x, 2.23x, 2.17x) with the merge linear.  The merge's 2.7x
    # before was too near that for a time ratio here to tell them apart, so
    # tests/c/test_scale.c owns it now (lifting 100,000 values into one body
    # against 10,000, each over the time of making the values: 0.62-1.51x on
    # a loaded machine, 5.5x with the search put back, bound 4).
    # This test keeps a bound for what the Python side of a capture adds
    # (naming, guards, the lift's bookkeeping): a quadratic there at 16,000
    # captures would be tens of times the linear work.
    def program(k):
        caps = [hop.full((4,), float(i)) for i in range(k)]

        def body(v):
            for c in caps:
                v = v + c
            return v
        return lambda x: hop.wrap(body, x)
    small, large = 1000, 16000
    f_small, f_large = program(small), program(large)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "guarded by identity only"
        gm = hop.trace(program(50), hop.ones(4))
        assert gm(hop.ones(4)).tolist() == [1.0 + sum(range(50))] * 4
        # 1.5-2.55x (above)
        assert_flat_per_unit(lambda: hop.trace(f_small, hop.ones(4)), small,
                             lambda: hop.trace(f_large, hop.ones(4)), large, 3.5)


@pytest.mark.serial
def test_code_of_a_deep_nest_costs_time_in_proportion_to_its_text():
    # gm.code printed the table and the DOT text too (and describe made them
    # for every subgraph): 63 ns per byte of code; it is about 4.
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    try:  # (put back: a later test in the process counts on the usual limit)
        gm = hop.trace(nested(300), hop.ones(2))
    finally:
        sys.setrecursionlimit(old)
    t0 = time.thread_time()
    code = gm.code
    dt = time.thread_time() - t0
    assert code.count("def wrap_body_") == 300
    assert dt <= 25e-9 * len(code), (dt, len(code))  # 4 ns/byte; 63 before


def _count_verdicts(monkeypatch):
    """The list each computed purity verdict (a call summarised rather than
    taken from the cache) appends its callee to."""
    summarised = []
    real = _purity._call_summary

    def counting(call, fn, callee):
        summarised.append(callee)
        return real(call, fn, callee)
    monkeypatch.setattr(_purity, "_call_summary", counting)
    return summarised


def test_a_body_traced_again_with_the_same_callees_reuses_its_purity_verdict(monkeypatch):
    # The verdict (what the body may do to each outer name, which names it
    # only hands to HOPs) depends on the code and its callees only: a nested
    # body is traced on every level and summarising its calls each time was
    # most of its check.
    f = nested(8)
    x = hop.ones(3)
    hop.trace(f, x)
    summarised = _count_verdicts(monkeypatch)
    scanned = _count_scans(monkeypatch)
    gm = hop.trace(f, x)
    assert len(scanned) == 7  # every level is still scanned (its roots re-read)
    assert summarised == []   # but no call is summarised again
    assert gm(x).tolist() == [2.0, 2.0, 2.0]


def _op_program(kind):
    """A traced function whose wrap body calls op(data) with data an outer
    list, op a global, a cell or a class attribute of the body's module,
    and a setter rebinding op."""
    ns = {"hop": hop}
    exec(
        "data = []\n"
        "def push(a):\n"
        "    a.append(1)\n"
        "class K:\n"
        "    op = staticmethod(len)\n"
        "op = len\n"
        "def make():\n"
        "    op = len\n"
        "    def body(v):\n"
        "        " + {"global": "op(data)", "cell": "op(data)", "class": "K.op(data)"}[kind]
        + "\n        return v + 1.0\n"
        "    def rebind(new):\n"
        "        nonlocal op\n"
        "        op = new\n"
        "    return body, rebind\n"
        "def make_global():\n"
        "    def body(v):\n"
        "        op(data)\n"
        "        return v + 1.0\n"
        "    return body\n", ns)
    if kind == "global":
        body = ns["make_global"]()

        def rebind(new):
            ns["op"] = new
    else:
        body, rebind = ns["make"]()
        if kind == "class":
            def rebind(new):
                ns["K"].op = staticmethod(new)
    return (lambda x: hop.wrap(body, x)), rebind, ns


@pytest.mark.parametrize("kind", ["global", "cell", "class"])
def test_rebinding_a_called_function_from_pure_to_impure_is_caught_on_the_next_trace(kind):
    # A verdict cached for op = len (leaves data alone: no snapshot) must not
    # be reused once op is a function that mutates data: the write would be
    # silently dropped from the graph.
    f, rebind, ns = _op_program(kind)
    x = hop.ones(2)
    for _ in range(2):  # the second trace takes the cached verdict
        assert hop.trace(f, x)(x).tolist() == [2.0, 2.0]
    rebind(ns["push"])
    with pytest.raises(hop.TraceError, match=r"hop.wrap: the wrap body has a side effect: "
                                             r"it mutates 'data'"):
        hop.trace(f, x)
    assert ns["data"] == []  # restored
    rebind(len)  # and back: pure again
    assert hop.trace(f, x)(x).tolist() == [2.0, 2.0]


def test_subgraph_names_count_in_decimal_past_one_digit():
    # hop_output_graph_next_name writes "<prefix>_<n>" by hand (snprintf's
    # parsing was most of naming a HOP call's subgraph): 0, 9, 10, 100.
    gm = hop.trace(repeated(wrap_call, 101), hop.ones(2))
    assert list(gm.subgraphs) == [f"wrap_body_{i}" for i in range(101)]
    gm = hop.trace(repeated(cond_call, 11), hop.ones(2))
    assert sorted(gm.subgraphs) == sorted([f"cond_true_{i}" for i in range(11)] +
                                          [f"cond_false_{i}" for i in range(11)])
    assert gm(hop.ones(2)).tolist() == [12.0, 12.0]


def test_a_cached_purity_verdict_is_per_closure_and_per_code():
    # The verdict (with the per-root flags made from it) is cached on the
    # code object and reused while the calls resolve to the same objects:
    # a second function of the same code whose cell holds a mutating op,
    # and a function whose __code__ is replaced by code that mutates, must
    # each be checked afresh, not given the first function's verdict.
    data = []

    def push(a):
        a.append(1)

    def make(op):
        def body(v):
            op(data)
            return v + 1.0
        return body

    x = hop.ones(2)
    pure = make(len)
    for _ in range(2):  # the second trace takes the cached verdict
        gm = hop.trace(lambda v: hop.wrap(pure, v), x)
        assert gm(x).tolist() == [2.0, 2.0]
        assert list(gm.subgraphs) == ["wrap_body_0"]
    impure = make(push)
    assert impure.__code__ is pure.__code__
    with pytest.raises(hop.TraceError, match=r"hop.wrap: the wrap body has a side effect: "
                                             r"it mutates 'data'"):
        hop.trace(lambda v: hop.wrap(impure, v), x)
    assert data == []  # restored

    def make_other(op):
        def other(v):
            op(data)
            data.append(2)
            return v * 2.0
        return other
    body = make(len)
    assert hop.trace(lambda v: hop.wrap(body, v), x)(x).tolist() == [2.0, 2.0]
    body.__code__ = make_other(len).__code__  # the same cells (data, op), other code
    with pytest.raises(hop.TraceError, match=r"hop.wrap: the wrap body has a side effect: "
                                             r"it mutates 'data'"):
        hop.trace(lambda v: hop.wrap(body, v), x)
    assert data == []
    body.__code__ = pure.__code__  # back: pure again, the first graph
    gm = hop.trace(lambda v: hop.wrap(body, v), x)
    assert gm(x).tolist() == [2.0, 2.0]


# The direct path of a traced HOP call (_hops._direct, _C._call_direct): what
# the Python body wrapper of _apply did per body, done in C.

def test_a_cond_whose_branches_are_one_function_traces_it_as_each_branch():
    # The direct path tells the bodies apart by their names, not their
    # functions: one function is both branches.
    def f(v):
        return v * 2.0
    gm = hop.trace(lambda x: hop.cond(x.sum() > 0, f, f, (x,)), hop.ones(2))
    assert 'def cond_true_0(x: "f32[2]"):' in gm.code
    assert 'def cond_false_0(x: "f32[2]"):' in gm.code
    assert gm.code.count("mul(x, 2.0)") == 2
    assert gm(-hop.ones(2)).tolist() == [-2.0, -2.0]


def test_the_bodies_a_thread_runs_are_counted_inside_direct_calls_and_not_after():
    from hop import _C

    def inner(v):
        return v + 1.0, _C._in_body()

    def outer(v):
        return hop.wrap(inner, v), _C._in_body()

    seen = []
    hop.trace(lambda x: seen.append(hop.wrap(outer, x)) or x, hop.ones(2))
    ((_, inner_count), outer_count), = seen
    assert (outer_count, inner_count, _C._in_body()) == (1, 2, 0)

    def failing(v):
        raise KeyError("body")

    with pytest.raises(KeyError, match="body"):
        hop.trace(lambda x: hop.cond(x.sum() > 0, failing, failing, (x,)), hop.ones(2))
    assert _C._in_body() == 0


def test_direct_calls_return_structures_and_constants_as_their_bodies_do():
    def f(x):
        a, k = hop.wrap(lambda v: (v + 1.0, 3), x)
        t, n = hop.cond(x.sum() > 0, lambda v: (v, 1), lambda v: (-v, 2), (x,))
        return a * k + t * n
    gm = hop.trace(f, hop.ones(2))
    assert gm(hop.ones(2)).tolist() == [7.0, 7.0]
    assert gm(-hop.ones(2)).tolist() == [2.0, 2.0]
    assert f(-hop.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(hop.TraceError, match="different structures"):
        hop.trace(lambda x: hop.cond(x.sum() > 0, lambda v: v, lambda v: (v, v), (x,)),
                  hop.ones(2))
