"""Monte-Carlo validity of adaptive evaluation: type-I error, repeated-CI coverage and power.

Each test runs a few thousand complete sequential comparisons at once (vectorised) on paired
binary outcomes drawn from a large population whose true mean difference is known; the
evaluator samples without replacement, so with at most 2,000 of 400,000 items the runs are
practically i.i.d. Tolerance: 3 Monte-Carlo standard errors (plus 0.01 for power, where the
normal approximation with an estimated variance enters).
"""
from __future__ import annotations

import numpy as np
import pytest

from effstats.sequential import Efficacy, Precision, SequentialEvaluator
from effstats.sequential.native import gsprob
pytestmark = pytest.mark.slow  # Monte-Carlo type-I error, coverage and power

N_RUNS = 4000
POP = 400_000


def _population(p_up: float, p_down: float):
    """Paired outcomes of two models: +1 / -1 / 0 differences with exact proportions (a - b with a, b in {0, 1})."""
    n_up, n_down = int(POP * p_up), int(POP * p_down)
    a = np.concatenate([np.ones(n_up), np.zeros(n_down), np.ones(POP - n_up - n_down)])
    b = np.concatenate([np.zeros(n_up), np.ones(n_down), np.ones(POP - n_up - n_down)])
    return a, b


def _ev(spending, rules=None):
    return SequentialEvaluator(rules or [Efficacy()], alpha=0.05, spending=spending, initial=200, batch=200,
                               max_n=2000, rng=11)


def _se(p: float) -> float:
    return float(np.sqrt(p * (1 - p) / N_RUNS))


@pytest.mark.parametrize("spending", ["pocock", "obf", "ld_pocock", "ld_obf"])
def test_type_one_error_of_efficacy_stopping(spending):
    a, b = _population(0.15, 0.15)
    sim = _ev(spending).simulate(a, b, n_runs=N_RUNS)
    rej = np.mean(sim.reason == "efficacy")
    assert abs(rej - 0.05) < 3 * _se(0.05), rej
    # the repeated CI covers the true difference 0 at the stopping look
    cover = np.mean((sim.ci_low <= 0) & (sim.ci_high >= 0))
    assert cover >= 0.95 - 3 * _se(0.05)


def test_naive_peeking_inflates_type_one_error():
    # the same ten looks at the fixed-sample 1.96 reject far more often than 5%: why the bounds are needed
    a, b = _population(0.15, 0.15)
    ev = SequentialEvaluator([Precision(0.99)], initial=200, batch=200, max_n=2000)
    kind, arms = ev._arms(a, b, True, None, None)
    s, _, _ = ev._run(arms, kind, N_RUNS, np.random.default_rng(3), 0.0)
    naive = np.mean((np.abs(s.z) >= 1.96).any(1))
    adjusted = np.mean((np.abs(s.z) >= s.c2).any(1))
    assert naive > 0.15 and abs(adjusted - 0.05) < 3 * _se(0.05)


@pytest.mark.parametrize("spending", ["ld_pocock", "obf"])
def test_power_and_coverage_under_the_alternative(spending):
    p_up, p_down = 0.17, 0.13
    a, b = _population(p_up, p_down)
    ev = _ev(spending)
    sim = ev.simulate(a, b, n_runs=N_RUNS)
    diff = p_up - p_down
    sd = np.sqrt(p_up + p_down - diff**2)
    sched = ev._schedule(np.array([POP])).sum(1)
    t = sched / sched[-1]
    from effstats.sequential import design

    c2 = design(alpha=0.05, spending=spending, information=sched, max_information=sched[-1]).upper
    drift = diff / sd * np.sqrt(sched[-1])  # z at the full sample
    pr = gsprob(drift, t, -c2, c2)
    power = float(pr["probhi"].sum() + pr["problo"].sum())
    got = np.mean(sim.reason == "efficacy")
    assert abs(got - power) < 3 * _se(power) + 0.01, (got, power)
    cover = np.mean((sim.ci_low <= diff) & (sim.ci_high >= diff))
    assert cover >= 0.95 - 3 * _se(0.05)
    # early stopping saves items on average, as the design's expected sample size says
    en = float(pr["en"][0])
    assert abs(sim.fraction.mean() - en) < 0.03


def test_beta_spending_futility_spends_beta_and_keeps_alpha():
    from effstats.sequential import BetaSpendingFutility

    rules = [Efficacy("greater"), BetaSpendingFutility(effect=0.04, beta=0.1)]
    h0 = _ev("ld_pocock", rules).simulate(*_population(0.15, 0.15), n_runs=N_RUNS)
    h1 = _ev("ld_pocock", rules).simulate(*_population(0.17, 0.13), n_runs=N_RUNS)
    # non-binding futility can only lower the one-sided type-I error
    assert np.mean(h0.reason == "efficacy") <= 0.05 + 3 * _se(0.05)
    # under the planning alternative the lower bound is crossed with probability beta
    assert abs(np.mean(h1.reason == "futility") - 0.1) < 3 * _se(0.1) + 0.01
    # and under H0 most runs stop early for futility, saving items
    assert np.mean(h0.reason == "futility") > 0.8 and h0.fraction.mean() < 0.6


