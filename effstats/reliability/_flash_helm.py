"""Flash-HELM: the coarse-to-fine tournament (Algorithm 1), with a stated guarantee for the top models."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._validation import _number, check_fraction, check_positive_int, check_rng
from .._shared import _indexer, _plain
from ..responses import ResponseMatrix
from ._benchmark import Benchmark, Score, _check_sizes, _negated_columns, no_scenario_column
from ._dior import _check_common
from ._resample import _counts, _draw
from ._metametrics import _wilson
from ._winrate import _less_and_ties, _score

_DEFAULT_TIERS = ((1, 0), (2, 1), (5, 2), (10, 3), (20, 4))  # (first rank of tier, required resolution)


@dataclass(frozen=True, eq=False)
class FlashHELMResult:
    """Result of :func:`effstats.reliability.flash_helm`.

    Attributes
    ----------
    ranks : DataFrame
        One row per evaluated model, best first (by rank_flash, ties by model id, as the audit's rank table):
        rank_flash, rank_low, rank_high (the range the model's full-data rank lies in, from its own sampled
        examples; NaN without a ``level``), rank_full, stop_size, items_used, items_full, saving (items_full /
        items_used), abs_rank_error, required_resolution, within.
    resolution : DataFrame
        Per stage size: Res(S) (Fig. 6), the tier rank it serves and the guard G(S).
    saving : float
        Total items of the full benchmark / total items used, over all models.
    top_k, level : int, float or None
        The guarantee requested (None when no guard was used).

    See Also
    --------
    effstats.reliability.flash_helm : Computes it.
    effstats.reliability.flash_helm_orders : Many of them over random example orders.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Sect. 6, Algorithm 1.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from effstats.reliability import flash_helm, simulate_examples
    >>> acc = np.linspace(0.85, 0.35, 30)[:, None] + np.zeros((1, 4))
    >>> table = pd.DataFrame(acc, index=[f"m{i}" for i in range(30)], columns=list("ABCD"))
    >>> data = simulate_examples(table, 300, rng=0)
    >>> out = flash_helm(data, ["m0", "m20"], sizes=(20, 100, None), score="mean_of_means", n_boot=50, rng=0)
    >>> int(out.ranks.loc["m0", "rank_flash"]), out.top_k_resolved
    (1, True)
    >>> list(out.resolution.columns)
    ['size', 'resolution', 'tier_rank', 'guard']
    """

    ranks: pd.DataFrame
    resolution: pd.DataFrame
    saving: float
    top_k: int | None = None
    level: float | None = None

    @property
    def top_k_resolved(self) -> bool:
        """Whether every model whose full rank is ≤ top_k was evaluated on all examples (rank_flash = rank_full).

        Returns
        -------
        bool

        See Also
        --------
        effstats.reliability.flash_helm_orders : How often this holds over random example orders.

        Examples
        --------
        >>> import pandas as pd
        >>> from effstats.reliability import flash_helm, simulate_examples
        >>> names = [f"m{k}" for k in range(30)]
        >>> table = pd.DataFrame({"A": [0.85 - k / 60 for k in range(30)], "B": 0.5}, index=names)
        >>> out = flash_helm(simulate_examples(table, 300, rng=0), ["m0", "m20"], sizes=(20, 100, None), score="mean",
        ...                  n_boot=50, rng=0)
        >>> out.top_k_resolved
        True
        """
        k = self.top_k or 1
        top = self.ranks[self.ranks.rank_full <= k]
        return bool((top.stop_size == "max").all())

    @property
    def statistic(self) -> float:
        """The total compute saving (items of the full benchmark / items used).

        Returns
        -------
        float

        See Also
        --------
        effstats.reliability.FlashHELMResult : Its ``ranks`` table holds the saving of each model.

        Examples
        --------
        >>> import pandas as pd
        >>> from effstats.reliability import flash_helm, simulate_examples
        >>> names = [f"m{k}" for k in range(30)]
        >>> table = pd.DataFrame({"A": [0.85 - k / 60 for k in range(30)], "B": 0.5}, index=names)
        >>> out = flash_helm(simulate_examples(table, 300, rng=0), ["m0", "m20"], sizes=(20, 100, None), score="mean",
        ...                  n_boot=50, rng=0)
        >>> round(out.statistic, 2)
        1.5
        """
        return self.saving

    def to_frame(self) -> pd.DataFrame:
        """The per-model table with the model as a column and the run's saving, top_k and level.

        Returns
        -------
        DataFrame
            ``ranks`` (best first) with a ``model`` column and the columns total_saving, top_k, level.

        See Also
        --------
        effstats.reliability.flash_helm_orders : One summary row per example order.

        Examples
        --------
        >>> import pandas as pd
        >>> from effstats.reliability import flash_helm, simulate_examples
        >>> names = [f"m{k}" for k in range(30)]
        >>> table = pd.DataFrame({"A": [0.85 - k / 60 for k in range(30)], "B": 0.5}, index=names)
        >>> out = flash_helm(simulate_examples(table, 300, rng=0), ["m0", "m20"], sizes=(20, 100, None), score="mean",
        ...                  n_boot=50, rng=0)
        >>> out.to_frame()[["model", "rank_flash", "rank_full"]]
          model  rank_flash  rank_full
        0    m0           1          1
        1   m20          19         20
        """
        return self.ranks.reset_index().assign(total_saving=self.saving, top_k=self.top_k, level=self.level)


def _rank(scores: np.ndarray) -> np.ndarray:
    """Competition ranks (1 = best, ties share the better rank) along the last axis; NaN scores rank last."""
    s = np.where(np.isnan(scores), np.inf, -scores)[..., None]  # sort-based count of strictly better models
    return 1 + _less_and_ties(s)[0][..., 0]


def _stage_errors(bench: Benchmark, sizes: Sequence[int], n_boot: int, rng: np.random.Generator, score: str,
                  ties: str) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """Full ranks (M,) and, per size S, ranks (n_boot, M) on S examples per subscenario drawn WITHOUT replacement
    (the distribution of a random example order's first S examples)."""
    num, den = bench.sub_sums()
    r_full = _rank(_score(bench, num, den, score, ties)[0])
    out = {}
    for S in sizes:
        ranks = []
        step = max(1, 2_000_000 // max(1, bench.n_items))
        for a in range(0, n_boot, step):
            B = min(step, n_boot - a)
            n, d, sw, cw = _counts(bench, "examples", _draw(bench, "examples", S, B, rng, replace=False))
            ranks.append(_rank(_score(bench, n, d, score, ties, sw, cw)))
        out[S] = np.concatenate(ranks)
    return r_full, out


def _kept_stage_errors(bench: Benchmark, sizes: Sequence[int], n_boot: int, rng: np.random.Generator, score: str,
                       ties: str, draws: dict | None, data: Any, kw: dict) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """:func:`_stage_errors` of ``bench`` (made from the object ``data`` with the item columns ``kw``), taken from
    ``draws`` (a run's ``draws=``) where it holds those of the same object, columns, models, sizes, ``n_boot``,
    score, ties and generator state, and kept there otherwise; the generator is left where drawing them leaves
    it."""
    if draws is None:
        return _stage_errors(bench, sizes, n_boot, rng, score, ties)
    # objects by identity (an item column given as an array too), each kept with the draws so that no other object
    # takes its id while they are in the dict
    cols = tuple(sorted((k, v if v is None or isinstance(v, str) else id(v)) for k, v in kw.items()))
    key = (id(data), cols, tuple(map(str, bench.model_ids)), tuple(sizes), n_boot, score, ties,
           repr(rng.bit_generator.state))
    if key not in draws:
        r_full, errs = _stage_errors(bench, sizes, n_boot, rng, score, ties)
        for a in (r_full, *errs.values()):
            a.flags.writeable = False  # shared by the runs given the same dict
        draws[key] = ((r_full, errs), rng.bit_generator.state, (data, dict(kw)))
    (r_full, errs), state, _ = draws[key]
    rng.bit_generator.state = state
    return r_full, dict(errs)


def flash_helm(
    data: Any,
    new_models: Any = None,
    *,
    sizes: Sequence[int | None] | None = None,
    tiers: Sequence[tuple[int, int]] = _DEFAULT_TIERS,
    resolution: Any = None,
    quantile: float | None = None,
    rule: str = "paper",
    top_k: int = 1,
    level: float | None = 0.95,
    guard: Any = None,
    draws: dict | None = None,
    score: Score = "mwr",
    n_boot: int = 200,
    ties: str = "strict",
    rng: Any = None,
    progress: bool = False,
    **kw: Any,
) -> FlashHELMResult:
    """Efficient coarse-to-fine tournament (Algorithm 1) with Res(S) estimated from the data (Fig. 6).

    Each model is evaluated on the first S examples of a random order of every subscenario (nested
    samples, so going to the next S costs only the new examples), for S in ``sizes`` (``None`` = all; default
    Algorithm 1's 20, 50, 200, 1000 below the largest subscenario; an explicit size above it is refused). The other
    models are scored on the same examples. After each stage the model stops when the tier rule says so —
    :math:`\\mathrm{Rank}(M, S) + \\mathrm{Res}(S) \\ge \\mathrm{TierRank}(S)` (``rule="paper"``) or
    :math:`\\mathrm{Rank}(M, S) - \\mathrm{Res}(S) \\ge \\mathrm{TierRank}(S)`
    (``rule="conservative"``) — AND, with a ``level``, when it cannot be a top-``top_k`` model:
    ``Rank(M, S) > top_k + G(S)`` and, for a newcomer, ``rank_low(S) > top_k``.

    Parameters
    ----------
    data : ResponseMatrix or Benchmark
        Per-example benchmark with scenario (and optionally subscenario) item columns (a models × scenarios table is
        refused: :func:`effstats.reliability.simulate_examples` gives per-example outcomes that reproduce it).
    new_models : sequence of ids or positions, optional
        Models evaluated as newcomers, each ranked against the remaining (reference) models only. Default: every
        model in turn, ranked against all the others.
    sizes : sequence of int or None, optional
        Stage sizes (examples per subscenario); ``None`` stands for all examples.
    tiers : sequence of (first rank, required rank resolution), default=((1, 0), (2, 1), (5, 2), (10, 3), (20, 4))
        Rank 1 → 0, 2–4 → 1, 5–9 → 2, 10–19 → 3, ≥ 20 → 4 (Sect. 6).
    resolution : dict {size: Res}, optional
        Default: the mean absolute rank error at each size (or its ``quantile``) over ``n_boot`` random orders.
    quantile : float in (0, 1), optional
        Use this quantile of the absolute rank error as Res(S) instead of its mean.
    rule : {"paper", "conservative"}, default="paper"
        Stop when :math:`\\mathrm{Rank} + \\mathrm{Res} \\ge \\mathrm{TierRank}` (Algorithm 1) or only when
        :math:`\\mathrm{Rank} - \\mathrm{Res} \\ge \\mathrm{TierRank}`.
    top_k : int, default=1
        How many top models the guarantee protects.
    level : float in (0, 1) or None, default=0.95
        Probability that every top-``top_k`` model is evaluated on all examples (see Notes); None drops the
        guards.
    guard : dict {size: G}, optional
        Precomputed G(S) (e.g. from :func:`effstats.reliability.flash_helm_orders`).
    draws : dict, optional
        Keeps the random orders behind Res(S) and G(S) from one run to the next: a run stores its draws in the
        dict, and a later run given the same dict, the same ``data`` object (unchanged) and the same
        ``new_models``, sizes, ``n_boot``, score, ties and seed takes them from it instead of drawing again (and
        leaves the generator where the draws leave it), so its results are those of a run that draws them
        itself. For runs that differ only in ``rule``, ``level``, ``quantile`` or ``top_k``; start with an
        empty dict.
    score : {"mwr", "mean", "mean_of_means"}, default="mwr"
        Benchmark scoring function.
    n_boot : int, default=200
        Random orders used to estimate Res(S) and G(S).
    ties : {"strict", "half"}, default="strict"
        Ties in the win rate.
    rng : int or numpy.random.Generator, optional
        Seed or generator.
    progress : bool, default=False
        Text progress bar over the models.
    **kw
        Item column names (``scenario``, ``subscenario``).

    Returns
    -------
    FlashHELMResult
        Per-model ranks (flash and full), stop sizes, rank ranges and the compute used.

    See Also
    --------
    effstats.reliability.flash_helm_orders : The same tournament over many random example orders.
    effstats.reliability.simulate_examples : Per-example outcomes that reproduce a leaderboard table.
    effstats.reliability.rank_resolution : The rank error Res(S) against the number of examples.

    Notes
    -----
    **The guarantee.**     Let α = 1 − ``level`` and n the number of stages below the full benchmark.

    *Newcomers* (``new_models`` given; the use of Flash-HELM: a new model ranked cheaply against fully evaluated
    references). The references' full scores are known, so a newcomer's full rank is fixed by its own full
    score alone. At each stage its full score is bounded from its own sampled examples: the stratified
    estimate from the S examples per subscenario (each a simple random sample without replacement, so with the
    finite-population correction) ± z · standard error, z the normal 1 − α / (2n) quantile (for ``score="mwr"``,
    which is not linear in the subscenario scores, a box over the J evaluated subscenarios at 1 − α / (2nJ) each,
    whose corners bound the MWR rank because a model's rank is monotone in each of its subscenario scores).
    ``rank_low`` / ``rank_high`` count the references above the upper / lower bound. A newcomer stops early
    only if ``rank_low(S) > top_k``. By the union bound over the stages and the two sides, with probability
    ≥ ``level`` over the example order (to the normal approximation of the stratified mean) every stage's
    bound holds, and then at once (i) every top-``top_k`` newcomer is evaluated on all examples, so its
    reported rank is its full-data rank, and (ii) every newcomer's full rank lies in its reported
    [``rank_low``, ``rank_high``]. This needs nothing about how the newcomer resembles the references. The
    references' Res(S) and G(S) still apply on top (a newcomer never stops earlier than under them).

    *Every model in turn* (``new_models=None``: a retrospective simulation on a fully evaluated benchmark).
    G(S) is the 1 − α / n quantile, over ``n_boot`` random example orders, of the largest rank drop
    ``rank(S) − rank(full)`` among the top-``top_k`` models. A top-k model stops early at stage S only if its
    rank drops by more than G(S), so by the union bound over the stages every top-k model is evaluated on all
    examples with probability ≥ ``level`` (up to the Monte-Carlo error of the quantile; the draws are
    subsamples without replacement, exactly a random order's first S examples). ``rank_low`` / ``rank_high``
    are reported as for newcomers but do not decide the stop.

    Res(S) and G(S) are estimated from fully evaluated models: with ``new_models``, from the reference models
    only (the newcomers' full results never tune their own stopping rule). G(S) describes how the
    references' leader moves; a newcomer scoring within a hair of the best references can drop further than
    that leader does, which is why newcomers also need their own bound. ``level=None`` drops both guards (the
    paper's rule alone, which can stop the full-data best model before its last stage).

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N., Shmueli-Scheuer, M.
       and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024 (arXiv:2308.11696), Sect. 6,
       Algorithm 1, Fig. 6.
    .. [2] Cochran, W. G. "Sampling Techniques", 3rd ed. Wiley, 1977, Ch. 5 (stratified random sampling, the
       finite-population correction).

    Examples
    --------
    A leading newcomer is evaluated on every example, so its reported rank is its full rank; the other one stops
    early with a rank range:

    >>> import numpy as np, pandas as pd
    >>> from effstats.reliability import flash_helm, simulate_examples
    >>> acc = np.linspace(0.85, 0.35, 30)[:, None] + np.zeros((1, 4))
    >>> table = pd.DataFrame(acc, index=[f"m{i}" for i in range(30)], columns=list("ABCD"))
    >>> data = simulate_examples(table, 300, rng=0)
    >>> out = flash_helm(data, ["m0", "m20"], sizes=(20, 100, None), score="mean_of_means", n_boot=50, rng=0)
    >>> out.ranks.loc["m0", ["rank_flash", "rank_full"]].astype(int).tolist(), out.ranks.loc["m0", "stop_size"]
    ([1, 1], 'max')
    >>> bool(out.ranks.loc["m20", "rank_low"] <= out.ranks.loc["m20", "rank_full"] <= out.ranks.loc["m20", "rank_high"])
    True
    """
    _setup = _flash_setup(data, sizes, tiers, resolution, quantile, rule, top_k, level, guard, score, n_boot, ties,
                          rng, kw, new_models=new_models, draws=draws)
    return _tournament(_setup, new_models, _setup["rng"], progress)


def _flash_setup(data, sizes, tiers, resolution, quantile, rule, top_k, level, guard, score, n_boot, ties, rng, kw,
                 new_models=None, draws=None):
    if rule not in ("paper", "conservative"):
        raise ValueError(f"rule: expected one of ['paper', 'conservative'], got {rule!r}")
    if draws is not None and not isinstance(draws, dict):
        raise ValueError(f"draws: expected a dict (empty before the first run), got {type(draws).__name__}")
    n_boot, _ = _check_common(n_boot, 0.5, score, ties)
    q = None if quantile is None else check_fraction(quantile, "quantile")
    lev = None if level is None else check_fraction(level, "level")
    rng = check_rng(rng)
    bench = Benchmark.from_data(data, **kw)
    hint = no_scenario_column(data, kw.get("scenario", "scenario")) if bench.is_table else ""
    if hint:
        raise ValueError(f"data: Flash-HELM subsamples examples and needs per-example data grouped in scenarios; "
                         f"{hint}")
    if bench.is_table:
        raise ValueError("data: Flash-HELM subsamples examples and needs per-example data, got a models x scenarios "
                         "table; effstats.reliability.simulate_examples(table) simulates per-example outcomes that "
                         "reproduce its scores (semi-synthetic), as in flash_helm(simulate_examples(table), ...)")
    bench.check_connected("data")
    top_k = check_positive_int(top_k, "top_k", maximum=bench.n_models)
    try:
        tiers = sorted((int(a), float(b)) for a, b in tiers)
    except (TypeError, ValueError):
        raise ValueError("tiers: expected (first rank, required resolution) pairs") from None
    if not tiers or tiers[0][0] != 1:
        raise ValueError(f"tiers: the first tier must start at rank 1, got {_plain(tiers[:1])}")
    if any(not (b >= 0 and np.isfinite(b)) for _, b in tiers):
        raise ValueError(f"tiers: required resolutions must be finite and >= 0, got {[b for _, b in tiers]}")
    gmax = int(bench.group_sizes().max())
    if sizes is None:  # Algorithm 1's grid, as far as the subscenarios reach
        sizes = [S for S in (20, 50, 200, 1000) if S < gmax]
        finite = sizes
    else:
        finite = sorted({S for S in _check_sizes(sizes, "sizes", allow_none=True, maximum=gmax) if S is not None})
    finite = [s for s in finite if s < gmax]
    need_boot = resolution is None or (lev is not None and guard is None)
    # Res(S) and G(S) come from fully evaluated models only: with newcomers, from the reference models (a
    # newcomer's full results are what Flash-HELM avoids computing, so they must not tune its own stopping rule).
    est = bench
    if new_models is not None and need_boot and finite:
        ref = np.ones(bench.n_models, bool)
        ref[_indexer(new_models, bench.model_ids, "new_models")] = False
        if ref.sum() < 2:
            raise ValueError("new_models: at least 2 reference models are needed to estimate Res(S) and G(S) "
                             "(or pass resolution= and guard= from an earlier run)")
        est = bench.subset_models(ref)
        top_k = min(top_k, est.n_models)
    r_full, errs = _kept_stage_errors(est, finite, n_boot, rng, score, ties, draws, data, kw) if need_boot and finite \
        else (None, {})
    if resolution is None:
        res_map = {S: float(np.abs(errs[S] - r_full).mean() if q is None else np.quantile(np.abs(errs[S] - r_full), q))
                   for S in finite}
    else:
        res_map = _size_map(resolution, "resolution", finite)
    if lev is None:  # no guard: the tier rule alone decides
        g_map = {S: -np.inf for S in finite}
    elif guard is not None:
        g_map = _size_map(guard, "guard", finite)
    else:
        top = r_full <= top_k
        a = (1 - lev) / max(len(finite), 1)
        g_map = {S: float(np.quantile((errs[S][:, top] - r_full[top]).max(1), 1 - a, method="higher")) for S in finite}

    def tier_rank(res: float) -> float:
        ok = [first for first, need in tiers if res <= need]
        return float(min(ok)) if ok else np.inf

    # The newcomer's own bound: every stage's interval holds at once with probability >= level (union bound over
    # the stages, two-sided so the same event also gives the reported rank range; MWR also splits over subscenarios).
    from scipy import stats  # here, not at import: the audit and most of the package never need scipy.stats

    z = None if lev is None else float(stats.norm.ppf(1 - (1 - lev) / (2 * max(len(finite), 1))))
    ref_rows = np.ones(bench.n_models, bool)
    if new_models is not None:
        ref_rows[_indexer(new_models, bench.model_ids, "new_models")] = False
    lo, hi = _sub_range(bench, ref_rows)
    rr = pd.DataFrame({"size": finite, "resolution": [res_map.get(S, np.inf) for S in finite]})
    rr = rr.assign(tier_rank=[tier_rank(r) for r in rr["resolution"]],
                   guard=[g_map.get(S, np.inf) for S in finite] if lev is not None else np.nan)
    # a guard given for fewer sizes leaves the other stages unguarded only if explicitly -inf; missing = never stop
    return dict(bench=bench, finite=finite, res_map=res_map, g_map=g_map, tiers=tiers, tier_rank=tier_rank, rule=rule,
                top_k=top_k, level=lev, score=score, ties=ties, rr=rr, rng=rng, z=z, lo=lo, hi=hi)


def _size_map(m: Any, name: str, finite: list) -> dict:
    """A {stage size: non-negative number} dict covering every finite stage size."""
    if not isinstance(m, dict):
        raise ValueError(f"{name}: expected a dict {{size: value}}, got {type(m).__name__}")
    try:
        out = {int(k): float(v) for k, v in m.items()}
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected integer sizes and numeric values, got {m!r}") from None
    bad = [k for k, v in out.items() if not (v >= 0 and np.isfinite(v))]
    if bad:
        raise ValueError(f"{name}: values must be finite and >= 0 (bad at sizes {bad})")
    missing = [S for S in finite if S not in out]
    if missing:
        raise ValueError(f"{name}: no value for stage sizes {missing}")
    return out


def _sub_range(bench: Benchmark, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest evaluated score of each subscenario among the models ``rows`` (n_sub,) each."""
    lo, hi = np.empty(bench.n_sub), np.empty(bench.n_sub)
    for j, g in enumerate(bench.items_of_sub()):
        v = bench.values[np.ix_(rows, g)][bench.observed[np.ix_(rows, g)]]
        lo[j], hi[j] = (v.min(), v.max()) if v.size else (0.0, 1.0)
    return lo, hi


def _own_interval(st: dict, total: np.ndarray, count: np.ndarray, sumsq: np.ndarray, n_full: np.ndarray,
                  num_full: np.ndarray, den_full: np.ndarray, keep: np.ndarray, me: int,
                  s_full: np.ndarray | None = None) -> tuple[int, int]:
    """Range [rank_low, rank_high] of a model's full-data rank from its own sampled examples.

    ``total``, ``count``, ``sumsq`` (n_sub,) are the sum, number and sum of squares of the model's sampled scores
    per subscenario, ``n_full`` its evaluated items per subscenario; the other models' full scores are known.
    Each subscenario mean is estimated from a simple random sample without replacement (finite-population
    correction); its variance is that of the sample with one pseudo-observation at each end of the subscenario's
    score range (Laplace / Agresti–Coull style), so a sample of identical scores still has a positive standard
    error. A subscenario none of whose sampled items the model was evaluated on is bounded by the range itself.
    ``s_full`` (len(keep),) are the kept models' full-data scores (computed when not given).
    """
    if st["score"] == "mwr":
        return _mwr_intervals(st, [(total, count, sumsq, n_full, me)], num_full, den_full, keep)[0]
    z, lo, hi, score, bench = st["z"], st["lo"], st["hi"], st["score"], st["bench"]
    part, seen, blind, est, v_est = _sample_moments(st, total, count, sumsq, n_full)
    # mean and mean of means are linear in the subscenario means: one interval for the model's full score
    if score == "mean":
        w = np.where(part, n_full, 0.0) / n_full[part].sum()
    else:
        scen = bench.scen_of_sub
        n_sub_in = np.bincount(scen[part], minlength=bench.n_scen)
        w = np.where(part, 1.0 / (np.count_nonzero(n_sub_in) * np.maximum(n_sub_in[scen], 1)), 0.0)
    centre = float(np.nansum(np.where(seen, w * est, 0.0)))
    half = z * float(np.sqrt((w ** 2 * v_est).sum()))
    upper = centre + half + float((w * hi)[blind].sum())
    lower = centre - half + float((w * lo)[blind].sum())
    if s_full is None:
        s_full = _score(bench, num_full, den_full, score, st["ties"], model_mask=keep)[0]
    others = np.delete(s_full, me)
    return int(1 + (others > upper).sum()), int(1 + (others > lower).sum())


def _sample_moments(st: dict, total: np.ndarray, count: np.ndarray, sumsq: np.ndarray,
                    n_full: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`_own_interval`'s subscenarios (evaluated, sampled, evaluated but not sampled) and the sampled means
    with their variances, (n_sub,) each."""
    lo, hi = st["lo"], st["hi"]
    part = n_full > 0
    seen = part & (count > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        n2 = count + 2
        var = (sumsq + lo ** 2 + hi ** 2 - (total + lo + hi) ** 2 / n2) / (n2 - 1)
        est = np.where(seen, total / np.where(seen, count, 1), np.nan)
        v_est = np.where(seen, np.clip(1 - count / np.where(part, n_full, 1), 0, 1) * np.maximum(var, 0)
                         / np.where(seen, count, 1), 0.0)
    return part, seen, part & ~seen, est, v_est


def _mwr_intervals(st: dict, models: list, num_full: np.ndarray, den_full: np.ndarray,
                   keep: np.ndarray) -> list[tuple[int, int]]:
    """:func:`_own_interval` for the Mean Win Rate, of several models among the same ``keep`` at once: ``models``
    holds each one's ``(total, count, sumsq, n_full, me)``.

    A model's interval is a box, simultaneous over its evaluated subscenarios; MWR ranks are monotone in each. The
    box's two corners are two tables (the model's row replaced, the others' full); every model's corners are scored
    in one call, a table each along the first axis: each MWR is one division of exact integers, the same number as
    the corner's table scored alone.
    """
    from scipy import special

    lo, hi = st["lo"], st["hi"]
    num = np.repeat(num_full[:1], 2 * len(models), axis=0)
    for i, (total, count, sumsq, n_full, me) in enumerate(models):
        part, _, blind, est, v_est = _sample_moments(st, total, count, sumsq, n_full)
        zb = float(special.ndtri(1 - (1 - special.ndtr(st["z"])) / max(int(part.sum()), 1)))  # stats.norm.ppf, .cdf
        half = zb * np.sqrt(v_est)
        num[2 * i:2 * i + 2, keep[me]] = [np.where(part, a * n_full, 0.0)
                                          for a in (np.where(blind, hi, est + half), np.where(blind, lo, est - half))]
    s = _score(st["bench"], num, den_full[:1], "mwr", st["ties"], model_mask=keep)
    return [(int(1 + (s[2 * i] > s[2 * i, me]).sum()), int(1 + (s[2 * i + 1] > s[2 * i + 1, me]).sum()))
            for i, (*_, me) in enumerate(models)]


def _stage_sums(V: np.ndarray, observed: np.ndarray, heads: list, S: int) -> tuple:
    """A stage's sums (n_models, n_sub) of the first ``S`` items of each subscenario's ``heads`` (all of a shorter
    one): scores, evaluated items and squared scores, with the number of items used.

    The subscenarios that use as many items are gathered together, (n_models, k, L), and summed along the items:
    the same sums, to the bit, as one subscenario's (n_models, L) columns summed alone."""
    n_models = V.shape[0]
    num, den, sq = (np.empty((n_models, len(heads))) for _ in range(3))
    lens = np.array([min(len(h), S) for h in heads])
    for L in np.unique(lens):
        js = np.flatnonzero(lens == L)
        cols = np.stack([heads[j][:L] for j in js])
        block = V[:, cols]
        num[:, js] = block.sum(-1)
        sq[:, js] = (block ** 2).sum(-1)
        den[:, js] = observed[:, cols].sum(-1)
    return num, den, int(lens.sum()), sq


# models ranked against all the others: the ranks of a stage counted and the Mean Win Rate intervals scored for all
# of them at once (False: model by model in the loop, as for a newcomer; the tests compare the two)
_TOGETHER = True


def _tournament(st: dict, new_models: Any, rng: np.random.Generator, progress: bool = False) -> FlashHELMResult:
    bench, finite, score, ties = st["bench"], st["finite"], st["score"], st["ties"]
    sizes = [*finite, None]
    if new_models is None:
        new_pos = np.arange(bench.n_models)
    else:
        arr = np.asarray(new_models, dtype=object)
        if arr.ndim > 1:
            raise ValueError(f"new_models: expected a 1-D list of ids or positions, got shape {arr.shape}")
        new_pos = _indexer(new_models, bench.model_ids, "new_models")
        if new_pos.size == 0:
            raise ValueError("new_models: expected at least one model")
        if np.unique(new_pos).size != new_pos.size:
            raise ValueError(f"new_models: duplicated models {_plain(bench.model_ids[new_pos])}")
        if new_pos.size == bench.n_models:
            raise ValueError("new_models: leave at least one reference model (or pass None to rank every model)")
    # Nested subsample: a random order of the items of each subscenario; stage S takes the first S.
    # Nested prefixes of one random order per subscenario: stage S sums the first S items of each (a gather of at
    # most n_sub · max(S) columns); the last stage is the full benchmark, whatever the order.
    groups = bench.items_of_sub()
    top = max(finite, default=0)
    heads = [g[rng.permutation(len(g))[:top]] for g in groups]
    V = bench.masked[0]
    num_full, den_full = bench.sub_sums()
    stage = {None: (num_full[0], den_full[0], bench.n_items, None)}
    for S in finite:
        stage[S] = _stage_sums(V, bench.observed, heads, S)
    shared: dict = {}

    def scored(S, keep):
        # Without new_models every model is ranked against all the others: one scoring per stage serves them all.
        if S in shared:
            return shared[S]
        n_s, d_s = stage[S][:2]
        out = _score(bench, n_s[None], d_s[None], score, ties, model_mask=keep)[0]
        if new_models is None:
            shared[S] = out
        return out

    everyone = np.arange(bench.n_models)
    ranked: dict = {}

    def rank_of(S, keep, me):
        # 1 + the number of kept models scoring higher; every model ranked against all the others: one count a stage
        if new_models is not None or not _TOGETHER:
            s = scored(S, keep)
            return int(1 + (s > s[me]).sum())
        if S not in ranked:
            s = scored(S, keep)
            srt = np.sort(s[~np.isnan(s)])
            ranked[S] = 1 + np.where(np.isnan(s), 0, len(srt) - np.searchsorted(srt, s, side="right"))
        return int(ranked[S][me])

    it = new_pos
    if progress:
        from tqdm import tqdm  # text bars: widget bars break with Debian's ipywidgets 6 and nbclient

        it = tqdm(new_pos, desc="Flash-HELM", leave=False)
    rows = []
    # every model ranked against all the others shares its references: the Mean Win Rate intervals of the models
    # that stop early are computed together after the loop (one scoring of all their boxes' corners)
    later = _TOGETHER and new_models is None and score == "mwr" and st["z"] is not None
    pending: list = []
    for m in it:  # each stage is one vectorised scoring (shared by all models in leave-none-out mode)
        if new_models is None:
            keep, me = everyone, m
        else:  # newcomers are ranked against the references, not each other
            ref = np.ones(bench.n_models, bool)
            ref[new_pos] = False
            ref[m] = True
            keep = np.flatnonzero(ref)
            me = int(np.searchsorted(keep, m))
        full = scored(None, keep)
        rank_full = rank_of(None, keep, me)
        low = high = np.nan
        for S in sizes:
            used = stage[S][2]
            rank = rank_of(S, keep, me)
            if S is None:
                low = high = rank
                break
            res_s = st["res_map"].get(S, np.inf)
            tr = st["tier_rank"](res_s)
            tier_stop = rank + res_s >= tr if st["rule"] == "paper" else rank - res_s >= tr
            if not (tier_stop and rank > st["top_k"] + st["g_map"].get(S, np.inf)):
                continue
            if st["z"] is None:
                break
            # the interval is needed only where the model could stop (it decides for a newcomer, and is reported)
            n_s, d_s, _, sq_s = stage[S]
            if later:
                pending.append((len(rows), (n_s[m], d_s[m], sq_s[m], den_full[0, m], me)))
                break
            low, high = _own_interval(st, n_s[m], d_s[m], sq_s[m], den_full[0, m], num_full, den_full, keep, me,
                                      full)
            # a newcomer also needs its own evidence: the references' G(S) does not know how close it is to them
            if new_models is None or low > st["top_k"]:
                break
            low = high = np.nan
        need = [need for first, need in st["tiers"] if first <= rank_full][-1]
        rows.append(dict(model=bench.model_ids[m], rank_flash=rank, rank_low=low, rank_high=high, rank_full=rank_full,
                         stop_size="max" if S is None else S, items_used=used, items_full=bench.n_items,
                         saving=bench.n_items / used, abs_rank_error=abs(rank - rank_full),
                         required_resolution=need, within=abs(rank - rank_full) <= need))
    if pending:
        for i, (low, high) in zip([i for i, _ in pending], _mwr_intervals(st, [r for _, r in pending], num_full,
                                                                           den_full, everyone)):
            rows[i].update(rank_low=low, rank_high=high)
    # best first, as the audit's rank table: by the Flash-HELM rank, ties by name
    ranks = pd.DataFrame(rows).set_index("model").sort_values(["rank_flash", "model"], kind="stable")
    return FlashHELMResult(ranks=ranks, resolution=st["rr"],
                           saving=float(ranks["items_full"].sum() / ranks["items_used"].sum()),
                           top_k=st["top_k"] if st["level"] is not None else None, level=st["level"])


def flash_helm_orders(
    data: Any,
    n_orders: int = 100,
    *,
    new_models: Any = None,
    progress: bool = False,
    rng: Any = None,
    **kw: Any,
) -> pd.DataFrame:
    """Run :func:`effstats.reliability.flash_helm` over ``n_orders`` random example orders.

    Res(S) and the guard G(S) are estimated once (from independent orders) and reused, as a maintainer
    would; each order is then a fresh tournament: every model against all others, or with ``new_models`` the
    newcomers against the references.

    Parameters
    ----------
    data : ResponseMatrix or effstats.reliability.Benchmark
        Per-example benchmark with scenario (and optionally subscenario) item columns (a models × scenarios table is
        refused: :func:`effstats.reliability.simulate_examples` gives per-example outcomes that reproduce it).
    n_orders : int, default=100
        Random example orders.
    new_models : sequence of ids or positions, optional
        Newcomers ranked against the other (reference) models; default: every model in turn.
    progress : bool, default=False
        Text progress bar over the orders.
    rng : int or numpy.random.Generator, optional
        Seed or generator.
    **kw
        Passed to :func:`effstats.reliability.flash_helm` (``sizes``, ``level``, ``top_k``, ``score``,
        ``n_boot``, ``draws``, ...): with ``draws``, a second call on the same data and seed that differs only
        in ``rule``, ``level``, ``quantile`` or ``top_k`` reuses the first one's draws of Res(S) and G(S).

    Returns
    -------
    DataFrame
        One row per order: order, saving, max_saving, then for the best evaluated model by full rank (the
        full-data best model, or the best newcomer) best_model, best_rank_full, best_rank_flash (its reported
        rank), best_rank_low / best_rank_high (its reported range), best_covered (full rank within it),
        best_stop (its stop size); top_k_resolved, within (share of models within their tier's resolution),
        mean_abs_rank_error, items_used / items_full (examples used by the evaluated models / all their
        examples). ``df.attrs`` holds ``resolution`` (the stage table as a dict of lists), ``top_k``, ``level``
        and ``p_resolved`` with its Wilson 95% interval (``p_resolved_ci``).

    See Also
    --------
    effstats.reliability.flash_helm : One order.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Sect. 6, Algorithm 1.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from effstats.reliability import flash_helm_orders, simulate_examples
    >>> acc = np.linspace(0.85, 0.35, 30)[:, None] + np.zeros((1, 4))
    >>> table = pd.DataFrame(acc, index=[f"m{i}" for i in range(30)], columns=list("ABCD"))
    >>> data = simulate_examples(table, 300, rng=0)
    >>> df = flash_helm_orders(data, 5, new_models=["m0", "m20"], sizes=(20, 100, None), score="mean_of_means",
    ...                        n_boot=50, rng=0)
    >>> df.best_model.unique().tolist(), bool(df.top_k_resolved.all()), bool((df.items_used < df.items_full).all())
    (['m0'], True, True)

    Runs that differ only in the rule or the level share their random orders behind Res(S) and G(S):

    >>> draws = {}
    >>> paper = flash_helm_orders(data, 5, level=None, sizes=(20, 100, None), n_boot=50, draws=draws, rng=0)
    >>> guarded = flash_helm_orders(data, 5, level=0.95, sizes=(20, 100, None), n_boot=50, draws=draws, rng=0)
    >>> len(draws), paper.attrs["resolution"]["resolution"] == guarded.attrs["resolution"]["resolution"]
    (1, True)
    """
    n_orders = check_positive_int(n_orders, "n_orders")
    rng = check_rng(rng)
    names = ("sizes", "tiers", "resolution", "quantile", "rule", "top_k", "level", "guard", "draws", "score", "n_boot",
             "ties")
    defaults = dict(sizes=None, tiers=_DEFAULT_TIERS, resolution=None, quantile=None, rule="paper", top_k=1,
                    level=0.95, guard=None, draws=None, score="mwr", n_boot=200, ties="strict")
    args = {k: kw.pop(k, defaults[k]) for k in names}
    st = _flash_setup(data, rng=rng, kw=kw, new_models=new_models, **args)
    it = range(n_orders)
    if progress:
        from tqdm import tqdm  # text bars: widget bars break with Debian's ipywidgets 6 and nbclient

        it = tqdm(it, desc="Flash-HELM orders", leave=False)
    rows = []
    for o in it:
        r = _tournament(st, new_models, rng)
        rk = r.ranks
        # of the models of the best full rank, the first in the data's order
        first = pd.Index(st["bench"].model_ids).get_indexer(rk.index[rk.rank_full == rk.rank_full.min()]).min()
        best = rk.loc[st["bench"].model_ids[first]]
        rows.append(dict(order=o, saving=r.saving, max_saving=float(rk.saving.max()), best_model=best.name,
                         best_rank_full=int(best.rank_full), best_rank_flash=int(best.rank_flash),
                         best_rank_low=best.rank_low, best_rank_high=best.rank_high,
                         best_covered=bool(best.rank_low <= best.rank_full <= best.rank_high), best_stop=best.stop_size,
                         top_k_resolved=r.top_k_resolved, within=float(rk.within.mean()),
                         mean_abs_rank_error=float(rk.abs_rank_error.mean()), items_used=int(rk.items_used.sum()),
                         items_full=int(rk.items_full.sum())))
    df = pd.DataFrame(rows)
    k = int(df.top_k_resolved.sum())
    df.attrs.update(resolution=st["rr"].to_dict("list"), top_k=st["top_k"], level=st["level"], p_resolved=k / n_orders,
                    p_resolved_ci=_wilson(k, n_orders, 0.95))
    return df


def simulate_examples(table: Any, n_examples: int | dict = 1000, *, noise: float = 1.0,
                      rng: Any = None) -> ResponseMatrix:
    """Per-example 0/1 outcomes that reproduce a leaderboard table's per-scenario scores (semi-synthetic).

    For leaderboards published only as models × scenarios tables (HELM, MMLU per subject): each scenario
    gets ``n_examples`` items with a difficulty d_i ~ N(0, 1); model m answers correctly the
    round(score · n) items with the lowest d_i + ``noise`` · ε_{m,i}, so every model's per-scenario accuracy
    equals its published score (to 1/n) and models share which items are hard. Missing cells stay missing.

    Parameters
    ----------
    table : DataFrame (models × scenarios)
        Scores in [0, 1]; NaN or ``'-'`` = not evaluated. Columns a score-table reader negated (lower-is-better,
        named in ``table.attrs["lower_is_better"]``) are refused: they are no accuracies.
    n_examples : int or dict {scenario: int}, default=1000
        Items per scenario.
    noise : float, default=1.0
        Model-specific idiosyncrasy (0: every model solves the easiest items).
    rng : int or numpy.random.Generator, optional
        Seed or generator.

    Returns
    -------
    ResponseMatrix
        ``kind="binary"``, items with a ``scenario`` column, missing mask for cells not evaluated.

    See Also
    --------
    effstats.reliability.flash_helm : Needs per-example outcomes.
    effstats.datasets.simulate_responses : Responses from an item response model instead.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Sect. 6 (Flash-HELM needs per-example results).
    .. [2] Liang, P., Bommasani, R., Lee, T. et al. "Holistic Evaluation of Language Models". Transactions
       on Machine Learning Research (TMLR), 2023 (arXiv:2211.09110).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from effstats.reliability import simulate_examples
    >>> t = pd.DataFrame({"A": [0.9, 0.5, 0.2], "B": [0.7, np.nan, 0.4]}, index=["x", "y", "z"])
    >>> rm = simulate_examples(t, 10, rng=0)
    >>> rm.n_models, rm.n_items
    (3, 20)
    >>> rm.group_scores("scenario").round(2)
    scenario     A    B
    model_ids
    x          0.9  0.7
    y          0.5  NaN
    z          0.2  0.4
    """
    rng, noise = check_rng(rng), _number(noise)
    if isinstance(noise, bool) or not isinstance(noise,
                                                 (int, float, np.integer, np.floating)) or not 0 <= noise < np.inf:
        raise ValueError(f"noise: expected a finite number >= 0, got {_plain(noise)!r}")
    b = Benchmark.from_data(table, name="table")
    if not b.is_table:
        raise ValueError("table: expected a models × scenarios table (one score per cell)")
    x = np.where(b.observed, b.values, np.nan)
    lower = [_plain(c) for c in _negated_columns(table) if c in b.item_ids]
    if lower:  # a negated error rate or loss is no share of examples answered
        raise ValueError(f"table: column(s) {', '.join(map(repr, lower))} are lower-is-better, negated as read "
                         "(table.attrs['lower_is_better']), not accuracies in [0, 1] to simulate examples from; "
                         f"leave them out (e.g. table.drop(columns={lower!r}))")
    if np.nanmin(x) < 0 or np.nanmax(x) > 1:
        raise ValueError("table: scores must lie in [0, 1] (rescale percentages first)")
    cols = list(b.item_ids)
    if isinstance(n_examples, dict):
        missing = [c for c in cols if c not in n_examples]
        if missing:
            raise ValueError(f"n_examples: no count for scenarios {_plain(missing[:5])}")
        ns = [check_positive_int(n_examples[c], "n_examples") for c in cols]
    else:
        ns = [check_positive_int(n_examples, "n_examples")] * len(cols)
    blocks, miss, scen = [], [], []
    for j, (c, n) in enumerate(zip(cols, ns)):
        d = rng.normal(size=n)
        key = d[None, :] + noise * rng.normal(size=(b.n_models, n))
        k = np.rint(np.nan_to_num(x[:, j]) * n).astype(int)
        rank = np.argsort(np.argsort(key, axis=1), axis=1)
        blocks.append(rank < k[:, None])
        miss.append(np.repeat(~b.observed[:, [j]], n, axis=1))
        scen += [c] * n
    X = np.concatenate(blocks, axis=1)
    M = np.concatenate(miss, axis=1)
    items = pd.DataFrame({"scenario": scen}, index=pd.Index([f"{c}/{i}" for c, n in zip(cols, ns) for i in range(n)],
                                                             name="item"))
    return ResponseMatrix(X & ~M, kind="binary", missing=M if M.any() else None, model_ids=b.model_ids,
                          item_ids=items.index, items=items)
