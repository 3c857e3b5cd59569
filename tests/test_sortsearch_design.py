"""Sort & Search design-based estimates: the Korn-Graubard interval near 0 and 1, the cross-fitted difference
estimator (brute force on hand cases, Monte Carlo bias / coverage / variance), the design carried explicitly and
bad input."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats
from scipy.special import expit, logit

from effstats import ResponseMatrix
from effstats.bitpack import PackedBinaryMatrix
from effstats.sortsearch import (CopyNearestExpand, HybridSearch, SortSearch, estimate_accuracy, korn_graubard_interval,
                                 stratified_positions)
from effstats.sortsearch.estimate import design_df

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
from test_sortsearch import irt  # noqa: E402


def cp(x: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson limits at a (fractional) count x of n."""
    a = (1 - level) / 2
    lo = stats.beta.ppf(a, x, n - x + 1) if x > 0 else 0.0
    hi = stats.beta.ppf(1 - a, x + 1, n - x) if x < n else 1.0
    return lo, hi


# ------------------------------------------------------------------ Korn-Graubard near 0 and 1
def test_kg_interval_is_continuous_at_zero():
    kg = korn_graubard_interval
    # se = 0 (all evaluated items alike): the Clopper-Pearson interval of the count, 0 of 8
    assert kg(0.0, 0.0, 8, 1000) == pytest.approx(cp(0, 8))
    # a fixed se > 0: the interval moves continuously with the estimate (it jumped to [0, 0.975] at 1e-9)
    at0, near0, at01 = kg(0.0, 0.02, 8, 1000), kg(1e-9, 0.02, 8, 1000), kg(0.01, 0.02, 8, 1000)
    assert near0.high == pytest.approx(at0.high, abs=1e-6) and near0.high < 0.2
    assert at01.high >= near0.high - 3e-3 and at01.high < 0.2
    # however large se is, never wider than Clopper-Pearson at b/2 items times the df factor
    r = (stats.t.ppf(0.025, 7) / stats.t.ppf(0.025, 4)) ** 2
    assert kg(1e-9, 0.4, 8, 1000, df=4).high <= cp(1e-9 * 4 * r, 4 * r)[1] + 1e-9
    # the difference estimator on a model wrong on all 5 evaluated items: an interval no wider than
    # Clopper-Pearson's for 0 of 5, not [0, 0.975]
    a = np.zeros((5, 50), bool)
    res = SortSearch(estimator="difference").fit(a).simulate(np.zeros((2, 50), bool), 5)
    assert (res.accuracy == 0).all() and (res.confidence_interval().high <= cp(0, 5)[1] + 1e-9).all()


