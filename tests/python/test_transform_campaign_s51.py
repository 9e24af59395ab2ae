"""Transform campaign, fifty-first session: compositions of depth 2 and 3 of
grad, jvp and vmap (grad of grad, jvp of grad, grad of jvp, vmap of grad,
grad of vmap, vmap of vmap with different in_axes and out_axes, vmap of
jvp of grad, jvp of vmap of grad, third order) around each HOP (cond with a
data-dependent predicate, a constant one and a compacted one, map, scan,
fori_loop in fori_loop, while_loop, associative_scan, wrap,
invoke_subgraph, cond in map), whose bodies close over the outer x and w.
Reference: the same program in torch with Python control flow, through
torch.func's same composition (functorch, torch 1.13), and a loop over the
examples for each vmap.  A deterministic table: each program under three
compositions (the full table, 11 x 18, ran clean at the session's end over
seeds 0-5), and invoke_subgraph under all of them (it found the session's
bug: a shared subgraph whose body closed over its first call's argument
read the later calls' argument instead, wrong in every mode)."""

import warnings

import numpy as np
import pytest

import hop

torch = pytest.importorskip("torch")
functorch = pytest.importorskip("functorch")

F = hop.float64


def t(a):
    return hop.tensor(np.asarray(a, dtype=np.float64), dtype=F)


