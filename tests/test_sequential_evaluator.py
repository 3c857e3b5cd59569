"""Adaptive evaluator: statistics against brute force, rules, schedule, online updates, ranking, bad input."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest, norm

from effstats import ResponseMatrix
from effstats.sequential import (DiminishingReturns, Efficacy, Equivalence, Futility, LookStats, Precision,
                                 SequentialEvaluator, StoppingRule, Threshold, design, rank_models,
                                 sequential_pvalue, stratified_mean)

NEVER = Precision(1e-12)  # a rule that never fires: run to the maximum sample


def _data(seed=0, n=(300, 500, 200), p=(0.7, 0.66)):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(len(n)), n)
    a = (rng.random(g.size) < p[0]).astype(float)
    b = (rng.random(g.size) < p[1]).astype(float)
    return a, b, g


def _brute_mom(x, g):
    df = pd.DataFrame({"x": x, "g": g}).groupby("g")["x"]
    m, v, n = df.mean(), df.var(ddof=1), df.size()
    return m.mean(), np.sqrt((v / n).sum()) / len(m)


# ---------------------------------------------------------------------------------------- statistics
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.data_too_large, HealthCheck.too_slow])
@given(st.lists(st.floats(0, 1), min_size=6, max_size=60), st.integers(1, 3))
def test_stratified_mean_matches_pandas(xs, d):
    x = np.array(xs)
    g = np.arange(x.size) % d
    est, se = stratified_mean(x, g)
    m, s = _brute_mom(x, g)
    assert abs(est - m) < 1e-12 and abs(se - s) < 1e-12


def test_stratified_mean_of_alike_scores_has_a_finite_standard_error():
    """Two scores a rounding apart in one group: the sum of squares minus n m² cancels below zero there."""
    x = np.array([0.9999999999999999, 0, 0, 1, 0, 0])
    g = np.arange(x.size) % 3
    est, se = stratified_mean(x, g)
    m, s = _brute_mom(x, g)
    assert np.isfinite(se) and se >= 0
    assert abs(est - m) < 1e-12 and abs(se - s) < 1e-12


def test_final_look_uses_all_items_single_paired_unpaired():
    a, b, g = _data()
    ev = SequentialEvaluator([NEVER], rng=0, null=0.5)
    r = ev.fit(a, groups=g)
    m, s = _brute_mom(a, g)
    assert r.reason == "max_n" and r.decision == "no decision" and r.n == a.size and r.fraction == 1
    assert abs(r.estimate - m) < 1e-12
    # the score statistics' standard errors (binary data): Jeffreys-smoothed per-dataset variances, stratified
    df = pd.DataFrame({"a": a, "b": b, "g": g}).groupby("g")
    n = df.size().to_numpy()
    ps = (df["a"].sum().to_numpy() + 0.5) / (n + 1)
    assert abs(r.trace["se"].iloc[-1] - np.sqrt(np.sum(ps * (1 - ps) / n)) / 3) < 1e-12
    # paired: the mean of means of the differences; Agresti-Min cells (half an item added to each)
    r = SequentialEvaluator([NEVER], rng=0).fit(a, b, groups=g)
    m, s = _brute_mom(a - b, g)
    assert abs(r.estimate - m) < 1e-12
    n10 = df.apply(lambda x: ((x.a == 1) & (x.b == 0)).sum()).to_numpy()
    n01 = df.apply(lambda x: ((x.a == 0) & (x.b == 1)).sum()).to_numpy()
    s10, s01 = (n10 + 0.5) / (n + 2), (n01 + 0.5) / (n + 2)
    assert abs(r.trace["se"].iloc[-1] - np.sqrt(np.sum((s10 + s01 - (s10 - s01) ** 2) / n)) / 3) < 1e-12
    # McNemar's score statistic with one dataset, corrected by a quarter of an item towards 0:
    # sign(n10 - n01) (|n10 - n01| - 1/4) / sqrt(n10 + n01)
    r1 = SequentialEvaluator([NEVER], rng=0).fit(a, b)
    n10, n01 = np.sum((a == 1) & (b == 0)), np.sum((a == 0) & (b == 1))
    assert n10 != n01
    assert abs(r1.z - np.sign(n10 - n01) * (abs(n10 - n01) - 0.25) / np.sqrt(n10 + n01)) < 1e-9
    # unpaired: Agresti-Caffo (one success and one failure added to each arm, per dataset)
    r = SequentialEvaluator([NEVER], rng=0).fit(a, b, paired=False, groups=g, groups_b=g)
    pa = (df["a"].sum().to_numpy() + 1) / (n + 2)
    pb = (df["b"].sum().to_numpy() + 1) / (n + 2)
    var = np.sum(pa * (1 - pa) / (n + 2) + pb * (1 - pb) / (n + 2))
    assert abs(r.trace["se"].iloc[-1] - np.sqrt(var) / 3) < 1e-12
    assert abs(r.estimate - (_brute_mom(a, g)[0] - _brute_mom(b, g)[0])) < 1e-12


def test_trace_bounds_are_the_design_at_the_observed_sizes():
    a, b, g = _data()
    r = SequentialEvaluator([NEVER], rng=1, initial=100, batch=100).fit(a, b, groups=g)
    tr = r.trace
    # stratified schedule: 100 per dataset, then +100 per dataset until each is used up
    assert tr["n"].tolist() == [300, 600, 800, 900, 1000]
    # spending at the information fraction of the mean of means, 1 / sum_d(1 / n_d), not at n / max_n
    counts = np.array([[100, 100, 100], [200, 200, 200], [300, 300, 200], [300, 400, 200], [300, 500, 200]])
    info = 1 / (1 / counts).sum(1)
    np.testing.assert_allclose(tr["information"], info / info[-1], atol=1e-12)
    d = design(alpha=0.05, sided=2, spending="ld_pocock", information=info, max_information=info[-1])
    np.testing.assert_allclose(tr["bound"], d.upper, atol=1e-12)
    assert tr["information"].iloc[2] > tr["fraction"].iloc[2]  # the 500-item dataset adds little information


def test_online_update_matches_manual_statistics():
    a, b, g = _data(3)
    ev = SequentialEvaluator([NEVER]).start(max_n=a.size, n_groups=3, sizes=np.bincount(g))
    order = np.random.default_rng(5).permutation(a.size)
    sizes = [250, 250, 250, 250]
    seen = []
    for k, cut in enumerate(np.split(order, np.cumsum(sizes)[:-1])):
        seen.extend(cut)
        r = ev.update(a[cut], b[cut], groups=g[cut])
        idx = np.array(seen)
        m, s = _brute_mom(a[idx] - b[idx], g[idx])
        assert abs(r.estimate - m) < 1e-12
        # the first look spends f(I_1 / I_max) at the information fraction of the mean of means, not all of alpha
        n1 = np.bincount(g[order[:250]], minlength=3)
        t1 = (1 / (1 / n1).sum()) / (1 / (1 / np.array([300, 500, 200])).sum())
        f1 = np.log(1 + (np.e - 1) * t1) * 0.05  # Lan-DeMets Pocock spending
        assert abs(r.trace["information"].iloc[0] - t1) < 1e-12
        assert abs(r.trace["bound"].iloc[0] - norm.isf(f1 / 2)) < 1e-9
    assert r.reason == "max_n"
    with pytest.raises(ValueError, match="^update"):
        ev.update(a[:5])


def test_online_stops_on_the_first_rule_and_reports_it():
    rng = np.random.default_rng(0)
    a = (rng.random(4000) < 0.8).astype(float)
    b = (rng.random(4000) < 0.6).astype(float)
    ev = SequentialEvaluator([Precision(0.001), Efficacy()]).start(4000)
    for k in range(40):
        r = ev.update(a[k * 100:(k + 1) * 100], b[k * 100:(k + 1) * 100])
        if r.reason != "continue":
            break
    assert r.reason == "efficacy" and r.decision == "greater" and r.n < 1000
    assert r.trace["rule_fired"].iloc[-1] == "efficacy" and (r.trace["rule_fired"].iloc[:-1] == "").all()


@pytest.mark.parametrize("case", ["exact", "binomial", "paired"])
def test_online_update_searches_only_the_new_looks_intervals_and_equals_a_fresh_search(case, monkeypatch):
    # each update recomputes the statistics of every look so far (the trace's repeated intervals, the precision
    # rule's fixed-sample one at every look): the evaluator keeps the ends it found, so an update searches the new
    # look's intervals only, in one search; the results are those of searching every look again (memo emptied)
    from dataclasses import asdict

    from effstats.sequential import statistics

    rng = np.random.default_rng(3)
    a = (rng.random(6000) < 0.82).astype(float)
    b = (rng.random(6000) < 0.78).astype(float)
    rules = [Efficacy()] if case == "paired" else [Precision(0.012)]
    kept, fresh = (SequentialEvaluator(rules, fpc=case == "exact", initial=150, batch=150, max_n=6000).start(6000)
                   for _ in range(2))
    searched = []
    for cls in (statistics.BinomialStatistic, statistics.TangoStatistic):
        monkeypatch.setattr(cls, "interval", lambda self, c, _f=cls.interval: searched.append(1) or _f(self, c))
    looks = 0
    for k in range(40):
        batch = (a[150 * k:150 * (k + 1)],) + ((b[150 * k:150 * (k + 1)],) if case == "paired" else ())
        searched.clear()
        r = kept.update(*batch)
        assert len(searched) == 1 + (r.reason == "precision")  # the stop's interval at 1 - 2 alpha: once more
        fresh._online["memo"].clear()
        f = fresh.update(*batch)
        ra, fa = asdict(r), asdict(f)
        pd.testing.assert_frame_equal(ra.pop("trace"), fa.pop("trace"), check_exact=True)
        assert ra == fa
        looks += 1
        if r.reason != "continue":
            break
    assert looks >= 5 and r.reason != "max_n"


# ---------------------------------------------------------------------------------------- rules
def _stats(est, se, t=(0.5, 1.0), null=0.0):
    est = np.atleast_2d(est).astype(float)
    se = np.atleast_2d(se).astype(float)
    c2 = np.array([2.3, 2.1])[: est.shape[1]]
    c1 = np.array([2.0, 1.8])[: est.shape[1]]
    return LookStats(n=np.ones_like(est), t=np.array(t)[: est.shape[1]], estimate=est, se=se, z=(est - null) / se,
                     c2=c2, c1=c1, null=null, alpha=0.05)


def test_rules_fire_where_expected():
    s = _stats([[0.05, 0.03]], [[0.02, 0.01]])
    assert Efficacy().fires(s).tolist() == [[True, True]]  # z = 2.5, 3.0
    assert Efficacy("less").fires(s).tolist() == [[False, False]]
    assert Precision(0.03).fires(s).tolist() == [[False, True]]  # half-widths 0.046, 0.021
    assert Threshold(0.0, "above").fires(s).tolist() == [[True, True]]
    assert Threshold(0.08, "below").fires(s).tolist() == [[False, True]]  # 0.05 + 0.04 vs 0.03 + 0.018
    assert Equivalence(0.06).fires(s).tolist() == [[False, True]]  # 0.05+-0.04 vs 0.03+-0.018
    assert DiminishingReturns(0.03).fires(s).tolist() == [[False, True]]  # gain 0.025
    assert Threshold(0.1).outcome(s)[0, 1] == "below 0.1"


def test_conditional_power_matches_brownian_motion_simulation():
    s = _stats([[0.01, 0.0]], [[0.01, 0.01]], t=(0.4, 1.0))
    cp = Futility(0.5, effect=0.01).conditional_power(s)[0, 0]  # drift effect / (se sqrt(t)) = 1 / sqrt(0.4)
    rng = np.random.default_rng(0)
    # B(1) = B(0.4) + drift * 0.6 + N(0, 0.6)
    b1 = 1.0 * np.sqrt(0.4) + (1.0 / np.sqrt(0.4)) * 0.6 + rng.normal(0, np.sqrt(0.6), 200_000)
    assert abs(cp - np.mean(b1 >= 2.1)) < 0.005
    assert Futility(0.5, effect=0.01).fires(s)[0, 1] == False  # noqa: E712 - never at the final look


def test_schedule_with_max_n_trims_the_last_look():
    ev = SequentialEvaluator([NEVER], initial=100, batch=100, max_n=550)
    sched = ev._schedule(np.array([1000, 1000]))
    assert sched.sum(1).tolist() == [200, 400, 550]


@settings(max_examples=300, deadline=None)
@given(sizes=st.lists(st.integers(0, 400), min_size=1, max_size=7), initial=st.integers(2, 60),
       batch=st.integers(1, 60), max_n=st.integers(2, 3000))
@example(sizes=[2400] * 5, initial=20, batch=20, max_n=2001)  # the cut's rounding left over on one stratum
@example(sizes=[0, 3], initial=3, batch=1, max_n=2)
def test_schedule_counts_never_decrease_and_end_at_max_n(sizes, initial, batch, max_n):
    # each stratum's items are handed out as the first n of a fixed order: its running count never goes down, never
    # exceeds the stratum, and the looks end at max_n items exactly (or every item, when there are fewer)
    sizes = np.array(sizes)
    assume(sizes.sum() > 0 and max_n >= (sizes > 0).sum())
    sched = SequentialEvaluator([NEVER], initial=initial, batch=batch, max_n=max_n)._schedule(sizes)
    assert (np.diff(sched, axis=0) >= 0).all() and (np.diff(sched.sum(1)) > 0).all()
    assert (sched <= sizes).all() and (sched[0] >= np.minimum(sizes, 1)).all()
    assert sched[-1].sum() == min(max_n, sizes.sum())
    full = SequentialEvaluator([NEVER], initial=initial, batch=batch)._schedule(sizes)
    k = len(sched) - 1  # the looks before the last are the uncapped schedule's
    assert (sched[:k] == full[:k]).all() and (sched[-1] <= (full[k] if k < len(full) else sizes)).all()


@pytest.mark.parametrize("binary", [True, False])
def test_first_look_sampling_is_without_replacement(binary):
    # hypergeometric path (few levels) and permutation path (continuous) give the same sampling law
    rng = np.random.default_rng(1)
    x = (rng.random(600) < 0.3).astype(float) if binary else rng.random(600)
    ev = SequentialEvaluator([Precision(0.99)], initial=100)
    sim = ev.simulate(x, n_runs=4000, rng=2)
    assert (sim.n == 100).all() and (sim.reason == "precision").all()
    fpc = (600 - 100) / (600 - 1)
    sd = x.std() * np.sqrt(fpc / 100)
    assert abs(sim.estimate.mean() - x.mean()) < 4 * sd / np.sqrt(4000)
    assert abs(sim.estimate.std() / sd - 1) < 0.05


def test_simulate_runs_are_reproducible_and_final_estimates_exact():
    a, b, g = _data()
    ev = SequentialEvaluator([NEVER], rng=4)
    s1 = ev.simulate(a, b, groups=g, n_runs=50)
    s2 = ev.simulate(a, b, groups=g, n_runs=50)
    np.testing.assert_array_equal(s1.estimate, s2.estimate)
    np.testing.assert_allclose(s1.estimate, _brute_mom(a - b, g)[0], atol=1e-12)
    assert set(s1.to_frame().columns) >= {"n", "fraction", "reason", "decision", "ci_low", "ci_high"}


@pytest.mark.parametrize("p", [0.5, 0.77])
def test_precision_computes_the_exact_interval_only_up_to_the_look_every_run_reaches(p, monkeypatch):
    # a Precision rule fires, whatever the scores, at the first look whose worst-case interval (accuracy 1/2) is
    # within its half-width: +-2 points on 20,000 items with the finite-population correction, the fixed design of
    # 2401 (20,000 - 1 + 2401) / 20,000 = 2,144 items, the look of 2,200. The exact hypergeometric interval of the
    # 176 looks after it, which no run reaches, is not computed; the runs are those of the whole schedule.
    from effstats.sequential import statistics

    asked = []
    exact = statistics._hyp_limits
    monkeypatch.setattr(statistics, "_hyp_limits", lambda x, N, m, a: asked.append(float(np.max(m))) or
                        exact(x, N, m, a))
    y = (np.arange(20_000) % 100 < 100 * p).astype(float)
    n0 = norm.isf(0.025) ** 2 / 4 / 0.02**2
    last = np.ceil(n0 * 20_000 / (20_000 - 1 + n0) / 100) * 100
    sim = SequentialEvaluator([Precision(0.02)], fpc=True).simulate(y, n_runs=50, rng=1)
    assert last == 2200 and max(asked) == last and set(sim.reason) == {"precision"} and sim.n.max() <= last
    if p == 0.5:
        assert sim.n.max() == last  # runs stop there
    asked.clear()
    fit = SequentialEvaluator([Precision(0.02)], fpc=True, rng=0).fit(y)
    assert max(asked) == last and fit.n <= last

    class Same(StoppingRule):  # fires where Precision does, unknown to the evaluator: every look is computed
        name, bound = "precision", "fixed"

        def fires(self, s):
            return Precision(0.02).fires(s)

    whole = SequentialEvaluator([Same()], fpc=True).simulate(y, n_runs=50, rng=1)
    assert max(asked) == 19_900
    for field in ("n", "estimate", "ci_low", "ci_high", "rci_low", "rci_high", "z"):
        np.testing.assert_array_equal(getattr(sim, field), getattr(whole, field))


def test_unstratified_order_mixes_datasets():
    a, b, g = _data()
    r = SequentialEvaluator([NEVER], stratified=False, rng=0).fit(a, b, groups=g)
    assert r.n == a.size and abs(r.estimate - _brute_mom(a - b, g)[0]) < 1e-12


# ---------------------------------------------------------------------------------------- ranking
def test_rank_models_holm_vs_bonferroni_and_order():
    rng = np.random.default_rng(0)
    p = np.array([0.85, 0.75, 0.65, 0.55])
    x = (rng.random((4, 2000)) < p[:, None]).astype(float)
    rm = ResponseMatrix(x, model_ids=["a", "b", "c", "d"], items=pd.DataFrame({"dataset": np.repeat([0, 1], 1000)}))
    holm = rank_models(rm, correction="holm", rng=0)
    bonf = rank_models(rm, correction="bonferroni", rng=0)
    assert holm.ranking.index.tolist() == ["a", "b", "c", "d"]
    assert (holm.pairs["significant"] >= bonf.pairs["significant"]).all()
    # Holm passes the level of decided pairs on: never a smaller level, never a later stop than Bonferroni
    assert (holm.pairs["alpha_used"] >= bonf.pairs["alpha_used"] - 1e-15).all()
    assert (holm.pairs["n"] <= bonf.pairs["n"]).all() and (bonf.pairs["alpha_used"] == 0.05 / 6).all()
    # true usage: each model is evaluated on the longest prefix any of its comparisons needed
    used = {m: max(holm.pairs.loc[(holm.pairs.model_a == m) | (holm.pairs.model_b == m), "n"]) for m in "abcd"}
    assert holm.fraction_used == pytest.approx(sum(used.values()) / (4 * 2000))
    assert 0 < holm.fraction_used < 0.6


@pytest.mark.needs_r
def test_sequential_pvalue_matches_gsdesign():
    from effstats.sequential.gsdesign import gsdesign_sequential_pvalue

    n = np.array([100, 200, 300, 400, 500])
    d = design(alpha=0.05, information=n, max_information=500)
    for z, look in [(2.3, 3), (3.1, 1), (1.2, 5)]:
        ours = sequential_pvalue(z, look, n, 500)
        theirs = 2 * gsdesign_sequential_pvalue(look, n, -d.upper, d.upper, z)
        assert abs(ours - theirs) < 1e-8
    assert sequential_pvalue(d.upper[2], 3, n, 500) == pytest.approx(d.alpha_spent[2], abs=1e-7)


# ---------------------------------------------------------------------------------------- bad input
def test_bad_input_names_the_argument():
    a, b, g = _data()
    ev = SequentialEvaluator([Efficacy()])
    with pytest.raises(ValueError, match="^scores_a"):
        ev.fit(a * 2)
    with pytest.raises(ValueError, match="^scores_a"):
        ev.fit(np.where(a > 0, np.nan, 0.0))
    with pytest.raises(ValueError, match="^scores_b"):
        ev.fit(a, b[:-1])
    with pytest.raises(ValueError, match="^groups"):
        ev.fit(a, b, groups=g[:-1])
    with pytest.raises(ValueError, match="^rules"):
        SequentialEvaluator([]).fit(a, b)
    with pytest.raises(ValueError, match="^initial"):
        SequentialEvaluator([Efficacy()], initial=1).fit(a, b)
    with pytest.raises(ValueError, match="^alpha"):
        SequentialEvaluator([Efficacy()], alpha=1.5).fit(a, b)
    with pytest.raises(ValueError, match=r"^max_n: 5 items is below initial=10"):
        SequentialEvaluator([Precision(0.05)], max_n=5, initial=10).fit(a)
    with pytest.raises(ValueError, match="^margin"):
        Equivalence(-0.1)
    with pytest.raises(ValueError, match="^alternative"):
        Efficacy("bigger")
    with pytest.raises(ValueError, match="^correction"):
        rank_models(np.zeros((2, 10)), correction="fdr")
    with pytest.raises(ValueError, match="^update"):
        SequentialEvaluator([Efficacy()]).update(a)
    with pytest.raises(ValueError, match="^spending"):
        SequentialEvaluator([Efficacy()], spending="pocock").start(1000)


@pytest.mark.needs_r
def test_beta_spending_futility_bound_is_gsdesigns_test_type_4():
    from scipy.special import ndtri

    from effstats.sequential import BetaSpendingFutility

    t = np.array([0.2, 0.4, 0.6, 0.8, 1.0])
    s = LookStats(n=np.ones((1, 5)), t=t, estimate=np.zeros((1, 5)), se=np.full((1, 5), 0.01), z=np.zeros((1, 5)),
                  c2=np.full(5, 2.4), c1=np.full(5, 2.1), null=0.0, alpha=0.025)
    rule = BetaSpendingFutility(effect=0.03, se_full=0.01, spending="hsd", param=-2)
    scale = (3.0 / (-ndtri(0.025) - ndtri(0.1))) ** 2  # drift 3 at the full sample
    ref = design(alpha=0.025, test_type=4, spending="ld_pocock", lower_spending="hsd", lower_param=-2,
                 information=t * scale, max_information=scale, backend="gsdesign")
    np.testing.assert_allclose(rule.lower_bound(s), ref.lower, atol=1e-6)
    assert rule.fires(s).tolist() == [list(0.0 < ref.lower)]
    with pytest.raises(ValueError, match="^effect"):
        BetaSpendingFutility(effect=0)


RULE_SETS = [[Efficacy()], [Efficacy(), Equivalence(0.05)], [Precision(0.05)], [Threshold(0.5)],
             [Futility(0.2, effect=0.05), Efficacy()], [DiminishingReturns(0.002)]]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.data_too_large, HealthCheck.too_slow])
@given(p=st.integers(5, 95), q=st.integers(5, 95), seed=st.integers(0, 10_000),
       which=st.integers(0, len(RULE_SETS) - 1))
def test_any_run_stops_on_the_schedule_with_a_valid_interval(p, q, seed, which):
    rules = RULE_SETS[which]
    p, q = p / 100, q / 100
    rng = np.random.default_rng(seed)
    g = np.repeat([0, 1], [400, 250])
    a = (rng.random(g.size) < p).astype(float)
    b = (rng.random(g.size) < q).astype(float)
    ev = SequentialEvaluator(rules, initial=50, batch=50, rng=seed)
    r = ev.fit(a, b, groups=g)
    sched = ev._schedule(np.bincount(g)).sum(1)
    assert r.n in sched and r.trace["n"].tolist() == sched[: len(r.trace)].tolist()
    assert r.ci_low <= r.estimate <= r.ci_high
    assert (r.reason == "max_n") == (r.n == sched[-1] and r.trace["rule_fired"].iloc[-1] == "")
    sim = ev.simulate(a, b, groups=g, n_runs=20)
    assert np.isin(sim.n, sched).all() and (sim.ci_low <= sim.ci_high).all()


_RULES = {
    "precision": (lambda: [Precision(0.03)], False),
    "efficacy two-sided": (lambda: [Efficacy()], True),
    "efficacy greater": (lambda: [Efficacy("greater")], True),
    "equivalence": (lambda: [Equivalence(0.1)], True),
    "threshold": (lambda: [Threshold(0.7, "above")], False),
    "futility": (lambda: [Efficacy("greater"), Futility(0.5, effect=0.05)], True),
    "diminishing returns": (lambda: [DiminishingReturns(0.03)], False),
}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=st.sampled_from(sorted(_RULES)), seed=st.integers(0, 10_000), pa=st.floats(0.55, 0.95),
       gap=st.floats(-0.1, 0.1), kind=st.sampled_from(["deciding", "repeated"]))
def test_confidence_interval_nested_in_level(rule, seed, pa, gap, kind):
    """For every rule's result and each kind, a lower level never gives a wider interval."""
    make, two = _RULES[rule]
    g = np.random.default_rng(seed)
    a = (g.random(1500) < pa).astype(float)
    b = (g.random(1500) < np.clip(pa - gap, 0.01, 0.99)).astype(float)
    res = SequentialEvaluator(make(), rng=seed).fit(a, b if two else None)
    cis = {}
    for level in (1 - 2 * res.alpha, 1 - res.alpha):
        try:
            cis[level] = res.confidence_interval(level, kind=kind)
        except ValueError as e:  # a level the result has no interval of this kind at
            assert "confidence_level" in str(e)
    assert cis, "the result's own level has an interval"
    levels = sorted(cis)
    for lo_level, hi_level in zip(levels, levels[1:]):
        inner, outer = cis[lo_level], cis[hi_level]
        assert outer.low <= inner.low + 1e-12 and inner.high <= outer.high + 1e-12, (rule, kind, cis)
    assert res.confidence_interval(kind=kind) == cis[res.confidence_level]  # default: the deciding level


