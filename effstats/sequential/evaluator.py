"""Adaptive (group-sequential) evaluation of one model or a pair of models.

The score is the unweighted mean of per-dataset means (the seed paper's Eq. 1); its variance is
stratified, ``sum_d var_d / n_d / D**2`` (for two models on different examples the per-dataset
variance is pooled, Eq. 3). Items are evaluated in a random order fixed by ``rng``: an
``initial`` number per dataset, then ``batch`` more per dataset at each look (stratified), until
every dataset is used or ``max_n`` items. The group-sequential boundaries come from
:func:`effstats.sequential.design` with the spending function evaluated at the fraction of the
maximum sample used by each look.

Three ways to run it:

* :meth:`SequentialEvaluator.fit` — offline on full score arrays (one random order), with a trace;
* :meth:`SequentialEvaluator.simulate` — thousands of random orders at once (vectorised);
* :meth:`SequentialEvaluator.update` — online, batch by batch, returning the decision so far.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from numbers import Real
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._validation import check_array, check_fraction, check_positive_int, check_rng, check_unit_interval
from .design import design
from .rules import LookStats, StoppingRule

__all__ = ["SequentialEvaluator", "SequentialResult", "SimulationResult", "mean_of_means"]

_MAX_LEVELS = 8  # values with at most this many distinct levels are simulated by hypergeometric draws


def _groups(groups: Any, n: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer stratum codes (n,) and the stratum labels."""
    if groups is None:
        return np.zeros(n, dtype=np.intp), np.array(["all"], dtype=object)
    g = np.asarray(groups)
    if g.ndim != 1 or g.shape[0] != n:
        raise ValueError(f"{name}: expected one group label per item ({n}), got shape {g.shape}")
    labels, codes = np.unique(g, return_inverse=True)
    return codes.astype(np.intp), labels


def mean_of_means(scores: Any, groups: Any = None) -> tuple[float, float]:
    """Unweighted mean of per-group means and its stratified standard error (no finite-population correction)."""
    x = check_unit_interval(scores, "scores", ndim=1)
    codes, labels = _groups(groups, x.size, "groups")
    n = np.bincount(codes, minlength=labels.size).astype(float)
    s1 = np.bincount(codes, x, minlength=labels.size)
    s2 = np.bincount(codes, x * x, minlength=labels.size)
    m = s1 / n
    v = np.where(n > 1, (s2 - s1 * m) / np.maximum(n - 1, 1), 0.0)
    return float(m.mean()), float(np.sqrt(np.sum(v / n)) / labels.size)


@dataclass(frozen=True)
class _Arm:
    values: np.ndarray  # (N,)
    codes: np.ndarray  # (N,)
    sizes: np.ndarray  # (D,) items per stratum


@lru_cache(maxsize=256)
def _bounds(n_tot: tuple, max_n: float, alpha: float, family: Any, param: float | None, backend: str):
    """(c2, c1): two-sided and one-sided bounds at the observed sample sizes (spending at n / max_n)."""
    info = np.asarray(n_tot, float)
    # a single look spends f(n / max_n); gsDesign needs two looks, the closed form is native
    kw = dict(information=info, max_information=max_n, spending=family, spending_param=param,
              backend=backend if info.size > 1 else "native")
    c2 = design(alpha=alpha, sided=2, **kw).upper
    c1 = design(alpha=alpha, sided=1, **kw).upper
    return c2, c1


@dataclass(frozen=True)
class SequentialResult:
    """Outcome of one adaptive evaluation.

    Attributes
    ----------
    decision : str
        Label of the rule outcome that stopped the evaluation (e.g. ``"greater"``, ``"equivalence"``,
        ``"precision"``), or ``"no decision"`` when the maximum sample was reached first.
    reason : str
        Name of the rule that fired (``"max_n"`` if none).
    n : int
        Items used (per model).
    fraction : float
        ``n`` / maximum sample.
    estimate, ci_low, ci_high : float
        Estimate and repeated confidence interval at the stopping look (valid whatever the reason).
    trace : DataFrame
        One row per look: n, estimate, se, z, bound, ci_low, ci_high and the rules that fired.
    """

    decision: str
    reason: str
    n: int
    fraction: float
    estimate: float
    ci_low: float
    ci_high: float
    trace: pd.DataFrame = field(repr=False)

    def confidence_interval(self) -> tuple[float, float]:
        return self.ci_low, self.ci_high


