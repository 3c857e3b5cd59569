"""Sort & Search (Prabhu, Udandarao et al., "Efficient Lifelong Model Evaluation in an Era of Rapid Progress").

Given a cache ``A`` of binary correctness (sort models × items), *Sort* orders the items from easy to hard
(a permutation ``P``) and *Search* predicts a new model's correctness on all ``n`` items from ``n'`` evaluated
ones as the "ones then zeros" vector ``y = [1_k, 0_(n-k)]`` in that order (Sect. 3, App. D):

* :func:`sort_by_sum`, :func:`sort_by_confidence_sum`, :func:`recursive_sort` — optimise ``P`` given ``Y``;
* :func:`dp_search` — optimise ``Y`` given ``P``: the exact minimiser of ``||a P - y||_1`` (Theorem 3.1), by a
  prefix sum, vectorised over many models;
* :func:`uniform_positions`, :func:`random_positions` — which ``n'`` sorted positions to evaluate;
* :class:`SortSearch` (``insert_M``: new models; ``fit`` / ``select`` / ``predict``, ``evaluate(callable, budget)``,
  serial ``insert``, and ``simulate`` / ``budget_curve`` for experiments with known responses),
  :class:`SampleInserter` (``insert_D``: new items, on the transposed cache) and the :class:`CopyNearestExpand`
  baseline.

Inputs may be numpy arrays, :class:`~effstats.responses.ResponseMatrix`, bit-packed
:class:`~effstats.bitpack.PackedBinaryMatrix` (column sums computed on the packed bytes) or Dask arrays
(sums and searches run chunk by chunk; only 1-D results are brought to memory).

Conventions
-----------
* An *order* is an int array of item indices, easiest first. Ties (equal sums) keep the original item order
  (a stable sort), so results are reproducible; the paper's ``np.flip(np.argsort(...))`` reverses ties.
* A *threshold* ``k`` counts the items predicted correct: the first ``k`` items of the order.
* Among equally good thresholds DP-search returns the smallest.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from ._validation import check_array, check_binary, check_positive_int, check_rng, check_unit_interval
from .bitpack import PackedBinaryMatrix
from .responses import ResponseMatrix

__all__ = [
    "item_sums",
    "model_sums",
    "sort_by_sum",
    "sort_by_confidence_sum",
    "recursive_sort",
    "sort_objective",
    "dp_search",
    "uniform_positions",
    "random_positions",
    "listing_uniform_positions",
    "SearchResult",
    "SortSearch",
    "SampleInserter",
    "CopyNearestExpand",
    "ExpandResult",
]


# ---------------------------------------------------------------------------------------------- inputs
def _is_dask(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "dask"


def _binary(x: Any, name: str) -> Any:
    """A bool ndarray, a PackedBinaryMatrix or a (lazily checked) 2-D Dask array."""
    if isinstance(x, ResponseMatrix):
        return x.require_binary(name)
    if isinstance(x, PackedBinaryMatrix):
        return x
    if _is_dask(x):
        if x.ndim != 2 or 0 in x.shape:
            raise ValueError(f"{name}: expected a non-empty 2-D array, got shape {x.shape}")
        return x
    return check_binary(x, name, ndim=2)


def _dask_checked_sum(x: Any, axis: int, name: str) -> np.ndarray:
    """Sum of a Dask array along ``axis`` and the 0/1 check in one pass over the chunks."""
    import dask

    bad = ((x != 0) & (x != 1)).any()
    s, b = dask.compute(x.sum(axis=axis), bad)
    if b:
        raise ValueError(f"{name}: expected binary 0/1 values (found others or NaN)")
    return np.asarray(s, dtype=np.int64)


def item_sums(responses: Any, *, name: str = "responses") -> np.ndarray:
    """Number of models answering each item correctly.

    Parameters
    ----------
    responses : bool array (n_models, n_items), ResponseMatrix, PackedBinaryMatrix or Dask array

    Returns
    -------
    int64 array (n_items,)
    """
    return _binary_sums(responses, 0, name)


def model_sums(responses: Any, *, name: str = "responses") -> np.ndarray:
    """Number of items each model answers correctly, int64 array (n_models,)."""
    return _binary_sums(responses, 1, name)


def _binary_sums(responses: Any, axis: int, name: str) -> np.ndarray:
    a = _binary(responses, name)
    if isinstance(a, PackedBinaryMatrix):
        return a.col_sums() if axis == 0 else a.row_sums()
    if _is_dask(a):
        return _dask_checked_sum(a, axis, name)
    return a.sum(axis=axis, dtype=np.int64)


def _order_from_scores(scores: np.ndarray) -> np.ndarray:
    # descending score, ties in original index order (stable)
    return np.argsort(-np.asarray(scores), kind="stable")


def sort_by_sum(responses: Any) -> np.ndarray:
    """Algorithm 1 (Sorting by Sum): items by decreasing number of correct sort models.

    Parameters
    ----------
    responses : bool array (n_models, n_items), ResponseMatrix, PackedBinaryMatrix or Dask array

    Returns
    -------
    order : int array (n_items,)
        Item indices, easiest first; ties keep the original item order.
    """
    return _order_from_scores(item_sums(responses))


def _confidences(x: Any, name: str) -> Any:
    if isinstance(x, ResponseMatrix):
        return x.true_class_probability()
    if _is_dask(x):
        return x
    return check_unit_interval(x, name, ndim=2)


def _confidence_sums(x: Any, axis: int, name: str) -> np.ndarray:
    c = _confidences(x, name)
    if _is_dask(c):
        import dask

        s, lo, hi, nan = dask.compute(c.sum(axis=axis), c.min(), c.max(), np.isnan(c).any())
        if nan or lo < 0 or hi > 1:
            raise ValueError(f"{name}: expected true-class probabilities in [0, 1] without NaN")
        return np.asarray(s, float)
    return c.sum(axis=axis)


def sort_by_confidence_sum(confidences: Any) -> np.ndarray:
    """Algorithm 2 (Sorting by Confidence Sum): items by decreasing summed true-class probability.

    Parameters
    ----------
    confidences : float array (n_models, n_items) in [0, 1], a ResponseMatrix with ``probabilities``
        (its :meth:`~effstats.responses.ResponseMatrix.true_class_probability` is used) or a Dask array.

    Returns
    -------
    order : int array (n_items,)
    """
    return _order_from_scores(_confidence_sums(confidences, 0, "confidences"))


# ---------------------------------------------------------------------------------------------- search
def _prefix_dtype(n: int) -> type:
    return np.int16 if n < 2**15 else np.int32 if n < 2**31 else np.int64


def _pm1(r: np.ndarray) -> np.ndarray:
    """+1 / -1 int8 from bool (a view arithmetic: ~10x faster than np.where)."""
    r = np.ascontiguousarray(r, dtype=bool)
    return r.view(np.int8) * np.int8(2) - np.int8(1)


def _padded_prefix(b: np.ndarray) -> np.ndarray:
    """``C(k) = Σ_{j<k} (2 b_j − 1)`` for k = 0..n, shape (rows, n + 1), of sorted bool rows ``b`` (rows, n).

    Threshold k errs on ``ones − C(k)`` items, so the DP-search threshold is the first arg-max of C, with
    C(0) = 0 (predict all wrong) competing with C(1..n).
    """
    n = b.shape[1]
    dt = _prefix_dtype(n)
    c = np.empty((b.shape[0], n + 1), dt)  # np.empty + one zero column: np.zeros costs ~40% more here
    c[:, 0] = 0
    np.cumsum(_pm1(b), axis=1, dtype=dt, out=c[:, 1:])
    return c


def _dp_rows(r: np.ndarray) -> np.ndarray:
    """Thresholds for bool rows already in sorted order, shape (k, n) -> (k,)."""
    return _padded_prefix(r).argmax(axis=1).astype(np.int64)


def _dp_rows_and_errors(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DP-search thresholds (rows,) of sorted bool rows ``b`` and the Hamming error of each, int64."""
    c = _padded_prefix(b)
    k = c.argmax(axis=1)
    return k.astype(np.int64), b.sum(axis=1, dtype=np.int64) - c[np.arange(b.shape[0]), k]


