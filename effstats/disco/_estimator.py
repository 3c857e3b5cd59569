"""The DISCO estimator: disagreement-based selection, model signatures, a regressor on top."""
from __future__ import annotations

from typing import Any

import copy
import hashlib
import warnings
import weakref
from collections import OrderedDict

import numpy as np

from .._subset import _Outputs, _SubsetEstimator, _item_groups
from .._validation import check_array, check_positive_int, check_rng
from ..exceptions import check_is_fitted
from ._predictors import make_predictor
from ._selection import _disagreement, _disagreement_observed, select_random, select_top_k


_MEMO: dict = {}  # id(array) -> (weakref to the array, {key: scores})


def _memo(arr: np.ndarray, key: tuple, compute: Any) -> np.ndarray:
    """Disagreement scores of one source array, computed once per (array, setting).

    Protocols fit many DISCO variants and seeds on the same source matrix (Tables 1-3: predictors ×
    seeds × budgets); the scores depend only on the array and the setting. Keyed by the array object (held
    by weak reference, so a freed array never matches a new one at the same address), and only for arrays that
    cannot change in place (read-only down to the memory's owner, as the data loaders' and ``subset``'s arrays
    are): a writeable array the caller may edit between fits is scored afresh every time.
    """
    base = arr
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return compute()
        base = base.base
    entry = _MEMO.get(id(arr))
    if entry is None or entry[0]() is not arr:
        for k in [k for k, (ref, _) in _MEMO.items() if ref() is None]:
            del _MEMO[k]
        entry = (weakref.ref(arr), {})
        _MEMO[id(arr)] = entry
    if key not in entry[1]:
        entry[1][key] = compute()
    return entry[1][key]


def _predict_in_order(est: Any, X: np.ndarray) -> np.ndarray:
    """``est.predict(X)``, with a fitted forest's trees summed in order.

    scikit-learn's forests add their trees' predictions from ``n_jobs`` threads in the order the threads finish, so
    one fit gives predictions that differ at 1e-16 from run to run, and near-tied target models swap ranks (a
    Spearman of the notebook's Table 1 moved by 1e-3 between two runs of the same code). One job sums the trees in
    their order; prediction is a small part of a fit (the trees are still built on ``n_jobs`` threads).
    """
    if getattr(est, "n_jobs", None) in (None, 1) or not hasattr(est, "estimators_"):
        return est.predict(X)
    one = copy.copy(est)  # shallow: shares the fitted trees; the caller's (possibly shared) estimator is untouched
    try:
        one.n_jobs = 1
    except AttributeError:  # a user's regressor whose n_jobs cannot be set: predict as it is
        return est.predict(X)
    return one.predict(X)


_PCA_CACHE: "OrderedDict[tuple, tuple]" = OrderedDict()  # (digest of X, d, seed) -> (fitted PCA, PCA of X)
_PCA_CACHE_BYTES = 256e6


