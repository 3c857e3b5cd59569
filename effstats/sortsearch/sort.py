"""Sort: item orders from the sort models' responses (Algorithms 1-3 of Prabhu, Udandarao et al., 2024).

References
----------
Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
Progress").
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._ordering import check_order, dp_rows_and_errors
from .._validation import check_positive_int
from ..bitpack import PackedBinaryMatrix
from ._inputs import _binary, _confidence_sums, _is_dask, _row_blocks, item_sums

__all__ = ["SORTS", "sort_by_sum", "sort_by_confidence_sum", "recursive_sort", "sort_objective"]

#: The item orders :class:`effstats.sortsearch.SortSearch` offers (its ``sort``): the sum of the sort models'
#: correctness, the sum of their confidences, and the recursive sort. Every estimator that runs a Sort & Search
#: (:class:`effstats.disco.SortSearchDirect` too) accepts these names, in any case.
#:
#: Examples
#: --------
#: >>> from effstats.sortsearch import SORTS
#: >>> SORTS
#: ('sum', 'confidence', 'recursive')
SORTS = ("sum", "confidence", "recursive")


def _order_from_scores(scores: np.ndarray) -> np.ndarray:
    """Descending score, ties in original index order (stable)."""
    s = np.asarray(scores)
    if np.issubdtype(s.dtype, np.integer) and s.size and 0 <= s.min() and s.max() < 2**15:
        # counts of up to 32,767 models fit int16, whose stable sort numpy does by radix sort (linear in the items)
        return np.argsort(-(s.astype(np.int16)), kind="stable")
    return np.argsort(-s, kind="stable")


def sort_by_sum(responses: Any) -> np.ndarray:
    """Algorithm 1 (Sorting by Sum): items by decreasing number of correct sort models.

    Parameters
    ----------
    responses : array-like of shape (n_models, n_items), ResponseMatrix, DataFrame, PackedBinaryMatrix or Dask array
        0/1 (or bool) correctness of the sort models.

    Returns
    -------
    order : ndarray of shape (n_items,), int
        Item indices, easiest first; ties keep the original item order (a stable sort, where the paper's
        ``np.flip(np.argsort(...))`` reverses them).

    See Also
    --------
    effstats.sortsearch.recursive_sort : re-orders the tied items (Algorithm 3).
    effstats.sortsearch.sort_by_confidence_sum : the same on true-class probabilities (Algorithm 2).
    effstats.sortsearch.SortSearch : the estimator that sorts, selects and predicts.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sortsearch import sort_by_sum
    >>> a = np.array([[1, 0, 1, 1], [1, 0, 0, 1], [0, 0, 1, 1]])
    >>> sort_by_sum(a)  # item 3 has three correct models; items 0 and 2 tie at two and keep their order
    array([3, 0, 2, 1])
    """
    return _order_from_scores(item_sums(responses))


def sort_by_confidence_sum(confidences: Any) -> np.ndarray:
    """Algorithm 2 (Sorting by Confidence Sum): items by decreasing summed true-class probability.

    Parameters
    ----------
    confidences : array-like of shape (n_models, n_items), ResponseMatrix or Dask array
        True-class probabilities in [0, 1], or a ResponseMatrix with class probabilities (its
        :meth:`effstats.responses.ResponseMatrix.true_class_probability` is used). 0/1 correctness is refused
        (use :func:`effstats.sortsearch.sort_by_sum`).

    Returns
    -------
    order : ndarray of shape (n_items,), int
        Item indices, easiest first; ties keep the original item order.

    See Also
    --------
    effstats.sortsearch.sort_by_sum : the same on 0/1 correctness (Algorithm 1).

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sortsearch import sort_by_confidence_sum
    >>> sort_by_confidence_sum(np.array([[0.9, 0.2, 0.6], [0.8, 0.1, 0.7]]))
    array([0, 2, 1])
    """
    return _order_from_scores(_confidence_sums(confidences, 0, "confidences"))


def sort_objective(responses: Any, order: np.ndarray) -> int:
    """The sort objective ``min_Y ||A P - Y||_1`` of an order: the total error of every row's best threshold.

    Each sort model's row is predicted by its own DP-search threshold (Theorem 3.1) in ``order``; the result is the
    number of cells those "ones then zeros" predictions get wrong. Computed in row blocks (a packed matrix is never
    unpacked in full).

    Parameters
    ----------
    responses : array-like of shape (n_models, n_items), ResponseMatrix, DataFrame or PackedBinaryMatrix
        0/1 (or bool) correctness of the sort models.
    order : array-like of shape (n_items,), int
        A permutation of the item indices, easiest first.

    Returns
    -------
    objective : int
        Lower is a better order; 0 when every row is "ones then zeros" in ``order``.

    See Also
    --------
    effstats.sortsearch.recursive_sort : an order that never increases this objective from step to step.
    effstats.sortsearch.dp_search : the threshold of one sorted row.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sortsearch import sort_by_sum, sort_objective
    >>> a = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 0]])
    >>> sort_objective(a, sort_by_sum(a)), sort_objective(a, np.array([3, 2, 1, 0]))
    (1, 5)
    """
    a = _binary(responses, "responses")
    o = check_order(order, a.shape[1])
    return int(sum(dp_rows_and_errors(blk[:, o])[1].sum() for _, blk in _row_blocks(a, "responses")))


def recursive_sort(responses: Any, depth: int = 2, *, return_history: bool = False, block_cells: int = 2**25) -> Any:
    """Algorithm 3 (Recursive Sorting by Sum): re-order tied items by alternating with DP-search.

    Step 0 is :func:`sort_by_sum`. Each further step (``depth - 1`` of them) finds every sort model's
    DP-search threshold and, inside each bin of items tied so far, re-sorts the items by how many of the
    models *whose threshold falls inside that bin* answer them correctly (other models predict the whole
    bin alike, so the order inside it cannot change their error); ties stay in the current order. A bin's new
    order is kept only if it does not increase the error at the current thresholds, and DP-search can only
    lower it further, so :func:`sort_objective` never increases from one step to the next. Bins are then
    refined by the new sub-sums, so the next step works on the remaining ties.

    The matrix is read in row blocks of about ``block_cells`` cells (two passes per step), so extra memory is
    ``O(block_cells + n_items)`` whatever the number of models: a bit-packed 6,000 × 1.7M matrix (1.2 GiB)
    is sorted without being unpacked in full.

    Parameters
    ----------
    responses : array-like of shape (n_models, n_items), ResponseMatrix, DataFrame or PackedBinaryMatrix
        0/1 (or bool) correctness of the sort models (not a Dask array: the matrix is read several times).
    depth : int, default=2
        Steps, at least 1: 1 is Sorting by Sum; the paper's ``two_stage_sort_by_sum`` is depth 2.
    return_history : bool, default=False
        Also return the objective after each step (non-increasing).
    block_cells : int, default=2**25
        Cells per row block (memory / speed trade-off), at least 1.

    Returns
    -------
    order : ndarray of shape (n_items,), int
        Item indices, easiest first.
    history : list of int of length ``depth``
        :func:`effstats.sortsearch.sort_objective` after each step; only with ``return_history=True``.

    See Also
    --------
    effstats.sortsearch.sort_by_sum : step 0 (Algorithm 1).
    effstats.sortsearch.sort_objective : the objective each step lowers.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.sortsearch import recursive_sort
    >>> rm = simulate_responses(30, 200, rng=0)
    >>> order, history = recursive_sort(rm, depth=3, return_history=True)
    >>> history  # sort_objective after each step
    [1540, 1517, 1512]
    """
    depth = check_positive_int(depth, "depth")
    block_cells = check_positive_int(block_cells, "block_cells")
    a = _binary(responses, "responses")
    if _is_dask(a):
        raise ValueError("responses: recursive_sort reads the matrix several times; pass a numpy array, ResponseMatrix "
                         "or PackedBinaryMatrix (not a Dask array)")
    n_rows, n = a.shape
    sums = a.col_sums() if isinstance(a, PackedBinaryMatrix) else a.sum(axis=0, dtype=np.int64)
    order = _order_from_scores(sums)
    # group id of each sorted position: runs of equal keys
    s_sorted = sums[order]
    group = np.concatenate([[0], np.cumsum(s_sorted[1:] != s_sorted[:-1])])
    pos = np.arange(n)

    def bins_of(k: np.ndarray, grp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows whose threshold cuts a tied bin, and that bin's [start, end) sorted positions."""
        kk = np.minimum(k, n - 1)
        cuts = (k > 0) & (k < n) & (grp[kk] == grp[np.maximum(k - 1, 0)])
        g = grp[kk[cuts]]
        return np.flatnonzero(cuts), starts_of[g], ends_of[g]

    def flat(rows: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row, position) of every cell in [lo, hi) of every row: the cells inside the cut bins only."""
        ln = hi - lo
        r = np.repeat(rows, ln)
        p = np.repeat(lo - np.concatenate([[0], np.cumsum(ln)[:-1]]), ln) + np.arange(ln.sum())
        return r, p

    def search_pass(with_bins: bool):
        """DP thresholds and errors of every row; with_bins: also the bin sub-sums and the ones left of k in the bin
        (read from the cut bins' cells only, not from a rows × items mask)."""
        k = np.empty(n_rows, np.int64)
        err = np.empty(n_rows, np.int64)
        sub = np.zeros(n, np.int64)
        old = np.zeros(n_rows, np.int64)
        for s, blk in _row_blocks(a, "responses", block_cells):
            b = blk[:, order]
            e = s + b.shape[0]
            k[s:e], err[s:e] = dp_rows_and_errors(b)
            if with_bins:
                rows, lo, hi = bins_of(k[s:e], group)
                r, p = flat(rows, lo, hi)
                v = b[r, p]
                sub += np.bincount(p[v], minlength=n)
                old[s:e] = np.bincount(r[v & (p < k[s + r])], minlength=e - s)
        return k, err, sub, old

    def bounds(grp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        first = np.flatnonzero(np.r_[True, grp[1:] != grp[:-1]])
        return first, np.r_[first[1:], n]

    starts_of, ends_of = bounds(group)
    k, err, sub, old = search_pass(depth > 1)
    history = [int(err.sum())]
    for step in range(depth - 1):
        before = order, group
        kk = np.minimum(k, n - 1)
        cuts = (k > 0) & (k < n) & (group[kk] == group[np.maximum(k - 1, 0)])
        # new order inside every bin: by group, then sub-sum descending, then current position
        perm = np.lexsort((pos, -sub, group))
        new = np.zeros(n_rows, np.int64)  # ones left of k inside the bin after the re-order (bins stay in place)
        target = order[perm]  # item at each sorted position after the re-order
        for s, blk in _row_blocks(a, "responses", block_cells):
            e = s + blk.shape[0]
            rows, lo, hi = bins_of(k[s:e], group)
            lo_k = lo
            hi_k = np.minimum(hi, k[s + rows])
            r, p = flat(rows, lo_k, np.maximum(hi_k, lo_k))
            new[s:e] = np.bincount(r[blk[r, target[p]]], minlength=e - s)
        # error change of each bin at the current thresholds: only cutting models contribute
        delta = np.bincount(group[kk][cuts], weights=-2.0 * (new - old)[cuts], minlength=group[-1] + 1)
        reject = delta[group] > 0
        perm = np.where(reject, pos, perm)
        sub_kept = np.where(reject, 0, sub[perm])
        order = order[perm]
        key = np.stack([group, sub_kept])
        group = np.concatenate([[0], np.cumsum(np.any(key[:, 1:] != key[:, :-1], axis=0))])
        if np.array_equal(order, before[0]) and np.array_equal(group, before[1]):
            # a fixed point: every later step is this one again (the same order, bins, thresholds and error)
            history += [history[-1]] * (depth - 1 - step)
            break
        starts_of, ends_of = bounds(group)
        k, err, sub, old = search_pass(step < depth - 2)
        history.append(int(err.sum()))
    return (order, history) if return_history else order
