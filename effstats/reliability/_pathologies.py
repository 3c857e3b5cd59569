"""MWR pathologies (App. B) and the clone / removal detectors on real tables (Sect. 5.5)."""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from .._shared import _plain
from .._validation import check_positive_int
from ._benchmark import _TIES, Benchmark, _choice
from ._winrate import _mwr_from_counts, _scenario_table, _win_counts, mean_win_rate

# =============================================================================================
# MWR pathologies (App. B) and detectors on real tables
# =============================================================================================
@dataclass(frozen=True, eq=False)
class Counterexample:
    """An App. B construction: scores and MWR before / after a change that should not matter.

    Attributes
    ----------
    name, description : str
        Short name and what changes.
    before, after : DataFrame of shape (n_models, n_columns)
        Scores before and after the change.
    mwr_before, mwr_after : Series
        Mean Win Rate of each model before and after.
    flipped : tuple of (str, str)
        The pair whose order reverses: first ahead before, second ahead after.
    groups_before, groups_after : ndarray or None
        Scenario of each column (None: each column is its own scenario).

    See Also
    --------
    effstats.reliability.counterexample_weaker_model : Adding weaker models.
    effstats.reliability.counterexample_grouping : Grouping datasets into scenarios.
    effstats.reliability.counterexample_partial_reporting : Leaving out a scenario.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), App. B.

    Examples
    --------
    >>> from effstats.reliability import counterexample_grouping
    >>> ce = counterexample_grouping()
    >>> ce.flipped, ce.flips
    (('A', 'B'), True)
    """

    name: str
    description: str
    before: pd.DataFrame
    after: pd.DataFrame
    mwr_before: pd.Series
    mwr_after: pd.Series
    flipped: tuple[str, str]
    groups_before: np.ndarray | None = None
    groups_after: np.ndarray | None = None

    @property
    def flips(self) -> bool:
        """Whether the strict order of the ``flipped`` pair reverses (becoming tied is not a reversal).

        Returns
        -------
        bool

        See Also
        --------
        effstats.reliability.clone_flips : Reversals searched for on a real table.

        Examples
        --------
        >>> from effstats.reliability import counterexample_weaker_model
        >>> counterexample_weaker_model(1).flips, counterexample_weaker_model(2).flips
        (False, True)
        """
        a, b = self.flipped
        return bool((self.mwr_before[a] > self.mwr_before[b]) and (self.mwr_after[a] < self.mwr_after[b]))


def counterexample_weaker_model(n_weaker: int = 2) -> Counterexample:
    """App. B "adding a model": A = (10, 10, 10), B = (12, 12, 8); adding weaker C = (9, 9, 9).

    With one C the two tie (App. B: 0.5, 0.5, 1 vs 1, 1, 0); with ``n_weaker`` ≥ 2 copies A overtakes B.

    Parameters
    ----------
    n_weaker : int, default=2
        Copies of the weaker model C added.

    Returns
    -------
    effstats.reliability.Counterexample

    See Also
    --------
    effstats.reliability.clone_flips : The same effect searched for on a real table.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), App. B.

    Examples
    --------
    >>> from effstats.reliability import counterexample_weaker_model
    >>> ce = counterexample_weaker_model()
    >>> ce.mwr_before.round(3).tolist(), ce.mwr_after[["A", "B"]].round(3).tolist()
    ([0.333, 0.667], [0.778, 0.667])
    """
    n_weaker = check_positive_int(n_weaker, "n_weaker")
    before = pd.DataFrame([[10.0, 10, 10], [12, 12, 8]], index=["A", "B"], columns=["s1", "s2", "s3"])
    weak = pd.DataFrame([[9.0, 9, 9]] * n_weaker, index=[f"C{i + 1}" for i in range(n_weaker)], columns=before.columns)
    after = pd.concat([before, weak])
    return Counterexample("weaker_model", f"adding {n_weaker} model(s) weaker than both in every scenario",
                          before, after, mean_win_rate(before), mean_win_rate(after), ("B", "A"))


