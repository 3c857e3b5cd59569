"""Edges of the sequential package on finite benchmarks and extreme designs.

* ``fpc=True`` at a look that uses up the benchmark: the estimate is the benchmark's score, so the decision must be
  exact (reject iff the score differs from the value tested beyond rounding) -- checked through the public
  ``simulate`` / ``fit`` against the benchmark's own score (Monte Carlo, 3 s.e.).
* Beta-spending designs (test types 3 / 4): the futility bound spends the requested beta at every look (1e-6,
  gsDesign's tolerance) or the design is refused naming the argument, over a seeded random grid; where gsDesign
  also gives the design, the bounds agree with it (live, ``needs_r`` marker).
* ``plan`` with every disagreement one way (``disagreement == |effect|``), checked by Monte Carlo power.
* Inference after a stop on a non-binding futility bound: rpact returns NA there; a message says what to do, and
  ``binding_futility=True`` reproduces rpact's binding-futility analysis (live, ``needs_r`` marker).
"""
from __future__ import annotations

import numpy as np
import pytest

from effstats.sequential import (Efficacy, Precision, SequentialEvaluator, Threshold, design, plan,
                                 stagewise_inference)
from effstats.sequential.native import gsprob
from effstats.sequential.validation import simulate_iid

N_RUNS = 4000


def _se(p: float, n: int = N_RUNS) -> float:
    return float(np.sqrt(p * (1 - p) / n))


# ------------------------------------------------------------------------------------------ fpc at the last look
def test_continuous_scores_with_fpc_keep_alpha_and_coverage():
    # 500 continuous scores, looks at 100..500 items, the last the whole benchmark; null = its own score
    s = np.random.default_rng(9).beta(2, 5, 500)
    ev = SequentialEvaluator([Efficacy()], null=s.mean(), fpc=True, initial=100, batch=100)
    r = ev.simulate(s, n_runs=N_RUNS, rng=1)
    rej = r.reason == "efficacy"
    assert rej.mean() <= 0.05 + 3 * _se(0.05), rej.mean()
    cover = np.mean((r.ci_low <= s.mean()) & (r.ci_high >= s.mean()))
    assert cover >= 0.95 - 3 * _se(0.05), cover
    assert not (rej & (r.n == 500)).any()  # the exact look never rejects a true null
    assert np.isfinite(r.z).all()
    # a seeded order: under the null an unseeded one stops early (and rightly rejects) in about alpha of the fits
    f = ev.set_params(rng=0).fit(s)
    assert f.decision == "no decision" and f.n == 500 and f.z == 0.0
    assert f.ci_low <= s.mean() <= f.ci_high and f.ci_high - f.ci_low <= 2.1e-12


@pytest.mark.parametrize("offset,decision", [(1e-6, "less"), (-1e-6, "greater"), (3e-16, "no decision")])
def test_exact_look_decides_on_the_benchmark_score(offset, decision):
    # in the given order the first 400 items say nothing; the whole benchmark decides, exactly
    s = np.random.default_rng(4).beta(2, 5, 500)
    ev = SequentialEvaluator([Efficacy()], null=float(s.mean() + offset), fpc=True, initial=100, batch=100)
    f = ev.fit(s, shuffle=False)
    assert f.trace["z"].iloc[:-1].abs().max() < f.trace["bound"].iloc[:-1].min()  # no earlier stop
    assert f.n == 500 and f.decision == decision


def test_exact_look_of_a_pair_and_of_two_arms_is_exact():
    g = np.random.default_rng(5)
    a, b = g.beta(2, 5, 400), g.beta(2, 5, 400)
    truth = float(np.mean(a - b))
    for kw in (dict(paired=True), dict(paired=False)):
        t = truth if kw["paired"] else float(a.mean() - b.mean())
        ev = SequentialEvaluator([Precision(1e-6)], null=t, fpc=True, initial=100, batch=100, rng=0)
        f = ev.fit(a, b, **kw)
        assert f.n == 400 and f.reason == "precision" and f.z == 0.0
        assert f.ci_low <= t <= f.ci_high and f.ci_high - f.ci_low < 1e-9


