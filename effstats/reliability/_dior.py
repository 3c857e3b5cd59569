"""DIoR: Decision Impact on Reliability (Sect. 2.1) and efficiency curves.

The bootstrap is split into two steps so that resamples can be computed in chunks anywhere (e.g. by a
distributed backend): :meth:`effstats.reliability.DIoRPlan.draw` gives the index arrays of a batch of resamples and
:meth:`effstats.reliability.DIoRPlan.statistic` the meta-metric of a batch from its index arrays;
:func:`effstats.reliability.dior` chains them.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np
import pandas as pd

from .._results import ConfidenceInterval, check_confidence_level
from .._shared import memory_limit as _memory_limit
from .._validation import check_fraction, check_positive_int, check_rng
from .._plain_exceptions import DegenerateDataWarning
from ._benchmark import (_DECISIONS, _OBJECTIVES, _SCORES, _TIES, Benchmark, Decision, Objective, Score, _check_sizes,
                         _choice, no_scenario_column)
from ._metametrics import _switch, _weighted_tau, _wilson, kendall_tau
from ._resample import _check_example_size, _chunk_size, _compute_fraction, _counts, _draw, _scores_from_counts
from ._winrate import _score


# =============================================================================================
# DIoR
# =============================================================================================
@dataclass(frozen=True, eq=False)
class DIoRResult:
    """Result of :func:`effstats.reliability.dior` (scipy.stats-like, frozen).

    Attributes
    ----------
    dior : float
        Lower bound of the ``confidence_level`` interval of the meta-metric (Sect. 2.1).
    statistic : float
        Mean meta-metric (τ, weighted τ, 1 − error rate, 1 − mean ``|Δ score|``).
    distribution : array (n_boot,)
        Meta-metric of each instantiation (for ``best_model`` the share of the ``n_top`` top pairs
        that kept their order).
    decision, objective, score : str
    size : int
        Number of scenarios / subscenarios / examples per subscenario / prompts drawn per instantiation.
    compute_fraction : float
        Items evaluated per model under the decision relative to the full benchmark (never above 1).
    ci : float
        The confidence level of ``dior`` (the argument ``confidence_level``).
    confidence_level : float
        The same level under the name of the argument (a read-only alias of ``ci``).
    n_trials : int
        Bernoulli trials behind ``best_model`` (n_boot × n_top); 0 for the other objectives.
    original : Series (n_models,)
        Benchmark score of each model on the original instantiation.
    resampled : array (n_boot, n_models)
        Benchmark scores under each instantiation.
    error_rate : float or None
        Best-model objective: probability that the top two switch (averaged over ``n_top`` repeats).

    See Also
    --------
    effstats.reliability.dior : Computes it.
    effstats.reliability.DIoRPlan.result : Builds it from a distribution computed in batches.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Sect. 2.1.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> x = np.linspace(0.9, 0.3, 8)[:, None] + np.random.default_rng(0).normal(0, 0.08, (8, 6))
    >>> table = pd.DataFrame(x.round(3), index=[f"m{i}" for i in range(8)], columns=list("ABCDEF"))
    >>> from effstats.reliability import dior
    >>> res = dior(table, "scenarios", "kendall", n_boot=200, rng=0)
    >>> round(res.dior, 3), round(res.statistic, 3), res.size, res.compute_fraction
    (0.857, 0.966, 6, 1.0)
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

    @property
    def confidence_level(self) -> float:
        """The confidence level of ``dior``: ``ci`` under the name of the argument that sets it."""
        return self.ci

    @property
    def standard_error(self) -> float:
        """Spread matching :meth:`effstats.reliability.DIoRResult.confidence_interval`.

        τ and ``|Δ score|``: standard deviation of the bootstrap distribution of the meta-metric (ddof = 1), the
        spread whose percentiles give the interval. ``best_model``: binomial standard error
        ``sqrt(p (1 − p) / n_trials)`` of the no-switch probability p, the quantity the Wilson interval is
        for (the standard deviation of the per-instantiation shares would be several times wider than that
        interval and describe something else).

        Returns
        -------
        float
            NaN when the distribution holds a single draw.

        See Also
        --------
        effstats.reliability.DIoRResult.confidence_interval : The interval this spread goes with.

        Examples
        --------
        >>> from effstats.datasets import load_helm_lite
        >>> from effstats.reliability import dior
        >>> res = dior(load_helm_lite(), n_boot=200, rng=0)
        >>> round(res.standard_error, 3)
        0.041
        """
        if self.objective == "best_model" and self.n_trials > 0:
            p = float(self.statistic)
            return float(np.sqrt(p * (1 - p) / self.n_trials))
        return float(np.std(self.distribution, ddof=1)) if self.distribution.size > 1 else float("nan")

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Two-sided interval of the meta-metric (DIoR is its lower end at the level used).

        Percentile interval of the instantiation distribution for τ and ``|Δ score|``; Wilson interval of
        the no-switch probability over ``n_trials`` for ``best_model`` (a per-instantiation 0/1
        outcome has no informative percentiles). The ``n_top`` repeats share the bootstrap draws, so
        the Wilson interval treats correlated trials as independent: read it as approximate.

        Parameters
        ----------
        confidence_level : float in (0, 1), default=0.95
            Two-sided level.

        Returns
        -------
        effstats.ConfidenceInterval
            ``(low, high)`` named tuple.

        See Also
        --------
        effstats.reliability.DIoRResult.standard_error : The matching spread.

        References
        ----------
        .. [1] Wilson, E. B. "Probable inference, the law of succession, and statistical inference". Journal of
           the American Statistical Association 22(158), 209–212, 1927.

        Examples
        --------
        >>> from effstats.datasets import load_helm_lite
        >>> from effstats.reliability import dior
        >>> res = dior(load_helm_lite(), n_boot=200, rng=0)
        >>> [round(bound, 3) for bound in res.confidence_interval(0.9)]
        [0.794, 0.931]
        """
        level = check_confidence_level(confidence_level)
        return ConfidenceInterval(*_interval(self.objective, self.distribution, self.n_trials, level))

    def to_frame(self) -> pd.DataFrame:
        """One-row tidy summary of the result.

        Returns
        -------
        DataFrame
            Columns decision, objective, score, size, compute_fraction, dior, statistic, standard_error,
            ci_low, ci_high, confidence_level, n_boot, error_rate.

        See Also
        --------
        effstats.reliability.efficiency_curve : Such rows for several sizes.

        Examples
        --------
        >>> from effstats.datasets import load_helm_lite
        >>> from effstats.reliability import dior
        >>> res = dior(load_helm_lite(), n_boot=200, rng=0)
        >>> res.to_frame()[["decision", "objective", "dior"]].round(3)
            decision objective   dior
        0  scenarios   kendall  0.773
        """
        lo, hi = self.confidence_interval(self.ci)
        return pd.DataFrame([dict(decision=self.decision, objective=self.objective, score=self.score, size=self.size,
                                  compute_fraction=self.compute_fraction, dior=self.dior, statistic=self.statistic,
                                  standard_error=self.standard_error, ci_low=lo, ci_high=hi, confidence_level=self.ci,
                                  n_boot=int(self.distribution.size), error_rate=self.error_rate)])


def _interval(objective: str, dist: np.ndarray, n_trials: int, ci: float) -> tuple[float, float]:
    if objective == "best_model":
        return _wilson(float(dist.mean()) * n_trials, n_trials, ci)
    lo, hi = np.quantile(dist, [(1 - ci) / 2, (1 + ci) / 2])
    return float(lo), float(hi)


def _level(confidence_level: Any, ci: Any, default: float) -> tuple[Any, str]:
    """The interval's level, and the name it was given by: ``ci`` is a deprecated alias of ``confidence_level``."""
    if ci is None:
        return confidence_level, "confidence_level"
    if not (isinstance(confidence_level, float) and confidence_level == default):
        raise ValueError("`ci` is deprecated and `confidence_level` was also given; set `confidence_level` only")
    warnings.warn("`ci` is deprecated and will be removed in a future version; use `confidence_level` (the name of "
                  "every interval level in effstats, as in scipy.stats)", FutureWarning, stacklevel=3)
    return ci, "ci"


