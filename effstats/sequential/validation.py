"""Monte-Carlo validation of every stopping rule over accuracies, disagreement rates and numbers of looks.

In the manner of rpact's validation documentation: each cell of a grid runs ``n_runs`` complete adaptive
evaluations on i.i.d. items from a super-population with known parameters (per-look multinomial draws, vectorised
over runs), and reports the property the rule promises -- type-I error (at most ``alpha``), coverage of the
interval it reports (at least its level), familywise error of a ranking -- with its Monte-Carlo standard error.
A cell *holds* when its value is within 3 MC standard errors of nominal or on the safe side.

Grid
----
* accuracy of a single model: 0.5, 0.7, 0.9, 0.95, 0.98, 0.99, 0.995;
* disagreement rate between paired models: 1 %, 2 %, 5 %, 10 %, 30 %, two-directional (each model better on half of
  the disagreements) or one-directional (model A never worse). For a pair only the law of the paired difference
  ``d = a - b`` enters the statistics (they are functions of the discordant counts), so pair cells are indexed by
  disagreement and direction, not by accuracy (models of any accuracy ``p`` with ``2 min(p, 1 - p) >=`` the
  disagreement give the same cell);
* looks: 2 (one dataset, 2 x 500 items), 5 (5 x 200), 10 (one dataset, 10 x 200) and 73 (the seed paper's six
  datasets of 1,500 / 1,050 / 1,000 / 3,088 / 951 / 7,299 items, 100 + 100 per dataset, mean of means);
* finite benchmarks, run through the public :meth:`effstats.sequential.SequentialEvaluator.simulate` (random
  orders of a fixed set of items, sampled without replacement until the last look uses the whole benchmark): 500
  items in one dataset
  (and 300 + 200 in two, full grid), binary and continuous (Beta(2, 5)) scores, with the finite-population
  correction on and off; efficacy and threshold at the benchmark's own score (P(claim)) and precision (coverage of
  the benchmark's score). With ``fpc=True`` the last look is exact (the estimate is the benchmark's score), so the
  decision there must be exact too; without it the target is a super-population's score and the cells are
  conservative;
* rules: efficacy (two-sided, one-sided) of one model against its true accuracy and of a pair with equal
  accuracies; threshold above / below / both at the true score (one model) and at the true difference (pair, one
  direction); equivalence at a margin equal to the true difference; precision and diminishing returns (coverage
  of the reported interval); the two-sided repeated CI at every look (simultaneous coverage); futility (type-I
  error of efficacy with conditional-power futility, and with beta-spending futility, whose bound is also checked
  where it acts: P(futility stop) at most beta under the effect it was built for); ranking of four equally
  accurate models (familywise error); and power: efficacy at the
  difference :func:`effstats.sequential.detectable_effect` gives for power 0.8 with the schedule's items (one model
  two-sided, pair one-sided; single-dataset schedules, whose looks are equally spaced in information as the planning
  assumes), against the planned 0.8. Power is what the planner promises, not a property of the test's validity: its rows
  (``criterion == "power"``) are reported beside the validity rows and judged by the same 3-s.e. rule in ``holds``, but
  ``worst_cells`` and the command's exit status are about validity (type-I error, coverage, familywise error) only.

``validation_grid`` (``fast=True`` for a subset that runs in seconds) returns the table;
``python -m effstats.sequential.validation [--fast] [--out FILE]`` writes it.
"""
from __future__ import annotations

import itertools
import time
from typing import Any

import numpy as np
import pandas as pd

from .evaluator import SequentialEvaluator
from .planning import detectable_effect
from .rules import BetaSpendingFutility, DiminishingReturns, Efficacy, Equivalence, Futility, Precision, Threshold

__all__ = ["simulate_iid", "validation_grid", "worst_cells", "SCHEDULES", "ACCURACIES", "DISAGREEMENTS"]

