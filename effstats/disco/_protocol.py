"""One protocol for every subset estimator: fit on source models, score the targets (MAE, Spearman, interval
coverage), and the cross-validated method chooser run under the same splits and budgets."""
from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd
from sklearn.base import clone

from .._shared import _cpus, _Forked, array_digest
from .._subset_results import PredictionMetrics, prediction_metrics
from .._validation import check_array, check_positive_int
from ..responses import ResponseMatrix
from ..splits import ModelSplit

__all__ = ["evaluate_split", "run_protocol", "compare_methods", "summarize_comparison"]


def evaluate_split(
    method: Any,
    responses: ResponseMatrix,
    split: ModelSplit,
    *,
    scores: Any = None,
) -> PredictionMetrics:
    """Fit ``method`` (a clone) on the source models, predict the targets from their selected items.

    Parameters
    ----------
    method : object
        A subset estimator (any of :mod:`effstats.disco`, or :class:`effstats.irt.TinyBenchmarks`); it is cloned,
        not changed.
    responses : ResponseMatrix
        Every model's outputs on every item.
    split : effstats.splits.ModelSplit
        Source and target model positions (at least 2 targets).
    scores : array of shape (n_models,), optional
        The true full-benchmark scores (default: accuracy of ``responses``).

    Returns
    -------
    effstats.disco.PredictionMetrics
        MAE (percentage points) and Spearman correlation over the targets.

    See Also
    --------
    effstats.disco.run_protocol : many methods, splits and seeds.
    effstats.splits.random_split : a random model split.

    References
    ----------
    .. [1] Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
       Efficient Model Evaluation. arXiv:2510.07959.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import AnchorCorr, RandomDirect
    >>> from effstats.splits import random_split
    >>> rm = simulate_responses(40, 300, rng=0)
    >>> split = random_split(rm, 10, rng=0)  # 10 target models, 30 sources
    >>> from effstats.disco import evaluate_split
    >>> res = evaluate_split(RandomDirect(30, random_state=0), rm, split)
    >>> round(res.mae, 2), round(res.spearman, 3)
    (9.03, 0.663)
    """
    s = _true_scores(responses, scores)
    split = _check_split(split, responses.n_models, "split")
    _check_method(method, "method")
    src, tgt = split.apply(responses)
    return _fit_and_score(clone(method), src, tgt, s[split.source], s[split.target])


def _check_split(split: Any, n_models: int, name: str) -> ModelSplit:
    if not isinstance(split, ModelSplit):
        raise ValueError(f"{name}: expected a ModelSplit (from effstats.splits), got {type(split).__name__}")
    src = check_array(split.source, f"{name}", ndim=1, dtype=None)
    tgt = check_array(split.target, f"{name}", ndim=1, dtype=None)
    for part, a in (("source", src), ("target", tgt)):
        if not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() >= n_models:
            raise ValueError(f"{name}: {part} model positions must be integers in [0, {n_models - 1}]")
    both = np.intersect1d(src, tgt)
    if both.size:
        raise ValueError(f"{name}: source and target models overlap at positions {both[:5].tolist()}")
    if tgt.size < 2:
        raise ValueError(f"{name}: need at least 2 target models, got {tgt.size}")
    return split


def _check_method(method: Any, name: str) -> None:
    if not all(hasattr(method, a) for a in ("fit", "predict", "get_params")):
        raise ValueError(f"{name}: expected a subset estimator (fit/predict/get_params), got {type(method).__name__}")


