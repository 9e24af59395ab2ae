"""The loop and switch HOPs (issue #14): while_loop, fori_loop, scan,
associative_scan and switch, each eager, traced and compiled against a NumPy
loop; nesting both ways; closures at two depths; zero-trip loops; pytree
carries; the carry checks with one message in every mode; no needless
recompiles; data-dependent and unbacked trip counts."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from budget import examples

import hop


def same(a, b, tol=1e-5):
    a = a.numpy() if isinstance(a, hop.Tensor) else np.asarray(a)
    b = b.numpy() if isinstance(b, hop.Tensor) else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def modes(fn, *args, dynamic=False):
    """fn eagerly, traced (one GraphModule) and compiled, on args."""
    gm = hop.trace(fn, *args, dynamic=dynamic)
    return {"eager": fn(*args), "traced": gm(*args), "compiled": hop.compile(fn)(*args)}, gm


def check_all(fn, args, ref, tol=1e-5, dynamic=False):
    got, gm = modes(fn, *args, dynamic=dynamic)
    for mode, out in got.items():
        if isinstance(ref, tuple):
            assert isinstance(out, tuple) and len(out) == len(ref), mode
            for o, r in zip(out, ref):
                same(o, r, tol)
        else:
            same(out, ref, tol)
    return gm


def raises_everywhere(fn, args, exc, msg):
    """fn raises exactly exc(msg) eagerly, traced and compiled, and leaves
    no tracer on the stack."""
    for run in (fn, lambda *a: hop.trace(fn, *a)(*a), hop.compile(fn)):
        with pytest.raises(exc) as info:
            run(*args)
        assert str(info.value) == msg
    assert hop._C._trace_depth() == 0


# -------------------------------------------------------------- while_loop

def test_while_loop_counts_until_its_condition_fails_in_every_mode():
    x = hop.randn(4, seed=1)
    f = lambda x: hop.while_loop(lambda i, v: i < 5, lambda i, v: (i + 1, v * 2), (0, x))
    gm = check_all(f, (x,), (np.int64(5), x.numpy() * 32))
    assert gm.code == '''\
def forward(x: "f32[4]"):
    def while_loop_cond_0(full: "i64[]", x: "f32[4]"):
        lt: "bool[]" = lt(full, 5)
        return (lt,)

    def while_loop_body_0(full: "i64[]", x: "f32[4]"):
        add: "i64[]" = add(full, 1)
        mul: "f32[4]" = mul(x, 2)
        return (add, mul)

    full: "i64[]" = full([], 0, i64)
    while_loop: "(i64[], f32[4])" = while_loop(while_loop_cond_0, while_loop_body_0, (full, x), ())
    getitem: "i64[]" = while_loop[0]
    getitem_1: "f32[4]" = while_loop[1]
    return (getitem, getitem_1)
'''
    assert "while_loop_cond_0" in gm.to_dot() and "while_loop_body_0" in gm.to_dot()


def test_while_loop_stops_on_data_inside_the_plan_with_one_plan_for_every_trip_count():
    def f(x):
        # halve until the norm drops under 1: the trip count depends on x
        return hop.while_loop(lambda v: (v * v).sum() > 1.0, lambda v: (v * 0.5,), (x,))[0]

    compiled = hop.compile(f)
    for scale in (0.1, 3.0, 100.0, 1e6):
        x = hop.tensor(np.full(3, scale, np.float32))
        ref = x.numpy()
        while (ref * ref).sum() > 1.0:
            ref = ref * np.float32(0.5)
        same(f(x), ref)
        same(compiled(x), ref)
    assert len(compiled._entries) == 1 and compiled.recompiles == 0


def test_while_loop_merges_its_functions_inputs_as_cond_does():
    x, lim, step = hop.randn(3, seed=1), hop.tensor(4.0), hop.tensor(0.5)

    def f(x):
        return hop.while_loop(lambda v: v.sum() < lim, lambda v: (v + step,), (x,))[0]

    gm = hop.trace(f, x)
    # carries first, then values unique to cond_fn, then those unique to body_fn
    for fn in ("cond", "body"):
        assert f'def while_loop_{fn}_0(x: "f32[3]", lim_cond_branch: "f32[]", ' \
            f'step_body_branch: "f32[]"):' in gm.code
    assert "while_loop(while_loop_cond_0, while_loop_body_0, (x,), (lim, step))" in gm.code
    ref = x.numpy()
    while ref.sum() < 4.0:
        ref = ref + np.float32(0.5)
    same(gm(x), ref)
    same(f(x), ref)


def test_a_plan_run_after_an_odd_trip_count_keeps_its_values_apart():
    # The carries are double-buffered and swapped per iteration, so after an
    # odd trip count each holds the other's buffer, also when the next run
    # (or the next row of a map) starts: the memory plan must not share
    # either buffer with a value live next to the loop (here x + 1, which
    # the loop's first copy overwrote: [0, 0, .5, .5] instead of .5).
    f = lambda x, n: hop.while_loop(lambda j, c: j < n, lambda j, c: (j + 1, c * 0.5),
                                    (0, x + 1))[1]
    g = lambda xs, n: hop.map(lambda r: f(r, n), xs)
    x, xs = hop.ones(4), hop.arange(0, 12, dtype=hop.float32).reshape(3, 4)
    gm, gmm = hop.trace(f, x, hop.tensor(2)), hop.trace(g, xs, hop.tensor(2))
    compiled = hop.compile(g)
    for n in (1, 2, 3, 0, 1, 1, 2):
        same(gm(x, hop.tensor(n)), np.full(4, 2 * 0.5 ** n, np.float32))
        ref = (xs.numpy() + 1) * np.float32(0.5 ** n)
        same(gmm(xs, hop.tensor(n)), ref)
        same(compiled(xs, hop.tensor(n)), ref)


def test_while_loop_carry_checks_name_the_hop_the_carry_and_both_metadata():
    x = hop.zeros(2, 4)
    raises_everywhere(
        lambda x: hop.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, hop.zeros(2, 5)),
                                 (0, x)),
        (x,), hop.TraceError, "while_loop: carry 1 enters as f32[2, 4] but body_fn returns "
        "f32[2, 5]")
    raises_everywhere(
        lambda x: hop.while_loop(lambda v: v.sum() < 3, lambda v: (v.to(hop.float64),), (x,)),
        (x,), hop.TraceError, "while_loop: carry 0 enters as f32[2, 4] but body_fn returns "
        "f64[2, 4]")
    raises_everywhere(
        lambda x: hop.while_loop(lambda v: v.sum(), lambda v: (v + 1,), (x,)),
        (x,), hop.TraceError, "while_loop: cond_fn must return a bool scalar, got f32[]")
    raises_everywhere(
        lambda x: hop.while_loop(lambda v: v < 3, lambda v: (v + 1,), (x,)),
        (x,), hop.TraceError, "while_loop: cond_fn must return a bool scalar, got bool[2, 4]")


def test_while_loop_with_symbolic_sizes_keeps_them_through_the_carry():
    def f(x):
        return hop.while_loop(lambda v: v.sum() < 100, lambda v: (v * 2 + 1,), (x,))[0]

    gm = hop.trace(f, hop.ones(3, 2), dynamic=True)
    assert 'while_loop: "f32[s0, s1]"' in gm.code
    for shape in [(2, 2), (5, 3), (2, 7)]:
        x = hop.ones(*shape)
        ref = x.numpy()
        while ref.sum() < 100:
            ref = ref * 2 + 1
        same(gm(x), ref)


# --------------------------------------------------------------- fori_loop

def test_fori_loop_indexes_a_closure_and_equals_numpy():
    xs = hop.randn(6, 3, seed=1)
    f = lambda xs: hop.fori_loop(0, 6, lambda i, acc: acc + xs[i] * i, hop.zeros(3))
    gm = check_all(f, (xs,), (xs.numpy() * np.arange(6, dtype=np.float32)[:, None]).sum(0))
    assert "fori_loop(0, 6, fori_loop_body_0, (zeros,), (xs,))" in gm.code
    assert 'def fori_loop_body_0(i: "Sym(u0)", zeros: "f32[3]", xs: "f32[6, 3]"):' in gm.code


def test_fori_loop_with_a_tensor_bound_does_not_recompile_when_it_changes():
    xs = hop.randn(9, 2, seed=3)
    f = lambda xs, n: hop.fori_loop(1, n, lambda i, acc: acc + xs[i], hop.zeros(2))
    compiled = hop.compile(f)
    for n in (1, 4, 9, 0):
        ref = xs.numpy()[1:n].sum(0) if n > 1 else np.zeros(2, np.float32)
        same(f(xs, hop.tensor(n)), ref)
        same(compiled(xs, hop.tensor(n)), ref)
    assert len(compiled._entries) == 1


def test_fori_loop_with_an_unbacked_trip_count():
    x = hop.tensor([2.0, 1.0, 1.0])

    def f(x):
        n = x.sum().to(hop.int64).item()  # an unbacked SymInt: 4
        return hop.fori_loop(0, n, lambda i, v: v * 2, x)

    gm = check_all(f, (x,), x.numpy() * 16)
    assert "item" in gm.code


def test_fori_loop_errors_name_fori_loop():
    x = hop.zeros(3)
    raises_everywhere(lambda x: hop.fori_loop(0, 3, lambda i, v: v[:2], x), (x,), hop.TraceError,
                      "fori_loop: carry 0 enters as f32[3] but body_fun returns f32[2]")
    with pytest.raises(TypeError, match="hop.fori_loop: upper must be an int, a SymInt or an int "
                                        "scalar tensor, got float"):
        hop.fori_loop(0, 2.5, lambda i, v: v, x)
    with pytest.raises(hop.DTypeError, match=r"fori_loop: upper must be an int, a SymInt or an "
                                             r"int scalar tensor, got f32\[\]"):
        hop.fori_loop(0, hop.tensor(2.0), lambda i, v: v, x)


def test_zero_trip_loops_return_their_carry_in_every_mode():
    x = hop.randn(3, seed=2)
    check_all(lambda x: hop.fori_loop(5, 5, lambda i, v: v * 3, x), (x,), x.numpy())
    check_all(lambda x: hop.fori_loop(5, 2, lambda i, v: v * 3, x), (x,), x.numpy())
    check_all(lambda x: hop.while_loop(lambda v: v.sum() > 1e9, lambda v: (v * 3,), (x,))[0],
              (x,), x.numpy())


# --------------------------------------------------------------------- scan

def rnn_reference(h0, xs, W, U, reverse=False):
    h, hs = h0, [None] * len(xs)
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for t in order:
        h = np.tanh(h @ W + xs[t] @ U)
        hs[t] = h
    return h, np.stack(hs)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_of_an_rnn_cell_equals_numpy(reverse):
    W, U = hop.randn(4, 4, seed=1) * 0.5, hop.randn(3, 4, seed=2)
    xs, h0 = hop.randn(7, 3, seed=3), hop.zeros(1, 4)

    def f(xs, h0):
        def cell(h, x):
            h = (h @ W + x @ U).tanh()
            return h, h
        return hop.scan(cell, h0, xs, reverse=reverse)

    gm = check_all(f, (xs, h0), rnn_reference(h0.numpy(), xs.numpy(), W.numpy(), U.numpy(),
                                              reverse))
    assert f"scan({reverse}, 0, -1, scan_body_0, (h0,), (xs,), (W, U))" in gm.code


def test_scan_with_pytrees_length_only_and_other_dims():
    xs = hop.randn(3, 5, seed=4)

    def f(xs):
        def step(c, x):
            s, m = c["s"], c["m"]
            return {"s": s + x, "m": m.maximum(x)}, (s * x, None)
        return hop.scan(step, {"s": hop.zeros(3), "m": xs[:, 0]}, xs, dim=1)

    got, _ = modes(f, xs)
    a = xs.numpy()
    s, m, ys = np.zeros(3, np.float32), a[:, 0], []
    for t in range(5):
        ys.append(s * a[:, t])
        s, m = s + a[:, t], np.maximum(m, a[:, t])
    for out in got.values():
        carry, (y, none) = out
        same(carry["s"], s)
        same(carry["m"], m)
        same(y, np.stack(ys, 1))
        assert none is None
    count = lambda: hop.scan(lambda c, _: (c + 1, c * 2), hop.zeros(2), None, length=4)
    c, ys = count()
    same(c, np.full(2, 4, np.float32))
    same(ys, np.array([[0, 0], [2, 2], [4, 4], [6, 6]], np.float32))


def test_scan_of_zero_steps_gives_empty_ys_in_every_mode():
    xs = hop.zeros(0, 3)
    f = lambda xs: hop.scan(lambda c, x: (c + x, x * 2), hop.ones(3), xs)
    got, _ = modes(f, xs)
    for c, ys in got.values():
        same(c, np.ones(3, np.float32))
        assert tuple(ys.shape) == (0, 3)


def test_scan_errors():
    xs = hop.zeros(4, 3)
    raises_everywhere(lambda xs: hop.scan(lambda c, x: (c[:1], x), hop.zeros(3), xs), (xs,),
                      hop.TraceError, "scan: carry 0 enters as f32[3] but f returns f32[1]")
    with pytest.raises(hop.TraceError, match=r"hop.scan: f must return a pair \(carry, y\), got "
                                             r"Tensor"):
        hop.scan(lambda c, x: c + x, hop.zeros(3), xs)
    with pytest.raises(TypeError, match="hop.scan: xs is None, so length must be given"):
        hop.scan(lambda c, x: (c, x), hop.zeros(3), None)


# --------------------------------------------------------- associative_scan

@pytest.mark.parametrize("n", [1, 2, 7, 17, 100, 3000])
def test_associative_scan_equals_numpy_accumulations(n):
    x = hop.randn(n, 3, seed=n)
    a = x.numpy()
    check_all(lambda x: hop.associative_scan(lambda p, q: p + q, x), (x,), np.cumsum(a, 0), 1e-3)
    check_all(lambda x: hop.associative_scan(lambda p, q: p.maximum(q), x, reverse=True), (x,),
              np.maximum.accumulate(a[::-1], 0)[::-1])
    check_all(lambda x: hop.associative_scan(lambda p, q: p.minimum(q), x, dim=1), (x,),
              np.minimum.accumulate(a, 1))


def test_associative_scan_of_a_pytree_with_a_non_commutative_combine():
    # affine maps composed in order: (a1, b1) then (a2, b2) is (a1*a2, b1*a2 + b2)
    a, b = hop.randn(50, seed=1) * 0.3 + 1, hop.randn(50, seed=2)
    f = lambda a, b: hop.associative_scan(lambda l, r: (l[0] * r[0], l[1] * r[0] + r[1]), (a, b))
    ra, rb, pa, pb = [], [], np.float32(1), np.float32(0)
    for x, y in zip(a.numpy(), b.numpy()):
        pa, pb = pa * x, pb * x + y
        ra.append(pa)
        rb.append(pb)
    check_all(f, (a, b), (np.array(ra, np.float32), np.array(rb, np.float32)), 1e-3)


ACCUMULATE = {"add": np.add, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum}
ONE_OP = {"add": lambda p, q: p + q, "mul": lambda p, q: p * q,
          "maximum": lambda p, q: p.maximum(q), "minimum": lambda p, q: p.minimum(q)}


def np_scan(op, a, dim, reverse):
    """NumPy's accumulate along dim, from the end with reverse."""
    a = np.flip(a, dim) if reverse else a
    with np.errstate(over="ignore", invalid="ignore"):
        r = ACCUMULATE[op].accumulate(a, axis=dim, dtype=a.dtype)
    return np.flip(r, dim) if reverse else r


