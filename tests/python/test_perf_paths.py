"""The fast paths the benchmarks rely on (issue #7) give the same results as
the general ones: long elementwise chains fuse into full groups, a compiled
call on plain tensors skips flattening, the pytree helpers make no reference
cycles (so a plan can reuse its output buffer), GraphModules describe
themselves lazily."""
import gc
import os
import sys

import numpy as np
import pytest

import hop

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from np_programs import np_mandelbrot  # noqa: E402
from workloads import chain_fn  # noqa: E402


def fused_steps(dump):
    """The step count (p3) of every Fused instruction of a plan dump."""
    return [int(line.split()[4]) for line in dump.splitlines()
            if len(line.split()) > 1 and line.split()[1] == "Fused"]


def test_a_152_op_chain_lowers_into_groups_of_at_most_64_filled_from_the_output():
    # (64 steps a group since issue #30; 16 before)
    x, y = hop.randn(16, seed=1), hop.randn(16, seed=2)
    gm = hop.trace(chain_fn(152), x, y)
    assert fused_steps(gm.plan.dump()) == [24, 64, 64]
    np.testing.assert_array_equal(gm(x, y).numpy(), chain_fn(152)(x, y).numpy())


def test_a_1000_op_chain_lowers_into_16_groups_and_matches_eager_exactly():
    x, y = hop.randn(16, seed=3), hop.randn(16, seed=4)
    gm = hop.trace(chain_fn(1000), x, y)
    steps = fused_steps(gm.plan.dump())
    assert steps == [1000 - 15 * 64] + [64] * 15
    np.testing.assert_array_equal(gm(x, y).numpy(), chain_fn(1000)(x, y).numpy())


def test_a_tree_of_sums_past_64_members_splits_as_the_walk_finds_room():
    # 60 leaves x*k + y summed pairwise: one walk from the output overflows
    # with operands left out on both sides, so a cut group is walked again;
    # a chain's cut only drops its deepest member (lowering/fuseplan.c
    # hop__plan_fusion).  The groups are what they were before that shortcut.
    def tree(x, y):
        vals = [x * float(k) + y for k in range(60)]
        while len(vals) > 1:
            odd = vals[len(vals) - len(vals) % 2:]
            vals = [vals[j] + vals[j + 1] for j in range(0, len(vals) - 1, 2)] + odd
        return vals[0]
    x, y = hop.randn(16, seed=1), hop.randn(16, seed=2)
    gm = hop.trace(tree, x, y)
    assert fused_steps(gm.plan.dump()) == [2, 2, 1, 2, 5, 5, 11, 23, 64, 64]
    np.testing.assert_array_equal(gm(x, y).numpy(), tree(x, y).numpy())


def test_compiled_call_on_tensors_and_on_numpy_arrays_give_the_same_values():
    # (NumPy code: ndarray arguments have NumPy's semantics, and retrace)
    f = hop.compile(lambda a, b: np.maximum(a * b + 1.0, 0.0))
    a, b = hop.randn(4, 16, seed=5), hop.randn(16, seed=6)
    fast = f(a, b)
    assert isinstance(fast, hop.Tensor)
    general = f(a.numpy(), b.numpy())
    assert isinstance(general, np.ndarray) and f.recompiles == 1
    np.testing.assert_array_equal(fast.numpy(), general)
    np.testing.assert_array_equal(general, np.maximum(a.numpy() * b.numpy() + 1.0, 0))


def test_compiled_call_with_a_structured_result_keeps_its_structure():
    f = hop.compile(lambda a: {"double": a * 2.0, "pair": (a + 1.0, 3)})
    a = hop.arange(4, dtype=hop.float32)
    r = f(a)
    assert sorted(r) == ["double", "pair"]
    assert r["double"].numpy().tolist() == [0.0, 2.0, 4.0, 6.0]
    assert r["pair"][0].numpy().tolist() == [1.0, 2.0, 3.0, 4.0]
    assert r["pair"][1] == 3


def test_compiled_call_rejects_a_proxy_through_the_fast_path():
    f = hop.compile(lambda a: a + 1.0)
    f(hop.zeros(3))
    runner = f._entries[0].runner

    def g(x):
        return runner(x)
    with pytest.raises(TypeError, match=r"plan input 0 \(a\) must be a concrete hop.Tensor"):
        hop.trace(g, hop.zeros(3))