def _check_protocol_args(methods: Any, splits: Any, seeds: Any, n_models: int) -> tuple[dict | None, dict, list]:
    """Validate a protocol's methods (None: the chooser's defaults), splits and seeds."""
    if methods is not None:
        if not isinstance(methods, Mapping) or not methods:
            raise ValueError("methods: expected a non-empty dict of name -> subset estimator")
        for k, m in methods.items():
            _check_method(m, f"methods[{k!r}]")
    if isinstance(splits, ModelSplit):
        splits = {"split": splits}
    elif isinstance(splits, Mapping):
        splits = dict(splits)
    elif isinstance(splits, (list, tuple)):
        splits = {f"split{i}": sp for i, sp in enumerate(splits)}
    else:
        raise ValueError(f"splits: expected a ModelSplit, a list or a dict of them, got {type(splits).__name__}")
    if not splits:
        raise ValueError("splits: expected at least one split")
    for k, sp in splits.items():
        _check_split(sp, n_models, f"splits[{k!r}]")
    try:
        seeds = list(seeds)
    except TypeError:
        raise ValueError(f"seeds: expected a sequence of non-negative ints, got {type(seeds).__name__}") from None
    if not seeds or any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0 for x in seeds):
        raise ValueError(f"seeds: expected a non-empty sequence of non-negative ints, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds: duplicated seeds {sorted({x for x in seeds if seeds.count(x) > 1})} would repeat "
                         "identical runs")
    return (None if methods is None else dict(methods)), splits, seeds


def _true_scores(responses: ResponseMatrix, scores: Any) -> np.ndarray:
    if not isinstance(responses, ResponseMatrix):
        raise ValueError(f"responses: expected a ResponseMatrix, got {type(responses).__name__}")
    return responses.accuracy().to_numpy() if scores is None else check_array(scores, "scores", ndim=1,
                                                                              shape=(responses.n_models,))


def _fit_and_score(est: Any, src: ResponseMatrix, tgt: ResponseMatrix, s_src: np.ndarray, s_tgt: np.ndarray,
                   **fit_kw: Any) -> PredictionMetrics:
    return prediction_metrics(s_tgt, est.fit(src, s_src, **fit_kw).predict(tgt))


