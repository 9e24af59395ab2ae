"""hop on an existing engine: a hop.compile function (a cond over a map with
a closed-over weight) shipped to the 2 worker processes of a Dask
LocalCluster, mapped over chunks of a NumPy array; the results equal the
local ones.  The function is a closure, so it travels as its compiled
programs (hop's saved format inside pickle, see hop._saved)."""
import importlib.util
import os

import numpy as np
import pytest

import hop

# (imported by the test, not at collection: importing distributed took
# ~0.5 s of every pytest process that collects the suite)
if importlib.util.find_spec("distributed") is None:
    pytest.skip("Debian's python3-distributed is not installed (scripts/dev.sh test installs it)",
                allow_module_level=True)


def make_model():
    w = hop.randn(8, seed=3)

    def model(x):
        return hop.cond(x.sum() > 0, lambda: hop.map(lambda r: (r * w).tanh(), x),
                        lambda: x * 0.5)
    return model


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="the sanitizer pass preloads ASan, which the worker processes would "
                           "inherit; the normal test pass runs this")
def test_compiled_function_runs_on_dask_workers(monkeypatch):
    import distributed

    # The workers are new interpreters: they import hop from where we do.
    here = os.path.dirname(os.path.dirname(os.path.abspath(hop.__file__)))
    monkeypatch.setenv("PYTHONPATH", here + os.pathsep + os.environ.get("PYTHONPATH", ""))
    model = make_model()
    fast = hop.compile(model, dynamic=True)
    data = np.random.default_rng(0).standard_normal((40, 8)).astype(np.float32)
    data[20:] = -np.abs(data[20:])  # some chunks take the other branch
    chunks = [data[i:i + 7] for i in range(0, 40, 7)]
    fast(chunks[0])  # compiled here; the programs travel to the workers
    local = [fast(c) for c in chunks]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster, timeout="60s") as client:
        futures = client.map(fast, chunks, pure=False)
        distributed.wait(futures, timeout=120)  # bounded: never hangs CI
        remote = client.gather(futures, errors="raise")
        pids = set(client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids
    for a, b, c in zip(local, remote, chunks):
        np.testing.assert_array_equal(b, a)
        np.testing.assert_array_equal(b, model(hop.asarray(c)).numpy())
