"""StratifiedHT's design and variance: two sampled items a stratum, collapsed strata for one, a t interval.

Exact checks by enumerating every stratified sample of a small benchmark, and Monte-Carlo coverage of graded
scores at two items a stratum (each draw's interval against the target's mean over every item).
"""
import itertools
import warnings

import numpy as np
import pytest
from scipy import stats

from effstats.disco import StratifiedHT


def _graded(n_items=240, n_sources=30, n_targets=6, seed=0):
    """Graded scores in [0, 1] (a judge's win probabilities): sources and targets of several abilities, items of
    several difficulties, each score a noisy logistic curve clipped to [0, 1]."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, 1.5, n_items)
    ability = np.linspace(-2.0, 2.0, n_sources + n_targets)
    rng.shuffle(ability)
    logit = ability[:, None] - difficulty[None, :] + rng.normal(0.0, 1.0, (len(ability), n_items))
    y = 1.0 / (1.0 + np.exp(-logit))
    return y[:n_sources], y[n_sources:]


def test_every_stratum_gets_two_sampled_items():
    src, _ = _graded()
    for n_items, n_strata in [(10, 10), (20, 10), (7, 7), (30, 4)]:
        est = StratifiedHT(n_items, n_strata=n_strata, random_state=0).fit(src)
        alloc = np.bincount(est.strata_[est.selected_], minlength=len(est.stratum_sizes_))
        assert len(est.stratum_sizes_) <= max(1, n_items // 2)
        assert (alloc >= np.minimum(est.stratum_sizes_, 2)).all()
        assert alloc.sum() == n_items


def test_graded_target_gets_a_positive_standard_error_and_a_t_interval():
    src, tgt = _graded()
    est = StratifiedHT(10, random_state=1).fit(src)
    p = est.predict_interval(tgt[:, est.selected_])
    assert (p.standard_error > 0).all()
    # Satterthwaite's degrees of freedom: between the smallest stratum's n_h - 1 and the sample's n - H
    assert ((p.df >= 1 - 1e-9) & (p.df <= 10 - len(est.stratum_sizes_) + 1e-9)).all()
    ci = p.confidence_interval(0.95)
    inner = (ci.low > 0) & (ci.high < 1)
    q = stats.t.ppf(0.975, p.df)
    np.testing.assert_allclose((ci.high - ci.low)[inner], (2 * q * p.standard_error)[inner], rtol=1e-9)


def _enumerate(est, tgt):
    """Every stratified sample of ``est``'s allocation: (estimates, standard errors), one row per sample."""
    strata, sizes = est.strata_, est.stratum_sizes_
    alloc = np.bincount(strata[est.selected_], minlength=len(sizes))
    per = [itertools.combinations(np.flatnonzero(strata == h), int(a)) for h, a in enumerate(alloc)]
    stat, se = [], []
    for combo in itertools.product(*[list(c) for c in per]):
        chosen = np.sort(np.concatenate(combo))
        est._set_selected(chosen)
        est.weights_ = (sizes / sizes.sum() / alloc)[strata[chosen]]
        p = est.predict_interval(tgt[:, chosen])
        stat.append(p.statistic)
        se.append(p.standard_error)
    return np.array(stat), np.array(se)


