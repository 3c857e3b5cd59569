"""Source/target model splits: random, chronological and performance-based (with an optional gap).

Every function returns a :class:`ModelSplit` of integer positions; ``split.apply(responses)`` gives the
two :class:`~effstats.responses.ResponseMatrix` halves.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ._validation import check_fraction, check_positive_int, check_rng
from .exceptions import InputTypeError
from .responses import ResponseMatrix, _indexer, _unique_positions

__all__ = ["ModelSplit", "random_split", "chronological_split", "performance_split"]


class ModelSplit(NamedTuple):
    """Positions of the source (fit / sort) models and of the target (new) models."""

    source: np.ndarray
    target: np.ndarray

    def apply(self, responses: ResponseMatrix) -> tuple[ResponseMatrix, ResponseMatrix]:
        """The source and target halves; refuses positions out of range, repeated, or on both sides."""
        responses = _check_responses(responses)
        ids = responses.model_ids
        src = _unique_positions(_indexer(self.source, ids, "source"), ids, "source")
        tgt = _unique_positions(_indexer(self.target, ids, "target"), ids, "target")
        for pos, nm in ((src, "source"), (tgt, "target")):
            if pos.size == 0:
                raise ValueError(f"{nm}: the split has no {nm} model")
        both = np.intersect1d(src, tgt)
        if both.size:  # a model on both sides leaks the target into the fit
            raise ValueError(f"source: models {ids[both][:5].tolist()} are also targets; a split must keep them apart")
        return responses.subset(models=src), responses.subset(models=tgt)


def _check_responses(responses: Any) -> ResponseMatrix:
    if not isinstance(responses, ResponseMatrix):
        raise InputTypeError(f"responses: expected a ResponseMatrix, got {type(responses).__name__}")
    return responses


def _n_target(n: int, test_size: float | int) -> int:
    if isinstance(test_size, float):
        k = int(round(check_fraction(test_size, "test_size") * n))
    else:
        k = check_positive_int(test_size, "test_size", maximum=n - 1)
    if not 1 <= k <= n - 1:
        raise ValueError(f"test_size: leaves {k} target models of {n}; need at least one on each side")
    return k


def random_split(responses: ResponseMatrix | int, test_size: float | int = 0.2, rng: Any = None) -> ModelSplit:
    """Uniformly random split; ``test_size`` is a fraction in (0, 1) or a count of target models."""
    if isinstance(responses, (int, np.integer)) and not isinstance(responses, (bool, np.bool_)):
        n = int(responses)
    elif isinstance(responses, ResponseMatrix):
        n = responses.n_models
    else:
        raise InputTypeError(f"responses: expected a ResponseMatrix or a number of models, got {type(responses).__name__} {responses!r:.40}")
    if n < 2:
        raise ValueError("responses: need at least 2 models to split")
    k = _n_target(n, test_size)
    perm = check_rng(rng).permutation(n)
    return ModelSplit(np.sort(perm[k:]), np.sort(perm[:k]))


def chronological_split(responses: ResponseMatrix, cutoff: Any = None, date: str = "release_date", *, n_newest: int | None = None) -> ModelSplit:
    """Models released strictly before ``cutoff`` are sources; the rest (on or after) are targets.

    ``n_newest`` instead makes the newest ``n_newest`` models the targets (DISCO's split: the 40 newest);
    equal dates are ordered by position. Give exactly one of ``cutoff`` and ``n_newest``.
    """
    responses = _check_responses(responses)
    if not isinstance(date, str) or date not in responses.models.columns:
        raise ValueError(f"date: model metadata has no column {date!r} (has {list(responses.models.columns)})")
    d = responses.models[date]
    if d.isna().any():
        raise ValueError(f"date: column {date!r} has missing release dates")
    if (cutoff is None) == (n_newest is None):
        raise ValueError("cutoff: give exactly one of cutoff and n_newest")
    if n_newest is not None:
        k = check_positive_int(n_newest, "n_newest", maximum=responses.n_models - 1)
        order = np.argsort(pd.Series(d).rank(method="first").to_numpy(), kind="stable")  # oldest first
        return ModelSplit(np.sort(order[:-k]), np.sort(order[-k:]))
    if isinstance(cutoff, (list, tuple, dict, set, np.ndarray, pd.Series)):
        raise ValueError(f"cutoff: expected one date (or number), got {cutoff!r:.60}")
    try:
        if not np.issubdtype(d.dtype, np.number):
            d, cutoff = pd.to_datetime(d), pd.Timestamp(cutoff)
        before = (d < cutoff).to_numpy()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cutoff: {cutoff!r} is not comparable with the {date!r} column ({exc})") from None
    if before.all() or not before.any():
        raise ValueError(f"cutoff: {cutoff!r} puts every model on one side")
    return ModelSplit(np.flatnonzero(before), np.flatnonzero(~before))


def performance_split(responses: ResponseMatrix, top_fraction: float = 0.1, gap: float = 0.0) -> ModelSplit:
    """The best ``top_fraction`` of models (by accuracy) are targets.

    With ``gap`` > 0 the next ``gap`` fraction of models below the targets is dropped from the sources,
    so the predictor must extrapolate past a performance gap (DISCO App. F).
    """
    responses = _check_responses(responses)
    check_fraction(top_fraction, "top_fraction")
    check_fraction(gap, "gap", closed=True)
    n = responses.n_models
    order = np.argsort(-responses.accuracy().to_numpy(), kind="stable")
    k = max(1, int(round(top_fraction * n)))
    g = int(round(gap * n))
    if k + g >= n:
        raise ValueError(f"gap: top_fraction + gap leave no source models ({k} targets, {g} dropped of {n})")
    return ModelSplit(np.sort(order[k + g:]), np.sort(order[:k]))
