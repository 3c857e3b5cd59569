import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix, chronological_split, performance_split, random_split


def make(n=20, seed=0):
    rng = np.random.default_rng(seed)
    skill = np.linspace(0.1, 0.9, n)
    vals = rng.random((n, 500)) < skill[:, None]
    dates = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.permutation(n) * 30, unit="D")
    return ResponseMatrix(vals, models={"release_date": dates})


def test_random_split_is_seeded_partition():
    rm = make()
    a, b = random_split(rm, 0.25, rng=3), random_split(rm, 0.25, rng=3)
    assert (a.source == b.source).all() and len(a.target) == 5
    assert sorted(np.r_[a.source, a.target]) == list(range(20))
    assert not (random_split(rm, 0.25, rng=4).target == a.target).all()
    src, tgt = a.apply(rm)
    assert src.n_models == 15 and tgt.n_models == 5


def test_chronological_split_respects_dates():
    rm = make()
    cut = "2020-06-01"
    s = chronological_split(rm, cut)
    d = rm.models["release_date"]
    assert (d.iloc[s.source] < pd.Timestamp(cut)).all() and (d.iloc[s.target] >= pd.Timestamp(cut)).all()
    assert len(s.source) + len(s.target) == 20
    with pytest.raises(ValueError, match="cutoff"):
        chronological_split(rm, "2000-01-01")
    with pytest.raises(ValueError, match="date: model metadata has no column"):
        chronological_split(ResponseMatrix([[1, 0], [0, 1]]), "2020")


def test_performance_split_gap_holds():
    rm = make()
    acc = rm.accuracy().to_numpy()
    s = performance_split(rm, top_fraction=0.2, gap=0.1)
    assert len(s.target) == 4 and len(s.source) == 14
    # every target beats every source, with two models in between dropped
    assert acc[s.target].min() > acc[s.source].max()
    between = np.setdiff1d(np.arange(20), np.r_[s.source, s.target])
    assert len(between) == 2 and acc[between].min() >= acc[s.source].max()
    with pytest.raises(ValueError, match="gap"):
        performance_split(rm, 0.5, 0.5)
    with pytest.raises(ValueError, match="top_fraction"):
        performance_split(rm, 1.5)
    with pytest.raises(ValueError, match="test_size"):
        random_split(rm, 0)
