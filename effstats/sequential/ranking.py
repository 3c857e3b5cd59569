"""Ranking several models by pairwise sequential comparisons, with a multiplicity correction.

Each pair is compared by a :class:`~effstats.sequential.evaluator.SequentialEvaluator` on the
same examples (paired). At its stopping look the comparison gets the stage-wise ordering
p-value of the group-sequential test (the probability under H0 of stopping earlier for efficacy
or at the same look with a larger ``|z|``, as gsDesign's ``sequentialPValue``); the p-values of
all pairs are adjusted with statsmodels' ``multipletests`` (Holm or Bonferroni), which the seed
paper skipped.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any, Sequence

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from .._validation import check_unit_interval
from ..responses import ResponseMatrix
from .design import design
from .evaluator import SequentialEvaluator
from .native import gsprob
from .rules import Efficacy, StoppingRule

__all__ = ["sequential_pvalue", "PairwiseRanking", "rank_models"]


def sequential_pvalue(z: float, look: int, n: Sequence[float], max_n: float, alpha: float = 0.05,
                      spending: str = "ld_pocock", spending_param: float | None = None) -> float:
    """Two-sided stage-wise ordering p-value for a symmetric group-sequential test stopped at ``look`` (1-based).

    Parameters
    ----------
    z : float
        Statistic at the stopping look.
    look : int
        Stopping look (1-based).
    n : array (K,)
        Sample sizes of the looks (at least up to ``look``).
    max_n : float
        Planned maximum sample (spending is evaluated at ``n / max_n``).
    """
    n = np.asarray(n, dtype=float)
    if not 1 <= look <= n.size:
        raise ValueError(f"look: expected an integer in [1, {n.size}], got {look}")
    if not np.isfinite(z):
        return 0.0
    k = int(look)
    if k == 1 and n.size == 1:
        b = np.array([abs(z)])
    else:
        c = design(alpha=alpha, sided=2, spending=spending, spending_param=spending_param,
                   information=n[: max(k, 2)], max_information=max_n).upper[:k].copy()
        b = c
        b[k - 1] = abs(z)
    p = gsprob(0.0, n[:k], -b, b)
    return float(min(1.0, p["probhi"].sum() + p["problo"].sum()))


@dataclass(frozen=True)
class PairwiseRanking:
    """Pairwise sequential comparisons and the ranking they imply.

    Attributes
    ----------
    pairs : DataFrame
        One row per pair: model_a, model_b, n, fraction, estimate (a - b), ci_low, ci_high, z,
        decision, reason, p_value (sequential), p_adjusted, significant (after correction), winner.
    ranking : DataFrame
        Models sorted by Copeland score (significant wins - losses), then by the mean estimated
        difference to the other models; with ``rank``.
    fraction_used : float
        Items evaluated over all pairs / items a full evaluation of every pair would use.
    """

    pairs: pd.DataFrame
    ranking: pd.DataFrame
    fraction_used: float
    correction: str


def rank_models(scores: Any, *, rules: Sequence[StoppingRule] | None = None, correction: str = "holm",
                alpha: float = 0.05, groups: Any = None, model_ids: Sequence | None = None, rng: Any = None,
                **evaluator_kw: Any) -> PairwiseRanking:
    """Rank models by sequential pairwise comparisons with a Holm / Bonferroni correction over the pairs.

    Parameters
    ----------
    scores : array (n_models, n_items) in [0, 1] or ResponseMatrix
        Per-item scores of every model on the same items.
    rules : sequence of StoppingRule, optional
        Default: two-sided efficacy.
    correction : {"holm", "bonferroni"}
        Passed to ``statsmodels.stats.multitest.multipletests``.
    groups : array (n_items,), optional
        Dataset of each item (mean of means). A ResponseMatrix's first item column is used by default.
    **evaluator_kw
        ``initial``, ``batch``, ``spending``, ``max_n``, ... for :class:`SequentialEvaluator`.
    """
    if correction not in ("holm", "bonferroni"):
        raise ValueError(f"correction: expected 'holm' or 'bonferroni', got {correction!r}")
    if isinstance(scores, ResponseMatrix):
        if scores.missing is not None:
            raise ValueError("scores: a complete matrix is required for paired comparisons")
        if groups is None and len(scores.items.columns):
            groups = scores.items.iloc[:, 0].to_numpy()
        model_ids = list(scores.model_ids) if model_ids is None else model_ids
        x = scores.values.astype(float)
    else:
        x = check_unit_interval(scores, "scores", ndim=2)
    m = x.shape[0]
    if m < 2:
        raise ValueError(f"scores: expected at least 2 models, got {m}")
    ids = list(model_ids) if model_ids is not None else [f"m{i}" for i in range(m)]
    if len(ids) != m:
        raise ValueError(f"model_ids: expected {m} ids, got {len(ids)}")
    ev = SequentialEvaluator(rules or [Efficacy()], alpha=alpha, rng=rng, **evaluator_kw)
    rows = []
    for i, j in combinations(range(m), 2):
        res = ev.fit(x[i], x[j], groups=groups)
        tr = res.trace
        p = sequential_pvalue(float(tr["z"].iloc[-1]), len(tr), tr["n"].to_numpy(), res.n / res.fraction,
                              alpha=alpha, spending=ev.spending, spending_param=ev.spending_param)
        rows.append(dict(model_a=ids[i], model_b=ids[j], n=res.n, fraction=res.fraction, estimate=res.estimate,
                         ci_low=res.ci_low, ci_high=res.ci_high, z=float(tr["z"].iloc[-1]), decision=res.decision,
                         reason=res.reason, p_value=p))
    pairs = pd.DataFrame(rows)
    rej, padj, _, _ = multipletests(pairs["p_value"].to_numpy(), alpha=alpha, method=correction)
    pairs["p_adjusted"] = padj
    pairs["significant"] = rej
    pairs["winner"] = np.where(rej, np.where(pairs["estimate"] > 0, pairs["model_a"], pairs["model_b"]), None)
    wins = pd.Series(0, index=ids, dtype=int)
    for _, r in pairs[pairs["significant"]].iterrows():
        loser = r["model_b"] if r["winner"] == r["model_a"] else r["model_a"]
        wins[r["winner"]] += 1
        wins[loser] -= 1
    # tie-break on the average estimated difference to the other models (data actually evaluated)
    diff = pd.concat([pairs.set_index("model_a")["estimate"], -pairs.set_index("model_b")["estimate"]])
    ranking = pd.DataFrame({"copeland": wins, "mean_difference": diff.groupby(level=0).mean().reindex(ids)},
                           index=pd.Index(ids, name="model"))
    ranking = ranking.sort_values(["copeland", "mean_difference"], ascending=False)
    ranking["rank"] = np.arange(1, m + 1)
    frac = float(pairs["n"].sum() / (pairs["n"] / pairs["fraction"]).sum())
    return PairwiseRanking(pairs=pairs, ranking=ranking, fraction_used=frac, correction=correction)