def run_protocol(
    methods: Mapping[str, Any],
    responses: ResponseMatrix,
    splits: ModelSplit | Iterable[ModelSplit] | Mapping[str, ModelSplit],
    *,
    seeds: Iterable[int] = range(5),
    scores: Any = None,
    progress: bool = False,
    confidence_level: float | None = None,
    n_jobs: int | None = 1,
) -> pd.DataFrame:
    """Every method × split × seed; a tidy table with columns split, method, seed, mae, spearman.

    Each seed re-seeds the method's ``random_state`` (random subsets, k-means, forests), as in Rubinstein et al.'s
    "mean ± std over 5 runs". Every run fits a clone; a run repeated with the same settings, split and seed (a
    configuration shared by several tables) is fitted once per ``responses`` object. The
    :class:`effstats.disco.AIPW` runs of one call share their folds' ridge regressions where they are fitted on the
    same numbers (``AIPW.fit``'s ``ridge_fits``: the default and the power-tuned AIPW at one seed draw the same
    items and folds).

    Parameters
    ----------
    methods : dict
        The subset estimators, by the name the table gives them.
    responses : ResponseMatrix
        Every model's outputs on every item.
    splits : ModelSplit, list of ModelSplit or dict of str to ModelSplit
        Source / target model splits (a list is named ``split0``, ``split1``, ...).
    seeds : iterable of int, default=range(5)
        Distinct non-negative seeds.
    scores : array of shape (n_models,), optional
        The true full-benchmark scores (default: accuracy of ``responses``).
    progress : bool, default=False
        Show a text progress bar.
    confidence_level : float, optional
        With a level, each method also makes prediction intervals (``predict_interval``: 5-fold CV over the
        source models, or design-based) and the table gains ``n_models``, ``coverage``, ``width`` (points) and
        ``confidence_level`` (this level).
    n_jobs : int or None, default=1
        Processes sharing the runs: this one and ``n_jobs - 1`` children forked from it (None: one per core the
        process may use). The runs of the first seed go first, in this process, so that what later seeds share
        with them (disagreement scores, PCA and IRT fits) is computed once; the other runs are then dealt out in
        turn. Every run computes the same numbers in either process, so the table does not depend on
        ``n_jobs``; warnings of a child's runs are shown by this process. Without ``fork`` (Windows, macOS) the
        runs stay in this process.

    Returns
    -------
    pandas.DataFrame
        One row per split, method and seed.

    See Also
    --------
    effstats.disco.evaluate_split : one method on one split.
    effstats.disco.compare_methods : the candidates and the cross-validated chooser under one protocol.

    References
    ----------
    .. [1] Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
       Efficient Model Evaluation. arXiv:2510.07959.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import AnchorCorr, RandomDirect
    >>> from effstats.splits import random_split
    >>> rm = simulate_responses(40, 300, rng=0)
    >>> split = random_split(rm, 10, rng=0)  # 10 target models, 30 sources
    >>> from effstats.disco import run_protocol
    >>> tab = run_protocol({"random": RandomDirect(30), "anchor": AnchorCorr(30)}, rm, split, seeds=[0, 1])
    >>> tab.groupby("method").mae.mean().round(2)
    method
    anchor    5.88
    random    7.87
    Name: mae, dtype: float64
    """
    s = _true_scores(responses, scores)
    methods, splits, seeds = _check_protocol_args(methods, splits, seeds, responses.n_models)
    n_proc = _check_n_jobs(n_jobs)
    state = _memo_state(responses)  # the metadata's digest: a frame edited in place between calls is another key
    memo = _entry(responses)["results"] if state is not None else {}
    ridge_fits: dict = {}  # this call's AIPW fold fits (AIPW.fit's ridge_fits), by the numbers they are fitted on
    work: list = []  # the runs to compute, each once: the first seed's first (later seeds reuse what they compute)
    where: dict = {}  # (split, method, seed) -> its memo key (None: not kept) and its run's position in work
    pending: dict = {}  # memo key -> position in work of a run of this call
    halves = {sn: _apply(responses, sp, state) for sn, sp in splits.items()}  # one object per split: its scores

    def add(sn: str, sp: ModelSplit, mn: str, m: Any, seed: int) -> None:
        """Record where the run (sn, mn, seed) finds its result: the memo, a run of this call, or a new run."""
        est = clone(m)
        if "random_state" in est.get_params():
            est.set_params(random_state=seed)
        key = _params_key(est)
        mk = None if key is None or state is None else (
            key, state, array_digest(sp.source, sp.target, s), confidence_level)
        if mk is not None and mk in memo:
            where[sn, mn, seed] = (mk, None)
        elif mk is not None and mk in pending:  # the same settings twice in this call: computed once
            where[sn, mn, seed] = (mk, pending[mk])
        else:
            fit_kw = {"ridge_fits": ridge_fits} if _takes_ridge_fits(est) else {}
            where[sn, mn, seed] = (mk, len(work))
            if mk is not None:
                pending[mk] = len(work)
            src, tgt = halves[sn]
            work.append(functools.partial(_run_one, est, src, tgt, s[sp.source], s[sp.target], confidence_level,
                                          fit_kw))

    jobs = [(sn, sp, mn, m, seed) for sn, sp in splits.items() for mn, m in methods.items() for seed in seeds]
    for job in jobs:
        if job[4] == seeds[0]:
            add(*job)
    first = len(work)
    for job in jobs:
        if job[4] != seeds[0]:
            add(*job)
    results = _shared_runs(work, n_proc, first, {} if progress else None)
    rows = []
    for sn in splits:
        for mn in methods:
            for seed in seeds:
                mk, at = where[sn, mn, seed]
                r = memo[mk] if at is None else results[at]
                if mk is not None:
                    memo.setdefault(mk, r)
                rows.append({"split": sn, "method": mn, "seed": seed, **r})
    return pd.DataFrame(rows)


def _check_n_jobs(n_jobs: Any) -> int:
    """The number of processes ``n_jobs`` asks for (None: one per core the process may use)."""
    return _cpus() if n_jobs is None else check_positive_int(n_jobs, "n_jobs")


