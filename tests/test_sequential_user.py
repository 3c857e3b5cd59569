"""Adaptive evaluation used as a user would: labelled inputs, online harnesses, every spending family, rare
disagreements, and the reported intervals agreeing with the decisions.

Monte-Carlo tolerances: 3 Monte-Carlo standard errors of the nominal rate.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from effstats.sequential import (BetaSpendingFutility, Efficacy, Precision, SequentialEvaluator, Threshold,
                                 stagewise_inference)

POP = 100_000


def _pair(pa: float, pb: float, n: int = 20_000, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.random(n) < pa).astype(float), (rng.random(n) < pb).astype(float)


# --------------------------------------------------------------- BetaSpendingFutility: None-aware family default
@pytest.mark.parametrize("family", ["ld_pocock", "ld_obf", "hsd", "power"])
def test_beta_spending_futility_accepts_every_spending_family_with_its_default(family):
    # gsDesign's default lower parameter (-2) belongs to Hwang-Shih-DeCani only; each family takes its own default
    a, b = _pair(0.80, 0.77)
    rule = BetaSpendingFutility(effect=0.03, spending=family)
    assert rule.param is None
    r = SequentialEvaluator([Efficacy(), rule], rng=1).fit(a, b)
    assert r.decision == "greater" and r.reason == "efficacy"


def test_beta_spending_futility_hsd_default_is_gsdesigns_minus_two():
    default = BetaSpendingFutility(effect=0.03, se_full=0.01)
    explicit = BetaSpendingFutility(effect=0.03, se_full=0.01, param=-2.0)
    from effstats.sequential.rules import LookStats
    t = np.array([0.25, 0.5, 0.75, 1.0])
    ls = LookStats(n=t * 4, t=t, estimate=np.full((1, 4), 0.01), se=np.full((1, 4), 0.01) / np.sqrt(t), z=None,
                   c2=np.full(4, 2.3), c1=np.full(4, 2.0), null=0.0, alpha=0.05, spending="ld_pocock")
    np.testing.assert_allclose(default.lower_bound(ls), explicit.lower_bound(ls), rtol=1e-12)
    assert np.all(np.diff(default.lower_bound(ls)) > 0)


@pytest.mark.parametrize("kw, msg", [
    (dict(spending="ld_pocock", param=1.0), "param: the Lan-DeMets Pocock family has no parameter"),
    (dict(spending="power", param=-1.0), "param: the power family needs rho > 0"),
    (dict(spending="pocock"), "spending: a beta-spending bound needs a spending function"),
    (dict(spending="nope"), "spending: unknown spending family"),
])
def test_beta_spending_futility_refuses_bad_family_parameters_at_construction(kw, msg):
    with pytest.raises(ValueError, match=msg):
        BetaSpendingFutility(effect=0.03, **kw)


# --------------------------------------------------------------- the interval that made the decision agrees with it
@pytest.mark.parametrize("pa, pb", [(0.80, 0.78), (0.99, 0.985)])
@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_efficacy_stops_report_an_interval_on_the_claimed_side_of_zero(pa, pb, alternative):
    # the deciding interval and the test agree: a "greater" stop reports an interval above 0 (a continuity
    # correction applied away from 0 only would let it reach below)
    a, b = _pair(pa, pb)
    sim = SequentialEvaluator([Efficacy(alternative)], rng=1).simulate(a, b, n_runs=300, rng=2)
    eff = sim.reason == "efficacy"
    assert eff.sum() > 200
    g = eff & (sim.decision == "greater")
    le = eff & (sim.decision == "less")
    assert np.all(sim.ci_low[g] >= 0) and np.all(sim.ci_high[le] <= 0)
    assert np.all(sim.rci_low[g & (sim.confidence_level == 0.95)] >= 0)


def test_fit_result_interval_agrees_with_greater_decision():
    a, b = _pair(0.80, 0.76)
    r = SequentialEvaluator([Efficacy("greater")], rng=1).fit(a, b)  # a decision at 0 with an interval above 0
    assert r.decision == "greater"
    assert r.ci_low >= 0 and r.confidence_interval(0.90).low >= 0


# --------------------------------------------------------------- final inference reachable from a result
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_final_inference_is_stagewise_inference_on_the_trace(alternative):
    a, b = _pair(0.80, 0.76)
    x, y = (b, a) if alternative == "less" else (a, b)
    r = SequentialEvaluator([Efficacy(alternative)], rng=1).fit(x, y)
    assert r.reason == "efficacy"
    fi = r.final_inference()
    tr = r.trace
    sign = -1.0 if alternative == "less" else 1.0
    two = alternative == "two-sided"
    t = tr["information"].to_numpy()
    info = t / (t[-1] * tr["se"].to_numpy()[-1] ** 2)
    ref = stagewise_inference(z=sign * tr["z"].to_numpy()[-1], look=len(tr), information=info,
                              upper=tr["bound" if two else "bound_one_sided"].to_numpy(), two_sided=two)
    assert fi.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    assert fi.statistic == pytest.approx(sign * ref.statistic, rel=1e-9)
    # on the scale of the scores: naive estimate = z * se at the stop ~ the observed difference (score s.e.)
    assert fi.naive_estimate == pytest.approx(r.estimate, rel=0.05)
    # the stage-wise p-value is the result's own (same ordering, same information fractions)
    assert fi.pvalue == pytest.approx(r.pvalue, rel=1e-9)
    # after an early stop the median-unbiased estimate is pulled towards 0 from the naive one
    assert abs(fi.statistic) < abs(fi.naive_estimate)
    lo, hi = fi.confidence_interval(0.95)
    assert lo < fi.statistic < hi and np.sign(fi.statistic) == sign


def test_final_inference_median_unbiased_by_monte_carlo():
    # true difference 0.03 at accuracy 0.8: the median of the median-unbiased estimates at efficacy stops is close
    # to the truth, the naive estimate's median is above it (selection of extreme paths)
    rng = np.random.default_rng(5)
    n = POP
    u = rng.random(n)
    a = (u < 0.80).astype(float)
    b = a.copy()
    flip = np.flatnonzero(a == 1)[: int(0.06 * n)]
    b[flip] = 0.0
    back = np.flatnonzero(a == 0)[: int(0.03 * n)]
    b[back] = 1.0  # difference 0.03, 9 % disagreement
    mu, naive = [], []
    for seed in range(60):
        r = SequentialEvaluator([Efficacy()], rng=seed, initial=200, batch=200, max_n=6000).fit(a, b)
        if r.reason in ("efficacy", "max_n"):
            fi = r.final_inference()
            mu.append(fi.statistic)
            naive.append(fi.naive_estimate)
    assert len(mu) >= 50
    assert abs(np.median(mu) - 0.03) < 0.006
    assert np.median(naive) > np.median(mu)


def test_final_inference_with_rare_disagreements_non_monotone_plugin_information():
    # with rare disagreements the plug-in information 1 / se**2 is not increasing over the looks; the final
    # inference must use information that is
    nu, nd = int(POP * 0.015), int(POP * 0.005)
    a = np.r_[np.ones(nu), np.zeros(nd), np.ones(POP - nu - nd)]
    b = np.r_[np.zeros(nu), np.ones(nd), np.ones(POP - nu - nd)]
    ok = 0
    for seed in range(12):
        r = SequentialEvaluator([Efficacy()], rng=seed, initial=200, batch=200, max_n=4000).fit(a, b)
        fi = r.final_inference()
        lo, hi = fi.confidence_interval(0.95)
        ok += lo <= 0.01 <= hi
    assert ok >= 10


def test_final_inference_refuses_other_stops_and_no_efficacy_rule():
    a, b = _pair(0.80, 0.76)
    r = SequentialEvaluator([Efficacy(), Precision(0.05)], rng=1).fit(a, b)
    assert r.reason == "precision"
    with pytest.raises(ValueError, match="^final_inference"):
        r.final_inference()
    r = SequentialEvaluator([Threshold(0.5, "above")], rng=1).fit(a)
    assert r.pvalue is None  # no efficacy test was made
    with pytest.raises(ValueError, match="^final_inference"):
        r.final_inference()


# --------------------------------------------------------------- online: labelled batches enter once
def test_online_update_refuses_item_ids_already_evaluated():
    # a harness re-sending a labelled batch must not have its items counted twice
    a, b = _pair(0.80, 0.78, n=2000)
    sa, sb = pd.Series(a), pd.Series(b)
    ev = SequentialEvaluator([Efficacy()])
    ev.start(max_n=2000)
    ev.update(sa[:100], sb[:100])
    with pytest.raises(ValueError, match=r"scores_a: item ids already evaluated in an earlier batch: \[50, 51"):
        ev.update(sa[50:150], sb[50:150])
    with pytest.raises(ValueError, match="scores_a: earlier batches were labelled Series"):
        ev.update(a[100:200], b[100:200])
    r = ev.update(sa[100:200], sb[100:200].sample(frac=1, random_state=0))  # refused batches left no trace
    assert r.n == 200
    assert r.estimate == pytest.approx(float(np.mean(a[:200] - b[:200])), abs=1e-12)


def test_unpaired_comparison_raises_no_runtime_warning():
    # the Agresti-Caffo statistic at its own estimate has 0 * inf terms, which must not surface as warnings
    import warnings

    a, b = _pair(0.80, 0.78, n=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = SequentialEvaluator([Efficacy()], rng=0).fit(pd.Series(a), pd.Series(b), paired=False)
    assert r.ci_low < r.estimate < r.ci_high


# --------------------------------------------------------------- ranking: labelled inputs aligned by id
def _frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    acc = np.array([0.70, 0.72, 0.75, 0.80])[:, None]
    return pd.DataFrame((rng.random((4, 3000)) < acc).astype(float), index=list("abcd"),
                        columns=[f"i{k}" for k in range(3000)])


def test_rank_models_takes_model_ids_from_a_dataframe_and_aligns_groups_by_item_id():
    from effstats.sequential import rank_models

    df = _frame()
    g = pd.Series(np.repeat([0, 1, 2], 1000), index=df.columns)
    r = rank_models(df, groups=g, rng=0)
    assert list(r.ranking.index) == ["d", "c", "b", "a"]  # the frame's labels, not positions
    shuffled = rank_models(df, groups=g.sample(frac=1, random_state=2), rng=0)  # groups aligned by item id
    assert r.pairs["n"].tolist() == shuffled.pairs["n"].tolist()
    np.testing.assert_allclose(r.pairs["estimate"], shuffled.pairs["estimate"])
    with pytest.raises(ValueError, match=r"groups: no group for item ids \['i0'"):
        rank_models(df, groups=pd.Series(np.zeros(3000), index=range(3000)), rng=0)
    with pytest.raises(ValueError, match="^scores"):
        rank_models(df, model_ids=list("abcz"), rng=0)


def test_online_ranking_aligns_model_rows_and_refuses_repeated_items():
    from effstats.sequential import SequentialRanking

    df = _frame()
    sr = SequentialRanking()
    sr.start(list("abcd"), max_n=3000)
    est = sr.update(df.iloc[[1, 0, 2, 3], :100]).pairs.set_index(["model_a", "model_b"])["estimate"]
    d = df.iloc[:, :100]
    # a - b, in the order the pair is named
    assert est[("a", "b")] == pytest.approx(float((d.loc["a"] - d.loc["b"]).mean()))
    with pytest.raises(ValueError, match="missing: \\['a'\\], unknown: \\['z'\\]"):
        sr.update(df.rename(index={"a": "z"}).iloc[:, 100:200])
    with pytest.raises(ValueError, match="scores: item ids already evaluated in an earlier batch"):
        sr.update(df.iloc[:, 50:150])
    assert sr.update(df.iloc[:, 100:200]).pairs["n"].tolist()[0] == 200  # refused batches left no trace


def test_result_frame_carries_the_pvalue_and_alpha():
    # to_frame() carries everything the result holds
    a, b = _pair(0.80, 0.76)
    r = SequentialEvaluator([Efficacy()], alpha=0.1, rng=1).fit(a, b)
    f = r.to_frame()
    assert f.loc[0, "pvalue"] == pytest.approx(r.pvalue) and r.pvalue < 0.1
    assert f.loc[0, "alpha"] == 0.1 and f.loc[0, "confidence_level"] == pytest.approx(0.9)
    assert (f.loc[0, "ci_low"], f.loc[0, "ci_high"]) == tuple(r.confidence_interval())


def test_nan_scores_message_says_what_to_do():
    # the message names the fix these functions accept (they take no missing mask)
    from effstats.sequential import rank_models

    a = np.r_[np.ones(50), np.nan]
    with pytest.raises(ValueError, match=r"scores_a: contains NaN \(items not scored\); drop those items"):
        SequentialEvaluator([Efficacy()]).fit(a, np.ones(51))
    with pytest.raises(ValueError, match=r"scores: contains NaN \(items not scored\)"):
        rank_models(np.r_[np.ones((2, 51)), a[None]])


# ------------------------------------------------------------------ statistical details
def test_beta_spending_futility_with_fpc_runs():
    # with fpc=True the look that uses up the benchmark and the one before it can both be at information fraction
    # 1; the rule must not hand design() a sequence that is not strictly increasing (an argument the user never passed)
    g = np.random.default_rng(0)
    a, b = (g.random(1000) < 0.75).astype(float), (g.random(1000) < 0.7).astype(float)
    for fpc in (False, True):
        ev = SequentialEvaluator([Efficacy(), BetaSpendingFutility(effect=0.02)], fpc=fpc, rng=0)
        assert ev.fit(a, b).reason in ("efficacy", "futility", "max_n")
        assert ev.simulate(a, b, n_runs=50).reason.size == 50


def test_unpaired_groups_are_aligned_by_the_scores_index():
    # paired=False read a groups Series by position: shuffling the labels' rows moved the estimate 0.0 -> 0.243
    ids = [f"i{k}" for k in range(2000)]
    g = pd.Series(np.repeat(["e", "h"], [1500, 500]), index=ids)
    a, b = pd.Series((g == "e").astype(float)), pd.Series(0.5, index=ids)
    gs = g.sample(frac=1, random_state=1)
    ev = SequentialEvaluator([Precision(1e-4)], rng=0)
    assert ev.fit(a, b, paired=False, groups=g, groups_b=g).estimate == 0.0
    assert ev.fit(a, b, paired=False, groups=gs, groups_b=gs).estimate == 0.0
    assert np.all(ev.simulate(a, b, paired=False, groups=gs, groups_b=gs, n_runs=3).estimate == 0.0)
    with pytest.raises(ValueError, match="^groups_b: no group for item ids"):
        ev.fit(a, b, paired=False, groups=g, groups_b=g.iloc[:-1])


def test_a_renamed_efficacy_rule_keeps_its_inference():
    # the p-value and final_inference() looked for a rule *named* "efficacy": None, and a false "stopped inside the
    # continuation region" error
    a, b = _pair(0.75, 0.70, 3000, seed=0)
    r0 = SequentialEvaluator([Efficacy()], rng=0).fit(a, b)
    r = SequentialEvaluator([Efficacy(name="superiority")], rng=0).fit(a, b)
    assert r0.reason == "efficacy" and r.reason == "superiority"
    assert r.pvalue == r0.pvalue is not None
    assert r.final_inference().statistic == r0.final_inference().statistic


def test_a_refused_first_online_batch_leaves_the_evaluation_unset():
    # a refused first batch must not fix the evaluation's kind (paired or one model)
    ev = SequentialEvaluator([Precision(0.05)]).start(max_n=100)
    x = np.ones(200)
    with pytest.raises(ValueError, match="more items than planned"):
        ev.update(x[:150], x[:150])
    assert ev.update(x[:50]).n == 50  # a single-model batch is still accepted


@pytest.mark.parametrize("labels", [np.array(["a"] * 999 + [np.nan], dtype=object),
                                    np.array(["a"] * 999 + [None], dtype=object), pd.Series(["a"] * 999 + [None]),
                                    np.array(["a"] * 999 + [3], dtype=object)])
def test_missing_or_mixed_group_labels_are_a_clear_error(labels):
    # NaN or mixed-type labels cannot be sorted: a ValueError naming the argument, not a TypeError from sorting
    with pytest.raises(ValueError, match="^groups: "):
        SequentialEvaluator([Precision(0.05)]).fit(np.ones(1000), np.zeros(1000), groups=labels)


def test_ranking_with_a_renamed_efficacy_rule_names_winners():
    # a decided pair is recognised by its rule's role, not its name: a renamed Efficacy rule still names winners
    # and gives Copeland scores
    from effstats.sequential import rank_models

    g = np.random.default_rng(3)
    X = (g.random((3, 4000)) < np.array([[0.95], [0.75], [0.5]])).astype(float)
    r0 = rank_models(X, rng=0)
    r = rank_models(X, rules=[Efficacy(name="eff")], rng=0)
    assert r.pairs["significant"].all() and r0.pairs["significant"].all()
    assert r.pairs["winner"].tolist() == r0.pairs["winner"].tolist()


def test_a_rejected_zero_lies_outside_the_reported_interval():
    # ci_low > 0 exactly when "greater" was decided at 0: an end clipped to exactly 0.0 would leave 0 in the
    # closed interval the test rejected
    g = np.random.default_rng(4)
    d = g.choice([-1.0, 0.0, 1.0], p=[0.002, 0.99, 0.008], size=(400, 1000))
    a, b = np.maximum(d, 0), np.maximum(-d, 0)
    ev = SequentialEvaluator([Efficacy("greater")], initial=200, batch=200)
    res = [ev.fit(a[k], b[k], shuffle=False) for k in range(len(d))]
    greater = np.array([r.decision == "greater" for r in res])
    low = np.array([r.ci_low for r in res])
    assert greater.sum() > 50 and np.array_equal(low > 0, greater)


def test_beta_spending_futility_takes_the_drift_of_the_tests_own_z():
    # the paired z divides by the null variance (the discordance rate), so the bound's drift must be effect / (that
    # se): with the plug-in se, z drifts less than the bound assumes and P(futility stop) at the design effect
    # exceeds beta
    from effstats.sequential.validation import simulate_iid

    ev = SequentialEvaluator([Efficacy("greater")], initial=500, batch=500)
    s = simulate_iid(ev, [0.13, 0.7, 0.17], sizes=(1000,), kind="paired", n_runs=500, rng=1, all_looks=True)["stats"]
    st, t0 = s.statistic, float(np.asarray(s.t)[0])
    se0 = np.sqrt(st.null_variance(0.0) / st.n_eff)[:, 0]
    auto = BetaSpendingFutility(effect=0.04).lower_bound(s)
    by_null = BetaSpendingFutility(effect=0.04, se_full=float(np.median(se0)) * np.sqrt(t0)).lower_bound(s)
    by_plugin = BetaSpendingFutility(effect=0.04, se_full=float(np.median(s.se[:, 0])) * np.sqrt(t0)).lower_bound(s)
    np.testing.assert_allclose(auto, by_null, rtol=1e-12)
    assert not np.allclose(auto, by_plugin, rtol=1e-6)


def test_holm_reports_undecided_pairs_at_their_final_level():
    # a pair never decided is reported at Holm's last level, alpha / (pairs not rejected): 0.05 / 6 for 4 models
    # with no rejection, not at alpha itself
    from effstats.sequential import rank_models

    g = np.random.default_rng(5)
    X = (g.random((4, 3000)) < np.array([[0.8], [0.8], [0.8], [0.8]])).astype(float)
    r = rank_models(X, rules=[Efficacy("less")], rng=0)
    undecided = r.pairs[~r.pairs["significant"]]
    assert len(undecided) == 6
    np.testing.assert_allclose(undecided["alpha_used"], 0.05 / 6)


def test_stagewise_pvalue_is_a_probability():
    # a one-sided p-value far below the bounds came out as 1.0000015 (quadrature overshoot)
    a, b = _pair(0.80, 0.70, 3000, seed=2)
    r = SequentialEvaluator([Efficacy("less")], initial=200, batch=200).fit(a, b, shuffle=False)
    assert r.reason == "max_n" and 0.0 <= r.pvalue <= 1.0


@pytest.mark.parametrize("rule", [BetaSpendingFutility(effect=0.03)])
def test_futility_on_one_model_needs_the_tested_value(rule):
    # on one model without null= the z is 0 at every look, so a futility rule stopped at once and silently
    from effstats.sequential import Futility

    x = (np.random.default_rng(0).random(3000) < 0.8).astype(float)
    for fut in (rule, Futility(0.1, effect=0.03)):
        with pytest.raises(ValueError, match="^null: .*Futility"):
            SequentialEvaluator([Precision(0.01), fut]).fit(x)
