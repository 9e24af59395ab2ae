"""The short purity check one level deeper (issue #30, trace_lower's cond
branch `lambda a, y: block(a, y)`): a body whose cell or global holds a
function the check walks is checked by reading roots alone when that
function's own verdict is plain and its callees are the verdict's
(python/_C/purity.c, walk_callee).  Whatever can change between calls (a
global or cell the called function reads, its __code__, its defaults, the
function itself) is read on every call, so the short check never answers
with a stale verdict: each test changes one of them after the verdict was
made and expects what the full check gives (the error, state put back)."""
import pytest

import hop
from hop import _purity


def _scans(monkeypatch):
    """The functions the full check walks (_Check.scan), in order."""
    scanned = []
    real = _purity._Check.scan

    def counting(self, fn):
        scanned.append(fn)
        return real(self, fn)
    monkeypatch.setattr(_purity._Check, "scan", counting)
    return scanned


def _module(src, **env):
    ns = {"hop": hop, **env}
    exec(src, ns)
    return ns


def _branch_of(block):
    return lambda x: hop.cond(x.sum() > 0, lambda a: block(a), lambda a: a - 1.0, (x,))


def test_a_body_calling_a_plain_function_it_closes_over_is_not_walked_again(monkeypatch):
    scanned = _scans(monkeypatch)
    ns = _module("SCALE = 2.0\n"
                 "def helper(v):\n"
                 "    return v * SCALE\n"
                 "def block(a):\n"
                 "    return helper(a) + 1.0\n")
    f = _branch_of(ns["block"])
    gm = hop.trace(f, hop.ones(2))
    assert [g.__name__ for g in scanned] == ["<lambda>", "block", "helper"]
    scanned.clear()
    code = gm.code
    gm = hop.trace(f, hop.ones(2))
    assert scanned == []  # the lambda, block and helper: read, not walked
    assert gm.code == code
    assert gm(hop.ones(2)).tolist() == [3.0, 3.0]


def test_a_global_the_called_function_rebinds_is_an_error_and_put_back(monkeypatch):
    scanned = _scans(monkeypatch)
    ns = _module("level = 1\n"
                 "def bump(v):\n"
                 "    global level\n"
                 "    level = 2\n"
                 "    return v\n"
                 "def block(a):\n"
                 "    return bump(a) * 2.0\n")
    f = _branch_of(ns["block"])
    for n in range(3):  # the first walks; then the roots are read
        with pytest.raises(hop.TraceError, match="^hop.cond: the true branch has a side effect: "
                           "it rebinds the global variable 'level'; a body is traced once"):
            hop.trace(f, hop.ones(2))
        assert ns["level"] == 1
        if n == 0:
            assert [g.__name__ for g in scanned] == ["<lambda>", "block", "bump"]
            scanned.clear()
    assert scanned == []


def test_a_cell_the_called_function_rebinds_is_an_error_and_put_back(monkeypatch):
    scanned = _scans(monkeypatch)
    ns = _module("def make():\n"
                 "    hits = 0\n"
                 "    def count():\n"
                 "        nonlocal hits\n"
                 "        hits = 1\n"
                 "    def block(a):\n"
                 "        count()\n"
                 "        return a + 1.0\n"
                 "    return block, lambda: hits\n")
    block, hits = ns["make"]()
    f = _branch_of(block)
    for _ in range(3):
        with pytest.raises(hop.TraceError, match="the true branch has a side effect: "
                           "it rebinds the nonlocal variable 'hits'"):
            hop.trace(f, hop.ones(2))
        assert hits() == 0
    assert [g.__name__ for g in scanned] == ["<lambda>", "block", "count"]


def test_rebinding_the_global_function_called_inside_between_traces_is_checked_anew(
        monkeypatch):
    scanned = _scans(monkeypatch)
    ns = _module("box = []\n"
                 "def helper(v):\n"
                 "    return v * 2.0\n"
                 "def block(a):\n"
                 "    return helper(a)\n")
    f = _branch_of(ns["block"])
    hop.trace(f, hop.ones(2))
    hop.trace(f, hop.ones(2))
    exec("def helper(v):\n"
         "    box.append(1)\n"
         "    return v * 3.0\n", ns)
    scanned.clear()
    for _ in range(2):
        with pytest.raises(hop.TraceError, match="the true branch has a side effect: it mutates "
                           r"'box' \(a list defined outside the body\)"):
            hop.trace(f, hop.ones(2))
        assert ns["box"] == []
    assert [g.__name__ for g in scanned] == ["<lambda>", "block", "helper"] * 2


def test_a_cell_of_the_called_function_rebound_to_a_writer_is_checked_anew(monkeypatch):
    scanned = _scans(monkeypatch)
    ns = _module("def make(box):\n"
                 "    f = max\n"
                 "    def block(a):\n"
                 "        f(box, box)\n"
                 "        return a * 2.0\n"
                 "    def set_f(g):\n"
                 "        nonlocal f\n"
                 "        f = g\n"
                 "    return block, set_f\n")
    box = [1]
    block, set_f = ns["make"](box)
    f = _branch_of(block)
    hop.trace(f, hop.ones(2))
    scanned.clear()
    hop.trace(f, hop.ones(2))
    assert scanned == []
    set_f(list.extend)  # block's callee: now one that writes its argument
    with pytest.raises(hop.TraceError, match=r"it mutates 'box' \(a list defined outside"):
        hop.trace(f, hop.ones(2))
    assert box == [1]
    assert [g.__name__ for g in scanned] == ["<lambda>", "block"]


def test_replacing_the_called_functions_code_is_checked_anew(monkeypatch):
    scanned = _scans(monkeypatch)
    ns = _module("box = []\n"
                 "def block(a):\n"
                 "    return a * 2.0\n"
                 "def writer(a):\n"
                 "    box.append(a)\n"
                 "    return a * 2.0\n")
    f = _branch_of(ns["block"])
    hop.trace(f, hop.ones(2))
    hop.trace(f, hop.ones(2))
    scanned.clear()
    ns["block"].__code__ = ns["writer"].__code__
    with pytest.raises(hop.TraceError, match=r"it mutates 'box' \(a list defined outside"):
        hop.trace(f, hop.ones(2))
    assert ns["box"] == []
    assert [g.__name__ for g in scanned] == ["<lambda>", "block"]


def test_a_changed_default_of_the_called_function_is_what_the_trace_uses(monkeypatch):
    scanned = _scans(monkeypatch)
    ns = _module("def block(a, scale=2.0):\n"
                 "    return a * scale\n")
    f = _branch_of(ns["block"])
    assert hop.trace(f, hop.ones(2))(hop.ones(2)).tolist() == [2.0, 2.0]
    scanned.clear()
    ns["block"].__defaults__ = (5.0,)
    assert hop.trace(f, hop.ones(2))(hop.ones(2)).tolist() == [5.0, 5.0]
    assert scanned == []  # a default is no root of the check (as the full check)


def test_a_recursive_called_function_is_read_once(monkeypatch):
    scanned = _scans(monkeypatch)
    ns = _module("def block(a, n=2):\n"
                 "    return a if n == 0 else block(a * 2.0, n - 1)\n")
    f = _branch_of(ns["block"])
    hop.trace(f, hop.ones(2))
    scanned.clear()
    assert hop.trace(f, hop.ones(2))(hop.ones(2)).tolist() == [4.0, 4.0]
    assert scanned == []