def dp_search(sorted_responses: Any) -> np.ndarray | int:
    """DP-search (Theorem 3.1): the best "ones then zeros" prediction for responses in sorted order.

    For a row ``b`` (already permuted easiest first) the error of ``y = [1_k, 0_(n-k)]`` is
    ``|b| - C(k)`` with ``C(k) = sum_{j<k} (2 b_j - 1)``, so the exact global minimiser is ``argmax_k C(k)``
    over ``k = 0..n``, found with one prefix sum (O(n)). Ties go to the smallest ``k``.

    Parameters
    ----------
    sorted_responses : bool array (n,) or (n_models, n), or a 2-D Dask array (chunked by rows)

    Returns
    -------
    k : int, or int array (n_models,)
        Number of leading items predicted correct (the paper's threshold fraction is ``k / n``).
    """
    if _is_dask(sorted_responses):
        x = sorted_responses
        if x.ndim != 2 or 0 in x.shape:
            raise ValueError(f"sorted_responses: expected a non-empty 2-D array, got shape {x.shape}")
        x = x.rechunk({1: -1})

        def block(b: np.ndarray) -> np.ndarray:
            return _dp_rows(check_binary(b, "sorted_responses", ndim=2))

        return x.map_blocks(block, drop_axis=1, dtype=np.int64).compute()
    r = check_binary(sorted_responses, "sorted_responses", ndim=(1, 2))
    if r.ndim == 1:
        return int(_dp_rows(r[None])[0])
    return _dp_rows(r)