def T(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


# ------------------------------------------------------------ the programs
# (hop f(x, w), torch f(x, w)); x, w f64[3], closed over by the bodies
def h_cond_data(x, w):
    return hop.cond(x.sum() > 0, lambda: (x * w).sin() * x, lambda: (x + w).exp() * 0.5, ()).sum()
def t_cond_data(x, w):
    return ((x * w).sin() * x if bool(x.sum() > 0) else (x + w).exp() * 0.5).sum()
def h_cond_const(x, w):
    return hop.cond(w.sum() > 0, lambda: (x * w).sin() * x, lambda: (x * x + w).exp() * 0.5, ()).sum()
def t_cond_const(x, w):
    return ((x * w).sin() * x if bool(w.sum() > 0) else (x * x + w).exp() * 0.5).sum()
def h_map(x, w):
    return hop.map(lambda r: (r * w).tanh() * x.sum() + r * r, hop.stack([x, x * w])).sum()
def t_map(x, w):
    return sum(((r * w).tanh() * x.sum() + r * r).sum() for r in (x, x * w))
def h_scan(x, w):
    c, ys = hop.scan(lambda c, r: ((c * r + w).sin(), (c * x).sum()), x, hop.stack([w, x, w * x]))
    return c.sum() + (ys * ys).sum()
def t_scan(x, w):
    c, acc = x, 0.0
    for r in (w, x, w * x):
        y = (c * x).sum(); c = (c * r + w).sin(); acc = acc + y * y
    return c.sum() + acc
def h_fori(x, w):
    return hop.fori_loop(0, 3, lambda i, c: c * w.cos() + x[i] * c.sin(), x).sum()
def t_fori(x, w):
    c = x
    for i in range(3): c = c * w.cos() + x[i] * c.sin()
    return c.sum()
def h_while(x, w):
    i, c = hop.while_loop(lambda i, c: (i < 5).logical_and(c.abs().sum() < 8.0),
                          lambda i, c: (i + 1, c * 1.5 + w * x), (hop.tensor(0), x))
    return (c * c).sum()
def t_while(x, w):
    i, c = 0, x
    while i < 5 and bool(c.abs().sum() < 8.0):
        i, c = i + 1, c * 1.5 + w * x
    return (c * c).sum()
def h_ascan(x, w):
    return (hop.associative_scan(lambda a, b: a * b, (x * w).sin() + 1.5) * w).sum()
def t_ascan(x, w):
    return (torch.cumprod((x * w).sin() + 1.5, 0) * w).sum()
def h_wrap(x, w):
    return hop.wrap(lambda z: (z * w).sin().sum() * x.prod(), x * 2.0)
def t_wrap(x, w):
    return ((x * 2.0) * w).sin().sum() * x.prod()
def h_invoke(x, w):
    g = lambda z: (z * w).exp().sum() * x[0]
    return hop.invoke_subgraph(g, x) + hop.invoke_subgraph(g, x * 0.5)
def t_invoke(x, w):
    g = lambda z: (z * w).exp().sum() * x[0]
    return g(x) + g(x * 0.5)
def h_cond_heavy(x, w):
    m = hop.stack([w, x, w * x])
    return hop.cond(x.sum() > 0, lambda: (m @ x).tanh() @ w, lambda: (x.exp() * w).sum() + (m @ w).sum(), ())
def t_cond_heavy(x, w):
    m = torch.stack([w, x, w * x])
    return (m @ x).tanh() @ w if bool(x.sum() > 0) else (x.exp() * w).sum() + (m @ w).sum()
def h_while_fori(x, w):
    def body(i, c):
        return hop.fori_loop(0, 2, lambda j, d: d * w + x.sin(), c * 0.5)
    return (hop.fori_loop(0, 2, body, x) ** 2).sum()
def t_while_fori(x, w):
    c = x
    for i in range(2):
        d = c * 0.5
        for j in range(2): d = d * w + x.sin()
        c = d
    return (c ** 2).sum()
def h_map_cond(x, w):
    return hop.map(lambda r: hop.cond(r.sum() > 0, lambda: (r * w).sin(), lambda: r.exp() * x, ()), hop.stack([x, -x * w])).sum()
def t_map_cond(x, w):
    return sum(((r * w).sin() if bool(r.sum() > 0) else r.exp() * x).sum() for r in (x, -x * w))
PROGS = {n[2:]: (globals()[n], globals()["t_" + n[2:]]) for n in list(globals()) if n.startswith("h_")}

V = np.array([0.3, -0.7, 0.5])
def ref_grad(tf, w): return lambda x: functorch.grad(lambda a: tf(a, w))(x)
COMPS = {}
# each: (hop_of(hf, W) -> fn(X, Wb), want_of(tf, X, W))
COMPS["grad(grad.v)"] = (
    lambda hf: lambda x, w: hop.grad(lambda a: (hop.grad(lambda b: hf(b, w))(a) * t(V)).sum())(x),
    lambda tf, x, w: functorch.grad(lambda a: (functorch.grad(lambda b: tf(b, w))(a) * T(V)).sum())(x))
COMPS["jvp(grad)"] = (
    lambda hf: lambda x, w: hop.jvp(hop.grad(lambda b: hf(b, w)), (x,), (t(V),))[1],
    lambda tf, x, w: functorch.jvp(functorch.grad(lambda b: tf(b, w)), (x,), (T(V),))[1])
COMPS["grad(jvp)"] = (
    lambda hf: lambda x, w: hop.grad(lambda a: hop.jvp(lambda b: hf(b, w), (a,), (t(V),))[1])(x),
    lambda tf, x, w: functorch.grad(lambda a: functorch.jvp(lambda b: tf(b, w), (a,), (T(V),))[1])(x))
COMPS["grad(grad) wrt w"] = (
    lambda hf: lambda x, w: hop.grad(lambda c: (hop.grad(lambda b: hf(b, c))(x) * t(V)).sum())(w),
    lambda tf, x, w: functorch.grad(lambda c: (functorch.grad(lambda b: tf(b, c))(x) * T(V)).sum())(w))
COMPS["grad(grad(grad.v).v)"] = (
    lambda hf: lambda x, w: hop.grad(lambda a0: (hop.grad(lambda a: (hop.grad(lambda b: hf(b, w))(a) * t(V)).sum())(a0) * t(V)).sum())(x),
    lambda tf, x, w: functorch.grad(lambda a0: (functorch.grad(lambda a: (functorch.grad(lambda b: tf(b, w))(a) * T(V)).sum())(a0) * T(V)).sum())(x))
COMPS["jvp(jvp)"] = (
    lambda hf: lambda x, w: hop.jvp(lambda a: hop.jvp(lambda b: hf(b, w), (a,), (t(V),))[1], (x,), (w,))[1],
    lambda tf, x, w: functorch.jvp(lambda a: functorch.jvp(lambda b: tf(b, w), (a,), (T(V),))[1], (x,), (w,))[1])
COMPS["jvp wrt w of grad"] = (
    lambda hf: lambda x, w: hop.jvp(lambda c: hop.grad(lambda b: hf(b, c))(x), (w,), (t(V),))[1],
    lambda tf, x, w: functorch.jvp(lambda c: functorch.grad(lambda b: tf(b, c))(x), (w,), (T(V),))[1])
# batched ones: X [B,3], W [3] (or [B,3])
BCOMPS = {}
BCOMPS["vmap(grad)"] = (
    lambda hf: lambda X, W: hop.vmap(hop.grad(hf), in_axes=(0, None))(X, W),
    lambda tf, X, W: torch.stack([functorch.grad(tf)(x, W) for x in X]))
BCOMPS["grad(vmap)"] = (
    lambda hf: lambda X, W: hop.grad(lambda A: hop.vmap(hf, in_axes=(0, None))(A, W).sum())(X),
    lambda tf, X, W: torch.stack([functorch.grad(tf)(x, W) for x in X]))
BCOMPS["grad(vmap) wrt w"] = (
    lambda hf: lambda X, W: hop.grad(lambda c: hop.vmap(lambda a: hf(a, c))(X).sum())(W),
    lambda tf, X, W: sum(functorch.grad(lambda c: tf(x, c))(W) for x in X))
BCOMPS["vmap(vmap) in (0,None),(None,0)"] = (
    lambda hf: lambda X, W: hop.vmap(lambda x: hop.vmap(hf, in_axes=(None, 0))(x, hop.stack([W, W * 0.5 + X[0]])), in_axes=0)(X),
    lambda tf, X, W: torch.stack([torch.stack([tf(x, w) for w in (W, W * 0.5 + X[0])]) for x in X]))
BCOMPS["vmap(jvp(grad))"] = (
    lambda hf: lambda X, W: hop.vmap(lambda a: hop.jvp(hop.grad(lambda b: hf(b, W)), (a,), (t(V),))[1])(X),
    lambda tf, X, W: torch.stack([functorch.jvp(functorch.grad(lambda b: tf(b, W)), (x,), (T(V),))[1] for x in X]))
BCOMPS["vmap(grad(grad.v))"] = (
    lambda hf: lambda X, W: hop.vmap(lambda x: hop.grad(lambda a: (hop.grad(lambda b: hf(b, W))(a) * t(V)).sum())(x))(X),
    lambda tf, X, W: torch.stack([functorch.grad(lambda a: (functorch.grad(lambda b: tf(b, W))(a) * T(V)).sum())(x) for x in X]))
BCOMPS["jvp(vmap)"] = (
    lambda hf: lambda X, W: hop.jvp(lambda A: hop.vmap(hf, in_axes=(0, None))(A, W), (X,), (X * 0.5 + 0.25,))[1],
    lambda tf, X, W: torch.stack([functorch.jvp(lambda a: tf(a, W), (x,), (x * 0.5 + 0.25,))[1] for x in X]))
BCOMPS["vmap(vmap(grad)) in (1, 0)"] = (
    lambda hf: lambda X, W: hop.vmap(hop.vmap(hop.grad(hf), in_axes=(0, None)), in_axes=(1, None))(hop.stack([X, X * 0.5], 1), W),
    lambda tf, X, W: torch.stack([torch.stack([functorch.grad(tf)(x, W) for x in XX]) for XX in (X, X * 0.5)]))

BCOMPS["grad(vmap(vmap))"] = (
    lambda hf: lambda X, W: hop.grad(lambda A: hop.vmap(lambda x: hop.vmap(hf, in_axes=(None, 0))(x, hop.stack([W, x * 0.5])))(A).sum())(X),
    lambda tf, X, W: torch.stack([functorch.grad(lambda x: tf(x, W) + tf(x, x * 0.5))(x) for x in X]))
BCOMPS["vmap(grad) in (0,0)"] = (
    lambda hf: lambda X, W: hop.vmap(hop.grad(hf, argnums=(0, 1)))(X, X * W)[1],
    lambda tf, X, W: torch.stack([functorch.grad(tf, argnums=(0, 1))(x, x * W)[1] for x in X]))
BCOMPS["vmap(vmap) in 1 out 1"] = (
    lambda hf: lambda X, W: hop.vmap(hop.vmap(hf, in_axes=(0, None)), in_axes=(1, None), out_axes=1)(hop.stack([X, X.cos()], 1), W),
    lambda tf, X, W: torch.stack([torch.stack([tf(x, W) for x in XX]) for XX in (X, X.cos())], 1))
BCOMPS["jvp(vmap(grad))"] = (
    lambda hf: lambda X, W: hop.jvp(lambda A: hop.vmap(hop.grad(hf), in_axes=(0, None))(A, W), (X,), (X.sin(),))[1],
    lambda tf, X, W: torch.stack([functorch.jvp(lambda a: functorch.grad(tf)(a, W), (x,), (x.sin(),))[1] for x in X]))
BCOMPS["vmap(jvp wrt w)"] = (
    lambda hf: lambda X, W: hop.vmap(lambda x: hop.jvp(lambda c: hf(x, c), (W,), (x,))[1])(X),
    lambda tf, X, W: torch.stack([functorch.jvp(lambda c: tf(x, c), (W,), (x,))[1] for x in X]))


ALL = {**COMPS, **BCOMPS}
NAMES = sorted(ALL)
TABLE = sorted({(p, NAMES[(i * 7 + k * 5) % len(NAMES)]) for i, p in enumerate(sorted(PROGS))
                for k in range(2)} | {("invoke", c) for c in NAMES[::3]})


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("prog, comp", TABLE, ids=lambda v: v)
def test_composition_is_torch_funcs(prog, comp):
    hf, tf = PROGS[prog]
    hop_of, want_of = ALL[comp]
    r = np.random.RandomState(len(prog) * 31 + len(comp))
    X, W = r.uniform(-1.2, 1.2, (3, 3)), r.uniform(-1.0, 1.0, 3)
    batched = comp in BCOMPS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = want_of(tf, T(X) if batched else T(X[0]), T(W)).numpy()
        got = hop_of(hf)(t(X) if batched else t(X[0]), t(W))
    assert isinstance(got, hop.Tensor) and got.dtype == F
    got = got.numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