def plan_ops(fn, *args):
    return [line.split()[1] for line in hop.trace(fn, *args).plan.dump().splitlines()
            if line[:4].strip().isdigit()]


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("op", ["add", "mul", "maximum", "minimum"])
def test_one_op_combines_run_as_one_kernel_equal_to_numpy_and_eager(op, dtype):
    """A combine_fn of one add/mul/maximum/minimum runs as the HOP's own
    kernel (one Kernel instruction in the plan): every dim, both
    directions, a strided (transposed) xs, equal to NumPy's accumulate and to
    the eager scan exactly (no line is long enough to be split)."""
    rng = np.random.default_rng(len(op) * 7 + len(dtype))
    a = (rng.integers(-3, 4, (5, 6, 7)) if dtype.startswith("int")
         else rng.standard_normal((5, 6, 7)) * (0.9 if op == "mul" else 3)).astype(dtype)
    x = hop.tensor(a)
    xt = hop.tensor(a).transpose(0, 2)  # strided
    for dim in (0, 1, -1):
        for reverse in (False, True):
            f = lambda x: hop.associative_scan(ONE_OP[op], x, dim=dim, reverse=reverse)
            assert plan_ops(f, x)[2:4] == ["Kernel", "Halt"]
            for arg in (x, xt):
                want = np_scan(op, arg.numpy(), dim, reverse)
                got = hop.compile(f)(arg)
                assert got.numpy().dtype == want.dtype
                np.testing.assert_array_equal(got.numpy(), f(arg).numpy())
                np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_one_op_combines_keep_the_operand_order_for_signed_zeros_and_nans():
    """maximum(q, p) is not maximum(p, q) for -0.0 against 0.0, nor for two
    NaNs: the kernel applies the op in the order combine_fn wrote it."""
    a = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -0.0, 0.0], np.float32)
    x = hop.tensor(a)
    for comb in (lambda p, q: p.maximum(q), lambda p, q: q.maximum(p),
                 lambda p, q: p.minimum(q), lambda p, q: q.minimum(p)):
        f = lambda x: hop.associative_scan(comb, x)
        assert "Kernel" in plan_ops(f, x)
        got, want = hop.compile(f)(x).numpy(), f(x).numpy()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_a_long_line_splits_into_chunks_the_same_on_one_and_two_threads(dtype):
    """One line of 2**17 elements is scanned in 16 chunks on the pool:
    integers equal NumPy's cumsum exactly (wrapping like it), floats within
    rounding of it, and the result does not depend on the thread count."""
    rng = np.random.default_rng(5)
    a = (rng.integers(-2**40, 2**40, 2**17) if dtype == "int64"
         else rng.standard_normal(2**17)).astype(dtype)
    x = hop.tensor(a)
    f = hop.compile(lambda x: hop.associative_scan(lambda p, q: p + q, x))
    g = hop.compile(lambda x: hop.associative_scan(lambda p, q: p + q, x, reverse=True))
    old = hop.get_num_threads()
    try:
        hop.set_num_threads(1)
        one, one_r = f(x).numpy(), g(x).numpy()
        hop.set_num_threads(2)
        two, two_r = f(x).numpy(), g(x).numpy()
    finally:
        hop.set_num_threads(old)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one_r, two_r)
    want, want_r = np.cumsum(a, dtype=a.dtype), np_scan("add", a, 0, True)
    if dtype == "int64":
        np.testing.assert_array_equal(one, want)
        np.testing.assert_array_equal(one_r, want_r)
    else:
        bound = 1e-4 * np.cumsum(np.abs(a.astype(np.float64)))
        assert np.all(np.abs(one - want) <= bound + 1e-3)
        assert np.all(np.abs(one_r - want_r) <= bound[::-1] + 1e-3)