def _check_common(n_boot: Any, ci: Any, score: Any, ties: Any, name: str = "confidence_level") -> tuple[int, float]:
    n_boot = check_positive_int(n_boot, "n_boot")
    ci = check_fraction(ci, name)
    _choice(score, "score", _SCORES)
    _choice(ties, "ties", _TIES)
    return n_boot, ci


@dataclass(frozen=True, eq=False)
class DIoRPlan:
    """Everything :func:`effstats.reliability.dior` needs besides the resamples.

    The benchmark, the decision and objective, the original scores and, for ``best_model``, the model masks and top
    pairs of the ``n_top`` repeats.

    Built by :func:`effstats.reliability.dior_plan`. ``draw(B, rng)`` returns the index arrays of B resamples and
    ``statistic(indices)`` the meta-metric (B,) and the scores (B, n_models) of those resamples, so
    batches can be computed independently (in chunks, in parallel) and concatenated; ``result`` turns
    the concatenated distribution into a :class:`effstats.reliability.DIoRResult`.

    Attributes
    ----------
    bench : effstats.reliability.Benchmark
        The validated benchmark.
    decision, objective, score, ties : str
        As given to :func:`effstats.reliability.dior_plan`.
    size : int or None
        Instantiation size (None: the original size).
    ci : float
        Confidence level of the DIoR.
    original : ndarray of shape (n_models,)
        Benchmark score of each model on the original instantiation.
    masks, pairs : tuple
        ``best_model``: the models kept and the top pair of each of the ``n_top`` repeats.

    See Also
    --------
    effstats.reliability.dior_plan : Builds it.
    effstats.reliability.dior : Draws and scores every batch in turn.
    effstats.distributed.dior : The same batches as Dask tasks.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Sect. 2.1.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> x = np.linspace(0.9, 0.3, 8)[:, None] + np.random.default_rng(0).normal(0, 0.08, (8, 6))
    >>> table = pd.DataFrame(x.round(3), index=[f"m{i}" for i in range(8)], columns=list("ABCDEF"))
    >>> import numpy as np
    >>> from effstats.reliability import dior_plan
    >>> plan = dior_plan(table, "scenarios", "kendall")
    >>> rng = np.random.default_rng(0)
    >>> parts = [plan.statistic(plan.draw(100, rng)) for _ in range(2)]  # two batches, e.g. on two workers
    >>> res = plan.result(np.concatenate([d for d, _ in parts]), np.concatenate([s for _, s in parts]))
    >>> res.distribution.shape, res.resampled.shape
    ((200,), (200, 8))
    """

    bench: Benchmark
    decision: str
    objective: str
    score: str
    ties: str
    size: int | None
    ci: float
    original: np.ndarray
    masks: tuple = (None,)
    pairs: tuple = ()

    @property
    def chunk_size(self) -> int:
        """Resamples per batch that keep the per-batch arrays around a few million cells.

        Returns
        -------
        int

        Examples
        --------
        >>> from effstats.datasets import load_helm_lite
        >>> from effstats.reliability import dior_plan
        >>> plan = dior_plan(load_helm_lite(), "scenarios", "kendall")
        >>> plan.chunk_size >= 1
        True
        """
        return _chunk_size(self.bench, self.decision, self.size)

    def draw(self, n: int, rng: Any = None) -> list[np.ndarray]:
        """Index arrays of ``n`` resamples (row b of every array belongs to resample b).

        Parameters
        ----------
        n : int
            Number of resamples.
        rng : int or numpy.random.Generator, optional
            Seed or generator.

        Returns
        -------
        list of ndarray of shape (n, k)
            One integer array for ``scenarios`` / ``subscenarios`` / ``prompts``; one per subscenario for
            ``examples``.

        See Also
        --------
        effstats.reliability.DIoRPlan.statistic : Scores the drawn resamples.

        Examples
        --------
        >>> from effstats.datasets import load_helm_lite
        >>> from effstats.reliability import dior_plan
        >>> plan = dior_plan(load_helm_lite(), "scenarios", "kendall")
        >>> [a.shape for a in plan.draw(3, rng=0)]  # 3 draws of HELM Lite's 10 scenarios
        [(3, 10)]
        """
        return _draw(self.bench, self.decision, self.size, check_positive_int(n, "n"), check_rng(rng))

    def _check_indices(self, indices: Any) -> list[np.ndarray]:
        """``indices`` as :meth:`effstats.reliability.DIoRPlan.draw` gives them: a list of integer (B, k) arrays with
        codes in range."""
        b = self.bench
        if self.decision == "examples":
            limits = [int(n) for n in b.group_sizes()]
        else:
            limits = [{"scenarios": b.n_scen, "subscenarios": b.n_sub, "prompts": b.n_prompts}[self.decision]]
        if isinstance(indices, (str, bytes, np.ndarray)) or not isinstance(indices, Sequence) \
                or len(indices) != len(limits):
            raise ValueError(f"indices: expected a list of {len(limits)} integer (B, k) array(s) as draw() returns, "
                             f"got {type(indices).__name__}" + (f" of length {len(indices)}"
                                                                 if isinstance(indices, Sequence) else ""))
        out = []
        for a, n in zip(indices, limits):
            a = np.asarray(a)
            if a.ndim != 2 or a.shape[1] == 0 or a.dtype.kind not in "iu":
                raise ValueError(f"indices: expected integer (B, k) arrays, got dtype {a.dtype} and shape {a.shape}")
            if a.size and (a.min() < 0 or a.max() >= n):
                raise ValueError(f"indices: codes must lie in [0, {n}), got {a.min()}..{a.max()}")
            out.append(a)
        if len({a.shape[0] for a in out}) != 1:
            raise ValueError("indices: every array must have the same number of rows (one per resample)")
        return out

    def statistic(self, indices: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Meta-metric and benchmark scores of the resamples given by ``indices``.

        Parameters
        ----------
        indices : list of ndarray
            Index arrays as :meth:`effstats.reliability.DIoRPlan.draw` returns them.

        Returns
        -------
        distribution : ndarray of shape (B,)
            The meta-metric of each resample.
        resampled : ndarray of shape (B, n_models)
            The benchmark score of each model in each resample.

        See Also
        --------
        effstats.reliability.DIoRPlan.result : Turns the concatenated batches into a result.

        Examples
        --------
        >>> from effstats.datasets import load_helm_lite
        >>> from effstats.reliability import dior_plan
        >>> plan = dior_plan(load_helm_lite(), "scenarios", "kendall")
        >>> distribution, resampled = plan.statistic(plan.draw(3, rng=0))
        >>> distribution.round(3).tolist(), resampled.shape
        ([0.882, 0.728, 0.897], (3, 91))
        """
        return self._distinct_statistic(self._check_indices(indices))

    def _distinct_statistic(self, indices: list[np.ndarray],
                            known: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`statistic` of checked ``indices``; ``known`` maps a sorted draw's bytes to its statistic and scores
        under a plan of the same benchmark, objective and original scores, which are taken rather than computed
        again (each draw's values do not depend on the other draws of its batch)."""
        if self.decision == "examples":
            return self._statistic(indices)
        # a resample's scores depend only on how often it drew each unit: each distinct draw is scored once
        # (few scenarios allow few distinct draws: 462 for 6 of 6, against 1,000 resamples)
        drawn = np.sort(indices[0], axis=1)
        distinct, where = np.unique(drawn, axis=0, return_inverse=True)
        if len(distinct) == len(drawn) and not known:
            return self._statistic(indices)
        have = [known.get(row.tobytes()) for row in distinct] if known else [None] * len(distinct)
        new = [i for i, h in enumerate(have) if h is None]
        dist = np.empty(len(distinct))
        resampled = np.empty((len(distinct), self.bench.n_models))
        if new:
            dist[new], resampled[new] = self._statistic([distinct[new]])
        for i, h in enumerate(have):
            if h is not None:
                dist[i], resampled[i] = h
        where = where.reshape(-1)
        return dist[where], resampled[where]

    def _known(self, batches: Sequence[list[np.ndarray]], res: DIoRResult) -> dict:
        """The statistic and scores of each distinct draw of ``batches`` (index arrays of a decision other than
        examples) whose DIoR is ``res``, as :meth:`_distinct_statistic` takes them."""
        drawn = np.sort(np.concatenate([b[0] for b in batches]), axis=1)
        distribution, resampled = res.distribution, res.resampled
        _, first = np.unique(drawn, axis=0, return_index=True)
        return {drawn[i].tobytes(): (distribution[i], resampled[i]) for i in first}

    def _statistic(self, indices: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        res = _scores_from_counts(self.bench, _counts(self.bench, self.decision, indices), self.score, self.ties,
                                  self.masks)
        if self.objective == "best_model":
            sw = np.stack([_switch(r, p[0], p[1]) for r, p in zip(res, self.pairs)], axis=1)  # (B, n_top)
            return 1.0 - sw.mean(1), res[0]
        resampled = res[0]
        if self.objective == "kendall":
            return kendall_tau(self.original, resampled), resampled
        if self.objective == "weighted_tau":
            return _weighted_tau(self.original, resampled), resampled
        d = np.abs(resampled - self.original[None])
        return 1.0 - np.where(np.isnan(d), 1.0, d).mean(1), resampled  # an unscorable model counts as maximal error

    def result(self, distribution: np.ndarray, resampled: np.ndarray) -> DIoRResult:
        """The result of the concatenated batches.

        Parameters
        ----------
        distribution : array-like of shape (n_boot,)
            The batches' meta-metrics, concatenated.
        resampled : ndarray of shape (n_boot, n_models)
            The batches' scores, concatenated in the same order.

        Returns
        -------
        effstats.reliability.DIoRResult

        Examples
        --------
        >>> from effstats.datasets import load_helm_lite
        >>> from effstats.reliability import dior_plan
        >>> plan = dior_plan(load_helm_lite(), "scenarios", "kendall")
        >>> res = plan.result(*plan.statistic(plan.draw(3, rng=0)))
        >>> round(res.statistic, 3), res.distribution.size
        (0.836, 3)
        """
        dist = np.asarray(distribution, dtype=float)
        n_trials = dist.size * len(self.pairs) if self.objective == "best_model" else 0
        stat = float(dist.mean())
        bench, decision, size = self.bench, self.decision, self.size
        full_size = {"scenarios": bench.n_scen, "subscenarios": bench.n_sub,
                     "examples": int(bench.group_sizes().max()), "prompts": bench.n_prompts}[decision]
        return DIoRResult(
            dior=_interval(self.objective, dist, n_trials, self.ci)[0], statistic=stat, distribution=dist,
            decision=decision, objective=self.objective, score=self.score,
            size=full_size if size is None else int(size), compute_fraction=_compute_fraction(bench, decision, size),
            ci=self.ci, n_trials=n_trials, original=pd.Series(self.original, index=bench.model_ids, name=self.score),
            resampled=resampled, error_rate=(1 - stat) if self.objective == "best_model" else None)


def dior_plan(
    data: Any,
    decision: Decision = "scenarios",
    objective: Objective = "kendall",
    *,
    size: int | None = None,
    score: Score = "mwr",
    confidence_level: float = 0.95,
    ci: float | None = None,
    n_top: int = 5,
    ties: str = "strict",
    scenario: str = "scenario",
    subscenario: str = "subscenario",
    prompt: str = "prompt",
) -> DIoRPlan:
    """Validate the arguments of :func:`effstats.reliability.dior` and prepare its plan (no resampling yet).

    Parameters
    ----------
    data : ResponseMatrix, DataFrame (models × scenarios) or array (n_models, n_items)
        As in :func:`effstats.reliability.dior`.
    decision : {"scenarios", "subscenarios", "examples", "prompts"}, default="scenarios"
        What is resampled.
    objective : {"kendall", "weighted_tau", "best_model", "model_quality"}, default="kendall"
        The meta-metric.
    size : int, optional
        Instantiation size (default: the original size).
    score : {"mwr", "mean", "mean_of_means"}, default="mwr"
        Benchmark scoring function.
    confidence_level : float in (0, 1), default=0.95
        Level of the interval whose lower end is the DIoR.
    ci : float, optional
        Deprecated alias of ``confidence_level`` (FutureWarning).
    n_top : int, default=5
        Repeats of the best-model objective.
    ties : {"strict", "half"}, default="strict"
        Ties in the win rate.
    scenario, subscenario, prompt : str, default="scenario", "subscenario", "prompt"
        Item-metadata columns of a ResponseMatrix giving the hierarchy.

    Returns
    -------
    effstats.reliability.DIoRPlan
        Draws and scores batches of resamples independently.

    Raises
    ------
    ValueError
        Bad input, naming the argument (a ``size`` above what the benchmark holds, too few scenarios, models
        that share no scenario, ...).

    See Also
    --------
    effstats.reliability.dior : The whole computation in one call.
    effstats.distributed.dior : The batches as Dask tasks.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Sect. 2.1.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> x = np.linspace(0.9, 0.3, 8)[:, None] + np.random.default_rng(0).normal(0, 0.08, (8, 6))
    >>> table = pd.DataFrame(x.round(3), index=[f"m{i}" for i in range(8)], columns=list("ABCDEF"))
    >>> from effstats.reliability import dior_plan
    >>> plan = dior_plan(table, "scenarios", "best_model", n_top=2)
    >>> distribution, resampled = plan.statistic(plan.draw(50, rng=0))
    >>> distribution.shape, resampled.shape
    ((50,), (50, 8))
    """
    level, name = _level(confidence_level, ci, 0.95)
    _, ci = _check_common(1, level, score, ties, name)
    _choice(decision, "decision", _DECISIONS)
    _choice(objective, "objective", _OBJECTIVES)
    bench = Benchmark.from_data(data, scenario=scenario, subscenario=subscenario, prompt=prompt)
    if size is not None:
        size = check_positive_int(size, "size")
    if decision == "scenarios" and bench.n_scen < 2:
        raise ValueError(f"data: resampling scenarios needs at least 2 scenarios, got {bench.n_scen}")
    if decision == "examples" and bench.is_table:
        raise ValueError("decision: 'examples' needs per-example data (items grouped in scenarios); "
                         + (no_scenario_column(data, scenario) or "this table has one score per scenario"))
    if decision == "examples":
        _check_example_size(bench, size)
    if decision == "scenarios" and size is not None and size > bench.n_scen:
        raise ValueError(f"size: {size} scenarios requested, the benchmark has {bench.n_scen}")
    if decision == "subscenarios" and size is not None and size > bench.n_sub:
        raise ValueError(f"size: {size} subscenarios requested, the benchmark has {bench.n_sub}")
    # n_top drives the best-model objective only; elsewhere anything up to max(5, n_models) (the default fits any table)
    n_top = check_positive_int(n_top, "n_top", maximum=max(5, bench.n_models))
    if objective == "best_model" and n_top > bench.n_models - 1:
        raise ValueError(f"n_top: expected at most n_models - 1 = {bench.n_models - 1} repeats, got {n_top}")
    if decision == "prompts" and bench.prompt_of_item is None:
        raise ValueError(f"prompt: decision 'prompts' needs a {prompt!r} column in the item metadata")
    bench.check_connected("data")
    num, den = bench.sub_sums()
    original = _score(bench, num, den, score, ties)[0]
    if np.isnan(original).any():
        bad = bench.model_ids[np.isnan(original)][:5].tolist()
        raise ValueError(f"data: score undefined for models {bad} (no scenario shared with another model)")
    masks: tuple = (None,)
    pairs: tuple = ()
    if objective == "best_model":
        # Repeat r removes the r best models of the original ranking "as if not yet submitted".
        m_list, p_list = [], []
        keep = np.ones(bench.n_models, bool)
        for _ in range(n_top):
            orig_r = _score(bench, num, den, score, ties, model_mask=keep)[0]
            pos = np.flatnonzero(keep)
            top2 = pos[np.argsort(-orig_r, kind="stable")[:2]]
            m_list.append(keep.copy())
            p_list.append(np.searchsorted(pos, top2))
            keep[top2[0]] = False
        masks, pairs = tuple(m_list), tuple(p_list)
    return DIoRPlan(bench, decision, objective, score, ties, size, ci, original, masks, pairs)


def dior(
    data: Any,
    decision: Decision = "scenarios",
    objective: Objective = "kendall",
    *,
    size: int | None = None,
    score: Score = "mwr",
    n_boot: int = 1000,
    confidence_level: float = 0.95,
    ci: float | None = None,
    n_top: int = 5,
    ties: str = "strict",
    rng: Any = None,
    progress: bool = False,
    scenario: str = "scenario",
    subscenario: str = "subscenario",
    prompt: str = "prompt",
) -> DIoRResult:
    """Decision Impact on Reliability (Sect. 2.1): ``DIoR = lower CI bound of f(s_{c_o}(M), s_c(M))``.

    Parameters
    ----------
    data : ResponseMatrix, DataFrame (models × scenarios) or array (n_models, n_items)
        Scores with NaN / ``'-'`` / a ``missing`` mask for cells not evaluated. A ResponseMatrix may
        carry item columns ``scenario``, ``subscenario`` and ``prompt`` (names configurable). Models must
        form one comparison group (every pair linked through shared scenarios), else ValueError.
    decision : {"scenarios", "subscenarios", "examples", "prompts"}, default="scenarios"
        What is resampled with replacement: which scenarios (a scenario drawn twice counts twice),
        which subscenarios (within their scenario), which examples (within each subscenario) or
        which prompts (few-shot seeds).
    objective : {"kendall", "weighted_tau", "best_model", "model_quality"}, default="kendall"
        Full ranking (Kendall τ-b; Vigna's weighted τ via ``scipy.stats.weightedtau``), best model
        (1 − probability that the top two switch, repeated ``n_top`` times removing the current top
        model and re-scoring), or model quality (1 − mean over models of ``|Δ score|``; meant for scores in
        [0, 1] such as the MWR). An instantiation without any ordered pair gets τ = 0.
    size : int, optional
        Instantiation size: number of scenarios / subscenarios / prompts drawn, or examples per
        subscenario. Default: the original size (the reliability of the current benchmark). For
        ``examples`` a subscenario with fewer examples than ``size`` is drawn at its own size, and a
        ``size`` above the largest subscenario raises ValueError (more draws than examples would fake
        reliability).
    score : {"mwr", "mean", "mean_of_means"}, default="mwr"
        Benchmark scoring function (HELM uses the Mean Win Rate).
    n_boot : int, default=1000
        At least 2 (a standard error and an interval need two draws). Fewer than ``2 / (1 − confidence_level)``
        draws (40 at 95%) put the percentile DIoR between the two smallest draws: a DegenerateDataWarning
        says so.
    confidence_level : float in (0, 1), default=0.95
    ci : float, optional
        Deprecated alias of ``confidence_level`` (FutureWarning).
    n_top : int, default=5
        Repeats of the best-model objective.
    ties : {"strict", "half"}, default="strict"
        Ties in the win rate (App. A: strict; HELM's code: half).
    rng : int or Generator, optional
    progress : bool, default=False
        Show a tqdm bar over the resample batches.
    scenario, subscenario, prompt : str, default="scenario", "subscenario", "prompt"
        Item-metadata columns of a ResponseMatrix giving the hierarchy.

    Returns
    -------
    DIoRResult

    See Also
    --------
    effstats.reliability.efficiency_curve : DIoR against the instantiation size.
    effstats.reliability.dior_plan : The batch steps.
    effstats.reliability.audit : DIoR of every decision and objective in one report.

    Notes
    -----
    The resamples are drawn and scored in batches by :class:`effstats.reliability.DIoRPlan` (``dior_plan(...).draw`` /
    ``.statistic``): the same steps can be distributed batch by batch.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Sect. 2.1.
    .. [2] Vigna, S. "A weighted correlation index for rankings with ties". Proceedings of the 24th
       International Conference on World Wide Web (WWW), 2015.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> x = np.linspace(0.9, 0.3, 8)[:, None] + np.random.default_rng(0).normal(0, 0.08, (8, 6))
    >>> table = pd.DataFrame(x.round(3), index=[f"m{i}" for i in range(8)], columns=list("ABCDEF"))
    >>> from effstats.reliability import dior
    >>> res = dior(table, "scenarios", "kendall", n_boot=200, rng=0)
    >>> round(res.dior, 3)
    0.857
    >>> best = dior(table, "scenarios", "best_model", n_boot=200, n_top=2, rng=0)
    >>> round(best.dior, 3), round(best.error_rate, 3), best.n_trials
    (0.885, 0.084, 400)
    """
    n_boot = _check_n_boot(n_boot)
    rng = check_rng(rng)
    # the alias resolved here, so that its warning points at the caller's line and its error names it
    level, name = _level(confidence_level, ci, 0.95)
    check_fraction(level, name)
    plan = dior_plan(data, decision, objective, size=size, score=score, confidence_level=level,
                     n_top=n_top, ties=ties,
                     scenario=scenario, subscenario=subscenario, prompt=prompt)
    _check_n_boot(n_boot, _plan_bytes(plan))
    if n_boot * (1 - plan.ci) / 2 < 1 and objective != "best_model":  # after validation: bad input raises first
        warnings.warn(f"n_boot: with {n_boot} resamples the {(1 - plan.ci) / 2:.1%} quantile (DIoR) rests on the two "
                      f"smallest draws; use at least {int(np.ceil(20 / (1 - plan.ci)))}",
                      DegenerateDataWarning, stacklevel=2)
    batches = _drawn(plan, n_boot, rng)
    if progress:
        from tqdm import tqdm  # text bars: widget bars break with Debian's ipywidgets 6 and nbclient

        batches = tqdm(batches, desc=f"DIoR {decision}/{objective}", leave=False,
                       total=-(-n_boot // plan.chunk_size))
    return _scored(plan, batches)


def _check_n_boot(n_boot: Any, per_resample: int = 0) -> int:
    """``n_boot`` checked: at least 2, and (``per_resample`` bytes held for each resample) within the memory this
    process may use, so that a number of resamples no machine holds is one error before any is drawn."""
    n_boot = check_positive_int(n_boot, "n_boot")
    if n_boot < 2:
        raise ValueError(f"n_boot: at least 2 resamples are needed for a standard error and an interval, got {n_boot}")
    limit = _memory_limit()
    if per_resample and limit is not None and n_boot * per_resample > limit:
        raise ValueError(f"n_boot: {n_boot:,} resamples need at least {n_boot * per_resample / 2**30:,.1f} GiB "
                         f"({per_resample:,} bytes each), more than the {limit / 2**30:,.1f} GiB of memory this "
                         f"process may use; give fewer (1,000 is the default)")
    return n_boot


def _plan_bytes(plan: DIoRPlan, scored: bool = True) -> int:
    """Bytes :func:`dior` holds for each resample of ``plan``: its draws where they are drawn in one batch (every
    decision but ``examples``) and, with ``scored``, its statistic and scores."""
    width = 0
    if plan.decision != "examples":
        width = plan.size or {"scenarios": plan.bench.n_scen, "subscenarios": plan.bench.n_sub,
                              "prompts": plan.bench.n_prompts}[plan.decision]
    return 8 * (width + (1 + plan.bench.n_models if scored else 0))


def _drawn(plan: DIoRPlan, n_boot: int, rng: np.random.Generator) -> Iterator[list[np.ndarray]]:
    """The index arrays of ``n_boot`` resamples, batch by batch (one batch but for examples): drawn as they are
    scored, so that the draws of many examples are never all held at once."""
    step = plan.chunk_size
    for a in range(0, n_boot, step):
        yield plan.draw(min(step, n_boot - a), rng)


def _scored(plan: DIoRPlan, batches: Iterator[list[np.ndarray]], known: dict | None = None) -> DIoRResult:
    """The DIoR of the resamples ``batches`` holds (index arrays as :meth:`DIoRPlan.draw` gives them); ``known`` as
    :meth:`DIoRPlan._distinct_statistic` takes it."""
    dists, scores = [], []
    for indices in batches:
        d, s = plan._distinct_statistic(indices, known)
        dists.append(d)
        scores.append(s)
    # one batch (every decision but examples) is used as it is: a copy of a (n_boot, n_models) table costs its pages
    return plan.result(np.concatenate(dists), scores[0] if len(scores) == 1 else np.concatenate(scores, axis=0))


def _curve_row(r: DIoRResult) -> dict:
    """The row of :func:`efficiency_curve` for one size's DIoR."""
    lo, hi = r.confidence_interval(r.ci)
    return dict(decision=r.decision, objective=r.objective, size=r.size, compute_fraction=r.compute_fraction,
                dior=r.dior, statistic=r.statistic, standard_error=r.standard_error, ci_low=lo, ci_high=hi,
                error_rate=r.error_rate)


def efficiency_curve(data: Any, decision: Decision = "examples", objective: Objective = "kendall",
                     sizes: Sequence[int] | None = None, *, progress: bool = False, **kw: Any) -> pd.DataFrame:
    """DIoR against compute (Figs. 1/2, App. C): one :func:`effstats.reliability.dior` per instantiation size.

    Parameters
    ----------
    data : ResponseMatrix, DataFrame (models × scenarios) or array
        As in :func:`effstats.reliability.dior`.
    decision : {"scenarios", "subscenarios", "examples", "prompts"}, default="examples"
        What is resampled.
    objective : {"kendall", "weighted_tau", "best_model", "model_quality"}, default="kendall"
        The meta-metric.
    sizes : sequence of int, optional
        Instantiation sizes, at most what the benchmark holds (for ``examples``: the largest subscenario).
        Default: up to 8 sizes spaced geometrically from 1 to that maximum.
    progress : bool, default=False
        Text progress bar over the sizes.
    **kw
        Passed to :func:`effstats.reliability.dior` (``score``, ``n_boot``, ``ci``, ``n_top``, ``ties``, ``rng``,
        column names). One generator draws every size in turn.

    Returns
    -------
    DataFrame
        One row per size: decision, objective, size, compute_fraction, dior, statistic, standard_error,
        ci_low, ci_high, error_rate (None except for ``best_model``).

    See Also
    --------
    effstats.reliability.dior : One size.
    effstats.reliability.rank_switch_curve : Rank switches against the number of examples.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Figs. 1–2, App. C.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> x = np.linspace(0.9, 0.3, 8)[:, None] + np.random.default_rng(0).normal(0, 0.08, (8, 6))
    >>> table = pd.DataFrame(x.round(3), index=[f"m{i}" for i in range(8)], columns=list("ABCDEF"))
    >>> from effstats.reliability import efficiency_curve
    >>> curve = efficiency_curve(table, "scenarios", "kendall", [2, 4, 6], n_boot=100, rng=0)
    >>> curve[["size", "compute_fraction", "dior"]].round(3)
       size  compute_fraction   dior
    0     2             0.333  0.714
    1     4             0.667  0.825
    2     6             1.000  0.857
    """
    bench = Benchmark.from_data(data, **{k: kw.pop(k) for k in ("scenario", "subscenario", "prompt") if k in kw})
    if sizes is None:
        top = {"scenarios": bench.n_scen, "subscenarios": bench.n_sub, "prompts": max(bench.n_prompts, 1)}.get(
            decision, int(bench.group_sizes().max()))
        sizes = sorted({int(s) for s in np.unique(np.geomspace(1, top, 8).round()) if s >= 1})
    _choice(decision, "decision", _DECISIONS)
    top = {"scenarios": bench.n_scen, "subscenarios": bench.n_sub, "prompts": bench.n_prompts or None,
           "examples": int(bench.group_sizes().max())}[decision]
    sizes = _check_sizes(sizes, "sizes", maximum=top)
    rows = []
    it = sizes
    if progress:
        from tqdm import tqdm  # text bars: widget bars break with Debian's ipywidgets 6 and nbclient

        it = tqdm(sizes, desc=f"DIoR {decision}/{objective}", leave=False)
    rng = check_rng(kw.pop("rng", None))
    for s in it:
        rows.append(_curve_row(dior(bench, decision, objective, size=int(s), rng=rng, **kw)))
    return pd.DataFrame(rows)