@pytest.mark.slow
@pytest.mark.parametrize("p, pair", [(0.5, False), (0.95, False), (0.3, True)])
def test_precision_stop_interval_at_the_one_sided_level_covers(p, pair):
    """Monte Carlo, 1,000 evaluations of fresh 0/1 scores (a pair: models of accuracy 0.7 and 0.75 with independent
    errors) stopped by Precision(0.03): the deciding interval at 0.9 (1 - 2 alpha) covers the true score at least
    0.9 - 3 Monte-Carlo standard errors, as the 0.95 one covers 0.95 - 3 s.e."""
    g = np.random.default_rng(11)
    ev = SequentialEvaluator([Precision(0.03)], initial=50, batch=50)
    n_runs, hit90, hit95 = 1000, 0, 0
    truth = -0.05 if pair else p
    for _ in range(n_runs):
        a = (g.random(4000) < (0.7 if pair else p)).astype(float)
        res = ev.fit(a, (g.random(4000) < 0.75).astype(float) if pair else None, shuffle=False)
        assert res.reason == "precision"
        lo, hi = res.confidence_interval(0.9)
        hit90 += lo <= truth <= hi
        lo, hi = res.confidence_interval(0.95)
        hit95 += lo <= truth <= hi
    assert hit90 / n_runs >= 0.9 - 3 * np.sqrt(0.9 * 0.1 / n_runs), hit90
    assert hit95 / n_runs >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / n_runs), hit95


