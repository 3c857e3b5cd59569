"""Reference (source) matrices and targets with missing cells: every subset estimator, the IRT model and Sort &
Search use the observed cells, say how many were missing, never select an item nobody answered, and estimate a
target that lacks some selected items from the others, with a warning naming them."""
import warnings

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.disco import DISCO, AnchorCorr, MethodChooser, RandomDirect, SortSearchDirect, StratifiedHT, select_top_k
from effstats.disco._selection import _disagreement
from effstats.irt import IRT2PL, TinyBenchmarks
from effstats.sortsearch import CopyNearestExpand, HybridSearch, SortSearch


def irt_matrix(m=60, n=240, seed=0):
    """Simulated 1-D 2PL correctness, (m, n) bool."""
    rng = np.random.default_rng(seed)
    theta, b, a = rng.normal(size=m), rng.normal(size=n), rng.lognormal(0, 0.3, n)
    return rng.random((m, n)) < 1 / (1 + np.exp(-a * (theta[:, None] - b[None, :])))


def mcar(shape, rate, seed=1):
    return np.random.default_rng(seed).random(shape) < rate


ESTIMATORS = {
    "disco": lambda: DISCO(20, signature="correctness", predictor="knn", pca=None, metric="euclidean", random_state=0),
    "random": lambda: RandomDirect(20, random_state=0),
    "anchor": lambda: AnchorCorr(20, random_state=0),
    "stratified": lambda: StratifiedHT(20, random_state=0),
    "sortsearch": lambda: SortSearchDirect(20),
    "tiny": lambda: TinyBenchmarks(20, n_dims=1, random_state=0),
}