@pytest.mark.parametrize("scores", ["binary", "continuous"])
@pytest.mark.parametrize("fpc", [True, False])
def test_threshold_and_precision_on_a_finite_benchmark(scores, fpc):
    g = np.random.default_rng(11)
    x = g.beta(2, 5, 500)
    if scores == "binary":
        x = (g.random(500) < x).astype(float)
    tau = float(x.mean())
    n = 2000
    r = SequentialEvaluator([Threshold(tau, "both")], fpc=fpc, initial=100, batch=100).simulate(x, n_runs=n, rng=2)
    assert np.mean(r.reason == "threshold") <= 0.05 + 3 * _se(0.05, n)
    r = SequentialEvaluator([Precision(0.03)], fpc=fpc, initial=100, batch=100).simulate(x, n_runs=n, rng=3)
    assert np.mean((r.ci_low <= tau) & (r.ci_high >= tau)) >= 0.95 - 3 * _se(0.05, n)


def test_one_sided_threshold_on_a_binary_benchmark_with_fpc():
    # only the count of correct items matters for binary scores: 142 of 500 (the validation grid's benchmark);
    # late in the benchmark the count is hypergeometric with the opposite skew of any binomial, so only the exact
    # hypergeometric test holds here. Monte-Carlo tolerance: 3 s.e. of 0.05 at 20,000 runs, 0.0046
    x = np.r_[np.ones(142), np.zeros(358)]
    n = 20_000
    for direction in ("below", "above", "both"):
        r = SequentialEvaluator([Threshold(0.284, direction)], fpc=True, initial=100, batch=100).simulate(
            x, n_runs=n, rng=5)
        assert np.mean(r.reason == "threshold") <= 0.05 + 3 * _se(0.05, n), direction
        if direction == "both":  # the two-sided repeated CI at the stop covers the benchmark's score
            assert np.mean((r.rci_low <= 0.284) & (r.rci_high >= 0.284)) >= 0.95 - 3 * _se(0.05, n)


@pytest.mark.xfail(strict=True, reason="open: with several datasets the binary fpc statistic is the effective-binomial "
                   "approximation, whose skew is wrong once datasets are nearly used up; near the floor 'below' is "
                   "claimed in 0.077 of 8,000 runs (3 + 5 correct of 500 + 500 items)")
def test_one_sided_threshold_near_the_floor_of_two_binary_datasets_with_fpc():
    x = np.r_[np.ones(3), np.zeros(497), np.ones(5), np.zeros(495)]
    groups = np.repeat([0, 1], 500)
    n = 8000
    r = SequentialEvaluator([Threshold(0.008, "below")], fpc=True, initial=100, batch=100).simulate(
        x, groups=groups, n_runs=n, rng=1)
    assert np.mean(r.reason == "threshold") <= 0.05 + 3 * _se(0.05, n)  # 3 MC s.e. at 8,000 runs: 0.0073


def _exact_claim_probability(count: int, size: int, direction: str) -> float:
    """P(Threshold(count / size, direction) claims) over every random order of a binary benchmark, exactly.

    The evaluator's decision at a look depends on the number of correct items drawn so far only, whose law look
    by look is a chain of hypergeometric draws: the probability of a claim is summed over that chain (no Monte
    Carlo). The bounds are the evaluator's, read from the trace of an order whose every look is near the score.
    """
    from scipy.stats import hypergeom

    from effstats.sequential.statistics import Accumulator

    tau = count / size
    ev = SequentialEvaluator([Threshold(tau, direction)], fpc=True, initial=100, batch=100)
    spread = np.diff(np.floor(np.arange(size + 1) * count / size))  # each prefix within one item of the score
    trace = ev.fit(spread, shuffle=False).trace
    assert trace.index[-1] == len(trace) and trace["n"].iloc[-1] == size  # no stop: every look's bound is there
    xs = np.arange(count + 1, dtype=float)
    prob = np.zeros(count + 1)
    prob[0] = 1.0
    claimed, prev = 0.0, 0
    for n, c1, c2 in trace[["n", "bound_one_sided", "bound"]].itertuples(index=False):
        step = n - prev  # items drawn at this look, from size - prev left of which count - x are correct
        # scipy's log-pmf (its log-beta formula, vectorised) rather than its pmf (a Boost call per cell, 40 times
        # slower on these matrices): the same law to 1e-12
        moves = np.exp(hypergeom.logpmf(xs[None, :] - xs[:, None], size - prev, count - xs[:, None], step))
        prob = prob @ np.nan_to_num(moves)
        prev = n
        acc = Accumulator("single", fpc=True)
        acc.add(xs, xs, xs, float(n), float(size))
        z = acc.finish().z_at(tau)
        fires = {"below": z <= -c1, "above": z >= c1, "both": np.abs(z) >= c2}[direction]
        claimed += prob[fires].sum()
        prob[fires] = 0.0
    return float(claimed)