def _shared_runs(work: list[Callable[[], Any]], n_proc: int, first: int = 0, bar: dict | None = None) -> list:
    """``[run() for run in work]``, the runs after the ``first`` dealt out in turn to this process and
    ``n_proc - 1`` children forked once those are done (a run's result must pickle); ``bar``: the keywords of a
    text progress bar over the runs (None: no bar).

    A child records the warnings of its runs and this process issues them again, at the line that called the
    protocol, once the child's results are in (a child that fails or sends nothing has its runs computed here,
    :class:`effstats._shared._Forked`).
    """
    if bar is not None:
        from tqdm import tqdm  # text bars: widget bars need a live front end (nbclient rejects their comms)

        bar = tqdm(total=len(work), **bar)
    out: list = [None] * len(work)

    def here(at: int) -> None:
        out[at] = work[at]()
        if bar is not None:
            bar.update(1)

    try:
        for at in range(first):
            here(at)
        rest = list(range(first, len(work)))
        n_proc = min(n_proc, len(rest))
        if n_proc < 2:
            for at in rest:
                here(at)
            return out
        shares = [rest[k::n_proc] for k in range(n_proc)]
        with contextlib.ExitStack() as stack:
            children = [stack.enter_context(_Forked(functools.partial(_recorded, [work[at] for at in share])))
                        for share in shares[1:]]
            for at in shares[0]:
                here(at)
            for share, child in zip(shares[1:], children):
                values, caught = child()
                for at, value in zip(share, values):
                    out[at] = value
                for message, category in caught:  # where run here, they would point at the caller's line
                    warnings.warn(message, category, stacklevel=3)
                if bar is not None:
                    bar.update(len(share))
        return out
    finally:
        if bar is not None:
            bar.close()


def _recorded(work: list[Callable[[], Any]]) -> tuple[list, list[tuple]]:
    """The results of ``work``'s runs and the warnings they issued (message, category)."""
    with warnings.catch_warnings(record=True) as caught:
        values = [run() for run in work]
    return values, [(str(w.message), w.category) for w in caught]


def _params_key(est: Any) -> str | None:
    """What an estimator's result depends on besides the data: its class and parameters; None (not memoised) for a
    class outside effstats or a parameter that is not plain data (an estimator object, a callable), whose behaviour
    the parameters' text need not describe: a subclass with the parent's parameters would get the parent's result."""
    cls = type(est)
    if not cls.__module__.startswith("effstats."):
        return None
    plain = (str, int, float, bool, type(None), np.integer, np.floating, np.bool_)
    items = []
    for k, v in sorted(est.get_params(deep=False).items()):
        if isinstance(v, np.ndarray):
            if v.dtype.hasobject:
                return None
            v = (v.dtype.str, v.shape, v.tobytes())
        elif isinstance(v, (tuple, list)):
            if not all(isinstance(x, plain) for x in v):
                return None
        elif not isinstance(v, plain):
            return None
        items.append((k, v))
    return repr((cls.__module__, cls.__qualname__, items))


def _takes_ridge_fits(est: Any) -> bool:
    """Whether ``est`` is an :class:`effstats.disco.AIPW` whose ``fit`` takes ``ridge_fits`` (not a subclass with a
    fit of its own)."""
    from ._aipw import AIPW

    return isinstance(est, AIPW) and type(est).fit is AIPW.fit


def _run_one(est: Any, src: ResponseMatrix, tgt: ResponseMatrix, s_src: np.ndarray, s_tgt: np.ndarray,
             level: float | None, fit_kw: dict) -> dict:
    if level is None:
        r = _fit_and_score(est, src, tgt, s_src, s_tgt, **fit_kw)
        return {"mae": r.mae, "spearman": r.spearman}
    p = est.fit(src, s_src, **fit_kw).predict_interval(tgt)
    return prediction_metrics(s_tgt, p.statistic, p.confidence_interval(level), confidence_level=level).as_dict()


# Protocol memo, per responses object (weak reference): the source/target halves of a split (so estimators see
# the same arrays and reuse cached disagreement scores) and the result of each (settings, split, seed). Every
# estimator is deterministic given its random_state, so a notebook that runs one configuration in several
# tables (DISCO's base setting appears in Tables 1-3, Fig. 5 and App. F) fits it once.
_PROTO: dict = {}


def _entry(responses: ResponseMatrix) -> dict:
    import weakref

    e = _PROTO.get(id(responses))
    if e is None or e["ref"]() is not responses:
        for k in [k for k, v in _PROTO.items() if v["ref"]() is None]:
            del _PROTO[k]
        e = {"ref": weakref.ref(responses), "splits": {}, "results": {}}
        _PROTO[id(responses)] = e
    return e


