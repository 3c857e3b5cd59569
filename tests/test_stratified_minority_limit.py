"""The limit of a stratified simple random sample with a few minority responses: every placement of the minority
items among the strata of small designs, one stratum against the Clopper-Pearson limit, StratifiedAIPW's intervals
on near-perfect targets, and bad input."""
import itertools
import warnings

import numpy as np
import pytest
from scipy import stats

from effstats._hypergeometric import stratified_minority_limit


def _designs():
    # tiny designs (at most 14 items), where the sample is a large share of each stratum, then two or three strata
    # of up to 200 items sampled sparsely and unevenly, where the limit is far from the count itself
    rng = np.random.default_rng(1)
    for big in (False, True):
        for _ in range(40):
            h = int(rng.integers(2, 4))
            size = rng.integers(20, 121, h) if big else rng.integers(1, 6, h)
            k = np.array([rng.integers(1, 16) if big else rng.integers(0, s + 1) for s in size])
            if k.sum() and k.sum() < size.sum() and (big or size.sum() <= 14):
                yield k, size


def _count_laws(pmfs, placements):
    """The law of the number of minority items in the sample, one row per placement: the strata's hypergeometric
    laws convolved."""
    law = np.ones((len(placements), 1))
    for pmf, w_h in zip(pmfs, placements.T):
        rows = pmf[w_h]
        out = np.zeros((len(law), law.shape[1] + rows.shape[1] - 1))
        for j in range(rows.shape[1]):
            out[:, j:j + law.shape[1]] += law * rows[:, j:j + 1]
        law = out
    return law


@pytest.mark.parametrize("level", [0.7, 0.9, 0.95])
def test_every_placement_on_small_designs_is_missed_at_most_a(level):
    # every placement (W_1, ..., W_H) of W minority items: the samples whose limit lies above W / N (their interval
    # misses the score on this side) have a probability of at most a = (1 - level) / 2
    a = (1 - level) / 2
    n_designs, worst_all = 0, []
    for k, size in _designs():
        n_designs += 1
        n_items, n = int(size.sum()), int(k.sum())
        limit = stratified_minority_limit(k, size, np.arange(n + 1), level)
        assert limit[0] == 0 and np.all(np.diff(limit) >= 0)
        assert np.all(limit[1:] * n_items > np.arange(1, n + 1) - 1e-9)  # at least the minority items seen
        limit = limit[:7]
        worst = 0.0
        # only placements of fewer minority items than the highest limit can be missed
        top = int(round(limit[-1] * n_items))
        pmfs = [stats.hypergeom(n_h, np.arange(min(n_h, top) + 1)[:, None], k_h).pmf(np.arange(k_h + 1))
                for k_h, n_h in zip(k, size)]
        placements = np.array(list(itertools.product(*(range(min(s, top) + 1) for s in size))))
        placements = placements[placements.sum(axis=1) < top]
        if len(placements):
            laws = _count_laws(pmfs, placements)
            # a sample of six or more minority responses has a limit of at least the sixth's, above W here
            at = limit[np.minimum(np.arange(laws.shape[1]), len(limit) - 1)]
            miss = np.where(at * n_items > placements.sum(axis=1)[:, None] + 1e-9, laws, 0).sum(axis=1)
            bad = np.flatnonzero(miss > a + 1e-12)
            assert not bad.size, (k, size, placements[bad[:1]], miss[bad[:1]])
            worst = miss.max()
        worst_all.append(worst)
    assert n_designs > 30
    # not vacuous: the sparse designs have placements that are missed, some of them nearly a of the time
    assert np.mean(np.array(worst_all) > 0) > 0.3 and max(worst_all) > a / 2, worst_all


def test_one_large_stratum_is_the_clopper_pearson_limit():
    # one stratum, a sample small against it: the binomial Clopper-Pearson limit of c of n, as a share of N
    for n, size in ((50, 10_000), (100, 2_000), (300, 10_000)):
        c = np.arange(1, 8)
        got = stratified_minority_limit([n], [size], c)
        cp = stats.beta.ppf(0.025, c, n - c + 1)
        np.testing.assert_allclose(got, np.maximum(np.ceil(cp * size - 1e-9), c) / size, atol=1.01 / size)


def test_a_dense_stratum_lowers_the_limit():
    # the minority items may gather where the sample is densest: a stratum sampled at twice the rate allows about
    # half as many
    even = stratified_minority_limit([25, 25], [1000, 1000], 3)
    dense = stratified_minority_limit([40, 10], [1000, 1000], 3)
    assert dense < 0.7 * even
    assert stratified_minority_limit([40, 10], [1000, 1000], 3) == stratified_minority_limit([40], [1000], 3) / 2


