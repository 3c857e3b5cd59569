"""Benchmark scores: Mean Win Rate (App. A), mean score and mean of means, vectorised over resamples."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_array
from .._shared import _group_means
from ..responses import ResponseMatrix
from ._benchmark import _TIES, Benchmark, _choice, _components, _raise_if_disconnected, _warn_negated_means

# =============================================================================================
# Scores: mean win rate, mean score, mean of means (vectorised over leading axes)
# =============================================================================================
def _less_and_ties(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For x (..., M, S): per cell, how many other models along axis -2 are strictly lower / equal.

    Sort-based (O(M log M)) so it scales to many models; +inf marks missing cells, which are never
    lower than an observed score.
    """
    xs = np.moveaxis(x, -2, -1)
    order = np.argsort(xs, axis=-1, kind="stable")
    srt = np.take_along_axis(xs, order, axis=-1)
    M = srt.shape[-1]
    pos = np.broadcast_to(np.arange(M), srt.shape)
    first = np.ones(srt.shape, bool)
    first[..., 1:] = srt[..., 1:] != srt[..., :-1]
    start = np.maximum.accumulate(np.where(first, pos, 0), axis=-1)
    last = np.ones(srt.shape, bool)
    last[..., :-1] = first[..., 1:]
    end = np.flip(np.minimum.accumulate(np.flip(np.where(last, pos, M - 1), -1), axis=-1), -1)
    less = np.empty(srt.shape, np.intp)
    ties = np.empty(srt.shape, np.intp)
    np.put_along_axis(less, order, start, axis=-1)
    np.put_along_axis(ties, order, end - start, axis=-1)
    return np.moveaxis(less, -1, -2), np.moveaxis(ties, -1, -2)