@pytest.mark.parametrize("sided", [1, 2])
def test_hundreds_of_looks_keep_alpha(sided):
    # 300 looks: the grid is refined automatically (r > 18) and the recursion stays mass-conserving
    from effstats.sequential import design

    n = np.arange(1, 301) * 100.0
    d = design(alpha=0.05, sided=sided, spending="ld_pocock", information=n)
    assert d.r > 18 and np.all(np.isfinite(d.upper))
    assert abs(d.alpha_spent[-1] - 0.05) < 1e-6
    rng = np.random.default_rng(7)
    z = np.cumsum(rng.normal(0, 10.0, (20_000, n.size)), 1) / np.sqrt(n)  # Brownian motion at the looks
    rej = np.mean(((np.abs(z) if sided == 2 else z) >= d.upper).any(1))
    se = np.sqrt(0.05 * 0.95 / 20_000)
    assert abs(rej - 0.05) < 3 * se + 0.002, rej  # the MC sees the same discrete looks


def test_validation_grid_fast_subset_holds_everywhere():
    # the FAST subset of effstats.sequential.validation: accuracies 0.5 / 0.98 / 0.995, disagreement 1 % / 30 %
    # (two- and one-directional), 10 and 73 looks, every rule; each cell within 3 MC s.e. of nominal or safer
    from effstats.sequential.validation import validation_grid, worst_cells

    tab = validation_grid(fast=True, n_runs=500, rng=1)
    assert len(tab) > 100 and set(tab["rule"]) >= {
        "efficacy two-sided", "efficacy one-sided", "threshold above", "threshold below", "threshold both",
        "equivalence (margin = true difference)", "precision (0.03)", "diminishing returns (0.002)",
        "futility + efficacy", "ranking (Holm, 4 equal models)", "repeated CI (every look)"}
    bad = tab[~tab["holds"]]
    assert bad.empty, bad.to_string()
    assert (worst_cells(tab)["excess_se"] <= 3).all()


@pytest.mark.parametrize("dis", [0.01, 0.02])
def test_paired_efficacy_keeps_alpha_with_rare_disagreement(dis):
    """A pair that disagrees on 1-2 % of 1,000 items (10-20 discordant items), two looks, one-sided: McNemar's normal
    test (the mid-p test) gave 0.0526 +- 0.0005 / 0.0530 in 200,000 runs; with a quarter of an item of continuity
    correction at 0 it is at most alpha (0.037 / 0.043 measured)."""
    from effstats.sequential.validation import simulate_iid

    n_runs = 150_000
    ev = SequentialEvaluator([Efficacy("greater")], initial=500, batch=500)
    r = simulate_iid(ev, [dis / 2, 1 - dis, dis / 2], sizes=(1000,), kind="paired", n_runs=n_runs, rng=3)
    rate = np.mean(r["reason"] == "efficacy")
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / n_runs), rate


def _mcnemar_sizes(lams, zs) -> np.ndarray:
    """Exact one-look sizes of the paired efficacy test at ``delta0 = 0`` when the number of discordant items is
    Poisson(``lam``) and each splits 1/2 : 1/2, computed through the package's own statistic (one dataset, n items):
    shape ``(len(zs), len(lams))``. Each count ``d`` of discordant items is summed up to ``lam + 12 sqrt(lam) + 25``;
    the statistic at every split of every count is computed at once."""
    from scipy.stats import binom, poisson

    from effstats.sequential.statistics import Accumulator

    n = 10**6
    ends = [int(lam + 12 * np.sqrt(lam) + 25) for lam in lams]  # d runs over range(1, end)
    counts = np.arange(1, max(ends))
    d = np.repeat(counts, counts + 1).astype(float)
    x = np.concatenate([np.arange(k + 1.0) for k in counts])  # n10; n01 = d - x
    acc = Accumulator("paired")
    acc.add(x - (d - x), d, d, np.full_like(x, n), n)
    z0 = acc.finish().z_at(0.0)
    split = binom.pmf(x, d, 0.5)
    out = np.zeros((len(zs), len(lams)))
    for i, z in enumerate(zs):
        # P(reject | d): the splits the test rejects, by count
        rejected = np.bincount(d.astype(int) - 1, weights=np.where(z0 >= z, split, 0.0), minlength=counts.size)
        for j, (lam, end) in enumerate(zip(lams, ends)):
            out[i, j] = (poisson.pmf(counts[:end - 1], lam) * rejected[:end - 1]).sum()
    return out


def test_quarter_item_correction_keeps_the_exact_size_below_alpha():
    """The calibration the statistic states: over expected discordant counts 0.5-400 and critical values 1.64-3.5
    the size is at most 0.98 alpha (the normal test without correction reaches 1.039 alpha at 10 and 1.061
    alpha at z = 1.96), and at 300 it costs less than 3 % of alpha."""
    from scipy.special import ndtr

    zs = np.array([1.6448536269514722, 1.959963984540054, 2.8, 3.5])
    ratios = _mcnemar_sizes(np.geomspace(0.5, 400, 25), zs) / ndtr(-zs)[:, None]
    assert ratios.max() <= 0.98, (zs[ratios.max(1).argmax()], ratios.max())
    assert _mcnemar_sizes([300.0], zs[:1])[0, 0] / ndtr(-zs[0]) > 0.97


def test_validation_command_describes_each_option(capsys):
    from effstats.sequential.validation import main

    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for option, words in (("--fast", "subset grid"), ("--n-runs N", "runs per cell"), ("--out CSV", "CSV file")):
        assert f"{option} " in out and words in out, (option, out)