def test_precision_stop_deciding_and_repeated_intervals():
    """A precision stop: the deciding interval is the rule's fixed-sample one, the repeated CI contains it."""
    a = (np.random.default_rng(3).random(3000) < 0.93).astype(float)
    res = SequentialEvaluator([Precision(0.02)], rng=0).fit(a)
    assert res.reason == "precision"
    fixed = res.trace[["fixed_low", "fixed_high"]].iloc[-1].to_numpy()
    rep = res.trace[["ci_low", "ci_high"]].iloc[-1].to_numpy()
    assert np.allclose(tuple(res.confidence_interval()), fixed)
    assert np.allclose(tuple(res.confidence_interval(0.95)), fixed)
    assert np.allclose(tuple(res.confidence_interval(0.95, kind="repeated")), rep)
    assert rep[0] < fixed[0] and fixed[1] < rep[1]
    r90 = res.confidence_interval(0.9, kind="repeated")
    assert rep[0] <= r90.low and r90.high <= rep[1] and r90.low > fixed[0] - 0.05
    # at 1 - 2 alpha: the same fixed-sample interval (Clopper-Pearson for one model) at the stop, inside the 95 % one
    k = int(round(res.estimate * res.n))
    f90 = res.confidence_interval(0.9)
    assert tuple(f90) == pytest.approx(tuple(binomtest(k, res.n).proportion_ci(0.9, method="exact")), abs=1e-10)
    assert fixed[0] < f90.low and f90.high < fixed[1]
    with pytest.raises(ValueError, match=r"^confidence_level: 0\.8 is not a level of the deciding interval "
                                         r"\(kind='deciding', the default\).* fixed-sample interval, which is given "
                                         r"at 0\.9 and 0\.95 .* only; another level needs another alpha"):
        res.confidence_interval(0.8)
    with pytest.raises(ValueError, match="kind"):
        res.confidence_interval(kind="fixed")
    sim = SequentialEvaluator([Precision(0.02)], rng=0).simulate(a, n_runs=20, rng=1)
    assert np.all(sim.confidence_interval(kind="repeated").low == sim.rci_low)
    stop = sim.reason == "precision"
    assert stop.any() and np.all(sim.confidence_interval(0.95).low[stop] >= sim.rci_low[stop])