def _unchangeable(responses: ResponseMatrix) -> bool:
    """Whether no array of ``responses`` can be edited in place (read-only down to its memory's owner, as the data
    loaders' and ``subset``'s arrays are): only then may results be kept per responses object."""
    from .._results import _read_only

    return all(_read_only(a) for a in (responses.values, responses.missing, responses.probabilities, responses.labels,
                                       responses.predictions) if a is not None)


def _memo_state(responses: ResponseMatrix) -> str | None:
    """What may change of ``responses`` between calls: a digest of its model and item metadata (plain frames, which
    a caller may edit in place, and ``stratify`` reads), part of every key of the memo; None (nothing kept) where
    an array can be edited in place or a metadata cell cannot be hashed (a list)."""
    import hashlib

    if not _unchangeable(responses):
        return None
    h = hashlib.sha1()
    for frame in (responses.models, responses.items):
        h.update(repr((list(frame.columns), [str(t) for t in frame.dtypes])).encode())
        for j in range(frame.shape[1]):
            try:
                h.update(pd.util.hash_pandas_object(frame.iloc[:, j], index=False).to_numpy().tobytes())
            except TypeError:
                return None
    return h.hexdigest()


def _apply(responses: ResponseMatrix, sp: ModelSplit, state: str | None) -> tuple[ResponseMatrix, ResponseMatrix]:
    if state is None:
        return sp.apply(responses)
    splits = _entry(responses)["splits"]
    key = (state, array_digest(sp.source, sp.target))
    if key in splits:
        splits[key] = splits.pop(key)  # the last used last: a split asked for in every call stays
    else:
        if len(splits) >= 3:  # the halves of big matrices are big: keep the last few splits used only
            splits.pop(next(iter(splits)))
        splits[key] = sp.apply(responses)
    return splits[key]


