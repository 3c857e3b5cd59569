"""One protocol for every subset estimator: fit on source models, score the targets (MAE, Spearman)."""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd
from sklearn.base import clone

from .._subset import PredictionMetrics, prediction_metrics
from .._validation import check_array
from ..responses import ResponseMatrix
from ..splits import ModelSplit

def evaluate_split(
    method: Any,
    responses: ResponseMatrix,
    split: ModelSplit,
    *,
    scores: Any = None,
) -> PredictionMetrics:
    """Fit ``method`` (a clone) on the source models, predict the targets from their selected items.

    ``scores`` (n_models,) are the true full-benchmark scores (default: accuracy of ``responses``).
    """
    s = _true_scores(responses, scores)
    src, tgt = split.apply(responses)
    return _fit_and_score(clone(method), src, tgt, s[split.source], s[split.target])


def _true_scores(responses: ResponseMatrix, scores: Any) -> np.ndarray:
    if not isinstance(responses, ResponseMatrix):
        raise ValueError(f"responses: expected a ResponseMatrix, got {type(responses).__name__}")
    return responses.accuracy().to_numpy() if scores is None else check_array(scores, "scores", ndim=1, shape=(responses.n_models,))


def _fit_and_score(est: Any, src: ResponseMatrix, tgt: ResponseMatrix, s_src: np.ndarray, s_tgt: np.ndarray) -> PredictionMetrics:
    return prediction_metrics(s_tgt, est.fit(src, s_src).predict(tgt))


def run_protocol(
    methods: Mapping[str, Any],
    responses: ResponseMatrix,
    splits: ModelSplit | Iterable[ModelSplit] | Mapping[str, ModelSplit],
    *,
    seeds: Iterable[int] = range(5),
    scores: Any = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Every method × split × seed; a tidy table with columns split, method, seed, mae, spearman.

    Each seed re-seeds the method's ``random_state`` (random subsets, k-means, forests), as in the
    paper's "mean ± std over 5 runs".
    """
    if isinstance(splits, ModelSplit):
        splits = {"split": splits}
    elif not isinstance(splits, Mapping):
        splits = {f"split{i}": s for i, s in enumerate(splits)}
    seeds = list(seeds)
    s = _true_scores(responses, scores)
    jobs = [(sn, sp, mn, m, seed) for sn, sp in splits.items() for mn, m in methods.items() for seed in seeds]
    if progress:
        from tqdm.auto import tqdm

        jobs = tqdm(jobs)
    rows = []
    parts: dict[str, tuple] = {}  # each split's source/target matrices, built once for all methods and seeds
    for sn, sp, mn, m, seed in jobs:
        if sn not in parts:
            parts = {sn: (*sp.apply(responses), s[sp.source], s[sp.target])}
        est = clone(m)
        if "random_state" in est.get_params():
            est.set_params(random_state=seed)
        r = _fit_and_score(est, *parts[sn])
        rows.append({"split": sn, "method": mn, "seed": seed, "mae": r.mae, "spearman": r.spearman})
    return pd.DataFrame(rows)