def counterexample_grouping() -> Counterexample:
    """App. B "combining datasets": A = (1, 1, 0, 0), B = (0, 0, 1, 1); grouping the first two
    datasets into one scenario makes B the winner, grouping the last two makes A the winner.

    Returns
    -------
    effstats.reliability.Counterexample
        ``before`` and ``after`` hold the same scores; ``groups_before`` / ``groups_after`` differ.

    See Also
    --------
    effstats.reliability.dior : ``decision="subscenarios"`` measures how much such choices move a ranking.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), App. B.

    Examples
    --------
    >>> from effstats.reliability import counterexample_grouping
    >>> ce = counterexample_grouping()
    >>> ce.mwr_before.round(3).tolist(), ce.mwr_after.round(3).tolist()
    ([0.667, 0.333], [0.333, 0.667])
    """
    t = pd.DataFrame([[1.0, 1, 0, 0], [0, 0, 1, 1]], index=["A", "B"], columns=["d1", "d2", "d3", "d4"])
    g_last = np.array(["d1", "d2", "S34", "S34"])
    g_first = np.array(["S12", "S12", "d3", "d4"])
    return Counterexample("grouping", "grouping d3+d4 (A wins) vs grouping d1+d2 (B wins)", t, t,
                          mean_win_rate(t, g_last), mean_win_rate(t, g_first), ("A", "B"), g_last, g_first)


def counterexample_partial_reporting(n_models: int = 11) -> Counterexample:
    """App. B "reporting partially": A's per-scenario win rates are (0.9, 0.9, 0), B's (0.8, 0.8, 0.8);
    A omitting its losing scenario lifts its MWR from 0.6 to 0.9, above B.

    Parameters
    ----------
    n_models : int, default=11
        Number of models (at least 11); with 11, win rates are multiples of 0.1.

    Returns
    -------
    effstats.reliability.Counterexample

    See Also
    --------
    effstats.reliability.mean_win_rate : Omits a model's missing scenarios (``CS_m``).

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), App. B.

    Examples
    --------
    >>> from effstats.reliability import counterexample_partial_reporting
    >>> ce = counterexample_partial_reporting()
    >>> ce.mwr_before[["A", "B"]].round(3).tolist(), ce.mwr_after[["A", "B"]].round(3).tolist()
    ([0.6, 0.8], [0.9, 0.793])
    """
    n = check_positive_int(n_models, "n_models", minimum=11)
    # Rank positions (0 = worst) chosen so that A beats 9/10, 9/10, 0/10 and B beats 8/10 in each scenario.
    others = [f"M{i}" for i in range(n - 2)]
    idx = ["A", "B", *others]
    cols = {}
    for j, a_pos in enumerate([n - 2, n - 2, 0]):
        b_pos = n - 3
        rest = [p for p in range(n) if p not in (a_pos, b_pos)]
        cols[f"s{j + 1}"] = [a_pos, b_pos, *rest]
    before = pd.DataFrame(cols, index=idx, dtype=float)
    after = before.copy()
    after.loc["A", "s3"] = np.nan
    return Counterexample("partial_reporting", "A does not report the scenario it loses", before, after,
                          mean_win_rate(before), mean_win_rate(after), ("B", "A"))


def _reversals(base: np.ndarray, new: np.ndarray) -> np.ndarray:
    """(C, k, k) bool: pairs (i, j) of the top models with base[i] > base[j] but new[i] < new[j] — a real change
    of order (reaching a tie is not one: the tied pair keeps its place in a ranking that reports ties)."""
    return (base[:, None] > base[None, :])[None] & (new[:, :, None] < new[:, None, :])


def _scenarios_and_counts(bench: Benchmark, ties: str):
    """Scenario scores (M, S) with NaN at missing cells, exact win counts and the models' MWR (M,)."""
    num, den = bench.sub_sums()
    scen = _scenario_table(num, den, bench.scen_of_sub, bench.n_scen)[0]
    wins2, n2, valid = _win_counts(scen, ties)
    return scen, wins2, n2, valid, _mwr_from_counts(wins2, n2, valid)


