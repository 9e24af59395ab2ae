"""hop with Dask: a hop.compile function as the block function of
dask.array.map_blocks, run by a LocalCluster's worker processes.

    sh scripts/dev.sh test        # (or any install of hop), then
    python3 examples/dask_map_blocks.py

The model is a closure over a weight, so it cannot be pickled by reference:
hop pickles its compiled programs instead (the saved format), so compile it
once locally (one call) and every worker runs the same plan on its blocks.
Needs Debian's python3-distributed (which brings python3-dask).
"""
import numpy as np

import dask.array as da
import distributed
import hop


def make_model(w):
    def model(x):
        # Rows with a positive sum go through tanh(r * w), others are halved.
        return hop.cond(x.sum() > 0, lambda: hop.map(lambda r: (r * w).tanh(), x),
                        lambda: x * 0.5)
    return model


def main():
    w = hop.randn(16, seed=1)
    fast = hop.compile(make_model(w), dynamic=True)
    data = np.random.default_rng(0).standard_normal((1000, 16)).astype(np.float32)
    fast(data[:10])  # compile here; the workers get the plan
    x = da.from_array(data, chunks=(100, 16))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster):
        y = x.map_blocks(fast, dtype=np.float32).compute()
    local = np.concatenate([fast(data[i:i + 100]) for i in range(0, 1000, 100)])
    assert np.array_equal(y, local)
    print(f"{len(x.chunks[0])} blocks on 2 workers: equal to the local results, "
          f"first row {y[0, :4]}")


if __name__ == "__main__":
    main()
