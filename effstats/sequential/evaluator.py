"""Adaptive (group-sequential) evaluation of one model or a pair of models.

The score is the unweighted mean of per-dataset means (the seed paper's Eq. 1). Items are evaluated in a random
order fixed by ``rng``: an ``initial`` number per dataset, then ``batch`` more per dataset at each look
(stratified), until every dataset is used or ``max_n`` items. The statistics are score statistics that stay valid
near accuracy 0 and 1 and for rare, one-directional disagreements (``effstats.sequential.statistics``: exact binomial
for one model, exact hypergeometric for one model's binary scores on one finite benchmark with ``fpc=True``, Tango
for a paired difference, Agresti–Caffo for two models on different items).

The group-sequential boundaries come from :func:`effstats.sequential.design` with the spending function
evaluated at the **information fraction** of the statistic tested -- for the mean of per-dataset means the
information is ``1 / sum_d (1 / n_d) * D^2`` (equal per-item variances), not the fraction of items: once the
small datasets are used up, more items from the large ones add little information, and spending by items would
waste alpha there. ``fpc=True`` applies the finite-population correction for a benchmark that *is* the
population of interest (its score, not a super-population's).

Three ways to run it, with identical decisions on the same data order:

* :meth:`SequentialEvaluator.fit` -- offline on full score arrays (one order), with a trace;
* :meth:`SequentialEvaluator.simulate` -- thousands of random orders at once (vectorised);
* :meth:`SequentialEvaluator.start` / :meth:`SequentialEvaluator.update` -- online, batch by batch, judged against
  the full planned design (its final bound), so futility is judged as offline.

References
----------
Jennison, C. & Turnbull, B. W. (2000). Group Sequential Methods with Applications to Clinical Trials. Chapman &
Hall/CRC (repeated confidence intervals, ch. 9; information-based monitoring, ch. 7).
Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials. Biometrika 70, 659-663.
Anonymous authors (under review). Stop guessing when to stop testing: efficient model evaluation with just
enough data. Manuscript under double-blind review.
"""
from __future__ import annotations

import collections.abc
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import lru_cache
from numbers import Real
from typing import Any, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from .._shared import _plain
from .._validation import check_array, check_flag, check_fraction, check_positive_int, check_rng
from ._results import SequentialResult, SimulationResult, _level
from ._scores import _groups, _groups_by_id, _item_ids, _scores, stratified_mean
from ._design import design
from ._schedule import check_looks, look_schedule, planned_sizes
from ._looks import _worst_half_width
from ._sampling import _Arm, arm_sums
from .rules import Efficacy, LookStats, Precision, StoppingRule
from ._statistic_base import _interval_of
from .statistics import Accumulator, information

__all__ = ["SequentialEvaluator", "SequentialResult", "SimulationResult", "stratified_mean"]

_SIM_CELLS = 1 << 19  # simulate() works on chunks of about this many (run, look) cells
_SIM_THREADS = 2  # chunks simulated at once (memory grows with it)
_EXACT = 1e-9  # bound at an exhaustive look with the finite-population correction: the estimate is exact


@lru_cache(maxsize=512)
def _bounds(info: tuple, max_info: float, alpha: float, family: Any, param: float | None, backend: str):
    """(c2, c1): two-sided and one-sided bounds at information levels ``info`` (spending at info / max_info).

    An infinite information level (a dataset-exhausting look with the finite-population correction) gets the
    bound ``_EXACT``: the estimate there is the benchmark's score itself.
    """
    inf = np.asarray(info, float)
    fin = np.isfinite(inf)
    c2 = np.full(inf.size, _EXACT)
    c1 = np.full(inf.size, _EXACT)
    if fin.any():
        x = inf[fin]
        mx = max_info if np.isfinite(max_info) else float(x[-1])
        # a single look spends f(I / I_max); gsDesign needs two looks, the closed form is native
        kw = dict(information=x, max_information=mx, spending=family, spending_param=param,
                  backend=backend if x.size > 1 else "native")
        try:
            c2[fin] = design(alpha=alpha, sided=2, **kw).upper
            c1[fin] = design(alpha=alpha, sided=1, **kw).upper
        except RuntimeError as e:
            # design()'s advice names its grid size r, which the evaluator chooses itself: name what the user sets
            raise RuntimeError(f"the boundaries at the evaluator's {x.size} planned looks could not be computed "
                               f"({str(e).split('; ')[0]}); use fewer looks: a larger batch or initial, or a "
                               "smaller max_n") from e
    return c2, c1



