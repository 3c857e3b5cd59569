"""Baselines in DISCO's protocol: random + direct, anchor points, SSEPY-style strata, Sort & Search."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._subset import _SubsetEstimator, _item_groups, _weighted_anchors
from .._validation import check_positive_int, check_rng
from ._selection import _first_per_group, select_random

# References: Cochran, *Sampling Techniques*, 3rd ed., Wiley, 1977 (design-based variances below).

class RandomDirect(_SubsetEstimator):
    """Baseline: k uniformly random items (optionally stratified) and the target's accuracy on them."""

    def __init__(self, n_items: int = 100, stratify: Any = None, random_state: Any = None) -> None:
        self.n_items = n_items
        self.stratify = stratify
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "RandomDirect":
        src, _ = self._fit_source(source_outputs, source_scores, labels)
        groups = _item_groups(self.stratify, src)
        self._set_selected(select_random(src.n_items, self.n_items, groups=groups, rng=self.random_state))
        return self

    _interval_kind = "design"

    def _predict(self, o) -> np.ndarray:
        return o.correctness("target_outputs").mean(axis=1)

    def _design_se(self, o) -> np.ndarray:
        """Standard error of a k-item simple random sample mean from N items: ``sqrt(s²/k · (1 − k/N))``
        (Cochran 1977, Thm 2.2; ``s²`` the target's sample variance on the k items). With stratified
        selection the strata get equal numbers, so this is an approximation there."""
        y = o.correctness("target_outputs")
        k, n = y.shape[1], self.n_items_total_
        s2 = y.var(axis=1, ddof=1) if k > 1 else np.full(len(y), 0.25)
        return np.sqrt(s2 / k * (1 - k / n))

    def _design_n(self, o) -> np.ndarray:
        """Finite-population-corrected sample size ``k / (1 − k/N)`` per target, for Wilson's interval on 0/1
        correctness (inf when every item was sampled)."""
        k, n = len(self.selected_), self.n_items_total_
        return np.full(o.correctness("target_outputs").shape[0], k / (1 - k / n) if k < n else np.inf)


class AnchorCorr(_SubsetEstimator):
    """Anchor-corr (Vivek et al. 2023; Polo et al. 2024): cluster items by source-model correctness.

    Items are embedded by their correctness vector over the source models and clustered with k-means
    into ``n_items`` clusters; the item nearest each centroid is the anchor and the estimate is the
    weighted sum ``Σ_k w_k s_k`` with ``w_k`` the cluster's share of items (the tinyBenchmarks
    reference implementation). Two centroids may share a nearest item; its weights then add up.
    """

    def __init__(self, n_items: int = 100, random_state: Any = None) -> None:
        self.n_items = n_items
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "AnchorCorr":
        src, _ = self._fit_source(source_outputs, source_scores, labels)
        anchors, self.weights_ = _weighted_anchors(src.correctness("source_outputs").T, self.n_items, check_rng(self.random_state, "random_state"))
        self._set_selected(anchors)
        return self

    def _predict(self, o) -> np.ndarray:
        return o.correctness("target_outputs") @ self.weights_


def _kmeans_1d(x: np.ndarray, k: int, n_iter: int = 100) -> np.ndarray:
    """Deterministic 1-D k-means (Lloyd from quantile starts); labels 0..h-1 ordered by centre, empty ones dropped."""
    centres = np.unique(np.quantile(x, (np.arange(k) + 0.5) / k))
    for _ in range(n_iter):
        cuts = (centres[1:] + centres[:-1]) / 2  # 1-D Voronoi cells are intervals
        lab = np.searchsorted(cuts, x)
        cnt = np.bincount(lab, minlength=len(centres))
        new = np.bincount(lab, weights=x, minlength=len(centres))[cnt > 0] / cnt[cnt > 0]
        if new.shape == centres.shape and np.allclose(new, centres):
            break
        centres = np.unique(new)
    return np.unique(np.searchsorted((centres[1:] + centres[:-1]) / 2, x), return_inverse=True)[1]


def _modal_share(p: np.ndarray) -> np.ndarray:
    """Share of the rows (models) that give each column's (item's) most frequent value: (M, n) -> (n,).

    The longest run of equal values in each sorted column; scipy.stats.mode loops over columns in Python
    (26 s for the DISCO notebook's 60 fits on 10,000 items; this is ~0.1 s)."""
    s = np.sort(p, axis=0)
    m = s.shape[0]
    rows = np.arange(m)[:, None]
    start = np.ones(s.shape, bool)
    start[1:] = s[1:] != s[:-1]
    run_start = np.maximum.accumulate(np.where(start, rows, 0), axis=0)
    return (rows - run_start + 1).max(axis=0) / m


