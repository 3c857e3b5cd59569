"""Sort & Search (Prabhu, Udandarao, Torr, Bethge, Bibi and Albanie, 2024): efficient lifelong model evaluation.

Given a cache ``A`` of binary correctness (sort models × items), *Sort* orders the items from easy to hard
(a permutation ``P``) and *Search* predicts a new model's correctness on all ``n`` items from ``n'`` evaluated
ones as the "ones then zeros" vector ``y = [1_k, 0_(n-k)]`` in that order (Sect. 3, App. D):

* sorting (module ``effstats.sortsearch.sort``) — :func:`effstats.sortsearch.sort_by_sum`,
  :func:`effstats.sortsearch.sort_by_confidence_sum`, :func:`effstats.sortsearch.recursive_sort` (row blocks:
  works on a bit-packed matrix without unpacking it), :func:`effstats.sortsearch.sort_objective`;
* searching (``effstats.sortsearch.search``) — :func:`effstats.sortsearch.dp_search` (Theorem 3.1, a prefix sum),
  which sorted positions to evaluate (:func:`effstats.sortsearch.uniform_positions`,
  :func:`effstats.sortsearch.stratified_positions`, :func:`effstats.sortsearch.random_positions`), the
  :class:`effstats.sortsearch.SortSearch` estimator (``insert_M``) and its :class:`effstats.sortsearch.SearchResult`;
* estimating (``effstats.sortsearch.estimate``) — the accuracy estimate from the evaluated items (design-based
  when they are drawn at random, ``sampling="stratified"`` or ``"random"``),
  with a standard error and a confidence interval (:func:`effstats.sortsearch.estimate_accuracy`,
  :func:`effstats.sortsearch.korn_graubard_interval`);
* new items (``effstats.sortsearch.insertion``) — :class:`effstats.sortsearch.SampleInserter` (``insert_D``);
* baselines (``effstats.sortsearch.baselines``) — :class:`effstats.sortsearch.CopyNearestExpand` and
  :class:`effstats.sortsearch.HybridSearch` (S&S corrected by the nearest source models, the mix cross-validated
  on the source models).

Which to use: for per-item predictions (which items a new model gets right),
:class:`effstats.sortsearch.HybridSearch`, the per-item predictor effstats recommends: in the comparisons of its
docstring it matches or beats CopyNearest&Expand and beats plain Sort & Search at every budget tried. For a
model's accuracy, ``SearchResult.accuracy`` (the estimate from the evaluated items, with an interval that holds
for every model under ``SortSearch(sampling="stratified")``; ``HybridResult.accuracy`` is that of the default,
``sampling="uniform"``, whose interval holds on average over models).

Inputs may be numpy arrays, :class:`effstats.responses.ResponseMatrix`, DataFrames (models × item columns),
bit-packed :class:`effstats.bitpack.PackedBinaryMatrix` (column sums computed on the packed bytes) or Dask
arrays (sums and searches run chunk by chunk; only 1-D results are brought to memory). Option names (``sort``,
``sampling``, ``estimator``, ``missing``, ``design``) are matched in any case.

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
Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
Progress").

Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
positive counts estimated from survey data. *Survey Methodology* 24(2), 193-201.

Examples
--------
>>> from effstats.datasets import simulate_responses
>>> from effstats.sortsearch import SortSearch
>>> rm = simulate_responses(40, 200, rng=0)
>>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
>>> res = SortSearch().fit(src).simulate(new, 20)
>>> float(res.accuracy.mean().round(3)), float(new.values.mean().round(3))
(0.455, 0.52)
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
from .sort import SORTS, recursive_sort, sort_by_confidence_sum, sort_by_sum, sort_objective

__all__ = [
    "item_sums",
    "model_sums",
    "SORTS",
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
