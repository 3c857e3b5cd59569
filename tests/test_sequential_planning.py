"""Planning API (plan, conditional_power): against gsDesign (n.fix / n.I / en, gsCP), the literature and Monte Carlo."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import norm

from effstats.sequential import conditional_power, design, detectable_effect, plan


# ---------------------------------------------------------------------------------------- closed forms, literature
def test_fixed_sample_size_is_the_normal_formula():
    p = plan(0.02, disagreement=0.10, power=0.9, alpha=0.05, looks=5)
    sd = np.sqrt(0.10 - 0.02**2)
    assert p.sd == pytest.approx(sd)
    assert p.n_fixed == pytest.approx(((norm.isf(0.025) + norm.isf(0.1)) * sd / 0.02) ** 2, rel=1e-12)
    assert p.max_n == int(np.ceil(p.design.inflation * p.n_fixed))
    assert p.expected_n_h1 < p.n_fixed < p.max_n  # sequential: a few percent more at most, much less on average
    np.testing.assert_array_equal(p.looks, np.ceil(p.design.timing * p.max_n).astype(int))
    assert p.looks[-1] == p.max_n


def test_pocock_inflation_matches_jennison_turnbull():
    # Jennison & Turnbull (2000), Table 2.4 (two-sided alpha 0.05, power 0.9): R_P(K=5) = 1.207; R_B (O'Brien-Fleming)
    # 1.026
    pp = plan(0.05, sd=1.0, looks=5, spending="pocock")
    po = plan(0.05, sd=1.0, looks=5, spending="obf")
    assert pp.design.inflation == pytest.approx(1.207, abs=1e-3)
    assert po.design.inflation == pytest.approx(1.026, abs=1e-3)


def test_many_models_use_a_bonferroni_level_per_pair():
    p = plan(0.02, disagreement=0.1, n_models=10, looks=5)
    assert p.n_comparisons == 45 and p.alpha_per_comparison == pytest.approx(0.05 / 45)
    holm = plan(0.02, disagreement=0.1, n_models=10, looks=5, correction="holm")
    assert holm.max_n == p.max_n  # Holm's first step is at alpha / m
    none = plan(0.02, disagreement=0.1, n_models=10, looks=5, correction="none")
    assert none.alpha_per_comparison == 0.05 and none.max_n < p.max_n
    assert p.design.alpha == pytest.approx(0.05 / 45)


def test_datasets_split_items_equally_and_availability():
    sizes = [1500, 1050, 1000, 3088, 951]  # five datasets of a benchmark
    p = plan(0.02, disagreement=[0.08, 0.1, 0.12, 0.1, 0.1], n_models=2, n_datasets=5, looks=5, items_available=sizes)
    assert p.max_n % 5 == 0 and np.all(p.looks % 5 == 0)
    assert p.sd == pytest.approx(np.sqrt(np.mean(np.array([0.08, 0.1, 0.12, 0.1, 0.1]) - 0.02**2)))
    assert p.items_available == 5 * 951 and p.feasible == (p.max_n <= 5 * 951)
    df = p.to_frame()
    assert (df["items_per_dataset"] * 5 == df["items"]).all()
    # the achievable power with the available items is below the target when infeasible, above when feasible
    assert (p.power_at_available < 0.9) == (not p.feasible)


def test_power_at_available_equals_design_power_at_the_planned_maximum():
    p = plan(0.03, sd=0.3, looks=4, items_available=10**6)
    q = plan(0.03, sd=0.3, looks=4, items_available=p.max_n)
    assert q.feasible and q.power_at_available == pytest.approx(0.9, abs=2e-3)  # max_n is rounded up
    assert p.power_at_available > 0.999


def test_precision_plan():
    # one model's accuracy (n_models=1; with the default n_models=2, accuracy plans a paired difference)
    # binary scores: the Clopper-Pearson interval is about half an item wider than c sd / sqrt(n)
    p = plan(half_width=0.02, accuracy=0.9, looks=4, n_models=1)
    sd = np.sqrt(0.09)
    assert norm.isf(0.025) * sd / np.sqrt(p.n_fixed) + 0.5 / p.n_fixed == pytest.approx(0.02, rel=1e-12)
    # the precision rule's interval is the fixed-sample one (no alpha spent over the looks): the last look is the
    # fixed design, the first n with z sd / sqrt(n) + 1 / (2 n) <= half_width
    assert norm.isf(0.025) * sd / np.sqrt(p.max_n) + 0.5 / p.max_n <= 0.02 + 1e-12
    assert norm.isf(0.025) * sd / np.sqrt(p.max_n - 1) + 0.5 / (p.max_n - 1) > 0.02
    # a given sd (continuous scores): no such term; a pair: one item (the corrected score interval)
    q = plan(half_width=0.02, sd=0.3, looks=4, n_models=1)
    assert q.n_fixed == pytest.approx((norm.isf(0.025) * 0.3 / 0.02) ** 2, rel=1e-12)
    r = plan(half_width=0.02, disagreement=0.1, looks=4)
    assert norm.isf(0.025) * r.sd / np.sqrt(r.n_fixed) + 1 / r.n_fixed == pytest.approx(0.02, rel=1e-12)
    worst = plan(half_width=0.02, looks=4, n_models=1)  # no sd: the binomial worst case, accuracy 1/2
    assert worst.sd == 0.5 and worst.max_n > p.max_n


def test_precision_plan_without_variance_is_the_worst_case_of_its_number_of_models():
    """Without sd / disagreement / accuracy a precision plan assumes the largest per-item variance of 0/1 scores:
    1/4 for one model, 1 for a paired difference (the models disagree on every item); the fixed-design formula with
    the exact interval's extra item solves for its size, and no information about the models plans more items."""
    c = norm.isf(0.025)
    one, pair = plan(half_width=0.02, looks=3, n_models=1), plan(half_width=0.02, looks=3)
    assert one.sd == 0.5 and pair.sd == 1.0
    assert c * 0.5 / np.sqrt(one.n_fixed) + 0.5 / one.n_fixed == pytest.approx(0.02, rel=1e-12)
    assert c / np.sqrt(pair.n_fixed) + 1 / pair.n_fixed == pytest.approx(0.02, rel=1e-12)
    assert pair.max_n == int(np.ceil(pair.n_fixed))
    three = plan(half_width=0.02, looks=3, n_models=3)  # three pairs, Bonferroni
    c3 = norm.isf(0.05 / 6)
    assert three.sd == 1.0 and c3 / np.sqrt(three.n_fixed) + 1 / three.n_fixed == pytest.approx(0.02, rel=1e-12)
    for acc in np.linspace(0.01, 0.99, 99):
        assert plan(half_width=0.02, looks=3, accuracy=acc).max_n <= pair.max_n
        assert plan(half_width=0.02, looks=3, accuracy=acc, n_models=1).max_n <= one.max_n
    for q in np.linspace(0.01, 1.0, 100):
        assert plan(half_width=0.02, looks=3, disagreement=q).max_n <= pair.max_n


