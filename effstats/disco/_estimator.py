"""The DISCO estimator: disagreement-based selection, model signatures, a regressor on top."""
from __future__ import annotations

from typing import Any

import copy
import hashlib
import math
import warnings
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._results import ConfidenceInterval, check_confidence_level
from .._shared import _plain
from .._outputs import _item_groups, _Outputs, _quiet_missing
from .._subset import _SubsetEstimator
from .._subset_results import SubsetPrediction
from .._validation import check_array, check_option, check_positive_int, check_rng
from ..exceptions import check_is_fitted
from ._predictors import make_predictor
from ._selection import _disagreement, _disagreement_correct, _disagreement_observed, select_random, select_top_k


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
    one fit gives predictions that differ at 1e-16 from run to run, enough for near-tied target models to swap
    ranks. The trees are summed here in their order; prediction is a small part of a fit (the trees are still built
    on ``n_jobs`` threads).

    A single-output random forest regressor is summed by this loop, the forest's own arithmetic (``y += tree's
    prediction`` for each tree, then ``/= n_trees``, on the rows as the forest converts them) without a task and an
    input check per tree, which cost several times the trees' own predictions on a few hundred rows; any other
    estimator predicts with one job.
    """
    from sklearn.ensemble import RandomForestRegressor

    if type(est) is RandomForestRegressor and getattr(est, "n_outputs_", None) == 1 and hasattr(est, "estimators_"):
        try:
            Xf = est._validate_X_predict(X)
            y = np.zeros(Xf.shape[0], dtype=np.float64)
            for tree in est.estimators_:
                y += tree.tree_.predict(Xf)[:, 0]
            y /= len(est.estimators_)
            return y
        except (AttributeError, TypeError):  # a scikit-learn release without these private names: its own predict
            pass
    if getattr(est, "n_jobs", None) in (None, 1) or not hasattr(est, "estimators_"):
        return est.predict(X)
    one = copy.copy(est)  # shallow: shares the fitted trees; the caller's (possibly shared) estimator is untouched
    try:
        one.n_jobs = 1
    except AttributeError:  # a user's regressor whose n_jobs cannot be set: predict as it is
        return est.predict(X)
    return one.predict(X)


_PCA_CACHE: "OrderedDict[tuple, tuple]" = OrderedDict()  # (digest of X, d) -> (fitted PCA, PCA of X)
_PCA_CACHE_BYTES = 256e6


def _fit_pca(X: np.ndarray, d: int) -> tuple[Any, np.ndarray]:
    """``PCA(d, svd_solver="full").fit(X)`` and its transform of X, fitted once per (X, d).

    The full (exact, LAPACK) SVD, as the authors' code: scikit-learn's default ``svd_solver="auto"`` takes a
    randomized SVD for large signature matrices, whose components depend on its seed and move the estimates by up
    to about 0.01. The exact fit depends on X and d only: DISCO variants that differ in the predictor alone
    (kNN / RF / MLP / ... of Tables 1-3, Fig. 5 and the ImageNet section, or the same split with another target
    score) select the same items and share one SVD, a large part of a fit with reference BLAS. The cache is a
    byte-bounded LRU (components and transformed rows).
    """
    from sklearn.decomposition import PCA

    key = (X.shape, X.dtype.str, hashlib.sha1(np.ascontiguousarray(X).view(np.uint8)).hexdigest(), d)
    hit = _PCA_CACHE.get(key)
    if hit is not None:
        _PCA_CACHE.move_to_end(key)
    else:
        pca = PCA(n_components=d, svd_solver="full").fit(X)
        hit = _PCA_CACHE[key] = (pca, pca.transform(X))
        for a in (*vars(pca).values(), hit[1]):  # fresh arrays, shared by every fit on X: read-only
            if isinstance(a, np.ndarray):
                a.flags.writeable = False
        size = lambda v: v[0].components_.nbytes + v[1].nbytes  # noqa: E731
        total = sum(size(v) for v in _PCA_CACHE.values())
        while total > _PCA_CACHE_BYTES and len(_PCA_CACHE) > 1:
            total -= size(_PCA_CACHE.popitem(last=False)[1])
    # each fit its own PCA object (its arrays shared, read-only): one refitted leaves the cache and the others alone
    return copy.copy(hit[0]), hit[1]


_SELECTIONS = ("random", "pds", "jsd")


def _item_positions(selection: Any, src: _Outputs) -> Any:
    """A fixed selection as item positions: item ids (non-numeric, as Sort & Search's ``select`` returns on a
    ResponseMatrix) looked up among the source's; integers looked up as ids too where the source's item ids are
    integers other than its positions 0..n-1 in order (lm-eval's doc_ids), every one of them an id; anything else
    as given, checked as positions by the caller."""
    if isinstance(selection, (pd.Index, pd.Series)):
        selection = selection.to_numpy()
    arr = np.asarray(selection) if not isinstance(selection, np.ndarray) else selection
    if arr.ndim != 1 or not arr.size:
        return selection
    ids = src.item_ids
    if (arr.dtype.kind in "iu" and ids is not None and ids.dtype.kind in "iu"
            and not ids.equals(pd.RangeIndex(len(ids)))):
        pos = ids.get_indexer(arr) if ids.is_unique else np.full(arr.shape, -1)
        if (pos < 0).any():
            missing = [_plain(v) for v in arr[pos < 0][:5]]
            raise ValueError(f"selection: the source's item ids are integers other than its positions 0..{len(ids) - 1}"
                             f", so integers are read as item ids, and {int((pos < 0).sum())} of them are not among "
                             f"its items, e.g. {missing}; give the source's item ids (as SortSearch's select returns "
                             "them)")
        return pos
    if arr.dtype.kind not in "OUS":
        return selection
    if src.item_ids is None:
        raise ValueError(f"selection: item ids ({_plain(arr[0])!r}, ...) need a source with item ids (a "
                         "ResponseMatrix); for an array source give item positions (integers)")
    pos = src.item_ids.get_indexer(arr)
    if (pos < 0).any():
        missing = [_plain(v) for v in arr[pos < 0][:5]]
        raise ValueError(f"selection: {int((pos < 0).sum())} item id(s) not among the source's items, e.g. "
                         f"{missing}")
    return pos
_SIGNATURES = ("probabilities", "true_class", "predictions", "correctness")


def _check_pca(pca: Any) -> Any:
    """``pca``: "auto" (any case), None or a positive int; returns "auto", None or the int."""
    if pca is None:
        return None
    if isinstance(pca, str):
        if pca.casefold() == "auto":
            return "auto"
    elif not isinstance(pca, bool) and isinstance(pca, (int, np.integer)) and pca >= 1:
        return int(pca)
    raise ValueError(f"pca: expected 'auto', None or an integer >= 1, got {_plain(pca)!r}")


class DISCO(_SubsetEstimator):
    """DISCO: model signatures on a few items, and a regressor that maps them to full-benchmark scores.

    Rubinstein et al. (2025) select the items the source models disagree on most (predictive diversity score,
    PDS) and map a model's *signature*, its concatenated outputs on those items, to its full-benchmark score with
    a regressor fitted on the source models. A target model then needs outputs on the selected items only.

    The defaults are not Rubinstein et al.'s: random items, and a ridge regression of the *difference* between a model's
    score and its mean on the selected items. They are the setting that beats plain random items
    (:class:`effstats.disco.RandomDirect`) at 100 items on every benchmark effstats reads (ImageNet val, CIFAR-10,
    the digits benchmark, AlpacaEval, the per-class ImageNet leaderboard; ``benchmarks/disco_defaults.py``,
    ``figures/disco_defaults.csv``), which their own setting,
    ``DISCO(100, selection="pds", predictor="rf", estimate="signature", pca=256)``, does not.

    Parameters
    ----------
    n_items : int, default=100
        Number of selected items k (100 in Rubinstein et al. 2025), at most the number of items.
    selection : {"random", "pds", "jsd"} or array of shape (n_items,), default="random"
        Uniform random items, top-k by a disagreement score of the source models (PDS, Eq. 1 of Rubinstein et
        al. 2025, or the JSD), or a fixed item subset chosen elsewhere: item positions (integers), or, for a
        ResponseMatrix source, its item ids (e.g. the items ``SortSearch(...).fit(source).select(k)`` returns;
        where its ids are integers other than its positions 0..n-1 in order, integers are read as ids). On
        0/1 correctness (no probabilities or class ids) ``"pds"`` and ``"jsd"`` select the same items: an item's PDS
        is 1 when the source models disagree on it and 1/2 when they agree, its JSD is the entropy of their votes
        (positive exactly when they disagree), and PDS ties are broken by the JSD, so both rank by the JSD.
        They differ on class ids and probabilities.
    predictor : str or object, default="ridge"
        One of :data:`effstats.disco.PREDICTORS` (see :func:`effstats.disco.make_predictor`), or a scikit-learn
        regressor; ``"rf"`` is Rubinstein et al.'s default.
    estimate : {"difference", "signature"}, default="difference"
        ``"difference"``: a model's mean score on the selected items plus the predictor's estimate, from its
        signature, of the difference between its full-benchmark score and that mean (the model-assisted
        difference estimator of survey sampling, Särndal, Swensson & Wretman 1992, Sect. 6.3; with random items
        it corrects the direct estimate rather than replacing it). ``"signature"``: the predictor maps the
        signature to the score itself (Rubinstein et al. 2025). The difference needs each model's correctness or score
        on the selected items (labels with class ids or probabilities).
    signature : {"auto", "probabilities", "true_class", "predictions", "correctness"}, default="auto"
        What is concatenated into a model's signature: class probabilities (k·C values, Rubinstein et al.'s),
        the probability of the true class (k values, Anchor-conf's embedding), one-hot top-1 class ids
        (only the classes some source model predicted on the item get a column), or 0/1 correctness.
        ``auto`` takes probabilities, else class ids, else correctness.
    pca : "auto", int or None, default="auto"
        Reduce signatures to this many principal components; ``None`` keeps them whole. ``"auto"``: 256
        (Rubinstein et al.'s; their Table 2(d): PCA 64–256 ≫ none) or fewer when the pool is smaller: at most
        ``n_source_models − 1`` (centred signatures of M models span at most M − 1 directions) and the signature
        length. An explicit int above what PCA allows (``min(n_source_models, signature length)``) is clipped with
        a ``UserWarning``. The PCA is the exact (``svd_solver="full"``) one of the authors' code, which does not
        depend on ``random_state``.
    n_disagreement_models : int or None, default=None
        Compute the disagreement from this many randomly drawn source models (App. I: M = 100 on MMLU);
        ``None`` uses every source model. At least 2; a number above the pool size uses every source model.
    stratify : str, array of shape (n_items_total,), or None, default=None
        Item groups for stratified selection (a column of ``items`` when the source is a ResponseMatrix).
    top_k : int, default=1
        Ranks used for disagreement when the models publish class ids (1 = hard labels, 5 = top-5 variant); at
        most the ranks the class ids hold.
    n_neighbors : int, default=1
        k of the kNN predictor (App. I: 1), at most the number of source models.
    metric : {"cosine", "euclidean"}, default="cosine"
        Distance of the kNN predictor; the authors' code uses cosine distance. Cosine needs centred signatures
        (PCA centres them): on raw 0/1 correctness signatures (``pca=None``) it compares only the direction of
        the correct sets, not how many items are right, and predicts poorly; use ``"euclidean"`` there.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the random selection, the model subset, tie-breaking and the predictor. Items tied in
        disagreement (``"pds"``: then in the JSD) are ordered by a random permutation drawn from this stream, or
        seeded with 0 when ``random_state`` is None, so the selection is reproducible: with 0/1 correctness or
        hard labels hundreds of items tie at the top (877-1,600 items at the maximum in the paper's
        setting on public per-item data), and a top-100 among them is this permutation's first items.

    Attributes
    ----------
    interval_kind : str
        ``"conformal"`` (class attribute): the interval comes from the cross-validated residuals of the source
        models, so it holds for models like them, not necessarily for one outside their range.
    selected_ : int ndarray of shape (n_items,)
        Selected item positions.
    selected_ids_ : Index or None
    scores_ : ndarray of shape (n_items_total,) or None
        The disagreement of every item (None for random selection).
    disagreement_models_ : int ndarray
        Source models the disagreement was computed from.
    n_missing_ : int
        Missing cells in the source outputs.
    n_components_ : int or None
        Principal components kept (None without PCA).
    estimate_ : {"difference", "signature"}
        The estimate, spelt canonically.
    signature_kind_ : {"probabilities", "true_class", "predictions", "correctness"}
        What the signatures hold (``signature="auto"`` resolved).
    pca_ : sklearn.decomposition.PCA or None
        The fitted PCA of the source signatures.
    predictor_ : sklearn.base.BaseEstimator
        The fitted signature regressor.
    n_items_total_ : int
        Items in the source outputs.

    See Also
    --------
    effstats.disco.RandomDirect : the mean of the same random items, without a model.
    effstats.disco.AIPW : random items with a design-unbiased regression correction (valid for any target).
    effstats.disco.AnchorCorr : anchor points from clustering the source models' correctness.
    effstats.irt.TinyBenchmarks : anchor points with IRT (p-IRT, gp-IRT).
    effstats.disco.MethodChooser : picks among these by cross-validation over the source models.
    effstats.disco.pds : the disagreement score behind ``selection="pds"``.

    Notes
    -----
    Option names (``selection``, ``predictor``, ``estimate``, ``signature``, ``pca="auto"``, ``metric``) are
    matched in any case; the parameters keep what was given and the fitted estimator works with the canonical
    names (``estimate_``, ``signature_kind_``).

    Inputs: a :class:`~effstats.responses.ResponseMatrix`, a DataFrame (columns = item ids) or arrays. A 2-D
    array of bool, float or integer 0/1 values is each model's correctness (or graded score in [0, 1]) on each
    item, whatever its type: an integer matrix of 0/1 (what :func:`pandas.read_csv` returns) is correctness,
    not class ids. Integer arrays are class ids only together with ``labels=`` (the true class of each item).
    3-D float arrays are class probabilities.

    Prediction intervals (:meth:`effstats.disco.DISCO.predict_interval`): with ``estimate="difference"`` each model's
    interval is scaled by the standard error of its own mean on the selected items (normalised conformal intervals: the
    quantile of the cross-validated source residuals divided by the sources' standard errors, times the
    target's), so a model near 0 or 1 gets a narrower interval than one near 1/2; with ``"signature"`` the
    interval is the plain conformal one of every subset estimator.

    Missing cells (a ResponseMatrix's ``missing`` mask, NaN in a DataFrame or float array): the disagreement of
    an item is computed over the source models that answered it (PDS: the largest probability among them; JSD:
    their mean distribution and mean entropy), items no source model answered are never selected, a source
    model's score is its mean over the items it has outputs on (unless ``source_scores`` is given), and a
    missing entry of a signature, a source's or a target's, is imputed by the source models' observed mean of
    that signature column (for 0/1 correctness: the item's observed fraction correct). The direct part of the
    difference estimate is the mean over the observed selected items. ``n_missing_`` counts the
    missing source cells; a ``UserWarning`` reports them at fit, and one at predict names the selected items a
    target lacks.

    References
    ----------
    .. [1] Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
       Efficient Model Evaluation. arXiv:2510.07959.
    .. [2] Särndal, C.-E., Swensson, B. & Wretman, J. (1992). *Model Assisted Survey Sampling*. Springer.

    Examples
    --------
    Fit on 30 source models, predict 10 new models from their outputs on the 30 selected items:

    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import DISCO
    >>> rm = simulate_responses(40, 300, rng=0)
    >>> src, tgt = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    >>> est = DISCO(n_items=30, random_state=0).fit(src)
    >>> est.selected_.shape, est.estimate_, est.signature_kind_
    ((30,), 'difference', 'correctness')
    >>> est.predict(tgt)[:3].round(3)
    array([0.325, 0.42 , 0.568])
    >>> tgt.accuracy().to_numpy()[:3].round(3)  # the full-benchmark truth
    array([0.327, 0.463, 0.49 ])

    The paper's setting, with option names in any case:

    >>> paper = DISCO(n_items=30, selection="PDS", predictor="knn", estimate="signature", random_state=0).fit(src)
    >>> paper.predict(tgt)[:3].round(3)
    array([0.383, 0.587, 0.523])
    """

    def __init__(
        self,
        n_items: int = 100,
        selection: Any = "random",
        predictor: Any = "ridge",
        estimate: str = "difference",
        signature: str = "auto",
        pca: Any = "auto",
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
        self.estimate = estimate
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
            sel = check_array(_item_positions(self.selection, src), "selection", ndim=1, dtype=None)
            if (not np.issubdtype(sel.dtype, np.integer) or sel.min() < 0 or sel.max() >= src.n_items
                    or np.unique(sel).size != sel.size):
                raise ValueError(f"selection: expected distinct item positions in [0, {src.n_items - 1}]")
            if sel.size != self.n_items:
                raise ValueError(f"selection: {sel.size} items given but n_items={self.n_items}")
            self.scores_ = None
            self.disagreement_models_ = np.arange(m)
            self._set_selected(sel)
            return
        selection = check_option(self.selection, "selection", _SELECTIONS, ignore_case=True)
        if selection == "random":
            self.scores_ = None
            self.disagreement_models_ = np.arange(m)
            self._set_selected(self._select_answered(
                lambda n, g: select_random(n, self.n_items, groups=g, rng=rng), src, groups))
            return
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
            self.scores_ = _disagreement_observed(outputs(), miss, selection, self.top_k)
            second = None
            if selection == "pds":
                second = _disagreement_observed(outputs(), miss, "jsd", self.top_k)
            pick = (lambda v: v) if self._answered is None else (lambda v: v[self._answered])
            tiebreak = None if second is None else pick(second)
            self._set_selected(self._select_answered(
                lambda n, g: select_top_k(pick(self.scores_), self.n_items, groups=g, rng=self._tie_rng(rng),
                                          tiebreak=tiebreak), src, groups))
            return
        key = (selection, self.top_k, models.tobytes())

        def score(measure: str, items: Any = slice(None)) -> np.ndarray:
            # the source outputs were validated when parsed (_fit_source) or when their ResponseMatrix was built:
            # scored without checking the whole cube again for every variant and seed; correctness as its two
            # float64 planes, without the (M, N, 2) cube outputs() stacks (the same scores)
            if base is src.correct and base.dtype == np.float64:
                return _disagreement_correct((base if every else base[models])[:, items], measure)
            if base is src.correct:
                return _disagreement(outputs(items), measure, self.top_k)
            # probabilities or class ids scored from the source cube itself, without copying the models' or the
            # items' part of it first
            return _disagreement(base, measure, self.top_k, models=None if every else models,
                                 items=None if isinstance(items, slice) else items)

        self.scores_ = _memo(base, key, lambda: score(selection))
        # Hard labels and 0/1 correctness give PDS few distinct values (binary correctness: 2), so most items
        # tie: break PDS ties by the JSD (vote entropy: balanced disagreement first), then at random. The JSD is
        # computed on the tied items only.
        second = None
        if selection == "pds":
            _, inv, counts = np.unique(self.scores_, return_inverse=True, return_counts=True)
            tied = np.flatnonzero(counts[inv.ravel()] > 1)
            if tied.size:
                second = np.zeros(src.n_items)
                second[tied] = _memo(base, ("jsd-ties", self.top_k, models.tobytes()),
                                     lambda: score("jsd", tied))
        self._set_selected(select_top_k(self.scores_, self.n_items, groups=groups, rng=self._tie_rng(rng),
                                        tiebreak=second))

    def _tie_rng(self, rng: np.random.Generator) -> np.random.Generator:
        """The generator that orders items tied in disagreement (and in the JSD): the estimator's stream, or seed 0
        without ``random_state``, so that a selection is reproducible either way."""
        return rng if self.random_state is not None else np.random.default_rng(0)

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
                raise ValueError("target_outputs: the signature uses true-class probabilities; give probabilities and "
                                 "labels")
            return np.take_along_axis(o.proba, o.labels[None, :, None], axis=2)[..., 0]
        return o.correctness("target_outputs")

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "DISCO":
        """Select items from the source models and train the signature → score predictor.

        Parameters
        ----------
        source_outputs : ResponseMatrix, DataFrame or array
            Source models' outputs on all items: probabilities ``(M, N, C)``, class ids ``(M, N[, k])``
            (with ``labels``) or correctness ``(M, N)`` (bool, float, or integer 0/1).
        source_scores : array of shape (M,), optional
            What to predict (default: accuracy on all N items). Any per-model score works, e.g. the
            accuracy on a shifted test set.
        labels : int array of shape (N,), optional
            True classes, when ``source_outputs`` is an array of probabilities or class ids; an integer
            array given with ``labels`` is read as class ids.

        Returns
        -------
        self : DISCO
            The fitted estimator.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.disco import DISCO
        >>> rm = simulate_responses(30, 200, rng=1)
        >>> est = DISCO(n_items=20, selection="jsd", random_state=0).fit(rm)
        >>> len(est.selected_), est.n_components_
        (20, 20)
        """
        # option names in any case; the canonical spelling is what the fitted estimator works with
        self.estimate_ = check_option(self.estimate, "estimate", ("difference", "signature"), ignore_case=True)
        kind = check_option(self.signature, "signature", ("auto",) + _SIGNATURES, ignore_case=True)
        pca = _check_pca(self.pca)
        src, scores = self._fit_source(source_outputs, source_scores, labels)
        # one bound per argument, from the data: top_k up to the ranks the class ids hold, n_neighbors up to the
        # number of source models (kNN)
        ranks = None if src.pred is None else (src.pred.shape[2] if src.pred.ndim == 3 else 1)
        check_positive_int(self.top_k, "top_k", maximum=ranks)
        knn = isinstance(self.predictor, str) and self.predictor.casefold() == "knn"
        check_positive_int(self.n_neighbors, "n_neighbors", maximum=len(scores) if knn else None)
        if self.estimate_ == "difference" and src.correct is None and src.labels is None:
            raise ValueError(
                "estimate: 'difference' needs each model's correctness on the selected items; give labels with the "
                "class ids or probabilities, or use estimate='signature'"
            )
        rng = check_rng(self.random_state, "random_state")
        self._select(src, rng)
        if kind == "auto":
            kind = ("probabilities" if src.proba is not None else "predictions" if src.pred is not None
                    else "correctness")
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
        self.n_components_ = None
        if pca == "auto":  # the paper's 256, or what the pool allows without a warning
            d = max(1, min(256, X.shape[0] - 1, X.shape[1]))
            rng.integers(2**31 - 1)  # a draw reserved for the PCA (exact, unseeded): the predictor's seed follows
            self.pca_, X = _fit_pca(X, d)
            self.n_components_ = d
        elif pca is not None:
            d = pca
            if d > min(X.shape):
                warnings.warn(
                    f"pca: {d} components requested but PCA allows at most min(n_source_models, signature length) = "
                    f"{min(X.shape)}; using {min(X.shape)}",
                    UserWarning,
                    stacklevel=2,
                )
                d = min(X.shape)
            rng.integers(2**31 - 1)  # a draw reserved for the PCA (exact, unseeded): the predictor's seed follows
            self.pca_, X = _fit_pca(X, d)
            self.n_components_ = d
        self.predictor_ = make_predictor(
            self.predictor, random_state=rng, n_neighbors=self.n_neighbors, metric=self.metric, argname="predictor"
        )
        # predictions are clipped to the range of a [0, 1] score (accuracy); other scales are left as they are
        self._clip = (0.0, 1.0) if scores.min() >= 0 and scores.max() <= 1 else (-np.inf, np.inf)
        self.predictor_.fit(X,
                            scores - self._direct(sel, "source_outputs") if self.estimate_ == "difference" else scores)
        return self

    def _direct(self, o: _Outputs, name: str = "target_outputs") -> np.ndarray:
        """Each model's mean correctness (or score) on the selected items: the direct part of the difference
        estimate (0 with ``estimate="signature"``)."""
        if self.estimate_ != "difference":
            return np.zeros(o.n_models)
        return o.model_means(name)

    def _impute_signature(self, X: np.ndarray, missing: np.ndarray | None) -> np.ndarray:
        return X if missing is None else np.where(missing[:, self._sig_item], self._sig_fill, X)

    def signatures(self, outputs: Any, *, items: Any = None) -> np.ndarray:
        """Signatures (after PCA) of models' outputs on the selected items.

        Parameters
        ----------
        outputs : ResponseMatrix, DataFrame or array
            The models' outputs, as ``target_outputs`` of ``predict``.
        items : sequence, optional
            Item ids of the columns of an array ``outputs``.

        Returns
        -------
        ndarray
            Shape (n_models, d): ``d`` is ``n_components_`` with PCA, else the signature length.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.disco import DISCO
        >>> rm = simulate_responses(30, 200, rng=1)
        >>> est = DISCO(n_items=20, pca=5, random_state=0).fit(rm.subset(models=range(25)))
        >>> est.signatures(rm.subset(models=range(25, 30))).shape
        (5, 5)
        """
        check_is_fitted(self, "predictor_")
        o = self._target(outputs, items)
        X = self._impute_signature(self._signature(o, fit=False), o.missing)
        return X if self.pca_ is None else self.pca_.transform(X)

    def _predict(self, o: _Outputs) -> np.ndarray:
        X = self._impute_signature(self._signature(o, fit=False), o.missing)
        X = X if self.pca_ is None else self.pca_.transform(X)
        return np.clip(self._direct(o) + _predict_in_order(self.predictor_, X), *self._clip)

    def predict_interval(self, target_outputs: Any, *, items: Any = None, n_splits: int = 5) -> SubsetPrediction:
        """Predictions with cross-validated intervals (:class:`~effstats.disco.SubsetPrediction`).

        With ``estimate="difference"`` the intervals are normalised conformal ones: the absolute cross-validated
        residual of each source model is divided by the standard error of its mean on the selected items, and a
        target's interval is its prediction ± the conformal quantile of those ratios times its own standard
        error. Otherwise (``"signature"``) the plain conformal interval.

        Parameters
        ----------
        target_outputs : ResponseMatrix, DataFrame or array
            The targets' outputs, as in ``predict``.
        items : sequence, optional
            Item ids of the columns of an array ``target_outputs``.
        n_splits : int, default=5
            Folds of the source models for the cross-validated residuals, at least 2.

        Returns
        -------
        effstats.disco.SubsetPrediction
            ``statistic`` (the predictions) and ``confidence_interval(confidence_level)``.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.disco import DISCO
        >>> rm = simulate_responses(40, 300, rng=0)
        >>> src, tgt = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> res = DISCO(n_items=30, random_state=0).fit(src).predict_interval(tgt)
        >>> ci = res.confidence_interval(0.9)
        >>> bool((ci.low <= res.statistic).all() and (res.statistic <= ci.high).all())
        True
        """
        p = super().predict_interval(target_outputs, items=items, n_splits=n_splits)
        if self.estimate_ != "difference":
            return p
        src = self._source[0].take(self.selected_)
        ratio = p.residuals / _subset_se(src, self.n_items_total_)
        with warnings.catch_warnings():  # missing target cells were reported by the prediction above
            _quiet_missing()
            scale = _subset_se(self._target(target_outputs, items), self.n_items_total_)
        rms = float(np.sqrt(np.mean(ratio**2)))
        return _ScaledPrediction(p.statistic, rms * scale, "conformal", ratio, p.bounds, p.model_ids,
                                 n_missing=p.n_missing, n_missing_target=p.n_missing_target, scale=scale,
                                 out_of_range=p.out_of_range)


def _subset_se(o: _Outputs, n_total: int) -> np.ndarray:
    """Standard error of each model's mean on the selected items as a simple random sample of the ``n_total``,
    ``sqrt(s²/k · (1 − k/N))``, shape (n_models,), with ``s²`` shrunk towards 1/4 by two pseudo-items
    (``(k·v + 2·¼) / (k + 2)``, ``v`` the model's variance over its k observed items) so that a model right on
    every selected item keeps a positive scale."""
    y = o.correctness("target_outputs")
    if o.missing is None:
        k = np.full(y.shape[0], float(y.shape[1]))
        v = y.var(axis=1)
    else:
        obs = ~o.missing
        k = obs.sum(axis=1).astype(float)
        mean = np.where(obs, y, 0.0).sum(axis=1) / np.maximum(k, 1)
        v = np.where(obs, (y - mean[:, None]) ** 2, 0.0).sum(axis=1) / np.maximum(k, 1)
    s2 = (k * v + 0.5) / (k + 2)
    return np.sqrt(s2 / np.maximum(k, 1) * np.maximum(1 - k / n_total, 1.0 / n_total))


@dataclass(frozen=True)
class _ScaledPrediction(SubsetPrediction):
    """A :class:`effstats.disco.SubsetPrediction` whose conformal half-width is per target: the quantile of the source
    residuals
    divided by their scales (``residuals`` holds those ratios), times the target's ``scale``."""

    scale: np.ndarray | None = field(default=None, repr=False)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        level = check_confidence_level(confidence_level)
        r = np.sort(self.residuals)
        rank = math.ceil((len(r) + 1) * level)
        q = r[rank - 1] if rank <= len(r) else np.inf
        half = q * self.scale
        lo_b, hi_b = self.bounds
        return ConfidenceInterval(np.clip(self.statistic - half, lo_b, hi_b),
                                  np.clip(self.statistic + half, lo_b, hi_b))
