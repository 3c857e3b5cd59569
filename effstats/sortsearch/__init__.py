"""Sort & Search (Prabhu, Udandarao et al., "Efficient Lifelong Model Evaluation in an Era of Rapid Progress").

Given a cache ``A`` of binary correctness (sort models × items), *Sort* orders the items from easy to hard
(a permutation ``P``) and *Search* predicts a new model's correctness on all ``n`` items from ``n'`` evaluated
ones as the "ones then zeros" vector ``y = [1_k, 0_(n-k)]`` in that order (Sect. 3, App. D):

* :mod:`~effstats.sortsearch.sort` — :func:`sort_by_sum`, :func:`sort_by_confidence_sum`, :func:`recursive_sort`
  (row blocks: works on a bit-packed matrix without unpacking it), :func:`sort_objective`;
* :mod:`~effstats.sortsearch.search` — :func:`dp_search` (Theorem 3.1, a prefix sum), which sorted positions to
  evaluate (:func:`uniform_positions`, :func:`stratified_positions`, :func:`random_positions`), the
  :class:`SortSearch` estimator (``insert_M``) and its :class:`SearchResult`;
* :mod:`~effstats.sortsearch.estimate` — the design-based accuracy estimate from the evaluated items, with a
  standard error and confidence interval;
* :mod:`~effstats.sortsearch.insertion` — :class:`SampleInserter` (``insert_D``, new items);
* :mod:`~effstats.sortsearch.baselines` — :class:`CopyNearestExpand` and :class:`HybridSearch` (S&S corrected by
  the nearest source models, the mix cross-validated on the source models).

Which to use: for per-item predictions (which items a new model gets right), :class:`HybridSearch`: it matched or
beat CopyNearest&Expand and beat plain Sort & Search at every budget tried (see its docstring for the numbers);
for a model's accuracy, ``SearchResult.accuracy`` (the design-based estimate; ``HybridResult.accuracy`` is the
same one).

Inputs may be numpy arrays, :class:`~effstats.responses.ResponseMatrix`, DataFrames (models × item columns),
bit-packed :class:`~effstats.bitpack.PackedBinaryMatrix` (column sums computed on the packed bytes) or Dask
arrays (sums and searches run chunk by chunk; only 1-D results are brought to memory).

Conventions
-----------
* An *order* is an int array of item indices, easiest first. Ties (equal sums) keep the original item order
  (a stable sort), so results are reproducible; the paper's ``np.flip(np.argsort(...))`` reverses ties.
* A *threshold* ``k`` counts the items predicted correct: the first ``k`` items of the order.
* Among equally good thresholds DP-search returns the smallest.
* Labelled inputs are aligned by item id (fitted on arrays: integer ids are item positions, other ids are
  refused); plain arrays are positional and shape-checked, with the selected items in ascending item order
  (``select`` returns them so) or all items.

References
----------
Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
Evaluation in an Era of Rapid Progress. NeurIPS 2024, arXiv:2402.19472 (earlier version: "Lifelong Benchmarks:
Efficient Model Evaluation in an Era of Rapid Progress").
"""
from ._inputs import item_sums, model_sums
from .baselines import CopyNearestExpand, ExpandResult, HybridResult, HybridSearch
from .estimate import estimate_accuracy, korn_graubard_interval
from .insertion import SampleInserter
from .search import (
    SearchResult,
    SortSearch,
    dp_search,
    listing_uniform_positions,
    random_positions,
    stratified_positions,
    uniform_positions,
)
from .sort import recursive_sort, sort_by_confidence_sum, sort_by_sum, sort_objective

__all__ = [
    "item_sums",
    "model_sums",
    "sort_by_sum",
    "sort_by_confidence_sum",
    "recursive_sort",
    "sort_objective",
    "dp_search",
    "uniform_positions",
    "stratified_positions",
    "random_positions",
    "listing_uniform_positions",
    "estimate_accuracy",
    "korn_graubard_interval",
    "SearchResult",
    "SortSearch",
    "SampleInserter",
    "CopyNearestExpand",
    "ExpandResult",
    "HybridSearch",
    "HybridResult",
]
