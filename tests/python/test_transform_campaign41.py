"""Campaign 41: rare compositions of the transformations (grad, vjp, jvp,
vmap) with every HOP, checked against PyTorch's functorch (python3-torch
1.13: functorch.grad/vmap/jvp and torch.autograd), central finite
differences in float64 and JAX's documented semantics: grad of vmap of
cond, second order (jvp of grad, grad of grad) through loops, vmap of vmap
of scan, bodies closing over batched tensors of an outer vmap, gradients
with respect to tensors captured two bodies out, while_loop under reverse
mode, dynamic sizes, in_axes/out_axes variants, integer and bool outputs,
has_aux, dtype mixes, transforms of and under hop.compile, and saved graphs
of transformed functions reloaded.  Random compositions come from
hypothesis (HOP_TEST_BUDGET respected through budget.examples); hand
cases are ported from PyTorch's test/functorch/test_control_flow.py and
JAX's tests/lax_control_flow_test.py.

The findings, each a test here that failed before its fix:

1. A transformed function that stores a traced value into a NumPy array of
   its environment (`w[0] = x[0]`) raised NumPy's "setting an array element
   with a sequence" under hop.trace, and through hop.grad's own compile the
   call fell back to running eagerly, which raised "vjp: an eager call has
   no graph to differentiate" (the brief's known item).  Now the purity
   check names the write (TraceError), and a transformed call never runs
   eagerly: what would make it raises what hop met instead.
2. hop.grad / hop.vmap / hop.jvp of a big-endian or unaligned ndarray fell
   back to the eager call (warning "runs eagerly") and raised "argument 0
   (leaf 0) is ndarray; gradients are taken with respect to float ...":
   now the values are taken as a native, aligned copy (the function is
   traced, so the byte order is not seen); an ndarray subclass (np.matrix)
   is a clear TypeError.
3. Under np.errstate(all="raise") (NumPy's error state reporting), the same
   transformed calls on ndarrays ran eagerly and raised that TypeError.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import hop
from budget import examples
from transform_values import T, close, lazy_import, t

torch = lazy_import("torch")
functorch = lazy_import("functorch")

# ------------------------------------------------------------- finding 1

W_OUT = np.array([3.0, 4.0])


def _writes_traced_value(x):
    W_OUT[0] = x[0]
    return (x * W_OUT).sum()


@pytest.mark.parametrize("how", ["grad", "vmap", "jvp", "trace grad", "compile grad", "cond"])
def test_a_store_of_a_traced_value_into_an_outer_array_is_named_as_the_side_effect(how):
    x = t([1.0, 2.0])
    f = _writes_traced_value
    calls = {
        "grad": lambda: hop.grad(f)(x),
        "vmap": lambda: hop.vmap(f)(hop.stack([x, x])),
        "jvp": lambda: hop.jvp(f, (x,), (x,)),
        "trace grad": lambda: hop.trace(lambda x: hop.grad(f)(x), x),
        "compile grad": lambda: hop.compile(lambda x: hop.grad(f)(x))(x),
        "cond": lambda: hop.trace(lambda x: hop.cond(x.sum() > 0, lambda: f(x),
                                                     lambda: x.sum(), ()), x),
    }
    hop_name, which = {"vmap": ("vmap", "function"), "jvp": ("jvp", "function"),
                       "cond": ("cond", "true branch")}.get(how, ("grad", "function"))
    with pytest.raises(hop.TraceError) as e:
        calls[how]()
    assert str(e.value) == (
        f"hop.{hop_name}: the {which} has a side effect: it writes into 'W_OUT' (a NumPy array "
        f"defined outside the body); a body is traced once and must not change state outside "
        f"itself (return values instead)")
    assert W_OUT.tolist() == [3.0, 4.0]


def test_a_transformed_call_never_falls_back_to_an_eager_call_that_has_no_graph():
    # hop.grad(f)'s compile translates its run when f reads an environment
    # array; a translation that raises is the answer, never an eager run
    calls = 0

    def f(x):
        nonlocal calls
        calls += 1
        return (x * W_OUT).sum() + x[5]  # (IndexError while tracing)
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        hop.grad(f)(t([1.0, 2.0]))
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        hop.vmap(f)(t([[1.0, 2.0]]))


# ------------------------------------------------------------- finding 2

def _odd_arrays():
    native = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])
    big = native.astype(">f8")
    buf = np.zeros(native.size * 8 + 1, np.uint8)
    unaligned = np.frombuffer(buf.data, np.float64, native.size, 1).reshape(native.shape)
    unaligned[...] = native
    assert not unaligned.flags.aligned and not big.dtype.isnative
    return native, {"big-endian": big, "unaligned": unaligned}


@pytest.mark.parametrize("kind", ["big-endian", "unaligned"])
def test_transforms_take_big_endian_and_unaligned_ndarrays_as_their_values(kind):
    native, odd = _odd_arrays()
    a = odd[kind]
    f = lambda x: (x * x * x).sum()  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no "runs eagerly" warning)
        g = hop.grad(f)(a)
        v = hop.vmap(lambda r: (r * r).sum())(a)
        out, tan = hop.jvp(np.sin, (a,), (a,))
        val, g2 = hop.value_and_grad(f)(a)
    assert isinstance(g, np.ndarray) and g.dtype == np.float64 and g.dtype.isnative
    assert g.tolist() == (3 * native * native).tolist()
    assert v.tolist() == (native * native).sum(1).tolist()
    # (hop's own answer on the native array, bit for bit: NumPy's cos rounds otherwise)
    assert np.asarray(tan).tolist() == np.asarray(hop.jvp(np.sin, (native,), (native,))[1]).tolist()
    assert g2.tolist() == g.tolist() and float(val) == (native ** 3).sum()
    assert a.tolist() == native.tolist()  # (the argument is left as it was)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_transforms_refuse_an_ndarray_subclass_clearly():
    m = np.matrix([[1.0, 2.0]])
    for call in (lambda: hop.grad(lambda x: (x * x).sum())(m),
                 lambda: hop.vmap(lambda x: x * x)(m)):
        with pytest.raises(TypeError, match=r"^hop's transformations take plain ndarrays: "
                                            r"argument leaf 0 is a numpy.matrix, a subclass"):
            call()


# ------------------------------------------------------------- finding 3

def test_transforms_of_ndarrays_under_a_raising_numpy_error_state():
    a = np.array([1.0, 2.0])
    with np.errstate(all="raise"):
        assert hop.grad(lambda x: (x * x).sum())(a).tolist() == [2.0, 4.0]
        assert hop.vmap(lambda x: x * 2)(a).tolist() == [2.0, 4.0]
        out, tan = hop.jvp(lambda x: (x * x).sum(), (a,), (a,))
        assert (float(out), float(tan)) == (5.0, 10.0)


# ------------------------------------------------ the compiled grad's call

def test_compiled_grad_on_hop_numpy_arrays_takes_the_fast_call_and_keeps_its_guards():
    # bench/run.py's env_guard row: hop.compile(hop.grad(f)) on a hop.numpy
    # array, f reading a closed-over ndarray; its steady call went through
    # the runner's general path (flatten, rebuild: ~71K instructions a call,
    # ~30K on the fast one, callgrind, build/rel)
    import hop.numpy as hnp
    w = np.linspace(0.5, 1.5, 16)

    def loss(x):
        return (x * (w * 2)).sum()
    cf = hop.compile(hop.grad(loss), fullgraph=True)
    x = hnp.asarray(np.ones(16))
    assert np.array_equal(np.asarray(cf(x)), w * 2)
    runner = cf._entries[-1].runner
    assert runner._hnflat == 1
    seen = []
    real = runner.tensors
    runner.tensors = lambda *a, **k: seen.append(1) or real(*a, **k)
    try:
        for _ in range(3):
            g = cf(x)
            assert type(g) is hnp.ndarray and np.array_equal(np.asarray(g), w * 2)
        w[3] = 7.0  # (the contents guard, checked on the fast call too)
        assert np.array_equal(np.asarray(cf(x)), w * 2)
        assert not seen
        # a read-only argument (another structure: its own plan) and a 0-d
        # one take the general path, as before
        ro = hnp.asarray(np.ones(16))
        ro.setflags(write=False)
        assert np.array_equal(np.asarray(cf(ro)), w * 2)
    finally:
        runner.tensors = real
    s = hop.compile(hop.grad(lambda x: (x * x * 3.0).sum()))
    assert float(s(hnp.asarray(2.0))) == 12.0
    assert float(s(hnp.float64(2.0))) == 12.0


# ------------------------------------- random compositions against PyTorch
#
# A program is a list of layers over h (f64[3]) with y (f64[3], an argument
# the bodies close over: lifted through every body between); each layer is
# written twice, with hop's HOPs and as the plain PyTorch program
# (torch.where for cond, Python loops for the loops), and every composition
# is checked against functorch's on the same values.

TABLE = np.array([[0.5, -0.25, 1.0], [0.75, 0.1, -0.5], [-0.3, 0.2, 0.4]])


# (the same methods on hop and torch tensors)
_OPS = {"sin": lambda h, y: h.sin(), "tanh": lambda h, y: h.tanh(), "muly": lambda h, y: h * y,
        "sq": lambda h, y: h * h * 0.5, "yexp": lambda h, y: h + (y * 0.1).exp()}


def _hop_layer(layer, h, y):
    kind = layer[0]
    if kind == "op":
        return _OPS[layer[1]](h, y)
    sub = lambda p, v: _hop_prog(p, v, y)  # noqa: E731
    if kind == "cond":
        return hop.cond((h * y).sum() > 0, lambda: sub(layer[1], h), lambda: sub(layer[2], h), ())
    if kind == "wrap":
        return hop.wrap(lambda v: sub(layer[1], v), h)
    if kind == "invoke":
        return hop.invoke_subgraph(lambda v: sub(layer[1], v), h)
    if kind == "map":
        return hop.map(lambda r: _hop_prog(layer[1], r[0:1], r[1:2]),
                       hop.stack([h, y], 1)).reshape(3)
    if kind == "while":
        return hop.while_loop(lambda i, v: i < layer[1], lambda i, v: (i + 1, sub(layer[2], v)),
                              (0, h))[1]
    if kind == "fori":
        return hop.fori_loop(0, layer[1], lambda i, v: sub(layer[2], v) + i * 0.1, h)
    if kind == "scan":
        tab = t(TABLE[:layer[1]])
        c, ys = hop.scan(lambda c, r: (sub(layer[2], c) * r.cos().mean(), c * r.sum()), h,
                         tab)
        return c + ys.sum(0)
    raise AssertionError(kind)


def _hop_prog(prog, h, y):
    for layer in prog:
        h = _hop_layer(layer, h, y)
    return h


def _torch_layer(layer, h, y):
    kind = layer[0]
    if kind == "op":
        return _OPS[layer[1]](h, y)
    sub = lambda p, v: _torch_prog(p, v, y)  # noqa: E731
    if kind == "cond":
        return torch.where((h * y).sum() > 0, sub(layer[1], h), sub(layer[2], h))
    if kind in ("wrap", "invoke"):
        return sub(layer[1], h)
    if kind == "map":
        return torch.stack([_torch_prog(layer[1], h[i:i + 1], y[i:i + 1])
                            for i in range(3)]).reshape(3)
    if kind == "while":
        for _ in range(layer[1]):
            h = sub(layer[2], h)
        return h
    if kind == "fori":
        for i in range(layer[1]):
            h = sub(layer[2], h) + i * 0.1
        return h
    if kind == "scan":
        ys = []
        for r in T(TABLE[:layer[1]]):
            ys.append(h * r.sum())
            h = sub(layer[2], h) * r.cos().mean()
        return h + (torch.stack(ys).sum(0) if ys else torch.zeros_like(h))
    raise AssertionError(kind)


def _torch_prog(prog, h, y):
    for layer in prog:
        h = _torch_layer(layer, h, y)
    return h


@st.composite
def _programs(draw, depth=0, mapped=False):
    kinds = ["op", "op"] + (["cond", "wrap", "invoke", "while", "fori", "scan"]
                            + ([] if mapped else ["map"]) if depth < 2 else [])
    out = []
    for _ in range(draw(st.integers(1, 2))):
        k = draw(st.sampled_from(kinds))
        sub = lambda: draw(_programs(depth + 1, mapped or k == "map"))  # noqa: E731
        if k == "op":
            out.append(["op", draw(st.sampled_from(["sin", "tanh", "muly", "sq", "yexp"]))])
        elif k == "cond":
            out.append(["cond", sub(), sub()])
        elif k in ("wrap", "invoke", "map"):
            out.append([k, sub()])
        else:
            out.append([k, draw(st.integers(0, 3)), sub()])
    return out


# Each composition: (hop's, functorch's) functions of (X: f64[B, 3], y: f64[3]).
def _f(p):
    return (lambda h, y: _hop_prog(p, h, y).sum()), (lambda h, y: _torch_prog(p, h, y).sum())


COMPOSITIONS = {
    "vmap(grad)": lambda hf, tf: (hop.vmap(hop.grad(hf), in_axes=(0, None)),
                                  functorch.vmap(functorch.grad(tf), in_dims=(0, None))),
    "grad(vmap) wrt y": lambda hf, tf: (
        hop.grad(lambda X, y: hop.vmap(hf, in_axes=(0, None))(X, y).sum(), argnums=1),
        functorch.grad(lambda X, y: functorch.vmap(tf, in_dims=(0, None))(X, y).sum(),
                       argnums=1)),
    "vmap(jvp(grad))": lambda hf, tf: (
        hop.vmap(lambda x, y: hop.jvp(lambda v: hop.grad(hf)(v, y), (x,), (y,))[1],
                 in_axes=(0, None)),
        functorch.vmap(lambda x, y: functorch.jvp(lambda v: functorch.grad(tf)(v, y), (x,),
                                                  (y,))[1], in_dims=(0, None))),
    "vmap(vmap) in_axes 1": lambda hf, tf: (
        lambda X, y: hop.vmap(hop.vmap(hf, in_axes=(0, None)), in_axes=(1, None))(
            hop.stack([X, X * 0.5], 1), y),
        lambda X, y: functorch.vmap(functorch.vmap(tf, in_dims=(0, None)), in_dims=(1, None))(
            torch.stack([X, X * 0.5], 1), y)),
    "vmap over y, out_axes 1": lambda hf, tf: (
        lambda X, y: hop.vmap(hop.vmap(hop.grad(hf, argnums=1), in_axes=(None, 0)),
                              in_axes=(0, None), out_axes=1)(X, hop.stack([y, -y])),
        lambda X, y: functorch.vmap(functorch.vmap(functorch.grad(tf, argnums=1),
                                                   in_dims=(None, 0)),
                                    in_dims=(0, None), out_dims=1)(X, torch.stack([y, -y]))),
    "grad(grad) wrt (x, y)": lambda hf, tf: (
        hop.vmap(lambda x, y: hop.grad(lambda a, b: hop.grad(hf, argnums=(0, 1))(a, b)[0].sum(),
                                       argnums=1)(x, y), in_axes=(0, None)),
        functorch.vmap(lambda x, y: functorch.grad(
            lambda a, b: functorch.grad(tf, argnums=(0, 1))(a, b)[0].sum(), argnums=1)(x, y),
            in_dims=(0, None))),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(prog=_programs(), comp=st.sampled_from(sorted(COMPOSITIONS)),
       seed=st.integers(0, 2 ** 16), compiled=st.booleans())
def test_random_compositions_agree_with_functorch(prog, comp, seed, compiled):
    r = np.random.RandomState(seed)
    X, y = r.uniform(-1.0, 1.0, (2, 3)), r.uniform(-1.0, 1.0, 3)
    hf, tf = _f(prog)
    h, tr = COMPOSITIONS[comp](hf, tf)
    if compiled:
        h = hop.compile(h)
    want = tr(T(X), T(y))
    # (repeated squaring overflows: a loop's forward mode instantiates a
    # carry's zero tangent, and its first step multiplies it by inf, nan
    # where torch has inf; reverse mode skips zero cotangents, see
    # test_loop_second_order.py)
    assume(np.isfinite(want.detach().numpy()).all())
    got = h(t(X), t(y))
    close(got, want, rtol=1e-9, atol=1e-10)


# ------------------------------- second order where the forward overflows
#
# grad of grad differentiates the first grad's call (a vjp HOP), whose
# value output nothing differentiates again.  Its cotangent was a tensor of
# zeros, so the backward body computed 0 * inf = NaN where that output's
# partial overflowed (0.5 * a * a at a = 1e200), though the answer, a, is
# finite: PyTorch and JAX skip the output (a symbolic zero), as hop's
# wrap-like HOPs (vjp, jvp, wrap, invoke_subgraph, cond, switch) now do.

OVERFLOWING = {
    "plain": lambda a, b: ((a * a * 0.5) * b).sum(),
    "wrap": lambda a, b: hop.wrap(lambda u, v: (u * u * 0.5) * v, a, b).sum(),
    "invoke_subgraph": lambda a, b: hop.invoke_subgraph(lambda u, v: (u * u * 0.5) * v, a,
                                                        b).sum(),
    "cond": lambda a, b: hop.cond(b.sum() > 0, lambda: (a * a * 0.5) * b, lambda: a * b,
                                  ()).sum(),
    "map": lambda a, b: (hop.map(lambda r: r * r * 0.5, a.reshape(2, 1)).reshape(2) * b).sum(),
}


def _grad_grad(f):
    return lambda a, b: hop.grad(lambda u, v: hop.grad(f, argnums=(0, 1))(u, v)[0].sum(),
                                 argnums=1)(a, b)


@pytest.mark.parametrize("name", sorted(OVERFLOWING))
def test_grad_of_grad_skips_an_output_nothing_differentiates(name):
    f = OVERFLOWING[name]
    a, b = np.array([1e200, 3.0]), np.array([2.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = _grad_grad(f)(t(a), t(b))
        traced = hop.compile(_grad_grad(f))(t(a), t(b))
    want = functorch.grad(lambda u, v: functorch.grad(lambda p, q: ((p * p * 0.5) * q).sum(),
                                                      argnums=(0, 1))(u, v)[0].sum(),
                          argnums=1)(T(a), T(b))
    assert want.tolist() == [1e200, 3.0]
    assert got.tolist() == traced.tolist() == [1e200, 3.0]
