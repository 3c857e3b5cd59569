"""Rank switches (Fig. 3), prompt strategies (Fig. 4), rank trajectories (Fig. 1), rank resolution (Fig. 6)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._validation import check_fraction, check_positive_int, check_rng
from ..responses import ResponseMatrix
from ._benchmark import Benchmark, Score, _check_sizes
from ._dior import _check_common, _level
from ._resample import _check_example_size, _compute_fraction, _multiplicity, _resampled_scores
from ._metametrics import _switch, _wilson
from ._winrate import _score

# =============================================================================================
# Rank switches (Fig. 3), prompt strategies (Fig. 4), rank resolution (Fig. 6)
# =============================================================================================
def rank_switch_curve(
    data: Any,
    sizes: Sequence[int],
    *,
    cluster_sizes: Sequence[int] | None = None,
    n_top: int = 5,
    score: Score = "mwr",
    n_boot: int = 1000,
    confidence_level: float = 0.95,
    ci: float | None = None,
    ties: str = "strict",
    rng: Any = None,
    progress: bool = False,
    **kw: Any,
) -> pd.DataFrame:
    """Probability that the first and last models of a cluster of adjacent ranks switch (Fig. 3).

    For each number of examples per subscenario in ``sizes`` the examples are resampled
    ``n_boot`` times; for a cluster size N and each of the ``n_top`` best models as the cluster's top
    (models ranked i … i+N−1 in the original ranking), a switch is the top scoring below the
    bottom (a tie counts ½).

    Parameters
    ----------
    data : ResponseMatrix or effstats.reliability.Benchmark
        Per-example scores with a scenario (and optionally subscenario) item column.
    sizes : sequence of int
        Examples per subscenario; a size above the largest subscenario raises ValueError.
    cluster_sizes : sequence of int, optional
        Numbers of adjacent ranks per cluster (at least 2). Default: 2, 3, 5, 10, 20 as far as there are models.
    n_top : int, default=5
        Clusters start at each of the ``n_top`` best models.
    score : {"mwr", "mean", "mean_of_means"}, default="mwr"
        Benchmark scoring function.
    n_boot : int, default=1000
        Resamples per size.
    confidence_level : float in (0, 1), default=0.95
        Level of the Wilson interval.
    ci : float, optional
        Deprecated alias of ``confidence_level`` (FutureWarning).
    ties : {"strict", "half"}, default="strict"
        Ties in the win rate.
    rng : int or numpy.random.Generator, optional
        Seed or generator.
    progress : bool, default=False
        Text progress bar over the sizes.
    **kw
        Item column names (``scenario``, ``subscenario``).

    Returns
    -------
    DataFrame
        Columns size, compute_fraction, cluster_size, p_switch, ci_low, ci_high, n_trials; the interval is
        Wilson's over the n_boot × n_top trials.

    See Also
    --------
    effstats.reliability.efficiency_curve : DIoR against the number of examples.
    effstats.reliability.rank_trajectories : Each model's rank band against the number of examples.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Fig. 3.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(12, 120, rng=0)  # 12 models, 120 examples in 3 scenarios of 40
    >>> rm = rm.with_metadata(items=rm.items.assign(scenario=np.arange(120) % 3))
    >>> from effstats.reliability import rank_switch_curve
    >>> sw = rank_switch_curve(rm, [10, 40], cluster_sizes=[2, 5], n_top=2, score="mean", n_boot=100, rng=0)
    >>> sw[["size", "cluster_size", "p_switch"]].round(3)
       size  cluster_size  p_switch
    0    10             2     0.390
    1    10             5     0.078
    2    40             2     0.348
    3    40             5     0.005
    """
    level, name = _level(confidence_level, ci, 0.95)
    n_boot, ci = _check_common(n_boot, level, score, ties, name)
    rng = check_rng(rng)
    bench = Benchmark.from_data(data, **kw)
    if bench.is_table:
        raise ValueError("data: rank-switch curves resample examples and need per-example data")
    if cluster_sizes is None:  # default: 2, 3, 5, 10, 20 as far as there are models
        cluster_sizes = [c for c in (2, 3, 5, 10, 20) if c <= bench.n_models]
    cluster_sizes = _check_sizes(cluster_sizes, "cluster_sizes", maximum=bench.n_models)
    if min(cluster_sizes) < 2:
        raise ValueError(f"cluster_sizes: a cluster holds at least 2 models, got {min(cluster_sizes)}")
    n_top = check_positive_int(n_top, "n_top", maximum=max(5, bench.n_models))
    num, den = bench.sub_sums()
    order = np.argsort(-_score(bench, num, den, score, ties)[0], kind="stable")
    sizes = _check_sizes(sizes, "sizes")
    for s in sizes:
        _check_example_size(bench, s, "sizes")
    it = sizes
    if progress:
        from tqdm import tqdm  # text bars: widget bars break with Debian's ipywidgets 6 and nbclient

        it = tqdm(sizes, desc="rank switches", leave=False)
    rows = []
    for s in it:
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
    confidence_level: float = 0.95,
    ci: float | None = None,
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
    data : ResponseMatrix
        Items are (example, prompt) cells with ``scenario``, ``example`` and ``prompt`` columns; every example
        must have every prompt.
    n_examples : sequence of int
        The K values.
    example, prompt : str, default="example", "prompt"
        Item columns naming each cell's example and prompt.
    score : {"mwr", "mean", "mean_of_means"}, default="mean_of_means"
        Benchmark scoring function.
    replace : bool, default=False
        Bootstrap (``True``, *Boot*) or sub-sample (``False``, *Sub*).
    n_boot : int, default=300
        Resamples per size.
    confidence_level : float in (0, 1), default=0.95
        Level of the percentile interval.
    ci : float, optional
        Deprecated alias of ``confidence_level`` (FutureWarning).
    ties : {"strict", "half"}, default="strict"
        Ties in the win rate.
    rng : int or numpy.random.Generator, optional
        Seed or generator.
    scenario : str, default="scenario"
        Item column naming each cell's scenario.

    Returns
    -------
    DataFrame
        Columns strategy, n_examples, budget, replace, mean_abs_diff, ci_low, ci_high: the mean over models
        of ``|score − full score|`` and its percentile interval over the n_boot draws.

    See Also
    --------
    effstats.reliability.dior : ``decision="prompts"`` resamples the prompts themselves.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Sect. 5.3, Fig. 4.
    .. [2] Liang, P., Bommasani, R., Lee, T. et al. "Holistic Evaluation of Language Models". Transactions
       on Machine Learning Research (TMLR), 2023 (arXiv:2211.09110).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from effstats import ResponseMatrix
    >>> from effstats.reliability import prompt_strategies
    >>> items = pd.DataFrame({"scenario": np.repeat(["a", "b"], 40), "example": np.tile(np.repeat(np.arange(20), 2), 2),
    ...                       "prompt": np.tile(np.arange(2), 40)})
    >>> rng = np.random.default_rng(0)
    >>> values = (rng.random((10, 80)) < np.linspace(0.3, 0.9, 10)[:, None]).astype(float)
    >>> out = prompt_strategies(ResponseMatrix(values, items=items), [2, 5], n_boot=100, rng=0)
    >>> out[["strategy", "n_examples", "budget", "mean_abs_diff"]].round(3)
          strategy  n_examples  budget  mean_abs_diff
    0  all_prompts           2       4          0.119
    1      uniform           2       4          0.116
    2  all_prompts           5      10          0.069
    3      uniform           5      10          0.067
    """
    level, name = _level(confidence_level, ci, 0.95)
    n_boot, ci = _check_common(n_boot, level, score, ties, name)
    rng = check_rng(rng)
    if not isinstance(data, ResponseMatrix):
        raise ValueError("data: expected a ResponseMatrix with example and prompt item columns")
    for c, nm in [(scenario, "scenario"), (example, "example"), (prompt, "prompt")]:
        if not isinstance(c, str):
            raise ValueError(f"{nm}: expected an item-metadata column name (str), got {c!r}")
    n_examples = _check_sizes(n_examples, "n_examples")
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
            raise ValueError(f"data: scenario {s!r} lacks some (example, prompt) cells; a full cross product is "
                             "required")
        cells.append(grid)
    most = max(g.shape[0] for g in cells)
    if max(n_examples) > most:
        raise ValueError(f"n_examples: {max(n_examples)} examples requested but the largest scenario holds {most}")
    rows = []
    for K in n_examples:
        for strategy in ("all_prompts", "uniform"):
            counts = np.zeros((n_boot, bench.n_items))
            for grid in cells:
                n_ex = grid.shape[0]
                if strategy == "all_prompts":
                    k = K if replace else min(K, n_ex)
                    ex = rng.integers(0, n_ex, (n_boot, k)) if replace else np.argsort(rng.random((n_boot, n_ex)),
                                                                                       1)[:, :k]
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
    confidence_level: float = 0.9,
    ci: float | None = None,
    ties: str = "strict",
    rng: Any = None,
    **kw: Any,
) -> pd.DataFrame:
    """Each model's rank against the number of examples per subscenario (Fig. 1).

    Parameters
    ----------
    data : ResponseMatrix or effstats.reliability.Benchmark
        Per-example scores with a scenario (and optionally subscenario) item column.
    sizes : sequence of int
        Examples per subscenario, resampled with replacement.
    score : {"mwr", "mean", "mean_of_means"}, default="mwr"
        Benchmark scoring function.
    n_boot : int, default=200
        Resamples per size.
    confidence_level : float in (0, 1), default=0.9
        Level of the rank band.
    ci : float, optional
        Deprecated alias of ``confidence_level`` (FutureWarning).
    ties : {"strict", "half"}, default="strict"
        Ties in the win rate.
    rng : int or numpy.random.Generator, optional
        Seed or generator.
    **kw
        Item column names (``scenario``, ``subscenario``).

    Returns
    -------
    DataFrame
        Columns model, size, compute_fraction, rank_full, rank_median, rank_low, rank_high (the ``ci``
        percentile band of the rank over ``n_boot`` resamples; rank 1 = best).

    See Also
    --------
    effstats.reliability.rank_resolution : The mean rank error at each size.
    effstats.reliability.rank_switch_curve : Switches within clusters of adjacent ranks.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Fig. 1.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(12, 120, rng=0)  # 12 models, 120 examples in 3 scenarios of 40
    >>> rm = rm.with_metadata(items=rm.items.assign(scenario=np.arange(120) % 3))
    >>> from effstats.reliability import rank_trajectories
    >>> tr = rank_trajectories(rm, [10], score="mean", n_boot=100, rng=0)
    >>> tr[["model", "rank_full", "rank_median"]].head(3)
      model  rank_full  rank_median
    0  sim0          6          6.0
    1  sim1          8          8.0
    2  sim2          3          3.0
    """
    level, name = _level(confidence_level, ci, 0.9)
    n_boot, ci = _check_common(n_boot, level, score, ties, name)
    rng = check_rng(rng)
    bench = Benchmark.from_data(data, **kw)
    if bench.is_table:
        raise ValueError("data: rank trajectories resample examples and need per-example data")
    num, den = bench.sub_sums()
    from scipy import stats  # here, not at import: the audit never needs scipy.stats

    r_full = stats.rankdata(-_score(bench, num, den, score, ties)[0], method="min")
    out = []
    for s in _check_sizes(sizes, "sizes"):
        _check_example_size(bench, s, "sizes")
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

    Parameters
    ----------
    data : ResponseMatrix or effstats.reliability.Benchmark
        Per-example scores with a scenario (and optionally subscenario) item column.
    sizes : sequence of int, default=(20, 50, 200, 1000)
        Examples per subscenario (Algorithm 1's stages), at most the largest subscenario.
    quantile : float in (0, 1), optional
        Report this quantile of the absolute rank error as the resolution instead of its mean.
    score : {"mwr", "mean", "mean_of_means"}, default="mwr"
        Benchmark scoring function.
    n_boot : int, default=200
        Resamples per size.
    ties : {"strict", "half"}, default="strict"
        Ties in the win rate.
    rng : int or numpy.random.Generator, optional
        Seed or generator.
    **kw
        Item column names (``scenario``, ``subscenario``).

    Returns
    -------
    DataFrame
        Columns size, compute_fraction, mean_abs_rank_error and resolution: Res(S) of Algorithm 1, the mean
        ``|rank(S) − rank(full)|`` over models and resamples (Fig. 6 reports this per-model rank error, 6 down to 2
        in HELM), or its ``quantile`` when one is given.

    See Also
    --------
    effstats.reliability.flash_helm : The tournament that stops models by Res(S).
    effstats.reliability.rank_trajectories : Each model's rank band.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Sect. 6, Algorithm 1, Fig. 6.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(12, 120, rng=0)  # 12 models, 120 examples in 3 scenarios of 40
    >>> rm = rm.with_metadata(items=rm.items.assign(scenario=np.arange(120) % 3))
    >>> from effstats.reliability import rank_resolution
    >>> rank_resolution(rm, [10, 40], score="mean", n_boot=100, rng=0).round(3)
       size  compute_fraction  mean_abs_rank_error  resolution
    0    10              0.25                1.196       1.196
    1    40              1.00                0.642       0.642
    """
    n_boot, _ = _check_common(n_boot, 0.5, score, ties)
    q = None if quantile is None else check_fraction(quantile, "quantile")
    rng = check_rng(rng)
    bench = Benchmark.from_data(data, **kw)
    num, den = bench.sub_sums()
    full = _score(bench, num, den, score, ties)[0]
    from scipy import stats

    r_full = stats.rankdata(-full, method="min")
    rows = []
    for s in _check_sizes(sizes, "sizes"):
        _check_example_size(bench, s, "sizes")
        res = _resampled_scores(bench, "examples", s, n_boot, rng, score, ties)[0]
        r = stats.rankdata(-np.where(np.isnan(res), -np.inf, res), method="min", axis=1)
        err = np.abs(r - r_full[None])
        rows.append(dict(size=s, compute_fraction=_compute_fraction(bench, "examples", s),
                         mean_abs_rank_error=float(err.mean()),
                         resolution=float(err.mean() if q is None else np.quantile(err, q))))
    return pd.DataFrame(rows)


def subscenario_correlations(data: Any, **kw: Any) -> pd.DataFrame:
    """Kendall τ between the model rankings of every pair of subscenarios (App. E, Fig. 12).

    Pairwise-complete models per pair (pandas ``DataFrame.corr``, at least 3 models).

    Parameters
    ----------
    data : ResponseMatrix, DataFrame or effstats.reliability.Benchmark
        Scores with scenario and subscenario item columns.
    **kw
        Item column names (``scenario``, ``subscenario``).

    Returns
    -------
    DataFrame
        Subscenario × subscenario; index and columns carry (scenario, subscenario).

    See Also
    --------
    effstats.reliability.dior : ``decision="subscenarios"`` measures what these correlations imply.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), App. E, Fig. 12.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(12, 120, rng=0)  # 12 models, 120 examples in 3 scenarios of 40
    >>> rm = rm.with_metadata(items=rm.items.assign(scenario=np.arange(120) % 3))
    >>> from effstats.reliability import subscenario_correlations
    >>> rm = rm.with_metadata(items=rm.items.assign(subscenario=np.arange(120) % 6))
    >>> corr = subscenario_correlations(rm)
    >>> corr.shape, round(float(corr.iloc[0, 1]), 2)
    ((6, 6), 0.62)
    """
    bench = Benchmark.from_data(data, **kw)
    num, den = bench.sub_sums()
    with np.errstate(invalid="ignore", divide="ignore"):
        sub = np.where(den[0] > 0, num[0] / np.where(den[0] > 0, den[0], 1), np.nan)
    idx = pd.MultiIndex.from_arrays([bench.scenario_names[bench.scen_of_sub], bench.subscenario_names],
                                    names=["scenario", "subscenario"])
    return pd.DataFrame(sub, index=bench.model_ids, columns=idx).corr(method="kendall", min_periods=3)