def _flip_rows(bench: Benchmark, order: np.ndarray, base: np.ndarray, new: np.ndarray, cands: np.ndarray,
               rev: np.ndarray) -> list[dict]:
    """One row per candidate with a real reorder: the top models before / after, their MWR, the reversed pairs."""
    rows = []
    ids = bench.model_ids
    for c in cands:
        nw = new[c]
        new_order = np.argsort(-nw, kind="stable")
        swaps = [f"{ids[order[i]]} > {ids[order[j]]} becomes <" for i, j in zip(*np.nonzero(rev[c]))]
        rows.append(dict(old_top=list(ids[order]), new_top=list(ids[order[new_order]]),
                         old_mwr=base.round(4).tolist(), new_mwr=nw[new_order].round(4).tolist(), reversed=swaps))
    return rows


def clone_flips(data: Any, *, top_k: int = 5, n_clones: int = 1, eps: float | None = None,
                ties: str = "strict", **kw: Any) -> pd.DataFrame:
    """Search for a dominated "clone" whose insertion reorders the current top models (Sect. 5.5).

    For every model c a clone slightly below c in every scenario it reports (by ``eps``, default half
    the smallest gap between distinct scores, so the clone loses to c and to nobody c beats) is added
    ``n_clones`` times. Win counts are updated exactly for the ``top_k`` models only (O(M·k·S)).
    Only real changes of order are flagged: a pair of top models whose strict order reverses; a pair
    that merely becomes tied is not a reorder.

    Parameters
    ----------
    data : DataFrame (models × scenarios), ResponseMatrix or effstats.reliability.Benchmark
        Scores; NaN = not evaluated.
    top_k : int, default=5
        How many top models are watched (at least 2).
    n_clones : int, default=1
        Copies of the clone inserted.
    eps : float, optional
        How far below the original the clone scores. Default: half the smallest gap between distinct scores.
    ties : {"strict", "half"}, default="strict"
        Ties in the win rate.
    **kw
        Item column names (``scenario``, ``subscenario``).

    Returns
    -------
    DataFrame
        One row per candidate that reverses the order of two of the ``top_k`` models: clone_of, n_clones,
        old_top, new_top (the top-k order after insertion; they always differ), old_mwr, new_mwr, reversed
        (the pairs whose order reverses).

    See Also
    --------
    effstats.reliability.removal_flips : Removals instead of insertions.
    effstats.reliability.counterexample_weaker_model : App. B's construction.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Sect. 5.5, App. B.

    Examples
    --------
    Two clones of A, each just below it, take wins from B in the scenario where B trails A:

    >>> import pandas as pd
    >>> from effstats.reliability import clone_flips, mean_win_rate
    >>> t = pd.DataFrame({"s1": [10.0, 12, 1], "s2": [10.0, 12, 2], "s3": [10.0, 8, 3]}, index=["A", "B", "D"])
    >>> mean_win_rate(t).round(3).tolist()
    [0.667, 0.833, 0.0]
    >>> clone_flips(t, top_k=2, n_clones=2)[["clone_of", "old_top", "new_top"]]
      clone_of old_top new_top
    0        A  [B, A]  [A, B]
    """
    _choice(ties, "ties", _TIES)
    bench = Benchmark.from_data(data, **kw)
    top_k = check_positive_int(top_k, "top_k", minimum=2, maximum=bench.n_models)
    n_clones = check_positive_int(n_clones, "n_clones")
    bench.check_connected("data")
    scen, wins2, n2, valid, base_all = _scenarios_and_counts(bench, ties)
    if eps is None:
        v = np.unique(scen[~np.isnan(scen)])
        eps = 0.5 * float(np.diff(v).min()) if v.size > 1 else 1e-9
    elif isinstance(eps, bool) or not isinstance(eps, Real) or not (0 < eps < np.inf):
        raise ValueError(f"eps: expected a finite positive number, got {_plain(eps)!r}")
    order = np.argsort(-base_all, kind="stable")[:top_k]
    obs = ~np.isnan(scen)
    xt = scen[order]  # (k, S)
    clone = scen - eps  # (C, S), NaN where c did not report
    beat = (xt[None] > clone[:, None, :])  # (C, k, S)
    tie = (xt[None] == clone[:, None, :]) if ties == "half" else np.zeros_like(beat)
    present = obs[:, None, :]  # the clones report where c reports
    w_new = wins2[order][None] + np.where(present, n_clones * (2 * beat + tie), 0)
    n_new = n2[None] + np.where(present, 2 * n_clones, 0)  # (C, 1, S)
    v_new = obs[order][None] & (n_new > 0)
    new = _mwr_from_counts(w_new, n_new, v_new)  # (C, k)
    base = base_all[order]
    rev = _reversals(base, new)
    hit = np.flatnonzero(rev.any(axis=(1, 2)))
    rows = [dict(clone_of=bench.model_ids[c], n_clones=n_clones, **r)
            for c, r in zip(hit, _flip_rows(bench, order, base, new, hit, rev))]
    return pd.DataFrame(rows, columns=["clone_of", "n_clones", "old_top", "new_top", "old_mwr", "new_mwr", "reversed"])