def sort_objective(responses: Any, order: np.ndarray) -> int:
    """``min_Y ||A P - Y||_1`` for a given order: total error of the DP-optimal thresholds of every row."""
    a = _binary(responses, "responses")
    a = a.to_dense() if isinstance(a, PackedBinaryMatrix) else np.asarray(a)
    return int(_dp_rows_and_errors(a[:, _check_order(order, a.shape[1])])[1].sum())


def _check_order(order: Any, n: int) -> np.ndarray:
    o = check_array(order, "order", ndim=1, dtype=None, shape=(n,))
    if not np.issubdtype(o.dtype, np.integer) or not np.array_equal(np.sort(o), np.arange(n)):
        raise ValueError(f"order: expected a permutation of 0..{n - 1}")
    return o.astype(np.int64)


def recursive_sort(responses: Any, depth: int = 2, *, return_history: bool = False) -> Any:
    """Algorithm 3 (Recursive Sorting by Sum): re-order tied items by alternating with DP-search.

    Step 0 is :func:`sort_by_sum`. Each further step (``depth - 1`` of them) finds every sort model's
    DP-search threshold and, inside each bin of items tied so far, re-sorts the items by how many of the
    models *whose threshold falls inside that bin* answer them correctly (other models predict the whole
    bin alike, so the order inside it cannot change their error); ties stay in the current order. A bin's new
    order is kept only if it does not increase the error at the current thresholds, and DP-search can only
    lower it further, so :func:`sort_objective` never increases from one step to the next. Bins are then
    refined by the new sub-sums, so the next step works on the remaining ties.

    Parameters
    ----------
    responses : bool array (n_models, n_items), ResponseMatrix or PackedBinaryMatrix (unpacked: dense memory)
    depth : int >= 1
        1 is Sorting by Sum; the paper's ``two_stage_sort_by_sum`` is depth 2.
    return_history : bool
        Also return the objective after each step (non-increasing).

    Returns
    -------
    order : int array (n_items,), and with ``return_history`` a list of ints of length ``depth``.
    """
    depth = check_positive_int(depth, "depth")
    a = _binary(responses, "responses")
    if _is_dask(a):
        raise ValueError("responses: recursive_sort needs the matrix in memory; pass a numpy array or ResponseMatrix")
    a = a.to_dense() if isinstance(a, PackedBinaryMatrix) else np.asarray(a)
    n = a.shape[1]
    sums = a.sum(axis=0, dtype=np.int64)
    order = _order_from_scores(sums)
    b = a[:, order]
    # group id of each sorted position: runs of equal keys
    group = np.concatenate([[0], np.cumsum(sums[order][1:] != sums[order][:-1])])
    k, err = _dp_rows_and_errors(b)
    history = [int(err.sum())]
    pos = np.arange(n)
    for _ in range(depth - 1):
        kk = np.minimum(k, n - 1)
        # a model "cuts" a bin when its threshold lies strictly inside it
        cuts = (k > 0) & (k < n) & (group[kk] == group[np.maximum(k - 1, 0)])
        mgroup = np.where(cuts, group[kk], -1)
        inbin = group[None, :] == mgroup[:, None]  # (models, positions)
        b_in = b & inbin
        sub = b_in.sum(axis=0)
        # new order inside every bin: by group, then sub-sum descending, then current position
        perm = np.lexsort((pos, -sub, group))
        b_new = b[:, perm]
        # error change of each bin at the current thresholds: only cutting models contribute
        left = pos[None, :] < k[:, None]
        old_ones = (b_in & left).sum(axis=1)
        new_ones = (b_new & inbin & left).sum(axis=1)  # perm keeps bins in place, so inbin is unchanged
        delta = np.bincount(group[kk][cuts], weights=-2.0 * (new_ones - old_ones)[cuts], minlength=group[-1] + 1)
        reject = delta[group] > 0
        perm = np.where(reject, pos, perm)
        sub_kept = np.where(reject, 0, sub[perm])
        order = order[perm]
        b = b[:, perm] if reject.any() else b_new
        new_key = np.stack([group, sub_kept])
        change = np.any(new_key[:, 1:] != new_key[:, :-1], axis=0)
        group = np.concatenate([[0], np.cumsum(change)])
        k, err = _dp_rows_and_errors(b)
        history.append(int(err.sum()))
    return (order, history) if return_history else order


# ---------------------------------------------------------------------------------------------- sampling
def _check_budget(budget: Any, n: int, name: str = "budget") -> int:
    if isinstance(budget, (int, np.integer)) and not isinstance(budget, bool) and budget > n:
        raise ValueError(f"{name}: {budget} exceeds the {n} available; expected an integer in [1, {n}]")
    return check_positive_int(budget, name, maximum=n)


