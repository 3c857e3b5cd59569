"""Simulation internals of SequentialEvaluator.simulate: chunked runs and the shuffle path for continuous scores."""
import numpy as np
import pytest

from effstats.sequential import Efficacy, SequentialEvaluator
from effstats.sequential import evaluator as ev_mod
from effstats.sequential._sampling import shuffled_sums


def _pair(n_groups=3, size=700, seed=0, continuous=True):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_groups), size)
    a = rng.random(g.size) if continuous else (rng.random(g.size) < 0.8).astype(float)
    # a modest true difference: runs stop at different looks, so the chunks' outcomes differ
    if continuous:
        b = np.clip(a - 0.03 + rng.normal(0, 0.2, g.size), 0, 1)
    else:
        b = (rng.random(g.size) < 0.75).astype(float)
    return a, b, g


@pytest.mark.parametrize("continuous", [True, False])
def test_chunked_simulation_does_not_depend_on_the_thread_count(monkeypatch, continuous):
    a, b, g = _pair(continuous=continuous)
    monkeypatch.setattr(ev_mod, "_SIM_CELLS", 7 * 50)  # 7 looks -> chunks of 50 runs: 4 chunks for 180 runs
    ev = SequentialEvaluator([Efficacy()], initial=100, batch=100, rng=3)
    monkeypatch.setattr(ev_mod, "_SIM_THREADS", 1)
    one = ev.simulate(a, b, groups=g, n_runs=180)
    monkeypatch.setattr(ev_mod, "_SIM_THREADS", 2)
    two = ev.simulate(a, b, groups=g, n_runs=180)
    assert one.stop_look.shape == (180,)
    for key in ("stop_look", "n", "estimate", "z", "ci_low", "ci_high", "rci_low", "rci_high"):
        np.testing.assert_array_equal(getattr(one, key), getattr(two, key))
    np.testing.assert_array_equal(one.reason, two.reason)
    # and the chunks are independent orders, not copies of one another
    assert len({tuple(one.stop_look[i:i + 50]) for i in range(0, 150, 50)}) == 3
    assert 1 < len(np.unique(one.stop_look))


def test_shuffled_sums_are_sums_of_random_orders():
    """Each look's sum is over a uniformly random subset of nd items: mean m * mu and the finite-population
    variance m * s2 * (N - m) / (N - 1); the last look (all items) is exact; x^2 and |x| sums likewise."""
    rng = np.random.default_rng(1)
    v = rng.normal(0, 1, 503)  # negative values: |x| is summed separately
    nd = np.array([37, 137, 137, 300, 503])  # a repeated look and a first batch of another size
    runs = 40_000
    s1, s2, sa = shuffled_sums(v, nd, runs, np.random.default_rng(2))
    assert s1.shape == s2.shape == sa.shape == (runs, nd.size)
    n, mu, var = v.size, v.mean(), v.var(ddof=1)
    for k, m in enumerate(nd):
        want_sd = np.sqrt(m * var * (n - m) / (n - 1))
        if m == n:
            np.testing.assert_allclose(s1[:, k], v.sum(), rtol=1e-12)
            np.testing.assert_allclose(s2[:, k], (v * v).sum(), rtol=1e-12)
            np.testing.assert_allclose(sa[:, k], np.abs(v).sum(), rtol=1e-12)
            continue
        assert abs(s1[:, k].mean() - m * mu) < 5 * want_sd / np.sqrt(runs)
        assert abs(s1[:, k].std() / want_sd - 1) < 0.03
        assert abs(s2[:, k].mean() - m * (v * v).mean()) < 5 * s2[:, k].std() / np.sqrt(runs)
        assert abs(sa[:, k].mean() - m * np.abs(v).mean()) < 5 * sa[:, k].std() / np.sqrt(runs)
    np.testing.assert_array_equal(s1[:, 1], s1[:, 2])
    # nested: later looks add the items of a batch, so |x| sums never decrease
    assert np.all(np.diff(sa, axis=1) >= -1e-12)
    # one order per run: a 3-item population gives every subset sum of the first item
    t1, _, _ = shuffled_sums(np.array([1.0, 2.0, 4.0]), np.array([1, 3]), 3000,
                                                  np.random.default_rng(0))
    vals, counts = np.unique(t1[:, 0], return_counts=True)
    np.testing.assert_array_equal(vals, [1.0, 2.0, 4.0])
    assert np.all(np.abs(counts / 3000 - 1 / 3) < 0.04)