def test_precision_plan_for_a_pair_covers_the_items_the_precision_rule_uses():
    """Monte Carlo (200 random orders of 20,000 items, looks every 100 items): the Precision rule's stopping size for
    a pair that disagrees on every item, and for two independent models of accuracy 1/2, is the pair's plan (the
    default, and disagreement=0.5) to within one batch."""
    from effstats.sequential import Precision, SequentialEvaluator

    g = np.random.default_rng(0)
    a = (g.random(20_000) < 0.5).astype(float)
    ev = SequentialEvaluator([Precision(0.02)], initial=100, batch=100)
    worst = ev.simulate(a, 1 - a, n_runs=200, rng=1).n
    planned = plan(half_width=0.02, looks=3).max_n
    assert worst.max() <= planned < worst.min() + 100
    indep = ev.simulate(a, (g.random(20_000) < 0.5).astype(float), n_runs=200, rng=1).n
    planned = plan(half_width=0.02, looks=3, disagreement=0.5).max_n
    assert abs(indep.mean() - planned) < 100 + 3 * indep.std() / np.sqrt(200)
    assert plan(half_width=0.02, looks=3).max_n >= indep.max()


# ---------------------------------------------------------------------------------------- Monte Carlo
def test_planned_power_and_expected_items_by_simulation():
    """Paired 0/1 differences with the planned disagreement: power 0.9 and E[n] within 3 MC s.e. (known sd)."""
    rng = np.random.default_rng(3)
    eff, q, n_sim = 0.04, 0.2, 4000
    p = plan(eff, disagreement=q, looks=4, power=0.9, spending="ld_obf")
    d = p.design
    incr = np.diff(np.r_[0, p.looks])
    probs = [(q + eff) / 2, (q - eff) / 2, 1 - q]  # +1, -1, 0
    counts = rng.multinomial(incr[None, :].repeat(n_sim, 0), probs)  # (n_sim, k, 3)
    s = np.cumsum(counts[..., 0] - counts[..., 1], axis=1)
    z = s / np.sqrt(p.looks) / p.sd
    cross = np.abs(z) >= d.upper
    stopped = cross.any(axis=1)
    first = np.where(stopped, cross.argmax(axis=1), d.k - 1)
    power = np.mean(stopped & (z[np.arange(n_sim), first] > 0))
    en = np.mean(p.looks[first])
    se_p = np.sqrt(0.9 * 0.1 / n_sim)
    assert abs(power - 0.9) < 3 * se_p + 0.005  # + rounding up of the looks and the normal approximation
    se_n = np.std(p.looks[first]) / np.sqrt(n_sim)
    assert abs(en - p.expected_n_h1) < 3 * se_n + 0.01 * p.max_n


