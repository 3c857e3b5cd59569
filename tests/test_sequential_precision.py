"""The precision rule (Chow & Robbins's fixed-width sequential interval) on finite Bernoulli benchmarks of realistic
sizes: coverage of the final 95 % interval, items against the fixed design at the true accuracy and the worst-case
fixed design (finite-population correction included), the exhaustive stop, and the workflow's projected batches.

Monte-Carlo tolerances are stated at each assertion (s.e. of a proportion ``sqrt(p (1 - p) / runs)``)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from effstats import ResponseMatrix
from effstats.sequential import Precision, SequentialEvaluator
from effstats.workflow import SequentialRun

pytestmark = pytest.mark.slow  # Monte-Carlo coverage and items, and workflow runs of a few seconds each

Z = norm.isf(0.025)


def _fixed_items(p: float, h: float, N: int) -> float:
    """Items of the fixed design for +-h at accuracy p on N items (normal interval, finite-population correction)."""
    n0 = Z**2 * p * (1 - p) / h**2
    return n0 * N / (N - 1 + n0)


def _benchmark(N: int, p: float) -> np.ndarray:
    k = int(round(p * N))
    return np.r_[np.ones(k), np.zeros(N - k)]


CASES = [(N, h, p) for N, h in [(1635, 0.03), (5000, 0.02), (10000, 0.02)] for p in (0.2, 0.5, 0.8, 0.95)]


@pytest.fixture(scope="module")
def simulated():
    out = {}
    for N, h, p in CASES:
        worst = int(np.ceil(_fixed_items(0.5, h, N)))
        ev = SequentialEvaluator([Precision(h)], fpc=True, initial=100, batch=100, max_n=worst)
        out[N, h, p] = ev.simulate(_benchmark(N, p), n_runs=1000, rng=1)
    return out


@pytest.mark.parametrize("N, h, p", CASES)
def test_coverage_and_items_against_the_fixed_designs(simulated, N, h, p):
    sim = simulated[N, h, p]
    truth = round(p * N) / N
    worst = int(np.ceil(_fixed_items(0.5, h, N)))
    # every run decides, within the worst-case fixed design (the last look is at its size)
    assert (sim.reason == "precision").all() and sim.n.max() <= worst
    assert ((sim.ci_high - sim.ci_low) / 2 <= h + 1e-12).all()
    # looks every 100 items: on average at most one batch past the fixed design at the true accuracy
    assert sim.n.mean() <= _fixed_items(truth, h, N) + 100
    # coverage: 1,000 runs, s.e. 0.007; a single case at least 0.95 - 3.5 s.e.
    cover = np.mean((sim.ci_low <= truth) & (truth <= sim.ci_high))
    assert cover >= 0.925, cover


def test_pooled_coverage_is_at_least_094(simulated):
    # 12,000 runs: s.e. 0.002 around the pooled coverage
    covered = [np.mean((s.ci_low <= round(p * N) / N) & (round(p * N) / N <= s.ci_high))
               for (N, h, p), s in simulated.items()]
    assert np.mean(covered) >= 0.94, covered


def test_without_the_correction_items_stay_near_the_fixed_design():
    # 10,000 items at accuracy 0.8, +-2 points, without the finite-population correction (a super-population's
    # score): the fixed design needs 1,537 items and the worst case 2,401, so with looks every 100 items no run goes
    # past 2,500 and on average at most one batch past 1,537 (a Pocock repeated interval took about 3,400)
    sim = SequentialEvaluator([Precision(0.02)], initial=100, batch=100).simulate(_benchmark(10_000, 0.8), n_runs=500,
                                                                                 rng=2)
    assert (sim.reason == "precision").all()
    assert sim.n.max() <= 2500 and sim.n.mean() <= Z**2 * 0.16 / 0.02**2 + 100
    cover = np.mean((sim.ci_low <= 0.8) & (0.8 <= sim.ci_high))
    assert cover >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / 500), cover  # s.e. 0.0097


def test_exhaustive_look_gives_the_exact_score_with_zero_width():
    # 300 items, +-0.1 point: the worst-case fixed design is every item; a model at 0.5 needs them all, and the last
    # look returns the benchmark's score exactly (the interval's width is 0 up to the rounding tolerance 1e-12)
    x = _benchmark(300, 0.5)
    assert int(np.ceil(_fixed_items(0.5, 0.001, 300))) == 300
    sim = SequentialEvaluator([Precision(0.001)], fpc=True, initial=100, batch=100).simulate(x, n_runs=200, rng=3)
    assert (sim.reason == "precision").all() and (sim.n == 300).all()
    assert np.allclose(sim.estimate, 0.5, atol=0) and (sim.ci_high - sim.ci_low <= 2e-12).all()


def _run(N: int, p: float, h: float, seed: int):
    """One workflow run (what ``effstats sequential`` runs) on a Bernoulli benchmark of N items, K = round(p N)
    of them right: (items used, final interval)."""
    rng = np.random.default_rng(seed)
    v = np.zeros((3, N), bool)
    v[0, : int(round(p * N))] = True
    v[1:] = rng.random((2, N)) < 0.5
    ids = [f"i{j}" for j in range(N)]
    rm = ResponseMatrix(v, model_ids=["new", "r1", "r2"], item_ids=ids)
    pos = {i: j for j, i in enumerate(ids)}
    run = SequentialRun.start(rm.subset(models=[1, 2]), rule="precision", half_width=h, seed=seed)
    while not run.stopped:
        items = list(run.next_items)
        res = run.update(ResponseMatrix(v[0, [pos[i] for i in items]][None], model_ids=["new"], item_ids=items))
    assert res.decision == "precision"
    return res.n, res.ci_low, res.ci_high, len(run.state["looks"])


@pytest.mark.parametrize("N, p, h, n_runs", [(1635, 0.8, 0.03, 8), (1635, 0.95, 0.03, 24), (5000, 0.9, 0.02, 8)])
def test_workflow_run_projects_its_batches_to_the_fixed_design(N, p, h, n_runs):
    # each batch after the first is cut to the items projected at the current estimate: on average at most 1.15
    # times the fixed design at the true accuracy (batches of 100 alone cost up to 1.4 times at accuracy 0.95 and
    # +-3 points, 181 items), up to two Monte-Carlo standard errors of the mean over the runs; never past the
    # worst-case fixed design
    worst = int(np.ceil(_fixed_items(0.5, h, N)))
    runs = [_run(N, p, h, seed) for seed in range(n_runs)]
    n = np.array([r[0] for r in runs])
    assert n.max() <= worst
    mcse = n.std(ddof=1) / np.sqrt(n_runs)
    assert n.mean() <= 1.15 * _fixed_items(p, h, N) + 2 * mcse, (n.mean(), mcse, _fixed_items(p, h, N))
    assert all((hi - lo) / 2 <= h + 1e-12 for _, lo, hi, _ in runs)


def test_workflow_run_stops_at_the_worst_case_fixed_design():
    # accuracy 1/2: the fixed design at the true accuracy is the worst case, 646 of 1,635 items for +-3 points; the
    # run stops there with an interval of at most +-3 points (it used every item and ended undecided in 30 of 80
    # runs with repeated intervals)
    n, lo, hi, looks = _run(1635, 0.5, 0.03, 0)
    assert n == int(np.ceil(_fixed_items(0.5, 0.03, 1635))) == 646
    assert (hi - lo) / 2 <= 0.03 + 1e-12 and lo <= 0.5 <= hi


def _strata_benchmark():
    """A simulated benchmark of 2,000 items, 30 reference models and one target, and the reference models'
    difficulty strata (5 of 400 items each)."""
    from effstats.datasets import simulate_responses
    from effstats.disco import StratifiedAIPW

    rm = simulate_responses(31, 2000, rng=3)
    ref, target = rm.subset(models=range(30)), rm.subset(models=[30])
    strata = StratifiedAIPW(n_items=10, n_strata=5, allocation="proportional", random_state=0).fit(ref).strata_
    return target.values_with_nan()[0], strata


def test_stratified_batches_cover_and_use_fewer_items_than_random_batches():
    # the reference models' difficulty strata as the evaluator's groups: every look is a stratified random sample
    # with the same fraction of every (equal-size) stratum, and the mean of the stratum means is the benchmark's
    y, strata = _strata_benchmark()
    assert np.bincount(strata).tolist() == [400] * 5
    truth, runs, h = y.mean(), 400, 0.03
    strat = SequentialEvaluator([Precision(h)], fpc=True, initial=20, batch=20).simulate(
        y, n_runs=runs, rng=1, groups=strata)
    rand = SequentialEvaluator([Precision(h)], fpc=True).simulate(y, n_runs=runs, rng=1)
    cover = np.mean((strat.ci_low <= truth) & (truth <= strat.ci_high))
    # 95 % nominal; 3 Monte-Carlo standard errors below it (0.033 at 400 runs)
    assert cover >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs)
    # the strata explain part of the items' variance: fewer items on average (0.88 times on this benchmark)
    assert strat.n.mean() <= 0.93 * rand.n.mean()
    # never more than the worst-case fixed design (accuracy 1/2, finite-population correction), rounded up to a look
    assert strat.n.max() <= _fixed_items(0.5, h, y.size) + 100


def test_stratified_batches_reject_groups_of_the_wrong_length():
    y, strata = _strata_benchmark()
    with pytest.raises(ValueError, match="groups"):
        SequentialEvaluator([Precision(0.03)], fpc=True).simulate(y, n_runs=10, rng=1, groups=strata[:-1])