class StratifiedHT(_SubsetEstimator):
    """SSEPY-style estimate (Fogliato et al. 2024): k-means strata on confidence, Horvitz–Thompson sum.

    Items are stratified by (deterministic, 1-D) k-means on a difficulty proxy computed from the **source** models (mean
    confidence = max class probability; with class ids only, the share of models voting for the modal
    class; with correctness only, the mean correctness), so the target needs outputs on the sampled
    items alone. SSEPY proper uses the target model's own confidence on every item, which presumes a
    full inference pass. ``n_items`` are drawn proportionally to stratum size (at least one each) without
    replacement; the estimate ``Σ_h (N_h / N) · mean of the sampled items in h`` is the Horvitz–Thompson
    estimator with inclusion probabilities ``n_h / N_h``.
    """

    def __init__(self, n_items: int = 100, n_strata: int = 10, random_state: Any = None) -> None:
        self.n_items = n_items
        self.n_strata = n_strata
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "StratifiedHT":
        src, _ = self._fit_source(source_outputs, source_scores, labels)
        rng = check_rng(self.random_state, "random_state")
        h = check_positive_int(self.n_strata, "n_strata", maximum=self.n_items)
        if src.proba is not None:
            conf = src.proba.max(axis=2).mean(axis=0)
        elif src.pred is not None:
            p = src.pred if src.pred.ndim == 2 else src.pred[..., 0]
            conf = _modal_share(p)
        else:
            conf = src.correct.mean(axis=0)
        strata = _kmeans_1d(conf, h)
        h = strata.max() + 1
        sizes = np.bincount(strata, minlength=h)
        # proportional allocation with at least one item per stratum (largest remainders)
        raw = self.n_items * sizes / sizes.sum()
        alloc = np.maximum(np.floor(raw).astype(int), 1)
        alloc = np.minimum(alloc, sizes)
        while alloc.sum() < self.n_items:
            gap = np.where(alloc < sizes, raw - alloc, -np.inf)
            alloc[np.argmax(gap)] += 1
        while alloc.sum() > self.n_items:
            gap = np.where(alloc > 1, alloc - raw, -np.inf)
            alloc[np.argmax(gap)] -= 1
        key = rng.random(src.n_items)
        chosen = np.sort(_first_per_group(np.lexsort((key, strata)), strata, sizes, alloc))
        self.strata_ = strata
        self.stratum_sizes_ = sizes
        self.weights_ = (sizes / sizes.sum() / alloc)[strata[chosen]]  # 1 / (N π_i)
        self._set_selected(chosen)
        return self

    _interval_kind = "design"

    def _predict(self, o) -> np.ndarray:
        return o.correctness("target_outputs") @ self.weights_

    def _design_se(self, o) -> np.ndarray:
        """Stratified-sampling standard error ``sqrt(Σ_h W_h² s_h²/n_h (1 − n_h/N_h))`` (Cochran 1977, Thm 5.3);
        strata with one sampled item borrow the pooled within-stratum variance."""
        y = o.correctness("target_outputs")
        h = self.strata_[self.selected_]
        n_h = np.bincount(h, minlength=len(self.stratum_sizes_))
        sizes = self.stratum_sizes_
        onehot = np.eye(len(sizes))[h]  # (k, H)
        mean_h = (y @ onehot) / np.maximum(n_h, 1)
        ss_h = ((y - mean_h[:, h]) ** 2) @ onehot
        dof = n_h - 1
        pooled = ss_h.sum(axis=1) / max(dof[dof > 0].sum(), 1)
        s2_h = np.where(dof > 0, ss_h / np.maximum(dof, 1), pooled[:, None])
        w = sizes / sizes.sum()
        var = (w**2 * s2_h / np.maximum(n_h, 1) * (1 - n_h / sizes) * (n_h > 0)).sum(axis=1)
        return np.sqrt(var)

    def _design_n(self, o) -> np.ndarray:
        """Effective sample size for Wilson's interval on 0/1 correctness: ``p̂(1 − p̂) / se²`` (the design effect
        of Korn & Graubard 1998); when that is undefined (p̂ ∈ {0, 1} or se = 0, e.g. every sampled item right)
        the simple-random-sample size ``k / (1 − k/N)``. On CIFAR-10 at 100 of
        10,000 items (300 draws) the Wald interval covered 0.864 pooled over the 30 models (0.80 for the most
        accurate, 72 of 9,000 intervals of zero width).

        Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
        positive counts estimated from survey data. *Survey Methodology* 24(2), 193–201.
        """
        y = o.correctness("target_outputs")
        k, n = y.shape[1], self.n_items_total_
        p = self._predict(o)
        se = self._design_se(o)
        srs = k / (1 - k / n) if k < n else np.inf
        with np.errstate(divide="ignore", invalid="ignore"):
            kish = p * (1 - p) / se**2
        return np.where((se > 0) & (p > 0) & (p < 1), kish, srs)


class SortSearchDirect(_SubsetEstimator):
    """Lifelong-Benchmark baseline (Prabhu et al. 2024) in the same protocol, via :mod:`effstats.sortsearch`.

    Items are sorted by source-model correctness ("uniform correctness" selection: ``n_items`` positions
    spread uniformly over the easy→hard order); a target's accuracy is the DP-search threshold's share of
    items predicted correct (``predicted_accuracy``, the "weighted sum" of Table 3). Needs binary correctness.
    """

    def __init__(self, n_items: int = 100, sort: str = "sum", random_state: Any = None) -> None:
        self.n_items = n_items
        self.sort = sort
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "SortSearchDirect":
        from ..sortsearch import SortSearch

        src, _ = self._fit_source(source_outputs, source_scores, labels)
        y = src.correctness("source_outputs")
        if not np.isin(y, (0.0, 1.0)).all():
            raise ValueError("source_outputs: Sort & Search needs binary correctness")
        self.sortsearch_ = SortSearch(sort=self.sort, random_state=self.random_state).fit(y.astype(bool))
        self._set_selected(self.sortsearch_.select(self.n_items))
        return self

    def _predict(self, o) -> np.ndarray:
        y = o.correctness("target_outputs")
        if not np.isin(y, (0.0, 1.0)).all():
            raise ValueError("target_outputs: Sort & Search needs binary correctness on the selected items")
        y = y.astype(bool)
        # the paper's S&S estimate: the accuracy of the DP-search prediction vector (k / n), not the design-based
        # estimate from the evaluated items that SearchResult.accuracy now holds
        return np.asarray(self.sortsearch_.predict(y, items=self.selected_).predicted_accuracy, dtype=float)
