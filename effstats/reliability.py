"""Benchmark reliability: Mean Win Rate, DIoR, rank-switch curves, MWR pathologies and Flash-HELM.

Implements Perlitz et al., "Efficient Benchmarking (of Language Models)" (NAACL 2024; papers/003):

* :func:`mean_win_rate` (App. A), :func:`mean_score`, :func:`mean_of_means` — vectorised over any
  number of leading "resample" axes, so 1,000 bootstrapped benchmarks are one array operation;
* :func:`dior` — Decision Impact on Reliability (Sect. 2.1): resample a design decision (scenarios,
  subscenarios, examples, prompts) with replacement, score the benchmark under each instantiation,
  compare with the original by a meta-metric (Kendall τ, weighted τ, best-model error rate, |Δ score|)
  and report the lower bound of the confidence interval, with the whole distribution;
* :func:`efficiency_curve` (Fig. 2, App. C), :func:`rank_trajectories` (Fig. 1), :func:`rank_switch_curve` (Fig. 3),
  :func:`prompt_strategies` (Fig. 4), :func:`rank_resolution` (Fig. 6);
* App. B counterexamples (:func:`counterexample_weaker_model`, :func:`counterexample_grouping`,
  :func:`counterexample_partial_reporting`) and the clone / removal detectors on real tables
  (:func:`clone_flips`, :func:`removal_flips`);
* :func:`flash_helm` — the coarse-to-fine tournament (Algorithm 1).

Data layout
-----------
A benchmark is a models × items table of scores. Items belong to subscenarios which belong to
scenarios (``ResponseMatrix.items`` columns ``scenario`` / ``subscenario`` / ``prompt``). A plain
leaderboard (models × scenarios, e.g. the HELM table) is the special case "one item per scenario".
Missing cells (not evaluated) are omitted per model as in App. A — never replaced by 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Real
from typing import Any, Literal, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ._validation import check_array, check_fraction, check_positive_int, check_rng
from .responses import ResponseMatrix, _group_means

__all__ = [
    "mean_win_rate",
    "mean_score",
    "mean_of_means",
    "kendall_tau",
    "dior",
    "DIoRResult",
    "efficiency_curve",
    "rank_switch_curve",
    "prompt_strategies",
    "rank_resolution",
    "rank_trajectories",
    "subscenario_correlations",
    "Counterexample",
    "counterexample_weaker_model",
    "counterexample_grouping",
    "counterexample_partial_reporting",
    "clone_flips",
    "removal_flips",
    "flash_helm",
    "FlashHELMResult",
    "Benchmark",
]

Score = Literal["mwr", "mean", "mean_of_means"]
Decision = Literal["scenarios", "subscenarios", "examples", "prompts"]
Objective = Literal["kendall", "weighted_tau", "best_model", "model_quality"]
_SCORES = ("mwr", "mean", "mean_of_means")
_DECISIONS = ("scenarios", "subscenarios", "examples", "prompts")
_OBJECTIVES = ("kendall", "weighted_tau", "best_model", "model_quality")
_TIES = ("strict", "half")
# Resample in chunks so that the per-chunk item-count matrix stays around this many cells.
_CHUNK_CELLS = 4_000_000


def _choice(x: Any, name: str, options: Sequence[str]) -> str:
    if x not in options:
        raise ValueError(f"{name}: expected one of {list(options)}, got {x!r}")
    return x


# =============================================================================================
# Benchmark: the validated models × items table with its scenario / subscenario hierarchy
# =============================================================================================
@dataclass(frozen=True, eq=False)
class Benchmark:
    """A validated score table with its item hierarchy (built by :meth:`from_data`).

    Attributes
    ----------
    values : float array (n_models, n_items), 0 at missing cells
    observed : bool array (n_models, n_items)
    sub_of_item : int array (n_items,) — subscenario code of each item
    scen_of_sub : int array (n_sub,) — scenario code of each subscenario
    prompt_of_item : int array (n_items,) or None
    model_ids : Index (n_models,); scenario_names, subscenario_names : Index
    """

    values: np.ndarray
    observed: np.ndarray
    sub_of_item: np.ndarray
    scen_of_sub: np.ndarray
    prompt_of_item: np.ndarray | None
    model_ids: pd.Index
    scenario_names: pd.Index
    subscenario_names: pd.Index
    item_ids: pd.Index = field(default=None)  # type: ignore[assignment]

    @property
    def n_models(self) -> int:
        return self.values.shape[0]

    @property
    def n_items(self) -> int:
        return self.values.shape[1]

    @property
    def n_sub(self) -> int:
        return len(self.scen_of_sub)

    @property
    def n_scen(self) -> int:
        return len(self.scenario_names)

    @property
    def n_prompts(self) -> int:
        """Number of prompt variants (0 without a prompt column)."""
        return 0 if self.prompt_of_item is None else int(self.prompt_of_item.max()) + 1

    @property
    def is_table(self) -> bool:
        """True when every subscenario holds a single item (a leaderboard, not per-example data)."""
        return self.n_sub == self.n_items

    @classmethod
    def from_data(
        cls,
        data: Any,
        *,
        scenario: str | None = "scenario",
        subscenario: str | None = "subscenario",
        prompt: str | None = "prompt",
        groups: Any = None,
    ) -> "Benchmark":
        """Build from a :class:`ResponseMatrix`, a wide DataFrame (models × scenarios) or a 2-D array.

        Parameters
        ----------
        data : ResponseMatrix, DataFrame or array of shape (n_models, n_items)
            Scores; NaN (arrays / DataFrames) or ``'-'`` (DataFrames) or the ResponseMatrix
            ``missing`` mask mark cells that were not evaluated. Scores may be any real numbers.
        scenario, subscenario, prompt : str or None
            Item-metadata columns of a ResponseMatrix giving the hierarchy. Without a scenario
            column every item is its own scenario (a leaderboard table).
        groups : array of shape (n_items,), optional
            Scenario label of each column for arrays / DataFrames whose columns are subscenarios.
        """
        if isinstance(data, Benchmark):
            return data
        items = None
        if isinstance(data, ResponseMatrix):
            vals = data.values.astype(float)
            obs = data.observed
            mids, iids = data.model_ids, data.item_ids
            items = data.items
        elif isinstance(data, pd.DataFrame):
            if data.empty:
                raise ValueError("data: expected a non-empty table")
            if data.index.has_duplicates:
                dup = data.index[data.index.duplicated()].unique()[:5].tolist()
                raise ValueError(f"data: duplicated model rows {dup}")
            # '-' marks "not evaluated"; no DataFrame.replace (its object downcasting is deprecated in pandas 2.2)
            num = data.apply(pd.to_numeric, errors="coerce")
            bad = num.isna() & data.notna() & (data.astype(str).apply(lambda c: c.str.strip()) != "-")
            if bad.any().any():
                col = bad.any().idxmax()
                raise ValueError(f"data: column {col!r} has non-numeric values, e.g. {data.loc[bad[col], col].iloc[0]!r}")
            arr = check_array(num.to_numpy(dtype=float), "data", ndim=2, allow_nan=True)
            obs = ~np.isnan(arr)
            vals = np.where(obs, arr, 0.0)
            mids, iids = pd.Index(data.index, name="model"), pd.Index(data.columns, name="item")
        else:
            arr = check_array(data, "data", ndim=2, allow_nan=True)
            obs = ~np.isnan(arr)
            vals = np.where(obs, arr, 0.0)
            mids = pd.Index([f"m{i}" for i in range(arr.shape[0])], name="model")
            iids = pd.Index([f"s{j}" for j in range(arr.shape[1])], name="item")
        n_models, n_items = vals.shape
        if n_models < 2:
            raise ValueError(f"data: expected at least 2 models, got {n_models}")
        if n_items < 2:
            raise ValueError(f"data: expected at least 2 scenarios / items, got {n_items}")
        if (~obs).all(axis=1).any():
            bad = mids[(~obs).all(axis=1)][:5].tolist()
            raise ValueError(f"data: models {bad} have no evaluated score; drop them first")
        if (~obs).all(axis=0).any():
            bad = iids[(~obs).all(axis=0)][:5].tolist()
            raise ValueError(f"data: columns {bad} were evaluated by no model; drop them first")
        has = lambda c: items is not None and c is not None and c in items.columns  # noqa: E731
        if groups is not None:
            g = np.asarray(groups)
            if g.shape != (n_items,):
                raise ValueError(f"groups: expected {n_items} scenario labels (one per column), got shape {g.shape}")
            scen_item = pd.Series(g)
            sub_item = pd.Series(np.arange(n_items))
        elif has(scenario):
            scen_item = items[scenario].reset_index(drop=True)
            sub_item = (items[subscenario] if has(subscenario) else items[scenario]).reset_index(drop=True)
        else:
            scen_item = pd.Series(np.asarray(iids))
            sub_item = pd.Series(np.arange(n_items))
        if scen_item.isna().any():
            raise ValueError("scenario: some items have no scenario label")
        scen_codes, scen_names = pd.factorize(scen_item, sort=True)
        # A subscenario is identified by (scenario, subscenario) so equal names in two scenarios stay apart.
        pair = pd.MultiIndex.from_arrays([scen_codes, sub_item.to_numpy()])
        sub_codes, sub_uniq = pd.factorize(pair, sort=True)
        scen_of_sub = np.asarray(sub_uniq.get_level_values(0), dtype=np.intp)
        sub_names = pd.Index([f"{scen_names[s]}/{v}" for s, v in sub_uniq] if groups is not None or has(scenario)
                             else list(iids), name="subscenario")
        prompt_codes = None
        if has(prompt):
            prompt_codes = pd.factorize(items[prompt], sort=True)[0].astype(np.intp)
        return cls(
            values=vals,
            observed=obs,
            sub_of_item=sub_codes.astype(np.intp),
            scen_of_sub=scen_of_sub,
            prompt_of_item=prompt_codes,
            model_ids=mids,
            scenario_names=pd.Index(scen_names, name="scenario"),
            subscenario_names=sub_names,
            item_ids=iids,
        )

    def subset_models(self, keep: np.ndarray) -> "Benchmark":
        """The benchmark restricted to the models at positions / mask ``keep``."""
        k = np.asarray(keep)
        return Benchmark(self.values[k], self.observed[k], self.sub_of_item, self.scen_of_sub, self.prompt_of_item,
                         self.model_ids[k], self.scenario_names, self.subscenario_names, self.item_ids)

    def items_of_sub(self) -> list[np.ndarray]:
        """Item positions of every subscenario."""
        order = np.argsort(self.sub_of_item, kind="stable")
        bounds = np.searchsorted(self.sub_of_item[order], np.arange(self.n_sub + 1))
        return [order[bounds[k]:bounds[k + 1]] for k in range(self.n_sub)]

    def group_sizes(self) -> np.ndarray:
        """Number of items per subscenario, shape (n_sub,)."""
        return np.bincount(self.sub_of_item, minlength=self.n_sub)

    # --------------------------------------------------------------- sums per subscenario
    def sub_sums(self, counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Weighted score sums and observation counts per subscenario.

        Parameters
        ----------
        counts : array (B, n_items) of item multiplicities, or None (every item once, B = 1)

        Returns
        -------
        num, den : arrays (B, n_models, n_sub)
        """
        V = self.values * self.observed
        O = self.observed.astype(float)
        if counts is None:  # contiguous sums per subscenario (no dense items × subscenarios one-hot)
            order = np.argsort(self.sub_of_item, kind="stable")
            starts = np.searchsorted(self.sub_of_item[order], np.arange(self.n_sub))
            return np.add.reduceat(V[:, order], starts, axis=1)[None], np.add.reduceat(O[:, order], starts, axis=1)[None]
        counts = np.asarray(counts, dtype=float)
        B = counts.shape[0]
        num = np.empty((B, self.n_models, self.n_sub))
        den = np.empty_like(num)
        # One BLAS product per subscenario: (B, n_k) @ (n_k, M).
        for k, idx in enumerate(self.items_of_sub()):
            c = counts[:, idx]
            num[:, :, k] = c @ V[:, idx].T
            den[:, :, k] = c @ O[:, idx].T
        return num, den


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


