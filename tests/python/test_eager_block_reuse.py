"""An eager op's small result reuses the block of one freed before it
(core/alloc.c's per-thread cache of small blocks, runtime/tensor.c): every
result is still a tensor of its own, with the values, dtype and shape of
NumPy's, never sharing memory with a result alive beside it or with the
operands, and views of a result keep its block alive after the result dies."""
import numpy as np
import pytest

import hop

DTYPES = [(hop.float32, np.float32), (hop.float64, np.float64), (hop.int32, np.int32),
          (hop.int64, np.int64)]


def arrays(npdt, shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 8).astype(npdt)


@pytest.mark.parametrize("dt,npdt", DTYPES)
@pytest.mark.parametrize("shape", [(16,), (3, 5), (1,), (0,), (2, 1, 4), (1024,), (1100,)])
def test_results_made_from_reused_blocks_hold_their_own_values(dt, npdt, shape):
    an, bn = arrays(npdt, shape, 1), arrays(npdt, shape, 2) + 3
    a, b = hop.asarray(an), hop.asarray(bn)
    kept = []
    for i in range(40):
        r = [a + b, a - b, a * b, hop.maximum(a, b), hop.minimum(a, b)][i % 5]
        want = [an + bn, an - bn, an * bn, np.maximum(an, bn), np.minimum(an, bn)][i % 5]
        assert r.dtype == dt and r.shape == shape
        np.testing.assert_array_equal(r.numpy(), want)
        if i % 3 == 0:
            kept.append((r, want.copy()))
        del r  # its block goes back to the cache for the next op
    # every result kept beside the reused ones still holds its own values
    for r, want in kept:
        np.testing.assert_array_equal(r.numpy(), want)
    np.testing.assert_array_equal(a.numpy(), an)
    np.testing.assert_array_equal(b.numpy(), bn)


def test_a_view_keeps_a_dead_results_block_from_being_reused():
    a = hop.asarray(np.arange(16, dtype=np.float32))
    r = a + a
    v = r[2:6]
    del r
    for _ in range(8):
        s = a * a  # a block freed now would be the view's if it were reused
        assert s.numpy()[3] == 9.0
    np.testing.assert_array_equal(v.numpy(), np.arange(2, 6, dtype=np.float32) * 2)


def test_results_alive_together_never_share_memory():
    a = hop.asarray(np.ones(16, np.float32))
    rs = []
    for _ in range(12):
        rs.append(a + a)
        t = a * a  # made and freed between two kept results
        del t
    assert len({r.data_ptr() for r in rs}) == 12
    for k, r in enumerate(rs):
        r.numpy()[:] = k  # writes through to r's memory only
    for k, r in enumerate(rs):
        np.testing.assert_array_equal(r.numpy(), np.full(16, k, np.float32))
    np.testing.assert_array_equal(a.numpy(), np.ones(16, np.float32))


def test_the_next_result_takes_the_block_of_the_one_just_freed():
    a = hop.asarray(np.arange(16, dtype=np.float32))
    r = a + a
    at = r.data_ptr()
    del r
    s = a * a
    assert s.data_ptr() == at
    np.testing.assert_array_equal(s.numpy(), np.arange(16, dtype=np.float32) ** 2)


def test_errors_and_the_general_path_are_unchanged_after_reuse():
    a, b = hop.ones(16), hop.ones(4)
    for _ in range(3):
        t = a + a
        del t
        with pytest.raises(hop.ShapeError, match=r"^add: cannot broadcast f32\[16\] with f32\[4\]$"):
            a + b
    i = hop.asarray(np.arange(1, 17, dtype=np.int32))
    q = i / i  # int division: the general path, a float result
    assert q.dtype == hop.float32
    np.testing.assert_array_equal(q.numpy(), np.ones(16, np.float32))