def compare_methods(
    responses: ResponseMatrix,
    splits: ModelSplit | Iterable[ModelSplit] | Mapping[str, ModelSplit],
    candidates: Mapping[str, Any] | None = None,
    *,
    n_items: int = 100,
    seeds: Iterable[int] = (0,),
    scores: Any = None,
    n_splits: int = 5,
    confidence_level: float = 0.9,
    reference: str | None = "random + direct",
    progress: bool = False,
    return_predictions: bool = False,
    n_jobs: int | None = 1,
) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
    """One protocol for every candidate and the chooser: same splits, same budget, intervals for all.

    For each split and seed a :class:`effstats.disco.MethodChooser` is fitted on the source models (which fits and
    cross-validates every candidate there); each candidate then predicts the target models with intervals,
    and the chooser's pick is scored as the row ``method="chooser"``. Columns: split, seed, method, mae,
    spearman, n_models, coverage, width (points), confidence_level (the intervals'), cv_mae (the source-only CV
    estimate of the MAE), chosen; on the chooser's
    rows also picked, best (the candidate with the smallest MAE on the targets of that split and seed) and regret
    (the pick's MAE minus the best's, points: 0 when the chooser found the best).
    With ``return_predictions`` a second table holds one row per split × method × target model (truth,
    estimate, low, high, out_of_range: the target lies outside the source models' range on the method's
    items), for paired comparisons and coverage by model.

    Parameters
    ----------
    responses : ResponseMatrix
        Every model's outputs on every item.
    splits : ModelSplit, list of ModelSplit or dict of str to ModelSplit
        Source / target model splits.
    candidates : dict, optional
        Subset estimators by name (default: :func:`effstats.disco.default_candidates`).
    n_items : int, default=100
        The budget every candidate gets.
    seeds : iterable of int, default=(0,)
        Distinct non-negative seeds of the chooser (and so of its candidates).
    scores : array of shape (n_models,), optional
        The true full-benchmark scores (default: accuracy of ``responses``).
    n_splits : int, default=5
        Folds of the chooser's cross-validation and of the candidates' intervals.
    confidence_level : float, default=0.9
        Level of the intervals whose coverage is reported.
    reference : str or None, default="random + direct"
        The chooser's reference candidate (see :class:`effstats.disco.MethodChooser`).
    progress : bool, default=False
        Show a text progress bar.
    return_predictions : bool, default=False
        Also return the per-target table.
    n_jobs : int or None, default=1
        Processes sharing the splits × seeds: this one and ``n_jobs - 1`` children forked from it, dealt out in
        turn (None: one per core the process may use). The tables do not depend on it; warnings of a child's
        splits are shown by this process.

    Returns
    -------
    pandas.DataFrame, or (pandas.DataFrame, pandas.DataFrame) with ``return_predictions``

    See Also
    --------
    effstats.disco.summarize_comparison : the mean over splits and seeds, with the chooser's regret.
    effstats.disco.MethodChooser : the chooser.
    effstats.disco.run_protocol : methods × splits × seeds without the chooser.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import AnchorCorr, RandomDirect
    >>> from effstats.splits import random_split
    >>> rm = simulate_responses(40, 300, rng=0)
    >>> split = random_split(rm, 10, rng=0)  # 10 target models, 30 sources
    >>> from effstats.disco import compare_methods
    >>> cands = {"random + direct": RandomDirect(30), "anchor-corr": AnchorCorr(30)}
    >>> tab = compare_methods(rm, split, cands, n_items=30, n_splits=3)
    >>> tab[["method", "mae", "chosen"]].round(2)
                method   mae  chosen
    0  random + direct  6.77    True
    1          chooser  6.77    True
    2      anchor-corr  7.77   False
    """
    from ._chooser import MethodChooser

    s = _true_scores(responses, scores)
    _, splits, seeds = _check_protocol_args(candidates, splits, seeds, responses.n_models)
    n_proc = _check_n_jobs(n_jobs)
    state = _memo_state(responses)
    halves = {sn: _apply(responses, sp, state) for sn, sp in splits.items()}

    def one(sn: str, sp: ModelSplit, seed: int) -> tuple[list[dict], list[pd.DataFrame]]:
        """The rows (and per-target tables) of one split and seed."""
        src, tgt = halves[sn]
        rows, preds = [], []
        ch = MethodChooser(candidates, n_items=n_items, n_splits=n_splits, reference=reference, random_state=seed)
        ch.fit(src, s[sp.source])
        for name, est in ch.estimators_.items():
            p = est.predict_interval(tgt, n_splits=n_splits)
            ci = p.confidence_interval(confidence_level)
            r = prediction_metrics(s[sp.target], p.statistic, ci, confidence_level=confidence_level)
            if return_predictions:
                for meth in [name, "chooser"] if name == ch.best_ else [name]:
                    flags = p.out_of_range if p.out_of_range is not None else np.full(len(p.statistic), np.nan)
                    preds.append(pd.DataFrame({"split": sn, "seed": seed, "method": meth, "model": tgt.model_ids,
                                               "truth": s[sp.target], "estimate": p.statistic, "low": ci.low,
                                               "high": ci.high,
                                               "out_of_range": flags}))
            row = {"split": sn, "seed": seed, "method": name, **r.as_dict(),
                   "cv_mae": ch.cv_results_.loc[name, "cv_mae"], "chosen": name == ch.best_}
            rows.append(row)
            if name == ch.best_:
                rows.append({**row, "method": "chooser", "picked": name})
        # regret on the targets: the chooser's pick against the best candidate of this split and seed
        best = min((r for r in rows if r["method"] != "chooser"), key=lambda r: r["mae"])
        for r in rows:
            if r["method"] == "chooser":
                r["best"], r["regret"] = best["method"], r["mae"] - best["mae"]
        return rows, preds

    done = _shared_runs([functools.partial(one, sn, sp, seed) for sn, sp in splits.items() for seed in seeds],
                        n_proc, bar={"desc": "splits", "leave": False} if progress else None)
    rows = [r for part, _ in done for r in part]
    preds = [p for _, part in done for p in part]
    out = pd.DataFrame(rows)
    return (out, pd.concat(preds, ignore_index=True)) if return_predictions else out