@pytest.mark.parametrize("op", ["mul", "maximum", "minimum"])
def test_a_split_line_of_integers_equals_numpy_exactly_for_every_op(op):
    rng = np.random.default_rng(6)
    a = rng.integers(-2**31, 2**31, 2**17 + 3).astype(np.int64) | 1
    x = hop.tensor(a)
    for reverse in (False, True):
        f = hop.compile(lambda x: hop.associative_scan(ONE_OP[op], x, reverse=reverse))
        np.testing.assert_array_equal(f(x).numpy(), np_scan(op, a, 0, reverse))


def chunked_scan(op, a, reverse):
    """The split line's scan in NumPy: 16 chunks of ceil(n / 16), each
    accumulated in order, the chunks' totals combined in order, and each
    chunk's elements combined with the total of the chunks before it (exact
    for integers, which wrap as hop's do)."""
    a = a[::-1] if reverse else a
    ufunc, chunk = ACCUMULATE[op], -(-len(a) // 16)
    out, carry = np.empty_like(a), None
    for c in range(16):
        part = ufunc.accumulate(a[c * chunk:(c + 1) * chunk], dtype=a.dtype)
        out[c * chunk:(c + 1) * chunk] = part if carry is None else ufunc(carry, part)
        carry = part[-1] if carry is None else ufunc(carry, part[-1])
    return out[::-1] if reverse else out


def sequential_minmax(op, swapped, a, reverse):
    """hop's float maximum/minimum scan in order, one element after another:
    op(l, r) is l when l is NaN, else r when r is NaN, else l when l > r
    (l < r for minimum), else r; swapped applies op(r, l)."""
    def combine(l, r):
        if swapped:
            l, r = r, l
        if l != l or r != r:
            return l if l != l else r
        return l if (l > r if op == "maximum" else l < r) else r
    seq = a[::-1] if reverse else a
    out, acc = [], None
    for v in seq.tolist():
        acc = v if acc is None else combine(acc, v)
        out.append(acc)
    out = np.array(out, a.dtype)
    return out[::-1] if reverse else out


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("op", ["add", "mul", "maximum", "minimum"])
def test_a_split_line_gives_the_chunked_scans_bits_on_any_number_of_threads(op, dtype):
    """Phase one scans 8 chunks at once (associative_scan.c's lanes: each a
    chunk's own chain of combines, staggered in memory).  The bits are the
    chunked algorithm's (a NumPy model of it), and for float maximum/minimum,
    which the chunks do not change, the sequential scan's, with NaNs and
    signed zeros whose sign the operand order decides; both orders, both
    directions, a strided line and a short last chunk, on 1 and 2
    threads."""
    rng = np.random.default_rng(len(op) * 5 + len(dtype))
    n = 2**16 + 5
    if dtype.startswith("int"):
        a = rng.integers(-9, 10, 2 * n).astype(dtype) | 1
    elif op in ("add", "mul"):
        a = (rng.standard_normal(2 * n) * (0.01 if op == "mul" else 1) + 1).astype(dtype)
    else:
        # running values of +-0.0, where the operand order decides the
        # sign, and a NaN late in some chunks, which then stays
        a = rng.choice(np.array([0.0, -0.0, -1.0 if op == "maximum" else 1.0], dtype), 2 * n)
        a[np.arange(2 * n) % 8192 == 8180] = np.nan
    old = hop.get_num_threads()
    try:
        for x in (hop.tensor(a[:n]), hop.tensor(a)[::2]):
            for comb in (ONE_OP[op], lambda p, q, f=ONE_OP[op]: f(q, p)):
                for reverse in (False, True):
                    fn = lambda x: hop.associative_scan(comb, x, reverse=reverse)
                    gm = hop.trace(fn, x)
                    assert "Kernel" in gm.plan.dump()
                    want = (sequential_minmax(op, comb is not ONE_OP[op], x.numpy(), reverse)
                            if op in ("maximum", "minimum") and dtype.startswith("float")
                            else chunked_scan(op, x.numpy(), reverse))
                    for nt in (1, 2):
                        hop.set_num_threads(nt)
                        assert gm(x).numpy().tobytes() == want.tobytes(), (x.stride(), reverse, nt)
    finally:
        hop.set_num_threads(old)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("op", ["add", "mul", "maximum", "minimum"])
def test_many_lines_scan_eight_at_once_with_each_lines_own_bits(op, dtype):
    """Lines of a scan run 8 at once (associative_scan.c's lanes): columns
    side by side (dim 0), rows 4 KiB apart (staggered), rows of other
    lengths, transposed and reversed, both operand orders; each line's bits
    are its sequential scan's (NumPy's accumulate, or for float maximum/
    minimum the sequential rule with NaNs and signed zeros)."""
    rng = np.random.default_rng(len(op) * 3 + len(dtype))
    minmax = op in ("maximum", "minimum") and dtype.startswith("float")
    for shape, dim in (((1003, 21), 0), ((19, 1024), 1), ((17, 999), 1), ((300, 40), 1)):
        if dtype.startswith("int"):
            a = rng.integers(-9, 10, shape).astype(dtype) | 1
        elif not minmax:
            a = (rng.standard_normal(shape) * (0.01 if op == "mul" else 1) + 1).astype(dtype)
        else:
            a = rng.choice(np.array([0.0, -0.0, -1.0 if op == "maximum" else 1.0], dtype), shape)
            a.reshape(-1)[rng.integers(0, a.size, 3)] = np.nan
        for x, d in ((hop.tensor(a), dim), (hop.tensor(np.ascontiguousarray(a.T)).T, dim)):
            for comb in (ONE_OP[op], lambda p, q, f=ONE_OP[op]: f(q, p)):
                for reverse in (False, True):
                    gm = hop.trace(lambda x: hop.associative_scan(comb, x, dim=d, reverse=reverse),
                                   x)
                    assert "Kernel" in gm.plan.dump()
                    xn = x.numpy()
                    if minmax:
                        want = np.stack([sequential_minmax(op, comb is not ONE_OP[op], line,
                                                           reverse)
                                         for line in np.moveaxis(xn, d, -1)])
                        want = np.moveaxis(want, -1, d)
                    else:
                        want = np_scan(op, xn, d, reverse)
                    assert gm(x).numpy().tobytes() == np.ascontiguousarray(want).tobytes()


def test_combines_of_more_than_one_op_take_the_general_plan_with_the_same_result():
    x = hop.tensor(np.arange(-20, 20, dtype=np.int64).reshape(8, 5))
    fast = lambda x: hop.associative_scan(lambda p, q: p + q, x)
    general = lambda x: hop.associative_scan(lambda p, q: (p + q) * 1, x)
    assert "Kernel" not in plan_ops(general, x)
    np.testing.assert_array_equal(hop.compile(general)(x).numpy(), hop.compile(fast)(x).numpy())
    np.testing.assert_array_equal(hop.compile(fast)(x).numpy(), np.cumsum(x.numpy(), 0))


# ------------------------------------------------------------------- switch

def test_switch_clamps_its_index_and_runs_one_branch_in_every_mode():
    x, w = hop.randn(4, seed=1), hop.randn(4, seed=2)
    branches = [lambda x: x + 1, lambda x: x * w, lambda x: -x]
    f = lambda x, k: hop.switch(k, branches, x)
    compiled = hop.compile(f)
    gm = hop.trace(f, x, hop.tensor(1))
    for k in (-3, 0, 1, 2, 9):
        ref = [x.numpy() + 1, x.numpy() * w.numpy(), -x.numpy()][min(max(k, 0), 2)]
        same(f(x, k), ref)
        same(f(x, hop.tensor(k)), ref)
        same(gm(x, hop.tensor(k)), ref)
        same(compiled(x, hop.tensor(k)), ref)
    assert len(compiled._entries) == 1
    assert "switch(item, switch_branch_0, switch_branch_1, switch_branch_2, (x, w))" in gm.code
    assert 'def switch_branch_0(x: "f32[4]", w_branch1: "f32[4]"):' in gm.code
    with pytest.raises(hop.TraceError, match="hop.switch: the branches return different "
                                             "structures"):
        hop.trace(lambda x: hop.switch(hop.tensor(0), [lambda: x, lambda: (x, x)]), x)



def test_switch_keeps_a_size_one_branch_equated_with_a_guard_as_cond_does():
    # Branch 0 broadcasts a static f32[4] to x's dynamic [s0, s1]: it gives
    # f32[s0, 4] and guards s1 == 4 where it runs.  Whichever branch runs,
    # the output is then [s0, s1]; an unbacked size there made the later
    # expand to x.shape undecidable (found by the differential campaign).
    c0 = hop.tensor(np.arange(4, dtype=np.float32))
    x = hop.randn(3, 4, seed=1)

    def f(x, k):
        branches = [lambda: c0.expand(x.shape), lambda: x, lambda: -x]
        return hop.switch(k, branches).expand(x.shape) + x

    for k in (-1, 0, 1, 2, 5):
        ref = [np.broadcast_to(c0.numpy(), (3, 4)), x.numpy(), -x.numpy()][min(max(k, 0), 2)]
        check_all(f, (x, hop.tensor(k)), ref + x.numpy(), dynamic=True)
    gm = hop.trace(f, x, hop.tensor(0), dynamic=True)
    assert 'switch: "f32[s0, s1]" = switch(item, switch_branch_0, switch_branch_1, ' \
        'switch_branch_2, (s0, s1, x, c0))' in gm.code
    # The branch's guard holds where the branch runs: another width there is
    # a GuardError, and the other branches still run.
    x5 = hop.randn(3, 5, seed=2)
    with pytest.raises(hop.GuardError):
        gm(x5, hop.tensor(0))
    same(gm(x5, hop.tensor(1)), 2 * x5.numpy())


# ------------------------------------------------------- nesting, closures

def test_a_while_loop_in_a_map_in_a_cond_and_a_scan_in_a_cond():
    x, w = hop.randn(5, 3, seed=1), hop.randn(3, seed=2)

    def f(x):
        k = x.sum()

        def pos():
            # closures at two depths: w (global-ish) and k (the function's)
            return hop.map(lambda r: hop.while_loop(lambda v: v.sum() < k.abs() + 10,
                                                    lambda v: (v + w.abs() + 0.5,), (r,))[0], x)

        def neg():
            return hop.scan(lambda c, r: (c + r * w, c), hop.zeros(3), x)[1]
        return hop.cond(k > 0, pos, neg)

    def ref(x):
        a, k = x.numpy(), x.numpy().sum()
        if k > 0:
            out = []
            for r in a:
                while r.sum() < abs(k) + 10:
                    r = r + np.abs(w.numpy()) + np.float32(0.5)
                out.append(r)
            return np.stack(out)
        c, ys = np.zeros(3, np.float32), []
        for r in a:
            ys.append(c)
            c = c + r * w.numpy()
        return np.stack(ys)

    for xin in (x, -x, x * 0 + 1):
        check_all(f, (xin,), ref(xin), 1e-4)


@settings(max_examples=examples(30), deadline=None)
@given(n=st.integers(0, 6), lo=st.integers(-2, 3), rows=st.integers(1, 4),
       dtype=st.sampled_from(["float32", "float64", "int64"]), seed=st.integers(0, 999),
       dynamic=st.booleans())
def test_fori_and_scan_differential(n, lo, rows, dtype, seed, dynamic):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((rows, 3)) * 3).astype(dtype)
    x = hop.tensor(a)

    def f(x):
        acc = hop.fori_loop(lo, lo + n, lambda i, v: v * 2 + i, x)
        c, ys = hop.scan(lambda c, r: (c + r, c - r), x[0], x)
        return acc, c, ys

    racc = a.copy()
    for i in range(lo, lo + n):
        racc = racc * 2 + i
    c, ys = a[0].copy(), []
    for r in a:
        ys.append(c - r)
        c = c + r
    gm = hop.trace(f, x, dynamic=dynamic)
    for got in (f(x), gm(x)):
        same(got[0], racc)
        same(got[1], c)
        same(got[2], np.stack(ys))