PAPER_SIZES = (1500, 1050, 1000, 3088, 951, 7299)
#: The evaluation schedules of the validation grid: number of looks -> (dataset sizes, items at the first look per
#: dataset, items added per dataset at each later look); 73 looks over the six dataset sizes of the seed paper.
#:
#: Examples
#: --------
#: >>> from effstats.sequential.validation import SCHEDULES
#: >>> sorted(SCHEDULES), SCHEDULES[5]  # 5 looks: one dataset of 1,000 items, 200 at a time
#: ([2, 5, 10, 73], ((1000,), 200, 200))
SCHEDULES = {2: ((1000,), 500, 500), 5: ((1000,), 200, 200), 10: ((2000,), 200, 200), 73: (PAPER_SIZES, 100, 100)}
#: The accuracies of one model in the validation grid (up to the ceiling, where the exact tests are discrete).
#:
#: Examples
#: --------
#: >>> from effstats.sequential.validation import ACCURACIES
#: >>> ACCURACIES
#: (0.5, 0.7, 0.9, 0.95, 0.98, 0.99, 0.995)
ACCURACIES = (0.5, 0.7, 0.9, 0.95, 0.98, 0.99, 0.995)
#: The fractions of items two models disagree on in the validation grid (both ways or one way).
#:
#: Examples
#: --------
#: >>> from effstats.sequential.validation import DISAGREEMENTS
#: >>> DISAGREEMENTS
#: (0.01, 0.02, 0.05, 0.1, 0.3)
DISAGREEMENTS = (0.01, 0.02, 0.05, 0.1, 0.3)
PLANNED_POWER = 0.8


def _draws(levels: np.ndarray, probs: np.ndarray, counts: np.ndarray, n_runs: int, rng: np.random.Generator):
    """Cumulative multinomial counts (n_runs, K, n_levels) of i.i.d. items taking ``levels`` with ``probs``."""
    inc = np.diff(np.concatenate(([0], counts)))
    p = np.asarray(probs, float)
    p = p / p.sum()
    c = np.stack([rng.multinomial(int(k), p, size=n_runs) for k in inc], axis=1)
    return np.cumsum(c, axis=1)