def test_flatten_and_unflatten_leave_no_reference_cycle_holding_the_leaves():
    from hop._pytree import flatten, unflatten
    leaf = hop.zeros(2)
    before = sys.getrefcount(leaf)
    enabled = gc.isenabled()
    gc.disable()
    try:
        leaves, spec = flatten(({"k": [leaf, None]}, 1))
        rebuilt = unflatten(leaves, spec)
        assert rebuilt[0]["k"][0] is leaf and rebuilt[1] == 1
        del leaves, rebuilt
        assert sys.getrefcount(leaf) == before
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("numpy_args", [False, True])
def test_a_compiled_plan_reuses_its_released_output_buffer(numpy_args):
    f = hop.compile(lambda a, b: a + b)
    a, b = hop.ones(1024), hop.full([1024], 2.0)
    args = (a.numpy(), b.numpy()) if numpy_args else (a, b)
    enabled = gc.isenabled()
    gc.disable()
    try:
        addresses = []
        for _ in range(3):
            r = f(*args)
            addresses.append(np.asarray(r).__array_interface__["data"][0])
            assert np.asarray(r)[0] == 3.0
            del r
        assert addresses[1] == addresses[2]
    finally:
        if enabled:
            gc.enable()


def test_graph_module_attributes_are_described_on_first_use():
    def f(x):
        return hop.wrap(lambda v: v.sin(), x)
    gm = hop.trace(f, hop.randn(3, seed=7))
    assert gm._cache == {}
    assert gm.name == "forward"
    assert list(gm.subgraphs) == ["wrap_body_0"]
    assert [n.op for n in gm.subgraphs["wrap_body_0"].graph.nodes] == [
        "placeholder", "call_op", "output"]
    assert gm.graph is gm.graph


INT64_EDGES = [0, 1, -1, 7, -7, 2**62, -2**62, 2**63 - 1, -2**63]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "maximum", "minimum",
                                "eq", "ne", "lt", "le", "gt", "ge"])
def test_one_element_int64_steps_computed_inline_match_numpy_and_eager(op):
    """A one-step group over 0-d int64 operands (a loop counter, a trip
    test) runs inline in the fused runner; it wraps like the vector kernels
    and NumPy, and compares like them, also against a constant."""
    npf = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
           "minimum": np.minimum, "eq": np.equal, "ne": np.not_equal, "lt": np.less,
           "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}[op]

    def f(a, b):
        return getattr(a, op)(b) if op in ("maximum", "minimum") else {
            "add": a + b, "sub": a - b, "mul": a * b, "eq": a == b, "ne": a != b,
            "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]

    def g(a):
        return f(a, hop.tensor(5)) if op in ("maximum", "minimum") else f(a, 5)
    cf, cg = hop.compile(f), hop.compile(g)
    with np.errstate(over="ignore"):
        for x in INT64_EDGES:
            for y in INT64_EDGES:
                a, b = hop.tensor(x), hop.tensor(y)
                want = npf(np.int64(x), np.int64(y))
                got = cf(a, b)
                assert got.dtype == (hop.bool if want.dtype == np.bool_ else hop.int64)
                assert got.item() == want.item() == f(a, b).item(), (op, x, y)
            assert cg(hop.tensor(x)).item() == npf(np.int64(x), np.int64(5)).item()
    assert "Fused" in hop.trace(f, hop.tensor(1), hop.tensor(2)).plan.dump()


def test_the_bound_numpy_call_runs_ndarrays_and_leaves_other_arguments_to_the_general_path():
    f = hop.compile(lambda a, b: a * b + 1.0)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 2.0, np.float32)
    got = f(a, b)
    assert type(got) is np.ndarray and got.dtype == np.float32 and got.flags.writeable
    np.testing.assert_array_equal(got, a * b + 1.0)
    fast = f._entries[0].runner.fast
    np.testing.assert_array_equal(fast((a, b)), a * b + 1.0)
    assert fast((a, hop.asarray(b))) is NotImplemented and fast((a,)) is NotImplemented
    # Arrays hop.asarray copies (read-only, negative strides) or shares with
    # other strides (Fortran order): the same values as NumPy's.
    ro = b.copy()
    ro.flags.writeable = False
    for x, y in ((a, ro), (a, b[:, ::-1]), (np.asfortranarray(a), b)):
        np.testing.assert_array_equal(f(x, y), x * y + 1.0)
    assert not ro.flags.writeable and f.recompiles == 0
    # A 0-d result is a NumPy scalar; a view of an argument shares its memory.
    s = hop.compile(lambda a: (a * 2.0).sum())(a)
    assert type(s) is np.float32 and s == 30.0
    v = hop.compile(lambda a: a.T)(a)
    assert np.shares_memory(v, a) and v.tolist() == a.T.tolist()