@pytest.mark.parametrize("direction", ["below", "above", "both"])
def test_exact_size_of_threshold_claims_on_a_binary_benchmark_with_fpc(direction):
    # every benchmark score from the floor to the ceiling of a 500-item benchmark (5 looks, the last exact): the
    # probability of a false claim over all random orders is at most alpha, computed exactly
    sizes = [_exact_claim_probability(k, 500, direction) for k in (3, 17, 59, 142, 250, 383, 441, 497)]
    assert max(sizes) <= 0.05, sizes
    assert min(sizes[2:6]) > 0.03  # away from the floor and the ceiling the test uses most of alpha


def test_hypergeometric_interval_is_the_set_its_exact_tests_keep():
    # brute force over every benchmark score K / N: the interval holds exactly the K that neither one-sided exact
    # hypergeometric test rejects, and z_at is that test (scipy's hypergeometric tails)
    from scipy.special import ndtr, ndtri
    from scipy.stats import hypergeom

    from effstats.sequential.statistics import BinomialStatistic

    N, c = 200, 2.2
    a = float(ndtr(-c))  # the one-sided level of the bound c
    for n in (20, 100, 170):
        x = np.arange(n + 1, dtype=float)
        st = BinomialStatistic(x / n, 0.0, n * (N - 1) / (N - n), population=N, count=n)
        low, high = st.interval(c)
        k = np.arange(N + 1)
        up = hypergeom.sf(x[:, None] - 1, N, k[None, :], n)  # P(X >= x | K)
        down = hypergeom.cdf(x[:, None], N, k[None, :], n)  # P(X <= x | K)
        kept = (up > a) & (down > a)
        np.testing.assert_allclose(low * N, [k[r].min() for r in kept])
        np.testing.assert_allclose(high * N, [k[r].max() for r in kept])
        i = n // 3
        z = st.take(i).z_at(k[1:-1] / N)
        up, down = np.clip(up, 1e-300, 1), np.clip(down, 1e-300, 1)  # a p-value of 0 is z = 37, as everywhere
        expect = np.where(up[i, 1:-1] < 0.5, -ndtri(up[i, 1:-1]),
                          np.where(down[i, 1:-1] < 0.5, ndtri(down[i, 1:-1]), 0.0))
        np.testing.assert_allclose(z, expect, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("size", [7, 500, 10_000])
def test_hypergeometric_tails_match_scipy(size):
    # the tails summed from x outwards against scipy's, at random (K, n, x) including x outside the support
    from scipy.stats import hypergeom

    from effstats._hypergeometric import _hyp_tail

    g = np.random.default_rng(size)
    K, n = g.integers(0, size + 1, 500).astype(float), g.integers(1, size + 1, 500).astype(float)
    lo, hi = np.maximum(0, n - (size - K)), np.minimum(n, K)
    x = np.floor(lo - 1 + g.random(500) * (hi - lo + 3))
    np.testing.assert_allclose(_hyp_tail(x, size, K, n, lower=True), hypergeom.cdf(x, size, K, n), rtol=1e-9,
                               atol=1e-300)
    np.testing.assert_allclose(_hyp_tail(x, size, K, n, lower=False), hypergeom.sf(x - 1, size, K, n), rtol=1e-9,
                               atol=1e-300)


def _plain_hypergeometric_limits(x, size, n, a):
    """``(K_low, K_high)`` by bisection over the whole range ``x <= K <= size - n + x`` of each row, on the exact
    tails (:func:`effstats._hypergeometric._hyp_tail`)."""
    from effstats._hypergeometric import _hyp_tail

    out = []
    for lower in (False, True):  # K_low on the upper tail, K_high on the lower
        lo, hi = x.copy(), size - n + x
        kept, other = (hi, lo) if not lower else (lo, hi)
        done = _hyp_tail(x, size, other, n, lower) > a  # the range's far end is not rejected
        kept = np.where(done, other, kept)
        while (np.abs(kept - other) > 1).any():
            gap = np.abs(kept - other) > 1
            mid = np.floor((kept + other) / 2)
            ok = _hyp_tail(x, size, mid, n, lower) > a
            kept, other = np.where(gap & ok, mid, kept), np.where(gap & ~ok, mid, other)
        out.append(kept)
    return np.array(out)


def test_hypergeometric_limits_of_a_few_rows_and_of_many_are_the_plain_bisections():
    # the bisection starts from a bracket around Clopper-Pearson's limit at the corrected size and takes the rows
    # still open only: the same exact limits as a plain bisection over the whole range, at every size, count and
    # level, for a look's few rows and for a simulation's many
    from effstats._hypergeometric import _hyp_limits

    g = np.random.default_rng(4)
    for size in (3, 40, 700, 20_000):
        n = g.integers(1, size + 1, 300).astype(float)
        x = np.floor(g.random(300) * (n + 1))
        a = g.choice([1e-6, 0.005, 0.025, 0.05, 0.2, 0.5], 300)
        plain = _plain_hypergeometric_limits(x, np.full(300, float(size)), n, a)
        many = _hyp_limits(x, np.full(300, float(size)), n, a)
        few = np.array([_hyp_limits(x[i:i + 3], np.full(3, float(size)), n[i:i + 3], a[i:i + 3])
                        for i in range(0, 300, 3)])  # (100, 2, 3)
        np.testing.assert_array_equal(np.array(many), plain)
        np.testing.assert_array_equal(few.transpose(1, 0, 2).reshape(2, -1), plain)


def test_validation_grid_has_finite_benchmark_cells_that_hold(monkeypatch):
    """The fast grid's finite-benchmark cells at a second seed (test_validation_grid_fast_subset_holds_everywhere
    checks every cell at rng=1). They come after the i.i.d. cells and draw their seeds from the same counter, which
    the grid advances in its own loop (the caller's ``next(seeds)``): the i.i.d. and ranking simulations, whose rows
    this test does not read, are stood in for, so each finite cell gets the seed, runs and value of the whole
    grid's."""
    from types import SimpleNamespace

    from effstats.sequential import validation

    seeds = []

    def iid_stand_in(evaluator, probs, *, sizes, n_runs, rng, kind="single", all_looks=False):
        seeds.append(rng)
        no = np.zeros(1)
        return dict(reason=np.array(["max_n"]), ci_low=no, ci_high=no, stats=SimpleNamespace(ci_low=no[:, None],
                                                                                                ci_high=no[:, None]))

    def ranking_stand_in(acc, looks, n_models, n_runs, rng, alpha, correction):
        seeds.append(rng)
        return 0.0

    monkeypatch.setattr(validation, "simulate_iid", iid_stand_in)
    monkeypatch.setattr(validation, "_ranking_fwer", ranking_stand_in)
    tab = validation.validation_grid(fast=True, n_runs=500, rng=3)
    assert seeds == list(range(3 * 1_000_003 + 1, 3 * 1_000_003 + 1 + len(seeds))) and len(seeds) > 50
    fin = tab[tab["data"].str.startswith("benchmark of")]
    assert len(fin) == 12 and set(fin["rule"]) == {"efficacy two-sided", "threshold both", "precision (0.03)"}
    assert {"fpc=True", "fpc=False"} == {d.rsplit(", ", 1)[1] for d in fin["data"]}
    assert fin["holds"].all(), fin.to_string()


def test_hundreds_of_looks_with_fpc_spend_alpha_stop_and_cover():
    # a look every 100 of 50,000 items: with fpc the information n / (1 - n / N) gives 499 finite looks that each
    # add a similar share of it, and the grid's mass error must not compound over them
    N = 50_000
    n = np.arange(100, N, 100.0)
    info = n / (1 - n / N)
    d = design(alpha=0.05, sided=1, information=info, max_information=info[-1], spending="ld_pocock")
    assert np.isfinite(d.upper).all() and (np.diff(d.upper[-50:]) < 0).all()
    spent = float(gsprob(0.0, info, np.full(info.size, -20.0), d.upper, 80)["powr"][0])  # on the finest grid
    assert abs(spent - 0.05) < 1e-6, spent
    x = (np.random.default_rng(12).random(N) < 0.8).astype(float)
    sim = SequentialEvaluator([Precision(0.02)], fpc=True).simulate(x, n_runs=40, rng=3)
    assert (sim.reason == "precision").all() and sim.n.max() <= 2500
    assert np.mean((sim.ci_low <= x.mean()) & (sim.ci_high >= x.mean())) >= 0.95 - 3 * _se(0.05, 40)
    sim = SequentialEvaluator([Efficacy()], null=0.79, fpc=True).simulate(x, n_runs=400, rng=4)
    assert (sim.decision == "greater").all()
    assert np.mean((sim.rci_low <= x.mean()) & (sim.rci_high >= x.mean())) >= 0.95 - 3 * _se(0.05, 400)


# ------------------------------------------------------------------------------------------ beta spending
# beta spending on uneven looks, two of them 1 % of the information apart
UNEVEN_BETA_DESIGN = dict(k=5, alpha=0.00103, beta=0.101, test_type=4, spending="power", spending_param=2.178,
                          timing=[0.2046, 0.4604, 0.9605, 0.9702, 1.0], lower_spending="hsd", lower_param=-2.627)


def _beta_grid(n: int, seed: int = 2023) -> list[dict]:
    """Random beta-spending designs: 2-6 looks with uneven spacing (some looks close together), any families."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        k = int(rng.integers(2, 7))
        t = np.round(np.cumsum(rng.dirichlet(np.full(k, 0.6))), 4)
        t[-1] = 1.0
        if np.any(np.diff(np.concatenate(([0.0], t))) < 1e-3):
            continue
        fam = [str(f) for f in rng.choice(["ld_obf", "ld_pocock", "hsd", "power"], 2)]
        par = [{"hsd": round(float(rng.uniform(-5, 2)), 3), "power": round(float(rng.uniform(1, 4)), 3)}.get(f)
               for f in fam]
        out.append(dict(k=k, alpha=round(float(10 ** rng.uniform(-3, np.log10(0.05))), 5),
                        beta=round(float(rng.uniform(0.05, 0.3)), 3), test_type=int(rng.choice([3, 4])),
                        spending=fam[0], spending_param=par[0], lower_spending=fam[1], lower_param=par[1],
                        timing=t.tolist()))
    return out


def test_uneven_beta_design_spends_its_beta_at_every_look():
    d = design(**UNEVEN_BETA_DESIGN)
    target = d.lower_spending(UNEVEN_BETA_DESIGN["beta"], d.timing)
    np.testing.assert_allclose(d.beta_spent, target, rtol=0, atol=1e-6)
    assert d.beta_spent[3] - d.beta_spent[2] > 0.0025  # look 4's share, 0.00253
    assert np.all(d.lower <= d.upper)


def test_uneven_beta_design_on_the_coarse_grid_is_refused_naming_the_argument():
    # r=18 integrates the look after a 1 % step with a mass error of 2.5e-6 (> tol): refused, not silently off
    with pytest.raises(ValueError, match=r"^lower_spending: .*look 5.*larger r"):
        design(**UNEVEN_BETA_DESIGN, r=18)


def test_random_beta_spending_designs_spend_beta_or_are_refused():
    met = 0
    for kw in _beta_grid(120):
        try:
            d = design(**kw)
        except (ValueError, RuntimeError) as e:
            assert str(e).split(":")[0] in {"lower_spending", "information", "design"}, (kw, str(e))
            continue
        target = d.lower_spending(kw["beta"], d.timing)
        dev = np.abs(d.beta_spent - target).max()
        assert dev <= 1e-6, (kw, d.beta_spent, target)
        met += 1
    assert met >= 100  # most designs are met: the check is not passed by refusing


@pytest.mark.needs_r
def test_random_beta_spending_designs_match_gsdesign_where_it_gives_them():
    from effstats.rbridge import RError

    compared = 0
    for kw in _beta_grid(40, seed=7):
        try:
            n = design(**kw)
        except (ValueError, RuntimeError):
            continue
        if n.r != 18:  # a finer grid than gsDesign's: met where gsDesign refuses, or off its numbers by its error
            continue
        try:
            g = design(**kw, backend="gsdesign")
            g_spent = g.beta_spent
        except RError:
            continue
        np.testing.assert_allclose(n.upper, g.upper, atol=1e-6)
        np.testing.assert_allclose(n.lower, g.lower, atol=1e-6)
        np.testing.assert_allclose(n.beta_spent, g_spent, atol=1e-6)
        compared += 1
    assert compared >= 10


@pytest.mark.needs_r
def test_gsdesign_refuses_the_uneven_beta_design():
    from effstats.rbridge import RError

    with pytest.raises(RError, match="False negative rates not achieved"):
        design(**UNEVEN_BETA_DESIGN, backend="gsdesign").beta_spent


# ------------------------------------------------------------------------------------------ plan
def test_plan_accepts_every_disagreement_one_way_and_is_conservative_there():
    p = plan(0.005, disagreement=0.005)
    assert p.sd == pytest.approx(np.sqrt(0.005 - 0.005**2))
    assert plan(0.005, disagreement=0.005 * (1 - 1e-12)).max_n == p.max_n  # rounding of a computed rate
    with pytest.raises(ValueError, match="^disagreement: must be at least"):
        plan(0.005, disagreement=0.004)
    # Monte Carlo: paired items where A beats B on 0.5 % and never loses, run on the planned looks
    n = 20_000
    ev = SequentialEvaluator([Efficacy()], spending="ld_obf", initial=int(p.looks[0]),
                             batch=int(p.looks[1] - p.looks[0]))
    r = simulate_iid(ev, [0.0, 0.995, 0.005], sizes=(p.max_n,), kind="paired", n_runs=n, rng=1)
    power = np.mean(r["reason"] == "efficacy")
    assert power >= 0.9 - 3 * _se(0.9, n), power  # the promise holds (0.98: conservative, as documented)
    assert np.all(r["decision"][r["reason"] == "efficacy"] == "greater")


# ------------------------------------------------------------------------------------------ futility stops
def _nonbinding():
    return design(3, 0.025, beta=0.1, test_type=4, spending="ld_obf", timing=[0.3, 0.6, 1])


def test_nonbinding_futility_stop_says_what_to_do():
    d = _nonbinding()
    z = [0.3, d.lower[1] - 0.1]
    with pytest.raises(ValueError, match="^z: .*non-binding futility bound.*binding_futility=True"):
        stagewise_inference(d, z=z)
    with pytest.raises(ValueError, match="non-binding futility bound"):
        stagewise_inference(d, z=z[1], look=2)
    # a path that runs on past the bound (it is non-binding) and stops for efficacy has its inference
    assert stagewise_inference(d, z=[d.lower[0] - 0.1, d.upper[1] + 0.1]).reason == "efficacy"


def test_binding_futility_true_is_the_ordering_with_the_lower_bound_binding():
    d = _nonbinding()
    z = [0.3, d.lower[1] - 0.1]
    res = stagewise_inference(d, z=z, binding_futility=True)
    ref = stagewise_inference(z=z, upper=d.upper, lower=d.lower, information=d.timing)
    assert res.reason == "futility" and res.look == 2
    assert res.pvalue == pytest.approx(ref.pvalue, abs=1e-12) and res.statistic == pytest.approx(ref.statistic)
    assert res.pvalue > 0.025  # not significant: the futility stop never rejects
    with pytest.raises(ValueError, match="^binding_futility"):
        stagewise_inference(design(3, 0.05), z=2.5, look=1, binding_futility=True)


@pytest.mark.needs_r
def test_futility_stop_against_rpact():
    """rpact 3.3.4: non-binding futility stop -> getFinalPValue NA ('final stage not reached'); the same data with
    bindingFutility = TRUE -> p-value, median-unbiased estimate and final CI equal to stagewise_inference with
    rpact's binding bounds and binding_futility."""
    import warnings

    import rpy2.robjects as ro

    from effstats import rbridge

    rp = rbridge.r_package("rpact")
    info, z = np.array([30.0, 60.0]), np.array([0.8, 0.2])
    data = rbridge.r_call(rp.getDataset, overallSampleSizes=ro.FloatVector(info),
                          overallMeans=ro.FloatVector(z / np.sqrt(info)), overallStDevs=ro.FloatVector([1.0, 1.0]))
    out = {}
    for binding in (False, True):
        d = rbridge.r_call(rp.getDesignGroupSequential, kMax=3, alpha=0.025, sided=1, typeOfDesign="asOF",
                           informationRates=ro.FloatVector([0.3, 0.6, 1.0]),
                           futilityBounds=ro.FloatVector([0.0, 0.5]), bindingFutility=binding)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sr = rbridge.r_call(rp.getStageResults, d, data, normalApproximation=True)
            p = float(rbridge.r_call(rp.getFinalPValue, sr).rx2("pFinal")[0])
            ci = rbridge.r_call(rp.getFinalConfidenceInterval, d, data, normalApproximation=True, tolerance=1e-10)
        crit = np.array(ro.r("function(d) d$criticalValues")(d), float)
        out[binding] = (crit, p, float(ci.rx2("medianUnbiased")[0]),
                        np.array(ci.rx2("finalConfidenceInterval"), float))
    assert np.isnan(out[False][1])  # rpact: no final p-value after a non-binding futility stop
    crit, p, mue, (lo, hi) = out[True]
    ours = design(3, 0.025, test_type=1, spending="ld_obf", timing=[0.3, 0.6, 1])
    np.testing.assert_allclose(ours.upper, out[False][0], atol=1e-6)  # the non-binding bounds are design()'s
    res = stagewise_inference(z=z, upper=crit, lower=[0.0, 0.5, -20.0], information=[30, 60, 100])
    assert res.reason == "futility"
    # unit standard deviations and information in items: theta is rpact's mean
    assert abs(res.pvalue - p) < 2e-7 and abs(res.statistic - mue) < 2e-6
    got = res.confidence_interval(0.95)
    assert abs(got.low - lo) < 2e-6 and abs(got.high - hi) < 2e-6


def test_paired_efficacy_with_fpc_keeps_alpha_when_few_discordant_items_are_left():
    """Two models of exactly equal score on 1,000 items, disagreeing on 20 (10 each way), looks of 5 items to a
    census with the finite-population correction: near the census the sample's difference is fixed up to the few
    discordant items left, and one of them must not decide (a quarter of an item's continuity correction rejected
    the true null in 0.127 of 2,000 runs)."""
    n = 1000
    a, b = np.zeros(n), np.zeros(n)
    a[:880] = b[:880] = 1.0
    a[880:890] = 1.0
    b[890:900] = 1.0
    assert a.mean() == b.mean()
    ev = SequentialEvaluator([Efficacy()], alpha=0.05, spending="ld_pocock", initial=5, batch=5, fpc=True)
    sim = ev.simulate(a, b, n_runs=1000, rng=11)
    assert (sim.reason == "efficacy").mean() <= 0.05
