"""Saved files of transformed programs, made hostile (the forty-fourth
session; docs/SAVED_FORMAT.md, docs/RELIABILITY.md "Untrusted input").

The saved-format fuzzer (fuzz_saved.py, test_saved_fuzz.py) mutates one
program per HOP and a few nestings; its transformed seeds are one grad, one
jvp and one vmap.  Here the seeds are compositions of the transformations,
each traced static and dynamic: vmap of grad through a cond, grad of grad,
jvp of grad (a Hessian-vector product), vmap of vmap with in_axes 1, grad
of vmap of a scan over a captured tensor, associative_scan under vmap with
in_axes and out_axes 1, and vmap of jvp of a data-dependent while_loop:
graphs of up to 13 subgraphs nested four deep, with the vjp, jvp and vmap
calls whose argument layouts (two graphs, masks) the random seeds reach
least.  On top of fuzz_saved's mutations (truncation, bit flips, limit
values, splices, hostile JSON), two that keep a file well formed byte-wise
but make it mean something else:

  rename   an op's or a HOP's name (a call_op's, a call_hop's, a node's) set
           to another op or HOP of another arity or layout, to the empty
           name, a 4,097-byte name, one holding a NUL, or one not UTF-8
  graphs   each subgraph argument of each call pointed at every other graph
           of the file (the root: a body containing its own caller; itself;
           a sibling's body; a grandchild) and at a graph past the table

Every mutant is loaded, printed and run in a child process with a time and
a memory limit (fuzz_saved._run_all) and must give a result or a hop.Error.
A subgraph argument pointed at another direct subgraph of the same graph
loads: it is a well-formed program (a call whose two bodies are one graph),
which runs; hop.load promises a clear error or a program, not the saved
program's answer.

Finding (fixed): the graph table's check named the stored parent field,
which is the parent's index + 1, as the parent: a graph saved as its own
parent read "graph 1 (vmap_body_0_vmap): parent 2 is not an earlier graph";
and a program that fails hop_graph_verify after all was read was reported
in the record read last, "load: sections: the program does not verify".
"""

import os
import random
import re

import pytest

import fuzz_saved
import hop
from budget import examples

pytestmark = pytest.mark.every_case

F64 = hop.float64


def _programs():
    x = hop.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=F64)
    y = hop.tensor([0.3, -0.2, 0.9], dtype=F64)
    w = hop.tensor([1.0, 2.0, -0.5], dtype=F64)

    def f(h, y):
        return hop.cond((h * y).sum() > 0, lambda: (h * w).sin() * y,
                        lambda: h.exp() / (y * y + 0.25)).sum()

    def grad_vmap_scan(X, y):
        def per_row(r):
            return hop.scan(lambda c, q: (c * q + y, c.sum()), r, X)[1].sum()
        return hop.grad(lambda Y: hop.vmap(per_row)(X * Y).sum())(y)

    def vmap_jvp_while(X, y):
        def loop(a):
            return hop.while_loop(lambda i, v: (i < 4).logical_and(v.abs().sum() < 50.0),
                                  lambda i, v: (i + 1, v * 1.5 + y), (0, a))[1]
        return hop.vmap(lambda r: hop.jvp(loop, (r,), (y,))[1])(X)

    return {
        "vmap_grad": (lambda X, y: hop.vmap(hop.grad(f), in_axes=(0, None))(X, y), (x, y)),
        "grad_grad": (lambda X, y: hop.grad(lambda a: hop.grad(f)(a, y).sum())(X[0]), (x, y)),
        "jvp_grad": (lambda X, y: hop.jvp(lambda v: hop.grad(f)(v, y), (X[0],), (y,))[1],
                     (x, y)),
        "vmap_vmap_axes": (lambda X, y: hop.vmap(hop.vmap(f, in_axes=(0, None)),
                                                 in_axes=(1, None))(hop.stack([X, X * 0.5], 1), y),
                           (x, y)),
        "grad_vmap_scan": (grad_vmap_scan, (x, y)),
        "vmap_ascan_axes": (lambda X, y: hop.vmap(
            lambda r: hop.associative_scan(lambda a, b: a * b, r), in_axes=1, out_axes=1)(X),
            (x, y)),
        "vmap_jvp_while": (vmap_jvp_while, (x, y)),
    }


