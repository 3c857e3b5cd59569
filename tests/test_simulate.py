"""Synthetic 2PL responses: shapes, seeds, known IRT truth, packed == dense, validation."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy import stats

from effstats import PackedBinaryMatrix, ResponseMatrix, chronological_split
from effstats.datasets import simulate_packed_responses, simulate_responses


def test_shapes_and_metadata():
    rm, p = simulate_responses(30, 120, n_dims=3, n_clusters=4, rng=0, return_params=True)
    assert isinstance(rm, ResponseMatrix) and rm.kind == "binary" and rm.shape == (30, 120)
    assert rm.values.dtype == bool
    assert p.ability.shape == (30, 3) and p.discrimination.shape == (120, 3)
    assert p.difficulty.shape == (4, 120) and p.cluster.shape == (30,)
    assert (p.discrimination >= 0).all()
    assert set(rm.models.columns) >= {"release_date", "cluster"}
    np.testing.assert_array_equal(rm.models["cluster"].to_numpy(), p.cluster)
    # chronological splits work out of the box
    split = chronological_split(rm, rm.models["release_date"].median())
    assert len(split.source) + len(split.target) == 30


def test_seed_determinism():
    a = simulate_responses(20, 50, n_classes=3, rng=7)
    b = simulate_responses(20, 50, n_classes=3, rng=7)
    c = simulate_responses(20, 50, n_classes=3, rng=8)
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.probabilities, b.probabilities)
    assert not np.array_equal(a.values, c.values)


def test_mean_correctness_matches_irt_probability():
    # Monte Carlo truth: per model, sum of Bernoulli(p_ij) has sd sqrt(sum p(1-p)); all 200 within 4.5 sd
    rm, p = simulate_responses(200, 3000, n_dims=2, n_clusters=3, rng=1, return_params=True)
    prob = p.probability()
    obs = rm.values.sum(1)
    exp = prob.sum(1)
    sd = np.sqrt((prob * (1 - prob)).sum(1))
    assert np.max(np.abs(obs - exp) / sd) < 4.5
    # pooled calibration by probability decile: each bin's frequency within 4 sd of its mean probability
    edges = np.quantile(prob, np.linspace(0, 1, 11))
    bins = np.clip(np.searchsorted(edges, prob, side="right") - 1, 0, 9)
    for k in range(10):
        m = bins == k
        pk, fk = prob[m].mean(), rm.values[m].mean()
        assert abs(fk - pk) < 4 * np.sqrt((prob[m] * (1 - prob[m])).sum()) / m.sum() + 1e-6


def test_explicit_abilities_and_rasch():
    rm = simulate_responses(3, 4000, ability=np.array([-8.0, 0.0, 8.0]), difficulty=0.0, discrimination=1.0, rng=2)
    acc = rm.accuracy().to_numpy()
    # P = sigmoid(-8) = 3.4e-4, 0.5, 1 - 3.4e-4
    assert acc[0] < 0.005 and acc[2] > 0.995
    assert abs(acc[1] - 0.5) < 4 * 0.5 / np.sqrt(4000)


def test_callable_spec_and_1d_array_spread_over_dims():
    _, p = simulate_responses(
        10, 20, n_dims=2, ability=lambda rng, shape: rng.uniform(-1, 1, shape), discrimination=np.full(20, 0.5),
        rng=3, return_params=True,
    )
    assert (np.abs(p.ability) <= 1).all()
    np.testing.assert_array_equal(p.discrimination, np.full((20, 2), 0.5))


def test_class_probabilities_consistent_with_correctness():
    rm = simulate_responses(40, 200, n_classes=5, rng=4)
    assert rm.probabilities.shape == (40, 200, 5) and rm.labels.shape == (200,)
    np.testing.assert_allclose(rm.probabilities.sum(2), 1.0, atol=1e-12)
    np.testing.assert_array_equal(rm.probabilities.argmax(2) == rm.labels[None, :], rm.values)


def test_clusters_have_their_own_item_orderings():
    def cross_cluster_corr(spread):
        rm, p = simulate_responses(600, 400, n_clusters=2, cluster_spread=spread, rng=5, return_params=True)
        m0 = rm.values[p.cluster == 0].mean(0)
        m1 = rm.values[p.cluster == 1].mean(0)
        return stats.spearmanr(m0, m1)[0]

    same, different = cross_cluster_corr(0.0), cross_cluster_corr(2.0)
    assert same > 0.85  # same ordering up to sampling noise
    assert different < same - 0.3


def test_release_dates_follow_ability():
    rm, p = simulate_responses(300, 10, rng=6, return_params=True)
    dates = rm.models["release_date"].to_numpy().astype("datetime64[D]").astype(float)
    rho = stats.spearmanr(dates, p.ability.mean(1))[0]
    assert 0.6 < rho < 1.0  # monotone-ish, with noise


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.data_too_large, HealthCheck.too_slow])
@given(
    n_models=st.integers(1, 25),
    n_items=st.integers(1, 70),
    block_rows=st.integers(1, 30),
    n_jobs=st.integers(1, 3),
    n_clusters=st.integers(1, 3),
    seed=st.integers(0, 10_000),
)
def test_packed_equals_dense(n_models, n_items, block_rows, n_jobs, n_clusters, seed):
    dense = simulate_responses(n_models, n_items, n_dims=2, n_clusters=n_clusters, rng=seed)
    packed = simulate_packed_responses(
        n_models, n_items, n_dims=2, n_clusters=n_clusters, rng=seed, block_rows=block_rows, n_jobs=n_jobs
    )
    assert isinstance(packed, PackedBinaryMatrix) and packed.shape == (n_models, n_items)
    np.testing.assert_array_equal(packed.to_dense(), dense.values)
    np.testing.assert_array_equal(packed.row_sums(), dense.values.sum(1))


def test_packed_medium_matches_params():
    packed, p = simulate_packed_responses(64, 50_000, rng=9, n_jobs=2, return_params=True)
    assert packed.nbytes == 64 * 50_000 // 8
    prob = p.probability()
    z = (packed.row_sums() - prob.sum(1)) / np.sqrt((prob * (1 - prob)).sum(1))
    assert np.max(np.abs(z)) < 4.5


@pytest.mark.parametrize(
    "kwargs, arg",
    [
        (dict(n_models=0, n_items=5), "n_models"),
        (dict(n_models=5, n_items=2.5), "n_items"),
        (dict(n_models=5, n_items=5, n_dims=0), "n_dims"),
        (dict(n_models=5, n_items=5, ability=np.zeros(4)), "ability"),
        (dict(n_models=5, n_items=5, difficulty=np.array([0, 1, np.nan, 0, 0])), "difficulty"),
        (dict(n_models=5, n_items=5, discrimination=-np.ones(5)), "discrimination"),
        (dict(n_models=5, n_items=5, ability=(0.0, -1.0)), "ability"),
        (dict(n_models=5, n_items=5, n_clusters=0), "n_clusters"),
        (dict(n_models=5, n_items=5, cluster_spread=-1.0), "cluster_spread"),
        (dict(n_models=5, n_items=5, n_classes=1), "n_classes"),
        (dict(n_models=5, n_items=5, rng="seed"), "rng"),
    ],
)
def test_bad_input_names_the_argument(kwargs, arg):
    with pytest.raises(ValueError, match=f"^{arg}"):
        simulate_responses(**kwargs)


@pytest.mark.parametrize("kwargs, arg", [(dict(block_rows=0), "block_rows"), (dict(n_jobs=0), "n_jobs")])
def test_packed_bad_input(kwargs, arg):
    with pytest.raises(ValueError, match=f"^{arg}"):
        simulate_packed_responses(5, 5, **kwargs)


def test_extreme_abilities_saturate_without_warnings():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # float32 exp overflow must not leak as a RuntimeWarning
        rm = simulate_responses(2, 500, ability=np.array([-200.0, 200.0]), difficulty=0.0, discrimination=1.0, rng=0)
    np.testing.assert_array_equal(rm.accuracy().to_numpy(), [0.0, 1.0])