# A loop inside a loop body: the inner carries are double-buffered by
# swapping two buffers, so after an odd trip count each carry slot holds the
# other's buffer when the outer loop runs its next iteration.  The memory
# plan once reserved each buffer only for its own slot's live range, and the
# inner counter's initial 0 landed in the buffer of the inner loop's init
# (found by the differential campaign; regressions/ keeps its program).
@pytest.mark.parametrize("inner", ["while_loop", "fori_loop", "scan"])
@pytest.mark.parametrize("trips", [1, 3])
def test_a_loop_in_a_loop_body_keeps_its_swapped_carries_apart_from_other_values(inner, trips):
    y = hop.tensor(np.array([-2, 5, 3, -1], np.int32))
    x = hop.zeros(3, 4, dtype=hop.int32)

    def run_inner(a):
        if inner == "while_loop":
            return hop.while_loop(lambda c, v: c < trips, lambda c, v: (c + 1, v), (0, a + 0))[1]
        if inner == "fori_loop":
            return hop.fori_loop(0, trips, lambda i, c: (c[0] + 1, c[1] * 1), (0, a + 0))[1]
        return hop.scan(lambda c, r: ((c[0] + 1, c[1] * 1), None), (0, a + 0), None,
                        length=trips)[0][1]

    def f(x, y):
        def body(c, a):
            return c + 1, run_inner(a)
        return hop.while_loop(lambda c, a: c < 2, body, (0, y.expand(x.shape)))[1]

    want = np.broadcast_to(y.numpy(), (3, 4))
    check_all(f, (x, y), want)
    check_all(f, (x, y), want, dynamic=True)


def _loop_code(dump):
    """The instructions of a plan dump's (one) rotated while loop: from the
    instruction after its entry Goto to its If back, inclusive."""
    lines = [ln.split() for ln in dump.splitlines() if ln[:4].strip().isdigit()]
    start = next(i for i, ln in enumerate(lines) if ln[1] == "Goto")
    end = next(i for i, ln in enumerate(lines) if ln[1] == "If" and int(ln[3]) == start + 1)
    return [ln[1] for ln in lines[start + 1:end + 1]]