# ---------------------------------------------------------------------------------------- conditional power
def test_conditional_power_closed_form_two_looks():
    d = design(2, 0.025, sided=1, spending="ld_obf", timing=[0.5, 1])
    z1, theta = 1.0, 2.0
    info = np.array([0.5, 1.0])
    got = conditional_power(d, 1, z1, theta=theta, information=info)
    # Z2 sqrt(I2) = z1 sqrt(I1) + N(theta (I2 - I1), I2 - I1)
    mean = z1 * np.sqrt(0.5) + theta * 0.5
    want = norm.sf((d.upper[1] * 1.0 - mean) / np.sqrt(0.5))
    assert got[0] == pytest.approx(want, abs=1e-10)


def test_plan_conditional_power_uses_items_scale():
    p = plan(0.03, sd=0.3, looks=3)
    cp = p.conditional_power(1, 0.03)
    assert cp.shape == (3,) and cp[1] < cp[0]  # H0 (no difference) below the current trend
    assert 0 < cp[2] < 1


@pytest.mark.parametrize("kw,arg", [
    (dict(), "effect"), (dict(effect=0.02, half_width=0.02), "effect"), (dict(effect=2.0, sd=1), "effect"),
    (dict(effect=0.02), "sd"), (dict(effect=0.02, disagreement=0.01), "disagreement"),
    (dict(effect=0.02, sd=0.3, correction="sidak"), "correction"), (dict(effect=0.02, sd=0.3, looks=0), "looks"),
    (dict(effect=0.02, sd=0.3, n_models=0), "n_models"), (dict(effect=0.02, sd=[0.3, 0.2], n_datasets=3), "sd"),
    (dict(half_width=5.0), "half_width"), (dict(effect=0.02, sd=0.3, power=1.0), "power"),
    (dict(effect=0.02, sd=0.3, disagreement=0.1), "sd"),
    (dict(effect=0.02, sd=0.3, items_available=0), "items_available"),
])
def test_bad_input_names_the_argument(kw, arg):
    with pytest.raises(ValueError, match=f"^{arg}"):
        plan(**kw)


def test_one_look_plan_with_the_gsdesign_backend_names_looks():
    assert plan(0.02, sd=0.3, looks=1).max_n > 0
    with pytest.raises(ValueError, match=r"^looks: gsDesign needs at least 2 looks; .*backend='native'"):
        plan(0.02, sd=0.3, looks=1, backend="gsdesign")


def test_conditional_power_bad_input():
    d = design(3, 0.05)
    with pytest.raises(ValueError, match="^look"):
        conditional_power(d, 3, 1.0)
    with pytest.raises(ValueError, match="^z"):
        conditional_power(d, 1, float("nan"))
    with pytest.raises(ValueError, match="^design"):
        conditional_power("d", 1, 1.0)