@pytest.fixture(scope="module")
def seeds():
    if not os.environ.get("HOP_PYTHONPATH"):
        pytest.skip("HOP_PYTHONPATH is not set: the fuzzer's child loads the build tree")
    out = []
    for name, (fn, args) in _programs().items():
        for dynamic in (False, True):
            gm = hop.trace(fn, *args, dynamic=dynamic)
            out.append((name + ("_dyn" if dynamic else ""), fuzz_saved._dumps(gm), args))
    return out


def _run(seeds, mutants):
    """{outcome kind: count} of [(seed index, description, bytes)], and the
    failures: (description, outcome)."""
    outcomes = fuzz_saved._run_all([a for _, _, a in seeds], [(i, d) for i, _, d in mutants],
                                   fuzz_saved._child_env())
    counts, failures = {}, []
    for k, (_, desc, _) in enumerate(mutants):
        kind = outcomes[k].split(" ")[0]
        counts[kind] = counts.get(kind, 0) + 1
        if kind not in ("ok", "error", "memory", "slow"):
            failures.append((desc, outcomes[k][:400]))
    return counts, failures


def test_the_seeds_nest_the_transformations_calls(seeds):
    calls = {}
    for name, data, _ in seeds:
        gm = fuzz_saved._loads(data)
        code = gm.code + "".join(s.code for s in gm.subgraphs.values())
        calls[name] = {h for h in ("vjp", "jvp", "vmap") if f"= {h}(" in code}
        assert gm.subgraphs, name
    assert calls["vmap_grad"] == {"vmap", "vjp"} and calls["grad_grad"] == {"vjp"}
    assert calls["jvp_grad"] == {"jvp", "vjp"} and calls["vmap_jvp_while"] >= {"vmap", "jvp"}
    assert max(_graph_count(fuzz_saved.unwrap(d)) for _, d, _ in seeds) >= 13


def test_mutants_of_transformed_programs_give_a_result_or_a_hop_error(seeds):
    n = examples(800)
    report = fuzz_saved.campaign(n, rng_seed=44, batch=600, seeds=seeds)
    counts, failures = report["counts"], report["failures"]
    assert sum(counts.values()) == n
    assert not failures, "\n".join(f"{kind}: {desc}: {outcome[:300]}"
                                   for kind, _, desc, outcome, _ in failures[:10])
    assert counts.get("error", 0) > n // 2 and counts.get("ok", 0) > n // 50, counts


# ---------------------------------------------------------------- rename

_OPS = ("neg exp sin add mul div where sum matmul reshape transpose expand select slice cat "
        "stack full zeros item nonzero sym_size to sort take dynamic_slice put fail_if "
        "masked_sum linalg_inv fft bitcast mask_gradient").split()


def _name_sites(payload):
    """(start, end, name) of each length-prefixed op or HOP name in the
    program (before the sections)."""
    end = fuzz_saved._program_end(payload)
    out = []
    for name in set(_OPS) | set(hop._C.list_hops()):
        pat = bytes([len(name)]) + name.encode()
        out += [(m.start(), m.end(), name) for m in re.finditer(re.escape(pat), payload[:end])]
    return out


def _renamed(seeds, rng, n):
    names = _OPS + list(hop._C.list_hops())
    hostile = [b"", b"x" * 4097, b"cond\x00", b"\xff\xfe", b"vmap_body_0"]
    out = []
    while len(out) < n:
        i = rng.randrange(len(seeds))
        name, data, _ = seeds[i]
        p = fuzz_saved.unwrap(data)
        a, b, old = rng.choice(_name_sites(p))
        new = rng.choice(names).encode() if rng.random() < 0.85 else rng.choice(hostile)
        q = p[:a] + fuzz_saved.uvarint(len(new)) + new + p[b:]
        out.append((i, f"{name}: {old} at {a} -> {new[:20]!r}", fuzz_saved.wrap(q, data)))
    return out


def test_ops_and_hops_renamed_give_a_result_or_a_hop_error(seeds):
    n = examples(500)
    counts, failures = _run(seeds, _renamed(seeds, random.Random(44), n))
    assert not failures, failures[:10]
    assert sum(counts.values()) == n
    # most are refused; a same-arity op (sin -> exp) loads and runs
    assert counts.get("error", 0) > n // 3 and counts.get("ok", 0) > n // 20, counts


# ---------------------------------------------------------- graph arguments