def test_a_compiled_while_loop_iteration_runs_its_body_one_swap_and_one_test():
    # Rotated: the body, one Swap for every tensor carry, then the test and
    # the branch back in one If (it runs the condition's fused group);
    # entered at the test, so a zero-trip loop runs no body.
    x, n = hop.randn(16, seed=1), hop.tensor(7)
    f = lambda x, n: hop.while_loop(lambda i, v: i < n,
                                    lambda i, v: (i + 1, v * 0.999 + 0.001), (0, x))[1]
    gm = hop.trace(f, x, n)
    assert _loop_code(gm.plan.dump()) == ["Fused", "Fused", "Swap", "If"]
    ref = x.numpy()
    for _ in range(7):
        ref = ref * np.float32(0.999) + np.float32(0.001)
    same(gm(x, n), ref)
    same(gm(x, hop.tensor(0)), x.numpy())
    same(gm(x, hop.tensor(-3)), x.numpy())


@pytest.mark.parametrize("trips", [0, 1, 4])
def test_while_loop_conditions_of_every_shape_in_the_rotated_loop(trips):
    # The condition's last step is not always a fused group the If can run:
    # a cond HOP's branches, a bool carry itself, a float test, a loop in
    # the condition; each against a Python loop in every mode.
    x, n = hop.randn(3, seed=2), hop.tensor(trips)

    def by_cond(x, n):
        return hop.while_loop(
            lambda i, v: hop.cond(n > 2, lambda: i < n, lambda: i + 0 < n + 0),
            lambda i, v: (i + 1, v * 2), (0, x))

    def by_flag(x, n):
        return hop.while_loop(lambda go, i, v: go, lambda go, i, v: (i + 1 < n, i + 1, v + 1),
                              (n > 0, 0, x))

    def by_inner_loop(x, n):
        def cond(i, v):
            j = hop.while_loop(lambda j: j < i, lambda j: (j + 1,), (0,))[0]
            return j < n
        return hop.while_loop(cond, lambda i, v: (i + 1, v - 1), (0, x))

    xs = x.numpy()
    check_all(by_cond, (x, n), (np.int64(trips), xs * np.float32(2.0 ** trips)))
    check_all(by_flag, (x, n), (np.bool_(False), np.int64(max(trips, 0)), xs + trips))
    check_all(by_inner_loop, (x, n), (np.int64(trips), xs - trips))
    # a float condition: halve until the sum drops under trips
    g = lambda x, n: hop.while_loop(lambda v: v.abs().sum() > n, lambda v: (v * 0.5,), (x * 8,))[0]
    ref = xs * np.float32(8)
    while np.abs(ref).sum() > trips:
        ref = ref * np.float32(0.5)
    check_all(g, (x, n), ref)


# ------------------------------------------------- straight loops (issue #14)
# A loop whose body is only small fused groups, int moves and the carries'
# Swap runs its iterations in the VM's run_straight (the back edge shows
# "(straight)" in the plan dump).  It must give eager's bits exactly.

def plan_of(cf):
    return cf._entries[0].runner.plan.dump()


def back_edges(dump):
    return [line for line in dump.splitlines() if " Next " in line or " If " in line]


def exact(a, b):
    """The same bits: NaNs and the sign of zero included."""
    a, b = a.numpy(), b.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes(), (a, b)