# ---------------------------------------------------------------------------------------- gsDesign, live
@pytest.mark.needs_r
@pytest.mark.parametrize("sided,fam,k", [(2, "ld_obf", 5), (1, "ld_pocock", 3), (2, "hsd", 4)])
def test_plan_matches_gsdesign_sample_sizes(sided, fam, k):
    from effstats import rbridge

    gs = rbridge.r_package("gsDesign")
    p = plan(0.02, disagreement=0.1, looks=k, sided=sided, spending=fam, spending_param=-4 if fam == "hsd" else None)
    sfu = {"ld_obf": gs.sfLDOF, "ld_pocock": gs.sfLDPocock, "hsd": gs.sfHSD}[fam]
    x = rbridge.r_call(gs.gsDesign, k=k, test_type=sided, alpha=0.05 / sided, beta=0.1, n_fix=p.n_fixed, sfu=sfu,
                       sfupar=-4.0)
    n_i = np.array(x.rx2("n.I"), float)
    en = np.array(x.rx2("en"), float)
    assert p.design.inflation * p.n_fixed == pytest.approx(n_i[-1], rel=1e-6)
    assert p.max_n == int(np.ceil(n_i[-1] - 1e-9))
    np.testing.assert_allclose([p.expected_n_h0, p.expected_n_h1], en, rtol=1e-6)


@pytest.mark.needs_r
@pytest.mark.parametrize("tt,look,z", [(1, 1, 1.2), (2, 2, 0.4), (4, 1, 0.8), (2, 3, -0.5)])
def test_conditional_power_matches_gscp(tt, look, z):
    from effstats import rbridge

    gs = rbridge.r_package("gsDesign")
    a = 0.025 if tt != 2 else 0.025
    d = design(4, a * (2 if tt == 2 else 1), test_type=tt, spending="ld_obf" if tt != 4 else "hsd",
               spending_param=None if tt != 4 else -4)
    kw = dict(k=4, test_type=tt, alpha=a, beta=0.1, sfu=gs.sfLDOF if tt != 4 else gs.sfHSD, sfupar=-4.0)
    x = rbridge.r_call(gs.gsDesign, **kw)
    cp = rbridge.r_call(gs.gsCP, x, i=look, zi=z)
    want = np.array(cp.rx2("upper").rx2("prob"), float).reshape(-1, 3, order="F").sum(0)
    got = conditional_power(d, look, z)
    np.testing.assert_allclose(got, want, atol=1e-6)


@pytest.mark.parametrize("kw", [dict(disagreement=0.1), dict(sd=0.3), dict(disagreement=0.05, n_models=10),
                                dict(sd=[0.3, 0.25], n_datasets=2, spending="pocock", looks=3)])
def test_detectable_effect_inverts_plan(kw):
    e = detectable_effect(2000, **kw)
    p = plan(e, **kw)
    assert p.design.inflation * p.n_fixed == pytest.approx(2000, rel=1e-9)
    assert p.max_n == 2000


def test_detectable_effect_bad_input():
    with pytest.raises(ValueError, match="^sd"):
        detectable_effect(1000)
    with pytest.raises(ValueError, match="^items_available"):
        detectable_effect(0, sd=0.3)
    with pytest.raises(ValueError, match="^disagreement"):
        detectable_effect(1000, disagreement=1.5)


@pytest.mark.parametrize("call", [lambda: plan(half_width=0.02, disagreement=1.0, n_models=1, looks=3),
                                  lambda: plan(0.02, disagreement=0.1, n_models=1),
                                  lambda: detectable_effect(2000, disagreement=0.1, n_models=1)])
def test_disagreement_of_one_model_is_refused(call):
    with pytest.raises(ValueError, match=r"^disagreement: .* needs n_models >= 2; for one model pass accuracy= or sd="):
        call()