@dataclass(frozen=True)
class SimulationResult:
    """Vectorised outcomes of many adaptive evaluations (one per random order), arrays of shape (n_runs,)."""

    stop_look: np.ndarray
    n: np.ndarray
    fraction: np.ndarray
    reason: np.ndarray
    decision: np.ndarray
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    max_n: int

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({k: getattr(self, k) for k in
                             ("stop_look", "n", "fraction", "reason", "decision", "estimate", "ci_low", "ci_high")})


class SequentialEvaluator:
    """Adaptive evaluation with group-sequential boundaries and composable stopping rules.

    Parameters
    ----------
    rules : sequence of StoppingRule
        Checked at every look; the first look where any fires stops the evaluation.
    alpha : float
        Error level of the boundaries and of the repeated confidence intervals (two-sided).
    spending : str or SpendingFunction
        Spending family for the boundaries (default Lan–DeMets Pocock, as the seed paper).
    spending_param : float, optional
    initial, batch : int
        Items per dataset at the first look and added per dataset at each later look.
    max_n : int, optional
        Cap on the total number of items per model (default: all).
    stratified : bool
        Draw items per dataset (True) or from the pooled benchmark in one random order.
    null : float
        Value of the parameter under H0 (0 for a difference, e.g. 0.5 for a win rate).
    backend : {"native", "gsdesign"}
    rng : int or Generator, optional
        Fixes the random order of the examples.
    """

    def __init__(self, rules: Sequence[StoppingRule], *, alpha: float = 0.05, spending: Any = "ld_pocock",
                 spending_param: float | None = None, initial: int = 100, batch: int = 100, max_n: int | None = None,
                 stratified: bool = True, null: float = 0.0, backend: str = "native", rng: Any = None) -> None:
        self.rules = list(rules) if rules is not None else []
        self.alpha = alpha
        self.spending = spending
        self.spending_param = spending_param
        self.initial = initial
        self.batch = batch
        self.max_n = max_n
        self.stratified = stratified
        self.null = null
        self.backend = backend
        self.rng = rng
        self._validate_params()
        self._online: dict | None = None

    # ------------------------------------------------------------------ setup
    def _validate_params(self) -> None:
        if not self.rules:
            raise ValueError("rules: expected at least one StoppingRule")
        for r in self.rules:
            if not isinstance(r, StoppingRule):
                raise ValueError(f"rules: expected StoppingRule instances, got {type(r).__name__}")
        check_fraction(self.alpha, "alpha")
        check_positive_int(self.initial, "initial", minimum=2)
        check_positive_int(self.batch, "batch")
        if self.max_n is not None:
            check_positive_int(self.max_n, "max_n", minimum=2)
        if isinstance(self.null, bool) or not isinstance(self.null, Real) or not np.isfinite(self.null):
            raise ValueError(f"null: expected a finite number, got {self.null!r}")
        if self.backend not in ("native", "gsdesign"):
            raise ValueError(f"backend: expected 'native' or 'gsdesign', got {self.backend!r}")
        from .spending import get_spending

        get_spending(self.spending, self.spending_param)

    def _arms(self, scores_a, scores_b, paired, groups, groups_b) -> list[_Arm]:
        a = check_unit_interval(scores_a, "scores_a", ndim=1)
        codes, labels = _groups(groups, a.size, "groups")
        if scores_b is None:
            return [_Arm(a, codes, np.bincount(codes, minlength=labels.size))]
        b = check_unit_interval(scores_b, "scores_b", ndim=1)
        if paired:
            if b.size != a.size:
                raise ValueError(f"scores_b: paired scores must have the length of scores_a ({a.size}), got {b.size}")
            return [_Arm(a - b, codes, np.bincount(codes, minlength=labels.size))]
        if groups is not None and groups_b is None:
            raise ValueError("groups_b: unpaired scores with groups need the groups of scores_b")
        codes_b, labels_b = _groups(groups_b, b.size, "groups_b")
        if not np.array_equal(labels, labels_b):
            raise ValueError("groups_b: must contain the same datasets as groups")
        return [_Arm(a, codes, np.bincount(codes, minlength=labels.size)),
                _Arm(b, codes_b, np.bincount(codes_b, minlength=labels.size))]

    def _schedule(self, sizes: np.ndarray) -> np.ndarray:
        """Items per stratum at each look, shape (K, D)."""
        per = self.initial + self.batch * np.arange(0, int(np.ceil(max(sizes.max() - self.initial, 0) / self.batch)) + 1)
        n = np.minimum(per[:, None], sizes[None, :])
        if self.max_n is not None:
            tot = n.sum(1)
            keep = tot < self.max_n
            if not keep.all():
                first_over = int(np.argmin(keep))
                n = n[: first_over + 1].copy()
                # the last look stops at max_n: trim the strata proportionally to their last batch
                over = n[-1].sum() - self.max_n
                if over > 0 and first_over > 0:
                    add = n[-1] - n[-2]
                    cut = np.floor(add * over / add.sum()).astype(int)
                    cut[np.argmax(add - cut)] += over - cut.sum()
                    n[-1] = n[-1] - cut
                elif over > 0:
                    n[-1] = np.maximum(np.floor(n[-1] * self.max_n / n[-1].sum()), 1).astype(int)
        # drop repeated looks (nothing new)
        tot = n.sum(1)
        keep = np.concatenate(([True], np.diff(tot) > 0))
        return n[keep]

    # ------------------------------------------------------------------ sampling
    def _sums(self, arm: _Arm, sched: np.ndarray, n_runs: int, rng: np.random.Generator):
        """Cumulative sums S1, S2 and counts over random orders: arrays (n_runs, K, D)."""
        K, D = sched.shape
        if not self.stratified:
            return self._sums_pooled(arm, sched.sum(1), n_runs, rng)
        s1 = np.zeros((n_runs, K, D))
        s2 = np.zeros((n_runs, K, D))
        for d in range(D):
            v = arm.values[arm.codes == d]
            nd = sched[:, d]
            levels, counts = np.unique(v, return_counts=True)
            # hypergeometric draws cost a Python step per (look, level); a shuffle costs per (run, item)
            cheap_draws = K * (levels.size - 1) * 2_000 < n_runs * v.size
            if levels.size <= _MAX_LEVELS and cheap_draws:
                # sequential multivariate hypergeometric draws: O(runs * looks), no permutations
                inc = np.diff(np.concatenate(([0], nd)))
                remaining = np.broadcast_to(counts, (n_runs, levels.size)).astype(np.int64).copy()
                c = np.zeros((n_runs, K, levels.size), np.int64)
                for k in range(K):
                    left = np.full(n_runs, inc[k], np.int64)
                    for l in range(levels.size - 1):
                        rest = remaining[:, l + 1:].sum(1)
                        draw = rng.hypergeometric(remaining[:, l], rest, left) if inc[k] else np.zeros(n_runs, np.int64)
                        c[:, k, l] = draw
                        remaining[:, l] -= draw
                        left -= draw
                    c[:, k, -1] = left
                    remaining[:, -1] -= left
                cum = np.cumsum(c, axis=1)
                s1[:, :, d] = cum @ levels
                s2[:, :, d] = cum @ (levels * levels)
            else:
                x = rng.permuted(np.broadcast_to(v, (n_runs, v.size)), axis=1)
                cs1 = np.cumsum(x, axis=1)
                cs2 = np.cumsum(x * x, axis=1)
                s1[:, :, d] = cs1[:, nd - 1]
                s2[:, :, d] = cs2[:, nd - 1]
        cnt = np.broadcast_to(sched[None].astype(float), (n_runs, K, D))
        return s1, s2, cnt

    def _sums_pooled(self, arm: _Arm, tot: np.ndarray, n_runs: int, rng: np.random.Generator):
        D = arm.sizes.size
        idx = rng.permuted(np.broadcast_to(np.arange(arm.values.size), (n_runs, arm.values.size)), axis=1)
        x = arm.values[idx]
        g = arm.codes[idx]
        K = tot.size
        s1 = np.zeros((n_runs, K, D))
        s2 = np.zeros((n_runs, K, D))
        cnt = np.zeros((n_runs, K, D))
        for d in range(D):
            m = g == d
            s1[:, :, d] = np.cumsum(x * m, axis=1)[:, tot - 1]
            s2[:, :, d] = np.cumsum(x * x * m, axis=1)[:, tot - 1]
            cnt[:, :, d] = np.cumsum(m, axis=1)[:, tot - 1]
        return s1, s2, cnt

    # ------------------------------------------------------------------ statistics
    @staticmethod
    def _moments(s1, s2, cnt):
        n = np.maximum(cnt, 1)
        m = s1 / n
        v = np.where(cnt > 1, (s2 - s1 * m) / np.maximum(cnt - 1, 1), 0.0)
        return m, np.maximum(v, 0.0), cnt

    def _stats(self, sums: list, tot: np.ndarray, max_n: int) -> LookStats:
        if len(sums) == 1:
            m, v, n = self._moments(*sums[0])
            have = n > 0
            D = have.sum(-1)
            est = np.where(have, m, 0).sum(-1) / D
            var = np.where(have, v / np.maximum(n, 1), 0).sum(-1) / D**2
        else:
            ma, va, na = self._moments(*sums[0])
            mb, vb, nb = self._moments(*sums[1])
            have = (na > 0) & (nb > 0)
            D = have.sum(-1)
            sp = ((na - 1) * va + (nb - 1) * vb) / np.maximum(na + nb - 2, 1)
            est = np.where(have, ma - mb, 0).sum(-1) / D
            var = np.where(have, sp * (1 / np.maximum(na, 1) + 1 / np.maximum(nb, 1)), 0).sum(-1) / D**2
        se = np.sqrt(var)
        diff = est - self.null
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(se > 0, diff / np.where(se > 0, se, 1), np.sign(diff) * np.inf)
        z = np.nan_to_num(z, nan=0.0)
        c2, c1 = _bounds(tuple(int(x) for x in tot), float(max_n), float(self.alpha), self.spending,
                         self.spending_param, self.backend)
        return LookStats(n=np.broadcast_to(tot, est.shape), t=tot / max_n, estimate=est, se=se, z=z,
                         c2=c2, c1=c1, null=float(self.null), alpha=float(self.alpha), spending=self.spending,
                         spending_param=self.spending_param)

    def _judge(self, s: LookStats):
        fires = np.stack([r.fires(s) for r in self.rules])  # (R, runs, K)
        anyf = fires.any(0)
        K = anyf.shape[-1]
        stopped = anyf.any(-1)
        look = np.where(stopped, np.argmax(anyf, -1), K - 1)
        rows = np.arange(anyf.shape[0])
        fr = fires[:, rows, look]  # (rules, runs)
        which = np.argmax(fr, 0)
        names = np.array([r.name for r in self.rules], dtype=object)
        reason = np.where(stopped, names[which], "max_n")
        outs = np.stack([r.outcome(s)[rows, look] for r in self.rules])  # (rules, runs)
        decision = np.where(stopped, outs[which, rows], "no decision")
        return fires, look, reason, decision

    def _run(self, arms, n_runs: int, rng: np.random.Generator):
        """Schedule, ``n_runs`` random orders, statistics and stopping decisions: (stats, n per look, max_n, judged)."""
        sched = self._schedule(np.minimum.reduce([a.sizes for a in arms]))
        tot = sched.sum(1)
        max_n = int(tot[-1])
        s = self._stats([self._sums(a, sched, n_runs, rng) for a in arms], tot, max_n)
        return s, tot, max_n, self._judge(s)

    # ------------------------------------------------------------------ public API
    def simulate(self, scores_a: Any, scores_b: Any = None, *, paired: bool = True, groups: Any = None,
                 groups_b: Any = None, n_runs: int = 1000, rng: Any = None) -> SimulationResult:
        """Run ``n_runs`` adaptive evaluations over independent random orders of the same items (vectorised)."""
        n_runs = check_positive_int(n_runs, "n_runs")
        rng = check_rng(self.rng if rng is None else rng)
        arms = self._arms(scores_a, scores_b, paired, groups, groups_b)
        s, tot, max_n, (_, look, reason, decision) = self._run(arms, n_runs, rng)
        rows = np.arange(n_runs)
        return SimulationResult(stop_look=look + 1, n=tot[look], fraction=tot[look] / max_n, reason=reason,
                                decision=decision, estimate=s.estimate[rows, look], ci_low=s.ci_low[rows, look],
                                ci_high=s.ci_high[rows, look], max_n=max_n)

    def fit(self, scores_a: Any, scores_b: Any = None, *, paired: bool = True, groups: Any = None,
            groups_b: Any = None) -> SequentialResult:
        """One adaptive evaluation in a random order fixed by ``rng``; ``trace`` shows every look up to the stop."""
        rng = check_rng(self.rng)
        arms = self._arms(scores_a, scores_b, paired, groups, groups_b)
        s, _, max_n, (fires, look, reason, decision) = self._run(arms, 1, rng)
        self.result_ = self._result(s, fires, int(look[0]), str(reason[0]), str(decision[0]), max_n)
        return self.result_

    def _result(self, s: LookStats, fires, look: int, reason: str, decision: str, max_n: int) -> SequentialResult:
        K = look + 1
        fired = [",".join(r.name for j, r in enumerate(self.rules) if fires[j, 0, k]) for k in range(K)]
        trace = pd.DataFrame({
            "look": np.arange(1, K + 1), "n": s.n[0, :K].astype(int), "fraction": s.t[:K],
            "estimate": s.estimate[0, :K], "se": s.se[0, :K], "z": s.z[0, :K], "bound": s.c2[:K],
            "ci_low": s.ci_low[0, :K], "ci_high": s.ci_high[0, :K], "rule_fired": fired,
        }).set_index("look")
        return SequentialResult(decision=decision, reason=reason, n=int(s.n[0, look]), fraction=float(s.t[look]),
                                estimate=float(s.estimate[0, look]), ci_low=float(s.ci_low[0, look]),
                                ci_high=float(s.ci_high[0, look]), trace=trace)

    # ------------------------------------------------------------------ online
    def start(self, max_n: int, n_groups: int = 1) -> "SequentialEvaluator":
        """Begin an online evaluation of at most ``max_n`` items per model in ``n_groups`` datasets."""
        max_n = check_positive_int(max_n, "max_n", minimum=2)
        n_groups = check_positive_int(n_groups, "n_groups")
        from .spending import get_spending

        if get_spending(self.spending, self.spending_param).is_classic:
            raise ValueError("spending: online updates need a spending function (ld_pocock, ld_obf, hsd, power): classic "
                             "Pocock / O'Brien-Fleming bounds depend on the number of looks, unknown while data arrive")
        self._online = {"max_n": max_n, "D": n_groups, "s1": np.zeros(n_groups), "s2": np.zeros(n_groups),
                        "cnt": np.zeros(n_groups), "looks": [], "done": False}
        return self

    def update(self, scores_a: Any, scores_b: Any = None, *, groups: Any = None) -> SequentialResult:
        """Add a batch (one model, or two models paired on the same items) and return the decision so far.

        ``groups`` holds integer dataset codes in ``[0, n_groups)``. Boundaries are recomputed from
        the spending function at the observed sample sizes (fraction of ``max_n``).
        """
        if self._online is None:
            raise ValueError("update: call start(max_n, n_groups) first")
        st = self._online
        if st["done"]:
            raise ValueError("update: the evaluation has already stopped; call start() to begin a new one")
        a = check_unit_interval(scores_a, "scores_a", ndim=1)
        x = a
        if scores_b is not None:
            b = check_unit_interval(scores_b, "scores_b", ndim=1)
            if b.size != a.size:
                raise ValueError(f"scores_b: paired scores must have the length of scores_a ({a.size}), got {b.size}")
            x = a - b
        g = np.zeros(x.size, np.intp) if groups is None else check_array(groups, "groups", ndim=1, dtype=None, shape=(x.size,))
        if not np.issubdtype(g.dtype, np.integer) or g.min() < 0 or g.max() >= st["D"]:
            raise ValueError(f"groups: expected integer dataset codes in [0, {st['D']}), got {np.unique(g)[:5].tolist()}")
        st["s1"] += np.bincount(g, x, st["D"])
        st["s2"] += np.bincount(g, x * x, st["D"])
        st["cnt"] += np.bincount(g, minlength=st["D"])
        tot = int(st["cnt"].sum())
        if st["looks"] and tot <= st["looks"][-1][0]:
            raise ValueError("scores_a: an update must add at least one item")
        st["looks"].append((tot, st["s1"].copy(), st["s2"].copy(), st["cnt"].copy()))
        tots = np.array([lk[0] for lk in st["looks"]])
        max_n = max(st["max_n"], tot)
        sums = [tuple(np.stack([lk[j] for lk in st["looks"]])[None] for j in (1, 2, 3))]
        s = self._stats(sums, tots, max_n)
        fires = np.stack([r.fires(s) for r in self.rules])
        last = len(tots) - 1
        fired_now = fires[:, 0, last]
        if fired_now.any():
            j = int(np.argmax(fired_now))
            reason, decision = self.rules[j].name, str(self.rules[j].outcome(s)[0, last])
            st["done"] = True
        elif tot >= st["max_n"]:
            reason, decision = "max_n", "no decision"
            st["done"] = True
        else:
            reason, decision = "continue", "continue"
        # earlier looks did not stop the evaluation: show only the rules that fired at each look
        self.result_ = self._result(s, fires, last, reason, decision, max_n)
        return self.result_
