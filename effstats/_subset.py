"""Shared plumbing of every subset estimator (DISCO, its baselines and the tinyBenchmarks/IRT family).

A subset estimator is fitted on source models' outputs on all items, keeps ``selected_`` items, and predicts
each target model's full-benchmark score from its outputs on those items. This module parses outputs
(:class:`_Outputs`), aligns target outputs to the selected items by item id, and holds the item-weighting
helper shared by anchor-point methods.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.base import BaseEstimator

from ._validation import check_array, check_positive_int, check_probabilities
from .responses import ResponseMatrix

class _Outputs(NamedTuple):
    """What a pool of models published on a set of items (any field may be None)."""

    proba: np.ndarray | None  # (M, N, C)
    pred: np.ndarray | None  # (M, N) or (M, N, k) int
    correct: np.ndarray | None  # (M, N) float in [0, 1]
    labels: np.ndarray | None  # (N,)
    item_ids: pd.Index | None
    items: pd.DataFrame | None

    @property
    def n_models(self) -> int:
        return next(a.shape[0] for a in (self.proba, self.pred, self.correct) if a is not None)

    @property
    def n_items(self) -> int:
        return next(a.shape[1] for a in (self.proba, self.pred, self.correct) if a is not None)

    def take(self, idx: np.ndarray) -> "_Outputs":
        return _Outputs(
            None if self.proba is None else self.proba[:, idx],
            None if self.pred is None else self.pred[:, idx],
            None if self.correct is None else self.correct[:, idx],
            None if self.labels is None else self.labels[idx],
            None if self.item_ids is None else self.item_ids[idx],
            None if self.items is None else self.items.iloc[idx],
        )

    def correctness(self, name: str) -> np.ndarray:
        if self.correct is not None:
            return self.correct
        if self.labels is None:
            raise ValueError(f"{name}: correctness needs labels with class probabilities or predictions")
        top1 = self.proba.argmax(axis=2) if self.proba is not None else (self.pred if self.pred.ndim == 2 else self.pred[..., 0])
        return (top1 == self.labels[None, :]).astype(float)


def _as_outputs(x: Any, name: str, labels: Any = None) -> _Outputs:
    """Parse a ResponseMatrix or an array (probabilities / class ids / correctness)."""
    if isinstance(x, ResponseMatrix):
        if x.missing is not None:  # a ResponseMatrix keeps ``missing`` only when some cell is missing
            raise ValueError(f"{name}: complete responses are required, {int(x.missing.sum())} cells are missing")
        return _Outputs(x.probabilities, x.predictions, x.values.astype(float), x.labels, x.item_ids, x.items)
    if isinstance(x, _Outputs):
        return x
    arr = np.asarray(x)
    lab = None
    if labels is not None:
        lab = check_array(labels, "labels", ndim=1, dtype=None)
    if arr.ndim == 3 and np.issubdtype(arr.dtype, np.floating):
        p = check_probabilities(arr, name, ndim=3)
        if lab is not None and lab.shape[0] != p.shape[1]:
            raise ValueError(f"labels: expected {p.shape[1]} labels, got {lab.shape[0]}")
        return _Outputs(p, None, None, lab, None, None)
    if np.issubdtype(arr.dtype, np.integer) and arr.ndim in (2, 3) and lab is not None:
        pred = check_array(arr, name, ndim=(2, 3), dtype=None)
        return _Outputs(None, pred, None, lab, None, None)
    if arr.ndim == 2:
        c = check_array(arr, name, ndim=2)
        if c.min() < 0 or c.max() > 1:
            raise ValueError(f"{name}: correctness/scores must lie in [0, 1]")
        return _Outputs(None, None, c.astype(float), lab, None, None)
    raise ValueError(
        f"{name}: expected a ResponseMatrix, probabilities (n_models, n_items, n_classes), "
        f"class ids with labels, or correctness (n_models, n_items); got {arr.dtype} array of shape {arr.shape}"
    )


def _item_groups(stratify: Any, src: _Outputs) -> np.ndarray | None:
    """Item groups from a column name of the source items, an array, or None."""
    if stratify is None:
        return None
    if isinstance(stratify, str):
        if src.items is None or stratify not in src.items.columns:
            raise ValueError(f"stratify: no item column {stratify!r} in the source outputs")
        return src.items[stratify].to_numpy()
    g = np.asarray(stratify)
    if g.shape != (src.n_items,):
        raise ValueError(f"stratify: expected an item-group array of shape ({src.n_items},), got {g.shape}")
    return g


class _SubsetEstimator(BaseEstimator):
    """Shared plumbing: parse source outputs, remember the selected items, read target outputs on them."""

    n_items: int

    def _fit_source(self, source_outputs: Any, source_scores: Any, labels: Any) -> tuple[_Outputs, np.ndarray]:
        src = _as_outputs(source_outputs, "source_outputs", labels)
        if src.n_models < 2:
            raise ValueError(f"source_outputs: need at least 2 source models, got {src.n_models}")
        check_positive_int(self.n_items, "n_items", maximum=src.n_items)
        if source_scores is None:
            scores = src.correctness("source_outputs").mean(axis=1)
        else:
            scores = check_array(source_scores, "source_scores", ndim=1, shape=(src.n_models,))
        self.n_items_total_ = src.n_items
        self.item_ids_ = src.item_ids
        self.labels_ = src.labels
        return src, scores

    def _set_selected(self, selected: np.ndarray) -> None:
        self.selected_ = np.asarray(selected, dtype=int)
        self.selected_ids_ = None if self.item_ids_ is None else self.item_ids_[self.selected_]

    def _target(self, target_outputs: Any) -> _Outputs:
        """Target outputs restricted to the selected items (accepts the full item set or exactly the selection)."""
        if not hasattr(self, "selected_"):
            raise ValueError(f"{type(self).__name__}: call fit before predict")
        k, n = len(self.selected_), self.n_items_total_
        lab = None if self.labels_ is None else self.labels_[self.selected_]
        if isinstance(target_outputs, ResponseMatrix):
            t = _as_outputs(target_outputs, "target_outputs")
            ids = target_outputs.item_ids
            if self.item_ids_ is None and target_outputs.n_items in (k, n):  # fitted on arrays: go by shape
                return t.take(self.selected_) if target_outputs.n_items == n and n != k else t
            if self.item_ids_ is not None and target_outputs.n_items == n and ids.equals(self.item_ids_):
                return t.take(self.selected_)
            if self.selected_ids_ is not None and target_outputs.n_items == k and ids.equals(self.selected_ids_):
                return t
            if self.selected_ids_ is not None and set(self.selected_ids_).issubset(set(ids)):
                return t.take(ids.get_indexer(self.selected_ids_))
            raise ValueError(
                f"target_outputs: item ids do not match the fitted item set ({n} items) or the {k} selected items"
            )
        arr = np.asarray(target_outputs)
        if arr.ndim < 2 or arr.shape[1] not in (k, n):
            raise ValueError(
                f"target_outputs: expected outputs on the {k} selected items (or all {n} items) in axis 1, got shape {arr.shape}"
            )
        if arr.shape[1] == k:
            return _as_outputs(arr, "target_outputs", lab)
        return _as_outputs(arr, "target_outputs", self.labels_).take(self.selected_)

    def score(self, target_outputs: Any, target_scores: Any) -> "PredictionMetrics":
        """MAE (percentage points) and Spearman correlation of the estimates against the true scores."""
        return prediction_metrics(target_scores, self.predict(target_outputs))


def _weighted_anchors(X: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """k-means on item embeddings X (n_items, d): the items nearest the centroids (sorted, distinct) and the
    summed share of the clusters each one represents (two centroids can share their nearest item)."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import pairwise_distances_argmin

    km = KMeans(n_clusters=k, n_init=1, random_state=int(rng.integers(2**31 - 1))).fit(X)
    anchors = pairwise_distances_argmin(km.cluster_centers_, X)
    weights = np.bincount(km.labels_, minlength=k) / X.shape[0]
    uniq, inv = np.unique(anchors, return_inverse=True)
    return uniq, np.bincount(inv, weights=weights)


@dataclass(frozen=True)
class PredictionMetrics:
    """Accuracy of estimated benchmark scores: MAE in percentage points and Spearman's rank correlation."""

    mae: float
    spearman: float
    n_models: int

    def as_dict(self) -> dict[str, float]:
        return {"mae": self.mae, "spearman": self.spearman, "n_models": self.n_models}


def prediction_metrics(true_scores: Any, estimates: Any) -> PredictionMetrics:
    """MAE (×100, percentage points) and Spearman ρ between true and estimated scores, shape (n_models,).

    ρ is reported as 0 when the estimates (or the truths) are all equal: a constant prediction ranks nothing.
    """
    t = check_array(true_scores, "true_scores", ndim=1)
    e = check_array(estimates, "estimates", ndim=1, shape=t.shape)
    if t.size < 2:
        raise ValueError("true_scores: need at least 2 target models for a rank correlation")
    rho = stats.spearmanr(t, e)[0] if np.ptp(e) > 0 and np.ptp(t) > 0 else 0.0
    return PredictionMetrics(float(100 * np.abs(t - e).mean()), float(rho), int(t.size))