def test_small_f32_matmuls_agree_with_float64_and_do_not_depend_on_the_thread_count():
    rng = np.random.default_rng(3)
    before = hop.get_num_threads()
    try:
        for n, k, m in ((16, 16, 32), (16, 32, 8), (5, 7, 3), (33, 9, 17), (64, 64, 16)):
            a = rng.standard_normal((n, k)).astype(np.float32)
            b = rng.standard_normal((k, m)).astype(np.float32)
            want = a.astype(np.float64) @ b.astype(np.float64)
            outs = []
            for threads in (1, 2):
                hop.set_num_threads(threads)
                outs.append((hop.asarray(a) @ hop.asarray(b)).numpy())
                np.testing.assert_allclose(outs[-1], want, rtol=1e-5, atol=1e-5 * k)
            assert np.array_equal(outs[0], outs[1])
            # a strided (transposed) left operand: the same kernel, the same bits
            at = np.ascontiguousarray(a.T).T
            assert np.array_equal((hop.asarray(at) @ hop.asarray(b)).numpy(), outs[0])
    finally:
        hop.set_num_threads(before)


def matmul_forms(dtype):
    """(name, lhs, rhs) over every way runtime/matmul.c splits a product:
    whole matrices, gemm blocks of rows and of columns, batches, gemv blocks,
    gemv read transposed (gemv_t), a row of a batch, complex gemm."""
    rng = np.random.default_rng(41)

    def r(*shape):
        return rng.standard_normal(shape).astype(dtype)

    x, w, v = r(1000, 1000), r(1000), r(1000)
    yield "64x64 @ 64x64", r(64, 64), r(64, 64)
    yield "128 cube", r(128, 128), r(128, 128)
    yield "300x200 @ 200x300", r(300, 200), r(200, 300)
    yield "tall 5000x64 @ 64x64", r(5000, 64), r(64, 64)
    yield "wide 64x1024 @ 1024x2048", r(64, 1024), r(1024, 2048)
    yield "batch 3x200x100 @ 100x200", r(3, 200, 100), r(100, 200)
    yield "transposed lhs", r(400, 300).T, r(400, 300)
    yield "X @ w", x, w
    yield "w @ X", w, x
    yield "X.T @ v", x.T, v
    yield "w @ X.T", w, x.T
    yield "rows of a batch", r(3, 1, 1000), x.T
    yield "600x600 @ 600", r(600, 600), r(600)
    # narrow products read transposed: 4 chains a column, 2, and 1 with a
    # last unit of 6 columns
    yield "X.T @ v, 12 columns", r(40000, 12).T, r(40000)
    yield "v @ X, 24 columns", r(30000), r(30000, 24)
    yield "X.T @ v, 70 columns", r(10000, 70).T, r(10000)
    yield "complex", (r(300, 200) + 1j * r(300, 200)), (r(200, 300) - 1j * r(200, 300))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_matmul_form_gives_one_threads_bits_on_two_and_three_threads(dtype):
    # OpenBLAS's gemm gives a row bits that depend on the rows of its call
    # (f32 on Zen: almost any change of M), and its sgemv reading a matrix
    # transposed bits that depend on the columns of its call: matmul.c once
    # sized its calls by the pieces, so a 64 x 64 product gave 770 of its
    # 4,096 elements other bits on two threads, and w @ X 11 of 1,000.
    before = hop.get_num_threads()
    try:
        for name, a, b in matmul_forms(dtype):
            outs = []
            for threads in (1, 2, 3):
                hop.set_num_threads(threads)
                outs.append((hop.asarray(a) @ hop.asarray(b)).numpy())
            rtol = 1e-4 if dtype == np.float32 else 1e-10
            want = np.asarray(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64) @ b
            np.testing.assert_allclose(outs[0], want, rtol=rtol, atol=rtol * 30, err_msg=name)
            for o in outs[1:]:
                assert o.dtype == outs[0].dtype and np.array_equal(o, outs[0]), name
    finally:
        hop.set_num_threads(before)