def exact_all(got, want):
    """exact() for each output of a loop returning a tuple."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        exact(g, w)


def test_straight_fori_loop_is_marked_and_gives_eagers_bits():
    x = hop.randn(16, seed=1)
    f = lambda x: hop.fori_loop(0, 1000, lambda i, v: v * 0.999 + 0.001, x)
    cf = hop.compile(f)
    exact(cf(x), f(x))
    edges = back_edges(plan_of(cf))
    assert len(edges) == 1 and edges[0].endswith("(straight)"), edges
    # the body: MoveInt, Fused, Swap, then Next: 4 instructions per iteration
    body = [l.split()[1] for l in plan_of(cf).splitlines()[2:] if l.strip()[:1].isdigit()]
    assert body[body.index("Next") - 3:body.index("Next") + 1] == ["MoveInt", "Fused", "Swap",
                                                                    "Next"]
    assert cf(x).numpy().tobytes() == cf(x).numpy().tobytes()  # a second run from the same state


def test_straight_loop_with_odd_and_even_trip_counts_and_a_strided_init():
    # the carry enters with other strides (a transposed view), and the
    # double buffer ends in either slot (odd and even trips)
    base = hop.randn(4, 4, seed=2)
    for n in (1, 2, 3, 10):
        f = lambda b, n=n: hop.fori_loop(0, n, lambda i, v: v * 1.5 - 0.25, b.T)
        cf = hop.compile(f)
        exact(cf(base), f(base))
        exact(cf(base), f(base))
        assert back_edges(plan_of(cf))[0].endswith("(straight)")


def test_straight_loop_reading_the_index_and_a_loop_invariant():
    # v * i reads a SymInt (the group is run as itself); w2 is computed
    # before the loop (plan storage); w, a plan input, is no small operand
    x, w = hop.randn(8, seed=3), hop.randn(8, seed=4)

    def f(x, w):
        w2 = w * 2
        return hop.fori_loop(0, 7, lambda i, v: (v * i + w2) * 0.5, x)
    cf = hop.compile(f)
    exact(cf(x, w), f(x, w))
    assert back_edges(plan_of(cf))[0].endswith("(straight)"), plan_of(cf)
    g = lambda x, w: hop.fori_loop(0, 7, lambda i, v: (v * i + w) * 0.5, x)
    cg = hop.compile(g)
    exact(cg(x, w), g(x, w))
    assert not back_edges(plan_of(cg))[0].endswith("(straight)")


def test_straight_loop_with_several_carries_and_a_long_body():
    # two carries in one Swap; more steps than run_straight decodes at once
    x, y = hop.randn(5, seed=5), hop.randn(5, seed=6)

    def body(i, c):
        a, b = c
        for k in range(70):
            a = a * 0.5 + b * 0.25 if k % 2 else (a - b) * 0.75
        return a, b * 0.9 + 0.01

    f = lambda x, y: hop.fori_loop(0, 9, body, (x, y))
    cf = hop.compile(f)
    exact_all(cf(x, y), f(x, y))
    assert back_edges(plan_of(cf))[0].endswith("(straight)")


def test_straight_while_loop_is_marked_and_gives_eagers_bits():
    x, n = hop.randn(16, seed=1), hop.tensor(777)
    f = lambda x, n: hop.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 0.999 + 0.001),
                                    (0, x))
    cf = hop.compile(f)
    got, want = cf(x, n), f(x, n)
    assert int(got[0].numpy()) == 777
    exact(got[1], want[1])
    edges = back_edges(plan_of(cf))
    assert len(edges) == 1 and " If " in edges[0] and edges[0].endswith("(straight)"), edges
    # a data-dependent stop on the tensor carry itself
    g = lambda v: hop.while_loop(lambda v: (v * v).sum() > 1.0, lambda v: (v * 0.5,), (v,))[0]
    cg = hop.compile(g)
    for s in (7, 8):
        v = hop.randn(6, seed=s) * 40
        exact(cg(v), g(v))


def test_loop_with_an_op_in_its_body_is_not_straight():
    x, w = hop.randn(1, 4, seed=7), hop.randn(4, 4, seed=8) * 0.3
    f = lambda x, w: hop.fori_loop(0, 5, lambda i, v: (v @ w) * 0.5, x)
    cf = hop.compile(f)
    exact(cf(x, w), f(x, w))
    edges = back_edges(plan_of(cf))
    assert len(edges) == 1 and not edges[0].endswith("(straight)"), edges


# The decoded straight loop (runtime/straight.c) runs f32/f64 + - * / inline,
# a vector at a time with the rest element by element, and follows each
# carry's storage through the Swaps instead of swapping every iteration.
# Every op, both operand orders, sizes around the vector widths (4 and 8
# f32, 2 and 4 f64) and odd and even trip counts must give eager's bits.

def arith_body(i, c):
    a, b = c
    t = a * b + a / (b * b + 1.0) - b      # vv: * / + -; vs: +
    u = 0.5 - t * 0.25                      # sv: -; vs: *
    u = 2.0 / (u * u + 1.5)                 # sv: /
    u = (3.0 + u) * 0.5 - 1.0 + 4.0 * u     # sv: + *; vs: * -
    return u, b / 3.0 - 0.0625 * b          # vs: /; sv: *


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 3, 4, 5, 8, 9, 16, 17, 33, 64])
def test_straight_arithmetic_gives_eagers_bits_for_every_op_size_and_dtype(dtype, n):
    a = hop.tensor(np.random.default_rng(n).standard_normal(n).astype(dtype))
    b = hop.tensor(np.random.default_rng(n + 1).standard_normal(n).astype(dtype) + 2)
    for trips in (0, 1, 2, 3, 8):
        f = lambda a, b, trips=trips: hop.fori_loop(0, trips, arith_body, (a, b))
        cf, want = hop.compile(f), f(a, b)
        exact_all(cf(a, b), want)
        if trips:
            assert back_edges(plan_of(cf))[0].endswith("(straight)")
        exact_all(cf(a, b), want)  # a second run from the same frame


def test_straight_loop_keeps_the_sign_of_zero_and_nans_of_a_broadcast_operand():
    # a lone element is copied into every lane, never computed into it:
    # v * -0.0 is -0.0 for v > 0, and a NaN scalar carry spreads
    v = hop.tensor(np.arange(1, 10, dtype=np.float32))
    f = lambda v: hop.fori_loop(0, 3, lambda i, v: v * -0.0 + v * 0.0, v)
    exact(hop.compile(f)(v), f(v))
    assert np.signbit(hop.compile(lambda v: hop.fori_loop(0, 1, lambda i, v: v * -0.0, v))(v)
                      .numpy()).all()
    s = hop.tensor(np.float32(np.nan))
    g = lambda v, s: hop.fori_loop(0, 2, lambda i, c: (c[0] - c[1], c[1]), (v, s))
    got = hop.compile(g)(v, s)
    exact(got[0], g(v, s)[0])
    assert np.isnan(got[0].numpy()).all()


def test_straight_loop_with_a_scalar_tensor_carry_as_the_broadcast_operand():
    # s is a 0-d carry: its storage changes hands every iteration too
    x, s = hop.randn(13, seed=2), hop.tensor(np.float32(0.75))
    for trips in (1, 2, 5, 6):
        f = lambda x, s, t=trips: hop.fori_loop(
            0, t, lambda i, c: (c[0] * c[1] - c[1], c[1] * 0.5 + 0.125), (x, s))
        cf = hop.compile(f)
        exact_all(cf(x, s), f(x, s))
        assert back_edges(plan_of(cf))[0].endswith("(straight)")


def test_straight_while_loop_testing_a_carry_and_stopping_after_odd_and_even_trips():
    # the If reads the flag carry itself, whose storage alternates
    x = hop.randn(4, seed=1)

    def by_flag(x, n):
        return hop.while_loop(lambda go, i, v: go,
                              lambda go, i, v: (i + 1 < n, i + 1, v * 1.5 - 0.5), (n > 0, 0, x))
    cf = hop.compile(by_flag)
    for trips in (0, 1, 2, 3, 4, 9):
        n = hop.tensor(trips)
        got, want = cf(x, n), by_flag(x, n)
        assert bool(got[0].numpy()) is False and int(got[1].numpy()) == trips
        exact(got[2], want[2])
    assert back_edges(plan_of(cf))[0].endswith("(straight)")


def test_straight_loop_inside_a_loop_settles_its_carries_each_time():
    # the inner loop runs 3 (odd) times per outer iteration: each exit must
    # leave its carry slots on the right storage for the outer body
    x = hop.randn(6, seed=3)
    inner = lambda v: hop.fori_loop(0, 3, lambda i, w: w * 0.75 + 0.5, v)
    f = lambda x: hop.fori_loop(0, 4, lambda j, v: inner(v) - v * 0.25, x)
    cf = hop.compile(f)
    exact(cf(x), f(x))
    exact(cf(x), f(x))
    assert any(e.endswith("(straight)") for e in back_edges(plan_of(cf)))


def test_straight_loop_reading_the_index_in_f64_with_odd_trips():
    # a SymInt operand is computed into its op each iteration
    x = hop.tensor(np.linspace(-1, 1, 11))
    for trips in (1, 4, 7):
        f = lambda x, t=trips: hop.fori_loop(0, t, lambda i, v: v * 0.5 + v * i - (i - 1), x)
        cf = hop.compile(f)
        exact(cf(x), f(x))
        assert back_edges(plan_of(cf))[0].endswith("(straight)")


def test_straight_arithmetic_with_the_baseline_vectors_gives_eagers_bits():
    # HOP_SIMD=baseline: the 16-byte ops, which an AVX machine never picks
    import inspect
    import os
    import subprocess
    import sys
    program = inspect.getsource(arith_body) + "\n".join([
        "import numpy as np, hop",
        "for dtype in ('float32', 'float64'):",
        "    for n in (1, 2, 3, 4, 5, 9, 17):",
        "        a = hop.tensor(np.random.default_rng(n).standard_normal(n).astype(dtype))",
        "        b = hop.tensor(np.random.default_rng(n).standard_normal(n).astype(dtype) + 2)",
        "        for trips in (1, 2, 3):",
        "            f = lambda a, b: hop.fori_loop(0, trips, arith_body, (a, b))",
        "            got, want = hop.compile(f)(a, b), f(a, b)",
        "            for g, w in zip(got, want):",
        "                assert g.numpy().tobytes() == w.numpy().tobytes(), (dtype, n, trips)",
        "print('same bits')",
    ])
    env = dict(os.environ, HOP_SIMD="baseline",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "same bits\n"


@pytest.mark.parametrize("cmp", ["lt", "le", "gt", "ge", "ne", "eq"])
def test_straight_while_loop_int_steps_give_eagers_values(cmp):
    # each one-element int64 step of a straight body is its own op: the
    # counters' arithmetic and the test's comparison, against eager
    tests = {"lt": lambda i, n: i < n, "le": lambda i, n: i <= n, "gt": lambda i, n: n > i,
             "ge": lambda i, n: n >= i, "ne": lambda i, n: i != n,
             "eq": lambda i, n: (i >= n) == (n < 0)}

    def body(i, j, k, m, d, v):
        return (i + 1, j * 3, hop.maximum(k, i), hop.minimum(m, i), d - i, v * 0.5 + 1.0)

    def f(n, x):
        return hop.while_loop(lambda i, j, k, m, d, v: tests[cmp](i, n), body,
                              (hop.tensor(0), hop.tensor(1), hop.tensor(2), hop.tensor(3),
                               hop.tensor(5), x))
    cf = hop.compile(f)
    x = hop.randn(3, seed=4)
    for trips in (0, 1, 4, 7):
        n = hop.tensor(trips)
        exact_all(cf(n, x), f(n, x))
    edges = back_edges(plan_of(cf))
    assert len(edges) == 1 and edges[0].endswith("(straight)"), plan_of(cf)


# A property test of straight loops: random elementwise bodies over two
# carries (+ - * / between the carries, Python floats including -0.0, and
# the loop index), random sizes, dtypes and trip counts; the compiled loop
# must give eager's bits.

OPERANDS = st.one_of(st.sampled_from(["a", "b", "i"]),
                     st.sampled_from([0.5, -0.0, 0.0, 2.0, -1.25, 3.0, 1e-3]))
STEPS = st.lists(st.tuples(st.sampled_from("+-*/"), OPERANDS, OPERANDS), min_size=1,
                 max_size=6)


def run_steps(steps, i, a, b):
    env = {"a": a, "b": b, "i": i}
    ops = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
           "/": lambda x, y: x / y}
    for op, x, y in steps:
        x, y = env.get(x, x), env.get(y, y)
        if not any(isinstance(v, hop.Tensor) for v in (x, y)):
            x = env["a"]                        # keep a tensor in every step
        env["a"], env["b"] = ops[op](x, y), env["a"]
    return env["a"], env["b"]


@settings(max_examples=examples(60), deadline=None)
@given(steps=STEPS, n=st.integers(1, 64), trips=st.integers(0, 5),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2 ** 16))
def test_straight_loops_of_random_elementwise_bodies_give_eagers_bits(steps, n, trips, dtype,
                                                                      seed):
    rng = np.random.default_rng(seed)
    a = hop.tensor(rng.standard_normal(n).astype(dtype))
    b = hop.tensor((rng.standard_normal(n) + 2).astype(dtype))
    f = lambda a, b: hop.fori_loop(0, trips, lambda i, c: run_steps(steps, i, *c), (a, b))
    cf = hop.compile(f)
    exact_all(cf(a, b), f(a, b))
    assert trips == 0 or back_edges(plan_of(cf))[0].endswith("(straight)"), plan_of(cf)


def test_loop_passing_carries_through_or_rotating_them_is_straight():
    # a carry returned unchanged, or moved to another carry, is a small
    # Copy: the loop stays straight and gives eager's bits
    x, y = hop.randn(5, seed=1), hop.randn(5, seed=2)
    for body in (lambda i, c: (c[1], c[0]), lambda i, c: (c[0] + c[1], c[0]),
                 lambda i, c: (c[0] * 0.5, c[1])):
        for trips in (1, 2, 7):
            f = lambda x, y, body=body, trips=trips: hop.fori_loop(0, trips, body, (x, y))
            cf = hop.compile(f)
            exact_all(cf(x, y), f(x, y))
            assert back_edges(plan_of(cf))[0].endswith("(straight)"), plan_of(cf)


# ----------------------------------- Python values where tensors were needed

def test_a_while_loop_whose_condition_is_a_python_bool_in_every_mode():
    x = hop.randn(3, seed=2)
    f = lambda x: hop.while_loop(lambda i, v: False, lambda i, v: (i + 1, v * 2), (0, x))
    check_all(f, (x,), (np.int64(0), x.numpy()))
    g = lambda x: hop.while_loop(lambda v: np.bool_(False), lambda v: (v * 2,), (x,))[0]
    check_all(g, (x,), x.numpy())


def test_a_loop_body_may_return_a_python_number_for_a_carry_in_every_mode():
    x = hop.randn(3, seed=3)
    f = lambda x: hop.fori_loop(0, 3, lambda i, c: (7, c[1] * 2.0, 0.5, True), (0, x, 1.0, False))
    got, _ = modes(f, x)
    for out in got.values():
        assert [v.dtype for v in out] == [hop.int64, hop.float32, hop.float64, hop.bool]
        assert (out[0].item(), out[2].item(), out[3].item()) == (7, 0.5, True)
        same(out[1], x.numpy() * 8)
    w = lambda x: hop.while_loop(lambda i, v: i < 3, lambda i, v: (3, v + 1.0), (0, x))
    check_all(w, (x,), (np.int64(3), x.numpy() + 1))
    s = lambda x: hop.scan(lambda c, r: ((c[0] + r.sum(), 2), r * 2), (x.sum(), 0),
                           x.reshape(3, 1))
    (total, k), ys = s(x)
    check_all(lambda x: s(x)[0][0], (x,), np.float32(x.numpy().sum() * 2))
    assert k.dtype == hop.int64 and k.item() == 2 and ys.shape == (3, 1)
    # a number that does not fit the carry's dtype is the carry check's error
    bad = lambda x: hop.fori_loop(0, 2, lambda i, c: (0.5, c[1]), (0, x))
    for run in (bad, hop.compile(bad)):
        with pytest.raises(hop.TraceError, match=r"body_fun returns .*\(constants \[0\.5\]\)"):
            run(x)


def test_a_symint_carry_updated_by_arithmetic_in_every_mode():
    def f(x, n):
        k = n.sum().item()  # a SymInt while traced (unbacked), an int eagerly
        lim = n.sum() + 3   # (comparing two unbacked SymInts would need a guard)
        i, y = hop.while_loop(lambda i, y: i < lim, lambda i, y: (i + 1, y * 2.0), (k, x))
        return y * i
    x = hop.randn(3, seed=4)
    for n in (0, 2):
        got, gm = modes(f, x, hop.tensor([n]))
        for out in got.values():
            same(out, x.numpy() * 8 * (n + 3))
    assert "item" in gm.code and "add" in gm.code


def test_a_symint_or_symfloat_carry_is_a_tensor_in_the_body_and_out_as_eager():
    """Eagerly n.item() is an int, carried as a 0-d int64 tensor; traced it is a
    SymInt, which was carried as one: the loop returned an int where eager
    returns a tensor, `i < 5` on it was a DataDependentError, a body returning
    n.item() + j for an int carry a TraceError, and a SymFloat carry one too."""
    x = hop.randn(2, seed=6)
    n = hop.tensor(2)
    while_ = lambda n, x: hop.while_loop(lambda i, y: i < 5, lambda i, y: (i + 1, y * 2.0),
                                         (n.item() + 1, x))
    fori = lambda n, x: hop.fori_loop(0, 3, lambda j, c: (c[0] + j, c[1] * 2.0), (n.item(), x))
    scan = lambda n, x: hop.scan(lambda c, r: ((c[0] + 1, c[1] + r), r), (n.item(), x),
                                 hop.ones(3, 2))[0]
    sets = lambda n, x: hop.fori_loop(0, 3, lambda j, c: (n.item() + j, c[1] * 2.0), (0, x))
    half = lambda n, x: hop.fori_loop(0, 3, lambda j, c: (c[0] * 2.0, c[1] + j * 0.5),
                                      (n.item() * 0.5, x))
    for f, want in [(while_, (np.int64(5), x.numpy() * 4)),
                    (fori, (np.int64(5), x.numpy() * 8)),
                    (scan, (np.int64(5), x.numpy() + 3)),
                    (sets, (np.int64(4), x.numpy() * 8)),
                    (half, (np.float64(8.0), x.numpy() + np.float32(1.5)))]:
        for dynamic in (False, True):
            got, _ = modes(f, n, x, dynamic=dynamic)
            for mode, out in got.items():
                assert all(isinstance(v, hop.Tensor) for v in out), (mode, out)
                for o, w in zip(out, want):
                    same(o, w)


def test_cond_branches_returning_different_python_numbers_in_every_mode():
    x = hop.randn(3, seed=5)
    for f, want in [(lambda p, x: hop.cond(p, lambda: 1, lambda: 2), (1, 2)),
                    (lambda p, x: hop.cond(p, lambda: 1.5, lambda: 0.5), (1.5, 0.5)),
                    (lambda p, x: hop.cond(p, lambda: (x, 1, "a"), lambda: (x * 2, 5, "a"))[1],
                     (1, 5)),
                    (lambda p, x: hop.switch(p.to(hop.int64), [lambda: 4, lambda: 9]), (9, 4))]:
        for p, w in zip((hop.tensor(True), hop.tensor(False)), want):
            eager = f(p, x)
            traced = hop.trace(f, p, x)(p, x)
            compiled = hop.compile(f)(p, x)
            for got in (eager, traced, compiled):
                assert got == w and type(got) is type(w), (got, w)
    # a traced cond's number is a SymInt (SymFloat) of the graph
    def g(p, x):
        c = hop.cond(p, lambda: 2, lambda: 3)
        return x * c, c + 1
    for p, c in ((hop.tensor(True), 2), (hop.tensor(False), 3)):
        y, d = hop.compile(g)(p, x)
        same(y, x.numpy() * c)
        assert d == c + 1
    # an int in one branch and a float in the other would change the type
    # eager returns; bools have no traced number: both are errors
    for a, b in ((3, 0.25), (True, False)):
        with pytest.raises(hop.TraceError, match="the branches return different structures"):
            hop.trace(lambda p: hop.cond(p, lambda: a, lambda: b), hop.tensor(True))


def test_cond_branches_returning_python_numbers_under_vmap_and_grad():
    """vmap and grad of the case above: a float is a SymFloat (a tensor of the
    graph), batched like any value; an int is an item, which vmap batches as
    a tensor of the per-example ints where it is a scalar operand of
    elementwise ops (the next tests)."""
    X = hop.tensor(np.array([[1.0, 2.0], [-3.0, 0.5]]))
    P = hop.tensor(np.array([True, False]))
    by_pred = lambda p, x: x * hop.cond(p, lambda: 2.0, lambda: 3.0)  # noqa: E731
    for run in (hop.vmap(by_pred), hop.compile(hop.vmap(by_pred))):
        same(run(P, X), X.numpy() * np.array([[2.0], [3.0]]))
    same(hop.grad(lambda X: hop.vmap(by_pred)(P, X).sum())(X), np.array([[2.0, 2.0],
                                                                         [3.0, 3.0]]))
    by_sum = lambda x: (x * hop.cond(x.sum() > 0, lambda: 2, lambda: 3)).sum()  # noqa: E731
    for run in (hop.vmap(hop.grad(by_sum)), hop.compile(hop.vmap(hop.grad(by_sum)))):
        same(run(X), np.array([[2.0, 2.0], [3.0, 3.0]]))  # row sums 3 and -2.5
    same(hop.grad(by_sum)(X), np.full((2, 2), 2.0))  # the sum 0.5 > 0
    same(hop.vmap(lambda x: x * hop.cond(hop.tensor(True), lambda: 2, lambda: 3))(X),
         X.numpy() * 2)
    ints = lambda p, x: x * hop.cond(p, lambda: 2, lambda: 3)  # noqa: E731
    for run in (hop.vmap(ints), hop.compile(hop.vmap(ints))):
        same(run(P, X), X.numpy() * np.array([[2.0], [3.0]]))
    same(hop.grad(lambda X: hop.vmap(ints)(P, X).sum())(X), np.array([[2.0, 2.0], [3.0, 3.0]]))
    per_example = hop.vmap(hop.grad(lambda p, x: ints(p, x).sum(), argnums=1))
    for run in (per_example, hop.compile(per_example)):
        same(run(P, X), np.array([[2.0, 2.0], [3.0, 3.0]]))


def _per_example(f, args, in_axes):
    """f's eager results example by example (args batched along dim 0 where
    in_axes says 0), stacked as vmap stacks them."""
    n = next(a.shape[0] for a, ax in zip(args, in_axes) if ax == 0)
    rows = [f(*(a[i] if ax == 0 else a for a, ax in zip(args, in_axes))) for i in range(n)]
    return np.stack([r.numpy() for r in rows])


def _vmap_matches_per_example(f, batch, axes):
    """vmap(f) and compiled vmap(f), for each in_axes of axes (an unbatched
    argument is the batch's example 1), give _per_example's values and dtype."""
    for in_axes in axes:
        args = tuple(a if ax == 0 else a[1] for a, ax in zip(batch, in_axes))
        want = _per_example(f, args, in_axes)
        for run in (hop.vmap(f, in_axes), hop.compile(hop.vmap(f, in_axes))):
            got = run(*args)
            assert got.numpy().dtype == want.dtype, (in_axes, got, want)
            same(got, want)


def test_vmap_of_branches_returning_python_ints_gives_the_per_example_values_and_dtypes():
    """cond/switch branches returning different Python ints under vmap: the
    int is a weak scalar beside the tensors, as eagerly (times f32 is f32,
    times i32 is i32, times i8 is i8, plus bool is i64, compared with f32 a
    bool), per example, eager, traced and compiled, with a batched and an
    unbatched predicate (index)."""
    P = hop.tensor(np.array([True, False, True]))
    I = hop.tensor(np.array([2, -1, 0, 7]))  # clamped into [0, 2] as switch does
    X = hop.tensor(np.array([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.0]], dtype=np.float32))
    c = lambda p: hop.cond(p, lambda: 2, lambda: 3)  # noqa: E731
    s = lambda i: hop.switch(i, [lambda: 1, lambda: 7, lambda: -4])  # noqa: E731
    cases = [
        (lambda p, x: c(p) * x, (P, X)),
        (lambda p, x: x - c(p), (P, X)),
        (lambda p, x: c(p) * x.to(hop.int32), (P, X)),
        (lambda p, x: x < c(p) * 1.0, (P, X)),  # 1.0: a SymFloat; the int itself below
        (lambda p, x: c(p) > x, (P, X)),
        (lambda p, x: c(p) + (x > 0), (P, X)),
        (lambda p, x: hop.where(x > 0, c(p), x), (P, X)),
        (lambda p, x: ((c(p) * x).sum() + c(p)) * x, (P, X)),
        (lambda i, x: s(i) * x.to(hop.int8), (I, hop.tensor(np.arange(8, dtype=np.float32).reshape(4, 2)))),
        (lambda i, x: x / s(i), (I, hop.tensor(np.arange(8, dtype=np.float32).reshape(4, 2)))),
    ]
    for f, batch in cases:
        _vmap_matches_per_example(f, batch, ((0, 0), (0, None), (None, 0)))


def test_vmap_and_grad_of_switch_returning_python_ints_match_the_per_example_loop():
    I = hop.tensor(np.array([2, 0, 1]))
    X = hop.tensor(np.array([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.0]]))
    f = lambda i, x: (hop.switch(i, [lambda: 1, lambda: 7, lambda: -4]) * x * x).sum()  # noqa: E731
    want = np.array([-4.0, 1.0, 7.0])[:, None] * 2 * X.numpy()
    same(hop.grad(lambda x: hop.vmap(f)(I, x).sum())(X), want)
    for run in (hop.vmap(hop.grad(f, argnums=1)), hop.compile(hop.vmap(hop.grad(f, argnums=1)))):
        same(run(I, X), want)


def test_vmap_of_int_expressions_over_branch_ints_gives_the_per_example_values_and_dtypes():
    """The branches' int in a SymInt expression before it meets a tensor
    ((n + 1) * x, 2 * n * x, n * n * x, -n * x, n // 2 * x, n % 3): computed per
    example with Python's int arithmetic (// and % round toward -inf), then
    a weak int beside the tensor, as eagerly; vmap, compiled vmap and
    grad(vmap) against the per-example eager loop."""
    P = hop.tensor(np.array([True, False, True]))
    I = hop.tensor(np.array([2, -1, 0, 7]))  # switch clamps to [0, 2]: -4, 1, 1, -4
    X = hop.tensor(np.array([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.0]], dtype=np.float32))
    XI = hop.tensor(np.arange(8, dtype=np.float32).reshape(4, 2) - 3)
    c = lambda p: hop.cond(p, lambda: 2, lambda: 3)  # noqa: E731
    s = lambda i: hop.switch(i, [lambda: 1, lambda: 7, lambda: -4])  # noqa: E731
    exprs = [
        lambda n: n + 1,
        lambda n: 2 * n,
        lambda n: n * n,
        lambda n: -n,
        lambda n: n // 2,
        lambda n: n % 3 - 5,
        lambda n: (n - 1) * (n + 2) // 3,
    ]
    for e in exprs:
        cases = [
            (lambda p, x, e=e: e(c(p)) * x, (P, X)),
            (lambda p, x, e=e: x.to(hop.int32) - e(c(p)), (P, X)),
            (lambda p, x, e=e: x < e(c(p)), (P, X)),
            (lambda i, x, e=e: e(s(i)) * x, (I, XI)),
            (lambda i, x, e=e: e(s(i)) * x.to(hop.int8), (I, XI)),
        ]
        for f, batch in cases:
            _vmap_matches_per_example(f, batch, ((0, 0), (0, None)))
        f = lambda p, x, e=e: (e(c(p)) * x * x).sum()  # noqa: E731
        want = np.stack([hop.grad(f, argnums=1)(P[k], X[k]).numpy() for k in range(3)])
        same(hop.grad(lambda x: hop.vmap(f)(P, x).sum())(X), want)
        for run in (hop.vmap(hop.grad(f, argnums=1)), hop.compile(hop.vmap(hop.grad(f, argnums=1)))):
            same(run(P, X), want)


def test_vmap_of_an_int_expression_dividing_by_a_per_example_int_is_a_clear_error():
    """2 // n divides by the per-example int, which may be 0 in an example
    (eagerly that example raises): vmap refuses rather than give 0."""
    P = hop.tensor(np.array([True, False]))
    c = lambda p: hop.cond(p, lambda: 2, lambda: 3)  # noqa: E731
    for f in (lambda p: 7 // c(p) * hop.ones(2), lambda p: 7 % c(p) * hop.ones(2)):
        with pytest.raises(hop.UnsupportedError,
                           match=r"^vmap: mul reads the int .*, whose (//|%) divides by u\d+, "
                                 r"which may be 0 in an example"):
            hop.vmap(f)(P)


def test_vmap_of_a_python_int_from_branches_used_as_a_size_is_a_clear_error():
    """A per-example int used as a size (or in an int expression, which may
    be one) cannot serve the whole batch: the error names the op."""
    P = hop.tensor(np.array([True, False]))
    c = lambda p: hop.cond(p, lambda: 2, lambda: 3)  # noqa: E731
    for f, user in ((lambda p: hop.zeros(c(p)), "zeros"),
                    (lambda p: hop.zeros(c(p) + 1), "zeros"),
                    (lambda p: hop.ones(4)[c(p) - 1], "select")):
        with pytest.raises(hop.UnsupportedError,
                           match=rf"^vmap: the op item \(item\) has no batch rule: item of a "
                                 rf"batched value is data-dependent per example, and {user} uses "
                                 rf"its int \(item\) as more than a scalar operand of an "
                                 rf"elementwise op"):
            hop.vmap(f)(P)
    # unbatched, the same functions work
    same(hop.vmap(lambda x, p: hop.zeros(c(p)) + x, (0, None))(hop.ones(2), hop.tensor(False)),
         np.ones((2, 3), np.float32))
