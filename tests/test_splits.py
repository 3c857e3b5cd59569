import numpy as np
import pandas as pd
import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from effstats import ResponseMatrix, binned_split, chronological_split, performance_split, random_split
from effstats.splits import ModelSplit


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


def _bin_counts(rm, split, n_bins):
    score = rm.accuracy().to_numpy()
    edges = np.linspace(score.min(), score.max(), n_bins + 1)
    bin_of = np.clip(np.digitize(score, edges) - 1, 0, n_bins - 1)
    return np.bincount(bin_of[split.source], minlength=n_bins), np.bincount(bin_of, minlength=n_bins)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=3, max_size=40), st.integers(1, 39), st.integers(1, 12),
       st.integers(0, 2**31 - 1))
def test_binned_split_is_as_even_as_the_bins_allow(correct, n_sources, n_bins, seed):
    rm = ResponseMatrix((np.arange(40)[None, :] < np.array(correct)[:, None]).astype(int))
    n_sources = min(n_sources, rm.n_models - 1)
    split = binned_split(rm, n_sources, n_bins=n_bins, rng=seed)
    assert sorted(np.r_[split.source, split.target]) == list(range(rm.n_models))
    assert split.source.size == n_sources
    taken, size = _bin_counts(rm, split, n_bins)
    assert (taken <= size).all()
    # a bin short of the common level gives all its models; the bins with models left differ by at most one
    open_bins = taken < size
    if open_bins.any():
        assert taken[open_bins].max() - taken[open_bins].min() <= 1
        assert (taken[~open_bins] <= taken[open_bins].max() + 1).all()


def test_binned_split_covers_the_score_range_a_random_split_misses():
    # 90 weak models and 10 strong ones: 10 sources from 10 bins take the strong models' bin every time
    skill = np.r_[np.full(90, 0.3), np.full(10, 0.9)]
    rm = ResponseMatrix(np.random.default_rng(0).random((100, 400)) < skill[:, None])
    score = rm.accuracy().to_numpy()
    for seed in range(20):
        split = binned_split(rm, 10, n_bins=10, rng=seed)
        assert score[split.source].max() > 0.8
        assert score[split.target].max() <= score[split.source].max() + 0.1
    a, b = binned_split(rm, 0.25, rng=5), binned_split(rm, 0.25, rng=5)
    assert (a.source == b.source).all() and a.source.size == 25
    assert not (binned_split(rm, 0.25, rng=6).source == a.source).all()


def test_binned_split_errors_name_the_argument():
    rm = make()
    with pytest.raises(ValueError, match="source_size"):
        binned_split(rm, 20)
    with pytest.raises(ValueError, match="source_size"):
        binned_split(rm, 1.5)
    with pytest.raises(ValueError, match="n_bins"):
        binned_split(rm, 5, n_bins=0)
    with pytest.raises(TypeError, match="responses"):
        binned_split(np.zeros((4, 3)), 2)


def test_a_numpy_float_test_size_is_a_fraction_and_a_numpy_integer_a_count():
    rm = make()
    for frac in (np.float32(0.25), np.array(0.25)):
        assert len(random_split(rm, frac, rng=3).target) == 5
    assert len(random_split(rm, np.int64(3), rng=3).target) == 3


@pytest.mark.parametrize("ids", [np.roll(np.arange(20), -1), np.arange(100, 120), np.arange(20)[::-1]])
def test_a_split_applies_by_position_with_integer_model_ids(ids):
    """A split holds positions: with integer model ids its halves are the same rows as with text ids."""
    from effstats.datasets import simulate_responses
    vals = simulate_responses(20, 100, rng=0).values
    rm = ResponseMatrix(vals, model_ids=ids)
    for sp in (performance_split(rm, 0.2), random_split(rm, 0.2, rng=0)):
        src, tgt = sp.apply(rm)
        assert tgt.model_ids.tolist() == ids[sp.target].tolist()
        assert src.model_ids.tolist() == ids[sp.source].tolist()
        np.testing.assert_array_equal(tgt.values, vals[sp.target])
    with pytest.raises(ValueError, match="source: expected integer positions"):
        ModelSplit(np.array(["a"]), np.array([1])).apply(rm)


@pytest.mark.parametrize("dates", [
    ["2022-01-05T00:00:00.000Z", "2023-02-01T10:00:00.000Z", "2023-07-18T00:00:00.000Z", "2024-01-01T00:00:00.000Z"],
    pd.to_datetime(["2022-01-05", "2023-02-01", "2023-07-18", "2024-01-01"]).tz_localize("UTC"),
    pd.Categorical(["2022-01-05", "2023-02-01", "2023-07-18", "2024-01-01"]),
    ["2022-01-05", "02/01/2023", "Jul 18 2023", "2024"],
])
@pytest.mark.parametrize("cutoff", ["2023-06-01", "2023-06-01T00:00:00Z", "2023-06-01T02:00:00+02:00"])
def test_chronological_split_reads_dates_with_a_time_zone_and_in_mixed_formats(dates, cutoff):
    # the Hugging Face Hub's dates carry a time zone (...Z): a cutoff without one is read in the column's, one with
    # one against a column without one in UTC; a column in several formats splits the same on pandas 1 and 2
    X = np.random.default_rng(0).random((4, 10)) < 0.5
    rm = ResponseMatrix(X, models=pd.DataFrame({"release_date": dates}))
    split = chronological_split(rm, cutoff)
    assert split.source.tolist() == [0, 1] and split.target.tolist() == [2, 3]


def test_chronological_split_names_the_value_that_is_no_date():
    X = np.random.default_rng(0).random((4, 10)) < 0.5
    rm = ResponseMatrix(X, models=pd.DataFrame({"release_date": ["2022-01-05", "2023-02-01", "soon", "2024-01-01"]}))
    with pytest.raises(ValueError, match=r"^date: column 'release_date': 'soon' is not a date$"):
        chronological_split(rm, "2023-06-01")
    ok = ResponseMatrix(X, models=pd.DataFrame({"release_date": ["2022-01-05", "2023-02-01", "2023-07-18", "2024"]}))
    with pytest.raises(ValueError, match=r"^cutoff: 'later' is not a date"):
        chronological_split(ok, "later")