def _win_counts(scen: np.ndarray, ties: str = "strict") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Integer win counts from scenario scores (..., M, S) with NaN at missing cells.

    Returns ``wins2`` (..., M, S): twice the wins (a tie is 1 = half a win with ``ties="half"``, 0 with
    ``"strict"``), ``n2`` (..., 1, S): twice the number of opponents (the other models observed in the
    scenario) and ``valid`` (..., M, S): observed cells with at least one opponent. Twice, so that half
    credits stay integers and win rates ``wins2 / n2`` are exact rationals.
    """
    obs = ~np.isnan(scen)
    less, eq = _less_and_ties(np.where(obs, scen, np.inf))
    n_opp = obs.sum(axis=-2, keepdims=True) - 1
    wins2 = 2 * less + (eq if ties == "half" else 0)
    return wins2.astype(np.int64), (2 * n_opp).astype(np.int64), obs & (n_opp > 0)


def _mwr_from_counts(wins2: np.ndarray, n2: np.ndarray, valid: np.ndarray,
                     scen_w: np.ndarray | None = None) -> np.ndarray:
    """Exact Mean Win Rate (..., M): ``Σ_s c_s wins_s / n_s  /  Σ_s c_s`` over the valid scenarios.

    Every win rate is brought to the common denominator L = lcm of the n_s, so numerator and denominator
    are exact integers and the MWR is ONE correctly rounded division: two models with the same rational
    MWR (e.g. 2/5 reached through different win rates) get bit-identical floats, so ties stay ties in
    rankings, Kendall τ, best-model switches and the detectors. ``scen_w`` (..., S) are integer
    multiplicities (resampled scenarios). Beyond 2**53 the integers are Python ints (exact, slower).
    """
    if scen_w is not None and wins2.ndim == 3 and wins2.shape[0] == 1 and np.ndim(scen_w) == 2:
        out = _mwr_matmul(wins2[0], n2[0], valid[0], np.asarray(scen_w, dtype=float))
        if out is not None:
            return out
    c = np.ones(1, np.int64) if scen_w is None else np.rint(np.asarray(scen_w)).astype(np.int64)[..., None, :]
    cw = np.where(valid, c, 0)
    csum = cw.sum(-1)
    ns = np.unique(np.broadcast_to(n2, valid.shape)[valid]) if valid.any() else np.array([2])
    L = math.lcm(*[int(v) for v in ns])
    big = L * int(csum.max(initial=1)) >= 2 ** 53
    if big:  # many distinct opponent counts (ragged tables): exact Python integers
        f = np.array([L // int(v) if v > 0 else 0 for v in np.ravel(n2)], dtype=object).reshape(n2.shape)
        num = (wins2.astype(object) * f * cw.astype(object)).sum(-1)
        den = csum.astype(object) * L
        out = np.array([float(Fraction(int(a), int(b))) if b else np.nan for a, b in zip(np.ravel(num), np.ravel(den))])
        return out.reshape(csum.shape)
    f = np.where(n2 > 0, L // np.maximum(n2, 1), 0)
    num = (wins2 * f * cw).sum(-1)
    den = csum * L
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _mwr_matmul(wins2: np.ndarray, n2: np.ndarray, valid: np.ndarray, c: np.ndarray) -> np.ndarray | None:
    """One table (M, S) under many scenario multiplicities c (B, S): the exact MWR as two BLAS products.

    Exact because every product and partial sum is an integer below 2**53 (checked), which float64 holds.
    Returns None when that bound fails (the caller then uses Python integers)."""
    ns = np.unique(np.broadcast_to(n2, valid.shape)[valid]) if valid.any() else np.array([2])
    L = math.lcm(*[int(v) for v in ns])
    if L * max(float(c.sum(1).max(initial=1)), 1.0) >= 2 ** 53:
        return None
    f = np.where(n2 > 0, L // np.maximum(n2, 1), 0)
    num = c @ np.where(valid, wins2 * f, 0).astype(float).T  # (B, M)
    den = (c @ valid.astype(float).T) * L
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _mwr_one_out(wins2: np.ndarray, n2: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact MWR of one table (the counts of :func:`_win_counts`, leading axis 1) without each scenario and of
    each scenario alone, two arrays (S, M): ``_mwr_from_counts(wins2, n2, valid, w)`` for the weights ``w = 1 - e_s``
    and ``e_s`` of every scenario s, the same floats in O(M S).

    Each MWR is one correctly rounded division of exact integers, whatever path computes them; the integers without
    scenario s are the sums over every scenario less its own term."""
    w2, n2, v = wins2[0], n2[0], valid[0]  # (M, S), (1, S), (M, S)
    ns = np.unique(np.broadcast_to(n2, v.shape)[v]) if v.any() else np.array([2])
    L = math.lcm(*[int(x) for x in ns])
    S = v.shape[1]
    if L * max(S, 1) < 2 ** 53:  # every sum an integer that float64 holds: numpy's division is the rounded one
        term = np.where(v, w2 * np.where(n2 > 0, L // np.maximum(n2, 1), 0), 0)
        seen = v.astype(np.int64)
        pairs = ((term.sum(1, keepdims=True) - term, (seen.sum(1, keepdims=True) - seen) * L), (term, seen * L))
        with np.errstate(invalid="ignore", divide="ignore"):
            return tuple(np.where(d > 0, n / np.where(d > 0, d, 1), np.nan).T for n, d in pairs)
    f = [L // int(x) if x > 0 else 0 for x in np.ravel(n2)]  # beyond: Python's integers, and Fraction's rounding
    term = [[int(w2[m, s]) * f[s] if v[m, s] else 0 for s in range(S)] for m in range(v.shape[0])]
    seen, total = v.sum(1).tolist(), [sum(row) for row in term]
    exact = lambda a, b: float(Fraction(a, b)) if b else np.nan  # noqa: E731
    without = [[exact(total[m] - row[s], (seen[m] - int(v[m, s])) * L) for m, row in enumerate(term)]
               for s in range(S)]
    alone = [[exact(row[s], int(v[m, s]) * L) for m, row in enumerate(term)] for s in range(S)]
    return np.array(without, float).reshape(S, -1), np.array(alone, float).reshape(S, -1)


def _mwr(scen: np.ndarray, ties: str = "strict", scen_w: np.ndarray | None = None) -> np.ndarray:
    """Exact MWR (..., M) from scenario scores (..., M, S), NaN = not evaluated."""
    return _mwr_from_counts(*_win_counts(scen, ties), scen_w)


def _weighted_nanmean(x: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Mean over the last axis omitting NaN, with optional weights broadcast to x (multiplicities)."""
    if w is not None:  # one table scored under many weightings: broadcast (1, M, S) against (B, 1, S)
        shape = np.broadcast_shapes(x.shape, w.shape)
        x, w = np.broadcast_to(x, shape), np.broadcast_to(w, shape)
    ok = ~np.isnan(x)
    ww = ok.astype(float) if w is None else w * ok
    den = ww.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (np.where(ok, x, 0.0) * ww).sum(-1) / np.where(den > 0, den, 1), np.nan)


def _scenario_table(num: np.ndarray, den: np.ndarray, scen_of_sub: np.ndarray, n_scen: int,
                    sub_w: np.ndarray | None = None) -> np.ndarray:
    """Scenario scores (B, M, n_scen): the mean over a scenario's subscenarios of their means (App. A)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        sub = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    if sub_w is not None:
        shape = np.broadcast_shapes(sub.shape, sub_w[:, None, :].shape)
        sub = np.broadcast_to(sub, shape)
    ok = ~np.isnan(sub)
    w = ok.astype(float) if sub_w is None else sub_w[:, None, :] * ok
    return _group_means(np.where(ok, sub, 0.0), w, scen_of_sub, n_scen)


def _score(bench: Benchmark, num: np.ndarray, den: np.ndarray, score: str, ties: str,
           sub_w: np.ndarray | None = None, scen_w: np.ndarray | None = None,
           model_mask: np.ndarray | None = None) -> np.ndarray:
    """Benchmark score (B, M) from subscenario sums; ``sub_w`` (B, n_sub) / ``scen_w`` (B, n_scen)
    are resampling multiplicities, ``model_mask`` drops models (as if never submitted)."""
    if model_mask is not None:
        num, den = num[:, model_mask], den[:, model_mask]
    if score == "mean":
        # Micro average over every evaluated item (each scenario copy counts again when resampled).
        w = np.ones(num.shape[0::2]) if sub_w is None else sub_w
        if scen_w is not None:
            w = w * scen_w[:, bench.scen_of_sub]
        if num.shape[0] == 1 and w.shape[0] > 1:  # one table under many weightings: BLAS products
            n, d = w @ num[0].T, w @ den[0].T
        else:
            n, d = (num * w[:, None, :]).sum(-1), (den * w[:, None, :]).sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(d > 0, n / np.where(d > 0, d, 1), np.nan)
    return _score_from_scenarios(_scenario_table(num, den, bench.scen_of_sub, bench.n_scen, sub_w), score, ties, scen_w)


def _scorer(bench: Benchmark, num: np.ndarray, den: np.ndarray, score: str, ties: str) -> Any:
    """``scen_w -> _score(bench, num, den, score, ties, scen_w=scen_w)`` for many weightings of one table, with
    what does not depend on the weights (the scenario table, the MWR's win counts) computed once: the same
    numbers, without sorting every scenario again for each weighting."""
    if score == "mean":
        return lambda scen_w: _score(bench, num, den, score, ties, scen_w=scen_w)
    scen = _scenario_table(num, den, bench.scen_of_sub, bench.n_scen)
    if score == "mwr":
        counts = _win_counts(scen, ties)
        return lambda scen_w: _mwr_from_counts(*counts, scen_w)
    return lambda scen_w: _score_from_scenarios(scen, score, ties, scen_w)


def _score_from_scenarios(scen: np.ndarray, score: str, ties: str, scen_w: np.ndarray | None = None) -> np.ndarray:
    """Mean of means or MWR (B, M) from scenario scores (B, M, n_scen) of the models that compete."""
    sw = None if scen_w is None else scen_w[:, None, :]
    if score == "mean_of_means":
        if scen_w is not None and scen.shape[0] == 1 and scen_w.shape[0] > 1:  # BLAS products, no (B, M, S) array
            ok = ~np.isnan(scen[0])
            n, d = scen_w @ np.where(ok, scen[0], 0.0).T, scen_w @ ok.astype(float).T
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(d > 0, n / np.where(d > 0, d, 1), np.nan)
        return _weighted_nanmean(scen, sw)
    return _mwr(scen, ties, scen_w)


def _as_scores(scores: Any, name: str = "scores",
               groups: Any = None) -> tuple[np.ndarray, pd.Index | None, pd.Index | None]:
    """Scores with NaN where not evaluated, model ids and item ids; a DataFrame's published aggregate columns are
    left out (:meth:`Benchmark.from_data`) unless ``groups`` says its columns are subscenarios."""
    if isinstance(scores, ResponseMatrix):
        return scores.values_with_nan(), scores.model_ids, scores.item_ids
    if isinstance(scores, pd.DataFrame):
        b = Benchmark.from_data(scores, name=name, groups=groups)
        return np.where(b.observed, b.values, np.nan), b.model_ids, b.item_ids
    arr = check_array(scores, name, ndim=None, allow_nan=True)
    if arr.ndim < 2:
        raise ValueError(f"{name}: expected an array (..., n_models, n_scenarios), got shape {arr.shape}")
    return arr, None, None


def _item_scenarios(scores: Any) -> np.ndarray | None:
    """The scenario of each item of a ResponseMatrix, as Benchmark.from_data reads it by default: its ``scenario``
    item column, or else its ``task`` column (what the harness and HELM readers write); None otherwise."""
    if not isinstance(scores, ResponseMatrix):
        return None
    for col in ("scenario", "task"):
        if col in scores.items.columns:
            return scores.items[col].to_numpy()
    return None


def _grouped(x: np.ndarray, groups: Any, name: str = "groups") -> tuple[np.ndarray, pd.Index]:
    """Average subscenario columns within their scenario first (App. A), omitting missing cells."""
    g = np.asarray(groups)
    if g.shape != (x.shape[-1],):
        raise ValueError(f"{name}: expected one scenario label per column of scores ({x.shape[-1]} columns), "
                         f"got shape {g.shape}")
    if pd.isna(pd.Series(g)).any():
        raise ValueError(f"{name}: some columns have no scenario label (NaN / None)")
    codes, uniq = pd.factorize(pd.Series(g), sort=True)
    ok = ~np.isnan(x)
    return _group_means(np.where(ok, x, 0.0), ok.astype(float), codes, len(uniq)), pd.Index(uniq)


def _finish(out: np.ndarray, mids: pd.Index | None, name: str, what: str):
    if out.ndim == 1 and np.isnan(out).any():
        bad = np.flatnonzero(np.isnan(out))[:5]
        who = mids[bad].tolist() if mids is not None else bad.tolist()
        raise ValueError(f"scores: {what} undefined for models {who} (no scenario they share with another model)")
    return pd.Series(out, index=mids, name=name) if mids is not None and out.ndim == 1 else out


def mean_win_rate(scores: Any, groups: Any = None, *, ties: str = "strict", check_connected: bool = True) -> Any:
    """Mean Win Rate, App. A: ``MWR(m) = E_{S∈CS_m} E_{m_i∈M∖m} 1(E_{s∈S} s(m) > E_{s'∈S} s'(m_i))``.

    Parameters
    ----------
    scores : array (..., n_models, n_columns), DataFrame (models × columns) or ResponseMatrix
        Scores; NaN (``'-'`` in DataFrames) = not evaluated. Leading axes are independent benchmarks
        (e.g. 1,000 bootstrap resamples, shape (1000, 67, 16)) scored in one vectorised pass.
    groups : array (n_columns,), optional
        Scenario of each column. Columns are subscenarios averaged within their scenario first. Default: for a
        ResponseMatrix, its items' ``scenario`` column, or else its ``task`` column (the harness and HELM
        readers' name of an item's task, a HELM run spec), as :class:`effstats.reliability.Benchmark` reads
        them; each column its own scenario otherwise.
    ties : {"strict", "half"}, default="strict"
        ``"strict"`` is App. A's indicator (a tie is no win); ``"half"`` counts a tie as half a win, the rule
        of HELM's own code (``compute_aggregate_row_win_rates`` in ``helm.benchmark.presentation.summarize``),
        which its published "Mean win rate" columns follow (HELM Lite: see the tests).
    check_connected : bool, default=True
        For a single table (2-D), refuse models that cannot be compared: when the models split into groups
        sharing no scenario (directly or through other models) the win rates of different groups measure
        different things. :func:`effstats.reliability.comparison_components` gives the groups.

    Returns
    -------
    array (..., n_models) or Series
        Missing scenarios are omitted per model (``CS_m``) and missing opponents are not counted.
        In a single benchmark (2-D input) a model without any comparable scenario raises ValueError;
        with leading axes such a resample gets NaN. Exact: computed from integer win counts as one
        division (equal rational MWRs are equal floats, so ties stay ties).

    Raises
    ------
    ValueError
        ``ties`` not "strict" or "half", a model without any comparable scenario, or (``check_connected``)
        models that share no scenario.

    See Also
    --------
    effstats.reliability.mean_score : The plain mean over evaluated columns.
    effstats.reliability.mean_of_means : The mean over scenarios of scenario means.
    effstats.reliability.comparison_components : The groups of models that can be ranked together.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), App. A.
    .. [2] Liang, P., Bommasani, R., Lee, T. et al. "Holistic Evaluation of Language Models". Transactions
       on Machine Learning Research (TMLR), 2023 (arXiv:2211.09110).

    Examples
    --------
    Two models at exactly 2/5 get the same float, so their tie stays a tie:

    >>> import numpy as np
    >>> from effstats.reliability import mean_win_rate
    >>> x = np.array([[5, 5, 2], [4, 4, 1], [2, 3, 3], [1, 0, 5], [3, 1, 0], [0, 2, 4.]])
    >>> mwr = mean_win_rate(x)
    >>> mwr.round(3).tolist()
    [0.8, 0.6, 0.533, 0.4, 0.267, 0.4]
    >>> bool(mwr[3] == mwr[5])
    True
    >>> mean_win_rate(np.array([[1.0, 0.5], [1.0, 0.2], [0.0, 0.9]]), ties="half").round(3).tolist()
    [0.625, 0.375, 0.5]
    """
    _choice(ties, "ties", _TIES)
    x, mids, _ = _as_scores(scores, groups=groups)
    groups = _item_scenarios(scores) if groups is None else groups
    if groups is not None:
        x, _ = _grouped(x, groups)
    if x.shape[-2] < 2:
        raise ValueError(f"scores: expected at least 2 models, got {x.shape[-2]}")
    if x.ndim == 2 and check_connected:
        _raise_if_disconnected(_components(~np.isnan(x)), mids, "scores")
    return _finish(_mwr(x, ties), mids, "mean_win_rate", "win rate")


def mean_score(scores: Any) -> Any:
    """Plain mean score per model over its evaluated columns (missing cells omitted, never counted as 0).

    Parameters
    ----------
    scores : array of shape (..., n_models, n_columns), DataFrame (models × columns) or ResponseMatrix
        Scores; NaN = not evaluated. Leading axes are independent benchmarks (resamples).

    Returns
    -------
    ndarray of shape (..., n_models) or Series
        A Series indexed by model for a DataFrame or ResponseMatrix.

    Warns
    -----
    UserWarning
        For a DataFrame whose lower-is-better columns a score-table reader negated, so that higher is better in
        every column (named in ``scores.attrs["lower_is_better"]``, as :func:`effstats.datasets.read_scores` and
        the HELM reader set it): the means subtract those columns, naming them.

    See Also
    --------
    effstats.reliability.mean_win_rate : The win-rate aggregate HELM ranks by.
    effstats.reliability.mean_of_means : The mean over scenarios of scenario means.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), App. A.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.reliability import mean_score
    >>> mean_score(np.array([[0.9, np.nan, 0.7], [0.6, 0.5, 0.4]])).round(3).tolist()
    [0.8, 0.5]
    """
    x, mids, _ = _as_scores(scores)
    _warn_negated_means(scores, "scores")
    return _finish(_weighted_nanmean(x, None), mids, "mean_score", "mean score")


def mean_of_means(scores: Any, groups: Any) -> Any:
    """Mean over scenarios of the per-scenario mean of the subscenario columns (missing omitted).

    Each scenario weighs the same whatever its number of subscenario columns.

    Parameters
    ----------
    scores : array of shape (..., n_models, n_columns), DataFrame (models × columns) or ResponseMatrix
        Subscenario scores; NaN = not evaluated.
    groups : array-like of shape (n_columns,)
        Scenario of each column.

    Returns
    -------
    ndarray of shape (..., n_models) or Series
        A Series indexed by model for a DataFrame or ResponseMatrix.

    Warns
    -----
    UserWarning
        As :func:`mean_score` does, for a DataFrame whose lower-is-better columns a reader negated.

    See Also
    --------
    effstats.reliability.mean_score : Every column weighs the same.
    effstats.reliability.mean_win_rate : The win-rate aggregate.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), App. A.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.reliability import mean_of_means
    >>> x = np.array([[1.0, 0.0, 0.5], [0.5, 0.5, 0.5]])
    >>> mean_of_means(x, groups=["a", "a", "b"]).round(3).tolist()
    [0.5, 0.5]
    """
    x, mids, _ = _as_scores(scores, groups=groups)
    g, _ = _grouped(x, groups)
    _warn_negated_means(scores, "scores")
    return _finish(_weighted_nanmean(g, None), mids, "mean_of_means", "mean of means")


def comparison_components(scores: Any, groups: Any = None) -> Any:
    """Connected components of the comparison graph (models linked when they share an evaluated scenario).

    Parameters
    ----------
    scores : array-like of shape (n_models, n_columns), DataFrame or ResponseMatrix
        Scores; NaN = not evaluated.
    groups : array-like of shape (n_columns,), optional
        Scenario of each column (default: as :func:`mean_win_rate`).

    Returns
    -------
    ndarray of int of shape (n_models,) or Series
        Component of each model, 0 = the largest. Models in different components never met on a scenario,
        so their win rates or means cannot be ranked against each other.

    See Also
    --------
    effstats.reliability.mean_win_rate : Refuses a table with more than one component.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), App. A.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.reliability import comparison_components
    >>> x = np.array([[1, np.nan], [2, np.nan], [np.nan, 3], [np.nan, 4], [5, 6]])
    >>> comparison_components(x).tolist()
    [0, 0, 0, 0, 0]
    >>> comparison_components(x[:4]).tolist()
    [0, 0, 1, 1]
    """
    x, mids, _ = _as_scores(scores, groups=groups)
    if x.ndim != 2:
        raise ValueError(f"scores: expected a 2-D table (n_models, n_columns), got shape {x.shape}")
    groups = _item_scenarios(scores) if groups is None else groups
    if groups is not None:
        x, _ = _grouped(x, groups)
    comp = _components(~np.isnan(x))
    return pd.Series(comp, index=mids, name="component") if mids is not None else comp