def _skip_args(p, i, graphs):
    """The end of the args at p[i:] (docs/SAVED_FORMAT.md), appending each
    HOP_ARG_GRAPH's (start, end, graph) to graphs."""
    n, i = fuzz_saved.read_uvarint(p, i)
    for _ in range(n):
        kind = p[i]
        i += 1
        if kind in (1, 5, 8):  # node, SymInt, graph: a varint
            start = i
            v, i = fuzz_saved.read_uvarint(p, i)
            if kind == 8:
                graphs.append((start, i, v))
        elif kind == 2:  # int
            _, i = fuzz_saved.read_uvarint(p, i)
        elif kind == 3:  # float
            i += 8
        elif kind in (4, 6):  # bool, dtype
            i += 1
        elif kind == 7:  # list
            i = _skip_args(p, i, graphs)
        elif kind != 0:
            raise ValueError(kind)
    return i


def graph_arguments(payload):
    """[(start, end, graph index)] of every subgraph argument of every
    call_hop (found by its name, flags 0 and target: a call node is named
    after its HOP, `vmap`, `vmap_1`, ...)."""
    out = []
    for h in hop._C.list_hops():
        t = bytes([len(h)]) + h.encode()
        pat = re.escape(h.encode()) + rb"(_[0-9]+)?\x00" + re.escape(t)
        for m in re.finditer(pat, payload):
            if m.start() > 0 and payload[m.start() - 1] == len(m.group(0)) - len(t) - 1:
                _skip_args(payload, m.end(), out)
    return sorted(set(out))


def _graph_count(p):
    """The graph table's count (a one-byte varint before the root's name)."""
    at = p.find(b"\x07forward\x00") - 1
    assert p[at] < 0x80
    return p[at]


def _graph_mutants(seeds, every):
    out = []
    for i, (name, data, _) in enumerate(seeds):
        if not every and name.endswith("_dyn"):
            continue
        p = fuzz_saved.unwrap(data)
        ngraphs = _graph_count(p)
        for start, end, g in graph_arguments(p):
            for to in list(range(ngraphs)) + [ngraphs, 1 << 40]:
                if to != g:
                    q = p[:start] + fuzz_saved.uvarint(to) + p[end:]
                    out.append((i, f"{name}: graph argument {g} at {start} -> {to}",
                                fuzz_saved.wrap(q, data)))
    return out


def test_subgraph_arguments_pointed_at_every_graph_give_a_result_or_a_hop_error(seeds):
    mutants = _graph_mutants(seeds, every=examples(1) > 1)
    counts, failures = _run(seeds, mutants)
    assert not failures, failures[:10]
    # refused unless pointed at another direct subgraph of the same graph
    assert counts.get("error", 0) > len(mutants) * 0.8 and counts.get("ok", 0) > 0, counts


def _first_graph_argument(seeds, name):
    data = next(d for n, d, _ in seeds if n == name)
    p = fuzz_saved.unwrap(data)
    return data, p, graph_arguments(p)[0]


@pytest.mark.parametrize("to", [0, 2, 1 << 40])
def test_a_body_referring_to_a_graph_not_its_own_names_both(seeds, to):
    # the root's vmap call given the root itself (a body calling its own
    # caller), a grandchild, and a graph past the table
    data, p, (start, end, g) = _first_graph_argument(seeds, "vmap_grad")
    assert g == 1
    q = p[:start] + fuzz_saved.uvarint(to) + p[end:]
    with pytest.raises(hop.Error) as e:
        fuzz_saved._loads(fuzz_saved.wrap(q, data))
    assert type(e.value) is hop.Error
    at = start + len(fuzz_saved.uvarint(to))
    assert str(e.value) == (f"load: forward: argument 2 refers to graph {to}, not a subgraph of "
                            f"forward (at byte {at} of the payload)")


def _graph_table(p):
    """(offset of graph 1's parent field, graph 1's name)."""
    i = p.find(b"\x07forward\x00") + 9
    n = p[i]
    return i + 1 + n, p[i + 1:i + 1 + n].decode()


@pytest.mark.parametrize("stored, parent", [(2, 1), (3, 2), (14, 13), (200, 199)])
def test_a_graph_whose_parent_is_itself_or_later_names_the_parents_index(seeds, stored, parent):
    data = next(d for n, d, _ in seeds if n == "vmap_grad")
    p = fuzz_saved.unwrap(data)
    at, name = _graph_table(p)
    assert name == "vmap_body_0_vmap" and p[at] == 1
    q = p[:at] + fuzz_saved.uvarint(stored) + p[at + 1:]
    with pytest.raises(hop.Error) as e:
        fuzz_saved._loads(fuzz_saved.wrap(q, data))
    assert str(e.value) == (f"load: graphs: graph 1 (vmap_body_0_vmap): its parent, graph "
                            f"{parent}, is not an earlier graph (at byte "
                            f"{at + len(fuzz_saved.uvarint(stored))} of the payload)")


