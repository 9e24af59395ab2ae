"""The transform campaigns' shared machinery (test_transform_campaign*.py):
values in and out (t, T), the comparisons (same_bits, close, same), the
drawn inputs, the saved-graph mode, central differences, and Campaign: a
table of programs written twice (hop's f(x, y) and the same program in torch)
under a table of compositions, checked plainly, under hop.compile and as a
traced graph saved, loaded and run again, against torch.func (functorch,
torch 1.13) per example, itself checked against central differences."""

import importlib
import importlib.util
import os
import tempfile
import warnings

import numpy as np
import pytest

import hop

F64 = hop.float64
MODES = ("plain", "compiled", "saved")


def t(a, dtype=F64):
    return hop.tensor(np.asarray(a, dtype=np.float64), dtype=dtype)


def T(a):
    import torch
    return torch.tensor(np.asarray(a, dtype=np.float64))


class _Lazy:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        # (pytest's collection asks every module global for __test__,
        # _pytestfixturefunction and the like: a private name never imports)
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)


def lazy_import(name):
    """torch or functorch for a module that checks hop against it, imported
    when a test first reads one of its attributes, not when pytest collects
    the module (torch, functorch and the sympy it imports were a third of a
    collection's CPU).  Where it cannot be imported (the sanitizer pass
    blocks torch: conftest.py) the module is skipped at collection, as
    pytest.importorskip skipped it; nothing is imported to find that out."""
    for need in dict.fromkeys(("torch", name)):
        try:
            found = importlib.util.find_spec(need) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            pytest.skip(f"could not import {need!r}", allow_module_level=True)
    return _Lazy(name)


def as_array(v):
    """A hop or torch tensor (or anything np.asarray takes) as an ndarray."""
    if isinstance(v, hop.Tensor):
        return v.numpy()
    if hasattr(v, "detach"):
        return v.detach().numpy()
    return np.asarray(v)


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    assert np.array_equal(got, want, equal_nan=True), (got, want)


def close(got, want, rtol=1e-12, atol=1e-13):
    """got's shape want's, its nan positions and infinities want's exactly,
    its finite values within the tolerance."""
    got, want = (np.asarray(as_array(v), dtype=np.float64) for v in (got, want))
    assert got.shape == want.shape, (got.shape, want.shape)
    assert (np.isnan(got) == np.isnan(want)).all(), (got, want)
    assert (got[np.isinf(want)] == want[np.isinf(want)]).all(), (got, want)
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol)


def same(got, want, rtol, atol, exact=False):
    """close() for a float64 result; exact: bit for bit too."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == np.float64
    close(got, want, rtol, atol)
    if exact:
        assert np.array_equal(got, want, equal_nan=True), (got, want, got - want)


def inputs(seed, batch, lo=2.0):
    """X: f64[batch, 3] in (-lo, lo), Y: f64[batch, 3] in (-1, 1)."""
    r = np.random.RandomState(seed)
    return r.uniform(-lo, lo, (batch, 3)), r.uniform(-1.0, 1.0, (batch, 3))


def saved(fn, *args):
    """fn traced at args, saved, and loaded again."""
    gm = hop.trace(fn, *args)
    path = os.path.join(tempfile.mkdtemp(), "f.hop")
    hop.save(gm, path)
    return hop.load(path)


def in_mode(h, mode, *args):
    """h plainly, under hop.compile, or traced at args, saved and loaded."""
    if mode == "compiled":
        return hop.compile(h)
    if mode == "saved":
        return saved(h, *args)
    assert mode == "plain", mode
    return h


def torch_grad(tf, x, y):
    """torch.func's gradient of tf(x, y) in both arguments, concatenated."""
    import functorch
    gx, gy = functorch.grad(tf, argnums=(0, 1))(T(x), T(y))
    return np.concatenate([gx.numpy(), gy.numpy()])


