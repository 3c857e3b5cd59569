"""Sequential evaluation at the edges: scores near 0 and 1, rare one-directional disagreement, unequal datasets,
online updates and bad input, each checked against its nominal error rate, coverage or a value.

Monte-Carlo tolerances: 3 Monte-Carlo standard errors of the nominal rate with ``N_RUNS`` runs.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from effstats.sequential import (Efficacy, Equivalence, Futility, Precision, SequentialEvaluator, Threshold,
                                 rank_models)
from effstats.sequential.ranking import SequentialRanking
from effstats.sequential.validation import PAPER_SIZES, _ranking_fwer, simulate_iid

N_RUNS = 3000
POP = 200_000


def _se(p: float, n: int = N_RUNS) -> float:
    return float(np.sqrt(p * (1 - p) / n))


def _pop(p: float) -> np.ndarray:
    k = int(round(POP * p))
    return np.r_[np.ones(k), np.zeros(POP - k)]


def _pair(up: float, down: float):
    nu, nd = int(POP * up), int(POP * down)
    a = np.r_[np.ones(nu), np.zeros(nd), np.ones(POP - nu - nd)]
    b = np.r_[np.zeros(nu), np.ones(nd), np.ones(POP - nu - nd)]
    return a, b


# ------------------------------------------------------------------------------------------ 1. valid at the edges
@pytest.mark.parametrize("p", [0.98, 0.995])
def test_precision_covers_the_true_accuracy_near_the_ceiling(p):
    # near the ceiling a Wald interval collapses to [1, 1] at the first look; the exact intervals must still cover
    sim = SequentialEvaluator([Precision(0.02)], max_n=5000, rng=1).simulate(_pop(p), n_runs=N_RUNS)
    cover = np.mean((sim.ci_low <= p) & (sim.ci_high >= p))
    assert cover >= 0.95 - 3 * _se(0.05), cover
    assert (sim.ci_low < 1).all() and (sim.confidence_level == 0.95).all()


def test_an_all_correct_batch_never_gives_the_interval_1_1():
    r = SequentialEvaluator([Precision(0.02)], rng=0).fit(np.ones(3000))
    assert r.ci_high == 1 and 0.95 < r.ci_low < 1 and r.standard_error > 0
    # the exact one-sided bound: all n correct reject p0 below (alpha_k)^(1/n)
    from scipy.stats import norm

    n = r.n
    c = r.trace["bound"].iloc[-1]
    assert r.rci_low == pytest.approx(norm.cdf(-c) ** (1 / n), rel=1e-9)  # the repeated CI
    # the precision rule's fixed-sample interval, at z = Phi^-1(0.975): (alpha / 2)^(1/n)
    assert r.ci_low == pytest.approx(0.025 ** (1 / n), rel=1e-9)


@pytest.mark.parametrize("p", [0.9, 0.99])
def test_threshold_above_at_the_true_score_keeps_alpha(p):
    # a model exactly at the threshold: declaring it above is a type-I error, at most alpha
    sim = SequentialEvaluator([Threshold(p, "above")], max_n=5000, rng=2).simulate(_pop(p), n_runs=N_RUNS)
    assert np.mean(sim.reason == "threshold") <= 0.05 + 3 * _se(0.05)


def test_single_model_against_its_null_keeps_alpha():
    # near the ceiling the test's variance must be the null's, p0 (1 - p0), for the level to hold
    sim = SequentialEvaluator([Efficacy()], null=0.97, max_n=5000, rng=3).simulate(_pop(0.97), n_runs=N_RUNS)
    assert np.mean(sim.reason == "efficacy") <= 0.05 + 3 * _se(0.05)


def test_equivalence_with_one_directional_rare_disagreement():
    # A better on 2 % of the items and never worse: the true gap equals the margin, so declaring equivalence is an
    # error, at most alpha
    a, b = _pair(0.02, 0.0)
    sim = SequentialEvaluator([Equivalence(0.02)], max_n=5000, rng=4).simulate(a, b, n_runs=N_RUNS)
    assert np.mean(sim.reason == "equivalence") <= 0.05 + 3 * _se(0.05)


def test_simultaneous_repeated_ci_coverage_at_098():
    # the repeated CIs hold at every look simultaneously, not only at the one where the run stops
    ev = SequentialEvaluator([Precision(1e-9)], initial=100, batch=100, max_n=3000)
    r = simulate_iid(ev, [0.02, 0.98], sizes=[3000], n_runs=N_RUNS, rng=5, all_looks=True)
    s = r["stats"]
    assert np.mean(((s.ci_low <= 0.98) & (s.ci_high >= 0.98)).all(1)) >= 0.95 - 3 * _se(0.05)


# ------------------------------------------------------------------------------------------ 2. online == offline
def test_online_futility_is_judged_against_the_full_design():
    # online, the futility rule must judge a batch against the full design's remaining looks, not the looks so far
    rules = [Efficacy(), Futility(0.1, effect=0.04)]
    ev = SequentialEvaluator(rules, spending="ld_obf", initial=200, batch=200, max_n=2000)
    rng = np.random.default_rng(6)
    first_futility = 0
    for run in range(25):
        u = rng.random(2000)
        a = ((u < 0.17) | (u >= 0.30)).astype(float)  # A better on 17 %, B on 13 %: the planned effect 0.04
        b = (u >= 0.17).astype(float)
        off = ev.fit(a, b, shuffle=False)
        on = SequentialEvaluator(rules, spending="ld_obf", initial=200, batch=200, max_n=2000).start(2000)
        for k in range(10):
            res = on.update(a[200 * k: 200 * (k + 1)], b[200 * k: 200 * (k + 1)])
            if res.reason != "continue":
                break
        assert (res.reason, res.decision, res.n) == (off.reason, off.decision, off.n)
        np.testing.assert_allclose(res.trace["bound"], off.trace["bound"], atol=1e-12)
        first_futility += off.reason == "futility" and off.n == 200
    assert first_futility <= 4  # offline: about 5 % of runs at the planned effect


# ------------------------------------------------------------------------------------------ 3. futility with a
# guarantee
def test_futility_requires_an_effect_and_costs_at_most_its_stated_power():
    with pytest.raises(ValueError, match="^effect"):
        Futility()
    gamma, delta = 0.1, 0.04
    probs = [0.13, 0.70, 0.17]  # P(d = -1), P(0), P(+1): the planned effect 0.04
    kw = dict(initial=200, batch=200, max_n=2000)
    base = simulate_iid(SequentialEvaluator([Efficacy()], **kw), probs, sizes=[2000], n_runs=N_RUNS, rng=7,
                        kind="paired")
    fut = simulate_iid(SequentialEvaluator([Efficacy(), Futility(gamma, effect=delta)], **kw), probs, sizes=[2000],
                       n_runs=N_RUNS, rng=7, kind="paired")
    power, power_f = np.mean(base["reason"] == "efficacy"), np.mean(fut["reason"] == "efficacy")
    beta = 1 - power
    # conditional power under the planned effect loses at most gamma * beta / (1 - gamma) of the power
    # (Jennison & Turnbull 2000, sect. 10.2); under the current trend it would lose far more
    assert power - power_f <= gamma * beta / (1 - gamma) + 3 * _se(0.5) / 2, (power, power_f)


# ------------------------------------------------------------------------------------------ 4. spending by information
def _paper_groups():
    return np.repeat(np.arange(6), PAPER_SIZES)


def test_alpha_is_spent_at_the_information_fraction_of_the_mean_of_means():
    g = _paper_groups()
    ev = SequentialEvaluator([Precision(1e-9)], initial=100, batch=100)
    tr = ev.fit(np.ones(g.size) * 0.5, groups=g).trace
    assert len(tr) == 73
    # the last 42 looks use 28 % of the items but add 4.3 % of the information
    assert abs((tr["n"].iloc[-1] - tr["n"].iloc[30]) / tr["n"].iloc[-1] - 0.28) < 0.01
    assert abs(1 - tr["information"].iloc[30] - 0.043) < 0.002
    # type-I on a super-population with the paper's schedule: alpha is spent by information, so it is exhausted
    ev = SequentialEvaluator([Efficacy()], initial=100, batch=100)
    r = simulate_iid(ev, [0.15, 0.70, 0.15], sizes=PAPER_SIZES, n_runs=N_RUNS, rng=8, kind="paired")
    assert abs(np.mean(r["reason"] == "efficacy") - 0.05) < 3 * _se(0.05)


def test_finite_population_correction_on_a_fixed_benchmark():
    # the benchmark itself is the population: both models equal on it (15 % / 15 % disagreement per dataset)
    g = _paper_groups()
    a, b = np.ones(g.size), np.ones(g.size)
    for d, n in enumerate(PAPER_SIZES):
        idx = np.flatnonzero(g == d)
        k = int(0.15 * n)
        a[idx[:k]] = 0
        b[idx[k:2 * k]] = 0
    kw = dict(initial=100, batch=100, rng=9)
    plain = SequentialEvaluator([Efficacy()], **kw).simulate(a, b, groups=g, n_runs=2000)
    fpc = SequentialEvaluator([Efficacy()], fpc=True, **kw).simulate(a, b, groups=g, n_runs=2000)
    assert np.mean(plain.reason == "efficacy") < 0.03  # conservative for the benchmark's own score
    assert abs(np.mean(fpc.reason == "efficacy") - 0.05) < 3 * _se(0.05, 2000)
    # with the correction, the full benchmark is exact: the interval shrinks to the benchmark's score, give or take
    # the rounding tolerance of the exact decision (1e-12)
    r = SequentialEvaluator([Precision(1e-9)], fpc=True, **kw).fit(a, b, groups=g)
    assert r.estimate == 0 and r.z == 0 and -1e-12 <= r.ci_low <= 0 <= r.ci_high <= 1e-12


# ------------------------------------------------------------------------------------------ 6. decision = interval
def test_reported_interval_is_the_one_that_decided():
    a, b = _pair(0.10, 0.10)
    sim = SequentialEvaluator([Equivalence(0.05)], max_n=5000, rng=10).simulate(a, b, n_runs=1000)
    eq = sim.reason == "equivalence"
    assert eq.mean() > 0.5
    # an equivalence stop reports an interval inside the margin
    assert ((sim.ci_low[eq] > -0.05) & (sim.ci_high[eq] < 0.05)).all()
    assert (sim.confidence_level[eq] == 0.9).all()
    r = SequentialEvaluator([Equivalence(0.05)], max_n=5000, rng=10).fit(a, b)
    assert r.confidence_level == 0.9 and r.confidence_interval() == (r.ci_low, r.ci_high)
    assert r.confidence_interval(0.95) == (r.rci_low, r.rci_high)
    assert r.rci_low <= r.ci_low and r.ci_high <= r.rci_high
    with pytest.raises(ValueError, match="^confidence_level"):
        r.confidence_interval(0.8)
    # Threshold("both") decides on the two-sided 95 % repeated CI: a wrong claim either way at most alpha
    p = 0.7
    sim = SequentialEvaluator([Threshold(p, "both")], max_n=3000, rng=11).simulate(_pop(p), n_runs=N_RUNS)
    assert np.mean(sim.reason == "threshold") <= 0.05 + 3 * _se(0.05)
    assert (sim.confidence_level[sim.reason == "threshold"] == 0.95).all()


def test_result_protocol():
    a, b = _pair(0.2, 0.1)
    r = SequentialEvaluator([Efficacy()], max_n=4000, rng=0).fit(a[:4000], b[:4000])
    assert r.statistic == r.estimate and r.standard_error > 0
    df = r.to_frame()
    assert df.shape[0] == 1 and {"estimate", "standard_error", "ci_low", "ci_high", "confidence_level"} <= set(df)
    sim = SequentialEvaluator([Efficacy()], max_n=4000, rng=0).simulate(a, b, n_runs=50)
    lo, hi = sim.confidence_interval(0.95)
    assert lo.shape == (50,) and (lo <= hi).all()
    with pytest.raises(ValueError, match="^confidence_level"):
        sim.confidence_interval(0.99)


# ------------------------------------------------------------------------------------------ 7. bad arguments
def test_margins_in_points_and_other_silent_garbage_are_refused():
    with pytest.raises(ValueError, match="^margin.*0.02"):
        Equivalence(2)
    with pytest.raises(ValueError, match="^tau.*0.6"):
        Threshold(60, "below")
    with pytest.raises(ValueError, match="^half_width"):
        Precision(2)
    with pytest.raises(ValueError, match="^effect"):
        Futility(0.1, effect=4)
    with pytest.raises(ValueError, match="^scores_a.*at least 2"):
        SequentialEvaluator([Precision(0.02)]).fit(np.array([1.0]))
    with pytest.raises(ValueError, match="^null"):
        SequentialEvaluator([Efficacy()]).fit(np.ones(500))
    with pytest.raises(ValueError, match="^spending_param"):
        SequentialEvaluator([Efficacy()], spending="ld_pocock", spending_param=2.0).fit(np.ones(500), np.ones(500))
    with pytest.raises(ValueError, match="^tau"):
        SequentialEvaluator([Threshold(-0.1)]).fit(np.ones(500))
    with pytest.raises(ValueError, match="^null"):
        SequentialEvaluator([Efficacy()], null=60).fit(np.ones(500))
    # __init__ only stores: bad values surface in fit
    ev = SequentialEvaluator([Efficacy()], alpha=2.0)
    assert ev.alpha == 2.0
    with pytest.raises(ValueError, match="^alpha"):
        ev.fit(np.ones(500), np.ones(500))


# ------------------------------------------------------------------------------------------ 8. ranking
def test_ranking_familywise_error_with_corrected_per_pair_decisions():
    # four equally accurate models: any "greater"/"less" decision is a familywise error
    n = 1200
    fwer = _ranking_fwer(0.7, 10, 4, n, 12, 0.05, "holm")
    assert fwer <= 0.05 + 3 * _se(0.05, n)
    fwer_b = _ranking_fwer(0.98, 73, 4, 600, 13, 0.05, "bonferroni")
    assert fwer_b <= 0.05 + 3 * _se(0.05, 600)


def test_online_ranking_equals_offline_on_the_same_order():
    rng = np.random.default_rng(0)
    p = np.array([0.85, 0.78, 0.72, 0.71])
    codes = np.repeat([0, 1], [600, 1400])
    x = (rng.random((4, codes.size)) < p[:, None]).astype(float)
    off = rank_models(x, groups=codes, rng=3, model_ids=list("abcd"))
    g = np.random.default_rng(3)
    order = [g.permutation(np.flatnonzero(codes == d)) for d in range(2)]
    on = SequentialRanking().start(list("abcd"), codes.size, 2, sizes=[600, 1400])
    for k in range(14):
        idx = np.concatenate([o[100 * k: 100 * (k + 1)] for o in order])
        res = on.update(x[:, idx], codes[idx])
        if (res.pairs.reason != "continue").all():
            break
    pd.testing.assert_frame_equal(res.pairs[["n", "decision", "reason"]], off.pairs[["n", "decision", "reason"]])
    assert res.fraction_used == off.fraction_used


# ------------------------------------------------------------------------------------------ 9. labelled inputs
def test_labelled_inputs_are_aligned_by_item_id():
    rng = np.random.default_rng(1)
    a = pd.Series((rng.random(2000) < 0.8).astype(float), index=[f"item{i}" for i in range(2000)])
    b = a.sample(frac=1.0, random_state=2)  # the same scores, shuffled: the paired difference is 0 on every item
    r = SequentialEvaluator([Precision(1e-9)], rng=0).fit(a, b)
    assert (r.trace["estimate"] == 0).all()  # items are paired by id, not by position
    with pytest.raises(ValueError, match="^scores_b.*same item ids"):
        SequentialEvaluator([Efficacy()]).fit(a, b.rename(lambda s: s + "x"))
    with pytest.raises(ValueError, match="^scores_b"):
        SequentialEvaluator([Efficacy()]).fit(a, b.to_numpy())


def test_ranking_and_schedule_arguments_are_checked():
    x = (np.random.default_rng(0).random((3, 400)) < 0.7).astype(float)
    with pytest.raises(ValueError, match="^model_ids"):
        rank_models(x, model_ids=["a", "a", "b"])
    with pytest.raises(ValueError, match="^model_ids"):
        rank_models(x, model_ids="abc")
    with pytest.raises(ValueError, match="^rules"):
        rank_models(x, rules=[])
    with pytest.raises(ValueError, match="^initial"):
        SequentialEvaluator([Efficacy()], initial=10**6).fit(x[0], x[1])
    with pytest.raises(ValueError, match="^batch"):
        SequentialEvaluator([Efficacy()], batch=10**6).fit(x[0], x[1])


def test_stagewise_pvalue_agrees_with_the_decision():
    rng = np.random.default_rng(0)
    a = (rng.random(4000) < 0.8).astype(float)
    b = (rng.random(4000) < 0.75).astype(float)
    r = SequentialEvaluator([Efficacy()], rng=0).fit(a, b)
    assert r.reason == "efficacy" and r.pvalue is not None and r.pvalue <= 0.05
    r0 = SequentialEvaluator([Efficacy()], rng=0).fit(a, a)
    assert r0.reason == "max_n" and r0.pvalue > 0.9  # z = 0 at every look
    rp = SequentialEvaluator([Precision(0.1)], rng=0).fit(a, b)
    assert rp.reason == "precision" and rp.pvalue is None  # no efficacy test made


def test_online_ranking_arguments_are_checked():
    for bad in ("abc", 3, ["a"], ["a", "a"]):
        with pytest.raises(ValueError, match="^model_ids"):
            SequentialRanking().start(bad, 100)
    with pytest.raises(ValueError, match="^update"):
        SequentialRanking().update(np.zeros((2, 10)))
    on = SequentialRanking().start(["a", "b"], 200)
    with pytest.raises(ValueError, match="^scores"):
        on.update(np.zeros((3, 10)))
