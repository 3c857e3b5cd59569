"""The heavy paths on a real dask.distributed LocalCluster (2 worker processes) give the in-memory numbers."""
import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.slow  # a dask.distributed cluster of worker processes

from effstats import distributed as ed  # noqa: E402
from effstats.datasets.simulate import simulate_responses  # noqa: E402
from effstats.sortsearch import SortSearch, item_sums, recursive_sort, sort_by_sum  # noqa: E402


@pytest.fixture(scope="module")
def client():
    # processes, not threads: the tasks are pickled and shipped as they would be to other machines
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def cache():
    return np.asarray(simulate_responses(140, 2_003, rng=3).values, dtype=bool)


def test_packed_store_round_trip(tmp_path, cache):
    path = ed.save_packed(cache, tmp_path / "c.zarr", rows_per_chunk=24)
    x = ed.open_packed(path)
    assert x.shape == cache.shape and x.dtype == bool and x.numblocks == (6, 1)
    assert np.array_equal(x.compute(), cache)
    assert np.array_equal(ed.packed_item_sums(path), cache.sum(0))
    with pytest.raises(ValueError, match="path: .* exists"):
        ed.save_packed(cache, path)
    with pytest.raises(ValueError, match="path: .* does not exist"):
        ed.open_packed(tmp_path / "nope.zarr")
    (tmp_path / "other.zarr").mkdir()
    with pytest.raises(ValueError, match="path"):
        ed.open_packed(tmp_path / "other.zarr")


def test_sort_and_search_on_cluster_equal_memory(tmp_path, cache, client):
    path = ed.save_packed(cache, tmp_path / "c.zarr", rows_per_chunk=16)
    x = ed.open_packed(path)
    src, new = cache[:100], cache[100:]
    # item sums and the orders: chunk-wise on the workers vs numpy
    assert np.array_equal(item_sums(x), cache.sum(0))
    assert np.array_equal(sort_by_sum(x[:100]), sort_by_sum(src))
    with pytest.raises(ValueError, match="responses: recursive_sort reads the matrix several times"):
        recursive_sort(x[:100])  # a clear refusal, not a silent many-pass read of a cache that is not in memory
    mem, dist = SortSearch().fit(src), SortSearch().fit(x[:100])
    assert np.array_equal(mem.order_, dist.order_)
    r_mem, r_dist = mem.simulate(new, 128), dist.simulate(x[100:], 128)
    assert np.array_equal(r_mem.thresholds, r_dist.thresholds)
    np.testing.assert_allclose(r_dist.evaluate(x[100:])["mae"], r_mem.evaluate(new)["mae"], rtol=0, atol=0)


def test_task_seeds_and_errors():
    a, b = ed.task_seeds(5, 3), ed.task_seeds(5, 3)
    assert [s.generate_state(2).tolist() for s in a] == [s.generate_state(2).tolist() for s in b]
    assert len({tuple(s.generate_state(2)) for s in a}) == 3
    with pytest.raises(ValueError, match="n_tasks"):
        ed.task_seeds(5, 0)
    with pytest.raises(ValueError, match="rng"):
        ed.task_seeds(np.random.default_rng(0), 2)
    with pytest.raises(ValueError, match="rng"):
        ed.task_seeds("x", 2)
    with pytest.raises(ValueError, match="rng"):
        ed.task_seeds(-1, 2)


def test_sequential_simulation_on_cluster_equals_memory(client):
    from effstats.sequential import Efficacy, SequentialEvaluator

    rng = np.random.default_rng(0)
    a = (rng.random(1_500) < 0.80).astype(float)
    b = (rng.random(1_500) < 0.77).astype(float)
    ev = SequentialEvaluator([Efficacy()], rng=0)
    res = ed.simulate(ev, a, b, n_runs=300, rng=11, n_tasks=3, client=client)
    ref = [ev.simulate(a, b, n_runs=100, rng=np.random.default_rng(s)) for s in ed.task_seeds(11, 3)]
    assert len(res.n) == 300
    for f in ("n", "stop_look", "estimate", "ci_low", "ci_high"):
        assert np.array_equal(getattr(res, f), np.concatenate([getattr(r, f) for r in ref])), f
    assert np.array_equal(res.decision, np.concatenate([r.decision for r in ref]))
    # the same seeds on threads (no client) give the same runs
    local = ed.simulate(ev, a, b, n_runs=300, rng=11, n_tasks=3)
    assert np.array_equal(local.n, res.n)


@pytest.mark.parametrize("decision,objective", [("scenarios", "kendall"), ("scenarios", "best_model")])
def test_dior_bootstrap_on_cluster_equals_memory(client, decision, objective):
    from effstats.datasets import load_helm
    from effstats.reliability import dior

    helm = load_helm()
    res = ed.dior(helm, decision, objective, n_boot=400, rng=7, n_tasks=4, client=client)
    # the same four seeded tasks in this process, through the public reliability.dior, pooled by hand
    seeds = ed.task_seeds(7, 4)
    ref = [dior(helm, decision, objective, n_boot=100, rng=np.random.default_rng(s)) for s in seeds]
    np.testing.assert_array_equal(res.distribution, np.concatenate([r.distribution for r in ref]))
    np.testing.assert_array_equal(res.resampled, np.concatenate([r.resampled for r in ref]))
    assert res.statistic == pytest.approx(np.mean(res.distribution), abs=1e-12)
    assert res.confidence_interval().low == pytest.approx(res.dior, abs=1e-12)
    # one task is exactly reliability.dior with that task's seed
    one = ed.dior(helm, decision, objective, n_boot=150, rng=7, n_tasks=1, client=client)
    direct = dior(helm, decision, objective, n_boot=150, rng=np.random.default_rng(ed.task_seeds(7, 1)[0]))
    assert one.dior == direct.dior and np.array_equal(one.distribution, direct.distribution)