def simulate_iid(evaluator: SequentialEvaluator, probs: Any, *, sizes: Any, n_runs: int = 1000, rng: Any = None,
                 kind: str = "single", all_looks: bool = False) -> dict:
    """Run ``n_runs`` evaluations on i.i.d. items from a super-population (no finite benchmark).

    Each run draws the items of every look from the given distribution, so the runs estimate the error rates
    of the evaluator on an infinite population (the model of the group-sequential theory).

    Parameters
    ----------
    evaluator : effstats.sequential.SequentialEvaluator
        The evaluator whose rules, schedule and spending are simulated.
    probs : array-like of shape (n_levels,) or (n_datasets, n_levels)
        ``kind="single"``: P(score 0), P(score 1); ``kind="paired"``: P(d = -1), P(d = 0), P(d = +1) of the paired
        difference ``d = a - b``. One row per dataset, or one row for all.
    sizes : array-like of shape (n_datasets,)
        Items per dataset (the schedule of ``evaluator`` runs over them).
    n_runs : int, default=1000
        Simulated evaluations.
    rng : int or numpy.random.Generator, optional
        Seed or generator.
    kind : {"single", "paired"}, default="single"
        One model's 0/1 scores, or the paired difference of two models' 0/1 scores.
    all_looks : bool, default=False
        Also return the :class:`effstats.sequential.LookStats` of every look (``"stats"``).

    Returns
    -------
    dict
        Arrays of shape (n_runs,): ``reason``, ``decision``, ``n``, ``estimate``, ``ci_low``, ``ci_high``,
        ``rci_low``, ``rci_high``; and ``stats`` if ``all_looks``.

    See Also
    --------
    effstats.sequential.SequentialEvaluator.simulate : Simulation over random orders of a finite benchmark.

    Examples
    --------
    Type-I error of a paired two-sided efficacy test (models equal, disagreeing on 20 % of the items) and its
    power and expected items at a 10-point difference:

    >>> import numpy as np
    >>> from effstats.sequential import Efficacy, SequentialEvaluator
    >>> from effstats.sequential.validation import simulate_iid
    >>> ev = SequentialEvaluator([Efficacy()], initial=100, batch=100)
    >>> null = simulate_iid(ev, [0.1, 0.8, 0.1], sizes=[1000], kind="paired", n_runs=500, rng=0)
    >>> round(float(np.mean(null["reason"] == "efficacy")), 3)
    0.046
    >>> alt = simulate_iid(ev, [0.05, 0.8, 0.15], sizes=[1000], kind="paired", n_runs=500, rng=0)
    >>> round(float(np.mean(alt["reason"] == "efficacy")), 3), round(float(np.mean(alt["n"])), 1)
    (1.0, 212.8)
    """
    g = np.random.default_rng(rng)
    rules = evaluator._validate_params()
    sizes = np.asarray(sizes, np.int64)
    levels = np.array([0.0, 1.0]) if kind == "single" else np.array([-1.0, 0.0, 1.0])
    P = np.atleast_2d(np.asarray(probs, float))
    P = np.broadcast_to(P, (sizes.size, levels.size))
    sched = evaluator._schedule(sizes)
    tot = sched.sum(1)
    info = evaluator._information(kind, sched, sizes)

    def streams():
        for d in range(sizes.size):
            cum = _draws(levels, P[d], sched[:, d], n_runs, g)
            yield cum @ levels, cum @ (levels**2), cum @ np.abs(levels), sched[:, d].astype(float)

    null = evaluator._null_for(kind, rules)
    s = evaluator._look_stats(kind, [streams()], [sizes], tot, info, float(info[-1]), null)
    _, look, reason, decision, bound = evaluator._judge(rules, s)
    lo, hi, (lo2, hi2), _, st, _ = evaluator._stop_intervals(s, look, bound)
    out = dict(reason=reason, decision=decision, n=tot[look], estimate=st.estimate, ci_low=lo, ci_high=hi,
               rci_low=lo2, rci_high=hi2)
    if all_looks:
        out["stats"] = s
    return out


def _ranking_fwer(acc: float, looks: int, n_models: int, n_runs: int, rng, alpha: float, correction: str) -> float:
    """Familywise error of :func:`effstats.sequential.rank_models`-style ranking of ``n_models`` independent, equally
    accurate models."""
    from .ranking import SequentialRanking

    sizes, initial, batch = SCHEDULES[looks]
    sizes = np.asarray(sizes, np.int64)
    ranker = SequentialRanking(correction=correction, alpha=alpha, initial=initial, batch=batch)
    ev, rules = ranker._check()
    pairs = list(itertools.combinations(range(n_models), 2))
    ia = np.array([i for i, _ in pairs])
    ja = np.array([j for _, j in pairs])
    patterns = np.array(list(itertools.product([0.0, 1.0], repeat=n_models)))  # (2^m, m) joint outcomes
    pp = np.prod(np.where(patterns == 1, acc, 1 - acc), axis=1)
    dif = patterns[:, ia] - patterns[:, ja]  # (2^m, P)
    sched = ev._schedule(sizes)
    n_tot = sched.sum(1)
    info = ev._information("paired", sched, sizes)
    g = np.random.default_rng(rng)
    streams = []
    for d in range(sizes.size):
        cum = _draws(np.arange(len(pp)), pp, sched[:, d], n_runs, g).astype(float)  # (R, K, 2^m)
        s1 = np.einsum("rkq,qp->rpk", cum, dif).reshape(n_runs * len(pairs), -1)
        s2 = np.einsum("rkq,qp->rpk", cum, dif**2).reshape(n_runs * len(pairs), -1)
        streams.append((s1, s2, s2, sched[:, d].astype(float)))
    _, _, _, look, stopped, _ = ranker._decide(ev, rules, streams, sizes, n_tot, info, float(info[-1]), None,
                                               n_runs, len(pairs))
    return float(np.mean(stopped.any(1)))  # every stop is an efficacy claim under the default rule