def summarize_comparison(table: pd.DataFrame, reference: str = "random + direct") -> pd.DataFrame:
    """Mean over splits and seeds per method, with the spread and the chooser's regret.

    Columns: mae, mae_sd (standard deviation over splits and seeds), mae_se, spearman, coverage, width (points,
    beside the coverage it buys), cv_mae, n (rows averaged). On the chooser's row: ``regret``, the mean over
    splits and seeds of its pick's MAE minus the MAE of the best candidate on those targets (from
    :func:`effstats.disco.compare_methods`' per-split ``regret``; without that column, its mean MAE minus the smallest
    mean MAE of any single method), ``regret_sd``, ``missed`` (share of splits and seeds where the pick was not the
    best), ``regret_vs_best_method`` (its mean MAE − the smallest mean MAE of one fixed method, the best in
    hindsight) and ``vs_reference`` (its MAE − the reference method's).

    Parameters
    ----------
    table : pandas.DataFrame
        The table of :func:`effstats.disco.compare_methods` (or of :func:`effstats.disco.run_protocol`).
    reference : str, default="random + direct"
        The method the chooser is compared with (``vs_reference``).

    Returns
    -------
    pandas.DataFrame
        One row per method.

    See Also
    --------
    effstats.disco.compare_methods : the table summarised.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import AnchorCorr, RandomDirect
    >>> from effstats.splits import random_split
    >>> rm = simulate_responses(40, 300, rng=0)
    >>> split = random_split(rm, 10, rng=0)  # 10 target models, 30 sources
    >>> from effstats.disco import compare_methods, summarize_comparison
    >>> cands = {"random + direct": RandomDirect(30), "anchor-corr": AnchorCorr(30)}
    >>> summary = summarize_comparison(compare_methods(rm, split, cands, n_items=30, n_splits=3))
    >>> summary[["mae", "regret"]].round(2)
                      mae  regret
    method
    random + direct  6.77     NaN
    chooser          6.77     0.0
    anchor-corr      7.77     NaN
    """
    if not isinstance(table, pd.DataFrame):
        raise ValueError("table: expected the DataFrame of compare_methods or run_protocol, got "
                         f"{type(table).__name__}")
    need = {"method", "mae", "spearman"}
    if table.empty or not need <= set(table.columns):
        raise ValueError(f"table: expected a non-empty table with columns {sorted(need)} (compare_methods' output), "
                         f"got {list(table.columns)}")
    if not isinstance(reference, str):
        raise ValueError(f"reference: expected a method name, got {reference!r}")
    if "chooser" in set(table["method"]) and reference not in set(table["method"]):
        raise ValueError(f"reference: {reference!r} is not a method of the table ({sorted(set(table['method']))})")
    table = table.reindex(columns=["method", "mae", "spearman", "coverage", "width", "cv_mae", "regret"],
                          fill_value=np.nan)
    g = table.groupby("method", sort=False)
    out = g[["mae"]].mean()
    out["mae_sd"] = g["mae"].std(ddof=1)
    out["mae_se"] = out["mae_sd"] / np.sqrt(g.size())
    out[["spearman", "coverage", "width", "cv_mae"]] = g[["spearman", "coverage", "width", "cv_mae"]].mean()
    out["n"] = g.size()
    single = out.drop(index="chooser", errors="ignore")
    if "chooser" in out.index:
        mine = table.loc[table["method"] == "chooser", "regret"]
        hindsight = out.loc["chooser", "mae"] - single["mae"].min()
        for c in ("regret", "regret_sd", "missed", "regret_vs_best_method", "vs_reference"):
            out[c] = np.nan
        if mine.notna().all():
            out.loc["chooser", ["regret", "regret_sd", "missed"]] = [mine.mean(),
                                                                     mine.std(ddof=1) if len(mine) > 1 else np.nan,
                                                                     float((mine > 0).mean())]
        else:
            out.loc["chooser", "regret"] = hindsight
        out.loc["chooser", "regret_vs_best_method"] = hindsight
        if reference in out.index:
            out.loc["chooser", "vs_reference"] = out.loc["chooser", "mae"] - out.loc[reference, "mae"]
    return out