def test_a_subgraph_without_a_parent_and_a_root_with_one_are_named(seeds):
    data = next(d for n, d, _ in seeds if n == "grad_grad")
    p = fuzz_saved.unwrap(data)
    at, name = _graph_table(p)
    q = p[:at] + b"\x00" + p[at + 1:]
    with pytest.raises(hop.Error) as e:
        fuzz_saved._loads(fuzz_saved.wrap(q, data))
    assert str(e.value) == (f"load: graphs: graph 1 ({name}) has no parent: only the root, "
                            f"forward, has none (at byte {at + 1} of the payload)")
    root = p.find(b"\x07forward\x00") + 8
    q = p[:root] + b"\x01" + p[root + 1:]
    with pytest.raises(hop.Error) as e:
        fuzz_saved._loads(fuzz_saved.wrap(q, data))
    assert str(e.value) == ("load: graphs: graph 0 (forward): the root comes first, named "
                            f"forward, with no parent (at byte {root + 1} of the payload)")


def test_a_call_of_the_wrong_hop_fails_verification_named_as_such(seeds):
    # the root's vmap call renamed map (its arguments are vmap's): the whole
    # program's verification refuses it, reported as that, not as the
    # sections record the reader read last
    data = next(d for n, d, _ in seeds if n == "vmap_grad")
    p = fuzz_saved.unwrap(data)
    j = p.find(b"\x04vmap\x00\x04vmap") + 6
    q = p[:j] + b"\x03map" + p[j + 5:]
    with pytest.raises(hop.Error) as e:
        fuzz_saved._loads(fuzz_saved.wrap(q, data))
    msg = str(e.value)
    assert msg.startswith("load: all graphs: the program does not verify: verify: forward: "
                          "node vmap: map: "), msg
    assert msg.endswith(f"(at byte {len(q)} of the payload)"), msg


# ------------------------------------------------------ memory of a load

def _memory_child(n, rng_seed):
    """In a child: loads (only) n mutants; prints JSON [the largest
    bytes a load asked the C allocator for less 128 per byte of its file
    and 64 KiB (positive: over the bound), its description, the leaks of
    refused loads]."""
    import json
    import sys
    seeds = [(name + ("_dyn" if dyn else ""),
              fuzz_saved._dumps(hop.trace(fn, *args, dynamic=dyn)), args)
             for name, (fn, args) in _programs().items() for dyn in (False, True)]
    rng = random.Random(rng_seed)
    worst, leaks = (-1 << 62, ""), []
    for _ in range(n):
        _, _, desc, data = fuzz_saved.mutate(seeds, rng)
        live, asked = hop._C._alloc_live(), hop._C._alloc_bytes()
        try:
            fuzz_saved._loads(data)
            refused = False
        except hop.Error:
            refused = True
        over = hop._C._alloc_bytes() - asked - (128 * len(data) + 65536)
        worst = max(worst, (over, desc))
        if refused and hop._C._alloc_live() != live:
            leaks.append(desc)
    sys.stdout.write(json.dumps([worst[0], worst[1], leaks[:5]]))


def test_a_load_allocates_a_small_multiple_of_its_file_and_a_refused_one_frees_all(seeds):
    # docs/SAVED_FORMAT.md: counts are checked against the bytes left before
    # sizing an allocation.  Measured: a seed's load asks for 36-72 bytes a
    # byte of its file (its graphs, nodes, metadata, the ShapeEnv), and no
    # mutant more than its seed; bound 128 and 64 KiB.  Loads only: a
    # program's run may allocate what its (hostile) sizes say.
    import json
    import subprocess
    import sys
    code = ("import sys; sys.path.insert(0, %r); import test_load_hostile_s44 as m; "
            "m._memory_child(%d, 44)" % (os.path.dirname(os.path.abspath(__file__)),
                                         examples(400)))
    out = subprocess.run([sys.executable, "-c", code], env=fuzz_saved._child_env(),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    over, desc, leaks = json.loads(out.stdout)
    assert over <= 0, (over, desc)
    assert leaks == []