def _cell(rows: list, rule: str, data: str, acc, dis, looks, metric, value, nominal, n, criterion):
    se = float(np.sqrt(nominal * (1 - nominal) / n))
    if criterion == "<=":
        holds = value <= nominal + 3 * se
    else:  # ">=" (coverage) and "power" (the planner's promise, not a validity property of the test)
        holds = value >= nominal - 3 * se
    rows.append(dict(rule=rule, data=data, accuracy=acc, disagreement=dis, looks=looks, metric=metric,
                     value=float(value), nominal=nominal, mc_se=se, criterion=criterion, holds=bool(holds),
                     n_runs=n))


FINITE_SIZES = {"one dataset": (500,), "two datasets": (300, 200)}  # benchmarks of the finite-benchmark cells


def _finite_benchmark_cells(rows: list, fast: bool, R: int, alpha: float, seeds) -> None:
    """Cells that run :meth:`effstats.sequential.SequentialEvaluator.simulate` on a fixed benchmark whose last look is
    the whole of it."""
    layouts = ("one dataset",) if fast else tuple(FINITE_SIZES)
    rules = [("efficacy two-sided", Efficacy(), "efficacy"), ("threshold both", Threshold(0.5, "both"), "threshold"),
             ("precision (0.03)", Precision(0.03), None)]
    if not fast:
        rules[1:1] = [("efficacy one-sided", Efficacy("greater"), "efficacy")]
        rules[-1:-1] = [("threshold above", Threshold(0.5, "above"), "threshold"),
                        ("threshold below", Threshold(0.5, "below"), "threshold")]
    for layout in layouts:
        sizes = FINITE_SIZES[layout]
        groups = np.repeat(np.arange(len(sizes)), sizes)
        for scores_kind in ("binary", "continuous"):
            g = np.random.default_rng(next(seeds))
            x = g.beta(2, 5, groups.size)
            if scores_kind == "binary":
                x = (g.random(groups.size) < x).astype(float)
            # the benchmark's score as a user computes it: one mean per dataset, summed in numpy's order
            score = float(np.mean([x[groups == d].mean() for d in range(len(sizes))]))
            for fpc in (True, False):
                data = f"benchmark of {'+'.join(map(str, sizes))} items, {scores_kind}, fpc={fpc}"
                for name, rule, claim in rules:
                    if isinstance(rule, Threshold):
                        rule = Threshold(score, rule.direction)
                    ev = SequentialEvaluator([rule], alpha=alpha, null=score, fpc=fpc, initial=100, batch=100)
                    r = ev.simulate(x, groups=groups if len(sizes) > 1 else None, n_runs=R, rng=next(seeds))
                    looks = len(ev._schedule(np.asarray(sizes)))
                    if claim is None:
                        lo, hi = r.confidence_interval()
                        _cell(rows, name, data, score, None, looks, "coverage of the benchmark's score at stop",
                              np.mean((lo <= score) & (hi >= score)), 1 - alpha, R, ">=")
                    else:
                        _cell(rows, name, data, score, None, looks, "P(claim) at the benchmark's score",
                              np.mean(r.reason == claim), alpha, R, "<=")