def test_accuracy_of_two_models_plans_the_paired_difference():
    """"2 models at ~90 % accuracy, detect 1 point with power 0.8, at most 5 looks": the paired difference's variance
    is disagreement - effect**2, at most 2 min(p, 1 - p) - effect**2 = 0.1999, not one model's p (1 - p) = 0.09.
    Monte Carlo (4,000 runs, plug-in sd as an evaluator uses): power >= 0.8 - 3 s.e. at the worst case and above it
    with independent errors."""
    p = plan(0.01, accuracy=0.9, power=0.8, looks=5)
    assert p.sd == pytest.approx(np.sqrt(0.2 - 0.01**2))
    assert p.max_n == plan(0.01, disagreement=0.2, power=0.8, looks=5).max_n == 16078
    one = plan(0.01, accuracy=0.9, power=0.8, looks=5, n_models=1)
    assert one.sd == pytest.approx(0.3) and one.max_n < p.max_n
    rng = np.random.default_rng(11)
    n_sim = 4000
    incr = np.diff(np.r_[0, p.looks])
    for q, floor in [(0.2, 0.8 - 3 * np.sqrt(0.16 / n_sim)), (2 * 0.9 * 0.1, 0.8 + 0.02)]:
        counts = rng.multinomial(incr[None, :].repeat(n_sim, 0), [(q + 0.01) / 2, (q - 0.01) / 2, 1 - q])
        cp, cm = counts[..., 0].cumsum(1), counts[..., 1].cumsum(1)
        mean = (cp - cm) / p.looks
        z = mean * np.sqrt(p.looks) / np.sqrt((cp + cm) / p.looks - mean**2)
        cross = np.abs(z) >= p.design.upper
        first = np.where(cross.any(1), cross.argmax(1), p.k - 1)
        power = np.mean(cross.any(1) & (z[np.arange(n_sim), first] > 0))
        assert power >= floor, (q, power)
    # two models of accuracy 0.99 disagree on at most 2 min(p, 1 - p) = 0.02 of the items
    assert plan(0.019, accuracy=0.99).sd == pytest.approx(np.sqrt(0.02 - 0.019**2))
    for effect in (0.021, 0.05):
        with pytest.raises(ValueError, match="^accuracy"):
            plan(effect, accuracy=0.99)


@pytest.mark.parametrize("n_models", [1, 2, 5])
def test_detectable_effect_takes_accuracy_like_plan(n_models):
    """detectable_effect accepts accuracy (it did not: TypeError) with plan's meaning, and inverts plan."""
    e = detectable_effect(3000, accuracy=0.85, n_models=n_models)
    p = plan(e, accuracy=0.85, n_models=n_models)
    assert p.design.inflation * p.n_fixed == pytest.approx(3000, rel=1e-9)
    with pytest.raises(ValueError, match="^sd: give exactly one"):
        detectable_effect(3000, accuracy=0.85, sd=0.3)


def test_plan_warns_when_the_first_look_is_too_small_for_the_normal_approximation():
    """plan(0.5, disagreement=0.9, looks=3) puts looks at 10 / 19 / 28 items; by Monte Carlo (40,000 runs, plug-in
    variance) the two-sided type-I error is 0.083 there, 0.072 with looks at 8..38 (nominal 0.05): a warning says so.
    A plan whose first look has >= 30 items does not warn."""
    with pytest.warns(UserWarning, match="^looks: the first look has only 10 items"):
        p = plan(0.5, disagreement=0.9, looks=3)
    assert p.looks.tolist() == [10, 19, 28]
    rng = np.random.default_rng(2)
    n_sim, q = 20000, 0.9
    incr = np.diff(np.r_[0, p.looks])
    c = rng.multinomial(incr[None, :].repeat(n_sim, 0), [q / 2, q / 2, 1 - q])
    cp, cm = c[..., 0].cumsum(1), c[..., 1].cumsum(1)
    m = (cp - cm) / p.looks
    with np.errstate(divide="ignore", invalid="ignore"):  # all disagreements one way: plug-in variance 0, |z| inf
        z = m * np.sqrt(p.looks) / np.sqrt((cp + cm) / p.looks - m**2)
    type1 = np.mean((np.abs(z) >= p.design.upper).any(1))
    assert type1 > 0.05 + 3 * np.sqrt(0.05 * 0.95 / n_sim)  # the anti-conservatism the warning reports
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plan(0.02, disagreement=0.1, looks=5)


