"""Campaign s40: rare compositions of the transformations with HOPs, saved
graphs and symbolic sizes, beyond test_transform_campaign_s39.py: vmap over
a batch of 0 (and 1) examples through every HOP and under grad, jvp and a
second vmap; nested transforms 2-3 deep (vmap of jvp of grad, jacfwd /
jacrev of vmap of scan, hessians through cond, switch and associative_scan,
grad of vmap of while_loop with a batched predicate); bodies that close
over outer values and symbolic sizes three HOPs deep; integer, bool,
float16 and complex carries; transposed and stepped operands; each
eagerly, traced, compiled and saved + loaded.  References: torch.autograd
(float64), loops over the examples, NumPy.

The findings, each a test here that failed before its fix:

1. vmap over a batch of size 0 of a HOP that vmap runs as a loop over the
   examples (associative_scan, a foreign kernel's call) raised hop.Error
   "verify: vmap_body_0_vmap: node map: map: xs 0 is not a tensor with rows
   to map over": the loop is a map, which cannot run 0 rows.  The loop over
   no example is now each output's empty stack (batching/batching.c
   hop_batch_loop).
4. vmap over a batch of 0 of a reshape with -1 (x.reshape(2, -1), a ravel,
   hnp.take without an axis) or of a flattened argmax was a ShapeError
   "cannot infer the -1 in [0, 2, -1]": the batched reshape now takes the
   -1 from one example's size (batching/op_rules.c batch_reshape,
   batch_argmax).

Found, not fixed here (other owners' files; tests at the end, strict xfails
until the forty-first session fixed 2 and 3):
2. a traced or compiled float matmul of an operand BLAS cannot read (a
   stepped or permuted view) is computed by the naive loop where eager
   copies it for BLAS: other bits (runtime/);
3. vmap of a vmap over 0 inner examples, of an output that depends on the
   outer batch only: InvalidError from select (hop/vmap.c);
5. hop.compile: a HOP body traced after the compiled function stored into
   a pre-existing list or dict reads the old contents (python/hop/_frame*).
"""

import warnings

import numpy as np
import pytest

import hop
from transform_values import F64, same_bits, t

# ------------------------------------------- 1. vmap's loop over a batch of 0

def _cumsum(a):
    return hop.associative_scan(lambda p, q: p + q, a)


@pytest.mark.parametrize("dtype", [F64, hop.int32, hop.float16])
def test_vmap_of_an_associative_scan_over_an_empty_batch_is_empty(dtype):
    z = hop.zeros(0, 3, dtype=dtype)
    want = np.zeros((0, 3), dtype=z.numpy().dtype)
    f = lambda a: hop.vmap(_cumsum)(a)  # noqa: E731
    for run in (f, hop.trace(f, z), hop.compile(f)):
        same_bits(run(z).numpy(), want)
    same_bits(hop.vmap(_cumsum, out_axes=1)(z).numpy(), want.T)
    same_bits(hop.vmap(hop.vmap(_cumsum))(hop.zeros(2, 0, 3, dtype=dtype)).numpy(),
              np.zeros((2, 0, 3), dtype=want.dtype))
    same_bits(hop.vmap(hop.vmap(_cumsum))(hop.zeros(0, 2, 3, dtype=dtype)).numpy(),
              np.zeros((0, 2, 3), dtype=want.dtype))


def test_transforms_of_a_vmap_loop_over_an_empty_batch(tmp_path):
    z = t(np.zeros((0, 3)))
    same_bits(hop.grad(lambda a: hop.vmap(_cumsum)(a).sum())(z).numpy(), np.zeros((0, 3)))
    same_bits(hop.vmap(hop.grad(lambda a: _cumsum(a).sum()))(z).numpy(), np.zeros((0, 3)))
    p, tn = hop.jvp(hop.vmap(_cumsum), (z,), (z,))
    same_bits(p.numpy(), np.zeros((0, 3)))
    same_bits(tn.numpy(), np.zeros((0, 3)))
    path = str(tmp_path / "empty.hop")
    hop.save(hop.trace(lambda a: hop.vmap(_cumsum)(a), z), path)
    same_bits(hop.load(path)(z).numpy(), np.zeros((0, 3)))


SAXPY = "void saxpy(int64_t n, float a, const float *x, float *y)"


def test_vmap_of_a_foreign_kernel_over_an_empty_batch(kernels):
    # (a foreign kernel has no batch rule: vmap runs it as a loop)
    import ctypes
    F = ctypes.POINTER(ctypes.c_float)

    @ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_float, F, F)
    def _saxpy(n, a, x, y):
        for i in range(n):
            y[i] += a * x[i]

    saxpy = kernels(SAXPY, _saxpy)
    f = hop.vmap(lambda x, y: saxpy(3, 2.0, x, y) + 1)
    x = hop.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    same_bits(f(x, x).numpy(), np.arange(6, dtype=np.float32).reshape(2, 3) * 3 + 1)
    z = hop.zeros(0, 3)
    same_bits(f(z, z).numpy(), np.zeros((0, 3), np.float32))
    same_bits(hop.vmap(lambda x: saxpy(3, 2.0, x, x), out_axes=1)(z).numpy(),
              np.zeros((3, 0), np.float32))


# ------------------------------------------- 4. vmap's reshape with -1 over a batch of 0

