"""DISCO's defaults (random items, ridge difference estimate, PCA sized to the pool), PDS = JSD on 0/1 data, and a
chooser that compares fairly (Sort & Search's design-based accuracy, its candidates' seed, regret, interval width)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from effstats.datasets import data_root, load_cifar10_predictions, load_lifelong_digits
from effstats.disco import DISCO, MethodChooser, RandomDirect, compare_methods, default_candidates, summarize_comparison
from effstats.disco._estimator import _subset_se
from effstats.sortsearch import SortSearch
from effstats.splits import random_split

try:
    ROOT = data_root()
except FileNotFoundError:  # the data live beside the checkout, not in the repository
    ROOT = None
needs_data = pytest.mark.skipif(ROOT is None, reason="shared/data/predictions not found beside the checkout")


@pytest.fixture(scope="module")
def digits():
    return load_lifelong_digits(probabilities=False)


@pytest.fixture(scope="module")
def cifar():
    return load_cifar10_predictions(domains="cifar10")


def _mae(est, rm, sp):
    s = rm.accuracy().to_numpy()
    src, tgt = sp.apply(rm)
    return 100 * np.abs(est.fit(src, s[sp.source]).predict(tgt) - s[sp.target]).mean()


# ----------------------------------------------------------------------------------------------------- defaults
def test_defaults_are_the_benchmarked_setting():
    p = DISCO().get_params()
    assert (p["n_items"], p["selection"], p["predictor"], p["estimate"], p["pca"]) == (100, "random", "ridge",
                                                                                       "difference", "auto")


@needs_data
def test_defaults_beat_random_items_on_cifar10_over_ten_splits(cifar):
    # figures/disco_defaults.csv: CIFAR-10, 8 targets, 100 items: 1.23 ± 0.39 vs 2.21 ± 0.99 points
    d, r = [], []
    for seed in range(10):
        sp = random_split(cifar, 8, rng=seed)
        d.append(_mae(DISCO(random_state=seed), cifar, sp))
        r.append(_mae(RandomDirect(100, random_state=seed), cifar, sp))
    d, r = np.array(d), np.array(r)
    assert d.mean() < 0.7 * r.mean()
    assert (d < r).sum() >= 8
    assert d.std(ddof=1) < r.std(ddof=1)  # steadier too


def test_defaults_beat_random_items_and_the_paper_setting_on_digits(digits):
    # the bundled digits benchmark (correctness only, 400 / 100 models): the default difference estimate is better
    # than random items on every split, and better than the paper's PDS + RF signature regression on average
    paper, default, rand = [], [], []
    for seed in range(3):
        sp = random_split(digits, 100, rng=seed)
        paper.append(_mae(DISCO(selection="pds", predictor="rf", estimate="signature", random_state=seed), digits, sp))
        default.append(_mae(DISCO(random_state=seed), digits, sp))
        rand.append(_mae(RandomDirect(100, random_state=seed), digits, sp))
    assert all(d < r for d, r in zip(default, rand))
    assert np.mean(default) < np.mean(paper)


def test_difference_estimate_is_the_direct_mean_plus_the_predicted_difference(digits):
    src, tgt = digits.subset(models=range(60)), digits.subset(models=range(60, 80))
    # a ridge regression that can fit nothing predicts the mean difference of the sources
    est = DISCO(50, predictor=Ridge(alpha=1e12), pca=None, random_state=0).fit(src)
    y_src, y_tgt = src.values.astype(float), tgt.values.astype(float)
    sel = est.selected_
    shift = (y_src.mean(axis=1) - y_src[:, sel].mean(axis=1)).mean()
    np.testing.assert_allclose(est.predict(tgt), y_tgt[:, sel].mean(axis=1) + shift, atol=1e-9)
    # the signature estimate of the same regression is the sources' mean score, whatever the target
    sig = DISCO(50, predictor=Ridge(alpha=1e12), pca=None, estimate="signature", random_state=0).fit(src)
    np.testing.assert_allclose(sig.predict(tgt), y_src.mean(), atol=1e-9)


def test_pca_auto_fits_the_pool_without_a_warning(digits):
    src = digits.subset(models=range(40))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = DISCO(60, random_state=0).fit(src)
    assert est.n_components_ == 39 == est.pca_.n_components_  # M - 1 < 256
    assert DISCO(20, random_state=0).fit(digits.subset(models=range(300))).n_components_ == 20  # signature length
    assert DISCO(100, random_state=0).fit(digits.subset(models=range(300))).n_components_ == 100
    with pytest.warns(UserWarning, match="pca: 256 components requested"):  # an explicit size is not changed silently
        DISCO(60, pca=256, random_state=0).fit(src)
    assert DISCO(60, pca=None, random_state=0).fit(src).n_components_ is None


def test_arguments_are_named(digits):
    rm = digits.subset(models=range(20))
    with pytest.raises(ValueError, match="^estimate: expected one of 'difference', 'signature', got 'direct'$"):
        DISCO(10, estimate="direct").fit(rm)
    for bad in ("all", 0, 2.5, True):
        with pytest.raises(ValueError, match=f"^pca: expected 'auto', None or an integer >= 1, got {bad!r}$"):
            DISCO(10, pca=bad).fit(rm)
    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.ones(3), size=(10, 30))
    with pytest.raises(ValueError, match="^estimate: 'difference' needs each model's correctness"):
        DISCO(10).fit(proba, rng.random(10))
    DISCO(10, estimate="signature", pca=None).fit(proba, rng.random(10))  # the paper's estimate needs no labels


# ----------------------------------------------------------------------------------------------------- PDS = JSD
def test_pds_and_jsd_select_the_same_items_on_01_data_and_not_on_class_ids(digits):
    src = digits.subset(models=range(50))
    for seed in range(3):
        a = DISCO(40, selection="pds", random_state=seed).fit(src)
        b = DISCO(40, selection="jsd", random_state=seed).fit(src)
        np.testing.assert_array_equal(a.selected_, b.selected_)
        np.testing.assert_array_equal(a.predict(digits.subset(models=range(50, 60))),
                                      b.predict(digits.subset(models=range(50, 60))))
        assert set(np.unique(a.scores_)) == {0.5, 1.0}
    # with class ids, PDS counts distinct classes and JSD the entropy of the votes: other items
    item0 = [0] * 8 + [1, 2]  # 3 classes, votes 8/1/1: PDS 3, entropy 0.64 nats
    item1 = [0] * 5 + [1] * 5  # 2 classes, votes 5/5: PDS 2, entropy 0.69 nats
    pred = np.c_[item0, item1, np.zeros(10, int), np.ones(10, int)]
    lab = np.zeros(4, dtype=int)
    pds = DISCO(1, selection="pds", pca=None, estimate="signature", predictor="knn").fit(pred, labels=lab).selected_
    jsd = DISCO(1, selection="jsd", pca=None, estimate="signature", predictor="knn").fit(pred, labels=lab).selected_
    assert pds.tolist() == [0] and jsd.tolist() == [1]


# ----------------------------------------------------------------------------------------------------- intervals
def test_difference_intervals_scale_with_each_models_standard_error(digits):
    src, tgt = digits.subset(models=range(80)), digits.subset(models=range(80, 100))
    est = DISCO(60, random_state=0).fit(src)
    p = est.predict_interval(tgt)
    ci = p.confidence_interval(0.9)
    half = (ci.high - ci.low) / 2
    se = _subset_se(est._target(tgt), digits.n_items)
    inside = (ci.low > 0) & (ci.high < 1)  # unclipped
    ratio = half[inside] / se[inside]
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)  # one quantile, times each target's own scale
    assert np.ptp(half[inside]) > 0.2 * half[inside].mean()
    np.testing.assert_allclose(p.to_frame(0.9)[["low", "high"]].to_numpy(), np.c_[ci.low, ci.high])
    # the signature estimate keeps one half-width for every target
    q = DISCO(60, estimate="signature", random_state=0).fit(src).predict_interval(tgt).confidence_interval(0.9)
    assert np.ptp((q.high - q.low)[(q.low > 0) & (q.high < 1)]) < 1e-12


# ----------------------------------------------------------------------------------------------------- chooser
@needs_data
def test_chooser_sort_and_search_is_the_design_based_accuracy(cifar):
    s = cifar.accuracy().to_numpy()
    sp = random_split(cifar, 8, rng=0)
    src, tgt = sp.apply(cifar)
    cands = {k: v for k, v in default_candidates(100, irt=False).items() if k in ("random + direct", "Sort & Search")}
    ch = MethodChooser(cands, random_state=3).fit(src, s[sp.source])
    ss = ch.estimators_["Sort & Search"]
    ref = SortSearch(sampling="stratified", random_state=ch.candidate_random_state_).fit(src.values.astype(bool))
    np.testing.assert_array_equal(np.sort(ref.select(100)), np.sort(ss.selected_))
    y = tgt.values.astype(bool)[:, ss.selected_]
    np.testing.assert_allclose(ss.predict(tgt), ref.predict(y, items=ss.selected_).accuracy)
    p = ss.predict_interval(tgt)
    assert p.method == "design"
    np.testing.assert_allclose(p.standard_error, ref.predict(y, items=ss.selected_).standard_error)
    # over 10 splits: the design-based accuracy is far closer than k / n of the predicted vector
    from effstats.disco import SortSearchDirect

    design = np.mean([_mae(default_candidates(100, irt=False)["Sort & Search"].set_params(random_state=r), cifar,
                           random_split(cifar, 8, rng=r)) for r in range(10)])
    kn = np.mean([_mae(SortSearchDirect(100, random_state=r), cifar, random_split(cifar, 8, rng=r)) for r in range(10)])
    assert design < 0.6 * kn


def test_chooser_candidates_get_one_documented_seed(digits):
    src = digits.subset(models=range(40))
    cands = {"random + direct": RandomDirect(30), "DISCO difference + ridge": DISCO(30)}
    ch = MethodChooser(cands, n_items=30, random_state=7).fit(src)
    assert ch.candidate_random_state_ == int(np.random.default_rng(7).integers(2**31 - 1))
    alone = DISCO(30, random_state=ch.candidate_random_state_).fit(src)
    np.testing.assert_array_equal(alone.selected_, ch.estimators_["DISCO difference + ridge"].selected_)
    tgt = digits.subset(models=range(40, 50))
    np.testing.assert_array_equal(alone.predict(tgt), ch.estimators_["DISCO difference + ridge"].predict(tgt))
    assert MethodChooser(cands, n_items=30).fit(src).candidate_random_state_ is None


def test_compare_methods_reports_regret_and_width(digits):
    rm = digits.subset(models=range(60))
    cands = {"random + direct": RandomDirect(40), "DISCO difference + ridge": DISCO(40),
             "DISCO PDS + kNN": DISCO(40, selection="pds", predictor="knn", estimate="signature")}
    splits = [random_split(rm, 15, rng=s) for s in range(3)]
    tab = compare_methods(rm, splits, cands, n_items=40, seeds=[0], confidence_level=0.9)
    ch = tab[tab.method == "chooser"].set_index("split")
    single = tab[tab.method != "chooser"]
    best = single.loc[single.groupby("split")["mae"].idxmin()].set_index("split")
    np.testing.assert_allclose(ch["regret"], ch["mae"] - best.loc[ch.index, "mae"])
    assert (ch["best"] == best.loc[ch.index, "method"]).all()
    assert (ch["regret"] >= 0).all() and ((ch["regret"] == 0) == (ch["picked"] == ch["best"])).all()
    s = summarize_comparison(tab)
    assert s.loc["chooser", "regret"] == pytest.approx(ch["regret"].mean())
    assert s.loc["chooser", "missed"] == pytest.approx((ch["regret"] > 0).mean())
    cols = list(s.columns)
    assert cols.index("width") == cols.index("coverage") + 1  # width beside coverage
    assert np.isnan(s.drop(index="chooser")["regret"]).all()
    assert (s["width"] > 0).all() and s["mae_sd"].notna().all()
