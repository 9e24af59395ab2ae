"""The forty-first session's transform campaign (helper h2).

Fixed here:
1. a traced or compiled float matmul of an operand BLAS cannot read (a
   stepped or permuted view, an expanded one) ran the naive loop, where
   eager ran BLAS on contiguous copies: other last bits.  The kernel now
   copies such operands when it runs (runtime/matmul.c hop__matmul_pack),
   eagerly, through out= and in a plan alike.
2. vmap of a vmap over 0 inner examples, of an output the inner vmap
   leaves unbatched: InvalidError from select (there is no example row to
   take it from); hop/vmap.c now batches the inner node's body when its
   batch may be 0 and an output is left unbatched.
"""

import numpy as np
import pytest

import hop
from transform_values import F64, same_bits, t

_R = np.random.RandomState(7)
_MATMULS = {
    "stepped_cols": (lambda x, v: x[:, ::2] @ v, (6, 40), (20, 3)),
    "stepped_rows_and_cols": (lambda x, v: x[::2, ::2] @ v[::2], (8, 40), (40, 5)),
    "b_stepped": (lambda x, v: x @ v[:, ::3], (7, 20), (20, 9)),
    "vector_times_stepped": (lambda x, v: x[0] @ v[:, ::2], (3, 20), (20, 8)),
    "stepped_vector_times_stepped": (lambda x, v: x[0, ::2] @ v[::2, ::2], (3, 40), (40, 8)),
    "batched_stepped": (lambda x, v: x.reshape(2, 3, 8)[:, :, ::2] @ v, (6, 8), (4, 5)),
    "expanded": (lambda x, v: x[:1].expand(5, 40) @ v, (3, 40), (40, 6)),
}


@pytest.mark.parametrize("dtype", [F64, hop.float32])
@pytest.mark.parametrize("name", sorted(_MATMULS))
def test_a_traced_or_compiled_matmul_of_a_view_blas_cannot_read_has_eagers_bits(name, dtype):
    f, xs, vs = _MATMULS[name]
    x, v = t(_R.uniform(-1, 1, xs), dtype), t(_R.uniform(-1, 1, vs), dtype)
    want = f(x, v).numpy()
    same_bits(hop.trace(f, x, v)(x, v).numpy(), want)
    same_bits(hop.compile(f)(x, v).numpy(), want)
    # the copies are not kept: a second run on new values
    x2 = t(_R.uniform(-1, 1, xs), dtype)
    same_bits(hop.compile(f)(x2, v).numpy(), f(x2, v).numpy())



@pytest.mark.parametrize("name", ["stepped_rows_and_cols", "batched_stepped"])
def test_a_matmul_whose_copies_find_no_memory_runs_on_the_operands_as_they_are(name):
    # Both operands copied (stepped_rows_and_cols) or one with batch dims:
    # when the k-th allocation fails, eagerly and in a plan, the product
    # runs without copies (the same values, other last bits) or raises
    # MemoryError for its result; never the copies' half-made state (the
    # copies' batch strides with the operand as it is, or a's freed copy
    # when b's failed: before, wrong values or a read of freed memory)
    f, xs, vs = _MATMULS[name]
    x, v = t(_R.uniform(-1, 1, xs)), t(_R.uniform(-1, 1, vs))
    want = np.matmul(f(x, v).numpy(), np.eye(f(x, v).shape[-1]))
    gm = hop.trace(f, x, v)
    for run in (f, gm):
        ran = 0
        for k in range(1, 12):
            hop._C._alloc_fail_at(k)
            try:
                got = run(x, v).numpy()
            except MemoryError:
                continue
            finally:
                hop._C._alloc_fail_at(0)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
            ran += 1
        assert ran >= 3


def test_vmap_with_in_axes_2_of_a_matmul_has_eagers_bits_traced():
    r = np.random.RandomState(3)
    X, W = t(r.uniform(-1, 1, (4, 30, 5))), t(r.uniform(-1, 1, (30, 7)))
    f = lambda X, W: hop.vmap(lambda x: x @ W, in_axes=(2,))(X)  # noqa: E731
    want = f(X, W).numpy()
    np.testing.assert_allclose(want, np.einsum("ajk,jm->kam", X.numpy(), W.numpy()), rtol=1e-12)
    same_bits(hop.trace(f, X, W)(X, W).numpy(), want)
    same_bits(hop.compile(f)(X, W).numpy(), want)


def _inner_none(x, Y):
    return hop.vmap(lambda y: x * 2, out_axes=None)(Y)


@pytest.mark.parametrize("mode", ["eager", "trace", "compile"])
def test_vmap_of_a_vmap_over_no_inner_example_of_outer_only_outputs(mode):
    X, Y0 = t(np.arange(6.0).reshape(2, 3)), t(np.zeros((0, 3)))
    f = lambda X: hop.vmap(  # noqa: E731
        lambda x: hop.vmap(lambda y: (x * 2, y + x, x.sum()), out_axes=(None, 0, 0))(Y0))(X)
    g = {"eager": f, "trace": hop.trace(f, X), "compile": hop.compile(f)}[mode]
    a, b, c = g(X)
    same_bits(a.numpy(), X.numpy() * 2)
    same_bits(b.numpy(), np.zeros((2, 0, 3)))
    same_bits(c.numpy(), np.zeros((2, 0)))


def test_vmap_of_a_vmap_over_one_inner_example_still_composes():
    X, Y1 = t(np.arange(6.0).reshape(2, 3)), t(np.ones((1, 3)))
    same_bits(hop.vmap(lambda x: _inner_none(x, Y1))(X).numpy(), X.numpy() * 2)


def test_a_saved_graph_of_a_vmap_of_a_vmap_over_no_inner_example(tmp_path):
    X, Y0 = t(np.arange(6.0).reshape(2, 3)), t(np.zeros((0, 2)))
    gm = hop.trace(lambda X: hop.vmap(lambda a: _inner_none(a, Y0))(X), X)
    hop.save(gm, str(tmp_path / "g.hop"))
    same_bits(hop.load(str(tmp_path / "g.hop"))(X).numpy(), X.numpy() * 2)