def _item_indices(items: Any, selected: np.ndarray | None, n_items: int) -> np.ndarray:
    """Validated item indices (n_sel,): ``items``, or the estimator's last selection when None."""
    if items is None:
        if selected is None:
            raise ValueError("items: no selection yet; call select(budget) or pass items")
        items = selected
    it = check_array(items, "items", ndim=1, dtype=None)
    if not np.issubdtype(it.dtype, np.integer) or it.min() < 0 or it.max() >= n_items:
        raise ValueError(f"items: expected integer item indices in [0, {n_items - 1}]")
    return it


def _selected_responses(responses: Any, n_sel: int) -> np.ndarray:
    """New models' responses on the selected items as bool (n_models, n_sel); a 1-D input is one model."""
    if isinstance(responses, ResponseMatrix):
        responses = responses.require_binary("responses")
    if _is_dask(responses):
        # (n_models, budget) on the selected items is small by design: bring it to memory
        responses = responses.compute()
    r = check_binary(responses, "responses", ndim=(1, 2))
    r = r[None, :] if r.ndim == 1 else r
    if r.shape[1] != n_sel:
        raise ValueError(f"responses: expected shape (n_models, {n_sel}) for the {n_sel} selected items, got {tuple(r.shape)}")
    return r


def uniform_positions(n: int, budget: int) -> np.ndarray:
    """``budget`` sorted positions spread evenly over the whole ranked list of ``n`` items.

    Position ``j`` is the centre of the ``j``-th of ``budget`` equal cells, ``floor((j + 1/2) n / budget)``:
    exactly ``budget`` distinct positions for every ``1 <= budget <= n``, from the easiest cell to the hardest,
    and all ``n`` positions at ``budget = n``. (The paper's listing, :func:`listing_uniform_positions`, steps by
    ``n // budget`` from 0 and so returns the wrong count and, above ``n / 2``, only the easiest items.)

    Returns
    -------
    int64 array (budget,), increasing.
    """
    n = check_positive_int(n, "n")
    budget = _check_budget(budget, n)
    j = np.arange(budget, dtype=np.int64)
    return ((2 * j + 1) * n) // (2 * budget)


def random_positions(n: int, budget: int, rng: Any = None) -> np.ndarray:
    """``budget`` distinct positions drawn uniformly at random without replacement, increasing."""
    n = check_positive_int(n, "n")
    budget = _check_budget(budget, n)
    return np.sort(check_rng(rng).choice(n, size=budget, replace=False)).astype(np.int64)