def test_stratified_estimators_take_the_limit_for_a_few_wrong_items():
    # StratifiedAIPW, RandomDirect with stratify and StratifiedHT: a 0/1 target with one to five minority responses
    # gets at least the worst-placement limit on the side towards all alike (above for a target mostly right, below
    # for one mostly wrong, the guesser), the rest of its interval that of n_minority=None; more minority responses
    # leave it alone
    import dataclasses

    from effstats.disco import RandomDirect, StratifiedAIPW, StratifiedHT

    from test_stratified_aipw import _far_targets

    src, tgt = _far_targets()  # 0.98, 0.99, 0.996, their wrong items among the best source's, and a guesser
    groups = np.repeat([0, 1, 2], [300, 700, 1000])
    seen = {"took": 0, "few": 0}
    for seed in range(12):
        for est in (StratifiedAIPW(50, random_state=seed), RandomDirect(50, stratify=groups, random_state=seed),
                    StratifiedHT(50, random_state=seed)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # targets beyond the sources' range
                p = est.fit(src).predict_interval(tgt)
            ci = p.confidence_interval(0.95)
            plain = dataclasses.replace(p, n_minority=None).confidence_interval(0.95)
            c = np.minimum((1 - tgt[:, est.selected_]).sum(axis=1), tgt[:, est.selected_].sum(axis=1))
            np.testing.assert_array_equal(p.n_minority, c)
            lim = stratified_minority_limit(p.n_sampled, p.population, c)
            few = (c >= 1) & (c <= 5)
            right = np.median(tgt[:, est.selected_], axis=1) > 0.5
            np.testing.assert_allclose(ci.high, np.where(few & right, np.maximum(plain.high, 1 - lim), plain.high))
            np.testing.assert_allclose(ci.low, np.where(few & ~right, np.minimum(plain.low, lim), plain.low))
            seen["few"] += few.sum()
            seen["took"] += (few & right & (1 - lim > plain.high + 1e-12)).sum()
    assert seen["few"] > 20 and seen["took"] > 3, seen


def test_stratified_aipw_covers_samples_with_two_to_five_wrong_items():
    # Monte Carlo, 200 draws of 50 items: pooled over the three targets mostly right, the samples with two to
    # five wrong items (about a tenth of them) are covered at least 0.93 of the time, and the targets overall at
    # least 0.95 less three Monte-Carlo standard errors
    from effstats.disco import StratifiedAIPW

    from test_stratified_aipw import _far_targets

    src, tgt = _far_targets()
    tgt = tgt[:3]  # 0.98, 0.99, 0.996
    truth = tgt.mean(axis=1)
    hits, counts = [], []
    for seed in range(200):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = StratifiedAIPW(50, random_state=seed).fit(src)
            ci = est.predict_interval(tgt).confidence_interval(0.95)
        hits.append((ci.low <= truth) & (truth <= ci.high))
        counts.append((1 - tgt[:, est.selected_]).sum(axis=1))
    hits, counts = np.array(hits), np.array(counts)
    few = (counts >= 2) & (counts <= 5)
    assert few.sum() > 40 and hits[few].mean() >= 0.93, (few.sum(), hits[few].mean())
    assert np.all(hits.mean(axis=0) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / 200)), hits.mean(axis=0)


def test_an_even_split_has_no_minority_side():
    # five wrong of ten sampled items: no side is towards all alike, the interval is Korn & Graubard's; four wrong
    # of ten: a minority, whose limit the interval reaches at least
    import dataclasses

    from effstats.datasets import simulate_responses
    from effstats.disco import StratifiedAIPW

    est = StratifiedAIPW(10, random_state=0).fit(simulate_responses(30, 400, rng=0))
    tgt = np.ones((2, 400))
    tgt[0, est.selected_[:5]] = 0
    tgt[1, est.selected_[:4]] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # targets beyond the sources' range
        p = est.predict_interval(tgt)
    ci, plain = p.confidence_interval(0.9), dataclasses.replace(p, n_minority=None).confidence_interval(0.9)
    np.testing.assert_array_equal(p.n_minority, [5, 4])
    assert ci.low[0] == plain.low[0] and ci.high[0] == plain.high[0]
    lim = stratified_minority_limit(p.n_sampled[1], p.population[1], 4, 0.9)
    assert ci.high[1] == max(plain.high[1], 1 - lim) and ci.low[1] == plain.low[1]


@pytest.mark.parametrize("args, match", [
    (([2, 1], [5, 5], 4), "n_minority: expected at most the items sampled"),
    (([2, 1], [5, 5], -1), "n_minority"),
    (([2, 1], [5, 5], 1.5), "n_minority"),
    (([6, 1], [5, 5], 1), "n_sampled"),
    (([1, 1], [5, 5], 1, 1.5), "confidence_level"),
])
def test_bad_input_names_the_argument(args, match):
    with pytest.raises(ValueError, match=match):
        stratified_minority_limit(*args)