class SequentialEvaluator(BaseEstimator):
    """Adaptive evaluation with group-sequential boundaries and composable stopping rules.

    Parameters
    ----------
    rules : sequence of StoppingRule
        Checked at every look; the first look where any fires stops the evaluation (the first rule in the given
        order that fired there is reported).
    alpha : float, default=0.05
        Error level: the two-sided repeated CIs have level ``1 - alpha``; each rule's claim is wrong with
        probability at most ``alpha`` (see the rules).
    spending : str or SpendingFunction, default="ld_pocock"
        Spending family for the boundaries (Lan–DeMets Pocock as the seed paper).
    spending_param : float, optional
    initial, batch : int, default=100
        Items per dataset at the first look and added per dataset at each later look: with ``D`` groups (datasets
        or strata, ``groups=``) a look adds ``D * batch`` items. For looks of ``m`` items pass ``m // D``.
    max_n : int, optional
        Cap on the total number of items per model (default: all), at least ``initial``.
    stratified : bool, default=True
        Draw items per dataset (True) or from the pooled benchmark in one random order.
    null : float, optional
        Value of the parameter under H0 for efficacy and futility: default 0 for a difference of two models;
        required for a single model (e.g. 0.5 for a win rate, chance accuracy for a classifier).
    fpc : bool, default=False
        Finite-population correction: the target is the benchmark's own score (items sampled without
        replacement from it), not a larger population's; the full benchmark then gives the exact answer, and a
        look that uses it up decides exactly: a value is rejected iff the benchmark's score differs from it by
        more than rounding (1e-12 on the scale of the scores), and the interval is the score itself +- 1e-12.
        For one model with binary scores in one dataset the tests and intervals are the exact hypergeometric
        ones (Buonaccorsi 1987).
    backend : {"native", "gsdesign"}, default="native"
    rng : int or Generator, optional
        Fixes the random order of the examples.

    Attributes
    ----------
    interval_kind : str
        ``"design"`` (class attribute): the repeated intervals come from the random order the items are drawn in,
        so they hold for every model.
    result_ : SequentialResult
        After :meth:`fit` or :meth:`update`.

    See Also
    --------
    effstats.sequential.plan : How many items a question needs, and the looks.
    effstats.sequential.design : The group-sequential boundaries.
    effstats.sequential.rank_models : Ranking several models with sequential pairwise comparisons.

    Notes
    -----
    The score is the unweighted mean of per-dataset means. The boundaries come from the spending function at the
    information fraction of the statistic tested (Lan & DeMets 1983), and the two-sided intervals are repeated
    confidence intervals (Jennison & Turnbull 2000, ch. 9): valid whichever rule stops the evaluation.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
    Chapman & Hall/CRC, Boca Raton (ch. 7, information-based monitoring; ch. 9, repeated confidence intervals).

    Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials. *Biometrika*,
    70(3), 659–663.

    Anonymous authors (under review). Stop guessing when to stop testing: efficient model evaluation with just
    enough data. Manuscript under double-blind review.

    Examples
    --------
    Is model A (80 % correct) better than model B (72 %)? The evaluation stops after 600 of 1,000 paired items:

    >>> import numpy as np
    >>> from effstats.sequential import Efficacy, SequentialEvaluator
    >>> g = np.random.default_rng(0)
    >>> a, b = (g.random(1000) < 0.80).astype(float), (g.random(1000) < 0.72).astype(float)
    >>> res = SequentialEvaluator([Efficacy()], rng=0).fit(a, b)
    >>> res.decision, res.n, round(res.pvalue, 4)
    ('greater', 600, 0.0314)
    """

    interval_kind = "design"

    def __init__(self, rules: Sequence[StoppingRule], *, alpha: float = 0.05, spending: Any = "ld_pocock",
                 spending_param: float | None = None, initial: int = 100, batch: int = 100, max_n: int | None = None,
                 stratified: bool = True, null: float | None = None, fpc: bool = False, backend: str = "native",
                 rng: Any = None) -> None:
        # a one-pass iterator (a generator) is kept as the tuple of its rules: a refit, clone and get_params read
        # the rules again
        self.rules = tuple(rules) if isinstance(rules, collections.abc.Iterator) else rules
        self.alpha = alpha
        self.spending = spending
        self.spending_param = spending_param
        self.initial = initial
        self.batch = batch
        self.max_n = max_n
        self.stratified = stratified
        self.null = null
        self.fpc = fpc
        self.backend = backend
        self.rng = rng

    # ------------------------------------------------------------------ setup
    def _validate_params(self) -> list[StoppingRule]:
        rules = list(self.rules) if self.rules is not None and not isinstance(self.rules, StoppingRule) else \
            ([self.rules] if isinstance(self.rules, StoppingRule) else [])
        if not rules:
            raise ValueError("rules: expected at least one StoppingRule")
        for r in rules:
            if not isinstance(r, StoppingRule):
                raise ValueError(f"rules: expected StoppingRule instances, got {type(r).__name__}")
        check_fraction(self.alpha, "alpha")
        if self.alpha >= 0.5:
            raise ValueError(f"alpha: expected a level below 0.5, got {_plain(self.alpha)!r}")
        check_positive_int(self.initial, "initial", minimum=2)
        check_positive_int(self.batch, "batch")
        if self.max_n is not None:
            check_positive_int(self.max_n, "max_n", minimum=2)
            if self.max_n < self.initial:
                raise ValueError(f"max_n: {int(self.max_n)} items is below initial={int(self.initial)}, the items a "
                                 "dataset gets at the first look; lower initial or raise max_n")
        if self.null is not None and (isinstance(self.null, bool) or not isinstance(self.null, Real)
                                      or not np.isfinite(self.null) or not -1 < self.null < 1):
            raise ValueError(f"null: expected a number in (-1, 1) on the scale of the scores, got "
                             f"{_plain(self.null)!r}")
        check_flag(self.stratified, "stratified")
        check_flag(self.fpc, "fpc")
        if self.backend not in ("native", "gsdesign"):
            raise ValueError(f"backend: expected 'native' or 'gsdesign', got {self.backend!r}")
        from .spending import get_spending

        sf = get_spending(self.spending, self.spending_param)
        if self.spending_param is not None and sf.family in ("ld_pocock", "pocock", "obf"):
            raise ValueError(f"spending_param: the {sf.label} family has no parameter, got "
                             f"{_plain(self.spending_param)!r}")
        return rules

    def _null_for(self, kind: str, rules: list[StoppingRule]) -> float | None:
        for r in rules:
            r.check_data(kind)
        if kind != "single":
            return 0.0 if self.null is None else float(self.null)
        if self.null is None:
            if any(getattr(r, "needs_null", False) for r in rules):
                names = ", ".join(type(r).__name__ for r in rules if getattr(r, "needs_null", False))
                raise ValueError(f"null: {names} on a single model tests its score against null=, which is not set "
                                 "(e.g. null=0.5 for a win rate, or chance accuracy); for a threshold use "
                                 "Threshold(tau)")
            return None
        if not 0 < self.null < 1:
            raise ValueError(f"null: a single model's score lies in [0, 1]; expected null in (0, 1), got {self.null!r}")
        return float(self.null)

    @staticmethod
    def _align(scores_a: Any, scores_b: Any, groups: Any):
        """Labelled inputs (pandas Series) are aligned by their index; differing labels are refused."""
        if isinstance(scores_a, pd.DataFrame) or isinstance(scores_b, pd.DataFrame):
            raise ValueError("scores_a: expected one score per item (1-d array or Series), got a DataFrame")
        if isinstance(scores_a, pd.Series):
            idx = _item_ids(scores_a, "scores_a")
            if isinstance(scores_b, pd.Series):
                _item_ids(scores_b, "scores_b")
                missing = idx.difference(scores_b.index)
                unseen = scores_b.index.difference(idx)
                if len(missing) or len(unseen):
                    raise ValueError(f"scores_b: paired scores must be labelled by the same item ids as scores_a; "
                                     "missing from scores_b: "
                                     f"{_plain(missing[:5])}{'...' if len(missing) > 5 else ''}, "
                                     f"not in scores_a: {_plain(unseen[:5])}{'...' if len(unseen) > 5 else ''}")
                scores_b = scores_b.reindex(idx)
            elif scores_b is not None:
                raise ValueError("scores_b: scores_a is a labelled Series; pass scores_b as a Series with the same "
                                 "item ids (a bare array would be paired by position)")
            if isinstance(groups, pd.Series):
                groups = _groups_by_id(groups, idx, "groups")
            scores_a = scores_a.to_numpy()
        elif isinstance(scores_b, pd.Series):
            raise ValueError("scores_a: scores_b is a labelled Series; pass scores_a as a Series with the same item "
                             "ids")
        if isinstance(scores_b, pd.Series):
            scores_b = scores_b.to_numpy()
        if isinstance(groups, pd.Series):
            groups = groups.to_numpy()
        return scores_a, scores_b, groups

    def _arms(self, scores_a, scores_b, paired, groups, groups_b) -> tuple[str, list[_Arm]]:
        paired = check_flag(paired, "paired")
        if paired or scores_b is None:
            scores_a, scores_b, groups = self._align(scores_a, scores_b, groups)
        else:  # two arms on different items: each arm's labels are aligned with its own scores
            scores_a, _, groups = self._align(scores_a, None, groups)
            if isinstance(scores_b, pd.Series) and isinstance(groups_b, pd.Series):
                groups_b = _groups_by_id(groups_b, _item_ids(scores_b, "scores_b"), "groups_b")
        a = _scores(scores_a, "scores_a")
        codes, labels = _groups(groups, a.size, "groups")
        sizes = np.bincount(codes, minlength=labels.size)
        if sizes.min() < 2:
            raise ValueError("scores_a: every dataset needs at least 2 items, dataset "
                             f"{_plain(labels[np.argmin(sizes)])!r} "
                             f"has {sizes.min()}")
        if self.initial > sizes.max():
            raise ValueError(f"initial: {self.initial} items per dataset exceed the largest dataset ({sizes.max()} "
                             "items): "
                             "a single look, not a sequential evaluation")
        if self.batch > sizes.max():
            raise ValueError(f"batch: {self.batch} items per dataset exceed the largest dataset ({sizes.max()} items)")
        if scores_b is None:
            return "single", [_Arm(a, codes, sizes)]
        b = _scores(scores_b, "scores_b")
        if paired:
            if b.size != a.size:
                raise ValueError(f"scores_b: paired scores must have the length of scores_a ({a.size}), got {b.size}")
            return "paired", [_Arm(a - b, codes, sizes)]
        if groups is not None and groups_b is None:
            raise ValueError("groups_b: unpaired scores with groups need the groups of scores_b")
        codes_b, labels_b = _groups(groups_b, b.size, "groups_b")
        if not np.array_equal(labels, labels_b):
            raise ValueError("groups_b: must contain the same datasets as groups")
        sizes_b = np.bincount(codes_b, minlength=labels.size)
        if sizes_b.min() < 2:
            raise ValueError("scores_b: every dataset needs at least 2 items")
        return "unpaired", [_Arm(a, codes, sizes), _Arm(b, codes_b, sizes_b)]

    def _schedule(self, sizes: np.ndarray) -> np.ndarray:
        """Items per stratum at each look, shape (K, D): :func:`look_schedule` with this evaluator's ``initial``,
        ``batch`` and ``max_n``."""
        return look_schedule(sizes, self.initial, self.batch, self.max_n)

    # ------------------------------------------------------------------ statistics
    def _information(self, kind: str, counts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        fp = sizes if self.fpc else None
        if kind == "unpaired":
            return information(counts, fp, counts, fp)
        return information(counts, fp)

    def _expected_counts(self, sched: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Counts per dataset at each look: the schedule (stratified) or the proportional expectation (pooled)."""
        if self.stratified:
            return sched
        tot = sched.sum(1, keepdims=True)
        return np.maximum(tot * sizes[None, :] / sizes.sum(), 1e-9)

    def _look_stats(self, kind: str, streams, sizes_list, n_tot: np.ndarray, info: np.ndarray, max_info: float,
                    null: float | None, planned_info: np.ndarray | None = None) -> LookStats:
        """Accumulate the per-dataset sums into one score statistic and attach the boundaries."""
        acc = Accumulator(kind, fpc=bool(self.fpc))
        if kind == "unpaired":
            for (s1, s2, sa, cnt), (t1, t2, _, cb), na, nb in zip(streams[0], streams[1], *sizes_list):
                acc.add(s1, s2, sa, cnt, na, arm_b=(t1, t2, cb, nb))
        else:
            for (s1, s2, sa, cnt), nd in zip(streams[0], sizes_list[0]):
                acc.add(s1, s2, sa, cnt, nd)
        return self._attach(acc.finish(), n_tot, info, max_info, null, planned_info)

    def _attach(self, stat, n_tot: np.ndarray, info: np.ndarray, max_info: float, null: float | None,
                planned_info: np.ndarray | None = None) -> LookStats:
        """The looks' statistics with the boundaries at their information."""
        full = info if planned_info is None else np.concatenate([info, planned_info])
        c2, c1 = _bounds(tuple(float(x) for x in full), float(max_info), float(self.alpha), self.spending,
                         self.spending_param, self.backend)
        K = info.size
        # (an exhaustive last look, infinite information: fractions of the schedule's largest finite level, the
        # planned looks' included)
        t = np.where(np.isfinite(info), info / max_info, 1.0) if np.isfinite(max_info) else \
            np.where(np.isfinite(info), info / full[np.isfinite(full)].max(initial=1.0), 1.0)
        shape = np.shape(stat.estimate)
        return LookStats(n=np.broadcast_to(n_tot, shape), t=t, estimate=stat.estimate, se=stat.se, z=None,
                         c2=c2[:K], c1=c1[:K], null=null, alpha=float(self.alpha), spending=self.spending,
                         spending_param=self.spending_param, statistic=stat, c2_final=float(c2[-1]),
                         c1_final=float(c1[-1]), information=info)

    def _judge(self, rules, s: LookStats):
        fires = np.stack([np.broadcast_to(r.fires(s), np.shape(s.estimate)) for r in rules])  # (R, runs, K)
        anyf = fires.any(0)
        K = anyf.shape[-1]
        stopped = anyf.any(-1)
        look = np.where(stopped, np.argmax(anyf, -1), K - 1)
        rows = np.arange(anyf.shape[0])
        fr = fires[:, rows, look]  # (rules, runs)
        which = np.argmax(fr, 0)
        names = np.array([r.name for r in rules], dtype=object)
        reason = np.where(stopped, names[which], "max_n")
        outs = np.stack([np.broadcast_to(r.outcome(s), np.shape(s.estimate))[rows, look] for r in rules])
        decision = np.where(stopped, outs[which, rows], "no decision")
        bounds = np.array([r.bound for r in rules], dtype=object)
        bound = np.where(stopped, bounds[which], "c2")
        return fires, look, reason, decision, bound

    def _stop_intervals(self, s: LookStats, look: np.ndarray, bound: np.ndarray, other: LookStats | None = None):
        """Deciding interval, two-sided RCI and c1 interval at each run's stopping look (only there: cheap); with
        ``other`` (``s`` at another alpha), also its fixed-sample interval there (None without)."""
        from scipy.special import ndtri

        rows = np.arange(look.size)
        st = s.statistic.take((rows, look))
        z_other = None if other is None else ndtri(1 - other.alpha / 2)
        kept = s.__dict__
        if "_ci2" in kept and "_ci1" in kept and (other is None or kept.get("_fixed_half", (None,))[0] == z_other):
            # every look's intervals came from one search (LookStats._fixed_and_repeated): read at the stops
            ends = [kept["_ci2"], kept["_ci1"]] + ([] if other is None else [kept["_fixed_half"][1:]])
            lows, highs = ([e[j][rows, look] for e in ends] for j in (0, 1))
        else:
            # the intervals at c2, at c1 (and at other's fixed-sample z) in one search, the statistic at each stop
            # once per critical value: a search costs about ten evaluations of the statistic whatever the size of
            # its arrays, and each end is searched alone
            cs = [np.asarray(s.c2)[look], np.asarray(s.c1)[look]]
            if other is not None:
                cs.append(np.full(look.size, z_other))
            every = s.statistic.take((np.tile(rows, len(cs)), np.tile(look, len(cs))))
            lows, highs = (np.split(v, len(cs)) for v in _interval_of(every, np.concatenate(cs)))
        (lo2, lo1), (hi2, hi1) = lows[:2], highs[:2]
        one, fixed = bound == "c1", bound == "fixed"
        lo, hi = np.where(one, lo1, lo2), np.where(one, hi1, hi2)
        if fixed.any():  # the precision rule's fixed-sample interval (computed by the rule at every look)
            lof, hif = (np.broadcast_to(v, np.shape(s.estimate))[rows, look] for v in s.fixed_interval)
            lo, hi = np.where(fixed, lof, lo), np.where(fixed, hif, hi)
        at_other = None if other is None else other._fixed_ends(lows[2], highs[2], (rows, look))
        return (lo, hi, (lo2, hi2), (lo1, hi1), st, at_other)

    def _run(self, arms, kind: str, n_runs: int, rng, null, features: np.ndarray | None = None, rules=(),
             seen: int | None = None):
        """Schedule, ``n_runs`` orders, statistics: (stats, n per look, max_n); with ``seen``, the corrected looks
        stop at the last one of at most ``seen`` items, the later ones planned."""
        sizes = np.minimum.reduce([a.sizes for a in arms])
        sched = self._schedule(sizes)
        tot = sched.sum(1)
        max_n = int(tot[-1])
        info = self._information(kind, self._expected_counts(sched, sizes), sizes)
        if features is not None:
            return self._run_corrected(arms[0], features, sched, info, n_runs, rng, rules, seen), tot, max_n
        streams = [arm_sums(a, sched, n_runs, rng, bool(self.stratified)) for a in arms]
        K = self._last_look(kind, info, rules)
        if K < tot.size:
            # no run goes past look K: the statistics (a Precision rule's exact interval among them) are computed up
            # to it, the later looks planned (their information sets the bounds' spending, as in the whole schedule);
            # every look is drawn, so the random orders, and the runs, are those of the whole schedule
            streams = [((s1[..., :K], s2[..., :K], sa[..., :K], cnt[..., :K]) for s1, s2, sa, cnt in st)
                       for st in streams]
            s = self._look_stats(kind, streams, [a.sizes for a in arms], tot[:K], info[:K], float(info[-1]), null,
                                 planned_info=info[K:])
            return s, tot, max_n
        s = self._look_stats(kind, streams, [a.sizes for a in arms], tot, info, float(info[-1]), null)
        return s, tot, max_n

    def _last_look(self, kind: str, info: np.ndarray, rules) -> int:
        """The number of looks any run can reach: up to the first where a Precision rule's worst case (the interval
        at per-item variance 1/4, 1 for a paired difference) is within its half-width, so that it fires whatever the
        scores; every look without one."""
        widths = [r.half_width for r in rules if isinstance(r, Precision)]
        if not widths:
            return info.size
        worst = _worst_half_width(float(self.alpha), info, 1.0 if kind == "paired" else 0.25)
        hit = np.flatnonzero(worst <= max(widths))
        return int(hit[0]) + 1 if hit.size else info.size

    def _run_corrected(self, arm: _Arm, features: np.ndarray, sched: np.ndarray, info: np.ndarray, n_runs: int,
                       rng, rules, seen: int | None = None) -> LookStats:
        """The looks of Precision(correction="logistic"): the corrected estimate and its residuals' standard error,
        computed look by look up to each run's stop (later looks NaN).

        With ``seen`` (a run under way), only the looks of at most ``seen`` items are computed and the schedule's
        later looks are planned: the repeated intervals spend alpha up to the current look as the whole schedule
        would, not all of it there."""
        from scipy.special import ndtri

        from ._correction import _Looks

        z = float(ndtri(1 - self.alpha / 2))
        h = max(r.half_width for r in rules)
        with np.errstate(divide="ignore"):
            worst = z * np.sqrt(0.25 / info)
        K = sched.shape[0] if seen is None else max(1, int(np.searchsorted(sched.sum(1), seen, side="right")))
        looks = _Looks(arm.values, arm.codes, arm.sizes, features, bool(self.fpc), z)
        stat = looks.run(sched[:K], n_runs, rng, lambda k, hw: (hw <= h) | (worst[k] <= h))
        return self._attach(stat, sched[:K].sum(1), info[:K], float(info[-1]), None, planned_info=info[K:])

    def _features(self, rules, features: Any, scores_a: Any, scores_b: Any) -> np.ndarray | None:
        """The items' features for Precision(correction="logistic"), aligned with the scores; None without it."""
        corrected = [r for r in rules if isinstance(r, Precision) and r.correction is not None]
        if not corrected:
            if features is not None:
                raise ValueError("features: only Precision(correction='logistic') uses the items' features; add "
                                 "correction='logistic' to the Precision rule, or leave features unset")
            return None
        others = [type(r).__name__ for r in rules if not isinstance(r, Precision)]
        if others or len(corrected) < len(rules):
            raise ValueError("rules: Precision(correction='logistic') goes with other Precision(correction="
                             f"'logistic') rules only, got {', '.join(others) or 'an uncorrected Precision'}")
        if scores_b is not None:
            raise ValueError("correction: the logistic correction estimates one model's score; pass scores_b=None")
        if not self.stratified:
            raise ValueError("stratified: the logistic correction draws its items within the groups; set "
                             "stratified=True")
        if features is None:
            raise ValueError("features: Precision(correction='logistic') needs the items' features from the "
                             "reference models (n_items, n_features), e.g. StratifiedAIPW(...).fit(reference)"
                             ".features_")
        if isinstance(features, pd.DataFrame) and features.index.has_duplicates:
            dup = features.index[features.index.duplicated()].unique()
            raise ValueError(f"features: item ids {_plain(list(dup[:5]))} have more than one row")
        if isinstance(features, pd.DataFrame) and not isinstance(scores_a, pd.Series) \
                and not features.index.equals(pd.RangeIndex(len(features))):
            raise ValueError("features: a DataFrame's rows are matched to the items by its index (item ids), but "
                             "scores_a has none; pass scores_a as a Series indexed by the item ids, or features as "
                             "an array in the scores' order")
        if isinstance(features, pd.DataFrame) and isinstance(scores_a, pd.Series):
            missing = scores_a.index.difference(features.index)
            if len(missing):
                raise ValueError(f"features: no row for item ids {_plain(missing[:5])}"
                                 f"{'...' if len(missing) > 5 else ''}")
            features = features.reindex(scores_a.index)
        n = len(scores_a) if hasattr(scores_a, "__len__") else -1
        x = check_array(features, "features", ndim=2, dtype=float)
        if x.shape[0] != n:
            raise ValueError(f"features: expected one row per item ({n}), got {x.shape[0]} rows")
        if x.shape[1] < 1:
            raise ValueError("features: expected at least one feature column, got none")
        return x

    # ------------------------------------------------------------------ public API
    def simulate(self, scores_a: Any, scores_b: Any = None, *, paired: bool = True, groups: Any = None,
                 groups_b: Any = None, n_runs: int = 1000, rng: Any = None, features: Any = None) -> SimulationResult:
        """Run ``n_runs`` adaptive evaluations over independent random orders of the same items (vectorised).

        Parameters
        ----------
        scores_a, scores_b : array (n_items,) in [0, 1] or Series
            Per-item scores; ``scores_b`` for a comparison (paired by item id for Series, by position for arrays).
        paired : bool, default=True
        groups, groups_b : array (n_items,), optional
            Dataset of each item (mean of means).
        n_runs : int, default=1000
        rng : int or Generator, optional
            Default: the evaluator's ``rng``.
        features : array (n_items, n_features) or DataFrame, optional
            Item features from the reference models, for ``Precision(correction="logistic")`` (required by it,
            refused without it), e.g. ``StratifiedAIPW(...).fit(reference).features_``. A DataFrame's rows are
            matched to the items by its index, one row per item id, so ``scores_a`` must then be a Series of those
            ids (a DataFrame with the default index, 0 to n - 1, is taken in the scores' order, as an array is).

        Returns
        -------
        SimulationResult

        See Also
        --------
        effstats.sequential.SequentialEvaluator.fit : One evaluation, with its trace.
        effstats.sequential.validation.validation_grid : The package's Monte-Carlo validation, built on it.

        Examples
        --------
        How often does "above 75 %" hold up for a model whose benchmark score is 79 %, and how many items does
        it take?

        >>> import numpy as np
        >>> from effstats.sequential import SequentialEvaluator, Threshold
        >>> scores = (np.random.default_rng(0).random(1000) < 0.8).astype(float)
        >>> sim = SequentialEvaluator([Threshold(0.75, "above")]).simulate(scores, n_runs=200, rng=1)
        >>> float(np.mean(sim.reason == "threshold")), float(np.mean(sim.n))
        (1.0, 584.5)
        """
        rules = self._validate_params()
        n_runs = check_positive_int(n_runs, "n_runs")
        rng = check_rng(self.rng if rng is None else rng)
        x = self._features(rules, features, scores_a, scores_b)
        kind, arms = self._arms(scores_a, scores_b, paired, groups, groups_b)
        null = self._null_for(kind, rules)
        n_looks = self._schedule(np.minimum.reduce([a.sizes for a in arms])).shape[0]
        # runs in chunks: the statistics are (runs, looks) arrays, a few dozen of them alive at once; chunks of
        # ~2^19 cells keep the peak memory flat in n_runs (whole, it grows by ~0.5 KB per run and look)
        chunk = max(1, _SIM_CELLS // n_looks)
        sizes = [min(chunk, n_runs - start) for start in range(0, n_runs, chunk)]
        if len(sizes) == 1:
            gens = [rng]
        else:
            # one generator per chunk, seeded from rng: the result does not depend on how many threads run them
            seed = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
            gens = [np.random.default_rng(c) for c in seed.spawn(len(sizes))]

        def one(m_g):
            m, g = m_g
            s, tot, max_n = self._run(arms, kind, m, g, null, x, rules)
            _, look, reason, decision, bound = self._judge(rules, s)
            lo, hi, (lo2, hi2), _, st, _ = self._stop_intervals(s, look, bound)
            return max_n, dict(stop_look=look + 1, n=tot[look], fraction=tot[look] / max_n, reason=reason,
                               decision=decision, estimate=np.asarray(st.estimate), ci_low=lo, ci_high=hi,
                               standard_error=np.asarray(st.se), z=np.asarray(s.z)[np.arange(m), look],
                               confidence_level=np.where(bound == "c1", 1 - 2 * self.alpha, 1 - self.alpha),
                               rci_low=lo2, rci_high=hi2)

        workers = min(_SIM_THREADS, len(sizes), os.cpu_count() or 1)
        if workers > 1:
            one((1, np.random.default_rng(0)))  # fills the boundary cache once, before the threads need it
            # numpy's samplers and whole-array operations release the GIL: chunks run side by side
            with ThreadPoolExecutor(workers) as pool:
                res = list(pool.map(one, zip(sizes, gens)))
        else:
            res = [one(mg) for mg in zip(sizes, gens)]
        max_n = res[0][0]
        parts = [r[1] for r in res]
        out = {key: np.concatenate([p[key] for p in parts]) if len(parts) > 1 else parts[0][key] for key in parts[0]}
        return SimulationResult(max_n=max_n, alpha=float(self.alpha), **out)

    def fit(self, scores_a: Any, scores_b: Any = None, *, paired: bool = True, groups: Any = None,
            groups_b: Any = None, shuffle: bool = True, features: Any = None) -> SequentialResult:
        """One adaptive evaluation; ``trace`` shows every look up to the stop.

        Parameters
        ----------
        scores_a, scores_b : array (n_items,) in [0, 1] or Series
            Labelled inputs (Series) are paired by their index (item ids), and refused when the ids differ;
            bare arrays are paired by position.
        paired, groups, groups_b
            As :meth:`simulate`.
        shuffle : bool, default=True
            Evaluate the items in a random order fixed by ``rng`` (True) or in the order given, the first items of
            each dataset first (False; e.g. to replay an online evaluation).
        features : array (n_items, n_features) or DataFrame, optional
            As :meth:`simulate`: for ``Precision(correction="logistic")``.

        Returns
        -------
        SequentialResult
            Also stored as ``result_``.

        See Also
        --------
        effstats.sequential.SequentialEvaluator.simulate : Many random orders at once.
        effstats.sequential.SequentialEvaluator.update : The same, online.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import Efficacy, SequentialEvaluator
        >>> g = np.random.default_rng(0)
        >>> a, b = (g.random(1000) < 0.80).astype(float), (g.random(1000) < 0.72).astype(float)
        >>> res = SequentialEvaluator([Efficacy()], rng=0).fit(a, b)
        >>> res.trace[["n", "z", "bound"]].round(2).tail(2)
                n     z  bound
        look
        5     500  2.41   2.54
        6     600  2.99   2.52
        """
        return self._fit(scores_a, scores_b, paired=paired, groups=groups, groups_b=groups_b, shuffle=shuffle,
                         features=features)

    def _fit(self, scores_a: Any, scores_b: Any = None, *, paired: bool = True, groups: Any = None,
             groups_b: Any = None, shuffle: bool = True, features: Any = None,
             seen: int | None = None) -> SequentialResult:
        """:meth:`fit`; with ``seen`` (``Precision(correction="logistic")``, ``shuffle=False``), a run under way:
        the looks up to ``seen`` items of the planned schedule (``max_n``), the later ones planned."""
        rules = self._validate_params()
        shuffle = check_flag(shuffle, "shuffle")
        rng = check_rng(self.rng) if shuffle else None
        x = self._features(rules, features, scores_a, scores_b)
        kind, arms = self._arms(scores_a, scores_b, paired, groups, groups_b)
        null = self._null_for(kind, rules)
        s, _, max_n = self._run(arms, kind, 1, rng, null, x, rules, seen)
        if any(isinstance(r, Precision) for r in rules):
            s._fixed_and_repeated()  # the rule's interval and the trace's repeated one, both at every look
        fires, look, reason, decision, bound = self._judge(rules, s)
        self.result_ = self._result(rules, s, fires, int(look[0]), str(reason[0]), str(decision[0]), str(bound[0]),
                                    max_n)
        return self.result_

    def _result(self, rules, s: LookStats, fires, look: int, reason: str, decision: str, bound: str,
                max_n: int) -> SequentialResult:
        K = look + 1
        fired = [",".join(r.name for j, r in enumerate(rules) if fires[j, 0, k]) for k in range(K)]
        # the trace's columns in their order, the intervals beside the repeated one before rule_fired; the frame is
        # built once from them (a column inserted into a frame costs about as much as the frame)
        cols = {
            "n": s.n[0, :K].astype(int), "fraction": s.n[0, :K] / max_n, "information": s.t[:K],
            "estimate": s.estimate[0, :K], "se": s.se[0, :K], "z": s.z[0, :K], "bound": s.c2[:K],
            "bound_one_sided": s.c1[:K], "ci_low": s.ci_low[0, :K], "ci_high": s.ci_high[0, :K],
        }
        if any(isinstance(r, Precision) for r in rules):
            # the interval Precision checks and reports at its stop (fixed-sample), beside the repeated one
            f_lo, f_hi = s.fixed_interval
            cols["fixed_low"], cols["fixed_high"] = np.asarray(f_lo)[0, :K], np.asarray(f_hi)[0, :K]
        # the precision rule's fixed-sample interval at 1 - 2 alpha too (below), at the stop
        half = replace(s, alpha=2 * s.alpha) if bound == "fixed" else None
        lo, hi, (lo2, hi2), (lo1, hi1), st, f1 = self._stop_intervals(s, np.array([look]), np.array([bound]), half)
        eff = next((r for r in rules if isinstance(r, Efficacy)), None)
        if eff is not None and eff.alternative != "two-sided":
            # a one-sided test's own repeated interval at every look (level 1 - 2 alpha, its end on the tested side
            # the one-sided 1 - alpha bound), beside the two-sided 1 - alpha one of ci_low/ci_high
            if "_ci1" in s.__dict__:  # kept from the search of every look's intervals (_fixed_and_repeated)
                one_lo, one_hi = (v[0, :K] for v in s.__dict__["_ci1"])
            else:
                every = s.statistic.take((np.zeros(K, int), np.arange(K)))
                one_lo, one_hi = _interval_of(every, np.asarray(s.c1)[:K])
            cols["ci_low_one_sided"], cols["ci_high_one_sided"] = np.asarray(one_lo, float), np.asarray(one_hi, float)
        cols["rule_fired"] = fired
        trace = pd.DataFrame(cols, index=pd.Index(np.arange(1, K + 1), name="look"))
        fixed1 = (np.nan, np.nan)
        if bound == "fixed":
            # the precision rule's fixed-sample interval at 1 - 2 alpha too, the level of the one-sided repeated
            # bounds: Chow & Robbins's asymptotics hold at any level at the stop (the stopping size over the fixed
            # design's tends to 1), so it is the stop's interval at that level as the 1 - alpha one is at its own
            fixed1 = tuple(float(v[0]) for v in f1)
        # by type, not by name (above): a renamed Efficacy rule stops with its own name as the reason
        pvalue = self._pvalue(eff, s, look, reason)
        return SequentialResult(decision=decision, reason=reason, n=int(s.n[0, look]),
                                fraction=float(s.n[0, look] / max_n), information_fraction=float(s.t[look]),
                                estimate=float(st.estimate[0]), standard_error=float(st.se[0]),
                                z=float(s.z[0, look]), ci_low=float(lo[0]), ci_high=float(hi[0]),
                                confidence_level=_level(bound, float(self.alpha)), alpha=float(self.alpha),
                                rci_low=float(lo2[0]), rci_high=float(hi2[0]), low1=float(lo1[0]),
                                high1=float(hi1[0]), trace=trace, pvalue=pvalue,
                                efficacy_alternative=None if eff is None else eff.alternative,
                                efficacy_name="efficacy" if eff is None else eff.name, null=s.null,
                                fixed_sample=bound == "fixed", fixed_low1=fixed1[0], fixed_high1=fixed1[1])

    @staticmethod
    def _pvalue(eff: Efficacy | None, s: LookStats, look: int, reason: str) -> float | None:
        """Stage-wise ordering p-value of the efficacy test at an efficacy stop or the last look, else None.

        Computed by :func:`effstats.sequential.stagewise_pvalue` from the score statistic and the bounds
        actually used (normal theory; the score statistic makes it approximate at the edges).
        """
        if s.null is None or eff is None or reason not in (eff.name, "max_n"):
            return None
        two = eff.alternative == "two-sided"
        z = float(s.z[0, look])
        if not np.isfinite(z) or not np.all(np.isfinite(s.t[: look + 1])):
            return None
        if eff.alternative == "less":
            z = -z
        try:
            from .inference import stagewise_pvalue

            return float(stagewise_pvalue(z=z, look=look + 1, information=np.asarray(s.t[: look + 1], float),
                                          upper=np.asarray(s.c2 if two else s.c1, float)[: look + 1],
                                          two_sided=two))
        except (ImportError, ValueError):
            return None

    # ------------------------------------------------------------------ online
    def start(self, max_n: int, n_groups: int = 1, *, sizes: Any = None) -> "SequentialEvaluator":
        """Begin an online evaluation of at most ``max_n`` items per model in ``n_groups`` datasets.

        Parameters
        ----------
        max_n : int
            Planned maximum number of items per model.
        n_groups : int, default=1
            Number of datasets.
        sizes : array (n_groups,) of int, optional
            Items per dataset (default: ``max_n`` split equally). With the evaluator's ``initial`` / ``batch`` they
            give the planned looks, whose final bound judges futility at every look, as offline.

        Returns
        -------
        SequentialEvaluator
            ``self``, ready for :meth:`update`.

        Raises
        ------
        ValueError
            With a classic (not spending-function) design, whose bounds need the number of looks in advance.

        See Also
        --------
        effstats.sequential.SequentialEvaluator.update : Adds a batch.

        Examples
        --------
        Two datasets of 600 and 400 items; the first batch has 50 items of each:

        >>> import numpy as np
        >>> from effstats.sequential import Precision, SequentialEvaluator
        >>> ev = SequentialEvaluator([Precision(0.03)]).start(1000, n_groups=2, sizes=[600, 400])
        >>> batch = (np.random.default_rng(0).random(100) < 0.8).astype(float)
        >>> res = ev.update(batch, groups=np.repeat([0, 1], 50))
        >>> res.decision, res.n
        ('continue', 100)
        """
        rules = self._validate_params()
        if any(isinstance(r, Precision) and r.correction is not None for r in rules):
            raise ValueError("correction: Precision(correction='logistic') refits on every look's items; it runs "
                             "offline (fit, simulate), not online")
        max_n = check_positive_int(max_n, "max_n", minimum=2)
        n_groups = check_positive_int(n_groups, "n_groups")
        check_looks(self.initial, self.batch, max_n, "max_n")
        from .spending import get_spending

        if get_spending(self.spending, self.spending_param).is_classic:
            raise ValueError("spending: online updates need a spending function (ld_pocock, ld_obf, hsd, power): "
                             "classic "
                             "Pocock / O'Brien-Fleming bounds depend on the number of looks, unknown while data arrive")
        sz = planned_sizes(max_n, n_groups, sizes)
        plan = self._schedule(sz)
        self._online = {"rules": rules, "max_n": max_n, "D": n_groups, "sizes": sz, "plan": plan, "kind": None,
                        "s1": np.zeros(n_groups), "s2": np.zeros(n_groups), "sa": np.zeros(n_groups),
                        "cnt": np.zeros(n_groups), "looks": [], "done": False, "seen": None,
                        "memo": {}}  # the looks' interval ends: each update recomputes the looks so far
        return self

    def update(self, scores_a: Any, scores_b: Any = None, *, groups: Any = None) -> SequentialResult:
        """Add a batch (one model, or two models paired on the same items) and return the decision so far.

        ``groups`` holds integer dataset codes in ``[0, n_groups)``. Boundaries come from the spending function
        at the observed information, with the planned later looks appended so that futility is judged against
        the full design's final bound: on the same data order, the decisions are those of :meth:`fit` with
        ``shuffle=False``.

        Parameters
        ----------
        scores_a : array-like of shape (n_batch,) or Series
            The batch's scores in [0, 1]; a Series' index holds item ids, and an id sent twice is refused.
        scores_b : array-like of shape (n_batch,) or Series, optional
            The second model's scores on the same items (a paired comparison).
        groups : array-like of shape (n_batch,) of int, optional
            Dataset codes in ``[0, n_groups)``.

        Returns
        -------
        SequentialResult
            ``decision`` is ``"continue"`` until a rule fires or ``max_n`` is reached; also stored as
            ``result_``.

        See Also
        --------
        effstats.sequential.SequentialEvaluator.start : Begins the evaluation.
        effstats.sequential.SequentialEvaluator.fit : The same offline.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import Precision, SequentialEvaluator
        >>> scores = (np.random.default_rng(0).random(1000) < 0.8).astype(float)
        >>> ev = SequentialEvaluator([Precision(0.03)]).start(1000)
        >>> for k in range(3):
        ...     res = ev.update(scores[100 * k: 100 * (k + 1)])
        >>> res.decision, res.n, round(res.ci_low, 3), round(res.ci_high, 3)
        ('continue', 300, 0.666, 0.8)
        """
        st = getattr(self, "_online", None)
        if st is None:
            from ..exceptions import NotFittedError

            raise NotFittedError("update: this SequentialEvaluator has not been started; call start(max_n, n_groups) "
                                 "first")
        if st["done"]:
            raise ValueError("update: the evaluation has already stopped; call start() to begin a new one")
        ids = scores_a.index if isinstance(scores_a, pd.Series) else None
        if ids is not None and st["seen"] is not None:
            again = ids.intersection(st["seen"])
            if len(again):  # e.g. a harness re-sending a batch: counting items twice would overstate the information
                raise ValueError(f"scores_a: item ids already evaluated in an earlier batch: {_plain(again[:5])}"
                                 f"{'...' if len(again) > 5 else ''}; each item may enter once")
        elif ids is None and st["seen"] is not None:
            raise ValueError("scores_a: earlier batches were labelled Series; pass this one with its item ids too")
        a, b, groups = self._align(scores_a, scores_b, groups)
        a = _scores(a, "scores_a")
        x, kind = a, "single"
        if b is not None:
            b = _scores(b, "scores_b")
            if b.size != a.size:
                raise ValueError(f"scores_b: paired scores must have the length of scores_a ({a.size}), got {b.size}")
            x, kind = a - b, "paired"
        if x.size == 0:
            raise ValueError("scores_a: an update must add at least one item")
        if st["kind"] is not None and st["kind"] != kind:
            raise ValueError(f"scores_b: this online evaluation is {st['kind']}; every update must be too")
        null = st["null"] if st["kind"] is not None else self._null_for(kind, st["rules"])
        g = np.zeros(x.size, np.intp) if groups is None else check_array(groups, "groups", ndim=1, dtype=None,
                                                                         shape=(x.size,))
        if not np.issubdtype(g.dtype, np.integer) or g.min() < 0 or g.max() >= st["D"]:
            raise ValueError(f"groups: expected integer dataset codes in [0, {st['D']}), got "
                             f"{np.unique(g)[:5].tolist()}")
        D = st["D"]
        new_cnt = st["cnt"] + np.bincount(g, minlength=D)
        if np.any(new_cnt > st["sizes"]):
            raise ValueError("scores_a: more items than planned in dataset(s) "
                             f"{np.flatnonzero(new_cnt > st['sizes']).tolist()} "
                             f"(sizes {st['sizes'].tolist()}); pass sizes= to start()")
        # every check passed: only now does this batch fix the kind (a refused first batch must not)
        st["kind"], st["null"] = kind, null
        if ids is not None:
            st["seen"] = ids if st["seen"] is None else st["seen"].append(ids)
        st["s1"] += np.bincount(g, x, D)
        st["s2"] += np.bincount(g, x * x, D)
        st["sa"] += np.bincount(g, np.abs(x), D)
        st["cnt"] = new_cnt
        st["looks"].append((st["s1"].copy(), st["s2"].copy(), st["sa"].copy(), st["cnt"].copy()))
        S1, S2, SA, C = (np.stack([lk[j] for lk in st["looks"]]) for j in range(4))  # (K, D)
        tots = C.sum(1)
        sz = st["sizes"]
        info = self._information(kind, C, sz)
        plan = st["plan"]
        plan_info = self._information(kind, plan, sz)
        later = plan_info[plan.sum(1) > tots[-1]]
        max_info = float(plan_info[-1])
        streams = [((S1[:, d][None], S2[:, d][None], SA[:, d][None], C[:, d][None]) for d in range(D))]
        s = self._look_stats(kind, streams, [sz], tots, info, max_info, st["null"], planned_info=later)
        s.statistic._memo = st["memo"]
        rules = st["rules"]
        last = len(tots) - 1
        # the new look's intervals at the critical values this update asks for (the repeated ones at c2 and c1, the
        # precision rule's fixed-sample one) in one search, kept in the memo with the earlier looks': a search costs
        # about as much for one cell as for many
        cs = [float(s.c2[last]), float(s.c1[last])]
        if any(isinstance(r, Precision) for r in rules):
            from scipy.special import ndtri

            cs.append(float(ndtri(1 - s.alpha / 2)))
        _interval_of(s.statistic.take((np.zeros(len(cs), int), np.full(len(cs), last))), np.array(cs))
        fires = np.stack([np.broadcast_to(r.fires(s), np.shape(s.estimate)) for r in rules])
        fired_now = fires[:, 0, last]
        if fired_now.any():
            j = int(np.argmax(fired_now))
            reason, decision, bound = rules[j].name, str(rules[j].outcome(s)[0, last]), rules[j].bound
            st["done"] = True
        elif tots[-1] >= min(st["max_n"], int(plan.sum(1)[-1])):
            # the planned schedule ends at the evaluator's max_n, which may be below start's (with fpc=True, start's
            # is the benchmark's size, the population of the correction)
            reason, decision, bound = "max_n", "no decision", "c2"
            st["done"] = True
        else:
            reason, decision, bound = "continue", "continue", "c2"
        self.result_ = self._result(rules, s, fires, last, reason, decision, bound, st["max_n"])
        return self.result_
