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
aligned by model id). ``SearchResult.accuracy`` is then the estimated fraction of models answering each new item
    correctly (its easiness), and ``insert`` adds the new items to the per-model counts. Attributes ending in
    ``items`` refer to models here.
    """

    _axis = 1

    def _oriented(self, x: Any) -> Any:
        if isinstance(x, ResponseMatrix):
            x.require_binary("responses")
            return x.T  # keeps the model ids, by which the columns are then aligned
        if isinstance(x, pd.DataFrame):
            return x.T
        if isinstance(x, PackedBinaryMatrix):
            raise ValueError("responses: simulate() on a PackedBinaryMatrix of new items is not supported; pass it unpacked")
        return x.T

    def _labelled_oriented(self, x: Any) -> Any:
        # a ResponseMatrix / DataFrame is models × items everywhere in effstats: here the selected models are the
        # units, so it is transposed to (new items × selected models) and aligned by model id
        if isinstance(x, (ResponseMatrix, pd.DataFrame)):
            return x.T
        return x

    insert_samples = SortSearch.insert