def _fit_pca(X: np.ndarray, d: int, seed: int) -> tuple[Any, np.ndarray]:
    """``PCA(d, random_state=seed).fit(X)`` and its transform of X, fitted once per (X, d, seed).

    The fit depends only on these: DISCO variants that differ in the predictor alone (kNN / RF / MLP / ... of
    Tables 1-3, Fig. 5 and the ImageNet section, or the same split with another target score) draw the same PCA
    seed from the same random stream and select the same items, so they share one randomized SVD, which is a large
    part of a fit with reference BLAS. The cache is a byte-bounded LRU (components and transformed rows).
    """
    from sklearn.decomposition import PCA

    key = (X.shape, X.dtype.str, hashlib.sha1(np.ascontiguousarray(X).view(np.uint8)).hexdigest(), d, seed)
    hit = _PCA_CACHE.get(key)
    if hit is not None:
        _PCA_CACHE.move_to_end(key)
        return hit
    pca = PCA(n_components=d, random_state=seed).fit(X)
    out = _PCA_CACHE[key] = (pca, pca.transform(X))
    size = lambda v: v[0].components_.nbytes + v[1].nbytes  # noqa: E731
    total = sum(size(v) for v in _PCA_CACHE.values())
    while total > _PCA_CACHE_BYTES and len(_PCA_CACHE) > 1:
        total -= size(_PCA_CACHE.popitem(last=False)[1])
    return out


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
    pca : int or None, default=256
        Reduce signatures to this many principal components; ``None`` keeps them whole. Table 2(d): PCA
        64–256 ≫ none. PCA cannot have more components than source models (or signature columns): a larger
        value is clipped with a ``UserWarning`` (the authors' code raises).
    n_disagreement_models : int or None
        Compute the disagreement from this many randomly drawn source models (App. I: M = 100 on MMLU);
        ``None`` uses every source model.
    stratify : str, array of shape (n_items,), or None
        Item groups for stratified selection (a column of ``items`` when the source is a ResponseMatrix).
    top_k : int
        Ranks used for disagreement when the models publish class ids (1 = hard labels, 5 = top-5 variant).
    n_neighbors : int, default=1
        k of the kNN predictor (App. I: 1).
    metric : {"cosine", "euclidean"}, default="cosine"
        Distance of the kNN predictor; the authors' code uses cosine distance. Cosine needs centred signatures
        (PCA centres them): on raw 0/1 correctness signatures (``pca=None``) it compares only the direction of
        the correct sets, not how many items are right, and predicts poorly; use ``"euclidean"`` there.
    random_state : int, Generator or None
        Seeds the random selection, the model subset, tie-breaking and the predictor.

    Notes
    -----
    Missing cells (a ResponseMatrix's ``missing`` mask, NaN in a DataFrame or float array): the disagreement of
    an item is computed over the source models that answered it (PDS: the largest probability among them; JSD:
    their mean distribution and mean entropy), items no source model answered are never selected, a source
    model's score is its mean over the items it has outputs on (unless ``source_scores`` is given), and a
    missing entry of a signature, a source's or a target's, is imputed by the source models' observed mean of
    that signature column (for 0/1 correctness: the item's observed fraction correct). ``n_missing_`` counts the
    missing source cells; a ``UserWarning`` reports them at fit, and one at predict names the selected items a
    target lacks.

    Attributes
    ----------
    selected_ : int ndarray of shape (n_items,)
        Selected item positions (in decreasing disagreement).
    selected_ids_ : Index or None
    scores_ : ndarray of shape (n_items_total,) or None
        The disagreement of every item (None for random selection).
    disagreement_models_ : int ndarray
        Source models the disagreement was computed from.
    n_missing_ : int
        Missing cells in the source outputs.
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
        metric: str = "cosine",
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
        self.metric = metric
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
            self._set_selected(self._select_answered(
                lambda n, g: select_random(n, self.n_items, groups=g, rng=rng), src, groups))
            return
        if self.selection not in ("pds", "jsd"):
            raise ValueError(f"selection: expected 'pds', 'jsd' or 'random', got {self.selection!r}")
        if self.n_disagreement_models is None:
            models = np.arange(m)
        else:
            k = check_positive_int(self.n_disagreement_models, "n_disagreement_models", minimum=2)
            models = np.sort(rng.choice(m, size=min(k, m), replace=False))
        self.disagreement_models_ = models
        base = src.proba if src.proba is not None else src.pred if src.pred is not None else src.correct
        every = models.size == m  # no fancy-index copy of the whole (M, N, C) cube when every model is used

        def outputs(items: Any = slice(None)) -> Any:
            sub = base if every else base[models]
            sub = sub[:, items]
            return np.stack([1.0 - sub, sub], axis=-1) if base is src.correct else sub

        if src.missing is not None:  # over the models that answered each item (no memo: the mask is not keyed)
            miss = src.missing if every else src.missing[models]
            self.scores_ = _disagreement_observed(outputs(), miss, self.selection, self.top_k)
            second = None
            if self.selection == "pds":
                second = _disagreement_observed(outputs(), miss, "jsd", self.top_k)
            pick = (lambda v: v) if self._answered is None else (lambda v: v[self._answered])
            tiebreak = None if second is None else pick(second)
            self._set_selected(self._select_answered(
                lambda n, g: select_top_k(pick(self.scores_), self.n_items, groups=g, rng=rng, tiebreak=tiebreak), src, groups))
            return
        key = (self.selection, self.top_k, models.tobytes())
        # the source outputs were validated when parsed (_fit_source) or when their ResponseMatrix was built: score
        # them without checking the whole cube again for every variant and seed
        self.scores_ = _memo(base, key, lambda: _disagreement(outputs(), self.selection, self.top_k))
        # Hard labels and 0/1 correctness give PDS few distinct values (binary correctness: 2), so most items
        # tie: break PDS ties by the JSD (vote entropy: balanced disagreement first), then at random. The JSD is
        # computed on the tied items only.
        second = None
        if self.selection == "pds":
            _, inv, counts = np.unique(self.scores_, return_inverse=True, return_counts=True)
            tied = np.flatnonzero(counts[inv.ravel()] > 1)
            if tied.size:
                second = np.zeros(src.n_items)
                second[tied] = _memo(base, ("jsd-ties", self.top_k, models.tobytes()),
                                     lambda: _disagreement(outputs(tied), "jsd", self.top_k))
        self._set_selected(select_top_k(self.scores_, self.n_items, groups=groups, rng=rng, tiebreak=second))

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
        check_positive_int(self.top_k, "top_k")
        check_positive_int(self.n_neighbors, "n_neighbors")
        src, scores = self._fit_source(source_outputs, source_scores, labels)
        if self.predictor == "knn" and self.n_neighbors > len(scores):
            raise ValueError(f"n_neighbors: {self.n_neighbors} neighbours requested but there are {len(scores)} source models")
        rng = check_rng(self.random_state, "random_state")
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
        # which item each signature column describes, and the column's mean over the source models that answered
        # that item: a missing entry (a source's or a target's) is imputed by it
        k = len(self.selected_)
        self._sig_item = (np.repeat(np.arange(k), self.n_classes_) if kind == "probabilities" else
                          self._vocab // self._key_base if kind == "predictions" else np.arange(k))
        if sel.missing is None:
            self._sig_fill = X.mean(axis=0)
        else:
            obs = ~sel.missing[:, self._sig_item]
            cnt = obs.sum(axis=0)
            self._sig_fill = np.where(cnt > 0, np.where(obs, X, 0.0).sum(axis=0) / np.maximum(cnt, 1), 0.0)
            X = self._impute_signature(X, sel.missing)
        if np.ptp(X, axis=0).max() == 0:
            raise ValueError(
                "source_outputs: every source model has the same signature on the selected items (e.g. all correct); "
                "the predictor has nothing to learn from"
            )
        self.pca_ = None
        if self.pca is not None:
            d = check_positive_int(self.pca, "pca")
            if d > min(X.shape):
                warnings.warn(
                    f"pca: {d} components requested but PCA allows at most min(n_source_models, signature length) = "
                    f"{min(X.shape)}; using {min(X.shape)}",
                    UserWarning,
                    stacklevel=2,
                )
                d = min(X.shape)
            self.pca_, X = _fit_pca(X, d, int(rng.integers(2**31 - 1)))
        self.predictor_ = make_predictor(
            self.predictor, random_state=rng, n_neighbors=self.n_neighbors, metric=self.metric, argname="predictor"
        )
        # predictions are clipped to the range of a [0, 1] score (accuracy); other scales are left as they are
        self._clip = (0.0, 1.0) if scores.min() >= 0 and scores.max() <= 1 else (-np.inf, np.inf)
        self.predictor_.fit(X, scores)
        return self

    def _impute_signature(self, X: np.ndarray, missing: np.ndarray | None) -> np.ndarray:
        return X if missing is None else np.where(missing[:, self._sig_item], self._sig_fill, X)

    def signatures(self, outputs: Any, *, items: Any = None) -> np.ndarray:
        """Signatures (after PCA) of models' outputs, shape (n_models, d); inputs as in :meth:`predict`."""
        check_is_fitted(self, "predictor_")
        o = self._target(outputs, items)
        X = self._impute_signature(self._signature(o, fit=False), o.missing)
        return X if self.pca_ is None else self.pca_.transform(X)

    def _predict(self, o: _Outputs) -> np.ndarray:
        X = self._impute_signature(self._signature(o, fit=False), o.missing)
        X = X if self.pca_ is None else self.pca_.transform(X)
        return np.clip(_predict_in_order(self.predictor_, X), *self._clip)