def grad_of(tf, **kw):
    """functorch.grad(tf, **kw), made at its first call: a module's table of
    compositions is built at import, where functorch is not imported yet
    (lazy_import)."""
    def g(*args):
        import functorch
        return functorch.grad(tf, **kw)(*args)
    return g


def fd_grad(tf, x, y, h=1e-6, n=6):
    """Central differences of torch's tf at (x, y) along the first n of the
    6 coordinates of (x, y)."""
    g = np.zeros(n)
    xy = np.concatenate([x, y])
    for i in range(n):
        e = np.zeros(6)
        e[i] = h
        xp, xm = xy + e, xy - e
        g[i] = (float(tf(T(xp[:3]), T(xp[3:]))) - float(tf(T(xm[:3]), T(xm[3:])))) / (2 * h)
    return g


class Campaign:
    """programs: {name: (hop's f(x, y), torch's)}, x, y f64[3];
    hop_of(comp, hf, tf): hop's function of (X, Y), f64[B, 3] each;
    want_of(comp, tf, X, Y): the reference, an ndarray; inputs drawn in
    (-lo, lo) for X; results compared to rtol/atol (same()); atol None:
    rtol of the result's largest finite magnitude (an element that is the
    difference of larger terms is held to the terms' scale)."""

    def __init__(self, programs, comps, hop_of, want_of, lo=2.0, rtol=1e-12, atol=1e-13):
        self.programs, self.comps = programs, comps
        self.hop_of, self.want_of = hop_of, want_of
        self.lo, self.rtol, self.atol = lo, rtol, atol

    def draws(self, batches=(1, 2, 3), modes=MODES):
        """The campaign's draws, for hypothesis's given(): a program, a
        composition, a seed, a batch size and (modes) a mode."""
        from hypothesis import strategies as st
        out = dict(prog=st.sampled_from(sorted(self.programs)), comp=st.sampled_from(self.comps),
                   seed=st.integers(0, 2 ** 16), batch=st.sampled_from(list(batches)))
        if modes:
            out["mode"] = st.sampled_from(list(modes))
        return out

    def check(self, prog, comp, seed, batch, mode="plain", exact=False):
        hf, tf = self.programs[prog]
        X, Y = inputs(seed, batch, self.lo)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = self.want_of(comp, tf, X, Y)
            h = in_mode(self.hop_of(comp, hf, tf), mode, t(X), t(Y))
            got = h(t(X), t(Y))
        assert isinstance(got, hop.Tensor)
        atol = self.atol
        if atol is None:
            fin = np.abs(np.asarray(want, dtype=np.float64))
            fin = fin[np.isfinite(fin)]
            atol = self.rtol * float(fin.max()) if fin.size else 0.0
        same(got.numpy(), want, self.rtol, atol, exact)

    def check_every_composition(self, prog, seed=None, batch=2, modes=MODES):
        """prog under each composition once: seed i (or seed) and the modes
        in turn."""
        for i, comp in enumerate(self.comps):
            self.check(prog, comp, i if seed is None else seed, batch, modes[i % len(modes)])

    def check_reference(self, prog, seed, batch, rel=1e-13, abs=None, rtol=1e-6, atol=1e-7,
                        hop_grad=False):
        """The torch program is the hop program: equal values (to rel, abs),
        and torch.func's gradient (or hop's, hop_grad: x's only) agrees with
        central differences."""
        hf, tf = self.programs[prog]
        X, Y = inputs(seed, batch, self.lo)
        for x, y in zip(X, Y):
            assert float(hf(t(x), t(y))) == pytest.approx(float(tf(T(x), T(y))), rel=rel, abs=abs)
            if hop_grad:
                g, fd = hop.grad(hf)(t(x), t(y)).numpy(), fd_grad(tf, x, y, n=3)
            else:
                g, fd = torch_grad(tf, x, y), fd_grad(tf, x, y)
            np.testing.assert_allclose(g, fd, rtol=rtol, atol=atol)