def fit_quiet(est, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(*args)


def predict_quiet(est, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.predict(x)


# ------------------------------------------------------------------ (a) the observed data, brute force
def test_sortsearch_order_is_the_observed_fraction_correct():
    y = irt_matrix()
    miss = mcar(y.shape, 0.15)
    est = fit_quiet(SortSearch(), np.where(miss, np.nan, y))
    frac = np.array([y[~miss[:, j], j].mean() for j in range(y.shape[1])])
    assert np.all(np.diff(frac[est.order_]) <= 1e-12)
    # complete data: the sum order, whatever `missing` says
    np.testing.assert_array_equal(SortSearch().fit(y).order_, SortSearch(missing="raise").fit(y).order_)


def test_disco_selects_by_observed_disagreement():
    y = irt_matrix()
    miss = mcar(y.shape, 0.15)
    est = fit_quiet(DISCO(20, selection="pds", signature="correctness", pca=None, random_state=0),
                    np.where(miss, np.nan, y.astype(float)))
    # brute force: each item's PDS / JSD over the models that answered it (correctness as a 2-class distribution)
    def score(j, measure):
        col = y[~miss[:, j], j:j + 1].astype(float)
        return _disagreement(np.stack([1 - col, col], axis=-1), measure)[0]

    pds = np.array([score(j, "pds") for j in range(y.shape[1])])
    jsd = np.array([score(j, "jsd") for j in range(y.shape[1])])
    np.testing.assert_allclose(est.scores_, pds)
    expect = select_top_k(pds, 20, rng=np.random.default_rng(0), tiebreak=jsd)
    assert set(est.selected_) == set(expect)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_source_scores_are_observed_means(name):
    y = irt_matrix(40, 200)
    miss = mcar(y.shape, 0.15)
    est = fit_quiet(ESTIMATORS[name](), np.where(miss, np.nan, y.astype(float)))
    observed_mean = np.array([y[i, ~miss[i]].mean() for i in range(len(y))])
    np.testing.assert_allclose(est._source[1], observed_mean)


def test_irt_likelihood_skips_missing_cells():
    y = irt_matrix(60, 200)
    miss = mcar(y.shape, 0.15)
    fit = IRT2PL(1).fit(np.where(miss, np.nan, y.astype(float)))
    assert fit.n_missing_ == miss.sum()
    # the value at a missing cell does not matter: flipping every hidden answer gives the same fit
    flipped = ResponseMatrix(np.where(miss, 1 - y, y).astype(float), missing=miss)
    np.testing.assert_allclose(IRT2PL(1).fit(flipped).b_, fit.b_, atol=1e-10)
    jml = IRT2PL(2).fit(np.where(miss, np.nan, y.astype(float)))
    np.testing.assert_allclose(IRT2PL(2).fit(flipped).b_, jml.b_, atol=1e-10)


def test_anchor_embedding_imputes_the_item_mean():
    y = irt_matrix(40, 200).astype(float)
    miss = mcar(y.shape, 0.15)
    est = fit_quiet(AnchorCorr(20, random_state=0), np.where(miss, np.nan, y))
    means = np.array([y[~miss[:, j], j].mean() for j in range(y.shape[1])])
    ref = AnchorCorr(20, random_state=0).fit(np.where(miss, means, y))  # the imputed matrix, fitted as complete data
    np.testing.assert_array_equal(est.selected_, ref.selected_)
    np.testing.assert_allclose(est.weights_, ref.weights_)


# ------------------------------------------------------------------ (b) 15 % MCAR stays close
# With missing source cells the selected items change, so an estimate moves by about the estimator's own sampling
# error (for random items not at all: the draw does not look at the cells). What must not happen is a systematic
# loss: over three simulated 80 x 300 splits (60 source models, 20 items), the MAE against the true scores with
# 15 % of the source cells missing (MCAR) stays within 3 points of the complete-data MAE.
def _splits():
    for seed in range(3):
        y = irt_matrix(80, 300, seed=10 + seed)
        yield y[:60], y[60:], mcar((60, 300), 0.15, seed)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_mcar_source_cells_leave_estimates_close(name):
    full, part = [], []
    for src, tgt, miss in _splits():
        f = ESTIMATORS[name]().fit(src.astype(float))
        p = fit_quiet(ESTIMATORS[name](), np.where(miss, np.nan, src.astype(float)))
        full.append(np.abs(f.predict(tgt[:, f.selected_].astype(float)) - tgt.mean(1)).mean())
        part.append(np.abs(p.predict(tgt[:, p.selected_].astype(float)) - tgt.mean(1)).mean())
    assert np.mean(part) < np.mean(full) + 0.03


def test_mcar_sortsearch_accuracy_stays_close():
    full, part = [], []
    for src, tgt, miss in _splits():
        full.append(np.abs(SortSearch().fit(src).simulate(tgt, 20).accuracy - tgt.mean(1)).mean())
        part.append(np.abs(fit_quiet(SortSearch(), np.where(miss, np.nan, src)).simulate(tgt, 20).accuracy
                           - tgt.mean(1)).mean())
    assert np.mean(part) < np.mean(full) + 0.03


# ------------------------------------------------------------------ (c) a target lacking selected items
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_target_missing_selected_items_is_estimated_with_a_warning(name):
    y = irt_matrix(60, 240, seed=5)
    est = ESTIMATORS[name]().fit(y[:45].astype(float))
    t = y[45:][:, est.selected_].astype(float)
    ref = est.predict(t)
    # Sort & Search's k/n moves by whole cells of its easy-to-hard order: the same cells lack outputs whatever the
    # column order (the three easiest and the eighth); the others take columns in selected_ order
    rank = est.sortsearch_.rank_[est.selected_] if name == "sortsearch" else np.arange(len(est.selected_))
    cols = np.argsort(rank, kind="stable")[[0, 1, 2, 7]]
    t[0, cols[:3]] = np.nan
    t[1, cols[3]] = np.nan
    ids = est.selected_[np.sort(cols)].tolist()
    with pytest.warns(UserWarning,
                      match=rf"^target_outputs: 4 cells missing on 4 of the {t.shape[1]} selected items {ids}"
                      .replace("[", r"\[").replace("]", r"\]")):
        got = est.predict(t)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got[2:], ref[2:], rtol=0, atol=1e-12)  # complete targets: unchanged
    assert np.abs(got[:2] - ref[:2]).max() < 0.15
    p = predict_interval_quiet(est, t)
    assert p.n_missing_target == 4 and p.n_missing == 0
    t[3] = np.nan
    with pytest.raises(ValueError, match=r"^target_outputs: targets \[3\] \(positions\) have no output"):
        est.predict(t)


def predict_interval_quiet(est, t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.predict_interval(t)


def test_random_direct_uses_the_observed_items():
    y = irt_matrix(40, 200).astype(float)
    est = RandomDirect(30, random_state=0).fit(y[:30])
    t = y[30:][:, est.selected_]
    t[0, :10] = np.nan
    got = predict_quiet(est, t)
    assert got[0] == pytest.approx(np.nanmean(t[0]))


@pytest.mark.parametrize("empty, into", [(4, 3), (2, 1)])  # the last stratum; a tie goes to the harder side
def test_stratified_collapses_an_empty_stratum_into_its_neighbour(empty, into):
    """A stratum without an observed item of the target is collapsed with its nearest neighbour in the difficulty
    order: the neighbour's mean with both weights, and its variance term (W_h + W_h')^2 s^2/n (1 - n/(N_h + N_h'))
    (Cochran 1977, Sect. 5A.12), by hand."""
    y = irt_matrix(40, 300).astype(float)
    est = StratifiedHT(30, n_strata=5, random_state=0).fit(y[:30])
    t = y[30:31][:, est.selected_].copy()
    h = est.strata_[est.selected_]
    t[0, h == empty] = np.nan
    with pytest.warns(UserWarning, match=rf"stratum {empty} .* its neighbour, stratum {into}, its missing results "
                                         "assumed like the answered ones"):
        p = est.predict_interval(t)
    sizes = est.stratum_sizes_.astype(float)
    merged = sizes.copy()
    merged[into] += merged[empty]
    merged[empty] = 0
    w = merged / sizes.sum()
    keep = np.arange(5) != empty
    obs = [t[0, h == g] for g in range(5)]
    means = np.array([np.nanmean(v) if g != empty else 0.0 for g, v in enumerate(obs)])
    n = np.array([np.isfinite(v).sum() for v in obs], float)
    s2 = np.array([np.nanvar(v, ddof=1) if g != empty else 0.0 for g, v in enumerate(obs)])
    assert (n[keep] > 1).all()  # no stratum borrows the pooled variance here
    se = np.sqrt((w[keep] ** 2 * s2[keep] / n[keep] * (1 - n[keep] / merged[keep])).sum())
    assert p.statistic[0] == pytest.approx((w * means).sum(), abs=1e-12)
    assert p.standard_error[0] == pytest.approx(se, rel=1e-12) and se > 0


def test_random_direct_collapses_an_empty_group_into_its_neighbour():
    """With ``stratify``, a group without an observed item of the target: the next group's mean (the lower one at a
    tie) counts with both groups' shares of the drawn items, by hand; a target missing a few items of each group keeps
    the mean over its observed items."""
    y = irt_matrix(40, 300).astype(float)
    groups = np.arange(300) % 4
    est = RandomDirect(40, stratify=groups, random_state=0).fit(y[:30])
    g = groups[est.selected_]
    t = y[30:32][:, est.selected_].copy()
    t[0, g == 2] = np.nan  # equally near groups 1 and 3: group 1
    t[1, np.flatnonzero(g == 2)[:3]] = np.nan
    with pytest.warns(UserWarning, match=r"stratum 2 .* its neighbour, stratum 1, its missing results assumed"):
        got = est.predict(t)
    share = np.bincount(g, minlength=4) / len(g)
    means = np.array([np.nanmean(t[0, g == k]) if k != 2 else 0.0 for k in range(4)])
    share[1] += share[2]
    share[2] = 0
    assert got[0] == pytest.approx((share * means).sum(), abs=1e-12)
    assert got[1] == pytest.approx(np.nanmean(t[1]), abs=1e-12)


def test_sortsearch_target_missing_cells():
    y = irt_matrix(60, 240)
    ss = SortSearch().fit(y[:40])
    items = ss.select(24)
    r = y[40:][:, items].astype(float)
    ref = ss.predict(r.astype(bool), items)
    by_cell = np.argsort(ss.rank_[items])  # column of each cell, easiest first (items are in ascending item order)
    r[0, by_cell[5]] = np.nan
    with pytest.warns(UserWarning,
                      match=rf"^responses: 1 cells missing on 1 of the 24 evaluated items \[{items[by_cell[5]]}\]"):
        res = ss.predict(r, items)
    assert res.n_missing_target == 1 and res.n_missing == 0
    np.testing.assert_array_equal(res.accuracy[1:], ref.accuracy[1:])
    # brute force: cell 5's weight goes to the nearer of cells 4 and 6 (equal cells: half to each)
    w = np.diff((np.arange(25) * 240) // 24) / 240
    w2 = w.copy()
    w2[4] += w[5] / 2
    w2[6] += w[5] / 2
    w2[5] = 0
    assert res.accuracy[0] == pytest.approx((w2 * np.nan_to_num(r[0, by_cell])).sum())


def test_sortsearch_standard_error_with_missing_cells_matches_monte_carlo_spread():
    # strong models on a well-ordered benchmark (accuracy 0.82-0.97, as CIFAR-10's): each new model misses a
    # random 20% of the 100 chosen items; over 200 selections and missing patterns the standard error must match
    # the estimates' spread (Monte-Carlo error of a 200-draw SD is about 5%)
    rng = np.random.default_rng(0)
    theta, b = np.r_[rng.normal(size=40), np.linspace(0.5, 2.0, 10)], rng.normal(-1, 1.5, 2000)
    y = rng.random((50, 2000)) < 1 / (1 + np.exp(-3 * (theta[:, None] - b[None, :])))
    est, se = [], []
    for s in range(200):
        ss = SortSearch(sampling="stratified", random_state=s).fit(y[:40])
        items = ss.select(100)
        r = y[40:][:, items].astype(float)
        r[np.random.default_rng(1000 + s).random(r.shape) < 0.2] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = ss.predict(r, items)
        est.append(res.statistic)
        se.append(res.standard_error)
    ratio = np.sqrt((np.array(se) ** 2).mean(axis=0)) / np.array(est).std(axis=0, ddof=1)
    assert 0.85 < ratio.mean() < 1.15, ratio
    assert ((ratio > 0.7) & (ratio < 1.35)).all(), ratio
    # and the interval's width agrees with it (Korn-Graubard's near-normal interval at these accuracies), except
    # where one or two wrong items bound the effective size by the sample's, which only widens the interval
    ci = res.confidence_interval(0.95)
    half, many = (ci.high - ci.low) / (2 * 1.96), res.minority > 2
    assert many.sum() >= 8
    np.testing.assert_allclose(half[many], res.standard_error[many], rtol=0.35)
    assert (half[~many] > res.standard_error[~many]).all()


# ------------------------------------------------------------------ (d) an item nobody answered
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_unanswered_item_is_never_selected(name):
    y = irt_matrix(40, 60).astype(float)
    y[:, :5] = np.nan  # items 0-4: no source model answered
    est = fit_quiet(ESTIMATORS[name](), y)
    assert not np.isin(est.selected_, np.arange(5)).any()


def test_sortsearch_unanswered_item_never_selected():
    y = irt_matrix(40, 60).astype(float)
    y[:, :5] = np.nan
    ss = SortSearch().fit(y)
    assert ss.n_answered_ == 55
    assert not np.isin(ss.select(55), np.arange(5)).any()
    cne = CopyNearestExpand(random_state=0).fit(y)
    assert not np.isin(cne.select(55), np.arange(5)).any()


def test_disco_random_and_pds_with_groups_skip_unanswered():
    y = irt_matrix(40, 80).astype(float)
    y[:, ::4] = np.nan
    groups = np.repeat(np.arange(4), 20)
    for sel in ("pds", "random"):
        est = fit_quiet(DISCO(20, selection=sel, stratify=groups, signature="correctness", pca=None, random_state=0), y)
        assert (est.selected_ % 4 != 0).all()


# ------------------------------------------------------------------ (e) counts
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_n_missing_counts_and_warns_only_when_missing(name):
    y = irt_matrix(40, 120).astype(float)
    miss = mcar(y.shape, 0.1)
    with pytest.warns(UserWarning, match=rf"source_outputs: {miss.sum()} of {y.size} cells are missing"):
        est = ESTIMATORS[name]().fit(ResponseMatrix(np.where(miss, 0, y), missing=miss))
    assert est.n_missing_ == miss.sum() and isinstance(est.n_missing_, int)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert ESTIMATORS[name]().fit(y).n_missing_ == 0


def test_counts_on_sortsearch_and_its_baselines():
    y = irt_matrix(50, 120)
    miss = mcar(y.shape, 0.1)
    yf = np.where(miss, np.nan, y.astype(float))
    ss = SortSearch().fit(pd.DataFrame(yf[:40]))
    assert ss.n_missing_ == miss[:40].sum()
    assert ss.simulate(y[40:], 20).n_missing == miss[:40].sum()
    hs = HybridSearch(budget=20, cv=3, random_state=0).fit(yf[:40])
    assert hs.n_missing_ == miss[:40].sum()
    res = hs.simulate(y[40:])
    assert res.n_missing == miss[:40].sum() and np.isfinite(res.accuracy).all()
    cne = CopyNearestExpand(random_state=0).fit(yf[:40])
    assert cne.n_missing_ == miss[:40].sum()
    r = cne.simulate(y[40:], 20)
    assert r.n_missing == miss[:40].sum() and np.isfinite(r.accuracy).all()


def test_method_chooser_with_missing_cells():
    y = irt_matrix(40, 120).astype(float)
    miss = mcar(y.shape, 0.1)
    cands = {"random + direct": RandomDirect(), "anchor": AnchorCorr()}
    mc = fit_quiet(MethodChooser(cands, n_items=15, n_splits=3, random_state=0), np.where(miss, np.nan, y)[:30])
    assert mc.n_missing_ == miss[:30].sum()
    assert np.isfinite(mc.cv_results_["cv_mae"]).all()
    assert np.isfinite(predict_quiet(mc, y[30:][:, mc.selected_])).all()


def test_a_binary_response_matrix_with_missing_cells_is_read_as_its_values_with_nan_are():
    """The IRT model and copy-nearest take a ResponseMatrix read as 0/1 as it is, and a plain array of its values
    with NaN through the 0/1 check: the same matrix and mask either way; graded scores are refused either way."""
    from effstats.irt._model import _binary_with_mask
    from effstats.sortsearch._copy_nearest import _source_with_missing

    y = irt_matrix(30, 200)
    miss = mcar(y.shape, 0.1)
    rm = ResponseMatrix(np.where(miss, 0.5, y + np.where(y, -1e-13, 1e-13)), missing=miss)
    assert rm.kind == "binary"
    for got, want in ((_binary_with_mask(rm, "Y"), _binary_with_mask(rm.to_frame(), "Y")),
                      (_source_with_missing(rm), _source_with_missing(rm.to_frame()))):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(_binary_with_mask(rm, "Y")[0], y & ~miss)
    graded = ResponseMatrix(np.where(y, 0.75, 0.0), missing=miss)
    for read in (lambda: _binary_with_mask(graded, "Y"), lambda: _source_with_missing(graded)):
        with pytest.raises(ValueError, match=r"expected binary 0/1 values, found \[0\.75\]"):
            read()
