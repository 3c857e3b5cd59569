"""DISCO: disagreement-based sample selection and model-signature performance prediction.

Rubinstein, Raible, Gubri & Oh, "DISCO: Diversifying Sample Condensation for Efficient Model Evaluation"
(``/work/shared/papers/002_*.txt``). The pipeline has two steps:

1. **Selection.** Score every item by how much a pool of source models disagrees on it and keep the
   top-k: the predictive diversity score (:func:`pds`, Eq. 1) or the generalised Jensen–Shannon
   divergence (:func:`jsd`), which equals the mutual information between the model index and the
   prediction (Prop. 1) and is sandwiched by PDS (Prop. 2, :func:`pds_jsd_bounds`).
2. **Prediction.** A model's *signature* is its concatenated outputs on the selected items; a
   scikit-learn regressor (kNN, random forest, ... of Table 2), optionally after PCA, maps signatures
   of source models to their full-benchmark accuracy (:class:`DISCO`).

Baselines under the same protocol: :class:`RandomDirect` (random subset + direct accuracy),
:class:`AnchorCorr` (correctness clustering + weighted sum, Vivek et al. / Polo et al.),
:class:`StratifiedHT` (SSEPY-style k-means strata on confidence + Horvitz–Thompson),
:class:`SortSearchDirect` (Lifelong-Bench's Sort & Search, via :mod:`effstats.sortsearch`) and the IRT
family (Anchor-IRT, p-IRT, gp-IRT) in :mod:`effstats.irt`.

Every estimator follows one protocol: ``fit(source_outputs, source_scores=None)`` on the source models'
outputs on all items (a :class:`~effstats.responses.ResponseMatrix` or arrays), ``selected_`` item
positions, and ``predict(target_outputs)`` from the targets' outputs on the selected items (or on all
items, of which only the selected ones are read) → estimated full-benchmark scores. :func:`evaluate_split` / :func:`run_protocol` score any of them on source/target
model splits from :mod:`effstats.splits` with MAE (percentage points) and Spearman rank correlation.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import entr
from sklearn.base import BaseEstimator, clone

from ._validation import check_array, check_positive_int, check_probabilities, check_rng
from .responses import ResponseMatrix
from .splits import ModelSplit

__all__ = [
    "pds",
    "jsd",
    "pds_from_predictions",
    "jsd_from_predictions",
    "pds_jsd_bounds",
    "disagreement",
    "select_top_k",
    "select_random",
    "make_predictor",
    "PREDICTORS",
    "DISCO",
    "RandomDirect",
    "AnchorCorr",
    "StratifiedHT",
    "SortSearchDirect",
    "PredictionMetrics",
    "prediction_metrics",
    "evaluate_split",
    "run_protocol",
]


# ----------------------------------------------------------------------------- disagreement scores
def _proba(probabilities: Any, name: str = "probabilities") -> np.ndarray:
    p = check_probabilities(probabilities, name, ndim=3)
    if p.shape[0] < 2:
        raise ValueError(f"{name}: disagreement needs at least 2 source models, got {p.shape[0]}")
    return p


def pds(probabilities: Any, *, normalize: bool = True) -> np.ndarray:
    """Predictive diversity score of every item.

    ``PDS_i = (1/C) Σ_c max_m f_c^m(x_i)`` as in the paper's Eq. 1 (``normalize=True``); App. H defines
    it without the ``1/C`` (``normalize=False``), which is the form Prop. 2 bounds. The two differ by
    the constant ``C``, so they rank items identically.

    Parameters
    ----------
    probabilities : array of shape (n_models, n_items, n_classes)
        Class probabilities of each source model; rows sum to 1.
    normalize : bool
        Divide by the number of classes ``C`` (Eq. 1).

    Returns
    -------
    ndarray of shape (n_items,)
        In ``[1/C, min(M, C)/C]`` (normalised) or ``[1, min(M, C)]``.
    """
    p = _proba(probabilities)
    s = p.max(axis=0).sum(axis=-1)
    return s / p.shape[2] if normalize else s


def jsd(probabilities: Any, *, base: float = 2.0) -> np.ndarray:
    """Generalised Jensen–Shannon divergence of the source models' predictions on every item.

    ``JSD_i = H(mean_m p^m(x_i)) − mean_m H(p^m(x_i))`` (Fuglede & Topsøe), the mutual information between
    a uniformly drawn model index and its prediction (Prop. 1). ``base=2`` gives bits, the unit of
    Prop. 2's bounds.

    Parameters
    ----------
    probabilities : array of shape (n_models, n_items, n_classes)
    base : float
        Logarithm base (2: bits, e: nats).

    Returns
    -------
    ndarray of shape (n_items,), non-negative, at most ``log_base(min(M, C))``.
    """
    if not base > 1:
        raise ValueError(f"base: expected a logarithm base > 1, got {base!r}")
    p = _proba(probabilities)
    h_mean = entr(p.mean(axis=0)).sum(axis=-1)
    h_each = entr(p).sum(axis=-1).mean(axis=0)
    # JSD >= 0 exactly; clip the -1e-16 rounding so top-k ties stay ties.
    return np.maximum(h_mean - h_each, 0.0) / np.log(base)


def _class_mass(predictions: Any, n_classes: int | None):
    """Sparse (item, class) -> count of the ranked predictions, without a dense one-hot array."""
    pred = check_array(predictions, "predictions", ndim=(2, 3), dtype=None)
    if not np.issubdtype(pred.dtype, np.integer):
        raise ValueError(f"predictions: expected integer class ids, got dtype {pred.dtype}")
    if pred.ndim == 2:
        pred = pred[..., None]
    m, n, k = pred.shape
    if m < 2:
        raise ValueError(f"predictions: disagreement needs at least 2 source models, got {m}")
    if pred.min() < 0:
        raise ValueError("predictions: class ids must be non-negative")
    c = int(pred.max()) + 1
    if n_classes is not None:
        c_user = check_positive_int(n_classes, "n_classes")
        if c_user < c:
            raise ValueError(f"n_classes: {c_user} is smaller than the largest class id + 1 ({c})")
        c = c_user
    if k > 1 and (np.diff(np.sort(pred, axis=2), axis=2) == 0).any():
        raise ValueError("predictions: a model's top-k list repeats a class id")
    keys = (np.arange(n, dtype=np.int64)[None, :, None] * c + pred.astype(np.int64)).ravel()
    uniq, counts = np.unique(keys, return_counts=True)
    return uniq // c, counts, m, n, k, c


def pds_from_predictions(predictions: Any, *, n_classes: int | None = None) -> np.ndarray:
    """PDS of hard (top-1) or top-k ranked predictions, for models that publish class ids only.

    A top-1 prediction is the one-hot distribution; a top-k list is taken as the uniform distribution
    over its k classes (the documented top-5 variant). Then ``Σ_c max_m f_c^m`` is the number of
    distinct classes predicted by any model, divided by k: the count that PDS generalises.

    Parameters
    ----------
    predictions : int array of shape (n_models, n_items) or (n_models, n_items, k)
    n_classes : int, optional
        When given, the score is divided by it (Eq. 1's normalisation); otherwise unnormalised.

    Returns
    -------
    ndarray of shape (n_items,)
    """
    item, _, _, n, k, c = _class_mass(predictions, n_classes)
    out = np.bincount(item, minlength=n) / k
    return out / c if n_classes is not None else out


def jsd_from_predictions(predictions: Any, *, n_classes: int | None = None, base: float = 2.0) -> np.ndarray:
    """JSD of hard or top-k predictions (see :func:`pds_from_predictions` for the distributions).

    Each model's distribution has entropy ``log k``, so JSD = entropy of the vote shares − log k.

    Returns
    -------
    ndarray of shape (n_items,)
    """
    if not base > 1:
        raise ValueError(f"base: expected a logarithm base > 1, got {base!r}")
    item, counts, m, n, k, _ = _class_mass(predictions, n_classes)
    share = counts / (m * k)
    h = np.bincount(item, weights=entr(share), minlength=n)
    return np.maximum(h - np.log(k), 0.0) / np.log(base)


def pds_jsd_bounds(pds_unnormalized: Any, n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """Prop. 2's sandwich ``2 (PDS−1)² / (M² ln 2) ≤ JSD ≤ M/(M−1) log₂M · (PDS−1)`` (JSD in bits).

    ``pds_unnormalized`` is the App. H score without the 1/C (``pds(..., normalize=False)``).
    """
    s = check_array(pds_unnormalized, "pds_unnormalized", ndim=(0, 1))
    m = check_positive_int(n_models, "n_models", minimum=2)
    if (s < 1 - 1e-9).any():
        raise ValueError("pds_unnormalized: the unnormalised PDS is at least 1; did you pass the 1/C-normalised score?")
    e = np.maximum(s - 1.0, 0.0)
    return 2.0 * e**2 / (m**2 * np.log(2.0)), m / (m - 1) * np.log2(m) * e


def disagreement(outputs: Any, measure: str = "pds", *, top_k: int = 1, n_classes: int | None = None) -> np.ndarray:
    """Per-item disagreement of a pool of models, from whatever outputs they publish.

    Parameters
    ----------
    outputs : ResponseMatrix or array
        Class probabilities ``(n_models, n_items, n_classes)`` (float), ranked class ids
        ``(n_models, n_items[, k])`` (int), or a ResponseMatrix: its probabilities when present, else its
        predictions (the first ``top_k`` ranks), else its correctness taken as a 2-class distribution.
    measure : {"pds", "jsd"}
    top_k : int
        Ranks of class-id predictions used (1 = hard-label disagreement; 5 = the top-5 variant).

    Returns
    -------
    ndarray of shape (n_items,)
    """
    if measure not in ("pds", "jsd"):
        raise ValueError(f"measure: expected 'pds' or 'jsd', got {measure!r}")
    top_k = check_positive_int(top_k, "top_k")
    if isinstance(outputs, ResponseMatrix):
        if outputs.probabilities is not None:
            outputs = outputs.probabilities
        elif outputs.predictions is not None:
            outputs = outputs.predictions
        else:
            if outputs.missing is not None:  # kept only when some cell is missing
                raise ValueError("outputs: disagreement needs complete responses; some cells are missing")
            v = outputs.values.astype(float)
            outputs = np.stack([1.0 - v, v], axis=-1)
    arr = np.asarray(outputs)
    if np.issubdtype(arr.dtype, np.integer):
        if arr.ndim == 3:
            if top_k > arr.shape[2]:
                raise ValueError(f"top_k: the predictions hold {arr.shape[2]} ranks, asked for {top_k}")
            arr = arr[..., :top_k]
        f = pds_from_predictions if measure == "pds" else jsd_from_predictions
        return f(arr, n_classes=n_classes)
    return pds(arr) if measure == "pds" else jsd(arr)


# ----------------------------------------------------------------------------- selection
def _allocate(sizes: np.ndarray, k: int) -> np.ndarray:
    """Equal share of k per group, capped at the group size; the surplus goes to the other groups."""
    alloc = np.zeros(len(sizes), dtype=int)
    remaining = k
    while remaining > 0:
        open_ = alloc < sizes
        share = remaining // open_.sum()
        if share == 0:  # fewer items left than open groups: one more each to the first groups
            idx = np.flatnonzero(open_)[:remaining]
            alloc[idx] += 1
            break
        add = np.where(open_, np.minimum(share, sizes - alloc), 0)
        alloc += add
        remaining -= int(add.sum())
    return alloc


def select_top_k(scores: Any, k: int, *, groups: Any = None, rng: Any = None) -> np.ndarray:
    """Indices of the k items with the highest scores (stratified: equal numbers per group).

    Parameters
    ----------
    scores : array of shape (n_items,)
    k : int
        Number of items, ``1 <= k <= n_items``.
    groups : array of shape (n_items,), optional
        Item groups (e.g. MMLU tasks); each gets ``k // n_groups`` items (surplus of small groups is
        passed on), the top-scoring ones within the group (the stratification of Table 2b).
    rng : int or Generator, optional
        Breaks ties at random (hard-label PDS has many); without it ties go to the lower index.

    Returns
    -------
    int ndarray of shape (k,), sorted by decreasing score.
    """
    s = check_array(scores, "scores", ndim=1)
    n = s.size
    k = check_positive_int(k, "k", maximum=n)
    tie = check_rng(rng).permutation(n) if rng is not None else np.arange(n)
    if groups is None:
        order = np.lexsort((tie, -s))
        return order[:k]
    g = np.asarray(groups)
    if g.shape != (n,):
        raise ValueError(f"groups: expected shape ({n},), got {g.shape}")
    codes, _ = pd.factorize(pd.Series(g), sort=True)
    if (codes < 0).any():
        raise ValueError("groups: contains missing values")
    sizes = np.bincount(codes)
    alloc = _allocate(sizes, k)
    chosen = _first_per_group(np.lexsort((tie, -s, codes)), codes, sizes, alloc)  # by group, then score
    return chosen[np.lexsort((tie[chosen], -s[chosen]))]


def _first_per_group(order: np.ndarray, codes: np.ndarray, sizes: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    """The first ``alloc[g]`` items of every group g from ``order`` (all items, sorted by group first)."""
    start = np.r_[0, np.cumsum(sizes)[:-1]]
    rank_in_group = np.arange(len(order)) - start[codes[order]]
    return order[rank_in_group < alloc[codes[order]]]


def select_random(n_items: int, k: int, *, groups: Any = None, rng: Any = None) -> np.ndarray:
    """k uniformly random items (stratified: equal numbers per group), as int indices."""
    n_items = check_positive_int(n_items, "n_items")
    return select_top_k(check_rng(rng).random(n_items), k, groups=groups)


# ----------------------------------------------------------------------------- inputs
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


# ----------------------------------------------------------------------------- predictors
PREDICTORS = ("knn", "rf", "linear", "ridge", "lasso", "gb", "mlp2", "mlp3")


def make_predictor(name: str | Any, *, random_state: Any = None, n_neighbors: int = 1):
    """The regressors of Table 2(e) with App. I's settings (all scikit-learn).

    ``knn`` (k = 1, Euclidean), ``rf`` (defaults), ``linear``, ``ridge`` (λ = 10), ``lasso`` (λ = 1e-4),
    ``gb`` (200 estimators), ``mlp2`` (hidden [128], 200 epochs, lr 1e-3) and ``mlp3`` ([128, 128], 700
    epochs). The paper trains the MLPs with AdamW; scikit-learn's Adam with its default L2 of 1e-4 is
    the nearest equivalent. A scikit-learn regressor instance is returned as a clone.
    """
    from sklearn import ensemble, linear_model, neighbors, neural_network

    if not isinstance(name, str):
        if not hasattr(name, "fit") or not hasattr(name, "predict"):
            raise ValueError(f"predictor: expected one of {PREDICTORS} or a scikit-learn regressor, got {name!r}")
        return clone(name)
    rs = None if random_state is None else int(check_rng(random_state).integers(2**31 - 1))
    table = {
        "knn": lambda: neighbors.KNeighborsRegressor(n_neighbors=n_neighbors),
        "rf": lambda: ensemble.RandomForestRegressor(random_state=rs, n_jobs=-1),
        "linear": lambda: linear_model.LinearRegression(),
        "ridge": lambda: linear_model.Ridge(alpha=10.0),
        "lasso": lambda: linear_model.Lasso(alpha=1e-4, max_iter=5000),
        "gb": lambda: ensemble.GradientBoostingRegressor(n_estimators=200, random_state=rs),
        "mlp2": lambda: neural_network.MLPRegressor((128,), learning_rate_init=1e-3, max_iter=200, random_state=rs),
        "mlp3": lambda: neural_network.MLPRegressor((128, 128), learning_rate_init=1e-3, max_iter=700, random_state=rs),
    }
    if name not in table:
        raise ValueError(f"predictor: expected one of {PREDICTORS} or a scikit-learn regressor, got {name!r}")
    return table[name]()


class DISCO(_SubsetEstimator):
    """DISCO: select the k most disagreed-on items, predict accuracy from model signatures.

    Parameters
    ----------
    n_items : int
        Number of selected items k (100 in the paper).
    selection : {"pds", "jsd", "random"} or int array of shape (n_items,)
        Disagreement score used for top-k selection, uniform random items ("model signature" rows), or
        a fixed item subset chosen elsewhere (e.g. Sort & Search's difficulty positions).
    predictor : str or scikit-learn regressor
        One of :data:`PREDICTORS` (see :func:`make_predictor`); ``"rf"`` is the paper's default.
    signature : {"auto", "probabilities", "true_class", "predictions", "correctness"}
        What is concatenated into a model's signature: class probabilities (k·C values, the paper's),
        the probability of the true class (k values, Anchor-conf's embedding), one-hot top-1 class ids
        (only the classes some source model predicted on the item get a column), or 0/1 correctness.
        ``auto`` takes probabilities, else class ids, else correctness.
    pca : int or None
        Reduce signatures to this many principal components (clipped to the source count and signature
        length); ``None`` keeps them whole. Table 2(d): PCA 64–256 ≫ none.
    n_disagreement_models : int or None
        Compute the disagreement from this many randomly drawn source models (App. I: M = 100 on MMLU);
        ``None`` uses every source model.
    stratify : str, array of shape (n_items,), or None
        Item groups for stratified selection (a column of ``items`` when the source is a ResponseMatrix).
    top_k : int
        Ranks used for disagreement when the models publish class ids (1 = hard labels, 5 = top-5 variant).
    n_neighbors : int
        k of the kNN predictor (App. I: 1).
    random_state : int, Generator or None
        Seeds the random selection, the model subset, tie-breaking and the predictor.

    Attributes
    ----------
    selected_ : int ndarray of shape (n_items,)
        Selected item positions (in decreasing disagreement).
    selected_ids_ : Index or None
    scores_ : ndarray of shape (n_items_total,) or None
        The disagreement of every item (None for random selection).
    disagreement_models_ : int ndarray
        Source models the disagreement was computed from.
    signature_kind_, pca_, predictor_
    """

    def __init__(
        self,
        n_items: int = 100,
        selection: str = "pds",
        predictor: Any = "rf",
        signature: str = "auto",
        pca: int | None = 256,
        n_disagreement_models: int | None = None,
        stratify: Any = None,
        top_k: int = 1,
        n_neighbors: int = 1,
        random_state: Any = None,
    ) -> None:
        self.n_items = n_items
        self.selection = selection
        self.predictor = predictor
        self.signature = signature
        self.pca = pca
        self.n_disagreement_models = n_disagreement_models
        self.stratify = stratify
        self.top_k = top_k
        self.n_neighbors = n_neighbors
        self.random_state = random_state

    # -- selection
    def _select(self, src: _Outputs, rng: np.random.Generator) -> None:
        groups = _item_groups(self.stratify, src)
        m = src.n_models
        if not isinstance(self.selection, str):  # a fixed item subset chosen elsewhere
            sel = check_array(self.selection, "selection", ndim=1, dtype=None)
            if not np.issubdtype(sel.dtype, np.integer) or sel.min() < 0 or sel.max() >= src.n_items or np.unique(sel).size != sel.size:
                raise ValueError(f"selection: expected distinct item positions in [0, {src.n_items - 1}]")
            if sel.size != self.n_items:
                raise ValueError(f"selection: {sel.size} items given but n_items={self.n_items}")
            self.scores_ = None
            self.disagreement_models_ = np.arange(m)
            self._set_selected(sel)
            return
        if self.selection == "random":
            self.scores_ = None
            self.disagreement_models_ = np.arange(m)
            self._set_selected(select_random(src.n_items, self.n_items, groups=groups, rng=rng))
            return
        if self.selection not in ("pds", "jsd"):
            raise ValueError(f"selection: expected 'pds', 'jsd' or 'random', got {self.selection!r}")
        if self.n_disagreement_models is None:
            models = np.arange(m)
        else:
            k = check_positive_int(self.n_disagreement_models, "n_disagreement_models", minimum=2)
            models = np.sort(rng.choice(m, size=min(k, m), replace=False))
        self.disagreement_models_ = models
        if src.proba is not None:
            out: Any = src.proba[models]
        elif src.pred is not None:
            out = src.pred[models]
        else:
            c = src.correct[models]
            out = np.stack([1.0 - c, c], axis=-1)
        self.scores_ = disagreement(out, self.selection, top_k=self.top_k)
        self._set_selected(select_top_k(self.scores_, self.n_items, groups=groups, rng=rng))

    # -- signatures
    def _signature(self, o: _Outputs, *, fit: bool) -> np.ndarray:
        kind = self.signature_kind_
        if kind == "probabilities":
            if o.proba is None:
                raise ValueError("target_outputs: the signature uses class probabilities; none were given")
            if o.proba.shape[2] != self.n_classes_:
                raise ValueError(f"target_outputs: expected {self.n_classes_} classes, got {o.proba.shape[2]}")
            return o.proba.reshape(o.proba.shape[0], -1)
        if kind == "predictions":
            pred = o.proba.argmax(axis=2) if o.pred is None and o.proba is not None else o.pred
            if pred is None:
                raise ValueError("target_outputs: the signature uses predicted classes; none were given")
            pred = pred if pred.ndim == 2 else pred[..., 0]
            keys = np.arange(pred.shape[1], dtype=np.int64)[None, :] * self._key_base + pred.astype(np.int64)
            if fit:
                self._vocab = np.unique(keys)
            pos = np.searchsorted(self._vocab, keys)
            pos = np.minimum(pos, len(self._vocab) - 1)
            # classes no source model predicted on the item (or beyond the fitted range): all-zero block
            hit = (self._vocab[pos] == keys) & (pred >= 0) & (pred < self._key_base)
            sig = np.zeros((pred.shape[0], len(self._vocab)))
            rows = np.broadcast_to(np.arange(pred.shape[0])[:, None], pred.shape)
            sig[rows[hit], pos[hit]] = 1.0
            return sig
        if kind == "true_class":
            if o.proba is None or o.labels is None:
                raise ValueError("target_outputs: the signature uses true-class probabilities; give probabilities and labels")
            return np.take_along_axis(o.proba, o.labels[None, :, None], axis=2)[..., 0]
        return o.correctness("target_outputs")

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "DISCO":
        """Select items from the source models and train the signature → score predictor.

        Parameters
        ----------
        source_outputs : ResponseMatrix or array
            Source models' outputs on all items: probabilities ``(M, N, C)``, class ids ``(M, N[, k])``
            (with ``labels``) or correctness ``(M, N)``.
        source_scores : array of shape (M,), optional
            What to predict (default: accuracy on all N items). Any per-model score works, e.g. the
            accuracy on a shifted test set.
        labels : int array of shape (N,), optional
            True classes, when ``source_outputs`` is an array of probabilities or class ids.
        """
        from sklearn.decomposition import PCA

        src, scores = self._fit_source(source_outputs, source_scores, labels)
        rng = check_rng(self.random_state)
        self._select(src, rng)
        kind = self.signature
        if kind == "auto":
            kind = "probabilities" if src.proba is not None else "predictions" if src.pred is not None else "correctness"
        if kind not in ("probabilities", "true_class", "predictions", "correctness"):
            raise ValueError(
                f"signature: expected 'auto', 'probabilities', 'true_class', 'predictions' or 'correctness', got {kind!r}"
            )
        if kind in ("probabilities", "true_class") and src.proba is None:
            raise ValueError(f"signature: {kind!r} requested but the source outputs have no probabilities")
        if kind == "true_class" and src.labels is None:
            raise ValueError("signature: 'true_class' needs labels")
        if kind == "predictions" and src.pred is None and src.proba is None:
            raise ValueError("signature: 'predictions' requested but the source outputs have no class ids")
        self.signature_kind_ = kind
        self.n_classes_ = None if src.proba is None else src.proba.shape[2]
        sel = src.take(self.selected_)
        if kind == "predictions":
            p = sel.pred if sel.pred is not None else sel.proba.argmax(axis=2)
            top = int(p.max()) if self.labels_ is None else max(int(p.max()), int(self.labels_.max()))
            self._key_base = top + 1 if self.n_classes_ is None else self.n_classes_
        X = self._signature(sel, fit=True)
        self.pca_ = None
        if self.pca is not None:
            d = check_positive_int(self.pca, "pca")
            d = min(d, X.shape[0], X.shape[1])
            self.pca_ = PCA(n_components=d, random_state=int(rng.integers(2**31 - 1))).fit(X)
            X = self.pca_.transform(X)
        self.predictor_ = make_predictor(self.predictor, random_state=rng, n_neighbors=min(self.n_neighbors, len(scores)))
        self.predictor_.fit(X, scores)
        return self

    def signatures(self, outputs: Any) -> np.ndarray:
        """Signatures (after PCA) of models' outputs, shape (n_models, d)."""
        X = self._signature(self._target(outputs), fit=False)
        return X if self.pca_ is None else self.pca_.transform(X)

    def predict(self, target_outputs: Any) -> np.ndarray:
        """Estimated full-benchmark score of each target model, shape (n_target,), clipped to [0, 1].

        ``target_outputs`` holds outputs on the selected items (``selected_``), or on all items (only the
        selected ones are read), as a ResponseMatrix or an array of the fitted kind.
        """
        X = self.signatures(target_outputs)
        return np.clip(self.predictor_.predict(X), 0.0, 1.0)


# ----------------------------------------------------------------------------- baselines
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

    def predict(self, target_outputs: Any) -> np.ndarray:
        return self._target(target_outputs).correctness("target_outputs").mean(axis=1)


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
        anchors, self.weights_ = _weighted_anchors(src.correctness("source_outputs").T, self.n_items, check_rng(self.random_state))
        self._set_selected(anchors)
        return self

    def predict(self, target_outputs: Any) -> np.ndarray:
        return self._target(target_outputs).correctness("target_outputs") @ self.weights_


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
        rng = check_rng(self.random_state)
        h = check_positive_int(self.n_strata, "n_strata", maximum=self.n_items)
        if src.proba is not None:
            conf = src.proba.max(axis=2).mean(axis=0)
        elif src.pred is not None:
            p = src.pred if src.pred.ndim == 2 else src.pred[..., 0]
            mode = stats.mode(p, axis=0, keepdims=False).mode
            conf = (p == mode[None, :]).mean(axis=0)
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
        self.weights_ = (sizes / sizes.sum() / alloc)[strata[chosen]]  # 1 / (N π_i)
        self._set_selected(chosen)
        return self

    def predict(self, target_outputs: Any) -> np.ndarray:
        return self._target(target_outputs).correctness("target_outputs") @ self.weights_


class SortSearchDirect(_SubsetEstimator):
    """Lifelong-Benchmark baseline (Prabhu et al. 2024) in the same protocol, via :mod:`effstats.sortsearch`.

    Items are sorted by source-model correctness ("uniform correctness" selection: ``n_items`` positions
    spread uniformly over the easy→hard order); a target's accuracy is the DP-search threshold's share of
    items predicted correct (the "weighted sum" of Table 3). Needs binary correctness.
    """

    def __init__(self, n_items: int = 100, sort: str = "sum", random_state: Any = None) -> None:
        self.n_items = n_items
        self.sort = sort
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "SortSearchDirect":
        from .sortsearch import SortSearch

        src, _ = self._fit_source(source_outputs, source_scores, labels)
        y = src.correctness("source_outputs")
        if not np.isin(y, (0.0, 1.0)).all():
            raise ValueError("source_outputs: Sort & Search needs binary correctness")
        self.sortsearch_ = SortSearch(sort=self.sort, random_state=self.random_state).fit(y.astype(bool))
        self._set_selected(self.sortsearch_.select(self.n_items))
        return self

    def predict(self, target_outputs: Any) -> np.ndarray:
        y = self._target(target_outputs).correctness("target_outputs").astype(bool)
        return np.asarray(self.sortsearch_.predict(y, items=self.selected_).accuracy, dtype=float)


# ----------------------------------------------------------------------------- protocol
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