@pytest.mark.parametrize("f, shape", [
    (lambda x: x.reshape(2, -1).sin(), (2, 10)),
    (lambda x: x.reshape(-1), (20,)),
    (lambda x: x.view(-1, 4) * 2, (5, 4)),
])
def test_vmap_of_a_reshape_with_minus_one_over_an_empty_batch(f, shape):
    # (the batched reshape [0, 2, -1] has no elements to infer the -1 from:
    # ShapeError "cannot infer the -1 in [0, 2, -1] for f64[0, 4, 5]")
    z = t(np.zeros((0, 4, 5)))
    want = np.zeros((0,) + shape)
    for run in (hop.vmap(f), hop.trace(hop.vmap(f), z), hop.compile(hop.vmap(f))):
        same_bits(run(z).numpy(), want)
    same_bits(hop.grad(lambda a: hop.vmap(f)(a).sum())(z).numpy(), np.zeros((0, 4, 5)))
    same_bits(hop.jvp(hop.vmap(f), (z,), (z,))[1].numpy(), want)
    same_bits(hop.vmap(hop.vmap(f))(t(np.zeros((0, 3, 4, 5)))).numpy(), np.zeros((0, 3) + shape))


def test_vmap_of_a_flattened_argmax_and_ravel_over_an_empty_batch():
    import hop.numpy as hnp
    z = t(np.zeros((0, 4, 5)))
    same_bits(hop.vmap(lambda x: x.argmax())(z).numpy(), np.zeros((0,), np.int64))
    same_bits(hop.vmap(lambda x: hnp.argmax(x, keepdims=True))(z).numpy(),
              np.zeros((0, 1, 1), np.int64))
    same_bits(hop.vmap(lambda x: hnp.take(x, hop.tensor([3, 0])))(z).numpy(), np.zeros((0, 2)))
    c, ys = hop.vmap(lambda x: hop.scan(lambda c, r: (c + r.reshape(-1).sum(), r.reshape(-1, 1)),
                                        x[0, 0] * 0, x))(z)
    same_bits(c.numpy(), np.zeros((0,)))
    same_bits(ys.numpy(), np.zeros((0, 4, 5, 1)))


# ------------------------------------------- found here, fixed in the forty-first session

def test_a_traced_matmul_of_a_stepped_view_has_eagers_bits():
    r = np.random.RandomState(1)
    x, v = t(r.uniform(-1, 1, (6, 40))), t(r.uniform(-1, 1, (20, 3)))
    f = lambda x, v: x[:, ::2] @ v  # noqa: E731
    want = f(x, v).numpy()
    same_bits(hop.trace(f, x, v)(x, v).numpy(), want)
    same_bits(hop.compile(f)(x, v).numpy(), want)


def test_vmap_of_a_vmap_over_no_inner_example_of_an_outer_only_output():
    X = t(np.arange(6.0).reshape(2, 3))
    Y0 = t(np.zeros((0, 3)))
    same_bits(hop.vmap(lambda x: hop.vmap(lambda y: x * 2)(Y0))(X).numpy(), np.zeros((2, 0, 3)))
    same_bits(hop.vmap(lambda x: hop.vmap(lambda y: x * 2, out_axes=None)(Y0))(X).numpy(),
              X.numpy() * 2)


_S = [1.0]
_D = {"k": 1.0}
_G = [1.0]


def _scaled(v):
    return v * _S[0]


def _store_between_two_wraps(x):
    a = hop.wrap(_scaled, x)
    _S[0] = 2.0
    b = hop.wrap(_scaled, x)
    _S[0] = 1.0
    return a, b


def _dict_store_then_cond(x):
    _D["k"] = 3.0
    r = hop.cond(x.sum() > 0, lambda v: v * _D["k"], lambda v: v - _D["k"], (x,))
    _D["k"] = 1.0
    return r


def _append_then_scan(x):
    _G.append(2.0)
    r = hop.scan(lambda c, v: (c + v * len(_G), c), x[0], x)
    del _G[1:]
    return r


def _store_then_grad(x):
    _S[0] = 5.0
    g = hop.grad(lambda v: _scaled(v).sum())(x)
    _S[0] = 1.0
    return g


def _store_then_vmap_in_a_closure(x):
    box = {"s": _S}
    _S[0] = 4.0
    r = hop.vmap(lambda v: v * box["s"][0])(x)
    _S[0] = 1.0
    return r


def _store_then_invoke_subgraph(x):
    _S[0] = 6.0
    r = hop.invoke_subgraph(_scaled, x)
    _S[0] = 1.0
    return r


@pytest.mark.parametrize("fn", [_store_between_two_wraps, _dict_store_then_cond, _append_then_scan,
                                _store_then_grad, _store_then_vmap_in_a_closure,
                                _store_then_invoke_subgraph])
def test_compiled_hop_body_sees_an_earlier_store_into_a_container(fn):
    """Finding 5: hop.compile keeps a store into a list or dict that existed
    before the call in a shadow until the plan runs; a HOP body traced after
    it read the old contents (a silently wrong answer).  Such a call now
    makes the function run eagerly, with eager's values and effects, on
    every call."""
    x = t([1.0, 2.0])
    want = fn(x)
    cf = hop.compile(fn)
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = cf(x)
        assert _S == [1.0] and _D == {"k": 1.0} and _G == [1.0]
        got, want_ = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for g, w in zip(got, want_):
            same_bits(g.numpy(), w.numpy())


def test_a_store_into_a_container_no_hop_body_reads_still_compiles():
    """The check follows what the body reads: a store into a list the body
    does not reach leaves the function compiled (one plan, no warning)."""
    other = [0]

    def f(x):
        other[0] = other[0] + 1
        return hop.wrap(_scaled, x)

    cf = hop.compile(f)
    x = t([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        same_bits(cf(x).numpy(), np.array([1.0, 2.0]))
        same_bits(cf(x).numpy(), np.array([1.0, 2.0]))
    assert other == [2]