def removal_flips(data: Any, *, top_k: int = 2, ties: str = "strict", **kw: Any) -> pd.DataFrame:
    """Models (outside the top ``top_k``) whose removal reverses the order of two top models (davinci2 / Cohere flip).

    Removing a model drops it as an opponent everywhere (App. A); win counts are updated exactly for the
    top models only. A pair that merely becomes tied is not flagged.

    Parameters
    ----------
    data : DataFrame (models × scenarios), ResponseMatrix or effstats.reliability.Benchmark
        Scores; NaN = not evaluated.
    top_k : int, default=2
        How many top models are watched (at least 2, fewer than the models).
    ties : {"strict", "half"}, default="strict"
        Ties in the win rate.
    **kw
        Item column names (``scenario``, ``subscenario``).

    Returns
    -------
    DataFrame
        One row per model whose removal reverses two top models: removed, old_top, new_top, old_mwr, new_mwr,
        reversed.

    See Also
    --------
    effstats.reliability.clone_flips : Insertions of dominated clones.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Sect. 5.5.

    Examples
    --------
    Removing C leaves A and B tied, which is not a reversal:

    >>> import pandas as pd
    >>> from effstats.reliability import removal_flips
    >>> t = pd.DataFrame({"s1": [10.0, 12, 9], "s2": [10.0, 12, 9], "s3": [10.0, 8, 9]}, index=["A", "B", "C"])
    >>> t.loc["C2"] = [9.0, 9, 9]
    >>> len(removal_flips(t, top_k=2))
    0
    """
    _choice(ties, "ties", _TIES)
    bench = Benchmark.from_data(data, **kw)
    top_k = check_positive_int(top_k, "top_k", minimum=2, maximum=bench.n_models - 1)
    bench.check_connected("data")
    scen, wins2, n2, valid, base_all = _scenarios_and_counts(bench, ties)
    order = np.argsort(-base_all, kind="stable")[:top_k]
    obs = ~np.isnan(scen)
    xt = scen[order]
    gone = obs[:, None, :]  # (R, 1, S): the removed model was an opponent there
    lost = 2 * (xt[None] > scen[:, None, :]) + ((xt[None] == scen[:, None, :]) if ties == "half" else 0)
    w_new = wins2[order][None] - np.where(gone & obs[order][None], lost, 0)
    n_new = n2[None] - np.where(gone, 2, 0)
    v_new = obs[order][None] & (n_new > 0)
    new = _mwr_from_counts(w_new, n_new, v_new)  # (R, k)
    base = base_all[order]
    rev = _reversals(base, new)
    changed = rev.any(axis=(1, 2))
    changed[order] = False  # removing a top model trivially changes the top list
    hit = np.flatnonzero(changed)
    rows = [dict(removed=bench.model_ids[c], **r) for c, r in zip(hit, _flip_rows(bench, order, base, new, hit, rev))]
    return pd.DataFrame(rows, columns=["removed", "old_top", "new_top", "old_mwr", "new_mwr", "reversed"])