@settings(max_examples=60, deadline=None)
@given(
    b=st.integers(1, 4096),
    se=st.floats(1e-5, 0.5),
    adj=st.booleans(),
    level=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_kg_limits_monotone_in_estimate_and_bounded_near_the_ends(b, se, adj, level):
    """At a fixed effective size the limits are non-decreasing in the estimate (Clopper-Pearson's are in the count;
    at a fixed se they need not be: the effective size falls towards its clip near 0 and 1, see the docstring),
    every interval contains its estimate, and near 0 / 1 none is wider than Clopper-Pearson at
    b / 2 × (t_{b-1} / t_df)² items (the design effect is capped at 2)."""
    df = design_df("systematic", b) if adj else None
    p = np.linspace(0, 1, 801)
    ci = korn_graubard_interval(p, np.full_like(p, se), b, 10**7, level, df=df)
    assert (ci.low <= p + 1e-12).all() and (p <= ci.high + 1e-12).all()
    # the effective size the interval uses: n* = p~(1 - p~) / se^2 at the shrunk p~, inside the clip [b/2, 4b]
    n_star = float(np.clip(1.0 / (se * se) / 4, b / 2, 4 * b)) if b > 1 else 1.0
    p_t = (b * p + 0.5) / (b + 1)
    fixed = korn_graubard_interval(p, np.sqrt(p_t * (1 - p_t) / n_star), b, 10**7, level, df=df)
    assert np.diff(fixed.low).min() >= -1e-9 and np.diff(fixed.high).min() >= -1e-9
    a = (1 - level) / 2
    r = (stats.t.ppf(a, b - 1) / stats.t.ppf(a, df)) ** 2 if (df is not None and b > 1 and df < b - 1) else 1.0
    n_min = max(b / 2 * r, 1.0)
    for q in (0.0, 0.5 / b, 1 / b, 1 - 1 / b, 1.0):
        if not 0 <= q <= 1:
            continue
        one = korn_graubard_interval(q, se, b, 10**7, level, df=df)
        lo, hi = cp(q * n_min, n_min, level)
        assert one.low >= lo - 1e-9 and one.high <= hi + 1e-9


# ------------------------------------------------------------------ difference estimator: brute force
def _dp_threshold(y: np.ndarray) -> int:
    scores = [sum(2 * int(v) - 1 for v in y[:t]) for t in range(len(y) + 1)]
    return int(np.argmax(scores))  # first maximum = smallest k


def _theta(lg: np.ndarray, k: int, n: int) -> float:
    target = min(max(k / n, 0.5 / n), 1 - 0.5 / n)
    return optimize.brentq(lambda t: expit(t + lg).mean() - target, -60, 60, xtol=1e-12)


EASY = np.array([0.95, 0.9, 0.9, 0.8, 0.7, 0.65, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05])  # easiness along the order, n = 12


def test_difference_estimator_by_hand_systematic():
    """n = 12 items in 4 cells of 3, one item per cell (positions 1, 4, 7, 10); 10 sort models. Cells 0, 2 are
    predicted with the S&S threshold of cells 1, 3 and vice versa; each cell contributes the working model's mean
    over the cell plus the sampled item's residual."""
    n, m_sort = 12, 10.0
    pos = np.array([1, 4, 7, 10])
    y = np.array([[1, 0, 1, 0], [1, 1, 0, 0], [0, 1, 1, 1]], bool)
    lg = logit((EASY * m_sort + 0.5) / (m_sort + 1))
    cells = [(0, 3), (3, 6), (6, 9), (9, 12)]

    def by_hand(yr: np.ndarray, fixed_k: int | None = None) -> tuple[float, float]:
        d = []
        for j in range(4):
            other = [i for i in range(4) if i % 2 != j % 2]
            op = pos[other]
            bounds = [0, (op[0] + 1 + op[1]) // 2, n]
            k = bounds[_dp_threshold(yr[other])] if fixed_k is None else fixed_k
            th = _theta(lg, k, n)
            lo, hi = cells[j]
            d.append(expit(th + lg[lo:hi]).mean() + yr[j] - expit(th + lg[pos[j]]))
        d = np.array(d)
        return d.mean(), (1 - 4 / 12) * (np.diff(d) ** 2).sum() / (2 * 4 * 3)

    gap_k, gap_mean = 0.0, 0.0
    for row, yr in enumerate(y):
        want, want_v = by_hand(yr)
        est, se = estimate_accuracy(y[row : row + 1], pos, n, "systematic", easiness_sorted=EASY, n_models=m_sort)
        assert est[0] == pytest.approx(want, abs=2e-4) and se[0] == pytest.approx(np.sqrt(want_v), abs=2e-4)
        gap_k, gap_mean = max(gap_k, abs(want - by_hand(yr, fixed_k=6)[0])), max(gap_mean, abs(want - yr.mean()))
    # the S&S prediction matters: a working model ignoring it (k = n / 2), or none (the stratified mean), is off
    # by far more than the tolerance 2e-4
    assert gap_k > 0.005 and gap_mean > 0.005, (gap_k, gap_mean)


def test_difference_estimator_by_hand_srs():
    """A random sample (positions 0, 3, 4, 9, 11 of 12): post-strata are the even / odd sorted positions; each
    part's items are predicted with the threshold of the other part's sampled items."""
    n, m_sort = 12, 10.0
    pos = np.array([0, 3, 4, 9, 11])
    lg = logit((EASY * m_sort + 0.5) / (m_sort + 1))
    gap = 0.0
    for yr in (np.array([1, 1, 0, 1, 0], bool), np.array([1, 0, 1, 0, 0], bool), np.array([0, 1, 1, 1, 1], bool)):
        est_h, res = 0.0, []
        for h in (0, 1):
            mine, other = pos % 2 == h, pos % 2 != h
            op = pos[other]
            bounds = np.r_[0, (op[:-1] + 1 + op[1:]) // 2, n]
            th = _theta(lg, int(bounds[_dp_threshold(yr[other])]), n)
            part = np.arange(h, n, 2)
            r = yr[mine] - expit(th + lg[pos[mine]])
            res.append(r)
            est_h += len(part) / n * (expit(th + lg[part]).mean() + r.mean())
        r = np.concatenate(res)
        want_v = (1 - 5 / 12) * r.var(ddof=1) / 5
        est, se = estimate_accuracy(yr[None], pos, n, "srs", easiness_sorted=EASY, n_models=m_sort)
        assert est[0] == pytest.approx(est_h, abs=2e-4) and se[0] == pytest.approx(np.sqrt(want_v), abs=2e-4)
        gap = max(gap, abs(est_h - yr.mean()))
    assert gap > 0.005  # not the sample mean (tolerance 2e-4)


def test_difference_estimator_through_sortsearch_uses_the_fitted_easiness():
    a = irt(50, 300, seed=7)
    est = SortSearch(estimator="difference", sampling="stratified", random_state=3).fit(a[:30])
    res = est.simulate(a[30:], 20)
    y = a[30:][:, res.order[res.positions]]
    e_sorted = (est.scores_ / est.n_observed_)[est.order_]
    want, want_se = estimate_accuracy(y, res.positions, 300, "systematic", easiness_sorted=e_sorted, n_models=30)
    assert np.allclose(res.accuracy, want) and np.allclose(res.standard_error, want_se)
    plain, _ = estimate_accuracy(y, res.positions, 300, "systematic")
    assert np.abs(res.accuracy - plain).max() > 1e-3


# ------------------------------------------------------------------ difference estimator: Monte Carlo
@pytest.mark.parametrize("sampling", ["random", "stratified"])
def test_difference_estimator_unbiased_and_covers_by_simulation(sampling):
    """IRT data, 8 splits × 12 draws × 40 new models at 8 and 32 items. Per budget: |mean error| within 4 MC
    standard errors (clustered by split and draw) and 95% coverage >= 0.95 - 3 MC s.e.; under random sampling
    the difference estimator's spread at 32 items is below the sample mean's (measured 0.066 vs 0.077 on a
    larger run), under stratified sampling within 3% of the stratified mean's."""
    for b in (8, 32):
        err = {"difference": [], "stratified": []}
        hit = []
        for split in range(8):
            a = irt(80, 1200, seed=500 + split)
            truth = a[40:].mean(1)
            for name in err:
                est = SortSearch(sampling=sampling, estimator=name, random_state=split).fit(a[:40])
                for _ in range(12):
                    res = est.simulate(a[40:], b)
                    err[name].append(res.accuracy - truth)
                    if name == "difference":
                        lo, hi = res.confidence_interval()
                        hit.append((lo <= truth) & (truth <= hi))
        e = np.array(err["difference"])  # (draws, models)
        mc = e.mean(1).std(ddof=1) / np.sqrt(len(e))
        assert abs(e.mean()) <= 4 * mc, (b, e.mean(), mc)
        h = np.array(hit, float)
        cov, cov_se = h.mean(), max(h.mean(1).std(ddof=1) / np.sqrt(len(h)), np.sqrt(0.95 * 0.05 / h.size))
        assert cov >= 0.95 - 3 * cov_se, (b, cov, cov_se)
        sd_d, sd_s = np.array(err["difference"]).std(), np.array(err["stratified"]).std()
        if sampling == "random" and b == 32:
            assert sd_d < sd_s, (sd_d, sd_s)
        if sampling == "stratified":
            assert sd_d < 1.03 * sd_s, (sd_d, sd_s)


def test_stratified_design_beats_simple_random_sample():
    """The requirement's 'lower variance than a simple random sample': stratified sampling along the order vs
    random sampling, stratified mean, IRT data, 32 items."""
    sd = {}
    for sampling in ("stratified", "random"):
        errs = []
        for split in range(6):
            a = irt(70, 1000, seed=700 + split)
            est = SortSearch(sampling=sampling, random_state=split).fit(a[:40])
            errs += [est.simulate(a[40:], 32).accuracy - a[40:].mean(1) for _ in range(10)]
        sd[sampling] = np.std(errs)
    assert sd["stratified"] < 0.9 * sd["random"], sd


# ------------------------------------------------------------------ design carried explicitly
def test_design_follows_sampling_on_every_path():
    A = (r := np.random.default_rng(0)).random((30, 7)) < r.random(7)
    new = A[20:22]
    s = SortSearch(sampling="random", random_state=1).fit(A[:20]).simulate(new, 2)
    v = SortSearch(sampling="random", random_state=1).fit(A[:20]).evaluate(lambda it: new[:, it], 2)
    est = SortSearch(sampling="random", random_state=1).fit(A[:20])
    items = est.select(2)
    p = est.predict(new[:, items], items=items)
    for x in (v, p):
        assert x.design == s.design == "srs"
        assert np.allclose(x.accuracy, s.accuracy) and np.allclose(x.standard_error, s.standard_error)
    # user-chosen items that are not the selection: one per cell -> systematic, else srs
    est = SortSearch().fit(A[:20])
    est.select(3)
    assert est.predict(new[:, [0, 1]], items=[0, 1]).design in ("systematic", "srs")


def test_design_names_a_stratified_draw_apart_from_the_cells_centres():
    # one random item per cell is 'stratified' (the interval holds for each model), the cells' centres
    # 'systematic'; the same items passed to either estimator get the same estimate and interval
    A = irt(40, 400, seed=3)
    strat = SortSearch(sampling="stratified", random_state=0).fit(A[:30])
    items = strat.select(40)
    res = strat.predict(A[30:, items], items=items)
    assert res.design == "stratified" and "design='stratified'" in repr(res)
    assert strat.simulate(A[30:], 40).design == "stratified"
    uniform = SortSearch().fit(A[:30])
    centres = uniform.select(40)
    assert uniform.predict(A[30:, centres], items=centres).design == "systematic"
    other = uniform.predict(A[30:, items], items=items)  # the stratified draw, not uniform's own selection
    assert other.design == "systematic"
    np.testing.assert_allclose(other.accuracy, res.accuracy)
    np.testing.assert_allclose(other.confidence_interval(0.9).low, res.confidence_interval(0.9).low)


# ------------------------------------------------------------------ bad input
def test_fit_refuses_duplicated_item_ids():
    a = np.random.default_rng(1).random((6, 5)) < 0.5
    df = pd.DataFrame(a, columns=["q0", "q1", "q0", "q3", "q4"])
    with pytest.raises(ValueError, match=r"responses: duplicated item ids \['q0'\]"):
        SortSearch().fit(df)


def test_estimate_accuracy_validates_easiness_and_n_models():
    y = np.array([[1, 0, 1]], bool)
    pos = np.array([1, 5, 8])
    with pytest.raises(ValueError, match="easiness_sorted"):
        estimate_accuracy(y, pos, 10, easiness_sorted=np.full(9, 0.5))
    with pytest.raises(ValueError, match="easiness_sorted"):
        estimate_accuracy(y, pos, 10, easiness_sorted=np.r_[np.full(9, 0.5), np.nan])
    with pytest.raises(ValueError, match="easiness_sorted"):
        estimate_accuracy(y, pos, 10, easiness_sorted=np.r_[np.full(9, 0.5), 1.5])
    for bad in (-2, 0, np.nan, True):
        with pytest.raises(ValueError, match="n_models"):
            estimate_accuracy(y, pos, 10, easiness_sorted=np.full(10, 0.5), n_models=bad)
    with pytest.raises(ValueError, match="df"):
        korn_graubard_interval(0.5, 0.1, 8, 100, df=0)


def test_all_correct_model_reads_exactly_one():
    src = np.random.default_rng(0).random((10, 200)) < 0.6
    for estimator in ("stratified", "difference"):
        for sampling in ("uniform", "random"):
            res = SortSearch(estimator=estimator, sampling=sampling, random_state=0).fit(src).simulate(np.ones((2, 200),
                                                                                                               bool),
                                                                                                               199)
            assert (res.accuracy == 1.0).all()


def test_minor_messages():
    a = np.random.default_rng(2).random((6, 8)) < 0.5
    with pytest.raises(ValueError, match="^responses: sort='confidence'"):
        SortSearch(sort="confidence").fit(ResponseMatrix(a))
    nan = a.astype(float)
    nan[0, 0] = np.nan
    for cls in (HybridSearch, CopyNearestExpand):  # missing source cells are taken (tests/test_missing_cells.py)
        assert cls(**({"budget": 4, "cv": 2} if cls is HybridSearch else {})).fit(nan).n_missing_ == 1
    p = PackedBinaryMatrix.from_dense(a)
    with pytest.raises(ValueError, match="order"):
        p.permute_columns(np.arange(-1, 7))
    assert np.array_equal(p.permute_columns(np.arange(8)[::-1]).to_dense(), a[:, ::-1])


def test_hybrid_guard_gives_an_outlying_model_the_sortsearch_prediction():
    """Source models in families plus a new model unlike all of them (correct on exactly the easier half of the sum
    order): with the guard it gets exactly the S&S prediction, without it the nearest models' vote and a larger
    error."""
    rng = np.random.default_rng(5)
    base = irt(4, 600, seed=6, slope=1.0)
    src = base[rng.integers(0, 4, 60)] ^ (rng.random((60, 600)) < 0.05)
    odd = np.zeros(600, bool)
    odd[SortSearch().fit(src).order_[:300]] = True  # "ones then zeros" along the order: S&S fits it exactly
    new = np.vstack([src[:3] ^ (rng.random((3, 600)) < 0.05), odd])
    on = HybridSearch(budget=64, neighbors=(1, 3), weights=(0.0, 1.0), random_state=0).fit(src)
    off = HybridSearch(budget=64, neighbors=(1, 3), weights=(0.0, 1.0), random_state=0, fallback_margin=None).fit(src)
    assert on.weight_ == off.weight_ == 1.0  # the families make the nearest models win the cross-validation
    h_on, h_off = on.simulate(new), off.simulate(new)
    ss = on.search_.predict(new[:, on.selected_], on.selected_).correctness()
    ss[:, on.selected_] = new[:, on.selected_]
    assert np.array_equal(h_on.predicted[3], ss[3])  # the outlier: S&S
    assert np.array_equal(h_on.predicted[:3], h_off.predicted[:3])  # family members: unchanged
    err = lambda p: (p != new[3]).mean()  # noqa: E731
    assert err(h_off.predicted[3]) > err(h_on.predicted[3]) + 0.05
    with pytest.raises(ValueError, match="fallback_margin"):
        HybridSearch(fallback_margin=2.0).fit(src)


def test_simulate_with_missing_truth_points_to_predict():
    a = (np.random.default_rng(3).random((8, 20)) < 0.5).astype(float)
    est = SortSearch().fit(a[:5] > 0.5)
    a[6, 3] = np.nan
    for call in (lambda: est.simulate(a[5:], 4), lambda: est.budget_curve(a[5:], [4])):
        with pytest.raises(ValueError, match=r"responses: .*predict\(responses_on_those_items"):
            call()


# ------------------------------------------------------------------ few wrong items in a stratified sample
def _near_perfect_setup() -> tuple[SortSearch, np.ndarray]:
    """Sort models on 10,000 items easiest to hardest, and a new model 0.968 right: 90 of the hardest cell's 100
    items wrong, 230 more spread over the rest, so that a sample with one wrong item often has it in that cell."""
    g = np.random.default_rng(0)
    n = 10_000
    ss = SortSearch(sampling="stratified", random_state=0).fit(g.random((40, n)) < np.linspace(0.999, 0.5, n))
    y = np.ones(n, bool)
    y[ss.order_[-100:][:90]] = False
    y[g.choice(ss.order_[:-100], 230, replace=False)] = False
    return ss, y


def test_stratified_interval_with_one_wrong_item_covers_by_simulation():
    """1,000 stratified samples of 100 items: the 95 % interval covers the new model's accuracy at least
    0.93 of the time (0.95 less 3 Monte-Carlo s.e.); with the successive-difference variance alone, which a lone
    wrong item in the hardest cell sets from one neighbour, it covers 0.89."""
    ss, y = _near_perfect_setup()
    truth, hits, one_wrong = y.mean(), 0, 0
    for seed in range(1000):
        items = np.sort(ss.order_[stratified_positions(len(y), 100, rng=seed)])
        res = ss.predict(y[None, items], items=items)
        assert res.design == "systematic"
        ci = res.confidence_interval(0.95)
        hits += int(ci.low[0] <= truth <= ci.high[0])
        one_wrong += int(res.minority[0] == 1)
    assert one_wrong > 100  # the case the bound is for is common here
    assert hits / 1000 >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / 1000), hits / 1000


def test_one_or_two_wrong_items_bound_the_effective_size_by_the_sample():
    """99 (98) of 100 stratified items right: the interval is at least as wide as Clopper-Pearson's of 99 (98) of
    the finite-population-corrected 101 items, wherever the wrong items lie; 3 wrong keep the design's size."""
    ss, _ = _near_perfect_setup()
    items = ss.select(100)
    rank = ss.rank_[items]
    n_prime = 100 / (1 - 100 / 10_000)
    for wrong in ([np.argmax(rank)], [np.argsort(rank)[50]], list(np.argsort(rank)[[10, 99]])):
        y = np.ones((1, 100), bool)
        y[0, wrong] = False
        res = ss.predict(y, items=items)
        lo, hi = res.confidence_interval(0.95)
        k = 100 - len(wrong)
        p = res.accuracy[0]  # the stratified mean: k / 100 up to the cells' unequal weights
        assert res.minority[0] == len(wrong)
        assert lo[0] <= cp(p * n_prime, n_prime)[0] + 1e-9 < cp(k, 100)[0] + 2e-3
        assert hi[0] >= cp(p * n_prime, n_prime)[1] - 1e-9
    kg = korn_graubard_interval(0.97, 0.01, 100, 10_000, df=50.0)
    assert korn_graubard_interval(0.97, 0.01, 100, 10_000, df=50.0, minority=3) == kg
    assert korn_graubard_interval(0.97, 0.01, 100, 10_000, df=50.0, minority=2).low < kg.low
    with pytest.raises(ValueError, match="minority: expected the shape"):
        korn_graubard_interval([0.97], [0.01], 100, 10_000, minority=[1, 2])


@pytest.mark.parametrize("bad, match", [(-1, "whole numbers >= 0"), (1.5, "whole numbers >= 0"),
                                        (200, "at most the 100 evaluated items, got")])
def test_minority_must_count_evaluated_items(bad, match):
    with pytest.raises(ValueError, match=f"^minority: expected {match}"):
        korn_graubard_interval(0.97, 0.01, 100, 10_000, minority=bad)
    unbounded = korn_graubard_interval(0.97, 0.01, 100, 10_000)
    assert korn_graubard_interval(0.97, 0.01, 100, 10_000, minority=100) == unbounded

def test_one_wrong_item_bounds_the_interval_with_missing_cells():
    """99 of 100 stratified items right, 3 of the right ones without a result: the minority is still the one wrong
    item, and the interval is at least as wide as Clopper-Pearson's at the finite-population-corrected count of the
    evaluated items, and as the interval with those 3 answered right."""
    ss, _ = _near_perfect_setup()
    items = ss.select(100)
    n_prime = 100 / (1 - 100 / 10_000)
    for wrong in (np.argmax(ss.rank_[items]), np.argsort(ss.rank_[items])[50]):
        y = np.ones((1, 100))
        y[0, wrong] = 0
        full = ss.predict(y, items=items)
        y[0, [i for i in range(100) if i != wrong][:3]] = np.nan
        with pytest.warns(UserWarning, match="3 cells missing"):
            res = ss.predict(y, items=items)
        assert res.minority.tolist() == [1] == full.minority.tolist()
        lo, hi = res.confidence_interval(0.95)
        p = res.accuracy[0]
        assert lo[0] <= cp(p * n_prime, n_prime)[0] + 1e-9 and hi[0] >= cp(p * n_prime, n_prime)[1] - 1e-9
        full_lo, full_hi = full.confidence_interval(0.95)
        assert lo[0] <= full_lo[0] and hi[0] - lo[0] >= full_hi[0] - full_lo[0]


@pytest.mark.parametrize("sampling", ["stratified", "uniform"])
def test_census_with_missing_cells_is_a_sample_of_the_observed_items(sampling):
    """Every item evaluated, one model answered on all, the other on 251 of 500 (one wrong): the first gets its
    exact score, the second the interval of a sample of its 251 observed items, which has a width."""
    g = np.random.default_rng(1)
    ss = SortSearch(sampling=sampling, random_state=0).fit(g.random((30, 500)) < np.linspace(0.95, 0.3, 500))
    items = ss.select(500)
    y = np.ones((2, 500))
    y[:, 0] = 0
    y[1, 1:250] = np.nan
    with pytest.warns(UserWarning, match="249 cells missing"):
        res = ss.predict(y, items=items)
    assert res.n_observed.tolist() == [500, 251]
    lo, hi = res.confidence_interval(0.95)
    assert lo[0] == hi[0] == res.accuracy[0] == 499 / 500
    assert lo[1] < res.accuracy[1] < hi[1] and hi[1] - lo[1] > 0.01
    alone = korn_graubard_interval(res.accuracy[1], res.standard_error[1], 251, 500, df=design_df(res.design, 251),
                                   minority=1 if res.design == "systematic" else None)
    assert (lo[1], hi[1]) == pytest.approx((alone.low, alone.high), abs=1e-12)