def test_an_eager_map_gives_equal_rows_one_threads_bits_and_the_compiled_maps():
    # An eager map's rows ran their matmul on a pool thread whole, or on the
    # caller split in pieces: equal rows came out 5.9265747 or 5.9266663.
    xs = hop.randn(1, 64, 64, seed=2).expand(4, 64, 64)
    w = hop.randn(64, 64, seed=3)

    def body(r):
        return ((r @ w).tanh() @ w).sum()

    before = hop.get_num_threads()
    try:
        hop.set_num_threads(1)
        one = body(xs[0]).item()
        for threads in (1, 2):
            hop.set_num_threads(threads)
            rows = hop.map(body, xs).numpy()
            assert rows.tolist() == [one] * 4, (threads, rows.tolist())
            compiled = hop.compile(lambda xs: hop.map(body, xs))(xs).numpy()
            assert compiled.tolist() == [one] * 4, (threads, compiled.tolist())
            mm = hop.map(lambda r: r @ w, xs).numpy()
            assert all(np.array_equal(m, mm[0]) for m in mm), threads
    finally:
        hop.set_num_threads(before)


def test_dot_and_gemv_pieces_give_the_same_bits_on_every_thread_count():
    # a dot product's units and a gemv's blocks of 64 rows (columns) are the
    # pool's pieces at more than one thread: the bits are the one-thread ones
    rng = np.random.default_rng(29)
    x, w = rng.standard_normal((1000, 700)), rng.standard_normal(700)
    v, u = rng.standard_normal(1 << 18), rng.standard_normal(1 << 18)
    progs = {"dot": (lambda a, b: np.dot(a, b), (v, u)), "gemv": (lambda x, w: x @ w, (x, w)),
             "w @ X": (lambda w, x: w @ x, (x[:, 0], x)),
             "X.T @ w": (lambda x, w: x.T @ w, (x, x[:, 0]))}
    before = hop.get_num_threads()
    try:
        for name, (f, args) in progs.items():
            c = hop.compile(f)
            outs = []
            for threads in (1, 2, 3):
                hop.set_num_threads(threads)
                outs.append(np.asarray(c(*args)))
            np.testing.assert_allclose(outs[0], f(*args), rtol=1e-12, err_msg=name)
            assert all(np.array_equal(o, outs[0]) for o in outs[1:]), name
    finally:
        hop.set_num_threads(before)


def test_an_unrolled_count_of_comparisons_keeps_each_conversion_in_its_adds_group():
    # The 20 adds of count = count + inside form one chain whose right
    # operands, to(inside, i32), absorb nothing: too many inputs for one
    # group.  Cutting the chain leaf by leaf made every conversion a group
    # of its own (an i32 array through memory each step) and left seven adds
    # to a last group, holding seven of those arrays live to the end (the
    # plan's block 43 MB at 1M elements); cutting the chain's bottom keeps
    # each conversion inside its add (lowering/fuseplan.c cut_member).
    re, im = np.meshgrid(np.linspace(-2, 1, 64), np.linspace(-1.5, 1.5, 48))
    cre, cim = re.astype(np.float32), im.astype(np.float32)
    cf = hop.compile(np_mandelbrot)
    got = cf(cre, cim)
    want = np_mandelbrot(cre, cim)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    groups = [line.split()[5] for line in cf._entries[0].runner.plan.dump().splitlines()
              if len(line.split()) > 5 and line.split()[1] == "Fused"]
    assert not [g for g in groups if g.startswith("to(")], groups
    # 3 groups of adds (7, 7 and 6 adds with their conversions, 8 inputs at
    # most), not 14 (13 of one add and its conversion, then the last 7):
    # a cut fills the group's inputs (lowering/fuseplan.c fill_cut)
    assert sum(g.startswith("add(") for g in groups) == 3