def _win_rates(scen: np.ndarray, ties: str = "strict") -> np.ndarray:
    """Per-scenario win rates (..., M, S) from scenario scores with NaN at missing cells.

    Opponents are the models observed in that scenario; scenarios with fewer than two observed
    models give NaN (no comparison possible), exactly like a missing score.
    """
    obs = ~np.isnan(scen)
    less, eq = _less_and_ties(np.where(obs, scen, np.inf))
    n_opp = obs.sum(axis=-2, keepdims=True) - 1
    wins = less + (0.5 * eq if ties == "half" else 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(obs & (n_opp > 0), wins / np.maximum(n_opp, 1), np.nan)


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
        n, d = (num * w[:, None, :]).sum(-1), (den * w[:, None, :]).sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(d > 0, n / np.where(d > 0, d, 1), np.nan)
    return _score_from_scenarios(_scenario_table(num, den, bench.scen_of_sub, bench.n_scen, sub_w), score, ties, scen_w)


def _score_from_scenarios(scen: np.ndarray, score: str, ties: str, scen_w: np.ndarray | None = None) -> np.ndarray:
    """Mean of means or MWR (B, M) from scenario scores (B, M, n_scen) of the models that compete."""
    sw = None if scen_w is None else scen_w[:, None, :]
    if score == "mean_of_means":
        return _weighted_nanmean(scen, sw)
    return _weighted_nanmean(_win_rates(scen, ties), sw)


def _as_scores(scores: Any, name: str = "scores") -> tuple[np.ndarray, pd.Index | None, pd.Index | None]:
    if isinstance(scores, ResponseMatrix):
        return scores.values_with_nan(), scores.model_ids, scores.item_ids
    if isinstance(scores, pd.DataFrame):
        b = Benchmark.from_data(scores)
        return np.where(b.observed, b.values, np.nan), b.model_ids, b.item_ids
    arr = check_array(scores, name, ndim=None, allow_nan=True)
    if arr.ndim < 2:
        raise ValueError(f"{name}: expected an array (..., n_models, n_scenarios), got shape {arr.shape}")
    return arr, None, None


def _grouped(x: np.ndarray, groups: Any, name: str = "groups") -> tuple[np.ndarray, pd.Index]:
    """Average subscenario columns within their scenario first (App. A), omitting missing cells."""
    g = np.asarray(groups)
    if g.shape != (x.shape[-1],):
        raise ValueError(f"{name}: expected one scenario label per column ({x.shape[-1]}), got shape {g.shape}")
    codes, uniq = pd.factorize(pd.Series(g), sort=True)
    ok = ~np.isnan(x)
    return _group_means(np.where(ok, x, 0.0), ok.astype(float), codes, len(uniq)), pd.Index(uniq)


def _finish(out: np.ndarray, mids: pd.Index | None, name: str, what: str):
    if out.ndim == 1 and np.isnan(out).any():
        bad = np.flatnonzero(np.isnan(out))[:5]
        who = mids[bad].tolist() if mids is not None else bad.tolist()
        raise ValueError(f"scores: {what} undefined for models {who} (no scenario they share with another model)")
    return pd.Series(out, index=mids, name=name) if mids is not None and out.ndim == 1 else out


def mean_win_rate(scores: Any, groups: Any = None, *, ties: str = "strict") -> Any:
    """Mean Win Rate, App. A: ``MWR(m) = E_{S∈CS_m} E_{m_i∈M∖m} 1(E_{s∈S} s(m) > E_{s'∈S} s'(m_i))``.

    Parameters
    ----------
    scores : array (..., n_models, n_columns), DataFrame (models × columns) or ResponseMatrix
        Scores; NaN (``'-'`` in DataFrames) = not evaluated. Leading axes are independent benchmarks
        (e.g. 1,000 bootstrap resamples, shape (1000, 67, 16)) scored in one vectorised pass.
    groups : array (n_columns,), optional
        Scenario of each column. Columns are subscenarios averaged within their scenario first.
    ties : {"strict", "half"}
        ``"strict"`` is App. A's indicator (a tie is no win); ``"half"`` counts a tie as half a win.

    Returns
    -------
    array (..., n_models) or Series
        Missing scenarios are omitted per model (``CS_m``) and missing opponents are not counted.
        In a single benchmark (2-D input) a model without any comparable scenario raises ValueError;
        with leading axes such a resample gets NaN.
    """
    _choice(ties, "ties", _TIES)
    x, mids, _ = _as_scores(scores)
    if groups is not None:
        x, _ = _grouped(x, groups)
    if x.shape[-2] < 2:
        raise ValueError(f"scores: expected at least 2 models, got {x.shape[-2]}")
    return _finish(_weighted_nanmean(_win_rates(x, ties), None), mids, "mean_win_rate", "win rate")


def mean_score(scores: Any) -> Any:
    """Plain mean score per model over its evaluated columns; shape (..., n_models) (Series for tables)."""
    x, mids, _ = _as_scores(scores)
    return _finish(_weighted_nanmean(x, None), mids, "mean_score", "mean score")


def mean_of_means(scores: Any, groups: Any) -> Any:
    """Mean over scenarios of the per-scenario mean of the subscenario columns (missing omitted).

    ``groups`` (n_columns,) gives the scenario of each column; shape (..., n_models).
    """
    x, mids, _ = _as_scores(scores)
    g, _ = _grouped(x, groups)
    return _finish(_weighted_nanmean(g, None), mids, "mean_of_means", "mean of means")


# =============================================================================================
# Meta-metrics
# =============================================================================================
def kendall_tau(reference: Any, resampled: Any) -> np.ndarray:
    """Kendall τ-b between a reference score vector and many score vectors, vectorised.

    Parameters
    ----------
    reference : array (n_models,)
    resampled : array (B, n_models); NaN entries (undefined scores) drop the pairs they are in.

    Returns
    -------
    array (B,) — equal to ``scipy.stats.kendalltau`` row by row; a resample with no ordered pair
    gets τ = 0 (no agreement information) rather than NaN.
    """
    ref = check_array(reference, "reference", ndim=1, allow_nan=True)
    X = check_array(resampled, "resampled", ndim=2, allow_nan=True, shape=(None, ref.shape[0]))
    i, j = np.triu_indices(ref.shape[0], 1)  # each unordered pair once
    sa = np.sign(ref[i] - ref[j])
    ok_a = ~np.isnan(sa)
    sa = np.where(ok_a, sa, 0.0)
    out = np.empty(X.shape[0])
    step = max(1, _CHUNK_CELLS // max(1, i.size))
    for a in range(0, X.shape[0], step):
        Y = X[a:a + step]
        sb = np.sign(Y[:, i] - Y[:, j])  # (b, n_pairs)
        ok = ~np.isnan(sb) & ok_a
        sb = np.where(ok, sb, 0.0)
        num = sb @ sa
        den = np.sqrt((ok @ (sa * sa)) * (sb * sb).sum(1))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[a:a + step] = np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)
    return out


def _weighted_tau(ref: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Vigna's weighted τ per resample: ``scipy.stats.weightedtau`` with its defaults (hyperbolic weigher
    1/(r+1), ``rank=True``: the mean of the values obtained with the decreasing lexicographic ranks by
    (x, y) and by (y, x)), so swaps among the top models weigh most. NaN entries are dropped."""
    out = np.empty(X.shape[0])
    for b, y in enumerate(X):  # scipy's O(n log n) routine; one call per resample, not per model
        ok = ~(np.isnan(y) | np.isnan(ref))
        t = stats.weightedtau(ref[ok], y[ok]).statistic if ok.sum() >= 2 else np.nan
        out[b] = 0.0 if np.isnan(t) else t
    return out


def _switch(s: np.ndarray, hi: Any, lo: Any) -> np.ndarray:
    """1 where the originally higher model ``hi`` falls below ``lo``, 0.5 on a tie, 1 if undefined."""
    a, b = s[..., hi], s[..., lo]
    out = np.where(a < b, 1.0, np.where(a == b, 0.5, 0.0))
    return np.where(np.isnan(a) | np.isnan(b), 1.0, out)  # an unscorable top model counts as an error


def _wilson(successes: float, n: int, ci: float) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(successes, n, alpha=1 - ci, method="wilson")
    return float(lo), float(hi)


# =============================================================================================
# DIoR
# =============================================================================================
@dataclass(frozen=True, eq=False)
class DIoRResult:
    """Result of :func:`dior` (scipy.stats-like, frozen).

    Attributes
    ----------
    dior : float
        Lower bound of the ``ci`` confidence interval of the meta-metric (Sect. 2.1).
    statistic : float
        Mean meta-metric (τ, weighted τ, 1 − error rate, 1 − mean |Δ score|).
    distribution : array (n_boot,)
        Meta-metric of each instantiation (for ``best_model`` the share of the ``n_top`` top pairs
        that kept their order).
    decision, objective, score : str
    size : int
        Number of scenarios / subscenarios / examples per subscenario / prompts drawn per instantiation.
    compute_fraction : float
        Items evaluated per model under the decision relative to the full benchmark.
    ci : float
    n_trials : int
        Bernoulli trials behind ``best_model`` (n_boot × n_top); 0 for the other objectives.
    original : Series (n_models,)
        Benchmark score of each model on the original instantiation.
    resampled : array (n_boot, n_models)
        Benchmark scores under each instantiation.
    error_rate : float or None
        Best-model objective: probability that the top two switch (averaged over ``n_top`` repeats).
    """

    dior: float
    statistic: float
    distribution: np.ndarray = field(repr=False)
    decision: str = "scenarios"
    objective: str = "kendall"
    score: str = "mwr"
    size: int = 0
    compute_fraction: float = 1.0
    ci: float = 0.95
    n_trials: int = 0
    original: pd.Series = field(default=None, repr=False)  # type: ignore[assignment]
    resampled: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]
    error_rate: float | None = None

    def confidence_interval(self, ci: float | None = None) -> tuple[float, float]:
        """Two-sided interval of the meta-metric at level ``ci`` (default: the level used).

        Percentile interval of the instantiation distribution for τ and |Δ score|; Wilson interval of
        the no-switch probability over ``n_trials`` for ``best_model`` (a per-instantiation 0/1
        outcome has no informative percentiles). The ``n_top`` repeats share the bootstrap draws, so
        the Wilson interval treats correlated trials as independent: read it as approximate.
        """
        ci = self.ci if ci is None else check_fraction(ci, "ci")
        return _interval(self.objective, self.distribution, self.n_trials, ci)


def _interval(objective: str, dist: np.ndarray, n_trials: int, ci: float) -> tuple[float, float]:
    if objective == "best_model":
        return _wilson(float(dist.mean()) * n_trials, n_trials, ci)
    lo, hi = np.quantile(dist, [(1 - ci) / 2, (1 + ci) / 2])
    return float(lo), float(hi)


def _resample_counts(bench: Benchmark, decision: str, size: int | None, n_boot: int, rng: np.random.Generator,
                     replace: bool = True):
    """Yield (num, den, sub_w, scen_w, B) chunks of resampled benchmarks for a decision."""
    if decision == "scenarios":
        k = size or bench.n_scen
        idx = rng.integers(0, bench.n_scen, size=(n_boot, k))
        w = _multiplicity(idx, bench.n_scen)
        num, den = bench.sub_sums()
        yield num, den, None, w, n_boot
    elif decision == "subscenarios":
        k = size or bench.n_sub
        idx = rng.integers(0, bench.n_sub, size=(n_boot, k))
        w = _multiplicity(idx, bench.n_sub)
        num, den = bench.sub_sums()
        yield num, den, w, None, n_boot
    elif decision == "prompts":
        if bench.prompt_of_item is None:
            raise ValueError("decision: 'prompts' needs a prompt column in the item metadata")
        P = bench.n_prompts
        k = size or P
        idx = rng.integers(0, P, size=(n_boot, k))
        pw = _multiplicity(idx, P)
        yield (*bench.sub_sums(pw[:, bench.prompt_of_item]), None, None, n_boot)
    else:  # examples: resample within each subscenario
        groups = bench.items_of_sub()
        ks = [len(g) if size is None else (min(int(size), len(g)) if not replace else int(size)) for g in groups]
        per_boot = max(sum(max(k, len(g) // 4) for k, g in zip(ks, groups)), 1)
        step = max(1, _CHUNK_CELLS // (per_boot * (1 if bench.n_models < 64 else 2)))
        V = bench.values * bench.observed
        O = bench.observed.astype(float)
        complete = bool(bench.observed.all())
        for a in range(0, n_boot, step):
            B = min(step, n_boot - a)
            num = np.empty((B, bench.n_models, bench.n_sub))
            den = np.empty_like(num)
            for j, (g, k) in enumerate(zip(groups, ks)):
                if not replace:
                    pick = np.argsort(rng.random((B, len(g))), axis=1)[:, :k]
                else:
                    pick = rng.integers(0, len(g), size=(B, k))
                if 4 * k <= len(g):  # few draws: gather the drawn items, cost M·B·k
                    items = g[pick]
                    num[:, :, j] = V[:, items].sum(-1).T
                    den[:, :, j] = k if complete else O[:, items].sum(-1).T
                else:  # many draws: multiplicities (B, n_g) times the values, one BLAS product
                    c = _multiplicity(pick, len(g))
                    num[:, :, j] = c @ V[:, g].T
                    den[:, :, j] = c.sum(1)[:, None] if complete else c @ O[:, g].T
            yield num, den, None, None, B


def _multiplicity(idx: np.ndarray, n: int) -> np.ndarray:
    """(B, k) draws of 0..n-1 → (B, n) counts, by one offset bincount."""
    B = idx.shape[0]
    return np.bincount((idx + n * np.arange(B)[:, None]).ravel(), minlength=B * n).reshape(B, n).astype(float)


def _compute_fraction(bench: Benchmark, decision: str, size: int | None) -> float:
    if size is None:
        return 1.0
    if decision == "scenarios":
        return size / bench.n_scen
    if decision == "subscenarios":
        return size / bench.n_sub
    if decision == "prompts":
        return size / bench.n_prompts
    return float(np.minimum(bench.group_sizes(), size).sum() / bench.n_items) if decision == "examples" else 1.0


def _check_common(n_boot: Any, ci: Any, score: Any, ties: Any) -> tuple[int, float]:
    n_boot = check_positive_int(n_boot, "n_boot")
    ci = check_fraction(ci, "ci")
    _choice(score, "score", _SCORES)
    _choice(ties, "ties", _TIES)
    return n_boot, ci


def _resampled_scores(bench: Benchmark, decision: str, size: int | None, n_boot: int, rng, score: str, ties: str,
                      masks: Sequence[np.ndarray | None] = (None,), replace: bool = True) -> list[np.ndarray]:
    """Scores (n_boot, n_kept_models) under resampling, one array per model mask (same draws)."""
    outs: list[list[np.ndarray]] = [[] for _ in masks]
    for num, den, sw, cw, _ in _resample_counts(bench, decision, size, n_boot, rng, replace):
        if score == "mean" or len(masks) == 1:
            for j, m in enumerate(masks):
                outs[j].append(_score(bench, num, den, score, ties, sw, cw, m))
            continue
        # a model's scenario scores do not depend on who else competes: one table serves every mask
        scen = _scenario_table(num, den, bench.scen_of_sub, bench.n_scen, sw)
        for j, m in enumerate(masks):
            outs[j].append(_score_from_scenarios(scen if m is None else scen[:, m], score, ties, cw))
    return [np.concatenate(o, axis=0) for o in outs]


def dior(
    data: Any,
    decision: Decision = "scenarios",
    objective: Objective = "kendall",
    *,
    size: int | None = None,
    score: Score = "mwr",
    n_boot: int = 1000,
    ci: float = 0.95,
    n_top: int = 5,
    ties: str = "strict",
    rng: Any = None,
    scenario: str = "scenario",
    subscenario: str = "subscenario",
    prompt: str = "prompt",
) -> DIoRResult:
    """Decision Impact on Reliability (Sect. 2.1): ``DIoR = lower CI bound of f(s_{c_o}(M), s_c(M))``.

    Parameters
    ----------
    data : ResponseMatrix, DataFrame (models × scenarios) or array (n_models, n_items)
        Scores with NaN / ``'-'`` / a ``missing`` mask for cells not evaluated. A ResponseMatrix may
        carry item columns ``scenario``, ``subscenario`` and ``prompt`` (names configurable).
    decision : {"scenarios", "subscenarios", "examples", "prompts"}
        What is resampled with replacement: which scenarios (a scenario drawn twice counts twice),
        which subscenarios (within their scenario), which examples (within each subscenario) or
        which prompts (few-shot seeds).
    objective : {"kendall", "weighted_tau", "best_model", "model_quality"}
        Full ranking (Kendall τ-b; Vigna's weighted τ via ``scipy.stats.weightedtau``), best model
        (1 − probability that the top two switch, repeated ``n_top`` times removing the current top
        model and re-scoring), or model quality (1 − mean over models of |Δ score|; meant for scores in
        [0, 1] such as the MWR). An instantiation without any ordered pair gets τ = 0.
    size : int, optional
        Instantiation size: number of scenarios / subscenarios / prompts drawn, or examples per
        subscenario. Default: the original size (the reliability of the current benchmark).
    score : {"mwr", "mean", "mean_of_means"}
        Benchmark scoring function (HELM uses the Mean Win Rate).
    n_boot : int, ci : float in (0, 1), rng : int or Generator
    n_top : int
        Repeats of the best-model objective.
    ties : {"strict", "half"}
        Ties in the win rate (App. A: strict).

    Returns
    -------
    DIoRResult
    """
    n_boot, ci = _check_common(n_boot, ci, score, ties)
    _choice(decision, "decision", _DECISIONS)
    _choice(objective, "objective", _OBJECTIVES)
    rng = check_rng(rng)
    bench = Benchmark.from_data(data, scenario=scenario, subscenario=subscenario, prompt=prompt)
    if size is not None:
        size = check_positive_int(size, "size")
    if decision == "scenarios" and bench.n_scen < 2:
        raise ValueError(f"data: resampling scenarios needs at least 2 scenarios, got {bench.n_scen}")
    if decision == "examples" and bench.is_table:
        raise ValueError("decision: 'examples' needs per-example data (items grouped in scenarios); "
                         "this table has one score per scenario")
    n_top = check_positive_int(n_top, "n_top")
    if objective == "best_model" and n_top > bench.n_models - 1:
        raise ValueError(f"n_top: expected at most n_models - 1 = {bench.n_models - 1} repeats, got {n_top}")
    if decision == "prompts" and bench.prompt_of_item is None:
        raise ValueError(f"prompt: decision 'prompts' needs a {prompt!r} column in the item metadata")
    num, den = bench.sub_sums()
    original = _score(bench, num, den, score, ties)[0]
    if np.isnan(original).any():
        bad = bench.model_ids[np.isnan(original)][:5].tolist()
        raise ValueError(f"data: score undefined for models {bad} (no scenario shared with another model)")
    if objective == "best_model":
        # Repeat r removes the r best models of the original ranking "as if not yet submitted".
        masks, pairs = [], []
        keep = np.ones(bench.n_models, bool)
        for _ in range(n_top):
            orig_r = _score(bench, num, den, score, ties, model_mask=keep)[0]
            pos = np.flatnonzero(keep)
            top2 = pos[np.argsort(-orig_r, kind="stable")[:2]]
            masks.append(keep.copy())
            pairs.append(np.searchsorted(pos, top2))
            keep[top2[0]] = False
        res = _resampled_scores(bench, decision, size, n_boot, rng, score, ties, masks)
        sw = np.stack([_switch(r, p[0], p[1]) for r, p in zip(res, pairs)], axis=1)  # (B, n_top)
        dist = 1.0 - sw.mean(1)
        resampled = res[0]
        n_trials = n_boot * n_top
    else:
        resampled = _resampled_scores(bench, decision, size, n_boot, rng, score, ties)[0]
        n_trials = 0
    if objective == "kendall":
        dist = kendall_tau(original, resampled)
    elif objective == "weighted_tau":
        dist = _weighted_tau(original, resampled)
    elif objective == "model_quality":
        d = np.abs(resampled - original[None])
        dist = 1.0 - np.where(np.isnan(d), 1.0, d).mean(1)  # an unscorable model counts as maximal error
    stat = float(dist.mean())
    full_size = {"scenarios": bench.n_scen, "subscenarios": bench.n_sub, "examples": int(bench.group_sizes().max()),
                 "prompts": bench.n_prompts}[decision]
    return DIoRResult(
        dior=_interval(objective, dist, n_trials, ci)[0], statistic=stat, distribution=dist, decision=decision,
        objective=objective, score=score, size=full_size if size is None else int(size),
        compute_fraction=_compute_fraction(bench, decision, size), ci=ci, n_trials=n_trials,
        original=pd.Series(original, index=bench.model_ids, name=score), resampled=resampled,
        error_rate=(1 - stat) if objective == "best_model" else None,
    )


def efficiency_curve(data: Any, decision: Decision = "examples", objective: Objective = "kendall",
                     sizes: Sequence[int] | None = None, *, progress: bool = False, **kw: Any) -> pd.DataFrame:
    """DIoR against compute (Figs. 1/2, App. C): one :func:`dior` per instantiation size.

    Returns a tidy DataFrame with columns decision, objective, size, compute_fraction, dior,
    statistic, ci_low, ci_high (and error_rate for ``best_model``).
    """
    bench = Benchmark.from_data(data, **{k: kw.pop(k) for k in ("scenario", "subscenario", "prompt") if k in kw})
    if sizes is None:
        top = {"scenarios": bench.n_scen, "subscenarios": bench.n_sub, "prompts": 3}.get(
            decision, int(bench.group_sizes().max()))
        sizes = sorted({int(s) for s in np.unique(np.geomspace(1, top, 8).round()) if s >= 1})
    rows = []
    it = sizes
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(sizes, desc=f"DIoR {decision}/{objective}", leave=False)
    rng = check_rng(kw.pop("rng", None))
    for s in it:
        r = dior(bench, decision, objective, size=int(s), rng=rng, **kw)
        lo, hi = r.confidence_interval()
        rows.append(dict(decision=decision, objective=objective, size=int(s), compute_fraction=r.compute_fraction,
                         dior=r.dior, statistic=r.statistic, ci_low=lo, ci_high=hi, error_rate=r.error_rate))
    return pd.DataFrame(rows)


# =============================================================================================
# Rank switches (Fig. 3), prompt strategies (Fig. 4), rank resolution (Fig. 6)
# =============================================================================================
def rank_switch_curve(
    data: Any,
    sizes: Sequence[int],
    *,
    cluster_sizes: Sequence[int] = (2, 3, 5, 10, 20),
    n_top: int = 5,
    score: Score = "mwr",
    n_boot: int = 1000,
    ci: float = 0.95,
    ties: str = "strict",
    rng: Any = None,
    **kw: Any,
) -> pd.DataFrame:
    """Probability that the first and last models of a cluster of adjacent ranks switch (Fig. 3).

    For each number of examples per subscenario in ``sizes`` the examples are resampled
    ``n_boot`` times; for a cluster size N and each of the ``n_top`` best models as the cluster's top
    (models ranked i … i+N−1 in the original ranking), a switch is the top scoring below the
    bottom (a tie counts ½).

    Returns
    -------
    DataFrame with columns size, compute_fraction, cluster_size, p_switch, ci_low, ci_high,
    n_trials — the interval is Wilson's over the n_boot × n_top trials.
    """
    n_boot, ci = _check_common(n_boot, ci, score, ties)
    rng = check_rng(rng)
    bench = Benchmark.from_data(data, **kw)
    if bench.is_table:
        raise ValueError("data: rank-switch curves resample examples and need per-example data")
    cluster_sizes = [check_positive_int(int(c), "cluster_sizes", minimum=2) for c in cluster_sizes]
    n_top = check_positive_int(n_top, "n_top")
    num, den = bench.sub_sums()
    order = np.argsort(-_score(bench, num, den, score, ties)[0], kind="stable")
    rows = []
    for s in sizes:
        s = check_positive_int(int(s), "sizes")
        res = _resampled_scores(bench, "examples", s, n_boot, rng, score, ties)[0]
        for c in cluster_sizes:
            starts = np.arange(min(n_top, bench.n_models - c + 1))
            if starts.size == 0:
                continue
            sw = _switch(res, order[starts], order[starts + c - 1])  # (B, n_starts)
            p = float(sw.mean())
            lo, hi = _wilson(sw.sum(), sw.size, ci)
            rows.append(dict(size=s, compute_fraction=_compute_fraction(bench, "examples", s), cluster_size=c,
                             p_switch=p, ci_low=lo, ci_high=hi, n_trials=sw.size))
    return pd.DataFrame(rows)


def prompt_strategies(
    data: Any,
    n_examples: Sequence[int],
    *,
    example: str = "example",
    prompt: str = "prompt",
    score: Score = "mean_of_means",
    replace: bool = False,
    n_boot: int = 300,
    ci: float = 0.95,
    ties: str = "strict",
    rng: Any = None,
    scenario: str = "scenario",
) -> pd.DataFrame:
    """All prompts for K examples vs uniform sampling over the example × prompt cross product (Fig. 4).

    At an equal budget of K·P calls per scenario (P prompts), ``all_prompts`` evaluates K examples
    with every prompt (HELM), ``uniform`` evaluates K·P distinct examples (as far as they exist), each
    with one prompt drawn uniformly. Each strategy is compared with the full benchmark.

    Parameters
    ----------
    data : ResponseMatrix whose items are (example, prompt) cells with ``scenario``, ``example`` and
        ``prompt`` columns; every example must have every prompt.
    n_examples : K values.
    replace : bool — bootstrap (``True``, *Boot*) or sub-sample (``False``, *Sub*).

    Returns
    -------
    DataFrame with columns strategy, n_examples, budget, mean_abs_diff, ci_low, ci_high: the mean over
    models of |score − full score| and its percentile interval over the n_boot draws.
    """
    n_boot, ci = _check_common(n_boot, ci, score, ties)
    rng = check_rng(rng)
    if not isinstance(data, ResponseMatrix):
        raise ValueError("data: expected a ResponseMatrix with example and prompt item columns")
    for c, nm in [(scenario, "scenario"), (example, "example"), (prompt, "prompt")]:
        if c not in data.items.columns:
            raise ValueError(f"{nm}: item metadata has no column {c!r} (has {list(data.items.columns)})")
    # One subscenario per scenario so that the score is a per-scenario mean.
    bench = Benchmark.from_data(data, scenario=scenario, subscenario=scenario, prompt=prompt)
    it = data.items
    num, den = bench.sub_sums()
    full = _score(bench, num, den, score, ties)[0]
    P = it[prompt].nunique()
    cells = []  # per scenario: (n_examples_g, P) item positions
    for s in bench.scenario_names:
        sel = np.flatnonzero((it[scenario] == s).to_numpy())
        ex = pd.factorize(it[example].iloc[sel], sort=True)[0]
        pr = pd.factorize(it[prompt].iloc[sel], sort=True)[0]
        grid = np.full((ex.max() + 1, pr.max() + 1), -1)
        grid[ex, pr] = sel
        if (grid < 0).any() or grid.shape[1] != P:
            raise ValueError(f"data: scenario {s!r} lacks some (example, prompt) cells; a full cross product is required")
        cells.append(grid)
    rows = []
    for K in n_examples:
        K = check_positive_int(int(K), "n_examples")
        for strategy in ("all_prompts", "uniform"):
            counts = np.zeros((n_boot, bench.n_items))
            for grid in cells:
                n_ex = grid.shape[0]
                if strategy == "all_prompts":
                    k = K if replace else min(K, n_ex)
                    ex = rng.integers(0, n_ex, (n_boot, k)) if replace else np.argsort(rng.random((n_boot, n_ex)), 1)[:, :k]
                    pick = grid[ex]  # (B, k, P)
                else:
                    k = K * P
                    if replace:
                        ex = rng.integers(0, n_ex, (n_boot, k))
                        pick = grid[ex, rng.integers(0, P, (n_boot, k))]
                    else:  # distinct cells; distinct examples first (ideally a unique example per call)
                        k = min(k, n_ex * P)
                        ex_pick = np.argsort(rng.random((n_boot, n_ex)), 1)[:, np.arange(k) % n_ex]
                        prm = np.argsort(rng.random((n_boot, n_ex, P)), 2)  # random prompt order per example
                        pr_pick = prm[np.arange(n_boot)[:, None], ex_pick, (np.arange(k) // n_ex)[None, :]]
                        pick = grid[ex_pick, pr_pick]
                counts += _multiplicity(pick.reshape(n_boot, -1), bench.n_items)
            n, d = bench.sub_sums(counts)
            s = _score(bench, n, d, score, ties)
            dist = np.nanmean(np.abs(s - full[None]), axis=1)
            lo, hi = np.quantile(dist, [(1 - ci) / 2, (1 + ci) / 2])
            rows.append(dict(strategy=strategy, n_examples=K, budget=K * P, replace=replace,
                             mean_abs_diff=float(dist.mean()), ci_low=float(lo), ci_high=float(hi)))
    return pd.DataFrame(rows)


def rank_trajectories(
    data: Any,
    sizes: Sequence[int],
    *,
    score: Score = "mwr",
    n_boot: int = 200,
    ci: float = 0.9,
    ties: str = "strict",
    rng: Any = None,
    **kw: Any,
) -> pd.DataFrame:
    """Each model's rank against the number of examples per subscenario (Fig. 1).

    Returns a tidy DataFrame with columns model, size, compute_fraction, rank_full, rank_median,
    rank_low, rank_high (the ``ci`` percentile band of the rank over ``n_boot`` resamples; rank 1 = best).
    """
    n_boot, ci = _check_common(n_boot, ci, score, ties)
    rng = check_rng(rng)
    bench = Benchmark.from_data(data, **kw)
    if bench.is_table:
        raise ValueError("data: rank trajectories resample examples and need per-example data")
    num, den = bench.sub_sums()
    r_full = stats.rankdata(-_score(bench, num, den, score, ties)[0], method="min")
    out = []
    for s in sizes:
        s = check_positive_int(int(s), "sizes")
        res = _resampled_scores(bench, "examples", s, n_boot, rng, score, ties)[0]
        r = stats.rankdata(-np.where(np.isnan(res), -np.inf, res), method="min", axis=1)
        lo, med, hi = np.quantile(r, [(1 - ci) / 2, 0.5, (1 + ci) / 2], axis=0)
        out.append(pd.DataFrame({"model": bench.model_ids, "size": s,
                                 "compute_fraction": _compute_fraction(bench, "examples", s), "rank_full": r_full,
                                 "rank_median": med, "rank_low": lo, "rank_high": hi}))
    return pd.concat(out, ignore_index=True)


def rank_resolution(
    data: Any,
    sizes: Sequence[int] = (20, 50, 200, 1000),
    *,
    quantile: float | None = None,
    score: Score = "mwr",
    n_boot: int = 200,
    ties: str = "strict",
    rng: Any = None,
    **kw: Any,
) -> pd.DataFrame:
    """Rank error against the number of examples per subscenario (Fig. 6).

    Returns a DataFrame with columns size, compute_fraction, mean_abs_rank_error and resolution:
    Res(S) of Algorithm 1, the mean |rank(S) − rank(full)| over models and resamples (Fig. 6 reports
    this per-model rank error, 6 down to 2 in HELM), or its ``quantile`` when one is given.
    """
    n_boot, _ = _check_common(n_boot, 0.5, score, ties)
    q = None if quantile is None else check_fraction(quantile, "quantile")
    rng = check_rng(rng)
    bench = Benchmark.from_data(data, **kw)
    num, den = bench.sub_sums()
    full = _score(bench, num, den, score, ties)[0]
    r_full = stats.rankdata(-full, method="min")
    rows = []
    for s in sizes:
        s = check_positive_int(int(s), "sizes")
        res = _resampled_scores(bench, "examples", s, n_boot, rng, score, ties)[0]
        r = stats.rankdata(-np.where(np.isnan(res), -np.inf, res), method="min", axis=1)
        err = np.abs(r - r_full[None])
        rows.append(dict(size=s, compute_fraction=_compute_fraction(bench, "examples", s),
                         mean_abs_rank_error=float(err.mean()),
                         resolution=float(err.mean() if q is None else np.quantile(err, q))))
    return pd.DataFrame(rows)


def subscenario_correlations(data: Any, **kw: Any) -> pd.DataFrame:
    """Kendall τ between the model rankings of every pair of subscenarios (App. E, Fig. 12).

    Pairwise-complete models per pair (pandas ``DataFrame.corr``). Returns a subscenario ×
    subscenario DataFrame whose index carries the scenario of each subscenario as a second level.
    """
    bench = Benchmark.from_data(data, **kw)
    num, den = bench.sub_sums()
    with np.errstate(invalid="ignore", divide="ignore"):
        sub = np.where(den[0] > 0, num[0] / np.where(den[0] > 0, den[0], 1), np.nan)
    idx = pd.MultiIndex.from_arrays([bench.scenario_names[bench.scen_of_sub], bench.subscenario_names],
                                    names=["scenario", "subscenario"])
    return pd.DataFrame(sub, index=bench.model_ids, columns=idx).corr(method="kendall", min_periods=3)


# =============================================================================================
# MWR pathologies (App. B) and detectors on real tables
# =============================================================================================
@dataclass(frozen=True, eq=False)
class Counterexample:
    """An App. B construction: scores and MWR before / after a change that should not matter.

    Attributes
    ----------
    name, description : str
    before, after : DataFrame (models × columns)
    groups_before, groups_after : arrays or None — scenario of each column (None = one each)
    mwr_before, mwr_after : Series
    flipped : tuple[str, str] — the pair whose order reverses
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
        """True when the order of the ``flipped`` pair reverses (or a strict order becomes a tie)."""
        a, b = self.flipped
        return bool((self.mwr_before[a] > self.mwr_before[b]) and (self.mwr_after[a] <= self.mwr_after[b]))


def counterexample_weaker_model(n_weaker: int = 2) -> Counterexample:
    """App. B "adding a model": A = (10, 10, 10), B = (12, 12, 8); adding weaker C = (9, 9, 9).

    With one C the two tie (App. B: 0.5, 0.5, 1 vs 1, 1, 0); with ``n_weaker`` ≥ 2 copies A overtakes B.
    """
    n_weaker = check_positive_int(n_weaker, "n_weaker")
    before = pd.DataFrame([[10.0, 10, 10], [12, 12, 8]], index=["A", "B"], columns=["s1", "s2", "s3"])
    weak = pd.DataFrame([[9.0, 9, 9]] * n_weaker, index=[f"C{i + 1}" for i in range(n_weaker)], columns=before.columns)
    after = pd.concat([before, weak])
    return Counterexample("weaker_model", f"adding {n_weaker} model(s) weaker than both in every scenario",
                          before, after, mean_win_rate(before), mean_win_rate(after), ("B", "A"))


def counterexample_grouping() -> Counterexample:
    """App. B "combining datasets": A = (1, 1, 0, 0), B = (0, 0, 1, 1); grouping the first two
    datasets into one scenario makes B the winner, grouping the last two makes A the winner."""
    t = pd.DataFrame([[1.0, 1, 0, 0], [0, 0, 1, 1]], index=["A", "B"], columns=["d1", "d2", "d3", "d4"])
    g_last = np.array(["d1", "d2", "S34", "S34"])
    g_first = np.array(["S12", "S12", "d3", "d4"])
    return Counterexample("grouping", "grouping d3+d4 (A wins) vs grouping d1+d2 (B wins)", t, t,
                          mean_win_rate(t, g_last), mean_win_rate(t, g_first), ("A", "B"), g_last, g_first)


def counterexample_partial_reporting(n_models: int = 11) -> Counterexample:
    """App. B "reporting partially": A's per-scenario win rates are (0.9, 0.9, 0), B's (0.8, 0.8, 0.8);
    A omitting its losing scenario lifts its MWR from 0.6 to 0.9, above B.

    Built with ``n_models`` = 11 models so that win rates are multiples of 0.1.
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


def _order_changes(s: np.ndarray, base_order: np.ndarray) -> np.ndarray:
    """(C,) bool: whether the scores s (C, ≥M) reorder the models ``base_order`` (best first)."""
    sub = s[:, base_order]
    return (np.diff(sub, axis=1) >= 0).any(axis=1)  # an originally lower model reaching or passing a higher


def _scenarios_and_mwr(bench: Benchmark, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """Scenario scores (M, S) of the original benchmark and the models' MWR (M,)."""
    num, den = bench.sub_sums()
    scen = _scenario_table(num, den, bench.scen_of_sub, bench.n_scen)[0]
    return scen, _weighted_nanmean(_win_rates(scen[None], ties), None)[0]


def _flip(bench: Benchmark, order: np.ndarray, base: np.ndarray, new: np.ndarray) -> dict:
    """The top models ``order`` before and after a change of the MWR from ``base`` to ``new`` (M,)."""
    new_order = order[np.argsort(-new[order], kind="stable")]
    return dict(old_top=list(bench.model_ids[order]), new_top=list(bench.model_ids[new_order]),
                old_mwr=base[order].round(4).tolist(), new_mwr=new[new_order].round(4).tolist())


def clone_flips(data: Any, *, top_k: int = 5, n_clones: int = 1, eps: float | None = None,
                ties: str = "strict", **kw: Any) -> pd.DataFrame:
    """Search for a dominated "clone" whose insertion reorders the current top models (Sect. 5.5).

    For every model c a clone slightly below c in every scenario it reports (by ``eps``, default half
    the smallest gap between distinct scores, so the clone loses to c and to nobody c beats) is added
    ``n_clones`` times; the MWR of all models is recomputed for all candidates in one batch.

    Returns
    -------
    DataFrame, one row per candidate that changes the order of the ``top_k`` models: clone_of,
    new_top (the top-k order after insertion), old/new MWR of the models that swap.
    """
    _choice(ties, "ties", _TIES)
    bench = Benchmark.from_data(data, **kw)
    top_k = check_positive_int(top_k, "top_k", minimum=2, maximum=bench.n_models)
    n_clones = check_positive_int(n_clones, "n_clones")
    scen, base = _scenarios_and_mwr(bench, ties)
    if eps is None:
        v = np.unique(scen[~np.isnan(scen)])
        eps = 0.5 * float(np.diff(v).min()) if v.size > 1 else 1e-9
    elif not isinstance(eps, Real) or not eps > 0:
        raise ValueError(f"eps: expected a positive number, got {eps!r}")
    order = np.argsort(-base, kind="stable")[:top_k]
    M = bench.n_models
    batch = np.empty((M, M + n_clones, bench.n_scen))
    batch[:, :M] = scen[None]
    batch[:, M:] = (scen - eps)[:, None, :]
    new = _weighted_nanmean(_win_rates(batch, ties), None)  # (M, M + n_clones)
    hit = np.flatnonzero(_order_changes(new, order))
    # only the (few) flips are reported
    rows = [dict(clone_of=bench.model_ids[c], n_clones=n_clones, **_flip(bench, order, base, new[c])) for c in hit]
    return pd.DataFrame(rows, columns=["clone_of", "n_clones", "old_top", "new_top", "old_mwr", "new_mwr"])


def removal_flips(data: Any, *, top_k: int = 2, ties: str = "strict", **kw: Any) -> pd.DataFrame:
    """Models (outside the top ``top_k``) whose removal reorders the top ``top_k`` (davinci2 / Cohere flip).

    Removing a model = marking its row missing, which drops it as an opponent everywhere (App. A).
    """
    _choice(ties, "ties", _TIES)
    bench = Benchmark.from_data(data, **kw)
    top_k = check_positive_int(top_k, "top_k", minimum=2, maximum=bench.n_models - 1)
    scen, base = _scenarios_and_mwr(bench, ties)
    order = np.argsort(-base, kind="stable")[:top_k]
    M = bench.n_models
    batch = np.repeat(scen[None], M, axis=0)
    batch[np.arange(M), np.arange(M)] = np.nan
    new = _weighted_nanmean(_win_rates(batch, ties), None)
    changed = _order_changes(new, order)
    changed[order] = False  # removing a top model trivially changes the top list
    rows = [dict(removed=bench.model_ids[c], **_flip(bench, order, base, new[c])) for c in np.flatnonzero(changed)]
    return pd.DataFrame(rows, columns=["removed", "old_top", "new_top", "old_mwr", "new_mwr"])


# =============================================================================================
# Flash-HELM (Algorithm 1)
# =============================================================================================
_DEFAULT_TIERS = ((1, 0), (2, 1), (5, 2), (10, 3), (20, 4))  # (first rank of tier, required resolution)


@dataclass(frozen=True, eq=False)
class FlashHELMResult:
    """Result of :func:`flash_helm`.

    Attributes
    ----------
    ranks : DataFrame, one row per evaluated model: rank_flash, rank_full, stop_size, items_used,
        items_full, saving (items_full / items_used), abs_rank_error, required_resolution, within.
    resolution : DataFrame — the Res(S) curve used (Fig. 6), with the tier each size serves.
    saving : float — total items of the full benchmark / total items used, over all models.
    """

    ranks: pd.DataFrame
    resolution: pd.DataFrame
    saving: float


def flash_helm(
    data: Any,
    new_models: Any = None,
    *,
    sizes: Sequence[int | None] = (20, 50, 200, 1000, None),
    tiers: Sequence[tuple[int, int]] = _DEFAULT_TIERS,
    resolution: Any = None,
    quantile: float | None = None,
    rule: str = "paper",
    score: Score = "mwr",
    n_boot: int = 100,
    ties: str = "strict",
    rng: Any = None,
    **kw: Any,
) -> FlashHELMResult:
    """Efficient coarse-to-fine tournament (Algorithm 1) with Res(S) estimated from the data (Fig. 6).

    Each new model is evaluated on the first S examples of a random order of every subscenario
    (nested samples, so going to the next S costs only the new examples), for S in ``sizes``
    (``None`` = all). The reference models are scored on the same examples. After each stage
    the model stops when ``Rank(M, S) + Res(S) >= TierRank(S)`` (``rule="paper"``) or, more
    cautiously, ``Rank(M, S) - Res(S) >= TierRank(S)`` (``rule="conservative"``: even the optimistic
    rank lies in the tier that S serves), where TierRank(S) is the first rank of the best tier whose
    required resolution Res(S) meets.

    Parameters
    ----------
    data : per-example benchmark (ResponseMatrix with scenario columns).
    new_models : ids or positions evaluated as newcomers (default: every model in turn, leave one out);
        the remaining models are the reference benchmark.
    tiers : (first rank, required rank resolution) pairs; default rank 1 → 0, 2–4 → 1, 5–9 → 2,
        10–19 → 3, ≥ 20 → 4 (Sect. 6).
    resolution : dict {size: Res} or None (estimated by :func:`rank_resolution`: the mean absolute
        rank error, or its ``quantile``).
    """
    _choice(rule, "rule", ("paper", "conservative"))
    _check_common(n_boot, 0.5, score, ties)
    rng = check_rng(rng)
    bench = Benchmark.from_data(data, **kw)
    if bench.is_table:
        raise ValueError("data: Flash-HELM subsamples examples and needs per-example data")
    if not sizes or sizes[-1] is not None:
        sizes = [*sizes, None]
    finite = [check_positive_int(int(s), "sizes") for s in sizes[:-1]]
    if resolution is None:
        rr = rank_resolution(bench, finite, quantile=quantile, score=score, n_boot=n_boot, ties=ties, rng=rng)
        res_map = dict(zip(rr["size"], rr["resolution"]))
    else:
        res_map = {int(k): float(v) for k, v in dict(resolution).items()}
        rr = pd.DataFrame({"size": list(res_map), "resolution": list(res_map.values())})
    try:
        tiers = sorted((int(a), float(b)) for a, b in tiers)
    except (TypeError, ValueError):
        raise ValueError("tiers: expected (first rank, required resolution) pairs") from None
    if not tiers or tiers[0][0] != 1:
        raise ValueError(f"tiers: the first tier must start at rank 1, got {tiers[:1]}")

    def tier_rank(res: float) -> float:
        ok = [first for first, need in tiers if res <= need]
        return float(min(ok)) if ok else np.inf

    rr = rr.assign(tier_rank=[tier_rank(r) for r in rr["resolution"]])
    if new_models is None:
        new_pos = np.arange(bench.n_models)
    else:
        from .responses import _indexer

        new_pos = _indexer(new_models, bench.model_ids, "new_models")
    # Nested subsample: a random order of the items of each subscenario; stage S takes the first S.
    groups = bench.items_of_sub()
    perm_rank = np.empty(bench.n_items, np.intp)
    for g in groups:
        perm_rank[g] = rng.permutation(len(g))
    items_full = bench.n_items
    # Scores of all models at every stage (one pass per stage; every model as a newcomer at once).
    stage_scores = {}
    for S in sizes:
        take = np.ones(bench.n_items) if S is None else (perm_rank < S).astype(float)
        num, den = bench.sub_sums(take[None])
        stage_scores[S] = (num[0], den[0], int(take.sum()))
    # Without new_models every model is ranked against all the others: one scoring per stage serves them all.
    shared: dict = {}

    def scored(S, keep):
        if S in shared:
            return shared[S]
        n_s, d_s, _ = stage_scores[S]
        out = _score(bench, n_s[None], d_s[None], score, ties, model_mask=keep)[0]
        if new_models is None:
            shared[S] = out
        return out

    rows = []
    for m in new_pos:  # a handful of newcomers; each stage is one vectorised scoring
        ref = np.ones(bench.n_models, bool)
        if new_models is not None:  # newcomers are ranked against the references, not each other
            ref[new_pos] = False
        ref[m] = True
        keep = np.flatnonzero(ref)
        me = int(np.searchsorted(keep, m))
        full = scored(None, keep)
        rank_full = int(1 + (full > full[me]).sum())
        for S in sizes:
            used = stage_scores[S][2]
            s = scored(S, keep)
            rank = int(1 + (s > s[me]).sum())
            if S is None:
                res_s, tr = 0.0, 1.0
                break
            res_s = res_map.get(S, np.inf)
            tr = tier_rank(res_s)
            stop = rank + res_s >= tr if rule == "paper" else rank - res_s >= tr
            if stop:
                break
        need = [need for first, need in tiers if first <= rank_full][-1]
        rows.append(dict(model=bench.model_ids[m], rank_flash=rank, rank_full=rank_full,
                         stop_size="max" if S is None else S, items_used=used, items_full=items_full,
                         saving=items_full / used, abs_rank_error=abs(rank - rank_full),
                         required_resolution=need, within=abs(rank - rank_full) <= need))
    ranks = pd.DataFrame(rows).set_index("model")
    return FlashHELMResult(ranks=ranks, resolution=rr, saving=float(ranks["items_full"].sum() / ranks["items_used"].sum()))