def test_one_model_plan_uses_the_alternative_variance_and_a_continuity_correction():
    """Near the ceiling the variance at the alternative (towards 1/2) exceeds the null's and the test is the exact
    binomial one: n = ((z_a sd0 + z_b sd1) / effect)^2, then Fleiss' n / 4 (1 + sqrt(1 + 2 / (n effect)))^2.
    Monte Carlo power for a planned 0.8: at least 0.8 - 3 s.e. with 2 looks; with 10 looks each look's exact test
    is discrete and the power falls a little short (floor 0.72)."""
    from effstats.sequential import SequentialEvaluator, Efficacy
    from effstats.sequential.validation import SCHEDULES, simulate_iid

    p0, eff = 0.98, 0.01
    za, zb = norm.isf(0.025), norm.isf(0.2)
    n = ((za * np.sqrt(p0 * (1 - p0)) + zb * np.sqrt((p0 - eff) * (1 - p0 + eff))) / eff) ** 2
    n = n / 4 * (1 + np.sqrt(1 + 2 / (n * eff))) ** 2
    pl = plan(eff, accuracy=p0, n_models=1, power=0.8, looks=3)
    assert pl.n_fixed == pytest.approx(n, rel=1e-12)
    assert pl.max_n == int(np.ceil(pl.design.inflation * n))
    assert plan(0.1, accuracy=0.5, n_models=1, looks=2).sd == pytest.approx(0.5)  # alternatives 0.4 and 0.6
    for effect in (0.5, 0.6):  # no alternative accuracy in (0, 1)
        with pytest.raises(ValueError, match="^effect"):
            plan(effect, accuracy=0.5, n_models=1)
    n_runs = 3000
    for looks, p, floor in [(2, 0.98, 0.8 - 3 * np.sqrt(0.16 / n_runs) - 0.01), (10, 0.995, 0.72)]:
        sizes, initial, batch = SCHEDULES[looks]
        e = detectable_effect(sizes[0], accuracy=p, power=0.8, looks=looks, spending="ld_pocock", n_models=1)
        ev = SequentialEvaluator([Efficacy()], null=p, initial=initial, batch=batch)
        r = simulate_iid(ev, [1 - p + e, p - e], sizes=sizes, n_runs=n_runs, rng=5)
        assert np.mean(r["reason"] == "efficacy") >= floor, (looks, p)


def test_precision_plan_reaches_its_half_width_in_about_half_of_the_runs():
    """A one-model plan for +-0.02 at accuracy 0.8 (ld_obf, 5 looks) plans for the Clopper-Pearson interval, which is
    wider than c sd / sqrt(n): the median final half-width is the target (about half of the runs below it)."""
    from effstats.sequential import Precision, SequentialEvaluator

    p = plan(half_width=0.02, accuracy=0.8, n_models=1, looks=5)
    step = int(np.ceil(p.max_n / 5))
    ev = SequentialEvaluator([Precision(0.02)], spending="ld_obf", initial=step, batch=step)
    g = np.random.default_rng(1)
    hw, met = [], []
    for _ in range(200):
        res = ev.fit((g.random(p.max_n) < 0.8).astype(float), shuffle=False)
        hw.append((res.ci_high - res.ci_low) / 2)
        met.append(res.reason == "precision")
    assert 0.35 <= np.mean(met) <= 0.7, np.mean(met)
    assert abs(np.median(hw) - 0.02) < 0.0004, np.median(hw)


def test_one_model_power_at_available_uses_the_formula_that_sized_the_plan():
    # power_at_available is the sizing formula (alternative variance, continuity correction) solved for the power,
    # so it agrees with feasibility: below the target wherever max_n exceeds the items available
    kw = dict(effect=0.01, accuracy=0.98, n_models=1, power=0.8, looks=10, spending="ld_pocock")
    p = plan(**kw)
    at_max = plan(**kw, items_available=p.max_n)
    assert at_max.feasible and at_max.power_at_available == pytest.approx(0.8, abs=2e-3)
    short = plan(**kw, items_available=2000)
    assert not short.feasible and short.power_at_available < 0.8
    assert plan(**kw, items_available=10**7).power_at_available > 0.999


def test_one_model_power_at_few_items_is_the_level_and_extreme_skew_warns():
    # below the smallest n the sizing formula describes, its normal power tends to a constant (0.25 at accuracy
    # 0.001, where Monte Carlo gives 0.011 with 2 items): power_at_available is then the test's level
    kw = dict(effect=0.01, accuracy=0.98, n_models=1, power=0.8, looks=10, spending="ld_pocock")
    assert plan(**kw, items_available=1).power_at_available == 0.025
    powers = [plan(**kw, items_available=n).power_at_available for n in (1, 200, 500, 1000, 2000, 4000)]
    assert powers == sorted(powers)
    with pytest.warns(UserWarning, match="^accuracy: fewer than 5 expected successes"):
        plan(0.005, accuracy=0.001, n_models=1, sided=1, looks=1, power=0.8)
