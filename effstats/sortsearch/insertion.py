"""``insert_D``: Sort & Search for new items, on the transposed cache (App. G of Prabhu, Udandarao et al.)."""
from __future__ import annotations

from typing import Any

import pandas as pd

from ..bitpack import PackedBinaryMatrix
from ..responses import ResponseMatrix
from .search import SortSearch

__all__ = ["SampleInserter"]


class SampleInserter(SortSearch):
    """Sort & Search for new items (``insert_D``): the same algorithm on the transposed cache.

    ``fit(responses)`` takes the usual (n_models, n_items) cache and orders the *models* by accuracy (best
    first); ``select(m')`` names the models to evaluate a new item on (model ids when fitted on a labelled
    matrix); ``predict`` takes their correctness on the new items, shape (n_new_items, m'), and predicts it for
    all models (a ResponseMatrix or DataFrame is given the usual way round, selected models × new items, and
    aligned by model id). ``SearchResult.accuracy`` is then the estimated fraction of models answering each new
    item correctly (its easiness), and ``insert`` adds the new items to the per-model counts. Attributes ending
    in ``items`` refer to models here.

    Parameters
    ----------
    sort : {"sum", "confidence", "recursive"}, default="sum"
        As for :class:`effstats.sortsearch.SortSearch`, over models; names in any case.
    sampling : {"uniform", "stratified", "random"}, default="uniform"
        Which models to evaluate, along the models' order; names in any case.
    depth : int, default=2
        Recursion depth for ``sort="recursive"``, at least 1.
    estimator : {"stratified", "difference"}, default="stratified"
        The easiness estimate from the evaluated models.
    missing : {"observed", "raise"}, default="observed"
        Cache matrices with missing cells, as for :class:`effstats.sortsearch.SortSearch`.
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator, default=None
        For ``sampling="stratified"`` / ``"random"``.

    Attributes
    ----------
    interval_kind : str
        As for :class:`effstats.sortsearch.SortSearch`, over models: ``"design"`` under ``sampling="stratified"``
        or ``"random"``, ``"systematic"`` under ``"uniform"``.
    order_ : ndarray of shape (n_models,), int
        Model indices, most accurate first.
    scores_ : ndarray of shape (n_models,)
        Per-model correct counts, updated by ``insert``.
    n_items_ : int
        Number of models (the units this estimator orders).
    n_models_ : int
        Number of items behind the counts.
    item_ids_ : Index or None
        Model ids when fitted on a ResponseMatrix or DataFrame.
    selected_ : ndarray of shape (budget,), int, or None
        Positions of the last selected models.

    See Also
    --------
    effstats.sortsearch.SortSearch : the same algorithm for new models (``insert_M``).

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.sortsearch import SampleInserter
    >>> rm = simulate_responses(40, 200, rng=0)
    >>> cache, new_items = rm.subset(items=range(150)), rm.subset(items=range(150, 200))
    >>> est = SampleInserter().fit(cache)
    >>> models = est.select(10)  # evaluate the new items on these 10 models only
    >>> res = est.predict(new_items.subset(models=list(models)))
    >>> res.accuracy[:3].round(2)  # estimated share of the 40 models right on each new item
    array([0.9, 0.6, 0.5])
    """


    _axis = 1

    def _oriented(self, x: Any) -> Any:
        if isinstance(x, ResponseMatrix):
            x.require_binary("responses")
            return x.T  # keeps the model ids, by which the columns are then aligned
        if isinstance(x, pd.DataFrame):
            return x.T
        if isinstance(x, PackedBinaryMatrix):
            raise ValueError("responses: simulate() on a PackedBinaryMatrix of new items is not supported; pass it "
                             "unpacked")
        return x.T

    def _labelled_oriented(self, x: Any) -> Any:
        # a ResponseMatrix / DataFrame is models × items everywhere in effstats: here the selected models are the
        # units, so it is transposed to (new items × selected models) and aligned by model id
        if isinstance(x, (ResponseMatrix, pd.DataFrame)):
            return x.T
        return x

    insert_samples = SortSearch.insert