def test_variance_estimate_is_unbiased_over_every_sample():
    # three strata of 4, 4 and 5 items, two sampled in each: 6 * 6 * 10 = 360 samples. The HT estimate is
    # unbiased and, with two items a stratum, Cochran's variance estimate too (Thm 5.3 with the fpc)
    rng = np.random.default_rng(3)
    level = np.repeat([0.1, 0.5, 0.9], [4, 4, 5])
    src = np.clip(level[None, :] + rng.normal(0, 0.02, (12, 13)), 0, 1)
    tgt = rng.uniform(0, 1, (2, 13))
    est = StratifiedHT(6, n_strata=3, random_state=0).fit(src)
    assert sorted(est.stratum_sizes_.tolist()) == [4, 4, 5]
    stat, se = _enumerate(est, tgt)
    np.testing.assert_allclose(stat.mean(axis=0), tgt.mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose((se**2).mean(axis=0), stat.var(axis=0), rtol=1e-9)


def test_a_stratum_with_one_result_is_collapsed_not_zero():
    # a missing result leaves one item in a stratum: it joins its neighbour for the variance, and a graded target
    # whose results differ keeps a positive standard error (one item a stratum alone would give none)
    src, tgt = _graded(seed=4)
    est = StratifiedHT(10, random_state=0).fit(src)
    y = tgt[:, est.selected_].copy()
    h = est.strata_[est.selected_]
    y[:, np.flatnonzero(h == h[0])[0]] = np.nan  # one of the two sampled items of the first item's stratum
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the missing cells' warning
        p = est.predict_interval(y)
    assert (p.standard_error > 0).all()
    assert np.isfinite(p.statistic).all()
    # every stratum one sampled item: the sample is one stratum for the variance
    one = StratifiedHT(10, random_state=0).fit(src)
    y1 = tgt[:, one.selected_].copy()
    h1 = one.strata_[one.selected_]
    first = np.array([np.flatnonzero(h1 == g)[0] for g in np.unique(h1)])
    y1[:, first] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        q = one.predict_interval(y1)
    assert (q.standard_error > 0).all()


@pytest.mark.parametrize("n_items", [10, 20])
def test_graded_interval_covers_at_two_items_a_stratum(n_items):
    # 150 draws x 6 targets at two items a stratum; a standard error of 0 (one item a stratum) or the normal
    # quantile with two items a stratum covered about 0.1-0.8; tolerance: the 95 % interval's coverage over 900
    # intervals (Monte-Carlo s.e. about 0.007 at 0.95; draws of one target are correlated) at least 0.92
    src, tgt = _graded(seed=7)
    truth = tgt.mean(axis=1)
    hits = []
    for s in range(150):
        est = StratifiedHT(n_items, random_state=s).fit(src)
        ci = est.predict_interval(tgt[:, est.selected_]).confidence_interval(0.95)
        hits.append((ci.low <= truth) & (truth <= ci.high))
    hits = np.array(hits)
    assert hits.mean() >= 0.92
    assert hits.mean(axis=0).min() >= 0.85


@pytest.mark.parametrize("n_items", [10, 20])
def test_graded_interval_covers_high_scores_gathered_in_strata(n_items):
    # targets near 0 on most items and near 1 on one whole stratum and on three items of another: two sampled items
    # a stratum mostly see every stratum alike (a standard error near 0) and miss the three; the interval of scores
    # at the bounds holds. The t interval alone covered 0.48 and 0.36 of them. Tolerance: 200 draws x the strata's
    # targets (Monte-Carlo s.e. about 0.01 at 0.95) at least 0.93 overall and 0.85 for each target; the mean width
    # at most 1.1 times that of the same targets' scores rounded to 0/1 (Korn and Graubard's interval, which sees
    # the rounded scores alike within the strata too: 0.96 and 1.03 times it)
    src, _ = _graded(seed=7)
    strata = StratifiedHT(n_items, random_state=0).fit(src).strata_  # the strata do not depend on the seed
    sizes = np.bincount(strata)
    rng = np.random.default_rng(1)
    tgt = rng.uniform(0.0, 0.01, (len(sizes), len(strata)))
    for h in range(len(sizes)):
        tgt[h, strata == h] = rng.uniform(0.95, 1.0, sizes[h])
        tgt[h, rng.choice(np.flatnonzero(strata == (h + 1) % len(sizes)), 3, replace=False)] = rng.uniform(0.95, 1, 3)
    truth = tgt.mean(axis=1)
    hits, width, width01 = [], [], []
    for s in range(200):
        est = StratifiedHT(n_items, random_state=s).fit(src)
        ci = est.predict_interval(tgt[:, est.selected_]).confidence_interval(0.95)
        hits.append((ci.low <= truth) & (truth <= ci.high))
        width.append(ci.high - ci.low)
        ci01 = est.predict_interval(tgt[:, est.selected_].round()).confidence_interval(0.95)
        width01.append(ci01.high - ci01.low)
    hits = np.array(hits)
    assert hits.mean() >= 0.93
    assert hits.mean(axis=0).min() >= 0.85
    assert np.mean(width) <= 1.1 * np.mean(width01)


def test_floor_is_wilsons_interval_of_scores_at_the_bounds():
    # a graded target alike within every stratum (a = 0) gets at least Wilson's 95 % interval at its mean and the
    # sample's size n / (1 - n/N) (statsmodels' Wilson interval, its farther end), on the normal quantile; half an
    # item's worth of spread halves it, a whole item's removes it, and 0/1 targets get none
    from statsmodels.stats.proportion import proportion_confint

    src, _ = _graded(seed=7)
    est = StratifiedHT(10, random_state=3).fit(src)
    h = est.strata_[est.selected_]
    w = est.stratum_sizes_ / est.stratum_sizes_.sum()
    levels = np.linspace(0.05, 0.9, len(w))
    levels[h[0]] = 0.5
    level = levels[h]  # each stratum's sampled scores alike, at its own level
    tgt = np.vstack([level, level, level, (level > 0.5).astype(float)])
    first = np.flatnonzero(h == h[0])[:2]
    tgt[1, first] = [0.75, 0.25]  # spread of half an item, the same mean
    tgt[2, first] = [1.0, 0.0]  # of a whole item
    p = est.predict_interval(tgt)
    m = (w * levels).sum()
    n = 10 / (1 - 10 / len(est.strata_))
    low, high = proportion_confint(m * n, n, alpha=0.05, method="wilson")
    far = max(high - m, m - low) / stats.norm.ppf(0.975)
    np.testing.assert_allclose(p.floor, [far, far / 2, 0.0, 0.0], rtol=1e-9, atol=1e-12)
    ci = p.confidence_interval(0.9)
    assert ci.high[0] >= p.statistic[0] + stats.norm.ppf(0.95) * far - 1e-12