def test_a_float32_level_is_the_level_it_rounds():
    # np.float32(0.95) is 0.949999988: within float32's precision of the design's 1 - alpha
    from effstats.datasets import simulate_responses

    x = simulate_responses(40, 200, rng=0).values[30].astype(float)
    res = SequentialEvaluator([Precision(half_width=0.1)], rng=0).fit(x)
    assert res.reason == "precision"
    eff = SequentialEvaluator([Efficacy()], null=0.5, rng=0).fit(x)
    for r in (res, eff):
        for level, kind in [(0.95, "deciding"), (0.9, "deciding"), (0.95, "repeated"), (0.9, "repeated")]:
            assert tuple(r.confidence_interval(np.float32(level), kind=kind)) == tuple(
                r.confidence_interval(level, kind=kind))
    sim = SequentialEvaluator([Precision(half_width=0.1)], rng=0).simulate(x, n_runs=5, rng=1)
    np.testing.assert_array_equal(sim.confidence_interval(np.float32(0.95)).low, sim.confidence_interval(0.95).low)
    # a level refused is printed as the number it is, never as one of the levels listed
    for r, said in [(res, r"^confidence_level: 0\.949999\d+ is not a level of the deciding interval .* given at "
                          r"0\.9 and 0\.95 "),
                    (eff, r"^confidence_level: .* fixed .* at \[0\.9, 0\.95\] .* got 0\.949999\d+$")]:
        with pytest.raises(ValueError, match=said):
            r.confidence_interval(np.float32(0.95) - np.float32(2e-7))


def test_start_refuses_a_max_n_whose_looks_no_memory_holds():
    from effstats.sequential import Efficacy

    with pytest.raises(ValueError, match=r"^max_n: 1,000,000,000,000,000,000 items in batches of 100 make "
                                         r"10,000,000,000,000,001 looks, whose schedule needs about"):
        SequentialEvaluator([Efficacy()], rng=0).start(10**18)


def test_rules_given_as_a_generator_are_kept_for_clone_and_refits():
    from sklearn.base import clone

    from effstats.sequential import Efficacy

    ev = SequentialEvaluator((r for r in [Efficacy()]), rng=0)
    assert clone(ev).rules == ev.rules and len(ev.rules) == 1
    a, b = np.r_[np.ones(150), np.zeros(50)], np.r_[np.zeros(150), np.ones(50)]
    first = ev.fit(a, b).decision
    assert ev.fit(a, b).decision == first  # the rules read again