def listing_uniform_positions(n: int, budget: int) -> np.ndarray:
    """The paper's App. D ``uniform_sampling`` verbatim (``np.arange(0, n, n // budget)[1:]``), for comparison only."""
    n = check_positive_int(n, "n")
    budget = _check_budget(budget, n)
    return np.arange(0, n, n // budget)[1:]


def _cell_boundaries(positions: np.ndarray, n: int) -> np.ndarray:
    """Where a threshold over the sampled positions lands in the full list: halfway between neighbours.

    ``t`` sampled items predicted correct -> ``boundaries[t]`` items predicted correct, with 0 -> 0 and all -> n.
    For uniform positions this is ``~ t n / budget`` (the paper's fraction extrapolation); at ``budget = n`` it
    is exactly ``t``.
    """
    b = np.empty(len(positions) + 1, np.int64)
    b[0], b[-1] = 0, n
    b[1:-1] = (positions[:-1] + 1 + positions[1:]) // 2
    return b


# ---------------------------------------------------------------------------------------------- results
def _take_columns(x: Any, cols: np.ndarray, name: str) -> Any:
    """Columns ``cols`` of a full matrix as a bool ndarray (or a Dask array)."""
    a = _binary(x, name)
    if isinstance(a, PackedBinaryMatrix):
        return a.take_columns(cols)
    if _is_dask(a):
        # increasing columns keep Dask's chunks; the (n_models, budget) result is small enough for memory
        srt = np.argsort(cols, kind="stable")
        sub = np.empty(srt.shape, np.int64)
        sub[srt] = np.arange(len(cols))
        return check_binary(a[:, cols[srt]].compute(), name)[:, sub]
    return a[:, cols]


def _sorted_row_blocks(x: Any, order: np.ndarray, name: str, max_cells: int = 2**25):
    """Yield (start, bool rows permuted by ``order``) from an ndarray / ResponseMatrix / packed / Dask matrix."""
    a = _binary(x, name)
    n_rows, n = a.shape
    if n != len(order):
        raise ValueError(f"{name}: expected {len(order)} items (columns), got {n}")
    step = max(1, max_cells // n)
    if isinstance(a, PackedBinaryMatrix):
        for s, blk in a.row_blocks(step):
            yield s, blk[:, order]
        return
    for s in range(0, n_rows, step):
        blk = a[s : s + step]
        if _is_dask(blk):
            blk = check_binary(blk.compute(), name)
        yield s, blk[:, order]


@dataclass(frozen=True)
class SearchResult:
    """Sort & Search predictions for ``n_models`` new models (or new items, for ``insert_D``).

    Attributes
    ----------
    thresholds : int array (n_models,)
        ``k``: the first ``k`` items of ``order`` are predicted correct, the rest wrong.
    sample_thresholds : int array (n_models,)
        DP-search thresholds over the evaluated items (``0..budget``).
    order : int array (n_items,)
        The sort order (easiest first) the predictions follow.
    positions : int array (budget,)
        Sorted positions of the evaluated items.
    """

    thresholds: np.ndarray
    sample_thresholds: np.ndarray
    order: np.ndarray = field(repr=False)
    positions: np.ndarray = field(repr=False)

    @property
    def n_items(self) -> int:
        return len(self.order)

    @property
    def budget(self) -> int:
        return len(self.positions)

    @property
    def items(self) -> np.ndarray:
        """Original indices of the evaluated items, in sorted order."""
        return self.order[self.positions]

    @property
    def accuracy(self) -> np.ndarray:
        """Estimated accuracy ``k / n`` per model, float array (n_models,)."""
        return self.thresholds / self.n_items

    def correctness(self, rows: Any = None) -> np.ndarray:
        """Predicted per-item correctness in the original item order, bool (n_rows, n_items).

        ``rows`` selects models (positions); materialising all rows costs ``n_models * n_items`` bytes.
        """
        k = self.thresholds if rows is None else self.thresholds[np.asarray(rows)]
        k = np.atleast_1d(k)
        out = np.empty((len(k), self.n_items), bool)
        out[:, self.order] = np.arange(self.n_items)[None, :] < k[:, None]
        return out

    def evaluate(self, true_responses: Any) -> pd.DataFrame:
        """Sample-level metrics against the full true responses, without materialising the predictions.

        Parameters
        ----------
        true_responses : bool array (n_models, n_items), ResponseMatrix, PackedBinaryMatrix or Dask array

        Returns
        -------
        DataFrame, one row per model: ``mae`` (E, Eq. 2), ``e_agg``, ``kappa`` (Eq. 4), ``aleatoric``
        (E(a, y*), y* = DP-search on all n items), ``epistemic`` (||y* - y|| / n), ``kappa_aleatoric``,
        ``kappa_epistemic``, ``accuracy`` (estimated), ``accuracy_true``, ``best_threshold`` (k*).
        """
        return _evaluate_thresholds(true_responses, self.order, self.thresholds[None, :])[0]


def _evaluate_thresholds(true_responses: Any, order: np.ndarray, K: np.ndarray) -> list[pd.DataFrame]:
    """Metrics of threshold predictions ``K`` (n_sets, n_models) against the true responses in one pass over them.

    Each row block of the truth is permuted and prefix-summed once, then read at every set of thresholds.
    """
    from .metrics import _kappa_from_rates

    n = len(order)
    n_models = K.shape[1]
    shape = tuple(true_responses.shape) if hasattr(true_responses, "shape") else np.shape(true_responses)
    if len(shape) != 2 or shape[0] != n_models:
        raise ValueError(f"true_responses: expected shape ({n_models}, {n}), got {shape}")
    parts = [_threshold_stats(blk, K[:, s : s + blk.shape[0]]) for s, blk in _sorted_row_blocks(true_responses, order, "true_responses")]
    ones, best, err_best = (np.concatenate([p[i] for p in parts]) for i in range(3))
    errs = np.concatenate([p[3] for p in parts], axis=1)
    pa, ps, ale = ones / n, best / n, err_best / n
    out = []
    for k, err in zip(K, errs):
        py, mae = k / n, err / n
        epi = np.abs(k - best) / n
        out.append(
            pd.DataFrame(
                {
                    "mae": mae,
                    "e_agg": np.abs(k - ones) / n,
                    "kappa": _kappa_from_rates(mae, pa, py),
                    "aleatoric": ale,
                    "epistemic": epi,
                    "kappa_aleatoric": _kappa_from_rates(ale, pa, ps),
                    "kappa_epistemic": _kappa_from_rates(epi, ps, py),
                    "accuracy": py,
                    "accuracy_true": pa,
                    "best_threshold": best,
                }
            )
        )
    return out


def _threshold_stats(b: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per sorted row of ``b`` (rows, n): number of ones, DP-optimal threshold, its error, and the error at every
    threshold set ``K`` (n_sets, rows) -> (n_sets, rows)."""
    c = _padded_prefix(b)
    ones = b.sum(axis=1, dtype=np.int64)
    rows = np.arange(b.shape[0])
    best = c.argmax(axis=1)
    return ones, best.astype(np.int64), ones - c[rows, best], ones[None, :] - c[rows[None, :], K]


# ---------------------------------------------------------------------------------------------- estimators
_SORTS = ("sum", "confidence", "recursive")
_SAMPLINGS = ("uniform", "random")


class SortSearch(BaseEstimator):
    """Sort & Search for new models (``insert_M``), scikit-learn style.

    ``fit(sort_responses)`` learns the item order; ``select(budget)`` names the items to evaluate a new model
    on; ``predict(responses_on_selected)`` returns per-item predicted correctness and estimated accuracy for one
    or many new models (:class:`SearchResult`). ``evaluate(fn, budget)`` runs the whole protocol with a callable
    that evaluates a real model on the requested items only.

    Parameters
    ----------
    sort : {"sum", "confidence", "recursive"}
        Algorithms 1, 2 and 3 of the paper. ``"confidence"`` needs true-class probabilities.
    sampling : {"uniform", "random"}
    depth : int
        Recursion depth for ``sort="recursive"`` (2 = the paper's two-stage sort).
    random_state : None, int or Generator
        For ``sampling="random"``.

    Attributes
    ----------
    order_ : int array (n_items,)
        Item indices easiest first.
    scores_ : array (n_items,)
        Per-item sums (correct counts, or summed confidences), updated by :meth:`insert`.
    rank_ : int array (n_items,)
        Position of each item in ``order_``.
    n_items_, n_models_ : int
    item_ids_ : Index or None
        Item ids when fitted on a ResponseMatrix.
    """

    _axis = 0  # sums over models -> one score per item

    def __init__(self, sort: str = "sum", sampling: str = "uniform", depth: int = 2, random_state: Any = None) -> None:
        self.sort = sort
        self.sampling = sampling
        self.depth = depth
        self.random_state = random_state

    # ---------------------------------------------------------------- fit
    def _oriented(self, x: Any) -> Any:
        return x

    def fit(self, responses: Any, y: Any = None) -> "SortSearch":
        """Learn the item order from the sort models' responses.

        Parameters
        ----------
        responses : bool array (n_models, n_items), ResponseMatrix, PackedBinaryMatrix or Dask array.
            With ``sort="confidence"``: a ResponseMatrix with probabilities or true-class probabilities
            (n_models, n_items) in [0, 1].
        """
        if self.sort not in _SORTS:
            raise ValueError(f"sort: expected one of {_SORTS}, got {self.sort!r}")
        if self.sampling not in _SAMPLINGS:
            raise ValueError(f"sampling: expected one of {_SAMPLINGS}, got {self.sampling!r}")
        self._rng = check_rng(self.random_state)
        ax = self._axis
        if self.sort == "confidence":
            scores = _confidence_sums(responses, ax, "responses")
            order = _order_from_scores(scores)
        elif self.sort == "sum":
            scores = _binary_sums(responses, ax, "responses")
            order = _order_from_scores(scores)
        else:
            a = _binary(responses, "responses")
            if _is_dask(a):
                raise ValueError("responses: sort='recursive' needs the matrix in memory, not a Dask array")
            a = a.to_dense() if isinstance(a, PackedBinaryMatrix) else a
            a = a if ax == 0 else a.T
            order = recursive_sort(a, self.depth)
            scores = a.sum(axis=0, dtype=np.int64)
        shape = responses.shape if hasattr(responses, "shape") else np.shape(responses)
        self.n_models_, self.n_items_ = (shape[0], shape[1]) if ax == 0 else (shape[1], shape[0])
        self.order_ = np.asarray(order, np.int64)
        self.scores_ = np.asarray(scores)
        self.rank_ = np.empty_like(self.order_)
        self.rank_[self.order_] = np.arange(self.n_items_)
        ids = None
        if isinstance(responses, ResponseMatrix):
            ids = responses.item_ids if ax == 0 else responses.model_ids
        self.item_ids_ = ids
        self.selected_ = None
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "order_"):
            raise ValueError("SortSearch: call fit(responses) first")

    # ---------------------------------------------------------------- select / predict
    def select(self, budget: int) -> np.ndarray:
        """Indices (original order) of the ``budget`` items to evaluate, easiest first.

        Remembered as ``selected_`` for :meth:`predict`. ``1 <= budget <= n_items``.
        """
        self._check_fitted()
        if self.sampling == "uniform":
            pos = uniform_positions(self.n_items_, budget)
        else:
            pos = random_positions(self.n_items_, budget, self._rng)
        self.selected_ = self.order_[pos]
        return self.selected_.copy()

    def _positions(self, items: Any) -> np.ndarray:
        it = _item_indices(items, self.selected_, self.n_items_)
        if len(np.unique(it)) != len(it):
            raise ValueError("items: indices must be distinct")
        return self.rank_[it]

    def predict(self, responses: Any, items: Any = None) -> SearchResult:
        """Predict correctness on all items from responses on the selected ones.

        Parameters
        ----------
        responses : bool array (budget,) or (n_models, budget), ResponseMatrix or Dask array
            Columns in the order of ``items`` (a Dask array is computed: it is only n_models × budget).
        items : int array (budget,), optional
            Item indices the columns refer to (default: the last :meth:`select`); any distinct items work.

        Returns
        -------
        SearchResult
        """
        self._check_fitted()
        pos = self._positions(items)
        r = _selected_responses(responses, len(pos))
        if np.any(np.diff(pos) < 0):  # columns must follow the sort order (select() already does)
            srt = np.argsort(pos, kind="stable")
            r = r[:, srt]
            pos = pos[srt]
        t = np.atleast_1d(dp_search(r))
        k = _cell_boundaries(pos, self.n_items_)[t]
        return SearchResult(thresholds=k, sample_thresholds=t, order=self.order_.copy(), positions=pos)

    def evaluate(self, evaluate_fn: Callable[[np.ndarray], Any], budget: int) -> SearchResult:
        """Select ``budget`` items, call ``evaluate_fn(items)`` once, and predict.

        ``evaluate_fn`` receives the int array of item indices (original order) and returns the correctness of one
        model, shape (budget,), or of several, shape (n_models, budget); only those items are ever evaluated.
        """
        if not callable(evaluate_fn):
            raise ValueError(f"evaluate_fn: expected a callable items -> correctness, got {type(evaluate_fn).__name__}")
        items = self.select(budget)
        return self.predict(evaluate_fn(items.copy()), items)

    def simulate(self, responses: Any, budget: int) -> SearchResult:
        """The protocol on models whose full responses are known (experiments): select, take those columns, predict.

        ``responses`` is the full (n_models, n_items) matrix of the new models (ndarray, ResponseMatrix,
        PackedBinaryMatrix or Dask array); only the selected columns are read.
        """
        self._check_fitted()
        return self._simulate(_binary(self._oriented(responses), "responses"), budget)

    def _simulate(self, a: Any, budget: int) -> SearchResult:
        """:meth:`simulate` on an already checked, oriented matrix."""
        if a.shape[1] != self.n_items_:
            raise ValueError(f"responses: expected {self.n_items_} items (columns), got {a.shape[1]}")
        items = self.select(budget)
        return self.predict(_take_columns(a, items, "responses"), items)

    def budget_curve(self, responses: Any, budgets: Any) -> pd.DataFrame:
        """:meth:`simulate` at every budget and its metrics, reading the full truth once (experiments).

        Parameters
        ----------
        responses : full (n_models, n_items) responses of the new models (any supported input type)
        budgets : sequence of int in [1, n_items]

        Returns
        -------
        DataFrame with columns ``budget``, ``model`` (row position) and those of :meth:`SearchResult.evaluate`,
        one row per budget × model.
        """
        self._check_fitted()
        budgets = [_check_budget(b, self.n_items_, "budgets") for b in np.atleast_1d(budgets).tolist()]
        a = _binary(self._oriented(responses), "responses")  # checked once, not once per budget
        res = [self._simulate(a, b) for b in budgets]
        K = np.stack([r.thresholds for r in res])
        frames = _evaluate_thresholds(a, self.order_, K)
        return pd.concat([f.assign(budget=b, model=np.arange(len(f))) for b, f in zip(budgets, frames)], ignore_index=True)

    def insert(self, responses: Any, items: Any = None) -> SearchResult:
        """``insert_M`` without re-sorting: predict, then add the predictions to ``scores_``.

        Predictions are "ones then zeros" in the current order, so adding them keeps the scores non-increasing
        along ``order_`` and the order is unchanged (App. G): serial insertions do not accumulate error.
        """
        res = self.predict(responses, items)
        # models predicting position p correct: those with threshold > p
        add = np.cumsum(np.bincount(res.thresholds, minlength=self.n_items_ + 1)[::-1])[::-1][1:]
        self.scores_ = self.scores_ + add[self.rank_]
        self.n_models_ += len(res.thresholds)
        return res

    insert_models = insert


class SampleInserter(SortSearch):
    """Sort & Search for new items (``insert_D``): the same algorithm on the transposed cache.

    ``fit(responses)`` takes the usual (n_models, n_items) cache and orders the *models* by accuracy (best
    first); ``select(m')`` names the models to evaluate a new item on; ``predict`` takes their correctness on
    the new items, shape (n_new_items, m'), and predicts it for all models. ``SearchResult.accuracy`` is then the
    estimated fraction of models answering each new item correctly (its easiness), and ``insert`` adds the new
    items to the per-model counts. Attributes ending in ``items`` refer to models here.
    """

    _axis = 1

    def _oriented(self, x: Any) -> Any:
        if isinstance(x, ResponseMatrix):
            return x.require_binary("responses").T
        if isinstance(x, PackedBinaryMatrix):
            raise ValueError("responses: simulate() on a PackedBinaryMatrix of new items is not supported; pass it unpacked")
        return x.T

    insert_samples = SortSearch.insert


# ---------------------------------------------------------------------------------------------- baseline
@dataclass(frozen=True)
class ExpandResult:
    """CopyNearest&Expand predictions: observed on the evaluated items, copied from the nearest sort model elsewhere.

    Attributes
    ----------
    items : int array (budget,)
    observed : bool array (n_models, budget)
    nearest : int array (n_models,)
        Index of the nearest sort model (Hamming distance on the evaluated items; ties to the lowest index).
    source : bool array (n_sort_models, n_items), the sort models' responses.
    """

    items: np.ndarray
    observed: np.ndarray = field(repr=False)
    nearest: np.ndarray
    source: np.ndarray = field(repr=False)

    def correctness(self, rows: Any = None) -> np.ndarray:
        """Predicted correctness, bool (n_rows, n_items)."""
        sel = slice(None) if rows is None else np.asarray(rows)
        out = self.source[self.nearest[sel]]
        out = np.atleast_2d(out).copy()
        out[:, self.items] = np.atleast_2d(self.observed[sel])
        return out

    @property
    def accuracy(self) -> np.ndarray:
        copied = self.source.sum(axis=1)[self.nearest] - self.source[:, self.items].sum(axis=1)[self.nearest]
        return (copied + self.observed.sum(axis=1)) / self.source.shape[1]

    def evaluate(self, true_responses: Any) -> pd.DataFrame:
        """``mae``, ``e_agg``, ``kappa``, ``accuracy``, ``accuracy_true`` per model."""
        from .metrics import sample_metrics

        a = _binary(true_responses, "true_responses")
        a = a.to_dense() if isinstance(a, PackedBinaryMatrix) else np.asarray(a)
        if a.shape != (len(self.nearest), self.source.shape[1]):
            raise ValueError(f"true_responses: expected shape {(len(self.nearest), self.source.shape[1])}, got {a.shape}")
        return sample_metrics(a, self.correctness())


class CopyNearestExpand(BaseEstimator):
    """The CopyNearest&Expand baseline (Sect. 4.2): evaluate ``n'`` random items, copy the rest from the
    sort model that agrees most on them.

    Parameters
    ----------
    random_state : None, int or Generator
    """

    def __init__(self, random_state: Any = None) -> None:
        self.random_state = random_state

    def fit(self, responses: Any, y: Any = None) -> "CopyNearestExpand":
        """``responses``: the sort models' bool matrix (n_models, n_items) or ResponseMatrix (kept in memory)."""
        a = _binary(responses, "responses")
        if _is_dask(a):
            a = check_binary(a.compute(), "responses")
        self.source_ = a.to_dense() if isinstance(a, PackedBinaryMatrix) else np.asarray(a)
        self.n_items_ = self.source_.shape[1]
        self._rng = check_rng(self.random_state)
        self.selected_ = None
        return self

    def select(self, budget: int) -> np.ndarray:
        """``budget`` random items (increasing indices), remembered as ``selected_``."""
        if not hasattr(self, "source_"):
            raise ValueError("CopyNearestExpand: call fit(responses) first")
        self.selected_ = random_positions(self.n_items_, budget, self._rng)
        return self.selected_.copy()

    def predict(self, responses: Any, items: Any = None) -> ExpandResult:
        """``responses``: bool (budget,) or (n_models, budget) on ``items`` (default: the last selection)."""
        items = _item_indices(items, self.selected_, self.n_items_)
        r = _selected_responses(responses, len(items))
        s = self.source_[:, items].astype(np.float32)
        rf = r.astype(np.float32)
        # Hamming distance to every sort model on the evaluated items: |r| + |s| − 2 r·s, one matrix product
        # (exact integers in float32 up to 2^24 items)
        dist = rf.sum(1)[:, None] + s.sum(1)[None, :] - 2 * (rf @ s.T)
        return ExpandResult(items=items, observed=r, nearest=dist.argmin(axis=1), source=self.source_)

    def simulate(self, responses: Any, budget: int) -> ExpandResult:
        """Select, read those columns of the new models' full responses, predict."""
        a = _binary(responses, "responses")
        if a.shape[1] != self.n_items_:
            raise ValueError(f"responses: expected {self.n_items_} items (columns), got {a.shape[1]}")
        items = self.select(budget)
        return self.predict(_take_columns(a, items, "responses"), items)