def validation_grid(fast: bool = True, n_runs: int | None = None, alpha: float = 0.05, rng: Any = 0,
                    progress: bool = False) -> pd.DataFrame:
    """The validation table: one row per (rule, data, accuracy, disagreement, looks, metric).

    Parameters
    ----------
    fast : bool, default=True
        A subset (accuracies 0.5 / 0.98 / 0.995, disagreement 1 % / 30 %, looks 10 and 73, fewer runs).
        Power rows have ``criterion="power"`` (see the module's docstring).
    n_runs : int, optional
        Runs per cell (default 1,500 fast, 8,000 full: the published CSV).
    alpha : float, default=0.05
        Level of every test.
    rng : int, default=0
        Seed; each cell gets its own stream.
    progress : bool, default=False
        tqdm progress bar over the cells.

    Returns
    -------
    pandas.DataFrame
        Columns rule, data, accuracy, disagreement, looks, metric, value, nominal, mc_se, criterion ("<=" for
        error rates, ">=" for coverage, "power" for power against the planned power), holds, n_runs.

    See Also
    --------
    effstats.sequential.validation.worst_cells : The worst validity cell per rule.

    Examples
    --------
    The fast grid with 40 runs a cell (a few seconds; the published table has 8,000):

    >>> from effstats.sequential.validation import validation_grid
    >>> table = validation_grid(fast=True, n_runs=40, rng=0)
    >>> len(table), table.groupby("criterion").size().to_dict()
    (123, {'<=': 80, '>=': 38, 'power': 5})
    >>> first = table.iloc[0]
    >>> first["rule"], first["metric"], float(first["value"]), float(first["nominal"])
    ('efficacy two-sided', 'type-I error', 0.025, 0.05)
    """
    R = n_runs or (1500 if fast else 8_000)
    accs = (0.5, 0.98, 0.995) if fast else ACCURACIES
    diss = (0.01, 0.3) if fast else DISAGREEMENTS
    looks_all = (10, 73) if fast else (2, 5, 10, 73)
    seeds = itertools.count(int(rng) * 1_000_003 + 1)
    rows: list = []
    jobs = []
    for looks in looks_all:
        for p in accs:
            jobs.append(("single", looks, p, None, None))
        for dis in diss:
            for direction in ("two-directional", "one-directional"):
                jobs.append(("paired", looks, np.nan, dis, direction))
        for p in ((0.5, 0.98) if fast else (0.5, 0.9, 0.98)):
            jobs.append(("ranking", looks, p, None, None))
    it = jobs
    if progress:
        from tqdm import tqdm  # text bars: widget bars break with Debian's ipywidgets 6 and nbclient

        it = tqdm(jobs, desc="validation cells")
    for kind, looks, p, dis, direction in it:
        sizes, initial, batch = SCHEDULES[looks]
        kw = dict(alpha=alpha, initial=initial, batch=batch)
        # the planning functions assume looks equally spaced in information: true for one dataset only
        plannable = len(sizes) == 1
        if kind == "ranking":
            v = _ranking_fwer(p, looks, 4, max(R // 3, 300), next(seeds), alpha, "holm")
            _cell(rows, "ranking (Holm, 4 equal models)", "4 models", p, 2 * p * (1 - p), looks, "familywise error",
                  v, alpha, max(R // 3, 300), "<=")
            continue
        if kind == "single":
            probs = [1 - p, p]

            def run(rules, null=None, all_looks=False, probs=probs):
                ev = SequentialEvaluator(rules, null=null, **kw)
                return simulate_iid(ev, probs, sizes=sizes, n_runs=R, rng=next(seeds), all_looks=all_looks)

            for name, rule in [("efficacy two-sided", Efficacy()), ("efficacy one-sided", Efficacy("greater"))]:
                r = run([rule], null=p)
                _cell(rows, name, "one model", p, None, looks, "type-I error", np.mean(r["reason"] == "efficacy"),
                      alpha, R, "<=")
            if plannable:
                eff = detectable_effect(sizes[0], accuracy=p, power=PLANNED_POWER, alpha=alpha, sided=2, looks=looks,
                                        spending="ld_pocock", n_models=1)
                # towards the middle: the alternative of larger variance, the one the planner sizes for
                true = p - eff if p >= 0.5 else p + eff
                if 0 < true < 1:
                    r = run([Efficacy()], null=p, probs=[1 - true, true])
                    _cell(rows, f"power (planned {PLANNED_POWER:g})", "one model", p, None, looks,
                          f"power of two-sided efficacy at the detectable {eff:.4f}",
                          np.mean(r["reason"] == "efficacy"), PLANNED_POWER, R, "power")
            for d in ("above", "below", "both"):
                r = run([Threshold(p, d)])
                _cell(rows, f"threshold {d}", "one model", p, None, looks, "P(claim) at tau = score",
                      np.mean(r["reason"] == "threshold"), alpha, R, "<=")
            r = run([Precision(0.03)], all_looks=True)
            _cell(rows, "precision (0.03)", "one model", p, None, looks, "coverage at stop",
                  np.mean((r["ci_low"] <= p) & (r["ci_high"] >= p)), 1 - alpha, R, ">=")
            s = r["stats"]
            _cell(rows, "repeated CI (every look)", "one model", p, None, looks, "simultaneous coverage",
                  np.mean(((s.ci_low <= p) & (s.ci_high >= p)).all(1)), 1 - alpha, R, ">=")
            r = run([DiminishingReturns(0.002)])
            _cell(rows, "diminishing returns (0.002)", "one model", p, None, looks, "coverage at stop",
                  np.mean((r["ci_low"] <= p) & (r["ci_high"] >= p)), 1 - alpha, R, ">=")
            continue
        # paired: P(d = -1), P(d = 0), P(d = +1)
        h0 = [dis / 2, 1 - dis, dis / 2] if direction == "two-directional" else None
        data = f"pair, {direction}"

        def runp(rules, probs, all_looks=False):
            ev = SequentialEvaluator(rules, **kw)
            return simulate_iid(ev, probs, sizes=sizes, n_runs=R, rng=next(seeds), kind="paired",
                                all_looks=all_looks)

        if h0 is not None:
            for name, rule in [("efficacy two-sided", Efficacy()), ("efficacy one-sided", Efficacy("greater"))]:
                r = runp([rule], h0)
                _cell(rows, name, data, p, dis, looks, "type-I error", np.mean(r["reason"] == "efficacy"), alpha,
                      R, "<=")
            r = runp([Efficacy(), Futility(0.1, effect=max(dis / 4, 0.005))], h0)
            _cell(rows, "futility + efficacy", data, p, dis, looks, "type-I error",
                  np.mean(r["reason"] == "efficacy"), alpha, R, "<=")
            r = runp([Efficacy("greater"), BetaSpendingFutility(effect=max(dis / 4, 0.005))], h0)
            _cell(rows, "beta-spending futility + efficacy", data, p, dis, looks, "type-I error (one-sided)",
                  np.mean(r["reason"] == "efficacy"), alpha, R, "<=")
            if plannable:
                eff = detectable_effect(sizes[0], disagreement=dis, power=PLANNED_POWER, alpha=alpha, sided=1,
                                        looks=looks, spending="ld_pocock")
                h1 = [(dis - eff) / 2, 1 - dis, (dis + eff) / 2]
                r = runp([Efficacy("greater")], h1)
                _cell(rows, f"power (planned {PLANNED_POWER:g})", data, p, dis, looks,
                      f"power of one-sided efficacy at the detectable {eff:.4f}", np.mean(r["reason"] == "efficacy"),
                      PLANNED_POWER, R, "power")
                # what the beta-spending bound itself promises: under the effect it was built for, a futility stop
                # has probability at most beta (the type-I cells above cannot see the bound: non-binding futility
                # only removes efficacy stops)
                beta = 1 - PLANNED_POWER
                r = runp([Efficacy("greater"), BetaSpendingFutility(effect=eff, beta=beta)], h1)
                _cell(rows, "beta-spending futility at the effect", data, p, dis, looks,
                      f"P(futility stop) at the design effect {eff:.4f}", np.mean(r["reason"] == "futility"), beta, R,
                      "<=")
            # equivalence at the boundary: true difference = margin = dis / 3 (two-directional disagreement)
            m = dis / 3
            probs = [dis / 2 - m / 2, 1 - dis, dis / 2 + m / 2]
        else:
            m = dis
            probs = [0.0, 1 - dis, dis]  # A never worse: true difference = dis
            for d in ("above", "below", "both"):
                r = runp([Threshold(dis, d)], probs)
                _cell(rows, f"threshold {d}", data, p, dis, looks, "P(claim) at tau = difference",
                      np.mean(r["reason"] == "threshold"), alpha, R, "<=")
        r = runp([Equivalence(m)], probs)
        _cell(rows, "equivalence (margin = true difference)", data, p, dis, looks, "P(claim equivalence)",
              np.mean(r["reason"] == "equivalence"), alpha, R, "<=")
        truth = probs[2] - probs[0]
        r = runp([Precision(0.03)], probs, all_looks=True)
        _cell(rows, "precision (0.03)", data, p, dis, looks, "coverage at stop",
              np.mean((r["ci_low"] <= truth) & (r["ci_high"] >= truth)), 1 - alpha, R, ">=")
        s = r["stats"]
        _cell(rows, "repeated CI (every look)", data, p, dis, looks, "simultaneous coverage",
              np.mean(((s.ci_low <= truth) & (s.ci_high >= truth)).all(1)), 1 - alpha, R, ">=")
    # after the i.i.d. cells, so that their seeds (and the published rows) do not depend on these
    _finite_benchmark_cells(rows, fast, R, alpha, seeds)
    return pd.DataFrame(rows)


def worst_cells(table: pd.DataFrame) -> pd.DataFrame:
    """Per rule, the cell furthest on the unsafe side of nominal (in Monte-Carlo standard errors).

    Parameters
    ----------
    table : pandas.DataFrame
        A table of :func:`effstats.sequential.validation.validation_grid` (power rows are left out).

    Returns
    -------
    pandas.DataFrame
        One row per rule with ``excess_se``, sorted from the worst.

    See Also
    --------
    effstats.sequential.validation.validation_grid : The table it reads.

    Examples
    --------
    >>> import pandas as pd
    >>> from effstats.sequential.validation import worst_cells
    >>> t = pd.DataFrame({"rule": ["efficacy", "efficacy", "precision"], "value": [0.052, 0.047, 0.94],
    ...                   "nominal": [0.05, 0.05, 0.95], "mc_se": 0.005, "criterion": ["<=", "<=", ">="]})
    >>> worst_cells(t)[["rule", "value", "excess_se"]].round(3)
            rule  value  excess_se
    2  precision  0.940        2.0
    0   efficacy  0.052        0.4
    """
    t = table[table["criterion"] != "power"].copy()
    t["excess_se"] = np.where(t["criterion"] == "<=", t["value"] - t["nominal"], t["nominal"] - t["value"]) / t["mc_se"]
    return t.loc[t.groupby("rule")["excess_se"].idxmax()].sort_values("excess_se", ascending=False)


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - command line
    import argparse

    ap = argparse.ArgumentParser(description="Monte-Carlo validation grid of effstats.sequential: every stopping "
                                 "rule's type-I error, coverage and power, with Monte-Carlo standard errors")
    ap.add_argument("--fast", action="store_true",
                    help="the subset grid (accuracies 0.5 / 0.98 / 0.995, disagreement 1 %% / 30 %%, looks 10 and 73)")
    ap.add_argument("--n-runs", type=int, default=None, metavar="N",
                    help="runs per cell (default: 1,500 with --fast, 8,000 without, as the published table)")
    ap.add_argument("--out", default=None, metavar="CSV", help="write the whole table to this CSV file")
    a = ap.parse_args(argv)
    t = time.perf_counter()
    tab = validation_grid(fast=a.fast, n_runs=a.n_runs, progress=True)
    if a.out:
        tab.to_csv(a.out, index=False)
    print(worst_cells(tab)[["rule", "data", "accuracy", "disagreement", "looks", "metric", "value", "mc_se",
                            "excess_se", "holds"]].to_string())
    valid = tab[tab.criterion != "power"]
    pw = tab[tab.criterion == "power"]
    print(f"{len(valid)} validity cells, {valid.holds.mean():.1%} hold; {len(pw)} power cells, {pw.holds.mean():.1%} "
          f"within 3 MC s.e. of the planned power (lowest {pw.value.min():.3f}); {time.perf_counter() - t:.0f} s")
    return 0 if valid.holds.all() else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