@pytest.mark.parametrize("n", [131071, 131072, 262147, 1 << 20, (1 << 22) + 5])
def test_fused_groups_split_over_two_threads_give_one_threads_bits(n):
    # runtime/fused_exec.c splits a group of >= 2 x 65,536 units into pieces
    # (at least 8 a thread, ~2^19 units each, none under 32,768) that the
    # pool's threads claim: every size around those bounds gives the bits of
    # one thread, which are NumPy's for the exact ops
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    y = np.roll(x, 5)
    x[::97] = np.nan
    fns = {"exp": lambda a, b: (a * 2 + 1).relu().exp(),
           "add": lambda a, b: a + b,
           "where": lambda a, b: hop.where(a < b, a * b, a - b),
           "i32": lambda a, b: (a < b).to(hop.int32) + (a > 0).to(hop.int32) * 3,
           "rows": lambda a, b: a.reshape(-1, 1) * b[:1] + a.reshape(-1, 1)}
    exact = {"add": x + y, "where": np.where(x < y, x * y, x - y),
             "i32": (x < y).astype(np.int32) + (x > 0).astype(np.int32) * 3,
             "rows": x.reshape(-1, 1) * y[:1] + x.reshape(-1, 1)}
    hx, hy = hop.asarray(x), hop.asarray(y)
    before = hop.get_num_threads()
    try:
        for name, f in fns.items():
            c = hop.compile(f)
            outs = []
            for threads in (1, 2, 2, 2, 1, 2):  # a new kind's first jobs take the pool
                hop.set_num_threads(threads)
                outs.append(c(hx, hy).numpy().tobytes())
            assert all(o == outs[0] for o in outs), (name, n)
            if name in exact:
                assert outs[0] == exact[name].tobytes(), (name, n)
    finally:
        hop.set_num_threads(before)


def test_groups_over_the_input_limit_are_cut_where_their_inputs_are_full():
    # Fusion planning takes a cut member and what it absorbs out of the walk
    # it has (drop_subtree) instead of walking the group again, and cuts a
    # group with too many inputs where what stays fills them (fill_cut,
    # issue #30): a chain of adds over captures is 3 groups of 6-7 adds (8
    # before: 7 of 2 adds, then 6), a tree of them 3 groups (6), and a chain
    # whose adds each absorb a small tree 4 groups of 3 adds with their trees
    # (16: 15 of one tree, then 6 adds), with the same results as eager.
    caps = [hop.full((4,), float(i)) for i in range(24)]

    def chain(v):
        for c in caps[:20]:
            v = v + c
        return v

    def tree(v):
        acc = [v * c for c in caps[:12]]
        while len(acc) > 1:
            acc = [acc[i] + acc[i + 1] if i + 1 < len(acc) else acc[i]
                   for i in range(0, len(acc), 2)]
        return acc[0]

    def side(v):
        for i in range(0, 24, 2):
            v = v + (caps[i] * caps[i + 1]).relu()
        return v

    def long_chain(v):
        for c in caps200:
            v = v + c
        return v
    caps200 = [hop.full((4,), float(i)) for i in range(200)]
    expected = {chain: [6, 7, 7], tree: [3, 12, 8], side: [9, 9, 9, 9],
                long_chain: [2, 6] + ([2, 6] + [7] * 8) * 3}  # 32 groups, 92 before
    for f, steps in expected.items():
        with pytest.warns(RuntimeWarning, match="guard by identity only"):
            gm = hop.trace(f, hop.ones(4))
        assert fused_steps(gm.plan.dump()) == steps, f.__name__
        assert gm(hop.ones(4)).tolist() == f(hop.ones(4)).tolist()


def test_a_group_held_by_its_registers_is_cut_at_the_deepest_cut_that_fits():
    # fill_cut counts a chain's inputs once down its path (inputs_fill) and
    # tries the cut at that bound; a group whose registers run out above it
    # (adds whose right operands are nested sums, 5 live registers) is
    # bisected between the top and the bound instead (issue #30).  The
    # groups are those the galloping trials found before: the plan is the
    # same, and so are the results.
    caps = [hop.full((4,), float(i)) for i in range(30)]

    def side(x, r, k):
        return x * float(k) if r == 0 else (x * float(k)) + side(x, r - 1, k + 1)

    def regs(x, y):
        t = x * 0.5
        for c in caps:
            t = t + c
        for i in range(5):
            t = t + side(x if i % 2 else y, 4, i)
        return t
    x, y = hop.ones(4), hop.full((4,), 2.0)
    with pytest.warns(RuntimeWarning, match="guard by identity only"):
        gm = hop.trace(regs, x, y)
    assert fused_steps(gm.plan.dump()) == [3, 7, 7, 7, 7, 10, 10, 1, 7, 9, 13]
    assert gm(x, y).numpy().tobytes() == regs(x, y).numpy().tobytes()
    assert gm(x, y).tolist() == [595.5] * 4
